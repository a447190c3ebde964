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

static const char *const cg_ctrl[3] = { "memory", "pids", "cpu" };

static void	cg_state_leftovers(const char *);

/* "<owner>.<key>": the name of a fence's cgroup. */
static int
cg_name_valid(const char *name)
{
	const char	*dot, *p;

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
	while (fgets(line, sizeof(line), fp) != NULL)
		if ((pid = atoi(line)) > 1)
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

/* A small file of a cgroup, NUL-terminated. */
static int
cg_read(const char *dir, const char *file, char *buf, size_t len)
{
	char	 path[PATH_MAX];
	ssize_t	 n;
	int	 fd;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, file) >=
	    sizeof(path) || (fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return (-1);
	n = read(fd, buf, len - 1);
	(void)close(fd);
	if (n < 0)
		return (-1);
	buf[n] = '\0';
	return (0);
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

	if ((fp = fopen("/proc/self/cgroup", "re")) == NULL)
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

	if ((fp = fopen("/proc/self/mountinfo", "re")) == NULL)
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
 * (v2) one, whose cgroup of ours must offer it.
 */
int
fencer_cgroup_parents(const char *sub, char parents[3][PATH_MAX], char *err,
    size_t errlen)
{
	char		 cg[PATH_MAX], mnt[PATH_MAX], root[PATH_MAX];
	char		 own[PATH_MAX], buf[512];
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
		/* A mount of a sub-tree shows paths relative to its root. */
		rel = cg;
		rl = strlen(root);
		if (strcmp(root, "/") != 0 && strncmp(cg, root, rl) == 0 &&
		    (cg[rl] == '/' || cg[rl] == '\0'))
			rel = cg + rl;
		if (strcmp(rel, "/") == 0)
			rel = "";
		if ((size_t)snprintf(own, sizeof(own), "%s%s", mnt, rel) >=
		    sizeof(own) || (size_t)snprintf(parents[i], PATH_MAX,
		    "%s/%s", own, sub) >= PATH_MAX) {
			snprintf(err, errlen, "cgroup path too long");
			return (-1);
		}
		/* v2: our own cgroup must offer the controller. */
		if (kind != 1 && (cg_read(own, "cgroup.controllers", buf,
		    sizeof(buf)) == -1 || !word_listed(buf, ctrl))) {
			snprintf(err, errlen, "%s/cgroup.controllers lacks %s",
			    own, ctrl);
			return (-1);
		}
	}
	return (0);
}

/* fenced.<id> in each hierarchy: one daemon's folders. */
static int
cg_daemon_dirs(const char *id, char dir[3][PATH_MAX], char *err,
    size_t errlen)
{
	char	 sub[sizeof("fenced.") + FENCER_ID_SIZE];

	snprintf(sub, sizeof(sub), "fenced.%s", id);
	return (fencer_cgroup_parents(sub, dir, err, errlen));
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
 * A daemon's folders, fenced.<id> in each hierarchy, swept and removed.
 * -1 if one stays (a process we cannot kill is in it).
 */
static int
cg_sweep_daemon(const char *id)
{
	char		 dir[3][PATH_MAX], err[256];
	int		 i, j, seen, rv = 0;

	if (cg_daemon_dirs(id, dir, err, sizeof(err)) == -1) {
		log_debug("%s: %s", __func__, err);
		return (0);
	}
	for (i = 0; i < 3; i++) {
		for (seen = 0, j = 0; j < i; j++)
			if (strcmp(dir[j], dir[i]) == 0)
				seen = 1;
		if (seen)
			continue;
		if (cg_sweep(dir[i]) == -1 || cg_remove(dir[i]) == -1) {
			log_warnx("%s: %s left behind", __func__, dir[i]);
			rv = -1;
		}
	}
	return (rv);
}

int
fencer_cgroup_init(const char *id, char parent[3][PATH_MAX])
{
	char		 err[256];
	int		 i;

	if (id == NULL || !cg_id_valid(id))
		return (-1);
	if (cg_daemon_dirs(id, parent, err, sizeof(err)) == -1) {
		log_warnx("%s: %s", __func__, err);
		return (-1);
	}
	for (i = 0; i < 3; i++) {
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
		if (cg_sweep_daemon(de->d_name) == 0)
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
 * folders of <state>/envs, then the lock.
 */
void
fencer_daemon_fini(const char *state, const char *id, int lockfd)
{
	char		 path[PATH_MAX];
	int		 rv;

	if (id == NULL || !cg_id_valid(id))
		return;
	rv = cg_sweep_daemon(id);
	cg_state_leftovers(state);
	/* A folder left: the lock file stays for the next start's sweep. */
	if (rv == 0 && cg_lock_path(state, id, path, sizeof(path)) == 0)
		(void)unlink(path);
	if (lockfd != -1)
		close(lockfd);
}
