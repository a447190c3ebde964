/*
 * The cgroups of a native fence (and so of a vm fence's QEMU), through
 * the one cgroup module (common/cg.h): <parent>/<name> for memory, pids
 * and cpu, where <parent> is what the fencer passes and <name> the name
 * it chose (<owner>.<key>), or the key.  The parent creates them with
 * the spec's limits.  On cgroup v2, pid 1 is born in the fence's cgroup
 * (clone3 with CLONE_INTO_CGROUP, common/cg_clone.c): the parent opens
 * its directory for the clone (fence_ns.c), and nothing moves pid 1.
 * Elsewhere (v1's hierarchies, a kernel or a seccomp profile without
 * clone3) the parent opens for pid 1 the file that joins each; pid 1
 * joins by writing "0" to it (cg_join()) before it does anything else.
 * Either way pid 1 then unshares its cgroup namespace (fence_ns.c).  A pool fence
 * taken by a boot has its cgroups renamed (v1) or pid 1 moved (v2) to
 * the boot's, with the boot's limits (cg_fence_adopt()); pid 1 makes
 * its cgroup namespace after the assignment (fence.c), so the namespace
 * is rooted at the boot's cgroup, as a cold boot's is.
 */
#include <sys/types.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fence.h"
#include "fence_impl.h"
#include "cg.h"

int
fence_cgroup_create(const struct fence_spec *s, struct fence_proc *proc,
    struct fence_ctx *ctx, char *err, size_t errlen)
{
	return (cg_fence_make(s->fs_cgroup_parent, s->fs_cgroup_name != NULL ?
	    s->fs_cgroup_name : s->fs_key, &s->fs_limits, proc->fp_cgroup,
	    ctx->fc_cg_procs, &ctx->fc_cg_born, err, errlen));
}

/*
 * Child side.  The fds are closed in pid 1 only; ctx is the parent's
 * memory too, which closes its own copies.
 */
int
fence_cgroup_join(struct fence_ctx *ctx)
{
	int	 i;

	for (i = 0; i < FENCE_CG_MAX; i++) {
		if (ctx->fc_cg_procs[i] == -1)
			continue;
		if (cg_join(ctx->fc_cg_procs[i]) == -1)
			return (fence_child_err(ctx, errno, "join %s cgroup",
			    cg_ctrl[i]));
		(void)close(ctx->fc_cg_procs[i]);
	}
	return (0);
}

void
fence_cgroup_close(struct fence_ctx *ctx)
{
	int	 i;

	for (i = 0; i < FENCE_CG_MAX; i++)
		if (ctx->fc_cg_procs[i] != -1) {
			(void)close(ctx->fc_cg_procs[i]);
			ctx->fc_cg_procs[i] = -1;
		}
	if (ctx->fc_cg_born != -1) {
		(void)close(ctx->fc_cg_born);
		ctx->fc_cg_born = -1;
	}
}

/* SIGKILL whatever is left in the fence's cgroups. */
int
fence_cgroup_kill(const struct fence_proc *proc)
{
	return (cg_fence_kill(proc->fp_cgroup, 0, 1));
}

/* The OOM kills the memory cgroup counted, or -1 if there is none. */
int
fence_cgroup_oom(const struct fence_proc *proc)
{
	return (cg_fence_oom(proc->fp_cgroup[FENCE_CG_MEMORY]));
}

/* Descriptors of its memory and pids counters (docs/denials.md); -1. */
void
fence_cgroup_events(const struct fence_proc *proc, int *memfd, int *pidsfd)
{
	cg_fence_events_open(proc->fp_cgroup[FENCE_CG_MEMORY],
	    proc->fp_cgroup[FENCE_CG_PIDS], memfd, pidsfd);
}

int
fence_cgroup_remove(struct fence_proc *proc, char *err, size_t errlen)
{
	return (cg_fence_remove(proc->fp_cgroup, err, errlen));
}

int
fence_cgroup_adopt(const struct fence_spec *s, struct fence_proc *proc,
    const struct fence_limits *had, char *err, size_t errlen)
{
	return (cg_fence_adopt(s->fs_cgroup_parent, s->fs_cgroup_name !=
	    NULL ? s->fs_cgroup_name : s->fs_key, proc->fp_pid, &s->fs_limits,
	    had, proc->fp_cgroup, err, errlen));
}
