/*
 * Snapshots of homes, as the fence service asks the fencer for them
 * (docs/snapshots.md), and an exec with undo: the home kept as the
 * fence's undo mark first, then the command sent as any other.
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/tree.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fenced.h"
#include "imsg.h"
#include "log.h"
#include "msg.h"
#include "proc.h"
#include "broker.h"
#include "svc.h"

static void
svc_snap_answer(struct breq *r, const struct svc_msg *m)
{
	struct svc_answer a;

	memset(&a, 0, sizeof(a));
	switch (m->m_type) {
	case IMSG_FENCE_SNAP_INFO:
		a.a_what = SVC_SNAP;
		a.a_snap = m->m_snap;
		a.a_last = !r->r_list;	/* a listing ends with END */
		breq_reply(r, &a);
		return;
	case IMSG_FENCE_END:
		if (!r->r_list)
			break;
		a.a_what = SVC_END;
		a.a_last = 1;
		breq_reply(r, &a);
		return;
	case IMSG_FENCE_FAILED:
		breq_failed(r, m);
		return;
	}
	fatalx("%s: %s to a snapshot request", __func__,
	    msg_type_name(m->m_type));
}

/*
 * A snapshot request of w's: of its own fences, or with admin rights of
 * the owner q names.  The fencer checks the same again.
 */
void
svc_snap(const struct svc_who *w, struct msg_snap *q, svc_cb cb, void *arg)
{
	struct breq	*r;
	void		*buf;
	size_t		 len;

	q->s_uid = w->w_uid;
	q->s_admin = w->w_admin;
	q->s_owner = svc_owner(w, q->s_owner);
	if (!svc_may(w, q->s_owner)) {
		svc_refuse(cb, arg, "not-found", "no %s %u/%s", w->w_noun,
		    (unsigned)q->s_owner, q->s_key);
		return;
	}
	if (msg_snap_encode(q, &buf, &len) == -1) {
		svc_refuse(cb, arg, "bad-request", "not a snapshot request");
		return;
	}
	r = breq_new(BREQ_FENCER, q->s_owner, q->s_key, svc_snap_answer, w, 0,
	    cb, arg);
	r->r_list = q->s_op == SNAP_LIST;
	svc_to_fencer(r, IMSG_FENCE_SNAP, buf, len);
	free(buf);
}

/* The mark is made: the exec goes on as if it had been sent now. */
static void
svc_undo_marked(struct breq *r, const struct svc_msg *m)
{
	struct msg_exec	 x;
	struct svc_who	 w;
	svc_cb		 cb = r->r_cb;
	void		*arg = r->r_in.in_maker;
	uint32_t	 type = r->r_undo_type;
	int		 ok;

	switch (m->m_type) {
	case IMSG_FENCE_SNAP_INFO:
		break;
	case IMSG_FENCE_FAILED:
		breq_failed(r, m);
		return;
	default:
		fatalx("%s: %s to an undo mark", __func__,
		    msg_type_name(m->m_type));
	}
	w = r->r_undo_who;
	ok = msg_exec_decode(r->r_undo_exec, r->r_undo_len, &x) == 0;
	breq_done(r);
	if (cb == NULL) {
		/* Its maker is gone: nothing runs. */
		if (ok)
			msg_exec_free(&x);
		return;
	}
	if (!ok) {
		svc_refuse(cb, arg, "internal", "the command was lost");
		return;
	}
	x.x_undo = 0;
	if (type == IMSG_AGENT_EXEC)
		svc_exec(&w, &x, cb, arg);
	else
		svc_exec_stream(&w, &x, cb, arg);
	msg_exec_free(&x);
}

/*
 * An exec with "undo": its fence's home is kept as the undo mark
 * (replacing the last one), then x is sent as type.  A mark that cannot
 * be made (bounds) refuses the command: it would not be undoable.
 */
void
svc_exec_undo(const struct svc_who *w, struct msg_exec *x, uint32_t type,
    svc_cb cb, void *arg)
{
	struct msg_snap	 q;
	struct bfence	*bf;
	struct breq	*r;
	void		*xbuf, *buf;
	size_t		 xlen, len;

	if ((bf = svc_fence_for(w, x->x_owner, x->x_key, cb, arg)) == NULL)
		return;
	x->x_undo = 0;
	if (msg_exec_encode(x, &xbuf, &xlen) == -1) {
		svc_refuse(cb, arg, "bad-request", "cannot encode the request");
		return;
	}
	memset(&q, 0, sizeof(q));
	strlcpy(q.s_key, bf->bf_info.f_key, sizeof(q.s_key));
	q.s_owner = bf->bf_info.f_owner;
	q.s_uid = w->w_uid;
	q.s_admin = w->w_admin;
	q.s_op = SNAP_UNDO_MARK;
	if (msg_snap_encode(&q, &buf, &len) == -1)
		fatal("%s: encode", __func__);
	r = breq_new(BREQ_FENCER, q.s_owner, q.s_key, svc_undo_marked, w, 0,
	    cb, arg);
	r->r_undo_exec = xbuf;
	r->r_undo_len = xlen;
	r->r_undo_type = type;
	r->r_undo_who = *w;
	/* The asker's token name outlives it here, in r's own copy. */
	r->r_undo_who.w_token = r->r_token[0] != '\0' ? r->r_token : NULL;
	svc_to_fencer(r, IMSG_FENCE_SNAP, buf, len);
	free(buf);
}
