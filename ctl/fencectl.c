/*
 * fencectl: control fenced through its control socket.  The command
 * line is parsed by parser.c; here it becomes one request, and the
 * answers are printed.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fenced.h"
#include "imsg.h"
#include "log.h"
#include "mp.h"
#include "msg.h"
#include "parser.h"
#include "ctl_procs.h"

#define CTL_TIMEOUT_MS		30000
#define CTL_EXEC_MARGIN_MS	10000	/* beyond the command's timeout */
/*
 * A boot: what the daemon may take for the slowest backend and the
 * first probe (fenced.h), and CTL_TIMEOUT_MS beyond it for the rest
 * (the fence's home and cgroups, the backend's start, the verdict).
 */
#define CTL_BOOT_WAIT_MS	(BOOT_AGENT_WAIT_MAX * 1000 + \
				    PROBE_TIMEOUT_MS + CTL_TIMEOUT_MS)
#define CTL_WAIT_MAX_SEC	86400	/* -w */

/* exec's own statuses (fencectl(8)); otherwise the command's. */
#define CTL_EXIT_TIMEOUT	124	/* exec-timeout, as timeout(1) */
#define CTL_EXIT_OVER_BUDGET	125	/* exec-output-over-budget */
#define CTL_EXIT_NOT_STARTED	126	/* exec-failed, exec-cwd-* */

struct ctl_ctx {
	enum ctl_action	 c_action;
	int		 c_status;	/* exit status */
	int		 c_nfences;
	int		 c_streamed;	/* the output came as CHUNKs */
	int		 c_check_kind;	/* doctor: the last row's kind */
	int		 c_err_open;	/* its stderr so far ends no line */
};

static struct imsgbuf *ctl_ibuf;
static int	 ctl_wait_ms;		/* -w: every wait; 0, the command's */
static const char *ctl_giveup = "";	/* what giving up means, if more */

static void	ctl_usage(void) __attribute__((noreturn));
static int	ctl_request(const struct parse_result *, uint32_t *, void **,
		    size_t *, int *, int);
static int	ctl_run(struct imsgbuf *, struct ctl_ctx *, int);
static void	ctl_show_stats(struct imsg *);
static void	ctl_ports_print(struct imsg *);
static void	ctl_snap_print(struct ctl_ctx *, struct imsg *);
static void	ctl_port_urls(struct imsg *);
static void	ctl_show_fence(struct ctl_ctx *, struct imsg *);
static void	ctl_result(struct ctl_ctx *, struct imsg *);
static void	ctl_chunk(struct ctl_ctx *, struct imsg *);
static int	ctl_exec_status(const char *);
static void	ctl_stdin(int, uint8_t **, size_t *);
static void	ctl_identity(struct imsg *);
static void	ctl_verdict(struct ctl_ctx *, struct imsg *);
static void	ctl_hosttoken(struct imsg *);
static void	ctl_tokeninfo(struct ctl_ctx *, struct imsg *);
static void	ctl_audit_line(struct imsg *);
static int	ctl_put(struct imsgbuf *, const struct parse_result *);
static int	ctl_get(struct imsgbuf *, const struct parse_result *);

static const struct option ctl_longopts[] = {
	{ "help",	no_argument,	NULL,	'h' },
	{ "version",	no_argument,	NULL,	'V' },
	{ "wait",	required_argument, NULL, 'w' },
	{ NULL,		0,		NULL,	0 }
};

static void
ctl_usage(void)
{
	parse_usage(stderr);
	exit(1);
}

static void
ctl_encode_failed(void)
{
	err(1, "encode request");
}

int
main(int argc, char *argv[])
{
	const struct parse_result *res;
	struct ctl_ctx	 ctx;
	const char	*sock = FENCED_SOCKET;
	struct imsgbuf	*ibuf;
	int		 status;
	void		*buf = NULL;
	size_t		 len = 0;
	uint32_t	 type;
	const char	*errstr;
	int		 ch, wait_ms = CTL_TIMEOUT_MS, nostdin = 0;

	log_init(1, 0);
	while ((ch = getopt_long(argc, argv, "+hns:Vw:", ctl_longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'h':
			parse_usage(stdout);
			exit(0);
		case 'n':
			nostdin = 1;
			break;
		case 's':
			sock = optarg;
			break;
		case 'V':
			printf("fencectl %s\n", FENCED_VERSION);
			exit(0);
		case 'w':
			ctl_wait_ms = strtonum(optarg, 1, CTL_WAIT_MAX_SEC,
			    &errstr) * 1000;
			if (errstr != NULL)
				errx(1, "-w %s: %s (seconds, 1 to %d)", optarg,
				    errstr, CTL_WAIT_MAX_SEC);
			break;
		default:
			ctl_usage();
		}
	}
	argc -= optind;
	argv += optind;
	/* term has options of its own, after its KEY (ctl_term.c). */
	if (argc > 0 && strcmp(argv[0], "term") == 0)
		return (ctl_term(sock, argc, argv));
	if (argc > 0 && strcmp(argv[0], "input") == 0)
		return (ctl_input(sock, argc, argv));
	if (argc > 0 && strcmp(argv[0], "follow") == 0)
		return (ctl_follow(sock, argc, argv));
	res = parse(argc, argv);
	if (res->action == CTL_HELP) {
		parse_usage(stdout);
		exit(0);
	}
	if (res->action == CTL_PUT || res->action == CTL_GET) {
		if ((ibuf = imsgbuf_new(ctl_connect(sock))) == NULL)
			err(1, "imsgbuf_new");
		ctl_ibuf = ibuf;
		status = res->action == CTL_PUT ? ctl_put(ibuf, res) :
		    ctl_get(ibuf, res);
		imsgbuf_free(ibuf);
		return (status);
	}
	if (res->action == CTL_FORWARD)
		return (ctl_forward(sock, res));
	if (ctl_request(res, &type, &buf, &len, &wait_ms, nostdin) == -1)
		ctl_encode_failed();
	memset(&ctx, 0, sizeof(ctx));
	ctx.c_action = res->action;

	if ((ibuf = imsgbuf_new(ctl_connect(sock))) == NULL)
		err(1, "imsgbuf_new");
	ctl_ibuf = ibuf;	/* reachable until exit, whichever way */
	if (imsgbuf_compose(ibuf, type, 0, 0, -1, buf, len) == -1 ||
	    imsgbuf_flush(ibuf) == -1)
		err(1, "send");
	free(buf);
	status = ctl_run(ibuf, &ctx, wait_ms);
	imsgbuf_free(ibuf);
	return (status);
}

/* The one request a parsed command is, and how long to wait for it. */
static int
ctl_request(const struct parse_result *res, uint32_t *type, void **buf,
    size_t *len, int *wait_ms, int nostdin)
{
	struct msg_boot	 b;
	struct msg_fence_req q;
	struct msg_exec	 x;
	struct msg_gitconfig g;
	struct msg_gitinit gi;
	struct msg_ctltoken ct;
	struct msg_ports_req ps;
	struct msg_port_ticket pk;
	struct msg_snap	 sq;
	uint32_t	 i;
	int		 r;

	*buf = NULL;
	*len = 0;
	switch (res->action) {
	case CTL_SHOW_STATS:
		*type = IMSG_CTL_SHOW_STATS;
		return (0);
	case CTL_SHOW_METRICS:
		*type = IMSG_CTL_METRICS;
		return (0);
	case CTL_DOCTOR:
		*type = IMSG_CTL_DOCTOR;
		return (0);
	case CTL_SHOW_ENVS:
	case CTL_SHOW_ENV:
	case CTL_STOP:
	case CTL_PROBE:
		memset(&q, 0, sizeof(q));
		q.r_owner = res->owner;
		if (res->key != NULL)
			strlcpy(q.r_key, res->key, sizeof(q.r_key));
		*type = res->action == CTL_STOP ? IMSG_CTL_STOP :
		    res->action == CTL_PROBE ? IMSG_CTL_PROBE : IMSG_CTL_LIST;
		return (msg_fence_req_encode(&q, buf, len));
	case CTL_BOOT:
		/* A fence is booted by its owner, for itself. */
		if (res->owner != MSG_OWNER_NONE)
			errx(1, "boot: name your own fence, KEY alone");
		memset(&b, 0, sizeof(b));
		strlcpy(b.b_key, res->key, sizeof(b.b_key));
		b.b_tier = res->tier;
		b.b_backend = res->backend;
		b.b_inner = res->inner;
		b.b_require = res->require;
		/* L4+runsc: L4 of a fence with the layer inside. */
		if (res->require_inner == INNER_RUNSC) {
			if (res->inner == INNER_NONE)
				errx(1, "boot: require L4+runsc asks for the "
				    "inner boundary, inner none refuses it");
			b.b_inner = INNER_RUNSC;
		}
		b.b_lifetime = res->lifetime;
		b.b_limits.fl_memory = res->memory;
		b.b_limits.fl_pids = res->pids;
		b.b_limits.fl_cpu_milli = res->cpu_milli;
		b.b_cold = res->cold;
		for (i = 0; i < res->negress; i++)
			strlcpy(b.b_egress[i], res->egress[i],
			    sizeof(b.b_egress[i]));
		b.b_negress = res->negress;
		strlcpy(b.b_from_key, res->from_key, sizeof(b.b_from_key));
		strlcpy(b.b_from_snap, res->from_snap, sizeof(b.b_from_snap));
		*type = IMSG_CTL_BOOT;
		*wait_ms = CTL_BOOT_WAIT_MS;
		ctl_giveup = "; the boot is abandoned and fenced stops the "
		    "fence (-w waits longer)";
		return (msg_boot_encode(&b, buf, len));
	case CTL_EXEC:
		memset(&x, 0, sizeof(x));
		x.x_owner = res->owner;
		strlcpy(x.x_key, res->key, sizeof(x.x_key));
		x.x_timeout_ms = res->timeout_ms;
		x.x_max_bytes = res->output;
		if (res->cwd != NULL)
			strlcpy(x.x_cwd, res->cwd, sizeof(x.x_cwd));
		x.x_argv = res->argv;
		x.x_argc = res->argc;
		x.x_undo = res->undo;
		ctl_stdin(nostdin, &x.x_stdin, &x.x_stdin_len);
		/* The output as it comes, then the result. */
		*type = IMSG_CTL_EXEC_STREAM;
		*wait_ms = (x.x_timeout_ms ? x.x_timeout_ms :
		    EXEC_TIMEOUT_MAX) + CTL_EXEC_MARGIN_MS;
		r = msg_exec_encode(&x, buf, len);
		free(x.x_stdin);
		return (r);
	case CTL_GIT_CONFIG:
		memset(&g, 0, sizeof(g));
		g.g_owner = res->owner;
		strlcpy(g.g_key, res->key, sizeof(g.g_key));
		if (res->name != NULL) {
			g.g_set_name = 1;
			strlcpy(g.g_name, res->name, sizeof(g.g_name));
		}
		if (res->email != NULL) {
			g.g_set_email = 1;
			strlcpy(g.g_email, res->email, sizeof(g.g_email));
		}
		*type = IMSG_CTL_GIT_CONFIG;
		return (msg_gitconfig_encode(&g, buf, len));
	case CTL_GIT_INIT:
		memset(&gi, 0, sizeof(gi));
		gi.gi_owner = res->owner;
		strlcpy(gi.gi_key, res->key, sizeof(gi.gi_key));
		if (res->path != NULL)
			strlcpy(gi.gi_path, res->path, sizeof(gi.gi_path));
		*type = IMSG_CTL_GIT_INIT;
		return (msg_gitinit_encode(&gi, buf, len));
	case CTL_LOG_VERBOSE:
	case CTL_LOG_BRIEF:
		*type = IMSG_CTL_LOG_VERBOSE;
		return (msg_i32_encode(res->action == CTL_LOG_VERBOSE ? 1 : 0,
		    buf, len));
	case CTL_RELOAD:
		*type = IMSG_CTL_RELOAD;
		return (0);
	case CTL_SPAWN:
	case CTL_SHOW_PROCS:
	case CTL_SHOW_PROC:
	case CTL_KILL:
		return (ctl_procs_request(res, type, buf, len));
	case CTL_TOKEN:
		/* token -r replaces the caller's token of that name. */
		memset(&ct, 0, sizeof(ct));
		ct.ct_op = res->delete ? CTLTOKEN_DELETE : res->replace ?
		    CTLTOKEN_REPLACE : CTLTOKEN_MINT;
		strlcpy(ct.ct_name, res->token != NULL ? res->token :
		    HOSTTOKEN_NAME_DEFAULT, sizeof(ct.ct_name));
		*type = IMSG_CTL_TOKEN;
		return (msg_ctltoken_encode(&ct, buf, len));
	case CTL_SHOW_TOKENS:
		*type = IMSG_CTL_SHOW_TOKENS;
		return (0);
	case CTL_SHOW_AUDIT:
		*type = IMSG_CTL_SHOW_AUDIT;
		return (msg_u32_encode(res->lines != 0 ? res->lines :
		    AUDIT_SHOW_DEFAULT, buf, len));
	case CTL_PORTS:
		memset(&ps, 0, sizeof(ps));
		ps.ps_owner = res->owner;
		strlcpy(ps.ps_key, res->key, sizeof(ps.ps_key));
		*type = IMSG_CTL_PORTS;
		return (msg_ports_req_encode(&ps, buf, len));
	case CTL_SNAPSHOT:
	case CTL_SHOW_SNAPS:
	case CTL_DELETE_SNAP:
	case CTL_RESTORE:
	case CTL_UNDO:
		memset(&sq, 0, sizeof(sq));
		sq.s_owner = res->owner;
		if (res->key != NULL)
			strlcpy(sq.s_key, res->key, sizeof(sq.s_key));
		if (res->snap != NULL)
			strlcpy(sq.s_name, res->snap, sizeof(sq.s_name));
		sq.s_op = res->action == CTL_SNAPSHOT ? SNAP_CREATE :
		    res->action == CTL_SHOW_SNAPS ? SNAP_LIST :
		    res->action == CTL_DELETE_SNAP ? SNAP_DELETE :
		    res->action == CTL_RESTORE ? SNAP_RESTORE : SNAP_UNDO;
		*type = IMSG_CTL_SNAP;
		/* A home is copied: as long as a boot may take. */
		*wait_ms = CTL_BOOT_WAIT_MS;
		return (msg_snap_encode(&sq, buf, len));
	case CTL_PORT:
		memset(&pk, 0, sizeof(pk));
		pk.pk_owner = res->owner;
		pk.pk_port = res->port;
		strlcpy(pk.pk_key, res->key, sizeof(pk.pk_key));
		*type = IMSG_CTL_PORT_TICKET;
		return (msg_port_ticket_encode(&pk, buf, len));
	default:
		ctl_usage();
	}
}

/*
 * exec's standard input, whole, as ssh does: none (the command reads
 * end of file) with -n or when it is a terminal, else all of it until
 * its end, at most MSG_STDIN_MAX bytes: more is refused, never cut.
 */
static void
ctl_stdin(int nostdin, uint8_t **bufp, size_t *lenp)
{
	uint8_t		*buf;
	size_t		 len = 0;
	ssize_t		 n;

	*bufp = NULL;
	*lenp = 0;
	if (nostdin || isatty(STDIN_FILENO))
		return;
	if ((buf = malloc(MSG_STDIN_MAX + 1)) == NULL)
		err(1, "malloc");
	for (;;) {
		n = read(STDIN_FILENO, buf + len, MSG_STDIN_MAX + 1 - len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			/* Closed, or not readable: no input, as -n. */
			if (errno == EBADF)
				break;
			err(1, "standard input");
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len > MSG_STDIN_MAX)
			errx(1, "standard input is larger than %d bytes; not "
			    "sent (use -n, or copy it into the fence)",
			    MSG_STDIN_MAX);
	}
	if (len == 0) {
		free(buf);
		return;
	}
	*bufp = buf;
	*lenp = len;
}

/* The control socket, or exit saying what to do about it. */
int
ctl_connect(const char *path)
{
	int	 fd;

	if ((fd = unix_connect(path)) != -1)
		return (fd);
	switch (errno) {
	case ENOENT:
	case ECONNREFUSED:
		errx(1, "cannot reach fenced at %s: %s; is fenced running? "
		    "start it (`make run' in its source, or `systemctl start "
		    "fenced'), or name its socket with -s SOCKET", path,
		    strerror(errno));
	case EACCES:
	case EPERM:
		errx(1, "cannot reach fenced at %s: %s; the socket is for "
		    "every user (mode 0666), so the path to it or its mode "
		    "keeps you out: ask who runs fenced, or name another "
		    "with -s SOCKET", path, strerror(errno));
	default:
		err(1, "cannot reach fenced at %s", path);
	}
}

/*
 * The next answer, waiting at most wait_ms (-w's, if given) for each
 * read: a daemon that says nothing that long is given up on.
 */
void
ctl_wait(struct imsgbuf *ibuf, struct imsg *imsg, int wait_ms)
{
	struct pollfd	 pfd;
	ssize_t		 n;
	int		 r;

	if (ctl_wait_ms != 0)
		wait_ms = ctl_wait_ms;
	for (;;) {
		if ((r = imsgbuf_get(ibuf, imsg)) == -1)
			err(1, "bad reply from fenced");
		if (r == 1)
			return;
		pfd.fd = imsgbuf_fd(ibuf);
		pfd.events = POLLIN;
		if ((r = poll(&pfd, 1, wait_ms)) == -1) {
			if (errno == EINTR)
				continue;
			err(1, "poll");
		}
		if (r == 0)
			errx(1, "no reply from fenced in %d ms%s", wait_ms,
			    ctl_giveup);
		if ((n = imsgbuf_read(ibuf)) == -1) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			err(1, "read");
		}
		if (n == 0)
			errx(1, "fenced closed the connection");
	}
}

static int
ctl_run(struct imsgbuf *ibuf, struct ctl_ctx *ctx, int wait_ms)
{
	struct imsg	 imsg;
	struct msg_error e;

	for (;;) {
		ctl_wait(ibuf, &imsg, wait_ms);
		switch (imsg.hdr.ih_type) {
		case IMSG_CTL_END:
			imsg_free(&imsg);
			if (ctx->c_action == CTL_SHOW_ENV &&
			    ctx->c_nfences == 0 && ctx->c_status == 0) {
				fprintf(stderr, "fencectl: not-found: no such "
				    "fence\n");
				return (1);
			}
			if (ctx->c_action == CTL_SHOW_TOKENS &&
			    ctx->c_nfences == 0 && ctx->c_status == 0)
				fprintf(stderr, "no host tokens; `fencectl "
				    "token [NAME]' makes one\n");
			return (ctx->c_status);
		case IMSG_CTL_OK:
			break;
		case IMSG_CTL_ERROR:
			if (msg_error_decode(imsg.data, imsg.len, &e) == -1)
				errx(1, "bad error reply");
			ctl_error(e.e_code, e.e_message);
			ctx->c_status = ctx->c_action == CTL_EXEC ?
			    ctl_exec_status(e.e_code) : 1;
			break;
		case IMSG_CTL_STATS:
			ctl_show_stats(&imsg);
			break;
		case IMSG_CTL_FENCE:
			ctl_show_fence(ctx, &imsg);
			break;
		case IMSG_CTL_RESULT:
			ctl_result(ctx, &imsg);
			break;
		case IMSG_CTL_CHUNK:
			ctl_chunk(ctx, &imsg);
			break;
		case IMSG_CTL_GIT_IDENTITY:
			ctl_identity(&imsg);
			break;
		case IMSG_CTL_VERDICT:
			ctl_verdict(ctx, &imsg);
			break;
		case IMSG_CTL_HOSTTOKEN:
			ctl_hosttoken(&imsg);
			break;
		case IMSG_CTL_TOKENINFO:
			ctl_tokeninfo(ctx, &imsg);
			break;
		case IMSG_CTL_AUDIT:
			ctl_audit_line(&imsg);
			break;
		case IMSG_CTL_PROC:
			ctl_proc(ctx->c_action, &imsg, &ctx->c_nfences);
			break;
		case IMSG_CTL_PORT_LIST:
			ctl_ports_print(&imsg);
			break;
		case IMSG_CTL_PORT_URLS:
			ctl_port_urls(&imsg);
			break;
		case IMSG_CTL_SNAP_INFO:
			ctl_snap_print(ctx, &imsg);
			break;
		case IMSG_CTL_CHECK:
			if (ctl_doctor_print(&imsg, &ctx->c_check_kind))
				ctx->c_status = 1;
			break;
		default:
			errx(1, "unexpected reply %s",
			    msg_type_name(imsg.hdr.ih_type));
		}
		imsg_free(&imsg);
	}
}

/*
 * fencectl port: the path form's URL (with the host token), then the
 * host form's ticket URL, good once, for a browser.
 */
static void
ctl_port_urls(struct imsg *imsg)
{
	struct msg_port_ticket pk;

	if (msg_port_ticket_decode(imsg->data, imsg->len, &pk) == -1)
		errx(1, "bad port reply");
	printf("%s\n%s\n", pk.pk_path, pk.pk_url);
	if (isatty(STDOUT_FILENO))
		fprintf(stderr, "fencectl: the first URL takes the host token "
		    "(%s); the second opens the port in a browser, once, "
		    "within %u s\n", "x-voicebox-host-token",
		    (unsigned)(pk.pk_expires_ms / 1000));
	explicit_bzero(&pk, sizeof(pk));
}

/*
 * A snapshot, one a line: KEY@NAME, its bytes and files, when, what it
 * shares; the listing has a header, as show environments does.
 */
static void
ctl_snap_print(struct ctl_ctx *ctx, struct imsg *imsg)
{
	struct msg_snap_info si;
	char		 when[32], what[2 * FENCE_KEY_SIZE + 2];
	const char	*done;
	time_t		 t;
	struct tm	 tm;

	if (msg_snap_info_decode(imsg->data, imsg->len, &si) == -1)
		errx(1, "bad snapshot reply");
	t = (time_t)si.sn_created;
	if (localtime_r(&t, &tm) == NULL ||
	    strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm) == 0)
		strlcpy(when, "?", sizeof(when));
	snprintf(what, sizeof(what), "%s@%s", si.sn_key, si.sn_name[0] ?
	    si.sn_name : "(undo)");
	switch (ctx->c_action) {
	case CTL_SHOW_SNAPS:
		if (ctx->c_nfences++ == 0)
			printf("%-32s %12s %8s %-19s %8s %s\n", "SNAPSHOT",
			    "BYTES", "FILES", "TAKEN", "BRANCHES", "HOW");
		printf("%-32s %12llu %8llu %-19s %8u %s\n", what,
		    (unsigned long long)si.sn_bytes,
		    (unsigned long long)si.sn_files, when,
		    (unsigned)si.sn_branches, si.sn_how);
		return;
	case CTL_DELETE_SNAP:
		done = "deleted";
		break;
	case CTL_RESTORE:
		done = "restored";
		break;
	case CTL_UNDO:
		done = "undone to the home before the last exec ... undo";
		printf("%s: %s (%llu bytes, %llu files, %.1f ms)\n",
		    si.sn_key, done, (unsigned long long)si.sn_bytes,
		    (unsigned long long)si.sn_files, si.sn_us / 1000.0);
		return;
	default:
		done = "taken";
		break;
	}
	printf("%s: %s (%llu bytes, %llu files, %s, %.1f ms%s)\n", what, done,
	    (unsigned long long)si.sn_bytes, (unsigned long long)si.sn_files,
	    si.sn_how, si.sn_us / 1000.0, si.sn_frozen ? ", paused" : "");
}

/* fencectl ports: one port a line, ascending. */
static void
ctl_ports_print(struct imsg *imsg)
{
	struct msg_portlist pl;
	uint32_t	 i;

	if (msg_portlist_decode(imsg->data, imsg->len, &pl) == -1)
		errx(1, "bad ports reply");
	for (i = 0; i < pl.pl_count; i++)
		printf("%u\n", (unsigned)pl.pl_ports[i]);
	if (pl.pl_truncated)
		fprintf(stderr, "fencectl: more than %d ports listen; the "
		    "first %d are shown\n", MSG_PORTS_MAX, MSG_PORTS_MAX);
}

static void
ctl_show_stats(struct imsg *imsg)
{
	struct msg_stats st;
	enum fenced_proc p;
	int64_t		 up;
	int		 i;

	if (msg_stats_decode(imsg->data, imsg->len, &st) == -1)
		errx(1, "bad statistics reply");
	printf("processes:\n");
	for (p = PROC_PARENT; p < PROC_MAX; p++)
		printf("  %-8s pid %d\n", proc_name(p), (int)st.st_pid[p]);
	up = st.st_now - st.st_started;
	if (up < 0)
		up = 0;
	printf("uptime: %lldd %02lld:%02lld:%02lld\n", (long long)up / 86400,
	    (long long)(up % 86400) / 3600, (long long)(up % 3600) / 60,
	    (long long)up % 60);
	printf("control: %llu connections (%llu open), %llu requests, "
	    "%llu errors\n", (unsigned long long)st.st_ctl_conns,
	    (unsigned long long)st.st_ctl_active,
	    (unsigned long long)st.st_ctl_requests,
	    (unsigned long long)st.st_ctl_errors);
	printf("fences: %llu running\n", (unsigned long long)st.st_fences);
	for (i = 0; i < 3; i++) {
		const struct msg_pool_tier *pt = &st.st_pool.p_tier[i];

		if (pt->pt_size == 0 && pt->pt_taken == 0 &&
		    pt->pt_failed == 0)
			continue;
		printf("pool %s: %u of %u ready, %llu taken, %llu refilled, "
		    "%llu failed\n", tier_name(TIER_L1 + i), pt->pt_ready,
		    pt->pt_size, (unsigned long long)pt->pt_taken,
		    (unsigned long long)pt->pt_refilled,
		    (unsigned long long)pt->pt_failed);
	}
	printf("log: %s\n", st.st_verbose ? "verbose" : "brief");
}

/* The owner's name, or its uid where it has none. */
static const char *
ctl_owner_name(uid_t uid)
{
	static char	 buf[16];
	struct passwd	*pw;

	if ((pw = getpwuid(uid)) != NULL)
		return (pw->pw_name);
	snprintf(buf, sizeof(buf), "%u", (unsigned)uid);
	return (buf);
}

static void
ctl_show_fence(struct ctl_ctx *ctx, struct imsg *imsg)
{
	struct msg_fence f;
	const struct msg_timings *t = &f.f_timings;
	time_t		 now = time(NULL);
	long long	 left;

	if (msg_fence_decode(imsg->data, imsg->len, &f) == -1)
		errx(1, "bad fence reply");
	left = f.f_deadline > now ? (long long)(f.f_deadline - now) : 0;
	if (ctx->c_action == CTL_SHOW_ENVS && ctx->c_nfences == 0)
		printf("%-24s %-12s %-5s %-8s %-8s %-8s %s\n", "KEY", "OWNER",
		    "TIER", "BACKEND", "STATE", "PID", "LEFT");
	ctx->c_nfences++;
	if (ctx->c_action == CTL_SHOW_ENVS) {
		printf("%-24s %-12s %-5s %-8s %-8s %-8d %llds\n", f.f_key,
		    ctl_owner_name(f.f_owner), tier_name(f.f_tier),
		    backend_name(f.f_backend), fence_state_name(f.f_state),
		    (int)f.f_pid, left);
		return;
	}
	if (ctx->c_action == CTL_STOP) {
		printf("stopped %s%s%s\n", f.f_owner == getuid() ? "" :
		    ctl_owner_name(f.f_owner), f.f_owner == getuid() ? "" : "/",
		    f.f_key);
		return;
	}
	printf("key:      %s\n", f.f_key);
	/* The name fenced read at boot; else this host's, if any. */
	printf("owner:    %s, uid %u (runs as uid %u)\n",
	    f.f_owner_name[0] != '\0' ? f.f_owner_name :
	    ctl_owner_name(f.f_owner), (unsigned)f.f_owner, (unsigned)f.f_uid);
	printf("tier:     %s\n", tier_name(f.f_tier));
	printf("backend:  %s\n", backend_name(f.f_backend));
	printf("inner:    %s\n", f.f_inner ? "runsc (gVisor inside the guest)" :
	    "none");
	printf("state:    %s", fence_state_name(f.f_state));
	if (stop_reason_name(f.f_reason) != NULL)
		printf(" (%s)", stop_reason_name(f.f_reason));
	printf("\n");
	printf("level:    %s\n", level_name(f.f_level));
	/*
	 * Both layers of an inner fence: an inner fence whose report shows
	 * a Linux kernel measures not-earned (docs/probe.md), so L4 says
	 * the probe's reading found gVisor's inside the guest's.
	 */
	if (f.f_kernel != MSG_KERNEL_UNMEASURED)
		printf("kernel:   %s%s%s%s\n", f.f_kernel == MSG_KERNEL_SEPARATE ?
		    "separate" : "shared", f.f_kernel_release[0] != '\0' ?
		    ", release " : "", f.f_kernel_release, f.f_inner &&
		    f.f_kernel == MSG_KERNEL_SEPARATE && f.f_level == LEVEL_L4 ?
		    ": the guest's kernel (vm), commands on gVisor's sentry "
		    "inside it" : "");
	/* Printable, as the codec holds it: the prober's line. */
	if (f.f_surface[0] != '\0')
		printf("surface:  %s\n", f.f_surface);
	if (f.f_accel != MSG_ACCEL_NONE)
		printf("accel:    %s\n", f.f_accel == MSG_ACCEL_KVM ? "kvm" :
		    "tcg");
	printf("pid:      %d\n", (int)f.f_pid);
	printf("home:     %s\n", f.f_home);
	if (f.f_from[0] != '\0')
		printf("from:     %s (a branch: its home an overlay on it)\n",
		    f.f_from);
	if (f.f_home_limit != 0)
		printf("home use: %lluK of %lluK\n",
		    (unsigned long long)(f.f_home_used >> 10),
		    (unsigned long long)(f.f_home_limit >> 10));
	if (f.f_started > 0)
		ctl_when("started:", f.f_started, now);
	ctl_when("deadline:", f.f_deadline, now);
	if (f.f_denials_outside > 0)
		printf("denied:   %llu outside any command (docs/denials.md)\n",
		    (unsigned long long)f.f_denials_outside);
	printf("limits:   memory %lluM, pids %u, cpu %.2f\n",
	    (unsigned long long)(f.f_limits.fl_memory >> 20),
	    f.f_limits.fl_pids, f.f_limits.fl_cpu_milli / 1000.0);
	printf("landlock: ");
	if (f.f_landlock_abi == 0)
		printf("not available\n");
	else
		printf("ABI %d:%s%s%s%s%s\n", f.f_landlock_abi,
		    f.f_landlock & 0x01 ? " filesystem" : "",
		    f.f_landlock & 0x02 ? " abstract-sockets" : "",
		    f.f_landlock & 0x04 ? " signals" : "",
		    f.f_landlock & 0x08 ? " network" : "",
		    f.f_landlock == 0 ? " none applied" : "");
	printf("timings:  namespaces %u us, mounts %u us, cgroup %u us, "
	    "seccomp %u us, exec %u us, agent ready %u us\n",
	    t->t_namespaces_us, t->t_mounts_us, t->t_cgroup_us,
	    t->t_seccomp_us, t->t_exec_us, t->t_agent_us);
	if (f.f_pooled)
		printf("pooled:   yes, the take %u us\n", t->t_take_us);
	else
		printf("pooled:   no\n");
	if (f.f_negress > 0) {
		const struct msg_egress_counts *n = &f.f_egress_n;
		uint32_t	 i;

		/* The entries are canonical: printable, no spaces. */
		printf("egress:   proxy 127.0.0.1:%d for", EGRESS_PROXY_PORT);
		for (i = 0; i < f.f_negress; i++)
			printf(" %s", f.f_egress[i]);
		printf("\n          %llu allowed, %llu refused, %u open, "
		    "%llu bytes up, %llu down\n",
		    (unsigned long long)n->en_allowed,
		    (unsigned long long)n->en_refused, n->en_open,
		    (unsigned long long)n->en_up,
		    (unsigned long long)n->en_down);
	}
}

void
ctl_write_all(int fd, const uint8_t *p, size_t len)
{
	ssize_t	 n;

	while (len > 0) {
		if ((n = write(fd, p, len)) == -1) {
			if (errno == EINTR)
				continue;
			err(1, "write");
		}
		p += n;
		len -= n;
	}
}

/* Output of the command as it runs, where it wrote it. */
static void
ctl_chunk(struct ctl_ctx *ctx, struct imsg *imsg)
{
	struct msg_chunk ch;

	if (msg_chunk_decode(imsg->data, imsg->len, &ch) == -1)
		errx(1, "bad output reply");
	ctx->c_streamed = 1;
	ctl_write_all(ch.ch_stream == MSG_CHUNK_STDOUT ? STDOUT_FILENO :
	    STDERR_FILENO, ch.ch_data, ch.ch_len);
	if (ch.ch_stream != MSG_CHUNK_STDOUT && ch.ch_len > 0)
		ctx->c_err_open = ch.ch_data[ch.ch_len - 1] != '\n';
	msg_chunk_free(&ch);
}

static int
ctl_exec_status(const char *code)
{
	if (strcmp(code, "exec-timeout") == 0)
		return (CTL_EXIT_TIMEOUT);
	if (strcmp(code, "exec-output-over-budget") == 0)
		return (CTL_EXIT_OVER_BUDGET);
	if (strcmp(code, "exec-failed") == 0 ||
	    strncmp(code, "exec-cwd-", 9) == 0)
		return (CTL_EXIT_NOT_STARTED);
	return (1);
}

/*
 * The command's status as ours.  Its output came as chunks already;
 * a result without them (nothing written) has none to print either.
 */
static void
ctl_result(struct ctl_ctx *ctx, struct imsg *imsg)
{
	struct msg_result rs;

	if (msg_result_decode(imsg->data, imsg->len, &rs) == -1)
		errx(1, "bad result reply");
	if (!ctx->c_streamed) {
		ctl_write_all(STDOUT_FILENO, rs.rs_stdout, rs.rs_stdout_len);
		ctl_write_all(STDERR_FILENO, rs.rs_stderr, rs.rs_stderr_len);
		ctx->c_err_open = rs.rs_stderr_len > 0 &&
		    rs.rs_stderr[rs.rs_stderr_len - 1] != '\n';
	}
	/*
	 * What was refused to it (docs/denials.md), after its output, on
	 * lines of their own even when its stderr did not end one.
	 */
	ctl_denials(rs.rs_denials, rs.rs_denials_dropped, ctx->c_err_open);
	if (rs.rs_error[0] != '\0') {
		ctl_error(rs.rs_error, rs.rs_message);
		ctx->c_status = ctl_exec_status(rs.rs_error);
	} else if (rs.rs_signal != 0)
		ctx->c_status = 128 + rs.rs_signal;
	else
		ctx->c_status = rs.rs_exit;
	msg_result_free(&rs);
}

static void
ctl_identity(struct imsg *imsg)
{
	struct msg_gitconfig g;

	if (msg_gitconfig_decode(imsg->data, imsg->len, &g) == -1)
		errx(1, "bad identity reply");
	/* Read from the fence's own git configuration. */
	fputs("user.name: ", stdout);
	ctl_safe(stdout, g.g_name);
	fputs("\nuser.email: ", stdout);
	ctl_safe(stdout, g.g_email);
	putchar('\n');
}

/* The note to stderr, the token alone on stdout: TOKEN=$(fencectl token) */
static void
ctl_hosttoken(struct imsg *imsg)
{
	struct msg_hosttoken h;

	if (msg_hosttoken_decode(imsg->data, imsg->len, &h) == -1)
		errx(1, "bad token reply");
	fprintf(stderr, "host token \"%s\" of uid %u; it is not shown "
	    "again:\n", h.ht_name,
	    (unsigned)h.ht_uid);
	printf("%s\n", h.ht_token);
	fflush(stdout);
	explicit_bzero(&h, sizeof(h));
}

/* show tokens: NAME and when it was made, in UTC; never the secret. */
static void
ctl_tokeninfo(struct ctl_ctx *ctx, struct imsg *imsg)
{
	struct msg_tokeninfo ti;
	struct tm	 tm;
	time_t		 t;
	char		 when[32];

	if (msg_tokeninfo_decode(imsg->data, imsg->len, &ti) == -1)
		errx(1, "bad token list reply");
	if (ctx->c_nfences++ == 0)
		printf("%-32s %s\n", "NAME", "CREATED");
	t = (time_t)ti.ti_created;
	if (gmtime_r(&t, &tm) == NULL ||
	    strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		strlcpy(when, "?", sizeof(when));
	printf("%-32s %s\n", ti.ti_name, when);
}

/* show audit: a line of the log as the parent wrote it. */
static void
ctl_audit_line(struct imsg *imsg)
{
	struct msg_audit_line l;

	if (msg_audit_line_decode(imsg->data, imsg->len, &l) == -1)
		errx(1, "bad audit reply");
	printf("%s\n", l.al_line);
	msg_audit_line_free(&l);
}

/*
 * probe's answer: the measured level, then the verdicts as the prober
 * wrote them; show environment's: one line per axis (ctl_env.c).
 */
static void
ctl_verdict(struct ctl_ctx *ctx, struct imsg *imsg)
{
	struct msg_verdict v;

	if (msg_verdict_decode(imsg->data, imsg->len, &v) == -1)
		errx(1, "bad verdict reply");
	if (ctx->c_action == CTL_SHOW_ENV)
		ctl_boundary(v.v_json);
	else
		printf("level: %s\n%s\n", level_name(v.v_level), v.v_json);
	msg_verdict_free(&v);
}

/*
 * put and get (docs/files.md): one chunk of at most MSG_FILE_CHUNK per
 * request, each answered to its END before the next goes.  An error
 * ends it: its code and message on stderr, status 1.
 */

/* The answers to one request up to its END; -1 after an error. */
static int
ctl_file_wait(struct imsgbuf *ibuf, struct msg_file *fl,
    struct msg_filelist *l, int *got)
{
	struct imsg	 imsg;
	struct msg_error e;
	int		 rv = 0;

	*got = 0;
	for (;;) {
		ctl_wait(ibuf, &imsg, CTL_TIMEOUT_MS + EXEC_TIMEOUT_MAX);
		switch (imsg.hdr.ih_type) {
		case IMSG_CTL_END:
			imsg_free(&imsg);
			return (rv);
		case IMSG_CTL_ERROR:
			if (msg_error_decode(imsg.data, imsg.len, &e) == -1)
				errx(1, "bad error reply");
			ctl_error(e.e_code, e.e_message);
			rv = -1;
			break;
		case IMSG_CTL_FILE:
			if (fl == NULL || *got ||
			    msg_file_decode(imsg.data, imsg.len, fl) == -1)
				errx(1, "bad file reply");
			*got = 1;
			break;
		case IMSG_CTL_FILE_LIST:
			if (l == NULL || *got ||
			    msg_filelist_decode(imsg.data, imsg.len, l) == -1)
				errx(1, "bad listing reply");
			*got = 2;
			break;
		default:
			errx(1, "unexpected reply %s",
			    msg_type_name(imsg.hdr.ih_type));
		}
		imsg_free(&imsg);
	}
}

/* A path goes as a msgpack string: at most PATH_MAX - 1 bytes of UTF-8. */
static void
ctl_file_path(struct msg_file *fl, const char *path)
{
	if (strlcpy(fl->fl_path, path, sizeof(fl->fl_path)) >=
	    sizeof(fl->fl_path))
		errx(1, "%s: path too long", path);
	if (!mp_utf8_valid(path, strlen(path)))
		errx(1, "%s: the path is not UTF-8", path);
}

static void
ctl_file_send(struct imsgbuf *ibuf, uint32_t type, const struct msg_file *fl)
{
	void	*buf = NULL;
	size_t	 len = 0;

	if (fl != NULL && msg_file_encode(fl, &buf, &len) == -1)
		ctl_encode_failed();
	if (imsgbuf_compose(ibuf, type, 0, 0, -1, buf, len) == -1 ||
	    imsgbuf_flush(ibuf) == -1)
		err(1, "send");
	free(buf);
}

/* put KEY LOCAL PATH: LOCAL "-" is standard input. */
static int
ctl_put(struct imsgbuf *ibuf, const struct parse_result *res)
{
	static uint8_t	 chunk[MSG_FILE_CHUNK];
	struct msg_file	 fl, a;
	size_t		 n;
	ssize_t		 r;
	int		 fd, got, eof = 0;

	if (strcmp(res->local, "-") == 0)
		fd = STDIN_FILENO;
	else if ((fd = open(res->local, O_RDONLY | O_CLOEXEC)) == -1)
		err(1, "%s", res->local);
	memset(&fl, 0, sizeof(fl));
	fl.fl_owner = res->owner;
	strlcpy(fl.fl_key, res->key, sizeof(fl.fl_key));
	ctl_file_path(&fl, res->path);
	fl.fl_mode = 0644;
	fl.fl_flags = MSG_FILE_FIRST;
	while (!eof) {
		/* A whole chunk, or what is left: the last one says so. */
		for (n = 0; n < sizeof(chunk); n += r) {
			if ((r = read(fd, chunk + n, sizeof(chunk) - n)) == -1) {
				if (errno == EINTR) {
					r = 0;
					continue;
				}
				err(1, "read %s", res->local);
			}
			if (r == 0) {
				eof = 1;
				break;
			}
		}
		if (eof)
			fl.fl_flags |= MSG_FILE_LAST;
		fl.fl_data = n > 0 ? chunk : NULL;
		fl.fl_data_len = n;
		ctl_file_send(ibuf, IMSG_CTL_FILE_PUT, &fl);
		if (ctl_file_wait(ibuf, &a, NULL, &got) == -1)
			return (1);
		if (got)
			msg_file_free(&a);
		fl.fl_flags &= ~MSG_FILE_FIRST;
		fl.fl_offset += n;
	}
	if (fd != STDIN_FILENO)
		close(fd);
	return (0);
}

/* get KEY PATH LOCAL: LOCAL "-" is standard output; a directory is listed. */
static int
ctl_get(struct imsgbuf *ibuf, const struct parse_result *res)
{
	struct msg_file	 fl, a;
	struct msg_filelist l;
	char		 tmp[PATH_MAX];
	size_t		 i;
	int		 fd, got, last = 0;
	mode_t		 um;
	FILE		*fp;

	memset(&fl, 0, sizeof(fl));
	fl.fl_owner = res->owner;
	strlcpy(fl.fl_key, res->key, sizeof(fl.fl_key));
	ctl_file_path(&fl, res->path);
	ctl_file_send(ibuf, IMSG_CTL_FILE_GET, &fl);
	memset(&l, 0, sizeof(l));
	if (ctl_file_wait(ibuf, &a, &l, &got) == -1)
		return (1);
	if (got == 0)
		errx(1, "no answer to get");
	if (strcmp(res->local, "-") == 0)
		fd = STDOUT_FILENO;
	else {
		/* Whole or not at all: a temporary beside it, then rename. */
		if ((size_t)snprintf(tmp, sizeof(tmp), "%s.fencectl-XXXXXX",
		    res->local) >= sizeof(tmp))
			errx(1, "%s: name too long", res->local);
		if ((fd = mkstemp(tmp)) == -1)
			err(1, "%s", tmp);
		um = umask(0);
		umask(um);
		if (fchmod(fd, 0666 & ~um) == -1)
			err(1, "%s", tmp);
	}
	if (got == 2) {
		if ((fp = fdopen(dup(fd), "w")) == NULL)
			err(1, "fdopen");
		/* Names made inside the fence: nothing raw of them. */
		for (i = 0; i < l.fls_count; i++) {
			fprintf(fp, "%c %04o %12llu ",
			    "?-dlpsco"[l.fls_ents[i].fe_kind & 7],
			    l.fls_ents[i].fe_mode,
			    (unsigned long long)l.fls_ents[i].fe_size);
			ctl_safe(fp, l.fls_ents[i].fe_name);
			fputc('\n', fp);
		}
		if (l.fls_truncated)
			fprintf(fp, "... (more than %d entries)\n",
			    MSG_FILE_LIST_MAX);
		if (fclose(fp) == EOF)
			err(1, "write");
		msg_filelist_free(&l);
		last = 1;
	}
	while (!last) {
		ctl_write_all(fd, a.fl_data, a.fl_data_len);
		last = (a.fl_flags & MSG_FILE_LAST) != 0;
		msg_file_free(&a);
		if (last)
			break;
		ctl_file_send(ibuf, IMSG_CTL_FILE_MORE, NULL);
		if (ctl_file_wait(ibuf, &a, NULL, &got) == -1) {
			if (fd != STDOUT_FILENO)
				unlink(tmp);
			return (1);
		}
		if (got != 1)
			errx(1, "no chunk");
	}
	if (fd != STDOUT_FILENO) {
		if (fsync(fd) == -1 || close(fd) == -1 ||
		    rename(tmp, res->local) == -1) {
			unlink(tmp);
			err(1, "%s", res->local);
		}
	}
	return (0);
}
