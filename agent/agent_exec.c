/*
 * EXEC requests: check them, run them as a job, answer RESULT or ERROR.
 * The codes are listed in docs/agent.md.
 */
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fenced.h"
#include "imsg.h"
#include "log.h"
#include "msg.h"
#include "agent.h"

static void	agent_exec_done(struct agent_job *);
static void	agent_exec_run(uint32_t, struct msg_exec *, int, int);

/*
 * 0 in the request is the default: tdef for the timeout, the HELLO's
 * for the output; otherwise timeoutMs is min..tmax, maxBytes min..max
 * of the HELLO.  Refused with the request's error.
 */
int
agent_exec_limits(uint32_t id, const struct msg_exec *x, uint32_t tdef,
    uint32_t tmax, uint32_t *tmo, uint32_t *max)
{
	const struct msg_hello *h = &agent_env->a_hello;

	*tmo = x->x_timeout_ms ? x->x_timeout_ms : tdef;
	*max = x->x_max_bytes ? x->x_max_bytes : h->h_output_def;
	if (*tmo < EXEC_TIMEOUT_MIN || *tmo > tmax) {
		agent_error(id, "exec-bad-request", "timeoutMs must be "
		    "%u..%u, not %u", EXEC_TIMEOUT_MIN, tmax, *tmo);
		return (-1);
	}
	if (*max < EXEC_OUTPUT_MIN || *max > h->h_output_max) {
		agent_error(id, "exec-bad-request", "maxBytes must be "
		    "%u..%u, not %u", EXEC_OUTPUT_MIN, h->h_output_max, *max);
		return (-1);
	}
	return (0);
}

/* What runs for x: its argv, or `sh -c' of its command in shargv. */
void
agent_exec_spawn(const struct msg_exec *x, struct agent_spawn *sp,
    char *shargv[4])
{
	memset(sp, 0, sizeof(*sp));
	sp->sp_cwd = x->x_cwd;
	if (x->x_command != NULL) {
		shargv[0] = "sh";
		shargv[1] = "-c";
		shargv[2] = x->x_command;
		shargv[3] = NULL;
		sp->sp_path = AGENT_SHELL;
		sp->sp_argv = shargv;
	} else
		sp->sp_argv = x->x_argv;
}

/*
 * x is ours: its stdin goes to the job, the rest is freed here.  The
 * bearer was checked before (agent_dispatch()), so an unpaired request
 * never comes here.
 */
void
agent_exec(uint32_t id, struct msg_exec *x)
{
	agent_exec_run(id, x, 0, 0);
}

/* EXEC_STREAM: the same, its output in CHUNKs as well (agent_stream.c). */
void
agent_exec_stream(uint32_t id, struct msg_exec *x)
{
	agent_exec_run(id, x, 1, 0);
}

/*
 * PROBE: the same as EXEC, for fence-probe: its stdin (the canary's
 * secret), stdout and stderr are sockets, which /proc cannot reopen.
 */
void
agent_probe(uint32_t id, struct msg_exec *x)
{
	agent_exec_run(id, x, 0, 1);
}

static void
agent_exec_run(uint32_t id, struct msg_exec *x, int stream, int sockets)
{
	struct agent_spawn sp;
	struct agent_job *j;
	char		*shargv[4];
	uint32_t	 tmo, max;

	if (agent_exec_limits(id, x, agent_env->a_hello.h_timeout_def,
	    agent_env->a_hello.h_timeout_max, &tmo, &max) == -1)
		goto done;
	if (agent_busy()) {
		agent_error(id, "exec-busy", "%d commands are running",
		    AGENT_JOBS_MAX);
		goto done;
	}
	agent_exec_spawn(x, &sp, shargv);
	sp.sp_sockets = sockets;
	if ((j = agent_job_start(id, &sp, tmo, max, agent_exec_done,
	    NULL)) == NULL) {
		agent_error(id, "exec-failed", "cannot start: %s",
		    strerror(errno));
		goto done;
	}
	if (stream) {
		j->j_stream = 1;
		j->j_credit = MSG_STREAM_WINDOW;
	}
	agent_job_stdin(j, x->x_stdin, x->x_stdin_len);
	x->x_stdin = NULL;
	x->x_stdin_len = 0;
done:
	msg_exec_free(x);
}

/*
 * Answer with an ERROR if the job never ran its command; 1 then (and
 * the job is freed), else 0.  git names its own missing binary.
 */
int
agent_job_failed(struct agent_job *j, const char *enoent_code)
{
	const struct agent_report *rp = &j->j_report;
	uint32_t	 id = j->j_id;

	if (!j->j_have_report) {
		agent_error(id, "exec-failed", "supervisor ended with status "
		    "0x%x", j->j_status);
	} else if (rp->rp_stage == STAGE_CWD && rp->rp_errno == EXDEV) {
		agent_error(id, "exec-cwd-outside-home", "the directory is "
		    "not inside %s", agent_env->a_hello.h_home);
	} else if (rp->rp_stage == STAGE_CWD && rp->rp_errno == EINVAL) {
		agent_error(id, "exec-cwd-invalid", "\".\" or \"..\" in the "
		    "part of the path that does not exist yet");
	} else if (rp->rp_stage == STAGE_CWD) {
		agent_error(id, "exec-cwd-invalid", "directory %s: %s",
		    j->j_cwd, strerror(rp->rp_errno));
	} else if (rp->rp_stage == STAGE_SETUP) {
		agent_error(id, "exec-failed", "cannot start: %s",
		    strerror(rp->rp_errno));
	} else if (rp->rp_stage == STAGE_EXEC && rp->rp_errno == ENOENT &&
	    enoent_code != NULL) {
		agent_error(id, enoent_code, "%s is not installed", AGENT_GIT);
	} else if (rp->rp_stage == STAGE_EXEC) {
		agent_error(id, "exec-failed", "cannot execute %s: %s%s",
		    j->j_prog, strerror(rp->rp_errno), rp->rp_errno == ENOENT &&
		    strchr(j->j_prog, '/') == NULL ? " (not in PATH)" : "");
	} else
		return (0);
	agent_job_free(j);
	return (1);
}

/*
 * The result of a job that ran.  The output buffers move into rs:
 * msg_result_free() it.
 */
void
agent_job_to_result(struct agent_job *j, struct msg_result *rs)
{
	int	 st = j->j_report.rp_status;

	memset(rs, 0, sizeof(*rs));
	if (WIFSIGNALED(st)) {
		rs->rs_exit = -1;
		rs->rs_signal = WTERMSIG(st);
	} else
		rs->rs_exit = WEXITSTATUS(st);
	if (j->j_kill == KILL_TIMEOUT) {
		strlcpy(rs->rs_error, "exec-timeout", sizeof(rs->rs_error));
		strlcpy(rs->rs_message, "the command ran out of time",
		    sizeof(rs->rs_message));
	} else if (j->j_kill == KILL_BUDGET) {
		strlcpy(rs->rs_error, "exec-output-over-budget",
		    sizeof(rs->rs_error));
		strlcpy(rs->rs_message, "the command wrote more than "
		    "maxBytes", sizeof(rs->rs_message));
	} else if (j->j_kill == KILL_CANCEL) {
		strlcpy(rs->rs_error, "exec-cancelled", sizeof(rs->rs_error));
		strlcpy(rs->rs_message, "the client of the stream went away",
		    sizeof(rs->rs_message));
	}
	rs->rs_stdout = j->j_out[0].o_buf;
	rs->rs_stdout_len = j->j_out[0].o_len;
	rs->rs_stderr = j->j_out[1].o_buf;
	rs->rs_stderr_len = j->j_out[1].o_len;
	j->j_out[0].o_buf = j->j_out[1].o_buf = NULL;
	j->j_out[0].o_len = j->j_out[1].o_len = 0;
	rs->rs_duration_ms = j->j_duration_ms;
	rs->rs_truncated = j->j_truncated;
	rs->rs_super = j->j_super_pid > 0 ? (uint32_t)j->j_super_pid : 0;
}

static void
agent_exec_done(struct agent_job *j)
{
	struct msg_result rs;

	if (agent_job_failed(j, NULL))
		return;
	agent_job_to_result(j, &rs);
	log_debug("%s: request %u: exit %d signal %d, %zu+%zu bytes, %u ms%s",
	    __func__, j->j_id, rs.rs_exit, rs.rs_signal, rs.rs_stdout_len,
	    rs.rs_stderr_len, rs.rs_duration_ms, rs.rs_error);
	agent_result(j->j_id, &rs);
	msg_result_free(&rs);
	/*
	 * Out now: freeing the job may make the next spare, a fork, which
	 * would otherwise go before the loop's next turn writes this.
	 */
	imsgev_push(agent_env->a_iev);
	agent_job_free(j);
}
