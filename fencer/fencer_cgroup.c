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
 * of the fencer.
 *
 * cgroup v1 when /sys/fs/cgroup/{memory,pids,cpu} are v1 hierarchies (as
 * on this machine), else v2 when /sys/fs/cgroup is a v2 hierarchy whose
 * cgroup.controllers offers all three.  Anything else: no fences.
 */
#include <sys/types.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include <linux/magic.h>

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

#define CG_ROOT		"/sys/fs/cgroup"
#define CG_DAEMONS	"daemons"	/* under the state directory */
#define CG_RMDIR_TRIES	400		/* 5 ms apart */

static const char *const cg_ctrl[3] = { "memory", "pids", "cpu" };

static void	cg_state_leftovers(const char *);

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

static void
cg_kill_procs(const char *dir)
{
	char		 path[PATH_MAX], line[64];
	FILE		*fp;
	pid_t		 pid;

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

/* Every fence's cgroup in one daemon's folder. */
static void
cg_sweep(const char *dir)
{
	char		 path[PATH_MAX];
	struct dirent	*de;
	DIR		*d;

	if ((d = opendir(dir)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (de->d_type != DT_DIR || !cg_name_valid(de->d_name) ||
		    (size_t)snprintf(path, sizeof(path), "%s/%s", dir,
		    de->d_name) >= sizeof(path))
			continue;
		if (cg_remove(path) == 0)
			log_info("removed stale cgroup %s", path);
	}
	closedir(d);
}

/* The daemon's own cgroup in each hierarchy: memory, pids, cpu. */
static int
cg_bases(char base[3][PATH_MAX])
{
	char		 mnt[PATH_MAX], self[PATH_MAX];
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
		if ((size_t)snprintf(base[i], PATH_MAX, "%s%s", mnt, self) >=
		    PATH_MAX)
			return (-1);
	}
	return (0);
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

/* A daemon's folders, fenced.<id> in each hierarchy, swept and removed. */
static void
cg_sweep_daemon(const char *id)
{
	char		 base[3][PATH_MAX], dir[PATH_MAX];
	int		 i, j, seen;

	if (cg_bases(base) == -1)
		return;
	for (i = 0; i < 3; i++) {
		for (seen = 0, j = 0; j < i; j++)
			if (strcmp(base[j], base[i]) == 0)
				seen = 1;
		if (seen || (size_t)snprintf(dir, sizeof(dir), "%s/fenced.%s",
		    base[i], id) >= sizeof(dir))
			continue;
		cg_sweep(dir);
		if (cg_remove(dir) == -1)
			log_warnx("%s: %s left behind", __func__, dir);
	}
}

int
fencer_cgroup_init(const char *id, char parent[3][PATH_MAX])
{
	char		 base[3][PATH_MAX];
	int		 i;

	if (id == NULL || !cg_id_valid(id) || cg_bases(base) == -1)
		return (-1);
	for (i = 0; i < 3; i++) {
		if ((size_t)snprintf(parent[i], PATH_MAX, "%s/fenced.%s",
		    base[i], id) >= PATH_MAX)
			return (-1);
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
	int		 fd, n;

	if (cg_lock_path(state, NULL, dir, sizeof(dir)) == -1)
		fatal("%s: %s", __func__, state);
	if (mkdir(dir, 0700) == -1 && errno != EEXIST)
		fatal("mkdir %s", dir);
	if (lstat(dir, &sb) == -1 || !S_ISDIR(sb.st_mode) || sb.st_uid != 0)
		fatalx("%s: not a directory of root's", dir);
	if ((sb.st_mode & 07777) != 0700 && chmod(dir, 0700) == -1)
		fatal("chmod %s", dir);
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
		cg_sweep_daemon(de->d_name);
		(void)unlink(path);
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

	if (id == NULL || !cg_id_valid(id))
		return;
	cg_sweep_daemon(id);
	cg_state_leftovers(state);
	if (cg_lock_path(state, id, path, sizeof(path)) == 0)
		(void)unlink(path);
	if (lockfd != -1)
		close(lockfd);
}
