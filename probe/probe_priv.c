/*
 * The section "privileges": the outcome of calls the L1.5 policy
 * refuses, tried in a child (so a filter that kills takes the child, not
 * the probe), bounded in time.
 *
 * The arguments are chosen so the kernel alone answers something other
 * than EPERM to an unprivileged caller: an unfiltered keyctl returns a
 * keyring, an unfiltered bpf with a command no kernel knows says EINVAL,
 * a mount on a path procfs can never hold says ENOENT.  A filter says
 * EPERM (or ENOSYS, or kills with SIGSYS).  The prober judges; this
 * only reports "ok", the errno's name, the signal's name, or "timeout".
 *
 * Two children try the calls, each one after another, and leave each
 * outcome in a page they share with the probe before they try the next;
 * a call that kills a child is reported with the signal, and a new
 * child goes on with the calls of its group after it.  A child a call
 * each cost a fork and a wakeup apiece, most of the probe's time on a
 * loaded machine; now two children do, started before the other
 * sections (probe_privileges_start()) so that they run while those are
 * measured.  The order keeps every call from seeing what another
 * changed: the calls that leave the child as it was first, then
 * unshare_user (a user namespace of its own), then the i386 call, which
 * a filter answers by killing the child (SIGSYS) and a kernel without
 * IA32 emulation with SIGSEGV: last, so that its death leaves nothing
 * untried.  ptrace has the other child to itself: once it succeeds the
 * child is the probe's tracee, and a signal would stop it rather than
 * kill it.
 *
 * The section "surface" (common/surface.h) comes from the same first
 * child: its entries that are calls of this section are those calls,
 * tried once (io_uring, keyctl, perf_event, userns); the others are
 * tried beside them, the sockets and maps before unshare_user, nf_tables
 * and esp after it, in a network namespace of the child's own user
 * namespace where it could make one.  Each only opens or creates
 * something and closes it; none writes to anything but its own.
 */
#include <sys/types.h>
#include <sys/mman.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <linux/bpf.h>
#include <linux/if_alg.h>
#include <linux/io_uring.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netlink.h>
#include <linux/perf_event.h>
#include <linux/userfaultfd.h>
#include <linux/xfrm.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "probe.h"
#include "surface.h"

#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY	1
#endif
#define PROBE_BPF_NO_CMD	0x7fff	/* a bpf command no kernel has */
#define PROBE_NO_MOUNTPOINT	"/proc/.sandbox-probe-none"

/*
 * A try that could not be made (its own child could not be forked, or
 * ended before it could be tried on): "fork-failed", never a refusal.
 * No errno has this number.
 */
#define PROBE_NOT_TRIED		254

static long
probe_try_unshare_user(void)
{
	return (unshare(CLONE_NEWUSER));
}

static long
probe_try_keyctl(void)
{
	/* KEYCTL_GET_KEYRING_ID of KEY_SPEC_SESSION_KEYRING, no create. */
	return (syscall(SYS_keyctl, 0, -3, 0));
}

static long
probe_try_bpf(void)
{
	return (syscall(SYS_bpf, PROBE_BPF_NO_CMD, NULL, 0));
}

static long
probe_try_ptrace(void)
{
	return (syscall(SYS_ptrace, PTRACE_TRACEME, 0, NULL, NULL));
}

static long
probe_try_io_uring(void)
{
	struct io_uring_params	 p;

	memset(&p, 0, sizeof(p));
	return (syscall(SYS_io_uring_setup, 1, &p));
}

static long
probe_try_userfaultfd(void)
{
	return (syscall(SYS_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY));
}

static long
probe_try_perf(void)
{
	struct perf_event_attr	 a;

	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_SOFTWARE;
	a.size = sizeof(a);
	a.config = PERF_COUNT_SW_DUMMY;
	a.disabled = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	return (syscall(SYS_perf_event_open, &a, 0, -1, -1,
	    PERF_FLAG_FD_CLOEXEC));
}

static long
probe_try_mount(void)
{
	return (mount("none", PROBE_NO_MOUNTPOINT, "tmpfs", MS_NOSUID, NULL));
}

/* getpid through the i386 entry; a kernel without IA32 sends SIGSEGV. */
static long
probe_try_i386(void)
{
#if defined(__x86_64__)
	long	 r;

	__asm__ volatile("int $0x80" : "=a"(r) : "a"(20L)
	    : "memory", "r8", "r9", "r10", "r11");
	if (r < 0) {
		errno = (int)-r;
		return (-1);
	}
	return (0);
#else
	errno = ENOSYS;
	return (-1);
#endif
}

static long
probe_try_packet(void)
{
	return (socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0));
}

/* The surface's tries (common/surface.h): each opens and closes. */

/* A socket of a family, closed at once. */
static long
probe_try_family(int family, int type, int proto)
{
	int	 fd;

	if ((fd = socket(family, type | SOCK_CLOEXEC, proto)) == -1)
		return (-1);
	(void)close(fd);
	return (0);
}

#ifndef AF_RDS
#define AF_RDS		21
#endif
#ifndef AF_RXRPC
#define AF_RXRPC	33
#endif
#ifndef AF_VSOCK
#define AF_VSOCK	40
#endif

static long
probe_try_rds(void)
{
	return (probe_try_family(AF_RDS, SOCK_SEQPACKET, 0));
}

static long
probe_try_vsock(void)
{
	return (probe_try_family(AF_VSOCK, SOCK_STREAM, 0));
}

static long
probe_try_rxrpc(void)
{
	return (probe_try_family(AF_RXRPC, SOCK_DGRAM, PF_INET));
}

/*
 * AF_ALG as the 2026 reports reached it: a sha256 hash socket, and one
 * byte spliced into it from a pipe (the splice path, not only the
 * family).  The byte is the probe's own; the hash is never read.
 */
static long
probe_try_af_alg(void)
{
	struct sockaddr_alg	 sa;
	int			 s, op = -1, p[2] = { -1, -1 }, e = 0;
	long			 rv = -1;

	if ((s = socket(AF_ALG, SOCK_SEQPACKET | SOCK_CLOEXEC, 0)) == -1)
		return (-1);
	memset(&sa, 0, sizeof(sa));
	sa.salg_family = AF_ALG;
	memcpy(sa.salg_type, "hash", sizeof("hash"));
	memcpy(sa.salg_name, "sha256", sizeof("sha256"));
	if (bind(s, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
	    (op = accept4(s, NULL, NULL, SOCK_CLOEXEC)) != -1 &&
	    pipe2(p, O_CLOEXEC) == 0 && write(p[1], "x", 1) == 1 &&
	    splice(p[0], NULL, op, NULL, 1, 0) == 1)
		rv = 0;
	e = errno;
	if (p[0] != -1) {
		(void)close(p[0]);
		(void)close(p[1]);
	}
	if (op != -1)
		(void)close(op);
	(void)close(s);
	errno = e;
	return (rv);
}

/* An array map of one entry: what an unprivileged loader makes first. */
static long
probe_try_bpf_map(void)
{
	union bpf_attr	 a;
	long		 fd;

	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_ARRAY;
	a.key_size = 4;
	a.value_size = 4;
	a.max_entries = 1;
	if ((fd = syscall(SYS_bpf, BPF_MAP_CREATE, &a, sizeof(a))) == -1)
		return (-1);
	(void)close((int)fd);
	return (0);
}

/*
 * A userfaultfd that may handle the kernel's own faults (no
 * UFFD_USER_MODE_ONLY: that one is the privileges call), else one from
 * /dev/userfaultfd; the call's errno when neither.
 */
static long
probe_try_uffd_kernel(void)
{
	long	 fd;
	int	 dev, e;

	if ((fd = syscall(SYS_userfaultfd, O_CLOEXEC)) != -1) {
		(void)close((int)fd);
		return (0);
	}
	e = errno;
#ifdef USERFAULTFD_IOC_NEW
	if ((dev = open("/dev/userfaultfd", O_RDWR | O_CLOEXEC)) != -1) {
		fd = ioctl(dev, USERFAULTFD_IOC_NEW, O_CLOEXEC);
		(void)close(dev);
		if (fd != -1) {
			(void)close((int)fd);
			return (0);
		}
	}
#else
	(void)dev;
#endif
	errno = e;
	return (-1);
}

static void	probe_priv_forget(void);

/*
 * The process to attach to: a child that keeps nothing of the probe's
 * (no descriptor, no secret, not the page of outcomes) and only then
 * lets itself be traced, as any process of the fence may.  It stops
 * itself so the attach comes after that; its parent's end or a second
 * is its end.
 */
#define PROBE_FD_SWEEP	4096	/* without close_range(): the probe's are
				   the first few */
static __attribute__((noreturn)) void
probe_ptrace_target(void)
{
	int	 fd;

	(void)prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	if (close_range(0, ~0U, 0) == -1)
		for (fd = 0; fd < PROBE_FD_SWEEP; fd++)
			(void)close(fd);
	probe_priv_forget();
	(void)prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
	alarm(1);
	(void)raise(SIGSTOP);
	_exit(0);
}

/* PTRACE_ATTACH of a process of its own uid that it forked. */
static long
probe_try_ptrace_attach(void)
{
	pid_t	 pid;
	long	 rv;
	int	 st = 0, e;

	if ((pid = fork()) == -1) {
		errno = PROBE_NOT_TRIED;
		return (-1);
	}
	if (pid == 0)
		probe_ptrace_target();
	/* Stopped: it made itself traceable first.  Gone: reaped. */
	while (waitpid(pid, &st, WUNTRACED) == -1 && errno == EINTR)
		;
	if (!WIFSTOPPED(st)) {
		errno = PROBE_NOT_TRIED;
		return (-1);
	}
	rv = syscall(SYS_ptrace, PTRACE_ATTACH, pid, NULL, NULL);
	e = errno;
	(void)kill(pid, SIGKILL);
	while (waitpid(pid, &st, 0) == -1 && errno == EINTR)
		;
	errno = e;
	return (rv == -1 ? -1 : 0);
}

/*
 * One netlink request of the probe's own (a read: no object is made)
 * and the kernel's first answer within half a second: 0 when the
 * subsystem answered (its reply, or an acknowledgement), else -1 with
 * the error it sent.
 */
#define PROBE_NL_MS	500
static long
probe_netlink_ask(int proto, uint16_t type, const void *body, size_t blen)
{
	struct {
		struct nlmsghdr	 h;
		char		 b[64];
	} req;
	union {
		struct nlmsghdr	 h;
		char		 b[4096];
	} ans;
	struct nlmsgerr	*ne;
	struct pollfd	 pfd;
	ssize_t		 n;
	int		 fd, e = EPROTO;

	if ((fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, proto)) == -1)
		return (-1);
	memset(&req, 0, sizeof(req));
	req.h.nlmsg_len = NLMSG_LENGTH(blen);
	req.h.nlmsg_type = type;
	req.h.nlmsg_flags = NLM_F_REQUEST;
	req.h.nlmsg_seq = 1;
	memcpy(NLMSG_DATA(&req.h), body, blen);
	pfd.fd = fd;
	pfd.events = POLLIN;
	if (send(fd, &req, req.h.nlmsg_len, 0) == -1)
		e = errno;
	else if (poll(&pfd, 1, PROBE_NL_MS) != 1)
		e = ETIMEDOUT;
	else if ((n = recv(fd, &ans, sizeof(ans), 0)) == -1)
		e = errno;
	else if (n >= (ssize_t)sizeof(ans.h) && NLMSG_OK(&ans.h, (size_t)n)) {
		if (ans.h.nlmsg_type != NLMSG_ERROR)
			e = 0;		/* its reply */
		else if (ans.h.nlmsg_len >= NLMSG_LENGTH(sizeof(*ne))) {
			ne = NLMSG_DATA(&ans.h);
			e = ne->error < 0 && ne->error > -PROBE_NOT_TRIED ?
			    -ne->error : 0;	/* 0: an acknowledgement */
		}
	}
	(void)close(fd);
	errno = e;
	return (e == 0 ? 0 : -1);
}

/*
 * A network namespace of the child's own, owned by the user namespace
 * unshare_user made for it (where that failed, this fails too and the
 * requests go to the fence's own network, where a user without
 * CAP_NET_ADMIN is refused): once, for nf_tables and esp.
 */
static void
probe_own_net(void)
{
	static int	 tried;

	if (!tried)
		(void)unshare(CLONE_NEWNET);
	tried = 1;
}

static long
probe_try_nf_tables(void)
{
	struct nfgenmsg	 g;

	probe_own_net();
	memset(&g, 0, sizeof(g));
	g.nfgen_family = AF_UNSPEC;
	g.version = NFNETLINK_V0;
	return (probe_netlink_ask(NETLINK_NETFILTER,
	    (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_GETGEN, &g, sizeof(g)));
}

static long
probe_try_esp(void)
{
	uint32_t	 flags = 0;

	probe_own_net();
	return (probe_netlink_ask(NETLINK_XFRM, XFRM_MSG_GETSPDINFO, &flags,
	    sizeof(flags)));
}

/* Every call, privileges' first in the order of that section. */
enum probe_call {
	PC_UNSHARE_USER = 0, PC_KEYCTL, PC_BPF, PC_PTRACE, PC_IO_URING,
	PC_USERFAULTFD, PC_PERF, PC_MOUNT, PC_I386, PC_PACKET,
	/* the surface's own */
	PC_AF_ALG, PC_RDS, PC_VSOCK, PC_RXRPC, PC_BPF_MAP, PC_UFFD_KERNEL,
	PC_PTRACE_ATTACH, PC_NF_TABLES, PC_ESP,
	PC_MAX
};

static const struct {
	const char	*pc_name;
	long		(*pc_fn)(void);
	int		 pc_priv;	/* in the privileges section */
} probe_calls[PC_MAX] = {
	[PC_UNSHARE_USER] = { "unshare_user", probe_try_unshare_user, 1 },
	[PC_KEYCTL] = { "keyctl", probe_try_keyctl, 1 },
	[PC_BPF] = { "bpf", probe_try_bpf, 1 },
	[PC_PTRACE] = { "ptrace", probe_try_ptrace, 1 },
	[PC_IO_URING] = { "io_uring_setup", probe_try_io_uring, 1 },
	[PC_USERFAULTFD] = { "userfaultfd", probe_try_userfaultfd, 1 },
	[PC_PERF] = { "perf_event_open", probe_try_perf, 1 },
	[PC_MOUNT] = { "mount", probe_try_mount, 1 },
	[PC_I386] = { "i386", probe_try_i386, 1 },
	[PC_PACKET] = { "socket_packet", probe_try_packet, 1 },
	[PC_AF_ALG] = { "af_alg", probe_try_af_alg, 0 },
	[PC_RDS] = { "rds", probe_try_rds, 0 },
	[PC_VSOCK] = { "vsock", probe_try_vsock, 0 },
	[PC_RXRPC] = { "rxrpc", probe_try_rxrpc, 0 },
	[PC_BPF_MAP] = { "bpf_map", probe_try_bpf_map, 0 },
	[PC_UFFD_KERNEL] = { "userfaultfd_kernel", probe_try_uffd_kernel, 0 },
	[PC_PTRACE_ATTACH] = { "ptrace_attach", probe_try_ptrace_attach, 0 },
	[PC_NF_TABLES] = { "nf_tables", probe_try_nf_tables, 0 },
	[PC_ESP] = { "esp", probe_try_esp, 0 },
};
#define PROBE_NCALLS	PC_MAX

/* Each entry of the surface: the call that tries it. */
static const unsigned char probe_surface_call[SURFACE_MAX] = {
	[SURFACE_AF_ALG] = PC_AF_ALG,
	[SURFACE_IO_URING] = PC_IO_URING,
	[SURFACE_NF_TABLES] = PC_NF_TABLES,
	[SURFACE_RDS] = PC_RDS,
	[SURFACE_VSOCK] = PC_VSOCK,
	[SURFACE_ESP] = PC_ESP,
	[SURFACE_RXRPC] = PC_RXRPC,
	[SURFACE_KEYCTL] = PC_KEYCTL,
	[SURFACE_BPF] = PC_BPF_MAP,
	[SURFACE_PERF_EVENT] = PC_PERF,
	[SURFACE_USERFAULTFD] = PC_UFFD_KERNEL,
	[SURFACE_USERNS] = PC_UNSHARE_USER,
	[SURFACE_PTRACE] = PC_PTRACE_ATTACH,
};

static const char *const probe_surface_ids[SURFACE_MAX] = {
#define SURFACE_ID(e, id, how, why)	[e] = id,
	SURFACE_TABLE(SURFACE_ID)
#undef SURFACE_ID
};

/*
 * The groups, one a child, each in the order it is tried: those that
 * leave the child as it was, unshare_user, the requests that want its
 * user namespace, and i386; then ptrace alone.
 */
#define PROBE_GROUPS		2
#define PROBE_GROUP_MAX		18
static const struct {
	size_t		 pg_n;
	unsigned char	 pg_calls[PROBE_GROUP_MAX];
} probe_groups[PROBE_GROUPS] = {
	{ 18, { PC_KEYCTL, PC_BPF, PC_IO_URING, PC_USERFAULTFD, PC_PERF,
	    PC_MOUNT, PC_PACKET, PC_AF_ALG, PC_RDS, PC_VSOCK, PC_RXRPC,
	    PC_BPF_MAP, PC_UFFD_KERNEL, PC_PTRACE_ATTACH, PC_UNSHARE_USER,
	    PC_NF_TABLES, PC_ESP, PC_I386 } },
	{ 1, { PC_PTRACE } },
};

/* What the children leave for the probe, in a page they share. */
#define PROBE_CALL_UNTRIED	(-1)
struct probe_calls_shared {
	int	 cs_trying[PROBE_GROUPS];	/* a position in the group */
	int	 cs_result[PROBE_NCALLS];	/* 0 ok, an errno, 255 */
};

static struct {
	struct probe_calls_shared *pr_cs;
	pid_t		 pr_pid[PROBE_GROUPS];		/* -1: none */
	size_t		 pr_from[PROBE_GROUPS];
	struct timespec	 pr_deadline;
	int		 pr_started;
	int		 pr_collected;
	const char	*pr_out[PROBE_NCALLS];		/* each outcome */
	char		 pr_sig[PROBE_NCALLS][32];
	struct probe_opts *pr_opts;			/* its secret */
} probe_priv;

/* What the ptrace target must not keep: the secret, the outcomes. */
static void
probe_priv_forget(void)
{
	if (probe_priv.pr_opts != NULL)
		explicit_bzero(probe_priv.pr_opts->po_canary_secret,
		    sizeof(probe_priv.pr_opts->po_canary_secret));
	if (probe_priv.pr_cs != MAP_FAILED && probe_priv.pr_cs != NULL)
		(void)munmap(probe_priv.pr_cs, sizeof(*probe_priv.pr_cs));
}

/* The child: group g's calls from position from on, each outcome left. */
static __attribute__((noreturn)) void
probe_calls_child(struct probe_calls_shared *cs, size_t g, size_t from)
{
	size_t	 j;
	int	 e, i;

	probe_child_setup();
	for (j = from; j < probe_groups[g].pg_n; j++) {
		i = probe_groups[g].pg_calls[j];
		__atomic_store_n(&cs->cs_trying[g], (int)j, __ATOMIC_SEQ_CST);
		errno = 0;
		if (probe_calls[i].pc_fn() >= 0)
			e = 0;
		else
			e = errno > 0 && errno < 255 ? errno : 255;
		__atomic_store_n(&cs->cs_result[i], e, __ATOMIC_SEQ_CST);
	}
	_exit(0);
}

/* A child for group g from position from; -1 if none could be made. */
static pid_t
probe_calls_fork(size_t g, size_t from)
{
	struct probe_calls_shared *cs = probe_priv.pr_cs;
	pid_t	 pid;
	size_t	 j;

	cs->cs_trying[g] = -1;
	for (j = from; j < probe_groups[g].pg_n; j++)
		cs->cs_result[probe_groups[g].pg_calls[j]] = PROBE_CALL_UNTRIED;
	if ((pid = fork()) == 0)
		probe_calls_child(cs, g, from);
	if (pid > 0)
		probe_child_add(pid);
	probe_priv.pr_from[g] = from;
	return (pid);
}

/*
 * Start the children before the other sections are measured: they run
 * meanwhile, and probe_privileges() waits for them.  o is kept only
 * for the ptrace target to forget the secret.
 */
void
probe_privileges_start(struct probe_opts *o)
{
	size_t	 g;

	probe_priv.pr_started = 1;
	probe_priv.pr_opts = o;
	probe_deadline(&probe_priv.pr_deadline, PROBE_PRIV_MS);
	probe_priv.pr_cs = mmap(NULL, sizeof(*probe_priv.pr_cs),
	    PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	for (g = 0; g < PROBE_GROUPS; g++)
		probe_priv.pr_pid[g] = probe_priv.pr_cs == MAP_FAILED ? -1 :
		    probe_calls_fork(g, 0);
}

static const char *
probe_call_outcome(int r)
{
	if (r == 0)
		return ("ok");
	if (r == PROBE_NOT_TRIED)
		return ("fork-failed");
	if (r > 0 && r < 255)
		return (probe_errname(r));
	return ("EUNKNOWN");
}

/* Where group g's child was when it ended: no lower than its first. */
static size_t
probe_calls_at(size_t g)
{
	int	 at;

	at = __atomic_load_n(&probe_priv.pr_cs->cs_trying[g],
	    __ATOMIC_SEQ_CST);
	return (at < (int)probe_priv.pr_from[g] ? probe_priv.pr_from[g] :
	    (size_t)at);
}

/*
 * Wait for group g's children, one after another until its calls are
 * all tried or the deadline; each call's outcome into out[].
 */
static void
probe_calls_collect(size_t g, const char **out, char sig[][32])
{
	struct probe_calls_shared *cs = probe_priv.pr_cs;
	size_t		 j, i, n = probe_groups[g].pg_n;
	pid_t		 pid = probe_priv.pr_pid[g];
	int		 st, at;

	while (pid != -1) {
		if (probe_wait_until(pid, &st, &probe_priv.pr_deadline) == -1) {
			/* The call it was in, and every one after it. */
			for (j = probe_calls_at(g); j < n; j++)
				out[probe_groups[g].pg_calls[j]] = "timeout";
			return;
		}
		/* Every outcome it left. */
		for (j = probe_priv.pr_from[g]; j < n; j++) {
			i = probe_groups[g].pg_calls[j];
			at = __atomic_load_n(&cs->cs_result[i],
			    __ATOMIC_SEQ_CST);
			if (at != PROBE_CALL_UNTRIED)
				out[i] = probe_call_outcome(at);
		}
		if (!WIFSIGNALED(st))
			return;
		/*
		 * A signal ended it in the call it was trying (or before
		 * the first, which then takes the blame): the next child
		 * starts after that one.
		 */
		j = probe_calls_at(g);
		i = probe_groups[g].pg_calls[j];
		out[i] = probe_signame(WTERMSIG(st), sig[i], sizeof(sig[0]));
		if (j + 1 >= n || (pid = probe_calls_fork(g, j + 1)) == -1)
			return;
	}
}

/* Every outcome, once: the children waited for and their page gone. */
static void
probe_calls_collect_all(void)
{
	size_t	 g, i;

	if (probe_priv.pr_collected)
		return;
	if (!probe_priv.pr_started)
		probe_privileges_start(NULL);
	probe_priv.pr_collected = 1;
	for (g = 0; probe_priv.pr_cs != MAP_FAILED && g < PROBE_GROUPS; g++)
		probe_calls_collect(g, probe_priv.pr_out, probe_priv.pr_sig);
	/* No child could be made for it, or one ended without a word. */
	for (i = 0; i < PROBE_NCALLS; i++)
		if (probe_priv.pr_out[i] == NULL)
			probe_priv.pr_out[i] = "fork-failed";
	if (probe_priv.pr_cs != MAP_FAILED)
		(void)munmap(probe_priv.pr_cs, sizeof(*probe_priv.pr_cs));
	probe_priv.pr_cs = MAP_FAILED;
}

void
probe_privileges(struct jw *w, const struct probe_opts *o)
{
	size_t	 i;

	probe_calls_collect_all();
	for (i = 0; i < PROBE_NCALLS; i++)
		if (probe_calls[i].pc_priv)
			jw_str(w, probe_calls[i].pc_name, probe_priv.pr_out[i]);
}

/* The section "surface": {id: outcome} for every entry of the table. */
void
probe_surface(struct jw *w, const struct probe_opts *o)
{
	size_t	 i;

	probe_calls_collect_all();
	for (i = 0; i < SURFACE_MAX; i++)
		jw_str(w, probe_surface_ids[i],
		    probe_priv.pr_out[probe_surface_call[i]]);
}
