/*
 * The endpoints of the HTTP API (DESIGN.md section 6; fenced-api(7)).
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

#define API_ENVS		"/api/environments"
#define API_PROBE		"/api/probe"
#define API_FIELD_SHOW		48	/* of a field name, in a message */

enum http_endpoint {
	EP_LIST = 1,		/* /api/environments */
	EP_ENV,			/* /api/environments/KEY */
	EP_EXEC,		/* .../exec */
	EP_GIT_CONFIG,		/* .../git/config */
	EP_GIT_INIT,		/* .../git/init */
	EP_PROBE,		/* .../probe */
	EP_PROBE_DEFAULT,	/* /api/probe */
	EP_PROCS,		/* .../processes */
	EP_PROC,		/* .../processes/<id> (takes its query) */
	EP_FILES		/* .../files/PATH (http_files.c) */
};

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
	{ API_FILES,	EP_FILES,	M_GET | M_PUT | M_DELETE,
	    "GET, HEAD, PUT, DELETE", 2 },
};
static const struct api_route api_route_proc =
    { "/processes/", EP_PROC, M_GET | M_DELETE, "GET, HEAD, DELETE", 1 };
static const struct api_route api_route_list =
    { "", EP_LIST, M_GET, "GET, HEAD", 0 };
static const struct api_route api_route_probe =
    { "", EP_PROBE_DEFAULT, M_GET, "GET, HEAD", 1 };

/* The status of each error code the fencer, the agent or we give. */
static const struct {
	const char	*as_code;
	int		 as_status;
} api_statuses[] = {
	{ "not-found",			404 },
	{ "exists",			409 },
	{ "fence-stopped",		409 },
	{ "too-many-fences",		429 },
	{ "limit-over-ceiling",		422 },
	{ "user-total-exceeded",	429 },
	{ "backend-unavailable",	501 },
	{ "unmeasured",			422 },
	{ "require-not-met",		412 },
	{ "unknown-user",		403 },
	{ "no-uid",			503 },
	{ "no-cgroups",			503 },
	{ "bad-egress",			400 },
	{ "egress-needs-l2",		400 },
	{ "egress-unsupported",		501 },
	{ "home-refused",		500 },
	{ "boot-failed",		500 },
	{ "agent-error",		502 },
	{ "internal",			500 },
	{ "exec-timeout",		504 },
	{ "exec-output-over-budget",	422 },
	{ "exec-cwd-outside-home",	400 },
	{ "exec-cwd-invalid",		400 },
	{ "exec-unpaired",		403 },
	{ "exec-bad-request",		400 },
	{ "exec-busy",			429 },
	{ "too-many-execs",		429 },
	{ "bad-request",		400 },
	{ "exec-failed",		422 },
	{ "git-not-installed",		501 },
	{ "git-bad-value",		400 },
	{ "git-config-failed",		500 },
	{ "too-many-processes",		429 },
	{ "process-not-found",		404 },
	{ "file-bad-path",		400 },
	{ "file-bad-request",		400 },
	{ "file-outside-home",		403 },
	{ "file-denied",		403 },
	{ "file-not-found",		404 },
	{ "file-not-regular",		409 },
	{ "file-not-empty",		409 },
	{ "file-exists",		409 },
	{ "file-changed",		409 },
	{ "file-too-large",		413 },
	{ "file-no-space",		507 },
	{ "file-failed",		500 },
};

static void	api_answer(void *, const struct svc_answer *);

/* For http_stream.c: an answer that comes before its stream began. */
void
http_api_answer(void *arg, const struct svc_answer *a)
{
	api_answer(arg, a);
}

int
http_api_status(const char *code)
{
	size_t	 i;

	for (i = 0; i < sizeof(api_statuses) / sizeof(api_statuses[0]); i++)
		if (strcmp(api_statuses[i].as_code, code) == 0)
			return (api_statuses[i].as_status);
	return (500);
}

/* Text from outside, fit for a message: printable ASCII, bounded. */
static void
api_show(char *dst, size_t size, const char *src, size_t len)
{
	size_t	 i, n = 0;

	for (i = 0; i < len && n + 4 < size; i++)
		dst[n++] = (src[i] >= 0x20 && src[i] < 0x7f) ? src[i] : '?';
	if (i < len && n + 3 < size) {
		memcpy(dst + n, "...", 3);
		n += 3;
	}
	dst[n] = '\0';
}

/* {"error": code, "message": message}; message made printable. */
json_t *
http_api_message(const char *code, const char *message)
{
	char	 text[MSG_ERROR_TEXT_MAX];
	json_t	*o;

	api_show(text, sizeof(text), message, strlen(message));
	if ((o = json_object()) == NULL ||
	    json_object_set_new(o, "error", json_string(code)) == -1 ||
	    json_object_set_new(o, "message", json_string(text)) == -1) {
		json_decref(o);
		return (NULL);
	}
	return (o);
}

/* Base64 (RFC 4648, with padding) of binary bytes. */
static const char api_b64[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

json_t *
api_b64_encode(const uint8_t *p, size_t len)
{
	json_t	*j;
	char	*s;
	size_t	 i, n = 0;
	uint32_t v;

	if ((s = malloc((len + 2) / 3 * 4 + 1)) == NULL)
		return (NULL);
	for (i = 0; i + 2 < len; i += 3) {
		v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
		s[n++] = api_b64[v >> 18 & 63];
		s[n++] = api_b64[v >> 12 & 63];
		s[n++] = api_b64[v >> 6 & 63];
		s[n++] = api_b64[v & 63];
	}
	if (i < len) {
		v = (uint32_t)p[i] << 16;
		if (i + 1 < len)
			v |= (uint32_t)p[i + 1] << 8;
		s[n++] = api_b64[v >> 18 & 63];
		s[n++] = api_b64[v >> 12 & 63];
		s[n++] = i + 1 < len ? api_b64[v >> 6 & 63] : '=';
		s[n++] = '=';
	}
	s[n] = '\0';
	j = json_stringn(s, n);
	free(s);
	return (j);
}

static int
api_b64_value(int c)
{
	const char	*p;

	if (c == '\0' || (p = strchr(api_b64, c)) == NULL)
		return (-1);
	return ((int)(p - api_b64));
}

/*
 * Strict base64: groups of four from the alphabet, '=' padding only at
 * the end, no white space.  Returns the length, or -1.
 */
static ssize_t
api_b64_decode(const char *s, size_t len, uint8_t *out, size_t max)
{
	size_t	 i, n = 0, pad = 0;
	int	 v[4], k;

	if (len % 4 != 0)
		return (-1);
	for (i = 0; i < len; i += 4) {
		for (k = 0; k < 4; k++) {
			if (s[i + k] == '=' && i + 4 == len && k >= 2 &&
			    (k == 3 || s[i + 3] == '=')) {
				v[k] = 0;
				pad++;
			} else if ((v[k] = api_b64_value(
			    (unsigned char)s[i + k])) == -1)
				return (-1);
		}
		if (n + 3 - pad > max)
			return (-1);
		out[n++] = v[0] << 2 | v[1] >> 4;
		if (pad < 2)
			out[n++] = (v[1] & 15) << 4 | v[2] >> 2;
		if (pad < 1)
			out[n++] = (v[2] & 3) << 6 | v[3];
		/* The bits padding drops must be zero: one text per bytes. */
		if ((pad == 2 && (v[1] & 15) != 0) ||
		    (pad == 1 && (v[2] & 3) != 0))
			return (-1);
	}
	return ((ssize_t)n);
}

static json_t *
api_time(int64_t t)
{
	struct tm	 tm;
	time_t		 tt = (time_t)t;
	char		 buf[32];

	if (t <= 0 || gmtime_r(&tt, &tm) == NULL ||
	    strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		return (json_null());
	return (json_string(buf));
}

static json_t *
api_reason(int r)
{
	const char	*s = stop_reason_name(r);

	return (s != NULL ? json_string(s) : json_null());
}

/*
 * The verdicts of the fence's last probe, as the service keeps them for
 * a running fence; null before one, or once the fence is gone.
 */
static json_t *
api_boundary(const char *verdicts)
{
	json_t		*j;

	if (verdicts == NULL || (j = json_loads(verdicts, 0, NULL)) == NULL)
		return (json_null());
	return (j);
}

/*
 * A fence's state: its level is what was measured (DESIGN.md section
 * 5), "unmeasured" before the first probe.
 */
/*
 * A fence's egress (docs/egress.md): its list, where the proxy is
 * inside it, what was decided so far and the last decisions.
 */
static json_t *
api_egress(const struct msg_fence *f, const struct svc_egress *se)
{
	const struct msg_egress_counts *n = &f->f_egress_n;
	json_t		*list;
	uint32_t	 i;
	char		 proxy[32];

	if ((list = json_array()) == NULL)
		return (NULL);
	for (i = 0; i < f->f_negress; i++)
		if (json_array_append_new(list, json_string(f->f_egress[i])) ==
		    -1) {
			json_decref(list);
			return (NULL);
		}
	snprintf(proxy, sizeof(proxy), "127.0.0.1:%d", EGRESS_PROXY_PORT);
	return (json_pack("{s:o, s:s, s:I, s:I, s:I, s:I, s:I, s:o}",
	    "list", list,
	    "proxy", proxy,
	    "allowed", (json_int_t)n->en_allowed,
	    "refused", (json_int_t)n->en_refused,
	    "open", (json_int_t)n->en_open,
	    "bytesUp", (json_int_t)n->en_up,
	    "bytesDown", (json_int_t)n->en_down,
	    "recent", svc_egress_recent_json(se)));
}

static json_t *
api_fence(const struct msg_fence *f, const char *verdicts,
    const struct svc_egress *se)
{
	const struct msg_timings *t = &f->f_timings;
	json_t		*j;

	j = json_pack("{s:s, s:I, s:s, s:s, s:s?, s:s, s:o, s:s, s:o, s:s, "
	    "s:I, s:I, s:o, s:o, s:b, s:{s:I, s:I, s:f}, s:{s:I, s:I, s:I, s:I, "
	    "s:I, s:I, s:o, s:n}}",
	    "key", f->f_key,
	    "owner", (json_int_t)f->f_owner,
	    "tier", tier_name(f->f_tier),
	    "backend", backend_name(f->f_backend),
	    "accel", f->f_accel == MSG_ACCEL_KVM ? "kvm" :
	    f->f_accel == MSG_ACCEL_TCG ? "tcg" : NULL,
	    "state", fence_state_name(f->f_state),
	    "reason", api_reason(f->f_reason),
	    "level", level_name(f->f_level),
	    "boundary", api_boundary(verdicts),
	    "home", f->f_home,
	    "homeUsed", (json_int_t)f->f_home_used,
	    "homeLimit", (json_int_t)f->f_home_limit,
	    "started", api_time(f->f_started),
	    "deadline", api_time(f->f_deadline),
	    "pooled", f->f_pooled != 0,
	    "limits",
	    "memory", (json_int_t)f->f_limits.fl_memory,
	    "pids", (json_int_t)f->f_limits.fl_pids,
	    "cpu", f->f_limits.fl_cpu_milli / 1000.0,
	    "timings",
	    "namespacesUs", (json_int_t)t->t_namespaces_us,
	    "mountsUs", (json_int_t)t->t_mounts_us,
	    "cgroupUs", (json_int_t)t->t_cgroup_us,
	    "seccompUs", (json_int_t)t->t_seccomp_us,
	    "execUs", (json_int_t)t->t_exec_us,
	    "agentReadyUs", (json_int_t)t->t_agent_us,
	    "takeUs", f->f_pooled ? json_integer(t->t_take_us) : json_null(),
	    "probeUs");
	if (j != NULL && f->f_negress > 0 &&
	    json_object_set_new(j, "egress", api_egress(f, se)) == -1) {
		json_decref(j);
		return (NULL);
	}
	return (j);
}

/*
 * A fence's state as JSON text.  One of the service's records is
 * rendered once per change of its state and kept there (a_rendered);
 * otherwise *mine says the caller frees it.  NULL when it failed.
 */
static const char *
api_fence_text(const struct svc_answer *a, char **mine)
{
	json_t		*j;
	char		*s;

	*mine = NULL;
	if (a->a_rendered != NULL && *a->a_rendered != NULL)
		return (*a->a_rendered);
	if ((j = api_fence(a->a_fence, a->a_boundary, a->a_egress)) == NULL)
		return (NULL);
	s = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	if (s == NULL)
		return (NULL);
	if (a->a_rendered != NULL)
		*a->a_rendered = s;
	else
		*mine = s;
	return (s);
}

/*
 * A command's result.  Output goes as UTF-8 text when both streams are
 * valid UTF-8 and base64 was not asked for; otherwise both as base64,
 * and "encoding" says which: the bytes always come back exactly.
 */
json_t *
api_result(const struct msg_result *rs, int base64)
{
	json_t	*o, *out = NULL, *err = NULL;

	if (!base64) {
		out = json_stringn(rs->rs_stdout_len ?
		    (const char *)rs->rs_stdout : "", rs->rs_stdout_len);
		err = json_stringn(rs->rs_stderr_len ?
		    (const char *)rs->rs_stderr : "", rs->rs_stderr_len);
		if (out == NULL || err == NULL) {
			json_decref(out);
			json_decref(err);
			base64 = 1;
		}
	}
	if (base64) {
		out = api_b64_encode(rs->rs_stdout, rs->rs_stdout_len);
		err = api_b64_encode(rs->rs_stderr, rs->rs_stderr_len);
	}
	if (out == NULL || err == NULL) {
		json_decref(out);
		json_decref(err);
		return (NULL);
	}
	o = json_pack("{s:o, s:o, s:o, s:o, s:s, s:I, s:b}",
	    "exitCode", rs->rs_signal ? json_null() :
	    json_integer(rs->rs_exit),
	    "signal", rs->rs_signal ? json_integer(rs->rs_signal) :
	    json_null(),
	    "stdout", out,
	    "stderr", err,
	    "encoding", base64 ? "base64" : "utf-8",
	    "durationMs", (json_int_t)rs->rs_duration_ms,
	    "truncated", rs->rs_truncated);
	return (o);
}

/* Request bodies. */

/*
 * The body as a JSON object; an empty one is {} unless one is needed.
 * Returns the object, or NULL with the answer sent.
 */
static json_t *
api_body(struct hreq *hr, int needed)
{
	struct evbuffer	*in = evhttp_request_get_input_buffer(hr->hr_req);
	size_t		 len = evbuffer_get_length(in);
	json_error_t	 e;
	json_t		*o;
	unsigned char	*p;

	if (len == 0) {
		if (needed) {
			http_error(hr, 400, "missing-body", "this request "
			    "needs a JSON object as its body");
			return (NULL);
		}
		return (json_object());
	}
	if ((p = evbuffer_pullup(in, -1)) == NULL) {
		http_error(hr, 500, "internal", "out of memory");
		return (NULL);
	}
	/* NUL is allowed in strings, and refused in each that is a name. */
	if ((o = json_loadb((const char *)p, len, JSON_REJECT_DUPLICATES |
	    JSON_ALLOW_NUL, &e)) == NULL) {
		http_error(hr, 400, "bad-json", "the body is not JSON: %s "
		    "(line %d, column %d)", e.text, e.line, e.column);
		return (NULL);
	}
	if (!json_is_object(o)) {
		json_decref(o);
		http_error(hr, 400, "bad-type", "the body must be a JSON "
		    "object");
		return (NULL);
	}
	return (o);
}

/*
 * A string field of at most max bytes; without nul_ok it may hold no
 * NUL.  Returns 1 when present, 0 when absent, -1 with the answer sent.
 */
static int
api_string(struct hreq *hr, json_t *o, const char *name, size_t max,
    int nul_ok, const char **s, size_t *len)
{
	json_t	*v;

	if ((v = json_object_get(o, name)) == NULL)
		return (0);
	if (!json_is_string(v)) {
		http_error(hr, 400, "bad-type", "%s must be a string", name);
		return (-1);
	}
	*s = json_string_value(v);
	*len = json_string_length(v);
	if (*len > max) {
		http_error(hr, 400, "out-of-range", "%s is longer than %zu "
		    "bytes", name, max);
		return (-1);
	}
	if (!nul_ok && memchr(*s, '\0', *len) != NULL) {
		http_error(hr, 400, "bad-value", "%s may not hold a NUL",
		    name);
		return (-1);
	}
	return (1);
}

/* A whole number from min to max; same returns as api_string(). */
static int
api_int(struct hreq *hr, json_t *o, const char *name, long long min,
    long long max, long long *out)
{
	json_t		*v;
	json_int_t	 n;

	if ((v = json_object_get(o, name)) == NULL)
		return (0);
	if (!json_is_integer(v)) {
		http_error(hr, 400, "bad-type", "%s must be a whole number",
		    name);
		return (-1);
	}
	n = json_integer_value(v);
	if (n < min || n > max) {
		http_error(hr, 400, "out-of-range", "%s must be from %lld to "
		    "%lld", name, min, max);
		return (-1);
	}
	*out = n;
	return (1);
}

/*
 * A request body as a table of its fields, read by one walk
 * (api_read()) in the table's order, which is the order the errors
 * come in.  Strings are at most af_hi bytes (af_hi_fn, if set, decides
 * from what was read before) and hold no NUL unless API_TEXT; numbers
 * are from af_lo to af_hi; an object is read by its own table.  A
 * present field's value goes to af_set, or (a whole number) to af_off
 * in what is read into.  An API_CHECK row is a rule between fields,
 * checked where it stands.  No field of these bodies is required
 * alone: what is (exec's argv or command) is an API_CHECK.
 */
enum api_type {
	API_STRING,
	API_TEXT,	/* a string that may hold NUL */
	API_INT,
	API_NUMBER,
	API_OBJECT,
	API_JSON,	/* any: the setter looks */
	API_CHECK,
};

struct api_value {
	const char	*av_str;
	size_t		 av_len;
	long long	 av_int;
	json_t		*av_json;
};

struct api_fields;

struct api_field {
	const char		*af_name;
	enum api_type		 af_type;
	long long		 af_lo, af_hi;
	long long		(*af_hi_fn)(const void *);
	const char		*af_want;	/* API_NUMBER: "must be ..." */
	const struct api_fields	*af_sub;	/* API_OBJECT */
	int			(*af_set)(struct hreq *,
				    const struct api_field *,
				    const struct api_value *, void *);
	size_t			 af_off;	/* API_INT without af_set */
	size_t			 af_size;	/* 4 or 8 */
};

struct api_fields {
	const char		*as_what;	/* "a boot request" */
	const struct api_field	*as_fields;
	size_t			 as_nfields;
};

static int	api_read(struct hreq *, json_t *, const struct api_fields *,
		    void *);

/* Every field of o must be a field of the table. */
static int
api_known(struct hreq *hr, json_t *o, const struct api_fields *t)
{
	const char	*k;
	json_t		*v;
	char		 show[API_FIELD_SHOW + 4];
	size_t		 i;

	json_object_foreach(o, k, v) {
		for (i = 0; i < t->as_nfields; i++)
			if (t->as_fields[i].af_name != NULL &&
			    strcmp(k, t->as_fields[i].af_name) == 0)
				break;
		if (i == t->as_nfields) {
			api_show(show, sizeof(show), k, strlen(k));
			http_error(hr, 400, "unknown-field", "%s has no field "
			    "\"%s\"", t->as_what, show);
			return (-1);
		}
	}
	return (0);
}

/* One field: 0 read or absent, -1 with the answer sent. */
static int
api_read_field(struct hreq *hr, json_t *o, const struct api_field *f,
    void *dst)
{
	struct api_value v;
	long long	 hi;
	uint32_t	 u32;
	uint64_t	 u64;
	int		 r = 1;

	if (f->af_type == API_CHECK)
		return (f->af_set(hr, f, NULL, dst));
	memset(&v, 0, sizeof(v));
	hi = f->af_hi_fn != NULL ? f->af_hi_fn(dst) : f->af_hi;
	switch (f->af_type) {
	case API_STRING:
	case API_TEXT:
		r = api_string(hr, o, f->af_name, (size_t)hi,
		    f->af_type == API_TEXT, &v.av_str, &v.av_len);
		break;
	case API_INT:
		r = api_int(hr, o, f->af_name, f->af_lo, hi, &v.av_int);
		break;
	case API_NUMBER:
	case API_OBJECT:
	case API_JSON:
		if ((v.av_json = json_object_get(o, f->af_name)) == NULL)
			return (0);
		if (f->af_type == API_NUMBER && !json_is_number(v.av_json)) {
			http_error(hr, 400, "bad-type", "%s must be %s",
			    f->af_name, f->af_want);
			return (-1);
		}
		if (f->af_type == API_OBJECT) {
			if (!json_is_object(v.av_json)) {
				http_error(hr, 400, "bad-type", "%s must be "
				    "an object", f->af_name);
				return (-1);
			}
			return (api_read(hr, v.av_json, f->af_sub, dst));
		}
		break;
	case API_CHECK:
		break;
	}
	if (r <= 0)
		return (r);
	if (f->af_set != NULL)
		return (f->af_set(hr, f, &v, dst));
	/* A whole number within its bounds, stored as it is wide. */
	if (f->af_size == sizeof(u64)) {
		u64 = (uint64_t)v.av_int;
		memcpy((char *)dst + f->af_off, &u64, sizeof(u64));
	} else {
		u32 = (uint32_t)v.av_int;
		memcpy((char *)dst + f->af_off, &u32, sizeof(u32));
	}
	return (0);
}

/* Every field of o by table t into dst; -1 with the answer sent. */
static int
api_read(struct hreq *hr, json_t *o, const struct api_fields *t, void *dst)
{
	size_t		 i;

	if (api_known(hr, o, t) == -1)
		return (-1);
	for (i = 0; i < t->as_nfields; i++)
		if (api_read_field(hr, o, &t->as_fields[i], dst) == -1)
			return (-1);
	return (0);
}

#define API_FIELDS(what, t)	{ what, t, nitems(t) }
#define API_U32(s, m)		offsetof(s, m), sizeof(uint32_t)
#define API_U64(s, m)		offsetof(s, m), sizeof(uint64_t)

/* Who asks: the token's owner, who acts on their own fences alone. */
static void
api_who(const struct hreq *hr, struct svc_who *w)
{
	w->w_uid = hr->hr_uid;
	w->w_admin = 0;
	w->w_unbounded = 0;	/* a token is not root, even root's */
	w->w_noun = "environment";
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

/* tier: L1, L1.5 or L2. */
static int
api_boot_tier(struct hreq *hr, const struct api_field *f,
    const struct api_value *v, void *dst)
{
	struct msg_boot	*b = dst;
	int		 t;

	if ((t = tier_parse(v->av_str)) == -1) {
		http_error(hr, 400, "bad-value", "%s must be L1, L1.5 or L2",
		    f->af_name);
		return (-1);
	}
	b->b_tier = t;
	return (0);
}

/*
 * require: a level, L1 to L4.  The fencer builds; whether the fence
 * earned it the service decides.
 */
static int
api_boot_require(struct hreq *hr, const struct api_field *f,
    const struct api_value *v, void *dst)
{
	struct msg_boot	*b = dst;
	int		 l;

	if ((l = require_parse(v->av_str)) == -1) {
		http_error(hr, 400, "bad-value", "%s must be L1, L1.5, L2, L3 "
		    "or L4", f->af_name);
		return (-1);
	}
	b->b_require = l;
	return (0);
}

static int
api_boot_backend(struct hreq *hr, const struct api_field *f,
    const struct api_value *v, void *dst)
{
	struct msg_boot	*b = dst;

	if ((b->b_backend = backend_parse(v->av_str)) == -1) {
		http_error(hr, 400, "bad-value", "backend must be native, "
		    "runsc, vm, mock or subprocess");
		return (-1);
	}
	return (0);
}

static int
api_boot_cpu(struct hreq *hr, const struct api_field *f,
    const struct api_value *v, void *dst)
{
	struct msg_boot	*b = dst;
	double		 cpu;

	cpu = json_number_value(v->av_json) * 1000;
	if (!(cpu >= CPU_MILLI_MIN && cpu <= CPU_MILLI_MAX)) {
		http_error(hr, 400, "out-of-range", "cpu must be from %.2f "
		    "to %.0f", CPU_MILLI_MIN / 1000.0, CPU_MILLI_MAX / 1000.0);
		return (-1);
	}
	b->b_limits.fl_cpu_milli = (uint32_t)(cpu + 0.5);
	return (0);
}

/*
 * egress: ["name:port", ...], at most EGRESS_LIST_MAX, each an entry of
 * common/egress_list.c, kept canonical; given twice is refused.  Whether
 * the fence may have one (tier, backend) the fencer decides.
 */
static int
api_boot_egress(struct hreq *hr, const struct api_field *f,
    const struct api_value *v, void *dst)
{
	struct msg_boot		*b = dst;
	const char		*s, *why;
	json_t			*item;
	size_t			 i, k;

	if (!json_is_array(v->av_json)) {
		http_error(hr, 400, "bad-egress", "egress must be an array "
		    "of \"name:port\" strings");
		return (-1);
	}
	if (json_array_size(v->av_json) > EGRESS_LIST_MAX) {
		http_error(hr, 400, "bad-egress", "egress has %zu entries; "
		    "at most %d", json_array_size(v->av_json),
		    EGRESS_LIST_MAX);
		return (-1);
	}
	json_array_foreach(v->av_json, i, item) {
		if (!json_is_string(item)) {
			http_error(hr, 400, "bad-egress", "egress[%zu] is not "
			    "a string", i);
			return (-1);
		}
		s = json_string_value(item);
		if (json_string_length(item) != strlen(s) ||
		    !egress_entry_canon(s, b->b_egress[i], &why)) {
			if (json_string_length(item) != strlen(s)) {
				http_error(hr, 400, "bad-egress", "egress[%zu]: "
				    "a NUL byte is not part of a name", i);
				return (-1);
			}
			/* Named back only if it is short, printable ASCII. */
			for (k = 0; s[k] >= 0x20 && s[k] < 0x7f && k < 80; k++)
				;
			http_error(hr, 400, "bad-egress", "egress[%zu]%s%s%s: "
			    "%s", i, s[k] == '\0' ? " \"" : "",
			    s[k] == '\0' ? s : "", s[k] == '\0' ? "\"" : "",
			    why);
			return (-1);
		}
		for (k = 0; k < i; k++)
			if (strcmp(b->b_egress[k], b->b_egress[i]) == 0) {
				http_error(hr, 400, "bad-egress", "egress[%zu] "
				    "repeats egress[%zu], %s", i, k,
				    b->b_egress[i]);
				return (-1);
			}
	}
	b->b_negress = (uint32_t)json_array_size(v->av_json);
	return (0);
}

static const struct api_field api_limit_fields[] = {
	{ "memory",	API_INT, MEMORY_MIN, MEMORY_MAX, NULL, NULL, NULL,
	    NULL, API_U64(struct msg_boot, b_limits.fl_memory) },
	{ "pids",	API_INT, PIDS_MIN, PIDS_MAX, NULL, NULL, NULL,
	    NULL, API_U32(struct msg_boot, b_limits.fl_pids) },
	{ "cpu",	API_NUMBER, 0, 0, NULL, "a number of cpus", NULL,
	    api_boot_cpu, 0, 0 },
};
static const struct api_fields api_limits =
    API_FIELDS("limits", api_limit_fields);

static const struct api_field api_boot_fields[] = {
	{ "tier",	API_STRING, 0, 8, NULL, NULL, NULL,
	    api_boot_tier, 0, 0 },
	{ "require",	API_STRING, 0, 8, NULL, NULL, NULL,
	    api_boot_require, 0, 0 },
	{ "backend",	API_STRING, 0, 16, NULL, NULL, NULL,
	    api_boot_backend, 0, 0 },
	{ "lifetime",	API_INT, LIFETIME_MIN, LIFETIME_MAX, NULL, NULL, NULL,
	    NULL, API_U32(struct msg_boot, b_lifetime) },
	{ "limits",	API_OBJECT, 0, 0, NULL, NULL, &api_limits,
	    NULL, 0, 0 },
	{ "egress",	API_JSON, 0, 0, NULL, NULL, NULL,
	    api_boot_egress, 0, 0 },
};
static const struct api_fields api_boot_body =
    API_FIELDS("a boot request", api_boot_fields);

/* POST /api/environments/KEY: api_boot_fields[] */
static void
api_boot(struct hreq *hr)
{
	struct msg_boot	 b;
	struct svc_who	 w;
	json_t		*o;

	if ((o = api_body(hr, 0)) == NULL)
		return;
	memset(&b, 0, sizeof(b));
	strlcpy(b.b_key, hr->hr_key, sizeof(b.b_key));
	if (api_read(hr, o, &api_boot_body, &b) == 0) {
		api_who(hr, &w);
		hr->hr_created = 1;
		svc_boot(&w, &b, api_answer, hr);
	}
	json_decref(o);
}

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
};
static const struct api_fields api_exec_body =
    API_FIELDS("an exec request", api_exec_fields);

/*
 * POST .../exec: api_exec_fields[]; with bg, POST .../processes, the
 * same body with timeoutMs up to a fence's lifetime (svc_spawn() holds
 * it to what is left of this one's).
 */
static void
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
static void
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
static void
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
static void
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
		http_error(hr, 500, "internal", "unexpected answer");
		break;
	}
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

	if (strcmp(path, API_ENVS) == 0)
		return (&api_route_list);
	if (strcmp(path, API_PROBE) == 0)
		return (&api_route_probe);
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
	if ((rt->ar_methods & method) == 0) {
		http_header(hr, "Allow", rt->ar_allow);
		http_error(hr, 405, "method-not-allowed", "allowed here: %s",
		    rt->ar_allow);
		return;
	}
	if (rt->ar_endpoint != EP_PROC &&
	    api_query(hr, rt, evhttp_uri_get_query(uri)) == -1)
		return;

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
	case EP_GIT_INIT:
		api_git_init(hr);
		break;
	case EP_PROBE:
	case EP_PROBE_DEFAULT:
		api_probe(hr, evhttp_uri_get_query(uri));
		break;
	case EP_FILES:
		http_files_request(hr, evhttp_request_get_command(hr->hr_req),
		    strstr(path + sizeof(API_ENVS), API_FILES) +
		    strlen(API_FILES), evhttp_uri_get_query(uri));
		break;
	}
}
