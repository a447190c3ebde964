/*
 * msg_proc: the payloads about background processes, spoken between
 * the broker and a fence's agent (and fencectl and the broker): a
 * request (list, read, signal) and one process as the agent answers.
 * Starting one is IMSG_AGENT_SPAWN with a msg_exec (msg_agent.c).
 */
#include <sys/types.h>

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fenced.h"
#include "msg.h"
#include "mp.h"
#include "msg_codec.h"

static int	msg_proc_req_valid(const struct msg_proc_req *);
static int	msg_proc_valid(const struct msg_proc *);
static int	msg_proc_code_valid(const char *, size_t);

static const struct mc_field msg_proc_req_fields[] = {
	MC_S(struct msg_proc_req, q_key),
	MC_U(struct msg_proc_req, q_owner, 0, UINT32_MAX),
	MC_BEARER(struct msg_proc_req, q_bearer),
	MC_U(struct msg_proc_req, q_op, MSG_PROC_LIST, MSG_PROC_SIGNAL),
	MC_U(struct msg_proc_req, q_id, 0, MSG_PROC_ID_MAX),
	MC_U(struct msg_proc_req, q_signal, 0, 64),
	MC_UAT(offsetof(struct msg_proc_req, q_off[0]), sizeof(uint32_t), 0,
	    EXEC_OUTPUT_MAX),
	MC_UAT(offsetof(struct msg_proc_req, q_off[1]), sizeof(uint32_t), 0,
	    EXEC_OUTPUT_MAX),
};
static const struct mc_table msg_proc_req = MC_TABLE(msg_proc_req_fields);

/* Only the signals the API names; the id of one process, for two ops. */
static int
msg_proc_req_valid(const struct msg_proc_req *q)
{
	if (q->q_key[0] != '\0' && !fence_key_valid(q->q_key))
		return (0);
	if (q->q_op == MSG_PROC_LIST)
		return (q->q_id == 0 && q->q_signal == 0);
	if (q->q_id == 0)
		return (0);
	if (q->q_op == MSG_PROC_SIGNAL)
		return (q->q_signal == SIGHUP || q->q_signal == SIGINT ||
		    q->q_signal == SIGKILL || q->q_signal == SIGTERM);
	return (q->q_signal == 0);
}

int
msg_proc_req_encode(const struct msg_proc_req *q, void **buf, size_t *len)
{
	if (!msg_proc_req_valid(q)) {
		errno = EINVAL;
		return (-1);
	}
	return (mc_encode(&msg_proc_req, q, buf, len));
}

int
msg_proc_req_decode(const void *data, size_t len, struct msg_proc_req *out)
{
	struct msg_proc_req q;
	int		 ok;

	ok = mc_decode(&msg_proc_req, data, len, &q, sizeof(q)) == 0 &&
	    msg_proc_req_valid(&q);
	if (ok)
		*out = q;
	explicit_bzero(&q, sizeof(q));
	if (!ok)
		errno = EBADMSG;
	return (ok ? 0 : -1);
}

static const struct mc_field msg_proc_fields[] = {
	MC_U(struct msg_proc, p_id, 1, MSG_PROC_ID_MAX),
	MC_B(struct msg_proc, p_running),
	MC_B(struct msg_proc, p_forgotten),
	MC_U(struct msg_proc, p_count, 0, UINT32_MAX),
	MC_ARGV(struct msg_proc, p_argv, p_argc, MSG_ARGV_MAX,
	    MSG_ARG_MAX + 1),
	MC_TEXT(struct msg_proc, p_command, MSG_COMMAND_MAX + 1),
	MC_U(struct msg_proc, p_age_ms, 0, UINT32_MAX),
	MC_U(struct msg_proc, p_timeout_ms, 0, UINT32_MAX),
	MC_U(struct msg_proc, p_max_bytes, 0, EXEC_OUTPUT_MAX),
	MC_UAT(offsetof(struct msg_proc, p_kept[0]), sizeof(uint32_t), 0,
	    EXEC_OUTPUT_MAX),
	MC_UAT(offsetof(struct msg_proc, p_kept[1]), sizeof(uint32_t), 0,
	    EXEC_OUTPUT_MAX),
	MC_UAT(offsetof(struct msg_proc, p_off[0]), sizeof(uint32_t), 0,
	    EXEC_OUTPUT_MAX),
	MC_UAT(offsetof(struct msg_proc, p_off[1]), sizeof(uint32_t), 0,
	    EXEC_OUTPUT_MAX),
	MC_S(struct msg_proc, p_error),
	MC_S(struct msg_proc, p_message),
	MC_I(struct msg_proc, p_exit, -1, 255),
	MC_I(struct msg_proc, p_signal, 0, 64),
	MC_U(struct msg_proc, p_duration_ms, 0, UINT32_MAX),
	MC_B(struct msg_proc, p_truncated),
	MC_DATA(struct msg_proc, p_stdout, p_stdout_len, EXEC_OUTPUT_MAX),
	MC_DATA(struct msg_proc, p_stderr, p_stderr_len, EXEC_OUTPUT_MAX),
	MC_U(struct msg_proc, p_super, 0, UINT32_MAX),
	MC_TEXT(struct msg_proc, p_denials, MSG_DENIALS_TEXT_MAX),
	MC_U(struct msg_proc, p_denials_dropped, 0, MSG_DENIALS_DROPPED_MAX),
};
static const struct mc_table msg_proc = MC_TABLE(msg_proc_fields);

static int
msg_proc_code_valid(const char *s, size_t size)
{
	size_t	 i, len;

	if ((len = strnlen(s, size)) == size)
		return (0);
	for (i = 0; i < len; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		    (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
			return (0);
	return (1);
}

/*
 * What it ran (argv or command, as exec has them), output within what
 * was kept and within the budget, exit and signal as msg_result has
 * them once it exited.
 */
static int
msg_proc_valid(const struct msg_proc *p)
{
	size_t	 i;

	if (p->p_id == 0 || (p->p_argv == NULL) == (p->p_command == NULL))
		return (0);
	if (p->p_argv != NULL) {
		if (p->p_argc == 0 || p->p_argv[p->p_argc] != NULL)
			return (0);
		for (i = 0; i < p->p_argc; i++)
			if (p->p_argv[i] == NULL ||
			    !mp_utf8_valid(p->p_argv[i], strlen(p->p_argv[i])))
				return (0);
	} else if (!mp_utf8_valid(p->p_command, strlen(p->p_command)))
		return (0);
	if (!msg_proc_code_valid(p->p_error, sizeof(p->p_error)) ||
	    strnlen(p->p_message, sizeof(p->p_message)) ==
	    sizeof(p->p_message))
		return (0);
	if ((size_t)p->p_kept[0] + p->p_kept[1] > p->p_max_bytes)
		return (0);
	for (i = 0; i < 2; i++)
		if (p->p_off[i] > p->p_kept[i])
			return (0);
	if (p->p_stdout_len != p->p_kept[0] - p->p_off[0] &&
	    p->p_stdout_len != 0)
		return (0);
	if (p->p_stderr_len != p->p_kept[1] - p->p_off[1] &&
	    p->p_stderr_len != 0)
		return (0);
	if ((p->p_stdout == NULL && p->p_stdout_len > 0) ||
	    (p->p_stderr == NULL && p->p_stderr_len > 0))
		return (0);
	if (p->p_denials != NULL &&
	    msg_denials_parse(p->p_denials, NULL, 0) == -1)
		return (0);
	if (p->p_running)
		return (p->p_exit == 0 && p->p_signal == 0 &&
		    p->p_error[0] == '\0' && !p->p_forgotten);
	if (p->p_signal == 0)
		return (p->p_exit >= 0 && p->p_exit <= 255);
	return (p->p_exit == -1);
}

int
msg_proc_encode(const struct msg_proc *p, void **buf, size_t *len)
{
	if (!msg_proc_valid(p)) {
		errno = EINVAL;
		return (-1);
	}
	return (mc_encode(&msg_proc, p, buf, len));
}

int
msg_proc_decode(const void *data, size_t len, struct msg_proc *out)
{
	struct msg_proc	 p;

	if (mc_decode(&msg_proc, data, len, &p, sizeof(p)) == -1 ||
	    !msg_proc_valid(&p)) {
		msg_proc_free(&p);
		errno = EBADMSG;
		return (-1);
	}
	*out = p;
	return (0);
}

void
msg_proc_free(struct msg_proc *p)
{
	mc_free(&msg_proc, p);
}
