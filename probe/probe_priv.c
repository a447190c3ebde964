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
 */
#include <sys/types.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <linux/io_uring.h>
#include <linux/perf_event.h>

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "probe.h"

#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY	1
#endif
#define PROBE_BPF_NO_CMD	0x7fff	/* a bpf command no kernel has */
#define PROBE_NO_MOUNTPOINT	"/proc/.sandbox-probe-none"

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

/* In the order of the report. */
static const struct {
	const char	*pc_name;
	long		(*pc_fn)(void);
} probe_calls[] = {
	{ "unshare_user",	probe_try_unshare_user },
	{ "keyctl",		probe_try_keyctl },
	{ "bpf",		probe_try_bpf },
	{ "ptrace",		probe_try_ptrace },
	{ "io_uring_setup",	probe_try_io_uring },
	{ "userfaultfd",	probe_try_userfaultfd },
	{ "perf_event_open",	probe_try_perf },
	{ "mount",		probe_try_mount },
	{ "i386",		probe_try_i386 },
	{ "socket_packet",	probe_try_packet },
};
#define PROBE_NCALLS	(sizeof(probe_calls) / sizeof(probe_calls[0]))

/*
 * The groups, one a child, each in the order it is tried (indexes of
 * probe_calls[]): those that leave the child as it was, unshare_user and
 * i386; then ptrace alone.
 */
#define PROBE_GROUPS		2
#define PROBE_GROUP_MAX		9
static const struct {
	size_t		 pg_n;
	unsigned char	 pg_calls[PROBE_GROUP_MAX];
} probe_groups[PROBE_GROUPS] = {
	{ 9, { 1, 2, 4, 5, 6, 7, 9, 0, 8 } },
	{ 1, { 3 } },
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
} probe_priv;

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
 * meanwhile, and probe_privileges() waits for them.
 */
void
probe_privileges_start(void)
{
	size_t	 g;

	probe_priv.pr_started = 1;
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

void
probe_privileges(struct jw *w, const struct probe_opts *o)
{
	const char	*out[PROBE_NCALLS];
	char		 sig[PROBE_NCALLS][32];
	size_t		 g, i;

	if (!probe_priv.pr_started)
		probe_privileges_start();
	for (i = 0; i < PROBE_NCALLS; i++)
		out[i] = NULL;
	for (g = 0; probe_priv.pr_cs != MAP_FAILED && g < PROBE_GROUPS; g++)
		probe_calls_collect(g, out, sig);
	/* No child could be made for it, or one ended without a word. */
	for (i = 0; i < PROBE_NCALLS; i++)
		jw_str(w, probe_calls[i].pc_name, out[i] != NULL ? out[i] :
		    "fork-failed");
	if (probe_priv.pr_cs != MAP_FAILED)
		(void)munmap(probe_priv.pr_cs, sizeof(*probe_priv.pr_cs));
	probe_priv.pr_cs = MAP_FAILED;
}
