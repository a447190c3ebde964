/*
 * Tunnels, the broker's side (docs/interactive.md, "Tunnels: the
 * broker's side").  A front end asks svc_tunnel_open() and gets a
 * connected, non-blocking SOCK_STREAM descriptor, whichever way the
 * fence's agent answered:
 *
 * - mode fd: the agent passed its connected socket in the fence.  It
 *   comes from inside a fence, so it is checked to be what it must be
 *   (a socket, of SOCK_STREAM, not listening, connected) before any
 *   front end sees it; anything else is an agent that is not ours.
 *   The service keeps a duplicate only to shut it down when the fence
 *   stops.
 * - mode framed: a socket pair; the front end gets one end, and the
 *   service pumps the other to and from the agent's DATA frames, in
 *   MSG_TUNNEL_WINDOW both ways: it reads its end only while the agent
 *   has room, and holds at most a window of the agent's bytes that the
 *   front end has not read (more is an agent that is not ours).
 *
 * A tunnel is a request to the agent (struct breq, its id the tunnel's)
 * from its open to the front end's svc_tunnel_close() or its going
 * away (inflight_orphan()); the fence's stop ends it.  Tunnels are
 * counted per fence, per user and in all, apart from the other
 * requests (breq_uncount() once open), so that a user's open tunnels
 * never take the room of their execs.
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/tree.h>

#include <errno.h>
#include <event.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fenced.h"
#include "imsg.h"
#include "log.h"
#include "msg.h"
#include "broker.h"
#include "svc.h"

#define TUNNEL_READ_MAX		(64 * 1024)
#define TUNNEL_ACK		(32 * 1024)	/* credit given in batches */

enum tunnel_state {
	TUNNEL_OPENING = 1,	/* asked, not answered */
	TUNNEL_FD,		/* the agent's socket is the maker's */
	TUNNEL_FRAMED,		/* pumped */
	TUNNEL_OVER		/* ended; counted till the maker closes */
};

struct svc_tunnel {
	TAILQ_ENTRY(svc_tunnel)	 st_entry;
	struct breq		*st_r;
	struct bfence		*st_fence;	/* NULL once over */
	uid_t			 st_uid;	/* who asked */
	enum tunnel_state	 st_state;
	uint32_t		 st_kind;
	uint32_t		 st_port;	/* MSG_TUNNEL_PORT */
	int			 st_fd;		/* FD: our duplicate; FRAMED:
						   our end of the pair */
	struct event		*st_rev;
	struct event		*st_wev;
	size_t			 st_room;	/* we may send the agent */
	uint8_t			*st_in;		/* the agent's bytes */
	size_t			 st_in_off;
	size_t			 st_in_len;
	size_t			 st_unacked;	/* written, not given back */
	int			 st_shut_in;	/* the agent sends no more */
	int			 st_shut_out;	/* nor do we */
};

static TAILQ_HEAD(, svc_tunnel) svc_tunnels_all =
    TAILQ_HEAD_INITIALIZER(svc_tunnels_all);
static unsigned int	 svc_ntunnels;

static void	tunnel_answer(struct breq *, const struct svc_msg *);
static void	tunnel_end(struct svc_tunnel *, int);
static void	tunnel_free(struct svc_tunnel *);
static void	tunnel_read(evutil_socket_t, short, void *);
static void	tunnel_write(evutil_socket_t, short, void *);
static void	tunnel_flush(struct svc_tunnel *);
static void	tunnel_maybe_over(struct svc_tunnel *);

/*
 * One message of request (or tunnel) id to bf's agent, now, with the
 * fence's bearer: a tunnel's DATA, CREDIT and CLOSE.  -1: no agent, or
 * its channel takes nothing more.
 */
int
svc_agent_send(struct bfence *bf, uint32_t type, uint32_t id, void *msg)
{
	void		*buf;
	size_t		 len;
	int		 rv;

	if (bf->bf_agent == NULL)
		return (-1);
	if (svc_agent_encode(bf, type, msg, &buf, &len) == -1)
		fatal("%s: %s", __func__, msg_type_name(type));
	rv = imsgev_compose(bf->bf_agent, type, id, 0, -1, buf, len);
	explicit_bzero(buf, len);
	free(buf);
	return (rv);
}

/*
 * A tunnel's frames cross our ABORT of it, which the agent does not
 * answer: those (without a descriptor) of a tunnel that is gone are
 * dropped, 1.  They hold nothing: the window counts only for one that
 * is open.
 */
int
svc_tunnel_stray(struct bfence *bf, struct imsg *imsg)
{
	uint32_t	 type = imsg->hdr.ih_type;

	if ((type != IMSG_AGENT_TUNNEL_DATA &&
	    type != IMSG_AGENT_TUNNEL_CREDIT &&
	    type != IMSG_AGENT_TUNNEL_CLOSE) || imsg->fd != -1)
		return (0);
	log_debug("fence %s: %s for tunnel %u that is gone, dropped",
	    bf->bf_info.f_key, msg_type_name(type), imsg->hdr.ih_peerid);
	return (1);
}

/* The TCP ports that listen in owner's KEY: SVC_PORTS, or an error. */
void
svc_ports(const struct svc_who *w, uid_t owner, const char *key, svc_cb cb,
    void *arg)
{
	struct msg_ports_req ps;

	memset(&ps, 0, sizeof(ps));
	strlcpy(ps.ps_key, key, sizeof(ps.ps_key));
	ps.ps_owner = owner;
	svc_agent_req(w, owner, key, IMSG_AGENT_PORTS, &ps, cb, arg);
}

/* uid's tunnels, open or opening, and bf's. */
unsigned int
svc_tunnels(uid_t uid)
{
	struct svc_tunnel *st;
	unsigned int	 n = 0;

	TAILQ_FOREACH(st, &svc_tunnels_all, st_entry)
		if (st->st_uid == uid)
			n++;
	return (n);
}

static unsigned int
tunnels_of(const struct bfence *bf)
{
	struct svc_tunnel *st;
	unsigned int	 n = 0;

	TAILQ_FOREACH(st, &svc_tunnels_all, st_entry)
		if (st->st_fence == bf)
			n++;
	return (n);
}

/*
 * A tunnel into owner's KEY of the kind req says (its key and owner
 * are not read: those given are).  One answer, SVC_TUNNEL or
 * SVC_ERROR; see broker.h.
 */
void
svc_tunnel_open(const struct svc_who *w, uid_t owner, const char *key,
    const struct msg_tunnel_open *req, svc_cb cb, void *arg)
{
	struct msg_tunnel_open to;
	struct bfence	*bf;
	struct breq	*r;
	struct svc_tunnel *st;

	if ((bf = svc_fence_for(w, owner, key, cb, arg)) == NULL)
		return;
	if (tunnels_of(bf) >= SVC_TUNNELS_FENCE) {
		svc_refuse(cb, arg, "too-many-tunnels", "%s %s has %d tunnels "
		    "open", w->w_noun, key, SVC_TUNNELS_FENCE);
		return;
	}
	if (!w->w_unbounded && svc_tunnels(w->w_uid) >= SVC_TUNNELS_USER) {
		svc_refuse(cb, arg, "too-many-tunnels", "at most %d tunnels "
		    "of one user are open at once", SVC_TUNNELS_USER);
		return;
	}
	if (svc_ntunnels >= SVC_TUNNELS_ALL) {
		svc_refuse(cb, arg, "too-many-tunnels", "the daemon has %d "
		    "tunnels open", SVC_TUNNELS_ALL);
		return;
	}
	to = *req;
	strlcpy(to.to_key, bf->bf_info.f_key, sizeof(to.to_key));
	to.to_owner = bf->bf_info.f_owner;
	memset(to.to_bearer, 0, sizeof(to.to_bearer));

	if ((st = calloc(1, sizeof(*st))) == NULL)
		fatal("%s: calloc", __func__);
	st->st_fence = bf;
	st->st_uid = w->w_uid;
	st->st_state = TUNNEL_OPENING;
	st->st_kind = to.to_kind;
	st->st_port = to.to_port;
	st->st_fd = -1;
	st->st_room = MSG_TUNNEL_WINDOW;
	TAILQ_INSERT_TAIL(&svc_tunnels_all, st, st_entry);
	svc_ntunnels++;
	r = breq_new(BREQ_AGENT, bf->bf_info.f_owner, bf->bf_info.f_key,
	    tunnel_answer, w, 0, cb, arg);
	r->r_tunnel = st;
	st->st_r = r;
	svc_to_agent(bf, r, IMSG_AGENT_TUNNEL_OPEN, &to, 0);
}

/*
 * What the request hears apart from the tunnel's own messages: an
 * ERROR from the agent, or the fence's end (svc_fail_fence(), which
 * expects r done when this returns).
 */
static void
tunnel_answer(struct breq *r, const struct svc_msg *m)
{
	struct svc_tunnel *st = r->r_tunnel;
	struct svc_answer a;

	if (st != NULL && st->st_state != TUNNEL_OPENING) {
		/* The fence is gone or failed: the maker reads its end. */
		tunnel_end(st, 0);
		r->r_tunnel = NULL;
		st->st_r = NULL;
		tunnel_free(st);
		breq_done(r);
		return;
	}
	if (st != NULL) {
		r->r_tunnel = NULL;
		st->st_r = NULL;
		tunnel_free(st);
	}
	memset(&a, 0, sizeof(a));
	a.a_what = SVC_ERROR;
	a.a_last = 1;
	a.a_code = m->m_error->e_code;
	a.a_message = m->m_error->e_message;
	breq_reply(r, &a);
}

/*
 * The tunnel's machinery stops (the request lives on): our end or
 * duplicate closed, which the maker reads as the end of its
 * descriptor; abort: the agent is told to drop its side.
 */
static void
tunnel_end(struct svc_tunnel *st, int abort)
{
	struct msg_tunnel_close tl;

	if (st->st_rev != NULL)
		event_free(st->st_rev);
	if (st->st_wev != NULL)
		event_free(st->st_wev);
	st->st_rev = st->st_wev = NULL;
	if (st->st_fd != -1) {
		if (st->st_state == TUNNEL_FD)
			(void)shutdown(st->st_fd, SHUT_RDWR);
		(void)close(st->st_fd);
		st->st_fd = -1;
	}
	if (abort && st->st_state == TUNNEL_FRAMED && st->st_fence != NULL &&
	    st->st_r != NULL) {
		memset(&tl, 0, sizeof(tl));
		tl.tl_how = MSG_TUNNEL_ABORT;
		(void)svc_agent_send(st->st_fence, IMSG_AGENT_TUNNEL_CLOSE,
		    st->st_r->r_in.in_id, &tl);
	}
	free(st->st_in);
	st->st_in = NULL;
	st->st_in_len = st->st_in_off = 0;
	st->st_state = TUNNEL_OVER;
	st->st_fence = NULL;
}

static void
tunnel_free(struct svc_tunnel *st)
{
	if (st->st_state != TUNNEL_OVER)
		tunnel_end(st, 0);
	TAILQ_REMOVE(&svc_tunnels_all, st, st_entry);
	svc_ntunnels--;
	free(st);
}

/*
 * The maker closed its descriptor (or went away): the tunnel ends and
 * no longer counts.  An id that is over, or not the maker's, is let be.
 */
void
svc_tunnel_close(uint32_t id, void *arg)
{
	struct breq	*r;

	if ((r = breq_find(id)) == NULL || r->r_in.in_maker != arg ||
	    r->r_tunnel == NULL || r->r_tunnel->st_state == TUNNEL_OPENING)
		return;
	r->r_cb = NULL;
	svc_tunnel_orphan(r);
}

/*
 * The open tunnel id of maker from passes to maker to (a front end
 * that answered its client and keeps the tunnel in another object).
 */
void
svc_tunnel_adopt(uint32_t id, void *from, void *to)
{
	struct breq	*r;

	if ((r = breq_find(id)) == NULL || r->r_in.in_maker != from ||
	    r->r_tunnel == NULL)
		return;
	r->r_in.in_maker = to;
}

/* r's maker is gone (breq_orphan(), svc_tunnel_close()). */
void
svc_tunnel_orphan(struct breq *r)
{
	struct svc_tunnel *st = r->r_tunnel;

	if (st == NULL) {
		breq_done(r);
		return;
	}
	/* Asked: its answer is dropped when it comes; held: it goes. */
	if (st->st_state == TUNNEL_OPENING && !r->r_is_held)
		return;
	tunnel_end(st, 1);
	r->r_tunnel = NULL;
	st->st_r = NULL;
	tunnel_free(st);
	breq_done(r);
}

/*
 * A descriptor from inside a fence is what it must be, or refused: a
 * socket, a stream, not listening (0, and why).  Connected to
 * something, or -1: a connection the agent made can be reset by the
 * server before it gets here, so one without a peer is no proof of an
 * agent that is not ours, only of no connection to give.
 */
static int
tunnel_fd_valid(int fd, const char **why)
{
	struct stat	 sb;
	struct sockaddr_storage ss;
	socklen_t	 sl;
	int		 v;

	if (fstat(fd, &sb) == -1 || !S_ISSOCK(sb.st_mode)) {
		*why = "not a socket";
		return (0);
	}
	sl = sizeof(v);
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &v, &sl) == -1 ||
	    v != SOCK_STREAM) {
		*why = "not a stream socket";
		return (0);
	}
	sl = sizeof(v);
	if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &v, &sl) == -1 ||
	    v != 0) {
		*why = "a listening socket";
		return (0);
	}
	sl = sizeof(ss);
	if (getpeername(fd, (struct sockaddr *)&ss, &sl) == -1) {
		*why = "not connected";
		return (-1);
	}
	return (1);
}

/* Tell the maker its descriptor; the request is counted as a tunnel. */
static void
tunnel_give(struct breq *r, int fd)
{
	struct svc_answer a;

	breq_uncount(r);
	memset(&a, 0, sizeof(a));
	a.a_what = SVC_TUNNEL;
	a.a_last = 0;
	a.a_fd = fd;
	a.a_id = r->r_in.in_id;
	breq_reply(r, &a);
}

/* The agent passed its connected socket (mode fd): checked, handed over. */
static int
tunnel_opened_fd(struct breq *r, struct svc_tunnel *st, struct imsg *imsg)
{
	const char	*why;
	int		 fd, v;

	if (imsg->fd == -1 || st->st_kind != MSG_TUNNEL_PORT)
		return (-1);
	if ((v = tunnel_fd_valid(imsg->fd, &why)) == 0) {
		log_warnx("fence %s: tunnel %u: the agent passed a "
		    "descriptor that is %s", r->r_key,
		    r->r_in.in_id, why);
		return (-1);
	}
	fd = imsg->fd;
	imsg->fd = -1;
	if (v == -1) {
		log_warnx("fence %s: tunnel %u: the agent passed a "
		    "descriptor that is %s; refused", r->r_key,
		    r->r_in.in_id, why);
		(void)close(fd);
		st->st_state = TUNNEL_OVER;
		breq_error(r, "port-closed", "the connection to port "
		    "%u in the %s closed before it was passed on",
		    st->st_port, r->r_noun);
		tunnel_free(st);
		return (0);
	}
	if (r->r_cb == NULL) {
		/* Its maker went while it opened. */
		(void)close(fd);
		st->st_state = TUNNEL_OVER;
		svc_tunnel_orphan(r);
		return (0);
	}
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) ==
	    -1 || fcntl(fd, F_SETFD, FD_CLOEXEC) == -1 ||
	    (st->st_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0)) == -1) {
		log_warn("fence %s: tunnel %u", r->r_key,
		    r->r_in.in_id);
		(void)close(fd);
		st->st_state = TUNNEL_OVER;
		breq_error(r, "too-many-tunnels", "the daemon is out "
		    "of descriptors");
		/* The request is done: the tunnel with it. */
		tunnel_free(st);
		return (0);
	}
	st->st_state = TUNNEL_FD;
	log_debug("fence %s: tunnel %u open, the fence's socket",
	    r->r_key, r->r_in.in_id);
	tunnel_give(r, fd);
	return (0);
}

/* The agent's answer: the tunnel is open, one way or the other. */
static int
tunnel_opened(struct breq *r, struct svc_tunnel *st, struct imsg *imsg)
{
	struct msg_tunnel tn;
	int		 sv[2];

	if (st->st_state != TUNNEL_OPENING ||
	    msg_tunnel_decode(imsg->data, imsg->len, &tn) == -1)
		return (-1);
	if (tn.tn_mode == MSG_TUNNEL_FD)
		return (tunnel_opened_fd(r, st, imsg));
	if (imsg->fd != -1)
		return (-1);
	st->st_state = TUNNEL_FRAMED;
	if (r->r_cb == NULL) {
		svc_tunnel_orphan(r);
		return (0);
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0, sv) == -1) {
		log_warn("fence %s: tunnel %u: socketpair", r->r_key,
		    r->r_in.in_id);
		tunnel_end(st, 1);
		r->r_tunnel = NULL;
		st->st_r = NULL;
		tunnel_free(st);
		breq_error(r, "too-many-tunnels", "the daemon is out of "
		    "descriptors");
		return (0);
	}
	st->st_fd = sv[1];
	if ((st->st_rev = event_new(broker_self.ps_evbase, st->st_fd,
	    EV_READ | EV_PERSIST, tunnel_read, st)) == NULL ||
	    (st->st_wev = event_new(broker_self.ps_evbase, st->st_fd,
	    EV_WRITE, tunnel_write, st)) == NULL)
		fatalx("%s: event_new", __func__);
	event_add(st->st_rev, NULL);
	log_debug("fence %s: tunnel %u open, framed", r->r_key,
	    r->r_in.in_id);
	tunnel_give(r, sv[0]);
	return (0);
}

/* The maker's bytes, as far as the agent has room. */
static void
tunnel_read(evutil_socket_t fd, short events, void *arg)
{
	struct svc_tunnel *st = arg;
	struct msg_tunnel_data td;
	struct msg_tunnel_close tl;
	uint8_t		 buf[TUNNEL_READ_MAX];
	size_t		 want;
	ssize_t		 n;

	if ((want = st->st_room) == 0) {
		event_del(st->st_rev);
		return;
	}
	if (want > sizeof(buf))
		want = sizeof(buf);
	if ((n = read(st->st_fd, buf, want)) == -1) {
		if (errno == EAGAIN || errno == EINTR)
			return;
		tunnel_end(st, 1);
		return;
	}
	if (n == 0) {
		event_del(st->st_rev);
		st->st_shut_out = 1;
		memset(&tl, 0, sizeof(tl));
		tl.tl_how = MSG_TUNNEL_SHUT;
		if (svc_agent_send(st->st_fence, IMSG_AGENT_TUNNEL_CLOSE,
		    st->st_r->r_in.in_id, &tl) == -1)
			tunnel_end(st, 0);
		else
			tunnel_maybe_over(st);
		return;
	}
	memset(&td, 0, sizeof(td));
	td.td_data = buf;
	td.td_len = (size_t)n;
	if (svc_agent_send(st->st_fence, IMSG_AGENT_TUNNEL_DATA,
	    st->st_r->r_in.in_id, &td) == -1) {
		log_warn("fence %s: tunnel %u", st->st_r->r_key,
		    st->st_r->r_in.in_id);
		tunnel_end(st, 0);
		return;
	}
	st->st_room -= (size_t)n;
	if (st->st_room == 0)
		event_del(st->st_rev);
}

/* Both ways shut and all written: the machinery ends. */
static void
tunnel_maybe_over(struct svc_tunnel *st)
{
	if (st->st_shut_in && st->st_shut_out && st->st_in_len == 0)
		tunnel_end(st, 0);
}

/* Credit back for what was written on, in batches, or all at the end. */
static void
tunnel_ack(struct svc_tunnel *st)
{
	struct msg_tunnel_credit tc;

	if (st->st_unacked == 0 || st->st_shut_in ||
	    (st->st_unacked < TUNNEL_ACK && st->st_in_len > 0))
		return;
	memset(&tc, 0, sizeof(tc));
	tc.tc_bytes = (uint32_t)st->st_unacked;
	st->st_unacked = 0;
	(void)svc_agent_send(st->st_fence, IMSG_AGENT_TUNNEL_CREDIT,
	    st->st_r->r_in.in_id, &tc);
}

/* Write what waits; the rest when the maker has read some. */
static void
tunnel_flush(struct svc_tunnel *st)
{
	ssize_t		 n;

	while (st->st_in_len > 0) {
		n = send(st->st_fd, st->st_in + st->st_in_off, st->st_in_len,
		    MSG_NOSIGNAL);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN) {
				event_add(st->st_wev, NULL);
				break;
			}
			/* The maker's end is closed: it will say so. */
			tunnel_end(st, 1);
			return;
		}
		st->st_in_off += (size_t)n;
		st->st_in_len -= (size_t)n;
		st->st_unacked += (size_t)n;
	}
	if (st->st_in_len == 0)
		st->st_in_off = 0;
	tunnel_ack(st);
	if (st->st_in_len == 0 && st->st_shut_in) {
		(void)shutdown(st->st_fd, SHUT_WR);
		tunnel_maybe_over(st);
	}
}

static void
tunnel_write(evutil_socket_t fd, short events, void *arg)
{
	tunnel_flush(arg);
}

/*
 * DATA, CREDIT, CLOSE and the open's answer from the agent, for r.
 * -1: the agent broke the protocol (beyond a window, after its shut,
 * a descriptor that is not a connected stream socket); its channel is
 * closed by the caller.
 */
int
svc_tunnel_agent(struct breq *r, struct imsg *imsg)
{
	struct svc_tunnel *st = r->r_tunnel;
	struct msg_tunnel_data td;
	struct msg_tunnel_credit tc;
	struct msg_tunnel_close tl;
	uint32_t	 type = imsg->hdr.ih_type;

	if (st == NULL)
		return (-1);
	if (type == IMSG_AGENT_TUNNEL)
		return (tunnel_opened(r, st, imsg));
	if (imsg->fd != -1 || st->st_state == TUNNEL_OPENING ||
	    st->st_state == TUNNEL_FD)
		return (-1);
	switch (type) {
	case IMSG_AGENT_TUNNEL_DATA:
		if (msg_tunnel_data_decode(imsg->data, imsg->len, &td) == -1)
			return (-1);
		if (st->st_shut_in || td.td_len > MSG_TUNNEL_WINDOW -
		    (st->st_in_len + st->st_unacked)) {
			msg_tunnel_data_free(&td);
			return (-1);
		}
		if (st->st_state == TUNNEL_OVER) {
			/* Ours went, the agent's crossed it: dropped. */
			msg_tunnel_data_free(&td);
			return (0);
		}
		if (st->st_in == NULL &&
		    (st->st_in = malloc(MSG_TUNNEL_WINDOW)) == NULL)
			fatal("%s: malloc", __func__);
		if (st->st_in_off + st->st_in_len + td.td_len >
		    MSG_TUNNEL_WINDOW) {
			memmove(st->st_in, st->st_in + st->st_in_off,
			    st->st_in_len);
			st->st_in_off = 0;
		}
		memcpy(st->st_in + st->st_in_off + st->st_in_len, td.td_data,
		    td.td_len);
		st->st_in_len += td.td_len;
		msg_tunnel_data_free(&td);
		tunnel_flush(st);
		return (0);
	case IMSG_AGENT_TUNNEL_CREDIT:
		if (msg_tunnel_credit_decode(imsg->data, imsg->len, &tc) ==
		    -1 || tc.tc_bytes > MSG_TUNNEL_WINDOW - st->st_room)
			return (-1);
		if (st->st_state == TUNNEL_OVER)
			return (0);
		if (st->st_room == 0 && !st->st_shut_out)
			event_add(st->st_rev, NULL);
		st->st_room += tc.tc_bytes;
		return (0);
	case IMSG_AGENT_TUNNEL_CLOSE:
		if (msg_tunnel_close_decode(imsg->data, imsg->len, &tl) == -1)
			return (-1);
		if (st->st_state == TUNNEL_OVER)
			return (0);
		if (tl.tl_how == MSG_TUNNEL_ABORT) {
			tunnel_end(st, 0);
			return (0);
		}
		if (st->st_shut_in)
			return (-1);
		st->st_shut_in = 1;
		tunnel_flush(st);
		return (0);
	}
	return (-1);
}
