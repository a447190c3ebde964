/*
 * The fence service's side of the agents: the one place a request gets
 * its fence's bearer (svc_agent_encode()), the holding of requests until
 * a fence's first verdict, streamed output and its credit, background
 * processes, and what an agent answers, checked against the request it
 * answers.
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

/* Requests waiting on a fence's first verdict: as many as its agent runs. */
#define SVC_HELD_MAX		128
#define SVC_HELD_BYTES		(8 * 1024 * 1024)

/* Requests to the agent. */

static void	svc_agent_answer(struct breq *, const struct svc_msg *);

/* The fence's bearer into a request's field b. */
static uint8_t *
svc_bear(const struct bfence *bf, uint8_t *b)
{
	memcpy(b, bf->bf_bearer, MSG_BEARER_LEN);
	return (b);
}

/*
 * Encode msg, a request of type for bf's agent, with bf's bearer: the
 * one place a request gets it (a stream's CREDIT and CANCEL too, a
 * tunnel's frames).  The bearer is wiped from msg again; the caller
 * wipes *buf.
 */
int
svc_agent_encode(struct bfence *bf, uint32_t type, void *msg, void **buf,
    size_t *len)
{
	uint8_t		*b;
	int		 rv;

	switch (type) {
	case IMSG_AGENT_EXEC:
	case IMSG_AGENT_SPAWN:
	case IMSG_AGENT_EXEC_STREAM:
	case IMSG_AGENT_PROBE:
		b = svc_bear(bf, ((struct msg_exec *)msg)->x_bearer);
		rv = msg_exec_encode(msg, buf, len);
		break;
	case IMSG_AGENT_PROCS:
		b = svc_bear(bf, ((struct msg_proc_req *)msg)->q_bearer);
		rv = msg_proc_req_encode(msg, buf, len);
		break;
	case IMSG_AGENT_GIT_CONFIG:
		b = svc_bear(bf, ((struct msg_gitconfig *)msg)->g_bearer);
		rv = msg_gitconfig_encode(msg, buf, len);
		break;
	case IMSG_AGENT_GIT_INIT:
		b = svc_bear(bf, ((struct msg_gitinit *)msg)->gi_bearer);
		rv = msg_gitinit_encode(msg, buf, len);
		break;
	case IMSG_AGENT_FILE_READ:
	case IMSG_AGENT_FILE_WRITE:
	case IMSG_AGENT_FILE_DELETE:
		b = svc_bear(bf, ((struct msg_file *)msg)->fl_bearer);
		rv = msg_file_encode(msg, buf, len);
		break;
	case IMSG_AGENT_CREDIT:
	case IMSG_AGENT_CANCEL:
		b = svc_bear(bf, ((struct msg_credit *)msg)->cr_bearer);
		rv = msg_credit_encode(msg, buf, len);
		break;
	case IMSG_AGENT_TUNNEL_OPEN:
		b = svc_bear(bf, ((struct msg_tunnel_open *)msg)->to_bearer);
		rv = msg_tunnel_open_encode(msg, buf, len);
		break;
	case IMSG_AGENT_PORTS:
		b = svc_bear(bf, ((struct msg_ports_req *)msg)->ps_bearer);
		rv = msg_ports_req_encode(msg, buf, len);
		break;
	case IMSG_AGENT_TUNNEL_DATA:
		b = svc_bear(bf, ((struct msg_tunnel_data *)msg)->td_bearer);
		rv = msg_tunnel_data_encode(msg, buf, len);
		break;
	case IMSG_AGENT_TUNNEL_CREDIT:
		b = svc_bear(bf, ((struct msg_tunnel_credit *)msg)->tc_bearer);
		rv = msg_tunnel_credit_encode(msg, buf, len);
		break;
	case IMSG_AGENT_TUNNEL_CLOSE:
		b = svc_bear(bf, ((struct msg_tunnel_close *)msg)->tl_bearer);
		rv = msg_tunnel_close_encode(msg, buf, len);
		break;
	case IMSG_AGENT_TERM_OPEN:
		b = svc_bear(bf, ((struct msg_term_open *)msg)->to_bearer);
		rv = msg_term_open_encode(msg, buf, len);
		break;
	case IMSG_AGENT_TERMS:
		b = svc_bear(bf, ((struct msg_term_req *)msg)->tq_bearer);
		rv = msg_term_req_encode(msg, buf, len);
		break;
	case IMSG_AGENT_PROC_INPUT:
		b = svc_bear(bf, ((struct msg_proc_input *)msg)->pi_bearer);
		rv = msg_proc_input_encode(msg, buf, len);
		break;
	default:
		fatalx("%s: %s", __func__, msg_type_name(type));
	}
	explicit_bzero(b, MSG_BEARER_LEN);
	return (rv);
}

/*
 * Every request for a fence's agent passes here: the exec and git
 * requests of users and the probe's own exec (probe: it decides the
 * level, so it never waits).  docs/design.md section 3: nothing runs in a
 * fence that has not earned what was asked, so until the first
 * verdict is in (and the service knows whether the fence stays) a
 * request is held, at most SVC_HELD_MAX of them and SVC_HELD_BYTES per
 * fence; beyond that it is refused at once.  A fence the service is
 * stopping takes nothing more: what is held fails with its end, or, when
 * its require was not met, at once with the verdict's reason.  r is
 * answered (and ended) here when it cannot go.
 */
void
svc_to_agent(struct bfence *bf, struct breq *r, uint32_t type, void *msg,
    int probe)
{
	void		*buf;
	size_t		 len;

	r->r_type = type;
	breq_attach(r, bf);
	if (!probe)
		svc_audit_agent(r, type, msg);
	/* Its verdict did not meet its require: it is being stopped. */
	if (!probe && bf->bf_refused != NULL) {
		breq_error(r, "fence-stopped", "%s %s %s", r->r_noun,
		    r->r_key, bf->bf_refused);
		return;
	}
	if (bf->bf_agent == NULL) {
		breq_error(r, "fence-stopped", "%s %s has no agent",
		    r->r_noun, r->r_key);
		return;
	}
	if (svc_agent_encode(bf, type, msg, &buf, &len) == -1) {
		breq_error(r, "bad-request", "cannot encode the request");
		return;
	}
	if (probe || (bf->bf_measured && !bf->bf_stopping)) {
		/* Written now, not on the loop's next turn. */
		svc_denials_mark(r);
		if (imsgev_compose(bf->bf_agent, type, r->r_in.in_id, 0, -1, buf,
		    len) == -1)
			breq_error(r, "fence-stopped", "%s %s: %s", r->r_noun,
			    r->r_key, strerror(errno));
		else
			imsgev_push(bf->bf_agent);
		explicit_bzero(buf, len);
		free(buf);
		return;
	}
	if (bf->bf_nheld >= SVC_HELD_MAX ||
	    len > SVC_HELD_BYTES - bf->bf_held_bytes) {
		explicit_bzero(buf, len);
		free(buf);
		breq_error(r, "exec-busy", "%s %s is not measured yet and "
		    "has %u requests (%zu bytes) waiting already", r->r_noun,
		    r->r_key, bf->bf_nheld, bf->bf_held_bytes);
		return;
	}
	r->r_held = buf;
	r->r_held_len = len;
	r->r_is_held = 1;
	bf->bf_nheld++;
	bf->bf_held_bytes += len;
	log_debug("fence %s: request %u waits for the first verdict",
	    r->r_key, r->r_in.in_id);
}

/* A user's request for NAMED's KEY's agent: exec, git config, git init. */
void
svc_agent_req(const struct svc_who *w, uid_t named, const char *key,
    uint32_t type, void *msg, svc_cb cb, void *arg)
{
	const struct fenced_config *c = &broker_self.ps_conf;
	struct bfence	*bf;
	struct breq	*r;
	int		 exec = type == IMSG_AGENT_EXEC ||
			    type == IMSG_AGENT_EXEC_STREAM;

	if ((bf = svc_fence_for(w, named, key, cb, arg)) == NULL)
		return;
	if (exec && !w->w_unbounded &&
	    svc_execs(w->w_uid) >= c->c_exec_inflight_user) {
		svc_refuse(cb, arg, "too-many-execs", "at most %u commands "
		    "of one user run at once", c->c_exec_inflight_user);
		return;
	}
	r = breq_new(BREQ_AGENT, bf->bf_info.f_owner, bf->bf_info.f_key,
	    svc_agent_answer, w, exec, cb, arg);
	svc_to_agent(bf, r, type, msg, 0);
}

void
svc_exec(const struct svc_who *w, struct msg_exec *x, svc_cb cb, void *arg)
{
	if (x->x_undo) {
		svc_exec_undo(w, x, IMSG_AGENT_EXEC, cb, arg);
		return;
	}
	svc_agent_req(w, x->x_owner, x->x_key, IMSG_AGENT_EXEC, x, cb, arg);
}

/*
 * A streamed exec: SVC_CHUNK answers as the command writes, then its
 * RESULT or ERROR.  At most MSG_STREAM_WINDOW bytes of chunks are out
 * that the maker has not handed back with svc_stream_credit(): it does
 * so once it has passed them on, and the command waits till then.
 */
void
svc_exec_stream(const struct svc_who *w, struct msg_exec *x, svc_cb cb,
    void *arg)
{
	if (x->x_undo) {
		svc_exec_undo(w, x, IMSG_AGENT_EXEC_STREAM, cb, arg);
		return;
	}
	svc_agent_req(w, x->x_owner, x->x_key, IMSG_AGENT_EXEC_STREAM, x, cb,
	    arg);
}

/* CREDIT (bytes) or CANCEL (0) to r's agent, with the fence's bearer. */
void
svc_stream_send(struct breq *r, uint32_t type, uint32_t bytes)
{
	struct msg_credit cr;
	struct bfence	*bf = r->r_fence;
	void		*buf;
	size_t		 len;

	if (bf == NULL || bf->bf_agent == NULL)
		return;
	memset(&cr, 0, sizeof(cr));
	cr.cr_bytes = bytes;
	if (svc_agent_encode(bf, type, &cr, &buf, &len) == -1)
		fatal("%s: msg_credit_encode", __func__);
	if (imsgev_compose(bf->bf_agent, type, r->r_in.in_id, 0, -1, buf,
	    len) == -1)
		log_warn("fence %s: %s for request %u", bf->bf_info.f_key,
		    msg_type_name(type), r->r_in.in_id);
	explicit_bzero(buf, len);
	free(buf);
}

/*
 * The maker (arg) of streamed request id passed n bytes of its chunks
 * on: the agent may send that much more.  An id that is over, or not
 * the maker's, is let be.
 */
void
svc_stream_credit(uint32_t id, void *arg, size_t n)
{
	struct breq	*r;

	if ((r = breq_find(id)) == NULL || r->r_in.in_maker != arg ||
	    r->r_cb == NULL || r->r_kind != BREQ_AGENT ||
	    r->r_type != IMSG_AGENT_EXEC_STREAM)
		return;
	if (n > r->r_unacked)
		n = r->r_unacked;
	if (n == 0)
		return;
	r->r_unacked -= n;
	svc_stream_send(r, IMSG_AGENT_CREDIT, (uint32_t)n);
}

void
svc_git_config(const struct svc_who *w, struct msg_gitconfig *g, svc_cb cb,
    void *arg)
{
	svc_agent_req(w, g->g_owner, g->g_key, IMSG_AGENT_GIT_CONFIG, g, cb,
	    arg);
}

/* One file request (docs/files.md); files.c makes a transfer of them. */
void
svc_file(const struct svc_who *w, uint32_t type, struct msg_file *fl,
    svc_cb cb, void *arg)
{
	if (type != IMSG_AGENT_FILE_READ && type != IMSG_AGENT_FILE_WRITE &&
	    type != IMSG_AGENT_FILE_DELETE)
		fatalx("%s: %s", __func__, msg_type_name(type));
	svc_agent_req(w, fl->fl_owner, fl->fl_key, type, fl, cb, arg);
}

void
svc_git_init(const struct svc_who *w, struct msg_gitinit *gi, svc_cb cb,
    void *arg)
{
	svc_agent_req(w, gi->gi_owner, gi->gi_key, IMSG_AGENT_GIT_INIT, gi,
	    cb, arg);
}

/* An agent's answer to a user's request, checked whole by now. */
static void
svc_agent_answer(struct breq *r, const struct svc_msg *m)
{
	struct svc_answer a;
	void		*raw = NULL;

	memset(&a, 0, sizeof(a));
	a.a_last = 1;
	switch (m->m_type) {
	case IMSG_AGENT_RESULT:
		a.a_what = SVC_RESULT;
		a.a_result = m->m_result;
		a.a_raw = m->m_data;
		a.a_rawlen = m->m_len;
		if ((raw = svc_denials_result(r, m->m_result,
		    &a.a_rawlen)) != NULL)
			a.a_raw = raw;
		break;
	case IMSG_AGENT_GIT_IDENTITY:
		a.a_what = SVC_IDENTITY;
		a.a_git = m->m_git;
		break;
	case IMSG_AGENT_FILE:
		a.a_what = SVC_FILE;
		a.a_file = m->m_file;
		break;
	case IMSG_AGENT_FILE_LIST:
		a.a_what = SVC_FILE_LIST;
		a.a_filelist = m->m_filelist;
		break;
	case IMSG_AGENT_PORT_LIST:
		a.a_what = SVC_PORTS;
		a.a_ports = m->m_ports;
		break;
	case IMSG_AGENT_CHUNK:
		a.a_what = SVC_CHUNK;
		a.a_last = 0;
		a.a_chunk = m->m_chunk;
		a.a_id = r->r_in.in_id;
		break;
	default:
		a.a_what = SVC_ERROR;
		a.a_code = m->m_error->e_code;
		a.a_message = m->m_error->e_message;
		break;
	}
	breq_reply(r, &a);
	free(raw);
}

/* Answer r with an agent error of our own, as the agent would. */
void
breq_agent_error(struct breq *r, const char *code, const char *message)
{
	struct msg_error e;
	struct svc_msg	 m;

	memset(&e, 0, sizeof(e));
	strlcpy(e.e_code, code, sizeof(e.e_code));
	strlcpy(e.e_message, message, sizeof(e.e_message));
	memset(&m, 0, sizeof(m));
	m.m_type = IMSG_AGENT_ERROR;
	m.m_error = &e;
	r->r_fn(r, &m);
}

/*
 * bf's first verdict is in and its waiters have heard it (a `require'
 * not met has stopped it by now): what was held goes to the agent,
 * unless the fence is being stopped.
 */
void
svc_measured(struct bfence *bf)
{
	struct breq	*r, *next;

	if (bf->bf_measured)
		return;
	bf->bf_measured = 1;
	metrics_observe(METRICS_HIST_FIRST, &bf->bf_boot_t0);
	if (bf->bf_stopping)
		return;
	/* An answer may end other requests: look again from the start. */
	for (r = TAILQ_FIRST(&bf->bf_reqs); r != NULL; r = next) {
		next = TAILQ_NEXT(r, r_fentry);
		if (!r->r_is_held)
			continue;
		svc_denials_mark(r);
		if (bf->bf_agent != NULL &&
		    imsgev_compose(bf->bf_agent, r->r_type, r->r_in.in_id, 0, -1,
		    r->r_held, r->r_held_len) == 0) {
			breq_unhold(r);
			continue;
		}
		breq_unhold(r);
		breq_agent_error(r, "fence-stopped", "the fence has no agent");
		next = TAILQ_FIRST(&bf->bf_reqs);
	}
	/* Written now, not on the loop's next turn, as any request. */
	if (bf->bf_agent != NULL)
		imsgev_push(bf->bf_agent);
}

/*
 * bf's first verdict did not meet its boot's `require' (why: what it
 * measured and the violations) and it is being stopped: what was held
 * for the verdict never reaches the agent.  It fails now, with the
 * verdict's reason, rather than when the fence is gone with its end.
 */
void
svc_held_refuse(struct bfence *bf, const char *why)
{
	struct breq	*r;
	char		 message[MSG_ERROR_TEXT_MAX];

	for (;;) {
		TAILQ_FOREACH(r, &bf->bf_reqs, r_fentry)
			if (r->r_is_held)
				break;
		if (r == NULL)
			break;
		breq_unhold(r);
		snprintf(message, sizeof(message), "%s %s %s", r->r_noun,
		    r->r_key, why);
		breq_agent_error(r, "fence-stopped", message);
	}
}

/*
 * Which answers each request to an agent takes (an ERROR: every one),
 * in one table, as OpenSSH's monitor keeps what each request may do:
 * an answer of another kind is an agent that is not ours.
 */
#define SVC_AGENT_ANSWERS	4
static const struct svc_agent_rule {
	uint32_t	 ar_request;
	uint32_t	 ar_answers[SVC_AGENT_ANSWERS];	/* 0: none */
} svc_agent_rules[] = {
	{ IMSG_AGENT_EXEC,	  { IMSG_AGENT_RESULT } },
	{ IMSG_AGENT_EXEC_STREAM, { IMSG_AGENT_RESULT, IMSG_AGENT_CHUNK } },
	{ IMSG_AGENT_PROBE,	  { IMSG_AGENT_RESULT } },
	{ IMSG_AGENT_GIT_INIT,	  { IMSG_AGENT_RESULT } },
	{ IMSG_AGENT_GIT_CONFIG,  { IMSG_AGENT_GIT_IDENTITY } },
	{ IMSG_AGENT_SPAWN,	  { IMSG_AGENT_PROC } },
	{ IMSG_AGENT_PROCS,	  { IMSG_AGENT_PROC, IMSG_AGENT_PROC_END } },
	{ IMSG_AGENT_FILE_READ,	  { IMSG_AGENT_FILE, IMSG_AGENT_FILE_LIST } },
	{ IMSG_AGENT_FILE_WRITE,  { IMSG_AGENT_FILE } },
	{ IMSG_AGENT_FILE_DELETE, { IMSG_AGENT_FILE } },
	{ IMSG_AGENT_TERM_OPEN,	  { IMSG_AGENT_TERM } },
	{ IMSG_AGENT_TERMS,	  { IMSG_AGENT_TERM, IMSG_AGENT_TERM_END } },
	{ IMSG_AGENT_PROC_INPUT,  { IMSG_AGENT_PROC } },
	{ IMSG_AGENT_PORTS,	  { IMSG_AGENT_PORT_LIST } },
	{ IMSG_AGENT_TUNNEL_OPEN, { IMSG_AGENT_TUNNEL, IMSG_AGENT_TUNNEL_DATA,
				    IMSG_AGENT_TUNNEL_CREDIT,
				    IMSG_AGENT_TUNNEL_CLOSE } },
};

static int
svc_agent_takes(uint32_t request, uint32_t answer)
{
	size_t		 i, j;

	if (answer == IMSG_AGENT_ERROR)
		return (1);
	for (i = 0; i < nitems(svc_agent_rules); i++) {
		if (svc_agent_rules[i].ar_request != request)
			continue;
		for (j = 0; j < SVC_AGENT_ANSWERS; j++)
			if (svc_agent_rules[i].ar_answers[j] == answer)
				return (1);
	}
	return (0);
}

/* An agent's answer, decoded: m and where its parts live. */
struct svc_agent_msg {
	struct svc_msg		 am_m;
	struct msg_result	 am_rs;
	struct msg_gitconfig	 am_g;
	struct msg_error	 am_e;
	struct msg_proc		 am_p;
	struct msg_file		 am_fl;
	struct msg_filelist	 am_fls;
	struct msg_chunk	 am_ch;
	struct msg_term		 am_t;
	struct msg_portlist	 am_pl;
};

/* What a decoder made of an answer. */
#define SVC_AGENT_OK		0
#define SVC_AGENT_MALFORMED	1	/* its request fails */
#define SVC_AGENT_BAD		2	/* the channel closes */

static int
svc_agent_result(struct breq *r, struct imsg *imsg, struct svc_agent_msg *am)
{
	if (msg_result_decode(imsg->data, imsg->len, &am->am_rs) == -1)
		return (SVC_AGENT_MALFORMED);
	am->am_m.m_result = &am->am_rs;
	return (SVC_AGENT_OK);
}

static int
svc_agent_identity(struct breq *r, struct imsg *imsg,
    struct svc_agent_msg *am)
{
	if (msg_gitconfig_decode(imsg->data, imsg->len, &am->am_g) == -1)
		return (SVC_AGENT_MALFORMED);
	explicit_bzero(am->am_g.g_bearer, sizeof(am->am_g.g_bearer));
	am->am_m.m_git = &am->am_g;
	return (SVC_AGENT_OK);
}

static int
svc_agent_error(struct breq *r, struct imsg *imsg, struct svc_agent_msg *am)
{
	if (msg_error_decode(imsg->data, imsg->len, &am->am_e) == -1)
		return (SVC_AGENT_MALFORMED);
	am->am_m.m_error = &am->am_e;
	return (SVC_AGENT_OK);
}

/*
 * A listing is bounded as the agent's table is, and carries no output:
 * an agent that sends more is not ours.
 */
static int
svc_agent_proc(struct breq *r, struct imsg *imsg, struct svc_agent_msg *am)
{
	if (r->r_list && r->r_nprocs >= EXEC_PROCESSES_MAX)
		return (SVC_AGENT_BAD);
	if (msg_proc_decode(imsg->data, imsg->len, &am->am_p) == -1)
		return (SVC_AGENT_MALFORMED);
	if (r->r_list && (am->am_p.p_stdout_len > 0 ||
	    am->am_p.p_stderr_len > 0)) {
		msg_proc_free(&am->am_p);
		return (SVC_AGENT_BAD);
	}
	am->am_m.m_proc = &am->am_p;
	return (SVC_AGENT_OK);
}

/* The end of a listing, of processes or of terminals. */
static int
svc_agent_list_end(struct breq *r, struct imsg *imsg,
    struct svc_agent_msg *am)
{
	if (!r->r_list)
		return (SVC_AGENT_BAD);
	if (msg_empty_decode(imsg->data, imsg->len) == -1)
		return (SVC_AGENT_MALFORMED);
	return (SVC_AGENT_OK);
}

static int
svc_agent_file(struct breq *r, struct imsg *imsg, struct svc_agent_msg *am)
{
	if (msg_file_decode(imsg->data, imsg->len, &am->am_fl) == -1)
		return (SVC_AGENT_MALFORMED);
	am->am_m.m_file = &am->am_fl;
	return (SVC_AGENT_OK);
}

static int
svc_agent_file_list(struct breq *r, struct imsg *imsg,
    struct svc_agent_msg *am)
{
	if (msg_filelist_decode(imsg->data, imsg->len, &am->am_fls) == -1)
		return (SVC_AGENT_MALFORMED);
	am->am_m.m_filelist = &am->am_fls;
	return (SVC_AGENT_OK);
}

/* Only of a stream, and never beyond the credit it has. */
static int
svc_agent_chunk(struct breq *r, struct imsg *imsg, struct svc_agent_msg *am)
{
	if (msg_chunk_decode(imsg->data, imsg->len, &am->am_ch) == -1)
		return (SVC_AGENT_BAD);
	if (am->am_ch.ch_len > MSG_STREAM_WINDOW - r->r_unacked) {
		msg_chunk_free(&am->am_ch);
		return (SVC_AGENT_BAD);
	}
	r->r_unacked += am->am_ch.ch_len;
	am->am_m.m_chunk = &am->am_ch;
	return (SVC_AGENT_OK);
}

static int
svc_agent_portlist(struct breq *r, struct imsg *imsg,
    struct svc_agent_msg *am)
{
	if (msg_portlist_decode(imsg->data, imsg->len, &am->am_pl) == -1)
		return (SVC_AGENT_MALFORMED);
	am->am_m.m_ports = &am->am_pl;
	return (SVC_AGENT_OK);
}

/* A listing is bounded as the agent's table is. */
static int
svc_agent_term(struct breq *r, struct imsg *imsg, struct svc_agent_msg *am)
{
	if (r->r_list && r->r_nprocs >= MSG_TERM_MAX)
		return (SVC_AGENT_BAD);
	if (msg_term_decode(imsg->data, imsg->len, &am->am_t) == -1)
		return (SVC_AGENT_MALFORMED);
	am->am_m.m_term = &am->am_t;
	return (SVC_AGENT_OK);
}

/* How each kind of answer is decoded. */
static const struct svc_agent_decoder {
	uint32_t	 ad_type;
	int		(*ad_decode)(struct breq *, struct imsg *,
			    struct svc_agent_msg *);
} svc_agent_decoders[] = {
	{ IMSG_AGENT_RESULT,		svc_agent_result },
	{ IMSG_AGENT_GIT_IDENTITY,	svc_agent_identity },
	{ IMSG_AGENT_ERROR,		svc_agent_error },
	{ IMSG_AGENT_PROC,		svc_agent_proc },
	{ IMSG_AGENT_PROC_END,		svc_agent_list_end },
	{ IMSG_AGENT_FILE,		svc_agent_file },
	{ IMSG_AGENT_FILE_LIST,		svc_agent_file_list },
	{ IMSG_AGENT_CHUNK,		svc_agent_chunk },
	{ IMSG_AGENT_TERM,		svc_agent_term },
	{ IMSG_AGENT_TERM_END,		svc_agent_list_end },
	{ IMSG_AGENT_PORT_LIST,		svc_agent_portlist },
};

/* What a decoder kept of the answer goes (the git identity: wiped). */
static void
svc_agent_msg_free(struct svc_agent_msg *am)
{
	if (am->am_m.m_result != NULL)
		msg_result_free(&am->am_rs);
	if (am->am_m.m_git != NULL)
		explicit_bzero(&am->am_g, sizeof(am->am_g));
	if (am->am_m.m_proc != NULL)
		msg_proc_free(&am->am_p);
	if (am->am_m.m_file != NULL)
		msg_file_free(&am->am_fl);
	if (am->am_m.m_filelist != NULL)
		msg_filelist_free(&am->am_fls);
	if (am->am_m.m_chunk != NULL)
		msg_chunk_free(&am->am_ch);
}

/*
 * A connection at the proxy port, to be passed on as it is; from a
 * fence without a list there is no proxy port to accept at.
 */
static int
svc_agent_egress(struct bfence *bf, struct imsg *imsg)
{
	if (imsg->fd == -1 || bf->bf_egress == NULL ||
	    msg_empty_decode(imsg->data, imsg->len) == -1)
		return (-1);
	svc_egress_conn(bf->bf_egress, imsg->fd);
	imsg->fd = -1;
	return (0);
}

/*
 * What an agent says is decoded here, once, and must answer a request
 * made to it with a kind of answer that request takes
 * (svc_agent_rules[]); a malformed answer fails its request.  Anything
 * else closes the channel.
 */
void
svc_agent_dispatch(struct imsgev *iev, struct imsg *imsg, void *arg)
{
	struct bfence	*bf = arg;
	struct breq	*r;
	struct svc_agent_msg am;
	uint32_t	 type = imsg->hdr.ih_type;
	size_t		 i;
	int		 rv;

	if (type == IMSG_AGENT_EGRESS_CONN) {
		if (svc_agent_egress(bf, imsg) == -1)
			goto bad;
		return;
	}
	r = breq_find(svc_probe_first(bf, imsg->hdr.ih_peerid));
	if (r == NULL && svc_tunnel_stray(bf, imsg))
		return;
	if (r == NULL || r->r_kind != BREQ_AGENT || r->r_fence != bf ||
	    r->r_is_held || !svc_agent_takes(r->r_type, type))
		goto bad;
	/* A tunnel's own messages: svc_tunnel.c reads them. */
	if (r->r_type == IMSG_AGENT_TUNNEL_OPEN && type != IMSG_AGENT_ERROR) {
		if (svc_tunnel_agent(r, imsg) == -1)
			goto bad;
		return;
	}
	for (i = 0; i < nitems(svc_agent_decoders); i++)
		if (svc_agent_decoders[i].ad_type == type)
			break;
	if (i == nitems(svc_agent_decoders))
		goto bad;
	memset(&am, 0, sizeof(am));
	am.am_m.m_type = type;
	am.am_m.m_data = imsg->data;
	am.am_m.m_len = imsg->len;
	if ((rv = svc_agent_decoders[i].ad_decode(r, imsg, &am)) ==
	    SVC_AGENT_BAD)
		goto bad;
	if (rv == SVC_AGENT_MALFORMED)
		breq_agent_error(r, "agent-error", "the agent's answer was "
		    "malformed");
	else
		r->r_fn(r, &am.am_m);
	svc_agent_msg_free(&am);
	return;
 bad:
	/* A fence's agent is inside the fence: never trusted, never fatal. */
	log_warnx("fence %s: agent sent %s for request %u; channel closed",
	    bf->bf_info.f_key, msg_type_name(type), imsg->hdr.ih_peerid);
	imsgev_free(bf->bf_agent);
	bf->bf_agent = NULL;
	svc_fail_fence(bf, "has a misbehaving agent", 0);
}

void
svc_agent_closed(struct imsgev *iev, int error, void *arg)
{
	struct bfence	*bf = arg;

	log_debug("fence %s: agent channel closed%s%s", bf->bf_info.f_key,
	    error ? ": " : "", error ? strerror(error) : "");
	imsgev_free(iev);
	bf->bf_agent = NULL;
	svc_fail_fence(bf, "lost its agent", 0);
}
