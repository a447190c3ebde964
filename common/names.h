/*
 * fenced: the names of tiers, backends, levels, fence states and stop
 * reasons, in one place for every process, fencectl and the API.  The
 * spellings are those of the HTTP API and the manuals (fenced.8).
 */
#ifndef NAMES_H
#define NAMES_H

#ifndef nitems
#define nitems(a)	(sizeof(a) / sizeof((a)[0]))
#endif

enum fence_tier {
	TIER_L1 = 1,
	TIER_L15,
	TIER_L2
};

enum fence_backend {
	BACKEND_MIN = 1,	/* the first: the codecs' bound */
	BACKEND_NATIVE = BACKEND_MIN,
	BACKEND_RUNSC,
	BACKEND_VM,
	BACKEND_MOCK,
	BACKEND_SUBPROCESS,
	BACKEND_MAX		/* one past the last: the codecs' bound */
};

/* What a probe measured; ordered: a level satisfies every level below. */
enum probe_level {
	LEVEL_UNMEASURED = 0,
	LEVEL_NOT_EARNED,
	LEVEL_L1,
	LEVEL_L15,
	LEVEL_L2,
	LEVEL_L3,	/* gVisor: a user-space kernel */
	LEVEL_L4	/* a virtual machine's kernel */
};

enum fence_state {
	FENCE_BOOTING = 1,
	FENCE_RUNNING,
	FENCE_STOPPING,
	FENCE_STOPPED,
	FENCE_FAILED
};

/*
 * A vm fence's inner boundary (docs/vm.md, "The inner boundary"): a
 * boot asks for none or for gVisor's runsc inside the guest; 0, the
 * configured default (`vm inner').
 */
enum fence_inner {
	INNER_CONFIGURED = 0,
	INNER_NONE,
	INNER_RUNSC
};

enum fence_stop_reason {
	STOP_NONE = 0,
	STOP_REQUEST,
	STOP_DEADLINE,
	STOP_CRASH,		/* pid 1 of the fence died */
	STOP_OOM,
	STOP_SHUTDOWN		/* the daemon is going down */
};

/* common/names.c: an unknown id is "unknown" (a level "unmeasured"); a
 * name not in the table parses as -1. */
const char	*tier_name(int);		/* "L1", "L1.5", "L2" */
int		 tier_parse(const char *);
const char	*backend_name(int);		/* "native", "runsc", ... */
int		 backend_parse(const char *);
int		 inner_parse(const char *);	/* "none", "runsc" */
const char	*level_name(int);		/* "L1.5", "not-earned", ... */
int		 level_parse(const char *);
const char	*fence_state_name(int);		/* "running", ... */
/* "request", "deadline", "crash", "out-of-memory", "shutdown"; NULL else */
const char	*stop_reason_name(int);
int		 level_satisfies(int, int);	/* measured, required */
int		 require_parse(const char *);	/* L1 .. L4 */
int		 require_parse_inner(const char *, int *); /* and L4+runsc */

#endif /* NAMES_H */
