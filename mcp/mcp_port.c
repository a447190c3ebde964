/*
 * fence-mcp's ports (docs/mcp.md, "Ports"), as fencectl's ports, port
 * and forward: port_list asks which ports listen in the fence
 * (IMSG_CTL_PORTS); port_open checks that the port listens, asks for
 * its URLs (IMSG_CTL_PORT_TICKET: the path form, which takes the host
 * token, and a ticket URL good once for a browser) and holds a forward:
 * a listening socket on 127.0.0.1, a port the kernel picks, whose
 * connections mcp_poll() accepts and relays each through a tunnel of
 * its own to the fence's port (IMSG_CTL_TUNNEL, kind port; common/
 * pump.c moves the bytes).  port_close ends the forward and its
 * connections.  At most MCP_FWDS_MAX forwards, MCP_FWD_CONNS
 * connections each (more wait in the backlog).
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fenced.h"
#include "imsg.h"
#include "log.h"
#include "msg.h"
#include "mcp.h"

struct mcp_fwd {
	char		 f_key[FENCE_KEY_SIZE];
	uint32_t	 f_port;		/* in the fence */
	uint16_t	 f_local;		/* on 127.0.0.1 */
	int		 f_lfd;
	int		 f_idx;			/* its pollfd, or -1 */
	struct pump	*f_conns[MCP_FWD_CONNS];
	int		 f_cidx[MCP_FWD_CONNS];	/* theirs, or -1 */
};

static struct mcp_fwd	*mcp_fwds[MCP_FWDS_MAX];

static int
mcp_on_tunnel(struct mcp_call *c, struct imsg *imsg, void *arg)
{
	int	*fd = arg;

	if (imsg->hdr.ih_type != IMSG_CTL_TUNNEL_FD || imsg->fd == -1 ||
	    *fd != -1)
		return (-1);
	*fd = imsg->fd;
	imsg->fd = -1;
	return (0);
}

/*
 * A tunnel of kind to the fence key (a port: arg its port; a terminal:
 * arg its id, offset the bytes replayed), as fencectl's: its
 * descriptor, or -1 and c failed.
 */
int
mcp_tunnel(const char *key, uint32_t kind, uint32_t arg, uint64_t offset,
    struct mcp_call *c)
{
	struct msg_tunnel_open tn;
	void		*buf;
	size_t		 len;
	int		 fd = -1;

	memset(&tn, 0, sizeof(tn));
	strlcpy(tn.to_key, key, sizeof(tn.to_key));
	tn.to_owner = MSG_OWNER_NONE;
	tn.to_kind = kind;
	if (kind == MSG_TUNNEL_PORT)
		tn.to_port = arg;
	else
		tn.to_id = arg;
	tn.to_offset = offset;
	if (msg_tunnel_open_encode(&tn, &buf, &len) == -1) {
		mcp_failed(c, "bad-request", "cannot encode");
		return (-1);
	}
	mcp_ask(c, IMSG_CTL_TUNNEL, buf, len, MCP_WAIT_MS, mcp_on_tunnel, &fd);
	if (c->c_failed && fd != -1) {
		(void)close(fd);
		fd = -1;
	} else if (!c->c_failed && fd == -1)
		mcp_failed(c, "bad-answer", "no tunnel in fenced's answer");
	return (fd);
}

int
mcp_port_fill(struct pollfd *pfd, int max)
{
	struct mcp_fwd	*f;
	int		 i, k, n = 0, nconns;

	for (i = 0; i < MCP_FWDS_MAX; i++) {
		if ((f = mcp_fwds[i]) == NULL)
			continue;
		f->f_idx = -1;
		for (nconns = 0, k = 0; k < MCP_FWD_CONNS; k++) {
			f->f_cidx[k] = -1;
			if (f->f_conns[k] == NULL || n + 2 > max)
				continue;
			pump_events(f->f_conns[k], &pfd[n]);
			f->f_cidx[k] = n;
			n += 2;
			nconns++;
		}
		if (nconns < MCP_FWD_CONNS && n < max) {
			pfd[n].fd = f->f_lfd;
			pfd[n].events = POLLIN;
			pfd[n].revents = 0;
			f->f_idx = n++;
		}
	}
	return (n);
}

/* A connection accepted: its tunnel, asked for now (fenced answers
 * at once for a port that listens, or within the agent's 5 s). */
static void
mcp_fwd_accept(struct mcp_fwd *f)
{
	struct mcp_call	 q;
	int		 cfd, tfd, k;

	if ((cfd = accept4(f->f_lfd, NULL, NULL, SOCK_CLOEXEC |
	    SOCK_NONBLOCK)) == -1)
		return;
	for (k = 0; k < MCP_FWD_CONNS && f->f_conns[k] != NULL; k++)
		;
	memset(&q, 0, sizeof(q));
	if (k == MCP_FWD_CONNS || (q.c_out = json_object()) == NULL) {
		(void)close(cfd);
		return;
	}
	tfd = mcp_tunnel(f->f_key, MSG_TUNNEL_PORT, f->f_port, 0, &q);
	if (tfd == -1)
		log_warnx("forward of %s:%u: %s", f->f_key, f->f_port,
		    json_string_value(json_object_get(json_object_get(q.c_out,
		    "error"), "message")));
	json_decref(q.c_out);
	if (tfd == -1 || (f->f_conns[k] = pump_new(cfd, tfd)) == NULL) {
		(void)close(cfd);
		if (tfd != -1)
			(void)close(tfd);
	}
}

void
mcp_port_handle(struct pollfd *pfd, int n)
{
	struct mcp_fwd	*f;
	int		 i, k;

	for (i = 0; i < MCP_FWDS_MAX; i++) {
		if ((f = mcp_fwds[i]) == NULL)
			continue;
		for (k = 0; k < MCP_FWD_CONNS; k++) {
			if (f->f_conns[k] == NULL || f->f_cidx[k] < 0 ||
			    f->f_cidx[k] + 2 > n)
				continue;
			if (pump_move(f->f_conns[k], &pfd[f->f_cidx[k]])) {
				pump_free(f->f_conns[k]);
				f->f_conns[k] = NULL;
			}
		}
		if (f->f_idx >= 0 && f->f_idx < n &&
		    (pfd[f->f_idx].revents & POLLIN))
			mcp_fwd_accept(f);
	}
}

/* key and port, every port call's. */
static int
mcp_port_args(struct mcp_call *c, char *key, uint32_t *port)
{
	if (mcp_arg_key(c, "key", key) == -1 ||
	    mcp_arg_int(c, "port", 1, 65535, -1, port) == -1)
		return (-1);
	return (0);
}

static int
mcp_on_ports(struct mcp_call *c, struct imsg *imsg, void *arg)
{
	struct msg_portlist *pl = arg;

	if (imsg->hdr.ih_type != IMSG_CTL_PORT_LIST ||
	    msg_portlist_decode(imsg->data, imsg->len, pl) == -1)
		return (-1);
	return (0);
}

/* The ports listening in the fence, into pl; -1: the call failed. */
static int
mcp_ports(struct mcp_call *c, const char *key, struct msg_portlist *pl)
{
	struct msg_ports_req ps;
	void		*buf;
	size_t		 len;

	memset(&ps, 0, sizeof(ps));
	memset(pl, 0, sizeof(*pl));
	strlcpy(ps.ps_key, key, sizeof(ps.ps_key));
	ps.ps_owner = MSG_OWNER_NONE;
	if (msg_ports_req_encode(&ps, &buf, &len) == -1) {
		mcp_failed(c, "bad-request", "cannot encode");
		return (-1);
	}
	mcp_ask(c, IMSG_CTL_PORTS, buf, len, MCP_WAIT_MS, mcp_on_ports, pl);
	return (c->c_failed ? -1 : 0);
}

static struct mcp_fwd *
mcp_fwd_find(const char *key, uint32_t port, int *slot)
{
	int	 i;

	for (i = 0; i < MCP_FWDS_MAX; i++)
		if (mcp_fwds[i] != NULL && mcp_fwds[i]->f_port == port &&
		    strcmp(mcp_fwds[i]->f_key, key) == 0) {
			*slot = i;
			return (mcp_fwds[i]);
		}
	return (NULL);
}

static void
mcp_fwd_free(struct mcp_fwd *f)
{
	int	 k;

	for (k = 0; k < MCP_FWD_CONNS; k++)
		pump_free(f->f_conns[k]);
	(void)close(f->f_lfd);
	free(f);
}

/* A new forward of key's port, or NULL and c failed. */
static struct mcp_fwd *
mcp_fwd_new(struct mcp_call *c, const char *key, uint32_t port)
{
	struct sockaddr_in sin;
	socklen_t	 sl = sizeof(sin);
	struct mcp_fwd	*f;
	int		 i;

	for (i = 0; i < MCP_FWDS_MAX && mcp_fwds[i] != NULL; i++)
		;
	if (i == MCP_FWDS_MAX) {
		mcp_failed(c, "too-many-forwards", "fence-mcp holds as many "
		    "forwards as it may; port_close one");
		return (NULL);
	}
	if ((f = calloc(1, sizeof(*f))) == NULL) {
		mcp_failed(c, "no-memory", "out of memory");
		return (NULL);
	}
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((f->f_lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC |
	    SOCK_NONBLOCK, 0)) == -1 ||
	    bind(f->f_lfd, (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
	    listen(f->f_lfd, 64) == -1 ||
	    getsockname(f->f_lfd, (struct sockaddr *)&sin, &sl) == -1) {
		mcp_failed(c, "forward-failed", strerror(errno));
		if (f->f_lfd != -1)
			(void)close(f->f_lfd);
		free(f);
		return (NULL);
	}
	strlcpy(f->f_key, key, sizeof(f->f_key));
	f->f_port = port;
	f->f_local = ntohs(sin.sin_port);
	f->f_idx = -1;
	for (i = 0; i < MCP_FWD_CONNS; i++)
		f->f_cidx[i] = -1;
	for (i = 0; i < MCP_FWDS_MAX && mcp_fwds[i] != NULL; i++)
		;
	mcp_fwds[i] = f;
	return (f);
}

static int
mcp_on_urls(struct mcp_call *c, struct imsg *imsg, void *arg)
{
	struct msg_port_ticket *pk = arg;

	if (imsg->hdr.ih_type != IMSG_CTL_PORT_URLS ||
	    msg_port_ticket_decode(imsg->data, imsg->len, pk) == -1)
		return (-1);
	return (0);
}

int
mcp_port_open(struct mcp_call *c)
{
	struct msg_portlist pl;
	struct msg_port_ticket pk;
	struct mcp_fwd	*f = NULL;
	char		 key[FENCE_KEY_SIZE], url[64];
	uint32_t	 port, i;
	void		*buf;
	size_t		 len;
	int		 slot, listens = 0;
	json_t		*o;

	if (mcp_port_args(c, key, &port) == -1)
		return (-1);
	/* The fence reached, and the port listening, before a forward. */
	if (mcp_ports(c, key, &pl) == 0) {
		for (i = 0; i < pl.pl_count; i++)
			if (pl.pl_ports[i] == port)
				listens = 1;
		if (!listens && !pl.pl_truncated)
			mcp_failed(c, "port-closed", "nothing listens on that "
			    "port in the fence (port_list lists those that "
			    "do)");
	}
	memset(&pk, 0, sizeof(pk));
	if (!c->c_failed) {
		strlcpy(pk.pk_key, key, sizeof(pk.pk_key));
		pk.pk_owner = MSG_OWNER_NONE;
		pk.pk_port = port;
		if (msg_port_ticket_encode(&pk, &buf, &len) == -1)
			mcp_failed(c, "bad-request", "cannot encode");
		else
			mcp_ask(c, IMSG_CTL_PORT_TICKET, buf, len, MCP_WAIT_MS,
			    mcp_on_urls, &pk);
	}
	if (!c->c_failed && (f = mcp_fwd_find(key, port, &slot)) == NULL)
		f = mcp_fwd_new(c, key, port);
	if (!c->c_failed && f != NULL) {
		snprintf(url, sizeof(url), "http://127.0.0.1:%u/",
		    (unsigned)f->f_local);
		o = json_pack("{s:I, s:s, s:s, s:s, s:I, s:{s:s, s:s, s:s}}",
		    "port", (json_int_t)port, "forward", url,
		    "path", pk.pk_path, "ticket_url", pk.pk_url,
		    "ticket_expires_ms", (json_int_t)pk.pk_expires_ms,
		    "access",
		    "forward", "any local process that connects to "
		    "127.0.0.1 at that port, while this fence-mcp runs and "
		    "until port_close",
		    "path", "fenced's HTTP listener with the owner's host "
		    "token (header x-voicebox-host-token)",
		    "ticket_url", "once, within ticket_expires_ms, by a "
		    "browser: it sets a cookie for this port of this fence");
		json_object_set_new(c->c_out, "port", o);
	}
	explicit_bzero(&pk, sizeof(pk));
	mcp_show(c, key);
	return (0);
}

int
mcp_port_list(struct mcp_call *c)
{
	struct msg_portlist pl;
	char		 key[FENCE_KEY_SIZE], url[64];
	json_t		*a, *fw;
	uint32_t	 i;

	if (mcp_arg_key(c, "key", key) == -1)
		return (-1);
	if (mcp_ports(c, key, &pl) == 0 && (a = json_array()) != NULL) {
		for (i = 0; i < pl.pl_count; i++)
			json_array_append_new(a, json_integer(pl.pl_ports[i]));
		json_object_set_new(c->c_out, "listening", a);
		json_object_set_new(c->c_out, "truncated",
		    json_boolean(pl.pl_truncated));
	}
	if ((fw = json_array()) != NULL) {
		for (i = 0; i < MCP_FWDS_MAX; i++) {
			if (mcp_fwds[i] == NULL ||
			    strcmp(mcp_fwds[i]->f_key, key) != 0)
				continue;
			snprintf(url, sizeof(url), "http://127.0.0.1:%u/",
			    (unsigned)mcp_fwds[i]->f_local);
			json_array_append_new(fw, json_pack("{s:I, s:s}",
			    "port", (json_int_t)mcp_fwds[i]->f_port,
			    "forward", url));
		}
		json_object_set_new(c->c_out, "forwards", fw);
	}
	mcp_show(c, key);
	return (0);
}

int
mcp_port_close(struct mcp_call *c)
{
	struct mcp_fwd	*f;
	char		 key[FENCE_KEY_SIZE];
	uint32_t	 port;
	int		 slot;

	if (mcp_port_args(c, key, &port) == -1)
		return (-1);
	if ((f = mcp_fwd_find(key, port, &slot)) == NULL)
		mcp_failed(c, "not-open", "fence-mcp holds no forward of "
		    "that port of that fence");
	else {
		mcp_fwds[slot] = NULL;
		mcp_fwd_free(f);
		json_object_set_new(c->c_out, "closed", json_integer(port));
	}
	mcp_show(c, key);
	return (0);
}
