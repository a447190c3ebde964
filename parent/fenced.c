/*
 * fenced: the parent.  It reads the configuration, prepares the state
 * directory and the listening sockets as root, starts the broker, the
 * fencer and the prober by fork and re-exec, wires them to each other,
 * and from then on only supervises them and answers the few privileged
 * requests listed in parent_reqs[].
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <dirent.h>
#include <err.h>
#include <errno.h>
#include <event.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "fenced.h"
#include "imsg.h"
#include "log.h"
#include "msg.h"
#include "proc.h"
#include "cg.h"
#include "parent.h"

#define SHUTDOWN_GRACE_MS	2000	/* SIGTERM, then SIGKILL */
#define REQ_WINDOW_SEC		10
#define AUDIT_RATE		100000	/* events in REQ_WINDOW_SEC */
#define HTTP_BACKLOG		128
#define TOKENS_FILE		"tokens"	/* under the state directory */
/* "UID NAME CREATED SHA256HEX\n" */
#define TOKENS_LINE_MAX		(10 + 1 + HOSTTOKEN_NAME_MAX + 1 + 20 + 1 + \
				 HOSTTOKEN_HASH * 2 + 1)

struct child {
	pid_t		 c_pid;
	struct imsgev	*c_iev;
	int		 c_status;	/* from waitpid, once reaped */
	int		 c_reaped;
};

/*
 * The privileged requests: who may ask what, and how often in
 * REQ_WINDOW_SEC.  Any other message from a child is fatal.  A request
 * over its rate is refused, and refused with an answer (pr_refuse) when
 * its sender waits for one.  A notice (pr_refuse NULL) has nobody
 * waiting: the broker answered its client before it told the parent,
 * so over the rate a notice is only logged.
 */
struct parent_req {
	enum fenced_proc	 pr_from;
	uint32_t		 pr_type;
	unsigned int		 pr_max;
	void			(*pr_fn)(enum fenced_proc, struct imsg *);
	/* Over pr_max: the answer that says so, if the request has one. */
	void			(*pr_refuse)(enum fenced_proc, struct imsg *);
};

struct parent_req_use {
	unsigned int		 pu_count;
	time_t			 pu_window;
};

static void	parent_usage(void) __attribute__((noreturn));
static void	parent_prepare_state(const struct fenced_config *);
static void	parent_check_proc(void);
static void	parent_daemonize(void);
static int	parent_control_socket(const char *);
static int	parent_http_socket(const char *, uint16_t);
static void	parent_tokens_load(const char *);
static int	parent_tokens_save(const char *);
static void	parent_start_children(const char *);
static void	parent_send_config(void);
static void	parent_dispatch(struct imsgev *, struct imsg *, void *);
static void	parent_closed(struct imsgev *, int, void *);
static void	parent_sig(int, short, void *);
static void	parent_reap(void);
static void	parent_shutdown(int) __attribute__((noreturn));
static int	parent_reload(char *, size_t);
static void	req_log_verbose(enum fenced_proc, struct imsg *);
static void	req_reload(enum fenced_proc, struct imsg *);
static void	req_reload_refuse(enum fenced_proc, struct imsg *);
static void	req_token_store(enum fenced_proc, struct imsg *);
static void	req_token_refuse(enum fenced_proc, struct imsg *);
static void	req_audit(enum fenced_proc, struct imsg *);
static void	req_audit_refuse(enum fenced_proc, struct imsg *);
static void	req_audit_read(enum fenced_proc, struct imsg *);
static void	req_audit_read_end(enum fenced_proc, struct imsg *);

static const struct parent_req parent_reqs[] = {
	/*
	 * A notice: the broker has set its own level and said
	 * IMSG_CTL_OK; the parent passes IMSG_LOG_LEVEL to the others.
	 */
	{ PROC_BROKER,	IMSG_LOG_VERBOSE,	20,	req_log_verbose, NULL },
	/*
	 * Answered IMSG_RELOADED: "ok" (a new IMSG_CONFIG went out first)
	 * or why the file was refused, which fencectl says; "busy" over
	 * the rate.
	 */
	{ PROC_BROKER,	IMSG_RELOAD,		5,	req_reload,
	    req_reload_refuse },
	/*
	 * Answered IMSG_TOKEN_STORED, EBUSY over the rate.  The broker
	 * allows itself half of this (broker/token.c), so that one that
	 * keeps to it is never refused.
	 */
	{ PROC_BROKER,	IMSG_TOKEN_STORE,	40,	req_token_store,
	    req_token_refuse },
	/*
	 * A notice: one event of the audit log (parent/audit.c).  Over
	 * the rate it is counted, and the count written as one line.
	 */
	{ PROC_BROKER,	IMSG_AUDIT,		AUDIT_RATE,	req_audit,
	    req_audit_refuse },
	/*
	 * Answered with the lines (IMSG_AUDIT_LINE), then IMSG_AUDIT_END;
	 * over the rate with the END alone.
	 */
	{ PROC_BROKER,	IMSG_AUDIT_READ,	20,	req_audit_read,
	    req_audit_read_end },
};
#define NREQS	(sizeof(parent_reqs) / sizeof(parent_reqs[0]))
static struct parent_req_use parent_req_use[NREQS];

/* The children, as each declares itself (imsg/proc.h). */
static struct proc_self *const fenced_procs[PROC_MAX] = {
	[PROC_BROKER] =	&broker_self,
	[PROC_FENCER] =	&fencer_self,
	[PROC_PROBER] =	&prober_self,
	[PROC_EGRESS] =	&egress_self,
};

static struct fenced_config	 conf;
static const char		*conffile = FENCED_CONF;
static int			 conffile_given;
static struct child		 children[PROC_MAX];
static struct event_base	*evbase;
static int			 shutting_down;
static int			 debug;
static char			 self[PATH_MAX];
static char			 daemon_id[DAEMON_ID_SIZE];
static int			 daemon_lock = -1;
static int			 uids_lock = -1;

/* The hashes of the host tokens, as <state>/tokens has them. */
static struct msg_token		 tokens[HOSTTOKEN_MAX];
static size_t			 ntokens;

static void
parent_usage(void)
{
	fprintf(stderr, "usage: fenced [-dnVv] [-f file]\n");
	exit(1);
}

int
main(int argc, char *argv[])
{
	struct event	 ev_term, ev_int, ev_hup, ev_chld, ev_pipe;
	int		 ch, noaction = 0, verbose = 0;
	char		 cgerr[256];
	ssize_t		 n;

	setproctitle_init(argc, argv, environ);

	/* A re-executed child says which one it is first. */
	if (argc > 2 && strcmp(argv[1], "-P") == 0)
		proc_main(argc, argv, fenced_procs);

	while ((ch = getopt(argc, argv, "df:nVv")) != -1) {
		switch (ch) {
		case 'd':
			debug = 1;
			break;
		case 'f':
			conffile = optarg;
			conffile_given = 1;
			break;
		case 'n':
			noaction = 1;
			break;
		case 'V':
			printf("fenced %s\n", FENCED_VERSION);
			exit(0);
		case 'v':
			verbose++;
			break;
		default:
			parent_usage();
		}
	}
	if (optind != argc)
		parent_usage();

	log_init(1, LOG_DAEMON);	/* stderr until we daemonize */
	log_setverbose(verbose);

	config_defaults(&conf);
	if (conffile_given || access(conffile, F_OK) == 0) {
		if (config_parse(conffile, &conf) == -1)
			errx(1, "%s: configuration not valid", conffile);
	} else
		log_debug("no %s, using built-in defaults", conffile);
	if (config_env_override(&conf) == -1)
		errx(1, "environment overrides not valid");
	if (noaction) {
		if (config_resolve(&conf) == -1)
			errx(1, "%s: configuration not valid", conffile);
		fprintf(stderr, "configuration OK\n");
		exit(0);
	}
	if (geteuid() != 0)
		errx(1, "need root privileges");
	if (config_resolve(&conf) == -1)
		exit(1);
	conf.c_verbose = verbose;

	if ((n = readlink("/proc/self/exe", self, sizeof(self) - 1)) == -1)
		err(1, "readlink /proc/self/exe");
	self[n] = '\0';

	parent_check_proc();
	parent_prepare_state(&conf);
	/* Dead daemons of this state swept, ours named and locked. */
	daemon_lock = daemon_start(conf.c_state, daemon_id);
	/* No other live daemon gives fences a uid of our range. */
	uids_lock = uids_claim(conf.c_fence_uid_lo, conf.c_fence_uid_hi,
	    daemon_id, conf.c_state);
	parent_tokens_load(conf.c_state);
	if (audit_open(&conf) == -1)
		errx(1, "audit log %s: cannot be written safely (or set "
		    "`audit off')", conf.c_audit_log);
	/*
	 * On cgroup v2, into a leaf of our own before anything is forked:
	 * every process of the daemon is born there (common/cg_daemon.c).
	 * If we cannot, the fencer says why it refuses L1.5 and L2.
	 */
	if ((n = cg_daemon_enter(daemon_id, cgerr, sizeof(cgerr))) == -1)
		log_warnx("cgroups: %s", cgerr);
	else if (n == 1)
		log_debug("cgroup v2: in a leaf of our own");

	log_init(debug, LOG_DAEMON);
	log_procinit("parent");
	if (!debug)
		parent_daemonize();
	setproctitle("parent");

	if ((evbase = event_init()) == NULL)
		fatalx("event_init failed");
	signal_set(&ev_term, SIGTERM, parent_sig, NULL);
	signal_set(&ev_int, SIGINT, parent_sig, NULL);
	signal_set(&ev_hup, SIGHUP, parent_sig, NULL);
	signal_set(&ev_chld, SIGCHLD, parent_sig, NULL);
	signal_set(&ev_pipe, SIGPIPE, parent_sig, NULL);
	signal_add(&ev_term, NULL);
	signal_add(&ev_int, NULL);
	signal_add(&ev_hup, NULL);
	signal_add(&ev_chld, NULL);
	signal_add(&ev_pipe, NULL);

	parent_start_children(self);
	log_info("started, pid %d, daemon id %s", (int)getpid(), daemon_id);

	event_dispatch();
	parent_shutdown(1);
}

/*
 * The fencer reads its fences' /proc/PID files by the pids it knows,
 * those of our pid namespace: a /proc of another one (unshare --pid
 * without --mount-proc) would show it other processes by those
 * numbers, and judge a fence by a stranger.  /proc/self names us by
 * the pid this /proc knows us by.
 */
static void
parent_check_proc(void)
{
	char		 buf[32];
	const char	*errstr;
	ssize_t		 n;
	long long	 pid;

	if ((n = readlink("/proc/self", buf, sizeof(buf) - 1)) == -1)
		err(1, "readlink /proc/self");
	buf[n] = '\0';
	pid = strtonum(buf, 1, INT_MAX, &errstr);
	if (errstr != NULL || pid != getpid())
		errx(1, "/proc is not of this pid namespace (pid %d here, "
		    "%s there): mount one of its own (unshare --mount-proc)",
		    (int)getpid(), buf);
}

/*
 * daemon(3), except as pid 1 of a pid namespace (a container's first
 * process, unshare --pid --fork): there the fork's parent would exit
 * and the kernel kill the namespace, the daemon with it, so pid 1 stays
 * itself and only leaves the terminal.
 */
static void
parent_daemonize(void)
{
	int	 fd;

	if (getpid() != 1) {
		if (daemon(0, 0) == -1)
			fatal("daemon");
		return;
	}
	(void)setsid();
	if (chdir("/") == -1)
		fatal("chdir /");
	if ((fd = open("/dev/null", O_RDWR | O_CLOEXEC)) == -1)
		fatal("/dev/null");
	if (dup2(fd, STDIN_FILENO) == -1 || dup2(fd, STDOUT_FILENO) == -1 ||
	    dup2(fd, STDERR_FILENO) == -1)
		fatal("dup2");
	if (fd > STDERR_FILENO)
		(void)close(fd);
}

static void
mkdir_owned(const char *path, mode_t mode)
{
	struct stat	 st;

	if (mkdir(path, mode) == -1 && errno != EEXIST)
		fatal("mkdir %s", path);
	if (lstat(path, &st) == -1)
		fatal("stat %s", path);
	if (!S_ISDIR(st.st_mode))
		fatalx("%s: not a directory", path);
	if (st.st_uid != 0)
		fatalx("%s: not owned by root", path);
	if ((st.st_mode & 07777) != mode && chmod(path, mode) == -1)
		fatal("chmod %s", path);
}

/*
 * The state directory is root's; inside it "empty" is the directory the
 * broker and prober chroot into: root-owned, read-only, and empty.
 */
static void
parent_prepare_state(const struct fenced_config *c)
{
	char		 path[PATH_MAX];
	DIR		*d;
	struct dirent	*de;

	if (c->c_state[0] != '/')
		fatalx("state %s: not an absolute path", c->c_state);
	mkdir_owned(c->c_state, 0711);
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", c->c_state,
	    FENCED_EMPTY_DIR) >= sizeof(path))
		fatalx("state path too long");
	mkdir_owned(path, 0755);
	if ((d = opendir(path)) == NULL)
		fatal("opendir %s", path);
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") != 0 &&
		    strcmp(de->d_name, "..") != 0)
			fatalx("%s: not empty (%s)", path, de->d_name);
	closedir(d);
	if ((size_t)snprintf(path, sizeof(path), "%s/envs", c->c_state) >=
	    sizeof(path))
		fatalx("state path too long");
	mkdir_owned(path, 0700);
	/* Root's ~ of `homes' (fencer_home.c). */
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", c->c_state,
	    FENCED_ROOT_HOME) >= sizeof(path))
		fatalx("state path too long");
	mkdir_owned(path, 0700);
}

/*
 * The control socket: mode 0666, since who may do what is decided per
 * request from SO_PEERCRED.  A socket still answered by another fenced
 * is left alone; a stale one is replaced.
 */
static int
parent_control_socket(const char *path)
{
	struct sockaddr_un sun;
	struct stat	 st;
	mode_t		 old;
	int		 fd, probe;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlcpy(sun.sun_path, path, sizeof(sun.sun_path)) >=
	    sizeof(sun.sun_path))
		fatalx("socket %s: path too long", path);

	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode))
			fatalx("socket %s: exists and is not a socket", path);
		if ((probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC,
		    0)) == -1)
			fatal("socket");
		if (connect(probe, (struct sockaddr *)&sun, sizeof(sun)) == 0)
			fatalx("socket %s: in use by another fenced", path);
		close(probe);
		if (unlink(path) == -1)
			fatal("unlink %s", path);
	}

	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC |
	    SOCK_NONBLOCK, 0)) == -1)
		fatal("socket");
	old = umask(0111);
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1)
		fatal("bind %s", path);
	umask(old);
	if (chmod(path, 0666) == -1)
		fatal("chmod %s", path);
	if (listen(fd, 64) == -1)
		fatal("listen %s", path);
	return (fd);
}

/*
 * The HTTP API's socket, on the configured loopback address (parse.y
 * takes no other).  SO_REUSEADDR lets a restarted daemon listen while
 * connections of the last one are in TIME_WAIT; an address another
 * process listens on is still refused.  Returns the socket, or -1 with
 * errno set when the address cannot be had.
 */
static int
parent_http_socket(const char *addr, uint16_t port)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
	socklen_t	 sslen;
	int		 fd, on = 1, saved;

	memset(&ss, 0, sizeof(ss));
	if (inet_pton(AF_INET, addr, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		sslen = sizeof(*sin);
	} else if (inet_pton(AF_INET6, addr, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		sslen = sizeof(*sin6);
	} else
		fatalx("listen on %s: not an address", addr);

	if ((fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC |
	    SOCK_NONBLOCK, 0)) == -1)
		fatal("socket");
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) == -1)
		fatal("setsockopt SO_REUSEADDR");
	if (ss.ss_family == AF_INET6 && setsockopt(fd, IPPROTO_IPV6,
	    IPV6_V6ONLY, &on, sizeof(on)) == -1)
		fatal("setsockopt IPV6_V6ONLY");
	/*
	 * Inherited by every accepted connection: evhttp writes an answer
	 * as it comes, and Nagle's algorithm would hold the last segment of
	 * a larger one until the client's delayed ACK (40 ms here).
	 */
	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on)) == -1)
		fatal("setsockopt TCP_NODELAY");
	if (bind(fd, (struct sockaddr *)&ss, sslen) == -1 ||
	    listen(fd, HTTP_BACKLOG) == -1) {
		saved = errno;
		close(fd);
		errno = saved;
		return (-1);
	}
	return (fd);
}

/*
 * One line of <state>/tokens into t: "UID NAME CREATED SHA256HEX", or
 * the file's old form "UID SHA256HEX" (one token per user, before they
 * had names), read as the token "default" made at mtime.  The line is
 * cut up in place.  Returns 0 (the form with names), 1 (the old
 * form), or -1 if it does not read.
 */
static int
parent_token_line(char *line, time_t mtime, struct msg_token *t)
{
	char		*f[4], *p = line;
	const char	*errstr;
	size_t		 n = 0, j;
	int		 hi, lo;

	memset(t, 0, sizeof(*t));
	while (n < nitems(f) && (f[n] = strsep(&p, " ")) != NULL)
		n++;
	if (p != NULL || (n != 2 && n != 4))
		return (-1);
	if (f[0][0] < '0' || f[0][0] > '9')
		return (-1);
	t->tk_uid = strtonum(f[0], 0, UINT32_MAX - 1, &errstr);
	if (errstr != NULL)
		return (-1);
	if (n == 2) {
		strlcpy(t->tk_name, HOSTTOKEN_NAME_DEFAULT, sizeof(t->tk_name));
		t->tk_created = mtime < 0 ? 0 : mtime;
	} else {
		if (!hosttoken_name_valid(f[1]) ||
		    strlen(f[1]) >= sizeof(t->tk_name) ||
		    f[2][0] < '0' || f[2][0] > '9')
			return (-1);
		strlcpy(t->tk_name, f[1], sizeof(t->tk_name));
		t->tk_created = strtonum(f[2], 0, INT64_MAX, &errstr);
		if (errstr != NULL)
			return (-1);
	}
	if (strlen(f[n - 1]) != HOSTTOKEN_HASH * 2)
		return (-1);
	for (j = 0; j < HOSTTOKEN_HASH; j++) {
		hi = hexdigit(f[n - 1][2 * j]);
		lo = hexdigit(f[n - 1][2 * j + 1]);
		if (hi == -1 || lo == -1)
			return (-1);
		t->tk_hash[j] = hi << 4 | lo;
	}
	return (n == 2);
}

static ssize_t
parent_token_find(uid_t uid, const char *name)
{
	size_t	 i;

	for (i = 0; i < ntokens; i++)
		if (tokens[i].tk_uid == uid &&
		    strcmp(tokens[i].tk_name, name) == 0)
			return ((ssize_t)i);
	return (-1);
}

/*
 * <state>/tokens: one line per token, "UID NAME CREATED SHA256HEX",
 * root's, mode 0600; a file of the old form is read as it is and
 * written in the new one at the next change.  A line that does not
 * read is skipped and said; a file that others could have written is
 * refused, since its hashes open the API.
 */
static void
parent_tokens_load(const char *state)
{
	char		 path[PATH_MAX], line[TOKENS_LINE_MAX + 2];
	struct msg_token t;
	struct stat	 st;
	char		*nl;
	FILE		*fp;
	size_t		 lineno = 0, old = 0;
	ssize_t		 i;
	int		 fd, rv;

	ntokens = 0;
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", state,
	    TOKENS_FILE) >= sizeof(path))
		fatalx("state path too long");
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1) {
		if (errno == ENOENT)
			return;
		fatal("open %s", path);
	}
	if (fstat(fd, &st) == -1)
		fatal("fstat %s", path);
	if (!S_ISREG(st.st_mode) || st.st_uid != 0 ||
	    (st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
		fatalx("%s: not a regular file of root's that only root may "
		    "write", path);
	if ((fp = fdopen(fd, "r")) == NULL)
		fatal("fdopen %s", path);
	while (fgets(line, sizeof(line), fp) != NULL) {
		lineno++;
		if ((nl = strchr(line, '\n')) == NULL)
			goto bad;
		*nl = '\0';
		if ((rv = parent_token_line(line, st.st_mtime, &t)) == -1)
			goto bad;
		old += rv;
		if ((i = parent_token_find(t.tk_uid, t.tk_name)) == -1) {
			if (ntokens == HOSTTOKEN_MAX) {
				log_warnx("%s:%zu: more than %d tokens, the "
				    "rest ignored", path, lineno,
				    HOSTTOKEN_MAX);
				break;
			}
			i = ntokens++;
		}
		tokens[i] = t;
		continue;
 bad:
		log_warnx("%s:%zu: not \"UID NAME CREATED SHA256\", ignored",
		    path, lineno);
		/* The rest of an overlong line. */
		while (nl == NULL && fgets(line, sizeof(line), fp) != NULL &&
		    (nl = strchr(line, '\n')) == NULL)
			;
	}
	if (ferror(fp))
		fatal("read %s", path);
	fclose(fp);
	explicit_bzero(line, sizeof(line));
	explicit_bzero(&t, sizeof(t));
	log_debug("%zu host tokens from %s", ntokens, path);
	if (old > 0) {
		if (parent_tokens_save(state) == -1)
			fatal("%s: cannot write it in the form with names",
			    path);
		log_info("%s: %zu host tokens of the old form, named \""
		    HOSTTOKEN_NAME_DEFAULT "\"", path, old);
	}
}

/*
 * Write the table to a temporary file beside the real one, then rename
 * it over: a reader (or a crash) sees the old file or the new, whole.
 * Returns 0, or -1 with errno set.
 */
static int
parent_tokens_save(const char *state)
{
	char		 path[PATH_MAX], tmp[PATH_MAX];
	FILE		*fp = NULL;
	size_t		 i, j;
	int		 fd = -1, dfd, saved;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", state,
	    TOKENS_FILE) >= sizeof(path) ||
	    (size_t)snprintf(tmp, sizeof(tmp), "%s/.%s.XXXXXX", state,
	    TOKENS_FILE) >= sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return (-1);
	}
	if ((fd = mkostemp(tmp, O_CLOEXEC)) == -1)
		return (-1);
	if (fchown(fd, 0, 0) == -1 || fchmod(fd, 0600) == -1 ||
	    (fp = fdopen(fd, "w")) == NULL)
		goto fail;
	fd = -1;
	for (i = 0; i < ntokens; i++) {
		fprintf(fp, "%u %s %lld ", (unsigned)tokens[i].tk_uid,
		    tokens[i].tk_name, (long long)tokens[i].tk_created);
		for (j = 0; j < HOSTTOKEN_HASH; j++)
			fprintf(fp, "%02x", tokens[i].tk_hash[j]);
		fputc('\n', fp);
	}
	if (fflush(fp) == EOF || fsync(fileno(fp)) == -1)
		goto fail;
	if (fclose(fp) == EOF) {
		fp = NULL;
		goto fail;
	}
	fp = NULL;
	if (rename(tmp, path) == -1)
		goto fail;
	if ((dfd = open(state, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) != -1) {
		(void)fsync(dfd);
		close(dfd);
	}
	return (0);
 fail:
	saved = errno;
	if (fp != NULL)
		fclose(fp);
	if (fd != -1)
		close(fd);
	(void)unlink(tmp);
	errno = saved;
	return (-1);
}

static void
parent_compose(enum fenced_proc p, uint32_t type, int fd, void *buf,
    size_t len)
{
	if (imsgev_compose(children[p].c_iev, type, 0, 0, fd, buf, len) == -1)
		fatal("%s: compose to %s", __func__, proc_name(p));
}

/* A channel only one side declares is a bug: no child starts. */
static void
parent_check_peers(void)
{
	enum fenced_proc p, q;

	for (p = PROC_BROKER; p < PROC_MAX; p++)
		for (q = p + 1; q < PROC_MAX; q++)
			if (proc_declares(fenced_procs[p], q) !=
			    proc_declares(fenced_procs[q], p))
				fatalx("%s and %s disagree on their channel",
				    proc_name(p), proc_name(q));
}

/*
 * The control socket first, so that a second daemon on the same
 * configuration is told so; a port taken leaves no socket behind.
 */
static void
parent_listen(int *ctl, int *http)
{
	int		 saved;

	*ctl = parent_control_socket(conf.c_socket);
	if ((*http = parent_http_socket(conf.c_listen_addr,
	    conf.c_listen_port)) == -1) {
		saved = errno;
		(void)unlink(conf.c_socket);
		errno = saved;
		fatal("listen on %s port %u", conf.c_listen_addr,
		    (unsigned)conf.c_listen_port);
	}
}

/* Each child by fork and re-exec of exe, on its channel to us. */
static void
parent_exec_children(const char *exe)
{
	struct proc_args pa;
	enum fenced_proc p;
	int		 sp[2];

	memset(&pa, 0, sizeof(pa));
	pa.pa_debug = debug;
	pa.pa_verbose = conf.c_verbose;
	pa.pa_uid = conf.c_uid;
	pa.pa_gid = conf.c_gid;
	pa.pa_state = conf.c_state;
	pa.pa_id = daemon_id;

	for (p = PROC_BROKER; p < PROC_MAX; p++) {
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0,
		    sp) == -1)
			fatal("socketpair");
		children[p].c_pid = proc_exec(exe, p, sp[1], &pa);
		close(sp[1]);
		if ((children[p].c_iev = imsgev_new(evbase, sp[0],
		    parent_dispatch, parent_closed, &children[p])) == NULL)
			fatal("imsgev_new");
	}
}

/* IMSG_PEER_FD to p and q: each end names the other. */
static void
parent_send_peer_fd(enum fenced_proc to, enum fenced_proc other, int fd)
{
	void		*buf;
	size_t		 len;

	if (msg_u32_encode(other, &buf, &len) == -1)
		fatal("encode");
	parent_compose(to, IMSG_PEER_FD, fd, buf, len);
	free(buf);
}

/* A channel between two children only where both declare it. */
static void
parent_connect_peers(void)
{
	enum fenced_proc p, q;
	int		 sp[2];

	for (p = PROC_BROKER; p < PROC_MAX; p++) {
		for (q = p + 1; q < PROC_MAX; q++) {
			if (!proc_declares(fenced_procs[p], q))
				continue;
			if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0,
			    sp) == -1)
				fatal("socketpair");
			parent_send_peer_fd(p, q, sp[0]);
			parent_send_peer_fd(q, p, sp[1]);
		}
	}
}

static void
parent_send_listener(uint32_t which, int fd)
{
	void		*buf;
	size_t		 len;

	if (msg_u32_encode(which, &buf, &len) == -1)
		fatal("encode");
	parent_compose(PROC_BROKER, IMSG_LISTEN_FD, fd, buf, len);
	free(buf);
}

/* The stored host tokens, before the broker serves anyone. */
static void
parent_send_tokens(void)
{
	void		*buf;
	size_t		 len, i;

	for (i = 0; i < ntokens; i++) {
		if (msg_token_encode(&tokens[i], &buf, &len) == -1)
			fatal("encode");
		parent_compose(PROC_BROKER, IMSG_TOKEN_LOAD, -1, buf, len);
		free(buf);
	}
}

/* Every process's pid and the start time, for `fencectl show stats'. */
static void
parent_send_procinfo(void)
{
	struct msg_procinfo pi;
	enum fenced_proc p;
	void		*buf;
	size_t		 len;

	memset(&pi, 0, sizeof(pi));
	pi.pi_pid[PROC_PARENT] = getpid();
	for (p = PROC_BROKER; p < PROC_MAX; p++)
		pi.pi_pid[p] = children[p].c_pid;
	pi.pi_started = time(NULL);
	if (msg_procinfo_encode(&pi, &buf, &len) == -1)
		fatal("encode");
	parent_compose(PROC_BROKER, IMSG_PROC_INFO, -1, buf, len);
	free(buf);
}

/*
 * The start-up, in order: every child has its configuration, its peers
 * and (the broker) its sockets, tokens and the pids before IMSG_START.
 */
static void
parent_start_children(const char *exe)
{
	enum fenced_proc p;
	int		 ctl, http;

	parent_check_peers();
	parent_listen(&ctl, &http);
	parent_exec_children(exe);
	parent_send_config();
	parent_connect_peers();
	parent_send_listener(LISTEN_CONTROL, ctl);
	parent_send_listener(LISTEN_HTTP, http);
	parent_send_tokens();
	parent_send_procinfo();
	for (p = PROC_BROKER; p < PROC_MAX; p++)
		parent_compose(p, IMSG_START, -1, NULL, 0);
}

static void
parent_send_config(void)
{
	enum fenced_proc p;
	void		*buf;
	size_t		 len;

	if (msg_config_encode(&conf, &buf, &len) == -1)
		fatal("%s: encode", __func__);
	for (p = PROC_BROKER; p < PROC_MAX; p++)
		parent_compose(p, IMSG_CONFIG, -1, buf, len);
	free(buf);
}

static enum fenced_proc
child_proc(struct child *c)
{
	return ((enum fenced_proc)(c - children));
}

static void
parent_dispatch(struct imsgev *iev, struct imsg *imsg, void *arg)
{
	enum fenced_proc from = child_proc(arg);
	const struct parent_req *pr;
	struct parent_req_use *pu;
	time_t		 now;
	size_t		 i;

	for (i = 0; i < NREQS; i++) {
		pr = &parent_reqs[i];
		pu = &parent_req_use[i];
		if (pr->pr_from != from || pr->pr_type != imsg->hdr.ih_type)
			continue;
		now = time(NULL);
		if (now - pu->pu_window >= REQ_WINDOW_SEC) {
			pu->pu_window = now;
			pu->pu_count = 0;
		}
		if (++pu->pu_count > pr->pr_max) {
			/* Said once a window: a flood floods no log. */
			if (pu->pu_count == pr->pr_max + 1)
				log_warnx("%s: %s asks %s too often, refused",
				    __func__, proc_name(from),
				    msg_type_name(imsg->hdr.ih_type));
			/* Answered where the asker waits (parent_reqs[]). */
			if (pr->pr_refuse != NULL)
				pr->pr_refuse(from, imsg);
			return;
		}
		pr->pr_fn(from, imsg);
		return;
	}
	fatalx("%s: %s sent %s, which it may not", __func__, proc_name(from),
	    msg_type_name(imsg->hdr.ih_type));
}

static void
req_log_verbose(enum fenced_proc from, struct imsg *imsg)
{
	enum fenced_proc p;
	int32_t		 v;

	if (msg_i32_decode(imsg->data, imsg->len, &v, 0, 3) == -1)
		fatalx("%s: bad payload from %s", __func__, proc_name(from));
	log_setverbose(v);
	conf.c_verbose = v;
	for (p = PROC_BROKER; p < PROC_MAX; p++)
		if (p != from)
			parent_compose(p, IMSG_LOG_LEVEL, -1, imsg->data,
			    imsg->len);
	log_info("log %s", v ? "verbose" : "brief");
}

/*
 * A user's new host token of a name, as its hash, or the deletion of
 * one: change that line, write the file, and say whether it is
 * stored.  On failure the table is put back as it was, so the file and
 * the broker keep agreeing.
 */
static void
req_token_store(enum fenced_proc from, struct imsg *imsg)
{
	struct msg_token t, old;
	uint32_t	 result = 0;
	void		*buf;
	size_t		 len;
	ssize_t		 i;
	int		 added = 0;

	if (msg_token_decode(imsg->data, imsg->len, &t) == -1)
		fatalx("%s: bad payload from %s", __func__, proc_name(from));
	memset(&old, 0, sizeof(old));
	i = parent_token_find(t.tk_uid, t.tk_name);
	if (t.tk_delete) {
		if (i == -1)
			result = ENOENT;
		else {
			old = tokens[i];
			tokens[i] = tokens[--ntokens];
			if (parent_tokens_save(conf.c_state) == -1) {
				result = errno;
				tokens[ntokens++] = tokens[i];
				tokens[i] = old;
			}
		}
	} else if (i == -1 && ntokens == HOSTTOKEN_MAX)
		result = ENOSPC;
	else {
		if (i == -1) {
			i = ntokens++;
			added = 1;
		} else
			old = tokens[i];
		tokens[i] = t;
		if (parent_tokens_save(conf.c_state) == -1) {
			result = errno;
			if (added)
				ntokens--;
			else
				tokens[i] = old;
		}
	}
	if (result != 0)
		log_warnx("host token \"%s\" of uid %u not %s: %s", t.tk_name,
		    (unsigned)t.tk_uid, t.tk_delete ? "deleted" : "stored",
		    strerror(result));
	else
		log_info("host token \"%s\" of uid %u %s", t.tk_name,
		    (unsigned)t.tk_uid, t.tk_delete ? "deleted" : added ?
		    "stored" : "replaced");
	explicit_bzero(&old, sizeof(old));
	if (msg_u32_encode(result, &buf, &len) == -1)
		fatal("%s: encode", __func__);
	if (imsgev_compose(children[from].c_iev, IMSG_TOKEN_STORED,
	    imsg->hdr.ih_peerid, 0, -1, buf, len) == -1)
		fatal("%s: compose", __func__);
	free(buf);
}

/* A host token asked too often: not stored, and the broker hears why. */
static void
req_token_refuse(enum fenced_proc from, struct imsg *imsg)
{
	void	*buf;
	size_t	 len;

	if (msg_u32_encode(EBUSY, &buf, &len) == -1)
		fatal("%s: encode", __func__);
	if (imsgev_compose(children[from].c_iev, IMSG_TOKEN_STORED,
	    imsg->hdr.ih_peerid, 0, -1, buf, len) == -1)
		fatal("%s: compose", __func__);
	free(buf);
}

/*
 * An event for the audit log.  A payload that does not decode is a
 * broker that lies, as for every other request: fatal.
 */
static void
req_audit(enum fenced_proc from, struct imsg *imsg)
{
	struct msg_audit a;

	if (msg_audit_decode(imsg->data, imsg->len, &a) == -1)
		fatalx("%s: bad payload from %s", __func__, proc_name(from));
	audit_write(&a);
}

static void
req_audit_refuse(enum fenced_proc from, struct imsg *imsg)
{
	(void)from;
	(void)imsg;
	audit_refused();
}

struct audit_reader {
	enum fenced_proc	 ar_to;
	uint32_t		 ar_peerid;
};

static void
req_audit_line(void *arg, const char *line)
{
	struct audit_reader *ar = arg;
	struct msg_audit_line l;
	void		*buf;
	size_t		 len;

	l.al_line = (char *)line;
	if (msg_audit_line_encode(&l, &buf, &len) == -1)
		return;		/* not a line we wrote: not shown */
	if (imsgev_compose(children[ar->ar_to].c_iev, IMSG_AUDIT_LINE,
	    ar->ar_peerid, 0, -1, buf, len) == -1)
		fatal("%s: compose", __func__);
	free(buf);
}

/* `fencectl show audit': the asker's lines, then the end. */
static void
req_audit_read(enum fenced_proc from, struct imsg *imsg)
{
	struct msg_audit_read r;
	struct audit_reader ar;

	if (msg_audit_read_decode(imsg->data, imsg->len, &r) == -1)
		fatalx("%s: bad payload from %s", __func__, proc_name(from));
	ar.ar_to = from;
	ar.ar_peerid = imsg->hdr.ih_peerid;
	audit_read(r.ar_uid, r.ar_admin, r.ar_count, req_audit_line, &ar);
	req_audit_read_end(from, imsg);
}

static void
req_audit_read_end(enum fenced_proc from, struct imsg *imsg)
{
	if (imsgev_compose(children[from].c_iev, IMSG_AUDIT_END,
	    imsg->hdr.ih_peerid, 0, -1, NULL, 0) == -1)
		fatal("%s: compose", __func__);
}

/* The answer to the broker's IMSG_RELOAD (peerid: its request). */
static void
req_reload_answer(enum fenced_proc from, uint32_t peerid, const char *code,
    const char *why)
{
	void	*buf;
	size_t	 len;

	if (msg_error_format(&buf, &len, code, "%s", why) == -1)
		fatal("%s: encode", __func__);
	if (imsgev_compose(children[from].c_iev, IMSG_RELOADED, peerid, 0, -1,
	    buf, len) == -1)
		fatal("%s: compose", __func__);
	free(buf);
}

static void
req_reload(enum fenced_proc from, struct imsg *imsg)
{
	/* Cut to fit at a character's edge by msg_error_format(). */
	char	 why[4 * MSG_ERROR_TEXT_MAX];

	if (msg_empty_decode(imsg->data, imsg->len) == -1)
		fatalx("%s: bad payload from %s", __func__, proc_name(from));
	if (parent_reload(why, sizeof(why)) == -1)
		req_reload_answer(from, imsg->hdr.ih_peerid, "config-invalid",
		    why);
	else
		req_reload_answer(from, imsg->hdr.ih_peerid, "ok", "");
}

static void
req_reload_refuse(enum fenced_proc from, struct imsg *imsg)
{
	req_reload_answer(from, imsg->hdr.ih_peerid, "busy", "reload asked "
	    "too often; the configuration is unchanged, try again later");
}

/*
 * Reload: a file that does not parse changes nothing.  What the running
 * processes were built on (sockets, state, user) needs a restart.
 * Returns 0, or -1 with why (len > 0) saying what is wrong, in the
 * words of the log.
 */
static int
parent_reload(char *why, size_t len)
{
	struct fenced_config nc;
	char		 kept[2 * MSG_ERROR_TEXT_MAX];
	int		 bad;

	config_defaults(&nc);
	log_keep(kept, sizeof(kept));
	bad = (conffile_given || access(conffile, F_OK) == 0) &&
	    config_parse(conffile, &nc) == -1;
	log_keep(NULL, 0);
	if (bad) {
		log_warnx("reload: %s not valid, configuration unchanged",
		    conffile);
		snprintf(why, len, "%s not valid, configuration unchanged: %s",
		    conffile, kept[0] != '\0' ? kept : "no reason given");
		return (-1);
	}
	log_keep(kept, sizeof(kept));
	bad = config_env_override(&nc) == -1 || config_resolve(&nc) == -1;
	log_keep(NULL, 0);
	if (bad) {
		log_warnx("reload: configuration unchanged");
		snprintf(why, len, "configuration not valid, unchanged: %s",
		    kept[0] != '\0' ? kept : "no reason given");
		return (-1);
	}
#define KEEP(f, what) do {						\
	if (memcmp(&nc.f, &conf.f, sizeof(nc.f)) != 0) {		\
		log_warnx("reload: %s changed; needs a restart", what);	\
		memcpy(&nc.f, &conf.f, sizeof(nc.f));			\
	}								\
} while (0)
	KEEP(c_listen_addr, "listen address");
	KEEP(c_listen_port, "listen port");
	KEEP(c_socket, "socket");
	KEEP(c_state, "state");
	KEEP(c_user, "user");
	KEEP(c_uid, "user");
	KEEP(c_gid, "user");
	KEEP(c_fence_uid_lo, "fence uids");
	KEEP(c_fence_uid_hi, "fence uids");
	KEEP(c_audit_log, "audit log");
#undef KEEP
	audit_limits(&nc);
	nc.c_verbose = conf.c_verbose;
	conf = nc;
	parent_send_config();
	log_info("configuration reloaded from %s",
	    conffile_given || access(conffile, F_OK) == 0 ? conffile :
	    "built-in defaults");
	return (0);
}

static void
parent_closed(struct imsgev *iev, int error, void *arg)
{
	enum fenced_proc p = child_proc(arg);

	if (error)
		log_warnx("lost channel to %s: %s", proc_name(p),
		    strerror(error));
	else if (!shutting_down)
		log_warnx("lost channel to %s", proc_name(p));
	imsgev_free(iev);
	children[p].c_iev = NULL;
	if (!shutting_down)
		parent_shutdown(1);
}

static void
parent_sig(int sig, short event, void *arg)
{
	char	 why[4 * MSG_ERROR_TEXT_MAX];

	switch (sig) {
	case SIGTERM:
	case SIGINT:
		log_info("exiting on signal %d", sig);
		parent_shutdown(0);
	case SIGHUP:
		log_info("reloading on SIGHUP");
		(void)parent_reload(why, sizeof(why));	/* in the log */
		break;
	case SIGCHLD:
		parent_reap();
		break;
	case SIGPIPE:
		break;
	}
}

static void
child_log_exit(enum fenced_proc p, int status)
{
	if (WIFSIGNALED(status))
		log_warnx("%s (pid %d) terminated by signal %d (%s)",
		    proc_name(p), (int)children[p].c_pid, WTERMSIG(status),
		    strsignal(WTERMSIG(status)));
	else if (WEXITSTATUS(status) != 0 || !shutting_down)
		log_warnx("%s (pid %d) exited with status %d",
		    proc_name(p), (int)children[p].c_pid,
		    WEXITSTATUS(status));
}

static void
parent_reap(void)
{
	enum fenced_proc p;
	pid_t		 pid;
	int		 status, lost = 0;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		for (p = PROC_BROKER; p < PROC_MAX; p++) {
			if (children[p].c_pid != pid || children[p].c_reaped)
				continue;
			children[p].c_reaped = 1;
			children[p].c_status = status;
			child_log_exit(p, status);
			lost = 1;
		}
	}
	if (lost && !shutting_down)
		parent_shutdown(1);
}

/*
 * Shut down in order: ask every child to finish (the fencer stops every
 * fence first), wait, then force what is left.  Exit non-zero when a
 * child was lost.
 */
static void
parent_shutdown(int status)
{
	struct timespec	 ts = { 0, 10 * 1000 * 1000 };
	enum fenced_proc p;
	int		 left, ms, st;
	pid_t		 pid;

	shutting_down = 1;
	for (p = PROC_BROKER; p < PROC_MAX; p++)
		if (!children[p].c_reaped && children[p].c_pid > 0)
			kill(children[p].c_pid, SIGTERM);

	for (ms = 0; ; ms += 10) {
		left = 0;
		while ((pid = waitpid(-1, &st, WNOHANG)) > 0)
			for (p = PROC_BROKER; p < PROC_MAX; p++)
				if (children[p].c_pid == pid &&
				    !children[p].c_reaped) {
					children[p].c_reaped = 1;
					children[p].c_status = st;
					child_log_exit(p, st);
				}
		for (p = PROC_BROKER; p < PROC_MAX; p++)
			if (!children[p].c_reaped && children[p].c_pid > 0)
				left++;
		if (left == 0)
			break;
		if (ms >= SHUTDOWN_GRACE_MS) {
			for (p = PROC_BROKER; p < PROC_MAX; p++)
				if (!children[p].c_reaped &&
				    children[p].c_pid > 0) {
					log_warnx("%s did not exit, killing",
					    proc_name(p));
					kill(children[p].c_pid, SIGKILL);
					waitpid(children[p].c_pid, &st, 0);
					children[p].c_reaped = 1;
				}
			status = 1;
			break;
		}
		nanosleep(&ts, NULL);
	}

	/* Whatever became of the fencer, nothing of its fences stays. */
	daemon_fini(conf.c_state, daemon_id, daemon_lock);
	uids_release(conf.c_fence_uid_lo, conf.c_fence_uid_hi,
	    daemon_id, uids_lock);
	if (conf.c_socket[0] != '\0')
		unlink(conf.c_socket);
	log_info("terminating");
	exit(status);
}
