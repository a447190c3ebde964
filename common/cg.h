/*
 * The cgroups of fenced: the one module that writes a cgroup file, for
 * the parent (the daemon's folder and its leaf, the sweeps) and the
 * fencer (its folders, and every backend's fences: native, and through
 * it vm, runsc, subprocess).
 *
 *	cg.c		a fence's cgroups: made with their limits, a process
 *			placed, everything in them killed, OOM kills
 *			counted, removed; a pool fence's taken over
 *	cg_daemon.c	where they go (the one placement) and the daemon's
 *			folders fenced.<id>: made, entered, swept, left
 *	cg_v1.c		what only cgroup v1 has (a hierarchy per
 *			controller, `tasks', memory.limit_in_bytes, ...)
 *	cg_v2.c		what only cgroup v2 has (one hierarchy,
 *			subtree_control, cgroup.kill, memory.events, ...)
 *	cg_clone.c	a fence's first process born in its v2 cgroup
 *	cg_pause.c	a fence paused while its home is read or written
 *
 * Which version a directory is in comes from its filesystem type; a
 * controller goes on v1 where a v1 hierarchy has it, else on v2.
 */
#ifndef CG_H
#define CG_H

#include <sys/types.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>

struct fence_limits;

/* The controllers that limit a fence, in this order everywhere. */
#define CG_MEMORY	0
#define CG_PIDS		1
#define CG_CPU		2
#define CG_NCTRL	3

extern const char *const cg_ctrl[CG_NCTRL];

/*
 * cg.c: one fence's cgroups, a directory per controller ("" where it
 * has none; on v2 the controllers share one, named for each).
 */
int	cg_fence_make(const char *const [CG_NCTRL], const char *,
	    const struct fence_limits *, char [CG_NCTRL][PATH_MAX],
	    int [CG_NCTRL], int *, char *, size_t);
int	cg_fence_adopt(const char *const [CG_NCTRL], const char *, pid_t,
	    const struct fence_limits *, const struct fence_limits *,
	    char [CG_NCTRL][PATH_MAX], char *, size_t);
int	cg_join(int);
int	cg_join_dir(const char *);
int	cg_fence_join(const char [CG_NCTRL][PATH_MAX]);
int	cg_fence_kill(const char [CG_NCTRL][PATH_MAX], pid_t, int);
int	cg_fence_oom(const char *);
void	cg_fence_events_open(const char *, const char *, int *, int *);
int	cg_events_read(int, uint64_t *, uint64_t *);
int	cg_fence_remove(char [CG_NCTRL][PATH_MAX], char *, size_t);
int	cg_is_v2(const char *);
int	cg_swap_counted(const char *);
int	cg_swap_held(const char *);

/*
 * What a fence's cgroups counted, as the kernel keeps it (the metrics,
 * docs/metrics.md); a value is there only if its bit is in cu_have:
 * v1 keeps no peak of pids, and cpu time only where cpuacct shares the
 * cpu hierarchy; v2's memory.peak and pids.peak are newer than v2.
 */
#define CG_USAGE_CPU		0x01	/* cu_cpu_usec */
#define CG_USAGE_MEM		0x02	/* cu_mem_bytes */
#define CG_USAGE_MEM_PEAK	0x04	/* cu_mem_peak */
#define CG_USAGE_PIDS		0x08	/* cu_pids */
#define CG_USAGE_PIDS_PEAK	0x10	/* cu_pids_peak */
struct cg_usage {
	uint32_t	 cu_have;
	uint64_t	 cu_cpu_usec;
	uint64_t	 cu_mem_bytes;
	uint64_t	 cu_mem_peak;
	uint64_t	 cu_pids;
	uint64_t	 cu_pids_peak;
};
void	cg_fence_usage(const char *const [CG_NCTRL], struct cg_usage *);

/*
 * cg_clone.c: a first process born in its v2 cgroup (clone3 with
 * CLONE_INTO_CGROUP), where this kernel and our filters allow it.
 */
int	cg_clone3_ok(void);
pid_t	cg_clone3(uint64_t, int, int *, void *, size_t, int (*)(void *),
	    void *);

/*
 * cg_pause.c: every process of a fence's cgroup paused while its home is
 * read or written, and resumed (docs/snapshots.md, "Consistency").
 */
struct cg_pause {
	char		 cp_dir[PATH_MAX];
	int		 cp_v2;		/* frozen by cgroup.freeze */
	pid_t		*cp_pids;	/* v1: stopped by us */
	size_t		 cp_n, cp_cap;
};
int	cg_pause(const char *, struct cg_pause *);
void	cg_resume(struct cg_pause *);

/* cg_daemon.c: the placement and the daemon's folders. */
void	cg_procdir(const char *);
int	cg_parents(const char *, char [CG_NCTRL][PATH_MAX], char *, size_t);
int	cg_daemon_enter(const char *, char *, size_t);
int	cg_daemon_init(const char *, char [CG_NCTRL][PATH_MAX], char *,
	    size_t);
void	cg_daemon_fini(char [CG_NCTRL][PATH_MAX]);
int	cg_daemon_remove(const char *, int);

#endif /* CG_H */
