/*
 * A fence paused while the daemon reads or writes its home (snapshots,
 * restore, undo: fencer/fencer_snap.c), so that what is read is one
 * moment of it:
 *	- a v2 cgroup: its freezer, cgroup.freeze, until cgroup.events
 *	  says frozen (a second at most);
 *	- v1, whose fence cgroups have no freezer: SIGSTOP to each process
 *	  of the cgroup, read again until a pass finds none left running;
 *	  a process that was stopped already (by its own job control) is
 *	  left out, so that the resume does not continue it.
 */
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "cg.h"

#define CG_PAUSE_TRIES		200	/* passes or waits, of 1 to 5 ms */
#define CG_PAUSE_PIDS_MAX	(1U << 22)

static int
cg_pause_file(char *buf, size_t len, const char *dir, const char *file)
{
	int	 n;

	n = snprintf(buf, len, "%s/%s", dir, file);
	return (n < 0 || (size_t)n >= len ? -1 : 0);
}

/* The pids of dir's cgroup.procs; -1 if it cannot be read. */
static int
cg_pause_procs(const char *dir, pid_t **pids, size_t *n)
{
	char		 path[PATH_MAX];
	FILE		*fp;
	long long	 v;
	pid_t		*np;
	size_t		 cap = 0;

	*pids = NULL;
	*n = 0;
	if (cg_pause_file(path, sizeof(path), dir, "cgroup.procs") == -1 ||
	    (fp = fopen(path, "re")) == NULL)
		return (-1);
	while (fscanf(fp, "%lld", &v) == 1) {
		if (v <= 0 || v > INT32_MAX)
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 64;
			if (cap > CG_PAUSE_PIDS_MAX ||
			    (np = reallocarray(*pids, cap, sizeof(*np))) ==
			    NULL) {
				(void)fclose(fp);
				free(*pids);
				*pids = NULL;
				*n = 0;
				return (-1);
			}
			*pids = np;
		}
		(*pids)[(*n)++] = (pid_t)v;
	}
	(void)fclose(fp);
	return (0);
}

/* 1: stopped ('T' or 't' in /proc/<pid>/stat), 0: not, -1: gone. */
static int
cg_pause_stopped(pid_t pid)
{
	char		 path[64], buf[512], *p;
	ssize_t		 r;
	int		 fd;

	(void)snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return (-1);
	r = read(fd, buf, sizeof(buf) - 1);
	(void)close(fd);
	if (r <= 0)
		return (-1);
	buf[r] = '\0';
	if ((p = strrchr(buf, ')')) == NULL || p[1] != ' ')
		return (-1);
	return (p[2] == 'T' || p[2] == 't');
}

static int
cg_pause_v2(struct cg_pause *p)
{
	char		 path[PATH_MAX], buf[256];
	ssize_t		 r;
	int		 fd, i;

	if (cg_pause_file(path, sizeof(path), p->cp_dir, "cgroup.freeze") ==
	    -1 || (fd = open(path, O_WRONLY | O_CLOEXEC)) == -1)
		return (0);
	r = write(fd, "1", 1);
	(void)close(fd);
	if (r != 1)
		return (0);
	p->cp_v2 = 1;
	if (cg_pause_file(path, sizeof(path), p->cp_dir, "cgroup.events") ==
	    -1)
		return (1);
	for (i = 0; i < CG_PAUSE_TRIES; i++) {
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
			break;
		r = read(fd, buf, sizeof(buf) - 1);
		(void)close(fd);
		if (r <= 0)
			break;
		buf[r] = '\0';
		if (strstr(buf, "frozen 1") != NULL)
			break;
		(void)usleep(5000);
	}
	return (1);
}

/* p's one more stopped pid; -1 out of memory. */
static int
cg_pause_keep(struct cg_pause *p, pid_t pid)
{
	pid_t	*np;
	size_t	 cap;

	if (p->cp_n == p->cp_cap) {
		cap = p->cp_cap ? p->cp_cap * 2 : 64;
		if (cap > CG_PAUSE_PIDS_MAX ||
		    (np = reallocarray(p->cp_pids, cap, sizeof(*np))) == NULL)
			return (-1);
		p->cp_pids = np;
		p->cp_cap = cap;
	}
	p->cp_pids[p->cp_n++] = pid;
	return (0);
}

/*
 * Pause every process of the cgroup dir (a fence's, of the pids
 * controller on v1).  1 if paused, 0 if it could not be (no cgroup to
 * read): the caller says so.  cg_resume() undoes it either way.
 */
int
cg_pause(const char *dir, struct cg_pause *p)
{
	pid_t		*pids;
	size_t		 n, i, j;
	int		 round, more;

	memset(p, 0, sizeof(*p));
	if (strlcpy(p->cp_dir, dir, sizeof(p->cp_dir)) >= sizeof(p->cp_dir))
		return (0);
	if (cg_is_v2(dir) == 1)
		return (cg_pause_v2(p));
	for (round = 0; round < CG_PAUSE_TRIES; round++) {
		if (cg_pause_procs(dir, &pids, &n) == -1)
			return (p->cp_n > 0);
		more = 0;
		for (i = 0; i < n; i++) {
			for (j = 0; j < p->cp_n; j++)
				if (p->cp_pids[j] == pids[i])
					break;
			if (j < p->cp_n || cg_pause_stopped(pids[i]) != 0)
				continue;	/* ours, gone, or its own */
			if (kill(pids[i], SIGSTOP) == 0) {
				if (cg_pause_keep(p, pids[i]) == -1) {
					(void)kill(pids[i], SIGCONT);
					break;
				}
				more = 1;
			}
		}
		free(pids);
		if (!more)
			return (1);
		(void)usleep(1000);
	}
	return (1);
}

void
cg_resume(struct cg_pause *p)
{
	char		 path[PATH_MAX];
	size_t		 i;
	int		 fd;

	if (p->cp_v2 && cg_pause_file(path, sizeof(path), p->cp_dir,
	    "cgroup.freeze") == 0 && (fd = open(path, O_WRONLY |
	    O_CLOEXEC)) != -1) {
		if (write(fd, "0", 1) != 1)
			log_warn("%s: thaw %s", __func__, p->cp_dir);
		(void)close(fd);
	}
	for (i = 0; i < p->cp_n; i++)
		(void)kill(p->cp_pids[i], SIGCONT);
	free(p->cp_pids);
	memset(p, 0, sizeof(*p));
}
