#ifndef BROKER_H
#define BROKER_H

#include <sys/types.h>
#include <sys/queue.h>
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
unsigned int control_active(void);


/* fences.c */
struct bfence {
	TAILQ_ENTRY(bfence)	 bf_entry;
	struct msg_fence	 bf_info;	/* with the bearer */
	struct imsgev		*bf_agent;
};

enum breq_kind {
	BREQ_FENCER = 1,	/* boot, stop, list */
	BREQ_AGENT		/* exec, git */
};

struct breq;
typedef void	(*breq_cb)(struct breq *, uint32_t, struct imsg *);

struct breq {
	TAILQ_ENTRY(breq)	 r_entry;
	uint32_t		 r_id;
	enum breq_kind		 r_kind;
	char			 r_key[FENCE_KEY_SIZE];	/* "" for all */
	breq_cb			 r_cb;		/* NULL: maker gone */
	void			*r_arg;
};

struct bfence	*bfence_find(const char *);
unsigned int	 bfence_running(void);
struct breq	*breq_new(enum breq_kind, const char *, breq_cb, void *);
void		 breq_done(struct breq *);
void		 breq_orphan(void *);
void		 fences_dispatch_fencer(struct imsgev *, struct imsg *, void *);
int		 fences_to_fencer(struct breq *, uint32_t, const void *, size_t);
int		 fences_to_agent(struct bfence *, struct breq *, uint32_t,
		    const void *, size_t);

#endif /* BROKER_H */
