/*
 * lockdown(): each case forks a child that locks itself down as the
 * broker, the prober or the fencer would, and the parent judges what the
 * child reports and how it ended.  A call the filter forbids ends the
 * child with SIGSYS; each such case also runs the same call unconfined,
 * so that a SIGSYS or EPERM can only have come from the filter.
 */
#include <sys/types.h>
#include <sys/capability.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/quota.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/timex.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <sys/wait.h>

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <linux/securebits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <atf-c.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <jansson.h>
#include <msgpack.h>

#include "lockdown.h"
#include "log.h"

#define BROKER_PROMISES	"stdio recvfd sendfd unix inet"
#define PROBER_PROMISES	"stdio recvfd sendfd"
#define EGRESS_PROMISES	"stdio recvfd sendfd inet connect"
#define EMPTY_DIR	"empty"
#define X32_BIT		0x40000000L
#define I386_GETPID	20

/* The fencer's capabilities, as docs/lockdown.md lists them. */
static const cap_value_t fencer_caps[] = {
	CAP_CHOWN, CAP_DAC_OVERRIDE, CAP_FOWNER, CAP_KILL, CAP_SETGID,
	CAP_SETUID, CAP_SETPCAP, CAP_NET_ADMIN, CAP_SYS_CHROOT, CAP_SYS_ADMIN,
	CAP_MKNOD
};
#define NFENCER_CAPS	(sizeof(fencer_caps) / sizeof(fencer_caps[0]))

enum profile { P_BROKER, P_PROBER, P_FENCER, P_KEEPER, P_EGRESS };

/* Not a fenced process: a uid change that keeps one capability. */
static const cap_value_t keeper_caps[] = { CAP_NET_BIND_SERVICE };

/* A child: its output until it closed it, and how it ended. */
struct kid {
	pid_t	 k_pid;
	int	 k_status;
	char	 k_out[8192];
	size_t	 k_len;
	int	 k_go;		/* closing it lets the child exit */
};

typedef void (*kid_fn)(int, void *);

static uid_t	 t_uid;
static gid_t	 t_gid;

/* The title is set over argv, which setproctitle_init() must know. */
static void t_init(int, char **, char **) __attribute__((constructor));

static void
t_init(int argc, char **argv, char **envp)
{
	setproctitle_init(argc, argv, envp);
}

/* The unprivileged user: the daemon's own if it exists. */
static void
t_user(void)
{
	struct passwd	*pw;

	if ((pw = getpwnam("_fenced")) == NULL &&
	    (pw = getpwnam("nobody")) == NULL)
		atf_tc_skip("no user _fenced or nobody");
	t_uid = pw->pw_uid;
	t_gid = pw->pw_gid;
	log_init(1, 0);
	log_setverbose(1);
}

/* A root-owned, mode 0755, empty directory to chroot into. */
static void
t_emptydir(const char *path)
{
	ATF_REQUIRE_MSG(mkdir(path, 0755) == 0 || errno == EEXIST,
	    "mkdir %s: %s", path, strerror(errno));
	ATF_REQUIRE(chown(path, 0, 0) == 0);
	ATF_REQUIRE(chmod(path, 0755) == 0);
}

static struct lockdown
t_profile(enum profile p)
{
	struct lockdown	 ld;

	memset(&ld, 0, sizeof(ld));
	switch (p) {
	case P_BROKER:
	case P_PROBER:
	case P_EGRESS:
		ld.ld_title = p == P_BROKER ? "broker" : p == P_PROBER ?
		    "prober" : "egress";
		ld.ld_chroot = EMPTY_DIR;
		ld.ld_uid = t_uid;
		ld.ld_gid = t_gid;
		ld.ld_promises = p == P_BROKER ? BROKER_PROMISES :
		    p == P_PROBER ? PROBER_PROMISES : EGRESS_PROMISES;
		ld.ld_filter = LOCKDOWN_ALLOW;
		t_emptydir(EMPTY_DIR);
		break;
	case P_FENCER:
		ld.ld_title = "fencer";
		ld.ld_uid = (uid_t)-1;
		ld.ld_gid = (gid_t)-1;
		ld.ld_caps = fencer_caps;
		ld.ld_ncaps = NFENCER_CAPS;
		ld.ld_filter = LOCKDOWN_DENY;
		break;
	case P_KEEPER:
		ld.ld_title = "keeper";
		ld.ld_uid = t_uid;
		ld.ld_gid = t_gid;
		ld.ld_caps = keeper_caps;
		ld.ld_ncaps = 1;
		ld.ld_promises = "stdio";
		ld.ld_filter = LOCKDOWN_ALLOW;
		break;
	}
	return (ld);
}

static void
kid_start(struct kid *k, kid_fn fn, void *arg)
{
	int	 out[2], go[2];
	ssize_t	 n;
	char	 c;

	memset(k, 0, sizeof(*k));
	ATF_REQUIRE(pipe2(out, O_CLOEXEC) == 0);
	ATF_REQUIRE(pipe2(go, O_CLOEXEC) == 0);
	fflush(NULL);
	ATF_REQUIRE((k->k_pid = fork()) != -1);
	if (k->k_pid == 0) {
		close(out[0]);
		close(go[1]);
		fn(out[1], arg);
		close(out[1]);
		/* Stay until the parent has looked at /proc/PID. */
		_exit(read(go[0], &c, 1) == 0 ? 0 : 98);
	}
	close(out[1]);
	close(go[0]);
	k->k_go = go[1];
	while (k->k_len < sizeof(k->k_out) - 1 &&
	    (n = read(out[0], k->k_out + k->k_len,
	    sizeof(k->k_out) - 1 - k->k_len)) != 0) {
		if (n == -1 && errno == EINTR)
			continue;
		ATF_REQUIRE(n > 0);
		k->k_len += n;
	}
	k->k_out[k->k_len] = '\0';
	close(out[0]);
}

static void
kid_finish(struct kid *k)
{
	close(k->k_go);
	ATF_REQUIRE(waitpid(k->k_pid, &k->k_status, 0) == k->k_pid);
}

static void
kid_run(struct kid *k, kid_fn fn, void *arg)
{
	kid_start(k, fn, arg);
	kid_finish(k);
}

static int
kid_exited(const struct kid *k, int code)
{
	return (WIFEXITED(k->k_status) && WEXITSTATUS(k->k_status) == code);
}

static int
kid_signalled(const struct kid *k, int sig)
{
	return (WIFSIGNALED(k->k_status) && WTERMSIG(k->k_status) == sig);
}

static const char *
kid_how(const struct kid *k)
{
	static char	 buf[64];

	if (WIFEXITED(k->k_status))
		snprintf(buf, sizeof(buf), "exit %d", WEXITSTATUS(k->k_status));
	else if (WIFSIGNALED(k->k_status))
		snprintf(buf, sizeof(buf), "signal %d (%s)",
		    WTERMSIG(k->k_status), strsignal(WTERMSIG(k->k_status)));
	else
		snprintf(buf, sizeof(buf), "status %#x", k->k_status);
	return (buf);
}

static void
put(int fd, const void *buf, size_t len)
{
	if (write(fd, buf, len) != (ssize_t)len)
		_exit(95);
}

static void
putf(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
putf(int fd, const char *fmt, ...)
{
	char	 buf[512];
	va_list	 ap;
	int	 n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > 0)
		put(fd, buf, (size_t)n < sizeof(buf) ? (size_t)n :
		    sizeof(buf) - 1);
}

/* The value of "Name:" in a /proc/PID/status text, blanks trimmed. */
static const char *
status_field(const char *status, const char *name, char *val, size_t len)
{
	const char	*p = status, *e;
	size_t		 nlen = strlen(name), n;

	while (p != NULL && *p != '\0') {
		if (strncmp(p, name, nlen) == 0 && p[nlen] == ':') {
			p += nlen + 1;
			while (*p == ' ' || *p == '\t')
				p++;
			e = strchr(p, '\n');
			n = e != NULL ? (size_t)(e - p) : strlen(p);
			while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t'))
				n--;
			if (n >= len)
				n = len - 1;
			memcpy(val, p, n);
			val[n] = '\0';
			return (val);
		}
		if ((p = strchr(p, '\n')) != NULL)
			p++;
	}
	atf_tc_fail("no %s: in status:\n%s", name, status);
}

static uint64_t
status_caps(const char *status, const char *name)
{
	char	 val[64];

	return (strtoull(status_field(status, name, val, sizeof(val)),
	    NULL, 16));
}

static void
require_field(const char *status, const char *name, const char *want)
{
	char	 val[128];

	status_field(status, name, val, sizeof(val));
	ATF_CHECK_MSG(strcmp(val, want) == 0, "%s: \"%s\", want \"%s\"",
	    name, val, want);
}

/*
 * Status: lock down, then read /proc/self/status through a descriptor
 * opened before (there is no /proc in the chroot) and send it up.
 */
static void
c_status(int out, void *arg)
{
	const struct lockdown	*ld = arg;
	char			 buf[4096];
	ssize_t			 n;
	int			 fd;

	if ((fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC)) == -1)
		_exit(90);
	lockdown(ld);
	if ((n = pread(fd, buf, sizeof(buf), 0)) <= 0)
		_exit(91);
	put(out, buf, n);
}

static void
check_status(enum profile p)
{
	struct lockdown	 ld = t_profile(p);
	struct kid	 k;
	char		 path[64], link[PATH_MAX], want[PATH_MAX], cmd[256];
	char		 ids[64];
	uint64_t	 mask = 0;
	ssize_t		 n;
	size_t		 i;
	int		 fd;

	kid_start(&k, c_status, &ld);
	ATF_REQUIRE_MSG(k.k_len > 0, "no status from the child");

	/* Where the child is, and what ps shows, while it still runs. */
	snprintf(path, sizeof(path), "/proc/%ld/root", (long)k.k_pid);
	ATF_REQUIRE((n = readlink(path, link, sizeof(link) - 1)) > 0);
	link[n] = '\0';
	if (ld.ld_chroot != NULL)
		ATF_REQUIRE(realpath(ld.ld_chroot, want) != NULL);
	else
		strlcpy(want, "/", sizeof(want));
	ATF_CHECK_MSG(strcmp(link, want) == 0, "root %s, want %s", link,
	    want);
	snprintf(path, sizeof(path), "/proc/%ld/cmdline", (long)k.k_pid);
	ATF_REQUIRE((fd = open(path, O_RDONLY)) != -1);
	n = read(fd, cmd, sizeof(cmd) - 1);
	close(fd);
	ATF_REQUIRE(n > 0);
	cmd[n] = '\0';
	snprintf(want, sizeof(want), ": %s", ld.ld_title);
	ATF_CHECK_MSG(strstr(cmd, want) != NULL, "title \"%s\"", cmd);
	kid_finish(&k);
	ATF_REQUIRE_MSG(kid_exited(&k, 0), "child: %s", kid_how(&k));

	require_field(k.k_out, "Seccomp", "2");
	require_field(k.k_out, "NoNewPrivs", "1");
	for (i = 0; i < ld.ld_ncaps; i++)
		mask |= 1ULL << ld.ld_caps[i];
	ATF_CHECK_EQ_MSG(status_caps(k.k_out, "CapEff"), mask, "CapEff %#jx",
	    (uintmax_t)status_caps(k.k_out, "CapEff"));
	ATF_CHECK_EQ_MSG(status_caps(k.k_out, "CapPrm"), mask, "CapPrm %#jx",
	    (uintmax_t)status_caps(k.k_out, "CapPrm"));
	ATF_CHECK_EQ_MSG(status_caps(k.k_out, "CapBnd"), mask, "CapBnd %#jx",
	    (uintmax_t)status_caps(k.k_out, "CapBnd"));
	ATF_CHECK_EQ_MSG(status_caps(k.k_out, "CapInh"), mask, "CapInh %#jx",
	    (uintmax_t)status_caps(k.k_out, "CapInh"));
	ATF_CHECK_EQ_MSG(status_caps(k.k_out, "CapAmb"), 0, "CapAmb %#jx",
	    (uintmax_t)status_caps(k.k_out, "CapAmb"));
	if (p == P_FENCER) {
		require_field(k.k_out, "Uid", "0\t0\t0\t0");
		require_field(k.k_out, "Gid", "0\t0\t0\t0");
	} else {
		snprintf(ids, sizeof(ids), "%u\t%u\t%u\t%u", t_uid, t_uid,
		    t_uid, t_uid);
		require_field(k.k_out, "Uid", ids);
		snprintf(ids, sizeof(ids), "%u\t%u\t%u\t%u", t_gid, t_gid,
		    t_gid, t_gid);
		require_field(k.k_out, "Gid", ids);
		snprintf(ids, sizeof(ids), "%u", t_gid);
		require_field(k.k_out, "Groups", ids);
	}
}

ATF_TC(broker_confined);
ATF_TC_HEAD(broker_confined, tc)
{
	atf_tc_set_md_var(tc, "descr", "the broker ends chrooted, as its "
	    "user, with no capabilities, no_new_privs and Seccomp 2");
	atf_tc_set_md_var(tc, "require.user", "root");
}
ATF_TC_BODY(broker_confined, tc)
{
	t_user();
	check_status(P_BROKER);
}

ATF_TC(prober_confined);
ATF_TC_HEAD(prober_confined, tc)
{
	atf_tc_set_md_var(tc, "descr", "the prober ends chrooted, as its "
	    "user, with no capabilities, no_new_privs and Seccomp 2");
	atf_tc_set_md_var(tc, "require.user", "root");
}
ATF_TC_BODY(prober_confined, tc)
{
	t_user();
	check_status(P_PROBER);
}

ATF_TC(uid_keeps_capability);
ATF_TC_HEAD(uid_keeps_capability, tc)
{
	atf_tc_set_md_var(tc, "descr", "a change of uid can keep a listed "
	    "capability (keep_caps), and only it");
	atf_tc_set_md_var(tc, "require.user", "root");
}
ATF_TC_BODY(uid_keeps_capability, tc)
{
	t_user();
	check_status(P_KEEPER);
}

ATF_TC(fencer_confined);
ATF_TC_HEAD(fencer_confined, tc)
{
	atf_tc_set_md_var(tc, "descr", "the fencer stays root in / with "
	    "exactly its documented capabilities and Seccomp 2");
	atf_tc_set_md_var(tc, "require.user", "root");
}
ATF_TC_BODY(fencer_confined, tc)
{
	t_user();
	check_status(P_FENCER);
}

/*
 * Calls the broker's or prober's filter forbids.  Each is a harmless
 * use of the call: unconfined it returns (an error or not); confined
 * it must end the process with SIGSYS.
 */
static int	 t_sp[2] = { -1, -1 };	/* a connected socket pair */
static int	 t_listen = -1;		/* a listening unix socket */

static long
f_socket_inet(void)
{
	return (socket(AF_INET, SOCK_STREAM, 0));
}

static long
f_socket_unix(void)
{
	return (socket(AF_UNIX, SOCK_DGRAM, 0));
}

static long
f_socketpair(void)
{
	int	 sv[2];

	return (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0, sv));
}

/* The broker's unix promise allows a stream pair alone. */
static long
f_socketpair_dgram(void)
{
	int	 sv[2];

	return (socketpair(AF_UNIX, SOCK_DGRAM, 0, sv));
}

static long
f_socketpair_seqpacket(void)
{
	int	 sv[2];

	return (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv));
}

static long
f_connect(void)
{
	struct sockaddr_un	 sun;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	strlcpy(sun.sun_path, "/nonexistent", sizeof(sun.sun_path));
	return (connect(t_sp[0], (struct sockaddr *)&sun, sizeof(sun)));
}

static long
f_bind(void)
{
	struct sockaddr_un	 sun;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	return (bind(t_sp[0], (struct sockaddr *)&sun, sizeof(sa_family_t)));
}

static long
f_sendto_addr(void)
{
	struct sockaddr_un	 sun;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	strlcpy(sun.sun_path, "/nonexistent", sizeof(sun.sun_path));
	return (sendto(t_sp[0], "x", 1, MSG_DONTWAIT,
	    (struct sockaddr *)&sun, sizeof(sun)));
}

static long
f_openat(void)
{
	return (openat(AT_FDCWD, "/", O_RDONLY | O_DIRECTORY));
}

static long
f_open(void)
{
	return (syscall(SYS_open, "/", O_RDONLY));
}

static long
f_execve(void)
{
	char	*argv[] = { "true", NULL };

	return (execve("/bin/true", argv, NULL));
}

static long
f_fork(void)
{
	pid_t	 pid;

	if ((pid = fork()) == 0)
		_exit(0);
	return (pid);
}

static long
f_vfork(void)
{
	pid_t	 pid;

	if ((pid = vfork()) == 0)
		_exit(0);
	return (pid);
}

static void *
f_thread_main(void *arg)
{
	return (arg);
}

static long
f_thread(void)
{
	pthread_t	 t;

	return (pthread_create(&t, NULL, f_thread_main, NULL));
}

static long
f_ptrace(void)
{
	return (ptrace(PTRACE_PEEKUSER, getppid(), NULL, NULL));
}

static long
f_kill_other(void)
{
	return (kill(getppid(), 0));
}

static long
f_tgkill_other(void)
{
	return (syscall(SYS_tgkill, getppid(), getppid(), 0));
}

static long
f_mmap_exec(void)
{
	return ((long)mmap(NULL, 4096, PROT_READ | PROT_EXEC,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
}

static long
f_mprotect_exec(void)
{
	void	*p;

	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return (-2);
	return (mprotect(p, 4096, PROT_READ | PROT_EXEC));
}

static long
f_setuid(void)
{
	return (syscall(SYS_setuid, 0));
}

static long
f_chroot(void)
{
	return (chroot("/"));
}

static long
f_mount(void)
{
	return (mount("none", "/nonexistent", "tmpfs", 0, NULL));
}

static long
f_unshare(void)
{
	return (unshare(CLONE_NEWUTS));
}

static long
f_prctl(void)
{
	return (prctl(PR_SET_NAME, "x", 0, 0, 0));
}

static long
f_fcntl_setown(void)
{
	return (fcntl(t_sp[0], F_SETOWN, getpid()));
}

static long
f_ioctl_tiocsti(void)
{
	char	 c = 'x';

	return (ioctl(t_sp[0], TIOCSTI, &c));
}

static long
f_setrlimit(void)
{
	struct rlimit	 rl = { 0, 0 };

	return (setrlimit(RLIMIT_CORE, &rl));
}

static long
f_prlimit_other(void)
{
	struct rlimit	 rl;

	return (prlimit(getppid(), RLIMIT_CORE, NULL, &rl));
}

static long
f_getdents(void)
{
	char	 buf[256];

	return (syscall(SYS_getdents64, 0, buf, sizeof(buf)));
}

static long
f_memfd(void)
{
	return (syscall(SYS_memfd_create, "x", 0));
}

static long
f_bpf(void)
{
	return (syscall(SYS_bpf, -1, NULL, 0));
}

static long
f_io_uring(void)
{
	return (syscall(SYS_io_uring_setup, 0, NULL));
}

static long
f_keyctl(void)
{
	return (syscall(SYS_keyctl, -1, 0, 0, 0, 0));
}

static long
f_seccomp(void)
{
	return (syscall(SYS_seccomp, -1, 0, NULL));
}

static long
f_x32_getpid(void)
{
	return (syscall(X32_BIT | SYS_getpid));
}

static long
f_i386_getpid(void)
{
	long	 r;

	/* int 0x80 enters the kernel through its i386 entry point. */
	__asm__ volatile ("int $0x80"
	    : "=a" (r)
	    : "a" ((long)I386_GETPID)
	    : "memory", "r8", "r9", "r10", "r11");
	return (r);
}

/* Unconfined, where int 0x80 faults: die of it quietly, sanitizer or not. */
static long
f_i386_probe(void)
{
	signal(SIGSEGV, SIG_DFL);
	return (f_i386_getpid());
}

static long
f_accept(void)
{
	return (accept4(t_listen, NULL, NULL, SOCK_NONBLOCK));
}

static long
f_getsockopt(void)
{
	struct ucred	 uc;
	socklen_t	 len = sizeof(uc);

	return (getsockopt(t_sp[0], SOL_SOCKET, SO_PEERCRED, &uc, &len));
}

static long
f_shutdown(void)
{
	return (shutdown(t_sp[0], SHUT_RD));
}

struct forbidden {
	const char	*fb_name;
	long		(*fb_call)(void);
	int		 fb_san_errno;	/* sanitizer builds: refused */
};

static const struct forbidden forbidden_all[] = {
	{ "socket(AF_INET)",	f_socket_inet,		0 },
	{ "socket(AF_UNIX, SOCK_DGRAM)", f_socket_unix,	0 },
	{ "socketpair(AF_UNIX, SOCK_DGRAM)", f_socketpair_dgram, 0 },
	{ "socketpair(AF_UNIX, SOCK_SEQPACKET)", f_socketpair_seqpacket, 0 },
	{ "connect",		f_connect,		0 },
	{ "bind",		f_bind,			0 },
	{ "sendto with address", f_sendto_addr,		0 },
	{ "openat",		f_openat,		EACCES },
	{ "open",		f_open,			EACCES },
	{ "execve",		f_execve,		0 },
	{ "fork",		f_fork,			0 },
	{ "vfork",		f_vfork,		0 },
	{ "pthread_create",	f_thread,		0 },
	{ "ptrace",		f_ptrace,		0 },
	{ "kill parent",	f_kill_other,		0 },
	{ "tgkill parent",	f_tgkill_other,		0 },
	{ "mmap PROT_EXEC",	f_mmap_exec,		0 },
	{ "mprotect PROT_EXEC",	f_mprotect_exec,	0 },
	{ "setuid",		f_setuid,		0 },
	{ "chroot",		f_chroot,		0 },
	{ "mount",		f_mount,		0 },
	{ "unshare",		f_unshare,		0 },
	{ "prctl",		f_prctl,		0 },
	{ "fcntl F_SETOWN",	f_fcntl_setown,		0 },
	{ "ioctl TIOCSTI",	f_ioctl_tiocsti,	0 },
	{ "setrlimit",		f_setrlimit,		0 },
	{ "prlimit of another",	f_prlimit_other,	0 },
	{ "getdents64",		f_getdents,		0 },
	{ "memfd_create",	f_memfd,		0 },
	{ "bpf",		f_bpf,			0 },
	{ "io_uring_setup",	f_io_uring,		0 },
	{ "keyctl",		f_keyctl,		0 },
	{ "seccomp",		f_seccomp,		0 },
	{ "x32 getpid",		f_x32_getpid,		0 },
};

/* What the broker may do and the prober may not. */
static const struct forbidden forbidden_prober[] = {
	{ "accept4",		f_accept,		0 },
	{ "getsockopt",		f_getsockopt,		0 },
	{ "shutdown",		f_shutdown,		0 },
	{ "socketpair(AF_UNIX, SOCK_STREAM)", f_socketpair,	0 },
};

/*
 * What the egress proxy's "connect" promise still kills: every socket
 * but TCP and UDP of IPv4 and IPv6 with protocol 0.
 */
static long
f_socket_raw(void)
{
	return (socket(AF_INET, SOCK_RAW, IPPROTO_RAW));
}

static long
f_socket_raw6(void)
{
	return (socket(AF_INET6, SOCK_RAW, IPPROTO_ICMPV6));
}

static long
f_socket_ping(void)
{
	return (socket(AF_INET, SOCK_DGRAM, IPPROTO_ICMP));
}

static long
f_socket_sctp(void)
{
	return (socket(AF_INET, SOCK_SEQPACKET, 0));
}

static long
f_socket_packet(void)
{
	return (socket(AF_PACKET, SOCK_DGRAM, 0));
}

static long
f_socket_netlink(void)
{
	return (socket(AF_NETLINK, SOCK_RAW, 0));
}

static long
f_socket_unix_stream(void)
{
	return (socket(AF_UNIX, SOCK_STREAM, 0));
}

static long
f_socket_tcp_proto(void)
{
	return (socket(AF_INET, SOCK_STREAM, IPPROTO_SCTP));
}

static const struct forbidden forbidden_egress[] = {
	{ "socket(AF_INET, SOCK_RAW)",	f_socket_raw,		0 },
	{ "socket(AF_INET6, SOCK_RAW)",	f_socket_raw6,		0 },
	{ "socket(AF_INET, ICMP)",	f_socket_ping,		0 },
	{ "socket(SOCK_SEQPACKET)",	f_socket_sctp,		0 },
	{ "socket(AF_INET, SOCK_STREAM, SCTP)", f_socket_tcp_proto, 0 },
	{ "socket(AF_PACKET)",		f_socket_packet,	0 },
	{ "socket(AF_NETLINK)",		f_socket_netlink,	0 },
	{ "socket(AF_UNIX, SOCK_STREAM)", f_socket_unix_stream,	0 },
};

struct call_arg {
	const struct lockdown	*ca_ld;	/* NULL: unconfined */
	long			(*ca_call)(void);
};

static void
c_call(int out, void *arg)
{
	const struct call_arg	*ca = arg;
	long			 r;
	int			 e;

	if (ca->ca_ld != NULL)
		lockdown(ca->ca_ld);
	errno = 0;
	r = ca->ca_call();
	e = errno;
	putf(out, "%ld %d", r, e);
}

static void
t_fixtures(void)
{
	struct sockaddr_un	 sun;

	if (t_sp[0] == -1)
		ATF_REQUIRE(socketpair(AF_UNIX, SOCK_STREAM, 0, t_sp) == 0);
	if (t_listen != -1)
		return;
	/* Abstract: nothing on disk, and no path in the chroot needed. */
	ATF_REQUIRE((t_listen = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK,
	    0)) != -1);
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path + 1, sizeof(sun.sun_path) - 1,
	    "fenced-lockdown-test-%ld", (long)getpid());
	ATF_REQUIRE(bind(t_listen, (struct sockaddr *)&sun,
	    sizeof(sun)) == 0);
	ATF_REQUIRE(listen(t_listen, 8) == 0);
}

static void
check_forbidden(enum profile p, const struct forbidden *fb, size_t n)
{
	struct lockdown	 ld = t_profile(p);
	struct call_arg	 ca;
	struct kid	 k;
	size_t		 i;
	long		 r;
	int		 e;

	t_fixtures();
	for (i = 0; i < n; i++) {
		/* Unconfined, the call returns: a SIGSYS is the filter's. */
		ca.ca_ld = NULL;
		ca.ca_call = fb[i].fb_call;
		kid_run(&k, c_call, &ca);
		ATF_CHECK_MSG(kid_exited(&k, 0),
		    "%s unconfined: %s", fb[i].fb_name, kid_how(&k));

		ca.ca_ld = &ld;
		kid_run(&k, c_call, &ca);
#ifdef FENCED_SANITIZE
		if (fb[i].fb_san_errno != 0) {
			ATF_CHECK_MSG(kid_exited(&k, 0) &&
			    sscanf(k.k_out, "%ld %d", &r, &e) == 2 &&
			    r == -1 && e == fb[i].fb_san_errno,
			    "%s (%s): %s, returned \"%s\"", fb[i].fb_name,
			    ld.ld_title, kid_how(&k), k.k_out);
			continue;
		}
#endif
		r = 0;
		e = 0;
		(void)sscanf(k.k_out, "%ld %d", &r, &e);
		ATF_CHECK_MSG(kid_signalled(&k, SIGSYS),
		    "%s (%s): %s, returned %ld errno %d", fb[i].fb_name,
		    ld.ld_title, kid_how(&k), r, e);
	}
}

ATF_TC(broker_kills_forbidden);
ATF_TC_HEAD(broker_kills_forbidden, tc)
{
	atf_tc_set_md_var(tc, "descr", "a call outside the broker's "
	    "allowlist ends it with SIGSYS");
	atf_tc_set_md_var(tc, "require.user", "root");
	atf_tc_set_md_var(tc, "timeout", "120");
}
ATF_TC_BODY(broker_kills_forbidden, tc)
{
	t_user();
	check_forbidden(P_BROKER, forbidden_all,
	    sizeof(forbidden_all) / sizeof(forbidden_all[0]));
}

ATF_TC(prober_kills_forbidden);
ATF_TC_HEAD(prober_kills_forbidden, tc)
{
	atf_tc_set_md_var(tc, "descr", "a call outside the prober's "
	    "allowlist, socket calls included, ends it with SIGSYS");
	atf_tc_set_md_var(tc, "require.user", "root");
	atf_tc_set_md_var(tc, "timeout", "120");
}
ATF_TC_BODY(prober_kills_forbidden, tc)
{
	t_user();
	check_forbidden(P_PROBER, forbidden_all,
	    sizeof(forbidden_all) / sizeof(forbidden_all[0]));
	check_forbidden(P_PROBER, forbidden_prober,
	    sizeof(forbidden_prober) / sizeof(forbidden_prober[0]));
}

/*
 * Calls the broker makes.  The child collects the name of every one that
 * failed; an empty report and exit 0 pass.
 */
static volatile sig_atomic_t t_caught;

static void
t_catch(int sig)
{
	t_caught = sig;
}

#define ALLOWED(cond, name) do {				\
	if (!(cond))						\
		putf(out, "%s failed (errno %d); ", name, errno);	\
} while (0)

static void
c_allowed(int out, void *arg)
{
	const struct lockdown	*ld = arg;
	struct sockaddr_storage	 ss;
	struct sigaction	 sa;
	struct epoll_event	 ev;
	struct timespec		 ts = { 0, 1000000 };
	struct timeval		 tv;
	struct rlimit		 rl;
	struct utsname		 un;
	struct ucred		 uc;
	struct pollfd		 pfd;
	struct stat		 st;
	struct msghdr		 msg;
	struct cmsghdr		*cmsg;
	struct iovec		 iov;
	union {
		struct cmsghdr	 hdr;
		char		 buf[CMSG_SPACE(sizeof(int))];
	} cm;
	socklen_t		 len;
	gid_t			 groups[16];
	char			 buf[64], *big;
	void			*p;
	int			 pfds[2], fd, ep, n;

	lockdown(ld);

	ALLOWED((big = malloc(32 << 20)) != NULL, "malloc");
	if (big != NULL) {
		memset(big, 1, 32 << 20);
		free(big);
	}
	p = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ALLOWED(p != MAP_FAILED, "mmap");
	ALLOWED(mprotect(p, 4096, PROT_READ) == 0, "mprotect");
	ALLOWED(madvise(p, 8192, MADV_DONTNEED) == 0, "madvise");
	ALLOWED(munmap(p, 8192) == 0, "munmap");
	ALLOWED(getrandom(buf, 16, 0) == 16, "getrandom");
	ALLOWED(arc4random() != 0 || arc4random() != 0, "arc4random");
	ALLOWED(syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts) == 0,
	    "clock_gettime");
	ALLOWED(syscall(SYS_gettimeofday, &tv, NULL) == 0, "gettimeofday");
	ts.tv_sec = 0;
	ts.tv_nsec = 1000000;
	ALLOWED(nanosleep(&ts, NULL) == 0, "nanosleep");
	ALLOWED(sched_yield() == 0, "sched_yield");
	ALLOWED(getpid() > 0 && getppid() > 0 && gettid() > 0, "getpid");
	ALLOWED(getuid() == t_uid && geteuid() == t_uid && getgid() == t_gid &&
	    getegid() == t_gid, "getuid");
	ALLOWED(getgroups(16, groups) == 1, "getgroups");
	ALLOWED(uname(&un) == 0, "uname");
	ALLOWED(getrlimit(RLIMIT_NOFILE, &rl) == 0, "getrlimit");

	ALLOWED(pipe2(pfds, O_CLOEXEC) == 0, "pipe2");
	ALLOWED(write(pfds[1], "ab", 2) == 2, "write");
	ALLOWED(ioctl(pfds[0], FIONREAD, &n) == 0 && n == 2, "ioctl FIONREAD");
	ALLOWED(read(pfds[0], buf, 2) == 2, "read");
	ALLOWED(isatty(pfds[0]) == 0 && errno == ENOTTY, "isatty");
	ALLOWED(fstat(pfds[0], &st) == 0, "fstat");
	ALLOWED((fd = dup(pfds[0])) != -1, "dup");
	ALLOWED(dup3(pfds[0], fd, O_CLOEXEC) == fd, "dup3");
	ALLOWED(fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) == 0,
	    "fcntl F_SETFL");
	ALLOWED(fcntl(fd, F_SETFD, FD_CLOEXEC) == 0, "fcntl F_SETFD");
	ALLOWED(close(fd) == 0, "close");

	ALLOWED((ep = epoll_create1(EPOLL_CLOEXEC)) != -1, "epoll_create1");
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	ALLOWED(epoll_ctl(ep, EPOLL_CTL_ADD, pfds[0], &ev) == 0, "epoll_ctl");
	ALLOWED(epoll_wait(ep, &ev, 1, 0) == 0, "epoll_wait");
	pfd.fd = pfds[0];
	pfd.events = POLLIN;
	ALLOWED(poll(&pfd, 1, 0) == 0, "poll");

	/* Signals to ourselves, as raise() and abort() send them. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = t_catch;
	ALLOWED(sigaction(SIGUSR1, &sa, NULL) == 0, "sigaction");
	ALLOWED(raise(SIGUSR1) == 0 && t_caught == SIGUSR1, "raise");
	ALLOWED(kill(getpid(), 0) == 0, "kill self");

	/* The socket calls of "unix", "sendfd" and "recvfd". */
	ALLOWED(send(t_sp[0], "x", 1, 0) == 1, "send");
	ALLOWED(recv(t_sp[1], buf, 1, 0) == 1, "recv");
	len = sizeof(uc);
	ALLOWED(getsockopt(t_sp[0], SOL_SOCKET, SO_PEERCRED, &uc,
	    &len) == 0, "SO_PEERCRED");
	len = sizeof(groups);
	ALLOWED(getsockopt(t_sp[0], SOL_SOCKET, SO_PEERGROUPS, groups,
	    &len) == 0, "SO_PEERGROUPS");
	n = 65536;
	ALLOWED(setsockopt(t_sp[0], SOL_SOCKET, SO_SNDBUF, &n,
	    sizeof(n)) == 0, "setsockopt");
	len = sizeof(ss);
	ALLOWED(getsockname(t_sp[0], (struct sockaddr *)&ss, &len) == 0,
	    "getsockname");
	len = sizeof(ss);
	ALLOWED(getpeername(t_sp[0], (struct sockaddr *)&ss, &len) == 0,
	    "getpeername");
	ALLOWED(accept4(t_listen, NULL, NULL, SOCK_CLOEXEC) == -1 &&
	    errno == EAGAIN, "accept4");
	ALLOWED(listen(t_listen, 16) == 0, "listen");
	ALLOWED(f_socketpair() == 0, "socketpair(AF_UNIX, SOCK_STREAM)");

	memset(&msg, 0, sizeof(msg));
	memset(&cm, 0, sizeof(cm));
	iov.iov_base = "f";
	iov.iov_len = 1;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cm.buf;
	msg.msg_controllen = sizeof(cm.buf);
	cmsg = CMSG_FIRSTHDR(&msg);
	cmsg->cmsg_level = SOL_SOCKET;
	cmsg->cmsg_type = SCM_RIGHTS;
	cmsg->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cmsg), &pfds[1], sizeof(int));
	ALLOWED(sendmsg(t_sp[0], &msg, 0) == 1, "sendmsg SCM_RIGHTS");
	memset(&cm, 0, sizeof(cm));
	iov.iov_base = buf;
	msg.msg_controllen = sizeof(cm.buf);
	ALLOWED(recvmsg(t_sp[1], &msg, MSG_CMSG_CLOEXEC) == 1 &&
	    (cmsg = CMSG_FIRSTHDR(&msg)) != NULL &&
	    cmsg->cmsg_type == SCM_RIGHTS, "recvmsg SCM_RIGHTS");
	ALLOWED(shutdown(t_sp[1], SHUT_WR) == 0, "shutdown");
}

ATF_TC(egress_kills_forbidden);
ATF_TC_HEAD(egress_kills_forbidden, tc)
{
	atf_tc_set_md_var(tc, "descr", "the egress proxy's allowlist: "
	    "every call the broker may not make but its own TCP and UDP "
	    "sockets and connect, and every other kind of socket (raw, "
	    "ICMP, packet, netlink, unix), ends it with SIGSYS");
	atf_tc_set_md_var(tc, "require.user", "root");
	atf_tc_set_md_var(tc, "timeout", "180");
}
ATF_TC_BODY(egress_kills_forbidden, tc)
{
	struct forbidden	 fb[sizeof(forbidden_all) /
				    sizeof(forbidden_all[0])];
	size_t			 i, n = 0;

	t_user();
	for (i = 0; i < sizeof(forbidden_all) / sizeof(forbidden_all[0]);
	    i++)
		if (strcmp(forbidden_all[i].fb_name, "socket(AF_INET)") != 0 &&
		    strcmp(forbidden_all[i].fb_name, "connect") != 0)
			fb[n++] = forbidden_all[i];
	ATF_REQUIRE_EQ(n + 2, sizeof(forbidden_all) / sizeof(forbidden_all[0]));
	check_forbidden(P_EGRESS, fb, n);
	check_forbidden(P_EGRESS, forbidden_egress,
	    sizeof(forbidden_egress) / sizeof(forbidden_egress[0]));
	/* And without "connect" the same sockets are the broker's no more. */
	check_forbidden(P_BROKER, forbidden_egress,
	    sizeof(forbidden_egress) / sizeof(forbidden_egress[0]));
}

/*
 * What the proxy does: TCP and UDP sockets of its own, non-blocking,
 * connected to a listener the test opened on loopback before the
 * filter, their error read, bytes sent and received.
 */
static void
c_egress_allowed(int out, void *arg)
{
	const struct lockdown	*ld = arg;
	struct sockaddr_in	 sin;
	struct sockaddr_in6	 sin6;
	struct sockaddr_storage	 me;
	socklen_t		 len = sizeof(sin);
	struct pollfd		 pfd;
	int			 lfd, ufd, s, e = 0;
	char			 c;

	/* Before the filter: a TCP and a UDP listener on 127.0.0.1. */
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((lfd = socket(AF_INET, SOCK_STREAM, 0)) == -1 ||
	    bind(lfd, (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
	    listen(lfd, 4) == -1 ||
	    getsockname(lfd, (struct sockaddr *)&sin, &len) == -1) {
		putf(out, "tcp listener: errno %d", errno);
		return;
	}
	lockdown(ld);
	s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	ALLOWED(s != -1, "socket(AF_INET, SOCK_STREAM)");
	ALLOWED(connect(s, (struct sockaddr *)&sin, sizeof(sin)) == 0 ||
	    errno == EINPROGRESS, "connect tcp");
	pfd.fd = s;
	pfd.events = POLLOUT;
	ALLOWED(poll(&pfd, 1, 5000) == 1, "poll connect");
	len = sizeof(e);
	ALLOWED(getsockopt(s, SOL_SOCKET, SO_ERROR, &e, &len) == 0 && e == 0,
	    "SO_ERROR");
	ALLOWED(send(s, "x", 1, 0) == 1, "send tcp");
	close(s);

	ufd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	ALLOWED(ufd != -1, "socket(AF_INET, SOCK_DGRAM)");
	ALLOWED(connect(ufd, (struct sockaddr *)&sin, sizeof(sin)) == 0,
	    "connect udp");
	/* Its end's address: the test of the host's own addresses. */
	len = sizeof(me);
	ALLOWED(getsockname(ufd, (struct sockaddr *)&me, &len) == 0 &&
	    me.ss_family == AF_INET, "getsockname udp");
	ALLOWED(send(ufd, "q", 1, 0) == 1, "send udp");
	ALLOWED(recv(ufd, &c, 1, MSG_DONTWAIT) == -1, "recv udp");
	close(ufd);

	/* IPv6 sockets may be made even where no address is configured. */
	s = socket(AF_INET6, SOCK_STREAM | SOCK_NONBLOCK, 0);
	ALLOWED(s != -1 || errno == EAFNOSUPPORT, "socket(AF_INET6)");
	if (s != -1) {
		memset(&sin6, 0, sizeof(sin6));
		sin6.sin6_family = AF_INET6;
		sin6.sin6_addr = in6addr_loopback;
		sin6.sin6_port = htons(1);
		(void)connect(s, (struct sockaddr *)&sin6, sizeof(sin6));
		close(s);
	}
	close(lfd);
}

ATF_TC(egress_allows_its_calls);
ATF_TC_HEAD(egress_allows_its_calls, tc)
{
	atf_tc_set_md_var(tc, "descr", "under the egress proxy's filter "
	    "its own TCP and UDP sockets of IPv4 and IPv6 are made, "
	    "connected and used");
	atf_tc_set_md_var(tc, "require.user", "root");
}
ATF_TC_BODY(egress_allows_its_calls, tc)
{
	struct lockdown	 ld;
	struct kid	 k;

	t_user();
	ld = t_profile(P_EGRESS);
	kid_run(&k, c_egress_allowed, &ld);
	ATF_CHECK_MSG(kid_exited(&k, 0), "child: %s", kid_how(&k));
	ATF_CHECK_MSG(k.k_len == 0, "%s", k.k_out);
}

ATF_TC(broker_allows_its_calls);
ATF_TC_HEAD(broker_allows_its_calls, tc)
{
	atf_tc_set_md_var(tc, "descr", "what the broker does (memory, "
	    "time, pipes, epoll, own signals, accept, peer credentials, "
	    "descriptor passing) still works under its filter");
	atf_tc_set_md_var(tc, "require.user", "root");
}
ATF_TC_BODY(broker_allows_its_calls, tc)
{
	struct lockdown	 ld;
	struct kid	 k;

	t_user();
	t_fixtures();
	ld = t_profile(P_BROKER);
	kid_run(&k, c_allowed, &ld);
	ATF_CHECK_MSG(kid_exited(&k, 0), "child: %s", kid_how(&k));
	ATF_CHECK_MSG(k.k_len == 0, "%s", k.k_out);
}

/*
 * Foreign system call ABIs: x32 numbers (bit 30 set) and i386 through
 * int 0x80.  Killed by every filter, the fencer's deny list included.
 */
static void
check_foreign(long (*call)(void), const char *abi)
{
	static const enum profile profiles[] = { P_BROKER, P_PROBER, P_FENCER };
	struct lockdown	 ld;
	struct call_arg	 ca;
	struct kid	 k;
	size_t		 i;

	for (i = 0; i < sizeof(profiles) / sizeof(profiles[0]); i++) {
		ld = t_profile(profiles[i]);
		ca.ca_ld = &ld;
		ca.ca_call = call;
		kid_run(&k, c_call, &ca);
		ATF_CHECK_MSG(kid_signalled(&k, SIGSYS), "%s (%s): %s, "
		    "returned \"%s\"", abi, ld.ld_title, kid_how(&k), k.k_out);
	}
}

ATF_TC(x32_killed);
ATF_TC_HEAD(x32_killed, tc)
{
	atf_tc_set_md_var(tc, "descr", "x32 system calls are killed under "
	    "the broker's, the prober's and the fencer's filters");
	atf_tc_set_md_var(tc, "require.user", "root");
}
ATF_TC_BODY(x32_killed, tc)
{
	struct call_arg	 ca;
	struct kid	 k;

	t_user();
	/* Unconfined: ENOSYS, or the pid where the kernel has x32. */
	ca.ca_ld = NULL;
	ca.ca_call = f_x32_getpid;
	kid_run(&k, c_call, &ca);
	ATF_REQUIRE_MSG(kid_exited(&k, 0), "unconfined: %s", kid_how(&k));
	check_foreign(f_x32_getpid, "x32");
}

ATF_TC(i386_killed);
ATF_TC_HEAD(i386_killed, tc)
{
	atf_tc_set_md_var(tc, "descr", "i386 system calls (int 0x80) are "
	    "killed under the broker's, the prober's and the fencer's "
	    "filters");
	atf_tc_set_md_var(tc, "require.user", "root");
}
ATF_TC_BODY(i386_killed, tc)
{
	struct call_arg	 ca;
	struct kid	 k;
	long		 r = 0;
	int		 e;

	t_user();
	ca.ca_ld = NULL;
	ca.ca_call = f_i386_probe;
	kid_run(&k, c_call, &ca);
	if (!kid_exited(&k, 0) ||
	    sscanf(k.k_out, "%ld %d", &r, &e) != 2 || r <= 0)
		atf_tc_skip("kernel feature IA32 emulation: int 0x80 gave "
		    "%s, returned %ld", kid_how(&k), r);
	check_foreign(f_i386_getpid, "i386");
}

/*
 * The filter as the kernel holds it, read back with
 * PTRACE_SECCOMP_GET_FILTER and run here on made-up system calls: this
 * judges the i386 ABI even where the kernel cannot enter it (no IA32
 * emulation), and the argument checks without making the calls.
 */
#define BPF_BAD	0xdeadbeefU

static uint32_t
bpf_run(const struct sock_filter *f, size_t n, const struct seccomp_data *sd)
{
	uint32_t	 a = 0, x = 0, mem[BPF_MEMWORDS], v;
	size_t		 pc;

	memset(mem, 0, sizeof(mem));
	for (pc = 0; pc < n; pc++) {
		const struct sock_filter *i = &f[pc];
		uint32_t	 k = i->k;

		if (BPF_CLASS(i->code) == BPF_JMP) {
			if (BPF_OP(i->code) == BPF_JA) {
				pc += k;
				continue;
			}
			v = BPF_SRC(i->code) == BPF_X ? x : k;
			switch (BPF_OP(i->code)) {
			case BPF_JEQ:
				pc += a == v ? i->jt : i->jf;
				break;
			case BPF_JGT:
				pc += a > v ? i->jt : i->jf;
				break;
			case BPF_JGE:
				pc += a >= v ? i->jt : i->jf;
				break;
			case BPF_JSET:
				pc += (a & v) ? i->jt : i->jf;
				break;
			default:
				return (BPF_BAD);
			}
			continue;
		}
		if (BPF_CLASS(i->code) == BPF_ALU) {
			v = BPF_SRC(i->code) == BPF_X ? x : k;
			switch (BPF_OP(i->code)) {
			case BPF_ADD: a += v; break;
			case BPF_SUB: a -= v; break;
			case BPF_MUL: a *= v; break;
			case BPF_DIV:
				if (v == 0)
					return (BPF_BAD);
				a /= v;
				break;
			case BPF_OR: a |= v; break;
			case BPF_AND: a &= v; break;
			case BPF_LSH: a <<= v; break;
			case BPF_RSH: a >>= v; break;
			case BPF_NEG: a = -a; break;
			default: return (BPF_BAD);
			}
			continue;
		}
		switch (i->code) {
		case BPF_LD | BPF_W | BPF_ABS:
			if (k % 4 != 0 || k + 4 > sizeof(*sd))
				return (BPF_BAD);
			memcpy(&a, (const char *)sd + k, 4);
			break;
		case BPF_LD | BPF_W | BPF_LEN:
			a = sizeof(*sd);
			break;
		case BPF_LDX | BPF_W | BPF_LEN:
			x = sizeof(*sd);
			break;
		case BPF_LD | BPF_IMM:
			a = k;
			break;
		case BPF_LDX | BPF_IMM:
			x = k;
			break;
		case BPF_LD | BPF_MEM:
		case BPF_LDX | BPF_MEM:
		case BPF_ST:
		case BPF_STX:
			if (k >= BPF_MEMWORDS)
				return (BPF_BAD);
			if (i->code == (BPF_LD | BPF_MEM))
				a = mem[k];
			else if (i->code == (BPF_LDX | BPF_MEM))
				x = mem[k];
			else
				mem[k] = i->code == BPF_ST ? a : x;
			break;
		case BPF_MISC | BPF_TAX:
			x = a;
			break;
		case BPF_MISC | BPF_TXA:
			a = x;
			break;
		case BPF_RET | BPF_K:
			return (k);
		case BPF_RET | BPF_A:
			return (a);
		default:
			return (BPF_BAD);
		}
	}
	return (BPF_BAD);
}

struct verdict {
	const char	*v_what;
	uint32_t	 v_arch;
	int		 v_nr;
	uint64_t	 v_arg[6];
	uint32_t	 v_broker;	/* also the prober's */
	uint32_t	 v_fencer;
};

#define V_KILL	SECCOMP_RET_KILL_PROCESS
#define V_ALLOW	SECCOMP_RET_ALLOW
#define V_EPERM	(SECCOMP_RET_ERRNO | EPERM)
#define A64	AUDIT_ARCH_X86_64
#define A32	AUDIT_ARCH_I386

static const struct verdict verdicts[] = {
	{ "getpid", A64, SYS_getpid, { 0 }, V_ALLOW, V_ALLOW },
	{ "socket", A64, SYS_socket, { AF_INET }, V_KILL, V_ALLOW },
	{ "socket as syslog(3)", A64, SYS_socket,
	    { AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC }, SECCOMP_RET_ERRNO | EACCES,
	    V_ALLOW },
	{ "socket unix stream", A64, SYS_socket,
	    { AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC }, V_KILL, V_ALLOW },
	{ "reboot", A64, SYS_reboot, { 0 }, V_KILL, V_EPERM },
	{ "mmap rw", A64, SYS_mmap, { 0, 4096, PROT_READ | PROT_WRITE },
	    V_ALLOW, V_ALLOW },
	{ "mmap exec", A64, SYS_mmap, { 0, 4096, PROT_READ | PROT_EXEC },
	    V_KILL, V_ALLOW },
	{ "tgkill self", A64, SYS_tgkill, { 0 /* pid */, 0, SIGABRT },
	    V_ALLOW, V_ALLOW },
	{ "tgkill other", A64, SYS_tgkill, { 1, 1, SIGKILL }, V_KILL,
	    V_ALLOW },
	{ "x32 getpid", A64, X32_BIT | SYS_getpid, { 0 }, V_KILL, V_KILL },
	{ "x32 reboot", A64, X32_BIT | SYS_reboot, { 0 }, V_KILL, V_KILL },
	{ "i386 getpid", A32, I386_GETPID, { 0 }, V_KILL, V_KILL },
	{ "i386 read", A32, 3, { 0 }, V_KILL, V_KILL },
	{ "i386 reboot", A32, 88, { 0 }, V_KILL, V_KILL },
};

static void
check_verdicts(enum profile p)
{
	struct lockdown		 ld = t_profile(p);
	struct sock_filter	 prog[4096];
	struct seccomp_data	 sd;
	struct kid		 k;
	uint32_t		 got, want;
	size_t			 i;
	long			 n;
	int			 st;

	kid_start(&k, c_status, &ld);
	ATF_REQUIRE(ptrace(PTRACE_SEIZE, k.k_pid, NULL, NULL) == 0);
	ATF_REQUIRE(ptrace(PTRACE_INTERRUPT, k.k_pid, NULL, NULL) == 0);
	ATF_REQUIRE(waitpid(k.k_pid, &st, 0) == k.k_pid && WIFSTOPPED(st));
	n = ptrace(PTRACE_SECCOMP_GET_FILTER, k.k_pid, 0, NULL);
	if (n == -1 && (errno == EINVAL || errno == EIO))
		atf_tc_skip("kernel feature PTRACE_SECCOMP_GET_FILTER: %s",
		    strerror(errno));
	ATF_REQUIRE_MSG(n > 0 && (size_t)n <= sizeof(prog) / sizeof(prog[0]),
	    "filter length %ld: %s", n, strerror(errno));
	ATF_REQUIRE(ptrace(PTRACE_SECCOMP_GET_FILTER, k.k_pid, 0, prog) == n);
	/* One filter, ours: no other below it. */
	ATF_CHECK(ptrace(PTRACE_SECCOMP_GET_FILTER, k.k_pid, 1, NULL) == -1);
	ATF_REQUIRE(ptrace(PTRACE_DETACH, k.k_pid, NULL, NULL) == 0);
	kid_finish(&k);
	ATF_REQUIRE_MSG(kid_exited(&k, 0), "child: %s", kid_how(&k));

	for (i = 0; i < sizeof(verdicts) / sizeof(verdicts[0]); i++) {
		memset(&sd, 0, sizeof(sd));
		sd.nr = verdicts[i].v_nr;
		sd.arch = verdicts[i].v_arch;
		memcpy(sd.args, verdicts[i].v_arg, sizeof(sd.args));
		if (strcmp(verdicts[i].v_what, "tgkill self") == 0)
			sd.args[0] = sd.args[1] = k.k_pid;
		got = bpf_run(prog, n, &sd);
		want = p == P_FENCER ? verdicts[i].v_fencer :
		    verdicts[i].v_broker;
		ATF_CHECK_MSG(got == want, "%s (%s): %#x, want %#x",
		    verdicts[i].v_what, ld.ld_title, got, want);
	}
}

ATF_TC(loaded_filter_verdicts);
ATF_TC_HEAD(loaded_filter_verdicts, tc)
{
	atf_tc_set_md_var(tc, "descr", "the filters the kernel holds give "
	    "the documented verdict for native, x32 and i386 calls and for "
	    "argument checks");
	atf_tc_set_md_var(tc, "require.user", "root");
}
ATF_TC_BODY(loaded_filter_verdicts, tc)
{
	char	 buf[4096], val[16];
	ssize_t	 n;
	int	 fd;

	t_user();
	/* A tracer under seccomp may not read filters, nor judge one alone. */
	ATF_REQUIRE((fd = open("/proc/self/status", O_RDONLY)) != -1);
	ATF_REQUIRE((n = read(fd, buf, sizeof(buf) - 1)) > 0);
	close(fd);
	buf[n] = '\0';
	if (strcmp(status_field(buf, "Seccomp", val, sizeof(val)), "0") != 0)
		atf_tc_skip("the test itself runs under a seccomp filter");
	check_verdicts(P_BROKER);
	check_verdicts(P_PROBER);
	check_verdicts(P_FENCER);
}

/*
 * The fencer's deny list.  The child keeps every capability root has and
 * loads only the filter, so an EPERM cannot come from a missing
 * capability.  Each call is harmless should the filter let it through:
 * bad magic, missing paths, invalid descriptors, read-only queries.
 */
/* An unknown flag: EINVAL before anything is loaded or unloaded. */
#define KEXEC_BAD_FLAG	0x80000000UL

static long
d_kexec_load(void)
{
	return (syscall(SYS_kexec_load, 0, 0, NULL, KEXEC_BAD_FLAG));
}

static long
d_kexec_file_load(void)
{
	return (syscall(SYS_kexec_file_load, -1, -1, 0, NULL,
	    KEXEC_BAD_FLAG));
}

static long
d_init_module(void)
{
	return (syscall(SYS_init_module, NULL, 0, ""));
}

static long
d_finit_module(void)
{
	return (syscall(SYS_finit_module, -1, "", 0));
}

static long
d_delete_module(void)
{
	return (syscall(SYS_delete_module, "fenced_no_such_module",
	    O_NONBLOCK));
}

static long
d_reboot(void)
{
	/* Wrong magic: refused with EINVAL before anything happens. */
	return (syscall(SYS_reboot, 0, 0, 0, NULL));
}

static long
d_swapon(void)
{
	return (syscall(SYS_swapon, "/nonexistent/fenced-swap", 0));
}

static long
d_swapoff(void)
{
	return (syscall(SYS_swapoff, "/nonexistent/fenced-swap"));
}

static long
d_settimeofday(void)
{
	struct timeval	 tv = { 0, 2000000 };	/* invalid: EINVAL */

	return (syscall(SYS_settimeofday, &tv, NULL));
}

static long
d_clock_settime(void)
{
	struct timespec	 ts = { 0, 0 };	/* not settable: EINVAL */

	return (syscall(SYS_clock_settime, CLOCK_MONOTONIC, &ts));
}

static long
d_adjtimex(void)
{
	struct timex	 tx;

	memset(&tx, 0, sizeof(tx));		/* modes 0: only reads */
	return (syscall(SYS_adjtimex, &tx));
}

static long
d_clock_adjtime(void)
{
	struct timex	 tx;

	memset(&tx, 0, sizeof(tx));
	return (syscall(SYS_clock_adjtime, CLOCK_REALTIME, &tx));
}

static long
d_acct(void)
{
	return (syscall(SYS_acct, "/nonexistent/fenced-acct"));
}

static long
d_iopl(void)
{
	return (syscall(SYS_iopl, 0));
}

static long
d_ioperm(void)
{
	return (syscall(SYS_ioperm, 0x80, 1, 0));
}

static long
d_syslog(void)
{
	return (syscall(SYS_syslog, 10, NULL, 0));	/* buffer size */
}

/* QCMD(Q_SYNC, USRQUOTA), without its signed shift overflow. */
#define QSYNC_USR	((int)(((unsigned)Q_SYNC << SUBCMDSHIFT) | USRQUOTA))

static long
d_quotactl(void)
{
	return (syscall(SYS_quotactl, QSYNC_USR,
	    "/nonexistent/fenced-dev", 0, NULL));
}

static long
d_quotactl_fd(void)
{
	return (syscall(SYS_quotactl_fd, -1, QSYNC_USR, 0,
	    NULL));
}

static long
d_vhangup(void)
{
	/* Without a controlling terminal there is nothing to hang up. */
	if (setsid() == -1 && errno != EPERM)
		return (-2);
	return (syscall(SYS_vhangup));
}

static long
d_open_by_handle_at(void)
{
	return (syscall(SYS_open_by_handle_at, -1, NULL, 0));
}

static long
d_lookup_dcookie(void)
{
	return (syscall(SYS_lookup_dcookie, 0, NULL, 0));
}

static long
d_nfsservctl(void)
{
	return (syscall(SYS_nfsservctl, 0, NULL, NULL));
}

static long
d_uselib(void)
{
	return (syscall(SYS_uselib, "/nonexistent/fenced-lib"));
}

static long
d_sysctl(void)
{
	return (syscall(SYS__sysctl, NULL));
}

struct denied {
	const char	*dn_name;
	long		(*dn_call)(void);
	int		 dn_distinct;	/* unconfined: never EPERM */
};

static const struct denied denied[] = {
	/* Kernel lockdown may refuse these with EPERM on its own. */
	{ "kexec_load",		d_kexec_load,		0 },
	{ "kexec_file_load",	d_kexec_file_load,	0 },
	{ "init_module",	d_init_module,		0 },
	{ "finit_module",	d_finit_module,		1 },
	{ "delete_module",	d_delete_module,	1 },
	{ "reboot",		d_reboot,		1 },
	{ "swapon",		d_swapon,		1 },
	{ "swapoff",		d_swapoff,		1 },
	{ "settimeofday",	d_settimeofday,		1 },
	{ "clock_settime",	d_clock_settime,	1 },
	{ "adjtimex",		d_adjtimex,		1 },
	{ "clock_adjtime",	d_clock_adjtime,	1 },
	{ "acct",		d_acct,			1 },
	{ "iopl",		d_iopl,			0 },
	{ "ioperm",		d_ioperm,		0 },
	{ "syslog",		d_syslog,		1 },
	{ "quotactl",		d_quotactl,		1 },
	{ "quotactl_fd",	d_quotactl_fd,		1 },
	{ "vhangup",		d_vhangup,		1 },
	{ "open_by_handle_at",	d_open_by_handle_at,	1 },
	{ "lookup_dcookie",	d_lookup_dcookie,	1 },
	{ "nfsservctl",		d_nfsservctl,		1 },
	{ "uselib",		d_uselib,		1 },
	{ "_sysctl",		d_sysctl,		1 },
};
#define NDENIED	(sizeof(denied) / sizeof(denied[0]))

struct denied_result {
	long	 dr_rv;
	int	 dr_errno;
};

static void
c_denied(int out, void *arg)
{
	struct denied_result	 res[NDENIED];
	size_t			 i;

	if (arg != NULL && lockdown_filter_load(LOCKDOWN_DENY, NULL) == -1)
		_exit(92);
	for (i = 0; i < NDENIED; i++) {
		errno = 0;
		res[i].dr_rv = denied[i].dn_call();
		res[i].dr_errno = errno;
	}
	put(out, res, sizeof(res));
}

ATF_TC(fencer_filter_denies);
ATF_TC_HEAD(fencer_filter_denies, tc)
{
	atf_tc_set_md_var(tc, "descr", "the fencer's filter refuses "
	    "kexec, modules, reboot, swap, clock setting, ... with EPERM, "
	    "even to a process with every capability");
	atf_tc_set_md_var(tc, "require.user", "root");
}
ATF_TC_BODY(fencer_filter_denies, tc)
{
	struct denied_result	 free_res[NDENIED], res[NDENIED];
	struct kid		 k;
	size_t			 i;

	t_user();
	kid_run(&k, c_denied, NULL);
	ATF_REQUIRE_MSG(kid_exited(&k, 0) && k.k_len == sizeof(free_res),
	    "unconfined: %s", kid_how(&k));
	memcpy(free_res, k.k_out, sizeof(free_res));
	kid_run(&k, c_denied, &k);
	ATF_REQUIRE_MSG(kid_exited(&k, 0) && k.k_len == sizeof(res),
	    "confined: %s", kid_how(&k));
	memcpy(res, k.k_out, sizeof(res));

	for (i = 0; i < NDENIED; i++) {
		ATF_CHECK_MSG(res[i].dr_rv == -1 && res[i].dr_errno == EPERM,
		    "%s: returned %ld errno %d, want EPERM", denied[i].dn_name,
		    res[i].dr_rv, res[i].dr_errno);
		if (denied[i].dn_distinct)
			ATF_CHECK_MSG(free_res[i].dr_errno != EPERM,
			    "%s: EPERM even unconfined; the test cannot tell",
			    denied[i].dn_name);
	}
}

/*
 * What the fencer must still do under its own lockdown, each step as the
 * fence builder will: processes, exec, signals and ptrace across uids,
 * every namespace, mounts and pivot_root, lo up, files for other uids.
 */
#define NEWROOT		"newroot"

static int
fs_exec_inherits(void)
{
	char	*argv[] = { "sh", "-c",
	    "grep -q '^Seccomp:[[:space:]]*2' /proc/self/status && "
	    "grep -q '^NoNewPrivs:[[:space:]]*1' /proc/self/status", NULL };
	char	*envp[] = { "PATH=/usr/bin:/bin", NULL };
	pid_t	 pid;
	int	 st;

	if ((pid = fork()) == -1)
		return (-1);
	if (pid == 0) {
		execve("/bin/sh", argv, envp);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) != pid)
		return (-1);
	return (WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1);
}

/*
 * A child, traced (ptrace stays allowed: runsc needs it), or of another
 * uid and signalled (CAP_KILL).  It dies of SIGALRM should our SIGKILL
 * not reach it.
 */
static int
fs_child(int other_uid, int trace)
{
	pid_t	 pid;
	int	 p[2], st, r;
	char	 c;

	if (pipe(p) == -1 || (pid = fork()) == -1)
		return (-1);
	if (pid == 0) {
		alarm(10);
		if (other_uid && (setresgid(65534, 65534, 65534) == -1 ||
		    setresuid(65534, 65534, 65534) == -1))
			_exit(1);
		if (write(p[1], "u", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(p[1]);
	r = read(p[0], &c, 1) == 1 ? 0 : -1;
	close(p[0]);
	if (r == 0 && trace && ptrace(PTRACE_SEIZE, pid, NULL, NULL) == -1)
		r = -1;
	if (kill(pid, SIGKILL) == -1)
		r = -1;
	if (waitpid(pid, &st, 0) != pid ||
	    !(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL))
		r = -1;
	return (r);
}

static int
fs_lo_up(void)
{
	struct ifreq	 ifr;
	int		 s, r = -1;

	if ((s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) == -1)
		return (-1);
	memset(&ifr, 0, sizeof(ifr));
	strlcpy(ifr.ifr_name, "lo", sizeof(ifr.ifr_name));
	if (ioctl(s, SIOCGIFFLAGS, &ifr) == 0) {
		ifr.ifr_flags |= IFF_UP;
		r = ioctl(s, SIOCSIFFLAGS, &ifr);
	}
	close(s);
	return (r);
}

static int
fs_pivot(void)
{
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == -1 ||
	    mount("tmpfs", NEWROOT, "tmpfs", 0, "size=1m,mode=0755") == -1 ||
	    mkdir(NEWROOT "/old", 0700) == -1 ||
	    syscall(SYS_pivot_root, NEWROOT, NEWROOT "/old") == -1 ||
	    chdir("/") == -1 ||
	    umount2("/old", MNT_DETACH) == -1)
		return (-1);
	return (0);
}

/* In the new tmpfs root: a home for another uid, as root makes it. */
static int
fs_files(void)
{
	int	 fd;

	if (mkdir("/home", 0700) == -1 || chown("/home", 65534, 65534) == -1)
		return (-1);
	/* CAP_DAC_OVERRIDE: into a 0700 directory root does not own. */
	if ((fd = open("/home/file", O_CREAT | O_WRONLY | O_CLOEXEC,
	    0600)) == -1)
		return (-1);
	/* CAP_CHOWN, then CAP_FOWNER for a mode on a file not ours. */
	if (fchown(fd, 65534, 65534) == -1 || fchmod(fd, 0640) == -1) {
		close(fd);
		return (-1);
	}
	return (close(fd));
}

static const char *const fencer_steps[] = {
	"fork, execve, filter inherited",
	"kill a process of another uid",
	"ptrace a child",
	"unshare(CLONE_NEWUTS), sethostname",
	"unshare(CLONE_NEWIPC|CLONE_NEWCGROUP|CLONE_NEWPID)",
	"unshare(CLONE_NEWNET), lo up",
	"unshare(CLONE_NEWNS)",
	"mount tmpfs, pivot_root, umount2",
	"files for another uid",
};
#define NFENCER_STEPS	(sizeof(fencer_steps) / sizeof(fencer_steps[0]))

static void
c_fencer(int out, void *arg)
{
	const struct lockdown	*ld = arg;
	int			 res[NFENCER_STEPS][2];
	size_t			 i = 0;

	lockdown(ld);
#define STEP(x) do {						\
	errno = 0;						\
	res[i][0] = (x);					\
	res[i][1] = errno;					\
	i++;							\
} while (0)
	STEP(fs_exec_inherits());
	STEP(fs_child(1, 0));
	STEP(fs_child(0, 1));
	STEP(unshare(CLONE_NEWUTS) == 0 ? sethostname("fence", 5) : -1);
	STEP(unshare(CLONE_NEWIPC | CLONE_NEWCGROUP | CLONE_NEWPID));
	STEP(unshare(CLONE_NEWNET) == 0 ? fs_lo_up() : -1);
	STEP(unshare(CLONE_NEWNS));
	STEP(fs_pivot());
	STEP(fs_files());
#undef STEP
	put(out, res, sizeof(res));
}

ATF_TC(fencer_can_build);
ATF_TC_HEAD(fencer_can_build, tc)
{
	atf_tc_set_md_var(tc, "descr", "locked down, the fencer can still "
	    "do what building a fence takes: namespaces, mounts, "
	    "pivot_root, lo up, exec, signals and ptrace across uids");
	atf_tc_set_md_var(tc, "require.user", "root");
}
ATF_TC_BODY(fencer_can_build, tc)
{
	struct lockdown	 ld;
	struct kid	 k;
	int		 res[NFENCER_STEPS][2];
	size_t		 i;

	t_user();
	ATF_REQUIRE(mkdir(NEWROOT, 0755) == 0);
	ld = t_profile(P_FENCER);
	kid_run(&k, c_fencer, &ld);
	ATF_REQUIRE_MSG(kid_exited(&k, 0) && k.k_len == sizeof(res),
	    "child: %s", kid_how(&k));
	memcpy(res, k.k_out, sizeof(res));
	for (i = 0; i < NFENCER_STEPS; i++)
		ATF_CHECK_MSG(res[i][0] == 0, "%s: failed, errno %d (%s)",
		    fencer_steps[i], res[i][1], strerror(res[i][1]));
}

/* chroot: only into a root-owned, unwritable, empty directory. */
/* Lock down as given, then say so. */
static void
c_enter(int out, void *arg)
{
	lockdown(arg);
	put(out, "in", 2);
}

static void
check_chroot_refused(const char *dir)
{
	struct lockdown	 ld = t_profile(P_PROBER);
	struct kid	 k;

	ld.ld_chroot = dir;
	kid_run(&k, c_enter, &ld);
	ATF_CHECK_MSG(kid_exited(&k, 1) && k.k_len == 0,
	    "%s: %s, \"%s\"", dir, kid_how(&k), k.k_out);
	/* The same lockdown into a proper directory goes through. */
	ld.ld_chroot = EMPTY_DIR;
	kid_run(&k, c_enter, &ld);
	ATF_CHECK_MSG(kid_exited(&k, 0) && strcmp(k.k_out, "in") == 0,
	    "%s: %s, \"%s\"", EMPTY_DIR, kid_how(&k), k.k_out);
}

ATF_TC(chroot_refuses_writable);
ATF_TC_HEAD(chroot_refuses_writable, tc)
{
	atf_tc_set_md_var(tc, "descr", "a chroot directory writable by "
	    "group or other is refused");
	atf_tc_set_md_var(tc, "require.user", "root");
}
ATF_TC_BODY(chroot_refuses_writable, tc)
{
	t_user();
	t_emptydir(EMPTY_DIR);
	t_emptydir("w-other");
	ATF_REQUIRE(chmod("w-other", 0757) == 0);
	check_chroot_refused("w-other");
	t_emptydir("w-group");
	ATF_REQUIRE(chmod("w-group", 0775) == 0);
	check_chroot_refused("w-group");
}

ATF_TC(chroot_refuses_nonempty);
ATF_TC_HEAD(chroot_refuses_nonempty, tc)
{
	atf_tc_set_md_var(tc, "descr", "a chroot directory that holds "
	    "anything is refused");
	atf_tc_set_md_var(tc, "require.user", "root");
}
ATF_TC_BODY(chroot_refuses_nonempty, tc)
{
	int	 fd;

	t_user();
	t_emptydir(EMPTY_DIR);
	t_emptydir("full");
	ATF_REQUIRE((fd = open("full/.hidden", O_CREAT | O_WRONLY,
	    0600)) != -1);
	close(fd);
	check_chroot_refused("full");
}

ATF_TC(chroot_refuses_not_root);
ATF_TC_HEAD(chroot_refuses_not_root, tc)
{
	atf_tc_set_md_var(tc, "descr", "a chroot directory not owned by "
	    "root, or reached through a symbolic link, is refused");
	atf_tc_set_md_var(tc, "require.user", "root");
}
ATF_TC_BODY(chroot_refuses_not_root, tc)
{
	t_user();
	t_emptydir(EMPTY_DIR);
	t_emptydir("theirs");
	ATF_REQUIRE(chown("theirs", t_uid, t_gid) == 0);
	check_chroot_refused("theirs");
	ATF_REQUIRE(symlink(EMPTY_DIR, "link") == 0);
	check_chroot_refused("link");
}

/*
 * Root is gone for good.  The deny filter lets set*id through, so what
 * refuses them here is the kernel's credential check alone; unconfined,
 * the same calls succeed.
 */
static void
c_regain(int out, void *arg)
{
	cap_t		 caps;
	cap_value_t	 c = CAP_SETUID;
	gid_t		 g = 0;
	int		 bits;

	if (arg != NULL)
		lockdown(arg);
	putf(out, "setuid %d ", setuid(0) == 0);
	putf(out, "seteuid %d ", seteuid(0) == 0);
	putf(out, "setresuid %d ", setresuid(0, 0, 0) == 0);
	putf(out, "setgid %d ", setgid(0) == 0);
	putf(out, "setgroups %d ", setgroups(1, &g) == 0);
	caps = cap_get_proc();
	cap_set_flag(caps, CAP_EFFECTIVE, 1, &c, CAP_SET);
	cap_set_flag(caps, CAP_PERMITTED, 1, &c, CAP_SET);
	putf(out, "capset %d ", cap_set_proc(caps) == 0);
	cap_free(caps);
	bits = prctl(PR_GET_SECUREBITS, 0, 0, 0, 0);
	putf(out, "noroot %d", bits != -1 && (bits & SECBIT_NOROOT_LOCKED) &&
	    (bits & SECBIT_NOROOT));
}

ATF_TC(uid_cannot_regain_root);
ATF_TC_HEAD(uid_cannot_regain_root, tc)
{
	atf_tc_set_md_var(tc, "descr", "after lockdown with a uid, "
	    "setuid(0), setgid(0), setgroups and raising a capability fail");
	atf_tc_set_md_var(tc, "require.user", "root");
}
ATF_TC_BODY(uid_cannot_regain_root, tc)
{
	struct lockdown	 ld;
	struct kid	 k;

	t_user();
	ld = t_profile(P_BROKER);
	ld.ld_filter = LOCKDOWN_DENY;
	ld.ld_promises = NULL;
	kid_run(&k, c_regain, NULL);
	ATF_REQUIRE_MSG(kid_exited(&k, 0), "unconfined: %s", kid_how(&k));
	ATF_REQUIRE_STREQ_MSG(k.k_out, "setuid 1 seteuid 1 setresuid 1 "
	    "setgid 1 setgroups 1 capset 1 noroot 0", "unconfined");
	kid_run(&k, c_regain, &ld);
	ATF_REQUIRE_MSG(kid_exited(&k, 0), "confined: %s", kid_how(&k));
	ATF_CHECK_STREQ_MSG(k.k_out, "setuid 0 seteuid 0 setresuid 0 "
	    "setgid 0 setgroups 0 capset 0 noroot 1", "confined");
}

/*
 * libevent as the broker runs it, the event base created after
 * lockdown: a pipe ping-pong, bufferevents on a socket pair, listeners
 * on a unix and a TCP socket with one connection each, a timer.
 */
#define PINGPONG_ROUNDS	500

struct loop {
	struct event_base	*l_base;
	int			 l_p1[2], l_p2[2];
	int			 l_rounds;
	int			 l_accepted;
	int			 l_echoed;
	int			 l_timeout;
};

static void
l_done(struct loop *l)
{
	if (l->l_rounds >= PINGPONG_ROUNDS && l->l_accepted == 2 &&
	    l->l_echoed >= 4)
		event_base_loopbreak(l->l_base);
}

static void
l_ping(evutil_socket_t fd, short what, void *arg)
{
	struct loop	*l = arg;
	char		 c;

	if (read(fd, &c, 1) != 1)
		return;
	if (++l->l_rounds < PINGPONG_ROUNDS &&
	    write(fd == l->l_p1[0] ? l->l_p2[1] : l->l_p1[1], &c, 1) != 1)
		event_base_loopbreak(l->l_base);
	l_done(l);
}

static void
l_echo(struct bufferevent *bev, void *arg)
{
	bufferevent_write_buffer(bev, bufferevent_get_input(bev));
}

static void
l_back(struct bufferevent *bev, void *arg)
{
	struct loop	*l = arg;
	struct evbuffer	*in = bufferevent_get_input(bev);

	l->l_echoed += evbuffer_get_length(in);
	evbuffer_drain(in, evbuffer_get_length(in));
	l_done(l);
}

static void
l_accept(struct evconnlistener *lst, evutil_socket_t fd,
    struct sockaddr *sa, int salen, void *arg)
{
	struct loop	*l = arg;
	struct ucred	 uc;
	socklen_t	 len = sizeof(uc);

	if (sa->sa_family == AF_UNIX &&
	    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &len) == -1)
		return;
	l->l_accepted++;
	evutil_closesocket(fd);
	l_done(l);
}

static void
l_timer(evutil_socket_t fd, short what, void *arg)
{
	struct loop	*l = arg;

	l->l_timeout = 1;
	event_base_loopbreak(l->l_base);
}

static void
c_libevent(int out, void *arg)
{
	const struct lockdown	*ld = arg;
	struct sockaddr_in	 sin;
	struct sockaddr_un	 sun;
	struct loop		 l;
	struct bufferevent	*b0, *b1;
	struct event		*e1, *e2, *timer;
	struct timeval		 tv = { 10, 0 };
	socklen_t		 len;
	int			 sp[2], ul, uc, tl, tc;

	/* What the parent hands the broker: sockets, listening. */
	memset(&l, 0, sizeof(l));
	if (pipe2(l.l_p1, O_NONBLOCK) == -1 ||
	    pipe2(l.l_p2, O_NONBLOCK) == -1 ||
	    socketpair(AF_UNIX, SOCK_STREAM, 0, sp) == -1)
		_exit(93);
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path + 1, sizeof(sun.sun_path) - 1,
	    "fenced-lockdown-loop-%ld", (long)getpid());
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	len = sizeof(sin);
	if ((ul = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0)) == -1 ||
	    bind(ul, (struct sockaddr *)&sun, sizeof(sun)) == -1 ||
	    listen(ul, 8) == -1 ||
	    (tl = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0)) == -1 ||
	    bind(tl, (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
	    listen(tl, 8) == -1 ||
	    getsockname(tl, (struct sockaddr *)&sin, &len) == -1)
		_exit(93);
	/* Clients, connected before: the broker connects nowhere. */
	if ((uc = socket(AF_UNIX, SOCK_STREAM, 0)) == -1 ||
	    connect(uc, (struct sockaddr *)&sun, sizeof(sun)) == -1 ||
	    (tc = socket(AF_INET, SOCK_STREAM, 0)) == -1 ||
	    connect(tc, (struct sockaddr *)&sin, sizeof(sin)) == -1)
		_exit(93);

	lockdown(ld);

	if ((l.l_base = event_base_new()) == NULL)
		_exit(94);
	e1 = event_new(l.l_base, l.l_p1[0], EV_READ | EV_PERSIST, l_ping, &l);
	e2 = event_new(l.l_base, l.l_p2[0], EV_READ | EV_PERSIST, l_ping, &l);
	timer = evtimer_new(l.l_base, l_timer, &l);
	if (e1 == NULL || e2 == NULL || timer == NULL ||
	    event_add(e1, NULL) == -1 || event_add(e2, NULL) == -1 ||
	    evtimer_add(timer, &tv) == -1)
		_exit(94);
	b0 = bufferevent_socket_new(l.l_base, sp[0], BEV_OPT_CLOSE_ON_FREE);
	b1 = bufferevent_socket_new(l.l_base, sp[1], BEV_OPT_CLOSE_ON_FREE);
	if (b0 == NULL || b1 == NULL)
		_exit(94);
	bufferevent_setcb(b0, l_back, NULL, NULL, &l);
	bufferevent_setcb(b1, l_echo, NULL, NULL, &l);
	bufferevent_enable(b0, EV_READ | EV_WRITE);
	bufferevent_enable(b1, EV_READ | EV_WRITE);
	bufferevent_write(b0, "ping", 4);
	/* Backlog 0: already listening, as the parent's sockets are. */
	if (evconnlistener_new(l.l_base, l_accept, &l, LEV_OPT_CLOSE_ON_FREE,
	    0, ul) == NULL ||
	    evconnlistener_new(l.l_base, l_accept, &l, LEV_OPT_CLOSE_ON_FREE,
	    0, tl) == NULL)
		_exit(94);
	if (write(l.l_p1[1], "x", 1) != 1)
		_exit(94);
	event_base_dispatch(l.l_base);
	putf(out, "rounds %d accepted %d echoed %d timeout %d", l.l_rounds,
	    l.l_accepted, l.l_echoed, l.l_timeout);
	(void)uc;
	(void)tc;
}

ATF_TC(broker_runs_libevent);
ATF_TC_HEAD(broker_runs_libevent, tc)
{
	atf_tc_set_md_var(tc, "descr", "a libevent (epoll) loop with a "
	    "pipe ping-pong, bufferevents, listeners and a timer runs under "
	    "the broker's filter");
	atf_tc_set_md_var(tc, "require.user", "root");
}
ATF_TC_BODY(broker_runs_libevent, tc)
{
	struct lockdown	 ld;
	struct kid	 k;
	char		 want[128];

	t_user();
	ld = t_profile(P_BROKER);
	kid_run(&k, c_libevent, &ld);
	ATF_REQUIRE_MSG(kid_exited(&k, 0), "child: %s, \"%s\"", kid_how(&k),
	    k.k_out);
	snprintf(want, sizeof(want), "rounds %d accepted 2 echoed 4 timeout 0",
	    PINGPONG_ROUNDS);
	ATF_CHECK_STREQ(k.k_out, want);
}

/*
 * The libraries the broker parses with.  jansson seeds its hash function
 * from /dev/urandom on first use: unless seeded before lockdown, that
 * open is fatal, which the second child shows.
 */
static void
c_libraries(int out, void *arg)
{
	const struct lockdown	*ld = arg;
	msgpack_sbuffer		 sb;
	msgpack_packer		 pk;
	msgpack_unpacked	 up;
	json_t			*j;
	char			*s;

	if (strcmp(ld->ld_title, "broker") == 0)
		json_object_seed(0);
	lockdown(ld);
	if ((j = json_loads("{\"key\": \"k1\", \"argv\": [\"a\", \"b\"]}",
	    0, NULL)) == NULL)
		_exit(96);
	json_object_set_new(j, "n", json_integer(arc4random_uniform(10)));
	if ((s = json_dumps(j, JSON_SORT_KEYS)) == NULL)
		_exit(96);
	json_decref(j);
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	msgpack_pack_map(&pk, 1);
	msgpack_pack_str(&pk, 3);
	msgpack_pack_str_body(&pk, "doc", 3);
	msgpack_pack_str(&pk, strlen(s));
	msgpack_pack_str_body(&pk, s, strlen(s));
	msgpack_unpacked_init(&up);
	if (msgpack_unpack_next(&up, sb.data, sb.size, NULL) !=
	    MSGPACK_UNPACK_SUCCESS || up.data.type != MSGPACK_OBJECT_MAP)
		_exit(96);
	msgpack_unpacked_destroy(&up);
	msgpack_sbuffer_destroy(&sb);
	free(s);
	put(out, "ok", 2);
}

ATF_TC(broker_runs_libraries);
ATF_TC_HEAD(broker_runs_libraries, tc)
{
	atf_tc_set_md_var(tc, "descr", "jansson (seeded before lockdown), "
	    "msgpack and arc4random work under the broker's filter; an "
	    "unseeded jansson is killed");
	atf_tc_set_md_var(tc, "require.user", "root");
}
ATF_TC_BODY(broker_runs_libraries, tc)
{
	struct lockdown	 ld;
	struct kid	 k;

	t_user();
	ld = t_profile(P_BROKER);
	kid_run(&k, c_libraries, &ld);
	ATF_CHECK_MSG(kid_exited(&k, 0) && strcmp(k.k_out, "ok") == 0,
	    "seeded: %s, \"%s\"", kid_how(&k), k.k_out);
	ld.ld_title = "unseeded";
	kid_run(&k, c_libraries, &ld);
#ifdef FENCED_SANITIZE
	/* Refused instead: jansson falls back to time and pid. */
	ATF_CHECK_MSG(kid_exited(&k, 0), "unseeded: %s", kid_how(&k));
#else
	ATF_CHECK_MSG(kid_signalled(&k, SIGSYS), "unseeded: %s, \"%s\"",
	    kid_how(&k), k.k_out);
#endif
}

/*
 * syslog(3) after lockdown, with no connection to /dev/log (there is
 * none in a chroot): its attempt to reopen one is refused, not killed.
 */
static void
c_syslog(int out, void *arg)
{
	log_init(0, LOG_DAEMON);
	closelog();		/* as if syslogd had gone away */
	lockdown(arg);
	log_warnx("%s: lockdown_test: syslog after lockdown", __func__);
	put(out, "alive", 5);
}

ATF_TC(syslog_refused_not_killed);
ATF_TC_HEAD(syslog_refused_not_killed, tc)
{
	atf_tc_set_md_var(tc, "descr", "syslog(3) reopening /dev/log after "
	    "lockdown gets an error instead of killing the prober");
	atf_tc_set_md_var(tc, "require.user", "root");
}
ATF_TC_BODY(syslog_refused_not_killed, tc)
{
	struct lockdown	 ld;
	struct kid	 k;

	t_user();
	ld = t_profile(P_PROBER);
	kid_run(&k, c_syslog, &ld);
	ATF_CHECK_MSG(kid_exited(&k, 0) && strcmp(k.k_out, "alive") == 0,
	    "%s, \"%s\"", kid_how(&k), k.k_out);
}

/* Refusals before anything changed. */
static void
c_bad_promise(int out, void *arg)
{
	struct lockdown	 ld;

	memset(&ld, 0, sizeof(ld));
	ld.ld_title = "bad";
	ld.ld_uid = (uid_t)-1;
	ld.ld_filter = LOCKDOWN_ALLOW;
	ld.ld_promises = arg;
	lockdown(&ld);
	put(out, "in", 2);
}

static void
c_bad_filter_load(int out, void *arg)
{
	(void)lockdown_filter_load(LOCKDOWN_ALLOW, arg);
	put(out, "in", 2);
}

ATF_TC(unknown_promise_fatal);
ATF_TC_HEAD(unknown_promise_fatal, tc)
{
	atf_tc_set_md_var(tc, "descr", "an unknown promise name is fatal, "
	    "in lockdown() and in lockdown_filter_load()");
}
ATF_TC_BODY(unknown_promise_fatal, tc)
{
	struct kid	 k;

	t_user();
	kid_run(&k, c_bad_promise, "stdio frobnicate");
	ATF_CHECK_MSG(kid_exited(&k, 1) && k.k_len == 0, "lockdown: %s",
	    kid_how(&k));
	kid_run(&k, c_bad_filter_load, "stdio rpath");
	ATF_CHECK_MSG(kid_exited(&k, 1) && k.k_len == 0,
	    "lockdown_filter_load: %s", kid_how(&k));
	/* A known set is accepted (the control). */
	kid_run(&k, c_bad_filter_load, " stdio  recvfd ");
	ATF_CHECK_MSG(kid_exited(&k, 0) && strcmp(k.k_out, "in") == 0,
	    "known promises: %s", kid_how(&k));
}

/*
 * A capability already gone from the bounding set (a service manager's
 * CapabilityBoundingSet=, say) cannot be kept: refused up front.
 */
static void
c_unavailable(int out, void *arg)
{
	const struct lockdown	*ld = arg;

	if (prctl(PR_CAPBSET_DROP, CAP_SYS_ADMIN, 0, 0, 0) == -1)
		_exit(97);
	lockdown(ld);
	put(out, "in", 2);
}

ATF_TC(unavailable_capability_refused);
ATF_TC_HEAD(unavailable_capability_refused, tc)
{
	atf_tc_set_md_var(tc, "descr", "keeping a capability that is not "
	    "in the bounding set is refused before anything changes");
	atf_tc_set_md_var(tc, "require.user", "root");
}
ATF_TC_BODY(unavailable_capability_refused, tc)
{
	struct lockdown	 ld;
	struct kid	 k;

	t_user();
	ld = t_profile(P_FENCER);
	kid_run(&k, c_unavailable, &ld);
	ATF_CHECK_MSG(kid_exited(&k, 1) && k.k_len == 0, "%s", kid_how(&k));
	kid_run(&k, c_enter, &ld);
	ATF_CHECK_MSG(kid_exited(&k, 0) && strcmp(k.k_out, "in") == 0,
	    "all available: %s", kid_how(&k));
}

/* A second thread would keep root: refused. */
static void *
t_sleeper(void *arg)
{
	for (;;)
		pause();
	return (NULL);
}

static void
c_threaded(int out, void *arg)
{
	pthread_t	 t;

	if (pthread_create(&t, NULL, t_sleeper, NULL) != 0)
		_exit(97);
	lockdown(arg);
	put(out, "in", 2);
}

ATF_TC(threads_refused);
ATF_TC_HEAD(threads_refused, tc)
{
	atf_tc_set_md_var(tc, "descr", "lockdown refuses a process that "
	    "has more than one thread");
	atf_tc_set_md_var(tc, "require.user", "root");
}
ATF_TC_BODY(threads_refused, tc)
{
	struct lockdown	 ld;
	struct kid	 k;

	t_user();
	ld = t_profile(P_PROBER);
	kid_run(&k, c_threaded, &ld);
	ATF_CHECK_MSG(kid_exited(&k, 1) && k.k_len == 0, "threaded: %s",
	    kid_how(&k));
	kid_run(&k, c_enter, &ld);
	ATF_CHECK_MSG(kid_exited(&k, 0) && strcmp(k.k_out, "in") == 0,
	    "single: %s", kid_how(&k));
}

/* lockdown_log_only: a forbidden call is logged, not killed. */
static void
c_log_only(int out, void *arg)
{
	struct call_arg	*ca = arg;

	lockdown_log_only = 1;
	lockdown(ca->ca_ld);
	putf(out, "%ld", ca->ca_call());
}

ATF_TC(log_only);
ATF_TC_HEAD(log_only, tc)
{
	atf_tc_set_md_var(tc, "descr", "with lockdown_log_only a forbidden "
	    "call returns, but a foreign ABI is still killed");
	atf_tc_set_md_var(tc, "require.user", "root");
}
ATF_TC_BODY(log_only, tc)
{
	struct lockdown	 ld;
	struct call_arg	 ca;
	struct kid	 k;

	t_user();
	ld = t_profile(P_BROKER);
	ca.ca_ld = &ld;
	ca.ca_call = f_getdents;
	kid_run(&k, c_log_only, &ca);
	ATF_CHECK_MSG(kid_exited(&k, 0), "getdents64: %s", kid_how(&k));
	ca.ca_call = f_x32_getpid;
	kid_run(&k, c_log_only, &ca);
	ATF_CHECK_MSG(kid_signalled(&k, SIGSYS), "x32: %s", kid_how(&k));
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, broker_confined);
	ATF_TP_ADD_TC(tp, prober_confined);
	ATF_TP_ADD_TC(tp, fencer_confined);
	ATF_TP_ADD_TC(tp, uid_keeps_capability);
	ATF_TP_ADD_TC(tp, broker_kills_forbidden);
	ATF_TP_ADD_TC(tp, prober_kills_forbidden);
	ATF_TP_ADD_TC(tp, egress_kills_forbidden);
	ATF_TP_ADD_TC(tp, egress_allows_its_calls);
	ATF_TP_ADD_TC(tp, broker_allows_its_calls);
	ATF_TP_ADD_TC(tp, x32_killed);
	ATF_TP_ADD_TC(tp, i386_killed);
	ATF_TP_ADD_TC(tp, loaded_filter_verdicts);
	ATF_TP_ADD_TC(tp, fencer_filter_denies);
	ATF_TP_ADD_TC(tp, fencer_can_build);
	ATF_TP_ADD_TC(tp, chroot_refuses_writable);
	ATF_TP_ADD_TC(tp, chroot_refuses_nonempty);
	ATF_TP_ADD_TC(tp, chroot_refuses_not_root);
	ATF_TP_ADD_TC(tp, uid_cannot_regain_root);
	ATF_TP_ADD_TC(tp, broker_runs_libevent);
	ATF_TP_ADD_TC(tp, broker_runs_libraries);
	ATF_TP_ADD_TC(tp, syslog_refused_not_killed);
	ATF_TP_ADD_TC(tp, unknown_promise_fatal);
	ATF_TP_ADD_TC(tp, threads_refused);
	ATF_TP_ADD_TC(tp, unavailable_capability_refused);
	ATF_TP_ADD_TC(tp, log_only);
	return (atf_no_error());
}
