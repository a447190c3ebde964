#ifndef FENCER_H
#define FENCER_H

#include <sys/types.h>
#include <sys/queue.h>

#include <event.h>
#include <limits.h>

#include "fenced.h"
#include "backend.h"
#include "msg.h"
#include "proc.h"

struct probe_expect;

#define FENCER_MAX_FENCES	4096
#define FENCER_AGENT_WAIT_SEC	10	/* boot to agent ready, at most */

/*
 * A fence's cgroups are <daemon's folder>/<owner>.<key>: a key cannot
 * hold a dot, so no two (owner, key) pairs share a name.
 */
#define FENCER_CGNAME_SIZE	(10 + 1 + FENCE_KEY_SIZE)

struct fence {
	TAILQ_ENTRY(fence)	 f_entry;
	struct msg_fence	 f_info;	/* key, owner, state, ... */
	gid_t			 f_gid;
	char			 f_user[FENCED_NAME_MAX];
	char			 f_cgname[FENCER_CGNAME_SIZE];
	const struct fencer_backend *f_backend;
	void			*f_be;		/* the backend's state */
	int			 f_started;	/* booted: f_be is live */
	int			 f_cold;	/* never from the warm pool */
	struct imsgev		*f_agent;	/* until the agent is ready */
	uint32_t		 f_reqid;	/* the boot request */
	struct timespec		 f_t0;		/* boot request arrived */
	struct event		 f_timer;	/* agent wait, then deadline */

	/* A probe in progress (fencer_probe.c). */
	uint32_t		 f_probe_reqid;	/* 0: none */
	int			 f_probe_first;	/* the first, sent at READY,
						   not yet the broker's */
	void			*f_probe_msg;	/* the first's IMSG_AGENT_PROBE,
						   made at the boot */
	size_t			 f_probe_len;
	int			 f_canary;	/* listener, or -1 */
	char			 f_canary_secret[33]; /* this run's, hex */
	struct probe_expect	*f_expect;

	/* A branch (fencer_snap.c): its home's overlay, held; -1 if not. */
	int			 f_home_tree;

	/*
	 * Its seccomp filter's listener (fencer_denial.c), which the
	 * backend's fb_boot sets; -1 if none.
	 */
	int			 f_notify_fd;
	struct event		 f_notify_ev;
	int			 f_notify_on;
};

TAILQ_HEAD(fencelist, fence);

extern struct proc_self	 fencer_self;
extern struct fencelist	 fencer_fences;

/* fencer_fence.c */
void	fencer_init(const char *);
void	fencer_boot_now(uint32_t, const struct msg_boot *,
	    const struct timespec *);
void	fencer_stop_req(uint32_t, const struct msg_fence_req *);
void	fencer_reap(void);
void	fencer_stop_all(void);
void	fencer_send_error(uint32_t, uint32_t, const char *, const char *, ...)
	    __attribute__((format(printf, 4, 5)));

struct fence	*fencer_find(uid_t, const char *);
struct fence	*fencer_lookup(const struct msg_fence_req *);
int		 fencer_env_dir(const struct fence *, int, char *, size_t);
const char	*fencer_cg_parent(int);
const char	*fencer_bindir_path(void);
const char	*fencer_boot_refusal(int, int, char *, size_t);
void		 fencer_doctor(uint32_t);

/* fencer_denial.c */
void	fencer_denials_init(void);
void	fencer_denials_watch(struct fence *);
void	fencer_denials_forget(struct fence *);
void	fencer_denials_limits(struct fence *);

/* fencer_queue.c */
void	fencer_boot(uint32_t, const struct msg_boot *);
int	fencer_queue_stop(uint32_t, const struct msg_fence_req *);
void	fencer_queue_fini(void);
void	fencer_probe_request(uint32_t, const struct msg_fence_req *);
void	fencer_probe_ended(void);
int	fencer_probe_slot(int);
void	fencer_queue_depths(struct msg_usage *);

/* fencer_usage.c: what the metrics ask of the fencer */
void	fencer_usage(uint32_t);

/* fencer_limits.c */
int	fencer_limits_admit(uint32_t, const struct msg_boot *, int,
	    struct fence_limits *, uint32_t *);

/* fencer_uids.c */
int	fencer_uid_for(const char *, const char *, uid_t *, char *, size_t);
int	fencer_uid_assign(struct fence *, gid_t, const char *, uint32_t);

/* fencer_probe.c */
void	fencer_probe_prepare(uint32_t, const struct msg_fence_req *);
void	fencer_probe_early(struct fence *);
int	fencer_probe_first(struct fence *);
int	fencer_probe_adopt(uint32_t, const struct msg_fence_req *);
void	fencer_probe_host(struct fence *);
void	fencer_probe_output(uint32_t, struct imsg *);
void	fencer_probe_verdict(uint32_t, struct imsg *);
void	fencer_probe_end(struct fence *, int);

#endif /* FENCER_H */
