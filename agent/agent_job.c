/*
 * Jobs: one command under one supervisor, seen from the agent.
 *
 * Each job has a supervisor (agent_super.c): the spare made ahead, or
 * one forked for it.  The agent keeps the other ends of the command's
 * three pipes and of a control socket, all non-blocking on libevent.  It writes stdin, reads stdout and stderr
 * against the output budget, and runs the deadline.  To stop a command
 * it shuts its side of the control socket down; the supervisor kills
 * every process of the job and exits.  A supervisor that does not exit
 * within AGENT_GRACE_MS is killed, and whatever it left behind (now our
 * children: we are pid 1, or a subreaper) is swept.
 *
 * A job is over when its supervisor has been reaped: by then every
 * process that could write to the pipes is dead, so what is left in
 * them is read to the end and the job's callback gets the lot.
 */
#include <sys/types.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "fenced.h"
#include "imsg.h"
#include "log.h"
#include "msg.h"
#include "agent.h"

#define AGENT_READ_CHUNK	(64 * 1024)
#define AGENT_IOPRIO_WHO_PROCESS 1	/* linux/ioprio.h */

static struct event	*agent_sweep_ev;

/* Supervisors that reported, their jobs ended, not reaped yet. */
static pid_t		 agent_done[AGENT_JOBS_MAX];
static size_t		 agent_ndone;

/*
 * The spare supervisor: one, forked ahead while the agent is idle
 * (after READY, and whenever its last job ends), so that the next
 * request finds its supervisor prepared and waiting, and the fork of
 * the agent is off the path of the answer.  Its four descriptors are
 * made for the job it will run, which it reads on its control socket
 * (agent_super_spare()).  No command runs while a spare waits, so none
 * can stop or kill it; still, one found stopped or dead (by a process
 * outside, of the same uid) is dropped, and so is none made yet: such
 * a job, one too big for a spec, and jobs that start while another
 * runs fork a supervisor of their own, as they always did.
 */
static struct {
	pid_t	 s_pid;			/* 0: none */
	int	 s_fd[4];		/* the agent's ends: in, out, err, ctl */
} agent_spare;
static pid_t		 agent_spare_dropped;	/* killed, not yet reaped */
/*
 * The supervisor of the only job, which reported and may be the next
 * spare (agent_spare_make()): its pid stays in agent_done[] until then.
 */
static struct {
	pid_t	 c_pid;			/* 0: none */
	int	 c_ctl;			/* the agent's end of its socket */
} agent_cand;
static int		 agent_spare_off;	/* shutting down */

/* What a supervisor may not change and stay reusable (agent_spare_same). */
struct agent_attrs {
	struct rlimit	 at_rl[RLIM_NLIMITS];
	int		 at_nice;
	int		 at_policy;
	struct sched_param at_param;
	cpu_set_t	 at_cpus;
	int		 at_ioprio;
};
static struct agent_attrs agent_self;	/* ours, at the last spare's fork */
static int		 agent_self_ok;
static struct event	*agent_spare_ev;

static int	agent_job_fds(int [4][2], int, int);
static struct agent_job *agent_job_start_tty(struct agent_job *, uint32_t,
		    const struct agent_spawn *, uint32_t, agent_job_cb, void *);
static void	agent_job_started(struct agent_job *, uint32_t, pid_t, int,
		    uint32_t, size_t, agent_job_cb, void *);
static void	agent_job_events(struct agent_job *);
static void	agent_job_timer(evutil_socket_t, short, void *);
static void	agent_job_write(evutil_socket_t, short, void *);
static void	agent_job_read(evutil_socket_t, short, void *);
static int	agent_job_read_one(struct agent_job *, struct agent_out *);
static void	agent_job_keep(struct agent_job *, struct agent_out *,
		    const uint8_t *, size_t);
static void	agent_job_close_in(struct agent_job *);
static void	agent_job_close_out(struct agent_out *);
static void	agent_job_reaped(struct agent_job *, int);
static void	agent_sweep(evutil_socket_t, short, void *);
static void	agent_ms_tv(uint32_t, struct timeval *);
static void	agent_job_ctl(evutil_socket_t, short, void *);
static void	agent_job_finish(struct agent_job *, int);
static void	agent_job_drain(struct agent_job *);
static void	agent_job_pause(struct agent_job *);
static int	agent_done_reaped(pid_t);
static int	agent_spare_take(const struct agent_spawn *, int [4][2],
		    pid_t *);
static int	agent_spec_encode(const struct agent_spawn *, uint8_t *,
		    size_t *);
static int	agent_spec_put(uint8_t *, size_t *, const char *);
static void	agent_spare_drop(void);
static void	agent_spare_forget(void);
static void	agent_spare_make(evutil_socket_t, short, void *);
static int	agent_spare_adopt(void);
static int	agent_spare_same(pid_t);
static int	agent_attrs_read(pid_t, struct agent_attrs *);
static void	agent_cand_drop(void);

static void
agent_ms_tv(uint32_t ms, struct timeval *tv)
{
	tv->tv_sec = ms / 1000;
	tv->tv_usec = (ms % 1000) * 1000;
}

/*
 * p[0] stdin, p[1] stdout, p[2] stderr, p[3] control socket (none, -1,
 * without ctl); for each [0] is the agent's end.  All close-on-exec,
 * ours non-blocking.  With sockets the first three are socket pairs,
 * not pipes: no process can open one again through /proc/PID/fd, which
 * a runsc sandbox lets a process of the same uid do to a pipe even of
 * a process that is not dumpable (fence-probe's secret comes on its
 * stdin; docs/agent.md).
 */
static int
agent_job_fds(int p[4][2], int sockets, int ctl)
{
	int	 i, t;

	for (i = 0; i < 4; i++)
		p[i][0] = p[i][1] = -1;
	for (i = 0; i < 3; i++)
		if ((sockets ? socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC,
		    0, p[i]) : pipe2(p[i], O_CLOEXEC)) == -1)
			goto fail;
	/* stdin: the agent writes, so swap the ends. */
	t = p[0][0];
	p[0][0] = p[0][1];
	p[0][1] = t;
	if (ctl && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0,
	    p[3]) == -1)
		goto fail;
	for (i = 0; i < (ctl ? 4 : 3); i++)
		if (fcntl(p[i][0], F_SETFL, O_NONBLOCK) == -1)
			goto fail;
	return (0);
fail:
	t = errno;
	for (i = 0; i < 4; i++) {
		if (p[i][0] != -1)
			close(p[i][0]);
		if (p[i][1] != -1)
			close(p[i][1]);
	}
	errno = t;
	return (-1);
}

/*
 * Start one job.  NULL with errno when no supervisor could be started;
 * the caller answers for it then.
 */
struct agent_job *
agent_job_start(uint32_t id, const struct agent_spawn *sp, uint32_t timeout,
    size_t max, agent_job_cb done, void *arg)
{
	struct agent_job *j;
	int		 p[4][2], i, saved;
	pid_t		 pid;

	if ((j = calloc(1, sizeof(*j))) == NULL)
		return (NULL);
	if (sp->sp_argv != NULL && sp->sp_argv[0] != NULL)
		strlcpy(j->j_prog, sp->sp_path != NULL ? sp->sp_path :
		    sp->sp_argv[0], sizeof(j->j_prog));
	strlcpy(j->j_cwd, sp->sp_cwd[0] == '\0' ? "~" : sp->sp_cwd,
	    sizeof(j->j_cwd));
	if (sp->sp_tty > 0)
		return (agent_job_start_tty(j, id, sp, timeout, done, arg));
	/* Its supervisor may be the next spare, once the job is done. */
	j->j_reusable = !sp->sp_sockets;
	if (!sp->sp_sockets && sp->sp_env == NULL &&
	    agent_spare_take(sp, p, &pid) == 0)
		goto started;
	if (agent_job_fds(p, sp->sp_sockets, 1) == -1) {
		saved = errno;
		free(j);
		errno = saved;
		return (NULL);
	}
	if ((pid = fork()) == -1) {
		saved = errno;
		for (i = 0; i < 4; i++) {
			close(p[i][0]);
			close(p[i][1]);
		}
		free(j);
		errno = saved;
		return (NULL);
	}
	if (pid == 0)
		agent_super(sp, p[3][1], p[0][1], p[1][1], p[2][1]);
	for (i = 0; i < 4; i++)
		close(p[i][1]);
started:
	j->j_in = p[0][0];
	j->j_out[0].o_fd = p[1][0];
	j->j_out[1].o_fd = p[2][0];
	agent_job_started(j, id, pid, p[3][0], timeout, max, done, arg);
	return (j);
}

/*
 * A terminal's job (agent_term.c): the command's 0, 1 and 2 are the
 * pty's slave, which the caller keeps and closes; the agent reads and
 * writes the master itself, so the job has no pipes, only its control
 * socket, and never takes the spare (whose pipes are made ahead).
 */
static struct agent_job *
agent_job_start_tty(struct agent_job *j, uint32_t id,
    const struct agent_spawn *sp, uint32_t timeout, agent_job_cb done,
    void *arg)
{
	int	 ctl[2], saved;
	pid_t	 pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ctl) == -1)
		goto fail;
	if (fcntl(ctl[0], F_SETFL, O_NONBLOCK) == -1 ||
	    (pid = fork()) == -1) {
		saved = errno;
		close(ctl[0]);
		close(ctl[1]);
		errno = saved;
		goto fail;
	}
	if (pid == 0)
		agent_super(sp, ctl[1], sp->sp_tty, sp->sp_tty, sp->sp_tty);
	close(ctl[1]);
	j->j_in = j->j_out[0].o_fd = j->j_out[1].o_fd = -1;
	agent_job_started(j, id, pid, ctl[0], timeout, 0, done, arg);
	return (j);
 fail:
	saved = errno;
	free(j);
	errno = saved;
	return (NULL);
}

/* j's supervisor pid runs; its events, deadline and place in the list. */
static void
agent_job_started(struct agent_job *j, uint32_t id, pid_t pid, int ctl,
    uint32_t timeout, size_t max, agent_job_cb done, void *arg)
{
	struct timeval	 tv;

	j->j_id = id;
	j->j_super = j->j_super_pid = pid;
	j->j_ctl = ctl;
	j->j_max = max;
	j->j_done = done;
	j->j_arg = arg;
	/* A command runs now: no supervisor may wait idle beside it. */
	agent_cand_drop();
	clock_gettime(CLOCK_MONOTONIC, &j->j_start);
	agent_job_events(j);
	agent_ms_tv(timeout, &tv);
	/*
	 * From now, not from the loop's cached time (taken before this
	 * request was read): a deadline never ends a job early.
	 */
	event_base_update_cache_time(agent_env->a_base);
	evtimer_add(j->j_timer, &tv);
	TAILQ_INSERT_TAIL(&agent_env->a_jobs, j, j_entry);
	agent_env->a_njobs++;
	log_debug("%s: request %u: supervisor %d", __func__, id, (int)pid);
}

/*
 * Take the spare for sp: its descriptors into p (the agent's ends at
 * [0], the spare's at [1] already closed: -1), its pid into *pid.  -1
 * when there is none, the job does not fit in a spec, or the spare is
 * gone (then it is killed and forgotten).
 */
static int
agent_spare_take(const struct agent_spawn *sp, int p[4][2], pid_t *pid)
{
	static uint8_t	 buf[4 + AGENT_SPEC_MAX];
	siginfo_t	 si;
	size_t		 len;
	ssize_t		 n;
	int		 i;

	if (agent_spare.s_pid == 0 || agent_spec_encode(sp, buf, &len) == -1)
		return (-1);
	/*
	 * A command may have stopped it (SIGSTOP, SIGTSTP) and gone: the
	 * job would wait out its deadline.  A stopped child is reported
	 * here without being reaped; a dead one fails the write.
	 */
	memset(&si, 0, sizeof(si));
	if (waitid(P_PID, agent_spare.s_pid, &si, WSTOPPED | WEXITED |
	    WNOHANG | WNOWAIT) == -1 || si.si_pid != 0) {
		log_debug("%s: spare %d stopped or gone", __func__,
		    (int)agent_spare.s_pid);
		agent_spare_drop();
		return (-1);
	}
	do {
		n = write(agent_spare.s_fd[3], buf, len);
	} while (n == -1 && errno == EINTR);
	if (n != (ssize_t)len) {
		log_debug("%s: spare %d: %s", __func__, (int)agent_spare.s_pid,
		    n == -1 ? strerror(errno) : "short write");
		agent_spare_drop();
		return (-1);
	}
	for (i = 0; i < 4; i++) {
		p[i][0] = agent_spare.s_fd[i];
		p[i][1] = -1;
	}
	*pid = agent_spare.s_pid;
	agent_spare.s_pid = 0;
	return (0);
}

/* sp as AGENT_SPEC_* says, into buf; -1 if it does not fit. */
static int
agent_spec_encode(const struct agent_spawn *sp, uint8_t *buf, size_t *lenp)
{
	size_t		 off = 4 + AGENT_SPEC_HEAD;
	uint32_t	 argc, len;

	buf[4] = sp->sp_create != 0;
	buf[5] = sp->sp_path != NULL;
	buf[6] = buf[7] = 0;
	if ((sp->sp_path != NULL &&
	    agent_spec_put(buf, &off, sp->sp_path) == -1) ||
	    agent_spec_put(buf, &off, sp->sp_cwd) == -1)
		return (-1);
	for (argc = 0; sp->sp_argv[argc] != NULL; argc++)
		if (argc == AGENT_SPEC_ARGV_MAX ||
		    agent_spec_put(buf, &off, sp->sp_argv[argc]) == -1)
			return (-1);
	memcpy(buf + 8, &argc, sizeof(argc));
	len = off - 4;
	memcpy(buf, &len, sizeof(len));
	*lenp = off;
	return (0);
}

static int
agent_spec_put(uint8_t *buf, size_t *off, const char *str)
{
	size_t	 n = strlen(str) + 1;

	if (n > 4 + AGENT_SPEC_MAX - *off)
		return (-1);
	memcpy(buf + *off, str, n);
	*off += n;
	return (0);
}

/* Kill the spare and forget it; its exit is reaped as no stray. */
static void
agent_spare_drop(void)
{
	if (agent_spare.s_pid == 0)
		return;
	kill(agent_spare.s_pid, SIGKILL);
	agent_spare_dropped = agent_spare.s_pid;
	agent_spare_forget();
}

/* The spare is no more (reaped, or dropped): close our ends. */
static void
agent_spare_forget(void)
{
	int	 i;

	agent_spare.s_pid = 0;
	for (i = 0; i < 4; i++)
		close(agent_spare.s_fd[i]);
}

/*
 * A spare is made once the loop has answered what is in hand, and only
 * while no job runs: no command can then find it, stop it or kill it
 * (every process of an ended job is dead).  Without a subreaper below
 * pid 1 (runsc) a command's orphans outlive it until the next sweep,
 * so there is no spare there.
 */
void
agent_spare_schedule(void)
{
	if (agent_env->a_orphans_ours)
		return;
	if (agent_spare_ev == NULL && (agent_spare_ev = event_new(
	    agent_env->a_base, -1, 0, agent_spare_make, NULL)) == NULL)
		fatalx("%s: event_new", __func__);
	if (agent_spare.s_pid == 0 && !agent_spare_off &&
	    agent_env->a_njobs == 0)
		event_active(agent_spare_ev, EV_TIMEOUT, 1);
}

static void
agent_spare_make(evutil_socket_t fd, short events, void *arg)
{
	int	 p[4][2], i;
	pid_t	 pid;

	if (agent_spare.s_pid != 0 || agent_spare_off ||
	    agent_env->a_njobs != 0) {
		agent_cand_drop();
		return;
	}
	/* What was answered goes before the fork, not after it. */
	imsgev_push(agent_env->a_iev);
	if (agent_cand.c_pid != 0 && agent_spare_adopt() == 0)
		return;
	if (agent_job_fds(p, 0, 1) == -1)
		return;
	/* What the spare starts with; a reused one must still have it. */
	agent_self_ok = agent_attrs_read(0, &agent_self) == 0;
	if ((pid = fork()) == -1) {
		log_warn("%s: fork", __func__);
		for (i = 0; i < 4; i++) {
			close(p[i][0]);
			close(p[i][1]);
		}
		return;
	}
	if (pid == 0)
		agent_super_spare(p[3][1], p[0][1], p[1][1], p[2][1]);
	for (i = 0; i < 4; i++) {
		close(p[i][1]);
		agent_spare.s_fd[i] = p[i][0];
	}
	agent_spare.s_pid = pid;
}

/*
 * The supervisor of the job that just ended, which was the only one,
 * made the spare instead of a fork: fresh pipes, its ends sent on its
 * control socket (agent_super_next()).  Every process of its job is
 * dead (it reported), and no job ran since (agent_cand_drop()), so no
 * command can have reached it since its own; what its own could change
 * in it from outside is compared with ours first (agent_spare_same()).
 * -1 when it could not be: it is killed, and the caller forks one.
 */
static int
agent_spare_adopt(void)
{
	int		 p[4][2], fd[3], i;
	char		 b = 'S';
	ssize_t		 n;

	if (!agent_spare_same(agent_cand.c_pid)) {
		log_debug("%s: supervisor %d was changed by its job", __func__,
		    (int)agent_cand.c_pid);
		agent_cand_drop();
		return (-1);
	}
	if (agent_job_fds(p, 0, 0) == -1) {
		agent_cand_drop();
		return (-1);
	}
	for (i = 0; i < 3; i++)
		fd[i] = p[i][1];
	n = send_fds(agent_cand.c_ctl, &b, 1, fd, 3);
	for (i = 0; i < 3; i++)
		close(p[i][1]);
	if (n != 1) {
		log_debug("%s: supervisor %d: %s", __func__,
		    (int)agent_cand.c_pid, n == -1 ? strerror(errno) :
		    "short write");
		for (i = 0; i < 3; i++)
			close(p[i][0]);
		agent_cand_drop();
		return (-1);
	}
	/* A spare now, no longer a supervisor done. */
	agent_done_reaped(agent_cand.c_pid);
	agent_spare.s_pid = agent_cand.c_pid;
	for (i = 0; i < 3; i++)
		agent_spare.s_fd[i] = p[i][0];
	agent_spare.s_fd[3] = agent_cand.c_ctl;
	agent_cand.c_pid = 0;
	agent_cand.c_ctl = -1;
	return (0);
}

/*
 * What a process of the fence's uid may change in another one from
 * outside, with nothing but the same uid: its limits (prlimit(2)), its
 * priority (setpriority(2), lower only), its scheduling policy and
 * affinity (sched_setscheduler(2), sched_setaffinity(2)) and its I/O
 * priority (ioprio_set(2)).  A command may have done so to its
 * supervisor.  pid's into *at; -1 if any cannot be read.
 */
static int
agent_attrs_read(pid_t pid, struct agent_attrs *at)
{
	int	 r;

	memset(at, 0, sizeof(*at));
	for (r = 0; r < RLIM_NLIMITS; r++)
		if (prlimit(pid, r, NULL, &at->at_rl[r]) == -1)
			return (-1);
	errno = 0;
	at->at_nice = getpriority(PRIO_PROCESS, pid);
	if (errno != 0 || (at->at_policy = sched_getscheduler(pid)) == -1 ||
	    sched_getparam(pid, &at->at_param) == -1 ||
	    sched_getaffinity(pid, sizeof(at->at_cpus), &at->at_cpus) == -1 ||
	    (at->at_ioprio = syscall(SYS_ioprio_get, AGENT_IOPRIO_WHO_PROCESS,
	    pid)) == -1)
		return (-1);
	return (0);
}

/*
 * 1 when pid has all of them as the agent had when it last forked a
 * spare (agent_spare_make()): as a fresh fork would have them, unless
 * something changed them in the agent itself since, and then in every
 * supervisor forked after it alike.  One read of pid's, not of ours too:
 * on this paravirtualised machine a system call costs about 2 us.
 */
static int
agent_spare_same(pid_t pid)
{
	struct agent_attrs at;
	int		 r;

	if (!agent_self_ok || agent_attrs_read(pid, &at) == -1)
		return (0);
	for (r = 0; r < RLIM_NLIMITS; r++)
		if (at.at_rl[r].rlim_cur != agent_self.at_rl[r].rlim_cur ||
		    at.at_rl[r].rlim_max != agent_self.at_rl[r].rlim_max)
			return (0);
	return (at.at_nice == agent_self.at_nice &&
	    at.at_policy == agent_self.at_policy &&
	    at.at_param.sched_priority == agent_self.at_param.sched_priority &&
	    CPU_EQUAL(&at.at_cpus, &agent_self.at_cpus) &&
	    at.at_ioprio == agent_self.at_ioprio);
}

/*
 * The candidate is not wanted (a job started, the agent stops, or it
 * could not be adopted): it goes as every supervisor done goes, killed,
 * and reaped from agent_done[].
 */
static void
agent_cand_drop(void)
{
	if (agent_cand.c_pid == 0)
		return;
	kill(agent_cand.c_pid, SIGKILL);
	close(agent_cand.c_ctl);
	agent_cand.c_pid = 0;
	agent_cand.c_ctl = -1;
}

static void
agent_job_events(struct agent_job *j)
{
	struct event_base *base = agent_env->a_base;
	int		 i;

	j->j_timer = evtimer_new(base, agent_job_timer, j);
	if (j->j_in != -1 && (j->j_inev = event_new(base, j->j_in,
	    EV_WRITE | EV_PERSIST, agent_job_write, j)) == NULL)
		fatalx("%s: event_new", __func__);
	j->j_ctlev = event_new(base, j->j_ctl, EV_READ, agent_job_ctl, j);
	if (j->j_timer == NULL || j->j_ctlev == NULL ||
	    event_add(j->j_ctlev, NULL) == -1)
		fatalx("%s: event_new", __func__);
	for (i = 0; i < 2; i++) {
		if (j->j_out[i].o_fd == -1)
			continue;
		j->j_out[i].o_ev = event_new(base, j->j_out[i].o_fd,
		    EV_READ | EV_PERSIST, agent_job_read, j);
		if (j->j_out[i].o_ev == NULL ||
		    event_add(j->j_out[i].o_ev, NULL) == -1)
			fatalx("%s: event_add", __func__);
	}
}

/*
 * Give the job its stdin bytes (ours from now on).  With none the
 * command sees end of file at once, unless j_stdin_open keeps it open
 * for agent_job_input().
 */
void
agent_job_stdin(struct agent_job *j, uint8_t *buf, size_t len)
{
	j->j_stdin = buf;
	j->j_stdin_len = len;
	if (len == 0 && j->j_stdin_open && j->j_in != -1) {
		free(buf);
		j->j_stdin = NULL;
		return;
	}
	if (len == 0 || event_add(j->j_inev, NULL) == -1)
		agent_job_close_in(j);
}

/*
 * More stdin for a job whose stdin stayed open (a background process,
 * IMSG_AGENT_PROC_INPUT): len bytes at p, then end of file if closing.
 * At most MSG_INPUT_MAX bytes wait here at once, never more: -1 with
 * EBUSY when they would (nothing taken), EPIPE when its stdin is closed
 * or closing.  Written as the pipe takes them, never blocking.
 */
int
agent_job_input(struct agent_job *j, const uint8_t *p, size_t len,
    int closing)
{
	size_t	 pending = j->j_stdin_len - j->j_stdin_off;
	uint8_t	*nb;

	if (j->j_in == -1 || !j->j_stdin_open || j->j_stdin_closing) {
		errno = EPIPE;
		return (-1);
	}
	if (len > 0 && pending + len > MSG_INPUT_MAX) {
		errno = EBUSY;
		return (-1);
	}
	if (len > 0) {
		if ((nb = malloc(pending + len)) == NULL)
			return (-1);
		if (pending > 0)
			memcpy(nb, j->j_stdin + j->j_stdin_off, pending);
		memcpy(nb + pending, p, len);
		free(j->j_stdin);
		j->j_stdin = nb;
		j->j_stdin_off = 0;
		j->j_stdin_len = pending + len;
	}
	j->j_stdin_closing = closing;
	if (j->j_stdin_len == j->j_stdin_off) {
		if (closing)
			agent_job_close_in(j);
		return (0);
	}
	if (event_add(j->j_inev, NULL) == -1)
		fatalx("%s: event_add", __func__);
	return (0);
}

/*
 * A command that does not read its stdin only ever fills the pipe; we
 * stop writing then and never block.  EPIPE means it closed its end.
 * A stdin kept open waits for more once written out.
 */
static void
agent_job_write(evutil_socket_t fd, short events, void *arg)
{
	struct agent_job *j = arg;
	ssize_t		 n;

	n = write(j->j_in, j->j_stdin + j->j_stdin_off,
	    j->j_stdin_len - j->j_stdin_off);
	if (n == -1) {
		if (errno == EAGAIN || errno == EINTR)
			return;
		agent_job_close_in(j);
		return;
	}
	j->j_stdin_off += (size_t)n;
	if (j->j_stdin_off < j->j_stdin_len)
		return;
	if (j->j_stdin_open && !j->j_stdin_closing) {
		event_del(j->j_inev);
		free(j->j_stdin);
		j->j_stdin = NULL;
		j->j_stdin_len = j->j_stdin_off = 0;
		return;
	}
	agent_job_close_in(j);
}

static void
agent_job_close_in(struct agent_job *j)
{
	if (j->j_inev != NULL) {
		event_free(j->j_inev);
		j->j_inev = NULL;
	}
	if (j->j_in != -1) {
		close(j->j_in);
		j->j_in = -1;
	}
	free(j->j_stdin);
	j->j_stdin = NULL;
	j->j_stdin_len = j->j_stdin_off = 0;
}

static void
agent_job_close_out(struct agent_out *o)
{
	if (o->o_ev != NULL) {
		event_free(o->o_ev);
		o->o_ev = NULL;
	}
	if (o->o_fd != -1) {
		close(o->o_fd);
		o->o_fd = -1;
	}
}

static void
agent_job_read(evutil_socket_t fd, short events, void *arg)
{
	struct agent_job *j = arg;
	struct agent_out *o = &j->j_out[fd == j->j_out[0].o_fd ? 0 : 1];

	agent_job_read_one(j, o);
}

/*
 * One read.  1 if there may be more, 0 at end of file or once over
 * budget (the pipes are closed then: a writer gets EPIPE, and is killed
 * anyway), -1 when nothing is there now.
 */
static int
agent_job_read_one(struct agent_job *j, struct agent_out *o)
{
	uint8_t		 buf[AGENT_READ_CHUNK];
	size_t		 room, want = sizeof(buf);
	ssize_t		 n;
	int		 which = o == &j->j_out[0] ? MSG_CHUNK_STDOUT :
			    MSG_CHUNK_STDERR;

	if (o->o_fd == -1)
		return (0);
	/* Streamed: no more than the credit; none, and the pipe fills. */
	if (j->j_stream) {
		if (j->j_credit == 0) {
			agent_job_pause(j);
			return (-1);
		}
		if (want > j->j_credit)
			want = j->j_credit;
	}
	if ((n = read(o->o_fd, buf, want)) == -1) {
		if (errno == EAGAIN || errno == EINTR)
			return (-1);
		log_warn("%s: request %u", __func__, j->j_id);
		n = 0;
	}
	if (n == 0) {
		agent_job_close_out(o);
		return (0);
	}
	room = j->j_max - j->j_total;
	if ((size_t)n <= room) {
		agent_job_keep(j, o, buf, (size_t)n);
		if (j->j_stream)
			agent_stream_chunk(j, which, buf, (size_t)n);
		return (1);
	}
	/* Exactly the budget is kept, split as it arrived. */
	agent_job_keep(j, o, buf, room);
	if (j->j_stream && room > 0)
		agent_stream_chunk(j, which, buf, room);
	j->j_truncated = 1;
	/* A background process goes on; what it writes now is dropped. */
	if (j->j_discard)
		return (1);
	agent_job_close_out(&j->j_out[0]);
	agent_job_close_out(&j->j_out[1]);
	agent_job_kill(j, KILL_BUDGET);
	return (0);
}

static void
agent_job_keep(struct agent_job *j, struct agent_out *o, const uint8_t *p,
    size_t n)
{
	uint8_t		*nb;
	size_t		 size;

	if (n == 0)
		return;
	if (o->o_len + n > o->o_size) {
		size = o->o_size ? o->o_size : 4096;
		while (size < o->o_len + n)
			size *= 2;
		if (size > j->j_max)
			size = j->j_max;
		if ((nb = realloc(o->o_buf, size)) == NULL)
			fatal("%s: realloc", __func__);
		o->o_buf = nb;
		o->o_size = size;
	}
	memcpy(o->o_buf + o->o_len, p, n);
	o->o_len += n;
	j->j_total += n;
	if (j->j_kept != NULL)
		j->j_kept(j, o == &j->j_out[0] ? MSG_CHUNK_STDOUT :
		    MSG_CHUNK_STDERR);
}

/* The deadline, or, once a kill was asked for, the end of the grace. */
static void
agent_job_timer(evutil_socket_t fd, short events, void *arg)
{
	struct agent_job *j = arg;

	/* Ended, waited for credit too long: the rest goes in RESULT. */
	if (j->j_ended) {
		log_debug("%s: request %u: no credit, stream off", __func__,
		    j->j_id);
		j->j_stream = 0;
		agent_job_drain(j);	/* frees j */
		return;
	}
	if (j->j_kill == KILL_NONE) {
		agent_job_kill(j, KILL_TIMEOUT);
		return;
	}
	if (j->j_super > 0) {
		log_warnx("%s: request %u: supervisor %d did not finish, "
		    "killing it", __func__, j->j_id, (int)j->j_super);
		kill(j->j_super, SIGKILL);
	}
}

/*
 * Ask the supervisor to kill every process of the job: end of file on
 * its control socket.  The first reason stays.
 */
void
agent_job_kill(struct agent_job *j, int why)
{
	struct timeval	 tv;

	if (j->j_kill != KILL_NONE)
		return;
	j->j_kill = why;
	log_debug("%s: request %u: kill (%d)", __func__, j->j_id, why);
	if (j->j_ctl != -1 && shutdown(j->j_ctl, SHUT_WR) == -1 &&
	    j->j_super > 0)
		kill(j->j_super, SIGKILL);
	agent_ms_tv(AGENT_GRACE_MS, &tv);
	evtimer_add(j->j_timer, &tv);
}

void
agent_job_free(struct agent_job *j)
{
	int	 i;

	if (j == NULL)
		return;
	TAILQ_REMOVE(&agent_env->a_jobs, j, j_entry);
	/* Idle again: the next request's supervisor, made ahead. */
	if (--agent_env->a_njobs == 0)
		agent_spare_schedule();
	agent_job_close_in(j);
	for (i = 0; i < 2; i++) {
		agent_job_close_out(&j->j_out[i]);
		free(j->j_out[i].o_buf);
	}
	if (j->j_timer != NULL)
		event_free(j->j_timer);
	if (j->j_ctlev != NULL)
		event_free(j->j_ctlev);
	if (j->j_ctl != -1)
		close(j->j_ctl);
	free(j);
}

/*
 * Every child that exited (__WALL: of any kind, as an adopted orphan
 * may be).  Supervisors end their job; anything else was an orphan of
 * a supervisor that did not finish its work, and its kin may still be
 * around: sweep.
 */
void
agent_reap(void)
{
	struct agent_job *j;
	pid_t		 pid;
	int		 status;

	while ((pid = waitpid(-1, &status, WNOHANG | __WALL)) > 0) {
		/* An adopted orphan that made us its tracer: no exit. */
		if (agent_untrace(pid, status))
			continue;
		if (agent_done_reaped(pid)) {
			/* Died before it was made the spare. */
			if (pid == agent_cand.c_pid) {
				close(agent_cand.c_ctl);
				agent_cand.c_pid = 0;
				agent_cand.c_ctl = -1;
			}
			continue;
		}
		if (pid == agent_spare_dropped) {
			agent_spare_dropped = 0;
			continue;
		}
		if (pid == agent_spare.s_pid) {
			/* Killed unused: the next job forks its own. */
			log_debug("%s: spare %d ended", __func__, (int)pid);
			agent_spare_forget();
			continue;
		}
		TAILQ_FOREACH(j, &agent_env->a_jobs, j_entry)
			if (j->j_super == pid)
				break;
		if (j == NULL) {
			log_debug("%s: reaped stray %d", __func__, (int)pid);
			agent_sweep_schedule();
			continue;
		}
		agent_job_reaped(j, status);
	}
	if (pid == -1 && errno != ECHILD)
		log_warn("%s: waitpid", __func__);
}

/*
 * The supervisor's report: it is written once every process of the job
 * is dead and reaped and the supervisor's own ends of the pipes are
 * long closed, so no writer of them is left and the job can end now,
 * without waiting for the supervisor's exit (the teardown of its
 * address space and SIGCHLD: 60 to 250 us of every answer).  Its exit
 * is reaped later as that of a supervisor done (agent_done).  Anything
 * but a whole report (end of file: it died; a part: never written so)
 * leaves the job to its reaping, as before.
 */
static void
agent_job_ctl(evutil_socket_t fd, short events, void *arg)
{
	struct agent_job *j = arg;
	ssize_t		 n;

	/*
	 * No room to remember it: its reaping ends the job, as before (end
	 * of file tells it to exit once it reported).
	 */
	if (j->j_super <= 0)
		return;
	if (agent_ndone == nitems(agent_done)) {
		shutdown(j->j_ctl, SHUT_WR);
		return;
	}
	n = read(j->j_ctl, &j->j_report, sizeof(j->j_report));
	if (n == -1 && (errno == EAGAIN || errno == EINTR)) {
		event_add(j->j_ctlev, NULL);
		return;
	}
	if (n != (ssize_t)sizeof(j->j_report))
		return;
	/*
	 * The only job, ended on its own, with everything of it dead: its
	 * supervisor may be the next spare (agent_spare_make()), unless a
	 * job starts first.  Else all it has left to do is exit: make it
	 * so, even if something stopped it in between (then it would
	 * never exit on its own).
	 */
	if (j->j_reusable && j->j_kill == KILL_NONE &&
	    j->j_report.rp_stage != STAGE_SETUP && agent_env->a_njobs == 1 &&
	    agent_spare.s_pid == 0 && agent_cand.c_pid == 0 &&
	    !agent_spare_off && !agent_env->a_orphans_ours) {
		agent_cand.c_pid = j->j_super;
		agent_cand.c_ctl = j->j_ctl;
		j->j_ctl = -1;
	} else
		kill(j->j_super, SIGKILL);
	agent_done[agent_ndone++] = j->j_super;
	j->j_have_report = 1;
	agent_job_finish(j, 0);
}

static void
agent_job_reaped(struct agent_job *j, int status)
{
	ssize_t		 n;

	n = read(j->j_ctl, &j->j_report, sizeof(j->j_report));
	j->j_have_report = n == (ssize_t)sizeof(j->j_report);
	if (!j->j_have_report || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0) {
		log_warnx("%s: request %u: supervisor ended badly (status "
		    "0x%x)", __func__, j->j_id, status);
		j->j_have_report = 0;
		agent_sweep_schedule();
	}
	agent_job_finish(j, status);
}

/* The job is over: what the pipes hold, then its callback. */
static void
agent_job_finish(struct agent_job *j, int status)
{
	struct timespec	 now;

	j->j_super = 0;
	j->j_status = status;
	evtimer_del(j->j_timer);
	event_del(j->j_ctlev);
	clock_gettime(CLOCK_MONOTONIC, &now);
	j->j_duration_ms = (uint32_t)((now.tv_sec - j->j_start.tv_sec) *
	    1000 + (now.tv_nsec - j->j_start.tv_nsec) / 1000000);
	j->j_ended = 1;
	agent_job_drain(j);
}

/*
 * No writer is left: what the pipes hold is all there is.  A streamed
 * job without credit waits for it (agent_job_resume()) before its end,
 * so that its CHUNKs hold all its output, as its RESULT does; but not
 * for ever: AGENT_DRAIN_MS without any, and the stream is off (a
 * reader that stopped still gets everything in the RESULT).
 */
static void
agent_job_drain(struct agent_job *j)
{
	struct timeval	 tv;
	int		 i;

	for (i = 0; i < 2; i++)
		while (agent_job_read_one(j, &j->j_out[i]) == 1)
			;
	/* AGENT_DRAIN_MS without credit, and the rest goes in RESULT. */
	if (j->j_stream && j->j_credit == 0 &&
	    (j->j_out[0].o_fd != -1 || j->j_out[1].o_fd != -1)) {
		agent_ms_tv(AGENT_DRAIN_MS, &tv);
		evtimer_add(j->j_timer, &tv);
		return;
	}
	evtimer_del(j->j_timer);
	agent_job_close_in(j);
	/* Without a subreaper the command's orphans are ours: kill them. */
	if (agent_env->a_orphans_ours)
		agent_sweep_schedule();
	j->j_done(j);
}

/* A streamed job out of credit: its pipes are not read for now. */
static void
agent_job_pause(struct agent_job *j)
{
	int	 i;

	for (i = 0; i < 2; i++)
		if (j->j_out[i].o_ev != NULL)
			event_del(j->j_out[i].o_ev);
}

/* Credit came (or the stream is off): read again, or end the drain. */
void
agent_job_resume(struct agent_job *j)
{
	int	 i;

	if (j->j_ended) {
		agent_job_drain(j);	/* may free j */
		return;
	}
	for (i = 0; i < 2; i++)
		if (j->j_out[i].o_ev != NULL &&
		    event_add(j->j_out[i].o_ev, NULL) == -1)
			fatalx("%s: event_add", __func__);
}

/*
 * Nobody reads the stream any more: kill the command, and read the
 * rest as for any job (within its budget), without CHUNKs.
 */
void
agent_job_cancel(struct agent_job *j)
{
	j->j_stream = 0;
	if (!j->j_ended)
		agent_job_kill(j, KILL_CANCEL);
	agent_job_resume(j);	/* may free j */
}

/* Stop every job; their supervisors kill what they started. */
void
agent_shutdown_jobs(void)
{
	struct agent_job *j;

	TAILQ_FOREACH(j, &agent_env->a_jobs, j_entry)
		if (j->j_ctl != -1)
			shutdown(j->j_ctl, SHUT_WR);
	agent_spare_off = 1;
	agent_spare_drop();
	agent_cand_drop();
}

void
agent_sweep_schedule(void)
{
	struct timeval	 tv;

	if (agent_sweep_ev == NULL && (agent_sweep_ev = evtimer_new(
	    agent_env->a_base, agent_sweep, NULL)) == NULL)
		fatalx("%s: evtimer_new", __func__);
	if (evtimer_pending(agent_sweep_ev, NULL))
		return;
	agent_ms_tv(AGENT_SWEEP_MS, &tv);
	evtimer_add(agent_sweep_ev, &tv);
}

/*
 * Kill every process below us that no live supervisor answers for:
 * the leftovers of one that was killed (by its own command, say).  Once
 * they die their children come to us in turn, so go on until a sweep
 * finds nothing.
 */
static void
agent_sweep(evutil_socket_t fd, short events, void *arg)
{
	struct agent_job *j;
	pid_t		 live[2 * AGENT_JOBS_MAX + 2];
	size_t		 n = 0, i, killed;

	TAILQ_FOREACH(j, &agent_env->a_jobs, j_entry)
		if (j->j_super > 0 && n < AGENT_JOBS_MAX)
			live[n++] = j->j_super;
	for (i = 0; i < agent_ndone; i++)
		live[n++] = agent_done[i];
	if (agent_spare.s_pid != 0)
		live[n++] = agent_spare.s_pid;
	if (agent_spare_dropped != 0)
		live[n++] = agent_spare_dropped;
	killed = agent_proc_kill(agent_env->a_pid, live, n);
	if (killed > 0) {
		log_warnx("%s: killed %zu stray processes", __func__, killed);
		agent_sweep_schedule();
	}
}

/* pid was a supervisor whose job ended on its report: forget it. */
static int
agent_done_reaped(pid_t pid)
{
	size_t	 i;

	for (i = 0; i < agent_ndone; i++)
		if (agent_done[i] == pid) {
			agent_done[i] = agent_done[--agent_ndone];
			return (1);
		}
	return (0);
}
