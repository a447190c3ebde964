/*
 * msg_term: the payloads of terminals and of a background process's
 * stdin (docs/interactive.md), spoken between the broker and a fence's
 * agent, and between fencectl and the broker.
 */
#include <sys/types.h>

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fenced.h"
#include "msg.h"
#include "mp.h"
#include "msg_codec.h"

static int	msg_term_open_valid(const struct msg_term_open *);
static int	msg_term_req_valid(const struct msg_term_req *);
static int	msg_term_valid(const struct msg_term *);
static int	msg_proc_input_valid(const struct msg_proc_input *);
static int	msg_term_code_valid(const char *, size_t);

static const struct mc_field msg_term_open_fields[] = {
	MC_S(struct msg_term_open, to_key),
	MC_U(struct msg_term_open, to_owner, 0, UINT32_MAX),
	MC_BEARER(struct msg_term_open, to_bearer),
	MC_ARGV(struct msg_term_open, to_argv, to_argc, MSG_ARGV_MAX,
	    MSG_ARG_MAX + 1),
	MC_TEXT(struct msg_term_open, to_command, MSG_COMMAND_MAX + 1),
	MC_S(struct msg_term_open, to_cwd),
	MC_U(struct msg_term_open, to_cols, 1, MSG_TERM_DIM_MAX),
	MC_U(struct msg_term_open, to_rows, 1, MSG_TERM_DIM_MAX),
	MC_U(struct msg_term_open, to_idle_s, 0, MSG_TERM_IDLE_MAX),
};
static const struct mc_table msg_term_open = MC_TABLE(msg_term_open_fields);

/* argv or command as exec has them, or neither (the login shell). */
static int
msg_term_open_valid(const struct msg_term_open *to)
{
	size_t	 i, len;

	if (to->to_key[0] != '\0' && !fence_key_valid(to->to_key))
		return (0);
	if (to->to_argv != NULL && to->to_command != NULL)
		return (0);
	if (to->to_argv != NULL) {
		if (to->to_argc == 0 || to->to_argc > MSG_ARGV_MAX ||
		    to->to_argv[to->to_argc] != NULL)
			return (0);
		for (i = 0; i < to->to_argc; i++) {
			if (to->to_argv[i] == NULL)
				return (0);
			len = strnlen(to->to_argv[i], MSG_ARG_MAX + 1);
			if (len > MSG_ARG_MAX || (i == 0 && len == 0) ||
			    !mp_utf8_valid(to->to_argv[i], len))
				return (0);
		}
	} else if (to->to_command != NULL) {
		len = strnlen(to->to_command, MSG_COMMAND_MAX + 1);
		if (len == 0 || len > MSG_COMMAND_MAX ||
		    !mp_utf8_valid(to->to_command, len))
			return (0);
	}
	if (strnlen(to->to_cwd, sizeof(to->to_cwd)) == sizeof(to->to_cwd))
		return (0);
	return (to->to_cols >= 1 && to->to_cols <= MSG_TERM_DIM_MAX &&
	    to->to_rows >= 1 && to->to_rows <= MSG_TERM_DIM_MAX &&
	    to->to_idle_s <= MSG_TERM_IDLE_MAX);
}

int
msg_term_open_encode(const struct msg_term_open *to, void **buf,
    size_t *len)
{
	if (!msg_term_open_valid(to)) {
		errno = EINVAL;
		return (-1);
	}
	return (mc_encode(&msg_term_open, to, buf, len));
}

int
msg_term_open_decode(const void *data, size_t len, struct msg_term_open *out)
{
	struct msg_term_open to;

	if (mc_decode(&msg_term_open, data, len, &to, sizeof(to)) == -1 ||
	    !msg_term_open_valid(&to)) {
		msg_term_open_free(&to);
		errno = EBADMSG;
		return (-1);
	}
	*out = to;
	return (0);
}

/* Frees what a decoder allocated and wipes the bearer. */
void
msg_term_open_free(struct msg_term_open *to)
{
	mc_free(&msg_term_open, to);
	explicit_bzero(to->to_bearer, sizeof(to->to_bearer));
}

static const struct mc_field msg_term_req_fields[] = {
	MC_S(struct msg_term_req, tq_key),
	MC_U(struct msg_term_req, tq_owner, 0, UINT32_MAX),
	MC_BEARER(struct msg_term_req, tq_bearer),
	MC_U(struct msg_term_req, tq_op, MSG_TERM_LIST, MSG_TERM_KILL),
	MC_U(struct msg_term_req, tq_id, 0, UINT32_MAX),
	MC_U(struct msg_term_req, tq_cols, 0, MSG_TERM_DIM_MAX),
	MC_U(struct msg_term_req, tq_rows, 0, MSG_TERM_DIM_MAX),
};
static const struct mc_table msg_term_req = MC_TABLE(msg_term_req_fields);

/* Each op with the fields it takes, and no other. */
static int
msg_term_req_valid(const struct msg_term_req *tq)
{
	if (tq->tq_key[0] != '\0' && !fence_key_valid(tq->tq_key))
		return (0);
	switch (tq->tq_op) {
	case MSG_TERM_LIST:
		return (tq->tq_cols == 0 && tq->tq_rows == 0);
	case MSG_TERM_RESIZE:
		return (tq->tq_id != 0 && tq->tq_cols >= 1 &&
		    tq->tq_rows >= 1);
	case MSG_TERM_KILL:
		return (tq->tq_id != 0 && tq->tq_cols == 0 &&
		    tq->tq_rows == 0);
	}
	return (0);
}

int
msg_term_req_encode(const struct msg_term_req *tq, void **buf, size_t *len)
{
	if (!msg_term_req_valid(tq)) {
		errno = EINVAL;
		return (-1);
	}
	return (mc_encode(&msg_term_req, tq, buf, len));
}

int
msg_term_req_decode(const void *data, size_t len, struct msg_term_req *out)
{
	struct msg_term_req tq;
	int		 ok;

	ok = mc_decode(&msg_term_req, data, len, &tq, sizeof(tq)) == 0 &&
	    msg_term_req_valid(&tq);
	if (ok)
		*out = tq;
	explicit_bzero(&tq, sizeof(tq));
	if (!ok)
		errno = EBADMSG;
	return (ok ? 0 : -1);
}

static const struct mc_field msg_term_fields[] = {
	MC_U(struct msg_term, t_id, 1, UINT32_MAX),
	MC_B(struct msg_term, t_running),
	MC_B(struct msg_term, t_forgotten),
	MC_I(struct msg_term, t_exit, -1, 255),
	MC_I(struct msg_term, t_signal, 0, 64),
	MC_S(struct msg_term, t_why),
	MC_U(struct msg_term, t_cols, 1, MSG_TERM_DIM_MAX),
	MC_U(struct msg_term, t_rows, 1, MSG_TERM_DIM_MAX),
	MC_U(struct msg_term, t_age_ms, 0, UINT32_MAX),
	MC_B(struct msg_term, t_attached),
	MC_U(struct msg_term, t_kept, 0, MSG_TERM_RING),
	MC_U(struct msg_term, t_idle_s, 1, MSG_TERM_IDLE_MAX),
	MC_U(struct msg_term, t_count, 0, MSG_TERM_MAX),
	MC_S(struct msg_term, t_program),
	MC_U(struct msg_term, t_super, 0, UINT32_MAX),
	MC_S(struct msg_term, t_denials),
	MC_U(struct msg_term, t_denials_dropped, 0, MSG_DENIALS_DROPPED_MAX),
};
static const struct mc_table msg_term = MC_TABLE(msg_term_fields);

static int
msg_term_code_valid(const char *s, size_t size)
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

/* Running: no exit yet; ended: exit and signal as msg_result's. */
static int
msg_term_valid(const struct msg_term *t)
{
	if (!msg_term_code_valid(t->t_why, sizeof(t->t_why)) ||
	    !mc_printable(t->t_program, sizeof(t->t_program)))
		return (0);
	if (strnlen(t->t_denials, sizeof(t->t_denials)) ==
	    sizeof(t->t_denials) || msg_denials_parse(t->t_denials, NULL,
	    0) == -1 || t->t_denials_dropped > MSG_DENIALS_DROPPED_MAX)
		return (0);
	if (t->t_id == 0 || t->t_cols < 1 || t->t_cols > MSG_TERM_DIM_MAX ||
	    t->t_rows < 1 || t->t_rows > MSG_TERM_DIM_MAX ||
	    t->t_kept > MSG_TERM_RING || t->t_idle_s < 1 ||
	    t->t_idle_s > MSG_TERM_IDLE_MAX || t->t_count > MSG_TERM_MAX)
		return (0);
	if (t->t_running)
		return (t->t_exit == 0 && t->t_signal == 0 &&
		    t->t_why[0] == '\0' && !t->t_forgotten);
	if (t->t_attached)
		return (0);
	if (t->t_signal == 0)
		return (t->t_exit >= 0 && t->t_exit <= 255);
	return (t->t_exit == -1);
}

int
msg_term_encode(const struct msg_term *t, void **buf, size_t *len)
{
	if (!msg_term_valid(t)) {
		errno = EINVAL;
		return (-1);
	}
	return (mc_encode(&msg_term, t, buf, len));
}

int
msg_term_decode(const void *data, size_t len, struct msg_term *out)
{
	struct msg_term	 t;

	if (mc_decode(&msg_term, data, len, &t, sizeof(t)) == -1 ||
	    !msg_term_valid(&t)) {
		errno = EBADMSG;
		return (-1);
	}
	*out = t;
	return (0);
}

static const struct mc_field msg_proc_input_fields[] = {
	MC_S(struct msg_proc_input, pi_key),
	MC_U(struct msg_proc_input, pi_owner, 0, UINT32_MAX),
	MC_BEARER(struct msg_proc_input, pi_bearer),
	MC_U(struct msg_proc_input, pi_id, 1, MSG_PROC_ID_MAX),
	MC_DATA(struct msg_proc_input, pi_data, pi_len, MSG_INPUT_MAX),
	MC_B(struct msg_proc_input, pi_close),
};
static const struct mc_table msg_proc_input =
    MC_TABLE(msg_proc_input_fields);

/* Some bytes, or the end, or both: never nothing at all. */
static int
msg_proc_input_valid(const struct msg_proc_input *pi)
{
	if (pi->pi_key[0] != '\0' && !fence_key_valid(pi->pi_key))
		return (0);
	if (pi->pi_id == 0 || pi->pi_len > MSG_INPUT_MAX ||
	    (pi->pi_data == NULL) != (pi->pi_len == 0))
		return (0);
	return (pi->pi_len > 0 || pi->pi_close);
}

int
msg_proc_input_encode(const struct msg_proc_input *pi, void **buf,
    size_t *len)
{
	if (!msg_proc_input_valid(pi)) {
		errno = EINVAL;
		return (-1);
	}
	return (mc_encode(&msg_proc_input, pi, buf, len));
}

int
msg_proc_input_decode(const void *data, size_t len,
    struct msg_proc_input *out)
{
	struct msg_proc_input pi;

	if (mc_decode(&msg_proc_input, data, len, &pi, sizeof(pi)) == -1 ||
	    !msg_proc_input_valid(&pi)) {
		msg_proc_input_free(&pi);
		errno = EBADMSG;
		return (-1);
	}
	*out = pi;
	return (0);
}

void
msg_proc_input_free(struct msg_proc_input *pi)
{
	mc_free(&msg_proc_input, pi);
	explicit_bzero(pi->pi_bearer, sizeof(pi->pi_bearer));
}
