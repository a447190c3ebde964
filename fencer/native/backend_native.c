/*
 * The native backend: a fence built from the host kernel's own
 * facilities (fence.c and the fence_*.c beside it), its pid 1 a child
 * of the fencer.  What the fencer decided (struct fence, struct
 * backend_boot) becomes a struct fence_spec; what fence_start() measured
 * becomes the state the fencer reports.  Its warm pool (pool.c) is its
 * fb_warm_* hooks, and the pid 1s of the pool's fences are its
 * fb_child's.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fenced.h"
#include "msg.h"
#include "fencer.h"
#include "backend.h"
#include "fence.h"
#include "native.h"
#include "pool.h"

_Static_assert(BACKEND_ERR_MAX >= FENCE_ERR_MAX, "BACKEND_ERR_MAX");

/* The native fence f and bb describe; its channel and descriptors aside. */
void
native_spec(const struct fence *f, const struct backend_boot *bb,
    struct fence_spec *spec)
{
	int	 i;

	memset(spec, 0, sizeof(*spec));
	strlcpy(spec->fs_key, f->f_info.f_key, sizeof(spec->fs_key));
	spec->fs_cgroup_name = bb->bb_cgroup_name;
	spec->fs_tier = f->f_info.f_tier;
	spec->fs_uid = f->f_info.f_uid;
	spec->fs_gid = f->f_gid;
	strlcpy(spec->fs_user, f->f_user, sizeof(spec->fs_user));
	strlcpy(spec->fs_home, f->f_info.f_home, sizeof(spec->fs_home));
	strlcpy(spec->fs_home_dev, bb->bb_home_dev, sizeof(spec->fs_home_dev));
	spec->fs_home_given = bb->bb_home_tree != -1;
	spec->fs_home_tree = bb->bb_home_tree;
	spec->fs_limits = f->f_info.f_limits;
	spec->fs_bindir = bb->bb_bindir;
	spec->fs_init = bb->bb_init;
	spec->fs_init_argv = bb->bb_argv;
	spec->fs_chan = -1;
	for (i = 0; i < 3; i++)
		spec->fs_cgroup_parent[i] = bb->bb_cgroup_parent[i];
	spec->fs_test_noseccomp = bb->bb_test_noseccomp;
}

/* What fence_start() measured, into the state the fencer reports. */
void
native_started(struct fence *f, const struct fence_proc *p)
{
	f->f_info.f_pid = p->fp_pid;
	f->f_info.f_landlock_abi = p->fp_landlock_abi;
	f->f_info.f_landlock = p->fp_landlock;
	f->f_info.f_timings.t_namespaces_us = p->fp_timings.ft_namespaces_us;
	f->f_info.f_timings.t_mounts_us = p->fp_timings.ft_mounts_us;
	f->f_info.f_timings.t_cgroup_us = p->fp_timings.ft_cgroup_us;
	f->f_info.f_timings.t_seccomp_us = p->fp_timings.ft_seccomp_us;
	f->f_info.f_timings.t_exec_us = p->fp_timings.ft_exec_us;
	f->f_info.f_timings.t_take_us = p->fp_timings.ft_take_us;
	f->f_info.f_pooled = p->fp_pooled;
}

static int
native_boot(struct fence *f, const struct backend_boot *bb, int *chan,
    char *err, size_t errlen)
{
	struct fence_proc *p = f->f_be;
	struct fence_spec spec;
	int		 sp[2], r;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) == -1) {
		snprintf(err, errlen, "socketpair: %s", strerror(errno));
		return (-1);
	}
	native_spec(f, bb, &spec);
	spec.fs_chan = sp[1];
	spec.fs_quiet = !fencer_self.ps_conf.c_observe_denials;
	/* A fence of the warm pool if one is ready, else a cold boot. */
	r = f->f_cold ? 1 : pool_take(&spec, p, err, errlen);
	if (r == 1)
		r = fence_start(&spec, p, err, errlen);
	if (r == -1) {
		close(sp[0]);
		close(sp[1]);
		return (-1);
	}
	close(sp[1]);
	*chan = sp[0];
	native_started(f, p);
	/* Its listener is the fencer's now (fencer_denial.c). */
	f->f_notify_fd = p->fp_notify_fd;
	p->fp_notify_fd = -1;
	if (f->f_notify_fd == -1 && f->f_info.f_tier >= TIER_L15)
		snprintf(f->f_info.f_denials_note,
		    sizeof(f->f_info.f_denials_note), "system calls refused "
		    "by seccomp are not observed: %s", spec.fs_quiet ?
		    "observe denials no" : fence_seccomp_unobserved() != NULL ?
		    fence_seccomp_unobserved() : "no listener");
	return (0);
}

static void
native_reaped(struct fence *f)
{
	struct fence_proc *p = f->f_be;

	p->fp_pid = -1;		/* fence_stop() must not wait for it */
}

static int
native_stop(struct fence *f, int *oom)
{
	struct fence_proc *p = f->f_be;

	*oom = fence_oom_killed(p);
	return (fence_stop(p));
}

/*
 * What every native boot needs of the host before its own steps
 * (fence_init(): the seccomp program, the capabilities, the mounts'
 * layout): a boot is refused with its reason when it fails.
 */
static const char *
native_unavailable(void)
{
	static char	 err[BACKEND_ERR_MAX];

	if (fence_init(err, sizeof(err)) == -1)
		return (err);
	return (NULL);
}

/*
 * The doctor's row of Landlock: the second wall of L1.5 and L2 fences
 * (fence_landlock.c).  Without it they are still built; with an ABI
 * before 6 their abstract sockets and signals are not scoped.
 */
static void
native_doctor(char *detail, size_t len)
{
	char	 err[BACKEND_ERR_MAX], d[64];
	int	 abi;

	if (fence_init(err, sizeof(err)) == -1)
		return;
	abi = fence_landlock_abi();
	snprintf(d, sizeof(d), "Landlock ABI %d", abi);
	if (abi <= 0)
		fencer_doctor_row(CHECK_HOST, "landlock", CHECK_WARN, "no "
		    "Landlock: L1.5 and L2 fences have no second wall behind "
		    "their mounts", "a kernel of 5.13 or later with landlock "
		    "in its lsm= list (CONFIG_SECURITY_LANDLOCK)", d);
	else if (abi < 6)
		fencer_doctor_row(CHECK_HOST, "landlock", CHECK_WARN,
		    "Landlock without scoping: abstract unix sockets and "
		    "signals outside a fence are not fenced off by it",
		    "a kernel of 6.12 or later (Landlock ABI 6)", d);
	else
		fencer_doctor_row(CHECK_HOST, "landlock", CHECK_OK, "Landlock "
		    "with scoping of sockets and signals", NULL, d);
}

static void
native_limit_fds(struct fence *f, int *memfd, int *pidsfd)
{
	fence_cgroup_events(f->f_be, memfd, pidsfd);
}

/* The fencer reaped pid: a pool fence's pid 1, or none of ours. */
static int
native_child(pid_t pid, int status)
{
	return (pool_reaped(pid));
}

const struct fencer_backend backend_native = {
	.fb_id = BACKEND_NATIVE,
	.fb_bin_dir = FENCE_BIN_DIR,
	.fb_state_size = sizeof(struct fence_proc),
	.fb_fdpass = 1,
	.fb_probe = {
		.pt_kernel = PROBE_KERNEL_HOST,
		.pt_egress = 1,
		.pt_home = "bind mount of the host folder",
	},
	.fb_unavailable = native_unavailable,
	.fb_doctor = native_doctor,
	.fb_refusal_errno = fence_seccomp_errno,
	.fb_limit_fds = native_limit_fds,
	.fb_boot = native_boot,
	.fb_reaped = native_reaped,
	.fb_stop = native_stop,
	.fb_child = native_child,
	.fb_warm_start = pool_start,
	.fb_warm_reload = pool_configured,
	.fb_warm_refill = pool_kick,
	.fb_warm_fini = pool_fini,
};
