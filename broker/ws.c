/*
 * A WebSocket server connection (RFC 6455) on a descriptor taken over
 * from the HTTP server (docs/interactive.md, "WebSocket").  The framing
 * is libwslay's event API, never ours: it unmasks, reassembles
 * fragments, answers pings and closes, and refuses what the RFC
 * refuses (an unmasked client frame, a reserved bit or opcode, a
 * control frame fragmented or over 125 bytes: close 1002; a message
 * over the bound: close 1009).  We add the checks it leaves to its
 * user: text must be UTF-8 (close 1007), and the deadlines.
 *
 * Bytes move through a bufferevent: wslay's recv callback takes from
 * its input, its send callback adds to its output.  So everything the
 * broker holds for a connection is the input not yet framed (read only
 * while the output is under WS_OUT_HIGH, so that a peer flooding pings
 * while never reading makes no pongs pile up), the one message being
 * reassembled (at most msgmax) and the output, which the user bounds by
 * ws_room() and which is closed when it has not moved for WS_STALL_SEC.
 * A connection that hears nothing for WS_PING_SEC is pinged, and closed
 * after WS_IDLE_SEC of silence; browsers answer pings by themselves.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/event_struct.h>
#include <sha1.h>
#include <wslay/wslay.h>

#include "fenced.h"
#include "log.h"
#include "proc.h"
#include "broker.h"
#include "ws.h"

#define WS_GUID		"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
#define WS_TICK_SEC	1	/* deadlines checked this often */
#define WS_READ_CHUNK	(16U * 1024)	/* framed per wslay recv */

struct ws {
	struct bufferevent	*ws_bev;
	wslay_event_context_ptr	 ws_ctx;
	const struct ws_ops	*ws_ops;
	void			*ws_arg;
	struct event		 ws_tick;
	struct event		 ws_end;	/* wo_closed from the loop */
	int64_t			 ws_rx_at;	/* last bytes from the peer */
	int64_t			 ws_tx_at;	/* last bytes written, or when
						   the output was empty */
	int64_t			 ws_ping_at;	/* last ping we sent */
	int64_t			 ws_close_at;	/* our close was queued */
	int			 ws_paused;	/* by its user */
	int			 ws_closing;	/* our close is queued */
	int			 ws_refused;	/* a frame refused: our code */
	int			 ws_closing_first;	/* ws_close() before the
						   peer's close */
	int			 ws_close_wanted;	/* ours, to queue */
	unsigned int		 ws_close_code;
	uint8_t			 ws_close_reason[WS_REASON_MAX];
	size_t			 ws_close_len;
	int			 ws_eof;	/* the peer's end is gone */
	int			 ws_running;	/* inside ws_run() */
	int			 ws_again;	/* run once more after */
	int			 ws_full;	/* over WS_OUT_HIGH: user told
						   when it drains */
	int			 ws_done;	/* over: freed after callbacks */
	unsigned int		 ws_code;	/* the close code, for the user */
};

static void	ws_run(struct ws *, int);
static void	ws_finish(struct ws *, unsigned int);
static void	ws_endcb(evutil_socket_t, short, void *);

static int64_t
ws_now(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (ts.tv_sec);
}

static const char ws_b64[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* The number of bytes a strict, padded base64 text decodes to; -1. */
static int
ws_b64_len(const char *s)
{
	size_t	 len = strlen(s), i, pad = 0;

	if (len == 0 || len % 4 != 0)
		return (-1);
	for (i = 0; i < len; i++) {
		if (s[i] == '=') {
			if (i < len - 2)
				return (-1);
			pad++;
		} else if (pad > 0 || strchr(ws_b64, s[i]) == NULL ||
		    s[i] == '\0')
			return (-1);
	}
	return ((int)(len / 4 * 3 - pad));
}

int
ws_handshake_check(const struct ws_handshake *h, const char **why,
    int *status)
{
	const char	*p, *e;
	size_t		 n;
	int		 upgrade = 0;

	*status = 400;
	if (h->wh_method == NULL || strcmp(h->wh_method, "GET") != 0) {
		*why = "a WebSocket opens with GET";
		*status = 405;
		return (-1);
	}
	if (!h->wh_http11) {
		*why = "a WebSocket opens over HTTP/1.1";
		return (-1);
	}
	if (h->wh_upgrade == NULL || strcasecmp(h->wh_upgrade,
	    "websocket") != 0) {
		*why = "no \"Upgrade: websocket\" header";
		*status = 426;
		return (-1);
	}
	/* Connection is a list of tokens: one of them is upgrade. */
	for (p = h->wh_connection; p != NULL && *p != '\0'; p = e) {
		p += strspn(p, " \t,");
		n = strcspn(p, " \t,");
		if (n == strlen("upgrade") && strncasecmp(p, "upgrade", n) == 0)
			upgrade = 1;
		e = p + n;
	}
	if (!upgrade) {
		*why = "the Connection header does not name upgrade";
		return (-1);
	}
	if (h->wh_version == NULL || strcmp(h->wh_version, "13") != 0) {
		*why = "only WebSocket version 13 is spoken";
		*status = 426;
		return (-1);
	}
	if (h->wh_key == NULL || strlen(h->wh_key) != WS_KEY_LEN ||
	    ws_b64_len(h->wh_key) != 16) {
		*why = "Sec-WebSocket-Key is not 16 bytes in base64";
		return (-1);
	}
	*why = NULL;
	*status = 101;
	return (0);
}

void
ws_accept_key(const char *key, char out[WS_ACCEPT_LEN + 1])
{
	SHA1_CTX	 ctx;
	uint8_t		 d[SHA1_DIGEST_LENGTH];
	uint32_t	 v;
	size_t		 i, n = 0;

	SHA1Init(&ctx);
	SHA1Update(&ctx, (const uint8_t *)key, strlen(key));
	SHA1Update(&ctx, (const uint8_t *)WS_GUID, strlen(WS_GUID));
	SHA1Final(d, &ctx);
	/* 20 bytes: six groups of three, then two and a pad. */
	for (i = 0; i + 3 <= sizeof(d); i += 3) {
		v = (uint32_t)d[i] << 16 | (uint32_t)d[i + 1] << 8 | d[i + 2];
		out[n++] = ws_b64[v >> 18 & 63];
		out[n++] = ws_b64[v >> 12 & 63];
		out[n++] = ws_b64[v >> 6 & 63];
		out[n++] = ws_b64[v & 63];
	}
	v = (uint32_t)d[18] << 16 | (uint32_t)d[19] << 8;
	out[n++] = ws_b64[v >> 18 & 63];
	out[n++] = ws_b64[v >> 12 & 63];
	out[n++] = ws_b64[v >> 6 & 63];
	out[n++] = '=';
	out[n] = '\0';
}

/*
 * Strict UTF-8 (RFC 3629): no overlong form, no surrogate, nothing past
 * U+10FFFF.  1 if p holds only that.
 */
static int
ws_utf8(const uint8_t *p, size_t len)
{
	size_t		 i = 0, k, n;
	uint32_t	 c, min;

	while (i < len) {
		c = p[i];
		if (c < 0x80) {
			i++;
			continue;
		}
		if ((c & 0xe0) == 0xc0) {
			n = 1;
			c &= 0x1f;
			min = 0x80;
		} else if ((c & 0xf0) == 0xe0) {
			n = 2;
			c &= 0x0f;
			min = 0x800;
		} else if ((c & 0xf8) == 0xf0) {
			n = 3;
			c &= 0x07;
			min = 0x10000;
		} else
			return (0);
		if (len - i - 1 < n)
			return (0);
		for (k = 1; k <= n; k++) {
			if ((p[i + k] & 0xc0) != 0x80)
				return (0);
			c = c << 6 | (p[i + k] & 0x3f);
		}
		if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
			return (0);
		i += n + 1;
	}
	return (1);
}

static ssize_t
ws_recv_cb(wslay_event_context_ptr ctx, uint8_t *buf, size_t len, int flags,
    void *arg)
{
	struct ws	*ws = arg;
	struct evbuffer	*in = bufferevent_get_input(ws->ws_bev);
	int		 n;

	if (len > WS_READ_CHUNK)
		len = WS_READ_CHUNK;
	if ((n = evbuffer_remove(in, buf, len)) <= 0) {
		wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
		return (-1);
	}
	return (n);
}

static ssize_t
ws_send_cb(wslay_event_context_ptr ctx, const uint8_t *data, size_t len,
    int flags, void *arg)
{
	struct ws	*ws = arg;
	struct evbuffer	*out = bufferevent_get_output(ws->ws_bev);

	if (ws->ws_eof || evbuffer_add(out, data, len) == -1) {
		wslay_event_set_error(ctx, WSLAY_ERR_CALLBACK_FAILURE);
		return (-1);
	}
	return ((ssize_t)len);
}

static void
ws_msg_cb(wslay_event_context_ptr ctx,
    const struct wslay_event_on_msg_recv_arg *m, void *arg)
{
	struct ws	*ws = arg;

	ws->ws_rx_at = ws_now();
	if (ws->ws_closing || ws->ws_done)
		return;
	switch (m->opcode) {
	case WSLAY_TEXT_FRAME:
		if (!ws_utf8(m->msg, m->msg_length)) {
			ws_close(ws, WS_CLOSE_INVALID_DATA,
			    "text that is not UTF-8");
			return;
		}
		ws->ws_ops->wo_message(ws->ws_arg, ws, 0, m->msg,
		    m->msg_length);
		break;
	case WSLAY_BINARY_FRAME:
		ws->ws_ops->wo_message(ws->ws_arg, ws, 1, m->msg,
		    m->msg_length);
		break;
	default:
		/* Ping (answered by wslay), pong, close (answered too). */
		break;
	}
}

static const struct wslay_event_callbacks ws_callbacks = {
	.recv_callback = ws_recv_cb,
	.send_callback = ws_send_cb,
	.on_msg_recv_callback = ws_msg_cb,
};

/*
 * The close code of a connection over: the one we sent when we closed
 * first (a refusal, ours or wslay's), else the peer's (1005: it gave
 * none).
 */
static unsigned int
ws_code(struct ws *ws)
{
	wslay_event_context_ptr ctx = ws->ws_ctx;
	unsigned int	 code;

	if (wslay_event_get_close_received(ctx) && !ws->ws_refused &&
	    !ws->ws_closing_first) {
		code = wslay_event_get_status_code_received(ctx);
		return (code != 0 ? code : 1005);
	}
	code = wslay_event_get_status_code_sent(ctx);
	return (code != 0 ? code : 1005);
}

static void
ws_readcb(struct bufferevent *bev, void *arg)
{
	struct ws	*ws = arg;

	ws->ws_rx_at = ws_now();
	ws_run(ws, 1);
}

/* The output fell to WS_OUT_LOW (or to nothing, once closing). */
static void
ws_writecb(struct bufferevent *bev, void *arg)
{
	ws_run(arg, 1);
}

static void
ws_eventcb(struct bufferevent *bev, short what, void *arg)
{
	struct ws	*ws = arg;

	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)) {
		ws->ws_eof = 1;
		/* What it sent before its end is still read. */
		ws_run(ws, 1);
		if (!ws->ws_done)
			ws_finish(ws, wslay_event_get_close_received(ws->ws_ctx) ||
			    wslay_event_get_close_sent(ws->ws_ctx) ?
			    ws_code(ws) : 1006);
	}
}

/* The output moved: its deadline starts again. */
static void
ws_outcb(struct evbuffer *buf, const struct evbuffer_cb_info *info,
    void *arg)
{
	struct ws	*ws = arg;

	if (info->n_deleted > 0 || info->orig_size == 0)
		ws->ws_tx_at = ws_now();
}

static void
ws_tickcb(evutil_socket_t fd, short ev, void *arg)
{
	struct ws	*ws = arg;
	int64_t		 now = ws_now();
	struct evbuffer	*out = bufferevent_get_output(ws->ws_bev);

	if (evbuffer_get_length(out) > 0 && now - ws->ws_tx_at >=
	    WS_STALL_SEC) {
		log_debug("ws: the peer reads nothing for %d s: closed",
		    WS_STALL_SEC);
		ws_finish(ws, 1006);
		return;
	}
	if (ws->ws_closing && now - ws->ws_close_at >= WS_CLOSE_SEC) {
		ws_finish(ws, ws_code(ws));
		return;
	}
	if (!ws->ws_closing && now - ws->ws_rx_at >= WS_IDLE_SEC) {
		ws_close(ws, WS_CLOSE_GOING_AWAY, "idle");
		return;
	}
	if (!ws->ws_closing && now - ws->ws_rx_at >= WS_PING_SEC &&
	    now - ws->ws_ping_at >= WS_PING_SEC) {
		struct wslay_event_msg	 m = { WSLAY_PING, NULL, 0 };

		ws->ws_ping_at = now;
		if (wslay_event_queue_msg(ws->ws_ctx, &m) == 0)
			ws_run(ws, 0);
	}
}

/*
 * Bytes of the peer's read by someone else (the HTTP server, after the
 * head; the fuzzer) into the input, whose end the bufferevent keeps
 * frozen between its own reads.
 */
static int
ws_inject(struct ws *ws, const void *data, size_t len)
{
	struct evbuffer	*in = bufferevent_get_input(ws->ws_bev);
	int		 rv;

	evbuffer_unfreeze(in, 0);
	rv = evbuffer_add(in, data, len);
	evbuffer_freeze(in, 0);
	return (rv);
}

struct ws *
ws_new(int fd, const char *key, const void *pre, size_t prelen,
    size_t msgmax, const struct ws_ops *ops, void *arg)
{
	struct timeval	 tick = { WS_TICK_SEC, 0 };
	char		 accept[WS_ACCEPT_LEN + 1];
	struct ws	*ws;
	struct evbuffer	*out;

	if (msgmax == 0)
		msgmax = WS_MSG_DEFAULT;
	if (msgmax > WS_MSG_CEILING)
		msgmax = WS_MSG_CEILING;
	if ((ws = calloc(1, sizeof(*ws))) == NULL) {
		log_warn("%s: calloc", __func__);
		close(fd);
		return (NULL);
	}
	if (evutil_make_socket_nonblocking(fd) == -1 ||
	    (ws->ws_bev = bufferevent_socket_new(broker_self.ps_evbase, fd,
	    BEV_OPT_CLOSE_ON_FREE)) == NULL) {
		log_warnx("%s: bufferevent_socket_new", __func__);
		close(fd);
		free(ws);
		return (NULL);
	}
	if (wslay_event_context_server_init(&ws->ws_ctx, &ws_callbacks,
	    ws) != 0) {
		log_warnx("%s: wslay_event_context_server_init", __func__);
		bufferevent_free(ws->ws_bev);
		free(ws);
		return (NULL);
	}
	wslay_event_config_set_max_recv_msg_length(ws->ws_ctx, msgmax);
	ws->ws_ops = ops;
	ws->ws_arg = arg;
	ws->ws_rx_at = ws->ws_tx_at = ws->ws_ping_at = ws_now();
	out = bufferevent_get_output(ws->ws_bev);
	if (evbuffer_add_cb(out, ws_outcb, ws) == NULL)
		fatalx("%s: evbuffer_add_cb", __func__);
	bufferevent_setcb(ws->ws_bev, ws_readcb, ws_writecb, ws_eventcb, ws);
	bufferevent_setwatermark(ws->ws_bev, EV_WRITE, WS_OUT_LOW, 0);
	/* The peer's frames are read in chunks; a message is bounded. */
	bufferevent_setwatermark(ws->ws_bev, EV_READ, 0, WS_READ_CHUNK * 4);
	ws_accept_key(key, accept);
	evbuffer_add_printf(out, "HTTP/1.1 101 Switching Protocols\r\n"
	    "Upgrade: websocket\r\nConnection: Upgrade\r\n"
	    "Sec-WebSocket-Accept: %s\r\n\r\n", accept);
	event_assign(&ws->ws_tick, broker_self.ps_evbase, -1, EV_PERSIST,
	    ws_tickcb, ws);
	evtimer_add(&ws->ws_tick, &tick);
	event_assign(&ws->ws_end, broker_self.ps_evbase, -1, 0, ws_endcb, ws);
	bufferevent_enable(ws->ws_bev, EV_READ | EV_WRITE);
	/* Framed from the loop, once our caller holds ws. */
	if (prelen > 0 && ws_inject(ws, pre, prelen) == 0)
		bufferevent_trigger(ws->ws_bev, EV_READ,
		    BEV_TRIG_IGNORE_WATERMARKS | BEV_TRIG_DEFER_CALLBACKS);
	return (ws);
}

/*
 * Frame what the peer sent (while the output has room and the user
 * reads), send what is queued, and see whether the connection is over.
 * Never re-entered: a ws_send() from a user's callback is sent by the
 * run that called it.  Only a full run (from the loop: bytes came, the
 * output drained) reads the peer and tells the user of room: one from
 * ws_send() or ws_close() sends alone, so that no callback of the user
 * runs inside its own call.
 */
static void
ws_run(struct ws *ws, int full)
{
	struct evbuffer	*in = bufferevent_get_input(ws->ws_bev);
	struct evbuffer	*out = bufferevent_get_output(ws->ws_bev);
	wslay_event_context_ptr ctx = ws->ws_ctx;
	int		 r;

	if (ws->ws_done)
		return;
	if (ws->ws_running) {
		ws->ws_again = 1;
		return;
	}
	ws->ws_running = 1;
	do {
		ws->ws_again = 0;
		/*
		 * A frame the RFC refuses makes wslay stop reading, with its
		 * close queued (1002, 1009) or not: then ours, 1002.
		 */
		if (full && !ws->ws_paused &&
		    evbuffer_get_length(out) < WS_OUT_HIGH &&
		    wslay_event_want_read(ctx) &&
		    evbuffer_get_length(in) > 0 &&
		    (r = wslay_event_recv(ctx)) != 0) {
			if (r == WSLAY_ERR_NOMEM) {
				ws_finish(ws, 1006);
				break;
			}
			log_debug("ws: a frame refused (%d)", r);
			ws->ws_refused = 1;
			(void)wslay_event_queue_close(ctx, WS_CLOSE_PROTOCOL,
			    (const uint8_t *)"protocol error", 14);
			wslay_event_shutdown_read(ctx);
		}
		if (wslay_event_want_write(ctx) && wslay_event_send(ctx) != 0) {
			ws_finish(ws, 1006);
			break;
		}
		if (ws->ws_close_wanted) {
			ws->ws_close_wanted = 0;
			(void)wslay_event_queue_close(ctx, ws->ws_close_code,
			    ws->ws_close_reason, ws->ws_close_len);
			ws->ws_again = 1;
		}
	} while (ws->ws_again && !ws->ws_done);
	ws->ws_running = 0;
	if (ws->ws_done)
		return;
	/* The peer's input stays unread while the output is full. */
	if (ws->ws_paused || evbuffer_get_length(out) >= WS_OUT_HIGH)
		bufferevent_disable(ws->ws_bev, EV_READ);
	else if (!ws->ws_eof)
		bufferevent_enable(ws->ws_bev, EV_READ);
	if (!wslay_event_want_read(ctx) && !wslay_event_want_write(ctx)) {
		/* Closed both ways (or refused): over once written. */
		ws->ws_closing = 1;
		if (ws->ws_close_at == 0)
			ws->ws_close_at = ws_now();
		if (evbuffer_get_length(out) == 0 || ws->ws_eof)
			ws_finish(ws, ws_code(ws));
		else
			bufferevent_setwatermark(ws->ws_bev, EV_WRITE, 0, 0);
	} else if (full && ws->ws_full &&
	    evbuffer_get_length(out) <= WS_OUT_LOW) {
		ws->ws_full = 0;
		ws->ws_ops->wo_drained(ws->ws_arg, ws);
	}
}

/*
 * The end: no more bytes either way; the user hears it from the loop
 * (ws_endcb), never inside one of its own calls.
 */
static void
ws_finish(struct ws *ws, unsigned int code)
{
	if (ws->ws_done)
		return;
	ws->ws_done = 1;
	ws->ws_code = code;
	bufferevent_disable(ws->ws_bev, EV_READ | EV_WRITE);
	evtimer_del(&ws->ws_tick);
	event_active(&ws->ws_end, EV_TIMEOUT, 1);
}

static void
ws_endcb(evutil_socket_t fd, short ev, void *arg)
{
	struct ws	*ws = arg;

	log_debug("ws: closed, code %u", ws->ws_code);
	ws->ws_ops->wo_closed(ws->ws_arg, ws, ws->ws_code);
	ws_free(ws);
}

int
ws_send(struct ws *ws, int binary, const void *data, size_t len)
{
	struct wslay_event_msg	 m;

	if (ws->ws_done || ws->ws_closing)
		return (-1);
	m.opcode = binary ? WSLAY_BINARY_FRAME : WSLAY_TEXT_FRAME;
	m.msg = data;
	m.msg_length = len;
	if (wslay_event_queue_msg(ws->ws_ctx, &m) != 0)
		return (-1);
	ws_run(ws, 0);
	return (0);
}

size_t
ws_queued(const struct ws *ws)
{
	return (wslay_event_get_queued_msg_length(ws->ws_ctx) +
	    evbuffer_get_length(bufferevent_get_output(ws->ws_bev)));
}

int
ws_room(struct ws *ws)
{
	if (ws->ws_done || ws->ws_closing)
		return (0);
	if (ws_queued(ws) < WS_OUT_HIGH)
		return (1);
	ws->ws_full = 1;
	return (0);
}

void
ws_pause(struct ws *ws, int on)
{
	if (ws->ws_paused == on || ws->ws_done)
		return;
	ws->ws_paused = on;
	if (!on)
		/* Frames read while paused are framed from the loop. */
		bufferevent_trigger(ws->ws_bev, EV_READ,
		    BEV_TRIG_IGNORE_WATERMARKS | BEV_TRIG_DEFER_CALLBACKS);
	else
		bufferevent_disable(ws->ws_bev, EV_READ);
}

void
ws_close(struct ws *ws, unsigned int code, const char *reason)
{
	size_t	 len = reason == NULL ? 0 : strlen(reason);

	if (ws->ws_done || ws->ws_closing)
		return;
	if (len > WS_REASON_MAX)
		len = WS_REASON_MAX;
	ws->ws_closing = 1;
	ws->ws_closing_first = !wslay_event_get_close_received(ws->ws_ctx);
	ws->ws_close_at = ws_now();
	/*
	 * wslay sends a control frame before queued messages: the close
	 * is queued by ws_run() once what was sent before it went.
	 */
	ws->ws_close_code = code;
	if (len > 0)
		memcpy(ws->ws_close_reason, reason, len);
	ws->ws_close_len = len;
	ws->ws_close_wanted = 1;
	ws_run(ws, 0);
}

void
ws_free(struct ws *ws)
{
	if (ws == NULL)
		return;
	evtimer_del(&ws->ws_tick);
	event_del(&ws->ws_end);
	evbuffer_remove_cb(bufferevent_get_output(ws->ws_bev), ws_outcb, ws);
	bufferevent_free(ws->ws_bev);
	wslay_event_context_free(ws->ws_ctx);
	free(ws);
}

void
ws_feed(struct ws *ws, const void *data, size_t len)
{
	if (ws->ws_done)
		return;
	if (ws_inject(ws, data, len) == 0)
		ws->ws_rx_at = ws_now();
	ws_run(ws, 1);
}
