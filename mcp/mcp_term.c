/*
 * fence-mcp's terminals (docs/mcp.md, "Terminals"): an agent cannot
 * hold a stream over MCP, so it drives a terminal by calls.  term_open
 * asks fenced for one (IMSG_CTL_TERM_OPEN, as fencectl term) and
 * attaches to it with a tunnel of kind terminal (IMSG_CTL_TUNNEL), whose
 * descriptor fence-mcp holds from then on; mcp_poll() reads it whenever
 * fence-mcp waits for anything, into a buffer of MCP_TERM_OUT bytes
 * that drops its oldest bytes when full (and counts them), and writes
 * term_write's input as the terminal takes it.  term_read takes what
 * came since the last read, waiting at most wait_ms for something;
 * once the tunnel ended it asks fenced how the program ended.  At most
 * MCP_TERMS_MAX terminals at once; term_close kills one (or forgets one
 * that ended) and frees its place.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fenced.h"
#include "imsg.h"
#include "log.h"
#include "msg.h"
#include "mcp.h"

struct mcp_term {
	char		 t_key[FENCE_KEY_SIZE];
	uint32_t	 t_id;
	int		 t_fd;		/* the tunnel, -1 once it ended */
	int		 t_idx;		/* its pollfd in mcp_poll(), or -1 */
	uint8_t		 t_out[MCP_TERM_OUT];
	size_t		 t_outlen;
	uint64_t	 t_dropped;	/* since the last read */
	uint8_t		 t_in[MCP_TERM_IN];
	size_t		 t_inlen;
	int		 t_known;	/* its end is asked and kept */
	struct msg_term	 t_end;		/* fenced's word once it ended */
	char		 t_gone[MSG_ERROR_CODE_MAX];	/* or why not */
};

static struct mcp_term	*mcp_terms[MCP_TERMS_MAX];

static void
mcp_term_ended(struct mcp_term *t)
{
	if (t->t_fd != -1)
		(void)close(t->t_fd);
	t->t_fd = -1;
	t->t_inlen = 0;
}

int
mcp_term_fill(struct pollfd *pfd, int max)
{
	struct mcp_term	*t;
	int		 i, n = 0;

	for (i = 0; i < MCP_TERMS_MAX; i++) {
		if ((t = mcp_terms[i]) == NULL)
			continue;
		t->t_idx = -1;
		if (t->t_fd == -1 || n >= max)
			continue;
		pfd[n].fd = t->t_fd;
		pfd[n].events = POLLIN | (t->t_inlen > 0 ? POLLOUT : 0);
		pfd[n].revents = 0;
		t->t_idx = n++;
	}
	return (n);
}

/* Bytes in, the oldest dropped when there is no room. */
static void
mcp_term_keep(struct mcp_term *t, const uint8_t *p, size_t len)
{
	size_t	 drop;

	if (len > MCP_TERM_OUT) {
		t->t_dropped += t->t_outlen + len - MCP_TERM_OUT;
		p += len - MCP_TERM_OUT;
		len = MCP_TERM_OUT;
		t->t_outlen = 0;
	}
	if (t->t_outlen + len > MCP_TERM_OUT) {
		drop = t->t_outlen + len - MCP_TERM_OUT;
		memmove(t->t_out, t->t_out + drop, t->t_outlen - drop);
		t->t_outlen -= drop;
		t->t_dropped += drop;
	}
	memcpy(t->t_out + t->t_outlen, p, len);
	t->t_outlen += len;
}

/* Write what the terminal takes of the input waiting. */
static void
mcp_term_flush(struct mcp_term *t)
{
	ssize_t	 n;

	if (t->t_fd == -1 || t->t_inlen == 0)
		return;
	n = send(t->t_fd, t->t_in, t->t_inlen, MSG_NOSIGNAL | MSG_DONTWAIT);
	if (n == -1 && errno != EAGAIN && errno != EINTR) {
		mcp_term_ended(t);
		return;
	}
	if (n > 0) {
		memmove(t->t_in, t->t_in + n, t->t_inlen - (size_t)n);
		t->t_inlen -= (size_t)n;
	}
}

void
mcp_term_handle(struct pollfd *pfd, int n)
{
	static uint8_t	 buf[16384];
	struct mcp_term	*t;
	ssize_t		 r;
	int		 i;

	for (i = 0; i < MCP_TERMS_MAX; i++) {
		if ((t = mcp_terms[i]) == NULL || t->t_idx < 0 ||
		    t->t_idx >= n)
			continue;
		if (pfd[t->t_idx].revents & POLLOUT)
			mcp_term_flush(t);
		if (t->t_fd == -1 || !(pfd[t->t_idx].revents &
		    (POLLIN | POLLHUP | POLLERR)))
			continue;
		r = recv(t->t_fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (r > 0)
			mcp_term_keep(t, buf, (size_t)r);
		else if (r == 0 || (errno != EAGAIN && errno != EINTR))
			mcp_term_ended(t);
	}
}

/* The terminal id of key held, or NULL and the call failed. */
static struct mcp_term *
mcp_term_find(struct mcp_call *c, const char *key, uint32_t id)
{
	int	 i;

	for (i = 0; i < MCP_TERMS_MAX; i++)
		if (mcp_terms[i] != NULL && mcp_terms[i]->t_id == id &&
		    strcmp(mcp_terms[i]->t_key, key) == 0)
			return (mcp_terms[i]);
	mcp_failed(c, "no-terminal", "fence-mcp holds no terminal of that "
	    "id in that fence (term_open makes one)");
	return (NULL);
}

/* key and id, the arguments of every call but term_open. */
static int
mcp_term_args(struct mcp_call *c, char *key, uint32_t *id)
{
	if (mcp_arg_key(c, "key", key) == -1 ||
	    mcp_arg_int(c, "id", 1, UINT32_MAX, -1, id) == -1)
		return (-1);
	return (0);
}

static int
mcp_on_term(struct mcp_call *c, struct imsg *imsg, void *arg)
{
	struct msg_term	*t = arg;

	if (imsg->hdr.ih_type != IMSG_CTL_TERM || t->t_id != 0 ||
	    msg_term_decode(imsg->data, imsg->len, t) == -1 || t->t_id == 0)
		return (-1);
	return (0);
}

/* A terminal as a result's "terminal". */
static void
mcp_term_json(struct mcp_call *c, const struct msg_term *t)
{
	json_object_set_new(c->c_out, "terminal", json_pack("{s:I, s:b, "
	    "s:i, s:i, s:s, s:s, s:s}", "id", (json_int_t)t->t_id,
	    "running", t->t_running, "exit", (int)t->t_exit,
	    "signal", (int)t->t_signal, "why", t->t_why,
	    "program", t->t_program, "denials", t->t_denials));
}

/* A request of the terminal's (MSG_TERM_LIST, _KILL), its answer in t. */
static void
mcp_term_ask(struct mcp_call *q, const char *key, uint32_t op, uint32_t id,
    struct msg_term *t)
{
	struct msg_term_req tq;
	void		*buf;
	size_t		 len;

	memset(&tq, 0, sizeof(tq));
	strlcpy(tq.tq_key, key, sizeof(tq.tq_key));
	tq.tq_owner = MSG_OWNER_NONE;
	tq.tq_op = op;
	tq.tq_id = id;
	memset(t, 0, sizeof(*t));
	if (msg_term_req_encode(&tq, &buf, &len) == -1)
		mcp_failed(q, "bad-request", "cannot encode");
	else
		mcp_ask(q, IMSG_CTL_TERMS, buf, len, MCP_WAIT_MS, mcp_on_term,
		    t);
}

/* A scratch call's request: what it answers is not the caller's. */
static int
mcp_term_aside(const char *key, uint32_t op, uint32_t id, struct msg_term *t,
    char *code, size_t codelen)
{
	struct mcp_call	 q;
	const char	*e;

	memset(&q, 0, sizeof(q));
	if ((q.c_out = json_object()) == NULL) {
		strlcpy(code, "no-memory", codelen);
		return (-1);
	}
	mcp_term_ask(&q, key, op, id, t);
	e = json_string_value(json_object_get(json_object_get(q.c_out,
	    "error"), "code"));
	if (q.c_failed)
		strlcpy(code, e != NULL ? e : "no-answer", codelen);
	json_decref(q.c_out);
	return (q.c_failed ? -1 : 0);
}

int
mcp_term_open(struct mcp_call *c)
{
	struct msg_term_open to;
	struct msg_term	 t, k;
	struct mcp_term	*mt = NULL;
	const char	*s;
	char		 code[MSG_ERROR_CODE_MAX];
	void		*buf;
	size_t		 len;
	int		 i, r, fd;

	memset(&to, 0, sizeof(to));
	to.to_owner = MSG_OWNER_NONE;
	r = mcp_arg_key(c, "key", to.to_key);
	if (r == 0)
		r = mcp_arg_argv(c, &to.to_argv, &to.to_argc);
	if (r == 0)
		r = mcp_arg_str(c, "command", 0, MSG_COMMAND_MAX, &s);
	if (r == 0 && to.to_argv != NULL && s != NULL) {
		snprintf(c->c_bad, sizeof(c->c_bad), "term_open: argv or "
		    "command, not both (neither: the login shell)");
		r = -1;
	}
	to.to_command = (char *)s;
	if (r == 0)
		r = mcp_arg_int(c, "cols", 1, MSG_TERM_DIM_MAX, 80,
		    &to.to_cols);
	if (r == 0)
		r = mcp_arg_int(c, "rows", 1, MSG_TERM_DIM_MAX, 24,
		    &to.to_rows);
	if (r == 0 && msg_term_open_encode(&to, &buf, &len) == -1) {
		snprintf(c->c_bad, sizeof(c->c_bad), "cannot encode (each "
		    "argument UTF-8, at most %d bytes)", MSG_ARG_MAX - 1);
		r = -1;
	}
	free(to.to_argv);
	if (r == -1)
		return (-1);
	for (i = 0; i < MCP_TERMS_MAX && mcp_terms[i] != NULL; i++)
		;
	if (i == MCP_TERMS_MAX) {
		free(buf);
		snprintf(c->c_bad, sizeof(c->c_bad), "fence-mcp holds %d "
		    "terminals, its most; term_close one", MCP_TERMS_MAX);
		mcp_failed(c, "too-many-terminals", c->c_bad);
		c->c_bad[0] = '\0';
		mcp_show(c, to.to_key);
		return (0);
	}
	memset(&t, 0, sizeof(t));
	mcp_ask(c, IMSG_CTL_TERM_OPEN, buf, len, MCP_WAIT_MS, mcp_on_term,
	    &t);
	if (!c->c_failed && t.t_id == 0)
		mcp_failed(c, "bad-answer", "no terminal in fenced's answer");
	/* Attached from its first byte: all the ring holds. */
	fd = -1;
	if (!c->c_failed && (fd = mcp_tunnel(to.to_key, MSG_TUNNEL_TERMINAL,
	    t.t_id, MSG_TERM_RING, c)) != -1 &&
	    (mt = calloc(1, sizeof(*mt))) == NULL) {
		(void)close(fd);
		fd = -1;
		mcp_failed(c, "no-memory", "out of memory");
	}
	/* Not held: not left running unattached either. */
	if (fd == -1 && t.t_id != 0)
		(void)mcp_term_aside(to.to_key, MSG_TERM_KILL, t.t_id, &k,
		    code, sizeof(code));
	if (fd != -1) {
		strlcpy(mt->t_key, to.to_key, sizeof(mt->t_key));
		mt->t_id = t.t_id;
		mt->t_fd = fd;
		mt->t_idx = -1;
		mcp_terms[i] = mt;
		mcp_term_json(c, &t);
	}
	mcp_show(c, to.to_key);
	return (0);
}

int
mcp_term_write(struct mcp_call *c)
{
	struct mcp_term	*t;
	char		 key[FENCE_KEY_SIZE];
	const char	*s;
	uint32_t	 id;
	size_t		 len;

	if (mcp_term_args(c, key, &id) == -1 ||
	    mcp_arg_str(c, "input", 1, MCP_TERM_IN + 1, &s) == -1)
		return (-1);
	len = strlen(s);
	if ((t = mcp_term_find(c, key, id)) == NULL)
		;
	else if (t->t_fd == -1)
		mcp_failed(c, "terminal-ended", "the terminal ended; "
		    "term_read says how");
	else if (t->t_inlen + len > MCP_TERM_IN)
		mcp_failed(c, "input-busy", "the terminal has not taken the "
		    "input written before; term_read, then write again");
	else {
		memcpy(t->t_in + t->t_inlen, s, len);
		t->t_inlen += len;
		mcp_term_flush(t);
		json_object_set_new(c->c_out, "written", json_integer(len));
		json_object_set_new(c->c_out, "pending",
		    json_integer(t->t_inlen));
	}
	mcp_show(c, key);
	return (0);
}

/* A terminal's end as fenced tells it, asked once. */
static void
mcp_term_end(struct mcp_term *t)
{
	char	 code[MSG_ERROR_CODE_MAX];

	if (t->t_known)
		return;
	if (mcp_term_aside(t->t_key, MSG_TERM_LIST, t->t_id, &t->t_end,
	    code, sizeof(code)) == -1)
		/* not-found: its fence stopped, and the terminal with it. */
		strlcpy(t->t_gone, strcmp(code, "not-found") == 0 ?
		    "fence-stopped" : code, sizeof(t->t_gone));
	else if (t->t_end.t_running)
		strlcpy(t->t_gone, "detached", sizeof(t->t_gone));
	t->t_known = 1;
}

int
mcp_term_read(struct mcp_call *c)
{
	struct mcp_term	*t;
	struct timespec	 t0, now;
	char		 key[FENCE_KEY_SIZE], *s;
	uint32_t	 id, wait_ms;
	int		 waited = 0;
	size_t		 n;
	json_t		*o;

	if (mcp_term_args(c, key, &id) == -1 ||
	    mcp_arg_int(c, "wait_ms", 0, MCP_TERM_WAIT_MAX, 0, &wait_ms) == -1)
		return (-1);
	if ((t = mcp_term_find(c, key, id)) == NULL) {
		mcp_show(c, key);
		return (0);
	}
	/* Wait for something, the other terminals and forwards served. */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (t->t_outlen == 0 && t->t_fd != -1 &&
	    waited < (int)wait_ms) {
		mcp_ctl_sleep((int)wait_ms - waited < 20 ?
		    (int)wait_ms - waited : 20);
		clock_gettime(CLOCK_MONOTONIC, &now);
		waited = (now.tv_sec - t0.tv_sec) * 1000 +
		    (now.tv_nsec - t0.tv_nsec) / 1000000;
	}
	if ((s = mcp_utf8(t->t_out, t->t_outlen, &n)) == NULL) {
		mcp_failed(c, "no-memory", "out of memory");
		mcp_show(c, key);
		return (0);
	}
	o = json_pack("{s:I, s:s%, s:I, s:b}", "id", (json_int_t)t->t_id,
	    "output", s, n, "dropped", (json_int_t)t->t_dropped,
	    "ended", t->t_fd == -1);
	free(s);
	t->t_outlen = 0;
	t->t_dropped = 0;
	if (t->t_fd == -1 && o != NULL) {
		mcp_term_end(t);
		if (t->t_gone[0] != '\0')
			json_object_set_new(o, "why", json_string(t->t_gone));
		else {
			json_object_set_new(o, "exit",
			    json_integer(t->t_end.t_exit));
			json_object_set_new(o, "signal",
			    json_integer(t->t_end.t_signal));
			json_object_set_new(o, "why",
			    json_string(t->t_end.t_why));
			json_object_set_new(o, "denials",
			    json_string(t->t_end.t_denials));
		}
	}
	json_object_set_new(c->c_out, "terminal", o);
	mcp_show(c, key);
	return (0);
}

int
mcp_term_close(struct mcp_call *c)
{
	struct msg_term	 k;
	struct mcp_term	*t;
	char		 key[FENCE_KEY_SIZE], code[MSG_ERROR_CODE_MAX];
	uint32_t	 id;
	int		 i;

	if (mcp_term_args(c, key, &id) == -1)
		return (-1);
	if ((t = mcp_term_find(c, key, id)) != NULL) {
		/*
		 * Killed, or forgotten by fenced when it ended already; a
		 * refusal counts only for one that ran (a stopped fence
		 * took its terminals with it).
		 */
		if (t->t_fd != -1)
			mcp_term_ask(c, key, MSG_TERM_KILL, id, &k);
		else
			(void)mcp_term_aside(key, MSG_TERM_KILL, id, &k, code,
			    sizeof(code));
		mcp_term_ended(t);
		for (i = 0; i < MCP_TERMS_MAX; i++)
			if (mcp_terms[i] == t)
				mcp_terms[i] = NULL;
		free(t);
		json_object_set_new(c->c_out, "closed", json_integer(id));
	}
	mcp_show(c, key);
	return (0);
}
