/*
 * GET /api/environments/<key>/ports: the TCP ports a program listens on
 * inside the fence, as its agent reads them (the status page's links).
 *
 * POST /api/environments/<key>/tickets {"port": N}: a ticket for the
 * host form of port N of the caller's running fence <key>
 * (docs/interactive.md, "The HTTP API"): the URL that takes it, good
 * once within its time, on the fence's own host name.
 */
#include <sys/types.h>
#include <sys/queue.h>

#include <stdio.h>
#include <string.h>

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
#include "ticket.h"

/* {"ports": [{"port": N}, ...], "truncated": false}, ascending. */
static void
api_ports_answer(void *arg, const struct svc_answer *a)
{
	struct hreq	*hr = arg;
	const struct msg_portlist *pl;
	json_t		*list, *o;
	uint32_t	 i;

	if (a->a_what != SVC_PORTS) {
		api_answer(arg, a);
		return;
	}
	pl = a->a_ports;
	if ((list = json_array()) == NULL) {
		http_error(hr, 500, "internal", "cannot encode the ports");
		return;
	}
	for (i = 0; i < pl->pl_count && i < MSG_PORTS_MAX; i++)
		if ((o = json_pack("{s:i}", "port", (int)pl->pl_ports[i])) ==
		    NULL || json_array_append_new(list, o) == -1) {
			json_decref(list);
			http_error(hr, 500, "internal", "cannot encode the "
			    "ports");
			return;
		}
	http_reply(hr, 200, json_pack("{s:o, s:b}", "ports", list,
	    "truncated", pl->pl_truncated != 0));
}

void
api_ports(struct hreq *hr)
{
	struct svc_who	 w;

	api_who(hr, &w);
	svc_ports(&w, MSG_OWNER_NONE, hr->hr_key, api_ports_answer, hr);
}

void
api_tickets(struct hreq *hr)
{
	struct ticket_grant g;
	struct svc_who	 w;
	json_t		*body, *p, *o;
	char		 host[HTTP_ORIGIN_LEN], url[HTTP_ORIGIN_LEN + 128];
	char		 text[TICKET_TEXT + 1];
	json_int_t	 port;

	if ((body = api_body(hr, 1)) == NULL)
		return;
	/* A terminal's ticket (http_term.c). */
	if (json_is_object(body) && json_object_get(body, "terminal") != NULL) {
		http_term_ticket(hr, body);
		json_decref(body);
		return;
	}
	if (!json_is_object(body) || json_object_size(body) != 1 ||
	    (p = json_object_get(body, "port")) == NULL ||
	    !json_is_integer(p) || (port = json_integer_value(p)) < 1 ||
	    port > 65535) {
		json_decref(body);
		http_error(hr, 400, "bad-value", "the body is {\"port\": N}, "
		    "N from 1 to 65535");
		return;
	}
	json_decref(body);
	api_who(hr, &w);
	memset(&g, 0, sizeof(g));
	g.tg_kind = TICKET_PORT;
	g.tg_uid = hr->hr_uid;
	g.tg_port = port;
	strlcpy(g.tg_key, hr->hr_key, sizeof(g.tg_key));
	if (svc_fence_label(&w, MSG_OWNER_NONE, hr->hr_key,
	    g.tg_label) == -1) {
		http_error(hr, 404, "not-found", "no environment %s",
		    hr->hr_key);
		return;
	}
	if (ticket_mint(&g, text) == -1) {
		http_header(hr, "Retry-After", "60");
		http_error(hr, 429, "too-many-tickets", "at most %d tickets "
		    "and port cookies per user", TICKET_MAX_USER);
		return;
	}
	ticket_port_host(&g, host, sizeof(host));
	snprintf(url, sizeof(url), "http://%s/.fenced/ticket?t=%s", host,
	    text);
	explicit_bzero(text, sizeof(text));
	o = json_pack("{s:s, s:s, s:I}", "url", url, "host", host,
	    "expiresInMs", (json_int_t)ticket_ttl());
	explicit_bzero(url, sizeof(url));
	if (o == NULL) {
		http_error(hr, 500, "internal", "cannot encode the ticket");
		return;
	}
	http_reply(hr, 200, o);
}
