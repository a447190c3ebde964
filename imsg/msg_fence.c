/*
 * msg_fence: the payloads of booting, stopping and listing fences.  Each
 * is one field table (msg_codec.h), which is the wire order and every
 * field's bounds, and one validity check shared by encoder and decoder.
 */
#include <sys/types.h>

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fenced.h"
#include "msg.h"
#include "mp.h"
#include "msg_codec.h"

#define MSG_ID_MAX		UINT32_MAX
#define MSG_LEVEL_MAX		16	/* enum probe_level */

static int
msg_fence_bad(void)
{
	errno = EBADMSG;
	return (-1);
}

static int
msg_fence_einval(void)
{
	errno = EINVAL;
	return (-1);
}

/* Limits of 0 mean "the configured value"; others must be in range. */
static int
msg_limits_valid(const struct fence_limits *l)
{
	if (l->fl_memory != 0 &&
	    (l->fl_memory < MEMORY_MIN || l->fl_memory > MEMORY_MAX))
		return (0);
	if (l->fl_pids != 0 &&
	    (l->fl_pids < PIDS_MIN || l->fl_pids > PIDS_MAX))
		return (0);
	if (l->fl_cpu_milli != 0 && (l->fl_cpu_milli < CPU_MILLI_MIN ||
	    l->fl_cpu_milli > CPU_MILLI_MAX))
		return (0);
	return (1);
}

/* A fence's limits, a nested array in boot and fence alike. */
static const struct mc_field msg_limits_fields[] = {
	MC_U(struct fence_limits, fl_memory, 0, MEMORY_MAX),
	MC_U(struct fence_limits, fl_pids, 0, PIDS_MAX),
	MC_U(struct fence_limits, fl_cpu_milli, 0, CPU_MILLI_MAX),
};
static const struct mc_table msg_limits = MC_TABLE(msg_limits_fields);

/*
 * The configuration's ceilings and per-user totals, one nested array of
 * IMSG_CONFIG (msg.c): their rules live with the limits they bound.
 */
int
msg_config_ceilings_valid(const struct fenced_config *c)
{
	const struct fence_limits *d = &c->c_limits, *m = &c->c_limits_max;
	const struct fence_limits *u = &c->c_user_limits;

	if (c->c_lifetime_max < c->c_lifetime ||
	    c->c_lifetime_max > LIFETIME_MAX)
		return (0);
	if (m->fl_memory < d->fl_memory || m->fl_memory > MEMORY_MAX ||
	    m->fl_pids < d->fl_pids || m->fl_pids > PIDS_MAX ||
	    m->fl_cpu_milli < d->fl_cpu_milli ||
	    m->fl_cpu_milli > CPU_MILLI_MAX)
		return (0);
	if (c->c_user_fences < USER_FENCES_MIN ||
	    c->c_user_fences > USER_FENCES_MAX)
		return (0);
	if (u->fl_memory < d->fl_memory || u->fl_memory > USER_MEMORY_MAX ||
	    u->fl_pids < d->fl_pids || u->fl_pids > USER_PIDS_MAX ||
	    u->fl_cpu_milli < d->fl_cpu_milli ||
	    u->fl_cpu_milli > USER_CPU_MILLI_MAX)
		return (0);
	return (1);
}

/* Ranges only; msg_config_ceilings_valid() relates them to the rest. */
static const struct mc_field msg_ceilings_fields[] = {
	MC_U(struct fenced_config, c_lifetime_max, LIFETIME_MIN, LIFETIME_MAX),
	MC_U(struct fenced_config, c_limits_max.fl_memory,
	    MEMORY_MIN, MEMORY_MAX),
	MC_U(struct fenced_config, c_limits_max.fl_pids, PIDS_MIN, PIDS_MAX),
	MC_U(struct fenced_config, c_limits_max.fl_cpu_milli,
	    CPU_MILLI_MIN, CPU_MILLI_MAX),
	MC_U(struct fenced_config, c_user_fences,
	    USER_FENCES_MIN, USER_FENCES_MAX),
	MC_U(struct fenced_config, c_user_limits.fl_memory,
	    MEMORY_MIN, USER_MEMORY_MAX),
	MC_U(struct fenced_config, c_user_limits.fl_pids,
	    PIDS_MIN, USER_PIDS_MAX),
	MC_U(struct fenced_config, c_user_limits.fl_cpu_milli,
	    CPU_MILLI_MIN, USER_CPU_MILLI_MAX),
};
const struct mc_table msg_ceilings = MC_TABLE(msg_ceilings_fields);

static int
msg_key_ok(const char *key, int empty_ok)
{
	if (key[0] == '\0')
		return (empty_ok);
	return (fence_key_valid(key) &&
	    strnlen(key, FENCE_KEY_SIZE) < FENCE_KEY_SIZE);
}

static int
msg_boot_valid(const struct msg_boot *b)
{
	if (!msg_key_ok(b->b_key, 0))
		return (0);
	if (b->b_admin != 0 && b->b_admin != 1)
		return (0);
	if (b->b_tier != 0 && (b->b_tier < TIER_L1 || b->b_tier > TIER_L2))
		return (0);
	if (b->b_backend != 0 && (b->b_backend < BACKEND_MIN ||
	    b->b_backend >= BACKEND_MAX))
		return (0);
	if (b->b_require != 0 &&
	    (b->b_require < LEVEL_L1 || b->b_require > LEVEL_L4))
		return (0);
	if (b->b_lifetime != 0 && (b->b_lifetime < LIFETIME_MIN ||
	    b->b_lifetime > LIFETIME_MAX))
		return (0);
	if (!msg_egress_list_valid(b->b_egress, b->b_negress))
		return (0);
	if (!msg_key_ok(b->b_from_key, 1) || !msg_key_ok(b->b_from_snap, 1) ||
	    (b->b_from_key[0] == '\0' && b->b_from_snap[0] != '\0'))
		return (0);
	if (b->b_inner < INNER_CONFIGURED || b->b_inner > INNER_RUNSC)
		return (0);
	return (msg_limits_valid(&b->b_limits));
}

static const struct mc_field msg_boot_fields[] = {
	MC_S(struct msg_boot, b_key),
	MC_U(struct msg_boot, b_owner, 0, MSG_ID_MAX - 1),
	MC_B(struct msg_boot, b_admin),
	MC_U(struct msg_boot, b_tier, 0, TIER_L2),
	MC_U(struct msg_boot, b_backend, 0, BACKEND_MAX - 1),
	MC_U(struct msg_boot, b_require, 0, LEVEL_L4),
	MC_U(struct msg_boot, b_lifetime, 0, LIFETIME_MAX),
	MC_SUB(struct msg_boot, b_limits, msg_limits),
	MC_NIL(),	/* reserved: probe targets */
	MC_NIL(),	/* reserved */
	MC_B(struct msg_boot, b_cold),
	MC_STRS(struct msg_boot, b_egress, b_negress),
	MC_S(struct msg_boot, b_from_key),
	MC_S(struct msg_boot, b_from_snap),
	MC_U(struct msg_boot, b_inner, INNER_CONFIGURED, INNER_RUNSC),
};
static const struct mc_table msg_boot = MC_TABLE(msg_boot_fields);

int
msg_boot_encode(const struct msg_boot *b, void **buf, size_t *len)
{
	if (!msg_boot_valid(b))
		return (msg_fence_einval());
	return (mc_encode(&msg_boot, b, buf, len));
}

int
msg_boot_decode(const void *data, size_t len, struct msg_boot *out)
{
	struct msg_boot	 b;

	if (mc_decode(&msg_boot, data, len, &b, sizeof(b)) == -1 ||
	    !msg_boot_valid(&b))
		return (msg_fence_bad());
	*out = b;
	return (0);
}

static const struct mc_field msg_fence_req_fields[] = {
	MC_S(struct msg_fence_req, r_key),
	MC_U(struct msg_fence_req, r_owner, 0, MSG_ID_MAX),
	MC_U(struct msg_fence_req, r_uid, 0, MSG_ID_MAX - 1),
	MC_B(struct msg_fence_req, r_admin),
	MC_B(struct msg_fence_req, r_full),
};
static const struct mc_table msg_fence_req = MC_TABLE(msg_fence_req_fields);

int
msg_fence_req_encode(const struct msg_fence_req *q, void **buf, size_t *len)
{
	if (!msg_key_ok(q->r_key, 1) || (q->r_admin != 0 && q->r_admin != 1) ||
	    (q->r_full != 0 && q->r_full != 1))
		return (msg_fence_einval());
	return (mc_encode(&msg_fence_req, q, buf, len));
}

int
msg_fence_req_decode(const void *data, size_t len, struct msg_fence_req *out)
{
	struct msg_fence_req q;

	if (mc_decode(&msg_fence_req, data, len, &q, sizeof(q)) == -1 ||
	    !msg_key_ok(q.r_key, 1))
		return (msg_fence_bad());
	*out = q;
	return (0);
}

/* KEY@NAME, both of a key's form. */
static int
msg_from_valid(const char *from)
{
	char		 key[FENCE_KEY_SIZE];
	const char	*at;
	size_t		 len;

	if (strnlen(from, 2 * FENCE_KEY_SIZE) >= 2 * FENCE_KEY_SIZE ||
	    (at = strchr(from, '@')) == NULL ||
	    (len = (size_t)(at - from)) >= sizeof(key))
		return (0);
	memcpy(key, from, len);
	key[len] = '\0';
	return (msg_key_ok(key, 0) && msg_key_ok(at + 1, 0));
}

/*
 * A login name as a fence's state carries it: 1 to MSG_OWNER_NAME_MAX
 * bytes of printable ASCII, no space and none of <>&"'`\ (the page sets
 * it as text, never markup, but no reader need trust that); "" too
 * when empty is.
 */
int
msg_owner_name_valid(const char *s, int empty)
{
	size_t	 i;

	for (i = 0; i <= MSG_OWNER_NAME_MAX && s[i] != '\0'; i++)
		if ((unsigned char)s[i] <= 0x20 || (unsigned char)s[i] > 0x7e ||
		    strchr("<>&\"'`\\", s[i]) != NULL)
			return (0);
	if (i > MSG_OWNER_NAME_MAX)
		return (0);
	return (i > 0 || empty);
}

static int
msg_fence_valid(const struct msg_fence *f)
{
	if (!msg_key_ok(f->f_key, 0))
		return (0);
	if (f->f_tier < TIER_L1 || f->f_tier > TIER_L2 ||
	    f->f_backend < BACKEND_MIN || f->f_backend >= BACKEND_MAX)
		return (0);
	if (f->f_state < FENCE_BOOTING || f->f_state > FENCE_FAILED ||
	    f->f_reason < STOP_NONE || f->f_reason > STOP_SHUTDOWN)
		return (0);
	if (f->f_pid < 0 || f->f_started < 0 || f->f_deadline < 0)
		return (0);
	if (strnlen(f->f_home, sizeof(f->f_home)) >= sizeof(f->f_home))
		return (0);
	if (f->f_landlock_abi < 0 || f->f_landlock_abi > 255)
		return (0);
	if (f->f_level < 0 || f->f_level > MSG_LEVEL_MAX)
		return (0);
	if (f->f_kernel < MSG_KERNEL_UNMEASURED ||
	    f->f_kernel > MSG_KERNEL_SEPARATE ||
	    !mc_printable(f->f_kernel_release, sizeof(f->f_kernel_release)))
		return (0);
	if (f->f_accel < MSG_ACCEL_NONE || f->f_accel > MSG_ACCEL_TCG)
		return (0);
	if (!msg_egress_list_valid(f->f_egress, f->f_negress) ||
	    (f->f_negress > 0 && f->f_tier != TIER_L2))
		return (0);
	if (f->f_from[0] != '\0' && !msg_from_valid(f->f_from))
		return (0);
	if (!mc_printable(f->f_surface, sizeof(f->f_surface)))
		return (0);
	if (!mc_printable(f->f_denials_note, sizeof(f->f_denials_note)))
		return (0);
	if (!msg_owner_name_valid(f->f_owner_name, 1))
		return (0);
	if (f->f_inner != 0 && f->f_inner != 1)
		return (0);
	return (msg_limits_valid(&f->f_limits));
}

static const struct mc_field msg_fence_fields[] = {
	MC_S(struct msg_fence, f_key),
	MC_U(struct msg_fence, f_owner, 0, MSG_ID_MAX - 1),
	MC_U(struct msg_fence, f_uid, 0, MSG_ID_MAX - 1),
	MC_U(struct msg_fence, f_tier, TIER_L1, TIER_L2),
	MC_U(struct msg_fence, f_backend, BACKEND_MIN, BACKEND_MAX - 1),
	MC_U(struct msg_fence, f_state, FENCE_BOOTING, FENCE_FAILED),
	MC_U(struct msg_fence, f_reason, STOP_NONE, STOP_SHUTDOWN),
	MC_U(struct msg_fence, f_pid, 0, INT32_MAX),
	MC_S(struct msg_fence, f_home),
	MC_I(struct msg_fence, f_started, 0, INT64_MAX),
	MC_I(struct msg_fence, f_deadline, 0, INT64_MAX),
	MC_SUB(struct msg_fence, f_limits, msg_limits),
	MC_U(struct msg_fence, f_timings.t_namespaces_us, 0, UINT32_MAX),
	MC_U(struct msg_fence, f_timings.t_mounts_us, 0, UINT32_MAX),
	MC_U(struct msg_fence, f_timings.t_cgroup_us, 0, UINT32_MAX),
	MC_U(struct msg_fence, f_timings.t_seccomp_us, 0, UINT32_MAX),
	MC_U(struct msg_fence, f_timings.t_exec_us, 0, UINT32_MAX),
	MC_U(struct msg_fence, f_timings.t_agent_us, 0, UINT32_MAX),
	MC_U(struct msg_fence, f_landlock_abi, 0, 255),
	MC_U(struct msg_fence, f_landlock, 0, UINT32_MAX),
	MC_U(struct msg_fence, f_level, 0, MSG_LEVEL_MAX),
	MC_U(struct msg_fence, f_kernel, MSG_KERNEL_UNMEASURED,
	    MSG_KERNEL_SEPARATE),
	MC_S(struct msg_fence, f_kernel_release),
	MC_U(struct msg_fence, f_accel, MSG_ACCEL_NONE, MSG_ACCEL_TCG),
	MC_BIN(struct msg_fence, f_bearer),
	MC_U(struct msg_fence, f_home_used, 0, UINT64_MAX),
	MC_U(struct msg_fence, f_home_limit, 0, HOME_LIMIT_MAX),
	MC_U(struct msg_fence, f_pooled, 0, 1),
	MC_U(struct msg_fence, f_probe_sent, 0, 1),
	MC_U(struct msg_fence, f_timings.t_take_us, 0, UINT32_MAX),
	MC_STRS(struct msg_fence, f_egress, f_negress),
	MC_U(struct msg_fence, f_egress_n.en_allowed, 0, UINT64_MAX),
	MC_U(struct msg_fence, f_egress_n.en_refused, 0, UINT64_MAX),
	MC_U(struct msg_fence, f_egress_n.en_open, 0, UINT32_MAX),
	MC_U(struct msg_fence, f_egress_n.en_up, 0, UINT64_MAX),
	MC_U(struct msg_fence, f_egress_n.en_down, 0, UINT64_MAX),
	MC_S(struct msg_fence, f_from),
	MC_S(struct msg_fence, f_surface),
	MC_S(struct msg_fence, f_denials_note),
	MC_U(struct msg_fence, f_denials_outside, 0, UINT64_MAX),
	MC_S(struct msg_fence, f_owner_name),
	MC_B(struct msg_fence, f_inner),
};
static const struct mc_table msg_fence = MC_TABLE(msg_fence_fields);

int
msg_fence_encode(const struct msg_fence *f, void **buf, size_t *len)
{
	if (!msg_fence_valid(f))
		return (msg_fence_einval());
	return (mc_encode(&msg_fence, f, buf, len));
}

/*
 * The bearer's 32 bytes end up in f, wiped here on every path, and stay
 * in the caller's payload, which imsg_free() wipes.
 */
int
msg_fence_decode(const void *data, size_t len, struct msg_fence *out)
{
	struct msg_fence f;
	int		 ok;

	ok = mc_decode(&msg_fence, data, len, &f, sizeof(f)) == 0 &&
	    msg_fence_valid(&f);
	if (ok)
		*out = f;
	explicit_bzero(&f, sizeof(f));
	return (ok ? 0 : msg_fence_bad());
}

/* Snapshots (docs/snapshots.md): names are of a key's form. */
static int
msg_snap_valid(const struct msg_snap *q)
{
	if (q->s_op < SNAP_CREATE || q->s_op > SNAP_OP_MAX ||
	    (q->s_admin != 0 && q->s_admin != 1))
		return (0);
	if (!msg_key_ok(q->s_key, q->s_op == SNAP_LIST) ||
	    !msg_key_ok(q->s_name, 1))
		return (0);
	switch (q->s_op) {
	case SNAP_DELETE:
	case SNAP_RESTORE:
		return (q->s_name[0] != '\0');
	case SNAP_UNDO_MARK:
	case SNAP_UNDO:
		return (q->s_name[0] == '\0');
	}
	return (1);
}

static const struct mc_field msg_snap_fields[] = {
	MC_S(struct msg_snap, s_key),
	MC_S(struct msg_snap, s_name),
	MC_U(struct msg_snap, s_owner, 0, MSG_ID_MAX),
	MC_U(struct msg_snap, s_uid, 0, MSG_ID_MAX - 1),
	MC_B(struct msg_snap, s_admin),
	MC_U(struct msg_snap, s_op, SNAP_CREATE, SNAP_OP_MAX),
};
static const struct mc_table msg_snap = MC_TABLE(msg_snap_fields);

int
msg_snap_encode(const struct msg_snap *q, void **buf, size_t *len)
{
	if (!msg_snap_valid(q))
		return (msg_fence_einval());
	return (mc_encode(&msg_snap, q, buf, len));
}

int
msg_snap_decode(const void *data, size_t len, struct msg_snap *out)
{
	struct msg_snap	 q;

	if (mc_decode(&msg_snap, data, len, &q, sizeof(q)) == -1 ||
	    !msg_snap_valid(&q))
		return (msg_fence_bad());
	*out = q;
	return (0);
}

static int
msg_snap_info_valid(const struct msg_snap_info *i)
{
	return (msg_key_ok(i->sn_key, 0) && msg_key_ok(i->sn_name, 1) &&
	    (i->sn_frozen == 0 || i->sn_frozen == 1) &&
	    mc_printable(i->sn_how, sizeof(i->sn_how)));
}

static const struct mc_field msg_snap_info_fields[] = {
	MC_S(struct msg_snap_info, sn_key),
	MC_S(struct msg_snap_info, sn_name),
	MC_U(struct msg_snap_info, sn_owner, 0, MSG_ID_MAX - 1),
	MC_U(struct msg_snap_info, sn_uid, 0, MSG_ID_MAX - 1),
	MC_I(struct msg_snap_info, sn_created, 0, INT64_MAX),
	MC_U(struct msg_snap_info, sn_bytes, 0, UINT64_MAX),
	MC_U(struct msg_snap_info, sn_files, 0, UINT64_MAX),
	MC_U(struct msg_snap_info, sn_disk, 0, UINT64_MAX),
	MC_U(struct msg_snap_info, sn_shared, 0, UINT64_MAX),
	MC_U(struct msg_snap_info, sn_branches, 0, UINT32_MAX),
	MC_U(struct msg_snap_info, sn_us, 0, UINT32_MAX),
	MC_B(struct msg_snap_info, sn_frozen),
	MC_S(struct msg_snap_info, sn_how),
};
static const struct mc_table msg_snap_info = MC_TABLE(msg_snap_info_fields);

int
msg_snap_info_encode(const struct msg_snap_info *i, void **buf, size_t *len)
{
	if (!msg_snap_info_valid(i))
		return (msg_fence_einval());
	return (mc_encode(&msg_snap_info, i, buf, len));
}

int
msg_snap_info_decode(const void *data, size_t len, struct msg_snap_info *out)
{
	struct msg_snap_info i;

	if (mc_decode(&msg_snap_info, data, len, &i, sizeof(i)) == -1 ||
	    !msg_snap_info_valid(&i))
		return (msg_fence_bad());
	*out = i;
	return (0);
}

/* A row's name: a word of letters, digits, '.', '-' (a tier's "L1.5"). */
static int
msg_check_name_ok(const char *s, size_t size)
{
	size_t	 i;

	for (i = 0; i < size && s[i] != '\0'; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		    (s[i] >= 'A' && s[i] <= 'Z') ||
		    (s[i] >= '0' && s[i] <= '9') || s[i] == '.' ||
		    s[i] == '-'))
			return (0);
	return (i > 0 && i < size);
}

static int
msg_check_valid(const struct msg_check *c)
{
	return (c->hc_kind >= CHECK_HOST && c->hc_kind <= CHECK_KIND_MAX &&
	    c->hc_status >= CHECK_OK && c->hc_status <= CHECK_STATUS_MAX &&
	    (c->hc_default == 0 || (c->hc_default == 1 &&
	    c->hc_kind == CHECK_TIER)) &&
	    msg_check_name_ok(c->hc_name, sizeof(c->hc_name)) &&
	    mc_printable(c->hc_reason, sizeof(c->hc_reason)) &&
	    mc_printable(c->hc_fix, sizeof(c->hc_fix)) &&
	    mc_printable(c->hc_detail, sizeof(c->hc_detail)) &&
	    /* Not ok says why. */
	    (c->hc_status == CHECK_OK || c->hc_reason[0] != '\0'));
}

static const struct mc_field msg_check_fields[] = {
	MC_I(struct msg_check, hc_kind, CHECK_HOST, CHECK_KIND_MAX),
	MC_S(struct msg_check, hc_name),
	MC_I(struct msg_check, hc_status, CHECK_OK, CHECK_STATUS_MAX),
	MC_B(struct msg_check, hc_default),
	MC_S(struct msg_check, hc_reason),
	MC_S(struct msg_check, hc_fix),
	MC_S(struct msg_check, hc_detail),
};
static const struct mc_table msg_check = MC_TABLE(msg_check_fields);

int
msg_check_encode(const struct msg_check *c, void **buf, size_t *len)
{
	if (!msg_check_valid(c))
		return (msg_fence_einval());
	return (mc_encode(&msg_check, c, buf, len));
}

int
msg_check_decode(const void *data, size_t len, struct msg_check *out)
{
	struct msg_check c;

	if (mc_decode(&msg_check, data, len, &c, sizeof(c)) == -1 ||
	    !msg_check_valid(&c))
		return (msg_fence_bad());
	*out = c;
	return (0);
}
