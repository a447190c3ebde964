/*
 * The prober's side of the probe: parsing a sandbox-probe/1 report (bytes
 * from inside a fence, so hostile), judging each axis of the boundary and
 * deriving the level the fence earned (docs/design.md section 5,
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

#include "names.h"		/* enum probe_level, level_name(), ... */
#include "probe_expect.h"	/* what the host knows, REPORT_MAX */

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
	AXIS_SURFACE,		/* the kernel's entry points reached */
	AXIS_MAX
};

enum axis_verdict {
	VERDICT_NOT_MEASURED = 0,	/* "not measured" */
	VERDICT_FENCED,			/* "fenced" */
	VERDICT_NOT_FENCED,		/* "not-fenced", with violations */
	VERDICT_PASSES,			/* "passes": shared by design */
	VERDICT_SEPARATE,		/* kernel: "separate" */
	VERDICT_SHARED,			/* kernel: "shared" */
	VERDICT_ALLOWLISTED		/* network: "allowlisted", an L2
					   fence's only way out its egress
					   proxy, which kept to the list */
};

#define EGRESS_CODE_LEN		32	/* an X-Fenced-Egress code */
#define EGRESS_WORD_LEN		24	/* an errno name, "timeout", ... */

/* One egress check as the report tells it (network.egress). */
struct probe_egress_try {
	int		 et_present;		/* an object in the report */
	char		 et_target[EGRESS_ENTRY_LEN];
	int		 et_proxy;		/* the proxy was connected to */
	int		 et_status;		/* its answer's, 0: none */
	char		 et_code[EGRESS_CODE_LEN];	/* "": none */
	int		 et_reached;		/* status 200 or "reached" */
	char		 et_error[EGRESS_WORD_LEN];	/* "": null */
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
	/* What carries the home into the fence: the host's word, its
	   backend's pt_home in the expectation, which it points into
	   (the filesystem axis's "home" in the boundary). */
	const char	*pv_home;
	/*
	 * A fence with an egress list: the list (the host's) and what the
	 * report measured through the proxy, the network axis's "egress"
	 * in the boundary.  0 entries: no list, no "egress".
	 */
	uint32_t	 pv_negress;
	char		 pv_egress[EGRESS_LIST_MAX][EGRESS_ENTRY_LEN];
	struct probe_egress_try pv_egress_allowed;
	struct probe_egress_try pv_egress_refused;
	/*
	 * The surface axis: which entries of common/surface.h the report
	 * says were reached (bit i: entry i), when it had the section, and
	 * whose kernel they are (the backend's pt_kernel).
	 */
	int		 pv_has_surface;
	uint32_t	 pv_surface;
	int		 pv_surface_kernel;		/* enum probe_kernel */
	/*
	 * The layer inside that the host asked for (pt_inner; 0: none):
	 * its kind of kernel, and whether the report's reading shows it
	 * (VERDICT_SEPARATE) or a Linux kernel in its place
	 * (VERDICT_NOT_FENCED, why in pv_inner_reason), or cannot tell
	 * (VERDICT_NOT_MEASURED).  The boundary's "inner".
	 */
	int		 pv_inner;			/* enum probe_kernel */
	int		 pv_inner_verdict;
	char		 pv_inner_reason[VIOLATION_LEN];
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
 * "violations", "kernel": {"release", "version", "bootId"}}, and for a
 * fence with an egress list axes.network.egress: {"list", "allowed",
 * "refused"}.  Compact JSON the caller frees; NULL if out of memory.
 */
char		*verdict_json(const struct probe_verdict *);

/* verdict_msg.c: the same verdicts typed, for the broker. */
struct msg_verdict;
void		 verdict_msg(const struct probe_verdict *, struct msg_verdict *);

const char	*axis_name(int);		/* "filesystem", ... */
const char	*verdict_name(int);		/* "fenced", ... */

#endif /* REPORT_H */
