/*
 * The L1.5 seccomp filter (also L2), the last thing pid 1 installs
 * before execve.  docs/seccomp-l15.md is the policy with a reason for
 * each rule and the comparison with Docker's default profile.
 *
 * A deny list: everything not named here is allowed, because the fence
 * runs arbitrary user programs and a wrong allow list breaks them in
 * ways that are hard to see.  What makes it at least as strict as
 * Docker's allow list: every x86_64 call Docker's profile refuses to a
 * container without capabilities is refused here, the argument filters
 * (clone, socket, personality, ioctl) are as tight or tighter, and every
 * system call number above the newest one this table was written for
 * answers ENOSYS, so a kernel upgrade does not silently open a new call.
 * Only the native x86_64 ABI is allowed: an i386 (int 0x80) or x32 call
 * kills the process.
 *
 * The program is built once per process with libseccomp and exported as
 * BPF; pid 1 installs it with one prctl(), without libseccomp, which
 * must not allocate in pid 1 (fence_impl.h).
 */
#include <sys/types.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <linux/filter.h>
#include <linux/seccomp.h>

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fence.h"
#include "fence_impl.h"

/* The newest x86_64 call this table knows (Linux 6.18), and a bound. */
#define FENCE_SCMP_NR_KNOWN	470
#define FENCE_SCMP_NR_FUTURE	560

/* Where pid 1 keeps the listener until its EXEC record takes it. */
#define FENCE_NOTIFY_FD_MIN	(4 + FENCE_PASS_MAX + 16)

#ifndef CLONE_NEWCGROUP
#define CLONE_NEWCGROUP		0x02000000
#endif

static struct sock_fprog	 fence_scmp_prog;
/* The same rules with ERRNO instead of USER_NOTIF (`observe denials no'). */
static struct sock_fprog	 fence_scmp_quiet;
/* Why the host cannot observe refusals ("" if it can). */
static char			 fence_scmp_why[FENCE_ERR_MAX];
/* The program sealed in a memfd, for a pool fence's agent; -1: none. */
static int			 fence_scmp_memfd[2] = { -1, -1 };
#ifdef FENCED_TEST_HOOKS
static int			 fence_scmp_memfd_none = -1;
#endif

/* Refused outright: EPERM, as if the fence lacked the privilege. */
static const char *fence_scmp_deny[] = {
	/* mounts and namespaces */
	"mount", "umount2", "pivot_root", "chroot", "open_tree",
	"move_mount", "fsopen", "fsconfig", "fsmount", "fspick",
	"mount_setattr", "unshare", "setns",
	/* kernel keyrings */
	"keyctl", "add_key", "request_key",
	/* attack surface without a use in a fence */
	"bpf", "userfaultfd", "io_uring_setup", "io_uring_enter",
	"io_uring_register", "perf_event_open", "fanotify_init",
	"lookup_dcookie", "modify_ldt",
	/* other processes' memory */
	"ptrace", "process_vm_readv", "process_vm_writev", "kcmp",
	"pidfd_getfd", "process_madvise",
	/* the machine */
	"kexec_load", "kexec_file_load", "init_module", "finit_module",
	"delete_module", "create_module", "get_kernel_syms", "query_module",
	"iopl", "ioperm", "swapon", "swapoff", "reboot", "syslog", "acct",
	"quotactl", "quotactl_fd", "vhangup", "nfsservctl", "uselib", "ustat",
	"sysfs", "_sysctl", "sethostname", "setdomainname",
	/* file handles bypass the path walk */
	"open_by_handle_at", "name_to_handle_at",
	/* clocks */
	"clock_settime", "settimeofday", "adjtimex", "clock_adjtime",
	/* NUMA placement (Docker: CAP_SYS_NICE) */
	"get_mempolicy", "set_mempolicy", "mbind", "migrate_pages",
	"move_pages", "set_mempolicy_home_node",
	/* never implemented on x86_64 */
	"afs_syscall", "tuxcall", "security", "getpmsg", "putpmsg", "vserver"
};

/* The namespace flags clone() must not carry. */
static const unsigned long fence_scmp_clone_ns[] = {
	CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC,
	CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET
};

/* Families of socket() and socketpair() up to AF_NETLINK (16) refused. */
static const int fence_scmp_families[] = {
	AF_UNSPEC, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 14, 15
};

/*
 * The one table of which errno a refused call gets: ENOSYS for clone3
 * (libc falls back to clone()) and for the numbers newer than this
 * table, EPERM for every other rule.  The filter's action is the errno
 * itself (`observe denials no', or no USER_NOTIF here), or USER_NOTIF,
 * and then the fencer answers the notification with this errno
 * (fencer_denial.c): never a success, never CONTINUE.
 */
int
fence_seccomp_errno(int nr)
{
	if (nr == __NR_clone3 || (nr > FENCE_SCMP_NR_KNOWN &&
	    nr < FENCE_SCMP_NR_FUTURE))
		return (ENOSYS);
	return (EPERM);
}

/* The action of a rule refusing nr (notify: with USER_NOTIF). */
static uint32_t
fence_scmp_refuse(int nr, int notify)
{
	return (notify ? SCMP_ACT_NOTIFY :
	    SCMP_ACT_ERRNO(fence_seccomp_errno(nr)));
}

static int
fence_scmp_name(const char *name)
{
	return (seccomp_syscall_resolve_name(name));
}

static int
fence_scmp_add(scmp_filter_ctx sc, uint32_t act, int nr, unsigned int n,
    const struct scmp_arg_cmp *cmp, const char *what, char *err,
    size_t errlen)
{
	int	 r;

	if ((r = seccomp_rule_add_array(sc, act, nr, n, cmp)) < 0) {
		snprintf(err, errlen, "seccomp rule %s: %s", what,
		    strerror(-r));
		return (-1);
	}
	return (0);
}

/* socket() and socketpair(): unix, inet, inet6, netlink; no raw IP. */
static int
fence_scmp_socket(scmp_filter_ctx sc, const char *name, int notify,
    char *err, size_t errlen)
{
	struct scmp_arg_cmp	 cmp[2];
	int			 nr = fence_scmp_name(name), fam[2] =
				    { AF_INET, AF_INET6 };
	const uint32_t		 deny = fence_scmp_refuse(nr, notify);
	size_t			 i;

	/* Any family above AF_NETLINK; also any value with high bits. */
	cmp[0] = SCMP_A0(SCMP_CMP_GT, AF_NETLINK);
	if (fence_scmp_add(sc, deny, nr, 1, cmp, name, err, errlen) == -1)
		return (-1);
	for (i = 0; i < nitems(fence_scmp_families); i++) {
		cmp[0] = SCMP_A0(SCMP_CMP_EQ, fence_scmp_families[i]);
		if (fence_scmp_add(sc, deny, nr, 1, cmp, name, err,
		    errlen) == -1)
			return (-1);
	}
	/* The type's low bits are the type; the rest are flags. */
	for (i = 0; i < nitems(fam); i++) {
		cmp[0] = SCMP_A0(SCMP_CMP_EQ, fam[i]);
		cmp[1] = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xf, SOCK_RAW);
		if (fence_scmp_add(sc, deny, nr, 2, cmp, name, err,
		    errlen) == -1)
			return (-1);
	}
	cmp[0] = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xf, SOCK_PACKET);
	return (fence_scmp_add(sc, deny, nr, 1, cmp, name, err, errlen));
}

/*
 * personality(): only 0, PER_LINUX32 (8), UNAME26 (0x20000), both, and
 * the query 0xffffffff, as Docker.  libseccomp compares each argument
 * once per rule and has no "not in", so the complement is spelled out:
 * a value is refused if it has any bit i set and bit i+1 (mod 32) clear,
 * except where i is 3 or 17, the two bits the allowed values may carry:
 * there the rule also wants bit i-1 set.  Every 32-bit value other than
 * the five has such a pair; none of the five has.  Anything above 32
 * bits is refused too (the kernel would truncate it).
 */
static int
fence_scmp_personality(scmp_filter_ctx sc, int notify, char *err,
    size_t errlen)
{
	struct scmp_arg_cmp	 cmp;
	int			 nr = fence_scmp_name("personality"), i;
	const uint32_t		 deny = fence_scmp_refuse(nr, notify);
	uint64_t		 bit, next, prev;

	cmp = SCMP_A0(SCMP_CMP_GT, 0xffffffffULL);
	if (fence_scmp_add(sc, deny, nr, 1, &cmp, "personality", err,
	    errlen) == -1)
		return (-1);
	for (i = 0; i < 32; i++) {
		bit = 1ULL << i;
		next = 1ULL << ((i + 1) % 32);
		if (i == 3 || i == 17) {
			prev = 1ULL << (i - 1);
			cmp = SCMP_A0(SCMP_CMP_MASKED_EQ, prev | bit | next,
			    prev | bit);
		} else
			cmp = SCMP_A0(SCMP_CMP_MASKED_EQ, bit | next, bit);
		if (fence_scmp_add(sc, deny, nr, 1, &cmp, "personality", err,
		    errlen) == -1)
			return (-1);
	}
	return (0);
}

static int
fence_scmp_rules(scmp_filter_ctx sc, int notify, char *err, size_t errlen)
{
	const uint32_t		 deny = fence_scmp_refuse(0, notify);
	struct scmp_arg_cmp	 cmp;
	size_t			 i;
	int			 nr;

	for (i = 0; i < nitems(fence_scmp_deny); i++) {
		if ((nr = fence_scmp_name(fence_scmp_deny[i])) ==
		    __NR_SCMP_ERROR) {
			snprintf(err, errlen, "seccomp: unknown system call "
			    "%s", fence_scmp_deny[i]);
			return (-1);
		}
		if (nr < 0)
			continue;	/* not on x86_64 */
		if (fence_scmp_add(sc, deny, nr, 0, NULL, fence_scmp_deny[i],
		    err, errlen) == -1)
			return (-1);
	}
	/* libc falls back to clone() when clone3() says ENOSYS. */
	if (fence_scmp_add(sc, fence_scmp_refuse(__NR_clone3, notify),
	    __NR_clone3, 0, NULL, "clone3", err, errlen) == -1)
		return (-1);
	for (i = 0; i < nitems(fence_scmp_clone_ns); i++) {
		cmp = SCMP_A0(SCMP_CMP_MASKED_EQ, fence_scmp_clone_ns[i],
		    fence_scmp_clone_ns[i]);
		if (fence_scmp_add(sc, deny, fence_scmp_name("clone"), 1, &cmp,
		    "clone", err, errlen) == -1)
			return (-1);
	}
	if (fence_scmp_socket(sc, "socket", notify, err, errlen) == -1 ||
	    fence_scmp_socket(sc, "socketpair", notify, err, errlen) == -1)
		return (-1);
	/* The request is an unsigned int: compare the low 32 bits only. */
	cmp = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffULL, TIOCSTI);
	if (fence_scmp_add(sc, deny, fence_scmp_name("ioctl"), 1, &cmp,
	    "ioctl TIOCSTI", err, errlen) == -1)
		return (-1);
	cmp = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffULL, TIOCLINUX);
	if (fence_scmp_add(sc, deny, fence_scmp_name("ioctl"), 1, &cmp,
	    "ioctl TIOCLINUX", err, errlen) == -1)
		return (-1);
	if (fence_scmp_personality(sc, notify, err, errlen) == -1)
		return (-1);

	/* Linux 6.15's open_tree_attr() is the mount API again. */
	if (fence_scmp_add(sc, deny, 467, 0, NULL, "open_tree_attr", err,
	    errlen) == -1)
		return (-1);
	/* Newer than this table: ENOSYS, what libc expects of a new call. */
	for (nr = FENCE_SCMP_NR_KNOWN + 1; nr < FENCE_SCMP_NR_FUTURE; nr++)
		if (fence_scmp_add(sc, fence_scmp_refuse(nr, notify), nr, 0,
		    NULL, "future system call", err, errlen) == -1)
			return (-1);
	return (0);
}

#define FENCE_SCMP_SEALS	(F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | \
				 F_SEAL_WRITE)

/* A sealed memfd holding n instructions: its descriptor, or -1. */
static int
fence_seccomp_sealed(const struct sock_filter *f, size_t n, char *err,
    size_t errlen)
{
	size_t	 len = n * sizeof(*f);
	int	 fd;

	if ((fd = memfd_create("fence-seccomp", MFD_CLOEXEC |
	    MFD_ALLOW_SEALING)) == -1 || write(fd, f, len) != (ssize_t)len ||
	    fcntl(fd, F_ADD_SEALS, FENCE_SCMP_SEALS) == -1) {
		snprintf(err, errlen, "seccomp: the program's memfd: %s",
		    strerror(errno));
		if (fd != -1)
			(void)close(fd);
		return (-1);
	}
	return (fd);
}

/* One program of the rules: refusals notify, or carry their errno. */
static int
fence_scmp_build(int notify, struct sock_fprog *out, char *err,
    size_t errlen)
{
	scmp_filter_ctx	 sc;
	struct stat	 sb;
	void		*buf = NULL;
	int		 fd = -1, r;

	if ((sc = seccomp_init(SCMP_ACT_ALLOW)) == NULL) {
		snprintf(err, errlen, "seccomp_init failed");
		return (-1);
	}
	/* Only the native ABI: i386 and x32 calls kill the process. */
	if ((r = seccomp_attr_set(sc, SCMP_FLTATR_ACT_BADARCH,
	    SCMP_ACT_KILL_PROCESS)) < 0 ||
	    (r = seccomp_attr_set(sc, SCMP_FLTATR_CTL_OPTIMIZE, 2)) < 0) {
		snprintf(err, errlen, "seccomp_attr_set: %s", strerror(-r));
		goto fail;
	}
	if (fence_scmp_rules(sc, notify, err, errlen) == -1)
		goto fail;
	if ((fd = memfd_create("fence-seccomp", MFD_CLOEXEC)) == -1) {
		snprintf(err, errlen, "memfd_create: %s", strerror(errno));
		goto fail;
	}
	if ((r = seccomp_export_bpf(sc, fd)) < 0) {
		snprintf(err, errlen, "seccomp_export_bpf: %s", strerror(-r));
		goto fail;
	}
	if (fstat(fd, &sb) == -1 || sb.st_size <= 0 ||
	    sb.st_size % sizeof(struct sock_filter) != 0 ||
	    (size_t)sb.st_size / sizeof(struct sock_filter) > BPF_MAXINSNS) {
		snprintf(err, errlen, "seccomp: bad program size");
		goto fail;
	}
	if ((buf = malloc(sb.st_size)) == NULL ||
	    pread(fd, buf, sb.st_size, 0) != sb.st_size) {
		snprintf(err, errlen, "seccomp: read program: %s",
		    strerror(errno));
		goto fail;
	}
	out->len = sb.st_size / sizeof(struct sock_filter);
	out->filter = buf;
	(void)close(fd);
	seccomp_release(sc);
	return (0);
 fail:
	free(buf);
	if (fd != -1)
		(void)close(fd);
	seccomp_release(sc);
	return (-1);
}

/*
 * Parent side, once: build the filter and keep its BPF, twice: with
 * USER_NOTIF for the refusals where the kernel and libseccomp have it
 * (the fencer observes them, docs/denials.md), and with the errnos
 * themselves, for `observe denials no' and where notification is
 * missing (fence_scmp_why says why).
 */
int
fence_seccomp_init(char *err, size_t errlen)
{
	uint32_t	 act = SECCOMP_RET_USER_NOTIF;
	char		 why[FENCE_ERR_MAX];

	if (fence_scmp_quiet.filter != NULL)
		return (0);
	if (fence_scmp_build(0, &fence_scmp_quiet, err, errlen) == -1)
		return (-1);
	if (syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &act) == -1)
		snprintf(fence_scmp_why, sizeof(fence_scmp_why), "the kernel "
		    "has no seccomp user notification (%s)", strerror(errno));
	else if (seccomp_api_get() < 5)
		snprintf(fence_scmp_why, sizeof(fence_scmp_why), "libseccomp "
		    "has no user notification (API level %u)",
		    seccomp_api_get());
	else if (fence_scmp_build(1, &fence_scmp_prog, why,
	    sizeof(why)) == -1)
		strlcpy(fence_scmp_why, why, sizeof(fence_scmp_why));
	if (fence_scmp_prog.filter == NULL)
		fence_scmp_prog = fence_scmp_quiet;
	fence_host.fh_seccomp = &fence_scmp_prog;
	return (0);
}

/* Why refusals are not observed here, or NULL if they can be. */
const char *
fence_seccomp_unobserved(void)
{
	return (fence_scmp_why[0] != '\0' ? fence_scmp_why : NULL);
}

/*
 * Whether prog refuses by USER_NOTIF (some return of it is that action),
 * so that whoever installs it asks for a listener.  Read from the
 * program itself, so that a pool fence's agent, which is sent the
 * program, decides exactly as a cold pid 1 does.
 */
static int
fence_seccomp_notifies(const struct sock_fprog *prog)
{
	size_t	 i;

	for (i = 0; i < prog->len; i++)
		if (prog->filter[i].code == (BPF_RET | BPF_K) &&
		    (prog->filter[i].k & SECCOMP_RET_ACTION_FULL) ==
		    SECCOMP_RET_USER_NOTIF)
			return (1);
	return (0);
}

/* The program a fence installs; quiet: the one without USER_NOTIF. */
const struct sock_fprog *
fence_seccomp_program(int quiet)
{
	if (quiet)
		return (fence_scmp_quiet.filter != NULL ? &fence_scmp_quiet :
		    NULL);
	return (fence_scmp_prog.filter != NULL ? &fence_scmp_prog : NULL);
}

/*
 * Parent side: the sealed memfd of the program a pool fence's agent is
 * to load (fence_pool_take()), made on first use (fence_pool_start())
 * and the fencer's to keep: the caller sends it and never closes it.
 * quiet: the program without USER_NOTIF (`observe denials no').  none
 * (test builds only): one that allows everything.
 */
int
fence_seccomp_memfd(int quiet, int none, char *err, size_t errlen)
{
	const struct sock_fprog	*prog;
#ifdef FENCED_TEST_HOOKS
	/*
	 * The test build's weakened fence (fs_test_noseccomp) in a pool:
	 * its agent is sent a program that allows everything, so that the
	 * agent itself has no switch to leave seccomp out.
	 */
	static const struct sock_filter allow[] = {
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)
	};

	if (none) {
		if (fence_scmp_memfd_none == -1)
			fence_scmp_memfd_none = fence_seccomp_sealed(allow,
			    nitems(allow), err, errlen);
		return (fence_scmp_memfd_none);
	}
#endif
	quiet = quiet != 0;
	if (none || (prog = fence_seccomp_program(quiet)) == NULL) {
		snprintf(err, errlen, "no seccomp program to send");
		return (-1);
	}
	if (fence_scmp_memfd[quiet] == -1)
		fence_scmp_memfd[quiet] = fence_seccomp_sealed(prog->filter,
		    prog->len, err, errlen);
	return (fence_scmp_memfd[quiet]);
}

/*
 * Child side, a pool fence's agent: the program its assignment brought
 * (fd, closed here), checked to be a sealed memfd of whole instructions
 * within the kernel's bound, becomes the one fence_seccomp_load()
 * installs.  -1 and errno on anything else.
 */
int
fence_seccomp_adopt(int fd)
{
	struct stat	 sb;
	void		*buf;
	int		 seals;

	if (fstat(fd, &sb) == -1 || !S_ISREG(sb.st_mode) ||
	    (seals = fcntl(fd, F_GET_SEALS)) == -1 ||
	    (seals & FENCE_SCMP_SEALS) != FENCE_SCMP_SEALS ||
	    sb.st_size <= 0 || sb.st_size % sizeof(struct sock_filter) != 0 ||
	    (size_t)sb.st_size / sizeof(struct sock_filter) > BPF_MAXINSNS) {
		(void)close(fd);
		errno = EBADMSG;
		return (-1);
	}
	if ((buf = malloc(sb.st_size)) == NULL ||
	    pread(fd, buf, sb.st_size, 0) != sb.st_size) {
		free(buf);
		(void)close(fd);
		errno = EBADMSG;
		return (-1);
	}
	(void)close(fd);
	free(fence_scmp_prog.filter);
	fence_scmp_prog.len = sb.st_size / sizeof(struct sock_filter);
	fence_scmp_prog.filter = buf;
	fence_host.fh_seccomp = &fence_scmp_prog;
	return (0);
}

/*
 * Child side, the last step: after it only write(), sendmsg() and
 * execve().  A program that refuses by USER_NOTIF is installed with a
 * listener, which pid 1 hands the fencer with its EXEC record and
 * closes before execve (fence_child_send()): nothing in the fence may
 * hold it, since a holder could answer a refused call with CONTINUE.
 * The fencer's own filter has no listener, so this is the first of
 * the fence's filters that has one, as the kernel requires.
 */
int
fence_seccomp_load(struct fence_ctx *ctx)
{
	const struct sock_fprog	*prog = &fence_scmp_prog;
	int			 fd;

#ifdef FENCED_TEST_HOOKS
	if (ctx->fc_noseccomp)
		return (0);
#endif
	if (ctx->fc_quiet && fence_scmp_quiet.filter != NULL)
		prog = &fence_scmp_quiet;
	if (!fence_seccomp_notifies(prog)) {
		if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, prog, 0,
		    0) == -1)
			return (fence_child_err(ctx, errno,
			    "load seccomp filter"));
		return (0);
	}
	if ((fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
	    SECCOMP_FILTER_FLAG_NEW_LISTENER, prog)) == -1)
		return (fence_child_err(ctx, errno, "load seccomp filter"));
	/*
	 * Out of the way of the numbers the last steps give (the channel,
	 * the passed descriptors, the agent's): a dup2() onto it would
	 * close it, and the record would carry something else.
	 */
	if ((ctx->fc_notify_fd = fcntl(fd, F_DUPFD_CLOEXEC,
	    FENCE_NOTIFY_FD_MIN)) == -1)
		return (fence_child_err(ctx, errno, "seccomp listener"));
	(void)close(fd);
	return (0);
}
