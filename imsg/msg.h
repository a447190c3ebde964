/*
 * The messages every fenced process speaks: one enum of types, and for
 * each payload one encoder and one decoder.  Payloads are msgpack arrays
 * of a fixed number of fields; a decoder accepts exactly its own shape,
 * with every length and number bounded, and nothing left over.
 *
 * Encoders return a malloc'ed buffer in *buf and its size in *len, or -1.
 * Decoders return 0, or -1 with errno set to EBADMSG.
 */
#ifndef MSG_H
#define MSG_H

#include <sys/types.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "fenced.h"

enum imsg_type {
	IMSG_NONE = 0,

	/* parent -> every child */
	IMSG_CONFIG,		/* struct fenced_config */
	IMSG_PEER_FD,		/* u32 enum fenced_proc; fd: channel to it */
	IMSG_LOG_LEVEL,		/* i32 level */
	IMSG_START,		/* empty: configured, begin serving */

	/* parent -> broker */
	IMSG_LISTEN_FD,		/* u32 enum listen_kind; fd: listening socket */
	IMSG_PROC_INFO,		/* struct msg_procinfo */
	IMSG_TOKEN_LOAD,	/* struct msg_token: a stored host token */
	IMSG_TOKEN_STORED,	/* u32 0 or errno; ih_peerid: the store's */
	IMSG_RELOADED,		/* struct msg_error: e_code "ok", or why
				   not; ih_peerid: the reload's */

	/* broker -> parent (parent_reqs[]) */
	IMSG_LOG_VERBOSE,	/* i32 level, for the other children */
	IMSG_RELOAD,		/* empty; ih_peerid: request id, answered */
	IMSG_TOKEN_STORE,	/* struct msg_token; ih_peerid: request id */

	/* fencectl -> broker */
	IMSG_CTL_SHOW_STATS,	/* empty */
	IMSG_CTL_LOG_VERBOSE,	/* i32 level */
	IMSG_CTL_RELOAD,	/* empty */
	IMSG_CTL_TEST_SYSCALL,	/* empty; FENCED_TEST_HOOKS builds only */
	IMSG_CTL_TOKEN,		/* struct msg_ctltoken */
	IMSG_CTL_BOOT,		/* struct msg_boot (owner ignored) */
	IMSG_CTL_STOP,		/* struct msg_fence_req (uid ignored) */
	IMSG_CTL_LIST,		/* struct msg_fence_req (uid ignored) */
	IMSG_CTL_EXEC,		/* struct msg_exec (bearer ignored) */
	IMSG_CTL_GIT_CONFIG,	/* struct msg_gitconfig (bearer ignored) */
	IMSG_CTL_GIT_INIT,	/* struct msg_gitinit (bearer ignored) */
	IMSG_CTL_PROBE,		/* struct msg_fence_req */
	IMSG_CTL_SHOW_TOKENS,	/* empty: the caller's host tokens */
	IMSG_CTL_SPAWN,		/* struct msg_exec (bearer ignored) */
	IMSG_CTL_PROCS,		/* struct msg_proc_req (bearer ignored) */
	IMSG_CTL_FILE_PUT,	/* struct msg_file: a chunk of fencectl put */
	IMSG_CTL_FILE_GET,	/* struct msg_file: fencectl get */
	IMSG_CTL_FILE_MORE,	/* empty: the next chunk of a get */
	IMSG_CTL_EXEC_STREAM,	/* struct msg_exec: CHUNKs, then RESULT */
	IMSG_CTL_TUNNEL,	/* struct msg_tunnel_open (bearer ignored):
				   answered TUNNEL_FD or ERROR */
	IMSG_CTL_PORTS,		/* struct msg_ports_req (bearer ignored):
				   answered PORT_LIST or ERROR */
	IMSG_CTL_PORT_TICKET,	/* struct msg_port_ticket: a ticket of the
				   host form, answered PORT_URLS or ERROR */

	/* broker -> fencectl */
	IMSG_CTL_STATS,		/* struct msg_stats */
	IMSG_CTL_OK,		/* empty */
	IMSG_CTL_ERROR,		/* struct msg_error */
	IMSG_CTL_END,		/* empty: last message of a reply */
	IMSG_CTL_HOSTTOKEN,	/* struct msg_hosttoken: a new host token */
	IMSG_CTL_FENCE,		/* struct msg_fence */
	IMSG_CTL_RESULT,	/* struct msg_result */
	IMSG_CTL_GIT_IDENTITY,	/* struct msg_gitconfig */
	IMSG_CTL_VERDICT,	/* struct msg_verdict */
	IMSG_CTL_TOKENINFO,	/* struct msg_tokeninfo, one per token */
	IMSG_CTL_PROC,		/* struct msg_proc */
	IMSG_CTL_FILE,		/* struct msg_file: stat, a chunk of a get */
	IMSG_CTL_FILE_LIST,	/* struct msg_filelist */
	IMSG_CTL_CHUNK,		/* struct msg_chunk: streamed output */
	IMSG_CTL_TUNNEL_FD,	/* empty; fd: the client's end of a tunnel
				   (docs/interactive.md) */
	IMSG_CTL_PORT_LIST,	/* struct msg_portlist */
	IMSG_CTL_PORT_URLS,	/* struct msg_port_ticket, its URLs set */

	/* broker -> fencer (ih_peerid: the broker's request id) */
	IMSG_FENCE_BOOT,	/* struct msg_boot */
	IMSG_FENCE_STOP,	/* struct msg_fence_req */
	IMSG_PROBE_PREPARE,	/* struct msg_fence_req */
	IMSG_PROBE_OUTPUT,	/* the agent's msg_result, as it came */

	/* fencer -> broker (ih_peerid: the request answered, or 0) */
	IMSG_FENCE_BOOTED,	/* struct msg_fence; fd: channel to the agent */
	IMSG_FENCE_FAILED,	/* struct msg_error */
	IMSG_FENCE_STOPPED,	/* struct msg_fence, f_state STOPPED */
	IMSG_FENCE_END,		/* empty: end of a stop of all */
	IMSG_PROBE_EXEC,	/* struct msg_exec: fence-probe to run */
	IMSG_FENCE_LEVEL,	/* struct msg_verdict */
	IMSG_POOL_STATS,	/* struct msg_pool: the warm pool changed */

	/* fencer -> prober (ih_peerid: the broker's request id) */
	IMSG_PROBE_REPORT,	/* struct msg_probe_report */

	/* prober -> fencer (ih_peerid: the same) */
	IMSG_PROBE_VERDICT,	/* struct msg_verdict */

	/* fencer -> agent */
	IMSG_AGENT_HELLO,	/* struct msg_hello */

	/* agent -> fencer */
	IMSG_AGENT_READY,	/* empty */

	/* broker -> agent (ih_peerid: request id) */
	IMSG_AGENT_EXEC,	/* struct msg_exec */
	IMSG_AGENT_GIT_CONFIG,	/* struct msg_gitconfig */
	IMSG_AGENT_GIT_INIT,	/* struct msg_gitinit */
	IMSG_AGENT_SPAWN,	/* struct msg_exec: a background process */
	IMSG_AGENT_PROCS,	/* struct msg_proc_req */
	IMSG_AGENT_FILE_READ,	/* struct msg_file: a chunk, or a listing */
	IMSG_AGENT_FILE_WRITE,	/* struct msg_file: a chunk of a write */
	IMSG_AGENT_FILE_DELETE,	/* struct msg_file */
	IMSG_AGENT_EXEC_STREAM,	/* struct msg_exec: CHUNKs, then RESULT */
	IMSG_AGENT_CREDIT,	/* struct msg_credit: more room for CHUNKs */
	IMSG_AGENT_CANCEL,	/* struct msg_credit (0): kill the job */
	IMSG_AGENT_PROBE,	/* struct msg_exec: fence-probe, its standard
				   descriptors sockets (docs/agent.md) */
	IMSG_AGENT_TUNNEL_OPEN,	/* struct msg_tunnel_open: ih_peerid names
				   the tunnel from then on */
	IMSG_AGENT_PORTS,	/* struct msg_ports_req */

	/* agent -> broker (ih_peerid: the request answered) */
	IMSG_AGENT_RESULT,	/* struct msg_result */
	IMSG_AGENT_GIT_IDENTITY, /* struct msg_gitconfig (reply) */
	IMSG_AGENT_ERROR,	/* struct msg_error */
	IMSG_AGENT_PROC,	/* struct msg_proc: one background process */
	IMSG_AGENT_PROC_END,	/* empty: the last of a listing */
	IMSG_AGENT_FILE,	/* struct msg_file (reply) */
	IMSG_AGENT_FILE_LIST,	/* struct msg_filelist (reply to a read) */
	IMSG_AGENT_CHUNK,	/* struct msg_chunk, of a streamed exec */
	IMSG_AGENT_EGRESS_CONN,	/* empty; fd: a connection accepted at the
				   proxy port inside the fence */
	IMSG_AGENT_TUNNEL,	/* struct msg_tunnel: the tunnel is open;
				   mode fd: the fence's socket attached */
	IMSG_AGENT_PORT_LIST,	/* struct msg_portlist (reply to PORTS) */

	/* broker <-> agent, both ways (ih_peerid: the tunnel) */
	IMSG_AGENT_TUNNEL_DATA,	/* struct msg_tunnel_data */
	IMSG_AGENT_TUNNEL_CREDIT, /* struct msg_tunnel_credit */
	IMSG_AGENT_TUNNEL_CLOSE, /* struct msg_tunnel_close */

	/* broker -> egress (docs/egress.md) */
	IMSG_EGRESS_FENCE,	/* struct msg_egress_fence: a fence's list */
	IMSG_EGRESS_FORGET,	/* struct msg_egress_fence, id alone: the
				   fence is gone, its connections end */
	IMSG_EGRESS_CONN,	/* struct msg_egress_fence, id alone; fd: a
				   connection from inside that fence */

	/* egress -> broker */
	IMSG_EGRESS_DECISION,	/* struct msg_egress_decision: one
				   connection, refused or ended */

	/* Terminals, a background process's stdin (docs/interactive.md) */
	IMSG_AGENT_TERM_OPEN,	/* broker -> agent: struct msg_term_open */
	IMSG_AGENT_TERMS,	/* broker -> agent: struct msg_term_req */
	IMSG_AGENT_PROC_INPUT,	/* broker -> agent: struct msg_proc_input;
				   answered with PROC */
	IMSG_AGENT_TERM,	/* agent -> broker: struct msg_term */
	IMSG_AGENT_TERM_END,	/* agent -> broker: empty, a listing's last */
	IMSG_CTL_TERM_OPEN,	/* fencectl -> broker: struct msg_term_open */
	IMSG_CTL_TERMS,		/* fencectl -> broker: struct msg_term_req;
				   attach is IMSG_CTL_TUNNEL of kind
				   terminal */
	IMSG_CTL_PROC_INPUT,	/* fencectl -> broker: struct msg_proc_input */
	IMSG_CTL_TERM,		/* broker -> fencectl: struct msg_term */

	/* Snapshots of homes (docs/snapshots.md) */
	IMSG_FENCE_SNAP,	/* broker -> fencer: struct msg_snap;
				   answered with SNAP_INFO (a listing:
				   several, then FENCE_END) or FAILED */
	IMSG_FENCE_SNAP_INFO,	/* fencer -> broker: struct msg_snap_info */
	IMSG_CTL_SNAP,		/* fencectl -> broker: struct msg_snap */
	IMSG_CTL_SNAP_INFO,	/* broker -> fencectl: struct msg_snap_info */

	/* Metrics (docs/metrics.md) */
	IMSG_CTL_METRICS,	/* fencectl -> broker: empty; answered with
				   CHUNKs (stdout: the exposition), END */
	IMSG_FENCE_USAGE_REQ,	/* broker -> fencer: empty; answered with
				   FENCE_USAGE */
	IMSG_FENCE_USAGE,	/* fencer -> broker: struct msg_usage */
	/* The host doctor (docs/doctor.md) */
	IMSG_HOST_DOCTOR,	/* broker -> fencer: empty; answered with
				   HOST_CHECK rows, then FENCE_END */
	IMSG_HOST_CHECK,	/* fencer -> broker: struct msg_check */
	IMSG_CTL_DOCTOR,	/* fencectl -> broker: empty */
	IMSG_CTL_CHECK,		/* broker -> fencectl: struct msg_check, its
				   hc_detail "" unless the asker is an
				   admin; then END */

	/* The audit log (docs/audit.md) */
	IMSG_AUDIT,		/* broker -> parent: struct msg_audit, a
				   notice: nobody waits for an answer */
	IMSG_AUDIT_READ,	/* broker -> parent: struct msg_audit_read;
				   ih_peerid: the request, answered with
				   AUDIT_LINEs, then AUDIT_END */
	IMSG_AUDIT_LINE,	/* parent -> broker: struct msg_audit_line */
	IMSG_AUDIT_END,		/* parent -> broker: empty, the last */
	IMSG_CTL_SHOW_AUDIT,	/* fencectl -> broker: u32 lines, 1..
				   AUDIT_SHOW_MAX */
	IMSG_CTL_AUDIT,		/* broker -> fencectl: struct msg_audit_line */

	/* Denials (docs/denials.md) */
	IMSG_DENIALS_FD,	/* fencer -> broker: empty; fd: the socket
				   of struct msg_denial datagrams; broker
				   -> egress: empty; fd: a stream socket
				   of IMSG_DENIAL frames */
	IMSG_DENIAL,		/* egress -> broker, on that socket:
				   struct msg_denial */
	IMSG_FENCE_LIMIT_FD,	/* fencer -> broker, after BOOTED: struct
				   msg_denial naming the fence and a limit
				   ("memory", "pids"); fd: its counters */

	IMSG_TYPE_MAX
};

enum listen_kind {
	LISTEN_CONTROL = 1,
	LISTEN_HTTP
};

struct msg_procinfo {
	pid_t		 pi_pid[PROC_MAX];
	int64_t		 pi_started;	/* unix time the daemon started */
};

#define MSG_ERROR_CODE_MAX	64
#define MSG_ERROR_TEXT_MAX	1024
struct msg_error {
	char		 e_code[MSG_ERROR_CODE_MAX];	/* e.g. "bad-key" */
	char		 e_message[MSG_ERROR_TEXT_MAX];
};

/* The pairing bearer the fencer mints per fence (arc4random). */
#define MSG_BEARER_LEN		32

struct msg_boot {
	char		 b_key[FENCE_KEY_SIZE];
	uid_t		 b_owner;	/* set by the broker from credentials */
	int		 b_admin;	/* the asker is root or admin group */
	int		 b_tier;	/* enum fence_tier, 0: configured */
	int		 b_backend;	/* enum fence_backend, 0: configured */
	int		 b_require;	/* least level acceptable (enum
					   fence_level, L1 to L4), 0: none */
	uint32_t	 b_lifetime;	/* seconds, 0: configured */
	struct fence_limits b_limits;	/* 0 fields: configured */
	int		 b_cold;	/* 1: built cold, never from the warm
					   pool (fencectl boot ... cold) */
	char		 b_egress[EGRESS_LIST_MAX][EGRESS_ENTRY_LEN];
	uint32_t	 b_negress;	/* > 0: tier L2, native, cold */
	/*
	 * A branch (docs/snapshots.md): the home starts as b_from_key's
	 * snapshot b_from_snap, or as its home now ("" snapshot); the
	 * owner's own fence only.  "" key: an ordinary boot.
	 */
	char		 b_from_key[FENCE_KEY_SIZE];
	char		 b_from_snap[FENCE_KEY_SIZE];
	int		 b_inner;	/* enum fence_inner, 0: configured;
					   runsc: the vm backend only */
};

/*
 * A fence is named by its owner and its key.  A request that names no
 * owner (MSG_OWNER_NONE) means, with a key, the asker's own fence: that
 * is all fencectl sends for a plain KEY, and the broker fills in the
 * asker before anything reaches the fencer.  Without a key (a listing,
 * stop all) it means every fence the asker may see.
 */
#define MSG_OWNER_NONE	((uid_t)-1)

/* Stop one fence, or list: key "" means all the asker may see. */
struct msg_fence_req {
	char		 r_key[FENCE_KEY_SIZE];
	uid_t		 r_owner;	/* whose fence, or MSG_OWNER_NONE */
	uid_t		 r_uid;		/* who asks */
	int		 r_admin;
	int		 r_full;	/* probe: the outbound checks too */
};

struct msg_timings {
	uint32_t	 t_namespaces_us;
	uint32_t	 t_mounts_us;
	uint32_t	 t_cgroup_us;
	uint32_t	 t_seccomp_us;
	uint32_t	 t_exec_us;
	uint32_t	 t_agent_us;	/* boot request to agent ready */
	uint32_t	 t_take_us;	/* pooled: taking it from the pool */
};

/* The kernel axis of a fence's verdict, as the state shows it. */
#define MSG_KERNEL_UNMEASURED	0
#define MSG_KERNEL_SHARED	1	/* the host's kernel answered */
#define MSG_KERNEL_SEPARATE	2	/* gVisor's, or a guest's */
#define MSG_KERNEL_RELEASE_LEN	65	/* its uname -r, printable */
/*
 * The surface axis in a line, as the prober writes it (verdict_msg()):
 * its verdict, whose kernel, the entries reached ("passes, the host's
 * kernel: io_uring userns"); printable, "" before any verdict.
 */
#define MSG_SURFACE_LEN		192
#define MSG_ACCEL_NONE		0	/* not a vm */
#define MSG_ACCEL_KVM		1
#define MSG_ACCEL_TCG		2

/* A fence's connections through the egress proxy, counted by the broker. */
struct msg_egress_counts {
	uint64_t	 en_allowed;	/* connected, relayed, ended */
	uint64_t	 en_refused;	/* answered with a refusal */
	uint32_t	 en_open;	/* passed on, not decided yet */
	uint64_t	 en_up;		/* bytes out of the fence */
	uint64_t	 en_down;	/* bytes into it */
};

#define MSG_DENIAL_NOTE_LEN	160	/* why denials are not observed */

#define MSG_OWNER_NAME_MAX	32	/* an owner's name, bytes */
struct msg_fence {
	char		 f_key[FENCE_KEY_SIZE];
	uid_t		 f_owner;
	uid_t		 f_uid;		/* the uid its processes run as */
	int		 f_tier;
	int		 f_backend;
	int		 f_state;	/* enum fence_state */
	int		 f_reason;	/* enum fence_stop_reason */
	pid_t		 f_pid;		/* host pid of its pid 1 */
	char		 f_home[PATH_MAX];	/* host path */
	int64_t		 f_started;	/* unix time */
	int64_t		 f_deadline;	/* unix time */
	struct fence_limits f_limits;
	struct msg_timings f_timings;
	int		 f_landlock_abi;
	uint32_t	 f_landlock;	/* FENCE_LL_* applied */
	int		 f_level;	/* enum probe_level, measured */
	int		 f_kernel;	/* MSG_KERNEL_*: which kernel answered
					   its last probe */
	char		 f_kernel_release[MSG_KERNEL_RELEASE_LEN];
	int		 f_accel;	/* MSG_ACCEL_*: how a vm runs */
	uint8_t		 f_bearer[MSG_BEARER_LEN];	/* BOOTED only */
	uint64_t	 f_home_used;	/* bytes the home takes on the host */
	uint64_t	 f_home_limit;	/* bytes; 0: no limit (a directory) */
	int		 f_pooled;	/* 1: taken from the warm pool */
	int		 f_probe_sent;	/* BOOTED only, 1: the fencer sent the
					   first probe to the agent as its
					   request 0 (fencer_probe_first()) */
	/* The egress list (> 0: an L2 fence behind the proxy) and what
	   the proxy decided for it so far, as the broker counts. */
	char		 f_egress[EGRESS_LIST_MAX][EGRESS_ENTRY_LEN];
	uint32_t	 f_negress;
	struct msg_egress_counts f_egress_n;
	char		 f_from[2 * FENCE_KEY_SIZE];	/* a branch: the
					   snapshot its home is built on,
					   KEY@NAME; "" if none */
	char		 f_surface[MSG_SURFACE_LEN];	/* of its last
					   verdict, v_surface */
	/* "" if the system calls its filter refuses are observed, else
	   why not (docs/denials.md): the fencer's word, printable. */
	char		 f_denials_note[MSG_DENIAL_NOTE_LEN];
	/* broker: denials no command, background process or terminal has
	   taken (docs/denials.md), as of the last time it was asked. */
	uint64_t	 f_denials_outside;
	/* The owner's login name as the fencer read it from the host's
	   user database at boot (docs/http.md, "ownerName"): printable
	   ASCII, at most MSG_OWNER_NAME_MAX bytes; "" when it has none
	   that fits. */
	char		 f_owner_name[MSG_OWNER_NAME_MAX + 1];
	int		 f_inner;	/* 1: a vm fence whose commands run in
					   runsc inside the guest */
};

/*
 * A fence's egress allowlist as the broker gives it to the proxy
 * (IMSG_EGRESS_FENCE), or only its id (FORGET, CONN).  ef_id is the
 * broker's own number for the fence, never 0, never reused while the
 * daemon runs.  Entries are canonical (egress_entry_valid()).
 */
struct msg_egress_fence {
	uint32_t	 ef_id;
	uid_t		 ef_owner;
	char		 ef_key[FENCE_KEY_SIZE];
	char		 ef_list[EGRESS_LIST_MAX][EGRESS_ENTRY_LEN];
	uint32_t	 ef_nlist;
};

/* Why the proxy refused or ended a connection (ed_reason). */
#define MSG_EGRESS_REASON_LEN	32	/* e.g. "not-listed", "ended" */

/* One connection's outcome, sent once, when it is refused or ends. */
struct msg_egress_decision {
	uint32_t	 ed_id;		/* the fence, as in msg_egress_fence */
	int		 ed_allowed;	/* 1: the list allowed it */
	char		 ed_name[EGRESS_NAME_LEN];	/* as asked; "" if the
						   request did not parse */
	uint16_t	 ed_port;
	char		 ed_method[8];	/* "CONNECT", "GET", ...; "" */
	char		 ed_reason[MSG_EGRESS_REASON_LEN];
	char		 ed_address[FENCED_ADDR_MAX];	/* connected to; "" */
	uint64_t	 ed_up;		/* bytes from the fence out */
	uint64_t	 ed_down;	/* bytes back into the fence */
	uint32_t	 ed_ms;		/* from accept to the end */
};

struct msg_hello {
	uint8_t		 h_bearer[MSG_BEARER_LEN];
	char		 h_key[FENCE_KEY_SIZE];
	char		 h_user[FENCED_NAME_MAX];
	char		 h_home[PATH_MAX];	/* inside the fence */
	uint32_t	 h_timeout_def;		/* exec defaults and limits */
	uint32_t	 h_timeout_max;
	uint32_t	 h_output_def;
	uint32_t	 h_output_max;
	uint32_t	 h_egress;	/* 1: listen on 127.0.0.1:
					   EGRESS_PROXY_PORT, set the
					   proxy variables (docs/egress.md) */
	uint32_t	 h_fdpass;	/* 1: the channel passes descriptors:
					   a port tunnel's socket goes to the
					   broker (docs/interactive.md) */
};

#define MSG_ARGV_MAX		256		/* arguments */
#define MSG_ARG_MAX		4096		/* bytes, one argument */
#define MSG_COMMAND_MAX		65536		/* bytes, a sh -c command */
#define MSG_STDIN_MAX		1048576		/* bytes */

/* One command.  Decoded ones own their memory: msg_exec_free(). */
struct msg_exec {
	char		 x_key[FENCE_KEY_SIZE];	/* fencectl -> broker */
	uid_t		 x_owner;	/* fencectl -> broker, or NONE */
	uint8_t		 x_bearer[MSG_BEARER_LEN];
	char		**x_argv;	/* NULL-terminated, or NULL */
	size_t		 x_argc;
	char		*x_command;	/* sh -c, or NULL; one of the two */
	char		 x_cwd[PATH_MAX];	/* "" for HOME */
	uint32_t	 x_timeout_ms;	/* 0: the default */
	uint32_t	 x_max_bytes;	/* 0: the default */
	uint8_t		*x_stdin;
	size_t		 x_stdin_len;
	int		 x_stdin_open;	/* SPAWN: stdin stays open after
					   x_stdin, for PROC_INPUT */
	int		 x_undo;	/* EXEC: the home is kept first, so
					   that POST .../undo takes the
					   command back (docs/snapshots.md);
					   the broker's, never the agent's */
};

/* What became of one command.  Decoded ones: msg_result_free(). */
/*
 * Denials (docs/denials.md).  The fencer tells the broker of each on a
 * socket of their own (IMSG_DENIALS_FD), one struct msg_denial a
 * datagram; the broker adds those of a command to its result, at most
 * MSG_DENIALS_MAX distinct ones, as lines of rs_denials:
 * "LAYER\tCOUNT\tWHAT\tREMEDY\n" (struct msg_denial_line).
 */
enum denial_layer {
	DENIAL_SECCOMP = 1,
	DENIAL_LANDLOCK,
	DENIAL_EGRESS,
	DENIAL_LIMIT,
	DENIAL_LAYER_MAX
};
#define MSG_DENIALS_MAX		32
#define MSG_DENIAL_WHAT_LEN	128
#define MSG_DENIAL_REMEDY_LEN	96
#define MSG_DENIAL_CHAIN_MAX	32	/* pids of a chain */
#define MSG_DENIAL_CHAIN_LEN	(MSG_DENIAL_CHAIN_MAX * 11)
#define MSG_DENIALS_DROPPED_MAX	(1U << 30)
#define MSG_DENIALS_TEXT_MAX	(MSG_DENIALS_MAX * (16 + 11 + \
				    MSG_DENIAL_WHAT_LEN + MSG_DENIAL_REMEDY_LEN))

struct msg_denial {
	uint32_t	 dn_owner;	/* the fence: owner, key, and which
					   boot of it: the host pid of its
					   pid 1 (the fencer's), the broker's
					   egress id of it (the proxy's) */
	char		 dn_key[FENCE_KEY_SIZE];
	uint32_t	 dn_boot;
	uint32_t	 dn_layer;	/* enum denial_layer */
	uint32_t	 dn_count;	/* 1, or more coalesced */
	char		 dn_what[MSG_DENIAL_WHAT_LEN];	/* printable */
	char		 dn_remedy[MSG_DENIAL_REMEDY_LEN];	/* "" none */
	char		 dn_chain[MSG_DENIAL_CHAIN_LEN];	/* in-fence
					   pids, the caller's first, each
					   parent's after it; "" none */
};

struct msg_denial_line {
	uint32_t	 dl_layer;
	uint32_t	 dl_count;
	char		 dl_what[MSG_DENIAL_WHAT_LEN];
	char		 dl_remedy[MSG_DENIAL_REMEDY_LEN];
};

struct msg_result {
	char		 rs_error[MSG_ERROR_CODE_MAX];	/* "" or exec-... */
	char		 rs_message[MSG_ERROR_TEXT_MAX];
	int32_t		 rs_exit;	/* -1 when killed by a signal */
	int32_t		 rs_signal;	/* 0 when it exited */
	uint8_t		*rs_stdout;
	size_t		 rs_stdout_len;
	uint8_t		*rs_stderr;
	size_t		 rs_stderr_len;
	uint32_t	 rs_duration_ms;
	int		 rs_truncated;
	/* The agent's: the in-fence pid of the job's supervisor; 0. */
	uint32_t	 rs_super;
	/* The broker's (docs/denials.md): what was refused, lines. */
	char		*rs_denials;
	uint32_t	 rs_denials_dropped;	/* distinct ones past the max */
	char		 rs_denials_note[MSG_DENIAL_NOTE_LEN];	/* "" or
					   why denials are not observed */
};

/*
 * Streamed exec (docs/agent.md, "Streaming"): the agent sends at most
 * MSG_STREAM_WINDOW bytes of CHUNK data of a job that its peer has not
 * given back as CREDIT, each CHUNK at most MSG_CHUNK_MAX bytes.
 */
#define MSG_STREAM_WINDOW	(256 * 1024)
#define MSG_CHUNK_MAX		(64 * 1024)
#define MSG_CHUNK_STDOUT	1
#define MSG_CHUNK_STDERR	2

/* Decoded ones own ch_data: msg_chunk_free(). */
struct msg_chunk {
	uint32_t	 ch_stream;	/* MSG_CHUNK_STDOUT or _STDERR */
	uint8_t		*ch_data;
	size_t		 ch_len;	/* 1..MSG_CHUNK_MAX */
};

/* CREDIT and CANCEL; ih_peerid names the streamed request. */
struct msg_credit {
	uint8_t		 cr_bearer[MSG_BEARER_LEN];
	uint32_t	 cr_bytes;	/* CREDIT: 1..MSG_STREAM_WINDOW */
};

/*
 * Tunnels (docs/interactive.md): a byte stream between the broker and
 * something inside a fence, named by the id of the TUNNEL_OPEN that
 * made it.  A framed tunnel's DATA go both ways, at most
 * MSG_TUNNEL_WINDOW bytes a side has not had back as CREDIT.  The
 * broker's DATA, CREDIT and CLOSE carry the fence's bearer; the
 * agent's carry none (all zero).
 */
#define MSG_TUNNEL_PORT		1	/* 127.0.0.1:port in the fence */
#define MSG_TUNNEL_TERMINAL	2	/* terminal to_id */
#define MSG_TUNNEL_OUTPUT	3	/* background process to_id's
					   output to_stream */
#define MSG_TUNNEL_KIND_MAX	3
#define MSG_TUNNEL_FD		1	/* IMSG_AGENT_TUNNEL: fd attached */
#define MSG_TUNNEL_FRAMED	2	/* IMSG_AGENT_TUNNEL: DATA frames */
#define MSG_TUNNEL_WINDOW	(256 * 1024)
#define MSG_TUNNEL_DATA_MAX	(64 * 1024)
#define MSG_TUNNEL_SHUT		1	/* CLOSE: no more from this side */
#define MSG_TUNNEL_ABORT	2	/* CLOSE: the whole tunnel, now */

struct msg_tunnel_open {
	char		 to_key[FENCE_KEY_SIZE];	/* fencectl -> broker */
	uid_t		 to_owner;	/* fencectl -> broker, or NONE */
	uint8_t		 to_bearer[MSG_BEARER_LEN];
	uint32_t	 to_kind;	/* MSG_TUNNEL_PORT ... */
	uint32_t	 to_port;	/* PORT: 1..65535, else 0 */
	uint32_t	 to_id;		/* TERMINAL, OUTPUT: which; PORT: 0 */
	uint32_t	 to_stream;	/* OUTPUT: MSG_CHUNK_STDOUT or _STDERR;
					   else 0 */
	uint64_t	 to_offset;	/* TERMINAL: bytes of the ring to
					   replay; OUTPUT: from where; PORT 0 */
};

struct msg_tunnel {
	uint32_t	 tn_mode;	/* MSG_TUNNEL_FD or MSG_TUNNEL_FRAMED */
};

/* Decoded ones own td_data: msg_tunnel_data_free(). */
struct msg_tunnel_data {
	uint8_t		 td_bearer[MSG_BEARER_LEN];
	uint8_t		*td_data;
	size_t		 td_len;	/* 1..MSG_TUNNEL_DATA_MAX */
};

struct msg_tunnel_credit {
	uint8_t		 tc_bearer[MSG_BEARER_LEN];
	uint32_t	 tc_bytes;	/* 1..MSG_TUNNEL_WINDOW */
};

struct msg_tunnel_close {
	uint8_t		 tl_bearer[MSG_BEARER_LEN];
	uint32_t	 tl_how;	/* MSG_TUNNEL_SHUT or MSG_TUNNEL_ABORT */
};

/* The TCP ports listening on loopback or any address in a fence. */
#define MSG_PORTS_MAX		256
struct msg_ports_req {
	char		 ps_key[FENCE_KEY_SIZE];	/* fencectl -> broker */
	uid_t		 ps_owner;	/* fencectl -> broker, or NONE */
	uint8_t		 ps_bearer[MSG_BEARER_LEN];
};

struct msg_portlist {
	uint32_t	 pl_count;	/* 0..MSG_PORTS_MAX, ascending */
	uint16_t	 pl_ports[MSG_PORTS_MAX];
	int		 pl_truncated;	/* more listened than were kept */
};

/*
 * fencectl port KEY PORT (docs/interactive.md): the URL of the path
 * form, and the URL of a ticket of the host form minted for the caller,
 * set by the broker in its answer.
 */
#define MSG_PORT_URL_LEN	256
struct msg_port_ticket {
	char		 pk_key[FENCE_KEY_SIZE];
	uid_t		 pk_owner;	/* or MSG_OWNER_NONE */
	uint32_t	 pk_port;	/* 1..65535 */
	char		 pk_path[MSG_PORT_URL_LEN];	/* answer */
	char		 pk_url[MSG_PORT_URL_LEN];	/* answer */
	uint32_t	 pk_expires_ms;			/* answer */
};

#define MSG_GIT_VALUE_MAX	256
struct msg_gitconfig {
	char		 g_key[FENCE_KEY_SIZE];	/* fencectl -> broker */
	uid_t		 g_owner;	/* fencectl -> broker, or NONE */
	uint8_t		 g_bearer[MSG_BEARER_LEN];
	int		 g_set_name;	/* write user.name */
	int		 g_set_email;	/* write user.email */
	char		 g_name[MSG_GIT_VALUE_MAX + 1];
	char		 g_email[MSG_GIT_VALUE_MAX + 1];
};

struct msg_gitinit {
	char		 gi_key[FENCE_KEY_SIZE];	/* fencectl -> broker */
	uid_t		 gi_owner;	/* fencectl -> broker, or NONE */
	uint8_t		 gi_bearer[MSG_BEARER_LEN];
	char		 gi_path[PATH_MAX];	/* "" for HOME */
};

/*
 * Files of a fence's home (docs/files.md), moved by its agent in
 * chunks of at most MSG_FILE_CHUNK bytes.  A path is relative to HOME.
 */
#define MSG_FILE_CHUNK		(1024 * 1024)
#define MSG_FILE_NAME_MAX	255		/* one component */
#define MSG_FILE_LIST_MAX	1000		/* entries of a listing */
#define MSG_FILE_TMP_PREFIX	".fenced-put-"

#define MSG_FILE_FIRST		0x01	/* write: make the temporary */
#define MSG_FILE_LAST		0x02	/* write: rename it into place */
#define MSG_FILE_MKDIR		0x04	/* write: make missing parents */
#define MSG_FILE_EXCL		0x08	/* write: refuse an existing name */
#define MSG_FILE_ABORT		0x10	/* write: remove the temporary */
#define MSG_FILE_FLAGS		0x1f

#define MSG_FILE_REG		1
#define MSG_FILE_DIR		2
#define MSG_FILE_LNK		3
#define MSG_FILE_FIFO		4
#define MSG_FILE_SOCK		5
#define MSG_FILE_DEV		6
#define MSG_FILE_OTHER		7

/* One request or answer.  Decoded ones own fl_data: msg_file_free(). */
struct msg_file {
	char		 fl_key[FENCE_KEY_SIZE];	/* fencectl -> broker */
	uid_t		 fl_owner;	/* fencectl -> broker, or NONE */
	uint8_t		 fl_bearer[MSG_BEARER_LEN];
	char		 fl_path[PATH_MAX];
	char		 fl_tmp[MSG_FILE_NAME_MAX + 1];	/* a write's temporary */
	uint32_t	 fl_flags;	/* MSG_FILE_FIRST ... */
	uint32_t	 fl_mode;	/* write: its permissions; answer: st_mode */
	uint32_t	 fl_kind;	/* answer: MSG_FILE_REG ... */
	uint32_t	 fl_length;	/* read: bytes wanted */
	uint64_t	 fl_offset;
	uint64_t	 fl_size;	/* write: the whole; answer: st_size */
	uint64_t	 fl_ino;	/* answer; read: the first answer's, or 0 */
	int64_t		 fl_mtime;	/* answer: unix time */
	int		 fl_created;	/* answer to a last write: it is new */
	uint8_t		*fl_data;
	size_t		 fl_data_len;
};

struct msg_fileent {
	char		 fe_name[MSG_FILE_NAME_MAX + 1];
	uint32_t	 fe_kind;
	uint32_t	 fe_mode;
	uint64_t	 fe_size;
	int64_t		 fe_mtime;
};

/* A directory.  Decoded ones own fls_ents: msg_filelist_free(). */
struct msg_filelist {
	struct msg_fileent *fls_ents;
	size_t		 fls_count;
	int		 fls_truncated;	/* more than MSG_FILE_LIST_MAX */
};

/*
 * Host tokens of the HTTP API: HOSTTOKEN_BYTES random bytes, shown once
 * as lowercase hex, kept by the broker and stored by the parent only as
 * their SHA-256.
 */
#define HOSTTOKEN_BYTES		32
#define HOSTTOKEN_TEXT		(HOSTTOKEN_BYTES * 2)
#define HOSTTOKEN_HASH		32		/* SHA-256 */
#define HOSTTOKEN_MAX		8192		/* tokens stored, all users */
#define HOSTTOKEN_PER_USER	16		/* one user's, named */
#define HOSTTOKEN_NAME_MAX	32		/* [A-Za-z0-9._-]{1,32} */
#define HOSTTOKEN_NAME_DEFAULT	"default"	/* `fencectl token' alone */

/* A stored token (broker <-> parent): never the token, only its hash. */
struct msg_token {
	uid_t		 tk_uid;
	char		 tk_name[HOSTTOKEN_NAME_MAX + 1];
	int64_t		 tk_created;	/* unix seconds */
	uint8_t		 tk_hash[HOSTTOKEN_HASH];	/* zero: tk_delete */
	uint32_t	 tk_delete;	/* IMSG_TOKEN_STORE: remove it */
};

struct msg_hosttoken {
	uid_t		 ht_uid;
	char		 ht_name[HOSTTOKEN_NAME_MAX + 1];
	char		 ht_token[HOSTTOKEN_TEXT + 1];
};

/* IMSG_CTL_TOKEN: what to do with the caller's token of that name. */
enum ctltoken_op {
	CTLTOKEN_MINT = 0,	/* a new one; refused if the name is taken */
	CTLTOKEN_REPLACE,	/* a new one in place of the old, if any */
	CTLTOKEN_DELETE
};

struct msg_ctltoken {
	uint32_t	 ct_op;		/* enum ctltoken_op */
	char		 ct_name[HOSTTOKEN_NAME_MAX + 1];
};

/* IMSG_CTL_TOKENINFO: one of the caller's tokens, without its secret. */
struct msg_tokeninfo {
	char		 ti_name[HOSTTOKEN_NAME_MAX + 1];
	int64_t		 ti_created;
};

/*
 * IMSG_AUDIT: one event of the audit log (docs/audit.md), as the broker
 * saw it.  The parent formats and escapes it; the broker sends fields,
 * never a line.  What au_what, au_text and au_num hold depends on the
 * kind (audit_kinds[] in parent/audit.c names them in the line).
 */
enum audit_kind {
	AUDIT_BOOT = 1,		/* a boot: outcome */
	AUDIT_EXEC,		/* argv (or au_text: a command), au_cwd */
	AUDIT_FILE,		/* a write: au_text the path, au_num bytes */
	AUDIT_TERM,		/* au_what "open" or "close", au_num its id */
	AUDIT_PORT,		/* a relayed connection: au_num the port,
				   au_text whence */
	AUDIT_STOP,		/* au_what why */
	AUDIT_TOKEN,		/* au_what "create", "replace" or "delete",
				   au_text the token's name */
	AUDIT_DENIAL,		/* au_what the layer, au_text what,
				   au_num how many */
	AUDIT_KIND_MAX = AUDIT_DENIAL
};

enum audit_via {
	AUDIT_VIA_CONTROL = 1,	/* the control socket: au_uid its peer's */
	AUDIT_VIA_HTTP,		/* the API: au_uid the token's owner */
	AUDIT_VIA_DAEMON	/* nobody asked (a lifetime's end, a denial) */
};

#define AUDIT_ARGS_MAX		32	/* an exec's arguments kept */
#define AUDIT_ARG_SIZE		256	/* bytes of each, its NUL included */
#define AUDIT_TEXT_SIZE		1024	/* a command, a path; NUL included */
#define AUDIT_WORD_SIZE		48	/* an outcome, a why: [a-z0-9.-] */

/*
 * `fencectl show audit': the last ar_count lines of the log that are
 * ar_uid's (its uid or the fence's owner), or every line for an admin;
 * each line as written, without its newline.
 */
#define AUDIT_SHOW_DEFAULT	20
#define AUDIT_SHOW_MAX		1000
#define AUDIT_LINE_MAX		(128U * 1024)	/* a line, its NUL included */

struct msg_audit_read {
	uid_t		 ar_uid;
	uint32_t	 ar_admin;
	uint32_t	 ar_count;
};

struct msg_audit_line {
	char		*al_line;	/* 0x20..0x7e alone */
};

struct msg_audit {
	uint32_t	 au_kind;		/* enum audit_kind */
	uint32_t	 au_via;		/* enum audit_via */
	uid_t		 au_uid;		/* who asked */
	char		 au_token[HOSTTOKEN_NAME_MAX + 1];	/* or "" */
	char		 au_key[FENCE_KEY_SIZE];	/* "" for a token */
	uid_t		 au_owner;	/* the fence's, or MSG_OWNER_NONE */
	char		 au_outcome[AUDIT_WORD_SIZE];	/* "ok" or a code */
	char		 au_what[AUDIT_WORD_SIZE];
	char		 au_text[AUDIT_TEXT_SIZE];	/* any bytes */
	char		 au_cwd[AUDIT_TEXT_SIZE];	/* any bytes */
	uint64_t	 au_num;
	uint32_t	 au_truncated;	/* an argument or a text was cut */
	uint32_t	 au_nargs;	/* the exec's, even past the kept */
	char		 au_argv[AUDIT_ARGS_MAX][AUDIT_ARG_SIZE];
};

/* The warm pool of one tier (docs/pool.md), counted since start. */
struct msg_pool_tier {
	uint32_t	 pt_size;		/* configured: `pool TIER N' */
	uint32_t	 pt_ready;		/* waiting for a boot now */
	uint64_t	 pt_taken;		/* boots that took one */
	uint64_t	 pt_refilled;		/* built and ready */
	uint64_t	 pt_failed;		/* builds or takes that failed,
						   deaths of idle ones */
};

struct msg_pool {
	struct msg_pool_tier p_tier[3];		/* TIER_L1 - 1 ... */
};

struct msg_stats {
	pid_t		 st_pid[PROC_MAX];
	int64_t		 st_started;		/* unix time */
	int64_t		 st_now;		/* unix time */
	uint64_t	 st_ctl_conns;		/* control connections accepted */
	uint64_t	 st_ctl_active;		/* open now */
	uint64_t	 st_ctl_requests;	/* requests served */
	uint64_t	 st_ctl_errors;		/* malformed or refused */
	uint64_t	 st_fences;		/* fences running */
	int32_t		 st_verbose;
	struct msg_pool	 st_pool;
};

/* imsg/msg.c */
const char	*msg_type_name(uint32_t);

int	 msg_empty_decode(const void *, size_t);
int	 msg_u32_encode(uint32_t, void **, size_t *);
int	 msg_u32_decode(const void *, size_t, uint32_t *, uint32_t, uint32_t);
int	 msg_i32_encode(int32_t, void **, size_t *);
int	 msg_i32_decode(const void *, size_t, int32_t *, int32_t, int32_t);
int	 msg_config_encode(const struct fenced_config *, void **, size_t *);
int	 msg_config_decode(const void *, size_t, struct fenced_config *);
/* imsg/msg_fence.c, for msg_config_*: the ceilings and per-user totals */
struct mc_table;
extern const struct mc_table msg_ceilings;
int	 msg_config_ceilings_valid(const struct fenced_config *);
int	 msg_procinfo_encode(const struct msg_procinfo *, void **, size_t *);
int	 msg_procinfo_decode(const void *, size_t, struct msg_procinfo *);
int	 msg_error_encode(const struct msg_error *, void **, size_t *);
int	 msg_error_vformat(void **, size_t *, const char *, const char *,
	    va_list) __attribute__((format(printf, 4, 0)));
int	 msg_error_format(void **, size_t *, const char *, const char *, ...)
	    __attribute__((format(printf, 4, 5)));
int	 msg_error_decode(const void *, size_t, struct msg_error *);
int	 msg_stats_encode(const struct msg_stats *, void **, size_t *);
int	 msg_stats_decode(const void *, size_t, struct msg_stats *);
int	 msg_pool_encode(const struct msg_pool *, void **, size_t *);
int	 msg_pool_decode(const void *, size_t, struct msg_pool *);

/*
 * A fence's measured boundary: its level (enum probe_level of
 * common/names.h) and the verdicts as the JSON the API shows; and, for
 * the broker's state and refusals, what it needs of them typed (the
 * prober fills in both): the kernel that answered, each axis's verdict
 * by name, in the order shown, and every violation.  Every string is
 * printable ASCII.  Decoded ones own v_json: msg_verdict_free().
 */
#define MSG_VERDICT_JSON_MAX	(64 * 1024)
#define MSG_VERDICT_AXES_MAX	8
#define MSG_VERDICT_NAME_LEN	32	/* an axis's name, its verdict's */
#define MSG_VERDICT_VIOLATIONS_MAX 128
#define MSG_VERDICT_VIOLATION_LEN 128
struct msg_verdict_axis {
	char		 va_name[MSG_VERDICT_NAME_LEN];	/* "kernel" */
	char		 va_verdict[MSG_VERDICT_NAME_LEN];	/* "shared" */
};
struct msg_verdict {
	char		 v_key[FENCE_KEY_SIZE];
	int		 v_level;
	char		*v_json;
	int		 v_kernel;	/* MSG_KERNEL_* */
	char		 v_kernel_release[MSG_KERNEL_RELEASE_LEN];
	uint32_t	 v_naxes;
	struct msg_verdict_axis v_axes[MSG_VERDICT_AXES_MAX];
	uint32_t	 v_nviolations;
	char		 v_violations[MSG_VERDICT_VIOLATIONS_MAX]
			    [MSG_VERDICT_VIOLATION_LEN];
	char		 v_surface[MSG_SURFACE_LEN];	/* the surface axis
					   in a line, printable */
};

/* What the prober needs: the host's side of the story, and the report. */
struct probe_expect;
struct msg_probe_report {
	char		 pr_key[FENCE_KEY_SIZE];
	struct probe_expect *pr_expect;
	uint8_t		*pr_report;	/* raw, from inside the fence */
	size_t		 pr_report_len;
};

/* imsg/msg_probe.c */
int	 msg_verdict_encode(const struct msg_verdict *, void **, size_t *);
int	 msg_verdict_decode(const void *, size_t, struct msg_verdict *);
void	 msg_verdict_free(struct msg_verdict *);
int	 msg_probe_report_encode(const struct msg_probe_report *, void **,
	    size_t *);
int	 msg_probe_report_decode(const void *, size_t,
	    struct msg_probe_report *);
void	 msg_probe_report_free(struct msg_probe_report *);

/* imsg/msg_fence.c */
int	 msg_boot_encode(const struct msg_boot *, void **, size_t *);
int	 msg_boot_decode(const void *, size_t, struct msg_boot *);
/*
 * Snapshots of a fence's home (docs/snapshots.md).  A snapshot is named
 * by its owner, the key of the fence it was taken of, and a name of the
 * same form as a key.
 */
enum msg_snap_op {
	SNAP_CREATE = 1,	/* s_name: the new one's ("": a time) */
	SNAP_LIST,		/* s_key "": every one of the owner's */
	SNAP_DELETE,
	SNAP_RESTORE,		/* the home becomes s_name again */
	SNAP_UNDO_MARK,		/* keep the home for an undo (the broker,
				   before an exec with x_undo) */
	SNAP_UNDO		/* the home goes back to the mark */
};
#define SNAP_OP_MAX		SNAP_UNDO

struct msg_snap {
	char		 s_key[FENCE_KEY_SIZE];
	char		 s_name[FENCE_KEY_SIZE];
	uid_t		 s_owner;	/* whose, or MSG_OWNER_NONE */
	uid_t		 s_uid;		/* who asks */
	int		 s_admin;
	int		 s_op;		/* enum msg_snap_op */
};

#define SNAP_HOW_SIZE		16
struct msg_snap_info {
	char		 sn_key[FENCE_KEY_SIZE];
	char		 sn_name[FENCE_KEY_SIZE];	/* "" : the undo mark */
	uid_t		 sn_owner;
	uid_t		 sn_uid;	/* whose files it holds */
	int64_t		 sn_created;	/* unix seconds */
	uint64_t	 sn_bytes;	/* of its files (st_size) */
	uint64_t	 sn_files;
	uint64_t	 sn_disk;	/* on disk, not shared */
	uint64_t	 sn_shared;	/* bytes shared by reflinks */
	uint32_t	 sn_branches;	/* homes built on it */
	uint32_t	 sn_us;		/* what the operation took */
	int		 sn_frozen;	/* the fence was paused for it */
	char		 sn_how[SNAP_HOW_SIZE];	/* "copy", "reflink", ... */
};

int	 msg_snap_encode(const struct msg_snap *, void **, size_t *);
int	 msg_snap_decode(const void *, size_t, struct msg_snap *);
int	 msg_snap_info_encode(const struct msg_snap_info *, void **, size_t *);
int	 msg_snap_info_decode(const void *, size_t, struct msg_snap_info *);
/*
 * One row of the host doctor's report (docs/doctor.md): a check of the
 * host, a backend's, or a tier's verdict.  hc_reason and hc_fix name no
 * host path; hc_detail (paths, versions, hashes, cgroup folders) is for
 * root and the admin group alone.
 */
enum check_kind {
	CHECK_HOST = 1,		/* a kernel or host feature */
	CHECK_BACKEND,		/* native, runsc, vm */
	CHECK_TIER		/* L1 ... L4: can a fence be built */
};
#define CHECK_KIND_MAX		CHECK_TIER
enum check_status {
	CHECK_OK = 0,
	CHECK_WARN,		/* boots go on; something is weaker */
	CHECK_FAIL		/* boots that need it are refused */
};
#define CHECK_STATUS_MAX	CHECK_FAIL
#define MSG_CHECK_NAME		32
#define MSG_CHECK_TEXT		384
#define MSG_CHECK_DETAIL	768
struct msg_check {
	int		 hc_kind;	/* enum check_kind */
	char		 hc_name[MSG_CHECK_NAME];	/* "cgroups", "L1.5" */
	int		 hc_status;	/* enum check_status */
	int		 hc_default;	/* a tier row: the configured default
					   tier and backend */
	char		 hc_reason[MSG_CHECK_TEXT];	/* "" when ok */
	char		 hc_fix[MSG_CHECK_TEXT];	/* "" when ok */
	char		 hc_detail[MSG_CHECK_DETAIL];	/* admins only */
};

int	 msg_check_encode(const struct msg_check *, void **, size_t *);
int	 msg_check_decode(const void *, size_t, struct msg_check *);
int	 msg_fence_req_encode(const struct msg_fence_req *, void **, size_t *);
int	 msg_fence_req_decode(const void *, size_t, struct msg_fence_req *);
int	 msg_fence_encode(const struct msg_fence *, void **, size_t *);
int	 msg_fence_decode(const void *, size_t, struct msg_fence *);
int	 msg_owner_name_valid(const char *, int);

/* imsg/msg_token.c */
int	 msg_audit_encode(const struct msg_audit *, void **, size_t *);
int	 msg_audit_decode(const void *, size_t, struct msg_audit *);
int	 msg_audit_word_valid(const char *, size_t);
int	 msg_audit_read_encode(const struct msg_audit_read *, void **,
	    size_t *);
int	 msg_audit_read_decode(const void *, size_t, struct msg_audit_read *);
int	 msg_audit_line_encode(const struct msg_audit_line *, void **,
	    size_t *);
int	 msg_audit_line_decode(const void *, size_t, struct msg_audit_line *);
void	 msg_audit_line_free(struct msg_audit_line *);
int	 msg_token_encode(const struct msg_token *, void **, size_t *);
int	 msg_token_decode(const void *, size_t, struct msg_token *);
int	 msg_hosttoken_encode(const struct msg_hosttoken *, void **, size_t *);
int	 msg_hosttoken_decode(const void *, size_t, struct msg_hosttoken *);
int	 hosttoken_text_valid(const char *, size_t);
int	 hosttoken_name_valid(const char *);
int	 msg_ctltoken_encode(const struct msg_ctltoken *, void **, size_t *);
int	 msg_ctltoken_decode(const void *, size_t, struct msg_ctltoken *);
int	 msg_tokeninfo_encode(const struct msg_tokeninfo *, void **, size_t *);
int	 msg_tokeninfo_decode(const void *, size_t, struct msg_tokeninfo *);

/* imsg/msg_agent.c */
int	 msg_egress_list_valid(const char [][EGRESS_ENTRY_LEN], uint32_t);
int	 msg_egress_fence_encode(const struct msg_egress_fence *, void **,
	    size_t *);
int	 msg_egress_fence_decode(const void *, size_t,
	    struct msg_egress_fence *);
int	 msg_egress_decision_encode(const struct msg_egress_decision *,
	    void **, size_t *);
int	 msg_egress_decision_decode(const void *, size_t,
	    struct msg_egress_decision *);
int	 msg_hello_encode(const struct msg_hello *, void **, size_t *);
int	 msg_hello_decode(const void *, size_t, struct msg_hello *);
int	 msg_exec_encode(const struct msg_exec *, void **, size_t *);
int	 msg_exec_decode(const void *, size_t, struct msg_exec *);
void	 msg_exec_free(struct msg_exec *);
int	 msg_result_encode(const struct msg_result *, void **, size_t *);
int	 msg_denial_encode(const struct msg_denial *, void **, size_t *);
int	 msg_denial_decode(const void *, size_t, struct msg_denial *);
const char *msg_denial_layer_name(uint32_t);
int	 msg_denial_line_format(const struct msg_denial_line *, char *,
	    size_t);
int	 msg_denials_parse(const char *, struct msg_denial_line *, size_t);
int	 msg_denial_chain(const char *, uint32_t *, size_t);
int	 msg_result_decode(const void *, size_t, struct msg_result *);
void	 msg_result_free(struct msg_result *);
int	 msg_gitconfig_encode(const struct msg_gitconfig *, void **, size_t *);
int	 msg_gitconfig_decode(const void *, size_t, struct msg_gitconfig *);
int	 msg_gitinit_encode(const struct msg_gitinit *, void **, size_t *);
int	 msg_gitinit_decode(const void *, size_t, struct msg_gitinit *);

/*
 * Background processes (docs/agent.md, "Background processes"): a
 * request about them, and one of them as the agent answers.
 */
#define MSG_PROC_LIST		1	/* every one, without output */
#define MSG_PROC_READ		2	/* one, its output from q_off[] */
#define MSG_PROC_SIGNAL		3	/* signal a running one, or forget
					   one that exited */
#define MSG_PROC_ID_MAX		UINT32_MAX

struct msg_proc_req {
	char		 q_key[FENCE_KEY_SIZE];	/* fencectl -> broker */
	uid_t		 q_owner;	/* fencectl -> broker, or NONE */
	uint8_t		 q_bearer[MSG_BEARER_LEN];
	uint32_t	 q_op;		/* MSG_PROC_* */
	uint32_t	 q_id;		/* READ, SIGNAL: which */
	uint32_t	 q_signal;	/* SIGNAL: SIGHUP, SIGINT, SIGKILL or
					   SIGTERM */
	uint32_t	 q_off[2];	/* READ: of stdout, stderr kept */
};

/* Decoded ones own their memory: msg_proc_free(). */
struct msg_proc {
	uint32_t	 p_id;
	int		 p_running;
	int		 p_forgotten;	/* a SIGNAL of one that had exited */
	uint32_t	 p_count;	/* how many the agent holds now */
	char		**p_argv;	/* as started: argv, or command */
	size_t		 p_argc;
	char		*p_command;
	uint32_t	 p_age_ms;	/* since it started */
	uint32_t	 p_timeout_ms;
	uint32_t	 p_max_bytes;
	uint32_t	 p_kept[2];	/* bytes of stdout, stderr kept */
	uint32_t	 p_off[2];	/* where p_stdout, p_stderr begin */
	/* Once it exited, as msg_result has them. */
	char		 p_error[MSG_ERROR_CODE_MAX];
	char		 p_message[MSG_ERROR_TEXT_MAX];
	int32_t		 p_exit;
	int32_t		 p_signal;
	uint32_t	 p_duration_ms;
	int		 p_truncated;
	uint8_t		*p_stdout;	/* READ: from p_off[0] on */
	size_t		 p_stdout_len;
	uint8_t		*p_stderr;
	size_t		 p_stderr_len;
	/* As msg_result's (docs/denials.md): the agent's supervisor pid,
	   the broker's denials of the process so far. */
	uint32_t	 p_super;
	char		*p_denials;
	uint32_t	 p_denials_dropped;
};

/*
 * A background process's stdin (docs/interactive.md): at most
 * MSG_INPUT_MAX bytes a message, and at most that much pending in the
 * agent per process (more is refused, input-busy); pi_close closes it
 * once what is pending is written.
 */
#define MSG_INPUT_MAX		(64 * 1024)
struct msg_proc_input {
	char		 pi_key[FENCE_KEY_SIZE];	/* fencectl -> broker */
	uid_t		 pi_owner;	/* fencectl -> broker, or NONE */
	uint8_t		 pi_bearer[MSG_BEARER_LEN];
	uint32_t	 pi_id;		/* the process */
	uint8_t		*pi_data;	/* NULL when none */
	size_t		 pi_len;	/* 0..MSG_INPUT_MAX */
	int		 pi_close;	/* then end of file */
};

/*
 * Terminals (docs/interactive.md, "Terminals"): a command on a
 * pseudo-terminal of the fence's own, held by the agent.
 */
#define MSG_TERM_MAX		8		/* per fence */
#define MSG_TERM_DIM_MAX	1000		/* cols, rows: 1..this */
#define MSG_TERM_RING		(64 * 1024)	/* output kept, bytes */
#define MSG_TERM_IDLE_DEF	600		/* s unattached: killed */
#define MSG_TERM_IDLE_MAX	86400
#define MSG_TERM_PROGRAM_LEN	256

/* Decoded ones own their memory: msg_term_open_free(). */
struct msg_term_open {
	char		 to_key[FENCE_KEY_SIZE];	/* fencectl -> broker */
	uid_t		 to_owner;	/* fencectl -> broker, or NONE */
	uint8_t		 to_bearer[MSG_BEARER_LEN];
	char		**to_argv;	/* as exec; neither: the login shell */
	size_t		 to_argc;
	char		*to_command;	/* sh -c */
	char		 to_cwd[PATH_MAX];	/* "" for HOME */
	uint32_t	 to_cols;	/* 1..MSG_TERM_DIM_MAX */
	uint32_t	 to_rows;
	uint32_t	 to_idle_s;	/* 0: MSG_TERM_IDLE_DEF */
};

#define MSG_TERM_LIST		1	/* tq_id 0: every one, else that one */
#define MSG_TERM_RESIZE		2
#define MSG_TERM_KILL		3	/* a running one; one that ended is
					   forgotten */

struct msg_term_req {
	char		 tq_key[FENCE_KEY_SIZE];	/* fencectl -> broker */
	uid_t		 tq_owner;	/* fencectl -> broker, or NONE */
	uint8_t		 tq_bearer[MSG_BEARER_LEN];
	uint32_t	 tq_op;		/* MSG_TERM_* */
	uint32_t	 tq_id;
	uint32_t	 tq_cols;	/* RESIZE */
	uint32_t	 tq_rows;
};

/* One terminal as the agent answers. */
struct msg_term {
	uint32_t	 t_id;		/* 1.., never reused while it runs */
	int		 t_running;
	int		 t_forgotten;	/* a KILL of one that had ended */
	int32_t		 t_exit;	/* once ended: as msg_result */
	int32_t		 t_signal;
	char		 t_why[MSG_ERROR_CODE_MAX];	/* "", "idle",
					   "killed", or an exec-... error */
	uint32_t	 t_cols;
	uint32_t	 t_rows;
	uint32_t	 t_age_ms;
	int		 t_attached;
	uint32_t	 t_kept;	/* bytes in the ring */
	uint32_t	 t_idle_s;
	uint32_t	 t_count;	/* terminals the agent holds now */
	char		 t_program[MSG_TERM_PROGRAM_LEN];	/* printable */
	uint32_t	 t_super;	/* agent: its job's supervisor's
					   in-fence pid, 0 unknown */
	/*
	 * broker: its denials so far (docs/denials.md), as rs_denials,
	 * "" none; a fixed field, so that a decoded one owns no memory.
	 */
	char		 t_denials[MSG_DENIALS_TEXT_MAX];
	uint32_t	 t_denials_dropped;
};

/* imsg/msg_term.c */
int	 msg_term_open_encode(const struct msg_term_open *, void **, size_t *);
int	 msg_term_open_decode(const void *, size_t, struct msg_term_open *);
void	 msg_term_open_free(struct msg_term_open *);
int	 msg_term_req_encode(const struct msg_term_req *, void **, size_t *);
int	 msg_term_req_decode(const void *, size_t, struct msg_term_req *);
int	 msg_term_encode(const struct msg_term *, void **, size_t *);
int	 msg_term_decode(const void *, size_t, struct msg_term *);
int	 msg_proc_input_encode(const struct msg_proc_input *, void **,
	    size_t *);
int	 msg_proc_input_decode(const void *, size_t, struct msg_proc_input *);
void	 msg_proc_input_free(struct msg_proc_input *);

/* imsg/msg_proc.c */
int	 msg_proc_req_encode(const struct msg_proc_req *, void **, size_t *);
int	 msg_proc_req_decode(const void *, size_t, struct msg_proc_req *);
int	 msg_proc_encode(const struct msg_proc *, void **, size_t *);
int	 msg_proc_decode(const void *, size_t, struct msg_proc *);
void	 msg_proc_free(struct msg_proc *);
/* imsg/msg_files.c */
int	 msg_file_encode(const struct msg_file *, void **, size_t *);
int	 msg_file_decode(const void *, size_t, struct msg_file *);
void	 msg_file_free(struct msg_file *);
int	 msg_filelist_encode(const struct msg_filelist *, void **, size_t *);
int	 msg_filelist_decode(const void *, size_t, struct msg_filelist *);
void	 msg_filelist_free(struct msg_filelist *);
/* imsg/msg_stream.c */
int	 msg_chunk_encode(const struct msg_chunk *, void **, size_t *);
int	 msg_chunk_decode(const void *, size_t, struct msg_chunk *);
void	 msg_chunk_free(struct msg_chunk *);
int	 msg_credit_encode(const struct msg_credit *, void **, size_t *);
int	 msg_credit_decode(const void *, size_t, struct msg_credit *);
/* imsg/msg_tunnel.c */
int	 msg_tunnel_open_encode(const struct msg_tunnel_open *, void **,
	    size_t *);
int	 msg_tunnel_open_decode(const void *, size_t,
	    struct msg_tunnel_open *);
int	 msg_tunnel_encode(const struct msg_tunnel *, void **, size_t *);
int	 msg_tunnel_decode(const void *, size_t, struct msg_tunnel *);
int	 msg_tunnel_data_encode(const struct msg_tunnel_data *, void **,
	    size_t *);
int	 msg_tunnel_data_decode(const void *, size_t,
	    struct msg_tunnel_data *);
void	 msg_tunnel_data_free(struct msg_tunnel_data *);
int	 msg_tunnel_credit_encode(const struct msg_tunnel_credit *, void **,
	    size_t *);
int	 msg_tunnel_credit_decode(const void *, size_t,
	    struct msg_tunnel_credit *);
int	 msg_tunnel_close_encode(const struct msg_tunnel_close *, void **,
	    size_t *);
int	 msg_tunnel_close_decode(const void *, size_t,
	    struct msg_tunnel_close *);
int	 msg_ports_req_encode(const struct msg_ports_req *, void **,
	    size_t *);
int	 msg_ports_req_decode(const void *, size_t, struct msg_ports_req *);
int	 msg_portlist_encode(const struct msg_portlist *, void **, size_t *);
int	 msg_portlist_decode(const void *, size_t, struct msg_portlist *);
/* imsg/msg_port.c */
int	 msg_port_ticket_encode(const struct msg_port_ticket *, void **,
	    size_t *);
int	 msg_port_ticket_decode(const void *, size_t,
	    struct msg_port_ticket *);

/*
 * IMSG_FENCE_USAGE: what only the fencer knows, for the metrics
 * (docs/metrics.md): each fence's cgroups as the kernel counts them,
 * and its queues.  At most MSG_USAGE_FENCES_MAX fences, the first the
 * fencer holds; u_fences says how many it holds in all.  A value is
 * there only where uf_have says the kernel keeps it.
 */
#define MSG_USAGE_FENCES_MAX	1024
#define MSG_USAGE_CPU		0x01	/* uf_cpu_usec */
#define MSG_USAGE_MEM		0x02	/* uf_mem_bytes */
#define MSG_USAGE_MEM_PEAK	0x04	/* uf_mem_peak */
#define MSG_USAGE_PIDS		0x08	/* uf_pids */
#define MSG_USAGE_PIDS_PEAK	0x10	/* uf_pids_peak */
#define MSG_USAGE_ALL		0x1f
struct msg_usage_fence {
	char		 uf_key[FENCE_KEY_SIZE];
	uid_t		 uf_owner;
	uint32_t	 uf_have;	/* MSG_USAGE_* */
	uint64_t	 uf_cpu_usec;
	uint64_t	 uf_mem_bytes;
	uint64_t	 uf_mem_peak;
	uint64_t	 uf_pids;
	uint64_t	 uf_pids_peak;
};
struct msg_usage {
	uint32_t	 u_boots_queued;	/* waiting their turn */
	uint32_t	 u_probes_queued;	/* waiting for a slot */
	uint32_t	 u_probes_running;
	uint32_t	 u_probe_slots;		/* at most at once */
	uint32_t	 u_fences;		/* held, all of them */
	uint32_t	 u_nfences;		/* in u_fence[] */
	struct msg_usage_fence u_fence[MSG_USAGE_FENCES_MAX];
};
/* imsg/msg_usage.c */
int	 msg_usage_encode(const struct msg_usage *, void **, size_t *);
int	 msg_usage_decode(const void *, size_t, struct msg_usage *);

#endif /* MSG_H */
