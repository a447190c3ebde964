/*
 * The WebSockets' way in (docs/interactive.md, "WebSocket"): the rows
 * of http_take_rows[] for /api/channel and .../terminals/<id>/attach,
 * the opening handshake checked (Host, Origin, the WebSocket's own
 * headers) and refused in JSON, and a terminal's attachment authorised
 * by the token header or a terminal ticket.
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

#define API_ENVS_PREFIX		"/api/environments/"
#define CHAN_REFUSE_SEC		5	/* a refusal's answer goes by then */

/* A refusal on its way out before the connection ends. */
struct chan_refusal {
	struct http_taken	*cr_ht;
	struct bufferevent	*cr_bev;
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

/*
 * The refusal in JSON, as every answer; a 426 also says the version we
 * speak (RFC 6455, 4.4), after its status line.
 */
static void
chan_refusal_write(struct evbuffer *out, int status, const char *code,
    const char *msg)
{
	struct evbuffer		*tmp;
	struct evbuffer_ptr	 eol;

	if (status != 426 || (tmp = evbuffer_new()) == NULL) {
		http_taken_error(out, status, code, msg);
		return;
	}
	http_taken_error(tmp, status, code, msg);
	eol = evbuffer_search(tmp, "\r\n", 2, NULL);
	if (eol.pos == -1) {
		evbuffer_add_buffer(out, tmp);
		evbuffer_free(tmp);
		return;
	}
	evbuffer_remove_buffer(tmp, out, eol.pos + 2);
	evbuffer_add_printf(out, "Sec-WebSocket-Version: 13\r\n");
	evbuffer_add_buffer(out, tmp);
	evbuffer_free(tmp);
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
	chan_refusal_write(bufferevent_get_output(cr->cr_bev), status, code,
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
int
chan_handshake(struct http_taken *ht, int origin_needed)
{
	const struct http_head *h = ht->ht_head;
	struct ws_handshake	 wh;
	const char		*why;
	int			 status;

	if (h->h_host_n != 1 || !http_host_origin_ok(h->h_host, NULL)) {
		chan_refuse(ht, 421, "bad-host", "the Host names no address "
		    "this daemon listens on");
		return (-1);
	}
	if (h->h_origin_n > 1 || (h->h_origin_n == 1 &&
	    !http_host_origin_ok(h->h_host, h->h_origin))) {
		chan_refuse(ht, 403, "bad-origin", "the Origin is neither "
		    "listed nor the API's own");
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

unsigned int
chan_user_count(uid_t uid)
{
	struct channel	*ch;
	unsigned int	 n = 0;

	TAILQ_FOREACH(ch, &chan_all, ch_entry)
		if (ch->ch_authed && ch->ch_uid == uid)
			n++;
	return (n);
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
