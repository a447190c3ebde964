/*
 * Process plumbing shared by the parent and its children: starting a
 * child by fork and re-exec, and the child's side of coming up.
 */
#ifndef PROC_H
#define PROC_H

#include <sys/types.h>

#include "imsg.h"

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
	const char		*pa_id;		/* the daemon's id (fencer_cgroup.c) */
};

pid_t	proc_exec(const char *, enum fenced_proc, int, const struct proc_args *);
enum fenced_proc proc_parse(const char *);

/* The entry functions, one per child process. */
void	broker(const struct proc_args *) __attribute__((noreturn));
void	fencer(const struct proc_args *) __attribute__((noreturn));
void	prober(const struct proc_args *) __attribute__((noreturn));


/*
 * A child's view of its peers: one channel per other process, each with
 * its own dispatch function.  proc_dispatch_parent() handles what the
 * parent tells every child (configuration, channels, log level, start).
 */
struct proc_peer {
	enum fenced_proc	 pp_proc;
	imsgev_dispatch_cb	 pp_dispatch;
	struct imsgev		*pp_iev;
};

struct proc_self {
	enum fenced_proc	 ps_proc;
	struct event_base	*ps_evbase;
	struct proc_peer	 ps_peers[PROC_MAX];
	struct fenced_config	 ps_conf;
	int			 ps_configured;
	int			 ps_started;
	void			(*ps_config_cb)(void);	/* each IMSG_CONFIG */
	void			(*ps_start_cb)(void);	/* IMSG_START */
	void			(*ps_shutdown_cb)(void);	/* then exit */
};

void	proc_connect_parent(struct proc_self *);
int	proc_dispatch_parent(struct proc_self *, struct imsg *);
int	proc_compose(struct proc_self *, enum fenced_proc, uint32_t,
	    uint32_t, int, const void *, size_t);
void	proc_signals(struct proc_self *);

#endif /* PROC_H */
