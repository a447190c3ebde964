#ifndef BROKER_H
#define BROKER_H

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/tree.h>
#include <stdint.h>
#include <time.h>

#include <jansson.h>

#include "msg.h"
#include "proc.h"

struct broker_stats {
	uint64_t	 bs_ctl_conns;
	uint64_t	 bs_ctl_requests;
	uint64_t	 bs_ctl_errors;
	struct msg_pool	 bs_pool;	/* the fencer's, as it last said */
};

extern struct proc_self		 broker_self;
extern struct broker_stats	 broker_stats;
extern struct msg_procinfo	 broker_procinfo;

/* inflight.c: the one registry of requests in flight */
struct inflight;
struct inflight_kind {
	const char	*ik_name;
	void		(*ik_orphan)(struct inflight *);	/* maker gone */
};
struct inflight {
	RB_ENTRY(inflight)	 in_node;	/* by in_id */
	TAILQ_ENTRY(inflight)	 in_entry;	/* oldest first */
	uint32_t		 in_id;
	const struct inflight_kind *in_kind;
	void			*in_maker;	/* the front end's */
};
void		 inflight_add(struct inflight *, const struct inflight_kind *,
		    void *);
void		 inflight_remove(struct inflight *);
struct inflight	*inflight_find(uint32_t, const struct inflight_kind *);
struct inflight	*inflight_next(struct inflight *,
		    const struct inflight_kind *);
void		 inflight_orphan(void *);

/* audit.c: events of the audit log, to the parent (docs/audit.md) */
struct svc_who;
struct msg_audit;
void	audit_text(char *, size_t, const char *, uint32_t *);
uint32_t audit_via(const struct svc_who *);
struct msg_audit *audit_new(uint32_t, uid_t, uint32_t, const char *, uid_t,
	    const char *);
struct msg_audit *audit_new_who(uint32_t, const struct svc_who *, uid_t,
	    const char *);
void	audit_send(struct msg_audit *, const char *);
void	audit_file(const struct svc_who *, uid_t, const char *, const char *,
	    uint64_t, const char *);
void	audit_token(uid_t, const char *, const char *, const char *);
void	audit_port(const struct svc_who *, uid_t, const char *, uint16_t,
	    const char *, const char *);
void	audit_denial(struct msg_audit *, const char *, const char *, uint64_t);

/* control.c */
void	control_listen(int);
void	control_shutdown(void);
void	control_reloaded(struct imsg *);
void	control_audit_answer(struct imsg *);

/* http.c: the HTTP API (its own header is http.h) */
void	http_listen(int);
void	http_start(void);
void	http_configure(void);
void	http_shutdown(void);

/* splice.c: two sockets relayed to each other, both ways */
int	splice_new(int, int, void (*)(void *), void *);

/* token.c */
typedef void	(*token_cb)(void *, const struct msg_hosttoken *, int);
void	token_load(struct imsg *);
void	token_stored(struct imsg *);
int	token_lookup(const char *, size_t, uid_t *);
int	token_lookup_name(const char *, size_t, uid_t *, char *, size_t);
int	token_request(uid_t, enum ctltoken_op, const char *, token_cb, void *,
	    const char **, const char **);
void	token_list(uid_t, void (*)(void *, const struct msg_tokeninfo *),
	    void *);


/*
 * service.c: the fence service, the one place the broker keeps fences'
 * state and decides about them; control.c and http_api.c are its front
 * ends.
 */

/* Who asks, as the front end knows it (never from what a client says). */
struct svc_who {
	uid_t		 w_uid;		/* from the kernel, or the token */
	int		 w_admin;	/* may act on others' fences */
	int		 w_unbounded;	/* not held to exec inflight */
	const char	*w_noun;	/* "fence" or "environment" */
	const char	*w_token;	/* the token's name, or NULL */
};

enum svc_what {
	SVC_FENCE = 1,	/* a_fence, a_boundary, a_rendered */
	SVC_VERDICT,	/* a_key, a_level, a_boundary */
	SVC_RESULT,	/* a_result, and a_raw as the agent sent it */
	SVC_IDENTITY,	/* a_git, its bearer wiped */
	SVC_ERROR,	/* a_code, a_message */
	SVC_END,	/* after the fences of a stop of all, the
			   processes of a listing */
	SVC_PROC,	/* a_proc: a background process */
	SVC_FILE,	/* a_file: a file request's answer */
	SVC_FILE_LIST,	/* a_filelist: a directory's entries */
	SVC_CHUNK,	/* a_chunk, a_id: output of a streamed exec */
	SVC_TERM,	/* a_term: a terminal (svc_term.c) */
	SVC_TUNNEL,	/* a_fd, a_id: a tunnel is open (svc_tunnel_open) */
	SVC_PORTS,	/* a_ports: what listens in a fence */
	SVC_SNAP,	/* a_snap: a snapshot (svc_snap.c) */
	SVC_TEXT,	/* a_text, a_textlen: the metrics (svc_metrics()) */
	SVC_CHECK	/* a_check: a row of the host doctor (svc_host.c) */
};

/*
 * One answer to a front end.  Nothing in it outlives the callback but
 * *a_rendered: a front end may keep its own rendering of a fence's
 * state there (malloc'd), which the service frees when the state
 * changes or the fence goes.
 */
struct svc_answer {
	enum svc_what		 a_what;
	int			 a_last;	/* the request is over */
	const struct msg_fence	*a_fence;	/* its bearer zero */
	const char		*a_boundary;	/* the verdicts, JSON, or NULL */
	char		       **a_rendered;	/* NULL: not from a record */
	const char		*a_key;
	int			 a_level;
	const struct msg_result	*a_result;
	const void		*a_raw;
	size_t			 a_rawlen;
	const struct msg_gitconfig *a_git;
	const char		*a_code;
	const char		*a_message;
	const struct msg_proc	*a_proc;
	const struct msg_file	*a_file;
	const struct msg_filelist *a_filelist;
	const struct msg_chunk	*a_chunk;
	uint32_t		 a_id;		/* for svc_stream_credit() */
	const struct svc_egress	*a_egress;	/* SVC_FENCE: its recent
						   decisions; NULL */
	const struct msg_term	*a_term;	/* SVC_TERM */
	int			 a_fd;		/* SVC_TUNNEL: the maker's */
	const char		*a_label;	/* SVC_FENCE of a running
						   fence: its host label */
	const struct msg_portlist *a_ports;	/* SVC_PORTS */
	const struct msg_snap_info *a_snap;	/* SVC_SNAP */
	const char		*a_text;	/* SVC_TEXT, a_textlen bytes */
	size_t			 a_textlen;
	const struct msg_check	*a_check;	/* SVC_CHECK */
};
typedef void	(*svc_cb)(void *, const struct svc_answer *);

void		 svc_boot(const struct svc_who *, struct msg_boot *, svc_cb,
		    void *);
void		 svc_stop(const struct svc_who *, uid_t, const char *,
		    svc_cb, void *);
int		 svc_list(const struct svc_who *, uid_t, const char *,
		    svc_cb, void *);
int		 svc_fence_known(const struct svc_who *, uid_t, const char *);
void		 svc_probe(const struct svc_who *, uid_t, const char *, int,
		    svc_cb, void *);
void		 svc_exec(const struct svc_who *, struct msg_exec *, svc_cb,
		    void *);
void		 svc_exec_stream(const struct svc_who *, struct msg_exec *,
		    svc_cb, void *);
void		 svc_stream_credit(uint32_t, void *, size_t);
void		 svc_git_config(const struct svc_who *,
		    struct msg_gitconfig *, svc_cb, void *);
void		 svc_git_init(const struct svc_who *, struct msg_gitinit *,
		    svc_cb, void *);
void		 svc_spawn(const struct svc_who *, struct msg_exec *,
		    svc_cb, void *);
void		 svc_procs(const struct svc_who *, struct msg_proc_req *,
		    svc_cb, void *);
void		 svc_file(const struct svc_who *, uint32_t, struct msg_file *,
		    svc_cb, void *);
/*
 * svc_tunnel.c: tunnels into a fence (docs/interactive.md).  The one
 * answer is SVC_TUNNEL (not the last: the tunnel counts from the
 * request until svc_tunnel_close()) with a connected, non-blocking
 * SOCK_STREAM descriptor the maker owns from then on, or SVC_ERROR.
 * The maker calls svc_tunnel_close(a_id, arg) when it closes that
 * descriptor (inflight_orphan(arg) closes all of a maker's); when the
 * fence stops, the descriptor's peer end is shut down and the maker
 * reads its end of file.
 */
#define SVC_TUNNELS_FENCE	256	/* open at once, per fence */
#define SVC_TUNNELS_USER	512	/* one user's, all fences */
#define SVC_TUNNELS_ALL		4096	/* everyone's */
void		 svc_tunnel_open(const struct svc_who *, uid_t, const char *,
		    const struct msg_tunnel_open *, svc_cb, void *);
void		 svc_tunnel_close(uint32_t, void *);
void		 svc_tunnel_adopt(uint32_t, void *, void *);
void		 svc_ports(const struct svc_who *, uid_t, const char *,
		    svc_cb, void *);
/*
 * svc_snap.c: snapshots of homes (docs/snapshots.md).  svc_snap()
 * answers SVC_SNAP (a listing: several, then SVC_END) or SVC_ERROR.
 */
void		 svc_snap(const struct svc_who *, struct msg_snap *, svc_cb,
		    void *);
/*
 * svc_host.c: the host doctor (docs/doctor.md): SVC_CHECKs, their
 * hc_detail wiped unless w is an admin, then SVC_END.
 */
void		 svc_doctor(const struct svc_who *, svc_cb, void *);
unsigned int	 svc_tunnels(uid_t);
/*
 * svc_fence.c: a running fence's label (SVC_LABEL_LEN hexadecimal
 * digits, new at every boot), which names it in the ports' host form
 * (docs/interactive.md): label is SVC_LABEL_LEN + 1 bytes.
 */
#define SVC_LABEL_LEN		16
int		 svc_fence_label(const struct svc_who *, uid_t, const char *,
		    char *);
int		 svc_label_owner(const char *, const char *, uid_t *);
unsigned int	 svc_running(void);
unsigned int	 svc_pending(uid_t);
unsigned int	 svc_total(void);
void		 svc_dispatch_fencer(struct imsgev *, struct imsg *, void *);

/*
 * svc_term.c: terminals and a background process's stdin
 * (docs/interactive.md).  svc_term_open() answers SVC_TERM (the new
 * terminal) or SVC_ERROR; svc_terms() (tq_op LIST, tq_id 0 for all)
 * SVC_TERMs then SVC_END; svc_term_resize() and svc_term_kill() the
 * terminal's SVC_TERM; svc_proc_input() the process's SVC_PROC (no
 * output) or SVC_ERROR ("input-busy": more than MSG_INPUT_MAX bytes
 * would be pending).  The owner and key are the message's (to_owner,
 * to_key, ...), as for svc_procs().  A terminal's bytes are a tunnel
 * of kind terminal (svc_tunnel_open()).
 */
#define SVC_TERM_USER_MAX	16	/* terminals of one user, all fences */
void		 svc_term_open(const struct svc_who *, struct msg_term_open *,
		    svc_cb, void *);
void		 svc_terms(const struct svc_who *, struct msg_term_req *,
		    svc_cb, void *);
void		 svc_term_resize(const struct svc_who *, struct msg_term_req *,
		    svc_cb, void *);
void		 svc_term_kill(const struct svc_who *, struct msg_term_req *,
		    svc_cb, void *);
void		 svc_proc_input(const struct svc_who *, struct msg_proc_input *,
		    svc_cb, void *);

/*
 * svc_watch.c: who hears of fences' states changing (the channel's
 * watch): fn(arg, owner, key) as each record changes, for the fences
 * w may see; the state is then asked of svc_list().  fn never calls
 * into the service itself.
 */
struct svc_watch;
typedef void	(*svc_watch_fn)(void *, uid_t, const char *);
struct svc_watch *svc_watch_add(const struct svc_who *, svc_watch_fn,
		    void *);
void		 svc_watch_del(struct svc_watch *);

/*
 * svc_metrics.c: the metrics of admins (docs/metrics.md), in the
 * Prometheus text format: one SVC_TEXT, or SVC_ERROR (not-permitted
 * for one who is not w_admin).
 */
void		 svc_metrics(const struct svc_who *, svc_cb, void *);
int		 svc_admin_uid(uid_t);

/*
 * metrics.c: the counters and histograms behind them.  metrics_denial()
 * is for whoever learns of a denial: n more at that layer ("seccomp",
 * "landlock", "egress", "limit").
 */
enum metrics_boot {
	METRICS_BOOT_OK,
	METRICS_BOOT_REFUSED,
	METRICS_BOOT_FAILED,
	METRICS_BOOT_NOT_MET,
	METRICS_BOOT_ABANDONED,
	METRICS_BOOT_N
};
enum metrics_exec {
	METRICS_EXEC_ZERO,
	METRICS_EXEC_NONZERO,
	METRICS_EXEC_SIGNAL,
	METRICS_EXEC_TIMEOUT,
	METRICS_EXEC_ERROR,
	METRICS_EXEC_N
};
enum metrics_hist {
	METRICS_HIST_BOOT,	/* boot request to booted */
	METRICS_HIST_FIRST,	/* boot request to the first verdict */
	METRICS_HIST_EXEC,	/* exec request to its last answer */
	METRICS_HIST_N
};
struct evbuffer;
void		 metrics_boot(enum metrics_boot);
void		 metrics_exec(enum metrics_exec);
void		 metrics_probe(int);
void		 metrics_egress(int, uint64_t, uint64_t);
void		 metrics_denial(const char *, uint32_t);
void		 metrics_observe(enum metrics_hist, const struct timespec *);
void		 metrics_render(struct evbuffer *);
void		 metrics_family(struct evbuffer *, const char *, const char *,
		    const char *);
void		 metrics_value(struct evbuffer *, const char *);
void		 metrics_sample(struct evbuffer *, const char *, const char *,
		    const char *, uint64_t);

/* svc_egress.c: the egress proxy's fences, connections and decisions */
#define SVC_EGRESS_RECENT	16	/* decisions kept per fence */
struct svc_egress;
struct svc_egress *svc_egress_new(const struct msg_fence *,
		    struct msg_egress_counts *, void (*)(void *), void *);
void		 svc_egress_end(struct svc_egress *);
void		 svc_egress_free(struct svc_egress *);
uint32_t	 svc_egress_id(const struct svc_egress *);
void		 svc_denials_egress_start(void);	/* svc_denial.c */
void		 svc_egress_moved(struct svc_egress *,
		    struct msg_egress_counts *);
void		 svc_egress_conn(struct svc_egress *, int);
void		 svc_dispatch_egress(struct imsgev *, struct imsg *, void *);
json_t		*svc_egress_recent_json(const struct svc_egress *);

#endif /* BROKER_H */
