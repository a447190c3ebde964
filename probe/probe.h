/*
 * fence-probe: measures a fence's boundary from inside and prints one
 * JSON report of schema sandbox-probe/1 (docs/probe.md).  It links only
 * libc, writes its JSON by hand and needs nothing from the filesystem
 * it measures, so it also runs in a minimal root.
 */
#ifndef PROBE_H
#define PROBE_H

#include <sys/types.h>
#include <sys/socket.h>

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define PROBE_SCHEMA		"sandbox-probe/1"
#define PROBE_MARKER		".sandbox-probe-"

/* Bounds on what the report carries (docs/probe.md). */
#define PROBE_OUT_MAX		(64 * 1024)	/* the whole report */
#define PROBE_STR_MAX		256	/* bytes of any one string */
#define PROBE_DEPTH_MAX		16	/* JSON nesting the writer allows */
#define PROBE_MOUNT_LINES	32
#define PROBE_CGROUP_LINES	16
#define PROBE_GROUPS_MAX	64
#define PROBE_SECRETS_MAX	4
#define PROBE_TCP_MAX		8
#define PROBE_IFACES_MAX	32
#define PROBE_ADDRS_MAX		4
#define PROBE_OTHER_UIDS	8
#define PROBE_CANARY_SECRET_MAX	64	/* hex digits on stdin */
#define PROBE_DIR_SCAN_MAX	65536	/* entries read from one directory */
#define PROBE_EGRESS_TARGET_LEN	260	/* NAME:PORT of the egress checks:
					   253 + 1 + 5 and the NUL */
#define PROBE_EGRESS_HEAD_MAX	1024	/* bytes of the proxy's answer */
#define PROBE_EGRESS_CODE_LEN	32	/* X-Fenced-Egress, NUL included */

/* Time bounds, in milliseconds. */
#define PROBE_DNS_MS		4000
#define PROBE_TCP_MS		1500
/*
 * The privilege children: each refused call of an L1.5 or L2 fence
 * waits for the fencer's answer (docs/denials.md), one turn of its loop,
 * which a burst of boots makes long on a slow machine (a guest under
 * TCG: 2 s was not enough for ten at once).  Under PROBE_BACKSTOP_SEC.
 */
#define PROBE_PRIV_MS		6000
#define PROBE_EGRESS_MS		2000	/* the proxy's answer, from the start
					   of its connect (itself within
					   PROBE_TCP_MS) */
#define PROBE_BACKSTOP_SEC	9	/* the alarm: under exec's 10 s */

/* The name spaces of /proc/self/ns the report names. */
enum probe_ns {
	PROBE_NS_CGROUP,
	PROBE_NS_IPC,
	PROBE_NS_MNT,
	PROBE_NS_NET,
	PROBE_NS_PID,
	PROBE_NS_TIME,
	PROBE_NS_USER,
	PROBE_NS_UTS,
	PROBE_NS_MAX
};

struct probe_target {
	char		 pt_host[PROBE_STR_MAX];
	char		 pt_port[8];
	char		 pt_text[PROBE_STR_MAX + 16];	/* as given */
};

struct probe_opts {
	uint64_t	 po_host_ns[PROBE_NS_MAX];	/* 0: not given */
	const char	*po_secrets[PROBE_SECRETS_MAX];
	int		 po_nsecrets;
	pid_t		 po_host_pid;			/* 0: not given */
	long long	 po_deadline;			/* 0: not given */
	const char	*po_dns;
	struct probe_target po_tcp[PROBE_TCP_MAX];
	int		 po_ntcp;
	struct probe_target po_canary;
	int		 po_has_canary;
	int		 po_secret_stdin;		/* read the secret */
	char		 po_canary_secret[PROBE_CANARY_SECRET_MAX + 1];
	int		 po_no_outbound;		/* canary and lo only */
	/* The egress checks: through the fence's proxy, if given. */
	struct probe_target po_egress_proxy;
	int		 po_has_egress;
	char		 po_egress_allowed[PROBE_EGRESS_TARGET_LEN]; /* "": none */
	char		 po_egress_refused[PROBE_EGRESS_TARGET_LEN];
	char		 po_when[40];			/* ISO 8601, UTC */
	int		 po_markers_removed;
	int		 po_timings;	/* each step's time on stderr */
};

/*
 * The JSON writer: one fixed buffer, every string escaped and cut at
 * PROBE_STR_MAX bytes.  When something does not fit, jw_full is set and
 * the section in progress is rolled back by probe_section_end().
 */
struct jw {
	char		 jw_buf[PROBE_OUT_MAX];
	size_t		 jw_len;
	int		 jw_full;
	int		 jw_closing;
	int		 jw_depth;
	int		 jw_first[PROBE_DEPTH_MAX];
	/* The end of the last complete section, for the alarm handler. */
	volatile sig_atomic_t jw_committed;
	size_t		 jw_mark;
	int		 jw_mark_depth;
	int		 jw_mark_first;
};

/* probe_json.c */
void	jw_init(struct jw *);
void	jw_obj_open(struct jw *, const char *);
void	jw_obj_close(struct jw *);
void	jw_arr_open(struct jw *, const char *);
void	jw_arr_close(struct jw *);
void	jw_str(struct jw *, const char *, const char *);
void	jw_strn(struct jw *, const char *, const char *, size_t);
void	jw_target(struct jw *, const char *, const char *);
void	jw_int(struct jw *, const char *, long long);
void	jw_uint(struct jw *, const char *, unsigned long long);
void	jw_bool(struct jw *, const char *, int);
void	jw_null(struct jw *, const char *);
void	jw_err(struct jw *, const char *, int);
void	jw_finish(struct jw *, const char *const *, int);
void	probe_section_begin(struct jw *, const char *);
int	probe_section_end(struct jw *);

/* probe_util.c */
const char *probe_errname(int);
const char *probe_signame(int, char *, size_t);
ssize_t	probe_read_file(const char *, char *, size_t);
int	probe_status_field(const char *, const char *, char *, size_t);
long long probe_ms_since(const struct timespec *);
void	probe_child_add(pid_t);
void	probe_child_del(pid_t);
void	probe_children_kill(void);
void	probe_child_setup(void);
int	probe_wait_until(pid_t, int *, const struct timespec *);
void	probe_deadline(struct timespec *, int);
int	probe_ms_left(const struct timespec *);

/* The sections, in the order of the report. */
void	probe_identity(struct jw *, const struct probe_opts *);
void	probe_hints(struct jw *, const struct probe_opts *);
void	probe_filesystem(struct jw *, const struct probe_opts *);
void	probe_processes(struct jw *, const struct probe_opts *);
void	probe_limits(struct jw *, const struct probe_opts *);
void	probe_tools(struct jw *, const struct probe_opts *);
void	probe_privileges(struct jw *, const struct probe_opts *);
void	probe_privileges_start(struct probe_opts *);
void	probe_surface(struct jw *, const struct probe_opts *);
void	probe_network(struct jw *, const struct probe_opts *);

/* probe_egress.c: the "egress" object of the network section. */
int	probe_egress_target_valid(const char *);
void	probe_egress(struct jw *, const struct probe_opts *);

/* probe_hints.c: the names of enum probe_ns, as in /proc/self/ns. */
extern const char *const probe_ns_names[PROBE_NS_MAX];

/* probe_fs.c: at start, before any section. */
int	probe_markers_clean(const struct probe_opts *);

#endif /* PROBE_H */
