/*
 * Where the fencer puts fences' cgroups: under the daemon's own cgroup
 * in each hierarchy, as /proc/self/cgroup names it (a service manager
 * may have put the daemon somewhere other than the root), in a folder
 * "fenced.<daemon id>" of its own, never at a hierarchy's root.  A
 * fence's cgroup in it is "<owner>.<key>".
 *
 * The daemon id is FENCER_ID_LEN random hex digits the parent makes at
 * start, never a pid: pids repeat, and across pid namespaces a daemon
 * in a container sees every host daemon as dead.  While it runs, the
 * parent holds an flock on <state>/daemons/<id>.  A folder is swept
 * (its processes killed, its cgroups removed) only when it is provably
 * a daemon of this state directory's (its lock file is there) and dead
 * (the lock is free): another daemon's folders, of another state
 * directory or another pid namespace, are never touched.  The parent
 * sweeps dead ones at start, and its own when it exits, whatever became
 * of the fencer; a lock file goes only with the last of its folders
 * (a sweep kills only what its pid namespace sees, or all through v2's
 * cgroup.kill).  Starts take turns on <state>/daemons.
 *
 * Each of memory, pids and cpu goes where /proc/self/cgroup and
 * /proc/self/mountinfo say: on the v1 hierarchy that has it (as on this
 * machine), else on the v2 hierarchy, whose cgroup of the daemon's must
 * offer it.  Anything else: no fences.  fencer_cgroup_parents() is the
 * one placement: the daemon, its sweeps and the regress suite's t_fence
 * all use it.
 */
#include <sys/types.h>
#include <sys/file.h>
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fenced.h"
#include "log.h"
#include "fencer.h"

#define CG_DAEMONS	"daemons"	/* under the state directory */
#define CG_RMDIR_TRIES	400		/* 5 ms apart */
#define CG_LEAF		"daemon"	/* v2: fenced.<id>/daemon holds us */

static const char *const cg_ctrl[3] = { "memory", "pids", "cpu" };
/* Where cgroup and mountinfo are read: the regress suite's fake trees. */
static const char	*cg_procdir = "/proc/self";

static int	cg_id_valid(const char *);

static void	cg_state_leftovers(const char *);

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

/*
 * SIGKILL what a cgroup holds.  v2's cgroup.kill reaches every process
 * in it; cgroup.procs names only those our pid namespace can see (v1
 * leaves the others out, v2 says 0), so a daemon in a pid namespace of
 * its own cannot empty a v1 cgroup of processes outside it.
 */
static void
cg_kill_procs(const char *dir)
{
	char		 path[PATH_MAX], line[64];
	FILE		*fp;
	pid_t		 pid;
	int		 fd;

	if ((size_t)snprintf(path, sizeof(path), "%s/cgroup.kill", dir) <
	    sizeof(path) && (fd = open(path, O_WRONLY | O_CLOEXEC)) != -1) {
		if (write(fd, "1", 1) == -1)
			log_debug("%s: %s: %s", __func__, path,
			    strerror(errno));
		(void)close(fd);
	}
	if ((size_t)snprintf(path, sizeof(path), "%s/cgroup.procs", dir) >=
	    sizeof(path) || (fp = fopen(path, "re")) == NULL)
		return;
	/* Never ourselves: on v2 the daemon's leaf is in its folder. */
	while (fgets(line, sizeof(line), fp) != NULL)
		if ((pid = atoi(line)) > 1 && pid != getpid())
			kill(pid, SIGKILL);
	fclose(fp);
}

/* Kill what a cgroup still holds and remove it; dying tasks may linger. */
static int
cg_remove(const char *dir)
{
	struct timespec	 ts = { 0, 5 * 1000 * 1000 };
	int		 i;

	for (i = 0; i < CG_RMDIR_TRIES; i++) {
		if (rmdir(dir) == 0 || errno == ENOENT)
			return (0);
		if (errno != EBUSY)
			break;
		cg_kill_procs(dir);
		nanosleep(&ts, NULL);
	}
	log_warn("%s: rmdir %s", __func__, dir);
	return (-1);
}

/* Every fence's cgroup in one daemon's folder; -1 if one stays. */
static int
cg_sweep(const char *dir)
{
	char		 path[PATH_MAX];
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
		if (cg_remove(path) == 0)
			log_info("removed stale cgroup %s", path);
		else
			rv = -1;
	}
	closedir(d);
	return (rv);
}

static FILE *
cg_procfile(const char *name)
{
	char	 path[PATH_MAX];

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", cg_procdir,
	    name) >= sizeof(path))
		return (NULL);
	return (fopen(path, "re"));
}

/*
 * On v2 a daemon sits in the leaf <its cgroup>/fenced.<id>/daemon
 * (fencer_cgroup_enter()): its own cgroup is still the one it started
 * in, for itself, its children and the sweeps alike.
 */
static void
cg_strip_leaf(char *path)
{
	char	*leaf, *folder;
	size_t	 len = strlen(path);

	if (len < sizeof("/fenced./" CG_LEAF) + FENCER_ID_LEN - 1)
		return;
	leaf = path + len - (sizeof("/" CG_LEAF) - 1);
	folder = leaf - (sizeof("/fenced.") - 1) - FENCER_ID_LEN;
	if (strcmp(leaf, "/" CG_LEAF) != 0 ||
	    strncmp(folder, "/fenced.", sizeof("/fenced.") - 1) != 0)
		return;
	*leaf = '\0';
	if (!cg_id_valid(folder + sizeof("/fenced.") - 1)) {
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
cg_place(const char *sub, char parents[3][PATH_MAX], char own[3][PATH_MAX],
    int v2[3], char *err, size_t errlen)
{
	char		 cg[PATH_MAX], mnt[PATH_MAX], root[PATH_MAX];
	char		 buf[512];
	const char	*rel, *ctrl;
	size_t		 rl;
	int		 i, kind;

	for (i = 0; i < 3; i++) {
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
fencer_cgroup_parents(const char *sub, char parents[3][PATH_MAX], char *err,
    size_t errlen)
{
	char	 own[3][PATH_MAX];
	int	 v2[3];

	return (cg_place(sub, parents, own, v2, err, errlen));
}

/* The regress suite points the placement at a fake /proc/self. */
void
fencer_cgroup_procdir(const char *dir)
{
	cg_procdir = dir;
}

/* fenced.<id> in each hierarchy: one daemon's folders. */
static int
cg_daemon_dirs(const char *id, char dir[3][PATH_MAX], char own[3][PATH_MAX],
    int v2[3], char *err, size_t errlen)
{
	char	 sub[sizeof("fenced.") + FENCER_ID_SIZE];

	snprintf(sub, sizeof(sub), "fenced.%s", id);
	return (cg_place(sub, dir, own, v2, err, errlen));
}

static int
cg_id_valid(const char *id)
{
	size_t	 i;

	for (i = 0; i < FENCER_ID_LEN; i++)
		if (!((id[i] >= '0' && id[i] <= '9') ||
		    (id[i] >= 'a' && id[i] <= 'f')))
			return (0);
	return (id[i] == '\0');
}

/*
 * A fence's own cgroup, parent/name, into path (len bytes): made, or
 * -1 with err and path "".
 */
int
fencer_cg_mkdir(const char *parent, const char *name, char *path,
    size_t len, char *err, size_t errlen)
{
	if ((size_t)snprintf(path, len, "%s/%s", parent, name) >= len) {
		path[0] = '\0';
		snprintf(err, errlen, "cgroup path too long");
		return (-1);
	}
	if (mkdir(path, 0755) == -1) {
		snprintf(err, errlen, "mkdir %s: %s", path, strerror(errno));
		path[0] = '\0';
		return (-1);
	}
	return (0);
}

/* dir has the cgroup file file (a controller's feature this kernel has). */
int
fencer_cg_has(const char *dir, const char *file)
{
	char	 path[PATH_MAX];

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, file) >=
	    sizeof(path))
		return (0);
	return (access(path, F_OK) == 0);
}

/* val into dir/file, whole, as one write (a cgroup file takes one). */
int
fencer_cg_write(const char *dir, const char *file, const char *val)
{
	char	 path[PATH_MAX];
	size_t	 len = strlen(val);
	ssize_t	 n;
	int	 fd, saved;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, file) >=
	    sizeof(path)) {
		errno = ENAMETOOLONG;
		return (-1);
	}
	/* O_TRUNC as a shell's ">" has it: a no-op on cgroupfs. */
	if ((fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC)) == -1)
		return (-1);
	n = write(fd, val, len);
	saved = errno;
	(void)close(fd);
	errno = saved;
	return (n == (ssize_t)len ? 0 : -1);
}

/* The first controller on the unified hierarchy, or -1 if none is. */
static int
cg_first_v2(const int v2[3])
{
	int	 i;

	for (i = 0; i < 3; i++)
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
fencer_cgroup_enter(const char *id, char *err, size_t errlen)
{
	char	 dir[3][PATH_MAX], own[3][PATH_MAX], leaf[PATH_MAX];
	int	 v2[3], i;

	if (id == NULL || !cg_id_valid(id)) {
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
	if (fencer_cg_write(leaf, "cgroup.procs", "0") == -1) {
		snprintf(err, errlen, "move into %s: %s", leaf,
		    strerror(errno));
		return (-1);
	}
	return (1);
}

/*
 * Take back every controller dir hands down ("-memory -pids -cpu" for
 * what its cgroup.subtree_control lists), in one write.
 */
static int
cg_disable(const char *dir)
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
	    fencer_cg_write(dir, "cgroup.subtree_control", want));
}

/*
 * Whether dir holds no cgroup but name (and so no one but us depends
 * on what it hands down), and its leaf no process but us.
 */
static int
cg_ours_alone(const char *own, const char *name, const char *leaf)
{
	char		 line[64];
	struct dirent	*de;
	DIR		*d;
	FILE		*fp;
	char		 path[PATH_MAX];
	int		 alone = 1;

	if ((d = opendir(own)) == NULL)
		return (0);
	while (alone && (de = readdir(d)) != NULL)
		if (de->d_type == DT_DIR && strcmp(de->d_name, ".") != 0 &&
		    strcmp(de->d_name, "..") != 0 &&
		    strcmp(de->d_name, name) != 0)
			alone = 0;
	closedir(d);
	if (!alone || (size_t)snprintf(path, sizeof(path), "%s/cgroup.procs",
	    leaf) >= sizeof(path) || (fp = fopen(path, "re")) == NULL)
		return (0);
	while (alone && fgets(line, sizeof(line), fp) != NULL)
		if (atoi(line) != getpid())
			alone = 0;
	fclose(fp);
	return (alone);
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
	char	 dir[3][PATH_MAX], own[3][PATH_MAX], err[256];
	char	 path[PATH_MAX], cg[PATH_MAX], leaf[PATH_MAX], *p;
	FILE	*fp;
	int	 v2[3], i, in = 0;

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
	if (fencer_cg_write(own[i], "cgroup.procs", "0") == 0)
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
	if (cg_disable(dir[i]) == -1 || cg_disable(own[i]) == -1 ||
	    fencer_cg_write(own[i], "cgroup.procs", "0") == -1) {
		log_warn("%s: back into %s", __func__, own[i]);
		return (-1);
	}
	return (0);
}

/*
 * A daemon's folders, fenced.<id> in each hierarchy, swept and removed,
 * with its v2 leaf; -1 if one stays (a process we cannot kill is in
 * it).  With inleaf set the daemon is ours and still in its leaf: only
 * its fences' cgroups go (cg_kill_procs() would kill the daemon with
 * the folder's cgroup.kill), and the folder stays (-1).
 */
static int
cg_sweep_daemon(const char *id, int inleaf)
{
	char		 dir[3][PATH_MAX], own[3][PATH_MAX], err[256];
	char		 leaf[PATH_MAX];
	int		 v2[3], i, j, seen, rv = 0;

	if (cg_daemon_dirs(id, dir, own, v2, err, sizeof(err)) == -1) {
		log_debug("%s: %s", __func__, err);
		return (0);
	}
	for (i = 0; i < 3; i++) {
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
		    cg_remove(leaf) == -1)
			log_warnx("%s: %s left behind", __func__, leaf);
		if (cg_remove(dir[i]) == -1) {
			log_warnx("%s: %s left behind", __func__, dir[i]);
			rv = -1;
		}
	}
	return (rv);
}

/*
 * The controllers on v2 that dir does not hand down yet, handed down
 * in one write ("+memory +pids +cpu").
 */
static int
cg_enable(const char *dir, const int v2[3], char *err, size_t errlen)
{
	char	 buf[512], want[64];
	int	 i;

	if (file_read_small(dir, "cgroup.subtree_control", buf, sizeof(buf)) == -1) {
		snprintf(err, errlen, "read %s/cgroup.subtree_control: %s",
		    dir, strerror(errno));
		return (-1);
	}
	want[0] = '\0';
	for (i = 0; i < 3; i++)
		if (v2[i] && !word_listed(buf, cg_ctrl[i]))
			snprintf(want + strlen(want), sizeof(want) -
			    strlen(want), "%s+%s", want[0] ? " " : "",
			    cg_ctrl[i]);
	if (want[0] == '\0' || fencer_cg_write(dir, "cgroup.subtree_control",
	    want) == 0)
		return (0);
	if (errno == EBUSY)
		snprintf(err, errlen, "%s holds processes, so cgroup v2 lets "
		    "it hand no controller down (%s): run fenced alone in a "
		    "cgroup of its own (a systemd unit with Delegate=yes) or "
		    "in the root cgroup", dir, want);
	else
		snprintf(err, errlen, "write %s to %s/cgroup.subtree_control: "
		    "%s", want, dir, strerror(errno));
	return (-1);
}

/*
 * The fencer, at start: this daemon's folders made, what a crashed
 * fencer of ours left swept, and on v2 memory, pids and cpu handed
 * down from our cgroup to the folder and from the folder to the
 * fences (the parent has moved the daemon into its leaf already).
 */
int
fencer_cgroup_init(const char *id, char parent[3][PATH_MAX], char *err,
    size_t errlen)
{
	char		 own[3][PATH_MAX];
	int		 v2[3], i;

	if (id == NULL || !cg_id_valid(id)) {
		snprintf(err, errlen, "daemon id not valid");
		return (-1);
	}
	if (cg_daemon_dirs(id, parent, own, v2, err, errlen) == -1)
		return (-1);
	for (i = 0; i < 3; i++) {
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
	    (cg_enable(own[i], v2, err, errlen) == -1 ||
	    cg_enable(parent[i], v2, err, errlen) == -1))
		return (-1);
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

static int
cg_lock_path(const char *state, const char *id, char *buf, size_t len)
{
	if ((size_t)snprintf(buf, len, "%s/" CG_DAEMONS "%s%s", state,
	    id != NULL ? "/" : "", id != NULL ? id : "") >= len) {
		errno = ENAMETOOLONG;
		return (-1);
	}
	return (0);
}

/*
 * The parent, at start: sweep what dead daemons of this state directory
 * left, refuse to share the state directory with a live one, then make
 * this daemon's id and hold the lock on <state>/daemons/<id>.  Returns
 * the lock's descriptor, kept open (close-on-exec) until exit.
 */
int
fencer_daemon_id(const char *state, char id[FENCER_ID_SIZE])
{
	char		 dir[PATH_MAX], path[PATH_MAX], pid[32];
	uint8_t		 rnd[FENCER_ID_LEN / 2];
	struct stat	 sb;
	size_t		 i;
	int		 dfd, fd, n;

	if (cg_lock_path(state, NULL, dir, sizeof(dir)) == -1)
		fatal("%s: %s", __func__, state);
	if (mkdir(dir, 0700) == -1 && errno != EEXIST)
		fatal("mkdir %s", dir);
	if (lstat(dir, &sb) == -1 || !S_ISDIR(sb.st_mode) || sb.st_uid != 0)
		fatalx("%s: not a directory of root's", dir);
	if ((sb.st_mode & 07777) != 0700 && chmod(dir, 0700) == -1)
		fatal("chmod %s", dir);
	/*
	 * Two daemons starting at once on one state: without this, each
	 * could sweep before the other's lock exists, and both run.
	 */
	if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1 || flock(dfd, LOCK_EX) == -1)
		fatal("%s: lock %s", __func__, dir);
	fencer_daemon_sweep(state);
	cg_state_leftovers(state);

	arc4random_buf(rnd, sizeof(rnd));
	for (i = 0; i < sizeof(rnd); i++)
		snprintf(id + 2 * i, 3, "%02x", rnd[i]);
	if (cg_lock_path(state, id, path, sizeof(path)) == -1)
		fatal("%s: %s", __func__, state);
	if ((fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0600)) == -1)
		fatal("%s: %s", __func__, path);
	if (flock(fd, LOCK_EX | LOCK_NB) == -1)
		fatal("%s: flock %s", __func__, path);
	(void)close(dfd);	/* ours is held: the next one may look */
	/* For people only: the lock, not the pid, says who is alive. */
	n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	if (write(fd, pid, n) != n)
		log_warn("%s: %s", __func__, path);
	return (fd);
}

/*
 * Every daemon of this state directory whose lock is free is dead: its
 * cgroup folders are swept and its lock file goes.  One whose lock is
 * held is alive, and this daemon must not run beside it.
 */
void
fencer_daemon_sweep(const char *state)
{
	char		 dir[PATH_MAX], path[PATH_MAX];
	struct dirent	*de;
	DIR		*d;
	int		 fd;

	if (cg_lock_path(state, NULL, dir, sizeof(dir)) == -1 ||
	    (d = opendir(dir)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (de->d_type != DT_REG || !cg_id_valid(de->d_name) ||
		    cg_lock_path(state, de->d_name, path, sizeof(path)) == -1)
			continue;
		if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) == -1)
			continue;
		if (flock(fd, LOCK_EX | LOCK_NB) == -1) {
			if (errno == EWOULDBLOCK)
				fatalx("state %s is in use by another fenced "
				    "(daemon %s)", state, de->d_name);
			fatal("flock %s", path);
		}
		log_info("sweeping what daemon %s left", de->d_name);
		/* Its lock file stays until its folders are gone. */
		if (cg_sweep_daemon(de->d_name, 0) == 0)
			(void)unlink(path);
		else
			log_warnx("daemon %s: processes this daemon cannot "
			    "kill (of another pid namespace?) keep its "
			    "cgroups; swept again at the next start",
			    de->d_name);
		close(fd);
	}
	closedir(d);
}

/*
 * What no fence needs once none runs: the probe secrets and the fences'
 * folders of <state>/envs.  Only while no other daemon uses the state
 * directory, which fencer_daemon_sweep() makes sure of.
 */
static void
cg_state_leftovers(const char *state)
{
	char		 path[PATH_MAX];
	struct dirent	*de;
	DIR		*d;

	if ((d = opendir(state)) != NULL) {
		while ((de = readdir(d)) != NULL) {
			if (de->d_type != DT_REG || strncmp(de->d_name,
			    "probe-secret.", 13) != 0 ||
			    (size_t)snprintf(path, sizeof(path), "%s/%s",
			    state, de->d_name) >= sizeof(path))
				continue;
			if (unlink(path) == 0)
				log_info("removed stale %s", path);
		}
		closedir(d);
	}
	fencer_env_sweep(state);
}

/*
 * The parent, at exit, whatever became of the fencer: the fences'
 * cgroups and this daemon's folders, the probe secrets, the fences'
 * folders of <state>/envs, then the lock.  On v2 under a cgroup that
 * others share the parent cannot leave its leaf (cg_leave()): leaf and
 * folder stay (empty once we are gone) and so does the lock file, so
 * the next daemon of this state directory removes them.
 */
void
fencer_daemon_fini(const char *state, const char *id, int lockfd)
{
	char		 path[PATH_MAX];
	int		 rv;

	if (id == NULL || !cg_id_valid(id))
		return;
	rv = cg_sweep_daemon(id, cg_leave(id) == -1);
	cg_state_leftovers(state);
	/* A folder left: the lock file stays for the next start's sweep. */
	if (rv == 0 && cg_lock_path(state, id, path, sizeof(path)) == 0)
		(void)unlink(path);
	if (lockfd != -1)
		close(lockfd);
}
