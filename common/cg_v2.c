/*
 * What only cgroup v2 has: one hierarchy, so a fence's controllers share
 * one directory; limits in memory.max, memory.swap.max, pids.max and
 * cpu.max; a parent hands each controller down to its children through
 * cgroup.subtree_control, and a cgroup that hands any down holds no
 * process (the no-internal-processes rule); cgroup.kill; OOM kills in
 * memory.events; no rename (kernfs answers EPERM), so a process is
 * moved into a new cgroup instead.  A process joins through
 * cgroup.procs: v2 has `tasks' only in threaded subtrees.
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

const char	 cg_v2_procs[] = "cgroup.procs";

int
cg_v2_limit(int which, const char *dir, const struct fence_limits *l,
    char *err, size_t errlen)
{
	char	 v[64];

	switch (which) {
	case CG_MEMORY:
		if (l->fl_memory == 0)
			return (0);
		snprintf(v, sizeof(v), "%" PRIu64, l->fl_memory);
		if (cg_write(dir, "memory.max", v, err, errlen) == -1 ||
		    cg_memory_check(dir, "memory.max", l->fl_memory,
		    err, errlen) == -1)
			return (-1);
		/* No swap at all, where the kernel counts it. */
		if (cg_has(dir, "memory.swap.max") &&
		    cg_write(dir, "memory.swap.max", "0", err, errlen) == -1)
			return (-1);
		return (0);
	case CG_CPU:
		if (l->fl_cpu_milli == 0)
			return (0);
		snprintf(v, sizeof(v), "%llu %d", (unsigned long long)
		    l->fl_cpu_milli * CG_CPU_PERIOD / 1000, CG_CPU_PERIOD);
		return (cg_write(dir, "cpu.max", v, err, errlen));
	}
	return (0);
}

/*
 * The controllers of want that dir does not hand down yet, handed down
 * in one write ("+memory +pids +cpu").
 */
int
cg_v2_enable(const char *dir, const int want[CG_NCTRL], char *err,
    size_t errlen)
{
	char	 buf[512], add[64];
	int	 i;

	if (file_read_small(dir, "cgroup.subtree_control", buf,
	    sizeof(buf)) == -1) {
		snprintf(err, errlen, "read %s/cgroup.subtree_control: %s",
		    dir, strerror(errno));
		return (-1);
	}
	add[0] = '\0';
	for (i = 0; i < CG_NCTRL; i++)
		if (want[i] && !word_listed(buf, cg_ctrl[i]))
			snprintf(add + strlen(add), sizeof(add) -
			    strlen(add), "%s+%s", add[0] ? " " : "",
			    cg_ctrl[i]);
	if (add[0] == '\0' || cg_write(dir, "cgroup.subtree_control", add,
	    NULL, 0) == 0)
		return (0);
	if (errno == EBUSY)
		snprintf(err, errlen, "%s holds processes, so cgroup v2 lets "
		    "it hand no controller down (%s): run fenced alone in a "
		    "cgroup of its own (a systemd unit with Delegate=yes) or "
		    "in the root cgroup", dir, add);
	else
		snprintf(err, errlen, "write %s to %s/cgroup.subtree_control: "
		    "%s", add, dir, strerror(errno));
	return (-1);
}

/*
 * Take back every controller dir hands down ("-memory -pids -cpu" for
 * what its cgroup.subtree_control lists), in one write.
 */
int
cg_v2_disable(const char *dir)
{
	char	 buf[512], want[512], *tok, *save;

	if (file_read_small(dir, "cgroup.subtree_control", buf,
	    sizeof(buf)) == -1)
		return (-1);
	want[0] = '\0';
	for (tok = strtok_r(buf, " \n", &save); tok != NULL;
	    tok = strtok_r(NULL, " \n", &save))
		if ((size_t)snprintf(want + strlen(want), sizeof(want) -
		    strlen(want), "%s-%s", want[0] ? " " : "", tok) >=
		    sizeof(want) - strlen(want))
			return (-1);
	return (want[0] == '\0' ? 0 :
	    cg_write(dir, "cgroup.subtree_control", want, NULL, 0));
}

/* Every process in dir and below it killed at once, if this kernel can. */
int
cg_v2_kill(const char *dir)
{
	return (cg_write(dir, "cgroup.kill", "1", NULL, 0));
}

/* The OOM kills the memory cgroup dir counted, or -1. */
int
cg_v2_oom(const char *dir)
{
	return (cg_oom_kills(dir, "memory.events"));
}

/*
 * What v2 counts: memory.current and memory.peak (5.19), pids.current
 * and pids.peak (6.13), cpu.stat's usage_usec (in every cgroup, the
 * cpu controller enabled or not).
 */
const struct cg_usage_file cg_v2_usage[] = {
	{ CG_MEMORY, "memory.current", NULL, CG_USAGE_MEM, 1 },
	{ CG_MEMORY, "memory.peak", NULL, CG_USAGE_MEM_PEAK, 1 },
	{ CG_PIDS, "pids.current", NULL, CG_USAGE_PIDS, 1 },
	{ CG_PIDS, "pids.peak", NULL, CG_USAGE_PIDS_PEAK, 1 },
	{ CG_CPU, "cpu.stat", "usage_usec", CG_USAGE_CPU, 1 },
	{ -1, NULL, NULL, 0, 0 }
};

/*
 * pid, alone in cgroup old, moves to the new cgroup path, which is made
 * for it; old is removed.  On failure nothing new is left.
 */
int
cg_v2_move(const char *old, const char *path, pid_t pid, char *err,
    size_t errlen)
{
	char	 v[32];

	if (cg_mkdir(path, err, errlen) == -1)
		return (-1);
	snprintf(v, sizeof(v), "%d", (int)pid);
	if (cg_write(path, cg_v2_procs, v, err, errlen) == -1) {
		(void)rmdir(path);
		return (-1);
	}
	/* Empty now; were it not, the daemon's exit sweeps its folder. */
	(void)rmdir(old);
	return (0);
}

/* The calling process, whole, into dir. */
int
cg_v2_enter(const char *dir)
{
	return (cg_write(dir, cg_v2_procs, "0", NULL, 0));
}

/* Whether dir holds no process but the caller. */
int
cg_v2_only_us(const char *dir)
{
	char		 path[PATH_MAX], line[64];
	FILE		*fp;
	int		 alone = 1;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir,
	    cg_v2_procs) >= sizeof(path) || (fp = fopen(path, "re")) == NULL)
		return (0);
	while (alone && fgets(line, sizeof(line), fp) != NULL)
		if (atoi(line) != getpid())
			alone = 0;
	fclose(fp);
	return (alone);
}
