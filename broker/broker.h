#ifndef BROKER_H
#define BROKER_H

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/tree.h>
#include <stdint.h>

#include "msg.h"
#include "proc.h"

struct broker_stats {
	uint64_t	 bs_ctl_conns;
	uint64_t	 bs_ctl_requests;
	uint64_t	 bs_ctl_errors;
};

extern struct proc_self		 broker_self;
extern struct broker_stats	 broker_stats;
extern struct msg_procinfo	 broker_procinfo;

/* control.c */
void	control_listen(int);
void	control_shutdown(void);

/* http.c: the HTTP API (its own header is http.h) */
void	http_listen(int);
void	http_start(void);
void	http_configure(void);
void	http_shutdown(void);

/* token.c */
typedef void	(*token_cb)(void *, const struct msg_hosttoken *, int);
void	token_load(struct imsg *);
void	token_stored(struct imsg *);
int	token_exists(uid_t);
int	token_lookup(const char *, size_t, uid_t *);
int	token_mint(uid_t, int, token_cb, void *, const char **,
	    const char **);
void	token_orphan(void *);


/* fences.c */
struct bqueued;

/* Requests waiting on a fence's first verdict: as many as its agent runs. */
#define BFENCE_QUEUE_MAX	128
#define BFENCE_QUEUE_BYTES	(8 * 1024 * 1024)

struct bfence {
	TAILQ_ENTRY(bfence)	 bf_entry;
	struct msg_fence	 bf_info;	/* with the bearer; f_level */
	struct imsgev		*bf_agent;
	int			 bf_probing;	/* a probe runs */
	char			*bf_boundary;	/* the last verdicts, JSON */
	/*
	 * Until the first probe's verdict is in, nothing but the probe
	 * reaches the agent: other requests wait here (fences.c), and
	 * after a stop of our own they wait for the fence to end.
	 */
	int			 bf_measured;
	int			 bf_stopping;
	TAILQ_HEAD(, bqueued)	 bf_queue;
	unsigned int		 bf_nqueued;
	size_t			 bf_queued_bytes;
	int64_t			 bf_stopped_at;	/* monotonic s; 0: running */
};

/*
 * A stopped fence stays listed, state stopped with its reason, for
 * BFENCE_STOPPED_SECS, at most BFENCE_STOPPED_OWNER of one owner and
 * BFENCE_STOPPED_MAX in all; the oldest goes first, and a new boot of
 * the same owner and key replaces it.
 */
#define BFENCE_STOPPED_SECS	600
#define BFENCE_STOPPED_OWNER	64
#define BFENCE_STOPPED_MAX	1024

/* Called for each fence listed, its bearer wiped; nonzero stops. */
typedef int	(*fences_list_cb)(void *, const struct msg_fence *);

enum breq_kind {
	BREQ_FENCER = 1,	/* boot, stop, list */
	BREQ_AGENT		/* exec, git */
};

struct breq;
typedef void	(*breq_cb)(struct breq *, uint32_t, struct imsg *);

struct breq {
	RB_ENTRY(breq)		 r_node;	/* by r_id */
	TAILQ_ENTRY(breq)	 r_entry;
	uint32_t		 r_id;
	enum breq_kind		 r_kind;
	uid_t			 r_owner;	/* with r_key: whose fence */
	char			 r_key[FENCE_KEY_SIZE];	/* "" for all */
	breq_cb			 r_cb;		/* NULL: maker gone */
	void			*r_arg;
	uint32_t		 r_parent;	/* the request this serves */
	int			 r_want;	/* boot: the level required */
	int			 r_owned;	/* breq_owner(): counted */
	uid_t			 r_uid;		/* whose */
	int			 r_exec;	/* a running command */
};

/* The requests in flight of one user, for the limits per user. */
struct breq_user {
	RB_ENTRY(breq_user)	 bu_node;
	uid_t			 bu_uid;
	unsigned int		 bu_reqs;
	unsigned int		 bu_execs;
};

struct bfence	*bfence_find(uid_t, const char *);
unsigned int	 bfence_running(void);
struct breq	*breq_new(enum breq_kind, uid_t, const char *, breq_cb,
		    void *);
void		 breq_owner(struct breq *, uid_t, int);
void		 breq_done(struct breq *);
void		 breq_orphan(void *);
unsigned int	 breq_execs(uid_t);
unsigned int	 breq_pending(uid_t);
unsigned int	 breq_total(void);
void		 fences_dispatch_fencer(struct imsgev *, struct imsg *, void *);
int		 fences_to_fencer(struct breq *, uint32_t, const void *, size_t);
void		 fences_stop(uid_t, const char *);
int		 fences_to_agent(struct bfence *, struct breq *, uint32_t,
		    const void *, size_t);
int		 fences_to_agent_probe(struct bfence *, struct breq *,
		    uint32_t, const void *, size_t);
void		 fences_measured(uid_t, const char *);
int		 fences_list(uid_t, int, uid_t, const char *, fences_list_cb,
		    void *);

/* probe.c */
struct probe_result {
	int		 pr_level;	/* enum probe_level */
	const char	*pr_json;	/* the verdicts, or NULL */
	const char	*pr_error;	/* NULL, or why there is no level */
	const char	*pr_message;
	int		 pr_want;	/* as given to probe_start() */
	uid_t		 pr_owner;	/* whose fence, with the key */
};
typedef void	(*probe_done_cb)(void *, const char *,
		    const struct probe_result *);

int	probe_start(struct bfence *, probe_done_cb, void *, int, int);
void	probe_violations(const char *, char *, size_t);
void	probe_orphan(void *);

#endif /* BROKER_H */
