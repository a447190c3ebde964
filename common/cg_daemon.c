/*
 * Where fences' cgroups go, and the daemon's folders there.  Under the
 * daemon's own cgroup in each hierarchy, as /proc/self/cgroup names it
 * (a service manager may have put the daemon somewhere other than the
 * root), in a folder "fenced.<daemon id>" of its own, never at a
 * hierarchy's root.  A fence's cgroup in it is "<owner>.<key>"
 * (cg.c).
 *
 * The daemon id (parent/daemon.c) is DAEMON_ID_LEN random hex digits,
 * never a pid.  The parent enters its v2 leaf at start
 * (cg_daemon_enter()) and removes its folders at exit, or a dead
 * daemon's at start (cg_daemon_remove()); which daemon is dead, and so
 * whose folders may be swept, is the parent's to say.  The fencer makes
 * the folders and hands controllers down at its start
 * (cg_daemon_init()).  A sweep kills only what its pid namespace sees,
 * or all through v2's cgroup.kill.
 *
 * Each of memory, pids and cpu goes where /proc/self/cgroup and
 * /proc/self/mountinfo say: on the v1 hierarchy that has it (as on this
 * machine), else on the v2 hierarchy, whose cgroup of the daemon's must
 * offer it.  Anything else: no fences.  cg_parents() is the one
 * placement: the daemon, its sweeps and the regress suite's t_fence
 * all use it.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fenced.h"
#include "log.h"
#include "cg_impl.h"

#define CG_LEAF		"daemon"	/* v2: fenced.<id>/daemon holds us */

/* Where cgroup and mountinfo are read: the regress suite's fake trees. */
static const char	*cg_procdir_path = "/proc/self";

/*
 * "<owner>.<key>": the name of a fence's cgroup; "pool.<name>" one of
 * the warm pool's (native/pool.c), swept alike.
 */
static int
cg_name_valid(const char *name)
{
	const char	*dot, *p;

	if (strncmp(name, "pool.", 5) == 0)
		return (fence_key_valid(name + 5));

	if ((dot = strchr(name, '.')) == NULL || dot == name ||
	    dot - name > 10)
		return (0);
	for (p = name; p < dot; p++)
		if (*p < '0' || *p > '9')
			return (0);
	return (fence_key_valid(dot + 1));
}

/* Every fence's cgroup in one daemon's folder; -1 if one stays. */
static int
cg_sweep(const char *dir)
{
	char		 path[PATH_MAX], err[PATH_MAX + 64];
	struct dirent	*de;
	DIR		*d;
	int		 rv = 0;

	if ((d = opendir(dir)) == NULL)
		return (errno == ENOENT ? 0 : -1);
	while ((de = readdir(d)) != NULL) {
		if (de->d_type != DT_DIR || !cg_name_valid(de->d_name) ||
		    (size_t)snprintf(path, sizeof(path), "%s/%s", dir,
		    de->d_name) >= sizeof(path))
			continue;
		if (cg_rmdir(path, err, sizeof(err)) == 0)
			log_info("removed stale cgroup %s", path);
		else {
			log_warnx("%s: %s", __func__, err);
			rv = -1;
		}
	}
	closedir(d);
	return (rv);
}

static FILE *
cg_procfile(const char *name)
{
	char	 path[PATH_MAX];

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", cg_procdir_path,
	    name) >= sizeof(path))
		return (NULL);
	return (fopen(path, "re"));
}

/*
 * On v2 a daemon sits in the leaf <its cgroup>/fenced.<id>/daemon
 * (cg_daemon_enter()): its own cgroup is still the one it started
 * in, for itself, its children and the sweeps alike.
 */
static void
cg_strip_leaf(char *path)
{
	char	*leaf, *folder;
	size_t	 len = strlen(path);

	if (len < sizeof("/fenced./" CG_LEAF) + DAEMON_ID_LEN - 1)
		return;
	leaf = path + len - (sizeof("/" CG_LEAF) - 1);
	folder = leaf - (sizeof("/fenced.") - 1) - DAEMON_ID_LEN;
	if (strcmp(leaf, "/" CG_LEAF) != 0 ||
	    strncmp(folder, "/fenced.", sizeof("/fenced.") - 1) != 0)
		return;
	*leaf = '\0';
	if (!daemon_id_valid(folder + sizeof("/fenced.") - 1)) {
		*leaf = '/';
		return;
	}
	if (folder == path)
		snprintf(path, 2, "/");
	else
		*folder = '\0';
}

/*
 * The line of /proc/self/cgroup that has this controller (v1), or with
 * ctrl NULL the v2 line; path gets the cgroup path.  Returns 1 for v1,
 * 2 for v2, 0 if there is none.
 */
static int
cg_self(const char *ctrl, char *path, size_t len)
{
	FILE	*fp;
	char	 line[PATH_MAX + 128], *ctrls, *p, *tok, *save;
	int	 found = 0;

	if ((fp = cg_procfile("cgroup")) == NULL)
		return (-1);
	while (found == 0 && fgets(line, sizeof(line), fp) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		/* hierarchy-id:controller-list:path */
		if ((ctrls = strchr(line, ':')) == NULL ||
		    (p = strchr(++ctrls, ':')) == NULL)
			continue;
		*p++ = '\0';
		if (*ctrls == '\0') {
			if (ctrl == NULL) {
				snprintf(path, len, "%s", p);
				cg_strip_leaf(path);
				found = 2;
			}
			continue;
		}
		if (ctrl == NULL)
			continue;
		for (tok = strtok_r(ctrls, ",", &save); tok != NULL;
		    tok = strtok_r(NULL, ",", &save))
			if (strcmp(tok, ctrl) == 0) {
				snprintf(path, len, "%s", p);
				found = 1;
			}
	}
	(void)fclose(fp);
	return (found);
}

/* The mount point (and root) of the v1 hierarchy of ctrl, or of v2. */
static int
cg_mount(const char *ctrl, char *mnt, size_t mlen, char *root, size_t rlen)
{
	FILE	*fp;
	char	 line[2 * PATH_MAX], *fld[8], *sep, *tok, *save;
	int	 n, found = 0;

	if ((fp = cg_procfile("mountinfo")) == NULL)
		return (-1);
	while (!found && fgets(line, sizeof(line), fp) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		/* id parent dev root mountpoint opts ... - type src sopts */
		if ((sep = strstr(line, " - ")) == NULL)
			continue;
		*sep = '\0';
		for (n = 0, tok = strtok_r(line, " ", &save); tok != NULL &&
		    n < 5; tok = strtok_r(NULL, " ", &save))
			fld[n++] = tok;
		if (n < 5)
			continue;
		for (n = 5, tok = strtok_r(sep + 3, " ", &save); tok != NULL &&
		    n < 8; tok = strtok_r(NULL, " ", &save))
			fld[n++] = tok;
		if (n < 8)
			continue;
		if (ctrl == NULL) {
			if (strcmp(fld[5], "cgroup2") != 0)
				continue;
		} else {
			if (strcmp(fld[5], "cgroup") != 0)
				continue;
			for (tok = strtok_r(fld[7], ",", &save); tok != NULL;
			    tok = strtok_r(NULL, ",", &save))
				if (strcmp(tok, ctrl) == 0)
					break;
			if (tok == NULL)
				continue;
		}
		snprintf(root, rlen, "%s", fld[3]);
		snprintf(mnt, mlen, "%s", fld[4]);
		found = 1;
	}
	(void)fclose(fp);
	return (found ? 0 : -1);
}

/*
 * The one placement of fences' cgroups, for the daemon (sub is its
 * folder, fenced.<id>) and for the regress suite's t_fence (a folder of
 * its own): <mount>/<our own cgroup>/<sub> for memory, pids and cpu,
 * as /proc/self/cgroup and /proc/self/mountinfo name them.  A
 * controller on a v1 hierarchy is placed there, else on the unified
 * (v2) one, whose cgroup of ours must offer it.  own gets our own
 * cgroup's directory in each, v2 whether it is the unified one.
 */
static int
cg_place(const char *sub, char parents[CG_NCTRL][PATH_MAX],
    char own[CG_NCTRL][PATH_MAX], int v2[CG_NCTRL], char *err, size_t errlen)
{
	char		 cg[PATH_MAX], mnt[PATH_MAX], root[PATH_MAX];
	char		 buf[512];
	const char	*rel, *ctrl;
	size_t		 rl;
	int		 i, kind;

	for (i = 0; i < CG_NCTRL; i++) {
		ctrl = cg_ctrl[i];
		kind = cg_self(ctrl, cg, sizeof(cg));
		if (kind == 1) {
			if (cg_mount(ctrl, mnt, sizeof(mnt), root,
			    sizeof(root)) == -1) {
				snprintf(err, errlen, "the %s hierarchy is "
				    "not mounted", ctrl);
				return (-1);
			}
		} else {
			/* Not on v1: the unified hierarchy must have it. */
			if (cg_self(NULL, cg, sizeof(cg)) != 2 ||
			    cg_mount(NULL, mnt, sizeof(mnt), root,
			    sizeof(root)) == -1) {
				snprintf(err, errlen, "no cgroup hierarchy "
				    "has the %s controller", ctrl);
				return (-1);
			}
		}
		v2[i] = kind != 1;
		/* A mount of a sub-tree shows paths relative to its root. */
		rel = cg;
		rl = strlen(root);
		if (strcmp(root, "/") != 0 && strncmp(cg, root, rl) == 0 &&
		    (cg[rl] == '/' || cg[rl] == '\0'))
			rel = cg + rl;
		if (strcmp(rel, "/") == 0)
			rel = "";
		if ((size_t)snprintf(own[i], PATH_MAX, "%s%s", mnt, rel) >=
		    PATH_MAX || (size_t)snprintf(parents[i], PATH_MAX,
		    "%s/%s", own[i], sub) >= PATH_MAX) {
			snprintf(err, errlen, "cgroup path too long");
			return (-1);
		}
		/* v2: our own cgroup must offer the controller. */
		if (v2[i] && (file_read_small(own[i], "cgroup.controllers", buf,
		    sizeof(buf)) == -1 || !word_listed(buf, ctrl))) {
			snprintf(err, errlen, "%s/cgroup.controllers lacks %s "
			    "(the cgroup v2 hierarchy does not hand it down "
			    "to this daemon's cgroup)", own[i], ctrl);
			return (-1);
		}
	}
	return (0);
}

int
cg_parents(const char *sub, char parents[CG_NCTRL][PATH_MAX], char *err,
    size_t errlen)
{
	char	 own[CG_NCTRL][PATH_MAX];
	int	 v2[CG_NCTRL];

	return (cg_place(sub, parents, own, v2, err, errlen));
}

/* The regress suite points the placement at a fake /proc/self. */
void
cg_procdir(const char *dir)
{
	cg_procdir_path = dir;
}

/* fenced.<id> in each hierarchy: one daemon's folders. */
static int
cg_daemon_dirs(const char *id, char dir[CG_NCTRL][PATH_MAX],
    char own[CG_NCTRL][PATH_MAX], int v2[CG_NCTRL], char *err, size_t errlen)
{
	char	 sub[sizeof("fenced.") + DAEMON_ID_SIZE];

	snprintf(sub, sizeof(sub), "fenced.%s", id);
	return (cg_place(sub, dir, own, v2, err, errlen));
}

/* The first controller on the unified hierarchy, or -1 if none is. */
static int
cg_first_v2(const int v2[CG_NCTRL])
{
	int	 i;

	for (i = 0; i < CG_NCTRL; i++)
		if (v2[i])
			return (i);
	return (-1);
}

/*
 * The parent, at start, before it forks anything (so the broker, the
 * fencer and the prober are born in it, and nobody moves anybody after
 * lockdown): on v2, into the leaf <our cgroup>/fenced.<id>/daemon, so
 * that neither our cgroup nor our folder holds a process and both may
 * hand controllers down (cgroup v2's no-internal-processes rule).  On
 * v1 nothing moves.  Returns 1 if it moved, 0 if there was nothing to
 * do, -1 with err.
 */
int
cg_daemon_enter(const char *id, char *err, size_t errlen)
{
	char	 dir[CG_NCTRL][PATH_MAX], own[CG_NCTRL][PATH_MAX];
	char	 leaf[PATH_MAX];
	int	 v2[CG_NCTRL], i;

	if (id == NULL || !daemon_id_valid(id)) {
		snprintf(err, errlen, "daemon id not valid");
		return (-1);
	}
	if (cg_daemon_dirs(id, dir, own, v2, err, errlen) == -1)
		return (-1);
	if ((i = cg_first_v2(v2)) == -1)
		return (0);
	if ((size_t)snprintf(leaf, sizeof(leaf), "%s/" CG_LEAF, dir[i]) >=
	    sizeof(leaf)) {
		snprintf(err, errlen, "cgroup path too long");
		return (-1);
	}
	if ((mkdir(dir[i], 0755) == -1 && errno != EEXIST) ||
	    (mkdir(leaf, 0755) == -1 && errno != EEXIST)) {
		snprintf(err, errlen, "mkdir %s: %s", leaf, strerror(errno));
		return (-1);
	}
	if (cg_v2_enter(leaf) == -1) {
		snprintf(err, errlen, "move into %s: %s", leaf,
		    strerror(errno));
		return (-1);
	}
	return (1);
}

/*
 * Whether dir holds no cgroup but name (and so no one but us depends
 * on what it hands down), and its leaf no process but us.
 */
static int
cg_ours_alone(const char *own, const char *name, const char *leaf)
{
	struct dirent	*de;
	DIR		*d;
	int		 alone = 1;

	if ((d = opendir(own)) == NULL)
		return (0);
	while (alone && (de = readdir(d)) != NULL)
		if (de->d_type == DT_DIR && strcmp(de->d_name, ".") != 0 &&
		    strcmp(de->d_name, "..") != 0 &&
		    strcmp(de->d_name, name) != 0)
			alone = 0;
	closedir(d);
	return (alone && cg_v2_only_us(leaf));
}

/*
 * The parent, at exit: out of its leaf into the cgroup it started in,
 * so the leaf and the folder can go.  A root cgroup takes it back as it
 * is.  Any other one hands controllers down and so takes no process
 * (v2's no-internal-processes rule): when it holds nothing but our
 * folder (a unit's cgroup with Delegate=yes, ours alone), its fences'
 * cgroups are removed and the controllers handed down to our folder and
 * from our cgroup taken back, as they were before we started, so that
 * we can go back and leave nothing.  Where others share our cgroup we
 * stay in the leaf.  Returns 0 if we are out of the leaf (or never
 * were in one), -1 if we are still in it.
 */
static int
cg_leave(const char *id)
{
	char	 dir[CG_NCTRL][PATH_MAX], own[CG_NCTRL][PATH_MAX], err[256];
	char	 path[PATH_MAX], cg[PATH_MAX], leaf[PATH_MAX], *p;
	FILE	*fp;
	int	 v2[CG_NCTRL], i, in = 0;

	if (cg_daemon_dirs(id, dir, own, v2, err, sizeof(err)) == -1 ||
	    (i = cg_first_v2(v2)) == -1)
		return (0);
	/* cg_self() hides the leaf; the raw line shows it. */
	snprintf(path, sizeof(path), "fenced.%s/" CG_LEAF, id);
	if ((fp = cg_procfile("cgroup")) == NULL)
		return (0);
	while (fgets(cg, sizeof(cg), fp) != NULL) {
		cg[strcspn(cg, "\n")] = '\0';
		if (strncmp(cg, "0::", 3) == 0 && (p = strstr(cg,
		    path)) != NULL && strcmp(p, path) == 0)
			in = 1;
	}
	(void)fclose(fp);
	if (!in)
		return (0);
	if (cg_v2_enter(own[i]) == 0)
		return (0);
	if (errno != EBUSY) {
		log_warn("%s: back into %s", __func__, own[i]);
		return (-1);
	}
	if ((size_t)snprintf(leaf, sizeof(leaf), "%s/" CG_LEAF, dir[i]) >=
	    sizeof(leaf) || (p = strrchr(dir[i], '/')) == NULL ||
	    cg_sweep(dir[i]) == -1 || !cg_ours_alone(own[i], p + 1, leaf)) {
		log_info("%s: %s is shared, so our leaf %s stays for the next "
		    "start (or the service manager) to remove", __func__,
		    own[i], leaf);
		return (-1);
	}
	if (cg_v2_disable(dir[i]) == -1 || cg_v2_disable(own[i]) == -1 ||
	    cg_v2_enter(own[i]) == -1) {
		log_warn("%s: back into %s", __func__, own[i]);
		return (-1);
	}
	return (0);
}

/*
 * A daemon's folders, fenced.<id> in each hierarchy, swept and removed,
 * with its v2 leaf; -1 if one stays (a process we cannot kill is in
 * it).  With inleaf set the daemon is ours and still in its leaf: only
 * its fences' cgroups go (cg_kill_dir() would kill the daemon with
 * the folder's cgroup.kill), and the folder stays (-1).
 */
static int
cg_sweep_daemon(const char *id, int inleaf)
{
	char		 dir[CG_NCTRL][PATH_MAX], own[CG_NCTRL][PATH_MAX];
	char		 leaf[PATH_MAX], err[PATH_MAX + 64];
	int		 v2[CG_NCTRL], i, j, seen, rv = 0;

	if (cg_daemon_dirs(id, dir, own, v2, err, sizeof(err)) == -1) {
		log_debug("%s: %s", __func__, err);
		return (0);
	}
	for (i = 0; i < CG_NCTRL; i++) {
		for (seen = 0, j = 0; j < i; j++)
			if (strcmp(dir[j], dir[i]) == 0)
				seen = 1;
		if (seen)
			continue;
		if (cg_sweep(dir[i]) == -1) {
			log_warnx("%s: %s left behind", __func__, dir[i]);
			rv = -1;
			continue;
		}
		if (inleaf && v2[i]) {
			rv = -1;
			continue;
		}
		if (v2[i] && (size_t)snprintf(leaf, sizeof(leaf),
		    "%s/" CG_LEAF, dir[i]) < sizeof(leaf) &&
		    cg_rmdir(leaf, err, sizeof(err)) == -1)
			log_warnx("%s: %s; %s left behind", __func__, err,
			    leaf);
		if (cg_rmdir(dir[i], err, sizeof(err)) == -1) {
			log_warnx("%s: %s; %s left behind", __func__, err,
			    dir[i]);
			rv = -1;
		}
	}
	return (rv);
}

/*
 * The fencer, at start: this daemon's folders made, what a crashed
 * fencer of ours left swept, and on v2 memory, pids and cpu handed
 * down from our cgroup to the folder and from the folder to the
 * fences (the parent has moved the daemon into its leaf already).
 */
int
cg_daemon_init(const char *id, char parent[CG_NCTRL][PATH_MAX], char *err,
    size_t errlen)
{
	char		 own[CG_NCTRL][PATH_MAX];
	int		 v2[CG_NCTRL], i;

	if (id == NULL || !daemon_id_valid(id)) {
		snprintf(err, errlen, "daemon id not valid");
		return (-1);
	}
	if (cg_daemon_dirs(id, parent, own, v2, err, errlen) == -1)
		return (-1);
	for (i = 0; i < CG_NCTRL; i++) {
		if (mkdir(parent[i], 0755) == -1 && errno != EEXIST) {
			snprintf(err, errlen, "mkdir %s: %s", parent[i],
			    strerror(errno));
			return (-1);
		}
		cg_sweep(parent[i]);
		log_debug("%s: %s fences under %s (cgroup v%d)", __func__,
		    cg_ctrl[i], parent[i], v2[i] ? 2 : 1);
	}
	if ((i = cg_first_v2(v2)) != -1 &&
	    (cg_v2_enable(own[i], v2, err, errlen) == -1 ||
	    cg_v2_enable(parent[i], v2, err, errlen) == -1))
		return (-1);
	return (0);
}

void
cg_daemon_fini(char parent[CG_NCTRL][PATH_MAX])
{
	int	 i;

	for (i = 0; i < CG_NCTRL; i++) {
		if (parent[i][0] == '\0')
			continue;
		cg_sweep(parent[i]);
		if (rmdir(parent[i]) == -1 && errno != ENOENT &&
		    errno != EBUSY)
			log_warn("%s: rmdir %s", __func__, parent[i]);
	}
}

/*
 * The parent: a daemon's folders, fenced.<id> in each hierarchy, swept
 * and removed.  With ours, the daemon is the caller, which leaves its
 * v2 leaf first (cg_leave()); else it is one the parent found dead.
 * Returns -1 if one stays.
 */
int
cg_daemon_remove(const char *id, int ours)
{
	if (id == NULL || !daemon_id_valid(id))
		return (-1);
	return (cg_sweep_daemon(id, ours && cg_leave(id) == -1));
}
