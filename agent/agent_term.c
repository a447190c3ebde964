/*
 * Terminals (docs/interactive.md, "Terminals"): a command on a
 * pseudo-terminal of the fence's own devpts, held by the agent.
 *
 * The command runs as a job like any exec (agent_job.c: a supervisor
 * of its own, which kills every process of the job at its end), in a
 * session of its own whose controlling terminal is the pty's slave,
 * with the fixed environment but TERM=xterm-256color.  The agent keeps
 * the master: it reads it always and keeps the last MSG_TERM_RING
 * bytes in a ring.  While a tunnel of kind terminal is attached
 * (agent_tunnel.c), what it reads goes on within the tunnel's room,
 * and the master is not read while there is none (the program blocks
 * in its write, as on a slow terminal); with none attached it is read
 * on and only the ring keeps it, so a program that writes for ever to
 * a terminal nobody reads costs the ring, never more.  One attachment
 * at a time: a new one ends the old.  Unattached for its idle time,
 * the terminal is killed.  At most MSG_TERM_MAX per fence.
 */
#include <sys/types.h>
#include <sys/ioctl.h>
#include <sys/queue.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "fenced.h"
#include "log.h"
#include "msg.h"
#include "agent.h"
#include "agent_tunnel.h"

#define AGENT_TERM_READ		(16 * 1024)	/* one read of the master */
#define AGENT_TERM_DRAIN_MS	50	/* ended, the master empty: again */
#define AGENT_TERM_DRAIN_N	4	/* so many times, then it is over */

struct agent_term {
	TAILQ_ENTRY(agent_term) t_entry;
	uint32_t	 t_id;
	struct agent_job *t_job;	/* NULL once it ended */
	pid_t		 t_super;	/* its supervisor (docs/denials.md) */
	int		 t_master;	/* -1 once its output is over */
	struct event	*t_rev;		/* the master readable */
	struct event	*t_wev;		/* writable: input waits */
	struct event	*t_idle;	/* unattached for t_idle_s */
	struct event	*t_drain;	/* ended: the master's last bytes */
	int		 t_drain_n;	/* reads that found none since */
	struct agent_tunnel *t_tun;	/* the attachment, or NULL */
	int		 t_reading;	/* t_rev added */
	uint8_t		 t_ring[MSG_TERM_RING];
	size_t		 t_end;		/* where the next byte goes */
	size_t		 t_kept;	/* bytes in the ring */
	uint32_t	 t_cols, t_rows;
	uint32_t	 t_idle_s;
	struct timespec	 t_start;
	char		 t_program[MSG_TERM_PROGRAM_LEN];
	/* Once it ended. */
	int32_t		 t_exit;
	int32_t		 t_signal;
	char		 t_why[MSG_ERROR_CODE_MAX];
	int		 t_why_kill;	/* KILL_ASKED or KILL_TIMEOUT */
};

static TAILQ_HEAD(, agent_term) agent_terms_list =
    TAILQ_HEAD_INITIALIZER(agent_terms_list);
static size_t		 agent_nterms;
static uint32_t		 agent_term_next = 1;
static char		*agent_term_env[AGENT_ENV_COUNT + 1];

static const char	*agent_term_shell(char *, size_t);
static void		 agent_term_envp(void);
static void		 agent_term_program(struct agent_term *,
			    const struct msg_term_open *, const char *);
static struct agent_term *agent_term_find(uint32_t);
static void		 agent_term_send(uint32_t, uint32_t,
			    struct agent_term *, int);
static void		 agent_term_read(evutil_socket_t, short, void *);
static void		 agent_term_write(evutil_socket_t, short, void *);
static int		 agent_term_drained(struct agent_term *);
static void		 agent_term_drain(evutil_socket_t, short, void *);
static void		 agent_term_idle(evutil_socket_t, short, void *);
static void		 agent_term_idle_start(struct agent_term *);
static void		 agent_term_keep(struct agent_term *, const uint8_t *,
			    size_t);
static void		 agent_term_done(struct agent_job *);
static void		 agent_term_over(struct agent_term *);
static void		 agent_term_free(struct agent_term *);
static void		 agent_term_pause(struct agent_term *, int);
static int		 agent_term_room(void);
static void		 agent_term_t_input(struct agent_tunnel *, void *);
static void		 agent_term_t_resume(struct agent_tunnel *, void *);
static void		 agent_term_t_eof(struct agent_tunnel *, void *);
static void		 agent_term_t_closed(struct agent_tunnel *, void *);

static const struct agent_tunnel_ops agent_term_ops = {
	agent_term_t_input,
	agent_term_t_resume,
	agent_term_t_eof,
	agent_term_t_closed
};

/*
 * The owner's login shell as the fence's passwd has it, if it is an
 * absolute path to something executable and not a refusal (nologin,
 * false); else /bin/sh.  Its name for argv[0], "-" first, as login(1)
 * starts a shell.
 */
static const char *
agent_term_shell(char *argv0, size_t size)
{
	static char	 shell[PATH_MAX];
	struct passwd	*pw;
	const char	*sh = "/bin/sh", *base;
	FILE		*f;

	/* The file itself, never NSS: the agent is linked statically. */
	if ((f = fopen("/etc/passwd", "re")) != NULL) {
		while ((pw = fgetpwent(f)) != NULL) {
			if (strcmp(pw->pw_name, agent_env->a_hello.h_user) != 0)
				continue;
			if (pw->pw_shell != NULL && pw->pw_shell[0] == '/' &&
			    strlcpy(shell, pw->pw_shell, sizeof(shell)) <
			    sizeof(shell) && access(shell, X_OK) == 0) {
				base = strrchr(shell, '/') + 1;
				if (strcmp(base, "nologin") != 0 &&
				    strcmp(base, "false") != 0)
					sh = shell;
			}
			break;
		}
		fclose(f);
	}
	base = strrchr(sh, '/') + 1;
	snprintf(argv0, size, "-%s", base);
	return (sh);
}

/* The fixed environment, TERM=xterm-256color in place of dumb; once. */
static void
agent_term_envp(void)
{
	size_t	 i;

	if (agent_term_env[0] != NULL)
		return;
	for (i = 0; agent_env->a_env[i] != NULL; i++) {
		if (strncmp(agent_env->a_env[i], "TERM=", 5) == 0)
			agent_term_env[i] = "TERM=xterm-256color";
		else
			agent_term_env[i] = agent_env->a_env[i];
	}
	agent_term_env[i] = NULL;
}

/* What it runs, for a listing: printable, cut to fit. */
static void
agent_term_program(struct agent_term *t, const struct msg_term_open *to,
    const char *shell)
{
	size_t	 i, off = 0;
	char	*p = t->t_program;

	if (to->to_command != NULL)
		snprintf(p, sizeof(t->t_program), "sh -c %s", to->to_command);
	else if (to->to_argv != NULL) {
		for (i = 0; i < to->to_argc && off < sizeof(t->t_program) - 1;
		    i++)
			off += snprintf(p + off, sizeof(t->t_program) - off,
			    "%s%s", i ? " " : "", to->to_argv[i]);
	} else
		strlcpy(p, shell, sizeof(t->t_program));
	for (i = 0; p[i] != '\0'; i++)
		if ((unsigned char)p[i] < 0x20 || (unsigned char)p[i] > 0x7e)
			p[i] = '?';
}

/*
 * TERM_OPEN: to is ours.  A new pty, the command on its slave, the
 * terminal answered as TERM; or an ERROR.
 */
void
agent_term_open(uint32_t id, struct msg_term_open *to)
{
	struct event_base *base = agent_env->a_base;
	struct agent_spawn sp;
	struct agent_term *t = NULL;
	struct winsize	 ws;
	char		 name[64], argv0[NAME_MAX + 2];
	char		*shargv[4], *loginargv[2];
	const char	*shell = NULL;
	int		 slave = -1;

	if (!agent_term_room()) {
		agent_error(id, "too-many-terminals", "the fence has %d "
		    "terminals running; kill one first", MSG_TERM_MAX);
		goto done;
	}
	if (agent_busy()) {
		agent_error(id, "exec-busy", "%d commands are running",
		    AGENT_JOBS_MAX);
		goto done;
	}
	if ((t = calloc(1, sizeof(*t))) == NULL)
		goto fail;
	t->t_master = -1;
	if ((t->t_master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC)) ==
	    -1 || unlockpt(t->t_master) == -1 ||
	    ptsname_r(t->t_master, name, sizeof(name)) != 0 ||
	    fcntl(t->t_master, F_SETFL, O_NONBLOCK) == -1 ||
	    (slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC)) == -1)
		goto fail;
	memset(&ws, 0, sizeof(ws));
	ws.ws_col = (unsigned short)to->to_cols;
	ws.ws_row = (unsigned short)to->to_rows;
	if (ioctl(t->t_master, TIOCSWINSZ, &ws) == -1)
		goto fail;
	t->t_cols = to->to_cols;
	t->t_rows = to->to_rows;
	t->t_idle_s = to->to_idle_s ? to->to_idle_s : MSG_TERM_IDLE_DEF;

	memset(&sp, 0, sizeof(sp));
	sp.sp_cwd = to->to_cwd;
	if (to->to_command != NULL) {
		shargv[0] = "sh";
		shargv[1] = "-c";
		shargv[2] = to->to_command;
		shargv[3] = NULL;
		sp.sp_path = AGENT_SHELL;
		sp.sp_argv = shargv;
	} else if (to->to_argv != NULL)
		sp.sp_argv = to->to_argv;
	else {
		shell = agent_term_shell(argv0, sizeof(argv0));
		loginargv[0] = argv0;
		loginargv[1] = NULL;
		sp.sp_path = shell;
		sp.sp_argv = loginargv;
	}
	agent_term_envp();
	sp.sp_env = agent_term_env;
	sp.sp_tty = slave;
	agent_term_program(t, to, shell);

	if ((t->t_rev = event_new(base, t->t_master, EV_READ | EV_PERSIST,
	    agent_term_read, t)) == NULL ||
	    (t->t_wev = event_new(base, t->t_master, EV_WRITE,
	    agent_term_write, t)) == NULL ||
	    (t->t_idle = evtimer_new(base, agent_term_idle, t)) == NULL ||
	    (t->t_drain = evtimer_new(base, agent_term_drain, t)) == NULL)
		fatalx("%s: event_new", __func__);
	/* Its deadline is the fence's: it dies with it, or idle, or asked. */
	if ((t->t_job = agent_job_start(id, &sp, AGENT_BG_TIMEOUT_MAX, 0,
	    agent_term_done, t)) == NULL)
		goto fail;
	close(slave);
	slave = -1;
	t->t_start = t->t_job->j_start;
	t->t_super = t->t_job->j_super_pid;
	t->t_id = agent_term_next++;
	if (agent_term_next == 0)
		agent_term_next = 1;
	TAILQ_INSERT_TAIL(&agent_terms_list, t, t_entry);
	agent_nterms++;
	agent_term_pause(t, 0);
	agent_term_idle_start(t);
	log_debug("%s: request %u: terminal %u on %s, %ux%u, %s", __func__,
	    id, t->t_id, name, t->t_cols, t->t_rows, t->t_program);
	agent_term_send(id, IMSG_AGENT_TERM, t, 0);
	goto done;
 fail:
	agent_error(id, "exec-failed", "cannot start a terminal: %s",
	    strerror(errno));
	if (slave != -1)
		close(slave);
	if (t != NULL) {
		if (t->t_master != -1)
			close(t->t_master);
		if (t->t_rev != NULL)
			event_free(t->t_rev);
		if (t->t_wev != NULL)
			event_free(t->t_wev);
		if (t->t_idle != NULL)
			event_free(t->t_idle);
		if (t->t_drain != NULL)
			event_free(t->t_drain);
		free(t);
	}
 done:
	msg_term_open_free(to);
}

static struct agent_term *
agent_term_find(uint32_t id)
{
	struct agent_term *t;

	TAILQ_FOREACH(t, &agent_terms_list, t_entry)
		if (t->t_id == id)
			return (t);
	return (NULL);
}

/* One terminal as TERM (or a listing's). */
static void
agent_term_send(uint32_t id, uint32_t type, struct agent_term *t,
    int forgotten)
{
	struct msg_term	 m;
	struct timespec	 now;
	void		*buf;
	size_t		 len;

	memset(&m, 0, sizeof(m));
	m.t_id = t->t_id;
	m.t_running = t->t_job != NULL;
	m.t_forgotten = forgotten;
	if (!m.t_running) {
		m.t_exit = t->t_exit;
		m.t_signal = t->t_signal;
		strlcpy(m.t_why, t->t_why, sizeof(m.t_why));
	}
	m.t_cols = t->t_cols;
	m.t_rows = t->t_rows;
	clock_gettime(CLOCK_MONOTONIC, &now);
	m.t_age_ms = (uint32_t)((now.tv_sec - t->t_start.tv_sec) * 1000 +
	    (now.tv_nsec - t->t_start.tv_nsec) / 1000000);
	m.t_attached = t->t_tun != NULL;
	m.t_kept = (uint32_t)t->t_kept;
	m.t_idle_s = t->t_idle_s;
	m.t_count = (uint32_t)agent_nterms - (forgotten ? 1 : 0);
	strlcpy(m.t_program, t->t_program, sizeof(m.t_program));
	m.t_super = t->t_super > 0 ? (uint32_t)t->t_super : 0;
	if (msg_term_encode(&m, &buf, &len) == -1)
		fatal("%s: msg_term_encode", __func__);
	agent_reply(type, id, buf, len);
}

/* Read the master (on), or not (off): only while a tunnel has no room. */
static void
agent_term_pause(struct agent_term *t, int pause)
{
	if (t->t_master == -1)
		return;
	if (pause && t->t_reading) {
		event_del(t->t_rev);
		t->t_reading = 0;
	} else if (!pause && !t->t_reading) {
		if (event_add(t->t_rev, NULL) == -1)
			fatalx("%s: event_add", __func__);
		t->t_reading = 1;
	}
}

static void
agent_term_keep(struct agent_term *t, const uint8_t *p, size_t n)
{
	size_t	 part;

	if (n >= MSG_TERM_RING) {
		p += n - MSG_TERM_RING;
		n = MSG_TERM_RING;
	}
	while (n > 0) {
		part = MSG_TERM_RING - t->t_end;
		if (part > n)
			part = n;
		memcpy(t->t_ring + t->t_end, p, part);
		t->t_end = (t->t_end + part) % MSG_TERM_RING;
		p += part;
		n -= part;
		t->t_kept += part;
	}
	if (t->t_kept > MSG_TERM_RING)
		t->t_kept = MSG_TERM_RING;
}

/*
 * The program wrote.  Attached: no more than the tunnel has room for,
 * and with none the master waits.  EIO (no slave open) or end of file
 * once the job ended: its output is over.  While the job runs it only
 * means nobody holds the slave now (a program that closed its
 * descriptors and runs on, and may open /dev/tty again): the master is
 * not read until the job's end, where it is read out.
 */
static void
agent_term_read(evutil_socket_t fd, short events, void *arg)
{
	struct agent_term *t = arg;
	uint8_t		 buf[AGENT_TERM_READ];
	size_t		 want = sizeof(buf), room;
	ssize_t		 n;

	if (t->t_tun != NULL) {
		if ((room = agent_tunnel_room(t->t_tun)) == 0) {
			agent_term_pause(t, 1);
			return;
		}
		if (want > room)
			want = room;
	}
	if ((n = read(t->t_master, buf, want)) == -1) {
		if ((errno == EAGAIN || errno == EINTR) &&
		    !agent_term_drained(t))
			return;
		if (errno != EIO && errno != EAGAIN && errno != EINTR)
			log_warn("%s: terminal %u", __func__, t->t_id);
		n = 0;
	}
	t->t_drain_n = 0;
	if (n == 0 && t->t_job != NULL) {
		agent_term_pause(t, 1);
		return;
	}
	if (n == 0) {
		agent_term_pause(t, 1);
		event_free(t->t_rev);
		t->t_rev = NULL;
		event_del(t->t_wev);
		close(t->t_master);
		t->t_master = -1;
		if (t->t_job == NULL)
			agent_term_over(t);
		return;
	}
	agent_term_keep(t, buf, (size_t)n);
	if (t->t_tun != NULL)
		(void)agent_tunnel_send(t->t_tun, buf, (size_t)n);
}

/*
 * Nothing to read now.  While the job runs, more comes.  Once it ended
 * (every writer dead) the kernel says EIO when the rest was read; but
 * gVisor's devpts never does, so a master that stays empty for
 * AGENT_TERM_DRAIN_N * AGENT_TERM_DRAIN_MS after the end is over too.
 * 1 then.
 */
static int
agent_term_drained(struct agent_term *t)
{
	struct timeval	 tv = { 0, AGENT_TERM_DRAIN_MS * 1000 };

	if (t->t_job != NULL)
		return (0);
	if (t->t_drain_n++ >= AGENT_TERM_DRAIN_N)
		return (1);
	evtimer_add(t->t_drain, &tv);
	return (0);
}

static void
agent_term_drain(evutil_socket_t fd, short events, void *arg)
{
	struct agent_term *t = arg;

	if (t->t_master != -1 && (t->t_tun == NULL ||
	    agent_tunnel_room(t->t_tun) > 0))
		agent_term_read(-1, 0, t);
}

/* The client's keystrokes: as much as the master takes now. */
static void
agent_term_write(evutil_socket_t fd, short events, void *arg)
{
	struct agent_term *t = arg;
	const uint8_t	*p;
	size_t		 n;
	ssize_t		 w;

	if (t->t_tun == NULL)
		return;
	while ((n = agent_tunnel_input(t->t_tun, &p)) > 0) {
		if (t->t_master == -1) {
			/* Nobody reads any more: taken and dropped. */
			agent_tunnel_consumed(t->t_tun, n);
			continue;
		}
		if ((w = write(t->t_master, p, n)) == -1) {
			if (errno == EAGAIN || errno == EINTR) {
				event_add(t->t_wev, NULL);
				return;
			}
			w = (ssize_t)n;
		}
		agent_tunnel_consumed(t->t_tun, (size_t)w);
		if ((size_t)w < n) {
			event_add(t->t_wev, NULL);
			return;
		}
	}
}

/* Unattached, its idle time runs; ended, the time it stays listed. */
static void
agent_term_idle_start(struct agent_term *t)
{
	struct timeval	 tv;

	tv.tv_sec = t->t_idle_s;
	tv.tv_usec = 0;
	evtimer_add(t->t_idle, &tv);
}

/*
 * Unattached for its idle time: killed, as on request.  Ended that long
 * ago, and not attached: forgotten.
 */
static void
agent_term_idle(evutil_socket_t fd, short events, void *arg)
{
	struct agent_term *t = arg;

	if (t->t_tun != NULL)
		return;
	if (t->t_job == NULL) {
		log_debug("%s: terminal %u: ended, forgotten", __func__,
		    t->t_id);
		agent_term_free(t);
		return;
	}
	log_debug("%s: terminal %u: idle for %u s, killed", __func__,
	    t->t_id, t->t_idle_s);
	if (t->t_why_kill == KILL_NONE)
		t->t_why_kill = KILL_TIMEOUT;
	agent_job_kill(t->t_job, KILL_TIMEOUT);
}

/*
 * Its job is over: every process that held the slave is dead.  How it
 * ended is kept; once the master is read to its end the terminal is
 * over (agent_term_over()).
 */
static void
agent_term_done(struct agent_job *j)
{
	struct agent_term *t = j->j_arg;
	const struct agent_report *rp = &j->j_report;
	int		 st = rp->rp_status;

	if (!j->j_have_report || rp->rp_stage != STAGE_RAN) {
		strlcpy(t->t_why, rp->rp_stage == STAGE_CWD ?
		    "exec-cwd-invalid" : "exec-failed", sizeof(t->t_why));
		if (rp->rp_stage == STAGE_CWD && rp->rp_errno == EXDEV)
			strlcpy(t->t_why, "exec-cwd-outside-home",
			    sizeof(t->t_why));
		t->t_exit = 127;
	} else if (WIFSIGNALED(st)) {
		t->t_exit = -1;
		t->t_signal = WTERMSIG(st);
	} else
		t->t_exit = WEXITSTATUS(st);
	if (t->t_why[0] == '\0' && t->t_why_kill == KILL_TIMEOUT)
		strlcpy(t->t_why, "idle", sizeof(t->t_why));
	else if (t->t_why[0] == '\0' && t->t_why_kill == KILL_ASKED)
		strlcpy(t->t_why, "killed", sizeof(t->t_why));
	t->t_job = NULL;
	agent_term_idle_start(t);
	log_debug("%s: terminal %u: exit %d signal %d %s", __func__, t->t_id,
	    t->t_exit, t->t_signal, t->t_why);
	agent_job_free(j);
	if (t->t_master == -1)
		agent_term_over(t);
	else if (t->t_tun == NULL || agent_tunnel_room(t->t_tun) > 0) {
		agent_term_pause(t, 0);	/* read it to its end */
		agent_term_drain(-1, 0, t);
	}
}

/*
 * Its job ended and its output was read to the end: an attachment ends
 * (the end of this side's bytes), and the terminal stays listed, with
 * how it ended, until it is killed (forgotten) or the fence ends.
 */
static void
agent_term_over(struct agent_term *t)
{
	if (t->t_tun != NULL)
		agent_tunnel_shutdown(t->t_tun);
}

static void
agent_term_free(struct agent_term *t)
{
	struct agent_tunnel *tun = t->t_tun;

	TAILQ_REMOVE(&agent_terms_list, t, t_entry);
	agent_nterms--;
	t->t_tun = NULL;
	if (tun != NULL)
		agent_tunnel_abort(tun);
	if (t->t_rev != NULL)
		event_free(t->t_rev);
	if (t->t_wev != NULL)
		event_free(t->t_wev);
	if (t->t_idle != NULL)
		event_free(t->t_idle);
	if (t->t_drain != NULL)
		event_free(t->t_drain);
	if (t->t_master != -1)
		close(t->t_master);
	explicit_bzero(t->t_ring, sizeof(t->t_ring));
	free(t);
}

/* TERMS: list (one or all), resize, kill or forget. */
void
agent_terms(uint32_t id, struct msg_term_req *tq)
{
	struct agent_term *t;
	struct winsize	 ws;

	if (tq->tq_op == MSG_TERM_LIST && tq->tq_id == 0) {
		TAILQ_FOREACH(t, &agent_terms_list, t_entry)
			agent_term_send(id, IMSG_AGENT_TERM, t, 0);
		agent_reply(IMSG_AGENT_TERM_END, id, NULL, 0);
		goto done;
	}
	if ((t = agent_term_find(tq->tq_id)) == NULL) {
		agent_error(id, "terminal-not-found", "no terminal %u",
		    tq->tq_id);
		goto done;
	}
	switch (tq->tq_op) {
	case MSG_TERM_LIST:
		break;
	case MSG_TERM_RESIZE:
		if (t->t_master == -1 || t->t_job == NULL) {
			agent_error(id, "terminal-ended", "terminal %u has "
			    "ended", t->t_id);
			goto done;
		}
		memset(&ws, 0, sizeof(ws));
		ws.ws_col = (unsigned short)tq->tq_cols;
		ws.ws_row = (unsigned short)tq->tq_rows;
		/* The kernel sends SIGWINCH to its foreground group. */
		if (ioctl(t->t_master, TIOCSWINSZ, &ws) == -1) {
			agent_error(id, "exec-failed", "resize: %s",
			    strerror(errno));
			goto done;
		}
		t->t_cols = tq->tq_cols;
		t->t_rows = tq->tq_rows;
		break;
	case MSG_TERM_KILL:
		if (t->t_job == NULL) {
			agent_term_send(id, IMSG_AGENT_TERM, t, 1);
			agent_term_free(t);
			goto done;
		}
		if (t->t_why_kill == KILL_NONE)
			t->t_why_kill = KILL_ASKED;
		agent_job_kill(t->t_job, KILL_ASKED);
		break;
	}
	agent_term_send(id, IMSG_AGENT_TERM, t, 0);
 done:
	explicit_bzero(tq, sizeof(*tq));
}

/*
 * TUNNEL_OPEN of kind terminal (agent_tunnel.c): attach to terminal
 * to_id, ending the attachment it had; the last to_offset bytes of the
 * ring first, then what it writes.  One that ended gets its replay and
 * the end.
 */
void
agent_term_attach(uint32_t id, const struct msg_tunnel_open *to)
{
	struct agent_term *t;
	struct agent_tunnel *old;
	size_t		 n, start, part;

	if ((t = agent_term_find(to->to_id)) == NULL) {
		agent_error(id, "terminal-not-found", "no terminal %u",
		    to->to_id);
		return;
	}
	if ((old = t->t_tun) != NULL) {
		t->t_tun = NULL;
		agent_tunnel_abort(old);
	}
	if ((t->t_tun = agent_tunnel_new(id, &agent_term_ops, t)) == NULL)
		return;		/* answered by the engine */
	evtimer_del(t->t_idle);
	n = to->to_offset < t->t_kept ? (size_t)to->to_offset : t->t_kept;
	start = (t->t_end + MSG_TERM_RING - n) % MSG_TERM_RING;
	while (n > 0) {
		part = MSG_TERM_RING - start;
		if (part > n)
			part = n;
		part = agent_tunnel_send(t->t_tun, t->t_ring + start, part);
		if (part == 0)
			break;
		start = (start + part) % MSG_TERM_RING;
		n -= part;
	}
	if (t->t_master == -1 && t->t_job == NULL)
		agent_term_over(t);
	else
		agent_term_pause(t, 0);
}

static void
agent_term_t_input(struct agent_tunnel *tun, void *arg)
{
	struct agent_term *t = arg;

	if (t->t_tun == tun)
		agent_term_write(-1, 0, t);
}

static void
agent_term_t_resume(struct agent_tunnel *tun, void *arg)
{
	struct agent_term *t = arg;

	if (t->t_tun != tun)
		return;
	agent_term_pause(t, 0);
	if (t->t_job == NULL)
		agent_term_drain(-1, 0, t);
}

/*
 * The client's end of input: a terminal's input has no end while
 * someone types, so this is the client gone (its socket closed, which
 * the broker cannot tell from a shutdown): a detach.  The terminal
 * reads on into the ring and its idle time runs.
 */
static void
agent_term_t_eof(struct agent_tunnel *tun, void *arg)
{
	struct agent_term *t = arg;

	if (t->t_tun != tun)
		return;
	t->t_tun = NULL;
	agent_tunnel_abort(tun);
	event_del(t->t_wev);
	agent_term_pause(t, 0);
	agent_term_idle_start(t);
}

/*
 * Detached (the engine says so with no tunnel: its attachment is the
 * only one; one it ended itself is never said): it reads on into the
 * ring, and its idle time runs.
 */
static void
agent_term_t_closed(struct agent_tunnel *tun, void *arg)
{
	struct agent_term *t = arg;

	t->t_tun = NULL;
	event_del(t->t_wev);
	agent_term_pause(t, 0);
	agent_term_idle_start(t);
}

/* Room for one more: the oldest that ended goes, if need be. */
static int
agent_term_room(void)
{
	struct agent_term *t;

	if (agent_nterms < MSG_TERM_MAX)
		return (1);
	TAILQ_FOREACH(t, &agent_terms_list, t_entry)
		if (t->t_job == NULL) {
			agent_term_free(t);
			return (1);
		}
	return (0);
}
