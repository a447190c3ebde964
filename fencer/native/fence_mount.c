/*
 * The filesystem of a fence, built by pid 1 in its private mount
 * namespace: a fresh tmpfs staged on /tmp becomes the new root, gets the
 * mounts of fence_mount_build() in the order below, is pivoted into and
 * finally made read-only itself.
 *
 *	/		tmpfs, read-only at the end
 *	/usr, /etc	the host's, bound read-only (nosuid, nodev, plus
 *			whatever flags the host mount already has)
 *	/bin, /lib...	symlinks into usr/ where the host has them
 *	/tmp		fresh tmpfs 1777, a quarter of the memory limit
 *	/var		fresh tmpfs 0755, with /var/tmp 1777, an eighth
 *	/run		fresh tmpfs 0755, a 64th, at most 16M;
 *			/run/fenced/bin a clone of a detached read-only
 *			tmpfs holding copies of fence-agent, fence-probe
 *			and the init only
 *	/home		fresh tmpfs 0755; /home/<user> is the sandbox
 *			home, attached read-write (nosuid, nodev) after
 *			the split point of fence_steps[] (fence_mount_home())
 *	/dev		tmpfs with null, zero, full, random, urandom, tty
 *			bound from the host, fd/stdin/stdout/stderr links,
 *			a /dev/shm tmpfs (an eighth), a devpts of the
 *			fence's own at /dev/pts (fence_mount_devpts()) and
 *			/dev/ptmx a link to its ptmx; read-only; with
 *			fs_kvm also a kvm node of the fence's uid
 *			(fence_mount_kvm())
 *	/proc		a fresh proc of the fence's pid namespace,
 *			/proc/sys read-only, sensitive files under
 *			/dev/null, a few directories under an empty
 *			read-only tmpfs
 *	/sys		absent
 *
 * The home is a detached mount (fence_mount_home_tree()), made while the
 * host's tree is still in sight (by pid 1 before its mounts, or by the
 * fencer at a pool fence's take, docs/pool.md) and attached after
 * pivot_root: it is opened without following any symlink and must
 * belong to the fence's uid, so a symlink swapped in after
 * fencer_home_prepare() checked the path cannot redirect it.
 *
 * Everything of the host a fence sees is in view_binds[]
 * (fencer_view.c), one table for every backend, so that whoever reads a
 * fence's mount table from the host can tell an expected bind from
 * anything else.  The binaries are not a
 * bind: a bind of a host directory names its host path as the mount's
 * root in /proc/self/mountinfo, and the daemon's folder holds fenced and
 * fencectl too.  fence_bin_init() copies the few programs a fence runs
 * into a tmpfs that is mounted nowhere (fsopen, fsmount), once per
 * process; each pid 1 clones that mount (open_tree OPEN_TREE_CLONE) and
 * attaches the clone (move_mount).  A kernel before 6.15 clones no
 * detached mount (EINVAL): there fence_bin_init() makes the tmpfs anew
 * for every boot and pid 1 attaches that one itself.  Its mountinfo line reads
 * "/ /run/fenced/bin ro,nosuid,nodev - tmpfs fenced-bin".
 */
#include <sys/types.h>
#include <sys/mount.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>

#include <linux/openat2.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fence.h"
#include "fence_impl.h"

/*
 * What the host has at each merged-/usr name of view_binds[] (its
 * VIEW_LINKDIR rows, by row): bound read-only if a real dir, the same
 * link if a link (fence_mount_init()).
 */
enum fence_link_kind {
	FENCE_LINK_NONE = 0,
	FENCE_LINK_SYMLINK,
	FENCE_LINK_DIR
};

static struct fence_link {
	enum fence_link_kind	 fl_kind;
	char			 fl_target[PATH_MAX];
} fence_links[VIEW_BINDS_MAX];

/*
 * fence-probe may be executed and never read by a fence: execve() of a
 * file its caller cannot read leaves the new image not dumpable from
 * its first instruction (the kernel's would_dump()), so no process of
 * the fence's uid can open its /proc/PID/fd/0, where the canary secret
 * waits, or its mem, or ptrace it, before the probe's own prctl().
 */
#define FENCE_BIN_PROBE		"fence-probe"
#define FENCE_BIN_MODE		0555
#define FENCE_BIN_PROBE_MODE	0111
#define FENCE_BIN_FILE_MAX	(64ULL << 20)	/* per program */

static int	 fence_bin_mnt = -1;	/* the detached tmpfs */
/*
 * Whether a detached mount can be cloned (Linux 6.15 and later).  An
 * older kernel (Debian 12's 6.1) answers EINVAL: each pid 1 then gets a
 * tmpfs of its own, made and filled for its boot, and attaches it.
 */
static int	 fence_bin_clonable = -1;
static dev_t	 fence_bin_dev;		/* what it was copied from */
static ino_t	 fence_bin_ino;
static char	 fence_bin_init_name[NAME_MAX + 1];

static const char *fence_dev_links[][2] = {
	{ "dev/fd",	"/proc/self/fd" },
	{ "dev/stdin",	"/proc/self/fd/0" },
	{ "dev/stdout",	"/proc/self/fd/1" },
	{ "dev/stderr",	"/proc/self/fd/2" }
};

/* Masked with /dev/null, where the kernel has them. */
static const char *fence_proc_files[] = {
	"kcore", "keys", "key-users", "sysrq-trigger", "timer_list",
	"sched_debug", "kallsyms", "kmsg", "latency_stats", "timer_stats",
	"config.gz"
};
static int	 fence_proc_files_present[nitems(fence_proc_files)];

/* Hidden under an empty read-only tmpfs, where the kernel has them. */
static const char *fence_proc_dirs[] = {
	"acpi", "scsi", "asound", "bus", "irq"
};
static int	 fence_proc_dirs_present[nitems(fence_proc_dirs)];

/* Parent side, once: what the host's / and /proc look like. */
int
fence_mount_init(char *err, size_t errlen)
{
	struct stat	 sb;
	char		 path[PATH_MAX];
	ssize_t		 n;
	size_t		 i;

	for (i = 0; i < view_nbinds; i++) {
		struct fence_link *l = &fence_links[i];

		l->fl_kind = FENCE_LINK_NONE;
		if (view_binds[i].vb_kind != VIEW_LINKDIR)
			continue;
		strlcpy(path, view_binds[i].vb_src, sizeof(path));
		if (lstat(path, &sb) == -1)
			continue;
		if (S_ISDIR(sb.st_mode))
			l->fl_kind = FENCE_LINK_DIR;
		else if (S_ISLNK(sb.st_mode)) {
			n = readlink(path, l->fl_target,
			    sizeof(l->fl_target) - 1);
			if (n <= 0) {
				snprintf(err, errlen, "readlink %s: %s", path,
				    strerror(errno));
				return (-1);
			}
			l->fl_target[n] = '\0';
			l->fl_kind = FENCE_LINK_SYMLINK;
		}
	}
	for (i = 0; i < nitems(fence_proc_files); i++) {
		snprintf(path, sizeof(path), "/proc/%s", fence_proc_files[i]);
		fence_proc_files_present[i] = lstat(path, &sb) == 0 &&
		    S_ISREG(sb.st_mode);
	}
	for (i = 0; i < nitems(fence_proc_dirs); i++) {
		snprintf(path, sizeof(path), "/proc/%s", fence_proc_dirs[i]);
		fence_proc_dirs_present[i] = lstat(path, &sb) == 0 &&
		    S_ISDIR(sb.st_mode);
	}
	return (0);
}

/* Copy one program into the bin tmpfs; a missing one is left out. */
static int
fence_bin_copy(int dirfd, int mnt, const char *name, const char *bindir,
    char *err, size_t errlen)
{
	struct stat	 sb;
	off_t		 off = 0;
	ssize_t		 n;
	mode_t		 mode;
	int		 src, dst;

	mode = strcmp(name, FENCE_BIN_PROBE) == 0 ? FENCE_BIN_PROBE_MODE :
	    FENCE_BIN_MODE;
	if ((src = openat(dirfd, name, O_RDONLY | O_CLOEXEC)) == -1) {
		if (errno == ENOENT)
			return (0);
		snprintf(err, errlen, "open %s/%s: %s", bindir, name,
		    strerror(errno));
		return (-1);
	}
	if (fstat(src, &sb) == -1 || !S_ISREG(sb.st_mode) ||
	    (uint64_t)sb.st_size > FENCE_BIN_FILE_MAX) {
		snprintf(err, errlen, "%s/%s: not a regular file of at most "
		    "%llu bytes", bindir, name,
		    (unsigned long long)FENCE_BIN_FILE_MAX);
		(void)close(src);
		return (-1);
	}
	dst = openat(mnt, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
	    mode);
	if (dst == -1) {
		snprintf(err, errlen, "create %s in the bin tmpfs: %s", name,
		    strerror(errno));
		(void)close(src);
		return (-1);
	}
	while (off < sb.st_size) {
		n = sendfile(dst, src, &off, sb.st_size - off);
		if (n <= 0) {
			snprintf(err, errlen, "copy %s/%s: %s", bindir, name,
			    n == 0 ? "short file" : strerror(errno));
			(void)close(src);
			(void)close(dst);
			return (-1);
		}
	}
	(void)close(src);
	if (fchmod(dst, mode) == -1 || close(dst) == -1) {
		snprintf(err, errlen, "copy %s/%s: %s", bindir, name,
		    strerror(errno));
		return (-1);
	}
	return (0);
}

/*
 * Parent side: the tmpfs every fence's /run/fenced/bin is cloned from,
 * made once per bin dir and init: fence-agent, fence-probe and the init,
 * copied from bindir, read-only, nosuid, nodev, and mounted nowhere.
 */
int
fence_bin_init(const char *bindir, const char *init, char *err,
    size_t errlen)
{
	struct mount_attr	 attr;
	struct stat		 sb;
	size_t			 i;
	int			 dirfd, fs = -1, mnt = -1;

	if ((dirfd = open(bindir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1) {
		snprintf(err, errlen, "open %s: %s", bindir, strerror(errno));
		return (-1);
	}
	if (fstat(dirfd, &sb) == -1) {
		snprintf(err, errlen, "stat %s: %s", bindir, strerror(errno));
		goto fail;
	}
	if (fence_bin_mnt != -1 && fence_bin_clonable == 1 &&
	    sb.st_dev == fence_bin_dev && sb.st_ino == fence_bin_ino &&
	    strcmp(init, fence_bin_init_name) == 0) {
		(void)close(dirfd);
		return (0);
	}
	if ((fs = fsopen("tmpfs", FSOPEN_CLOEXEC)) == -1 ||
	    fsconfig(fs, FSCONFIG_SET_STRING, "source", "fenced-bin",
	    0) == -1 ||
	    fsconfig(fs, FSCONFIG_SET_STRING, "mode", "0755", 0) == -1 ||
	    fsconfig(fs, FSCONFIG_SET_STRING, "nr_inodes", "8", 0) == -1 ||
	    fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) == -1 ||
	    (mnt = fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID |
	    MOUNT_ATTR_NODEV)) == -1) {
		snprintf(err, errlen, "bin tmpfs: %s", strerror(errno));
		goto fail;
	}
	(void)close(fs);
	fs = -1;
	for (i = 0; i < view_nbin_names; i++)
		if (fence_bin_copy(dirfd, mnt, view_bin_names[i], bindir,
		    err, errlen) == -1)
			goto fail;
	for (i = 0; i < view_nbin_names; i++)
		if (strcmp(init, view_bin_names[i]) == 0)
			break;
	if (i == view_nbin_names && (strchr(init, '/') != NULL ||
	    fence_bin_copy(dirfd, mnt, init, bindir, err, errlen) == -1))
		goto fail;
	memset(&attr, 0, sizeof(attr));
	attr.attr_set = MOUNT_ATTR_RDONLY;
	if (mount_setattr(mnt, "", AT_EMPTY_PATH, &attr, sizeof(attr)) == -1) {
		snprintf(err, errlen, "bin tmpfs read-only: %s",
		    strerror(errno));
		goto fail;
	}
	if (fence_bin_clonable == -1) {
		if ((fs = open_tree(mnt, "", OPEN_TREE_CLONE |
		    OPEN_TREE_CLOEXEC | AT_EMPTY_PATH)) != -1)
			fence_bin_clonable = 1;
		else if (errno == EINVAL)
			fence_bin_clonable = 0;
		else {
			snprintf(err, errlen, "clone the bin tmpfs: %s",
			    strerror(errno));
			goto fail;
		}
		if (fs != -1)
			(void)close(fs);
		fs = -1;
	}
	if (fence_bin_mnt != -1)
		(void)close(fence_bin_mnt);
	fence_bin_mnt = mnt;
	fence_bin_dev = sb.st_dev;
	fence_bin_ino = sb.st_ino;
	(void)strlcpy(fence_bin_init_name, init, sizeof(fence_bin_init_name));
	(void)close(dirfd);
	return (0);
 fail:
	if (fs != -1)
		(void)close(fs);
	if (mnt != -1)
		(void)close(mnt);
	(void)close(dirfd);
	return (-1);
}

int
fence_bin_fd(void)
{
	return (fence_bin_mnt);
}

/* 1 if pid 1 clones fence_bin_fd(), 0 if it attaches it (its own). */
int
fence_bin_shared(void)
{
	return (fence_bin_clonable == 1);
}

/* The flags a read-only bind must keep from its source. */
static unsigned long
fence_mount_keep(const struct statvfs *sv)
{
	unsigned long	 f = 0;

	if (sv->f_flag & ST_NOEXEC)
		f |= MS_NOEXEC;
	if (sv->f_flag & ST_NOATIME)
		f |= MS_NOATIME;
	else if (!(sv->f_flag & ST_RELATIME))
		f |= MS_STRICTATIME;
	if (sv->f_flag & ST_NODIRATIME)
		f |= MS_NODIRATIME;
	return (f);
}

/*
 * Bind src on dst, then remount it nosuid,nodev and read-only unless rw.
 * what names the mount in errors ("/usr").
 */
static int
fence_mount_bind(struct fence_ctx *ctx, const char *src, int srcfd,
    const char *dst, int rw, const char *what)
{
	struct statvfs	 sv;
	unsigned long	 flags;
	int		 r;

	r = srcfd >= 0 ? fstatvfs(srcfd, &sv) : statvfs(src, &sv);
	if (r == -1)
		return (fence_child_err(ctx, errno, "statvfs %s", what));
	if (mount(src, dst, NULL, MS_BIND, NULL) == -1)
		return (fence_child_err(ctx, errno, "bind %s", what));
	flags = MS_REMOUNT | MS_BIND | MS_NOSUID | MS_NODEV |
	    fence_mount_keep(&sv);
	if (!rw)
		flags |= MS_RDONLY;
	if (mount(NULL, dst, NULL, flags, NULL) == -1)
		return (fence_child_err(ctx, errno, "mount %s %s", what,
		    rw ? "nosuid,nodev" : "read-only"));
	return (0);
}

/*
 * The sizes of the writable tmpfs mounts follow from the fence's memory
 * limit (docs/limits.md).  Their pages are charged to the fence's memory
 * cgroup, so a fence filling them would otherwise meet the OOM killer,
 * which takes its processes, the agent among them: together they stay
 * near half the limit, and what is written past a size gets ENOSPC.
 * Inodes cost kernel memory that a size does not count, so they are
 * bounded too, one per 4 KiB of size.
 */
#define FENCE_TMPFS_DEFAULT_MEMORY	(256ULL << 20)	/* no limit given */
#define FENCE_TMPFS_RUN_MAX		(16ULL << 20)
#define FENCE_TMPFS_INODE_BYTES		4096
#define FENCE_TMPFS_INODES_MIN		1024

enum fence_tmpfs { TMPFS_TMP, TMPFS_VAR, TMPFS_RUN, TMPFS_SHM };

static uint64_t
fence_tmpfs_size(const struct fence_ctx *ctx, enum fence_tmpfs which)
{
	uint64_t	 mem = ctx->fc_spec->fs_limits.fl_memory;

	if (mem == 0)
		mem = FENCE_TMPFS_DEFAULT_MEMORY;
	switch (which) {
	case TMPFS_TMP:
		return (mem / 4);
	case TMPFS_RUN:
		return (mem / 64 < FENCE_TMPFS_RUN_MAX ? mem / 64 :
		    FENCE_TMPFS_RUN_MAX);
	case TMPFS_VAR:
	case TMPFS_SHM:
	default:
		return (mem / 8);
	}
}

static int
fence_mount_tmpfs(struct fence_ctx *ctx, const char *dst, unsigned long flags,
    const char *mode, uint64_t size, const char *what)
{
	char		 opts[128];
	uint64_t	 inodes;

	inodes = size / FENCE_TMPFS_INODE_BYTES;
	if (inodes < FENCE_TMPFS_INODES_MIN)
		inodes = FENCE_TMPFS_INODES_MIN;
	snprintf(opts, sizeof(opts), "mode=%s,size=%llu,nr_inodes=%llu", mode,
	    (unsigned long long)size, (unsigned long long)inodes);
	if (mount("tmpfs", dst, "tmpfs", flags, opts) == -1)
		return (fence_child_err(ctx, errno, "mount tmpfs on %s", what));
	return (0);
}

static int
fence_mount_mkdir(struct fence_ctx *ctx, const char *dir, mode_t mode)
{
	if (mkdir(dir, mode) == -1 && errno != EEXIST)
		return (fence_child_err(ctx, errno, "mkdir /%s", dir));
	return (0);
}

/*
 * The home as a detached mount, for pid 1 to attach at /home/<user>
 * (fence_mount_home()): a clone of the sandbox home's directory, opened
 * without following any symlink and checked to be the fence uid's, or
 * the home image's ext4 made from its loop device, whose root must be
 * the uid's.  Either is nosuid, nodev and private.  Cold boots make it
 * in pid 1 before its mounts (fence_mount_sources()), a pooled boot in
 * the fencer at the take (fence_pool.c): one code for both, system
 * calls only, so it runs in pid 1 before execve too.
 */
int
fence_mount_home_tree(const struct fence_spec *s, int *treep, char *err,
    size_t errlen)
{
	struct mount_attr	 attr;
	struct open_how		 how;
	struct stat		 sb;
	int			 fd = -1, tree = -1, saved;

	*treep = -1;
	if (s->fs_home_given) {
		/* Made by the fencer: checked there, the uid's root. */
		if ((tree = fcntl(s->fs_home_tree, F_DUPFD_CLOEXEC, 0)) == -1 ||
		    fstat(tree, &sb) == -1) {
			snprintf(err, errlen, "the home's mount");
			goto fail;
		}
		if (sb.st_uid != s->fs_uid) {
			snprintf(err, errlen, "home of %s belongs to uid %u, "
			    "not %u", s->fs_key, (unsigned)sb.st_uid,
			    (unsigned)s->fs_uid);
			errno = EPERM;
			goto fail;
		}
		*treep = tree;
		return (0);
	}
	if (s->fs_home_dev[0] != '\0') {
		if ((fd = fsopen("ext4", FSOPEN_CLOEXEC)) == -1 ||
		    fsconfig(fd, FSCONFIG_SET_STRING, "source",
		    s->fs_home_dev, 0) == -1 ||
		    fsconfig(fd, FSCONFIG_SET_FLAG, "discard", NULL, 0) == -1 ||
		    fsconfig(fd, FSCONFIG_SET_STRING, "errors", "remount-ro",
		    0) == -1 ||
		    fsconfig(fd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) == -1 ||
		    (tree = fsmount(fd, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID |
		    MOUNT_ATTR_NODEV)) == -1) {
			snprintf(err, errlen, "mount the home image from %s",
			    s->fs_home_dev);
			goto fail;
		}
		if (fstat(tree, &sb) == -1) {
			snprintf(err, errlen, "stat the home image");
			goto fail;
		}
		if (sb.st_uid != s->fs_uid) {
			snprintf(err, errlen, "home image %s belongs to uid "
			    "%u, not %u", s->fs_home, (unsigned)sb.st_uid,
			    (unsigned)s->fs_uid);
			errno = EPERM;
			goto fail;
		}
		(void)close(fd);
		*treep = tree;
		return (0);
	}
	memset(&how, 0, sizeof(how));
	how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
	how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
	if ((fd = syscall(SYS_openat2, AT_FDCWD, s->fs_home, &how,
	    sizeof(how))) == -1) {
		snprintf(err, errlen, "open home %s", s->fs_home);
		goto fail;
	}
	if (fstat(fd, &sb) == -1) {
		snprintf(err, errlen, "stat home %s", s->fs_home);
		goto fail;
	}
	if (sb.st_uid != s->fs_uid) {
		snprintf(err, errlen, "home %s belongs to uid %u, not %u",
		    s->fs_home, (unsigned)sb.st_uid, (unsigned)s->fs_uid);
		errno = EPERM;
		goto fail;
	}
	if ((tree = open_tree(fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC |
	    AT_EMPTY_PATH)) == -1) {
		snprintf(err, errlen, "clone home %s", s->fs_home);
		goto fail;
	}
	/* As the bind it replaces: read-write, nosuid, nodev, private. */
	memset(&attr, 0, sizeof(attr));
	attr.attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
	attr.attr_clr = MOUNT_ATTR_RDONLY;
	attr.propagation = MS_PRIVATE;
	if (mount_setattr(tree, "", AT_EMPTY_PATH, &attr, sizeof(attr)) == -1) {
		snprintf(err, errlen, "mount home %s nosuid,nodev",
		    s->fs_home);
		goto fail;
	}
	(void)close(fd);
	*treep = tree;
	return (0);
 fail:
	saved = errno;
	if (tree != -1)
		(void)close(tree);
	if (fd != -1)
		(void)close(fd);
	errno = saved;
	return (-1);
}

/*
 * Child side, before anything is mounted: nothing may propagate to the
 * host, and the home of a cold boot is taken now, while pid 1 still
 * sees the host's tree.  A pool pid 1 gets its home at the take.
 */
int
fence_mount_sources(struct fence_ctx *ctx)
{
	char	 what[FENCE_STEP_MAX];

	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == -1)
		return (fence_child_err(ctx, errno, "make / private"));
	if (ctx->fc_pool || ctx->fc_spec->fs_no_home)
		return (0);
	if (fence_mount_home_tree(ctx->fc_spec, &ctx->fc_home_tree, what,
	    sizeof(what)) == -1)
		return (fence_child_err(ctx, errno, "%s", what));
	return (0);
}

/* /usr, /etc and the merged-/usr links. */
static int
fence_mount_system(struct fence_ctx *ctx)
{
	char	 src[PATH_MAX];
	size_t	 i;

	for (i = 0; i < view_nbinds; i++) {
		const struct view_bind *b = &view_binds[i];

		if (b->vb_kind != VIEW_RO)
			continue;
		if (fence_mount_mkdir(ctx, b->vb_dst + 1, 0755) == -1 ||
		    fence_mount_bind(ctx, b->vb_src, -1, b->vb_dst + 1, 0,
		    b->vb_src) == -1)
			return (-1);
	}
	for (i = 0; i < view_nbinds; i++) {
		const struct fence_link *l = &fence_links[i];
		const char *name = view_binds[i].vb_dst + 1;

		if (view_binds[i].vb_kind != VIEW_LINKDIR)
			continue;
		switch (l->fl_kind) {
		case FENCE_LINK_SYMLINK:
			if (symlink(l->fl_target, name) == -1)
				return (fence_child_err(ctx, errno,
				    "symlink /%s", name));
			break;
		case FENCE_LINK_DIR:
			snprintf(src, sizeof(src), "/%s", name);
			if (fence_mount_mkdir(ctx, name, 0755) == -1 ||
			    fence_mount_bind(ctx, src, -1, name, 0,
			    src) == -1)
				return (-1);
			break;
		case FENCE_LINK_NONE:
			break;
		}
	}
	return (0);
}

/* /tmp, /var, /run with the bin dir, /home with the sandbox home. */
static int
fence_mount_scratch(struct fence_ctx *ctx)
{
	const unsigned long	 f = MS_NOSUID | MS_NODEV;
	int			 fd;

	if (fence_mount_mkdir(ctx, "tmp", 01777) == -1 ||
	    fence_mount_tmpfs(ctx, "tmp", f, "1777",
	    fence_tmpfs_size(ctx, TMPFS_TMP), "/tmp") == -1)
		return (-1);
	if (fence_mount_mkdir(ctx, "var", 0755) == -1 ||
	    fence_mount_tmpfs(ctx, "var", f, "0755",
	    fence_tmpfs_size(ctx, TMPFS_VAR), "/var") == -1 ||
	    fence_mount_mkdir(ctx, "var/tmp", 01777) == -1)
		return (-1);

	if (fence_mount_mkdir(ctx, "run", 0755) == -1 ||
	    fence_mount_tmpfs(ctx, "run", f, "0755",
	    fence_tmpfs_size(ctx, TMPFS_RUN), "/run") == -1 ||
	    fence_mount_mkdir(ctx, "run/fenced", 0755) == -1 ||
	    fence_mount_mkdir(ctx, "run/fenced/bin", 0755) == -1)
		return (-1);
	/*
	 * A clone of the detached bin tmpfs, or on a kernel that clones
	 * no detached mount this boot's own: no host path in mountinfo.
	 */
	if (!ctx->fc_bin_shared)
		fd = ctx->fc_bin_mnt;
	else if ((fd = open_tree(ctx->fc_bin_mnt, "", OPEN_TREE_CLONE |
	    OPEN_TREE_CLOEXEC | AT_EMPTY_PATH)) == -1)
		return (fence_child_err(ctx, errno, "clone the bin tmpfs"));
	if (move_mount(fd, "", AT_FDCWD, "run/fenced/bin",
	    MOVE_MOUNT_F_EMPTY_PATH) == -1) {
		if (ctx->fc_bin_shared)
			(void)close(fd);
		return (fence_child_err(ctx, errno, "mount %s",
		    FENCE_BIN_DIR));
	}
	if (ctx->fc_bin_shared)
		(void)close(fd);

	/* The user's own folder in it comes after the split point. */
	if (fence_mount_mkdir(ctx, "home", 0755) == -1 ||
	    fence_mount_tmpfs(ctx, "home", f, "0755", 1ULL << 20,
	    "/home") == -1)
		return (-1);
	return (0);
}

/*
 * Child side, after the split point (the root is the fence's and
 * read-only, /home its own tmpfs): /home/<user>, and the home attached
 * on it.
 */
int
fence_mount_home(struct fence_ctx *ctx)
{
	const struct fence_spec	*s = ctx->fc_spec;

	if (fence_mount_mkdir(ctx, ctx->fc_home_abs, 0700) == -1)
		return (-1);
	if (s->fs_no_home) {
		if (chown(ctx->fc_home_abs, s->fs_uid, s->fs_gid) == -1)
			return (fence_child_err(ctx, errno, "chown %s",
			    ctx->fc_home_abs));
		return (0);
	}
	if (ctx->fc_home_tree == -1)
		return (fence_child_err(ctx, EBADF, "no home to mount"));
	if (move_mount(ctx->fc_home_tree, "", AT_FDCWD, ctx->fc_home_abs,
	    MOVE_MOUNT_F_EMPTY_PATH) == -1)
		return (fence_child_err(ctx, errno, "mount %s",
		    ctx->fc_home_abs));
	(void)close(ctx->fc_home_tree);
	ctx->fc_home_tree = -1;
	return (0);
}

/*
 * Child side, after the split point: a pool pid 1 built its scratch
 * tmpfs mounts for the pool's memory limit; a boot with another limit
 * gets them resized to its own (nothing is in them yet).  A cold boot
 * built them for its own: nothing to do.
 */
int
fence_mount_resize(struct fence_ctx *ctx)
{
	static const struct {
		const char		*r_dir;
		enum fence_tmpfs	 r_which;
		unsigned long		 r_flags;
	} r[] = {
		{ "/tmp", TMPFS_TMP, MS_NOSUID | MS_NODEV },
		{ "/var", TMPFS_VAR, MS_NOSUID | MS_NODEV },
		{ "/run", TMPFS_RUN, MS_NOSUID | MS_NODEV },
		{ "/dev/shm", TMPFS_SHM, MS_NOSUID | MS_NODEV | MS_NOEXEC }
	};
	char		 opts[128];
	uint64_t	 size, inodes;
	size_t		 i;

	if (ctx->fc_built_memory == ctx->fc_spec->fs_limits.fl_memory)
		return (0);
	for (i = 0; i < nitems(r); i++) {
		size = fence_tmpfs_size(ctx, r[i].r_which);
		inodes = size / FENCE_TMPFS_INODE_BYTES;
		if (inodes < FENCE_TMPFS_INODES_MIN)
			inodes = FENCE_TMPFS_INODES_MIN;
		snprintf(opts, sizeof(opts), "size=%llu,nr_inodes=%llu",
		    (unsigned long long)size, (unsigned long long)inodes);
		if (mount(NULL, r[i].r_dir, NULL, MS_REMOUNT | r[i].r_flags,
		    opts) == -1)
			return (fence_child_err(ctx, errno, "resize %s",
			    r[i].r_dir));
	}
	ctx->fc_built_memory = ctx->fc_spec->fs_limits.fl_memory;
	return (0);
}

/*
 * /dev/kvm for the vm backend's QEMU under KVM: the host's node is
 * root's alone, so this /dev gets a node of its own for the fence's uid
 * (0600), and is then mounted without nodev.  It holds no other node
 * (the rest are binds, each a mount with its own flags), is read-only,
 * and nothing in the fence can make a node (no CAP_MKNOD).
 */
static int
fence_mount_kvm(struct fence_ctx *ctx)
{
	const struct fence_spec	*s = ctx->fc_spec;

	if (mknod("dev/kvm", S_IFCHR | 0600, makedev(FENCE_KVM_MAJOR,
	    FENCE_KVM_MINOR)) == -1)
		return (fence_child_err(ctx, errno, "create /dev/kvm"));
	if (chown("dev/kvm", s->fs_uid, s->fs_gid) == -1)
		return (fence_child_err(ctx, errno, "chown /dev/kvm"));
	return (0);
}

/*
 * The fence's own pseudo-terminals (docs/interactive.md, "Terminals"):
 * a new devpts instance, never the host's, whose ptmx anyone in the
 * fence may open (0666) and whose terminals are their opener's, mode
 * 0620, group tty (5) where the host has it.  At most FENCE_PTYS
 * terminals at once in it.  Not nodev: its nodes are what it is for;
 * it holds nothing else and nothing in the fence can make a node.
 */
#define FENCE_PTYS		32
#define FENCE_TTY_GID		5

static int
fence_mount_devpts(struct fence_ctx *ctx)
{
	char		 opts[128];
	struct stat	 st;
	int		 tty;

	tty = getgrgid(FENCE_TTY_GID) != NULL;
	snprintf(opts, sizeof(opts), "newinstance,ptmxmode=0666,mode=0620,"
	    "max=%d%s", FENCE_PTYS, tty ? ",gid=5" : "");
	if (fence_mount_mkdir(ctx, "dev/pts", 0755) == -1)
		return (-1);
	if (mount("devpts", "dev/pts", "devpts", MS_NOSUID | MS_NOEXEC,
	    opts) == -1)
		return (fence_child_err(ctx, errno, "mount /dev/pts"));
	/* A devpts without its own ptmx would be the host's: refuse. */
	if (stat("dev/pts/ptmx", &st) == -1 || !S_ISCHR(st.st_mode))
		return (fence_child_err(ctx, errno, "/dev/pts/ptmx"));
	if (symlink("pts/ptmx", "dev/ptmx") == -1)
		return (fence_child_err(ctx, errno, "symlink /dev/ptmx"));
	return (0);
}

static int
fence_mount_dev(struct fence_ctx *ctx)
{
	unsigned long		 f = MS_NOSUID | MS_NODEV | MS_NOEXEC;
	size_t			 i;

	if (ctx->fc_spec->fs_kvm)
		f &= ~MS_NODEV;
	if (fence_mount_mkdir(ctx, "dev", 0755) == -1 ||
	    fence_mount_tmpfs(ctx, "dev", f, "0755", 64 * 1024, "/dev") == -1)
		return (-1);
	if (ctx->fc_spec->fs_kvm && fence_mount_kvm(ctx) == -1)
		return (-1);
	for (i = 0; i < view_nbinds; i++) {
		const struct view_bind *b = &view_binds[i];

		if (b->vb_kind != VIEW_DEV)
			continue;
		if (mknod(b->vb_dst + 1, S_IFREG | 0666, 0) == -1)
			return (fence_child_err(ctx, errno, "create %s",
			    b->vb_dst));
		if (mount(b->vb_src, b->vb_dst + 1, NULL, MS_BIND, NULL) == -1)
			return (fence_child_err(ctx, errno, "bind %s",
			    b->vb_src));
	}
	for (i = 0; i < nitems(fence_dev_links); i++)
		if (symlink(fence_dev_links[i][1], fence_dev_links[i][0]) == -1)
			return (fence_child_err(ctx, errno, "symlink /%s",
			    fence_dev_links[i][0]));
	if (fence_mount_mkdir(ctx, "dev/shm", 01777) == -1 ||
	    fence_mount_tmpfs(ctx, "dev/shm", f | MS_NODEV, "1777",
	    fence_tmpfs_size(ctx, TMPFS_SHM), "/dev/shm") == -1 ||
	    fence_mount_devpts(ctx) == -1)
		return (-1);
	if (mount(NULL, "dev", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | f,
	    NULL) == -1)
		return (fence_child_err(ctx, errno, "mount /dev read-only"));
	return (0);
}

static int
fence_mount_proc(struct fence_ctx *ctx)
{
	const unsigned long	 f = MS_NOSUID | MS_NODEV | MS_NOEXEC;
	char			 dst[64];
	size_t			 i;

	if (fence_mount_mkdir(ctx, "proc", 0555) == -1)
		return (-1);
	if (mount("proc", "proc", "proc", f, NULL) == -1)
		return (fence_child_err(ctx, errno, "mount /proc"));
	if (mount("proc/sys", "proc/sys", NULL, MS_BIND, NULL) == -1)
		return (fence_child_err(ctx, errno, "bind /proc/sys"));
	if (mount(NULL, "proc/sys", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | f,
	    NULL) == -1)
		return (fence_child_err(ctx, errno,
		    "mount /proc/sys read-only"));
	for (i = 0; i < nitems(fence_proc_files); i++) {
		if (!fence_proc_files_present[i])
			continue;
		snprintf(dst, sizeof(dst), "proc/%s", fence_proc_files[i]);
		if (mount("/dev/null", dst, NULL, MS_BIND, NULL) == -1)
			return (fence_child_err(ctx, errno, "mask /%s", dst));
	}
	for (i = 0; i < nitems(fence_proc_dirs); i++) {
		if (!fence_proc_dirs_present[i])
			continue;
		snprintf(dst, sizeof(dst), "proc/%s", fence_proc_dirs[i]);
		if (mount("tmpfs", dst, "tmpfs", MS_RDONLY | f,
		    "mode=0555,size=4k,nr_inodes=2") == -1)
			return (fence_child_err(ctx, errno, "mask /%s", dst));
	}
	return (0);
}

/* Child side: the whole tree, then pivot_root into it. */
int
fence_mount_build(struct fence_ctx *ctx)
{
	if (mount("tmpfs", FENCE_STAGE_DIR, "tmpfs",
	    MS_NOSUID | MS_NODEV | MS_NOEXEC,
	    "mode=0755,size=64k,nr_inodes=64") == -1)
		return (fence_child_err(ctx, errno, "mount new root on %s",
		    FENCE_STAGE_DIR));
	if (chdir(FENCE_STAGE_DIR) == -1)
		return (fence_child_err(ctx, errno, "chdir new root"));

	if (fence_mount_system(ctx) == -1 ||
	    fence_mount_scratch(ctx) == -1 ||
	    fence_mount_dev(ctx) == -1 ||
	    fence_mount_proc(ctx) == -1)
		return (-1);

	/*
	 * pivot_root(".", ".") stacks the old root on the new one; detaching
	 * it leaves no directory behind and no way back to the host's tree.
	 */
	if (syscall(SYS_pivot_root, ".", ".") == -1)
		return (fence_child_err(ctx, errno, "pivot_root"));
	if (umount2(".", MNT_DETACH) == -1)
		return (fence_child_err(ctx, errno, "detach the old root"));
	if (chdir("/") == -1)
		return (fence_child_err(ctx, errno, "chdir /"));
	if (mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY |
	    MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) == -1)
		return (fence_child_err(ctx, errno, "mount / read-only"));
	return (0);
}
