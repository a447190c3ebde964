/*
 * t_steal: run inside a fence as a command, the attack of issue 28 on
 * the probe's canary secret.  For MS milliseconds it watches the
 * fence's newest pids and, the moment one of them lets it, opens its
 * /proc/PID/fd/0 (the pipe the secret arrives on) and /proc/PID/mem:
 * both succeed only while the process is dumpable, which fence-probe
 * must never be.  Prints one line per fence-probe it got into:
 *
 *	opened PID mem|fd0	the handle was had (a breach by itself)
 *	stole PID HEX		what it read from the probe's stdin
 *	refused PID		a fence-probe it watched from its start and
 *				never got into
 *
 * and, if it is not killed first, "tried N": how many new pids it
 * watched, whatever they ran.
 *
 *	t_steal MS
 */
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define WATCH_MAX	64	/* pids retried until they go or age */
#define WATCH_AGE_MS	500	/* a vfork child execs well within this */
#define AHEAD		16	/* new pids looked for past the highest */
#define SETTLED_MS	50	/* a probe this old has made itself safe */

struct watch {
	pid_t	 w_pid;
	long	 w_since;
	int	 w_done;
};

static struct watch	 watch[WATCH_MAX];
static int		 nwatch;
static pid_t		 hi;
static unsigned long	 tried;

static long
now_ms(void)
{
	struct timespec	 t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec * 1000 + t.tv_nsec / 1000000);
}

/* Whether pid runs fence-probe (its cmdline is anybody's to read). */
static int
is_probe(pid_t pid)
{
	char		 path[64], buf[256];
	const char	*a0;
	ssize_t		 n;
	int		 fd;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return (0);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return (0);
	buf[n] = '\0';
	a0 = strrchr(buf, '/') != NULL ? strrchr(buf, '/') + 1 : buf;
	return (strcmp(a0, "fence-probe") == 0);
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
	int	 fd, mfd;

	snprintf(path, sizeof(path), "/proc/%d/fd/0", (int)w->w_pid);
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd == -1 && (errno == ENOENT || errno == ESRCH))
		return (0);
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)w->w_pid);
	mfd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd == -1 && mfd == -1)
		return (1);
	if (!is_probe(w->w_pid)) {
		/* Not (yet) the probe: a command of ours, or pre-exec. */
		if (fd != -1)
			close(fd);
		if (mfd != -1)
			close(mfd);
		return (1);
	}
	w->w_done = 1;
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

static void
watch_add(pid_t pid, long t)
{
	if (nwatch == WATCH_MAX)
		return;
	watch[nwatch].w_pid = pid;
	watch[nwatch].w_since = t;
	watch[nwatch].w_done = 0;
	nwatch++;
	tried++;
}

int
main(int argc, char *argv[])
{
	struct watch	 probe;
	long		 ms, t0, t;
	pid_t		 p;
	int		 i;

	if (argc != 2) {
		fprintf(stderr, "usage: t_steal ms\n");
		return (64);
	}
	ms = atol(argv[1]);
	setvbuf(stdout, NULL, _IOLBF, 0);
	hi = getpid();
	t0 = now_ms();
	printf("watching from %d\n", (int)hi);
	while ((t = now_ms()) - t0 < ms) {
		/* New pids: the supervisor, then its child, then the exec. */
		for (p = hi + 1; p <= hi + AHEAD; p++) {
			probe.w_pid = p;
			probe.w_done = 0;
			if (!try_pid(&probe))
				continue;
			if (!probe.w_done)
				watch_add(p, t);
			hi = p;
			break;
		}
		for (i = 0; i < nwatch; ) {
			/* Long past its exec and still closed to us. */
			if (!watch[i].w_done && t - watch[i].w_since >
			    SETTLED_MS && is_probe(watch[i].w_pid)) {
				printf("refused %d\n", (int)watch[i].w_pid);
				watch[i].w_done = 1;
			}
			if (watch[i].w_done || t - watch[i].w_since >
			    WATCH_AGE_MS || !try_pid(&watch[i])) {
				watch[i] = watch[--nwatch];
				continue;
			}
			i++;
		}
	}
	printf("tried %lu\n", tried);
	return (0);
}
