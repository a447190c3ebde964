/*
 * The section "privileges": the outcome of calls the L1.5 policy
 * refuses, each tried in a child of its own (so a filter that kills
 * takes the child, not the probe), all at once, bounded in time.
 *
 * The arguments are chosen so the kernel alone answers something other
 * than EPERM to an unprivileged caller: an unfiltered keyctl returns a
 * keyring, an unfiltered bpf with a command no kernel knows says EINVAL,
 * a mount on a path procfs can never hold says ENOENT.  A filter says
 * EPERM (or ENOSYS, or kills with SIGSYS).  The prober judges; this
 * only reports "ok", the errno's name, the signal's name, or "timeout".
 */
#include <sys/types.h>
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

static pid_t
probe_call_start(size_t i)
{
	pid_t	 pid;
	int	 e;

	if ((pid = fork()) != 0) {
		if (pid > 0)
			probe_child_add(pid);
		return (pid);
	}
	probe_child_setup();
	if (probe_calls[i].pc_fn() >= 0)
		_exit(0);
	e = errno;
	_exit(e > 0 && e < 256 ? e : 255);
}

static const char *
probe_call_outcome(pid_t pid, const struct timespec *dl, char *buf,
    size_t len)
{
	int	 st;

	if (pid == -1)
		return ("fork-failed");
	if (probe_wait_until(pid, &st, dl) == -1)
		return ("timeout");
	if (WIFSIGNALED(st))
		return (probe_signame(WTERMSIG(st), buf, len));
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return ("ok");
	if (WIFEXITED(st) && WEXITSTATUS(st) != 255)
		return (probe_errname(WEXITSTATUS(st)));
	return ("EUNKNOWN");
}

void
probe_privileges(struct jw *w, const struct probe_opts *o)
{
	struct timespec	 dl;
	pid_t		 pids[PROBE_NCALLS];
	char		 sig[32];
	size_t		 i;

	probe_deadline(&dl, PROBE_PRIV_MS);
	for (i = 0; i < PROBE_NCALLS; i++)
		pids[i] = probe_call_start(i);
	for (i = 0; i < PROBE_NCALLS; i++)
		jw_str(w, probe_calls[i].pc_name,
		    probe_call_outcome(pids[i], &dl, sig, sizeof(sig)));
}
