/*
 * Resource limits of pid 1, inherited by everything in the fence, at
 * every tier (docs/limits.md): no core dumps (a core of the agent would
 * hold its bearer), and open files and processes bounded by what the
 * fence's pids limit allows.  A limit is only ever lowered: the fencer
 * cannot raise a hard limit it was given.
 *
 * RLIMIT_NOFILE is per process, so the fence as a whole could hold its
 * pids limit times as many: the per-process value is chosen so that
 * the product stays within FENCE_NOFILE_TOTAL, between FENCE_NOFILE_MIN
 * and FENCE_NOFILE_MAX.  Without that an L1 fence inherited the
 * fencer's 20,000 and held 200,000 host file descriptors.
 *
 * RLIMIT_NPROC counts every process of the uid on the host, not only
 * those of this fence, so it gets headroom above the fence's pids limit:
 * the pids cgroup is the exact bound, the rlimit the second wall.
 */
#include <sys/types.h>
#include <sys/resource.h>

#include <errno.h>

#include "fence.h"
#include "fence_impl.h"

#define FENCE_NPROC_HEADROOM	4096

static int
fence_rlimit_set(struct fence_ctx *ctx, int res, rlim_t val, const char *name)
{
	struct rlimit	 rl;

	if (getrlimit(res, &rl) == -1)
		return (fence_child_err(ctx, errno, "getrlimit %s", name));
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < val)
		val = rl.rlim_max;
	rl.rlim_cur = rl.rlim_max = val;
	if (setrlimit(res, &rl) == -1)
		return (fence_child_err(ctx, errno, "setrlimit %s", name));
	return (0);
}

/* The open files of one process of a fence with this pids limit. */
rlim_t
fence_rlimit_nofile(uint32_t pids)
{
	rlim_t	 n;

	if (pids == 0)
		return (FENCE_NOFILE_MAX);
	n = FENCE_NOFILE_TOTAL / pids;
	if (n < FENCE_NOFILE_MIN)
		return (FENCE_NOFILE_MIN);
	if (n > FENCE_NOFILE_MAX)
		return (FENCE_NOFILE_MAX);
	return (n);
}

int
fence_rlimit_core(struct fence_ctx *ctx)
{
	return (fence_rlimit_set(ctx, RLIMIT_CORE, 0, "core"));
}

int
fence_rlimit_limits(struct fence_ctx *ctx)
{
	const struct fence_limits *l = &ctx->fc_spec->fs_limits;

	if (l->fl_pids == 0)
		return (0);
	return (fence_rlimit_set(ctx, RLIMIT_NPROC,
	    (rlim_t)l->fl_pids + FENCE_NPROC_HEADROOM, "nproc"));
}

/*
 * RLIMIT_NOFILE, last before execve: until then pid 1 holds a copy of
 * every descriptor of the fencer's (a pidfd per fence, close-on-exec),
 * and with the fence's limit in force any descriptor a later step opens
 * (the Landlock ruleset, /dev/null) would find no number below it once
 * the fencer holds as many: bench/density stopped at 256 fences so.
 */
int
fence_rlimit_nofile_set(struct fence_ctx *ctx)
{
	return (fence_rlimit_set(ctx, RLIMIT_NOFILE,
	    fence_rlimit_nofile(ctx->fc_spec->fs_limits.fl_pids), "nofile"));
}
