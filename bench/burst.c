/*
 * burst: boots from many clients at once, and bursts of first answers.
 *
 *	burst SOCKET RUNS
 *
 * Two things, on the control socket, of idle L1.5 fences with new keys:
 *
 * Boots per second from one client and from BENCH_SCALE_CLIENTS (16)
 * at once: BENCH_SCALE fences (default 400) in all, half from each, in
 * alternate rounds (a quarter a round: one client, many, one, many), each
 * client sending its next boot as its last is answered; every round's
 * fences are stopped at its end, untimed.  A row's rate is its fences
 * over the sum of its rounds' wall times; the many clients' row is
 * compared with the one client's by rate.
 *
 * Bursts: BENCH_BURST (default "100 1000") boots sent at once, each
 * followed by its first exec of /bin/true as soon as its boot is
 * answered; the time from the burst's start to each first answer (the
 * exec's result), with its median, 95th and 99th percentiles, against
 * one boot and its first exec at a time (RUNS / 10 of them).  The first
 * exec waits in the broker for the fence's first verdict, so every
 * answer includes its fence's probe.  The boots are spread over at most
 * BURST_CONNS connections (a connection holds at most 16 requests, the
 * broker 512 connections), every one written before the first answer
 * is read.  The whole burst is stopped after its last answer, untimed.
 */
#include <sys/types.h>
#include <sys/resource.h>

#include <err.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fenced.h"
#include "imsg.h"
#include "msg.h"
#include "bench.h"

#define SECTION		"scale"
#define CLIENTS_MAX	256
#define BURST_CONNS	128
#define BURSTS_MAX	8
#define FENCES_MAX	4000

static const char	*sock;
static unsigned int	 keyround;	/* keys never used before */
static char		 why[MSG_ERROR_TEXT_MAX + MSG_ERROR_CODE_MAX + 4];

static void
key_of(char *key, size_t size, size_t k)
{
	snprintf(key, size, "bench-b%u-%zu", keyround, k);
}

static void
send_boot(struct imsgbuf *ib, size_t k)
{
	struct msg_boot	 b;
	void		*buf;
	size_t		 len;

	memset(&b, 0, sizeof(b));
	key_of(b.b_key, sizeof(b.b_key), k);
	b.b_tier = TIER_L15;
	if (msg_boot_encode(&b, &buf, &len) == -1)
		err(1, "encode");
	if (imsgbuf_compose(ib, IMSG_CTL_BOOT, 0, 0, -1, buf, len) == -1)
		err(1, "compose");
	free(buf);
}

static void
send_exec(struct imsgbuf *ib, const char *key)
{
	char		*argv[] = { "/bin/true", NULL };
	struct msg_exec	 x;
	void		*buf;
	size_t		 len;

	memset(&x, 0, sizeof(x));
	x.x_owner = MSG_OWNER_NONE;
	strlcpy(x.x_key, key, sizeof(x.x_key));
	x.x_argv = argv;
	x.x_argc = 1;
	if (msg_exec_encode(&x, &buf, &len) == -1)
		err(1, "encode");
	if (imsgbuf_compose(ib, IMSG_CTL_EXEC, 0, 0, -1, buf, len) == -1 ||
	    imsgbuf_flush(ib) == -1)
		err(1, "send");
	free(buf);
}

static void
refused(const struct imsg *imsg)
{
	struct msg_error e;

	if (why[0] == '\0' && msg_error_decode(imsg->data, imsg->len, &e) == 0)
		snprintf(why, sizeof(why), "%s: %s", e.e_code, e.e_message);
}

/* Stop every fence of ours (root's), untimed. */
static void
stop_all(void)
{
	struct msg_fence_req q;
	void		*buf;
	size_t		 len;

	memset(&q, 0, sizeof(q));
	q.r_owner = MSG_OWNER_NONE;
	if (msg_fence_req_encode(&q, &buf, &len) == -1)
		err(1, "encode");
	(void)bench_ctl_call(sock, IMSG_CTL_STOP, buf, len, NULL);
	free(buf);
}

/*
 * n boots over nclients connections, each its next as its last is
 * answered: the boot times to ns[], the count answered; the wall time
 * in *wall.
 */
static size_t
boots(size_t n, int nclients, uint64_t *ns, double *wall)
{
	struct imsgbuf	*ib[CLIENTS_MAX];
	struct pollfd	 pfd[CLIENTS_MAX];
	uint64_t	 t0[CLIENTS_MAX], w0;
	struct imsg	 imsg;
	size_t		 next = 0, done = 0;
	int		 i, r, busy[CLIENTS_MAX], ok[CLIENTS_MAX], nbusy;
	int		 fds[CLIENTS_MAX];

	for (i = 0; i < nclients; i++) {
		pfd[i].fd = fds[i] = bench_ctl_connect(sock);
		pfd[i].events = POLLIN;
		if ((ib[i] = imsgbuf_new(pfd[i].fd)) == NULL)
			err(1, "imsgbuf_new");
		busy[i] = 0;
	}
	w0 = bench_now_ns();
	for (i = 0; i < nclients && next < n; i++) {
		send_boot(ib[i], next++);
		if (imsgbuf_flush(ib[i]) == -1)
			err(1, "send");
		t0[i] = bench_now_ns();
		busy[i] = 1;
		ok[i] = 0;
	}
	for (;;) {
		for (i = 0, nbusy = 0; i < nclients; i++)
			nbusy += busy[i];
		if (nbusy == 0)
			break;
		if (poll(pfd, nclients, 60000) <= 0)
			errx(1, "no boot answered in 60 s");
		for (i = 0; i < nclients; i++) {
			if (pfd[i].fd == -1 ||
			    !(pfd[i].revents & (POLLIN | POLLHUP)))
				continue;
			if (imsgbuf_read(ib[i]) == 0)
				errx(1, "fenced hung up");
			while ((r = imsgbuf_get(ib[i], &imsg)) == 1) {
				if (imsg.hdr.ih_type == IMSG_CTL_FENCE)
					ok[i] = 1;
				else if (imsg.hdr.ih_type == IMSG_CTL_ERROR)
					refused(&imsg);
				else if (imsg.hdr.ih_type == IMSG_CTL_END &&
				    busy[i]) {
					busy[i] = 0;
					if (ok[i])
						ns[done++] = bench_now_ns() -
						    t0[i];
					if (next < n && why[0] == '\0') {
						send_boot(ib[i], next++);
						if (imsgbuf_flush(ib[i]) == -1)
							err(1, "send");
						t0[i] = bench_now_ns();
						busy[i] = 1;
						ok[i] = 0;
					} else
						pfd[i].fd = -1;	/* done */
				}
				imsg_free(&imsg);
			}
			if (r == -1)
				err(1, "reply");
		}
	}
	*wall = (bench_now_ns() - w0) / 1e9;
	for (i = 0; i < nclients; i++) {
		imsgbuf_free(ib[i]);
		close(fds[i]);
	}
	return (done);
}

/*
 * The boot rate of one client against many's, in alternate rounds of
 * new keys.
 */
static void
scale(size_t n, int many)
{
	const int	 clients[4] = { 1, many, 1, many };
	uint64_t	*ns[2];
	size_t		 got[2] = { 0, 0 }, per = n / 4, m;
	double		 wall[2] = { 0, 0 }, w;
	char		 one[96], what[96];
	int		 round, k;

	if (per == 0)
		per = 1;
	for (k = 0; k < 2; k++)
		if ((ns[k] = calloc(2 * per, sizeof(*ns[k]))) == NULL)
			err(1, "calloc");
	for (round = 0; round < 4; round++) {
		k = round % 2;
		keyround++;
		why[0] = '\0';
		m = boots(per, clients[round], ns[k] + got[k], &w);
		got[k] += m;
		wall[k] += w;
		stop_all();
		if (m < per)
			break;
	}
	snprintf(one, sizeof(one), "boots of new keys, 1 client");
	snprintf(what, sizeof(what), "boots of new keys, %d clients at once",
	    many);
	if (got[0] < 2 * per || got[1] < 2 * per) {
		bench_skip(SECTION, got[0] < 2 * per ? one : what,
		    why[0] != '\0' ? why : "boots failed");
		if (got[0] < 2 * per)
			bench_skip(SECTION, what, "its anchor failed");
	} else {
		bench_row_to(SECTION, one, "", "median", ns[0], got[0],
		    wall[0]);
		bench_row_to(SECTION, what, one, "rate", ns[1], got[1],
		    wall[1]);
	}
	free(ns[0]);
	free(ns[1]);
}

/* One boot and its first exec at a time: the anchor of the bursts. */
#define SINGLE_ROW	"boot+exec true, one at a time (control socket)"
static void
single(size_t runs)
{
	struct imsgbuf	*ib;
	struct imsg	 imsg;
	struct msg_result rs;
	struct pollfd	 pfd;
	uint64_t	*ns, t0;
	char		 key[FENCE_KEY_SIZE];
	size_t		 i, n = 0;
	int		 r, answered, fd;

	if ((ns = calloc(runs, sizeof(*ns))) == NULL)
		err(1, "calloc");
	keyround++;
	why[0] = '\0';
	for (i = 0; i < runs; i++) {
		fd = bench_ctl_connect(sock);
		if ((ib = imsgbuf_new(fd)) == NULL)
			err(1, "imsgbuf_new");
		pfd.fd = fd;
		pfd.events = POLLIN;
		key_of(key, sizeof(key), i);
		t0 = bench_now_ns();
		send_boot(ib, i);
		if (imsgbuf_flush(ib) == -1)
			err(1, "send");
		for (answered = 0; !answered; ) {
			if (poll(&pfd, 1, 60000) != 1)
				errx(1, "no answer in 60 s");
			if (imsgbuf_read(ib) == 0)
				errx(1, "fenced hung up");
			while ((r = imsgbuf_get(ib, &imsg)) == 1) {
				switch (imsg.hdr.ih_type) {
				case IMSG_CTL_FENCE:
					send_exec(ib, key);
					break;
				case IMSG_CTL_ERROR:
					refused(&imsg);
					answered = 1;
					break;
				case IMSG_CTL_RESULT:
					if (msg_result_decode(imsg.data,
					    imsg.len, &rs) == 0) {
						if (rs.rs_exit == 0)
							ns[n++] =
							    bench_now_ns() - t0;
						msg_result_free(&rs);
					}
					answered = 1;
					break;
				}
				imsg_free(&imsg);
			}
			if (r == -1)
				err(1, "reply");
		}
		bench_ctl_close(ib, fd);
		if (why[0] != '\0')
			break;
	}
	stop_all();
	if (n < runs)
		bench_skip(SECTION, SINGLE_ROW, why[0] != '\0' ? why :
		    "an exec failed");
	else
		bench_row_to(SECTION, SINGLE_ROW, "", "median", ns, n, 0);
	free(ns);
}

/*
 * n boots at once, each followed by its first exec: the time from the
 * start to each first answer.
 */
static void
burst(size_t n)
{
	struct imsgbuf	*ib[BURST_CONNS];
	struct pollfd	 pfd[BURST_CONNS];
	struct imsg	 imsg;
	struct msg_fence f;
	struct msg_result rs;
	uint64_t	*ns, w0;
	size_t		 k, ended = 0, got = 0, failed = 0;
	size_t		 left[BURST_CONNS];	/* fences not ended, a conn */
	int		 fds[BURST_CONNS], i, r, nconns;
	char		 what[96];
	double		 wall;

	nconns = n < BURST_CONNS ? (int)n : BURST_CONNS;
	if ((n + nconns - 1) / nconns > 15)
		errx(1, "a burst of %zu needs more than %d connections", n,
		    BURST_CONNS);
	if ((ns = calloc(n, sizeof(*ns))) == NULL)
		err(1, "calloc");
	keyround++;
	why[0] = '\0';
	for (i = 0; i < nconns; i++) {
		pfd[i].fd = fds[i] = bench_ctl_connect(sock);
		pfd[i].events = POLLIN;
		if ((ib[i] = imsgbuf_new(pfd[i].fd)) == NULL)
			err(1, "imsgbuf_new");
		left[i] = 0;
	}
	/* Every boot composed first, then all written at once. */
	for (k = 0; k < n; k++) {
		send_boot(ib[k % nconns], k);
		left[k % nconns]++;
	}
	w0 = bench_now_ns();
	for (i = 0; i < nconns; i++)
		if (imsgbuf_flush(ib[i]) == -1)
			err(1, "send");
	/*
	 * Each fence ends in one of: its boot refused, its exec refused,
	 * its exec's result.  The answers of a connection are not told
	 * apart by fence, nor need they be: the times are of first
	 * answers, whichever fence each is of.
	 */
	while (ended < n) {
		if (poll(pfd, nconns, 120000) <= 0)
			errx(1, "no answer in 120 s");
		for (i = 0; i < nconns; i++) {
			if (pfd[i].fd == -1 ||
			    !(pfd[i].revents & (POLLIN | POLLHUP)))
				continue;
			if (imsgbuf_read(ib[i]) == 0) {
				/* Idle long enough, fenced closes it. */
				if (left[i] > 0)
					errx(1, "fenced hung up");
				pfd[i].fd = -1;
				continue;
			}
			while ((r = imsgbuf_get(ib[i], &imsg)) == 1) {
				switch (imsg.hdr.ih_type) {
				case IMSG_CTL_FENCE:
					if (msg_fence_decode(imsg.data,
					    imsg.len, &f) == -1)
						errx(1, "bad fence answer");
					send_exec(ib[i], f.f_key);
					break;
				case IMSG_CTL_ERROR:
					refused(&imsg);
					failed++;
					ended++;
					left[i]--;
					break;
				case IMSG_CTL_RESULT:
					if (msg_result_decode(imsg.data,
					    imsg.len, &rs) == 0) {
						if (rs.rs_exit == 0)
							ns[got++] =
							    bench_now_ns() - w0;
						else
							failed++;
						msg_result_free(&rs);
					} else
						failed++;
					ended++;
					left[i]--;
					break;
				}
				imsg_free(&imsg);
			}
			if (r == -1)
				err(1, "reply");
		}
	}
	wall = (bench_now_ns() - w0) / 1e9;
	for (i = 0; i < nconns; i++) {
		imsgbuf_free(ib[i]);
		close(fds[i]);
	}
	stop_all();
	snprintf(what, sizeof(what), "burst of %zu boots+first exec: "
	    "start to each answer", n);
	if (failed > 0) {
		char	 msg[sizeof(why) + 64];

		snprintf(msg, sizeof(msg), "%zu of %zu failed (%s)", failed, n,
		    why[0] != '\0' ? why : "an exec did not exit 0");
		bench_skip(SECTION, what, msg);
	} else
		bench_row_pct(SECTION, what, SINGLE_ROW, "median", ns, got,
		    wall);
	snprintf(what, sizeof(what), "burst of %zu: wall time to the last "
	    "answer", n);
	bench_value(SECTION, what, NULL, "s", wall);
	free(ns);
}

int
main(int argc, char *argv[])
{
	struct rlimit	 rl;
	size_t		 sizes[BURSTS_MAX], nsizes = 0, runs, n, i;
	const char	*s, *errstr;
	char		*list, *p, *w;
	int		 many;

	if (argc != 3)
		errx(1, "usage: burst socket runs");
	sock = argv[1];
	runs = strtonum(argv[2], 1, 100000, &errstr);
	if (errstr != NULL)
		errx(1, "runs %s", errstr);
	n = bench_env_num("BENCH_SCALE", 400, FENCES_MAX);
	many = bench_env_num("BENCH_SCALE_CLIENTS", 16, CLIENTS_MAX);
	s = getenv("BENCH_BURST");
	if ((list = strdup(s != NULL && *s != '\0' ? s : "100 1000")) == NULL)
		err(1, "strdup");
	for (p = list; (w = strsep(&p, " ,")) != NULL; ) {
		if (*w == '\0')
			continue;
		if (nsizes == BURSTS_MAX)
			errx(1, "BENCH_BURST: at most %d sizes", BURSTS_MAX);
		sizes[nsizes++] = strtonum(w, 1, FENCES_MAX, &errstr);
		if (errstr != NULL)
			errx(1, "BENCH_BURST %s: %s", w, errstr);
	}
	free(list);
	/* Our connections: at most BURST_CONNS and CLIENTS_MAX. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}

	printf("\n%-34s %6s %10s %10s %10s\n", "scale (idle L1.5 fences)",
	    "runs", "median ms", "p99 ms", "per s");
	scale(n, many);
	single(runs / 10 > 0 ? runs / 10 : 1);
	for (i = 0; i < nsizes; i++)
		burst(sizes[i]);
	return (0);
}
