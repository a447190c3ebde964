/*
 * fence-agent: pid 1 of a fence.  Serves exec, git config and git init
 * requests on its channel; see docs/agent.md.
 */
#ifndef AGENT_H
#define AGENT_H

#include <sys/types.h>
#include <sys/queue.h>

#include <limits.h>
#include <stdint.h>
#include <time.h>

#include "msg.h"

struct event;
struct event_base;

#define AGENT_CHANNEL_FD	3
#define AGENT_JOBS_MAX		128	/* execs at once, git included */
#define AGENT_GRACE_MS		1000	/* kill asked, then SIGKILL supervisor */
#define AGENT_SWEEP_MS		20	/* between sweeps of stray processes */
#define AGENT_RETRY_MS		50	/* channel queue full: try again */
#define AGENT_DRAIN_MS		10000	/* ended stream: wait for credit */

#define AGENT_PATH		"/usr/local/bin:/usr/bin:/bin"
#define AGENT_SHELL		"/usr/bin/sh"
#define AGENT_GIT		"/usr/bin/git"
#define AGENT_ENV_COUNT		19

/* How far the supervisor got with a command (struct agent_report). */
enum agent_stage {
	STAGE_RAN = 0,		/* the command ran; rp_status says how */
	STAGE_SETUP,		/* pipes, fork: rp_errno */
	STAGE_CWD,		/* rp_errno EXDEV: outside HOME */
	STAGE_EXEC		/* execve failed: rp_errno */
};

/* The supervisor's last words to the agent, on its control socket. */
struct agent_report {
	int		 rp_stage;
	int		 rp_errno;
	int		 rp_status;	/* wait status of the command */
};

/*
 * A job for a spare supervisor, on its control socket (agent_job.c,
 * agent_super.c): a u32 length of what follows (host order: one
 * machine), then AGENT_SPEC_HEAD bytes (create, has path, two zero,
 * u32 argc) and NUL-terminated strings: the path if it has one, cwd,
 * then argc arguments.  A job that does not fit takes a supervisor of
 * its own, forked for it.
 */
#define AGENT_SPEC_MAX		(32 * 1024)
#define AGENT_SPEC_HEAD		8
#define AGENT_SPEC_ARGV_MAX	(MSG_ARGV_MAX + 4)

/* What to run: copied into the supervisor by fork, or sent to a spare. */
struct agent_spawn {
	const char	*sp_path;	/* NULL: look argv[0] up in PATH */
	char *const	*sp_argv;
	const char	*sp_cwd;	/* "" HOME, else relative to it or absolute */
	int		 sp_create;	/* git init: cwd may not exist yet */
	int		 sp_sockets;	/* stdin, stdout, stderr: sockets */
	int		 sp_tty;	/* > 0: a pty's slave, the command's
					   0, 1, 2 and controlling terminal
					   (0 is /dev/null in the agent) */
	char *const	*sp_env;	/* NULL: the fixed environment */
};

enum agent_kill {
	KILL_NONE = 0,
	KILL_TIMEOUT,
	KILL_BUDGET,
	KILL_SHUTDOWN,
	KILL_ASKED,		/* a background process's SIGKILL */
	KILL_CANCEL		/* a streamed job's client went away */
};

struct agent_out {
	uint8_t		*o_buf;
	size_t		 o_len;
	size_t		 o_size;
	int		 o_fd;		/* -1 once at end of file or closed */
	struct event	*o_ev;
};

struct agent_job;
typedef void	 (*agent_job_cb)(struct agent_job *);

struct agent_job {
	TAILQ_ENTRY(agent_job) j_entry;
	uint32_t	 j_id;		/* request id, ih_peerid */
	pid_t		 j_super;	/* 0 once reaped */
	pid_t		 j_super_pid;	/* the same, kept: its result names
					   it (docs/denials.md) */
	int		 j_ctl;		/* socket to the supervisor */
	int		 j_in;		/* stdin of the command, or -1 */
	struct event	*j_inev;
	uint8_t		*j_stdin;
	size_t		 j_stdin_len;
	size_t		 j_stdin_off;
	int		 j_stdin_open;	/* written out: wait for more */
	int		 j_stdin_closing;	/* then close it */
	struct agent_out j_out[2];	/* stdout, stderr */
	size_t		 j_max;		/* output budget over both */
	size_t		 j_total;
	struct event	*j_timer;	/* deadline, then grace */
	struct event	*j_ctlev;	/* the supervisor's report */
	struct timespec	 j_start;
	int		 j_kill;	/* enum agent_kill */
	int		 j_truncated;
	int		 j_discard;	/* past j_max: read on, keep nothing */
	int		 j_status;	/* wait status of the supervisor */
	int		 j_have_report;
	int		 j_reusable;	/* its supervisor may be the next spare */
	struct agent_report j_report;
	uint32_t	 j_duration_ms;
	agent_job_cb	 j_done;
	void		*j_arg;
	/* Told of each stream's bytes as they are kept (live output). */
	void		(*j_kept)(struct agent_job *, int);
	/* Streamed (agent_stream.c): CHUNKs as read, within credit. */
	int		 j_stream;
	size_t		 j_credit;	/* bytes it may send unacknowledged */
	int		 j_ended;	/* reaped; the pipes drain */
	/* What it runs, and where, cut short: for its error's message. */
	char		 j_prog[128];
	char		 j_cwd[128];
};

struct agent {
	struct event_base *a_base;
	struct imsgev	*a_iev;
	int		 a_ready;	/* HELLO received */
	struct msg_hello a_hello;	/* holds the bearer */
	char		 a_home[PATH_MAX];	/* HOME, resolved */
	char		*a_env[AGENT_ENV_COUNT + 1];
	TAILQ_HEAD(, agent_job) a_jobs;
	size_t		 a_njobs;
	size_t		 a_nreplies;	/* waiting for room on the channel */
	pid_t		 a_pid;
	int		 a_orphans_ours;	/* -s: no subreaper below pid 1 */
};

extern struct agent *agent_env;

/* agent.c */
void	 agent_reply(uint32_t, uint32_t, void *, size_t);
void	 agent_error(uint32_t, const char *, const char *, ...)
	    __attribute__((format(printf, 3, 4)));
void	 agent_result(uint32_t, struct msg_result *);
void	 agent_secrets_wipe(void);
int	 agent_busy(void);

/* agent_egress.c */
void	 agent_egress_listen(void);

/* agent_exec.c */
void	 agent_exec(uint32_t, struct msg_exec *);
void	 agent_probe(uint32_t, struct msg_exec *);
void	 agent_job_to_result(struct agent_job *, struct msg_result *);
int	 agent_job_failed(struct agent_job *, const char *);

/* agent_bg.c: background processes */
#define AGENT_BG_MAX		EXEC_PROCESSES_MAX	/* held, exited ones too */
#define AGENT_BG_TIMEOUT_MAX	((uint32_t)LIFETIME_MAX * 1000)
void	 agent_spawn(uint32_t, struct msg_exec *);
void	 agent_procs(uint32_t, struct msg_proc_req *);
/* agent_files.c */
void	 agent_files(uint32_t, uint32_t, struct msg_file *);
void	 agent_exec_stream(uint32_t, struct msg_exec *);
void	 agent_exec_spawn(const struct msg_exec *, struct agent_spawn *,
	    char *[4]);
int	 agent_exec_limits(uint32_t, const struct msg_exec *, uint32_t,
	    uint32_t, uint32_t *, uint32_t *);

/* agent_stream.c */
void	 agent_stream_chunk(struct agent_job *, int, const uint8_t *,
	    size_t);
void	 agent_stream_credit(uint32_t, const struct msg_credit *);
void	 agent_stream_cancel(uint32_t, const struct msg_credit *);

/* agent_term.c: terminals (docs/interactive.md) */
struct msg_tunnel_open;
void	 agent_term_open(uint32_t, struct msg_term_open *);
void	 agent_terms(uint32_t, struct msg_term_req *);
void	 agent_term_attach(uint32_t, const struct msg_tunnel_open *);

/* agent_bg.c: a background process's stdin and live output */
void	 agent_proc_input(uint32_t, struct msg_proc_input *);
void	 agent_bg_output(uint32_t, const struct msg_tunnel_open *);

/* agent_git.c */
void	 agent_git_config(uint32_t, struct msg_gitconfig *);
void	 agent_git_init(uint32_t, struct msg_gitinit *);

/* agent_job.c */
struct agent_job *agent_job_start(uint32_t, const struct agent_spawn *,
	    uint32_t, size_t, agent_job_cb, void *);
void	 agent_job_stdin(struct agent_job *, uint8_t *, size_t);
int	 agent_job_input(struct agent_job *, const uint8_t *, size_t, int);
void	 agent_job_free(struct agent_job *);
void	 agent_job_kill(struct agent_job *, int);
void	 agent_job_resume(struct agent_job *);
void	 agent_job_cancel(struct agent_job *);
void	 agent_reap(void);
void	 agent_sweep_schedule(void);
void	 agent_shutdown_jobs(void);
void	 agent_spare_schedule(void);

/* agent_super.c */
__attribute__((noreturn))
void	 agent_super(const struct agent_spawn *, int, int, int, int);
__attribute__((noreturn))
void	 agent_super_spare(int, int, int, int);

/* agent_proc.c */
size_t	 agent_proc_kill(pid_t, const pid_t *, size_t);
size_t	 agent_proc_signal(pid_t, const pid_t *, size_t, int);
int	 agent_untrace(pid_t, int);

/* agent_pool.c */
void		 agent_pool_wait(const char *);

#endif /* AGENT_H */
