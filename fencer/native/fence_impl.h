/*
 * Internals of the native fence builder, shared by fence.c and the file
 * of each kernel facility (fence_ns.c, fence_mount.c, fence_cgroup.c,
 * fence_caps.c, fence_seccomp.c, fence_landlock.c, fence_net.c,
 * fence_rlimit.c).  Nothing outside fencer/native/ and the regress
 * helpers includes this.
 *
 * The fence's first process is cloned with CLONE_VM|CLONE_VFORK (see
 * fence_ns.c): until it calls execve it shares the caller's memory, and
 * the caller is suspended.  (A pool fence's agent, docs/pool.md, walks
 * the steps after the split point itself, past its execve; the rules
 * below hold for it all the same, so one code serves both.)  Code that
 * runs in that child ("child side" below) must therefore not allocate,
 * take locks, touch stdio streams or call glibc's set*id() wrappers
 * (which would signal the caller's other threads); it uses raw system
 * calls and the buffers of struct fence_ctx, all of which the parent
 * prepared.
 */
#ifndef FENCE_IMPL_H
#define FENCE_IMPL_H

#include <sys/types.h>
#include <sys/capability.h>
#include <sys/resource.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "fence.h"
#include "cg.h"

struct sock_fprog;
struct fence_ctx;

#define FENCE_CG_MEMORY		CG_MEMORY
#define FENCE_CG_PIDS		CG_PIDS
#define FENCE_CG_CPU		CG_CPU
#define FENCE_CG_MAX		CG_NCTRL

/* Where pid 1 builds the new root, inside its private mount namespace. */
#define FENCE_STAGE_DIR		"/tmp"

#define FENCE_STEP_MAX		256	/* "mount /usr read-only" */
#define FENCE_NSTEPS		24	/* room for fence_steps[] */
#define FENCE_ENV_MAX		8
#define FENCE_ENV_LEN		(PATH_MAX + 32)

/* The timing a step adds to. */
enum fence_clock {
	FENCE_T_CGROUP = 0,
	FENCE_T_NAMESPACES,
	FENCE_T_MOUNTS,
	FENCE_T_SECCOMP,		/* ids, caps, Landlock, seccomp */
	FENCE_T_MAX
};

/*
 * What pid 1 tells fence_start() over the status socket: one record just
 * before execve (FENCE_ST_EXEC) and, if something fails, one error
 * record.  A record is smaller than PIPE_BUF, so it arrives whole.
 */
enum fence_st_kind {
	FENCE_ST_EXEC = 1,
	FENCE_ST_ERROR,
	FENCE_ST_POOLED		/* a pool pid 1 waits at the split point */
};

struct fence_status {
	uint32_t	 fst_kind;
	int32_t		 fst_errno;
	uint32_t	 fst_us[FENCE_T_MAX];
	uint32_t	 fst_landlock;		/* FENCE_LL_* applied */
	uint32_t	 fst_step_us[FENCE_NSTEPS];	/* per step */
	char		 fst_step[FENCE_STEP_MAX];
};

/* What fence_init() learns once per process. */
struct fence_host {
	int		 fh_ready;
	int		 fh_landlock_abi;	/* 0: none */
	int		 fh_cap_last;		/* highest capability */
	uint64_t	 fh_cap_bound;		/* bounding set at init */
	cap_t		 fh_nocaps;		/* the empty set */
	const struct sock_fprog *fh_seccomp;	/* the L1.5 filter */
};

/*
 * What the fencer sends a pool fence's agent at the take (docs/pool.md),
 * one datagram on its assignment socket with FENCE_ASSIGN_NFDS
 * descriptors: the agent's channel, the home (a detached mount:
 * open_tree or fsmount) and the seccomp program (a sealed memfd of
 * struct sock_filter, fence_seccomp_memfd()).  The tier and the memory
 * limit the pool fence was built with come with it, from the fencer's
 * record of the pool fence.
 */
#define FENCE_ASSIGN_MAGIC	0x66706f6fU	/* "fpoo" */
#define FENCE_ASSIGN_NFDS	3
struct fence_assign {
	uint32_t	 fa_magic;
	char		 fa_key[FENCE_KEY_SIZE];
	uint32_t	 fa_uid;
	uint32_t	 fa_gid;
	char		 fa_user[FENCED_NAME_MAX];
	struct fence_limits fa_limits;
	int32_t		 fa_tier;
	uint64_t	 fa_built_memory;	/* the scratch mounts' sizes */
};

/*
 * The descriptors a pool fence's agent is executed with (fence-agent
 * -p, agent/agent_pool.c), and nothing else but /dev/null on 0-2.
 */
#define FENCE_POOL_FD_ASSIGN	3	/* the assignment socket */
#define FENCE_POOL_FD_STATUS	4	/* the status socket, write end */
#define FENCE_POOL_FD_LANDLOCK	5	/* the ruleset; closed: none */

/* fence_steps[] (fence.c): the split point is its last. */
#define FENCE_NSTEPS_BEFORE	7

/* One step of a fence's build (fence.c, fence_after.c). */
struct fence_step {
	const char	*st_name;
	int		 st_tier;	/* the lowest tier with the step */
	enum fence_clock st_clock;	/* the timing it adds to */
	int		(*st_fn)(struct fence_ctx *);
};

/* Everything pid 1 needs, prepared by the parent before clone. */
struct fence_ctx {
	const struct fence_spec	*fc_spec;
	int		 fc_tier;

	/*
	 * A pool pid 1 (fc_pool) walks the steps to the split point and
	 * executes the agent ahead, with its assignment socket
	 * (fc_assign_fd); the agent fills fc_spec_own from its assignment
	 * and points fc_spec at it (fence_assign_apply()).  -1 and 0 for a
	 * cold boot.
	 */
	int		 fc_pool;
	int		 fc_assign_fd;
	struct fence_spec fc_spec_own;
	uint64_t	 fc_built_memory;	/* the tmpfs sizes follow it */

	/* Status pipe (write end) and the parent's liveness. */
	int		 fc_status_fd;
	int		 fc_status_rfd;		/* the parent's end */
	struct fence_status fc_st;

	/* Child-side step clock. */
	uint64_t	 fc_t_step;

	/* The file that joins each cgroup (cg_fence_make()); -1: none. */
	int		 fc_cg_procs[FENCE_CG_MAX];
	/* The v2 cgroup pid 1 is born in (cg_clone3()); -1: none. */
	int		 fc_cg_born;

	/* Filesystem. */
	char		 fc_home_mnt[PATH_MAX];	/* home/<user> */
	char		 fc_home_abs[PATH_MAX];	/* /home/<user> */
	int		 fc_home_tree;		/* the home, a detached mount */
	int		 fc_bin_mnt;		/* fence_bin_init()'s tmpfs */
	int		 fc_bin_shared;		/* cloned, not attached */

	/* Landlock ruleset fd (child side), -1 where none. */
	int		 fc_ll_fd;

	/* execve of the init. */
	char		 fc_init_path[PATH_MAX];
	char *const	*fc_argv;
	char		*fc_envp[FENCE_ENV_MAX + 1];
	char		 fc_envbuf[FENCE_ENV_MAX][FENCE_ENV_LEN];
	int		 fc_chan;
	int		 fc_inherit_stdio;
	int		 fc_noseccomp;		/* test hook */
	int		 fc_quiet;		/* `observe denials no' */
	int		 fc_notify_fd;		/* the seccomp listener, until
						   the EXEC record takes it */
};

extern struct fence_host fence_host;

/* fence.c */
int		 fence_step_times(const char **, uint32_t *, int);

/* fence_after.c, linked into the agent too */
extern const struct fence_step fence_steps_after[];
extern const size_t fence_nsteps_after;
int		 fence_child_err(struct fence_ctx *, int, const char *, ...)
		    __attribute__((format(printf, 3, 4)));
int		 fence_child_send(struct fence_ctx *, uint32_t);
int		 fence_steps_walk(struct fence_ctx *, const struct fence_step *,
		    size_t, size_t);
int		 fence_user_valid(const char *);
int		 fence_assign_apply(struct fence_ctx *, struct fence_assign *);
uint64_t	 fence_now_us(void);
uint32_t	 fence_us32(uint64_t);

/* fence_ns.c */
pid_t		 fence_ns_clone(struct fence_ctx *, int (*)(void *), int *,
		    char *, size_t);
int		 fence_ns_cgroup(struct fence_ctx *);
int		 fence_ns_hostname(struct fence_ctx *);
int		 fence_ns_session(struct fence_ctx *);
int		 fence_ns_keyring(struct fence_ctx *);

/* fence_net.c */
int		 fence_net_lo_up(struct fence_ctx *);

/* fence_mount.c */
int		 fence_mount_init(char *, size_t);
int		 fence_bin_fd(void);
int		 fence_bin_shared(void);
int		 fence_mount_sources(struct fence_ctx *);
int		 fence_mount_build(struct fence_ctx *);
int		 fence_mount_home(struct fence_ctx *);
int		 fence_mount_resize(struct fence_ctx *);
int		 fence_mount_home_tree(const struct fence_spec *, int *, char *,
		    size_t);

/* fence_cgroup.c */
int		 fence_cgroup_create(const struct fence_spec *,
		    struct fence_proc *, struct fence_ctx *, char *, size_t);
int		 fence_cgroup_join(struct fence_ctx *);
int		 fence_cgroup_adopt(const struct fence_spec *,
		    struct fence_proc *, const struct fence_limits *, char *,
		    size_t);
void		 fence_cgroup_close(struct fence_ctx *);
int		 fence_cgroup_kill(const struct fence_proc *);
int		 fence_cgroup_remove(struct fence_proc *, char *, size_t);
int		 fence_cgroup_oom(const struct fence_proc *);

/* fence_caps.c */
int		 fence_caps_bound(struct fence_ctx *);
int		 fence_caps_ids(struct fence_ctx *);
int		 fence_caps_clear(struct fence_ctx *);
int		 fence_caps_pdeathsig(struct fence_ctx *);
int		 fence_caps_nnp(struct fence_ctx *);
int		 fence_caps_init(char *, size_t);

/* fence_rlimit.c: open files of a process, fence-wide at most TOTAL */
#define FENCE_NOFILE_TOTAL	65536
#define FENCE_NOFILE_MIN	64
#define FENCE_NOFILE_MAX	1024
rlim_t		 fence_rlimit_nofile(uint32_t);
int		 fence_rlimit_core(struct fence_ctx *);
int		 fence_rlimit_limits(struct fence_ctx *);
int		 fence_rlimit_nofile_set(struct fence_ctx *);

/* fence_landlock.c */
int		 fence_landlock_probe(void);
int		 fence_landlock_prepare(struct fence_ctx *);
int		 fence_landlock_home(struct fence_ctx *);
int		 fence_landlock_restrict(struct fence_ctx *);

/* fence_seccomp.c */
int		 fence_seccomp_init(char *, size_t);
const struct sock_fprog *fence_seccomp_program(int);
int		 fence_seccomp_load(struct fence_ctx *);
int		 fence_seccomp_memfd(int, int, char *, size_t);
int		 fence_seccomp_adopt(int);

#endif /* FENCE_IMPL_H */
