/*
 * Small things the sections share: errno and signal names, reading a
 * file of /proc, clocks, and the children some checks run in (each one
 * bounded in time and killed by the alarm handler if the probe must
 * stop early).
 */
#include <sys/types.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "probe.h"

#define PROBE_CHILDREN_MAX	32

static volatile pid_t	 probe_children[PROBE_CHILDREN_MAX];

/* "EROFS", "EACCES", ...; "EUNKNOWN" for a number glibc has no name for. */
const char *
probe_errname(int e)
{
	const char	*s;

	if ((s = strerrorname_np(e)) == NULL)
		return ("EUNKNOWN");
	return (s);
}

/* "SIGSYS", "SIGSEGV", ... */
const char *
probe_signame(int sig, char *buf, size_t len)
{
	const char	*s;

	if ((s = sigabbrev_np(sig)) == NULL)
		s = "UNKNOWN";
	snprintf(buf, len, "SIG%s", s);
	return (buf);
}

/* At most len - 1 bytes of path, NUL-terminated; -1 and errno if none. */
ssize_t
probe_read_file(const char *path, char *buf, size_t len)
{
	ssize_t	 n;
	size_t	 got = 0;
	int	 fd, e;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK))
	    == -1)
		return (-1);
	while (got < len - 1) {
		n = read(fd, buf + got, len - 1 - got);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			e = errno;
			(void)close(fd);
			errno = e;
			return (-1);
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	(void)close(fd);
	buf[got] = '\0';
	return ((ssize_t)got);
}

/*
 * The value of "Field:" in the text of a /proc status file, blanks
 * trimmed; -1 if the line is not there (gVisor lacks some).
 */
int
probe_status_field(const char *text, const char *field, char *out,
    size_t len)
{
	const char	*p = text, *v, *end;
	size_t		 flen = strlen(field), n;

	while (p != NULL && *p != '\0') {
		if (strncmp(p, field, flen) == 0 && p[flen] == ':') {
			v = p + flen + 1;
			while (*v == ' ' || *v == '\t')
				v++;
			if ((end = strchr(v, '\n')) == NULL)
				end = v + strlen(v);
			while (end > v && (end[-1] == ' ' || end[-1] == '\t'))
				end--;
			n = (size_t)(end - v);
			if (n >= len)
				n = len - 1;
			memcpy(out, v, n);
			out[n] = '\0';
			return (0);
		}
		if ((p = strchr(p, '\n')) != NULL)
			p++;
	}
	return (-1);
}

void
probe_deadline(struct timespec *ts, int ms)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (long)(ms % 1000) * 1000000;
	if (ts->tv_nsec >= 1000000000) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000;
	}
}

/* Milliseconds until the deadline; 0 once it has passed. */
int
probe_ms_left(const struct timespec *dl)
{
	struct timespec	 now;
	long long	 ms;

	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = (long long)(dl->tv_sec - now.tv_sec) * 1000 +
	    (dl->tv_nsec - now.tv_nsec) / 1000000;
	if (ms <= 0)
		return (0);
	return (ms > 60000 ? 60000 : (int)ms);
}

long long
probe_ms_since(const struct timespec *t0)
{
	struct timespec	 now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return ((long long)(now.tv_sec - t0->tv_sec) * 1000 +
	    (now.tv_nsec - t0->tv_nsec) / 1000000);
}

void
probe_child_add(pid_t pid)
{
	int	 i;

	for (i = 0; i < PROBE_CHILDREN_MAX; i++)
		if (probe_children[i] == 0) {
			probe_children[i] = pid;
			return;
		}
}

void
probe_child_del(pid_t pid)
{
	int	 i;

	for (i = 0; i < PROBE_CHILDREN_MAX; i++)
		if (probe_children[i] == pid)
			probe_children[i] = 0;
}

/* From the alarm handler too: kill(2) only. */
void
probe_children_kill(void)
{
	int	 i;

	for (i = 0; i < PROBE_CHILDREN_MAX; i++)
		if (probe_children[i] > 0)
			(void)kill(probe_children[i], SIGKILL);
}

/*
 * In a child that may die of a signal on purpose: no core file, no
 * alarm of the parent's, default signal handling (a sanitizer's handler
 * would turn a SIGSEGV or SIGSYS into an exit status).
 */
void
probe_child_setup(void)
{
	static const int sigs[] = { SIGALRM, SIGPIPE, SIGSEGV, SIGBUS, SIGSYS,
	    SIGILL, SIGFPE, SIGTRAP };
	struct rlimit	 rl = { 0, 0 };
	sigset_t	 none;
	size_t		 i;

	(void)setrlimit(RLIMIT_CORE, &rl);
	(void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		(void)signal(sigs[i], SIG_DFL);
	sigemptyset(&none);
	(void)sigprocmask(SIG_SETMASK, &none, NULL);
}

/*
 * Wait for pid until the deadline; past it, kill it.  0 and *status when
 * it ended by itself, -1 when it had to be killed (or could not be
 * waited for).  A pidfd wakes us the moment it ends; where there is
 * none (gVisor has no pidfd_open), naps that start at 50 us and double
 * up to 2 ms: most children end within a millisecond, and a fixed 2 ms
 * nap had cost the probe more than its checks.
 */
int
probe_wait_until(pid_t pid, int *status, const struct timespec *dl)
{
	struct timespec	 nap = { 0, 50 * 1000 };
	struct pollfd	 pfd;
	pid_t		 r;
	int		 fd;

	fd = (int)syscall(SYS_pidfd_open, pid, 0);
	for (;;) {
		r = waitpid(pid, status, WNOHANG);
		if (r == pid) {
			probe_child_del(pid);
			if (fd != -1)
				close(fd);
			return (0);
		}
		if (r == -1 && errno != EINTR) {
			probe_child_del(pid);
			if (fd != -1)
				close(fd);
			return (-1);
		}
		if (probe_ms_left(dl) == 0)
			break;
		if (fd != -1) {
			pfd.fd = fd;
			pfd.events = POLLIN;
			(void)poll(&pfd, 1, probe_ms_left(dl));
			continue;
		}
		(void)nanosleep(&nap, NULL);
		if (nap.tv_nsec < 2 * 1000000)
			nap.tv_nsec *= 2;
	}
	if (fd != -1)
		close(fd);
	(void)kill(pid, SIGKILL);
	while (waitpid(pid, status, 0) == -1 && errno == EINTR)
		;
	probe_child_del(pid);
	return (-1);
}
