/*
 * What the files of the control socket share (control.c: connections
 * and the table of requests; control_fence.c, control_file.c,
 * control_admin.c: the handlers by group), and nobody else.
 */
#ifndef CONTROL_H
#define CONTROL_H


/*
 * What one client may have the daemon work on and hold for it
 * (docs/architecture.md): requests not yet answered to their END, per
 * connection, per user (orphans of closed connections included) and in
 * all; and answers not yet read.  Over CONTROL_QUEUE_SOFT unsent, the
 * connection is not read until half of it went; a connection that
 * stays over it CONTROL_STALL_SEC is closed, and one that reaches
 * CONTROL_QUEUE_HARD at once.  Root is bounded only in all (it can
 * stop the daemon anyway); the admin group is bounded as any user.
 */
#define CONTROL_PENDING_CONN	16
#define CONTROL_PENDING_USER	64
#define CONTROL_PENDING_ALL	2048
#define CONTROL_QUEUE_SOFT	(1024U * 1024)
#define CONTROL_QUEUE_HARD	(16U * 1024 * 1024)
#define CONTROL_STALL_SEC	10
/* A stream's chunks are credited back while less than this waits. */
#define CONTROL_STREAM_MARK	(256U * 1024)
#define CONTROL_STREAM_POLL_MS	20

struct ctl_conn {
	TAILQ_ENTRY(ctl_conn)	 cc_entry;
	struct imsgev		*cc_iev;
	struct event		 cc_idle;
	struct event		 cc_stall;	/* answers unread too long */
	struct event		 cc_kill;	/* closed from the loop */
	unsigned int		 cc_stall_pause;	/* the pause it watches */
	unsigned int		 cc_pending;	/* requests before their END */
	int			 cc_dead;	/* closing: nothing more out */
	uid_t			 cc_uid;
	gid_t			 cc_gid;
	pid_t			 cc_pid;
	int			 cc_admin;
	/* fencectl put or get: its streamed transfer (files.c). */
	struct ftx		*cc_file;
	struct msg_file		 cc_file_req;	/* its key, owner, path */
	int			 cc_file_get;	/* cc_file is a get's */
	int			 cc_file_busy;	/* a chunk of it is out */
	struct event		 cc_credit;	/* owed credit, polled */
	uint32_t		 cc_stream_id;	/* the stream owed to */
	size_t			 cc_owed;	/* its chunk bytes */
	uint32_t		 cc_reload;	/* the reload it waits for */
};


/* control.c */
void	control_close(struct ctl_conn *);
void	control_doom(struct ctl_conn *);
void	control_reply(struct ctl_conn *, uint32_t, const void *, size_t);
void	control_error(struct ctl_conn *, const char *, const char *, ...)
	    __attribute__((format(printf, 3, 4)));
void	control_ok(struct ctl_conn *);
void	control_show_stats(struct ctl_conn *);
int	control_reload(struct ctl_conn *, struct imsg *);

/* control_fence.c */
void	control_credit(int, short, void *);
int	control_boot(struct ctl_conn *, struct imsg *);
int	control_probe(struct ctl_conn *, struct imsg *);
int	control_stop_list(struct ctl_conn *, struct imsg *);
int	control_exec(struct ctl_conn *, struct imsg *);
int	control_git_config(struct ctl_conn *, struct imsg *);
int	control_git_init(struct ctl_conn *, struct imsg *);
int	control_spawn(struct ctl_conn *, struct imsg *);
int	control_procs(struct ctl_conn *, struct imsg *);
int	control_term_open(struct ctl_conn *, struct imsg *);
int	control_terms(struct ctl_conn *, struct imsg *);
int	control_proc_input(struct ctl_conn *, struct imsg *);
int	control_tunnel(struct ctl_conn *, struct imsg *);
int	control_ports(struct ctl_conn *, struct imsg *);
int	control_snap(struct ctl_conn *, struct imsg *);
int	control_doctor(struct ctl_conn *, struct imsg *);
/* control_port.c */
int	control_port_ticket(struct ctl_conn *, struct imsg *);
void	control_who(const struct ctl_conn *, struct svc_who *);
void	control_answer(void *, const struct svc_answer *);
int	control_room(struct ctl_conn *);

/* control_file.c */
int	control_file(struct ctl_conn *, struct imsg *);
void	control_file_drop(struct ctl_conn *);

/* control_admin.c */
int	control_mint(struct ctl_conn *, struct imsg *);
int	control_show_tokens(struct ctl_conn *, struct imsg *);
int	control_show_audit(struct ctl_conn *, struct imsg *);
int	control_stats(struct ctl_conn *, struct imsg *);
int	control_metrics(struct ctl_conn *, struct imsg *);
void	control_text(struct ctl_conn *, const char *, size_t);
int	control_verbosity(struct imsg *);
int	control_empty(struct imsg *);
int	control_log_verbose(struct ctl_conn *, struct imsg *);
#ifdef FENCED_TEST_HOOKS
int	control_test_syscall(struct ctl_conn *, struct imsg *);
#endif

#endif /* CONTROL_H */
