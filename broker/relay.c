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
 * Each direction holds at most RELAY_HIGH bytes not yet written: over
 * it, the side that fills it is not read until the other has taken half
 * (bufferevent watermarks).  A refusal after requests were relayed
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
#include <event2/bufferevent.h>
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

struct relay {
	struct http_taken	*rl_ht;
	struct bufferevent	*rl_client;
	struct bufferevent	*rl_fence;
	enum relay_state	 rl_state;
	struct relay_target	 rl_to;		/* the first request's */
	int			 rl_claimed;
	int			 rl_opening;	/* svc_tunnel_open pending */
	int			 rl_tunnel;	/* rl_tunnel_id open */
	uint32_t		 rl_tunnel_id;
	uint64_t		 rl_left;
	struct http_chunked	 rl_chunked;
	int			 rl_fence_eof;
	int			 rl_shut_wanted;	/* no more to the fence */
	int			 rl_fence_shut;
	struct evbuffer		*rl_refusal;	/* RL_REFUSING: ours after */
	struct event		 rl_timer;
	struct event		 rl_kick;	/* the client read again */
};

static void	relay_client_read(struct bufferevent *, void *);
static void	relay_client_write(struct bufferevent *, void *);
static void	relay_client_event(struct bufferevent *, short, void *);
static void	relay_fence_read(struct bufferevent *, void *);
static void	relay_fence_write(struct bufferevent *, void *);
static void	relay_fence_event(struct bufferevent *, short, void *);
static void	relay_end(struct relay *);

static void
relay_end(struct relay *rl)
{
	if (rl->rl_opening)
		inflight_orphan(rl);
	if (rl->rl_fence != NULL)
		bufferevent_free(rl->rl_fence);
	if (rl->rl_tunnel)
		svc_tunnel_close(rl->rl_tunnel_id, rl);
	if (rl->rl_client != NULL)
		bufferevent_free(rl->rl_client);
	if (rl->rl_refusal != NULL)
		evbuffer_free(rl->rl_refusal);
	evtimer_del(&rl->rl_timer);
	event_del(&rl->rl_kick);
	http_taken_end(rl->rl_ht);
	free(rl);
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
	bufferevent_disable(rl->rl_client, EV_READ);
	if (rl->rl_fence != NULL)
		bufferevent_disable(rl->rl_fence, EV_READ);
	bufferevent_setwatermark(rl->rl_client, EV_WRITE, 0, 0);
	if (evbuffer_get_length(bufferevent_get_output(rl->rl_client)) == 0)
		relay_end(rl);
	else
		bufferevent_enable(rl->rl_client, EV_WRITE);
}

/*
 * Bytes for dst's socket: written at once when nothing of dst waits
 * before them and its writing is on, what the socket does not take left
 * in dst's output for its bufferevent.  Left to the bufferevent alone,
 * every answer cost a write event added and removed (two epoll_ctl) and
 * a pass of the loop; most answers fit in the socket at once
 * (docs/bench.md, "port").  relay_move() moves at most n bytes of src,
 * relay_put() n bytes of memory.
 */
static int
relay_direct(struct bufferevent *dst)
{
	return (evbuffer_get_length(bufferevent_get_output(dst)) == 0 &&
	    (bufferevent_get_enabled(dst) & EV_WRITE) != 0);
}

static void
relay_move(struct evbuffer *src, struct bufferevent *dst, size_t n)
{
	int	 w;

	if (n > 0 && relay_direct(dst) && (w = evbuffer_write_atmost(src,
	    bufferevent_getfd(dst), n)) > 0)
		n -= w;
	if (n > 0)
		evbuffer_remove_buffer(src, bufferevent_get_output(dst), n);
}

static void
relay_put(struct bufferevent *dst, const char *p, size_t n)
{
	ssize_t	 w;

	if (relay_direct(dst) && (w = write(bufferevent_getfd(dst), p, n)) > 0) {
		p += w;
		n -= w;
	}
	if (n > 0)
		evbuffer_add(bufferevent_get_output(dst), p, n);
}

/* No more for the fence: its writing side is shut once all went. */
static void
relay_fence_shut(struct relay *rl)
{
	if (!rl->rl_shut_wanted || rl->rl_fence_shut || rl->rl_fence == NULL ||
	    evbuffer_get_length(bufferevent_get_output(rl->rl_fence)) > 0)
		return;
	rl->rl_fence_shut = 1;
	shutdown(bufferevent_getfd(rl->rl_fence), SHUT_WR);
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
	if (rl->rl_fence == NULL || rl->rl_fence_eof) {
		http_taken_error(bufferevent_get_output(rl->rl_client),
		    status, code, msg);
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
	bufferevent_disable(rl->rl_client, EV_READ);
	rl->rl_shut_wanted = 1;
	relay_fence_shut(rl);
	evtimer_add(&rl->rl_timer, &tv);
}

/* The fence's answers ended: ours follows, if one waits, then the end. */
static void
relay_fence_ended(struct relay *rl)
{
	struct evbuffer	*out = bufferevent_get_output(rl->rl_client);

	rl->rl_fence_eof = 1;
	relay_fence_read(rl->rl_fence, rl);
	if (rl->rl_refusal != NULL) {
		evbuffer_add_buffer(out, rl->rl_refusal);
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

static void
relay_opened(void *arg, const struct svc_answer *a)
{
	struct relay	*rl = arg;
	char		 msg[MSG_ERROR_TEXT_MAX + 64];

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
		return;
	}
	if (a->a_what != SVC_TUNNEL) {
		relay_refuse(rl, 500, "internal", "unexpected answer");
		return;
	}
	rl->rl_tunnel = 1;
	rl->rl_tunnel_id = a->a_id;
	if ((rl->rl_fence = bufferevent_socket_new(broker_self.ps_evbase,
	    a->a_fd, BEV_OPT_CLOSE_ON_FREE)) == NULL) {
		close(a->a_fd);
		relay_refuse(rl, 503, "internal", "no memory for the relay");
		return;
	}
	bufferevent_setcb(rl->rl_fence, relay_fence_read, relay_fence_write,
	    relay_fence_event, rl);
	bufferevent_setwatermark(rl->rl_fence, EV_READ, 0, RELAY_HIGH);
	bufferevent_setwatermark(rl->rl_fence, EV_WRITE, RELAY_HIGH / 2, 0);
	bufferevent_enable(rl->rl_fence, EV_READ | EV_WRITE);
	rl->rl_state = RL_HEAD;
	bufferevent_enable(rl->rl_client, EV_READ);
	/* Outside the service's callback, which the relay may end. */
	event_active(&rl->rl_kick, EV_TIMEOUT, 1);
}

static void
relay_kick(evutil_socket_t fd, short ev, void *arg)
{
	struct relay	*rl = arg;

	relay_client_read(rl->rl_client, rl);
}

static void
relay_open(struct relay *rl)
{
	struct msg_tunnel_open to;
	struct svc_who	 w;

	memset(&w, 0, sizeof(w));
	w.w_uid = rl->rl_to.rt_uid;
	w.w_noun = "environment";
	memset(&to, 0, sizeof(to));
	strlcpy(to.to_key, rl->rl_to.rt_key, sizeof(to.to_key));
	to.to_owner = rl->rl_to.rt_owner;
	to.to_kind = MSG_TUNNEL_PORT;
	to.to_port = rl->rl_to.rt_port;
	rl->rl_state = RL_OPENING;
	rl->rl_opening = 1;
	bufferevent_disable(rl->rl_client, EV_READ);
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
	struct evbuffer	*in = bufferevent_get_input(rl->rl_client);
	char		*out;
	size_t		 n;

	if ((out = malloc(RELAY_HEAD_OUT)) == NULL ||
	    (n = http_head_rewrite(h, raw, rt->rt_form == RELAY_PATH ?
	    rt->rt_target : NULL, out, RELAY_HEAD_OUT)) == 0) {
		free(out);
		relay_refuse(rl, 431, "headers-too-large", "the head is too "
		    "large to relay");
		return (-1);
	}
	relay_put(rl->rl_fence, out, n);
	explicit_bzero(out, n);
	free(out);
	evbuffer_drain(in, hlen);
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
	struct evbuffer	*in = bufferevent_get_input(rl->rl_client);
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
	if ((h = malloc(sizeof(*h))) == NULL) {
		relay_end(rl);
		return (-1);
	}
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
	else if (rt.rt_status == 303 && rl->rl_fence == NULL) {
		rl->rl_claimed = 1;
		evbuffer_drain(in, end);
		relay_answer_ticket(bufferevent_get_output(rl->rl_client), &rt);
		r = 0;
	} else if (rt.rt_status != 0)
		relay_refuse(rl, 400, "bad-request", "a ticket is taken on a "
		    "connection of its own");
	else {
		rl->rl_claimed = 1;
		if (rl->rl_to.rt_form == 0)
			rl->rl_to = rt;
		if (rl->rl_fence == NULL)
			relay_open(rl);
		else
			r = relay_head_send(rl, h, raw, end, &rt);
	}
	explicit_bzero(h, sizeof(*h));
	free(h);
	return (r);
}

/* Bytes of a body, or of the raw tunnel, to the fence: -1 if it ended. */
static int
relay_pass(struct relay *rl)
{
	struct evbuffer	*in = bufferevent_get_input(rl->rl_client);
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
	relay_move(in, rl->rl_fence, n);
	return (0);
}

static void
relay_client_read(struct bufferevent *bev, void *arg)
{
	struct relay	*rl = arg;
	struct evbuffer	*in = bufferevent_get_input(bev);

	if (rl->rl_fence == NULL && rl->rl_state != RL_HEAD)
		return;
	while (evbuffer_get_length(in) > 0) {
		if (rl->rl_fence != NULL && evbuffer_get_length(
		    bufferevent_get_output(rl->rl_fence)) >= RELAY_HIGH) {
			/* Read again when the fence took half. */
			bufferevent_disable(bev, EV_READ);
			return;
		}
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

/* The client took half of what waited for it: read the fence again. */
static void
relay_client_write(struct bufferevent *bev, void *arg)
{
	struct relay	*rl = arg;

	if (rl->rl_state == RL_CLOSING) {
		if (evbuffer_get_length(bufferevent_get_output(bev)) == 0)
			relay_end(rl);
		return;
	}
	if (rl->rl_fence != NULL && !rl->rl_fence_eof) {
		bufferevent_enable(rl->rl_fence, EV_READ);
		relay_fence_read(rl->rl_fence, rl);
	}
}

static void
relay_client_event(struct bufferevent *bev, short what, void *arg)
{
	struct relay	*rl = arg;

	if ((what & BEV_EVENT_EOF) && !(what & BEV_EVENT_ERROR) &&
	    rl->rl_fence != NULL && rl->rl_state != RL_CLOSING) {
		/* No more requests: the fence's answers may still come. */
		rl->rl_shut_wanted = 1;
		relay_fence_shut(rl);
		return;
	}
	relay_end(rl);
}

static void
relay_fence_read(struct bufferevent *bev, void *arg)
{
	struct relay	*rl = arg;
	struct evbuffer	*out = bufferevent_get_output(rl->rl_client);

	if (rl->rl_state == RL_CLOSING)
		return;
	relay_move(bufferevent_get_input(bev), rl->rl_client,
	    evbuffer_get_length(bufferevent_get_input(bev)));
	if (evbuffer_get_length(out) >= RELAY_HIGH)
		bufferevent_disable(bev, EV_READ);
}

/* The fence took half of what waited for it: read the client again. */
static void
relay_fence_write(struct bufferevent *bev, void *arg)
{
	struct relay	*rl = arg;

	if (bev == NULL)
		return;
	if (rl->rl_shut_wanted) {
		relay_fence_shut(rl);
		return;
	}
	if (rl->rl_state == RL_HEAD || rl->rl_state == RL_BODY_CL ||
	    rl->rl_state == RL_BODY_CHUNKED || rl->rl_state == RL_TUNNEL) {
		bufferevent_enable(rl->rl_client, EV_READ);
		relay_client_read(rl->rl_client, rl);
	}
}

static void
relay_fence_event(struct bufferevent *bev, short what, void *arg)
{
	struct relay	*rl = arg;

	if (what & BEV_EVENT_ERROR)
		log_debug("relay: the fence's side: %s", strerror(errno));
	relay_fence_ended(rl);
}

/* A connection evhttp let go: its head is read again from its bytes. */
void
relay_take(struct http_taken *ht)
{
	struct relay	*rl;
	struct evbuffer	*in;
	int		 r;

	if ((rl = calloc(1, sizeof(*rl))) == NULL) {
		log_warn("%s: calloc", __func__);
		http_taken_end(ht);
		return;
	}
	rl->rl_ht = ht;
	rl->rl_state = RL_HEAD;
	evtimer_assign(&rl->rl_timer, broker_self.ps_evbase, relay_timeout,
	    rl);
	event_assign(&rl->rl_kick, broker_self.ps_evbase, -1, 0, relay_kick,
	    rl);
	if ((rl->rl_client = bufferevent_socket_new(broker_self.ps_evbase,
	    ht->ht_fd, BEV_OPT_CLOSE_ON_FREE)) == NULL) {
		log_warnx("%s: bufferevent_socket_new", __func__);
		http_taken_end(ht);
		free(rl);
		return;
	}
	ht->ht_fd = -1;
	ht->ht_arg = rl;
	ht->ht_dropped = relay_dropped;
	bufferevent_setcb(rl->rl_client, relay_client_read,
	    relay_client_write, relay_client_event, rl);
	bufferevent_setwatermark(rl->rl_client, EV_READ, 0, RELAY_HIGH);
	bufferevent_setwatermark(rl->rl_client, EV_WRITE, RELAY_HIGH / 2, 0);
	bufferevent_enable(rl->rl_client, EV_READ | EV_WRITE);
	/* A socket bufferevent's input grows only as it reads: thawed. */
	in = bufferevent_get_input(rl->rl_client);
	evbuffer_unfreeze(in, 0);
	r = evbuffer_add(in, ht->ht_raw, ht->ht_head->h_len) == -1 ||
	    evbuffer_add_buffer(in, ht->ht_in) == -1;
	evbuffer_freeze(in, 0);
	if (r) {
		log_warnx("%s: evbuffer", __func__);
		relay_end(rl);
		return;
	}
	relay_client_read(rl->rl_client, rl);
}
