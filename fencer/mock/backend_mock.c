/*
 * The mock backend (development builds only, docs/backends.md): a fence
 * with no process at all.  The agent's end of the channel stays in the
 * fencer, which answers the agent protocol (docs/agent.md) itself with
 * canned results, so that a UI can be built against the HTTP API and
 * the control socket without any fence machinery.  Nothing runs: no
 * command, no git, no probe; every request is checked as the agent
 * checks it (the bearer, the exec limits) and answered from what it
 * asked:
 *
 *	exec		exit 0, stdout "mock: <command>\n" then the
 *			request's stdin, cut at its maxBytes (truncated);
 *			a command "exit N" (N 0..255, as sh -c's text or
 *			as the words sh -c "exit N") exits N instead,
 *			with stderr "mock: exit N\n"
 *	git config	the name and email last written, "" before
 *	git init	exit 0, stdout "mock: git init <path>\n"
 *
 * The probe is an exec like any other: its answer is no report, so a
 * mock fence is always unmeasured and any require fails.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <errno.h>
#include <event.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fenced.h"
#include "imsg.h"
#include "log.h"
#include "msg.h"
#include "fencer.h"
#include "backend.h"

/* What the fencer keeps of the replies its peer has not read yet. */
#define MOCK_QUEUE_SOFT		(4 * 1024 * 1024)
#define MOCK_QUEUE_HARD		(16 * 1024 * 1024)

struct mock_fence {
	struct imsgev	*mf_iev;	/* the agent's end */
	char		 mf_key[FENCE_KEY_SIZE];
	int		 mf_ready;
	struct msg_hello mf_hello;
	char		 mf_name[MSG_GIT_VALUE_MAX + 1];
	char		 mf_email[MSG_GIT_VALUE_MAX + 1];
	struct event	 mf_ready_ev;	/* test builds: READY, later */
	int		 mf_ready_later;	/* mf_ready_ev is set */
};

static void
mock_send(struct mock_fence *m, uint32_t type, uint32_t id, void *buf,
    size_t len)
{
	if (m->mf_iev != NULL && imsgev_compose(m->mf_iev, type, id, 0, -1,
	    buf, len) == -1)
		log_warn("%s: fence %s: reply dropped", __func__, m->mf_key);
	if (buf != NULL)
		explicit_bzero(buf, len);
	free(buf);
}

static void
mock_error(struct mock_fence *m, uint32_t id, const char *code,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void
mock_error(struct mock_fence *m, uint32_t id, const char *code,
    const char *fmt, ...)
{
	va_list		 ap;
	void		*buf;
	size_t		 len;
	int		 rv;

	va_start(ap, fmt);
	rv = msg_error_vformat(&buf, &len, code, fmt, ap);
	va_end(ap);
	if (rv == -1) {
		log_warnx("%s: encode", __func__);
		return;
	}
	mock_send(m, IMSG_AGENT_ERROR, id, buf, len);
}

static int
mock_bearer_ok(const struct mock_fence *m, const uint8_t *b)
{
	return (timingsafe_bcmp(m->mf_hello.h_bearer, b, MSG_BEARER_LEN) ==
	    0);
}

/* Some bytes onto out, at most max in all; 1 if cut. */
static int
mock_put(uint8_t *out, size_t *len, size_t max, const void *p, size_t n)
{
	int	 cut = 0;

	if (n > max - *len) {
		n = max - *len;
		cut = 1;
	}
	memcpy(out + *len, p, n);
	*len += n;
	return (cut);
}

static void
mock_result(struct mock_fence *m, uint32_t id, const char *what,
    const char *cmd, const uint8_t *in, size_t inlen, uint32_t max)
{
	struct msg_result rs;
	const char	*errstr;
	char		 line[64];
	uint8_t		*out;
	void		*buf;
	size_t		 len = 0, wlen = strlen(what), need;
	long long	 code = -1;
	int		 cut = 0;

	memset(&rs, 0, sizeof(rs));
	if (strncmp(cmd, "exit ", 5) == 0 && strlen(cmd) <= 8) {
		code = strtonum(cmd + 5, 0, 255, &errstr);
		if (errstr != NULL)
			code = -1;
	}
	/* No more than the answer takes: max may be the ceiling. */
	need = code >= 0 ? sizeof(line) : 6 + wlen + 1 + inlen;
	if (need < max)
		max = need;
	if ((out = malloc(max)) == NULL) {
		mock_error(m, id, "exec-failed", "out of memory");
		return;
	}
	if (code >= 0) {
		rs.rs_exit = (int32_t)code;
		snprintf(line, sizeof(line), "mock: exit %lld\n", code);
		cut |= mock_put(out, &len, max, line, strlen(line));
		rs.rs_stderr = out;
		rs.rs_stderr_len = len;
	} else {
		cut |= mock_put(out, &len, max, "mock: ", 6);
		cut |= mock_put(out, &len, max, what, wlen);
		cut |= mock_put(out, &len, max, "\n", 1);
		if (inlen > 0)
			cut |= mock_put(out, &len, max, in, inlen);
		rs.rs_stdout = out;
		rs.rs_stdout_len = len;
	}
	rs.rs_truncated = cut;
	if (msg_result_encode(&rs, &buf, &len) == -1) {
		free(out);
		mock_error(m, id, "exec-failed", "cannot encode the result");
		return;
	}
	free(out);
	mock_send(m, IMSG_AGENT_RESULT, id, buf, len);
}

/* The command as one line: sh -c's text, or the words joined. */
static char *
mock_command(const struct msg_exec *x)
{
	char	*s;
	size_t	 i, len = 1;

	if (x->x_command != NULL)
		return (strdup(x->x_command));
	for (i = 0; i < x->x_argc; i++)
		len += strlen(x->x_argv[i]) + 1;
	if ((s = calloc(1, len)) == NULL)
		return (NULL);
	for (i = 0; i < x->x_argc; i++) {
		if (i > 0)
			strlcat(s, " ", len);
		strlcat(s, x->x_argv[i], len);
	}
	return (s);
}

static void
mock_exec(struct mock_fence *m, uint32_t id, const struct msg_exec *x)
{
	const struct msg_hello *h = &m->mf_hello;
	uint32_t	 tmo, max;
	char		*what;

	if (!mock_bearer_ok(m, x->x_bearer)) {
		mock_error(m, id, "exec-unpaired", "missing or wrong bearer");
		return;
	}
	tmo = x->x_timeout_ms ? x->x_timeout_ms : h->h_timeout_def;
	max = x->x_max_bytes ? x->x_max_bytes : h->h_output_def;
	if (tmo < EXEC_TIMEOUT_MIN || tmo > h->h_timeout_max) {
		mock_error(m, id, "exec-bad-request", "timeoutMs must be "
		    "%u..%u, not %u", EXEC_TIMEOUT_MIN, h->h_timeout_max, tmo);
		return;
	}
	if (max < EXEC_OUTPUT_MIN || max > h->h_output_max) {
		mock_error(m, id, "exec-bad-request", "maxBytes must be "
		    "%u..%u, not %u", EXEC_OUTPUT_MIN, h->h_output_max, max);
		return;
	}
	if ((what = mock_command(x)) == NULL) {
		mock_error(m, id, "exec-failed", "out of memory");
		return;
	}
	/* sh -c "exit N" as a word list is the command "exit N" too. */
	mock_result(m, id, what, x->x_command == NULL && x->x_argc == 3 &&
	    strcmp(x->x_argv[0], "sh") == 0 &&
	    strcmp(x->x_argv[1], "-c") == 0 ? x->x_argv[2] : what,
	    x->x_stdin, x->x_stdin_len, max);
	free(what);
}

static void
mock_git_config(struct mock_fence *m, uint32_t id, struct msg_gitconfig *g)
{
	void	*buf;
	size_t	 len;

	if ((g->g_set_name || g->g_set_email) &&
	    !mock_bearer_ok(m, g->g_bearer)) {
		mock_error(m, id, "exec-unpaired", "missing or wrong bearer");
		return;
	}
	if (g->g_set_name)
		strlcpy(m->mf_name, g->g_name, sizeof(m->mf_name));
	if (g->g_set_email)
		strlcpy(m->mf_email, g->g_email, sizeof(m->mf_email));
	explicit_bzero(g, sizeof(*g));
	strlcpy(g->g_name, m->mf_name, sizeof(g->g_name));
	strlcpy(g->g_email, m->mf_email, sizeof(g->g_email));
	if (msg_gitconfig_encode(g, &buf, &len) == -1) {
		mock_error(m, id, "exec-failed", "cannot encode the identity");
		return;
	}
	mock_send(m, IMSG_AGENT_GIT_IDENTITY, id, buf, len);
}

static void
mock_git_init(struct mock_fence *m, uint32_t id, const struct msg_gitinit *gi)
{
	char	 what[PATH_MAX + 16];

	if (!mock_bearer_ok(m, gi->gi_bearer)) {
		mock_error(m, id, "exec-unpaired", "missing or wrong bearer");
		return;
	}
	snprintf(what, sizeof(what), "git init %s", gi->gi_path);
	mock_result(m, id, what, what, NULL, 0, m->mf_hello.h_output_def);
}

#ifdef FENCED_TEST_HOOKS
static void
mock_ready(int fd, short event, void *arg)
{
	struct mock_fence *m = arg;

	m->mf_ready_later = 0;
	mock_send(m, IMSG_AGENT_READY, 0, NULL, 0);
}
#endif

/*
 * The agent's READY, at once.  Test builds only: after
 * FENCED_TEST_MOCK_READY_MS milliseconds (at most BOOT_AGENT_WAIT_MAX
 * s, which the mock allows as the slowest backend does): a boot as slow
 * as a vm's under TCG, without a vm.
 */
static void
mock_hello_answer(struct mock_fence *m, uint32_t id)
{
#ifdef FENCED_TEST_HOOKS
	struct timeval	 tv;
	const char	*s, *errstr;
	long long	 ms;

	if ((s = getenv("FENCED_TEST_MOCK_READY_MS")) != NULL) {
		ms = strtonum(s, 1, BOOT_AGENT_WAIT_MAX * 1000LL, &errstr);
		if (errstr != NULL)
			fatalx("FENCED_TEST_MOCK_READY_MS %s: %s", s, errstr);
		tv.tv_sec = ms / 1000;
		tv.tv_usec = (ms % 1000) * 1000;
		evtimer_assign(&m->mf_ready_ev, fencer_self.ps_evbase,
		    mock_ready, m);
		evtimer_add(&m->mf_ready_ev, &tv);
		m->mf_ready_later = 1;
		return;
	}
#endif
	mock_send(m, IMSG_AGENT_READY, id, NULL, 0);
}

/*
 * One request.  A peer that speaks nonsense gets an error and the
 * channel stays: the fencer never ends on what a channel carries.
 */
static void
mock_dispatch(struct imsgev *iev, struct imsg *imsg, void *arg)
{
	struct mock_fence *m = arg;
	struct msg_exec	 x;
	struct msg_gitconfig g;
	struct msg_gitinit gi;
	uint32_t	 id = imsg->hdr.ih_peerid, type = imsg->hdr.ih_type;
	int		 r = -1;

	if (type == IMSG_AGENT_HELLO && !m->mf_ready) {
		if (msg_hello_decode(imsg->data, imsg->len,
		    &m->mf_hello) == -1) {
			mock_error(m, id, "mock-bad-request", "malformed hello");
			return;
		}
		m->mf_ready = 1;
		mock_hello_answer(m, id);
		return;
	}
	if (!m->mf_ready) {
		mock_error(m, id, "mock-bad-request", "%s before hello",
		    msg_type_name(type));
		return;
	}
	switch (type) {
	case IMSG_AGENT_CREDIT:
	case IMSG_AGENT_CANCEL:
		/* The mock answers at once: nothing is ever left to stream. */
		return;
	case IMSG_AGENT_EXEC:
	case IMSG_AGENT_EXEC_STREAM:
	case IMSG_AGENT_PROBE:
		if ((r = msg_exec_decode(imsg->data, imsg->len, &x)) == 0) {
			mock_exec(m, id, &x);
			msg_exec_free(&x);
		}
		break;
	case IMSG_AGENT_GIT_CONFIG:
		if ((r = msg_gitconfig_decode(imsg->data, imsg->len,
		    &g)) == 0) {
			mock_git_config(m, id, &g);
			explicit_bzero(&g, sizeof(g));
		}
		break;
	case IMSG_AGENT_GIT_INIT:
		if ((r = msg_gitinit_decode(imsg->data, imsg->len, &gi)) == 0) {
			mock_git_init(m, id, &gi);
			explicit_bzero(&gi, sizeof(gi));
		}
		break;
	}
	if (imsg->data != NULL)
		explicit_bzero(imsg->data, imsg->len);
	if (r == -1)
		mock_error(m, id, "mock-bad-request", "malformed or unexpected "
		    "%s", msg_type_name(type));
}

static void
mock_closed(struct imsgev *iev, int error, void *arg)
{
	struct mock_fence *m = arg;

	if (error != 0)
		log_warnx("%s: fence %s: channel: %s", __func__, m->mf_key,
		    strerror(error));
	imsgev_free(iev);
	m->mf_iev = NULL;
}

static int
mock_boot(struct fence *f, const struct backend_boot *bb, int *chan,
    char *err, size_t errlen)
{
	struct mock_fence *m = f->f_be;
	int		 sp[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) == -1) {
		snprintf(err, errlen, "socketpair: %s", strerror(errno));
		return (-1);
	}
	strlcpy(m->mf_key, f->f_info.f_key, sizeof(m->mf_key));
	if ((m->mf_iev = imsgev_new(fencer_self.ps_evbase, sp[1],
	    mock_dispatch, mock_closed, m)) == NULL) {
		snprintf(err, errlen, "mock channel: %s", strerror(errno));
		close(sp[0]);
		close(sp[1]);
		return (-1);
	}
	imsgev_set_bounds(m->mf_iev, MOCK_QUEUE_SOFT, MOCK_QUEUE_HARD);
	/* No process: nothing for the fencer to reap or the probe to read. */
	f->f_info.f_pid = 0;
	*chan = sp[0];
	return (0);
}

static void
mock_reaped(struct fence *f)
{
}

static int
mock_stop(struct fence *f, int *oom)
{
	struct mock_fence *m = f->f_be;

	*oom = 0;
	if (m->mf_ready_later) {
		evtimer_del(&m->mf_ready_ev);
		m->mf_ready_later = 0;
	}
	if (m->mf_iev != NULL) {
		imsgev_free(m->mf_iev);
		m->mf_iev = NULL;
	}
	explicit_bzero(&m->mf_hello, sizeof(m->mf_hello));
	return (0);
}

const struct fencer_backend backend_mock = {
	.fb_id = BACKEND_MOCK,
	.fb_bin_dir = "/mock",
	.fb_state_size = sizeof(struct mock_fence),
	/* It stands in for any backend: its boot may take what theirs may. */
	.fb_agent_wait = BOOT_AGENT_WAIT_MAX,
	/* Nothing for the judge beyond what the host reads: no home said. */
	.fb_probe = { .pt_kernel = PROBE_KERNEL_HOST },
	.fb_boot = mock_boot,
	.fb_reaped = mock_reaped,
	.fb_stop = mock_stop,
};
