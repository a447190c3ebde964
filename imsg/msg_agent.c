/*
 * msg_agent: the payloads spoken with the in-fence agent, in the manner
 * of msg.c: a fixed array of fields in struct order, one validity check
 * shared by encoder and decoder, every length bounded.
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

#define MSG_HELLO_FIELDS	8
#define MSG_EXEC_FIELDS		9
#define MSG_RESULT_FIELDS	8
#define MSG_GITCONFIG_FIELDS	7
#define MSG_GITINIT_FIELDS	4

#define MSG_SIGNAL_MAX		64	/* highest Linux signal number */

static int	msg_agent_bad(void);
static int	msg_agent_einval(void);
static int	msg_code_valid(const char *, size_t);
static int	msg_bearer_set(const uint8_t *);
static void	msg_write_bearer(struct mp_writer *, const uint8_t *);
static int	msg_read_bearer(struct mp_reader *, uint8_t *);
static int	msg_hello_valid(const struct msg_hello *);
static int	msg_exec_valid(const struct msg_exec *);
static int	msg_exec_read_argv(struct mp_reader *, struct msg_exec *);
static int	msg_exec_read_command(struct mp_reader *, struct msg_exec *);
static int	msg_result_valid(const struct msg_result *);
static int	msg_read_bin_copy(struct mp_reader *, uint8_t **, size_t *,
		    size_t);
static int	msg_gitconfig_valid(const struct msg_gitconfig *);

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

static void
msg_write_bearer(struct mp_writer *w, const uint8_t *b)
{
	mp_write_bin(w, b, msg_bearer_set(b) ? MSG_BEARER_LEN : 0);
}

/*
 * Exactly MSG_BEARER_LEN bytes, or none.  -1 for any other length or an
 * all-zero bearer; the caller fails the whole payload then.
 */
static int
msg_read_bearer(struct mp_reader *r, uint8_t *b)
{
	const void	*p;
	size_t		 len;

	memset(b, 0, MSG_BEARER_LEN);
	if (mp_read_bin(r, &p, &len, MSG_BEARER_LEN) == -1)
		return (-1);
	if (len == 0)
		return (0);
	if (len != MSG_BEARER_LEN)
		return (-1);
	memcpy(b, p, MSG_BEARER_LEN);
	return (msg_bearer_set(b) ? 0 : -1);
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

int
msg_hello_encode(const struct msg_hello *h, void **buf, size_t *len)
{
	struct mp_writer w;

	if (!msg_hello_valid(h))
		return (msg_agent_einval());
	mp_write_init(&w);
	mp_write_array(&w, MSG_HELLO_FIELDS);
	msg_write_bearer(&w, h->h_bearer);
	mp_write_str(&w, h->h_key, sizeof(h->h_key));
	mp_write_str(&w, h->h_user, sizeof(h->h_user));
	mp_write_str(&w, h->h_home, sizeof(h->h_home));
	mp_write_u64(&w, h->h_timeout_def);
	mp_write_u64(&w, h->h_timeout_max);
	mp_write_u64(&w, h->h_output_def);
	mp_write_u64(&w, h->h_output_max);
	return (mp_write_finish(&w, buf, len));
}

int
msg_hello_decode(const void *data, size_t len, struct msg_hello *out)
{
	struct msg_hello h;
	struct mp_reader r;
	uint64_t	 u[4];
	int		 ok, bad;

	memset(&h, 0, sizeof(h));
	memset(u, 0, sizeof(u));
	mp_read_begin(&r, data, len, MSG_HELLO_FIELDS);
	bad = msg_read_bearer(&r, h.h_bearer) == -1;
	mp_read_str(&r, h.h_key, sizeof(h.h_key));
	mp_read_str(&r, h.h_user, sizeof(h.h_user));
	mp_read_str(&r, h.h_home, sizeof(h.h_home));
	mp_read_u64(&r, &u[0], EXEC_TIMEOUT_MIN, EXEC_TIMEOUT_MAX);
	mp_read_u64(&r, &u[1], EXEC_TIMEOUT_MIN, EXEC_TIMEOUT_MAX);
	mp_read_u64(&r, &u[2], EXEC_OUTPUT_MIN, EXEC_OUTPUT_MAX);
	mp_read_u64(&r, &u[3], EXEC_OUTPUT_MIN, EXEC_OUTPUT_MAX);
	ok = mp_read_end(&r) == 0 && !bad;
	if (ok) {
		h.h_timeout_def = (uint32_t)u[0];
		h.h_timeout_max = (uint32_t)u[1];
		h.h_output_def = (uint32_t)u[2];
		h.h_output_max = (uint32_t)u[3];
		ok = msg_hello_valid(&h);
	}
	if (!ok) {
		explicit_bzero(&h, sizeof(h));
		return (msg_agent_bad());
	}
	*out = h;
	explicit_bzero(&h, sizeof(h));
	return (0);
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

int
msg_exec_encode(const struct msg_exec *x, void **buf, size_t *len)
{
	struct mp_writer w;
	size_t		 i;

	if (!msg_exec_valid(x))
		return (msg_agent_einval());
	mp_write_init(&w);
	mp_write_array(&w, MSG_EXEC_FIELDS);
	mp_write_str(&w, x->x_key, sizeof(x->x_key));
	msg_write_bearer(&w, x->x_bearer);
	mp_write_array(&w, x->x_argv != NULL ? x->x_argc : 0);
	for (i = 0; x->x_argv != NULL && i < x->x_argc; i++)
		mp_write_str(&w, x->x_argv[i], MSG_ARG_MAX + 1);
	mp_write_str(&w, x->x_command != NULL ? x->x_command : "",
	    MSG_COMMAND_MAX + 1);
	mp_write_str(&w, x->x_cwd, sizeof(x->x_cwd));
	mp_write_u64(&w, x->x_timeout_ms);
	mp_write_u64(&w, x->x_max_bytes);
	mp_write_bin(&w, x->x_stdin, x->x_stdin_len);
	mp_write_u64(&w, x->x_owner);
	return (mp_write_finish(&w, buf, len));
}

/* The argv array; an empty one leaves x_argv NULL. */
static int
msg_exec_read_argv(struct mp_reader *r, struct msg_exec *x)
{
	char	 arg[MSG_ARG_MAX + 1];
	size_t	 i, n;

	if (mp_read_array(r, &n, MSG_ARGV_MAX) == -1)
		return (-1);
	if (n > 0) {
		if ((x->x_argv = calloc(n + 1, sizeof(*x->x_argv))) == NULL)
			return (-1);
		x->x_argc = n;
	}
	for (i = 0; i < n; i++) {
		if (mp_read_str(r, arg, sizeof(arg)) == -1)
			return (-1);
		if ((x->x_argv[i] = strdup(arg)) == NULL)
			return (-1);
	}
	return (mp_read_leave(r));
}

/* The command; an empty one leaves x_command NULL. */
static int
msg_exec_read_command(struct mp_reader *r, struct msg_exec *x)
{
	char	*s;

	if ((s = malloc(MSG_COMMAND_MAX + 1)) == NULL)
		return (-1);
	if (mp_read_str(r, s, MSG_COMMAND_MAX + 1) == -1) {
		free(s);
		return (-1);
	}
	if (s[0] == '\0') {
		free(s);
		return (0);
	}
	x->x_command = strdup(s);
	free(s);
	return (x->x_command == NULL ? -1 : 0);
}

/* A bin of at most max bytes, copied; none leaves *p NULL. */
static int
msg_read_bin_copy(struct mp_reader *r, uint8_t **p, size_t *plen, size_t max)
{
	const void	*src;
	size_t		 len;

	if (mp_read_bin(r, &src, &len, max) == -1)
		return (-1);
	if (len == 0)
		return (0);
	if ((*p = malloc(len)) == NULL)
		return (-1);
	memcpy(*p, src, len);
	*plen = len;
	return (0);
}

int
msg_exec_decode(const void *data, size_t len, struct msg_exec *out)
{
	struct msg_exec	 x;
	struct mp_reader r;
	uint64_t	 tmo = 0, max = 0, owner = 0;
	int		 bad = 0;

	memset(&x, 0, sizeof(x));
	mp_read_begin(&r, data, len, MSG_EXEC_FIELDS);
	mp_read_str(&r, x.x_key, sizeof(x.x_key));
	bad |= msg_read_bearer(&r, x.x_bearer) == -1;
	bad |= msg_exec_read_argv(&r, &x) == -1;
	bad |= msg_exec_read_command(&r, &x) == -1;
	mp_read_str(&r, x.x_cwd, sizeof(x.x_cwd));
	mp_read_u64(&r, &tmo, 0, UINT32_MAX);
	mp_read_u64(&r, &max, 0, UINT32_MAX);
	bad |= msg_read_bin_copy(&r, &x.x_stdin, &x.x_stdin_len,
	    MSG_STDIN_MAX) == -1;
	mp_read_u64(&r, &owner, 0, UINT32_MAX);
	x.x_owner = (uid_t)owner;
	x.x_timeout_ms = (uint32_t)tmo;
	x.x_max_bytes = (uint32_t)max;
	if (mp_read_end(&r) == -1 || bad || !msg_exec_valid(&x)) {
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
	size_t	 i;

	if (x->x_argv != NULL) {
		for (i = 0; x->x_argv[i] != NULL; i++)
			free(x->x_argv[i]);
		free(x->x_argv);
	}
	free(x->x_command);
	free(x->x_stdin);
	explicit_bzero(x->x_bearer, sizeof(x->x_bearer));
	x->x_argv = NULL;
	x->x_argc = 0;
	x->x_command = NULL;
	x->x_stdin = NULL;
	x->x_stdin_len = 0;
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
	return (rs->rs_truncated == 0 || rs->rs_truncated == 1);
}

int
msg_result_encode(const struct msg_result *rs, void **buf, size_t *len)
{
	struct mp_writer w;

	if (!msg_result_valid(rs))
		return (msg_agent_einval());
	mp_write_init(&w);
	mp_write_array(&w, MSG_RESULT_FIELDS);
	mp_write_str(&w, rs->rs_error, sizeof(rs->rs_error));
	mp_write_str(&w, rs->rs_message, sizeof(rs->rs_message));
	mp_write_i64(&w, rs->rs_exit);
	mp_write_i64(&w, rs->rs_signal);
	mp_write_bin(&w, rs->rs_stdout, rs->rs_stdout_len);
	mp_write_bin(&w, rs->rs_stderr, rs->rs_stderr_len);
	mp_write_u64(&w, rs->rs_duration_ms);
	mp_write_bool(&w, rs->rs_truncated);
	return (mp_write_finish(&w, buf, len));
}

int
msg_result_decode(const void *data, size_t len, struct msg_result *out)
{
	struct msg_result rs;
	struct mp_reader r;
	int64_t		 ex = 0, sig = 0;
	uint64_t	 dur = 0;
	int		 bad = 0;

	memset(&rs, 0, sizeof(rs));
	mp_read_begin(&r, data, len, MSG_RESULT_FIELDS);
	mp_read_str(&r, rs.rs_error, sizeof(rs.rs_error));
	mp_read_str(&r, rs.rs_message, sizeof(rs.rs_message));
	mp_read_i64(&r, &ex, -1, 255);
	mp_read_i64(&r, &sig, 0, MSG_SIGNAL_MAX);
	bad |= msg_read_bin_copy(&r, &rs.rs_stdout, &rs.rs_stdout_len,
	    EXEC_OUTPUT_MAX) == -1;
	bad |= msg_read_bin_copy(&r, &rs.rs_stderr, &rs.rs_stderr_len,
	    EXEC_OUTPUT_MAX) == -1;
	mp_read_u64(&r, &dur, 0, UINT32_MAX);
	mp_read_bool(&r, &rs.rs_truncated);
	rs.rs_exit = (int32_t)ex;
	rs.rs_signal = (int32_t)sig;
	rs.rs_duration_ms = (uint32_t)dur;
	if (mp_read_end(&r) == -1 || bad || !msg_result_valid(&rs)) {
		msg_result_free(&rs);
		return (msg_agent_bad());
	}
	*out = rs;
	return (0);
}

void
msg_result_free(struct msg_result *rs)
{
	free(rs->rs_stdout);
	free(rs->rs_stderr);
	rs->rs_stdout = rs->rs_stderr = NULL;
	rs->rs_stdout_len = rs->rs_stderr_len = 0;
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

int
msg_gitconfig_encode(const struct msg_gitconfig *g, void **buf, size_t *len)
{
	struct mp_writer w;

	if (!msg_gitconfig_valid(g))
		return (msg_agent_einval());
	mp_write_init(&w);
	mp_write_array(&w, MSG_GITCONFIG_FIELDS);
	mp_write_str(&w, g->g_key, sizeof(g->g_key));
	msg_write_bearer(&w, g->g_bearer);
	mp_write_bool(&w, g->g_set_name);
	mp_write_bool(&w, g->g_set_email);
	mp_write_str(&w, g->g_name, sizeof(g->g_name));
	mp_write_str(&w, g->g_email, sizeof(g->g_email));
	mp_write_u64(&w, g->g_owner);
	return (mp_write_finish(&w, buf, len));
}

int
msg_gitconfig_decode(const void *data, size_t len, struct msg_gitconfig *out)
{
	struct msg_gitconfig g;
	struct mp_reader r;
	uint64_t	 owner = 0;
	int		 bad;

	memset(&g, 0, sizeof(g));
	mp_read_begin(&r, data, len, MSG_GITCONFIG_FIELDS);
	mp_read_str(&r, g.g_key, sizeof(g.g_key));
	bad = msg_read_bearer(&r, g.g_bearer) == -1;
	mp_read_bool(&r, &g.g_set_name);
	mp_read_bool(&r, &g.g_set_email);
	mp_read_str(&r, g.g_name, sizeof(g.g_name));
	mp_read_str(&r, g.g_email, sizeof(g.g_email));
	mp_read_u64(&r, &owner, 0, UINT32_MAX);
	if (mp_read_end(&r) == -1 || bad || !msg_gitconfig_valid(&g)) {
		explicit_bzero(&g, sizeof(g));
		return (msg_agent_bad());
	}
	g.g_owner = (uid_t)owner;
	*out = g;
	explicit_bzero(&g, sizeof(g));
	return (0);
}

/* GIT_INIT: a path, "" for HOME. */
int
msg_gitinit_encode(const struct msg_gitinit *gi, void **buf, size_t *len)
{
	struct mp_writer w;

	if (strnlen(gi->gi_path, sizeof(gi->gi_path)) == sizeof(gi->gi_path) ||
	    (gi->gi_key[0] != '\0' && !fence_key_valid(gi->gi_key)))
		return (msg_agent_einval());
	mp_write_init(&w);
	mp_write_array(&w, MSG_GITINIT_FIELDS);
	mp_write_str(&w, gi->gi_key, sizeof(gi->gi_key));
	msg_write_bearer(&w, gi->gi_bearer);
	mp_write_str(&w, gi->gi_path, sizeof(gi->gi_path));
	mp_write_u64(&w, gi->gi_owner);
	return (mp_write_finish(&w, buf, len));
}

int
msg_gitinit_decode(const void *data, size_t len, struct msg_gitinit *out)
{
	struct msg_gitinit gi;
	struct mp_reader r;
	uint64_t	 owner = 0;
	int		 bad;

	memset(&gi, 0, sizeof(gi));
	mp_read_begin(&r, data, len, MSG_GITINIT_FIELDS);
	mp_read_str(&r, gi.gi_key, sizeof(gi.gi_key));
	bad = msg_read_bearer(&r, gi.gi_bearer) == -1;
	mp_read_str(&r, gi.gi_path, sizeof(gi.gi_path));
	mp_read_u64(&r, &owner, 0, UINT32_MAX);
	if (mp_read_end(&r) == -1 || bad || (gi.gi_key[0] != '\0' &&
	    !fence_key_valid(gi.gi_key))) {
		explicit_bzero(&gi, sizeof(gi));
		return (msg_agent_bad());
	}
	gi.gi_owner = (uid_t)owner;
	*out = gi;
	explicit_bzero(&gi, sizeof(gi));
	return (0);
}
