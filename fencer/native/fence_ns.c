/*
 * Namespaces of a fence.  clone() creates pid 1 in new mount, pid, ipc
 * and uts namespaces (and a network namespace at L2); pid 1 unshares its
 * cgroup namespace once it sits in the fence's cgroups, names its uts
 * namespace after the key and starts a session of its own.  Keyrings
 * have no namespace short of a user namespace, so pid 1 joins a fresh
 * session keyring of its own instead.
 *
 * pid 1 is cloned with CLONE_VM|CLONE_VFORK, as posix_spawn() does: no
 * copy of the caller's page tables (a fork of the fencer costs 2-5 ms on
 * a paravirtualised machine, this clone some 50 us), and the caller
 * sleeps until pid 1 has called execve or died, which is also the
 * moment fence_start() wants to return.  The price is that pid 1 must
 * not allocate or take locks before execve (fence_impl.h).  A pool
 * pid 1 (docs/pool.md) is cloned the same way: it executes the agent
 * at the split point, and the agent waits for a boot, not pid 1.
 *
 * On cgroup v2 the clone is a clone3 with CLONE_INTO_CGROUP, the same
 * flags and stack (common/cg_clone.c): pid 1 is born in the fence's
 * cgroup, counted and limited from its first instruction, and nothing
 * takes the kernel's cgroup_threadgroup_rwsem for writing to move it.
 */
#include <sys/types.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include <linux/keyctl.h>

#include <errno.h>
#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/asan_interface.h>
#endif
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fence.h"
#include "fence_impl.h"

#ifndef CLONE_PIDFD
#define CLONE_PIDFD	0x00001000
#endif

#define FENCE_STACK_SIZE	(256 * 1024)

static char	*fence_stack;		/* pid 1's stack until execve */

static int
fence_ns_stack(char *err, size_t errlen)
{
	long	 pg = sysconf(_SC_PAGESIZE);
	char	*p;

	if (fence_stack != NULL)
		return (0);
	p = mmap(NULL, FENCE_STACK_SIZE + pg, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (p == MAP_FAILED) {
		snprintf(err, errlen, "mmap stack: %s", strerror(errno));
		return (-1);
	}
	/* A guard page below, so an overflow faults instead of scribbling. */
	if (mprotect(p, pg, PROT_NONE) == -1) {
		snprintf(err, errlen, "mprotect stack: %s", strerror(errno));
		(void)munmap(p, FENCE_STACK_SIZE + pg);
		return (-1);
	}
	fence_stack = p + pg;
	return (0);
}

pid_t
fence_ns_clone(struct fence_ctx *ctx, int (*fn)(void *), int *pidfd,
    char *err, size_t errlen)
{
	sigset_t	 all, old;
	pid_t		 pid;
	int		 flags, saved;

	if (fence_ns_stack(err, errlen) == -1)
		return (-1);
	flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS |
	    CLONE_PIDFD | CLONE_VM | CLONE_VFORK | SIGCHLD;
	if (ctx->fc_tier >= TIER_L2)
		flags |= CLONE_NEWNET;

#ifdef __SANITIZE_ADDRESS__
	/*
	 * pid 1 runs on this stack with CLONE_VM, so AddressSanitizer's
	 * shadow of it is ours: clear what the last fence's frames left
	 * there, or their scopes read as use-after-scope in this one.
	 */
	ASAN_UNPOISON_MEMORY_REGION(fence_stack, FENCE_STACK_SIZE);
#endif
	/* No handler of ours may run in pid 1: it resets them all first. */
	sigfillset(&all);
	(void)sigprocmask(SIG_SETMASK, &all, &old);
	/* Born in its v2 cgroup where cg_fence_make() opened it for that. */
	if (ctx->fc_cg_born != -1)
		pid = cg_clone3(flags, ctx->fc_cg_born, pidfd, fence_stack,
		    FENCE_STACK_SIZE, fn, ctx);
	else
		pid = clone(fn, fence_stack + FENCE_STACK_SIZE, flags, ctx,
		    pidfd);
	saved = errno;
	(void)sigprocmask(SIG_SETMASK, &old, NULL);
	if (pid == -1) {
		snprintf(err, errlen, "%s: %s", ctx->fc_cg_born != -1 ?
		    "clone3 namespaces into the fence's cgroup" :
		    "clone namespaces", strerror(saved));
		return (-1);
	}
	return (pid);
}

/* Child side, once in the fence's cgroups: they become its root. */
int
fence_ns_cgroup(struct fence_ctx *ctx)
{
	if (unshare(CLONE_NEWCGROUP) == -1)
		return (fence_child_err(ctx, errno,
		    "unshare cgroup namespace"));
	return (0);
}

int
fence_ns_hostname(struct fence_ctx *ctx)
{
	const char	*key = ctx->fc_spec->fs_key;

	if (sethostname(key, strlen(key)) == -1)
		return (fence_child_err(ctx, errno, "sethostname %s", key));
	return (0);
}

/* No signal of the fence may reach the daemon's process group. */
int
fence_ns_session(struct fence_ctx *ctx)
{
	if (setsid() == -1)
		return (fence_child_err(ctx, errno, "setsid"));
	return (0);
}

/*
 * Child side, as the fence's uid: a new anonymous session keyring.
 * Without it the fence's processes kept the fencer's session keyring,
 * a root one that outlives every fence: keys written there by one fence
 * were read by the next, and by whatever else shares it on the host.
 * The keyring belongs to the fence's uid, is possessed by the fence's
 * processes alone and goes with the last of them.  What it cannot
 * separate is the uid's user keyring (@u), which is the host's at L1:
 * from L1.5 on the seccomp filter refuses keyctl and add_key
 * (docs/fence.md).
 */
int
fence_ns_keyring(struct fence_ctx *ctx)
{
	if (syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, NULL) == -1)
		return (fence_child_err(ctx, errno, "join a session keyring"));
	return (0);
}
