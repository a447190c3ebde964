/*
 * t_http: a raw HTTP/1.1 client for the regress suite, for requests
 * curl will not make (a NUL in the path, a header flood, one byte at a
 * time) and for holding several connections at once.
 *
 *	t_http [-b bytes] [-d ms] [-c conns] [-w sec] [-H sec] port < request
 *
 * The request is stdin, sent as it is to 127.0.0.1:port, -b bytes per
 * write (default: all at once) with -d ms between writes; writing stops
 * early if the server answers.  With -c it is sent on conns connections
 * opened together (each kept open), then the answers read in order.
 * For each connection one line, then the body of its answer:
 *
 *	status 408 closed 1 ms 3012 closedms 3013
 *
 * "closed 1" when the server closed the connection after its answer
 * (waited for up to -w seconds, default 5; with -c not at all), "ms"
 * from connecting to the answer, "closedms" to the close (or -1).
 * With -H the connections are held open sec seconds after the answers
 * (or after sending, for an empty request), unread, before the lines.
 * Exit 0 when every connection got an answer, 1 otherwise.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <err.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#define T_REQUEST_MAX	(32 * 1024 * 1024)
#define T_ANSWER_MAX	(4 * 1024 * 1024)
#define T_CONNS_MAX	512

struct t_conn {
	int		 fd;
	char		*in;
	size_t		 inlen;
	int		 status;	/* 0 until an answer */
	int		 closed;
	long		 ms;
	long		 closedms;
	size_t		 body_off;
	size_t		 body_len;
};

static uint64_t
t_now_ms(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

static int
t_connect(int port)
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
	return (fd);
}

/* Is a whole answer in c->in?  Sets status and the body's place. */
static int
t_complete(struct t_conn *c)
{
	char	*end, *p, *line;
	size_t	 hlen;
	long	 clen = 0;

	if (c->inlen < 12 || (end = memmem(c->in, c->inlen, "\r\n\r\n",
	    4)) == NULL)
		return (0);
	hlen = end - c->in + 4;
	for (p = c->in; p < end; p = line + 2) {
		if ((line = memmem(p, end + 2 - p, "\r\n", 2)) == NULL)
			break;
		if (line - p > 15 && strncasecmp(p, "content-length:", 15) == 0)
			clen = strtol(p + 15, NULL, 10);
	}
	/* 1xx answers come before the real one: skip them. */
	if (c->in[9] == '1') {
		memmove(c->in, c->in + hlen, c->inlen - hlen);
		c->inlen -= hlen;
		return (t_complete(c));
	}
	if (clen < 0 || c->inlen < hlen + (size_t)clen)
		return (0);
	c->status = atoi(c->in + 9);
	c->body_off = hlen;
	c->body_len = clen;
	return (1);
}

/* Read what is there; returns -1 at EOF or error, else 0. */
static int
t_read(struct t_conn *c)
{
	ssize_t	 n;

	if (c->inlen == T_ANSWER_MAX)
		errx(1, "answer too large");
	n = read(c->fd, c->in + c->inlen, T_ANSWER_MAX - c->inlen);
	if (n > 0) {
		c->inlen += n;
		return (0);
	}
	if (n == -1 && errno == EINTR)
		return (0);
	return (-1);
}

/* Wait for the answer, then up to wait_ms for the server to close. */
static void
t_answer(struct t_conn *c, uint64_t t0, int wait_ms)
{
	struct pollfd	 pfd;
	uint64_t	 deadline;
	int		 eof = 0;

	deadline = t_now_ms() + 60000;
	while (!t_complete(c)) {
		pfd.fd = c->fd;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, (int)(deadline - t_now_ms())) <= 0)
			return;
		if (t_read(c) == -1) {
			eof = 1;
			break;
		}
	}
	if (c->status == 0 && !t_complete(c))
		return;
	c->ms = (long)(t_now_ms() - t0);
	deadline = t_now_ms() + wait_ms;
	while (!eof) {
		uint64_t now = t_now_ms();
		char	 junk[4096];
		ssize_t	 n;

		if (now >= deadline)
			break;
		pfd.fd = c->fd;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, (int)(deadline - now)) <= 0)
			break;
		if ((n = read(c->fd, junk, sizeof(junk))) <= 0)
			eof = 1;
	}
	c->closed = eof;
	c->closedms = eof ? (long)(t_now_ms() - t0) : -1;
}

int
main(int argc, char *argv[])
{
	struct t_conn	*conns;
	struct pollfd	 pfd;
	const char	*errstr;
	char		*req;
	size_t		 reqlen = 0, off, chunk = 0;
	ssize_t		 n;
	uint64_t	 t0;
	int		 ch, port, delay = 0, nconns = 1, wait_ms = 5000, i;
	int		 answered = 1, bad = 0, hold = 0;

	signal(SIGPIPE, SIG_IGN);
	while ((ch = getopt(argc, argv, "b:c:d:H:w:")) != -1) {
		switch (ch) {
		case 'H':
			hold = strtonum(optarg, 0, 600, &errstr);
			if (errstr != NULL)
				errx(1, "-H %s", errstr);
			break;
		case 'b':
			chunk = strtonum(optarg, 1, T_REQUEST_MAX, &errstr);
			if (errstr != NULL)
				errx(1, "-b %s", errstr);
			break;
		case 'c':
			nconns = strtonum(optarg, 1, T_CONNS_MAX, &errstr);
			if (errstr != NULL)
				errx(1, "-c %s", errstr);
			break;
		case 'd':
			delay = strtonum(optarg, 0, 60000, &errstr);
			if (errstr != NULL)
				errx(1, "-d %s", errstr);
			break;
		case 'w':
			wait_ms = strtonum(optarg, 0, 600, &errstr) * 1000;
			if (errstr != NULL)
				errx(1, "-w %s", errstr);
			break;
		default:
			goto usage;
		}
	}
	if (argc - optind != 1)
		goto usage;
	port = strtonum(argv[optind], 1, 65535, &errstr);
	if (errstr != NULL)
		errx(1, "port %s", errstr);

	if ((req = malloc(T_REQUEST_MAX)) == NULL)
		err(1, "malloc");
	while ((n = read(STDIN_FILENO, req + reqlen,
	    T_REQUEST_MAX - reqlen)) > 0)
		reqlen += n;
	if (n == -1)
		err(1, "read stdin");
	if (chunk == 0)
		chunk = reqlen ? reqlen : 1;

	if ((conns = calloc(nconns, sizeof(*conns))) == NULL)
		err(1, "calloc");
	t0 = t_now_ms();
	for (i = 0; i < nconns; i++) {
		if ((conns[i].in = malloc(T_ANSWER_MAX)) == NULL)
			err(1, "malloc");
		conns[i].fd = t_connect(port);
	}
	for (i = 0; i < nconns; i++) {
		for (off = 0; off < reqlen; off += n) {
			/* The server answered (and may close): stop. */
			pfd.fd = conns[i].fd;
			pfd.events = POLLIN;
			if (off > 0 && poll(&pfd, 1, 0) == 1)
				break;
			n = write(conns[i].fd, req + off, reqlen - off < chunk ?
			    reqlen - off : chunk);
			if (n == -1) {
				if (errno == EINTR) {
					n = 0;
					continue;
				}
				break;		/* closed on us */
			}
			if (delay > 0 && off + n < reqlen)
				usleep(delay * 1000);
		}
	}
	if (hold > 0 && reqlen == 0) {
		sleep(hold);
		hold = 0;
	}
	for (i = 0; i < nconns; i++)
		if (reqlen > 0 || nconns == 1)
			t_answer(&conns[i], t0, nconns > 1 ? 0 : wait_ms);
	if (hold > 0)
		sleep(hold);
	for (i = 0; i < nconns; i++) {
		if (conns[i].status == 0) {
			printf("status none closed 1 ms %ld closedms %ld\n",
			    (long)(t_now_ms() - t0), (long)(t_now_ms() - t0));
			answered = 0;
			bad = 1;
			continue;
		}
		printf("status %d closed %d ms %ld closedms %ld\n",
		    conns[i].status, conns[i].closed, conns[i].ms,
		    conns[i].closedms);
		fwrite(conns[i].in + conns[i].body_off, 1, conns[i].body_len,
		    stdout);
		if (conns[i].body_len == 0 ||
		    conns[i].in[conns[i].body_off + conns[i].body_len - 1] !=
		    '\n')
			putchar('\n');
	}
	fflush(stdout);
	return (answered && !bad ? 0 : 1);
 usage:
	fprintf(stderr, "usage: t_http [-b bytes] [-d ms] [-c conns] "
	    "[-w sec] [-H sec] port < request\n");
	return (1);
}
