/*
 * The file engine of snapshots: copy, empty and measure a directory tree
 * as a given uid (docs/snapshots.md, "The file engine").
 *
 * Root does none of the work.  Each operation forks a child that drops
 * to uid:gid with no supplementary groups and no capabilities, sets
 * no_new_privs and loses dumpability, and only then opens anything of
 * the tree: whatever a hostile fence or owner put in it, the child can
 * reach only what the uid could reach by itself.  The child still never
 * follows a symlink (the walks, fencer_tree_walk.c): every name is
 * opened O_NOFOLLOW relative to the descriptor of its directory, and its
 * type is judged by fstat of what was opened, so a name swapped between
 * readdir and open is skipped, retried or refused, never followed.  No
 * path string is ever built for an open; the one kept is for messages.
 *
 * The child's answer comes back over a pipe as fixed-size messages: a
 * progress message at most once a second and a final one, which the
 * parent validates.  A child that dies, or says nothing for
 * tree_stall_seconds (stopped by its uid, stuck in a filesystem that
 * never answers), is an error: the parent kills it and reaps it.
 */
#include <sys/types.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "fencer_tree.h"
#include "fencer_tree_impl.h"

#define TREE_MAGIC		0x66747265U	/* "ftre" */
#define TREE_MSG_PROGRESS	1
#define TREE_MSG_DONE		2
/* Two directories per level while copying, and a few more. */
#define TREE_NOFILE		(2 * TREE_DEPTH_MAX + 16)

struct tree_msg {
	uint32_t		 tm_magic;
	uint32_t		 tm_type;
	int32_t			 tm_rc;
	uint32_t		 tm_pad;
	struct tree_count	 tm_count;
	uint64_t		 tm_skipped[TREE_SKIP_N];
	char			 tm_err[TREE_ERR_LEN];
};
/* One write, read whole: a pipe never splits what fits in PIPE_BUF. */
_Static_assert(sizeof(struct tree_msg) <= PIPE_BUF, "tree_msg too big");

unsigned int	 tree_stall_seconds = 60;

static int	tree_run(enum tree_op, int, int, uid_t, gid_t,
		    const struct tree_bounds *, struct tree_count *, char *,
		    size_t);
static int	tree_wait(enum tree_op, pid_t, int, struct tree_msg *, char *,
		    size_t);
static int	tree_check(const struct tree_msg *,
		    const struct tree_bounds *);
static void	tree_child(struct tree_walk *, int, int) __attribute__((
		    noreturn));
static int	tree_become(struct tree_walk *, gid_t, int, int);
static void	tree_send(struct tree_walk *, uint32_t, int);

int
tree_copy(int srcfd, int dstfd, uid_t uid, gid_t gid,
    const struct tree_bounds *b, struct tree_count *count, char *err,
    size_t errlen)
{
	return (tree_run(TREE_OP_COPY, srcfd, dstfd, uid, gid, b, count,
	    err, errlen));
}

int
tree_empty(int dirfd, uid_t uid, gid_t gid, char *err, size_t errlen)
{
	return (tree_run(TREE_OP_EMPTY, dirfd, -1, uid, gid, NULL, NULL,
	    err, errlen));
}

int
tree_measure(int dirfd, uid_t uid, gid_t gid, const struct tree_bounds *b,
    struct tree_count *count, char *err, size_t errlen)
{
	return (tree_run(TREE_OP_MEASURE, dirfd, -1, uid, gid, b, count,
	    err, errlen));
}

const char *
tree_op_name(enum tree_op op)
{
	switch (op) {
	case TREE_OP_COPY:
		return ("copy");
	case TREE_OP_EMPTY:
		return ("empty");
	default:
		return ("measure");
	}
}

/*
 * The parent's side: fork, then wait for the child's answer.  The
 * fencer's SIGCHLD is an event of its loop, which cannot run while this
 * blocks, and the child is reaped here by its pid before returning: the
 * loop's waitpid(-1) (fencer_reap()) never sees it.  Whoever calls this
 * from anything but the fencer's one thread must keep it so.
 */
static int
tree_run(enum tree_op op, int fd, int dstfd, uid_t uid, gid_t gid,
    const struct tree_bounds *b, struct tree_count *count, char *err,
    size_t errlen)
{
	struct tree_walk	*w;
	struct tree_msg		 m;
	sigset_t		 all, old;
	pid_t			 pid;
	char			 ebuf[TREE_ERR_LEN];
	int			 p[2];

	if (err == NULL || errlen == 0) {
		err = ebuf;
		errlen = sizeof(ebuf);
	}
	err[0] = '\0';
	if (count != NULL)
		memset(count, 0, sizeof(*count));
	if (uid == 0 || gid == 0 || uid == (uid_t)-1 || gid == (gid_t)-1) {
		snprintf(err, errlen, "%s: refused as uid %u gid %u",
		    tree_op_name(op), (unsigned)uid, (unsigned)gid);
		return (-1);
	}
	if (fd < 0 || (op == TREE_OP_COPY && dstfd < 0)) {
		snprintf(err, errlen, "%s: no directory", tree_op_name(op));
		return (-1);
	}
	/* The child's buffers, allocated before the fork: it is copied. */
	if ((w = calloc(1, sizeof(*w))) == NULL) {
		snprintf(err, errlen, "%s: %s", tree_op_name(op),
		    strerror(errno));
		return (-1);
	}
	w->tw_op = op;
	if (b != NULL)
		w->tw_bounds = *b;
	w->tw_uid = uid;
	w->tw_parent = getpid();
	w->tw_clone = w->tw_cfr = 1;
	if (pipe2(p, O_CLOEXEC) == -1) {
		snprintf(err, errlen, "%s: pipe: %s", tree_op_name(op),
		    strerror(errno));
		free(w);
		return (-1);
	}
	/* No handler of the fencer's may run in the child (tree_become()). */
	sigfillset(&all);
	(void)sigprocmask(SIG_BLOCK, &all, &old);
	if ((pid = fork()) == -1) {
		snprintf(err, errlen, "%s: fork: %s", tree_op_name(op),
		    strerror(errno));
		(void)sigprocmask(SIG_SETMASK, &old, NULL);
		(void)close(p[0]);
		(void)close(p[1]);
		free(w);
		return (-1);
	}
	if (pid == 0) {
		(void)close(p[0]);
		w->tw_pipe = p[1];
		if (tree_become(w, gid, fd, dstfd) == -1) {
			tree_send(w, TREE_MSG_DONE, -1);
			_exit(1);
		}
		tree_child(w, fd, dstfd);
	}
	(void)sigprocmask(SIG_SETMASK, &old, NULL);
	free(w);
	(void)close(p[1]);
	if (tree_wait(op, pid, p[0], &m, err, errlen) == -1)
		return (-1);
	if (tree_check(&m, b) == -1) {
		snprintf(err, errlen, "%s: the child's answer is malformed",
		    tree_op_name(op));
		return (-1);
	}
	if (m.tm_rc != 0) {
		strlcpy(err, m.tm_err, errlen);
		return (-1);
	}
	if (count != NULL)
		*count = m.tm_count;
	if (m.tm_skipped[TREE_SKIP_SOCKET] || m.tm_skipped[TREE_SKIP_DEVICE] ||
	    m.tm_skipped[TREE_SKIP_MOUNT] || m.tm_skipped[TREE_SKIP_XATTR] ||
	    m.tm_skipped[TREE_SKIP_LINKED])
		log_info("tree %s as uid %u: %llu entries; skipped %llu "
		    "sockets, %llu device nodes, %llu mount points, %llu "
		    "xattrs; %llu hard-linked files copied apart",
		    tree_op_name(op), (unsigned)uid,
		    (unsigned long long)m.tm_count.tc_files,
		    (unsigned long long)m.tm_skipped[TREE_SKIP_SOCKET],
		    (unsigned long long)m.tm_skipped[TREE_SKIP_DEVICE],
		    (unsigned long long)m.tm_skipped[TREE_SKIP_MOUNT],
		    (unsigned long long)m.tm_skipped[TREE_SKIP_XATTR],
		    (unsigned long long)m.tm_skipped[TREE_SKIP_LINKED]);
	return (0);
}

/*
 * Read messages until the final one, the pipe's end or a stall; then
 * reap the child, killed first unless it answered.  -1 with err unless
 * *m holds the final message.
 */
static int
tree_wait(enum tree_op op, pid_t pid, int fd, struct tree_msg *m, char *err,
    size_t errlen)
{
	const char	*verb = tree_op_name(op);
	struct pollfd	 pfd;
	ssize_t		 n;
	size_t		 got = 0;
	int		 st, done = 0, r;

	err[0] = '\0';
	pfd.fd = fd;
	pfd.events = POLLIN;
	while (!done) {
		r = poll(&pfd, 1, (int)(tree_stall_seconds > 3600 ? 3600000 :
		    tree_stall_seconds < 1 ? 1000 : tree_stall_seconds * 1000));
		if (r == -1 && errno == EINTR)
			continue;
		if (r == -1) {
			snprintf(err, errlen, "%s: poll: %s", verb,
			    strerror(errno));
			break;
		}
		if (r == 0) {
			snprintf(err, errlen, "%s: no progress for %u "
			    "seconds", verb, tree_stall_seconds);
			break;
		}
		n = read(fd, (char *)m + got, sizeof(*m) - got);
		if (n == -1 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n == -1) {
			snprintf(err, errlen, "%s: read: %s", verb,
			    strerror(errno));
			break;
		}
		if (n == 0) {
			if (got != 0)
				snprintf(err, errlen, "%s: a short answer",
				    verb);
			break;
		}
		if ((got += (size_t)n) < sizeof(*m))
			continue;
		got = 0;
		if (m->tm_magic != TREE_MAGIC || (m->tm_type !=
		    TREE_MSG_PROGRESS && m->tm_type != TREE_MSG_DONE)) {
			snprintf(err, errlen, "%s: a malformed answer", verb);
			break;
		}
		if (m->tm_type == TREE_MSG_DONE)
			done = 1;
	}
	(void)close(fd);
	if (!done)
		(void)kill(pid, SIGKILL);
	while (waitpid(pid, &st, 0) == -1)
		if (errno != EINTR) {
			if (err[0] == '\0')
				snprintf(err, errlen, "%s: wait: %s", verb,
				    strerror(errno));
			return (-1);
		}
	if (done)
		return (0);
	if (err[0] != '\0')
		return (-1);
	if (WIFSIGNALED(st))
		snprintf(err, errlen, "%s: killed by signal %d", verb,
		    WTERMSIG(st));
	else
		snprintf(err, errlen, "%s: exited with %d and no answer", verb,
		    WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	return (-1);
}

/* The final message: a verdict, a terminated error, counts in bounds. */
static int
tree_check(const struct tree_msg *m, const struct tree_bounds *b)
{
	if (memchr(m->tm_err, '\0', sizeof(m->tm_err)) == NULL)
		return (-1);
	if (m->tm_rc == -1)
		return (m->tm_err[0] != '\0' ? 0 : -1);
	if (m->tm_rc != 0 || m->tm_count.tc_shared > m->tm_count.tc_disk)
		return (-1);
	if (b != NULL && ((b->tb_bytes != 0 &&
	    m->tm_count.tc_bytes > b->tb_bytes) || (b->tb_files != 0 &&
	    m->tm_count.tc_files > b->tb_files)))
		return (-1);
	return (0);
}

/*
 * The child, still root: default signals (the fencer's handlers would
 * write into its event loop's descriptors), no descriptor of the
 * fencer's but the tree's and the pipe, room for a descriptor per
 * level, then uid:gid with nothing else.  A signal from the uid may now
 * kill or stop it: the parent sees the end or the silence.
 */
static int
tree_become(struct tree_walk *w, gid_t gid, int fd, int dstfd)
{
	struct rlimit	 rl;
	sigset_t	 all;
	cap_t		 none = NULL, have = NULL;
	uid_t		 ru, eu, su;
	gid_t		 rg, eg, sg;
	int		 keep[3], nkeep = 0, i, j, t, sig, cmp;
	unsigned int	 from;

	for (sig = 1; sig < NSIG; sig++)
		(void)signal(sig, SIG_DFL);
	sigemptyset(&all);
	(void)sigprocmask(SIG_SETMASK, &all, NULL);

	keep[nkeep++] = fd;
	keep[nkeep++] = w->tw_pipe;
	if (dstfd >= 0)
		keep[nkeep++] = dstfd;
	for (i = 1; i < nkeep; i++)
		for (j = i; j > 0 && keep[j - 1] > keep[j]; j--) {
			t = keep[j];
			keep[j] = keep[j - 1];
			keep[j - 1] = t;
		}
	for (from = 3, i = 0; i < nkeep; i++) {
		if ((unsigned int)keep[i] > from)
			(void)close_range(from, (unsigned int)keep[i] - 1, 0);
		if ((unsigned int)keep[i] + 1 > from)
			from = (unsigned int)keep[i] + 1;
	}
	(void)close_range(from, ~0U, 0);

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < TREE_NOFILE) {
		rl.rlim_cur = rl.rlim_max < TREE_NOFILE ? rl.rlim_max :
		    TREE_NOFILE;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
	/* Made with the modes asked for, then set exactly (fchmod). */
	(void)umask(0);

	if (setgroups(0, NULL) == -1 || setresgid(gid, gid, gid) == -1 ||
	    setresuid(w->tw_uid, w->tw_uid, w->tw_uid) == -1)
		goto fail;
	/*
	 * A change of uid clears the capabilities unless a securebit of the
	 * caller's (keep_caps, no_setuid_fixup) says otherwise: cleared here
	 * whatever the caller had.
	 */
	if ((none = cap_init()) == NULL || cap_set_proc(none) == -1 ||
	    cap_reset_ambient() == -1)
		goto fail;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1 ||
	    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == -1 ||
	    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) == -1)
		goto fail;
	if (getppid() != w->tw_parent)
		_exit(1);		/* the fencer died before that */
	/* Read back: a step that did not take is fatal. */
	if ((have = cap_get_proc()) == NULL)
		goto fail;
	cmp = cap_compare(have, none);
	if (cmp != 0 || getresuid(&ru, &eu, &su) == -1 ||
	    getresgid(&rg, &eg, &sg) == -1 || ru != w->tw_uid ||
	    eu != w->tw_uid || su != w->tw_uid || rg != gid || eg != gid ||
	    sg != gid || getgroups(0, NULL) != 0 ||
	    prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1 ||
	    prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) != 0) {
		errno = EPERM;
		goto fail;
	}
	cap_free(have);
	cap_free(none);
	return (0);
 fail:
	t = errno;
	if (have != NULL)
		cap_free(have);
	if (none != NULL)
		cap_free(none);
	snprintf(w->tw_err, sizeof(w->tw_err), "%s: cannot become uid %u "
	    "alone: %s", tree_op_name(w->tw_op), (unsigned)w->tw_uid,
	    strerror(t));
	return (-1);
}

static void
tree_child(struct tree_walk *w, int fd, int dstfd)
{
	struct stat	 sb;
	mode_t		 mode = 0;
	int		 top, dtop = -1, rc, unlocked = 0;

	(void)clock_gettime(CLOCK_MONOTONIC, &w->tw_last);
	if (tree_mount(fd, &w->tw_mnt) == -1) {
		rc = tree_fail(w, errno);
		goto done;
	}
	if (w->tw_op == TREE_OP_EMPTY && fstat(fd, &sb) == 0 &&
	    S_ISDIR(sb.st_mode) && sb.st_uid == w->tw_uid &&
	    (sb.st_mode & 0700) != 0700) {
		/* Given back at the end: only what is below goes. */
		mode = sb.st_mode & 07777;
		if ((rc = tree_unlock(w, fd, mode | 0700)) == -1)
			goto done;
		unlocked = 1;
	}
	if ((rc = tree_top(w, fd, &top)) == -1)
		goto done;
	switch (w->tw_op) {
	case TREE_OP_COPY:
		if ((rc = tree_top(w, dstfd, &dtop)) == -1) {
			(void)close(top);
			break;
		}
		if ((rc = tree_dst_empty(w, dtop)) == -1) {
			(void)close(top);
			(void)close(dtop);
			break;
		}
		rc = tree_dir(w, top, dtop, 0);
		(void)close(dtop);
		break;
	case TREE_OP_EMPTY:
		rc = tree_empty_dir(w, top, 0);
		if (unlocked && fchmod(fd, mode) == -1 && rc == 0)
			rc = tree_fail(w, errno);
		break;
	case TREE_OP_MEASURE:
		rc = tree_dir(w, top, -1, 0);
		break;
	}
 done:
	tree_send(w, TREE_MSG_DONE, rc == 0 ? 0 : -1);
	_exit(0);
}

static void
tree_send(struct tree_walk *w, uint32_t type, int rc)
{
	struct tree_msg	 m;
	ssize_t		 n;

	memset(&m, 0, sizeof(m));
	m.tm_magic = TREE_MAGIC;
	m.tm_type = type;
	m.tm_rc = rc;
	m.tm_count = w->tw_count;
	memcpy(m.tm_skipped, w->tw_skipped, sizeof(m.tm_skipped));
	if (rc != 0)
		strlcpy(m.tm_err, w->tw_err, sizeof(m.tm_err));
	while ((n = write(w->tw_pipe, &m, sizeof(m))) == -1 && errno == EINTR)
		;
	if (n != (ssize_t)sizeof(m))
		_exit(1);	/* nobody is listening */
}

/* A sign of life at most once a second. */
void
tree_progress(struct tree_walk *w)
{
	struct timespec	 now;

	if (clock_gettime(CLOCK_MONOTONIC, &now) == -1 ||
	    now.tv_sec == w->tw_last.tv_sec)
		return;
	w->tw_last = now;
	tree_send(w, TREE_MSG_PROGRESS, 0);
}
