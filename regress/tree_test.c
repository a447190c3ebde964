/*
 * tree_test: fencer/fencer_tree.c, the file engine of snapshots.  Each
 * case builds a tree owned by a uid of its own (a high one no account
 * holds), under a fresh directory of /var/tmp, and has it copied,
 * measured or emptied as that uid; then it judges, as root, what was
 * made.  The attacks are the ones a hostile fence or owner can mount:
 * symlinks out, files of others, names swapped while copied, bounds,
 * the copying process killed or stopped by its own uid.
 */
#include <sys/types.h>
#include <sys/capability.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/xattr.h>

#include <dirent.h>
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <atf-c.h>

#include "fencer_tree.h"
#include "lockdown.h"

#define TIB		(1ULL << 40)

static char	 work[64];	/* the case's directory */
static uid_t	 tuid;
static gid_t	 tgid;

/* An id no account or group holds, unique to this process. */
static uid_t
free_id(uint32_t salt)
{
	uid_t	 u;

	for (u = 1700000000U + ((uint32_t)getpid() % 100000U) * 64U + salt;
	    getpwuid(u) != NULL || getgrgid((gid_t)u) != NULL; u += 7919)
		;
	return (u);
}

/* The case's ids and directory, whose name cleanup finds in ./work. */
static void
setup(void)
{
	FILE	*f;

	tuid = free_id(0);
	tgid = (gid_t)tuid;
	strlcpy(work, "/var/tmp/tree_test.XXXXXX", sizeof(work));
	ATF_REQUIRE(mkdtemp(work) != NULL);
	ATF_REQUIRE(chmod(work, 0755) == 0);
	ATF_REQUIRE((f = fopen("work", "w")) != NULL);
	fprintf(f, "%s\n", work);
	fclose(f);
}

static void
cleanup(void)
{
	char	 line[64], cmd[256];
	FILE	*f;

	if ((f = fopen("work", "r")) == NULL)
		return;
	if (fgets(line, sizeof(line), f) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		if (strncmp(line, "/var/tmp/tree_test.", 19) == 0 &&
		    strchr(line, '\'') == NULL) {
			snprintf(cmd, sizeof(cmd), "umount -l '%s/mnt' "
			    "2>/dev/null; rm -rf '%s'", line, line);
			if (system(cmd) != 0)
				warnx("%s failed", cmd);
		}
	}
	fclose(f);
}

/* mkdir below dfd, the uid's, with mode; its descriptor back. */
static int
mkdir_as(int dfd, const char *name, mode_t mode)
{
	int	 fd;

	ATF_REQUIRE_MSG(mkdirat(dfd, name, 0700) == 0, "mkdir %s: %s", name,
	    strerror(errno));
	ATF_REQUIRE((fd = openat(dfd, name, O_RDONLY | O_DIRECTORY)) != -1);
	ATF_REQUIRE(fchown(fd, tuid, tgid) == 0);
	ATF_REQUIRE(fchmod(fd, mode) == 0);
	return (fd);
}

static int
work_dir(const char *name, mode_t mode)
{
	int	 w, fd;

	ATF_REQUIRE((w = open(work, O_RDONLY | O_DIRECTORY)) != -1);
	fd = mkdir_as(w, name, mode);
	close(w);
	return (fd);
}

static void
mkfile_own(int dfd, const char *name, const char *data, mode_t mode,
    uid_t uid)
{
	int	 fd;

	ATF_REQUIRE_MSG((fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL,
	    0600)) != -1, "create %s: %s", name, strerror(errno));
	ATF_REQUIRE(write(fd, data, strlen(data)) == (ssize_t)strlen(data));
	ATF_REQUIRE(fchown(fd, uid, (gid_t)uid) == 0);
	ATF_REQUIRE(fchmod(fd, mode) == 0);
	close(fd);
}

static void
mkfile_as(int dfd, const char *name, const char *data, mode_t mode)
{
	mkfile_own(dfd, name, data, mode, tuid);
}

static void
mklink_as(int dfd, const char *name, const char *target)
{
	ATF_REQUIRE(symlinkat(target, dfd, name) == 0);
	ATF_REQUIRE(fchownat(dfd, name, tuid, tgid, AT_SYMLINK_NOFOLLOW) ==
	    0);
}

static void
check_content(int dfd, const char *name, const char *want)
{
	char	 buf[256];
	ssize_t	 n;
	int	 fd;

	ATF_REQUIRE_MSG((fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW)) !=
	    -1, "open %s: %s", name, strerror(errno));
	ATF_REQUIRE((n = read(fd, buf, sizeof(buf) - 1)) >= 0);
	buf[n] = '\0';
	ATF_CHECK_STREQ_MSG(buf, want, "content of %s", name);
	close(fd);
}

static void
check_link(int dfd, const char *name, const char *want)
{
	char	 buf[PATH_MAX];
	ssize_t	 n;

	ATF_REQUIRE_MSG((n = readlinkat(dfd, name, buf, sizeof(buf) - 1)) !=
	    -1, "readlink %s: %s", name, strerror(errno));
	buf[n] = '\0';
	ATF_CHECK_STREQ_MSG(buf, want, "link %s", name);
}

static mode_t
mode_of(int dfd, const char *name, struct stat *sb)
{
	ATF_REQUIRE_MSG(fstatat(dfd, name, sb, AT_SYMLINK_NOFOLLOW) == 0,
	    "stat %s: %s", name, strerror(errno));
	ATF_CHECK_EQ_MSG(sb->st_uid, tuid, "owner of %s", name);
	return (sb->st_mode);
}

/* Every entry below dfd, depth first: how many regular files hold s. */
static int
count_holding(int dfd, const char *s, int *files)
{
	struct dirent	*de;
	struct stat	 sb;
	char		 buf[4096];
	ssize_t		 n;
	DIR		*d;
	int		 fd, found = 0;

	ATF_REQUIRE((fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY)) != -1);
	ATF_REQUIRE((d = fdopendir(fd)) != NULL);
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		ATF_REQUIRE(fstatat(dirfd(d), de->d_name, &sb,
		    AT_SYMLINK_NOFOLLOW) == 0);
		if (S_ISDIR(sb.st_mode)) {
			fd = openat(dirfd(d), de->d_name, O_RDONLY |
			    O_DIRECTORY | O_NOFOLLOW);
			ATF_REQUIRE(fd != -1);
			found += count_holding(fd, s, files);
			close(fd);
		} else if (S_ISREG(sb.st_mode)) {
			(*files)++;
			fd = openat(dirfd(d), de->d_name, O_RDONLY |
			    O_NOFOLLOW);
			ATF_REQUIRE(fd != -1);
			n = read(fd, buf, sizeof(buf) - 1);
			ATF_REQUIRE(n >= 0);
			buf[n] = '\0';
			if (strstr(buf, s) != NULL)
				found++;
			close(fd);
		}
	}
	closedir(d);
	return (found);
}

static int
entries(int dfd)
{
	struct dirent	*de;
	DIR		*d;
	int		 fd, n = 0;

	ATF_REQUIRE((fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY)) != -1);
	ATF_REQUIRE((d = fdopendir(fd)) != NULL);
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") != 0 &&
		    strcmp(de->d_name, "..") != 0)
			n++;
	closedir(d);
	return (n);
}

/* A process of the uid, doing fn until killed; its pid back. */
static pid_t
as_uid(void (*fn)(int), int arg)
{
	pid_t	 pid;

	ATF_REQUIRE((pid = fork()) != -1);
	if (pid == 0) {
		if (setgroups(0, NULL) == -1 ||
		    setresgid(tgid, tgid, tgid) == -1 ||
		    setresuid(tuid, tuid, tuid) == -1)
			_exit(1);
		fn(arg);
		_exit(0);
	}
	return (pid);
}

static void
stop(pid_t pid)
{
	int	 st;

	(void)kill(pid, SIGKILL);
	while (waitpid(pid, &st, 0) == -1 && errno == EINTR)
		;
}

ATF_TC_WITH_CLEANUP(copy_kinds);
ATF_TC_HEAD(copy_kinds, tc)
{
	atf_tc_set_md_var(tc, "descr", "files, directories, symlinks, fifos, "
	    "modes, times and user xattrs are copied; setuid bits, sockets, "
	    "device nodes and other xattrs are not; hard links come apart");
	atf_tc_set_md_var(tc, "require.user", "root");
}
ATF_TC_BODY(copy_kinds, tc)
{
	struct tree_bounds	 b = { 0, 0 };
	struct tree_count	 c;
	struct sockaddr_un	 sun;
	struct timespec		 ts[2];
	struct stat		 sb, sa;
	char			 err[512], val[64];
	int			 src, dst, fd, s, cwd, xattrs = 0;
	ssize_t			 n;

	setup();
	src = work_dir("src", 0755);
	dst = work_dir("dst", 0700);
	mkfile_as(src, "a", "hello\n", 0640);
	ts[0].tv_sec = 1000000000;
	ts[0].tv_nsec = 5;
	ts[1].tv_sec = 1234567890;
	ts[1].tv_nsec = 123456789;
	ATF_REQUIRE(utimensat(src, "a", ts, 0) == 0);
	fd = mkdir_as(src, "d", 0750);
	mkfile_as(fd, "b", "inner", 0600);
	ATF_REQUIRE(futimens(fd, ts) == 0);
	close(fd);
	fd = mkdir_as(src, "ro", 0700);
	mkfile_as(fd, "c", "c", 0644);
	ATF_REQUIRE(fchmod(fd, 0500) == 0);
	close(fd);
	close(mkdir_as(src, "st", 01777));
	mklink_as(src, "l", "a");
	ATF_REQUIRE(utimensat(src, "l", ts, AT_SYMLINK_NOFOLLOW) == 0);
	ATF_REQUIRE(mkfifoat(src, "f", 0620) == 0);
	ATF_REQUIRE(fchownat(src, "f", tuid, tgid, 0) == 0);
	ATF_REQUIRE(fchmodat(src, "f", 0620, 0) == 0);
	mkfile_as(src, "suid", "#!/bin/sh\n", 06755);
	mkfile_as(src, "x", "xattrs", 0644);
	ATF_REQUIRE((fd = openat(src, "x", O_RDONLY)) != -1);
	/* tmpfs has user xattrs from Linux 6.6 on (the v2 guest's: 6.1). */
	if (fsetxattr(fd, "user.test", "value", 5, 0) == 0)
		xattrs = 1;
	else
		ATF_REQUIRE_EQ(EOPNOTSUPP, errno);
	ATF_REQUIRE(fsetxattr(fd, "trusted.t", "root's", 6, 0) == 0);
	close(fd);
	mkfile_as(src, "new\nline", "nl", 0644);
	ATF_REQUIRE(linkat(src, "x", src, "h", 0) == 0);
	/* A socket and a device node: skipped. */
	ATF_REQUIRE((cwd = open(".", O_RDONLY | O_DIRECTORY)) != -1);
	ATF_REQUIRE(fchdir(src) == 0);
	ATF_REQUIRE((s = socket(AF_UNIX, SOCK_STREAM, 0)) != -1);
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	strlcpy(sun.sun_path, "s", sizeof(sun.sun_path));
	ATF_REQUIRE(bind(s, (struct sockaddr *)&sun, sizeof(sun)) == 0);
	close(s);
	ATF_REQUIRE(fchdir(cwd) == 0);
	close(cwd);
	ATF_REQUIRE(fchownat(src, "s", tuid, tgid, 0) == 0);
	ATF_REQUIRE(mknodat(src, "dev", S_IFCHR | 0666, makedev(1, 3)) == 0);

	memset(&c, 0xff, sizeof(c));
	ATF_REQUIRE_MSG(tree_copy(src, dst, tuid, tgid, &b, &c, err,
	    sizeof(err)) == 0, "%s", err);

	/* a, d, d/b, ro, ro/c, st, l, f, suid, x, new\nline, h */
	ATF_CHECK_EQ(c.tc_files, 12);
	ATF_CHECK_EQ(c.tc_bytes, 6 + 5 + 1 + 1 + 10 + 6 + 2 + 6);
	ATF_CHECK(c.tc_disk > 0);
	ATF_CHECK_EQ(c.tc_shared, 0);
	ATF_CHECK_EQ(mode_of(dst, "a", &sb), S_IFREG | 0640);
	ATF_CHECK_EQ(sb.st_mtim.tv_sec, 1234567890);
	ATF_CHECK_EQ(sb.st_mtim.tv_nsec, 123456789);
	ATF_CHECK_EQ(sb.st_atim.tv_sec, 1000000000);
	check_content(dst, "a", "hello\n");
	/* Hard links come apart: two files. */
	ATF_CHECK_EQ(mode_of(dst, "h", &sa), S_IFREG | 0644);
	ATF_CHECK_EQ(mode_of(dst, "x", &sb), S_IFREG | 0644);
	ATF_CHECK(sa.st_ino != sb.st_ino);
	ATF_CHECK_EQ(sa.st_nlink, 1);
	check_content(dst, "h", "xattrs");
	ATF_CHECK_EQ(mode_of(dst, "d", &sb), S_IFDIR | 0750);
	ATF_CHECK_EQ(sb.st_mtim.tv_sec, 1234567890);
	ATF_CHECK_EQ(mode_of(dst, "d/b", &sb), S_IFREG | 0600);
	check_content(dst, "d/b", "inner");
	ATF_CHECK_EQ(mode_of(dst, "ro", &sb), S_IFDIR | 0500);
	check_content(dst, "ro/c", "c");
	ATF_CHECK_EQ(mode_of(dst, "st", &sb), S_IFDIR | 01777);
	ATF_CHECK_EQ(mode_of(dst, "l", &sb), S_IFLNK | 0777);
	ATF_CHECK_EQ(sb.st_mtim.tv_sec, 1234567890);
	check_link(dst, "l", "a");
	ATF_CHECK_EQ(mode_of(dst, "f", &sb), S_IFIFO | 0620);
	ATF_CHECK_EQ(mode_of(dst, "suid", &sb), S_IFREG | 0755);
	check_content(dst, "new\nline", "nl");
	ATF_REQUIRE((fd = openat(dst, "x", O_RDONLY)) != -1);
	if (xattrs) {
		n = fgetxattr(fd, "user.test", val, sizeof(val));
		ATF_CHECK_EQ(n, 5);
		ATF_CHECK(n == 5 && memcmp(val, "value", 5) == 0);
	}
	ATF_CHECK(fgetxattr(fd, "trusted.t", val, sizeof(val)) == -1 &&
	    errno == ENODATA);
	close(fd);
	ATF_CHECK(fstatat(dst, "s", &sb, AT_SYMLINK_NOFOLLOW) == -1 &&
	    errno == ENOENT);
	ATF_CHECK(fstatat(dst, "dev", &sb, AT_SYMLINK_NOFOLLOW) == -1 &&
	    errno == ENOENT);
	ATF_CHECK_EQ(entries(dst), 10);
}
ATF_TC_CLEANUP(copy_kinds, tc)
{
	cleanup();
}

ATF_TC_WITH_CLEANUP(copy_sparse);
ATF_TC_HEAD(copy_sparse, tc)
{
	atf_tc_set_md_var(tc, "descr", "a sparse 1 TiB file stays sparse, "
	    "and counts as 1 TiB against the bound of bytes");
	atf_tc_set_md_var(tc, "require.user", "root");
}
ATF_TC_BODY(copy_sparse, tc)
{
	struct tree_bounds	 b = { 0, 0 };
	struct tree_count	 c;
	struct stat		 sb;
	char			 err[512], x;
	int			 src, dst, fd;

	setup();
	src = work_dir("src", 0755);
	dst = work_dir("dst", 0700);
	ATF_REQUIRE((fd = openat(src, "big", O_RDWR | O_CREAT, 0644)) != -1);
	ATF_REQUIRE(fchown(fd, tuid, tgid) == 0);
	if (ftruncate(fd, (off_t)TIB) == -1)
		atf_tc_skip("this filesystem holds no 1 TiB file: %s",
		    strerror(errno));
	ATF_REQUIRE(pwrite(fd, "x", 1, (off_t)(TIB / 2)) == 1);
	close(fd);

	ATF_REQUIRE_MSG(tree_copy(src, dst, tuid, tgid, &b, &c, err,
	    sizeof(err)) == 0, "%s", err);
	ATF_CHECK_EQ(c.tc_bytes, TIB);
	ATF_CHECK_EQ(c.tc_files, 1);
	ATF_CHECK_MSG(c.tc_disk < (1 << 20), "tc_disk %llu",
	    (unsigned long long)c.tc_disk);
	ATF_REQUIRE(fstatat(dst, "big", &sb, AT_SYMLINK_NOFOLLOW) == 0);
	ATF_CHECK_EQ((uint64_t)sb.st_size, TIB);
	ATF_CHECK_MSG((uint64_t)sb.st_blocks * 512 < (1 << 20), "blocks %llu",
	    (unsigned long long)sb.st_blocks);
	ATF_REQUIRE((fd = openat(dst, "big", O_RDONLY)) != -1);
	ATF_REQUIRE(pread(fd, &x, 1, (off_t)(TIB / 2)) == 1);
	ATF_CHECK_EQ(x, 'x');
	ATF_REQUIRE(pread(fd, &x, 1, (off_t)(TIB / 2) - 1) == 1);
	ATF_CHECK_EQ(x, '\0');
	close(fd);

	/* Logical size against the bound, though it takes a block. */
	close(dst);
	dst = work_dir("dst2", 0700);
	b.tb_bytes = 1ULL << 30;
	ATF_CHECK(tree_copy(src, dst, tuid, tgid, &b, &c, err,
	    sizeof(err)) == -1);
	ATF_CHECK_STREQ(err, "home holds more than 1073741824 bytes");
	ATF_CHECK(tree_measure(src, tuid, tgid, &b, &c, err,
	    sizeof(err)) == -1);
	ATF_CHECK_STREQ(err, "home holds more than 1073741824 bytes");
}
ATF_TC_CLEANUP(copy_sparse, tc)
{
	cleanup();
}

ATF_TC_WITH_CLEANUP(copy_across);
ATF_TC_HEAD(copy_across, tc)
{
	atf_tc_set_md_var(tc, "descr", "from tmpfs to the work directory's "
	    "filesystem, where neither FICLONE nor copy_file_range works: "
	    "read and write, holes kept, bytes equal");
	atf_tc_set_md_var(tc, "require.user", "root");
}
ATF_TC_BODY(copy_across, tc)
{
	struct tree_bounds	 b = { 0, 0 };
	struct tree_count	 c;
	struct stat		 sb;
	char			 err[512], path[PATH_MAX], *data, *back;
	size_t			 len = 3 << 20, i;
	int			 w, m, src, dst, fd;

	setup();
	snprintf(path, sizeof(path), "%s/mnt", work);
	ATF_REQUIRE(mkdir(path, 0755) == 0);
	if (mount("tree_test", path, "tmpfs", 0, "size=16m") == -1)
		atf_tc_skip("cannot mount a tmpfs: %s", strerror(errno));
	ATF_REQUIRE((m = open(path, O_RDONLY | O_DIRECTORY)) != -1);
	src = mkdir_as(m, "src", 0755);
	ATF_REQUIRE((w = open(work, O_RDONLY | O_DIRECTORY)) != -1);
	dst = mkdir_as(w, "dst", 0700);
	ATF_REQUIRE((data = malloc(len)) != NULL);
	ATF_REQUIRE((back = malloc(len)) != NULL);
	for (i = 0; i < len; i++)
		data[i] = (char)(i * 7 + i / 4096);
	memset(data + (1 << 20), 0, 1 << 20);	/* a hole, 1 MiB */
	ATF_REQUIRE((fd = openat(src, "f", O_WRONLY | O_CREAT, 0644)) != -1);
	ATF_REQUIRE(pwrite(fd, data, 1 << 20, 0) == 1 << 20);
	ATF_REQUIRE(pwrite(fd, data + (2 << 20), 1 << 20, 2 << 20) ==
	    1 << 20);
	ATF_REQUIRE(fchown(fd, tuid, tgid) == 0);
	close(fd);

	ATF_REQUIRE_MSG(tree_copy(src, dst, tuid, tgid, &b, &c, err,
	    sizeof(err)) == 0, "%s", err);
	ATF_CHECK_EQ(c.tc_bytes, len);
	ATF_CHECK_EQ(c.tc_shared, 0);
	ATF_REQUIRE((fd = openat(dst, "f", O_RDONLY)) != -1);
	ATF_REQUIRE(fstat(fd, &sb) == 0);
	ATF_CHECK_EQ((size_t)sb.st_size, len);
	ATF_CHECK_MSG((uint64_t)sb.st_blocks * 512 <= (2 << 20) + 65536,
	    "%llu bytes on disk", (unsigned long long)sb.st_blocks * 512);
	ATF_REQUIRE(pread(fd, back, len, 0) == (ssize_t)len);
	ATF_CHECK(memcmp(back, data, len) == 0);
	close(fd);
	free(data);
	free(back);
	close(src);
	close(m);
	close(dst);
	close(w);
}
ATF_TC_CLEANUP(copy_across, tc)
{
	cleanup();
}

ATF_TC_WITH_CLEANUP(copy_symlink_attack);
ATF_TC_HEAD(copy_symlink_attack, tc)
{
	atf_tc_set_md_var(tc, "descr", "symlinks to /etc/shadow, to a file "
	    "of root's and to a directory outside are copied as their text, "
	    "never followed");
	atf_tc_set_md_var(tc, "require.user", "root");
}
ATF_TC_BODY(copy_symlink_attack, tc)
{
	struct tree_bounds	 b = { 0, 0 };
	struct tree_count	 c;
	char			 err[512], path[PATH_MAX], dir[PATH_MAX];
	int			 w, src, dst, fd, files = 0;

	setup();
	ATF_REQUIRE((w = open(work, O_RDONLY | O_DIRECTORY)) != -1);
	mkfile_own(w, "secret", "ROOTSECRET", 0600, 0);
	ATF_REQUIRE(mkdirat(w, "outside", 0755) == 0);
	ATF_REQUIRE((fd = openat(w, "outside", O_RDONLY | O_DIRECTORY)) !=
	    -1);
	mkfile_own(fd, "secret2", "ROOTSECRET", 0600, 0);
	close(fd);
	src = work_dir("src", 0755);
	dst = work_dir("dst", 0700);
	snprintf(path, sizeof(path), "%s/secret", work);
	snprintf(dir, sizeof(dir), "%s/outside", work);
	mklink_as(src, "shadow", "/etc/shadow");
	mklink_as(src, "sec", path);
	mklink_as(src, "rel", "../secret");
	mklink_as(src, "out", dir);
	fd = mkdir_as(src, "d", 0755);
	mklink_as(fd, "up", "../../outside");
	close(fd);

	ATF_REQUIRE_MSG(tree_copy(src, dst, tuid, tgid, &b, &c, err,
	    sizeof(err)) == 0, "%s", err);
	ATF_CHECK_EQ(c.tc_files, 6);
	check_link(dst, "shadow", "/etc/shadow");
	check_link(dst, "sec", path);
	check_link(dst, "rel", "../secret");
	check_link(dst, "out", dir);
	check_link(dst, "d/up", "../../outside");
	ATF_CHECK_EQ(count_holding(dst, "ROOTSECRET", &files), 0);
	ATF_CHECK_EQ(count_holding(dst, "root:", &files), 0);
	ATF_CHECK_EQ(files, 0);
	ATF_CHECK_EQ(entries(dst), 5);
	close(w);
}
ATF_TC_CLEANUP(copy_symlink_attack, tc)
{
	cleanup();
}

ATF_TC_WITH_CLEANUP(copy_as_uid);
ATF_TC_HEAD(copy_as_uid, tc)
{
	atf_tc_set_md_var(tc, "descr", "a file or directory the uid cannot "
	    "read fails the copy, naming it; nothing of it is copied");
	atf_tc_set_md_var(tc, "require.user", "root");
}
ATF_TC_BODY(copy_as_uid, tc)
{
	struct tree_bounds	 b = { 0, 0 };
	struct tree_count	 c;
	struct stat		 sb;
	char			 err[512];
	int			 src, dst, fd, files = 0;
	uid_t			 other = free_id(1);

	setup();
	src = work_dir("src", 0755);
	dst = work_dir("dst", 0700);
	mkfile_as(src, "mine", "mine", 0644);
	mkfile_own(src, "theirs", "THEIRS", 0600, other);
	ATF_CHECK(tree_copy(src, dst, tuid, tgid, &b, &c, err,
	    sizeof(err)) == -1);
	ATF_CHECK_STREQ(err, "copy theirs: Permission denied");
	ATF_CHECK(fstatat(dst, "theirs", &sb, AT_SYMLINK_NOFOLLOW) == -1);
	ATF_CHECK_EQ(count_holding(dst, "THEIRS", &files), 0);
	ATF_CHECK(tree_measure(src, tuid, tgid, &b, &c, err,
	    sizeof(err)) == -1);
	ATF_CHECK_STREQ(err, "measure theirs: Permission denied");
	close(src);
	close(dst);

	/* A directory of root's, 0700, inside. */
	src = work_dir("src2", 0755);
	dst = work_dir("dst2", 0700);
	ATF_REQUIRE(mkdirat(src, "rootdir", 0700) == 0);
	ATF_REQUIRE((fd = openat(src, "rootdir", O_RDONLY)) != -1);
	mkfile_own(fd, "x", "ROOTSECRET", 0644, 0);
	close(fd);
	ATF_CHECK(tree_copy(src, dst, tuid, tgid, &b, &c, err,
	    sizeof(err)) == -1);
	ATF_CHECK_STREQ(err, "copy rootdir: Permission denied");
	ATF_CHECK_EQ(count_holding(dst, "ROOTSECRET", &files), 0);

	/* Root and its group are refused outright. */
	ATF_CHECK(tree_copy(src, dst, 0, tgid, &b, &c, err,
	    sizeof(err)) == -1);
	ATF_CHECK(tree_copy(src, dst, tuid, 0, &b, &c, err,
	    sizeof(err)) == -1);
	ATF_CHECK_EQ(entries(dst), 0);
}
ATF_TC_CLEANUP(copy_as_uid, tc)
{
	cleanup();
}

ATF_TC_WITH_CLEANUP(copy_bounds);
ATF_TC_HEAD(copy_bounds, tc)
{
	atf_tc_set_md_var(tc, "descr", "bounds of bytes, entries and depth "
	    "(256) stop the copy with their message");
	atf_tc_set_md_var(tc, "require.user", "root");
}
ATF_TC_BODY(copy_bounds, tc)
{
	struct tree_bounds	 b = { 0, 0 };
	struct tree_count	 c;
	char			 err[512], name[16], data[1001];
	int			 src, dst, fd, next, i;

	setup();
	memset(data, 'z', 1000);
	data[1000] = '\0';
	src = work_dir("bytes", 0755);
	for (i = 0; i < 3; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		mkfile_as(src, name, data, 0644);
	}
	dst = work_dir("dbytes", 0700);
	b.tb_bytes = 2500;
	ATF_CHECK(tree_copy(src, dst, tuid, tgid, &b, &c, err,
	    sizeof(err)) == -1);
	ATF_CHECK_STREQ(err, "home holds more than 2500 bytes");
	close(dst);
	dst = work_dir("dbytes2", 0700);
	b.tb_bytes = 3000;
	ATF_CHECK_MSG(tree_copy(src, dst, tuid, tgid, &b, &c, err,
	    sizeof(err)) == 0, "%s", err);
	ATF_CHECK_EQ(c.tc_bytes, 3000);
	close(dst);
	close(src);

	b.tb_bytes = 0;
	src = work_dir("files", 0755);
	for (i = 0; i < 10; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		mkfile_as(src, name, "", 0644);
	}
	dst = work_dir("dfiles", 0700);
	b.tb_files = 5;
	ATF_CHECK(tree_copy(src, dst, tuid, tgid, &b, &c, err,
	    sizeof(err)) == -1);
	ATF_CHECK_STREQ(err, "home holds more than 5 files");
	close(dst);
	dst = work_dir("dfiles2", 0700);
	b.tb_files = 10;
	ATF_CHECK_MSG(tree_copy(src, dst, tuid, tgid, &b, &c, err,
	    sizeof(err)) == 0, "%s", err);
	ATF_CHECK_EQ(c.tc_files, 10);
	close(dst);
	close(src);

	/* 256 directories deep is copied; 300 is refused. */
	b.tb_files = 0;
	src = work_dir("deep", 0755);
	fd = dup(src);
	for (i = 0; i < 300; i++) {
		next = mkdir_as(fd, "d", 0755);
		close(fd);
		fd = next;
		if (i == 255) {
			dst = work_dir("ddeep256", 0700);
			ATF_CHECK_MSG(tree_copy(src, dst, tuid, tgid, &b, &c,
			    err, sizeof(err)) == 0, "%s", err);
			ATF_CHECK_EQ(c.tc_files, 256);
			close(dst);
		}
	}
	close(fd);
	dst = work_dir("ddeep", 0700);
	ATF_CHECK(tree_copy(src, dst, tuid, tgid, &b, &c, err,
	    sizeof(err)) == -1);
	ATF_CHECK_STREQ(err, "tree deeper than 256 levels");
	ATF_CHECK(tree_measure(src, tuid, tgid, &b, &c, err,
	    sizeof(err)) == -1);
	ATF_CHECK_STREQ(err, "tree deeper than 256 levels");
}
ATF_TC_CLEANUP(copy_bounds, tc)
{
	cleanup();
}

ATF_TC_WITH_CLEANUP(copy_dest);
ATF_TC_HEAD(copy_dest, tc)
{
	atf_tc_set_md_var(tc, "descr", "a destination that is not empty is "
	    "refused; one inside the source is not copied into itself");
	atf_tc_set_md_var(tc, "require.user", "root");
}
ATF_TC_BODY(copy_dest, tc)
{
	struct tree_bounds	 b = { 0, 0 };
	struct tree_count	 c;
	struct stat		 sb;
	char			 err[512];
	int			 src, dst;

	setup();
	src = work_dir("src", 0755);
	mkfile_as(src, "a", "a", 0644);
	dst = work_dir("dst", 0700);
	mkfile_as(dst, "old", "old", 0644);
	ATF_CHECK(tree_copy(src, dst, tuid, tgid, &b, &c, err,
	    sizeof(err)) == -1);
	ATF_CHECK_STREQ(err, "copy: the destination is not empty");
	ATF_CHECK(fstatat(dst, "a", &sb, 0) == -1 && errno == ENOENT);
	close(dst);

	dst = mkdir_as(src, "snap", 0700);
	ATF_REQUIRE_MSG(tree_copy(src, dst, tuid, tgid, &b, &c, err,
	    sizeof(err)) == 0, "%s", err);
	ATF_CHECK_EQ(c.tc_files, 1);
	check_content(dst, "a", "a");
	ATF_CHECK_EQ(entries(dst), 1);
}
ATF_TC_CLEANUP(copy_dest, tc)
{
	cleanup();
}

static char	 race_secret[PATH_MAX];

/* Swap "f" between a file, symlinks to secrets and a fifo, forever. */
static void
race_swap(int src)
{
	int	 fd;

	for (;;) {
		(void)unlinkat(src, "t", 0);
		if ((fd = openat(src, "t", O_WRONLY | O_CREAT | O_EXCL,
		    0644)) != -1) {
			if (write(fd, "safe", 4) != 4)
				_exit(1);
			close(fd);
			(void)renameat(src, "t", src, "f");
		}
		(void)unlinkat(src, "t", 0);
		if (symlinkat("/etc/shadow", src, "t") == 0)
			(void)renameat(src, "t", src, "f");
		(void)unlinkat(src, "t", 0);
		if (symlinkat(race_secret, src, "t") == 0)
			(void)renameat(src, "t", src, "f");
		(void)unlinkat(src, "t", 0);
		if (mkfifoat(src, "t", 0644) == 0)
			(void)renameat(src, "t", src, "f");
	}
}

ATF_TC_WITH_CLEANUP(copy_race);
ATF_TC_HEAD(copy_race, tc)
{
	atf_tc_set_md_var(tc, "descr", "a file swapped for symlinks to "
	    "secrets and for a fifo while copied 300 times: nothing of the "
	    "secrets is ever copied, and nothing blocks");
	atf_tc_set_md_var(tc, "require.user", "root");
	atf_tc_set_md_var(tc, "timeout", "900");
}
ATF_TC_BODY(copy_race, tc)
{
	struct tree_bounds	 b = { 0, 0 };
	struct tree_count	 c;
	struct dirent		*de;
	struct stat		 sb;
	char			 err[512], name[32], link[PATH_MAX], buf[64];
	DIR			*d;
	pid_t			 racer;
	ssize_t			 n;
	int			 w, src, dst, fd, i, ok = 0, changed = 0;
	int			 files = 0;

	setup();
	ATF_REQUIRE((w = open(work, O_RDONLY | O_DIRECTORY)) != -1);
	mkfile_own(w, "secret", "ROOTSECRET", 0600, 0);
	snprintf(race_secret, sizeof(race_secret), "%s/secret", work);
	src = work_dir("src", 0755);
	mkfile_as(src, "f", "safe", 0644);
	racer = as_uid(race_swap, src);
	for (i = 0; i < 300; i++) {
		snprintf(name, sizeof(name), "d%d", i);
		dst = mkdir_as(w, name, 0700);
		if (tree_copy(src, dst, tuid, tgid, &b, &c, err,
		    sizeof(err)) == 0)
			ok++;
		else if (strstr(err, "changed while copied") != NULL)
			changed++;
		else
			ATF_CHECK_MSG(0, "copy %d: %s", i, err);
		ATF_CHECK_EQ(count_holding(dst, "ROOTSECRET", &files), 0);
		ATF_CHECK_EQ(count_holding(dst, "root:", &files), 0);
		/* What was copied is the file, a link's text or a fifo. */
		ATF_REQUIRE((fd = dup(dst)) != -1);
		ATF_REQUIRE((d = fdopendir(fd)) != NULL);
		while ((de = readdir(d)) != NULL) {
			if (de->d_name[0] == '.')
				continue;
			ATF_REQUIRE(fstatat(dst, de->d_name, &sb,
			    AT_SYMLINK_NOFOLLOW) == 0);
			if (S_ISREG(sb.st_mode)) {
				fd = openat(dst, de->d_name, O_RDONLY);
				ATF_REQUIRE(fd != -1);
				n = read(fd, buf, sizeof(buf));
				close(fd);
				ATF_CHECK(n >= 0 && n <= 4 &&
				    memcmp(buf, "safe", (size_t)n) == 0);
			} else if (S_ISLNK(sb.st_mode)) {
				n = readlinkat(dst, de->d_name, link,
				    sizeof(link) - 1);
				ATF_REQUIRE(n > 0);
				link[n] = '\0';
				ATF_CHECK(strcmp(link, "/etc/shadow") == 0 ||
				    strcmp(link, race_secret) == 0);
			} else
				ATF_CHECK(S_ISFIFO(sb.st_mode));
		}
		closedir(d);
		ATF_CHECK_MSG(tree_empty(dst, tuid, tgid, err,
		    sizeof(err)) == 0, "%s", err);
		close(dst);
		ATF_CHECK(unlinkat(w, name, AT_REMOVEDIR) == 0);
	}
	stop(racer);
	printf("%d copies whole, %d refused as changed; %d files seen\n", ok,
	    changed, files);
	ATF_CHECK(ok > 0);
	close(w);
}
ATF_TC_CLEANUP(copy_race, tc)
{
	cleanup();
}

/* Signal every process of the uid (the caller aside), forever. */
static void
signal_all(int sig)
{
	for (;;)
		(void)kill(-1, sig);
}

ATF_TC_WITH_CLEANUP(copy_killed);
ATF_TC_HEAD(copy_killed, tc)
{
	atf_tc_set_md_var(tc, "descr", "the copying process killed or "
	    "stopped by its own uid is an error, never a hang");
	atf_tc_set_md_var(tc, "require.user", "root");
	atf_tc_set_md_var(tc, "timeout", "300");
}
ATF_TC_BODY(copy_killed, tc)
{
	struct tree_bounds	 b = { 0, 0 };
	struct tree_count	 c;
	char			 err[512], name[32];
	pid_t			 racer;
	int			 w, src, dst, i, killed = 0;

	setup();
	ATF_REQUIRE((w = open(work, O_RDONLY | O_DIRECTORY)) != -1);
	src = work_dir("src", 0755);
	for (i = 0; i < 1000; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		mkfile_as(src, name, "data", 0644);
	}
	racer = as_uid(signal_all, SIGKILL);
	for (i = 0; i < 100 && killed == 0; i++) {
		snprintf(name, sizeof(name), "d%d", i);
		dst = mkdir_as(w, name, 0700);
		if (tree_copy(src, dst, tuid, tgid, &b, &c, err,
		    sizeof(err)) == -1) {
			ATF_CHECK_STREQ(err, "copy: killed by signal 9");
			killed++;
		}
		close(dst);
	}
	stop(racer);
	ATF_CHECK(killed > 0);

	tree_stall_seconds = 2;
	racer = as_uid(signal_all, SIGSTOP);
	dst = mkdir_as(w, "stopped", 0700);
	ATF_CHECK(tree_copy(src, dst, tuid, tgid, &b, &c, err,
	    sizeof(err)) == -1);
	ATF_CHECK_STREQ(err, "copy: no progress for 2 seconds");
	stop(racer);
	close(w);
}
ATF_TC_CLEANUP(copy_killed, tc)
{
	cleanup();
}

/*
 * As the uid: look for its other processes (the copying child) and try
 * to reach into them: 's' down the pipe for each one seen, 'X' for a
 * descriptor table opened or a trace attached.
 */
static void
spy(int out)
{
	struct dirent	*de;
	struct stat	 sb;
	char		 path[64];
	DIR		*d;
	long		 pid, last = -1;
	int		 fd;

	for (;;) {
		if ((d = opendir("/proc")) == NULL)
			_exit(1);
		while ((de = readdir(d)) != NULL) {
			if ((pid = strtol(de->d_name, NULL, 10)) <= 0 ||
			    pid == getpid())
				continue;
			snprintf(path, sizeof(path), "/proc/%ld", pid);
			if (stat(path, &sb) == -1 || sb.st_uid != getuid())
				continue;
			if (pid != last && write(out, "s", 1) != 1)
				_exit(1);
			last = pid;
			snprintf(path, sizeof(path), "/proc/%ld/fd", pid);
			if ((fd = open(path, O_RDONLY | O_DIRECTORY)) != -1) {
				close(fd);
				if (write(out, "X", 1) != 1)
					_exit(1);
			}
			if (ptrace(PTRACE_ATTACH, (pid_t)pid, NULL, NULL) ==
			    0) {
				(void)ptrace(PTRACE_DETACH, (pid_t)pid, NULL,
				    NULL);
				if (write(out, "X", 1) != 1)
					_exit(1);
			}
		}
		closedir(d);
	}
}

static int	 spy_pipe = -1;

static void
spy_start(int unused)
{
	spy(spy_pipe);
}

ATF_TC_WITH_CLEANUP(copy_spied);
ATF_TC_HEAD(copy_spied, tc)
{
	atf_tc_set_md_var(tc, "descr", "the uid, watching for the copying "
	    "child, can neither open its descriptors nor trace it");
	atf_tc_set_md_var(tc, "require.user", "root");
	atf_tc_set_md_var(tc, "timeout", "600");
}
ATF_TC_BODY(copy_spied, tc)
{
	struct tree_bounds	 b = { 0, 0 };
	struct tree_count	 c;
	char			 err[512], name[32], buf[4096];
	pid_t			 racer;
	ssize_t			 n, k;
	int			 w, src, dst, i, p[2], seen = 0, leaks = 0;

	setup();
	ATF_REQUIRE((w = open(work, O_RDONLY | O_DIRECTORY)) != -1);
	src = work_dir("src", 0755);
	for (i = 0; i < 300; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		mkfile_as(src, name, "data", 0644);
	}
	ATF_REQUIRE(pipe2(p, O_NONBLOCK) == 0);
	spy_pipe = p[1];
	racer = as_uid(spy_start, 0);
	close(p[1]);
	for (i = 0; i < 100; i++) {
		snprintf(name, sizeof(name), "d%d", i);
		dst = mkdir_as(w, name, 0700);
		ATF_CHECK_MSG(tree_copy(src, dst, tuid, tgid, &b, &c, err,
		    sizeof(err)) == 0, "%s", err);
		close(dst);
		while ((n = read(p[0], buf, sizeof(buf))) > 0)
			for (k = 0; k < n; k++) {
				seen += buf[k] == 's';
				leaks += buf[k] == 'X';
			}
	}
	stop(racer);
	while ((n = read(p[0], buf, sizeof(buf))) > 0)
		for (k = 0; k < n; k++) {
			seen += buf[k] == 's';
			leaks += buf[k] == 'X';
		}
	printf("children seen %d, reached %d\n", seen, leaks);
	ATF_CHECK_EQ(leaks, 0);
	ATF_REQUIRE_MSG(seen > 0, "the spy never saw a copying child");
	close(w);
}
ATF_TC_CLEANUP(copy_spied, tc)
{
	cleanup();
}

ATF_TC_WITH_CLEANUP(empty);
ATF_TC_HEAD(empty, tc)
{
	atf_tc_set_md_var(tc, "descr", "tree_empty removes everything below "
	    "the top, its 0500 and 0000 directories too, never what a "
	    "symlink points to, and stops at what the uid may not remove");
	atf_tc_set_md_var(tc, "require.user", "root");
}
ATF_TC_BODY(empty, tc)
{
	struct stat	 sb;
	char		 err[512], path[PATH_MAX];
	int		 w, top, fd, sub, out;

	setup();
	ATF_REQUIRE((w = open(work, O_RDONLY | O_DIRECTORY)) != -1);
	mkfile_own(w, "keep", "KEEP", 0644, 0);
	ATF_REQUIRE(mkdirat(w, "outside", 0755) == 0);
	ATF_REQUIRE((out = openat(w, "outside", O_RDONLY | O_DIRECTORY)) !=
	    -1);
	mkfile_as(out, "kept", "KEEP", 0644);
	top = work_dir("top", 0755);
	mkfile_as(top, "a", "a", 0644);
	mkfile_as(top, "new\nline", "a", 0000);
	fd = mkdir_as(top, "d", 0755);
	sub = mkdir_as(fd, "e", 0755);
	mkfile_as(sub, "f", "f", 0644);
	close(sub);
	close(fd);
	fd = mkdir_as(top, "ro", 0700);
	mkfile_as(fd, "x", "x", 0644);
	close(mkdir_as(fd, "y", 0500));
	ATF_REQUIRE(fchmod(fd, 0500) == 0);
	close(fd);
	fd = mkdir_as(top, "locked", 0700);
	sub = mkdir_as(fd, "in", 0700);
	mkfile_as(sub, "z", "z", 0644);
	ATF_REQUIRE(fchmod(sub, 0000) == 0);
	close(sub);
	ATF_REQUIRE(fchmod(fd, 0000) == 0);
	close(fd);
	snprintf(path, sizeof(path), "%s/keep", work);
	mklink_as(top, "l", path);
	snprintf(path, sizeof(path), "%s/outside", work);
	mklink_as(top, "ld", path);
	ATF_REQUIRE(mkfifoat(top, "fifo", 0600) == 0);
	ATF_REQUIRE(fchownat(top, "fifo", tuid, tgid, 0) == 0);

	ATF_REQUIRE_MSG(tree_empty(top, tuid, tgid, err, sizeof(err)) == 0,
	    "%s", err);
	ATF_CHECK_EQ(entries(top), 0);
	ATF_REQUIRE(fstat(top, &sb) == 0);
	ATF_CHECK_EQ(sb.st_mode, S_IFDIR | 0755);
	check_content(w, "keep", "KEEP");
	check_content(out, "kept", "KEEP");
	close(top);

	/* A top of 0500: emptied, and 0500 again. */
	top = work_dir("top2", 0700);
	close(mkdir_as(top, "d", 0500));
	ATF_REQUIRE(fchmod(top, 0500) == 0);
	ATF_CHECK_MSG(tree_empty(top, tuid, tgid, err, sizeof(err)) == 0,
	    "%s", err);
	ATF_CHECK_EQ(entries(top), 0);
	ATF_REQUIRE(fstat(top, &sb) == 0);
	ATF_CHECK_EQ(sb.st_mode, S_IFDIR | 0500);
	close(top);

	/* A directory of root's inside: its files stay. */
	top = work_dir("top3", 0755);
	ATF_REQUIRE(mkdirat(top, "rootdir", 0755) == 0);
	ATF_REQUIRE((fd = openat(top, "rootdir", O_RDONLY)) != -1);
	mkfile_own(fd, "x", "x", 0644, 0);
	ATF_CHECK(tree_empty(top, tuid, tgid, err, sizeof(err)) == -1);
	ATF_CHECK_STREQ(err, "empty rootdir/x: Permission denied");
	check_content(fd, "x", "x");
	close(fd);
	close(top);
	close(out);
	close(w);
}
ATF_TC_CLEANUP(empty, tc)
{
	cleanup();
}

ATF_TC_WITH_CLEANUP(measure);
ATF_TC_HEAD(measure, tc)
{
	atf_tc_set_md_var(tc, "descr", "tree_measure counts what tree_copy "
	    "copies, under the same bounds, copying nothing");
	atf_tc_set_md_var(tc, "require.user", "root");
}
ATF_TC_BODY(measure, tc)
{
	struct tree_bounds	 b = { 0, 0 };
	struct tree_count	 m, c;
	char			 err[512];
	int			 src, dst, fd;

	setup();
	src = work_dir("src", 0755);
	mkfile_as(src, "a", "12345", 0644);
	fd = mkdir_as(src, "d", 0755);
	mkfile_as(fd, "b", "123", 0600);
	mklink_as(fd, "l", "../a");
	close(fd);
	ATF_REQUIRE(mkfifoat(src, "f", 0600) == 0);

	ATF_REQUIRE_MSG(tree_measure(src, tuid, tgid, &b, &m, err,
	    sizeof(err)) == 0, "%s", err);
	ATF_CHECK_EQ(m.tc_files, 5);
	ATF_CHECK_EQ(m.tc_bytes, 5 + 3 + 4);
	ATF_CHECK_EQ(m.tc_shared, 0);
	ATF_CHECK(m.tc_disk > 0);
	dst = work_dir("dst", 0700);
	ATF_CHECK_EQ(entries(dst), 0);
	ATF_REQUIRE_MSG(tree_copy(src, dst, tuid, tgid, &b, &c, err,
	    sizeof(err)) == 0, "%s", err);
	ATF_CHECK_EQ(c.tc_files, m.tc_files);
	ATF_CHECK_EQ(c.tc_bytes, m.tc_bytes);

	b.tb_files = 2;
	ATF_CHECK(tree_measure(src, tuid, tgid, &b, &m, err,
	    sizeof(err)) == -1);
	ATF_CHECK_STREQ(err, "home holds more than 2 files");
	b.tb_files = 0;
	b.tb_bytes = 11;
	ATF_CHECK(tree_measure(src, tuid, tgid, &b, &m, err,
	    sizeof(err)) == -1);
	ATF_CHECK_STREQ(err, "home holds more than 11 bytes");
}
ATF_TC_CLEANUP(measure, tc)
{
	cleanup();
}

/* The fencer's capabilities (fencer/fencer.c), under its filter. */
static const cap_value_t fencer_caps[] = {
	CAP_SYS_ADMIN, CAP_SETUID, CAP_SETGID, CAP_SETPCAP, CAP_KILL,
	CAP_CHOWN, CAP_FOWNER, CAP_DAC_OVERRIDE, CAP_NET_ADMIN,
	CAP_SYS_CHROOT, CAP_MKNOD
};

ATF_TC_WITH_CLEANUP(fencer_locked);
ATF_TC_HEAD(fencer_locked, tc)
{
	atf_tc_set_md_var(tc, "descr", "from a process locked down as the "
	    "fencer is (its capabilities, its seccomp filter), copy, measure "
	    "and empty work, and a file of another uid is still refused");
	atf_tc_set_md_var(tc, "require.user", "root");
}
ATF_TC_BODY(fencer_locked, tc)
{
	struct tree_bounds	 b = { 0, 0 };
	struct tree_count	 c, m;
	struct lockdown		 ld;
	char			 err[512];
	pid_t			 pid;
	int			 src, dst, dst2, fd, st;
	uid_t			 other = free_id(1);

	setup();
	src = work_dir("src", 0755);
	mkfile_as(src, "a", "abc", 0644);
	fd = mkdir_as(src, "d", 0500);
	mklink_as(src, "l", "/etc/shadow");
	close(fd);
	dst = work_dir("dst", 0700);
	dst2 = work_dir("dst2", 0700);
	ATF_REQUIRE((pid = fork()) != -1);
	if (pid == 0) {
		memset(&ld, 0, sizeof(ld));
		ld.ld_title = "fencer";
		ld.ld_uid = (uid_t)-1;
		ld.ld_gid = (gid_t)-1;
		ld.ld_caps = fencer_caps;
		ld.ld_ncaps = sizeof(fencer_caps) / sizeof(fencer_caps[0]);
		ld.ld_filter = LOCKDOWN_DENY;
		lockdown(&ld);
		if (tree_measure(src, tuid, tgid, &b, &m, err,
		    sizeof(err)) == -1 || tree_copy(src, dst, tuid, tgid, &b,
		    &c, err, sizeof(err)) == -1 || tree_empty(dst, tuid, tgid,
		    err, sizeof(err)) == -1)
			errx(1, "%s", err);
		if (m.tc_files != 3 || c.tc_files != 3 || c.tc_bytes != 14)
			errx(2, "counted %llu, %llu files",
			    (unsigned long long)m.tc_files,
			    (unsigned long long)c.tc_files);
		mkfile_own(src, "theirs", "THEIRS", 0600, other);
		if (tree_copy(src, dst2, tuid, tgid, &b, &c, err,
		    sizeof(err)) == 0 ||
		    strcmp(err, "copy theirs: Permission denied") != 0)
			errx(3, "a file of another uid: %s", err);
		_exit(0);
	}
	ATF_REQUIRE(waitpid(pid, &st, 0) == pid);
	ATF_CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d", st);
	ATF_CHECK_EQ(entries(dst), 0);
}
ATF_TC_CLEANUP(fencer_locked, tc)
{
	cleanup();
}

static const char *
find_mkfs(void)
{
	static const char *paths[] = {
		"/usr/sbin/mkfs.btrfs", "/sbin/mkfs.btrfs",
		"/usr/sbin/mkfs.xfs", "/sbin/mkfs.xfs"
	};
	size_t	 i;

	for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		if (access(paths[i], X_OK) == 0)
			return (paths[i]);
	return (NULL);
}

ATF_TC_WITH_CLEANUP(copy_reflink);
ATF_TC_HEAD(copy_reflink, tc)
{
	atf_tc_set_md_var(tc, "descr", "on btrfs or xfs (reflink=1) a file "
	    "is cloned: its bytes are shared with the source");
	atf_tc_set_md_var(tc, "require.user", "root");
	atf_tc_set_md_var(tc, "timeout", "300");
}
ATF_TC_BODY(copy_reflink, tc)
{
	struct tree_bounds	 b = { 0, 0 };
	struct tree_count	 c;
	const char		*mkfs;
	char			 cmd[1024], err[512], *data;
	int			 m, src, dst, fd;

	if ((mkfs = find_mkfs()) == NULL)
		atf_tc_skip("neither mkfs.btrfs nor mkfs.xfs: no filesystem "
		    "with FICLONE to try");
	setup();
	snprintf(cmd, sizeof(cmd), "truncate -s 512M %s/img && %s %s %s/img "
	    ">/dev/null 2>&1 && mkdir %s/mnt && mount -o loop %s/img %s/mnt",
	    work, mkfs, strstr(mkfs, "xfs") != NULL ? "-q -m reflink=1" : "-q",
	    work, work, work, work);
	if (system(cmd) != 0)
		atf_tc_skip("cannot make and mount a %s image", mkfs);
	ATF_REQUIRE((m = open(work, O_RDONLY | O_DIRECTORY)) != -1);
	ATF_REQUIRE((fd = openat(m, "mnt", O_RDONLY | O_DIRECTORY)) != -1);
	close(m);
	m = fd;
	src = mkdir_as(m, "src", 0755);
	dst = mkdir_as(m, "dst", 0700);
	ATF_REQUIRE((data = malloc(4 << 20)) != NULL);
	memset(data, 'r', 4 << 20);
	ATF_REQUIRE((fd = openat(src, "big", O_WRONLY | O_CREAT, 0644)) !=
	    -1);
	ATF_REQUIRE(write(fd, data, 4 << 20) == 4 << 20);
	ATF_REQUIRE(fsync(fd) == 0);
	ATF_REQUIRE(fchown(fd, tuid, tgid) == 0);
	close(fd);
	free(data);
	ATF_REQUIRE_MSG(tree_copy(src, dst, tuid, tgid, &b, &c, err,
	    sizeof(err)) == 0, "%s", err);
	ATF_CHECK_MSG(c.tc_shared >= (4 << 20), "shared %llu of %llu",
	    (unsigned long long)c.tc_shared, (unsigned long long)c.tc_disk);
	ATF_CHECK_EQ(c.tc_bytes, 4 << 20);
	close(src);
	close(dst);
	close(m);
}
ATF_TC_CLEANUP(copy_reflink, tc)
{
	cleanup();
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, copy_kinds);
	ATF_TP_ADD_TC(tp, copy_sparse);
	ATF_TP_ADD_TC(tp, copy_across);
	ATF_TP_ADD_TC(tp, copy_symlink_attack);
	ATF_TP_ADD_TC(tp, copy_as_uid);
	ATF_TP_ADD_TC(tp, copy_bounds);
	ATF_TP_ADD_TC(tp, copy_dest);
	ATF_TP_ADD_TC(tp, copy_race);
	ATF_TP_ADD_TC(tp, copy_killed);
	ATF_TP_ADD_TC(tp, copy_spied);
	ATF_TP_ADD_TC(tp, empty);
	ATF_TP_ADD_TC(tp, measure);
	ATF_TP_ADD_TC(tp, fencer_locked);
	ATF_TP_ADD_TC(tp, copy_reflink);
	return (atf_no_error());
}
