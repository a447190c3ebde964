/*
 * The fence service's side of the probe: a fence is measured when it
 * boots and whenever someone asks again; the fencer prepares the probe,
 * the service runs it through the fence's agent and hands its output
 * back, and the verdict is kept, told to everyone waiting and, for a
 * boot, decides its `require'.
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/tree.h>

#include <errno.h>
#include <event.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fenced.h"
#include "imsg.h"
#include "log.h"
#include "msg.h"
#include "broker.h"
#include "svc.h"

/* Probes. */

static void	svc_probe_fencer(struct breq *, const struct svc_msg *);
static void	svc_probe_agent(struct breq *, const struct svc_msg *);

/*
 * Measure bf (with full, its outbound checks too) unless a probe runs
 * already: then whoever waits gets what that one measures.  The fencer
 * prepares it (IMSG_PROBE_PREPARE), the service runs fence-probe in the
 * fence with the command line the fencer sends (IMSG_PROBE_EXEC) and
 * hands the output back (IMSG_PROBE_OUTPUT); the verdict ends it
 * (IMSG_FENCE_LEVEL).  A fence's first probe the fencer has usually
 * sent itself, at its agent's READY (f_probe_sent in the BOOTED): then
 * the agent's answer to request 0 is that probe's output
 * (svc_probe_first()), and the fencer sends no IMSG_PROBE_EXEC.
 */
void
svc_probe_start(struct bfence *bf, int full)
{
	struct msg_fence_req q;
	struct breq	*r, *ra;
	void		*buf;
	size_t		 len;

	if (bf->bf_probing)
		return;
	memset(&q, 0, sizeof(q));
	strlcpy(q.r_key, bf->bf_info.f_key, sizeof(q.r_key));
	q.r_owner = bf->bf_info.f_owner;
	q.r_uid = bf->bf_info.f_owner;
	q.r_full = full;
	if (msg_fence_req_encode(&q, &buf, &len) == -1)
		fatal("%s: encode", __func__);
	r = breq_new(BREQ_FENCER, q.r_owner, q.r_key, svc_probe_fencer, NULL,
	    0, NULL, NULL);
	svc_to_fencer(r, IMSG_PROBE_PREPARE, buf, len);
	free(buf);
	bf->bf_probing = 1;
	if (bf->bf_info.f_probe_sent) {
		bf->bf_info.f_probe_sent = 0;
		ra = breq_new(BREQ_AGENT, q.r_owner, q.r_key, svc_probe_agent,
		    NULL, 0, NULL, NULL);
		ra->r_parent = r->r_in.in_id;
		ra->r_type = IMSG_AGENT_PROBE;
		/*
		 * The fencer started it at READY, maybe before denials
		 * it met were read: every denial of the fence until now
		 * is the probe's, since nothing else reached the agent.
		 */
		ra->r_dseq = 0;
		breq_attach(ra, bf);
		bf->bf_probe_first = ra->r_in.in_id;
	}
	log_debug("%s: probing %u's %s", __func__, (unsigned)q.r_owner,
	    q.r_key);
}

/*
 * The request an agent's answer of id answers: request 0 is the first
 * probe, which the fencer sent (svc_probe_start()), and answers once.
 */
uint32_t
svc_probe_first(struct bfence *bf, uint32_t id)
{
	if (id != 0 || bf->bf_probe_first == 0)
		return (id);
	id = bf->bf_probe_first;
	bf->bf_probe_first = 0;
	return (id);
}

/*
 * NAMED's KEY's verdicts: the last probe's, or with refresh (or before
 * there was one) a new probe's, with its outbound checks.
 */
void
svc_probe(const struct svc_who *w, uid_t named, const char *key,
    int refresh, svc_cb cb, void *arg)
{
	struct svc_answer a;
	struct bfence	*bf;
	struct breq	*r;

	if ((bf = svc_fence_for(w, named, key, cb, arg)) == NULL)
		return;
	if (!refresh && !bf->bf_probing && bf->bf_boundary != NULL) {
		memset(&a, 0, sizeof(a));
		a.a_what = SVC_VERDICT;
		a.a_last = 1;
		a.a_key = bf->bf_info.f_key;
		a.a_level = bf->bf_info.f_level;
		a.a_boundary = bf->bf_boundary;
		svc_say(cb, arg, &a);
		return;
	}
	r = breq_new(BREQ_VERDICT, bf->bf_info.f_owner, bf->bf_info.f_key,
	    NULL, w, 0, cb, arg);
	breq_attach(r, bf);
	svc_probe_start(bf, 1);
}

/*
 * The probe did not run: the fencer still gets an output, empty with
 * the reason, so that its request ends the usual way ("unmeasured").
 */
static void
svc_probe_output_error(uint32_t parent, const char *code,
    const char *message)
{
	struct msg_result rs;
	void		*buf;
	size_t		 len;

	memset(&rs, 0, sizeof(rs));
	strlcpy(rs.rs_error, code, sizeof(rs.rs_error));
	strlcpy(rs.rs_message, message, sizeof(rs.rs_message));
	/* No exit status (rs_exit 0, rs_signal 0): rs_error says why. */
	if (msg_result_encode(&rs, &buf, &len) == -1)
		fatal("%s: encode", __func__);
	if (proc_compose(&broker_self, PROC_FENCER, IMSG_PROBE_OUTPUT, parent,
	    -1, buf, len) == -1)
		fatal("%s: to fencer", __func__);
	free(buf);
}

/* The agent ran fence-probe (or could not): its output goes to the fencer. */
static void
svc_probe_agent(struct breq *r, const struct svc_msg *m)
{
	uint32_t	 parent = r->r_parent;

	if (m->m_type == IMSG_AGENT_RESULT)
		svc_denials_discard(r, m->m_result);
	breq_done(r);
	if (m->m_type == IMSG_AGENT_RESULT) {
		if (proc_compose(&broker_self, PROC_FENCER,
		    IMSG_PROBE_OUTPUT, parent, -1, m->m_data, m->m_len) == -1)
			fatal("%s: to fencer", __func__);
		/* Now, not on the loop's next turn. */
		imsgev_push(broker_self.ps_iev[PROC_FENCER]);
	} else
		svc_probe_output_error(parent, m->m_error->e_code,
		    m->m_error->e_message);
}

/* A verdict for a waiter that asked for one (svc_probe()). */
static void
svc_verdict_answer(struct breq *r, struct bfence *bf,
    const struct svc_msg *m)
{
	struct svc_answer a;

	if (m->m_type != IMSG_FENCE_LEVEL) {
		breq_failed(r, m);
		return;
	}
	memset(&a, 0, sizeof(a));
	a.a_what = SVC_VERDICT;
	a.a_last = 1;
	a.a_key = bf->bf_info.f_key;
	a.a_level = m->m_verdict->v_level;
	a.a_boundary = m->m_verdict->v_json;
	breq_reply(r, &a);
}

/*
 * A probe ended, with a verdict (LEVEL) or without (FAILED): the fence
 * keeps it, everyone waiting hears it, a boot's `require' is decided,
 * and what was held goes out.
 */
static void
svc_probe_ended(struct breq *r, const struct svc_msg *m)
{
	struct bfence	*bf;
	struct breq	*w;
	char		*json;

	bf = bfence_find(r->r_owner, r->r_key);
	breq_done(r);
	metrics_probe(m->m_type == IMSG_FENCE_LEVEL ?
	    m->m_verdict->v_level : -1);
	if (bf == NULL)
		return;		/* its waiters heard it stop */
	bf->bf_probing = 0;
	if (m->m_type == IMSG_FENCE_LEVEL) {
		if ((json = strdup(m->m_verdict->v_json)) == NULL)
			fatal("%s: strdup", __func__);
		free(bf->bf_boundary);
		bf->bf_boundary = json;
		bf->bf_info.f_level = m->m_verdict->v_level;
		svc_kernel_of(m->m_verdict, &bf->bf_info);
		bfence_changed(bf);
	}
	/* Each answer ends its waiter; held requests are not waiters. */
	for (;;) {
		TAILQ_FOREACH(w, &bf->bf_reqs, r_fentry)
			if (w->r_kind == BREQ_VERDICT && w->r_refusal == NULL)
				break;
		if (w == NULL)
			break;
		if (w->r_want != 0)
			svc_require(w, bf, m);
		else
			svc_verdict_answer(w, bf, m);
	}
	svc_measured(bf);
}

static void
svc_probe_fencer(struct breq *r, const struct svc_msg *m)
{
	struct bfence	*bf;
	struct breq	*ra;

	switch (m->m_type) {
	case IMSG_PROBE_EXEC:
		if ((bf = bfence_find(r->r_owner, r->r_key)) == NULL)
			return;		/* the fencer will say so */
		ra = breq_new(BREQ_AGENT, r->r_owner, r->r_key,
		    svc_probe_agent, NULL, 0, NULL, NULL);
		ra->r_parent = r->r_in.in_id;
		svc_to_agent(bf, ra, IMSG_AGENT_PROBE, m->m_exec, 1);
		return;
	case IMSG_FENCE_LEVEL:
	case IMSG_FENCE_FAILED:
		svc_probe_ended(r, m);
		return;
	}
	fatalx("%s: %s to a probe", __func__, msg_type_name(m->m_type));
}

/* The verdict of v's axis of that name, or NULL. */
static const char *
svc_axis_verdict(const struct msg_verdict *v, const char *name)
{
	uint32_t	 i;

	for (i = 0; i < v->v_naxes; i++)
		if (strcmp(v->v_axes[i].va_name, name) == 0)
			return (v->v_axes[i].va_verdict);
	return (NULL);
}

/*
 * L3 and L4 need a kernel that is not the host's: where that is what a
 * fence lacks, the kernel axis comes first in the refusal ("" if not).
 */
void
svc_kernel_short(const struct msg_verdict *v, int want, char *buf,
    size_t len)
{
	const char	*s;

	buf[0] = '\0';
	if (want < LEVEL_L3)
		return;
	if ((s = svc_axis_verdict(v, "kernel")) == NULL)
		s = "not measured";
	if (strcmp(s, "separate") != 0)
		snprintf(buf, len, "kernel: %s (%s needs a kernel that is "
		    "not the host's: %s); ", s, level_name(want),
		    want == LEVEL_L3 ? "gVisor's, backend runsc" :
		    "a virtual machine's, backend vm");
}

/*
 * Why a fence stands below a level: every violation the verdicts name,
 * or where there is none (a network shared by design), each axis that
 * is not fenced and what it is instead.
 */
void
svc_violations(const struct msg_verdict *v, char *buf, size_t len)
{
	const char	*s;
	uint32_t	 i;
	int		 none;

	buf[0] = '\0';
	for (i = 0; i < v->v_nviolations; i++) {
		if (buf[0] != '\0')
			strlcat(buf, "; ", len);
		strlcat(buf, v->v_violations[i], len);
	}
	none = buf[0] == '\0';
	for (i = 0; none && i < v->v_naxes; i++) {
		s = v->v_axes[i].va_verdict;
		if (strcmp(s, "fenced") == 0 ||
		    strcmp(s, "allowlisted") == 0 ||
		    strcmp(s, "separate") == 0 ||
		    strcmp(s, "shared") == 0)
			continue;
		if (buf[0] != '\0')
			strlcat(buf, "; ", len);
		strlcat(buf, v->v_axes[i].va_name, len);
		strlcat(buf, ": ", len);
		strlcat(buf, s, len);
	}
	if (buf[0] == '\0')
		strlcpy(buf, "no violation recorded", len);
}

/*
 * Which kernel answered the verdict, for the state: the kernel axis and
 * the release the fence reported, as the prober typed them (printable
 * ASCII only, as the codec holds it: it is the fence's word).
 */
void
svc_kernel_of(const struct msg_verdict *v, struct msg_fence *f)
{
	f->f_kernel = v->v_kernel;
	strlcpy(f->f_kernel_release, v->v_kernel_release,
	    sizeof(f->f_kernel_release));
	strlcpy(f->f_surface, v->v_surface, sizeof(f->f_surface));
}
