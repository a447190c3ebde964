/*
 * The sections "processes" (what of the process table the fence can
 * see) and "limits" (cpus, memory, rlimits).
 */
#include <sys/types.h>

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "probe.h"

#define PROBE_FILE_MAX	8192

/* The real uid of a process, from its status; -1 if unreadable. */
static long long
probe_proc_uid(const char *pid)
{
	char		 path[64], buf[PROBE_FILE_MAX], v[64];
	long long	 uid;

	snprintf(path, sizeof(path), "/proc/%s/status", pid);
	if (probe_read_file(path, buf, sizeof(buf)) == -1 ||
	    probe_status_field(buf, "Uid", v, sizeof(v)) == -1)
		return (-1);
	uid = strtoll(v, NULL, 10);
	return (uid < 0 ? -1 : uid);
}

static int
probe_numeric(const char *s)
{
	if (*s == '\0')
		return (0);
	for (; *s != '\0'; s++)
		if (!isdigit((unsigned char)*s))
			return (0);
	return (1);
}

static void
probe_pid1(struct jw *w)
{
	char	 comm[64];

	if (probe_read_file("/proc/1/comm", comm, sizeof(comm)) == -1) {
		jw_null(w, "pid1Comm");
		jw_bool(w, "pid1Agent", 0);
		return;
	}
	comm[strcspn(comm, "\n")] = '\0';
	jw_str(w, "pid1Comm", comm);
	jw_bool(w, "pid1Agent", strcmp(comm, "fence-agent") == 0);
}

void
probe_processes(struct jw *w, const struct probe_opts *o)
{
	long long	 others[PROBE_OTHER_UIDS], uid;
	struct dirent	*de;
	DIR		*d;
	uid_t		 me = getuid();
	long		 n = 0;
	int		 nothers = 0, other = 0, i, seen = 0;
	char		 path[64], pid[16];

	if ((d = opendir("/proc")) == NULL) {
		jw_err(w, "error", errno);
		jw_null(w, "visible");
	} else {
		while ((de = readdir(d)) != NULL &&
		    seen++ < PROBE_DIR_SCAN_MAX) {
			if (!probe_numeric(de->d_name))
				continue;
			n++;
			if ((uid = probe_proc_uid(de->d_name)) == -1 ||
			    uid == (long long)me)
				continue;
			other = 1;
			for (i = 0; i < nothers && others[i] != uid; i++)
				;
			if (i == nothers && nothers < PROBE_OTHER_UIDS)
				others[nothers++] = uid;
		}
		closedir(d);
		jw_null(w, "error");
		jw_int(w, "visible", n);
	}
	probe_pid1(w);
	jw_bool(w, "otherUids", other);
	jw_arr_open(w, "otherUidSample");
	for (i = 0; i < nothers; i++)
		jw_int(w, NULL, others[i]);
	jw_arr_close(w);
	if (o->po_host_pid == 0)
		jw_null(w, "hostPid");
	else {
		jw_obj_open(w, "hostPid");
		jw_int(w, "pid", o->po_host_pid);
		/*
		 * The fencer runs as root and a fence never does: to a
		 * probe not run as root, an entry of its own uid with that
		 * number is one of the fence's own processes (in a daemon
		 * with a pid namespace of its own, the fencer's pid is small
		 * and fences' pids reach it), not the fencer.  One whose uid
		 * cannot be read counts.
		 */
		snprintf(path, sizeof(path), "/proc/%d", (int)o->po_host_pid);
		snprintf(pid, sizeof(pid), "%d", (int)o->po_host_pid);
		jw_bool(w, "visible", access(path, F_OK) == 0 && (me == 0 ||
		    probe_proc_uid(pid) != (long long)me));
		jw_obj_close(w);
	}
}

/*
 * /proc/self/limits, by the short names of setrlimit(2); "unlimited"
 * stays a string, every other value is a number.
 */
static const struct {
	const char	*pl_long;
	const char	*pl_short;
} probe_rlimits[] = {
	{ "Max cpu time", "cpu" },
	{ "Max file size", "fsize" },
	{ "Max data size", "data" },
	{ "Max stack size", "stack" },
	{ "Max core file size", "core" },
	{ "Max resident set", "rss" },
	{ "Max processes", "nproc" },
	{ "Max open files", "nofile" },
	{ "Max locked memory", "memlock" },
	{ "Max address space", "as" },
	{ "Max file locks", "locks" },
	{ "Max pending signals", "sigpending" },
	{ "Max msgqueue size", "msgqueue" },
	{ "Max nice priority", "nice" },
	{ "Max realtime priority", "rtprio" },
	{ "Max realtime timeout", "rttime" },
};

static void
probe_rlimit_value(struct jw *w, const char *key, const char *v)
{
	char			*ep;
	unsigned long long	 n;

	if (strcmp(v, "unlimited") == 0) {
		jw_str(w, key, "unlimited");
		return;
	}
	errno = 0;
	n = strtoull(v, &ep, 10);
	if (errno != 0 || *ep != '\0' || *v == '\0' || n > (1ULL << 62))
		jw_null(w, key);
	else
		jw_uint(w, key, n);
}

static void
probe_rlimit_line(struct jw *w, const char *line)
{
	char	 soft[32], hard[32];
	size_t	 i, l;

	for (i = 0; i < sizeof(probe_rlimits) / sizeof(probe_rlimits[0]);
	    i++) {
		l = strlen(probe_rlimits[i].pl_long);
		if (strncmp(line, probe_rlimits[i].pl_long, l) != 0 ||
		    line[l] != ' ')
			continue;
		if (sscanf(line + l, " %31s %31s", soft, hard) != 2)
			return;
		jw_obj_open(w, probe_rlimits[i].pl_short);
		probe_rlimit_value(w, "soft", soft);
		probe_rlimit_value(w, "hard", hard);
		jw_obj_close(w);
		return;
	}
}

static void
probe_rlimits_all(struct jw *w)
{
	char	 buf[PROBE_FILE_MAX], *line, *next;

	jw_obj_open(w, "rlimits");
	if (probe_read_file("/proc/self/limits", buf, sizeof(buf)) != -1)
		for (line = buf; line != NULL; line = next) {
			if ((next = strchr(line, '\n')) != NULL)
				*next++ = '\0';
			probe_rlimit_line(w, line);
		}
	jw_obj_close(w);
}

/*
 * The path of our cgroup's memory limit file: cgroup v2's memory.max,
 * or v1's memory.limit_in_bytes; "" if /proc/self/cgroup names neither.
 */
static void
probe_cgroup_memory_path(char *path, size_t len)
{
	char	 cg[PROBE_FILE_MAX], *line, *next, *p;

	path[0] = '\0';
	if (probe_read_file("/proc/self/cgroup", cg, sizeof(cg)) == -1)
		return;
	for (line = cg; line != NULL; line = next) {
		if ((next = strchr(line, '\n')) != NULL)
			*next++ = '\0';
		if (strncmp(line, "0::/", 4) == 0 && path[0] == '\0')
			snprintf(path, len, "/sys/fs/cgroup%s/memory.max",
			    strcmp(line + 3, "/") == 0 ? "" : line + 3);
		else if ((p = strstr(line, ":memory:/")) != NULL) {
			snprintf(path, len, "/sys/fs/cgroup/memory%s/"
			    "memory.limit_in_bytes", strcmp(p + 8, "/") == 0 ?
			    "" : p + 8);
			return;
		}
	}
}

/* Our cgroup's memory limit, if /sys/fs/cgroup can be read at all. */
static void
probe_cgroup_memory(struct jw *w)
{
	char			 path[PROBE_FILE_MAX + 64], v[64], *ep;
	unsigned long long	 n;

	probe_cgroup_memory_path(path, sizeof(path));
	if (path[0] == '\0' || probe_read_file(path, v, sizeof(v)) == -1) {
		jw_null(w, "cgroupMemoryMax");
		return;
	}
	v[strcspn(v, "\n")] = '\0';
	errno = 0;
	n = strtoull(v, &ep, 10);
	if (strcmp(v, "max") == 0 || (errno == 0 && *ep == '\0' &&
	    *v != '\0' && n >= (1ULL << 62)))
		jw_str(w, "cgroupMemoryMax", "max");
	else if (errno == 0 && *ep == '\0' && *v != '\0')
		jw_uint(w, "cgroupMemoryMax", n);
	else
		jw_null(w, "cgroupMemoryMax");
}

static void
probe_memtotal(struct jw *w)
{
	char			 buf[PROBE_FILE_MAX], v[64];
	unsigned long long	 kb;

	if (probe_read_file("/proc/meminfo", buf, sizeof(buf)) == -1 ||
	    probe_status_field(buf, "MemTotal", v, sizeof(v)) == -1 ||
	    (kb = strtoull(v, NULL, 10)) == 0 || kb > (1ULL << 50)) {
		jw_null(w, "memTotal");
		return;
	}
	jw_uint(w, "memTotal", kb * 1024);
}

void
probe_limits(struct jw *w, const struct probe_opts *o)
{
	cpu_set_t	 set;

	CPU_ZERO(&set);
	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		jw_int(w, "cpus", CPU_COUNT(&set));
	else
		jw_null(w, "cpus");
	probe_memtotal(w);
	probe_cgroup_memory(w);
	probe_rlimits_all(w);
}
