/*
 * Where the fencer puts fences' cgroups: under the daemon's own cgroup
 * in each hierarchy, as /proc/self/cgroup names it (a service manager
 * may have put the daemon somewhere other than the root), in a
 * directory "fenced.<pid of the parent>" of our own, so that two daemons
 * on one machine never touch each other's fences; never at a
 * hierarchy's root.  Such directories of daemons no longer running are
 * swept at start.
 *
 * cgroup v1 when /sys/fs/cgroup/{memory,pids,cpu} are v1 hierarchies (as
 * on this machine), else v2 when /sys/fs/cgroup is a v2 hierarchy whose
 * cgroup.controllers offers all three.  Anything else: no fences.
 */
#include <sys/types.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include <linux/magic.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fenced.h"
#include "log.h"
#include "fencer.h"

#define CG_ROOT		"/sys/fs/cgroup"

static const char *const cg_ctrl[3] = { "memory", "pids", "cpu" };

/* The daemon's path in hierarchy ctrl ("" for v2's unified line). */
static int
cg_self_path(const char *ctrl, char *out, size_t outsz)
{
	char		 line[1024], *p, *list, *path, *tok;
	FILE		*fp;
	int		 found = -1;

	if ((fp = fopen("/proc/self/cgroup", "re")) == NULL)
		return (-1);
	while (found == -1 && fgets(line, sizeof(line), fp) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		/* hierarchy-id:controller-list:path */
		if ((p = strchr(line, ':')) == NULL)
			continue;
		list = p + 1;
		if ((path = strchr(list, ':')) == NULL)
			continue;
		*path++ = '\0';
		while ((tok = strsep(&list, ",")) != NULL) {
			if (strcmp(tok, ctrl) == 0) {
				found = strlcpy(out, path, outsz) < outsz ?
				    0 : -1;
				break;
			}
		}
	}
	fclose(fp);
	return (found);
}

static int
cg_is(const char *path, long magic)
{
	struct statfs	 sf;

	return (statfs(path, &sf) == 0 && sf.f_type == magic);
}

static int
cg_v2_has_controllers(void)
{
	char		 buf[512];
	int		 fd, i, n;
	ssize_t		 len;
	char		*tok, *p;

	if ((fd = open(CG_ROOT "/cgroup.controllers", O_RDONLY |
	    O_CLOEXEC)) == -1)
		return (0);
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return (0);
	buf[len] = '\0';
	for (i = 0, n = 0; i < 3; i++) {
		char copy[512];

		strlcpy(copy, buf, sizeof(copy));
		p = copy;
		while ((tok = strsep(&p, " \n")) != NULL)
			if (strcmp(tok, cg_ctrl[i]) == 0) {
				n++;
				break;
			}
	}
	return (n == 3);
}

/* Kill what a cgroup left by an earlier daemon still holds, remove it. */
static void
cg_sweep(const char *dir)
{
	char		 path[PATH_MAX], line[64];
	struct dirent	*de;
	FILE		*fp;
	DIR		*d;
	pid_t		 pid;

	if ((d = opendir(dir)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (de->d_type != DT_DIR || !fence_key_valid(de->d_name))
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s/cgroup.procs",
		    dir, de->d_name) >= sizeof(path))
			continue;
		if ((fp = fopen(path, "re")) != NULL) {
			while (fgets(line, sizeof(line), fp) != NULL)
				if ((pid = atoi(line)) > 1)
					kill(pid, SIGKILL);
			fclose(fp);
		}
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir,
		    de->d_name) >= sizeof(path))
			continue;
		if (rmdir(path) == -1 && errno != ENOENT)
			log_warn("%s: stale cgroup %s", __func__, path);
		else
			log_info("removed stale cgroup %s", path);
	}
	closedir(d);
}

/* fenced.<pid> directories whose daemon is gone. */
static void
cg_sweep_dead(const char *base)
{
	char		 path[PATH_MAX];
	const char	*errstr;
	struct dirent	*de;
	DIR		*d;
	pid_t		 pid;

	if ((d = opendir(base)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (de->d_type != DT_DIR ||
		    strncmp(de->d_name, "fenced.", 7) != 0)
			continue;
		pid = strtonum(de->d_name + 7, 1, INT_MAX, &errstr);
		if (errstr != NULL || pid == getppid() ||
		    kill(pid, 0) == 0 || errno != ESRCH)
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", base,
		    de->d_name) >= sizeof(path))
			continue;
		cg_sweep(path);
		if (rmdir(path) == -1)
			log_warn("%s: stale cgroup %s", __func__, path);
	}
	closedir(d);
}

int
fencer_cgroup_init(char parent[3][PATH_MAX])
{
	char		 mnt[PATH_MAX], self[PATH_MAX], base[PATH_MAX];
	int		 i, v1 = 1;

	for (i = 0; i < 3; i++) {
		snprintf(mnt, sizeof(mnt), CG_ROOT "/%s", cg_ctrl[i]);
		if (!cg_is(mnt, CGROUP_SUPER_MAGIC))
			v1 = 0;
	}
	for (i = 0; i < 3; i++) {
		if (v1) {
			snprintf(mnt, sizeof(mnt), CG_ROOT "/%s", cg_ctrl[i]);
			if (cg_self_path(cg_ctrl[i], self, sizeof(self)) == -1)
				return (-1);
		} else {
			if (!cg_is(CG_ROOT, CGROUP2_SUPER_MAGIC) ||
			    !cg_v2_has_controllers())
				return (-1);
			strlcpy(mnt, CG_ROOT, sizeof(mnt));
			if (cg_self_path("", self, sizeof(self)) == -1)
				return (-1);
		}
		if (strcmp(self, "/") == 0)
			self[0] = '\0';
		if ((size_t)snprintf(base, sizeof(base), "%s%s", mnt, self) >=
		    sizeof(base) || (size_t)snprintf(parent[i], PATH_MAX,
		    "%s/fenced.%d", base, (int)getppid()) >= PATH_MAX)
			return (-1);
		cg_sweep_dead(base);
		if (mkdir(parent[i], 0755) == -1 && errno != EEXIST) {
			log_warn("%s: mkdir %s", __func__, parent[i]);
			return (-1);
		}
		cg_sweep(parent[i]);
		log_debug("%s: %s fences under %s", __func__, cg_ctrl[i],
		    parent[i]);
	}
	return (0);
}

void
fencer_cgroup_fini(char parent[3][PATH_MAX])
{
	int	 i;

	for (i = 0; i < 3; i++) {
		if (parent[i][0] == '\0')
			continue;
		cg_sweep(parent[i]);
		if (rmdir(parent[i]) == -1 && errno != ENOENT &&
		    errno != EBUSY)
			log_warn("%s: rmdir %s", __func__, parent[i]);
	}
}
