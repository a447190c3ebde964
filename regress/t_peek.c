/*
 * t_peek: run inside a fence as a command, try to get at pid 1 (the
 * agent, which holds the bearer): ptrace it, read its memory, its
 * environment and its command line.  Prints one line per attempt,
 * "NAME refused ERRNO" or "NAME allowed [detail]".
 */
#include <sys/types.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void
try_open(const char *name, const char *path)
{
	char	 buf[4096];
	ssize_t	 n;
	int	 fd;

	if ((fd = open(path, O_RDONLY)) == -1) {
		printf("%s refused %s\n", name, strerrorname_np(errno));
		return;
	}
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n == -1)
		printf("%s refused %s\n", name, strerrorname_np(errno));
	else
		printf("%s allowed %zd bytes\n", name, n);
}

int
main(void)
{
	char	 buf[4096];
	ssize_t	 n, i;
	int	 fd;

	if (ptrace(PTRACE_ATTACH, 1, NULL, NULL) == -1)
		printf("ptrace refused %s\n", strerrorname_np(errno));
	else {
		printf("ptrace allowed\n");
		waitpid(1, NULL, __WALL);
		ptrace(PTRACE_DETACH, 1, NULL, NULL);
	}
	if (ptrace(PTRACE_SEIZE, 1, NULL, NULL) == -1)
		printf("seize refused %s\n", strerrorname_np(errno));
	else
		printf("seize allowed\n");
	try_open("mem", "/proc/1/mem");
	try_open("environ", "/proc/1/environ");
	try_open("maps", "/proc/1/maps");

	/* The command line is public; it must hold nothing but the name. */
	if ((fd = open("/proc/1/cmdline", O_RDONLY)) == -1) {
		printf("cmdline refused %s\n", strerrorname_np(errno));
		return (0);
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	for (i = 0; i < n; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
	buf[n > 0 ? n : 0] = '\0';
	printf("cmdline %s\n", buf);
	/*
	 * Not exit(): in a sanitizer build LeakSanitizer would run at exit
	 * and need ptrace, which the fence refuses.
	 */
	fflush(stdout);
	_exit(0);
}
