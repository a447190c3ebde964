/*
 * The fence service: everything the broker knows and decides about
 * fences, whichever front end asks (control.c for fencectl, http_api.c
 * for the HTTP API).  It lives in rooms, each its own file, sharing
 * svc.h:
 *
 *  - svc_fence.c, its records: every fence's state as the fencer
 *    reports it (booted, level, stopped and why), with the channel to
 *    its agent and its bearer, and for a while the state of fences that
 *    stopped; the one ownership rule (svc_may()) and the listing;
 *  - svc_req.c, its requests in flight: to the fencer, to an agent
 *    (held until the fence's first verdict), and waiting on a fence's
 *    probe, each answered through its maker's callback, or into the
 *    void once the maker is gone (inflight_orphan(), inflight.c);
 *  - svc_agent.c, the agent side: the one place a request gets the
 *    fence's bearer (svc_agent_encode(), called by svc_to_agent()), the
 *    one table of which answers each request takes, streaming;
 *  - svc_probe.c, the probe side: measuring a fence and keeping its
 *    verdicts;
 *  - this file, the fences' lifetimes: boot, the one `require' decision
 *    (svc_require()), stop, and what the fencer says of them.
 *
 * A front end turns its wire format into a call here and each struct
 * svc_answer back into its wire format, and knows nothing else.
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

static void	svc_stop_key(uid_t, const char *);

/*
 * A boot whose maker went away before its answer (fencectl gave up or
 * was interrupted, an HTTP client closed): nobody learns that the
 * fence is up, so it is not left to run unowned.  One still being built
 * is stopped in the fencer now, where it alone can be that key's (a
 * vm nobody waits for does not boot on for minutes): its boot then
 * fails into the void, or, if the fence came up meanwhile,
 * svc_booted() hides it until the stop ends it.  Otherwise it is
 * stopped once it comes up (svc_booted()).  One up and waiting for its
 * `require' verdict is stopped as a fence below what was asked would
 * be.  Either way it is never listed again.
 */
void
svc_abandon(struct breq *r)
{
	log_info("fence %s of uid %u: the client of its boot went away; "
	    "stopping it", r->r_key, (unsigned)r->r_owner);
	if (r->r_kind == BREQ_FENCER) {
		r->r_abandoned = 1;
		if (svc_boot_alone(r)) {
			r->r_abandoned = 2;
			svc_stop_key(r->r_owner, r->r_key);
		}
	} else if (!r->r_fence->bf_stopping)
		svc_stop_fence(r->r_fence);
}

/* Boot. */

static void	svc_booted(struct breq *, const struct svc_msg *);

/*
 * Boot b for w.  The fencer builds it; whether it earned b_require is
 * decided here (svc_require()), after its first verdict, and only
 * then is the boot answered.
 */
void
svc_boot(const struct svc_who *w, struct msg_boot *b, svc_cb cb, void *arg)
{
	struct breq	*r;
	void		*buf;
	size_t		 len;
	int		 want;

	b->b_owner = w->w_uid;
	b->b_admin = w->w_admin;
	want = b->b_require;
	b->b_require = 0;
	if (bfence_find(b->b_owner, b->b_key) != NULL) {
		metrics_boot(METRICS_BOOT_REFUSED);
		svc_audit_refused(w, AUDIT_BOOT, b->b_owner, b->b_key, NULL,
		    "exists");
		svc_refuse(cb, arg, "exists", "%s %s is already running",
		    w->w_noun, b->b_key);
		return;
	}
	if (msg_boot_encode(b, &buf, &len) == -1) {
		metrics_boot(METRICS_BOOT_REFUSED);
		svc_refuse(cb, arg, "bad-request", "cannot encode the boot "
		    "request");
		return;
	}
	r = breq_new(BREQ_FENCER, b->b_owner, b->b_key, svc_booted, w, 0,
	    cb, arg);
	r->r_want = want;
	svc_audit_fencer(r, AUDIT_BOOT, NULL);
	svc_to_fencer(r, IMSG_FENCE_BOOT, buf, len);
	explicit_bzero(buf, len);
	free(buf);
}


static void
svc_booted(struct breq *r, const struct svc_msg *m)
{
	struct bfence	*bf;

	switch (m->m_type) {
	case IMSG_FENCE_BOOTED:
		bf = bfence_find(r->r_owner, r->r_key);
		bf->bf_boot_t0 = r->r_t0;
		metrics_observe(METRICS_HIST_BOOT, &r->r_t0);
		/* Nobody's to use: stopped, or its stop is on its way. */
		if (r->r_abandoned) {
			r->r_metered = 1;
			metrics_boot(METRICS_BOOT_ABANDONED);
			if (r->r_abandoned == 2)
				bf->bf_stopping = 1;
			else
				svc_stop_fence(bf);
			breq_done(r);
			return;
		}
		/*
		 * Nothing runs in a fence before it earned what was asked;
		 * nor, in one that asked for the layer inside (docs/vm.md),
		 * before its first verdict shows it: that layer missing,
		 * the fence measures not-earned and is stopped.
		 */
		if (r->r_want == 0 && bf->bf_info.f_inner) {
			r->r_want = LEVEL_L1;
			r->r_want_inner = 1;
		}
		if (r->r_want != 0) {
			r->r_kind = BREQ_VERDICT;
			breq_attach(r, bf);
			return;
		}
		breq_reply_fence(r, bf);
		return;
	case IMSG_FENCE_FAILED:
		breq_failed(r, m);
		return;
	}
	fatalx("%s: %s to a boot", __func__, msg_type_name(m->m_type));
}

/*
 * The one `require' decision, on a boot's first verdict: a fence that
 * measured what was asked is answered booted; one below it, or not
 * measured, is stopped, and once it is gone (nothing of it left to
 * list, count or find in a cgroup) the boot fails naming every
 * violation the prober found.
 */

void
svc_require(struct breq *r, struct bfence *bf, const struct svc_msg *m)
{
	char		 why[MSG_ERROR_TEXT_MAX], kern[160];
	char		 reason[MSG_ERROR_TEXT_MAX + sizeof(kern) + 64];
	int		 rv;

	if (m->m_type == IMSG_FENCE_LEVEL &&
	    level_satisfies(m->m_verdict->v_level, r->r_want)) {
		breq_reply_fence(r, bf);
		return;
	}
	if (m->m_type != IMSG_FENCE_LEVEL)
		(void)snprintf(reason, sizeof(reason), "was stopped: %s: %s",
		    m->m_error->e_code, m->m_error->e_message);
	else {
		svc_violations(m->m_verdict, why, sizeof(why));
		svc_kernel_short(m->m_verdict, r->r_want, kern,
		    sizeof(kern));
		(void)snprintf(reason, sizeof(reason), "measured %s, "
		    "required %s; stopped: %s%s",
		    level_name(m->m_verdict->v_level), r->r_want_inner ?
		    "the inner boundary" : level_name(r->r_want), kern, why);
	}
	rv = asprintf(&r->r_refusal, "%s %s %s", r->r_noun, r->r_key, reason);
	if (rv == -1)
		fatal("%s: asprintf", __func__);
	/*
	 * What waited for this verdict will never run: it fails now, with
	 * the verdict's reason, and so does whatever comes after it
	 * (svc_to_agent()).  The boot's refusal is said once the fence
	 * is gone (svc_fail_fence()), not before; an abandoned boot's is
	 * being stopped already (svc_abandon()).
	 */
	free(bf->bf_refused);
	if ((bf->bf_refused = strdup(reason)) == NULL)
		fatal("%s: strdup", __func__);
	svc_held_refuse(bf, reason);
	if (!bf->bf_stopping)
		svc_stop_fence(bf);
}

/* Stop. */

static void	svc_stop_answer(struct breq *, const struct svc_msg *);

/*
 * Stop NAMED's (MSG_OWNER_NONE: w's) KEY, answered with its last state;
 * with key "", every fence w may see, each said as it stops, then
 * SVC_END.
 */
void
svc_stop(const struct svc_who *w, uid_t named, const char *key, svc_cb cb,
    void *arg)
{
	struct msg_fence_req q;
	struct breq	*r;
	void		*buf;
	size_t		 len;

	memset(&q, 0, sizeof(q));
	strlcpy(q.r_key, key, sizeof(q.r_key));
	q.r_uid = w->w_uid;
	q.r_admin = w->w_admin;
	q.r_owner = key[0] == '\0' ? MSG_OWNER_NONE : svc_owner(w, named);
	if (key[0] != '\0' && !svc_may(w, q.r_owner)) {
		svc_refuse(cb, arg, "not-found", "no %s %u/%s", w->w_noun,
		    (unsigned)q.r_owner, key);
		return;
	}
	if (msg_fence_req_encode(&q, &buf, &len) == -1)
		fatal("%s: encode", __func__);
	r = breq_new(BREQ_FENCER, q.r_owner == MSG_OWNER_NONE ? w->w_uid :
	    q.r_owner, key, svc_stop_answer, w, 0, cb, arg);
	svc_audit_fencer(r, AUDIT_STOP, "request");
	svc_to_fencer(r, IMSG_FENCE_STOP, buf, len);
	free(buf);
}

/*
 * Stop owner's KEY, running or booting, on the daemon's own account;
 * nobody hears the answer (not-found: it failed to boot meanwhile).
 */
static void
svc_stop_key(uid_t owner, const char *key)
{
	struct msg_fence_req q;
	struct breq	*r;
	void		*buf;
	size_t		 len;

	memset(&q, 0, sizeof(q));
	strlcpy(q.r_key, key, sizeof(q.r_key));
	q.r_owner = owner;
	q.r_admin = 1;
	if (msg_fence_req_encode(&q, &buf, &len) == -1)
		fatal("%s: encode", __func__);
	r = breq_new(BREQ_FENCER, q.r_owner, q.r_key, svc_stop_answer, NULL, 0,
	    NULL, NULL);
	svc_audit_fencer(r, AUDIT_STOP, "daemon");
	svc_to_fencer(r, IMSG_FENCE_STOP, buf, len);
	free(buf);
}

/* Stop a running fence on the daemon's own account: it is nobody's now. */
void
svc_stop_fence(struct bfence *bf)
{
	/* What waits on the verdict now waits for the end, and fails. */
	bf->bf_stopping = 1;
	svc_stop_key(bf->bf_info.f_owner, bf->bf_info.f_key);
}

static void
svc_stop_answer(struct breq *r, const struct svc_msg *m)
{
	struct svc_answer a;
	struct msg_fence copy;

	switch (m->m_type) {
	case IMSG_FENCE_STOPPED:
		svc_fence_answer(&a, stopped_find(m->m_fence->f_owner,
		    m->m_fence->f_key), m->m_fence, &copy);
		/* stop KEY ends with its one answer; stop all with END. */
		a.a_last = r->r_key[0] != '\0';
		breq_reply(r, &a);
		explicit_bzero(&copy, sizeof(copy));
		return;
	case IMSG_FENCE_END:
		memset(&a, 0, sizeof(a));
		a.a_what = SVC_END;
		a.a_last = 1;
		breq_reply(r, &a);
		return;
	case IMSG_FENCE_FAILED:
		breq_failed(r, m);
		return;
	}
	fatalx("%s: %s to a stop", __func__, msg_type_name(m->m_type));
}

/* The fencer. */

/* A message from the fencer, decoded: fm_m and where its parts live. */
struct svc_fencer_msg {
	struct svc_msg		 fm_m;
	struct msg_fence	 fm_info;
	struct msg_error	 fm_e;
	struct msg_verdict	 fm_v;
	struct msg_exec		 fm_x;
	struct msg_snap_info	 fm_snap;
	struct msg_check	 fm_check;
};

/* Decode imsg into fm; -1: it is not what the fencer may send. */
static int
svc_fencer_decode(struct imsg *imsg, struct svc_fencer_msg *fm)
{
	struct svc_msg	*m = &fm->fm_m;
	uint32_t	 type = imsg->hdr.ih_type;

	memset(fm, 0, sizeof(*fm));
	m->m_type = type;
	m->m_data = imsg->data;
	m->m_len = imsg->len;
	switch (type) {
	case IMSG_FENCE_BOOTED:
	case IMSG_FENCE_STOPPED:
		m->m_fence = &fm->fm_info;
		return (msg_fence_decode(imsg->data, imsg->len,
		    &fm->fm_info) == -1 ||
		    (type == IMSG_FENCE_BOOTED && imsg->fd == -1) ? -1 : 0);
	case IMSG_FENCE_FAILED:
		m->m_error = &fm->fm_e;
		return (msg_error_decode(imsg->data, imsg->len, &fm->fm_e));
	case IMSG_FENCE_LEVEL:
		m->m_verdict = &fm->fm_v;
		return (msg_verdict_decode(imsg->data, imsg->len, &fm->fm_v));
	case IMSG_PROBE_EXEC:
		m->m_exec = &fm->fm_x;
		return (msg_exec_decode(imsg->data, imsg->len, &fm->fm_x));
	case IMSG_FENCE_END:
		return (msg_empty_decode(imsg->data, imsg->len));
	case IMSG_FENCE_SNAP_INFO:
		m->m_snap = &fm->fm_snap;
		return (msg_snap_info_decode(imsg->data, imsg->len,
		    &fm->fm_snap));
	case IMSG_HOST_CHECK:
		m->m_check = &fm->fm_check;
		return (msg_check_decode(imsg->data, imsg->len,
		    &fm->fm_check));
	}
	return (-1);
}

/* What the decoding kept goes, the fence's bearer wiped. */
static void
svc_fencer_msg_free(struct svc_fencer_msg *fm)
{
	switch (fm->fm_m.m_type) {
	case IMSG_FENCE_BOOTED:
	case IMSG_FENCE_STOPPED:
		explicit_bzero(&fm->fm_info, sizeof(fm->fm_info));
		break;
	case IMSG_FENCE_LEVEL:
		msg_verdict_free(&fm->fm_v);
		break;
	case IMSG_PROBE_EXEC:
		explicit_bzero(fm->fm_x.x_bearer, sizeof(fm->fm_x.x_bearer));
		msg_exec_free(&fm->fm_x);
		break;
	}
}

/*
 * Every message from the fencer, decoded here once, then handed to the
 * request it answers.  The fencer is one of our own: a message that
 * does not decode, or answers no request, is fatal.
 */
void
svc_dispatch_fencer(struct imsgev *iev, struct imsg *imsg, void *arg)
{
	struct svc_fencer_msg fm;
	struct msg_denial dn;
	struct bfence	*bf;
	struct breq	*r = NULL;
	uint32_t	 type = imsg->hdr.ih_type;

	if (type == IMSG_FENCE_USAGE) {
		svc_metrics_fencer(imsg);
		return;
	}
	if (type == IMSG_DENIALS_FD) {
		/* Answers nothing: the socket of denials, once. */
		if (imsg->hdr.ih_peerid != 0 || imsg->fd == -1 ||
		    msg_empty_decode(imsg->data, imsg->len) == -1)
			fatalx("%s: bad %s", __func__, msg_type_name(type));
		svc_denials_socket(imsg->fd);
		imsg->fd = -1;
		return;
	}
	if (type == IMSG_FENCE_LIMIT_FD) {
		/* After BOOTED: the counters of one of its limits. */
		if (imsg->hdr.ih_peerid != 0 || imsg->fd == -1 ||
		    msg_denial_decode(imsg->data, imsg->len, &dn) == -1 ||
		    dn.dn_layer != DENIAL_LIMIT)
			fatalx("%s: bad %s", __func__, msg_type_name(type));
		svc_denials_limit_fd(&dn, imsg->fd);
		imsg->fd = -1;
		return;
	}
	if (type == IMSG_POOL_STATS) {
		/* Answers nothing: what `fencectl show stats' shows. */
		if (imsg->hdr.ih_peerid != 0 || msg_pool_decode(imsg->data,
		    imsg->len, &broker_stats.bs_pool) == -1)
			fatalx("%s: bad %s", __func__, msg_type_name(type));
		return;
	}
	if (svc_fencer_decode(imsg, &fm) == -1)
		fatalx("%s: bad %s", __func__, msg_type_name(type));
	if (imsg->hdr.ih_peerid != 0 &&
	    (r = breq_find(imsg->hdr.ih_peerid)) == NULL)
		fatalx("%s: fencer answered unknown request %u with %s",
		    __func__, imsg->hdr.ih_peerid, msg_type_name(type));
	if (r != NULL && r->r_kind != BREQ_FENCER)
		fatalx("%s: fencer answered request %u of another peer",
		    __func__, imsg->hdr.ih_peerid);

	switch (type) {
	case IMSG_FENCE_BOOTED:
		if (r == NULL)
			fatalx("%s: a boot nobody asked for", __func__);
		bfence_add(&fm.fm_info, imsg->fd);
		imsg->fd = -1;
		break;
	case IMSG_FENCE_STOPPED:
		if ((bf = bfence_find(fm.fm_info.f_owner,
		    fm.fm_info.f_key)) != NULL)
			bfence_remove(bf, &fm.fm_info);
		break;
	case IMSG_FENCE_FAILED:
		/* A boot that ended before anyone waited on it: log only. */
		if (r == NULL)
			log_info("%s: %s", fm.fm_e.e_code, fm.fm_e.e_message);
		break;
	}
	if (r != NULL)
		r->r_fn(r, &fm.fm_m);
	else if (type != IMSG_FENCE_STOPPED && type != IMSG_FENCE_FAILED)
		fatalx("%s: %s answers no request", __func__,
		    msg_type_name(type));
	svc_fencer_msg_free(&fm);
}
