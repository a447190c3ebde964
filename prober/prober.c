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
#include "report.h"

static void	prober_dispatch_fencer(struct imsgev *, struct imsg *, void *);

/*
 * The prober hears only from the fencer, which passes it each report
 * with what the host knows; it has no channel to the broker.
 */
static const struct proc_peer prober_peers[] = {
	{ PROC_PARENT,	NULL },
	{ PROC_FENCER,	prober_dispatch_fencer },
};

struct proc_self prober_self = {
	.ps_proc = PROC_PROBER,
	.ps_peers = prober_peers,
	.ps_npeers = sizeof(prober_peers) / sizeof(prober_peers[0]),
	.ps_lockdown = {
		.ld_promises = "stdio recvfd sendfd",
		.ld_filter = LOCKDOWN_ALLOW,
	},
};

/*
 * A report from inside a fence and what the host knows: parse it (it is
 * hostile), derive the verdicts and the level, answer with both.  A
 * report that does not parse is "unmeasured" with the reason, never a
 * reason to stop: only a malformed message from the fencer is.
 */
static void
prober_dispatch_fencer(struct imsgev *iev, struct imsg *imsg, void *arg)
{
	struct msg_probe_report pr;
	struct probe_verdict pv;
	struct msg_verdict v;
	void		*buf;
	size_t		 len;

	if (imsg->hdr.ih_type != IMSG_PROBE_REPORT)
		fatalx("%s: unexpected %s", __func__,
		    msg_type_name(imsg->hdr.ih_type));
	if (msg_probe_report_decode(imsg->data, imsg->len, &pr) == -1)
		fatalx("%s: bad report message", __func__);
	if (report_parse((const char *)pr.pr_report, pr.pr_report_len,
	    pr.pr_expect, &pv) == -1)
		log_info("fence %s: report not usable: %s", pr.pr_key,
		    pv.pv_reason);
	memset(&v, 0, sizeof(v));
	strlcpy(v.v_key, pr.pr_key, sizeof(v.v_key));
	v.v_level = pv.pv_level;
	if ((v.v_json = verdict_json(&pv)) == NULL)
		fatal("%s: verdict_json", __func__);
	verdict_msg(&pv, &v);
	if (msg_verdict_encode(&v, &buf, &len) == -1)
		fatal("%s: encode", __func__);
	if (proc_compose(&prober_self, PROC_FENCER, IMSG_PROBE_VERDICT,
	    imsg->hdr.ih_peerid, -1, buf, len) == -1)
		log_warn("%s: to fencer", __func__);
	else	/* now, not on the loop's next turn */
		imsgev_push(prober_self.ps_iev[PROC_FENCER]);
	free(buf);
	free(v.v_json);
	msg_probe_report_free(&pr);
}
