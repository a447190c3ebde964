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
 * [bytes] of a terminal.  Each stream is a maker of the fence service's
 * requests (its answers come to the stream; inflight_orphan() of the
 * stream ends them all when it closes).
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
#include "ticket.h"
#include "ws.h"

#define API_ENVS_PREFIX		"/api/environments/"
#define CHAN_REFUSE_SEC		5	/* a refusal's answer goes by then */

enum chan_mode {
	CHAN_API = 1,		/* /api/channel: ops and streams */
	CHAN_ATTACH		/* one terminal, its bytes alone */
};

enum cs_kind {
	CS_WATCH = 1,
	CS_EXEC,
	CS_OUTPUT,
	CS_TERMINAL,
	CS_INPUT		/* a process's stdin: one answer */
};

struct channel;

struct chan_stream {
	TAILQ_ENTRY(chan_stream) cs_entry;
	struct channel		*cs_chan;
	uint32_t		 cs_id;		/* the page's */
	enum cs_kind		 cs_kind;
	size_t			 cs_unacked;	/* sent, not acknowledged */
	/* exec */
	uint32_t		 cs_svc_id;	/* for svc_stream_credit() */
	size_t			 cs_owed;	/* acknowledged, not credited */
	int			 cs_b64;
	/* tunnels: output, terminal */
	char			 cs_key[FENCE_KEY_SIZE];
	uint32_t		 cs_target;	/* process or terminal id */
	int			 cs_tunnel_set;
	uint32_t		 cs_tunnel;	/* svc_tunnel_close()'s id */
	struct bufferevent	*cs_bev;
	int			 cs_blocking;	/* its output is full: the page
						   waits */
	int			 cs_eof;	/* the tunnel ended */
	/* watch */
	struct svc_watch	*cs_watch;
	int			 cs_all;	/* every fence, not cs_key */
	unsigned int		 cs_npending;
	int			 cs_overflow;	/* too many: list them all */
	char			 cs_pending[CHAN_WATCH_PENDING][FENCE_KEY_SIZE];
};

struct channel {
	TAILQ_ENTRY(channel)	 ch_entry;
	enum chan_mode		 ch_mode;
	struct http_taken	*ch_ht;
	struct ws		*ch_ws;
	int			 ch_authed;
	uid_t			 ch_uid;
	struct event		 ch_auth_ev;
	struct event		 ch_flush_ev;	/* watches, from the loop */
	TAILQ_HEAD(, chan_stream) ch_streams;
	unsigned int		 ch_nstreams;
	unsigned int		 ch_blocked;	/* streams blocking input */
	int			 ch_closing;
};

/* A refusal on its way out before the connection ends. */
struct chan_refusal {
	struct http_taken	*cr_ht;
	struct bufferevent	*cr_bev;
};

static TAILQ_HEAD(, channel) channels = TAILQ_HEAD_INITIALIZER(channels);

static void	chan_message(void *, struct ws *, int, const uint8_t *,
		    size_t);
static void	chan_drained(void *, struct ws *);
static void	chan_closed(void *, struct ws *, unsigned int);
static void	chan_stream_free(struct chan_stream *, int);
static void	chan_pump(struct chan_stream *);
static void	chan_flush(evutil_socket_t, short, void *);

static const struct ws_ops chan_ws_ops = {
	chan_message, chan_drained, chan_closed
};

/* The path of h, without its query, as a string of at most len. */
static int
chan_path(const struct http_head *h, char *buf, size_t len)
{
	if (h->h_pathlen >= len)
		return (-1);
	memcpy(buf, h->h_target, h->h_pathlen);
	buf[h->h_pathlen] = '\0';
	return (0);
}

int
chan_match(const struct http_head *h)
{
	return (h->h_pathlen == strlen(CHAN_PATH) &&
	    strncmp(h->h_target, CHAN_PATH, h->h_pathlen) == 0);
}

/*
 * /api/environments/KEY/terminals/ID/attach: the key and id, or -1.
 */
static int
chan_attach_path(const struct http_head *h, char *key, uint32_t *id)
{
	char		 path[HTTP_HEAD_TARGET], *k, *t, *n, *e;
	const char	*errstr;
	long long	 v;

	if (chan_path(h, path, sizeof(path)) == -1 ||
	    strncmp(path, API_ENVS_PREFIX, strlen(API_ENVS_PREFIX)) != 0)
		return (-1);
	k = path + strlen(API_ENVS_PREFIX);
	if ((t = strchr(k, '/')) == NULL)
		return (-1);
	*t++ = '\0';
	if (strncmp(t, "terminals/", 10) != 0)
		return (-1);
	n = t + 10;
	if ((e = strchr(n, '/')) == NULL || strcmp(e, "/attach") != 0)
		return (-1);
	*e = '\0';
	if (strlen(k) >= FENCE_KEY_SIZE || !fence_key_valid(k) ||
	    strspn(n, "0123456789") != strlen(n) || n[0] == '0')
		return (-1);
	v = strtonum(n, 1, UINT32_MAX, &errstr);
	if (errstr != NULL)
		return (-1);
	strlcpy(key, k, FENCE_KEY_SIZE);
	*id = (uint32_t)v;
	return (0);
}

int
chan_attach_match(const struct http_head *h)
{
	char		 key[FENCE_KEY_SIZE];
	uint32_t	 id;

	return (chan_attach_path(h, key, &id) == 0);
}

/* A query parameter's value (at most len - 1 bytes), or -1 absent. */
static int
chan_query(const struct http_head *h, const char *name, char *buf,
    size_t len)
{
	const char	*q = h->h_target + h->h_pathlen, *p, *e;
	size_t		 nl = strlen(name), vl;

	if (*q != '?')
		return (-1);
	for (p = q + 1; *p != '\0'; p = *e == '&' ? e + 1 : e) {
		e = p + strcspn(p, "&");
		if ((size_t)(e - p) > nl && strncmp(p, name, nl) == 0 &&
		    p[nl] == '=') {
			vl = e - p - nl - 1;
			if (vl >= len)
				return (-1);
			memcpy(buf, p + nl + 1, vl);
			buf[vl] = '\0';
			return (0);
		}
	}
	return (-1);
}

/* The refusal was written (or could not be): the connection ends. */
static void
chan_refusal_end(struct chan_refusal *cr)
{
	bufferevent_free(cr->cr_bev);
	http_taken_end(cr->cr_ht);
	free(cr);
}

static void
chan_refusal_written(struct bufferevent *bev, void *arg)
{
	chan_refusal_end(arg);
}

static void
chan_refusal_event(struct bufferevent *bev, short what, void *arg)
{
	chan_refusal_end(arg);
}

static void
chan_refusal_dropped(void *arg)
{
	chan_refusal_end(arg);
}

/* Answer the handshake with status and {"error", "message"}, and end. */
static void
chan_refuse(struct http_taken *ht, int status, const char *code,
    const char *msg)
{
	struct timeval		 tv = { CHAN_REFUSE_SEC, 0 };
	struct chan_refusal	*cr;

	log_debug("http: websocket refused: %d %s: %s", status, code, msg);
	if ((cr = calloc(1, sizeof(*cr))) == NULL ||
	    evutil_make_socket_nonblocking(ht->ht_fd) == -1 ||
	    (cr->cr_bev = bufferevent_socket_new(broker_self.ps_evbase,
	    ht->ht_fd, BEV_OPT_CLOSE_ON_FREE)) == NULL) {
		free(cr);
		http_taken_end(ht);
		return;
	}
	ht->ht_fd = -1;
	cr->cr_ht = ht;
	ht->ht_arg = cr;
	ht->ht_dropped = chan_refusal_dropped;
	http_taken_error(bufferevent_get_output(cr->cr_bev), status, code,
	    msg);
	bufferevent_setcb(cr->cr_bev, NULL, chan_refusal_written,
	    chan_refusal_event, cr);
	bufferevent_set_timeouts(cr->cr_bev, NULL, &tv);
	bufferevent_enable(cr->cr_bev, EV_WRITE);
}

/*
 * The opening handshake: a WebSocket's (ws.c), with a Host of ours and
 * an Origin listed or our own (required when origin_needed).  0, or -1
 * with the refusal sent.
 */
static int
chan_handshake(struct http_taken *ht, int origin_needed)
{
	const struct http_head *h = ht->ht_head;
	struct ws_handshake	 wh;
	const char		*why;
	int			 status;

	if (h->h_host_n != 1 || h->h_origin_n > 1 ||
	    !http_host_origin_ok(h->h_host, h->h_origin_n ? h->h_origin :
	    NULL)) {
		chan_refuse(ht, h->h_host_n != 1 || !http_host_origin_ok(
		    h->h_host, NULL) ? 421 : 403, h->h_host_n != 1 ||
		    !http_host_origin_ok(h->h_host, NULL) ? "bad-host" :
		    "bad-origin", "the Host or Origin of this request is "
		    "not allowed");
		return (-1);
	}
	if (origin_needed && h->h_origin_n != 1) {
		chan_refuse(ht, 403, "bad-origin", "a channel is opened by a "
		    "page: its Origin is needed");
		return (-1);
	}
	memset(&wh, 0, sizeof(wh));
	wh.wh_method = h->h_method;
	wh.wh_http11 = h->h_minor == 1;
	wh.wh_upgrade = h->h_upgrade_n == 1 ? h->h_upgrade : NULL;
	wh.wh_connection = h->h_connection_n == 1 ? h->h_connection : NULL;
	wh.wh_version = h->h_wsversion_n == 1 ? h->h_wsversion : NULL;
	wh.wh_key = h->h_wskey_n == 1 ? h->h_wskey : NULL;
	if (ws_handshake_check(&wh, &why, &status) == -1) {
		chan_refuse(ht, status, status == 405 ? "method-not-allowed" :
		    "bad-websocket", why);
		return (-1);
	}
	return (0);
}

static unsigned int
chan_user_count(uid_t uid)
{
	struct channel	*ch;
	unsigned int	 n = 0;

	TAILQ_FOREACH(ch, &channels, ch_entry)
		if (ch->ch_authed && ch->ch_uid == uid)
			n++;
	return (n);
}

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
static struct channel *
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
	TAILQ_INSERT_TAIL(&channels, ch, ch_entry);
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
static void
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
static void
chan_error(struct channel *ch, uint32_t stream, const char *code,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void
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
static void
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

static struct chan_stream *
chan_stream_find(struct channel *ch, uint32_t id)
{
	struct chan_stream *cs;

	TAILQ_FOREACH(cs, &ch->ch_streams, cs_entry)
		if (cs->cs_id == id)
			return (cs);
	return (NULL);
}

static void
chan_who(const struct channel *ch, struct svc_who *w)
{
	w->w_uid = ch->ch_uid;
	w->w_admin = 0;
	w->w_unbounded = 0;
	w->w_noun = "environment";
}

static struct chan_stream *
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

static void
chan_unblock(struct chan_stream *cs)
{
	struct channel	*ch = cs->cs_chan;

	if (!cs->cs_blocking)
		return;
	cs->cs_blocking = 0;
	if (--ch->ch_blocked == 0 && ch->ch_ws != NULL)
		ws_pause(ch->ch_ws, 0);
}

/*
 * A stream ends: every request it made is orphaned (an exec killed, a
 * tunnel closed), its tunnel closed; with say, {"op":"end"} tells the
 * page.
 */
static void
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
	TAILQ_REMOVE(&channels, ch, ch_entry);
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

/*
 * Watches: each fence that changed is kept (coalesced) and said from
 * the loop while the page reads; one gone from the records is said
 * gone.
 */
static void
chan_watch_one(void *arg, const struct svc_answer *a)
{
	struct chan_stream *cs = arg;
	const char	*text;
	char		*mine;
	json_t		*env;

	if (a->a_what != SVC_FENCE)
		return;
	if ((text = api_fence_text(a, &mine)) == NULL)
		return;
	env = json_loads(text, 0, NULL);
	free(mine);
	if (env != NULL)
		chan_say(cs, "state", json_pack("{s:o}", "environment", env));
}

static void
chan_watch_send(struct chan_stream *cs, const char *key)
{
	struct svc_who	 w;

	chan_who(cs->cs_chan, &w);
	if (svc_list(&w, MSG_OWNER_NONE, key, chan_watch_one, cs) == 0 &&
	    key[0] != '\0')
		chan_say(cs, "state", json_pack("{s:s, s:b}", "key", key,
		    "gone", 1));
}

static void
chan_flush(evutil_socket_t fd, short ev, void *arg)
{
	struct channel	*ch = arg;
	struct chan_stream *cs;
	char		 key[FENCE_KEY_SIZE];

	TAILQ_FOREACH(cs, &ch->ch_streams, cs_entry) {
		if (cs->cs_kind != CS_WATCH)
			continue;
		if (cs->cs_overflow && ws_room(ch->ch_ws)) {
			cs->cs_overflow = 0;
			cs->cs_npending = 0;
			chan_watch_send(cs, cs->cs_all ? "" : cs->cs_key);
		}
		while (cs->cs_npending > 0 && ws_room(ch->ch_ws)) {
			strlcpy(key, cs->cs_pending[--cs->cs_npending],
			    sizeof(key));
			chan_watch_send(cs, key);
		}
	}
}

static void
chan_watch_changed(void *arg, uid_t owner, const char *key)
{
	struct chan_stream *cs = arg;
	unsigned int	 i;

	if (owner != cs->cs_chan->ch_uid ||
	    (!cs->cs_all && strcmp(key, cs->cs_key) != 0))
		return;
	for (i = 0; i < cs->cs_npending; i++)
		if (strcmp(cs->cs_pending[i], key) == 0)
			break;
	if (i == cs->cs_npending) {
		if (cs->cs_npending < CHAN_WATCH_PENDING)
			strlcpy(cs->cs_pending[cs->cs_npending++], key,
			    FENCE_KEY_SIZE);
		else
			cs->cs_overflow = 1;
	}
	event_active(&cs->cs_chan->ch_flush_ev, EV_TIMEOUT, 1);
}

/* Streamed exec: the events of http_stream.c, as messages. */
static void
chan_exec_answer(void *arg, const struct svc_answer *a)
{
	struct chan_stream *cs = arg;
	const struct msg_chunk *c;
	json_t		*d = NULL, *o;
	int		 b64 = cs->cs_b64;

	switch (a->a_what) {
	case SVC_CHUNK:
		c = a->a_chunk;
		cs->cs_svc_id = a->a_id;
		cs->cs_unacked += c->ch_len;
		if (!b64 && (d = json_stringn((const char *)c->ch_data,
		    c->ch_len)) == NULL)
			b64 = 1;
		if (b64)
			d = api_b64_encode(c->ch_data, c->ch_len);
		chan_say(cs, c->ch_stream == MSG_CHUNK_STDOUT ? "stdout" :
		    "stderr", d == NULL ? NULL : json_pack("{s:o, s:s}",
		    "data", d, "encoding", b64 ? "base64" : "utf-8"));
		return;
	case SVC_RESULT:
		if ((o = api_result(a->a_result, cs->cs_b64)) == NULL)
			chan_error(cs->cs_chan, cs->cs_id, "internal", "cannot "
			    "encode the result");
		else if (a->a_result->rs_error[0] != '\0') {
			json_object_set_new(o, "error",
			    json_string(a->a_result->rs_error));
			json_object_set_new(o, "message",
			    json_string(a->a_result->rs_message));
			chan_say(cs, "error", o);
		} else
			chan_say(cs, "result", o);
		break;
	case SVC_ERROR:
		chan_error(cs->cs_chan, cs->cs_id, a->a_code, "%s",
		    a->a_message);
		break;
	default:
		chan_error(cs->cs_chan, cs->cs_id, "internal", "unexpected "
		    "answer");
		break;
	}
	chan_stream_free(cs, 0);
}

/*
 * A tunnel's bytes to the page, within the stream's window and while
 * the connection has room; the rest stays in the tunnel's socket.
 */
static void
chan_pump(struct chan_stream *cs)
{
	struct channel	*ch = cs->cs_chan;
	struct evbuffer	*in;
	uint8_t		 frame[4 + CHAN_READ_CHUNK];
	size_t		 n, off;
	int		 got;

	if (cs->cs_bev == NULL)
		return;
	in = bufferevent_get_input(cs->cs_bev);
	off = ch->ch_mode == CHAN_ATTACH ? 0 : 4;
	while ((n = evbuffer_get_length(in)) > 0 && ws_room(ch->ch_ws) &&
	    (ch->ch_mode == CHAN_ATTACH || cs->cs_unacked < CHAN_WINDOW)) {
		if (n > CHAN_READ_CHUNK)
			n = CHAN_READ_CHUNK;
		if (ch->ch_mode != CHAN_ATTACH &&
		    n > CHAN_WINDOW - cs->cs_unacked)
			n = CHAN_WINDOW - cs->cs_unacked;
		if ((got = evbuffer_remove(in, frame + off, n)) <= 0)
			break;
		if (off == 4) {
			frame[0] = cs->cs_id >> 24;
			frame[1] = cs->cs_id >> 16;
			frame[2] = cs->cs_id >> 8;
			frame[3] = cs->cs_id;
		}
		if (ws_send(ch->ch_ws, 1, frame, off + got) == -1)
			return;
		if (ch->ch_mode != CHAN_ATTACH)
			cs->cs_unacked += got;
	}
	if (evbuffer_get_length(in) == 0) {
		if (cs->cs_eof) {
			if (ch->ch_mode == CHAN_ATTACH)
				ws_close(ch->ch_ws, WS_CLOSE_NORMAL,
				    "the terminal ended");
			else
				chan_stream_free(cs, 1);
			return;
		}
		bufferevent_enable(cs->cs_bev, EV_READ);
	} else
		/* No room: the fence's program waits in its write. */
		bufferevent_disable(cs->cs_bev, EV_READ);
}

static void
chan_tunnel_read(struct bufferevent *bev, void *arg)
{
	chan_pump(arg);
}

/* What the page sent to the tunnel is written: it may send again. */
static void
chan_tunnel_written(struct bufferevent *bev, void *arg)
{
	chan_unblock(arg);
}

static void
chan_tunnel_event(struct bufferevent *bev, short what, void *arg)
{
	struct chan_stream *cs = arg;

	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)) {
		cs->cs_eof = 1;
		bufferevent_disable(bev, EV_READ | EV_WRITE);
		chan_pump(cs);
	}
}

static void
chan_tunnel_answer(void *arg, const struct svc_answer *a)
{
	struct chan_stream *cs = arg;

	switch (a->a_what) {
	case SVC_TUNNEL:
		cs->cs_tunnel = a->a_id;
		cs->cs_tunnel_set = 1;
		if ((cs->cs_bev = bufferevent_socket_new(broker_self.ps_evbase,
		    a->a_fd, BEV_OPT_CLOSE_ON_FREE)) == NULL) {
			close(a->a_fd);
			chan_error(cs->cs_chan, cs->cs_id, "internal",
			    "cannot follow the tunnel");
			chan_stream_free(cs, 0);
			return;
		}
		bufferevent_setcb(cs->cs_bev, chan_tunnel_read,
		    chan_tunnel_written, chan_tunnel_event, cs);
		bufferevent_setwatermark(cs->cs_bev, EV_READ, 0,
		    CHAN_READ_CHUNK);
		bufferevent_setwatermark(cs->cs_bev, EV_WRITE, 0, 0);
		bufferevent_enable(cs->cs_bev, EV_READ | EV_WRITE);
		chan_say(cs, "open", NULL);
		return;
	case SVC_ERROR:
		if (cs->cs_chan->ch_mode == CHAN_ATTACH) {
			ws_close(cs->cs_chan->ch_ws, WS_CLOSE_POLICY,
			    a->a_message);
			return;
		}
		chan_error(cs->cs_chan, cs->cs_id, a->a_code, "%s",
		    a->a_message);
		chan_stream_free(cs, 0);
		return;
	default:
		return;
	}
}

/* Bytes from the page to a terminal's tunnel. */
static void
chan_tunnel_write(struct chan_stream *cs, const uint8_t *p, size_t len)
{
	struct channel	*ch = cs->cs_chan;
	struct evbuffer	*out;

	if (cs->cs_bev == NULL || cs->cs_eof) {
		chan_error(ch, cs->cs_id, "not-open", "stream %u takes no "
		    "bytes now", (unsigned)cs->cs_id);
		return;
	}
	if (len == 0)
		return;
	out = bufferevent_get_output(cs->cs_bev);
	if (evbuffer_add(out, p, len) == -1) {
		chan_error(ch, cs->cs_id, "internal", "out of memory");
		return;
	}
	if (evbuffer_get_length(out) >= CHAN_TUNNEL_OUT && !cs->cs_blocking) {
		/* The fence reads slowly: so does the page's channel. */
		cs->cs_blocking = 1;
		if (ch->ch_blocked++ == 0)
			ws_pause(ch->ch_ws, 1);
	}
}

static void
chan_resize_answer(void *arg, const struct svc_answer *a)
{
	struct chan_stream *cs = arg;

	if (a->a_what == SVC_TERM)
		chan_say(cs, "resized", json_pack("{s:[i,i]}", "size",
		    (int)a->a_term->t_cols, (int)a->a_term->t_rows));
	else if (a->a_what == SVC_ERROR)
		chan_error(cs->cs_chan, cs->cs_id, a->a_code, "%s",
		    a->a_message);
}

static void
chan_input_answer(void *arg, const struct svc_answer *a)
{
	struct chan_stream *cs = arg;

	if (a->a_what == SVC_PROC) {
		chan_say(cs, "written", NULL);
		chan_stream_free(cs, 0);
	} else if (a->a_what == SVC_ERROR) {
		chan_error(cs->cs_chan, cs->cs_id, a->a_code, "%s",
		    a->a_message);
		chan_stream_free(cs, 0);
	}
}

/*
 * The fields of a message: each op's own, and no other.  Returns 0, or
 * -1 with the error said.
 */
static int
chan_fields(struct channel *ch, uint32_t id, json_t *o, const char *const *ok)
{
	const char	*k;
	json_t		*v;
	size_t		 i;

	json_object_foreach(o, k, v) {
		for (i = 0; ok[i] != NULL; i++)
			if (strcmp(k, ok[i]) == 0)
				break;
		if (ok[i] == NULL) {
			chan_error(ch, id, "unknown-field", "unknown field "
			    "\"%.48s\"", k);
			return (-1);
		}
	}
	return (0);
}

/* A key field: a valid fence key, or -1 with the error said. */
static int
chan_key(struct channel *ch, uint32_t id, json_t *o, char *key)
{
	json_t		*v = json_object_get(o, "key");
	const char	*s;

	if (v == NULL || !json_is_string(v) ||
	    strlen(s = json_string_value(v)) >= FENCE_KEY_SIZE ||
	    !fence_key_valid(s)) {
		chan_error(ch, id, "bad-key", "key must be an environment's "
		    "key");
		return (-1);
	}
	strlcpy(key, s, FENCE_KEY_SIZE);
	return (0);
}

/* A whole number field within lo..hi; def when absent (-1: needed). */
static int
chan_int(struct channel *ch, uint32_t id, json_t *o, const char *name,
    long long lo, long long hi, long long def, long long *out)
{
	json_t	*v = json_object_get(o, name);

	if (v == NULL && def != -1) {
		*out = def;
		return (0);
	}
	if (v == NULL || !json_is_integer(v) || json_integer_value(v) < lo ||
	    json_integer_value(v) > hi) {
		chan_error(ch, id, "bad-value", "%s must be a whole number "
		    "from %lld to %lld", name, lo, hi);
		return (-1);
	}
	*out = json_integer_value(v);
	return (0);
}

/* "id": a terminal's or process's, "N" or N. */
static int
chan_target(struct channel *ch, uint32_t id, json_t *o, uint32_t *target)
{
	if (http_json_id(json_object_get(o, "id"), target) == -1) {
		chan_error(ch, id, "bad-value", "id must be a terminal's or a "
		    "process's id, \"1\" to \"%u\"", UINT32_MAX);
		return (-1);
	}
	return (0);
}

static void
chan_op_watch(struct channel *ch, uint32_t id, json_t *o)
{
	static const char *const ok[] = { "op", "stream", "key", NULL };
	struct chan_stream *cs;
	struct svc_who	 w;
	char		 key[FENCE_KEY_SIZE] = "";

	if (chan_fields(ch, id, o, ok) == -1 ||
	    (json_object_get(o, "key") != NULL &&
	    chan_key(ch, id, o, key) == -1))
		return;
	if ((cs = chan_stream_new(ch, id, CS_WATCH)) == NULL)
		return;
	cs->cs_all = key[0] == '\0';
	strlcpy(cs->cs_key, key, sizeof(cs->cs_key));
	chan_who(ch, &w);
	if ((cs->cs_watch = svc_watch_add(&w, chan_watch_changed, cs)) ==
	    NULL) {
		chan_error(ch, id, "internal", "out of memory");
		chan_stream_free(cs, 0);
		return;
	}
	/* What is now, then what changes. */
	chan_say(cs, "watching", NULL);
	chan_watch_send(cs, key);
}

static void
chan_op_exec(struct channel *ch, uint32_t id, json_t *o)
{
	static const char *const ok[] = { "op", "stream", "key", "body",
	    NULL };
	struct chan_stream *cs;
	struct svc_who	 w;
	struct msg_exec	 x;
	struct hreq	 hr;
	json_t		*body;
	char		 key[FENCE_KEY_SIZE];
	int		 b64 = 0;

	if (chan_fields(ch, id, o, ok) == -1 || chan_key(ch, id, o, key) == -1)
		return;
	if ((body = json_object_get(o, "body")) == NULL ||
	    !json_is_object(body)) {
		chan_error(ch, id, "bad-type", "body must be an exec "
		    "request's object");
		return;
	}
	/* Read by POST .../exec's own table; its refusal kept in hr. */
	memset(&hr, 0, sizeof(hr));
	memset(&x, 0, sizeof(x));
	if (api_exec_read(&hr, body, &x, &b64) == -1) {
		json_t	*e = hr.hr_captured;

		chan_error(ch, id, e != NULL && json_is_string(json_object_get(e,
		    "error")) ? json_string_value(json_object_get(e, "error")) :
		    "bad-request", "%s", e != NULL && json_is_string(
		    json_object_get(e, "message")) ? json_string_value(
		    json_object_get(e, "message")) : "not an exec request");
		goto out;
	}
	if ((cs = chan_stream_new(ch, id, CS_EXEC)) == NULL)
		goto out;
	cs->cs_b64 = hr.hr_base64;
	strlcpy(x.x_key, key, sizeof(x.x_key));
	x.x_owner = MSG_OWNER_NONE;
	chan_who(ch, &w);
	svc_exec_stream(&w, &x, chan_exec_answer, cs);
 out:
	json_decref(hr.hr_captured);
	if (b64)
		free(x.x_stdin);
	free(x.x_argv);
}

/* output and terminal: a tunnel into the fence. */
static void
chan_op_tunnel(struct channel *ch, uint32_t id, json_t *o, int terminal)
{
	static const char *const ok_out[] = { "op", "stream", "key", "id",
	    "which", "offset", NULL };
	static const char *const ok_term[] = { "op", "stream", "key", "id",
	    "replay", NULL };
	struct msg_tunnel_open to;
	struct chan_stream *cs;
	struct svc_who	 w;
	json_t		*which;
	char		 key[FENCE_KEY_SIZE];
	long long	 off;
	uint32_t	 target, stream = 0;

	if (chan_fields(ch, id, o, terminal ? ok_term : ok_out) == -1 ||
	    chan_key(ch, id, o, key) == -1 ||
	    chan_target(ch, id, o, &target) == -1)
		return;
	if (terminal) {
		if (chan_int(ch, id, o, "replay", 0, MSG_TERM_RING,
		    MSG_TERM_RING, &off) == -1)
			return;
	} else {
		if (chan_int(ch, id, o, "offset", 0, INT64_MAX, 0, &off) == -1)
			return;
		which = json_object_get(o, "which");
		if (which == NULL || (json_is_string(which) &&
		    strcmp(json_string_value(which), "stdout") == 0))
			stream = MSG_CHUNK_STDOUT;
		else if (json_is_string(which) &&
		    strcmp(json_string_value(which), "stderr") == 0)
			stream = MSG_CHUNK_STDERR;
		else {
			chan_error(ch, id, "bad-value", "which must be stdout "
			    "or stderr");
			return;
		}
	}
	if ((cs = chan_stream_new(ch, id, terminal ? CS_TERMINAL :
	    CS_OUTPUT)) == NULL)
		return;
	strlcpy(cs->cs_key, key, sizeof(cs->cs_key));
	cs->cs_target = target;
	memset(&to, 0, sizeof(to));
	strlcpy(to.to_key, key, sizeof(to.to_key));
	to.to_owner = MSG_OWNER_NONE;
	to.to_kind = terminal ? MSG_TUNNEL_TERMINAL : MSG_TUNNEL_OUTPUT;
	to.to_id = cs->cs_target;
	to.to_stream = stream;
	to.to_offset = (uint64_t)off;
	chan_who(ch, &w);
	svc_tunnel_open(&w, MSG_OWNER_NONE, key, &to, chan_tunnel_answer, cs);
}

/* resize of a terminal stream (or the attachment's terminal). */
static void
chan_resize(struct chan_stream *cs, long long cols, long long rows)
{
	struct msg_term_req tq;
	struct svc_who	 w;

	memset(&tq, 0, sizeof(tq));
	strlcpy(tq.tq_key, cs->cs_key, sizeof(tq.tq_key));
	tq.tq_owner = MSG_OWNER_NONE;
	tq.tq_op = MSG_TERM_RESIZE;
	tq.tq_id = cs->cs_target;
	tq.tq_cols = (uint32_t)cols;
	tq.tq_rows = (uint32_t)rows;
	chan_who(cs->cs_chan, &w);
	svc_term_resize(&w, &tq, chan_resize_answer, cs);
}

static void
chan_op_resize(struct channel *ch, uint32_t id, json_t *o)
{
	static const char *const ok[] = { "op", "stream", "cols", "rows",
	    NULL };
	struct chan_stream *cs;
	long long	 cols, rows;

	if (chan_fields(ch, id, o, ok) == -1 ||
	    chan_int(ch, id, o, "cols", 1, MSG_TERM_DIM_MAX, -1, &cols) == -1 ||
	    chan_int(ch, id, o, "rows", 1, MSG_TERM_DIM_MAX, -1, &rows) == -1)
		return;
	if ((cs = chan_stream_find(ch, id)) == NULL ||
	    cs->cs_kind != CS_TERMINAL) {
		chan_error(ch, id, "not-found", "stream %u is no terminal",
		    (unsigned)id);
		return;
	}
	chan_resize(cs, cols, rows);
}

static void
chan_op_input(struct channel *ch, uint32_t id, json_t *o)
{
	static const char *const ok[] = { "op", "stream", "key", "id",
	    "data", "encoding", "close", NULL };
	struct msg_proc_input pi;
	struct chan_stream *cs;
	struct svc_who	 w;
	json_t		*data, *enc, *cl;
	const char	*s;
	uint8_t		*buf = NULL;
	ssize_t		 n = 0;
	uint32_t	 target;
	char		 key[FENCE_KEY_SIZE];

	if (chan_fields(ch, id, o, ok) == -1 || chan_key(ch, id, o, key) == -1 ||
	    chan_target(ch, id, o, &target) == -1)
		return;
	data = json_object_get(o, "data");
	enc = json_object_get(o, "encoding");
	cl = json_object_get(o, "close");
	if ((data != NULL && !json_is_string(data)) ||
	    (enc != NULL && (!json_is_string(enc) ||
	    (strcmp(json_string_value(enc), "utf-8") != 0 &&
	    strcmp(json_string_value(enc), "base64") != 0))) ||
	    (cl != NULL && !json_is_boolean(cl))) {
		chan_error(ch, id, "bad-type", "data is a string, encoding "
		    "utf-8 or base64, close true or false");
		return;
	}
	if (data != NULL) {
		s = json_string_value(data);
		if (enc != NULL && strcmp(json_string_value(enc),
		    "base64") == 0) {
			if ((buf = malloc(MSG_INPUT_MAX)) == NULL ||
			    (n = api_b64_decode(s, json_string_length(data),
			    buf, MSG_INPUT_MAX)) < 0) {
				free(buf);
				chan_error(ch, id, "bad-value", "data is not "
				    "base64 of at most %d bytes",
				    MSG_INPUT_MAX);
				return;
			}
		} else {
			n = json_string_length(data);
			if (n > MSG_INPUT_MAX) {
				chan_error(ch, id, "too-large", "at most %d "
				    "bytes of input a message", MSG_INPUT_MAX);
				return;
			}
			if ((buf = malloc(n > 0 ? n : 1)) == NULL) {
				chan_error(ch, id, "internal", "out of memory");
				return;
			}
			memcpy(buf, s, n);
		}
	}
	if ((cs = chan_stream_new(ch, id, CS_INPUT)) == NULL) {
		free(buf);
		return;
	}
	memset(&pi, 0, sizeof(pi));
	strlcpy(pi.pi_key, key, sizeof(pi.pi_key));
	pi.pi_owner = MSG_OWNER_NONE;
	pi.pi_id = target;
	pi.pi_data = n > 0 ? buf : NULL;
	pi.pi_len = (size_t)n;
	pi.pi_close = cl != NULL && json_is_true(cl);
	chan_who(ch, &w);
	svc_proc_input(&w, &pi, chan_input_answer, cs);
	free(buf);
}

static void
chan_op_ack(struct channel *ch, uint32_t id, json_t *o)
{
	static const char *const ok[] = { "op", "stream", "bytes", NULL };
	struct chan_stream *cs;
	long long	 n;

	if (chan_fields(ch, id, o, ok) == -1 ||
	    chan_int(ch, id, o, "bytes", 1, CHAN_WINDOW, -1, &n) == -1)
		return;
	/* A stream that ended may still be acknowledged: nothing to do. */
	if ((cs = chan_stream_find(ch, id)) == NULL)
		return;
	if ((size_t)n > cs->cs_unacked)
		n = (long long)cs->cs_unacked;
	cs->cs_unacked -= (size_t)n;
	if (cs->cs_kind == CS_EXEC && n > 0 && cs->cs_svc_id != 0)
		svc_stream_credit(cs->cs_svc_id, cs, (size_t)n);
	chan_pump(cs);
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
	if (token_lookup(json_string_value(t), json_string_length(t),
	    &uid) == -1) {
		chan_error(ch, 0, "unauthorized", "the host token is not "
		    "valid");
		ws_close(ch->ch_ws, WS_CLOSE_POLICY, "unauthorized");
		return;
	}
	if (chan_user_count(uid) >= CHAN_USER_MAX ||
	    http_taken_claim(ch->ch_ht, uid) == -1) {
		chan_error(ch, 0, "too-many-connections", "at most %u "
		    "channels, and `http connections per user' connections, "
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

/*
 * GET .../terminals/<id>/attach[?replay=N][&ticket=T]: the host token
 * header, or a terminal ticket for this terminal (a browser cannot
 * send a header with a WebSocket).
 */
void
chan_attach_take(struct http_taken *ht)
{
	const struct http_head *h = ht->ht_head;
	struct ticket_grant	 g;
	struct msg_tunnel_open	 to;
	struct channel		*ch;
	struct chan_stream	*cs;
	struct svc_who		 w;
	char			 key[FENCE_KEY_SIZE], val[TICKET_TEXT + 1];
	const char		*errstr;
	uint32_t		 id;
	long long		 replay = MSG_TERM_RING;
	uid_t			 uid;

	if (chan_attach_path(h, key, &id) == -1) {
		chan_refuse(ht, 404, "not-found", "no such endpoint");
		return;
	}
	if (chan_handshake(ht, 0) == -1)
		return;
	if (chan_query(h, "replay", val, sizeof(val)) == 0) {
		replay = strtonum(val, 0, MSG_TERM_RING, &errstr);
		if (errstr != NULL) {
			chan_refuse(ht, 400, "bad-value", "replay must be a "
			    "whole number of bytes, at most 65536");
			return;
		}
	}
	if (h->h_token_n == 1) {
		if (token_lookup(h->h_token, strlen(h->h_token), &uid) == -1) {
			chan_refuse(ht, 401, "unauthorized", "the host token "
			    "is not valid");
			return;
		}
	} else if (h->h_token_n == 0 &&
	    chan_query(h, "ticket", val, sizeof(val)) == 0) {
		if (ticket_take(val, TICKET_TERMINAL, &g) == -1 ||
		    strcmp(g.tg_key, key) != 0 || g.tg_id != id) {
			chan_refuse(ht, 401, "unauthorized", "the ticket is "
			    "not valid for this terminal");
			return;
		}
		uid = g.tg_uid;
	} else {
		chan_refuse(ht, 401, "unauthorized", "the host token header "
		    "or a terminal ticket (?ticket=) is needed");
		return;
	}
	if (http_taken_claim(ht, uid) == -1) {
		chan_refuse(ht, 429, "too-many-connections", "too many "
		    "connections of this user");
		return;
	}
	if ((ch = chan_open(ht, CHAN_ATTACH)) == NULL)
		return;
	ch->ch_authed = 1;
	ch->ch_uid = uid;
	if ((cs = chan_stream_new(ch, 1, CS_TERMINAL)) == NULL) {
		ws_close(ch->ch_ws, WS_CLOSE_INTERNAL, "out of memory");
		return;
	}
	strlcpy(cs->cs_key, key, sizeof(cs->cs_key));
	cs->cs_target = id;
	memset(&to, 0, sizeof(to));
	strlcpy(to.to_key, key, sizeof(to.to_key));
	to.to_owner = MSG_OWNER_NONE;
	to.to_kind = MSG_TUNNEL_TERMINAL;
	to.to_id = id;
	to.to_offset = (uint64_t)replay;
	chan_who(ch, &w);
	svc_tunnel_open(&w, MSG_OWNER_NONE, key, &to, chan_tunnel_answer, cs);
}
