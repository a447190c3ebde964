/*
 * The prober's side of the probe: parsing a sandbox-probe/1 report (bytes
 * from inside a fence, so hostile), judging each axis of the boundary and
 * deriving the level the fence earned (DESIGN.md section 5,
 * docs/probe.md).  Pure computation: no file, no socket, malloc only, so
 * it runs under the prober's "stdio recvfd sendfd" allowlist.  Uses
 * jansson; the caller seeds its hash (json_object_seed) before lockdown.
 */
#ifndef REPORT_H
#define REPORT_H

#include <sys/types.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#define REPORT_MAX		(256 * 1024)	/* bytes of one report */
#define REPORT_DEPTH_MAX	16		/* nesting of [ and { */

#define VIOLATIONS_MAX		16		/* per axis; more are counted */
#define VIOLATION_LEN		128
#define VERDICT_REASON_LEN	256

/* The axes of a boundary, in the order they are shown. */
enum probe_axis {
	AXIS_FILESYSTEM = 0,
	AXIS_PROCESSES,
	AXIS_PRIVILEGES,
	AXIS_NETWORK,
	AXIS_KERNEL,
	AXIS_MAX
};

enum axis_verdict {
	VERDICT_NOT_MEASURED = 0,	/* "not measured" */
	VERDICT_FENCED,			/* "fenced" */
	VERDICT_NOT_FENCED,		/* "not-fenced", with violations */
	VERDICT_PASSES,			/* "passes": shared by design */
	VERDICT_SEPARATE,		/* kernel: "separate" */
	VERDICT_SHARED			/* kernel: "shared" */
};

/* Ordered: a level satisfies every level below it. */
enum probe_level {
	LEVEL_UNMEASURED = 0,
	LEVEL_NOT_EARNED,
	LEVEL_L1,
	LEVEL_L15,
	LEVEL_L2,
	LEVEL_L3,	/* gVisor: a user-space kernel */
	LEVEL_L4	/* a virtual machine's kernel */
};

/* What the host saw of its canary listener during the probe run. */
enum probe_canary {
	CANARY_NOT_RUN = 0,
	CANARY_NO,		/* listening, nothing connected */
	CANARY_YES		/* a connection was accepted */
};

#define PROBE_BOOT_ID_LEN	40
#define PROBE_UNAME_LEN		65	/* struct utsname's fields */
#define PROBE_CANARY_LEN	64

/*
 * What the host knows, filled in by the fencer (or broker) that ran the
 * probe.  Empty strings and zeroes mean "not known": the checks that need
 * them are then skipped or the axis is "not measured".
 */
struct probe_expect {
	int		 pe_tier;			/* enum fence_tier */
	int		 pe_backend;			/* enum fence_backend */
	char		 pe_boot_id[PROBE_BOOT_ID_LEN];	/* the host's */
	char		 pe_release[PROBE_UNAME_LEN];	/* host uname -r */
	char		 pe_version[PROBE_UNAME_LEN];	/* host uname -v */
	int		 pe_canary;			/* enum probe_canary */
	char		 pe_canary_target[PROBE_CANARY_LEN]; /* --canary */
	char		 pe_secret[PATH_MAX];		/* --host-secret */
	pid_t		 pe_host_pid;			/* --host-pid */
	uint64_t	 pe_ns_pid;			/* host ns inodes */
	uint64_t	 pe_ns_net;
	uint64_t	 pe_ns_mnt;
};

struct probe_axis_verdict {
	int		 av_verdict;			/* enum axis_verdict */
	int		 av_nviolations;		/* stored */
	int		 av_more;			/* not stored */
	char		 av_violations[VIOLATIONS_MAX][VIOLATION_LEN];
	char		 av_reason[VIOLATION_LEN];	/* if not measured */
};

struct probe_verdict {
	int		 pv_level;			/* enum probe_level */
	char		 pv_reason[VERDICT_REASON_LEN];	/* if unmeasured */
	char		 pv_when[40];			/* of the report */
	struct probe_axis_verdict pv_axes[AXIS_MAX];
	/* The kernel that answered, as the report shows it. */
	char		 pv_release[PROBE_UNAME_LEN];
	char		 pv_version[PROBE_UNAME_LEN];
	char		 pv_boot_id[PROBE_BOOT_ID_LEN];	/* "" if none */
};

/*
 * Parse one report and judge it.  *out is always filled in: 0 when the
 * report was well-formed (the level may still be "unmeasured" when a
 * section is missing), -1 when it was not (level "unmeasured", the
 * reason in pv_reason).  Never crashes, whatever buf holds.
 */
int		 report_parse(const char *, size_t, const struct probe_expect *,
		    struct probe_verdict *);

/*
 * The boundary as the API shows it: {"level", "measuredBy": "probe",
 * "when", "reason", "axes": {name: {"verdict", "violations", "reason"}},
 * "violations", "kernel": {"release", "version", "bootId"}}.  Compact JSON the caller frees; NULL if out
 * of memory.
 */
char		*verdict_json(const struct probe_verdict *);

const char	*level_name(int);		/* "L1.5", "not-earned", ... */
int		 level_parse(const char *);	/* -1 if unknown */
int		 level_satisfies(int, int);	/* measured, required */
int		 level_of_tier(int);		/* what a tier promises */
const char	*axis_name(int);		/* "filesystem", ... */
const char	*verdict_name(int);		/* "fenced", ... */

#endif /* REPORT_H */
