/*
 * lockdown(): pledge for Linux.
 *
 * Every child of fenced calls lockdown() once, before it reads a byte of
 * input.  The steps run in the order in which each still has the
 * privilege it needs: title, chroot (needs CAP_SYS_CHROOT), bounding set
 * (needs CAP_SETPCAP), groups and ids (need CAP_SETGID/CAP_SETUID), the
 * remaining capability sets, no_new_privs, and last the seccomp filter,
 * which may forbid every call made before it.  Whatever goes wrong is
 * fatal: a process that cannot confine itself must not serve anyone.
 *
 * The promise -> system call table below is the reference; docs/lockdown.md
 * explains it line by line and must change with it.
 */
#include <sys/types.h>
#include <sys/capability.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <linux/securebits.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <seccomp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "lockdown.h"
#include "log.h"

int	 lockdown_log_only;

/* Promises, as bits. */
#define LDP_STDIO	0x01
#define LDP_RECVFD	0x02
#define LDP_SENDFD	0x04
#define LDP_UNIX	0x08
#define LDP_INET	0x10
#define LDP_CONNECT	0x20

static const struct {
	const char	*lp_name;
	uint32_t	 lp_bit;
} ld_promise_names[] = {
	{ "stdio",	LDP_STDIO },
	{ "recvfd",	LDP_RECVFD },
	{ "sendfd",	LDP_SENDFD },
	{ "unix",	LDP_UNIX },
	{ "inet",	LDP_INET },
	{ "connect",	LDP_CONNECT },
};

/*
 * How a call's arguments are narrowed.  Seccomp sees only the six
 * register values, never what a pointer points to, so only integer
 * arguments can be checked.
 */
enum ld_arg {
	LDA_ANY = 0,
	LDA_NOEXEC,	/* mmap, mprotect: arg 2 (prot) without PROT_EXEC */
	LDA_NOADDR,	/* sendto: arg 4 (destination) NULL */
	LDA_SELF,	/* kill, tgkill: arg 0 is our own pid */
	LDA_FDONLY,	/* newfstatat: AT_EMPTY_PATH set in arg 3 */
	LDA_GETLIMIT,	/* prlimit64: own process (0), no new limit */
	LDA_FCNTL,	/* fcntl: descriptor and status flags, dup */
	LDA_IOCTL,	/* ioctl: FIONREAD, and TCGETS for isatty() */
	LDA_SYSLOG,	/* socket: the datagram socket syslog(3) reopens */
	LDA_OUTBOUND,	/* socket: AF_INET or AF_INET6, SOCK_STREAM or
			   SOCK_DGRAM (NONBLOCK, CLOEXEC), protocol 0 */
	LDA_PAIR,	/* socketpair: AF_UNIX, SOCK_STREAM (NONBLOCK,
			   CLOEXEC), protocol 0 */
	LDA_SAN_PRCTL,	/* prctl: LeakSanitizer's dumpable and ptracer */
	LDA_SAN_CLONE	/* clone: LeakSanitizer's tracer thread */
};

struct ld_call {
	int		 lc_nr;
	const char	*lc_name;
	uint32_t	 lc_promises;	/* any one of these allows it */
	enum ld_arg	 lc_arg;
	int		 lc_errno;	/* refused with it, not allowed */
};

#define LDC(name, promises, arg) { SCMP_SYS(name), #name, promises, arg, 0 }
#define LDE(name, promises, arg, e) { SCMP_SYS(name), #name, promises, arg, e }
#define NET	(LDP_UNIX | LDP_INET)

static const struct ld_call ld_calls[] = {
	/* stdio: descriptors already open */
	LDC(read,		LDP_STDIO,	LDA_ANY),
	LDC(write,		LDP_STDIO,	LDA_ANY),
	LDC(readv,		LDP_STDIO,	LDA_ANY),
	LDC(writev,		LDP_STDIO,	LDA_ANY),
	LDC(pread64,		LDP_STDIO,	LDA_ANY),
	LDC(pwrite64,		LDP_STDIO,	LDA_ANY),
	LDC(lseek,		LDP_STDIO,	LDA_ANY),
	LDC(close,		LDP_STDIO,	LDA_ANY),
	LDC(close_range,	LDP_STDIO,	LDA_ANY),
	LDC(dup,		LDP_STDIO,	LDA_ANY),
	LDC(dup2,		LDP_STDIO,	LDA_ANY),
	LDC(dup3,		LDP_STDIO,	LDA_ANY),
	LDC(pipe2,		LDP_STDIO,	LDA_ANY),
	LDC(fstat,		LDP_STDIO,	LDA_ANY),
	LDC(newfstatat,		LDP_STDIO,	LDA_FDONLY),
	LDC(fcntl,		LDP_STDIO,	LDA_FCNTL),
	LDC(ioctl,		LDP_STDIO,	LDA_IOCTL),
	/* stdio: memory */
	LDC(brk,		LDP_STDIO,	LDA_ANY),
	LDC(mmap,		LDP_STDIO,	LDA_NOEXEC),
	LDC(mprotect,		LDP_STDIO,	LDA_NOEXEC),
	LDC(munmap,		LDP_STDIO,	LDA_ANY),
	LDC(mremap,		LDP_STDIO,	LDA_ANY),
	LDC(madvise,		LDP_STDIO,	LDA_ANY),
	/* stdio: event loop */
	LDC(epoll_create1,	LDP_STDIO,	LDA_ANY),
	LDC(epoll_ctl,		LDP_STDIO,	LDA_ANY),
	LDC(epoll_wait,		LDP_STDIO,	LDA_ANY),
	LDC(epoll_pwait,	LDP_STDIO,	LDA_ANY),
	LDC(poll,		LDP_STDIO,	LDA_ANY),
	LDC(ppoll,		LDP_STDIO,	LDA_ANY),
	/* stdio: time, randomness, locks */
	LDC(clock_gettime,	LDP_STDIO,	LDA_ANY),
	LDC(clock_getres,	LDP_STDIO,	LDA_ANY),
	LDC(gettimeofday,	LDP_STDIO,	LDA_ANY),
	LDC(time,		LDP_STDIO,	LDA_ANY),
	LDC(nanosleep,		LDP_STDIO,	LDA_ANY),
	LDC(clock_nanosleep,	LDP_STDIO,	LDA_ANY),
	LDC(getrandom,		LDP_STDIO,	LDA_ANY),
	LDC(futex,		LDP_STDIO,	LDA_ANY),
	LDC(sched_yield,	LDP_STDIO,	LDA_ANY),
	/* stdio: signals, own process only */
	LDC(rt_sigaction,	LDP_STDIO,	LDA_ANY),
	LDC(rt_sigprocmask,	LDP_STDIO,	LDA_ANY),
	LDC(rt_sigreturn,	LDP_STDIO,	LDA_ANY),
	LDC(restart_syscall,	LDP_STDIO,	LDA_ANY),
	LDC(kill,		LDP_STDIO,	LDA_SELF),
	LDC(tgkill,		LDP_STDIO,	LDA_SELF),
	/* stdio: identity, read only */
	LDC(getpid,		LDP_STDIO,	LDA_ANY),
	LDC(gettid,		LDP_STDIO,	LDA_ANY),
	LDC(getppid,		LDP_STDIO,	LDA_ANY),
	LDC(getuid,		LDP_STDIO,	LDA_ANY),
	LDC(geteuid,		LDP_STDIO,	LDA_ANY),
	LDC(getgid,		LDP_STDIO,	LDA_ANY),
	LDC(getegid,		LDP_STDIO,	LDA_ANY),
	LDC(getresuid,		LDP_STDIO,	LDA_ANY),
	LDC(getresgid,		LDP_STDIO,	LDA_ANY),
	LDC(getgroups,		LDP_STDIO,	LDA_ANY),
	LDC(uname,		LDP_STDIO,	LDA_ANY),
	LDC(prlimit64,		LDP_STDIO,	LDA_GETLIMIT),
	LDC(getrlimit,		LDP_STDIO,	LDA_ANY),
	/* stdio: connected sockets, as send(2)/recv(2) (and syslog(3)) */
	LDC(sendto,		LDP_STDIO,	LDA_NOADDR),
	LDC(recvfrom,		LDP_STDIO,	LDA_ANY),
	/* stdio: leaving */
	LDC(exit,		LDP_STDIO,	LDA_ANY),
	LDC(exit_group,		LDP_STDIO,	LDA_ANY),
	/*
	 * stdio: syslog(3), having lost /dev/log (or never reached it: no
	 * chroot has it), reopens it with this socket() on every message.
	 * Refused, not killed: the message is lost, the process lives.
	 * Every other socket() is killed.
	 */
	LDE(socket,		LDP_STDIO,	LDA_SYSLOG,	EACCES),

	/*
	 * connect: the egress proxy's own outbound sockets (docs/egress.md):
	 * TCP or UDP of IPv4 or IPv6 and nothing else (no raw, ICMP, packet
	 * or netlink socket), connected to any address: seccomp cannot read
	 * the address, so which one is the proxy's decision, made before.
	 */
	LDC(socket,		LDP_CONNECT,	LDA_OUTBOUND),
	LDC(connect,		LDP_CONNECT,	LDA_ANY),

	/* recvfd, sendfd: messages with descriptors (SCM_RIGHTS) */
	LDC(recvmsg,		LDP_RECVFD,	LDA_ANY),
	LDC(sendmsg,		LDP_SENDFD,	LDA_ANY),

	/* unix, inet: sockets the parent opened, and their connections */
	LDC(accept,		NET,		LDA_ANY),
	LDC(accept4,		NET,		LDA_ANY),
	LDC(listen,		NET,		LDA_ANY),
	LDC(getsockopt,		NET,		LDA_ANY),
	LDC(setsockopt,		NET,		LDA_ANY),
	LDC(getsockname,	NET,		LDA_ANY),
	LDC(getpeername,	NET,		LDA_ANY),
	LDC(shutdown,		NET,		LDA_ANY),
	/*
	 * unix: a connected pair of Unix stream sockets, reaching nothing
	 * but each other: the broker's framed tunnels and what the control
	 * socket hands fencectl (docs/interactive.md).
	 */
	LDC(socketpair,		LDP_UNIX,	LDA_PAIR),
};

#ifdef FENCED_SANITIZE
/*
 * AddressSanitizer and UndefinedBehaviorSanitizer builds only: what
 * their runtimes call on their own, so that a locked-down process runs
 * and, when it goes wrong, prints a readable report instead of dying of
 * SIGSYS in the middle of one.  Never in a release build.
 *
 * The refused ones fail with EACCES so that the runtimes' own fallbacks
 * run: reading /proc/self/exe, maps, cmdline and environ for a report
 * (there is no /proc in the chroot anyway), and the thread LeakSanitizer
 * clones at exit to stop the world, which cannot work here
 * (docs/lockdown.md).  Every other clone() is still killed.
 */
static const struct ld_call ld_san_calls[] = {
	LDC(sigaltstack,	LDP_STDIO,	LDA_ANY),
	LDC(prctl,		LDP_STDIO,	LDA_SAN_PRCTL),
	LDE(open,		LDP_STDIO,	LDA_ANY,	EACCES),
	LDE(openat,		LDP_STDIO,	LDA_ANY,	EACCES),
	LDE(readlink,		LDP_STDIO,	LDA_ANY,	EACCES),
	LDE(clone,		LDP_STDIO,	LDA_SAN_CLONE, EACCES),
};
#endif

/*
 * The fencer's filter, inherited by every fence and backend it starts:
 * only what none of them may ever do.  Each fence adds its own, stricter
 * filter on top.  The reasons are in docs/lockdown.md.
 */
static const struct {
	int		 ld_nr;
	const char	*ld_name;
} ld_denied[] = {
#define LDD(name)	{ SCMP_SYS(name), #name }
	LDD(kexec_load),		/* replace the running kernel */
	LDD(kexec_file_load),
	LDD(init_module),		/* load code into the kernel */
	LDD(finit_module),
	LDD(delete_module),		/* unload it */
	LDD(create_module),		/* obsolete module calls */
	LDD(get_kernel_syms),
	LDD(query_module),
	LDD(reboot),			/* reboot, halt, kill a pid ns */
	LDD(swapon),			/* host-wide swap */
	LDD(swapoff),
	LDD(settimeofday),		/* host clock, not namespaced */
	LDD(clock_settime),
	LDD(clock_adjtime),
	LDD(adjtimex),
	LDD(acct),			/* host-wide process accounting */
	LDD(iopl),			/* raw I/O ports */
	LDD(ioperm),
	LDD(syslog),			/* the kernel log, dmesg */
	LDD(quotactl),			/* host-wide disk quotas */
	LDD(quotactl_fd),
	LDD(vhangup),			/* hang up the terminal */
	LDD(open_by_handle_at),		/* past chroot and mounts */
	LDD(lookup_dcookie),		/* obsolete oprofile interface */
	LDD(nfsservctl),		/* obsolete, removed from Linux */
	LDD(uselib),			/* obsolete a.out loader */
	LDD(_sysctl),			/* obsolete, removed from Linux */
#undef LDD
};

static uint32_t	ld_promises_parse(const char *);
static int	ld_filter_load(enum lockdown_filter, uint32_t);
static int	ld_calls_add(scmp_filter_ctx, const struct ld_call *, size_t,
		    uint32_t);
static int	ld_call_add(scmp_filter_ctx, const struct ld_call *);
static int	ld_kept(const struct lockdown *, cap_value_t);
static void	ld_check(const struct lockdown *);
static void	ld_single_threaded(void);
static void	ld_chroot(const char *);
static void	ld_bounding(const struct lockdown *);
static void	ld_setid(const struct lockdown *);
static void	ld_capsets(const struct lockdown *);
static void	ld_verify(const struct lockdown *);

void
lockdown(const struct lockdown *ld)
{
	uint32_t	 promises = 0;

	/* Refuse a bad request before anything has changed. */
	ld_check(ld);
	if (ld->ld_filter == LOCKDOWN_ALLOW)
		promises = ld_promises_parse(ld->ld_promises);
	ld_single_threaded();

	if (ld->ld_title != NULL)
		setproctitle("%s", ld->ld_title);
	if (ld->ld_chroot != NULL)
		ld_chroot(ld->ld_chroot);
	ld_bounding(ld);
	if (ld->ld_uid != (uid_t)-1)
		ld_setid(ld);
	ld_capsets(ld);
	ld_verify(ld);

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1)
		fatal("%s: PR_SET_NO_NEW_PRIVS", __func__);
	/* Said before: a process without "stdio" could not say it after. */
	log_debug("%s: %s: %s", __func__,
	    ld->ld_title != NULL ? ld->ld_title : "process",
	    ld->ld_filter == LOCKDOWN_ALLOW ? ld->ld_promises : "deny list");
	if (ld_filter_load(ld->ld_filter, promises) == -1)
		fatalx("%s: cannot load the seccomp filter", __func__);
}

int
lockdown_filter_load(enum lockdown_filter filter, const char *promises)
{
	uint32_t	 bits = 0;

	if (filter == LOCKDOWN_ALLOW)
		bits = ld_promises_parse(promises);
	else if (filter != LOCKDOWN_DENY)
		fatalx("%s: unknown filter %d", __func__, (int)filter);
	return (ld_filter_load(filter, bits));
}

/* "stdio recvfd": a set of promises; an unknown name is fatal. */
static uint32_t
ld_promises_parse(const char *promises)
{
	char		*copy, *p, *word;
	uint32_t	 bits = 0;
	size_t		 i;

	if (promises == NULL)
		fatalx("%s: no promises for an allowlist", __func__);
	if ((copy = strdup(promises)) == NULL)
		fatal("%s: strdup", __func__);
	p = copy;
	while ((word = strsep(&p, " ")) != NULL) {
		if (*word == '\0')
			continue;
		for (i = 0; i < sizeof(ld_promise_names) /
		    sizeof(ld_promise_names[0]); i++)
			if (strcmp(word, ld_promise_names[i].lp_name) == 0)
				break;
		if (i == sizeof(ld_promise_names) / sizeof(ld_promise_names[0]))
			fatalx("%s: unknown promise \"%s\"", __func__, word);
		bits |= ld_promise_names[i].lp_bit;
	}
	free(copy);
	return (bits);
}

static int
ld_filter_load(enum lockdown_filter filter, uint32_t promises)
{
	scmp_filter_ctx	 ctx;
	uint32_t	 deflt;
	size_t		 i;
	int		 r;

	if (filter == LOCKDOWN_ALLOW)
		deflt = lockdown_log_only ? SCMP_ACT_LOG :
		    SCMP_ACT_KILL_PROCESS;
	else
		deflt = SCMP_ACT_ALLOW;
	if ((ctx = seccomp_init(deflt)) == NULL) {
		log_warnx("%s: seccomp_init failed", __func__);
		return (-1);
	}
	/*
	 * Only the native ABI is in the filter.  i386 (int 0x80) is another
	 * architecture and takes the bad-arch action; libseccomp also sends
	 * x32 numbers (bit 30 set) there for an x86_64 filter.  Both kill
	 * the whole process, even when only logging (never legitimate).
	 */
	if ((r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH,
	    SCMP_ACT_KILL_PROCESS)) < 0 ||
	    (r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1)) < 0) {
		errno = -r;
		log_warn("%s: seccomp_attr_set", __func__);
		goto fail;
	}

	if (filter == LOCKDOWN_DENY) {
		for (i = 0; i < sizeof(ld_denied) / sizeof(ld_denied[0]); i++) {
			if (ld_denied[i].ld_nr < 0)
				continue;	/* not on this architecture */
			if ((r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM),
			    ld_denied[i].ld_nr, 0)) < 0) {
				errno = -r;
				log_warn("%s: deny %s", __func__,
				    ld_denied[i].ld_name);
				goto fail;
			}
		}
	} else {
		if (ld_calls_add(ctx, ld_calls, sizeof(ld_calls) /
		    sizeof(ld_calls[0]), promises) == -1)
			goto fail;
#ifdef FENCED_SANITIZE
		/* Whatever the promises: the runtimes are in every process. */
		if (ld_calls_add(ctx, ld_san_calls, sizeof(ld_san_calls) /
		    sizeof(ld_san_calls[0]), LDP_STDIO) == -1)
			goto fail;
#endif
	}

	if ((r = seccomp_load(ctx)) < 0) {
		errno = -r;
		log_warn("%s: seccomp_load", __func__);
		goto fail;
	}
	seccomp_release(ctx);
	return (0);
 fail:
	seccomp_release(ctx);
	return (-1);
}

/* Add each call of the table that one of the promises allows. */
static int
ld_calls_add(scmp_filter_ctx ctx, const struct ld_call *calls, size_t n,
    uint32_t promises)
{
	size_t	 i;

	for (i = 0; i < n; i++) {
		if ((calls[i].lc_promises & promises) == 0)
			continue;
		if (calls[i].lc_nr < 0)
			continue;	/* not on this architecture */
		if (ld_call_add(ctx, &calls[i]) == -1)
			return (-1);
	}
	return (0);
}

static int
ld_call_add(scmp_filter_ctx ctx, const struct ld_call *lc)
{
	static const scmp_datum_t fcntl_cmds[] = {
		F_GETFD, F_SETFD, F_GETFL, F_SETFL, F_DUPFD, F_DUPFD_CLOEXEC
	};
	static const scmp_datum_t ioctl_reqs[] = { FIONREAD, TCGETS };
#ifdef FENCED_SANITIZE
	static const scmp_datum_t san_prctls[] = {
		PR_GET_DUMPABLE, PR_SET_DUMPABLE, PR_SET_PTRACER
	};
#endif
	uint32_t action;
	size_t	 i;
	int	 r;

	action = lc->lc_errno ? SCMP_ACT_ERRNO(lc->lc_errno) : SCMP_ACT_ALLOW;
	switch (lc->lc_arg) {
	case LDA_ANY:
		r = seccomp_rule_add(ctx, action, lc->lc_nr, 0);
		break;
	case LDA_NOEXEC:
		r = seccomp_rule_add(ctx, action, lc->lc_nr, 1,
		    SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
		break;
	case LDA_NOADDR:
		r = seccomp_rule_add(ctx, action, lc->lc_nr, 1,
		    SCMP_A4(SCMP_CMP_EQ, 0, 0));
		break;
	case LDA_SELF:
		r = seccomp_rule_add(ctx, action, lc->lc_nr, 1,
		    SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)getpid(), 0));
		break;
	case LDA_FDONLY:
		r = seccomp_rule_add(ctx, action, lc->lc_nr, 1,
		    SCMP_A3(SCMP_CMP_MASKED_EQ, AT_EMPTY_PATH, AT_EMPTY_PATH));
		break;
	case LDA_GETLIMIT:
		r = seccomp_rule_add(ctx, action, lc->lc_nr, 2,
		    SCMP_A0(SCMP_CMP_EQ, 0, 0), SCMP_A2(SCMP_CMP_EQ, 0, 0));
		break;
	case LDA_FCNTL:
		for (i = 0, r = 0; r == 0 &&
		    i < sizeof(fcntl_cmds) / sizeof(fcntl_cmds[0]); i++)
			r = seccomp_rule_add(ctx, action, lc->lc_nr, 1,
			    SCMP_A1(SCMP_CMP_EQ, fcntl_cmds[i], 0));
		break;
	case LDA_SYSLOG:
		r = seccomp_rule_add(ctx, action, lc->lc_nr, 3,
		    SCMP_A0(SCMP_CMP_EQ, AF_UNIX, 0),
		    SCMP_A1(SCMP_CMP_EQ, SOCK_DGRAM | SOCK_CLOEXEC, 0),
		    SCMP_A2(SCMP_CMP_EQ, 0, 0));
		break;
	case LDA_OUTBOUND:
		for (i = 0, r = 0; r == 0 && i < 4; i++)
			r = seccomp_rule_add(ctx, action, lc->lc_nr, 3,
			    SCMP_A0(SCMP_CMP_EQ, i < 2 ? AF_INET : AF_INET6, 0),
			    SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffULL &
			    ~(scmp_datum_t)(SOCK_NONBLOCK | SOCK_CLOEXEC),
			    i % 2 ? SOCK_DGRAM : SOCK_STREAM),
			    SCMP_A2(SCMP_CMP_EQ, 0, 0));
		break;
	case LDA_PAIR:
		r = seccomp_rule_add(ctx, action, lc->lc_nr, 3,
		    SCMP_A0(SCMP_CMP_EQ, AF_UNIX, 0),
		    SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffULL &
		    ~(scmp_datum_t)(SOCK_NONBLOCK | SOCK_CLOEXEC), SOCK_STREAM),
		    SCMP_A2(SCMP_CMP_EQ, 0, 0));
		break;
	case LDA_IOCTL:
		for (i = 0, r = 0; r == 0 &&
		    i < sizeof(ioctl_reqs) / sizeof(ioctl_reqs[0]); i++)
			r = seccomp_rule_add(ctx, action, lc->lc_nr, 1,
			    SCMP_A1(SCMP_CMP_EQ, ioctl_reqs[i], 0));
		break;
#ifdef FENCED_SANITIZE
	case LDA_SAN_PRCTL:
		for (i = 0, r = 0; r == 0 &&
		    i < sizeof(san_prctls) / sizeof(san_prctls[0]); i++)
			r = seccomp_rule_add(ctx, action, lc->lc_nr, 1,
			    SCMP_A0(SCMP_CMP_EQ, san_prctls[i], 0));
		break;
	case LDA_SAN_CLONE:
		r = seccomp_rule_add(ctx, action, lc->lc_nr, 1,
		    SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_VM | CLONE_UNTRACED,
		    CLONE_VM | CLONE_UNTRACED));
		break;
#endif
	default:
		r = -EINVAL;
		break;
	}
	if (r < 0) {
		errno = -r;
		log_warn("%s: %s", __func__, lc->lc_name);
		return (-1);
	}
	return (0);
}

static int
ld_kept(const struct lockdown *ld, cap_value_t c)
{
	size_t	 i;

	for (i = 0; i < ld->ld_ncaps; i++)
		if (ld->ld_caps[i] == c)
			return (1);
	return (0);
}

/*
 * Requests that cannot be honoured, refused before any step.  A kept
 * capability must be ours to keep: one the service manager already took
 * from the bounding set cannot come back.
 */
static void
ld_check(const struct lockdown *ld)
{
	cap_t		 have;
	cap_flag_value_t permitted;
	char		*name;
	size_t		 i;

	if (ld->ld_filter != LOCKDOWN_ALLOW && ld->ld_filter != LOCKDOWN_DENY)
		fatalx("%s: unknown filter %d", __func__, (int)ld->ld_filter);
	if (ld->ld_ncaps > 0 && ld->ld_caps == NULL)
		fatalx("%s: no capability list", __func__);
	if ((have = cap_get_proc()) == NULL)
		fatal("%s: cap_get_proc", __func__);
	for (i = 0; i < ld->ld_ncaps; i++) {
		if (ld->ld_caps[i] < 0 || ld->ld_caps[i] >= cap_max_bits())
			fatalx("%s: capability %d unknown to this kernel",
			    __func__, ld->ld_caps[i]);
		if (cap_get_flag(have, ld->ld_caps[i], CAP_PERMITTED,
		    &permitted) == -1)
			fatal("%s: cap_get_flag", __func__);
		if (permitted != CAP_SET || cap_get_bound(ld->ld_caps[i]) != 1) {
			name = cap_to_name(ld->ld_caps[i]);
			fatalx("%s: cannot keep %s: not in this process's "
			    "permitted or bounding set", __func__,
			    name != NULL ? name : "a capability");
		}
	}
	cap_free(have);
	if (ld->ld_uid == (uid_t)-1)
		return;
	if (ld->ld_uid == 0 || ld->ld_gid == 0 || ld->ld_gid == (gid_t)-1)
		fatalx("%s: cannot drop to uid %ld gid %ld", __func__,
		    (long)ld->ld_uid, (long)ld->ld_gid);
	/* Either would make the change of ids undoable. */
	if (ld_kept(ld, CAP_SETUID) || ld_kept(ld, CAP_SETGID))
		fatalx("%s: CAP_SETUID/CAP_SETGID kept with a new uid",
		    __func__);
}

/*
 * Credentials and capabilities are per thread: a second thread would
 * keep root.  Count them while /proc is still in reach.
 */
static void
ld_single_threaded(void)
{
	DIR		*d;
	struct dirent	*de;
	int		 n = 0;

	if ((d = opendir("/proc/self/task")) == NULL)
		fatal("%s: /proc/self/task", __func__);
	while ((de = readdir(d)) != NULL)
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	if (n != 1)
		fatalx("%s: %d threads; lock down before starting any",
		    __func__, n);
}

/*
 * Only into a directory root owns, nobody else can write to, and that
 * holds nothing.  The checks and the chroot work on one descriptor, so
 * the directory checked is the directory entered.
 */
static void
ld_chroot(const char *path)
{
	struct stat	 st;
	struct dirent	*de;
	DIR		*d;
	int		 fd, dfd;

	if ((fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1)
		fatal("%s: %s", __func__, path);
	if (fstat(fd, &st) == -1)
		fatal("%s: fstat %s", __func__, path);
	if (st.st_uid != 0)
		fatalx("%s: %s: owned by uid %ld, not root", __func__, path,
		    (long)st.st_uid);
	if (st.st_mode & (S_IWGRP | S_IWOTH))
		fatalx("%s: %s: writable by group or other (mode %04o)",
		    __func__, path, (unsigned)(st.st_mode & 07777));

	if ((dfd = fcntl(fd, F_DUPFD_CLOEXEC, 0)) == -1)
		fatal("%s: dup", __func__);
	if ((d = fdopendir(dfd)) == NULL)
		fatal("%s: fdopendir %s", __func__, path);
	errno = 0;
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		fatalx("%s: %s: not empty (%s)", __func__, path, de->d_name);
	}
	if (errno != 0)
		fatal("%s: readdir %s", __func__, path);
	closedir(d);

	if (fchdir(fd) == -1)
		fatal("%s: fchdir %s", __func__, path);
	if (chroot(".") == -1)
		fatal("%s: chroot %s", __func__, path);
	if (chdir("/") == -1)
		fatal("%s: chdir /", __func__);
	close(fd);
}

/*
 * The bounding set, while CAP_SETPCAP is still ours: nothing this
 * process or its descendants execute can gain what is not kept here.
 */
static void
ld_bounding(const struct lockdown *ld)
{
	cap_value_t	 c;
	int		 max = cap_max_bits();

	for (c = 0; c < max; c++) {
		if (ld_kept(ld, c))
			continue;
		switch (cap_get_bound(c)) {
		case 0:
			continue;
		case 1:
			break;
		default:
			fatal("%s: cap_get_bound %d", __func__, c);
		}
		if (cap_drop_bound(c) == -1)
			fatal("%s: drop capability %d from the bounding set",
			    __func__, c);
	}
	if (cap_reset_ambient() == -1)
		fatal("%s: clear the ambient set", __func__);
}

/*
 * Groups, gid, uid.  Securebits first, while CAP_SETPCAP is ours: a uid 0
 * process (none can become one again) would get no capabilities from
 * execve(), and nothing can raise an ambient capability.  keep_caps is
 * set only when capabilities must survive the change of uid.
 */
static void
ld_setid(const struct lockdown *ld)
{
	unsigned	 bits;

	bits = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED |
	    SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;
	bits |= ld->ld_ncaps > 0 ? SECBIT_KEEP_CAPS : SECBIT_KEEP_CAPS_LOCKED;
	if (cap_set_secbits(bits) == -1)
		fatal("%s: securebits", __func__);

	if (setgroups(1, &ld->ld_gid) == -1)
		fatal("%s: setgroups", __func__);
	if (setresgid(ld->ld_gid, ld->ld_gid, ld->ld_gid) == -1)
		fatal("%s: setresgid", __func__);
	if (setresuid(ld->ld_uid, ld->ld_uid, ld->ld_uid) == -1)
		fatal("%s: setresuid", __func__);
	if (ld->ld_ncaps > 0 && prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) == -1)
		fatal("%s: PR_SET_KEEPCAPS", __func__);
}

/* Effective, permitted and inheritable: exactly the kept list. */
static void
ld_capsets(const struct lockdown *ld)
{
	cap_t	 caps;

	if ((caps = cap_init()) == NULL)
		fatal("%s: cap_init", __func__);
	if (ld->ld_ncaps > 0 &&
	    (cap_set_flag(caps, CAP_EFFECTIVE, ld->ld_ncaps, ld->ld_caps,
	    CAP_SET) == -1 ||
	    cap_set_flag(caps, CAP_PERMITTED, ld->ld_ncaps, ld->ld_caps,
	    CAP_SET) == -1 ||
	    cap_set_flag(caps, CAP_INHERITABLE, ld->ld_ncaps, ld->ld_caps,
	    CAP_SET) == -1))
		fatal("%s: cap_set_flag", __func__);
	if (cap_set_proc(caps) == -1)
		fatal("%s: cap_set_proc", __func__);
	cap_free(caps);
}

/*
 * After lockdown(), one kept capability this process turns out not to
 * need (the fencer's CAP_SYS_CHROOT where runsc cannot run): gone from
 * every set, the bounding set too, and read back.  Fatal if it stays.
 */
void
lockdown_give_up(cap_value_t c)
{
	cap_t		 caps;
	cap_flag_value_t v;

	if (cap_get_bound(c) == 1 && cap_drop_bound(c) == -1)
		fatal("%s: drop capability %d from the bounding set",
		    __func__, c);
	if ((caps = cap_get_proc()) == NULL)
		fatal("%s: cap_get_proc", __func__);
	if (cap_set_flag(caps, CAP_EFFECTIVE, 1, &c, CAP_CLEAR) == -1 ||
	    cap_set_flag(caps, CAP_PERMITTED, 1, &c, CAP_CLEAR) == -1 ||
	    cap_set_flag(caps, CAP_INHERITABLE, 1, &c, CAP_CLEAR) == -1 ||
	    cap_set_proc(caps) == -1)
		fatal("%s: capability %d", __func__, c);
	cap_free(caps);
	if ((caps = cap_get_proc()) == NULL)
		fatal("%s: cap_get_proc", __func__);
	if (cap_get_bound(c) != 0 ||
	    cap_get_flag(caps, c, CAP_PERMITTED, &v) == -1 || v != CAP_CLEAR)
		fatalx("%s: capability %d is still held", __func__, c);
	cap_free(caps);
}

/* Read everything back: trust the kernel's answer, not our calls. */
static void
ld_verify(const struct lockdown *ld)
{
	cap_t		 want, have;
	cap_value_t	 c;
	uid_t		 ru, eu, su;
	gid_t		 rg, eg, sg, groups[2];
	int		 max = cap_max_bits(), kept;

	if ((want = cap_init()) == NULL || (have = cap_get_proc()) == NULL)
		fatal("%s: cap_get_proc", __func__);
	if (ld->ld_ncaps > 0 &&
	    (cap_set_flag(want, CAP_EFFECTIVE, ld->ld_ncaps, ld->ld_caps,
	    CAP_SET) == -1 ||
	    cap_set_flag(want, CAP_PERMITTED, ld->ld_ncaps, ld->ld_caps,
	    CAP_SET) == -1 ||
	    cap_set_flag(want, CAP_INHERITABLE, ld->ld_ncaps, ld->ld_caps,
	    CAP_SET) == -1))
		fatal("%s: cap_set_flag", __func__);
	if (cap_compare(want, have) != 0)
		fatalx("%s: capabilities differ from the kept list", __func__);
	cap_free(want);
	cap_free(have);
	for (c = 0; c < max; c++) {
		kept = ld_kept(ld, c);
		if (cap_get_bound(c) != kept)
			fatalx("%s: bounding set: capability %d", __func__, c);
		if (cap_get_ambient(c) != 0)
			fatalx("%s: ambient set: capability %d", __func__, c);
	}

	if (ld->ld_uid == (uid_t)-1)
		return;
	if (getresuid(&ru, &eu, &su) == -1 || getresgid(&rg, &eg, &sg) == -1)
		fatal("%s: getresuid", __func__);
	if (ru != ld->ld_uid || eu != ld->ld_uid || su != ld->ld_uid ||
	    rg != ld->ld_gid || eg != ld->ld_gid || sg != ld->ld_gid)
		fatalx("%s: ids not changed", __func__);
	if (getgroups(2, groups) != 1 || groups[0] != ld->ld_gid)
		fatalx("%s: supplementary groups not dropped", __func__);
	if (setuid(0) != -1 || seteuid(0) != -1)
		fatalx("%s: could become root again", __func__);
	if (setgid(0) != -1 || setegid(0) != -1)
		fatalx("%s: could become gid 0 again", __func__);
}
