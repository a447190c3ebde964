/*
 * msg_agent: the payloads spoken with the in-fence agent: each one field
 * table (msg_codec.h) in wire order with every length bounded, and one
 * validity check shared by encoder and decoder.
 *
 * The bearer travels as a bin of MSG_BEARER_LEN bytes, or of none when
 * the request carries no bearer; in the struct a missing bearer is all
 * zero bytes (the fencer never mints that one: msg_hello refuses it).
 *
 * Request values that are well formed but out of policy (a timeout out
 * of range, a git value with a newline) pass the codec: the agent
 * answers them with an error, it does not hang up on its peer.
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

#define MSG_SIGNAL_MAX		64	/* highest Linux signal number */

static int	msg_agent_bad(void);
static int	msg_agent_einval(void);
static int	msg_code_valid(const char *, size_t);
static int	msg_bearer_set(const uint8_t *);
static int	msg_hello_valid(const struct msg_hello *);
static int	msg_exec_valid(const struct msg_exec *);
static int	msg_result_valid(const struct msg_result *);
static int	msg_gitconfig_valid(const struct msg_gitconfig *);
static int	msg_gitinit_valid(const struct msg_gitinit *);

static int
msg_agent_bad(void)
{
	errno = EBADMSG;
	return (-1);
}

static int
msg_agent_einval(void)
{
	errno = EINVAL;
	return (-1);
}

/* "" or a machine word as msg_error has them: [a-z0-9_-]. */
static int
msg_code_valid(const char *s, size_t size)
{
	size_t	 i, len;

	if ((len = strnlen(s, size)) == size)
		return (0);
	for (i = 0; i < len; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		    (s[i] >= '0' && s[i] <= '9') || s[i] == '-' ||
		    s[i] == '_'))
			return (0);
	return (1);
}

static int
msg_bearer_set(const uint8_t *b)
{
	uint8_t	 acc = 0;
	size_t	 i;

	for (i = 0; i < MSG_BEARER_LEN; i++)
		acc |= b[i];
	return (acc != 0);
}


/*
 * HELLO: the fencer's first words to the agent.
 */
static int
msg_hello_valid(const struct msg_hello *h)
{
	if (!msg_bearer_set(h->h_bearer) || !fence_key_valid(h->h_key))
		return (0);
	if (strnlen(h->h_user, sizeof(h->h_user)) == 0 ||
	    strnlen(h->h_user, sizeof(h->h_user)) == sizeof(h->h_user) ||
	    strchr(h->h_user, '/') != NULL)
		return (0);
	if (h->h_home[0] != '/' ||
	    strnlen(h->h_home, sizeof(h->h_home)) == sizeof(h->h_home))
		return (0);
	if (h->h_timeout_def < EXEC_TIMEOUT_MIN ||
	    h->h_timeout_max > EXEC_TIMEOUT_MAX ||
	    h->h_timeout_def > h->h_timeout_max)
		return (0);
	if (h->h_output_def < EXEC_OUTPUT_MIN ||
	    h->h_output_max > EXEC_OUTPUT_MAX ||
	    h->h_output_def > h->h_output_max)
		return (0);
	return (1);
}

static const struct mc_field msg_hello_fields[] = {
	MC_BEARER(struct msg_hello, h_bearer),
	MC_S(struct msg_hello, h_key),
	MC_S(struct msg_hello, h_user),
	MC_S(struct msg_hello, h_home),
	MC_U(struct msg_hello, h_timeout_def,
	    EXEC_TIMEOUT_MIN, EXEC_TIMEOUT_MAX),
	MC_U(struct msg_hello, h_timeout_max,
	    EXEC_TIMEOUT_MIN, EXEC_TIMEOUT_MAX),
	MC_U(struct msg_hello, h_output_def, EXEC_OUTPUT_MIN, EXEC_OUTPUT_MAX),
	MC_U(struct msg_hello, h_output_max, EXEC_OUTPUT_MIN, EXEC_OUTPUT_MAX),
	MC_B(struct msg_hello, h_egress),
	MC_B(struct msg_hello, h_fdpass),
};
static const struct mc_table msg_hello = MC_TABLE(msg_hello_fields);

int
msg_hello_encode(const struct msg_hello *h, void **buf, size_t *len)
{
	if (!msg_hello_valid(h))
		return (msg_agent_einval());
	return (mc_encode(&msg_hello, h, buf, len));
}

/* The bearer stays in h alone, wiped here, and in data (imsg_free()). */
int
msg_hello_decode(const void *data, size_t len, struct msg_hello *out)
{
	struct msg_hello h;
	int		 ok;

	ok = mc_decode(&msg_hello, data, len, &h, sizeof(h)) == 0 &&
	    msg_hello_valid(&h);
	if (ok)
		*out = h;
	explicit_bzero(&h, sizeof(h));
	return (ok ? 0 : msg_agent_bad());
}

/*
 * EXEC: argv, an array of 0..MSG_ARGV_MAX strings of at most MSG_ARG_MAX
 * bytes each, and command, a string of at most MSG_COMMAND_MAX bytes;
 * exactly one of the two is used: the other is [] or "" on the wire.
 * No string holds a NUL (the reader refuses them).
 */
static int
msg_exec_valid(const struct msg_exec *x)
{
	size_t	 i, len;

	if (x->x_key[0] != '\0' && !fence_key_valid(x->x_key))
		return (0);
	if ((x->x_argv == NULL) == (x->x_command == NULL))
		return (0);
	if (x->x_argv != NULL) {
		if (x->x_argc == 0 || x->x_argc > MSG_ARGV_MAX ||
		    x->x_argv[x->x_argc] != NULL)
			return (0);
		for (i = 0; i < x->x_argc; i++) {
			if (x->x_argv[i] == NULL)
				return (0);
			len = strnlen(x->x_argv[i], MSG_ARG_MAX + 1);
			if (len > MSG_ARG_MAX || (i == 0 && len == 0) ||
			    !mp_utf8_valid(x->x_argv[i], len))
				return (0);
		}
	} else {
		len = strnlen(x->x_command, MSG_COMMAND_MAX + 1);
		if (len == 0 || len > MSG_COMMAND_MAX ||
		    !mp_utf8_valid(x->x_command, len))
			return (0);
	}
	if (strnlen(x->x_cwd, sizeof(x->x_cwd)) == sizeof(x->x_cwd))
		return (0);
	if (x->x_stdin_len > MSG_STDIN_MAX ||
	    (x->x_stdin == NULL && x->x_stdin_len > 0))
		return (0);
	return (1);
}

static const struct mc_field msg_exec_fields[] = {
	MC_S(struct msg_exec, x_key),
	MC_BEARER(struct msg_exec, x_bearer),
	MC_ARGV(struct msg_exec, x_argv, x_argc, MSG_ARGV_MAX,
	    MSG_ARG_MAX + 1),
	MC_TEXT(struct msg_exec, x_command, MSG_COMMAND_MAX + 1),
	MC_S(struct msg_exec, x_cwd),
	MC_U(struct msg_exec, x_timeout_ms, 0, UINT32_MAX),
	MC_U(struct msg_exec, x_max_bytes, 0, UINT32_MAX),
	MC_DATA(struct msg_exec, x_stdin, x_stdin_len, MSG_STDIN_MAX),
	MC_U(struct msg_exec, x_owner, 0, UINT32_MAX),
	MC_B(struct msg_exec, x_stdin_open),
	MC_B(struct msg_exec, x_undo),
};
static const struct mc_table msg_exec = MC_TABLE(msg_exec_fields);

int
msg_exec_encode(const struct msg_exec *x, void **buf, size_t *len)
{
	if (!msg_exec_valid(x))
		return (msg_agent_einval());
	return (mc_encode(&msg_exec, x, buf, len));
}

int
msg_exec_decode(const void *data, size_t len, struct msg_exec *out)
{
	struct msg_exec	 x;

	if (mc_decode(&msg_exec, data, len, &x, sizeof(x)) == -1 ||
	    !msg_exec_valid(&x)) {
		msg_exec_free(&x);
		return (msg_agent_bad());
	}
	*out = x;
	return (0);
}

/* Frees what a decoder allocated and wipes the bearer. */
void
msg_exec_free(struct msg_exec *x)
{
	mc_free(&msg_exec, x);
	explicit_bzero(x->x_bearer, sizeof(x->x_bearer));
}

/*
 * RESULT.  Exit and signal agree: a command that exited has rs_exit
 * 0..255 and rs_signal 0, one killed by a signal rs_exit -1.  Output is
 * bounded by EXEC_OUTPUT_MAX over stdout and stderr together.
 */
static int
msg_result_valid(const struct msg_result *rs)
{
	if (!msg_code_valid(rs->rs_error, sizeof(rs->rs_error)) ||
	    strnlen(rs->rs_message, sizeof(rs->rs_message)) ==
	    sizeof(rs->rs_message))
		return (0);
	if (rs->rs_signal == 0 && (rs->rs_exit < 0 || rs->rs_exit > 255))
		return (0);
	if (rs->rs_signal != 0 && (rs->rs_signal < 0 ||
	    rs->rs_signal > MSG_SIGNAL_MAX || rs->rs_exit != -1))
		return (0);
	if (rs->rs_stdout_len > EXEC_OUTPUT_MAX ||
	    rs->rs_stderr_len > EXEC_OUTPUT_MAX ||
	    rs->rs_stdout_len + rs->rs_stderr_len > EXEC_OUTPUT_MAX)
		return (0);
	if ((rs->rs_stdout == NULL && rs->rs_stdout_len > 0) ||
	    (rs->rs_stderr == NULL && rs->rs_stderr_len > 0))
		return (0);
	if ((rs->rs_denials != NULL &&
	    msg_denials_parse(rs->rs_denials, NULL, 0) == -1) ||
	    rs->rs_denials_dropped > MSG_DENIALS_DROPPED_MAX ||
	    !mc_printable(rs->rs_denials_note, sizeof(rs->rs_denials_note)))
		return (0);
	return (rs->rs_truncated == 0 || rs->rs_truncated == 1);
}

static const struct mc_field msg_result_fields[] = {
	MC_S(struct msg_result, rs_error),
	MC_S(struct msg_result, rs_message),
	MC_I(struct msg_result, rs_exit, -1, 255),
	MC_I(struct msg_result, rs_signal, 0, MSG_SIGNAL_MAX),
	MC_DATA(struct msg_result, rs_stdout, rs_stdout_len, EXEC_OUTPUT_MAX),
	MC_DATA(struct msg_result, rs_stderr, rs_stderr_len, EXEC_OUTPUT_MAX),
	MC_U(struct msg_result, rs_duration_ms, 0, UINT32_MAX),
	MC_B(struct msg_result, rs_truncated),
	MC_U(struct msg_result, rs_super, 0, UINT32_MAX),
	MC_TEXT(struct msg_result, rs_denials, MSG_DENIALS_TEXT_MAX),
	MC_U(struct msg_result, rs_denials_dropped, 0,
	    MSG_DENIALS_DROPPED_MAX),
	MC_S(struct msg_result, rs_denials_note),
};
static const struct mc_table msg_result = MC_TABLE(msg_result_fields);

int
msg_result_encode(const struct msg_result *rs, void **buf, size_t *len)
{
	if (!msg_result_valid(rs))
		return (msg_agent_einval());
	return (mc_encode(&msg_result, rs, buf, len));
}

int
msg_result_decode(const void *data, size_t len, struct msg_result *out)
{
	struct msg_result rs;

	if (mc_decode(&msg_result, data, len, &rs, sizeof(rs)) == -1 ||
	    !msg_result_valid(&rs)) {
		msg_result_free(&rs);
		return (msg_agent_bad());
	}
	*out = rs;
	return (0);
}

void
msg_result_free(struct msg_result *rs)
{
	mc_free(&msg_result, rs);
}

/*
 * GIT_CONFIG, and GIT_IDENTITY as its reply.  A value is at most
 * MSG_GIT_VALUE_MAX bytes; whether it is acceptable to git (no control
 * characters) is the agent's to answer.
 */
static int
msg_gitconfig_valid(const struct msg_gitconfig *g)
{
	if ((g->g_set_name != 0 && g->g_set_name != 1) ||
	    (g->g_set_email != 0 && g->g_set_email != 1))
		return (0);
	if (g->g_key[0] != '\0' && !fence_key_valid(g->g_key))
		return (0);
	return (strnlen(g->g_name, sizeof(g->g_name)) < sizeof(g->g_name) &&
	    strnlen(g->g_email, sizeof(g->g_email)) < sizeof(g->g_email));
}

static const struct mc_field msg_gitconfig_fields[] = {
	MC_S(struct msg_gitconfig, g_key),
	MC_BEARER(struct msg_gitconfig, g_bearer),
	MC_B(struct msg_gitconfig, g_set_name),
	MC_B(struct msg_gitconfig, g_set_email),
	MC_S(struct msg_gitconfig, g_name),
	MC_S(struct msg_gitconfig, g_email),
	MC_U(struct msg_gitconfig, g_owner, 0, UINT32_MAX),
};
static const struct mc_table msg_gitconfig = MC_TABLE(msg_gitconfig_fields);

int
msg_gitconfig_encode(const struct msg_gitconfig *g, void **buf, size_t *len)
{
	if (!msg_gitconfig_valid(g))
		return (msg_agent_einval());
	return (mc_encode(&msg_gitconfig, g, buf, len));
}

int
msg_gitconfig_decode(const void *data, size_t len, struct msg_gitconfig *out)
{
	struct msg_gitconfig g;
	int		 ok;

	ok = mc_decode(&msg_gitconfig, data, len, &g, sizeof(g)) == 0 &&
	    msg_gitconfig_valid(&g);
	if (ok)
		*out = g;
	explicit_bzero(&g, sizeof(g));
	return (ok ? 0 : msg_agent_bad());
}

/* GIT_INIT: a path, "" for HOME. */
static const struct mc_field msg_gitinit_fields[] = {
	MC_S(struct msg_gitinit, gi_key),
	MC_BEARER(struct msg_gitinit, gi_bearer),
	MC_S(struct msg_gitinit, gi_path),
	MC_U(struct msg_gitinit, gi_owner, 0, UINT32_MAX),
};
static const struct mc_table msg_gitinit = MC_TABLE(msg_gitinit_fields);

static int
msg_gitinit_valid(const struct msg_gitinit *gi)
{
	return (strnlen(gi->gi_path, sizeof(gi->gi_path)) <
	    sizeof(gi->gi_path) &&
	    (gi->gi_key[0] == '\0' || fence_key_valid(gi->gi_key)));
}

int
msg_gitinit_encode(const struct msg_gitinit *gi, void **buf, size_t *len)
{
	if (!msg_gitinit_valid(gi))
		return (msg_agent_einval());
	return (mc_encode(&msg_gitinit, gi, buf, len));
}

int
msg_gitinit_decode(const void *data, size_t len, struct msg_gitinit *out)
{
	struct msg_gitinit gi;
	int		 ok;

	ok = mc_decode(&msg_gitinit, data, len, &gi, sizeof(gi)) == 0 &&
	    msg_gitinit_valid(&gi);
	if (ok)
		*out = gi;
	explicit_bzero(&gi, sizeof(gi));
	return (ok ? 0 : msg_agent_bad());
}
