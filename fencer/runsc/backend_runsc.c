/*
 * The runsc backend: a fence is a gVisor sandbox, its kernel the
 * sentry's, not the host's.  For each boot the fencer writes an OCI
 * bundle (bundle.c) under <state>/runsc/bundles/<id> and runs
 *
 *	runsc --root=<state>/runsc/state --network=none --oci-seccomp
 *	    --platform=<p> --log=<bundle>/runsc.log run --bundle=<bundle> <id>
 *
 * as its child, directly (no Docker), with the fencer's end of a socket
 * pair as runsc's stdin and stdout: runsc gives them to the container's
 * init, the agent (fence-agent -s), which speaks imsg over them.  The
 * id is random (bundle.c), never a key, an owner or a path.
 *
 * Which runsc, and that it is a version this backend knows, is decided
 * once when the daemon starts (runsc_start()); a boot on a daemon whose
 * runsc is missing or unusable fails naming why, and nothing falls back
 * to another backend.  Every runsc command the fencer waits for has a
 * deadline (RUNSC_CMD_MS); the boot as a whole has the fencer's agent
 * wait.  Every end of a fence (stop, crash, deadline, shutdown) runs
 * `runsc delete --force` and removes the bundle; so does a daemon that
 * starts and finds what a killed one left in <state>/runsc.
 */
#include <sys/types.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fenced.h"
#include "log.h"
#include "fencer.h"
#include "fencer_host.h"
#include "backend.h"
#include "fence.h"
#include "bundle.h"
#include "lockdown.h"
#include "cg.h"

#define RUNSC_CMD_MS		10000	/* one runsc command, at most */
#define RUNSC_VERSION_MAX	4096	/* bytes of `runsc --version` read */
#define RUNSC_MIN_DATE		20221219	/* Debian 12's, the tested one */
#define RUNSC_LOG_TAIL		200	/* bytes of its log in an error */
#define RUNSC_PANIC_MAX		16384	/* bytes of its panic log read */

struct runsc_fence {
	char		 rf_id[RUNSC_ID_SIZE];
	char		 rf_bundle[PATH_MAX];
	pid_t		 rf_pid;	/* `runsc run`; -1: reaped */
	pid_t		 rf_sandbox;	/* from `runsc state`; 0: not asked */
	char		 rf_cg[CG_NCTRL][PATH_MAX];	/* v2: the fence's */
};

/* What runsc_start() found; rs_err set: no runsc fence can boot. */
static struct {
	char		 rs_path[PATH_MAX];
	char		 rs_root[PATH_MAX];	/* --root */
	char		 rs_bundles[PATH_MAX];
	char		 rs_platform[RUNSC_PLATFORM_SIZE];
	char		 rs_version[64];
	char		 rs_err[256];
} runsc = { .rs_err = "the runsc backend was not started" };

static char *const runsc_envp[] = {
	"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
	NULL
};

/* Messages are cut short where they must: no path makes one fail. */
static void __attribute__((format(printf, 3, 4)))
runsc_errf(char *buf, size_t len, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	(void)vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

static int
runsc_now_ms(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((int)(ts.tv_sec * 1000 + ts.tv_nsec / 1000000));
}

/*
 * Wait for pid at most ms; kill it if it is not done by then.  Returns
 * its status, or -1 (timed out, killed and reaped, or lost).
 */
static int
runsc_wait(pid_t pid, int ms, int *status)
{
	int	 t0 = runsc_now_ms();
	pid_t	 r;

	for (;;) {
		if ((r = waitpid(pid, status, WNOHANG)) == pid)
			return (0);
		if (r == -1 && errno != EINTR)
			return (-1);
		if (runsc_now_ms() - t0 >= ms)
			break;
		(void)poll(NULL, 0, 5);
	}
	(void)kill(pid, SIGKILL);
	(void)waitpid(pid, status, 0);
	return (-1);
}

/*
 * Run runsc with args (the global flags first), stdout to out if it is
 * not NULL, and wait at most RUNSC_CMD_MS.  Returns its exit status, or
 * -1 with err set.
 */
static int
runsc_cmd(char *const argv[], char *out, size_t outlen, char *err,
    size_t errlen)
{
	struct pollfd	 pfd;
	size_t		 have = 0;
	ssize_t		 n;
	pid_t		 pid;
	int		 p[2] = { -1, -1 }, status, fd, t0;

	if (out != NULL && pipe2(p, O_CLOEXEC) == -1) {
		runsc_errf(err, errlen, "pipe: %s", strerror(errno));
		return (-1);
	}
	if ((pid = fork()) == -1) {
		runsc_errf(err, errlen, "fork: %s", strerror(errno));
		if (p[0] != -1) {
			close(p[0]);
			close(p[1]);
		}
		return (-1);
	}
	if (pid == 0) {
		(void)prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		if ((fd = open("/dev/null", O_RDWR)) == -1 ||
		    dup2(fd, 0) == -1 || dup2(p[1] != -1 ? p[1] : fd, 1) == -1 ||
		    dup2(fd, 2) == -1)
			_exit(127);
		(void)close_range(3, ~0U, 0);
		execve(runsc.rs_path, argv, runsc_envp);
		_exit(127);
	}
	if (out != NULL) {
		close(p[1]);
		t0 = runsc_now_ms();
		pfd.fd = p[0];
		pfd.events = POLLIN;
		while (runsc_now_ms() - t0 < RUNSC_CMD_MS) {
			if (poll(&pfd, 1, 50) <= 0)
				continue;
			if ((n = read(p[0], out + have, outlen - 1 - have)) <= 0)
				break;
			if ((have += n) >= outlen - 1)
				break;
		}
		out[have] = '\0';
		close(p[0]);
	}
	if (runsc_wait(pid, RUNSC_CMD_MS, &status) == -1) {
		runsc_errf(err, errlen, "%s %s: no answer in %d ms", runsc.rs_path,
		    argv[1], RUNSC_CMD_MS);
		return (-1);
	}
	if (!WIFEXITED(status)) {
		runsc_errf(err, errlen, "%s: killed by signal %d", runsc.rs_path,
		    WTERMSIG(status));
		return (-1);
	}
	return (WEXITSTATUS(status));
}

/*
 * `runsc --root=... kill --all id KILL`: every process of the sandbox.
 * First, while `runsc run` still reaps the sandbox: delete --force of a
 * running container waits for a sandbox that its parent has not reaped
 * yet, and gives up after 5 s.
 */
static int
runsc_kill(const char *id)
{
	char	 root[PATH_MAX + 8], err[256];
	char	*argv[] = { "runsc", root, "kill", "--all", (char *)id, "KILL",
		    NULL };
	int	 r;

	snprintf(root, sizeof(root), "--root=%s", runsc.rs_root);
	if ((r = runsc_cmd(argv, NULL, 0, err, sizeof(err))) != 0) {
		if (r > 0)
			snprintf(err, sizeof(err), "exit status %d", r);
		log_debug("runsc: kill %s: %s", id, err);
		return (-1);
	}
	return (0);
}

/* `runsc --root=... delete --force id`: the sandbox, its state, cgroups. */
static int
runsc_delete(const char *id)
{
	char	 root[PATH_MAX + 8], err[256];
	char	*argv[] = { "runsc", root, "delete", "--force", (char *)id,
		    NULL };
	int	 r;

	snprintf(root, sizeof(root), "--root=%s", runsc.rs_root);
	if ((r = runsc_cmd(argv, NULL, 0, err, sizeof(err))) != 0) {
		if (r > 0)
			runsc_errf(err, sizeof(err), "exit status %d", r);
		log_warnx("runsc: delete --force %s: %s", id, err);
		return (-1);
	}
	return (0);
}

/*
 * runsc keeps a container's state in <root>/<id>_sandbox:<id>.state and
 * takes <id>_sandbox:<id>.lock beside it.  A runsc killed between the
 * two (or a delete of a container whose state was never written) leaves
 * the lock alone, which no later runsc removes: once the state is gone,
 * whatever else of that id is left goes too.  A state still there is
 * runsc's to delete, not ours.
 */
static void
runsc_forget(const char *id)
{
	char		 prefix[2 * RUNSC_ID_LEN + 16], path[PATH_MAX];
	struct dirent	*de;
	struct stat	 sb;
	size_t		 n;
	DIR		*d;

	n = (size_t)snprintf(prefix, sizeof(prefix), "%s_sandbox:%s.", id, id);
	if ((size_t)snprintf(path, sizeof(path), "%s/%sstate", runsc.rs_root,
	    prefix) >= sizeof(path) || lstat(path, &sb) == 0 ||
	    errno != ENOENT)
		return;
	if ((d = opendir(runsc.rs_root)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, prefix, n) != 0)
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s",
		    runsc.rs_root, de->d_name) >= sizeof(path))
			continue;
		if (unlink(path) == -1 && errno != ENOENT)
			log_warn("runsc: remove %s", path);
	}
	closedir(d);
}

/* The configured runsc, or the first in PATH. */
static int
runsc_locate(const char *conf, char *path, size_t len)
{
	const char	*dirs[] = { "/usr/local/sbin", "/usr/local/bin",
			    "/usr/sbin", "/usr/bin", "/sbin", "/bin" };
	size_t		 i;

	if (conf[0] != '\0') {
		strlcpy(path, conf, len);
		return (access(path, X_OK));
	}
	for (i = 0; i < nitems(dirs); i++) {
		snprintf(path, len, "%s/runsc", dirs[i]);
		if (access(path, X_OK) == 0)
			return (0);
	}
	return (-1);
}

/*
 * With no fence running, everything in <state>/runsc is what a killed
 * fencer left: each container runsc still knows (its state files are
 * named <id>_sandbox:<id>.*) is deleted, then every bundle removed.
 */
static void
runsc_sweep(void)
{
	char		 path[PATH_MAX], id[RUNSC_ID_SIZE];
	struct dirent	*de;
	DIR		*d;

	if (runsc.rs_err[0] == '\0' && (d = opendir(runsc.rs_root)) != NULL) {
		while ((de = readdir(d)) != NULL) {
			if (strlen(de->d_name) < RUNSC_ID_LEN + 1 ||
			    de->d_name[RUNSC_ID_LEN] != '_')
				continue;
			memcpy(id, de->d_name, RUNSC_ID_LEN);
			id[RUNSC_ID_LEN] = '\0';
			if (!runsc_id_valid(id))
				continue;
			if (strstr(de->d_name, ".state") != NULL) {
				log_info("runsc: deleting container %s, left "
				    "by a daemon that was killed", id);
				(void)runsc_delete(id);
			}
			runsc_forget(id);
		}
		closedir(d);
	}
	if ((d = opendir(runsc.rs_bundles)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (!runsc_id_valid(de->d_name))
			continue;
		log_info("runsc: removing bundle %s, left by a daemon that "
		    "was killed", de->d_name);
		if ((size_t)snprintf(path, sizeof(path), "%s/%s",
		    runsc.rs_bundles, de->d_name) >= sizeof(path))
			continue;
		if (runsc_bundle_remove(path) == -1)
			log_warn("runsc: remove %s", path);
	}
	closedir(d);
}

/*
 * Once, when the daemon starts: which runsc, which version, where its
 * state goes; then what a killed daemon left.  Failing here is no error
 * of the daemon's, only of every later runsc boot (rs_err says why).
 */
static void
runsc_start(void)
{
	const struct fenced_config *c = &fencer_self.ps_conf;
	char		 out[RUNSC_VERSION_MAX], err[256], base[PATH_MAX];
	char		*argv[] = { "runsc", "--version", NULL };
	long		 date;
	int		 r;

	runsc.rs_err[0] = '\0';
	strlcpy(runsc.rs_platform, c->c_runsc_platform,
	    sizeof(runsc.rs_platform));
	if ((size_t)snprintf(base, sizeof(base), "%s/runsc", c->c_state) >=
	    sizeof(base) || (size_t)snprintf(runsc.rs_root,
	    sizeof(runsc.rs_root), "%s/state", base) >= sizeof(runsc.rs_root) ||
	    (size_t)snprintf(runsc.rs_bundles, sizeof(runsc.rs_bundles),
	    "%s/bundles", base) >= sizeof(runsc.rs_bundles)) {
		strlcpy(runsc.rs_err, "state path too long",
		    sizeof(runsc.rs_err));
		return;
	}
	if ((mkdir(base, 0700) == -1 && errno != EEXIST) ||
	    (mkdir(runsc.rs_root, 0700) == -1 && errno != EEXIST) ||
	    (mkdir(runsc.rs_bundles, 0700) == -1 && errno != EEXIST)) {
		runsc_errf(runsc.rs_err, sizeof(runsc.rs_err), "mkdir %s: %s",
		    base, strerror(errno));
		return;
	}

	if (runsc_locate(c->c_runsc, runsc.rs_path,
	    sizeof(runsc.rs_path)) == -1) {
		if (c->c_runsc[0] != '\0')
			runsc_errf(runsc.rs_err, sizeof(runsc.rs_err), "runsc "
			    "%s (fenced.conf) cannot be run: %s", c->c_runsc,
			    strerror(errno));
		else
			strlcpy(runsc.rs_err, "runsc is not installed (not in "
			    "PATH; set runsc in fenced.conf, or install "
			    "Debian's runsc)", sizeof(runsc.rs_err));
	} else if ((r = runsc_cmd(argv, out, sizeof(out), err,
	    sizeof(err))) != 0) {
		runsc_errf(runsc.rs_err, sizeof(runsc.rs_err), "%s --version: %s",
		    runsc.rs_path, r == -1 ? err : "failed");
	} else if ((date = runsc_version_date(out, runsc.rs_version,
	    sizeof(runsc.rs_version))) == 0) {
		runsc_errf(runsc.rs_err, sizeof(runsc.rs_err), "%s is not a "
		    "runsc this fenced knows (its --version says no release)",
		    runsc.rs_path);
	} else if (date < RUNSC_MIN_DATE) {
		runsc_errf(runsc.rs_err, sizeof(runsc.rs_err), "%s is version "
		    "%s, older than the oldest this fenced knows (%d)",
		    runsc.rs_path, runsc.rs_version, RUNSC_MIN_DATE);
	} else if (strcmp(runsc.rs_platform, "systrap") == 0 &&
	    date < 20230500) {
		runsc_errf(runsc.rs_err, sizeof(runsc.rs_err), "runsc %s has no "
		    "systrap platform (runsc platform in fenced.conf)",
		    runsc.rs_version);
	} else if (strcmp(runsc.rs_platform, "kvm") == 0 &&
	    access("/dev/kvm", R_OK | W_OK) == -1) {
		runsc_errf(runsc.rs_err, sizeof(runsc.rs_err), "runsc platform "
		    "kvm: /dev/kvm: %s", strerror(errno));
	} else if (fencer_userns_check(err, sizeof(err)) == -1) {
		/* The container's user namespace (bundle.c). */
		runsc_errf(runsc.rs_err, sizeof(runsc.rs_err), "%s", err);
	}
	/* The sweep first: the line below says the start is over. */
	runsc_sweep();
	if (runsc.rs_err[0] != '\0')
		log_warnx("runsc fences refused: %s", runsc.rs_err);
	else
		log_info("runsc %s (%s), platform %s", runsc.rs_path,
		    runsc.rs_version, runsc.rs_platform);
}

/*
 * Why no runsc fence can boot: what the start found, or the cgroups a
 * runsc fence needs at every tier.  Asked before a boot makes anything
 * (fencer_boot_refusal()), so a boot and the doctor say the same.
 */
static const char *
runsc_unavailable(void)
{
	if (runsc.rs_err[0] != '\0')
		return (runsc.rs_err);
	return (fencer_cgroups_refusal());
}

/* The doctor's detail: which runsc, its version and platform. */
static void
runsc_doctor(char *detail, size_t len)
{
	snprintf(detail, len, "runsc %s, version %s, platform %s",
	    runsc.rs_path[0] != '\0' ? runsc.rs_path : "(none found)",
	    runsc.rs_version[0] != '\0' ? runsc.rs_version : "unknown",
	    runsc.rs_platform);
}

/*
 * After the start: where runsc fences cannot boot, CAP_SYS_CHROOT (the
 * sandbox's and the gofer's chroot) goes, so no fence of another
 * backend even shows it in its bounding set.
 */
static void
runsc_lockdown(void)
{
	if (runsc.rs_err[0] != '\0') {
		lockdown_give_up(CAP_SYS_CHROOT);
		log_info("no runsc here: CAP_SYS_CHROOT dropped");
	}
}

/*
 * Child side: into each of the daemon's folders (cgroup v1 only), in
 * which runsc makes the fence's; the child is one thread, so it moves
 * without the global lock a whole-process move takes (common/cg_v1.c).
 */
static int
runsc_child_cgroups(const struct backend_boot *bb)
{
	int	 i;

	for (i = 0; i < CG_NCTRL; i++)
		if (cg_join_dir(bb->bb_cgroup_parent[i]) == -1)
			return (-1);
	return (0);
}

/*
 * Child side: a mount namespace of runsc's own, in which each source
 * the bundle binds read-only is a read-only mount.  The gofer binds
 * those sources as it finds them, so that its mounts are read-only in
 * the host kernel's eyes too, not only by the gofer's and the sentry's
 * word; the host's own mounts are untouched.
 */
static int
runsc_child_mounts(const struct runsc_ro_binds *ro, const char *home_dev,
    int home_tree, const char *home_mnt, uid_t uid)
{
	struct stat	 sb;
	int		 i;

	if (unshare(CLONE_NEWNS) == -1 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == -1)
		return (-1);
	/*
	 * `limit home': the image's ext4 on the bundle's home folder, here
	 * only, as a native fence mounts it in its own namespace.  The
	 * loop device stays held by the descriptor this child inherited
	 * until the mount has it.
	 */
	if (home_dev[0] != '\0' && (mount(home_dev, home_mnt, "ext4",
	    MS_NOSUID | MS_NODEV, "discard,errors=remount-ro") == -1 ||
	    stat(home_mnt, &sb) == -1 || sb.st_uid != uid))
		return (-1);
	/* A branch's overlay (fencer_snap.c), made by the fencer. */
	if (home_tree != -1 && (move_mount(home_tree, "", AT_FDCWD, home_mnt,
	    MOVE_MOUNT_F_EMPTY_PATH) == -1 || stat(home_mnt, &sb) == -1 ||
	    sb.st_uid != uid))
		return (-1);
	for (i = 0; i < ro->rr_n; i++)
		if (mount(ro->rr_path[i], ro->rr_path[i], NULL, MS_BIND,
		    NULL) == -1 || mount(NULL, ro->rr_path[i], NULL,
		    MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV,
		    NULL) == -1)
			return (-1);
	return (0);
}

/*
 * The fence's v2 cgroup, after runsc is gone: anything left in it
 * killed, then removed (its tasks leave it as they exit).
 */
static int
runsc_cgroup_remove(struct runsc_fence *rf)
{
	char	 err[PATH_MAX + 64];

	if (cg_fence_remove(rf->rf_cg, err, sizeof(err)) == 0)
		return (0);
	log_warnx("runsc: %s", err);
	return (-1);
}

/*
 * cgroup v2: the fence's cgroup, <daemon's folder>/<name>, made by the
 * fencer with the sandbox's limits, for the child that runs runsc to
 * join; runsc runs with --ignore-cgroups, so it and its gofer and
 * sandbox stay there.  Given a cgroupsPath this runsc would write every
 * controller of the root into the subtree_control of each folder above
 * the fence's, which needs CAP_SYS_NICE over the daemon's own processes
 * as soon as a controller (cpuset) moves them and touches folders that
 * are not ours; given none it makes /<id> under the root, unlimited
 * (docs/runsc.md, "cgroups").  Where it can (common/cg_clone.c), that
 * child is born in it: *born is then its directory, for cg_clone3().
 */
static int
runsc_cgroup_make(struct runsc_fence *rf, const struct fence *f,
    const struct backend_boot *bb, int *born, char *err, size_t errlen)
{
	struct fence_limits	 l = f->f_info.f_limits;
	uint64_t		 pids, quota;

	/* The sandbox's own threads count against pids too. */
	runsc_limits(&f->f_info.f_limits, &pids, &quota);
	if (pids > UINT32_MAX) {
		runsc_errf(err, errlen, "pids limit %llu too large",
		    (unsigned long long)pids);
		return (-1);
	}
	l.fl_pids = (uint32_t)pids;
	/* What was made before a failure, runsc_boot() removes. */
	return (cg_fence_make(bb->bb_cgroup_parent, bb->bb_cgroup_name, &l,
	    rf->rf_cg, NULL, born, err, errlen));
}

static void
runsc_log_tail(const char *bundle, char *buf, size_t len)
{
	char	 path[PATH_MAX], tail[RUNSC_LOG_TAIL + 1];
	ssize_t	 n;
	off_t	 end;
	int	 fd, i;

	buf[0] = '\0';
	if ((size_t)snprintf(path, sizeof(path), "%s/runsc.log", bundle) >=
	    sizeof(path) || (fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1)
		return;
	if ((end = lseek(fd, 0, SEEK_END)) > RUNSC_LOG_TAIL)
		(void)lseek(fd, end - RUNSC_LOG_TAIL, SEEK_SET);
	else
		(void)lseek(fd, 0, SEEK_SET);
	if ((n = read(fd, tail, RUNSC_LOG_TAIL)) > 0) {
		tail[n] = '\0';
		for (i = 0; i < n; i++)
			if (tail[i] < ' ' || tail[i] > '~')
				tail[i] = ' ';
		runsc_errf(buf, len, ": ...%s", tail);
	}
	(void)close(fd);
}

static int
runsc_boot(struct fence *f, const struct backend_boot *bb, int *chan,
    char *err, size_t errlen)
{
	struct runsc_fence *rf = f->f_be;
	struct runsc_bundle_spec rb;
	char		 root[PATH_MAX + 8], platform[32], logf[PATH_MAX + 8];
	char		 panicf[PATH_MAX + 16], bundle[PATH_MAX + 16];
	char		 cgpath[PATH_MAX], home[PATH_MAX];
	/*
	 * --oci-seccomp: the bundle's filter applies inside the sandbox
	 * (bundle.c).  --panic-log: why a sentry ended, for the log
	 * (runsc_stop()).  [7]: "--ignore-cgroups" on v2, else the rest
	 * moves up one.
	 */
	char		*argv[] = { "runsc", root, "--network=none",
			    "--oci-seccomp", platform, logf, panicf,
			    "--ignore-cgroups", "run", bundle, rf->rf_id, NULL };
	struct runsc_ro_binds *ro;
	int		 sp[2], fd, i, v2, born = -1;
	pid_t		 pid;

	rf->rf_pid = -1;
	if (runsc.rs_err[0] != '\0') {
		runsc_errf(err, errlen, "backend runsc is unavailable here: %s; "
		    "nothing falls back to another", runsc.rs_err);
		return (-1);
	}
	for (i = 0; i < 3; i++)
		if (bb->bb_cgroup_parent[i] == NULL) {
			runsc_errf(err, errlen, "backend runsc needs memory, pids "
			    "and cpu cgroups, which this machine cannot give "
			    "a fence");
			return (-1);
		}
	if (bb->bb_home_dev[0] != '\0' &&
	    strncmp(bb->bb_home_dev, "/dev/loop", 9) != 0) {
		runsc_errf(err, errlen, "home image %s is not a loop device",
		    bb->bb_home_dev);
		return (-1);
	}
	v2 = cg_is_v2(bb->bb_cgroup_parent[0]);
	/*
	 * v1: runsc makes the fence's cgroups, relative to its own cgroup
	 * in each hierarchy, which its child joins; v2: the fencer makes
	 * it and the child joins it (runsc_cgroup_make()).
	 */
	strlcpy(cgpath, bb->bb_cgroup_name, sizeof(cgpath));
	memset(rf->rf_cg, 0, sizeof(rf->rf_cg));
	if (!v2)
		memmove(&argv[7], &argv[8], 4 * sizeof(argv[0]));

	memset(&rb, 0, sizeof(rb));
	strlcpy(rb.rb_key, f->f_info.f_key, sizeof(rb.rb_key));
	rb.rb_uid = f->f_info.f_uid;
	rb.rb_gid = f->f_gid;
	strlcpy(rb.rb_user, f->f_user, sizeof(rb.rb_user));
	rb.rb_home = f->f_info.f_home;
	rb.rb_bindir = bb->bb_bindir;
	rb.rb_init = bb->bb_init;
	rb.rb_cgroups_path = v2 ? NULL : cgpath;
	rb.rb_limits = f->f_info.f_limits;
	rb.rb_swap = !v2 && cg_swap_counted(bb->bb_cgroup_parent[0]);
#ifdef FENCED_TEST_HOOKS
	rb.rb_test_hostmount = getenv("FENCED_TEST_RUNSC_HOSTMOUNT") != NULL;
	rb.rb_test_cap = getenv("FENCED_TEST_RUNSC_CAP") != NULL;
#endif

	runsc_id_new(rf->rf_id);
	if ((size_t)snprintf(rf->rf_bundle, sizeof(rf->rf_bundle), "%s/%s",
	    runsc.rs_bundles, rf->rf_id) >= sizeof(rf->rf_bundle) ||
	    (size_t)snprintf(home, sizeof(home), "%s/home", rf->rf_bundle) >=
	    sizeof(home)) {
		runsc_errf(err, errlen, "bundle path too long");
		return (-1);
	}
	/* A home image or a branch's overlay goes on the bundle's home. */
	if (bb->bb_home_dev[0] != '\0' || bb->bb_home_tree != -1)
		rb.rb_home = home;
	if ((ro = calloc(1, sizeof(*ro))) == NULL) {
		runsc_errf(err, errlen, "out of memory");
		return (-1);
	}
	if (runsc_bundle_write(rf->rf_bundle, &rb, ro, err, errlen) == -1) {
		free(ro);
		return (-1);
	}
	if ((bb->bb_home_dev[0] != '\0' || bb->bb_home_tree != -1) &&
	    mkdir(home, 0700) == -1) {
		runsc_errf(err, errlen, "mkdir %s: %s", home, strerror(errno));
		goto fail;
	}
	if (v2 && runsc_cgroup_make(rf, f, bb, &born, err, errlen) == -1)
		goto fail;
	snprintf(root, sizeof(root), "--root=%s", runsc.rs_root);
	snprintf(platform, sizeof(platform), "--platform=%s",
	    runsc.rs_platform);
	if ((size_t)snprintf(logf, sizeof(logf), "--log=%s/runsc.log",
	    rf->rf_bundle) >= sizeof(logf) || (size_t)snprintf(panicf,
	    sizeof(panicf), "--panic-log=%s/panic.log", rf->rf_bundle) >=
	    sizeof(panicf)) {
		runsc_errf(err, errlen, "bundle path too long");
		goto fail;
	}
	snprintf(bundle, sizeof(bundle), "--bundle=%s", rf->rf_bundle);

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) == -1) {
		runsc_errf(err, errlen, "socketpair: %s", strerror(errno));
		goto fail;
	}
	/*
	 * Born in the v2 cgroup where it can be: then the child makes
	 * system calls only up to its execve, as a fork's child must not
	 * count on more either (cg_clone3()).
	 */
	if (born != -1)
		pid = cg_clone3(SIGCHLD, born, NULL, NULL, 0, NULL, NULL);
	else
		pid = fork();
	if (pid == -1) {
		runsc_errf(err, errlen, "%s: %s", born != -1 ?
		    "clone3 into the fence's cgroup" : "fork", strerror(errno));
		close(sp[0]);
		close(sp[1]);
		goto fail;
	}
	if (pid == 0) {
		/* No signal of the daemon's process group reaches it. */
		(void)setsid();
		(void)prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		if ((!v2 && runsc_child_cgroups(bb) == -1) || (v2 &&
		    born == -1 && cg_fence_join(rf->rf_cg) == -1))
			_exit(126);
		if (runsc_child_mounts(ro, bb->bb_home_dev, bb->bb_home_tree,
		    home, f->f_info.f_uid) == -1)
			_exit(125);
		if ((fd = open("/dev/null", O_RDWR)) == -1 ||
		    dup2(sp[1], 0) == -1 || dup2(sp[1], 1) == -1 ||
		    dup2(fd, 2) == -1)
			_exit(127);
		(void)close_range(3, ~0U, 0);
		execve(runsc.rs_path, argv, runsc_envp);
		_exit(127);
	}
	free(ro);
	close(sp[1]);
	if (born != -1)
		close(born);
	rf->rf_pid = pid;
	*chan = sp[0];
	f->f_info.f_pid = pid;
	return (0);
 fail:
	free(ro);
	if (born != -1)
		close(born);
	(void)runsc_cgroup_remove(rf);
	(void)runsc_bundle_remove(rf->rf_bundle);
	return (-1);
}

/* The PPid: line of pid's status; -1 if it cannot be read. */
static pid_t
runsc_ppid(pid_t pid)
{
	char		 path[64], buf[8192];

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (host_read_file(path, buf, sizeof(buf)) == -1)
		return (-1);
	return (runsc_status_ppid(buf));
}

/*
 * The children of `runsc run`, from the host kernel's account of each
 * of its threads: at most max of them.  -1 if they cannot be read.
 */
static int
runsc_children(pid_t run, pid_t *kids, int max)
{
	char		 path[64], buf[1024];
	DIR		*d;
	struct dirent	*de;
	int		 n = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)run);
	if ((d = opendir(path)) == NULL)
		return (-1);
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		if ((size_t)snprintf(path, sizeof(path), "/proc/%d/task/%s/"
		    "children", (int)run, de->d_name) >= sizeof(path) ||
		    host_read_file(path, buf, sizeof(buf)) == -1)
			continue;	/* a thread that just ended */
		if ((n = runsc_pids_parse(buf, kids, n, max)) > max) {
			closedir(d);
			return (max + 1);
		}
	}
	closedir(d);
	return (n);
}

/*
 * What the host reads of a runsc fence (docs/runsc.md, "Measured"):
 * the fence's processes are the sentry's, so the sandbox process (the
 * pid `runsc state` gives, a child of our `runsc run`) for the status,
 * user namespace and network; the fence's files are what the gofer
 * serves, so the gofer (the other child of `runsc run`) for the mount
 * table, whose root may be the bundle's rootfs.
 */
static int
runsc_host_procs(struct fence *f, pid_t *procs, pid_t *files,
    struct host_allow *a, char *err, size_t errlen)
{
	struct runsc_fence *rf = f->f_be;
	char		 root[PATH_MAX + 8], out[1024], cerr[256];
	char		*argv[] = { "runsc", root, "state", rf->rf_id, NULL };
	pid_t		 kids[3];
	int		 n, i, r;

	if (rf->rf_pid <= 0) {
		runsc_errf(err, errlen, "runsc run has ended");
		return (-1);
	}
	if (rf->rf_sandbox == 0) {
		snprintf(root, sizeof(root), "--root=%s", runsc.rs_root);
		if ((r = runsc_cmd(argv, out, sizeof(out), cerr,
		    sizeof(cerr))) != 0) {
			runsc_errf(err, errlen, "runsc state: %s", r == -1 ?
			    cerr : "failed");
			return (-1);
		}
		if ((rf->rf_sandbox = runsc_state_pid(out)) == 0) {
			runsc_errf(err, errlen, "runsc state gave no pid");
			return (-1);
		}
	}
	if (runsc_ppid(rf->rf_sandbox) != rf->rf_pid) {
		runsc_errf(err, errlen, "the sandbox, pid %d, is not a child "
		    "of runsc run", (int)rf->rf_sandbox);
		return (-1);
	}
	if ((n = runsc_children(rf->rf_pid, kids, 3)) != 2) {
		runsc_errf(err, errlen, "runsc run has %d children, not its "
		    "gofer and sandbox", n);
		return (-1);
	}
	for (i = 0; i < 2 && kids[i] != rf->rf_sandbox; i++)
		;
	if (i == 2) {
		runsc_errf(err, errlen, "the sandbox is not among runsc run's "
		    "children");
		return (-1);
	}
	*procs = rf->rf_sandbox;
	*files = kids[1 - i];
	if ((size_t)snprintf(a->ha_root, sizeof(a->ha_root), "%s/rootfs",
	    rf->rf_bundle) >= sizeof(a->ha_root)) {
		runsc_errf(err, errlen, "bundle path too long");
		return (-1);
	}
	return (0);
}

static void
runsc_reaped(struct fence *f)
{
	struct runsc_fence *rf = f->f_be;

	rf->rf_pid = -1;
}

/* The sentry's panic, if it had one: the reason a sandbox ended. */
static void
runsc_log_panic(const struct fence *f)
{
	const struct runsc_fence *rf = f->f_be;
	char		 path[PATH_MAX], line[256];
	static char	 text[RUNSC_PANIC_MAX];
	ssize_t		 n;
	int		 fd;

	if ((size_t)snprintf(path, sizeof(path), "%s/panic.log",
	    rf->rf_bundle) >= sizeof(path) ||
	    (fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1)
		return;
	n = read(fd, text, sizeof(text) - 1);
	(void)close(fd);
	if (n <= 0)
		return;
	text[n] = '\0';
	if (runsc_panic_line(text, line, sizeof(line)) == 0)
		log_warnx("runsc: fence %s: the sentry ended: %s",
		    f->f_info.f_key, line);
}

/*
 * Whatever ended the fence: its processes are killed, `runsc run` is
 * waited for, the sandbox's state and cgroups go (delete --force), and
 * the bundle is removed.
 */
static int
runsc_stop(struct fence *f, int *oom)
{
	struct runsc_fence *rf = f->f_be;
	char		 tail[RUNSC_LOG_TAIL + 8];
	int		 status, rv = 0;

	*oom = 0;
	if (rf->rf_id[0] == '\0')
		return (0);
	if (rf->rf_pid > 0)
		(void)runsc_kill(rf->rf_id);
	if (rf->rf_pid > 0) {
		if (runsc_wait(rf->rf_pid, RUNSC_CMD_MS, &status) == -1)
			log_warnx("runsc: run %s did not end, killed",
			    rf->rf_id);
		else if (WIFEXITED(status) && (WEXITSTATUS(status) == 125 ||
		    WEXITSTATUS(status) == 126))
			log_warnx("runsc: fence %s: runsc did not run: its %s "
			    "could not be made", f->f_info.f_key,
			    WEXITSTATUS(status) == 125 ? "read-only mounts or "
			    "home image" : "cgroups");
		else if (WIFEXITED(status) && WEXITSTATUS(status) != 0 &&
		    WEXITSTATUS(status) != 128 + SIGKILL) {
			runsc_log_tail(rf->rf_bundle, tail, sizeof(tail));
			log_warnx("runsc: fence %s: runsc exited %d%s",
			    f->f_info.f_key, WEXITSTATUS(status), tail);
		}
		rf->rf_pid = -1;
	}
	runsc_log_panic(f);
	if (runsc_delete(rf->rf_id) == -1)
		rv = -1;
	runsc_forget(rf->rf_id);
	if (runsc_cgroup_remove(rf) == -1)
		rv = -1;
	if (runsc_bundle_remove(rf->rf_bundle) == -1) {
		log_warn("runsc: remove %s", rf->rf_bundle);
		rv = -1;
	}
	rf->rf_id[0] = '\0';
	return (rv);
}

/*
 * A sandbox comes up in about 0.3 s here, but in CI's cgroup v2 guest
 * (software emulation, the suite beside it) one took over 10 s: the
 * wait is 30 s, a deadline still.
 */
#define RUNSC_AGENT_WAIT_SEC	30

const struct fencer_backend backend_runsc = {
	.fb_id = BACKEND_RUNSC,
	.fb_bin_dir = FENCE_BIN_DIR,
	.fb_state_size = sizeof(struct runsc_fence),
	.fb_agent_wait = RUNSC_AGENT_WAIT_SEC,
	.fb_denials_unobserved = "system calls are not observed with the "
	    "runsc backend: gVisor answers them in its own kernel, and "
	    "tells the host nothing of what it refuses",
	.fb_probe = {
		.pt_kernel = PROBE_KERNEL_USER,
		.pt_procs_apart = 1,	/* the sentry (runsc_host_procs) */
		.pt_files_apart = 1,	/* the gofer */
		.pt_net_own = 1,
		.pt_home = "gVisor gofer, bind of the host folder",
	},
	.fb_start = runsc_start,
	.fb_lockdown = runsc_lockdown,
	.fb_unavailable = runsc_unavailable,
	.fb_doctor = runsc_doctor,
	.fb_boot = runsc_boot,
	.fb_host_procs = runsc_host_procs,
	.fb_reaped = runsc_reaped,
	.fb_stop = runsc_stop,
};
