/*
 * http: the HTTP API's requests per second and latency, with keep-alive,
 * at 1, 16 and 128 connections at once.
 *
 *	http SOCKET RUNS PORT TOKEN
 *
 * A client of its own: non-blocking sockets in one poll() loop, one
 * connection each doing its requests one after another.  Two requests:
 * GET /api/environments with BENCH_LISTED fences (run first, on a
 * daemon with no other fence, so that is the whole list), GET of one
 * fence's state, and POST .../exec of /bin/true in fences booted for
 * it (over HTTP, stopped at the end), spread over BENCH_FENCES of them
 * so no agent holds more than its 128 commands.
 * Each request is timed from its first byte sent to its answer's last
 * byte read; an answer other than 200 counts as failed.
 *
 * The anchor of the list, state and exec rows: a bare libevent evhttp
 * handler in a child process of this program, serving the very bodies
 * fenced answered those requests with, on a port of its own; each of
 * those rows is followed by its ratio to the anchor's rate in the same
 * run.
 *
 * Then the time to a first answer (bench_first()): a boot of a fresh
 * key and an exec in it, L1.5 and L2, and runsc and vm fences where
 * those backends boot (fewer runs), against bwrap and `runsc run'
 * (bench/boot.c, bench/runsc.sh: the table pairs them by name).
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <err.h>
#include <errno.h>
#include <event.h>
#include <evhttp.h>
#include <fcntl.h>
#include <signal.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "bench.h"

#define BENCH_FENCES	4
#define BENCH_LISTED	3	/* booted while the list is measured */
#define BENCH_BUF	65536
#define BENCH_LIST	"/api/environments"
#define BENCH_STATE	"/api/environments/bench-http0"

struct hconn {
	int		 fd;
	char		 req[512];
	size_t		 reqlen;
	size_t		 sent;
	char		*in;
	size_t		 inlen;
	uint64_t	 t0;
	int		 left;		/* requests still to make */
	int		 busy;		/* a request is out */
};

static int		 port;
static const char	*token;

static int
http_connect(int nonblock)
{
	struct sockaddr_in sin;
	int		 fd, on = 1;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		err(1, "socket");
	if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) == -1)
		err(1, "connect 127.0.0.1:%d", port);
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
	if (nonblock && fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) |
	    O_NONBLOCK) == -1)
		err(1, "fcntl");
	return (fd);
}

static size_t
http_request(char *buf, size_t size, const char *method, const char *path,
    const char *body)
{
	int	 n;

	n = snprintf(buf, size, "%s %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
	    "x-voicebox-host-token: %s\r\nContent-Length: %zu\r\n\r\n%s",
	    method, path, port, token, strlen(body), body);
	if (n < 0 || (size_t)n >= size)
		errx(1, "request too long");
	return ((size_t)n);
}

/* A whole answer at the start of in: its length, else 0; *status. */
static size_t
http_answer(const char *in, size_t len, int *status)
{
	const char	*end, *p;
	size_t		 hlen;
	long		 clen = -1;

	if ((end = memmem(in, len, "\r\n\r\n", 4)) == NULL)
		return (0);
	hlen = end - in + 4;
	for (p = in; p < end; p++)
		if ((p == in || p[-1] == '\n') &&
		    strncasecmp(p, "content-length:", 15) == 0)
			clen = strtol(p + 15, NULL, 10);
	if (clen < 0)
		errx(1, "an answer without Content-Length");
	if (len < hlen + (size_t)clen)
		return (0);
	*status = atoi(in + 9);
	return (hlen + clen);
}

/*
 * One request on a blocking connection, for setting up; the status.
 * With out, the answer's body too (NUL-terminated, to free).
 */
static int
http_once(const char *method, const char *path, const char *body,
    char **out)
{
	char		 req[1024], *in, *b;
	size_t		 len, inlen = 0, n;
	ssize_t		 r;
	int		 fd, status = 0;

	if ((in = malloc(BENCH_BUF)) == NULL)
		err(1, "malloc");
	fd = http_connect(0);
	len = http_request(req, sizeof(req), method, path, body);
	if (write(fd, req, len) != (ssize_t)len)
		err(1, "write");
	while ((n = http_answer(in, inlen, &status)) == 0) {
		if (inlen == BENCH_BUF)
			errx(1, "answer too long");
		if ((r = read(fd, in + inlen, BENCH_BUF - inlen)) <= 0)
			errx(1, "no answer to %s %s", method, path);
		inlen += r;
	}
	close(fd);
	/* http_answer() found the end of the header section. */
	if (out != NULL) {
		b = (char *)memmem(in, n, "\r\n\r\n", 4) + 4;
		if ((*out = strndup(b, n - (b - in))) == NULL)
			err(1, "strndup");
	}
	free(in);
	return (status);
}

/* The bare handler's answer: what fenced answered for that path. */
struct bare_body {
	const char	*bb_path;
	const char	*bb_body;
};

static void
bare_answer(struct evhttp_request *req, void *arg)
{
	const struct bare_body *bb = arg;
	struct evbuffer	*out = evbuffer_new();
	const char	*body = "{}";

	const char	*uri = evhttp_request_get_uri(req);
	size_t		 ul = strlen(uri), pl;

	/* A path "*SUFFIX" stands for every path ending so. */
	for (; bb->bb_path != NULL; bb++) {
		pl = strlen(bb->bb_path + 1);
		if (strcmp(uri, bb->bb_path) == 0 || (bb->bb_path[0] == '*' &&
		    ul >= pl && strcmp(uri + ul - pl, bb->bb_path + 1) == 0))
			body = bb->bb_body;
	}
	evbuffer_add(out, body, strlen(body));
	evhttp_add_header(evhttp_request_get_output_headers(req),
	    "Content-Type", "application/json");
	evhttp_send_reply(req, 200, "OK", out);
	evbuffer_free(out);
}

/* Start the bare handler in a child; its port, and *child. */
static int
bare_start(const struct bare_body *bodies, pid_t *child)
{
	struct sockaddr_in sin;
	socklen_t	 slen = sizeof(sin);
	struct event_base *base;
	struct evhttp	*h;
	int		 fd, on = 1;

	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0)) == -1)
		err(1, "socket");
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
	/* As fenced's listener (parent/fenced.c): no Nagle delay. */
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
	    listen(fd, 256) == -1 ||
	    getsockname(fd, (struct sockaddr *)&sin, &slen) == -1)
		err(1, "bare handler socket");
	switch ((*child = fork())) {
	case -1:
		err(1, "fork");
	case 0:
		if ((base = event_base_new()) == NULL ||
		    (h = evhttp_new(base)) == NULL ||
		    evhttp_accept_socket(h, fd) == -1)
			errx(1, "bare handler");
		evhttp_set_gencb(h, bare_answer, (void *)bodies);
		event_base_dispatch(base);
		_exit(0);
	}
	close(fd);
	return (ntohs(sin.sin_port));
}

static void
bench_boot(int k)
{
	char	 path[128];
	int	 st;

	snprintf(path, sizeof(path), "/api/environments/bench-http%d", k);
	if ((st = http_once("POST", path, "{\"tier\":\"L1.5\"}",
	    NULL)) != 201)
		errx(1, "boot %s: %d", path, st);
}

/* What bench_one() asks: the list, one fence's state, or an exec. */
enum bench_req { REQ_LIST, REQ_STATE, REQ_EXEC };

/*
 * total requests over nconns connections, their times into ns (room
 * for total), how many into *np; the wall time in seconds is returned,
 * the requests not answered 200 into *failedp.
 */
static double
bench_run(const char *what, int nconns, int total, enum bench_req kind,
    uint64_t *ns, size_t *np, int *failedp)
{
	struct hconn	*c;
	struct pollfd	*pfd;
	uint64_t	 t0;
	char		 path[128];
	size_t		 n = 0, len;
	ssize_t		 r;
	int		 i, status, live, failed = 0;
	double		 wall;

	if ((c = calloc(nconns, sizeof(*c))) == NULL ||
	    (pfd = calloc(nconns, sizeof(*pfd))) == NULL)
		err(1, "calloc");
	for (i = 0; i < nconns; i++) {
		c[i].fd = http_connect(1);
		if ((c[i].in = malloc(BENCH_BUF)) == NULL)
			err(1, "malloc");
		c[i].left = total / nconns + (i < total % nconns);
		if (kind == REQ_EXEC) {
			snprintf(path, sizeof(path),
			    "/api/environments/bench-http%d/exec",
			    i % BENCH_FENCES);
			c[i].reqlen = http_request(c[i].req, sizeof(c[i].req),
			    "POST", path, "{\"argv\":[\"/bin/true\"]}");
		} else
			c[i].reqlen = http_request(c[i].req, sizeof(c[i].req),
			    "GET", kind == REQ_LIST ? BENCH_LIST : BENCH_STATE,
			    "");
	}
	t0 = bench_now_ns();
	for (;;) {
		live = 0;
		for (i = 0; i < nconns; i++) {
			if (!c[i].busy && c[i].left > 0) {
				c[i].busy = 1;
				c[i].sent = 0;
				c[i].inlen = 0;
				c[i].t0 = bench_now_ns();
			}
			pfd[i].fd = c[i].busy ? c[i].fd : -1;
			pfd[i].events = c[i].sent < c[i].reqlen ? POLLOUT :
			    POLLIN;
			live += c[i].busy;
		}
		if (live == 0)
			break;
		if (poll(pfd, nconns, 30000) <= 0)
			errx(1, "%s: no progress in 30 s", what);
		for (i = 0; i < nconns; i++) {
			if (pfd[i].revents == 0)
				continue;
			if (c[i].sent < c[i].reqlen) {
				r = write(c[i].fd, c[i].req + c[i].sent,
				    c[i].reqlen - c[i].sent);
				if (r == -1 && errno != EAGAIN)
					err(1, "write");
				if (r > 0)
					c[i].sent += r;
				continue;
			}
			r = read(c[i].fd, c[i].in + c[i].inlen,
			    BENCH_BUF - c[i].inlen);
			if (r == -1 && errno == EAGAIN)
				continue;
			if (r <= 0)
				errx(1, "%s: the server closed a connection",
				    what);
			c[i].inlen += r;
			if ((len = http_answer(c[i].in, c[i].inlen,
			    &status)) == 0)
				continue;
			if (len != c[i].inlen)
				errx(1, "%s: more than one answer", what);
			if (status == 200)
				ns[n++] = bench_now_ns() - c[i].t0;
			else
				failed++;
			c[i].busy = 0;
			c[i].left--;
		}
	}
	wall = (bench_now_ns() - t0) / 1e9;
	for (i = 0; i < nconns; i++) {
		close(c[i].fd);
		free(c[i].in);
	}
	free(c);
	free(pfd);
	*np = n;
	*failedp = failed;
	return (wall);
}

static double
bench_one(const char *what, const char *anchor, int nconns, int total,
    enum bench_req kind)
{
	uint64_t	*ns;
	char		 name[64], aname[64];
	size_t		 n;
	int		 failed;
	double		 rate, wall;

	if ((ns = calloc(total, sizeof(*ns))) == NULL)
		err(1, "calloc");
	wall = bench_run(what, nconns, total, kind, ns, &n, &failed);
	snprintf(name, sizeof(name), "%s, %d conns", what, nconns);
	snprintf(aname, sizeof(aname), "%s, %d conns", anchor != NULL ?
	    anchor : "", nconns);
	rate = bench_row_to("http", name, anchor != NULL ? aname : "",
	    "rate", ns, n, wall);
	if (failed)
		printf("  %d requests not answered 200\n", failed);
	free(ns);
	return (failed ? 0 : rate);
}

/*
 * The target for POST exec is the floor's rate: one connection
 * against fork+exec+wait of /bin/true, in FLOOR_ROUNDS alternate
 * rounds (what else the machine does weighs on both alike), each rate
 * its runs over the sum of its rounds' time.
 */
#define FLOOR_ROUNDS	5
#define FLOOR_ROW	"fork+exec+wait /bin/true, beside POST exec"

static void
bench_exec_floor(int runs)
{
	char		*true_argv[] = { "/bin/true", NULL };
	uint64_t	*ens, *fns, t0, w0;
	size_t		 en = 0, fn = 0, n;
	double		 ewall = 0, fwall = 0, er, fr;
	int		 r, i, per, failed, allfailed = 0;

	if (runs < FLOOR_ROUNDS)
		runs = FLOOR_ROUNDS;
	per = runs / FLOOR_ROUNDS;
	if ((ens = calloc(per * FLOOR_ROUNDS, sizeof(*ens))) == NULL ||
	    (fns = calloc(per * FLOOR_ROUNDS, sizeof(*fns))) == NULL)
		err(1, "calloc");
	for (r = 0; r < FLOOR_ROUNDS; r++) {
		w0 = bench_now_ns();
		for (i = 0; i < per; i++) {
			t0 = bench_now_ns();
			if (bench_forkexec(true_argv) == 0)
				fns[fn++] = bench_now_ns() - t0;
		}
		fwall += (bench_now_ns() - w0) / 1e9;
		ewall += bench_run("POST exec beside the floor", 1, per,
		    REQ_EXEC, ens + en, &n, &failed);
		en += n;
		allfailed += failed;
	}
	er = bench_row_to("http", "POST exec /bin/true, 1 conn, beside "
	    "the floor", FLOOR_ROW, "rate", ens, en, ewall);
	fr = bench_row_to("http", FLOOR_ROW, "", "rate", fns, fn, fwall);
	if (allfailed)
		printf("  %d requests not answered 200\n", allfailed);
	if (fr > 0)
		printf("  POST exec /bin/true, 1 conn: %.2f of the floor's "
		    "rate\n", er / fr);
	free(ens);
	free(fns);
}

/* fenced's row, the bare handler's, and the one's rate to the other's. */
static void
bench_anchored(const char *what, const char *bare, int nconns, int total,
    enum bench_req kind, int fport, int bport)
{
	double	 r, a;

	port = fport;
	r = bench_one(what, bare, nconns, total, kind);
	port = bport;
	a = bench_one(bare, NULL, nconns, total, kind);
	port = fport;
	if (a > 0)
		printf("  %s, %d conns: %.2f of the bare handler\n", what,
		    nconns, r / a);
}

/*
 * Time to a first answer: POST a boot of a fresh key, then POST an exec
 * of `true` in it, until that answer's last byte, each on a connection
 * of its own as a new client would; then DELETE it (not timed).  The
 * body names the tier or the backend.  A backend that does not boot is
 * a row skipped, with fenced's answer.
 */
static void
bench_first(const char *what, const char *body, const char *anchor,
    int runs)
{
	uint64_t	*ns, *bns, *xns, t0, t1;
	char		 path[128], why[256], part[96], *ans;
	size_t		 n = 0;
	int		 k, st;

	snprintf(why, sizeof(why), "no exec answered 200");
	if ((ns = calloc(runs, sizeof(*ns))) == NULL ||
	    (bns = calloc(runs, sizeof(*bns))) == NULL ||
	    (xns = calloc(runs, sizeof(*xns))) == NULL)
		err(1, "calloc");
	for (k = 0; k < runs; k++) {
		snprintf(path, sizeof(path), "/api/environments/bench-first%d",
		    k);
		t0 = bench_now_ns();
		if ((st = http_once("POST", path, body, &ans)) != 201) {
			snprintf(why, sizeof(why), "boot answered %d: %.200s",
			    st, ans);
			free(ans);
			if (n == 0)
				break;
			warnx("%s: %s", what, why);
			continue;
		}
		free(ans);
		t1 = bench_now_ns();
		strlcat(path, "/exec", sizeof(path));
		st = http_once("POST", path, "{\"argv\":[\"/bin/true\"]}",
		    NULL);
		if (st == 200) {
			bns[n] = t1 - t0;
			xns[n] = bench_now_ns() - t1;
			ns[n++] = bench_now_ns() - t0;
		} else
			warnx("%s: exec answered %d", what, st);
		path[strlen(path) - strlen("/exec")] = '\0';
		(void)http_once("DELETE", path, "", NULL);
	}
	if (n == 0)
		bench_skip("first answer", what, why);
	else {
		bench_row_to("first answer", what, anchor, "median", ns, n, 0);
		/* Where it went: the boot, and the first exec after it. */
		snprintf(part, sizeof(part), "%s: the boot", what);
		bench_row_to("first answer", part, what, "median", bns, n, 0);
		snprintf(part, sizeof(part), "%s: the first exec", what);
		bench_row_to("first answer", part, what, "median", xns, n, 0);
	}
	free(ns);
	free(bns);
	free(xns);
}

int
main(int argc, char *argv[])
{
	static const int conns[] = { 1, 16, 128 };
	struct bare_body bodies[4];
	const char	*errstr;
	char		 path[128], listname[64], *list, *state, *execd, *b;
	size_t		 i;
	int		 runs, k, fport, bport, total;
	pid_t		 bare;

	if (argc != 5)
		errx(1, "usage: http SOCKET RUNS PORT TOKEN");
	runs = strtonum(argv[2], 1, 100000, &errstr);
	if (errstr != NULL)
		errx(1, "runs %s", errstr);
	port = strtonum(argv[3], 1, 65535, &errstr);
	if (errstr != NULL)
		errx(1, "port %s", errstr);
	token = argv[4];

	for (k = 0; k < BENCH_LISTED; k++)
		bench_boot(k);
	/* The anchor serves the bodies fenced answers with, measured. */
	usleep(200000);
	if (http_once("GET", BENCH_LIST, "", &list) != 200 ||
	    http_once("GET", BENCH_STATE, "", &state) != 200 ||
	    http_once("POST", BENCH_STATE "/exec", "{\"argv\":[\"/bin/true\"]}",
	    &execd) != 200)
		errx(1, "cannot read the list, the state and an exec's answer");
	bodies[0] = (struct bare_body){ BENCH_LIST, list };
	bodies[1] = (struct bare_body){ BENCH_STATE, state };
	bodies[2] = (struct bare_body){ "*/exec", execd };
	bodies[3] = (struct bare_body){ NULL, NULL };
	fport = port;
	bport = bare_start(bodies, &bare);
	/* The list holds the bench's fences (and any left by others). */
	for (k = 0, b = list; (b = strstr(b, "\"key\":")) != NULL; b++)
		k++;
	snprintf(listname, sizeof(listname), "GET list (%d entries)", k);
	printf("%-34s %6s %10s %10s %10s\n", "http (keep-alive)", "n",
	    "median ms", "p99 ms", "req/s");
	for (i = 0; i < sizeof(conns) / sizeof(conns[0]); i++) {
		total = runs * 10 > conns[i] * 20 ? runs * 10 : conns[i] * 20;
		bench_anchored(listname, "bare evhttp, list body", conns[i],
		    total, REQ_LIST, fport, bport);
		bench_anchored("GET state", "bare evhttp, state body",
		    conns[i], total, REQ_STATE, fport, bport);
	}
	for (k = BENCH_LISTED; k < BENCH_FENCES; k++)
		bench_boot(k);
	for (i = 0; i < sizeof(conns) / sizeof(conns[0]); i++)
		bench_anchored("POST exec /bin/true", "bare evhttp, exec body",
		    conns[i], runs * 2 > conns[i] * 4 ? runs * 2 :
		    conns[i] * 4, REQ_EXEC, fport, bport);
	bench_exec_floor(runs * 2);
	kill(bare, SIGTERM);
	(void)waitpid(bare, NULL, 0);
	for (k = 0; k < BENCH_FENCES; k++) {
		snprintf(path, sizeof(path), "/api/environments/bench-http%d",
		    k);
		(void)http_once("DELETE", path, "", NULL);
	}

	/* Fewer runs where a boot takes 150 ms (runsc) or seconds (vm). */
	printf("%-34s %6s %10s %10s\n", "first answer (POST boot, exec)",
	    "runs", "median ms", "p99 ms");
	bench_first("HTTP boot+exec true, L1.5", "{\"tier\":\"L1.5\"}",
	    "bwrap /bin/true (L1.5-like)", runs);
	bench_first("HTTP boot+exec true, L2", "{\"tier\":\"L2\"}",
	    "bwrap --unshare-net /bin/true", runs);
	bench_first("HTTP boot+exec true, runsc", "{\"backend\":\"runsc\"}",
	    "runsc run /bin/true, same bundle", runs / 10 > 5 ? runs / 10 : 5);
	bench_first("HTTP boot+exec true, vm", "{\"backend\":\"vm\"}",
	    "bwrap /bin/true (L1.5-like)", runs / 50 > 3 ? runs / 50 : 3);
	free(list);
	free(state);
	free(execd);
	return (0);
}
