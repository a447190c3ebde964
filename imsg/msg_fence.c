/*
 * msg_fence: the payloads of booting, stopping and listing fences, in
 * the manner of msg.c: a fixed array of fields, one validity check
 * shared by encoder and decoder.
 */
#include <sys/types.h>

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fenced.h"
#include "msg.h"
#include "mp.h"

#define MSG_BOOT_FIELDS		10
#define MSG_FENCE_REQ_FIELDS	5
#define MSG_FENCE_FIELDS	24

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

static void
msg_write_limits(struct mp_writer *w, const struct fence_limits *l)
{
	mp_write_array(w, 3);
	mp_write_u64(w, l->fl_memory);
	mp_write_u64(w, l->fl_pids);
	mp_write_u64(w, l->fl_cpu_milli);
}

static int
msg_read_limits(struct mp_reader *r, struct fence_limits *l)
{
	uint64_t	 v[3] = { 0, 0, 0 };
	size_t		 n;

	if (mp_read_array(r, &n, 3) == -1 || n != 3)
		return (-1);
	mp_read_u64(r, &v[0], 0, MEMORY_MAX);
	mp_read_u64(r, &v[1], 0, PIDS_MAX);
	mp_read_u64(r, &v[2], 0, CPU_MILLI_MAX);
	if (mp_read_leave(r) == -1)
		return (-1);
	l->fl_memory = v[0];
	l->fl_pids = (uint32_t)v[1];
	l->fl_cpu_milli = (uint32_t)v[2];
	return (0);
}

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

void
msg_write_ceilings(struct mp_writer *w, const struct fenced_config *c)
{
	mp_write_array(w, 8);
	mp_write_u64(w, c->c_lifetime_max);
	mp_write_u64(w, c->c_limits_max.fl_memory);
	mp_write_u64(w, c->c_limits_max.fl_pids);
	mp_write_u64(w, c->c_limits_max.fl_cpu_milli);
	mp_write_u64(w, c->c_user_fences);
	mp_write_u64(w, c->c_user_limits.fl_memory);
	mp_write_u64(w, c->c_user_limits.fl_pids);
	mp_write_u64(w, c->c_user_limits.fl_cpu_milli);
}

/* Ranges only; msg_config_ceilings_valid() relates them to the rest. */
int
msg_read_ceilings(struct mp_reader *r, struct fenced_config *c)
{
	uint64_t	 v[8];
	size_t		 n;

	memset(v, 0, sizeof(v));
	if (mp_read_array(r, &n, 8) == -1 || n != 8)
		return (-1);
	mp_read_u64(r, &v[0], LIFETIME_MIN, LIFETIME_MAX);
	mp_read_u64(r, &v[1], MEMORY_MIN, MEMORY_MAX);
	mp_read_u64(r, &v[2], PIDS_MIN, PIDS_MAX);
	mp_read_u64(r, &v[3], CPU_MILLI_MIN, CPU_MILLI_MAX);
	mp_read_u64(r, &v[4], USER_FENCES_MIN, USER_FENCES_MAX);
	mp_read_u64(r, &v[5], MEMORY_MIN, USER_MEMORY_MAX);
	mp_read_u64(r, &v[6], PIDS_MIN, USER_PIDS_MAX);
	mp_read_u64(r, &v[7], CPU_MILLI_MIN, USER_CPU_MILLI_MAX);
	if (mp_read_leave(r) == -1)
		return (-1);
	c->c_lifetime_max = (uint32_t)v[0];
	c->c_limits_max.fl_memory = v[1];
	c->c_limits_max.fl_pids = (uint32_t)v[2];
	c->c_limits_max.fl_cpu_milli = (uint32_t)v[3];
	c->c_user_fences = (uint32_t)v[4];
	c->c_user_limits.fl_memory = v[5];
	c->c_user_limits.fl_pids = (uint32_t)v[6];
	c->c_user_limits.fl_cpu_milli = (uint32_t)v[7];
	return (0);
}

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
	if (b->b_backend != 0 && (b->b_backend < BACKEND_NATIVE ||
	    b->b_backend > BACKEND_SUBPROCESS))
		return (0);
	if (b->b_require != 0 &&
	    (b->b_require < TIER_L1 || b->b_require > TIER_L2))
		return (0);
	if (b->b_lifetime != 0 && (b->b_lifetime < LIFETIME_MIN ||
	    b->b_lifetime > LIFETIME_MAX))
		return (0);
	return (msg_limits_valid(&b->b_limits));
}

int
msg_boot_encode(const struct msg_boot *b, void **buf, size_t *len)
{
	struct mp_writer w;

	if (!msg_boot_valid(b))
		return (msg_fence_einval());
	mp_write_init(&w);
	mp_write_array(&w, MSG_BOOT_FIELDS);
	mp_write_str(&w, b->b_key, sizeof(b->b_key));
	mp_write_u64(&w, b->b_owner);
	mp_write_bool(&w, b->b_admin);
	mp_write_u64(&w, (uint64_t)b->b_tier);
	mp_write_u64(&w, (uint64_t)b->b_backend);
	mp_write_u64(&w, (uint64_t)b->b_require);
	mp_write_u64(&w, b->b_lifetime);
	msg_write_limits(&w, &b->b_limits);
	mp_write_nil(&w);	/* reserved: probe targets */
	mp_write_nil(&w);	/* reserved */
	return (mp_write_finish(&w, buf, len));
}

int
msg_boot_decode(const void *data, size_t len, struct msg_boot *out)
{
	struct msg_boot	 b;
	struct mp_reader r;
	uint64_t	 u[5] = { 0, 0, 0, 0, 0 };

	memset(&b, 0, sizeof(b));
	mp_read_begin(&r, data, len, MSG_BOOT_FIELDS);
	mp_read_str(&r, b.b_key, sizeof(b.b_key));
	mp_read_u64(&r, &u[0], 0, MSG_ID_MAX - 1);
	mp_read_bool(&r, &b.b_admin);
	mp_read_u64(&r, &u[1], 0, TIER_L2);
	mp_read_u64(&r, &u[2], 0, BACKEND_SUBPROCESS);
	mp_read_u64(&r, &u[3], 0, TIER_L2);
	mp_read_u64(&r, &u[4], 0, LIFETIME_MAX);
	msg_read_limits(&r, &b.b_limits);
	mp_read_nil(&r);
	mp_read_nil(&r);
	if (mp_read_end(&r) == -1)
		return (msg_fence_bad());
	b.b_owner = (uid_t)u[0];
	b.b_tier = (int)u[1];
	b.b_backend = (int)u[2];
	b.b_require = (int)u[3];
	b.b_lifetime = (uint32_t)u[4];
	if (!msg_boot_valid(&b))
		return (msg_fence_bad());
	*out = b;
	return (0);
}

int
msg_fence_req_encode(const struct msg_fence_req *q, void **buf, size_t *len)
{
	struct mp_writer w;

	if (!msg_key_ok(q->r_key, 1) || (q->r_admin != 0 && q->r_admin != 1) ||
	    (q->r_full != 0 && q->r_full != 1))
		return (msg_fence_einval());
	mp_write_init(&w);
	mp_write_array(&w, MSG_FENCE_REQ_FIELDS);
	mp_write_str(&w, q->r_key, sizeof(q->r_key));
	mp_write_u64(&w, q->r_owner);
	mp_write_u64(&w, q->r_uid);
	mp_write_bool(&w, q->r_admin);
	mp_write_bool(&w, q->r_full);
	return (mp_write_finish(&w, buf, len));
}

int
msg_fence_req_decode(const void *data, size_t len, struct msg_fence_req *out)
{
	struct msg_fence_req q;
	struct mp_reader r;
	uint64_t	 uid = 0, owner = 0;

	memset(&q, 0, sizeof(q));
	mp_read_begin(&r, data, len, MSG_FENCE_REQ_FIELDS);
	mp_read_str(&r, q.r_key, sizeof(q.r_key));
	mp_read_u64(&r, &owner, 0, MSG_ID_MAX);
	mp_read_u64(&r, &uid, 0, MSG_ID_MAX - 1);
	mp_read_bool(&r, &q.r_admin);
	mp_read_bool(&r, &q.r_full);
	if (mp_read_end(&r) == -1 || !msg_key_ok(q.r_key, 1))
		return (msg_fence_bad());
	q.r_owner = (uid_t)owner;
	q.r_uid = (uid_t)uid;
	*out = q;
	return (0);
}

static int
msg_fence_valid(const struct msg_fence *f)
{
	if (!msg_key_ok(f->f_key, 0))
		return (0);
	if (f->f_tier < TIER_L1 || f->f_tier > TIER_L2 ||
	    f->f_backend < BACKEND_NATIVE || f->f_backend > BACKEND_SUBPROCESS)
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
	return (msg_limits_valid(&f->f_limits));
}

int
msg_fence_encode(const struct msg_fence *f, void **buf, size_t *len)
{
	struct mp_writer w;
	const struct msg_timings *t = &f->f_timings;

	if (!msg_fence_valid(f))
		return (msg_fence_einval());
	mp_write_init(&w);
	mp_write_array(&w, MSG_FENCE_FIELDS);
	mp_write_str(&w, f->f_key, sizeof(f->f_key));
	mp_write_u64(&w, f->f_owner);
	mp_write_u64(&w, f->f_uid);
	mp_write_u64(&w, (uint64_t)f->f_tier);
	mp_write_u64(&w, (uint64_t)f->f_backend);
	mp_write_u64(&w, (uint64_t)f->f_state);
	mp_write_u64(&w, (uint64_t)f->f_reason);
	mp_write_u64(&w, (uint64_t)f->f_pid);
	mp_write_str(&w, f->f_home, sizeof(f->f_home));
	mp_write_i64(&w, f->f_started);
	mp_write_i64(&w, f->f_deadline);
	msg_write_limits(&w, &f->f_limits);
	mp_write_u64(&w, t->t_namespaces_us);
	mp_write_u64(&w, t->t_mounts_us);
	mp_write_u64(&w, t->t_cgroup_us);
	mp_write_u64(&w, t->t_seccomp_us);
	mp_write_u64(&w, t->t_exec_us);
	mp_write_u64(&w, t->t_agent_us);
	mp_write_u64(&w, (uint64_t)f->f_landlock_abi);
	mp_write_u64(&w, f->f_landlock);
	mp_write_u64(&w, (uint64_t)f->f_level);
	mp_write_bin(&w, f->f_bearer, sizeof(f->f_bearer));
	mp_write_u64(&w, f->f_home_used);
	mp_write_u64(&w, f->f_home_limit);
	return (mp_write_finish(&w, buf, len));
}

int
msg_fence_decode(const void *data, size_t len, struct msg_fence *out)
{
	struct msg_fence f;
	struct msg_timings *t = &f.f_timings;
	struct mp_reader r;
	const void	*bearer = NULL;
	size_t		 blen = 0;
	uint64_t	 u[16];
	int		 ok;

	memset(&f, 0, sizeof(f));
	memset(u, 0, sizeof(u));
	mp_read_begin(&r, data, len, MSG_FENCE_FIELDS);
	mp_read_str(&r, f.f_key, sizeof(f.f_key));
	mp_read_u64(&r, &u[0], 0, MSG_ID_MAX - 1);	/* owner */
	mp_read_u64(&r, &u[1], 0, MSG_ID_MAX - 1);	/* uid */
	mp_read_u64(&r, &u[2], TIER_L1, TIER_L2);
	mp_read_u64(&r, &u[3], BACKEND_NATIVE, BACKEND_SUBPROCESS);
	mp_read_u64(&r, &u[4], FENCE_BOOTING, FENCE_FAILED);
	mp_read_u64(&r, &u[5], STOP_NONE, STOP_SHUTDOWN);
	mp_read_u64(&r, &u[6], 0, INT32_MAX);		/* pid */
	mp_read_str(&r, f.f_home, sizeof(f.f_home));
	mp_read_i64(&r, &f.f_started, 0, INT64_MAX);
	mp_read_i64(&r, &f.f_deadline, 0, INT64_MAX);
	msg_read_limits(&r, &f.f_limits);
	mp_read_u64(&r, &u[7], 0, UINT32_MAX);
	mp_read_u64(&r, &u[8], 0, UINT32_MAX);
	mp_read_u64(&r, &u[9], 0, UINT32_MAX);
	mp_read_u64(&r, &u[10], 0, UINT32_MAX);
	mp_read_u64(&r, &u[11], 0, UINT32_MAX);
	mp_read_u64(&r, &u[12], 0, UINT32_MAX);
	mp_read_u64(&r, &u[13], 0, 255);		/* landlock abi */
	mp_read_u64(&r, &u[14], 0, UINT32_MAX);
	mp_read_u64(&r, &u[15], 0, MSG_LEVEL_MAX);
	mp_read_bin(&r, &bearer, &blen, sizeof(f.f_bearer));
	mp_read_u64(&r, &f.f_home_used, 0, UINT64_MAX);
	mp_read_u64(&r, &f.f_home_limit, 0, HOME_LIMIT_MAX);
	ok = mp_read_end(&r) == 0 && blen == sizeof(f.f_bearer);
	if (ok) {
		memcpy(f.f_bearer, bearer, sizeof(f.f_bearer));
		f.f_owner = (uid_t)u[0];
		f.f_uid = (uid_t)u[1];
		f.f_tier = (int)u[2];
		f.f_backend = (int)u[3];
		f.f_state = (int)u[4];
		f.f_reason = (int)u[5];
		f.f_pid = (pid_t)u[6];
		t->t_namespaces_us = (uint32_t)u[7];
		t->t_mounts_us = (uint32_t)u[8];
		t->t_cgroup_us = (uint32_t)u[9];
		t->t_seccomp_us = (uint32_t)u[10];
		t->t_exec_us = (uint32_t)u[11];
		t->t_agent_us = (uint32_t)u[12];
		f.f_landlock_abi = (int)u[13];
		f.f_landlock = (uint32_t)u[14];
		f.f_level = (int)u[15];
		ok = msg_fence_valid(&f);
	}
	/*
	 * The bearer's 32 bytes are in f (wiped here) and in the caller's
	 * payload, which imsg_free() wipes.
	 */
	if (!ok) {
		explicit_bzero(&f, sizeof(f));
		return (msg_fence_bad());
	}
	*out = f;
	explicit_bzero(&f, sizeof(f));
	return (0);
}
