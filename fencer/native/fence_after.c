/*
 * The steps after the split point of fence_steps[] (fence.c), and what
 * they need of the fence builder.  This file, and the files of the step
 * functions it names, are linked twice: into the daemon, where a cold
 * pid 1 walks these steps before it executes the agent, and into the
 * static fence-agent, which walks them itself in a pool fence: the pool
 * executes the agent ahead, and the agent performs these steps when its
 * assignment comes (agent/agent_pool.c, docs/pool.md).  One list, one
 * order, one code for both.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fence.h"
#include "fence_impl.h"

struct fence_host fence_host;

/*
 * Everything that depends on whose fence it is, in order (docs/design.md's
 * table: a step of a higher tier than the fence's is skipped).  The
 * cgroup namespace is first: on cgroup v2, where a cgroup cannot be
 * renamed, a take moves pid 1 into the boot's cgroup, and the namespace
 * must be rooted there.
 */
const struct fence_step fence_steps_after[] = {
	{ "cgroup namespace", TIER_L1, FENCE_T_NAMESPACES, fence_ns_cgroup },
	{ "hostname", TIER_L1, FENCE_T_NAMESPACES, fence_ns_hostname },
	{ "home", TIER_L1, FENCE_T_MOUNTS, fence_mount_home },
	{ "scratch sizes", TIER_L1, FENCE_T_MOUNTS, fence_mount_resize },
	{ "core rlimit", TIER_L1, FENCE_T_SECCOMP, fence_rlimit_core },
	{ "rlimits", TIER_L1, FENCE_T_SECCOMP, fence_rlimit_limits },
	{ "landlock home", TIER_L15, FENCE_T_SECCOMP, fence_landlock_home },
	{ "bounding set", TIER_L15, FENCE_T_SECCOMP, fence_caps_bound },
	{ "identity", TIER_L1, FENCE_T_SECCOMP, fence_caps_ids },
	{ "session keyring", TIER_L1, FENCE_T_SECCOMP, fence_ns_keyring },
	{ "capabilities", TIER_L1, FENCE_T_SECCOMP, fence_caps_clear },
	{ "parent death signal", TIER_L1, FENCE_T_SECCOMP,
	    fence_caps_pdeathsig },
	{ "no_new_privs", TIER_L15, FENCE_T_SECCOMP, fence_caps_nnp },
	{ "landlock", TIER_L15, FENCE_T_SECCOMP, fence_landlock_restrict },
	{ "seccomp", TIER_L15, FENCE_T_SECCOMP, fence_seccomp_load },
};
const size_t fence_nsteps_after = nitems(fence_steps_after);
_Static_assert(FENCE_NSTEPS_BEFORE + nitems(fence_steps_after) <=
    FENCE_NSTEPS, "FENCE_NSTEPS");

uint64_t
fence_now_us(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000);
}

uint32_t
fence_us32(uint64_t us)
{
	return (us > UINT32_MAX ? UINT32_MAX : (uint32_t)us);
}

/*
 * Child side: note which step failed and why; the record goes to the
 * parent when pid 1 gives up.  Returns -1 so steps can return it.
 */
int
fence_child_err(struct fence_ctx *ctx, int err, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	(void)vsnprintf(ctx->fc_st.fst_step, sizeof(ctx->fc_st.fst_step),
	    fmt, ap);
	va_end(ap);
	ctx->fc_st.fst_errno = err;
	return (-1);
}

/*
 * Child side: one whole record on the status socket.  The EXEC record
 * carries the seccomp listener, if the filter made one, which is closed
 * here: from now on only the fencer holds it.
 */
int
fence_child_send(struct fence_ctx *ctx, uint32_t kind)
{
	union {
		struct cmsghdr	 hdr;
		char		 buf[CMSG_SPACE(sizeof(int))];
	}		 cm;
	struct msghdr	 msg;
	struct iovec	 iov;
	ssize_t		 n;

	ctx->fc_st.fst_kind = kind;
	memset(&msg, 0, sizeof(msg));
	iov.iov_base = &ctx->fc_st;
	iov.iov_len = sizeof(struct fence_status);
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	if (kind == FENCE_ST_EXEC && ctx->fc_notify_fd >= 0) {
		memset(&cm, 0, sizeof(cm));
		msg.msg_control = cm.buf;
		msg.msg_controllen = sizeof(cm.buf);
		cm.hdr.cmsg_level = SOL_SOCKET;
		cm.hdr.cmsg_type = SCM_RIGHTS;
		cm.hdr.cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(&cm.hdr), &ctx->fc_notify_fd, sizeof(int));
	}
	n = sendmsg(ctx->fc_status_fd, &msg, MSG_NOSIGNAL);
	if (kind == FENCE_ST_EXEC && ctx->fc_notify_fd >= 0) {
		(void)close(ctx->fc_notify_fd);
		ctx->fc_notify_fd = -1;
	}
	return (n == (ssize_t)sizeof(struct fence_status) ? 0 : -1);
}

/*
 * Child side: the steps of table (n of them) that the fence's tier has,
 * in order, each one's time in fst_step_us[first + its index].  -1 at
 * the first that fails, its record in fc_st.
 */
int
fence_steps_walk(struct fence_ctx *ctx, const struct fence_step *table,
    size_t n, size_t first)
{
	const struct fence_step	*st;
	uint64_t		 t;
	size_t			 i;

	for (i = 0; i < n && first + i < FENCE_NSTEPS; i++) {
		st = &table[i];
		if (ctx->fc_tier < st->st_tier)
			continue;
		ctx->fc_st.fst_step[0] = '\0';
		if (st->st_fn(ctx) == -1) {
			if (ctx->fc_st.fst_step[0] == '\0')
				fence_child_err(ctx, errno, "%s", st->st_name);
			return (-1);
		}
		t = fence_now_us();
		ctx->fc_st.fst_step_us[first + i] =
		    fence_us32(t - ctx->fc_t_step);
		ctx->fc_st.fst_us[st->st_clock] +=
		    ctx->fc_st.fst_step_us[first + i];
		ctx->fc_t_step = t;
	}
	return (0);
}

int
fence_user_valid(const char *u)
{
	size_t	 i, len;

	len = strnlen(u, FENCED_NAME_MAX);
	if (len == 0 || len >= FENCED_NAME_MAX || u[0] == '.' || u[0] == '-')
		return (0);
	for (i = 0; i < len; i++) {
		char c = u[i];

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.')
			continue;
		return (0);
	}
	return (1);
}

/*
 * Child side, a pool fence's agent: its assignment checked, field by
 * field, and written into its own spec; -1 if any field is out of
 * bounds (the caller fails closed).  The tier and the memory its
 * scratch mounts were sized for are the pool fence's own, which the
 * fencer recorded when it built it.
 */
int
fence_assign_apply(struct fence_ctx *ctx, struct fence_assign *a)
{
	struct fence_spec	*s = &ctx->fc_spec_own;

	a->fa_key[sizeof(a->fa_key) - 1] = '\0';
	a->fa_user[sizeof(a->fa_user) - 1] = '\0';
	if (a->fa_magic != FENCE_ASSIGN_MAGIC || !fence_key_valid(a->fa_key) ||
	    !fence_user_valid(a->fa_user) || a->fa_uid == 0 ||
	    a->fa_uid == (uint32_t)-1 || a->fa_gid == 0 ||
	    a->fa_gid == (uint32_t)-1 ||
	    (a->fa_tier != TIER_L1 && a->fa_tier != TIER_L15 &&
	    a->fa_tier != TIER_L2) || a->fa_built_memory == 0 ||
	    (a->fa_tier >= TIER_L15 && (a->fa_limits.fl_memory == 0 ||
	    a->fa_limits.fl_pids == 0 || a->fa_limits.fl_cpu_milli == 0)))
		return (fence_child_err(ctx, EBADMSG, "assignment"));
	memset(s, 0, sizeof(*s));
	strlcpy(s->fs_key, a->fa_key, sizeof(s->fs_key));
	strlcpy(s->fs_user, a->fa_user, sizeof(s->fs_user));
	s->fs_uid = a->fa_uid;
	s->fs_gid = a->fa_gid;
	s->fs_limits = a->fa_limits;
	s->fs_tier = a->fa_tier;
	s->fs_chan = -1;
	ctx->fc_spec = s;
	ctx->fc_tier = a->fa_tier;
	ctx->fc_built_memory = a->fa_built_memory;
	snprintf(ctx->fc_home_mnt, sizeof(ctx->fc_home_mnt), "home/%s",
	    s->fs_user);
	snprintf(ctx->fc_home_abs, sizeof(ctx->fc_home_abs), "/home/%s",
	    s->fs_user);
	return (0);
}
