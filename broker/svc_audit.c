/*
 * The fence service's events for the audit log (docs/audit.md): a
 * request that reaches the service carries its event (r_audit) from
 * when it is made, and the event goes to the parent (broker/audit.c)
 * with the request's one last answer, or "abandoned" when it ends
 * unanswered.  Boots and stops are made here (service.c); what goes to
 * an agent (commands, terminals, port connections) is made by
 * svc_to_agent(), the one path to an agent; files are files.c's, once
 * a transfer ends.
 */
#include <sys/types.h>
#include <sys/queue.h>

#include <stdlib.h>
#include <string.h>

#include "fenced.h"
#include "log.h"
#include "msg.h"
#include "broker.h"
#include "svc.h"

/*
 * r's event of kind, its asker and fence as r has them; what the daemon
 * asked on its own is written as the fence owner's.
 */
static struct msg_audit *
svc_audit_new(const struct breq *r, uint32_t kind)
{
	return (audit_new(kind, r->r_via == AUDIT_VIA_DAEMON ? r->r_owner :
	    r->r_uid, r->r_via,
	    r->r_token[0] != '\0' ? r->r_token : NULL, r->r_owner, r->r_key));
}

/* A command: its arguments (the first AUDIT_ARGS_MAX) or its line. */
static void
svc_audit_exec(struct msg_audit *a, const struct msg_exec *x)
{
	size_t		 i;

	if (x->x_command != NULL)
		audit_text(a->au_text, sizeof(a->au_text), x->x_command,
		    &a->au_truncated);
	else if (x->x_argv != NULL) {
		a->au_nargs = x->x_argc > UINT32_MAX / 2 ? UINT32_MAX / 2 :
		    (uint32_t)x->x_argc;
		for (i = 0; i < x->x_argc && i < AUDIT_ARGS_MAX &&
		    x->x_argv[i] != NULL; i++)
			audit_text(a->au_argv[i], sizeof(a->au_argv[i]),
			    x->x_argv[i], &a->au_truncated);
		if (i < AUDIT_ARGS_MAX)
			a->au_nargs = (uint32_t)i;
	}
	audit_text(a->au_cwd, sizeof(a->au_cwd), x->x_cwd, &a->au_truncated);
}

/*
 * The event of r, a request of type with msg for an agent, or NULL for
 * what is not logged (reads, listings, the probe's own run).
 */
void
svc_audit_agent(struct breq *r, uint32_t type, const void *msg)
{
	const struct msg_term_req *tq = msg;
	const struct msg_tunnel_open *to = msg;
	struct msg_audit *a = NULL;

	switch (type) {
	case IMSG_AGENT_EXEC:
	case IMSG_AGENT_EXEC_STREAM:
	case IMSG_AGENT_SPAWN:
		a = svc_audit_new(r, AUDIT_EXEC);
		svc_audit_exec(a, msg);
		break;
	case IMSG_AGENT_TERM_OPEN:
		a = svc_audit_new(r, AUDIT_TERM);
		(void)strlcpy(a->au_what, "open", sizeof(a->au_what));
		break;
	case IMSG_AGENT_TERMS:
		if (tq->tq_op != MSG_TERM_KILL)
			return;
		a = svc_audit_new(r, AUDIT_TERM);
		(void)strlcpy(a->au_what, "close", sizeof(a->au_what));
		a->au_num = tq->tq_id;
		break;
	case IMSG_AGENT_TUNNEL_OPEN:
		if (to->to_kind != MSG_TUNNEL_PORT)
			return;
		a = svc_audit_new(r, AUDIT_PORT);
		a->au_num = to->to_port;
		/* The API listens on loopback alone: the front end says
		 * more than an address would. */
		(void)strlcpy(a->au_text, r->r_via == AUDIT_VIA_HTTP ?
		    "http" : "control", sizeof(a->au_text));
		break;
	default:
		return;
	}
	audit_send(r->r_audit, "abandoned");	/* none: a bug if there were */
	r->r_audit = a;
}

/* A boot's event; a stop's (why: "request", or the daemon's "daemon"). */
void
svc_audit_fencer(struct breq *r, uint32_t kind, const char *why)
{
	struct msg_audit *a;

	a = svc_audit_new(r, kind);
	if (why != NULL)
		(void)strlcpy(a->au_what, why, sizeof(a->au_what));
	r->r_audit = a;
}

/* A request refused before it was made: its event, with the code. */
void
svc_audit_refused(const struct svc_who *w, uint32_t kind, uid_t owner,
    const char *key, const char *why, const char *code)
{
	struct msg_audit *a;

	a = audit_new_who(kind, w, owner, key);
	if (why != NULL)
		(void)strlcpy(a->au_what, why, sizeof(a->au_what));
	audit_send(a, code);
}

/*
 * r's last answer a (or NULL, code: an error's) ends its event: "ok",
 * or the error's code.  A terminal opened says its id; a command that
 * ran, its exit status.
 */
void
svc_audit_end(struct breq *r, const struct svc_answer *a, const char *code)
{
	struct msg_audit *au = r->r_audit;

	if (au == NULL)
		return;
	r->r_audit = NULL;
	if (a != NULL && a->a_what == SVC_ERROR)
		code = a->a_code;
	else if (a != NULL) {
		code = "ok";
		if (a->a_what == SVC_TERM && a->a_term != NULL &&
		    au->au_kind == AUDIT_TERM && au->au_num == 0)
			au->au_num = a->a_term->t_id;
		if (a->a_what == SVC_RESULT && a->a_result != NULL &&
		    a->a_result->rs_error[0] != '\0')
			code = a->a_result->rs_error;
		else if (a->a_what == SVC_RESULT && a->a_result != NULL &&
		    au->au_kind == AUDIT_EXEC) {
			(void)strlcpy(au->au_what, a->a_result->rs_signal ?
			    "signal" : "exit", sizeof(au->au_what));
			au->au_num = a->a_result->rs_signal ?
			    (uint64_t)a->a_result->rs_signal :
			    (uint64_t)a->a_result->rs_exit;
		}
	}
	audit_send(au, code);
}

/*
 * A fence ended on the daemon's account (its lifetime, a crash, out of
 * memory, the daemon's shutdown): nobody asked, so no request carries
 * it.  A stop somebody asked for is that request's event.
 */
void
svc_audit_ended(const struct msg_fence *f)
{
	struct msg_audit *a;
	const char	*why;

	if (f->f_reason == STOP_REQUEST || f->f_reason == STOP_NONE ||
	    (why = stop_reason_name(f->f_reason)) == NULL)
		return;
	a = audit_new(AUDIT_STOP, f->f_owner, AUDIT_VIA_DAEMON, NULL,
	    f->f_owner, f->f_key);
	(void)strlcpy(a->au_what, why, sizeof(a->au_what));
	audit_send(a, "ok");
}

/*
 * A denial count times of layer, what, that r's command (or process)
 * met: one line, as r's asker's in r's fence.
 */
void
svc_audit_denial(const struct breq *r, const char *layer, const char *what,
    uint32_t count)
{
	audit_denial(svc_audit_new(r, AUDIT_DENIAL), layer, what, count);
}
