/*
 * Native fences.  fence_start() prepares what pid 1 needs, creates the
 * cgroups and clones pid 1, which walks fence_steps[] below and executes
 * the init program; fence_stop() kills everything in the fence and
 * removes its cgroups.
 *
 * The order of the steps lives in fence_steps[] and nowhere else; each
 * step is in the file of its kernel facility.
 */
#include <sys/types.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fence.h"
#include "fence_impl.h"
#include "log.h"

#ifndef P_PIDFD
#define P_PIDFD		3
#endif

/*
 * What pid 1 does, in order, before it executes the init program.  The
 * tier column is docs/design.md's table: a step of a higher tier than the
 * fence's is skipped.  Namespaces themselves come from clone()
 * (fence_ns.c): mount, pid, ipc and uts at every tier, net at L2.
 *
 * "assignment" is the split point.  Nothing above it depends on whose
 * fence it is; everything below it does (key, uid, user, home, limits),
 * and is the list fence_steps_after[] (fence_after.c).  A cold boot
 * walks straight through it.  A pool pid 1 (docs/pool.md) executes the
 * agent there, ahead of any boot; the agent waits for its assignment
 * and then walks fence_steps_after[] itself, the same functions in the
 * same order.
 */
static int	fence_pool_exec(struct fence_ctx *);

static const struct fence_step fence_steps[] = {
	{ "join cgroups", TIER_L1, FENCE_T_CGROUP, fence_cgroup_join },
	{ "session", TIER_L1, FENCE_T_NAMESPACES, fence_ns_session },
	{ "loopback", TIER_L2, FENCE_T_NAMESPACES, fence_net_lo_up },
	{ "mount sources", TIER_L1, FENCE_T_MOUNTS, fence_mount_sources },
	{ "filesystem", TIER_L1, FENCE_T_MOUNTS, fence_mount_build },
	{ "landlock ruleset", TIER_L15, FENCE_T_SECCOMP,
	    fence_landlock_prepare },
	{ "assignment", TIER_L1, FENCE_T_NAMESPACES, fence_pool_exec },
};
#define FENCE_NSTEPS_ALL	(nitems(fence_steps) + fence_nsteps_after)
_Static_assert(nitems(fence_steps) == FENCE_NSTEPS_BEFORE,
    "FENCE_NSTEPS_BEFORE");

/* Only one fence is being started at a time: pid 1 uses this memory. */
static struct fence_ctx	 fence_ctx_store;
static char		*fence_default_argv[2];
static uint32_t		 fence_last_step_us[FENCE_NSTEPS];

/* What each step of the last successful boot took, for measurements. */
int
fence_step_times(const char **names, uint32_t *us, int max)
{
	int	 i, n = (int)nitems(fence_steps);

	for (i = 0; i < (int)FENCE_NSTEPS_ALL && i < FENCE_NSTEPS && i < max;
	    i++) {
		names[i] = i < n ? fence_steps[i].st_name :
		    fence_steps_after[i - n].st_name;
		us[i] = fence_last_step_us[i];
	}
	return (i);
}

/*
 * Child side, first: pid 1 dies with its parent (set again after the
 * uid changes, which clears it); our copy of the fencer's end of the
 * status socket goes, so the parent's death shows as a hangup; the caller's
 * signal handlers must not run in pid 1 (it shares their memory until
 * execve), so every disposition goes back to the default while all
 * signals are still blocked (fence_ns_clone() blocked them).  The mode
 * of what the mounts create is spelled out, so no umask.
 */
static void
fence_child_early(struct fence_ctx *ctx)
{
	struct sigaction sa;
	int		 sig;

	(void)prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	(void)close(ctx->fc_status_rfd);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	for (sig = 1; sig < NSIG; sig++) {
		if (sig == SIGKILL || sig == SIGSTOP)
			continue;
		(void)sigaction(sig, &sa, NULL);
	}
	(void)umask(0);
}

/*
 * Child side: fd 3 is the channel, 4 on the passed descriptors, 0-2 the
 * caller's or /dev/null.
 */
static int
fence_child_fds(struct fence_ctx *ctx)
{
	const struct fence_spec *s = ctx->fc_spec;
	int	 fd, first = 3, high[FENCE_PASS_MAX], i;

	/* Out of the way first: a source may be a target's number, 3 too. */
	for (i = 0; i < s->fs_npass; i++)
		if ((high[i] = fcntl(s->fs_pass[i], F_DUPFD_CLOEXEC,
		    4 + FENCE_PASS_MAX)) == -1)
			return (fence_child_err(ctx, errno, "passed fd"));
	if (ctx->fc_chan >= 0) {
		if (ctx->fc_chan == 3) {
			if (fcntl(3, F_SETFD, 0) == -1)
				return (fence_child_err(ctx, errno,
				    "channel fd"));
		} else if (dup2(ctx->fc_chan, 3) == -1)
			return (fence_child_err(ctx, errno, "channel fd"));
		first = 4;
	}
	for (i = 0; i < s->fs_npass; i++)
		if (dup2(high[i], first + i) == -1)
			return (fence_child_err(ctx, errno, "passed fd"));
	first += s->fs_npass;
	if (!ctx->fc_inherit_stdio) {
		if ((fd = open("/dev/null", O_RDWR)) == -1)
			return (fence_child_err(ctx, errno, "open /dev/null"));
		if (dup2(fd, 0) == -1 || dup2(fd, 1) == -1 ||
		    dup2(fd, 2) == -1)
			return (fence_child_err(ctx, errno, "stdio"));
		if (fd > 2)
			(void)close(fd);
	}
	/* Whatever else the caller had open stays with the caller. */
	if (close_range(first, ~0U, CLOSE_RANGE_CLOEXEC) == -1)
		return (fence_child_err(ctx, errno, "close_range"));
	return (0);
}

/* Child side: the last step.  Returns only if execve failed. */
static void
fence_child_exec(struct fence_ctx *ctx)
{
	sigset_t	 none;

	if (fence_child_fds(ctx) == -1 || fence_rlimit_nofile_set(ctx) == -1)
		return;
	if (chdir(ctx->fc_home_abs) == -1) {
		fence_child_err(ctx, errno, "chdir %s", ctx->fc_home_abs);
		return;
	}
	(void)umask(022);
	if (fence_child_send(ctx, FENCE_ST_EXEC) == -1)
		_exit(127);	/* nobody is listening any more */
	sigemptyset(&none);
	(void)sigprocmask(SIG_SETMASK, &none, NULL);
	execve(ctx->fc_init_path, ctx->fc_argv, ctx->fc_envp);
	fence_child_err(ctx, errno, "execve %s", ctx->fc_init_path);
}

/* Pid 1 of the fence, until execve. */
static int
fence_child(void *arg)
{
	struct fence_ctx	*ctx = arg;
	uint64_t		 t;

	t = fence_now_us();
	ctx->fc_st.fst_us[FENCE_T_NAMESPACES] = fence_us32(t - ctx->fc_t_step);
	ctx->fc_t_step = t;
	fence_child_early(ctx);

	if (fence_steps_walk(ctx, fence_steps, nitems(fence_steps), 0) == -1 ||
	    fence_steps_walk(ctx, fence_steps_after, fence_nsteps_after,
	    nitems(fence_steps)) == -1)
		goto fail;
	fence_child_exec(ctx);
 fail:
	(void)fence_child_send(ctx, FENCE_ST_ERROR);
	_exit(127);
}

int
fence_init(char *err, size_t errlen)
{
	if (fence_host.fh_ready)
		return (0);
	if (fence_mount_init(err, errlen) == -1)
		return (-1);
	if (fence_seccomp_init(err, errlen) == -1)
		return (-1);
	if (fence_caps_init(err, errlen) == -1)
		return (-1);
	fence_host.fh_landlock_abi = fence_landlock_probe();
	fence_host.fh_ready = 1;
	return (0);
}

/* The kernel's Landlock ABI as fence_init() found it; 0: none. */
int
fence_landlock_abi(void)
{
	return (fence_host.fh_landlock_abi);
}

static int
fence_spec_check(const struct fence_spec *s, char *err, size_t errlen)
{
	int	 i;

	if (!fence_key_valid(s->fs_key)) {
		snprintf(err, errlen, "invalid fence key");
		return (-1);
	}
	if (s->fs_tier != TIER_L1 && s->fs_tier != TIER_L15 &&
	    s->fs_tier != TIER_L2) {
		snprintf(err, errlen, "invalid tier %d", s->fs_tier);
		return (-1);
	}
	if (s->fs_uid == 0 || s->fs_uid == (uid_t)-1 ||
	    s->fs_gid == 0 || s->fs_gid == (gid_t)-1) {
		snprintf(err, errlen, "refusing to run a fence as uid %u "
		    "gid %u", (unsigned)s->fs_uid, (unsigned)s->fs_gid);
		return (-1);
	}
	if (!fence_user_valid(s->fs_user)) {
		snprintf(err, errlen, "invalid user name");
		return (-1);
	}
	if ((s->fs_no_home ? s->fs_home[0] != '\0' || s->fs_home_dev[0] !=
	    '\0' : s->fs_home[0] != '/') || s->fs_bindir == NULL ||
	    s->fs_bindir[0] != '/') {
		snprintf(err, errlen, "home and bin dir must be absolute");
		return (-1);
	}
	if (s->fs_home_dev[0] != '\0' &&
	    (strncmp(s->fs_home_dev, "/dev/loop", 9) != 0 ||
	    strnlen(s->fs_home_dev, sizeof(s->fs_home_dev)) >=
	    sizeof(s->fs_home_dev))) {
		snprintf(err, errlen, "the home image's device must be a "
		    "loop device");
		return (-1);
	}
	if (s->fs_init == NULL || s->fs_init[0] == '\0' ||
	    strchr(s->fs_init, '/') != NULL || strcmp(s->fs_init, ".") == 0 ||
	    strcmp(s->fs_init, "..") == 0 ||
	    strlen(s->fs_init) > NAME_MAX) {
		snprintf(err, errlen, "invalid init program name");
		return (-1);
	}
	if (s->fs_exec != NULL && (s->fs_exec[0] != '/' ||
	    strlen(s->fs_exec) >= PATH_MAX)) {
		snprintf(err, errlen, "the program to execute must be "
		    "an absolute path");
		return (-1);
	}
	if (s->fs_npass < 0 || s->fs_npass > FENCE_PASS_MAX ||
	    (s->fs_npass > 0 && s->fs_chan < 0)) {
		snprintf(err, errlen, "invalid passed descriptors");
		return (-1);
	}
	for (i = 0; i < s->fs_npass; i++)
		if (s->fs_pass[i] < 0) {
			snprintf(err, errlen, "invalid passed descriptor");
			return (-1);
		}
	if (s->fs_tier < TIER_L15)
		return (0);
	/* From L1.5 on the limits are part of the tier: no fallback. */
	for (i = 0; i < FENCE_CG_MAX; i++)
		if (s->fs_cgroup_parent[i] == NULL) {
			snprintf(err, errlen, "%s needs a cgroup for the %s "
			    "controller", tier_name(s->fs_tier),
			    i == FENCE_CG_MEMORY ? "memory" :
			    i == FENCE_CG_PIDS ? "pids" : "cpu");
			return (-1);
		}
	if (s->fs_limits.fl_memory == 0 || s->fs_limits.fl_pids == 0 ||
	    s->fs_limits.fl_cpu_milli == 0) {
		snprintf(err, errlen, "%s needs memory, pids and cpu limits",
		    tier_name(s->fs_tier));
		return (-1);
	}
	return (0);
}

static void
fence_ctx_env(struct fence_ctx *ctx, const struct fence_spec *s)
{
	const char	*vars[FENCE_ENV_MAX][2] = {
		{ "PATH", "/usr/local/bin:/usr/bin:/bin" },
		{ "HOME", ctx->fc_home_abs },
		{ "USER", s->fs_user },
		{ "LOGNAME", s->fs_user },
		{ "TMPDIR", "/tmp" },
		{ "LANG", "C.UTF-8" },
		{ "VOICEBOX_FENCE", s->fs_key },
		{ NULL, NULL }
	};
	int		 i;

	for (i = 0; i < FENCE_ENV_MAX && vars[i][0] != NULL; i++) {
		snprintf(ctx->fc_envbuf[i], sizeof(ctx->fc_envbuf[i]),
		    "%s=%s", vars[i][0], vars[i][1]);
		ctx->fc_envp[i] = ctx->fc_envbuf[i];
	}
	ctx->fc_envp[i] = NULL;
}

static struct fence_ctx *
fence_ctx_prepare(const struct fence_spec *s)
{
	struct fence_ctx	*ctx = &fence_ctx_store;
	int			 i;

	memset(ctx, 0, sizeof(*ctx));
	ctx->fc_spec = s;
	ctx->fc_tier = s->fs_tier;
	ctx->fc_status_fd = ctx->fc_status_rfd = ctx->fc_notify_fd = -1;
	ctx->fc_home_tree = ctx->fc_ll_fd = ctx->fc_assign_fd = -1;
	ctx->fc_built_memory = s->fs_limits.fl_memory;
	ctx->fc_bin_mnt = fence_bin_fd();
	ctx->fc_bin_shared = fence_bin_shared();
	for (i = 0; i < FENCE_CG_MAX; i++)
		ctx->fc_cg_procs[i] = -1;
	ctx->fc_cg_born = -1;
	snprintf(ctx->fc_home_mnt, sizeof(ctx->fc_home_mnt), "home/%s",
	    s->fs_user);
	snprintf(ctx->fc_home_abs, sizeof(ctx->fc_home_abs), "/home/%s",
	    s->fs_user);
	if (s->fs_exec != NULL)
		strlcpy(ctx->fc_init_path, s->fs_exec,
		    sizeof(ctx->fc_init_path));
	else
		snprintf(ctx->fc_init_path, sizeof(ctx->fc_init_path),
		    "%s/%s", FENCE_BIN_DIR, s->fs_init);
	if (s->fs_init_argv != NULL && s->fs_init_argv[0] != NULL)
		ctx->fc_argv = s->fs_init_argv;
	else {
		fence_default_argv[0] = (char *)s->fs_init;
		fence_default_argv[1] = NULL;
		ctx->fc_argv = fence_default_argv;
	}
	fence_ctx_env(ctx, s);
	ctx->fc_chan = s->fs_chan;
	ctx->fc_inherit_stdio = s->fs_inherit_stdio;
#ifdef FENCED_TEST_HOOKS
	ctx->fc_noseccomp = s->fs_test_noseccomp;
#endif
	ctx->fc_quiet = s->fs_quiet;
	return (ctx);
}

/*
 * One record of the status socket, and the seccomp listener an EXEC
 * record brings (*fd, else -1; a descriptor on any other record is
 * closed).  As read(2).
 */
static ssize_t
fence_status_recv(int s, struct fence_status *rec, int *fd)
{
	union {
		struct cmsghdr	 hdr;
		char		 buf[CMSG_SPACE(sizeof(int))];
	}		 cm;
	struct msghdr	 msg;
	struct cmsghdr	*c;
	struct iovec	 iov;
	ssize_t		 n;
	int		 got = -1;

	*fd = -1;
	memset(&msg, 0, sizeof(msg));
	iov.iov_base = rec;
	iov.iov_len = sizeof(*rec);
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cm.buf;
	msg.msg_controllen = sizeof(cm.buf);
	if ((n = recvmsg(s, &msg, MSG_CMSG_CLOEXEC)) == -1)
		return (-1);
	for (c = CMSG_FIRSTHDR(&msg); c != NULL; c = CMSG_NXTHDR(&msg, c))
		if (c->cmsg_level == SOL_SOCKET &&
		    c->cmsg_type == SCM_RIGHTS &&
		    c->cmsg_len == CMSG_LEN(sizeof(int)) && got == -1)
			memcpy(&got, CMSG_DATA(c), sizeof(int));
	if (got != -1 && (n != (ssize_t)sizeof(*rec) ||
	    rec->fst_kind != FENCE_ST_EXEC || (msg.msg_flags & MSG_CTRUNC))) {
		(void)close(got);
		got = -1;
	}
	*fd = got;
	return (n);
}

/*
 * The status socket: the EXEC record, then EOF at execve; or an error.
 * A pool fence's agent writes its EXEC record once its steps are done,
 * past its execve, and nothing after it matters (agent_pool.c): for it
 * (once) the record is the end, and the fencer does not wait for the
 * pipe's close, a second wakeup on a busy machine.
 */
static int
fence_status_read(int fd, struct fence_proc *proc, struct fence_status *st,
    int once, char *err, size_t errlen)
{
	struct fence_status	 rec;
	siginfo_t		 si;
	const char		*when;
	ssize_t			 n;
	int			 execd = 0, lfd;

	for (;;) {
		n = fence_status_recv(fd, &rec, &lfd);
		if (lfd != -1) {
			if (proc->fp_notify_fd != -1)
				(void)close(proc->fp_notify_fd);
			proc->fp_notify_fd = lfd;
		}
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			snprintf(err, errlen, "status socket: %s",
			    strerror(errno));
			return (-1);
		}
		if (n == 0)
			break;
		if (n != (ssize_t)sizeof(rec)) {
			snprintf(err, errlen, "status socket: short record");
			return (-1);
		}
		rec.fst_step[sizeof(rec.fst_step) - 1] = '\0';
		if (rec.fst_kind == FENCE_ST_ERROR) {
			if (rec.fst_errno != 0)
				snprintf(err, errlen, "%s: %s", rec.fst_step,
				    strerror(rec.fst_errno));
			else
				snprintf(err, errlen, "%s", rec.fst_step);
			return (-1);
		}
		if (rec.fst_kind == FENCE_ST_EXEC) {
			*st = rec;
			execd = 1;
			if (once)
				break;
		}
	}
	if (execd)
		return (0);
	/* Pid 1 died without a word: say how. */
	when = once ? "before its steps were done" : "before execve";
	memset(&si, 0, sizeof(si));
	if (waitid(P_PIDFD, proc->fp_pidfd, &si, WEXITED) == 0 &&
	    si.si_code == CLD_EXITED)
		snprintf(err, errlen, "fence pid 1 exited %d %s",
		    si.si_status, when);
	else if (si.si_code == CLD_KILLED || si.si_code == CLD_DUMPED)
		snprintf(err, errlen, "fence pid 1 killed by signal %d %s",
		    si.si_status, when);
	else
		snprintf(err, errlen, "fence pid 1 died %s", when);
	return (-1);
}

int
fence_start(const struct fence_spec *spec, struct fence_proc *proc,
    char *err, size_t errlen)
{
	struct fence_ctx	*ctx;
	struct fence_status	 st;
	uint64_t		 t0, tclone;
	int			 p[2] = { -1, -1 }, fd, pidfd = -1, i;
	pid_t			 pid;

	memset(&st, 0, sizeof(st));
	memset(proc, 0, sizeof(*proc));
	proc->fp_pid = -1;
	proc->fp_pidfd = proc->fp_notify_fd = -1;
	if (fence_spec_check(spec, err, errlen) == -1)
		return (-1);
	if (fence_init(err, errlen) == -1 ||
	    fence_bin_init(spec->fs_bindir, spec->fs_init, err, errlen) == -1)
		return (-1);
	ctx = fence_ctx_prepare(spec);
	t0 = fence_now_us();

	if (fence_cgroup_create(spec, proc, ctx, err, errlen) == -1)
		goto fail;
	/* A socket, not a pipe: the EXEC record brings a descriptor. */
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, p) == -1) {
		snprintf(err, errlen, "socketpair: %s", strerror(errno));
		goto fail;
	}
	/* fds 0-3 get replaced in pid 1: keep the status socket above them. */
	if (p[1] <= 3) {
		if ((fd = fcntl(p[1], F_DUPFD_CLOEXEC, 4)) == -1) {
			snprintf(err, errlen, "fcntl: %s", strerror(errno));
			goto fail;
		}
		(void)close(p[1]);
		p[1] = fd;
	}
	ctx->fc_status_fd = p[1];
	ctx->fc_status_rfd = p[0];

	tclone = fence_now_us();
	ctx->fc_st.fst_us[FENCE_T_CGROUP] = fence_us32(tclone - t0);
	ctx->fc_t_step = tclone;
	pid = fence_ns_clone(ctx, fence_child, &pidfd, err, errlen);
	(void)close(p[1]);
	p[1] = -1;
	proc->fp_cg_born = ctx->fc_cg_born != -1;
	fence_cgroup_close(ctx);
	if (pid == -1)
		goto fail;
	proc->fp_pid = pid;
	proc->fp_pidfd = pidfd;

	if (fence_status_read(p[0], proc, &st, 0, err, errlen) == -1)
		goto fail;
	(void)close(p[0]);

	proc->fp_timings.ft_cgroup_us = st.fst_us[FENCE_T_CGROUP];
	proc->fp_timings.ft_namespaces_us = st.fst_us[FENCE_T_NAMESPACES];
	proc->fp_timings.ft_mounts_us = st.fst_us[FENCE_T_MOUNTS];
	proc->fp_timings.ft_seccomp_us = st.fst_us[FENCE_T_SECCOMP];
	proc->fp_timings.ft_exec_us = fence_us32(fence_now_us() - tclone);
	proc->fp_landlock_abi = spec->fs_tier >= TIER_L15 ?
	    fence_host.fh_landlock_abi : 0;
	proc->fp_landlock = st.fst_landlock;
	memcpy(fence_last_step_us, st.fst_step_us, sizeof(fence_last_step_us));
	return (0);

 fail:
	for (i = 0; i < 2; i++)
		if (p[i] != -1)
			(void)close(p[i]);
	fence_cgroup_close(ctx);
	(void)fence_stop(proc);
	return (-1);
}

/* Reap pid 1 if it is still ours to reap. */
static void
fence_reap(struct fence_proc *proc)
{
	siginfo_t	 si;

	while (waitid(P_PIDFD, proc->fp_pidfd, &si, WEXITED) == -1 &&
	    errno == EINTR)
		;
}

int
fence_stop(struct fence_proc *proc)
{
	char	 err[FENCE_ERR_MAX];
	int	 rv = 0, oom;

	/*
	 * SIGKILL to pid 1 takes the whole pid namespace with it; the
	 * cgroup catches anything that is somehow outside it.
	 */
	if (proc->fp_pid > 0 && proc->fp_pidfd >= 0 &&
	    syscall(SYS_pidfd_send_signal,
	    proc->fp_pidfd, SIGKILL, NULL, 0) == -1 && errno != ESRCH) {
		log_warn("%s: pidfd_send_signal", __func__);
		rv = -1;
	}
	(void)fence_cgroup_kill(proc);
	if (proc->fp_notify_fd != -1) {
		(void)close(proc->fp_notify_fd);
		proc->fp_notify_fd = -1;
	}
	/* Reaped already (fb_reaped()) or not: the pidfd is closed. */
	if (proc->fp_pidfd >= 0) {
		if (proc->fp_pid > 0)
			fence_reap(proc);
		(void)close(proc->fp_pidfd);
		proc->fp_pidfd = -1;
	}
	proc->fp_pid = -1;

	if ((oom = fence_cgroup_oom(proc)) > 0)
		proc->fp_oom_killed = 1;
	if (fence_cgroup_remove(proc, err, sizeof(err)) == -1) {
		log_warnx("%s: %s", __func__, err);
		rv = -1;
	}
	return (rv);
}

int
fence_oom_killed(const struct fence_proc *proc)
{
	int	 n;

	if ((n = fence_cgroup_oom(proc)) == -1)
		return (proc->fp_oom_killed);
	return (n > 0 || proc->fp_oom_killed);
}

/*
 * The warm pool (docs/pool.md).  A pool pid 1 is cloned as a cold one
 * is and walks fence_steps[] to the split point, where it executes the
 * agent ahead (fence_pool_exec()): the agent starts, says so on the
 * status socket (FENCE_ST_POOLED) and blocks on its assignment socket.
 * The take (fence_pool_take()) moves the pool fence's cgroups to the
 * boot's names, writes the boot's limits and sends the agent the boot's
 * key, ids, user and limits with its channel, the home and the seccomp
 * program; the agent walks fence_steps_after[] itself and only then
 * opens its channel (agent/agent_pool.c).
 */

/*
 * Child side, the split point: nothing to do for a cold boot.  A pool
 * pid 1 executes the agent here, ahead of any boot, as root of its
 * namespaces with the fencer's capabilities (the steps after this
 * point need them): the assignment socket on fd 3, the status socket on
 * 4, the Landlock ruleset on 5 (none: 5 is closed), /dev/null on 0-2,
 * nothing else (every other descriptor of the fencer's is close-on-exec
 * and more are marked so here), an empty environment, and "-p" with
 * the Landlock features the ruleset holds, which the agent reports back
 * at the take.  Returns only if something failed.
 */
static int
fence_pool_exec(struct fence_ctx *ctx)
{
	static char	 ll[16];
	static char	 arg0[] = "fence-agent", argp[] = "-p";
	char		*argv[] = { arg0, argp, ll, NULL };
	char		*envp[] = { NULL };
	const int	 to[3] = { FENCE_POOL_FD_ASSIGN, FENCE_POOL_FD_STATUS,
			    FENCE_POOL_FD_LANDLOCK };
	int		 from[3], hi[3] = { -1, -1, -1 }, i, n, fd;
	sigset_t	 none;

	if (!ctx->fc_pool)
		return (0);
	from[0] = ctx->fc_assign_fd;
	from[1] = ctx->fc_status_fd;
	from[2] = ctx->fc_ll_fd;
	n = from[2] == -1 ? 2 : 3;
	/* Out of the way first: a source may be a target's number. */
	for (i = 0; i < n; i++)
		if ((hi[i] = fcntl(from[i], F_DUPFD_CLOEXEC, 16)) == -1)
			return (fence_child_err(ctx, errno, "pool fds"));
	if ((fd = open("/dev/null", O_RDWR | O_CLOEXEC)) == -1)
		return (fence_child_err(ctx, errno, "open /dev/null"));
	if (dup2(fd, 0) == -1 || dup2(fd, 1) == -1 || dup2(fd, 2) == -1)
		return (fence_child_err(ctx, errno, "stdio"));
	for (i = 0; i < n; i++)
		if (dup2(hi[i], to[i]) == -1)
			return (fence_child_err(ctx, errno, "pool fds"));
	ctx->fc_status_fd = FENCE_POOL_FD_STATUS;
	if (close_range(n == 3 ? FENCE_POOL_FD_LANDLOCK + 1 :
	    FENCE_POOL_FD_LANDLOCK, ~0U, CLOSE_RANGE_CLOEXEC) == -1)
		return (fence_child_err(ctx, errno, "close_range"));
	(void)snprintf(ll, sizeof(ll), "%u", ctx->fc_st.fst_landlock);
	sigemptyset(&none);
	(void)sigprocmask(SIG_SETMASK, &none, NULL);
	execve(ctx->fc_init_path, argv, envp);
	return (fence_child_err(ctx, errno, "execve %s", ctx->fc_init_path));
}

/*
 * fenced -d: where a take's time went, the fencer's parts (checks, the
 * home's mount, cgroups and limits, then the agent from the send to
 * the end of its steps) and the agent's steps after the split point.
 */
static void
fence_pool_log(const uint32_t *step_us, uint64_t checks, uint64_t home,
    uint64_t cgroups, uint64_t agent)
{
	char	 buf[512];
	size_t	 i, len = 0, first = nitems(fence_steps);
	int	 n;

	if (log_getverbose() < 1)
		return;
	buf[0] = '\0';
	for (i = 0; i < fence_nsteps_after && first + i < FENCE_NSTEPS; i++) {
		if (step_us[first + i] == 0)
			continue;
		n = snprintf(buf + len, sizeof(buf) - len, "%s%s %u",
		    len > 0 ? ", " : "", fence_steps_after[i].st_name,
		    step_us[first + i]);
		if (n < 0 || (size_t)n >= sizeof(buf) - len)
			break;
		len += n;
	}
	log_debug("pool take: checks %llu us, home %llu us, cgroups %llu us, "
	    "the agent's steps to its channel %llu us; steps (us): %s",
	    (unsigned long long)checks, (unsigned long long)home,
	    (unsigned long long)cgroups, (unsigned long long)agent, buf);
}

static int
fence_pool_spec_check(const struct fence_spec *s, char *err, size_t errlen)
{
	int	 i;

	if (!fence_key_valid(s->fs_key) || s->fs_cgroup_name == NULL) {
		snprintf(err, errlen, "invalid pool fence name");
		return (-1);
	}
	if (s->fs_tier != TIER_L1 && s->fs_tier != TIER_L15 &&
	    s->fs_tier != TIER_L2) {
		snprintf(err, errlen, "invalid tier %d", s->fs_tier);
		return (-1);
	}
	if (s->fs_bindir == NULL || s->fs_bindir[0] != '/' ||
	    s->fs_init == NULL || strchr(s->fs_init, '/') != NULL ||
	    s->fs_exec != NULL || s->fs_kvm || s->fs_no_home ||
	    s->fs_npass != 0 || s->fs_chan != -1) {
		snprintf(err, errlen, "a pool fence runs the agent alone");
		return (-1);
	}
	for (i = 0; i < FENCE_CG_MAX; i++)
		if (s->fs_cgroup_parent[i] == NULL) {
			snprintf(err, errlen, "a pool fence needs its cgroups");
			return (-1);
		}
	if (s->fs_limits.fl_memory == 0 || s->fs_limits.fl_pids == 0 ||
	    s->fs_limits.fl_cpu_milli == 0) {
		snprintf(err, errlen, "a pool fence needs its limits");
		return (-1);
	}
	return (0);
}

/* The caller's capability bounding set, as a mask. */
static uint64_t
fence_capbset(void)
{
	uint64_t	 m = 0;
	int		 c;

	for (c = 0; c <= fence_host.fh_cap_last && c < 64; c++)
		if (prctl(PR_CAPBSET_READ, c, 0, 0, 0) == 1)
			m |= 1ULL << c;
	return (m);
}

/* A pipe or socket end above fds 0-3, which pid 1 replaces. */
static int
fence_fd_high(int *fd, char *err, size_t errlen)
{
	int	 nfd;

	if (*fd > 3)
		return (0);
	if ((nfd = fcntl(*fd, F_DUPFD_CLOEXEC, 4)) == -1) {
		snprintf(err, errlen, "fcntl: %s", strerror(errno));
		return (-1);
	}
	(void)close(*fd);
	*fd = nfd;
	return (0);
}

int
fence_pool_start(const struct fence_spec *spec, struct fence_pooled *pp,
    char *err, size_t errlen)
{
	struct fence_ctx	*ctx;
	uint64_t		 t0, t;
	int			 p[2] = { -1, -1 }, sp[2] = { -1, -1 };
	int			 pidfd = -1, i;
	pid_t			 pid;

	memset(pp, 0, sizeof(*pp));
	pp->pp_proc.fp_pid = -1;
	pp->pp_proc.fp_pidfd = pp->pp_proc.fp_notify_fd = -1;
	pp->pp_status = pp->pp_assign = -1;
	if (fence_pool_spec_check(spec, err, errlen) == -1)
		return (-1);
	if (fence_init(err, errlen) == -1 ||
	    fence_bin_init(spec->fs_bindir, spec->fs_init, err, errlen) == -1)
		return (-1);
	/* What its take sends it, made now rather than on a boot's path. */
	if (fence_seccomp_memfd(0, 0, err, errlen) == -1 ||
	    fence_seccomp_memfd(1, 0, err, errlen) == -1)
		return (-1);
	t0 = fence_now_us();
	ctx = fence_ctx_prepare(spec);
	ctx->fc_pool = 1;

	if (fence_cgroup_create(spec, &pp->pp_proc, ctx, err, errlen) == -1)
		goto fail;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, p) == -1 ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) == -1) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		goto fail;
	}
	if (fence_fd_high(&p[1], err, errlen) == -1 ||
	    fence_fd_high(&sp[1], err, errlen) == -1)
		goto fail;
	ctx->fc_status_fd = p[1];
	ctx->fc_status_rfd = p[0];
	ctx->fc_assign_fd = sp[1];

	t = fence_now_us();
	ctx->fc_t_step = t;
	pp->pp_capbset = fence_capbset();
	pid = fence_ns_clone(ctx, fence_child, &pidfd, err, errlen);
	(void)close(p[1]);
	(void)close(sp[1]);
	p[1] = sp[1] = -1;
	fence_cgroup_close(ctx);
	if (pid == -1)
		goto fail;
	pp->pp_proc.fp_pid = pid;
	pp->pp_proc.fp_pidfd = pidfd;
	pp->pp_status = p[0];
	pp->pp_assign = sp[0];
	pp->pp_tier = spec->fs_tier;
	pp->pp_memory = spec->fs_limits.fl_memory;
	pp->pp_limits = spec->fs_limits;
	pp->pp_clone_us = fence_us32(fence_now_us() - t);
	pp->pp_t0 = t0;
	return (0);
 fail:
	for (i = 0; i < 2; i++) {
		if (p[i] != -1)
			(void)close(p[i]);
		if (sp[i] != -1)
			(void)close(sp[i]);
	}
	fence_cgroup_close(ctx);
	(void)fence_stop(&pp->pp_proc);
	return (-1);
}

/*
 * The pool pid 1's status socket is readable: 1 once it waits at the split
 * point, 0 if there is nothing yet, -1 if it failed or died (err).
 */
int
fence_pool_ready(struct fence_pooled *pp, char *err, size_t errlen)
{
	struct fence_status	 rec;
	ssize_t			 n;

	n = read(pp->pp_status, &rec, sizeof(rec));
	if (n == -1 && (errno == EINTR || errno == EAGAIN))
		return (0);
	if (n == (ssize_t)sizeof(rec) && rec.fst_kind == FENCE_ST_POOLED) {
		pp->pp_build_us = fence_us32(fence_now_us() - pp->pp_t0);
		pp->pp_ready = 1;
		return (1);
	}
	if (n == (ssize_t)sizeof(rec) && rec.fst_kind == FENCE_ST_ERROR) {
		rec.fst_step[sizeof(rec.fst_step) - 1] = '\0';
		snprintf(err, errlen, "%s: %s", rec.fst_step,
		    rec.fst_errno != 0 ? strerror(rec.fst_errno) : "failed");
	} else if (n == -1)
		snprintf(err, errlen, "status socket: %s", strerror(errno));
	else
		snprintf(err, errlen, "pool pid 1 died while it was built");
	return (-1);
}

/* 1 while the pool pid 1 lives, by its pidfd. */
int
fence_pool_alive(const struct fence_pooled *pp)
{
	struct pollfd	 pfd;

	if (pp->pp_proc.fp_pidfd < 0)
		return (0);
	pfd.fd = pp->pp_proc.fp_pidfd;
	pfd.events = POLLIN;
	pfd.revents = 0;
	return (poll(&pfd, 1, 0) == 0);
}

void
fence_pool_drop(struct fence_pooled *pp)
{
	if (pp->pp_assign != -1)
		(void)close(pp->pp_assign);
	if (pp->pp_status != -1)
		(void)close(pp->pp_status);
	pp->pp_assign = pp->pp_status = -1;
	(void)fence_stop(&pp->pp_proc);
	pp->pp_ready = 0;
}

/* Whether a cold boot of spec would build what pool fence pp holds. */
static int
fence_pool_fits(const struct fence_pooled *pp, const struct fence_spec *s)
{
	return (pp->pp_ready && s->fs_tier == pp->pp_tier &&
	    s->fs_exec == NULL && !s->fs_kvm && !s->fs_no_home &&
	    s->fs_npass == 0 && !s->fs_inherit_stdio &&
	    s->fs_cgroup_name != NULL && s->fs_init != NULL &&
	    strcmp(s->fs_init, "fence-agent") == 0 &&
	    (s->fs_init_argv == NULL || (s->fs_init_argv[0] != NULL &&
	    strcmp(s->fs_init_argv[0], "fence-agent") == 0 &&
	    s->fs_init_argv[1] == NULL)));
}

/*
 * Whether pool fence pp was built before the fencer gave up a
 * capability since: a cold pid 1 lacks it, so pp may serve no boot.
 */
int
fence_pool_stale(const struct fence_pooled *pp)
{
	return (fence_capbset() != pp->pp_capbset);
}

/*
 * A boot takes pool fence pp.  Returns 0: proc is the boot's fence, its
 * pid 1 past execve, pp is spent.  1: nothing of the boot's was handed
 * over and the pool fence is dropped or untouched; the caller boots
 * cold.  -1: the boot failed after its assignment, as a cold one would
 * (err), and nothing of it is left.
 */
int
fence_pool_take(struct fence_pooled *pp, const struct fence_spec *spec,
    struct fence_proc *proc, char *err, size_t errlen)
{
	struct fence_assign	 a;
	struct fence_status	 st;
	uint64_t		 t0 = fence_now_us(), tsend, th, tc;
	int			 fds[FENCE_ASSIGN_NFDS], tree = -1, prog;
	int			 noseccomp;
	char			 why[FENCE_ERR_MAX];
	ssize_t			 n;

	if (!fence_pool_fits(pp, spec) || spec->fs_chan < 0)
		return (1);
	if (fence_spec_check(spec, err, errlen) == -1)
		return (1);
	if (!fence_pool_alive(pp)) {
		log_warnx("%s: pool pid 1 %d died", __func__,
		    (int)pp->pp_proc.fp_pid);
		fence_pool_drop(pp);
		return (1);
	}
	if (fence_pool_stale(pp)) {
		fence_pool_drop(pp);
		return (1);
	}
	/* The program the agent loads: the fencer's, never the agent's. */
	noseccomp = 0;
#ifdef FENCED_TEST_HOOKS
	noseccomp = spec->fs_test_noseccomp;
#endif
	if ((prog = fence_seccomp_memfd(spec->fs_quiet, noseccomp, why,
	    sizeof(why))) == -1) {
		log_warnx("%s: %s", __func__, why);
		return (1);
	}
	th = fence_now_us();
	if (fence_mount_home_tree(spec, &tree, why, sizeof(why)) == -1)
		return (1);	/* a cold boot says why, in its own words */
	tc = fence_now_us();
	if (fence_cgroup_adopt(spec, &pp->pp_proc, &pp->pp_limits, why,
	    sizeof(why)) == -1) {
		log_warnx("%s: %s", __func__, why);
		(void)close(tree);
		fence_pool_drop(pp);
		return (1);
	}

	memset(&a, 0, sizeof(a));
	a.fa_magic = FENCE_ASSIGN_MAGIC;
	strlcpy(a.fa_key, spec->fs_key, sizeof(a.fa_key));
	strlcpy(a.fa_user, spec->fs_user, sizeof(a.fa_user));
	a.fa_uid = spec->fs_uid;
	a.fa_gid = spec->fs_gid;
	a.fa_limits = spec->fs_limits;
	a.fa_tier = pp->pp_tier;
	a.fa_built_memory = pp->pp_memory;
	fds[0] = spec->fs_chan;
	fds[1] = tree;
	fds[2] = prog;
	tsend = fence_now_us();
	n = send_fds(pp->pp_assign, &a, sizeof(a), fds,
	    FENCE_ASSIGN_NFDS);
	(void)close(tree);
	if (n != (ssize_t)sizeof(a)) {
		log_warnx("%s: send the assignment: %s", __func__,
		    n == -1 ? strerror(errno) : "short");
		fence_pool_drop(pp);
		return (1);
	}
	/* Handed over: from here on it is this boot's fence. */
	*proc = pp->pp_proc;
	(void)close(pp->pp_assign);
	pp->pp_assign = -1;
	memset(&st, 0, sizeof(st));
	if (fence_status_read(pp->pp_status, proc, &st, 1, err,
	    errlen) == -1) {
		(void)close(pp->pp_status);
		pp->pp_status = -1;
		(void)fence_stop(proc);
		memset(pp, 0, sizeof(*pp));
		pp->pp_status = pp->pp_assign = -1;
		pp->pp_proc.fp_pidfd = pp->pp_proc.fp_pid = -1;
		pp->pp_proc.fp_notify_fd = -1;
		return (-1);
	}
	(void)close(pp->pp_status);
	proc->fp_timings.ft_cgroup_us = fence_us32(tsend - t0);
	proc->fp_timings.ft_namespaces_us = st.fst_us[FENCE_T_NAMESPACES];
	proc->fp_timings.ft_mounts_us = st.fst_us[FENCE_T_MOUNTS];
	proc->fp_timings.ft_seccomp_us = st.fst_us[FENCE_T_SECCOMP];
	proc->fp_timings.ft_exec_us = fence_us32(fence_now_us() - tsend);
	proc->fp_timings.ft_take_us = fence_us32(fence_now_us() - t0);
	proc->fp_landlock_abi = spec->fs_tier >= TIER_L15 ?
	    fence_host.fh_landlock_abi : 0;
	proc->fp_landlock = st.fst_landlock;
	proc->fp_pooled = 1;
	memcpy(fence_last_step_us, st.fst_step_us, sizeof(fence_last_step_us));
	fence_pool_log(st.fst_step_us, th - t0, tc - th, tsend - tc,
	    fence_now_us() - tsend);
	memset(pp, 0, sizeof(*pp));
	pp->pp_status = pp->pp_assign = -1;
	pp->pp_proc.fp_pidfd = pp->pp_proc.fp_pid = -1;
	pp->pp_proc.fp_notify_fd = -1;
	return (0);
}
