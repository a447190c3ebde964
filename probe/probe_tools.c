/*
 * The section "tools": which programs of a documented list are on PATH,
 * looked up one after another (concurrency 1).  A pool of threads did
 * them at once, but the section waited for every thread, so a lookup
 * stuck on a mount held it up all the same (the alarm is the bound
 * either way), and making the threads cost more than the lookups
 * themselves: 9 tools in a few directories are some fifty access() and
 * stat() calls, 0.1 ms, where 8 threads took 3 ms and more on a loaded
 * machine, each a wakeup to wait for.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <limits.h>
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
	char				*copy;
	size_t				 i;

	memset(&job, 0, sizeof(job));
	copy = probe_tool_path(&job);
	for (i = 0; i < PROBE_NTOOLS; i++)
		probe_tool_find(&job, i);
	free(copy);

	jw_str(w, "path", getenv("PATH"));
	jw_int(w, "concurrency", 1);
	jw_obj_open(w, "found");
	for (i = 0; i < PROBE_NTOOLS; i++)
		jw_str(w, probe_tool_names[i], job.tj_found[i][0] != '\0' ?
		    job.tj_found[i] : NULL);
	jw_obj_close(w);
}
