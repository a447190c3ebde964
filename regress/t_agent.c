/*
 * t_agent: drive a fence-agent over its channel, outside any fence.
 *
 *	t_agent -a AGENT -H HOME [-o OUTDIR] [-p] [-u UID] REQUEST [; REQUEST]...
 *
 * Starts AGENT with one end of a socketpair on fd 3 and our own
 * environment (the tests put things there that must not pass), sends
 * HELLO with a random bearer and HOME, waits for READY, then sends the
 * requests, one after another, or with -p all at once before reading
 * any answer.  Requests, separated by a ";" argument:
 *
 *	exec [bearer=ok|none|wrong] [cwd=D] [timeout=MS] [max=N]
 *	    [stdin=FILE] [stream [nocredit]] (-c COMMAND | -- ARGV...)
 *			stream: EXEC_STREAM; each CHUNK is credited back at
 *			once unless nocredit
 *	cancel N [bearer=...]	CANCEL request N (answered nothing)
 *	gitconfig [bearer=...] [name=V] [email=V]
 *	gitinit [bearer=...] [path=P]
 *	check MARKER	count live processes whose command line has MARKER
 *	sleep MS
 *	host COMMAND	sh -c COMMAND here, as we run, AGENT_PID in its
 *			environment (say, to signal the agent's children)
 *	garbage		an EXEC whose payload is not msgpack
 *
 * Prints "agent_pid=PID" first, then one line per answer, in request
 * order, and the output bytes of request N to OUTDIR/N.out and N.err:
 *
 *	N result exit=E signal=S truncated=T error=CODE duration=MS
 *	    stdout=LEN stderr=LEN [chunks=LEN same=0|1]	(one line;
 *	    chunks: of a stream, their bytes; same: they are the output)
 *	N cancel sent
 *	N error code=CODE message=TEXT
 *	N identity name=NAME email=EMAIL
 *	N alive=COUNT
 *	N host status=STATUS
 *
 * and last "agent_exit=STATUS" once the channel is closed and the agent
 * has exited (or "closed" if the agent hung up first).  Run as root, the
 * agent runs as UID (default 65534), which then owns HOME.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <ctype.h>
#include <dirent.h>
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fenced.h"
#include "imsg.h"
#include "msg.h"

#define T_REQ_MAX	256
#define T_WAIT_MS	120000

enum t_kind { T_EXEC, T_GITCONFIG, T_GITINIT, T_CHECK, T_SLEEP, T_HOST,
    T_GARBAGE, T_CANCEL };

struct t_req {
	int		 r_kind;
	uint32_t	 r_id;
	char		**r_args;	/* up to the ";" */
	int		 r_nargs;
	char		*r_answer;	/* the printed line */
	int		 r_stream;
	int		 r_nocredit;
	size_t		 r_chunks;	/* CHUNK bytes */
	uint8_t		*r_cout[2];	/* their bytes, per stream */
	size_t		 r_clen[2];
};

static struct imsgbuf	*t_ib;
static uint8_t		 t_bearer[MSG_BEARER_LEN];
static const char	*t_outdir = ".";
static pid_t		 t_agent;
static struct t_req	 t_reqs[T_REQ_MAX];

static void	t_usage(void);
static int	t_parse(int, char **);
static void	t_run(int, int);
static void	t_start(const char *, const char *, uid_t);
static void	t_hello(const char *);
static int	t_get(struct imsg *, int);
static void	t_send(struct t_req *);
static void	t_bearer_set(uint8_t *, const char *);
static void	t_send_exec(struct t_req *);
static void	t_send_gitconfig(struct t_req *);
static void	t_send_gitinit(struct t_req *);
static void	t_send_credit(uint32_t, uint32_t, uint32_t, const char *);
static void	t_chunk(struct t_req *, struct imsg *);
static void	t_answer(struct t_req *, struct imsg *);
static void	t_answer_result(struct t_req *, struct imsg *);
static void	t_save(uint32_t, const char *, const uint8_t *, size_t);
static int	t_check(const char *);
static void	t_finish(void);
static void	*t_readfile(const char *, size_t *);

__attribute__((noreturn)) static void
t_usage(void)
{
	fprintf(stderr, "usage: t_agent -a agent -H home [-o outdir] [-p] "
	    "[-u uid] request [; request]...\n");
	exit(2);
}

int
main(int argc, char *argv[])
{
	const char	*agent = NULL, *home = NULL;
	uid_t		 uid = 65534;
	int		 ch, n, par = 0;

	while ((ch = getopt(argc, argv, "+a:H:o:pu:")) != -1) {
		switch (ch) {
		case 'a':
			agent = optarg;
			break;
		case 'H':
			home = optarg;
			break;
		case 'o':
			t_outdir = optarg;
			break;
		case 'p':
			par = 1;
			break;
		case 'u':
			uid = (uid_t)strtonum(optarg, 1, UINT32_MAX - 1, NULL);
			break;
		default:
			t_usage();
		}
	}
	if (agent == NULL || home == NULL || uid == 0)
		t_usage();
	n = t_parse(argc - optind, argv + optind);
	t_start(agent, home, uid);
	printf("agent_pid=%d\n", (int)t_agent);
	fflush(stdout);
	t_hello(home);
	t_run(n, par);
	t_finish();
	return (0);
}

/* Split the words into requests at ";". */
static int
t_parse(int argc, char **argv)
{
	struct t_req	*r;
	const char	*w;
	int		 i, n = 0;

	for (i = 0; i < argc; i++) {
		if (strcmp(argv[i], ";") == 0) {
			argv[i] = NULL;
			continue;
		}
		if (i > 0 && argv[i - 1] != NULL)
			continue;
		if (n == T_REQ_MAX)
			errx(2, "too many requests");
		r = &t_reqs[n];
		r->r_args = &argv[i];
		r->r_id = ++n;
		for (r->r_nargs = 0; i + r->r_nargs < argc &&
		    argv[i + r->r_nargs] != NULL &&
		    strcmp(argv[i + r->r_nargs], ";") != 0; r->r_nargs++)
			;
		w = r->r_args[0];
		if (strcmp(w, "exec") == 0)
			r->r_kind = T_EXEC;
		else if (strcmp(w, "gitconfig") == 0)
			r->r_kind = T_GITCONFIG;
		else if (strcmp(w, "gitinit") == 0)
			r->r_kind = T_GITINIT;
		else if (strcmp(w, "check") == 0 && r->r_nargs == 2)
			r->r_kind = T_CHECK;
		else if (strcmp(w, "sleep") == 0 && r->r_nargs == 2)
			r->r_kind = T_SLEEP;
		else if (strcmp(w, "host") == 0 && r->r_nargs == 2)
			r->r_kind = T_HOST;
		else if (strcmp(w, "garbage") == 0)
			r->r_kind = T_GARBAGE;
		else if (strcmp(w, "cancel") == 0 && r->r_nargs >= 2)
			r->r_kind = T_CANCEL;
		else
			errx(2, "unknown request %s", w);
	}
	return (n);
}

/*
 * Send a batch (one request, or with par all up to the next local one),
 * then print its answers in order; again until all are done.
 */
static void
t_run(int n, int par)
{
	struct imsg	 imsg;
	int		 i, k, start;

	for (start = 0; start < n; start = i) {
		for (i = start; i < n; i++) {
			if (t_reqs[i].r_kind == T_CHECK ||
			    t_reqs[i].r_kind == T_SLEEP ||
			    t_reqs[i].r_kind == T_HOST) {
				if (i == start)
					t_send(&t_reqs[i++]);
				break;
			}
			t_send(&t_reqs[i]);
			if (!par) {
				i++;
				break;
			}
		}
		for (k = start; k < i; k++) {
			while (t_reqs[k].r_answer == NULL) {
				if (!t_get(&imsg, T_WAIT_MS)) {
					printf("closed\n");
					t_finish();
					exit(1);
				}
				if (imsg.hdr.ih_peerid == 0 ||
				    imsg.hdr.ih_peerid > (uint32_t)n)
					errx(1, "answer to unknown request %u",
					    imsg.hdr.ih_peerid);
				t_answer(&t_reqs[imsg.hdr.ih_peerid - 1], &imsg);
				imsg_free(&imsg);
			}
			printf("%s\n", t_reqs[k].r_answer);
			fflush(stdout);
		}
	}
}

static void
t_start(const char *agent, const char *home, uid_t uid)
{
	static char	 name[] = "fence-agent", verbose[] = "-v";
	char		*argv[] = { name, verbose, NULL };
	int		 sv[2], fd;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == -1)
		err(2, "socketpair");
	if (geteuid() == 0 && chown(home, uid, uid) == -1)
		err(2, "chown %s", home);
	if ((t_agent = fork()) == -1)
		err(2, "fork");
	if (t_agent == 0) {
		if (dup2(sv[1], 3) == -1)
			_exit(2);
		closefrom(4);
		/*
		 * Opened before the drop: the checkout may be where the
		 * agent's uid cannot go (/root is 0700), as the fencer's
		 * fences cannot see it either.  Close-on-exec, so the agent
		 * inherits nothing but fd 3.
		 */
		if ((fd = open(agent, O_RDONLY | O_CLOEXEC)) == -1)
			_exit(127);
		if (geteuid() == 0 && (setgroups(0, NULL) == -1 ||
		    setresgid(uid, uid, uid) == -1 ||
		    setresuid(uid, uid, uid) == -1))
			_exit(2);
		fexecve(fd, argv, environ);
		_exit(127);
	}
	close(sv[1]);
	if ((t_ib = imsgbuf_new(sv[0])) == NULL)
		err(2, "imsgbuf_new");
}

static void
t_hello(const char *home)
{
	struct msg_hello h;
	struct imsg	 imsg;
	void		*buf;
	size_t		 len;

	memset(&h, 0, sizeof(h));
	do
		arc4random_buf(t_bearer, sizeof(t_bearer));
	while (t_bearer[0] == 0);
	memcpy(h.h_bearer, t_bearer, sizeof(h.h_bearer));
	strlcpy(h.h_key, "t-agent", sizeof(h.h_key));
	strlcpy(h.h_user, "tester", sizeof(h.h_user));
	if (realpath(home, h.h_home) == NULL)
		err(2, "%s", home);
	h.h_timeout_def = 10000;
	h.h_timeout_max = EXEC_TIMEOUT_MAX;
	h.h_output_def = 262144;
	h.h_output_max = EXEC_OUTPUT_MAX;
	if (msg_hello_encode(&h, &buf, &len) == -1 ||
	    imsgbuf_compose(t_ib, IMSG_AGENT_HELLO, 7, 0, -1, buf, len) == -1 ||
	    imsgbuf_flush(t_ib) == -1)
		err(2, "hello");
	free(buf);
	if (!t_get(&imsg, 10000) || imsg.hdr.ih_type != IMSG_AGENT_READY ||
	    imsg.hdr.ih_peerid != 7 || imsg.len != 0)
		errx(1, "no ready");
	imsg_free(&imsg);
}

/* One message within ms; 0 if the agent closed or was silent. */
static int
t_get(struct imsg *imsg, int ms)
{
	struct pollfd	 pfd;
	ssize_t		 n;
	int		 r;

	for (;;) {
		if ((r = imsgbuf_get(t_ib, imsg)) == 1)
			return (1);
		if (r == -1)
			err(1, "imsgbuf_get");
		pfd.fd = imsgbuf_fd(t_ib);
		pfd.events = POLLIN;
		if ((r = poll(&pfd, 1, ms)) == -1 && errno != EINTR)
			err(1, "poll");
		if (r == 0)
			return (0);
		if ((n = imsgbuf_read(t_ib)) == 0)
			return (0);
		if (n == -1 && errno != EAGAIN && errno != EINTR)
			return (0);
	}
}

static void
t_send(struct t_req *r)
{
	static const uint8_t garbage[] = { 0xc1, 0xff, 0x00 };
	struct timespec	 ts;
	char		*line;
	long		 ms;
	int		 st;

	switch (r->r_kind) {
	case T_EXEC:
		t_send_exec(r);
		break;
	case T_GITCONFIG:
		t_send_gitconfig(r);
		break;
	case T_GITINIT:
		t_send_gitinit(r);
		break;
	case T_GARBAGE:
		if (imsgbuf_compose(t_ib, IMSG_AGENT_EXEC, r->r_id, 0, -1,
		    garbage, sizeof(garbage)) == -1)
			err(2, "compose");
		break;
	case T_CANCEL:
		t_send_credit(IMSG_AGENT_CANCEL, strtoul(r->r_args[1], NULL,
		    10), 0, r->r_nargs > 2 && strncmp(r->r_args[2], "bearer=",
		    7) == 0 ? r->r_args[2] + 7 : "ok");
		if (asprintf(&r->r_answer, "%u cancel sent", r->r_id) == -1)
			err(2, "asprintf");
		break;
	case T_CHECK:
		if (asprintf(&line, "%u alive=%d", r->r_id,
		    t_check(r->r_args[1])) == -1)
			err(2, "asprintf");
		r->r_answer = line;
		return;
	case T_SLEEP:
		ms = strtol(r->r_args[1], NULL, 10);
		ts.tv_sec = ms / 1000;
		ts.tv_nsec = (ms % 1000) * 1000000;
		nanosleep(&ts, NULL);
		if (asprintf(&line, "%u slept", r->r_id) == -1)
			err(2, "asprintf");
		r->r_answer = line;
		return;
	case T_HOST:
		if (asprintf(&line, "%d", (int)t_agent) == -1 ||
		    setenv("AGENT_PID", line, 1) == -1)
			err(2, "AGENT_PID");
		free(line);
		fflush(stdout);
		st = system(r->r_args[1]);
		if (asprintf(&line, "%u host status=%d", r->r_id, st) == -1)
			err(2, "asprintf");
		r->r_answer = line;
		return;
	}
	if (imsgbuf_flush(t_ib) == -1)
		err(1, "flush");
}

static void
t_bearer_set(uint8_t *b, const char *how)
{
	memset(b, 0, MSG_BEARER_LEN);
	if (strcmp(how, "ok") == 0)
		memcpy(b, t_bearer, MSG_BEARER_LEN);
	else if (strcmp(how, "wrong") == 0) {
		memcpy(b, t_bearer, MSG_BEARER_LEN);
		b[MSG_BEARER_LEN - 1] ^= 0x01;
	} else if (strcmp(how, "none") != 0)
		errx(2, "bearer=%s", how);
}

static void
t_send_exec(struct t_req *r)
{
	struct msg_exec	 x;
	void		*buf;
	size_t		 len;
	int		 i;

	memset(&x, 0, sizeof(x));
	t_bearer_set(x.x_bearer, "ok");
	for (i = 1; i < r->r_nargs; i++) {
		const char *a = r->r_args[i];

		if (strncmp(a, "bearer=", 7) == 0)
			t_bearer_set(x.x_bearer, a + 7);
		else if (strncmp(a, "cwd=", 4) == 0)
			strlcpy(x.x_cwd, a + 4, sizeof(x.x_cwd));
		else if (strncmp(a, "timeout=", 8) == 0)
			x.x_timeout_ms = strtoul(a + 8, NULL, 10);
		else if (strncmp(a, "max=", 4) == 0)
			x.x_max_bytes = strtoul(a + 4, NULL, 10);
		else if (strncmp(a, "stdin=", 6) == 0)
			x.x_stdin = t_readfile(a + 6, &x.x_stdin_len);
		else if (strcmp(a, "stream") == 0)
			r->r_stream = 1;
		else if (strcmp(a, "nocredit") == 0)
			r->r_nocredit = 1;
		else if (strcmp(a, "-c") == 0 && i + 1 < r->r_nargs) {
			x.x_command = r->r_args[++i];
		} else if (strcmp(a, "--") == 0) {
			x.x_argv = &r->r_args[i + 1];
			x.x_argc = r->r_nargs - i - 1;
			break;
		} else
			errx(2, "exec: %s", a);
	}
	if (msg_exec_encode(&x, &buf, &len) == -1)
		err(2, "msg_exec_encode");
	if (imsgbuf_compose(t_ib, r->r_stream ? IMSG_AGENT_EXEC_STREAM :
	    IMSG_AGENT_EXEC, r->r_id, 0, -1, buf, len) == -1)
		err(2, "compose");
	free(buf);
	free(x.x_stdin);
}

/* CREDIT (bytes) or CANCEL (0) for request id, with the bearer how. */
static void
t_send_credit(uint32_t type, uint32_t id, uint32_t bytes, const char *how)
{
	struct msg_credit cr;
	void		*buf;
	size_t		 len;

	memset(&cr, 0, sizeof(cr));
	t_bearer_set(cr.cr_bearer, how);
	cr.cr_bytes = bytes;
	if (msg_credit_encode(&cr, &buf, &len) == -1)
		err(2, "msg_credit_encode");
	if (imsgbuf_compose(t_ib, type, id, 0, -1, buf, len) == -1 ||
	    imsgbuf_flush(t_ib) == -1)
		err(2, "compose");
	free(buf);
}

/*
 * A CHUNK: kept, and credited back at once unless nocredit; never more
 * out than the window.
 */
static void
t_chunk(struct t_req *r, struct imsg *imsg)
{
	struct msg_chunk ch;
	uint8_t		*nb;
	int		 i;

	if (!r->r_stream || msg_chunk_decode(imsg->data, imsg->len,
	    &ch) == -1)
		errx(1, "request %u: bad chunk", r->r_id);
	r->r_chunks += ch.ch_len;
	if (r->r_nocredit && r->r_chunks > MSG_STREAM_WINDOW)
		errx(1, "request %u: %zu bytes of chunks without credit",
		    r->r_id, r->r_chunks);
	i = ch.ch_stream == MSG_CHUNK_STDOUT ? 0 : 1;
	if ((nb = realloc(r->r_cout[i], r->r_clen[i] + ch.ch_len)) == NULL)
		err(2, "realloc");
	memcpy(nb + r->r_clen[i], ch.ch_data, ch.ch_len);
	r->r_cout[i] = nb;
	r->r_clen[i] += ch.ch_len;
	if (!r->r_nocredit)
		t_send_credit(IMSG_AGENT_CREDIT, r->r_id, ch.ch_len, "ok");
	msg_chunk_free(&ch);
}

static void
t_send_gitconfig(struct t_req *r)
{
	struct msg_gitconfig g;
	void		*buf;
	size_t		 len;
	int		 i;

	memset(&g, 0, sizeof(g));
	t_bearer_set(g.g_bearer, "ok");
	for (i = 1; i < r->r_nargs; i++) {
		const char *a = r->r_args[i];

		if (strncmp(a, "bearer=", 7) == 0)
			t_bearer_set(g.g_bearer, a + 7);
		else if (strncmp(a, "name=", 5) == 0) {
			g.g_set_name = 1;
			strlcpy(g.g_name, a + 5, sizeof(g.g_name));
		} else if (strncmp(a, "email=", 6) == 0) {
			g.g_set_email = 1;
			strlcpy(g.g_email, a + 6, sizeof(g.g_email));
		} else
			errx(2, "gitconfig: %s", a);
	}
	if (msg_gitconfig_encode(&g, &buf, &len) == -1 ||
	    imsgbuf_compose(t_ib, IMSG_AGENT_GIT_CONFIG, r->r_id, 0, -1, buf,
	    len) == -1)
		err(2, "gitconfig");
	free(buf);
}

static void
t_send_gitinit(struct t_req *r)
{
	struct msg_gitinit gi;
	void		*buf;
	size_t		 len;
	int		 i;

	memset(&gi, 0, sizeof(gi));
	t_bearer_set(gi.gi_bearer, "ok");
	for (i = 1; i < r->r_nargs; i++) {
		const char *a = r->r_args[i];

		if (strncmp(a, "bearer=", 7) == 0)
			t_bearer_set(gi.gi_bearer, a + 7);
		else if (strncmp(a, "path=", 5) == 0)
			strlcpy(gi.gi_path, a + 5, sizeof(gi.gi_path));
		else
			errx(2, "gitinit: %s", a);
	}
	if (msg_gitinit_encode(&gi, &buf, &len) == -1 ||
	    imsgbuf_compose(t_ib, IMSG_AGENT_GIT_INIT, r->r_id, 0, -1, buf,
	    len) == -1)
		err(2, "gitinit");
	free(buf);
}

static void
t_answer(struct t_req *r, struct imsg *imsg)
{
	struct msg_error e;
	struct msg_gitconfig g;
	char		*line;
	int		 rv;

	if (r->r_answer != NULL)
		errx(1, "request %u answered twice", r->r_id);
	switch (imsg->hdr.ih_type) {
	case IMSG_AGENT_CHUNK:
		t_chunk(r, imsg);
		return;
	case IMSG_AGENT_RESULT:
		t_answer_result(r, imsg);
		return;
	case IMSG_AGENT_ERROR:
		if (msg_error_decode(imsg->data, imsg->len, &e) == -1)
			errx(1, "bad error payload");
		rv = asprintf(&line, "%u error code=%s message=%s", r->r_id,
		    e.e_code, e.e_message);
		break;
	case IMSG_AGENT_GIT_IDENTITY:
		if (msg_gitconfig_decode(imsg->data, imsg->len, &g) == -1)
			errx(1, "bad identity payload");
		rv = asprintf(&line, "%u identity name=%s email=%s", r->r_id,
		    g.g_name, g.g_email);
		break;
	default:
		errx(1, "unexpected answer type %u", imsg->hdr.ih_type);
	}
	if (rv == -1)
		err(2, "asprintf");
	r->r_answer = line;
}

static void
t_answer_result(struct t_req *r, struct imsg *imsg)
{
	struct msg_result rs;
	char		 extra[64] = "";
	int		 same;

	if (msg_result_decode(imsg->data, imsg->len, &rs) == -1)
		errx(1, "bad result payload");
	t_save(r->r_id, "out", rs.rs_stdout, rs.rs_stdout_len);
	t_save(r->r_id, "err", rs.rs_stderr, rs.rs_stderr_len);
	same = r->r_clen[0] == rs.rs_stdout_len &&
	    r->r_clen[1] == rs.rs_stderr_len &&
	    (rs.rs_stdout_len == 0 ||
	    memcmp(r->r_cout[0], rs.rs_stdout, rs.rs_stdout_len) == 0) &&
	    (rs.rs_stderr_len == 0 ||
	    memcmp(r->r_cout[1], rs.rs_stderr, rs.rs_stderr_len) == 0);
	if (r->r_stream)
		snprintf(extra, sizeof(extra), " chunks=%zu same=%d",
		    r->r_chunks, same);
	if (asprintf(&r->r_answer, "%u result exit=%d signal=%d truncated=%d "
	    "error=%s duration=%u stdout=%zu stderr=%zu%s", r->r_id,
	    rs.rs_exit, rs.rs_signal, rs.rs_truncated, rs.rs_error,
	    rs.rs_duration_ms, rs.rs_stdout_len, rs.rs_stderr_len,
	    extra) == -1)
		err(2, "asprintf");
	msg_result_free(&rs);
}

static void
t_save(uint32_t id, const char *what, const uint8_t *p, size_t len)
{
	char	 path[PATH_MAX];
	FILE	*f;

	snprintf(path, sizeof(path), "%s/%u.%s", t_outdir, id, what);
	if ((f = fopen(path, "w")) == NULL)
		err(2, "%s", path);
	if (len > 0 && fwrite(p, 1, len, f) != len)
		err(2, "%s", path);
	if (fclose(f) == EOF)
		err(2, "%s", path);
}

/*
 * Processes whose command line holds marker, other than us and our
 * parent (whose command lines may hold it too).
 */
static int
t_check(const char *marker)
{
	struct dirent	*de;
	DIR		*d;
	char		 path[PATH_MAX], buf[8192];
	ssize_t		 n, i;
	int		 fd, count = 0;

	if ((d = opendir("/proc")) == NULL)
		err(2, "/proc");
	while ((de = readdir(d)) != NULL) {
		if (!isdigit((unsigned char)de->d_name[0]) ||
		    atoi(de->d_name) == getpid() ||
		    atoi(de->d_name) == getppid())
			continue;
		snprintf(path, sizeof(path), "/proc/%s/cmdline", de->d_name);
		if ((fd = open(path, O_RDONLY)) == -1)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			continue;
		for (i = 0; i < n; i++)
			if (buf[i] == '\0')
				buf[i] = ' ';
		buf[n] = '\0';
		if (strstr(buf, marker) != NULL)
			count++;
	}
	closedir(d);
	return (count);
}

/* Hang up, and see how the agent takes it. */
static void
t_finish(void)
{
	int	 status;

	close(imsgbuf_fd(t_ib));
	imsgbuf_free(t_ib);
	if (waitpid(t_agent, &status, 0) == -1)
		err(2, "waitpid");
	if (WIFEXITED(status))
		printf("agent_exit=%d\n", WEXITSTATUS(status));
	else
		printf("agent_exit=signal%d\n", WTERMSIG(status));
}

static void *
t_readfile(const char *path, size_t *len)
{
	struct stat	 st;
	uint8_t		*p;
	int		 fd;

	if ((fd = open(path, O_RDONLY)) == -1 || fstat(fd, &st) == -1)
		err(2, "%s", path);
	if (st.st_size > MSG_STDIN_MAX)
		errx(2, "%s: too big", path);
	if ((p = malloc(st.st_size + 1)) == NULL)
		err(2, "malloc");
	if (read(fd, p, st.st_size) != st.st_size)
		err(2, "%s", path);
	close(fd);
	*len = st.st_size;
	return (p);
}
