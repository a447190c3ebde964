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

#include "fenced.h"
#include "imsg.h"
#include "log.h"
#include "msg.h"
#include "broker.h"

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
static void	control_close(struct ctl_conn *);
static int	control_is_admin(int, uid_t, gid_t);
static void	control_reply(struct ctl_conn *, uint32_t, const void *,
		    size_t);
static void	control_error(struct ctl_conn *, const char *, const char *,
		    ...) __attribute__((format(printf, 3, 4)));
static void	control_fence(struct ctl_conn *, struct msg_fence *);
static void	control_relay_error(struct ctl_conn *, struct imsg *);
static void	control_relay_result(struct ctl_conn *, struct imsg *);
static void	control_relay_identity(struct ctl_conn *, struct imsg *);
static void	control_require(struct ctl_conn *, const struct msg_fence *,
		    int);
static void	control_require_done(void *, const char *,
		    const struct probe_result *);
static void	control_probe_done(void *, const char *,
		    const struct probe_result *);
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
	breq_orphan(cc);
	token_orphan(cc);
	probe_orphan(cc);
	TAILQ_REMOVE(&ctl_conns, cc, cc_entry);
	ctl_nconns--;
	evtimer_del(&cc->cc_idle);
	evtimer_del(&cc->cc_stall);
	evtimer_del(&cc->cc_kill);
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
	st.st_fences = bfence_running();
	st.st_verbose = log_getverbose();
	if (msg_stats_encode(&st, &buf, &len) == -1) {
		control_error(cc, "internal", "cannot encode statistics");
		return;
	}
	control_reply(cc, IMSG_CTL_STATS, buf, len);
	free(buf);
	control_reply(cc, IMSG_CTL_END, NULL, 0);
}

/* Pass on what the fencer or an agent answered. */
static void
control_answer(struct breq *r, uint32_t type, struct imsg *imsg)
{
	struct ctl_conn	*cc = r->r_arg;
	struct msg_fence info;

	switch (type) {
	case IMSG_FENCE_BOOTED:
		/* Nothing runs in a fence before it earned what was asked. */
		if (r->r_want != 0) {
			if (msg_fence_decode(imsg->data, imsg->len, &info) ==
			    -1)
				fatalx("%s: bad fence", __func__);
			control_require(cc, &info, r->r_want);
			explicit_bzero(&info, sizeof(info));
			break;
		}
		/* FALLTHROUGH */
	case IMSG_FENCE_STOPPED:
	case IMSG_FENCE_INFO:
		/* Re-encoded without the bearer, which stays here. */
		if (msg_fence_decode(imsg->data, imsg->len, &info) == -1)
			fatalx("%s: bad fence", __func__);
		control_fence(cc, &info);
		explicit_bzero(&info, sizeof(info));
		if (type != IMSG_FENCE_INFO && r->r_key[0] != '\0')
			control_reply(cc, IMSG_CTL_END, NULL, 0);
		break;
	case IMSG_FENCE_FAILED:
	case IMSG_AGENT_ERROR:
		control_relay_error(cc, imsg);
		break;
	case IMSG_FENCE_END:
		control_reply(cc, IMSG_CTL_END, NULL, 0);
		break;
	case IMSG_AGENT_RESULT:
		control_relay_result(cc, imsg);
		break;
	case IMSG_AGENT_GIT_IDENTITY:
		control_relay_identity(cc, imsg);
		break;
	default:
		log_warnx("%s: unexpected %s", __func__, msg_type_name(type));
		control_error(cc, "internal", "unexpected answer");
		break;
	}
}

static void
control_fence(struct ctl_conn *cc, struct msg_fence *info)
{
	void		*buf;
	size_t		 len;

	explicit_bzero(info->f_bearer, sizeof(info->f_bearer));
	if (msg_fence_encode(info, &buf, &len) == -1) {
		log_warn("%s: encode", __func__);
		return;
	}
	control_reply(cc, IMSG_CTL_FENCE, buf, len);
	free(buf);
}

static void
control_relay_error(struct ctl_conn *cc, struct imsg *imsg)
{
	struct msg_error e;

	if (msg_error_decode(imsg->data, imsg->len, &e) == -1) {
		control_error(cc, "internal", "a malformed error came back");
		return;
	}
	control_error(cc, e.e_code, "%s", e.e_message);
}

/* An agent's result, checked whole before it goes anywhere. */
static void
control_relay_result(struct ctl_conn *cc, struct imsg *imsg)
{
	struct msg_result rs;

	if (msg_result_decode(imsg->data, imsg->len, &rs) == -1) {
		control_error(cc, "agent-error", "the agent's answer was "
		    "malformed");
		return;
	}
	msg_result_free(&rs);
	control_reply(cc, IMSG_CTL_RESULT, imsg->data, imsg->len);
	control_reply(cc, IMSG_CTL_END, NULL, 0);
}

static void
control_relay_identity(struct ctl_conn *cc, struct imsg *imsg)
{
	struct msg_gitconfig g;
	void		*buf;
	size_t		 len;

	if (msg_gitconfig_decode(imsg->data, imsg->len, &g) == -1) {
		control_error(cc, "agent-error", "the agent's answer was "
		    "malformed");
		return;
	}
	explicit_bzero(g.g_bearer, sizeof(g.g_bearer));
	if (msg_gitconfig_encode(&g, &buf, &len) == -1) {
		control_error(cc, "internal", "cannot encode identity");
		return;
	}
	control_reply(cc, IMSG_CTL_GIT_IDENTITY, buf, len);
	free(buf);
	control_reply(cc, IMSG_CTL_END, NULL, 0);
}

/*
 * The owner a request names: none named (a plain KEY) is the asker's
 * own fence; root and the admin group may name another's (USER/KEY).
 */
static uid_t
control_owner(struct ctl_conn *cc, uid_t named)
{
	return (named == MSG_OWNER_NONE ? cc->cc_uid : named);
}

/*
 * Owner's fence KEY if the connection may act on it; else an error is
 * sent and NULL returned.  Another user's fence is "not-found", as a
 * fence that does not exist: whether it exists is not theirs to know.
 */
static struct bfence *
control_fence_for(struct ctl_conn *cc, uid_t named, const char *key)
{
	struct bfence	*bf;
	uid_t		 owner = control_owner(cc, named);

	if ((owner != cc->cc_uid && !cc->cc_admin) ||
	    (bf = bfence_find(owner, key)) == NULL) {
		if (owner == cc->cc_uid)
			control_error(cc, "not-found", "no fence %s", key);
		else
			control_error(cc, "not-found", "no fence %u/%s",
			    (unsigned)owner, key);
		return (NULL);
	}
	return (bf);
}

/*
 * Room for one more request to the fencer or an agent from this user?
 * Else the error is sent and -1 returned.
 */
static int
control_room(struct ctl_conn *cc)
{
	if (cc->cc_uid != 0 &&
	    breq_pending(cc->cc_uid) >= CONTROL_PENDING_USER) {
		control_error(cc, "too-many-requests", "at most %d requests "
		    "of one user at once", CONTROL_PENDING_USER);
		return (-1);
	}
	if (breq_total() >= CONTROL_PENDING_ALL) {
		control_error(cc, "busy", "the daemon has %d requests in "
		    "hand; try again in a moment", CONTROL_PENDING_ALL);
		return (-1);
	}
	return (0);
}

/* Send one request to a fence's agent, answered to this connection. */
static void
control_to_agent(struct ctl_conn *cc, struct bfence *bf, uint32_t type,
    const void *buf, size_t len)
{
	struct breq	*r;

	if (control_room(cc) == -1)
		return;
	if ((r = breq_new(BREQ_AGENT, bf->bf_info.f_owner, bf->bf_info.f_key,
	    control_answer, cc)) == NULL)
		fatal("%s: calloc", __func__);
	breq_owner(r, cc->cc_uid, type == IMSG_AGENT_EXEC);
	if (fences_to_agent(bf, r, type, buf, len) == -1) {
		breq_done(r);
		control_error(cc, "fence-stopped", "fence %s has no agent",
		    bf->bf_info.f_key);
	}
}

/*
 * A boot with `require': the answer waits for the first probe.  Below
 * what was asked, the fence is stopped and the boot fails with every
 * violation the prober named.
 */
static void
control_require(struct ctl_conn *cc, const struct msg_fence *info, int want)
{
	struct bfence	*bf;

	if ((bf = bfence_find(info->f_owner, info->f_key)) == NULL) {
		control_error(cc, "boot-failed", "fence %s is gone",
		    info->f_key);
		return;
	}
	if (probe_start(bf, control_require_done, cc, want, 0) == -1) {
		fences_stop(info->f_owner, info->f_key);
		control_error(cc, "require-not-met", "fence %s: cannot "
		    "measure it, so it cannot promise %s", info->f_key,
		    tier_name(want));
	}
}

static void
control_require_done(void *arg, const char *key, const struct probe_result *pr)
{
	struct ctl_conn	*cc = arg;
	struct bfence	*bf;
	char		 why[MSG_ERROR_TEXT_MAX];

	if (pr->pr_error == NULL &&
	    level_satisfies(pr->pr_level, level_of_tier(pr->pr_want)) &&
	    (bf = bfence_find(pr->pr_owner, key)) != NULL) {
		struct msg_fence info = bf->bf_info;

		control_fence(cc, &info);
		control_reply(cc, IMSG_CTL_END, NULL, 0);
		return;
	}
	fences_stop(pr->pr_owner, key);
	if (pr->pr_error != NULL)
		control_error(cc, "require-not-met", "fence %s was stopped: "
		    "%s: %s", key, pr->pr_error, pr->pr_message);
	else {
		probe_violations(pr->pr_json, why, sizeof(why));
		control_error(cc, "require-not-met", "fence %s measured %s, "
		    "required %s; stopped: %s", key, level_name(pr->pr_level),
		    tier_name(pr->pr_want), why);
	}
}

static void
control_probe_done(void *arg, const char *key, const struct probe_result *pr)
{
	struct ctl_conn	*cc = arg;
	struct msg_verdict v;
	void		*buf;
	size_t		 len;

	if (pr->pr_error != NULL) {
		control_error(cc, pr->pr_error, "%s", pr->pr_message);
		return;
	}
	memset(&v, 0, sizeof(v));
	strlcpy(v.v_key, key, sizeof(v.v_key));
	v.v_level = pr->pr_level;
	v.v_json = (char *)pr->pr_json;
	if (msg_verdict_encode(&v, &buf, &len) == -1) {
		control_error(cc, "internal", "cannot encode the verdict");
		return;
	}
	control_reply(cc, IMSG_CTL_VERDICT, buf, len);
	free(buf);
	control_reply(cc, IMSG_CTL_END, NULL, 0);
}

/*
 * Fence requests.  Who asks comes from the connection's credentials,
 * never from the message: the owner and admin fields a client sends are
 * overwritten.  Each handler returns -1 for a message it cannot decode.
 */
static int
control_boot(struct ctl_conn *cc, struct imsg *imsg)
{
	struct msg_boot	 b;
	struct breq	*r;
	void		*buf;
	size_t		 len;
	int		 want;

	if (msg_boot_decode(imsg->data, imsg->len, &b) == -1)
		return (-1);
	b.b_owner = cc->cc_uid;
	b.b_admin = cc->cc_admin;
	/* The fencer builds; whether it earned `require' is ours. */
	want = b.b_require;
	b.b_require = 0;
	if (control_room(cc) == -1)
		return (0);
	if ((r = breq_new(BREQ_FENCER, b.b_owner, b.b_key,
	    control_answer, cc)) == NULL ||
	    msg_boot_encode(&b, &buf, &len) == -1 ||
	    fences_to_fencer(r, IMSG_FENCE_BOOT, buf, len) == -1)
		fatal("%s: boot to fencer", __func__);
	breq_owner(r, cc->cc_uid, 0);
	r->r_want = want;
	explicit_bzero(buf, len);
	free(buf);
	return (0);
}

static int
control_probe(struct ctl_conn *cc, struct imsg *imsg)
{
	struct msg_fence_req q;
	struct bfence	*bf;

	if (msg_fence_req_decode(imsg->data, imsg->len, &q) == -1)
		return (-1);
	if ((bf = control_fence_for(cc, q.r_owner, q.r_key)) != NULL &&
	    probe_start(bf, control_probe_done, cc, 0, 1) == -1)
		control_error(cc, "internal", "cannot start a probe");
	return (0);
}

static int
control_list_one(void *arg, const struct msg_fence *f)
{
	struct ctl_conn	*cc = arg;
	struct msg_fence info = *f;

	control_fence(cc, &info);
	explicit_bzero(&info, sizeof(info));
	return (0);
}

/*
 * IMSG_CTL_STOP is passed on to the fencer; IMSG_CTL_LIST is answered
 * from the broker's state (stopped fences too, for a while), ending
 * with END.
 */
static int
control_stop_list(struct ctl_conn *cc, struct imsg *imsg)
{
	struct msg_fence_req q;
	struct breq	*r;
	void		*buf;
	size_t		 len;
	int		 list = imsg->hdr.ih_type == IMSG_CTL_LIST;

	if (msg_fence_req_decode(imsg->data, imsg->len, &q) == -1)
		return (-1);
	q.r_uid = cc->cc_uid;
	q.r_admin = cc->cc_admin;
	if (q.r_key[0] == '\0')
		q.r_owner = MSG_OWNER_NONE;	/* all it may see */
	else {
		q.r_owner = control_owner(cc, q.r_owner);
		if (q.r_owner != cc->cc_uid && !cc->cc_admin) {
			control_error(cc, "not-found", "no fence %u/%s",
			    (unsigned)q.r_owner, q.r_key);
			return (0);
		}
	}
	if (list) {
		fences_list(cc->cc_uid, cc->cc_admin, q.r_owner, q.r_key,
		    control_list_one, cc);
		control_reply(cc, IMSG_CTL_END, NULL, 0);
		return (0);
	}
	if (control_room(cc) == -1)
		return (0);
	if ((r = breq_new(BREQ_FENCER, q.r_owner, q.r_key, control_answer,
	    cc)) == NULL ||
	    msg_fence_req_encode(&q, &buf, &len) == -1 ||
	    fences_to_fencer(r, IMSG_FENCE_STOP, buf, len) == -1)
		fatal("%s: request to fencer", __func__);
	breq_owner(r, cc->cc_uid, 0);
	explicit_bzero(buf, len);
	free(buf);
	return (0);
}

static int
control_exec(struct ctl_conn *cc, struct imsg *imsg)
{
	struct msg_exec	 x;
	struct bfence	*bf;
	void		*buf = NULL;
	size_t		 len = 0;

	if (msg_exec_decode(imsg->data, imsg->len, &x) == -1)
		return (-1);
	if ((bf = control_fence_for(cc, x.x_owner, x.x_key)) != NULL &&
	    cc->cc_uid != 0 && breq_execs(cc->cc_uid) >=
	    broker_self.ps_conf.c_exec_inflight_user)
		control_error(cc, "too-many-execs", "at most %u commands of "
		    "one user run at once",
		    broker_self.ps_conf.c_exec_inflight_user);
	else if (bf != NULL) {
		memcpy(x.x_bearer, bf->bf_info.f_bearer, sizeof(x.x_bearer));
		if (msg_exec_encode(&x, &buf, &len) == -1) {
			buf = NULL;
			control_error(cc, "bad-request", "cannot encode the "
			    "command");
		} else
			control_to_agent(cc, bf, IMSG_AGENT_EXEC, buf, len);
	}
	explicit_bzero(x.x_bearer, sizeof(x.x_bearer));
	msg_exec_free(&x);
	if (buf != NULL) {
		explicit_bzero(buf, len);
		free(buf);
	}
	return (0);
}

static int
control_git_config(struct ctl_conn *cc, struct imsg *imsg)
{
	struct msg_gitconfig g;
	struct bfence	*bf;
	void		*buf;
	size_t		 len;

	if (msg_gitconfig_decode(imsg->data, imsg->len, &g) == -1)
		return (-1);
	if ((bf = control_fence_for(cc, g.g_owner, g.g_key)) == NULL)
		return (0);
	memcpy(g.g_bearer, bf->bf_info.f_bearer, sizeof(g.g_bearer));
	if (msg_gitconfig_encode(&g, &buf, &len) == -1)
		fatal("%s: encode", __func__);
	explicit_bzero(&g, sizeof(g));
	control_to_agent(cc, bf, IMSG_AGENT_GIT_CONFIG, buf, len);
	explicit_bzero(buf, len);
	free(buf);
	return (0);
}

static int
control_git_init(struct ctl_conn *cc, struct imsg *imsg)
{
	struct msg_gitinit gi;
	struct bfence	*bf;
	void		*buf;
	size_t		 len;

	if (msg_gitinit_decode(imsg->data, imsg->len, &gi) == -1)
		return (-1);
	if ((bf = control_fence_for(cc, gi.gi_owner, gi.gi_key)) == NULL)
		return (0);
	memcpy(gi.gi_bearer, bf->bf_info.f_bearer, sizeof(gi.gi_bearer));
	if (msg_gitinit_encode(&gi, &buf, &len) == -1)
		fatal("%s: encode", __func__);
	explicit_bzero(&gi, sizeof(gi));
	control_to_agent(cc, bf, IMSG_AGENT_GIT_INIT, buf, len);
	explicit_bzero(buf, len);
	free(buf);
	return (0);
}

/* The new host token, once the parent stored its hash; or why not. */
static void
control_token(void *arg, const struct msg_hosttoken *ht, int error)
{
	struct ctl_conn	*cc = arg;
	void		*buf;
	size_t		 len;

	if (ht == NULL) {
		control_error(cc, "token-not-stored", "the host token could "
		    "not be stored: %s", strerror(error));
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


/* The caller's own token: whose comes from SO_PEERCRED. */
static int
control_mint(struct ctl_conn *cc, struct imsg *imsg)
{
	const char	*code, *why;
	uint32_t	 u;

	if (msg_u32_decode(imsg->data, imsg->len, &u, 0, 1) == -1)
		return (-1);
	if (token_mint(cc->cc_uid, u, control_token, cc, &code, &why) == -1)
		control_error(cc, code, "%s", why);
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

static int
control_reload(struct ctl_conn *cc, struct imsg *imsg)
{
	if (proc_compose(&broker_self, PROC_PARENT, IMSG_RELOAD, 0, -1, NULL,
	    0) == -1)
		fatal("%s: reload to parent", __func__);
	control_ok(cc);
	return (0);
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
	{ IMSG_CTL_GIT_CONFIG,	CTL_ANYONE, NULL, NULL,	control_git_config },
	{ IMSG_CTL_GIT_INIT,	CTL_ANYONE, NULL, NULL,	control_git_init },
	{ IMSG_CTL_TOKEN,	CTL_ANYONE, NULL, NULL,	control_mint },
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
