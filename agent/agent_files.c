/*
 * Files of the home, read, written and removed by the agent itself, as
 * the fence's uid and inside the fence (docs/files.md): no root process
 * ever follows a path a fence could have planted.
 *
 * Every path is relative to HOME.  The directory that holds the file is
 * opened from a descriptor of HOME with openat2(RESOLVE_BENEATH |
 * RESOLVE_NO_MAGICLINKS): the kernel refuses an absolute path, a ".."
 * above HOME and any symlink that leads out (EXDEV).  Where the kernel
 * has no openat2 (gVisor's runsc of Debian 12 answers ENOSYS), and to
 * make missing directories, the path is walked one component at a time
 * with O_NOFOLLOW: no symlink at all, and no "..".  The file itself is
 * always one name in that directory, looked at with AT_SYMLINK_NOFOLLOW
 * and opened with O_NOFOLLOW | O_NONBLOCK and checked again with fstat
 * on the descriptor: a FIFO, socket, device or symlink is never opened
 * for reading or writing, and one swapped in between is caught.
 *
 * A write goes to a temporary file in the same directory, chunk by
 * chunk, and is renamed into place after its last: a reader sees the
 * old file or the whole new one.  Nothing here blocks for long: the
 * files are local, and nothing is ever opened that could wait.
 */
#include <sys/types.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/openat2.h>

#include "fenced.h"
#include "log.h"
#include "msg.h"
#include "agent.h"

#define FILES_DIR_MODE		0755
#define FILES_TMP_RANDOM	12	/* hex digits after the prefix */

static int	files_have_openat2 = 1;

static int	files_split(char *, char **, char **);
static int	files_walk(int, const char *, int);
static int	files_dir(const char *, int);
static int	files_kind(mode_t);
static void	files_fail(uint32_t, const char *, int);
static int	files_open_reg(int, const char *, int, struct stat *);
static void	files_answer_stat(struct msg_file *, const struct stat *);
static void	files_list(uint32_t, int);
static void	files_read(uint32_t, struct msg_file *);
static void	files_write(uint32_t, struct msg_file *);
static void	files_delete(uint32_t, struct msg_file *);
static int	files_tmp_ok(const char *);

/*
 * The path's directory and its last name, split in place.  Trailing
 * slashes go; a path that names a directory by "", "." or ".." at its
 * end leaves *name NULL.  -1 (EINVAL) for an empty component at the
 * start: an absolute path, taken as one outside HOME (EXDEV).
 */
static int
files_split(char *path, char **dir, char **name)
{
	char	*slash;
	size_t	 len = strlen(path);

	if (path[0] == '/') {
		errno = EXDEV;
		return (-1);
	}
	while (len > 0 && path[len - 1] == '/')
		path[--len] = '\0';
	if ((slash = strrchr(path, '/')) == NULL) {
		*dir = path + len;	/* "" */
		*name = path;
	} else {
		*slash = '\0';
		*dir = path;
		*name = slash + 1;
	}
	if (**name == '\0' || strcmp(*name, ".") == 0 ||
	    strcmp(*name, "..") == 0) {
		if (slash != NULL)
			*slash = '/';
		*dir = path;
		*name = NULL;
	}
	return (0);
}

static int
files_openat2(int dfd, const char *path, int flags)
{
	struct open_how	 how;
	int		 fd;

	memset(&how, 0, sizeof(how));
	how.flags = flags | O_CLOEXEC;
	how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
	fd = syscall(SYS_openat2, dfd, path, &how, sizeof(how));
	if (fd == -1 && (errno == ENOSYS || errno == EPERM) &&
	    files_have_openat2) {
		/* EPERM: a seccomp filter that does not know it. */
		files_have_openat2 = 0;
		log_debug("%s: no openat2 (%s): walking paths ourselves",
		    __func__, strerror(errno));
		errno = ENOSYS;
	}
	return (fd);
}

/*
 * One component at a time from dfd (a directory of HOME), never
 * following a symlink, refusing ".." (EXDEV); with mk, missing ones
 * are made.  Returns a descriptor of the directory.
 */
static int
files_walk(int dfd, const char *path, int mk)
{
	char		 comp[MSG_FILE_NAME_MAX + 1];
	const char	*p = path, *e;
	struct stat	 st;
	size_t		 n;
	int		 cur, next, save;

	if ((cur = dup(dfd)) == -1)
		return (-1);
	while (*p != '\0') {
		e = strchr(p, '/');
		n = e != NULL ? (size_t)(e - p) : strlen(p);
		if (n >= sizeof(comp)) {
			errno = ENAMETOOLONG;
			goto fail;
		}
		memcpy(comp, p, n);
		comp[n] = '\0';
		p += n;
		while (*p == '/')
			p++;
		if (n == 0 || strcmp(comp, ".") == 0)
			continue;
		if (strcmp(comp, "..") == 0) {
			errno = EXDEV;
			goto fail;
		}
		next = openat(cur, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW |
		    O_CLOEXEC);
		if (next == -1 && errno == ENOENT && mk) {
			if (mkdirat(cur, comp, FILES_DIR_MODE) == -1 &&
			    errno != EEXIST)
				goto fail;
			next = openat(cur, comp, O_PATH | O_DIRECTORY |
			    O_NOFOLLOW | O_CLOEXEC);
		}
		/*
		 * A symlink in the way (ENOTDIR from O_DIRECTORY |
		 * O_NOFOLLOW) is never followed here: for all we know it
		 * leads out, and it counts as doing so.
		 */
		if (next == -1 && errno == ENOTDIR && fstatat(cur, comp, &st,
		    AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
			errno = EXDEV;
		if (next == -1)
			goto fail;
		/* O_PATH | O_NOFOLLOW may hand back the symlink itself. */
		if (fstat(next, &st) == -1 || !S_ISDIR(st.st_mode)) {
			close(next);
			errno = S_ISLNK(st.st_mode) ? EXDEV : ENOTDIR;
			goto fail;
		}
		close(cur);
		cur = next;
	}
	return (cur);
 fail:
	save = errno;
	close(cur);
	errno = save;
	return (-1);
}

/* A descriptor of the directory at path ("": HOME) inside HOME. */
static int
files_dir(const char *path, int mk)
{
	int	 home, fd, save;

	if ((home = open(agent_env->a_home, O_PATH | O_DIRECTORY |
	    O_CLOEXEC)) == -1)
		return (-1);
	fd = -1;
	if (files_have_openat2 && !mk) {
		fd = files_openat2(home, path[0] != '\0' ? path : ".",
		    O_PATH | O_DIRECTORY);
		if (fd == -1 && errno != ENOSYS)
			goto done;
	}
	if (fd == -1)
		fd = files_walk(home, path, mk);
 done:
	save = errno;
	close(home);
	errno = save;
	return (fd);
}

static int
files_kind(mode_t m)
{
	if (S_ISREG(m))
		return (MSG_FILE_REG);
	if (S_ISDIR(m))
		return (MSG_FILE_DIR);
	if (S_ISLNK(m))
		return (MSG_FILE_LNK);
	if (S_ISFIFO(m))
		return (MSG_FILE_FIFO);
	if (S_ISSOCK(m))
		return (MSG_FILE_SOCK);
	if (S_ISCHR(m) || S_ISBLK(m))
		return (MSG_FILE_DEV);
	return (MSG_FILE_OTHER);
}

static const char *
files_kind_name(int kind)
{
	switch (kind) {
	case MSG_FILE_DIR:	return ("a directory");
	case MSG_FILE_LNK:	return ("a symbolic link");
	case MSG_FILE_FIFO:	return ("a FIFO");
	case MSG_FILE_SOCK:	return ("a socket");
	case MSG_FILE_DEV:	return ("a device");
	default:		return ("not a regular file");
	}
}

/* An errno as the error code of docs/files.md. */
static void
files_fail(uint32_t id, const char *path, int e)
{
	const char	*code;

	switch (e) {
	case EXDEV:
		code = "file-outside-home";
		break;
	case ENOENT:
	case ENOTDIR:
		code = "file-not-found";
		break;
	case ELOOP:
	case EISDIR:
		code = "file-not-regular";
		break;
	case EACCES:
	case EPERM:
	case EROFS:
		code = "file-denied";
		break;
	case ENAMETOOLONG:
	case EINVAL:
		code = "file-bad-path";
		break;
	case ENOSPC:
	case EDQUOT:
	case EFBIG:
		code = "file-no-space";
		break;
	case ENOTEMPTY:
		code = "file-not-empty";
		break;
	case EEXIST:
		code = "file-exists";
		break;
	case ESTALE:
		code = "file-changed";
		break;
	default:
		code = "file-failed";
		break;
	}
	agent_error(id, code, "%s: %s", path[0] != '\0' ? path : "HOME",
	    e == EXDEV ? "outside HOME" : e == ELOOP ? "a symbolic link "
	    "(none is followed at the last component)" : e == ESTALE ?
	    "changed while it was read or written" : strerror(e));
}

/*
 * name in dfd, opened for reading (or, with wr, writing) only if it is
 * a regular file, checked before and after the open.  -1 with errno
 * ELOOP, EISDIR or EINVAL (with st's mode set) for anything else.
 */
static int
files_open_reg(int dfd, const char *name, int wr, struct stat *st)
{
	struct stat	 before;
	int		 fd, save;

	if (fstatat(dfd, name, &before, AT_SYMLINK_NOFOLLOW) == -1)
		return (-1);
	*st = before;
	if (!S_ISREG(before.st_mode)) {
		errno = S_ISLNK(before.st_mode) ? ELOOP :
		    S_ISDIR(before.st_mode) ? EISDIR : EINVAL;
		return (-1);
	}
	if ((fd = openat(dfd, name, (wr ? O_WRONLY : O_RDONLY) | O_NOFOLLOW |
	    O_NONBLOCK | O_NOCTTY | O_CLOEXEC)) == -1)
		return (-1);
	if (fstat(fd, st) == -1)
		goto fail;
	if (!S_ISREG(st->st_mode) || st->st_ino != before.st_ino ||
	    st->st_dev != before.st_dev) {
		errno = ESTALE;
		goto fail;
	}
	return (fd);
 fail:
	save = errno;
	close(fd);
	errno = save;
	return (-1);
}

static void
files_answer_stat(struct msg_file *a, const struct stat *st)
{
	a->fl_kind = files_kind(st->st_mode);
	a->fl_mode = st->st_mode & 07777;
	a->fl_size = st->st_size;
	a->fl_ino = st->st_ino;
	a->fl_mtime = st->st_mtim.tv_sec;
}

static void
files_reply(uint32_t id, struct msg_file *a)
{
	void	*buf;
	size_t	 len;

	if (msg_file_encode(a, &buf, &len) == -1)
		fatal("%s: msg_file_encode", __func__);
	agent_reply(IMSG_AGENT_FILE, id, buf, len);
}

/* A directory's entries, MSG_FILE_LIST_MAX at most, in readdir order. */
static void
files_list(uint32_t id, int dfd)
{
	struct msg_filelist l;
	struct msg_fileent *e;
	struct dirent	*de;
	struct stat	 st;
	DIR		*d;
	void		*buf;
	size_t		 len;
	int		 fd;

	memset(&l, 0, sizeof(l));
	if ((fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1 ||
	    (d = fdopendir(fd)) == NULL) {
		if (fd != -1)
			close(fd);
		files_fail(id, "", errno);
		return;
	}
	if ((l.fls_ents = calloc(MSG_FILE_LIST_MAX,
	    sizeof(*l.fls_ents))) == NULL)
		fatal("%s: calloc", __func__);
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0 ||
		    strlen(de->d_name) > MSG_FILE_NAME_MAX)
			continue;
		if (l.fls_count == MSG_FILE_LIST_MAX) {
			l.fls_truncated = 1;
			break;
		}
		if (fstatat(dirfd(d), de->d_name, &st,
		    AT_SYMLINK_NOFOLLOW) == -1)
			continue;	/* gone meanwhile */
		e = &l.fls_ents[l.fls_count++];
		strlcpy(e->fe_name, de->d_name, sizeof(e->fe_name));
		e->fe_kind = files_kind(st.st_mode);
		e->fe_mode = st.st_mode & 07777;
		e->fe_size = st.st_size < 0 ? 0 : st.st_size;
		e->fe_mtime = st.st_mtim.tv_sec;
	}
	closedir(d);
	if (msg_filelist_encode(&l, &buf, &len) == -1)
		fatal("%s: msg_filelist_encode", __func__);
	free(l.fls_ents);
	agent_reply(IMSG_AGENT_FILE_LIST, id, buf, len);
}

/*
 * A chunk of a regular file (fl_length bytes from fl_offset), or the
 * listing of a directory (at offset 0 only).  A later chunk names the
 * inode of the first: another file there now is file-changed.
 */
static void
files_read(uint32_t id, struct msg_file *fl)
{
	struct msg_file	 a;
	struct stat	 st;
	char		 path[PATH_MAX], *dir, *name;
	ssize_t		 n;
	int		 dfd, fd;

	strlcpy(path, fl->fl_path, sizeof(path));
	if (files_split(path, &dir, &name) == -1 ||
	    (dfd = files_dir(dir, 0)) == -1) {
		files_fail(id, fl->fl_path, errno);
		return;
	}
	if (name == NULL) {
		if (fl->fl_offset != 0)
			files_fail(id, fl->fl_path, EISDIR);
		else
			files_list(id, dfd);
		close(dfd);
		return;
	}
	if ((fd = files_open_reg(dfd, name, 0, &st)) == -1) {
		if (errno == EISDIR && fl->fl_offset == 0 &&
		    (fd = openat(dfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW |
		    O_CLOEXEC)) != -1) {
			files_list(id, fd);
			close(fd);
		} else if (errno == EINVAL)
			agent_error(id, "file-not-regular", "%s: %s",
			    fl->fl_path, files_kind_name(files_kind(
			    st.st_mode)));
		else
			files_fail(id, fl->fl_path, errno);
		close(dfd);
		return;
	}
	close(dfd);
	if (fl->fl_ino != 0 && st.st_ino != fl->fl_ino) {
		close(fd);
		files_fail(id, fl->fl_path, ESTALE);
		return;
	}
	memset(&a, 0, sizeof(a));
	files_answer_stat(&a, &st);
	a.fl_offset = fl->fl_offset;
	if ((a.fl_data = malloc(fl->fl_length > 0 ? fl->fl_length : 1)) ==
	    NULL)
		fatal("%s: malloc", __func__);
	n = fl->fl_length > 0 ? pread(fd, a.fl_data, fl->fl_length,
	    fl->fl_offset) : 0;
	close(fd);
	if (n == -1) {
		free(a.fl_data);
		files_fail(id, fl->fl_path, errno);
		return;
	}
	a.fl_data_len = n;
	files_reply(id, &a);
	free(a.fl_data);
}

/* One of our temporaries: the prefix, then hex digits, one name. */
static int
files_tmp_ok(const char *tmp)
{
	size_t	 plen = strlen(MSG_FILE_TMP_PREFIX);

	return (strncmp(tmp, MSG_FILE_TMP_PREFIX, plen) == 0 &&
	    strlen(tmp) == plen + FILES_TMP_RANDOM &&
	    strspn(tmp + plen, "0123456789abcdef") == FILES_TMP_RANDOM);
}

static int
files_tmp_make(int dfd, char *tmp, size_t size)
{
	uint32_t r[2];
	int	 fd, tries;

	for (tries = 0; tries < 8; tries++) {
		arc4random_buf(r, sizeof(r));
		snprintf(tmp, size, "%s%08x%04x", MSG_FILE_TMP_PREFIX, r[0],
		    r[1] & 0xffff);
		fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
		    O_NOCTTY | O_CLOEXEC, 0600);
		if (fd != -1 || errno != EEXIST)
			return (fd);
	}
	return (-1);
}

static int
files_write_all(int fd, const uint8_t *p, size_t len, off_t off)
{
	ssize_t	 n;

	while (len > 0) {
		if ((n = pwrite(fd, p, len, off)) == -1) {
			if (errno == EINTR)
				continue;
			return (-1);
		}
		p += n;
		len -= n;
		off += n;
	}
	return (0);
}

/*
 * A chunk of a write: the first makes the temporary, each one is
 * written at its offset (which must be the temporary's size: nothing
 * else wrote it meanwhile), the last renames it over the name.  Any
 * failure removes the temporary; so does ABORT.
 */
static void
files_write(uint32_t id, struct msg_file *fl)
{
	struct msg_file	 a;
	struct stat	 st, old;
	char		 path[PATH_MAX], *dir, *name;
	int		 dfd, fd = -1, e, existed;
	unsigned int	 rflags;

	strlcpy(path, fl->fl_path, sizeof(path));
	if (files_split(path, &dir, &name) == -1) {
		files_fail(id, fl->fl_path, errno);
		return;
	}
	if (name == NULL) {
		agent_error(id, "file-bad-path", "%s: names a directory, not "
		    "a file", fl->fl_path[0] != '\0' ? fl->fl_path : "HOME");
		return;
	}
	if ((fl->fl_flags & MSG_FILE_FIRST) == 0 && !files_tmp_ok(fl->fl_tmp)) {
		agent_error(id, "file-bad-path", "not a temporary of ours");
		return;
	}
	if ((fl->fl_mode & ~0777) != 0 || fl->fl_offset + fl->fl_data_len >
	    fl->fl_size) {
		agent_error(id, "file-bad-request", "mode over 0777 or more "
		    "bytes than the size said");
		return;
	}
	if ((dfd = files_dir(dir, (fl->fl_flags & MSG_FILE_MKDIR) &&
	    (fl->fl_flags & MSG_FILE_FIRST))) == -1) {
		files_fail(id, fl->fl_path, errno);
		return;
	}
	memset(&a, 0, sizeof(a));
	if (fl->fl_flags & MSG_FILE_ABORT) {
		(void)unlinkat(dfd, fl->fl_tmp, 0);
		close(dfd);
		files_reply(id, &a);
		return;
	}
	if (fl->fl_flags & MSG_FILE_FIRST) {
		existed = fstatat(dfd, name, &old, AT_SYMLINK_NOFOLLOW) == 0;
		if (existed && !S_ISREG(old.st_mode)) {
			agent_error(id, "file-not-regular", "%s: %s",
			    fl->fl_path, files_kind_name(files_kind(
			    old.st_mode)));
			goto done;
		}
		if (existed && (fl->fl_flags & MSG_FILE_EXCL)) {
			files_fail(id, fl->fl_path, EEXIST);
			goto done;
		}
		if ((fd = files_tmp_make(dfd, a.fl_tmp, sizeof(a.fl_tmp))) ==
		    -1) {
			files_fail(id, fl->fl_path, errno);
			goto done;
		}
	} else {
		strlcpy(a.fl_tmp, fl->fl_tmp, sizeof(a.fl_tmp));
		if ((fd = files_open_reg(dfd, a.fl_tmp, 1, &st)) == -1 ||
		    (uint64_t)st.st_size != fl->fl_offset ||
		    st.st_nlink != 1) {
			e = fd == -1 ? errno : ESTALE;
			goto fail;
		}
	}
	if (files_write_all(fd, fl->fl_data, fl->fl_data_len,
	    fl->fl_offset) == -1) {
		e = errno;
		goto fail;
	}
	if (fl->fl_flags & MSG_FILE_LAST) {
		if (fchmod(fd, fl->fl_mode) == -1 || fstat(fd, &st) == -1) {
			e = errno;
			goto fail;
		}
		existed = fstatat(dfd, name, &old, AT_SYMLINK_NOFOLLOW) == 0;
		if (existed && !S_ISREG(old.st_mode)) {
			e = S_ISDIR(old.st_mode) ? EISDIR : ELOOP;
			goto fail;
		}
		rflags = (fl->fl_flags & MSG_FILE_EXCL) ? RENAME_NOREPLACE : 0;
		if (renameat2(dfd, a.fl_tmp, dfd, name, rflags) == -1 &&
		    (rflags != 0 || (errno != ENOSYS && errno != EINVAL) ||
		    renameat(dfd, a.fl_tmp, dfd, name) == -1)) {
			e = errno;
			goto fail;
		}
		files_answer_stat(&a, &st);
		a.fl_created = !existed;
		a.fl_tmp[0] = '\0';
	} else
		a.fl_size = fl->fl_offset + fl->fl_data_len;
	files_reply(id, &a);
	goto done;
 fail:
	(void)unlinkat(dfd, a.fl_tmp, 0);
	files_fail(id, fl->fl_path, e);
 done:
	if (fd != -1)
		close(fd);
	close(dfd);
}

/* A file, symlink, FIFO or the like goes; a directory only if empty. */
static void
files_delete(uint32_t id, struct msg_file *fl)
{
	struct msg_file	 a;
	struct stat	 st;
	char		 path[PATH_MAX], *dir, *name;
	int		 dfd;

	strlcpy(path, fl->fl_path, sizeof(path));
	if (files_split(path, &dir, &name) == -1) {
		files_fail(id, fl->fl_path, errno);
		return;
	}
	if (name == NULL) {
		agent_error(id, "file-bad-path", "%s: name a file or a "
		    "directory by its own name", fl->fl_path[0] != '\0' ?
		    fl->fl_path : "HOME");
		return;
	}
	if ((dfd = files_dir(dir, 0)) == -1) {
		files_fail(id, fl->fl_path, errno);
		return;
	}
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == -1 ||
	    unlinkat(dfd, name, S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0) ==
	    -1) {
		files_fail(id, fl->fl_path, errno == EEXIST ? ENOTEMPTY :
		    errno);
		close(dfd);
		return;
	}
	close(dfd);
	memset(&a, 0, sizeof(a));
	files_answer_stat(&a, &st);
	files_reply(id, &a);
}

void
agent_files(uint32_t type, uint32_t id, struct msg_file *fl)
{
	switch (type) {
	case IMSG_AGENT_FILE_READ:
		files_read(id, fl);
		break;
	case IMSG_AGENT_FILE_WRITE:
		files_write(id, fl);
		break;
	case IMSG_AGENT_FILE_DELETE:
		files_delete(id, fl);
		break;
	}
	explicit_bzero(fl->fl_bearer, sizeof(fl->fl_bearer));
	msg_file_free(fl);
}
