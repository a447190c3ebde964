/*
 * fencectl: control fenced through its control socket.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <err.h>
#include <errno.h>
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
#include "msg.h"

#define CTL_TIMEOUT_MS		30000
#define CTL_EXEC_MARGIN_MS	10000	/* beyond the command's timeout */

enum ctl_action {
	CTL_SHOW_STATS = 1,
	CTL_SHOW_ENVS,
	CTL_SHOW_ENV,
	CTL_BOOT,
	CTL_STOP,
	CTL_EXEC,
	CTL_GIT_CONFIG,
	CTL_GIT_INIT,
	CTL_PROBE,
	CTL_LOG_VERBOSE,
	CTL_LOG_BRIEF,
	CTL_RELOAD,
	CTL_TOKEN,
};

/*
 * The commands: their fixed words, then "KEY" when they name a fence,
 * then options (name value pairs) they accept, then "--" and a command.
 */
static const struct ctl_cmd {
	const char	*cc_words;
	enum ctl_action	 cc_action;
	int		 cc_key;		/* takes a KEY */
	const char	*cc_opts;		/* accepted option names */
	int		 cc_argv;		/* -- ARGV... follows */
	int		 cc_pos;		/* one optional word */
	const char	*cc_usage;
} ctl_cmds[] = {
	{ "show stats", CTL_SHOW_STATS, 0, "", 0, 0, "" },
	{ "show environments", CTL_SHOW_ENVS, 0, "", 0, 0, "" },
	{ "show environment", CTL_SHOW_ENV, 1, "", 0, 0, "KEY" },
	{ "boot", CTL_BOOT, 1,
	    "tier backend require lifetime memory pids cpu", 0, 0,
	    "KEY [tier T] [backend B] [require T] [lifetime SEC]\n"
	    "\t     [memory SIZE] [pids N] [cpu CPUS]" },
	{ "stop", CTL_STOP, 1, "", 0, 0, "KEY | all" },
	{ "exec", CTL_EXEC, 1, "timeout cwd output", 1, 0,
	    "KEY [timeout MS] [cwd DIR] [output BYTES] -- ARGV..." },
	{ "git-config", CTL_GIT_CONFIG, 1, "name email", 0, 0,
	    "KEY [name NAME] [email EMAIL]" },
	{ "git-init", CTL_GIT_INIT, 1, "", 0, 1, "KEY [PATH]" },
	{ "probe", CTL_PROBE, 1, "", 0, 0, "KEY" },
	{ "log verbose", CTL_LOG_VERBOSE, 0, "", 0, 0, "" },
	{ "log brief", CTL_LOG_BRIEF, 0, "", 0, 0, "" },
	{ "reload", CTL_RELOAD, 0, "", 0, 0, "" },
	{ "token", CTL_TOKEN, 0, "", 0, 1, "[-r]" },
};
#define NCMDS	(sizeof(ctl_cmds) / sizeof(ctl_cmds[0]))

struct ctl_opts {
	const char	*o_key;
	uid_t		 o_owner;	/* USER/KEY, or MSG_OWNER_NONE */
	const char	*o_pos;
	const char	*o_val[8];
	char		**o_argv;
	int		 o_argc;
};

struct ctl_ctx {
	enum ctl_action	 c_action;
	int		 c_status;	/* exit status */
	int		 c_nfences;
};

static struct imsgbuf *ctl_ibuf;

static void	ctl_usage(void) __attribute__((noreturn));
static const struct ctl_cmd *ctl_parse(int, char **, struct ctl_opts *);
static int	ctl_connect(const char *);
static int	ctl_run(struct imsgbuf *, struct ctl_ctx *, int);
static void	ctl_show_stats(struct imsg *);
static void	ctl_show_fence(struct ctl_ctx *, struct imsg *);
static void	ctl_result(struct ctl_ctx *, struct imsg *);
static void	ctl_identity(struct imsg *);
static void	ctl_verdict(struct imsg *);
static void	ctl_hosttoken(struct imsg *);
static const char *ctl_opt(const struct ctl_cmd *, struct ctl_opts *,
		    const char *);

static void
ctl_usage(void)
{
	size_t	 i;

	fprintf(stderr, "usage: fencectl [-s socket] command [argument ...]\n"
	    "commands:\n");
	for (i = 0; i < NCMDS; i++)
		fprintf(stderr, "\t%s %s\n", ctl_cmds[i].cc_words,
		    ctl_cmds[i].cc_usage);
	exit(1);
}

static uint64_t
ctl_number(const char *what, const char *s, uint64_t min, uint64_t max,
    int sizes)
{
	char		*end;
	unsigned long long v;
	uint64_t	 mult = 1;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (sizes && end != s && end[0] != '\0' && end[1] == '\0') {
		switch (end[0]) {
		case 'K': case 'k': mult = 1ULL << 10; end++; break;
		case 'M': case 'm': mult = 1ULL << 20; end++; break;
		case 'G': case 'g': mult = 1ULL << 30; end++; break;
		}
	}
	if (s[0] == '-' || end == s || *end != '\0' || errno != 0 ||
	    v > max / mult || v * mult < min || v * mult > max)
		errx(1, "%s %s: not a number from %llu to %llu", what, s,
		    (unsigned long long)min, (unsigned long long)max);
	return (v * mult);
}

static uint32_t
ctl_cpus(const char *s)
{
	char	*end;
	double	 d;

	errno = 0;
	d = strtod(s, &end);
	if (end == s || *end != '\0' || errno != 0 ||
	    d * 1000 < CPU_MILLI_MIN || d * 1000 > CPU_MILLI_MAX)
		errx(1, "cpu %s: not a number of cpus from %.2f to %.0f", s,
		    CPU_MILLI_MIN / 1000.0, CPU_MILLI_MAX / 1000.0);
	return ((uint32_t)(d * 1000 + 0.5));
}

static int
ctl_tier(const char *s)
{
	int	 t;

	if ((t = tier_parse(s)) == -1)
		errx(1, "tier %s: not one of L1, L1.5, L2", s);
	return (t);
}

static void
ctl_encode_failed(void)
{
	err(1, "encode request");
}

int
main(int argc, char *argv[])
{
	const struct ctl_cmd *cmd;
	struct ctl_opts	 o;
	struct ctl_ctx	 ctx;
	struct msg_boot	 b;
	struct msg_fence_req q;
	struct msg_exec	 x;
	struct msg_gitconfig g;
	struct msg_gitinit gi;
	const char	*sock = FENCED_SOCKET, *v;
	struct imsgbuf	*ibuf;
	int		 status;
	void		*buf = NULL;
	size_t		 len = 0;
	uint32_t	 type;
	int		 ch, wait_ms = CTL_TIMEOUT_MS;

	log_init(1, 0);
	while ((ch = getopt(argc, argv, "+s:")) != -1) {
		switch (ch) {
		case 's':
			sock = optarg;
			break;
		default:
			ctl_usage();
		}
	}
	argc -= optind;
	argv += optind;
	memset(&o, 0, sizeof(o));
	o.o_owner = MSG_OWNER_NONE;
	if ((cmd = ctl_parse(argc, argv, &o)) == NULL)
		ctl_usage();
	memset(&ctx, 0, sizeof(ctx));
	ctx.c_action = cmd->cc_action;

	switch (cmd->cc_action) {
	case CTL_SHOW_STATS:
		type = IMSG_CTL_SHOW_STATS;
		break;
	case CTL_SHOW_ENVS:
	case CTL_SHOW_ENV:
	case CTL_STOP:
	case CTL_PROBE:
		memset(&q, 0, sizeof(q));
		q.r_owner = o.o_owner;
		if (o.o_key != NULL && !(cmd->cc_action == CTL_STOP &&
		    strcmp(o.o_key, "all") == 0))
			strlcpy(q.r_key, o.o_key, sizeof(q.r_key));
		type = cmd->cc_action == CTL_STOP ? IMSG_CTL_STOP :
		    cmd->cc_action == CTL_PROBE ? IMSG_CTL_PROBE :
		    IMSG_CTL_LIST;
		if (msg_fence_req_encode(&q, &buf, &len) == -1)
			ctl_encode_failed();
		break;
	case CTL_BOOT:
		memset(&b, 0, sizeof(b));
		/* A fence is booted by its owner, for itself. */
		if (o.o_owner != MSG_OWNER_NONE)
			errx(1, "boot: name your own fence, KEY alone");
		strlcpy(b.b_key, o.o_key, sizeof(b.b_key));
		if ((v = ctl_opt(cmd, &o, "tier")) != NULL)
			b.b_tier = ctl_tier(v);
		if ((v = ctl_opt(cmd, &o, "backend")) != NULL &&
		    (b.b_backend = backend_parse(v)) == -1)
			errx(1, "backend %s: not one of native, runsc, vm, "
			    "mock, subprocess", v);
		if ((v = ctl_opt(cmd, &o, "require")) != NULL)
			b.b_require = ctl_tier(v);
		if ((v = ctl_opt(cmd, &o, "lifetime")) != NULL)
			b.b_lifetime = ctl_number("lifetime", v, LIFETIME_MIN,
			    LIFETIME_MAX, 0);
		if ((v = ctl_opt(cmd, &o, "memory")) != NULL)
			b.b_limits.fl_memory = ctl_number("memory", v,
			    MEMORY_MIN, MEMORY_MAX, 1);
		if ((v = ctl_opt(cmd, &o, "pids")) != NULL)
			b.b_limits.fl_pids = ctl_number("pids", v, PIDS_MIN,
			    PIDS_MAX, 0);
		if ((v = ctl_opt(cmd, &o, "cpu")) != NULL)
			b.b_limits.fl_cpu_milli = ctl_cpus(v);
		type = IMSG_CTL_BOOT;
		if (msg_boot_encode(&b, &buf, &len) == -1)
			ctl_encode_failed();
		break;
	case CTL_EXEC:
		memset(&x, 0, sizeof(x));
		x.x_owner = o.o_owner;
		strlcpy(x.x_key, o.o_key, sizeof(x.x_key));
		if ((v = ctl_opt(cmd, &o, "timeout")) != NULL)
			x.x_timeout_ms = ctl_number("timeout", v,
			    EXEC_TIMEOUT_MIN, EXEC_TIMEOUT_MAX, 0);
		if ((v = ctl_opt(cmd, &o, "output")) != NULL)
			x.x_max_bytes = ctl_number("output", v,
			    EXEC_OUTPUT_MIN, EXEC_OUTPUT_MAX, 1);
		if ((v = ctl_opt(cmd, &o, "cwd")) != NULL &&
		    strlcpy(x.x_cwd, v, sizeof(x.x_cwd)) >= sizeof(x.x_cwd))
			errx(1, "cwd too long");
		if (o.o_argc < 1 || o.o_argc > MSG_ARGV_MAX)
			errx(1, "exec: give 1 to %d arguments after --",
			    MSG_ARGV_MAX);
		x.x_argv = o.o_argv;
		x.x_argc = o.o_argc;
		type = IMSG_CTL_EXEC;
		if (msg_exec_encode(&x, &buf, &len) == -1)
			ctl_encode_failed();
		wait_ms = (x.x_timeout_ms ? x.x_timeout_ms : EXEC_TIMEOUT_MAX) +
		    CTL_EXEC_MARGIN_MS;
		break;
	case CTL_GIT_CONFIG:
		memset(&g, 0, sizeof(g));
		g.g_owner = o.o_owner;
		strlcpy(g.g_key, o.o_key, sizeof(g.g_key));
		if ((v = ctl_opt(cmd, &o, "name")) != NULL) {
			g.g_set_name = 1;
			if (strlcpy(g.g_name, v, sizeof(g.g_name)) >=
			    sizeof(g.g_name))
				errx(1, "name: longer than %d bytes",
				    MSG_GIT_VALUE_MAX);
		}
		if ((v = ctl_opt(cmd, &o, "email")) != NULL) {
			g.g_set_email = 1;
			if (strlcpy(g.g_email, v, sizeof(g.g_email)) >=
			    sizeof(g.g_email))
				errx(1, "email: longer than %d bytes",
				    MSG_GIT_VALUE_MAX);
		}
		type = IMSG_CTL_GIT_CONFIG;
		if (msg_gitconfig_encode(&g, &buf, &len) == -1)
			ctl_encode_failed();
		break;
	case CTL_GIT_INIT:
		memset(&gi, 0, sizeof(gi));
		gi.gi_owner = o.o_owner;
		strlcpy(gi.gi_key, o.o_key, sizeof(gi.gi_key));
		if (o.o_pos != NULL && strlcpy(gi.gi_path, o.o_pos,
		    sizeof(gi.gi_path)) >= sizeof(gi.gi_path))
			errx(1, "path too long");
		type = IMSG_CTL_GIT_INIT;
		if (msg_gitinit_encode(&gi, &buf, &len) == -1)
			ctl_encode_failed();
		break;
	case CTL_LOG_VERBOSE:
	case CTL_LOG_BRIEF:
		type = IMSG_CTL_LOG_VERBOSE;
		if (msg_i32_encode(cmd->cc_action == CTL_LOG_VERBOSE ? 1 : 0,
		    &buf, &len) == -1)
			ctl_encode_failed();
		break;
	case CTL_RELOAD:
		type = IMSG_CTL_RELOAD;
		break;
	case CTL_TOKEN:
		/* token [-r]: -r replaces the token the caller has. */
		if (o.o_pos != NULL && strcmp(o.o_pos, "-r") != 0)
			ctl_usage();
		type = IMSG_CTL_TOKEN;
		if (msg_u32_encode(o.o_pos != NULL, &buf, &len) == -1)
			ctl_encode_failed();
		break;
	default:
		ctl_usage();
	}

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

/*
 * [OWNER/]KEY: a plain KEY is the caller's own fence; root and the admin
 * group name another user's as USER/KEY or UID/KEY (a key holds no
 * slash).  The daemon decides who may; here only the name is resolved.
 */
static void
ctl_fence_name(struct ctl_opts *o, char *arg)
{
	struct passwd	*pw;
	const char	*errstr, *p;
	char		*slash;

	/* Anything else is taken whole, and refused as a key. */
	if ((slash = strchr(arg, '/')) == NULL || slash == arg ||
	    !fence_key_valid(slash + 1) || arg[0] == '-' || arg[0] == '.') {
		o->o_key = arg;
		return;
	}
	for (p = arg; p < slash; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || *p == '_' || *p == '-' ||
		    *p == '.')) {
			o->o_key = arg;
			return;
		}
	*slash = '\0';
	o->o_key = slash + 1;
	if (arg[0] >= '0' && arg[0] <= '9') {
		o->o_owner = strtonum(arg, 0, UINT32_MAX - 1, &errstr);
		if (errstr != NULL)
			errx(1, "%s: uid %s", arg, errstr);
	} else if ((pw = getpwnam(arg)) != NULL)
		o->o_owner = pw->pw_uid;
	else
		errx(1, "%s: no such user", arg);
}

/* Fixed words, then KEY, then name-value options, then -- ARGV. */
static const struct ctl_cmd *
ctl_parse(int argc, char **argv, struct ctl_opts *o)
{
	const struct ctl_cmd *cmd = NULL;
	char		 words[128], *w, *p;
	size_t		 i;
	int		 n, best = 0, k;

	for (i = 0; i < NCMDS; i++) {
		strlcpy(words, ctl_cmds[i].cc_words, sizeof(words));
		p = words;
		for (n = 0; (w = strsep(&p, " ")) != NULL; n++)
			if (n >= argc || strcmp(w, argv[n]) != 0)
				break;
		if (w == NULL && n > best) {
			best = n;
			cmd = &ctl_cmds[i];
		}
	}
	if (cmd == NULL)
		return (NULL);
	n = best;
	if (cmd->cc_key) {
		if (n >= argc)
			return (NULL);
		ctl_fence_name(o, argv[n++]);
		if (!fence_key_valid(o->o_key) && !(cmd->cc_action ==
		    CTL_STOP && strcmp(o->o_key, "all") == 0 &&
		    o->o_owner == MSG_OWNER_NONE))
			errx(1, "%s: not a fence key ([a-z0-9][a-z0-9_-]"
			    "{0,62})", o->o_key);
	}
	if (cmd->cc_pos && n < argc) {
		if (n + 1 != argc)
			return (NULL);
		o->o_pos = argv[n];
		return (cmd);
	}
	while (n < argc) {
		if (strcmp(argv[n], "--") == 0 && cmd->cc_argv) {
			o->o_argv = argv + n + 1;
			o->o_argc = argc - n - 1;
			return (cmd);
		}
		if (n + 1 >= argc)
			return (NULL);
		strlcpy(words, cmd->cc_opts, sizeof(words));
		p = words;
		for (k = 0; (w = strsep(&p, " ")) != NULL && k < 8; k++)
			if (strcmp(w, argv[n]) == 0)
				break;
		if (w == NULL || k >= 8)
			errx(1, "%s: unknown option %s", cmd->cc_words,
			    argv[n]);
		o->o_val[k] = argv[n + 1];
		n += 2;
	}
	if (cmd->cc_argv)
		return (NULL);
	return (cmd);
}

static const char *
ctl_opt(const struct ctl_cmd *cmd, struct ctl_opts *o, const char *name)
{
	char		 words[128], *w, *p;
	int		 k;

	strlcpy(words, cmd->cc_opts, sizeof(words));
	p = words;
	for (k = 0; (w = strsep(&p, " ")) != NULL && k < 8; k++)
		if (strcmp(w, name) == 0)
			return (o->o_val[k]);
	return (NULL);
}

static int
ctl_connect(const char *path)
{
	int	 fd;

	if ((fd = unix_connect(path)) == -1)
		err(1, "connect %s", path);
	return (fd);
}

static void
ctl_wait(struct imsgbuf *ibuf, struct imsg *imsg, int wait_ms)
{
	struct pollfd	 pfd;
	ssize_t		 n;
	int		 r;

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
			errx(1, "no reply from fenced in %d ms", wait_ms);
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
			return (ctx->c_status);
		case IMSG_CTL_OK:
			break;
		case IMSG_CTL_ERROR:
			if (msg_error_decode(imsg.data, imsg.len, &e) == -1)
				errx(1, "bad error reply");
			fprintf(stderr, "fencectl: %s: %s\n", e.e_code,
			    e.e_message);
			ctx->c_status = 1;
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
		case IMSG_CTL_GIT_IDENTITY:
			ctl_identity(&imsg);
			break;
		case IMSG_CTL_VERDICT:
			ctl_verdict(&imsg);
			break;
		case IMSG_CTL_HOSTTOKEN:
			ctl_hosttoken(&imsg);
			break;
		default:
			errx(1, "unexpected reply %s",
			    msg_type_name(imsg.hdr.ih_type));
		}
		imsg_free(&imsg);
	}
}

static void
ctl_show_stats(struct imsg *imsg)
{
	struct msg_stats st;
	enum fenced_proc p;
	int64_t		 up;

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
	printf("owner:    %s, uid %u (runs as uid %u)\n",
	    ctl_owner_name(f.f_owner), (unsigned)f.f_owner, (unsigned)f.f_uid);
	printf("tier:     %s\n", tier_name(f.f_tier));
	printf("backend:  %s\n", backend_name(f.f_backend));
	printf("state:    %s", fence_state_name(f.f_state));
	if (stop_reason_name(f.f_reason) != NULL)
		printf(" (%s)", stop_reason_name(f.f_reason));
	printf("\n");
	printf("level:    %s\n", level_name(f.f_level));
	printf("pid:      %d\n", (int)f.f_pid);
	printf("home:     %s\n", f.f_home);
	if (f.f_home_limit != 0)
		printf("home use: %lluK of %lluK\n",
		    (unsigned long long)(f.f_home_used >> 10),
		    (unsigned long long)(f.f_home_limit >> 10));
	printf("deadline: %lld (%llds left)\n", (long long)f.f_deadline, left);
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
}

static void
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

/* The command's output as it is, and its status as ours. */
static void
ctl_result(struct ctl_ctx *ctx, struct imsg *imsg)
{
	struct msg_result rs;

	if (msg_result_decode(imsg->data, imsg->len, &rs) == -1)
		errx(1, "bad result reply");
	ctl_write_all(STDOUT_FILENO, rs.rs_stdout, rs.rs_stdout_len);
	ctl_write_all(STDERR_FILENO, rs.rs_stderr, rs.rs_stderr_len);
	if (rs.rs_error[0] != '\0') {
		fprintf(stderr, "fencectl: %s: %s\n", rs.rs_error,
		    rs.rs_message);
		ctx->c_status = 1;
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
	printf("user.name: %s\nuser.email: %s\n", g.g_name, g.g_email);
}

/* The note to stderr, the token alone on stdout: TOKEN=$(fencectl token) */
static void
ctl_hosttoken(struct imsg *imsg)
{
	struct msg_hosttoken h;

	if (msg_hosttoken_decode(imsg->data, imsg->len, &h) == -1)
		errx(1, "bad token reply");
	fprintf(stderr, "host token of uid %u; it is not shown again:\n",
	    (unsigned)h.ht_uid);
	printf("%s\n", h.ht_token);
	fflush(stdout);
	explicit_bzero(&h, sizeof(h));
}

/* The measured level, then the verdicts as the prober wrote them. */
static void
ctl_verdict(struct imsg *imsg)
{
	struct msg_verdict v;

	if (msg_verdict_decode(imsg->data, imsg->len, &v) == -1)
		errx(1, "bad verdict reply");
	printf("level: %s\n%s\n", level_name(v.v_level), v.v_json);
	msg_verdict_free(&v);
}
