/*
 * A fence's first process born in its cgroup v2: clone3() with
 * CLONE_INTO_CGROUP and the cgroup's directory, so that it never runs
 * a single instruction outside the cgroup and nobody moves it.  Moving
 * a process into a v2 cgroup (a write to cgroup.procs) takes the
 * kernel's cgroup_threadgroup_rwsem for writing, whose per-cpu write
 * side waits out an RCU grace period: milliseconds a boot (v1 has
 * `tasks' for one thread, which v2 has only in threaded subtrees, see
 * cg_v1.c).  A process cloned into its cgroup takes that lock for
 * reading only, as every fork does.
 *
 * Whether this kernel and whatever filter we run under (a container
 * runtime's seccomp profile may answer ENOSYS or EPERM for clone3) take
 * clone3 with CLONE_INTO_CGROUP is asked once, without making a
 * process (cg_clone3_ok()), and said once at debug.  Where they do not,
 * the first process joins as before, writing cgroup.procs itself before
 * it does anything else: slower, never weaker.  Failures of the clone
 * itself are the boot's, with their reason: nothing falls back then.
 *
 * glibc (2.36) has no clone3() wrapper, and the child of a clone3 with
 * a stack of its own (or CLONE_VM) cannot return through syscall()'s
 * frame: cg_clone3_raw() below does what clone() does, the child
 * calling fn(arg) on its new stack and exiting with its value.  Only
 * x86-64 has it; elsewhere the first process joins by its write.
 */
#include <sys/types.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "cg_impl.h"

#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP	0x200000000ULL
#endif
#ifndef CLONE_PIDFD
#define CLONE_PIDFD		0x00001000
#endif
#ifndef SYS_clone3
#define SYS_clone3		435
#endif

/* struct clone_args of the kernel's uapi, its third size (5.7). */
struct cg_clone_args {
	uint64_t	 ca_flags;
	uint64_t	 ca_pidfd;
	uint64_t	 ca_child_tid;
	uint64_t	 ca_parent_tid;
	uint64_t	 ca_exit_signal;
	uint64_t	 ca_stack;
	uint64_t	 ca_stack_size;
	uint64_t	 ca_tls;
	uint64_t	 ca_set_tid;
	uint64_t	 ca_set_tid_size;
	uint64_t	 ca_cgroup;
};

#if defined(__x86_64__)
/*
 * long cg_clone3_raw(struct cg_clone_args *, size_t, int (*fn)(void *),
 *     void *arg): the raw system call's value (-errno on failure) in
 * the parent.  In the child: with fn, fn(arg) on the stack the
 * arguments gave, then exit(2) with its value; without fn, 0, as fork()
 * returns (only without CLONE_VM and a stack of its own: the child
 * goes on in its copy of our frames).  fn and arg wait in r8 and r9,
 * which the system call leaves alone in both processes.
 */
long	cg_clone3_raw(struct cg_clone_args *, size_t, int (*)(void *),
	    void *);
__asm__(
	".pushsection .text\n"
	".globl cg_clone3_raw\n"
	".hidden cg_clone3_raw\n"
	".type cg_clone3_raw, @function\n"
	"cg_clone3_raw:\n"
	"	.cfi_startproc\n"
	"	movq	%rdx, %r8\n"
	"	movq	%rcx, %r9\n"
	"	movl	$435, %eax\n"
	"	syscall\n"
	"	testq	%rax, %rax\n"
	"	jnz	1f\n"
	"	testq	%r8, %r8\n"
	"	jnz	2f\n"
	"1:	ret\n"
	"2:	.cfi_undefined rip\n"
	"	xorl	%ebp, %ebp\n"
	"	movq	%r9, %rdi\n"
	"	call	*%r8\n"
	"	movl	%eax, %edi\n"
	"	movl	$60, %eax\n"
	"	syscall\n"
	"	hlt\n"
	"	.cfi_endproc\n"
	".size cg_clone3_raw, . - cg_clone3_raw\n"
	".popsection\n");
#define CG_CLONE3_RAW	1
#endif

static int	cg_clone3_state;	/* 0: not asked, 1: usable, -1: not */

/*
 * Whether a first process may be born in its v2 cgroup here.  Asked
 * once: clone3 with CLONE_INTO_CGROUP and a descriptor no kernel takes
 * (above INT_MAX) fails with EINVAL where the call and the flag exist,
 * before any process is made; ENOSYS (no clone3, or a filter's answer),
 * EPERM (a filter's) or E2BIG (a clone3 older than the flag, 5.3 to
 * 5.6) say it cannot be used.
 */
int
cg_clone3_ok(void)
{
#ifdef CG_CLONE3_RAW
	struct cg_clone_args	 a;
	long			 r;
#endif

	if (cg_clone3_state != 0)
		return (cg_clone3_state == 1);
#ifdef CG_CLONE3_RAW
	memset(&a, 0, sizeof(a));
	a.ca_flags = CLONE_INTO_CGROUP;
	a.ca_cgroup = UINT64_MAX;
	r = cg_clone3_raw(&a, sizeof(a), NULL, NULL);
	if (r == 0)
		_exit(0);	/* no kernel makes this child; never ours */
	if (r > 0)
		(void)waitpid(r, NULL, __WALL);
	if (r == -EINVAL) {
		cg_clone3_state = 1;
		log_debug("cgroup v2: a fence's first process is born in its "
		    "cgroup (clone3 CLONE_INTO_CGROUP)");
		return (1);
	}
	cg_clone3_state = -1;
	log_debug("cgroup v2: clone3 CLONE_INTO_CGROUP refused here (%s): a "
	    "fence's first process joins its cgroup by writing cgroup.procs",
	    r < 0 ? strerror((int)-r) : "a child");
#else
	cg_clone3_state = -1;
	log_debug("cgroup v2: no clone3 here (this architecture): a fence's "
	    "first process joins its cgroup by writing cgroup.procs");
#endif
	return (0);
}

/*
 * A child born in the v2 cgroup whose directory cgfd is (cg_fence_make()
 * opened it): flags as clone()'s (the exit signal in the low byte;
 * CLONE_PIDFD writes the child's pidfd to *pidfd), stack and size its
 * stack (NULL, 0: the caller's, as fork() does).  With fn the child
 * runs fn(arg) and exits with its value; without, it returns 0, as
 * fork() does (then neither CLONE_VM nor a stack).  Never without
 * cg_clone3_ok().  -1 with errno on failure.
 *
 * The child of a clone3 without fn skips what glibc's fork() does in a
 * child (its atfork handlers, its record of the thread's id): it may
 * make system calls only, up to its execve or _exit.
 */
pid_t
cg_clone3(uint64_t flags, int cgfd, int *pidfd, void *stack, size_t size,
    int (*fn)(void *), void *arg)
{
#ifdef CG_CLONE3_RAW
	struct cg_clone_args	 a;
	long			 r;

	if (cg_clone3_state != 1 || cgfd < 0 || (fn == NULL &&
	    (stack != NULL || (flags & CLONE_VM)))) {
		errno = EINVAL;
		return (-1);
	}
	memset(&a, 0, sizeof(a));
	a.ca_flags = (flags & ~(uint64_t)0xff) | CLONE_INTO_CGROUP;
	a.ca_exit_signal = flags & 0xff;
	if (flags & CLONE_PIDFD)
		a.ca_pidfd = (uint64_t)(uintptr_t)pidfd;
	a.ca_stack = (uint64_t)(uintptr_t)stack;
	a.ca_stack_size = size;
	a.ca_cgroup = (uint64_t)cgfd;
	r = cg_clone3_raw(&a, sizeof(a), fn, arg);
	if (r < 0) {
		errno = (int)-r;
		return (-1);
	}
	return ((pid_t)r);
#else
	(void)flags; (void)cgfd; (void)pidfd; (void)stack; (void)size;
	(void)fn; (void)arg;
	errno = ENOSYS;
	return (-1);
#endif
}
