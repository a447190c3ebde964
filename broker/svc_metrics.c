/*
 * The metrics of admins (docs/metrics.md): what the service's records
 * say of its fences (by state, tier, backend and level), what the
 * fencer alone knows (each fence's cgroups, its queues: one
 * IMSG_FENCE_USAGE_REQ, answered by one IMSG_FENCE_USAGE), the warm
 * pool as the fencer last told it, the broker's own requests, and the
 * counters and histograms of metrics.c, rendered in the Prometheus
 * text format for whichever front end asked.  Here too the one place
 * that says what each request's end counts (svc_metered()).
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/tree.h>

#include <errno.h>
#include <event.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/buffer.h>

#include "fenced.h"
#include "imsg.h"
#include "log.h"
#include "msg.h"
#include "broker.h"
#include "svc.h"

/* The cells of fenced_fences: state, tier, backend, level. */
#define SM_STATES	(FENCE_FAILED + 1)
#define SM_TIERS	(TIER_L2 + 1)
#define SM_LEVELS	(LEVEL_L4 + 1)
struct svc_metrics_count {
	uint32_t	 c_n[SM_STATES][SM_TIERS][BACKEND_MAX][SM_LEVELS];
	uint32_t	 c_held;	/* requests held for a first verdict */
};

/* Whether a host token's owner is an admin: root or the admin group. */
int
svc_admin_uid(uid_t uid)
{
	const struct fenced_config *c = &broker_self.ps_conf;
	uint32_t	 i;

	if (uid == 0)
		return (1);
	for (i = 0; i < c->c_nadmin_uids && i < ADMIN_UIDS_MAX; i++)
		if (c->c_admin_uids[i] == uid)
			return (1);
	return (0);
}

/* A boot that failed, by its error's code. */
static enum metrics_boot
svc_boot_failure(const char *code)
{
	static const char *const failed[] = {
		"boot-failed", "internal", "branch-failed", "fence-stopped"
	};
	size_t	 i;

	if (code == NULL)
		return (METRICS_BOOT_FAILED);
	if (strcmp(code, "require-not-met") == 0)
		return (METRICS_BOOT_NOT_MET);
	for (i = 0; i < nitems(failed); i++)
		if (strcmp(code, failed[i]) == 0)
			return (METRICS_BOOT_FAILED);
	return (METRICS_BOOT_REFUSED);
}

static enum metrics_exec
svc_exec_end(const struct svc_answer *a)
{
	const struct msg_result *rs = a->a_result;
	const char	*code;

	if (a->a_what != SVC_RESULT) {
		code = a->a_what == SVC_ERROR ? a->a_code : NULL;
		return (code != NULL && strcmp(code, "exec-timeout") == 0 ?
		    METRICS_EXEC_TIMEOUT : METRICS_EXEC_ERROR);
	}
	if (strcmp(rs->rs_error, "exec-timeout") == 0)
		return (METRICS_EXEC_TIMEOUT);
	if (rs->rs_error[0] != '\0')
		return (METRICS_EXEC_ERROR);
	if (rs->rs_signal != 0)
		return (METRICS_EXEC_SIGNAL);
	return (rs->rs_exit == 0 ? METRICS_EXEC_ZERO : METRICS_EXEC_NONZERO);
}

/*
 * r's last answer, a: a boot counts by its result, an exec by how its
 * command ended, and how long it took; the rest count nothing.  Once.
 */
void
svc_metered(struct breq *r, const struct svc_answer *a)
{
	if (r->r_metered)
		return;
	r->r_metered = 1;
	if (r->r_type == IMSG_FENCE_BOOT)
		metrics_boot(a->a_what == SVC_FENCE ? METRICS_BOOT_OK :
		    svc_boot_failure(a->a_what == SVC_ERROR ? a->a_code :
		    NULL));
	else if (r->r_exec) {
		metrics_exec(svc_exec_end(a));
		metrics_observe(METRICS_HIST_EXEC, &r->r_t0);
	}
}

/* The records. */

static void
svc_metrics_one(void *arg, const struct bfence *bf)
{
	struct svc_metrics_count *c = arg;
	const struct msg_fence *f = &bf->bf_info;
	int		 state = f->f_state;

	if (bf->bf_stopping && state == FENCE_RUNNING)
		state = FENCE_STOPPING;
	c->c_held += bf->bf_nheld;
	if (state < 1 || state >= SM_STATES || f->f_tier < TIER_L1 ||
	    f->f_tier >= SM_TIERS || f->f_backend < BACKEND_MIN ||
	    f->f_backend >= BACKEND_MAX || f->f_level < 0 ||
	    f->f_level >= SM_LEVELS)
		return;
	c->c_n[state][f->f_tier][f->f_backend][f->f_level]++;
}

/* fenced_fences: a sample for every combination that has a fence. */
static void
svc_metrics_fences(struct evbuffer *b, struct svc_metrics_count *c)
{
	int	 s, t, be, l;

	bfence_each(svc_metrics_one, c);
	metrics_family(b, "fenced_fences", "gauge", "Fences the broker "
	    "knows, running and lately stopped, by state, tier, backend and "
	    "level.");
	for (s = 1; s < SM_STATES; s++)
		for (t = TIER_L1; t < SM_TIERS; t++)
			for (be = BACKEND_MIN; be < BACKEND_MAX; be++)
				for (l = 0; l < SM_LEVELS; l++) {
					if (c->c_n[s][t][be][l] == 0)
						continue;
					evbuffer_add_printf(b, "fenced_fences"
					    "{state=\"%s\",tier=\"%s\","
					    "backend=\"%s\",level=\"%s\"} "
					    "%u\n", fence_state_name(s),
					    tier_name(t), backend_name(be),
					    level_name(l), c->c_n[s][t][be][l]);
				}
}

/* The fencer's answer. */

static const struct {
	const char	*uf_name;
	const char	*uf_type;
	const char	*uf_help;
	uint32_t	 uf_bit;
} svc_usage_families[] = {
	{ "fenced_fence_cpu_seconds_total", "counter",
	    "CPU time of a fence's cgroup.", MSG_USAGE_CPU },
	{ "fenced_fence_memory_bytes", "gauge",
	    "Memory a fence's cgroup holds now.", MSG_USAGE_MEM },
	{ "fenced_fence_memory_peak_bytes", "gauge",
	    "The most memory a fence's cgroup held.", MSG_USAGE_MEM_PEAK },
	{ "fenced_fence_pids", "gauge",
	    "Processes and threads in a fence's cgroup now.", MSG_USAGE_PIDS },
	{ "fenced_fence_pids_peak", "gauge",
	    "The most processes and threads a fence's cgroup held.",
	    MSG_USAGE_PIDS_PEAK },
};

static void
svc_metrics_usage_one(struct evbuffer *b, const char *name, uint32_t bit,
    const struct msg_usage_fence *uf)
{
	evbuffer_add_printf(b, "%s{key=", name);
	metrics_value(b, uf->uf_key);
	evbuffer_add_printf(b, ",owner=\"%u\"} ", (unsigned)uf->uf_owner);
	switch (bit) {
	case MSG_USAGE_CPU:
		evbuffer_add_printf(b, "%" PRIu64 ".%06" PRIu64 "\n",
		    uf->uf_cpu_usec / 1000000, uf->uf_cpu_usec % 1000000);
		break;
	case MSG_USAGE_MEM:
		evbuffer_add_printf(b, "%" PRIu64 "\n", uf->uf_mem_bytes);
		break;
	case MSG_USAGE_MEM_PEAK:
		evbuffer_add_printf(b, "%" PRIu64 "\n", uf->uf_mem_peak);
		break;
	case MSG_USAGE_PIDS:
		evbuffer_add_printf(b, "%" PRIu64 "\n", uf->uf_pids);
		break;
	default:
		evbuffer_add_printf(b, "%" PRIu64 "\n", uf->uf_pids_peak);
		break;
	}
}

static void
svc_metrics_usage(struct evbuffer *b, const struct msg_usage *u)
{
	size_t		 i;
	uint32_t	 j;

	for (i = 0; i < nitems(svc_usage_families); i++) {
		metrics_family(b, svc_usage_families[i].uf_name,
		    svc_usage_families[i].uf_type,
		    svc_usage_families[i].uf_help);
		for (j = 0; j < u->u_nfences; j++)
			if (u->u_fence[j].uf_have & svc_usage_families[i].uf_bit)
				svc_metrics_usage_one(b,
				    svc_usage_families[i].uf_name,
				    svc_usage_families[i].uf_bit,
				    &u->u_fence[j]);
	}
	metrics_family(b, "fenced_fence_series_omitted", "gauge", "Fences "
	    "whose cgroups are not in the series above: more than "
	    "the fencer answers for.");
	metrics_sample(b, "fenced_fence_series_omitted", NULL, NULL,
	    u->u_fences - u->u_nfences);
}

static void
svc_metrics_gauge(struct evbuffer *b, const char *name, const char *help,
    uint64_t n)
{
	metrics_family(b, name, "gauge", help);
	metrics_sample(b, name, NULL, NULL, n);
}

/* One of the pool's figures (0 size, 1 ready, 2 taken), by tier. */
static void
svc_metrics_pool(struct evbuffer *b, const char *name, const char *type,
    const char *help, int which)
{
	const struct msg_pool_tier *pt;
	int		 t;

	metrics_family(b, name, type, help);
	for (t = TIER_L1; t <= TIER_L2; t++) {
		pt = &broker_stats.bs_pool.p_tier[t - 1];
		metrics_sample(b, name, "tier", tier_name(t), which == 0 ?
		    pt->pt_size : which == 1 ? pt->pt_ready : pt->pt_taken);
	}
}

/* The queues of the broker and the fencer, and the warm pool. */
static void
svc_metrics_queues(struct evbuffer *b, const struct msg_usage *u,
    const struct svc_metrics_count *c)
{
	const struct {
		const char	*q_name;
		const char	*q_help;
		uint64_t	 q_n;
	} q[] = {
		{ "fenced_broker_requests",
		    "Requests of the fence service in flight.", svc_total() },
		{ "fenced_broker_held_requests",
		    "Requests held for their fence's first verdict.",
		    c->c_held },
		{ "fenced_fencer_boots_queued",
		    "Boots waiting their turn in the fencer.",
		    u->u_boots_queued },
		{ "fenced_fencer_probes_queued",
		    "Probes waiting for a slot in the fencer.",
		    u->u_probes_queued },
		{ "fenced_fencer_probes_running", "Probes under way.",
		    u->u_probes_running },
		{ "fenced_fencer_probe_slots", "Probes that may run at once.",
		    u->u_probe_slots },
		{ "fenced_fencer_fences", "Fences the fencer holds, booted.",
		    u->u_fences },
	};
	size_t		 i;

	for (i = 0; i < nitems(q); i++)
		svc_metrics_gauge(b, q[i].q_name, q[i].q_help, q[i].q_n);
	svc_metrics_pool(b, "fenced_pool_size", "gauge", "Warm pool fences "
	    "configured, by tier.", 0);
	svc_metrics_pool(b, "fenced_pool_ready", "gauge", "Warm pool fences "
	    "ready for a boot, by tier.", 1);
	svc_metrics_pool(b, "fenced_pool_taken_total", "counter", "Boots "
	    "that took a warm pool fence, by tier.", 2);
}

/* The whole exposition, in b. */
static void
svc_metrics_render(struct evbuffer *b, const struct msg_usage *u)
{
	struct svc_metrics_count *c;

	if ((c = calloc(1, sizeof(*c))) == NULL)
		fatal("%s: calloc", __func__);
	svc_metrics_fences(b, c);
	svc_metrics_usage(b, u);
	svc_metrics_queues(b, u, c);
	free(c);
	svc_metrics_gauge(b, "fenced_start_time_seconds", "When the daemon "
	    "started, unix seconds.", (uint64_t)broker_procinfo.pi_started);
	metrics_family(b, "fenced_control_requests_total", "counter",
	    "Requests on the control socket.");
	metrics_sample(b, "fenced_control_requests_total", NULL, NULL,
	    broker_stats.bs_ctl_requests);
	metrics_family(b, "fenced_control_errors_total", "counter",
	    "Errors answered on the control socket.");
	metrics_sample(b, "fenced_control_errors_total", NULL, NULL,
	    broker_stats.bs_ctl_errors);
	metrics_render(b);
}

static void
svc_metrics_answer(struct breq *r, const struct svc_msg *m)
{
	struct svc_answer a;
	struct evbuffer	*b;

	if (m->m_type != IMSG_FENCE_USAGE)
		fatalx("%s: %s to a usage request", __func__,
		    msg_type_name(m->m_type));
	if ((b = evbuffer_new()) == NULL)
		fatal("%s: evbuffer_new", __func__);
	svc_metrics_render(b, m->m_usage);
	memset(&a, 0, sizeof(a));
	a.a_what = SVC_TEXT;
	a.a_last = 1;
	a.a_textlen = evbuffer_get_length(b);
	if ((a.a_text = (const char *)evbuffer_pullup(b, -1)) == NULL)
		fatal("%s: evbuffer_pullup", __func__);
	breq_reply(r, &a);
	evbuffer_free(b);
}

/* IMSG_FENCE_USAGE: too large for the stack, decoded on its own. */
void
svc_metrics_fencer(struct imsg *imsg)
{
	struct msg_usage *u;
	struct svc_msg	 m;
	struct breq	*r;

	if ((r = breq_find(imsg->hdr.ih_peerid)) == NULL ||
	    r->r_kind != BREQ_FENCER || r->r_type != IMSG_FENCE_USAGE_REQ)
		fatalx("%s: usage for request %u, which did not ask",
		    __func__, imsg->hdr.ih_peerid);
	if ((u = calloc(1, sizeof(*u))) == NULL)
		fatal("%s: calloc", __func__);
	if (msg_usage_decode(imsg->data, imsg->len, u) == -1)
		fatalx("%s: bad %s", __func__,
		    msg_type_name(imsg->hdr.ih_type));
	memset(&m, 0, sizeof(m));
	m.m_type = IMSG_FENCE_USAGE;
	m.m_data = imsg->data;
	m.m_len = imsg->len;
	m.m_usage = u;
	r->r_fn(r, &m);
	free(u);
}

/*
 * The metrics, for root and the admin group (w_admin; a host token's
 * owner by svc_admin_uid()): the fencer is asked, then it is rendered.
 */
void
svc_metrics(const struct svc_who *w, svc_cb cb, void *arg)
{
	struct breq	*r;

	if (!w->w_admin) {
		svc_refuse(cb, arg, "not-permitted", "metrics are for root "
		    "and the admin group");
		return;
	}
	r = breq_new(BREQ_FENCER, w->w_uid, "", svc_metrics_answer, w, 0,
	    cb, arg);
	svc_to_fencer(r, IMSG_FENCE_USAGE_REQ, NULL, 0);
}
