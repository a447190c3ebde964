/*
 * Snapshots of a fence's home, branches and undo (docs/snapshots.md).
 *
 * Everything lives in the daemon's state, root's and nobody else's:
 *
 *	<state>/snapshots/<owner>/<key>@<name>/		root's 0700
 *		info	what it holds (root's 0600, text)
 *		tree/	the files, the fence's uid's
 *	<state>/snapshots/<owner>/<key>@.undo/		an exec's undo mark
 *	<state>/branches/<owner>/<key>/			root's 0700
 *		base	"<key>@<name> <uid>": the snapshot it starts from
 *		upper/	what the branch changed (overlayfs), the uid's
 *		work/	overlayfs's own, root's
 *
 * Something being made is called .new.<name> and renamed into place
 * once whole; something being removed is renamed to .del.<name> first.
 * A fencer killed in the middle leaves only such names, which
 * fencer_snap_sweep() removes at the next start.
 *
 * Root never reads or writes a home, a snapshot's tree or an upper
 * layer by path: the files are copied and removed by tree_copy() and
 * tree_empty() (fencer_tree.c), in a child that is the fence's uid,
 * through descriptors.  Root only makes and renames the directories
 * above them, in folders no user can write.
 */
#include <sys/types.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <linux/mount.h>
#include <linux/openat2.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fenced.h"
#include "log.h"
#include "msg.h"
#include "proc.h"
#include "cg.h"
#include "fencer.h"
#include "fencer_snap.h"
#include "fencer_tree.h"

#define SNAP_UNDO_NAME	".undo"		/* the undo mark's name */
#define SNAP_INFO_MAX	1024		/* bytes of an info file */

static char	snap_root[PATH_MAX];	/* <state>/snapshots */
static char	branch_root[PATH_MAX];	/* <state>/branches */

static int
snap_errf(char *err, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int
snap_errf(char *err, size_t len, const char *fmt, ...)
{
	va_list		 ap;

	va_start(ap, fmt);
	(void)vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return (-1);
}

/* Made root's 0700 if missing; -1 if it is anything else. */
static int
snap_mkdir_root(const char *path)
{
	struct stat	 sb;

	if (mkdir(path, 0700) == -1 && errno != EEXIST)
		return (-1);
	if (lstat(path, &sb) == -1)
		return (-1);
	if (!S_ISDIR(sb.st_mode) || sb.st_uid != 0 ||
	    (sb.st_mode & 077) != 0) {
		errno = EPERM;
		return (-1);
	}
	return (0);
}

static int
snap_path(char *buf, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int
snap_path(char *buf, size_t len, const char *fmt, ...)
{
	va_list		 ap;
	int		 n;

	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= len) {
		errno = ENAMETOOLONG;
		return (-1);
	}
	return (0);
}

/* <root>/<owner>, made if asked. */
static int
snap_owner_dir(const char *root, uid_t owner, int create, char *buf,
    size_t len)
{
	if (snap_path(buf, len, "%s/%u", root, (unsigned)owner) == -1)
		return (-1);
	if (create && snap_mkdir_root(buf) == -1)
		return (-1);
	return (0);
}

/*
 * Remove directory <parent>/<name> and everything in it: rename it to
 * .del.<name> (so a crash leaves a name the sweep knows), empty its tree
 * (and upper) as uid, then remove what root made.
 */
static int
snap_remove(const char *parent, const char *name, uid_t uid, gid_t gid,
    char *err, size_t errlen)
{
	char		 from[PATH_MAX], to[PATH_MAX], p[PATH_MAX], q[PATH_MAX];
	static const char *const sub[] = { "tree", "upper", "work" };
	static const char *const files[] = { "info", "base" };
	size_t		 i;
	int		 fd;

	/* .new.X and .del.X are removed as .del.X. */
	if (snap_path(from, sizeof(from), "%s/%s", parent, name) == -1 ||
	    snap_path(to, sizeof(to), "%s/.del.%s", parent,
	    strncmp(name, ".del.", 5) == 0 || strncmp(name, ".new.", 5) == 0 ?
	    name + 5 : name) == -1)
		return (snap_errf(err, errlen, "%s: name too long", name));
	if (strcmp(from, to) != 0 && rename(from, to) == -1)
		return (snap_errf(err, errlen, "rename %s: %s", from,
		    strerror(errno)));
	for (i = 0; i < sizeof(sub) / sizeof(sub[0]); i++) {
		if (snap_path(p, sizeof(p), "%s/%s", to, sub[i]) == -1)
			return (snap_errf(err, errlen, "%s: too long", to));
		if (strcmp(sub[i], "work") == 0) {
			/*
			 * overlayfs's own, root's: empty folders of its
			 * between mounts.  Anything else stays, said.
			 */
			if (snap_path(q, sizeof(q), "%s/work", p) == 0)
				(void)rmdir(q);
			if (snap_path(q, sizeof(q), "%s/index", p) == 0)
				(void)rmdir(q);
			if (rmdir(p) == -1 && errno != ENOENT)
				return (snap_errf(err, errlen, "rmdir %s: %s",
				    p, strerror(errno)));
			continue;
		}
		/*
		 * Root's only between its mkdir and its chown to the
		 * uid: empty then.  Nothing is ever removed as root.
		 */
		if (uid == 0) {
			if (rmdir(p) == -1 && errno != ENOENT)
				return (snap_errf(err, errlen, "rmdir %s: %s",
				    p, strerror(errno)));
			continue;
		}
		if ((fd = open(p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
		    O_CLOEXEC)) == -1) {
			if (errno == ENOENT)
				continue;
			return (snap_errf(err, errlen, "open %s: %s", p,
			    strerror(errno)));
		}
		if (tree_empty(fd, uid, gid, err, errlen) == -1) {
			(void)close(fd);
			return (-1);
		}
		(void)close(fd);
		if (rmdir(p) == -1)
			return (snap_errf(err, errlen, "rmdir %s: %s", p,
			    strerror(errno)));
	}
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		if (snap_path(p, sizeof(p), "%s/%s", to, files[i]) == -1)
			return (snap_errf(err, errlen, "%s: too long", to));
		if (unlink(p) == -1 && errno != ENOENT)
			return (snap_errf(err, errlen, "unlink %s: %s", p,
			    strerror(errno)));
		if (snap_path(p, sizeof(p), "%s/%s.new", to, files[i]) == -1)
			return (snap_errf(err, errlen, "%s: too long", to));
		(void)unlink(p);
	}
	if (rmdir(to) == -1)
		return (snap_errf(err, errlen, "rmdir %s: %s", to,
		    strerror(errno)));
	return (0);
}

/* What an info file says; -1 if it is not one of ours. */
struct snap_info {
	uid_t		 i_uid;
	gid_t		 i_gid;
	int64_t		 i_created;
	uint64_t	 i_bytes, i_files, i_disk, i_shared;
	uint32_t	 i_us;
	int		 i_frozen;
	char		 i_how[SNAP_HOW_SIZE];
};

static int
snap_info_read(const char *dir, struct snap_info *in)
{
	char		 path[PATH_MAX], buf[SNAP_INFO_MAX + 1];
	unsigned long long v[9];
	ssize_t		 n;
	int		 fd;

	memset(in, 0, sizeof(*in));
	if (snap_path(path, sizeof(path), "%s/info", dir) == -1 ||
	    (fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) == -1)
		return (-1);
	n = read(fd, buf, SNAP_INFO_MAX);
	(void)close(fd);
	if (n <= 0)
		return (-1);
	buf[n] = '\0';
	if (sscanf(buf, "uid %llu gid %llu created %llu bytes %llu files %llu "
	    "disk %llu shared %llu us %llu frozen %llu how %15s", &v[0], &v[1],
	    &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], in->i_how) != 10)
		return (-1);
	if (v[0] >= UINT32_MAX || v[1] >= UINT32_MAX || v[2] > INT64_MAX ||
	    v[7] > UINT32_MAX || v[8] > 1)
		return (-1);
	in->i_uid = (uid_t)v[0];
	in->i_gid = (gid_t)v[1];
	in->i_created = (int64_t)v[2];
	in->i_bytes = v[3];
	in->i_files = v[4];
	in->i_disk = v[5];
	in->i_shared = v[6];
	in->i_us = (uint32_t)v[7];
	in->i_frozen = (int)v[8];
	return (0);
}

static int
snap_info_write(const char *dir, const struct snap_info *in)
{
	char		 path[PATH_MAX], tmp[PATH_MAX], buf[SNAP_INFO_MAX];
	int		 fd, n;

	n = snprintf(buf, sizeof(buf), "uid %u gid %u created %" PRId64
	    " bytes %" PRIu64 " files %" PRIu64 " disk %" PRIu64 " shared %"
	    PRIu64 " us %u frozen %d how %s\n", (unsigned)in->i_uid,
	    (unsigned)in->i_gid, in->i_created, in->i_bytes, in->i_files,
	    in->i_disk, in->i_shared, in->i_us, in->i_frozen, in->i_how);
	if (n < 0 || (size_t)n >= sizeof(buf) ||
	    snap_path(path, sizeof(path), "%s/info", dir) == -1 ||
	    snap_path(tmp, sizeof(tmp), "%s/info.new", dir) == -1)
		return (-1);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW |
	    O_CLOEXEC, 0600)) == -1)
		return (-1);
	if (write(fd, buf, (size_t)n) != n || fsync(fd) == -1) {
		(void)close(fd);
		return (-1);
	}
	(void)close(fd);
	return (rename(tmp, path));
}

/* A directory entry of a snapshot: "<key>@<name>", both valid. */
static int
snap_entry_split(const char *ent, char *key, char *name)
{
	const char	*at;
	size_t		 klen;

	if ((at = strchr(ent, '@')) == NULL)
		return (-1);
	klen = (size_t)(at - ent);
	if (klen == 0 || klen >= FENCE_KEY_SIZE)
		return (-1);
	memcpy(key, ent, klen);
	key[klen] = '\0';
	if (strlcpy(name, at + 1, FENCE_KEY_SIZE) >= FENCE_KEY_SIZE)
		return (-1);
	if (!fence_key_valid(key) ||
	    (strcmp(name, SNAP_UNDO_NAME) != 0 && !fence_key_valid(name)))
		return (-1);
	return (0);
}

/* The branches of owner whose base is <key>@<name>: counted, named. */
static uint32_t
snap_branches(uid_t owner, const char *key, const char *name, char *names,
    size_t len)
{
	char		 dir[PATH_MAX], path[PATH_MAX], want[2 * FENCE_KEY_SIZE];
	char		 buf[2 * FENCE_KEY_SIZE + 32];
	struct dirent	*de;
	DIR		*d;
	uint32_t	 n = 0;
	ssize_t		 r;
	int		 fd;

	if (names != NULL && len > 0)
		names[0] = '\0';
	if (snap_owner_dir(branch_root, owner, 0, dir, sizeof(dir)) == -1 ||
	    (d = opendir(dir)) == NULL)
		return (0);
	(void)snprintf(want, sizeof(want), "%s@%s ", key, name);
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' ||
		    snap_path(path, sizeof(path), "%s/%s/base", dir,
		    de->d_name) == -1 ||
		    (fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) == -1)
			continue;
		r = read(fd, buf, sizeof(buf) - 1);
		(void)close(fd);
		if (r <= 0)
			continue;
		buf[r] = '\0';
		if (strncmp(buf, want, strlen(want)) != 0)
			continue;
		if (names != NULL && n < 8) {
			if (n > 0)
				(void)strlcat(names, ", ", len);
			(void)strlcat(names, de->d_name, len);
		}
		n++;
	}
	(void)closedir(d);
	return (n);
}

/* Counts of owner's snapshots, and of those of key (NULL: none). */
struct snap_totals {
	uint32_t	 t_count, t_key_count;
	uint64_t	 t_bytes, t_key_bytes;
};

static void
snap_totals(uid_t owner, const char *key, struct snap_totals *t)
{
	char		 dir[PATH_MAX], path[PATH_MAX];
	char		 k[FENCE_KEY_SIZE], nm[FENCE_KEY_SIZE];
	struct snap_info in;
	struct dirent	*de;
	DIR		*d;

	memset(t, 0, sizeof(*t));
	if (snap_owner_dir(snap_root, owner, 0, dir, sizeof(dir)) == -1 ||
	    (d = opendir(dir)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' ||
		    snap_entry_split(de->d_name, k, nm) == -1 ||
		    snap_path(path, sizeof(path), "%s/%s", dir,
		    de->d_name) == -1 || snap_info_read(path, &in) == -1)
			continue;
		/* The undo mark counts bytes, not a snapshot. */
		if (strcmp(nm, SNAP_UNDO_NAME) != 0)
			t->t_count++;
		t->t_bytes += in.i_bytes;
		if (key != NULL && strcmp(k, key) == 0) {
			if (strcmp(nm, SNAP_UNDO_NAME) != 0)
				t->t_key_count++;
			t->t_key_bytes += in.i_bytes;
		}
	}
	(void)closedir(d);
}

/* The answer for one snapshot. */
static void
snap_send_info(uint32_t reqid, uid_t owner, const char *key,
    const char *name, const struct snap_info *in)
{
	struct msg_snap_info si;
	void		*buf;
	size_t		 len;

	memset(&si, 0, sizeof(si));
	strlcpy(si.sn_key, key, sizeof(si.sn_key));
	if (strcmp(name, SNAP_UNDO_NAME) != 0)
		strlcpy(si.sn_name, name, sizeof(si.sn_name));
	si.sn_owner = owner;
	si.sn_uid = in->i_uid;
	si.sn_created = in->i_created;
	si.sn_bytes = in->i_bytes;
	si.sn_files = in->i_files;
	si.sn_disk = in->i_disk;
	si.sn_shared = in->i_shared;
	si.sn_us = in->i_us;
	si.sn_frozen = in->i_frozen;
	strlcpy(si.sn_how, in->i_how, sizeof(si.sn_how));
	si.sn_branches = snap_branches(owner, key, name, NULL, 0);
	if (msg_snap_info_encode(&si, &buf, &len) == -1)
		fatal("%s: encode", __func__);
	if (proc_compose(&fencer_self, PROC_BROKER, IMSG_FENCE_SNAP_INFO, reqid,
	    -1, buf, len) == -1)
		log_warn("%s: to broker", __func__);
	free(buf);
}

/*
 * A descriptor of f's home as the fence sees it: the overlay of a branch
 * (held since its boot), else its directory, opened without following
 * a symlink and checked to be the uid's.
 */
static int
snap_home_fd(struct fence *f, char *err, size_t errlen)
{
	struct open_how	 how;
	struct stat	 sb;
	int		 fd;

	if (f->f_home_tree != -1) {
		if ((fd = fcntl(f->f_home_tree, F_DUPFD_CLOEXEC, 0)) == -1)
			return (snap_errf(err, errlen, "dup home: %s",
			    strerror(errno)));
		return (fd);
	}
	if (fencer_self.ps_conf.c_home_limit != 0)
		return (snap_errf(err, errlen, "snapshots are not taken of "
		    "`limit home' images (docs/snapshots.md)"));
	memset(&how, 0, sizeof(how));
	how.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC;
	how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
	if ((fd = syscall(SYS_openat2, AT_FDCWD, f->f_info.f_home, &how,
	    sizeof(how))) == -1)
		return (snap_errf(err, errlen, "open home %s: %s",
		    f->f_info.f_home, strerror(errno)));
	if (fstat(fd, &sb) == -1 || sb.st_uid != f->f_info.f_uid) {
		(void)close(fd);
		return (snap_errf(err, errlen, "home %s is not uid %u's",
		    f->f_info.f_home, (unsigned)f->f_info.f_uid));
	}
	return (fd);
}

/*
 * Pause every process of f while its home is read or written, so that
 * a snapshot is one moment of it (common/cg_pause.c).  1 if paused.
 */
static int
snap_pause(struct fence *f, struct cg_pause *p)
{
	const char	*parent;
	char		 dir[PATH_MAX];

	memset(p, 0, sizeof(*p));
	if ((parent = fencer_cg_parent(CG_PIDS)) == NULL ||
	    snap_path(dir, sizeof(dir), "%s/%s", parent, f->f_cgname) == -1)
		return (0);
	return (cg_pause(dir, p));
}

static int64_t
snap_elapsed_us(const struct timespec *t0)
{
	struct timespec	 t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return ((int64_t)(t1.tv_sec - t0->tv_sec) * 1000000 +
	    (t1.tv_nsec - t0->tv_nsec) / 1000);
}

/*
 * Take f's home into <owner dir>/<key>@<name> (replace: an undo mark,
 * put in place of the last one).  The bounds: what is left of the
 * fence's and the owner's bytes.
 */
static int
snap_take(struct fence *f, const char *name, int replace,
    struct snap_info *in, char *code, size_t codelen, char *err,
    size_t errlen)
{
	const struct fenced_config *c = &fencer_self.ps_conf;
	struct snap_totals t;
	struct tree_bounds b;
	struct tree_count cnt;
	struct cg_pause pause;
	struct timespec	 t0;
	char		 dir[PATH_MAX], newdir[PATH_MAX], final[PATH_MAX];
	char		 tree[PATH_MAX], why[BACKEND_ERR_MAX];
	uint64_t	 left, uleft;
	int		 home = -1, tfd = -1, paused, rv;
	struct stat	 sb;

	strlcpy(code, "snapshot-failed", codelen);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (snap_owner_dir(snap_root, f->f_info.f_owner, 1, dir,
	    sizeof(dir)) == -1)
		return (snap_errf(err, errlen, "snapshots of uid %u: %s",
		    (unsigned)f->f_info.f_owner, strerror(errno)));
	if (snap_path(final, sizeof(final), "%s/%s@%s", dir, f->f_info.f_key,
	    name) == -1 || snap_path(newdir, sizeof(newdir), "%s/.new.%s@%s",
	    dir, f->f_info.f_key, name) == -1 ||
	    snap_path(tree, sizeof(tree), "%s/tree", newdir) == -1)
		return (snap_errf(err, errlen, "name too long"));
	if (!replace && lstat(final, &sb) == 0) {
		strlcpy(code, "snapshot-exists", codelen);
		return (snap_errf(err, errlen, "%s has a snapshot %s already",
		    f->f_info.f_key, name));
	}
	snap_totals(f->f_info.f_owner, f->f_info.f_key, &t);
	if (!replace && t.t_key_count >= c->c_snap_count) {
		strlcpy(code, "snapshot-limit", codelen);
		return (snap_errf(err, errlen, "%s has %u snapshots, the most "
		    "a fence may keep (limit snapshots %u)", f->f_info.f_key,
		    t.t_key_count, c->c_snap_count));
	}
	if (!replace && t.t_count >= c->c_user_snap_count) {
		strlcpy(code, "snapshot-limit", codelen);
		return (snap_errf(err, errlen, "uid %u has %u snapshots, the "
		    "most an owner may keep (user limit snapshots %u)",
		    (unsigned)f->f_info.f_owner, t.t_count,
		    c->c_user_snap_count));
	}
	left = t.t_key_bytes < c->c_snap_bytes ?
	    c->c_snap_bytes - t.t_key_bytes : 0;
	uleft = t.t_bytes < c->c_user_snap_bytes ?
	    c->c_user_snap_bytes - t.t_bytes : 0;
	if (uleft < left)
		left = uleft;
	if (left == 0) {
		strlcpy(code, "snapshot-limit", codelen);
		return (snap_errf(err, errlen, "the snapshots of %s hold %"
		    PRIu64 " bytes, of uid %u %" PRIu64 ": no room left "
		    "(limit snapshots size %" PRIu64 ", user limit snapshots "
		    "size %" PRIu64 ")", f->f_info.f_key, t.t_key_bytes,
		    (unsigned)f->f_info.f_owner, t.t_bytes, c->c_snap_bytes,
		    c->c_user_snap_bytes));
	}
	/* A leftover of a fencer killed here is the sweep's; go on. */
	(void)snap_remove(dir, newdir + strlen(dir) + 1, f->f_info.f_uid,
	    f->f_gid, why, sizeof(why));
	if (mkdir(newdir, 0700) == -1 || mkdir(tree, 0700) == -1 ||
	    chown(tree, f->f_info.f_uid, f->f_gid) == -1) {
		snap_errf(err, errlen, "make %s: %s", newdir, strerror(errno));
		goto fail;
	}
	if ((tfd = open(tree, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1 || (home = snap_home_fd(f, err, errlen)) == -1) {
		if (tfd == -1)
			snap_errf(err, errlen, "open %s: %s", tree,
			    strerror(errno));
		goto fail;
	}
	memset(&b, 0, sizeof(b));
	b.tb_bytes = left;
	paused = snap_pause(f, &pause);
	rv = tree_copy(home, tfd, f->f_info.f_uid, f->f_gid, &b, &cnt, why,
	    sizeof(why));
	cg_resume(&pause);
	if (rv == -1) {
		if (cnt.tc_bytes > left || strstr(why, "more than") != NULL) {
			strlcpy(code, "snapshot-limit", codelen);
			snap_errf(err, errlen, "the home of %s holds more than "
			    "the %" PRIu64 " bytes its snapshots may still "
			    "take (limit snapshots size, user limit "
			    "snapshots size): %s", f->f_info.f_key, left, why);
		} else
			snap_errf(err, errlen, "copy the home of %s: %s",
			    f->f_info.f_key, why);
		goto fail;
	}
	memset(in, 0, sizeof(*in));
	in->i_uid = f->f_info.f_uid;
	in->i_gid = f->f_gid;
	in->i_created = time(NULL);
	in->i_bytes = cnt.tc_bytes;
	in->i_files = cnt.tc_files;
	in->i_disk = cnt.tc_disk;
	in->i_shared = cnt.tc_shared;
	in->i_frozen = paused;
	strlcpy(in->i_how, cnt.tc_shared > 0 ? "reflink" : "copy",
	    sizeof(in->i_how));
	in->i_us = (uint32_t)snap_elapsed_us(&t0);
	if (snap_info_write(newdir, in) == -1) {
		snap_errf(err, errlen, "write %s/info: %s", newdir,
		    strerror(errno));
		goto fail;
	}
	if (replace && lstat(final, &sb) == 0 &&
	    snap_remove(dir, final + strlen(dir) + 1, f->f_info.f_uid,
	    f->f_gid, err, errlen) == -1)
		goto fail;
	if (rename(newdir, final) == -1) {
		snap_errf(err, errlen, "rename %s: %s", newdir,
		    strerror(errno));
		goto fail;
	}
	(void)close(home);
	(void)close(tfd);
	return (0);
 fail:
	if (home != -1)
		(void)close(home);
	if (tfd != -1)
		(void)close(tfd);
	if (snap_remove(dir, newdir + strlen(dir) + 1, f->f_info.f_uid,
	    f->f_gid, why, sizeof(why)) == -1 && errno != ENOENT)
		log_warnx("snapshot %s@%s: %s", f->f_info.f_key, name, why);
	return (-1);
}

/* Put f's home back to <key>@<name>: emptied, then the tree copied in. */
static int
snap_put_back(struct fence *f, const char *name, struct snap_info *in,
    char *code, size_t codelen, char *err, size_t errlen)
{
	struct cg_pause pause;
	struct tree_bounds b;
	struct tree_count cnt;
	struct timespec	 t0;
	char		 dir[PATH_MAX], path[PATH_MAX], why[BACKEND_ERR_MAX];
	int		 home = -1, tfd = -1, rv;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	strlcpy(code, "snapshot-not-found", codelen);
	if (snap_owner_dir(snap_root, f->f_info.f_owner, 0, dir,
	    sizeof(dir)) == -1 ||
	    snap_path(path, sizeof(path), "%s/%s@%s", dir, f->f_info.f_key,
	    name) == -1 || snap_info_read(path, in) == -1)
		return (snap_errf(err, errlen, "%s has no %s",
		    f->f_info.f_key, strcmp(name, SNAP_UNDO_NAME) == 0 ?
		    "command to undo" : "such snapshot"));
	strlcpy(code, "snapshot-failed", codelen);
	if (in->i_uid != f->f_info.f_uid)
		return (snap_errf(err, errlen, "snapshot %s of %s holds files "
		    "of uid %u, the fence runs as %u", name, f->f_info.f_key,
		    (unsigned)in->i_uid, (unsigned)f->f_info.f_uid));
	if (snap_path(path, sizeof(path), "%s/%s@%s/tree", dir,
	    f->f_info.f_key, name) == -1 ||
	    (tfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1)
		return (snap_errf(err, errlen, "open %s: %s", path,
		    strerror(errno)));
	if ((home = snap_home_fd(f, err, errlen)) == -1) {
		(void)close(tfd);
		return (-1);
	}
	memset(&b, 0, sizeof(b));
	(void)snap_pause(f, &pause);
	if ((rv = tree_empty(home, f->f_info.f_uid, f->f_gid, why,
	    sizeof(why))) == 0)
		rv = tree_copy(tfd, home, f->f_info.f_uid, f->f_gid, &b, &cnt,
		    why, sizeof(why));
	cg_resume(&pause);
	(void)close(home);
	(void)close(tfd);
	if (rv == -1)
		return (snap_errf(err, errlen, "put back the home of %s: %s",
		    f->f_info.f_key, why));
	in->i_us = (uint32_t)snap_elapsed_us(&t0);
	return (0);
}

/* The running fence a request names, if the asker may touch it. */
static struct fence *
snap_fence(const struct msg_snap *q)
{
	struct fence	*f;
	uid_t		 owner;

	owner = q->s_owner == MSG_OWNER_NONE ? q->s_uid : q->s_owner;
	if ((f = fencer_find(owner, q->s_key)) == NULL ||
	    (!q->s_admin && f->f_info.f_owner != q->s_uid) ||
	    f->f_info.f_state != FENCE_RUNNING)
		return (NULL);
	return (f);
}

static void
snap_list(uint32_t reqid, uid_t owner, const char *key)
{
	char		 dir[PATH_MAX], path[PATH_MAX];
	char		 k[FENCE_KEY_SIZE], nm[FENCE_KEY_SIZE];
	struct snap_info in;
	struct dirent	*de;
	DIR		*d;

	if (snap_owner_dir(snap_root, owner, 0, dir, sizeof(dir)) == 0 &&
	    (d = opendir(dir)) != NULL) {
		while ((de = readdir(d)) != NULL) {
			if (de->d_name[0] == '.' ||
			    snap_entry_split(de->d_name, k, nm) == -1 ||
			    strcmp(nm, SNAP_UNDO_NAME) == 0 ||
			    (key[0] != '\0' && strcmp(k, key) != 0) ||
			    snap_path(path, sizeof(path), "%s/%s", dir,
			    de->d_name) == -1 ||
			    snap_info_read(path, &in) == -1)
				continue;
			snap_send_info(reqid, owner, k, nm, &in);
		}
		(void)closedir(d);
	}
	if (proc_compose(&fencer_self, PROC_BROKER, IMSG_FENCE_END, reqid, -1,
	    NULL, 0) == -1)
		log_warn("%s: to broker", __func__);
}

static void
snap_delete(uint32_t reqid, uid_t owner, const char *key, const char *name)
{
	char		 dir[PATH_MAX], path[PATH_MAX], ent[2 * FENCE_KEY_SIZE];
	char		 names[256], err[BACKEND_ERR_MAX];
	struct snap_info in;
	uint32_t	 n;

	if (snap_owner_dir(snap_root, owner, 0, dir, sizeof(dir)) == -1 ||
	    snap_path(ent, sizeof(ent), "%s@%s", key, name) == -1 ||
	    snap_path(path, sizeof(path), "%s/%s", dir, ent) == -1 ||
	    snap_info_read(path, &in) == -1) {
		fencer_send_error(IMSG_FENCE_FAILED, reqid,
		    "snapshot-not-found", "%s has no snapshot %s", key, name);
		return;
	}
	if ((n = snap_branches(owner, key, name, names, sizeof(names))) > 0) {
		fencer_send_error(IMSG_FENCE_FAILED, reqid, "snapshot-in-use",
		    "snapshot %s of %s is the base of %u branch%s (%s): their "
		    "homes are built on it", name, key, n, n == 1 ? "" : "es",
		    names);
		return;
	}
	if (snap_remove(dir, ent, in.i_uid, in.i_gid, err, sizeof(err)) == -1) {
		log_warnx("delete snapshot %s of uid %u: %s", ent,
		    (unsigned)owner, err);
		fencer_send_error(IMSG_FENCE_FAILED, reqid, "snapshot-failed",
		    "cannot delete snapshot %s of %s", name, key);
		return;
	}
	snap_send_info(reqid, owner, key, name, &in);
}

/* A name for a snapshot asked without one: the time, made unique. */
static void
snap_autoname(uid_t owner, const char *key, char *name, size_t len)
{
	char		 dir[PATH_MAX], path[PATH_MAX];
	struct stat	 sb;
	struct tm	 tm;
	time_t		 now = time(NULL);
	int		 i;

	(void)gmtime_r(&now, &tm);
	(void)strftime(name, len, "s%Y%m%d-%H%M%S", &tm);
	if (snap_owner_dir(snap_root, owner, 0, dir, sizeof(dir)) == -1)
		return;
	for (i = 1; i < 1000; i++) {
		if (snap_path(path, sizeof(path), "%s/%s@%s", dir, key,
		    name) == -1 || lstat(path, &sb) == -1)
			return;
		(void)strftime(name, len, "s%Y%m%d-%H%M%S", &tm);
		(void)snprintf(name + strlen(name), len - strlen(name), "-%d",
		    i);
	}
}

void
fencer_snap_req(uint32_t reqid, const struct msg_snap *q)
{
	struct snap_info in;
	struct fence	*f = NULL;
	char		 code[MSG_ERROR_CODE_MAX], err[MSG_ERROR_TEXT_MAX];
	char		 name[FENCE_KEY_SIZE];
	uid_t		 owner;
	int		 rv = 0;

	owner = q->s_owner == MSG_OWNER_NONE ? q->s_uid : q->s_owner;
	if (!q->s_admin && owner != q->s_uid) {
		fencer_send_error(IMSG_FENCE_FAILED, reqid, "not-found",
		    "no fence %s", q->s_key);
		return;
	}
	if (snap_root[0] == '\0') {
		fencer_send_error(IMSG_FENCE_FAILED, reqid,
		    "snapshot-unavailable", "no snapshot store: %s",
		    "see the fencer's log");
		return;
	}
	switch (q->s_op) {
	case SNAP_LIST:
		snap_list(reqid, owner, q->s_key);
		return;
	case SNAP_DELETE:
		snap_delete(reqid, owner, q->s_key, q->s_name);
		return;
	}
	if ((f = snap_fence(q)) == NULL) {
		fencer_send_error(IMSG_FENCE_FAILED, reqid, "not-found",
		    "no fence %s running", q->s_key);
		return;
	}
	err[0] = '\0';
	switch (q->s_op) {
	case SNAP_CREATE:
		if (q->s_name[0] == '\0')
			snap_autoname(owner, q->s_key, name, sizeof(name));
		else
			strlcpy(name, q->s_name, sizeof(name));
		rv = snap_take(f, name, 0, &in, code, sizeof(code), err,
		    sizeof(err));
		break;
	case SNAP_UNDO_MARK:
		strlcpy(name, SNAP_UNDO_NAME, sizeof(name));
		rv = snap_take(f, name, 1, &in, code, sizeof(code), err,
		    sizeof(err));
		break;
	case SNAP_RESTORE:
		strlcpy(name, q->s_name, sizeof(name));
		rv = snap_put_back(f, name, &in, code, sizeof(code), err,
		    sizeof(err));
		break;
	case SNAP_UNDO:
		strlcpy(name, SNAP_UNDO_NAME, sizeof(name));
		if ((rv = snap_put_back(f, name, &in, code, sizeof(code), err,
		    sizeof(err))) == 0) {
			char	 dir[PATH_MAX], ent[2 * FENCE_KEY_SIZE];
			char	 why[BACKEND_ERR_MAX];

			/* Undone once: the mark goes. */
			if (snap_owner_dir(snap_root, owner, 0, dir,
			    sizeof(dir)) == 0 && snap_path(ent, sizeof(ent),
			    "%s@%s", f->f_info.f_key, SNAP_UNDO_NAME) == 0 &&
			    snap_remove(dir, ent, f->f_info.f_uid, f->f_gid,
			    why, sizeof(why)) == -1)
				log_warnx("undo mark of %s: %s",
				    f->f_info.f_key, why);
		}
		break;
	default:
		fatalx("%s: op %d", __func__, q->s_op);
	}
	if (rv == -1) {
		log_warnx("fence %s of uid %u: %s", f->f_info.f_key,
		    (unsigned)owner, err);
		fencer_send_error(IMSG_FENCE_FAILED, reqid, code, "%s", err);
		return;
	}
	log_info("fence %s of uid %u: %s %s: %" PRIu64 " bytes, %" PRIu64
	    " files, %u us%s", f->f_info.f_key, (unsigned)owner,
	    q->s_op == SNAP_CREATE ? "snapshot" : q->s_op == SNAP_RESTORE ?
	    "restored" : q->s_op == SNAP_UNDO ? "undone to" : "undo mark",
	    name, in.i_bytes, in.i_files, in.i_us,
	    in.i_frozen ? "" : " (not paused)");
	snap_send_info(reqid, owner, f->f_info.f_key, name, &in);
}

/*
 * Branches.  A branch's home is an overlay: the snapshot's tree as its
 * read-only lower layer, shared by every branch of it, and an upper
 * layer of its own in <state>/branches/<owner>/<key>.  Where the branch
 * runs as another uid than the snapshot's files (a root-owned fence's
 * key has a uid of its own), the lower layer is an idmapped mount that
 * shows the snapshot's uid as the branch's.
 */

/* /proc/<pid>/<file>: "from to 1", one id mapped. */
static int
snap_write_map(pid_t pid, const char *file, unsigned int from,
    unsigned int to, char *err, size_t errlen)
{
	char		 path[64], map[64];
	int		 fd, n, rv = 0;

	(void)snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	n = snprintf(map, sizeof(map), "%u %u 1\n", from, to);
	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) == -1)
		return (snap_errf(err, errlen, "%s: %s", path,
		    strerror(errno)));
	if (write(fd, map, (size_t)n) != n)
		rv = snap_errf(err, errlen, "%s: %s", path, strerror(errno));
	(void)close(fd);
	return (rv);
}

/*
 * The child of snap_userns(): in the fencer's memory and descriptor
 * table (CLONE_VM, CLONE_FILES), in a user namespace of its own.  It
 * opens that namespace where the fencer sees the descriptor, says so,
 * and waits for the fencer to have written its maps.
 */
struct snap_userns_child {
	int	 uc_pipe[2];	/* child -> fencer: opened; fencer closes
				   its end of uc_wait when done */
	int	 uc_wait[2];
	int	 uc_ns;		/* the child's /proc/self/ns/user, or -1 */
};

static int
snap_userns_child(void *arg)
{
	struct snap_userns_child *uc = arg;
	char	 c = 'n';

	uc->uc_ns = open("/proc/self/ns/user", O_RDONLY | O_CLOEXEC);
	if (write(uc->uc_pipe[1], &c, 1) != 1)
		return (1);
	/* EOF once the fencer is done with us. */
	return (read(uc->uc_wait[0], &c, 1) == -1);
}

#define SNAP_USERNS_STACK	(64 * 1024)

/*
 * A user namespace whose map shows uid from as to (gid likewise), for an
 * idmapped mount.  Its first process shares the fencer's memory and
 * descriptors rather than copying them (a fork of the fencer cost most
 * of a branch's home: docs/snapshots.md, "Measured"); the fencer writes
 * its maps, then lets it end.
 */
static int
snap_userns(uid_t from, gid_t gfrom, uid_t to, gid_t gto, char *err,
    size_t errlen)
{
	struct snap_userns_child uc;
	sigset_t	 all, old;
	void		*stack;
	pid_t		 pid;
	int		 ns = -1, st;
	char		 c;

	memset(&uc, 0, sizeof(uc));
	uc.uc_ns = -1;
	if ((stack = mmap(NULL, SNAP_USERNS_STACK, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0)) == MAP_FAILED)
		return (snap_errf(err, errlen, "mmap: %s", strerror(errno)));
	if (pipe2(uc.uc_pipe, O_CLOEXEC) == -1) {
		snap_errf(err, errlen, "pipe: %s", strerror(errno));
		(void)munmap(stack, SNAP_USERNS_STACK);
		return (-1);
	}
	if (pipe2(uc.uc_wait, O_CLOEXEC) == -1) {
		snap_errf(err, errlen, "pipe: %s", strerror(errno));
		(void)close(uc.uc_pipe[0]);
		(void)close(uc.uc_pipe[1]);
		(void)munmap(stack, SNAP_USERNS_STACK);
		return (-1);
	}
	/* No handler of the fencer's runs in the child. */
	(void)sigfillset(&all);
	(void)sigprocmask(SIG_BLOCK, &all, &old);
	pid = clone(snap_userns_child, (char *)stack + SNAP_USERNS_STACK,
	    CLONE_VM | CLONE_FILES | CLONE_NEWUSER | SIGCHLD, &uc);
	(void)sigprocmask(SIG_SETMASK, &old, NULL);
	if (pid == -1)
		snap_errf(err, errlen, "clone: %s", strerror(errno));
	else if (read(uc.uc_pipe[0], &c, 1) != 1 || uc.uc_ns == -1)
		snap_errf(err, errlen, "no user namespace from the child");
	else if (snap_write_map(pid, "uid_map", from, to, err, errlen) ==
	    0 && snap_write_map(pid, "gid_map", gfrom, gto, err, errlen) == 0)
		ns = uc.uc_ns;
	if (ns == -1 && uc.uc_ns != -1)
		(void)close(uc.uc_ns);
	(void)close(uc.uc_wait[1]);	/* the child reads EOF and ends */
	if (pid > 0)
		while (waitpid(pid, &st, 0) == -1 && errno == EINTR)
			;
	(void)close(uc.uc_wait[0]);
	(void)close(uc.uc_pipe[0]);
	(void)close(uc.uc_pipe[1]);
	(void)munmap(stack, SNAP_USERNS_STACK);
	return (ns);
}

/*
 * The overlay of a branch, a detached mount (nosuid, nodev): lower the
 * snapshot's tree (files of lower_uid), upper and work its own.
 */
static int
snap_overlay(const char *lower, uid_t luid, gid_t lgid, const char *upper,
    const char *work, uid_t uid, gid_t gid, int *unsupported, char *err,
    size_t errlen)
{
	struct mount_attr attr;
	char		 lpath[64], msg[256];
	ssize_t		 n;
	int		 lt = -1, ns = -1, fs = -1, m = -1;

	if ((lt = open_tree(AT_FDCWD, lower, OPEN_TREE_CLONE |
	    OPEN_TREE_CLOEXEC | AT_SYMLINK_NOFOLLOW)) == -1) {
		snap_errf(err, errlen, "clone %s: %s", lower, strerror(errno));
		goto done;
	}
	memset(&attr, 0, sizeof(attr));
	attr.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID |
	    MOUNT_ATTR_NODEV;
	if (luid != uid || lgid != gid) {
		if ((ns = snap_userns(luid, lgid, uid, gid, err,
		    errlen)) == -1)
			goto done;
		attr.attr_set |= MOUNT_ATTR_IDMAP;
		attr.userns_fd = (uint64_t)ns;
	}
	if (mount_setattr(lt, "", AT_EMPTY_PATH, &attr, sizeof(attr)) == -1) {
		/*
		 * The filesystem of the store cannot be idmapped by this
		 * kernel (tmpfs before Linux 6.3): a branch of another
		 * uid's snapshot is refused, never built some weaker way.
		 */
		if (ns != -1 && errno == EINVAL) {
			*unsupported = 1;
			snap_errf(err, errlen, "this kernel cannot idmap the "
			    "filesystem of the snapshot store (%s), which a "
			    "branch running as another uid than the "
			    "snapshot's files needs (ext4 from Linux 5.12, "
			    "xfs and btrfs from 5.15, tmpfs from 6.3)",
			    lower);
		} else
			snap_errf(err, errlen, "mount %s read-only%s: %s",
			    lower, ns != -1 ? ", idmapped" : "",
			    strerror(errno));
		goto done;
	}
	if ((fs = fsopen("overlay", FSOPEN_CLOEXEC)) == -1) {
		snap_errf(err, errlen, "overlayfs: %s", strerror(errno));
		goto done;
	}
	/*
	 * An idmapped layer by descriptor (6.8 on), else by its /proc
	 * name; a layer of the same uid by its path, which every kernel
	 * with overlayfs takes (overlayfs never writes a lower layer).
	 */
	(void)snprintf(lpath, sizeof(lpath), "/proc/self/fd/%d", lt);
	if (ns == -1 && strpbrk(lower, ":,\\") == NULL) {
		if (fsconfig(fs, FSCONFIG_SET_STRING, "lowerdir", lower,
		    0) == -1) {
			snap_errf(err, errlen, "overlayfs lower %s: %s", lower,
			    strerror(errno));
			goto done;
		}
	} else if (fsconfig(fs, FSCONFIG_SET_FD, "lowerdir+", NULL,
	    lt) == -1 &&
	    fsconfig(fs, FSCONFIG_SET_STRING, "lowerdir", lpath, 0) == -1) {
		snap_errf(err, errlen, "overlayfs lower %s: %s", lower,
		    strerror(errno));
		goto done;
	}
	if (fsconfig(fs, FSCONFIG_SET_STRING, "upperdir", upper, 0) == -1 ||
	    fsconfig(fs, FSCONFIG_SET_STRING, "workdir", work, 0) == -1 ||
	    fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) == -1) {
		n = read(fs, msg, sizeof(msg) - 1);
		msg[n > 0 ? n : 0] = '\0';
		snap_errf(err, errlen, "overlayfs on %s: %s%s%s", upper,
		    strerror(errno), n > 0 ? ": " : "", msg);
		goto done;
	}
	if ((m = fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID |
	    MOUNT_ATTR_NODEV)) == -1)
		snap_errf(err, errlen, "fsmount overlay: %s", strerror(errno));
 done:
	if (fs != -1)
		(void)close(fs);
	if (ns != -1)
		(void)close(ns);
	if (lt != -1)
		(void)close(lt);
	return (m);
}

/* <state>/branches/<owner>/<key>: 1 if the key has one, its base read. */
static int
snap_branch_base(uid_t owner, const char *key, char *dir, size_t dirlen,
    char *skey, char *sname)
{
	char		 odir[PATH_MAX], path[PATH_MAX], buf[256];
	char		 ent[256];	/* its first word; split checks it */
	struct stat	 sb;
	ssize_t		 r;
	int		 fd;

	if (snap_owner_dir(branch_root, owner, 0, odir, sizeof(odir)) == -1 ||
	    snap_path(dir, dirlen, "%s/%s", odir, key) == -1 ||
	    lstat(dir, &sb) == -1)
		return (0);
	if (snap_path(path, sizeof(path), "%s/base", dir) == -1 ||
	    (fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) == -1)
		return (-1);
	r = read(fd, buf, sizeof(buf) - 1);
	(void)close(fd);
	if (r <= 0)
		return (-1);
	buf[r] = '\0';
	if (sscanf(buf, "%255s", ent) != 1 ||
	    snap_entry_split(ent, skey, sname) == -1)
		return (-1);
	return (1);
}

/* Where key's upper layer is (made or not): -1 without a store. */
int
fencer_branch_upper(uid_t owner, const char *key, char *buf, size_t len)
{
	if (branch_root[0] == '\0')
		return (-1);
	return (snap_path(buf, len, "%s/%u/%s/upper", branch_root,
	    (unsigned)owner, key));
}

int
fencer_branch_is(uid_t owner, const char *key)
{
	char		 dir[PATH_MAX], k[FENCE_KEY_SIZE], n[FENCE_KEY_SIZE];

	return (branch_root[0] != '\0' &&
	    snap_branch_base(owner, key, dir, sizeof(dir), k, n) != 0);
}

/*
 * The home of a branch boot, in place of fencer_home_make(): with b's
 * from, a new branch (of the snapshot named, or of the source fence's
 * home now, taken as a snapshot named after the branch); without, the
 * key's existing branch.  f has its uid.  -1 once the broker has the
 * error.
 */
int
fencer_branch_home(struct fence *f, const struct msg_boot *b,
    const char *dirhome, uint32_t reqid)
{
	const struct fenced_config *c = &fencer_self.ps_conf;
	struct snap_info in;
	struct stat	 sb;
	struct fence	*src;
	char		 odir[PATH_MAX], dir[PATH_MAX], newdir[PATH_MAX];
	char		 lower[PATH_MAX], upper[PATH_MAX], work[PATH_MAX];
	char		 path[PATH_MAX], skey[FENCE_KEY_SIZE];
	char		 sname[FENCE_KEY_SIZE], code[MSG_ERROR_CODE_MAX];
	char		 err[MSG_ERROR_TEXT_MAX], why[BACKEND_ERR_MAX], buf[160];
	uid_t		 owner = f->f_info.f_owner;
	int		 have, made = 0, unsupported = 0, fd, n;

	strlcpy(code, "branch-failed", sizeof(code));
	if (branch_root[0] == '\0') {
		snap_errf(err, sizeof(err), "no snapshot store");
		goto fail;
	}
	if (c->c_home_limit != 0) {
		strlcpy(code, "branch-unsupported", sizeof(code));
		snap_errf(err, sizeof(err), "branches are not made of "
		    "`limit home' images (docs/snapshots.md)");
		goto fail;
	}
	have = snap_branch_base(owner, f->f_info.f_key, dir, sizeof(dir),
	    skey, sname);
	if (have == -1) {
		snap_errf(err, sizeof(err), "branch %s: no base recorded",
		    f->f_info.f_key);
		goto fail;
	}
	if (b->b_from_key[0] != '\0') {
		if (have || lstat(dirhome, &sb) == 0) {
			strlcpy(code, "home-exists", sizeof(code));
			snap_errf(err, sizeof(err), "%s has a home already: a "
			    "branch needs a key of its own (boot %s without "
			    "from)", f->f_info.f_key, f->f_info.f_key);
			goto fail;
		}
		if (strcmp(b->b_from_key, f->f_info.f_key) == 0) {
			strlcpy(code, "bad-request", sizeof(code));
			snap_errf(err, sizeof(err), "a fence cannot branch "
			    "from itself");
			goto fail;
		}
		strlcpy(skey, b->b_from_key, sizeof(skey));
		if (b->b_from_snap[0] != '\0')
			strlcpy(sname, b->b_from_snap, sizeof(sname));
		else {
			/* The source's home now, as a snapshot of its own. */
			if ((src = fencer_find(owner, skey)) == NULL ||
			    src->f_info.f_state != FENCE_RUNNING) {
				strlcpy(code, "not-found", sizeof(code));
				snap_errf(err, sizeof(err), "no fence %s "
				    "running to branch from", skey);
				goto fail;
			}
			strlcpy(sname, f->f_info.f_key, sizeof(sname));
			if (snap_take(src, sname, 0, &in, code, sizeof(code),
			    err, sizeof(err)) == -1)
				goto fail;
		}
	}
	if (snap_owner_dir(snap_root, owner, 0, odir, sizeof(odir)) == -1 ||
	    snap_path(path, sizeof(path), "%s/%s@%s", odir, skey,
	    sname) == -1 || snap_info_read(path, &in) == -1 ||
	    snap_path(lower, sizeof(lower), "%s/tree", path) == -1) {
		strlcpy(code, "snapshot-not-found", sizeof(code));
		snap_errf(err, sizeof(err), "%s has no snapshot %s", skey,
		    sname);
		goto fail;
	}
	if (!have) {
		if (snap_owner_dir(branch_root, owner, 1, odir,
		    sizeof(odir)) == -1 ||
		    snap_path(newdir, sizeof(newdir), "%s/.new.%s", odir,
		    f->f_info.f_key) == -1 ||
		    snap_path(upper, sizeof(upper), "%s/upper", newdir) == -1 ||
		    snap_path(work, sizeof(work), "%s/work", newdir) == -1 ||
		    snap_path(path, sizeof(path), "%s/base", newdir) == -1) {
			snap_errf(err, sizeof(err), "branches of uid %u: %s",
			    (unsigned)owner, strerror(errno));
			goto fail;
		}
		(void)snap_remove(odir, newdir + strlen(odir) + 1,
		    f->f_info.f_uid, f->f_gid, why, sizeof(why));
		n = snprintf(buf, sizeof(buf), "%s@%s %u\n", skey, sname,
		    (unsigned)in.i_uid);
		if (mkdir(newdir, 0700) == -1 || mkdir(upper, 0700) == -1 ||
		    chown(upper, f->f_info.f_uid, f->f_gid) == -1 ||
		    mkdir(work, 0700) == -1 ||
		    (fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
		    O_CLOEXEC, 0600)) == -1) {
			snap_errf(err, sizeof(err), "make %s: %s", newdir,
			    strerror(errno));
			(void)snap_remove(odir, newdir + strlen(odir) + 1,
			    f->f_info.f_uid, f->f_gid, why, sizeof(why));
			goto fail;
		}
		if (write(fd, buf, (size_t)n) != n || fsync(fd) == -1 ||
		    close(fd) == -1 || rename(newdir, dir) == -1) {
			snap_errf(err, sizeof(err), "record %s: %s", newdir,
			    strerror(errno));
			(void)snap_remove(odir, newdir + strlen(odir) + 1,
			    f->f_info.f_uid, f->f_gid, why, sizeof(why));
			goto fail;
		}
		made = 1;
	}
	if (snap_path(upper, sizeof(upper), "%s/upper", dir) == -1 ||
	    snap_path(work, sizeof(work), "%s/work", dir) == -1 ||
	    lstat(upper, &sb) == -1 || !S_ISDIR(sb.st_mode) ||
	    sb.st_uid != f->f_info.f_uid) {
		snap_errf(err, sizeof(err), "branch %s: upper layer %s is not "
		    "uid %u's", f->f_info.f_key, upper,
		    (unsigned)f->f_info.f_uid);
		goto fail;
	}
	if ((f->f_home_tree = snap_overlay(lower, in.i_uid, in.i_gid, upper,
	    work, f->f_info.f_uid, f->f_gid, &unsupported, err,
	    sizeof(err))) == -1) {
		if (unsupported)
			strlcpy(code, "branch-unsupported", sizeof(code));
		goto fail;
	}
	strlcpy(f->f_info.f_home, upper, sizeof(f->f_info.f_home));
	(void)snprintf(f->f_info.f_from, sizeof(f->f_info.f_from), "%s@%s",
	    skey, sname);
	return (0);
 fail:
	/* A branch made now and not booted is not kept. */
	if (made && snap_owner_dir(branch_root, owner, 0, odir,
	    sizeof(odir)) == 0 && snap_remove(odir, f->f_info.f_key,
	    f->f_info.f_uid, f->f_gid, why, sizeof(why)) == -1)
		log_warnx("branch %s: %s", f->f_info.f_key, why);
	log_warnx("fence %s of uid %u: branch home: %s", f->f_info.f_key,
	    (unsigned)owner, err);
	fencer_send_error(IMSG_FENCE_FAILED, reqid, code, "%s", err);
	return (-1);
}

/* The owner of what a sweep removes: its tree's or upper's uid. */
static void
snap_sweep_dir(const char *root)
{
	char		 odir[PATH_MAX], path[PATH_MAX], err[BACKEND_ERR_MAX];
	struct dirent	*de, *oe;
	struct stat	 sb;
	DIR		*d, *od;

	if ((d = opendir(root)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' ||
		    snap_path(odir, sizeof(odir), "%s/%s", root,
		    de->d_name) == -1 || (od = opendir(odir)) == NULL)
			continue;
		while ((oe = readdir(od)) != NULL) {
			if (strncmp(oe->d_name, ".new.", 5) != 0 &&
			    strncmp(oe->d_name, ".del.", 5) != 0)
				continue;
			sb.st_uid = 0;
			sb.st_gid = 0;
			if ((snap_path(path, sizeof(path), "%s/%s/tree", odir,
			    oe->d_name) == 0 && lstat(path, &sb) == 0) ||
			    (snap_path(path, sizeof(path), "%s/%s/upper", odir,
			    oe->d_name) == 0 && lstat(path, &sb) == 0)) {
				/* sb: the uid of what is removed */
			}
			if (snap_remove(odir, oe->d_name, sb.st_uid, sb.st_gid,
			    err, sizeof(err)) == -1)
				log_warnx("sweep %s/%s: %s", odir, oe->d_name,
				    err);
			else
				log_info("swept %s/%s, left half-made",
				    odir, oe->d_name);
		}
		(void)closedir(od);
	}
	(void)closedir(d);
}

/* At the fencer's start: the store's folders, and a sweep of leftovers. */
void
fencer_snap_init(const char *state)
{
	char		 a[PATH_MAX], b[PATH_MAX];

	if (snap_path(a, sizeof(a), "%s/snapshots", state) == -1 ||
	    snap_path(b, sizeof(b), "%s/branches", state) == -1 ||
	    snap_mkdir_root(a) == -1 || snap_mkdir_root(b) == -1) {
		log_warn("snapshots in %s", state);
		return;
	}
	strlcpy(snap_root, a, sizeof(snap_root));
	strlcpy(branch_root, b, sizeof(branch_root));
	snap_sweep_dir(snap_root);
	snap_sweep_dir(branch_root);
}
