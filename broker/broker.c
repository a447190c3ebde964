/*
 * The broker: the only process that reads bytes from clients.  It runs
 * as the unprivileged user in an empty chroot under an allowlist
 * filter, serves the control socket and the HTTP API, and turns what
 * clients ask into typed messages for the fencer.
 */
#include <sys/types.h>
#include <sys/resource.h>

#include <event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fenced.h"
#include "imsg.h"
#include "lockdown.h"
#include "log.h"
#include "msg.h"
#include "proc.h"
#include "broker.h"

static void	broker_dispatch_parent(struct imsgev *, struct imsg *, void *);
static void	broker_shutdown(void);
static void	broker_nofile(const struct proc_args *);

/*
 * The broker talks to the parent, the fencer and the egress proxy, never
 * to the prober.
 */
static const struct proc_peer broker_peers[] = {
	{ PROC_PARENT,	broker_dispatch_parent },
	{ PROC_FENCER,	svc_dispatch_fencer },
	{ PROC_EGRESS,	svc_dispatch_egress },
};

struct proc_self broker_self = {
	.ps_proc = PROC_BROKER,
	.ps_peers = broker_peers,
	.ps_npeers = sizeof(broker_peers) / sizeof(broker_peers[0]),
	.ps_lockdown = {
		.ld_promises = "stdio recvfd sendfd unix inet",
		.ld_filter = LOCKDOWN_ALLOW,
	},
	.ps_prepare_cb = broker_nofile,
	.ps_config_cb = http_configure,
	.ps_start_cb = http_start,
	.ps_shutdown_cb = broker_shutdown,
};
struct broker_stats	 broker_stats;
struct msg_procinfo	 broker_procinfo;

static void
broker_dispatch_parent(struct imsgev *iev, struct imsg *imsg, void *arg)
{
	uint32_t	 u;

	switch (imsg->hdr.ih_type) {
	case IMSG_LISTEN_FD:
		if (msg_u32_decode(imsg->data, imsg->len, &u, LISTEN_CONTROL,
		    LISTEN_HTTP) == -1 || imsg->fd == -1)
			fatalx("%s: bad listener", __func__);
		if (u == LISTEN_CONTROL)
			control_listen(imsg->fd);
		else
			http_listen(imsg->fd);
		imsg->fd = -1;
		break;
	case IMSG_TOKEN_LOAD:
		token_load(imsg);
		break;
	case IMSG_TOKEN_STORED:
		token_stored(imsg);
		break;
	case IMSG_RELOADED:
		control_reloaded(imsg);
		break;
	case IMSG_AUDIT_LINE:
	case IMSG_AUDIT_END:
		control_audit_answer(imsg);
		break;
	case IMSG_PROC_INFO:
		if (msg_procinfo_decode(imsg->data, imsg->len,
		    &broker_procinfo) == -1)
			fatalx("%s: bad process table", __func__);
		break;
	default:
		fatalx("%s: unexpected %s", __func__,
		    msg_type_name(imsg->hdr.ih_type));
	}
}

static void
broker_shutdown(void)
{
	http_shutdown();
	control_shutdown();
}

/*
 * Connections to the control socket and the HTTP API, and a channel per
 * fence, are descriptors (proc_nofile_raise()).
 */
static void
broker_nofile(const struct proc_args *pa)
{
	proc_nofile_raise();
}
