/*
 * Starting children: fork, put the channel to the parent on fd 3 and
 * execute this same binary again, so every child begins with a fresh
 * address space and none of the parent's memory (OpenBSD's proc_exec).
 */
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <event.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fenced.h"
#include "log.h"
#include "msg.h"
#include "proc.h"

extern char **environ;

enum fenced_proc
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

/* The one proc_self of this process, for signal and close callbacks. */
static struct proc_self *proc_current;

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
	struct proc_peer *pp = arg;

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

/*
 * Signals are set up before lockdown: libevent opens its signal socket
 * pair on first use, which the filters do not allow afterwards.
 */
void
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

void
proc_connect_parent(struct proc_self *ps)
{
	struct proc_peer *pp = &ps->ps_peers[PROC_PARENT];

	proc_current = ps;
	pp->pp_proc = PROC_PARENT;
	if ((pp->pp_iev = imsgev_new(ps->ps_evbase, FENCED_PARENT_FD,
	    pp->pp_dispatch, proc_closed, pp)) == NULL)
		fatal("%s: imsgev_new", __func__);
}

int
proc_compose(struct proc_self *ps, enum fenced_proc p, uint32_t type,
    uint32_t peerid, int fd, const void *buf, size_t len)
{
	if (p >= PROC_MAX || ps->ps_peers[p].pp_iev == NULL) {
		if (fd != -1)
			close(fd);
		errno = ENOTCONN;
		return (-1);
	}
	if (imsgev_compose(ps->ps_peers[p].pp_iev, type, peerid, 0, fd,
	    buf, len) == -1) {
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
 * What the parent tells every child.  Returns 1 when handled, 0 when
 * the message is not one of these; a malformed one is fatal.
 */
int
proc_dispatch_parent(struct proc_self *ps, struct imsg *imsg)
{
	struct proc_peer *pp;
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
		return (1);
	case IMSG_PEER_FD:
		if (msg_u32_decode(imsg->data, imsg->len, &u, PROC_BROKER,
		    PROC_MAX - 1) == -1 || u == ps->ps_proc || imsg->fd == -1)
			fatalx("%s: bad channel", __func__);
		pp = &ps->ps_peers[u];
		if (pp->pp_iev != NULL || pp->pp_dispatch == NULL)
			fatalx("%s: unexpected channel to %s", __func__,
			    proc_name(u));
		pp->pp_proc = u;
		if ((pp->pp_iev = imsgev_new(ps->ps_evbase, imsg->fd,
		    pp->pp_dispatch, proc_closed, pp)) == NULL)
			fatal("%s: imsgev_new", __func__);
		imsg->fd = -1;
		return (1);
	case IMSG_LOG_VERBOSE:
		if (msg_i32_decode(imsg->data, imsg->len, &v, 0, 3) == -1)
			fatalx("%s: bad log level", __func__);
		log_setverbose(v);
		ps->ps_conf.c_verbose = v;
		return (1);
	case IMSG_START:
		if (msg_empty_decode(imsg->data, imsg->len) == -1 ||
		    !ps->ps_configured || ps->ps_started)
			fatalx("%s: unexpected start", __func__);
		ps->ps_started = 1;
		if (ps->ps_start_cb != NULL)
			ps->ps_start_cb();
		return (1);
	default:
		return (0);
	}
}
