/*
 * The sandbox home: <homes>/<key>, owned by the fence's uid, mode 0700,
 * created if missing and never deleted.  Called by the fencer (root)
 * before the backend boots the fence; the path it returns has no symlink
 * in it, and a native fence's pid 1 opens it again without following any
 * (native/fence_mount.c).
 *
 * Root walks a path that a user may have shaped (~/sandbox-homes), so
 * every component is judged before anything is created, and nothing is
 * created where the user could not have created it themselves:
 *	- the walk goes from / component by component with openat() and
 *	  O_NOFOLLOW, holding a descriptor of each directory, so nothing
 *	  can be swapped in behind a check;
 *	- every directory on the way belongs to root or to the fence's uid
 *	  and is writable by nobody else (no write bit for others, none for
 *	  the group unless it is root's or the fence's group);
 *	- a symlink is followed only if root owns it and it lies in a
 *	  directory only root can change, on a path no user has touched so
 *	  far (the host's own /var/run -> /run); any other symlink refuses
 *	  the walk, wherever it points;
 *	- a missing component is created only inside a directory the
 *	  fence's uid may write, as that uid's (mkdirat, then fchown of the
 *	  very directory made); on a path that is root's from / on (the
 *	  administrator's `homes /var/lib/fenced/homes') only <homes>
 *	  itself, the last component, as root's 0755; the home itself is
 *	  always the uid's, 0700;
 *	- <homes> must not be under /tmp, /var/tmp or /dev/shm;
 *	- an existing <key> must be a directory of the fence's uid.
 * A refusal's message is for the fencer's log: the user hears only
 * "cannot use home for KEY" (fencer_fence.c), so the walk tells nobody
 * whether a path they cannot read exists or who owns it.
 */
#include <sys/types.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <linux/loop.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fencer_home.h"

#define FENCE_HOME_MAXLINKS	16
#define FENCE_HOME_ERR_MAX	512	/* fencer_home_own()'s own, unread */

static const char *fencer_home_temp[] = { "/tmp", "/var/tmp", "/dev/shm" };

struct fencer_walk {
	char	 fw_rest[2 * PATH_MAX];	/* what is left to resolve */
	char	 fw_canon[PATH_MAX];	/* the real path of fw_fd */
	int	 fw_fd;			/* O_PATH, the directory reached */
	int	 fw_links;
	int	 fw_create;		/* may create missing components */
	int	 fw_user;		/* the uid could shape the path */
	int	 fw_writable;		/* the uid may write in fw_fd */
	uid_t	 fw_uid;
	gid_t	 fw_gid;
	char	*fw_err;
	size_t	 fw_errlen;
};

static int
fencer_home_is_temp(const char *canon)
{
	size_t	 i, len;

	for (i = 0; i < sizeof(fencer_home_temp) / sizeof(fencer_home_temp[0]);
	    i++) {
		len = strlen(fencer_home_temp[i]);
		if (strncmp(canon, fencer_home_temp[i], len) == 0 &&
		    (canon[len] == '/' || canon[len] == '\0'))
			return (1);
	}
	return (0);
}

static int
fencer_home_fail(struct fencer_walk *w, const char *comp, const char *why)
{
	snprintf(w->fw_err, w->fw_errlen, "%s%s%s: %s", w->fw_canon,
	    comp[0] != '\0' ? "/" : "", comp, why);
	return (-1);
}

/*
 * A directory the walk may pass: root's or the uid's, writable by no one
 * else.  Records whether the uid may write in it (and so shape what
 * lies below).
 */
static int
fencer_home_judge(struct fencer_walk *w, const struct stat *sb,
    const char *comp)
{
	int	 grp_ok;

	if (!S_ISDIR(sb->st_mode))
		return (fencer_home_fail(w, comp, "not a directory"));
	if (sb->st_uid != 0 && sb->st_uid != w->fw_uid)
		return (fencer_home_fail(w, comp, "owned by someone else"));
	if (sb->st_mode & S_IWOTH)
		return (fencer_home_fail(w, comp, "writable by others"));
	grp_ok = sb->st_gid == 0 || sb->st_gid == w->fw_gid;
	if ((sb->st_mode & S_IWGRP) && !grp_ok)
		return (fencer_home_fail(w, comp, "writable by its group"));
	w->fw_writable = (sb->st_uid == w->fw_uid &&
	    (sb->st_mode & S_IWUSR)) || (sb->st_gid == w->fw_gid &&
	    sb->st_gid != 0 && (sb->st_mode & S_IWGRP));
	if (sb->st_uid == w->fw_uid || w->fw_writable)
		w->fw_user = 1;
	return (0);
}

/* Move the walk into fd (an O_PATH directory) named comp. */
static int
fencer_home_enter(struct fencer_walk *w, int fd, const char *comp)
{
	struct stat	 sb;

	if (fstat(fd, &sb) == -1) {
		(void)close(fd);
		return (fencer_home_fail(w, comp, strerror(errno)));
	}
	if (fencer_home_judge(w, &sb, comp) == -1) {
		(void)close(fd);
		return (-1);
	}
	(void)close(w->fw_fd);
	w->fw_fd = fd;
	if (strlcat(w->fw_canon, "/", sizeof(w->fw_canon)) >=
	    sizeof(w->fw_canon) || strlcat(w->fw_canon, comp,
	    sizeof(w->fw_canon)) >= sizeof(w->fw_canon))
		return (fencer_home_fail(w, "", "path too long"));
	return (0);
}

/*
 * Make comp in the walk's directory: the uid's 0700 where the uid may
 * write (or when it is the home itself), else root's 0755.  The
 * directory made is opened without following and, if it is still the
 * one root made, given away through that descriptor.
 */
static int
fencer_home_mkdir(struct fencer_walk *w, const char *comp, int home)
{
	struct stat	 sb;
	int		 fd, users = home || w->fw_writable;

	if (mkdirat(w->fw_fd, comp, users ? 0700 : 0755) == -1 &&
	    errno != EEXIST)
		return (fencer_home_fail(w, comp, strerror(errno)));
	if (!users)
		return (0);
	fd = openat(w->fw_fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	if (fd == -1)
		return (fencer_home_fail(w, comp, strerror(errno)));
	if (fstat(fd, &sb) == -1 || (sb.st_uid == 0 &&
	    (fchown(fd, w->fw_uid, w->fw_gid) == -1 ||
	    fchmod(fd, 0700) == -1))) {
		(void)close(fd);
		return (fencer_home_fail(w, comp, strerror(errno)));
	}
	(void)close(fd);
	return (0);
}

/* A symlink: only root's, in a root-only directory, on root's path. */
static int
fencer_home_link(struct fencer_walk *w, const char *comp, const char *tail,
    const struct stat *lnk)
{
	char		 target[PATH_MAX], rest[2 * PATH_MAX];
	struct stat	 sb;
	ssize_t		 n;

	if (lnk->st_uid != 0 || w->fw_user || fstat(w->fw_fd, &sb) == -1 ||
	    sb.st_uid != 0 || (sb.st_mode & (S_IWGRP | S_IWOTH)))
		return (fencer_home_fail(w, comp, "a symlink not of root's"));
	if (++w->fw_links > FENCE_HOME_MAXLINKS)
		return (fencer_home_fail(w, comp, "too many symlinks"));
	if ((n = readlinkat(w->fw_fd, comp, target, sizeof(target) - 1)) <= 0)
		return (fencer_home_fail(w, comp, strerror(errno)));
	target[n] = '\0';
	if ((size_t)snprintf(rest, sizeof(rest), "%s/%s", target, tail) >=
	    sizeof(rest))
		return (fencer_home_fail(w, comp, "path too long"));
	memcpy(w->fw_rest, rest, sizeof(rest));
	if (target[0] == '/') {
		(void)close(w->fw_fd);
		if ((w->fw_fd = open("/", O_PATH | O_DIRECTORY |
		    O_CLOEXEC)) == -1)
			return (fencer_home_fail(w, "", strerror(errno)));
		w->fw_canon[0] = '\0';
	}
	return (0);
}

static int
fencer_home_step(struct fencer_walk *w, const char *comp, const char *tail)
{
	struct stat	 sb;
	char		*slash;
	int		 fd;

	if (strcmp(comp, "..") == 0) {
		/* Only on root's path: a user's tree may have moved. */
		if (w->fw_user)
			return (fencer_home_fail(w, comp, "\"..\" in a path "
			    "of the user's"));
		if ((fd = openat(w->fw_fd, "..", O_PATH | O_DIRECTORY |
		    O_CLOEXEC)) == -1)
			return (fencer_home_fail(w, comp, strerror(errno)));
		if ((slash = strrchr(w->fw_canon, '/')) != NULL)
			*slash = '\0';
		if (fencer_home_enter(w, fd, "") == -1)
			return (-1);
		/* enter appended a "/": take it off again */
		w->fw_canon[strlen(w->fw_canon) - 1] = '\0';
		return (0);
	}
	if (fstatat(w->fw_fd, comp, &sb, AT_SYMLINK_NOFOLLOW) == -1) {
		if (errno != ENOENT)
			return (fencer_home_fail(w, comp, strerror(errno)));
		if (!w->fw_create || (w->fw_user && !w->fw_writable))
			return (fencer_home_fail(w, comp, "missing, and not "
			    "in a directory the uid may write"));
		/* On root's path only <homes> itself, never a path to it. */
		if (!w->fw_writable && *tail != '\0')
			return (fencer_home_fail(w, comp, "missing"));
		if (fencer_home_mkdir(w, comp, 0) == -1)
			return (-1);
		if (fstatat(w->fw_fd, comp, &sb, AT_SYMLINK_NOFOLLOW) == -1)
			return (fencer_home_fail(w, comp, strerror(errno)));
	}
	if (S_ISLNK(sb.st_mode))
		return (fencer_home_link(w, comp, tail, &sb));
	if ((fd = openat(w->fw_fd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1)
		return (fencer_home_fail(w, comp, strerror(errno)));
	return (fencer_home_enter(w, fd, comp));
}

/* Walk path to an O_PATH fd and its real path; create if w says so. */
static int
fencer_home_walk(struct fencer_walk *w, const char *path)
{
	struct stat	 sb;
	char		 comp[NAME_MAX + 1], *p, *end;
	size_t		 len;

	w->fw_canon[0] = '\0';
	w->fw_links = w->fw_user = w->fw_writable = 0;
	if ((size_t)snprintf(w->fw_rest, sizeof(w->fw_rest), "%s", path) >=
	    sizeof(w->fw_rest))
		return (fencer_home_fail(w, "", "path too long"));
	if ((w->fw_fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1 ||
	    fstat(w->fw_fd, &sb) == -1)
		return (fencer_home_fail(w, "/", strerror(errno)));
	if (fencer_home_judge(w, &sb, "/") == -1)
		return (-1);
	for (;;) {
		p = w->fw_rest + strspn(w->fw_rest, "/");
		if (*p == '\0')
			break;
		end = p + strcspn(p, "/");
		if ((len = end - p) > NAME_MAX)
			return (fencer_home_fail(w, "", "component too long"));
		memcpy(comp, p, len);
		comp[len] = '\0';
		end += strspn(end, "/");
		memmove(w->fw_rest, end, strlen(end) + 1);
		if (strcmp(comp, ".") == 0)
			continue;
		if (fencer_home_step(w, comp, w->fw_rest) == -1)
			return (-1);
	}
	if (w->fw_canon[0] == '\0')
		(void)strlcpy(w->fw_canon, "/", sizeof(w->fw_canon));
	return (0);
}

/* <key> in the homes dir reached: the uid's directory, or made so. */
static int
fencer_home_key(struct fencer_walk *w, const char *key)
{
	struct stat	 sb;

	if (fstatat(w->fw_fd, key, &sb, AT_SYMLINK_NOFOLLOW) == -1) {
		if (errno != ENOENT)
			return (fencer_home_fail(w, key, strerror(errno)));
		if (w->fw_user && !w->fw_writable)
			return (fencer_home_fail(w, key, "missing, and not "
			    "in a directory the uid may write"));
		if (fencer_home_mkdir(w, key, 1) == -1 ||
		    fstatat(w->fw_fd, key, &sb, AT_SYMLINK_NOFOLLOW) == -1)
			return (fencer_home_fail(w, key, "vanished"));
	}
	if (S_ISLNK(sb.st_mode))
		return (fencer_home_fail(w, key, "a symlink"));
	if (!S_ISDIR(sb.st_mode))
		return (fencer_home_fail(w, key, "not a directory"));
	if (sb.st_uid != w->fw_uid)
		return (fencer_home_fail(w, key, "owned by someone else"));
	return (0);
}

int
fencer_home_prepare(const char *homes, const char *key, uid_t uid, gid_t gid,
    char *out, size_t outlen, char *err, size_t errlen)
{
	struct fencer_walk	 w;
	int			 rc = -1;

	memset(&w, 0, sizeof(w));
	w.fw_fd = -1;
	w.fw_uid = uid;
	w.fw_gid = gid;
	w.fw_create = 1;
	w.fw_err = err;
	w.fw_errlen = errlen;
	if (!fence_key_valid(key)) {
		snprintf(err, errlen, "invalid fence key");
		return (-1);
	}
	if (uid == 0 || uid == (uid_t)-1) {
		snprintf(err, errlen, "refusing a home for uid %u",
		    (unsigned)uid);
		return (-1);
	}
	if (homes == NULL || homes[0] != '/') {
		snprintf(err, errlen, "homes dir must be an absolute path");
		return (-1);
	}
	/* Lexically first: nothing is made under a temporary directory. */
	if (fencer_home_is_temp(homes)) {
		snprintf(err, errlen, "homes dir %s is under a temporary "
		    "directory", homes);
		return (-1);
	}
	if (fencer_home_walk(&w, homes) == -1)
		goto done;
	if (fencer_home_is_temp(w.fw_canon)) {
		snprintf(err, errlen, "homes dir %s is under a temporary "
		    "directory", w.fw_canon);
		goto done;
	}
	if (fencer_home_key(&w, key) == -1)
		goto done;
	if ((size_t)snprintf(out, outlen, "%s%s%s", w.fw_canon,
	    strcmp(w.fw_canon, "/") == 0 ? "" : "/", key) >= outlen) {
		snprintf(err, errlen, "home path too long");
		goto done;
	}
	rc = 0;
 done:
	if (w.fw_fd != -1)
		(void)close(w.fw_fd);
	return (rc);
}

int
fencer_home_own(const char *dir, uid_t uid, gid_t gid)
{
	struct fencer_walk	 w;
	struct stat		 sb;
	char			 err[FENCE_HOME_ERR_MAX];
	int			 rc = -1;

	memset(&w, 0, sizeof(w));
	w.fw_fd = -1;
	w.fw_uid = uid;
	w.fw_gid = gid;
	w.fw_err = err;
	w.fw_errlen = sizeof(err);
	if (dir == NULL || dir[0] != '/' || uid == (uid_t)-1)
		return (-1);
	if (fencer_home_walk(&w, dir) == 0 && fstat(w.fw_fd, &sb) == 0 &&
	    sb.st_uid == uid)
		rc = 0;
	if (w.fw_fd != -1)
		(void)close(w.fw_fd);
	return (rc);
}

/*
 * Homes with a size limit (`limit home SIZE'): an ext4 image of their
 * own, <root>/homes/<owner>/<key>.img, root's 0600 in directories of
 * root's 0700 (root is the daemon's state directory), so nobody but the
 * kernel's ext4 ever reads or writes the image while it is mounted: a
 * user who could write the image under a mounted filesystem could feed
 * the kernel a corrupt one.  docs/fence.md says why an image and not a
 * quota.
 */
#define FENCE_IMG_LOOP_TRIES	8

static const char *fencer_mkfs_paths[] = {
	"/usr/sbin/mkfs.ext4", "/sbin/mkfs.ext4"
};

static int
fencer_img_mkdir(const char *dir, char *err, size_t errlen)
{
	struct stat	 sb;

	if (mkdir(dir, 0700) == -1 && errno != EEXIST) {
		snprintf(err, errlen, "mkdir %s: %s", dir, strerror(errno));
		return (-1);
	}
	if (lstat(dir, &sb) == -1 || !S_ISDIR(sb.st_mode) || sb.st_uid != 0 ||
	    (sb.st_mode & 077) != 0) {
		snprintf(err, errlen, "%s: not a directory of root's, 0700",
		    dir);
		return (-1);
	}
	return (0);
}

/* mkfs.ext4 on a fresh file; its root directory the uid's. */
static int
fencer_img_mkfs(const char *path, uid_t uid, gid_t gid, char *err,
    size_t errlen)
{
	char	 owner[128];
	char	*envp[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C",
		    NULL };
	const char *mkfs = NULL;
	size_t	 i;
	pid_t	 pid;
	int	 st, fd;

	for (i = 0; i < sizeof(fencer_mkfs_paths) /
	    sizeof(fencer_mkfs_paths[0]); i++)
		if (access(fencer_mkfs_paths[i], X_OK) == 0) {
			mkfs = fencer_mkfs_paths[i];
			break;
		}
	if (mkfs == NULL) {
		snprintf(err, errlen, "no mkfs.ext4 (e2fsprogs) for a home "
		    "with a size limit");
		return (-1);
	}
	snprintf(owner, sizeof(owner), "root_owner=%u:%u,lazy_itable_init=1,"
	    "lazy_journal_init=1,nodiscard", (unsigned)uid, (unsigned)gid);
	if ((pid = fork()) == -1) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		return (-1);
	}
	if (pid == 0) {
		char *argv[] = { "mkfs.ext4", "-q", "-F", "-m", "0", "-L",
		    "fenced-home", "-E", owner, (char *)path, NULL };

		if ((fd = open("/dev/null", O_RDWR)) != -1) {
			(void)dup2(fd, 0);
			(void)dup2(fd, 1);
			(void)dup2(fd, 2);
		}
		execve(mkfs, argv, envp);
		_exit(127);
	}
	while (waitpid(pid, &st, 0) == -1)
		if (errno != EINTR) {
			snprintf(err, errlen, "wait for mkfs: %s",
			    strerror(errno));
			return (-1);
		}
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		snprintf(err, errlen, "%s %s failed (status %d)", mkfs, path, st);
		return (-1);
	}
	return (0);
}

/* The image, made on first use: under .new, then renamed into place. */
static int
fencer_img_open(const char *path, uint64_t size, uid_t uid, gid_t gid,
    char *err, size_t errlen)
{
	struct stat	 sb;
	char		 tmp[PATH_MAX];
	int		 fd;

	if ((fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC)) == -1 &&
	    errno == ENOENT) {
		if ((size_t)snprintf(tmp, sizeof(tmp), "%s.new", path) >=
		    sizeof(tmp)) {
			snprintf(err, errlen, "image path too long");
			return (-1);
		}
		(void)unlink(tmp);	/* what a killed fencer left */
		if ((fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW |
		    O_CLOEXEC, 0600)) == -1) {
			snprintf(err, errlen, "create %s: %s", tmp,
			    strerror(errno));
			return (-1);
		}
		if (ftruncate(fd, (off_t)size) == -1) {
			snprintf(err, errlen, "size %s: %s", tmp,
			    strerror(errno));
			goto fail_new;
		}
		if (fencer_img_mkfs(tmp, uid, gid, err, errlen) == -1)
			goto fail_new;
		if (fsync(fd) == -1 || rename(tmp, path) == -1) {
			snprintf(err, errlen, "rename %s: %s", tmp,
			    strerror(errno));
			goto fail_new;
		}
	}
	if (fd == -1) {
		snprintf(err, errlen, "open %s: %s", path, strerror(errno));
		return (-1);
	}
	if (fstat(fd, &sb) == -1 || !S_ISREG(sb.st_mode) || sb.st_uid != 0 ||
	    (sb.st_mode & 077) != 0 || sb.st_nlink != 1) {
		snprintf(err, errlen, "%s: not a file of root's, 0600, with "
		    "one link", path);
		(void)close(fd);
		return (-1);
	}
	return (fd);
 fail_new:
	(void)close(fd);
	(void)unlink(tmp);
	return (-1);
}

/* Is the image attached to a loop device already (a fence stopping)? */
static int
fencer_img_attached(const struct stat *img)
{
	struct loop_info64	 li;
	struct dirent		*de;
	struct stat		 sb;
	DIR			*d;
	char			 dev[NAME_MAX + 8];
	int			 fd, busy = 0;

	if ((d = opendir("/sys/block")) == NULL)
		return (0);
	while (!busy && (de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, "loop", 4) != 0)
			continue;
		snprintf(dev, sizeof(dev), "/dev/%s", de->d_name);
		if ((fd = open(dev, O_RDONLY | O_CLOEXEC)) == -1)
			continue;
		memset(&li, 0, sizeof(li));
		if (fstat(fd, &sb) == 0 && S_ISBLK(sb.st_mode) &&
		    ioctl(fd, LOOP_GET_STATUS64, &li) == 0 &&
		    li.lo_device == img->st_dev && li.lo_inode == img->st_ino)
			busy = 1;
		(void)close(fd);
	}
	closedir(d);
	return (busy);
}

int
fencer_home_image(const char *root, uid_t owner, const char *key,
    uint64_t size, uid_t uid, gid_t gid, struct fencer_home_img *hi,
    char *err, size_t errlen)
{
	struct loop_config	 cfg;
	struct stat		 sb;
	char			 dir[PATH_MAX];
	int			 img = -1, ctl = -1, lfd = -1, n, i;

	memset(hi, 0, sizeof(*hi));
	hi->hi_loopfd = -1;
	if (!fence_key_valid(key) || uid == 0 || size < HOME_LIMIT_MIN ||
	    size > HOME_LIMIT_MAX) {
		snprintf(err, errlen, "invalid key, uid or home size");
		return (-1);
	}
	if ((size_t)snprintf(dir, sizeof(dir), "%s/homes", root) >=
	    sizeof(dir) || fencer_img_mkdir(dir, err, errlen) == -1)
		return (-1);
	if ((size_t)snprintf(dir, sizeof(dir), "%s/homes/%u", root,
	    (unsigned)owner) >= sizeof(dir) ||
	    fencer_img_mkdir(dir, err, errlen) == -1)
		return (-1);
	if ((size_t)snprintf(hi->hi_path, sizeof(hi->hi_path), "%s/%s.img",
	    dir, key) >= sizeof(hi->hi_path)) {
		snprintf(err, errlen, "image path too long");
		return (-1);
	}
	if ((img = fencer_img_open(hi->hi_path, size, uid, gid, err,
	    errlen)) == -1)
		return (-1);
	if (fstat(img, &sb) == -1) {
		snprintf(err, errlen, "stat %s: %s", hi->hi_path,
		    strerror(errno));
		goto fail;
	}
	/* Two mounts of one ext4 through two devices would corrupt it. */
	if (fencer_img_attached(&sb)) {
		snprintf(err, errlen, "%s is still attached to a loop device: "
		    "a fence of it has not finished stopping", hi->hi_path);
		goto fail;
	}
	if ((ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC)) == -1) {
		snprintf(err, errlen, "open /dev/loop-control: %s",
		    strerror(errno));
		goto fail;
	}
	for (i = 0; i < FENCE_IMG_LOOP_TRIES; i++) {
		if ((n = ioctl(ctl, LOOP_CTL_GET_FREE)) < 0) {
			snprintf(err, errlen, "no free loop device: %s",
			    strerror(errno));
			goto fail;
		}
		snprintf(hi->hi_dev, sizeof(hi->hi_dev), "/dev/loop%d", n);
		if ((lfd = open(hi->hi_dev, O_RDWR | O_CLOEXEC)) == -1) {
			snprintf(err, errlen, "open %s: %s", hi->hi_dev,
			    strerror(errno));
			goto fail;
		}
		memset(&cfg, 0, sizeof(cfg));
		cfg.fd = (uint32_t)img;
		cfg.info.lo_flags = LO_FLAGS_AUTOCLEAR;
		(void)strlcpy((char *)cfg.info.lo_file_name, hi->hi_path,
		    sizeof(cfg.info.lo_file_name));
		if (ioctl(lfd, LOOP_CONFIGURE, &cfg) == 0)
			break;
		if (errno != EBUSY) {
			snprintf(err, errlen, "attach %s to %s: %s",
			    hi->hi_path, hi->hi_dev, strerror(errno));
			goto fail;
		}
		/* Someone took it between GET_FREE and CONFIGURE. */
		(void)close(lfd);
		lfd = -1;
	}
	if (lfd == -1) {
		snprintf(err, errlen, "no loop device stayed free");
		goto fail;
	}
	hi->hi_loopfd = lfd;
	hi->hi_size = (uint64_t)sb.st_size;
	hi->hi_used = (uint64_t)sb.st_blocks * 512;
	(void)close(ctl);
	(void)close(img);
	return (0);
 fail:
	if (lfd != -1)
		(void)close(lfd);
	if (ctl != -1)
		(void)close(ctl);
	(void)close(img);
	return (-1);
}

/*
 * <homes> (conf) with ~ and %u expanded for this owner.  Root's ~ is
 * <state>/root, which the parent makes (docs/install.md): root's fences'
 * homes stay out of /root, the admin's own.
 */
static int
fencer_homes_dir(const char *conf, const char *state,
    const struct passwd *pw, char *out, size_t outsz)
{
	const char	*p = conf;
	size_t		 len = 0;

	out[0] = '\0';
	for (; *p != '\0'; p++) {
		if (*p == '~' && p == conf && pw->pw_uid == 0) {
			if ((size_t)snprintf(out, outsz, "%s/%s", state,
			    FENCED_ROOT_HOME) >= outsz)
				return (-1);
			len = strlen(out);
		} else if (*p == '~' && p == conf)
			len = strlcat(out, pw->pw_dir, outsz);
		else if (*p == '%' && p[1] == 'u') {
			len = strlcat(out, pw->pw_name, outsz);
			p++;
		} else {
			char c[2] = { *p, '\0' };

			len = strlcat(out, c, outsz);
		}
		if (len >= outsz)
			return (-1);
	}
	return (out[0] == '/' ? 0 : -1);
}

/*
 * A boot's step (fencer_fence.c): where the home of pw's fence key is.
 * With `limit home' its image, <state>/homes/<owner>/<key>.img; else
 * <homes>/<key>, homes (also returned) the configured folder with ~ and
 * %u expanded.  home is "" where the path is too long: only a root-owned
 * fence's uid record reads it before the home is made.  -1: this owner
 * can have no home, err says why (for the user: it names no path the
 * configuration does not).
 */
int
fencer_home_path(const struct fenced_config *c, const struct passwd *pw,
    uid_t owner, const char *key, char *homes, size_t homeslen, char *home,
    size_t homelen, char *err, size_t errlen)
{
	int	 r;

	/* ~ of a system account (/, /nonexistent) is nobody's to fill. */
	if (c->c_home_limit == 0 && c->c_homes[0] == '~' && owner != 0 &&
	    fencer_home_own(pw->pw_dir, owner, pw->pw_gid) == -1) {
		snprintf(err, errlen, "user %s has no home of their own; "
		    "configure homes", pw->pw_name);
		return (-1);
	}
	/* The home the uid of a root-owned fence is kept for. */
	if (c->c_home_limit != 0)
		r = snprintf(home, homelen, "%s/homes/%u/%s.img", c->c_state,
		    (unsigned)owner, key);
	else if (fencer_homes_dir(c->c_homes, c->c_state, pw, homes,
	    homeslen) == -1) {
		snprintf(err, errlen, "homes %s does not expand to an "
		    "absolute path for %s", c->c_homes, pw->pw_name);
		return (-1);
	} else
		r = snprintf(home, homelen, "%s/%s", homes, key);
	if (r < 0 || (size_t)r >= homelen)
		home[0] = '\0';
	return (0);
}
