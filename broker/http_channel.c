/*
 * /api/channel: one WebSocket per page (docs/interactive.md,
 * "/api/channel"), and a terminal's own WebSocket,
 * .../terminals/<id>/attach, which is the same engine with one stream.
 *
 * The connection is taken from evhttp once its head is whole
 * (http_takeover.c).  The opening handshake must name an allowed Host
 * and, on the channel, an Origin that is listed or the API's own (a
 * browser always sends one; the same rules as every request,
 * http_cors.c); then ws.c speaks the frames.  The channel's first
 * message must be {"op":"auth","token":T} within CHAN_AUTH_SEC; after
 * it, text messages are JSON objects with an "op" and a client-chosen
 * "stream" number, and binary messages are [4-byte stream, big-endian]
 * [bytes] of a terminal or a process's output.  Each stream is a maker
 * of the fence service's requests (its answers come to the stream;
 * inflight_orphan() of the stream ends them all when it closes).
 *
 * Flow control: every stream may have CHAN_WINDOW bytes of its output
 * sent and not acknowledged ("ack"); past that, its source is not read
 * (a tunnel's descriptor; an exec's credit is not given back to the
 * service), so the fence's program blocks in its write and nothing
 * piles up in the broker.  The connection's own output is bounded by
 * ws.c (WS_OUT_HIGH): while it is full no stream reads its source,
 * and a page that reads nothing at all is closed after WS_STALL_SEC.
 * Bytes from the page to a tunnel (a terminal's keys) wait in at most
 * CHAN_TUNNEL_OUT per stream; past that the channel stops reading the
 * page's frames until they are written.  So one channel holds at most
 * its streams' windows, and a stalled page slows its own streams only.
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/tree.h>

#include <errno.h>
#include <limits.h>
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
#include "names.h"
#include "proc.h"
#include "broker.h"
#include "http.h"
#include "http_api.h"
#include "http_takeover.h"
#include "http_channel.h"
#include "http_chan.h"
#include "ticket.h"
#include "ws.h"

struct chan_list	 chan_all = TAILQ_HEAD_INITIALIZER(chan_all);

static void	chan_message(void *, struct ws *, int, const uint8_t *,
		    size_t);
static void	chan_drained(void *, struct ws *);
static void	chan_closed(void *, struct ws *, unsigned int);
static void	chan_attach_text(struct channel *, const uint8_t *, size_t);

static const struct ws_ops chan_ws_ops = {
	chan_message, chan_drained, chan_closed
};

static void
chan_dropped(void *arg)
{
	struct channel	*ch = arg;
	struct http_taken *ht = ch->ch_ht;

	/* The daemon stops: no close frame, the connection goes. */
	ch->ch_ht = NULL;
	chan_closed(ch, ch->ch_ws, WS_CLOSE_GOING_AWAY);
	http_taken_end(ht);
}

static void
chan_auth_late(evutil_socket_t fd, short ev, void *arg)
{
	struct channel	*ch = arg;

	if (!ch->ch_authed)
		ws_close(ch->ch_ws, WS_CLOSE_POLICY, "no auth message within "
		    "10 s");
}

/* A channel on ht, its handshake checked: 101, then frames. */
struct channel *
chan_open(struct http_taken *ht, enum chan_mode mode)
{
	struct channel	*ch;
	const void	*pre = NULL;
	size_t		 prelen = 0;

	if ((ch = calloc(1, sizeof(*ch))) == NULL) {
		log_warn("%s: calloc", __func__);
		http_taken_end(ht);
		return (NULL);
	}
	ch->ch_mode = mode;
	ch->ch_ht = ht;
	TAILQ_INIT(&ch->ch_streams);
	if (ht->ht_in != NULL && (prelen = evbuffer_get_length(ht->ht_in)) > 0)
		pre = evbuffer_pullup(ht->ht_in, -1);
	ch->ch_ws = ws_new(ht->ht_fd, ht->ht_head->h_wskey, pre, prelen,
	    CHAN_MSG_MAX, &chan_ws_ops, ch);
	ht->ht_fd = -1;		/* ws.c's, closed either way */
	if (ch->ch_ws == NULL) {
		free(ch);
		http_taken_end(ht);
		return (NULL);
	}
	if (ht->ht_in != NULL) {
		evbuffer_free(ht->ht_in);
		ht->ht_in = NULL;
	}
	ht->ht_arg = ch;
	ht->ht_dropped = chan_dropped;
	evtimer_assign(&ch->ch_auth_ev, broker_self.ps_evbase, chan_auth_late,
	    ch);
	event_assign(&ch->ch_flush_ev, broker_self.ps_evbase, -1, 0,
	    chan_flush, ch);
	TAILQ_INSERT_TAIL(&chan_all, ch, ch_entry);
	return (ch);
}

/* GET /api/channel. */
void
chan_take(struct http_taken *ht)
{
	struct timeval	 tv = { CHAN_AUTH_SEC, 0 };
	struct channel	*ch;

	if (chan_handshake(ht, 1) == -1)
		return;
	if ((ch = chan_open(ht, CHAN_API)) == NULL)
		return;
	evtimer_add(&ch->ch_auth_ev, &tv);
}

/* Send one JSON object as a text message (taken over). */
void
chan_send(struct channel *ch, json_t *o)
{
	char	*text;

	if (o == NULL)
		return;
	if ((text = json_dumps(o, JSON_COMPACT)) != NULL) {
		(void)ws_send(ch->ch_ws, 0, text, strlen(text));
		free(text);
	}
	json_decref(o);
}

/* {"op":"error","stream":S,"error":code,"message":...} (S 0: none). */
void
chan_error(struct channel *ch, uint32_t stream, const char *code,
    const char *fmt, ...)
{
	char	 msg[MSG_ERROR_TEXT_MAX];
	va_list	 ap;
	json_t	*o;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (ch->ch_mode == CHAN_ATTACH) {
		ws_close(ch->ch_ws, WS_CLOSE_POLICY, msg);
		return;
	}
	if ((o = http_api_message(code, msg)) == NULL)
		return;
	json_object_set_new(o, "op", json_string("error"));
	if (stream != 0)
		json_object_set_new(o, "stream", json_integer(stream));
	chan_send(ch, o);
}

/* {"op":op,"stream":S} and what o has (taken over; NULL: none). */
void
chan_say(struct chan_stream *cs, const char *op, json_t *o)
{
	if (cs->cs_chan->ch_mode == CHAN_ATTACH) {
		json_decref(o);
		return;
	}
	if (o == NULL && (o = json_object()) == NULL)
		return;
	json_object_set_new(o, "op", json_string(op));
	json_object_set_new(o, "stream", json_integer(cs->cs_id));
	chan_send(cs->cs_chan, o);
}

struct chan_stream *
chan_stream_find(struct channel *ch, uint32_t id)
{
	struct chan_stream *cs;

	TAILQ_FOREACH(cs, &ch->ch_streams, cs_entry)
		if (cs->cs_id == id)
			return (cs);
	return (NULL);
}

void
chan_who(const struct channel *ch, struct svc_who *w)
{
	w->w_uid = ch->ch_uid;
	w->w_admin = 0;
	w->w_unbounded = 0;
	w->w_noun = "environment";
	w->w_token = NULL;
}

struct chan_stream *
chan_stream_new(struct channel *ch, uint32_t id, enum cs_kind kind)
{
	struct chan_stream *cs;

	if (chan_stream_find(ch, id) != NULL) {
		chan_error(ch, id, "stream-in-use", "stream %u is open",
		    (unsigned)id);
		return (NULL);
	}
	if (ch->ch_nstreams >= CHAN_STREAMS_MAX) {
		chan_error(ch, id, "too-many-streams", "at most %u streams "
		    "on a channel", CHAN_STREAMS_MAX);
		return (NULL);
	}
	if ((cs = calloc(1, sizeof(*cs))) == NULL) {
		chan_error(ch, id, "internal", "out of memory");
		return (NULL);
	}
	cs->cs_chan = ch;
	cs->cs_id = id;
	cs->cs_kind = kind;
	TAILQ_INSERT_TAIL(&ch->ch_streams, cs, cs_entry);
	ch->ch_nstreams++;
	return (cs);
}

void
chan_unblock(struct chan_stream *cs)
{
	struct channel	*ch = cs->cs_chan;

	if (!cs->cs_blocking)
		return;
	cs->cs_blocking = 0;
	if (--ch->ch_blocked == 0 && !ch->ch_closing)
		ws_pause(ch->ch_ws, 0);
}

/*
 * A stream ends: every request it made is orphaned (an exec killed, a
 * tunnel closed), its tunnel closed; with say, {"op":"end"} tells the
 * page.
 */
void
chan_stream_free(struct chan_stream *cs, int say)
{
	struct channel	*ch = cs->cs_chan;

	if (say)
		chan_say(cs, "end", NULL);
	chan_unblock(cs);
	TAILQ_REMOVE(&ch->ch_streams, cs, cs_entry);
	ch->ch_nstreams--;
	svc_watch_del(cs->cs_watch);
	if (cs->cs_bev != NULL)
		bufferevent_free(cs->cs_bev);
	if (cs->cs_tunnel_set)
		svc_tunnel_close(cs->cs_tunnel, cs);
	inflight_orphan(cs);
	free(cs);
}

/* The end of the connection, however it came: everything goes. */
static void
chan_closed(void *arg, struct ws *ws, unsigned int code)
{
	struct channel	*ch = arg;
	struct chan_stream *cs;

	log_debug("http: channel of %u closed (%u)", (unsigned)ch->ch_uid,
	    code);
	ch->ch_closing = 1;
	while ((cs = TAILQ_FIRST(&ch->ch_streams)) != NULL)
		chan_stream_free(cs, 0);
	TAILQ_REMOVE(&chan_all, ch, ch_entry);
	evtimer_del(&ch->ch_auth_ev);
	event_del(&ch->ch_flush_ev);
	if (ch->ch_ht == NULL)		/* dropped: ws is ours to free */
		ws_free(ch->ch_ws);
	else
		http_taken_end(ch->ch_ht);
	free(ch);
}

/* The page reads again: every stream may send again. */
static void
chan_drained(void *arg, struct ws *ws)
{
	struct channel	*ch = arg;
	struct chan_stream *cs, *next;

	TAILQ_FOREACH_SAFE(cs, &ch->ch_streams, cs_entry, next)
		chan_pump(cs);
	if (!TAILQ_EMPTY(&ch->ch_streams))
		event_active(&ch->ch_flush_ev, EV_TIMEOUT, 1);
}

static void
chan_auth(struct channel *ch, json_t *o)
{
	json_t		*op = json_object_get(o, "op");
	json_t		*t = json_object_get(o, "token");
	uid_t		 uid;

	if (op == NULL || !json_is_string(op) ||
	    strcmp(json_string_value(op), "auth") != 0 ||
	    t == NULL || !json_is_string(t) || json_object_size(o) != 2) {
		ws_close(ch->ch_ws, WS_CLOSE_POLICY, "the first message is "
		    "{\"op\":\"auth\",\"token\":...}");
		return;
	}
	/* A NUL inside is no token's (strlen() would stop at it). */
	if (strlen(json_string_value(t)) != json_string_length(t) ||
	    token_lookup(json_string_value(t), json_string_length(t),
	    &uid) == -1) {
		chan_error(ch, 0, "unauthorized", "the host token is not "
		    "valid");
		ws_close(ch->ch_ws, WS_CLOSE_POLICY, "unauthorized");
		return;
	}
	if (chan_user_count(uid) >= CHAN_USER_MAX ||
	    http_taken_claim(ch->ch_ht, uid) == -1) {
		chan_error(ch, 0, "too-many-connections", "at most %u "
		    "chan_all, and `http connections per user' connections, "
		    "per user", CHAN_USER_MAX);
		ws_close(ch->ch_ws, WS_CLOSE_TRY_AGAIN, "too many connections");
		return;
	}
	ch->ch_authed = 1;
	ch->ch_uid = uid;
	evtimer_del(&ch->ch_auth_ev);
	chan_send(ch, json_pack("{s:s}", "op", "ready"));
}

static void
chan_text(struct channel *ch, const uint8_t *p, size_t len)
{
	json_t		*o, *op, *sv;
	json_error_t	 err;
	const char	*name;
	uint32_t	 id = 0;

	if ((o = json_loadb((const char *)p, len, JSON_REJECT_DUPLICATES,
	    &err)) == NULL || !json_is_object(o)) {
		json_decref(o);
		if (!ch->ch_authed)
			ws_close(ch->ch_ws, WS_CLOSE_POLICY, "the first "
			    "message is {\"op\":\"auth\",\"token\":...}");
		else
			chan_error(ch, 0, "bad-json", "a message is one JSON "
			    "object");
		return;
	}
	if (!ch->ch_authed) {
		chan_auth(ch, o);
		json_decref(o);
		return;
	}
	op = json_object_get(o, "op");
	sv = json_object_get(o, "stream");
	if (sv != NULL && json_is_integer(sv) && json_integer_value(sv) >= 1 &&
	    json_integer_value(sv) <= CHAN_STREAM_ID_MAX)
		id = (uint32_t)json_integer_value(sv);
	if (op == NULL || !json_is_string(op)) {
		chan_error(ch, id, "bad-request", "a message names its op");
		goto out;
	}
	name = json_string_value(op);
	if (id == 0) {
		chan_error(ch, 0, "bad-stream", "stream must be a whole number "
		    "from 1 to %u", CHAN_STREAM_ID_MAX);
		goto out;
	}
	if (strcmp(name, "watch") == 0)
		chan_op_watch(ch, id, o);
	else if (strcmp(name, "exec") == 0)
		chan_op_exec(ch, id, o);
	else if (strcmp(name, "output") == 0)
		chan_op_tunnel(ch, id, o, 0);
	else if (strcmp(name, "terminal") == 0)
		chan_op_tunnel(ch, id, o, 1);
	else if (strcmp(name, "resize") == 0)
		chan_op_resize(ch, id, o);
	else if (strcmp(name, "input") == 0)
		chan_op_input(ch, id, o);
	else if (strcmp(name, "ack") == 0)
		chan_op_ack(ch, id, o);
	else if (strcmp(name, "close") == 0) {
		struct chan_stream *cs;

		if ((cs = chan_stream_find(ch, id)) == NULL)
			chan_error(ch, id, "not-found", "no stream %u",
			    (unsigned)id);
		else {
			chan_stream_free(cs, 0);
			chan_send(ch, json_pack("{s:s, s:i}", "op", "closed",
			    "stream", (int)id));
		}
	} else
		chan_error(ch, id, "unknown-op", "unknown op \"%.32s\"", name);
 out:
	json_decref(o);
}

/* The attachment's text: {"resize":[cols,rows]}. */
static void
chan_attach_text(struct channel *ch, const uint8_t *p, size_t len)
{
	struct chan_stream *cs = TAILQ_FIRST(&ch->ch_streams);
	json_t		*o, *r;

	o = json_loadb((const char *)p, len, JSON_REJECT_DUPLICATES, NULL);
	if (o == NULL || !json_is_object(o) || json_object_size(o) != 1 ||
	    (r = json_object_get(o, "resize")) == NULL ||
	    !json_is_array(r) || json_array_size(r) != 2 ||
	    !json_is_integer(json_array_get(r, 0)) ||
	    !json_is_integer(json_array_get(r, 1)) ||
	    json_integer_value(json_array_get(r, 0)) < 1 ||
	    json_integer_value(json_array_get(r, 0)) > MSG_TERM_DIM_MAX ||
	    json_integer_value(json_array_get(r, 1)) < 1 ||
	    json_integer_value(json_array_get(r, 1)) > MSG_TERM_DIM_MAX) {
		json_decref(o);
		ws_close(ch->ch_ws, WS_CLOSE_POLICY, "a text message is "
		    "{\"resize\":[cols,rows]}");
		return;
	}
	if (cs != NULL)
		chan_resize(cs, json_integer_value(json_array_get(r, 0)),
		    json_integer_value(json_array_get(r, 1)));
	json_decref(o);
}


static void
chan_message(void *arg, struct ws *ws, int binary, const uint8_t *p,
    size_t len)
{
	struct channel	*ch = arg;
	struct chan_stream *cs;
	uint32_t	 id;

	if (ch->ch_mode == CHAN_ATTACH) {
		if (!binary)
			chan_attach_text(ch, p, len);
		else if ((cs = TAILQ_FIRST(&ch->ch_streams)) != NULL)
			chan_tunnel_write(cs, p, len);
		return;
	}
	if (!binary) {
		chan_text(ch, p, len);
		return;
	}
	if (!ch->ch_authed) {
		ws_close(ch->ch_ws, WS_CLOSE_POLICY, "the first message is "
		    "{\"op\":\"auth\",\"token\":...}");
		return;
	}
	if (len < 4) {
		chan_error(ch, 0, "bad-frame", "a binary message begins with "
		    "its stream, 4 bytes");
		return;
	}
	id = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | p[3];
	if ((cs = chan_stream_find(ch, id)) == NULL ||
	    cs->cs_kind != CS_TERMINAL) {
		chan_error(ch, id, "not-found", "stream %u is no terminal",
		    (unsigned)id);
		return;
	}
	chan_tunnel_write(cs, p + 4, len - 4);
}
