/*
 * t_inside: checks run inside a fence, as its pid 1 (regress/fence_test.sh
 * puts this binary in the fence's bin dir and has t_fence start it).
 *
 *	t_inside CHECK [ARG...] [-- CHECK [ARG...]]...
 *
 * Each check prints "ok CHECK ..." or "FAIL CHECK: why"; the exit status
 * is the number of failed checks (0: all passed).  A system call probe
 * runs in a child process, so it can neither change pid 1 nor kill it.
 */
#include <sys/types.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include <sys/timex.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <linux/magic.h>
#include <net/if.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "names.h"		/* nitems */

#ifndef AF_VSOCK
#define AF_VSOCK	40
#endif
#ifndef AF_ALG
#define AF_ALG		38
#endif

static int	 failures;

static void
ok(const char *check, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void
fail(const char *check, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
ok(const char *check, const char *fmt, ...)
{
	va_list	 ap;

	printf("ok %s", check);
	if (fmt != NULL) {
		printf(" ");
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
	}
	printf("\n");
	fflush(stdout);
}

static void
fail(const char *check, const char *fmt, ...)
{
	va_list	 ap;

	printf("FAIL %s: ", check);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	failures++;
}

/* A write to path (a new file in it) must fail with EROFS. */
static void
check_ro(char **av)
{
	char	 f[512];
	int	 fd;

	snprintf(f, sizeof(f), "%s/.t_inside.%d", av[1], (int)getpid());
	if ((fd = open(f, O_WRONLY | O_CREAT | O_EXCL, 0600)) != -1) {
		close(fd);
		unlink(f);
		fail("ro", "%s: created %s", av[1], f);
		return;
	}
	if (errno != EROFS) {
		fail("ro", "%s: %s, not EROFS", av[1], strerror(errno));
		return;
	}
	if (mkdir(f, 0700) != -1 || errno != EROFS) {
		fail("ro", "%s: mkdir: %s", av[1], strerror(errno));
		return;
	}
	ok("ro", "%s EROFS", av[1]);
}

static void
check_rw(char **av)
{
	char	 f[512];
	int	 fd;

	snprintf(f, sizeof(f), "%s/.t_inside.%d", av[1], (int)getpid());
	if ((fd = open(f, O_WRONLY | O_CREAT | O_EXCL, 0600)) == -1) {
		fail("rw", "%s: %s", av[1], strerror(errno));
		return;
	}
	if (write(fd, "x", 1) != 1) {
		fail("rw", "%s: write: %s", av[1], strerror(errno));
		close(fd);
		unlink(f);
		return;
	}
	close(fd);
	if (unlink(f) == -1) {
		fail("rw", "%s: unlink: %s", av[1], strerror(errno));
		return;
	}
	ok("rw", "%s", av[1]);
}

static void
check_rdonly_flag(char **av)
{
	struct statvfs	 sv;

	if (statvfs(av[1], &sv) == -1) {
		fail("ro-mount", "%s: %s", av[1], strerror(errno));
		return;
	}
	if (!(sv.f_flag & ST_RDONLY)) {
		fail("ro-mount", "%s is mounted read-write", av[1]);
		return;
	}
	ok("ro-mount", "%s", av[1]);
}

/* A fresh tmpfs: the type, and exactly the entries listed. */
static void
check_tmpfs(char **av)
{
	struct statfs	 sf;
	struct dirent	*de;
	DIR		*d;
	char		 seen[1024] = "";
	int		 i, n = 0, want = 0, found;

	if (statfs(av[1], &sf) == -1) {
		fail("tmpfs", "%s: %s", av[1], strerror(errno));
		return;
	}
	if (sf.f_type != TMPFS_MAGIC) {
		fail("tmpfs", "%s: type 0x%lx", av[1], (long)sf.f_type);
		return;
	}
	for (i = 2; av[i] != NULL; i++)
		want++;
	if ((d = opendir(av[1])) == NULL) {
		fail("tmpfs", "%s: %s", av[1], strerror(errno));
		return;
	}
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		for (found = 0, i = 2; av[i] != NULL; i++)
			if (strcmp(av[i], de->d_name) == 0)
				found = 1;
		strncat(seen, " ", sizeof(seen) - strlen(seen) - 1);
		strncat(seen, de->d_name, sizeof(seen) - strlen(seen) - 1);
		if (!found) {
			closedir(d);
			fail("tmpfs", "%s: unexpected entry %s", av[1],
			    de->d_name);
			return;
		}
		n++;
	}
	closedir(d);
	if (n != want) {
		fail("tmpfs", "%s: entries [%s ], wanted %d", av[1], seen,
		    want);
		return;
	}
	ok("tmpfs", "%s [%s ]", av[1], seen);
}

static void
check_absent(char **av)
{
	struct stat	 sb;

	if (lstat(av[1], &sb) == 0 || errno != ENOENT) {
		fail("absent", "%s exists", av[1]);
		return;
	}
	ok("absent", "%s", av[1]);
}

static void
check_write(char **av)
{
	FILE	*f;

	if ((f = fopen(av[1], "w")) == NULL) {
		fail("write", "%s: %s", av[1], strerror(errno));
		return;
	}
	fprintf(f, "%s\n", av[2]);
	if (fclose(f) != 0) {
		fail("write", "%s: %s", av[1], strerror(errno));
		return;
	}
	ok("write", "%s", av[1]);
}

static void
check_read(char **av)
{
	char	 buf[512];
	FILE	*f;

	if ((f = fopen(av[1], "r")) == NULL) {
		fail("read", "%s: %s", av[1], strerror(errno));
		return;
	}
	if (fgets(buf, sizeof(buf), f) == NULL)
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	if (strcmp(buf, av[2]) != 0) {
		fail("read", "%s: \"%s\", not \"%s\"", av[1], buf, av[2]);
		return;
	}
	ok("read", "%s", av[1]);
}

/* A line of /proc/self/status, e.g. "status CapEff 0000000000000000". */
static void
check_status(char **av)
{
	char	 line[256], *v;
	size_t	 len = strlen(av[1]);
	FILE	*f;

	if ((f = fopen("/proc/self/status", "r")) == NULL) {
		fail("status", "/proc/self/status: %s", strerror(errno));
		return;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strncmp(line, av[1], len) != 0 || line[len] != ':')
			continue;
		fclose(f);
		v = line + len + 1;
		v += strspn(v, " \t");
		v[strcspn(v, "\n")] = '\0';
		if (strcmp(v, av[2]) != 0) {
			fail("status", "%s is %s, not %s", av[1], v, av[2]);
			return;
		}
		ok("status", "%s %s", av[1], v);
		return;
	}
	fclose(f);
	fail("status", "no %s line", av[1]);
}

/* Only pid 1, this process, in /proc. */
static void
check_procs(char **av)
{
	struct dirent	*de;
	DIR		*d;
	char		 seen[512] = "";
	int		 n = 0, want = atoi(av[1]);

	if ((d = opendir("/proc")) == NULL) {
		fail("procs", "/proc: %s", strerror(errno));
		return;
	}
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		strncat(seen, " ", sizeof(seen) - strlen(seen) - 1);
		strncat(seen, de->d_name, sizeof(seen) - strlen(seen) - 1);
		n++;
	}
	closedir(d);
	if (n != want || getpid() != 1) {
		fail("procs", "pids [%s ], I am %d", seen, (int)getpid());
		return;
	}
	ok("procs", "[%s ]", seen);
}

static void
check_ids(char **av)
{
	uid_t	 r, e, s, u = (uid_t)atol(av[1]);
	gid_t	 gr, ge, gs, g = (gid_t)atol(av[2]);
	gid_t	 groups[8];
	int	 n;

	getresuid(&r, &e, &s);
	getresgid(&gr, &ge, &gs);
	n = getgroups(8, groups);
	if (r != u || e != u || s != u || gr != g || ge != g || gs != g ||
	    n != 0) {
		fail("ids", "uid %u/%u/%u gid %u/%u/%u, %d groups",
		    (unsigned)r, (unsigned)e, (unsigned)s, (unsigned)gr,
		    (unsigned)ge, (unsigned)gs, n);
		return;
	}
	ok("ids", "%u %u", (unsigned)u, (unsigned)g);
}

static void
check_hostname(char **av)
{
	char	 h[256];

	if (gethostname(h, sizeof(h)) == -1 || strcmp(h, av[1]) != 0) {
		fail("hostname", "%s", h);
		return;
	}
	ok("hostname", "%s", h);
}

static void
check_session(char **av)
{
	(void)av;
	if (getsid(0) != getpid()) {
		fail("session", "sid %d, pid %d", (int)getsid(0),
		    (int)getpid());
		return;
	}
	ok("session", "sid %d", (int)getsid(0));
}

static void
check_env(char **av)
{
	const char	*v = getenv(av[1]);

	if (v == NULL || strcmp(v, av[2]) != 0) {
		fail("env", "%s=%s", av[1], v ? v : "(unset)");
		return;
	}
	ok("env", "%s=%s", av[1], v);
}

static void
check_rlimit(char **av)
{
	static const struct { const char *n; int r; } lim[] = {
		{ "core", RLIMIT_CORE }, { "nofile", RLIMIT_NOFILE },
		{ "nproc", RLIMIT_NPROC }
	};
	struct rlimit	 rl;
	size_t		 i;

	for (i = 0; i < nitems(lim); i++) {
		if (strcmp(lim[i].n, av[1]) != 0)
			continue;
		getrlimit(lim[i].r, &rl);
		if (rl.rlim_cur != (rlim_t)strtoull(av[2], NULL, 10) ||
		    rl.rlim_max != rl.rlim_cur) {
			fail("rlimit", "%s %llu/%llu", av[1],
			    (unsigned long long)rl.rlim_cur,
			    (unsigned long long)rl.rlim_max);
			return;
		}
		ok("rlimit", "%s %s", av[1], av[2]);
		return;
	}
	fail("rlimit", "unknown %s", av[1]);
}

/*
 * /dev has exactly the minimal set, and the devices work; /dev/pts is a
 * devpts of the fence's own, with no terminal in it but those of the
 * fence (none here), and /dev/ptmx its ptmx.
 */
static void
check_dev(char **av)
{
	static const char *want[] = { "null", "zero", "full", "random",
	    "urandom", "tty", "fd", "stdin", "stdout", "stderr", "shm",
	    "pts", "ptmx" };
	struct statfs	 sf;
	struct dirent	*de;
	DIR		*d;
	char		 link[16];
	ssize_t		 ln;
	char	*args[nitems(want) + 3];
	char	 c = 1;
	size_t	 i;
	int	 fd, before = failures;

	(void)av;
	args[0] = "tmpfs";
	args[1] = "/dev";
	for (i = 0; i < nitems(want); i++)
		args[i + 2] = (char *)want[i];
	args[i + 2] = NULL;
	check_tmpfs(args);
	if ((fd = open("/dev/zero", O_RDONLY)) == -1 || read(fd, &c, 1) != 1 ||
	    c != 0)
		fail("dev", "/dev/zero: %s", strerror(errno));
	if (fd != -1)
		close(fd);
	if ((fd = open("/dev/null", O_WRONLY)) == -1 || write(fd, &c, 1) != 1)
		fail("dev", "/dev/null: %s", strerror(errno));
	if (fd != -1)
		close(fd);
	if (statfs("/dev/pts", &sf) == -1 || sf.f_type != DEVPTS_SUPER_MAGIC)
		fail("dev", "/dev/pts is no devpts");
	else if ((d = opendir("/dev/pts")) == NULL)
		fail("dev", "/dev/pts: %s", strerror(errno));
	else {
		while ((de = readdir(d)) != NULL)
			if (strcmp(de->d_name, ".") != 0 &&
			    strcmp(de->d_name, "..") != 0 &&
			    strcmp(de->d_name, "ptmx") != 0)
				fail("dev", "/dev/pts/%s: a terminal not of "
				    "this fence", de->d_name);
		closedir(d);
	}
	if ((ln = readlink("/dev/ptmx", link, sizeof(link) - 1)) == -1 ||
	    (link[ln] = '\0', strcmp(link, "pts/ptmx") != 0))
		fail("dev", "/dev/ptmx is not pts/ptmx");
	if (failures == before)
		ok("dev", NULL);
}

/* The sensitive /proc files read as /dev/null, the dirs are empty. */
static void
check_masked(char **av)
{
	static const char *files[] = { "kcore", "keys", "key-users",
	    "sysrq-trigger", "timer_list", "sched_debug", "kallsyms", "kmsg",
	    "latency_stats", "timer_stats", "config.gz" };
	static const char *dirs[] = { "acpi", "scsi", "asound", "bus", "irq" };
	struct stat	 sb;
	struct dirent	*de;
	char		 p[64], list[512] = "";
	size_t		 i;
	DIR		*d;
	int		 before = failures;

	(void)av;
	for (i = 0; i < nitems(files); i++) {
		snprintf(p, sizeof(p), "/proc/%s", files[i]);
		if (stat(p, &sb) == -1)
			continue;
		if (!S_ISCHR(sb.st_mode) || sb.st_rdev != makedev(1, 3))
			fail("masked", "%s is not /dev/null", p);
		else {
			strncat(list, " ", sizeof(list) - strlen(list) - 1);
			strncat(list, files[i],
			    sizeof(list) - strlen(list) - 1);
		}
	}
	for (i = 0; i < nitems(dirs); i++) {
		snprintf(p, sizeof(p), "/proc/%s", dirs[i]);
		if ((d = opendir(p)) == NULL)
			continue;
		while ((de = readdir(d)) != NULL)
			if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
				break;
		if (de != NULL)
			fail("masked", "%s is not empty (%s)", p, de->d_name);
		else {
			strncat(list, " ", sizeof(list) - strlen(list) - 1);
			strncat(list, dirs[i], sizeof(list) - strlen(list) - 1);
		}
		closedir(d);
	}
	if (failures == before)
		ok("masked", "[%s ]", list);
}

/*
 * System call probes.  The arguments are chosen so that, without the
 * seccomp filter, the kernel answers with something other than EPERM or
 * ENOSYS where it can (a bad fd, a bad address, a missing pid): a
 * "denied" check then really proves the filter.
 */
static long
probe_clone_newuser(void)
{
	long	 r;

	r = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);
	if (r == 0)
		_exit(0);
	if (r > 0)
		waitpid((pid_t)r, NULL, 0);
	return (r < 0 ? -1 : 0);
}

static long
probe_sock(int fam, int type)
{
	long	 r = socket(fam, type, 0);

	if (r >= 0)
		close((int)r);
	return (r < 0 ? -1 : 0);
}

static long
probe_sockpair(int fam, int type)
{
	int	 sv[2];

	return (socketpair(fam, type, 0, sv));
}

static long
probe(const char *name)
{
	struct timex	 tx;
	char		 buf[64];
	struct iovec	 iov = { buf, sizeof(buf) };
	char		 c = 'x';

	memset(&tx, 0, sizeof(tx));
	if (strcmp(name, "keyctl") == 0)
		return (syscall(SYS_keyctl, 0 /* GET_KEYRING_ID */, -1, 0));
	if (strcmp(name, "add_key") == 0)
		return (syscall(SYS_add_key, "user", "t", "x", 1, -2));
	if (strcmp(name, "request_key") == 0)
		return (syscall(SYS_request_key, "user", "fence-no-key", NULL,
		    0));
	if (strcmp(name, "bpf") == 0)
		return (syscall(SYS_bpf, -1, NULL, 0));
	if (strcmp(name, "userfaultfd") == 0)
		return (syscall(SYS_userfaultfd, 1 | 0x10));
	if (strcmp(name, "io_uring_setup") == 0)
		return (syscall(SYS_io_uring_setup, 0, NULL));
	if (strcmp(name, "perf_event_open") == 0)
		return (syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0));
	if (strcmp(name, "ptrace") == 0)
		return (syscall(SYS_ptrace, 12 /* GETREGS */, 999999, 0, 0));
	if (strcmp(name, "process_vm_readv") == 0)
		return (syscall(SYS_process_vm_readv, 999999, &iov, 1, &iov, 1,
		    0));
	if (strcmp(name, "kcmp") == 0)
		return (syscall(SYS_kcmp, 999999, 999999, 0, 0, 0));
	if (strcmp(name, "unshare-user") == 0)
		return (syscall(SYS_unshare, CLONE_NEWUSER));
	if (strcmp(name, "unshare") == 0)
		return (syscall(SYS_unshare, 0x1 /* invalid */));
	if (strcmp(name, "setns") == 0)
		return (syscall(SYS_setns, -1, 0));
	if (strcmp(name, "clone-newuser") == 0)
		return (probe_clone_newuser());
	if (strcmp(name, "clone3") == 0)
		return (syscall(SYS_clone3, NULL, 0));
	if (strcmp(name, "mount") == 0)
		return (syscall(SYS_mount, NULL, NULL, NULL, 0, NULL));
	if (strcmp(name, "umount2") == 0)
		return (syscall(SYS_umount2, "/", 0x80000000));
	if (strcmp(name, "chroot") == 0)
		return (syscall(SYS_chroot, "/nonexistent"));
	if (strcmp(name, "pivot_root") == 0)
		return (syscall(SYS_pivot_root, "/nonexistent",
		    "/nonexistent"));
	if (strcmp(name, "open_tree") == 0)
		return (syscall(SYS_open_tree, -1, "", 0));
	if (strcmp(name, "mount_setattr") == 0)
		return (syscall(SYS_mount_setattr, -1, "", 0, NULL, 0));
	if (strcmp(name, "fsopen") == 0)
		return (syscall(SYS_fsopen, NULL, 0));
	if (strcmp(name, "name_to_handle_at") == 0)
		return (syscall(SYS_name_to_handle_at, -1, "", NULL, NULL, 0));
	if (strcmp(name, "open_by_handle_at") == 0)
		return (syscall(SYS_open_by_handle_at, -1, NULL, 0));
	if (strcmp(name, "socket-packet") == 0)
		return (probe_sock(AF_PACKET, SOCK_RAW));
	if (strcmp(name, "socket-alg") == 0)
		return (probe_sock(AF_ALG, SOCK_SEQPACKET));
	if (strcmp(name, "socket-vsock") == 0)
		return (probe_sock(AF_VSOCK, SOCK_STREAM));
	if (strcmp(name, "socket-raw") == 0)
		return (probe_sock(AF_INET, SOCK_RAW | SOCK_CLOEXEC));
	if (strcmp(name, "socket-inet") == 0)
		return (probe_sock(AF_INET, SOCK_STREAM));
	if (strcmp(name, "socket-unix") == 0)
		return (probe_sock(AF_UNIX, SOCK_STREAM));
	if (strcmp(name, "socket-netlink") == 0)
		return (probe_sock(AF_NETLINK, SOCK_RAW));
	if (strcmp(name, "socketpair-alg") == 0)
		return (probe_sockpair(AF_ALG, SOCK_SEQPACKET));
	if (strcmp(name, "tiocsti") == 0)
		return (syscall(SYS_ioctl, -1, TIOCSTI, &c));
	if (strcmp(name, "tiocsti-high") == 0)
		return (syscall(SYS_ioctl, -1, 0x100000000UL | TIOCSTI, &c));
	if (strcmp(name, "tioclinux") == 0)
		return (syscall(SYS_ioctl, -1, TIOCLINUX, &c));
	if (strcmp(name, "personality-norandom") == 0)
		return (syscall(SYS_personality, ADDR_NO_RANDOMIZE));
	if (strcmp(name, "personality-high") == 0)
		return (syscall(SYS_personality, 0x100000000UL));
	if (strcmp(name, "personality-query") == 0)
		return (syscall(SYS_personality, 0xffffffffUL) == -1 ? -1 : 0);
	if (strcmp(name, "personality-linux32") == 0)
		return (syscall(SYS_personality, PER_LINUX32));
	if (strcmp(name, "personality-uname26") == 0)
		return (syscall(SYS_personality, UNAME26 | PER_LINUX32));
	if (strcmp(name, "clock_settime") == 0)
		return (syscall(SYS_clock_settime, CLOCK_REALTIME, NULL));
	if (strcmp(name, "settimeofday") == 0)
		return (syscall(SYS_settimeofday, NULL, NULL));
	if (strcmp(name, "adjtimex") == 0)
		return (syscall(SYS_adjtimex, &tx) == -1 ? -1 : 0);
	if (strcmp(name, "modify_ldt") == 0)
		return (syscall(SYS_modify_ldt, 0, buf, sizeof(buf)) < 0 ?
		    -1 : 0);
	if (strcmp(name, "get_mempolicy") == 0)
		return (syscall(SYS_get_mempolicy, NULL, NULL, 0, NULL, 0));
	if (strcmp(name, "kexec_load") == 0)
		return (syscall(SYS_kexec_load, 0, 0, NULL, 0));
	if (strcmp(name, "init_module") == 0)
		return (syscall(SYS_init_module, NULL, 0, ""));
	if (strcmp(name, "iopl") == 0)
		return (syscall(SYS_iopl, 3));
	if (strcmp(name, "swapon") == 0)
		return (syscall(SYS_swapon, "/nonexistent", 0));
	if (strcmp(name, "reboot") == 0)
		return (syscall(SYS_reboot, 0, 0, 0, NULL));
	if (strcmp(name, "syslog") == 0)
		return (syscall(SYS_syslog, 10 /* SIZE_BUFFER */, NULL, 0) < 0 ?
		    -1 : 0);
	if (strcmp(name, "future") == 0)
		return (syscall(500));
	if (strcmp(name, "open_tree_attr") == 0)
		return (syscall(467, -1, "", 0, NULL, 0));
	if (strcmp(name, "getpid") == 0)
		return (syscall(SYS_getpid) > 0 ? 0 : -1);
	errno = EINVAL;
	fprintf(stderr, "t_inside: unknown probe %s\n", name);
	return (-2);
}

/* Run a probe in a child: its errno (0: it worked), or -signal. */
static int
probe_child(const char *name)
{
	pid_t	 pid;
	long	 r;
	int	 st;

	fflush(stdout);
	if ((pid = fork()) == -1)
		return (-1000);
	if (pid == 0) {
		r = probe(name);
		if (r == -2)
			_exit(255);
		_exit(r == -1 ? (errno & 0xff) : 0);
	}
	if (waitpid(pid, &st, 0) == -1)
		return (-1000);
	if (WIFSIGNALED(st))
		return (-WTERMSIG(st));
	return (WEXITSTATUS(st));
}

static void
check_denied(char **av)
{
	int	 e = probe_child(av[1]);

	if (e == EPERM || e == ENOSYS)
		ok("denied", "%s %s", av[1], strerror(e));
	else if (e < 0)
		fail("denied", "%s: killed by signal %d", av[1], -e);
	else
		fail("denied", "%s: %s", av[1], e ? strerror(e) : "allowed");
}

static void
check_allowed(char **av)
{
	int	 e = probe_child(av[1]);

	if (e == EPERM || e == ENOSYS || e < 0 || e == 255)
		fail("allowed", "%s: %s", av[1], e < 0 ? "killed" :
		    strerror(e));
	else
		ok("allowed", "%s (%s)", av[1], e ? strerror(e) : "worked");
}

/* i386 int 0x80 getpid, and x32 getpid: must kill the caller. */
static void
abi_call(const char *abi)
{
	long	 r;

	/* A sanitizer's handler must not turn the signal into an exit. */
	signal(SIGSEGV, SIG_DFL);
	signal(SIGBUS, SIG_DFL);

	if (strcmp(abi, "i386") == 0) {
		__asm__ volatile("int $0x80" : "=a"(r) : "a"(20L)
		    : "r8", "r9", "r10", "r11", "memory");
	} else {
		__asm__ volatile("syscall" : "=a"(r) : "a"(0x40000000L | 39L)
		    : "rcx", "r11", "memory");
	}
	_exit(r > 0 ? 0 : (int)(-r & 0xff));
}

static void
check_killed(char **av)
{
	pid_t	 pid;
	int	 st, want = atoi(av[2]);

	fflush(stdout);
	if ((pid = fork()) == 0)
		abi_call(av[1]);
	if (pid == -1 || waitpid(pid, &st, 0) == -1) {
		fail("killed", "%s: fork: %s", av[1], strerror(errno));
		return;
	}
	if (!WIFSIGNALED(st)) {
		fail("killed", "%s: exited %d", av[1], WEXITSTATUS(st));
		return;
	}
	if (want != 0 && WTERMSIG(st) != want) {
		fail("killed", "%s: signal %d, not %d", av[1], WTERMSIG(st),
		    want);
		return;
	}
	ok("killed", "%s by signal %d", av[1], WTERMSIG(st));
}

/* Fork until refused; more than max children means no limit. */
static void
check_forkbomb(char **av)
{
	int	 max = atoi(av[1]), n = 0, e = 0, st;
	pid_t	 pid;

	fflush(stdout);
	for (;;) {
		if ((pid = fork()) == 0) {
			pause();
			_exit(0);
		}
		if (pid == -1) {
			e = errno;
			break;
		}
		if (++n >= max)
			break;
	}
	kill(-1, SIGKILL);
	while (waitpid(-1, &st, 0) > 0)
		;
	if (n >= max) {
		fail("forkbomb", "%d children and no refusal", n);
		return;
	}
	ok("forkbomb", "stopped after %d children: %s", n, strerror(e));
}

/* A child touches size MiB; the memory cgroup must kill it. */
static void
check_alloc(char **av)
{
	size_t	 mb = strtoul(av[1], NULL, 10), i;
	pid_t	 pid;
	char	*p;
	int	 st;

	fflush(stdout);
	if ((pid = fork()) == 0) {
		if ((p = mmap(NULL, mb << 20, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)) == MAP_FAILED)
			_exit(2);
		for (i = 0; i < mb << 20; i += 4096)
			p[i] = 1;
		_exit(0);
	}
	if (pid == -1 || waitpid(pid, &st, 0) == -1) {
		fail("alloc", "fork: %s", strerror(errno));
		return;
	}
	if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGKILL) {
		fail("alloc", "%zu MiB: child not OOM-killed (status %d)", mb,
		    st);
		return;
	}
	ok("alloc", "%zu MiB: child killed by SIGKILL, pid 1 alive", mb);
}

static void
check_connect(char **av)
{
	struct sockaddr_in	 sin;
	int			 s, r, e, want = strcmp(av[3], "ok") == 0;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)atoi(av[2]));
	if (inet_pton(AF_INET, av[1], &sin.sin_addr) != 1 ||
	    (s = socket(AF_INET, SOCK_STREAM, 0)) == -1) {
		fail("connect", "%s: %s", av[1], strerror(errno));
		return;
	}
	r = connect(s, (struct sockaddr *)&sin, sizeof(sin));
	e = errno;
	close(s);
	if ((r == 0) != want) {
		fail("connect", "%s:%s %s", av[1], av[2], r == 0 ? "connected" :
		    strerror(e));
		return;
	}
	ok("connect", "%s:%s %s", av[1], av[2], r == 0 ? "connected" :
	    strerror(e));
}

static void
check_abstract(char **av)
{
	struct sockaddr_un	 sun;
	socklen_t		 len;
	int			 s, r, e, want = strcmp(av[2], "ok") == 0;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	strncpy(sun.sun_path + 1, av[1], sizeof(sun.sun_path) - 2);
	len = offsetof(struct sockaddr_un, sun_path) + 1 + strlen(av[1]);
	if ((s = socket(AF_UNIX, SOCK_STREAM, 0)) == -1) {
		fail("abstract", "socket: %s", strerror(errno));
		return;
	}
	r = connect(s, (struct sockaddr *)&sun, len);
	e = errno;
	close(s);
	if ((r == 0) != want) {
		fail("abstract", "@%s %s", av[1], r == 0 ? "connected" :
		    strerror(e));
		return;
	}
	ok("abstract", "@%s %s", av[1], r == 0 ? "connected" : strerror(e));
}

/* Only lo, and up. */
static void
check_netif(char **av)
{
	struct if_nameindex	*ifs, *i;
	struct ifreq		 ifr;
	int			 s, n = 0;

	(void)av;
	if ((ifs = if_nameindex()) == NULL) {
		fail("netif", "if_nameindex: %s", strerror(errno));
		return;
	}
	for (i = ifs; i->if_index != 0; i++, n++)
		if (strcmp(i->if_name, "lo") != 0) {
			fail("netif", "interface %s", i->if_name);
			if_freenameindex(ifs);
			return;
		}
	if_freenameindex(ifs);
	memset(&ifr, 0, sizeof(ifr));
	strcpy(ifr.ifr_name, "lo");
	if ((s = socket(AF_INET, SOCK_DGRAM, 0)) == -1 ||
	    ioctl(s, SIOCGIFFLAGS, &ifr) == -1 || !(ifr.ifr_flags & IFF_UP)) {
		fail("netif", "lo is not up");
		return;
	}
	close(s);
	ok("netif", "%d interface(s): lo, up", n);
}

/* Landlock: /proc/self/comm is ours by DAC and mount, not by Landlock. */
static void
check_landlock_proc(char **av)
{
	int	 fd, want = strcmp(av[1], "ok") == 0, e;

	fd = open("/proc/self/comm", O_WRONLY);
	e = errno;
	if (fd != -1)
		close(fd);
	if ((fd != -1) != want) {
		fail("landlock-proc", "open /proc/self/comm for writing: %s",
		    fd != -1 ? "worked" : strerror(e));
		return;
	}
	ok("landlock-proc", "%s", fd != -1 ? "writable" : strerror(e));
}

/* A grandchild in a session of its own: fence_stop must get it too. */
static void
check_orphan(char **av)
{
	pid_t	 pid;

	(void)av;
	fflush(stdout);
	if ((pid = fork()) == 0) {
		setsid();
		if (fork() == 0) {
			for (;;)
				pause();
		}
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	ok("orphan", NULL);
}

/*
 * The filesystem of PATH holds less than MB megabytes: fallocate of MB
 * and writing MB both stop at ENOSPC (or EDQUOT); the file is removed.
 */
static void
check_full(char **av)
{
	static char	 buf[1 << 20];
	long		 mb = atol(av[2]), i;
	off_t		 total;
	ssize_t		 n;
	int		 fd, e;

	if ((fd = open(av[1], O_WRONLY | O_CREAT | O_TRUNC, 0600)) == -1) {
		fail("full", "%s: %s", av[1], strerror(errno));
		return;
	}
	e = posix_fallocate(fd, 0, (off_t)mb << 20);
	if (e != ENOSPC && e != EDQUOT) {
		fail("full", "fallocate %ld MB: %s", mb,
		    e == 0 ? "succeeded" : strerror(e));
		goto out;
	}
	if (ftruncate(fd, 0) == -1) {
		fail("full", "truncate: %s", strerror(errno));
		goto out;
	}
	/*
	 * Near the end a write may be short, which sets no errno: the
	 * next one, for the rest, fails and says why.
	 */
	memset(buf, 'x', sizeof(buf));
	e = 0;
	for (total = 0; total < (off_t)mb << 20; total += n)
		if ((n = write(fd, buf, sizeof(buf) - total % sizeof(buf))) <=
		    0) {
			e = n == -1 ? errno : 0;
			break;
		}
	i = (long)(total >> 20);
	if (e != ENOSPC && e != EDQUOT) {
		fail("full", "wrote %ld of %ld MB: %s", i, mb,
		    e == 0 ? "no error" : strerror(e));
		goto out;
	}
	ok("full", "fallocate ENOSPC, write stopped after %ld MB: %s", i,
	    strerror(e));
 out:
	(void)close(fd);
	(void)unlink(av[1]);
}

/* /proc/self/mountinfo names none of the paths given. */
static void
check_mountinfo_hides(char **av)
{
	FILE	*f;
	char	 line[4096];
	int	 i, n = 0;

	if ((f = fopen("/proc/self/mountinfo", "r")) == NULL) {
		fail("mountinfo-hides", "%s", strerror(errno));
		return;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		n++;
		for (i = 1; av[i] != NULL; i++)
			if (strstr(line, av[i]) != NULL) {
				line[strcspn(line, "\n")] = '\0';
				fail("mountinfo-hides", "%s in \"%s\"", av[i],
				    line);
				fclose(f);
				return;
			}
	}
	fclose(f);
	ok("mountinfo-hides", "%d mounts", n);
}

static void
check_sleep(char **av)
{
	fflush(stdout);
	sleep((unsigned)atoi(av[1]));
	ok("sleep", "%s", av[1]);
}

/*
 * Write zeros to PATH/fill until the filesystem refuses: it must say
 * ENOSPC, at MAX bytes (a suffix M allowed) or less, and more than
 * MAX - 1 MiB: the size is the tmpfs's, not the memory cgroup's.
 */
static void
check_fill(char **av)
{
	static char	 buf[65536];
	char		 f[512], *end;
	unsigned long long max, n = 0;
	ssize_t		 w;
	int		 fd, e = 0;

	max = strtoull(av[2], &end, 10);
	if (*end == 'M')
		max <<= 20;
	snprintf(f, sizeof(f), "%s/.t_inside-fill.%d", av[1], (int)getpid());
	if ((fd = open(f, O_WRONLY | O_CREAT | O_EXCL, 0600)) == -1) {
		fail("fill", "%s: %s", f, strerror(errno));
		return;
	}
	for (;;) {
		if ((w = write(fd, buf, sizeof(buf))) <= 0) {
			e = w == 0 ? 0 : errno;
			break;
		}
		n += (unsigned long long)w;
		if (n > 4 * max)
			break;
	}
	close(fd);
	unlink(f);
	if (e != ENOSPC || n > max || n + (1 << 20) < max) {
		fail("fill", "%s: %llu bytes written (at most %llu): %s", av[1],
		    n, max, e ? strerror(e) : "no error");
		return;
	}
	ok("fill", "%s: %llu bytes, then ENOSPC", av[1], n);
}

/*
 * N children each open /dev/null until refused and hold what they got;
 * all of them together must stay within TOTAL descriptors, each child
 * within its RLIMIT_NOFILE.  On the host's 20,000 an L1 fence's
 * processes held 200,000.
 */
static void
check_nofile_hold(char **av)
{
	int		 nproc = atoi(av[1]), i, k, p[2], go[2], st;
	unsigned long long total = strtoull(av[2], NULL, 10), sum = 0;
	struct rlimit	 rl;
	pid_t		 pid;
	char		 c;
	int		 got;

	getrlimit(RLIMIT_NOFILE, &rl);
	if (pipe(p) == -1 || pipe(go) == -1) {
		fail("nofile-hold", "pipe: %s", strerror(errno));
		return;
	}
	fflush(stdout);
	for (i = 0; i < nproc; i++) {
		if ((pid = fork()) == -1) {
			fail("nofile-hold", "fork: %s", strerror(errno));
			break;
		}
		if (pid == 0) {
			close(p[0]);
			close(go[1]);
			for (k = 0; open("/dev/null", O_RDONLY) != -1; k++)
				;
			got = k;
			if (write(p[1], &got, sizeof(got)) != sizeof(got))
				_exit(1);
			if (read(go[0], &c, 1) == -1)	/* hold until told */
				_exit(1);
			_exit(0);
		}
	}
	close(p[1]);
	close(go[0]);
	for (k = 0; k < i && read(p[0], &got, sizeof(got)) ==
	    (ssize_t)sizeof(got); k++) {
		sum += (unsigned long long)got;
		if ((rlim_t)got > rl.rlim_cur) {
			fail("nofile-hold", "a child opened %d, its limit %llu",
			    got, (unsigned long long)rl.rlim_cur);
			break;
		}
	}
	close(go[1]);			/* every child exits */
	close(p[0]);
	while (waitpid(-1, &st, 0) > 0)
		;
	if (sum > total) {
		fail("nofile-hold", "%d processes held %llu descriptors, more "
		    "than %llu", k, sum, total);
		return;
	}
	ok("nofile-hold", "%d processes held %llu descriptors", k, sum);
}

/* keyctl(2) without libkeyutils. */
#ifndef KEY_SPEC_SESSION_KEYRING
#define KEY_SPEC_SESSION_KEYRING	-3
#endif
#ifndef KEYCTL_SEARCH
#define KEYCTL_SEARCH			10
#endif

/* A key in the session keyring: must be allowed (L1) and work. */
static void
check_keyring_add(char **av)
{
	long	 id;

	id = syscall(SYS_add_key, "user", av[1], "fenced-secret", 13,
	    KEY_SPEC_SESSION_KEYRING);
	if (id == -1) {
		fail("keyring-add", "%s: %s", av[1], strerror(errno));
		return;
	}
	ok("keyring-add", "%s: key %ld", av[1], id);
}

/* The session keyring has no key of that name (or may not be read). */
static void
check_keyring_absent(char **av)
{
	long	 id;

	id = syscall(SYS_keyctl, KEYCTL_SEARCH, KEY_SPEC_SESSION_KEYRING,
	    "user", av[1], 0);
	if (id != -1) {
		fail("keyring-absent", "%s: found, key %ld", av[1], id);
		return;
	}
	ok("keyring-absent", "%s: %s", av[1], strerror(errno));
}

static void
check_true(char **av)
{
	(void)av;
}

static const struct check {
	const char	*c_name;
	int		 c_args;
	void		(*c_fn)(char **);
} checks[] = {
	{ "ro",			1, check_ro },
	{ "rw",			1, check_rw },
	{ "ro-mount",		1, check_rdonly_flag },
	{ "tmpfs",		1, check_tmpfs },
	{ "absent",		1, check_absent },
	{ "write",		2, check_write },
	{ "read",		2, check_read },
	{ "status",		2, check_status },
	{ "procs",		1, check_procs },
	{ "ids",		2, check_ids },
	{ "hostname",		1, check_hostname },
	{ "session",		0, check_session },
	{ "env",		2, check_env },
	{ "rlimit",		2, check_rlimit },
	{ "dev",		0, check_dev },
	{ "masked",		0, check_masked },
	{ "denied",		1, check_denied },
	{ "allowed",		1, check_allowed },
	{ "killed",		2, check_killed },
	{ "forkbomb",		1, check_forkbomb },
	{ "alloc",		1, check_alloc },
	{ "fill",		2, check_fill },
	{ "nofile-hold",	2, check_nofile_hold },
	{ "keyring-add",	1, check_keyring_add },
	{ "keyring-absent",	1, check_keyring_absent },
	{ "connect",		3, check_connect },
	{ "abstract",		2, check_abstract },
	{ "netif",		0, check_netif },
	{ "landlock-proc",	1, check_landlock_proc },
	{ "orphan",		0, check_orphan },
	{ "mountinfo-hides",	1, check_mountinfo_hides },
	{ "full",		2, check_full },
	{ "sleep",		1, check_sleep },
	{ "true",		0, check_true }
};

int
main(int argc, char *argv[])
{
	size_t	 i;
	int	 a, b, n;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (a = 1; a < argc; a = b + 1) {
		for (b = a; b < argc && strcmp(argv[b], "--") != 0; b++)
			;
		argv[b < argc ? b : argc] = NULL;
		for (i = 0; i < nitems(checks); i++)
			if (strcmp(checks[i].c_name, argv[a]) == 0)
				break;
		n = b - a - 1;
		if (i == nitems(checks) || n < checks[i].c_args) {
			fail(argv[a], "unknown check or missing arguments");
			continue;
		}
		checks[i].c_fn(argv + a);
	}
	/*
	 * _exit: in a sanitizer build LeakSanitizer's check at exit needs
	 * ptrace, which the fence refuses, and would fail the run.
	 */
	fflush(stdout);
	_exit(failures > 100 ? 100 : failures);
}
