/*
 * Building one native fence.  fence_start() creates the cgroups, clones
 * the fence's first process into new namespaces, builds its filesystem,
 * drops it to the fence's uid with its tier's confinement and executes
 * the init program (the agent) as pid 1 of the fence.  The order of the
 * steps lives in fence.c and reads like the tier table of docs/design.md.
 * The fencer reaches this only through the native backend
 * (backend_native.c, ../backend.h); the regress suite's t_fence calls
 * it directly.
 */
#ifndef FENCE_H
#define FENCE_H

#include <sys/types.h>
#include <limits.h>
#include <stdint.h>

#include "fenced.h"
#include "fencer_view.h"

#define FENCE_ERR_MAX		512
#define FENCE_PASS_MAX		4	/* fs_pass[] */

/* Landlock features applied to a fence (fp_landlock). */
#define FENCE_LL_FS		0x01	/* filesystem rules */
#define FENCE_LL_SCOPE_ABSTRACT	0x02	/* abstract unix sockets scoped */
#define FENCE_LL_SCOPE_SIGNAL	0x04	/* signals scoped */
#define FENCE_LL_NET		0x08	/* TCP bind/connect rules */

#define FENCE_KVM_MAJOR		10	/* /dev/kvm: misc 232 */
#define FENCE_KVM_MINOR		232

struct fence_spec {
	char		 fs_key[FENCE_KEY_SIZE];
	int		 fs_tier;		/* enum fence_tier */
	uid_t		 fs_uid;		/* the fence's processes */
	gid_t		 fs_gid;
	char		 fs_user[FENCED_NAME_MAX];	/* USER inside */
	char		 fs_home[PATH_MAX];	/* host path, created, checked */
	char		 fs_home_dev[32];	/* "": bind fs_home; else the
						   loop device of the home's
						   ext4 image, mounted */
	int		 fs_home_given;		/* 1: the home is fs_home_tree */
	int		 fs_home_tree;		/* a detached mount of it, the
						   caller's (a branch's
						   overlay, fencer_snap.c) */
	struct fence_limits fs_limits;
	const char	*fs_bindir;		/* host dir of fence-agent etc. */
	const char	*fs_init;		/* program name inside fs_bindir */
	char *const	*fs_init_argv;
	int		 fs_chan;		/* becomes fd 3 of pid 1; -1: none */
	const char	*fs_exec;		/* NULL: FENCE_BIN_DIR/fs_init;
						   else the program (a path
						   inside the fence) pid 1
						   executes instead (the vm
						   backend's QEMU) */
	int		 fs_pass[FENCE_PASS_MAX];	/* become fds 4, 5, ...
						   of pid 1, in order; a
						   regular file among them is
						   readable through Landlock */
	int		 fs_npass;
	int		 fs_kvm;		/* 1: /dev/kvm, a node of the
						   fence's uid (the vm
						   backend's QEMU under KVM) */
	int		 fs_no_home;		/* 1: fs_home is "" and
						   /home/<user> an empty
						   folder (the vm backend's
						   KVM try) */
	int		 fs_inherit_stdio;	/* 1: pid 1 keeps the caller's
						   fds 0-2 (tests, -d); 0: they
						   are /dev/null */
	const char	*fs_cgroup_parent[3];	/* memory, pids, cpu dirs */
	const char	*fs_cgroup_name;	/* in each; NULL: fs_key */

	/* Test-only weakening (FENCED_TEST_HOOKS builds); 0 normally. */
	int		 fs_test_noseccomp;
	int		 fs_quiet;		/* refusals by errno, unobserved
						   (`observe denials no') */
};

struct fence_timings {
	uint32_t	 ft_namespaces_us;
	uint32_t	 ft_mounts_us;
	uint32_t	 ft_cgroup_us;
	uint32_t	 ft_seccomp_us;
	uint32_t	 ft_exec_us;		/* clone to execve of init */
	uint32_t	 ft_take_us;		/* pooled: the whole take */
};

struct fence_proc {
	pid_t		 fp_pid;		/* host pid of the fence's pid 1 */
	int		 fp_pidfd;
	char		 fp_cgroup[3][PATH_MAX];	/* memory, pids, cpu */
	struct fence_timings fp_timings;
	int		 fp_landlock_abi;	/* 0: none */
	uint32_t	 fp_landlock;		/* FENCE_LL_* applied */
	int		 fp_oom_killed;		/* recorded by fence_stop() */
	int		 fp_pooled;		/* taken from the warm pool */
	int		 fp_cg_born;		/* pid 1 born in its v2 cgroup */
	int		 fp_notify_fd;		/* its seccomp listener, -1 */
};

/*
 * A pool fence (docs/pool.md): pid 1 built up to the split point of
 * fence_steps[], waiting for the boot that takes it.
 */
struct fence_pooled {
	struct fence_proc pp_proc;		/* pid, pidfd, pool cgroups */
	int		 pp_tier;
	int		 pp_status;		/* its status socket, our end */
	int		 pp_assign;		/* its assignment socket */
	int		 pp_ready;		/* waits at the split point */
	uint64_t	 pp_memory;		/* its tmpfs sizes follow it */
	struct fence_limits pp_limits;		/* its cgroups were made so */
	uint64_t	 pp_capbset;		/* the fencer's, at its clone */
	uint64_t	 pp_t0;			/* us, fence_now_us() */
	uint32_t	 pp_clone_us;		/* the clone itself */
	uint32_t	 pp_build_us;		/* start to the split point */
};

/*
 * fence_init() does once per process what every boot would otherwise
 * repeat (the seccomp program, the Landlock ABI, the host's /usr
 * layout); fence_start() calls it on first use, the fencer may call it
 * before it locks itself down.  fence_start() is not reentrant and wants
 * a single-threaded caller: pid 1 shares the caller's memory until it
 * executes the init (docs/fence.md).
 */
int	fence_init(char *, size_t);
int	fence_landlock_abi(void);
int	fence_seccomp_errno(int);
void	fence_cgroup_events(const struct fence_proc *, int *, int *);
const char *fence_seccomp_unobserved(void);
int	fence_start(const struct fence_spec *, struct fence_proc *, char *,
	    size_t);
int	fence_stop(struct fence_proc *);
int	fence_oom_killed(const struct fence_proc *);

int	fence_pool_start(const struct fence_spec *, struct fence_pooled *,
	    char *, size_t);
int	fence_pool_ready(struct fence_pooled *, char *, size_t);
int	fence_pool_alive(const struct fence_pooled *);
int	fence_pool_stale(const struct fence_pooled *);
int	fence_pool_take(struct fence_pooled *, const struct fence_spec *,
	    struct fence_proc *, char *, size_t);
void	fence_pool_drop(struct fence_pooled *);

/*
 * fence_mount.c: the bin tmpfs that fence_start() makes on first use
 * (fence_bin_init(bindir, init, ...)); what of the host it mounts is
 * fencer_view.h's.
 */
int	fence_bin_init(const char *, const char *, char *, size_t);

#endif /* FENCE_H */
