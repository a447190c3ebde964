/*
 * Who a relayed request is and what it names (relay.h).  Every request
 * of a relayed connection passes here, not only the first: a token
 * deleted meanwhile, or a fence stopped, stops the next one.
 *
 * - The path form, /api/environments/<key>/ports/<port>/<rest>, on a
 *   Host the API takes (http_cors.c), with the host token: the token's
 *   owner's running fence <key>; the fence sees /<rest>.
 * - The host form, <port>-<label>.<key>.localhost:<listen port>: the
 *   running fence <key> whose label is <label>, with the token of its
 *   owner or the fenced_port cookie of that fence, label and port; the
 *   fence sees the target as sent.  GET /.fenced/ticket?t=T there takes
 *   a ticket of that fence, label and port (POST .../tickets) and
 *   answers 303 to / with the cookie.
 * - Origin: none, or exactly the origin of the request's own Host.
 *   Anything else is 403, whatever else the request carries.
 * - A fence that is not the asker's, a label, key or port that does not
 *   match: 404, the same as for no such fence.
 */
#include <sys/types.h>
#include <sys/queue.h>

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>
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

#define ENVS_PREFIX	"/api/environments/"
#define PORTS_INFIX	"/ports/"
#define TICKET_PATH	"/.fenced/ticket"
#define HOST_SUFFIX	".localhost"

static int
relay_refuse(struct relay_refusal *rr, int status, const char *code,
    const char *msg)
{
	rr->rr_status = status;
	rr->rr_code = code;
	strlcpy(rr->rr_msg, msg, sizeof(rr->rr_msg));
	return (-1);
}

/* A port number as a path or a name gives it: 1..65535, no 0 first. */
static int
relay_port(const char *s, size_t len, uint32_t *port)
{
	uint32_t	 p = 0;
	size_t		 i;

	if (len == 0 || len > 5 || s[0] == '0')
		return (-1);
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return (-1);
		p = p * 10 + (s[i] - '0');
	}
	if (p == 0 || p > 65535)
		return (-1);
	*port = p;
	return (0);
}

/*
 * The path form's target: key, port and what follows ("/" at least,
 * the query kept).  -1 if it is not one.
 */
static int
relay_path_parse(const struct http_head *h, struct relay_target *rt)
{
	const char	*key, *port, *rest;
	size_t		 keylen, portlen;

	if (strncmp(h->h_target, ENVS_PREFIX, strlen(ENVS_PREFIX)) != 0)
		return (-1);
	key = h->h_target + strlen(ENVS_PREFIX);
	keylen = strcspn(key, "/?");
	if (keylen == 0 || keylen > FENCE_KEY_MAX ||
	    strncmp(key + keylen, PORTS_INFIX, strlen(PORTS_INFIX)) != 0)
		return (-1);
	memcpy(rt->rt_key, key, keylen);
	rt->rt_key[keylen] = '\0';
	port = key + keylen + strlen(PORTS_INFIX);
	portlen = strcspn(port, "/?");
	if (!fence_key_valid(rt->rt_key) ||
	    relay_port(port, portlen, &rt->rt_port) == -1)
		return (-1);
	rest = port + portlen;
	snprintf(rt->rt_target, sizeof(rt->rt_target), "%s%s",
	    rest[0] == '/' ? "" : "/", rest);
	return (0);
}

int
relay_match_path(const struct http_head *h)
{
	struct relay_target rt;

	return (relay_path_parse(h, &rt) == 0);
}

/*
 * The host form's name: <port>-<label>.<key>.localhost, then :<listen
 * port> (or nothing when that is 80).  -1 if the Host is not one of
 * ours of that shape.
 */
static int
relay_host_parse(const char *host, struct relay_target *rt)
{
	char		 name[HTTP_HEAD_VALUE], want[8];
	const char	*label, *key, *dot;
	size_t		 i, n;
	uint16_t	 lp = broker_self.ps_conf.c_listen_port;

	if (strlcpy(name, host, sizeof(name)) >= sizeof(name))
		return (-1);
	for (i = 0; name[i] != '\0'; i++)
		name[i] = tolower((unsigned char)name[i]);
	snprintf(want, sizeof(want), ":%u", (unsigned)lp);
	n = strlen(name);
	if (n > strlen(want) && strcmp(name + n - strlen(want), want) == 0)
		name[n - strlen(want)] = '\0';
	else if (lp != 80 || strchr(name, ':') != NULL)
		return (-1);
	n = strlen(name);
	if (n <= strlen(HOST_SUFFIX) ||
	    strcmp(name + n - strlen(HOST_SUFFIX), HOST_SUFFIX) != 0)
		return (-1);
	name[n - strlen(HOST_SUFFIX)] = '\0';
	n = strcspn(name, "-");
	if (name[n] != '-' || relay_port(name, n, &rt->rt_port) == -1)
		return (-1);
	label = name + n + 1;
	if ((dot = strchr(label, '.')) == NULL ||
	    (size_t)(dot - label) != SVC_LABEL_LEN ||
	    strspn(label, "0123456789abcdef") != SVC_LABEL_LEN)
		return (-1);
	key = dot + 1;
	if (strlen(key) > FENCE_KEY_MAX || !fence_key_valid(key))
		return (-1);
	memcpy(rt->rt_label, label, SVC_LABEL_LEN);
	rt->rt_label[SVC_LABEL_LEN] = '\0';
	strlcpy(rt->rt_key, key, sizeof(rt->rt_key));
	return (0);
}

int
relay_match_host(const struct http_head *h)
{
	struct relay_target rt;

	return (h->h_host_n == 1 && relay_host_parse(h->h_host, &rt) == 0);
}

/* Origin: none, or http:// and the Host exactly (its case aside). */
static int
relay_origin_ok(const struct http_head *h)
{
	if (h->h_origin_n == 0)
		return (1);
	return (h->h_origin_n == 1 && strncmp(h->h_origin, "http://", 7) == 0 &&
	    strcasecmp(h->h_origin + 7, h->h_host) == 0);
}

/*
 * The host token, if there is one: 1 and rt's uid and token name, 0
 * none, -1 refused.
 */
static int
relay_token(const struct http_head *h, struct relay_target *rt,
    struct relay_refusal *rr)
{
	if (h->h_token_n == 0)
		return (0);
	if (h->h_token_n > 1)
		return (relay_refuse(rr, 400, "bad-request", "more than one "
		    HTTP_TOKEN_HEADER " header"));
	if (token_lookup_name(h->h_token, strlen(h->h_token), &rt->rt_uid,
	    rt->rt_token, sizeof(rt->rt_token)) == -1)
		return (relay_refuse(rr, 401, "unauthorized", "the host token "
		    "is not valid"));
	return (1);
}

static int
relay_not_found(struct relay_refusal *rr, const struct relay_target *rt)
{
	char	 msg[160];

	snprintf(msg, sizeof(msg), "no environment %s with a port %u to "
	    "relay to", rt->rt_key, rt->rt_port);
	return (relay_refuse(rr, 404, "not-found", msg));
}

static int
relay_auth_path(const struct http_head *h, struct relay_target *rt,
    struct relay_refusal *rr)
{
	struct svc_who	 w;
	int		 r;

	if (relay_path_parse(h, rt) == -1)
		return (relay_refuse(rr, 404, "not-found", "not a port of an "
		    "environment"));
	if ((r = relay_token(h, rt, rr)) == -1)
		return (-1);
	if (r == 0)
		return (relay_refuse(rr, 401, "unauthorized", "no "
		    HTTP_TOKEN_HEADER " header; `fencectl token' gives you "
		    "one"));
	memset(&w, 0, sizeof(w));
	w.w_uid = rt->rt_uid;
	w.w_noun = "environment";
	if (!svc_fence_known(&w, MSG_OWNER_NONE, rt->rt_key))
		return (relay_not_found(rr, rt));
	rt->rt_owner = rt->rt_uid;
	return (0);
}

/* GET /.fenced/ticket?t=T on the host form: the ticket of this name. */
static int
relay_auth_ticket(const struct http_head *h, struct relay_target *rt,
    struct relay_refusal *rr)
{
	struct ticket_grant g;
	const char	*q = h->h_target + h->h_pathlen;

	if (strcmp(h->h_method, "GET") != 0 || strncmp(q, "?t=", 3) != 0 ||
	    ticket_take(q + 3, TICKET_PORT, &g) == -1 ||
	    g.tg_port != rt->rt_port || strcmp(g.tg_key, rt->rt_key) != 0 ||
	    strcmp(g.tg_label, rt->rt_label) != 0 ||
	    svc_label_owner(rt->rt_key, rt->rt_label, &rt->rt_owner) == -1 ||
	    rt->rt_owner != g.tg_uid)
		return (relay_refuse(rr, 403, "bad-ticket", "no such ticket "
		    "for this port: a ticket is good once, within its time, "
		    "on the host it names"));
	memset(&g, 0, sizeof(g));
	g.tg_kind = TICKET_PORT_COOKIE;
	g.tg_uid = rt->rt_owner;
	strlcpy(g.tg_key, rt->rt_key, sizeof(g.tg_key));
	strlcpy(g.tg_label, rt->rt_label, sizeof(g.tg_label));
	g.tg_port = rt->rt_port;
	if (ticket_mint(&g, rt->rt_cookie) == -1)
		return (relay_refuse(rr, 429, "too-many-tickets", "too many "
		    "tickets and cookies of this user"));
	rt->rt_uid = rt->rt_owner;
	rt->rt_status = 303;
	return (0);
}

static int
relay_auth_host(const struct http_head *h, struct relay_target *rt,
    struct relay_refusal *rr)
{
	struct ticket_grant g;
	char		 cookie[TICKET_TEXT + 2];
	int		 r, c;

	if (relay_host_parse(h->h_host, rt) == -1)
		return (relay_refuse(rr, 421, "bad-host", "the Host header "
		    "names neither the API nor a port of an environment"));
	strlcpy(rt->rt_target, h->h_target, sizeof(rt->rt_target));
	if (h->h_pathlen == strlen(TICKET_PATH) &&
	    strncmp(h->h_target, TICKET_PATH, h->h_pathlen) == 0)
		return (relay_auth_ticket(h, rt, rr));
	if ((r = relay_token(h, rt, rr)) == -1)
		return (-1);
	if (r == 0) {
		c = http_head_cookie(h, HTTP_PORT_COOKIE, cookie,
		    sizeof(cookie));
		if (c != 1 || ticket_take(cookie, TICKET_PORT_COOKIE,
		    &g) == -1 || g.tg_port != rt->rt_port ||
		    strcmp(g.tg_key, rt->rt_key) != 0 ||
		    strcmp(g.tg_label, rt->rt_label) != 0) {
			explicit_bzero(cookie, sizeof(cookie));
			return (relay_refuse(rr, 401, "unauthorized", "no "
			    "valid " HTTP_PORT_COOKIE " cookie for this port: "
			    "open the URL of a ticket (POST /api/environments/"
			    "<key>/tickets, or `fencectl port') first"));
		}
		explicit_bzero(cookie, sizeof(cookie));
		rt->rt_uid = g.tg_uid;
	}
	if (svc_label_owner(rt->rt_key, rt->rt_label, &rt->rt_owner) == -1 ||
	    rt->rt_owner != rt->rt_uid)
		return (relay_not_found(rr, rt));
	return (0);
}

/*
 * Whether the request h may be relayed, and where: 0 with rt filled
 * in, or -1 with the refusal.  The browser's rules first, then who
 * asks, then what they name.
 */
int
relay_authorise(const struct http_head *h, struct relay_target *rt,
    struct relay_refusal *rr)
{
	int	 api;

	memset(rt, 0, sizeof(*rt));
	if (h->h_host_n != 1)
		return (relay_refuse(rr, 421, "bad-host", "a request needs "
		    "exactly one Host header"));
	if (h->h_target[0] != '/')
		return (relay_refuse(rr, 421, "bad-host", "the request target "
		    "must be a path"));
	if (!relay_origin_ok(h))
		return (relay_refuse(rr, 403, "bad-origin", "a port is "
		    "reached from its own origin, or by a program that sends "
		    "none"));
	if (strcmp(h->h_method, "CONNECT") == 0)
		return (relay_refuse(rr, 405, "method-not-allowed", "CONNECT "
		    "is not relayed"));
	api = http_host_origin_ok(h->h_host, NULL);
	if (api && relay_match_path(h)) {
		rt->rt_form = RELAY_PATH;
		return (relay_auth_path(h, rt, rr));
	}
	rt->rt_form = RELAY_HOST;
	return (relay_auth_host(h, rt, rr));
}

/* The answer to a ticket taken: the cookie, and 303 to /. */
void
relay_answer_ticket(struct evbuffer *out, const struct relay_target *rt)
{
	evbuffer_add_printf(out, "HTTP/1.1 303 See Other\r\n"
	    "Location: /\r\n"
	    "Set-Cookie: %s=%s; HttpOnly; SameSite=Lax; Path=/\r\n"
	    "Cache-Control: no-store\r\n"
	    "Content-Length: 0\r\n\r\n", HTTP_PORT_COOKIE, rt->rt_cookie);
}
