/*
 * Inside the report parser: the schema check (report_schema.c), the
 * typed extract of a report that passed it (report.c) and the judging
 * of that extract (level.c).  Not for callers: they use report.h.
 */
#ifndef REPORT_IMPL_H
#define REPORT_IMPL_H

#include <jansson.h>

#include "report.h"
#include "surface.h"

#define REPORT_PATHS_MAX	32
#define REPORT_SECRETS_MAX	8
#define REPORT_IFACES_MAX	32
#define REPORT_OTHER_UIDS	8
#define REPORT_WORD_LEN		24	/* an errno, signal or outcome name */
#define REPORT_LABEL_LEN	16
#define REPORT_TARGET_LEN	300

/* The sections of a report, as bits of r_sections. */
#define REPORT_S_IDENTITY	0x01
#define REPORT_S_HINTS		0x02
#define REPORT_S_FILESYSTEM	0x04
#define REPORT_S_PROCESSES	0x08
#define REPORT_S_LIMITS		0x10
#define REPORT_S_TOOLS		0x20
#define REPORT_S_PRIVILEGES	0x40
#define REPORT_S_NETWORK	0x80
#define REPORT_S_SURFACE	0x100

/* The calls of the privileges section the judging reads. */
enum report_priv {
	PRIV_UNSHARE_USER = 0,
	PRIV_KEYCTL,
	PRIV_BPF,
	PRIV_PTRACE,
	PRIV_IO_URING,
	PRIV_USERFAULTFD,
	PRIV_PERF,
	PRIV_MOUNT,
	PRIV_I386,
	PRIV_PACKET,
	PRIV_MAX
};
extern const char *const report_priv_names[PRIV_MAX];
extern const char *const report_surface_ids[SURFACE_MAX];

/* Capability sets, in r_cap. */
enum report_cap { CAP_SET_EFF = 0, CAP_SET_PRM, CAP_SET_BND, CAP_SET_AMB,
	CAP_SET_MAX };

struct report_path {
	char		 rp_label[REPORT_LABEL_LEN];
	int		 rp_has_path;
	int		 rp_exists;
	int		 rp_listable;
	int		 rp_writable;
	long long	 rp_entries;			/* -1: null */
	char		 rp_error[REPORT_WORD_LEN];	/* "": null */
};

struct report_secret {
	char		 rs_path[PATH_MAX];
	int		 rs_readable;
};

struct probe_report {
	unsigned int	 r_sections;
	char		 r_when[40];
	char		 r_incomplete[32];		/* "": complete */
	/* identity */
	long long	 r_uid;
	char		 r_release[PROBE_UNAME_LEN];	/* "": null */
	char		 r_version[PROBE_UNAME_LEN];
	char		 r_boot_id[PROBE_BOOT_ID_LEN];
	/* sandboxHints */
	long long	 r_seccomp;			/* -1: null */
	long long	 r_nnp;				/* -1: null */
	int		 r_has_cap[CAP_SET_MAX];
	uint64_t	 r_cap[CAP_SET_MAX];
	uint64_t	 r_ns_pid, r_ns_net, r_ns_mnt;	/* 0: null */
	/* filesystem */
	struct report_path r_paths[REPORT_PATHS_MAX];
	int		 r_npaths;
	struct report_secret r_secrets[REPORT_SECRETS_MAX];
	int		 r_nsecrets;
	/* processes */
	int		 r_other_uids;
	long long	 r_other_sample[REPORT_OTHER_UIDS];
	int		 r_nother;
	int		 r_has_host_pid;
	long long	 r_host_pid;
	int		 r_host_pid_visible;
	/* privileges: "" where the call is not in the report */
	char		 r_priv[PRIV_MAX][REPORT_WORD_LEN];
	/* surface: every entry of common/surface.h, the schema and
	   report_surface_whole() saw to it */
	char		 r_surface[SURFACE_MAX][REPORT_WORD_LEN];
	/* network */
	int		 r_has_canary;
	char		 r_canary_target[REPORT_TARGET_LEN];
	int		 r_canary_connected;
	char		 r_ifaces[REPORT_IFACES_MAX][REPORT_LABEL_LEN];
	int		 r_nifaces;
	/* network.egress: the checks through the fence's proxy */
	int		 r_has_egress;
	struct probe_egress_try r_egress_allowed;
	struct probe_egress_try r_egress_refused;
};

/* report_schema.c: 0 if root is a well-formed report, else -1 and why. */
int	report_schema_check(const json_t *, char *, size_t);

/* level.c */
void	level_judge(const struct probe_report *, const struct probe_expect *,
	    struct probe_verdict *);
void	verdict_unmeasured(struct probe_verdict *, const char *, ...)
	    __attribute__((format(printf, 2, 3)));

#endif /* REPORT_IMPL_H */
