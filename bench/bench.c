/*
 * Helpers of the benchmarks: a monotonic clock, the row printed for one
 * sample (median, 99th percentile, rate) and recorded for the table of
 * bench/table.py (docs/bench.md), a control socket connection and the
 * fork+exec+wait floor.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <err.h>
#include <errno.h>
#include <poll.h>
#include <fcntl.h>
#include <limits.h>
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
 * Where bench_row() files its rows: the section of the table and the
 * row each is measured against (its anchor), set by bench_section().
 */
static char	 bench_cur_section[64] = "misc";
static char	 bench_cur_anchor[128] = "";
static FILE	*bench_rows;
static int	 bench_nsamples;

void
bench_section(const char *section, const char *anchor)
{
	strlcpy(bench_cur_section, section, sizeof(bench_cur_section));
	strlcpy(bench_cur_anchor, anchor != NULL ? anchor : "",
	    sizeof(bench_cur_anchor));
}

/*
 * $BENCH_OUT/rows.tsv, opened for appending on the first row; NULL when
 * BENCH_OUT is not set (a bench run by hand prints its table only).
 */
static FILE *
bench_rows_file(void)
{
	const char	*dir;
	char		 path[PATH_MAX];

	if (bench_rows != NULL)
		return (bench_rows);
	if ((dir = getenv("BENCH_OUT")) == NULL || *dir == '\0')
		return (NULL);
	snprintf(path, sizeof(path), "%s/samples", dir);
	if (mkdir(path, 0755) == -1 && errno != EEXIST)
		err(1, "mkdir %s", path);
	snprintf(path, sizeof(path), "%s/rows.tsv", dir);
	if ((bench_rows = fopen(path, "a")) == NULL)
		err(1, "%s", path);
	return (bench_rows);
}

/* A field of the tsv, then sep: no tab or newline can end up in one. */
static void
bench_field(FILE *fp, const char *s, int sep)
{
	for (; *s != '\0'; s++)
		fputc(*s == '\t' || *s == '\n' ? ' ' : *s, fp);
	fputc(sep, fp);
}

/*
 * One record: section, name, anchor, ratio by (median or rate), unit,
 * n, median, p99, rate ("-": none), and the file of its samples
 * (relative to BENCH_OUT; "-": none), or for a row skipped, why; and
 * for a row that has one (p95 >= 0), an eleventh field, its 95th
 * percentile.
 */
static void
bench_record(const char *section, const char *what, const char *anchor,
    const char *by, const char *unit, size_t n, double median, double p99,
    double rate, const char *samples, double p95)
{
	FILE	*fp;

	if ((fp = bench_rows_file()) == NULL)
		return;
	bench_field(fp, section, '\t');
	bench_field(fp, what, '\t');
	bench_field(fp, *anchor != '\0' ? anchor : "-", '\t');
	bench_field(fp, by, '\t');
	bench_field(fp, unit, '\t');
	fprintf(fp, "%zu\t%.6f\t%.6f\t", n, median, p99);
	if (rate > 0)
		fprintf(fp, "%.3f\t", rate);
	else
		fprintf(fp, "-\t");
	if (p95 < 0)
		bench_field(fp, samples, '\n');
	else {
		bench_field(fp, samples, '\t');
		fprintf(fp, "%.6f\n", p95);
	}
	fflush(fp);
}

/* The sorted sample in milliseconds, one a line; its name for the tsv. */
static void
bench_samples(const uint64_t *ns, size_t n, char *name, size_t size)
{
	const char	*dir;
	char		 path[PATH_MAX];
	FILE		*fp;
	size_t		 i;

	snprintf(name, size, "-");
	if (bench_rows_file() == NULL)
		return;
	dir = getenv("BENCH_OUT");
	snprintf(name, size, "samples/%ld-%d.txt", (long)getpid(),
	    bench_nsamples++);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((fp = fopen(path, "w")) == NULL)
		err(1, "%s", path);
	for (i = 0; i < n; i++)
		fprintf(fp, "%.6f\n", ns[i] / 1e6);
	if (fclose(fp) == EOF)
		err(1, "%s", path);
}

/*
 * Print a row of the sample: what, runs, median and p99 in milliseconds,
 * and the rate per second over the wall time the sample took (0: none);
 * and record it in the current section against its anchor, the ratio
 * taken of the medians.  Its rate per second.
 */
double
bench_row(const char *what, uint64_t *ns, size_t n, double wall_s)
{
	return (bench_row_to(bench_cur_section, what, bench_cur_anchor,
	    "median", ns, n, wall_s));
}

/* The index of a percentile of a sorted sample of n (n > 0). */
static size_t
bench_pct(size_t n, unsigned int pct)
{
	size_t	 i;

	i = (n * pct + 99) / 100;
	if (i > 0)
		i--;
	return (i >= n ? n - 1 : i);
}

static double
bench_row_rec(const char *section, const char *what, const char *anchor,
    const char *by, uint64_t *ns, size_t n, double wall_s, int with_p95)
{
	char	 samples[64];
	size_t	 p99, p95;
	double	 rate;

	if (n == 0) {
		printf("%-34s %6s\n", what, "failed");
		bench_record(section, what, anchor, by, "ms", 0, 0, 0, 0, "-",
		    -1);
		return (0);
	}
	qsort(ns, n, sizeof(*ns), cmp_u64);
	p99 = bench_pct(n, 99);
	p95 = bench_pct(n, 95);
	printf("%-34s %6zu %10.3f %10.3f", what, n, ns[n / 2] / 1e6,
	    ns[p99] / 1e6);
	rate = wall_s > 0 ? n / wall_s : 0;
	if (rate > 0)
		printf(" %10.1f", rate);
	else
		printf(" %10s", "-");
	if (with_p95)
		printf("  p95 %.3f", ns[p95] / 1e6);
	printf("\n");
	fflush(stdout);
	bench_samples(ns, n, samples, sizeof(samples));
	bench_record(section, what, anchor, by, "ms", n, ns[n / 2] / 1e6,
	    ns[p99] / 1e6, rate, samples, with_p95 ? ns[p95] / 1e6 : -1);
	return (rate);
}

/*
 * The same in a section and against an anchor of its own; by: "median"
 * (the ratio of the medians) or "rate" (of the rates).
 */
double
bench_row_to(const char *section, const char *what, const char *anchor,
    const char *by, uint64_t *ns, size_t n, double wall_s)
{
	return (bench_row_rec(section, what, anchor, by, ns, n, wall_s, 0));
}

/*
 * As bench_row_to(), with the 95th percentile too (the table shows a
 * p95 column where a row has one).
 */
double
bench_row_pct(const char *section, const char *what, const char *anchor,
    const char *by, uint64_t *ns, size_t n, double wall_s)
{
	return (bench_row_rec(section, what, anchor, by, ns, n, wall_s, 1));
}

/*
 * A row of one measured value that is not a latency (a size, a wall
 * time): printed, and recorded with its unit.
 */
void
bench_value(const char *section, const char *what, const char *anchor,
    const char *unit, double v)
{
	printf("%-44s %12.1f %s\n", what, v, unit);
	fflush(stdout);
	bench_record(section, what, anchor != NULL ? anchor : "", "median",
	    unit, 1, v, v, 0, "-", -1);
}

/* A row that could not be measured, and why: in the table as such. */
void
bench_skip(const char *section, const char *what, const char *why)
{
	printf("%-34s skipped: %s\n", what, why);
	fflush(stdout);
	bench_record(section, what, "", "median", "skip", 0, 0, 0, 0, why, -1);
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
 * A connection of its own with one request sent on it: its imsgbuf,
 * the descriptor in *fd.  bench_ctl_next() reads the answers.
 */
struct imsgbuf *
bench_ctl_send(const char *sock, uint32_t type, void *buf, size_t len,
    int *fd)
{
	struct imsgbuf	*ib;

	*fd = bench_ctl_connect(sock);
	if ((ib = imsgbuf_new(*fd)) == NULL)
		err(1, "imsgbuf_new");
	if (imsgbuf_compose(ib, type, 0, 0, -1, buf, len) == -1 ||
	    imsgbuf_flush(ib) == -1)
		err(1, "send");
	return (ib);
}

/* The next answer, within ms; the bench ends if fenced does not say. */
void
bench_ctl_next(struct imsgbuf *ib, int fd, struct imsg *imsg, int ms)
{
	struct pollfd	 pfd = { fd, POLLIN, 0 };
	int		 r;

	while ((r = imsgbuf_get(ib, imsg)) == 0) {
		if (poll(&pfd, 1, ms) != 1)
			errx(1, "no answer from fenced");
		if (imsgbuf_read(ib) <= 0 && errno != EAGAIN)
			errx(1, "fenced hung up");
	}
	if (r == -1)
		err(1, "reply");
}

/* The connection of bench_ctl_send(), done with. */
void
bench_ctl_close(struct imsgbuf *ib, int fd)
{
	imsgbuf_free(ib);
	close(fd);
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
	int		 fd, ok = -1;

	ib = bench_ctl_send(sock, type, buf, len, &fd);
	for (;;) {
		bench_ctl_next(ib, fd, &imsg, 30000);
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
	bench_ctl_close(ib, fd);
	return (ok);
}

/* A knob from the environment: def when unset, 1 to max, else an error. */
size_t
bench_env_num(const char *name, size_t def, size_t max)
{
	const char	*s, *errstr;
	size_t		 v;

	if ((s = getenv(name)) == NULL || *s == '\0')
		return (def);
	v = strtonum(s, 1, max, &errstr);
	if (errstr != NULL)
		errx(1, "%s %s", name, errstr);
	return (v);
}
