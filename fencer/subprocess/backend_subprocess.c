/*
 * The subprocess backend (development builds only, docs/backends.md):
 * the real fence-agent as a plain child of the fencer.  No namespace,
 * no mount, no filter of its own: it runs as the fence's uid (never 0),
 * with no capabilities, the sandbox home as its working directory and
 * HOME, an empty environment, and sees the host as that user sees it.
 * Its level says so: the probe finds every axis open.
 *
 * One cgroup, in the pids hierarchy the fencer gives fences, holds the
 * agent and everything it starts, so that a stop finds every process
 * of the fence, whatever it did to leave the agent's process tree; the
 * fence's uid cannot move a process out of it (cgroup.procs is root's).
 */
#include <sys/types.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <sha2.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fenced.h"
#include "log.h"
#include "fencer.h"
#include "backend.h"
#include "cg.h"

struct subprocess_fence {
	pid_t		 sp_pid;		/* the agent, or -1 */
	char		 sp_cg[CG_NCTRL][PATH_MAX];	/* pids alone */
};

/* Where the fence runs fence-probe from (subprocess_probe_dir()). */
static char	 subprocess_bindir[PATH_MAX];

/*
 * The probe runs as the fence's uid, which may not reach the daemon's
 * folder (a checkout under /root, 0700, as on a stock Debian): a copy
 * of fence-probe, root's and 0755, sits in /run/fenced-bin/<its SHA-256>,
 * a folder anybody may enter and only root write.  Named by content,
 * daemons side by side share one whatever their order; written to a
 * temporary folder and renamed whole, so none sees half a copy.
 */
#define SUBPROCESS_BIN_TOP	"/run/fenced-bin"

static int
subprocess_bin_copy(const char *from, const char *to)
{
	char	 buf[65536];
	ssize_t	 n;
	int	 in, out, rv = -1;

	if ((in = open(from, O_RDONLY | O_CLOEXEC)) == -1)
		return (-1);
	if ((out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0755)) == -1) {
		close(in);
		return (-1);
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n)
			goto out;
	if (n == 0 && fchmod(out, 0755) == 0 && fsync(out) == 0)
		rv = 0;
 out:
	close(in);
	if (close(out) == -1)
		rv = -1;
	return (rv);
}

static int
subprocess_probe_dir(const char *bindir, char *err, size_t errlen)
{
	char		 src[PATH_MAX], dir[128], tmp[128], file[160];
	char		 sum[SHA256_DIGEST_STRING_LENGTH];
	struct stat	 sb;

	if ((size_t)snprintf(src, sizeof(src), "%s/fence-probe", bindir) >=
	    sizeof(src) || SHA256File(src, sum) == NULL) {
		snprintf(err, errlen, "%s: %s", src, strerror(errno));
		return (-1);
	}
	(void)snprintf(dir, sizeof(dir), "%s/%s", SUBPROCESS_BIN_TOP, sum);
	(void)snprintf(file, sizeof(file), "%s/fence-probe", dir);
	if (lstat(file, &sb) == 0) {
		if (!S_ISREG(sb.st_mode) || sb.st_uid != 0 ||
		    (sb.st_mode & 07777) != 0755) {
			snprintf(err, errlen, "%s: not root's, 0755", file);
			return (-1);
		}
		goto done;
	}
	if ((mkdir(SUBPROCESS_BIN_TOP, 0755) == -1 && errno != EEXIST) ||
	    lstat(SUBPROCESS_BIN_TOP, &sb) == -1) {
		snprintf(err, errlen, "%s: %s", SUBPROCESS_BIN_TOP,
		    strerror(errno));
		return (-1);
	}
	if (!S_ISDIR(sb.st_mode) || sb.st_uid != 0 ||
	    (sb.st_mode & 07777) != 0755) {
		snprintf(err, errlen, "%s: not a folder of root's, 0755",
		    SUBPROCESS_BIN_TOP);
		return (-1);
	}
	(void)snprintf(tmp, sizeof(tmp), "%s/.new.XXXXXX", SUBPROCESS_BIN_TOP);
	if (mkdtemp(tmp) == NULL || chmod(tmp, 0755) == -1) {
		snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
		return (-1);
	}
	(void)snprintf(file, sizeof(file), "%s/fence-probe", tmp);
	if (subprocess_bin_copy(src, file) == -1 || (rename(tmp, dir) == -1 &&
	    errno != EEXIST && errno != ENOTEMPTY)) {
		snprintf(err, errlen, "a copy of %s in %s: %s", src, dir,
		    strerror(errno));
		(void)unlink(file);
		(void)rmdir(tmp);
		return (-1);
	}
	/* Another daemon's rename came first: its copy is the same. */
	(void)unlink(file);
	(void)rmdir(tmp);
 done:
	strlcpy(subprocess_bindir, dir, sizeof(subprocess_bindir));
	return (0);
}

static void	subprocess_child(const struct fence *,
		    const struct backend_boot *, int, int, int)
		    __attribute__((noreturn));

/* <pids parent>/<name>, with the fence's pids limit; its procs file. */
static int
subprocess_cg_make(struct subprocess_fence *sp, const struct fence *f,
    const struct backend_boot *bb, char *err, size_t errlen)
{
	const char		*parent[CG_NCTRL] = { NULL };
	struct fence_limits	 l;
	int			 procs[CG_NCTRL] = { -1, -1, -1 };

	parent[CG_PIDS] = bb->bb_cgroup_parent[CG_PIDS];
	if (parent[CG_PIDS] == NULL || parent[CG_PIDS][0] != '/') {
		snprintf(err, errlen, "the subprocess backend needs a cgroup "
		    "to find every process of a fence at its stop, and this "
		    "machine gives fences none");
		return (-1);
	}
	memset(&l, 0, sizeof(l));
	l.fl_pids = f->f_info.f_limits.fl_pids;
	if (cg_fence_make(parent, bb->bb_cgroup_name, &l, sp->sp_cg, procs, NULL,
	    err, errlen) == -1) {
		if (procs[CG_PIDS] != -1)
			close(procs[CG_PIDS]);
		return (-1);
	}
	return (procs[CG_PIDS]);
}

/*
 * SIGKILL every process in the fence's cgroup but spare (0: none) until
 * none is left, for at most rounds milliseconds.  Returns -1 if some
 * are still there after the last round.
 */
static int
subprocess_cg_kill(const struct subprocess_fence *sp, pid_t spare, int rounds)
{
	return (cg_fence_kill(sp->sp_cg, spare, rounds));
}

static int
subprocess_cg_remove(struct subprocess_fence *sp)
{
	char	 err[PATH_MAX + 64];

	if (cg_fence_remove(sp->sp_cg, err, sizeof(err)) == 0)
		return (0);
	log_warnx("%s: %s", __func__, err);
	return (-1);
}

/* The agent's process, between fork and execve; errno to status. */
static void
subprocess_child(const struct fence *f, const struct backend_boot *bb,
    int chan, int procs, int status)
{
	struct rlimit	 rl = { 0, 0 };
	struct sigaction sa;
	sigset_t	 none;
	char		 path[PATH_MAX];
	char		*envp[] = { NULL };
	int		 rec[2], fd, nul, sig, agent, step = 0;

	/* What the fencer ignores (SIGPIPE) would stay ignored in exec. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	for (sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			(void)sigaction(sig, &sa, NULL);
	/* Every process of the fence is in its cgroup, this one first. */
	if (cg_join(procs) == -1)
		goto fail;
	step++;
	if (setsid() == -1 || prctl(PR_SET_PDEATHSIG, SIGKILL) == -1)
		goto fail;
	step++;
	/* Out of the way of 0-4 first, then each where the agent wants it. */
	if ((fd = fcntl(status, F_DUPFD_CLOEXEC, 10)) == -1)
		goto fail;
	status = fd;
	if ((fd = fcntl(chan, F_DUPFD_CLOEXEC, 10)) == -1)
		goto fail;
	chan = fd;
	if ((fd = open("/dev/null", O_RDWR | O_CLOEXEC)) == -1 ||
	    (nul = fcntl(fd, F_DUPFD_CLOEXEC, 10)) == -1)
		goto fail;
	if (dup2(chan, 3) == -1 || dup2(nul, 0) == -1 || dup2(nul, 1) == -1 ||
	    dup2(nul, 2) == -1 || dup3(status, 4, O_CLOEXEC) == -1)
		goto fail;
	status = 4;
	if (syscall(SYS_close_range, 5, ~0U, 0) == -1)
		goto fail;
	step++;
	if (setrlimit(RLIMIT_CORE, &rl) == -1)
		goto fail;
	step++;
	/*
	 * Opened as root, executed through the descriptor: the fence's uid
	 * need not reach the daemon's folder (a checkout under /root, 0700,
	 * on a stock Debian).
	 */
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", bb->bb_bindir,
	    bb->bb_init) >= sizeof(path)) {
		errno = ENAMETOOLONG;
		goto fail;
	}
	if ((agent = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		goto fail;
	step++;
	/*
	 * Groups, gid, uid: the kernel clears every capability then.  Until
	 * execve this is the fencer's memory (other fences' bearers): not
	 * dumpable, whatever fs.suid_dumpable says, so the fence's uid can
	 * neither ptrace it nor read it.
	 */
	if (prctl(PR_SET_DUMPABLE, 0) == -1 ||
	    prctl(PR_SET_KEEPCAPS, 0) == -1 || setgroups(0, NULL) == -1 ||
	    setresgid(f->f_gid, f->f_gid, f->f_gid) == -1 ||
	    setresuid(f->f_info.f_uid, f->f_info.f_uid, f->f_info.f_uid) == -1 ||
	    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) == -1)
		goto fail;
	step++;
	if (getuid() == 0 || geteuid() == 0) {
		errno = EPERM;
		goto fail;
	}
	/* setresuid cleared it; the fencer may be gone already. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) == -1 || getppid() == 1)
		goto fail;
	step++;
	if (chdir(f->f_info.f_home) == -1)
		goto fail;
	step++;
	(void)umask(022);
	sigemptyset(&none);
	(void)sigprocmask(SIG_SETMASK, &none, NULL);
	fexecve(agent, bb->bb_argv, envp);
 fail:
	rec[0] = step;
	rec[1] = errno;
	/* One write: the fencer reads the record whole or nothing. */
	if (write(status, rec, sizeof(rec)) != (ssize_t)sizeof(rec))
		_exit(126);
	_exit(127);
}

static const char *const subprocess_steps[] = {
	"join its cgroup", "start a session", "set up its descriptors",
	"set RLIMIT_CORE", "open the agent", "become the fence's uid",
	"keep its parent-death signal",
	"enter its home", "execute the agent"
};

static int
subprocess_boot(struct fence *f, const struct backend_boot *bb, int *chan,
    char *err, size_t errlen)
{
	struct subprocess_fence *sp = f->f_be;
	struct timespec	 t0, t1;
	int		 sv[2] = { -1, -1 }, st[2] = { -1, -1 }, procs = -1;
	int		 rec[2];
	ssize_t		 n;
	pid_t		 pid;

	sp->sp_pid = -1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (bb->bb_home_dev[0] != '\0') {
		snprintf(err, errlen, "a subprocess fence cannot mount a home "
		    "image (limit home): it has no mount namespace");
		return (-1);
	}
	if (f->f_info.f_uid == 0) {
		snprintf(err, errlen, "a fence never runs as uid 0");
		return (-1);
	}
	if (subprocess_probe_dir(bb->bb_bindir, err, errlen) == -1)
		return (-1);
	if ((procs = subprocess_cg_make(sp, f, bb, err, errlen)) == -1)
		goto fail;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	f->f_info.f_timings.t_cgroup_us = (uint32_t)((t1.tv_sec -
	    t0.tv_sec) * 1000000 + (t1.tv_nsec - t0.tv_nsec) / 1000);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1 ||
	    pipe2(st, O_CLOEXEC) == -1) {
		snprintf(err, errlen, "socketpair: %s", strerror(errno));
		goto fail;
	}
	switch ((pid = fork())) {
	case -1:
		snprintf(err, errlen, "fork: %s", strerror(errno));
		goto fail;
	case 0:
		close(st[0]);
		subprocess_child(f, bb, sv[1], procs, st[1]);
	}
	sp->sp_pid = pid;
	f->f_info.f_pid = pid;
	close(st[1]);
	st[1] = -1;
	close(sv[1]);
	sv[1] = -1;
	close(procs);
	procs = -1;
	/* Nothing to read: execve closed it.  A record: what failed. */
	while ((n = read(st[0], rec, sizeof(rec))) == -1 && errno == EINTR)
		;
	close(st[0]);
	st[0] = -1;
	if (n != 0) {
		if (n == (ssize_t)sizeof(rec) && rec[0] == 6 &&
		    rec[1] == EACCES)
			snprintf(err, errlen, "uid %u cannot enter its home: a "
			    "subprocess fence sees the host's paths, so every "
			    "folder above the home must be searchable by it",
			    (unsigned)f->f_info.f_uid);
		else if (n == (ssize_t)sizeof(rec) && rec[0] >= 0 && rec[0] <
		    (int)(sizeof(subprocess_steps) / sizeof(subprocess_steps[0])))
			snprintf(err, errlen, "the agent's process could not "
			    "%s: %s", subprocess_steps[rec[0]],
			    strerror(rec[1]));
		else
			snprintf(err, errlen, "the agent's process failed");
		goto fail;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	f->f_info.f_timings.t_exec_us = (uint32_t)((t1.tv_sec -
	    t0.tv_sec) * 1000000 + (t1.tv_nsec - t0.tv_nsec) / 1000);
	*chan = sv[0];
	return (0);
 fail:
	if (sv[0] != -1)
		close(sv[0]);
	if (sv[1] != -1)
		close(sv[1]);
	if (st[0] != -1)
		close(st[0]);
	if (st[1] != -1)
		close(st[1]);
	if (procs != -1)
		close(procs);
	(void)subprocess_cg_kill(sp, 0, 2000);
	if (sp->sp_pid > 0)
		(void)waitpid(sp->sp_pid, NULL, 0);
	sp->sp_pid = -1;
	f->f_info.f_pid = 0;
	(void)subprocess_cg_remove(sp);
	return (-1);
}

static void
subprocess_reaped(struct fence *f)
{
	struct subprocess_fence *sp = f->f_be;

	sp->sp_pid = -1;
}

static int
subprocess_stop(struct fence *f, int *oom)
{
	struct subprocess_fence *sp = f->f_be;
	int		 rv = 0;

	*oom = 0;
	/*
	 * The commands first, while the agent still reaps them as their
	 * subreaper: killed with it, they would be init's zombies.
	 */
	if (sp->sp_pid > 0)
		(void)subprocess_cg_kill(sp, sp->sp_pid, 1000);
	if (sp->sp_pid > 0)
		(void)kill(sp->sp_pid, SIGKILL);
	if (subprocess_cg_kill(sp, 0, 2000) == -1) {
		log_warnx("%s: fence %s: processes left in %s", __func__,
		    f->f_info.f_key, sp->sp_cg[CG_PIDS]);
		rv = -1;
	}
	if (sp->sp_pid > 0) {
		while (waitpid(sp->sp_pid, NULL, 0) == -1 && errno == EINTR)
			;
		sp->sp_pid = -1;
	}
	if (subprocess_cg_remove(sp) == -1)
		rv = -1;
	return (rv);
}

const struct fencer_backend backend_subprocess = {
	.fb_id = BACKEND_SUBPROCESS,
	.fb_bin_dir = subprocess_bindir,
	.fb_host_view = 1,
	.fb_state_size = sizeof(struct subprocess_fence),
	/* Nothing for the judge beyond what the host reads: no home said. */
	.fb_probe = { .pt_kernel = PROBE_KERNEL_HOST },
	.fb_boot = subprocess_boot,
	.fb_reaped = subprocess_reaped,
	.fb_stop = subprocess_stop,
};
