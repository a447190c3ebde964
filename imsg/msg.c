/*
 * msg: message type names, and the encoder and decoder of each of the
 * daemon's own payloads in msg.h (empty, u32, i32, config, procinfo,
 * error, stats); fences and the agent have theirs in msg_fence.c and
 * msg_agent.c.
 *
 * Every payload is a msgpack array of a fixed number of fields, in the
 * order the struct declares them.  Each struct has one validity check,
 * used by both sides: the encoder refuses what the decoder would refuse,
 * so a bad value is caught in the process that made it, and the decoder
 * fills its result only from a payload that passed the check whole.
 *
 * pid_t fields are 0 for "no such process" or a positive pid.
 */
#include <sys/types.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>

#include "fenced.h"
#include "msg.h"
#include "mp.h"
#include "msg_codec.h"

#define MSG_PID_MAX		INT32_MAX
#define MSG_ID_MAX		UINT32_MAX	/* uid_t, gid_t */

static int	msg_bad(void);
static int	msg_config_valid(const struct fenced_config *);
static int	msg_error_valid(const struct msg_error *);
static int	msg_pids_valid(const pid_t *);
static int	msg_str_set(const char *, size_t);

static const char *const msg_names[IMSG_TYPE_MAX] = {
	[IMSG_NONE] =			"IMSG_NONE",
	[IMSG_CONFIG] =			"IMSG_CONFIG",
	[IMSG_PEER_FD] =		"IMSG_PEER_FD",
	[IMSG_LOG_LEVEL] =		"IMSG_LOG_LEVEL",
	[IMSG_LISTEN_FD] =		"IMSG_LISTEN_FD",
	[IMSG_PROC_INFO] =		"IMSG_PROC_INFO",
	[IMSG_START] =			"IMSG_START",
	[IMSG_TOKEN_LOAD] =		"IMSG_TOKEN_LOAD",
	[IMSG_LOG_VERBOSE] =		"IMSG_LOG_VERBOSE",
	[IMSG_RELOAD] =			"IMSG_RELOAD",
	[IMSG_TOKEN_STORE] =		"IMSG_TOKEN_STORE",
	[IMSG_TOKEN_STORED] =		"IMSG_TOKEN_STORED",
	[IMSG_RELOADED] =		"IMSG_RELOADED",
	[IMSG_CTL_SHOW_STATS] =		"IMSG_CTL_SHOW_STATS",
	[IMSG_CTL_LOG_VERBOSE] =	"IMSG_CTL_LOG_VERBOSE",
	[IMSG_CTL_RELOAD] =		"IMSG_CTL_RELOAD",
	[IMSG_CTL_TEST_SYSCALL] =	"IMSG_CTL_TEST_SYSCALL",
	[IMSG_CTL_TOKEN] =		"IMSG_CTL_TOKEN",
	[IMSG_CTL_STATS] =		"IMSG_CTL_STATS",
	[IMSG_CTL_OK] =			"IMSG_CTL_OK",
	[IMSG_CTL_ERROR] =		"IMSG_CTL_ERROR",
	[IMSG_CTL_END] =		"IMSG_CTL_END",
	[IMSG_CTL_HOSTTOKEN] =		"IMSG_CTL_HOSTTOKEN",
	[IMSG_FENCE_BOOT] =		"IMSG_FENCE_BOOT",
	[IMSG_FENCE_STOP] =		"IMSG_FENCE_STOP",
	[IMSG_FENCE_BOOTED] =		"IMSG_FENCE_BOOTED",
	[IMSG_FENCE_FAILED] =		"IMSG_FENCE_FAILED",
	[IMSG_FENCE_STOPPED] =		"IMSG_FENCE_STOPPED",
	[IMSG_FENCE_END] =		"IMSG_FENCE_END",
	[IMSG_POOL_STATS] =		"IMSG_POOL_STATS",
	[IMSG_CTL_BOOT] =		"IMSG_CTL_BOOT",
	[IMSG_CTL_STOP] =		"IMSG_CTL_STOP",
	[IMSG_CTL_LIST] =		"IMSG_CTL_LIST",
	[IMSG_CTL_EXEC] =		"IMSG_CTL_EXEC",
	[IMSG_CTL_GIT_CONFIG] =		"IMSG_CTL_GIT_CONFIG",
	[IMSG_CTL_GIT_INIT] =		"IMSG_CTL_GIT_INIT",
	[IMSG_CTL_FENCE] =		"IMSG_CTL_FENCE",
	[IMSG_CTL_RESULT] =		"IMSG_CTL_RESULT",
	[IMSG_CTL_GIT_IDENTITY] =	"IMSG_CTL_GIT_IDENTITY",
	[IMSG_AGENT_HELLO] =		"IMSG_AGENT_HELLO",
	[IMSG_AGENT_READY] =		"IMSG_AGENT_READY",
	[IMSG_AGENT_EXEC] =		"IMSG_AGENT_EXEC",
	[IMSG_AGENT_RESULT] =		"IMSG_AGENT_RESULT",
	[IMSG_AGENT_GIT_CONFIG] =	"IMSG_AGENT_GIT_CONFIG",
	[IMSG_AGENT_GIT_IDENTITY] =	"IMSG_AGENT_GIT_IDENTITY",
	[IMSG_AGENT_GIT_INIT] =		"IMSG_AGENT_GIT_INIT",
	[IMSG_AGENT_ERROR] =		"IMSG_AGENT_ERROR",
	[IMSG_AGENT_SPAWN] =		"IMSG_AGENT_SPAWN",
	[IMSG_AGENT_PROCS] =		"IMSG_AGENT_PROCS",
	[IMSG_AGENT_PROC] =		"IMSG_AGENT_PROC",
	[IMSG_AGENT_PROC_END] =		"IMSG_AGENT_PROC_END",
	[IMSG_AGENT_FILE_READ] =	"IMSG_AGENT_FILE_READ",
	[IMSG_AGENT_FILE_WRITE] =	"IMSG_AGENT_FILE_WRITE",
	[IMSG_AGENT_FILE_DELETE] =	"IMSG_AGENT_FILE_DELETE",
	[IMSG_AGENT_FILE] =		"IMSG_AGENT_FILE",
	[IMSG_AGENT_FILE_LIST] =	"IMSG_AGENT_FILE_LIST",
	[IMSG_PROBE_PREPARE] =		"IMSG_PROBE_PREPARE",
	[IMSG_PROBE_EXEC] =		"IMSG_PROBE_EXEC",
	[IMSG_PROBE_OUTPUT] =		"IMSG_PROBE_OUTPUT",
	[IMSG_PROBE_REPORT] =		"IMSG_PROBE_REPORT",
	[IMSG_PROBE_VERDICT] =		"IMSG_PROBE_VERDICT",
	[IMSG_FENCE_LEVEL] =		"IMSG_FENCE_LEVEL",
	[IMSG_CTL_PROBE] =		"IMSG_CTL_PROBE",
	[IMSG_CTL_VERDICT] =		"IMSG_CTL_VERDICT",
	[IMSG_CTL_SHOW_TOKENS] =	"IMSG_CTL_SHOW_TOKENS",
	[IMSG_CTL_TOKENINFO] =		"IMSG_CTL_TOKENINFO",
	[IMSG_CTL_SPAWN] =		"IMSG_CTL_SPAWN",
	[IMSG_CTL_PROCS] =		"IMSG_CTL_PROCS",
	[IMSG_CTL_PROC] =		"IMSG_CTL_PROC",
	[IMSG_CTL_FILE_PUT] =		"IMSG_CTL_FILE_PUT",
	[IMSG_CTL_FILE_GET] =		"IMSG_CTL_FILE_GET",
	[IMSG_CTL_FILE_MORE] =		"IMSG_CTL_FILE_MORE",
	[IMSG_CTL_FILE] =		"IMSG_CTL_FILE",
	[IMSG_CTL_FILE_LIST] =		"IMSG_CTL_FILE_LIST",
	[IMSG_CTL_EXEC_STREAM] =	"IMSG_CTL_EXEC_STREAM",
	[IMSG_CTL_CHUNK] =		"IMSG_CTL_CHUNK",
	[IMSG_AGENT_EXEC_STREAM] =	"IMSG_AGENT_EXEC_STREAM",
	[IMSG_AGENT_CREDIT] =		"IMSG_AGENT_CREDIT",
	[IMSG_AGENT_CANCEL] =		"IMSG_AGENT_CANCEL",
	[IMSG_AGENT_PROBE] =		"IMSG_AGENT_PROBE",
	[IMSG_AGENT_CHUNK] =		"IMSG_AGENT_CHUNK",
	[IMSG_AGENT_EGRESS_CONN] =	"IMSG_AGENT_EGRESS_CONN",
	[IMSG_CTL_TUNNEL] =		"IMSG_CTL_TUNNEL",
	[IMSG_CTL_PORTS] =		"IMSG_CTL_PORTS",
	[IMSG_CTL_TUNNEL_FD] =		"IMSG_CTL_TUNNEL_FD",
	[IMSG_CTL_PORT_LIST] =		"IMSG_CTL_PORT_LIST",
	[IMSG_CTL_PORT_TICKET] =	"IMSG_CTL_PORT_TICKET",
	[IMSG_CTL_PORT_URLS] =		"IMSG_CTL_PORT_URLS",
	[IMSG_AGENT_TUNNEL_OPEN] =	"IMSG_AGENT_TUNNEL_OPEN",
	[IMSG_AGENT_PORTS] =		"IMSG_AGENT_PORTS",
	[IMSG_AGENT_TUNNEL] =		"IMSG_AGENT_TUNNEL",
	[IMSG_AGENT_PORT_LIST] =	"IMSG_AGENT_PORT_LIST",
	[IMSG_AGENT_TUNNEL_DATA] =	"IMSG_AGENT_TUNNEL_DATA",
	[IMSG_AGENT_TUNNEL_CREDIT] =	"IMSG_AGENT_TUNNEL_CREDIT",
	[IMSG_AGENT_TUNNEL_CLOSE] =	"IMSG_AGENT_TUNNEL_CLOSE",
	[IMSG_EGRESS_FENCE] =		"IMSG_EGRESS_FENCE",
	[IMSG_EGRESS_FORGET] =		"IMSG_EGRESS_FORGET",
	[IMSG_EGRESS_CONN] =		"IMSG_EGRESS_CONN",
	[IMSG_EGRESS_DECISION] =	"IMSG_EGRESS_DECISION",
	[IMSG_AGENT_TERM_OPEN] =	"IMSG_AGENT_TERM_OPEN",
	[IMSG_AGENT_TERMS] =		"IMSG_AGENT_TERMS",
	[IMSG_AGENT_PROC_INPUT] =	"IMSG_AGENT_PROC_INPUT",
	[IMSG_AGENT_TERM] =		"IMSG_AGENT_TERM",
	[IMSG_AGENT_TERM_END] =		"IMSG_AGENT_TERM_END",
	[IMSG_CTL_TERM_OPEN] =		"IMSG_CTL_TERM_OPEN",
	[IMSG_CTL_TERMS] =		"IMSG_CTL_TERMS",
	[IMSG_CTL_PROC_INPUT] =		"IMSG_CTL_PROC_INPUT",
	[IMSG_CTL_TERM] =		"IMSG_CTL_TERM",
	[IMSG_FENCE_SNAP] =		"IMSG_FENCE_SNAP",
	[IMSG_FENCE_SNAP_INFO] =	"IMSG_FENCE_SNAP_INFO",
	[IMSG_CTL_SNAP] =		"IMSG_CTL_SNAP",
	[IMSG_CTL_SNAP_INFO] =		"IMSG_CTL_SNAP_INFO",
	[IMSG_CTL_METRICS] =		"IMSG_CTL_METRICS",
	[IMSG_FENCE_USAGE_REQ] =	"IMSG_FENCE_USAGE_REQ",
	[IMSG_FENCE_USAGE] =		"IMSG_FENCE_USAGE",
	[IMSG_HOST_DOCTOR] =		"IMSG_HOST_DOCTOR",
	[IMSG_HOST_CHECK] =		"IMSG_HOST_CHECK",
	[IMSG_CTL_DOCTOR] =		"IMSG_CTL_DOCTOR",
	[IMSG_CTL_CHECK] =		"IMSG_CTL_CHECK",
	[IMSG_AUDIT] =			"IMSG_AUDIT",
	[IMSG_AUDIT_READ] =		"IMSG_AUDIT_READ",
	[IMSG_AUDIT_LINE] =		"IMSG_AUDIT_LINE",
	[IMSG_AUDIT_END] =		"IMSG_AUDIT_END",
	[IMSG_CTL_SHOW_AUDIT] =		"IMSG_CTL_SHOW_AUDIT",
	[IMSG_CTL_AUDIT] =		"IMSG_CTL_AUDIT",
	[IMSG_DENIALS_FD] =		"IMSG_DENIALS_FD",
	[IMSG_DENIAL] =			"IMSG_DENIAL",
	[IMSG_FENCE_LIMIT_FD] =		"IMSG_FENCE_LIMIT_FD",
};

/*
 * For logs: never NULL, even for a type a peer made up.  A type added to
 * the enum without a name here shows as IMSG_UNKNOWN, and msg_test says so.
 */
const char *
msg_type_name(uint32_t type)
{
	if (type >= IMSG_TYPE_MAX || msg_names[type] == NULL)
		return ("IMSG_UNKNOWN");
	return (msg_names[type]);
}

static int
msg_bad(void)
{
	errno = EBADMSG;
	return (-1);
}

/* A non-empty string terminated within its char[size]. */
static int
msg_str_set(const char *s, size_t size)
{
	size_t	 len = strnlen(s, size);

	return (len > 0 && len < size);
}

int
msg_empty_decode(const void *data, size_t len)
{
	if (len != 0)
		return (msg_bad());
	return (0);
}

int
msg_u32_encode(uint32_t v, void **buf, size_t *len)
{
	struct mp_writer w;

	mp_write_init(&w);
	mp_write_array(&w, 1);
	mp_write_u64(&w, v);
	return (mp_write_finish(&w, buf, len));
}

int
msg_u32_decode(const void *data, size_t len, uint32_t *v, uint32_t min,
    uint32_t max)
{
	struct mp_reader r;
	uint64_t	 x = 0;

	mp_read_begin(&r, data, len, 1);
	mp_read_u64(&r, &x, min, max);
	if (mp_read_end(&r) == -1)
		return (msg_bad());
	*v = (uint32_t)x;
	return (0);
}

int
msg_i32_encode(int32_t v, void **buf, size_t *len)
{
	struct mp_writer w;

	mp_write_init(&w);
	mp_write_array(&w, 1);
	mp_write_i64(&w, v);
	return (mp_write_finish(&w, buf, len));
}

int
msg_i32_decode(const void *data, size_t len, int32_t *v, int32_t min,
    int32_t max)
{
	struct mp_reader r;
	int64_t		 x = 0;

	mp_read_begin(&r, data, len, 1);
	mp_read_i64(&r, &x, min, max);
	if (mp_read_end(&r) == -1)
		return (msg_bad());
	*v = (int32_t)x;
	return (0);
}

/* The `egress' lines: hosts and resolvers parse, the probe's targets too. */
static int
msg_config_egress_valid(const struct fenced_config *c)
{
	unsigned char	 bin[16];
	char		 name[EGRESS_NAME_LEN], addr[FENCED_ADDR_MAX];
	uint32_t	 i;
	uint16_t	 port;

	if (c->c_egress_nhosts > EGRESS_HOSTS_MAX ||
	    c->c_egress_nresolvers > EGRESS_RESOLVERS_MAX)
		return (0);
	for (i = 0; i < c->c_egress_nhosts; i++)
		if (!egress_host_parse(c->c_egress_host[i], name,
		    sizeof(name), addr, sizeof(addr), &port))
			return (0);
	for (i = 0; i < c->c_egress_nresolvers; i++)
		if (!msg_str_set(c->c_egress_resolver[i],
		    sizeof(c->c_egress_resolver[i])) ||
		    (inet_pton(AF_INET, c->c_egress_resolver[i], bin) != 1 &&
		    inet_pton(AF_INET6, c->c_egress_resolver[i], bin) != 1))
			return (0);
	if ((c->c_probe_egress_allowed[0] != '\0' &&
	    !egress_entry_valid(c->c_probe_egress_allowed)) ||
	    !egress_entry_valid(c->c_probe_egress_refused))
		return (0);
	return (1);
}

/*
 * fenced_config.  The parser enforces the same bounds; checking them
 * again here means a child never runs on a value the grammar forbids,
 * whoever sent it.
 */
static int
msg_config_valid(const struct fenced_config *c)
{
	struct in6_addr	 a6;
	struct in_addr	 a4;
	uint32_t	 i;

	if (!msg_str_set(c->c_listen_addr, sizeof(c->c_listen_addr)) ||
	    (inet_pton(AF_INET, c->c_listen_addr, &a4) != 1 &&
	    inet_pton(AF_INET6, c->c_listen_addr, &a6) != 1))
		return (0);
	if (!msg_str_set(c->c_socket, sizeof(c->c_socket)) ||
	    c->c_socket[0] != '/')
		return (0);
	if (!msg_str_set(c->c_state, sizeof(c->c_state)) ||
	    c->c_state[0] != '/')
		return (0);
	if (!msg_str_set(c->c_homes, sizeof(c->c_homes)) ||
	    !msg_str_set(c->c_user, sizeof(c->c_user)) ||
	    !msg_str_set(c->c_admin_group, sizeof(c->c_admin_group)))
		return (0);
	/* A fence never runs as uid 0, and (uid_t)-1 is no uid at all. */
	if (c->c_fence_uid_lo == 0 || c->c_fence_uid_hi == (uid_t)-1 ||
	    c->c_fence_uid_lo > c->c_fence_uid_hi)
		return (0);
	if (c->c_tier < TIER_L1 || c->c_tier > TIER_L2)
		return (0);
	if (c->c_backend < BACKEND_MIN || c->c_backend >= BACKEND_MAX)
		return (0);
	if (c->c_lifetime < LIFETIME_MIN || c->c_lifetime > LIFETIME_MAX)
		return (0);
	if (c->c_limits.fl_memory < MEMORY_MIN ||
	    c->c_limits.fl_memory > MEMORY_MAX ||
	    c->c_limits.fl_pids < PIDS_MIN || c->c_limits.fl_pids > PIDS_MAX ||
	    c->c_limits.fl_cpu_milli < CPU_MILLI_MIN ||
	    c->c_limits.fl_cpu_milli > CPU_MILLI_MAX ||
	    !msg_config_ceilings_valid(c))
		return (0);
	if (c->c_home_limit != 0 && (c->c_home_limit < HOME_LIMIT_MIN ||
	    c->c_home_limit > HOME_LIMIT_MAX))
		return (0);
	if (c->c_snap_count < SNAP_COUNT_MIN ||
	    c->c_user_snap_count < c->c_snap_count ||
	    c->c_user_snap_count > SNAP_COUNT_MAX ||
	    c->c_snap_bytes < SNAP_BYTES_MIN ||
	    c->c_user_snap_bytes < c->c_snap_bytes ||
	    c->c_user_snap_bytes > SNAP_BYTES_MAX)
		return (0);
	if (c->c_exec_timeout < EXEC_TIMEOUT_MIN ||
	    c->c_exec_timeout_max > EXEC_TIMEOUT_MAX ||
	    c->c_exec_timeout > c->c_exec_timeout_max)
		return (0);
	if (c->c_exec_output < EXEC_OUTPUT_MIN ||
	    c->c_exec_output_max > EXEC_OUTPUT_MAX ||
	    c->c_exec_output > c->c_exec_output_max)
		return (0);
	if (c->c_exec_inflight_user < EXEC_INFLIGHT_MIN ||
	    c->c_exec_inflight_user > EXEC_INFLIGHT_MAX)
		return (0);
	if (c->c_exec_processes < EXEC_PROCESSES_MIN ||
	    c->c_exec_processes > EXEC_PROCESSES_MAX)
		return (0);
	if (c->c_http_body_max < HTTP_BODY_MIN ||
	    c->c_http_body_max > HTTP_BODY_MAX ||
	    c->c_http_headers_max < HTTP_HEADERS_MIN ||
	    c->c_http_headers_max > HTTP_HEADERS_MAX ||
	    c->c_http_timeout < HTTP_TIMEOUT_MIN ||
	    c->c_http_timeout > HTTP_TIMEOUT_MAX)
		return (0);
	if (c->c_http_conns_max < HTTP_CONNS_MIN ||
	    c->c_http_conns_max > HTTP_CONNS_MAX ||
	    c->c_http_conns_user < HTTP_CONNS_MIN ||
	    c->c_http_conns_user > c->c_http_conns_max)
		return (0);
	if (!probe_name_valid(c->c_probe_dns) ||
	    c->c_probe_ntcp > PROBE_TCP_MAX)
		return (0);
	for (i = 0; i < c->c_probe_ntcp; i++)
		if (!probe_target_valid(c->c_probe_tcp[i]))
			return (0);
	if (strnlen(c->c_runsc, sizeof(c->c_runsc)) >= sizeof(c->c_runsc) ||
	    (c->c_runsc[0] != '\0' && c->c_runsc[0] != '/') ||
	    !msg_str_set(c->c_runsc_platform, sizeof(c->c_runsc_platform)) ||
	    (strcmp(c->c_runsc_platform, "ptrace") != 0 &&
	    strcmp(c->c_runsc_platform, "systrap") != 0 &&
	    strcmp(c->c_runsc_platform, "kvm") != 0))
		return (0);
	if (c->c_vm_accel > VM_ACCEL_TCG)
		return (0);
	for (i = 0; i < VM_FILE_MAX; i++)
		if (strnlen(c->c_vm_path[i], sizeof(c->c_vm_path[i])) >=
		    sizeof(c->c_vm_path[i]) || (c->c_vm_path[i][0] != '\0' &&
		    (c->c_vm_path[i][0] != '/' ||
		    !sha256_hex_valid(c->c_vm_sha256[i]))) ||
		    (c->c_vm_path[i][0] == '\0' && c->c_vm_sha256[i][0] != '\0'))
			return (0);
	if (c->c_http_norigins > HTTP_ORIGINS_MAX)
		return (0);
	for (i = 0; i < c->c_http_norigins; i++)
		if (!http_origin_valid(c->c_http_origin[i]))
			return (0);
	if (!msg_config_egress_valid(c))
		return (0);
	if (c->c_verbose < 0)
		return (0);
	return (1);
}

/* One uid of an array of them. */
static const struct mc_field msg_config_uid_fields[] = {
	MC_UAT(0, sizeof(uid_t), 0, MSG_ID_MAX - 1),
};
static const struct mc_table msg_config_uid =
    MC_TABLE(msg_config_uid_fields);

/* IMSG_CONFIG, in wire order. */
static const struct mc_field msg_config_fields[] = {
	MC_S(struct fenced_config, c_listen_addr),
	MC_U(struct fenced_config, c_listen_port, 0, UINT16_MAX),
	MC_S(struct fenced_config, c_socket),
	MC_S(struct fenced_config, c_state),
	MC_S(struct fenced_config, c_homes),
	MC_S(struct fenced_config, c_user),
	MC_U(struct fenced_config, c_fence_uid_lo, 0, MSG_ID_MAX),
	MC_U(struct fenced_config, c_fence_uid_hi, 0, MSG_ID_MAX),
	MC_S(struct fenced_config, c_admin_group),
	MC_U(struct fenced_config, c_tier, TIER_L1, TIER_L2),
	MC_U(struct fenced_config, c_backend, BACKEND_MIN, BACKEND_MAX - 1),
	MC_U(struct fenced_config, c_lifetime, LIFETIME_MIN, LIFETIME_MAX),
	MC_U(struct fenced_config, c_limits.fl_memory, MEMORY_MIN, MEMORY_MAX),
	MC_U(struct fenced_config, c_limits.fl_pids, PIDS_MIN, PIDS_MAX),
	MC_U(struct fenced_config, c_limits.fl_cpu_milli,
	    CPU_MILLI_MIN, CPU_MILLI_MAX),
	MC_U(struct fenced_config, c_exec_timeout,
	    EXEC_TIMEOUT_MIN, EXEC_TIMEOUT_MAX),
	MC_U(struct fenced_config, c_exec_timeout_max,
	    EXEC_TIMEOUT_MIN, EXEC_TIMEOUT_MAX),
	MC_U(struct fenced_config, c_exec_output,
	    EXEC_OUTPUT_MIN, EXEC_OUTPUT_MAX),
	MC_U(struct fenced_config, c_exec_output_max,
	    EXEC_OUTPUT_MIN, EXEC_OUTPUT_MAX),
	MC_U(struct fenced_config, c_exec_inflight_user,
	    EXEC_INFLIGHT_MIN, EXEC_INFLIGHT_MAX),
	MC_U(struct fenced_config, c_http_body_max,
	    HTTP_BODY_MIN, HTTP_BODY_MAX),
	MC_U(struct fenced_config, c_http_headers_max,
	    HTTP_HEADERS_MIN, HTTP_HEADERS_MAX),
	MC_U(struct fenced_config, c_http_timeout,
	    HTTP_TIMEOUT_MIN, HTTP_TIMEOUT_MAX),
	MC_U(struct fenced_config, c_http_conns_max,
	    HTTP_CONNS_MIN, HTTP_CONNS_MAX),
	MC_U(struct fenced_config, c_http_conns_user,
	    HTTP_CONNS_MIN, HTTP_CONNS_MAX),
	MC_S(struct fenced_config, c_probe_dns),
	MC_STRS(struct fenced_config, c_probe_tcp, c_probe_ntcp),
	MC_U(struct fenced_config, c_uid, 0, MSG_ID_MAX),
	MC_U(struct fenced_config, c_gid, 0, MSG_ID_MAX),
	MC_U(struct fenced_config, c_admin_gid, 0, MSG_ID_MAX),
	MC_I(struct fenced_config, c_verbose, 0, INT32_MAX),
	MC_NEST(msg_ceilings),
	MC_U(struct fenced_config, c_home_limit, 0, HOME_LIMIT_MAX),
	MC_S(struct fenced_config, c_runsc),
	MC_S(struct fenced_config, c_runsc_platform),
	MC_U(struct fenced_config, c_vm_accel, VM_ACCEL_AUTO, VM_ACCEL_TCG),
	MC_S(struct fenced_config, c_vm_path[VM_FILE_KERNEL]),
	MC_S(struct fenced_config, c_vm_path[VM_FILE_INITRD]),
	MC_S(struct fenced_config, c_vm_path[VM_FILE_IMAGE]),
	MC_S(struct fenced_config, c_vm_sha256[VM_FILE_KERNEL]),
	MC_S(struct fenced_config, c_vm_sha256[VM_FILE_INITRD]),
	MC_S(struct fenced_config, c_vm_sha256[VM_FILE_IMAGE]),
	MC_U(struct fenced_config, c_pool[0], 0, POOL_MAX),
	MC_U(struct fenced_config, c_pool[1], 0, POOL_MAX),
	MC_U(struct fenced_config, c_pool[2], 0, POOL_MAX),
	MC_STRS(struct fenced_config, c_http_origin, c_http_norigins),
	MC_U(struct fenced_config, c_exec_processes,
	    EXEC_PROCESSES_MIN, EXEC_PROCESSES_MAX),
	MC_U(struct fenced_config, c_files_max, FILES_MIN, FILES_MAX),
	MC_STRS(struct fenced_config, c_egress_host, c_egress_nhosts),
	MC_STRS(struct fenced_config, c_egress_resolver, c_egress_nresolvers),
	MC_U(struct fenced_config, c_egress_resolver_port, 1, UINT16_MAX),
	MC_U(struct fenced_config, c_egress_conns,
	    EGRESS_CONNS_MIN, EGRESS_CONNS_MAX),
	MC_U(struct fenced_config, c_egress_rate,
	    EGRESS_RATE_MIN, EGRESS_RATE_MAX),
	MC_U(struct fenced_config, c_egress_idle,
	    EGRESS_IDLE_MIN, EGRESS_IDLE_MAX),
	MC_U(struct fenced_config, c_egress_connect,
	    EGRESS_CONNECT_MIN, EGRESS_CONNECT_MAX),
	MC_S(struct fenced_config, c_probe_egress_allowed),
	MC_S(struct fenced_config, c_probe_egress_refused),
	MC_U(struct fenced_config, c_snap_count, SNAP_COUNT_MIN,
	    SNAP_COUNT_MAX),
	MC_U(struct fenced_config, c_snap_bytes, SNAP_BYTES_MIN,
	    SNAP_BYTES_MAX),
	MC_U(struct fenced_config, c_user_snap_count, SNAP_COUNT_MIN,
	    SNAP_COUNT_MAX),
	MC_U(struct fenced_config, c_user_snap_bytes, SNAP_BYTES_MIN,
	    SNAP_BYTES_MAX),
	MC_ARRAY(struct fenced_config, c_admin_uids, c_nadmin_uids,
	    msg_config_uid),
	MC_B(struct fenced_config, c_observe_denials),
	MC_B(struct fenced_config, c_vm_off),
	MC_B(struct fenced_config, c_vm_inner),
};
static const struct mc_table msg_config = MC_TABLE(msg_config_fields);

int
msg_config_encode(const struct fenced_config *c, void **buf, size_t *len)
{
	if (!msg_config_valid(c)) {
		errno = EINVAL;
		return (-1);
	}
	return (mc_encode(&msg_config, c, buf, len));
}

int
msg_config_decode(const void *data, size_t len, struct fenced_config *out)
{
	struct fenced_config cf;

	if (mc_decode(&msg_config, data, len, &cf, sizeof(cf)) == -1 ||
	    !msg_config_valid(&cf))
		return (msg_bad());
	*out = cf;
	return (0);
}

/*
 * The per-process pid table shared by procinfo and stats: a nested
 * array of exactly PROC_MAX pids.
 */
static int
msg_pids_valid(const pid_t *pids)
{
	size_t	 i;

	for (i = 0; i < PROC_MAX; i++)
		if (pids[i] < 0)
			return (0);
	return (1);
}

/* Element i of a pid table, at base (the table's offset). */
#define MSG_PID(base, i) \
	MC_UAT((base) + (i) * sizeof(pid_t), sizeof(pid_t), 0, MSG_PID_MAX)

_Static_assert(PROC_MAX == 5, "a pid table lists every process");

static const struct mc_field msg_procinfo_pids_fields[] = {
	MSG_PID(offsetof(struct msg_procinfo, pi_pid), PROC_PARENT),
	MSG_PID(offsetof(struct msg_procinfo, pi_pid), PROC_BROKER),
	MSG_PID(offsetof(struct msg_procinfo, pi_pid), PROC_FENCER),
	MSG_PID(offsetof(struct msg_procinfo, pi_pid), PROC_PROBER),
	MSG_PID(offsetof(struct msg_procinfo, pi_pid), PROC_EGRESS),
};
static const struct mc_table msg_procinfo_pids =
    MC_TABLE(msg_procinfo_pids_fields);

static const struct mc_field msg_procinfo_fields[] = {
	MC_NEST(msg_procinfo_pids),
	MC_I(struct msg_procinfo, pi_started, 0, INT64_MAX),
};
static const struct mc_table msg_procinfo = MC_TABLE(msg_procinfo_fields);

int
msg_procinfo_encode(const struct msg_procinfo *pi, void **buf, size_t *len)
{
	if (!msg_pids_valid(pi->pi_pid) || pi->pi_started < 0) {
		errno = EINVAL;
		return (-1);
	}
	return (mc_encode(&msg_procinfo, pi, buf, len));
}

int
msg_procinfo_decode(const void *data, size_t len, struct msg_procinfo *out)
{
	struct msg_procinfo pi;

	if (mc_decode(&msg_procinfo, data, len, &pi, sizeof(pi)) == -1)
		return (msg_bad());
	*out = pi;
	return (0);
}

/*
 * Error replies.  The code is a short machine-readable word (the same
 * codes the HTTP API uses, "exec-timeout"); the message is free text.
 */
static int
msg_error_valid(const struct msg_error *e)
{
	size_t	 i, len;

	if (!msg_str_set(e->e_code, sizeof(e->e_code)))
		return (0);
	len = strlen(e->e_code);
	for (i = 0; i < len; i++) {
		char c = e->e_code[i];

		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		    c == '-' || c == '_'))
			return (0);
	}
	return (strnlen(e->e_message, sizeof(e->e_message)) <
	    sizeof(e->e_message));
}

/*
 * An error payload from a code and printf-style text.  Text cut short
 * to fit is cut at a character boundary, so that what a message quotes
 * (a path, a name) can never make the payload one the decoder refuses.
 */
int
msg_error_vformat(void **buf, size_t *len, const char *code,
    const char *fmt, va_list ap)
{
	struct msg_error e;
	size_t		 n;

	memset(&e, 0, sizeof(e));
	if (strlcpy(e.e_code, code, sizeof(e.e_code)) >= sizeof(e.e_code)) {
		errno = EINVAL;
		return (-1);
	}
	(void)vsnprintf(e.e_message, sizeof(e.e_message), fmt, ap);
	n = strlen(e.e_message);
	while (n > 0 && !mp_utf8_valid(e.e_message, n))
		e.e_message[--n] = '\0';
	return (msg_error_encode(&e, buf, len));
}

int
msg_error_format(void **buf, size_t *len, const char *code,
    const char *fmt, ...)
{
	va_list	 ap;
	int	 rv;

	va_start(ap, fmt);
	rv = msg_error_vformat(buf, len, code, fmt, ap);
	va_end(ap);
	return (rv);
}

static const struct mc_field msg_error_fields[] = {
	MC_S(struct msg_error, e_code),
	MC_S(struct msg_error, e_message),
};
static const struct mc_table msg_error = MC_TABLE(msg_error_fields);

int
msg_error_encode(const struct msg_error *e, void **buf, size_t *len)
{
	if (!msg_error_valid(e)) {
		errno = EINVAL;
		return (-1);
	}
	return (mc_encode(&msg_error, e, buf, len));
}

int
msg_error_decode(const void *data, size_t len, struct msg_error *out)
{
	struct msg_error e;

	if (mc_decode(&msg_error, data, len, &e, sizeof(e)) == -1 ||
	    !msg_error_valid(&e))
		return (msg_bad());
	*out = e;
	return (0);
}

static const struct mc_field msg_stats_pids_fields[] = {
	MSG_PID(offsetof(struct msg_stats, st_pid), PROC_PARENT),
	MSG_PID(offsetof(struct msg_stats, st_pid), PROC_BROKER),
	MSG_PID(offsetof(struct msg_stats, st_pid), PROC_FENCER),
	MSG_PID(offsetof(struct msg_stats, st_pid), PROC_PROBER),
	MSG_PID(offsetof(struct msg_stats, st_pid), PROC_EGRESS),
};
static const struct mc_table msg_stats_pids = MC_TABLE(msg_stats_pids_fields);

static const struct mc_field msg_pool_tier_fields[] = {
	MC_U(struct msg_pool_tier, pt_size, 0, POOL_MAX),
	MC_U(struct msg_pool_tier, pt_ready, 0, POOL_MAX),
	MC_U(struct msg_pool_tier, pt_taken, 0, UINT64_MAX),
	MC_U(struct msg_pool_tier, pt_refilled, 0, UINT64_MAX),
	MC_U(struct msg_pool_tier, pt_failed, 0, UINT64_MAX),
};
static const struct mc_table msg_pool_tier = MC_TABLE(msg_pool_tier_fields);

static const struct mc_field msg_pool_fields[] = {
	MC_SUB(struct msg_pool, p_tier[0], msg_pool_tier),
	MC_SUB(struct msg_pool, p_tier[1], msg_pool_tier),
	MC_SUB(struct msg_pool, p_tier[2], msg_pool_tier),
};
static const struct mc_table msg_pool = MC_TABLE(msg_pool_fields);

static int
msg_pool_valid(const struct msg_pool *p)
{
	int	 i;

	for (i = 0; i < 3; i++)
		if (p->p_tier[i].pt_ready > p->p_tier[i].pt_size)
			return (0);
	return (1);
}

int
msg_pool_encode(const struct msg_pool *p, void **buf, size_t *len)
{
	if (!msg_pool_valid(p)) {
		errno = EINVAL;
		return (-1);
	}
	return (mc_encode(&msg_pool, p, buf, len));
}

int
msg_pool_decode(const void *data, size_t len, struct msg_pool *out)
{
	struct msg_pool	 p;

	if (mc_decode(&msg_pool, data, len, &p, sizeof(p)) == -1 ||
	    !msg_pool_valid(&p))
		return (msg_bad());
	*out = p;
	return (0);
}

static const struct mc_field msg_stats_fields[] = {
	MC_NEST(msg_stats_pids),
	MC_I(struct msg_stats, st_started, 0, INT64_MAX),
	MC_I(struct msg_stats, st_now, 0, INT64_MAX),
	MC_U(struct msg_stats, st_ctl_conns, 0, UINT64_MAX),
	MC_U(struct msg_stats, st_ctl_active, 0, UINT64_MAX),
	MC_U(struct msg_stats, st_ctl_requests, 0, UINT64_MAX),
	MC_U(struct msg_stats, st_ctl_errors, 0, UINT64_MAX),
	MC_U(struct msg_stats, st_fences, 0, UINT64_MAX),
	MC_I(struct msg_stats, st_verbose, 0, INT32_MAX),
	MC_SUB(struct msg_stats, st_pool, msg_pool),
};
static const struct mc_table msg_stats = MC_TABLE(msg_stats_fields);

int
msg_stats_encode(const struct msg_stats *st, void **buf, size_t *len)
{
	if (!msg_pids_valid(st->st_pid) || st->st_started < 0 ||
	    st->st_now < 0 || st->st_verbose < 0) {
		errno = EINVAL;
		return (-1);
	}
	return (mc_encode(&msg_stats, st, buf, len));
}

int
msg_stats_decode(const void *data, size_t len, struct msg_stats *out)
{
	struct msg_stats st;

	if (mc_decode(&msg_stats, data, len, &st, sizeof(st)) == -1)
		return (msg_bad());
	*out = st;
	return (0);
}
