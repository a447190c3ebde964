/*
 * The control socket, as fencectl speaks to it.  Anyone may connect
 * (the socket is 0666); what a connection may do is decided per request
 * from the peer's credentials, taken from the kernel (SO_PEERCRED and
 * SO_PEERGROUPS), never from anything the client says.
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

#define CONTROL_MAX_CONNS	512	/* all users together */
#define CONTROL_MAX_PER_UID	32
#define CONTROL_IDLE_SEC	60	/* a connection with nothing to say */
#define CONTROL_MAX_GROUPS	256

/*
 * What one client may have the daemon work on and hold for it
 * (docs/architecture.md): requests not yet answered to their END, per
 * connection, per user (orphans of closed connections included) and in
 * all; and answers not yet read.  Over CONTROL_QUEUE_SOFT unsent, the
 * connection is not read until half of it went; a connection that
 * stays over it CONTROL_STALL_SEC is closed, and one that reaches
 * CONTROL_QUEUE_HARD at once.  Root is bounded only in all (it can
 * stop the daemon anyway); the admin group is bounded as any user.
 */
#define CONTROL_PENDING_CONN	16
#define CONTROL_PENDING_USER	64
#define CONTROL_PENDING_ALL	2048
#define CONTROL_QUEUE_SOFT	(1024U * 1024)
#define CONTROL_QUEUE_HARD	(16U * 1024 * 1024)
#define CONTROL_STALL_SEC	10
/* A stream's chunks are credited back while less than this waits. */
#define CONTROL_STREAM_MARK	(256U * 1024)
#define CONTROL_STREAM_POLL_MS	20

struct ctl_conn {
	TAILQ_ENTRY(ctl_conn)	 cc_entry;
	struct imsgev		*cc_iev;
	struct event		 cc_idle;
	struct event		 cc_stall;	/* answers unread too long */
	struct event		 cc_kill;	/* closed from the loop */
	unsigned int		 cc_stall_pause;	/* the pause it watches */
	unsigned int		 cc_pending;	/* requests before their END */
	int			 cc_dead;	/* closing: nothing more out */
	uid_t			 cc_uid;
	gid_t			 cc_gid;
	pid_t			 cc_pid;
	int			 cc_admin;
	/* fencectl put or get: its streamed transfer (files.c). */
	struct ftx		*cc_file;
	struct msg_file		 cc_file_req;	/* its key, owner, path */
	int			 cc_file_get;	/* cc_file is a get's */
	int			 cc_file_busy;	/* a chunk of it is out */
	struct event		 cc_credit;	/* owed credit, polled */
	uint32_t		 cc_stream_id;	/* the stream owed to */
	size_t			 cc_owed;	/* its chunk bytes */
	uint32_t		 cc_reload;	/* the reload it waits for */
};

static TAILQ_HEAD(, ctl_conn) ctl_conns = TAILQ_HEAD_INITIALIZER(ctl_conns);
static struct event	 ctl_ev_accept;
static struct event	 ctl_ev_pause;
static int		 ctl_fd = -1;
static unsigned int	 ctl_nconns;

static void	control_accept(int, short, void *);
static void	control_dispatch(struct imsgev *, struct imsg *, void *);
static void	control_closed(struct imsgev *, int, void *);
static void	control_idle(int, short, void *);
static void	control_stall(int, short, void *);
static void	control_kill(int, short, void *);
static void	control_credit(int, short, void *);
static void	control_close(struct ctl_conn *);
static int	control_is_admin(int, uid_t, gid_t);
static void	control_reply(struct ctl_conn *, uint32_t, const void *,
		    size_t);
static void	control_error(struct ctl_conn *, const char *, const char *,
		    ...) __attribute__((format(printf, 3, 4)));
static void	control_token(void *, const struct msg_hosttoken *, int);

void
control_listen(int fd)
{
	if (ctl_fd != -1)
		fatalx("%s: second control socket", __func__);
	ctl_fd = fd;
	event_assign(&ctl_ev_accept, broker_self.ps_evbase, ctl_fd, EV_READ | EV_PERSIST,
	    control_accept, NULL);
	event_add(&ctl_ev_accept, NULL);
	evtimer_assign(&ctl_ev_pause, broker_self.ps_evbase, control_accept,
	    NULL);
}

void
control_shutdown(void)
{
	struct ctl_conn	*cc;

	while ((cc = TAILQ_FIRST(&ctl_conns)) != NULL)
		control_close(cc);
	if (ctl_fd != -1) {
		event_del(&ctl_ev_accept);
		close(ctl_fd);
		ctl_fd = -1;
	}
}

static unsigned int
control_count_uid(uid_t uid)
{
	struct ctl_conn	*cc;
	unsigned int	 n = 0;

	TAILQ_FOREACH(cc, &ctl_conns, cc_entry)
		if (cc->cc_uid == uid)
			n++;
	return (n);
}

/*
 * Tell a client over the limits why, if its socket takes the few bytes
 * now; never wait for it.
 */
static void
control_refuse(int fd)
{
	struct imsgbuf	*ib;
	void		*buf;
	size_t		 len;

	if ((ib = imsgbuf_new(fd)) != NULL &&
	    msg_error_format(&buf, &len, "too-many-connections", "at most "
	    "%d control connections, %d per user", CONTROL_MAX_CONNS,
	    CONTROL_MAX_PER_UID) == 0) {
		if (imsgbuf_compose(ib, IMSG_CTL_ERROR, 0, 0, -1, buf,
		    len) == 0 && imsgbuf_compose(ib, IMSG_CTL_END, 0, 0, -1,
		    NULL, 0) == 0)
			(void)imsgbuf_write(ib);
		free(buf);
	}
	if (ib != NULL)
		imsgbuf_free(ib);
	close(fd);
}

static void
control_accept(int listenfd, short event, void *arg)
{
	struct timeval	 pause = { 1, 0 };
	struct timeval	 idle = { CONTROL_IDLE_SEC, 0 };
	struct ucred	 cred;
	socklen_t	 len;
	struct ctl_conn	*cc;
	int		 fd;

	/* After a pause for lack of descriptors, listen again. */
	if (event & EV_TIMEOUT) {
		event_add(&ctl_ev_accept, NULL);
		return;
	}

	if (!broker_self.ps_started)
		return;
	if ((fd = accept4(ctl_fd, NULL, NULL, SOCK_NONBLOCK |
	    SOCK_CLOEXEC)) == -1) {
		if (errno == ENFILE || errno == EMFILE) {
			log_warn("%s: accept, pausing", __func__);
			event_del(&ctl_ev_accept);
			evtimer_add(&ctl_ev_pause, &pause);
		} else if (errno != EAGAIN && errno != EINTR &&
		    errno != ECONNABORTED)
			log_warn("%s: accept", __func__);
		return;
	}

	len = sizeof(cred);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == -1 ||
	    len != sizeof(cred)) {
		log_warn("%s: SO_PEERCRED", __func__);
		close(fd);
		broker_stats.bs_ctl_errors++;
		return;
	}
	if (ctl_nconns >= CONTROL_MAX_CONNS || (cred.uid != 0 &&
	    control_count_uid(cred.uid) >= CONTROL_MAX_PER_UID)) {
		log_warnx("%s: too many connections, refusing uid %u",
		    __func__, (unsigned)cred.uid);
		control_refuse(fd);
		broker_stats.bs_ctl_errors++;
		return;
	}

	if ((cc = calloc(1, sizeof(*cc))) == NULL) {
		log_warn("%s: calloc", __func__);
		close(fd);
		return;
	}
	cc->cc_uid = cred.uid;
	cc->cc_gid = cred.gid;
	cc->cc_pid = cred.pid;
	cc->cc_admin = control_is_admin(fd, cred.uid, cred.gid);
	if ((cc->cc_iev = imsgev_new(broker_self.ps_evbase, fd, control_dispatch,
	    control_closed, cc)) == NULL) {
		log_warn("%s: imsgev_new", __func__);
		close(fd);
		free(cc);
		return;
	}
	imsgev_set_bounds(cc->cc_iev, CONTROL_QUEUE_SOFT, CONTROL_QUEUE_HARD);
	evtimer_assign(&cc->cc_idle, broker_self.ps_evbase, control_idle, cc);
	evtimer_assign(&cc->cc_stall, broker_self.ps_evbase, control_stall,
	    cc);
	evtimer_assign(&cc->cc_kill, broker_self.ps_evbase, control_kill, cc);
	evtimer_assign(&cc->cc_credit, broker_self.ps_evbase, control_credit,
	    cc);
	evtimer_add(&cc->cc_idle, &idle);
	TAILQ_INSERT_TAIL(&ctl_conns, cc, cc_entry);
	ctl_nconns++;
	broker_stats.bs_ctl_conns++;
	log_debug("%s: uid %u pid %d%s", __func__, (unsigned)cc->cc_uid,
	    (int)cc->cc_pid, cc->cc_admin ? " (admin)" : "");
}

/* Root, or a member of the configured admin group. */
static int
control_is_admin(int fd, uid_t uid, gid_t gid)
{
	gid_t		 groups[CONTROL_MAX_GROUPS];
	socklen_t	 len = sizeof(groups);
	gid_t		 admin = broker_self.ps_conf.c_admin_gid;
	size_t		 i, n;

	if (uid == 0)
		return (1);
	if (admin == (gid_t)-1)
		return (0);
	if (gid == admin)
		return (1);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) == -1) {
		/* More groups than we look at: not admin by this route. */
		if (errno != ERANGE)
			log_warn("%s: SO_PEERGROUPS", __func__);
		return (0);
	}
	n = len / sizeof(gid_t);
	for (i = 0; i < n; i++)
		if (groups[i] == admin)
			return (1);
	return (0);
}

static void
control_close(struct ctl_conn *cc)
{
	svc_orphan(cc);
	token_orphan(cc);
	files_orphan(cc);
	TAILQ_REMOVE(&ctl_conns, cc, cc_entry);
	ctl_nconns--;
	evtimer_del(&cc->cc_idle);
	evtimer_del(&cc->cc_stall);
	evtimer_del(&cc->cc_kill);
	evtimer_del(&cc->cc_credit);
	imsgev_free(cc->cc_iev);
	free(cc);
}

static void
control_idle(int fd, short event, void *arg)
{
	struct ctl_conn	*cc = arg;

	log_debug("%s: uid %u idle, closing", __func__, (unsigned)cc->cc_uid);
	control_close(cc);
}

/* A client that has not read its answers since the pause we watched. */
static void
control_stall(int fd, short event, void *arg)
{
	struct ctl_conn	*cc = arg;
	struct timeval	 tv = { CONTROL_STALL_SEC, 0 };
	unsigned int	 p;

	if ((p = imsgev_paused(cc->cc_iev)) == 0)
		return;
	if (p != cc->cc_stall_pause) {
		/* It read, then stopped again: watch the new pause. */
		cc->cc_stall_pause = p;
		evtimer_add(&cc->cc_stall, &tv);
		return;
	}
	log_warnx("%s: uid %u pid %d reads no answers, closed", __func__,
	    (unsigned)cc->cc_uid, (int)cc->cc_pid);
	broker_stats.bs_ctl_errors++;
	control_close(cc);
}

static void
control_kill(int fd, short event, void *arg)
{
	control_close(arg);
}

/*
 * Close a connection from inside a callback that still uses it: stop
 * sending, close from the event loop.
 */
static void
control_doom(struct ctl_conn *cc)
{
	struct timeval	 now = { 0, 0 };

	if (cc->cc_dead)
		return;
	cc->cc_dead = 1;
	evtimer_add(&cc->cc_kill, &now);
}

static void
control_closed(struct imsgev *iev, int error, void *arg)
{
	struct ctl_conn	*cc = arg;

	if (error) {
		log_warnx("%s: uid %u pid %d: %s, dropped", __func__,
		    (unsigned)cc->cc_uid, (int)cc->cc_pid, strerror(error));
		broker_stats.bs_ctl_errors++;
	}
	control_close(cc);
}

/*
 * Every request is answered to its END, once.  An answer that does not
 * fit in what the client may have unread ends the connection: it is
 * never dropped alone, which would leave the client waiting for it.
 */
static void
control_reply(struct ctl_conn *cc, uint32_t type, const void *buf,
    size_t len)
{
	struct timeval	 tv = { CONTROL_STALL_SEC, 0 };
	struct timeval	 idle = { CONTROL_IDLE_SEC, 0 };
	unsigned int	 p;

	/* Idle again only once nothing it asked for is under way. */
	if (type == IMSG_CTL_END && cc->cc_pending > 0 &&
	    --cc->cc_pending == 0 && !cc->cc_dead)
		evtimer_add(&cc->cc_idle, &idle);
	if (cc->cc_dead)
		return;
	if (imsgev_compose(cc->cc_iev, type, 0, 0, -1, buf, len) == -1) {
		log_warn("%s: uid %u pid %d: answer not queued, closing",
		    __func__, (unsigned)cc->cc_uid, (int)cc->cc_pid);
		broker_stats.bs_ctl_errors++;
		control_doom(cc);
		return;
	}
	if ((p = imsgev_paused(cc->cc_iev)) != 0 &&
	    !evtimer_pending(&cc->cc_stall, NULL)) {
		cc->cc_stall_pause = p;
		evtimer_add(&cc->cc_stall, &tv);
	}
}

static void
control_error(struct ctl_conn *cc, const char *code, const char *fmt, ...)
{
	va_list		 ap;
	void		*buf;
	size_t		 len;
	int		 rv;

	broker_stats.bs_ctl_errors++;
	va_start(ap, fmt);
	rv = msg_error_vformat(&buf, &len, code, fmt, ap);
	va_end(ap);
	if (rv == -1) {
		log_warn("%s: encode", __func__);
		return;
	}
	control_reply(cc, IMSG_CTL_ERROR, buf, len);
	free(buf);
	control_reply(cc, IMSG_CTL_END, NULL, 0);
}

static void
control_ok(struct ctl_conn *cc)
{
	control_reply(cc, IMSG_CTL_OK, NULL, 0);
	control_reply(cc, IMSG_CTL_END, NULL, 0);
}

static void
control_show_stats(struct ctl_conn *cc)
{
	struct msg_stats st;
	void		*buf;
	size_t		 len;

	memset(&st, 0, sizeof(st));
	memcpy(st.st_pid, broker_procinfo.pi_pid, sizeof(st.st_pid));
	st.st_started = broker_procinfo.pi_started;
	st.st_now = time(NULL);
	st.st_ctl_conns = broker_stats.bs_ctl_conns;
	st.st_ctl_active = ctl_nconns;
	st.st_ctl_requests = broker_stats.bs_ctl_requests;
	st.st_ctl_errors = broker_stats.bs_ctl_errors;
	st.st_fences = svc_running();
	st.st_verbose = log_getverbose();
	st.st_pool = broker_stats.bs_pool;
	if (msg_stats_encode(&st, &buf, &len) == -1) {
		control_error(cc, "internal", "cannot encode statistics");
		return;
	}
	control_reply(cc, IMSG_CTL_STATS, buf, len);
	free(buf);
	control_reply(cc, IMSG_CTL_END, NULL, 0);
}

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
static void
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

/* What the fence service answers, as fencectl reads it. */
static void
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
	case SVC_CHUNK:
		control_chunk(cc, a);
		break;
	}
	if (a->a_last)
		control_reply(cc, IMSG_CTL_END, NULL, 0);
}

/* Who asks: the connection's credentials, never the message's fields. */
static void
control_who(const struct ctl_conn *cc, struct svc_who *w)
{
	w->w_uid = cc->cc_uid;
	w->w_admin = cc->cc_admin;
	/* Root is held only to the bounds in all (it can stop the daemon). */
	w->w_unbounded = cc->cc_uid == 0;
	w->w_noun = "fence";
}

/*
 * Room for one more request to the fencer or an agent from this user?
 * Else the error is sent and -1 returned.
 */
static int
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
static int
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

static int
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

/* IMSG_CTL_LIST is answered from the service's state, ending with END. */
static int
control_stop_list(struct ctl_conn *cc, struct imsg *imsg)
{
	struct msg_fence_req q;
	struct svc_who	 w;

	if (msg_fence_req_decode(imsg->data, imsg->len, &q) == -1)
		return (-1);
	control_who(cc, &w);
	if (imsg->hdr.ih_type == IMSG_CTL_LIST) {
		if (svc_list(&w, q.r_owner, q.r_key, control_answer, cc) != -1)
			control_reply(cc, IMSG_CTL_END, NULL, 0);
	} else if (control_room(cc) == 0)
		svc_stop(&w, q.r_owner, q.r_key, control_answer, cc);
	return (0);
}

static int
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

static int
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

static int
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

/* fencectl spawn: exec's message, started in the background. */
static int
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
static int
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

/*
 * fencectl put and get (docs/files.md): chunks of at most
 * MSG_FILE_CHUNK, each a request answered with END, streamed through
 * the agent one at a time (files_put_open(), files_get_open()): a put's
 * chunk is written into the fence before its END goes, a get's next
 * chunk read only when FILE_MORE asks.  So a connection holds one chunk
 * at most, and a user CONTROL_MAX_PER_UID of them; a key the asker may
 * not use is refused before a byte of it is taken.
 */

/* The transfer is over (its last answer came): none is under way. */
static void
control_file_over(struct ctl_conn *cc)
{
	cc->cc_file = NULL;
	cc->cc_file_get = 0;
	cc->cc_file_busy = 0;
}

/* A get's chunk as fencectl takes it: the file's stat, the bytes. */
static void
control_file_chunk(struct ctl_conn *cc, const struct files_answer *fa)
{
	struct msg_file	 fl;
	size_t		 n = evbuffer_get_length(fa->fa_data);
	void		*buf;
	size_t		 len;

	memset(&fl, 0, sizeof(fl));
	strlcpy(fl.fl_key, cc->cc_file_req.fl_key, sizeof(fl.fl_key));
	fl.fl_owner = cc->cc_file_req.fl_owner;
	strlcpy(fl.fl_path, cc->cc_file_req.fl_path, sizeof(fl.fl_path));
	fl.fl_kind = fa->fa_file->fl_kind;
	fl.fl_mode = fa->fa_file->fl_mode;
	fl.fl_size = fa->fa_file->fl_size;
	fl.fl_mtime = fa->fa_file->fl_mtime;
	fl.fl_offset = fa->fa_file->fl_offset;
	fl.fl_flags = fa->fa_more ? 0 : MSG_FILE_LAST;
	fl.fl_data_len = n;
	if (n > 0 && (fl.fl_data = evbuffer_pullup(fa->fa_data, n)) == NULL)
		fatal("%s: evbuffer_pullup", __func__);
	if (msg_file_encode(&fl, &buf, &len) == -1) {
		control_error(cc, "internal", "cannot encode a chunk");
		return;
	}
	control_reply(cc, IMSG_CTL_FILE, buf, len);
	free(buf);
	control_reply(cc, IMSG_CTL_END, NULL, 0);
}

static void
control_file_answer(void *arg, const struct files_answer *fa)
{
	struct ctl_conn	*cc = arg;
	struct msg_file	 fl;
	void		*buf;
	size_t		 len;
	int		 rv;

	cc->cc_file_busy = 0;
	if (!fa->fa_more)
		control_file_over(cc);
	if (fa->fa_code != NULL) {
		control_error(cc, fa->fa_code, "%s", fa->fa_message);
		return;
	}
	if (fa->fa_list != NULL) {
		rv = msg_filelist_encode(fa->fa_list, &buf, &len);
		if (rv == 0)
			control_reply(cc, IMSG_CTL_FILE_LIST, buf, len);
		free(rv == 0 ? buf : NULL);
		control_reply(cc, IMSG_CTL_END, NULL, 0);
		return;
	}
	if (fa->fa_data != NULL) {
		control_file_chunk(cc, fa);
		return;
	}
	if (fa->fa_more) {
		/* A put's chunk is in the fence: the next one may come. */
		control_reply(cc, IMSG_CTL_END, NULL, 0);
		return;
	}
	fl = *fa->fa_file;
	fl.fl_data = NULL;
	fl.fl_data_len = 0;
	if (msg_file_encode(&fl, &buf, &len) == 0) {
		control_reply(cc, IMSG_CTL_FILE, buf, len);
		free(buf);
	}
	control_reply(cc, IMSG_CTL_END, NULL, 0);
}

/* Drop the connection's transfer (a put's temporary goes). */
static void
control_file_drop(struct ctl_conn *cc)
{
	if (cc->cc_file != NULL)
		files_orphan(cc);
	control_file_over(cc);
}

/*
 * A file request.  -1 for a message that cannot be taken: undecodable,
 * or a chunk or FILE_MORE while one is out (fencectl waits for each
 * END), which closes the connection.
 */
static int
control_file(struct ctl_conn *cc, struct imsg *imsg)
{
	struct msg_file	 fl;
	struct svc_who	 w;
	uid_t		 owner;

	if (cc->cc_file_busy)
		return (-1);
	if (imsg->hdr.ih_type == IMSG_CTL_FILE_MORE) {
		if (msg_empty_decode(imsg->data, imsg->len) == -1)
			return (-1);
		if (cc->cc_file == NULL || !cc->cc_file_get)
			control_error(cc, "bad-request", "no get under way");
		else if (control_room(cc) == -1)
			control_file_drop(cc);
		else {
			cc->cc_file_busy = 1;
			files_get_next(cc->cc_file);
		}
		return (0);
	}
	if (msg_file_decode(imsg->data, imsg->len, &fl) == -1)
		return (-1);
	control_who(cc, &w);
	if (imsg->hdr.ih_type == IMSG_CTL_FILE_GET ||
	    (fl.fl_flags & MSG_FILE_FIRST)) {
		if (cc->cc_file != NULL) {
			control_file_drop(cc);
			control_error(cc, "bad-request", "a transfer is under "
			    "way on this connection");
			goto done;
		}
		/* The key first: nothing is taken for a fence not theirs. */
		if (!svc_fence_known(&w, fl.fl_owner, fl.fl_key)) {
			owner = fl.fl_owner == MSG_OWNER_NONE ? w.w_uid :
			    fl.fl_owner;
			if (owner == w.w_uid)
				control_error(cc, "not-found", "no %s %s",
				    w.w_noun, fl.fl_key);
			else
				control_error(cc, "not-found", "no %s %u/%s",
				    w.w_noun, (unsigned)owner, fl.fl_key);
			goto done;
		}
		if (control_room(cc) == -1)
			goto done;
		cc->cc_file_req = fl;
		cc->cc_file_req.fl_data = NULL;
		cc->cc_file_req.fl_data_len = 0;
		cc->cc_file_busy = 1;
		if (imsg->hdr.ih_type == IMSG_CTL_FILE_GET) {
			cc->cc_file_get = 1;
			cc->cc_file = files_get_open(&w, fl.fl_owner,
			    fl.fl_key, fl.fl_path, control_file_answer, cc);
			files_get_next(cc->cc_file);
		} else {
			cc->cc_file = files_put_open(&w, fl.fl_owner,
			    fl.fl_key, fl.fl_path, fl.fl_mode, fl.fl_flags,
			    control_file_answer, cc);
			files_put_chunk(cc->cc_file, fl.fl_data,
			    fl.fl_data_len, (fl.fl_flags & MSG_FILE_LAST) != 0);
		}
		goto done;
	}
	if (cc->cc_file == NULL || cc->cc_file_get ||
	    strcmp(fl.fl_path, cc->cc_file_req.fl_path) != 0 ||
	    strcmp(fl.fl_key, cc->cc_file_req.fl_key) != 0 ||
	    fl.fl_owner != cc->cc_file_req.fl_owner) {
		control_file_drop(cc);
		control_error(cc, "bad-request", "no put of that path under "
		    "way");
		goto done;
	}
	if (control_room(cc) == -1) {
		control_file_drop(cc);
		goto done;
	}
	cc->cc_file_busy = 1;
	files_put_chunk(cc->cc_file, fl.fl_data, fl.fl_data_len,
	    (fl.fl_flags & MSG_FILE_LAST) != 0);
 done:
	msg_file_free(&fl);
	return (0);
}

/* The new host token, once the parent stored its hash; or why not. */
static void
control_token(void *arg, const struct msg_hosttoken *ht, int error)
{
	struct ctl_conn	*cc = arg;
	void		*buf;
	size_t		 len;

	if (ht == NULL && error == 0) {
		control_ok(cc);		/* deleted */
		return;
	}
	if (ht == NULL) {
		control_error(cc, "token-not-stored", "the change of the host "
		    "token could not be stored: %s", strerror(error));
		return;
	}
	if (msg_hosttoken_encode(ht, &buf, &len) == -1) {
		control_error(cc, "internal", "cannot encode the token");
		return;
	}
	control_reply(cc, IMSG_CTL_HOSTTOKEN, buf, len);
	explicit_bzero(buf, len);
	free(buf);
	control_reply(cc, IMSG_CTL_END, NULL, 0);
}


/*
 * The caller's own token of a name: whose comes from SO_PEERCRED, for
 * root and the admin group too (tokens are per user).
 */
static int
control_mint(struct ctl_conn *cc, struct imsg *imsg)
{
	struct msg_ctltoken ct;
	const char	*code, *why;

	if (msg_ctltoken_decode(imsg->data, imsg->len, &ct) == -1)
		return (-1);
	if (token_request(cc->cc_uid, ct.ct_op, ct.ct_name, control_token,
	    cc, &code, &why) == -1)
		control_error(cc, code, "%s", why);
	return (0);
}

static void
control_tokeninfo(void *arg, const struct msg_tokeninfo *ti)
{
	struct ctl_conn	*cc = arg;
	void		*buf;
	size_t		 len;

	if (msg_tokeninfo_encode(ti, &buf, &len) == -1)
		fatal("%s: encode", __func__);
	control_reply(cc, IMSG_CTL_TOKENINFO, buf, len);
	free(buf);
}

/* The caller's own tokens' names and times; never anyone else's. */
static int
control_show_tokens(struct ctl_conn *cc, struct imsg *imsg)
{
	token_list(cc->cc_uid, control_tokeninfo, cc);
	control_reply(cc, IMSG_CTL_END, NULL, 0);
	return (0);
}

static int
control_stats(struct ctl_conn *cc, struct imsg *imsg)
{
	control_show_stats(cc);
	return (0);
}

static int
control_verbosity(struct imsg *imsg)
{
	int32_t		 v;

	return (msg_i32_decode(imsg->data, imsg->len, &v, 0, 3));
}

static int
control_empty(struct imsg *imsg)
{
	return (msg_empty_decode(imsg->data, imsg->len));
}

/* Checked by control_verbosity() before. */
static int
control_log_verbose(struct ctl_conn *cc, struct imsg *imsg)
{
	int32_t		 v;
	void		*buf;
	size_t		 len;

	if (msg_i32_decode(imsg->data, imsg->len, &v, 0, 3) == -1)
		return (-1);
	log_setverbose(v);
	broker_self.ps_conf.c_verbose = v;
	if (msg_i32_encode(v, &buf, &len) == -1 ||
	    proc_compose(&broker_self, PROC_PARENT, IMSG_LOG_VERBOSE, 0, -1,
	    buf, len) == -1)
		fatal("%s: log verbose to parent", __func__);
	free(buf);
	control_ok(cc);
	return (0);
}

/*
 * The parent reloads and answers (IMSG_RELOADED, control_reloaded):
 * fencectl hears whether the file was taken, and why not.  One reload
 * at a time per connection.
 */
static int
control_reload(struct ctl_conn *cc, struct imsg *imsg)
{
	static uint32_t	 next_id;

	if (cc->cc_reload != 0) {
		control_error(cc, "busy", "a reload of this connection is "
		    "still under way");
		return (0);
	}
	do {
		cc->cc_reload = ++next_id;
	} while (cc->cc_reload == 0);
	if (proc_compose(&broker_self, PROC_PARENT, IMSG_RELOAD,
	    cc->cc_reload, -1, NULL, 0) == -1)
		fatal("%s: reload to parent", __func__);
	return (0);
}

/*
 * IMSG_RELOADED: the parent's verdict, to the connection that asked
 * (gone: the reload happened all the same, nobody to tell).
 */
void
control_reloaded(struct imsg *imsg)
{
	struct ctl_conn	*cc;
	struct msg_error e;

	if (imsg->hdr.ih_peerid == 0 ||
	    msg_error_decode(imsg->data, imsg->len, &e) == -1)
		fatalx("%s: bad answer from the parent", __func__);
	TAILQ_FOREACH(cc, &ctl_conns, cc_entry)
		if (cc->cc_reload == imsg->hdr.ih_peerid)
			break;
	if (cc == NULL) {
		log_debug("%s: the asker of reload %u left", __func__,
		    imsg->hdr.ih_peerid);
		return;
	}
	cc->cc_reload = 0;
	if (strcmp(e.e_code, "ok") == 0)
		control_ok(cc);
	else
		control_error(cc, e.e_code, "%s", e.e_message);
}

#ifdef FENCED_TEST_HOOKS
static int
control_test_syscall(struct ctl_conn *cc, struct imsg *imsg)
{
	/* Outside the broker's allowlist: the filter must kill us. */
	log_warnx("%s: test hook: calling socket(2)", __func__);
	(void)socket(AF_INET, SOCK_DGRAM, 0);
	control_error(cc, "internal", "socket(2) was not refused");
	return (0);
}
#endif

enum ctl_who {
	CTL_ANYONE,
	CTL_ADMIN,	/* root and the admin group */
	CTL_ROOT,
};

/*
 * Every request the control socket takes.  cr_check, if set, decides
 * whether the message is well formed before whether the connection may
 * make it; the handler decodes it (again) and answers it to its END, or
 * returns -1 for a message it cannot decode.  A type not here is
 * nonsense, as a message that does not decode.
 */
struct ctl_req {
	uint32_t	 cr_type;
	enum ctl_who	 cr_who;
	const char	*cr_refusal;	/* the error for who may not */
	int		(*cr_check)(struct imsg *);
	int		(*cr_handler)(struct ctl_conn *, struct imsg *);
};

static const struct ctl_req ctl_reqs[] = {
	{ IMSG_CTL_SHOW_STATS,	CTL_ANYONE, NULL, control_empty,
	    control_stats },
	{ IMSG_CTL_LOG_VERBOSE,	CTL_ADMIN,
	    "log level is for root and the admin group", control_verbosity,
	    control_log_verbose },
	{ IMSG_CTL_RELOAD,	CTL_ADMIN,
	    "reload is for root and the admin group", control_empty,
	    control_reload },
	{ IMSG_CTL_BOOT,	CTL_ANYONE, NULL, NULL,	control_boot },
	{ IMSG_CTL_STOP,	CTL_ANYONE, NULL, NULL,	control_stop_list },
	{ IMSG_CTL_LIST,	CTL_ANYONE, NULL, NULL,	control_stop_list },
	{ IMSG_CTL_PROBE,	CTL_ANYONE, NULL, NULL,	control_probe },
	{ IMSG_CTL_EXEC,	CTL_ANYONE, NULL, NULL,	control_exec },
	{ IMSG_CTL_EXEC_STREAM,	CTL_ANYONE, NULL, NULL,	control_exec },
	{ IMSG_CTL_GIT_CONFIG,	CTL_ANYONE, NULL, NULL,	control_git_config },
	{ IMSG_CTL_GIT_INIT,	CTL_ANYONE, NULL, NULL,	control_git_init },
	{ IMSG_CTL_TOKEN,	CTL_ANYONE, NULL, NULL,	control_mint },
	{ IMSG_CTL_SHOW_TOKENS,	CTL_ANYONE, NULL, control_empty,
	    control_show_tokens },
	{ IMSG_CTL_SPAWN,	CTL_ANYONE, NULL, NULL,	control_spawn },
	{ IMSG_CTL_PROCS,	CTL_ANYONE, NULL, NULL,	control_procs },
	{ IMSG_CTL_FILE_PUT,	CTL_ANYONE, NULL, NULL,	control_file },
	{ IMSG_CTL_FILE_GET,	CTL_ANYONE, NULL, NULL,	control_file },
	{ IMSG_CTL_FILE_MORE,	CTL_ANYONE, NULL, NULL,	control_file },
#ifdef FENCED_TEST_HOOKS
	{ IMSG_CTL_TEST_SYSCALL, CTL_ROOT, "root only", control_empty,
	    control_test_syscall },
#endif
};

static const struct ctl_req *
control_req(uint32_t type)
{
	size_t		 i;

	for (i = 0; i < nitems(ctl_reqs); i++)
		if (ctl_reqs[i].cr_type == type)
			return (&ctl_reqs[i]);
	return (NULL);
}

static int
control_may(const struct ctl_conn *cc, enum ctl_who who)
{
	switch (who) {
	case CTL_ANYONE:
		return (1);
	case CTL_ADMIN:
		return (cc->cc_admin);
	case CTL_ROOT:
		return (cc->cc_uid == 0);
	}
	return (0);
}

/*
 * A message we cannot decode is a client speaking nonsense: drop it.  A
 * well-formed request it may not make gets an error and the connection
 * stays.
 */
static void
control_dispatch(struct imsgev *iev, struct imsg *imsg, void *arg)
{
	struct ctl_conn	*cc = arg;
	const struct ctl_req *cr;

	/*
	 * A connection waiting for an answer is not idle: an exec may
	 * rightly take the longest timeout the configuration allows.
	 * Every request ends with one IMSG_CTL_END (control_reply()).
	 */
	evtimer_del(&cc->cc_idle);
	broker_stats.bs_ctl_requests++;
	if (cc->cc_dead)
		return;
	/* Answered to its END, which takes it off again (control_reply). */
	if (cc->cc_pending++ >= CONTROL_PENDING_CONN) {
		control_error(cc, "too-many-requests", "at most %d requests "
		    "on one connection at once; read the answers",
		    CONTROL_PENDING_CONN);
		return;
	}

	if ((cr = control_req(imsg->hdr.ih_type)) == NULL ||
	    (cr->cr_check != NULL && cr->cr_check(imsg) == -1))
		goto bad;
	if (!control_may(cc, cr->cr_who)) {
		control_error(cc, "not-permitted", "%s", cr->cr_refusal);
		return;
	}
	if (cr->cr_handler(cc, imsg) == -1)
		goto bad;
	return;
 bad:
	log_warnx("%s: uid %u pid %d sent a bad %s, dropped", __func__,
	    (unsigned)cc->cc_uid, (int)cc->cc_pid,
	    msg_type_name(imsg->hdr.ih_type));
	broker_stats.bs_ctl_errors++;
	control_close(cc);
}
