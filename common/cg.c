/*
 * A fence's cgroups, for every backend: <parent>/<name> for each of
 * memory, pids and cpu, where <parent> is what the fencer passes (the
 * daemon's folder, cg_daemon.c, never a hierarchy's root) and <name>
 * the fence's (<owner>.<key>, or pool.<name> for the warm pool).  A
 * backend gives the parents of the controllers it wants (subprocess:
 * pids alone) and the limits to write (runsc: its own pids count).
 *
 * The fencer creates the directories and writes the limits, reading
 * the memory limit back: the kernel clamps a value it cannot honour to
 * "unlimited" without an error, and a fence must never run unlimited
 * because of that.  On v2 the fence's first process is born in its
 * cgroup where the kernel allows it (cg_clone.c); elsewhere it joins by
 * writing "0" to the file opened for it (cg_join(): native pid 1 before
 * it does anything else, inside the child) or named by its directory
 * (cg_join_dir()).  At the end everything in the cgroups is killed
 * (cgroup.kill where there is one, else every pid listed) and they are
 * removed, dying tasks waited out.
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

#include "fenced.h"
#include "cg_impl.h"

const char *const cg_ctrl[CG_NCTRL] = { "memory", "pids", "cpu" };

/*
 * val into dir/file, whole, as one write (a cgroup file takes one);
 * -1 with errno, and with err (if not NULL) saying what failed.
 */
int
cg_write(const char *dir, const char *file, const char *val, char *err,
    size_t errlen)
{
	char	 path[PATH_MAX];
	size_t	 len = strlen(val);
	ssize_t	 n;
	int	 fd, saved;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, file) >=
	    sizeof(path)) {
		if (err != NULL)
			snprintf(err, errlen, "cgroup path too long");
		errno = ENAMETOOLONG;
		return (-1);
	}
	/* O_TRUNC as a shell's ">" has it: a no-op on cgroupfs. */
	if ((fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC)) == -1) {
		if (err != NULL)
			snprintf(err, errlen, "open %s: %s", path,
			    strerror(errno));
		return (-1);
	}
	n = write(fd, val, len);
	saved = errno;
	(void)close(fd);
	errno = saved;
	if (n != (ssize_t)len) {
		if (err != NULL)
			snprintf(err, errlen, "write %s to %s: %s", val, path,
			    strerror(errno));
		return (-1);
	}
	return (0);
}

/* dir has the cgroup file file (a controller's feature this kernel has). */
int
cg_has(const char *dir, const char *file)
{
	char	 path[PATH_MAX];

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, file) >=
	    sizeof(path))
		return (0);
	return (access(path, F_OK) == 0);
}

int
cg_is_v2(const char *dir)
{
	struct statfs	 sf;

	return (statfs(dir, &sf) == 0 && sf.f_type == CGROUP2_SUPER_MAGIC);
}

/* A fence's cgroup: a leftover of a crashed fencer is removed if empty. */
int
cg_mkdir(const char *path, char *err, size_t errlen)
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

/* The kernel keeps whole pages and clamps what it cannot count. */
int
cg_memory_check(const char *dir, const char *file, uint64_t want,
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

/* The "oom_kill N" line of dir/file (v1's or v2's), 0 without; -1. */
int
cg_oom_kills(const char *dir, const char *file)
{
	char	 buf[1024], *p;

	if (file_read_small(dir, file, buf, sizeof(buf)) == -1)
		return (-1);
	for (p = buf; p != NULL && *p != '\0'; ) {
		if (strncmp(p, "oom_kill ", 9) == 0)
			return (atoi(p + 9));
		if ((p = strchr(p, '\n')) != NULL)
			p++;
	}
	return (0);
}

/*
 * A number of dir/file: the whole file (key NULL), or the one on its
 * line "KEY N".  -1: no such file or line, or not a number.
 */
int
cg_read_u64(const char *dir, const char *file, const char *key,
    uint64_t *v)
{
	char		 buf[2048], *p, *end;
	size_t		 klen;
	unsigned long long n;

	if (file_read_small(dir, file, buf, sizeof(buf)) == -1)
		return (-1);
	p = buf;
	if (key != NULL) {
		klen = strlen(key);
		for (; p != NULL && *p != '\0'; ) {
			if (strncmp(p, key, klen) == 0 && p[klen] == ' ')
				break;
			if ((p = strchr(p, '\n')) != NULL)
				p++;
		}
		if (p == NULL || *p == '\0')
			return (-1);
		p += klen + 1;
	}
	if (*p < '0' || *p > '9')
		return (-1);
	errno = 0;
	n = strtoull(p, &end, 10);
	if (errno != 0 || (*end != '\n' && *end != '\0'))
		return (-1);
	*v = n;
	return (0);
}

/* Where in u the value of bit goes. */
static uint64_t *
cg_usage_value(struct cg_usage *u, uint32_t bit)
{
	switch (bit) {
	case CG_USAGE_CPU:
		return (&u->cu_cpu_usec);
	case CG_USAGE_MEM:
		return (&u->cu_mem_bytes);
	case CG_USAGE_MEM_PEAK:
		return (&u->cu_mem_peak);
	case CG_USAGE_PIDS:
		return (&u->cu_pids);
	}
	return (&u->cu_pids_peak);
}

/*
 * What the fence's cgroups counted, dirs[CG_MEMORY]... as made by
 * cg_fence_make() ("" where the controller has none): each directory
 * read by its version's table of files (cg_v1_usage, cg_v2_usage).
 */
void
cg_fence_usage(const char *const dirs[CG_NCTRL], struct cg_usage *u)
{
	const struct cg_usage_file *f;
	uint64_t	 v;
	int		 i;

	memset(u, 0, sizeof(*u));
	for (i = 0; i < CG_NCTRL; i++) {
		if (dirs[i] == NULL || dirs[i][0] == '\0')
			continue;
		for (f = cg_is_v2(dirs[i]) ? cg_v2_usage : cg_v1_usage;
		    f->uf_ctrl != -1; f++) {
			if (f->uf_ctrl != i || cg_read_u64(dirs[i], f->uf_file,
			    f->uf_key, &v) == -1)
				continue;
			*cg_usage_value(u, f->uf_bit) = v / f->uf_div;
			u->cu_have |= f->uf_bit;
		}
	}
}

/*
 * The parent directory: created if missing and, on v2, made to hand
 * the controller down.  Remembered, so later boots skip the system
 * calls; if it went away meanwhile, the mkdir of the fence's cgroup
 * says so.  Returns 1 for v2, 0 for v1, -1 on error.
 */
static int
cg_parent(int which, const char *parent, char *err, size_t errlen)
{
	static char	 known[CG_NCTRL][PATH_MAX];
	static int	 known_v2[CG_NCTRL];
	int		 want[CG_NCTRL] = { 0 };
	int		 v2;

	if (strcmp(known[which], parent) == 0)
		return (known_v2[which]);
	if (mkdir(parent, 0755) == -1 && errno != EEXIST) {
		snprintf(err, errlen, "mkdir %s: %s", parent, strerror(errno));
		return (-1);
	}
	want[which] = 1;
	if ((v2 = cg_is_v2(parent)) &&
	    cg_v2_enable(parent, want, err, errlen) == -1)
		return (-1);
	snprintf(known[which], sizeof(known[which]), "%s", parent);
	known_v2[which] = v2;
	return (v2);
}

static int
cg_name_ok(const char *name, char *err, size_t errlen)
{
	if (name[0] == '\0' || strchr(name, '/') != NULL ||
	    strcmp(name, "..") == 0 || strcmp(name, ".") == 0) {
		snprintf(err, errlen, "cgroup name %s not a name", name);
		return (0);
	}
	return (1);
}

static int
cg_shared(const char dirs[CG_NCTRL][PATH_MAX], int which, const char *path)
{
	int	 j;

	for (j = 0; j < which; j++)
		if (strcmp(dirs[j], path) == 0)
			return (1);
	return (0);
}

/*
 * Write l's limit of controller which into dir: pids.max is the same
 * file on v1 and v2, memory and cpu are each version's own.
 */
static int
cg_limit(int which, const char *dir, int v2, const struct fence_limits *l,
    char *err, size_t errlen)
{
	char	 v[32];

	if (which != CG_PIDS)
		return ((v2 ? cg_v2_limit : cg_v1_limit)(which, dir, l, err,
		    errlen));
	if (l->fl_pids == 0)
		return (0);
	snprintf(v, sizeof(v), "%u", l->fl_pids);
	return (cg_write(dir, "pids.max", v, err, errlen));
}

static int
cg_make_one(int which, const char *parent, const char *name,
    const struct fence_limits *l, char dirs[CG_NCTRL][PATH_MAX],
    int procs[CG_NCTRL], int *born, char *err, size_t errlen)
{
	char		 path[PATH_MAX];
	int		 v2, shared;

	if (parent[0] != '/') {
		snprintf(err, errlen, "cgroup parent %s not absolute", parent);
		return (-1);
	}
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", parent,
	    name) >= sizeof(path)) {
		snprintf(err, errlen, "cgroup path too long");
		return (-1);
	}
	if ((v2 = cg_parent(which, parent, err, errlen)) == -1)
		return (-1);
	/* On v2 the three controllers share one directory. */
	shared = cg_shared(dirs, which, path);
	if (!shared && cg_mkdir(path, err, errlen) == -1)
		return (-1);
	/* From here on cg_fence_remove() removes it. */
	memcpy(dirs[which], path, sizeof(path));
	if (cg_limit(which, path, v2, l, err, errlen) == -1)
		return (-1);
	if (shared)
		return (0);
	/* The first process is born in it (cg_clone.c): its directory. */
	if (v2 && born != NULL && *born == -1 && cg_clone3_ok()) {
		if ((*born = open(dirs[which], O_PATH | O_DIRECTORY |
		    O_CLOEXEC)) == -1) {
			snprintf(err, errlen, "open %s: %s", dirs[which],
			    strerror(errno));
			return (-1);
		}
		return (0);
	}
	if (procs == NULL)
		return (0);
	snprintf(path, sizeof(path), "%s/%s", dirs[which],
	    v2 ? cg_v2_procs : cg_v1_procs);
	if ((procs[which] = open(path, O_WRONLY | O_CLOEXEC)) == -1) {
		snprintf(err, errlen, "open %s: %s", path, strerror(errno));
		return (-1);
	}
	return (0);
}

/*
 * A fence's cgroups: <parents[i]>/<name> for each controller i whose
 * parent is not NULL, made with l's limits (0: none of that kind) into
 * dirs.  With born, where the one v2 cgroup of the fence can be its
 * first process's birthplace (cg_clone3_ok()), its directory is opened
 * there (O_PATH) for cg_clone3(), and nothing joins it.  With procs, the
 * file each other distinct one is joined by is opened there (-1
 * elsewhere; the caller set them and *born -1).  On failure err says
 * why, and dirs names what was made, for cg_fence_remove().
 */
int
cg_fence_make(const char *const parents[CG_NCTRL], const char *name,
    const struct fence_limits *l, char dirs[CG_NCTRL][PATH_MAX],
    int procs[CG_NCTRL], int *born, char *err, size_t errlen)
{
	int	 i;

	for (i = 0; i < CG_NCTRL; i++)
		dirs[i][0] = '\0';
	if (!cg_name_ok(name, err, errlen))
		return (-1);
	for (i = 0; i < CG_NCTRL; i++)
		if (parents[i] != NULL && cg_make_one(i, parents[i], name, l,
		    dirs, procs, born, err, errlen) == -1)
			return (-1);
	return (0);
}

/*
 * The caller joins the cgroup whose file fd cg_fence_make() opened:
 * "0" moves the writer itself.  A raw write, nothing else: native pid 1
 * calls it in the child, where nothing may allocate or lock.
 */
int
cg_join(int fd)
{
	return (write(fd, "0", 1) == 1 ? 0 : -1);
}

/* The caller, one thread, into the cgroup dir. */
int
cg_join_dir(const char *dir)
{
	return (cg_write(dir, cg_is_v2(dir) ? cg_v2_procs : cg_v1_procs, "0",
	    NULL, 0));
}

/* The caller, one thread, into each of a fence's cgroups. */
int
cg_fence_join(const char dirs[CG_NCTRL][PATH_MAX])
{
	int	 i;

	for (i = 0; i < CG_NCTRL; i++)
		if (dirs[i][0] != '\0' && !cg_shared(dirs, i, dirs[i]) &&
		    cg_join_dir(dirs[i]) == -1)
			return (-1);
	return (0);
}

/*
 * SIGKILL what a cgroup holds but spare (0: none).  v2's cgroup.kill
 * reaches every process in it; cgroup.procs names only those our pid
 * namespace can see (v1 leaves the others out, v2 says 0), so a daemon
 * in a pid namespace of its own cannot empty a v1 cgroup of processes
 * outside it.  Never the caller: on v2 the daemon's leaf is in its
 * folder.  Returns how many it signalled (0 after cgroup.kill), -1
 * with errno if the cgroup cannot be read.
 */
int
cg_kill_dir(const char *dir, pid_t spare)
{
	char	 path[PATH_MAX], line[64];
	FILE	*fp;
	long	 pid;
	int	 n = 0;

	if (spare <= 0 && cg_v2_kill(dir) == 0)
		return (0);
	if ((size_t)snprintf(path, sizeof(path), "%s/cgroup.procs", dir) >=
	    sizeof(path)) {
		errno = ENAMETOOLONG;
		return (-1);
	}
	if ((fp = fopen(path, "re")) == NULL)
		return (-1);
	while (fgets(line, sizeof(line), fp) != NULL) {
		pid = strtol(line, NULL, 10);
		if (pid <= 1 || pid > INT_MAX || pid == spare ||
		    pid == getpid())
			continue;
		(void)kill((pid_t)pid, SIGKILL);
		n++;
	}
	fclose(fp);
	return (n);
}

/*
 * SIGKILL every process of a fence's cgroups but spare, in rounds 1 ms
 * apart until none is seen, at most rounds of them: v1 has no
 * cgroup.kill, and a process may fork while we read.  Returns -1 if
 * some were still there in the last round.
 */
int
cg_fence_kill(const char dirs[CG_NCTRL][PATH_MAX], pid_t spare, int rounds)
{
	struct timespec	 ts = { 0, 1000000 };
	int		 round, i, n, seen;

	for (round = 0; round < rounds; round++) {
		for (seen = 0, i = 0; i < CG_NCTRL && seen == 0; i++) {
			if (dirs[i][0] == '\0' || cg_shared(dirs, i, dirs[i]))
				continue;
			if ((n = cg_kill_dir(dirs[i], spare)) == -1 &&
			    errno != ENOENT)
				return (-1);
			if (n > 0)
				seen = n;
		}
		if (seen == 0)
			return (0);
		if (round + 1 < rounds)
			(void)nanosleep(&ts, NULL);
	}
	return (-1);
}

/*
 * Denials of the limits (docs/denials.md): descriptors of the counters
 * of a fence's memory and pids cgroups, for whoever reads them later
 * (the broker, which may open nothing of the kind itself): pids.events
 * ("max N": forks refused at pids.max), and memory.events on v2 ("max
 * N", "oom_kill N") or memory.oom_control on v1 ("oom_kill N").  -1
 * where a cgroup or its file is missing.
 */
void
cg_fence_events_open(const char *memdir, const char *pidsdir, int *memfd,
    int *pidsfd)
{
	char	 path[PATH_MAX];

	*memfd = *pidsfd = -1;
	if (pidsdir[0] != '\0' && (size_t)snprintf(path, sizeof(path),
	    "%s/pids.events", pidsdir) < sizeof(path))
		*pidsfd = open(path, O_RDONLY | O_CLOEXEC);
	if (memdir[0] == '\0')
		return;
	if ((size_t)snprintf(path, sizeof(path), "%s/memory.events",
	    memdir) < sizeof(path) &&
	    (*memfd = open(path, O_RDONLY | O_CLOEXEC)) != -1)
		return;
	if ((size_t)snprintf(path, sizeof(path), "%s/memory.oom_control",
	    memdir) < sizeof(path))
		*memfd = open(path, O_RDONLY | O_CLOEXEC);
}

/*
 * The counters of one of those descriptors, read again: *max (the
 * limit reached) and *oom (OOM kills), 0 where the file has no such
 * line; -1 if it cannot be read.
 */
int
cg_events_read(int fd, uint64_t *max, uint64_t *oom)
{
	char	 buf[1024], *p;
	ssize_t	 n;

	*max = *oom = 0;
	if ((n = pread(fd, buf, sizeof(buf) - 1, 0)) <= 0)
		return (-1);
	buf[n] = '\0';
	for (p = buf; p != NULL && *p != '\0'; ) {
		if (strncmp(p, "max ", 4) == 0)
			*max = strtoull(p + 4, NULL, 10);
		else if (strncmp(p, "oom_kill ", 9) == 0)
			*oom = strtoull(p + 9, NULL, 10);
		if ((p = strchr(p, '\n')) != NULL)
			p++;
	}
	return (0);
}

/* The OOM kills the memory cgroup dir counted, or -1 if there is none. */
int
cg_fence_oom(const char *dir)
{
	int	 n;

	if (dir[0] == '\0')
		return (-1);
	if ((n = cg_v1_oom(dir)) == -1)
		n = cg_v2_oom(dir);
	return (n);
}

/*
 * Remove the cgroup dir; what it still holds is killed, and a dying
 * task may hold it for a moment: tried CG_RMDIR_TRIES times.
 */
int
cg_rmdir(const char *dir, char *err, size_t errlen)
{
	struct timespec	 ts = { 0, 1000000 };
	int		 tries;

	for (tries = 0; tries < CG_RMDIR_TRIES; tries++) {
		if (rmdir(dir) == 0 || errno == ENOENT)
			return (0);
		if (errno != EBUSY)
			break;
		(void)cg_kill_dir(dir, 0);
		(void)nanosleep(&ts, NULL);
	}
	snprintf(err, errlen, "rmdir %s: %s", dir, strerror(errno));
	return (-1);
}

/* A fence's cgroups removed, and dirs emptied; -1 if one stays. */
int
cg_fence_remove(char dirs[CG_NCTRL][PATH_MAX], char *err, size_t errlen)
{
	int	 i, rv = 0;

	for (i = 0; i < CG_NCTRL; i++)
		if (dirs[i][0] != '\0' && !cg_shared(dirs, i, dirs[i]) &&
		    cg_rmdir(dirs[i], err, errlen) == -1)
			rv = -1;
	if (rv == 0)
		for (i = 0; i < CG_NCTRL; i++)
			dirs[i][0] = '\0';
	return (rv);
}

/*
 * A pool fence taken by a boot: its cgroups, made under a pool name,
 * get the boot's name and limits, the memory limit read back as for a
 * fresh one.  dirs follow every move, so cg_fence_remove() finds them.
 * On v1 a cgroup is renamed, processes and all, and a memory limit
 * going up is raised in memsw first, which may never be below it.  v2
 * has no rename: the boot's directory is made and pid, the only
 * process of the pool fence, moved into it; the pool's goes.  had, if
 * not NULL, is what the pool fence's cgroups were made with: a v1
 * cgroup renamed with limits equal to l keeps them unwritten (the
 * pool's build wrote and read them back; nobody else writes there).
 */
int
cg_fence_adopt(const char *const parents[CG_NCTRL], const char *name,
    pid_t pid, const struct fence_limits *l, const struct fence_limits *had,
    char dirs[CG_NCTRL][PATH_MAX], char *err, size_t errlen)
{
	char		 path[PATH_MAX], old[PATH_MAX];
	int		 i, j, v2, same;

	if (!cg_name_ok(name, err, errlen))
		return (-1);
	same = had != NULL && had->fl_memory == l->fl_memory &&
	    had->fl_pids == l->fl_pids && had->fl_cpu_milli == l->fl_cpu_milli;
	for (i = 0; i < CG_NCTRL; i++) {
		if (dirs[i][0] == '\0' || parents[i] == NULL)
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s",
		    parents[i], name) >= sizeof(path)) {
			snprintf(err, errlen, "cgroup path too long");
			return (-1);
		}
		memcpy(old, dirs[i], sizeof(old));
		if (cg_shared(dirs, i, path))
			;
		else if (cg_is_v2(old)) {
			if (cg_v2_move(old, path, pid, err, errlen) == -1)
				return (-1);
		} else if (cg_v1_rename(old, path, err, errlen) == -1)
			return (-1);
		/* Every controller that shared the old directory follows. */
		for (j = i; j < CG_NCTRL; j++)
			if (strcmp(dirs[j], old) == 0)
				memcpy(dirs[j], path, sizeof(path));
	}
	for (i = 0; i < CG_NCTRL; i++) {
		if (dirs[i][0] == '\0')
			continue;
		v2 = cg_is_v2(dirs[i]);
		if (!v2 && same)
			continue;
		if (!v2 && i == CG_MEMORY)
			cg_v1_memsw_raise(dirs[i], l);
		if (cg_limit(i, dirs[i], v2, l, err, errlen) == -1)
			return (-1);
	}
	return (0);
}
