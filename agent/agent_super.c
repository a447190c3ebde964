/*
 * The supervisor: one process per job, forked from the agent, and the
 * command it forks in turn.
 *
 * It makes itself a child subreaper, so every process the command
 * starts (a double fork, a setsid, a daemon) is its descendant or, once
 * orphaned, its child; never the agent's.  When the command exits, or
 * the agent asks (end of file on the control socket: a timeout, the
 * budget, or the agent itself gone), it SIGKILLs every descendant it
 * finds in /proc, reaps, and repeats until it has no child left.  Then
 * it reports how the command ended and exits.
 *
 * It never returns into the agent's code and never touches its event
 * loop: it only inherited them.
 */
#include <sys/types.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fenced.h"
#include "msg.h"
#include "agent.h"

/* Where the supervisor keeps its descriptors. */
#define SUPER_CTL	3
#define SUPER_IN	4
#define SUPER_OUT	5
#define SUPER_ERR	6
#define CHILD_EXECERR	3	/* the command's exec failure, if any */

#define SUPER_ARGV_MAX	8	/* git init and its path */

static void	agent_super_prepare(int, int, int, int);
__attribute__((noreturn))
static void	agent_super_serve(void);
static void	agent_super_run(const struct agent_spawn *,
		    struct agent_report *);
static void	agent_super_next(void);
static int	agent_super_read(void *, size_t);
static const char *agent_super_string(const char *, const char *);
static pid_t	agent_super_spawn(const struct agent_spawn *, char *const *, int);
static void	agent_super_fds(int, int, int, int);
static void	agent_super_signals(void);
static void	agent_super_noop(int);
static int	agent_path_inside(const char *, const char *);
static int	agent_super_chdir(const struct agent_spawn *, char *, size_t);
static int	agent_super_tail_ok(const char *);
static char *const *agent_super_argv(const struct agent_spawn *, char *,
		    char **);
static int	agent_super_wait(pid_t, struct agent_report *);
static int	agent_super_signal(pid_t);
static void	agent_super_end(pid_t, int, struct agent_report *);
static void	agent_super_report(const struct agent_report *);
__attribute__((noreturn))
static void	agent_super_fail(const struct agent_report *);
__attribute__((noreturn))
static void	agent_child(const struct agent_spawn *, char *const *, int);
static int	agent_child_exec(const struct agent_spawn *, char *const *);
__attribute__((noreturn))
static void	agent_child_fail(int, int);

/*
 * What every supervisor does first, before it knows its job: forget the
 * bearer, its four descriptors at 3..6 and nothing else, its own signal
 * dispositions, and the subreaper.
 */
static void
agent_super_prepare(int ctl, int in, int out, int err)
{
	struct agent_report rp;

	agent_secrets_wipe();
	agent_super_fds(ctl, in, out, err);
	agent_super_signals();
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == -1 &&
	    !(errno == EINVAL && agent_env->a_orphans_ours)) {
		memset(&rp, 0, sizeof(rp));
		rp.rp_stage = STAGE_SETUP;
		rp.rp_errno = errno;
		agent_super_fail(&rp);
	}
}

/*
 * A supervisor forked for its job, which it has in memory.  Once it
 * reported, it may be asked to be the next spare (agent_super_next()).
 */
__attribute__((noreturn)) void
agent_super(const struct agent_spawn *sp, int ctl, int in, int out, int err)
{
	struct agent_report rp;

	agent_super_prepare(ctl, in, out, err);
	agent_super_run(sp, &rp);
	agent_super_report(&rp);
	agent_super_next();
	agent_super_serve();
}

/*
 * A spare supervisor (agent_job.c): prepared ahead, it waits for its
 * job on the control socket.
 */
__attribute__((noreturn)) void
agent_super_spare(int ctl, int in, int out, int err)
{
	agent_super_prepare(ctl, in, out, err);
	agent_super_serve();
}

/*
 * A spare's life: a job read on the control socket, run, reported; and
 * when the agent wants us again (the job was its only one:
 * docs/agent.md, "The spare supervisor"), fresh pipes and the next job.
 * End of file on the socket (the agent gone, or the spare no longer
 * wanted) ends us.  The job is the agent's word, but checked as any
 * input: bounded, every string terminated inside the buffer, the
 * counts as they say.
 */
__attribute__((noreturn)) static void
agent_super_serve(void)
{
	static uint8_t	 buf[AGENT_SPEC_MAX];
	static char	*argv[AGENT_SPEC_ARGV_MAX + 1];
	struct agent_spawn sp;
	struct agent_report rp;
	uint32_t	 len, argc, i;
	const char	*p, *end;

	for (;;) {
		if (agent_super_read(&len, sizeof(len)) == -1 ||
		    len < AGENT_SPEC_HEAD || len > sizeof(buf) ||
		    agent_super_read(buf, len) == -1)
			_exit(0);
		memset(&sp, 0, sizeof(sp));
		sp.sp_create = buf[0] != 0;
		memcpy(&argc, buf + 4, sizeof(argc));
		if (argc == 0 || argc > AGENT_SPEC_ARGV_MAX)
			_exit(3);
		p = (const char *)buf + AGENT_SPEC_HEAD;
		end = (const char *)buf + len;
		if (buf[1] != 0) {
			sp.sp_path = p;
			p = agent_super_string(p, end);
		}
		sp.sp_cwd = p;
		p = agent_super_string(p, end);
		for (i = 0; i < argc; i++) {
			argv[i] = (char *)p;
			p = agent_super_string(p, end);
		}
		if (p != end)
			_exit(3);
		argv[argc] = NULL;
		sp.sp_argv = argv;
		agent_super_run(&sp, &rp);
		agent_super_report(&rp);
		agent_super_next();
	}
}

/*
 * After a report: the agent either wants us as its next spare and
 * sends the three pipes of the next job (the command's ends) on the
 * control socket, or ends us (SIGKILL, or end of file).  Every process
 * of the job before is dead and reaped (agent_super_end() waited for
 * ECHILD), none of its descriptors is left (we closed our ends of its
 * pipes when it started, and its exec-error pipe before we reported),
 * and nothing of it could reach our memory (a vforked child runs only
 * our code up to its execve).  What it could change in us from outside
 * (limits, priority, scheduling), the agent compares with its own
 * before it asks (agent_spare_same()).
 */
static void
agent_super_next(void)
{
	union {
		struct cmsghdr	 hdr;
		char		 buf[CMSG_SPACE(3 * sizeof(int))];
	} cm;
	struct msghdr	 msg;
	struct cmsghdr	*c;
	struct iovec	 iov;
	int		 fd[3], i, n = 0;
	char		 b;
	ssize_t		 r;

	iov.iov_base = &b;
	iov.iov_len = 1;
	memset(&msg, 0, sizeof(msg));
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cm.buf;
	msg.msg_controllen = sizeof(cm.buf);
	do {
		r = recvmsg(SUPER_CTL, &msg, MSG_CMSG_CLOEXEC);
	} while (r == -1 && errno == EINTR);
	for (c = r > 0 ? CMSG_FIRSTHDR(&msg) : NULL; c != NULL;
	    c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		if (n > 3)
			_exit(0);	/* we exit: they close with us */
		memcpy(fd, CMSG_DATA(c), n * sizeof(int));
	}
	if (r != 1 || n != 3 || (msg.msg_flags & MSG_CTRUNC))
		_exit(0);
	/* At 4..6; they come as the lowest free numbers, which those are. */
	if (fd[0] != SUPER_IN || fd[1] != SUPER_OUT || fd[2] != SUPER_ERR) {
		for (i = 0; i < 3; i++)
			if ((fd[i] = fcntl(fd[i], F_DUPFD_CLOEXEC,
			    SUPER_ERR + 1)) == -1)
				_exit(2);
		for (i = 0; i < 3; i++)
			if (dup3(fd[i], SUPER_IN + i, O_CLOEXEC) == -1)
				_exit(2);
	}
	closefrom(SUPER_ERR + 1);
}

/* Past the string at p, which must end before end. */
static const char *
agent_super_string(const char *p, const char *end)
{
	const char	*nul;

	if (p >= end || (nul = memchr(p, '\0', end - p)) == NULL)
		_exit(3);
	return (nul + 1);
}

/* Exactly len bytes from the control socket; -1 at its end. */
static int
agent_super_read(void *b, size_t len)
{
	uint8_t	*p = b;
	ssize_t	 n;

	while (len > 0) {
		if ((n = read(SUPER_CTL, p, len)) == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			return (-1);
		p += n;
		len -= n;
	}
	return (0);
}

/*
 * The job itself: its directory, the command, the wait, the kill; how
 * it went into rp.  Our ends of its pipes are closed when we return.
 */
static void
agent_super_run(const struct agent_spawn *sp, struct agent_report *rp)
{
	char		 tail[PATH_MAX];
	char		*argv[SUPER_ARGV_MAX];
	char *const	*av = sp->sp_argv;
	pid_t		 pid;
	int		 ep[2], reaped;

	memset(rp, 0, sizeof(*rp));
	if (agent_super_chdir(sp, tail, sizeof(tail)) == -1) {
		rp->rp_stage = STAGE_CWD;
		rp->rp_errno = errno;
		goto out;
	}
	if (tail[0] != '\0')
		av = agent_super_argv(sp, tail, argv);
	/* 0..6 are taken: the pipe lands above the command's 0..3. */
	if (pipe2(ep, O_CLOEXEC) == -1)
		goto setup;
	if ((pid = agent_super_spawn(sp, av, ep[1])) == -1) {
		close(ep[0]);
		close(ep[1]);
		goto setup;
	}
	close(ep[1]);
	close(SUPER_IN);
	close(SUPER_OUT);
	close(SUPER_ERR);

	reaped = agent_super_wait(pid, rp) == 0;
	if (!reaped)
		rp->rp_status = -1;
	agent_super_end(pid, reaped, rp);
	/* Written before the command exited, if it could not start. */
	if (read(ep[0], &rp->rp_errno, sizeof(rp->rp_errno)) ==
	    sizeof(rp->rp_errno))
		rp->rp_stage = STAGE_EXEC;
	close(ep[0]);
	return;
 setup:
	rp->rp_stage = STAGE_SETUP;
	rp->rp_errno = errno;
 out:
	close(SUPER_IN);
	close(SUPER_OUT);
	close(SUPER_ERR);
}

/*
 * The command, by vfork: it shares our memory until its exec, which
 * saves a copy of the address space per command (under gVisor's ptrace
 * platform a new stub address space, most of what an exec cost: bench/
 * runsc.sh).  The child only makes system calls on its own descriptors,
 * mask, session and dispositions (copies of ours, not ours) and never
 * returns from here: it execs or _exits.
 */
static pid_t
agent_super_spawn(const struct agent_spawn *sp, char *const *av, int ep)
{
	pid_t	 pid;

	if ((pid = vfork()) == 0)
		agent_child(sp, av, ep);
	return (pid);
}

/*
 * Our four descriptors at 3..6, nothing else but 0..2 (the agent's,
 * replaced in the command).  Each is first copied above 6, so none is
 * overwritten before it is copied.
 */
static void
agent_super_fds(int ctl, int in, int out, int err)
{
	int	 src[4] = { ctl, in, out, err }, tmp[4], i;

	/*
	 * Above 3..6, not higher: a fence at its pids ceiling has 64
	 * descriptors (docs/limits.md), and a dup at 64 or more failed.
	 */
	for (i = 0; i < 4; i++)
		if ((tmp[i] = fcntl(src[i], F_DUPFD_CLOEXEC, SUPER_ERR + 1)) ==
		    -1)
			_exit(2);
	for (i = 0; i < 4; i++)
		if (dup3(tmp[i], SUPER_CTL + i, O_CLOEXEC) == -1)
			_exit(2);
	closefrom(SUPER_ERR + 1);
}

/*
 * The agent's dispositions are not ours: libevent's SIGCHLD handler
 * would write into the agent's event loop.  SIGCHLD stays blocked
 * except while we wait in ppoll(), where its no-op handler ends the
 * wait.  Every other disposition is the agent's, which put them all
 * to their defaults when it started but SIGPIPE, ignored
 * (agent_setup_process()): so the command's child has only SIGCHLD and
 * SIGPIPE to put back (agent_child()), two calls where it made one for
 * each of the 64 signals on the path of every command.
 */
static void
agent_super_signals(void)
{
	struct sigaction sa;
	sigset_t	 set;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = agent_super_noop;
	sigemptyset(&sa.sa_mask);
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &set, NULL) == -1 ||
	    sigaction(SIGCHLD, &sa, NULL) == -1)
		_exit(2);
}

static void
agent_super_noop(int sig)
{
}

/* path is HOME or below it; both are resolved. */
static int
agent_path_inside(const char *home, const char *path)
{
	size_t	 len = strlen(home);

	if (strcmp(home, "/") == 0)
		return (path[0] == '/');
	return (strncmp(path, home, len) == 0 &&
	    (path[len] == '\0' || path[len] == '/'));
}

/*
 * Change into the job's directory: HOME, or a path relative to it, or
 * an absolute one, which after following every symlink and ".." must
 * still be HOME or below it (EXDEV if not).  The check is repeated on
 * the directory we actually ended up in, so a symlink swapped between
 * realpath() and chdir() cannot take us out.  The command inherits this
 * directory.
 *
 * For git init (sp_create) the path may not exist yet: we stop at its
 * deepest existing ancestor, and the rest, with no "." or ".." in it,
 * goes into tail for git to create.
 */
static int
agent_super_chdir(const struct agent_spawn *sp, char *tail, size_t tailsz)
{
	const char	*home = agent_env->a_home;
	char		 want[PATH_MAX], real[PATH_MAX], cwd[PATH_MAX];
	char		*slash;

	tail[0] = '\0';
	if (sp->sp_cwd[0] == '\0')
		strlcpy(want, home, sizeof(want));
	else if (sp->sp_cwd[0] == '/')
		strlcpy(want, sp->sp_cwd, sizeof(want));
	else if ((size_t)snprintf(want, sizeof(want), "%s/%s",
	    agent_env->a_hello.h_home, sp->sp_cwd) >= sizeof(want)) {
		errno = ENAMETOOLONG;
		return (-1);
	}
	while (realpath(want, real) == NULL) {
		if (!sp->sp_create || errno != ENOENT ||
		    (slash = strrchr(want, '/')) == NULL || slash == want)
			return (-1);
		/* Move the last component of want to the front of tail. */
		if (snprintf(cwd, sizeof(cwd), "%s%s%s", slash + 1,
		    tail[0] ? "/" : "", tail) >= (int)sizeof(cwd) ||
		    strlcpy(tail, cwd, tailsz) >= tailsz) {
			errno = ENAMETOOLONG;
			return (-1);
		}
		*slash = '\0';
	}
	if (!agent_super_tail_ok(tail)) {
		errno = EINVAL;
		return (-1);
	}
	if (!agent_path_inside(home, real)) {
		errno = EXDEV;
		return (-1);
	}
	if (chdir(real) == -1 || getcwd(cwd, sizeof(cwd)) == NULL)
		return (-1);
	if (!agent_path_inside(home, cwd)) {
		errno = EXDEV;
		return (-1);
	}
	return (0);
}

/* git init of a directory still to be made: name the rest. */
static char *const *
agent_super_argv(const struct agent_spawn *sp, char *tail, char **argv)
{
	size_t	 i;

	for (i = 0; sp->sp_argv[i] != NULL && i < SUPER_ARGV_MAX - 3; i++)
		argv[i] = sp->sp_argv[i];
	argv[i++] = "--";
	argv[i++] = tail;
	argv[i] = NULL;
	return (argv);
}

/* No "." or ".." component: git must create exactly below us. */
static int
agent_super_tail_ok(const char *tail)
{
	const char	*p = tail, *e;
	size_t		 n;

	while (*p != '\0') {
		e = strchr(p, '/');
		n = e != NULL ? (size_t)(e - p) : strlen(p);
		if ((n == 1 && p[0] == '.') ||
		    (n == 2 && p[0] == '.' && p[1] == '.'))
			return (0);
		p += n;
		while (*p == '/')
			p++;
	}
	return (1);
}

/*
 * Until the command exits or the agent says stop (end of file on the
 * control socket; a byte there is a signal to pass on).  0 when the
 * command was reaped, its status in rp.
 */
static int
agent_super_wait(pid_t pid, struct agent_report *rp)
{
	struct pollfd	 pfd;
	sigset_t	 none;
	int		 status;
	pid_t		 r;

	sigemptyset(&none);
	pfd.fd = SUPER_CTL;
	pfd.events = POLLIN;
	for (;;) {
		/*
		 * Orphans that exit meanwhile are reaped as they go.  A
		 * stop is a process that made us its tracer: let go of it.
		 * __WALL: a child of any kind is ours to reap.
		 */
		while ((r = waitpid(-1, &status, WNOHANG | __WALL)) > 0) {
			if (agent_untrace(r, status))
				continue;
			if (r == pid) {
				rp->rp_status = status;
				return (0);
			}
		}
		if (r == -1 && errno != EINTR)
			return (-1);
		/* SIGCHLD is blocked but here: none is lost in between. */
		pfd.revents = 0;
		if (ppoll(&pfd, 1, NULL, &none) == -1) {
			if (errno == EINTR)
				continue;
			return (-1);
		}
		if (pfd.revents != 0 && agent_super_signal(pid) == -1)
			return (-1);
	}
}

/*
 * A byte on the control socket is a signal the agent asks us to send
 * to every process of a background job (agent_bg.c): the command's
 * process group, then every descendant /proc shows, as the kill at the
 * end does.  0 when sent (or not one we send), -1 at end of file.
 */
static int
agent_super_signal(pid_t pid)
{
	uint8_t	 sig;
	ssize_t	 n;

	if ((n = read(SUPER_CTL, &sig, 1)) == -1 && (errno == EINTR ||
	    errno == EAGAIN))
		return (0);
	if (n != 1)
		return (-1);
	if (sig != SIGHUP && sig != SIGINT && sig != SIGKILL &&
	    sig != SIGTERM)
		return (0);
	kill(-pid, sig);
	agent_proc_signal(getpid(), NULL, 0, sig);
	return (0);
}

/*
 * Kill every descendant, reap, repeat, until no child is left.  The
 * command's status is kept if it is reaped here.  A process that forks
 * between a scan and its kill leaves an orphan, which comes to us and
 * is found by the next scan; a process being killed cannot fork.
 */
static void
agent_super_end(pid_t pid, int reaped, struct agent_report *rp)
{
	int	 status;
	pid_t	 r;

	/*
	 * Its process group first, which needs no /proc; only while the
	 * command is unreaped, so that the group id cannot have been reused.
	 */
	if (!reaped)
		kill(-pid, SIGKILL);
	for (;;) {
		/* Nothing is left below us once we have no child. */
		r = waitpid(-1, &status, WNOHANG | __WALL);
		if (r == -1 && errno == ECHILD)
			return;
		/* A stop is no exit (agent_untrace()): the kill ends it. */
		if (r > 0) {
			if (!agent_untrace(r, status) && r == pid)
				rp->rp_status = status;
			continue;
		}
		agent_proc_kill(getpid(), NULL, 0);
		r = waitpid(-1, &status, __WALL);
		if (r == -1 && errno == ECHILD)
			return;
		if (r > 0 && !agent_untrace(r, status) && r == pid)
			rp->rp_status = status;
	}
}

static void
agent_super_report(const struct agent_report *rp)
{
	ssize_t	 n;

	do {
		n = write(SUPER_CTL, rp, sizeof(*rp));
	} while (n == -1 && errno == EINTR);
}

/* A supervisor that cannot be one: its report, and the end. */
__attribute__((noreturn)) static void
agent_super_fail(const struct agent_report *rp)
{
	agent_super_report(rp);
	_exit(0);
}

/*
 * The command: its own session, stdin, stdout and stderr on the job's
 * pipes (a terminal's: its pty, the session's controlling terminal),
 * default signal dispositions, nothing but 0, 1 and 2 open, the
 * fixed environment.
 */
__attribute__((noreturn)) static void
agent_child(const struct agent_spawn *sp, char *const *argv, int ep)
{
	struct sigaction sa;
	sigset_t	 none;
	int		 fd;

	/* The rest have their defaults already (agent_setup_process()). */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigemptyset(&sa.sa_mask);
	(void)sigaction(SIGCHLD, &sa, NULL);
	(void)sigaction(SIGPIPE, &sa, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (setsid() == -1 || dup2(SUPER_IN, 0) == -1 ||
	    dup2(SUPER_OUT, 1) == -1 || dup2(SUPER_ERR, 2) == -1) {
		agent_child_fail(ep, errno);
	}
	/* A terminal's: the new session's controlling terminal. */
	if (sp->sp_tty > 0 && ioctl(0, TIOCSCTTY, 0) == -1)
		agent_child_fail(ep, errno);
	/* The error pipe is close-on-exec: a successful exec closes it. */
	for (fd = SUPER_CTL; fd <= SUPER_ERR; fd++)
		close(fd);
	if (fcntl(ep, F_DUPFD_CLOEXEC, CHILD_EXECERR) != CHILD_EXECERR)
		_exit(127);
	closefrom(CHILD_EXECERR + 1);
	agent_child_fail(CHILD_EXECERR, agent_child_exec(sp, argv));
}

/* Tell the supervisor why the command never started. */
__attribute__((noreturn)) static void
agent_child_fail(int fd, int e)
{
	ssize_t	 n;

	n = write(fd, &e, sizeof(e));
	_exit(n == sizeof(e) ? 127 : 126);
}

/*
 * execve() the command.  A bare name is looked up in the fixed PATH as
 * execvp() would, but never in the agent's own environment; EACCES
 * from one directory is reported if no other had it.  Returns errno.
 */
static int
agent_child_exec(const struct agent_spawn *sp, char *const *argv)
{
	char		 path[PATH_MAX];
	char *const	*envp = sp->sp_env != NULL ? sp->sp_env :
			    agent_env->a_env;
	const char	*p, *e;
	int		 seen_eacces = 0;

	if (sp->sp_path != NULL) {
		execve(sp->sp_path, argv, envp);
		return (errno);
	}
	if (strchr(argv[0], '/') != NULL) {
		execve(argv[0], argv, envp);
		return (errno);
	}
	for (p = AGENT_PATH; *p != '\0'; p = *e ? e + 1 : e) {
		e = strchrnul(p, ':');
		if (snprintf(path, sizeof(path), "%.*s/%s", (int)(e - p), p,
		    argv[0]) >= (int)sizeof(path))
			return (ENAMETOOLONG);
		execve(path, argv, envp);
		if (errno == EACCES)
			seen_eacces = 1;
		else if (errno != ENOENT && errno != ENOTDIR)
			return (errno);
	}
	return (seen_eacces ? EACCES : ENOENT);
}
