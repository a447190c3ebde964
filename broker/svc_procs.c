/*
 * The fence service's background processes (docs/http.md, "Background
 * processes"): starting one in a fence within `exec processes', and
 * listing, reading or signalling them, all through the agent
 * (svc_agent.c).
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

static void	svc_proc_answer(struct breq *, const struct svc_msg *);

/* Starts in flight for bf: they count against its processes too. */
static unsigned int
svc_spawning(struct bfence *bf)
{
	struct breq	*r;
	unsigned int	 n = 0;

	TAILQ_FOREACH(r, &bf->bf_reqs, r_fentry)
		if (r->r_type == IMSG_AGENT_SPAWN)
			n++;
	return (n);
}

/*
 * Start x in the background in its fence.  At most `exec processes'
 * per fence, exited ones included until deleted; timeoutMs at most
 * what is left of the fence's lifetime, and that by default: it dies
 * with the fence either way.
 */
void
svc_spawn(const struct svc_who *w, struct msg_exec *x, svc_cb cb, void *arg)
{
	const struct fenced_config *c = &broker_self.ps_conf;
	struct bfence	*bf;
	struct breq	*r;
	int64_t		 left;

	if ((bf = svc_fence_for(w, x->x_owner, x->x_key, cb, arg)) == NULL)
		return;
	if (bf->bf_nprocs + svc_spawning(bf) >= c->c_exec_processes) {
		svc_refuse(cb, arg, "too-many-processes", "%s %s holds %u "
		    "background processes (exec processes %u): delete "
		    "exited ones first", w->w_noun, x->x_key,
		    bf->bf_nprocs + svc_spawning(bf), c->c_exec_processes);
		return;
	}
	left = ((int64_t)bf->bf_info.f_deadline - (int64_t)time(NULL)) * 1000;
	if (left < EXEC_TIMEOUT_MIN)
		left = EXEC_TIMEOUT_MIN;
	if (left > (int64_t)LIFETIME_MAX * 1000)
		left = (int64_t)LIFETIME_MAX * 1000;
	if (x->x_timeout_ms == 0)
		x->x_timeout_ms = (uint32_t)left;
	else if (x->x_timeout_ms > left) {
		svc_refuse(cb, arg, "exec-bad-request", "timeoutMs must be "
		    "%u..%lld: %s %s ends in %lld ms", EXEC_TIMEOUT_MIN,
		    (long long)left, w->w_noun, x->x_key, (long long)left);
		return;
	}
	r = breq_new(BREQ_AGENT, bf->bf_info.f_owner, bf->bf_info.f_key,
	    svc_proc_answer, w, 0, cb, arg);
	svc_to_agent(bf, r, IMSG_AGENT_SPAWN, x, 0);
}

/* List, read or signal the background processes of q's fence. */
void
svc_procs(const struct svc_who *w, struct msg_proc_req *q, svc_cb cb,
    void *arg)
{
	struct bfence	*bf;
	struct breq	*r;

	if ((bf = svc_fence_for(w, q->q_owner, q->q_key, cb, arg)) == NULL)
		return;
	r = breq_new(BREQ_AGENT, bf->bf_info.f_owner, bf->bf_info.f_key,
	    svc_proc_answer, w, 0, cb, arg);
	r->r_list = q->q_op == MSG_PROC_LIST;
	svc_to_agent(bf, r, IMSG_AGENT_PROCS, q, 0);
}

/*
 * The agent's PROC (a listing's are not the last), PROC_END or ERROR.
 * Its count of processes is what `exec processes' holds the fence to.
 */
static void
svc_proc_answer(struct breq *r, const struct svc_msg *m)
{
	struct svc_answer a;

	memset(&a, 0, sizeof(a));
	a.a_last = 1;
	switch (m->m_type) {
	case IMSG_AGENT_PROC:
		if (r->r_fence != NULL)
			r->r_fence->bf_nprocs = m->m_proc->p_count;
		svc_denials_proc(r, m->m_proc);
		a.a_what = SVC_PROC;
		a.a_proc = m->m_proc;
		a.a_last = !r->r_list;
		r->r_nprocs++;
		break;
	case IMSG_AGENT_PROC_END:
		if (r->r_fence != NULL)
			r->r_fence->bf_nprocs = r->r_nprocs;
		a.a_what = SVC_END;
		break;
	default:
		a.a_what = SVC_ERROR;
		a.a_code = m->m_error->e_code;
		a.a_message = m->m_error->e_message;
		break;
	}
	breq_reply(r, &a);
}

