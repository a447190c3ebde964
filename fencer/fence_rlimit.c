/*
 * Resource limits of pid 1, inherited by everything in the fence.  Every
 * tier gets no core dumps (a core of the agent would hold its bearer);
 * from L1.5 on, open files and processes are bounded too.  A limit is
 * only ever lowered: the fencer cannot raise a hard limit it was given.
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

#define FENCE_NOFILE		1024
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

int
fence_rlimit_core(struct fence_ctx *ctx)
{
	return (fence_rlimit_set(ctx, RLIMIT_CORE, 0, "core"));
}

int
fence_rlimit_limits(struct fence_ctx *ctx)
{
	const struct fence_limits *l = &ctx->fc_spec->fs_limits;

	if (fence_rlimit_set(ctx, RLIMIT_NOFILE, FENCE_NOFILE, "nofile") == -1)
		return (-1);
	return (fence_rlimit_set(ctx, RLIMIT_NPROC,
	    (rlim_t)l->fl_pids + FENCE_NPROC_HEADROOM, "nproc"));
}
