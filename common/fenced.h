/*
 * fenced: types shared by every process of the daemon.
 */
#ifndef FENCED_H
#define FENCED_H

#include <sys/types.h>
#include <limits.h>
#include <stdint.h>

#include "names.h"

#define FENCED_CONF		"/etc/fenced.conf"
#define FENCED_VERSION		"0.33"	/* fenced -V, fencectl -V */
#define FENCED_SOCKET		"/run/fenced.sock"
#define FENCED_STATE		"/var/lib/fenced"
#define FENCED_HOMES		"~/sandbox-homes"
#define FENCED_USER		"_fenced"
#define FENCED_ADMIN_GROUP	"sudo"
#define FENCED_LISTEN_ADDR	"127.0.0.1"
#define FENCED_LISTEN_PORT	7700

/* The empty directory broker and prober chroot into, under state. */
#define FENCED_EMPTY_DIR	"empty"
/* Root's ~ in `homes', under state: never root's own /root. */
#define FENCED_ROOT_HOME	"root"

/* The fd a re-executed child finds its parent channel on. */
#define FENCED_PARENT_FD	3

/*
 * The daemon's id (parent/daemon.c): DAEMON_ID_LEN random hex digits,
 * the name of its cgroup folders (fenced.<id>) and of its locks.
 */
#define DAEMON_ID_LEN		16
#define DAEMON_ID_SIZE		(DAEMON_ID_LEN + 1)

#define FENCE_KEY_MAX		63	/* [a-z0-9][a-z0-9_-]{0,62} */
#define FENCE_KEY_SIZE		(FENCE_KEY_MAX + 1)
#define FENCED_NAME_MAX		64	/* user and group names */
#define FENCED_ADDR_MAX		64	/* textual IP address */

/* The processes; also the index of each in the parent's table. */
enum fenced_proc {
	PROC_PARENT = 0,
	PROC_BROKER,
	PROC_FENCER,
	PROC_PROBER,
	PROC_EGRESS,
	PROC_MAX
};

/* The probe's outbound checks (docs/design.md section 5). */
#define PROBE_NAME_LEN		254	/* a DNS name, NUL included */
#define PROBE_TARGET_LEN	64	/* host:port, NUL included */
#define PROBE_TCP_MAX		8
#define HTTP_ORIGINS_MAX	16	/* `http origin', repeated */
#define HTTP_ORIGIN_LEN		128	/* scheme://host[:port], NUL included */
#define PROBE_DNS_DEFAULT	"example.com"
#define PROBE_TCP_DEFAULT1	"1.1.1.1:443"
#define PROBE_TCP_DEFAULT2	"example.com:80"

/*
 * Egress (docs/egress.md): a fence's allowlist of "name:port" entries,
 * the proxy's port on the fence's own loopback, and the `egress'
 * configuration.  An entry is an exact host name or "*.suffix", lower
 * case, with a port 1..65535; no IP literal.
 */
#define EGRESS_LIST_MAX		32	/* entries of one fence's list */
#define EGRESS_NAME_LEN		254	/* a host name, NUL included */
#define EGRESS_ENTRY_LEN	(EGRESS_NAME_LEN + 6)	/* name:port */
#define EGRESS_HOSTS_MAX	32	/* `egress host NAME ADDRESS port P' */
#define EGRESS_HOST_LEN		(EGRESS_NAME_LEN + FENCED_ADDR_MAX + 6)
					/* "NAME ADDRESS PORT" */
#define EGRESS_RESOLVERS_MAX	3	/* `egress resolver ADDRESS' */
#define EGRESS_PROXY_PORT	3128	/* on 127.0.0.1 inside the fence */
#define EGRESS_CONNS_MIN	1	/* `egress connections N', per fence */
#define EGRESS_CONNS_MAX	1024
#define EGRESS_RATE_MIN		1024	/* `egress rate N', bytes/s a fence
					   moves each way */
#define EGRESS_RATE_MAX		(1U << 30)
#define EGRESS_IDLE_MIN		1	/* `egress idle SEC' */
#define EGRESS_IDLE_MAX		3600
#define EGRESS_CONNECT_MIN	1	/* `egress connect timeout SEC' */
#define EGRESS_CONNECT_MAX	120
#define EGRESS_REFUSED_DEFAULT	"egress-refused.invalid:443"
					/* the probe's target off the list */

struct fence_limits {
	uint64_t	 fl_memory;	/* bytes */
	uint32_t	 fl_pids;
	uint32_t	 fl_cpu_milli;	/* 1000 = one cpu */
};

#define RUNSC_PLATFORM_SIZE	16	/* "ptrace", "systrap", "kvm" */
#define VM_SHA256_HEX		65	/* 64 lowercase hex digits and NUL */

/* `vm accel': how the vm backend runs its guests. */
enum vm_accel {
	VM_ACCEL_AUTO,		/* KVM if a test boot under it answers */
	VM_ACCEL_KVM,
	VM_ACCEL_TCG
};

/* `vm kernel|initrd|image PATH sha256 HEX': a boot file of the vm. */
enum vm_file {
	VM_FILE_KERNEL,
	VM_FILE_INITRD,
	VM_FILE_IMAGE,
	VM_FILE_MAX
};

/*
 * The daemon's configuration.  The parent owns it and sends a copy to
 * each child (IMSG_CONFIG) at start and on every reload.
 */
/*
 * The default `fence uids': 1024 from 0x70000000, above every range
 * systemd hands out (dynamic users 61184-65519, containers up to
 * 0x6fffffff) and useradd's subordinate ids.
 */
#define FENCE_UIDS_DEFAULT_LO	1879048192U

#define ADMIN_UIDS_MAX		64

struct fenced_config {
	char		 c_listen_addr[FENCED_ADDR_MAX];
	uint16_t	 c_listen_port;
	char		 c_socket[PATH_MAX];
	char		 c_state[PATH_MAX];
	char		 c_homes[PATH_MAX];	/* unexpanded: ~ and %u */
	char		 c_user[FENCED_NAME_MAX];
	uid_t		 c_fence_uid_lo;
	uid_t		 c_fence_uid_hi;
	char		 c_admin_group[FENCED_NAME_MAX];
	int		 c_tier;		/* enum fence_tier */
	int		 c_backend;		/* enum fence_backend */
	uint32_t	 c_lifetime;		/* seconds, a boot's default */
	uint32_t	 c_lifetime_max;	/* the most a boot may ask */
	struct fence_limits c_limits;		/* a boot's defaults */
	struct fence_limits c_limits_max;	/* the most a boot may ask */
	uint32_t	 c_user_fences;		/* one owner's running fences */
	struct fence_limits c_user_limits;	/* and their limits together */
	uint64_t	 c_home_limit;	/* bytes of a home image; 0: none */
	uint32_t	 c_snap_count;		/* snapshots of one fence */
	uint64_t	 c_snap_bytes;		/* and their bytes together */
	uint32_t	 c_user_snap_count;	/* of one owner's fences */
	uint64_t	 c_user_snap_bytes;
	uint32_t	 c_exec_timeout;	/* ms, default */
	uint32_t	 c_exec_timeout_max;	/* ms */
	uint32_t	 c_exec_output;		/* bytes, default */
	uint32_t	 c_exec_output_max;	/* bytes */
	uint32_t	 c_exec_inflight_user;	/* HTTP execs running per user */
	uint32_t	 c_exec_processes;	/* background processes a fence
						   holds */
	uint32_t	 c_http_body_max;	/* bytes */
	uint32_t	 c_http_headers_max;	/* bytes, request line included */
	uint32_t	 c_http_timeout;	/* seconds */
	uint32_t	 c_http_conns_max;	/* all users together */
	uint32_t	 c_http_conns_user;
	uint32_t	 c_files_max;		/* bytes of one file moved */
	char		 c_probe_dns[PROBE_NAME_LEN];	/* asked of DNS */
	char		 c_probe_tcp[PROBE_TCP_MAX][PROBE_TARGET_LEN];
	uint32_t	 c_probe_ntcp;			/* host:port, each */
	char		 c_runsc[PATH_MAX];	/* "": found in PATH */
	char		 c_runsc_platform[RUNSC_PLATFORM_SIZE];
	uint32_t	 c_vm_accel;		/* enum vm_accel */
	char		 c_vm_path[VM_FILE_MAX][PATH_MAX];	/* "": none */
	char		 c_vm_sha256[VM_FILE_MAX][VM_SHA256_HEX];
	uint32_t	 c_pool[3];		/* fences built ahead, per tier
						   (TIER_L1 - 1 ...); native */
	/* `http origin': pages the API answers with CORS headers. */
	char		 c_http_origin[HTTP_ORIGINS_MAX][HTTP_ORIGIN_LEN];
	uint32_t	 c_http_norigins;
	/* `egress ...': the proxy (docs/egress.md). */
	char		 c_egress_host[EGRESS_HOSTS_MAX][EGRESS_HOST_LEN];
	uint32_t	 c_egress_nhosts;	/* "NAME ADDRESS PORT", each */
	char		 c_egress_resolver[EGRESS_RESOLVERS_MAX][FENCED_ADDR_MAX];
	uint32_t	 c_egress_nresolvers;	/* 0: /etc/resolv.conf's */
	uint16_t	 c_egress_resolver_port;	/* 53 */
	uint32_t	 c_egress_conns;	/* at once, per fence */
	uint32_t	 c_egress_rate;		/* bytes/s per fence, each way */
	uint32_t	 c_egress_idle;		/* seconds */
	uint32_t	 c_egress_connect;	/* seconds, resolve + connect */
	/* `probe egress allowed|refused NAME:PORT' ("": the list's first
	   exact entry; EGRESS_REFUSED_DEFAULT). */
	char		 c_probe_egress_allowed[EGRESS_ENTRY_LEN];
	char		 c_probe_egress_refused[EGRESS_ENTRY_LEN];
	/*
	 * `audit ...' (docs/audit.md): the parent's alone, never sent to
	 * a child, since only the parent writes the log.  c_audit_log ""
	 * once resolved: `audit off'.
	 */
	char		 c_audit_log[PATH_MAX];
	int		 c_audit_off;
	uint64_t	 c_audit_size;		/* bytes before a rotation */
	uint32_t	 c_audit_keep;		/* rotated files kept */
	/* `observe denials yes|no': the fencer observes the L1.5 filter's
	   refusals (docs/denials.md); no: they carry their errno. */
	uint32_t	 c_observe_denials;
	/* `vm off': the vm backend is not offered (docs/vm.md); `vm on'
	   (the default) undoes it. */
	uint32_t	 c_vm_off;
	/* `vm inner runsc|none': a vm fence's default inner boundary
	   (docs/vm.md, "The inner boundary"); 1: runsc. */
	uint32_t	 c_vm_inner;

	/* Resolved by the parent, not written in the file. */
	uid_t		 c_uid;			/* of c_user */
	gid_t		 c_gid;
	gid_t		 c_admin_gid;		/* (gid_t)-1 if no such group */
	int		 c_verbose;
	/*
	 * The admin group's members when the file was read (its member
	 * list, and the users whose group it is): what makes a host
	 * token an admin's (docs/metrics.md).  At most ADMIN_UIDS_MAX.
	 */
	uint32_t	 c_nadmin_uids;
	uid_t		 c_admin_uids[ADMIN_UIDS_MAX];
};

/* Bounds the grammar and the codecs enforce. */
#define AUDIT_LOG_DEFAULT	"/var/log/fenced/audit.log"
#define AUDIT_LOG_STATE		"audit.log"	/* <state>/, not the default */
#define AUDIT_SIZE_DEFAULT	(16ULL << 20)
#define AUDIT_SIZE_MIN		(4ULL << 10)
#define AUDIT_SIZE_MAX		(1ULL << 40)
#define AUDIT_KEEP_DEFAULT	5
#define AUDIT_KEEP_MAX		99
#define LIFETIME_MIN		1
#define LIFETIME_MAX		(7 * 24 * 3600)
#define HOME_LIMIT_MIN		(16ULL << 20)	/* `limit home' */
#define HOME_LIMIT_MAX		(1ULL << 40)
#define SNAP_COUNT_MIN		1	/* `limit snapshots' */
#define SNAP_COUNT_MAX		4096
#define SNAP_BYTES_MIN		(1ULL << 20)
#define SNAP_BYTES_MAX		(1ULL << 50)
#define MEMORY_MIN		(4ULL << 20)
#define MEMORY_MAX		(1ULL << 40)
#define PIDS_MIN		8
#define PIDS_MAX		65536
#define CPU_MILLI_MIN		10
#define CPU_MILLI_MAX		(1024 * 1000)
#define POOL_MAX		64	/* `pool TIER N', per tier */
#define USER_FENCES_MIN		1
#define USER_FENCES_MAX		4096	/* the fencer's own bound */
#define USER_MEMORY_MAX		(1ULL << 50)
#define USER_PIDS_MAX		4194304	/* the kernel's PID_MAX_LIMIT */
/* 4.19e9: a u32 holds it, and a user's sum of its fences' limits. */
#define USER_CPU_MILLI_MAX	((uint32_t)USER_FENCES_MAX * CPU_MILLI_MAX)
#define EXEC_TIMEOUT_MIN	100
#define EXEC_TIMEOUT_MAX	60000
#define EXEC_OUTPUT_MIN		1024
#define EXEC_OUTPUT_MAX		1048576
#define EXEC_INFLIGHT_MIN	1
#define EXEC_INFLIGHT_MAX	1024
#define EXEC_PROCESSES_MIN	1
#define EXEC_PROCESSES_MAX	64	/* the agent's AGENT_BG_MAX */
/*
 * What a boot may take in the daemon, which fencectl waits out
 * (docs/architecture.md, "How long a boot takes"): no backend waits
 * longer than BOOT_AGENT_WAIT_MAX s for its agent's READY (the vm
 * backend's wait, a TCG boot under load; fencer_backends_start() will
 * not start with one that would), and a boot's first probe, whose
 * verdict a `require' waits for, runs at most PROBE_TIMEOUT_MS.
 */
#define BOOT_AGENT_WAIT_MAX	120
#define PROBE_TIMEOUT_MS	10000
#define HTTP_BODY_MIN		4096
#define HTTP_BODY_MAX		(8U << 20)
#define FILES_MIN		4096
#define FILES_MAX		(256U << 20)
#define HTTP_HEADERS_MIN	1024
#define HTTP_HEADERS_MAX	65536
#define HTTP_TIMEOUT_MIN	1
#define HTTP_TIMEOUT_MAX	300
#define HTTP_CONNS_MIN		1
#define HTTP_CONNS_MAX		4096

/* parent/config.c */
void		 config_defaults(struct fenced_config *);
int		 config_parse(const char *, struct fenced_config *);
int		 config_resolve(struct fenced_config *);
int		 config_homes_check(const char *, const char **);
int		 config_env_override(struct fenced_config *);

/* common/state.c */
int		 state_env_remove(const char *);

/* common/util.c */
int		 fence_key_valid(const char *);
int		 daemon_id_valid(const char *);
int		 unix_connect(const char *);
int		 probe_name_valid(const char *);
int		 probe_target_valid(const char *);
int		 sha256_hex_valid(const char *);
int		 http_origin_valid(const char *);

/* common/pump.c: a stream pair relayed both ways (fencectl forward). */
#define PUMP_BUF	(64 * 1024)	/* bytes held, each direction */
struct pump_dir {
	uint8_t		 d_buf[PUMP_BUF];
	size_t		 d_len;
	int		 d_eof;		/* its source ended */
	int		 d_shut;	/* its sink was shut for writing */
};
struct pump {
	int		 p_fd[2];
	struct pump_dir	 p_dir[2];	/* [0]: p_fd[0] to p_fd[1] */
};
struct pollfd;
struct pump	*pump_new(int, int);
void		 pump_free(struct pump *);
void		 pump_events(const struct pump *, struct pollfd *);
int		 pump_move(struct pump *, const struct pollfd *);

/* common/egress_list.c */
struct egress_entry {
	char		 ee_name[EGRESS_NAME_LEN];	/* lower case; a
						   wildcard without its "*." */
	uint16_t	 ee_port;
	int		 ee_wild;	/* "*.suffix": one label or more
					   before suffix, not suffix itself */
};
int		 egress_entry_parse(const char *, struct egress_entry *,
		    const char **);
int		 egress_entry_canon(const char *, char *, const char **);
int		 egress_entry_valid(const char *);
int		 egress_name_valid(const char *);
int		 egress_list_match(const char [][EGRESS_ENTRY_LEN], size_t,
		    const char *, uint16_t, int *);
int		 egress_host_parse(const char *, char *, size_t, char *,
		    size_t, uint16_t *);
int		 hexdigit(int);
int		 word_listed(const char *, const char *);
int		 file_read_small(const char *, const char *, char *, size_t);
ssize_t	 send_fds(int, const void *, size_t, const int *, int);
int		 timingsafe_bcmp(const void *, const void *, size_t);
const char	*proc_name(enum fenced_proc);

#endif /* FENCED_H */
