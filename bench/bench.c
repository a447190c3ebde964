/*
 * Helpers of the benchmarks: a monotonic clock, the row printed for one
 * sample (median, 99th percentile, rate), a control socket connection
 * and the fork+exec+wait floor.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <err.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

extern char **environ;

uint64_t
bench_now_ns(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec);
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x < y ? -1 : x > y);
}

/*
 * One row: what, runs, median and p99 in milliseconds, and the rate
 * per second over the wall time the sample took.
 */
void
bench_row(const char *what, uint64_t *ns, size_t n, double wall_s)
{
	size_t	 p99;

	if (n == 0) {
		printf("%-34s %6s\n", what, "failed");
		return;
	}
	qsort(ns, n, sizeof(*ns), cmp_u64);
	p99 = (n * 99 + 99) / 100;
	if (p99 > 0)
		p99--;
	if (p99 >= n)
		p99 = n - 1;
	printf("%-34s %6zu %10.3f %10.3f", what, n, ns[n / 2] / 1e6,
	    ns[p99] / 1e6);
	if (wall_s > 0)
		printf(" %10.1f\n", n / wall_s);
	else
		printf(" %10s\n", "-");
	fflush(stdout);
}

int
bench_ctl_connect(const char *path)
{
	struct sockaddr_un sun;
	int		 fd;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlcpy(sun.sun_path, path, sizeof(sun.sun_path)) >=
	    sizeof(sun.sun_path))
		errx(1, "%s: too long", path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		err(1, "socket");
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1)
		err(1, "connect %s", path);
	return (fd);
}

/* Run argv to completion, output to /dev/null; its exit status. */
int
bench_forkexec(char *const argv[])
{
	pid_t	 pid;
	int	 st, fd;

	/* Or the child carries our unwritten rows with it. */
	fflush(stdout);
	switch (pid = fork()) {
	case -1:
		err(1, "fork");
	case 0:
		if ((fd = open("/dev/null", O_WRONLY)) == -1 ||
		    dup2(fd, STDOUT_FILENO) == -1 ||
		    dup2(fd, STDERR_FILENO) == -1)
			_exit(127);
		execve(argv[0], argv, environ);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) == -1)
		err(1, "waitpid");
	return (WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
}
