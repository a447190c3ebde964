/*
 * GET /api/host: the host doctor's report (docs/doctor.md) as JSON, for
 * the owner's page.  A token acts for its owner alone; only an admin's
 * token (root's or an admin group member's, svc_admin_uid()) gets the
 * details (hc_detail: paths, versions, hashes, cgroup folders), as only
 * root and the admin group get them on the control socket.
 */
#include <sys/types.h>
#include <sys/queue.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <event2/http.h>
#include <jansson.h>

#include "fenced.h"
#include "log.h"
#include "msg.h"
#include "broker.h"
#include "http.h"
#include "http_api.h"

static const char *const http_check_kinds[] = {
	[CHECK_HOST] = "host", [CHECK_BACKEND] = "backend",
	[CHECK_TIER] = "tier"
};
static const char *const http_check_statuses[] = {
	[CHECK_OK] = "ok", [CHECK_WARN] = "warn", [CHECK_FAIL] = "fail"
};

static json_t *
http_check_json(const struct msg_check *c)
{
	json_t	*o;

	if ((o = json_pack("{s:s, s:s, s:s, s:s, s:s}", "kind",
	    http_check_kinds[c->hc_kind], "name", c->hc_name, "status",
	    http_check_statuses[c->hc_status], "reason", c->hc_reason, "fix",
	    c->hc_fix)) == NULL)
		return (NULL);
	if (c->hc_default && json_object_set_new(o, "default",
	    json_true()) == -1)
		goto bad;
	if (c->hc_detail[0] != '\0' && json_object_set_new(o, "detail",
	    json_string(c->hc_detail)) == -1)
		goto bad;
	return (o);
 bad:
	json_decref(o);
	return (NULL);
}

static void
http_host_answer(void *arg, const struct svc_answer *a)
{
	struct hreq	*hr = arg;
	json_t		*o, *list;
	size_t		 i;
	int		 ok = 0;

	switch (a->a_what) {
	case SVC_CHECK:
		if (hr->hr_snaps == NULL)
			return;		/* answered already */
		if ((o = http_check_json(a->a_check)) == NULL ||
		    json_array_append_new(hr->hr_snaps, o) == -1)
			goto bad;
		return;
	case SVC_END:
		/* Taken from hr first: an answer frees hr. */
		if ((list = hr->hr_snaps) == NULL)
			return;
		hr->hr_snaps = NULL;
		json_array_foreach(list, i, o)
			if (json_is_true(json_object_get(o, "default")))
				ok = strcmp(json_string_value(json_object_get(o,
				    "status")), "fail") != 0;
		http_reply(hr, 200, json_pack("{s:b, s:b, s:o}", "buildable",
		    ok, "details", svc_admin_uid(hr->hr_uid), "checks", list));
		return;
	default:
		api_gathered_drop(hr);
		api_answer(hr, a);
		return;
	}
 bad:
	api_gathered_drop(hr);
	http_error(hr, 500, "internal", "cannot encode the host's checks");
}

/* Any token; the service wipes the details unless its owner is an admin. */
void
http_host_request(struct hreq *hr)
{
	struct svc_who	 w;

	api_who(hr, &w);
	w.w_admin = svc_admin_uid(hr->hr_uid);
	if ((hr->hr_snaps = json_array()) == NULL) {
		http_error(hr, 500, "internal", "cannot encode the host's "
		    "checks");
		return;
	}
	svc_doctor(&w, http_host_answer, hr);
}
