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
 * One child tries the calls one after another and leaves each outcome
 * in a page it shares with the probe before it tries the next; a call
 * that kills it is reported with the signal and a new child goes on
 * with the calls after it.  A child a call each cost a fork and a
 * wakeup apiece, most of the probe's time on a loaded machine; now a
 * fence whose filter refuses with EPERM costs one child, and the L1.5
 * filter (whose int $0x80 is SIGSYS) two.  The calls that change the
 * child come last so that they change nothing another call sees:
 * unshare_user (a user namespace of its own) and ptrace (traced by the
 * probe: a later signal would stop it rather than kill it).
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
 * The order they are tried in (indexes of probe_calls[]): those that
 * leave the child changed last, ptrace the very last.
 */
static const unsigned char probe_call_order[PROBE_NCALLS] = {
	1, 2, 4, 5, 6, 7, 9, 8, 0, 3
};

/* What a child leaves for the probe, in a page they share. */
#define PROBE_CALL_UNTRIED	(-1)
struct probe_calls_shared {
	int	 cs_trying;		/* the position in the order, or -1 */
	int	 cs_result[PROBE_NCALLS]; /* 0 ok, an errno, 255: unknown */
};

/* The child: the calls from position from on, each outcome left. */
static __attribute__((noreturn)) void
probe_calls_child(struct probe_calls_shared *cs, size_t from)
{
	size_t	 j;
	int	 e, i;

	probe_child_setup();
	for (j = from; j < PROBE_NCALLS; j++) {
		i = probe_call_order[j];
		__atomic_store_n(&cs->cs_trying, (int)j, __ATOMIC_SEQ_CST);
		errno = 0;
		if (probe_calls[i].pc_fn() >= 0)
			e = 0;
		else
			e = errno > 0 && errno < 255 ? errno : 255;
		__atomic_store_n(&cs->cs_result[i], e, __ATOMIC_SEQ_CST);
	}
	_exit(0);
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

void
probe_privileges(struct jw *w, const struct probe_opts *o)
{
	struct probe_calls_shared *cs;
	struct timespec	 dl;
	const char	*out[PROBE_NCALLS];
	char		 sig[PROBE_NCALLS][32];
	size_t		 from = 0, i, j;
	pid_t		 pid;
	int		 st, at;

	for (i = 0; i < PROBE_NCALLS; i++)
		out[i] = NULL;
	cs = mmap(NULL, sizeof(*cs), PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	probe_deadline(&dl, PROBE_PRIV_MS);
	while (cs != MAP_FAILED && from < PROBE_NCALLS) {
		cs->cs_trying = -1;
		for (j = from; j < PROBE_NCALLS; j++)
			cs->cs_result[probe_call_order[j]] = PROBE_CALL_UNTRIED;
		if ((pid = fork()) == 0)
			probe_calls_child(cs, from);
		if (pid == -1)
			break;
		probe_child_add(pid);
		if (probe_wait_until(pid, &st, &dl) == -1) {
			/* The call it was in, and every one after it. */
			at = __atomic_load_n(&cs->cs_trying, __ATOMIC_SEQ_CST);
			for (j = at < (int)from ? from : (size_t)at;
			    j < PROBE_NCALLS; j++)
				out[probe_call_order[j]] = "timeout";
			from = PROBE_NCALLS;
			break;
		}
		/* Every outcome it left. */
		for (j = from; j < PROBE_NCALLS; j++) {
			i = probe_call_order[j];
			at = __atomic_load_n(&cs->cs_result[i],
			    __ATOMIC_SEQ_CST);
			if (at != PROBE_CALL_UNTRIED)
				out[i] = probe_call_outcome(at);
		}
		if (!WIFSIGNALED(st))
			break;
		/*
		 * A signal ended it in the call it was trying (or before
		 * the first, which then takes the blame): the next child
		 * starts after that one.
		 */
		at = __atomic_load_n(&cs->cs_trying, __ATOMIC_SEQ_CST);
		j = at < (int)from ? from : (size_t)at;
		i = probe_call_order[j];
		out[i] = probe_signame(WTERMSIG(st), sig[i], sizeof(sig[i]));
		from = j + 1;
	}
	/* No child could be made, or one ended without its outcomes. */
	for (i = 0; i < PROBE_NCALLS; i++)
		if (out[i] == NULL)
			out[i] = from < PROBE_NCALLS ? "fork-failed" :
			    "EUNKNOWN";
	for (i = 0; i < PROBE_NCALLS; i++)
		jw_str(w, probe_calls[i].pc_name, out[i]);
	if (cs != MAP_FAILED)
		(void)munmap(cs, sizeof(*cs));
}
