/*
 * The cgroups of a fence: <parent>/<name> for the memory, pids and cpu
 * controllers, where <parent> is what the fencer passes (the daemon's
 * own cgroup plus its folder, never a hierarchy's root) and <name> the
 * name it chose (<owner>.<key>: fencer_cgroup.c), or the key.  cgroup v1
 * (memory.limit_in_bytes, pids.max, cpu.cfs_*) and v2 (memory.max,
 * pids.max, cpu.max) are both handled; which one a parent is in comes
 * from its filesystem type.
 *
 * The parent creates the directories and writes the limits, reading the
 * memory limit back: the kernel clamps a value it cannot honour to
 * "unlimited" without an error, and a fence must never run unlimited
 * because of that.  Pid 1 joins by writing "0" (itself) to each
 * hierarchy's file the parent opened for it, before it does anything
 * else; then it unshares its cgroup namespace (fence_ns.c).
 *
 * On v1 that file is `tasks', not cgroup.procs.  Pid 1 is one thread
 * (CLONE_VM without CLONE_THREAD), so moving the thread moves the
 * process; and the kernel moves the writing thread itself without
 * taking the global lock a whole-process move takes (a percpu rwsem
 * whose write side waits out an RCU grace period when it was idle):
 * measured here 0.05 ms against 9 to 29 ms for cgroup.procs.  v2 has no
 * such file outside threaded subtrees and keeps cgroup.procs.
 */
#include <sys/types.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#include <linux/magic.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fence.h"
#include "fence_impl.h"

#define FENCE_CPU_PERIOD	100000		/* us */

static const char *fence_cg_names[FENCE_CG_MAX] = { "memory", "pids", "cpu" };

static int
fence_cg_write(const char *dir, const char *file, const char *val, char *err,
    size_t errlen)
{
	char	 path[PATH_MAX];
	size_t	 len = strlen(val);
	int	 fd;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) == -1) {
		snprintf(err, errlen, "open %s: %s", path, strerror(errno));
		return (-1);
	}
	if (write(fd, val, len) != (ssize_t)len) {
		snprintf(err, errlen, "write %s to %s: %s", val, path,
		    strerror(errno));
		(void)close(fd);
		return (-1);
	}
	(void)close(fd);
	return (0);
}

static int
fence_cg_exists(const char *dir, const char *file)
{
	char	 path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	return (access(path, F_OK) == 0);
}

static int
fence_cg_is_v2(const char *dir)
{
	struct statfs	 sf;

	return (statfs(dir, &sf) == 0 && sf.f_type == CGROUP2_SUPER_MAGIC);
}

/* The kernel keeps whole pages and clamps what it cannot count. */
static int
fence_cg_memory_check(const char *dir, const char *file, uint64_t want,
    char *err, size_t errlen)
{
	char			 buf[64];
	unsigned long long	 got;
	uint64_t		 pg = (uint64_t)sysconf(_SC_PAGESIZE);
	char			*end;

	if (file_read_small(dir, file, buf, sizeof(buf)) == -1) {
		snprintf(err, errlen, "read %s/%s: %s", dir, file,
		    strerror(errno));
		return (-1);
	}
	errno = 0;
	got = strtoull(buf, &end, 10);
	/*
	 * What the kernel could not count it clamps to its "unlimited"
	 * (LONG_MAX pages' worth on v1, "max" on v2): refused as well.
	 */
	if (errno != 0 || end == buf || (uint64_t)got != want / pg * pg ||
	    (uint64_t)got >= (uint64_t)LONG_MAX / pg * pg) {
		buf[strcspn(buf, "\n")] = '\0';
		snprintf(err, errlen, "memory limit %" PRIu64 " refused by "
		    "the kernel: %s/%s reads %s", want, dir, file, buf);
		return (-1);
	}
	return (0);
}

static int
fence_cg_limits_v1(int which, const char *dir, const struct fence_limits *l,
    char *err, size_t errlen)
{
	char	 v[32];

	switch (which) {
	case FENCE_CG_MEMORY:
		/* A child inherits oom_kill_disable: the fence must not. */
		if (fence_cg_write(dir, "memory.oom_control", "0", err,
		    errlen) == -1)
			return (-1);
		if (l->fl_memory == 0)
			return (0);
		snprintf(v, sizeof(v), "%" PRIu64, l->fl_memory);
		if (fence_cg_write(dir, "memory.limit_in_bytes", v, err,
		    errlen) == -1 ||
		    fence_cg_memory_check(dir, "memory.limit_in_bytes",
		    l->fl_memory, err, errlen) == -1)
			return (-1);
		/* No swap beyond the limit either, where swap is counted. */
		if (fence_cg_exists(dir, "memory.memsw.limit_in_bytes") &&
		    fence_cg_write(dir, "memory.memsw.limit_in_bytes", v, err,
		    errlen) == -1)
			return (-1);
		return (0);
	case FENCE_CG_PIDS:
		if (l->fl_pids == 0)
			return (0);
		snprintf(v, sizeof(v), "%u", l->fl_pids);
		return (fence_cg_write(dir, "pids.max", v, err, errlen));
	case FENCE_CG_CPU:
		if (l->fl_cpu_milli == 0)
			return (0);
		snprintf(v, sizeof(v), "%d", FENCE_CPU_PERIOD);
		if (fence_cg_write(dir, "cpu.cfs_period_us", v, err,
		    errlen) == -1)
			return (-1);
		snprintf(v, sizeof(v), "%llu", (unsigned long long)
		    l->fl_cpu_milli * FENCE_CPU_PERIOD / 1000);
		return (fence_cg_write(dir, "cpu.cfs_quota_us", v, err,
		    errlen));
	}
	return (0);
}

static int
fence_cg_limits_v2(int which, const char *dir, const struct fence_limits *l,
    char *err, size_t errlen)
{
	char	 v[64];

	switch (which) {
	case FENCE_CG_MEMORY:
		if (l->fl_memory == 0)
			return (0);
		snprintf(v, sizeof(v), "%" PRIu64, l->fl_memory);
		if (fence_cg_write(dir, "memory.max", v, err, errlen) == -1 ||
		    fence_cg_memory_check(dir, "memory.max", l->fl_memory,
		    err, errlen) == -1)
			return (-1);
		if (fence_cg_exists(dir, "memory.swap.max") &&
		    fence_cg_write(dir, "memory.swap.max", "0", err,
		    errlen) == -1)
			return (-1);
		return (0);
	case FENCE_CG_PIDS:
		if (l->fl_pids == 0)
			return (0);
		snprintf(v, sizeof(v), "%u", l->fl_pids);
		return (fence_cg_write(dir, "pids.max", v, err, errlen));
	case FENCE_CG_CPU:
		if (l->fl_cpu_milli == 0)
			return (0);
		snprintf(v, sizeof(v), "%llu %d", (unsigned long long)
		    l->fl_cpu_milli * FENCE_CPU_PERIOD / 1000,
		    FENCE_CPU_PERIOD);
		return (fence_cg_write(dir, "cpu.max", v, err, errlen));
	}
	return (0);
}

/* v2: the parent must hand the controller down to its children. */
static int
fence_cg_delegate_v2(int which, const char *parent, char *err, size_t errlen)
{
	char	 buf[512], v[32];

	if (file_read_small(parent, "cgroup.subtree_control", buf,
	    sizeof(buf)) == 0 && word_listed(buf, fence_cg_names[which]))
		return (0);
	snprintf(v, sizeof(v), "+%s", fence_cg_names[which]);
	return (fence_cg_write(parent, "cgroup.subtree_control", v, err,
	    errlen));
}

/*
 * The parent directory: created if missing and, on v2, made to delegate
 * the controller.  Remembered, so later boots skip the system calls; if
 * it went away meanwhile, the mkdir of the fence's cgroup says so.
 * Returns 1 for v2, 0 for v1, -1 on error.
 */
static int
fence_cg_parent(int which, const char *parent, char *err, size_t errlen)
{
	static char	 known[FENCE_CG_MAX][PATH_MAX];
	static int	 known_v2[FENCE_CG_MAX];
	int		 v2;

	if (strcmp(known[which], parent) == 0)
		return (known_v2[which]);
	if (mkdir(parent, 0755) == -1 && errno != EEXIST) {
		snprintf(err, errlen, "mkdir %s: %s", parent, strerror(errno));
		return (-1);
	}
	if ((v2 = fence_cg_is_v2(parent)) &&
	    fence_cg_delegate_v2(which, parent, err, errlen) == -1)
		return (-1);
	snprintf(known[which], sizeof(known[which]), "%s", parent);
	known_v2[which] = v2;
	return (v2);
}

/* <parent>/<name>: a leftover of a crashed fencer is removed if empty. */
static int
fence_cg_mkdir(const char *path, char *err, size_t errlen)
{
	if (mkdir(path, 0755) == 0)
		return (0);
	if (errno == EEXIST) {
		if (rmdir(path) == 0 && mkdir(path, 0755) == 0)
			return (0);
		snprintf(err, errlen, "cgroup %s exists and is in use: %s",
		    path, strerror(errno));
		return (-1);
	}
	snprintf(err, errlen, "mkdir %s: %s", path, strerror(errno));
	return (-1);
}

static int
fence_cg_one(int which, const struct fence_spec *s, struct fence_proc *proc,
    struct fence_ctx *ctx, char *err, size_t errlen)
{
	const char	*parent = s->fs_cgroup_parent[which];
	const char	*name = s->fs_cgroup_name != NULL ? s->fs_cgroup_name :
			    s->fs_key;
	char		 path[PATH_MAX];
	int		 j, v2, shared = 0;

	if (parent[0] != '/') {
		snprintf(err, errlen, "cgroup parent %s not absolute", parent);
		return (-1);
	}
	if (name[0] == '\0' || strchr(name, '/') != NULL ||
	    strcmp(name, "..") == 0) {
		snprintf(err, errlen, "cgroup name %s not a name", name);
		return (-1);
	}
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", parent,
	    name) >= sizeof(path)) {
		snprintf(err, errlen, "cgroup path too long");
		return (-1);
	}
	if ((v2 = fence_cg_parent(which, parent, err, errlen)) == -1)
		return (-1);
	/* On v2 the three controllers share one directory. */
	for (j = 0; j < which; j++)
		if (strcmp(proc->fp_cgroup[j], path) == 0)
			shared = 1;
	if (!shared && fence_cg_mkdir(path, err, errlen) == -1)
		return (-1);
	/* From here on fence_stop() removes it. */
	memcpy(proc->fp_cgroup[which], path, sizeof(path));
	if ((v2 ? fence_cg_limits_v2 : fence_cg_limits_v1)(which, path,
	    &s->fs_limits, err, errlen) == -1)
		return (-1);
	if (shared)
		return (0);
	snprintf(path, sizeof(path), "%s/%s", proc->fp_cgroup[which],
	    v2 ? "cgroup.procs" : "tasks");
	ctx->fc_cg_procs[which] = open(path, O_WRONLY | O_CLOEXEC);
	if (ctx->fc_cg_procs[which] == -1) {
		snprintf(err, errlen, "open %s: %s", path, strerror(errno));
		return (-1);
	}
	return (0);
}

int
fence_cgroup_create(const struct fence_spec *s, struct fence_proc *proc,
    struct fence_ctx *ctx, char *err, size_t errlen)
{
	int	 i;

	for (i = 0; i < FENCE_CG_MAX; i++)
		if (s->fs_cgroup_parent[i] != NULL &&
		    fence_cg_one(i, s, proc, ctx, err, errlen) == -1)
			return (-1);
	return (0);
}

/*
 * Child side: "0" moves the writer itself.  The fds are closed in pid 1
 * only; ctx is the parent's memory too, which closes its own copies.
 */
int
fence_cgroup_join(struct fence_ctx *ctx)
{
	int	 i;

	for (i = 0; i < FENCE_CG_MAX; i++) {
		if (ctx->fc_cg_procs[i] == -1)
			continue;
		if (write(ctx->fc_cg_procs[i], "0", 1) != 1)
			return (fence_child_err(ctx, errno, "join %s cgroup",
			    fence_cg_names[i]));
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
}

/*
 * SIGKILL whatever is left in the fence's cgroups.  v2 has cgroup.kill;
 * on v1 every pid in cgroup.procs gets a SIGKILL.  Returns the number of
 * processes seen (v1), 0 or -1.
 */
int
fence_cgroup_kill(const struct fence_proc *proc)
{
	char		 buf[8192], *p, *end;
	long		 pid;
	int		 i, n = 0;

	for (i = 0; i < FENCE_CG_MAX; i++) {
		if (proc->fp_cgroup[i][0] == '\0')
			continue;
		if (fence_cg_exists(proc->fp_cgroup[i], "cgroup.kill")) {
			char e[FENCE_ERR_MAX];

			return (fence_cg_write(proc->fp_cgroup[i],
			    "cgroup.kill", "1", e, sizeof(e)));
		}
		if (file_read_small(proc->fp_cgroup[i], "cgroup.procs", buf,
		    sizeof(buf)) == -1)
			continue;
		for (p = buf; *p != '\0'; p = end) {
			pid = strtol(p, &end, 10);
			if (end == p)
				break;
			if (pid > 1)
				(void)kill((pid_t)pid, SIGKILL);
			n++;
			end += strspn(end, "\n");
		}
		if (n > 0)
			break;
	}
	return (n);
}

/* The OOM kills the memory cgroup counted, or -1 if there is none. */
int
fence_cgroup_oom(const struct fence_proc *proc)
{
	const char	*dir = proc->fp_cgroup[FENCE_CG_MEMORY];
	char		 buf[1024], *p;

	if (dir[0] == '\0')
		return (-1);
	if (file_read_small(dir, "memory.oom_control", buf, sizeof(buf)) == -1 &&
	    file_read_small(dir, "memory.events", buf, sizeof(buf)) == -1)
		return (-1);
	for (p = buf; p != NULL && *p != '\0'; ) {
		if (strncmp(p, "oom_kill ", 9) == 0)
			return (atoi(p + 9));
		if ((p = strchr(p, '\n')) != NULL)
			p++;
	}
	return (0);
}

int
fence_cgroup_remove(struct fence_proc *proc, char *err, size_t errlen)
{
	struct timespec	 ts = { 0, 1000000 };
	int		 i, j, tries, rv = 0, done;

	for (i = 0; i < FENCE_CG_MAX; i++) {
		if (proc->fp_cgroup[i][0] == '\0')
			continue;
		for (done = 0, j = 0; j < i; j++)
			if (strcmp(proc->fp_cgroup[j], proc->fp_cgroup[i]) == 0)
				done = 1;
		/*
		 * pid 1 is reaped, so the kernel has killed the rest; an
		 * exiting task may still hold the cgroup for a moment.
		 */
		for (tries = 0; !done && tries < 2000; tries++) {
			if (rmdir(proc->fp_cgroup[i]) == 0 || errno == ENOENT)
				done = 1;
			else if (errno != EBUSY)
				break;
			else {
				(void)fence_cgroup_kill(proc);
				(void)nanosleep(&ts, NULL);
			}
		}
		if (!done) {
			snprintf(err, errlen, "rmdir %s: %s",
			    proc->fp_cgroup[i], strerror(errno));
			rv = -1;
			continue;
		}
	}
	if (rv == 0)
		for (i = 0; i < FENCE_CG_MAX; i++)
			proc->fp_cgroup[i][0] = '\0';
	return (rv);
}

/*
 * v2: pid, alone in cgroup old, moves to the new cgroup path, which is
 * made for it; old is removed.  On failure nothing new is left.
 */
static int
fence_cg_move_v2(const char *old, const char *path, pid_t pid, char *err,
    size_t errlen)
{
	char	 v[32];

	if (fence_cg_mkdir(path, err, errlen) == -1)
		return (-1);
	snprintf(v, sizeof(v), "%d", (int)pid);
	if (fence_cg_write(path, "cgroup.procs", v, err, errlen) == -1) {
		(void)rmdir(path);
		return (-1);
	}
	/* Empty now; were it not, the daemon's exit sweeps its folder. */
	(void)rmdir(old);
	return (0);
}

/*
 * A pool fence taken by a boot (fence.c): its cgroups, made under a
 * pool name, are renamed to the boot's (rename(2) moves a cgroup within
 * its parent, processes and all) and get the boot's limits, the memory
 * limit read back as for a fresh one.  On v1 with swap counted, a limit
 * going up is raised in memsw first, which may never be below it.
 * proc's paths follow every rename, so fence_stop() finds them.
 *
 * cgroup v2 has no rename (kernfs answers EPERM), so there the boot's
 * directory is made and pid 1, the only process of the pool fence and
 * still waiting for its assignment, is moved into it; the pool's goes.
 * pid 1 makes its cgroup namespace after the assignment (fence.c), so
 * the namespace is rooted at the boot's cgroup, as a cold boot's is.
 */
int
fence_cgroup_adopt(const struct fence_spec *s, struct fence_proc *proc,
    char *err, size_t errlen)
{
	const char	*name = s->fs_cgroup_name != NULL ? s->fs_cgroup_name :
			    s->fs_key;
	char		 path[PATH_MAX], old[PATH_MAX], v[32];
	int		 i, j, v2, shared;

	if (name[0] == '\0' || strchr(name, '/') != NULL ||
	    strcmp(name, "..") == 0 || strcmp(name, ".") == 0) {
		snprintf(err, errlen, "cgroup name %s not a name", name);
		return (-1);
	}
	for (i = 0; i < FENCE_CG_MAX; i++) {
		if (proc->fp_cgroup[i][0] == '\0' ||
		    s->fs_cgroup_parent[i] == NULL)
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s",
		    s->fs_cgroup_parent[i], name) >= sizeof(path)) {
			snprintf(err, errlen, "cgroup path too long");
			return (-1);
		}
		memcpy(old, proc->fp_cgroup[i], sizeof(old));
		for (shared = 0, j = 0; j < i; j++)
			if (strcmp(proc->fp_cgroup[j], path) == 0)
				shared = 1;
		if (shared)
			;
		else if (fence_cg_is_v2(old)) {
			if (fence_cg_move_v2(old, path, proc->fp_pid, err,
			    errlen) == -1)
				return (-1);
		} else if (rename(old, path) == -1) {
			/* A crashed fencer's empty leftover goes, as in mkdir. */
			if ((errno != EEXIST && errno != ENOTEMPTY &&
			    errno != EBUSY) || rmdir(path) == -1 ||
			    rename(old, path) == -1) {
				snprintf(err, errlen, "rename cgroup %s to %s: "
				    "%s", old, path, strerror(errno));
				return (-1);
			}
		}
		/* Every controller that shared the old directory follows. */
		for (j = i; j < FENCE_CG_MAX; j++)
			if (strcmp(proc->fp_cgroup[j], old) == 0)
				memcpy(proc->fp_cgroup[j], path, sizeof(path));
	}
	for (i = 0; i < FENCE_CG_MAX; i++) {
		if (proc->fp_cgroup[i][0] == '\0')
			continue;
		v2 = fence_cg_is_v2(proc->fp_cgroup[i]);
		if (!v2 && i == FENCE_CG_MEMORY && s->fs_limits.fl_memory != 0 &&
		    fence_cg_exists(proc->fp_cgroup[i],
		    "memory.memsw.limit_in_bytes")) {
			snprintf(v, sizeof(v), "%" PRIu64,
			    s->fs_limits.fl_memory);
			/* Fails harmlessly when the limit goes down. */
			(void)fence_cg_write(proc->fp_cgroup[i],
			    "memory.memsw.limit_in_bytes", v, err, errlen);
		}
		if ((v2 ? fence_cg_limits_v2 : fence_cg_limits_v1)(i,
		    proc->fp_cgroup[i], &s->fs_limits, err, errlen) == -1)
			return (-1);
	}
	return (0);
}
