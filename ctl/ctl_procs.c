/*
 * fencectl spawn, show processes, show process, kill: the background
 * processes of a fence (fencectl(8); docs/http.md has the same over
 * HTTP).  One request each; the answers are IMSG_CTL_PROC, one per
 * process, and END.
 */
#include <sys/types.h>

#include <err.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fenced.h"
#include "imsg.h"
#include "msg.h"
#include "parser.h"
#include "ctl_procs.h"

static const struct {
	const char	*cs_name;
	int		 cs_signal;
} ctl_signals[] = {
	{ "TERM",	SIGTERM },
	{ "KILL",	SIGKILL },
	{ "INT",	SIGINT },
	{ "HUP",	SIGHUP },
};

static const char *ctl_kill_sig = "TERM";	/* what kill sends */

static const char *ctl_signame(int, char *, size_t);
static void	ctl_proc_what(const struct msg_proc *);

static const char *
ctl_signame(int sig, char *buf, size_t len)
{
	size_t	 i;

	for (i = 0; i < nitems(ctl_signals); i++)
		if (ctl_signals[i].cs_signal == sig)
			return (ctl_signals[i].cs_name);
	snprintf(buf, len, "SIG%d", sig);
	return (buf);
}

int
ctl_procs_request(const struct parse_result *res, uint32_t *type,
    void **buf, size_t *len)
{
	struct msg_exec	 x;
	struct msg_proc_req q;
	size_t		 i;

	if (res->action == CTL_SPAWN) {
		memset(&x, 0, sizeof(x));
		x.x_owner = res->owner;
		strlcpy(x.x_key, res->key, sizeof(x.x_key));
		x.x_timeout_ms = res->timeout_ms;
		x.x_max_bytes = res->output;
		if (res->cwd != NULL)
			strlcpy(x.x_cwd, res->cwd, sizeof(x.x_cwd));
		x.x_argv = res->argv;
		x.x_argc = res->argc;
		x.x_stdin_open = res->stdin_open;
		*type = IMSG_CTL_SPAWN;
		return (msg_exec_encode(&x, buf, len));
	}
	memset(&q, 0, sizeof(q));
	q.q_owner = res->owner;
	strlcpy(q.q_key, res->key, sizeof(q.q_key));
	q.q_id = res->proc;
	switch (res->action) {
	case CTL_SHOW_PROCS:
		q.q_op = MSG_PROC_LIST;
		break;
	case CTL_SHOW_PROC:
		q.q_op = MSG_PROC_READ;
		break;
	default:
		q.q_op = MSG_PROC_SIGNAL;
		q.q_signal = SIGTERM;
		if (res->signal == NULL)
			break;
		for (i = 0; i < nitems(ctl_signals); i++)
			if (strcmp(res->signal, ctl_signals[i].cs_name) == 0)
				break;
		if (i == nitems(ctl_signals))
			errx(1, "kill: signal %s: not one of TERM, KILL, INT, "
			    "HUP", res->signal);
		q.q_signal = ctl_signals[i].cs_signal;
		ctl_kill_sig = ctl_signals[i].cs_name;
		break;
	}
	*type = IMSG_CTL_PROCS;
	return (msg_proc_req_encode(&q, buf, len));
}

/* What it runs, one line: argv words, or the command, made safe. */
static void
ctl_proc_what(const struct msg_proc *p)
{
	size_t		 i;

	if (p->p_argv == NULL) {
		ctl_safe(stdout, p->p_command);
		putchar('\n');
		return;
	}
	for (i = 0; i < p->p_argc; i++) {
		if (i > 0)
			putchar(' ');
		ctl_safe(stdout, p->p_argv[i]);
	}
	putchar('\n');
}

/* One process, as the command that asked shows it; *n counts them. */
void
ctl_proc(enum ctl_action action, struct imsg *imsg, int *n)
{
	struct msg_proc	 p;
	char		 exit[16], sb[16];

	if (msg_proc_decode(imsg->data, imsg->len, &p) == -1)
		errx(1, "bad process reply");
	if (p.p_running)
		strlcpy(exit, "-", sizeof(exit));
	else if (p.p_signal != 0)
		strlcpy(exit, ctl_signame(p.p_signal, sb, sizeof(sb)),
		    sizeof(exit));
	else
		snprintf(exit, sizeof(exit), "%d", p.p_exit);
	switch (action) {
	case CTL_SPAWN:
		printf("%u\n", p.p_id);
		break;
	case CTL_SHOW_PROCS:
		if ((*n)++ == 0)
			printf("%-10s %-8s %-5s %10s  %s\n", "ID", "STATE",
			    "EXIT", "MS", "COMMAND");
		printf("%-10u %-8s %-5s %10u  ", p.p_id, p.p_running ?
		    "running" : "exited", exit, p.p_duration_ms);
		ctl_proc_what(&p);
		break;
	case CTL_SHOW_PROC:
		fflush(stdout);
		ctl_write_all(STDOUT_FILENO, p.p_stdout, p.p_stdout_len);
		ctl_write_all(STDERR_FILENO, p.p_stderr, p.p_stderr_len);
		fprintf(stderr, "fencectl: process %u: %s, exit %s, %u ms%s%s",
		    p.p_id, p.p_running ? "running" : "exited", exit,
		    p.p_duration_ms, p.p_truncated ? ", truncated" : "",
		    p.p_error[0] ? ", " : "");
		ctl_safe(stderr, p.p_error);
		fputc('\n', stderr);
		ctl_denials(p.p_denials, p.p_denials_dropped, 0);
		break;
	default:
		if (p.p_forgotten)
			printf("%u exited: forgotten\n", p.p_id);
		else
			printf("%u %s: %s sent\n", p.p_id, p.p_running ?
			    "running" : "exited", ctl_kill_sig);
		break;
	}
	msg_proc_free(&p);
}
