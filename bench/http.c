/*
 * http: the HTTP API's requests per second and latency, with keep-alive,
 * at 1, 16 and 128 connections at once.
 *
 *	http SOCKET RUNS PORT TOKEN
 *
 * A client of its own: non-blocking sockets in one poll() loop, one
 * connection each doing its requests one after another.  Two requests:
 * GET /api/environments, and POST .../exec of /bin/true in fences
 * booted for it (over HTTP, stopped at the end), spread over
 * BENCH_FENCES of them so no agent holds more than its 128 commands.
 * Each request is timed from its first byte sent to its answer's last
 * byte read; an answer other than 200 counts as failed.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "bench.h"

#define BENCH_FENCES	4
#define BENCH_BUF	65536

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

	n = snprintf(buf, size, "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\n"
	    "x-voicebox-host-token: %s\r\nContent-Length: %zu\r\n\r\n%s",
	    method, path, token, strlen(body), body);
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

/* One request on a blocking connection, for setting up; the status. */
static int
http_once(const char *method, const char *path, const char *body)
{
	char		 req[1024], *in;
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
	free(in);
	return (status);
}

static void
bench_one(const char *what, int nconns, int total, int exec)
{
	struct hconn	*c;
	struct pollfd	*pfd;
	uint64_t	*ns, t0;
	char		 path[128], name[64];
	size_t		 n = 0, len;
	ssize_t		 r;
	int		 i, status, live, failed = 0;

	if ((c = calloc(nconns, sizeof(*c))) == NULL ||
	    (pfd = calloc(nconns, sizeof(*pfd))) == NULL ||
	    (ns = calloc(total, sizeof(*ns))) == NULL)
		err(1, "calloc");
	for (i = 0; i < nconns; i++) {
		c[i].fd = http_connect(1);
		if ((c[i].in = malloc(BENCH_BUF)) == NULL)
			err(1, "malloc");
		c[i].left = total / nconns + (i < total % nconns);
		if (exec) {
			snprintf(path, sizeof(path),
			    "/api/environments/bench-http%d/exec",
			    i % BENCH_FENCES);
			c[i].reqlen = http_request(c[i].req, sizeof(c[i].req),
			    "POST", path, "{\"argv\":[\"/bin/true\"]}");
		} else
			c[i].reqlen = http_request(c[i].req, sizeof(c[i].req),
			    "GET", "/api/environments", "");
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
	snprintf(name, sizeof(name), "%s, %d conns", what, nconns);
	bench_row(name, ns, n, (bench_now_ns() - t0) / 1e9);
	if (failed)
		printf("  %d requests not answered 200\n", failed);
	for (i = 0; i < nconns; i++) {
		close(c[i].fd);
		free(c[i].in);
	}
	free(c);
	free(pfd);
	free(ns);
}

int
main(int argc, char *argv[])
{
	static const int conns[] = { 1, 16, 128 };
	const char	*errstr;
	char		 path[128];
	size_t		 i;
	int		 runs, k, st;

	if (argc != 5)
		errx(1, "usage: http SOCKET RUNS PORT TOKEN");
	runs = strtonum(argv[2], 1, 100000, &errstr);
	if (errstr != NULL)
		errx(1, "runs %s", errstr);
	port = strtonum(argv[3], 1, 65535, &errstr);
	if (errstr != NULL)
		errx(1, "port %s", errstr);
	token = argv[4];

	for (k = 0; k < BENCH_FENCES; k++) {
		snprintf(path, sizeof(path), "/api/environments/bench-http%d",
		    k);
		if ((st = http_once("POST", path, "{\"tier\":\"L1.5\"}")) !=
		    201)
			errx(1, "boot %s: %d", path, st);
	}
	printf("%-34s %6s %10s %10s %10s\n", "http (keep-alive)", "n",
	    "median ms", "p99 ms", "req/s");
	for (i = 0; i < sizeof(conns) / sizeof(conns[0]); i++)
		bench_one("GET /api/environments", conns[i],
		    runs * 10 > conns[i] * 20 ? runs * 10 : conns[i] * 20, 0);
	for (i = 0; i < sizeof(conns) / sizeof(conns[0]); i++)
		bench_one("POST exec /bin/true", conns[i],
		    runs * 2 > conns[i] * 4 ? runs * 2 : conns[i] * 4, 1);
	for (k = 0; k < BENCH_FENCES; k++) {
		snprintf(path, sizeof(path), "/api/environments/bench-http%d",
		    k);
		(void)http_once("DELETE", path, "");
	}
	return (0);
}
