/*
 * What the HTTP API answers, as JSON: the status of each error code,
 * error messages made printable, base64, a fence's state and a
 * command's result (fenced-api(7) says every field).
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
	{ "inner-needs-vm",		400 },
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
	{ "snapshot-not-found",		404 },
	{ "snapshot-exists",		409 },
	{ "snapshot-in-use",		409 },
	{ "snapshot-limit",		507 },
	{ "snapshot-failed",		500 },
	{ "snapshot-unavailable",	503 },
	{ "home-exists",		409 },
	{ "branch-unsupported",		501 },
	{ "branch-failed",		500 },
	{ "not-permitted",		403 },
};


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
void
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
ssize_t
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
json_t *
api_boundary(const char *verdicts)
{
	json_t		*j;

	if (verdicts == NULL || (j = json_loads(verdicts, 0, NULL)) == NULL)
		return (json_null());
	return (j);
}

/*
 * A fence's state: its level is what was measured (docs/design.md section
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
    const struct svc_egress *se, const char *label)
{
	char		 suffix[SVC_LABEL_LEN + FENCE_KEY_SIZE + 16];
	const struct msg_timings *t = &f->f_timings;
	json_t		*j;

	j = json_pack("{s:s, s:I, s:s, s:s, s:s?, s:s?, s:s, s:o, s:s, s:o, "
	    "s:s, s:I, s:I, s:o, s:o, s:b, s:{s:I, s:I, s:f}, s:{s:I, s:I, s:I, "
	    "s:I, s:I, s:I, s:o, s:n}}",
	    "key", f->f_key,
	    "owner", (json_int_t)f->f_owner,
	    "tier", tier_name(f->f_tier),
	    "backend", backend_name(f->f_backend),
	    "inner", f->f_inner ? "runsc" : NULL,
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
	/* docs/snapshots.md: what a snapshot of it keeps, what it is of. */
	if (j != NULL && (json_object_set_new(j, "from", f->f_from[0] != '\0' ?
	    json_string(f->f_from) : json_null()) == -1 ||
	    json_object_set_new(j, "snapshotKeeps", json_string("home")) ==
	    -1 || json_object_set_new(j, "denialsOutside",
	    json_integer((json_int_t)(f->f_denials_outside > INT64_MAX ?
	    INT64_MAX : f->f_denials_outside))) == -1 ||
	    /* The owner's name as the host said it at boot, or null. */
	    json_object_set_new(j, "ownerName", f->f_owner_name[0] != '\0' ?
	    json_string(f->f_owner_name) : json_null()) == -1)) {
		json_decref(j);
		return (NULL);
	}
	if (j != NULL && f->f_negress > 0 &&
	    json_object_set_new(j, "egress", api_egress(f, se)) == -1) {
		json_decref(j);
		return (NULL);
	}
	/* The ports' host form: <port>-<hostSuffix>:<listen port>. */
	if (j != NULL && label != NULL) {
		snprintf(suffix, sizeof(suffix), "%s.%s.localhost", label,
		    f->f_key);
		if (json_object_set_new(j, "ports", json_pack("{s:s}",
		    "hostSuffix", suffix)) == -1) {
			json_decref(j);
			return (NULL);
		}
	}
	return (j);
}

/*
 * A fence's state as JSON text.  One of the service's records is
 * rendered once per change of its state and kept there (a_rendered);
 * otherwise *mine says the caller frees it.  NULL when it failed.
 */
const char *
api_fence_text(const struct svc_answer *a, char **mine)
{
	json_t		*j;
	char		*s;

	*mine = NULL;
	if (a->a_rendered != NULL && *a->a_rendered != NULL)
		return (*a->a_rendered);
	if ((j = api_fence(a->a_fence, a->a_boundary, a->a_egress,
	    a->a_label)) == NULL)
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
 * A command's or a process's denials (docs/denials.md) into o, from
 * the lines of text: "denials", each {layer, what, count, remedy}, when
 * there are some, "denialsDropped" when more were met than listed
 * (dropped), "denialsNote" when some layer is not observed (note, or
 * NULL).  -1 if out of memory.
 */
int
api_denials(json_t *o, const char *text, uint32_t dropped, const char *note)
{
	struct msg_denial_line	 dl[MSG_DENIALS_MAX];
	json_t			*a, *d;
	int			 n, i;

	if (note != NULL && note[0] != '\0' && json_object_set_new(o,
	    "denialsNote", json_string(note)) == -1)
		return (-1);
	if (dropped > 0 && json_object_set_new(o, "denialsDropped",
	    json_integer(dropped)) == -1)
		return (-1);
	if (text == NULL ||
	    (n = msg_denials_parse(text, dl, nitems(dl))) <= 0)
		return (0);
	if ((a = json_array()) == NULL)
		return (-1);
	for (i = 0; i < n && i < (int)nitems(dl); i++) {
		d = json_pack("{s:s, s:s, s:I, s:o}",
		    "layer", msg_denial_layer_name(dl[i].dl_layer),
		    "what", dl[i].dl_what,
		    "count", (json_int_t)dl[i].dl_count,
		    "remedy", dl[i].dl_remedy[0] != '\0' ?
		    json_string(dl[i].dl_remedy) : json_null());
		if (d == NULL || json_array_append_new(a, d) == -1) {
			json_decref(a);
			return (-1);
		}
	}
	return (json_object_set_new(o, "denials", a));
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
	if (o != NULL && api_denials(o, rs->rs_denials,
	    rs->rs_denials_dropped, rs->rs_denials_note) == -1) {
		json_decref(o);
		return (NULL);
	}
	return (o);
}

