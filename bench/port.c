/*
 * port: a server inside a fence reached through fenced's port relay
 * (docs/interactive.md), against the same server on a plain loopback
 * socket: requests per second and latency, with keep-alive, at 1 and
 * 16 connections.
 *
 *	port SOCKET RUNS		(BENCH_PORT, BENCH_TOKEN: fenced's
 *					 HTTP port and a host token)
 *	port serve PORT			(the server: what runs in the fence)
 *
 * The server is this program: a libevent evhttp handler answering every
 * GET with the same 64 bytes, one process, so what it costs is the
 * same on both sides.  It is put into the home of an L2 fence (its own
 * network namespace: nothing outside reaches 127.0.0.1 there but the
 * relay) with the files API, started there as a background process on
 * BENCH_PORT_INSIDE, and reached by the path form
 * /api/environments/bench-port/ports/PORT/ with the host token.  The
 * anchor is a copy of it started by this program on a free loopback
 * port of the host.  The rows are compared by rate: the target
 * is the relay at 16 connections at most 1.5 times the direct one's
 * cost, a rate ratio of at least 0.67.
 *
 * Each request is timed from its first byte sent to its answer's last
 * byte read; an answer other than 200 counts as failed and is said.
 *
 * The rates depend on how many cpus the machine has for three
 * processes (client, broker, server) against two, so each side's cpu
 * time per request is measured too, which the machine's load moves far
 * less: the broker's (the relay's whole cost, beside a server that is
 * the same program on both sides) against the direct side's client and
 * server together.  From them, the rate the relay would have on a
 * machine whose cpus are all busy with the bench (two, here): the
 * direct side's cpu per request over the relay side's.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <err.h>
#include <errno.h>
#include <event.h>
#include <evhttp.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "imsg.h"
#include "msg.h"
#include "bench.h"

#define PORT_KEY	"bench-port"
#define PORT_INSIDE	8080
#define PORT_BUF	65536
#define PORT_BODY	"0123456789abcdef0123456789abcdef" \
			"0123456789abcdef0123456789abcdef"
#define PORT_EXE	(4U << 20)	/* this program, at most */
#define PORT_ROUNDS	5	/* each side's sample, in alternate rounds */
#define PORT_DIRECT	"direct loopback, same server"
#define PORT_RELAY	"port relay (path form)"

struct pconn {
	int		 fd;
	size_t		 sent;
	char		*in;
	size_t		 inlen;
	uint64_t	 t0;
	int		 left;
	int		 busy;
};

static const char	*token;
static int		 api_port;	/* fenced's */

/* Cpu time on each side, in ns, over a row's rounds. */
struct cpu {
	uint64_t	 client;
	uint64_t	 other;		/* direct: the server; relay: broker */
};

static int
tcp_connect(int p, int nonblock)
{
	struct sockaddr_in sin;
	int		 fd, on = 1;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(p);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		err(1, "socket");
	if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) == -1)
		err(1, "connect 127.0.0.1:%d", p);
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
	if (nonblock && fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) |
	    O_NONBLOCK) == -1)
		err(1, "fcntl");
	return (fd);
}

/* A whole answer at the start of in: its length, else 0; *status. */
static size_t
answer_len(const char *in, size_t len, int *status)
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
 * One request to fenced's API on a connection of its own; the status,
 * 0 when the connection ended without an answer.  With out, the body
 * (NUL-terminated, to free).
 */
static int
api_call(const char *method, const char *path, const void *body,
    size_t blen, char **out)
{
	char		 head[1024], *in, *b;
	size_t		 n, inlen = 0;
	ssize_t		 r;
	int		 fd, hl, status = 0;

	if (out != NULL)
		*out = NULL;
	if ((in = malloc(PORT_BUF)) == NULL)
		err(1, "malloc");
	fd = tcp_connect(api_port, 0);
	hl = snprintf(head, sizeof(head), "%s %s HTTP/1.1\r\n"
	    "Host: 127.0.0.1:%d\r\nx-voicebox-host-token: %s\r\n"
	    "Connection: close\r\nContent-Length: %zu\r\n\r\n", method,
	    path, api_port, token, blen);
	if (hl < 0 || (size_t)hl >= sizeof(head))
		errx(1, "request too long");
	if (write(fd, head, hl) != hl ||
	    (blen > 0 && write(fd, body, blen) != (ssize_t)blen))
		err(1, "write");
	while ((n = answer_len(in, inlen, &status)) == 0) {
		if (inlen == PORT_BUF)
			errx(1, "answer too long");
		if ((r = read(fd, in + inlen, PORT_BUF - inlen)) <= 0) {
			status = 0;
			break;
		}
		inlen += r;
	}
	close(fd);
	if (out != NULL && n > 0) {
		b = (char *)memmem(in, n, "\r\n\r\n", 4) + 4;
		if ((*out = strndup(b, n - (b - in))) == NULL)
			err(1, "strndup");
	}
	free(in);
	return (status);
}

/* The server: 64 bytes to every request. */
static void
serve_answer(struct evhttp_request *req, void *arg)
{
	struct evbuffer	*out;

	if ((out = evbuffer_new()) == NULL)
		errx(1, "evbuffer_new");
	evbuffer_add(out, PORT_BODY, sizeof(PORT_BODY) - 1);
	evhttp_add_header(evhttp_request_get_output_headers(req),
	    "Content-Type", "text/plain");
	evhttp_send_reply(req, 200, "OK", out);
	evbuffer_free(out);
}

/* Listen on 127.0.0.1:p (0: any free port); the socket. */
static int
serve_socket(int p)
{
	struct sockaddr_in sin;
	int		 fd, on = 1;

	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0)) == -1)
		err(1, "socket");
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(p);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
	    listen(fd, 256) == -1)
		err(1, "listen on 127.0.0.1:%d", p);
	return (fd);
}

static void __attribute__((noreturn))
serve(int fd)
{
	struct event_base *base;
	struct evhttp	*h;

	if ((base = event_base_new()) == NULL ||
	    (h = evhttp_new(base)) == NULL ||
	    evhttp_accept_socket(h, fd) == -1)
		errx(1, "evhttp");
	evhttp_set_gencb(h, serve_answer, NULL);
	event_base_dispatch(base);
	exit(0);
}

/* A row's sample, gathered over rounds. */
struct sample {
	uint64_t	*ns;
	size_t		 n;
	size_t		 size;
	double		 wall;		/* seconds, the rounds' sum */
	int		 failed;
};

/*
 * One round: nconns connections to port p each sending GETs of path one
 * after another, with the token when asked, total in all, added to s.
 */
static void
load(struct sample *s, const char *name, int p, const char *path,
    int withtoken, int nconns, int total)
{
	struct pconn	*c;
	struct pollfd	*pfd;
	uint64_t	 t0;
	char		 req[512];
	size_t		 len, reqlen;
	ssize_t		 r;
	int		 i, k, status, live;

	k = snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\n"
	    "Host: 127.0.0.1:%d\r\n%s%s%s\r\n", path, p,
	    withtoken ? "x-voicebox-host-token: " : "",
	    withtoken ? token : "", withtoken ? "\r\n" : "");
	if (k < 0 || (size_t)k >= sizeof(req))
		errx(1, "request too long");
	reqlen = k;
	if (s->n + total > s->size) {
		if ((s->ns = reallocarray(s->ns, s->n + total,
		    sizeof(*s->ns))) == NULL)
			err(1, "reallocarray");
		s->size = s->n + total;
	}
	if ((c = calloc(nconns, sizeof(*c))) == NULL ||
	    (pfd = calloc(nconns, sizeof(*pfd))) == NULL)
		err(1, "calloc");
	for (i = 0; i < nconns; i++) {
		c[i].fd = tcp_connect(p, 1);
		if ((c[i].in = malloc(PORT_BUF)) == NULL)
			err(1, "malloc");
		c[i].left = total / nconns + (i < total % nconns);
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
			pfd[i].events = c[i].sent < reqlen ? POLLOUT : POLLIN;
			live += c[i].busy;
		}
		if (live == 0)
			break;
		if (poll(pfd, nconns, 30000) <= 0)
			errx(1, "%s: no progress in 30 s", name);
		for (i = 0; i < nconns; i++) {
			if (pfd[i].revents == 0)
				continue;
			if (c[i].sent < reqlen) {
				r = write(c[i].fd, req + c[i].sent,
				    reqlen - c[i].sent);
				if (r == -1 && errno != EAGAIN)
					err(1, "write");
				if (r > 0)
					c[i].sent += r;
				continue;
			}
			r = read(c[i].fd, c[i].in + c[i].inlen,
			    PORT_BUF - c[i].inlen);
			if (r == -1 && errno == EAGAIN)
				continue;
			if (r <= 0)
				errx(1, "%s: a connection was closed", name);
			c[i].inlen += r;
			if ((len = answer_len(c[i].in, c[i].inlen,
			    &status)) == 0)
				continue;
			if (len != c[i].inlen)
				errx(1, "%s: more than one answer", name);
			if (status == 200)
				s->ns[s->n++] = bench_now_ns() - c[i].t0;
			else
				s->failed++;
			c[i].busy = 0;
			c[i].left--;
		}
	}
	s->wall += (bench_now_ns() - t0) / 1e9;
	for (i = 0; i < nconns; i++) {
		close(c[i].fd);
		free(c[i].in);
	}
	free(c);
	free(pfd);
}

/* A process's time on a cpu so far, in ns (its main thread's). */
static uint64_t
cpu_of(pid_t pid)
{
	char		 path[64];
	unsigned long long ns;
	FILE		*fp;
	int		 ok;

	snprintf(path, sizeof(path), "/proc/%d/schedstat", (int)pid);
	if ((fp = fopen(path, "r")) == NULL)
		return (0);
	ok = fscanf(fp, "%llu", &ns) == 1;
	fclose(fp);
	return (ok ? ns : 0);
}

static uint64_t
cpu_self(void)
{
	struct timespec	 ts;

	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) == -1)
		err(1, "clock_gettime");
	return ((uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec);
}

/* The broker's pid, from fenced's stats; -1 when it cannot be had. */
static pid_t
broker_pid(const char *sock)
{
	struct imsgbuf	*ib;
	struct imsg	 imsg;
	struct msg_stats st;
	pid_t		 pid = -1;
	int		 fd, end = 0;

	ib = bench_ctl_send(sock, IMSG_CTL_SHOW_STATS, NULL, 0, &fd);
	while (!end) {
		bench_ctl_next(ib, fd, &imsg, 30000);
		if (imsg.hdr.ih_type == IMSG_CTL_STATS &&
		    msg_stats_decode(imsg.data, imsg.len, &st) == 0)
			pid = st.st_pid[PROC_BROKER];
		end = imsg.hdr.ih_type == IMSG_CTL_END ||
		    imsg.hdr.ih_type == IMSG_CTL_ERROR;
		imsg_free(&imsg);
	}
	bench_ctl_close(ib, fd);
	return (pid);
}

/* load(), with the cpu time of this program and of pid added to c. */
static void
load_cpu(struct cpu *c, pid_t pid, struct sample *s, const char *name,
    int p, const char *path, int withtoken, int nconns, int total)
{
	uint64_t	 c0 = cpu_self(), o0 = cpu_of(pid);

	load(s, name, p, path, withtoken, nconns, total);
	c->client += cpu_self() - c0;
	c->other += cpu_of(pid) - o0;
}

/*
 * The cpu rows of nconns: the broker's time per relayed request against
 * the direct side's client and server together, and what they make of
 * the relay's rate where the cpus are all busy.
 */
static void
cpu_rows(const struct cpu *d, const struct cpu *r, const struct sample *ds,
    const struct sample *rs, int nconns)
{
	char		 w[96], a[96];
	double		 dn, rn, dcpu, bcpu;

	if (ds->n == 0 || rs->n == 0 || d->other == 0 || r->other == 0)
		return;
	dn = ds->n + ds->failed;
	rn = rs->n + rs->failed;
	dcpu = (d->client + d->other) / dn / 1000.0;
	bcpu = r->other / rn / 1000.0;
	snprintf(a, sizeof(a), "direct: client and server cpu a request, "
	    "%d conns", nconns);
	snprintf(w, sizeof(w), "relay: the broker's cpu a request, %d conns",
	    nconns);
	bench_value("port", a, NULL, "us cpu", dcpu);
	bench_value("port", w, a, "us cpu", bcpu);
	/* The relay side's server costs what the direct one's does. */
	printf("  at %d conns, every cpu busy: the relay's rate %.2f of the "
	    "direct one's (client %.1f us, server %.1f us, broker %.1f us "
	    "a request)\n", nconns, dcpu / (r->client / rn / 1000.0 +
	    d->other / dn / 1000.0 + bcpu), d->client / dn / 1000.0,
	    d->other / dn / 1000.0, bcpu);
}

/* The row of a sample; its rate, 0 when a request failed. */
static double
row(struct sample *s, const char *name, const char *anchor, int nconns)
{
	char		 r[96], a[96];
	double		 rate;

	snprintf(r, sizeof(r), "%s, %d conns", name, nconns);
	snprintf(a, sizeof(a), "%s, %d conns", anchor != NULL ? anchor : "",
	    nconns);
	rate = bench_row_to("port", r, anchor != NULL ? a : "", "rate",
	    s->ns, s->n, s->wall);
	if (s->failed)
		printf("  %s: %d requests not answered 200\n", r, s->failed);
	return (s->failed ? 0 : rate);
}

/* This program's bytes, to put into the fence. */
static char *
self_bytes(size_t *len)
{
	struct stat	 st;
	char		*b;
	ssize_t		 r;
	size_t		 n = 0;
	int		 fd;

	if ((fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC)) == -1 ||
	    fstat(fd, &st) == -1)
		err(1, "/proc/self/exe");
	if (st.st_size <= 0 || (size_t)st.st_size > PORT_EXE)
		errx(1, "/proc/self/exe: %lld bytes", (long long)st.st_size);
	if ((b = malloc(st.st_size)) == NULL)
		err(1, "malloc");
	while (n < (size_t)st.st_size) {
		if ((r = read(fd, b + n, st.st_size - n)) <= 0)
			err(1, "read /proc/self/exe");
		n += r;
	}
	close(fd);
	*len = n;
	return (b);
}

/*
 * The fence with the server listening inside: 0, or -1 with why (the
 * relay not answering, a boot refused).
 */
static int
fence_up(char *why, size_t whysz)
{
	char		 path[256], *b, *exe, *out;
	size_t		 len;
	int		 st, i;

	(void)api_call("DELETE", "/api/environments/" PORT_KEY, NULL, 0,
	    NULL);
	b = "{\"tier\":\"L2\"}";
	if ((st = api_call("POST", "/api/environments/" PORT_KEY, b,
	    strlen(b), &out)) != 200 && st != 201) {
		snprintf(why, whysz, "boot: %d %s", st, out ? out : "");
		free(out);
		return (-1);
	}
	free(out);
	exe = self_bytes(&len);
	st = api_call("PUT", "/api/environments/" PORT_KEY
	    "/files/port-serve?mode=0755", exe, len, &out);
	free(exe);
	if (st != 200 && st != 201) {
		snprintf(why, whysz, "put: %d %s", st, out ? out : "");
		free(out);
		return (-1);
	}
	free(out);
	snprintf(path, sizeof(path), "{\"command\":\"exec ./port-serve "
	    "serve %d\"}", PORT_INSIDE);
	st = api_call("POST", "/api/environments/" PORT_KEY "/processes",
	    path, strlen(path), &out);
	free(out);
	if (st != 201) {
		snprintf(why, whysz, "start the server: %d", st);
		return (-1);
	}
	/* Up once the relay answers 200 (at most 10 s). */
	snprintf(path, sizeof(path), "/api/environments/" PORT_KEY
	    "/ports/%d/", PORT_INSIDE);
	for (i = 0; i < 100; i++) {
		st = api_call("GET", path, NULL, 0, &out);
		if (st == 200) {
			free(out);
			return (0);
		}
		if (st == 404 || st == 405) {
			snprintf(why, whysz, "the port relay: %d %s", st,
			    out ? out : "");
			free(out);
			return (-1);
		}
		free(out);
		usleep(100000);
	}
	snprintf(why, whysz, "the server in the fence never answered "
	    "through the relay (last %d)", st);
	return (-1);
}

int
main(int argc, char *argv[])
{
	static const int conns[] = { 1, 16 };
	struct sockaddr_in sin;
	socklen_t	 slen = sizeof(sin);
	const char	*errstr, *s;
	struct sample	 ds, rs;
	struct cpu	 dc, rc;
	char		 why[512], path[128], name[128], *nl;
	double		 r, a;
	size_t		 i;
	int		 runs, total, fd, dport, up, k;
	pid_t		 direct, broker;

	if (argc == 3 && strcmp(argv[1], "serve") == 0) {
		dport = strtonum(argv[2], 1, 65535, &errstr);
		if (errstr != NULL)
			errx(1, "port %s", errstr);
		serve(serve_socket(dport));
	}
	if (argc != 3)
		errx(1, "usage: port SOCKET RUNS | port serve PORT");
	runs = strtonum(argv[2], 1, 100000, &errstr);
	if (errstr != NULL)
		errx(1, "runs %s", errstr);
	if ((s = getenv("BENCH_PORT")) == NULL ||
	    (token = getenv("BENCH_TOKEN")) == NULL || *token == '\0')
		errx(1, "BENCH_PORT and BENCH_TOKEN: fenced's HTTP port and "
		    "a host token (bench/run.sh sets them)");
	api_port = strtonum(s, 1, 65535, &errstr);
	if (errstr != NULL)
		errx(1, "BENCH_PORT %s", errstr);
	signal(SIGPIPE, SIG_IGN);

	/* The anchor: the same server on a free port of the host. */
	fd = serve_socket(0);
	if (getsockname(fd, (struct sockaddr *)&sin, &slen) == -1)
		err(1, "getsockname");
	dport = ntohs(sin.sin_port);
	switch ((direct = fork())) {
	case -1:
		err(1, "fork");
	case 0:
		serve(fd);
	}
	close(fd);

	up = fence_up(why, sizeof(why)) == 0;
	broker = broker_pid(argv[1]);
	if ((nl = strchr(why, '\n')) != NULL)
		*nl = '\0';
	snprintf(path, sizeof(path), "/api/environments/" PORT_KEY
	    "/ports/%d/", PORT_INSIDE);
	printf("%-40s %6s %10s %10s %10s\n", "port relay (keep-alive)", "n",
	    "median ms", "p99 ms", "req/s");
	/*
	 * The two sides in alternate rounds, so that what else the machine
	 * does at a moment weighs on both alike.
	 */
	for (i = 0; i < sizeof(conns) / sizeof(conns[0]); i++) {
		total = runs * 10 > conns[i] * 20 ? runs * 10 : conns[i] * 20;
		memset(&ds, 0, sizeof(ds));
		memset(&rs, 0, sizeof(rs));
		memset(&dc, 0, sizeof(dc));
		memset(&rc, 0, sizeof(rc));
		for (k = 0; k < PORT_ROUNDS; k++) {
			load_cpu(&dc, direct, &ds, "direct", dport, "/", 0,
			    conns[i], total / PORT_ROUNDS);
			if (up)
				load_cpu(&rc, broker, &rs, "relay", api_port,
				    path, 1, conns[i], total / PORT_ROUNDS);
		}
		a = row(&ds, PORT_DIRECT, NULL, conns[i]);
		if (!up) {
			snprintf(name, sizeof(name), "%s, %d conns",
			    PORT_RELAY, conns[i]);
			bench_skip("port", name, why);
		} else {
			r = row(&rs, PORT_RELAY, PORT_DIRECT, conns[i]);
			if (a > 0 && r > 0)
				printf("  relay at %d conns: %.2f of the "
				    "direct rate (its cost %.2fx)\n",
				    conns[i], r / a, a / r);
			cpu_rows(&dc, &rc, &ds, &rs, conns[i]);
		}
		free(ds.ns);
		free(rs.ns);
	}
	kill(direct, SIGTERM);
	(void)waitpid(direct, NULL, 0);
	(void)api_call("DELETE", "/api/environments/" PORT_KEY, NULL, 0,
	    NULL);
	return (0);
}
