/*
 * The sections "identity" (who the probe runs as, on which kernel) and
 * "sandboxHints" (what /proc/self says about the confinement: seccomp,
 * capabilities, no_new_privs, name spaces, mounts, Landlock, cgroup).
 */
#include <sys/types.h>
#include <sys/syscall.h>
#include <sys/utsname.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "probe.h"

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset	444
#endif
#define PROBE_LANDLOCK_VERSION		(1U << 0)

#define PROBE_STATUS_MAX		16384

const char *const probe_ns_names[PROBE_NS_MAX] = {
	[PROBE_NS_CGROUP] = "cgroup",
	[PROBE_NS_IPC] = "ipc",
	[PROBE_NS_MNT] = "mnt",
	[PROBE_NS_NET] = "net",
	[PROBE_NS_PID] = "pid",
	[PROBE_NS_TIME] = "time",
	[PROBE_NS_USER] = "user",
	[PROBE_NS_UTS] = "uts",
};

static void
probe_boot_id(struct jw *w)
{
	char	 buf[64];
	ssize_t	 n;

	n = probe_read_file("/proc/sys/kernel/random/boot_id", buf,
	    sizeof(buf));
	if (n <= 0) {
		jw_null(w, "bootId");
		return;
	}
	buf[strcspn(buf, "\n")] = '\0';
	jw_str(w, "bootId", buf);
}

void
probe_identity(struct jw *w, const struct probe_opts *o)
{
	struct utsname	 u;
	gid_t		 groups[PROBE_GROUPS_MAX];
	char		 cwd[PATH_MAX];
	int		 i, n;

	jw_uint(w, "uid", getuid());
	jw_uint(w, "euid", geteuid());
	jw_uint(w, "gid", getgid());
	jw_uint(w, "egid", getegid());
	jw_arr_open(w, "groups");
	if ((n = getgroups(PROBE_GROUPS_MAX, groups)) > 0)
		for (i = 0; i < n; i++)
			jw_uint(w, NULL, groups[i]);
	jw_arr_close(w);
	jw_str(w, "cwd", getcwd(cwd, sizeof(cwd)));
	jw_str(w, "platform", "linux");
	jw_obj_open(w, "kernel");
	if (uname(&u) == 0) {
		jw_str(w, "release", u.release);
		jw_str(w, "version", u.version);
		jw_str(w, "machine", u.machine);
	} else {
		jw_null(w, "release");
		jw_null(w, "version");
		jw_null(w, "machine");
	}
	jw_obj_close(w);
	probe_boot_id(w);
}

/* A decimal field of status as a number, or null if it is not there. */
static void
probe_status_int(struct jw *w, const char *status, const char *field,
    const char *key)
{
	char		 v[64], *ep;
	long long	 n;

	if (probe_status_field(status, field, v, sizeof(v)) == -1) {
		jw_null(w, key);
		return;
	}
	errno = 0;
	n = strtoll(v, &ep, 10);
	if (errno != 0 || *ep != '\0' || v[0] == '\0')
		jw_null(w, key);
	else
		jw_int(w, key, n);
}

/* A capability set: the 16 hex digits as /proc shows them, or null. */
static void
probe_status_caps(struct jw *w, const char *status, const char *field,
    const char *key)
{
	char	 v[64];

	if (probe_status_field(status, field, v, sizeof(v)) == -1 ||
	    strlen(v) != 16 || strspn(v, "0123456789abcdef") != 16)
		jw_null(w, key);
	else
		jw_str(w, key, v);
}

static void
probe_namespaces(struct jw *w, const struct probe_opts *o)
{
	char			 path[64], link[128], *ep;
	unsigned long long	 ino;
	ssize_t			 n;
	int			 i;

	jw_obj_open(w, "namespaces");
	for (i = 0; i < PROBE_NS_MAX; i++) {
		jw_obj_open(w, probe_ns_names[i]);
		snprintf(path, sizeof(path), "/proc/self/ns/%s",
		    probe_ns_names[i]);
		ino = 0;
		if ((n = readlink(path, link, sizeof(link) - 1)) > 0) {
			link[n] = '\0';
			if ((ep = strchr(link, '[')) != NULL)
				ino = strtoull(ep + 1, NULL, 10);
		}
		if (ino == 0) {
			jw_null(w, "inode");
			jw_err(w, "error", n == -1 ? errno : EINVAL);
			jw_null(w, "differs");
		} else {
			jw_uint(w, "inode", ino);
			jw_null(w, "error");
			if (o->po_host_ns[i] == 0)
				jw_null(w, "differs");
			else
				jw_bool(w, "differs", ino != o->po_host_ns[i]);
		}
		jw_obj_close(w);
	}
	jw_obj_close(w);
}

/* The first n lines of a /proc file (and how many there are). */
static void
probe_lines(struct jw *w, const char *key, const char *path, int max)
{
	FILE	*f;
	char	*line = NULL;
	size_t	 cap = 0;
	ssize_t	 n;
	long	 total = 0;

	jw_obj_open(w, key);
	if ((f = fopen(path, "re")) == NULL) {
		jw_err(w, "error", errno);
		jw_null(w, "total");
		jw_arr_open(w, "lines");
		jw_arr_close(w);
		jw_obj_close(w);
		return;
	}
	jw_null(w, "error");
	jw_arr_open(w, "lines");
	while ((n = getline(&line, &cap, f)) != -1 && total < 100000) {
		if (n > 0 && line[n - 1] == '\n')
			line[--n] = '\0';
		if (total++ < max)
			jw_strn(w, NULL, line, (size_t)n);
	}
	jw_arr_close(w);
	jw_int(w, "total", total);
	free(line);
	fclose(f);
	jw_obj_close(w);
}

/*
 * The Landlock ABI the kernel offers, and whether this process is in a
 * domain that refuses it something: opening its own /proc/self/comm for
 * writing is allowed by the file's mode, so EACCES there (with Landlock
 * present) means a ruleset that gives / read-only access, as a fence's
 * does.  Nothing is written.
 */
static void
probe_landlock(struct jw *w)
{
	long	 abi;
	int	 fd, e = 0;

	jw_obj_open(w, "landlock");
	abi = syscall(SYS_landlock_create_ruleset, NULL, 0,
	    PROBE_LANDLOCK_VERSION);
	if (abi < 0) {
		e = errno;
		jw_null(w, "abi");
		jw_err(w, "error", e);
		jw_null(w, "restricted");
		jw_obj_close(w);
		return;
	}
	jw_int(w, "abi", abi);
	jw_null(w, "error");
	fd = open("/proc/self/comm", O_WRONLY | O_CLOEXEC | O_NOCTTY);
	if (fd == -1)
		e = errno;
	else
		(void)close(fd);
	if (fd != -1)
		jw_bool(w, "restricted", 0);
	else if (e == EACCES)
		jw_bool(w, "restricted", 1);
	else
		jw_null(w, "restricted");
	jw_obj_close(w);
}

static void
probe_deadline_hint(struct jw *w, const struct probe_opts *o)
{
	struct tm	 tm;
	time_t		 t = (time_t)o->po_deadline;
	char		 iso[40];

	if (o->po_deadline == 0) {
		jw_null(w, "deadline");
		return;
	}
	jw_obj_open(w, "deadline");
	jw_int(w, "unix", o->po_deadline);
	if (gmtime_r(&t, &tm) != NULL &&
	    strftime(iso, sizeof(iso), "%Y-%m-%dT%H:%M:%SZ", &tm) > 0)
		jw_str(w, "iso", iso);
	else
		jw_null(w, "iso");
	jw_int(w, "remainingSec", o->po_deadline - (long long)time(NULL));
	jw_obj_close(w);
}

void
probe_hints(struct jw *w, const struct probe_opts *o)
{
	static char	 status[PROBE_STATUS_MAX];

	if (probe_read_file("/proc/self/status", status, sizeof(status))
	    == -1)
		status[0] = '\0';
	probe_status_int(w, status, "Seccomp", "seccomp");
	probe_status_int(w, status, "Seccomp_filters", "seccompFilters");
	probe_status_int(w, status, "NoNewPrivs", "noNewPrivs");
	probe_status_caps(w, status, "CapEff", "capEff");
	probe_status_caps(w, status, "CapBnd", "capBnd");
	probe_status_caps(w, status, "CapPrm", "capPrm");
	probe_status_caps(w, status, "CapAmb", "capAmb");
	probe_status_caps(w, status, "CapInh", "capInh");
	probe_namespaces(w, o);
	probe_lines(w, "mountSample", "/proc/self/mounts", PROBE_MOUNT_LINES);
	probe_landlock(w);
	probe_lines(w, "cgroup", "/proc/self/cgroup", PROBE_CGROUP_LINES);
	probe_deadline_hint(w, o);
}
