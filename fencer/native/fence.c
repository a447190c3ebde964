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

struct fence_host fence_host;

struct fence_step {
	const char	*st_name;
	int		 st_tier;	/* the lowest tier with the step */
	enum fence_clock st_clock;	/* the timing it adds to */
	int		(*st_fn)(struct fence_ctx *);
};

/*
 * What pid 1 does, in order, before it executes the init program.  The
 * tier column is DESIGN.md's table: a step of a higher tier than the
 * fence's is skipped.  Namespaces themselves come from clone()
 * (fence_ns.c): mount, pid, ipc and uts at every tier, net at L2.
 *
 * "assignment" is the split point.  Nothing above it depends on whose
 * fence it is; everything below it does (key, uid, user, home, limits).
 * A cold boot walks straight through it.  A pool pid 1 (docs/pool.md)
 * stops there until the fencer assigns it to a boot, then walks the
 * rest exactly as a cold boot does.  The cgroup namespace is below it:
 * on cgroup v2, where a cgroup cannot be renamed, the take moves pid 1
 * into the boot's cgroup, and the namespace must be rooted there.
 */
static int	fence_pool_assigned(struct fence_ctx *);

static const struct fence_step fence_steps[] = {
	{ "join cgroups", TIER_L1, FENCE_T_CGROUP, fence_cgroup_join },
	{ "session", TIER_L1, FENCE_T_NAMESPACES, fence_ns_session },
	{ "loopback", TIER_L2, FENCE_T_NAMESPACES, fence_net_lo_up },
	{ "mount sources", TIER_L1, FENCE_T_MOUNTS, fence_mount_sources },
	{ "filesystem", TIER_L1, FENCE_T_MOUNTS, fence_mount_build },
	{ "landlock ruleset", TIER_L15, FENCE_T_SECCOMP,
	    fence_landlock_prepare },
	{ "assignment", TIER_L1, FENCE_T_NAMESPACES, fence_pool_assigned },
	{ "cgroup namespace", TIER_L1, FENCE_T_NAMESPACES, fence_ns_cgroup },
	{ "hostname", TIER_L1, FENCE_T_NAMESPACES, fence_ns_hostname },
	{ "home", TIER_L1, FENCE_T_MOUNTS, fence_mount_home },
	{ "scratch sizes", TIER_L1, FENCE_T_MOUNTS, fence_mount_resize },
	{ "core rlimit", TIER_L1, FENCE_T_SECCOMP, fence_rlimit_core },
	{ "rlimits", TIER_L1, FENCE_T_SECCOMP, fence_rlimit_limits },
	{ "landlock home", TIER_L15, FENCE_T_SECCOMP, fence_landlock_home },
	{ "bounding set", TIER_L15, FENCE_T_SECCOMP, fence_caps_bound },
	{ "identity", TIER_L1, FENCE_T_SECCOMP, fence_caps_ids },
	{ "session keyring", TIER_L1, FENCE_T_SECCOMP, fence_ns_keyring },
	{ "capabilities", TIER_L1, FENCE_T_SECCOMP, fence_caps_clear },
	{ "parent death signal", TIER_L1, FENCE_T_SECCOMP,
	    fence_caps_pdeathsig },
	{ "no_new_privs", TIER_L15, FENCE_T_SECCOMP, fence_caps_nnp },
	{ "landlock", TIER_L15, FENCE_T_SECCOMP, fence_landlock_restrict },
	{ "seccomp", TIER_L15, FENCE_T_SECCOMP, fence_seccomp_load },
};
_Static_assert(nitems(fence_steps) <= FENCE_NSTEPS, "FENCE_NSTEPS");

/* Only one fence is being started at a time: pid 1 uses this memory. */
static struct fence_ctx	 fence_ctx_store;
static char		*fence_default_argv[2];
static uint32_t		 fence_last_step_us[FENCE_NSTEPS];

/* What each step of the last successful boot took, for measurements. */
int
fence_step_times(const char **names, uint32_t *us, int max)
{
	int	 i;

	for (i = 0; i < (int)nitems(fence_steps) && i < max; i++) {
		names[i] = fence_steps[i].st_name;
		us[i] = fence_last_step_us[i];
	}
	return (i);
}

uint64_t
fence_now_us(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000);
}

static uint32_t
fence_us32(uint64_t us)
{
	return (us > UINT32_MAX ? UINT32_MAX : (uint32_t)us);
}

/*
 * Child side: note which step failed and why; the record goes to the
 * parent when pid 1 gives up.  Returns -1 so steps can return it.
 */
int
fence_child_err(struct fence_ctx *ctx, int err, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	(void)vsnprintf(ctx->fc_st.fst_step, sizeof(ctx->fc_st.fst_step),
	    fmt, ap);
	va_end(ap);
	ctx->fc_st.fst_errno = err;
	return (-1);
}

/*
 * Child side, a pool pid 1 only: it has a copy of the fencer's whole
 * descriptor table and may wait long before execve closes it, holding
 * other fences' channels open meanwhile.  All go but stdio and what
 * its steps use.
 */
static void
fence_child_keep_fds(struct fence_ctx *ctx)
{
	int	 keep[4 + FENCE_CG_MAX], n = 0, i, j, t, from;

	keep[n++] = ctx->fc_status_fd;
	keep[n++] = ctx->fc_assign_fd;
	keep[n++] = ctx->fc_bin_mnt;
	for (i = 0; i < FENCE_CG_MAX; i++)
		keep[n++] = ctx->fc_cg_procs[i];
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && keep[j - 1] > keep[j]; j--) {
			t = keep[j];
			keep[j] = keep[j - 1];
			keep[j - 1] = t;
		}
	from = 3;
	for (i = 0; i < n; i++) {
		if (keep[i] < from)
			continue;
		if (keep[i] > from)
			(void)close_range(from, keep[i] - 1, 0);
		from = keep[i] + 1;
	}
	(void)close_range(from, ~0U, 0);
}

/*
 * Child side, first: pid 1 dies with its parent (set again after the
 * uid changes, which clears it); our copy of the status pipe's read end
 * goes, so the parent's death shows as a broken pipe; the caller's
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
	if (ctx->fc_pool)
		fence_child_keep_fds(ctx);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	for (sig = 1; sig < NSIG; sig++) {
		if (sig == SIGKILL || sig == SIGSTOP)
			continue;
		(void)sigaction(sig, &sa, NULL);
	}
	(void)umask(0);
}

/* Child side: one whole record on the status pipe. */
static int
fence_child_send(struct fence_ctx *ctx, uint32_t kind)
{
	const void	*rec = &ctx->fc_st;
	ssize_t		 n;

	ctx->fc_st.fst_kind = kind;
	n = write(ctx->fc_status_fd, rec, sizeof(struct fence_status));
	return (n == (ssize_t)sizeof(struct fence_status) ? 0 : -1);
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
	const struct fence_step	*st;
	uint64_t		 t;
	size_t			 i;

	t = fence_now_us();
	ctx->fc_st.fst_us[FENCE_T_NAMESPACES] = fence_us32(t - ctx->fc_t_step);
	ctx->fc_t_step = t;
	fence_child_early(ctx);

	for (i = 0; i < nitems(fence_steps); i++) {
		st = &fence_steps[i];
		if (ctx->fc_tier < st->st_tier)
			continue;
		ctx->fc_st.fst_step[0] = '\0';
		if (st->st_fn(ctx) == -1) {
			if (ctx->fc_st.fst_step[0] == '\0')
				fence_child_err(ctx, errno, "%s", st->st_name);
			goto fail;
		}
		t = fence_now_us();
		ctx->fc_st.fst_step_us[i] = fence_us32(t - ctx->fc_t_step);
		ctx->fc_st.fst_us[st->st_clock] += ctx->fc_st.fst_step_us[i];
		ctx->fc_t_step = t;
	}
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

static int
fence_user_valid(const char *u)
{
	size_t	 i, len;

	len = strnlen(u, FENCED_NAME_MAX);
	if (len == 0 || len >= FENCED_NAME_MAX || u[0] == '.' || u[0] == '-')
		return (0);
	for (i = 0; i < len; i++) {
		char c = u[i];

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.')
			continue;
		return (0);
	}
	return (1);
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
	ctx->fc_status_fd = ctx->fc_status_rfd = -1;
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
	return (ctx);
}

/* The status pipe: the EXEC record, then EOF at execve; or an error. */
static int
fence_status_read(int fd, struct fence_proc *proc, struct fence_status *st,
    char *err, size_t errlen)
{
	struct fence_status	 rec;
	siginfo_t		 si;
	ssize_t			 n;
	int			 execd = 0;

	for (;;) {
		n = read(fd, &rec, sizeof(rec));
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			snprintf(err, errlen, "status pipe: %s",
			    strerror(errno));
			return (-1);
		}
		if (n == 0)
			break;
		if (n != (ssize_t)sizeof(rec)) {
			snprintf(err, errlen, "status pipe: short record");
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
		}
	}
	if (execd)
		return (0);
	/* Pid 1 died without a word: say how. */
	memset(&si, 0, sizeof(si));
	if (waitid(P_PIDFD, proc->fp_pidfd, &si, WEXITED) == 0 &&
	    si.si_code == CLD_EXITED)
		snprintf(err, errlen, "fence pid 1 exited %d before execve",
		    si.si_status);
	else if (si.si_code == CLD_KILLED || si.si_code == CLD_DUMPED)
		snprintf(err, errlen, "fence pid 1 killed by signal %d "
		    "before execve", si.si_status);
	else
		snprintf(err, errlen, "fence pid 1 died before execve");
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
	proc->fp_pidfd = -1;
	if (fence_spec_check(spec, err, errlen) == -1)
		return (-1);
	if (fence_init(err, errlen) == -1 ||
	    fence_bin_init(spec->fs_bindir, spec->fs_init, err, errlen) == -1)
		return (-1);
	ctx = fence_ctx_prepare(spec);
	t0 = fence_now_us();

	if (fence_cgroup_create(spec, proc, ctx, err, errlen) == -1)
		goto fail;
	if (pipe2(p, O_CLOEXEC) == -1) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		goto fail;
	}
	/* fds 0-3 get replaced in pid 1: keep the status pipe above them. */
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

	if (fence_status_read(p[0], proc, &st, err, errlen) == -1)
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
 * The warm pool (docs/pool.md).  A pool pid 1 is cloned like a cold
 * one but without CLONE_VM and CLONE_VFORK: it has its own copy of the
 * fencer's memory and may wait, the fencer goes on.  It walks
 * fence_steps[] to the split point, says so on its status pipe
 * (FENCE_ST_POOLED) and blocks on its assignment socket; the take
 * (fence_pool_take()) moves its cgroups to the boot's names, writes the
 * boot's limits, and sends it the boot's key, ids, user and limits with
 * the agent's channel and the home, after which it walks the rest of
 * the steps and executes the agent as a cold pid 1 does.
 */

/*
 * Child side, a pool pid 1 before it waits: what it writes after the
 * assignment (its context, its stack) is still the fencer's memory,
 * shared copy-on-write since the clone; a write fault on each page at
 * the take would be the boot's time.  Each is written once now.
 */
static void
fence_pool_prefault(struct fence_ctx *ctx)
{
	volatile char	*p = (volatile char *)ctx;
	long		 pg = sysconf(_SC_PAGESIZE);
	size_t		 i;
	char		 here;

	for (i = 0; i < sizeof(*ctx); i += pg)
		p[i] = p[i];
	p[sizeof(*ctx) - 1] = p[sizeof(*ctx) - 1];
	fence_ns_stack_touch(&here);
}

/*
 * len bytes of buf with nfds descriptors (1 or 2) in one message on s:
 * what sendmsg() returns, tried again on EINTR.
 */
static ssize_t
fence_send_fds(int s, const void *buf, size_t len, const int *fds, int nfds)
{
	union {
		struct cmsghdr	 hdr;
		char		 buf[CMSG_SPACE(2 * sizeof(int))];
	}		 cm;
	struct cmsghdr	*c;
	struct msghdr	 msg;
	struct iovec	 iov;
	ssize_t		 n;

	if (nfds < 1 || nfds > 2) {
		errno = EINVAL;
		return (-1);
	}
	memset(&msg, 0, sizeof(msg));
	memset(&cm, 0, sizeof(cm));
	iov.iov_base = (void *)buf;
	iov.iov_len = len;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cm.buf;
	msg.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
	c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(nfds * sizeof(int));
	memcpy(CMSG_DATA(c), fds, nfds * sizeof(int));
	do
		n = sendmsg(s, &msg, MSG_NOSIGNAL);
	while (n == -1 && errno == EINTR);
	return (n);
}

/*
 * Child side, a pool pid 1 once assigned: the keeper of its memory.  A
 * pool pid 1 has its own copy of the fencer's address space (it was
 * cloned as fork() clones), and its execve of the agent used to tear
 * that copy down before the agent could start: 0.3 to 0.67 ms of every
 * pooled boot, against 0.1 to 0.2 ms for a cold pid 1, which shares the
 * fencer's.  The keeper is a second process cloned with CLONE_VM, so it
 * holds a reference to that same copy: the execve then only drops pid
 * 1's, and the copy is torn down when the keeper exits, which it does
 * once the execve has closed its pipe (close-on-exec: it reads end of
 * file), beside the agent's start.  The agent reaps it before it
 * answers READY (agent.c, agent_reap_inherited()), so nothing of the
 * pool's time is left in the fence when it first answers.
 *
 * It is made after the assignment, when the take has already put pid 1
 * in the boot's cgroups (renamed on v1, moved on v2), so it is born in
 * them and counts against the boot's pids limit until it is reaped; a
 * waiting pool fence is pid 1 alone.  It runs nothing but fencer code:
 * it closes every descriptor but the read end of its pipe (its copy of
 * the table, which never holds the status pipe: fence_fd_park()),
 * reads and exits.  It shares pid 1's memory, the
 * thread pointer included, so it calls nothing but close_range() and
 * read() on arguments that cannot fail, with every signal blocked as
 * pid 1's are until its execve (no EINTR, so errno is never written),
 * and returns to glibc's clone(), which exits.  It is in the fence's
 * pid namespace: it dies with pid 1 however the fence ends.  If it
 * cannot be made (the pids limit, say), the boot goes on without it and
 * only loses the time it saves.  Not under AddressSanitizer, whose
 * interceptors keep per-thread state.
 */
#ifndef __SANITIZE_ADDRESS__
#define FENCE_KEEPER_STACK	(16 * 1024)

static char	 fence_keeper_stack[FENCE_KEEPER_STACK]
		    __attribute__((aligned(64)));

static int
fence_keeper(void *arg)
{
	int	 fd = (int)(intptr_t)arg;
	char	 c;

	if (fd > 0)
		(void)close_range(0, fd - 1, 0);
	(void)close_range(fd + 1, ~0U, 0);
	while (read(fd, &c, 1) > 0)
		;
	return (0);	/* glibc's clone() exits with it */
}

/*
 * The status pipe is parked in a socket of pid 1's while the keeper is
 * cloned, so that the keeper's copy of the descriptor table never holds
 * it: the fencer waits for that pipe's end at the execve, and must not
 * wait for the keeper's first turn on a cpu besides (its close_range()
 * of the rest: under load a new process may wait milliseconds for it).
 * What else the keeper's copy holds for that moment (the agent's
 * channel, the home's mount, the ruleset) nobody waits on.
 */
static int
fence_fd_park(int s, int fd)
{
	char	 b = 0;

	return (fence_send_fds(s, &b, 1, &fd, 1) == 1 ? 0 : -1);
}

/* The parked descriptor back, above 0-3 (pid 1 replaces those); or -1. */
static int
fence_fd_unpark(int s)
{
	union {
		struct cmsghdr	 hdr;
		char		 buf[CMSG_SPACE(sizeof(int))];
	}		 cm;
	struct cmsghdr	*c;
	struct msghdr	 msg;
	struct iovec	 iov;
	char		 b;
	int		 fd, nfd;

	memset(&msg, 0, sizeof(msg));
	iov.iov_base = &b;
	iov.iov_len = 1;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cm.buf;
	msg.msg_controllen = sizeof(cm.buf);
	if (recvmsg(s, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT) != 1 ||
	    (msg.msg_flags & MSG_CTRUNC) || (c = CMSG_FIRSTHDR(&msg)) ==
	    NULL || c->cmsg_level != SOL_SOCKET ||
	    c->cmsg_type != SCM_RIGHTS || c->cmsg_len != CMSG_LEN(sizeof(int)))
		return (-1);
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	if (fd > 3)
		return (fd);
	nfd = fcntl(fd, F_DUPFD_CLOEXEC, 4);
	(void)close(fd);
	return (nfd);
}

static void
fence_pool_keeper(struct fence_ctx *ctx)
{
	int	 p[2], sp[2], fd;
	pid_t	 pid;

	if (pipe2(p, O_CLOEXEC) == -1)
		return;
	/* Out of the way of 0-3, which pid 1 replaces before its execve. */
	if ((fd = fcntl(p[1], F_DUPFD_CLOEXEC, 64)) == -1) {
		(void)close(p[0]);
		(void)close(p[1]);
		return;
	}
	(void)close(p[1]);
	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sp) == -1) {
		(void)close(p[0]);
		(void)close(fd);
		return;
	}
	if (fence_fd_park(sp[0], ctx->fc_status_fd) == -1) {
		(void)close(sp[0]);
		(void)close(sp[1]);
		(void)close(p[0]);
		(void)close(fd);
		return;
	}
	(void)close(ctx->fc_status_fd);
	ctx->fc_status_fd = -1;
	pid = clone(fence_keeper, fence_keeper_stack + FENCE_KEEPER_STACK,
	    CLONE_VM | SIGCHLD, (void *)(intptr_t)p[0]);
	(void)close(p[0]);
	if (pid == -1)
		(void)close(fd);
	/* Else fd stays open, close-on-exec, until the execve. */
	ctx->fc_status_fd = fence_fd_unpark(sp[1]);
	(void)close(sp[0]);
	(void)close(sp[1]);
	if (ctx->fc_status_fd == -1)
		_exit(127);	/* the fencer reads the pipe's end, no record */
}
#else
static void
fence_pool_keeper(struct fence_ctx *ctx)
{
}
#endif

/*
 * Child side, the split point: nothing to do for a cold boot.  A pool
 * pid 1 reads its one assignment here.  What it built before is not
 * the boot's time: its clocks start again.
 */
static int
fence_pool_assigned(struct fence_ctx *ctx)
{
	struct fence_spec	*s = &ctx->fc_spec_own;
	struct fence_assign	 a;
	union {
		struct cmsghdr	 hdr;
		char		 buf[CMSG_SPACE(2 * sizeof(int))];
	}			 cm;
	struct cmsghdr		*c;
	struct msghdr		 msg;
	struct iovec		 iov;
	int			 fds[2];
	ssize_t			 n;

	if (!ctx->fc_pool)
		return (0);
	fence_pool_prefault(ctx);
	if (fence_child_send(ctx, FENCE_ST_POOLED) == -1)
		_exit(127);	/* the fencer is gone */
	memset(&msg, 0, sizeof(msg));
	iov.iov_base = &a;
	iov.iov_len = sizeof(a);
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cm.buf;
	msg.msg_controllen = sizeof(cm.buf);
	do
		n = recvmsg(ctx->fc_assign_fd, &msg, MSG_CMSG_CLOEXEC);
	while (n == -1 && errno == EINTR);
	if (n == 0)
		_exit(0);	/* dropped from the pool */
	if (n == -1)
		return (fence_child_err(ctx, errno, "read the assignment"));
	(void)close(ctx->fc_assign_fd);
	ctx->fc_assign_fd = -1;
	c = CMSG_FIRSTHDR(&msg);
	if (n != (ssize_t)sizeof(a) || (msg.msg_flags & (MSG_TRUNC |
	    MSG_CTRUNC)) || c == NULL || c->cmsg_level != SOL_SOCKET ||
	    c->cmsg_type != SCM_RIGHTS ||
	    c->cmsg_len != CMSG_LEN(2 * sizeof(int)))
		return (fence_child_err(ctx, EBADMSG, "assignment"));
	memcpy(fds, CMSG_DATA(c), sizeof(fds));
	a.fa_key[sizeof(a.fa_key) - 1] = '\0';
	a.fa_user[sizeof(a.fa_user) - 1] = '\0';
	if (a.fa_magic != FENCE_ASSIGN_MAGIC || !fence_key_valid(a.fa_key) ||
	    !fence_user_valid(a.fa_user) || a.fa_uid == 0 ||
	    a.fa_uid == (uint32_t)-1 || a.fa_gid == 0 ||
	    a.fa_gid == (uint32_t)-1)
		return (fence_child_err(ctx, EBADMSG, "assignment"));

	strlcpy(s->fs_key, a.fa_key, sizeof(s->fs_key));
	strlcpy(s->fs_user, a.fa_user, sizeof(s->fs_user));
	s->fs_uid = a.fa_uid;
	s->fs_gid = a.fa_gid;
	s->fs_limits = a.fa_limits;
#ifdef FENCED_TEST_HOOKS
	ctx->fc_noseccomp = a.fa_noseccomp;
#endif
	snprintf(ctx->fc_home_mnt, sizeof(ctx->fc_home_mnt), "home/%s",
	    s->fs_user);
	snprintf(ctx->fc_home_abs, sizeof(ctx->fc_home_abs), "/home/%s",
	    s->fs_user);
	fence_ctx_env(ctx, s);
	ctx->fc_chan = fds[0];
	ctx->fc_home_tree = fds[1];

	memset(ctx->fc_st.fst_us, 0, sizeof(ctx->fc_st.fst_us));
	memset(ctx->fc_st.fst_step_us, 0, sizeof(ctx->fc_st.fst_step_us));
	ctx->fc_t_step = fence_now_us();
	/* Its clone is this step's time, the boot's. */
	fence_pool_keeper(ctx);
	return (0);
}

/*
 * fenced -d: where a take's time went, the fencer's parts (checks, the
 * home's mount, cgroups and limits, then pid 1 from the send to its
 * execve) and pid 1's steps after the split point.
 */
static void
fence_pool_log(const uint32_t *step_us, uint64_t checks, uint64_t home,
    uint64_t cgroups, uint64_t pid1)
{
	char	 buf[512];
	size_t	 i, len = 0;
	int	 after = 0, n;

	if (log_getverbose() < 1)
		return;
	buf[0] = '\0';
	for (i = 0; i < nitems(fence_steps); i++) {
		if (fence_steps[i].st_fn == fence_pool_assigned)
			after = 1;	/* from here: its own, the keeper */
		if (!after || step_us[i] == 0)
			continue;
		n = snprintf(buf + len, sizeof(buf) - len, "%s%s %u",
		    len > 0 ? ", " : "", fence_steps[i].st_name, step_us[i]);
		if (n < 0 || (size_t)n >= sizeof(buf) - len)
			break;
		len += n;
	}
	log_debug("pool take: checks %llu us, home %llu us, cgroups %llu us, "
	    "pid 1 to its execve %llu us; steps (us): %s",
	    (unsigned long long)checks, (unsigned long long)home,
	    (unsigned long long)cgroups, (unsigned long long)pid1, buf);
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
	pp->pp_proc.fp_pidfd = -1;
	pp->pp_status = pp->pp_assign = -1;
	if (fence_pool_spec_check(spec, err, errlen) == -1)
		return (-1);
	if (fence_init(err, errlen) == -1 ||
	    fence_bin_init(spec->fs_bindir, spec->fs_init, err, errlen) == -1)
		return (-1);
	t0 = fence_now_us();
	ctx = fence_ctx_prepare(spec);
	ctx->fc_pool = 1;
	ctx->fc_spec_own = *spec;
	ctx->fc_spec = &ctx->fc_spec_own;

	if (fence_cgroup_create(spec, &pp->pp_proc, ctx, err, errlen) == -1)
		goto fail;
	if (pipe2(p, O_CLOEXEC) == -1 ||
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
 * The pool pid 1's status pipe is readable: 1 once it waits at the split
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
		snprintf(err, errlen, "status pipe: %s", strerror(errno));
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
	int			 fds[2], tree = -1;
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
	/* The fencer gave up a capability since: a cold pid 1 lacks it. */
	if (fence_capbset() != pp->pp_capbset) {
		fence_pool_drop(pp);
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
#ifdef FENCED_TEST_HOOKS
	a.fa_noseccomp = spec->fs_test_noseccomp;
#endif
	fds[0] = spec->fs_chan;
	fds[1] = tree;
	tsend = fence_now_us();
	n = fence_send_fds(pp->pp_assign, &a, sizeof(a), fds, 2);
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
	if (fence_status_read(pp->pp_status, proc, &st, err, errlen) == -1) {
		(void)close(pp->pp_status);
		pp->pp_status = -1;
		(void)fence_stop(proc);
		memset(pp, 0, sizeof(*pp));
		pp->pp_status = pp->pp_assign = -1;
		pp->pp_proc.fp_pidfd = pp->pp_proc.fp_pid = -1;
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
	return (0);
}
