/*
 * The file engine of snapshots: copy, empty and measure a directory tree
 * as a given uid (docs/snapshots.md, "The file engine").
 *
 * Root does none of the work.  Each operation forks a child that drops
 * to uid:gid with no supplementary groups and no capabilities, sets
 * no_new_privs and loses dumpability, and only then opens anything of
 * the tree: whatever a hostile fence or owner put in it, the child can
 * reach only what the uid could reach by itself.  The child still never
 * follows a symlink: every name is opened O_NOFOLLOW relative to the
 * descriptor of its directory, and its type is judged by fstat of what
 * was opened, so a name swapped between readdir and open is skipped,
 * retried or refused, never followed.  No path string is ever built for
 * an open; the one kept is for error messages.
 *
 * The child's answer comes back over a pipe as fixed-size messages: a
 * progress message at most once a second and a final one, which the
 * parent validates.  A child that dies, or says nothing for
 * tree_stall_seconds (stopped by its uid, stuck in a filesystem that
 * never answers), is an error: the parent kills it and reaps it.
 */
#include <sys/types.h>
#include <sys/capability.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <sys/xattr.h>

#include <linux/fs.h>

#include <dirent.h>
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

#ifndef __NR_fchmodat2
#define __NR_fchmodat2		452
#endif

#define TREE_MAGIC		0x66747265U	/* "ftre" */
#define TREE_MSG_PROGRESS	1
#define TREE_MSG_DONE		2
#define TREE_ERR_LEN		512
#define TREE_PATH_LEN		1024	/* the path kept for messages */
#define TREE_XATTR_MAX		64	/* user.* attributes per file */
#define TREE_XATTR_SIZE		65536	/* bytes of one value, and of a list */
#define TREE_CHUNK		(8 << 20)	/* copied between two looks */
#define TREE_BUF		(128 << 10)	/* read/write buffer */
#define TREE_EMPTY_PASSES	8	/* rereads of a directory emptied */
#define TREE_RETRIES		3	/* a name that keeps changing type */
/* Two directories per level while copying, and a few more. */
#define TREE_NOFILE		(2 * TREE_DEPTH_MAX + 16)

enum tree_op {
	TREE_OP_COPY,
	TREE_OP_EMPTY,
	TREE_OP_MEASURE
};

/* What was left out, for the log line. */
enum tree_skip {
	TREE_SKIP_SOCKET,
	TREE_SKIP_DEVICE,
	TREE_SKIP_MOUNT,
	TREE_SKIP_XATTR,
	TREE_SKIP_LINKED,	/* not left out: hard links copied apart */
	TREE_SKIP_N
};

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

/* The child's state. */
struct tree_walk {
	enum tree_op		 tw_op;
	struct tree_bounds	 tw_bounds;
	struct tree_count	 tw_count;
	uint64_t		 tw_seen;	/* entries met, made or not */
	uint64_t		 tw_skipped[TREE_SKIP_N];
	uint64_t		 tw_mnt;	/* the top's mount */
	dev_t			 tw_dst_dev;	/* the destination's top */
	ino_t			 tw_dst_ino;
	uid_t			 tw_uid;
	pid_t			 tw_parent;
	int			 tw_pipe;
	int			 tw_clone;	/* 0: FICLONE does not work */
	int			 tw_cfr;	/* 0: copy_file_range neither */
	struct timespec		 tw_last;	/* last progress message */
	size_t			 tw_pathlen;
	char			 tw_path[TREE_PATH_LEN];
	char			 tw_err[TREE_ERR_LEN];
	char			 tw_link[PATH_MAX + 1];
	char			 tw_list[TREE_XATTR_SIZE];
	char			 tw_val[TREE_XATTR_SIZE];
	char			 tw_buf[TREE_BUF];
};

/* An entry changed type between two looks: look again. */
#define TREE_AGAIN		1

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
static void	tree_progress(struct tree_walk *);
static int	tree_fail(struct tree_walk *, int);
static int	tree_failx(struct tree_walk *, const char *);
static size_t	tree_push(struct tree_walk *, const char *);
static int	tree_mount(int, uint64_t *);
static int	tree_top(struct tree_walk *, int, int *);
static int	tree_dst_empty(struct tree_walk *, int);
static int	tree_dir(struct tree_walk *, int, int, int);
static int	tree_entry(struct tree_walk *, int, int, const char *, int);
static int	tree_subdir(struct tree_walk *, int, int, const char *,
		    int);
static int	tree_file(struct tree_walk *, int, int, const char *);
static int	tree_data(struct tree_walk *, int, int, const struct stat *);
static int	tree_range(struct tree_walk *, int, int, off_t, off_t,
		    off_t *);
static int	tree_symlink(struct tree_walk *, int, int, const char *,
		    const struct stat *);
static int	tree_fifo(struct tree_walk *, int, const char *,
		    const struct stat *);
static int	tree_xattrs(struct tree_walk *, int, int);
static int	tree_bytes(struct tree_walk *, uint64_t);
static int	tree_empty_dir(struct tree_walk *, int, int);
static int	tree_empty_sub(struct tree_walk *, int, const char *, int);
static int	tree_unlock(struct tree_walk *, int, mode_t);

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

static const char *
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
static void
tree_progress(struct tree_walk *w)
{
	struct timespec	 now;

	if (clock_gettime(CLOCK_MONOTONIC, &now) == -1 ||
	    now.tv_sec == w->tw_last.tv_sec)
		return;
	w->tw_last = now;
	tree_send(w, TREE_MSG_PROGRESS, 0);
}

/* The path so far, escaped: names hold anything, newlines included. */
static void
tree_vis(char *dst, size_t len, const char *src)
{
	size_t		 o = 0;
	unsigned char	 c;

	for (; *src != '\0' && o + 5 < len; src++) {
		c = (unsigned char)*src;
		if (c >= 0x20 && c < 0x7f && c != '\\')
			dst[o++] = (char)c;
		else
			o += (size_t)snprintf(dst + o, len - o, "\\%03o", c);
	}
	if (*src != '\0' && o + 4 <= len)
		o += strlcpy(dst + o, "...", len - o);
	dst[o] = '\0';
}

static int
tree_failx(struct tree_walk *w, const char *why)
{
	char	 path[TREE_ERR_LEN / 2];

	tree_vis(path, sizeof(path), w->tw_pathlen > 0 ? w->tw_path : ".");
	snprintf(w->tw_err, sizeof(w->tw_err), "%s %s: %s",
	    tree_op_name(w->tw_op), path, why);
	return (-1);
}

static int
tree_fail(struct tree_walk *w, int e)
{
	return (tree_failx(w, strerror(e)));
}

/* Append "/name" to the path for messages; the old length back. */
static size_t
tree_push(struct tree_walk *w, const char *name)
{
	size_t	 old = w->tw_pathlen;

	if (old > 0 && old + 1 < sizeof(w->tw_path))
		w->tw_path[w->tw_pathlen++] = '/';
	w->tw_pathlen += strlcpy(w->tw_path + w->tw_pathlen, name,
	    sizeof(w->tw_path) - w->tw_pathlen);
	if (w->tw_pathlen >= sizeof(w->tw_path))
		w->tw_pathlen = sizeof(w->tw_path) - 1;
	return (old);
}

/* Which mount a directory is on (btrfs subvolumes differ in st_dev). */
static int
tree_mount(int fd, uint64_t *id)
{
	struct statx	 stx;

	if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW,
	    STATX_MNT_ID, &stx) == -1)
		return (-1);
	if (stx.stx_mask & STATX_MNT_ID)
		*id = stx.stx_mnt_id;
	else
		*id = ((uint64_t)stx.stx_dev_major << 32) | stx.stx_dev_minor;
	return (0);
}

/* The top, opened as the uid (its descriptor may be O_PATH). */
static int
tree_top(struct tree_walk *w, int fd, int *top)
{
	struct stat	 sb;

	if ((*top = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) ==
	    -1)
		return (tree_fail(w, errno));
	if (fstat(*top, &sb) == -1 || !S_ISDIR(sb.st_mode)) {
		(void)close(*top);
		return (tree_fail(w, ENOTDIR));
	}
	return (0);
}

/*
 * The destination holds nothing (a name met twice in a changing
 * directory is copied once, so nothing there may be taken for one), and
 * is known, so that a copy inside the source is not copied into itself.
 */
static int
tree_dst_empty(struct tree_walk *w, int dtop)
{
	struct dirent	*de;
	struct stat	 sb;
	DIR		*d;
	int		 fd, full = 0;

	if (fstat(dtop, &sb) == -1 || (fd = openat(dtop, ".", O_RDONLY |
	    O_DIRECTORY | O_CLOEXEC)) == -1)
		return (tree_fail(w, errno));
	w->tw_dst_dev = sb.st_dev;
	w->tw_dst_ino = sb.st_ino;
	if ((d = fdopendir(fd)) == NULL) {
		(void)close(fd);
		return (tree_fail(w, errno));
	}
	while (!full && (de = readdir(d)) != NULL)
		full = strcmp(de->d_name, ".") != 0 &&
		    strcmp(de->d_name, "..") != 0;
	(void)closedir(d);
	if (full) {
		snprintf(w->tw_err, sizeof(w->tw_err), "copy: the "
		    "destination is not empty");
		return (-1);
	}
	return (0);
}

/*
 * Each entry of directory sfd (consumed) at depth, copied into dfd, or
 * only counted where dfd is -1.  One DIR and two descriptors a level:
 * memory and descriptors grow with depth, never with a directory's size.
 */
static int
tree_dir(struct tree_walk *w, int sfd, int dfd, int depth)
{
	struct dirent	*de;
	DIR		*d;
	size_t		 old;
	int		 rc = 0;

	if ((d = fdopendir(sfd)) == NULL) {
		(void)close(sfd);
		return (tree_fail(w, errno));
	}
	for (;;) {
		errno = 0;
		if ((de = readdir(d)) == NULL) {
			if (errno != 0)
				rc = tree_fail(w, errno);
			break;
		}
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		old = tree_push(w, de->d_name);
		rc = tree_entry(w, dirfd(d), dfd, de->d_name, depth);
		if (rc == -1)
			break;
		w->tw_pathlen = old;
		w->tw_path[old] = '\0';
	}
	(void)closedir(d);
	return (rc);
}

/* One name: counted against the bound, then copied by what it is now. */
static int
tree_entry(struct tree_walk *w, int sdir, int ddir, const char *name,
    int depth)
{
	struct stat	 sb;
	int		 i, rc = TREE_AGAIN;

	if (w->tw_bounds.tb_files != 0 && ++w->tw_seen >
	    w->tw_bounds.tb_files) {
		snprintf(w->tw_err, sizeof(w->tw_err), "home holds more than "
		    "%llu files", (unsigned long long)w->tw_bounds.tb_files);
		return (-1);
	}
	tree_progress(w);
	for (i = 0; i < TREE_RETRIES && rc == TREE_AGAIN; i++) {
		if (fstatat(sdir, name, &sb, AT_SYMLINK_NOFOLLOW) == -1)
			return (errno == ENOENT ? 0 : tree_fail(w, errno));
		switch (sb.st_mode & S_IFMT) {
		case S_IFREG:
			rc = tree_file(w, sdir, ddir, name);
			break;
		case S_IFDIR:
			rc = tree_subdir(w, sdir, ddir, name, depth + 1);
			break;
		case S_IFLNK:
			rc = tree_symlink(w, sdir, ddir, name, &sb);
			break;
		case S_IFIFO:
			rc = tree_fifo(w, ddir, name, &sb);
			break;
		case S_IFSOCK:
			w->tw_skipped[TREE_SKIP_SOCKET]++;
			rc = 0;
			break;
		default:
			w->tw_skipped[TREE_SKIP_DEVICE]++;
			rc = 0;
			break;
		}
	}
	if (rc == TREE_AGAIN)
		return (tree_failx(w, "changed while copied"));
	return (rc);
}

static int
tree_subdir(struct tree_walk *w, int sdir, int ddir, const char *name,
    int depth)
{
	struct timespec	 ts[2];
	struct stat	 sb, db;
	uint64_t	 mnt;
	int		 sfd, dfd = -1, e;

	if (depth > TREE_DEPTH_MAX) {
		snprintf(w->tw_err, sizeof(w->tw_err), "tree deeper than %d "
		    "levels", TREE_DEPTH_MAX);
		return (-1);
	}
	if ((sfd = openat(sdir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1) {
		if (errno == ENOTDIR || errno == ELOOP)
			return (TREE_AGAIN);
		return (errno == ENOENT ? 0 : tree_fail(w, errno));
	}
	if (fstat(sfd, &sb) == -1 || tree_mount(sfd, &mnt) == -1) {
		(void)close(sfd);
		return (tree_fail(w, errno));
	}
	if (mnt != w->tw_mnt) {
		/* Another filesystem mounted here (FUSE of the owner's...). */
		w->tw_skipped[TREE_SKIP_MOUNT]++;
		(void)close(sfd);
		return (0);
	}
	if (ddir != -1 && sb.st_dev == w->tw_dst_dev &&
	    sb.st_ino == w->tw_dst_ino) {
		(void)close(sfd);	/* the copy itself, inside the home */
		return (0);
	}
	if (ddir == -1) {
		w->tw_count.tc_files++;
		w->tw_count.tc_disk += (uint64_t)sb.st_blocks * 512;
		return (tree_dir(w, sfd, -1, depth));
	}
	/*
	 * 0700 while it fills, its own mode once full.  A name a changing
	 * directory gave twice is copied once.
	 */
	if (mkdirat(ddir, name, 0700) == -1) {
		e = errno;
		(void)close(sfd);
		return (e == EEXIST ? 0 : tree_fail(w, e));
	}
	w->tw_count.tc_files++;
	if ((dfd = openat(ddir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1 || tree_xattrs(w, sfd, dfd) == -1) {
		if (w->tw_err[0] == '\0')
			(void)tree_fail(w, errno);
		(void)close(sfd);
		if (dfd != -1)
			(void)close(dfd);
		return (-1);
	}
	if (tree_dir(w, sfd, dfd, depth) == -1) {
		(void)close(dfd);
		return (-1);
	}
	ts[0] = sb.st_atim;
	ts[1] = sb.st_mtim;
	if (fchmod(dfd, sb.st_mode & 01777) == -1 ||
	    futimens(dfd, ts) == -1 || fstat(dfd, &db) == -1) {
		(void)close(dfd);
		return (tree_fail(w, errno));
	}
	w->tw_count.tc_disk += (uint64_t)db.st_blocks * 512;
	(void)close(dfd);
	return (0);
}

/*
 * A regular file: opened without following and without blocking (a
 * fifo swapped in would), judged by its descriptor.  A file the uid
 * cannot read fails the copy: a snapshot must not lose files silently.
 */
static int
tree_file(struct tree_walk *w, int sdir, int ddir, const char *name)
{
	struct timespec	 ts[2];
	struct stat	 sb, db;
	int		 sfd, dfd = -1, e;

	if ((sfd = openat(sdir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_NOCTTY | O_CLOEXEC)) == -1) {
		if (errno == ELOOP || errno == ENXIO)
			return (TREE_AGAIN);
		return (errno == ENOENT ? 0 : tree_fail(w, errno));
	}
	if (fstat(sfd, &sb) == -1) {
		(void)close(sfd);
		return (tree_fail(w, errno));
	}
	if (!S_ISREG(sb.st_mode)) {
		(void)close(sfd);
		return (TREE_AGAIN);
	}
	if (ddir != -1 && (dfd = openat(ddir, name, O_WRONLY | O_CREAT |
	    O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)) == -1) {
		e = errno;
		(void)close(sfd);
		/* A name a changing directory gave twice: copied once. */
		return (e == EEXIST ? 0 : tree_fail(w, e));
	}
	if (tree_bytes(w, (uint64_t)sb.st_size) == -1)
		goto fail;
	if (sb.st_nlink > 1)
		w->tw_skipped[TREE_SKIP_LINKED]++;
	w->tw_count.tc_files++;
	if (ddir == -1) {
		w->tw_count.tc_disk += (uint64_t)sb.st_blocks * 512;
		(void)close(sfd);
		return (0);
	}
	if (tree_data(w, sfd, dfd, &sb) == -1 || tree_xattrs(w, sfd, dfd) ==
	    -1)
		goto fail;
	ts[0] = sb.st_atim;
	ts[1] = sb.st_mtim;
	if (fchmod(dfd, sb.st_mode & 01777) == -1 || futimens(dfd, ts) ==
	    -1 || fstat(dfd, &db) == -1) {
		(void)tree_fail(w, errno);
		goto fail;
	}
	w->tw_count.tc_disk += (uint64_t)db.st_blocks * 512;
	/* A clone takes the file as it is now: it may have grown. */
	if (db.st_size > sb.st_size &&
	    tree_bytes(w, (uint64_t)(db.st_size - sb.st_size)) == -1)
		goto fail;
	(void)close(sfd);
	(void)close(dfd);
	return (0);
 fail:
	(void)close(sfd);
	if (dfd != -1)
		(void)close(dfd);
	return (-1);
}

/*
 * The bytes: a clone where the filesystem shares extents (btrfs, xfs
 * with reflink), else each data segment between holes, so a sparse file
 * stays sparse, by copy_file_range or read and write.
 */
static int
tree_data(struct tree_walk *w, int sfd, int dfd, const struct stat *sb)
{
	struct stat	 db;
	off_t		 pos = 0, end = sb->st_size, data, hole, got;

	if (w->tw_clone) {
		if (ioctl(dfd, FICLONE, sfd) == 0) {
			if (fstat(dfd, &db) == -1)
				return (tree_fail(w, errno));
			w->tw_count.tc_shared += (uint64_t)db.st_blocks * 512;
			return (0);
		}
		if (errno == EOPNOTSUPP || errno == EXDEV || errno == ENOTTY)
			w->tw_clone = 0;	/* not between these two */
		else if (errno != EINVAL)	/* this file cannot be */
			return (tree_fail(w, errno));
	}
	while (pos < end) {
		if ((data = lseek(sfd, pos, SEEK_DATA)) == -1) {
			if (errno == ENXIO)
				break;		/* a hole to the end */
			return (tree_fail(w, errno));
		}
		if (data >= end)
			break;
		if ((hole = lseek(sfd, data, SEEK_HOLE)) == -1)
			return (tree_fail(w, errno));
		if (hole > end)
			hole = end;
		if (tree_range(w, sfd, dfd, data, hole - data, &got) == -1)
			return (-1);
		if (got < hole - data) {
			end = data + got;	/* shrunk while copied */
			break;
		}
		pos = hole;
	}
	if (ftruncate(dfd, end) == -1)
		return (tree_fail(w, errno));
	return (0);
}

/* len bytes at off, at the same offset; *got short at the file's end. */
static int
tree_range(struct tree_walk *w, int sfd, int dfd, off_t off, off_t len,
    off_t *got)
{
	off_t		 in, out;
	ssize_t		 n, m, k;
	size_t		 chunk;

	*got = 0;
	while (*got < len) {
		tree_progress(w);
		chunk = (size_t)(len - *got > TREE_CHUNK ? TREE_CHUNK :
		    len - *got);
		in = out = off + *got;
		if (w->tw_cfr) {
			n = copy_file_range(sfd, &in, dfd, &out, chunk, 0);
			if (n >= 0) {
				if (n == 0)
					return (0);
				*got += n;
				continue;
			}
			if (errno != EXDEV && errno != EOPNOTSUPP &&
			    errno != ENOSYS && errno != EINVAL)
				return (tree_fail(w, errno));
			w->tw_cfr = 0;
		}
		if (chunk > sizeof(w->tw_buf))
			chunk = sizeof(w->tw_buf);
		if ((n = pread(sfd, w->tw_buf, chunk, in)) == -1) {
			if (errno == EINTR)
				continue;
			return (tree_fail(w, errno));
		}
		if (n == 0)
			return (0);
		for (m = 0; m < n; m += k)
			if ((k = pwrite(dfd, w->tw_buf + m, (size_t)(n - m),
			    in + m)) == -1) {
				if (errno == EINTR) {
					k = 0;
					continue;
				}
				return (tree_fail(w, errno));
			}
		*got += n;
	}
	return (0);
}

/* The link's text as it is, never resolved. */
static int
tree_symlink(struct tree_walk *w, int sdir, int ddir, const char *name,
    const struct stat *sb)
{
	struct timespec	 ts[2];
	struct stat	 db;
	ssize_t		 n;

	if ((n = readlinkat(sdir, name, w->tw_link, sizeof(w->tw_link))) ==
	    -1) {
		if (errno == EINVAL)
			return (TREE_AGAIN);
		return (errno == ENOENT ? 0 : tree_fail(w, errno));
	}
	if ((size_t)n >= sizeof(w->tw_link))
		return (tree_fail(w, ENAMETOOLONG));
	w->tw_link[n] = '\0';
	if (ddir != -1 && symlinkat(w->tw_link, ddir, name) == -1)
		return (errno == EEXIST ? 0 : tree_fail(w, errno));
	if (tree_bytes(w, (uint64_t)n) == -1)
		return (-1);
	w->tw_count.tc_files++;
	if (ddir == -1) {
		w->tw_count.tc_disk += (uint64_t)sb->st_blocks * 512;
		return (0);
	}
	ts[0] = sb->st_atim;
	ts[1] = sb->st_mtim;
	if (utimensat(ddir, name, ts, AT_SYMLINK_NOFOLLOW) == -1 ||
	    fstatat(ddir, name, &db, AT_SYMLINK_NOFOLLOW) == -1)
		return (tree_fail(w, errno));
	w->tw_count.tc_disk += (uint64_t)db.st_blocks * 512;
	return (0);
}

/* A fifo is made, never opened; the umask is 0, its mode exact. */
static int
tree_fifo(struct tree_walk *w, int ddir, const char *name,
    const struct stat *sb)
{
	struct timespec	 ts[2];

	if (ddir == -1) {
		w->tw_count.tc_files++;
		return (0);
	}
	if (mkfifoat(ddir, name, sb->st_mode & 01777) == -1)
		return (errno == EEXIST ? 0 : tree_fail(w, errno));
	w->tw_count.tc_files++;
	ts[0] = sb->st_atim;
	ts[1] = sb->st_mtim;
	if (utimensat(ddir, name, ts, AT_SYMLINK_NOFOLLOW) == -1)
		return (tree_fail(w, errno));
	return (0);
}

/*
 * user.* attributes, at most TREE_XATTR_MAX of TREE_XATTR_SIZE bytes
 * each; the others (security.*, trusted.*, system.*) are not the uid's
 * to copy and are left.  A destination that holds none is counted.
 */
static int
tree_xattrs(struct tree_walk *w, int sfd, int dfd)
{
	ssize_t		 len, n;
	size_t		 off, nlen;
	const char	*name;
	int		 kept = 0;

	if ((len = flistxattr(sfd, w->tw_list, sizeof(w->tw_list))) == -1) {
		if (errno == EOPNOTSUPP)
			return (0);
		return (tree_fail(w, errno));
	}
	for (off = 0; off < (size_t)len; off += nlen + 1) {
		name = w->tw_list + off;
		if ((nlen = strnlen(name, (size_t)len - off)) ==
		    (size_t)len - off)
			break;			/* unterminated: the end */
		if (strncmp(name, "user.", 5) != 0)
			continue;
		if (kept == TREE_XATTR_MAX) {
			w->tw_skipped[TREE_SKIP_XATTR]++;
			continue;
		}
		if ((n = fgetxattr(sfd, name, w->tw_val,
		    sizeof(w->tw_val))) == -1) {
			if (errno == ENODATA)
				continue;	/* gone meanwhile */
			if (errno == ERANGE || errno == E2BIG) {
				w->tw_skipped[TREE_SKIP_XATTR]++;
				continue;
			}
			return (tree_fail(w, errno));
		}
		if (fsetxattr(dfd, name, w->tw_val, (size_t)n, 0) == -1) {
			if (errno != EOPNOTSUPP)
				return (tree_fail(w, errno));
			w->tw_skipped[TREE_SKIP_XATTR]++;
			continue;
		}
		kept++;
	}
	return (0);
}

/* Counted against the bound of bytes before anything is copied. */
static int
tree_bytes(struct tree_walk *w, uint64_t n)
{
	uint64_t	 max = w->tw_bounds.tb_bytes;

	if (max != 0 && (n > max || w->tw_count.tc_bytes > max - n)) {
		snprintf(w->tw_err, sizeof(w->tw_err), "home holds more than "
		    "%llu bytes", (unsigned long long)max);
		return (-1);
	}
	if (w->tw_count.tc_bytes > UINT64_MAX - n)
		w->tw_count.tc_bytes = UINT64_MAX;
	else
		w->tw_count.tc_bytes += n;
	return (0);
}

/*
 * Empty directory fd (consumed), depth first.  Reread until a pass
 * finds nothing, since removing names while reading may hide some; a
 * directory that keeps filling (a fence still running) fails.
 */
static int
tree_empty_dir(struct tree_walk *w, int fd, int depth)
{
	struct dirent	*de;
	DIR		*d;
	size_t		 old;
	int		 pass, found = 1, i, rc = 0;

	if ((d = fdopendir(fd)) == NULL) {
		(void)close(fd);
		return (tree_fail(w, errno));
	}
	for (pass = 0; found && rc == 0; pass++) {
		if (pass == TREE_EMPTY_PASSES) {
			rc = tree_failx(w, "keeps filling while emptied");
			break;
		}
		rewinddir(d);
		found = 0;
		for (;;) {
			errno = 0;
			if ((de = readdir(d)) == NULL) {
				if (errno != 0)
					rc = tree_fail(w, errno);
				break;
			}
			if (strcmp(de->d_name, ".") == 0 ||
			    strcmp(de->d_name, "..") == 0)
				continue;
			found = 1;
			tree_progress(w);
			old = tree_push(w, de->d_name);
			for (i = 0, rc = TREE_AGAIN; i < TREE_RETRIES &&
			    rc == TREE_AGAIN; i++) {
				if (unlinkat(dirfd(d), de->d_name, 0) == 0 ||
				    errno == ENOENT)
					rc = 0;
				else if (errno == EISDIR)
					rc = tree_empty_sub(w, dirfd(d),
					    de->d_name, depth + 1);
				else
					rc = tree_fail(w, errno);
			}
			if (rc == TREE_AGAIN)
				rc = tree_failx(w, "changed while emptied");
			if (rc == -1)
				break;
			w->tw_pathlen = old;
			w->tw_path[old] = '\0';
		}
	}
	(void)closedir(d);
	return (rc);
}

/* A directory below: emptied (its own made writable), then removed. */
static int
tree_empty_sub(struct tree_walk *w, int pfd, const char *name, int depth)
{
	struct stat	 sb;
	uint64_t	 mnt;
	int		 fd, o;

	if (depth > TREE_DEPTH_MAX) {
		snprintf(w->tw_err, sizeof(w->tw_err), "tree deeper than %d "
		    "levels", TREE_DEPTH_MAX);
		return (-1);
	}
	if ((o = openat(pfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1) {
		if (errno == ENOTDIR || errno == ELOOP)
			return (TREE_AGAIN);
		return (errno == ENOENT ? 0 : tree_fail(w, errno));
	}
	if (fstat(o, &sb) == -1 || tree_mount(o, &mnt) == -1) {
		(void)close(o);
		return (tree_fail(w, errno));
	}
	if (mnt != w->tw_mnt) {
		/* Never empty another filesystem mounted in the home. */
		(void)close(o);
		return (tree_failx(w, "a mount point"));
	}
	if (sb.st_uid == w->tw_uid && (sb.st_mode & 0700) != 0700 &&
	    tree_unlock(w, o, sb.st_mode | 0700) == -1) {
		(void)close(o);
		return (-1);
	}
	/* Reopened through the one just judged, not by its name again. */
	fd = openat(o, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	(void)close(o);
	if (fd == -1)
		return (tree_fail(w, errno));
	if (tree_empty_dir(w, fd, depth) == -1)
		return (-1);
	if (unlinkat(pfd, name, AT_REMOVEDIR) == -1 && errno != ENOENT)
		return (tree_fail(w, errno));
	return (0);
}

/*
 * chmod of the directory o (O_PATH or not), never through a name: by
 * fchmodat2 where the kernel has it (6.6), else by its /proc link.
 */
static int
tree_unlock(struct tree_walk *w, int o, mode_t mode)
{
	char	 proc[64];

	mode &= 07777;
	if (syscall(__NR_fchmodat2, o, "", mode, AT_EMPTY_PATH) == 0)
		return (0);
	if (errno != ENOSYS)
		return (tree_fail(w, errno));
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", o);
	if (chmod(proc, mode) == -1)
		return (tree_fail(w, errno));
	return (0);
}
