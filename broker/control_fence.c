/*
 * The control socket's requests about fences (boot, probe, stop, list,
 * exec and its stream, git, background processes): each turned into a
 * call of the fence service, and its answers into what fencectl reads.
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>

#include "fenced.h"
#include "imsg.h"
#include "log.h"
#include "msg.h"
#include "broker.h"
#include "files.h"
#include "control.h"

static void
control_fence(struct ctl_conn *cc, const struct msg_fence *f)
{
	void		*buf;
	size_t		 len;

	if (msg_fence_encode(f, &buf, &len) == -1) {
		log_warn("%s: encode", __func__);
		return;
	}
	control_reply(cc, IMSG_CTL_FENCE, buf, len);
	free(buf);
}

static void
control_verdict(struct ctl_conn *cc, const struct svc_answer *a)
{
	struct msg_verdict v;
	void		*buf;
	size_t		 len;

	memset(&v, 0, sizeof(v));
	strlcpy(v.v_key, a->a_key, sizeof(v.v_key));
	v.v_level = a->a_level;
	v.v_json = (char *)a->a_boundary;
	if (msg_verdict_encode(&v, &buf, &len) == -1) {
		log_warn("%s: encode", __func__);
		return;
	}
	control_reply(cc, IMSG_CTL_VERDICT, buf, len);
	free(buf);
}

static void
control_identity(struct ctl_conn *cc, const struct msg_gitconfig *g)
{
	void		*buf;
	size_t		 len;

	if (msg_gitconfig_encode(g, &buf, &len) == -1) {
		log_warn("%s: encode", __func__);
		return;
	}
	control_reply(cc, IMSG_CTL_GIT_IDENTITY, buf, len);
	free(buf);
}

static void
control_proc(struct ctl_conn *cc, const struct msg_proc *p)
{
	void		*buf;
	size_t		 len;

	if (msg_proc_encode(p, &buf, &len) == -1) {
		log_warn("%s: encode", __func__);
		return;
	}
	control_reply(cc, IMSG_CTL_PROC, buf, len);
	free(buf);
}

/*
 * Credit what the connection owes to its stream once fencectl has read
 * enough of what waits for it; until then the command waits.
 */
void
control_credit(int fd, short event, void *arg)
{
	struct ctl_conn	*cc = arg;
	struct timeval	 tv = { 0, CONTROL_STREAM_POLL_MS * 1000 };
	size_t		 n;

	if (cc->cc_owed == 0 || cc->cc_dead)
		return;
	if (imsgbuf_queued(imsgev_buf(cc->cc_iev)) >= CONTROL_STREAM_MARK) {
		evtimer_add(&cc->cc_credit, &tv);
		return;
	}
	n = cc->cc_owed;
	cc->cc_owed = 0;
	svc_stream_credit(cc->cc_stream_id, cc, n);
}

/* A chunk of a streamed exec, as the agent sent it. */
static void
control_chunk(struct ctl_conn *cc, const struct svc_answer *a)
{
	void	*buf;
	size_t	 len;

	if (msg_chunk_encode(a->a_chunk, &buf, &len) == -1) {
		log_warn("%s: encode", __func__);
		control_doom(cc);
		return;
	}
	control_reply(cc, IMSG_CTL_CHUNK, buf, len);
	free(buf);
	/* One stream owed to at a time: another's is paid at once. */
	if (cc->cc_owed > 0 && cc->cc_stream_id != a->a_id) {
		svc_stream_credit(cc->cc_stream_id, cc, cc->cc_owed);
		cc->cc_owed = 0;
	}
	cc->cc_stream_id = a->a_id;
	cc->cc_owed += a->a_chunk->ch_len;
	control_credit(-1, 0, cc);
}

/* A terminal, as the agent said it. */
static void
control_term(struct ctl_conn *cc, const struct msg_term *t)
{
	void	*buf;
	size_t	 len;

	if (msg_term_encode(t, &buf, &len) == -1) {
		log_warn("%s: encode", __func__);
		control_doom(cc);
		return;
	}
	control_reply(cc, IMSG_CTL_TERM, buf, len);
	free(buf);
}

/*
 * A tunnel's descriptor: fencectl gets one end of a socket pair whose
 * other end the broker splices to it, never the descriptor itself (in
 * mode fd a socket of the fence's network namespace, which a client
 * could disconnect and connect or bind anew there).  The tunnel then
 * belongs to its splice, not to the control connection, which may go.
 */
struct ctl_tunnel {
	uint32_t	 ct_id;
};

static void
control_tunnel_done(void *arg)
{
	struct ctl_tunnel *ct = arg;

	svc_tunnel_close(ct->ct_id, ct);
	free(ct);
}

static void
control_tunnel_fd(struct ctl_conn *cc, const struct svc_answer *a)
{
	struct ctl_tunnel *ct;
	int		 sv[2] = { -1, -1 };

	if ((ct = calloc(1, sizeof(*ct))) == NULL ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0, sv) == -1) {
		log_warn("%s", __func__);
		free(ct);
		(void)close(a->a_fd);
		svc_tunnel_close(a->a_id, cc);
		control_error(cc, "too-many-tunnels", "the daemon is out of "
		    "descriptors");
		return;
	}
	ct->ct_id = a->a_id;
	svc_tunnel_adopt(a->a_id, cc, ct);
	if (splice_new(a->a_fd, sv[1], control_tunnel_done, ct) == -1) {
		(void)close(a->a_fd);
		(void)close(sv[0]);
		(void)close(sv[1]);
		control_tunnel_done(ct);
		control_error(cc, "too-many-tunnels", "the daemon is out of "
		    "memory");
		return;
	}
	if (!cc->cc_dead && imsgev_compose(cc->cc_iev, IMSG_CTL_TUNNEL_FD, 0,
	    0, sv[0], NULL, 0) == -1)
		control_doom(cc);
	else if (cc->cc_dead)
		(void)close(sv[0]);
	control_reply(cc, IMSG_CTL_END, NULL, 0);
}

static void
control_ports_list(struct ctl_conn *cc, const struct msg_portlist *pl)
{
	void	*buf;
	size_t	 len;

	if (msg_portlist_encode(pl, &buf, &len) == -1) {
		control_error(cc, "internal", "cannot encode the ports");
		return;
	}
	control_reply(cc, IMSG_CTL_PORT_LIST, buf, len);
	free(buf);
}

static void
control_snap_info(struct ctl_conn *cc, const struct msg_snap_info *si)
{
	void	*buf;
	size_t	 len;

	if (msg_snap_info_encode(si, &buf, &len) == -1) {
		control_error(cc, "internal", "cannot encode the snapshot");
		return;
	}
	control_reply(cc, IMSG_CTL_SNAP_INFO, buf, len);
	free(buf);
}

static void
control_check(struct ctl_conn *cc, const struct msg_check *c)
{
	void	*buf;
	size_t	 len;

	if (msg_check_encode(c, &buf, &len) == -1) {
		control_error(cc, "internal", "cannot encode the check");
		return;
	}
	control_reply(cc, IMSG_CTL_CHECK, buf, len);
	free(buf);
}

/* What the fence service answers, as fencectl reads it. */
void
control_answer(void *arg, const struct svc_answer *a)
{
	struct ctl_conn	*cc = arg;

	switch (a->a_what) {
	case SVC_FENCE:
		control_fence(cc, a->a_fence);
		break;
	case SVC_VERDICT:
		control_verdict(cc, a);
		break;
	case SVC_RESULT:
		/* Decoded and checked whole by the service: as it came. */
		control_reply(cc, IMSG_CTL_RESULT, a->a_raw, a->a_rawlen);
		break;
	case SVC_IDENTITY:
		control_identity(cc, a->a_git);
		break;
	case SVC_ERROR:
		control_error(cc, a->a_code, "%s", a->a_message);
		return;		/* with its END */
	case SVC_PROC:
		control_proc(cc, a->a_proc);
		break;
	case SVC_END:
	case SVC_FILE:
	case SVC_FILE_LIST:
		break;
	case SVC_TUNNEL:
		control_tunnel_fd(cc, a);
		return;		/* with its END, or an ERROR's */
	case SVC_PORTS:
		control_ports_list(cc, a->a_ports);
		break;
	case SVC_CHUNK:
		control_chunk(cc, a);
		break;
	case SVC_TERM:
		control_term(cc, a->a_term);
		break;
	case SVC_SNAP:
		control_snap_info(cc, a->a_snap);
		break;
	case SVC_TEXT:
		control_text(cc, a->a_text, a->a_textlen);
		break;
	case SVC_CHECK:
		control_check(cc, a->a_check);
		break;
	}
	if (a->a_last)
		control_reply(cc, IMSG_CTL_END, NULL, 0);
}

/* Who asks: the connection's credentials, never the message's fields. */
void
control_who(const struct ctl_conn *cc, struct svc_who *w)
{
	w->w_uid = cc->cc_uid;
	w->w_admin = cc->cc_admin;
	/* Root is held only to the bounds in all (it can stop the daemon). */
	w->w_unbounded = cc->cc_uid == 0;
	w->w_noun = "fence";
	w->w_token = NULL;
}

/*
 * Room for one more request to the fencer or an agent from this user?
 * Else the error is sent and -1 returned.
 */
int
control_room(struct ctl_conn *cc)
{
	if (cc->cc_uid != 0 &&
	    svc_pending(cc->cc_uid) >= CONTROL_PENDING_USER) {
		control_error(cc, "too-many-requests", "at most %d requests "
		    "of one user at once", CONTROL_PENDING_USER);
		return (-1);
	}
	if (svc_total() >= CONTROL_PENDING_ALL) {
		control_error(cc, "busy", "the daemon has %d requests in "
		    "hand; try again in a moment", CONTROL_PENDING_ALL);
		return (-1);
	}
	return (0);
}

/*
 * Fence requests, each one call of the fence service.  Each handler
 * returns -1 for a message it cannot decode.
 */
int
control_boot(struct ctl_conn *cc, struct imsg *imsg)
{
	struct msg_boot	 b;
	struct svc_who	 w;

	if (msg_boot_decode(imsg->data, imsg->len, &b) == -1)
		return (-1);
	control_who(cc, &w);
	if (control_room(cc) == 0)
		svc_boot(&w, &b, control_answer, cc);
	return (0);
}

int
control_probe(struct ctl_conn *cc, struct imsg *imsg)
{
	struct msg_fence_req q;
	struct svc_who	 w;

	if (msg_fence_req_decode(imsg->data, imsg->len, &q) == -1)
		return (-1);
	control_who(cc, &w);
	svc_probe(&w, q.r_owner, q.r_key, 1, control_answer, cc);
	return (0);
}

/*
 * show environment KEY: the fence, then the verdicts of its last probe
 * when the broker keeps them (the API's "boundary").
 */
static void
control_answer_env(void *arg, const struct svc_answer *a)
{
	struct svc_answer b;

	control_answer(arg, a);
	if (a->a_what != SVC_FENCE || a->a_boundary == NULL)
		return;
	b = *a;
	b.a_key = a->a_fence->f_key;
	b.a_level = a->a_fence->f_level;
	control_verdict(arg, &b);
}

/* IMSG_CTL_LIST is answered from the service's state, ending with END. */
int
control_stop_list(struct ctl_conn *cc, struct imsg *imsg)
{
	struct msg_fence_req q;
	struct svc_who	 w;

	if (msg_fence_req_decode(imsg->data, imsg->len, &q) == -1)
		return (-1);
	control_who(cc, &w);
	if (imsg->hdr.ih_type == IMSG_CTL_LIST) {
		if (svc_list(&w, q.r_owner, q.r_key, q.r_key[0] != '\0' ?
		    control_answer_env : control_answer, cc) != -1)
			control_reply(cc, IMSG_CTL_END, NULL, 0);
	} else if (control_room(cc) == 0)
		svc_stop(&w, q.r_owner, q.r_key, control_answer, cc);
	return (0);
}

/* snapshot, snapshots, delete, restore, undo (docs/snapshots.md). */
int
control_snap(struct ctl_conn *cc, struct imsg *imsg)
{
	struct msg_snap	 q;
	struct svc_who	 w;

	if (msg_snap_decode(imsg->data, imsg->len, &q) == -1 ||
	    q.s_op == SNAP_UNDO_MARK)	/* the daemon's own, before an exec */
		return (-1);
	control_who(cc, &w);
	if (control_room(cc) == 0)
		svc_snap(&w, &q, control_answer, cc);
	return (0);
}

/* The host doctor (docs/doctor.md): anyone; the details for admins. */
int
control_doctor(struct ctl_conn *cc, struct imsg *imsg)
{
	struct svc_who	 w;

	control_who(cc, &w);
	if (control_room(cc) == 0)
		svc_doctor(&w, control_answer, cc);
	return (0);
}

int
control_exec(struct ctl_conn *cc, struct imsg *imsg)
{
	struct msg_exec	 x;
	struct svc_who	 w;

	if (msg_exec_decode(imsg->data, imsg->len, &x) == -1)
		return (-1);
	control_who(cc, &w);
	if (control_room(cc) == 0) {
		if (imsg->hdr.ih_type == IMSG_CTL_EXEC_STREAM)
			svc_exec_stream(&w, &x, control_answer, cc);
		else
			svc_exec(&w, &x, control_answer, cc);
	}
	msg_exec_free(&x);
	return (0);
}

int
control_git_config(struct ctl_conn *cc, struct imsg *imsg)
{
	struct msg_gitconfig g;
	struct svc_who	 w;

	if (msg_gitconfig_decode(imsg->data, imsg->len, &g) == -1)
		return (-1);
	control_who(cc, &w);
	if (control_room(cc) == 0)
		svc_git_config(&w, &g, control_answer, cc);
	explicit_bzero(&g, sizeof(g));
	return (0);
}

int
control_git_init(struct ctl_conn *cc, struct imsg *imsg)
{
	struct msg_gitinit gi;
	struct svc_who	 w;

	if (msg_gitinit_decode(imsg->data, imsg->len, &gi) == -1)
		return (-1);
	control_who(cc, &w);
	if (control_room(cc) == 0)
		svc_git_init(&w, &gi, control_answer, cc);
	return (0);
}

/* fencectl forward, and whoever wants a tunnel's descriptor. */
int
control_tunnel(struct ctl_conn *cc, struct imsg *imsg)
{
	struct msg_tunnel_open to;
	struct svc_who	 w;

	if (msg_tunnel_open_decode(imsg->data, imsg->len, &to) == -1)
		return (-1);
	explicit_bzero(to.to_bearer, sizeof(to.to_bearer));
	control_who(cc, &w);
	if (control_room(cc) == 0)
		svc_tunnel_open(&w, to.to_owner, to.to_key, &to,
		    control_answer, cc);
	return (0);
}

/* fencectl ports */
int
control_ports(struct ctl_conn *cc, struct imsg *imsg)
{
	struct msg_ports_req ps;
	struct svc_who	 w;

	if (msg_ports_req_decode(imsg->data, imsg->len, &ps) == -1)
		return (-1);
	control_who(cc, &w);
	if (control_room(cc) == 0)
		svc_ports(&w, ps.ps_owner, ps.ps_key, control_answer, cc);
	return (0);
}

/* fencectl spawn: exec's message, started in the background. */
int
control_spawn(struct ctl_conn *cc, struct imsg *imsg)
{
	struct msg_exec	 x;
	struct svc_who	 w;

	if (msg_exec_decode(imsg->data, imsg->len, &x) == -1)
		return (-1);
	control_who(cc, &w);
	if (control_room(cc) == 0)
		svc_spawn(&w, &x, control_answer, cc);
	msg_exec_free(&x);
	return (0);
}

/* fencectl show processes, kill */
int
control_procs(struct ctl_conn *cc, struct imsg *imsg)
{
	struct msg_proc_req q;
	struct svc_who	 w;

	if (msg_proc_req_decode(imsg->data, imsg->len, &q) == -1)
		return (-1);
	control_who(cc, &w);
	if (control_room(cc) == 0)
		svc_procs(&w, &q, control_answer, cc);
	explicit_bzero(&q, sizeof(q));
	return (0);
}

/* fencectl term: a new terminal (attached by IMSG_CTL_TUNNEL) */
int
control_term_open(struct ctl_conn *cc, struct imsg *imsg)
{
	struct msg_term_open to;
	struct svc_who	 w;

	if (msg_term_open_decode(imsg->data, imsg->len, &to) == -1)
		return (-1);
	control_who(cc, &w);
	if (control_room(cc) == 0)
		svc_term_open(&w, &to, control_answer, cc);
	msg_term_open_free(&to);
	return (0);
}

/* fencectl term -l, -k, and a resize (SIGWINCH) */
int
control_terms(struct ctl_conn *cc, struct imsg *imsg)
{
	struct msg_term_req tq;
	struct svc_who	 w;

	if (msg_term_req_decode(imsg->data, imsg->len, &tq) == -1)
		return (-1);
	control_who(cc, &w);
	if (control_room(cc) == 0) {
		if (tq.tq_op == MSG_TERM_LIST)
			svc_terms(&w, &tq, control_answer, cc);
		else if (tq.tq_op == MSG_TERM_RESIZE)
			svc_term_resize(&w, &tq, control_answer, cc);
		else
			svc_term_kill(&w, &tq, control_answer, cc);
	}
	explicit_bzero(&tq, sizeof(tq));
	return (0);
}

/* fencectl input: a background process's stdin */
int
control_proc_input(struct ctl_conn *cc, struct imsg *imsg)
{
	struct msg_proc_input pi;
	struct svc_who	 w;

	if (msg_proc_input_decode(imsg->data, imsg->len, &pi) == -1)
		return (-1);
	control_who(cc, &w);
	if (control_room(cc) == 0)
		svc_proc_input(&w, &pi, control_answer, cc);
	msg_proc_input_free(&pi);
	return (0);
}
