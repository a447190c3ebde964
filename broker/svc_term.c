/*
 * The fence service's terminals and a background process's stdin
 * (docs/interactive.md, "Terminals", "Background processes"): opened,
 * listed, resized and killed through the agent (svc_agent.c), at most
 * MSG_TERM_MAX per fence (the agent's bound) and SVC_TERM_USER_MAX per
 * user over all their fences (here).  A terminal's bytes, and a
 * process's live output, are tunnels (svc_tunnel.c).
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

static void	svc_term_answer(struct breq *, const struct svc_msg *);
static void	svc_terms_req(const struct svc_who *, struct msg_term_req *,
		    svc_cb, void *);

/*
 * A new terminal in to's fence.  The fence's owner holds at most
 * SVC_TERM_USER_MAX over all their fences, counted as each agent last
 * said and with those being opened; the agent holds its fence to
 * MSG_TERM_MAX.
 */
void
svc_term_open(const struct svc_who *w, struct msg_term_open *to, svc_cb cb,
    void *arg)
{
	struct bfence	*bf;
	struct breq	*r;
	unsigned int	 n;

	if ((bf = svc_fence_for(w, to->to_owner, to->to_key, cb, arg)) == NULL)
		return;
	if ((n = svc_terms_of(bf->bf_info.f_owner)) >= SVC_TERM_USER_MAX) {
		svc_refuse(cb, arg, "too-many-terminals", "the owner of %s "
		    "%s holds %u terminals (at most %d over all their %ss): "
		    "kill one first", w->w_noun, to->to_key, n,
		    SVC_TERM_USER_MAX, w->w_noun);
		return;
	}
	r = breq_new(BREQ_AGENT, bf->bf_info.f_owner, bf->bf_info.f_key,
	    svc_term_answer, w, 0, cb, arg);
	svc_to_agent(bf, r, IMSG_AGENT_TERM_OPEN, to, 0);
}

static void
svc_terms_req(const struct svc_who *w, struct msg_term_req *tq, svc_cb cb,
    void *arg)
{
	struct bfence	*bf;
	struct breq	*r;

	if ((bf = svc_fence_for(w, tq->tq_owner, tq->tq_key, cb, arg)) == NULL)
		return;
	r = breq_new(BREQ_AGENT, bf->bf_info.f_owner, bf->bf_info.f_key,
	    svc_term_answer, w, 0, cb, arg);
	r->r_list = tq->tq_op == MSG_TERM_LIST && tq->tq_id == 0;
	svc_to_agent(bf, r, IMSG_AGENT_TERMS, tq, 0);
}

/* List: tq_id 0 for every terminal (then SVC_END), else that one. */
void
svc_terms(const struct svc_who *w, struct msg_term_req *tq, svc_cb cb,
    void *arg)
{
	if (tq->tq_op != MSG_TERM_LIST)
		fatalx("%s: op %u", __func__, tq->tq_op);
	svc_terms_req(w, tq, cb, arg);
}

void
svc_term_resize(const struct svc_who *w, struct msg_term_req *tq,
    svc_cb cb, void *arg)
{
	if (tq->tq_op != MSG_TERM_RESIZE)
		fatalx("%s: op %u", __func__, tq->tq_op);
	svc_terms_req(w, tq, cb, arg);
}

/* Kill a running one (its process group, its job); forget one ended. */
void
svc_term_kill(const struct svc_who *w, struct msg_term_req *tq, svc_cb cb,
    void *arg)
{
	if (tq->tq_op != MSG_TERM_KILL)
		fatalx("%s: op %u", __func__, tq->tq_op);
	svc_terms_req(w, tq, cb, arg);
}

/* Bytes for a running background process's stdin, or its end. */
void
svc_proc_input(const struct svc_who *w, struct msg_proc_input *pi,
    svc_cb cb, void *arg)
{
	struct bfence	*bf;
	struct breq	*r;

	if ((bf = svc_fence_for(w, pi->pi_owner, pi->pi_key, cb, arg)) == NULL)
		return;
	r = breq_new(BREQ_AGENT, bf->bf_info.f_owner, bf->bf_info.f_key,
	    svc_term_answer, w, 0, cb, arg);
	svc_to_agent(bf, r, IMSG_AGENT_PROC_INPUT, pi, 0);
}

/*
 * The agent's TERM (a listing's are not the last), TERM_END, PROC (to
 * PROC_INPUT) or ERROR.  Its count of terminals is what the user's
 * bound adds up.  A terminal carries its denials (docs/denials.md).
 */
static void
svc_term_answer(struct breq *r, const struct svc_msg *m)
{
	struct svc_answer a;

	memset(&a, 0, sizeof(a));
	a.a_last = 1;
	switch (m->m_type) {
	case IMSG_AGENT_TERM:
		if (r->r_fence != NULL)
			r->r_fence->bf_nterms = m->m_term->t_count;
		svc_denials_term(r, m->m_term);
		a.a_what = SVC_TERM;
		a.a_term = m->m_term;
		a.a_last = !r->r_list;
		r->r_nprocs++;
		break;
	case IMSG_AGENT_TERM_END:
		if (r->r_fence != NULL)
			r->r_fence->bf_nterms = r->r_nprocs;
		a.a_what = SVC_END;
		break;
	case IMSG_AGENT_PROC:
		a.a_what = SVC_PROC;
		a.a_proc = m->m_proc;
		break;
	default:
		a.a_what = SVC_ERROR;
		a.a_code = m->m_error->e_code;
		a.a_message = m->m_error->e_message;
		break;
	}
	breq_reply(r, &a);
}
