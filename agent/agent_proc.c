/*
 * Finding and killing descendants through /proc; letting go of a child
 * that made us its tracer.
 *
 * Inside a fence /proc is the fence's own pid namespace, so a scan sees
 * only the fence.  A process's parent is the fourth field of
 * /proc/PID/stat, after the command name in parentheses (which may hold
 * anything, parentheses and spaces included: the last ')' ends it).
 */
#include <sys/types.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fenced.h"
#include "msg.h"
#include "agent.h"

struct agent_procent {
	pid_t	 pe_pid;
	pid_t	 pe_ppid;
	int	 pe_mark;	/* 1: below root, 2: root or spared */
};

static int	agent_proc_ppid(const char *, pid_t *);
static int	agent_proc_list(struct agent_procent **, size_t *);
static int	agent_proc_spared(pid_t, const pid_t *, size_t);

/* The parent of /proc/<name>, or -1 if it is gone or unreadable. */
static int
agent_proc_ppid(const char *name, pid_t *ppid)
{
	char		 path[64], buf[1024], *p;
	ssize_t		 n;
	long		 v;
	int		 fd;

	if ((size_t)snprintf(path, sizeof(path), "/proc/%s/stat", name) >=
	    sizeof(path))
		return (-1);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return (-1);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return (-1);
	buf[n] = '\0';
	if ((p = strrchr(buf, ')')) == NULL)
		return (-1);
	/* ") S PPID ..." */
	if (sscanf(p, ") %*c %ld", &v) != 1 || v < 0 || v > INT32_MAX)
		return (-1);
	*ppid = (pid_t)v;
	return (0);
}

static int
agent_proc_list(struct agent_procent **list, size_t *count)
{
	struct agent_procent *l = NULL, *nl;
	struct dirent	*de;
	DIR		*d;
	size_t		 n = 0, size = 0;
	pid_t		 ppid;
	long		 v;
	char		*end;

	if ((d = opendir("/proc")) == NULL)
		return (-1);
	while ((de = readdir(d)) != NULL) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		v = strtol(de->d_name, &end, 10);
		if (*end != '\0' || v <= 0 || v > INT32_MAX)
			continue;
		if (agent_proc_ppid(de->d_name, &ppid) == -1)
			continue;
		if (n == size) {
			size = size ? size * 2 : 256;
			if ((nl = reallocarray(l, size, sizeof(*l))) == NULL) {
				free(l);
				closedir(d);
				return (-1);
			}
			l = nl;
		}
		l[n].pe_pid = (pid_t)v;
		l[n].pe_ppid = ppid;
		l[n].pe_mark = 0;
		n++;
	}
	closedir(d);
	*list = l;
	*count = n;
	return (0);
}

static int
agent_proc_spared(pid_t pid, const pid_t *skip, size_t nskip)
{
	size_t	 i;

	for (i = 0; i < nskip; i++)
		if (skip[i] == pid)
			return (1);
	return (0);
}

/*
 * SIGKILL every descendant of root, but not root itself nor anything at
 * or below a pid in skip.  Returns how many were signalled.
 */
size_t
agent_proc_kill(pid_t root, const pid_t *skip, size_t nskip)
{
	return (agent_proc_signal(root, skip, nskip, SIGKILL));
}

/* The same with any signal: a background process's DELETE. */
size_t
agent_proc_signal(pid_t root, const pid_t *skip, size_t nskip, int sig)
{
	struct agent_procent *l;
	size_t		 n, i, j, killed = 0;
	int		 changed;

	if (agent_proc_list(&l, &n) == -1)
		return (0);
	for (i = 0; i < n; i++)
		if (l[i].pe_pid == root ||
		    agent_proc_spared(l[i].pe_pid, skip, nskip))
			l[i].pe_mark = 2;
	/* Mark children of root and of marked ones, until nothing moves. */
	do {
		changed = 0;
		for (i = 0; i < n; i++) {
			if (l[i].pe_mark != 0)
				continue;
			if (l[i].pe_ppid == root)
				l[i].pe_mark = 1;
			for (j = 0; j < n && l[i].pe_mark == 0; j++)
				if (l[j].pe_mark == 1 &&
				    l[j].pe_pid == l[i].pe_ppid)
					l[i].pe_mark = 1;
			changed |= l[i].pe_mark == 1;
		}
	} while (changed);
	for (i = 0; i < n; i++)
		if (l[i].pe_mark == 1 && kill(l[i].pe_pid, sig) == 0)
			killed++;
	free(l);
	return (killed);
}

/*
 * A child reported stopped to a wait without WUNTRACED is in a
 * ptrace-stop, and we are its tracer: PTRACE_TRACEME makes the caller's
 * parent its tracer, and a command's parent is its supervisor (an
 * orphan's, the supervisor or the agent that adopted it).  Where the
 * fence allows ptrace (docs/escape.md) a program may do that: a
 * debugger's inferior, a runtime that checks whether it is traced.
 * Such a process then stops at every signal it is sent, until its
 * tracer lets it run.  We are no debugger: we detach, handing back the
 * signal it stopped for (for a group-stop the kernel ignores it and the
 * process stays stopped, untraced, until a SIGCONT), so it runs on as
 * if it had never asked.  A process killed meanwhile (ESRCH) is
 * reported again as it exits.  1 if status was such a stop, so the
 * caller takes it for no exit.
 */
int
agent_untrace(pid_t pid, int status)
{
	if (!WIFSTOPPED(status))
		return (0);
	(void)ptrace(PTRACE_DETACH, pid, NULL,
	    (void *)(long)WSTOPSIG(status));
	return (1);
}
