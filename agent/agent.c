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
 * never descriptors (imsg.c).  With -p (a native warm pool fence) it
 * is executed ahead, as root, and first waits for its assignment and
 * walks the fence's steps after the split point itself (agent_pool.c);
 * everything below comes after, as the fence's uid.  Every
 * command runs under a supervisor process of its own (agent_job.c,
 * agent_super.c); the agent itself never blocks.
 */
#include <sys/types.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
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
#include "agent_tunnel.h"

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

/* One request from the broker, decoded. */
union agent_msg {
	struct msg_exec		 am_exec;
	struct msg_proc_req	 am_procs;
	struct msg_gitconfig	 am_gitconfig;
	struct msg_gitinit	 am_gitinit;
	struct msg_file		 am_file;
	struct msg_credit	 am_credit;
	struct msg_tunnel_open	 am_topen;
	struct msg_ports_req	 am_ports;
	struct msg_tunnel_data	 am_tdata;
	struct msg_tunnel_credit am_tcredit;
	struct msg_tunnel_close	 am_tclose;
	struct msg_term_open	 am_term_open;
	struct msg_term_req	 am_terms;
	struct msg_proc_input	 am_input;
};

/*
 * What the agent serves after HELLO, one row a request type, as
 * OpenSSH's monitor keeps its mon_table: how it is decoded, whether it
 * must carry the bearer of HELLO (AR_PAIRED; AR_PAIRED_WRITE: only a
 * request that changes something, as ar_writes says), what becomes of
 * one without it, and who serves it.  The bearer is checked here alone,
 * before any handler sees the request, so an unpaired request learns
 * nothing and changes nothing (docs/agent.md, "Pairing").
 */
#define AR_PAIRED	0x01	/* the bearer, or exec-unpaired */
#define AR_PAIRED_WRITE	0x02	/* the bearer if ar_writes() says so */
#define AR_QUIET	0x04	/* unpaired: dropped unanswered, logged (it
				   answers no request of its own) */

struct agent_req {
	uint32_t	 ar_type;
	int		 ar_flags;
	size_t		 ar_bearer;	/* where the message holds it */
	int		(*ar_decode)(const void *, size_t, union agent_msg *);
	int		(*ar_writes)(const union agent_msg *);
	void		(*ar_serve)(uint32_t, uint32_t, union agent_msg *);
	void		(*ar_free)(union agent_msg *);	/* not served */
};

__attribute__((noreturn)) static void agent_usage(void);
static void	agent_setup_fds(int, int);
static void	agent_setup_process(void);
static void	agent_dispatch(struct imsgev *, struct imsg *, void *);
static const struct agent_req *agent_req_find(uint32_t);
static int	agent_req_paired(const struct agent_req *, uint32_t,
		    union agent_msg *);
static int	agent_bearer_ok(const uint8_t *);
static void	agent_closed(struct imsgev *, int, void *);
static void	agent_hello(struct imsg *);
static void	agent_ready(uint32_t);
static void	agent_env_build(void);
static void	agent_sigchld(evutil_socket_t, short, void *);
static void	agent_retry(evutil_socket_t, short, void *);
static int	agent_send(uint32_t, uint32_t, void *, size_t);
static void	agent_signals_default(void);

__attribute__((noreturn)) static void
agent_usage(void)
{
	fprintf(stderr, "usage: fence-agent [-csv] [-p features]\n");
	exit(1);
}

int
main(int argc, char *argv[])
{
	static struct agent a;
	struct event	*sigev;
	struct event_config *cfg;
	const char	*pool = NULL;
	int		 ch, verbose = 0, stdio = 0, chardev = 0;

	/* Before anything else: nobody of our uid may read us. */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == -1)
		_exit(1);
	log_init(1, LOG_DAEMON);
	log_procinit("agent");
	while ((ch = getopt(argc, argv, "cp:sv")) != -1) {
		switch (ch) {
		case 'c':
			chardev = 1;
			break;
		case 'p':
			pool = optarg;
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
	if (optind != argc || (chardev && stdio) || (pool != NULL &&
	    (chardev || stdio)))
		agent_usage();
	log_setverbose(verbose);
	/*
	 * A pool fence's agent, executed ahead as root of the fence's
	 * namespaces: it waits for its assignment and walks the fence's
	 * steps after the split point before anything below runs
	 * (agent_pool.c, docs/pool.md).
	 */
	if (pool != NULL)
		agent_pool_wait(pool);

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
	/*
	 * Every disposition at its default, whatever started us (an ignored
	 * one survives an exec), so that SIGPIPE, ignored, and libevent's
	 * SIGCHLD are the only two every supervisor and command inherits
	 * and has to put back (agent_super.c), once here, not per job.
	 */
	agent_signals_default();
	if (signal(SIGPIPE, SIG_IGN) == SIG_ERR)
		fatal("%s: SIGPIPE", __func__);
}

/*
 * glibc keeps two signals of its own (32 and 33, for thread
 * cancellation and set*id calls across threads) and refuses sigaction()
 * on them; an ignored one still survives an exec into every command,
 * so those go to the kernel directly (the agent runs no threads).  The
 * kernel's struct, as amd64 and arm64 have it.
 */
struct agent_ksigaction {
	void		(*ks_handler)(int);
	unsigned long	  ks_flags;
	void		(*ks_restorer)(void);
	uint64_t	  ks_mask;
};

static void
agent_signals_default(void)
{
	struct agent_ksigaction ks;
	struct sigaction sa;
	int		 sig;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigemptyset(&sa.sa_mask);
	memset(&ks, 0, sizeof(ks));
	ks.ks_handler = SIG_DFL;
	for (sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP &&
		    sigaction(sig, &sa, NULL) == -1 && errno == EINVAL)
			(void)syscall(SYS_rt_sigaction, sig, &ks, NULL,
			    sizeof(ks.ks_mask));
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

static int
agent_dec_exec(const void *data, size_t len, union agent_msg *m)
{
	return (msg_exec_decode(data, len, &m->am_exec));
}

static int
agent_dec_procs(const void *data, size_t len, union agent_msg *m)
{
	return (msg_proc_req_decode(data, len, &m->am_procs));
}

static int
agent_dec_gitconfig(const void *data, size_t len, union agent_msg *m)
{
	return (msg_gitconfig_decode(data, len, &m->am_gitconfig));
}

static int
agent_dec_gitinit(const void *data, size_t len, union agent_msg *m)
{
	return (msg_gitinit_decode(data, len, &m->am_gitinit));
}

static int
agent_dec_file(const void *data, size_t len, union agent_msg *m)
{
	return (msg_file_decode(data, len, &m->am_file));
}

static int
agent_dec_credit(const void *data, size_t len, union agent_msg *m)
{
	return (msg_credit_decode(data, len, &m->am_credit));
}

static int
agent_dec_topen(const void *data, size_t len, union agent_msg *m)
{
	return (msg_tunnel_open_decode(data, len, &m->am_topen));
}

static int
agent_dec_ports(const void *data, size_t len, union agent_msg *m)
{
	return (msg_ports_req_decode(data, len, &m->am_ports));
}

static int
agent_dec_tdata(const void *data, size_t len, union agent_msg *m)
{
	return (msg_tunnel_data_decode(data, len, &m->am_tdata));
}

static int
agent_dec_tcredit(const void *data, size_t len, union agent_msg *m)
{
	return (msg_tunnel_credit_decode(data, len, &m->am_tcredit));
}

static int
agent_dec_tclose(const void *data, size_t len, union agent_msg *m)
{
	return (msg_tunnel_close_decode(data, len, &m->am_tclose));
}

static void
agent_free_tdata(union agent_msg *m)
{
	msg_tunnel_data_free(&m->am_tdata);
}

static int
agent_dec_term_open(const void *data, size_t len, union agent_msg *m)
{
	return (msg_term_open_decode(data, len, &m->am_term_open));
}

static int
agent_dec_terms(const void *data, size_t len, union agent_msg *m)
{
	return (msg_term_req_decode(data, len, &m->am_terms));
}

static int
agent_dec_input(const void *data, size_t len, union agent_msg *m)
{
	return (msg_proc_input_decode(data, len, &m->am_input));
}

static void
agent_free_term_open(union agent_msg *m)
{
	msg_term_open_free(&m->am_term_open);
}

static void
agent_free_input(union agent_msg *m)
{
	msg_proc_input_free(&m->am_input);
}

static void
agent_free_exec(union agent_msg *m)
{
	msg_exec_free(&m->am_exec);
}

static void
agent_free_file(union agent_msg *m)
{
	msg_file_free(&m->am_file);
}

/* Reading the identity changes nothing; setting either part does. */
static int
agent_gitconfig_writes(const union agent_msg *m)
{
	return (m->am_gitconfig.g_set_name || m->am_gitconfig.g_set_email);
}

static void
agent_serve_exec(uint32_t type, uint32_t id, union agent_msg *m)
{
	agent_exec(id, &m->am_exec);
}

static void
agent_serve_spawn(uint32_t type, uint32_t id, union agent_msg *m)
{
	agent_spawn(id, &m->am_exec);
}

static void
agent_serve_stream(uint32_t type, uint32_t id, union agent_msg *m)
{
	agent_exec_stream(id, &m->am_exec);
}

static void
agent_serve_probe(uint32_t type, uint32_t id, union agent_msg *m)
{
	agent_probe(id, &m->am_exec);
}

static void
agent_serve_procs(uint32_t type, uint32_t id, union agent_msg *m)
{
	agent_procs(id, &m->am_procs);
}

static void
agent_serve_gitconfig(uint32_t type, uint32_t id, union agent_msg *m)
{
	agent_git_config(id, &m->am_gitconfig);
}

static void
agent_serve_gitinit(uint32_t type, uint32_t id, union agent_msg *m)
{
	agent_git_init(id, &m->am_gitinit);
}

static void
agent_serve_file(uint32_t type, uint32_t id, union agent_msg *m)
{
	agent_files(type, id, &m->am_file);
}

static void
agent_serve_credit(uint32_t type, uint32_t id, union agent_msg *m)
{
	agent_stream_credit(id, &m->am_credit);
}

static void
agent_serve_cancel(uint32_t type, uint32_t id, union agent_msg *m)
{
	agent_stream_cancel(id, &m->am_credit);
}

static void
agent_serve_topen(uint32_t type, uint32_t id, union agent_msg *m)
{
	agent_tunnel_open(id, &m->am_topen);
}

static void
agent_serve_ports(uint32_t type, uint32_t id, union agent_msg *m)
{
	agent_ports(id, &m->am_ports);
}

static void
agent_serve_tdata(uint32_t type, uint32_t id, union agent_msg *m)
{
	agent_tunnel_data(id, &m->am_tdata);
}

static void
agent_serve_tcredit(uint32_t type, uint32_t id, union agent_msg *m)
{
	agent_tunnel_credit(id, &m->am_tcredit);
}

static void
agent_serve_tclose(uint32_t type, uint32_t id, union agent_msg *m)
{
	agent_tunnel_close(id, &m->am_tclose);
}

static void
agent_serve_term_open(uint32_t type, uint32_t id, union agent_msg *m)
{
	agent_term_open(id, &m->am_term_open);
}

static void
agent_serve_terms(uint32_t type, uint32_t id, union agent_msg *m)
{
	agent_terms(id, &m->am_terms);
}

static void
agent_serve_input(uint32_t type, uint32_t id, union agent_msg *m)
{
	agent_proc_input(id, &m->am_input);
}

#define AR_AT(m)	offsetof(union agent_msg, m)
static const struct agent_req agent_reqs[] = {
	{ IMSG_AGENT_EXEC, AR_PAIRED, AR_AT(am_exec.x_bearer),
	    agent_dec_exec, NULL, agent_serve_exec, agent_free_exec },
	{ IMSG_AGENT_SPAWN, AR_PAIRED, AR_AT(am_exec.x_bearer),
	    agent_dec_exec, NULL, agent_serve_spawn, agent_free_exec },
	{ IMSG_AGENT_EXEC_STREAM, AR_PAIRED, AR_AT(am_exec.x_bearer),
	    agent_dec_exec, NULL, agent_serve_stream, agent_free_exec },
	{ IMSG_AGENT_PROBE, AR_PAIRED, AR_AT(am_exec.x_bearer),
	    agent_dec_exec, NULL, agent_serve_probe, agent_free_exec },
	{ IMSG_AGENT_PROCS, AR_PAIRED, AR_AT(am_procs.q_bearer),
	    agent_dec_procs, NULL, agent_serve_procs, NULL },
	{ IMSG_AGENT_GIT_CONFIG, AR_PAIRED_WRITE, AR_AT(am_gitconfig.g_bearer),
	    agent_dec_gitconfig, agent_gitconfig_writes,
	    agent_serve_gitconfig, NULL },
	{ IMSG_AGENT_GIT_INIT, AR_PAIRED, AR_AT(am_gitinit.gi_bearer),
	    agent_dec_gitinit, NULL, agent_serve_gitinit, NULL },
	{ IMSG_AGENT_FILE_READ, 0, AR_AT(am_file.fl_bearer),
	    agent_dec_file, NULL, agent_serve_file, agent_free_file },
	{ IMSG_AGENT_FILE_WRITE, AR_PAIRED, AR_AT(am_file.fl_bearer),
	    agent_dec_file, NULL, agent_serve_file, agent_free_file },
	{ IMSG_AGENT_FILE_DELETE, AR_PAIRED, AR_AT(am_file.fl_bearer),
	    agent_dec_file, NULL, agent_serve_file, agent_free_file },
	{ IMSG_AGENT_CREDIT, AR_PAIRED | AR_QUIET, AR_AT(am_credit.cr_bearer),
	    agent_dec_credit, NULL, agent_serve_credit, NULL },
	{ IMSG_AGENT_CANCEL, AR_PAIRED | AR_QUIET, AR_AT(am_credit.cr_bearer),
	    agent_dec_credit, NULL, agent_serve_cancel, NULL },
	{ IMSG_AGENT_TUNNEL_OPEN, AR_PAIRED, AR_AT(am_topen.to_bearer),
	    agent_dec_topen, NULL, agent_serve_topen, NULL },
	{ IMSG_AGENT_PORTS, AR_PAIRED, AR_AT(am_ports.ps_bearer),
	    agent_dec_ports, NULL, agent_serve_ports, NULL },
	{ IMSG_AGENT_TUNNEL_DATA, AR_PAIRED | AR_QUIET,
	    AR_AT(am_tdata.td_bearer), agent_dec_tdata, NULL,
	    agent_serve_tdata, agent_free_tdata },
	{ IMSG_AGENT_TUNNEL_CREDIT, AR_PAIRED | AR_QUIET,
	    AR_AT(am_tcredit.tc_bearer), agent_dec_tcredit, NULL,
	    agent_serve_tcredit, NULL },
	{ IMSG_AGENT_TUNNEL_CLOSE, AR_PAIRED | AR_QUIET,
	    AR_AT(am_tclose.tl_bearer), agent_dec_tclose, NULL,
	    agent_serve_tclose, NULL },
	{ IMSG_AGENT_TERM_OPEN, AR_PAIRED, AR_AT(am_term_open.to_bearer),
	    agent_dec_term_open, NULL, agent_serve_term_open,
	    agent_free_term_open },
	{ IMSG_AGENT_TERMS, AR_PAIRED, AR_AT(am_terms.tq_bearer),
	    agent_dec_terms, NULL, agent_serve_terms, NULL },
	{ IMSG_AGENT_PROC_INPUT, AR_PAIRED, AR_AT(am_input.pi_bearer),
	    agent_dec_input, NULL, agent_serve_input, agent_free_input },
};
#undef AR_AT

static const struct agent_req *
agent_req_find(uint32_t type)
{
	size_t	 i;

	for (i = 0; i < sizeof(agent_reqs) / sizeof(agent_reqs[0]); i++)
		if (agent_reqs[i].ar_type == type)
			return (&agent_reqs[i]);
	return (NULL);
}

/*
 * The one check of the bearer: 1 if the request may be served.  Its
 * copy in the message is wiped either way; one without it is answered
 * exec-unpaired, or dropped where AR_QUIET says so.
 */
static int
agent_req_paired(const struct agent_req *ar, uint32_t id, union agent_msg *m)
{
	uint8_t		*bearer = (uint8_t *)m + ar->ar_bearer;
	int		 ok = 1;

	if ((ar->ar_flags & AR_PAIRED) ||
	    ((ar->ar_flags & AR_PAIRED_WRITE) && ar->ar_writes(m)))
		ok = agent_bearer_ok(bearer);
	explicit_bzero(bearer, MSG_BEARER_LEN);
	if (ok)
		return (1);
	if (ar->ar_flags & AR_QUIET)
		log_warnx("%s: request %u: unpaired, dropped", __func__, id);
	else
		agent_error(id, "exec-unpaired", "missing or wrong bearer");
	return (0);
}

static void
agent_dispatch(struct imsgev *iev, struct imsg *imsg, void *arg)
{
	const struct agent_req	*ar;
	union agent_msg		 m;
	uint32_t		 type = imsg->hdr.ih_type;
	uint32_t		 id = imsg->hdr.ih_peerid;
	int			 r;

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
	if ((ar = agent_req_find(type)) == NULL)
		fatalx("%s: unexpected message type %u", __func__, type);

	memset(&m, 0, sizeof(m));
	r = ar->ar_decode(imsg->data, imsg->len, &m);
	/* The payload held the bearer; it has been copied out. */
	if (imsg->data != NULL)
		explicit_bzero(imsg->data, imsg->len);
	if (r == -1)
		fatalx("%s: malformed message type %u", __func__, type);
	if (agent_req_paired(ar, id, &m))
		ar->ar_serve(type, id, &m);
	else if (ar->ar_free != NULL)
		ar->ar_free(&m);
	explicit_bzero(&m, sizeof(m));
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
	agent_tunnel_end_all();
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
	agent_ready(imsg->hdr.ih_peerid);
	/* The first request's supervisor, once READY is on its way. */
	agent_spare_schedule();
}

/*
 * READY, written at once: the spare supervisor scheduled right after it
 * is a fork that event_active() runs before the loop's next write, and
 * the boot waited for that fork.  One non-blocking write; what it
 * cannot send the loop sends, as for any reply.
 */
static void
agent_ready(uint32_t peerid)
{
	agent_reply(IMSG_AGENT_READY, peerid, NULL, 0);
	if (TAILQ_EMPTY(&agent_pending))
		(void)imsgbuf_write(imsgev_buf(agent_env->a_iev));
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
static int
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
