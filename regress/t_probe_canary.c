/*
 * t_probe_canary: the host's side of a probe run for regress/probe_test.sh,
 * all on 127.0.0.1.  It opens
 *
 *	@PORT@		the canary: a listener whose accepted connections
 *			are counted after the command ends
 *	@OPEN@		another listener, for --tcp targets
 *	@CLOSED@	a port bound but not listening: connects are refused
 *	@DROP@		a listener whose queue is full: SYNs are dropped,
 *			connects hang until the prober's bound
 *
 * replaces those words in the command's arguments, runs the command,
 * and writes to the file given with -o (and to standard error) what the
 * host saw: "accepted N" (connections the canary accepted), "port P"
 * (the canary's) and "elapsed MS" (how long the command ran).  With -u
 * it also binds UDP 127.0.0.1:53 and never answers: a resolver pointed
 * there (by a resolv.conf the test binds over the host's in a mount
 * namespace of its own) sees its queries dropped.  Exit status: the
 * command's.
 *
 *	t_probe_canary [-u] [-o file] -- command [arg ...]
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TC_ARGS_MAX	256

static int
tc_socket(int backlog, char *port, size_t len)
{
	struct sockaddr_in	 sin;
	socklen_t		 sl = sizeof(sin);
	int			 s;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1 ||
	    bind(s, (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
	    (backlog >= 0 && listen(s, backlog) == -1) ||
	    getsockname(s, (struct sockaddr *)&sin, &sl) == -1)
		err(2, "socket on 127.0.0.1");
	snprintf(port, len, "%u", ntohs(sin.sin_port));
	return (s);
}

/* Fill the accept queue of a backlog-0 listener so the next SYN drops. */
static void
tc_fill(const char *port)
{
	struct sockaddr_in	 sin;
	int			 i, c;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin.sin_port = htons((in_port_t)atoi(port));
	for (i = 0; i < 2; i++) {
		if ((c = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK |
		    SOCK_CLOEXEC, 0)) == -1)
			err(2, "socket");
		if (connect(c, (struct sockaddr *)&sin, sizeof(sin)) == -1 &&
		    errno != EINPROGRESS)
			err(2, "connect to the drop listener");
		/* kept open on purpose until we exit */
	}
	usleep(20 * 1000);
}

/* A DNS server that never answers, on loopback only. */
static void
tc_dns_sink(void)
{
	struct sockaddr_in	 sin;
	int			 s;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin.sin_port = htons(53);
	if ((s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) == -1 ||
	    bind(s, (struct sockaddr *)&sin, sizeof(sin)) == -1)
		err(3, "udp 127.0.0.1:53");
	/* kept open, never read, until we exit */
}

static int
tc_count(int s)
{
	int	 c, n = 0;

	if (fcntl(s, F_SETFL, O_NONBLOCK) == -1)
		err(2, "fcntl");
	while ((c = accept(s, NULL, NULL)) != -1) {
		close(c);
		n++;
	}
	return (n);
}

static const char *const tc_words[] = { "@PORT@", "@OPEN@", "@CLOSED@",
	"@DROP@" };
#define TC_NWORDS	4

/* arg with every @WORD@ replaced by its port. */
static char *
tc_subst(const char *arg, char ports[TC_NWORDS][16])
{
	char	*buf, *p, *q;
	int	 k;

	if ((buf = strdup(arg)) == NULL)
		err(2, "strdup");
	for (k = 0; k < TC_NWORDS; k++)
		while ((p = strstr(buf, tc_words[k])) != NULL) {
			*p = '\0';
			if (asprintf(&q, "%s%s%s", buf, ports[k],
			    p + strlen(tc_words[k])) == -1)
				err(2, "asprintf");
			free(buf);
			buf = q;
		}
	return (buf);
}

static long long
tc_ms(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

static int
tc_run(char *av[], long long *ms)
{
	pid_t		 pid;
	long long	 t0 = tc_ms();
	int		 st;

	if ((pid = fork()) == -1)
		err(2, "fork");
	if (pid == 0) {
		execvp(av[0], av);
		err(127, "%s", av[0]);
	}
	while (waitpid(pid, &st, 0) == -1)
		if (errno != EINTR)
			err(2, "waitpid");
	*ms = tc_ms() - t0;
	return (st);
}

int
main(int argc, char *argv[])
{
	char		 ports[TC_NWORDS][16];
	char		*av[TC_ARGS_MAX];
	const char	*out = NULL;
	FILE		*f;
	long long	 ms;
	int		 ch, i, s, st, n;

	while ((ch = getopt(argc, argv, "o:u")) != -1) {
		switch (ch) {
		case 'o':
			out = optarg;
			break;
		case 'u':
			tc_dns_sink();
			break;
		default:
			errx(2, "usage: t_probe_canary [-u] [-o file] -- "
			    "command");
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 1 || argc >= TC_ARGS_MAX)
		errx(2, "usage: t_probe_canary [-u] [-o file] -- "
			    "command");
	s = tc_socket(16, ports[0], sizeof(ports[0]));
	(void)tc_socket(16, ports[1], sizeof(ports[1]));
	(void)tc_socket(-1, ports[2], sizeof(ports[2]));
	(void)tc_socket(0, ports[3], sizeof(ports[3]));
	tc_fill(ports[3]);
	for (i = 0; i < argc; i++)
		av[i] = tc_subst(argv[i], ports);
	av[argc] = NULL;
	st = tc_run(av, &ms);
	n = tc_count(s);
	fprintf(stderr, "t_probe_canary: canary 127.0.0.1:%s accepted %d, "
	    "%lld ms\n", ports[0], n, ms);
	if (out != NULL) {
		if ((f = fopen(out, "w")) == NULL)
			err(2, "%s", out);
		fprintf(f, "accepted %d\nport %s\nelapsed %lld\n", n,
		    ports[0], ms);
		fclose(f);
	}
	for (i = 0; i < argc; i++)
		free(av[i]);
	if (WIFEXITED(st))
		return (WEXITSTATUS(st));
	return (128 + WTERMSIG(st));
}
