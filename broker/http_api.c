/*
 * The endpoints of the HTTP API (docs/design.md section 6; fenced-api(7)).
 *
 * A request that passed http.c (token, connection limits) is routed
 * here by path and method, its body checked whole, and only then turned
 * into calls of the fence service (service.c), as the control socket
 * does; its answers come back through api_answer().  Nothing
 * is sent anywhere for a request that is refused.
 */
#include <sys/types.h>
#include <sys/queue.h>

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/buffer.h>
#include <event2/http.h>
#include <jansson.h>

#include "fenced.h"
#include "imsg.h"
#include "log.h"
#include "msg.h"
#include "proc.h"
#include "broker.h"
#include "http.h"
#include "http_api.h"

#define API_ENVS		"/api/environments"
#define API_PROBE		"/api/probe"
#define API_METRICS		"/api/metrics"
/* The text format's version 0.0.4, as Prometheus asks for it. */
#define API_METRICS_TYPE	"text/plain; version=0.0.4; charset=utf-8"
#define API_HOST		"/api/host"



#define M_GET		EVHTTP_REQ_GET
#define M_POST		EVHTTP_REQ_POST
#define M_DELETE	EVHTTP_REQ_DELETE
#define M_PUT		EVHTTP_REQ_PUT
#define API_FILES	"/files/"	/* a prefix: the path follows */

static const struct api_route {
	const char		*ar_suffix;	/* after the key */
	enum http_endpoint	 ar_endpoint;
	int			 ar_methods;
	const char		*ar_allow;
	int			 ar_query;	/* takes ?refresh= */
} api_routes[] = {
	{ "",		EP_ENV,		M_GET | M_POST | M_DELETE,
	    "GET, HEAD, POST, DELETE", 0 },
	{ "/exec",	EP_EXEC,	M_POST,		"POST", 0 },
	{ "/git/config", EP_GIT_CONFIG,	M_GET | M_POST,	"GET, HEAD, POST", 0 },
	{ "/git/init",	EP_GIT_INIT,	M_POST,		"POST", 0 },
	{ "/probe",	EP_PROBE,	M_GET,		"GET, HEAD", 1 },
	{ "/processes",	EP_PROCS,	M_GET | M_POST,	"GET, HEAD, POST", 0 },
	{ "/tickets",	EP_TICKETS,	M_POST,		"POST", 0 },
	{ "/ports",	EP_PORTS,	M_GET,		"GET, HEAD", 0 },
	{ "/terminals",	EP_TERMS,	M_GET | M_POST,	"GET, HEAD, POST", 0 },
	{ API_FILES,	EP_FILES,	M_GET | M_PUT | M_DELETE,
	    "GET, HEAD, PUT, DELETE", 2 },
	{ "/snapshots",	EP_SNAPS,	M_GET | M_POST,	"GET, HEAD, POST", 0 },
	{ "/undo",	EP_UNDO,	M_POST,		"POST", 0 },
};
static const struct api_route api_route_proc =
    { "/processes/", EP_PROC, M_GET | M_DELETE, "GET, HEAD, DELETE", 2 };
static const struct api_route api_route_term =
    { "/terminals/", EP_TERM, M_GET | M_DELETE, "GET, HEAD, DELETE", 0 };
static const struct api_route api_route_stdin =
    { "/stdin", EP_PROC_STDIN, M_POST, "POST", 2 };
static const struct api_route api_route_snap =
    { "/snapshots/", EP_SNAP, M_GET | M_DELETE, "GET, HEAD, DELETE", 0 };
static const struct api_route api_route_snap_restore =
    { "/restore", EP_SNAP_RESTORE, M_POST, "POST", 0 };
/* The paths outside an environment's: ar_suffix is the whole path. */
static const struct api_route api_routes_top[] = {
	{ API_ENVS, EP_LIST, M_GET, "GET, HEAD", 0 },
	{ API_PROBE, EP_PROBE_DEFAULT, M_GET, "GET, HEAD", 1 },
	{ API_METRICS, EP_METRICS, M_GET, "GET, HEAD", 0 },
	{ API_HOST, EP_HOST, M_GET, "GET, HEAD", 0 },
};


/*
 * A listing gathered in hr_snaps (snapshots, the host doctor's rows)
 * that will not be answered: an error comes instead.
 */
void
api_gathered_drop(struct hreq *hr)
{
	json_decref(hr->hr_snaps);
	hr->hr_snaps = NULL;
}

/* For http_stream.c: an answer that comes before its stream began. */
void
http_api_answer(void *arg, const struct svc_answer *a)
{
	api_answer(arg, a);
}


/* Who asks: the token's owner, who acts on their own fences alone. */
void
api_who(const struct hreq *hr, struct svc_who *w)
{
	w->w_uid = hr->hr_uid;
	w->w_admin = 0;
	w->w_unbounded = 0;	/* a token is not root, even root's */
	w->w_noun = "environment";
	w->w_token = hr->hr_token[0] != '\0' ? hr->hr_token : NULL;
}

/* One fence of a list, gathered as text. */
static void
api_list_one(void *arg, const struct svc_answer *a)
{
	struct hreq	*hr = arg;
	const char	*text;
	char		*mine;

	if (hr->hr_list == NULL)
		return;
	if ((text = api_fence_text(a, &mine)) == NULL ||
	    (hr->hr_listed > 0 && evbuffer_add(hr->hr_list, ",", 1) == -1) ||
	    evbuffer_add(hr->hr_list, text, strlen(text)) == -1) {
		evbuffer_free(hr->hr_list);
		hr->hr_list = NULL;
	}
	hr->hr_listed++;
	free(mine);
}

/*
 * GET /api/environments and GET /api/environments/KEY, from the state
 * the service keeps: a token sees its owner's fences alone, stopped ones
 * for a while too.
 */
static void
api_state(struct hreq *hr, const char *key)
{
	struct svc_who	 w;
	struct evbuffer	*body;
	int		 n;

	api_who(hr, &w);
	if ((hr->hr_list = evbuffer_new()) == NULL) {
		http_error(hr, 500, "internal", "cannot encode the "
		    "environments");
		return;
	}
	n = svc_list(&w, MSG_OWNER_NONE, key, api_list_one, hr);
	if (hr->hr_list == NULL) {
		http_error(hr, 500, "internal", "cannot encode the "
		    "environments");
		return;
	}
	if (key[0] != '\0') {
		if (n == 1)
			http_reply_buffer(hr, 200, hr->hr_list);
		else
			http_error(hr, 404, "not-found", "no environment %s",
			    key);
		return;
	}
	if ((body = evbuffer_new()) == NULL ||
	    evbuffer_add_printf(body, "{\"environments\":[") == -1 ||
	    evbuffer_add_buffer(body, hr->hr_list) == -1 ||
	    evbuffer_add(body, "]}", 2) == -1) {
		if (body != NULL)
			evbuffer_free(body);
		http_error(hr, 500, "internal", "cannot encode the "
		    "environments");
		return;
	}
	http_reply_buffer(hr, 200, body);
	evbuffer_free(body);
}

/* DELETE /api/environments/KEY: answered with its last state. */
static void
api_stop(struct hreq *hr)
{
	struct svc_who	 w;

	api_who(hr, &w);
	svc_stop(&w, MSG_OWNER_NONE, hr->hr_key, api_answer, hr);
}

/* Answers from the fence service. */

static void
api_probe_reply(struct hreq *hr, const char *key, int level,
    const char *verdicts)
{
	json_t	*j;

	if ((j = json_pack("{s:s, s:s, s:o}", "key", key, "level",
	    level_name(level), "boundary", api_boundary(verdicts))) == NULL) {
		http_error(hr, 500, "internal", "cannot encode the verdicts");
		return;
	}
	http_reply(hr, 200, j);
}

/*
 * GET .../probe: the verdicts of the last probe, or with refresh=1 (or
 * before there was one) a new probe.  /api/probe is the same for the
 * caller's environment named "default".
 */
static void
api_probe(struct hreq *hr, const char *query)
{
	struct svc_who	 w;
	int		 refresh;

	refresh = query != NULL && strcmp(query, "refresh=1") == 0;
	if (hr->hr_endpoint == EP_PROBE_DEFAULT)
		strlcpy(hr->hr_key, "default", sizeof(hr->hr_key));
	api_who(hr, &w);
	svc_probe(&w, MSG_OWNER_NONE, hr->hr_key, refresh, api_answer, hr);
}

/* A result; exec's own errors carry its output. */
static void
api_answer_result(struct hreq *hr, const struct msg_result *rs)
{
	json_t		*o;

	if ((o = api_result(rs, hr->hr_base64)) == NULL)
		http_error(hr, 500, "internal", "cannot encode the result");
	else if (rs->rs_error[0] != '\0')
		http_error_with(hr, http_api_status(rs->rs_error), rs->rs_error,
		    rs->rs_message, o);
	else
		http_reply(hr, 200, o);
}

static void
api_answer_fence(struct hreq *hr, const struct svc_answer *a)
{
	const char	*text;
	char		*mine;

	text = api_fence_text(a, &mine);
	http_reply_text(hr, hr->hr_created ? 201 : 200, text,
	    text != NULL ? strlen(text) : 0);
	free(mine);
}

/* What the fence service answers, as a response. */
void
api_answer(void *arg, const struct svc_answer *a)
{
	struct hreq	*hr = arg;

	switch (a->a_what) {
	case SVC_FENCE:
		api_answer_fence(hr, a);
		break;
	case SVC_VERDICT:
		api_probe_reply(hr, a->a_key, a->a_level, a->a_boundary);
		break;
	case SVC_RESULT:
		api_answer_result(hr, a->a_result);
		break;
	case SVC_IDENTITY:
		http_reply(hr, 200, json_pack("{s:s, s:s}", "name",
		    a->a_git->g_name, "email", a->a_git->g_email));
		break;
	case SVC_ERROR:
		if (strcmp(a->a_code, "too-many-execs") == 0)
			http_header(hr, "Retry-After", "1");
		http_error_with(hr, http_api_status(a->a_code), a->a_code,
		    a->a_message, NULL);
		break;
	case SVC_END:
	case SVC_PROC:
	case SVC_FILE:
	case SVC_FILE_LIST:
	case SVC_CHUNK:
	case SVC_TERM:
	case SVC_TUNNEL:
	case SVC_PORTS:
	case SVC_SNAP:
	case SVC_CHECK:
		http_error(hr, 500, "internal", "unexpected answer");
		break;
	case SVC_TEXT:
		http_reply_copy(hr, 200, API_METRICS_TYPE, a->a_text,
		    a->a_textlen);
		break;
	}
}

/*
 * GET /api/metrics: for a token of root's or of the admin group's
 * (svc_admin_uid()), and for nothing else it may do.
 */
static void
api_metrics(struct hreq *hr)
{
	struct svc_who	 w;

	api_who(hr, &w);
	w.w_admin = svc_admin_uid(hr->hr_uid);
	svc_metrics(&w, api_answer, hr);
}

json_t *
http_api_result(const struct msg_result *rs, int base64)
{
	return (api_result(rs, base64));
}

/* Routing. */

/*
 * The path is taken as it came, never decoded: a key is the bytes of
 * its path segment and must follow the key rule as they are, so "%2e%2e"
 * is refused like "..", and nothing from a path ever names a file.
 */
static const struct api_route *
api_route(struct hreq *hr, const char *path)
{
	const char	*key, *rest;
	char		 show[FENCE_KEY_SIZE + 8];
	size_t		 i, keylen;

	for (i = 0; i < nitems(api_routes_top); i++)
		if (strcmp(path, api_routes_top[i].ar_suffix) == 0)
			return (&api_routes_top[i]);
	if (strncmp(path, API_ENVS "/", sizeof(API_ENVS)) != 0) {
		api_show(show, sizeof(show), path, strlen(path));
		http_error(hr, 404, "not-found", "no such endpoint: %s", show);
		return (NULL);
	}
	key = path + sizeof(API_ENVS);
	keylen = strcspn(key, "/");
	rest = key + keylen;
	if (keylen == 0 || keylen > FENCE_KEY_MAX) {
		http_error(hr, 400, "bad-key", "a key is 1 to %d characters "
		    "of a-z, 0-9, _ and -, the first a letter or digit",
		    FENCE_KEY_MAX);
		return (NULL);
	}
	memcpy(hr->hr_key, key, keylen);
	hr->hr_key[keylen] = '\0';
	if (!fence_key_valid(hr->hr_key)) {
		api_show(show, sizeof(show), key, keylen);
		http_error(hr, 400, "bad-key", "\"%s\" is not a key: a key is "
		    "1 to %d characters of a-z, 0-9, _ and -, the first a "
		    "letter or digit", show, FENCE_KEY_MAX);
		return (NULL);
	}
	for (i = 0; i < sizeof(api_routes) / sizeof(api_routes[0]); i++)
		if (strcmp(rest, api_routes[i].ar_suffix) == 0 ||
		    (api_routes[i].ar_endpoint == EP_FILES &&
		    strncmp(rest, API_FILES, strlen(API_FILES)) == 0))
			return (&api_routes[i]);
	if (strncmp(rest, api_route_term.ar_suffix,
	    strlen(api_route_term.ar_suffix)) == 0)
		return (http_term_id(hr, rest +
		    strlen(api_route_term.ar_suffix)) == 0 ? &api_route_term :
		    NULL);
	/* .../processes/<id>/stdin: the id is checked as the process's. */
	if (strncmp(rest, api_route_proc.ar_suffix,
	    strlen(api_route_proc.ar_suffix)) == 0 &&
	    (i = strlen(rest)) > strlen(api_route_stdin.ar_suffix) &&
	    strcmp(rest + i - strlen(api_route_stdin.ar_suffix),
	    api_route_stdin.ar_suffix) == 0) {
		char	 id[16];
		size_t	 idlen = i - strlen(api_route_proc.ar_suffix) -
			    strlen(api_route_stdin.ar_suffix);

		if (idlen >= sizeof(id)) {
			http_error(hr, 404, "not-found", "a process is named "
			    "by its number");
			return (NULL);
		}
		memcpy(id, rest + strlen(api_route_proc.ar_suffix), idlen);
		id[idlen] = '\0';
		return (http_procs_id(hr, id) == 0 ? &api_route_stdin : NULL);
	}
	if (strncmp(rest, api_route_snap.ar_suffix,
	    strlen(api_route_snap.ar_suffix)) == 0) {
		int	 restore;

		if (http_snap_id(hr, rest + strlen(api_route_snap.ar_suffix),
		    &restore) == -1)
			return (NULL);
		return (restore ? &api_route_snap_restore : &api_route_snap);
	}
	if (strncmp(rest, api_route_proc.ar_suffix,
	    strlen(api_route_proc.ar_suffix)) == 0)
		return (http_procs_id(hr, rest +
		    strlen(api_route_proc.ar_suffix)) == 0 ? &api_route_proc :
		    NULL);
	api_show(show, sizeof(show), rest, strlen(rest));
	http_error(hr, 404, "not-found", "no such endpoint: %s after the key",
	    show);
	return (NULL);
}

static int
api_query(struct hreq *hr, const struct api_route *rt, const char *query)
{
	if (query == NULL || query[0] == '\0' || rt->ar_query == 2)
		return (0);	/* 2: the endpoint reads its own */
	if (rt->ar_query && (strcmp(query, "refresh=1") == 0 ||
	    strcmp(query, "refresh=0") == 0))
		return (0);
	http_error(hr, 400, "bad-parameter", "%s", rt->ar_query ?
	    "the only parameter is refresh=0 or refresh=1" :
	    "this endpoint takes no query parameters");
	return (-1);
}

/* The route takes this method, or 405 with what it takes. */
static int
api_allowed(struct hreq *hr, const struct api_route *rt, int method)
{
	if ((rt->ar_methods & method) != 0)
		return (0);
	http_header(hr, "Allow", rt->ar_allow);
	http_error(hr, 405, "method-not-allowed", "allowed here: %s",
	    rt->ar_allow);
	return (-1);
}

/* The endpoints whose handler needs nothing but the request. */
static void	(*const api_plain[])(struct hreq *) = {
	[EP_GIT_INIT] = api_git_init,
	[EP_TICKETS] = api_tickets,
	[EP_PORTS] = api_ports,
	[EP_METRICS] = api_metrics,
};

void
http_api_request(struct hreq *hr)
{
	const struct evhttp_uri *uri;
	const struct api_route *rt;
	const char	*path;
	int		 method;

	uri = evhttp_request_get_evhttp_uri(hr->hr_req);
	method = evhttp_request_get_command(hr->hr_req);
	if (method == EVHTTP_REQ_HEAD)
		method = EVHTTP_REQ_GET;	/* evhttp sends no body */
	if (uri == NULL || (path = evhttp_uri_get_path(uri)) == NULL) {
		http_error(hr, 400, "bad-request", "no path");
		return;
	}
	if ((rt = api_route(hr, path)) == NULL)
		return;
	hr->hr_endpoint = rt->ar_endpoint;
	if (api_allowed(hr, rt, method) == -1 ||
	    api_query(hr, rt, evhttp_uri_get_query(uri)) == -1)
		return;
	if ((size_t)rt->ar_endpoint < nitems(api_plain) &&
	    api_plain[rt->ar_endpoint] != NULL) {
		api_plain[rt->ar_endpoint](hr);
		return;
	}

	switch (rt->ar_endpoint) {
	case EP_LIST:
		api_state(hr, "");
		break;
	case EP_ENV:
		if (method == EVHTTP_REQ_GET)
			api_state(hr, hr->hr_key);
		else if (method == EVHTTP_REQ_DELETE)
			api_stop(hr);
		else
			api_boot(hr);
		break;
	case EP_EXEC:
		api_exec(hr, 0);
		break;
	case EP_PROCS:
		if (method == EVHTTP_REQ_POST)
			api_exec(hr, 1);
		else
			http_procs_list(hr);
		break;
	case EP_PROC:
		if (method == EVHTTP_REQ_GET)
			http_procs_read(hr, evhttp_uri_get_query(uri));
		else
			http_procs_delete(hr, evhttp_uri_get_query(uri));
		break;
	case EP_GIT_CONFIG:
		api_git_config(hr, method == EVHTTP_REQ_POST);
		break;
	case EP_PROBE:
	case EP_PROBE_DEFAULT:
		api_probe(hr, evhttp_uri_get_query(uri));
		break;
	case EP_TERMS:
	case EP_TERM:
	case EP_PROC_STDIN:
		http_term_request(hr, method, HTTP_TERMS + rt->ar_endpoint -
		    EP_TERMS, evhttp_uri_get_query(uri));
		break;
	default:	/* EP_SNAPS to EP_UNDO */
		http_snap_request(hr, method);
		break;
	case EP_FILES:
		http_files_request(hr, evhttp_request_get_command(hr->hr_req),
		    strstr(path + sizeof(API_ENVS), API_FILES) +
		    strlen(API_FILES), evhttp_uri_get_query(uri));
		break;
	case EP_HOST:
		http_host_request(hr);
	}
}

