/*
 * fencectl term (docs/interactive.md, "Terminals"):
 *
 *	term KEY [-i SECONDS] [-- command ...]	a new terminal, attached
 *	term KEY -a ID [-r BYTES]		attach again, BYTES of what
 *						it wrote replayed (all kept)
 *	term KEY -l				list
 *	term KEY -k ID				kill (forget one that ended)
 *
 * Attached, the user's terminal is in raw mode (restored on every way
 * out: the end, an error, a signal), its size goes with the open and
 * again at each SIGWINCH, and the bytes go both ways through a tunnel
 * of kind terminal whose descriptor the daemon passes (IMSG_CTL_TUNNEL).
 * When the terminal's program ends the tunnel ends, and fencectl exits
 * with the program's status (128 + the signal that killed it).  When
 * fencectl goes otherwise (killed, its terminal closed) the terminal
 * runs on until its idle time, to be attached again with -a.
 *
 * Each request is a control connection of its own: the session holds
 * none open, only the tunnel.
 */
#include <sys/types.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "fenced.h"
#include "imsg.h"
#include "msg.h"
#include "ctl_procs.h"

#define TERM_REPLY_MS	30000
#define TERM_BUF	(64 * 1024)

static struct termios	 term_saved;
static int		 term_raw;
static int		 term_sigpipe[2] = { -1, -1 };
static volatile sig_atomic_t term_winch;
static volatile sig_atomic_t term_quit;
static const int	 term_sigs[] = { SIGWINCH, SIGINT, SIGTERM, SIGHUP,
			    SIGQUIT };

static void	term_usage(void) __attribute__((noreturn));
static const char *term_fence(const char *, uid_t *);
static uid_t	 term_owner = MSG_OWNER_NONE;
static void	term_restore(void);
static void	term_signal(int);
static int	term_req(const char *, uint32_t, const void *, size_t,
		    struct msg_term *, size_t, size_t *, int *, char *);
static void	term_size(uint32_t *, uint32_t *);
static void	term_print(const struct msg_term *);
static int	term_status(const struct msg_term *);
static int	term_session(const char *, const char *, uint32_t, uint32_t);

static void
term_usage(void)
{
	fprintf(stderr, "usage: fencectl term KEY [-i SECONDS] "
	    "[-- command ...]\n"
	    "       fencectl term KEY -a ID [-r BYTES]\n"
	    "       fencectl term KEY -l\n"
	    "       fencectl term KEY -k ID\n");
	exit(1);
}

/*
 * [OWNER/]KEY, as the other commands take it: OWNER a user's name or
 * uid (the daemon decides whether the asker may name them).  The key.
 */
static const char *
term_fence(const char *arg, uid_t *owner)
{
	struct passwd	*pw;
	const char	*slash, *errstr;
	char		 user[64];

	*owner = MSG_OWNER_NONE;
	if ((slash = strchr(arg, '/')) == NULL) {
		if (!fence_key_valid(arg))
			errx(1, "%s: not a fence key", arg);
		return (arg);
	}
	if (slash == arg || (size_t)(slash - arg) >= sizeof(user) ||
	    !fence_key_valid(slash + 1))
		errx(1, "%s: not [OWNER/]KEY", arg);
	memcpy(user, arg, slash - arg);
	user[slash - arg] = '\0';
	if (user[0] >= '0' && user[0] <= '9') {
		*owner = strtonum(user, 0, UINT32_MAX - 1, &errstr);
		if (errstr != NULL)
			errx(1, "uid %s is %s", user, errstr);
	} else if ((pw = getpwnam(user)) != NULL)
		*owner = pw->pw_uid;
	else
		errx(1, "no such user %s", user);
	return (slash + 1);
}

/* The user's terminal as it was: every way out passes here. */
static void
term_restore(void)
{
	if (term_raw) {
		(void)tcsetattr(STDIN_FILENO, TCSAFLUSH, &term_saved);
		term_raw = 0;
	}
}

static void
term_signal(int sig)
{
	int	 saved = errno;
	char	 c = (char)sig;
	ssize_t	 n;

	if (sig == SIGWINCH)
		term_winch = 1;
	else
		term_quit = sig;
	/* A full pipe has a wake-up waiting already. */
	if (term_sigpipe[1] != -1 && (n = write(term_sigpipe[1], &c, 1)) < 1)
		errno = saved;
	errno = saved;
}

/*
 * One request on a control connection of its own: its TERMs (at most
 * max into ts, their count in *n), the tunnel's descriptor into *fd if
 * one comes, until END.  -1 after printing the daemon's refusal, or
 * with code, its code there (MSG_ERROR_CODE_MAX) and nothing printed.
 */
static int
term_req(const char *sock, uint32_t type, const void *buf, size_t len,
    struct msg_term *ts, size_t max, size_t *n, int *fd, char *code)
{
	struct msg_error e;
	struct imsgbuf	*ib;
	struct imsg	 imsg;
	int		 s, failed = 0, done = 0;

	if (n != NULL)
		*n = 0;
	s = ctl_connect(sock);
	if ((ib = imsgbuf_new(s)) == NULL)
		err(1, "imsgbuf_new");
	if (imsgbuf_compose(ib, type, 0, 0, -1, buf, len) == -1 ||
	    imsgbuf_flush(ib) == -1)
		err(1, "send");
	while (!done) {
		ctl_wait(ib, &imsg, TERM_REPLY_MS);
		switch (imsg.hdr.ih_type) {
		case IMSG_CTL_TERM:
			if (n == NULL || *n >= max)
				errx(1, "bad reply from fenced");
			if (msg_term_decode(imsg.data, imsg.len, &ts[*n]) == -1)
				errx(1, "bad terminal reply");
			(*n)++;
			break;
		case IMSG_CTL_TUNNEL_FD:
			if (fd == NULL || imsg.fd == -1 || *fd != -1)
				errx(1, "bad reply from fenced");
			*fd = imsg.fd;
			imsg.fd = -1;
			break;
		case IMSG_CTL_PROC:
			/* A process's state, after its input: not needed. */
			if (type != IMSG_CTL_PROC_INPUT)
				errx(1, "bad reply from fenced");
			break;
		case IMSG_CTL_ERROR:
			if (msg_error_decode(imsg.data, imsg.len, &e) == -1)
				errx(1, "bad error reply");
			term_restore();
			if (code != NULL)
				strlcpy(code, e.e_code, MSG_ERROR_CODE_MAX);
			else
				ctl_error(e.e_code, e.e_message);
			failed = 1;
			break;
		case IMSG_CTL_END:
			done = 1;
			break;
		default:
			errx(1, "unexpected reply %s",
			    msg_type_name(imsg.hdr.ih_type));
		}
		imsg_free(&imsg);
	}
	imsgbuf_free(ib);
	return (failed ? -1 : 0);
}

/* The user's terminal's size, or 80x24 when stdin is none. */
static void
term_size(uint32_t *cols, uint32_t *rows)
{
	struct winsize	 ws;

	*cols = 80;
	*rows = 24;
	if (ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) == -1 || ws.ws_col == 0 ||
	    ws.ws_row == 0)
		return;
	*cols = ws.ws_col > MSG_TERM_DIM_MAX ? MSG_TERM_DIM_MAX : ws.ws_col;
	*rows = ws.ws_row > MSG_TERM_DIM_MAX ? MSG_TERM_DIM_MAX : ws.ws_row;
}

static void
term_print(const struct msg_term *t)
{
	printf("%u %s %ux%u %s", t->t_id, t->t_running ? (t->t_attached ?
	    "attached" : "detached") : "ended", t->t_cols, t->t_rows,
	    t->t_program);
	if (!t->t_running) {
		if (t->t_signal != 0)
			printf(" signal %d", t->t_signal);
		else
			printf(" exit %d", t->t_exit);
		if (t->t_why[0] != '\0')
			printf(" (%s)", t->t_why);
	}
	printf("\n");
	fflush(stdout);
	ctl_denials(t->t_denials, t->t_denials_dropped, 0);
}

/* A program's end as a shell's status. */
static int
term_status(const struct msg_term *t)
{
	if (t->t_signal != 0)
		return (128 + t->t_signal);
	return (t->t_exit < 0 ? 1 : t->t_exit);
}

int
ctl_term(const char *sock, int argc, char *argv[])
{
	struct msg_term_open to;
	struct msg_term_req tq;
	struct msg_term	 ts[MSG_TERM_MAX];
	const char	*key, *errstr;
	void		*buf;
	size_t		 len, n, i;
	uint32_t	 attach = 0, kill_id = 0, idle = 0;
	uint32_t	 replay = MSG_TERM_RING;
	int		 ch, list = 0;

	if (argc < 2)
		term_usage();
	key = term_fence(argv[1], &term_owner);
	argc--;
	argv++;
	optind = 1;
	while ((ch = getopt(argc, argv, "+a:i:k:lr:")) != -1) {
		switch (ch) {
		case 'a':
			attach = strtonum(optarg, 1, UINT32_MAX, &errstr);
			if (errstr != NULL)
				errx(1, "-a %s: %s", optarg, errstr);
			break;
		case 'i':
			idle = strtonum(optarg, 1, MSG_TERM_IDLE_MAX, &errstr);
			if (errstr != NULL)
				errx(1, "-i %s: %s (seconds, 1 to %d)", optarg,
				    errstr, MSG_TERM_IDLE_MAX);
			break;
		case 'k':
			kill_id = strtonum(optarg, 1, UINT32_MAX, &errstr);
			if (errstr != NULL)
				errx(1, "-k %s: %s", optarg, errstr);
			break;
		case 'l':
			list = 1;
			break;
		case 'r':
			replay = strtonum(optarg, 0, MSG_TERM_RING, &errstr);
			if (errstr != NULL)
				errx(1, "-r %s: %s (bytes, 0 to %d)", optarg,
				    errstr, MSG_TERM_RING);
			break;
		default:
			term_usage();
		}
	}
	argc -= optind;
	argv += optind;
	if ((attach != 0) + (kill_id != 0) + list > 1 ||
	    ((attach || kill_id || list) && (argc > 0 || idle)))
		term_usage();

	if (list || kill_id) {
		memset(&tq, 0, sizeof(tq));
		strlcpy(tq.tq_key, key, sizeof(tq.tq_key));
		tq.tq_owner = term_owner;
		tq.tq_op = list ? MSG_TERM_LIST : MSG_TERM_KILL;
		tq.tq_id = kill_id;
		if (msg_term_req_encode(&tq, &buf, &len) == -1)
			err(1, "encode request");
		if (term_req(sock, IMSG_CTL_TERMS, buf, len, ts, nitems(ts),
		    &n, NULL, NULL) == -1)
			return (1);
		free(buf);
		for (i = 0; i < n; i++)
			term_print(&ts[i]);
		return (0);
	}
	if (attach)
		return (term_session(sock, key, attach, replay));

	memset(&to, 0, sizeof(to));
	strlcpy(to.to_key, key, sizeof(to.to_key));
	to.to_owner = term_owner;
	if (argc > 0) {
		if (argc > MSG_ARGV_MAX)
			errx(1, "at most %d arguments", MSG_ARGV_MAX);
		to.to_argv = argv;
		to.to_argc = (size_t)argc;
	}
	term_size(&to.to_cols, &to.to_rows);
	to.to_idle_s = idle;
	if (msg_term_open_encode(&to, &buf, &len) == -1)
		err(1, "encode request (each argument valid UTF-8, at most "
		    "%d bytes)", MSG_ARG_MAX);
	if (term_req(sock, IMSG_CTL_TERM_OPEN, buf, len, ts, 1, &n,
	    NULL, NULL) == -1)
		return (1);
	free(buf);
	if (n != 1)
		errx(1, "no terminal in the reply");
	return (term_session(sock, key, ts[0].t_id, MSG_TERM_RING));
}

/* Send the user's terminal's size to terminal id. */
static void
term_resize(const char *sock, const char *key, uint32_t id)
{
	struct msg_term_req tq;
	struct msg_term	 t;
	void		*buf;
	size_t		 len, n;

	memset(&tq, 0, sizeof(tq));
	strlcpy(tq.tq_key, key, sizeof(tq.tq_key));
	tq.tq_owner = term_owner;
	tq.tq_op = MSG_TERM_RESIZE;
	tq.tq_id = id;
	term_size(&tq.tq_cols, &tq.tq_rows);
	if (msg_term_req_encode(&tq, &buf, &len) == -1)
		err(1, "encode request");
	(void)term_req(sock, IMSG_CTL_TERMS, buf, len, &t, 1, &n, NULL, NULL);
	free(buf);
}

/*
 * Attached to terminal id until its tunnel ends: stdin to it, it to
 * stdout, the size at each SIGWINCH.  Its status once it ended.
 */
static int
term_session(const char *sock, const char *key, uint32_t id,
    uint32_t replay)
{
	struct msg_tunnel_open tn;
	struct msg_term_req tq;
	struct msg_term	 t;
	struct termios	 raw;
	struct sigaction sa;
	struct pollfd	 pfd[3];
	static uint8_t	 in[TERM_BUF], out[TERM_BUF];
	size_t		 inlen = 0, n;
	ssize_t		 r;
	void		*buf;
	size_t		 len;
	int		 tfd = -1, in_eof = 0, sig;
	char		 c;

	memset(&tn, 0, sizeof(tn));
	strlcpy(tn.to_key, key, sizeof(tn.to_key));
	tn.to_owner = term_owner;
	tn.to_kind = MSG_TUNNEL_TERMINAL;
	tn.to_id = id;
	tn.to_offset = replay;
	if (msg_tunnel_open_encode(&tn, &buf, &len) == -1)
		err(1, "encode request");
	if (term_req(sock, IMSG_CTL_TUNNEL, buf, len, NULL, 0, NULL,
	    &tfd, NULL) == -1)
		return (1);
	free(buf);
	if (tfd == -1)
		errx(1, "no tunnel in the reply");

	if (pipe2(term_sigpipe, O_CLOEXEC | O_NONBLOCK) == -1)
		err(1, "pipe");
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = term_signal;
	sigemptyset(&sa.sa_mask);
	for (sig = 0; sig < (int)nitems(term_sigs); sig++)
		(void)sigaction(term_sigs[sig], &sa, NULL);
	(void)signal(SIGPIPE, SIG_IGN);
	if (isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &term_saved) == 0) {
		raw = term_saved;
		cfmakeraw(&raw);
		if (atexit(term_restore) != 0)
			errx(1, "atexit");
		if (tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw) == 0)
			term_raw = 1;
	}

	for (;;) {
		if (term_quit)
			break;
		pfd[0].fd = in_eof || inlen == sizeof(in) ? -1 : STDIN_FILENO;
		pfd[0].events = POLLIN;
		pfd[1].fd = tfd;
		pfd[1].events = POLLIN | (inlen > 0 ? POLLOUT : 0);
		pfd[2].fd = term_sigpipe[0];
		pfd[2].events = POLLIN;
		if (poll(pfd, 3, -1) == -1) {
			if (errno == EINTR)
				continue;
			term_restore();
			err(1, "poll");
		}
		if (pfd[2].revents & POLLIN) {
			while (read(term_sigpipe[0], &c, 1) == 1)
				;
			if (term_winch) {
				term_winch = 0;
				term_resize(sock, key, id);
			}
			continue;
		}
		if (pfd[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			r = read(STDIN_FILENO, in + inlen, sizeof(in) - inlen);
			if (r > 0)
				inlen += (size_t)r;
			else if (r == 0 || (errno != EAGAIN &&
			    errno != EINTR))
				/*
				 * No more input, and none said: the end of
				 * the tunnel's input would be a detach.
				 */
				in_eof = 1;
		}
		if (inlen > 0 && (pfd[1].revents & POLLOUT)) {
			r = send(tfd, in, inlen, MSG_NOSIGNAL);
			if (r > 0) {
				memmove(in, in + r, inlen - (size_t)r);
				inlen -= (size_t)r;
			} else if (r == -1 && errno != EAGAIN &&
			    errno != EINTR)
				break;
		}
		if (pfd[1].revents & (POLLIN | POLLHUP | POLLERR)) {
			r = read(tfd, out, sizeof(out));
			if (r == 0 || (r == -1 && errno != EAGAIN &&
			    errno != EINTR))
				break;
			for (n = 0; r > 0 && n < (size_t)r; ) {
				ssize_t	 w = write(STDOUT_FILENO, out + n,
				    (size_t)r - n);

				if (w == -1 && errno == EINTR)
					continue;
				if (w <= 0)
					break;
				n += (size_t)w;
			}
		}
	}
	(void)close(tfd);
	term_restore();
	if (term_quit) {
		/* Gone by a signal: the terminal runs on, attachable. */
		fprintf(stderr, "fencectl: detached from terminal %u "
		    "(fencectl term %s -a %u)\n", id, key, id);
		return (128 + term_quit);
	}
	memset(&tq, 0, sizeof(tq));
	strlcpy(tq.tq_key, key, sizeof(tq.tq_key));
	tq.tq_owner = term_owner;
	tq.tq_op = MSG_TERM_LIST;
	tq.tq_id = id;
	if (msg_term_req_encode(&tq, &buf, &len) == -1)
		err(1, "encode request");
	if (term_req(sock, IMSG_CTL_TERMS, buf, len, &t, 1, &n, NULL, NULL) == -1)
		return (1);
	free(buf);
	if (n != 1)
		errx(1, "no terminal in the reply");
	if (t.t_running) {
		fprintf(stderr, "fencectl: terminal %u was attached "
		    "elsewhere; it runs on\n", id);
		return (1);
	}
	ctl_denials(t.t_denials, t.t_denials_dropped, 0);
	return (term_status(&t));
}

/*
 * fencectl input KEY ID [-c]: this stdin to background process ID's
 * (started with stdin-open), in messages of at most MSG_INPUT_MAX
 * bytes, each sent again after a pause while the process has that much
 * unread (input-busy); with -c its end of file after the last.
 */
int
ctl_input(const char *sock, int argc, char *argv[])
{
	struct msg_proc_input pi;
	static uint8_t	 data[MSG_INPUT_MAX];
	char		 code[MSG_ERROR_CODE_MAX];
	const char	*errstr;
	void		*buf;
	size_t		 len, have = 0;
	ssize_t		 n;
	int		 ch, closing = 0, eof = 0;

	if (argc < 3)
		errx(1, "usage: fencectl input [OWNER/]KEY ID [-c]");
	memset(&pi, 0, sizeof(pi));
	strlcpy(pi.pi_key, term_fence(argv[1], &pi.pi_owner),
	    sizeof(pi.pi_key));
	pi.pi_id = strtonum(argv[2], 1, UINT32_MAX, &errstr);
	if (errstr != NULL)
		errx(1, "input %s: %s", argv[2], errstr);
	argc -= 2;
	argv += 2;
	optind = 1;
	while ((ch = getopt(argc, argv, "c")) != -1) {
		if (ch != 'c')
			errx(1, "usage: fencectl input KEY ID [-c]");
		closing = 1;
	}
	if (optind != argc)
		errx(1, "usage: fencectl input KEY ID [-c]");
	while (!eof) {
		while (have < sizeof(data) && !eof) {
			n = read(STDIN_FILENO, data + have,
			    sizeof(data) - have);
			if (n == -1 && errno == EINTR)
				continue;
			if (n == -1)
				err(1, "stdin");
			if (n == 0)
				eof = 1;
			have += (size_t)n;
		}
		if (have == 0 && !(eof && closing))
			break;
		pi.pi_data = have > 0 ? data : NULL;
		pi.pi_len = have;
		pi.pi_close = eof && closing;
		if (msg_proc_input_encode(&pi, &buf, &len) == -1)
			err(1, "encode request");
		for (;;) {
			if (term_req(sock, IMSG_CTL_PROC_INPUT, buf, len, NULL,
			    0, NULL, NULL, code) == 0)
				break;
			if (strcmp(code, "input-busy") != 0)
				errx(1, "input: %s", code);
			usleep(50 * 1000);
		}
		free(buf);
		have = 0;
	}
	return (0);
}

/*
 * fencectl follow [OWNER/]KEY ID [stderr]: a background process's
 * output (stdout, or stderr) from its start, as it comes, until the
 * process ended and all of it came (a tunnel of kind output).
 */
int
ctl_follow(const char *sock, int argc, char *argv[])
{
	struct msg_tunnel_open tn;
	static uint8_t	 out[TERM_BUF];
	const char	*errstr;
	void		*buf;
	size_t		 len;
	ssize_t		 r;
	int		 tfd = -1;
	struct pollfd	 pfd;

	if (argc < 3 || argc > 4 || (argc == 4 &&
	    strcmp(argv[3], "stderr") != 0 && strcmp(argv[3], "stdout") != 0))
		errx(1, "usage: fencectl follow [OWNER/]KEY ID [stdout | "
		    "stderr]");
	memset(&tn, 0, sizeof(tn));
	strlcpy(tn.to_key, term_fence(argv[1], &tn.to_owner),
	    sizeof(tn.to_key));
	tn.to_kind = MSG_TUNNEL_OUTPUT;
	tn.to_id = strtonum(argv[2], 1, UINT32_MAX, &errstr);
	if (errstr != NULL)
		errx(1, "follow %s: %s", argv[2], errstr);
	tn.to_stream = argc == 4 && strcmp(argv[3], "stderr") == 0 ?
	    MSG_CHUNK_STDERR : MSG_CHUNK_STDOUT;
	if (msg_tunnel_open_encode(&tn, &buf, &len) == -1)
		err(1, "encode request");
	if (term_req(sock, IMSG_CTL_TUNNEL, buf, len, NULL, 0, NULL, &tfd,
	    NULL) == -1)
		return (1);
	free(buf);
	if (tfd == -1)
		errx(1, "no tunnel in the reply");
	for (;;) {
		pfd.fd = tfd;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, -1) == -1 && errno != EINTR)
			err(1, "poll");
		r = read(tfd, out, sizeof(out));
		if (r == -1 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (r == -1)
			err(1, "read");
		if (r == 0)
			break;
		ctl_write_all(STDOUT_FILENO, out, (size_t)r);
	}
	return (0);
}
