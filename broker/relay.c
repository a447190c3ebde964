/*
 * The port relay's connections (docs/interactive.md, "The HTTP API"):
 * a connection taken from evhttp (http_takeover.c) whose requests go,
 * one by one, to a TCP port inside a fence through a tunnel of the
 * fence service (svc_tunnel_open()).
 *
 * Each request's head is read whole (at most `http headers max'),
 * parsed and refused where its framing is ambiguous (http_head.c),
 * authorised (relay_auth.c: every request, not only the first, and all
 * of one connection to the same fence and port), rewritten (the token
 * header and fenced's cookie out, the path form's target made /<rest>)
 * and sent on; its body follows by its framing, Content-Length or
 * chunked (whose end is found as it passes, never buffered whole); then
 * the next head.  A request with Upgrade makes the connection a raw
 * tunnel after its head.  What the fence answers passes back unread.
 *
 * Each direction holds at most RELAY_HIGH bytes not yet written (and
 * a read's worth over): over it, the side that fills it is not read
 * until the other has taken some (relay_leave()).  A refusal after requests were relayed
 * waits for the fence to end its answers (its writing side is shut),
 * at most `http timeout', then follows them and the connection closes.
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/event_struct.h>
#include <jansson.h>

#include "fenced.h"
#include "imsg.h"
#include "log.h"
#include "msg.h"
#include "proc.h"
#include "broker.h"
#include "http.h"
#include "http_takeover.h"
#include "ticket.h"
#include "relay.h"

#define RELAY_HIGH	(256 * 1024)	/* unwritten bytes, per direction */
#define RELAY_READ	(64 * 1024)	/* at most, a read */
#define RELAY_HEAD_OUT	(HTTP_HEAD_TARGET + 16384)

enum relay_state {
	RL_HEAD = 1,	/* reading a request's head */
	RL_OPENING,	/* the tunnel is being opened */
	RL_BODY_CL,	/* a body of rl_left bytes passes */
	RL_BODY_CHUNKED,
	RL_TUNNEL,	/* upgraded: raw both ways */
	RL_REFUSING,	/* the fence's answers end, then ours */
	RL_CLOSING	/* what is written goes out, then the end */
};

/*
 * One side's socket: read by the relay itself (no bufferevent: it asked
 * the kernel how much was readable before every read, and added and
 * removed a write event for every answer; docs/bench.md, "port"), with
 * what the socket did not take kept in rs_out until it is writable.
 */
struct relay_sock {
	int			 rs_fd;		/* -1: none (yet) */
	struct event		 rs_rd;
	struct event		 rs_wr;
	struct evbuffer		*rs_out;
	int			 rs_reading;	/* rs_rd added */
	int			 rs_writing;	/* rs_wr added */
};

struct relay {
	struct http_taken	*rl_ht;
	struct relay_sock	 rl_c;		/* the client */
	struct relay_sock	 rl_f;		/* the fence's port */
	struct evbuffer		*rl_in;		/* the client's, not handled */
	enum relay_state	 rl_state;
	struct relay_target	 rl_to;		/* the first request's */
	int			 rl_claimed;
	int			 rl_opening;	/* svc_tunnel_open pending */
	int			 rl_tunnel;	/* rl_tunnel_id open */
	uint32_t		 rl_tunnel_id;
	uint64_t		 rl_left;
	struct http_chunked	 rl_chunked;
	int			 rl_client_eof;
	int			 rl_fence_eof;
	int			 rl_shut_wanted;	/* no more to the fence */
	int			 rl_fence_shut;
	struct evbuffer		*rl_refusal;	/* RL_REFUSING: ours after */
	struct event		 rl_timer;
	struct event		 rl_kick;	/* the client's bytes again */
	int			 rl_busy;	/* callbacks under way */
	int			 rl_ended;
};

/*
 * What a read of the fence's socket lands in before it is written on,
 * and a request's head parsed and rewritten: the broker has one thread,
 * and none of them outlives its callback.
 */
static char		 relay_buf[RELAY_READ];
static char		 relay_head_out[RELAY_HEAD_OUT];
static struct http_head	 relay_head_in;

static void	relay_client_bytes(struct relay *);
static void	relay_fence_readable(evutil_socket_t, short, void *);
static void	relay_end(struct relay *);

static int
relay_sock_open(struct relay_sock *rs, int fd, struct relay *rl,
    event_callback_fn rd, event_callback_fn wr)
{
	if ((rs->rs_out = evbuffer_new()) == NULL)
		return (-1);
	rs->rs_fd = fd;
	event_assign(&rs->rs_rd, broker_self.ps_evbase, fd, EV_READ | EV_PERSIST,
	    rd, rl);
	event_assign(&rs->rs_wr, broker_self.ps_evbase, fd, EV_WRITE |
	    EV_PERSIST, wr, rl);
	return (0);
}

static void
relay_sock_close(struct relay_sock *rs)
{
	if (rs->rs_fd == -1)
		return;
	event_del(&rs->rs_rd);
	event_del(&rs->rs_wr);
	rs->rs_reading = rs->rs_writing = 0;
	close(rs->rs_fd);
	rs->rs_fd = -1;
}

/* rs's read or write event on or off, as on says. */
static void
relay_sock_read(struct relay_sock *rs, int on)
{
	if (rs->rs_fd == -1 || rs->rs_reading == on)
		return;
	if (on)
		event_add(&rs->rs_rd, NULL);
	else
		event_del(&rs->rs_rd);
	rs->rs_reading = on;
}

static void
relay_sock_write(struct relay_sock *rs, int on)
{
	if (rs->rs_fd == -1 || rs->rs_writing == on)
		return;
	if (on)
		event_add(&rs->rs_wr, NULL);
	else
		event_del(&rs->rs_wr);
	rs->rs_writing = on;
}

static size_t
relay_pending(const struct relay_sock *rs)
{
	return (rs->rs_out == NULL ? 0 : evbuffer_get_length(rs->rs_out));
}

/*
 * Bytes for rs's socket: written at once when nothing of rs waits
 * before them, what the socket does not take kept for its write event.
 * A write that fails leaves its bytes waiting: the write event, which
 * an errored socket raises at once, says what happened (relay_*_
 * writable()).  relay_move() moves at most n bytes of src, relay_put()
 * n bytes of memory.
 */
static void
relay_move(struct evbuffer *src, struct relay_sock *rs, size_t n)
{
	int	 w;

	if (n > 0 && relay_pending(rs) == 0 &&
	    (w = evbuffer_write_atmost(src, rs->rs_fd, n)) > 0)
		n -= w;
	if (n > 0) {
		evbuffer_remove_buffer(src, rs->rs_out, n);
		relay_sock_write(rs, 1);
	}
}

static void
relay_put(struct relay_sock *rs, const char *p, size_t n)
{
	ssize_t	 w;

	if (relay_pending(rs) == 0 && (w = send(rs->rs_fd, p, n,
	    MSG_DONTWAIT | MSG_NOSIGNAL)) > 0) {
		p += w;
		n -= w;
	}
	if (n > 0) {
		evbuffer_add(rs->rs_out, p, n);
		relay_sock_write(rs, 1);
	}
}

/*
 * Write what waits for rs: 0, or -1 when the socket failed.  Its write
 * event stays on while something waits.
 */
static int
relay_flush(struct relay_sock *rs)
{
	if (relay_pending(rs) > 0 && evbuffer_write(rs->rs_out,
	    rs->rs_fd) == -1 && errno != EAGAIN && errno != EINTR)
		return (-1);
	relay_sock_write(rs, relay_pending(rs) > 0);
	return (0);
}

/*
 * Callbacks may end the relay (a refusal, a socket's failure) while
 * they still hold it: relay_end() closes it at once, and the last
 * callback to leave frees it.  On leaving, each side is read only as
 * far as the other takes: the client while the fence has less than
 * RELAY_HIGH waiting for it and the relay is in a state to read it, the
 * fence while the client has less than RELAY_HIGH waiting.
 */
static void
relay_enter(struct relay *rl)
{
	rl->rl_busy++;
}

static void
relay_free(struct relay *rl)
{
	if (rl->rl_c.rs_out != NULL)
		evbuffer_free(rl->rl_c.rs_out);
	if (rl->rl_f.rs_out != NULL)
		evbuffer_free(rl->rl_f.rs_out);
	if (rl->rl_in != NULL)
		evbuffer_free(rl->rl_in);
	if (rl->rl_refusal != NULL)
		evbuffer_free(rl->rl_refusal);
	free(rl);
}

static void
relay_leave(struct relay *rl)
{
	int	 cr;

	if (--rl->rl_busy > 0)
		return;
	if (rl->rl_ended) {
		relay_free(rl);
		return;
	}
	cr = !rl->rl_client_eof && !rl->rl_opening &&
	    (rl->rl_state == RL_HEAD || rl->rl_state == RL_BODY_CL ||
	    rl->rl_state == RL_BODY_CHUNKED || rl->rl_state == RL_TUNNEL) &&
	    evbuffer_get_length(rl->rl_in) < RELAY_HIGH &&
	    relay_pending(&rl->rl_f) < RELAY_HIGH;
	relay_sock_read(&rl->rl_c, cr);
	relay_sock_read(&rl->rl_f, !rl->rl_fence_eof &&
	    rl->rl_state != RL_CLOSING && relay_pending(&rl->rl_c) < RELAY_HIGH);
}

static void
relay_end(struct relay *rl)
{
	if (rl->rl_ended)
		return;
	rl->rl_ended = 1;
	if (rl->rl_opening)
		inflight_orphan(rl);
	rl->rl_opening = 0;
	relay_sock_close(&rl->rl_f);
	if (rl->rl_tunnel)
		svc_tunnel_close(rl->rl_tunnel_id, rl);
	rl->rl_tunnel = 0;
	relay_sock_close(&rl->rl_c);
	evtimer_del(&rl->rl_timer);
	event_del(&rl->rl_kick);
	http_taken_end(rl->rl_ht);
	rl->rl_ht = NULL;
	if (rl->rl_busy == 0)
		relay_free(rl);
}

static void
relay_dropped(void *arg)
{
	relay_end(arg);
}

/*
 * A head begun and not whole within `http timeout' (as for the API's
 * requests), or a refusal whose fence did not end its answers in that
 * time: the connection ends.
 */
static void
relay_timeout(evutil_socket_t fd, short ev, void *arg)
{
	struct relay	*rl = arg;

	log_debug("relay: %s", rl->rl_state == RL_HEAD ? "a request's head "
	    "did not arrive whole in time" : "the fence did not end its "
	    "answers in time");
	relay_end(rl);
}

/* Nothing more is read; what is written goes out, then the end. */
static void
relay_close_after(struct relay *rl)
{
	rl->rl_state = RL_CLOSING;
	relay_sock_read(&rl->rl_c, 0);
	relay_sock_read(&rl->rl_f, 0);
	if (relay_pending(&rl->rl_c) == 0)
		relay_end(rl);
	else
		relay_sock_write(&rl->rl_c, 1);
}

/* No more for the fence: its writing side is shut once all went. */
static void
relay_fence_shut(struct relay *rl)
{
	if (!rl->rl_shut_wanted || rl->rl_fence_shut || rl->rl_f.rs_fd == -1 ||
	    relay_pending(&rl->rl_f) > 0)
		return;
	rl->rl_fence_shut = 1;
	shutdown(rl->rl_f.rs_fd, SHUT_WR);
}

/*
 * Refuse the request being read.  Before anything was relayed the
 * answer goes at once; after, it follows the fence's answers.
 */
static void
relay_refuse(struct relay *rl, int status, const char *code,
    const char *msg)
{
	struct timeval	 tv = { broker_self.ps_conf.c_http_timeout, 0 };
	struct evbuffer	*out;

	log_debug("relay: %d %s: %s", status, code, msg);
	if (rl->rl_f.rs_fd == -1 || rl->rl_fence_eof) {
		http_taken_error(rl->rl_c.rs_out, status, code, msg);
		relay_close_after(rl);
		return;
	}
	if ((out = evbuffer_new()) == NULL) {
		relay_end(rl);
		return;
	}
	http_taken_error(out, status, code, msg);
	rl->rl_refusal = out;
	rl->rl_state = RL_REFUSING;
	rl->rl_shut_wanted = 1;
	relay_fence_shut(rl);
	evtimer_add(&rl->rl_timer, &tv);
}

/* The fence's answers ended: ours follows, if one waits, then the end. */
static void
relay_fence_ended(struct relay *rl)
{
	rl->rl_fence_eof = 1;
	relay_sock_read(&rl->rl_f, 0);
	if (rl->rl_refusal != NULL) {
		evbuffer_add_buffer(rl->rl_c.rs_out, rl->rl_refusal);
		evtimer_del(&rl->rl_timer);
	}
	relay_close_after(rl);
}

/* A tunnel error as a status: a port nobody listens on is 502. */
static int
relay_tunnel_status(const char *code)
{
	if (strcmp(code, "port-closed") == 0)
		return (502);
	if (strcmp(code, "port-timeout") == 0)
		return (504);
	if (strcmp(code, "too-many-tunnels") == 0)
		return (429);
	return (http_api_status(code));
}

static void	relay_fence_writable(evutil_socket_t, short, void *);

static void
relay_opened(void *arg, const struct svc_answer *a)
{
	struct relay	*rl = arg;
	char		 msg[MSG_ERROR_TEXT_MAX + 64];

	relay_enter(rl);
	rl->rl_opening = 0;
	if (a->a_what == SVC_ERROR) {
		if (strcmp(a->a_code, "port-closed") == 0)
			snprintf(msg, sizeof(msg), "nothing listens on port "
			    "%u in environment %s", rl->rl_to.rt_port,
			    rl->rl_to.rt_key);
		else
			strlcpy(msg, a->a_message, sizeof(msg));
		relay_refuse(rl, relay_tunnel_status(a->a_code), a->a_code,
		    msg);
	} else if (a->a_what != SVC_TUNNEL)
		relay_refuse(rl, 500, "internal", "unexpected answer");
	else {
		rl->rl_tunnel = 1;
		rl->rl_tunnel_id = a->a_id;
		if (relay_sock_open(&rl->rl_f, a->a_fd, rl,
		    relay_fence_readable, relay_fence_writable) == -1) {
			close(a->a_fd);
			relay_refuse(rl, 503, "internal", "no memory for the "
			    "relay");
		} else {
			rl->rl_state = RL_HEAD;
			/* Outside the service's callback, which the relay
			 * may end. */
			event_active(&rl->rl_kick, EV_TIMEOUT, 1);
		}
	}
	relay_leave(rl);
}

static void
relay_kick(evutil_socket_t fd, short ev, void *arg)
{
	struct relay	*rl = arg;

	relay_enter(rl);
	relay_client_bytes(rl);
	relay_leave(rl);
}

static void
relay_open(struct relay *rl)
{
	struct msg_tunnel_open to;
	struct svc_who	 w;

	memset(&w, 0, sizeof(w));
	w.w_uid = rl->rl_to.rt_uid;
	w.w_noun = "environment";
	w.w_token = rl->rl_to.rt_token[0] != '\0' ? rl->rl_to.rt_token : NULL;
	memset(&to, 0, sizeof(to));
	strlcpy(to.to_key, rl->rl_to.rt_key, sizeof(to.to_key));
	to.to_owner = rl->rl_to.rt_owner;
	to.to_kind = MSG_TUNNEL_PORT;
	to.to_port = rl->rl_to.rt_port;
	rl->rl_state = RL_OPENING;
	rl->rl_opening = 1;
	relay_sock_read(&rl->rl_c, 0);
	svc_tunnel_open(&w, rl->rl_to.rt_owner, rl->rl_to.rt_key, &to,
	    relay_opened, rl);
}

/*
 * The first request names the fence and port of the connection; every
 * later one must name the same, by the same form.
 */
static int
relay_same(struct relay *rl, const struct relay_target *rt)
{
	const struct relay_target *f = &rl->rl_to;

	return (f->rt_form == rt->rt_form && f->rt_owner == rt->rt_owner &&
	    f->rt_uid == rt->rt_uid && f->rt_port == rt->rt_port &&
	    strcmp(f->rt_key, rt->rt_key) == 0 &&
	    strcmp(f->rt_label, rt->rt_label) == 0);
}

/* The head of the request's body: where it ends, by its framing. */
static void
relay_body_start(struct relay *rl, const struct http_head *h)
{
	if (h->h_upgrade_asked)
		rl->rl_state = RL_TUNNEL;
	else if (h->h_chunked) {
		memset(&rl->rl_chunked, 0, sizeof(rl->rl_chunked));
		rl->rl_state = RL_BODY_CHUNKED;
	} else if (h->h_cl_set && h->h_cl > 0) {
		rl->rl_left = h->h_cl;
		rl->rl_state = RL_BODY_CL;
	} else
		rl->rl_state = RL_HEAD;
}

/*
 * A request's head relayed, its bytes (hlen of them, at raw) in the
 * client's input.  0, or -1 when the relay ended or waits.
 */
static int
relay_head_send(struct relay *rl, struct http_head *h, const char *raw,
    size_t hlen, const struct relay_target *rt)
{
	char		*out = relay_head_out;
	size_t		 n;

	if ((n = http_head_rewrite(h, raw, rt->rt_form == RELAY_PATH ?
	    rt->rt_target : NULL, out, RELAY_HEAD_OUT)) == 0) {
		relay_refuse(rl, 431, "headers-too-large", "the head is too "
		    "large to relay");
		return (-1);
	}
	relay_put(&rl->rl_f, out, n);
	explicit_bzero(out, n);
	evbuffer_drain(rl->rl_in, hlen);
	relay_body_start(rl, h);
	return (0);
}

/*
 * The next request's head, if it is whole.  0 when it was relayed (or
 * answered) and the relay goes on; -1 when it waits or ended.
 */
static int
relay_head(struct relay *rl)
{
	struct evbuffer	*in = rl->rl_in;
	size_t		 len = evbuffer_get_length(in), max;
	struct relay_refusal rr;
	struct relay_target rt;
	struct http_head *h;
	struct timeval	 tv = { broker_self.ps_conf.c_http_timeout, 0 };
	ssize_t		 end;
	char		*raw;
	int		 r = -1;

	max = broker_self.ps_conf.c_http_headers_max;
	if (len == 0)
		return (-1);
	raw = (char *)evbuffer_pullup(in, len < max ? len : max);
	if ((end = http_head_end(raw, len, max)) == 0) {
		/* Begun: it must be whole within `http timeout'. */
		if (!evtimer_pending(&rl->rl_timer, NULL))
			evtimer_add(&rl->rl_timer, &tv);
		return (-1);
	}
	evtimer_del(&rl->rl_timer);
	if (end == -1) {
		relay_refuse(rl, 431, "headers-too-large", "the request line "
		    "and headers are too long");
		return (-1);
	}
	h = &relay_head_in;
	if (http_head_parse(h, raw, end, UINT64_MAX) == -1)
		relay_refuse(rl, h->h_status, h->h_status == 431 ?
		    "headers-too-large" : "bad-request", h->h_why);
	else if (relay_authorise(h, &rt, &rr) == -1)
		relay_refuse(rl, rr.rr_status, rr.rr_code, rr.rr_msg);
	else if (rl->rl_to.rt_form != 0 && !relay_same(rl, &rt))
		relay_refuse(rl, 400, "bad-request", "one connection reaches "
		    "one port of one environment");
	else if (!rl->rl_claimed && http_taken_claim(rl->rl_ht,
	    rt.rt_uid) == -1)
		relay_refuse(rl, 429, "too-many-connections", "too many "
		    "connections of this user");
	else if (rt.rt_status == 303 && rl->rl_f.rs_fd == -1) {
		rl->rl_claimed = 1;
		evbuffer_drain(in, end);
		relay_answer_ticket(rl->rl_c.rs_out, &rt);
		relay_sock_write(&rl->rl_c, 1);
		r = 0;
	} else if (rt.rt_status != 0)
		relay_refuse(rl, 400, "bad-request", "a ticket is taken on a "
		    "connection of its own");
	else {
		rl->rl_claimed = 1;
		if (rl->rl_to.rt_form == 0)
			rl->rl_to = rt;
		if (rl->rl_f.rs_fd == -1)
			relay_open(rl);
		else
			r = relay_head_send(rl, h, raw, end, &rt);
	}
	explicit_bzero(h, sizeof(*h));
	return (r);
}

/* Bytes of a body, or of the raw tunnel, to the fence: -1 if it ended. */
static int
relay_pass(struct relay *rl)
{
	struct evbuffer	*in = rl->rl_in;
	struct evbuffer_iovec v;
	size_t		 n = evbuffer_get_length(in);
	ssize_t		 k;

	switch (rl->rl_state) {
	case RL_BODY_CL:
		if (n > rl->rl_left)
			n = rl->rl_left;
		rl->rl_left -= n;
		if (rl->rl_left == 0)
			rl->rl_state = RL_HEAD;
		break;
	case RL_BODY_CHUNKED:
		if (evbuffer_peek(in, -1, NULL, &v, 1) < 1)
			return (0);
		if ((k = http_chunked_feed(&rl->rl_chunked, v.iov_base,
		    v.iov_len, broker_self.ps_conf.c_http_headers_max)) == -1) {
			/* Half a body went: the fence cannot be told why. */
			log_debug("relay: a chunked body that is not one");
			relay_end(rl);
			return (-1);
		}
		n = k;
		if (rl->rl_chunked.hc_done)
			rl->rl_state = RL_HEAD;
		break;
	default:
		break;
	}
	relay_move(in, &rl->rl_f, n);
	return (0);
}

/*
 * The client's bytes not yet handled: heads, bodies and a tunnel's
 * bytes, as far as the fence takes them.
 */
static void
relay_client_bytes(struct relay *rl)
{
	if (rl->rl_f.rs_fd == -1 && rl->rl_state != RL_HEAD)
		return;
	while (!rl->rl_ended && evbuffer_get_length(rl->rl_in) > 0) {
		/* Read again when the fence took some. */
		if (relay_pending(&rl->rl_f) >= RELAY_HIGH)
			return;
		if (rl->rl_state == RL_HEAD) {
			if (relay_head(rl) == -1)
				return;
		} else if (rl->rl_state == RL_BODY_CL ||
		    rl->rl_state == RL_BODY_CHUNKED ||
		    rl->rl_state == RL_TUNNEL) {
			if (relay_pass(rl) == -1)
				return;
		} else
			return;
	}
}

/* The end of the client's requests: the fence's answers may still come. */
static void
relay_client_done(struct relay *rl)
{
	rl->rl_client_eof = 1;
	relay_sock_read(&rl->rl_c, 0);
	if (rl->rl_f.rs_fd != -1 && rl->rl_state != RL_CLOSING) {
		rl->rl_shut_wanted = 1;
		relay_fence_shut(rl);
	} else
		relay_end(rl);
}

static void
relay_client_readable(evutil_socket_t fd, short ev, void *arg)
{
	struct relay	*rl = arg;
	struct evbuffer_iovec v;
	size_t		 room;
	ssize_t		 n;

	relay_enter(rl);
	room = RELAY_HIGH - evbuffer_get_length(rl->rl_in);
	if (room > RELAY_READ)
		room = RELAY_READ;
	if (evbuffer_get_length(rl->rl_in) >= RELAY_HIGH)
		relay_client_bytes(rl);		/* full: read it later */
	else if (evbuffer_reserve_space(rl->rl_in, room, &v, 1) != 1) {
		log_warnx("%s: evbuffer_reserve_space", __func__);
		relay_end(rl);
	} else if ((n = recv(fd, v.iov_base, room, MSG_DONTWAIT)) > 0) {
		v.iov_len = n;
		evbuffer_commit_space(rl->rl_in, &v, 1);
		relay_client_bytes(rl);
	} else if (n == 0)
		relay_client_done(rl);
	else if (errno != EAGAIN && errno != EINTR)
		relay_end(rl);
	relay_leave(rl);
}

/* What waited for the client went: the fence is read again. */
static void
relay_client_writable(evutil_socket_t fd, short ev, void *arg)
{
	struct relay	*rl = arg;

	relay_enter(rl);
	if (relay_flush(&rl->rl_c) == -1)
		relay_end(rl);
	else if (rl->rl_state == RL_CLOSING && relay_pending(&rl->rl_c) == 0)
		relay_end(rl);
	relay_leave(rl);
}

/* What the fence answers, on to the client unread. */
static void
relay_fence_readable(evutil_socket_t fd, short ev, void *arg)
{
	struct relay	*rl = arg;
	struct evbuffer_iovec v;
	ssize_t		 n = -1;

	relay_enter(rl);
	if (relay_pending(&rl->rl_c) > 0) {
		/* Behind what waits: straight into the client's queue. */
		if (evbuffer_reserve_space(rl->rl_c.rs_out, RELAY_READ, &v,
		    1) != 1) {
			log_warnx("%s: evbuffer_reserve_space", __func__);
			relay_end(rl);
		} else if ((n = recv(fd, v.iov_base, RELAY_READ,
		    MSG_DONTWAIT)) > 0) {
			v.iov_len = n;
			evbuffer_commit_space(rl->rl_c.rs_out, &v, 1);
		}
	} else if ((n = recv(fd, relay_buf, sizeof(relay_buf),
	    MSG_DONTWAIT)) > 0)
		relay_put(&rl->rl_c, relay_buf, n);
	if (rl->rl_ended)
		;
	else if (n == 0)
		relay_fence_ended(rl);
	else if (n == -1 && errno != EAGAIN && errno != EINTR) {
		log_debug("relay: the fence's side: %s", strerror(errno));
		relay_fence_ended(rl);
	}
	relay_leave(rl);
}

/* What waited for the fence went: the client's bytes go on. */
static void
relay_fence_writable(evutil_socket_t fd, short ev, void *arg)
{
	struct relay	*rl = arg;

	relay_enter(rl);
	if (relay_flush(&rl->rl_f) == -1) {
		log_debug("relay: the fence's side: %s", strerror(errno));
		relay_fence_ended(rl);
	} else if (relay_pending(&rl->rl_f) == 0 && rl->rl_shut_wanted)
		relay_fence_shut(rl);
	else if (rl->rl_state == RL_HEAD || rl->rl_state == RL_BODY_CL ||
	    rl->rl_state == RL_BODY_CHUNKED || rl->rl_state == RL_TUNNEL)
		relay_client_bytes(rl);
	relay_leave(rl);
}

/* A connection evhttp let go: its head is read again from its bytes. */
void
relay_take(struct http_taken *ht)
{
	struct relay	*rl;

	if ((rl = calloc(1, sizeof(*rl))) == NULL) {
		log_warn("%s: calloc", __func__);
		http_taken_end(ht);
		return;
	}
	rl->rl_ht = ht;
	rl->rl_state = RL_HEAD;
	rl->rl_c.rs_fd = rl->rl_f.rs_fd = -1;
	evtimer_assign(&rl->rl_timer, broker_self.ps_evbase, relay_timeout,
	    rl);
	event_assign(&rl->rl_kick, broker_self.ps_evbase, -1, 0, relay_kick,
	    rl);
	if ((rl->rl_in = evbuffer_new()) == NULL ||
	    relay_sock_open(&rl->rl_c, ht->ht_fd, rl, relay_client_readable,
	    relay_client_writable) == -1 ||
	    evbuffer_add(rl->rl_in, ht->ht_raw, ht->ht_head->h_len) == -1 ||
	    evbuffer_add_buffer(rl->rl_in, ht->ht_in) == -1) {
		log_warnx("%s: evbuffer", __func__);
		rl->rl_c.rs_fd = -1;	/* still the handler's */
		http_taken_end(ht);
		relay_free(rl);
		return;
	}
	ht->ht_fd = -1;
	ht->ht_arg = rl;
	ht->ht_dropped = relay_dropped;
	relay_enter(rl);
	relay_client_bytes(rl);
	relay_leave(rl);
}
