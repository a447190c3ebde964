/*
 * Background processes over HTTP (docs/http.md, "Background
 * processes"): POST .../processes starts one (http_api.c reads its
 * body as exec's), GET .../processes lists them, GET .../processes/ID
 * reads one's state and output so far, DELETE signals it or forgets
 * it.  The processes themselves live in the fence's agent
 * (agent/agent_bg.c); nothing of them is kept here.
 */
#include <sys/types.h>
#include <sys/queue.h>

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/buffer.h>
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

#define PROCS_ID_DIGITS		10	/* UINT32_MAX */
#define PROCS_QUERY_MAX		256

static const struct {
	const char	*ps_name;
	int		 ps_signal;
} procs_signals[] = {
	{ "TERM",	SIGTERM },
	{ "KILL",	SIGKILL },
	{ "INT",	SIGINT },
	{ "HUP",	SIGHUP },
};

static json_t	*procs_json(const struct msg_proc *, int, int);
static json_t	*procs_started(uint32_t);
static void	 procs_list_one(void *, const struct svc_answer *);
static void	 procs_req(struct hreq *, struct msg_proc_req *, uint32_t);
static int	 procs_query(struct hreq *, const char *, int,
		    struct msg_proc_req *);
static int	 procs_number(const char *, uint32_t, uint32_t *);
static const char *procs_signame(int);

/* A decimal of 1..max, no sign, no leading zero; -1 if not. */
static int
procs_number(const char *s, uint32_t max, uint32_t *out)
{
	unsigned long long v = 0;
	size_t		 i, len = strlen(s);

	if (len == 0 || len > PROCS_ID_DIGITS || (s[0] == '0' && len > 1))
		return (-1);
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return (-1);
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	if (v > max)
		return (-1);
	*out = (uint32_t)v;
	return (0);
}

/* The <id> of .../processes/<id>, as the path has it: 0 or answered. */
int
http_procs_id(struct hreq *hr, const char *s)
{
	char	 show[PROCS_ID_DIGITS + 4], *p;

	if (procs_number(s, MSG_PROC_ID_MAX, &hr->hr_proc) == 0 &&
	    hr->hr_proc != 0)
		return (0);
	snprintf(show, sizeof(show), "%.*s%s", PROCS_ID_DIGITS, s,
	    strlen(s) > PROCS_ID_DIGITS ? "..." : "");
	for (p = show; *p != '\0'; p++)
		if (*p < 0x21 || *p > 0x7e || *p == '"' || *p == '\\')
			*p = '?';
	http_error(hr, 404, "process-not-found", "no process \"%s\": an id "
	    "is a number from 1 to %u", show, MSG_PROC_ID_MAX);
	return (-1);
}

static const char *
procs_signame(int sig)
{
	size_t	 i;

	for (i = 0; i < nitems(procs_signals); i++)
		if (procs_signals[i].ps_signal == sig)
			return (procs_signals[i].ps_name);
	return ("?");
}

/* When it started, in ms of UTC: now less its age. */
static json_t *
procs_started(uint32_t age_ms)
{
	struct timespec	 now;
	struct tm	 tm;
	time_t		 t;
	int64_t		 ms;
	char		 buf[40];

	clock_gettime(CLOCK_REALTIME, &now);
	ms = (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000 - age_ms;
	t = (time_t)(ms / 1000);
	if (gmtime_r(&t, &tm) == NULL ||
	    strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm) == 0)
		return (json_null());
	snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), ".%03dZ",
	    (int)(ms % 1000));
	return (json_string(buf));
}

/*
 * One process.  With output: stdout and stderr from the offsets asked,
 * by exec's rules (UTF-8 text, or base64 of both when either is not or
 * it was asked), and where they began.
 */
static json_t *
procs_json(const struct msg_proc *p, int output, int base64)
{
	struct msg_result rs;
	json_t		*o, *what, *out;
	char		 id[16];
	size_t		 i;

	snprintf(id, sizeof(id), "%u", p->p_id);
	if (p->p_argv != NULL) {
		if ((what = json_array()) == NULL)
			return (NULL);
		for (i = 0; i < p->p_argc; i++)
			json_array_append_new(what,
			    json_string(p->p_argv[i]));
	} else
		what = json_string(p->p_command);
	o = json_pack("{s:s, s:o, s:s, s:o, s:I, s:I, s:I, s:o, s:o, s:o, "
	    "s:b, s:I, s:I}",
	    "id", id,
	    p->p_argv != NULL ? "argv" : "command", what,
	    "state", p->p_running ? "running" : "exited",
	    "startedAt", procs_started(p->p_age_ms),
	    "durationMs", (json_int_t)p->p_duration_ms,
	    "timeoutMs", (json_int_t)p->p_timeout_ms,
	    "maxBytes", (json_int_t)p->p_max_bytes,
	    "exitCode", p->p_running || p->p_signal ? json_null() :
	    json_integer(p->p_exit),
	    "signal", p->p_signal ? json_integer(p->p_signal) : json_null(),
	    "error", p->p_error[0] ? json_string(p->p_error) : json_null(),
	    "truncated", p->p_truncated,
	    "stdoutBytes", (json_int_t)p->p_kept[0],
	    "stderrBytes", (json_int_t)p->p_kept[1]);
	if (o == NULL)
		return (NULL);
	if (p->p_error[0] != '\0')
		json_object_set_new(o, "message", json_string(p->p_message));
	if (api_denials(o, p->p_denials, p->p_denials_dropped, NULL) == -1) {
		json_decref(o);
		return (NULL);
	}
	if (!output)
		return (o);
	memset(&rs, 0, sizeof(rs));
	rs.rs_stdout = p->p_stdout;
	rs.rs_stdout_len = p->p_stdout_len;
	rs.rs_stderr = p->p_stderr;
	rs.rs_stderr_len = p->p_stderr_len;
	if ((out = http_api_result(&rs, base64)) == NULL) {
		json_decref(o);
		return (NULL);
	}
	json_object_set(o, "stdout", json_object_get(out, "stdout"));
	json_object_set(o, "stderr", json_object_get(out, "stderr"));
	json_object_set(o, "encoding", json_object_get(out, "encoding"));
	json_decref(out);
	json_object_set_new(o, "stdoutOffset", json_integer(p->p_off[0]));
	json_object_set_new(o, "stderrOffset", json_integer(p->p_off[1]));
	return (o);
}

/*
 * The answers of the service to any of these requests: POST's start
 * (201), GET's read and DELETE's signal (200), or an error.
 */
void
http_procs_answer(void *arg, const struct svc_answer *a)
{
	struct hreq	*hr = arg;
	json_t		*o;
	int		 read = hr->hr_proc != 0 && hr->hr_signal == 0;

	switch (a->a_what) {
	case SVC_PROC:
		if ((o = procs_json(a->a_proc, read, hr->hr_base64)) == NULL) {
			http_error(hr, 500, "internal", "cannot encode the "
			    "process");
			return;
		}
		if (hr->hr_signal != 0 && a->a_proc->p_forgotten)
			json_object_set_new(o, "forgotten", json_true());
		else if (hr->hr_signal != 0)
			json_object_set_new(o, "signalSent",
			    json_string(procs_signame(hr->hr_signal)));
		http_reply(hr, hr->hr_proc == 0 ? 201 : 200, o);
		return;
	case SVC_ERROR:
		if (strcmp(a->a_code, "too-many-processes") == 0 ||
		    strcmp(a->a_code, "exec-busy") == 0)
			http_header(hr, "Retry-After", "1");
		http_error_with(hr, http_api_status(a->a_code), a->a_code,
		    a->a_message, NULL);
		return;
	default:
		http_error(hr, 500, "internal", "unexpected answer");
		return;
	}
}

/* One process of a listing, gathered as text; then the whole list. */
static void
procs_list_one(void *arg, const struct svc_answer *a)
{
	struct hreq	*hr = arg;
	struct evbuffer	*body;
	json_t		*o;
	char		*text;

	if (a->a_what != SVC_PROC) {
		if (a->a_what != SVC_END) {
			http_procs_answer(hr, a);
			return;
		}
		if (hr->hr_list == NULL || (body = evbuffer_new()) == NULL) {
			http_error(hr, 500, "internal", "cannot encode the "
			    "processes");
			return;
		}
		if (evbuffer_add_printf(body, "{\"processes\":[") == -1 ||
		    evbuffer_add_buffer(body, hr->hr_list) == -1 ||
		    evbuffer_add(body, "]}", 2) == -1)
			http_error(hr, 500, "internal", "cannot encode the "
			    "processes");
		else
			http_reply_buffer(hr, 200, body);
		evbuffer_free(body);
		return;
	}
	if (hr->hr_list == NULL)
		return;
	text = NULL;
	if ((o = procs_json(a->a_proc, 0, 0)) == NULL ||
	    (text = json_dumps(o, JSON_COMPACT)) == NULL ||
	    (hr->hr_listed > 0 && evbuffer_add(hr->hr_list, ",", 1) == -1) ||
	    evbuffer_add(hr->hr_list, text, strlen(text)) == -1) {
		evbuffer_free(hr->hr_list);
		hr->hr_list = NULL;
	}
	hr->hr_listed++;
	free(text);
	json_decref(o);
}

static void
procs_req(struct hreq *hr, struct msg_proc_req *q, uint32_t op)
{
	struct svc_who	 w;

	strlcpy(q->q_key, hr->hr_key, sizeof(q->q_key));
	q->q_owner = MSG_OWNER_NONE;
	q->q_op = op;
	w.w_uid = hr->hr_uid;
	w.w_admin = 0;
	w.w_unbounded = 0;
	w.w_noun = "environment";
	w.w_token = hr->hr_token[0] != '\0' ? hr->hr_token : NULL;
	svc_procs(&w, q, op == MSG_PROC_LIST ? procs_list_one :
	    http_procs_answer, hr);
}

/* GET .../processes */
void
http_procs_list(struct hreq *hr)
{
	struct msg_proc_req q;

	if ((hr->hr_list = evbuffer_new()) == NULL) {
		http_error(hr, 500, "internal", "out of memory");
		return;
	}
	memset(&q, 0, sizeof(q));
	procs_req(hr, &q, MSG_PROC_LIST);
}

/*
 * The query of GET (stdoutOffset, stderrOffset, encoding) or DELETE
 * (signal): each at most once, nothing else.  0, or -1 answered.
 */
static int
procs_query(struct hreq *hr, const char *query, int del,
    struct msg_proc_req *q)
{
	struct evkeyvalq kv;
	struct evkeyval	*e;
	const char	*bad = NULL;
	int		 seen = 0, bit;
	size_t		 i;

	if (query == NULL || query[0] == '\0')
		return (0);
	TAILQ_INIT(&kv);
	if (strlen(query) > PROCS_QUERY_MAX ||
	    evhttp_parse_query_str(query, &kv) == -1) {
		evhttp_clear_headers(&kv);
		http_error(hr, 400, "bad-parameter", "the query is longer than "
		    "%d bytes or malformed", PROCS_QUERY_MAX);
		return (-1);
	}
	TAILQ_FOREACH(e, &kv, next) {
		if (del && strcmp(e->key, "signal") == 0) {
			bit = 1;
			for (i = 0; i < nitems(procs_signals); i++)
				if (strcmp(e->value,
				    procs_signals[i].ps_name) == 0)
					break;
			if (i < nitems(procs_signals))
				hr->hr_signal = procs_signals[i].ps_signal;
			else
				bad = "signal must be TERM, KILL, INT or HUP";
		} else if (!del && strcmp(e->key, "stdoutOffset") == 0) {
			bit = 2;
			if (procs_number(e->value, EXEC_OUTPUT_MAX,
			    &q->q_off[0]) == -1)
				bad = "stdoutOffset must be a number of bytes";
		} else if (!del && strcmp(e->key, "stderrOffset") == 0) {
			bit = 4;
			if (procs_number(e->value, EXEC_OUTPUT_MAX,
			    &q->q_off[1]) == -1)
				bad = "stderrOffset must be a number of bytes";
		} else if (!del && strcmp(e->key, "encoding") == 0) {
			bit = 8;
			if (strcmp(e->value, "base64") == 0)
				hr->hr_base64 = 1;
			else if (strcmp(e->value, "utf-8") != 0)
				bad = "encoding must be utf-8 or base64";
		} else {
			bit = 0;
			bad = del ? "the only parameter is signal" :
			    "the parameters are stdoutOffset, stderrOffset "
			    "and encoding";
		}
		if (bad == NULL && (seen & bit) != 0)
			bad = "a parameter is given twice";
		seen |= bit;
		if (bad != NULL)
			break;
	}
	evhttp_clear_headers(&kv);
	if (bad != NULL) {
		http_error(hr, 400, "bad-parameter", "%s", bad);
		return (-1);
	}
	return (0);
}

/* GET .../processes/<id>[?stdoutOffset=N&stderrOffset=N&encoding=E] */
void
http_procs_read(struct hreq *hr, const char *query)
{
	struct msg_proc_req q;

	memset(&q, 0, sizeof(q));
	if (procs_query(hr, query, 0, &q) == -1)
		return;
	q.q_id = hr->hr_proc;
	procs_req(hr, &q, MSG_PROC_READ);
}

/* DELETE .../processes/<id>[?signal=TERM|KILL|INT|HUP] */
void
http_procs_delete(struct hreq *hr, const char *query)
{
	struct msg_proc_req q;

	memset(&q, 0, sizeof(q));
	if (procs_query(hr, query, 1, &q) == -1)
		return;
	if (hr->hr_signal == 0)
		hr->hr_signal = SIGTERM;
	q.q_id = hr->hr_proc;
	q.q_signal = (uint32_t)hr->hr_signal;
	procs_req(hr, &q, MSG_PROC_SIGNAL);
}
