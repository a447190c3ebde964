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
 * The fencer's own reading, from the host, of the fence's pid 1 (the
 * agent) after the probe ran: /proc/PID/status, mountinfo, net/dev and
 * net/tcp{,6}, held against the same files of the fencer itself.  No
 * process inside the fence can write these: they are what grants an
 * axis (docs/probe.md, "What grants each axis").  Each group has its
 * own "read" flag: a file that could not be read or parsed leaves its
 * axes ungranted, with the reason in ph_*_error.
 */
#define PROBE_HOST_ERR_LEN	96
#define PROBE_HOST_PATH_LEN	160	/* of a named bind, cut */
#define PROBE_HOST_BINDS_MAX	8	/* unexpected binds named */
#define PROBE_HOST_IFNAME_LEN	16	/* IFNAMSIZ */

enum probe_host_cap {
	HOST_CAP_EFF = 0,
	HOST_CAP_PRM,
	HOST_CAP_BND,
	HOST_CAP_AMB,
	HOST_CAP_MAX
};

struct probe_host {
	/* /proc/PID/status of pid 1 and /proc/self/status of the fencer */
	int		 ph_status_read;
	char		 ph_status_error[PROBE_HOST_ERR_LEN];
	uint32_t	 ph_uid[4];		/* real, effective, saved, fs */
	uint32_t	 ph_nspid_depth;	/* entries of NSpid */
	uint32_t	 ph_nspid_self_depth;	/* the fencer's */
	uint32_t	 ph_nspid_last;		/* pid in its own namespace */
	int		 ph_seccomp;		/* Seccomp: */
	uint32_t	 ph_filters;		/* Seccomp_filters: */
	uint32_t	 ph_filters_self;	/* the fencer's */
	int		 ph_nnp;		/* NoNewPrivs: */
	uint64_t	 ph_cap[HOST_CAP_MAX];

	/* /proc/PID/mountinfo against the fencer's /proc/self/mountinfo */
	int		 ph_mounts_read;
	char		 ph_mounts_error[PROBE_HOST_ERR_LEN];
	int		 ph_root_host;		/* "/" is a host mount */
	int		 ph_usr_ro;		/* -1: no /usr mount, 0 rw, 1 ro */
	int		 ph_etc_ro;
	uint32_t	 ph_nbad;		/* unexpected host binds */
	char		 ph_bad[PROBE_HOST_BINDS_MAX][PROBE_HOST_PATH_LEN];

	/* /proc/PID/net/{dev,tcp,tcp6} */
	int		 ph_net_read;
	char		 ph_net_error[PROBE_HOST_ERR_LEN];
	int		 ph_canary_seen;	/* our listener is in its tables */
	uint32_t	 ph_nifaces;
	char		 ph_iface_other[PROBE_HOST_IFNAME_LEN]; /* not lo */
};

#define PROBE_RUN_ERR_LEN	128

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
	/*
	 * "" when the probe ran to its end (exit 0 or 2); else why the run
	 * cannot count (a signal, a timeout, another exit): unmeasured.
	 */
	char		 pe_run_error[PROBE_RUN_ERR_LEN];
	int		 pe_has_host;		/* ph below was read */
	struct probe_host pe_host;
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
