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
#include <errno.h>
#include <poll.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fenced.h"
#include "imsg.h"
#include "msg.h"
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
/* Print a row of the sample; its rate per second (0: none). */
double
bench_row(const char *what, uint64_t *ns, size_t n, double wall_s)
{
	size_t	 p99;

	if (n == 0) {
		printf("%-34s %6s\n", what, "failed");
		return (0);
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
	return (wall_s > 0 ? n / wall_s : 0);
}

int
bench_ctl_connect(const char *path)
{
	int	 fd;

	if ((fd = unix_connect(path)) == -1)
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

/*
 * One request on a connection of its own, answered up to END; -1 when
 * fenced refused.  The fence in the answer, if any, goes to out.
 */
int
bench_ctl_call(const char *sock, uint32_t type, void *buf, size_t len,
    struct msg_fence *out)
{
	struct imsgbuf	*ib;
	struct imsg	 imsg;
	int		 fd, r, ok = -1;

	fd = bench_ctl_connect(sock);
	if ((ib = imsgbuf_new(fd)) == NULL)
		err(1, "imsgbuf_new");
	if (imsgbuf_compose(ib, type, 0, 0, -1, buf, len) == -1 ||
	    imsgbuf_flush(ib) == -1)
		err(1, "send");
	for (;;) {
		while ((r = imsgbuf_get(ib, &imsg)) == 0) {
			struct pollfd pfd = { fd, POLLIN, 0 };

			if (poll(&pfd, 1, 30000) != 1)
				errx(1, "no answer from fenced");
			if (imsgbuf_read(ib) <= 0 && errno != EAGAIN)
				errx(1, "fenced hung up");
		}
		if (r == -1)
			err(1, "reply");
		if (imsg.hdr.ih_type == IMSG_CTL_FENCE && out != NULL)
			ok = msg_fence_decode(imsg.data, imsg.len, out);
		if (imsg.hdr.ih_type == IMSG_CTL_ERROR)
			ok = -1;
		if (imsg.hdr.ih_type == IMSG_CTL_END) {
			imsg_free(&imsg);
			break;
		}
		if (out == NULL && imsg.hdr.ih_type == IMSG_CTL_FENCE)
			ok = 0;
		imsg_free(&imsg);
	}
	imsgbuf_free(ib);
	close(fd);
	return (ok);
}
