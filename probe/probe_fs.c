/*
 * The section "filesystem": for each path of a fixed list, whether it
 * exists, can be listed and can be written, the last by creating and
 * unlinking a marker .sandbox-probe-<pid>-<when> in it; and whether the
 * files the host names with --host-secret can be read (they must not).
 * Markers older than a minute, left by interrupted probes, are removed
 * before anything is measured.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "probe.h"

#define PROBE_MARKER_AGE	60	/* seconds: then a marker is orphaned */

/*
 * The documented list (docs/probe.md).  "HOME" is $HOME.  /proc/sys is
 * tested by opening a sysctl for writing instead: procfs never lets a
 * file be created, so a marker would say nothing.
 */
static const char *const probe_fs_paths[] = {
	"/", "/usr", "/etc", "/tmp", "/run", "/var", "/home", "HOME",
	"/root", "/proc/sys", "/sys", "/dev", "/boot", "/var/lib"
};
#define PROBE_FS_NPATHS	(sizeof(probe_fs_paths) / sizeof(probe_fs_paths[0]))
#define PROBE_SYSCTL	"/proc/sys/kernel/hostname"

static const char *
probe_fs_resolve(const char *label)
{
	const char	*home;

	if (strcmp(label, "HOME") != 0)
		return (label);
	home = getenv("HOME");
	if (home == NULL || home[0] != '/' || strlen(home) >= PROBE_STR_MAX)
		return (NULL);
	return (home);
}

/* Orphaned markers in one directory: ours, regular, over a minute old. */
static int
probe_markers_dir(const char *path, time_t now)
{
	struct dirent	*de;
	struct stat	 st;
	DIR		*d;
	int		 fd, n = 0, seen = 0;

	if ((fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC |
	    O_NONBLOCK)) == -1)
		return (0);
	if ((d = fdopendir(fd)) == NULL) {
		(void)close(fd);
		return (0);
	}
	while ((de = readdir(d)) != NULL && seen++ < PROBE_DIR_SCAN_MAX) {
		if (strncmp(de->d_name, PROBE_MARKER, strlen(PROBE_MARKER))
		    != 0)
			continue;
		if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == -1 ||
		    !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
		    st.st_mtime > now - PROBE_MARKER_AGE)
			continue;
		if (unlinkat(fd, de->d_name, 0) == 0)
			n++;
	}
	closedir(d);
	return (n);
}

int
probe_markers_clean(const struct probe_opts *o)
{
	const char	*path;
	time_t		 now = time(NULL);
	size_t		 i;
	int		 n = 0;

	for (i = 0; i < PROBE_FS_NPATHS; i++)
		if ((path = probe_fs_resolve(probe_fs_paths[i])) != NULL &&
		    strcmp(probe_fs_paths[i], "/proc/sys") != 0)
			n += probe_markers_dir(path, now);
	return (n);
}

/* Entries of a directory, at most PROBE_DIR_SCAN_MAX; -1 and errno. */
static long
probe_fs_list(const char *path)
{
	struct dirent	*de;
	DIR		*d;
	long		 n = 0;
	int		 fd;

	if ((fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC |
	    O_NONBLOCK)) == -1)
		return (-1);
	if ((d = fdopendir(fd)) == NULL) {
		(void)close(fd);
		return (-1);
	}
	while ((de = readdir(d)) != NULL && n < PROBE_DIR_SCAN_MAX)
		if (strcmp(de->d_name, ".") != 0 &&
		    strcmp(de->d_name, "..") != 0)
			n++;
	closedir(d);
	return (n);
}

/*
 * Can a file be created in the directory?  0 if so (and it is gone
 * again), else the errno; *left says the marker could not be removed.
 */
static int
probe_fs_write(const char *path, const struct probe_opts *o, int *left)
{
	char	 marker[PATH_MAX];
	int	 fd;

	*left = 0;
	if (strcmp(path, "/proc/sys") == 0) {
		if ((fd = open(PROBE_SYSCTL, O_WRONLY | O_CLOEXEC |
		    O_NOCTTY)) == -1)
			return (errno);
		(void)close(fd);
		return (0);
	}
	if ((size_t)snprintf(marker, sizeof(marker), "%s/%s%d-%s",
	    strcmp(path, "/") == 0 ? "" : path, PROBE_MARKER, (int)getpid(),
	    o->po_when) >= sizeof(marker))
		return (ENAMETOOLONG);
	if ((fd = open(marker, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC | O_NOCTTY, 0600)) == -1)
		return (errno);
	(void)close(fd);
	if (unlink(marker) == -1)
		*left = 1;
	return (0);
}

static void
probe_fs_path(struct jw *w, const char *label, const struct probe_opts *o)
{
	const char	*path = probe_fs_resolve(label);
	struct stat	 st;
	long		 entries;
	int		 e, left = 0;

	jw_obj_open(w, NULL);
	jw_str(w, "label", label);
	jw_str(w, "path", path);
	if (path == NULL || stat(path, &st) == -1) {
		e = path == NULL ? ENOENT : errno;
		jw_bool(w, "exists", 0);
		jw_bool(w, "listable", 0);
		jw_null(w, "entries");
		jw_bool(w, "writable", 0);
		jw_err(w, "error", e);
		jw_obj_close(w);
		return;
	}
	jw_bool(w, "exists", 1);
	if ((entries = probe_fs_list(path)) == -1) {
		jw_bool(w, "listable", 0);
		jw_null(w, "entries");
	} else {
		jw_bool(w, "listable", 1);
		jw_int(w, "entries", entries);
	}
	e = S_ISDIR(st.st_mode) ? probe_fs_write(path, o, &left) : ENOTDIR;
	jw_bool(w, "writable", e == 0);
	jw_err(w, "error", e);
	if (left)
		jw_bool(w, "markerLeft", 1);
	jw_obj_close(w);
}

static void
probe_host_paths(struct jw *w, const struct probe_opts *o)
{
	int	 i, fd, e;

	jw_arr_open(w, "hostPaths");
	for (i = 0; i < o->po_nsecrets; i++) {
		jw_obj_open(w, NULL);
		jw_str(w, "path", o->po_secrets[i]);
		fd = open(o->po_secrets[i], O_RDONLY | O_CLOEXEC | O_NOCTTY |
		    O_NONBLOCK);
		e = fd == -1 ? errno : 0;
		jw_bool(w, "readable", fd != -1);
		jw_err(w, "error", e);
		if (fd != -1)
			(void)close(fd);
		jw_obj_close(w);
	}
	jw_arr_close(w);
}

void
probe_filesystem(struct jw *w, const struct probe_opts *o)
{
	size_t	 i;

	jw_str(w, "home", probe_fs_resolve("HOME"));
	jw_int(w, "markersRemoved", o->po_markers_removed);
	jw_arr_open(w, "paths");
	for (i = 0; i < PROBE_FS_NPATHS; i++)
		probe_fs_path(w, probe_fs_paths[i], o);
	jw_arr_close(w);
	probe_host_paths(w, o);
}
