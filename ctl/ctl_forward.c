/*
 * fencectl forward KEY PORT [LOCALPORT]: a plain local port for tools
 * that want one.  It listens on 127.0.0.1 only (LOCALPORT, or one the
 * kernel picks), prints the port it has, and relays each connection it
 * accepts through a tunnel of its own to 127.0.0.1:PORT inside the
 * fence (IMSG_CTL_TUNNEL on a control connection of its own, whose
 * answer carries the descriptor).  One process, poll(2), at most
 * FWD_CONNS_MAX connections at once (more wait in the backlog), each
 * holding at most PUMP_BUF bytes a direction (common/pump.c).  ^C ends it.  Before it
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
#define FWD_OPEN_MS	30000	/* the daemon's answer to an open */

static struct pump	*fwd_conns[FWD_CONNS_MAX];

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

int
ctl_forward(const char *sock, const struct parse_result *res)
{
	struct sockaddr_in sin;
	socklen_t	 sl;
	struct pollfd	 pfd[1 + 2 * FWD_CONNS_MAX];
	struct pump	*c;
	int		 lfd, cfd, tfd, one = 1, i, n, nconns = 0;

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
			if ((c = fwd_conns[i]) != NULL)
				pump_events(c, &pfd[1 + 2 * i]);
			else
				pfd[1 + 2 * i].fd = pfd[2 + 2 * i].fd = -1;
		}
		if (poll(pfd, 1 + 2 * FWD_CONNS_MAX, -1) == -1) {
			if (errno == EINTR)
				continue;
			err(1, "poll");
		}
		for (i = 0; i < FWD_CONNS_MAX; i++)
			if ((c = fwd_conns[i]) != NULL &&
			    pump_move(c, &pfd[1 + 2 * i])) {
				pump_free(c);
				fwd_conns[i] = NULL;
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
		if ((c = pump_new(cfd, tfd)) == NULL)
			err(1, "calloc");
		fwd_conns[i] = c;
		nconns++;
	}
}
