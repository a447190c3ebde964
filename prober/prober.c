/*
 * The prober: parses the reports fence-probe prints inside fences (bytes
 * that came from inside a fence, so hostile) and derives each fence's
 * verdicts and level.  Unprivileged, chrooted, allowlist filter.
 */
#include <sys/types.h>

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

static void	prober_dispatch_parent(struct imsgev *, struct imsg *, void *);
static void	prober_dispatch_broker(struct imsgev *, struct imsg *, void *);
static void	prober_dispatch_fencer(struct imsgev *, struct imsg *, void *);

static struct proc_self prober_self = {
	.ps_proc = PROC_PROBER,
	.ps_peers = {
		[PROC_PARENT] = { PROC_PARENT, prober_dispatch_parent, NULL },
		[PROC_BROKER] = { PROC_BROKER, prober_dispatch_broker, NULL },
		[PROC_FENCER] = { PROC_FENCER, prober_dispatch_fencer, NULL },
	},
};

void
prober(const struct proc_args *pa)
{
	char		 root[PATH_MAX];
	struct lockdown	 ld = {
		.ld_title = "prober",
		.ld_chroot = root,
		.ld_uid = pa->pa_uid,
		.ld_gid = pa->pa_gid,
		.ld_promises = "stdio recvfd sendfd",
		.ld_filter = LOCKDOWN_ALLOW,
	};

	if ((size_t)snprintf(root, sizeof(root), "%s/%s", pa->pa_state,
	    FENCED_EMPTY_DIR) >= sizeof(root))
		fatalx("%s: state path too long", __func__);
	if ((prober_self.ps_evbase = event_init()) == NULL)
		fatalx("%s: event_init", __func__);
	proc_signals(&prober_self);

	lockdown(&ld);

	proc_connect_parent(&prober_self);
	event_dispatch();
	exit(0);
}

static void
prober_dispatch_parent(struct imsgev *iev, struct imsg *imsg, void *arg)
{
	if (proc_dispatch_parent(&prober_self, imsg))
		return;
	fatalx("%s: unexpected %s", __func__,
	    msg_type_name(imsg->hdr.ih_type));
}

static void
prober_dispatch_broker(struct imsgev *iev, struct imsg *imsg, void *arg)
{
	fatalx("%s: unexpected %s", __func__,
	    msg_type_name(imsg->hdr.ih_type));
}

static void
prober_dispatch_fencer(struct imsgev *iev, struct imsg *imsg, void *arg)
{
	fatalx("%s: unexpected %s", __func__,
	    msg_type_name(imsg->hdr.ih_type));
}
