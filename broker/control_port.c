/*
 * fencectl port KEY PORT (docs/interactive.md, "The HTTP API"): the
 * path form's URL of a port of the caller's fence (or, for root and
 * the admin group, anyone's), and the URL of a ticket of its host form
 * minted for the fence's owner, good once within its time.
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/tree.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event.h>

#include "fenced.h"
#include "imsg.h"
#include "log.h"
#include "msg.h"
#include "proc.h"
#include "broker.h"
#include "control.h"
#include "ticket.h"

int
control_port_ticket(struct ctl_conn *cc, struct imsg *imsg)
{
	struct msg_port_ticket pk;
	struct ticket_grant g;
	struct svc_who	 w;
	char		 text[TICKET_TEXT + 1], host[128];
	void		*buf;
	size_t		 len;

	if (msg_port_ticket_decode(imsg->data, imsg->len, &pk) == -1)
		return (-1);
	control_who(cc, &w);
	memset(&g, 0, sizeof(g));
	g.tg_kind = TICKET_PORT;
	g.tg_uid = pk.pk_owner == MSG_OWNER_NONE ? w.w_uid : pk.pk_owner;
	g.tg_port = pk.pk_port;
	strlcpy(g.tg_key, pk.pk_key, sizeof(g.tg_key));
	if (svc_fence_label(&w, pk.pk_owner, pk.pk_key, g.tg_label) == -1) {
		control_error(cc, "not-found", "no fence %s", pk.pk_key);
		return (0);
	}
	if (ticket_mint(&g, text) == -1) {
		control_error(cc, "too-many-tickets", "at most %d tickets "
		    "and port cookies per user", TICKET_MAX_USER);
		return (0);
	}
	ticket_port_path(&g, pk.pk_path, sizeof(pk.pk_path));
	ticket_port_host(&g, host, sizeof(host));
	snprintf(pk.pk_url, sizeof(pk.pk_url),
	    "http://%s/.fenced/ticket?t=%s", host, text);
	explicit_bzero(text, sizeof(text));
	pk.pk_expires_ms = ticket_ttl();
	if (msg_port_ticket_encode(&pk, &buf, &len) == -1) {
		explicit_bzero(&pk, sizeof(pk));
		control_error(cc, "internal", "cannot encode the URLs");
		return (0);
	}
	control_reply(cc, IMSG_CTL_PORT_URLS, buf, len);
	explicit_bzero(buf, len);
	explicit_bzero(&pk, sizeof(pk));
	free(buf);
	control_reply(cc, IMSG_CTL_END, NULL, 0);
	return (0);
}
