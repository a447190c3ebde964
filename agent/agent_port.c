/*
 * Ports (docs/interactive.md): a TCP connection to 127.0.0.1:PORT of
 * the fence's own network namespace, made by the agent for the broker,
 * and the listing of the ports that listen in it.
 *
 * The connect is non-blocking and bounded (AGENT_PORT_CONNECT_MS);
 * nothing listening is `port-closed', no answer in time
 * `port-timeout'.  Where the channel passes descriptors (h_fdpass,
 * native) the connected socket goes to the broker with the answer and
 * the agent keeps no copy; elsewhere it is the end of a framed tunnel
 * (agent_tunnel.c), read only while the broker has room for more and
 * written with what the broker sent.  Connects in progress count with
 * the framed tunnels against AGENT_TUNNELS_MAX.
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "fenced.h"
#include "imsg.h"
#include "log.h"
#include "msg.h"
#include "agent.h"
#include "agent_tunnel.h"

#define PORT_READ_MAX	(64 * 1024)	/* read at once from a socket */
#define PORT_PROC_LINES	65536		/* read of /proc/net/tcp{,6} */

/* A connect in progress, then the end of a framed tunnel. */
struct agent_port {
	TAILQ_ENTRY(agent_port) pe_entry;
	uint32_t	 pe_id;
	uint16_t	 pe_port;
	int		 pe_fd;
	struct event	*pe_rev;	/* connect done; then readable */
	struct event	*pe_wev;	/* writable, when a write stalled */
	struct event	*pe_timer;	/* the connect's deadline */
	struct agent_tunnel *pe_t;	/* framed: its tunnel */
	int		 pe_eof;	/* read its end of file */
};

static TAILQ_HEAD(, agent_port) agent_connecting =
    TAILQ_HEAD_INITIALIZER(agent_connecting);
static size_t	 agent_nconnecting;

static void	port_free(struct agent_port *);
static void	port_connected(evutil_socket_t, short, void *);
static void	port_timeout(evutil_socket_t, short, void *);
static void	port_established(struct agent_port *);
static void	port_failed(struct agent_port *, int);
static void	port_read(evutil_socket_t, short, void *);
static void	port_write(evutil_socket_t, short, void *);
static void	port_input(struct agent_tunnel *, void *);
static void	port_resume(struct agent_tunnel *, void *);
static void	port_eof(struct agent_tunnel *, void *);
static void	port_closed(struct agent_tunnel *, void *);

static const struct agent_tunnel_ops port_ops = {
	port_input, port_resume, port_eof, port_closed
};

static void
port_free(struct agent_port *pe)
{
	if (pe->pe_rev != NULL)
		event_free(pe->pe_rev);
	if (pe->pe_wev != NULL)
		event_free(pe->pe_wev);
	if (pe->pe_timer != NULL)
		event_free(pe->pe_timer);
	if (pe->pe_fd != -1)
		(void)close(pe->pe_fd);
	free(pe);
}

/* A connecting one is over: off the list of those in progress. */
static void
port_unlist(struct agent_port *pe)
{
	TAILQ_REMOVE(&agent_connecting, pe, pe_entry);
	agent_nconnecting--;
	event_free(pe->pe_timer);
	pe->pe_timer = NULL;
}

void
agent_port_open(uint32_t id, const struct msg_tunnel_open *to)
{
	struct agent_port *pe;
	struct sockaddr_in sin;
	struct timeval	 tv = { AGENT_PORT_CONNECT_MS / 1000,
			    (AGENT_PORT_CONNECT_MS % 1000) * 1000 };
	int		 fd;

	if (agent_nconnecting + agent_tunnel_count() >= AGENT_TUNNELS_MAX) {
		agent_error(id, "too-many-tunnels", "the fence has %d "
		    "tunnels open or opening", AGENT_TUNNELS_MAX);
		return;
	}
	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0)) == -1) {
		agent_error(id, "port-error", "socket: %s", strerror(errno));
		return;
	}
	if ((pe = calloc(1, sizeof(*pe))) == NULL)
		fatal("%s: calloc", __func__);
	pe->pe_id = id;
	pe->pe_port = (uint16_t)to->to_port;
	pe->pe_fd = fd;
	if ((pe->pe_rev = event_new(agent_env->a_base, fd, EV_WRITE,
	    port_connected, pe)) == NULL ||
	    (pe->pe_timer = evtimer_new(agent_env->a_base, port_timeout,
	    pe)) == NULL)
		fatalx("%s: event_new", __func__);
	TAILQ_INSERT_TAIL(&agent_connecting, pe, pe_entry);
	agent_nconnecting++;
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(pe->pe_port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) == 0) {
		port_unlist(pe);
		port_established(pe);
		return;
	}
	if (errno != EINPROGRESS) {
		port_unlist(pe);
		port_failed(pe, errno);
		return;
	}
	event_add(pe->pe_rev, NULL);
	evtimer_add(pe->pe_timer, &tv);
}

static void
port_timeout(evutil_socket_t fd, short events, void *arg)
{
	struct agent_port *pe = arg;

	agent_error(pe->pe_id, "port-timeout", "port %u in the fence did "
	    "not answer within %d ms", pe->pe_port, AGENT_PORT_CONNECT_MS);
	port_unlist(pe);
	port_free(pe);
}

static void
port_connected(evutil_socket_t fd, short events, void *arg)
{
	struct agent_port *pe = arg;
	socklen_t	 sl = sizeof(int);
	int		 err = 0;

	port_unlist(pe);
	if (getsockopt(pe->pe_fd, SOL_SOCKET, SO_ERROR, &err, &sl) == -1)
		err = errno;
	if (err != 0) {
		port_failed(pe, err);
		return;
	}
	port_established(pe);
}

/* The connect failed with err: said, and pe is gone. */
static void
port_failed(struct agent_port *pe, int err)
{
	if (err == ECONNREFUSED)
		agent_error(pe->pe_id, "port-closed", "nothing listens on "
		    "port %u in the fence", pe->pe_port);
	else
		agent_error(pe->pe_id, "port-error", "port %u in the fence: "
		    "%s", pe->pe_port, strerror(err));
	port_free(pe);
}

/*
 * Connected.  With descriptor passing, the socket is the broker's
 * (compose closes it whatever becomes of the message); else it is the
 * end of a framed tunnel.
 */
static void
port_established(struct agent_port *pe)
{
	struct msg_tunnel tn;
	void		*buf;
	size_t		 len;
	int		 fd;

	if (pe->pe_rev != NULL)
		event_free(pe->pe_rev);
	pe->pe_rev = NULL;
	if (agent_env->a_hello.h_fdpass) {
		tn.tn_mode = MSG_TUNNEL_FD;
		if (msg_tunnel_encode(&tn, &buf, &len) == -1)
			fatal("%s: msg_tunnel_encode", __func__);
		fd = pe->pe_fd;
		pe->pe_fd = -1;
		if (imsgev_compose(agent_env->a_iev, IMSG_AGENT_TUNNEL,
		    pe->pe_id, 0, fd, buf, len) == -1) {
			if (errno != ENOBUFS)
				fatal("%s: imsgev_compose", __func__);
			agent_error(pe->pe_id, "port-error", "the agent's "
			    "channel is full");
		} else
			log_debug("%s: tunnel %u: port %u passed", __func__,
			    pe->pe_id, pe->pe_port);
		free(buf);
		port_free(pe);
		return;
	}
	if ((pe->pe_t = agent_tunnel_new(pe->pe_id, &port_ops, pe)) == NULL) {
		port_free(pe);
		return;
	}
	if ((pe->pe_rev = event_new(agent_env->a_base, pe->pe_fd,
	    EV_READ | EV_PERSIST, port_read, pe)) == NULL ||
	    (pe->pe_wev = event_new(agent_env->a_base, pe->pe_fd, EV_WRITE,
	    port_write, pe)) == NULL)
		fatalx("%s: event_new", __func__);
	event_add(pe->pe_rev, NULL);
}

/* The server's bytes, as much as the tunnel has room for. */
static void
port_read(evutil_socket_t fd, short events, void *arg)
{
	struct agent_port *pe = arg;
	uint8_t		 buf[PORT_READ_MAX];
	size_t		 room;
	ssize_t		 n;

	if ((room = agent_tunnel_room(pe->pe_t)) == 0) {
		event_del(pe->pe_rev);
		return;
	}
	if (room > sizeof(buf))
		room = sizeof(buf);
	if ((n = read(pe->pe_fd, buf, room)) == -1) {
		if (errno == EAGAIN || errno == EINTR)
			return;
		log_debug("%s: tunnel %u: %s", __func__, pe->pe_id,
		    strerror(errno));
		agent_tunnel_abort(pe->pe_t);
		port_free(pe);
		return;
	}
	if (n == 0) {
		event_del(pe->pe_rev);
		pe->pe_eof = 1;
		agent_tunnel_shutdown(pe->pe_t);
		return;
	}
	(void)agent_tunnel_send(pe->pe_t, buf, (size_t)n);
	if (agent_tunnel_room(pe->pe_t) == 0)
		event_del(pe->pe_rev);
}

static void
port_resume(struct agent_tunnel *t, void *arg)
{
	struct agent_port *pe = arg;

	if (!pe->pe_eof)
		event_add(pe->pe_rev, NULL);
}

/* The broker's bytes to the server, as far as it takes them. */
static void
port_input(struct agent_tunnel *t, void *arg)
{
	struct agent_port *pe = arg;
	const uint8_t	*p;
	size_t		 len;
	ssize_t		 n;

	while ((len = agent_tunnel_input(pe->pe_t, &p)) > 0) {
		if ((n = write(pe->pe_fd, p, len)) == -1) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN) {
				event_add(pe->pe_wev, NULL);
				return;
			}
			log_debug("%s: tunnel %u: %s", __func__, pe->pe_id,
			    strerror(errno));
			agent_tunnel_abort(pe->pe_t);
			port_free(pe);
			return;
		}
		agent_tunnel_consumed(pe->pe_t, (size_t)n);
	}
}

static void
port_write(evutil_socket_t fd, short events, void *arg)
{
	struct agent_port *pe = arg;

	port_input(pe->pe_t, pe);
}

/* The broker's client sends no more: neither do we to the server. */
static void
port_eof(struct agent_tunnel *t, void *arg)
{
	struct agent_port *pe = arg;

	(void)shutdown(pe->pe_fd, SHUT_WR);
}

static void
port_closed(struct agent_tunnel *t, void *arg)
{
	port_free(arg);
}

/* TCP ports listening. */

/*
 * One line of /proc/net/tcp or tcp6: the local port if the socket
 * listens (state 0A) on loopback or on any address, else 0.
 */
static unsigned int
port_line(const char *line, int v6)
{
	char		 addr[40];
	unsigned int	 port, state;
	size_t		 alen = v6 ? 32 : 8;

	if (sscanf(line, " %*u: %39[0-9A-Fa-f]:%x %*[0-9A-Fa-f]:%*x %x",
	    addr, &port, &state) != 3 || strlen(addr) != alen ||
	    state != 0x0A || port == 0 || port > 65535)
		return (0);
	if (!v6) {
		/* The address as the kernel's bytes in hex: 127.0.0.1. */
		if (strcmp(addr, "00000000") == 0 ||
		    strcasecmp(addr, "0100007F") == 0)
			return (port);
		return (0);
	}
	if (strcmp(addr, "00000000000000000000000000000000") == 0 ||
	    strcmp(addr, "00000000000000000000000001000000") == 0 ||
	    strcasecmp(addr, "0000000000000000FFFF00000100007F") == 0)
		return (port);
	return (0);
}

static void
port_scan(const char *path, int v6, uint8_t *seen)
{
	FILE		*f;
	char		 line[512];
	unsigned int	 port, n = 0;

	if ((f = fopen(path, "re")) == NULL) {
		log_debug("%s: %s: %s", __func__, path, strerror(errno));
		return;
	}
	/* The header first; a line longer than ours is read in pieces. */
	while (n++ < PORT_PROC_LINES && fgets(line, sizeof(line), f) != NULL)
		if (n > 1 && (port = port_line(line, v6)) != 0)
			seen[port / 8] |= 1 << (port % 8);
	(void)fclose(f);
}

/* The ports listening in the fence, ascending, at most MSG_PORTS_MAX. */
int
agent_ports_read(struct msg_portlist *pl)
{
	uint8_t		*seen;
	unsigned int	 port;

	memset(pl, 0, sizeof(*pl));
	if ((seen = calloc(1, 65536 / 8)) == NULL)
		return (-1);
	port_scan("/proc/net/tcp", 0, seen);
	port_scan("/proc/net/tcp6", 1, seen);
	for (port = 1; port <= 65535; port++) {
		if (!(seen[port / 8] & (1 << (port % 8))))
			continue;
		if (pl->pl_count == MSG_PORTS_MAX) {
			pl->pl_truncated = 1;
			break;
		}
		pl->pl_ports[pl->pl_count++] = (uint16_t)port;
	}
	free(seen);
	return (0);
}

void
agent_ports(uint32_t id, const struct msg_ports_req *ps)
{
	struct msg_portlist pl;
	void		*buf;
	size_t		 len;

	if (agent_ports_read(&pl) == -1) {
		agent_error(id, "port-error", "cannot read the ports");
		return;
	}
	if (msg_portlist_encode(&pl, &buf, &len) == -1)
		fatal("%s: msg_portlist_encode", __func__);
	agent_reply(IMSG_AGENT_PORT_LIST, id, buf, len);
}
