/*
 * fence-agent: pid 1 of a fence.
 *
 * Started by the fencer with its channel on fd 3, as the fence's uid,
 * under the fence's seccomp filter; with -s (the runsc backend, whose
 * container init gets nothing but its stdio) the channel is fd 0 and
 * fd 1, one socket, and moves to fd 3.  It makes itself non-dumpable before
 * it reads a byte, waits for HELLO (the bearer, HOME, the exec limits),
 * answers READY, then serves requests until the channel closes.  With -c
 * (the vm backend: the guest's init opened the virtio-serial port) the
 * channel on fd 3 is a character device, which carries frames but
 * never descriptors (imsg.c).  Every
 * command runs under a supervisor process of its own (agent_job.c,
 * agent_super.c); the agent itself never blocks.
 */
#include <sys/types.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include <event2/event.h>

#include "fenced.h"
#include "imsg.h"
#include "log.h"
#include "msg.h"
#include "agent.h"

struct agent	*agent_env;

/* Replies the channel had no room for yet, in order. */
struct agent_pending {
	TAILQ_ENTRY(agent_pending) p_entry;
	uint32_t	 p_type;
	uint32_t	 p_id;
	void		*p_buf;
	size_t		 p_len;
};
static TAILQ_HEAD(, agent_pending) agent_pending =
    TAILQ_HEAD_INITIALIZER(agent_pending);
static struct event	*agent_retry_ev;

__attribute__((noreturn)) static void agent_usage(void);
static void	agent_setup_fds(int, int);
static void	agent_setup_process(void);
static void	agent_dispatch(struct imsgev *, struct imsg *, void *);
static void	agent_closed(struct imsgev *, int, void *);
static void	agent_hello(struct imsg *);
static void	agent_env_build(void);
static void	agent_sigchld(evutil_socket_t, short, void *);
static void	agent_retry(evutil_socket_t, short, void *);
static int	agent_send(uint32_t, uint32_t, void *, size_t);

__attribute__((noreturn)) static void
agent_usage(void)
{
	fprintf(stderr, "usage: fence-agent [-csv]\n");
	exit(1);
}

int
main(int argc, char *argv[])
{
	static struct agent a;
	struct event	*sigev;
	struct event_config *cfg;
	int		 ch, verbose = 0, stdio = 0, chardev = 0;

	/* Before anything else: nobody of our uid may read us. */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == -1)
		_exit(1);
	log_init(1, LOG_DAEMON);
	log_procinit("agent");
	while ((ch = getopt(argc, argv, "csv")) != -1) {
		switch (ch) {
		case 'c':
			chardev = 1;
			break;
		case 's':
			stdio = 1;
			break;
		case 'v':
			verbose++;
			break;
		default:
			agent_usage();
		}
	}
	if (optind != argc || (chardev && stdio))
		agent_usage();
	log_setverbose(verbose);

	agent_env = &a;
	TAILQ_INIT(&a.a_jobs);
	a.a_pid = getpid();
	if (atexit(agent_secrets_wipe) != 0)
		fatalx("%s: atexit", __func__);
	/*
	 * runsc's gVisor (20221219) has PR_SET_CHILD_SUBREAPER for pid 1
	 * only: a command's orphans come to the agent, whose sweep after
	 * each command ends kills them (agent_job.c).
	 */
	a.a_orphans_ours = stdio;
	agent_setup_process();
	agent_setup_fds(stdio, chardev);

	/*
	 * A precise clock for the deadlines: libevent's default coarse one
	 * lags by up to a tick (4 ms), and a command would be killed that
	 * much before its timeoutMs measured by the duration's clock.
	 */
	if ((cfg = event_config_new()) == NULL ||
	    event_config_set_flag(cfg, EVENT_BASE_FLAG_PRECISE_TIMER) == -1 ||
	    (a.a_base = event_base_new_with_config(cfg)) == NULL)
		fatalx("%s: event_base_new", __func__);
	event_config_free(cfg);
	if ((sigev = evsignal_new(a.a_base, SIGCHLD, agent_sigchld,
	    NULL)) == NULL || evsignal_add(sigev, NULL) == -1)
		fatalx("%s: SIGCHLD event", __func__);
	if ((agent_retry_ev = evtimer_new(a.a_base, agent_retry,
	    NULL)) == NULL)
		fatalx("%s: evtimer_new", __func__);
	if ((a.a_iev = imsgev_new(a.a_base, AGENT_CHANNEL_FD, agent_dispatch,
	    agent_closed, &a)) == NULL)
		fatal("%s: imsgev_new", __func__);
	log_debug("%s: pid %d, uid %d, waiting for hello", __func__,
	    (int)a.a_pid, (int)getuid());
	event_base_dispatch(a.a_base);
	fatalx("%s: event loop ended", __func__);
}

/*
 * Who we are and what signals do to us.  We never run as root: a fence
 * never does.  No handler is installed for SIGTERM and the like: as
 * pid 1 of a pid namespace the kernel drops every signal sent from
 * inside for which init has no handler, and the fencer stops a fence
 * with SIGKILL from outside.
 */
static void
agent_setup_process(void)
{
	struct rlimit	 rl;

	if (getuid() == 0 || geteuid() == 0)
		fatalx("%s: refusing to run as root", __func__);
	rl.rlim_cur = rl.rlim_max = 0;
	if (setrlimit(RLIMIT_CORE, &rl) == -1)
		fatal("%s: RLIMIT_CORE", __func__);
	/* Each job holds four descriptors; make room for all of them. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
	/* Orphans of a lost supervisor come to us even if we are not pid 1. */
	if (getpid() != 1 && prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == -1)
		fatal("%s: PR_SET_CHILD_SUBREAPER", __func__);
	if (signal(SIGPIPE, SIG_IGN) == SIG_ERR)
		fatal("%s: SIGPIPE", __func__);
}

/*
 * 0, 1 and 2 open (so no pipe of ours ever lands there), the channel on
 * 3 (a socket; with chardev the virtio-serial port) and close-on-exec,
 * nothing else.  With stdio, the channel arrives
 * as 0 (and 1, the same socket): 0 moves to 3 and becomes /dev/null.
 */
static void
agent_setup_fds(int stdio, int chardev)
{
	struct stat	 st;
	int		 fd;

	if (stdio) {
		/* gVisor gives each its own inode: no check they are one. */
		if (fstat(0, &st) == -1 || !S_ISSOCK(st.st_mode))
			fatalx("%s: no channel on fd 0", __func__);
		if (dup2(0, AGENT_CHANNEL_FD) == -1)
			fatal("%s: dup2", __func__);
		/*
		 * 1 stays open, close-on-exec: gVisor shuts the host socket
		 * down when any of its imported stdio files is released.
		 */
		if ((fd = open("/dev/null", O_RDWR)) == -1 || dup2(fd, 0) == -1)
			fatal("%s: /dev/null", __func__);
		if (fd > 2 && fd != AGENT_CHANNEL_FD)
			(void)close(fd);
		if (fcntl(1, F_SETFD, FD_CLOEXEC) == -1)
			fatal("%s: fcntl", __func__);
	}
	for (fd = 0; fd < 3; fd++) {
		if (fcntl(fd, F_GETFD) != -1)
			continue;
		if (open("/dev/null", O_RDWR) != fd)
			fatal("%s: /dev/null", __func__);
	}
	if (fstat(AGENT_CHANNEL_FD, &st) == -1 ||
	    !(chardev ? S_ISCHR(st.st_mode) : S_ISSOCK(st.st_mode)))
		fatalx("%s: no channel on fd %d", __func__, AGENT_CHANNEL_FD);
	if (fcntl(AGENT_CHANNEL_FD, F_SETFD, FD_CLOEXEC) == -1)
		fatal("%s: fcntl", __func__);
	closefrom(AGENT_CHANNEL_FD + 1);
}

static void
agent_dispatch(struct imsgev *iev, struct imsg *imsg, void *arg)
{
	struct msg_exec		 x;
	struct msg_gitconfig	 g;
	struct msg_gitinit	 gi;
	struct msg_proc_req	 q;
	struct msg_file		 fl;
	uint32_t		 type = imsg->hdr.ih_type;
	uint32_t		 id = imsg->hdr.ih_peerid;
	int			 r = -1;

	if (imsg->fd != -1)
		fatalx("%s: unexpected descriptor with type %u", __func__,
		    type);
	if (type == IMSG_AGENT_HELLO) {
		if (agent_env->a_ready)
			fatalx("%s: second hello", __func__);
		agent_hello(imsg);
		return;
	}
	if (!agent_env->a_ready)
		fatalx("%s: type %u before hello", __func__, type);

	switch (type) {
	case IMSG_AGENT_CREDIT:
		agent_stream_credit(id, imsg->data, imsg->len);
		return;
	case IMSG_AGENT_CANCEL:
		agent_stream_cancel(id, imsg->data, imsg->len);
		return;
	case IMSG_AGENT_EXEC:
	case IMSG_AGENT_SPAWN:
	case IMSG_AGENT_EXEC_STREAM:
	case IMSG_AGENT_PROBE:
		r = msg_exec_decode(imsg->data, imsg->len, &x);
		break;
	case IMSG_AGENT_PROCS:
		r = msg_proc_req_decode(imsg->data, imsg->len, &q);
		break;
	case IMSG_AGENT_GIT_CONFIG:
		r = msg_gitconfig_decode(imsg->data, imsg->len, &g);
		break;
	case IMSG_AGENT_GIT_INIT:
		r = msg_gitinit_decode(imsg->data, imsg->len, &gi);
		break;
	case IMSG_AGENT_FILE_READ:
	case IMSG_AGENT_FILE_WRITE:
	case IMSG_AGENT_FILE_DELETE:
		r = msg_file_decode(imsg->data, imsg->len, &fl);
		break;
	default:
		fatalx("%s: unexpected message type %u", __func__, type);
	}
	/* The payload held the bearer; it has been copied out. */
	if (imsg->data != NULL)
		explicit_bzero(imsg->data, imsg->len);
	if (r == -1)
		fatalx("%s: malformed message type %u", __func__, type);

	switch (type) {
	case IMSG_AGENT_EXEC:
		agent_exec(id, &x);
		break;
	case IMSG_AGENT_SPAWN:
		agent_spawn(id, &x);
		break;
	case IMSG_AGENT_PROCS:
		agent_procs(id, &q);
		break;
	case IMSG_AGENT_EXEC_STREAM:
		agent_exec_stream(id, &x);
		break;
	case IMSG_AGENT_PROBE:
		agent_probe(id, &x);
		break;
	case IMSG_AGENT_GIT_CONFIG:
		agent_git_config(id, &g);
		break;
	case IMSG_AGENT_GIT_INIT:
		agent_git_init(id, &gi);
		break;
	case IMSG_AGENT_FILE_READ:
	case IMSG_AGENT_FILE_WRITE:
	case IMSG_AGENT_FILE_DELETE:
		agent_files(type, id, &fl);
		break;
	}
}

/*
 * The channel is gone: nobody is left to answer.  Every supervisor is
 * told to kill its command and we leave; as pid 1 our exit ends the
 * whole fence anyway.
 */
static void
agent_closed(struct imsgev *iev, int error, void *arg)
{
	agent_shutdown_jobs();
	if (error != 0)
		fatalx("%s: channel: %s", __func__, strerror(error));
	log_debug("%s: channel closed", __func__);
	exit(0);
}

static void
agent_hello(struct imsg *imsg)
{
	struct agent	*a = agent_env;
	struct stat	 st;
	int		 r;

	r = msg_hello_decode(imsg->data, imsg->len, &a->a_hello);
	if (imsg->data != NULL)
		explicit_bzero(imsg->data, imsg->len);
	if (r == -1)
		fatalx("%s: malformed hello", __func__);
	if (realpath(a->a_hello.h_home, a->a_home) == NULL)
		fatal("%s: %s", __func__, a->a_hello.h_home);
	if (stat(a->a_home, &st) == -1 || !S_ISDIR(st.st_mode))
		fatalx("%s: %s: not a directory", __func__, a->a_home);
	agent_env_build();
	if (a->a_hello.h_egress)
		agent_egress_listen();
	a->a_ready = 1;
	log_debug("%s: fence %s, user %s, home %s", __func__,
	    a->a_hello.h_key, a->a_hello.h_user, a->a_home);
	agent_reply(IMSG_AGENT_READY, imsg->hdr.ih_peerid, NULL, 0);
	/* The first request's supervisor, once READY is on its way. */
	agent_spare_schedule();
}

/* The whole environment of every command; nothing of ours passes. */
static void
agent_env_build(void)
{
	struct agent	*a = agent_env;
	const struct msg_hello *h = &a->a_hello;
	int		 n = 0, i;

	if (asprintf(&a->a_env[n++], "PATH=%s", AGENT_PATH) == -1 ||
	    asprintf(&a->a_env[n++], "HOME=%s", h->h_home) == -1 ||
	    asprintf(&a->a_env[n++], "TMPDIR=/tmp") == -1 ||
	    asprintf(&a->a_env[n++], "USER=%s", h->h_user) == -1 ||
	    asprintf(&a->a_env[n++], "LOGNAME=%s", h->h_user) == -1 ||
	    asprintf(&a->a_env[n++], "SHELL=%s", AGENT_SHELL) == -1 ||
	    asprintf(&a->a_env[n++], "LANG=C.UTF-8") == -1 ||
	    asprintf(&a->a_env[n++], "TERM=dumb") == -1 ||
	    asprintf(&a->a_env[n++], "XDG_CONFIG_HOME=%s/.config",
	    h->h_home) == -1 ||
	    asprintf(&a->a_env[n++], "GIT_CONFIG_GLOBAL=%s/.gitconfig",
	    h->h_home) == -1 ||
	    asprintf(&a->a_env[n++], "VOICEBOX_FENCE=%s", h->h_key) == -1)
		fatal("%s: asprintf", __func__);
	/* The egress proxy, for the clients that read either spelling. */
	if (h->h_egress) {
		static const char *const vars[] = { "HTTPS_PROXY",
		    "HTTP_PROXY", "ALL_PROXY", "https_proxy", "http_proxy",
		    "all_proxy" };
		size_t	 v;

		for (v = 0; v < sizeof(vars) / sizeof(vars[0]); v++)
			if (asprintf(&a->a_env[n++], "%s=http://127.0.0.1:%d",
			    vars[v], EGRESS_PROXY_PORT) == -1)
				fatal("%s: asprintf", __func__);
		if (asprintf(&a->a_env[n++],
		    "NO_PROXY=localhost,127.0.0.1,::1") == -1 ||
		    asprintf(&a->a_env[n++],
		    "no_proxy=localhost,127.0.0.1,::1") == -1)
			fatal("%s: asprintf", __func__);
	}
	for (i = 0; i < n; i++)
		if (strlen(a->a_env[i]) >= PATH_MAX + 32)
			fatalx("%s: environment too long", __func__);
	a->a_env[n] = NULL;
}

static void
agent_sigchld(evutil_socket_t sig, short events, void *arg)
{
	agent_reap();
}

/* Constant time: how far two bearers agree tells nothing. */
int
agent_bearer_ok(const uint8_t *b)
{
	return (timingsafe_bcmp(agent_env->a_hello.h_bearer, b,
	    MSG_BEARER_LEN) == 0);
}

void
agent_secrets_wipe(void)
{
	if (agent_env != NULL)
		explicit_bzero(&agent_env->a_hello.h_bearer,
		    sizeof(agent_env->a_hello.h_bearer));
}

/* Over the cap of jobs, counting answers that wait for the channel. */
int
agent_busy(void)
{
	return (agent_env->a_njobs + agent_env->a_nreplies >= AGENT_JOBS_MAX);
}

static int
agent_send(uint32_t type, uint32_t id, void *buf, size_t len)
{
	if (imsgev_compose(agent_env->a_iev, type, id, 0, -1, buf,
	    len) == 0)
		return (0);
	if (errno != ENOBUFS)
		fatal("%s: imsgev_compose", __func__);
	return (-1);
}

/*
 * Queue one reply; buf (malloc'ed or NULL) is ours from here on.  When
 * the channel's queue is full the reply waits its turn here, and the
 * jobs it stands for still count against AGENT_JOBS_MAX.
 */
void
agent_reply(uint32_t type, uint32_t id, void *buf, size_t len)
{
	struct agent_pending	*p;
	struct timeval		 tv = { 0, AGENT_RETRY_MS * 1000 };

	if (TAILQ_EMPTY(&agent_pending) && agent_send(type, id, buf,
	    len) == 0) {
		free(buf);
		return;
	}
	if ((p = calloc(1, sizeof(*p))) == NULL)
		fatal("%s: calloc", __func__);
	p->p_type = type;
	p->p_id = id;
	p->p_buf = buf;
	p->p_len = len;
	TAILQ_INSERT_TAIL(&agent_pending, p, p_entry);
	agent_env->a_nreplies++;
	evtimer_add(agent_retry_ev, &tv);
}

static void
agent_retry(evutil_socket_t fd, short events, void *arg)
{
	struct agent_pending	*p;
	struct timeval		 tv = { 0, AGENT_RETRY_MS * 1000 };

	while ((p = TAILQ_FIRST(&agent_pending)) != NULL) {
		if (agent_send(p->p_type, p->p_id, p->p_buf, p->p_len) == -1) {
			evtimer_add(agent_retry_ev, &tv);
			return;
		}
		TAILQ_REMOVE(&agent_pending, p, p_entry);
		agent_env->a_nreplies--;
		free(p->p_buf);
		free(p);
	}
}

void
agent_error(uint32_t id, const char *code, const char *fmt, ...)
{
	va_list		 ap;
	void		*buf;
	size_t		 len;
	int		 rv;

	va_start(ap, fmt);
	rv = msg_error_vformat(&buf, &len, code, fmt, ap);
	va_end(ap);
	if (rv == -1)
		fatal("%s: msg_error_vformat", __func__);
	log_debug("%s: request %u: %s", __func__, id, code);
	agent_reply(IMSG_AGENT_ERROR, id, buf, len);
}

void
agent_result(uint32_t id, struct msg_result *rs)
{
	void	*buf;
	size_t	 len;

	if (msg_result_encode(rs, &buf, &len) == -1)
		fatal("%s: msg_result_encode", __func__);
	agent_reply(IMSG_AGENT_RESULT, id, buf, len);
}
