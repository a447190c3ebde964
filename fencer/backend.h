/*
 * The seam between the fencer process and the code that builds a fence.
 *
 * The fencer (fencer_fence.c) decides everything a fence is: its owner,
 * uid and user, its home, its limits, tier and lifetime, its cgroup
 * folders and name, the program it runs first (the agent).  It runs the
 * fence's lifetime: the agent's handshake, the deadline, deaths, stops
 * and what the state reports.  A backend makes one kind of fence real
 * and takes it down again.  fencer_backends[] (fencer_backend.c) lists
 * them: native (native/backend_native.c), runsc (runsc/, gVisor;
 * docs/runsc.md), vm (vm/, QEMU; docs/vm.md) and, in development
 * builds only, mock and subprocess
 * (mock/, subprocess/; docs/backends.md).  A
 * boot naming a backend with no entry fails with backend-unavailable,
 * saying why (fencer_backend_missing()).
 *
 * Nothing outside the fencer learns which backend a fence has except
 * through the state it reports (f_info.f_backend, and what the backend
 * fills in: pid, timings, Landlock).
 */
#ifndef BACKEND_H
#define BACKEND_H

#include <sys/types.h>
#include <stddef.h>
#include <stdint.h>

#include "probe_expect.h"	/* struct probe_traits */

struct fence;
struct host_allow;

#define BACKEND_ERR_MAX		512

/* What the fencer decided for one boot, beyond the fence itself. */
struct backend_boot {
	const char	*bb_home_dev;	/* "": the home is a directory; else
					   the loop device of its image */
	const char	*bb_bindir;	/* host folder of fence-agent etc. */
	const char	*bb_init;	/* program name inside bb_bindir */
	char *const	*bb_argv;
	const char	*bb_cgroup_parent[3];	/* memory, pids, cpu */
	const char	*bb_cgroup_name;	/* in each */
	int		 bb_test_noseccomp;	/* FENCED_TEST_HOOKS only */
};

struct fencer_backend {
	int		 fb_id;		/* enum fence_backend: BACKEND_* */
	const char	*fb_bin_dir;	/* where the fence sees bb_bindir's
					   programs (fence-probe) */
	int		 fb_host_view;	/* the fence sees the host's paths:
					   its HOME is f_home itself */
	size_t		 fb_state_size;	/* of f->f_be, zeroed for a boot */
	int		 fb_agent_wait;	/* seconds to the agent's READY;
					   0: FENCER_AGENT_WAIT_SEC */
	uint64_t	 fb_memory_extra;	/* bytes the fence's memory
					   cgroup holds beyond its limit
					   (the vm backend's QEMU); its
					   owner's total counts them */
	/*
	 * What the judge of a probe is told of every fence of this
	 * backend (its kernel, what the host reads of it, how its home
	 * comes in): fencer_probe.c copies it into the expectation.
	 */
	struct probe_traits fb_probe;

	/*
	 * Optional: once, when the daemon starts (configured, no fence
	 * yet): find what the backend needs, and remove what a killed
	 * daemon left.
	 */
	void	(*fb_start)(void);
	/*
	 * Optional: why this backend can boot nothing (what fb_start
	 * found missing), or NULL.  A boot then fails with
	 * backend-unavailable before anything is made.
	 */
	const char *(*fb_unavailable)(void);

	/*
	 * Boot f as f->f_info and bb say; the fencer holds the channel's
	 * end *chan, the agent the other end.  On success the fence's
	 * first process runs the init, and the backend has filled in what
	 * the state shows of it: f_info.f_pid (the host pid the fencer
	 * reaps and the probe reads), f_timings but t_agent_us, the
	 * Landlock fields.  On failure nothing of the fence is left and
	 * err says why.
	 */
	int	(*fb_boot)(struct fence *, const struct backend_boot *, int *,
		    char *, size_t);
	/*
	 * Optional, where f_info.f_pid is not the process the host reads
	 * after a probe (docs/probe.md, "What grants each axis"): *procs,
	 * whose status, uid_map and network are the fence's processes',
	 * *files, whose mount table holds the fence's files, and in
	 * a->ha_root the host directory that table's root may be.  -1:
	 * not found (err says why), and the reading grants nothing.
	 */
	int	(*fb_host_procs)(struct fence *, pid_t *, pid_t *,
		    struct host_allow *, char *, size_t);
	/* The fencer reaped f_info.f_pid: nothing is left to wait for. */
	void	(*fb_reaped)(struct fence *);
	/*
	 * Kill every process of the fence, wait for them and remove what
	 * the backend made for it (the home stays).  *oom: the kernel
	 * killed a process of it for lack of memory.  Returns -1 if
	 * something could not be cleaned up (logged).
	 */
	int	(*fb_stop)(struct fence *, int *);

	/*
	 * Optional: the fencer reaped pid, which is no fence's pid 1: 1
	 * if it was a process of the backend's own (the vm backend's KVM
	 * try), 0 if not.
	 */
	int	(*fb_child)(pid_t, int);
	/* Optional: the daemon stops: end what the backend runs itself. */
	void	(*fb_fini)(void);
};

extern const struct fencer_backend	 backend_native;
extern const struct fencer_backend	 backend_runsc;
extern const struct fencer_backend	 backend_vm;
#ifdef FENCED_DEVELOPMENT_BACKENDS
extern const struct fencer_backend	 backend_mock;
extern const struct fencer_backend	 backend_subprocess;
#endif

/*
 * The native pieces the vm backend builds its jail from (QEMU runs as
 * pid 1 of a native fence): the spec of f's native fence (no channel,
 * nothing passed), and what its start measured into f's state.
 */
struct fence_spec;
struct fence_proc;
void	native_spec(const struct fence *, const struct backend_boot *,
	    struct fence_spec *);
void	native_started(struct fence *, const struct fence_proc *);

const struct fencer_backend	*fencer_backend(int);
int				 runsc_usable(void);	/* runsc/ */
int				 vm_kvm_kept(void);	/* vm/ */
void				 vm_kvm_dropped(void);
const char			*fencer_backend_missing(int);
void				 fencer_backends_start(void);
int				 fencer_backends_child(pid_t, int);
void				 fencer_backends_fini(void);
/* fencer_fence.c, for a backend's own jail (the vm backend's KVM try). */
void				 fencer_boot_args(const struct fence *,
				    struct backend_boot *);
const char			*fencer_cgroups_missing(void);

#endif /* BACKEND_H */
