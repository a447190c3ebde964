/*
 * The bodies of a fence's exec (and a background process's), of git
 * config and of git init, field by field, into the fence service's
 * requests.
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

/* What an exec body is read into. */
struct api_exec {
	struct msg_exec	 e_x;
	int		 e_b64;		/* encoding: base64 */
	int		 e_bg;		/* POST .../processes */
	const char	*e_command;
	size_t		 e_command_len;
	json_t		*e_argv;
};

static int
api_exec_encoding(struct hreq *hr, const struct api_field *f,
    const struct api_value *v, void *dst)
{
	struct api_exec	*e = dst;

	if (strcmp(v->av_str, "base64") == 0)
		hr->hr_base64 = e->e_b64 = 1;
	else if (strcmp(v->av_str, "utf-8") != 0) {
		http_error(hr, 400, "bad-value", "encoding must be utf-8 or "
		    "base64");
		return (-1);
	}
	return (0);
}

static int
api_exec_command(struct hreq *hr, const struct api_field *f,
    const struct api_value *v, void *dst)
{
	struct api_exec	*e = dst;

	e->e_command = v->av_str;
	e->e_command_len = v->av_len;
	return (0);
}

static int
api_exec_argv(struct hreq *hr, const struct api_field *f,
    const struct api_value *v, void *dst)
{
	struct api_exec	*e = dst;

	e->e_argv = v->av_json;
	return (0);
}

static int
api_exec_argv_strings(struct hreq *hr, struct api_exec *e)
{
	struct msg_exec	*x = &e->e_x;
	json_t		*v;
	const char	*s;
	size_t		 i, len;

	if (!json_is_array(e->e_argv) || json_array_size(e->e_argv) == 0 ||
	    json_array_size(e->e_argv) > MSG_ARGV_MAX) {
		http_error(hr, 400, json_is_array(e->e_argv) ?
		    "out-of-range" : "bad-type", "argv must be an array of 1 "
		    "to %d strings", MSG_ARGV_MAX);
		return (-1);
	}
	x->x_argc = json_array_size(e->e_argv);
	if ((x->x_argv = calloc(x->x_argc + 1, sizeof(char *))) == NULL) {
		http_error(hr, 500, "internal", "out of memory");
		return (-1);
	}
	json_array_foreach(e->e_argv, i, v) {
		if (!json_is_string(v)) {
			http_error(hr, 400, "bad-type", "argv must hold "
			    "strings only");
			return (-1);
		}
		s = json_string_value(v);
		len = json_string_length(v);
		if (len > MSG_ARG_MAX || memchr(s, '\0', len) != NULL ||
		    (i == 0 && len == 0)) {
			http_error(hr, 400, "bad-value", "argv[%zu] is empty, "
			    "longer than %d bytes or holds a NUL", i,
			    MSG_ARG_MAX);
			return (-1);
		}
		x->x_argv[i] = (char *)s;
	}
	return (0);
}

/* Either argv or command, and what is given is a command. */
static int
api_exec_what(struct hreq *hr, const struct api_field *f,
    const struct api_value *v, void *dst)
{
	struct api_exec	*e = dst;
	int		 argv = e->e_argv != NULL;

	if (argv == (e->e_command != NULL)) {
		http_error(hr, 400, argv ? "bad-request" : "missing-field",
		    "give either argv (an array of strings) or command (a "
		    "string for sh -c)%s", argv ? ", not both" : "");
		return (-1);
	}
	if (argv)
		return (api_exec_argv_strings(hr, e));
	if (e->e_command_len == 0) {
		http_error(hr, 400, "bad-value", "command is empty");
		return (-1);
	}
	e->e_x.x_command = (char *)e->e_command;
	return (0);
}

static int
api_exec_cwd(struct hreq *hr, const struct api_field *f,
    const struct api_value *v, void *dst)
{
	struct api_exec	*e = dst;

	strlcpy(e->e_x.x_cwd, v->av_str, sizeof(e->e_x.x_cwd));
	return (0);
}

static long long
api_exec_timeout_max(const void *dst)
{
	const struct api_exec *e = dst;

	if (e->e_bg)
		return ((long long)LIFETIME_MAX * 1000);
	return (broker_self.ps_conf.c_exec_timeout_max);
}

static long long
api_exec_output_max(const void *dst)
{
	return (broker_self.ps_conf.c_exec_output_max);
}

/* stdin: text, or base64 of any bytes when encoding says so. */
static long long
api_exec_stdin_max(const void *dst)
{
	const struct api_exec *e = dst;

	return (e->e_b64 ? (MSG_STDIN_MAX + 2) / 3 * 4 : MSG_STDIN_MAX);
}

static int
api_exec_stdin(struct hreq *hr, const struct api_field *f,
    const struct api_value *v, void *dst)
{
	struct api_exec	*e = dst;
	struct msg_exec	*x = &e->e_x;
	ssize_t		 n;

	if (v->av_len == 0)
		return (0);
	if (!e->e_b64) {
		x->x_stdin = (uint8_t *)v->av_str;
		x->x_stdin_len = v->av_len;
		return (0);
	}
	if ((x->x_stdin = malloc(v->av_len / 4 * 3 + 3)) == NULL) {
		http_error(hr, 500, "internal", "out of memory");
		return (-1);
	}
	if ((n = api_b64_decode(v->av_str, v->av_len, x->x_stdin,
	    MSG_STDIN_MAX)) == -1) {
		free(x->x_stdin);
		x->x_stdin = NULL;
		http_error(hr, 400, "bad-value", "stdin is not base64 of at "
		    "most %d bytes", MSG_STDIN_MAX);
		return (-1);
	}
	x->x_stdin_len = (size_t)n;
	return (0);
}

/* stream: true answers with server-sent events (http_stream.c). */
static int
api_exec_stream(struct hreq *hr, const struct api_field *f,
    const struct api_value *v, void *dst)
{
	const struct api_exec *e = dst;

	if (!json_is_boolean(v->av_json)) {
		http_error(hr, 400, "bad-type", "stream must be true or false");
		return (-1);
	}
	/* A background process's output is read, not streamed. */
	if (e->e_bg) {
		http_error(hr, 400, "unknown-field", "stream: a background "
		    "process's output is read with GET .../processes/<id>");
		return (-1);
	}
	hr->hr_stream = json_is_true(v->av_json);
	return (0);
}

/*
 * stdinOpen: true keeps a background process's stdin open after
 * "stdin" for POST .../processes/<id>/stdin (docs/interactive.md).
 */
static int
api_exec_stdin_open(struct hreq *hr, const struct api_field *f,
    const struct api_value *v, void *dst)
{
	struct api_exec	*e = dst;

	if (!json_is_boolean(v->av_json)) {
		http_error(hr, 400, "bad-type", "stdinOpen must be true or "
		    "false");
		return (-1);
	}
	if (!e->e_bg) {
		http_error(hr, 400, "unknown-field", "stdinOpen: only a "
		    "background process's stdin stays open");
		return (-1);
	}
	e->e_x.x_stdin_open = json_is_true(v->av_json);
	return (0);
}

/* undo: true keeps the home first, for POST .../undo (docs/snapshots.md). */
static int
api_exec_undo(struct hreq *hr, const struct api_field *f,
    const struct api_value *v, void *dst)
{
	struct api_exec	*e = dst;

	if (!json_is_boolean(v->av_json)) {
		http_error(hr, 400, "bad-type", "undo must be true or false");
		return (-1);
	}
	if (e->e_bg) {
		http_error(hr, 400, "unknown-field", "undo: a background "
		    "process is not taken back; take a snapshot first");
		return (-1);
	}
	e->e_x.x_undo = json_is_true(v->av_json);
	return (0);
}

static const struct api_field api_exec_fields[] = {
	{ "encoding",	API_STRING, 0, 16, NULL, NULL, NULL,
	    api_exec_encoding, 0, 0 },
	{ "command",	API_STRING, 0, MSG_COMMAND_MAX, NULL, NULL, NULL,
	    api_exec_command, 0, 0 },
	{ "argv",	API_JSON, 0, 0, NULL, NULL, NULL,
	    api_exec_argv, 0, 0 },
	{ NULL,		API_CHECK, 0, 0, NULL, NULL, NULL,
	    api_exec_what, 0, 0 },
	{ "cwd",	API_STRING, 0, PATH_MAX - 1, NULL, NULL, NULL,
	    api_exec_cwd, 0, 0 },
	{ "timeoutMs",	API_INT, EXEC_TIMEOUT_MIN, 0, api_exec_timeout_max,
	    NULL, NULL, NULL, API_U32(struct api_exec, e_x.x_timeout_ms) },
	{ "maxBytes",	API_INT, EXEC_OUTPUT_MIN, 0, api_exec_output_max,
	    NULL, NULL, NULL, API_U32(struct api_exec, e_x.x_max_bytes) },
	{ "stdin",	API_TEXT, 0, 0, api_exec_stdin_max, NULL, NULL,
	    api_exec_stdin, 0, 0 },
	{ "stream",	API_JSON, 0, 0, NULL, NULL, NULL,
	    api_exec_stream, 0, 0 },
	{ "stdinOpen",	API_JSON, 0, 0, NULL, NULL, NULL,
	    api_exec_stdin_open, 0, 0 },
	{ "undo",	API_JSON, 0, 0, NULL, NULL, NULL,
	    api_exec_undo, 0, 0 },
};
static const struct api_fields api_exec_body =
    API_FIELDS("an exec request", api_exec_fields);

/*
 * An exec body o read without a request of evhttp's (the channel's
 * exec, http_channel.c): hr is the caller's, with no hr_req, so that a
 * refusal is kept in hr_captured (http_reply()).  x is filled as for
 * POST .../exec; *b64 says x_stdin is malloc'd.  0, or -1 refused.
 * The caller frees x_argv (and x_stdin when *b64) either way.
 */
int
api_exec_read(struct hreq *hr, json_t *o, struct msg_exec *x, int *b64)
{
	struct api_exec	 e;
	int		 rv;

	memset(&e, 0, sizeof(e));
	rv = api_read(hr, o, &api_exec_body, &e);
	*x = e.e_x;
	*b64 = e.e_b64;
	return (rv);
}

/*
 * POST .../exec: api_exec_fields[]; with bg, POST .../processes, the
 * same body with timeoutMs up to a fence's lifetime (svc_spawn() holds
 * it to what is left of this one's).
 */
void
api_exec(struct hreq *hr, int bg)
{
	struct api_exec	 e;
	struct msg_exec	*x = &e.e_x;
	struct svc_who	 w;
	struct hconn	*hc = hr->hr_conn;
	json_t		*o;

	/* hr is gone once answered: what the cleanup needs is kept here. */
	memset(&e, 0, sizeof(e));
	e.e_bg = bg;
	if ((o = api_body(hr, 1)) == NULL)
		return;
	if (api_read(hr, o, &api_exec_body, &e) == 0) {
		strlcpy(x->x_key, hr->hr_key, sizeof(x->x_key));
		x->x_owner = MSG_OWNER_NONE;
		api_who(hr, &w);
		if (bg)
			svc_spawn(&w, x, http_procs_answer, hr);
		else if (!hr->hr_stream)
			svc_exec(&w, x, api_answer, hr);
		else {
			svc_exec_stream(&w, x, http_stream_answer, hr);
			/* Not refused at once: the events begin. */
			if (http_pending(hr, hc))
				http_stream_start(hr);
		}
	}
	if (e.e_b64)
		free(x->x_stdin);
	free(x->x_argv);
	json_decref(o);
}

static int
api_git_name(struct hreq *hr, const struct api_field *f,
    const struct api_value *v, void *dst)
{
	struct msg_gitconfig *g = dst;

	g->g_set_name = 1;
	memcpy(g->g_name, v->av_str, v->av_len);
	return (0);
}

static int
api_git_email(struct hreq *hr, const struct api_field *f,
    const struct api_value *v, void *dst)
{
	struct msg_gitconfig *g = dst;

	g->g_set_email = 1;
	memcpy(g->g_email, v->av_str, v->av_len);
	return (0);
}

static int
api_git_some(struct hreq *hr, const struct api_field *f,
    const struct api_value *v, void *dst)
{
	struct msg_gitconfig *g = dst;

	if (!g->g_set_name && !g->g_set_email) {
		http_error(hr, 400, "missing-field", "give name, email or "
		    "both");
		return (-1);
	}
	return (0);
}

static const struct api_field api_git_config_fields[] = {
	{ "name",	API_STRING, 0, MSG_GIT_VALUE_MAX, NULL, NULL, NULL,
	    api_git_name, 0, 0 },
	{ "email",	API_STRING, 0, MSG_GIT_VALUE_MAX, NULL, NULL, NULL,
	    api_git_email, 0, 0 },
	{ NULL,		API_CHECK, 0, 0, NULL, NULL, NULL,
	    api_git_some, 0, 0 },
};
static const struct api_fields api_git_config_body =
    API_FIELDS("a git config request", api_git_config_fields);

/* GET .../git/config, and POST with api_git_config_fields[] */
void
api_git_config(struct hreq *hr, int write)
{
	struct msg_gitconfig g;
	struct svc_who	 w;
	json_t		*o = NULL;

	memset(&g, 0, sizeof(g));
	if (write) {
		if ((o = api_body(hr, 1)) == NULL)
			return;
		if (api_read(hr, o, &api_git_config_body, &g) == -1)
			goto done;
	}
	strlcpy(g.g_key, hr->hr_key, sizeof(g.g_key));
	g.g_owner = MSG_OWNER_NONE;
	api_who(hr, &w);
	svc_git_config(&w, &g, api_answer, hr);
 done:
	explicit_bzero(&g, sizeof(g));
	json_decref(o);
}

static int
api_git_path(struct hreq *hr, const struct api_field *f,
    const struct api_value *v, void *dst)
{
	struct msg_gitinit *gi = dst;

	memcpy(gi->gi_path, v->av_str, v->av_len);
	return (0);
}

static const struct api_field api_git_init_fields[] = {
	{ "path",	API_STRING, 0, PATH_MAX - 1, NULL, NULL, NULL,
	    api_git_path, 0, 0 },
};
static const struct api_fields api_git_init_body =
    API_FIELDS("a git init request", api_git_init_fields);

/* POST .../git/init: {"path"}, HOME without one */
void
api_git_init(struct hreq *hr)
{
	struct msg_gitinit gi;
	struct svc_who	 w;
	json_t		*o;

	memset(&gi, 0, sizeof(gi));
	if ((o = api_body(hr, 0)) == NULL)
		return;
	if (api_read(hr, o, &api_git_init_body, &gi) == 0) {
		strlcpy(gi.gi_key, hr->hr_key, sizeof(gi.gi_key));
		gi.gi_owner = MSG_OWNER_NONE;
		api_who(hr, &w);
		svc_git_init(&w, &gi, api_answer, hr);
	}
	explicit_bzero(&gi, sizeof(gi));
	json_decref(o);
}

