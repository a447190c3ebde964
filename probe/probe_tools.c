/*
 * The section "tools": which programs of a documented list are on PATH.
 * A pool of at most PROBE_TOOL_THREADS threads does the lookups, so no
 * more than that many are in flight at once however long the list grows
 * (a lookup on a slow or stuck mount then holds up one worker, not the
 * list); if threads cannot be made the lookups run one at a time.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "probe.h"

#define PROBE_PATH_DIRS	32

static const char *const probe_tool_names[] = {
	"node", "git", "python3", "sh", "bash", "curl", "gcc", "make", "perl"
};
#define PROBE_NTOOLS	(sizeof(probe_tool_names) / sizeof(probe_tool_names[0]))

struct probe_tool_job {
	char		*tj_dirs[PROBE_PATH_DIRS];
	int		 tj_ndirs;
	unsigned int	 tj_next;			/* atomically taken */
	char		 tj_found[PROBE_NTOOLS][PATH_MAX];
};

static void
probe_tool_find(struct probe_tool_job *j, size_t t)
{
	struct stat	 st;
	char		 path[PATH_MAX];
	int		 i;

	for (i = 0; i < j->tj_ndirs; i++) {
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", j->tj_dirs[i],
		    probe_tool_names[t]) >= sizeof(path))
			continue;
		if (access(path, X_OK) == 0 && stat(path, &st) == 0 &&
		    S_ISREG(st.st_mode)) {
			memcpy(j->tj_found[t], path, sizeof(path));
			return;
		}
	}
}

static void *
probe_tool_worker(void *arg)
{
	struct probe_tool_job	*j = arg;
	unsigned int		 t;

	while ((t = __atomic_fetch_add(&j->tj_next, 1, __ATOMIC_RELAXED)) <
	    PROBE_NTOOLS)
		probe_tool_find(j, t);
	return (NULL);
}

/* PATH split into absolute directories (relative ones are skipped). */
static char *
probe_tool_path(struct probe_tool_job *j)
{
	const char	*env = getenv("PATH");
	char		*copy, *p, *dir;

	if (env == NULL || (copy = strdup(env)) == NULL)
		return (NULL);
	for (p = copy; (dir = strsep(&p, ":")) != NULL &&
	    j->tj_ndirs < PROBE_PATH_DIRS;)
		if (dir[0] == '/')
			j->tj_dirs[j->tj_ndirs++] = dir;
	return (copy);
}

void
probe_tools(struct jw *w, const struct probe_opts *o)
{
	static struct probe_tool_job	 job;
	pthread_t			 th[PROBE_TOOL_THREADS];
	char				*copy;
	int				 nth, i;

	memset(&job, 0, sizeof(job));
	copy = probe_tool_path(&job);
	for (nth = 0; nth < PROBE_TOOL_THREADS && (size_t)nth < PROBE_NTOOLS;
	    nth++)
		if (pthread_create(&th[nth], NULL, probe_tool_worker, &job)
		    != 0)
			break;
	/* No thread at all: this one does the lookups, one at a time. */
	if (nth == 0)
		probe_tool_worker(&job);
	for (i = 0; i < nth; i++)
		(void)pthread_join(th[i], NULL);
	free(copy);

	jw_str(w, "path", getenv("PATH"));
	jw_int(w, "concurrency", nth > 0 ? nth : 1);
	jw_obj_open(w, "found");
	for (i = 0; (size_t)i < PROBE_NTOOLS; i++)
		jw_str(w, probe_tool_names[i], job.tj_found[i][0] != '\0' ?
		    job.tj_found[i] : NULL);
	jw_obj_close(w);
}
