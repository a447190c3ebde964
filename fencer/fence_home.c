/*
 * The sandbox home: <homes>/<key>, owned by the fence's uid, mode 0700,
 * created if missing and never deleted.  Called by the fencer (root)
 * before fence_start(); the path it returns has no symlink in it, and
 * pid 1 opens it again without following any (fence_mount.c).
 *
 * The walk is done component by component with openat() and O_NOFOLLOW,
 * so nobody can redirect it with a symlink:
 *	- <key> itself must be a real directory: a symlink there is refused,
 *	  whatever it points to;
 *	- a symlink on the way to <homes> is followed, but if it is not
 *	  root's (or sits in a directory others can write), <homes> must then
 *	  belong to the fence's uid: root must not create directories where
 *	  the user could not;
 *	- <homes> must not be under /tmp, /var/tmp or /dev/shm, where
 *	  other users play and files do not last;
 *	- an existing <key> must belong to the fence's uid.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fence.h"

#define FENCE_HOME_MAXLINKS	16

static const char *fence_home_temp[] = { "/tmp", "/var/tmp", "/dev/shm" };

static int
fence_home_is_temp(const char *canon)
{
	size_t	 i, len;

	for (i = 0; i < sizeof(fence_home_temp) / sizeof(fence_home_temp[0]);
	    i++) {
		len = strlen(fence_home_temp[i]);
		if (strncmp(canon, fence_home_temp[i], len) == 0 &&
		    (canon[len] == '/' || canon[len] == '\0'))
			return (1);
	}
	return (0);
}

/* A symlink root put in a directory only root can write. */
static int
fence_home_trusted(int dirfd, const struct stat *lnk)
{
	struct stat	 sb;

	if (lnk->st_uid != 0 || fstat(dirfd, &sb) == -1)
		return (0);
	return (sb.st_uid == 0 && (sb.st_mode & (S_IWGRP | S_IWOTH)) == 0);
}

/* The missing last component of <homes>: the user's if in their dir. */
static int
fence_home_mkhomes(int dirfd, const char *name, uid_t uid, gid_t gid)
{
	struct stat	 sb;
	int		 fd, mine;

	if (fstat(dirfd, &sb) == -1)
		return (-1);
	mine = sb.st_uid == uid;
	if (mkdirat(dirfd, name, mine ? 0700 : 0755) == -1 && errno != EEXIST)
		return (-1);
	if (!mine)
		return (0);
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	if (fd == -1)
		return (-1);
	if (fstat(fd, &sb) == 0 && sb.st_uid == 0 &&
	    (fchown(fd, uid, gid) == -1 || fchmod(fd, 0700) == -1)) {
		(void)close(fd);
		return (-1);
	}
	(void)close(fd);
	return (0);
}

struct fence_walk {
	char	 fw_rest[2 * PATH_MAX];	/* what is left to resolve */
	char	 fw_canon[PATH_MAX];	/* the real path of fw_fd */
	int	 fw_fd;
	int	 fw_links;
	int	 fw_untrusted;
};

/* Follow a symlink: its target takes the place of the component. */
static int
fence_home_link(struct fence_walk *w, const char *comp, const char *tail,
    char *err, size_t errlen)
{
	char	 target[PATH_MAX], rest[2 * PATH_MAX];
	ssize_t	 n;

	if (++w->fw_links > FENCE_HOME_MAXLINKS) {
		snprintf(err, errlen, "%s: too many symlinks", comp);
		return (-1);
	}
	if ((n = readlinkat(w->fw_fd, comp, target, sizeof(target) - 1)) <= 0) {
		snprintf(err, errlen, "readlink %s/%s: %s", w->fw_canon, comp,
		    strerror(errno));
		return (-1);
	}
	target[n] = '\0';
	if ((size_t)snprintf(rest, sizeof(rest), "%s/%s", target, tail) >=
	    sizeof(rest)) {
		snprintf(err, errlen, "%s: path too long", comp);
		return (-1);
	}
	memcpy(w->fw_rest, rest, sizeof(rest));
	if (target[0] == '/') {
		(void)close(w->fw_fd);
		if ((w->fw_fd = open("/", O_PATH | O_DIRECTORY |
		    O_CLOEXEC)) == -1) {
			snprintf(err, errlen, "open /: %s", strerror(errno));
			return (-1);
		}
		w->fw_canon[0] = '\0';
	}
	return (0);
}

static int
fence_home_step(struct fence_walk *w, const char *comp, const char *tail,
    uid_t uid, gid_t gid, char *err, size_t errlen)
{
	struct stat	 sb;
	char		*slash;
	int		 fd;

	if (strcmp(comp, "..") == 0) {
		if ((fd = openat(w->fw_fd, "..", O_PATH | O_DIRECTORY |
		    O_CLOEXEC)) == -1)
			goto fail;
		(void)close(w->fw_fd);
		w->fw_fd = fd;
		if ((slash = strrchr(w->fw_canon, '/')) != NULL)
			*slash = '\0';
		return (0);
	}
	if (fstatat(w->fw_fd, comp, &sb, AT_SYMLINK_NOFOLLOW) == -1) {
		if (errno != ENOENT || *tail != '\0' ||
		    fence_home_mkhomes(w->fw_fd, comp, uid, gid) == -1 ||
		    fstatat(w->fw_fd, comp, &sb, AT_SYMLINK_NOFOLLOW) == -1)
			goto fail;
	}
	if (S_ISLNK(sb.st_mode)) {
		if (!fence_home_trusted(w->fw_fd, &sb))
			w->fw_untrusted = 1;
		return (fence_home_link(w, comp, tail, err, errlen));
	}
	if ((fd = openat(w->fw_fd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1)
		goto fail;
	(void)close(w->fw_fd);
	w->fw_fd = fd;
	if (strlcat(w->fw_canon, "/", sizeof(w->fw_canon)) >=
	    sizeof(w->fw_canon) || strlcat(w->fw_canon, comp,
	    sizeof(w->fw_canon)) >= sizeof(w->fw_canon)) {
		errno = ENAMETOOLONG;
		goto fail;
	}
	return (0);
 fail:
	snprintf(err, errlen, "%s/%s: %s", w->fw_canon, comp, strerror(errno));
	return (-1);
}

/* Resolve <homes> to an O_PATH fd and its real path. */
static int
fence_home_resolve(struct fence_walk *w, const char *homes, uid_t uid,
    gid_t gid, char *err, size_t errlen)
{
	char	 comp[NAME_MAX + 1], *p, *end;
	size_t	 len;

	memset(w, 0, sizeof(*w));
	if ((size_t)snprintf(w->fw_rest, sizeof(w->fw_rest), "%s", homes) >=
	    sizeof(w->fw_rest)) {
		snprintf(err, errlen, "homes path too long");
		return (-1);
	}
	if ((w->fw_fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1) {
		snprintf(err, errlen, "open /: %s", strerror(errno));
		return (-1);
	}
	for (;;) {
		p = w->fw_rest + strspn(w->fw_rest, "/");
		if (*p == '\0')
			break;
		end = p + strcspn(p, "/");
		if ((len = end - p) > NAME_MAX) {
			snprintf(err, errlen, "homes path component too long");
			return (-1);
		}
		memcpy(comp, p, len);
		comp[len] = '\0';
		end += strspn(end, "/");
		memmove(w->fw_rest, end, strlen(end) + 1);
		if (strcmp(comp, ".") == 0)
			continue;
		if (fence_home_step(w, comp, w->fw_rest, uid, gid, err,
		    errlen) == -1)
			return (-1);
	}
	if (w->fw_canon[0] == '\0')
		(void)strlcpy(w->fw_canon, "/", sizeof(w->fw_canon));
	return (0);
}

/* <key> in the resolved homes dir: opened without following, or made. */
static int
fence_home_key(struct fence_walk *w, const char *key, uid_t uid, gid_t gid,
    char *err, size_t errlen)
{
	struct stat	 sb;
	int		 fd, created = 0;

	fd = openat(w->fw_fd, key, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	if (fd == -1 && errno == ENOENT) {
		if (mkdirat(w->fw_fd, key, 0700) == -1 && errno != EEXIST) {
			snprintf(err, errlen, "mkdir %s/%s: %s", w->fw_canon,
			    key, strerror(errno));
			return (-1);
		}
		created = 1;
		fd = openat(w->fw_fd, key, O_RDONLY | O_DIRECTORY |
		    O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd == -1) {
		if ((errno == ELOOP || errno == ENOTDIR) &&
		    fstatat(w->fw_fd, key, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISLNK(sb.st_mode))
			snprintf(err, errlen, "home %s/%s is a symlink: "
			    "refusing a home outside %s", w->fw_canon, key,
			    w->fw_canon);
		else
			snprintf(err, errlen, "open home %s/%s: %s",
			    w->fw_canon, key, strerror(errno));
		return (-1);
	}
	if (fstat(fd, &sb) == -1) {
		snprintf(err, errlen, "stat home: %s", strerror(errno));
		goto fail;
	}
	if (created && sb.st_uid == 0) {
		if (fchown(fd, uid, gid) == -1 || fchmod(fd, 0700) == -1) {
			snprintf(err, errlen, "chown home %s/%s: %s",
			    w->fw_canon, key, strerror(errno));
			goto fail;
		}
		sb.st_uid = uid;
	}
	if (sb.st_uid != uid) {
		snprintf(err, errlen, "home %s/%s belongs to uid %u, not %u",
		    w->fw_canon, key, (unsigned)sb.st_uid, (unsigned)uid);
		goto fail;
	}
	(void)close(fd);
	return (0);
 fail:
	(void)close(fd);
	return (-1);
}

int
fence_home_prepare(const char *homes, const char *key, uid_t uid, gid_t gid,
    char *out, size_t outlen, char *err, size_t errlen)
{
	struct fence_walk	 w;
	struct stat		 sb;

	w.fw_fd = -1;
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
	if (fence_home_resolve(&w, homes, uid, gid, err, errlen) == -1)
		goto fail;
	if (fence_home_is_temp(w.fw_canon)) {
		snprintf(err, errlen, "homes dir %s is under a temporary "
		    "directory", w.fw_canon);
		goto fail;
	}
	if (fstat(w.fw_fd, &sb) == -1 || !S_ISDIR(sb.st_mode)) {
		snprintf(err, errlen, "homes dir %s is not a directory",
		    w.fw_canon);
		goto fail;
	}
	if (sb.st_uid != uid && (sb.st_uid != 0 || w.fw_untrusted)) {
		snprintf(err, errlen, "homes dir %s (uid %u) reached through "
		    "a symlink that is not root's, or owned by someone else",
		    w.fw_canon, (unsigned)sb.st_uid);
		goto fail;
	}
	if (fence_home_key(&w, key, uid, gid, err, errlen) == -1)
		goto fail;
	if ((size_t)snprintf(out, outlen, "%s%s%s", w.fw_canon,
	    strcmp(w.fw_canon, "/") == 0 ? "" : "/", key) >= outlen) {
		snprintf(err, errlen, "home path too long");
		goto fail;
	}
	(void)close(w.fw_fd);
	return (0);
 fail:
	if (w.fw_fd != -1)
		(void)close(w.fw_fd);
	return (-1);
}
