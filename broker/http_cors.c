/*
 * The browser's rules, before anyone's token is looked at
 * (docs/http.md, "Origins"):
 *
 * - Host: a request must name the address the API listens on, so a
 *   page that rebinds a name of its own to 127.0.0.1 reaches nothing
 *   (421 bad-host).
 * - Origin: a page of an origin `http origin' lists gets CORS headers
 *   and its preflights answered without a token; a page of the API's
 *   own origin needs no listing; any other origin is refused whatever
 *   it asks (403 bad-origin) and gets no CORS header.  A request with
 *   no Origin at all (curl, a program) is not a page's and goes on.
 *
 * Then who asks: the host token (http_auth()).
 */
#include <sys/types.h>
#include <sys/queue.h>

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <jansson.h>

#include "fenced.h"
#include "imsg.h"
#include "log.h"
#include "msg.h"
#include "proc.h"
#include "broker.h"
#include "http.h"
#include "http_head.h"

#define CORS_METHODS	"GET, POST, PUT, DELETE"
#define CORS_HEADERS	HTTP_TOKEN_HEADER ", authorization, content-type"
#define CORS_MAX_AGE	"600"		/* seconds a preflight holds */
#define CORS_EXPOSE	"Retry-After, WWW-Authenticate"
#define HOST_NAMES	2		/* the address, and localhost */
#define HOST_LEN	(FENCED_ADDR_MAX + 2)	/* [::1] */

/*
 * The names a Host header may give, without the port: the address as
 * configured ([::1] bracketed), and localhost for 127.0.0.1 and ::1.
 * Returns how many.
 */
static int
cors_host_names(char names[HOST_NAMES][HOST_LEN])
{
	const struct fenced_config *c = &broker_self.ps_conf;
	int		 v6 = strchr(c->c_listen_addr, ':') != NULL, n = 0;

	snprintf(names[n++], HOST_LEN, v6 ? "[%s]" : "%s", c->c_listen_addr);
	if (strcmp(c->c_listen_addr, "127.0.0.1") == 0 ||
	    strcmp(c->c_listen_addr, "::1") == 0)
		strlcpy(names[n++], "localhost", HOST_LEN);
	return (n);
}

/*
 * Whether s (len bytes) is NAME:PORT for one of our names, or NAME
 * alone when the port is 80.  Names compare without case; nothing
 * else may follow, not even a dot.
 */
static int
cors_authority_ours(const char *s, size_t len)
{
	char		 names[HOST_NAMES][HOST_LEN], port[8];
	uint16_t	 p = broker_self.ps_conf.c_listen_port;
	size_t		 nl;
	int		 i, n;

	n = cors_host_names(names);
	snprintf(port, sizeof(port), ":%u", (unsigned)p);
	for (i = 0; i < n; i++) {
		nl = strlen(names[i]);
		if (len < nl || strncasecmp(s, names[i], nl) != 0)
			continue;
		if (len == nl && p == 80)
			return (1);
		if (len - nl == strlen(port) &&
		    memcmp(s + nl, port, len - nl) == 0)
			return (1);
	}
	return (0);
}

/* The one value of header name, NULL if none; *count says how many. */
static const char *
cors_header(struct hreq *hr, const char *name, int *count)
{
	struct evkeyvalq *h = evhttp_request_get_input_headers(hr->hr_req);
	struct evkeyval	*kv;
	const char	*v = NULL;

	*count = 0;
	TAILQ_FOREACH(kv, h, next)
		if (strcasecmp(kv->key, name) == 0) {
			v = kv->value;
			(*count)++;
		}
	return (v);
}

/*
 * Exactly one Host header naming our address and port, and a target
 * that is a path (an absolute URI would name a host of its own).
 * Returns 0, or -1 with the answer (421) sent.
 */
int
http_host_check(struct hreq *hr)
{
	const char	*host, *uri = evhttp_request_get_uri(hr->hr_req);
	int		 n;

	host = cors_header(hr, "Host", &n);
	if (n == 1 && uri != NULL && uri[0] == '/' &&
	    cors_authority_ours(host, strlen(host)))
		return (0);
	http_header(hr, "Connection", "close");
	http_error(hr, 421, "bad-host", "%s", n == 0 ? "no Host header; "
	    "it must name the address the API listens on" : n > 1 ?
	    "more than one Host header" : uri == NULL || uri[0] != '/' ?
	    "the request target must be a path" :
	    "the Host header does not name the address the API listens "
	    "on (a DNS rebinding page, or the wrong port)");
	return (-1);
}

/* Origin is the API's own: http://, then a Host we would take. */
static int
cors_same_origin(const char *origin)
{
	if (strncmp(origin, "http://", 7) != 0)
		return (0);
	return (cors_authority_ours(origin + 7, strlen(origin + 7)));
}

static int
cors_listed(const char *origin)
{
	const struct fenced_config *c = &broker_self.ps_conf;
	uint32_t	 i;

	for (i = 0; i < c->c_http_norigins; i++)
		if (strcmp(c->c_http_origin[i], origin) == 0)
			return (1);
	return (0);
}

/* A preflight of a listed origin: what it may send, no token needed. */
static void
cors_preflight(struct hreq *hr)
{
	int	 n;

	http_header(hr, "Access-Control-Allow-Methods", CORS_METHODS);
	http_header(hr, "Access-Control-Allow-Headers", CORS_HEADERS);
	http_header(hr, "Access-Control-Max-Age", CORS_MAX_AGE);
	/* Chromium's Private Network Access asks this of loopback. */
	if (cors_header(hr, "Access-Control-Request-Private-Network",
	    &n) != NULL && n == 1)
		http_header(hr, "Access-Control-Allow-Private-Network",
		    "true");
	http_reply_empty(hr, 204);
}

/*
 * The request's Origin.  None: go on (0).  Listed: noted for the CORS
 * headers of the answer, and a preflight (OPTIONS) is answered here
 * (1).  The API's own: go on.  Anything else, "null" included, or more
 * than one: 403 bad-origin, with no CORS header (1).
 */
int
http_origin_check(struct hreq *hr)
{
	const char	*origin;
	int		 n, listed;

	if ((origin = cors_header(hr, "Origin", &n)) == NULL)
		return (0);
	listed = n == 1 && cors_listed(origin);
	if (listed)
		strlcpy(hr->hr_origin, origin, sizeof(hr->hr_origin));
	if (n != 1 || (!listed && !cors_same_origin(origin))) {
		log_debug("http: origin refused");
		http_header(hr, "Connection", "close");
		http_error(hr, 403, "bad-origin", "%s", n != 1 ?
		    "more than one Origin header" : "requests from this "
		    "origin are refused; `http origin' in fenced.conf lists "
		    "the pages that may call the API");
		return (1);
	}
	if (evhttp_request_get_command(hr->hr_req) == EVHTTP_REQ_OPTIONS) {
		cors_preflight(hr);
		return (1);
	}
	return (0);
}

/*
 * The same two rules on header values alone, for a request whose body
 * is not read yet (http.c: whether a PUT of a file may bring more than
 * `http body max'): host is the one Host header's value; origin the one
 * Origin header's, or NULL when there is none.  1 if both pass.
 */
int
http_host_origin_ok(const char *host, const char *origin)
{
	if (!cors_authority_ours(host, strlen(host)))
		return (0);
	return (origin == NULL || cors_listed(origin) ||
	    cors_same_origin(origin));
}

/* On every answer to a listed origin (http_send()). */
void
http_cors_headers(struct hreq *hr)
{
	if (hr->hr_origin[0] == '\0')
		return;
	http_header(hr, "Access-Control-Allow-Origin", hr->hr_origin);
	http_header(hr, "Access-Control-Expose-Headers", CORS_EXPOSE);
	http_header(hr, "Vary", "Origin");
}

/*
 * Who asks: exactly one x-voicebox-host-token header, or one
 * Authorization: Bearer (the same token when both), with a stored
 * token.  Returns 0 and sets *uid, or -1 with the answer sent.
 */
int
http_auth(struct hreq *hr, uid_t *uid)
{
	struct evkeyvalq *h = evhttp_request_get_input_headers(hr->hr_req);
	struct evkeyval	*kv;
	const char	*token = NULL, *why = NULL;
	char		 tok[HOSTTOKEN_TEXT + 1], bearer[HOSTTOKEN_TEXT + 1];
	unsigned int	 n = 0, nb = 0;
	int		 r;

	tok[0] = '\0';
	TAILQ_FOREACH(kv, h, next) {
		if (strcasecmp(kv->key, HTTP_TOKEN_HEADER) == 0) {
			token = kv->value;
			n++;
		} else if (strcasecmp(kv->key, "Authorization") == 0 &&
		    http_head_bearer(kv->value, strlen(kv->value), bearer,
		    sizeof(bearer)))
			nb++;
	}
	if (n > 1)
		why = "more than one " HTTP_TOKEN_HEADER " header";
	else if (n == 1 && strlcpy(tok, token, sizeof(tok)) >= sizeof(tok))
		tok[0] = '\0';		/* too long: not a token */
	if (why != NULL || http_head_token_merge(tok, sizeof(tok), &n,
	    bearer, nb, &why) == -1) {
		explicit_bzero(bearer, sizeof(bearer));
		explicit_bzero(tok, sizeof(tok));
		http_header(hr, "Connection", "close");
		http_error(hr, 400, "bad-request", "%s", why);
		return (-1);
	}
	r = n == 0 ? -1 : token_lookup_name(tok, strlen(tok), uid,
	    hr->hr_token, sizeof(hr->hr_token));
	explicit_bzero(bearer, sizeof(bearer));
	explicit_bzero(tok, sizeof(tok));
	if (r == -1) {
		/* Nothing more to say to one without a token: close. */
		http_header(hr, "Connection", "close");
		http_header(hr, "WWW-Authenticate",
		    "Bearer realm=\"fenced\"");
		http_error(hr, 401, "unauthorized", "%s", n == 0 ?
		    "no " HTTP_TOKEN_HEADER " header (or Authorization: "
		    "Bearer); `fencectl token' gives you one" :
		    "the host token is not valid");
		return (-1);
	}
	return (0);
}
