/*
 * fence-escape: a hostile program of fenced's own, run as an ordinary
 * command inside a fence (regress/escape_test.sh, docs/escape.md).  It
 * makes break-out attempts, each with real system calls, and prints one
 * line per attempt:
 *
 *	ID CLASS VERDICT detail
 *
 * VERDICT is "blocked" (the attempt failed; detail is the errno name or
 * the evidence) or "escaped" (it worked; detail is the evidence).  What a
 * tier should allow is not decided here: docs/escape.md has the table
 * and the test compares.  Every attempt runs in a child of its own with
 * an alarm, in a process group of its own that is killed afterwards, so
 * one that hangs, crashes or forks stops there.  An attempt that would
 * change something if it worked changes nothing that matters: the clock
 * is set to what was just read, the host name to itself, and reboot,
 * kexec, swapon and the module calls get arguments that are invalid
 * after the permission check (EPERM before it, EINVAL or ENOENT after).
 * The host's targets come from the command line, never from here.
 *
 * Linked static (libc only), like fence-probe, so that it runs in every
 * fence: native, runsc's and the vm guest's.
 */

#include <sys/types.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/swap.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/timex.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/user.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <sys/xattr.h>

#include <linux/bpf.h>
#include <linux/if_alg.h>
#include <linux/io_uring.h>
#include <linux/keyctl.h>
#include <linux/netlink.h>
#include <linux/perf_event.h>
#include <linux/rtnetlink.h>
#include <linux/userfaultfd.h>
#include <linux/vm_sockets.h>

#include <netinet/in.h>
#include <arpa/inet.h>
#include <asm/ldt.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <ifaddrs.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/klog.h>
#include <time.h>
#include <unistd.h>

#ifndef SYS_open_tree
#define SYS_open_tree		428
#endif
#ifndef SYS_fsopen
#define SYS_fsopen		430
#endif
#ifndef SYS_mount_setattr
#define SYS_mount_setattr	442
#endif
#define ESC_OPEN_TREE_CLONE	1
#define ESC_AT_RECURSIVE	0x8000
#define ESC_MOUNT_ATTR_RDONLY	0x1
#define ESC_X32_BIT		0x40000000

/* <linux/mount.h> and glibc's <sys/mount.h> do not mix: our own copy. */
struct esc_mount_attr {
	uint64_t	ma_set;
	uint64_t	ma_clr;
	uint64_t	ma_propagation;
	uint64_t	ma_userns_fd;
};

struct esc_opts {
	const char	*o_secret;	/* -s: the host's secret file */
	int		 o_port;	/* -p: a host TCP listener on 127.0.0.1 */
	const char	*o_abstract;	/* -u: a host abstract socket's name */
	const char	*o_other;	/* -o: another fence's home, host path */
	const char	*o_ctlsock;	/* -x: the daemon's control socket */
	const char	*o_marker;	/* -m: a string only the host has */
	const char	*o_hostname;	/* -n: the host's name */
	const char	*o_bootid;	/* -b: the host's boot_id */
	pid_t		 o_hostpid;	/* -P: a host process */
	pid_t		 o_target;	/* -t: the agent (default 1) */
};

struct esc_attempt {
	const char	*a_id;
	const char	*a_class;
	const char	*a_what;
	void		(*a_fn)(void);
	int		 a_secs;	/* alarm */
	int		 a_solo;	/* only when named with -a */
};

static struct esc_opts		 opt = { .o_target = 1 };
static const struct esc_attempt	*cur;
static int			 resfd = -1;
static int			 said;
/* Progress of an attempt, shared with its parent to explain a kill. */
static volatile long		*progress;
/* Descriptors open when the program started, before it opened any. */
static char			 startfds[512];

/* glibc before 2.38 has no strlcat, and this program links libc only. */
static size_t
esc_strlcat(char *dst, const char *src, size_t len)
{
	size_t	 d = strnlen(dst, len), s = strlen(src);

	if (d == len)
		return (len + s);
	snprintf(dst + d, len - d, "%s", src);
	return (d + s);
}
#define strlcat	esc_strlcat

static const char *
ename(int e)
{
	const char	*n = strerrorname_np(e);
	static char	 buf[16];

	if (n != NULL)
		return (n);
	snprintf(buf, sizeof(buf), "E%d", e);
	return (buf);
}

static void
verdict(int escaped, const char *fmt, va_list ap)
{
	char	 line[1024], detail[768];
	size_t	 i;
	int	 n;

	if (said)
		return;
	said = 1;
	vsnprintf(detail, sizeof(detail), fmt, ap);
	for (i = 0; detail[i] != '\0'; i++)
		if (detail[i] < 0x20 || detail[i] > 0x7e)
			detail[i] = '?';
	n = snprintf(line, sizeof(line), "%s %s %s %s\n", cur->a_id,
	    cur->a_class, escaped ? "escaped" : "blocked",
	    detail[0] != '\0' ? detail : "-");
	if (n > 0 && (size_t)n >= sizeof(line))
		n = sizeof(line) - 1;
	if (n > 0 && write(resfd, line, n) != n)
		_exit(2);
}

static void __attribute__((format(printf, 1, 2)))
blocked(const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	verdict(0, fmt, ap);
	va_end(ap);
}

static void __attribute__((format(printf, 1, 2)))
escaped(const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	verdict(1, fmt, ap);
	va_end(ap);
}

/* r < 0: blocked with errno's name; else escaped with what. */
static void
judge(long r, const char *what)
{
	if (r < 0)
		blocked("%s", ename(errno));
	else
		escaped("%s", what);
}

static const char *
home(void)
{
	const char	*h = getenv("HOME");

	return (h != NULL && h[0] == '/' ? h : "/nonexistent");
}

static ssize_t
read_file(const char *path, char *buf, size_t len)
{
	ssize_t	 n, got = 0;
	int	 fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return (-1);
	while ((size_t)got < len - 1 &&
	    (n = read(fd, buf + got, len - 1 - got)) > 0)
		got += n;
	buf[got] = '\0';
	close(fd);
	return (got);
}

/* The hex value of a /proc/self/status field, or -1. */
static long long
status_hex(const char *field)
{
	char		 buf[8192], *p;
	size_t		 l = strlen(field);

	if (read_file("/proc/self/status", buf, sizeof(buf)) < 0)
		return (-1);
	for (p = buf; p != NULL && *p != '\0'; p = strchr(p, '\n')) {
		if (*p == '\n')
			p++;
		if (strncmp(p, field, l) == 0 && p[l] == ':')
			return (strtoll(p + l + 1, NULL, 16));
	}
	return (-1);
}

static void
dirname_of(const char *path, char *buf, size_t len)
{
	char	*s;

	snprintf(buf, len, "%s", path);
	if ((s = strrchr(buf, '/')) != NULL && s != buf)
		*s = '\0';
}

/* ---- filesystem ---- */

static void
a_fs_host_path(void)
{
	char		 dir[4096];
	struct stat	 sb;

	if (opt.o_secret == NULL)
		return (blocked("no -s given"));
	dirname_of(opt.o_secret, dir, sizeof(dir));
	if (stat(dir, &sb) == -1)
		return (blocked("stat %s: %s", dir, ename(errno)));
	escaped("stat %s: inode %llu uid %u", dir,
	    (unsigned long long)sb.st_ino, sb.st_uid);
}

static void
try_read(const char *path)
{
	char	 buf[64];
	ssize_t	 n;
	int	 fd;

	if ((fd = open(path, O_RDONLY)) == -1)
		return (blocked("%s", ename(errno)));
	n = read(fd, buf, sizeof(buf));
	if (n < 0)
		return (blocked("opened, read %s", ename(errno)));
	escaped("read %zd bytes of %s", n, path);
}

static void
a_fs_dotdot(void)
{
	char	 p[8192];

	if (opt.o_secret == NULL)
		return (blocked("no -s given"));
	snprintf(p, sizeof(p), "%s/../../../../../../../..%s", home(),
	    opt.o_secret);
	try_read(p);
}

static void
a_fs_symlink_out(void)
{
	char	 l[4096];

	if (opt.o_secret == NULL)
		return (blocked("no -s given"));
	snprintf(l, sizeof(l), "%s/.fenced-escape-link", home());
	unlink(l);
	if (symlink(opt.o_secret, l) == -1)
		return (blocked("symlink %s", ename(errno)));
	try_read(l);
	/* Left in the home: the host must not follow it either. */
}

static void
a_fs_symlink_write(void)
{
	char	 l[4096];
	int	 fd;

	snprintf(l, sizeof(l), "%s/.fenced-escape-wlink", home());
	unlink(l);
	if (symlink("/etc/fenced-escape-was-here", l) == -1)
		return (blocked("symlink %s", ename(errno)));
	/* Without O_EXCL, which would not follow the link. */
	fd = open(l, O_WRONLY | O_CREAT, 0644);
	unlink(l);
	if (fd == -1)
		return (blocked("%s", ename(errno)));
	unlink("/etc/fenced-escape-was-here");
	escaped("created /etc/fenced-escape-was-here through a symlink");
}

static void
a_fs_hardlink_out(void)
{
	char	 l[4096];

	snprintf(l, sizeof(l), "%s/.fenced-escape-hardlink", home());
	unlink(l);
	if (link("/etc/passwd", l) == -1)
		return (blocked("%s", ename(errno)));
	unlink(l);
	escaped("hard link of /etc/passwd made in the home");
}

static void
try_create(const char *path)
{
	int	fd;

	if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644)) == -1)
		return (blocked("%s", ename(errno)));
	close(fd);
	unlink(path);
	escaped("created %s", path);
}

static void a_fs_write_usr(void) { try_create("/usr/.fenced-escape"); }
static void a_fs_write_etc(void) { try_create("/etc/.fenced-escape"); }

static void
a_fs_write_root(void)
{
	if (mkdir("/.fenced-escape", 0700) == -1)
		return (blocked("%s", ename(errno)));
	rmdir("/.fenced-escape");
	escaped("mkdir /.fenced-escape");
}

static void
a_fs_remount(void)
{
	judge(mount(NULL, "/usr", NULL, MS_REMOUNT | MS_BIND, NULL),
	    "/usr remounted read-write");
}

/* mount(2) onto a folder of our own in /tmp, which goes again after. */
static void
try_mount(const char *src, const char *dir, const char *type,
    unsigned long flags, const char *what)
{
	int	 r;

	if (mkdir(dir, 0700) == -1 && errno != EEXIST)
		return (blocked("mkdir %s", ename(errno)));
	r = mount(src, dir, type, flags, type != NULL ? "" : NULL);
	judge(r, what);
	if (r == 0)
		umount2(dir, MNT_DETACH);
	rmdir(dir);
}

static void
a_fs_mount_tmpfs(void)
{
	try_mount("escape", "/tmp/.fenced-escape-mnt", "tmpfs", 0,
	    "mounted a tmpfs");
}

static void
a_fs_bind_root(void)
{
	try_mount("/", "/tmp/.fenced-escape-bind", NULL, MS_BIND | MS_REC,
	    "bound / onto /tmp");
}

static void
a_fs_umount(void)
{
	judge(umount2("/proc/sys", MNT_DETACH),
	    "unmounted the read-only /proc/sys");
}

static void
a_fs_fsopen(void)
{
	judge(syscall(SYS_fsopen, "tmpfs", 0), "fsopen tmpfs");
}

static void
a_fs_open_tree(void)
{
	judge(syscall(SYS_open_tree, AT_FDCWD, "/",
	    ESC_OPEN_TREE_CLONE | ESC_AT_RECURSIVE), "cloned the mount tree");
}

static void
a_fs_mount_setattr(void)
{
	struct esc_mount_attr	 ma;

	memset(&ma, 0, sizeof(ma));
	ma.ma_clr = ESC_MOUNT_ATTR_RDONLY;
	judge(syscall(SYS_mount_setattr, AT_FDCWD, "/usr", 0, &ma,
	    sizeof(ma)), "cleared read-only on /usr");
}

static void
a_fs_chroot(void)
{
	int	 i;

	if (chroot("/tmp") == -1)
		return (blocked("%s", ename(errno)));
	/* The classic way out of a chroot one did oneself. */
	for (i = 0; i < 64; i++)
		if (chdir("..") == -1)
			break;
	escaped("chroot /tmp worked");
}

static void
a_fs_pivot_root(void)
{
	if (chdir("/tmp") == -1)
		return (blocked("chdir %s", ename(errno)));
	judge(syscall(SYS_pivot_root, ".", "."), "pivot_root worked");
}

static void
a_fs_proc_root(void)
{
	char	 p[4096];
	pid_t	 pids[] = { 1, getppid(), opt.o_target };
	size_t	 i;
	int	 fd;

	if (opt.o_secret == NULL)
		return (blocked("no -s given"));
	for (i = 0; i < sizeof(pids) / sizeof(pids[0]); i++) {
		snprintf(p, sizeof(p), "/proc/%d/root%s", (int)pids[i],
		    opt.o_secret);
		if ((fd = open(p, O_RDONLY)) != -1)
			return (escaped("opened %s", p));
	}
	blocked("%s", ename(errno));
}

static void
a_fs_open_by_handle(void)
{
	struct {
		struct file_handle	fh;
		unsigned char		b[8];
	} h;
	uint32_t	 ino = 2, gen = 0;
	int		 m, fd;

	if ((m = open("/etc", O_RDONLY | O_DIRECTORY)) == -1)
		return (blocked("open /etc %s", ename(errno)));
	/* The root inode of /etc's filesystem: the host's root. */
	memset(&h, 0, sizeof(h));
	h.fh.handle_bytes = 8;
	h.fh.handle_type = 1;		/* FILEID_INO32_GEN */
	memcpy(h.fh.f_handle, &ino, 4);
	memcpy(h.fh.f_handle + 4, &gen, 4);
	if ((fd = open_by_handle_at(m, &h.fh, O_RDONLY)) == -1)
		return (blocked("%s", ename(errno)));
	escaped("opened inode 2 of /etc's filesystem (fd %d)", fd);
}

static void
a_fs_mknod(void)
{
	char	 p[4096];
	int	 fd;

	snprintf(p, sizeof(p), "%s/.fenced-escape-mem", home());
	unlink(p);
	if (mknod(p, S_IFCHR | 0600, makedev(1, 1)) == -1)
		return (blocked("mknod %s", ename(errno)));
	fd = open(p, O_RDONLY);
	unlink(p);
	if (fd == -1)
		return (blocked("made, open %s", ename(errno)));
	escaped("opened a /dev/mem node made in the home");
}

static void
try_devs(const char *const *devs, int flags)
{
	int	 i, fd, e = ENOENT;

	for (i = 0; devs[i] != NULL; i++) {
		if ((fd = open(devs[i], flags)) != -1)
			return (escaped("opened %s", devs[i]));
		if (errno != ENOENT)
			e = errno;
	}
	blocked("%s", ename(e));
}

static void
a_fs_dev_mem(void)
{
	static const char *const d[] = { "/dev/mem", "/dev/kmem", "/dev/port",
	    NULL };

	try_devs(d, O_RDONLY);
}

static void
a_fs_dev_disk(void)
{
	static const char *const d[] = { "/dev/sda", "/dev/vda", "/dev/xvda",
	    "/dev/nvme0n1", "/dev/loop0", "/dev/dm-0", NULL };

	try_devs(d, O_RDONLY);
}

static void
a_fs_dev_kvm(void)
{
	static const char *const d[] = { "/dev/kvm", "/dev/vhost-vsock",
	    "/dev/vhost-net", NULL };

	try_devs(d, O_RDWR);
}

static void
a_fs_dev_misc(void)
{
	static const char *const d[] = { "/dev/net/tun", "/dev/fuse",
	    "/dev/loop-control", "/dev/uinput", "/dev/kmsg", NULL };

	try_devs(d, O_RDWR);
}

static void
a_fs_inherited_fds(void)
{
	char	 list[1024] = "", one[300], path[64], to[256];
	ssize_t	 n;
	int	 i, found = 0;

	for (i = 3; i < (int)sizeof(startfds); i++) {
		if (!startfds[i])
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", i);
		if ((n = readlink(path, to, sizeof(to) - 1)) < 0)
			n = 0;
		to[n] = '\0';
		snprintf(one, sizeof(one), "%s%d=%s", found ? "," : "", i, to);
		strlcat(list, one, sizeof(list));
		found++;
	}
	if (found)
		escaped("descriptors open at start: %s", list);
	else
		blocked("only 0, 1 and 2 open at start");
}

static void
a_fs_agent_exe(void)
{
	char	 p[64];

	snprintf(p, sizeof(p), "/proc/%d/exe", (int)opt.o_target);
	if (open(p, O_WRONLY) == -1)
		return (blocked("%s", ename(errno)));
	escaped("opened %s for writing", p);
}

/*
 * CVE-2019-5736's way: a host binary the fence runs, reached through
 * /proc/N/exe of the process running it (the fence's own binaries in
 * the home are its own to write anyway).
 */
static void
a_fs_proc_exe(void)
{
	static const char *const bins[] = { "/usr/bin/sleep", "/bin/sleep",
	    NULL };
	char	 p[64], to[4096];
	ssize_t	 n;
	pid_t	 pid;
	int	 i, fd, t;

	for (i = 0; bins[i] != NULL; i++)
		if (access(bins[i], X_OK) == 0)
			break;
	if (bins[i] == NULL)
		return (blocked("no sleep to run"));
	if ((pid = fork()) == -1)
		return (blocked("fork %s", ename(errno)));
	if (pid == 0) {
		execl(bins[i], "sleep", "5", (char *)NULL);
		_exit(127);
	}
	snprintf(p, sizeof(p), "/proc/%d/exe", (int)pid);
	/* Until the child has executed it. */
	for (t = 0; t < 200; t++) {
		if ((n = readlink(p, to, sizeof(to) - 1)) > 0) {
			to[n] = '\0';
			if (strstr(to, "sleep") != NULL)
				break;
		}
		usleep(5000);
	}
	fd = open(p, O_WRONLY);
	kill(pid, SIGKILL);
	if (fd != -1)
		return (escaped("opened %s (%s) for writing", p, bins[i]));
	blocked("%s", ename(errno));
}

static void
a_fs_bin_write(void)
{
	static const char *const d[] = { "/run/fenced/bin/fence-agent",
	    "/run/fenced/bin/fence-probe", "/run/fenced/bin",  NULL };
	int	 i, e = ENOENT;

	for (i = 0; d[i] != NULL; i++) {
		if (i < 2 && open(d[i], O_WRONLY | O_APPEND) != -1)
			return (escaped("opened %s for writing", d[i]));
		if (i == 2 && mkdir("/run/fenced/bin/.fenced-escape", 0700)
		    == 0)
			return (escaped("made a directory in %s", d[i]));
		if (errno != ENOENT)
			e = errno;
	}
	blocked("%s", ename(e));
}

static void
a_fs_sys(void)
{
	static const char *const d[] = { "/sys/kernel/uevent_helper",
	    "/sys/power/state", "/sys/kernel/mm/transparent_hugepage/enabled",
	    NULL };

	try_devs(d, O_WRONLY);
}

/* ---- processes ---- */

static void
proc_open(const char *what)
{
	char	 p[64], buf[256];
	int	 fd;
	ssize_t	 n;

	snprintf(p, sizeof(p), "/proc/%d/%s", (int)opt.o_target, what);
	if ((fd = open(p, O_RDONLY)) == -1)
		return (blocked("%s", ename(errno)));
	n = read(fd, buf, sizeof(buf));
	if (n < 0)
		return (blocked("opened, read %s", ename(errno)));
	escaped("read %zd bytes of %s", n, p);
}

static void
a_proc_agent_mem(void)
{
	char	 p[64], buf[16];
	int	 fd;

	snprintf(p, sizeof(p), "/proc/%d/mem", (int)opt.o_target);
	if ((fd = open(p, O_RDONLY)) == -1)
		return (blocked("%s", ename(errno)));
	/* Any mapped page will do: the stack of a program like us. */
	if (pread(fd, buf, sizeof(buf), 0x400000) < 0 && errno == EIO)
		return (escaped("opened %s (read at 0x400000: EIO)", p));
	escaped("opened and read %s", p);
}

static void a_proc_agent_environ(void) { proc_open("environ"); }
static void a_proc_agent_maps(void) { proc_open("maps"); }

static void
a_proc_agent_fds(void)
{
	char	 p[64], to[256];
	ssize_t	 n;
	DIR	*d;

	snprintf(p, sizeof(p), "/proc/%d/fd", (int)opt.o_target);
	if ((d = opendir(p)) == NULL)
		return (blocked("%s", ename(errno)));
	if (readdir(d) == NULL)
		return (blocked("opened, readdir %s", ename(errno)));
	snprintf(p, sizeof(p), "/proc/%d/fd/3", (int)opt.o_target);
	if ((n = readlink(p, to, sizeof(to) - 1)) < 0)
		return (blocked("listed, readlink fd 3 %s", ename(errno)));
	to[n] = '\0';
	escaped("%s -> %s", p, to);
}

/*
 * A character device anyone may open and that carries nothing: null,
 * zero, full, random, urandom (major 1).  Any other one of the agent's
 * may be a channel: a terminal, or a virtio port, which a vm fence's
 * agent reads its frames from.  gVisor gives a host descriptor's
 * device as 0:0 (the host's /dev/null as a runsc fence's agent's
 * stderr, a virtio port as the inner vm fence's once was): such a one
 * is taken for a null device only if a read of it, O_NONBLOCK, ends at
 * once (a channel with nothing to read says EAGAIN, and one with
 * something loses a byte to the attack that opened it).
 */
static int
harmless_chr(int fd, dev_t rdev)
{
	char	 c;

	if (major(rdev) == 0 && minor(rdev) == 0)
		return (read(fd, &c, 1) == 0);
	if (major(rdev) != 1)
		return (0);
	switch (minor(rdev)) {
	case 3: case 5: case 7: case 8: case 9:
		return (1);
	}
	return (0);
}

/*
 * The agent's descriptors opened through /proc/N/fd (opened, never
 * written).  *socks gets the sockets and anything else not a pipe or
 * a harmless device (the agent's channel to the daemon is a socket, or
 * a virtio port's character device), *pipes the pipes, *devs the
 * harmless devices (the agent's /dev/null and such, which anyone may
 * open); returns the errno of the last refusal.
 */
static int
agent_fds_open(char *socks, char *pipes, char *devs, size_t len, int *links)
{
	char		 p[64], to[256], one[300];
	struct stat	 sb;
	ssize_t		 n;
	int		 i, fd, harmless, e = ENOENT;

	socks[0] = pipes[0] = devs[0] = '\0';
	*links = 0;
	for (i = 0; i < 64; i++) {
		snprintf(p, sizeof(p), "/proc/%d/fd/%d", (int)opt.o_target, i);
		if ((n = readlink(p, to, sizeof(to) - 1)) < 0) {
			if (errno != ENOENT)
				e = errno;
			continue;
		}
		to[n] = '\0';
		(*links)++;
		if ((fd = open(p, O_RDWR | O_NOCTTY | O_NONBLOCK)) == -1 &&
		    (fd = open(p, O_RDONLY | O_NOCTTY | O_NONBLOCK)) == -1) {
			e = errno;
			continue;
		}
		if (fstat(fd, &sb) == -1)
			memset(&sb, 0, sizeof(sb));
		if (S_ISCHR(sb.st_mode))
			snprintf(one, sizeof(one), " %d=%s(char %u:%u)", i, to,
			    major(sb.st_rdev), minor(sb.st_rdev));
		else
			snprintf(one, sizeof(one), " %d=%s", i, to);
		harmless = S_ISCHR(sb.st_mode) && harmless_chr(fd, sb.st_rdev);
		(void)close(fd);
		if (harmless)
			strlcat(devs, one, len);
		else if (S_ISFIFO(sb.st_mode))
			strlcat(pipes, one, len);
		else
			strlcat(socks, one, len);
	}
	return (e);
}

/* The agent's channel, or any descriptor of it but pipes and devices. */
static void
a_proc_agent_channel(void)
{
	char	 socks[512], pipes[512], devs[256];
	int	 e, links;

	e = agent_fds_open(socks, pipes, devs, sizeof(devs), &links);
	if (socks[0] != '\0')
		return (escaped("opened the agent's descriptors:%s", socks));
	blocked("%s (%d descriptors seen, no socket opened%s%s)", ename(e),
	    links, pipes[0] != '\0' ? "; pipes opened:" : "", pipes);
}

/* The agent's pipes: its commands' output and its supervisors' reports. */
static void
a_proc_agent_pipes(void)
{
	char	 socks[512], pipes[512], devs[256];
	int	 e, links;

	e = agent_fds_open(socks, pipes, devs, sizeof(devs), &links);
	if (pipes[0] != '\0')
		return (escaped("opened the agent's pipes:%s", pipes));
	blocked("%s (%d descriptors seen)", ename(e), links);
}

static void
a_proc_ptrace_agent(void)
{
	if (ptrace(PTRACE_ATTACH, opt.o_target, NULL, NULL) == -1)
		return (blocked("%s", ename(errno)));
	ptrace(PTRACE_DETACH, opt.o_target, NULL, NULL);
	escaped("attached to pid %d", (int)opt.o_target);
}

static void
a_proc_vm_readv(void)
{
	char		 buf[16];
	struct iovec	 l = { buf, sizeof(buf) }, r = { (void *)0x400000, 16 };

	if (process_vm_readv(opt.o_target, &l, 1, &r, 1, 0) >= 0 ||
	    errno == EFAULT)
		return (escaped("process_vm_readv of pid %d passed the "
		    "permission check", (int)opt.o_target));
	blocked("%s", ename(errno));
}

static void
a_proc_ptrace_child(void)
{
	pid_t	 pid;
	int	 st;

	if ((pid = fork()) == -1)
		return (blocked("fork %s", ename(errno)));
	if (pid == 0) {
		pause();
		_exit(0);
	}
	if (ptrace(PTRACE_SEIZE, pid, NULL, NULL) == -1) {
		kill(pid, SIGKILL);
		return (blocked("%s", ename(errno)));
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	escaped("seized own child %d", (int)pid);
}

static void
a_proc_signal_host(void)
{
	if (opt.o_hostpid <= 0)
		return (blocked("no -P given"));
	judge(kill(opt.o_hostpid, 0), "signal 0 reached the host's pid");
}

static void
a_proc_see_host(void)
{
	char		 p[300], buf[4096];
	struct dirent	*de;
	DIR		*d;
	ssize_t		 n, i;
	int		 nproc = 0;

	if (opt.o_marker == NULL)
		return (blocked("no -m given"));
	if ((d = opendir("/proc")) == NULL)
		return (blocked("opendir /proc %s", ename(errno)));
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		nproc++;
		snprintf(p, sizeof(p), "/proc/%s/cmdline", de->d_name);
		if ((n = read_file(p, buf, sizeof(buf))) <= 0)
			continue;
		for (i = 0; i < n; i++)
			if (buf[i] == '\0')
				buf[i] = ' ';
		/* We carry the marker in our own arguments. */
		if (strstr(buf, "fence-escape") != NULL)
			continue;
		if (strstr(buf, opt.o_marker) != NULL)
			return (escaped("pid %s is the host's marked process",
			    de->d_name));
	}
	blocked("%d processes visible, none of the host's", nproc);
}

static void
a_proc_unshare_pid(void)
{
	judge(unshare(CLONE_NEWPID | CLONE_NEWNS), "new pid and mount "
	    "namespaces");
}

static void
a_proc_setns(void)
{
	char	 p[64];
	int	 fd;

	snprintf(p, sizeof(p), "/proc/%d/ns/mnt", (int)opt.o_target);
	if ((fd = open(p, O_RDONLY)) == -1 &&
	    (fd = open("/proc/self/ns/mnt", O_RDONLY)) == -1)
		return (blocked("open ns %s", ename(errno)));
	judge(setns(fd, CLONE_NEWNS), "setns into a mount namespace");
}

static void
a_proc_outlive(void)
{
	pid_t	 pid;
	int	 p[2], st;
	char	 buf[128];
	ssize_t	 n;

	if (pipe(p) == -1)
		return (blocked("pipe %s", ename(errno)));
	if ((pid = fork()) == -1)
		return (blocked("fork %s", ename(errno)));
	if (pid == 0) {
		close(p[0]);
		setsid();
		if (fork() != 0)
			_exit(0);
		/* The orphan: deaf to everything it can be deaf to. */
		signal(SIGTERM, SIG_IGN);
		signal(SIGHUP, SIG_IGN);
		signal(SIGINT, SIG_IGN);
		usleep(200000);
		snprintf(buf, sizeof(buf), "%d %d", (int)getpid(),
		    (int)getppid());
		if (write(p[1], buf, strlen(buf)) < 0)
			_exit(1);
		close(p[1]);
		close(resfd);
		for (;;)
			sleep(3600);
	}
	close(p[1]);
	waitpid(pid, &st, 0);
	n = read(p[0], buf, sizeof(buf) - 1);
	if (n <= 0)
		return (blocked("the orphan did not answer"));
	buf[n] = '\0';
	/*
	 * A parent outside our pid namespace shows as 0: the orphan would
	 * have left the fence's tree.  The host checks that it dies with
	 * the fence.
	 */
	if (strchr(buf, ' ') != NULL && atoi(strchr(buf, ' ') + 1) == 0)
		return (escaped("orphan %s: parent outside the namespace", buf));
	blocked("orphan (pid ppid) %s left running, reparented inside; the "
	    "host checks it dies with the fence", buf);
}

static void
a_proc_cgroup_move(void)
{
	static const char *const d[] = { "/sys/fs/cgroup/cgroup.procs",
	    "/sys/fs/cgroup/pids/cgroup.procs",
	    "/sys/fs/cgroup/memory/cgroup.procs", NULL };
	char	 pid[32];
	int	 i, fd, e = ENOENT, n;

	n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	for (i = 0; d[i] != NULL; i++) {
		if ((fd = open(d[i], O_WRONLY)) == -1) {
			if (errno != ENOENT)
				e = errno;
			continue;
		}
		if (write(fd, pid, n) == n)
			return (escaped("moved into %s", d[i]));
		e = errno;
		close(fd);
	}
	blocked("%s", ename(e));
}

static void
a_proc_rt_sched(void)
{
	struct sched_param	 sp = { .sched_priority = 1 };

	if (sched_setscheduler(0, SCHED_FIFO, &sp) == -1)
		return (blocked("%s", ename(errno)));
	sp.sched_priority = 0;
	sched_setscheduler(0, SCHED_OTHER, &sp);
	escaped("SCHED_FIFO granted");
}

static void
a_proc_nice(void)
{
	if (setpriority(PRIO_PROCESS, 0, -10) == -1)
		return (blocked("%s", ename(errno)));
	escaped("nice -10 granted");
}

/* ---- identity and capabilities ---- */

static void
a_id_uid(void)
{
	uid_t	 r, e, s;
	gid_t	 gr, ge, gs;

	getresuid(&r, &e, &s);
	getresgid(&gr, &ge, &gs);
	if (r == 0 || e == 0 || s == 0 || gr == 0 || ge == 0 || gs == 0)
		return (escaped("uids %u %u %u gids %u %u %u", r, e, s, gr, ge,
		    gs));
	blocked("uid %u gid %u", r, gr);
}

static void a_id_setuid0(void) { judge(setuid(0), "setuid(0) worked"); }

static void
a_id_setgroups(void)
{
	gid_t	 g = 0;

	judge(setgroups(1, &g), "joined group 0");
}

static void
a_id_capeff(void)
{
	long long	 e = status_hex("CapEff"), p = status_hex("CapPrm"),
			 i = status_hex("CapInh");

	if (e < 0)
		return (blocked("no CapEff in /proc/self/status"));
	if (e != 0 || p > 0 || i > 0)
		return (escaped("CapEff %llx CapPrm %llx CapInh %llx", e, p,
		    i));
	blocked("CapEff CapPrm CapInh 0");
}

static void
a_id_capbnd(void)
{
	long long	 b = status_hex("CapBnd");

	if (b < 0)
		return (blocked("no CapBnd in /proc/self/status"));
	if (b != 0)
		return (escaped("CapBnd %llx", b));
	blocked("CapBnd 0");
}

static void
a_id_capamb(void)
{
	long long	 a = status_hex("CapAmb");

	if (a > 0)
		return (escaped("CapAmb %llx", a));
	judge(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, 13 /* NET_RAW */,
	    0, 0), "raised CAP_NET_RAW into the ambient set");
}

static void
a_id_nnp(void)
{
	int	 r = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);

	if (r == 1)
		return (blocked("no_new_privs set"));
	if (r < 0)
		return (blocked("PR_GET_NO_NEW_PRIVS %s", ename(errno)));
	escaped("no_new_privs not set: setuid and file capabilities apply");
}

static void
a_id_setuid_exec(void)
{
	static const char *const bins[] = { "/usr/bin/su", "/usr/bin/passwd",
	    "/usr/bin/chsh", "/usr/bin/newgrp", "/usr/bin/mount",
	    "/usr/bin/gpasswd", "/bin/su", NULL };
	char		 p[64], buf[4096], *u;
	struct stat	 sb;
	pid_t		 pid;
	int		 i, in[2], t;
	unsigned	 r, e;

	for (i = 0; bins[i] != NULL; i++)
		if (stat(bins[i], &sb) == 0 && (sb.st_mode & S_ISUID) &&
		    sb.st_uid == 0)
			break;
	if (bins[i] == NULL)
		return (blocked("no setuid-root program found"));
	if (pipe(in) == -1)
		return (blocked("pipe %s", ename(errno)));
	if ((pid = fork()) == -1)
		return (blocked("fork %s", ename(errno)));
	if (pid == 0) {
		dup2(in[0], 0);
		execl(bins[i], bins[i], (char *)NULL);
		_exit(127);
	}
	/* It waits for a password on its stdin: look at it meanwhile. */
	snprintf(p, sizeof(p), "/proc/%d/status", (int)pid);
	for (t = 0; t < 300; t++) {
		if (read_file(p, buf, sizeof(buf)) > 0 &&
		    (u = strstr(buf, "\nUid:")) != NULL &&
		    sscanf(u + 5, "%u %u", &r, &e) == 2 && e == 0) {
			kill(pid, SIGKILL);
			return (escaped("%s ran with euid 0", bins[i]));
		}
		if (waitpid(pid, NULL, WNOHANG) == pid)
			break;
		usleep(1000);
	}
	kill(pid, SIGKILL);
	blocked("%s ran without euid 0", bins[i]);
}

static void
a_id_userns(void)
{
	long long	 e;

	if (unshare(CLONE_NEWUSER) == -1)
		return (blocked("%s", ename(errno)));
	e = status_hex("CapEff");
	escaped("new user namespace, CapEff %llx in it", e);
}

#if defined(__x86_64__)
/*
 * The verdict on a traced child whose call a tracer rewrote into
 * unshare(CLONE_NEWUSER), from its last wait status st: it exits 2 when
 * PTRACE_TRACEME was refused, 0 when it came out holding capabilities.
 * One still stopped is killed (stuck says why it is blocked).
 */
static void
traced_userns_end(pid_t c, int st, const char *stuck, const char *how,
    const char *none)
{
	if (WIFSTOPPED(st)) {
		kill(c, SIGKILL);
		waitpid(c, &st, 0);
		blocked("%s", stuck);
	} else if (WIFSIGNALED(st))
		blocked("child killed by signal %d", WTERMSIG(st));
	else if (WEXITSTATUS(st) == 2)
		blocked("PTRACE_TRACEME refused");
	else if (WEXITSTATUS(st) == 0)
		escaped("%s made a user namespace", how);
	else
		blocked("%s", none);
}
#endif

/*
 * A new user namespace by a traced call rewritten at its syscall-entry
 * stop: a child, traced by us, calls unshare(0), which we turn into
 * unshare(CLONE_NEWUSER) there.  A filter that checks a call before
 * that stop and never after it (gVisor's) sees only the harmless one.
 * The child says by its exit: 0 a namespace made (CapEff in it), 1
 * none, 2 PTRACE_TRACEME refused.
 */
static void
a_id_userns_ptrace(void)
{
#if defined(__x86_64__)
	struct user_regs_struct r;
	pid_t	 c;
	int	 st, i;

	if ((c = fork()) == -1)
		return (blocked("fork %s", ename(errno)));
	if (c == 0) {
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) == -1)
			_exit(2);
		raise(SIGSTOP);
		_exit(unshare(0) == 0 && status_hex("CapEff") != 0 ? 0 : 1);
	}
	for (i = 0; i < 1000; i++) {
		if (waitpid(c, &st, 0) == -1)
			return (blocked("waitpid %s", ename(errno)));
		if (!WIFSTOPPED(st))
			break;
		if (ptrace(PTRACE_GETREGS, c, NULL, &r) == 0 &&
		    r.orig_rax == SYS_unshare) {
			r.rdi = CLONE_NEWUSER;
			if (ptrace(PTRACE_SETREGS, c, NULL, &r) == -1) {
				kill(c, SIGKILL);
				waitpid(c, &st, 0);
				return (blocked("PTRACE_SETREGS %s",
				    ename(errno)));
			}
			(void)ptrace(PTRACE_DETACH, c, NULL, NULL);
			if (waitpid(c, &st, 0) == -1)
				return (blocked("lost the child"));
			break;
		}
		if (ptrace(PTRACE_SYSCALL, c, NULL, NULL) == -1) {
			kill(c, SIGKILL);
			waitpid(c, &st, 0);
			return (blocked("PTRACE_SYSCALL %s", ename(errno)));
		}
	}
	traced_userns_end(c, st, "the child never reached unshare",
	    "unshare(0) rewritten at its entry stop",
	    "the rewritten unshare made no user namespace");
#else
	blocked("not written for this architecture");
#endif
}

/*
 * The same through a seccomp stop: a tracer that asked for
 * PTRACE_O_TRACESECCOMP is stopped at any call a filter answers with a
 * trace action (a runsc fence's clone3), and rewrites it there into
 * unshare(CLONE_NEWUSER).  The clone3 is given no arguments, so where
 * nothing stops it, it fails on its own.
 */
static void
a_id_userns_seccomp_stop(void)
{
#if defined(__x86_64__)
	struct user_regs_struct r;
	pid_t	 c;
	int	 st, i, sig;

	if ((c = fork()) == -1)
		return (blocked("fork %s", ename(errno)));
	if (c == 0) {
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) == -1)
			_exit(2);
		raise(SIGSTOP);
		_exit(syscall(435 /* clone3 */, NULL, 0) == 0 &&
		    status_hex("CapEff") != 0 ? 0 : 1);
	}
	if (waitpid(c, &st, 0) == -1)
		return (blocked("waitpid %s", ename(errno)));
	if (WIFSTOPPED(st) && ptrace(PTRACE_SETOPTIONS, c, NULL,
	    (void *)(long)PTRACE_O_TRACESECCOMP) == -1) {
		sig = errno;
		kill(c, SIGKILL);
		waitpid(c, &st, 0);
		return (blocked("PTRACE_O_TRACESECCOMP %s", ename(sig)));
	}
	for (i = 0, sig = 0; i < 100 && WIFSTOPPED(st); i++) {
		if (st >> 8 == (SIGTRAP | (PTRACE_EVENT_SECCOMP << 8))) {
			if (ptrace(PTRACE_GETREGS, c, NULL, &r) == -1)
				break;
			r.orig_rax = SYS_unshare;
			r.rdi = CLONE_NEWUSER;
			if (ptrace(PTRACE_SETREGS, c, NULL, &r) == -1)
				break;
			(void)ptrace(PTRACE_DETACH, c, NULL, NULL);
		} else if (ptrace(PTRACE_CONT, c, NULL,
		    (void *)(long)sig) == -1)
			break;
		if (waitpid(c, &st, 0) == -1)
			return (blocked("lost the child"));
		sig = WIFSTOPPED(st) && WSTOPSIG(st) != SIGSTOP &&
		    WSTOPSIG(st) != SIGTRAP ? WSTOPSIG(st) : 0;
	}
	traced_userns_end(c, st, "the child never ended",
	    "clone3 rewritten at its seccomp stop",
	    "no seccomp stop, or the rewritten call made no user namespace");
#else
	blocked("not written for this architecture");
#endif
}

static void
write_str(const char *path, const char *s)
{
	int	 fd;

	if ((fd = open(path, O_WRONLY)) == -1)
		return;
	if (write(fd, s, strlen(s)) < 0)
		(void)0;
	close(fd);
}

static void
a_id_userns_mount(void)
{
	char	 map[64];
	uid_t	 u = getuid();
	gid_t	 g = getgid();

	if (unshare(CLONE_NEWUSER | CLONE_NEWNS) == -1)
		return (blocked("%s", ename(errno)));
	write_str("/proc/self/setgroups", "deny");
	snprintf(map, sizeof(map), "0 %u 1", u);
	write_str("/proc/self/uid_map", map);
	snprintf(map, sizeof(map), "0 %u 1", g);
	write_str("/proc/self/gid_map", map);
	if (mount("escape", "/tmp", "tmpfs", 0, "") == -1)
		return (blocked("namespaces made, mount %s", ename(errno)));
	escaped("root of a user namespace mounted a tmpfs on /tmp");
}

static void
a_id_file_caps(void)
{
	/* VFS_CAP_REVISION_2, CAP_SYS_ADMIN permitted and effective. */
	uint32_t	 v[5] = { 0x02000001, 1u << 21, 0, 0, 0 };
	char		 p[4096];
	int		 fd;

	snprintf(p, sizeof(p), "%s/.fenced-escape-fcap", home());
	if ((fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0755)) == -1)
		return (blocked("create %s", ename(errno)));
	close(fd);
	if (setxattr(p, "security.capability", v, sizeof(v), 0) == -1) {
		unlink(p);
		return (blocked("%s", ename(errno)));
	}
	unlink(p);
	escaped("set security.capability on a file of the home");
}

/* ---- kernel surface ---- */

static void
a_k_keyctl(void)
{
	char	 buf[256];
	long	 r;

	r = syscall(SYS_keyctl, KEYCTL_DESCRIBE, KEY_SPEC_USER_KEYRING, buf,
	    sizeof(buf));
	if (r < 0)
		return (blocked("%s", ename(errno)));
	buf[sizeof(buf) - 1] = '\0';
	escaped("user keyring: %s", buf);
}

static void
a_k_bpf(void)
{
	union bpf_attr	 a;

	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_ARRAY;
	a.key_size = 4;
	a.value_size = 4;
	a.max_entries = 1;
	judge(syscall(SYS_bpf, BPF_MAP_CREATE, &a, sizeof(a)),
	    "created a bpf map");
}

static void
a_k_userfaultfd(void)
{
	judge(syscall(SYS_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY),
	    "got a userfaultfd");
}

static void
a_k_perf(void)
{
	struct perf_event_attr	 a;

	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_SOFTWARE;
	a.size = sizeof(a);
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.disabled = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	judge(syscall(SYS_perf_event_open, &a, 0, -1, -1, 0),
	    "opened a perf event");
}

static void
a_k_io_uring(void)
{
	struct io_uring_params	 p;

	memset(&p, 0, sizeof(p));
	judge(syscall(SYS_io_uring_setup, 1, &p), "set up an io_uring");
}

/*
 * EPERM (EACCES on gVisor): refused before anything; ENOSYS: no such call here (a kernel
 * without modules or kexec, or a filter); anything else passed the
 * permission check.
 */
static void
judge_perm(long r, const char *what)
{
	if (r == -1 && (errno == EPERM || errno == EACCES || errno == ENOSYS))
		return (blocked("%s", ename(errno)));
	if (r == -1)
		return (escaped("%s: %s after the permission check", what,
		    ename(errno)));
	escaped("%s: succeeded", what);
}

static void
a_k_init_module(void)
{
	judge_perm(syscall(SYS_init_module, NULL, 0, ""), "init_module");
}

static void
a_k_finit_module(void)
{
	judge_perm(syscall(SYS_finit_module, -1, "", 0), "finit_module");
}

static void
a_k_delete_module(void)
{
	judge_perm(syscall(SYS_delete_module, "fenced_escape_none",
	    O_NONBLOCK), "delete_module");
}

static void
a_k_kexec(void)
{
	/* No segments and an architecture that is none: EINVAL after. */
	judge_perm(syscall(SYS_kexec_load, 0UL, 0UL, NULL, 0x007f0000UL),
	    "kexec_load");
}

static void
a_k_kexec_file(void)
{
	judge_perm(syscall(SYS_kexec_file_load, -1, -1, 0UL, "", 0xffff0000UL),
	    "kexec_file_load");
}

static void
a_k_reboot(void)
{
	/* Wrong magic: EINVAL once CAP_SYS_BOOT is granted. */
	judge_perm(syscall(SYS_reboot, 0, 0, 0, NULL), "reboot");
}

static void
a_k_swapon(void)
{
	judge_perm(swapon("/nonexistent/fenced-escape", 0), "swapon");
}

static void
a_k_clock_settime(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	judge(clock_settime(CLOCK_REALTIME, &ts), "set the clock (to itself)");
}

static void
a_k_settimeofday(void)
{
	struct timeval	 tv;

	gettimeofday(&tv, NULL);
	judge(settimeofday(&tv, NULL), "set the time of day (to itself)");
}

static void
a_k_adjtimex(void)
{
	struct timex	 tx;

	memset(&tx, 0, sizeof(tx));
	if (adjtimex(&tx) == -1)
		return (blocked("read %s", ename(errno)));
	tx.modes = ADJ_FREQUENCY;	/* the frequency it has */
	judge(adjtimex(&tx), "adjusted the clock's frequency (to itself)");
}

static void
a_k_sethostname(void)
{
	char	 n[256];

	if (gethostname(n, sizeof(n)) == -1)
		return (blocked("gethostname %s", ename(errno)));
	judge(sethostname(n, strlen(n)), "set the host name (to itself)");
}

static void
a_k_setdomainname(void)
{
	char	 n[256];

	if (getdomainname(n, sizeof(n)) == -1)
		return (blocked("getdomainname %s", ename(errno)));
	judge(setdomainname(n, strlen(n)), "set the domain name (to itself)");
}

static void
a_k_syslog(void)
{
	char	 buf[128];
	int	 n;

	if ((n = klogctl(3 /* READ_ALL */, buf, sizeof(buf))) == -1)
		return (blocked("%s", ename(errno)));
	escaped("read %d bytes of the kernel log", n);
}

static void
a_k_personality(void)
{
	int	 r = personality(PER_LINUX | ADDR_NO_RANDOMIZE |
	    READ_IMPLIES_EXEC);

	if (r == -1)
		return (blocked("%s", ename(errno)));
	escaped("personality now %x", (unsigned)personality(0xffffffff));
}

static void
a_k_abi_i386(void)
{
	long	 r;

	/* getpid, 20 in the i386 table. */
	__asm__ volatile ("int $0x80" : "=a"(r) : "a"(20L) : "memory");
	if (r < 0)
		return (blocked("%s", ename((int)-r)));
	escaped("int 0x80 getpid returned %ld", r);
}

static void
a_k_abi_x32(void)
{
	long	 r = syscall(ESC_X32_BIT | SYS_getpid);

	if (r < 0)
		return (blocked("%s", ename(errno)));
	escaped("x32 getpid returned %ld", r);
}

static void
a_k_core_pattern(void)
{
	static const char *const d[] = { "/proc/sys/kernel/core_pattern",
	    NULL };

	/* Opened, never written. */
	try_devs(d, O_WRONLY);
}

static void
a_k_modprobe_path(void)
{
	static const char *const d[] = { "/proc/sys/kernel/modprobe",
	    "/proc/sys/kernel/hotplug", NULL };

	try_devs(d, O_WRONLY);
}

static void
a_k_sysrq(void)
{
	struct stat	 sb;
	int		 fd;

	/* Opened, never written; /dev/null bound over it is the mask. */
	if ((fd = open("/proc/sysrq-trigger", O_WRONLY)) == -1)
		return (blocked("%s", ename(errno)));
	if (fstat(fd, &sb) == 0 && S_ISCHR(sb.st_mode) &&
	    sb.st_rdev == makedev(1, 3)) {
		(void)close(fd);
		return (blocked("opened, but it is /dev/null (masked)"));
	}
	(void)close(fd);
	escaped("opened /proc/sysrq-trigger for writing");
}

static void
a_k_kcore(void)
{
	char	 buf[4];
	ssize_t	 n;
	int	 fd;

	if ((fd = open("/proc/kcore", O_RDONLY)) == -1)
		return (blocked("%s", ename(errno)));
	if ((n = read(fd, buf, sizeof(buf))) == 4 && memcmp(buf, "\177ELF", 4)
	    == 0)
		return (escaped("/proc/kcore reads as an ELF core"));
	blocked("opened, read %zd bytes, no ELF header (masked)", n);
}

static void
a_k_kallsyms(void)
{
	char		 buf[512];
	unsigned long	 addr;
	ssize_t		 n;

	if ((n = read_file("/proc/kallsyms", buf, sizeof(buf))) < 0)
		return (blocked("%s", ename(errno)));
	if (n == 0)
		return (blocked("empty (masked)"));
	if (sscanf(buf, "%lx", &addr) == 1 && addr != 0)
		return (escaped("kernel address %lx", addr));
	blocked("addresses zeroed");
}

static void
a_k_iopl(void)
{
	judge(syscall(SYS_iopl, 3), "iopl 3");
}

static void
a_k_modify_ldt(void)
{
	struct user_desc	 d;

	memset(&d, 0, sizeof(d));
	d.entry_number = 0;
	d.limit = 0xfff;
	d.seg_32bit = 1;
	d.useable = 1;
	judge(syscall(SYS_modify_ldt, 1, &d, sizeof(d)), "wrote an LDT entry");
}

static void
a_k_acct(void)
{
	if (acct("/tmp/.fenced-escape-acct") == -1)
		return (blocked("%s", ename(errno)));
	acct(NULL);
	escaped("process accounting switched on");
}

static void
a_k_tiocsti(void)
{
	int	 fd, i;
	char	 c = ' ';

	if ((fd = open("/dev/tty", O_RDWR | O_NOCTTY)) != -1 &&
	    ioctl(fd, TIOCSTI, &c) == 0)
		return (escaped("TIOCSTI on /dev/tty"));
	for (i = 0; i < 3; i++)
		if (ioctl(i, TIOCSTI, &c) == 0)
			return (escaped("TIOCSTI on fd %d", i));
	blocked("%s", ename(errno));
}

/* ---- network ---- */

static void
a_net_raw(void)
{
	judge(socket(AF_INET, SOCK_RAW, IPPROTO_RAW), "raw IP socket");
}

static void
a_net_packet(void)
{
	judge(socket(AF_PACKET, SOCK_RAW, htons(0x0003)), "packet socket");
}

/*
 * The same sockets as root of a user namespace of one's own, with no
 * new network namespace: the network stays the fence's, whose owner
 * is not that namespace, so CAP_NET_RAW in it must not count.
 */
static void
a_net_raw_userns(void)
{
	if (unshare(CLONE_NEWUSER) == -1)
		return (blocked("unshare %s", ename(errno)));
	judge(socket(AF_INET, SOCK_RAW, IPPROTO_RAW),
	    "raw IP socket as root of a new user namespace");
}

static void
a_net_packet_userns(void)
{
	if (unshare(CLONE_NEWUSER) == -1)
		return (blocked("unshare %s", ename(errno)));
	judge(socket(AF_PACKET, SOCK_RAW, htons(0x0003)),
	    "packet socket as root of a new user namespace");
}

/* Connect with a 2 s bound; 0 or -1 with errno. */
static int
connect_bounded(int s, const struct sockaddr *sa, socklen_t len)
{
	struct pollfd	 pfd = { .fd = s, .events = POLLOUT };
	socklen_t	 el = sizeof(int);
	int		 e = 0;

	fcntl(s, F_SETFL, O_NONBLOCK);
	if (connect(s, sa, len) == 0)
		return (0);
	if (errno != EINPROGRESS)
		return (-1);
	if (poll(&pfd, 1, 2000) != 1) {
		errno = ETIMEDOUT;
		return (-1);
	}
	if (getsockopt(s, SOL_SOCKET, SO_ERROR, &e, &el) == -1)
		return (-1);
	if (e != 0) {
		errno = e;
		return (-1);
	}
	return (0);
}

static void
send_marker(int s)
{
	char	 buf[256];
	int	 n;

	n = snprintf(buf, sizeof(buf), "fenced-escape %s\n",
	    opt.o_marker != NULL ? opt.o_marker : "-");
	fcntl(s, F_SETFL, 0);
	if (write(s, buf, n) < 0)
		(void)0;
}

static void
a_net_host_tcp(void)
{
	struct sockaddr_in	 sin;
	int			 s;

	if (opt.o_port <= 0)
		return (blocked("no -p given"));
	if ((s = socket(AF_INET, SOCK_STREAM, 0)) == -1)
		return (blocked("socket %s", ename(errno)));
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(opt.o_port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect_bounded(s, (struct sockaddr *)&sin, sizeof(sin)) == -1)
		return (blocked("%s", ename(errno)));
	send_marker(s);
	escaped("connected to 127.0.0.1:%d", opt.o_port);
}

static void
unix_connect(const char *path, int abstract)
{
	struct sockaddr_un	 sun;
	socklen_t		 len;
	size_t			 l = strlen(path);
	int			 s;

	if (l + 2 > sizeof(sun.sun_path))
		return (blocked("name too long"));
	if ((s = socket(AF_UNIX, SOCK_STREAM, 0)) == -1)
		return (blocked("socket %s", ename(errno)));
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path + (abstract ? 1 : 0), path, l);
	len = offsetof(struct sockaddr_un, sun_path) + l + (abstract ? 1 : 0);
	if (connect_bounded(s, (struct sockaddr *)&sun, len) == -1)
		return (blocked("%s", ename(errno)));
	send_marker(s);
	escaped("connected to %s%s", abstract ? "@" : "", path);
}

static void
a_net_host_abstract(void)
{
	if (opt.o_abstract == NULL)
		return (blocked("no -u given"));
	unix_connect(opt.o_abstract, 1);
}

static void
a_net_host_unix(void)
{
	if (opt.o_ctlsock == NULL)
		return (blocked("no -x given"));
	unix_connect(opt.o_ctlsock, 0);
}

static void
a_net_dbus(void)
{
	struct stat	 sb;

	if (stat("/run/dbus/system_bus_socket", &sb) == -1 &&
	    stat("/var/run/dbus/system_bus_socket", &sb) == -1)
		return (blocked("%s", ename(errno)));
	unix_connect("/run/dbus/system_bus_socket", 0);
}

static void
a_net_vsock(void)
{
	struct sockaddr_vm	 svm;
	int			 s;

	if ((s = socket(AF_VSOCK, SOCK_STREAM, 0)) == -1)
		return (blocked("%s", ename(errno)));
	/* Only the local transport: nothing leaves this machine. */
	memset(&svm, 0, sizeof(svm));
	svm.svm_family = AF_VSOCK;
	svm.svm_cid = VMADDR_CID_LOCAL;
	svm.svm_port = 9;
	if (connect_bounded(s, (struct sockaddr *)&svm, sizeof(svm)) == -1)
		return (escaped("AF_VSOCK socket made (local connect %s)",
		    ename(errno)));
	escaped("AF_VSOCK socket made and connected locally");
}

static void
a_net_netlink_route(void)
{
	struct {
		struct nlmsghdr		nh;
		struct ifaddrmsg	ifa;
		struct rtattr		rta;
		struct in_addr		addr;
	} req;
	char			 buf[1024];
	struct nlmsghdr		*nh;
	struct nlmsgerr		*err;
	ssize_t			 n;
	int			 s;

	if ((s = socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE)) == -1)
		return (blocked("socket %s", ename(errno)));
	/* An address on an interface that is none: ENODEV after the check. */
	memset(&req, 0, sizeof(req));
	req.nh.nlmsg_len = sizeof(req);
	req.nh.nlmsg_type = RTM_NEWADDR;
	req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE |
	    NLM_F_EXCL;
	req.nh.nlmsg_seq = 1;
	req.ifa.ifa_family = AF_INET;
	req.ifa.ifa_prefixlen = 32;
	req.ifa.ifa_index = 0x7ffffff0;
	req.rta.rta_type = IFA_LOCAL;
	req.rta.rta_len = RTA_LENGTH(sizeof(req.addr));
	req.addr.s_addr = htonl(0x7f0000fe);
	if (send(s, &req, sizeof(req), 0) == -1)
		return (blocked("send %s", ename(errno)));
	if ((n = recv(s, buf, sizeof(buf), 0)) < (ssize_t)(sizeof(*nh) +
	    sizeof(*err)))
		return (blocked("no answer"));
	nh = (struct nlmsghdr *)buf;
	if (nh->nlmsg_type != NLMSG_ERROR)
		return (blocked("answer type %d", nh->nlmsg_type));
	err = NLMSG_DATA(nh);
	if (err->error == -EPERM || err->error == -EACCES)
		return (blocked("%s", ename(-err->error)));
	if (err->error == 0)
		return (escaped("RTM_NEWADDR accepted"));
	escaped("RTM_NEWADDR passed the CAP_NET_ADMIN check: %s",
	    ename(-err->error));
}

static void
a_net_alg(void)
{
	judge(socket(AF_ALG, SOCK_SEQPACKET, 0), "AF_ALG socket");
}

static void
a_net_interfaces(void)
{
	struct ifaddrs	*ifa, *i;
	char		 list[512] = "";
	int		 others = 0;

	if (getifaddrs(&ifa) == -1)
		return (blocked("getifaddrs %s", ename(errno)));
	for (i = ifa; i != NULL; i = i->ifa_next) {
		if (strcmp(i->ifa_name, "lo") == 0 ||
		    strstr(list, i->ifa_name) != NULL)
			continue;
		if (others++)
			strlcat(list, ",", sizeof(list));
		strlcat(list, i->ifa_name, sizeof(list));
	}
	freeifaddrs(ifa);
	if (others)
		return (escaped("interfaces besides lo: %s", list));
	blocked("lo only");
}

/* ---- resources ---- */

#define FORK_CAP	1024
#define MEM_CAP_MIB	2048
#define TMP_CAP_MIB	1024
#define HOME_CAP_MIB	64
#define FD_CAP		(1 << 17)

static void
forkbomb(const char *how)
{
	long	 n;
	pid_t	 pid;

	for (n = 0; n < FORK_CAP; n++) {
		if ((pid = fork()) == -1)
			break;
		if (pid == 0) {
			close(resfd);
			pause();
			_exit(0);
		}
		*progress = n + 1;
	}
	if (n < FORK_CAP)
		blocked("fork %s after %ld children%s%s", ename(errno), n,
		    how[0] != '\0' ? ", " : "", how);
	else
		escaped("reached the cap of %d children%s%s", FORK_CAP,
		    how[0] != '\0' ? ", " : "", how);
	/* The caller kills the process group. */
}

static void
a_res_forkbomb(void)
{
	forkbomb("");
}

/*
 * The fork bomb as root of a user namespace of one's own, if one can
 * be made: a bound that asks for no capability in the caller's own
 * namespace must hold there too.
 */
static void
a_res_forkbomb_userns(void)
{
	char	 ns[64];

	if (unshare(CLONE_NEWUSER) == -1)
		snprintf(ns, sizeof(ns), "no user namespace (%s)",
		    ename(errno));
	else
		snprintf(ns, sizeof(ns), "in a new user namespace");
	forkbomb(ns);
}

static void
a_res_memory(void)
{
	long	 mib;
	char	*p;

	for (mib = 0; mib < MEM_CAP_MIB; mib += 16) {
		p = mmap(NULL, 16 << 20, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return (blocked("mmap %s after %ld MiB", ename(errno),
			    mib));
		memset(p, 0x5a, 16 << 20);
		*progress = mib + 16;
	}
	escaped("touched %d MiB, the cap", MEM_CAP_MIB);
}

static void
fill(const char *dir, long cap)
{
	static char	 chunk[1 << 20];
	char		 p[4096];
	long		 mib;
	int		 fd;

	memset(chunk, 'f', sizeof(chunk));
	snprintf(p, sizeof(p), "%s/.fenced-escape-fill", dir);
	if ((fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600)) == -1)
		return (blocked("create %s", ename(errno)));
	for (mib = 0; mib < cap; mib++) {
		if (write(fd, chunk, sizeof(chunk)) != sizeof(chunk)) {
			blocked("%s after %ld MiB", ename(errno), mib);
			break;
		}
		*progress = mib + 1;
	}
	close(fd);
	unlink(p);
	if (mib == cap)
		escaped("wrote %ld MiB, the cap", cap);
}

static void a_res_disk_tmp(void) { fill("/tmp", TMP_CAP_MIB); }
static void a_res_disk_home(void) { fill(home(), HOME_CAP_MIB); }

static void
a_res_fds(void)
{
	long	 n;

	for (n = 0; n < FD_CAP; n++) {
		if (open("/dev/null", O_RDONLY) == -1)
			return (blocked("%s after %ld", ename(errno), n));
		*progress = n;
	}
	escaped("held %d descriptors, the cap", FD_CAP);
}

static void
a_res_nofile_raise(void)
{
	struct rlimit	 rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == -1)
		return (blocked("getrlimit %s", ename(errno)));
	if (rl.rlim_max == RLIM_INFINITY)
		return (escaped("RLIMIT_NOFILE hard limit infinite"));
	rl.rlim_max++;
	rl.rlim_cur = rl.rlim_max;
	judge(setrlimit(RLIMIT_NOFILE, &rl), "raised the hard RLIMIT_NOFILE");
}

static void
a_res_output_flood(void)
{
	static char	 chunk[65536];
	long		 i;

	/* The agent's budget must cut this short; this line never shows. */
	memset(chunk, 'o', sizeof(chunk));
	for (i = 0; i < 1024; i++)
		if (write(1, chunk, sizeof(chunk)) != sizeof(chunk))
			return (blocked("write %s after %ld KiB", ename(errno),
			    i * 64));
	escaped("wrote 64 MiB to stdout");
}

/* ---- information ---- */

static void
a_info_host_secret(void)
{
	if (opt.o_secret == NULL)
		return (blocked("no -s given"));
	try_read(opt.o_secret);
}

static void
a_info_mountinfo(void)
{
	static char	 buf[65536];
	char		 dir[4096];

	if (read_file("/proc/self/mountinfo", buf, sizeof(buf)) < 0)
		return (blocked("%s", ename(errno)));
	if (opt.o_other != NULL) {
		/* The homes folder: the other fence's home's parent. */
		dirname_of(opt.o_other, dir, sizeof(dir));
		if (strstr(buf, dir) != NULL)
			return (escaped("mountinfo names the host's %s", dir));
	}
	if (opt.o_secret != NULL) {
		dirname_of(opt.o_secret, dir, sizeof(dir));
		if (strstr(buf, dir) != NULL)
			return (escaped("mountinfo names the host's %s", dir));
	}
	blocked("no host path of the test's in mountinfo");
}

extern char **environ;

static void
a_info_env(void)
{
	char	 names[512] = "";
	char	**e;
	size_t	 l;
	int	 n = 0;

	for (e = environ; *e != NULL; e++) {
		if (opt.o_marker != NULL && strstr(*e, opt.o_marker) != NULL) {
			l = strcspn(*e, "=");
			snprintf(names, sizeof(names), "%.*s", (int)l, *e);
			return (escaped("the host's marker is in %s", names));
		}
		n++;
	}
	blocked("%d variables, none with the host's marker", n);
}

static void
a_info_other_home(void)
{
	struct stat	 sb;
	DIR		*d;

	if (opt.o_other == NULL)
		return (blocked("no -o given"));
	if (stat(opt.o_other, &sb) == -1)
		return (blocked("stat %s", ename(errno)));
	if ((d = opendir(opt.o_other)) == NULL)
		return (blocked("stat works, opendir %s", ename(errno)));
	closedir(d);
	escaped("listed %s", opt.o_other);
}

static void
a_info_other_list(void)
{
	char		 mine[256], list[512] = "";
	const char	*h = home(), *s;
	struct dirent	*de;
	DIR		*d;
	int		 n = 0;

	s = strrchr(h, '/');
	snprintf(mine, sizeof(mine), "%s", s != NULL ? s + 1 : h);
	if ((d = opendir("/home")) == NULL)
		return (blocked("%s", ename(errno)));
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0 ||
		    strcmp(de->d_name, mine) == 0)
			continue;
		if (n++)
			strlcat(list, ",", sizeof(list));
		strlcat(list, de->d_name, sizeof(list));
	}
	closedir(d);
	if (n)
		return (escaped("/home holds besides %s: %s", mine, list));
	blocked("/home holds only %s", mine);
}

static void
a_info_hostname(void)
{
	struct utsname	 u;

	if (opt.o_hostname == NULL)
		return (blocked("no -n given"));
	if (uname(&u) == -1)
		return (blocked("uname %s", ename(errno)));
	if (strcmp(u.nodename, opt.o_hostname) == 0)
		return (escaped("the host's name %s", u.nodename));
	blocked("name %s", u.nodename);
}

static void
a_info_boot_id(void)
{
	char	 buf[64];
	ssize_t	 n;

	if (opt.o_bootid == NULL)
		return (blocked("no -b given"));
	if ((n = read_file("/proc/sys/kernel/random/boot_id", buf,
	    sizeof(buf))) < 0)
		return (blocked("%s", ename(errno)));
	buf[strcspn(buf, "\n")] = '\0';
	if (strcmp(buf, opt.o_bootid) == 0)
		return (escaped("the host's boot_id: the host's kernel"));
	blocked("boot_id %s", buf);
}

static void a_info_shadow(void) { try_read("/etc/shadow"); }

static void
a_info_ssh_keys(void)
{
	static const char *const d[] = { "/etc/ssh/ssh_host_ed25519_key",
	    "/etc/ssh/ssh_host_rsa_key", "/etc/ssh/ssh_host_ecdsa_key", NULL };

	try_devs(d, O_RDONLY);
}

static const struct esc_attempt attempts[] = {
	{ "fs-host-path", "filesystem", "stat the folder of the host's secret", a_fs_host_path, 5, 0 },
	{ "fs-dotdot", "filesystem", "open the secret through ../ from the home", a_fs_dotdot, 5, 0 },
	{ "fs-symlink-out", "filesystem", "read the secret through a symlink made in the home", a_fs_symlink_out, 5, 0 },
	{ "fs-symlink-write", "filesystem", "create a file in /etc through a symlink in the home", a_fs_symlink_write, 5, 0 },
	{ "fs-hardlink-out", "filesystem", "hard-link /etc/passwd into the home", a_fs_hardlink_out, 5, 0 },
	{ "fs-write-usr", "filesystem", "create a file in /usr", a_fs_write_usr, 5, 0 },
	{ "fs-write-etc", "filesystem", "create a file in /etc", a_fs_write_etc, 5, 0 },
	{ "fs-write-root", "filesystem", "mkdir in /", a_fs_write_root, 5, 0 },
	{ "fs-remount", "filesystem", "remount /usr read-write", a_fs_remount, 5, 0 },
	{ "fs-mount-tmpfs", "filesystem", "mount a tmpfs", a_fs_mount_tmpfs, 5, 0 },
	{ "fs-bind-root", "filesystem", "bind / elsewhere", a_fs_bind_root, 5, 0 },
	{ "fs-umount", "filesystem", "unmount the read-only /proc/sys", a_fs_umount, 5, 0 },
	{ "fs-fsopen", "filesystem", "fsopen (the new mount API)", a_fs_fsopen, 5, 0 },
	{ "fs-open-tree", "filesystem", "open_tree clone of /", a_fs_open_tree, 5, 0 },
	{ "fs-mount-setattr", "filesystem", "mount_setattr clearing read-only on /usr", a_fs_mount_setattr, 5, 0 },
	{ "fs-chroot", "filesystem", "chroot and climb out", a_fs_chroot, 5, 0 },
	{ "fs-pivot-root", "filesystem", "pivot_root", a_fs_pivot_root, 5, 0 },
	{ "fs-proc-root", "filesystem", "the secret through /proc/N/root", a_fs_proc_root, 5, 0 },
	{ "fs-open-by-handle", "filesystem", "open_by_handle_at of the root inode of /etc's filesystem", a_fs_open_by_handle, 5, 0 },
	{ "fs-mknod", "filesystem", "make and open a /dev/mem node in the home", a_fs_mknod, 5, 0 },
	{ "fs-dev-mem", "filesystem", "open /dev/mem, /dev/kmem, /dev/port", a_fs_dev_mem, 5, 0 },
	{ "fs-dev-disk", "filesystem", "open a host disk device", a_fs_dev_disk, 5, 0 },
	{ "fs-dev-kvm", "filesystem", "open /dev/kvm, /dev/vhost-*", a_fs_dev_kvm, 5, 0 },
	{ "fs-dev-misc", "filesystem", "open /dev/net/tun, fuse, loop-control, uinput, kmsg", a_fs_dev_misc, 5, 0 },
	{ "fs-inherited-fds", "filesystem", "descriptors inherited from outside", a_fs_inherited_fds, 5, 0 },
	{ "fs-agent-exe", "filesystem", "open the agent's binary for writing through /proc/N/exe", a_fs_agent_exe, 5, 0 },
	{ "fs-proc-exe", "filesystem", "open a host binary being run for writing through /proc/N/exe", a_fs_proc_exe, 5, 0 },
	{ "fs-bin-write", "filesystem", "write the fence's programs in /run/fenced/bin", a_fs_bin_write, 5, 0 },
	{ "fs-sys", "filesystem", "write a /sys knob (uevent_helper, power)", a_fs_sys, 5, 0 },
	{ "proc-agent-mem", "processes", "open the agent's /proc/N/mem", a_proc_agent_mem, 5, 0 },
	{ "proc-agent-environ", "processes", "read the agent's environment", a_proc_agent_environ, 5, 0 },
	{ "proc-agent-maps", "processes", "read the agent's memory map", a_proc_agent_maps, 5, 0 },
	{ "proc-agent-fds", "processes", "read the agent's descriptors", a_proc_agent_fds, 5, 0 },
	{ "proc-agent-channel", "processes", "open the agent's descriptors (its channel) through /proc/N/fd", a_proc_agent_channel, 5, 0 },
	{ "proc-agent-pipes", "processes", "open the agent's pipes (its commands' output) through /proc/N/fd", a_proc_agent_pipes, 5, 0 },
	{ "proc-ptrace-agent", "processes", "ptrace attach to the agent", a_proc_ptrace_agent, 5, 0 },
	{ "proc-vm-readv", "processes", "process_vm_readv of the agent", a_proc_vm_readv, 5, 0 },
	{ "proc-ptrace-child", "processes", "ptrace a child of one's own", a_proc_ptrace_child, 5, 0 },
	{ "proc-signal-host", "processes", "signal a host process by its pid", a_proc_signal_host, 5, 0 },
	{ "proc-see-host", "processes", "see a host process in /proc", a_proc_see_host, 5, 0 },
	{ "proc-unshare-pid", "processes", "new pid and mount namespaces", a_proc_unshare_pid, 5, 0 },
	{ "proc-setns", "processes", "setns into a mount namespace", a_proc_setns, 5, 0 },
	{ "proc-outlive", "processes", "a setsid double-forked orphan deaf to signals", a_proc_outlive, 5, 0 },
	{ "proc-cgroup-move", "processes", "move into another cgroup", a_proc_cgroup_move, 5, 0 },
	{ "proc-rt-sched", "processes", "SCHED_FIFO", a_proc_rt_sched, 5, 0 },
	{ "proc-nice", "processes", "a negative nice value", a_proc_nice, 5, 0 },
	{ "id-uid", "identity", "run as uid or gid 0", a_id_uid, 5, 0 },
	{ "id-setuid0", "identity", "setuid(0)", a_id_setuid0, 5, 0 },
	{ "id-setgroups", "identity", "join group 0", a_id_setgroups, 5, 0 },
	{ "id-capeff", "identity", "effective, permitted or inheritable capabilities", a_id_capeff, 5, 0 },
	{ "id-capbnd", "identity", "a non-empty bounding set", a_id_capbnd, 5, 0 },
	{ "id-capamb", "identity", "raise an ambient capability", a_id_capamb, 5, 0 },
	{ "id-nnp", "identity", "run without no_new_privs", a_id_nnp, 5, 0 },
	{ "id-setuid-exec", "identity", "gain euid 0 from a setuid-root program", a_id_setuid_exec, 5, 0 },
	{ "id-userns", "identity", "a new user namespace", a_id_userns, 5, 0 },
	{ "id-userns-ptrace", "identity", "a new user namespace by a traced call rewritten at its entry stop", a_id_userns_ptrace, 10, 0 },
	{ "id-userns-seccomp-stop", "identity", "a new user namespace by a clone3 rewritten at its seccomp stop", a_id_userns_seccomp_stop, 10, 0 },
	{ "id-userns-mount", "identity", "mount as root of a new user namespace", a_id_userns_mount, 5, 0 },
	{ "id-file-caps", "identity", "give a file of the home capabilities", a_id_file_caps, 5, 0 },
	{ "k-keyctl", "kernel", "describe the user keyring", a_k_keyctl, 5, 0 },
	{ "k-bpf", "kernel", "create a bpf map", a_k_bpf, 5, 0 },
	{ "k-userfaultfd", "kernel", "userfaultfd", a_k_userfaultfd, 5, 0 },
	{ "k-perf", "kernel", "perf_event_open", a_k_perf, 5, 0 },
	{ "k-io-uring", "kernel", "io_uring_setup", a_k_io_uring, 5, 0 },
	{ "k-init-module", "kernel", "init_module (invalid image)", a_k_init_module, 5, 0 },
	{ "k-finit-module", "kernel", "finit_module (bad descriptor)", a_k_finit_module, 5, 0 },
	{ "k-delete-module", "kernel", "delete_module (no such module)", a_k_delete_module, 5, 0 },
	{ "k-kexec", "kernel", "kexec_load (invalid architecture)", a_k_kexec, 5, 0 },
	{ "k-kexec-file", "kernel", "kexec_file_load (invalid flags)", a_k_kexec_file, 5, 0 },
	{ "k-reboot", "kernel", "reboot (wrong magic)", a_k_reboot, 5, 0 },
	{ "k-swapon", "kernel", "swapon (missing file)", a_k_swapon, 5, 0 },
	{ "k-clock-settime", "kernel", "set the clock to what it reads", a_k_clock_settime, 5, 0 },
	{ "k-settimeofday", "kernel", "settimeofday to what it reads", a_k_settimeofday, 5, 0 },
	{ "k-adjtimex", "kernel", "adjtimex writing the frequency back", a_k_adjtimex, 5, 0 },
	{ "k-sethostname", "kernel", "set the host name to itself", a_k_sethostname, 5, 0 },
	{ "k-setdomainname", "kernel", "set the domain name to itself", a_k_setdomainname, 5, 0 },
	{ "k-syslog", "kernel", "read the kernel log", a_k_syslog, 5, 0 },
	{ "k-personality", "kernel", "personality READ_IMPLIES_EXEC and ADDR_NO_RANDOMIZE", a_k_personality, 5, 0 },
	{ "k-abi-i386", "kernel", "an i386 system call (int 0x80)", a_k_abi_i386, 5, 0 },
	{ "k-abi-x32", "kernel", "an x32 system call", a_k_abi_x32, 5, 0 },
	{ "k-core-pattern", "kernel", "open /proc/sys/kernel/core_pattern for writing", a_k_core_pattern, 5, 0 },
	{ "k-modprobe-path", "kernel", "open /proc/sys/kernel/modprobe for writing", a_k_modprobe_path, 5, 0 },
	{ "k-sysrq", "kernel", "open /proc/sysrq-trigger for writing", a_k_sysrq, 5, 0 },
	{ "k-kcore", "kernel", "read /proc/kcore", a_k_kcore, 5, 0 },
	{ "k-kallsyms", "kernel", "kernel addresses from /proc/kallsyms", a_k_kallsyms, 5, 0 },
	{ "k-iopl", "kernel", "iopl 3", a_k_iopl, 5, 0 },
	{ "k-modify-ldt", "kernel", "write an LDT entry", a_k_modify_ldt, 5, 0 },
	{ "k-acct", "kernel", "switch on process accounting", a_k_acct, 5, 0 },
	{ "k-tiocsti", "kernel", "push input into a terminal (TIOCSTI)", a_k_tiocsti, 5, 0 },
	{ "net-raw", "network", "a raw IP socket", a_net_raw, 5, 0 },
	{ "net-packet", "network", "a packet socket", a_net_packet, 5, 0 },
	{ "net-raw-userns", "network", "a raw IP socket as root of a new user namespace", a_net_raw_userns, 5, 0 },
	{ "net-packet-userns", "network", "a packet socket as root of a new user namespace", a_net_packet_userns, 5, 0 },
	{ "net-host-tcp", "network", "connect to the host's TCP listener on 127.0.0.1", a_net_host_tcp, 5, 0 },
	{ "net-host-abstract", "network", "connect to the host's abstract unix socket", a_net_host_abstract, 5, 0 },
	{ "net-host-unix", "network", "connect to the daemon's control socket by its host path", a_net_host_unix, 5, 0 },
	{ "net-dbus", "network", "connect to the system D-Bus", a_net_dbus, 5, 0 },
	{ "net-vsock", "network", "an AF_VSOCK socket", a_net_vsock, 5, 0 },
	{ "net-netlink-route", "network", "RTM_NEWADDR over netlink (interface that is none)", a_net_netlink_route, 5, 0 },
	{ "net-alg", "network", "an AF_ALG socket", a_net_alg, 5, 0 },
	{ "net-interfaces", "network", "see interfaces besides lo", a_net_interfaces, 5, 0 },
	/* 50 s: under gVisor's ptrace platform in a loaded TCG guest,
	   30 s saw fewer forks than a pids limit of 256. */
	{ "res-forkbomb", "resources", "fork until refused (cap 1024)", a_res_forkbomb, 50, 0 },
	{ "res-forkbomb-userns", "resources", "fork until refused in a new user namespace (cap 1024)", a_res_forkbomb_userns, 50, 0 },
	{ "res-memory", "resources", "touch memory until refused (cap 2 GiB)", a_res_memory, 30, 0 },
	{ "res-disk-tmp", "resources", "fill /tmp (cap 1 GiB)", a_res_disk_tmp, 30, 0 },
	{ "res-disk-home", "resources", "fill the home (cap 64 MiB)", a_res_disk_home, 30, 0 },
	{ "res-fds", "resources", "open descriptors until refused (cap 131072)", a_res_fds, 20, 0 },
	{ "res-nofile-raise", "resources", "raise the hard RLIMIT_NOFILE", a_res_nofile_raise, 5, 0 },
	{ "res-output-flood", "resources", "64 MiB on stdout", a_res_output_flood, 30, 1 },
	{ "info-host-secret", "information", "read the host's secret file", a_info_host_secret, 5, 0 },
	{ "info-mountinfo", "information", "host paths in the mount table", a_info_mountinfo, 5, 0 },
	{ "info-env", "information", "the host's environment", a_info_env, 5, 0 },
	{ "info-other-home", "information", "list another fence's home by its host path", a_info_other_home, 5, 0 },
	{ "info-other-list", "information", "other homes in /home", a_info_other_list, 5, 0 },
	{ "info-hostname", "information", "the host's name", a_info_hostname, 5, 0 },
	{ "info-boot-id", "information", "the host's boot_id", a_info_boot_id, 5, 0 },
	{ "info-shadow", "information", "read /etc/shadow", a_info_shadow, 5, 0 },
	{ "info-ssh-keys", "information", "read the host's SSH keys", a_info_ssh_keys, 5, 0 },
};
#define NATTEMPTS	(sizeof(attempts) / sizeof(attempts[0]))

static void
run(const struct esc_attempt *a)
{
	char		 line[1100];
	pid_t		 pid;
	ssize_t		 n;
	int		 p[2], st, waited;

	cur = a;
	*progress = 0;
	if (pipe(p) == -1) {
		printf("%s %s blocked harness: pipe %s\n", a->a_id, a->a_class,
		    ename(errno));
		return;
	}
	fflush(stdout);
	if ((pid = fork()) == -1) {
		printf("%s %s blocked harness: fork %s\n", a->a_id, a->a_class,
		    ename(errno));
		close(p[0]);
		close(p[1]);
		return;
	}
	if (pid == 0) {
		close(p[0]);
		resfd = p[1];
		setpgid(0, 0);
		alarm(a->a_secs);
		a->a_fn();
		if (!said)
			blocked("no verdict");
		_exit(0);
	}
	close(p[1]);
	setpgid(pid, pid);
	/* Our own bound too, should the child ignore its alarm. */
	for (waited = 0; waitpid(pid, &st, WNOHANG) == 0; waited++) {
		if (waited > (a->a_secs + 3) * 100) {
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			break;
		}
		usleep(10000);
	}
	kill(-pid, SIGKILL);
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	n = read(p[0], line, sizeof(line) - 1);
	close(p[0]);
	if (n > 0) {
		line[n] = '\0';
		fputs(line, stdout);
	} else if (WIFSIGNALED(st))
		printf("%s %s blocked killed by SIG%s after %ld\n", a->a_id,
		    a->a_class, sigabbrev_np(WTERMSIG(st)) != NULL ?
		    sigabbrev_np(WTERMSIG(st)) : "?", *progress);
	else
		printf("%s %s blocked exited %d without a verdict\n", a->a_id,
		    a->a_class, WEXITSTATUS(st));
	fflush(stdout);
}

static void
usage(void)
{
	fprintf(stderr, "usage: fence-escape [-l] [-a id,...] [-c class] "
	    "[-b bootid] [-m marker] [-n hostname]\n"
	    "\t[-o other-home] [-P hostpid] [-p port] [-s secret] "
	    "[-t pid] [-u abstract]\n\t[-x socket]\n");
	exit(1);
}

static int
named(const char *list, const char *id)
{
	size_t	 l = strlen(id);
	const char *p;

	for (p = list; (p = strstr(p, id)) != NULL; p += l)
		if ((p == list || p[-1] == ',') && (p[l] == '\0' ||
		    p[l] == ','))
			return (1);
	return (0);
}

static long
number(const char *s, long lo, long hi)
{
	char	*end;
	long	 v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || *end != '\0' || end == s || v < lo || v > hi)
		usage();
	return (v);
}

int
main(int argc, char *argv[])
{
	const char	*ids = NULL, *class = NULL;
	size_t		 i;
	int		 ch, list = 0, fd, ran = 0;

	/* Before anything of ours is open. */
	for (fd = 3; fd < (int)sizeof(startfds); fd++)
		startfds[fd] = fcntl(fd, F_GETFD) != -1;
	while ((ch = getopt(argc, argv, "a:b:c:lm:n:o:P:p:s:t:u:x:")) != -1) {
		switch (ch) {
		case 'a': ids = optarg; break;
		case 'b': opt.o_bootid = optarg; break;
		case 'c': class = optarg; break;
		case 'l': list = 1; break;
		case 'm': opt.o_marker = optarg; break;
		case 'n': opt.o_hostname = optarg; break;
		case 'o': opt.o_other = optarg; break;
		case 'P': opt.o_hostpid = number(optarg, 1, 1 << 22); break;
		case 'p': opt.o_port = number(optarg, 1, 65535); break;
		case 's': opt.o_secret = optarg; break;
		case 't': opt.o_target = number(optarg, 1, 1 << 22); break;
		case 'u': opt.o_abstract = optarg; break;
		case 'x': opt.o_ctlsock = optarg; break;
		default: usage();
		}
	}
	if (optind != argc)
		usage();
	if (list) {
		for (i = 0; i < NATTEMPTS; i++)
			printf("%s %s %s\n", attempts[i].a_id,
			    attempts[i].a_class, attempts[i].a_what);
		return (0);
	}
	progress = mmap(NULL, sizeof(*progress), PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (progress == MAP_FAILED) {
		perror("mmap");
		return (1);
	}
	signal(SIGPIPE, SIG_IGN);
	for (i = 0; i < NATTEMPTS; i++) {
		if (ids != NULL ? !named(ids, attempts[i].a_id) :
		    attempts[i].a_solo)
			continue;
		if (class != NULL && strcmp(class, attempts[i].a_class) != 0)
			continue;
		run(&attempts[i]);
		ran++;
	}
	if (ran == 0) {
		fprintf(stderr, "fence-escape: no attempt selected\n");
		return (1);
	}
	return (0);
}
