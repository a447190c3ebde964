/*
 * t_egress_proxy: a stand-in for the egress proxy, on 127.0.0.1 only,
 * for fence-probe's egress checks in regress/probe_test.sh.  It opens
 *
 *	@PROXY@		a listener that answers each connection by the mode
 *	@NOPROXY@	a port bound but not listening: connects are refused
 *
 * replaces those words in the command's arguments, runs the command,
 * then stops its listener.  Modes (-m):
 *
 *	list	read the request head; "CONNECT T HTTP/1.1" with T one of
 *		the -a targets is answered "HTTP/1.1 200 Connection
 *		established", anything else "HTTP/1.1 403 Forbidden" with
 *		"X-Fenced-Egress: not-listed" (the default)
 *	silent	accept, read, never answer
 *	garbage	answer 2048 bytes that are no HTTP head (no line end)
 *	close	close each connection at once
 *	binary	answer "HTTP/1.1 200" and a NUL byte in the head
 *	long	answer a head of more than 1024 bytes ("HTTP/1.1 200" and
 *		a long header)
 *	header	answer "HTTP/1.1 403" with an X-Fenced-Egress code that is
 *		not a plain word
 *
 * With -o, every request head read is written to that file as it came.
 * Exit status: the command's.
 *
 *	t_egress_proxy [-m mode] [-a target ...] [-o file] -- command [arg ...]
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TE_ARGS_MAX	256
#define TE_CONNS_MAX	16
#define TE_TARGETS_MAX	8
#define TE_HEAD_MAX	8192

struct te_conn {
	int	 c_fd;
	size_t	 c_got;
	int	 c_answered;
	char	 c_head[TE_HEAD_MAX + 1];
};

static const char	*te_mode = "list";
static const char	*te_targets[TE_TARGETS_MAX];
static int		 te_ntargets;
static int		 te_log = -1;

static int
te_socket(int listening, char *port, size_t len)
{
	struct sockaddr_in	 sin;
	socklen_t		 sl = sizeof(sin);
	int			 s;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1 ||
	    bind(s, (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
	    (listening && listen(s, 16) == -1) ||
	    getsockname(s, (struct sockaddr *)&sin, &sl) == -1)
		err(2, "socket on 127.0.0.1");
	snprintf(port, len, "%u", ntohs(sin.sin_port));
	return (s);
}

static void
te_write(int fd, const char *s, size_t n)
{
	(void)send(fd, s, n, MSG_NOSIGNAL);
}

static void
te_put(int fd, const char *s)
{
	te_write(fd, s, strlen(s));
}

/* The answer of mode list to one request head. */
static void
te_list(struct te_conn *c)
{
	char	 target[512];
	int	 i;

	if (sscanf(c->c_head, "CONNECT %511s HTTP/1.1\r\n", target) == 1)
		for (i = 0; i < te_ntargets; i++)
			if (strcmp(target, te_targets[i]) == 0) {
				te_put(c->c_fd, "HTTP/1.1 200 Connection "
				    "established\r\n\r\n");
				return;
			}
	te_put(c->c_fd, "HTTP/1.1 403 Forbidden\r\nX-Fenced-Egress: "
	    "not-listed\r\nContent-Length: 0\r\n\r\n");
}

static void
te_answer(struct te_conn *c)
{
	char	 buf[2048];

	c->c_answered = 1;
	if (te_log != -1 && write(te_log, c->c_head, c->c_got) !=
	    (ssize_t)c->c_got)
		err(2, "log");
	if (strcmp(te_mode, "list") == 0)
		te_list(c);
	else if (strcmp(te_mode, "garbage") == 0) {
		memset(buf, 0xa5, sizeof(buf));
		te_write(c->c_fd, buf, sizeof(buf));
	} else if (strcmp(te_mode, "binary") == 0)
		te_write(c->c_fd, "HTTP/1.1 200 Connection\0established\r\n\r\n",
		    40);
	else if (strcmp(te_mode, "long") == 0) {
		te_put(c->c_fd, "HTTP/1.1 200 Connection established\r\n"
		    "X-Pad: ");
		memset(buf, 'x', 1100);
		te_write(c->c_fd, buf, 1100);
		te_put(c->c_fd, "\r\n\r\n");
	} else if (strcmp(te_mode, "header") == 0)
		te_put(c->c_fd, "HTTP/1.1 403 Forbidden\r\nX-Fenced-Egress: "
		    "not listed\"<x>\r\n\r\n");
	/* silent: nothing, ever */
}

static void
te_read(struct te_conn *c)
{
	ssize_t	 n;

	n = recv(c->c_fd, c->c_head + c->c_got, TE_HEAD_MAX - c->c_got, 0);
	if (n <= 0) {
		close(c->c_fd);
		c->c_fd = -1;
		return;
	}
	c->c_got += (size_t)n;
	c->c_head[c->c_got] = '\0';
	if (!c->c_answered && (strstr(c->c_head, "\r\n\r\n") != NULL ||
	    c->c_got == TE_HEAD_MAX))
		te_answer(c);
}

static __attribute__((noreturn)) void
te_serve(int s)
{
	static struct te_conn	 conns[TE_CONNS_MAX];
	struct pollfd		 pfd[TE_CONNS_MAX + 1];
	int			 i, np, fd, idx[TE_CONNS_MAX + 1];

	for (i = 0; i < TE_CONNS_MAX; i++)
		conns[i].c_fd = -1;
	for (;;) {
		pfd[0].fd = s;
		pfd[0].events = POLLIN;
		for (i = 0, np = 1; i < TE_CONNS_MAX; i++)
			if (conns[i].c_fd != -1) {
				pfd[np].fd = conns[i].c_fd;
				pfd[np].events = POLLIN;
				idx[np++] = i;
			}
		if (poll(pfd, (nfds_t)np, -1) == -1) {
			if (errno == EINTR)
				continue;
			err(2, "poll");
		}
		for (i = 1; i < np; i++)
			if (pfd[i].revents != 0)
				te_read(&conns[idx[i]]);
		if (!(pfd[0].revents & POLLIN) ||
		    (fd = accept4(s, NULL, NULL, SOCK_CLOEXEC)) == -1)
			continue;
		if (strcmp(te_mode, "close") == 0) {
			close(fd);
			continue;
		}
		for (i = 0; i < TE_CONNS_MAX && conns[i].c_fd != -1; i++)
			;
		if (i == TE_CONNS_MAX) {
			close(fd);
			continue;
		}
		memset(&conns[i], 0, sizeof(conns[i]));
		conns[i].c_fd = fd;
	}
}

static const char *const te_words[] = { "@PROXY@", "@NOPROXY@" };
#define TE_NWORDS	2

static char *
te_subst(const char *arg, char ports[TE_NWORDS][16])
{
	char	*buf, *p, *q;
	int	 k;

	if ((buf = strdup(arg)) == NULL)
		err(2, "strdup");
	for (k = 0; k < TE_NWORDS; k++)
		while ((p = strstr(buf, te_words[k])) != NULL) {
			*p = '\0';
			if (asprintf(&q, "%s%s%s", buf, ports[k],
			    p + strlen(te_words[k])) == -1)
				err(2, "asprintf");
			free(buf);
			buf = q;
		}
	return (buf);
}

static __attribute__((noreturn)) void
usage(void)
{
	errx(2, "usage: t_egress_proxy [-m mode] [-a target ...] [-o file] "
	    "-- command [arg ...]");
}

int
main(int argc, char *argv[])
{
	char	 ports[TE_NWORDS][16];
	char	*av[TE_ARGS_MAX];
	pid_t	 server, pid;
	int	 ch, i, s, st;

	while ((ch = getopt(argc, argv, "a:m:o:")) != -1) {
		switch (ch) {
		case 'a':
			if (te_ntargets == TE_TARGETS_MAX)
				usage();
			te_targets[te_ntargets++] = optarg;
			break;
		case 'm':
			te_mode = optarg;
			break;
		case 'o':
			if ((te_log = open(optarg, O_WRONLY | O_CREAT |
			    O_TRUNC | O_APPEND | O_CLOEXEC, 0644)) == -1)
				err(2, "%s", optarg);
			break;
		default:
			usage();
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 1 || argc >= TE_ARGS_MAX)
		usage();
	s = te_socket(1, ports[0], sizeof(ports[0]));
	(void)te_socket(0, ports[1], sizeof(ports[1]));
	(void)signal(SIGPIPE, SIG_IGN);
	if ((server = fork()) == -1)
		err(2, "fork");
	if (server == 0)
		te_serve(s);
	close(s);
	for (i = 0; i < argc; i++)
		av[i] = te_subst(argv[i], ports);
	av[argc] = NULL;
	if ((pid = fork()) == -1)
		err(2, "fork");
	if (pid == 0) {
		execvp(av[0], av);
		err(127, "%s", av[0]);
	}
	while (waitpid(pid, &st, 0) == -1)
		if (errno != EINTR)
			err(2, "waitpid");
	(void)kill(server, SIGKILL);
	(void)waitpid(server, NULL, 0);
	for (i = 0; i < argc; i++)
		free(av[i]);
	if (WIFEXITED(st))
		return (WEXITSTATUS(st));
	return (128 + WTERMSIG(st));
}
