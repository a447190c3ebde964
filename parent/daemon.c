/*
 * The daemon as a whole, the parent's work: its id and lock, and the
 * sweep of what a dead daemon left (its cgroups, the probe secrets, the
 * fences' folders of <state>/envs).
 *
 * The daemon id is DAEMON_ID_LEN random hex digits the parent makes at
 * start, never a pid: pids repeat, and across pid namespaces a daemon
 * in a container sees every host daemon as dead.  While it runs, the
 * parent holds an flock on <state>/daemons/<id>.  A daemon's cgroup
 * folders (fenced.<id>, common/cg_daemon.c) are swept only when it is
 * provably a daemon of this state directory's (its lock file is there)
 * and dead (the lock is free): another daemon's folders, of another
 * state directory or another pid namespace, are never touched.  The
 * parent sweeps dead ones at start, and its own when it exits,
 * whatever became of the fencer; a lock file goes only with the last of
 * its folders (a sweep kills only what its pid namespace sees, or all
 * through v2's cgroup.kill).  Starts take turns on <state>/daemons.
 */
#include <sys/types.h>
#include <sys/file.h>
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fenced.h"
#include "log.h"
#include "cg.h"
#include "parent.h"

#define DAEMON_LOCKS	"daemons"	/* under the state directory */

static void	daemon_sweep(const char *);
static void	daemon_leftovers(const char *);
static void	daemon_env_sweep(const char *);

static int
daemon_lock_path(const char *state, const char *id, char *buf, size_t len)
{
	if ((size_t)snprintf(buf, len, "%s/" DAEMON_LOCKS "%s%s", state,
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
daemon_start(const char *state, char id[DAEMON_ID_SIZE])
{
	char		 dir[PATH_MAX], path[PATH_MAX], pid[32];
	uint8_t		 rnd[DAEMON_ID_LEN / 2];
	struct stat	 sb;
	size_t		 i;
	int		 dfd, fd, n;

	if (daemon_lock_path(state, NULL, dir, sizeof(dir)) == -1)
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
	daemon_sweep(state);
	daemon_leftovers(state);

	arc4random_buf(rnd, sizeof(rnd));
	for (i = 0; i < sizeof(rnd); i++)
		snprintf(id + 2 * i, 3, "%02x", rnd[i]);
	if (daemon_lock_path(state, id, path, sizeof(path)) == -1)
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
static void
daemon_sweep(const char *state)
{
	char		 dir[PATH_MAX], path[PATH_MAX];
	struct dirent	*de;
	DIR		*d;
	int		 fd;

	if (daemon_lock_path(state, NULL, dir, sizeof(dir)) == -1 ||
	    (d = opendir(dir)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (de->d_type != DT_REG || !daemon_id_valid(de->d_name) ||
		    daemon_lock_path(state, de->d_name, path,
		    sizeof(path)) == -1)
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
		if (cg_daemon_remove(de->d_name, 0) == 0)
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
 * With no fence running (the daemon starting, or gone): every fence's
 * folder under <state>/envs is a leftover of a fencer that was killed,
 * and so is a probe report of the older layout (<state>/envs/<key>).
 * Only the files a fence's folder holds are removed, and folders that
 * are then empty: a uid record of the older layout stays, for the
 * fencer to move into <state>/fence-uids.
 */
static void
daemon_env_sweep(const char *state)
{
	char		 envs[PATH_MAX], odir[PATH_MAX], kdir[PATH_MAX];
	struct dirent	*de, *ke;
	const char	*errstr;
	DIR		*d, *kd;

	if ((size_t)snprintf(envs, sizeof(envs), "%s/envs", state) >=
	    sizeof(envs) || (d = opendir(envs)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (de->d_type != DT_DIR || !fence_key_valid(de->d_name) ||
		    (size_t)snprintf(odir, sizeof(odir), "%s/%s", envs,
		    de->d_name) >= sizeof(odir))
			continue;
		(void)strtonum(de->d_name, 0, UINT32_MAX - 1, &errstr);
		if (errstr == NULL && (kd = opendir(odir)) != NULL) {
			while ((ke = readdir(kd)) != NULL) {
				if (ke->d_type != DT_DIR ||
				    !fence_key_valid(ke->d_name) ||
				    (size_t)snprintf(kdir, sizeof(kdir),
				    "%s/%s", odir, ke->d_name) >= sizeof(kdir))
					continue;
				(void)state_env_remove(kdir);
			}
			closedir(kd);
		}
		(void)state_env_remove(odir);
	}
	closedir(d);
}

/*
 * What no fence needs once none runs: the probe secrets and the fences'
 * folders of <state>/envs.  Only while no other daemon uses the state
 * directory, which daemon_sweep() makes sure of.
 */
static void
daemon_leftovers(const char *state)
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
	daemon_env_sweep(state);
}

/*
 * The parent, at exit, whatever became of the fencer: the fences'
 * cgroups and this daemon's folders, the probe secrets, the fences'
 * folders of <state>/envs, then the lock.  On v2 under a cgroup that
 * others share the parent cannot leave its leaf (cg_daemon_remove()):
 * leaf and folder stay (empty once we are gone) and so does the lock
 * file, so the next daemon of this state directory removes them.
 */
void
daemon_fini(const char *state, const char *id, int lockfd)
{
	char		 path[PATH_MAX];
	int		 rv;

	if (id == NULL || !daemon_id_valid(id))
		return;
	rv = cg_daemon_remove(id, 1);
	daemon_leftovers(state);
	/* A folder left: the lock file stays for the next start's sweep. */
	if (rv == 0 && daemon_lock_path(state, id, path, sizeof(path)) == 0)
		(void)unlink(path);
	if (lockfd != -1)
		close(lockfd);
}
