/*
 * Judging a parsed report: a verdict per axis, every reason an axis is
 * not fenced, and the level (docs/design.md section 5; the rules as
 * implemented are in docs/probe.md).  A level is the highest whose
 * conditions all hold; what was asked for only decides whether a shared
 * network "passes" or is a violation, and an egress list whether L2's
 * network is "fenced" or "allowlisted".
 */
#include <sys/types.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "fenced.h"
#include "report_impl.h"

static const char *const axis_names[AXIS_MAX] = {
	[AXIS_FILESYSTEM] = "filesystem",
	[AXIS_PROCESSES] = "processes",
	[AXIS_PRIVILEGES] = "privileges",
	[AXIS_NETWORK] = "network",
	[AXIS_KERNEL] = "kernel",
	[AXIS_SURFACE] = "surface",
};

static const char *const verdict_names[] = {
	[VERDICT_NOT_MEASURED] = "not measured",
	[VERDICT_FENCED] = "fenced",
	[VERDICT_NOT_FENCED] = "not-fenced",
	[VERDICT_PASSES] = "passes",
	[VERDICT_SEPARATE] = "separate",
	[VERDICT_SHARED] = "shared",
	[VERDICT_ALLOWLISTED] = "allowlisted",
};

const char *
axis_name(int a)
{
	if (a < 0 || a >= AXIS_MAX)
		return ("unknown");
	return (axis_names[a]);
}

const char *
verdict_name(int v)
{
	if (v < 0 ||
	    (size_t)v >= sizeof(verdict_names) / sizeof(verdict_names[0]))
		return ("not measured");
	return (verdict_names[v]);
}

/*
 * Printable ASCII only, whatever the locale: reasons may quote what the
 * fence sent.
 */
static void
level_sanitize(char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e)
			*s = '?';
}

void
verdict_unmeasured(struct probe_verdict *v, const char *fmt, ...)
{
	va_list	 ap;
	int	 i;

	v->pv_level = LEVEL_UNMEASURED;
	va_start(ap, fmt);
	vsnprintf(v->pv_reason, sizeof(v->pv_reason), fmt, ap);
	va_end(ap);
	level_sanitize(v->pv_reason);
	for (i = 0; i < AXIS_MAX; i++)
		if (v->pv_axes[i].av_verdict == VERDICT_NOT_MEASURED &&
		    v->pv_axes[i].av_reason[0] == '\0')
			strlcpy(v->pv_axes[i].av_reason, v->pv_reason,
			    sizeof(v->pv_axes[i].av_reason));
}

static void
axis_violation(struct probe_axis_verdict *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* One more reason the axis is not fenced. */
static void
axis_violation(struct probe_axis_verdict *a, const char *fmt, ...)
{
	va_list	 ap;

	a->av_verdict = VERDICT_NOT_FENCED;
	if (a->av_nviolations == VIOLATIONS_MAX) {
		a->av_more++;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(a->av_violations[a->av_nviolations], VIOLATION_LEN, fmt, ap);
	va_end(ap);
	level_sanitize(a->av_violations[a->av_nviolations++]);
}

static void
axis_unmeasured(struct probe_axis_verdict *a, const char *why)
{
	a->av_verdict = VERDICT_NOT_MEASURED;
	strlcpy(a->av_reason, why, sizeof(a->av_reason));
}

static const struct report_path *
level_path(const struct probe_report *r, const char *label)
{
	int	 i;

	for (i = 0; i < r->r_npaths; i++)
		if (strcmp(r->r_paths[i].rp_label, label) == 0)
			return (&r->r_paths[i]);
	return (NULL);
}

/*
 * The kind of kernel that answers the fence's commands: the layer
 * inside the host asked for (pt_inner: gVisor's sentry in a vm's
 * guest), else the backend's own.  The report's answers are that
 * kernel's, and are read as a fence of that kernel's are.
 */
static int
level_answering_kernel(const struct probe_expect *e)
{
	return (e->pe_traits.pt_inner != PROBE_KERNEL_HOST ?
	    e->pe_traits.pt_inner : e->pe_traits.pt_kernel);
}

/*
 * /usr and /etc: refused with EROFS, as a read-only mount refuses.
 * Where another process serves the fence's files, the fence's own
 * kernel may check the permission before the mount (gVisor's does), so
 * EACCES says as much; what grants it there is the host's reading of
 * that process's mounts, which judge_host_filesystem() requires.  A
 * user-space kernel inside a guest answers the same (the layer inside
 * a vm fence); there the host's reading of the machine's jail grants.
 */
static void
judge_readonly(const struct probe_report *r, const struct probe_expect *e,
    struct probe_axis_verdict *a, const char *label)
{
	const struct report_path *p = level_path(r, label);

	if (p == NULL)
		axis_violation(a, "filesystem: %s not reported", label);
	else if (p->rp_writable)
		axis_violation(a, "filesystem: %s writable", label);
	else if (strcmp(p->rp_error, "EROFS") != 0 &&
	    ((!e->pe_traits.pt_files_apart &&
	    e->pe_traits.pt_inner != PROBE_KERNEL_USER) ||
	    strcmp(p->rp_error, "EACCES") != 0))
		axis_violation(a, "filesystem: %s not read-only (%s)", label,
		    p->rp_error[0] != '\0' ? p->rp_error : "no error");
}

static void
judge_fs_special(const struct probe_report *r, struct probe_axis_verdict *a)
{
	const struct report_path *p;

	if ((p = level_path(r, "HOME")) == NULL)
		axis_violation(a, "filesystem: HOME not reported");
	else if (!p->rp_has_path)
		axis_violation(a, "filesystem: HOME not set");
	else if (!p->rp_writable)
		axis_violation(a, "filesystem: HOME not writable (%s)",
		    p->rp_error[0] != '\0' ? p->rp_error : "no error");
	if ((p = level_path(r, "/proc/sys")) == NULL)
		axis_violation(a, "filesystem: /proc/sys not reported");
	else if (p->rp_writable)
		axis_violation(a, "filesystem: /proc/sys writable");
	if ((p = level_path(r, "/sys")) == NULL)
		axis_violation(a, "filesystem: /sys not reported");
	else if (p->rp_exists && !p->rp_listable)
		axis_violation(a, "filesystem: /sys present");
	else if (p->rp_exists && p->rp_entries != 0)
		axis_violation(a, "filesystem: /sys visible (%lld entries)",
		    p->rp_entries);
}

/*
 * The host's side of each axis (docs/probe.md, "What grants each
 * axis"): the fencer's own reading of the fence's pid 1, which nothing
 * inside the fence can write.  An axis is fenced only if this says so
 * too; what it cannot read it cannot grant.
 */
static const struct probe_host *
judge_host(const struct probe_expect *e)
{
	return (e->pe_has_host ? &e->pe_host : NULL);
}

/*
 * Whom the host read: the agent, pid 1 of the fence; where the fence's
 * processes are a sandbox's tasks, the sandbox (gVisor's sentry) and,
 * for the mounts, the process that serves the fence's files (its
 * gofer).
 */
static const char *
judge_who(const struct probe_expect *e)
{
	return (e->pe_traits.pt_procs_apart ? "the sandbox" : "pid 1");
}

static const char *
judge_files_who(const struct probe_expect *e)
{
	const struct probe_host *h = judge_host(e);

	return (h != NULL && h->ph_files_apart ? "the gofer" : judge_who(e));
}

static void
judge_host_ro(const struct probe_expect *e, struct probe_axis_verdict *a,
    const char *what, int ro)
{
	if (ro == -1)
		axis_violation(a, "filesystem: %s has no %s mount",
		    judge_files_who(e), what);
	else if (ro != 1)
		axis_violation(a, "filesystem: %s of %s is not mounted "
		    "read-only", what, judge_files_who(e));
}

/*
 * Capabilities held in a user namespace of pid 1's own that maps no
 * host root hold nothing of the host's (gVisor's sandbox, as nobody).
 */
static int
judge_caps_own_ns(const struct probe_host *h)
{
	return (h->ph_userns_own && !h->ph_userns_root);
}

static void
judge_host_filesystem(const struct probe_expect *e,
    struct probe_axis_verdict *a)
{
	const struct probe_host *h = judge_host(e);
	uint32_t	 i;

	if (h == NULL || !h->ph_mounts_read) {
		/* Either table may be why: the reason names whose. */
		axis_violation(a, "filesystem: the host could not judge the "
		    "mounts of %s (%s)", judge_files_who(e), h != NULL &&
		    h->ph_mounts_error[0] != '\0' ? h->ph_mounts_error :
		    "no reading");
		return;
	}
	if (e->pe_traits.pt_files_apart && !h->ph_files_apart)
		axis_violation(a, "filesystem: the host did not read the "
		    "gofer's mounts");
	if (h->ph_files_apart && h->ph_inner_nhost > 0)
		axis_violation(a, "filesystem: %s's own mount table holds %u "
		    "mounts of the host's", judge_who(e), h->ph_inner_nhost);
	if (h->ph_root_host)
		axis_violation(a, "filesystem: / of %s is the host's",
		    judge_files_who(e));
	judge_host_ro(e, a, "/usr", h->ph_usr_ro);
	judge_host_ro(e, a, "/etc", h->ph_etc_ro);
	for (i = 0; i < h->ph_nbad; i++) {
		if (i < PROBE_HOST_BINDS_MAX)
			axis_violation(a, "filesystem: host path %.100s bound "
			    "in", h->ph_bad[i]);
		else
			axis_violation(a, "filesystem: more host paths bound "
			    "in");
	}
}

static void
judge_host_processes(const struct probe_expect *e,
    struct probe_axis_verdict *a)
{
	const struct probe_host *h = judge_host(e);
	int	 i;

	if (h == NULL || !h->ph_status_read) {
		axis_violation(a, "processes: the host could not read %s "
		    "(%s)", judge_who(e), h != NULL &&
		    h->ph_status_error[0] != '\0' ? h->ph_status_error :
		    "no reading");
		return;
	}
	if (e->pe_traits.pt_procs_apart) {
		/*
		 * The fence's processes are the sandbox's tasks, not the
		 * host's: what the host holds to is the sandbox, which
		 * must run as no root of the host's, in a user namespace
		 * of its own (docs/probe.md).  gVisor leaves it in the
		 * host's pid namespace, which the host cannot change.
		 */
		for (i = 0; i < 4; i++)
			if (h->ph_uid[i] == 0) {
				axis_violation(a, "processes: the sandbox runs "
				    "as uid 0");
				break;
			}
		if (!h->ph_userns_own)
			axis_violation(a, "processes: the sandbox is in the "
			    "host's user namespace");
		else if (h->ph_userns_root)
			axis_violation(a, "processes: the sandbox's user "
			    "namespace maps the host's uid 0");
		return;
	}
	if (h->ph_nspid_depth <= h->ph_nspid_self_depth ||
	    h->ph_nspid_last != 1)
		axis_violation(a, "processes: pid 1 is not pid 1 of a pid "
		    "namespace below the host's (NSpid: %u levels ending in "
		    "%u, the fencer's %u)", h->ph_nspid_depth,
		    h->ph_nspid_last, h->ph_nspid_self_depth);
	for (i = 0; i < 4; i++)
		if (h->ph_uid[i] == 0) {
			axis_violation(a, "processes: pid 1 runs as uid 0");
			break;
		}
}

static void
judge_host_privileges(const struct probe_expect *e,
    struct probe_axis_verdict *a)
{
	static const char *const names[HOST_CAP_MAX] = {
		[HOST_CAP_EFF] = "CapEff", [HOST_CAP_PRM] = "CapPrm",
		[HOST_CAP_BND] = "CapBnd", [HOST_CAP_AMB] = "CapAmb",
	};
	const struct probe_host *h = judge_host(e);
	int	 i;

	if (h == NULL || !h->ph_status_read) {
		axis_violation(a, "privileges: the host could not read %s "
		    "(%s)", judge_who(e), h != NULL &&
		    h->ph_status_error[0] != '\0' ? h->ph_status_error :
		    "no reading");
		return;
	}
	if (h->ph_seccomp != 2)
		axis_violation(a, "privileges: %s has Seccomp %d",
		    judge_who(e), h->ph_seccomp);
	else if (h->ph_filters <= h->ph_filters_self)
		axis_violation(a, "privileges: %s has no filter of its own "
		    "(Seccomp_filters %u)", judge_who(e), h->ph_filters);
	if (h->ph_nnp != 1)
		axis_violation(a, "privileges: %s has NoNewPrivs %d",
		    judge_who(e), h->ph_nnp);
	if (e->pe_traits.pt_procs_apart && judge_caps_own_ns(h))
		return;
	for (i = 0; i < HOST_CAP_MAX; i++)
		if (h->ph_cap[i] != 0)
			axis_violation(a, "privileges: %s has %s %016llx",
			    judge_who(e), names[i],
			    (unsigned long long)h->ph_cap[i]);
}

/*
 * L3 and L4 ask for no capabilities: none in any set the report shows,
 * and none the host sees pid 1 hold over the host's own (a sandbox's
 * may be held in its own user namespace only).
 */
static int
level_host_no_caps(const struct probe_expect *e)
{
	const struct probe_host *h = judge_host(e);
	int	 i;

	if (h == NULL || !h->ph_status_read)
		return (0);
	if (e->pe_traits.pt_procs_apart && judge_caps_own_ns(h))
		return (1);
	for (i = 0; i < HOST_CAP_MAX; i++)
		if (h->ph_cap[i] != 0)
			return (0);
	return (1);
}

/*
 * Does the host see pid 1 in a network of its own holding only lo?  Our
 * canary listener is in the host's tables: if pid 1's tables list it,
 * pid 1 shares the host's network.  Each reason goes to a if given.
 */
static int
judge_host_net_own(const struct probe_expect *e, struct probe_axis_verdict *a)
{
	const struct probe_host *h = judge_host(e);
	int	 own = 1;

	if (h == NULL || !h->ph_net_read) {
		if (a != NULL)
			axis_violation(a, "network: the host could not read "
			    "the network of %s (%s)", judge_who(e), h != NULL &&
			    h->ph_net_error[0] != '\0' ? h->ph_net_error :
			    "no reading");
		return (0);
	}
	if (h->ph_canary_seen) {
		own = 0;
		if (a != NULL)
			axis_violation(a, "network: %s shares the host's "
			    "network (the canary listener is in its tables)",
			    judge_who(e));
	}
	if (h->ph_iface_other[0] != '\0' || h->ph_nifaces == 0) {
		own = 0;
		if (a != NULL)
			axis_violation(a, "network: %s has %s%s",
			    judge_who(e), h->ph_nifaces == 0 ?
			    "no interface" : "interface ", h->ph_iface_other);
	}
	return (own);
}

static void
judge_filesystem(const struct probe_report *r, const struct probe_expect *e,
    struct probe_axis_verdict *a)
{
	int	 i;

	if (!(r->r_sections & REPORT_S_FILESYSTEM)) {
		axis_unmeasured(a, "no filesystem section");
		return;
	}
	a->av_verdict = VERDICT_FENCED;
	judge_readonly(r, e, a, "/usr");
	judge_readonly(r, e, a, "/etc");
	judge_fs_special(r, a);
	if (e->pe_secret[0] != '\0') {
		for (i = 0; i < r->r_nsecrets; i++)
			if (strcmp(r->r_secrets[i].rs_path, e->pe_secret) == 0)
				break;
		if (i == r->r_nsecrets)
			axis_violation(a,
			    "filesystem: host secret not checked");
		else if (r->r_secrets[i].rs_readable)
			axis_violation(a, "filesystem: host secret %.80s "
			    "readable", e->pe_secret);
	}
	if (e->pe_ns_mnt != 0 && r->r_ns_mnt == e->pe_ns_mnt)
		axis_violation(a, "filesystem: mount namespace is the host's");
	judge_host_filesystem(e, a);
}

/*
 * Whether the report's namespace inodes mean anything against the
 * host's: not from a guest kernel, which numbers its own (its first
 * pid namespace has the inode every kernel's first one has).  What
 * keeps a guest's processes apart is the host's reading of the jail of
 * the machine that runs it and the guest's separate kernel.
 */
static int
level_ns_comparable(const struct probe_expect *e)
{
	return (e->pe_traits.pt_kernel != PROBE_KERNEL_GUEST);
}

static void
judge_processes(const struct probe_report *r, const struct probe_expect *e,
    int shared, struct probe_axis_verdict *a)
{
	char	 uids[64];
	int	 i, n = 0;

	if (!(r->r_sections & REPORT_S_PROCESSES)) {
		axis_unmeasured(a, "no processes section");
		return;
	}
	a->av_verdict = VERDICT_FENCED;
	if (r->r_other_uids) {
		uids[0] = '\0';
		for (i = 0; i < r->r_nother && i < 4; i++)
			n += snprintf(uids + n, sizeof(uids) - n, "%s%lld",
			    i > 0 ? ", " : "", r->r_other_sample[i]);
		axis_violation(a, "processes: processes of other uids visible "
		    "(%s)", uids[0] != '\0' ? uids : "uids not given");
	}
	if (e->pe_host_pid > 0) {
		if (!r->r_has_host_pid || r->r_host_pid != e->pe_host_pid)
			axis_violation(a, "processes: host pid not checked");
		else if (r->r_host_pid_visible)
			axis_violation(a, "processes: host pid %d visible",
			    (int)e->pe_host_pid);
	}
	if (!level_ns_comparable(e))
		;
	else if (e->pe_ns_pid != 0 && r->r_ns_pid == e->pe_ns_pid)
		axis_violation(a, "processes: pid namespace is the host's");
	else if (e->pe_ns_pid != 0 && r->r_ns_pid == 0 && shared)
		axis_violation(a, "processes: pid namespace not reported");
	judge_host_processes(e, a);
}

/*
 * The calls whose refusal proves the fence's own filter: the daemon's
 * filter, which every fence inherits, lets them through.
 */
static int
judge_refused(const char *outcome)
{
	return (strcmp(outcome, "EPERM") == 0 ||
	    strcmp(outcome, "ENOSYS") == 0 || strcmp(outcome, "SIGSYS") == 0);
}

static void
judge_calls(const struct probe_report *r, struct probe_axis_verdict *a)
{
	static const int proof[] = { PRIV_UNSHARE_USER, PRIV_KEYCTL, PRIV_BPF };
	size_t		 i;

	for (i = 0; i < PRIV_MAX; i++) {
		if (r->r_priv[i][0] == '\0')
			axis_violation(a, "privileges: %s not tried",
			    report_priv_names[i]);
		else if (strcmp(r->r_priv[i], "ok") == 0)
			axis_violation(a, "privileges: %s allowed",
			    report_priv_names[i]);
	}
	for (i = 0; i < sizeof(proof) / sizeof(proof[0]); i++)
		if (r->r_priv[proof[i]][0] != '\0' &&
		    strcmp(r->r_priv[proof[i]], "ok") != 0 &&
		    !judge_refused(r->r_priv[proof[i]]))
			axis_violation(a, "privileges: %s not refused by a "
			    "filter (%s)", report_priv_names[proof[i]],
			    r->r_priv[proof[i]]);
}

static void
judge_caps(const struct probe_report *r, struct probe_axis_verdict *a)
{
	static const char *const names[CAP_SET_MAX] = {
		[CAP_SET_EFF] = "CapEff", [CAP_SET_PRM] = "CapPrm",
		[CAP_SET_BND] = "CapBnd", [CAP_SET_AMB] = "CapAmb",
	};
	int	 i;

	if (!r->r_has_cap[CAP_SET_EFF])
		axis_violation(a, "privileges: CapEff not reported");
	for (i = 0; i < CAP_SET_MAX; i++)
		if (r->r_has_cap[i] && r->r_cap[i] != 0)
			axis_violation(a, "privileges: %s is %016llx", names[i],
			    (unsigned long long)r->r_cap[i]);
}

static void
judge_privileges(const struct probe_report *r, const struct probe_expect *e,
    struct probe_axis_verdict *a)
{
	if (!(r->r_sections & REPORT_S_HINTS) ||
	    !(r->r_sections & REPORT_S_PRIVILEGES)) {
		axis_unmeasured(a, !(r->r_sections & REPORT_S_HINTS) ?
		    "no sandboxHints section" : "no privileges section");
		return;
	}
	a->av_verdict = VERDICT_FENCED;
	if (r->r_seccomp == -1)
		axis_violation(a, "privileges: Seccomp not reported");
	else if (r->r_seccomp != 2)
		axis_violation(a, "privileges: Seccomp is %lld", r->r_seccomp);
	if (r->r_nnp == -1)
		axis_violation(a, "privileges: NoNewPrivs not reported");
	else if (r->r_nnp != 1)
		axis_violation(a, "privileges: NoNewPrivs is %lld", r->r_nnp);
	judge_caps(r, a);
	/* A second wall: what the fence's filter refuses, seen inside. */
	judge_calls(r, a);
	judge_host_privileges(e, a);
}

/* No capability in any set the report shows, CapEff shown. */
static int
level_no_caps(const struct probe_report *r)
{
	int	 i;

	if (!r->r_has_cap[CAP_SET_EFF])
		return (0);
	for (i = 0; i < CAP_SET_MAX; i++)
		if (r->r_has_cap[i] && r->r_cap[i] != 0)
			return (0);
	return (1);
}

/* Only lo, and at least that: no way out of the fence's own network. */
static int
level_only_lo(const struct probe_report *r, char *other, size_t len)
{
	int	 i;

	other[0] = '\0';
	for (i = 0; i < r->r_nifaces; i++)
		if (strcmp(r->r_ifaces[i], "lo") != 0) {
			strlcpy(other, r->r_ifaces[i], len);
			return (0);
		}
	return (r->r_nifaces > 0);
}

/*
 * Where the fence should have no network (L2, and backends with a
 * network of their own at every tier): the canary unreached by both
 * accounts, only lo, a network namespace of its own.
 */
static void
judge_net_strict(const struct probe_report *r, const struct probe_expect *e,
    struct probe_axis_verdict *a)
{
	char	 other[REPORT_LABEL_LEN];

	a->av_verdict = VERDICT_FENCED;
	if (e->pe_canary == CANARY_YES || (r->r_has_canary &&
	    r->r_canary_connected))
		axis_violation(a, "network: canary reached from an %s fence",
		    e->pe_traits.pt_net_own ? backend_name(e->pe_backend) :
		    tier_name(TIER_L2));
	else if (e->pe_canary != CANARY_NOT_RUN && (!r->r_has_canary ||
	    (e->pe_canary_target[0] != '\0' &&
	    strcmp(r->r_canary_target, e->pe_canary_target) != 0)))
		axis_violation(a, "network: canary not probed");
	if (!level_only_lo(r, other, sizeof(other)))
		axis_violation(a, "network: %s%s", other[0] != '\0' ?
		    "interface other than lo: " : "no interface reported",
		    other);
	if (level_ns_comparable(e) && e->pe_ns_net != 0 &&
	    r->r_ns_net == e->pe_ns_net)
		axis_violation(a, "network: network namespace is the host's");
	(void)judge_host_net_own(e, a);
	if (a->av_verdict == VERDICT_FENCED && e->pe_canary == CANARY_NOT_RUN)
		axis_unmeasured(a, "no canary was run");
}

/* Is the report's check the one the host asked for ("": none asked)? */
static int
judge_egress_asked(const struct probe_egress_try *t, const char *asked)
{
	if (asked[0] == '\0')
		return (!t->et_present);
	return (t->et_present && strcmp(t->et_target, asked) == 0);
}

/* A target off the list that the list matches after all tests nothing. */
static int
judge_egress_listed(const struct probe_expect *e, const char *target)
{
	struct egress_entry	 ee;

	return (egress_entry_parse(target, &ee, NULL) &&
	    egress_list_match(e->pe_egress, e->pe_negress, ee.ee_name,
	    (uint16_t)ee.ee_port, NULL));
}

/*
 * A fence with an egress list (L2, native): everything the strict
 * network asks (the canary unreached, only lo, a network of its own by
 * the host's reading, which alone grants), and a proxy that keeps to
 * the list: the report must carry the checks of exactly the targets
 * the fencer asked for, and the one off the list must not have been
 * reached through the proxy.  The one on the list not reached is no
 * violation; the boundary states it.  The list is the host's, never
 * the report's.
 */
static void
judge_net_egress(const struct probe_report *r, const struct probe_expect *e,
    struct probe_verdict *v)
{
	struct probe_axis_verdict *a = &v->pv_axes[AXIS_NETWORK];
	const struct probe_egress_try *al = &r->r_egress_allowed;
	const struct probe_egress_try *rf = &r->r_egress_refused;
	uint32_t	 i;

	v->pv_negress = e->pe_negress < EGRESS_LIST_MAX ? e->pe_negress :
	    EGRESS_LIST_MAX;
	for (i = 0; i < v->pv_negress; i++)
		strlcpy(v->pv_egress[i], e->pe_egress[i],
		    sizeof(v->pv_egress[i]));
	if (e->pe_tier != TIER_L2 || !e->pe_traits.pt_egress) {
		axis_unmeasured(a, "an egress list outside an L2 native fence");
		return;
	}
	judge_net_strict(r, e, a);
	if (!r->r_has_egress) {
		if (a->av_verdict == VERDICT_FENCED)
			axis_unmeasured(a, "no egress section");
		return;
	}
	v->pv_egress_allowed = *al;
	v->pv_egress_refused = *rf;
	if (!judge_egress_asked(al, e->pe_egress_allowed) ||
	    !judge_egress_asked(rf, e->pe_egress_refused) ||
	    e->pe_egress_refused[0] == '\0') {
		if (a->av_verdict == VERDICT_FENCED)
			axis_unmeasured(a, "egress targets not the ones asked");
		return;
	}
	if (judge_egress_listed(e, e->pe_egress_refused)) {
		if (a->av_verdict == VERDICT_FENCED)
			axis_unmeasured(a, "the refused target is on the list");
		return;
	}
	if (rf->et_reached)
		axis_violation(a, "network: %.100s, not in the list, reached "
		    "through the proxy", rf->et_target);
	if (a->av_verdict == VERDICT_FENCED)
		a->av_verdict = VERDICT_ALLOWLISTED;
}

static void
judge_network(const struct probe_report *r, const struct probe_expect *e,
    struct probe_verdict *v)
{
	struct probe_axis_verdict *a = &v->pv_axes[AXIS_NETWORK];
	char	 other[REPORT_LABEL_LEN];

	if (!(r->r_sections & REPORT_S_NETWORK)) {
		axis_unmeasured(a, "no network section");
		return;
	}
	/* Without a list, an egress object is only the fence's word. */
	if (e->pe_negress > 0) {
		judge_net_egress(r, e, v);
		return;
	}
	if (e->pe_tier == TIER_L2 || e->pe_traits.pt_net_own) {
		judge_net_strict(r, e, a);
		return;
	}
	/* L1 and L1.5 share the host's network by design... */
	a->av_verdict = VERDICT_PASSES;
	/*
	 * ...unless the fence measurably has none: by the host's reading,
	 * which grants, and by the report, which can only take away.
	 */
	if (judge_host_net_own(e, NULL) &&
	    e->pe_canary == CANARY_NO && r->r_has_canary &&
	    !r->r_canary_connected && level_only_lo(r, other, sizeof(other)) &&
	    (e->pe_canary_target[0] == '\0' ||
	    strcmp(r->r_canary_target, e->pe_canary_target) == 0))
		a->av_verdict = VERDICT_FENCED;
}

/*
 * Which kernel answered: "separate" when its boot_id is missing or not
 * the host's, or its uname is not the host's.
 */
static void
judge_kernel(const struct probe_report *r, const struct probe_expect *e,
    struct probe_axis_verdict *a)
{
	if (!(r->r_sections & REPORT_S_IDENTITY)) {
		axis_unmeasured(a, "no identity section");
		return;
	}
	if (e->pe_boot_id[0] == '\0' && e->pe_release[0] == '\0' &&
	    e->pe_version[0] == '\0') {
		axis_unmeasured(a, "the host's kernel was not given");
		return;
	}
	if (r->r_boot_id[0] == '\0' ||
	    (e->pe_boot_id[0] != '\0' &&
	    strcmp(r->r_boot_id, e->pe_boot_id) != 0) ||
	    (e->pe_release[0] != '\0' &&
	    strcmp(r->r_release, e->pe_release) != 0) ||
	    (e->pe_version[0] != '\0' &&
	    strcmp(r->r_version, e->pe_version) != 0))
		a->av_verdict = VERDICT_SEPARATE;
	else
		a->av_verdict = VERDICT_SHARED;
}

/* An outcome that is a refusal: not "ok", and the entry was tried. */
static int
judge_surface_refused(const char *outcome)
{
	return (strcmp(outcome, "ok") != 0 &&
	    strcmp(outcome, "timeout") != 0 &&
	    strcmp(outcome, "fork-failed") != 0 &&
	    strcmp(outcome, "ETIMEDOUT") != 0 &&
	    strcmp(outcome, "EUNKNOWN") != 0);
}

/*
 * The kernel's entry points the report reached (common/surface.h).
 * Where the host's kernel answers them and the tier asked for a filter
 * of its own (L1.5, L2), every entry reached, or not tried to its end,
 * is a violation.  At L1 they are listed, by design reachable: the
 * axis passes.  A kernel of the fence's own (in user space, or a
 * guest's) answered for itself: its entries are listed and not held
 * against the host's.  Only the report's word: it can take a level
 * away (L1.5 and L2 want the axis fenced), never grant one.
 */
static void
judge_surface(const struct probe_report *r, const struct probe_expect *e,
    struct probe_verdict *v)
{
	struct probe_axis_verdict *a = &v->pv_axes[AXIS_SURFACE];
	int	 i, strict, clean = 1;

	if (!(r->r_sections & REPORT_S_SURFACE)) {
		axis_unmeasured(a, "no surface section");
		return;
	}
	v->pv_has_surface = 1;
	v->pv_surface_kernel = level_answering_kernel(e);
	strict = e->pe_traits.pt_kernel == PROBE_KERNEL_HOST &&
	    (e->pe_tier == TIER_L15 || e->pe_tier == TIER_L2);
	a->av_verdict = VERDICT_FENCED;
	for (i = 0; i < SURFACE_MAX; i++) {
		if (strcmp(r->r_surface[i], "ok") == 0)
			v->pv_surface |= 1U << i;
		if (judge_surface_refused(r->r_surface[i]))
			continue;
		clean = 0;
		if (!strict)
			continue;
		if (strcmp(r->r_surface[i], "ok") == 0)
			axis_violation(a, "surface: %s reachable",
			    report_surface_ids[i]);
		else
			axis_violation(a, "surface: %s not tried to its end "
			    "(%s)", report_surface_ids[i], r->r_surface[i]);
	}
	if (!clean && !strict)
		a->av_verdict = VERDICT_PASSES;
}

/*
 * The layer inside that the host asked for (pt_inner): the host knows
 * it asked, and cannot see inside the guest, so the report's reading
 * can only take the layer away.  A user-space kernel (gVisor's sentry)
 * has no boot_id; a Linux kernel, the guest's own, always has one: a
 * report that shows one says the commands ran on a Linux kernel, the
 * layer missing.  The identity section is required: without it the
 * verdict is unmeasured anyway.
 */
static void
judge_inner(const struct probe_report *r, const struct probe_expect *e,
    struct probe_verdict *v)
{
	v->pv_inner = e->pe_traits.pt_inner;
	if (v->pv_inner == PROBE_KERNEL_HOST)
		return;
	v->pv_inner_verdict = VERDICT_NOT_MEASURED;
	if (!(r->r_sections & REPORT_S_IDENTITY)) {
		strlcpy(v->pv_inner_reason, "no identity section",
		    sizeof(v->pv_inner_reason));
		return;
	}
	if (r->r_boot_id[0] != '\0') {
		v->pv_inner_verdict = VERDICT_NOT_FENCED;
		snprintf(v->pv_inner_reason, sizeof(v->pv_inner_reason),
		    "kernel: the layer inside is missing: a Linux kernel "
		    "answered (release %.40s, a boot_id)", r->r_release[0] !=
		    '\0' ? r->r_release : "not given");
		level_sanitize(v->pv_inner_reason);
		return;
	}
	v->pv_inner_verdict = VERDICT_SEPARATE;
}

/*
 * L1.5 and L2 want no entry reachable: fenced, or for a kernel of the
 * fence's own, its entries listed (they are not the host's).
 */
static int
level_surface_ok(const struct probe_expect *e, const struct probe_verdict *v)
{
	int	 s = v->pv_axes[AXIS_SURFACE].av_verdict;

	return (s == VERDICT_FENCED || (s == VERDICT_PASSES &&
	    e->pe_traits.pt_kernel != PROBE_KERNEL_HOST));
}

/*
 * How the backend brings the sandbox home in, as its entry says: NULL
 * when it says nothing.  The string lives as long as e.
 */
static const char *
level_home_channel(const struct probe_expect *e)
{
	return (e->pe_traits.pt_home[0] != '\0' ? e->pe_traits.pt_home :
	    NULL);
}

static int
level_derive(const struct probe_report *r, const struct probe_expect *e,
    const struct probe_verdict *v)
{
	int	 fs, pr, pv, net, l2net;

	/* A fence without the layer it asked for earns nothing. */
	if (e->pe_traits.pt_inner != PROBE_KERNEL_HOST &&
	    v->pv_inner_verdict != VERDICT_SEPARATE)
		return (LEVEL_NOT_EARNED);

	fs = v->pv_axes[AXIS_FILESYSTEM].av_verdict == VERDICT_FENCED;
	pr = v->pv_axes[AXIS_PROCESSES].av_verdict == VERDICT_FENCED;
	/* A filter of its own, and the entries it should close closed. */
	pv = v->pv_axes[AXIS_PRIVILEGES].av_verdict == VERDICT_FENCED &&
	    level_surface_ok(e, v);
	net = v->pv_axes[AXIS_NETWORK].av_verdict == VERDICT_FENCED;
	/*
	 * L2 with an egress list: the network allowlisted, never fenced;
	 * without one, fenced, never allowlisted.
	 */
	l2net = e->pe_negress > 0 ?
	    v->pv_axes[AXIS_NETWORK].av_verdict == VERDICT_ALLOWLISTED : net;
	if (fs && pr && net && level_no_caps(r) && level_host_no_caps(e) &&
	    v->pv_axes[AXIS_KERNEL].av_verdict == VERDICT_SEPARATE) {
		/* A kernel of its own, as its backend declares it. */
		if (e->pe_traits.pt_kernel == PROBE_KERNEL_GUEST)
			return (LEVEL_L4);
		if (e->pe_traits.pt_kernel == PROBE_KERNEL_USER)
			return (LEVEL_L3);
	}
	if (fs && pr && pv && l2net)
		return (LEVEL_L2);
	if (fs && pr && pv)
		return (LEVEL_L15);
	if (fs && pr)
		return (LEVEL_L1);
	return (LEVEL_NOT_EARNED);
}

void
level_judge(const struct probe_report *r, const struct probe_expect *e,
    struct probe_verdict *v)
{
	static const struct {
		unsigned int	 s_bit;
		const char	*s_name;
	} required[] = {
		{ REPORT_S_IDENTITY, "identity" },
		{ REPORT_S_HINTS, "sandboxHints" },
		{ REPORT_S_FILESYSTEM, "filesystem" },
		{ REPORT_S_PROCESSES, "processes" },
	};
	size_t	 i;

	strlcpy(v->pv_when, r->r_when, sizeof(v->pv_when));
	strlcpy(v->pv_release, r->r_release, sizeof(v->pv_release));
	strlcpy(v->pv_version, r->r_version, sizeof(v->pv_version));
	strlcpy(v->pv_boot_id, r->r_boot_id, sizeof(v->pv_boot_id));
	v->pv_home = level_home_channel(e);
	judge_kernel(r, e, &v->pv_axes[AXIS_KERNEL]);
	judge_filesystem(r, e, &v->pv_axes[AXIS_FILESYSTEM]);
	judge_processes(r, e, v->pv_axes[AXIS_KERNEL].av_verdict !=
	    VERDICT_SEPARATE, &v->pv_axes[AXIS_PROCESSES]);
	judge_privileges(r, e, &v->pv_axes[AXIS_PRIVILEGES]);
	judge_network(r, e, v);
	judge_surface(r, e, v);
	judge_inner(r, e, v);
	for (i = 0; i < sizeof(required) / sizeof(required[0]); i++)
		if (!(r->r_sections & required[i].s_bit)) {
			if (r->r_incomplete[0] != '\0')
				verdict_unmeasured(v, "no %s section: the "
				    "probe stopped in %s", required[i].s_name,
				    r->r_incomplete);
			else
				verdict_unmeasured(v, "no %s section",
				    required[i].s_name);
			return;
		}
	v->pv_level = level_derive(r, e, v);
}

static json_t *
verdict_axis_json(const struct probe_axis_verdict *a)
{
	json_t	*o, *list;
	char	 more[32];
	int	 i;

	if ((o = json_object()) == NULL)
		return (NULL);
	list = json_array();
	for (i = 0; i < a->av_nviolations; i++)
		json_array_append_new(list, json_string(a->av_violations[i]));
	if (a->av_more > 0) {
		snprintf(more, sizeof(more), "and %d more", a->av_more);
		json_array_append_new(list, json_string(more));
	}
	json_object_set_new(o, "verdict",
	    json_string(verdict_name(a->av_verdict)));
	json_object_set_new(o, "violations", list);
	json_object_set_new(o, "reason", a->av_verdict == VERDICT_NOT_MEASURED
	    && a->av_reason[0] != '\0' ? json_string(a->av_reason) :
	    json_null());
	return (o);
}

static json_t *
verdict_egress_try_json(const struct probe_egress_try *t)
{
	if (!t->et_present)
		return (json_null());
	return (json_pack("{s:s,s:b,s:i,s:s,s:b,s:s?}", "target", t->et_target,
	    "proxy", t->et_proxy, "status", t->et_status, "code", t->et_code,
	    "reached", t->et_reached, "error", t->et_error[0] != '\0' ?
	    t->et_error : NULL));
}

/* {"list": the host's, "allowed", "refused": as the report measured}. */
static json_t *
verdict_egress_json(const struct probe_verdict *v)
{
	json_t		*o, *list;
	uint32_t	 i;

	if ((o = json_object()) == NULL || (list = json_array()) == NULL) {
		json_decref(o);
		return (NULL);
	}
	for (i = 0; i < v->pv_negress && i < EGRESS_LIST_MAX; i++)
		if (json_array_append_new(list, json_string(v->pv_egress[i]))
		    == -1) {
			json_decref(list);
			json_decref(o);
			return (NULL);
		}
	if (json_object_set_new(o, "list", list) == -1 ||
	    json_object_set_new(o, "allowed",
	    verdict_egress_try_json(&v->pv_egress_allowed)) == -1 ||
	    json_object_set_new(o, "refused",
	    verdict_egress_try_json(&v->pv_egress_refused)) == -1) {
		json_decref(o);
		return (NULL);
	}
	return (o);
}

/* The surface axis's "reachable" (ids) and "kernel" (whose entries). */
static int
verdict_surface_json(const struct probe_verdict *v, json_t *ax)
{
	static const char *const kernels[PROBE_KERNEL_MAX] = {
		[PROBE_KERNEL_HOST] = "host", [PROBE_KERNEL_USER] = "user",
		[PROBE_KERNEL_GUEST] = "guest",
	};
	json_t	*list;
	int	 i, k = v->pv_surface_kernel;

	if (!v->pv_has_surface)
		return (json_object_set_new(ax, "reachable", json_null()) ||
		    json_object_set_new(ax, "kernel", json_null()) ? -1 : 0);
	if ((list = json_array()) == NULL)
		return (-1);
	for (i = 0; i < SURFACE_MAX; i++)
		if ((v->pv_surface & (1U << i)) && json_array_append_new(list,
		    json_string(report_surface_ids[i])) == -1) {
			json_decref(list);
			return (-1);
		}
	if (json_object_set_new(ax, "reachable", list) == -1 ||
	    json_object_set_new(ax, "kernel", json_string(k >= 0 &&
	    k < PROBE_KERNEL_MAX ? kernels[k] : "host")) == -1)
		return (-1);
	return (0);
}

/*
 * The layer inside ({"kernel": whose kind, "verdict": "separate" when
 * the report shows it, "not-fenced" when it shows a Linux kernel in its
 * place, "reason"}), or null: none asked.
 */
static json_t *
verdict_inner_json(const struct probe_verdict *v)
{
	if (v->pv_inner == PROBE_KERNEL_HOST)
		return (json_null());
	return (json_pack("{s:s,s:s,s:s?}", "kernel",
	    v->pv_inner == PROBE_KERNEL_USER ? "user" : "guest", "verdict",
	    verdict_name(v->pv_inner_verdict), "reason",
	    v->pv_inner_reason[0] != '\0' ? v->pv_inner_reason : NULL));
}

static json_t *
verdict_kernel_json(const struct probe_verdict *v)
{
	return (json_pack("{s:s?,s:s?,s:s?}",
	    "release", v->pv_release[0] != '\0' ? v->pv_release : NULL,
	    "version", v->pv_version[0] != '\0' ? v->pv_version : NULL,
	    "bootId", v->pv_boot_id[0] != '\0' ? v->pv_boot_id : NULL));
}

/*
 * Strings from the report (the kernel's names) may hold anything valid
 * in JSON; jansson escapes them.  json_string() of invalid UTF-8 gives
 * NULL, and a NULL value makes json_object_set_new fail: the caller
 * then gets NULL rather than a partial boundary.
 */
char *
verdict_json(const struct probe_verdict *v)
{
	json_t	*root, *axes, *all, *ax;
	char	*s;
	int	 i, j, bad = 0;

	root = json_object();
	axes = json_object();
	all = json_array();
	if (root == NULL || axes == NULL || all == NULL)
		bad = 1;
	for (i = 0; !bad && i < AXIS_MAX; i++) {
		if ((ax = verdict_axis_json(&v->pv_axes[i])) == NULL ||
		    (i == AXIS_FILESYSTEM && v->pv_home != NULL &&
		    json_object_set_new(ax, "home",
		    json_string(v->pv_home)) == -1) ||
		    (i == AXIS_NETWORK && v->pv_negress > 0 &&
		    json_object_set_new(ax, "egress",
		    verdict_egress_json(v)) == -1) ||
		    (i == AXIS_SURFACE && verdict_surface_json(v, ax) == -1) ||
		    json_object_set_new(axes, axis_names[i], ax) == -1)
			bad = 1;
		for (j = 0; !bad && j < v->pv_axes[i].av_nviolations; j++)
			json_array_append_new(all,
			    json_string(v->pv_axes[i].av_violations[j]));
	}
	if (!bad && v->pv_inner != PROBE_KERNEL_HOST &&
	    v->pv_inner_verdict == VERDICT_NOT_FENCED &&
	    json_array_insert_new(all, 0, json_string(v->pv_inner_reason)) ==
	    -1)
		bad = 1;
	if (!bad && (json_object_set_new(root, "level",
	    json_string(level_name(v->pv_level))) == -1 ||
	    json_object_set_new(root, "measuredBy",
	    json_string("probe")) == -1 ||
	    json_object_set_new(root, "when", v->pv_when[0] != '\0' ?
	    json_string(v->pv_when) : json_null()) == -1 ||
	    json_object_set_new(root, "reason", v->pv_reason[0] != '\0' ?
	    json_string(v->pv_reason) : json_null()) == -1 ||
	    json_object_set(root, "axes", axes) == -1 ||
	    json_object_set(root, "violations", all) == -1 ||
	    json_object_set_new(root, "kernel", verdict_kernel_json(v)) == -1 ||
	    json_object_set_new(root, "inner", verdict_inner_json(v)) == -1))
		bad = 1;
	s = bad ? NULL : json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(axes);
	json_decref(all);
	json_decref(root);
	return (s);
}
