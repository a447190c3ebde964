/*
 * t_steal: run inside a fence as a command, the attack of issue 28 on
 * the probe's canary secret.  For MS milliseconds it watches the
 * fence's newest pids and, the moment one of them lets it, opens its
 * /proc/PID/fd/0 (where the secret arrives) and /proc/PID/mem, and
 * attaches to it with ptrace: the first must fail for a socket, the
 * others while the process is not dumpable (which fence-probe must
 * never be) or not a descendant (gVisor's ptrace scope).  Prints one
 * line per probe (is_probe(): not its children) it got into:
 *
 *	opened PID mem|fd0|ptrace	the handle was had (a breach by
 *				itself)
 *	stole PID HEX		what it read from the probe's stdin
 *	refused PID		a fence-probe it watched from its start,
 *				tried while it ran fence-probe and never
 *				got into, until it settled or exited
 *
 * and, if it is not killed first, "tried N": how many new pids it
 * watched, whatever they ran.
 *
 *	t_steal MS
 */
#include <sys/types.h>
#include <sys/ptrace.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define WATCH_MAX	1024	/* pids retried until they go or age */
#define WATCH_AGE_MS	500	/* a vfork child execs well within this */
#define SETTLED_MS	50	/* a probe this old has made itself safe */
#define PID_LIMIT	4194304	/* Linux's most on 64 bits (PID_MAX_LIMIT) */

struct watch {
	pid_t	 w_pid;
	long	 w_since;
	int	 w_done;
	int	 w_probe;	/* tried while it ran fence-probe */
};

static struct watch	 watch[WATCH_MAX];
static int		 nwatch;
static uint8_t		*was_seen, *now_seen;	/* bitmaps of pids */
static size_t		 seen_len;
static int		 first = 1;
static unsigned long	 tried;

static void	watch_add(pid_t, long, int);

static long
now_ms(void)
{
	struct timespec	 t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec * 1000 + t.tv_nsec / 1000000);
}

/* /proc/PID/NAME (anybody's to read) into buf, terminated; -1 if gone. */
static ssize_t
proc_text(pid_t pid, const char *name, char *buf, size_t len)
{
	char		 path[64];
	ssize_t		 n;
	int		 fd;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return (-1);
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return (-1);
	buf[n] = '\0';
	return (n);
}

/* Whether pid runs fence-probe (its cmdline). */
static int
runs_probe(pid_t pid)
{
	char		 buf[256];
	const char	*a0;

	if (proc_text(pid, "cmdline", buf, sizeof(buf)) == -1)
		return (0);
	a0 = strrchr(buf, '/') != NULL ? strrchr(buf, '/') + 1 : buf;
	return (strcmp(a0, "fence-probe") == 0);
}

/* pid's parent, from its status; 0 if gone. */
static pid_t
parent_of(pid_t pid)
{
	char	 buf[1024], *p;

	if (proc_text(pid, "status", buf, sizeof(buf)) == -1 ||
	    (p = strstr(buf, "\nPPid:\t")) == NULL)
		return (0);
	return ((pid_t)strtol(p + 7, NULL, 10));
}

/*
 * Whether pid is the probe itself: it runs fence-probe and its parent
 * does not.  The probe's own children run it too, unexeced, and one
 * makes itself dumpable on purpose: the target of its ptrace check,
 * which first drops every descriptor and wipes the secret
 * (probe_priv.c, probe_ptrace_target()).  A handle on that one is the
 * probe's design, not a way in.
 */
static int
is_probe(pid_t pid)
{
	pid_t	 pp;

	if (!runs_probe(pid))
		return (0);
	pp = parent_of(pid);
	return (pp > 0 && !runs_probe(pp));
}

/* Read what the pipe holds or gets within a second; print hex digits. */
static void
drain(pid_t pid, int fd)
{
	struct pollfd	 pfd;
	char		 buf[128], out[sizeof(buf)];
	size_t		 o = 0;
	ssize_t		 n, i;
	long		 t0 = now_ms();

	pfd.fd = fd;
	pfd.events = POLLIN;
	while (o < sizeof(out) - 1 && now_ms() - t0 < 1000) {
		if (poll(&pfd, 1, 50) <= 0)
			continue;
		if ((n = read(fd, buf, sizeof(buf) - 1 - o)) <= 0)
			break;
		for (i = 0; i < n; i++)
			if ((buf[i] >= '0' && buf[i] <= '9') ||
			    (buf[i] >= 'a' && buf[i] <= 'f'))
				out[o++] = buf[i];
	}
	out[o] = '\0';
	if (o > 0)
		printf("stole %d %s\n", (int)pid, out);
}

/*
 * One try at pid: 1 when it exists (whatever we may do to it), 0 when
 * it is gone or never was.
 */
static int
try_pid(struct watch *w)
{
	char	 path[64];
	int	 fd, mfd, traced;

	snprintf(path, sizeof(path), "/proc/%d/fd/0", (int)w->w_pid);
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd == -1 && (errno == ENOENT || errno == ESRCH))
		return (0);
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)w->w_pid);
	mfd = open(path, O_RDONLY | O_CLOEXEC);
	if (!is_probe(w->w_pid)) {
		/* Not (yet) the probe: a command of ours, or pre-exec. */
		if (fd != -1)
			close(fd);
		if (mfd != -1)
			close(mfd);
		return (1);
	}
	/* Held until we exit: the probe is only watched, never stopped. */
	traced = ptrace(PTRACE_SEIZE, w->w_pid, NULL, NULL) == 0;
	if (fd == -1 && mfd == -1 && !traced) {
		w->w_probe = 1;
		return (1);
	}
	w->w_done = 1;
	if (traced)
		printf("opened %d ptrace\n", (int)w->w_pid);
	if (mfd != -1) {
		printf("opened %d mem\n", (int)w->w_pid);
		close(mfd);
	}
	if (fd != -1) {
		printf("opened %d fd0\n", (int)w->w_pid);
		drain(w->w_pid, fd);
		close(fd);
	}
	return (1);
}

/*
 * Every pid in /proc that was not there at the last look: a probe's
 * whole life may fall between two looks, so a guess at which pids come
 * next would lose it (it did, in a runsc fence), and on a host whose
 * pids have wrapped a new pid may be lower than an old one.
 */
static void
watch_new(long t)
{
	struct watch	 probe;
	struct dirent	*de;
	DIR		*d;
	uint8_t		*swap;
	long		 p;

	if ((d = opendir("/proc")) == NULL)
		return;
	memset(now_seen, 0, seen_len);
	while ((de = readdir(d)) != NULL) {
		if ((p = atol(de->d_name)) <= 0 || (size_t)p / 8 >= seen_len)
			continue;
		now_seen[p / 8] |= 1 << (p % 8);
		if (!first && (was_seen[p / 8] & (1 << (p % 8))) == 0) {
			probe.w_pid = (pid_t)p;
			probe.w_done = probe.w_probe = 0;
			if (try_pid(&probe) && !probe.w_done)
				watch_add((pid_t)p, t, probe.w_probe);
		}
	}
	closedir(d);
	first = 0;
	swap = was_seen;
	was_seen = now_seen;
	now_seen = swap;
}

static void
watch_add(pid_t pid, long t, int probe)
{
	if (nwatch == WATCH_MAX)
		return;
	watch[nwatch].w_pid = pid;
	watch[nwatch].w_since = t;
	watch[nwatch].w_done = 0;
	watch[nwatch].w_probe = probe;
	nwatch++;
	tried++;
}

int
main(int argc, char *argv[])
{
	long		 ms, t0, t;
	int		 i, alive;

	if (argc != 2) {
		fprintf(stderr, "usage: t_steal ms\n");
		return (64);
	}
	ms = atol(argv[1]);
	setvbuf(stdout, NULL, _IOLBF, 0);
	seen_len = PID_LIMIT / 8 + 1;
	if ((was_seen = calloc(1, seen_len)) == NULL ||
	    (now_seen = calloc(1, seen_len)) == NULL) {
		perror("calloc");
		return (1);
	}
	t0 = now_ms();
	printf("watching from %d\n", (int)getpid());
	while ((t = now_ms()) - t0 < ms) {
		/* New pids: the supervisor, then its child, then the exec. */
		watch_new(t);
		for (i = 0; i < nwatch; ) {
			alive = !watch[i].w_done && t - watch[i].w_since <=
			    WATCH_AGE_MS && try_pid(&watch[i]);
			/*
			 * Tried while it ran fence-probe and closed to us
			 * until it settled or exited: a probe on a quiet
			 * machine is done well within SETTLED_MS.
			 */
			if (!watch[i].w_done && watch[i].w_probe && (!alive ||
			    t - watch[i].w_since > SETTLED_MS)) {
				printf("refused %d\n", (int)watch[i].w_pid);
				watch[i].w_done = 1;
			}
			if (watch[i].w_done || !alive) {
				watch[i] = watch[--nwatch];
				continue;
			}
			i++;
		}
	}
	printf("tried %lu\n", tried);
	return (0);
}
