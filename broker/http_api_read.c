/*
 * The bodies of HTTP API requests: read whole, as JSON objects, each by
 * a table of its fields (struct api_fields in http_api.h), so that every
 * field is bounded and checked in one walk before anything is asked of
 * the fence service.
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

/* Request bodies. */

/*
 * The body as a JSON object; an empty one is {} unless one is needed.
 * Returns the object, or NULL with the answer sent.
 */
json_t *
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
int
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

