/*
 * Background processes: a command started by SPAWN runs as a job like
 * any exec (agent_job.c: a supervisor, its pipes, its deadline), but
 * its result is kept here rather than sent, and nobody waits for it.
 * PROCS requests list them, read their output so far, signal them, or
 * forget one that exited.  docs/agent.md, "Background processes".
 *
 * Output: the first maxBytes over stdout and stderr together are kept,
 * what comes after is read and dropped (truncated), and the command
 * goes on.  They count against AGENT_JOBS_MAX while they run and
 * against AGENT_BG_MAX until forgotten; all of them end with the fence
 * (we are its pid 1).
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fenced.h"
#include "log.h"
#include "msg.h"
#include "agent.h"
#include "agent_tunnel.h"

/* A tunnel of kind output: one stream of one process, from an offset. */
struct agent_bg_out {
	TAILQ_ENTRY(agent_bg_out) bo_entry;
	struct agent_bg	*bo_bg;
	struct agent_tunnel *bo_tun;
	int		 bo_stream;	/* MSG_CHUNK_STDOUT or _STDERR */
	size_t		 bo_off;	/* of what is kept, sent so far */
	int		 bo_shut;	/* all of it sent, and it ended */
};

struct agent_bg {
	TAILQ_ENTRY(agent_bg) b_entry;
	TAILQ_HEAD(, agent_bg_out) b_outs;
	uint32_t	 b_id;
	struct agent_job *b_job;	/* NULL once it ended */
	struct msg_exec	 b_what;	/* its argv or command (only) */
	struct timespec	 b_start;
	uint32_t	 b_timeout;
	uint32_t	 b_max;
	struct msg_result b_rs;		/* once it ended */
	pid_t		 b_super;	/* its supervisor (docs/denials.md) */
};

static TAILQ_HEAD(, agent_bg) agent_bgs = TAILQ_HEAD_INITIALIZER(agent_bgs);
static size_t		 agent_nbg;
static uint32_t		 agent_bg_next = 1;

static void	agent_bg_done(struct agent_job *);
static void	agent_bg_failed(struct agent_bg *, struct agent_job *);
static struct agent_bg *agent_bg_find(uint32_t);
static void	agent_bg_send(uint32_t, uint32_t, struct agent_bg *,
		    const uint32_t *, int);
static void	agent_bg_signal(uint32_t, struct agent_bg *, int);
static void	agent_bg_free(struct agent_bg *);
static void	agent_bg_kept(struct agent_job *, int);
static void	agent_bg_pump(struct agent_bg_out *);
static void	agent_bg_out_input(struct agent_tunnel *, void *);
static void	agent_bg_out_resume(struct agent_tunnel *, void *);
static void	agent_bg_out_closed(struct agent_tunnel *, void *);

static const struct agent_tunnel_ops agent_bg_out_ops = {
	agent_bg_out_input,
	agent_bg_out_resume,
	NULL,
	agent_bg_out_closed
};

/* SPAWN: x is ours, as for agent_exec(); answered with its PROC. */
void
agent_spawn(uint32_t id, struct msg_exec *x)
{
	struct agent_spawn sp;
	struct agent_bg	*b;
	char		*shargv[4];
	uint32_t	 tmo, max;

	/*
	 * timeoutMs: 100 ms up to a fence's longest lifetime (the broker
	 * sends what is left of this one's, or less); 0 is that longest.
	 */
	if (agent_exec_limits(id, x, AGENT_BG_TIMEOUT_MAX, AGENT_BG_TIMEOUT_MAX,
	    &tmo, &max) == -1)
		goto done;
	if (agent_nbg >= AGENT_BG_MAX) {
		agent_error(id, "too-many-processes", "%d background "
		    "processes are held; delete exited ones", AGENT_BG_MAX);
		goto done;
	}
	if (agent_busy()) {
		agent_error(id, "exec-busy", "%d commands are running",
		    AGENT_JOBS_MAX);
		goto done;
	}
	if ((b = calloc(1, sizeof(*b))) == NULL) {
		agent_error(id, "exec-failed", "cannot start: %s",
		    strerror(errno));
		goto done;
	}
	agent_exec_spawn(x, &sp, shargv);
	if ((b->b_job = agent_job_start(id, &sp, tmo, max, agent_bg_done,
	    b)) == NULL) {
		agent_error(id, "exec-failed", "cannot start: %s",
		    strerror(errno));
		free(b);
		goto done;
	}
	TAILQ_INIT(&b->b_outs);
	b->b_super = b->b_job->j_super_pid;
	b->b_job->j_discard = 1;
	b->b_job->j_kept = agent_bg_kept;
	b->b_job->j_stdin_open = x->x_stdin_open;
	agent_job_stdin(b->b_job, x->x_stdin, x->x_stdin_len);
	x->x_stdin = NULL;
	x->x_stdin_len = 0;
	/* What it runs moves into b: its argv or command and nothing else. */
	b->b_what.x_argv = x->x_argv;
	b->b_what.x_argc = x->x_argc;
	b->b_what.x_command = x->x_command;
	x->x_argv = NULL;
	x->x_argc = 0;
	x->x_command = NULL;
	b->b_id = agent_bg_next++;
	if (agent_bg_next == 0)
		agent_bg_next = 1;
	b->b_timeout = tmo;
	b->b_max = max;
	b->b_start = b->b_job->j_start;
	TAILQ_INSERT_TAIL(&agent_bgs, b, b_entry);
	agent_nbg++;
	log_debug("%s: request %u: process %u", __func__, id, b->b_id);
	agent_bg_send(id, IMSG_AGENT_PROC, b, NULL, 0);
 done:
	msg_exec_free(x);
}

/* Its job is over: what came of it is kept until it is forgotten. */
static void
agent_bg_done(struct agent_job *j)
{
	struct agent_bg	*b = j->j_arg;
	struct agent_bg_out *bo;

	agent_job_to_result(j, &b->b_rs);
	agent_bg_failed(b, j);
	if (j->j_kill == KILL_TIMEOUT)
		strlcpy(b->b_rs.rs_message, "the process ran out of time "
		    "(timeoutMs)", sizeof(b->b_rs.rs_message));
	b->b_job = NULL;
	log_debug("%s: process %u: exit %d signal %d", __func__, b->b_id,
	    b->b_rs.rs_exit, b->b_rs.rs_signal);
	agent_job_free(j);
	/* Its live output: the rest, then the end. */
	TAILQ_FOREACH(bo, &b->b_outs, bo_entry)
		agent_bg_pump(bo);
}

/* One that never ran its command says why, as exec's errors would. */
static void
agent_bg_failed(struct agent_bg *b, struct agent_job *j)
{
	const struct agent_report *rp = &j->j_report;
	struct msg_result *rs = &b->b_rs;
	const char	*code = "exec-failed";

	if (!j->j_have_report)
		snprintf(rs->rs_message, sizeof(rs->rs_message), "supervisor "
		    "ended with status 0x%x", j->j_status);
	else if (rp->rp_stage == STAGE_CWD && rp->rp_errno == EXDEV) {
		code = "exec-cwd-outside-home";
		snprintf(rs->rs_message, sizeof(rs->rs_message), "the "
		    "directory is not inside %.900s", agent_env->a_hello.h_home);
	} else if (rp->rp_stage == STAGE_CWD) {
		code = "exec-cwd-invalid";
		snprintf(rs->rs_message, sizeof(rs->rs_message),
		    "directory: %s", strerror(rp->rp_errno));
	} else if (rp->rp_stage == STAGE_SETUP)
		snprintf(rs->rs_message, sizeof(rs->rs_message), "cannot "
		    "start: %s", strerror(rp->rp_errno));
	else if (rp->rp_stage == STAGE_EXEC)
		snprintf(rs->rs_message, sizeof(rs->rs_message), "cannot "
		    "execute: %s", strerror(rp->rp_errno));
	else
		return;
	strlcpy(rs->rs_error, code, sizeof(rs->rs_error));
	/* It never ran: no status of its own. */
	rs->rs_exit = 127;
	rs->rs_signal = 0;
}

static struct agent_bg *
agent_bg_find(uint32_t id)
{
	struct agent_bg	*b;

	TAILQ_FOREACH(b, &agent_bgs, b_entry)
		if (b->b_id == id)
			return (b);
	return (NULL);
}

/*
 * One process as PROC: with off (READ) its output from there, else
 * none.  Output is copied into the message only: nothing changes here.
 */
static void
agent_bg_send(uint32_t id, uint32_t type, struct agent_bg *b,
    const uint32_t *off, int forgotten)
{
	struct msg_proc	 p;
	struct timespec	 now;
	struct agent_job *j = b->b_job;
	uint8_t		*buf[2];
	void		*out;
	size_t		 len[2], outlen;
	int		 i;

	memset(&p, 0, sizeof(p));
	p.p_id = b->b_id;
	p.p_running = j != NULL;
	p.p_forgotten = forgotten;
	p.p_count = (uint32_t)agent_nbg;
	p.p_argv = b->b_what.x_argv;
	p.p_argc = b->b_what.x_argc;
	p.p_command = b->b_what.x_command;
	clock_gettime(CLOCK_MONOTONIC, &now);
	p.p_age_ms = (uint32_t)((now.tv_sec - b->b_start.tv_sec) * 1000 +
	    (now.tv_nsec - b->b_start.tv_nsec) / 1000000);
	p.p_timeout_ms = b->b_timeout;
	p.p_max_bytes = b->b_max;
	p.p_super = b->b_super > 0 ? (uint32_t)b->b_super : 0;
	if (j != NULL) {
		for (i = 0; i < 2; i++) {
			buf[i] = j->j_out[i].o_buf;
			len[i] = j->j_out[i].o_len;
		}
		p.p_truncated = j->j_truncated;
		p.p_duration_ms = p.p_age_ms;
	} else {
		buf[0] = b->b_rs.rs_stdout;
		len[0] = b->b_rs.rs_stdout_len;
		buf[1] = b->b_rs.rs_stderr;
		len[1] = b->b_rs.rs_stderr_len;
		strlcpy(p.p_error, b->b_rs.rs_error, sizeof(p.p_error));
		strlcpy(p.p_message, b->b_rs.rs_message, sizeof(p.p_message));
		p.p_exit = b->b_rs.rs_exit;
		p.p_signal = b->b_rs.rs_signal;
		p.p_duration_ms = b->b_rs.rs_duration_ms;
		p.p_truncated = b->b_rs.rs_truncated;
	}
	for (i = 0; i < 2; i++) {
		p.p_kept[i] = (uint32_t)len[i];
		if (off == NULL)
			continue;
		p.p_off[i] = off[i] < len[i] ? off[i] : (uint32_t)len[i];
	}
	if (off != NULL) {
		p.p_stdout = buf[0] + p.p_off[0];
		p.p_stdout_len = len[0] - p.p_off[0];
		p.p_stderr = buf[1] + p.p_off[1];
		p.p_stderr_len = len[1] - p.p_off[1];
		if (p.p_stdout_len == 0)
			p.p_stdout = NULL;
		if (p.p_stderr_len == 0)
			p.p_stderr = NULL;
	}
	if (msg_proc_encode(&p, &out, &outlen) == -1)
		fatal("%s: msg_proc_encode", __func__);
	agent_reply(type, id, out, outlen);
}

/*
 * A running one: the signal goes to its supervisor as one byte, which
 * passes it to every process of the job; SIGKILL is the job's own kill
 * (end of file, the grace, the sweep), which nothing of the command
 * can stop.  One that exited is forgotten.
 */
static void
agent_bg_signal(uint32_t id, struct agent_bg *b, int sig)
{
	struct agent_job *j = b->b_job;
	uint8_t		 c = (uint8_t)sig;
	ssize_t		 n;

	if (j == NULL) {
		agent_nbg--;
		agent_bg_send(id, IMSG_AGENT_PROC, b, NULL, 1);
		TAILQ_REMOVE(&agent_bgs, b, b_entry);
		agent_bg_free(b);
		return;
	}
	if (sig == SIGKILL)
		agent_job_kill(j, KILL_ASKED);
	else if (j->j_kill == KILL_NONE && j->j_ctl != -1) {
		n = write(j->j_ctl, &c, 1);
		if (n != 1) {
			agent_error(id, "exec-busy", "cannot signal process "
			    "%u now: %s", b->b_id, n == -1 ? strerror(errno) :
			    "short write");
			return;
		}
	}
	agent_bg_send(id, IMSG_AGENT_PROC, b, NULL, 0);
}

static void
agent_bg_free(struct agent_bg *b)
{
	struct agent_bg_out *bo;

	/* Forgotten: its live output ends now (an abort: no to_closed). */
	while ((bo = TAILQ_FIRST(&b->b_outs)) != NULL) {
		TAILQ_REMOVE(&b->b_outs, bo, bo_entry);
		agent_tunnel_abort(bo->bo_tun);
		free(bo);
	}
	msg_exec_free(&b->b_what);
	msg_result_free(&b->b_rs);
	free(b);
}

/*
 * PROC_INPUT: bytes for a running process's stdin, kept open at its
 * start (x_stdin_open), and or its end.  Answered with the process
 * (PROC, no output) once the bytes wait to be written, never held
 * longer: more than MSG_INPUT_MAX pending is refused (input-busy), and
 * the client tries again once the process has read.
 */
void
agent_proc_input(uint32_t id, struct msg_proc_input *pi)
{
	struct agent_bg	*b;

	if ((b = agent_bg_find(pi->pi_id)) == NULL) {
		agent_error(id, "process-not-found", "no process %u",
		    pi->pi_id);
		goto done;
	}
	if (b->b_job == NULL) {
		agent_error(id, "process-exited", "process %u has exited",
		    b->b_id);
		goto done;
	}
	if (agent_job_input(b->b_job, pi->pi_data, pi->pi_len,
	    pi->pi_close) == -1) {
		if (errno == EBUSY)
			agent_error(id, "input-busy", "process %u has %zu "
			    "bytes of stdin not read yet; at most %d wait",
			    b->b_id, b->b_job->j_stdin_len -
			    b->b_job->j_stdin_off, MSG_INPUT_MAX);
		else if (errno == EPIPE)
			agent_error(id, "input-closed", "the stdin of "
			    "process %u is closed (or was never kept open: "
			    "stdinOpen)", b->b_id);
		else
			agent_error(id, "exec-failed", "process %u: %s",
			    b->b_id, strerror(errno));
		goto done;
	}
	agent_bg_send(id, IMSG_AGENT_PROC, b, NULL, 0);
 done:
	msg_proc_input_free(pi);
}

/* PROCS: list, read, signal (the bearer checked by agent_dispatch()). */
void
agent_procs(uint32_t id, struct msg_proc_req *q)
{
	struct agent_bg	*b;

	if (q->q_op == MSG_PROC_LIST) {
		TAILQ_FOREACH(b, &agent_bgs, b_entry)
			agent_bg_send(id, IMSG_AGENT_PROC, b, NULL, 0);
		agent_reply(IMSG_AGENT_PROC_END, id, NULL, 0);
		goto done;
	}
	if ((b = agent_bg_find(q->q_id)) == NULL) {
		agent_error(id, "process-not-found", "no process %u",
		    q->q_id);
		goto done;
	}
	if (q->q_op == MSG_PROC_READ)
		agent_bg_send(id, IMSG_AGENT_PROC, b, q->q_off, 0);
	else
		agent_bg_signal(id, b, (int)q->q_signal);
 done:
	explicit_bzero(q, sizeof(*q));
}

/* What is kept of b's stream now: *p at it. */
static size_t
agent_bg_kept_of(struct agent_bg *b, int stream, const uint8_t **p)
{
	int	 i = stream == MSG_CHUNK_STDOUT ? 0 : 1;

	if (b->b_job != NULL) {
		*p = b->b_job->j_out[i].o_buf;
		return (b->b_job->j_out[i].o_len);
	}
	*p = i == 0 ? b->b_rs.rs_stdout : b->b_rs.rs_stderr;
	return (i == 0 ? b->b_rs.rs_stdout_len : b->b_rs.rs_stderr_len);
}

/*
 * Send what the tunnel has room for of what was kept past bo_off; once
 * the process ended and everything kept went, the tunnel's end.  What
 * it writes past its maxBytes is not kept, so never sent: the output
 * a listing reads and the live one are the same bytes.
 */
static void
agent_bg_pump(struct agent_bg_out *bo)
{
	const uint8_t	*p;
	size_t		 kept, n;

	if (bo->bo_shut)
		return;
	kept = agent_bg_kept_of(bo->bo_bg, bo->bo_stream, &p);
	while (bo->bo_off < kept) {
		n = agent_tunnel_send(bo->bo_tun, p + bo->bo_off,
		    kept - bo->bo_off);
		if (n == 0)
			return;		/* to_resume */
		bo->bo_off += n;
	}
	if (bo->bo_bg->b_job == NULL) {
		bo->bo_shut = 1;
		agent_tunnel_shutdown(bo->bo_tun);
	}
}

/* j kept more of a stream: every tunnel of it sends on. */
static void
agent_bg_kept(struct agent_job *j, int stream)
{
	struct agent_bg	*b = j->j_arg;
	struct agent_bg_out *bo;

	TAILQ_FOREACH(bo, &b->b_outs, bo_entry)
		if (bo->bo_stream == stream)
			agent_bg_pump(bo);
}

/*
 * TUNNEL_OPEN of kind output: stream to_stream of process to_id, from
 * byte to_offset of what is kept (or its end), live until the process
 * ended and all of it went.  One that ended already sends what it kept
 * and ends.
 */
void
agent_bg_output(uint32_t id, const struct msg_tunnel_open *to)
{
	struct agent_bg	*b;
	struct agent_bg_out *bo;
	const uint8_t	*p;
	size_t		 kept;

	if ((b = agent_bg_find(to->to_id)) == NULL) {
		agent_error(id, "process-not-found", "no process %u",
		    to->to_id);
		return;
	}
	if (to->to_stream != MSG_CHUNK_STDOUT &&
	    to->to_stream != MSG_CHUNK_STDERR) {
		agent_error(id, "bad-request", "stream is 1 or 2");
		return;
	}
	if ((bo = calloc(1, sizeof(*bo))) == NULL) {
		agent_error(id, "exec-failed", "%s", strerror(errno));
		return;
	}
	if ((bo->bo_tun = agent_tunnel_new(id, &agent_bg_out_ops, bo)) ==
	    NULL) {
		free(bo);
		return;		/* answered by the engine */
	}
	bo->bo_bg = b;
	bo->bo_stream = (int)to->to_stream;
	kept = agent_bg_kept_of(b, bo->bo_stream, &p);
	bo->bo_off = to->to_offset < kept ? (size_t)to->to_offset : kept;
	TAILQ_INSERT_TAIL(&b->b_outs, bo, bo_entry);
	agent_bg_pump(bo);
}

/* Bytes for an output tunnel have nowhere to go: taken and dropped. */
static void
agent_bg_out_input(struct agent_tunnel *tun, void *arg)
{
	const uint8_t	*p;
	size_t		 n;

	if ((n = agent_tunnel_input(tun, &p)) > 0)
		agent_tunnel_consumed(tun, n);
}

static void
agent_bg_out_resume(struct agent_tunnel *tun, void *arg)
{
	agent_bg_pump(arg);
}

static void
agent_bg_out_closed(struct agent_tunnel *tun, void *arg)
{
	struct agent_bg_out *bo = arg;

	TAILQ_REMOVE(&bo->bo_bg->b_outs, bo, bo_entry);
	free(bo);
}
