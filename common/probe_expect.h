/*
 * What the host knows of one probe run, as the fencer (or broker) that
 * ran it passes it to the prober with the report (IMSG_PROBE_REPORT):
 * the codec in imsg/msg_probe.c and the judge in prober/ both read it,
 * so it lives here, beside the report's bound.
 */
#ifndef PROBE_EXPECT_H
#define PROBE_EXPECT_H

#include <sys/types.h>
#include <limits.h>
#include <stdint.h>

#include "fenced.h"		/* EGRESS_LIST_MAX, EGRESS_ENTRY_LEN */

#define REPORT_MAX		(256 * 1024)	/* bytes of one report */

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
 * agent; for a runsc fence the sandbox, and its gofer for the mounts)
 * after the probe ran: /proc/PID/status, mountinfo, net/dev and
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
	/*
	 * /proc/PID/uid_map against the fencer's own: pid 1 is in a user
	 * namespace of its own (its capabilities hold only there), and
	 * whether that namespace maps the host's uid 0.
	 */
	int		 ph_userns_own;
	int		 ph_userns_root;

	/* /proc/PID/mountinfo against the fencer's /proc/self/mountinfo */
	int		 ph_mounts_read;
	char		 ph_mounts_error[PROBE_HOST_ERR_LEN];
	int		 ph_root_host;		/* "/" is a host mount */
	int		 ph_usr_ro;		/* -1: no /usr mount, 0 rw, 1 ro */
	int		 ph_etc_ro;
	uint32_t	 ph_nbad;		/* unexpected host binds */
	char		 ph_bad[PROBE_HOST_BINDS_MAX][PROBE_HOST_PATH_LEN];
	/*
	 * Where the fence's files are served by another process than its
	 * own (runsc's gofer: the mounts above are the gofer's), the
	 * mounts of a host filesystem in pid 1's own table, which should
	 * hold none.
	 */
	int		 ph_files_apart;
	uint32_t	 ph_inner_nhost;

	/* /proc/PID/net/{dev,tcp,tcp6} */
	int		 ph_net_read;
	char		 ph_net_error[PROBE_HOST_ERR_LEN];
	int		 ph_canary_seen;	/* its network namespace is ours */
	uint32_t	 ph_nifaces;
	char		 ph_iface_other[PROBE_HOST_IFNAME_LEN]; /* not lo */
};

#define PROBE_RUN_ERR_LEN	128

/*
 * What a backend declares of every fence it builds, as far as the judge
 * of a probe needs it (docs/probe.md, "What grants each axis").  Each
 * backend's entry in the fencer's table holds its own (fb_probe in
 * fencer/backend.h) and the fencer copies it into every expectation:
 * the prober learns what a fence is from these, never from the
 * backend's name, so a new backend needs nothing in prober/.
 */
enum probe_kernel {
	PROBE_KERNEL_HOST = 0,	/* the host's kernel serves its calls */
	PROBE_KERNEL_USER,	/* a kernel of its own in user space on the
				   host's (gVisor's sentry): L3 */
	PROBE_KERNEL_GUEST,	/* a guest kernel on a virtual machine: L4;
				   its namespace inodes are its own count */
	PROBE_KERNEL_MAX
};

#define PROBE_HOME_LEN		96

struct probe_traits {
	int		 pt_kernel;		/* enum probe_kernel */
	/*
	 * The host reads the fence's processes as one sandbox process
	 * whose tasks they are (fb_host_procs): it is judged by its uid
	 * and its user namespace, not by a pid namespace of its own, and
	 * capabilities it holds only in that namespace hold nothing.
	 */
	int		 pt_procs_apart;
	/*
	 * Another process serves the fence's files (fb_host_procs'
	 * *files): the host must have read that one's mounts, and the
	 * fence's kernel may refuse a write to a read-only folder with
	 * EACCES before it reaches the mount.
	 */
	int		 pt_files_apart;
	int		 pt_net_own;		/* a network of its own at every
						   tier: judged strictly */
	int		 pt_egress;		/* may hold an egress list (it has
						   the proxy port) */
	char		 pt_home[PROBE_HOME_LEN];	/* how the home is
						   brought in; "": not said */
	/*
	 * The layer inside (a vm fence's `inner runsc'): the kind of
	 * kernel that answers the fence's commands inside its own
	 * (PROBE_KERNEL_USER: gVisor's sentry in the guest), or
	 * PROBE_KERNEL_HOST (0): none, the kernel pt_kernel names
	 * answers.  Not a backend's: the fencer sets it per fence.
	 */
	int		 pt_inner;
};

/*
 * What the host knows, filled in by the fencer (or broker) that ran the
 * probe.  Empty strings and zeroes mean "not known": the checks that need
 * them are then skipped or the axis is "not measured".
 */
struct probe_expect {
	int		 pe_tier;			/* enum fence_tier */
	int		 pe_backend;			/* enum fence_backend:
							   its name, nothing
							   else */
	struct probe_traits pe_traits;			/* its backend's */
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
	/*
	 * The fence's egress list, as the fencer keeps it (f_egress; never
	 * anything the report says), and the targets the fencer asked the
	 * probe to try through the fence's proxy: one on the list ("" when
	 * the list has no exact entry) and one off it.  0 entries: no list,
	 * no targets, and an egress object in a report is ignored.
	 */
	uint32_t	 pe_negress;
	char		 pe_egress[EGRESS_LIST_MAX][EGRESS_ENTRY_LEN];
	char		 pe_egress_allowed[EGRESS_ENTRY_LEN];
	char		 pe_egress_refused[EGRESS_ENTRY_LEN];
};

#endif /* PROBE_EXPECT_H */
