/*
 * t_probe_init: pid 1 of a fence booted by regress/t_fence for
 * regress/probe_test.sh.  It runs fence-probe from the fence's bin
 * directory as a command would run, its report going to a file (in the
 * fence's home, which the host sees), reaps whatever else exits, and
 * exits with the probe's status: by _exit(), since a sanitizer's leak
 * check at exit needs ptrace, which the fence's filter refuses.
 *
 *	t_probe_init outfile [probe-arg ...]
 */
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define TI_PROBE	"/run/fenced/bin/fence-probe"
#define TI_ARGS_MAX	64

int
main(int argc, char *argv[])
{
	char	*av[TI_ARGS_MAX];
	pid_t	 pid, r;
	int	 i, fd, st;

	if (argc < 2 || argc > TI_ARGS_MAX - 1) {
		fprintf(stderr, "usage: t_probe_init outfile [arg ...]\n");
		return (64);
	}
	av[0] = "fence-probe";
	for (i = 2; i < argc; i++)
		av[i - 1] = argv[i];
	av[argc - 1] = NULL;
	if ((pid = fork()) == -1) {
		perror("t_probe_init: fork");
		return (1);
	}
	if (pid == 0) {
		if ((fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC |
		    O_CLOEXEC, 0600)) == -1 || dup2(fd, STDOUT_FILENO) == -1) {
			perror(argv[1]);
			_exit(126);
		}
		execv(TI_PROBE, av);
		perror(TI_PROBE);
		_exit(127);
	}
	for (;;) {
		r = waitpid(-1, &st, 0);
		if (r == -1 && errno == EINTR)
			continue;
		if (r == -1)
			_exit(1);
		if (r == pid)
			break;
	}
	if (WIFEXITED(st))
		printf("probe: exit %d\n", WEXITSTATUS(st));
	else
		printf("probe: signal %d\n", WTERMSIG(st));
	fflush(stdout);
	_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 1);
}
