/*
 * The process framework every fenced process uses: starting a child by
 * fork and re-exec (the parent's side), and one start-up for every
 * child, proc_run(), driven by what the child declares of itself.
 */
#ifndef PROC_H
#define PROC_H

#include <sys/types.h>

#include "fenced.h"
#include "imsg.h"
#include "lockdown.h"

struct event_base;
struct imsgev;

/* What a re-executed child learns from its command line. */
struct proc_args {
	enum fenced_proc	 pa_proc;
	int			 pa_debug;
	int			 pa_verbose;
	uid_t			 pa_uid;	/* the unprivileged user */
	gid_t			 pa_gid;
	const char		*pa_state;	/* state directory */
	const char		*pa_id;		/* the daemon's id (parent/daemon.c) */
};

/*
 * A channel a process declares: the peer, and the function that reads
 * what that peer sends.  A child has a channel to the parent and to each
 * other process it declares, and to no other: the parent makes one
 * between two children only when each declares the other.  For the
 * parent, pp_dispatch sees only what proc_run() does not handle itself
 * (configuration, channels, log level, start); NULL: nothing else.
 */
struct proc_peer {
	enum fenced_proc	 pp_proc;
	imsgev_dispatch_cb	 pp_dispatch;
};

/*
 * A child process as it declares itself, and what proc_run() keeps for
 * it.  Unless ps_keep_root is set, lockdown() chroots into the empty
 * directory of the state directory and takes the unprivileged user.
 */
struct proc_self {
	enum fenced_proc	 ps_proc;
	const struct proc_peer	*ps_peers;
	size_t			 ps_npeers;
	struct lockdown		 ps_lockdown;	/* promises, caps, filter */
	int			 ps_keep_root;	/* no chroot, no other uid */
	void			(*ps_prepare_cb)(const struct proc_args *);
						/* before lockdown */
	void			(*ps_init_cb)(const struct proc_args *);
						/* after lockdown */
	void			(*ps_config_cb)(void);	/* each IMSG_CONFIG */
	void			(*ps_start_cb)(void);	/* IMSG_START */
	void			(*ps_shutdown_cb)(void);	/* then exit */

	/* Set by proc_run(). */
	struct event_base	*ps_evbase;
	struct imsgev		*ps_iev[PROC_MAX];	/* NULL: no channel */
	struct fenced_config	 ps_conf;
	int			 ps_configured;
	int			 ps_started;
};

/* The children, each declared in its process's own file. */
extern struct proc_self	 broker_self;
extern struct proc_self	 fencer_self;
extern struct proc_self	 prober_self;
extern struct proc_self	 egress_self;

pid_t	proc_exec(const char *, enum fenced_proc, int, const struct proc_args *);
void	proc_nofile_raise(void);
int	proc_declares(const struct proc_self *, enum fenced_proc);
void	proc_main(int, char **, struct proc_self *const [PROC_MAX])
	    __attribute__((noreturn));
void	proc_run(struct proc_self *, const struct proc_args *)
	    __attribute__((noreturn));
int	proc_compose(struct proc_self *, enum fenced_proc, uint32_t,
	    uint32_t, int, const void *, size_t);

#endif /* PROC_H */
