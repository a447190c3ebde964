/*
 * The fence service's requests in flight (struct breq): to the fencer,
 * to an agent (held until the fence's first verdict), and waiting on a
 * fence's probe, each answered through its maker's callback, or into
 * the void once the maker is gone (breq_orphan(), which the broker's
 * one registry of requests in flight, inflight.c, calls); and the
 * counts per user that the limits hold them to.
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/tree.h>

#include <errno.h>
#include <event.h>
#include <jansson.h>
#include <stdarg.h>
#include <stddef.h>
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

/* The requests in flight of one user, for the limits per user. */
struct svc_user {
	RB_ENTRY(svc_user)	 su_node;
	uid_t			 su_uid;
	unsigned int		 su_reqs;
	unsigned int		 su_execs;
};

RB_HEAD(svc_user_tree, svc_user);

static struct svc_user_tree svc_users = RB_INITIALIZER(&svc_users);
static unsigned int	 svc_nreqs;

static const struct svc_who svc_daemon = { 0, 1, 1, "fence", NULL };

static void	breq_orphan(struct inflight *);
static const struct inflight_kind breq_inflight = {
	"fence", breq_orphan
};
#define BREQ_OF(in)	((struct breq *)((char *)(in) -			\
			    offsetof(struct breq, r_in)))

/* Answers. */

void
svc_say(svc_cb cb, void *arg, const struct svc_answer *a)
{
	if (cb != NULL)
		cb(arg, a);
}

static void
svc_say_error(svc_cb cb, void *arg, const char *code, const char *message)
{
	struct svc_answer a;

	memset(&a, 0, sizeof(a));
	a.a_what = SVC_ERROR;
	a.a_last = 1;
	a.a_code = code;
	a.a_message = message;
	svc_say(cb, arg, &a);
}

/* A refusal before any request was made. */
void __attribute__((format(printf, 4, 5)))
svc_refuse(svc_cb cb, void *arg, const char *code, const char *fmt, ...)
{
	char		 message[MSG_ERROR_TEXT_MAX];
	va_list		 ap;

	va_start(ap, fmt);
	vsnprintf(message, sizeof(message), fmt, ap);
	va_end(ap);
	svc_say_error(cb, arg, code, message);
}

/* The requests in flight. */

static int	svc_user_cmp(struct svc_user *, struct svc_user *);
RB_PROTOTYPE(svc_user_tree, svc_user, su_node, svc_user_cmp);

static int
svc_user_cmp(struct svc_user *a, struct svc_user *b)
{
	return (a->su_uid < b->su_uid ? -1 : a->su_uid > b->su_uid);
}

RB_GENERATE(svc_user_tree, svc_user, su_node, svc_user_cmp);

static struct svc_user *
svc_user_get(uid_t uid, int create)
{
	struct svc_user	 key, *su;

	key.su_uid = uid;
	if ((su = RB_FIND(svc_user_tree, &svc_users, &key)) != NULL ||
	    !create)
		return (su);
	if ((su = calloc(1, sizeof(*su))) == NULL)
		fatal("%s: calloc", __func__);
	su->su_uid = uid;
	RB_INSERT(svc_user_tree, &svc_users, su);
	return (su);
}

/*
 * A request about owner's KEY, answered to fn; w (NULL for the
 * daemon's own) is who asked, counted for the limits per user until it
 * is done, cb and arg the maker's.  exec: a command that will run.
 */
struct breq *
breq_new(enum breq_kind kind, uid_t owner, const char *key, breq_fn fn,
    const struct svc_who *w, int exec, svc_cb cb, void *arg)
{
	struct breq	*r;
	struct svc_user	*su;

	if ((r = calloc(1, sizeof(*r))) == NULL)
		fatal("%s: calloc", __func__);
	inflight_add(&r->r_in, &breq_inflight, arg);
	r->r_kind = kind;
	r->r_owner = owner;
	strlcpy(r->r_key, key, sizeof(r->r_key));
	r->r_dseq = svc_denial_seq;
	r->r_fn = fn;
	r->r_cb = cb;
	clock_gettime(CLOCK_MONOTONIC, &r->r_t0);
	r->r_noun = (w != NULL ? w : &svc_daemon)->w_noun;
	r->r_via = audit_via(w);
	if (w != NULL && w->w_token != NULL)
		strlcpy(r->r_token, w->w_token, sizeof(r->r_token));
	if (w != NULL) {
		su = svc_user_get(w->w_uid, 1);
		r->r_counted = 1;
		r->r_uid = w->w_uid;
		r->r_exec = exec != 0;
		su->su_reqs++;
		if (r->r_exec)
			su->su_execs++;
	}
	svc_nreqs++;
	return (r);
}

void
breq_attach(struct breq *r, struct bfence *bf)
{
	r->r_fence = bf;
	TAILQ_INSERT_TAIL(&bf->bf_reqs, r, r_fentry);
}

struct breq *
breq_find(uint32_t id)
{
	struct inflight	*in;

	if ((in = inflight_find(id, &breq_inflight)) == NULL)
		return (NULL);
	return (BREQ_OF(in));
}

void
breq_unhold(struct breq *r)
{
	if (!r->r_is_held)
		return;
	r->r_fence->bf_nheld--;
	r->r_fence->bf_held_bytes -= r->r_held_len;
	explicit_bzero(r->r_held, r->r_held_len);
	free(r->r_held);
	r->r_held = NULL;
	r->r_held_len = 0;
	r->r_is_held = 0;
}

void
breq_done(struct breq *r)
{
	struct svc_user	*su;

	if (r->r_counted && (su = svc_user_get(r->r_uid, 0)) != NULL) {
		su->su_reqs--;
		if (r->r_exec)
			su->su_execs--;
		if (su->su_reqs == 0) {
			RB_REMOVE(svc_user_tree, &svc_users, su);
			free(su);
		}
	}
	if (r->r_fence != NULL) {
		breq_unhold(r);
		TAILQ_REMOVE(&r->r_fence->bf_reqs, r, r_fentry);
	}
	/* Ended with no answer said: nobody waited for one. */
	svc_audit_end(r, NULL, "abandoned");
	inflight_remove(&r->r_in);
	if (!r->r_outside)
		svc_nreqs--;
	free(r->r_refusal);
	if (r->r_undo_exec != NULL) {
		explicit_bzero(r->r_undo_exec, r->r_undo_len);
		free(r->r_undo_exec);
	}
	free(r);
}

/*
 * r is no longer a request in the counts of requests (an open tunnel:
 * counted by svc_tunnel.c from now on), so that tunnels do not take
 * the room of a user's other requests.
 */
void
breq_uncount(struct breq *r)
{
	struct svc_user	*su;

	if (r->r_outside)
		return;
	if (r->r_counted && (su = svc_user_get(r->r_uid, 0)) != NULL) {
		su->su_reqs--;
		if (r->r_exec)
			su->su_execs--;
		if (su->su_reqs == 0) {
			RB_REMOVE(svc_user_tree, &svc_users, su);
			free(su);
		}
	}
	r->r_counted = 0;
	r->r_outside = 1;
	svc_nreqs--;
}

/*
 * Tell r's maker; the last answer ends r first, so a maker that goes
 * away while it hears it (inflight_orphan()) finds nothing left of it.
 */
void
breq_reply(struct breq *r, const struct svc_answer *a)
{
	svc_cb		 cb = r->r_cb;
	void		*arg = r->r_in.in_maker;

	/* A tunnel's opening is its event; the tunnel lives on. */
	if (a->a_last || a->a_what == SVC_TUNNEL)
		svc_audit_end(r, a, NULL);
	if (a->a_last) {
		svc_metered(r, a);
		breq_done(r);
	}
	svc_say(cb, arg, a);
}

/*
 * The last answer of r: an error.  The message is made before r ends,
 * as its arguments may be r's own (r_key, r_noun).
 */
void __attribute__((format(printf, 3, 4)))
breq_error(struct breq *r, const char *code, const char *fmt, ...)
{
	svc_cb		 cb = r->r_cb;
	void		*arg = r->r_in.in_maker;
	char		 message[MSG_ERROR_TEXT_MAX];
	struct svc_answer a;
	va_list		 ap;

	va_start(ap, fmt);
	vsnprintf(message, sizeof(message), fmt, ap);
	va_end(ap);
	memset(&a, 0, sizeof(a));
	a.a_what = SVC_ERROR;
	a.a_last = 1;
	a.a_code = code;
	svc_metered(r, &a);
	svc_audit_end(r, NULL, code);
	breq_done(r);
	svc_say_error(cb, arg, code, message);
}

/* The last answer of r: bf's state. */
void
breq_reply_fence(struct breq *r, struct bfence *bf)
{
	struct svc_answer a;

	svc_fence_answer(&a, bf, NULL, NULL);
	a.a_last = 1;
	breq_reply(r, &a);
}

/* The last answer of r: the error the fencer sent (FAILED). */
void
breq_failed(struct breq *r, const struct svc_msg *m)
{
	breq_error(r, m->m_error->e_code, "%s", m->m_error->e_message);
}

/* All of uid's requests in flight, orphans included. */
unsigned int
svc_pending(uid_t uid)
{
	struct svc_user	*su;

	return ((su = svc_user_get(uid, 0)) == NULL ? 0 : su->su_reqs);
}

/* All requests in flight. */
unsigned int
svc_total(void)
{
	return (svc_nreqs);
}

/* uid's commands still running, their makers gone or not. */
unsigned int
svc_execs(uid_t uid)
{
	struct svc_user	*su;

	return ((su = svc_user_get(uid, 0)) == NULL ? 0 : su->su_execs);
}

void
svc_to_fencer(struct breq *r, uint32_t type, const void *buf, size_t len)
{
	r->r_type = type;
	if (proc_compose(&broker_self, PROC_FENCER, type, r->r_in.in_id, -1, buf,
	    len) == -1)
		fatal("%s: %s", __func__, msg_type_name(type));
}

/*
 * Whether boot r, sent to the fencer and not answered, is the only one
 * that can have made a fence of its owner and key there: no fence of
 * them is known here, and no other boot of them is in flight.  (One
 * that is would be refused `exists', and a stop by owner and key would
 * end the other's fence.)
 */
int
svc_boot_alone(const struct breq *r)
{
	const struct breq *o;
	struct inflight	*in;

	if (bfence_find(r->r_owner, r->r_key) != NULL)
		return (0);
	for (in = inflight_next(NULL, &breq_inflight); in != NULL;
	    in = inflight_next(in, &breq_inflight))
		if ((o = BREQ_OF(in)) != r && o->r_kind == BREQ_FENCER &&
		    o->r_type == IMSG_FENCE_BOOT && o->r_owner == r->r_owner &&
		    strcmp(o->r_key, r->r_key) == 0)
			return (0);
	return (1);
}

/*
 * The maker went away (inflight_orphan()): r is answered into the void,
 * and if it only waited to tell it a verdict it is over.  A boot not yet
 * answered is abandoned (svc_abandon()).
 */
static void
breq_orphan(struct inflight *in)
{
	struct breq	*r = BREQ_OF(in);

	if (r->r_cb == NULL)
		return;
	r->r_cb = NULL;
	if (r->r_kind == BREQ_AGENT && r->r_type == IMSG_AGENT_TUNNEL_OPEN) {
		svc_tunnel_orphan(r);
		return;
	}
	if ((r->r_kind == BREQ_FENCER &&
	    r->r_type == IMSG_FENCE_BOOT) ||
	    (r->r_kind == BREQ_VERDICT && r->r_want != 0))
		svc_abandon(r);
	else if (r->r_kind == BREQ_VERDICT)
		breq_done(r);
	/* A stream nobody reads: its command dies (or never runs). */
	else if (r->r_kind == BREQ_AGENT &&
	    r->r_type == IMSG_AGENT_EXEC_STREAM) {
		if (r->r_is_held)
			breq_done(r);
		else
			svc_stream_send(r, IMSG_AGENT_CANCEL, 0);
	}
}

/*
 * bf is gone, or its agent is (not gone: the fence may still run):
 * every request about it fails now, not never (a probe's own exec too,
 * which tells the fencer), and what waited on its verdict hears it will
 * not come.  A boot's `require' is not met then: a fence still running
 * is stopped, and the boot hears it once the fence is gone.
 */
void
svc_fail_fence(struct bfence *bf, const char *why, int gone)
{
	struct breq	*r;
	char		 message[MSG_ERROR_TEXT_MAX];

	if (!gone && !bf->bf_stopping)
		TAILQ_FOREACH(r, &bf->bf_reqs, r_fentry)
			if (r->r_want != 0) {
				svc_stop_fence(bf);
				break;
			}
	for (;;) {
		/* A `require' decided waits for the end, then is said. */
		TAILQ_FOREACH(r, &bf->bf_reqs, r_fentry)
			if (gone || r->r_refusal == NULL)
				break;
		if (r == NULL)
			break;
		breq_unhold(r);
		if (!gone && r->r_want != 0 && r->r_refusal == NULL) {
			if (asprintf(&r->r_refusal, "%s %s %s before it was "
			    "measured", r->r_noun, r->r_key, why) == -1)
				fatal("%s: asprintf", __func__);
			continue;
		}
		if (r->r_refusal != NULL)
			breq_error(r, "require-not-met", "%s", r->r_refusal);
		else if (r->r_kind == BREQ_AGENT) {
			snprintf(message, sizeof(message), "%s %s %s",
			    r->r_noun, r->r_key, why);
			breq_agent_error(r, "fence-stopped", message);
		} else if (r->r_want != 0)
			breq_error(r, "require-not-met", "%s %s %s before "
			    "it was measured", r->r_noun, r->r_key, why);
		else
			breq_error(r, "fence-stopped", "%s %s %s before its "
			    "probe ended", r->r_noun, r->r_key, why);
	}
}
