/*
 * The process framework.  The parent starts each child with
 * proc_exec(): fork, put the channel to the parent on fd 3 and execute
 * this same binary again, so every child begins with a fresh address
 * space and none of the parent's memory (OpenBSD's proc_exec).  The
 * child comes up in proc_main() and proc_run(), the one start-up of
 * every child, from what the child declares in its struct proc_self:
 * signals, jansson's seed and the process's own preparations while it
 * can still open files, lockdown(), then the channel to the parent and
 * the event loop.  Channels to other children arrive as IMSG_PEER_FD,
 * and only from a peer the process declares.
 */
#include <sys/types.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <err.h>
#include <errno.h>
#include <event.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "fenced.h"
#include "lockdown.h"
#include "log.h"
#include "msg.h"
#include "proc.h"

extern char **environ;

static enum fenced_proc proc_parse(const char *);
static const struct proc_peer *proc_peer(const struct proc_self *,
		    enum fenced_proc);
static void	proc_check(const struct proc_self *);
static void	proc_exit(int) __attribute__((noreturn));
static void	proc_closed(struct imsgev *, int, void *);
static void	proc_sig(int, short, void *);
static void	proc_signals(struct proc_self *);
static void	proc_connect_parent(struct proc_self *);
static void	proc_dispatch_parent(struct imsgev *, struct imsg *, void *);

/* The one proc_self of this process, for signal and close callbacks. */
static struct proc_self *proc_current;

static enum fenced_proc
proc_parse(const char *name)
{
	enum fenced_proc p;

	for (p = PROC_BROKER; p < PROC_MAX; p++)
		if (strcmp(name, proc_name(p)) == 0)
			return (p);
	return (PROC_PARENT);
}

pid_t
proc_exec(const char *self, enum fenced_proc p, int fd,
    const struct proc_args *pa)
{
	char	 uid[16], gid[16];
	char	*argv[16];
	int	 argc = 0;
	pid_t	 pid;

	snprintf(uid, sizeof(uid), "%u", (unsigned)pa->pa_uid);
	snprintf(gid, sizeof(gid), "%u", (unsigned)pa->pa_gid);
	argv[argc++] = "fenced";
	argv[argc++] = "-P";
	argv[argc++] = (char *)proc_name(p);
	argv[argc++] = "-U";
	argv[argc++] = uid;
	argv[argc++] = "-G";
	argv[argc++] = gid;
	argv[argc++] = "-S";
	argv[argc++] = (char *)pa->pa_state;
	if (pa->pa_id != NULL) {
		argv[argc++] = "-I";
		argv[argc++] = (char *)pa->pa_id;
	}
	if (pa->pa_debug)
		argv[argc++] = "-d";
	if (pa->pa_verbose)
		argv[argc++] = "-v";
	argv[argc] = NULL;

	switch (pid = fork()) {
	case -1:
		fatal("%s: fork", __func__);
	case 0:
		break;
	default:
		return (pid);
	}

	/* Child: only fds 0-2 and the channel survive the exec. */
	if (fd != FENCED_PARENT_FD) {
		if (dup2(fd, FENCED_PARENT_FD) == -1)
			fatal("%s: dup2", __func__);
	} else if (fcntl(fd, F_SETFD, 0) == -1)
		fatal("%s: fcntl", __func__);
	closefrom(FENCED_PARENT_FD + 1);
#ifdef FENCED_SANITIZE
	/*
	 * LeakSanitizer needs clone, ptrace and /proc at exit, which a
	 * locked-down child has none of (docs/lockdown.md).
	 */
	setenv("ASAN_OPTIONS", "detect_leaks=0", 1);
#endif
	execve(self, argv, environ);
	fatal("%s: execve %s", __func__, self);
}

static const struct proc_peer *
proc_peer(const struct proc_self *ps, enum fenced_proc p)
{
	size_t	 i;

	for (i = 0; i < ps->ps_npeers; i++)
		if (ps->ps_peers[i].pp_proc == p)
			return (&ps->ps_peers[i]);
	return (NULL);
}

/* Whether ps declares a channel to p: the parent asks, to wire them. */
int
proc_declares(const struct proc_self *ps, enum fenced_proc p)
{
	return (proc_peer(ps, p) != NULL);
}

/*
 * A declaration that cannot be right stops the process before it
 * starts: every child has the parent, no peer twice, none itself, and a
 * reader for every child peer.
 */
static void
proc_check(const struct proc_self *ps)
{
	const struct proc_peer *pp;
	size_t	 i, j;

	if (proc_peer(ps, PROC_PARENT) == NULL)
		fatalx("%s: %s declares no parent", __func__,
		    proc_name(ps->ps_proc));
	for (i = 0; i < ps->ps_npeers; i++) {
		pp = &ps->ps_peers[i];
		if (pp->pp_proc >= PROC_MAX || pp->pp_proc == ps->ps_proc ||
		    (pp->pp_proc != PROC_PARENT && pp->pp_dispatch == NULL))
			fatalx("%s: %s: bad peer %s", __func__,
			    proc_name(ps->ps_proc), proc_name(pp->pp_proc));
		for (j = 0; j < i; j++)
			if (ps->ps_peers[j].pp_proc == pp->pp_proc)
				fatalx("%s: %s declares %s twice", __func__,
				    proc_name(ps->ps_proc),
				    proc_name(pp->pp_proc));
	}
}

/* fenced -P NAME -U uid -G gid -S state [-I id] [-d] [-v]: never by hand. */
void
proc_main(int argc, char **argv, struct proc_self *const procs[PROC_MAX])
{
	struct proc_args pa;
	const char	*errstr;
	int		 ch;

	memset(&pa, 0, sizeof(pa));
	pa.pa_proc = proc_parse(argv[2]);
	if (pa.pa_proc == PROC_PARENT || procs[pa.pa_proc] == NULL)
		errx(1, "unknown process %s", argv[2]);
	optind = 3;
	while ((ch = getopt(argc, argv, "dG:I:S:U:v")) != -1) {
		switch (ch) {
		case 'd':
			pa.pa_debug = 1;
			break;
		case 'I':
			pa.pa_id = optarg;
			break;
		case 'G':
			pa.pa_gid = strtonum(optarg, 1, INT_MAX, &errstr);
			if (errstr != NULL)
				errx(1, "gid %s", errstr);
			break;
		case 'S':
			pa.pa_state = optarg;
			break;
		case 'U':
			pa.pa_uid = strtonum(optarg, 1, INT_MAX, &errstr);
			if (errstr != NULL)
				errx(1, "uid %s", errstr);
			break;
		case 'v':
			pa.pa_verbose++;
			break;
		default:
			errx(1, "bad child arguments");
		}
	}
	if (pa.pa_state == NULL || pa.pa_uid == 0 || pa.pa_gid == 0)
		errx(1, "missing child arguments");
	if (fcntl(FENCED_PARENT_FD, F_GETFD) == -1)
		errx(1, "no parent channel");

	log_init(pa.pa_debug, LOG_DAEMON);
	log_procinit(proc_name(pa.pa_proc));
	/* Children hear from clients: what they repeat is held back. */
	log_ratelimit(1);
	log_setverbose(pa.pa_verbose);

	proc_run(procs[pa.pa_proc], &pa);
}

/*
 * The start-up of every child.  Signals are set up before lockdown:
 * libevent opens its signal socket pair on first use, which the filters
 * do not allow afterwards; jansson seeds its hashes from /dev/urandom on
 * first use, which the chroot has not.  Then the process's own
 * preparations, lockdown(), its initialisation, and the loop.
 */
void
proc_run(struct proc_self *ps, const struct proc_args *pa)
{
	char		 root[PATH_MAX];
	struct lockdown	 ld;

	if (ps->ps_proc != pa->pa_proc)
		fatalx("%s: %s started as %s", __func__,
		    proc_name(ps->ps_proc), proc_name(pa->pa_proc));
	proc_check(ps);
	if ((ps->ps_evbase = event_init()) == NULL)
		fatalx("%s: event_init", __func__);
	proc_signals(ps);
	json_object_seed(0);
	if (ps->ps_prepare_cb != NULL)
		ps->ps_prepare_cb(pa);

	ld = ps->ps_lockdown;
	ld.ld_title = proc_name(ps->ps_proc);
	if (ps->ps_keep_root) {
		ld.ld_chroot = NULL;
		ld.ld_uid = (uid_t)-1;
		ld.ld_gid = (gid_t)-1;
	} else {
		if ((size_t)snprintf(root, sizeof(root), "%s/%s",
		    pa->pa_state, FENCED_EMPTY_DIR) >= sizeof(root))
			fatalx("%s: state path too long", __func__);
		ld.ld_chroot = root;
		ld.ld_uid = pa->pa_uid;
		ld.ld_gid = pa->pa_gid;
	}
	lockdown(&ld);

	if (ps->ps_init_cb != NULL)
		ps->ps_init_cb(pa);
	proc_connect_parent(ps);
	event_dispatch();
	proc_exit(0);
}

static void
proc_exit(int status)
{
	if (proc_current != NULL && proc_current->ps_shutdown_cb != NULL)
		proc_current->ps_shutdown_cb();
	exit(status);
}

static void
proc_closed(struct imsgev *iev, int error, void *arg)
{
	const struct proc_peer *pp = arg;

	/* Losing any peer means the daemon is going down: follow it. */
	if (error) {
		log_warnx("channel to %s: %s", proc_name(pp->pp_proc),
		    strerror(error));
		proc_exit(1);
	}
	log_debug("channel to %s closed", proc_name(pp->pp_proc));
	proc_exit(0);
}

static void
proc_sig(int sig, short event, void *arg)
{
	switch (sig) {
	case SIGTERM:
	case SIGINT:
		log_debug("exiting on signal %d", sig);
		proc_exit(0);
	default:
		break;
	}
}

static void
proc_signals(struct proc_self *ps)
{
	static struct event ev[4];
	static const int sigs[4] = { SIGTERM, SIGINT, SIGHUP, SIGPIPE };
	size_t		 i;

	proc_current = ps;
	for (i = 0; i < 4; i++) {
		evsignal_assign(&ev[i], ps->ps_evbase, sigs[i], proc_sig, ps);
		evsignal_add(&ev[i], NULL);
	}
}

static void
proc_connect_parent(struct proc_self *ps)
{
	proc_current = ps;
	if ((ps->ps_iev[PROC_PARENT] = imsgev_new(ps->ps_evbase,
	    FENCED_PARENT_FD, proc_dispatch_parent, proc_closed,
	    (void *)proc_peer(ps, PROC_PARENT))) == NULL)
		fatal("%s: imsgev_new", __func__);
}

int
proc_compose(struct proc_self *ps, enum fenced_proc p, uint32_t type,
    uint32_t peerid, int fd, const void *buf, size_t len)
{
	if (p >= PROC_MAX || ps->ps_iev[p] == NULL) {
		if (fd != -1)
			close(fd);
		errno = ENOTCONN;
		return (-1);
	}
	if (imsgev_compose(ps->ps_iev[p], type, peerid, 0, fd, buf,
	    len) == -1) {
		/*
		 * A message between our own processes is never dropped: a
		 * peer that let IMSG_QUEUE_MAX pile up is stuck or broken
		 * (docs/architecture.md), and we stop rather than lose one.
		 */
		if (errno == ENOBUFS)
			fatalx("%s: queue to %s full, cannot send %s",
			    __func__, proc_name(p), msg_type_name(type));
		return (-1);
	}
	return (0);
}

/*
 * What the parent tells every child; the rest goes to the reader the
 * process declared for its parent.  A malformed message, or one no
 * reader takes, is fatal.
 */
static void
proc_dispatch_parent(struct imsgev *iev, struct imsg *imsg, void *arg)
{
	struct proc_self *ps = proc_current;
	const struct proc_peer *parent = arg, *pp;
	uint32_t	 u;
	int32_t		 v;

	switch (imsg->hdr.ih_type) {
	case IMSG_CONFIG:
		if (msg_config_decode(imsg->data, imsg->len,
		    &ps->ps_conf) == -1)
			fatalx("%s: bad configuration", __func__);
		ps->ps_configured = 1;
		log_setverbose(ps->ps_conf.c_verbose);
		if (ps->ps_config_cb != NULL)
			ps->ps_config_cb();
		break;
	case IMSG_PEER_FD:
		if (msg_u32_decode(imsg->data, imsg->len, &u, PROC_BROKER,
		    PROC_MAX - 1) == -1 || u == ps->ps_proc || imsg->fd == -1)
			fatalx("%s: bad channel", __func__);
		if ((pp = proc_peer(ps, u)) == NULL || ps->ps_iev[u] != NULL)
			fatalx("%s: unexpected channel to %s", __func__,
			    proc_name(u));
		if ((ps->ps_iev[u] = imsgev_new(ps->ps_evbase, imsg->fd,
		    pp->pp_dispatch, proc_closed, (void *)pp)) == NULL)
			fatal("%s: imsgev_new", __func__);
		imsg->fd = -1;
		break;
	case IMSG_LOG_LEVEL:
		if (msg_i32_decode(imsg->data, imsg->len, &v, 0, 3) == -1)
			fatalx("%s: bad log level", __func__);
		log_setverbose(v);
		ps->ps_conf.c_verbose = v;
		break;
	case IMSG_START:
		if (msg_empty_decode(imsg->data, imsg->len) == -1 ||
		    !ps->ps_configured || ps->ps_started)
			fatalx("%s: unexpected start", __func__);
		ps->ps_started = 1;
		if (ps->ps_start_cb != NULL)
			ps->ps_start_cb();
		break;
	default:
		if (parent->pp_dispatch == NULL)
			fatalx("%s: unexpected %s", __func__,
			    msg_type_name(imsg->hdr.ih_type));
		parent->pp_dispatch(iev, imsg, arg);
		break;
	}
}

/*
 * A process whose descriptors grow with the fences (the broker: a
 * channel each; the fencer: a pidfd each) takes its hard limit of
 * them while it can still raise its soft one: after lockdown
 * getrlimit() is all there is.  The default soft limit of 1024 would
 * stop a daemon short of a thousand fences.
 */
void
proc_nofile_raise(void)
{
	struct rlimit	 rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == -1) {
		log_warn("%s: getrlimit", __func__);
		return;
	}
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) == -1)
			log_warn("%s: setrlimit", __func__);
	}
}
