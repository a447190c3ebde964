/*
 * The walks of the file engine (fencer_tree.c runs them in a child that
 * is the uid alone): copy or measure a tree, empty one.  Every name is
 * opened relative to its directory's descriptor, O_NOFOLLOW, and judged
 * by fstat of what was opened; docs/snapshots.md, "The file engine".
 */
#include <sys/types.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>

#include <linux/fs.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fencer_tree.h"
#include "fencer_tree_impl.h"

#ifndef __NR_fchmodat2
#define __NR_fchmodat2		452
#endif

static void	tree_vis(char *, size_t, const char *);
static size_t	tree_push(struct tree_walk *, const char *);
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
static int	tree_empty_sub(struct tree_walk *, int, const char *, int);

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

int
tree_failx(struct tree_walk *w, const char *why)
{
	char	 path[TREE_ERR_LEN / 2];

	tree_vis(path, sizeof(path), w->tw_pathlen > 0 ? w->tw_path : ".");
	snprintf(w->tw_err, sizeof(w->tw_err), "%s %s: %s",
	    tree_op_name(w->tw_op), path, why);
	return (-1);
}

int
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
int
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
int
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
int
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
int
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
int
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
int
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
