/*
 * fencectl forward KEY PORT [LOCALPORT]: a plain local port for tools
 * that want one.  It listens on 127.0.0.1 only (LOCALPORT, or one the
 * kernel picks), prints the port it has, and relays each connection it
 * accepts through a tunnel of its own to 127.0.0.1:PORT inside the
 * fence (IMSG_CTL_TUNNEL on a control connection of its own, whose
 * answer carries the descriptor).  One process, poll(2), at most
 * FWD_CONNS_MAX connections at once (more wait in the backlog), each
 * holding at most FWD_BUF bytes a direction.  ^C ends it.  Before it
 * listens it asks which ports listen in the fence (IMSG_CTL_PORTS), so
 * that a fence it may not reach, or a port nothing listens on, is said
 * at once, without a connection to the server.
 *
 * fencectl ports KEY is answered in fencectl.c (ctl_ports_print()).
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <err.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fenced.h"
#include "imsg.h"
#include "msg.h"
#include "parser.h"
#include "ctl_procs.h"

#define FWD_CONNS_MAX	64
#define FWD_BUF		(64 * 1024)
#define FWD_OPEN_MS	30000	/* the daemon's answer to an open */

struct fwd_dir {
	uint8_t		 d_buf[FWD_BUF];
	size_t		 d_len;
	int		 d_eof;		/* its source ended */
	int		 d_shut;	/* its sink was shut for writing */
};

struct fwd_conn {
	int		 f_fd[2];	/* the client's, the tunnel's */
	struct fwd_dir	 f_dir[2];	/* [0]: client to tunnel */
};

static struct fwd_conn	*fwd_conns[FWD_CONNS_MAX];

/*
 * One request on a control connection of its own, read to its END: a
 * tunnel's descriptor (IMSG_CTL_TUNNEL), or -1 with the daemon's
 * refusal printed; for IMSG_CTL_PORTS, 0 and the listing in *pl, or -1.
 */
static int
fwd_ask(const char *sock, uint32_t type, void *buf, size_t len,
    struct msg_portlist *pl)
{
	struct msg_error e;
	struct imsgbuf	*ib;
	struct imsg	 imsg;
	int		 fd, tfd = -1, done = 0, listed = 0;

	fd = ctl_connect(sock);
	if ((ib = imsgbuf_new(fd)) == NULL)
		err(1, "imsgbuf_new");
	if (imsgbuf_compose(ib, type, 0, 0, -1, buf, len) == -1 ||
	    imsgbuf_flush(ib) == -1)
		err(1, "send");
	free(buf);
	while (!done) {
		ctl_wait(ib, &imsg, FWD_OPEN_MS);
		switch (imsg.hdr.ih_type) {
		case IMSG_CTL_TUNNEL_FD:
			if (type != IMSG_CTL_TUNNEL || imsg.fd == -1 ||
			    tfd != -1)
				errx(1, "bad reply from fenced");
			tfd = imsg.fd;
			imsg.fd = -1;
			break;
		case IMSG_CTL_PORT_LIST:
			if (type != IMSG_CTL_PORTS || listed ||
			    msg_portlist_decode(imsg.data, imsg.len, pl) == -1)
				errx(1, "bad reply from fenced");
			listed = 1;
			break;
		case IMSG_CTL_ERROR:
			if (msg_error_decode(imsg.data, imsg.len, &e) == -1)
				errx(1, "bad error reply");
			ctl_error(e.e_code, e.e_message);
			break;
		case IMSG_CTL_END:
			done = 1;
			break;
		default:
			errx(1, "unexpected reply %s",
			    msg_type_name(imsg.hdr.ih_type));
		}
		imsg_free(&imsg);
	}
	imsgbuf_free(ib);
	(void)close(fd);	/* the control connection, not held */
	if (type == IMSG_CTL_PORTS)
		return (listed ? 0 : -1);
	return (tfd);
}

/* A tunnel to the fence's port, or -1 with the refusal printed. */
static int
fwd_open(const char *sock, const struct parse_result *res)
{
	struct msg_tunnel_open to;
	void		*buf;
	size_t		 len;

	memset(&to, 0, sizeof(to));
	strlcpy(to.to_key, res->key, sizeof(to.to_key));
	to.to_owner = res->owner;
	to.to_kind = MSG_TUNNEL_PORT;
	to.to_port = res->port;
	if (msg_tunnel_open_encode(&to, &buf, &len) == -1)
		err(1, "encode request");
	return (fwd_ask(sock, IMSG_CTL_TUNNEL, buf, len, NULL));
}

/* Whether the fence may be reached and the port listens in it. */
static int
fwd_check(const char *sock, const struct parse_result *res)
{
	struct msg_ports_req ps;
	struct msg_portlist pl;
	void		*buf;
	size_t		 len;
	uint32_t	 i;

	memset(&ps, 0, sizeof(ps));
	strlcpy(ps.ps_key, res->key, sizeof(ps.ps_key));
	ps.ps_owner = res->owner;
	if (msg_ports_req_encode(&ps, &buf, &len) == -1)
		err(1, "encode request");
	if (fwd_ask(sock, IMSG_CTL_PORTS, buf, len, &pl) == -1)
		return (-1);
	for (i = 0; i < pl.pl_count; i++)
		if (pl.pl_ports[i] == res->port)
			return (0);
	if (pl.pl_truncated)
		return (0);
	ctl_error("port-closed", "nothing listens on that port in the "
	    "fence (fencectl ports lists those that do)");
	return (-1);
}

static void
fwd_close(int i)
{
	struct fwd_conn	*c = fwd_conns[i];

	(void)close(c->f_fd[0]);
	(void)close(c->f_fd[1]);
	free(c);
	fwd_conns[i] = NULL;
}

/* Move what can be moved of conn i; 1 when it is over. */
static int
fwd_pump(struct fwd_conn *c, const struct pollfd *p)
{
	struct fwd_dir	*d;
	ssize_t		 n;
	int		 k, src, dst;

	for (k = 0; k < 2; k++) {
		d = &c->f_dir[k];
		src = c->f_fd[k];
		dst = c->f_fd[!k];
		if ((p[k].revents & (POLLIN | POLLHUP | POLLERR)) &&
		    !d->d_eof && d->d_len < FWD_BUF) {
			n = read(src, d->d_buf + d->d_len, FWD_BUF - d->d_len);
			if (n == -1 && errno != EAGAIN && errno != EINTR)
				return (1);
			if (n == 0)
				d->d_eof = 1;
			if (n > 0)
				d->d_len += (size_t)n;
		}
		if (d->d_len > 0 && (p[!k].revents & (POLLOUT | POLLERR))) {
			n = send(dst, d->d_buf, d->d_len, MSG_NOSIGNAL);
			if (n == -1 && errno != EAGAIN && errno != EINTR)
				return (1);
			if (n > 0) {
				memmove(d->d_buf, d->d_buf + n,
				    d->d_len - (size_t)n);
				d->d_len -= (size_t)n;
			}
		}
		if (d->d_eof && d->d_len == 0 && !d->d_shut) {
			(void)shutdown(dst, SHUT_WR);
			d->d_shut = 1;
		}
	}
	return (c->f_dir[0].d_shut && c->f_dir[1].d_shut);
}

int
ctl_forward(const char *sock, const struct parse_result *res)
{
	struct sockaddr_in sin;
	socklen_t	 sl;
	struct pollfd	 pfd[1 + 2 * FWD_CONNS_MAX];
	struct fwd_conn	*c;
	int		 lfd, cfd, tfd, one = 1, i, k, n, nconns = 0;

	/* The fence and the port, before anything listens here. */
	if (fwd_check(sock, res) == -1)
		return (1);

	if ((lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		err(1, "socket");
	(void)setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin.sin_port = htons((uint16_t)res->localport);
	if (bind(lfd, (struct sockaddr *)&sin, sizeof(sin)) == -1)
		err(1, "bind 127.0.0.1:%u", res->localport);
	if (listen(lfd, 128) == -1)
		err(1, "listen");
	sl = sizeof(sin);
	if (getsockname(lfd, (struct sockaddr *)&sin, &sl) == -1)
		err(1, "getsockname");
	printf("%u\n", (unsigned)ntohs(sin.sin_port));
	fflush(stdout);

	for (;;) {
		n = 0;
		pfd[n].fd = nconns < FWD_CONNS_MAX ? lfd : -1;
		pfd[n++].events = POLLIN;
		for (i = 0; i < FWD_CONNS_MAX; i++) {
			c = fwd_conns[i];
			for (k = 0; k < 2; k++) {
				pfd[1 + 2 * i + k].fd = c != NULL ?
				    c->f_fd[k] : -1;
				pfd[1 + 2 * i + k].events = 0;
				pfd[1 + 2 * i + k].revents = 0;
				if (c == NULL)
					continue;
				if (!c->f_dir[k].d_eof &&
				    c->f_dir[k].d_len < FWD_BUF)
					pfd[1 + 2 * i + k].events |= POLLIN;
				if (c->f_dir[!k].d_len > 0)
					pfd[1 + 2 * i + k].events |= POLLOUT;
				/* Nothing wanted: its hangup waits too. */
				if (pfd[1 + 2 * i + k].events == 0)
					pfd[1 + 2 * i + k].fd = -1;
			}
		}
		if (poll(pfd, 1 + 2 * FWD_CONNS_MAX, -1) == -1) {
			if (errno == EINTR)
				continue;
			err(1, "poll");
		}
		for (i = 0; i < FWD_CONNS_MAX; i++)
			if ((c = fwd_conns[i]) != NULL &&
			    fwd_pump(c, &pfd[1 + 2 * i])) {
				fwd_close(i);
				nconns--;
			}
		if (!(pfd[0].revents & POLLIN))
			continue;
		if ((cfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC |
		    SOCK_NONBLOCK)) == -1)
			continue;
		if ((tfd = fwd_open(sock, res)) == -1) {
			(void)close(cfd);
			continue;
		}
		for (i = 0; i < FWD_CONNS_MAX && fwd_conns[i] != NULL; i++)
			;
		if ((c = calloc(1, sizeof(*c))) == NULL)
			err(1, "calloc");
		c->f_fd[0] = cfd;
		c->f_fd[1] = tfd;
		fwd_conns[i] = c;
		nconns++;
	}
}
