/*
 * t_userns [off]: the check of user namespaces that runsc's start and
 * the host doctor share (fencer_userns_check(), fencer/fencer_doctor.c),
 * run in a user namespace of this process's own.  With "off", first
 * that namespace's user.max_user_namespaces is set to 0: a limit of
 * that namespace and those below it, never the host's (the ucounts are
 * per user namespace), so no other test running beside sees it.
 * Prints "ok" or "refused: WHY"; exits 2 when the stage cannot be set.
 */
#include <sys/types.h>

#include <err.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fenced.h"
#include "backend.h"

static void
put(const char *path, const char *text)
{
	int	 fd;

	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) == -1)
		err(2, "open %s", path);
	if (write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		err(2, "write %s", path);
	(void)close(fd);
}

int
main(int argc, char *argv[])
{
	char	 why[256], map[64];
	uid_t	 uid = geteuid();
	gid_t	 gid = getegid();

	if (unshare(CLONE_NEWUSER) == -1)
		err(2, "unshare CLONE_NEWUSER");
	put("/proc/self/setgroups", "deny");
	snprintf(map, sizeof(map), "0 %u 1\n", (unsigned)uid);
	put("/proc/self/uid_map", map);
	snprintf(map, sizeof(map), "0 %u 1\n", (unsigned)gid);
	put("/proc/self/gid_map", map);
	if (argc > 1 && strcmp(argv[1], "off") == 0)
		put("/proc/sys/user/max_user_namespaces", "0\n");
	if (fencer_userns_check(why, sizeof(why)) == -1)
		printf("refused: %s\n", why);
	else
		printf("ok\n");
	return (0);
}
