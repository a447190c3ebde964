/*
 * The host doctor (docs/doctor.md): whether this host can build a fence
 * of each tier and backend now, and if not why and the fix.  The broker
 * asks (IMSG_HOST_DOCTOR); the answer is one IMSG_HOST_CHECK a row, then
 * IMSG_FENCE_END.  The rows are the host's checks (cgroups, swap
 * accounting, user namespaces, seccomp, the egress resolver), each
 * backend's own (its fb_unavailable, and what its fb_doctor adds), and a
 * row a tier, L1 to L4, with the configured default last.
 *
 * A verdict on a boot is never decided here: a backend's and a tier's
 * rows are what fencer_boot_refusal() says, which is what a boot's
 * admission sends back, so the reason the doctor gives is the one that
 * boot would fail with.  hc_reason and hc_fix are for anyone, as a
 * boot's error is (and say no more than it: a path fenced.conf names
 * for a backend, as its boot error does); the paths, versions, hashes
 * and cgroup folders the doctor adds go in hc_detail, which the broker
 * keeps for root and the admin group.
 */
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fenced.h"
#include "log.h"
#include "msg.h"
#include "proc.h"
#include "cg.h"
#include "fencer.h"
#include "backend.h"

#define DOCTOR_STACK		(64 * 1024)

static uint32_t	 doctor_reqid;

static const char *const doctor_cg_names[3] = { "memory", "pids", "cpu" };

static const char doctor_fix_cgroups[] = "let fenced make cgroups: on "
    "cgroup v2, start it in a subtree of its own with the memory, pids and "
    "cpu controllers delegated (systemd: Delegate=yes in its unit), not "
    "in a shared cgroup with no controllers enabled; on v1, mount the "
    "memory, pids and cpu hierarchies; then restart fenced";
static const char doctor_fix_backend[] = "mend what the reason names, then "
    "restart fenced: a backend looks at the host when the daemon starts";

/* Bytes a row may not carry (a path's own) become '?'. */
static void
doctor_clean(char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e)
			*s = '?';
}

static void
doctor_send(struct msg_check *c)
{
	void	*buf;
	size_t	 len;

	doctor_clean(c->hc_reason);
	doctor_clean(c->hc_fix);
	doctor_clean(c->hc_detail);
	if (c->hc_status != CHECK_OK && c->hc_reason[0] == '\0')
		strlcpy(c->hc_reason, "no reason given", sizeof(c->hc_reason));
	if (msg_check_encode(c, &buf, &len) == -1)
		fatal("%s: encode %s", __func__, c->hc_name);
	if (proc_compose(&fencer_self, PROC_BROKER, IMSG_HOST_CHECK,
	    doctor_reqid, -1, buf, len) == -1)
		log_warn("%s: to broker", __func__);
	free(buf);
}

/* One row of the report (backend.h: a backend's fb_doctor adds its own). */
void
fencer_doctor_row(int kind, const char *name, int status, const char *reason,
    const char *fix, const char *detail)
{
	struct msg_check c;

	memset(&c, 0, sizeof(c));
	c.hc_kind = kind;
	strlcpy(c.hc_name, name, sizeof(c.hc_name));
	c.hc_status = status;
	strlcpy(c.hc_reason, reason != NULL ? reason : "",
	    sizeof(c.hc_reason));
	strlcpy(c.hc_fix, fix != NULL ? fix : "", sizeof(c.hc_fix));
	strlcpy(c.hc_detail, detail != NULL ? detail : "",
	    sizeof(c.hc_detail));
	doctor_send(&c);
}

/* The first line of a file of /proc, or "" when it cannot be read. */
static void
doctor_read(const char *path, char *buf, size_t len)
{
	FILE	*fp;

	buf[0] = '\0';
	if ((fp = fopen(path, "re")) == NULL)
		return;
	if (fgets(buf, (int)len, fp) == NULL)
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	(void)fclose(fp);
}

static int
doctor_userns_child(void *arg)
{
	return (0);
}

/*
 * Whether the fencer can make a user namespace, as runsc's sandbox and
 * a branch's idmapped home need: a child cloned into one exits at once.
 * 0, or -1 with why (which names the sysctl that forbids it, where one
 * does).  The unprivileged restrictions (Debian's
 * kernel.unprivileged_userns_clone, Ubuntu's AppArmor
 * kernel.apparmor_restrict_unprivileged_userns) do not hold the fencer,
 * which is root: they are the doctor's detail, not a refusal.
 */
int
fencer_userns_check(char *why, size_t len)
{
	char	 max[32];
	void	*stack;
	pid_t	 pid;
	int	 status, saved;

	if ((stack = malloc(DOCTOR_STACK)) == NULL) {
		snprintf(why, len, "user namespaces: out of memory");
		return (-1);
	}
	pid = clone(doctor_userns_child, (char *)stack + DOCTOR_STACK,
	    CLONE_NEWUSER | SIGCHLD, NULL);
	saved = errno;
	if (pid != -1)
		while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
			;
	free(stack);
	if (pid != -1)
		return (0);
	doctor_read("/proc/sys/user/max_user_namespaces", max, sizeof(max));
	if (strcmp(max, "0") == 0)
		snprintf(why, len, "user namespaces are off: sysctl "
		    "user.max_user_namespaces is 0");
	else if (saved == ENOSPC)
		snprintf(why, len, "no user namespace can be made: the limit "
		    "user.max_user_namespaces (%s) is reached", max);
	else
		snprintf(why, len, "no user namespace can be made: %s",
		    strerror(saved));
	return (-1);
}

static void
doctor_cgroups(void)
{
	const char	*why = fencer_cgroups_missing(), *mem;
	char		 reason[MSG_CHECK_TEXT], detail[MSG_CHECK_DETAIL];
	size_t		 n = 0;
	int		 i, v2;

	if (why != NULL) {
		snprintf(reason, sizeof(reason), "no memory, pids and cpu "
		    "limits for fences (L1.5, L2, runsc and vm refused): %s",
		    why);
		fencer_doctor_row(CHECK_HOST, "cgroups", CHECK_FAIL, reason,
		    doctor_fix_cgroups, NULL);
		return;
	}
	mem = fencer_cg_parent(0);
	v2 = mem != NULL && cg_is_v2(mem);
	detail[0] = '\0';
	n = strlcpy(detail, v2 ? "v2" : "v1", sizeof(detail));
	for (i = 0; i < 3 && n < sizeof(detail); i++)
		n += snprintf(detail + n, sizeof(detail) - n, "; %s: %s",
		    doctor_cg_names[i], fencer_cg_parent(i) != NULL ?
		    fencer_cg_parent(i) : "none");
	fencer_doctor_row(CHECK_HOST, "cgroups", CHECK_OK, v2 ?
	    "cgroup v2, memory, pids and cpu delegated" :
	    "cgroup v1, memory, pids and cpu", NULL, detail);

	/* A fence's memory limit holds its swap where the kernel counts it. */
	if (mem != NULL && cg_swap_held(mem))
		fencer_doctor_row(CHECK_HOST, "swap-accounting", CHECK_OK,
		    "a fence's memory limit holds its swap too", NULL, NULL);
	else
		fencer_doctor_row(CHECK_HOST, "swap-accounting", CHECK_WARN,
		    "swap is not counted: a fence may use swap beyond its "
		    "memory limit", v2 ? "a kernel with CONFIG_MEMCG_SWAP "
		    "(and without swapaccount=0 on its command line)" :
		    "boot the kernel with swapaccount=1", NULL);
}

static void
doctor_userns(void)
{
	char	 why[MSG_CHECK_TEXT], detail[MSG_CHECK_DETAIL];
	char	 max[32], clone_ok[32], aa[32];

	doctor_read("/proc/sys/user/max_user_namespaces", max, sizeof(max));
	doctor_read("/proc/sys/kernel/unprivileged_userns_clone", clone_ok,
	    sizeof(clone_ok));
	doctor_read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
	    aa, sizeof(aa));
	snprintf(detail, sizeof(detail), "user.max_user_namespaces %s; "
	    "kernel.unprivileged_userns_clone %s; "
	    "kernel.apparmor_restrict_unprivileged_userns %s",
	    max[0] ? max : "absent", clone_ok[0] ? clone_ok : "absent",
	    aa[0] ? aa : "absent");
	if (fencer_userns_check(why, sizeof(why)) == -1) {
		fencer_doctor_row(CHECK_HOST, "user-namespaces", CHECK_FAIL,
		    why, "sysctl -w user.max_user_namespaces=N with N above "
		    "the fences you run (and set it in /etc/sysctl.d); runsc "
		    "fences and branches of snapshots need them; restart "
		    "fenced", detail);
		return;
	}
	if (strcmp(clone_ok, "0") == 0 || strcmp(aa, "1") == 0)
		fencer_doctor_row(CHECK_HOST, "user-namespaces", CHECK_OK,
		    "root may make user namespaces; unprivileged users may "
		    "not (which fences do not need)", NULL, detail);
	else
		fencer_doctor_row(CHECK_HOST, "user-namespaces", CHECK_OK,
		    "user namespaces can be made", NULL, detail);
}

/*
 * Seccomp: the daemon itself runs under a filter, so filters work; the
 * fences' filters also need these actions of the kernel.
 */
static void
doctor_seccomp(void)
{
	static const char *const need[] = { "kill_process", "errno",
	    "allow" };
	char		 avail[256], reason[MSG_CHECK_TEXT];
	size_t		 i;

	doctor_read("/proc/sys/kernel/seccomp/actions_avail", avail,
	    sizeof(avail));
	if (avail[0] == '\0') {
		fencer_doctor_row(CHECK_HOST, "seccomp", CHECK_WARN, "the "
		    "kernel does not list its seccomp actions (before 4.14)",
		    "a kernel of 4.14 or later", NULL);
		return;
	}
	for (i = 0; i < nitems(need); i++)
		if (strstr(avail, need[i]) == NULL) {
			snprintf(reason, sizeof(reason), "the kernel's seccomp "
			    "has no action %s", need[i]);
			fencer_doctor_row(CHECK_HOST, "seccomp", CHECK_FAIL,
			    reason, "a kernel of 4.14 or later with "
			    "CONFIG_SECCOMP_FILTER", avail);
			return;
		}
	fencer_doctor_row(CHECK_HOST, "seccomp", CHECK_OK, "filters with "
	    "the actions fences need", NULL, avail);
}

/*
 * The egress proxy's resolver (docs/egress.md): L2 fences with an
 * allowlist reach names through it.  Whether it answers is the proxy's
 * to find out (the fencer sends no packet); the doctor says which.
 */
static void
doctor_resolver(void)
{
	const struct fenced_config *c = &fencer_self.ps_conf;
	char		 detail[MSG_CHECK_DETAIL], line[256];
	size_t		 n = 0;
	uint32_t	 i, found = 0;
	FILE		*fp;

	detail[0] = '\0';
	if (c->c_egress_nresolvers > 0) {
		for (i = 0; i < c->c_egress_nresolvers &&
		    i < EGRESS_RESOLVERS_MAX && n < sizeof(detail); i++)
			n += snprintf(detail + n, sizeof(detail) - n, "%s%s "
			    "port %u", i ? ", " : "egress resolver ",
			    c->c_egress_resolver[i],
			    (unsigned)c->c_egress_resolver_port);
		fencer_doctor_row(CHECK_HOST, "egress-resolver", CHECK_OK,
		    "resolvers set in fenced.conf", NULL, detail);
		return;
	}
	if ((fp = fopen("/etc/resolv.conf", "re")) != NULL) {
		while (fgets(line, sizeof(line), fp) != NULL)
			if (strncmp(line, "nameserver", 10) == 0 &&
			    (line[10] == ' ' || line[10] == '\t')) {
				line[strcspn(line, "\n")] = '\0';
				if (n < sizeof(detail))
					n += snprintf(detail + n,
					    sizeof(detail) - n, "%s%s",
					    found ? ", " : "/etc/resolv.conf ",
					    line + 11);
				found++;
			}
		(void)fclose(fp);
	}
	if (found == 0)
		fencer_doctor_row(CHECK_HOST, "egress-resolver", CHECK_WARN,
		    "no resolver: L2 fences with an egress list cannot reach "
		    "names", "egress resolver ADDRESS in fenced.conf, or a "
		    "nameserver in /etc/resolv.conf", NULL);
	else
		fencer_doctor_row(CHECK_HOST, "egress-resolver", CHECK_OK,
		    "the host's resolvers", NULL, detail);
}

/*
 * Each backend's row: whether it can boot at all (detail: what its
 * fb_doctor said).  The hooks run first, so the host's rows they add
 * come before the backends'.
 */
static void
doctor_backends(void)
{
	char		 detail[BACKEND_MAX][MSG_CHECK_DETAIL];
	char		 why[MSG_ERROR_TEXT_MAX];
	const struct fencer_backend *be;
	const char	*code;
	int		 id;

	for (id = BACKEND_MIN; id < BACKEND_MAX; id++) {
		detail[id][0] = '\0';
		if ((be = fencer_backend(id)) != NULL && be->fb_doctor != NULL)
			be->fb_doctor(detail[id], sizeof(detail[id]));
	}
	for (id = BACKEND_MIN; id < BACKEND_MAX; id++) {
		if (fencer_backend(id) == NULL)
			continue;
		if ((code = fencer_boot_refusal(TIER_L1, id, why,
		    sizeof(why))) != NULL)
			fencer_doctor_row(CHECK_BACKEND, backend_name(id),
			    CHECK_FAIL, why, strcmp(code, "no-cgroups") == 0 ?
			    doctor_fix_cgroups : doctor_fix_backend,
			    detail[id]);
		else
			fencer_doctor_row(CHECK_BACKEND, backend_name(id),
			    CHECK_OK, "fences can be built", NULL, detail[id]);
	}
}

/* A tier's row, or the configured default's (name "default"). */
static void
doctor_tier(const char *name, int tier, int backend, int dflt)
{
	struct msg_check c;
	const char	*code;
	char		 why[MSG_ERROR_TEXT_MAX];

	memset(&c, 0, sizeof(c));
	c.hc_kind = CHECK_TIER;
	strlcpy(c.hc_name, name, sizeof(c.hc_name));
	c.hc_default = dflt;
	if ((code = fencer_boot_refusal(tier, backend, why,
	    sizeof(why))) != NULL) {
		c.hc_status = CHECK_FAIL;
		snprintf(c.hc_reason, sizeof(c.hc_reason), "tier %s, backend "
		    "%s: %s: ", tier_name(tier), backend_name(backend), code);
		strlcat(c.hc_reason, why, sizeof(c.hc_reason));
		strlcpy(c.hc_fix, strcmp(code, "no-cgroups") == 0 ?
		    doctor_fix_cgroups : doctor_fix_backend, sizeof(c.hc_fix));
	} else {
		c.hc_status = CHECK_OK;
		snprintf(c.hc_reason, sizeof(c.hc_reason), "tier %s, backend "
		    "%s: fences can be built", tier_name(tier),
		    backend_name(backend));
	}
	doctor_send(&c);
}

/*
 * The broker's IMSG_HOST_DOCTOR: every row, then the end.  A level's
 * row asks of the first backend whose kernel may earn it (native's for
 * L1 to L2, gVisor's for L3, a guest's for L4), at its tier.
 */
void
fencer_doctor(uint32_t reqid)
{
	static const struct {
		const char	*dt_name;
		int		 dt_tier;
		int		 dt_kernel;	/* enum probe_kernel */
	} tiers[] = {
		{ "L1",		TIER_L1,	PROBE_KERNEL_HOST },
		{ "L1.5",	TIER_L15,	PROBE_KERNEL_HOST },
		{ "L2",		TIER_L2,	PROBE_KERNEL_HOST },
		{ "L3",		TIER_L2,	PROBE_KERNEL_USER },
		{ "L4",		TIER_L2,	PROBE_KERNEL_GUEST },
	};
	const struct fenced_config *c = &fencer_self.ps_conf;
	size_t		 i;
	int		 backend;

	doctor_reqid = reqid;
	doctor_cgroups();
	doctor_userns();
	doctor_seccomp();
	doctor_resolver();
	doctor_backends();
	for (i = 0; i < nitems(tiers); i++) {
		if ((backend = fencer_backend_of_kernel(
		    tiers[i].dt_kernel)) == 0)
			fencer_doctor_row(CHECK_TIER, tiers[i].dt_name,
			    CHECK_FAIL, "no backend of this build may earn it",
			    "a build with the backends of the release", NULL);
		else
			doctor_tier(tiers[i].dt_name, tiers[i].dt_tier,
			    backend, 0);
	}
	doctor_tier("default", c->c_tier, c->c_backend, 1);
	if (proc_compose(&fencer_self, PROC_BROKER, IMSG_FENCE_END, reqid, -1,
	    NULL, 0) == -1)
		log_warn("%s: to broker", __func__);
	doctor_reqid = 0;
}
