/*
 * What a fence's folder of the state directory, <state>/envs/<owner>/
 * <key>, may hold: the fencer writes it while the fence runs and
 * removes it when the fence ends; the parent removes what a killed
 * fencer left (parent/daemon.c).  One list, for both.
 */
#include <sys/types.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <unistd.h>

#include "fenced.h"

/* Nothing else is ever put in a fence's folder. */
static const char *const state_env_files[] = { "probe.json", ".probe.json" };

/*
 * The files a fence's folder dir may hold, then the folder if it is
 * empty.  -1 with errno when it stays (but not when it is gone).
 */
int
state_env_remove(const char *dir)
{
	char	 path[PATH_MAX];
	size_t	 i;

	for (i = 0; i < nitems(state_env_files); i++)
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir,
		    state_env_files[i]) < sizeof(path))
			(void)unlink(path);
	if (rmdir(dir) == -1 && errno != ENOENT)
		return (-1);
	return (0);
}
