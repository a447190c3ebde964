#ifndef FENCER_H
#define FENCER_H

#include <sys/types.h>
#include <sys/queue.h>

#include <event.h>

#include "fence.h"
#include "msg.h"
#include "proc.h"

struct probe_expect;

#define FENCER_MAX_FENCES	256
#define FENCER_AGENT_WAIT_SEC	10	/* boot to agent ready, at most */

struct fence {
	TAILQ_ENTRY(fence)	 f_entry;
	struct msg_fence	 f_info;	/* key, owner, state, ... */
	gid_t			 f_gid;
	char			 f_user[FENCED_NAME_MAX];
	struct fence_proc	 f_proc;
	int			 f_started;	/* f_proc is live */
	struct imsgev		*f_agent;	/* until the agent is ready */
	uint32_t		 f_reqid;	/* the boot request */
	struct timespec		 f_t0;		/* boot request arrived */
	struct event		 f_timer;	/* agent wait, then deadline */

	/* A probe in progress (fencer_probe.c). */
	uint32_t		 f_probe_reqid;	/* 0: none */
	int			 f_canary;	/* listener, or -1 */
	char			 f_canary_secret[33]; /* this run's, hex */
	struct probe_expect	*f_expect;
};

TAILQ_HEAD(fencelist, fence);

extern struct proc_self	 fencer_self;
extern struct fencelist	 fencer_fences;

/* fencer_fence.c */
void	fencer_init(void);
void	fencer_boot(uint32_t, const struct msg_boot *);
void	fencer_stop_req(uint32_t, const struct msg_fence_req *);
void	fencer_list(uint32_t, const struct msg_fence_req *);
void	fencer_reap(void);
void	fencer_stop_all(void);
void	fencer_send_error(uint32_t, uint32_t, const char *, const char *, ...)
	    __attribute__((format(printf, 4, 5)));

struct fence	*fencer_find(const char *);

/* fencer_probe.c */
void	fencer_probe_prepare(uint32_t, const struct msg_fence_req *);
void	fencer_probe_output(uint32_t, struct imsg *);
void	fencer_probe_verdict(uint32_t, struct imsg *);
void	fencer_probe_end(struct fence *, int);

/* fencer_cgroup.c */
int	fencer_cgroup_init(char [3][PATH_MAX]);
void	fencer_cgroup_fini(char [3][PATH_MAX]);

#endif /* FENCER_H */
