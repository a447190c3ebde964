/*
 * The channel's ops (docs/interactive.md, "/api/channel"): each turned
 * into the fence service's call with the stream as its maker, and the
 * sources of their bytes: watches from the records (svc_watch.c,
 * coalesced per fence while the page reads slowly), an exec's chunks
 * within the service's window, a tunnel's socket read only while its
 * stream has credit and the connection has room (chan_pump()).
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

void
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
void
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

void
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
void
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

void
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

void
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
void
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
void
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

void
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

void
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

void
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
