/*
 * POST /api/environments/KEY: a boot request's body, field by field
 * (api_boot_fields[]), into the fence service's struct msg_boot.
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
 * require: a level, L1 to L4, or L4+runsc: L4 of a vm fence with the
 * layer inside, which it asks for (read after "inner", which it may
 * not contradict).  The fencer builds; whether the fence earned it the
 * service decides.
 */
static int
api_boot_require(struct hreq *hr, const struct api_field *f,
    const struct api_value *v, void *dst)
{
	struct msg_boot	*b = dst;
	int		 l, inner;

	if ((l = require_parse_inner(v->av_str, &inner)) == -1) {
		http_error(hr, 400, "bad-value", "%s must be L1, L1.5, L2, L3, "
		    "L4 or L4+runsc", f->af_name);
		return (-1);
	}
	if (inner == INNER_RUNSC) {
		if (b->b_inner == INNER_NONE) {
			http_error(hr, 400, "bad-value", "%s L4+runsc asks for "
			    "the inner boundary, inner none refuses it",
			    f->af_name);
			return (-1);
		}
		b->b_inner = INNER_RUNSC;
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

/* inner: runsc or none; whether the backend has one the fencer decides. */
static int
api_boot_inner(struct hreq *hr, const struct api_field *f,
    const struct api_value *v, void *dst)
{
	struct msg_boot	*b = dst;

	if ((b->b_inner = inner_parse(v->av_str)) == -1) {
		b->b_inner = 0;
		http_error(hr, 400, "bad-value", "inner must be runsc or none");
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

/* from.environment, from.snapshot: a key and a name (docs/snapshots.md). */
static int
api_boot_from_name(struct hreq *hr, const struct api_field *f,
    const struct api_value *v, char *dst)
{
	char	 show[FENCE_KEY_SIZE + 8];

	if (v->av_len == 0 || v->av_len > FENCE_KEY_MAX ||
	    strlcpy(dst, v->av_str, FENCE_KEY_SIZE) != v->av_len ||
	    !fence_key_valid(dst)) {
		api_show(show, sizeof(show), v->av_str, v->av_len);
		http_error(hr, 400, "bad-value", "from.%s \"%s\" is not a "
		    "name: 1 to %d characters of a-z, 0-9, _ and -, the first "
		    "a letter or digit", f->af_name, show, FENCE_KEY_MAX);
		dst[0] = '\0';
		return (-1);
	}
	return (0);
}

static int
api_boot_from_env(struct hreq *hr, const struct api_field *f,
    const struct api_value *v, void *dst)
{
	return (api_boot_from_name(hr, f, v,
	    ((struct msg_boot *)dst)->b_from_key));
}

static int
api_boot_from_snap(struct hreq *hr, const struct api_field *f,
    const struct api_value *v, void *dst)
{
	return (api_boot_from_name(hr, f, v,
	    ((struct msg_boot *)dst)->b_from_snap));
}

static int
api_boot_from_check(struct hreq *hr, const struct api_field *f,
    const struct api_value *v, void *dst)
{
	struct msg_boot	*b = dst;

	if (b->b_from_key[0] == '\0') {
		http_error(hr, 400, "missing-field", "from needs environment "
		    "(and snapshot, or the environment's home now)");
		return (-1);
	}
	return (0);
}

static const struct api_field api_from_fields[] = {
	{ "environment", API_STRING, 0, FENCE_KEY_MAX, NULL, NULL, NULL,
	    api_boot_from_env, 0, 0 },
	{ "snapshot",	API_STRING, 0, FENCE_KEY_MAX, NULL, NULL, NULL,
	    api_boot_from_snap, 0, 0 },
	{ NULL,		API_CHECK, 0, 0, NULL, NULL, NULL,
	    api_boot_from_check, 0, 0 },
};
static const struct api_fields api_from =
    API_FIELDS("from", api_from_fields);

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
	{ "backend",	API_STRING, 0, 16, NULL, NULL, NULL,
	    api_boot_backend, 0, 0 },
	{ "inner",	API_STRING, 0, 16, NULL, NULL, NULL,
	    api_boot_inner, 0, 0 },
	/* After inner: L4+runsc sets it. */
	{ "require",	API_STRING, 0, 8, NULL, NULL, NULL,
	    api_boot_require, 0, 0 },
	{ "lifetime",	API_INT, LIFETIME_MIN, LIFETIME_MAX, NULL, NULL, NULL,
	    NULL, API_U32(struct msg_boot, b_lifetime) },
	{ "limits",	API_OBJECT, 0, 0, NULL, NULL, &api_limits,
	    NULL, 0, 0 },
	{ "egress",	API_JSON, 0, 0, NULL, NULL, NULL,
	    api_boot_egress, 0, 0 },
	{ "from",	API_OBJECT, 0, 0, NULL, NULL, &api_from,
	    NULL, 0, 0 },
};
static const struct api_fields api_boot_body =
    API_FIELDS("a boot request", api_boot_fields);

/* POST /api/environments/KEY: api_boot_fields[] */
void
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

