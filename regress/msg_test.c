/*
 * msg_test: the payload codecs of imsg/msg.c and the strict msgpack
 * layer under them (imsg/mp.c), fed good and hostile bytes.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <atf-c.h>
#include <msgpack.h>

#include "fenced.h"
#include "imsg.h"
#include "mp.h"
#include "msg.h"
#include "probe_expect.h"
#include "backend.h"

static void
config_sample(struct fenced_config *c)
{
	memset(c, 0, sizeof(*c));
	strlcpy(c->c_listen_addr, "127.0.0.1", sizeof(c->c_listen_addr));
	c->c_listen_port = 7700;
	strlcpy(c->c_socket, "/run/fenced.sock", sizeof(c->c_socket));
	strlcpy(c->c_state, "/var/lib/fenced", sizeof(c->c_state));
	strlcpy(c->c_homes, "~/sandbox-homes/%u", sizeof(c->c_homes));
	strlcpy(c->c_user, "_fenced", sizeof(c->c_user));
	c->c_fence_uid_lo = 61000;
	c->c_fence_uid_hi = 61999;
	strlcpy(c->c_admin_group, "wheel", sizeof(c->c_admin_group));
	c->c_tier = TIER_L15;
	c->c_backend = BACKEND_NATIVE;
	c->c_lifetime = 1800;
	c->c_limits.fl_memory = 512ULL << 20;
	c->c_limits.fl_pids = 256;
	c->c_limits.fl_cpu_milli = 1000;
	c->c_lifetime_max = 7200;
	c->c_limits_max.fl_memory = 2ULL << 30;
	c->c_limits_max.fl_pids = 1024;
	c->c_limits_max.fl_cpu_milli = 2000;
	c->c_user_fences = 16;
	c->c_user_limits.fl_memory = 8ULL << 30;
	c->c_user_limits.fl_pids = 4096;
	c->c_user_limits.fl_cpu_milli = 16000;
	c->c_exec_timeout = 10000;
	c->c_exec_timeout_max = 60000;
	c->c_exec_output = 262144;
	c->c_exec_output_max = 1048576;
	c->c_exec_inflight_user = 32;
	c->c_exec_processes = 16;
	c->c_http_body_max = 2U << 20;
	c->c_http_headers_max = 8192;
	c->c_http_timeout = 10;
	c->c_http_conns_max = 256;
	c->c_http_conns_user = 32;
	c->c_home_limit = 1ULL << 30;
	c->c_snap_count = 16;
	c->c_snap_bytes = 4ULL << 30;
	c->c_user_snap_count = 64;
	c->c_user_snap_bytes = 16ULL << 30;
	c->c_observe_denials = 1;
	c->c_vm_off = 1;
	c->c_vm_inner = 1;
	strlcpy(c->c_probe_dns, "localhost", sizeof(c->c_probe_dns));
	strlcpy(c->c_runsc_platform, "ptrace", sizeof(c->c_runsc_platform));
	c->c_uid = 999;
	c->c_gid = 998;
	c->c_admin_gid = (gid_t)-1;
	c->c_verbose = 2;
	c->c_pool[1] = 4;
	c->c_pool[2] = POOL_MAX;
	c->c_files_max = 16U << 20;
	c->c_egress_resolver_port = 53;
	c->c_egress_conns = 32;
	c->c_egress_rate = 4U << 20;
	c->c_egress_idle = 60;
	c->c_egress_connect = 10;
	strlcpy(c->c_probe_egress_refused, "refused.invalid:443",
	    sizeof(c->c_probe_egress_refused));
}

static void
stats_sample(struct msg_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->st_pid[PROC_PARENT] = 100;
	st->st_pid[PROC_BROKER] = 101;
	st->st_pid[PROC_FENCER] = 0;
	st->st_pid[PROC_PROBER] = INT32_MAX;
	st->st_started = 1700000000;
	st->st_now = 1700000100;
	st->st_ctl_conns = UINT64_MAX;
	st->st_ctl_active = 3;
	st->st_ctl_requests = 1ULL << 40;
	st->st_ctl_errors = 0;
	st->st_fences = 12;
	st->st_verbose = 1;
	st->st_pool.p_tier[1].pt_size = 4;
	st->st_pool.p_tier[1].pt_ready = 3;
	st->st_pool.p_tier[1].pt_taken = UINT64_MAX;
	st->st_pool.p_tier[1].pt_refilled = 7;
	st->st_pool.p_tier[2].pt_failed = 2;
}

/*
 * A payload built field by field, so a test can put any value, of any
 * type, in any position, bypassing the encoders' own checks.
 */
enum fkind { F_U, F_I, F_S, F_NIL, F_BOOL, F_PIDS, F_ARR, F_CEIL };

/* What an F_CEIL field writes: the config's ceilings and user totals. */
#define CEIL_N		8
static uint64_t	 ceil_vals[CEIL_N];
static size_t	 ceil_n = CEIL_N;

static void
ceil_sample(void)
{
	ceil_vals[0] = 7200;
	ceil_vals[1] = 2ULL << 30;
	ceil_vals[2] = 1024;
	ceil_vals[3] = 2000;
	ceil_vals[4] = 16;
	ceil_vals[5] = 8ULL << 30;
	ceil_vals[6] = 4096;
	ceil_vals[7] = 16000;
	ceil_n = CEIL_N;
}

struct field {
	enum fkind	 kind;
	uint64_t	 u;
	int64_t		 i;
	const char	*s;
	size_t		 slen;		/* F_S; 0: strlen(s) */
};

static void
fields_pack(const struct field *f, size_t n, void **buf, size_t *len)
{
	struct mp_writer w;
	size_t		 i, k, sl;

	mp_write_init(&w);
	mp_write_array(&w, n);
	for (i = 0; i < n; i++) {
		switch (f[i].kind) {
		case F_U:
			mp_write_u64(&w, f[i].u);
			break;
		case F_I:
			mp_write_i64(&w, f[i].i);
			break;
		case F_S:
			sl = f[i].slen ? f[i].slen : strlen(f[i].s);
			/* Raw: the test wants what mp_write_str refuses. */
			ATF_REQUIRE_EQ(0, msgpack_pack_str_with_body(&w.w_pk,
			    f[i].s, sl));
			break;
		case F_NIL:
			mp_write_nil(&w);
			break;
		case F_BOOL:
			mp_write_bool(&w, 1);
			break;
		case F_PIDS:
			mp_write_array(&w, f[i].u);
			for (k = 0; k < f[i].u; k++)
				mp_write_i64(&w, f[i].i);
			break;
		case F_ARR:
			mp_write_array(&w, 0);
			break;
		case F_CEIL:
			mp_write_array(&w, ceil_n);
			for (k = 0; k < ceil_n; k++)
				mp_write_u64(&w, ceil_vals[k]);
			break;
		}
	}
	ATF_REQUIRE_EQ(0, mp_write_finish(&w, buf, len));
}

#define CONFIG_NFIELDS	65

/* The fields of config_sample(), in wire order. */
static void
config_fields(struct field *f)
{
	static const struct field def[CONFIG_NFIELDS] = {
		{ F_S, 0, 0, "127.0.0.1", 0 },
		{ F_U, 7700, 0, NULL, 0 },
		{ F_S, 0, 0, "/run/fenced.sock", 0 },
		{ F_S, 0, 0, "/var/lib/fenced", 0 },
		{ F_S, 0, 0, "~/sandbox-homes/%u", 0 },
		{ F_S, 0, 0, "_fenced", 0 },
		{ F_U, 61000, 0, NULL, 0 },
		{ F_U, 61999, 0, NULL, 0 },
		{ F_S, 0, 0, "wheel", 0 },
		{ F_U, TIER_L15, 0, NULL, 0 },
		{ F_U, BACKEND_NATIVE, 0, NULL, 0 },
		{ F_U, 1800, 0, NULL, 0 },
		{ F_U, 512ULL << 20, 0, NULL, 0 },
		{ F_U, 256, 0, NULL, 0 },
		{ F_U, 1000, 0, NULL, 0 },
		{ F_U, 10000, 0, NULL, 0 },
		{ F_U, 60000, 0, NULL, 0 },
		{ F_U, 262144, 0, NULL, 0 },
		{ F_U, 1048576, 0, NULL, 0 },
		{ F_U, 32, 0, NULL, 0 },
		{ F_U, 2U << 20, 0, NULL, 0 },
		{ F_U, 8192, 0, NULL, 0 },
		{ F_U, 10, 0, NULL, 0 },
		{ F_U, 256, 0, NULL, 0 },
		{ F_U, 32, 0, NULL, 0 },
		{ F_S, 0, 0, "localhost", 0 },
		{ F_ARR, 0, 0, NULL, 0 },
		{ F_U, 999, 0, NULL, 0 },
		{ F_U, 998, 0, NULL, 0 },
		{ F_U, UINT32_MAX, 0, NULL, 0 },
		{ F_I, 0, 2, NULL, 0 },
		{ F_CEIL, 0, 0, NULL, 0 },
		{ F_U, 1ULL << 30, 0, NULL, 0 },
		{ F_S, 0, 0, "", 0 },
		{ F_S, 0, 0, "ptrace", 0 },
		{ F_U, VM_ACCEL_AUTO, 0, NULL, 0 },
		{ F_S, 0, 0, "", 0 },
		{ F_S, 0, 0, "", 0 },
		{ F_S, 0, 0, "", 0 },
		{ F_S, 0, 0, "", 0 },
		{ F_S, 0, 0, "", 0 },
		{ F_S, 0, 0, "", 0 },
		{ F_U, 0, 0, NULL, 0 },
		{ F_U, 4, 0, NULL, 0 },
		{ F_U, POOL_MAX, 0, NULL, 0 },
		{ F_ARR, 0, 0, NULL, 0 },	/* http origin */
		{ F_U, 16, 0, NULL, 0 },
		{ F_U, 16U << 20, 0, NULL, 0 },
		{ F_ARR, 0, 0, NULL, 0 },	/* egress host */
		{ F_ARR, 0, 0, NULL, 0 },	/* egress resolver */
		{ F_U, 53, 0, NULL, 0 },
		{ F_U, 32, 0, NULL, 0 },
		{ F_U, 4U << 20, 0, NULL, 0 },
		{ F_U, 60, 0, NULL, 0 },
		{ F_U, 10, 0, NULL, 0 },
		{ F_S, 0, 0, "", 0 },
		{ F_S, 0, 0, "refused.invalid:443", 0 },
		{ F_U, 16, 0, NULL, 0 },		/* limit snapshots */
		{ F_U, 4ULL << 30, 0, NULL, 0 },
		{ F_U, 64, 0, NULL, 0 },		/* user limit snapshots */
		{ F_U, 16ULL << 30, 0, NULL, 0 },
		{ F_ARR, 0, 0, NULL, 0 },		/* admin uids */
		{ F_BOOL, 0, 0, NULL, 0 },		/* observe denials */
		{ F_BOOL, 0, 0, NULL, 0 },		/* vm off */
		{ F_BOOL, 0, 0, NULL, 0 },		/* vm inner */
	};

	ceil_sample();
	memcpy(f, def, sizeof(def));
}

static int
config_decode_fields(const struct field *f, size_t n,
    struct fenced_config *out)
{
	void	*buf;
	size_t	 len;
	int	 r, saved;

	fields_pack(f, n, &buf, &len);
	r = msg_config_decode(buf, len, out);
	saved = errno;
	free(buf);
	errno = saved;
	return (r);
}

ATF_TC(type_names);
ATF_TC_HEAD(type_names, tc)
{
	atf_tc_set_md_var(tc, "descr", "Every message type has its own "
	    "name; unknown types get a placeholder, never NULL");
}
ATF_TC_BODY(type_names, tc)
{
	uint32_t	 t, u;

	for (t = 0; t < IMSG_TYPE_MAX; t++) {
		ATF_REQUIRE(msg_type_name(t) != NULL);
		ATF_REQUIRE_MSG(strcmp(msg_type_name(t), "IMSG_UNKNOWN") != 0,
		    "type %u has no name", t);
		for (u = 0; u < t; u++)
			ATF_REQUIRE(strcmp(msg_type_name(t),
			    msg_type_name(u)) != 0);
	}
	ATF_REQUIRE_STREQ("IMSG_CONFIG", msg_type_name(IMSG_CONFIG));
	ATF_REQUIRE_STREQ("IMSG_CTL_END", msg_type_name(IMSG_CTL_END));
	ATF_REQUIRE_STREQ("IMSG_UNKNOWN", msg_type_name(IMSG_TYPE_MAX));
	ATF_REQUIRE_STREQ("IMSG_UNKNOWN", msg_type_name(UINT32_MAX));
}

ATF_TC(empty);
ATF_TC_HEAD(empty, tc)
{
	atf_tc_set_md_var(tc, "descr", "The empty decoder takes exactly "
	    "zero bytes");
}
ATF_TC_BODY(empty, tc)
{
	ATF_REQUIRE_EQ(0, msg_empty_decode(NULL, 0));
	ATF_REQUIRE_EQ(0, msg_empty_decode("x", 0));
	ATF_REQUIRE_EQ(-1, msg_empty_decode("\x90", 1));
	ATF_REQUIRE_EQ(EBADMSG, errno);
	ATF_REQUIRE_EQ(-1, msg_empty_decode("\0\0\0\0", 4));
	ATF_REQUIRE_EQ(EBADMSG, errno);
}

ATF_TC(port_ticket);
ATF_TC_HEAD(port_ticket, tc)
{
	atf_tc_set_md_var(tc, "descr", "fencectl port's request and answer "
	    "round-trip; a bad key, port 0 or a URL with a space or a "
	    "control character is refused both ways");
}
ATF_TC_BODY(port_ticket, tc)
{
	struct msg_port_ticket pk, back;
	void		*buf;
	size_t		 len;

	memset(&pk, 0, sizeof(pk));
	strlcpy(pk.pk_key, "work", sizeof(pk.pk_key));
	pk.pk_owner = MSG_OWNER_NONE;
	pk.pk_port = 8000;
	ATF_REQUIRE_EQ(0, msg_port_ticket_encode(&pk, &buf, &len));
	ATF_REQUIRE_EQ(0, msg_port_ticket_decode(buf, len, &back));
	ATF_REQUIRE_EQ(0, memcmp(&pk, &back, sizeof(pk)));
	free(buf);
	strlcpy(pk.pk_url, "http://8000-0123456789abcdef.work.localhost:7700/"
	    ".fenced/ticket?t=00", sizeof(pk.pk_url));
	pk.pk_expires_ms = 60000;
	ATF_REQUIRE_EQ(0, msg_port_ticket_encode(&pk, &buf, &len));
	ATF_REQUIRE_EQ(0, msg_port_ticket_decode(buf, len, &back));
	ATF_REQUIRE_STREQ(pk.pk_url, back.pk_url);
	free(buf);
	pk.pk_url[10] = ' ';
	ATF_REQUIRE_EQ(-1, msg_port_ticket_encode(&pk, &buf, &len));
	pk.pk_url[10] = '\n';
	ATF_REQUIRE_EQ(-1, msg_port_ticket_encode(&pk, &buf, &len));
	pk.pk_url[10] = 'x';
	pk.pk_port = 0;
	ATF_REQUIRE_EQ(-1, msg_port_ticket_encode(&pk, &buf, &len));
	pk.pk_port = 1;
	strlcpy(pk.pk_key, "../x", sizeof(pk.pk_key));
	ATF_REQUIRE_EQ(-1, msg_port_ticket_encode(&pk, &buf, &len));
}

ATF_TC(u32_i32);
ATF_TC_HEAD(u32_i32, tc)
{
	atf_tc_set_md_var(tc, "descr", "u32 and i32 round-trip at their "
	    "extremes and are held to the caller's range");
}
ATF_TC_BODY(u32_i32, tc)
{
	static const uint32_t us[] = { 0, 1, 127, 128, 65535, 65536,
	    UINT32_MAX };
	static const int32_t is[] = { INT32_MIN, -33, -32, -1, 0, 1,
	    INT32_MAX };
	void		*buf;
	size_t		 len, i;
	uint32_t	 u;
	int32_t		 v;

	for (i = 0; i < sizeof(us) / sizeof(us[0]); i++) {
		ATF_REQUIRE_EQ(0, msg_u32_encode(us[i], &buf, &len));
		u = 12345;
		ATF_REQUIRE_EQ(0, msg_u32_decode(buf, len, &u, 0,
		    UINT32_MAX));
		ATF_REQUIRE_EQ(us[i], u);
		if (us[i] > 0) {
			ATF_REQUIRE_EQ(-1, msg_u32_decode(buf, len, &u, 0,
			    us[i] - 1));
			ATF_REQUIRE_EQ(EBADMSG, errno);
		}
		if (us[i] < UINT32_MAX)
			ATF_REQUIRE_EQ(-1, msg_u32_decode(buf, len, &u,
			    us[i] + 1, UINT32_MAX));
		/* An i32 decoder refuses what does not fit an i32. */
		if (us[i] > INT32_MAX)
			ATF_REQUIRE_EQ(-1, msg_i32_decode(buf, len, &v,
			    INT32_MIN, INT32_MAX));
		free(buf);
	}
	for (i = 0; i < sizeof(is) / sizeof(is[0]); i++) {
		ATF_REQUIRE_EQ(0, msg_i32_encode(is[i], &buf, &len));
		v = 12345;
		ATF_REQUIRE_EQ(0, msg_i32_decode(buf, len, &v, INT32_MIN,
		    INT32_MAX));
		ATF_REQUIRE_EQ(is[i], v);
		if (is[i] > INT32_MIN)
			ATF_REQUIRE_EQ(-1, msg_i32_decode(buf, len, &v,
			    INT32_MIN, is[i] - 1));
		if (is[i] < INT32_MAX)
			ATF_REQUIRE_EQ(-1, msg_i32_decode(buf, len, &v,
			    is[i] + 1, INT32_MAX));
		/* A u32 decoder refuses a negative number. */
		if (is[i] < 0)
			ATF_REQUIRE_EQ(-1, msg_u32_decode(buf, len, &u, 0,
			    UINT32_MAX));
		free(buf);
	}
	/* The verbose levels the parent accepts. */
	ATF_REQUIRE_EQ(0, msg_i32_encode(4, &buf, &len));
	ATF_REQUIRE_EQ(-1, msg_i32_decode(buf, len, &v, 0, 3));
	free(buf);
}

ATF_TC(config_roundtrip);
ATF_TC_HEAD(config_roundtrip, tc)
{
	atf_tc_set_md_var(tc, "descr", "fenced_config round-trips exactly, "
	    "at the defaults and at the edges of every bound");
}
ATF_TC_BODY(config_roundtrip, tc)
{
	struct fenced_config a, b;
	void		*buf;
	size_t		 len, i;

	config_sample(&a);
	ATF_REQUIRE_EQ(0, msg_config_encode(&a, &buf, &len));
	memset(&b, 0xa5, sizeof(b));
	ATF_REQUIRE_EQ(0, msg_config_decode(buf, len, &b));
	ATF_REQUIRE(memcmp(&a, &b, sizeof(a)) == 0);
	free(buf);

	/* Every field at the other end of its range. */
	memset(&a, 0, sizeof(a));
	strlcpy(a.c_listen_addr, "::1", sizeof(a.c_listen_addr));
	a.c_listen_port = 65535;
	memset(a.c_socket, 's', sizeof(a.c_socket) - 1);
	a.c_socket[0] = '/';
	memset(a.c_state, 't', sizeof(a.c_state) - 1);
	a.c_state[0] = '/';
	strlcpy(a.c_homes, "/h\xc3\xa9", sizeof(a.c_homes));
	memset(a.c_user, 'u', sizeof(a.c_user) - 1);
	strlcpy(a.c_admin_group, "g", sizeof(a.c_admin_group));
	a.c_fence_uid_lo = 1;
	a.c_fence_uid_hi = (uid_t)-2;
	a.c_tier = TIER_L2;
	a.c_backend = BACKEND_SUBPROCESS;
	a.c_lifetime = LIFETIME_MAX;
	a.c_limits.fl_memory = MEMORY_MAX;
	a.c_limits.fl_pids = PIDS_MIN;
	a.c_limits.fl_cpu_milli = CPU_MILLI_MAX;
	a.c_lifetime_max = LIFETIME_MAX;
	a.c_limits_max.fl_memory = MEMORY_MAX;
	a.c_limits_max.fl_pids = PIDS_MAX;
	a.c_limits_max.fl_cpu_milli = CPU_MILLI_MAX;
	a.c_user_fences = USER_FENCES_MAX;
	a.c_user_limits.fl_memory = USER_MEMORY_MAX;
	a.c_user_limits.fl_pids = USER_PIDS_MAX;
	a.c_user_limits.fl_cpu_milli = USER_CPU_MILLI_MAX;
	a.c_snap_count = SNAP_COUNT_MAX;
	a.c_snap_bytes = SNAP_BYTES_MAX;
	a.c_user_snap_count = SNAP_COUNT_MAX;
	a.c_user_snap_bytes = SNAP_BYTES_MAX;
	a.c_exec_timeout = EXEC_TIMEOUT_MIN;
	a.c_exec_timeout_max = EXEC_TIMEOUT_MIN;
	a.c_exec_output = EXEC_OUTPUT_MAX;
	a.c_exec_output_max = EXEC_OUTPUT_MAX;
	a.c_exec_inflight_user = EXEC_INFLIGHT_MAX;
	a.c_exec_processes = EXEC_PROCESSES_MAX;
	a.c_http_body_max = HTTP_BODY_MIN;
	a.c_http_headers_max = HTTP_HEADERS_MAX;
	a.c_http_timeout = HTTP_TIMEOUT_MIN;
	a.c_http_conns_max = HTTP_CONNS_MAX;
	a.c_http_conns_user = HTTP_CONNS_MAX;
	a.c_files_max = FILES_MAX;
	/* The longest name and the most targets, of every shape. */
	memset(a.c_probe_dns, 'd', sizeof(a.c_probe_dns) - 1);
	a.c_probe_ntcp = PROBE_TCP_MAX;
	for (i = 0; i < PROBE_TCP_MAX; i++)
		snprintf(a.c_probe_tcp[i], sizeof(a.c_probe_tcp[i]),
		    i % 2 ? "[::1]:%d" : "h%d.example:65535", (int)i);
	memset(a.c_runsc, 'r', sizeof(a.c_runsc) - 1);
	a.c_runsc[0] = '/';
	strlcpy(a.c_runsc_platform, "systrap", sizeof(a.c_runsc_platform));
	a.c_uid = 0;
	a.c_gid = (gid_t)-1;
	a.c_admin_gid = 0;
	a.c_verbose = 0;
	a.c_egress_nhosts = EGRESS_HOSTS_MAX;
	for (i = 0; i < EGRESS_HOSTS_MAX; i++)
		snprintf(a.c_egress_host[i], sizeof(a.c_egress_host[i]),
		    i % 2 ? "h%d.test ::1 65535" : "h%d.test 10.0.0.1 1",
		    (int)i);
	a.c_egress_nresolvers = EGRESS_RESOLVERS_MAX;
	for (i = 0; i < EGRESS_RESOLVERS_MAX; i++)
		strlcpy(a.c_egress_resolver[i], i ? "fe80::1" : "127.0.0.1",
		    sizeof(a.c_egress_resolver[i]));
	a.c_egress_resolver_port = UINT16_MAX;
	a.c_egress_conns = EGRESS_CONNS_MAX;
	a.c_egress_rate = EGRESS_RATE_MIN;
	a.c_egress_idle = EGRESS_IDLE_MAX;
	a.c_egress_connect = EGRESS_CONNECT_MIN;
	strlcpy(a.c_probe_egress_allowed, "*.a.example:1",
	    sizeof(a.c_probe_egress_allowed));
	strlcpy(a.c_probe_egress_refused, "x.example:65535",
	    sizeof(a.c_probe_egress_refused));
	a.c_nadmin_uids = ADMIN_UIDS_MAX;
	for (i = 0; i < ADMIN_UIDS_MAX; i++)
		a.c_admin_uids[i] = i ? (uid_t)i * 1000 : (uid_t)-2;
	ATF_REQUIRE_EQ(0, msg_config_encode(&a, &buf, &len));
	memset(&b, 0, sizeof(b));
	ATF_REQUIRE_EQ(0, msg_config_decode(buf, len, &b));
	ATF_REQUIRE(memcmp(&a, &b, sizeof(a)) == 0);
	free(buf);
	/* One admin uid more than fits, or uid -1, is refused. */
	a.c_nadmin_uids = ADMIN_UIDS_MAX + 1;
	ATF_REQUIRE_EQ(-1, msg_config_encode(&a, &buf, &len));
	a.c_nadmin_uids = 1;
	a.c_admin_uids[0] = (uid_t)-1;
	if (msg_config_encode(&a, &buf, &len) == 0) {
		ATF_REQUIRE_EQ(-1, msg_config_decode(buf, len, &b));
		free(buf);
	}
}

ATF_TC(config_encode_refuses);
ATF_TC_HEAD(config_encode_refuses, tc)
{
	atf_tc_set_md_var(tc, "descr", "The config encoder refuses what "
	    "the decoder would refuse");
}
ATF_TC_BODY(config_encode_refuses, tc)
{
	struct fenced_config c;
	void		*buf = NULL;
	size_t		 len;
	int		 i;

	for (i = 0; i < 31; i++) {
		config_sample(&c);
		switch (i) {
		case 0: c.c_tier = 0; break;
		case 1: c.c_tier = TIER_L2 + 1; break;
		case 2: c.c_backend = BACKEND_SUBPROCESS + 1; break;
		case 3: c.c_fence_uid_lo = 0; break;
		case 4: c.c_fence_uid_lo = 5000; c.c_fence_uid_hi = 4999; break;
		case 5: c.c_lifetime = LIFETIME_MAX + 1; break;
		case 6: c.c_limits.fl_memory = MEMORY_MIN - 1; break;
		case 7: c.c_limits.fl_pids = PIDS_MAX + 1; break;
		case 8: c.c_exec_timeout = 60001; break;
		case 9: c.c_exec_output_max = EXEC_OUTPUT_MAX + 1; break;
		case 10:
			memset(c.c_user, 'u', sizeof(c.c_user));
			break;
		case 11: c.c_user[0] = '\0'; break;
		case 12:
			strlcpy(c.c_listen_addr, "localhost",
			    sizeof(c.c_listen_addr));
			break;
		case 13:
			strlcpy(c.c_state, "var/lib", sizeof(c.c_state));
			break;
		case 14:
			strlcpy(c.c_homes, "/bad\xff", sizeof(c.c_homes));
			break;
		case 15: c.c_verbose = -1; break;
		case 16: c.c_exec_inflight_user = 0; break;
		case 17: c.c_http_body_max = HTTP_BODY_MAX + 1; break;
		case 18: c.c_http_headers_max = HTTP_HEADERS_MIN - 1; break;
		case 19: c.c_http_timeout = 0; break;
		case 20: c.c_http_conns_user = c.c_http_conns_max + 1; break;
		case 21: c.c_lifetime_max = c.c_lifetime - 1; break;
		case 22:
			c.c_limits_max.fl_memory = c.c_limits.fl_memory - 1;
			break;
		case 23: c.c_limits_max.fl_pids = PIDS_MAX + 1; break;
		case 24: c.c_user_fences = 0; break;
		case 25: c.c_user_fences = USER_FENCES_MAX + 1; break;
		case 26:
			c.c_user_limits.fl_pids = c.c_limits.fl_pids - 1;
			break;
		case 27: c.c_user_limits.fl_cpu_milli = 0; break;
		case 28:
			strlcpy(c.c_http_origin[0], "http://x/",
			    sizeof(c.c_http_origin[0]));
			c.c_http_norigins = 1;
			break;
		case 29: c.c_http_norigins = HTTP_ORIGINS_MAX + 1; break;
		case 30: c.c_exec_processes = EXEC_PROCESSES_MAX + 1; break;
		}
		ATF_REQUIRE_EQ_MSG(-1, msg_config_encode(&c, &buf, &len),
		    "case %d", i);
		ATF_REQUIRE_EQ(EINVAL, errno);
	}
}

ATF_TC(config_decode_refuses);
ATF_TC_HEAD(config_decode_refuses, tc)
{
	atf_tc_set_md_var(tc, "descr", "The config decoder refuses a "
	    "value out of bounds in any field, and the wrong field count");
}
ATF_TC_BODY(config_decode_refuses, tc)
{
	struct fenced_config c, orig;
	struct field	 f[CONFIG_NFIELDS + 1];
	char		 longstr[PATH_MAX + 1];
	size_t		 i;

	/* The unmodified table must pass, or the rest proves nothing. */
	config_fields(f);
	ATF_REQUIRE_EQ(0, config_decode_fields(f, CONFIG_NFIELDS, &c));
	config_sample(&orig);
	ATF_REQUIRE(memcmp(&c, &orig, sizeof(c)) == 0);

	memset(longstr, 'a', sizeof(longstr));
	longstr[0] = '/';

#define BAD(idx, stmt) do {						\
	config_fields(f);						\
	stmt;								\
	memcpy(&c, &orig, sizeof(c));					\
	ATF_REQUIRE_EQ_MSG(-1, config_decode_fields(f, CONFIG_NFIELDS,	\
	    &c), "field %d: %s", idx, #stmt);				\
	ATF_REQUIRE_EQ(EBADMSG, errno);					\
	/* A refused payload leaves the output alone. */		\
	ATF_REQUIRE(memcmp(&c, &orig, sizeof(c)) == 0);			\
} while (0)
	BAD(0, f[0].s = "localhost");
	BAD(0, f[0].s = "");
	BAD(33, f[33].s = "usr/bin/runsc");
	BAD(33, (f[33].s = longstr, f[33].slen = PATH_MAX));
	BAD(34, f[34].s = "");
	BAD(34, f[34].s = "hypervisor");
	BAD(35, f[35].u = VM_ACCEL_TCG + 1);
	/* A vm boot file: absolute, and never without its hash. */
	BAD(36, f[36].s = "/boot/vmlinuz");
	BAD(36, (f[36].s = "boot/vmlinuz", f[39].s = "e3b0c44298fc1c149afb"
	    "f4c8996fb92427ae41e4649b934ca495991b7852b855"));
	BAD(41, f[41].s = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934c"
	    "a495991b7852b855");
	BAD(37, (f[37].s = "/x", f[40].s = "E3B0C44298FC1C149AFBF4C8996FB924"
	    "27AE41E4649B934CA495991B7852B855"));
	BAD(42, f[42].u = POOL_MAX + 1);
	BAD(44, f[44].u = UINT32_MAX);
	BAD(46, f[46].u = 0);
	BAD(46, f[46].u = EXEC_PROCESSES_MAX + 1);
	BAD(1, f[1].u = 65536);
	BAD(2, f[2].s = "relative.sock");
	BAD(2, (f[2].s = longstr, f[2].slen = PATH_MAX));
	BAD(3, (f[3].s = longstr, f[3].slen = PATH_MAX + 1));
	BAD(4, f[4].s = "");
	BAD(5, f[5].s = "0123456789012345678901234567890123456789"
	    "012345678901234567890123");	/* 64: no room for NUL */
	BAD(5, (f[5].s = "ab\0cd", f[5].slen = 5));
	BAD(5, f[5].s = "\xc0\xae");
	BAD(6, f[6].u = 0);
	BAD(6, f[6].u = 62000);			/* lo > hi */
	BAD(7, f[7].u = UINT32_MAX);
	BAD(7, f[7].u = 1ULL << 32);
	BAD(9, f[9].u = 0);
	BAD(9, f[9].u = TIER_L2 + 1);
	BAD(10, f[10].u = 0);
	BAD(10, f[10].u = BACKEND_SUBPROCESS + 1);
	BAD(11, f[11].u = 0);
	BAD(11, f[11].u = LIFETIME_MAX + 1);
	BAD(12, f[12].u = MEMORY_MIN - 1);
	BAD(12, f[12].u = MEMORY_MAX + 1);
	BAD(13, f[13].u = PIDS_MIN - 1);
	BAD(14, f[14].u = CPU_MILLI_MAX + 1);
	BAD(15, f[15].u = EXEC_TIMEOUT_MIN - 1);
	BAD(16, f[16].u = 9999);		/* below the default */
	BAD(17, f[17].u = EXEC_OUTPUT_MAX + 1);
	BAD(18, f[18].u = 1024);		/* below the default */
	BAD(19, f[19].u = 0);
	BAD(19, f[19].u = EXEC_INFLIGHT_MAX + 1);
	BAD(20, f[20].u = HTTP_BODY_MIN - 1);
	BAD(20, f[20].u = HTTP_BODY_MAX + 1);
	BAD(21, f[21].u = HTTP_HEADERS_MAX + 1);
	BAD(22, f[22].u = 0);
	BAD(22, f[22].u = HTTP_TIMEOUT_MAX + 1);
	BAD(23, f[23].u = HTTP_CONNS_MAX + 1);
	BAD(23, f[23].u = 31);			/* below per user */
	BAD(24, f[24].u = 0);
	BAD(25, f[25].s = "-bad");
	BAD(25, f[25].s = "");
	BAD(26, f[26].kind = F_NIL);
	BAD(27, f[27].u = 1ULL << 32);
	BAD(29, (f[29].kind = F_I, f[29].i = -1));
	BAD(30, f[30].i = -1);
	BAD(30, f[30].i = (int64_t)INT32_MAX + 1);
	/* The ceilings and user totals, an array of their own. */
	BAD(31, ceil_n = CEIL_N - 1);
	BAD(31, ceil_vals[0] = LIFETIME_MAX + 1);
	BAD(31, ceil_vals[0] = 1799);		/* below the default */
	BAD(31, ceil_vals[1] = MEMORY_MAX + 1);
	BAD(31, ceil_vals[2] = 255);		/* below the default */
	BAD(31, ceil_vals[3] = CPU_MILLI_MAX + 1);
	BAD(31, ceil_vals[4] = 0);
	BAD(31, ceil_vals[4] = USER_FENCES_MAX + 1);
	BAD(31, ceil_vals[5] = USER_MEMORY_MAX + 1);
	BAD(31, ceil_vals[6] = 255);		/* below one default fence */
	BAD(31, ceil_vals[7] = USER_CPU_MILLI_MAX + 1);
	BAD(31, f[31].kind = F_ARR);
	BAD(31, f[31].kind = F_U);
	BAD(32, f[32].u = HOME_LIMIT_MIN - 1);
	BAD(32, f[32].u = HOME_LIMIT_MAX + 1);
	/* Wrong types. */
	BAD(1, f[1].kind = F_NIL);
	BAD(1, (f[1].kind = F_S, f[1].s = "7700"));
	BAD(1, (f[1].kind = F_I, f[1].i = -7700));
	BAD(9, f[9].kind = F_BOOL);
	BAD(0, (f[0].kind = F_U, f[0].u = 127));
	BAD(3, f[3].kind = F_ARR);
	BAD(61, (f[61].kind = F_U, f[61].u = 2));
	BAD(61, f[61].kind = F_NIL);
#undef BAD

	/* One field too few, one too many. */
	config_fields(f);
	ATF_REQUIRE_EQ(-1, config_decode_fields(f, CONFIG_NFIELDS - 1, &c));
	config_fields(f);
	f[CONFIG_NFIELDS].kind = F_U;
	f[CONFIG_NFIELDS].u = 1;
	ATF_REQUIRE_EQ(-1, config_decode_fields(f, CONFIG_NFIELDS + 1, &c));

	/* The shortest and longest legal strings pass. */
	config_fields(f);
	f[5].s = "012345678901234567890123456789012345678901234567890123"
	    "456789012";				/* 63 */
	f[3].s = longstr;
	f[3].slen = PATH_MAX - 1;
	ATF_REQUIRE_EQ(0, config_decode_fields(f, CONFIG_NFIELDS, &c));
	ATF_REQUIRE_EQ(63, strlen(c.c_user));
	ATF_REQUIRE_EQ(PATH_MAX - 1, strlen(c.c_state));
	for (i = 1; i < PATH_MAX - 1; i++)
		ATF_REQUIRE_EQ('a', c.c_state[i]);
}

ATF_TC(procinfo);
ATF_TC_HEAD(procinfo, tc)
{
	atf_tc_set_md_var(tc, "descr", "procinfo round-trips; pids are 0 "
	    "or positive, exactly PROC_MAX of them");
}
ATF_TC_BODY(procinfo, tc)
{
	struct msg_procinfo a, b;
	struct field	 f[2];
	void		*buf;
	size_t		 len;

	memset(&a, 0, sizeof(a));
	a.pi_pid[PROC_PARENT] = 1;
	a.pi_pid[PROC_BROKER] = 4194304;
	a.pi_pid[PROC_FENCER] = 0;
	a.pi_pid[PROC_PROBER] = INT32_MAX;
	a.pi_started = 1700000000;
	ATF_REQUIRE_EQ(0, msg_procinfo_encode(&a, &buf, &len));
	memset(&b, 0xff, sizeof(b));
	ATF_REQUIRE_EQ(0, msg_procinfo_decode(buf, len, &b));
	ATF_REQUIRE(memcmp(&a, &b, sizeof(a)) == 0);
	free(buf);

	a.pi_pid[PROC_BROKER] = -1;
	ATF_REQUIRE_EQ(-1, msg_procinfo_encode(&a, &buf, &len));
	a.pi_pid[PROC_BROKER] = 2;
	a.pi_started = -1;
	ATF_REQUIRE_EQ(-1, msg_procinfo_encode(&a, &buf, &len));

	/* Hand-made: the shape must be [[pid x PROC_MAX], started]. */
	f[0].kind = F_PIDS;
	f[1].kind = F_I;
	f[1].i = 5;
	f[0].u = PROC_MAX;
	f[0].i = 7;
	fields_pack(f, 2, &buf, &len);
	ATF_REQUIRE_EQ(0, msg_procinfo_decode(buf, len, &b));
	ATF_REQUIRE_EQ(7, b.pi_pid[PROC_PROBER]);
	free(buf);

	f[0].u = PROC_MAX - 1;
	fields_pack(f, 2, &buf, &len);
	ATF_REQUIRE_EQ(-1, msg_procinfo_decode(buf, len, &b));
	free(buf);
	f[0].u = PROC_MAX + 1;
	fields_pack(f, 2, &buf, &len);
	ATF_REQUIRE_EQ(-1, msg_procinfo_decode(buf, len, &b));
	free(buf);
	f[0].u = PROC_MAX;
	f[0].i = -5;
	fields_pack(f, 2, &buf, &len);
	ATF_REQUIRE_EQ(-1, msg_procinfo_decode(buf, len, &b));
	free(buf);
	f[0].i = (int64_t)INT32_MAX + 1;
	fields_pack(f, 2, &buf, &len);
	ATF_REQUIRE_EQ(-1, msg_procinfo_decode(buf, len, &b));
	free(buf);
	f[0].i = 7;
	f[1].i = -1;
	fields_pack(f, 2, &buf, &len);
	ATF_REQUIRE_EQ(-1, msg_procinfo_decode(buf, len, &b));
	free(buf);
	f[1].i = 0;
	f[0].kind = F_U;		/* a pid where the table should be */
	fields_pack(f, 2, &buf, &len);
	ATF_REQUIRE_EQ(-1, msg_procinfo_decode(buf, len, &b));
	free(buf);
}

ATF_TC(error);
ATF_TC_HEAD(error, tc)
{
	atf_tc_set_md_var(tc, "descr", "error replies round-trip; codes are "
	    "short words, messages bounded UTF-8 text");
}
ATF_TC_BODY(error, tc)
{
	struct msg_error a, b;
	struct field	 f[2];
	char		 longmsg[MSG_ERROR_TEXT_MAX + 1];
	void		*buf;
	size_t		 len;

	memset(&a, 0, sizeof(a));
	strlcpy(a.e_code, "exec-timeout", sizeof(a.e_code));
	strlcpy(a.e_message, "command ran past 10000 ms \xe2\x80\x94 killed",
	    sizeof(a.e_message));
	ATF_REQUIRE_EQ(0, msg_error_encode(&a, &buf, &len));
	memset(&b, 0x55, sizeof(b));
	ATF_REQUIRE_EQ(0, msg_error_decode(buf, len, &b));
	ATF_REQUIRE(memcmp(&a, &b, sizeof(a)) == 0);
	free(buf);

	strlcpy(a.e_code, "Bad Code", sizeof(a.e_code));
	ATF_REQUIRE_EQ(-1, msg_error_encode(&a, &buf, &len));
	a.e_code[0] = '\0';
	ATF_REQUIRE_EQ(-1, msg_error_encode(&a, &buf, &len));

	memset(longmsg, 'm', sizeof(longmsg));
	f[0].kind = F_S;
	f[0].s = "bad-key";
	f[0].slen = 0;
	f[1].kind = F_S;
	f[1].s = longmsg;
	f[1].slen = MSG_ERROR_TEXT_MAX - 1;
	fields_pack(f, 2, &buf, &len);
	ATF_REQUIRE_EQ(0, msg_error_decode(buf, len, &b));
	ATF_REQUIRE_EQ(MSG_ERROR_TEXT_MAX - 1, strlen(b.e_message));
	free(buf);
	f[1].slen = MSG_ERROR_TEXT_MAX;
	fields_pack(f, 2, &buf, &len);
	ATF_REQUIRE_EQ(-1, msg_error_decode(buf, len, &b));
	free(buf);
	f[1].s = "";
	f[1].slen = 0;
	f[0].s = "bad/key";
	fields_pack(f, 2, &buf, &len);
	ATF_REQUIRE_EQ(-1, msg_error_decode(buf, len, &b));
	free(buf);
}

ATF_TC(stats);
ATF_TC_HEAD(stats, tc)
{
	atf_tc_set_md_var(tc, "descr", "stats round-trip, counters at full "
	    "u64 range");
}
ATF_TC_BODY(stats, tc)
{
	struct msg_stats a, b;
	void		*buf;
	size_t		 len;

	stats_sample(&a);
	ATF_REQUIRE_EQ(0, msg_stats_encode(&a, &buf, &len));
	memset(&b, 0, sizeof(b));
	ATF_REQUIRE_EQ(0, msg_stats_decode(buf, len, &b));
	ATF_REQUIRE(memcmp(&a, &b, sizeof(a)) == 0);
	/* Not a procinfo, nor a config: shapes differ. */
	ATF_REQUIRE_EQ(-1, msg_procinfo_decode(buf, len,
	    &(struct msg_procinfo){ { 0 }, 0 }));
	free(buf);

	a.st_verbose = -1;
	ATF_REQUIRE_EQ(-1, msg_stats_encode(&a, &buf, &len));
}

ATF_TC(pool);
ATF_TC_HEAD(pool, tc)
{
	atf_tc_set_md_var(tc, "descr", "the warm pool's counters round-trip; "
	    "more ready than configured, or a size above POOL_MAX, is refused");
}
ATF_TC_BODY(pool, tc)
{
	struct msg_stats a;
	struct msg_pool	 b;
	void		*buf;
	size_t		 len;

	stats_sample(&a);
	ATF_REQUIRE_EQ(0, msg_pool_encode(&a.st_pool, &buf, &len));
	memset(&b, 0, sizeof(b));
	ATF_REQUIRE_EQ(0, msg_pool_decode(buf, len, &b));
	ATF_REQUIRE(memcmp(&a.st_pool, &b, sizeof(b)) == 0);
	/* Not a stats payload: shapes differ. */
	ATF_REQUIRE_EQ(-1, msg_stats_decode(buf, len, &a));
	free(buf);

	stats_sample(&a);
	a.st_pool.p_tier[0].pt_ready = 1;
	ATF_REQUIRE_EQ(-1, msg_pool_encode(&a.st_pool, &buf, &len));
	stats_sample(&a);
	a.st_pool.p_tier[2].pt_size = a.st_pool.p_tier[2].pt_ready =
	    POOL_MAX + 1;
	/* The decoder bounds what a confused encoder let through. */
	if (msg_pool_encode(&a.st_pool, &buf, &len) == 0) {
		ATF_REQUIRE_EQ(-1, msg_pool_decode(buf, len, &b));
		free(buf);
	}
}

static void
usage_sample(struct msg_usage *u, uint32_t n)
{
	uint32_t	 i;

	memset(u, 0, sizeof(*u));
	u->u_boots_queued = 3;
	u->u_probes_queued = UINT32_MAX;
	u->u_probes_running = 2;
	u->u_probe_slots = 4;
	u->u_fences = n + 5;
	u->u_nfences = n;
	for (i = 0; i < n; i++) {
		snprintf(u->u_fence[i].uf_key, sizeof(u->u_fence[i].uf_key),
		    i % 2 ? "k%u" : "%u-a_b", (unsigned)i);
		u->u_fence[i].uf_owner = i % 3 ? (uid_t)i : (uid_t)-2;
		u->u_fence[i].uf_have = i % (MSG_USAGE_ALL + 1);
		u->u_fence[i].uf_cpu_usec = UINT64_MAX - i;
		u->u_fence[i].uf_mem_bytes = i;
		u->u_fence[i].uf_mem_peak = (uint64_t)i << 32;
		u->u_fence[i].uf_pids = 1;
		u->u_fence[i].uf_pids_peak = 65536;
	}
}

ATF_TC(usage);
ATF_TC_HEAD(usage, tc)
{
	atf_tc_set_md_var(tc, "descr", "the fencer's usage answer "
	    "round-trips empty and with MSG_USAGE_FENCES_MAX fences; a bad "
	    "key, owner -1, an unknown bit, more fences listed than held or "
	    "than the bound, and an element of the wrong shape are refused");
}
ATF_TC_BODY(usage, tc)
{
	struct msg_usage *a, *b;
	struct mp_writer w;
	void		*buf;
	size_t		 len, i;

	ATF_REQUIRE((a = calloc(1, sizeof(*a))) != NULL);
	ATF_REQUIRE((b = calloc(1, sizeof(*b))) != NULL);
	usage_sample(a, 0);
	ATF_REQUIRE_EQ(0, msg_usage_encode(a, &buf, &len));
	ATF_REQUIRE_EQ(0, msg_usage_decode(buf, len, b));
	ATF_REQUIRE(memcmp(a, b, sizeof(*a)) == 0);
	free(buf);
	usage_sample(a, MSG_USAGE_FENCES_MAX);
	ATF_REQUIRE_EQ(0, msg_usage_encode(a, &buf, &len));
	ATF_REQUIRE(len < IMSG_MAX_PAYLOAD);
	memset(b, 0xa5, sizeof(*b));
	ATF_REQUIRE_EQ(0, msg_usage_decode(buf, len, b));
	ATF_REQUIRE(memcmp(a, b, sizeof(*a)) == 0);
	/* Every proper prefix is refused. */
	for (i = 0; i < len; i += 97)
		ATF_REQUIRE_EQ(-1, msg_usage_decode(buf, i, b));
	free(buf);

	usage_sample(a, 4);
	strlcpy(a->u_fence[1].uf_key, "Bad", sizeof(a->u_fence[1].uf_key));
	ATF_REQUIRE_EQ(-1, msg_usage_encode(a, &buf, &len));
	usage_sample(a, 4);
	a->u_fence[2].uf_owner = MSG_OWNER_NONE;
	ATF_REQUIRE_EQ(-1, msg_usage_encode(a, &buf, &len));
	usage_sample(a, 4);
	a->u_fence[3].uf_have = MSG_USAGE_ALL + 1;
	ATF_REQUIRE_EQ(-1, msg_usage_encode(a, &buf, &len));
	usage_sample(a, 4);
	a->u_fences = 3;
	ATF_REQUIRE_EQ(-1, msg_usage_encode(a, &buf, &len));
	usage_sample(a, 4);
	a->u_nfences = MSG_USAGE_FENCES_MAX + 1;
	a->u_fences = UINT32_MAX;
	ATF_REQUIRE_EQ(-1, msg_usage_encode(a, &buf, &len));

	/* One element too many on the wire, and one of seven fields. */
	for (i = 0; i < 2; i++) {
		size_t	 n = i == 0 ? MSG_USAGE_FENCES_MAX + 1 : 1, k;

		mp_write_init(&w);
		mp_write_array(&w, 6);
		for (k = 0; k < 4; k++)
			mp_write_u64(&w, 0);
		mp_write_u64(&w, UINT32_MAX);
		mp_write_array(&w, n);
		for (k = 0; k < n; k++) {
			mp_write_array(&w, i == 0 ? 8 : 7);
			mp_write_str(&w, "k", FENCE_KEY_SIZE);
			mp_write_u64(&w, 1);
			mp_write_u64(&w, 0);
			mp_write_u64(&w, 0);
			mp_write_u64(&w, 0);
			mp_write_u64(&w, 0);
			mp_write_u64(&w, 0);
			if (i == 0)
				mp_write_u64(&w, 0);
		}
		ATF_REQUIRE_EQ(0, mp_write_finish(&w, &buf, &len));
		ATF_REQUIRE_EQ(-1, msg_usage_decode(buf, len, b));
		ATF_REQUIRE_EQ(EBADMSG, errno);
		free(buf);
	}
	free(a);
	free(b);
}

/*
 * Every message type, encoded, sent through imsg over a socketpair
 * (with its descriptor where it has one), received and decoded.
 */
static void
send_recv(struct imsgbuf *a, struct imsgbuf *b, uint32_t type, int fd,
    void *buf, size_t len, struct imsg *m)
{
	int	 r, tries = 0;

	ATF_REQUIRE_EQ(0, imsgbuf_compose(a, type, 0, (uint32_t)getpid(),
	    fd, buf, len));
	free(buf);
	ATF_REQUIRE_EQ(0, imsgbuf_flush(a));
	while ((r = imsgbuf_get(b, m)) == 0) {
		ATF_REQUIRE(++tries < 1000);
		if (imsgbuf_read(b) == -1)
			ATF_REQUIRE_EQ(EAGAIN, errno);
	}
	ATF_REQUIRE_EQ(1, r);
	ATF_REQUIRE_EQ(type, m->hdr.ih_type);
}

ATF_TC(through_imsg);
ATF_TC_HEAD(through_imsg, tc)
{
	atf_tc_set_md_var(tc, "descr", "Every message type whose payload "
	    "msg.c encodes survives encode, imsg over a socketpair, and "
	    "decode; a new type nobody placed fails here");
}
ATF_TC_BODY(through_imsg, tc)
{
	struct fenced_config ca, cb;
	struct msg_procinfo pa, pb;
	struct msg_error ea, eb;
	struct msg_stats sa, sb;
	struct imsgbuf	*a, *b;
	struct imsg	 m;
	uint32_t	 t, u;
	int32_t		 v;
	int		 sv[2], p[2], seen[IMSG_TYPE_MAX];
	void		*buf;
	size_t		 len;

	memset(seen, 0, sizeof(seen));
	ATF_REQUIRE(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0,
	    sv) == 0);
	ATF_REQUIRE((a = imsgbuf_new(sv[0])) != NULL);
	ATF_REQUIRE((b = imsgbuf_new(sv[1])) != NULL);
	config_sample(&ca);
	memset(&pa, 0, sizeof(pa));
	pa.pi_pid[PROC_PARENT] = getpid();
	pa.pi_started = 1;
	memset(&ea, 0, sizeof(ea));
	strlcpy(ea.e_code, "bad-key", sizeof(ea.e_code));
	stats_sample(&sa);

	for (t = IMSG_NONE + 1; t < IMSG_TYPE_MAX; t++) {
		switch (t) {
		case IMSG_CONFIG:
			ATF_REQUIRE_EQ(0, msg_config_encode(&ca, &buf, &len));
			send_recv(a, b, t, -1, buf, len, &m);
			ATF_REQUIRE_EQ(0, msg_config_decode(m.data, m.len,
			    &cb));
			ATF_REQUIRE(memcmp(&ca, &cb, sizeof(ca)) == 0);
			break;
		case IMSG_PEER_FD:
		case IMSG_LISTEN_FD:
			ATF_REQUIRE(pipe2(p, O_CLOEXEC) == 0);
			ATF_REQUIRE_EQ(0, msg_u32_encode(t == IMSG_PEER_FD ?
			    PROC_PROBER : LISTEN_HTTP, &buf, &len));
			send_recv(a, b, t, p[1], buf, len, &m);
			ATF_REQUIRE_EQ(0, msg_u32_decode(m.data, m.len, &u,
			    0, t == IMSG_PEER_FD ? PROC_MAX - 1 : LISTEN_HTTP));
			ATF_REQUIRE_EQ(t == IMSG_PEER_FD ? PROC_PROBER :
			    LISTEN_HTTP, u);
			ATF_REQUIRE(m.fd >= 0);
			ATF_REQUIRE_EQ(1, write(m.fd, "p", 1));
			close(p[0]);
			break;
		case IMSG_PROC_INFO:
			ATF_REQUIRE_EQ(0, msg_procinfo_encode(&pa, &buf,
			    &len));
			send_recv(a, b, t, -1, buf, len, &m);
			ATF_REQUIRE_EQ(0, msg_procinfo_decode(m.data, m.len,
			    &pb));
			ATF_REQUIRE(memcmp(&pa, &pb, sizeof(pa)) == 0);
			break;
		case IMSG_TOKEN_STORED:
			ATF_REQUIRE_EQ(0, msg_u32_encode(1, &buf, &len));
			send_recv(a, b, t, -1, buf, len, &m);
			ATF_REQUIRE_EQ(0, msg_u32_decode(m.data, m.len, &u,
			    0, 1));
			ATF_REQUIRE_EQ(1, u);
			break;
		case IMSG_LOG_LEVEL:
		case IMSG_LOG_VERBOSE:
		case IMSG_CTL_LOG_VERBOSE:
			ATF_REQUIRE_EQ(0, msg_i32_encode(2, &buf, &len));
			send_recv(a, b, t, -1, buf, len, &m);
			ATF_REQUIRE_EQ(0, msg_i32_decode(m.data, m.len, &v, 0,
			    3));
			ATF_REQUIRE_EQ(2, v);
			break;
		case IMSG_CTL_STATS:
			ATF_REQUIRE_EQ(0, msg_stats_encode(&sa, &buf, &len));
			send_recv(a, b, t, -1, buf, len, &m);
			ATF_REQUIRE_EQ(0, msg_stats_decode(m.data, m.len,
			    &sb));
			ATF_REQUIRE(memcmp(&sa, &sb, sizeof(sa)) == 0);
			break;
		case IMSG_POOL_STATS:
			ATF_REQUIRE_EQ(0, msg_pool_encode(&sa.st_pool, &buf,
			    &len));
			send_recv(a, b, t, -1, buf, len, &m);
			ATF_REQUIRE_EQ(0, msg_pool_decode(m.data, m.len,
			    &sb.st_pool));
			ATF_REQUIRE(memcmp(&sa.st_pool, &sb.st_pool,
			    sizeof(sa.st_pool)) == 0);
			break;
		case IMSG_CTL_ERROR:
		case IMSG_RELOADED:
		case IMSG_FENCE_FAILED:
		case IMSG_AGENT_ERROR:
			ATF_REQUIRE_EQ(0, msg_error_encode(&ea, &buf, &len));
			send_recv(a, b, t, -1, buf, len, &m);
			ATF_REQUIRE_EQ(0, msg_error_decode(m.data, m.len,
			    &eb));
			ATF_REQUIRE(memcmp(&ea, &eb, sizeof(ea)) == 0);
			break;
		case IMSG_START:
		case IMSG_RELOAD:
		case IMSG_CTL_SHOW_STATS:
		case IMSG_CTL_SHOW_TOKENS:
		case IMSG_CTL_RELOAD:
		case IMSG_CTL_TEST_SYSCALL:
		case IMSG_CTL_OK:
		case IMSG_CTL_END:
		case IMSG_FENCE_END:
		case IMSG_AGENT_READY:
		case IMSG_AGENT_PROC_END:
		case IMSG_CTL_FILE_MORE:
		case IMSG_CTL_METRICS:
		case IMSG_FENCE_USAGE_REQ:
		case IMSG_HOST_DOCTOR:
		case IMSG_CTL_DOCTOR:
		case IMSG_DENIALS_FD:	/* and the socket of denials */
			send_recv(a, b, t, -1, NULL, 0, &m);
			ATF_REQUIRE_EQ(0, msg_empty_decode(m.data, m.len));
			break;
		case IMSG_FENCE_BOOT:
		case IMSG_FENCE_STOP:
		case IMSG_FENCE_BOOTED:
		case IMSG_FENCE_STOPPED:
		case IMSG_CTL_BOOT:
		case IMSG_CTL_STOP:
		case IMSG_CTL_LIST:
		case IMSG_CTL_EXEC:
		case IMSG_CTL_GIT_CONFIG:
		case IMSG_CTL_GIT_INIT:
		case IMSG_CTL_FENCE:
		case IMSG_CTL_RESULT:
		case IMSG_CTL_GIT_IDENTITY:
		case IMSG_AGENT_HELLO:
		case IMSG_AGENT_EXEC:
		case IMSG_AGENT_RESULT:
		case IMSG_AGENT_GIT_CONFIG:
		case IMSG_AGENT_GIT_IDENTITY:
		case IMSG_AGENT_GIT_INIT:
		case IMSG_TOKEN_LOAD:
		case IMSG_TOKEN_STORE:
		case IMSG_CTL_HOSTTOKEN:
		case IMSG_CTL_TOKEN:
		case IMSG_CTL_TOKENINFO:
		case IMSG_PROBE_PREPARE:
		case IMSG_PROBE_EXEC:
		case IMSG_PROBE_OUTPUT:
		case IMSG_PROBE_REPORT:
		case IMSG_PROBE_VERDICT:
		case IMSG_FENCE_LEVEL:
		case IMSG_CTL_PROBE:
		case IMSG_CTL_VERDICT:
		case IMSG_CTL_SPAWN:
		case IMSG_CTL_PROCS:
		case IMSG_CTL_PROC:
		case IMSG_AGENT_SPAWN:
		case IMSG_AGENT_PROCS:
		case IMSG_AGENT_PROC:
		case IMSG_CTL_FILE_PUT:
		case IMSG_CTL_FILE_GET:
		case IMSG_CTL_FILE:
		case IMSG_CTL_FILE_LIST:
		case IMSG_AGENT_FILE_READ:
		case IMSG_AGENT_FILE_WRITE:
		case IMSG_AGENT_FILE_DELETE:
		case IMSG_AGENT_FILE:
		case IMSG_AGENT_FILE_LIST:
		case IMSG_CTL_EXEC_STREAM:
		case IMSG_CTL_CHUNK:
		case IMSG_AGENT_EXEC_STREAM:
		case IMSG_AGENT_CREDIT:
		case IMSG_AGENT_CANCEL:
		case IMSG_AGENT_PROBE:
		case IMSG_AGENT_CHUNK:
		case IMSG_AGENT_EGRESS_CONN:
		case IMSG_CTL_TUNNEL:
		case IMSG_CTL_PORTS:
		case IMSG_CTL_TUNNEL_FD:
		case IMSG_CTL_PORT_LIST:
		case IMSG_CTL_PORT_TICKET:
		case IMSG_CTL_PORT_URLS:
		case IMSG_AGENT_TUNNEL_OPEN:
		case IMSG_AGENT_PORTS:
		case IMSG_AGENT_TUNNEL:
		case IMSG_AGENT_PORT_LIST:
		case IMSG_AGENT_TUNNEL_DATA:
		case IMSG_AGENT_TUNNEL_CREDIT:
		case IMSG_AGENT_TUNNEL_CLOSE:
		case IMSG_AGENT_TERM_OPEN:
		case IMSG_AGENT_TERMS:
		case IMSG_AGENT_PROC_INPUT:
		case IMSG_AGENT_TERM:
		case IMSG_AGENT_TERM_END:
		case IMSG_CTL_TERM_OPEN:
		case IMSG_CTL_TERMS:
		case IMSG_CTL_PROC_INPUT:
		case IMSG_CTL_TERM:
		case IMSG_EGRESS_FENCE:
		case IMSG_EGRESS_FORGET:
		case IMSG_EGRESS_CONN:
		case IMSG_EGRESS_DECISION:
		case IMSG_FENCE_SNAP:
		case IMSG_FENCE_SNAP_INFO:
		case IMSG_CTL_SNAP:
		case IMSG_CTL_SNAP_INFO:
		case IMSG_FENCE_USAGE:
		case IMSG_HOST_CHECK:
		case IMSG_CTL_CHECK:
		case IMSG_AUDIT:
		case IMSG_AUDIT_READ:
		case IMSG_AUDIT_LINE:
		case IMSG_AUDIT_END:
		case IMSG_CTL_SHOW_AUDIT:
		case IMSG_CTL_AUDIT:
		case IMSG_DENIAL:
		case IMSG_FENCE_LIMIT_FD:
			/*
			 * Codecs of msg_fence.c (snap_codec and check_codec
			 * here), msg_usage.c (usage here), msg_agent.c,
			 * msg_token.c, msg_probe.c, msg_proc.c, msg_stream.c,
			 * msg_files.c (msg_files_test), msg_egress.c
			 * (msg_egress_test), msg_tunnel.c (msg_tunnel_test),
			 * msg_term.c (msg_term_test), msg_port.c (port_ticket
			 * here), msg_audit.c (audit_log_test), msg_denial.c
			 * (msg_agent_test).
			 */
			continue;
		default:
			atf_tc_fail("type %s has no test",
			    msg_type_name(t));
		}
		ATF_REQUIRE_EQ((uint32_t)getpid(), m.hdr.ih_pid);
		seen[t] = 1;
		imsg_free(&m);
	}
	ATF_REQUIRE(seen[IMSG_CONFIG] && seen[IMSG_CTL_END] &&
	    seen[IMSG_AGENT_ERROR]);
	imsgbuf_free(a);
	imsgbuf_free(b);
	close(sv[0]);
	close(sv[1]);
}

/*
 * The strict msgpack layer.
 */
/* Whether mp_read_begin() takes buf as an array of nfields. */
static int
mp_ok(const void *buf, size_t len, size_t nfields)
{
	struct mp_reader r;
	int		 a;

	a = mp_read_begin(&r, buf, len, nfields);
	mp_read_end(&r);
	return (a);
}

ATF_TC(mp_truncated);
ATF_TC_HEAD(mp_truncated, tc)
{
	atf_tc_set_md_var(tc, "descr", "Every proper prefix of a valid "
	    "payload is refused, by the scanner and by every decoder");
}
ATF_TC_BODY(mp_truncated, tc)
{
	struct fenced_config c;
	struct msg_stats st;
	void		*buf;
	size_t		 len, i;

	config_sample(&c);
	ATF_REQUIRE_EQ(0, msg_config_encode(&c, &buf, &len));
	ATF_REQUIRE_EQ(0, mp_scan(buf, len));
	for (i = 0; i < len; i++) {
		ATF_REQUIRE_EQ_MSG(-1, mp_scan(buf, i), "prefix %zu", i);
		ATF_REQUIRE_EQ(-1, msg_config_decode(buf, i, &c));
		ATF_REQUIRE_EQ(EBADMSG, errno);
	}
	free(buf);
	stats_sample(&st);
	ATF_REQUIRE_EQ(0, msg_stats_encode(&st, &buf, &len));
	for (i = 0; i < len; i++)
		ATF_REQUIRE_EQ(-1, msg_stats_decode(buf, i, &st));
	free(buf);
}

ATF_TC(mp_trailing);
ATF_TC_HEAD(mp_trailing, tc)
{
	atf_tc_set_md_var(tc, "descr", "A valid payload followed by any "
	    "byte, or by a second object, is refused");
}
ATF_TC_BODY(mp_trailing, tc)
{
	unsigned char	 b[64];
	uint32_t	 u;
	void		*buf;
	size_t		 len;

	ATF_REQUIRE_EQ(0, msg_u32_encode(5, &buf, &len));
	ATF_REQUIRE(len + 2 <= sizeof(b));
	memcpy(b, buf, len);
	free(buf);
	ATF_REQUIRE_EQ(0, msg_u32_decode(b, len, &u, 0, 10));
	b[len] = 0x00;
	ATF_REQUIRE_EQ(-1, msg_u32_decode(b, len + 1, &u, 0, 10));
	b[len] = 0xc0;
	ATF_REQUIRE_EQ(-1, mp_scan(b, len + 1));
	memcpy(b + len, b, len);	/* two whole objects */
	ATF_REQUIRE_EQ(-1, msg_u32_decode(b, 2 * len, &u, 0, 10));
}

ATF_TC(mp_huge_counts);
ATF_TC_HEAD(mp_huge_counts, tc)
{
	atf_tc_set_md_var(tc, "descr", "Arrays, maps, strings and bins that "
	    "claim more than the bytes present are refused before msgpack-c "
	    "allocates for them (the 2^32 case)");
}
ATF_TC_BODY(mp_huge_counts, tc)
{
	static const struct {
		const char	*b;
		size_t		 len;
	} bad[] = {
		{ "\xdd\xff\xff\xff\xff", 5 },		/* array32 2^32-1 */
		{ "\xdd\xff\xff\xff\xff\xc0\xc0", 7 },
		{ "\xdc\xff\xff", 3 },			/* array16 */
		{ "\xdf\xff\xff\xff\xff", 5 },		/* map32 */
		{ "\xde\x00\x01\xc0", 4 },		/* map: value missing */
		{ "\x81\xc0", 2 },
		{ "\x91\xdd\x7f\xff\xff\xff", 6 },	/* nested */
		{ "\xdb\xff\xff\xff\xff", 5 },		/* str32 */
		{ "\xda\x00\x10" "abc", 6 },		/* str16 */
		{ "\xc6\xff\xff\xff\xff", 5 },		/* bin32 */
		{ "\xc4\x05" "abcd", 6 },		/* bin8 */
		{ "\xbf" "abc", 4 },			/* fixstr 31 */
		{ "\x9f", 1 },				/* fixarray 15 */
		{ "\xcf\x00\x00", 3 },			/* uint64 cut */
		{ "\xcb\x00", 2 },			/* float64 cut */
		{ "", 0 },
	};
	struct fenced_config c;
	struct mp_reader r;
	size_t		 i;
	uint64_t	 v;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ATF_REQUIRE_EQ_MSG(-1, mp_scan(bad[i].b, bad[i].len),
		    "case %zu", i);
		ATF_REQUIRE_EQ(EBADMSG, errno);
		ATF_REQUIRE_EQ(-1, mp_read_begin(&r, bad[i].b, bad[i].len,
		    1));
		ATF_REQUIRE_EQ(-1, mp_read_u64(&r, &v, 0, UINT64_MAX));
		ATF_REQUIRE_EQ(-1, mp_read_end(&r));
		ATF_REQUIRE_EQ(-1, msg_config_decode(bad[i].b, bad[i].len,
		    &c));
	}
	/* The same shapes, honest about their size, pass. */
	ATF_REQUIRE_EQ(0, mp_scan("\xdd\x00\x00\x00\x02\xc0\xc0", 7));
	ATF_REQUIRE_EQ(0, mp_scan("\xde\x00\x01\xc0\xc0", 5));
	ATF_REQUIRE_EQ(0, mp_scan("\xda\x00\x03" "abc", 6));
	ATF_REQUIRE_EQ(0, mp_scan("\xc4\x04" "abcd", 6));
	ATF_REQUIRE_EQ(0, mp_scan("\xcf\x00\x00\x00\x00\x00\x00\x00\x01",
	    9));
}

ATF_TC(mp_nesting);
ATF_TC_HEAD(mp_nesting, tc)
{
	atf_tc_set_md_var(tc, "descr", "Nesting is bounded at MP_DEPTH_MAX, "
	    "and the object count at MP_OBJECTS_MAX");
}
ATF_TC_BODY(mp_nesting, tc)
{
	unsigned char	*b;
	size_t		 i, n;

	ATF_REQUIRE((b = malloc(MP_OBJECTS_MAX + 16)) != NULL);
	for (n = 1; n <= MP_DEPTH_MAX + 1; n++) {
		memset(b, 0x91, n);	/* [[[...]]] */
		b[n] = 0x01;
		if (n <= MP_DEPTH_MAX)
			ATF_REQUIRE_EQ_MSG(0, mp_scan(b, n + 1), "depth %zu",
			    n);
		else
			ATF_REQUIRE_EQ(-1, mp_scan(b, n + 1));
	}
	memset(b, 0x91, 5000);
	b[5000] = 0x01;
	ATF_REQUIRE_EQ(-1, mp_scan(b, 5001));
	memset(b, 0x81, 5000);		/* {{{...}}}: maps nest too */
	ATF_REQUIRE_EQ(-1, mp_scan(b, 5001));

	/* One array header plus MP_OBJECTS_MAX - 1 nils: just fits. */
	n = MP_OBJECTS_MAX - 1;
	b[0] = 0xdd;
	b[1] = (unsigned char)(n >> 24);
	b[2] = (unsigned char)(n >> 16);
	b[3] = (unsigned char)(n >> 8);
	b[4] = (unsigned char)n;
	for (i = 0; i < n; i++)
		b[5 + i] = 0xc0;
	ATF_REQUIRE_EQ(0, mp_scan(b, 5 + n));
	ATF_REQUIRE_EQ(0, mp_ok(b, 5 + n, n));
	n++;
	b[4] = (unsigned char)n;
	b[3] = (unsigned char)(n >> 8);
	b[2] = (unsigned char)(n >> 16);
	b[5 + n - 1] = 0xc0;
	ATF_REQUIRE_EQ(-1, mp_scan(b, 5 + n));
	free(b);
}

ATF_TC(mp_reserved);
ATF_TC_HEAD(mp_reserved, tc)
{
	atf_tc_set_md_var(tc, "descr", "The never-used byte 0xc1 and every "
	    "ext type are refused wherever they appear");
}
ATF_TC_BODY(mp_reserved, tc)
{
	static const struct {
		const char	*b;
		size_t		 len;
	} bad[] = {
		{ "\xc1", 1 },
		{ "\x92\x01\xc1", 3 },
		{ "\xd4\x01\x00", 3 },			/* fixext 1 */
		{ "\xd5\x01\x00\x00", 4 },
		{ "\xd6\x01\x00\x00\x00\x00", 6 },
		{ "\xd7\x01\x00\x00\x00\x00\x00\x00\x00\x00", 10 },
		{ "\xd8\x01" "0123456789abcdef", 18 },
		{ "\xc7\x01\x01\x00", 4 },		/* ext 8 */
		{ "\xc8\x00\x01\x01\x00", 5 },
		{ "\xc9\x00\x00\x00\x01\x01\x00", 7 },
		{ "\xd6\xff\x00\x00\x00\x00", 6 },	/* timestamp */
	};
	size_t		 i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ATF_REQUIRE_EQ_MSG(-1, mp_scan(bad[i].b, bad[i].len),
		    "case %zu", i);
		ATF_REQUIRE_EQ(-1, mp_ok(bad[i].b, bad[i].len, 1));
	}
	/* Neighbours of 0xc1 are fine. */
	ATF_REQUIRE_EQ(0, mp_scan("\x93\xc0\xc2\xc3", 4));
}

/* [s] as a raw msgpack str, read back into dst. */
static int
str_one(const char *s, size_t len, char *dst, size_t dstsize)
{
	struct mp_writer w;
	struct mp_reader r;
	void		*buf;
	size_t		 blen;
	int		 a, b;

	mp_write_init(&w);
	mp_write_array(&w, 1);
	ATF_REQUIRE_EQ(0, msgpack_pack_str_with_body(&w.w_pk, s, len));
	ATF_REQUIRE_EQ(0, mp_write_finish(&w, &buf, &blen));
	ATF_REQUIRE_EQ(0, mp_read_begin(&r, buf, blen, 1));
	a = mp_read_str(&r, dst, dstsize);
	b = mp_read_end(&r);
	free(buf);
	return (a == 0 && b == 0 ? 0 : -1);
}

ATF_TC(mp_strings);
ATF_TC_HEAD(mp_strings, tc)
{
	atf_tc_set_md_var(tc, "descr", "mp_read_str refuses strings too "
	    "long for the field, with a NUL, or not UTF-8, and takes the "
	    "rest whole");
}
ATF_TC_BODY(mp_strings, tc)
{
	static const char *const good[] = {
		"", "plain", "caf\xc3\xa9", "\xe2\x82\xac", "\xed\x9f\xbf",
		"\xee\x80\x80", "\xf0\x90\x80\x80", "\xf4\x8f\xbf\xbf",
		"\xef\xbf\xbf", "tab\tand\nnewline",
	};
	static const char *const bad[] = {
		"\x80",			/* lone continuation */
		"\xbf",
		"\xc0\x80",		/* overlong NUL */
		"\xc1\xbf",		/* overlong */
		"\xc3",			/* cut */
		"\xc3" "a",
		"\xe0\x80\x80",		/* overlong */
		"\xe0\x9f\xbf",
		"\xed\xa0\x80",		/* surrogate */
		"\xed\xbf\xbf",
		"\xe2\x82",		/* cut */
		"\xf0\x80\x80\x80",	/* overlong */
		"\xf0\x8f\xbf\xbf",
		"\xf4\x90\x80\x80",	/* above U+10FFFF */
		"\xf5\x80\x80\x80",
		"\xf8\x88\x80\x80\x80",
		"\xfe", "\xff",
		"ok\xf0\x9f\x98",	/* cut at the end */
	};
	struct mp_writer w;
	struct mp_reader r;
	char		 dst[8];
	void		*buf;
	size_t		 len, i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		ATF_REQUIRE_MSG(mp_utf8_valid(good[i], strlen(good[i])),
		    "good %zu", i);
		mp_write_init(&w);
		mp_write_array(&w, 1);
		ATF_REQUIRE_EQ(0, mp_write_str(&w, good[i], 32));
		ATF_REQUIRE_EQ(0, mp_write_finish(&w, &buf, &len));
		ATF_REQUIRE_EQ(0, mp_read_begin(&r, buf, len, 1));
		if (strlen(good[i]) < sizeof(dst)) {
			ATF_REQUIRE_EQ(0, mp_read_str(&r, dst, sizeof(dst)));
			ATF_REQUIRE_STREQ(good[i], dst);
			ATF_REQUIRE_EQ(0, mp_read_end(&r));
		} else {
			ATF_REQUIRE_EQ(-1, mp_read_str(&r, dst, sizeof(dst)));
			ATF_REQUIRE_EQ(-1, mp_read_end(&r));
		}
		free(buf);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ATF_REQUIRE_MSG(!mp_utf8_valid(bad[i], strlen(bad[i])),
		    "bad %zu", i);
		/* The writer will not make it... */
		mp_write_init(&w);
		mp_write_array(&w, 1);
		ATF_REQUIRE_EQ(-1, mp_write_str(&w, bad[i], 32));
		ATF_REQUIRE_EQ(-1, mp_write_finish(&w, &buf, &len));
		/* ...and the reader will not take it from someone else. */
		mp_write_init(&w);
		mp_write_array(&w, 1);
		msgpack_pack_str_with_body(&w.w_pk, bad[i], strlen(bad[i]));
		ATF_REQUIRE_EQ(0, mp_write_finish(&w, &buf, &len));
		ATF_REQUIRE_EQ(0, mp_read_begin(&r, buf, len, 1));
		ATF_REQUIRE_EQ(-1, mp_read_str(&r, dst, sizeof(dst)));
		ATF_REQUIRE_EQ(EBADMSG, errno);
		ATF_REQUIRE_EQ(-1, mp_read_end(&r));
		free(buf);
	}

	/* Embedded NUL; and the length bound is exact. */
	ATF_REQUIRE_EQ(-1, str_one("a\0b", 3, dst, sizeof(dst)));
	ATF_REQUIRE_EQ(-1, str_one("\0", 1, dst, sizeof(dst)));
	ATF_REQUIRE_EQ(-1, str_one("abc\0", 4, dst, sizeof(dst)));
	ATF_REQUIRE_EQ(0, str_one("1234567", 7, dst, sizeof(dst)));
	ATF_REQUIRE_STREQ("1234567", dst);
	ATF_REQUIRE_EQ(-1, str_one("12345678", 8, dst, sizeof(dst)));
	ATF_REQUIRE_EQ(-1, str_one("", 0, dst, 0));

	/* The writer's bound: a string must end inside its field. */
	mp_write_init(&w);
	ATF_REQUIRE_EQ(-1, mp_write_str(&w, "12345678", 8));
	ATF_REQUIRE_EQ(-1, mp_write_finish(&w, &buf, &len));
}

/* Read the five scalars that open the mp_reader test's payload. */
static void
mp_skip5(struct mp_reader *r)
{
	const void	*p;
	size_t		 plen;
	uint64_t	 u;
	int64_t		 i;
	int		 bv;

	ATF_REQUIRE_EQ(0, mp_read_u64(r, &u, 0, UINT64_MAX));
	ATF_REQUIRE_EQ(0, mp_read_i64(r, &i, INT64_MIN, INT64_MAX));
	ATF_REQUIRE_EQ(0, mp_read_bool(r, &bv));
	ATF_REQUIRE_EQ(0, mp_read_nil(r));
	ATF_REQUIRE_EQ(0, mp_read_bin(r, &p, &plen, SIZE_MAX));
}

ATF_TC(mp_reader);
ATF_TC_HEAD(mp_reader, tc)
{
	atf_tc_set_md_var(tc, "descr", "The cursor: field counts, types, "
	    "ranges, nested arrays, bin, and the all-consumed check");
}
ATF_TC_BODY(mp_reader, tc)
{
	struct mp_writer w;
	struct mp_reader r;
	const void	*p;
	void		*buf;
	size_t		 len, n, plen;
	uint64_t	 u;
	int64_t		 i;
	int		 bv;

	mp_write_init(&w);
	mp_write_array(&w, 7);
	mp_write_u64(&w, 42);
	mp_write_i64(&w, -42);
	mp_write_bool(&w, 1);
	mp_write_nil(&w);
	mp_write_bin(&w, "\0\1\2", 3);
	mp_write_array(&w, 2);
	mp_write_u64(&w, 1);
	mp_write_u64(&w, 2);
	mp_write_array(&w, 0);
	ATF_REQUIRE_EQ(0, mp_write_finish(&w, &buf, &len));

	/* The whole shape, read right. */
	ATF_REQUIRE_EQ(0, mp_read_begin(&r, buf, len, 7));
	ATF_REQUIRE_EQ(0, mp_read_u64(&r, &u, 42, 42));
	ATF_REQUIRE_EQ(42, u);
	ATF_REQUIRE_EQ(0, mp_read_i64(&r, &i, -42, -42));
	ATF_REQUIRE_EQ(-42, i);
	ATF_REQUIRE_EQ(0, mp_read_bool(&r, &bv));
	ATF_REQUIRE_EQ(1, bv);
	ATF_REQUIRE_EQ(0, mp_read_nil(&r));
	ATF_REQUIRE_EQ(0, mp_read_bin(&r, &p, &plen, 3));
	ATF_REQUIRE_EQ(3, plen);
	ATF_REQUIRE(memcmp(p, "\0\1\2", 3) == 0);
	ATF_REQUIRE_EQ(0, mp_read_array(&r, &n, 2));
	ATF_REQUIRE_EQ(2, n);
	ATF_REQUIRE_EQ(0, mp_read_u64(&r, &u, 0, 9));
	ATF_REQUIRE_EQ(-1, mp_read_leave(&r));	/* one left */
	ATF_REQUIRE_EQ(-1, mp_read_end(&r));

	/* Range, type, count and leftovers, each on its own. */
	ATF_REQUIRE_EQ(-1, mp_ok(buf, len, 6));
	ATF_REQUIRE_EQ(-1, mp_ok(buf, len, 8));
	ATF_REQUIRE_EQ(-1, mp_read_begin(&r, buf, len, 8));
	ATF_REQUIRE_EQ(-1, mp_read_u64(&r, &u, 0, UINT64_MAX));
	ATF_REQUIRE_EQ(-1, mp_read_end(&r));

	ATF_REQUIRE_EQ(0, mp_read_begin(&r, buf, len, 7));
	ATF_REQUIRE_EQ(-1, mp_read_u64(&r, &u, 43, 100));
	/* Sticky: nothing reads after an error. */
	ATF_REQUIRE_EQ(-1, mp_read_i64(&r, &i, INT64_MIN, INT64_MAX));
	ATF_REQUIRE_EQ(-1, mp_read_end(&r));

	ATF_REQUIRE_EQ(0, mp_read_begin(&r, buf, len, 7));
	ATF_REQUIRE_EQ(0, mp_read_i64(&r, &i, 0, 42));	/* u as i */
	ATF_REQUIRE_EQ(-1, mp_read_u64(&r, &u, 0, UINT64_MAX)); /* -42 */
	ATF_REQUIRE_EQ(-1, mp_read_end(&r));

	ATF_REQUIRE_EQ(0, mp_read_begin(&r, buf, len, 7));
	ATF_REQUIRE_EQ(-1, mp_read_bool(&r, &bv));
	ATF_REQUIRE_EQ(-1, mp_read_end(&r));

	ATF_REQUIRE_EQ(0, mp_read_begin(&r, buf, len, 7));
	ATF_REQUIRE_EQ(0, mp_read_u64(&r, &u, 0, 100));
	ATF_REQUIRE_EQ(0, mp_read_i64(&r, &i, -100, 0));
	ATF_REQUIRE_EQ(0, mp_read_bool(&r, &bv));
	ATF_REQUIRE_EQ(0, mp_read_nil(&r));
	ATF_REQUIRE_EQ(-1, mp_read_bin(&r, &p, &plen, 2));	/* max */
	ATF_REQUIRE_EQ(-1, mp_read_end(&r));

	ATF_REQUIRE_EQ(0, mp_read_begin(&r, buf, len, 7));
	mp_skip5(&r);
	ATF_REQUIRE_EQ(-1, mp_read_array(&r, &n, 1));		/* max */
	ATF_REQUIRE_EQ(-1, mp_read_end(&r));

	ATF_REQUIRE_EQ(0, mp_read_begin(&r, buf, len, 7));
	mp_skip5(&r);
	ATF_REQUIRE_EQ(0, mp_read_array(&r, &n, 2));
	ATF_REQUIRE_EQ(0, mp_read_u64(&r, &u, 1, 1));
	ATF_REQUIRE_EQ(0, mp_read_u64(&r, &u, 2, 2));
	ATF_REQUIRE_EQ(-1, mp_read_u64(&r, &u, 0, 9));	/* past the end */
	ATF_REQUIRE_EQ(-1, mp_read_end(&r));

	ATF_REQUIRE_EQ(0, mp_read_begin(&r, buf, len, 7));
	mp_skip5(&r);
	ATF_REQUIRE_EQ(0, mp_read_array(&r, &n, 2));
	ATF_REQUIRE_EQ(0, mp_read_u64(&r, &u, 1, 1));
	ATF_REQUIRE_EQ(0, mp_read_u64(&r, &u, 2, 2));
	ATF_REQUIRE_EQ(0, mp_read_leave(&r));
	ATF_REQUIRE_EQ(-1, mp_read_leave(&r));		/* top level */
	ATF_REQUIRE_EQ(-1, mp_read_end(&r));

	ATF_REQUIRE_EQ(0, mp_read_begin(&r, buf, len, 7));
	mp_skip5(&r);
	ATF_REQUIRE_EQ(0, mp_read_array(&r, &n, 2));
	ATF_REQUIRE_EQ(0, mp_read_u64(&r, &u, 1, 1));
	ATF_REQUIRE_EQ(0, mp_read_u64(&r, &u, 2, 2));
	ATF_REQUIRE_EQ(0, mp_read_leave(&r));
	ATF_REQUIRE_EQ(0, mp_read_array(&r, &n, 0));
	ATF_REQUIRE_EQ(0, n);
	ATF_REQUIRE_EQ(0, mp_read_leave(&r));
	ATF_REQUIRE_EQ(0, mp_read_end(&r));
	/* A released reader reads nothing. */
	ATF_REQUIRE_EQ(-1, mp_read_u64(&r, &u, 0, UINT64_MAX));
	free(buf);

	/* Not an array at the top, or a map: refused. */
	ATF_REQUIRE_EQ(-1, mp_ok("\x01", 1, 1));
	ATF_REQUIRE_EQ(-1, mp_ok("\x81\x01\x02", 3, 1));
	ATF_REQUIRE_EQ(0, mp_ok("\x90", 1, 0));
	ATF_REQUIRE_EQ(0, mp_ok("\x91\x01", 2, 1));
	/* A float is not an integer. */
	mp_write_init(&w);
	mp_write_array(&w, 1);
	msgpack_pack_double(&w.w_pk, 1.0);
	ATF_REQUIRE_EQ(0, mp_write_finish(&w, &buf, &len));
	ATF_REQUIRE_EQ(0, mp_read_begin(&r, buf, len, 1));
	ATF_REQUIRE_EQ(-1, mp_read_u64(&r, &u, 0, UINT64_MAX));
	ATF_REQUIRE_EQ(-1, mp_read_end(&r));
	free(buf);
}

/*
 * Deterministic random damage to valid payloads: whatever the decoders
 * say, they must neither crash nor leak (the sanitizer run sees to it),
 * and a damaged payload they accept must still satisfy the bounds.
 */
ATF_TC(mp_mutations);
ATF_TC_HEAD(mp_mutations, tc)
{
	atf_tc_set_md_var(tc, "descr", "Bit flips, byte changes and cuts "
	    "of valid payloads never crash a decoder, nor pass bad values");
}
ATF_TC_BODY(mp_mutations, tc)
{
	struct fenced_config c;
	struct msg_procinfo pi;
	struct msg_error e;
	struct msg_stats st;
	void		*p[4];
	size_t		 len[4], k, n, pos;
	uint32_t	 seed = 0x5eed1234;
	unsigned char	 m[8192];
	int		 iter, accepted = 0;

	config_sample(&c);
	ATF_REQUIRE_EQ(0, msg_config_encode(&c, &p[0], &len[0]));
	memset(&pi, 0, sizeof(pi));
	pi.pi_pid[0] = 1;
	ATF_REQUIRE_EQ(0, msg_procinfo_encode(&pi, &p[1], &len[1]));
	memset(&e, 0, sizeof(e));
	strlcpy(e.e_code, "x", sizeof(e.e_code));
	strlcpy(e.e_message, "some text", sizeof(e.e_message));
	ATF_REQUIRE_EQ(0, msg_error_encode(&e, &p[2], &len[2]));
	stats_sample(&st);
	ATF_REQUIRE_EQ(0, msg_stats_encode(&st, &p[3], &len[3]));

	for (iter = 0; iter < 40000; iter++) {
		k = (size_t)iter % 4;
		ATF_REQUIRE(len[k] <= sizeof(m));
		memcpy(m, p[k], len[k]);
		n = len[k];
		seed = seed * 1103515245 + 12345;
		pos = (seed >> 8) % n;
		switch ((seed >> 4) % 3) {
		case 0:
			m[pos] ^= (unsigned char)(1u << ((seed >> 16) % 8));
			break;
		case 1:
			m[pos] = (unsigned char)(seed >> 20);
			break;
		case 2:
			n = pos;
			break;
		}
		switch (k) {
		case 0:
			if (msg_config_decode(m, n, &c) == 0) {
				accepted++;
				ATF_REQUIRE(c.c_fence_uid_lo > 0 &&
				    c.c_fence_uid_lo <= c.c_fence_uid_hi);
				ATF_REQUIRE(c.c_tier >= TIER_L1 &&
				    c.c_tier <= TIER_L2);
				ATF_REQUIRE(c.c_limits.fl_memory >= MEMORY_MIN);
				ATF_REQUIRE(c.c_exec_output <=
				    c.c_exec_output_max);
			}
			break;
		case 1:
			if (msg_procinfo_decode(m, n, &pi) == 0)
				ATF_REQUIRE(pi.pi_pid[0] >= 0 &&
				    pi.pi_pid[3] >= 0 && pi.pi_started >= 0);
			break;
		case 2:
			if (msg_error_decode(m, n, &e) == 0)
				ATF_REQUIRE(mp_utf8_valid(e.e_message,
				    strlen(e.e_message)));
			break;
		case 3:
			if (msg_stats_decode(m, n, &st) == 0)
				ATF_REQUIRE(st.st_verbose >= 0);
			break;
		}
	}
	/* Some flips land in a string or a wide range and are accepted. */
	ATF_REQUIRE(accepted > 0);
	for (k = 0; k < 4; k++)
		free(p[k]);
}

/*
 * Named host tokens and origins: the shapes every process checks.
 */
ATF_TC(token_codecs);
ATF_TC_HEAD(token_codecs, tc)
{
	atf_tc_set_md_var(tc, "descr", "msg_token keeps its name and time, "
	    "a deletion carries no hash and a store one; msg_ctltoken and "
	    "msg_tokeninfo refuse a bad name; names are [A-Za-z0-9._-]{1,32}");
}
ATF_TC_BODY(token_codecs, tc)
{
	struct msg_token	 a, b;
	struct msg_ctltoken	 ca, cb;
	struct msg_tokeninfo	 ta, tb;
	void			*buf;
	size_t			 len;

	memset(&a, 0, sizeof(a));
	a.tk_uid = 1000;
	strlcpy(a.tk_name, "voice.box_UI-2", sizeof(a.tk_name));
	a.tk_created = 1796231067;
	memset(a.tk_hash, 0x5a, sizeof(a.tk_hash));
	ATF_REQUIRE_EQ(0, msg_token_encode(&a, &buf, &len));
	ATF_REQUIRE_EQ(0, msg_token_decode(buf, len, &b));
	free(buf);
	ATF_CHECK(memcmp(&a, &b, sizeof(a)) == 0);
	a.tk_delete = 1;		/* a deletion with a hash */
	ATF_CHECK_EQ(-1, msg_token_encode(&a, &buf, &len));
	memset(a.tk_hash, 0, sizeof(a.tk_hash));
	ATF_REQUIRE_EQ(0, msg_token_encode(&a, &buf, &len));
	free(buf);
	a.tk_delete = 0;		/* a store without one */
	ATF_CHECK_EQ(-1, msg_token_encode(&a, &buf, &len));
	memset(a.tk_hash, 1, sizeof(a.tk_hash));
	a.tk_name[0] = '\0';
	ATF_CHECK_EQ(-1, msg_token_encode(&a, &buf, &len));

	ATF_CHECK(hosttoken_name_valid("default"));
	ATF_CHECK(hosttoken_name_valid("a"));
	ATF_CHECK(hosttoken_name_valid("12345678901234567890123456789012"));
	ATF_CHECK(!hosttoken_name_valid("123456789012345678901234567890123"));
	ATF_CHECK(!hosttoken_name_valid(""));
	ATF_CHECK(!hosttoken_name_valid("a b"));
	ATF_CHECK(!hosttoken_name_valid("a/b"));
	ATF_CHECK(!hosttoken_name_valid("-r"));
	ATF_CHECK(!hosttoken_name_valid("a\n"));

	memset(&ca, 0, sizeof(ca));
	ca.ct_op = CTLTOKEN_DELETE;
	strlcpy(ca.ct_name, "cli", sizeof(ca.ct_name));
	ATF_REQUIRE_EQ(0, msg_ctltoken_encode(&ca, &buf, &len));
	ATF_REQUIRE_EQ(0, msg_ctltoken_decode(buf, len, &cb));
	free(buf);
	ATF_CHECK(memcmp(&ca, &cb, sizeof(ca)) == 0);
	ca.ct_op = CTLTOKEN_DELETE + 1;
	ATF_CHECK_EQ(-1, msg_ctltoken_encode(&ca, &buf, &len));
	ca.ct_op = CTLTOKEN_MINT;
	strlcpy(ca.ct_name, "no;way", sizeof(ca.ct_name));
	ATF_CHECK_EQ(-1, msg_ctltoken_encode(&ca, &buf, &len));

	memset(&ta, 0, sizeof(ta));
	strlcpy(ta.ti_name, "default", sizeof(ta.ti_name));
	ta.ti_created = 42;
	ATF_REQUIRE_EQ(0, msg_tokeninfo_encode(&ta, &buf, &len));
	ATF_REQUIRE_EQ(0, msg_tokeninfo_decode(buf, len, &tb));
	free(buf);
	ATF_CHECK_STREQ(tb.ti_name, "default");
	ATF_CHECK_EQ(tb.ti_created, 42);
}

ATF_TC(origins);
ATF_TC_HEAD(origins, tc)
{
	atf_tc_set_md_var(tc, "descr", "http_origin_valid() takes "
	    "scheme://host[:port] as a browser sends it and nothing else");
}
ATF_TC_BODY(origins, tc)
{
	const char	*good[] = { "http://localhost:5173",
	    "http://127.0.0.1:8080", "https://ui.example.org",
	    "http://[::1]:5173", "http://a-b.c", "https://x:80" };
	const char	*bad[] = { "", "localhost:5173", "ftp://x",
	    "http://", "http://localhost:5173/", "http://localhost:5173/x",
	    "http://Localhost:5173", "http://localhost.:5173",
	    "http://localhost:80", "https://x:443", "http://x:0",
	    "http://x:65536", "http://x:05173", "http://x:", "null",
	    "http://u@x", "http://x y", "http://-x", "http://x-",
	    "http://a..b", "http://[::1", "http://[::1]x", "http://[zz]",
	    "http://localhost:5173?", "http://localhost#",
	    "http://xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" };
	size_t		 i;

	for (i = 0; i < nitems(good); i++)
		ATF_CHECK_MSG(http_origin_valid(good[i]), "%s", good[i]);
	for (i = 0; i < nitems(bad); i++)
		ATF_CHECK_MSG(!http_origin_valid(bad[i]), "%s", bad[i]);
}

/* The probe report's expectations of an L2 fence with an egress list. */
static void
egress_expect(struct probe_expect *e)
{
	memset(e, 0, sizeof(*e));
	e->pe_tier = TIER_L2;
	e->pe_backend = BACKEND_NATIVE;
	e->pe_traits = fencer_backend(BACKEND_NATIVE)->fb_probe;
	e->pe_negress = 2;
	strlcpy(e->pe_egress[0], "*.api.example:443", sizeof(e->pe_egress[0]));
	strlcpy(e->pe_egress[1], "ok.example:443", sizeof(e->pe_egress[1]));
	strlcpy(e->pe_egress_allowed, "ok.example:443",
	    sizeof(e->pe_egress_allowed));
	strlcpy(e->pe_egress_refused, "aa.bb.example:443",
	    sizeof(e->pe_egress_refused));
}

/* Where the n bytes of s first are in buf, or NULL. */
static uint8_t *
find_bytes(void *buf, size_t len, const char *s)
{
	return (memmem(buf, len, s, strlen(s)));
}

ATF_TC(probe_report_traits);
ATF_TC_HEAD(probe_report_traits, tc)
{
	atf_tc_set_md_var(tc, "descr", "IMSG_PROBE_REPORT carries what each "
	    "backend's entry declares of its fences whole; both ends refuse "
	    "a kernel out of range, a flag not 0 or 1 and a home not "
	    "printable or not terminated");
}
ATF_TC_BODY(probe_report_traits, tc)
{
	static const int backends[] = { BACKEND_NATIVE, BACKEND_RUNSC,
	    BACKEND_VM };
	struct probe_expect	 e, bad;
	struct msg_probe_report	 p, q;
	void			*buf;
	uint8_t			*at;
	size_t			 len, i;

	memset(&p, 0, sizeof(p));
	strlcpy(p.pr_key, "k1", sizeof(p.pr_key));
	for (i = 0; i < nitems(backends); i++) {
		memset(&e, 0, sizeof(e));
		e.pe_tier = TIER_L15;
		e.pe_backend = backends[i];
		e.pe_traits = fencer_backend(backends[i])->fb_probe;
		p.pr_expect = &e;
		ATF_REQUIRE_EQ(0, msg_probe_report_encode(&p, &buf, &len));
		ATF_REQUIRE_EQ(0, msg_probe_report_decode(buf, len, &q));
		ATF_CHECK(memcmp(&q.pr_expect->pe_traits, &e.pe_traits,
		    sizeof(e.pe_traits)) == 0);
		msg_probe_report_free(&q);
		free(buf);
	}

	/*
	 * The vm's on the wire, back from its home: the home's str8
	 * header, egress, net_own, files_apart, procs_apart, kernel 2.
	 */
	memset(&e, 0, sizeof(e));
	e.pe_tier = TIER_L15;
	e.pe_backend = BACKEND_VM;
	e.pe_traits = fencer_backend(BACKEND_VM)->fb_probe;
	p.pr_expect = &e;
	ATF_REQUIRE_EQ(0, msg_probe_report_encode(&p, &buf, &len));
	ATF_REQUIRE((at = find_bytes(buf, len, e.pe_traits.pt_home)) != NULL);
	ATF_REQUIRE_EQ(at[-7], 0x02);
	ATF_REQUIRE_EQ(at[-5], 0xc2);
	at[-7] = PROBE_KERNEL_MAX;
	ATF_CHECK_EQ(-1, msg_probe_report_decode(buf, len, &q));
	at[-7] = 0x02;
	at[-5] = 0x02;		/* a flag as a number */
	ATF_CHECK_EQ(-1, msg_probe_report_decode(buf, len, &q));
	at[-5] = 0xc2;
	at[0] = 0x01;		/* a control character in the home */
	ATF_CHECK_EQ(-1, msg_probe_report_decode(buf, len, &q));
	at[0] = 'v';
	ATF_REQUIRE_EQ(0, msg_probe_report_decode(buf, len, &q));
	msg_probe_report_free(&q);
	free(buf);

	/* The layer inside, a vm fence's: it travels whole. */
	e.pe_traits.pt_inner = PROBE_KERNEL_USER;
	p.pr_expect = &e;
	ATF_REQUIRE_EQ(0, msg_probe_report_encode(&p, &buf, &len));
	ATF_REQUIRE_EQ(0, msg_probe_report_decode(buf, len, &q));
	ATF_CHECK_EQ(PROBE_KERNEL_USER, q.pr_expect->pe_traits.pt_inner);
	msg_probe_report_free(&q);
	free(buf);
	e.pe_traits.pt_inner = PROBE_KERNEL_HOST;

	p.pr_expect = &bad;
	for (i = 0; i < 10; i++) {
		bad = e;
		switch (i) {
		case 0:
			bad.pe_traits.pt_kernel = PROBE_KERNEL_MAX;
			break;
		case 1:
			bad.pe_traits.pt_kernel = -1;
			break;
		case 2:
			bad.pe_traits.pt_procs_apart = 2;
			break;
		case 3:
			bad.pe_traits.pt_files_apart = -1;
			break;
		case 4:
			bad.pe_traits.pt_net_own = 2;
			break;
		case 5:
			bad.pe_traits.pt_egress = 2;
			break;
		case 6:
			bad.pe_traits.pt_home[3] = '\n';
			break;
		case 7:
			memset(bad.pe_traits.pt_home, 'a',
			    sizeof(bad.pe_traits.pt_home));
			break;
		case 8:		/* a guest inside a guest */
			bad.pe_traits.pt_inner = PROBE_KERNEL_GUEST;
			break;
		case 9:		/* a layer inside the host's own kernel */
			bad.pe_traits.pt_kernel = PROBE_KERNEL_HOST;
			bad.pe_traits.pt_inner = PROBE_KERNEL_USER;
			break;
		}
		ATF_CHECK_EQ_MSG(-1, msg_probe_report_encode(&p, &buf, &len),
		    "case %zu", i);
	}
}

ATF_TC(probe_report_egress);
ATF_TC_HEAD(probe_report_egress, tc)
{
	atf_tc_set_md_var(tc, "descr", "IMSG_PROBE_REPORT carries the "
	    "fence's egress list and the probe's two targets whole; both ends "
	    "refuse an entry not canonical, a wildcard target, a list "
	    "outside an L2 native fence, targets without a list and a list "
	    "without a refused target");
}
ATF_TC_BODY(probe_report_egress, tc)
{
	struct probe_expect	 e, bad;
	struct msg_probe_report	 p, q;
	void			*buf;
	uint8_t			*at;
	size_t			 len, i;

	egress_expect(&e);
	memset(&p, 0, sizeof(p));
	strlcpy(p.pr_key, "k1", sizeof(p.pr_key));
	p.pr_expect = &e;
	ATF_REQUIRE_EQ(0, msg_probe_report_encode(&p, &buf, &len));
	ATF_REQUIRE_EQ(0, msg_probe_report_decode(buf, len, &q));
	ATF_CHECK_EQ(q.pr_expect->pe_negress, 2);
	ATF_CHECK_STREQ(q.pr_expect->pe_egress[0], "*.api.example:443");
	ATF_CHECK_STREQ(q.pr_expect->pe_egress[1], "ok.example:443");
	ATF_CHECK_STREQ(q.pr_expect->pe_egress_allowed, "ok.example:443");
	ATF_CHECK_STREQ(q.pr_expect->pe_egress_refused, "aa.bb.example:443");
	ATF_CHECK(memcmp(q.pr_expect, &e, sizeof(e)) == 0);
	msg_probe_report_free(&q);

	/* The decoder holds the bytes to the same rules. */
	ATF_REQUIRE((at = find_bytes(buf, len, "ok.example:443")) != NULL);
	at[0] = 'O';		/* the list's entry, not canonical */
	ATF_CHECK_EQ(-1, msg_probe_report_decode(buf, len, &q));
	at[0] = 'o';
	ATF_REQUIRE((at = find_bytes(buf, len, "aa.bb.example:443")) != NULL);
	memcpy(at, "*.abb", 5);	/* the refused target a wildcard */
	ATF_CHECK_EQ(-1, msg_probe_report_decode(buf, len, &q));
	memcpy(at, "aa.bb", 5);
	ATF_REQUIRE_EQ(0, msg_probe_report_decode(buf, len, &q));
	msg_probe_report_free(&q);
	free(buf);

	/* An L1.5 fence without a list still goes through. */
	memset(&bad, 0, sizeof(bad));
	bad.pe_tier = TIER_L15;
	bad.pe_backend = BACKEND_NATIVE;
	p.pr_expect = &bad;
	ATF_REQUIRE_EQ(0, msg_probe_report_encode(&p, &buf, &len));
	free(buf);

	p.pr_expect = &bad;
	for (i = 0; i < 10; i++) {
		egress_expect(&bad);
		switch (i) {
		case 0:
			strlcpy(bad.pe_egress[1], "OK.example:443",
			    sizeof(bad.pe_egress[1]));
			break;
		case 1:
			strlcpy(bad.pe_egress[1], "10.0.0.1:443",
			    sizeof(bad.pe_egress[1]));
			break;
		case 2:
			bad.pe_negress = EGRESS_LIST_MAX + 1;
			break;
		case 3:
			strlcpy(bad.pe_egress_allowed, "*.api.example:443",
			    sizeof(bad.pe_egress_allowed));
			break;
		case 4:
			strlcpy(bad.pe_egress_refused, "x.example:0",
			    sizeof(bad.pe_egress_refused));
			break;
		case 5:
			bad.pe_egress_refused[0] = '\0';
			break;
		case 6:
			bad.pe_tier = TIER_L15;
			break;
		case 7:
			bad.pe_backend = BACKEND_RUNSC;
			bad.pe_traits = fencer_backend(BACKEND_RUNSC)->fb_probe;
			break;
		case 8:
			bad.pe_negress = 0;	/* targets without a list */
			break;
		case 9:
			memset(bad.pe_egress_allowed, 'a',
			    sizeof(bad.pe_egress_allowed));
			break;
		}
		ATF_CHECK_EQ_MSG(-1, msg_probe_report_encode(&p, &buf, &len),
		    "case %zu", i);
	}
	/* No target on the list (none exact): only the refused one. */
	egress_expect(&bad);
	bad.pe_egress_allowed[0] = '\0';
	ATF_REQUIRE_EQ(0, msg_probe_report_encode(&p, &buf, &len));
	ATF_REQUIRE_EQ(0, msg_probe_report_decode(buf, len, &q));
	ATF_CHECK_STREQ(q.pr_expect->pe_egress_allowed, "");
	msg_probe_report_free(&q);
	free(buf);
}

/*
 * A verdict as the prober would send it, raw: naxes axes (each a pair,
 * or three strings with triple), nviol violations of vlen bytes, the
 * release as given.
 */
static void
verdict_pack(size_t naxes, int triple, size_t nviol, size_t vlen,
    const char *release, void **buf, size_t *len)
{
	struct mp_writer w;
	char		 viol[512];
	size_t		 i;

	ATF_REQUIRE(vlen < sizeof(viol));
	memset(viol, 'v', vlen);
	viol[vlen] = '\0';
	mp_write_init(&w);
	mp_write_array(&w, 8);
	mp_write_str(&w, "work", FENCE_KEY_SIZE);
	mp_write_u64(&w, LEVEL_L1);
	mp_write_str(&w, "{}", 3);
	mp_write_u64(&w, MSG_KERNEL_SHARED);
	ATF_REQUIRE_EQ(0, msgpack_pack_str_with_body(&w.w_pk, release,
	    strlen(release)));
	mp_write_array(&w, naxes);
	for (i = 0; i < naxes; i++) {
		mp_write_array(&w, triple ? 3 : 2);
		mp_write_str(&w, "kernel", 16);
		mp_write_str(&w, "shared", 16);
		if (triple)
			mp_write_str(&w, "more", 16);
	}
	mp_write_array(&w, nviol);
	for (i = 0; i < nviol; i++)
		mp_write_str(&w, viol, sizeof(viol));
	mp_write_str(&w, "fenced, the host's kernel: none reachable",
	    MSG_SURFACE_LEN);
	ATF_REQUIRE_EQ(0, mp_write_finish(&w, buf, len));
}

ATF_TC(verdict_typed);
ATF_TC_HEAD(verdict_typed, tc)
{
	atf_tc_set_md_var(tc, "descr", "a verdict's typed kernel, axes and "
	    "violations round-trip, and the codec holds them to their "
	    "counts, lengths and printable ASCII both ways");
}
ATF_TC_BODY(verdict_typed, tc)
{
	static struct msg_verdict a, b;
	void		*buf;
	size_t		 len;
	uint32_t	 i;

	memset(&a, 0, sizeof(a));
	strlcpy(a.v_key, "work", sizeof(a.v_key));
	a.v_level = LEVEL_L15;
	a.v_json = "{\"level\":\"L1.5\"}";
	a.v_kernel = MSG_KERNEL_SEPARATE;
	strlcpy(a.v_kernel_release, "4.4.0", sizeof(a.v_kernel_release));
	a.v_naxes = MSG_VERDICT_AXES_MAX;
	for (i = 0; i < a.v_naxes; i++) {
		snprintf(a.v_axes[i].va_name, sizeof(a.v_axes[i].va_name),
		    "axis%u", i);
		strlcpy(a.v_axes[i].va_verdict, "not measured",
		    sizeof(a.v_axes[i].va_verdict));
	}
	a.v_nviolations = MSG_VERDICT_VIOLATIONS_MAX;
	for (i = 0; i < a.v_nviolations; i++)
		memset(a.v_violations[i], 'a' + i % 26,
		    MSG_VERDICT_VIOLATION_LEN - 1);
	a.v_violations[3][0] = '\0';		/* an empty one is a string */
	memset(a.v_surface, 's', sizeof(a.v_surface) - 1);
	ATF_REQUIRE_EQ(0, msg_verdict_encode(&a, &buf, &len));
	ATF_REQUIRE_EQ(0, msg_verdict_decode(buf, len, &b));
	free(buf);
	ATF_REQUIRE_STREQ(b.v_surface, a.v_surface);
	ATF_REQUIRE_STREQ(b.v_json, a.v_json);
	ATF_REQUIRE_EQ(b.v_kernel, MSG_KERNEL_SEPARATE);
	ATF_REQUIRE_STREQ(b.v_kernel_release, "4.4.0");
	ATF_REQUIRE_EQ(b.v_naxes, MSG_VERDICT_AXES_MAX);
	ATF_REQUIRE_STREQ(b.v_axes[7].va_name, "axis7");
	ATF_REQUIRE_EQ(b.v_nviolations, MSG_VERDICT_VIOLATIONS_MAX);
	for (i = 0; i < a.v_nviolations; i++)
		ATF_REQUIRE_STREQ(b.v_violations[i], a.v_violations[i]);
	msg_verdict_free(&b);

	/* The encoder refuses what the decoder would. */
	a.v_naxes = MSG_VERDICT_AXES_MAX + 1;
	ATF_REQUIRE_EQ(-1, msg_verdict_encode(&a, &buf, &len));
	a.v_naxes = 1;
	a.v_nviolations = MSG_VERDICT_VIOLATIONS_MAX + 1;
	ATF_REQUIRE_EQ(-1, msg_verdict_encode(&a, &buf, &len));
	a.v_nviolations = 1;
	a.v_kernel = MSG_KERNEL_SEPARATE + 1;
	ATF_REQUIRE_EQ(-1, msg_verdict_encode(&a, &buf, &len));
	a.v_kernel = MSG_KERNEL_SHARED;
	strlcpy(a.v_kernel_release, "6.1\x1b[31m", sizeof(a.v_kernel_release));
	ATF_REQUIRE_EQ(-1, msg_verdict_encode(&a, &buf, &len));
	strlcpy(a.v_kernel_release, "6.1", sizeof(a.v_kernel_release));
	a.v_axes[0].va_name[0] = '\0';
	ATF_REQUIRE_EQ(-1, msg_verdict_encode(&a, &buf, &len));
	strlcpy(a.v_axes[0].va_name, "kernel", sizeof(a.v_axes[0].va_name));
	a.v_violations[0][0] = '\t';
	ATF_REQUIRE_EQ(-1, msg_verdict_encode(&a, &buf, &len));
	a.v_violations[0][0] = 'a';
	a.v_surface[0] = '\x7f';
	ATF_REQUIRE_EQ(-1, msg_verdict_encode(&a, &buf, &len));
	a.v_surface[0] = 's';
	ATF_REQUIRE_EQ(0, msg_verdict_encode(&a, &buf, &len));
	free(buf);

	/* What a prober of ours would send decodes; beyond it, nothing. */
	verdict_pack(5, 0, 80, MSG_VERDICT_VIOLATION_LEN - 1, "6.1.0", &buf,
	    &len);
	ATF_REQUIRE_EQ(0, msg_verdict_decode(buf, len, &b));
	msg_verdict_free(&b);
	free(buf);
	verdict_pack(MSG_VERDICT_AXES_MAX + 1, 0, 0, 0, "6.1.0", &buf, &len);
	ATF_REQUIRE_EQ(-1, msg_verdict_decode(buf, len, &b));
	free(buf);
	verdict_pack(1, 1, 0, 0, "6.1.0", &buf, &len);
	ATF_REQUIRE_EQ(-1, msg_verdict_decode(buf, len, &b));
	free(buf);
	verdict_pack(1, 0, MSG_VERDICT_VIOLATIONS_MAX + 1, 1, "6.1.0", &buf,
	    &len);
	ATF_REQUIRE_EQ(-1, msg_verdict_decode(buf, len, &b));
	free(buf);
	verdict_pack(1, 0, 1, MSG_VERDICT_VIOLATION_LEN, "6.1.0", &buf, &len);
	ATF_REQUIRE_EQ(-1, msg_verdict_decode(buf, len, &b));
	free(buf);
	verdict_pack(1, 0, 1, 1, "6.1\x07", &buf, &len);
	ATF_REQUIRE_EQ(-1, msg_verdict_decode(buf, len, &b));
	free(buf);
}

ATF_TC(snap_codec);
ATF_TC_HEAD(snap_codec, tc)
{
	atf_tc_set_md_var(tc, "descr", "snapshot requests and answers "
	    "round-trip; a bad op, key or name, a name where none goes or "
	    "none where one must, and a bad answer are refused both ways");
}
ATF_TC_BODY(snap_codec, tc)
{
	struct msg_snap	 q, r;
	struct msg_snap_info i, j;
	void		*buf;
	size_t		 len;
	int		 op;

	memset(&q, 0, sizeof(q));
	strlcpy(q.s_key, "src", sizeof(q.s_key));
	strlcpy(q.s_name, "s1", sizeof(q.s_name));
	q.s_owner = MSG_OWNER_NONE;
	q.s_uid = 1000;
	q.s_op = SNAP_RESTORE;
	ATF_REQUIRE_EQ(0, msg_snap_encode(&q, &buf, &len));
	memset(&r, 0xa5, sizeof(r));
	ATF_REQUIRE_EQ(0, msg_snap_decode(buf, len, &r));
	ATF_REQUIRE(memcmp(&q, &r, sizeof(q)) == 0);
	free(buf);
	/* A listing of all needs no key; nothing else goes without. */
	q.s_key[0] = '\0';
	q.s_name[0] = '\0';
	q.s_op = SNAP_LIST;
	ATF_REQUIRE_EQ(0, msg_snap_encode(&q, &buf, &len));
	free(buf);
	for (op = SNAP_CREATE; op <= SNAP_OP_MAX; op++) {
		if (op == SNAP_LIST)
			continue;
		q.s_op = op;
		ATF_REQUIRE_EQ(-1, msg_snap_encode(&q, &buf, &len));
	}
	strlcpy(q.s_key, "src", sizeof(q.s_key));
	/* Delete and restore name one; undo and its mark none. */
	q.s_op = SNAP_DELETE;
	ATF_REQUIRE_EQ(-1, msg_snap_encode(&q, &buf, &len));
	q.s_op = SNAP_UNDO;
	strlcpy(q.s_name, "x", sizeof(q.s_name));
	ATF_REQUIRE_EQ(-1, msg_snap_encode(&q, &buf, &len));
	q.s_op = SNAP_UNDO_MARK;
	ATF_REQUIRE_EQ(-1, msg_snap_encode(&q, &buf, &len));
	q.s_op = SNAP_CREATE;
	strlcpy(q.s_name, "../x", sizeof(q.s_name));
	ATF_REQUIRE_EQ(-1, msg_snap_encode(&q, &buf, &len));
	strlcpy(q.s_name, ".undo", sizeof(q.s_name));
	ATF_REQUIRE_EQ(-1, msg_snap_encode(&q, &buf, &len));
	strlcpy(q.s_name, "ok", sizeof(q.s_name));
	q.s_op = 0;
	ATF_REQUIRE_EQ(-1, msg_snap_encode(&q, &buf, &len));
	q.s_op = SNAP_OP_MAX + 1;
	ATF_REQUIRE_EQ(-1, msg_snap_encode(&q, &buf, &len));

	memset(&i, 0, sizeof(i));
	strlcpy(i.sn_key, "src", sizeof(i.sn_key));
	strlcpy(i.sn_name, "s1", sizeof(i.sn_name));
	i.sn_owner = 1000;
	i.sn_uid = 61000;
	i.sn_created = 1796597124;
	i.sn_bytes = UINT64_MAX;
	i.sn_files = 5;
	i.sn_disk = 20480;
	i.sn_shared = 7;
	i.sn_branches = 3;
	i.sn_us = 8773;
	i.sn_frozen = 1;
	strlcpy(i.sn_how, "reflink", sizeof(i.sn_how));
	ATF_REQUIRE_EQ(0, msg_snap_info_encode(&i, &buf, &len));
	memset(&j, 0xa5, sizeof(j));
	ATF_REQUIRE_EQ(0, msg_snap_info_decode(buf, len, &j));
	ATF_REQUIRE(memcmp(&i, &j, sizeof(i)) == 0);
	free(buf);
	i.sn_key[0] = '\0';
	ATF_REQUIRE_EQ(-1, msg_snap_info_encode(&i, &buf, &len));
	strlcpy(i.sn_key, "src", sizeof(i.sn_key));
	strlcpy(i.sn_how, "a\nb", sizeof(i.sn_how));
	ATF_REQUIRE_EQ(-1, msg_snap_info_encode(&i, &buf, &len));
	strlcpy(i.sn_how, "copy", sizeof(i.sn_how));
	i.sn_frozen = 2;
	ATF_REQUIRE_EQ(-1, msg_snap_info_encode(&i, &buf, &len));
}

ATF_TC(check_codec);
ATF_TC_HEAD(check_codec, tc)
{
	atf_tc_set_md_var(tc, "descr", "a row of the host doctor "
	    "round-trips; a bad kind, status, name or text, a default that "
	    "is no tier's, and a failure with no reason are refused both "
	    "ways");
}
ATF_TC_BODY(check_codec, tc)
{
	struct msg_check c, d;
	void		*buf;
	size_t		 len;

	memset(&c, 0, sizeof(c));
	c.hc_kind = CHECK_TIER;
	strlcpy(c.hc_name, "L1.5", sizeof(c.hc_name));
	c.hc_status = CHECK_FAIL;
	c.hc_default = 1;
	strlcpy(c.hc_reason, "tier L1.5, backend native: no-cgroups: x",
	    sizeof(c.hc_reason));
	strlcpy(c.hc_fix, "let fenced make cgroups", sizeof(c.hc_fix));
	memset(c.hc_detail, 'd', sizeof(c.hc_detail) - 1);
	ATF_REQUIRE_EQ(0, msg_check_encode(&c, &buf, &len));
	memset(&d, 0xa5, sizeof(d));
	ATF_REQUIRE_EQ(0, msg_check_decode(buf, len, &d));
	ATF_REQUIRE(memcmp(&c, &d, sizeof(c)) == 0);
	free(buf);
	d = c;
	d.hc_kind = 0;
	ATF_REQUIRE_EQ(-1, msg_check_encode(&d, &buf, &len));
	d.hc_kind = CHECK_KIND_MAX + 1;
	ATF_REQUIRE_EQ(-1, msg_check_encode(&d, &buf, &len));
	d = c;
	d.hc_status = CHECK_STATUS_MAX + 1;
	ATF_REQUIRE_EQ(-1, msg_check_encode(&d, &buf, &len));
	d.hc_status = -1;
	ATF_REQUIRE_EQ(-1, msg_check_encode(&d, &buf, &len));
	d = c;
	d.hc_kind = CHECK_HOST;		/* the default is a tier's row */
	ATF_REQUIRE_EQ(-1, msg_check_encode(&d, &buf, &len));
	d = c;
	d.hc_default = 2;
	ATF_REQUIRE_EQ(-1, msg_check_encode(&d, &buf, &len));
	d = c;
	d.hc_name[0] = '\0';
	ATF_REQUIRE_EQ(-1, msg_check_encode(&d, &buf, &len));
	strlcpy(d.hc_name, "a b", sizeof(d.hc_name));
	ATF_REQUIRE_EQ(-1, msg_check_encode(&d, &buf, &len));
	strlcpy(d.hc_name, "../x", sizeof(d.hc_name));
	ATF_REQUIRE_EQ(-1, msg_check_encode(&d, &buf, &len));
	d = c;
	strlcpy(d.hc_reason, "a\nb", sizeof(d.hc_reason));
	ATF_REQUIRE_EQ(-1, msg_check_encode(&d, &buf, &len));
	d = c;
	d.hc_fix[3] = '\033';
	ATF_REQUIRE_EQ(-1, msg_check_encode(&d, &buf, &len));
	d = c;
	d.hc_detail[5] = (char)0xc3;
	ATF_REQUIRE_EQ(-1, msg_check_encode(&d, &buf, &len));
	d = c;
	d.hc_reason[0] = '\0';		/* a failure says why */
	ATF_REQUIRE_EQ(-1, msg_check_encode(&d, &buf, &len));
	d.hc_status = CHECK_OK;
	ATF_REQUIRE_EQ(0, msg_check_encode(&d, &buf, &len));
	free(buf);
	/* A cut payload is refused. */
	d = c;
	d.hc_kind = CHECK_HOST;
	d.hc_default = 0;
	ATF_REQUIRE_EQ(0, msg_check_encode(&d, &buf, &len));
	ATF_REQUIRE_EQ(-1, msg_check_decode(buf, len - 1, &d));
	free(buf);
}

/*
 * The inner boundary (docs/vm.md): a boot's b_inner, the last field of
 * its codec, none, runsc or the configured default, nothing else; a
 * state's f_inner 0 or 1.
 */
ATF_TC_WITHOUT_HEAD(inner);
ATF_TC_BODY(inner, tc)
{
	struct msg_boot	 b, bb;
	struct msg_fence f, fb;
	void		*buf;
	size_t		 len;
	int		 v;

	ATF_CHECK_EQ(INNER_RUNSC, inner_parse("runsc"));
	ATF_CHECK_EQ(INNER_NONE, inner_parse("none"));
	ATF_CHECK_EQ(-1, inner_parse("gvisor"));
	ATF_CHECK_EQ(-1, inner_parse(""));
	for (v = INNER_CONFIGURED; v <= INNER_RUNSC; v++) {
		memset(&b, 0, sizeof(b));
		strlcpy(b.b_key, "in", sizeof(b.b_key));
		b.b_inner = v;
		ATF_REQUIRE_EQ(0, msg_boot_encode(&b, &buf, &len));
		memset(&bb, 0xff, sizeof(bb));
		ATF_REQUIRE_EQ(0, msg_boot_decode(buf, len, &bb));
		ATF_CHECK_EQ(v, bb.b_inner);
		/* The last field: a boot cut short of it is refused. */
		ATF_CHECK(msg_boot_decode(buf, len - 1, &bb) == -1);
		free(buf);
	}
	b.b_inner = INNER_RUNSC + 1;
	ATF_CHECK(msg_boot_encode(&b, &buf, &len) == -1);
	b.b_inner = -1;
	ATF_CHECK(msg_boot_encode(&b, &buf, &len) == -1);

	memset(&f, 0, sizeof(f));
	strlcpy(f.f_key, "in", sizeof(f.f_key));
	f.f_tier = TIER_L2;
	f.f_backend = BACKEND_VM;
	f.f_state = FENCE_RUNNING;
	f.f_inner = 1;
	ATF_REQUIRE_EQ(0, msg_fence_encode(&f, &buf, &len));
	memset(&fb, 0, sizeof(fb));
	ATF_REQUIRE_EQ(0, msg_fence_decode(buf, len, &fb));
	ATF_CHECK_EQ(1, fb.f_inner);
	ATF_CHECK(msg_fence_decode(buf, len - 1, &fb) == -1);
	free(buf);
	f.f_inner = 2;
	ATF_CHECK(msg_fence_encode(&f, &buf, &len) == -1);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, check_codec);
	ATF_TP_ADD_TC(tp, snap_codec);
	ATF_TP_ADD_TC(tp, verdict_typed);
	ATF_TP_ADD_TC(tp, type_names);
	ATF_TP_ADD_TC(tp, port_ticket);
	ATF_TP_ADD_TC(tp, empty);
	ATF_TP_ADD_TC(tp, u32_i32);
	ATF_TP_ADD_TC(tp, config_roundtrip);
	ATF_TP_ADD_TC(tp, config_encode_refuses);
	ATF_TP_ADD_TC(tp, config_decode_refuses);
	ATF_TP_ADD_TC(tp, procinfo);
	ATF_TP_ADD_TC(tp, error);
	ATF_TP_ADD_TC(tp, stats);
	ATF_TP_ADD_TC(tp, pool);
	ATF_TP_ADD_TC(tp, through_imsg);
	ATF_TP_ADD_TC(tp, mp_truncated);
	ATF_TP_ADD_TC(tp, mp_trailing);
	ATF_TP_ADD_TC(tp, mp_huge_counts);
	ATF_TP_ADD_TC(tp, mp_nesting);
	ATF_TP_ADD_TC(tp, mp_reserved);
	ATF_TP_ADD_TC(tp, mp_strings);
	ATF_TP_ADD_TC(tp, mp_reader);
	ATF_TP_ADD_TC(tp, mp_mutations);
	ATF_TP_ADD_TC(tp, usage);
	ATF_TP_ADD_TC(tp, token_codecs);
	ATF_TP_ADD_TC(tp, origins);
	ATF_TP_ADD_TC(tp, probe_report_egress);
	ATF_TP_ADD_TC(tp, probe_report_traits);
	ATF_TP_ADD_TC(tp, inner);
	return (atf_no_error());
}
