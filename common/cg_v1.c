/*
 * What only cgroup v1 has: a hierarchy per controller, so a fence has a
 * directory in each of memory, pids and cpu; limits in
 * memory.limit_in_bytes (and memory.memsw.limit_in_bytes where swap is
 * counted), pids.max and cpu.cfs_*; OOM kills in memory.oom_control; a
 * cgroup renamed whole with rename(2).
 *
 * A process joins by writing "0" to `tasks', not cgroup.procs: the
 * joiner is one thread (native pid 1, cloned with CLONE_VM and without
 * CLONE_THREAD, or a forked child), so moving the thread moves the
 * process, and the kernel moves the writing thread itself without
 * taking the global lock a whole-process move takes (a percpu rwsem
 * whose write side waits out an RCU grace period when it was idle):
 * measured here 0.05 ms against 9 to 29 ms for cgroup.procs.
 */
#include <sys/types.h>

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fenced.h"
#include "cg_impl.h"

const char	 cg_v1_procs[] = "tasks";

int
cg_v1_limit(int which, const char *dir, const struct fence_limits *l,
    char *err, size_t errlen)
{
	char	 v[32];

	switch (which) {
	case CG_MEMORY:
		/* A child inherits oom_kill_disable: the fence must not. */
		if (cg_write(dir, "memory.oom_control", "0", err,
		    errlen) == -1)
			return (-1);
		if (l->fl_memory == 0)
			return (0);
		snprintf(v, sizeof(v), "%" PRIu64, l->fl_memory);
		if (cg_write(dir, "memory.limit_in_bytes", v, err,
		    errlen) == -1 ||
		    cg_memory_check(dir, "memory.limit_in_bytes",
		    l->fl_memory, err, errlen) == -1)
			return (-1);
		/* No swap beyond the limit either, where swap is counted. */
		if (cg_swap_counted(dir) &&
		    cg_write(dir, "memory.memsw.limit_in_bytes", v, err,
		    errlen) == -1)
			return (-1);
		return (0);
	case CG_CPU:
		if (l->fl_cpu_milli == 0)
			return (0);
		snprintf(v, sizeof(v), "%d", CG_CPU_PERIOD);
		if (cg_write(dir, "cpu.cfs_period_us", v, err, errlen) == -1)
			return (-1);
		snprintf(v, sizeof(v), "%llu", (unsigned long long)
		    l->fl_cpu_milli * CG_CPU_PERIOD / 1000);
		return (cg_write(dir, "cpu.cfs_quota_us", v, err, errlen));
	}
	return (0);
}

/*
 * memsw may never be below the memory limit: a limit going up is raised
 * there first (a pool fence taken by a boot).  Fails harmlessly when the
 * limit goes down, which cg_v1_limit() then writes in order.
 */
void
cg_v1_memsw_raise(const char *dir, const struct fence_limits *l)
{
	char	 v[32];

	if (l->fl_memory == 0 || !cg_swap_counted(dir))
		return;
	snprintf(v, sizeof(v), "%" PRIu64, l->fl_memory);
	(void)cg_write(dir, "memory.memsw.limit_in_bytes", v, NULL, 0);
}

/*
 * rename(2) moves a cgroup within its parent, processes and all.  A
 * crashed fencer's empty leftover of the new name goes first, as in
 * cg_mkdir().
 */
int
cg_v1_rename(const char *old, const char *path, char *err, size_t errlen)
{
	if (rename(old, path) == 0)
		return (0);
	if ((errno != EEXIST && errno != ENOTEMPTY && errno != EBUSY) ||
	    rmdir(path) == -1 || rename(old, path) == -1) {
		snprintf(err, errlen, "rename cgroup %s to %s: %s", old, path,
		    strerror(errno));
		return (-1);
	}
	return (0);
}

/* The OOM kills the memory cgroup dir counted, or -1. */
int
cg_v1_oom(const char *dir)
{
	return (cg_oom_kills(dir, "memory.oom_control"));
}

/*
 * What v1 counts: memory.usage_in_bytes and memory.max_usage_in_bytes,
 * pids.current (no peak), and cpuacct.usage (ns) where cpuacct shares
 * the cpu hierarchy (cpu,cpuacct).
 */
const struct cg_usage_file cg_v1_usage[] = {
	{ CG_MEMORY, "memory.usage_in_bytes", NULL, CG_USAGE_MEM, 1 },
	{ CG_MEMORY, "memory.max_usage_in_bytes", NULL, CG_USAGE_MEM_PEAK, 1 },
	{ CG_PIDS, "pids.current", NULL, CG_USAGE_PIDS, 1 },
	{ CG_CPU, "cpuacct.usage", NULL, CG_USAGE_CPU, 1000 },
	{ -1, NULL, NULL, 0, 0 }
};

/*
 * Whether the memory cgroup dir counts swap (v1 with swap accounting):
 * then a fence's limit holds for memory and swap together.
 */
int
cg_swap_counted(const char *dir)
{
	return (cg_has(dir, "memory.memsw.limit_in_bytes"));
}

/*
 * Whether a memory limit set under dir holds swap too: v1's swap
 * accounting (cg_swap_counted()), v2's memory.swap.max (cg_v2.c sets it
 * to 0 where it is).  The host doctor's question.
 */
int
cg_swap_held(const char *dir)
{
	return (cg_is_v2(dir) ? cg_has(dir, "memory.swap.max") :
	    cg_swap_counted(dir));
}
