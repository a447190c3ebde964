/*
 * The fencer: builds, runs and stops fences.  It stays root, since
 * building a fence takes mounts and namespaces, but keeps only the
 * capabilities listed in fencer_caps[] (docs/lockdown.md says why each),
 * and its seccomp filter refuses what neither it nor any fence or
 * backend may ever do: every fence inherits that filter.
 */
#include <sys/types.h>
#include <sys/resource.h>

#include <event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fenced.h"
#include "imsg.h"
#include "lockdown.h"
#include "log.h"
#include "msg.h"
#include "proc.h"
#include "fencer.h"
#include "fencer_snap.h"
#include "backend.h"

static void	fencer_dispatch_broker(struct imsgev *, struct imsg *, void *);
static void	fencer_dispatch_prober(struct imsgev *, struct imsg *, void *);
static void	fencer_prepare(const struct proc_args *);
static void	fencer_init_cb(const struct proc_args *);
static void	fencer_start_cb(void);
static void	fencer_shutdown(void);
static void	fencer_sigchld(int, short, void *);
static void	fencer_nproc_raise(void);

/* The parent tells the fencer nothing beyond what every child hears. */
static const struct proc_peer fencer_peers[] = {
	{ PROC_PARENT,	NULL },
	{ PROC_BROKER,	fencer_dispatch_broker },
	{ PROC_PROBER,	fencer_dispatch_prober },
};

static const cap_value_t fencer_caps[] = {
	CAP_SYS_ADMIN,		/* namespaces, mounts, pivot_root */
	CAP_SETUID,		/* a fence's processes take its uid */
	CAP_SETGID,
	CAP_SETPCAP,		/* empty a fence's bounding set */
	CAP_KILL,		/* stop fences owned by other uids */
	CAP_CHOWN,		/* homes belong to their owners */
	CAP_FOWNER,
	CAP_DAC_OVERRIDE,	/* homes and cgroup files of others */
	CAP_NET_ADMIN,		/* lo up in an L2 fence's namespace */
	CAP_SYS_CHROOT,		/* runsc: its sandbox and gofer chroot */
	CAP_MKNOD,		/* vm under KVM: /dev/kvm in QEMU's jail */
};

/* Root, for mounts and namespaces, with only fencer_caps[]. */
struct proc_self fencer_self = {
	.ps_proc = PROC_FENCER,
	.ps_peers = fencer_peers,
	.ps_npeers = sizeof(fencer_peers) / sizeof(fencer_peers[0]),
	.ps_lockdown = {
		.ld_caps = fencer_caps,
		.ld_ncaps = sizeof(fencer_caps) / sizeof(fencer_caps[0]),
		.ld_filter = LOCKDOWN_DENY,
	},
	.ps_keep_root = 1,
	.ps_prepare_cb = fencer_prepare,
	.ps_init_cb = fencer_init_cb,
	.ps_start_cb = fencer_start_cb,
	.ps_config_cb = fencer_backends_warm_reload,
	.ps_shutdown_cb = fencer_shutdown,
};

/*
 * No per-uid process limit for what the fencer starts, while it may still
 * lift one (CAP_SYS_RESOURCE is not among fencer_caps[]).  Every runsc
 * sandbox's sentry runs as nobody: an inherited RLIMIT_NPROC counts all
 * of them together, so a fence whose fork bomb filled its own pids
 * limit with the ptrace platform's stub threads could end another
 * fence's sentry at its next fork.  Each sandbox is bounded by its own
 * cgroup's pids.max (runsc_limits()); a native fence sets its own
 * RLIMIT_NPROC (fence_rlimit.c).  Where root has no CAP_SYS_RESOURCE
 * (a container's), the soft limit rises to the hard one, and the log
 * says which.
 */
static void
fencer_nproc_raise(void)
{
	struct rlimit	 rl = { RLIM_INFINITY, RLIM_INFINITY };

	if (setrlimit(RLIMIT_NPROC, &rl) == 0)
		return;
	if (getrlimit(RLIMIT_NPROC, &rl) == -1)
		fatal("%s: getrlimit", __func__);
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NPROC, &rl) == -1)
		fatal("%s: setrlimit", __func__);
	log_info("RLIMIT_NPROC stays at %llu for the fencer's processes: "
	    "no CAP_SYS_RESOURCE to lift it (runsc sandboxes share it)",
	    (unsigned long long)rl.rlim_max);
}

/* Fences' ends arrive as SIGCHLD: its event, like every signal's, now. */
static void
fencer_prepare(const struct proc_args *pa)
{
	static struct event ev_chld;

	/* A pidfd per fence, and more while one boots. */
	proc_nofile_raise();
	fencer_nproc_raise();
	evsignal_assign(&ev_chld, fencer_self.ps_evbase, SIGCHLD,
	    fencer_sigchld, NULL);
	evsignal_add(&ev_chld, NULL);
}

static void
fencer_init_cb(const struct proc_args *pa)
{
	fencer_init(pa->pa_id);
}

/*
 * Configured: the backends may look for what they need, then each gives
 * up the capabilities of fencer_caps[] it alone needs where it will not
 * use them (fb_lockdown: so no fence even shows them in its bounding
 * set), and fences may be built ahead of boots (fb_warm_start).  A
 * reload looks for nothing again (docs/runsc.md, docs/vm.md).
 */
static void
fencer_start_cb(void)
{
	fencer_snap_init(fencer_self.ps_conf.c_state);
	fencer_denials_init();
	fencer_backends_start();
	fencer_backends_lockdown();
	fencer_backends_warm_start();
}

static void
fencer_sigchld(int sig, short event, void *arg)
{
	fencer_reap();
}

static void
fencer_shutdown(void)
{
	log_debug("%s: stopping every fence", __func__);
	fencer_stop_all();
}

/*
 * The broker has checked who asks (its uid and admin flag come from
 * the kernel); the fencer checks again that the asker may touch the
 * fence, so a confused broker cannot hand one user's fence to another.
 */
static void
fencer_dispatch_broker(struct imsgev *iev, struct imsg *imsg, void *arg)
{
	struct msg_boot	 b;
	struct msg_fence_req q;
	struct msg_snap	 sq;
	uint32_t	 reqid = imsg->hdr.ih_peerid;

	switch (imsg->hdr.ih_type) {
	case IMSG_FENCE_BOOT:
		if (msg_boot_decode(imsg->data, imsg->len, &b) == -1)
			fatalx("%s: bad boot request", __func__);
		fencer_boot(reqid, &b);
		break;
	case IMSG_FENCE_STOP:
		if (msg_fence_req_decode(imsg->data, imsg->len, &q) == -1)
			fatalx("%s: bad stop request", __func__);
		fencer_stop_req(reqid, &q);
		break;
	case IMSG_FENCE_SNAP:
		if (msg_snap_decode(imsg->data, imsg->len, &sq) == -1)
			fatalx("%s: bad snapshot request", __func__);
		fencer_snap_req(reqid, &sq);
		break;
	case IMSG_HOST_DOCTOR:
		if (msg_empty_decode(imsg->data, imsg->len) == -1)
			fatalx("%s: bad doctor request", __func__);
		fencer_doctor(reqid);
		break;
	case IMSG_PROBE_PREPARE:
		if (msg_fence_req_decode(imsg->data, imsg->len, &q) == -1)
			fatalx("%s: bad probe request", __func__);
		fencer_probe_request(reqid, &q);
		break;
	case IMSG_PROBE_OUTPUT:
		fencer_probe_output(reqid, imsg);
		break;
	case IMSG_FENCE_USAGE_REQ:
		if (msg_empty_decode(imsg->data, imsg->len) == -1)
			fatalx("%s: bad usage request", __func__);
		fencer_usage(reqid);
		break;
	default:
		fatalx("%s: unexpected %s", __func__,
		    msg_type_name(imsg->hdr.ih_type));
	}
}

static void
fencer_dispatch_prober(struct imsgev *iev, struct imsg *imsg, void *arg)
{
	switch (imsg->hdr.ih_type) {
	case IMSG_PROBE_VERDICT:
		fencer_probe_verdict(imsg->hdr.ih_peerid, imsg);
		break;
	default:
		fatalx("%s: unexpected %s", __func__,
		    msg_type_name(imsg->hdr.ih_type));
	}
}
