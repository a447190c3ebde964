/*
 * exec: the round trip of `exec /bin/true` in a fence, through fencectl
 * and in-process through the control socket (the broker's client path),
 * and execs per second with 1, 8 and 64 concurrent clients, side by side
 * with a plain fork+exec+wait of /bin/true.  Then the cost of observing
 * denials (docs/denials.md) when nothing is refused: the round trip in a
 * fence booted with `observe denials no' (the configuration BENCH_CONF
 * names, reloaded for its boot) against the same in one that observes,
 * in alternate rounds.
 *
 *	exec SOCKET RUNS
 *
 * Every row, the floor included, runs in ROUNDS alternate rounds, a
 * fifth of its sample each, so that what else the machine does at a
 * moment weighs on the rows and on their anchor alike; a row's rate is
 * its runs over the sum of its rounds' time.
 */
#include <sys/types.h>

#include <err.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fenced.h"
#include "imsg.h"
#include "msg.h"
#include "bench.h"

#define BENCH_KEY	"bench-exec"
#define BENCH_KEY_QUIET	"bench-exec-quiet"	/* observe denials no */
#define MAX_CLIENTS	64
#define FLOOR		"fork+exec+wait /bin/true"	/* the anchor */
#define ROUNDS		5

/* One row's sample, gathered over the rounds. */
struct acc {
	uint64_t	*a_ns;
	size_t		 a_n;
	size_t		 a_cap;
	double		 a_wall;	/* seconds, summed over the rounds */
};

struct client {
	int		 c_fd;
	struct imsgbuf	*c_ib;
	uint64_t	 c_t0;
	int		 c_busy;
};

static void	*exec_buf;
static size_t	 exec_len;
static void	*exec_quiet_buf;	/* the same in the quiet fence */
static size_t	 exec_quiet_len;


static void
client_send(struct client *c, int quiet)
{
	if (imsgbuf_compose(c->c_ib, IMSG_CTL_EXEC, 0, 0, -1,
	    quiet ? exec_quiet_buf : exec_buf,
	    quiet ? exec_quiet_len : exec_len) == -1 ||
	    imsgbuf_flush(c->c_ib) == -1)
		err(1, "send");
	c->c_t0 = bench_now_ns();
	c->c_busy = 1;
}

/*
 * nclients connections, each sending its next exec as soon as the last
 * one ended, until runs execs are done in all.
 */
static void
bench_concurrent(const char *sock, int nclients, size_t runs, struct acc *a,
    int quiet)
{
	struct client	 cl[MAX_CLIENTS];
	struct pollfd	 pfd[MAX_CLIENTS];
	struct imsg	 imsg;
	uint64_t	*ns, w0;
	size_t		 sent = 0, n = 0;
	int		 i, r;

	if (a->a_n + runs > a->a_cap)
		errx(1, "bench_concurrent: %zu runs over %zu", a->a_n + runs,
		    a->a_cap);
	ns = a->a_ns + a->a_n;
	for (i = 0; i < nclients; i++) {
		cl[i].c_fd = bench_ctl_connect(sock);
		if ((cl[i].c_ib = imsgbuf_new(cl[i].c_fd)) == NULL)
			err(1, "imsgbuf_new");
		cl[i].c_busy = 0;
	}
	w0 = bench_now_ns();
	for (i = 0; i < nclients && sent < runs; i++, sent++)
		client_send(&cl[i], quiet);
	while (n < runs) {
		for (i = 0; i < nclients; i++) {
			pfd[i].fd = cl[i].c_fd;
			pfd[i].events = cl[i].c_busy ? POLLIN : 0;
		}
		if (poll(pfd, nclients, 30000) <= 0)
			errx(1, "no answers");
		for (i = 0; i < nclients; i++) {
			if (!(pfd[i].revents & (POLLIN | POLLHUP)))
				continue;
			if (imsgbuf_read(cl[i].c_ib) == 0)
				errx(1, "fenced hung up");
			while ((r = imsgbuf_get(cl[i].c_ib, &imsg)) == 1) {
				if (imsg.hdr.ih_type == IMSG_CTL_ERROR)
					errx(1, "exec refused");
				if (imsg.hdr.ih_type == IMSG_CTL_END) {
					ns[n++] = bench_now_ns() - cl[i].c_t0;
					cl[i].c_busy = 0;
					if (sent < runs) {
						client_send(&cl[i], quiet);
						sent++;
					}
				}
				imsg_free(&imsg);
			}
			if (r == -1)
				err(1, "reply");
		}
	}
	a->a_wall += (bench_now_ns() - w0) / 1e9;
	a->a_n += n;
	for (i = 0; i < nclients; i++) {
		imsgbuf_free(cl[i].c_ib);
		close(cl[i].c_fd);
	}
}

static void
bench_argv(char *const argv[], size_t runs, struct acc *a)
{
	uint64_t	 t0, w0;
	size_t		 i;

	if (a->a_n + runs > a->a_cap)
		errx(1, "bench_argv: %zu runs over %zu", a->a_n + runs,
		    a->a_cap);
	w0 = bench_now_ns();
	for (i = 0; i < runs; i++) {
		t0 = bench_now_ns();
		if (bench_forkexec(argv) == 0)
			a->a_ns[a->a_n++] = bench_now_ns() - t0;
	}
	a->a_wall += (bench_now_ns() - w0) / 1e9;
}

static void
acc_init(struct acc *a, size_t cap)
{
	memset(a, 0, sizeof(*a));
	if ((a->a_ns = calloc(cap, sizeof(*a->a_ns))) == NULL)
		err(1, "calloc");
	a->a_cap = cap;
}

/* The runs of round r of ROUNDS: a share of total, the last the rest. */
static size_t
round_runs(size_t total, int r)
{
	return (total / ROUNDS + (r == ROUNDS - 1 ? total % ROUNDS : 0));
}

/*
 * `observe denials no' added to the configuration conf (quiet), or
 * taken away again (its first size was *size), and the daemon reloaded.
 */
static void
bench_conf_quiet(const char *sock, const char *conf, int quiet, off_t *size)
{
	struct imsgbuf	*ib;
	struct imsg	 imsg;
	FILE		*f;
	int		 fd, failed = 0;

	if (quiet) {
		if ((f = fopen(conf, "a")) == NULL)
			err(1, "%s", conf);
		*size = ftello(f);
		fprintf(f, "observe denials no\n");
		if (fclose(f) == EOF)
			err(1, "%s", conf);
	} else if (truncate(conf, *size) == -1)
		err(1, "truncate %s", conf);
	ib = bench_ctl_send(sock, IMSG_CTL_RELOAD, NULL, 0, &fd);
	for (;;) {
		bench_ctl_next(ib, fd, &imsg, 30000);
		failed |= imsg.hdr.ih_type == IMSG_CTL_ERROR;
		if (imsg.hdr.ih_type == IMSG_CTL_END) {
			imsg_free(&imsg);
			break;
		}
		imsg_free(&imsg);
	}
	bench_ctl_close(ib, fd);
	if (failed)
		errx(1, "reload with%s `observe denials no' refused",
		    quiet ? "" : "out");
}

/* Boot key at L1.5 with cpus millicpus and encode an exec of argv in it. */
static void
bench_boot(const char *sock, const char *key, uint32_t cpus,
    char *argv[], void **xbuf, size_t *xlen)
{
	struct msg_boot	 b;
	struct msg_exec	 x;
	void		*buf;
	size_t		 len;

	memset(&b, 0, sizeof(b));
	strlcpy(b.b_key, key, sizeof(b.b_key));
	b.b_tier = TIER_L15;
	b.b_limits.fl_cpu_milli = cpus;
	if (msg_boot_encode(&b, &buf, &len) == -1 ||
	    bench_ctl_call(sock, IMSG_CTL_BOOT, buf, len, NULL) == -1)
		errx(1, "cannot boot %s", key);
	free(buf);
	memset(&x, 0, sizeof(x));
	x.x_owner = MSG_OWNER_NONE;
	strlcpy(x.x_key, key, sizeof(x.x_key));
	x.x_argv = argv;
	x.x_argc = 1;
	if (msg_exec_encode(&x, xbuf, xlen) == -1)
		err(1, "encode");
}

static void
bench_stop(const char *sock, const char *key)
{
	struct msg_fence_req q;
	void		*buf;
	size_t		 len;

	memset(&q, 0, sizeof(q));
	q.r_owner = MSG_OWNER_NONE;
	strlcpy(q.r_key, key, sizeof(q.r_key));
	if (msg_fence_req_encode(&q, &buf, &len) == 0) {
		bench_ctl_call(sock, IMSG_CTL_STOP, buf, len, NULL);
		free(buf);
	}
}

/*
 * The exec round trip, one client, in a fence that observes denials
 * and in one that does not, ROUNDS alternate rounds of each; nothing is
 * refused in either, so the difference is what observing costs an
 * exec that meets no denial (docs/denials.md, docs/bench.md).
 */
static void
bench_observe(const char *sock, size_t runs, uint32_t cpus, char *argv[])
{
	struct acc	 on, off;
	const char	*conf;
	off_t		 size = 0;
	int		 r;

	bench_section("exec", FLOOR);
	if ((conf = getenv("BENCH_CONF")) == NULL || *conf == '\0') {
		bench_skip("exec", "exec /bin/true, denials not observed",
		    "BENCH_CONF names no configuration to reload");
		return;
	}
	bench_conf_quiet(sock, conf, 1, &size);
	bench_boot(sock, BENCH_KEY_QUIET, cpus, argv, &exec_quiet_buf,
	    &exec_quiet_len);
	bench_conf_quiet(sock, conf, 0, &size);
	acc_init(&on, runs);
	acc_init(&off, runs);
	/* Which goes first alternates too: neither always follows. */
	for (r = 0; r < ROUNDS * 2; r++)
		bench_concurrent(sock, 1, round_runs(runs, r / 2),
		    (r % 2 == r / 2 % 2) ? &off : &on,
		    r % 2 == r / 2 % 2);
	bench_row("exec /bin/true, denials not observed", off.a_ns, off.a_n,
	    off.a_wall);
	bench_row_to("exec", "exec /bin/true, denials observed",
	    "exec /bin/true, denials not observed", "median", on.a_ns,
	    on.a_n, on.a_wall);
	bench_stop(sock, BENCH_KEY_QUIET);
}

int
main(int argc, char *argv[])
{
	static const int nclients[3] = { 1, 8, 64 };
	struct acc	 afloor, afc, aconc[3];
	char		*true_argv[] = { "/bin/true", NULL };
	char		 exe[PATH_MAX], ctl[PATH_MAX + 32], what[64];
	char		*fc[] = { ctl, "-s", argv[1], "exec", BENCH_KEY, "--",
			    "/bin/true", NULL };
	size_t		 runs64;
	int		 i, r;
	const char	*errstr, *cpus;
	uint32_t	 milli;
	size_t		 runs;
	ssize_t		 l;

	if (argc != 3)
		errx(1, "usage: exec socket runs");
	runs = strtonum(argv[2], 1, 1000000, &errstr);
	if (errstr != NULL)
		errx(1, "runs %s", errstr);
	if ((l = readlink("/proc/self/exe", exe, sizeof(exe) - 1)) == -1)
		err(1, "readlink");
	exe[l] = '\0';
	snprintf(ctl, sizeof(ctl), "%s/../bin/fencectl", dirname(exe));

	/*
	 * As many cpus as the floor may use: at the default of one, the
	 * cpu controller throttles the fence's agent, supervisors and
	 * commands together once 8 clients keep them busy (16 periods of
	 * 100 ms in a run here), and the p99 is a throttled period.
	 */
	milli = 1000 * (sysconf(_SC_NPROCESSORS_ONLN) > 1 ?
	    (uint32_t)sysconf(_SC_NPROCESSORS_ONLN) : 1);
	/* BENCH_EXEC_MILLICPUS: another limit, to see the throttling. */
	if ((cpus = getenv("BENCH_EXEC_MILLICPUS")) != NULL) {
		milli = strtonum(cpus, 10, 1024000, &errstr);
		if (errstr != NULL)
			errx(1, "BENCH_EXEC_MILLICPUS %s", errstr);
	}
	bench_boot(argv[1], BENCH_KEY, milli, true_argv, &exec_buf, &exec_len);

	/*
	 * ROUNDS alternate rounds of every row, the floor's first; each
	 * round of 64 clients has at least 64 runs, one per client.
	 */
	runs64 = runs < 64 * ROUNDS ? 64 * ROUNDS : runs;
	acc_init(&afloor, runs);
	acc_init(&afc, runs);
	for (i = 0; i < 3; i++)
		acc_init(&aconc[i], i == 2 ? runs64 : runs);
	for (r = 0; r < ROUNDS; r++) {
		bench_argv(true_argv, round_runs(runs, r), &afloor);
		bench_argv(fc, round_runs(runs, r), &afc);
		for (i = 0; i < 3; i++)
			bench_concurrent(argv[1], nclients[i],
			    round_runs(i == 2 ? runs64 : runs, r), &aconc[i],
			    0);
	}
	bench_section("exec", FLOOR);
	printf("\n%-34s %6s %10s %10s %10s\n", "exec (L1.5 fence)", "runs",
	    "median ms", "p99 ms", "per s");
	bench_row("fencectl exec /bin/true", afc.a_ns, afc.a_n, afc.a_wall);
	for (i = 0; i < 3; i++) {
		snprintf(what, sizeof(what), "exec /bin/true, %d client%s",
		    nclients[i], nclients[i] > 1 ? "s" : "");
		/* One client is a latency; more, a rate against the floor's. */
		bench_row_to("exec", what, FLOOR, nclients[i] > 1 ? "rate" :
		    "median", aconc[i].a_ns, aconc[i].a_n, aconc[i].a_wall);
	}
	bench_observe(argv[1], runs, milli, true_argv);
	bench_section("exec", NULL);
	bench_row(FLOOR, afloor.a_ns, afloor.a_n, afloor.a_wall);
	bench_stop(argv[1], BENCH_KEY);
	return (0);
}
