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
#include "control.h"

#define CONTROL_MAX_CONNS	512	/* all users together */
#define CONTROL_MAX_PER_UID	32
#define CONTROL_IDLE_SEC	60	/* a connection with nothing to say */
#define CONTROL_MAX_GROUPS	256

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
static int	control_is_admin(int, uid_t, gid_t);

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

void
control_close(struct ctl_conn *cc)
{
	inflight_orphan(cc);
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
void
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
void
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
	/* A request's answers end here: out now, in one write. */
	if (type == IMSG_CTL_END)
		imsgev_push(cc->cc_iev);
}

void
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

void
control_ok(struct ctl_conn *cc)
{
	control_reply(cc, IMSG_CTL_OK, NULL, 0);
	control_reply(cc, IMSG_CTL_END, NULL, 0);
}

void
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

/*
 * The parent reloads and answers (IMSG_RELOADED, control_reloaded):
 * fencectl hears whether the file was taken, and why not.  One reload
 * at a time per connection.
 */
int
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
	{ IMSG_CTL_SHOW_AUDIT,	CTL_ANYONE, NULL, NULL,	control_show_audit },
	{ IMSG_CTL_SPAWN,	CTL_ANYONE, NULL, NULL,	control_spawn },
	{ IMSG_CTL_PROCS,	CTL_ANYONE, NULL, NULL,	control_procs },
	{ IMSG_CTL_TERM_OPEN,	CTL_ANYONE, NULL, NULL,	control_term_open },
	{ IMSG_CTL_TERMS,	CTL_ANYONE, NULL, NULL,	control_terms },
	{ IMSG_CTL_PROC_INPUT,	CTL_ANYONE, NULL, NULL,	control_proc_input },
	{ IMSG_CTL_FILE_PUT,	CTL_ANYONE, NULL, NULL,	control_file },
	{ IMSG_CTL_FILE_GET,	CTL_ANYONE, NULL, NULL,	control_file },
	{ IMSG_CTL_FILE_MORE,	CTL_ANYONE, NULL, NULL,	control_file },
	{ IMSG_CTL_TUNNEL,	CTL_ANYONE, NULL, NULL,	control_tunnel },
	{ IMSG_CTL_PORTS,	CTL_ANYONE, NULL, NULL,	control_ports },
	{ IMSG_CTL_PORT_TICKET,	CTL_ANYONE, NULL, NULL,	control_port_ticket },
	{ IMSG_CTL_SNAP,	CTL_ANYONE, NULL, NULL,	control_snap },
	{ IMSG_CTL_METRICS,	CTL_ADMIN,
	    "metrics are for root and the admin group", control_empty,
	    control_metrics },
	{ IMSG_CTL_DOCTOR,	CTL_ANYONE, NULL, control_empty,
	    control_doctor },
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

