/*
 * What the rooms of the fence service share, and nobody else: its
 * records (svc_fence.c), its requests in flight (svc_req.c), the agent
 * side (svc_agent.c), the probe side (svc_probe.c) and the fences'
 * lifetimes (service.c).  The front ends see broker.h alone.
 */
#ifndef SVC_H
#define SVC_H

struct breq;
struct imsg;
struct svc_denials;
struct svc_tunnel;

struct bfence {
	TAILQ_ENTRY(bfence)	 bf_entry;
	struct msg_fence	 bf_info;	/* f_bearer zero; f_level ours */
	uint8_t			 bf_bearer[MSG_BEARER_LEN];
	struct imsgev		*bf_agent;
	char			*bf_boundary;	/* the last verdicts, JSON */
	char			*bf_refused;	/* why its require failed, or NULL */
	char			*bf_rendered;	/* svc_answer's a_rendered */
	int			 bf_probing;	/* a probe runs */
	uint32_t		 bf_probe_first; /* the request that takes the
					   agent's answer to request 0: the
					   first probe, sent by the fencer */
	/*
	 * Until the first verdict is in, nothing but the probe reaches
	 * the agent: other requests are held (bf_nheld of them), and
	 * after a stop of our own they wait for the fence to end.
	 */
	int			 bf_measured;
	int			 bf_stopping;
	TAILQ_HEAD(, breq)	 bf_reqs;	/* agent requests and waiters */
	unsigned int		 bf_nheld;
	unsigned int		 bf_nprocs;	/* background, as the agent
						   last counted */
	unsigned int		 bf_nterms;	/* terminals, as the agent
						   last counted */
	size_t			 bf_held_bytes;
	int64_t			 bf_stopped_at;	/* monotonic s; 0: running */
	struct svc_egress	*bf_egress;	/* with a list: svc_egress.c */
	struct svc_denials	*bf_denials;	/* pending: svc_denial.c */
	uint64_t		 bf_ndenials;	/* all it met so far */
	uint64_t		 bf_outside;	/* denials overwritten in its
						   ring that nothing took */
	int			 bf_limit_fd[2];	/* its memory and pids
						   counters (svc_denial.c) */
	uint64_t		 bf_limit_seen[2];	/* as last read */
	char			 bf_label[SVC_LABEL_LEN + 1];	/* the host
						   form's, new at every boot */
	struct timespec		 bf_boot_t0;	/* its boot request came,
						   monotonic (the metrics) */
};

enum breq_kind {
	BREQ_FENCER = 1,	/* boot, stop, a probe's preparation */
	BREQ_AGENT,		/* exec, git, a probe's own exec */
	BREQ_VERDICT		/* waits for the fence's next verdict */
};

/* A message from the fencer or an agent, decoded once. */
struct svc_msg {
	uint32_t		 m_type;
	const void		*m_data;	/* as it came */
	size_t			 m_len;
	struct msg_fence	*m_fence;	/* BOOTED, STOPPED */
	struct msg_error	*m_error;	/* FAILED, AGENT_ERROR */
	struct msg_verdict	*m_verdict;	/* LEVEL */
	struct msg_exec		*m_exec;	/* PROBE_EXEC */
	struct msg_result	*m_result;	/* AGENT_RESULT */
	struct msg_gitconfig	*m_git;		/* AGENT_GIT_IDENTITY */
	struct msg_proc		*m_proc;	/* AGENT_PROC */
	struct msg_file		*m_file;	/* AGENT_FILE */
	struct msg_filelist	*m_filelist;	/* AGENT_FILE_LIST */
	struct msg_chunk	*m_chunk;	/* AGENT_CHUNK */
	struct msg_term		*m_term;	/* AGENT_TERM */
	struct msg_portlist	*m_ports;	/* AGENT_PORT_LIST */
	struct msg_snap_info	*m_snap;	/* FENCE_SNAP_INFO */
	struct msg_usage	*m_usage;	/* FENCE_USAGE */
	struct msg_check	*m_check;	/* HOST_CHECK */
};

/* What the service does with an answer to one of its requests. */
typedef void	(*breq_fn)(struct breq *, const struct svc_msg *);

struct breq {
	struct inflight		 r_in;		/* its id, its maker */
	TAILQ_ENTRY(breq)	 r_fentry;	/* r_fence's bf_reqs */
	enum breq_kind		 r_kind;
	uint32_t		 r_type;	/* what was sent (or held) */
	uid_t			 r_owner;	/* with r_key: whose fence */
	char			 r_key[FENCE_KEY_SIZE];	/* "" for all */
	struct bfence		*r_fence;	/* agent requests, waiters */
	breq_fn			 r_fn;
	svc_cb			 r_cb;		/* the maker's; NULL: gone */
	const char		*r_noun;	/* svc_who's w_noun */
	uint32_t		 r_parent;	/* a probe's exec: its request */
	int			 r_want;	/* a boot's `require' level */
	int			 r_want_inner;	/* r_want is the layer
						   inside's, not asked */
	int			 r_abandoned;	/* a boot nobody waits for; 2:
						   its stop is sent */
	char			*r_refusal;	/* not met: said once stopped */
	int			 r_counted;	/* in svc_user's counts */
	uid_t			 r_uid;		/* who asked */
	int			 r_exec;	/* a command that runs */
	void			*r_held;	/* held for the first verdict */
	size_t			 r_held_len;	/* (holds the bearer) */
	int			 r_is_held;
	int			 r_list;	/* PROCS, TERMS: a listing */
	int			 r_admin;	/* the doctor's: details too */
	unsigned int		 r_nprocs;	/* of it, so far */
	size_t			 r_unacked;	/* streamed: CHUNK bytes not
						   given back as CREDIT */
	struct svc_tunnel	*r_tunnel;	/* TUNNEL_OPEN: svc_tunnel.c */
	int			 r_outside;	/* not in the counts of
						   requests (breq_uncount) */
	/* An exec with undo, while its mark is made (svc_snap.c). */
	void			*r_undo_exec;	/* the exec, encoded */
	size_t			 r_undo_len;
	uint32_t		 r_undo_type;	/* EXEC or EXEC_STREAM */
	struct svc_who		 r_undo_who;
	struct timespec		 r_t0;		/* made, monotonic */
	int			 r_metered;	/* its end is counted */
	/* The audit log: who asked through what, and the event. */
	uint32_t		 r_via;		/* enum audit_via */
	char			 r_token[HOSTTOKEN_NAME_MAX + 1];
	struct msg_audit	*r_audit;	/* sent at its end */
	uint64_t		 r_dseq;	/* svc_denial_seq when sent */
};

TAILQ_HEAD(bfence_list, bfence);

/* svc_fence.c: the records */
struct bfence	*bfence_find(uid_t, const char *);
struct bfence	*bfence_add(struct msg_fence *, int);
void		 bfence_remove(struct bfence *, const struct msg_fence *);
void		 bfence_changed(struct bfence *);
struct bfence	*stopped_find(uid_t, const char *);
int		 svc_may(const struct svc_who *, uid_t);
uid_t		 svc_owner(const struct svc_who *, uid_t);
unsigned int	 svc_terms_of(uid_t);
struct bfence	*svc_fence_for(const struct svc_who *, uid_t, const char *,
		    svc_cb, void *);
void		 svc_fence_answer(struct svc_answer *, struct bfence *,
		    const struct msg_fence *, struct msg_fence *);
void		 bfence_each(void (*)(void *, const struct bfence *), void *);

/* svc_audit.c: the service's events of the audit log */
void		 svc_audit_agent(struct breq *, uint32_t, const void *);
void		 svc_audit_fencer(struct breq *, uint32_t, const char *);
void		 svc_audit_refused(const struct svc_who *, uint32_t, uid_t,
		    const char *, const char *, const char *);
void		 svc_audit_end(struct breq *, const struct svc_answer *,
		    const char *);
void		 svc_audit_ended(const struct msg_fence *);
void		 svc_audit_denial(const struct breq *, const char *, const char *,
		    uint32_t);

/* svc_req.c: the requests in flight */
void		 svc_fail_fence(struct bfence *, const char *, int);
/* svc_denial.c */
extern uint64_t	 svc_denial_seq;
void		 svc_denials_socket(int);
void		 svc_denials_mark(struct breq *);
void		 svc_denials_proc(struct breq *, struct msg_proc *);
void		 svc_denials_term(struct breq *, struct msg_term *);
void		 svc_denials_discard(struct breq *, const struct msg_result *);
void		 svc_denials_limit_fd(const struct msg_denial *, int);
void		 svc_denials_free(struct bfence *);
void		 svc_denial_record(struct bfence *, uint32_t, uint32_t,
		    const char *, const char *, const uint32_t *, int);
void		*svc_denials_result(struct breq *, struct msg_result *,
		    size_t *);
void		 svc_denials_count(struct bfence *);
void		 svc_denials_pending(void);

struct breq	*breq_new(enum breq_kind, uid_t, const char *, breq_fn,
		    const struct svc_who *, int, svc_cb, void *);
void		 breq_attach(struct breq *, struct bfence *);
struct breq	*breq_find(uint32_t);
void		 breq_unhold(struct breq *);
void		 breq_done(struct breq *);
void		 breq_uncount(struct breq *);
void		 breq_reply(struct breq *, const struct svc_answer *);
void		 breq_error(struct breq *, const char *, const char *, ...)
		    __attribute__((format(printf, 3, 4)));
void		 breq_reply_fence(struct breq *, struct bfence *);
void		 breq_failed(struct breq *, const struct svc_msg *);
void		 svc_say(svc_cb, void *, const struct svc_answer *);
void		 svc_refuse(svc_cb, void *, const char *, const char *, ...)
		    __attribute__((format(printf, 4, 5)));
unsigned int	 svc_execs(uid_t);
void		 svc_to_fencer(struct breq *, uint32_t, const void *, size_t);
int		 svc_boot_alone(const struct breq *);

/* service.c: boots and stops */
void		 svc_abandon(struct breq *);
void		 svc_stop_fence(struct bfence *);
void		 svc_require(struct breq *, struct bfence *,
		    const struct svc_msg *);

/* svc_agent.c: the agent side */
void		 svc_agent_dispatch(struct imsgev *, struct imsg *, void *);
void		 svc_agent_closed(struct imsgev *, int, void *);
void		 svc_to_agent(struct bfence *, struct breq *, uint32_t, void *,
		    int);
void		 svc_stream_send(struct breq *, uint32_t, uint32_t);
int		 svc_agent_encode(struct bfence *, uint32_t, void *, void **,
		    size_t *);
void		 svc_agent_req(const struct svc_who *, uid_t, const char *,
		    uint32_t, void *, svc_cb, void *);

/* svc_tunnel.c: tunnels, the broker's side */
int		 svc_tunnel_agent(struct breq *, struct imsg *);
int		 svc_tunnel_stray(struct bfence *, struct imsg *);
int		 svc_agent_send(struct bfence *, uint32_t, uint32_t, void *);
void		 svc_tunnel_orphan(struct breq *);
void		 breq_agent_error(struct breq *, const char *, const char *);
void		 svc_measured(struct bfence *);
void		 svc_held_refuse(struct bfence *, const char *);

/* svc_snap.c: an exec with undo */
void		 svc_exec_undo(const struct svc_who *, struct msg_exec *,
		    uint32_t, svc_cb, void *);

/* svc_metrics.c: what a request's end counts; the fencer's answer */
void		 svc_metered(struct breq *, const struct svc_answer *);
void		 svc_metrics_fencer(struct imsg *);

/* svc_watch.c: watchers of the records */
void		 svc_watch_notify(const struct bfence *);

/* svc_probe.c: the probe side */
void		 svc_probe_start(struct bfence *, int);
uint32_t	 svc_probe_first(struct bfence *, uint32_t);
void		 svc_kernel_of(const struct msg_verdict *, struct msg_fence *);
void		 svc_kernel_short(const struct msg_verdict *, int, char *,
		    size_t);
void		 svc_violations(const struct msg_verdict *, char *, size_t);

#endif /* SVC_H */
