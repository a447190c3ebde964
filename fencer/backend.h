/*
 * The seam between the fencer process and the code that builds a fence.
 *
 * The fencer (fencer_fence.c) decides everything a fence is: its owner,
 * uid and user, its home, its limits, tier and lifetime, its cgroup
 * folders and name, the program it runs first (the agent).  It runs the
 * fence's lifetime: the agent's handshake, the deadline, deaths, stops
 * and what the state reports.  A backend makes one kind of fence real
 * and takes it down again.
 *
 * A backend is one folder under fencer/ and one row of fencer_backends[]
 * (fencer_backend.c, the only file that names one): struct
 * fencer_backend below, its traits and hooks.  fencer.c, fencer_fence.c
 * and fencer_probe.c reach a backend only through a row (f->f_backend,
 * fencer_backend()) or through the fencer_backends_*() calls that run a
 * hook of every row.  A backend reads struct fence, fencer_self (the
 * configuration, the event base) and the shared helpers (fencer_cg_*(),
 * fencer_host.h, fencer_view.h); of the fencer's boots and fences it
 * reaches only the calls at the end of this file.  A boot naming a backend with no row
 * fails with backend-unavailable, saying why (fencer_backend_missing()).
 * The folders today: native/ (the host kernel's namespaces; its warm
 * pool, docs/pool.md), runsc/ (gVisor; docs/runsc.md), vm/ (QEMU;
 * docs/vm.md), and in development builds only mock/ and subprocess/
 * (docs/backends.md).
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
	int		 bb_home_tree;	/* -1; else the home as a detached
					   mount (a branch's overlay,
					   fencer_snap.c), the fencer's */
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
	int		 fb_fdpass;	/* the agent's channel is a socket of
					   the host's kernel: descriptors
					   pass (a port tunnel's socket,
					   docs/interactive.md) */
	int		 fb_inner;	/* a boot may ask for the inner
					   boundary: gVisor inside the
					   fence's own kernel (docs/vm.md) */
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
	 * Why the system calls a fence of this backend is refused are not
	 * observed (docs/denials.md), or NULL where the backend's fb_boot
	 * says it per fence.  fb_refusal_errno: the errno a call its
	 * filter refuses by notification gets (fencer_denial.c); NULL
	 * where none does.
	 */
	const char *fb_denials_unobserved;
	int	(*fb_refusal_errno)(int);
	/*
	 * Optional: descriptors of the fence's memory and pids counters,
	 * which the broker reads around each command (docs/denials.md);
	 * -1 where there is none.
	 */
	void	(*fb_limit_fds)(struct fence *, int *, int *);

	/*
	 * Optional: once, when the daemon starts (configured, no fence
	 * yet): find what the backend needs, and sweep what a killed
	 * daemon left of the backend's own (runsc's containers and
	 * bundles).  The sweep is part of the start: it needs what the
	 * start found, and the backend says it is ready only after it.
	 */
	void	(*fb_start)(void);
	/*
	 * Optional: after every backend's fb_start, before the fencer
	 * serves a boot: give up the capabilities of fencer_caps[] that
	 * this backend alone needs and will not use here (lockdown.h).
	 */
	void	(*fb_lockdown)(void);
	/*
	 * Optional: why this backend can boot nothing (what fb_start
	 * found missing), or NULL.  A boot then fails with
	 * backend-unavailable before anything is made.
	 */
	const char *(*fb_unavailable)(void);
	/*
	 * Optional: the host doctor asks (fencer_doctor.c, docs/doctor.md):
	 * what the administrator should see of this backend (its program's
	 * path and version, its files and hashes) into the buffer, and any
	 * row of its own through fencer_doctor_row().  Whether it can boot
	 * is fb_unavailable's to say, never this hook's.
	 */
	void	(*fb_doctor)(char *, size_t);

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
	 * if it was a process of the backend's own (a warm fence's pid 1,
	 * the vm backend's KVM try), 0 if not.
	 */
	int	(*fb_child)(pid_t, int);

	/*
	 * Optional, all or none: fences built ahead of boots (native's
	 * warm pool, docs/pool.md), which the backend's fb_boot takes
	 * from.  fb_warm_start: the backends have started and locked
	 * down, building may begin.  fb_warm_reload: a reload, the
	 * configured sizes may have changed.  fb_warm_refill: a boot is
	 * over (its agent ready, or it failed): what was held back while
	 * it ran may go on.  fb_warm_fini: the daemon stops, before any
	 * fence is stopped: every fence built ahead goes.
	 */
	void	(*fb_warm_start)(void);
	void	(*fb_warm_reload)(void);
	void	(*fb_warm_refill)(void);
	void	(*fb_warm_fini)(void);

	/*
	 * Optional: the daemon stops, its fences are stopped: end what
	 * the backend runs itself.
	 */
	void	(*fb_fini)(void);
};

/* fencer_backend.c: the table, and each hook run for every row. */
const struct fencer_backend	*fencer_backend(int);
const char			*fencer_backend_missing(int);
int				 fencer_backend_of_kernel(int);
void				 fencer_backends_start(void);
void				 fencer_backends_lockdown(void);
int				 fencer_backends_child(pid_t, int);
void				 fencer_backends_warm_start(void);
void				 fencer_backends_warm_reload(void);
void				 fencer_backends_warm_refill(void);
void				 fencer_backends_warm_fini(void);
void				 fencer_backends_fini(void);

/*
 * What the fencer offers a backend (fencer_fence.c, fencer_uids.c),
 * for the fences it builds of its own beside the fencer's (native's
 * warm pool, the vm backend's KVM try): the boot's part of the spec
 * (f NULL: no fence's cgroup name), why fences can have no cgroup
 * limits here (NULL: they can), how many boots are under way, and a
 * fence uid held in memory for a fence with no home.
 */
void				 fencer_boot_args(const struct fence *,
				    struct backend_boot *);
const char			*fencer_cgroups_missing(void);
const char			*fencer_cgroups_refusal(void);
int				 fencer_booting(void);
int				 fencer_uid_hold(uid_t *, char *, size_t);
void				 fencer_uid_release(void);

/*
 * fencer_doctor.c: a row of the host doctor's report (enum check_kind,
 * enum check_status of msg.h; reason and fix are for anyone, as a
 * boot's error is, detail for admins alone), and whether a user
 * namespace can be made here (-1 with why).
 */
void				 fencer_doctor_row(int, const char *, int,
				    const char *, const char *, const char *);
int				 fencer_userns_check(char *, size_t);

#endif /* BACKEND_H */
