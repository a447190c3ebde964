/*
 * Snapshots over HTTP (docs/snapshots.md):
 *
 *	GET  .../snapshots			the environment's snapshots
 *	POST .../snapshots			take one ({"name": N} or {})
 *	GET, DELETE .../snapshots/<name>	one; delete it
 *	POST .../snapshots/<name>/restore	the home becomes it again
 *	POST .../undo				take back the last exec that
 *						asked "undo": true
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

json_t *
http_snap_json(const struct msg_snap_info *si)
{
	json_t	*o;

	o = json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:b, "
	    "s:s, s:b}",
	    "environment", si->sn_key,
	    "name", si->sn_name,
	    "created", (json_int_t)si->sn_created,
	    "bytes", (json_int_t)si->sn_bytes,
	    "files", (json_int_t)si->sn_files,
	    "disk", (json_int_t)si->sn_disk,
	    "shared", (json_int_t)si->sn_shared,
	    "branches", (json_int_t)si->sn_branches,
	    "us", (json_int_t)si->sn_us,
	    "paused", si->sn_frozen,
	    "how", si->sn_how,
	    "memory", 0);
	return (o);
}

/*
 * A snapshot's name, len bytes of src (a path's segment or a body's
 * string), into dst: 0, or -1 answered 400 bad-snapshot-name.
 */
static int
http_snap_name_take(struct hreq *hr, const char *src, size_t len, char *dst)
{
	char		 show[FENCE_KEY_SIZE + 8];

	if (len > 0 && len <= FENCE_KEY_MAX) {
		memcpy(dst, src, len);
		dst[len] = '\0';
		if (strlen(dst) == len && fence_key_valid(dst))
			return (0);
	}
	dst[0] = '\0';
	api_show(show, sizeof(show), src, len);
	http_error(hr, 400, "bad-snapshot-name", "\"%s\" is not a "
	    "snapshot's name: 1 to %d characters of a-z, 0-9, _ and -, the "
	    "first a letter or digit", show, FENCE_KEY_MAX);
	return (-1);
}

/* .../snapshots/<name>[/restore]: 0 and hr_snap set, or -1 answered. */
int
http_snap_id(struct hreq *hr, const char *rest, int *restore)
{
	char		 show[FENCE_KEY_SIZE + 8];
	size_t		 len;

	len = strcspn(rest, "/");
	*restore = strcmp(rest + len, "/restore") == 0;
	if (rest[len] != '\0' && !*restore) {
		api_show(show, sizeof(show), rest + len, strlen(rest + len));
		http_error(hr, 404, "not-found", "no such endpoint: %s after "
		    "the snapshot's name", show);
		return (-1);
	}
	return (http_snap_name_take(hr, rest, len, hr->hr_snap));
}

/* One snapshot's answer, or a listing's. */
static void
http_snap_answer(void *arg, const struct svc_answer *a)
{
	struct hreq	*hr = arg;
	json_t		*o, *list;

	switch (a->a_what) {
	case SVC_SNAP:
		if ((o = http_snap_json(a->a_snap)) == NULL)
			goto bad;
		if (hr->hr_snaps == NULL) {
			/* One: create, delete, restore, undo. */
			if (hr->hr_endpoint == EP_SNAP)
				json_object_set_new(o, "deleted", json_true());
			else if (hr->hr_endpoint == EP_SNAP_RESTORE)
				json_object_set_new(o, "restored", json_true());
			else if (hr->hr_endpoint == EP_UNDO)
				json_object_set_new(o, "undone", json_true());
			http_reply(hr, hr->hr_endpoint == EP_SNAPS ? 201 : 200,
			    o);
			return;
		}
		/* GET of one: the listing's entry of that name. */
		if (hr->hr_snap[0] != '\0' &&
		    strcmp(a->a_snap->sn_name, hr->hr_snap) != 0) {
			json_decref(o);
			return;
		}
		if (json_array_append_new(hr->hr_snaps, o) == -1)
			goto bad;
		return;
	case SVC_END:
		/* Taken from hr first: an answer frees hr. */
		if ((list = hr->hr_snaps) == NULL)
			goto bad;
		hr->hr_snaps = NULL;
		if (hr->hr_snap[0] == '\0')
			http_reply(hr, 200, json_pack("{s:o}", "snapshots",
			    list));
		else {
			if (json_array_size(list) == 0)
				http_error(hr, 404, "snapshot-not-found",
				    "%s has no snapshot %s", hr->hr_key,
				    hr->hr_snap);
			else
				http_reply(hr, 200,
				    json_incref(json_array_get(list, 0)));
			json_decref(list);
		}
		return;
	default:
		api_gathered_drop(hr);
		api_answer(hr, a);
		return;
	}
 bad:
	api_gathered_drop(hr);
	http_error(hr, 500, "internal", "cannot encode the snapshots");
}

static int
http_snap_name(struct hreq *hr, const struct api_field *f,
    const struct api_value *v, void *dst)
{
	struct msg_snap	*q = dst;

	return (http_snap_name_take(hr, v->av_str, v->av_len, q->s_name));
}

static const struct api_field http_snap_fields[] = {
	{ "name",	API_STRING, 0, FENCE_KEY_MAX, NULL, NULL, NULL,
	    http_snap_name, 0, 0 },
};
static const struct api_fields http_snap_body =
    API_FIELDS("a snapshot request", http_snap_fields);

void
http_snap_request(struct hreq *hr, int method)
{
	struct msg_snap	 q;
	struct svc_who	 w;
	json_t		*o = NULL;

	memset(&q, 0, sizeof(q));
	strlcpy(q.s_key, hr->hr_key, sizeof(q.s_key));
	q.s_owner = MSG_OWNER_NONE;
	switch (hr->hr_endpoint) {
	case EP_SNAPS:
		if (method == EVHTTP_REQ_GET) {
			q.s_op = SNAP_LIST;
			hr->hr_snap[0] = '\0';
			break;
		}
		q.s_op = SNAP_CREATE;
		if ((o = api_body(hr, 0)) == NULL)
			return;
		if (api_read(hr, o, &http_snap_body, &q) == -1) {
			json_decref(o);
			return;
		}
		json_decref(o);
		break;
	case EP_SNAP:
		if (method == EVHTTP_REQ_GET)
			q.s_op = SNAP_LIST;
		else {
			q.s_op = SNAP_DELETE;
			strlcpy(q.s_name, hr->hr_snap, sizeof(q.s_name));
		}
		break;
	case EP_SNAP_RESTORE:
		q.s_op = SNAP_RESTORE;
		strlcpy(q.s_name, hr->hr_snap, sizeof(q.s_name));
		break;
	case EP_UNDO:
		q.s_op = SNAP_UNDO;
		break;
	default:
		http_error(hr, 500, "internal", "not a snapshot endpoint");
		return;
	}
	if (q.s_op == SNAP_LIST && (hr->hr_snaps = json_array()) == NULL) {
		http_error(hr, 500, "internal", "out of memory");
		return;
	}
	api_who(hr, &w);
	svc_snap(&w, &q, http_snap_answer, hr);
}
