/*
 * Terminals and a background process's stdin over HTTP
 * (docs/interactive.md, "The HTTP API"; docs/http.md):
 *
 *	POST   /api/environments/KEY/terminals	{argv | command, cwd,
 *						 cols, rows, idleSeconds}
 *	GET    /api/environments/KEY/terminals
 *	GET    /api/environments/KEY/terminals/ID
 *	DELETE /api/environments/KEY/terminals/ID
 *	POST   /api/environments/KEY/processes/ID/stdin[?close=1]
 *	POST   /api/environments/KEY/tickets	{"terminal": ID}
 *
 * A terminal's bytes go over a WebSocket (.../terminals/ID/attach, or
 * the channel's terminal op: http_channel.c).  Each request is turned
 * into the fence service's call (svc_term.c) and its answer into JSON.
 */
#include <sys/types.h>
#include <sys/queue.h>

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
#include "http_channel.h"
#include "ticket.h"

#define TERM_DEFAULT_COLS	80
#define TERM_DEFAULT_ROWS	24

/* A terminal as the API shows it. */
static json_t *
term_json(const struct msg_term *t)
{
	json_t	*o;
	char	 id[16];

	/* An id is a string, as a background process's. */
	snprintf(id, sizeof(id), "%u", (unsigned)t->t_id);
	o = json_pack("{s:s, s:b, s:i, s:i, s:I, s:b, s:I, s:I, s:s}",
	    "id", id,
	    "running", t->t_running,
	    "cols", (int)t->t_cols,
	    "rows", (int)t->t_rows,
	    "ageMs", (json_int_t)t->t_age_ms,
	    "attached", t->t_attached,
	    "keptBytes", (json_int_t)t->t_kept,
	    "idleSeconds", (json_int_t)t->t_idle_s,
	    "program", t->t_program);
	if (o == NULL)
		return (NULL);
	if (!t->t_running) {
		json_object_set_new(o, "exitCode", t->t_signal != 0 ?
		    json_null() : json_integer(t->t_exit));
		json_object_set_new(o, "signal", t->t_signal != 0 ?
		    json_integer(t->t_signal) : json_null());
		json_object_set_new(o, "why", json_string(t->t_why));
	}
	/* Its denials so far (docs/denials.md), as a process's. */
	if (api_denials(o, t->t_denials, t->t_denials_dropped, NULL) == -1) {
		json_decref(o);
		return (NULL);
	}
	return (o);
}

/* One terminal's answer: 201 for a new one, else 200. */
static void
term_answer(void *arg, const struct svc_answer *a)
{
	struct hreq	*hr = arg;
	json_t		*o;

	switch (a->a_what) {
	case SVC_TERM:
		if ((o = term_json(a->a_term)) == NULL) {
			http_error(hr, 500, "internal", "cannot encode the "
			    "terminal");
			return;
		}
		if (a->a_term->t_forgotten)
			json_object_set_new(o, "forgotten", json_true());
		http_reply(hr, hr->hr_created ? 201 : 200, o);
		return;
	default:
		api_answer(arg, a);
		return;
	}
}

/* A listing: SVC_TERMs gathered, then SVC_END. */
static void
term_list_answer(void *arg, const struct svc_answer *a)
{
	struct hreq	*hr = arg;
	json_t		*o;
	char		*text;

	switch (a->a_what) {
	case SVC_TERM:
		if (hr->hr_list == NULL)
			return;
		if ((o = term_json(a->a_term)) == NULL ||
		    (text = json_dumps(o, JSON_COMPACT)) == NULL) {
			json_decref(o);
			evbuffer_free(hr->hr_list);
			hr->hr_list = NULL;
			return;
		}
		json_decref(o);
		if ((hr->hr_listed > 0 && evbuffer_add(hr->hr_list, ",",
		    1) == -1) || evbuffer_add(hr->hr_list, text,
		    strlen(text)) == -1) {
			evbuffer_free(hr->hr_list);
			hr->hr_list = NULL;
		}
		hr->hr_listed++;
		free(text);
		if (!a->a_last)
			return;
		/* FALLTHROUGH */
	case SVC_END:
		if (hr->hr_list == NULL) {
			http_error(hr, 500, "internal", "cannot encode the "
			    "terminals");
			return;
		}
		if (evbuffer_prepend(hr->hr_list, "{\"terminals\":[", 14) ==
		    -1 || evbuffer_add(hr->hr_list, "]}", 2) == -1) {
			http_error(hr, 500, "internal", "cannot encode the "
			    "terminals");
			return;
		}
		http_reply_buffer(hr, 200, hr->hr_list);
		return;
	default:
		api_answer(arg, a);
		return;
	}
}

/*
 * An id in JSON: a string of digits, as the API writes ids, or a whole
 * number; 1..UINT32_MAX.  0, or -1.
 */
int
http_json_id(const json_t *v, uint32_t *id)
{
	const char	*errstr, *s;
	long long	 n;

	if (v != NULL && json_is_integer(v)) {
		n = json_integer_value(v);
		if (n < 1 || n > UINT32_MAX)
			return (-1);
		*id = (uint32_t)n;
		return (0);
	}
	if (v == NULL || !json_is_string(v))
		return (-1);
	s = json_string_value(v);
	if (s[0] == '0' || strlen(s) > 10 || strlen(s) !=
	    json_string_length(v) || strspn(s, "0123456789") != strlen(s))
		return (-1);
	n = strtonum(s, 1, UINT32_MAX, &errstr);
	if (errstr != NULL)
		return (-1);
	*id = (uint32_t)n;
	return (0);
}

/* The number after .../terminals/: 1..UINT32_MAX, or -1 (404 said). */
int
http_term_id(struct hreq *hr, const char *s)
{
	const char	*errstr;
	long long	 v;

	if (s[0] == '\0' || s[0] == '0' || strspn(s, "0123456789") !=
	    strlen(s) || strlen(s) > 10) {
		http_error(hr, 404, "not-found", "a terminal is named by its "
		    "number");
		return (-1);
	}
	v = strtonum(s, 1, UINT32_MAX, &errstr);
	if (errstr != NULL) {
		http_error(hr, 404, "not-found", "a terminal is named by its "
		    "number");
		return (-1);
	}
	hr->hr_term = (uint32_t)v;
	return (0);
}

/* A string field at most max bytes, no NUL; 0 absent, 1 read, -1 said. */
static int
term_string(struct hreq *hr, json_t *o, const char *name, size_t max,
    const char **out)
{
	json_t	*v = json_object_get(o, name);

	if (v == NULL)
		return (0);
	if (!json_is_string(v) || json_string_length(v) > max ||
	    json_string_length(v) != strlen(json_string_value(v))) {
		http_error(hr, 400, "bad-value", "%s must be a string of at "
		    "most %zu bytes", name, max);
		return (-1);
	}
	*out = json_string_value(v);
	return (1);
}

static int
term_number(struct hreq *hr, json_t *o, const char *name, long long lo,
    long long hi, uint32_t *out)
{
	json_t	*v = json_object_get(o, name);

	if (v == NULL)
		return (0);
	if (!json_is_integer(v) || json_integer_value(v) < lo ||
	    json_integer_value(v) > hi) {
		http_error(hr, 400, "bad-value", "%s must be a whole number "
		    "from %lld to %lld", name, lo, hi);
		return (-1);
	}
	*out = (uint32_t)json_integer_value(v);
	return (1);
}

/* argv: 1 to MSG_ARGV_MAX strings, NULL-terminated; NULL (said). */
static char **
term_argv(struct hreq *hr, json_t *argv, size_t *argc)
{
	char	**args;
	json_t	*v;
	size_t	 i, n;

	if (!json_is_array(argv) || (n = json_array_size(argv)) == 0 ||
	    n > MSG_ARGV_MAX) {
		http_error(hr, 400, "bad-value", "argv is a list of 1 to %d "
		    "strings", MSG_ARGV_MAX);
		return (NULL);
	}
	if ((args = calloc(n + 1, sizeof(*args))) == NULL) {
		http_error(hr, 500, "internal", "out of memory");
		return (NULL);
	}
	for (i = 0; i < n; i++) {
		v = json_array_get(argv, i);
		if (!json_is_string(v) || json_string_length(v) > MSG_ARG_MAX ||
		    json_string_length(v) != strlen(json_string_value(v)) ||
		    (i == 0 && json_string_length(v) == 0)) {
			http_error(hr, 400, "bad-value", "argv[%zu] must be a "
			    "string of at most %d bytes, without NUL (argv[0] "
			    "not empty)", i, MSG_ARG_MAX);
			free(args);
			return (NULL);
		}
		args[i] = (char *)json_string_value(v);
	}
	*argc = n;
	return (args);
}

/* POST .../terminals */
static void
term_open(struct hreq *hr)
{
	static const char *const known[] = { "argv", "command", "cwd",
	    "cols", "rows", "idleSeconds", NULL };
	struct msg_term_open to;
	struct svc_who	 w;
	json_t		*o, *argv, *v;
	const char	*k, *s;
	char		**args = NULL;
	size_t		 i;

	if ((o = api_body(hr, 0)) == NULL)
		return;
	memset(&to, 0, sizeof(to));
	json_object_foreach(o, k, v) {
		for (i = 0; known[i] != NULL; i++)
			if (strcmp(k, known[i]) == 0)
				break;
		if (known[i] == NULL) {
			http_error(hr, 400, "unknown-field", "unknown field "
			    "\"%.48s\" in a terminal request", k);
			goto out;
		}
	}
	to.to_cols = TERM_DEFAULT_COLS;
	to.to_rows = TERM_DEFAULT_ROWS;
	if (term_number(hr, o, "cols", 1, MSG_TERM_DIM_MAX, &to.to_cols) ==
	    -1 || term_number(hr, o, "rows", 1, MSG_TERM_DIM_MAX,
	    &to.to_rows) == -1 || term_number(hr, o, "idleSeconds", 1,
	    MSG_TERM_IDLE_MAX, &to.to_idle_s) == -1)
		goto out;
	switch (term_string(hr, o, "cwd", PATH_MAX - 1, &s)) {
	case -1:
		goto out;
	case 1:
		strlcpy(to.to_cwd, s, sizeof(to.to_cwd));
		break;
	}
	switch (term_string(hr, o, "command", MSG_COMMAND_MAX, &s)) {
	case -1:
		goto out;
	case 1:
		if (s[0] == '\0') {
			http_error(hr, 400, "bad-value", "command is empty");
			goto out;
		}
		to.to_command = (char *)s;
		break;
	}
	if ((argv = json_object_get(o, "argv")) != NULL) {
		if (to.to_command != NULL) {
			http_error(hr, 400, "bad-request", "argv or command, "
			    "not both");
			goto out;
		}
		if ((args = term_argv(hr, argv, &to.to_argc)) == NULL)
			goto out;
		to.to_argv = args;
	}
	strlcpy(to.to_key, hr->hr_key, sizeof(to.to_key));
	to.to_owner = MSG_OWNER_NONE;
	hr->hr_created = 1;
	api_who(hr, &w);
	svc_term_open(&w, &to, term_answer, hr);
 out:
	free(args);
	json_decref(o);
}

static void
term_req(struct hreq *hr, uint32_t op, svc_cb cb)
{
	struct msg_term_req tq;
	struct svc_who	 w;

	memset(&tq, 0, sizeof(tq));
	strlcpy(tq.tq_key, hr->hr_key, sizeof(tq.tq_key));
	tq.tq_owner = MSG_OWNER_NONE;
	tq.tq_op = op;
	tq.tq_id = hr->hr_term;
	api_who(hr, &w);
	if (op == MSG_TERM_KILL)
		svc_term_kill(&w, &tq, cb, hr);
	else
		svc_terms(&w, &tq, cb, hr);
}

static void	http_proc_stdin(struct hreq *, const char *);

/* HTTP_TERMS, HTTP_TERM, HTTP_STDIN (its query, the only one read). */
void
http_term_request(struct hreq *hr, int method, int what, const char *query)
{
	if (what == HTTP_STDIN)
		http_proc_stdin(hr, query);
	else if (what == HTTP_TERM)
		term_req(hr, method == EVHTTP_REQ_DELETE ? MSG_TERM_KILL :
		    MSG_TERM_LIST, term_answer);
	else if (method == EVHTTP_REQ_POST)
		term_open(hr);
	else if ((hr->hr_list = evbuffer_new()) == NULL)
		http_error(hr, 500, "internal", "out of memory");
	else
		term_req(hr, MSG_TERM_LIST, term_list_answer);
}

/* The process's state after its input (SVC_PROC), without output. */
static void
stdin_answer(void *arg, const struct svc_answer *a)
{
	struct hreq	*hr = arg;

	char		 id[16];

	if (a->a_what == SVC_PROC) {
		snprintf(id, sizeof(id), "%u", (unsigned)a->a_proc->p_id);
		http_reply(hr, 200, json_pack("{s:s, s:s}", "id", id, "state",
		    a->a_proc->p_running ? "running" : "exited"));
	} else
		api_answer(arg, a);
}

/*
 * POST .../processes/<id>/stdin[?close=1]: the body's bytes, raw, at
 * most MSG_INPUT_MAX; close=1 then closes the process's stdin.
 */
static void
http_proc_stdin(struct hreq *hr, const char *query)
{
	struct evbuffer	*in = evhttp_request_get_input_buffer(hr->hr_req);
	struct msg_proc_input pi;
	struct svc_who	 w;
	size_t		 len = evbuffer_get_length(in);

	memset(&pi, 0, sizeof(pi));
	if (query != NULL && query[0] != '\0') {
		if (strcmp(query, "close=1") == 0)
			pi.pi_close = 1;
		else if (strcmp(query, "close=0") != 0) {
			http_error(hr, 400, "bad-parameter", "the only "
			    "parameter is close=0 or close=1");
			return;
		}
	}
	if (len > MSG_INPUT_MAX) {
		http_error(hr, 413, "body-too-large", "at most %d bytes of "
		    "input a request", MSG_INPUT_MAX);
		return;
	}
	if (len == 0 && !pi.pi_close) {
		http_error(hr, 400, "bad-request", "no bytes, and no close=1");
		return;
	}
	strlcpy(pi.pi_key, hr->hr_key, sizeof(pi.pi_key));
	pi.pi_owner = MSG_OWNER_NONE;
	pi.pi_id = hr->hr_proc;
	if (len > 0 && (pi.pi_data = evbuffer_pullup(in, -1)) == NULL) {
		http_error(hr, 500, "internal", "out of memory");
		return;
	}
	pi.pi_len = len;
	api_who(hr, &w);
	svc_proc_input(&w, &pi, stdin_answer, hr);
}

/*
 * POST .../tickets {"terminal": ID}: a ticket good once, within
 * TICKET_TTL_MS, for .../terminals/ID/attach?ticket=T (a browser's
 * WebSocket cannot carry the token header).  The terminal is not asked
 * of the agent here: an attachment with the ticket is refused then if
 * the terminal is not the caller's.
 */
void
http_term_ticket(struct hreq *hr, json_t *body)
{
	struct ticket_grant g;
	struct svc_who	 w;
	json_t		*v = json_object_get(body, "terminal");
	char		 text[TICKET_TEXT + 1], path[256];
	json_t		*o;

	memset(&g, 0, sizeof(g));
	if (json_object_size(body) != 1 || http_json_id(v, &g.tg_id) == -1) {
		http_error(hr, 400, "bad-value", "the body is {\"terminal\": "
		    "\"ID\"}, the terminal's id");
		return;
	}
	api_who(hr, &w);
	if (!svc_fence_known(&w, MSG_OWNER_NONE, hr->hr_key)) {
		http_error(hr, 404, "not-found", "no environment %s",
		    hr->hr_key);
		return;
	}
	g.tg_kind = TICKET_TERMINAL;
	g.tg_uid = hr->hr_uid;
	strlcpy(g.tg_key, hr->hr_key, sizeof(g.tg_key));
	if (ticket_mint(&g, text) == -1) {
		http_header(hr, "Retry-After", "60");
		http_error(hr, 429, "too-many-tickets", "at most %d tickets "
		    "per user", TICKET_MAX_USER);
		return;
	}
	snprintf(path, sizeof(path), "/api/environments/%s/terminals/%u/"
	    "attach?ticket=%s", g.tg_key, (unsigned)g.tg_id, text);
	o = json_pack("{s:s, s:s, s:I}", "ticket", text, "path", path,
	    "expiresInMs", (json_int_t)ticket_ttl());
	explicit_bzero(text, sizeof(text));
	explicit_bzero(path, sizeof(path));
	if (o == NULL) {
		http_error(hr, 500, "internal", "cannot encode the ticket");
		return;
	}
	http_reply(hr, 200, o);
}
