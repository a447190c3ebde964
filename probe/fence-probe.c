/*
 * fence-probe: run inside a fence exactly as a command would run, it
 * measures the boundary from there and prints one JSON report of schema
 * sandbox-probe/1 on standard output (docs/probe.md, fence-probe(1)).
 *
 * The report is untrusted by whoever reads it (the prober parses it);
 * this program's duty is to measure honestly, never to hang, and never
 * to print more than PROBE_OUT_MAX bytes.  Every check that could kill
 * the probe runs in a child; an alarm is the backstop for a check that
 * hangs in the kernel: it prints the sections done so far and exits.
 */
#include <sys/types.h>
#include <sys/prctl.h>
#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "probe.h"

static struct jw		 probe_out;
static const char *volatile	 probe_current = "start";

static const struct option probe_longopts[] = {
	{ "host-ns",	 required_argument, NULL, 'N' },
	{ "host-secret", required_argument, NULL, 'S' },
	{ "host-pid",	 required_argument, NULL, 'P' },
	{ "deadline",	 required_argument, NULL, 'D' },
	{ "dns",	 required_argument, NULL, 'd' },
	{ "tcp",	 required_argument, NULL, 't' },
	{ "canary",	 required_argument, NULL, 'c' },
	{ "canary-secret-stdin", no_argument, NULL, 's' },
	{ "no-outbound", no_argument,	    NULL, 'n' },
	{ "egress-proxy", required_argument, NULL, 'X' },
	{ "egress-allowed", required_argument, NULL, 'A' },
	{ "egress-refused", required_argument, NULL, 'R' },
	{ "timings",	 no_argument,	    NULL, 'T' },
	{ "help",	 no_argument,	    NULL, 'h' },
	{ NULL,		 0,		    NULL, 0 }
};

#ifdef FENCED_SANITIZE
/*
 * LeakSanitizer stops the world with ptrace, which a fence's filter
 * refuses, and then fails the exit; the probe keeps nothing allocated
 * (its buffers are static), so a sanitizer build checks for leaks no
 * more, and still for everything else.
 */
const char	*__lsan_default_options(void);

const char *
__lsan_default_options(void)
{
	return ("detect_leaks=0");
}
#endif

static __attribute__((noreturn)) void
usage(void)
{
	fprintf(stderr, "usage: fence-probe [--host-ns name=inode,...] "
	    "[--host-secret path]\n\t[--host-pid pid] [--deadline unixtime] "
	    "[--dns name]\n\t[--tcp host:port] [--canary host:port] "
	    "[--canary-secret-stdin] [--no-outbound]\n\t"
	    "[--egress-proxy address:port] [--egress-allowed name:port]\n\t"
	    "[--egress-refused name:port] [--timings]\n");
	exit(64);
}

static void
probe_write_all(const char *buf, size_t len)
{
	ssize_t	 n;

	while (len > 0) {
		n = write(STDOUT_FILENO, buf, len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		buf += n;
		len -= (size_t)n;
	}
}

/*
 * The backstop: the sections done so far, the name of the one that did
 * not finish, and out.  Only async-signal-safe calls.
 */
static void
probe_alarm(int sig)
{
	static const char	 head[] = "{\"probe\":\"" PROBE_SCHEMA "\"";
	const char		*cur = probe_current;
	size_t			 n = (size_t)probe_out.jw_committed;

	probe_children_kill();
	if (n == 0)
		probe_write_all(head, sizeof(head) - 1);
	else
		probe_write_all(probe_out.jw_buf, n);
	probe_write_all(",\"incomplete\":\"", 15);
	probe_write_all(cur, strlen(cur));
	probe_write_all("\"}\n", 3);
	_exit(3);
}

/* HOST:PORT or [V6]:PORT, shorter than PROBE_STR_MAX as a whole. */
static int
probe_target_parse(const char *s, struct probe_target *t)
{
	const char	*colon, *host = s, *end;
	long		 port;
	char		*ep;

	if (strlen(s) >= PROBE_STR_MAX)
		return (-1);
	if (s[0] == '[') {
		host = s + 1;
		if ((end = strchr(host, ']')) == NULL || end[1] != ':')
			return (-1);
		colon = end + 1;
	} else {
		if ((colon = strrchr(s, ':')) == NULL)
			return (-1);
		end = colon;
	}
	if (end == host || (size_t)(end - host) >= sizeof(t->pt_host))
		return (-1);
	errno = 0;
	port = strtol(colon + 1, &ep, 10);
	if (errno != 0 || *ep != '\0' || colon[1] == '\0' || port < 1 ||
	    port > 65535)
		return (-1);
	memcpy(t->pt_host, host, (size_t)(end - host));
	t->pt_host[end - host] = '\0';
	snprintf(t->pt_port, sizeof(t->pt_port), "%ld", port);
	snprintf(t->pt_text, sizeof(t->pt_text), "%s", s);
	return (0);
}

/* name=inode[,name=inode...] */
static int
probe_hostns_parse(char *s, struct probe_opts *o)
{
	char			*item, *eq, *ep;
	unsigned long long	 v;
	int			 i;

	while ((item = strsep(&s, ",")) != NULL) {
		if ((eq = strchr(item, '=')) == NULL)
			return (-1);
		*eq++ = '\0';
		for (i = 0; i < PROBE_NS_MAX; i++)
			if (strcmp(item, probe_ns_names[i]) == 0)
				break;
		if (i == PROBE_NS_MAX)
			return (-1);
		errno = 0;
		v = strtoull(eq, &ep, 10);
		if (errno != 0 || *ep != '\0' || *eq == '\0' || v == 0)
			return (-1);
		o->po_host_ns[i] = v;
	}
	return (0);
}

/* The proxy: a literal address and a port, never a name to resolve. */
static int
probe_proxy_parse(const char *s, struct probe_target *t)
{
	unsigned char	 a[sizeof(struct in6_addr)];

	if (probe_target_parse(s, t) == -1 ||
	    (inet_pton(AF_INET, t->pt_host, a) != 1 &&
	    inet_pton(AF_INET6, t->pt_host, a) != 1))
		return (-1);
	return (0);
}

/* --egress-allowed and --egress-refused: once each, NAME:PORT. */
static void
probe_egress_arg(const char *s, char *dst)
{
	if (dst[0] != '\0' || !probe_egress_target_valid(s))
		usage();
	(void)snprintf(dst, PROBE_EGRESS_TARGET_LEN, "%s", s);
}

static long long
probe_number(const char *s, long long lo, long long hi)
{
	long long	 v;
	char		*ep;

	errno = 0;
	v = strtoll(s, &ep, 10);
	if (errno != 0 || *ep != '\0' || *s == '\0' || v < lo || v > hi)
		usage();
	return (v);
}

static void
probe_args(int argc, char *argv[], struct probe_opts *o)
{
	int	 ch;

	o->po_dns = "example.com";
	while ((ch = getopt_long(argc, argv, "h", probe_longopts, NULL))
	    != -1) {
		switch (ch) {
		case 'N':
			if (probe_hostns_parse(optarg, o) == -1)
				usage();
			break;
		case 'S':
			if (o->po_nsecrets == PROBE_SECRETS_MAX ||
			    optarg[0] != '/' || strlen(optarg) >= PROBE_STR_MAX)
				usage();
			o->po_secrets[o->po_nsecrets++] = optarg;
			break;
		case 'P':
			o->po_host_pid = (pid_t)probe_number(optarg, 1,
			    INT_MAX);
			break;
		case 'D':
			o->po_deadline = probe_number(optarg, 1,
			    (long long)1 << 40);
			break;
		case 'd':
			if (optarg[0] == '\0' || strlen(optarg) > 253)
				usage();
			o->po_dns = optarg;
			break;
		case 't':
			if (o->po_ntcp == PROBE_TCP_MAX ||
			    probe_target_parse(optarg, &o->po_tcp[o->po_ntcp])
			    == -1)
				usage();
			o->po_ntcp++;
			break;
		case 'c':
			if (probe_target_parse(optarg, &o->po_canary) == -1)
				usage();
			o->po_has_canary = 1;
			break;
		case 'n':
			o->po_no_outbound = 1;
			break;
		case 's':
			o->po_secret_stdin = 1;
			break;
		case 'X':
			if (o->po_has_egress ||
			    probe_proxy_parse(optarg, &o->po_egress_proxy) == -1)
				usage();
			o->po_has_egress = 1;
			break;
		case 'A':
			probe_egress_arg(optarg, o->po_egress_allowed);
			break;
		case 'R':
			probe_egress_arg(optarg, o->po_egress_refused);
			break;
		case 'T':
			o->po_timings = 1;
			break;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();
	/* Targets to ask a proxy for need the proxy. */
	if (!o->po_has_egress && (o->po_egress_allowed[0] != '\0' ||
	    o->po_egress_refused[0] != '\0'))
		usage();
	if (o->po_no_outbound)
		o->po_ntcp = 0;
	else if (o->po_ntcp == 0) {
		(void)probe_target_parse("1.1.1.1:443", &o->po_tcp[0]);
		(void)probe_target_parse("example.com:80", &o->po_tcp[1]);
		o->po_ntcp = 2;
	}
}

/*
 * The canary's secret, on standard input up to its end: 16 to 64 hex
 * digits and an optional newline.  Anything else is a usage error (and
 * a run the host does not count).
 */
static void
probe_secret_read(struct probe_opts *o)
{
	char	 buf[PROBE_CANARY_SECRET_MAX + 2];
	size_t	 got = 0, i;
	ssize_t	 n;

	for (;;) {
		n = read(STDIN_FILENO, buf + got, sizeof(buf) - got);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
		if (got == sizeof(buf))
			usage();
	}
	if (n == -1)
		usage();
	if (got > 0 && buf[got - 1] == '\n')
		got--;
	if (got < 16 || got > PROBE_CANARY_SECRET_MAX)
		usage();
	for (i = 0; i < got; i++)
		if (!isxdigit((unsigned char)buf[i]))
			usage();
	memcpy(o->po_canary_secret, buf, got);
	o->po_canary_secret[got] = '\0';
	explicit_bzero(buf, sizeof(buf));
}

/* ISO 8601 in UTC with milliseconds, as JavaScript's toISOString(). */
static void
probe_when(char *buf, size_t len)
{
	struct timespec	 ts;
	struct tm	 tm;
	char		 s[32];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(s, sizeof(s), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, len, "%.24s.%03dZ", s,
	    (int)(ts.tv_nsec / 1000000) % 1000);
}

/*
 * What the process inherited must not change what the probe sees: a
 * blocked or ignored SIGCHLD would hide its children's ends.
 */
static void
probe_signals(void)
{
	struct sigaction	 sa;
	sigset_t		 none;

	sigemptyset(&none);
	(void)sigprocmask(SIG_SETMASK, &none, NULL);
	(void)signal(SIGCHLD, SIG_DFL);
	(void)signal(SIGPIPE, SIG_IGN);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = probe_alarm;
	sigemptyset(&sa.sa_mask);
	(void)sigaction(SIGALRM, &sa, NULL);
	alarm(PROBE_BACKSTOP_SEC);
}

static const struct {
	const char	 *ps_name;
	void		(*ps_fn)(struct jw *, const struct probe_opts *);
} probe_sections[] = {
	{ "identity",		probe_identity },
	{ "sandboxHints",	probe_hints },
	{ "filesystem",		probe_filesystem },
	{ "processes",		probe_processes },
	{ "limits",		probe_limits },
	{ "tools",		probe_tools },
	{ "privileges",		probe_privileges },
	{ "surface",		probe_surface },
	{ "network",		probe_network },
};
#define PROBE_NSECTIONS	(sizeof(probe_sections) / sizeof(probe_sections[0]))

/*
 * --timings: how long a step took, in microseconds, on standard error
 * (never in the report), to see where a probe's time goes.
 */
static void
probe_timing(const struct probe_opts *o, const char *step,
    struct timespec *last)
{
	struct timespec	 now;
	long long	 us;

	clock_gettime(CLOCK_MONOTONIC, &now);
	us = (long long)(now.tv_sec - last->tv_sec) * 1000000 +
	    (now.tv_nsec - last->tv_nsec) / 1000;
	*last = now;
	if (o->po_timings)
		fprintf(stderr, "fence-probe: %s %lld us\n", step, us);
}

int
main(int argc, char *argv[])
{
	static struct probe_opts	 opts;
	const char			*omitted[PROBE_NSECTIONS];
	struct jw			*w = &probe_out;
	struct timespec			 t;
	size_t				 i;
	int				 nomitted = 0;

	/*
	 * First: no other process of the fence's uid may open our
	 * /proc/PID/fd (our stdout is the pipe the report goes out on),
	 * ptrace us or read our memory.  Our children keep it.
	 */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == -1)
		_exit(70);
	clock_gettime(CLOCK_MONOTONIC, &t);
	probe_args(argc, argv, &opts);
	probe_when(opts.po_when, sizeof(opts.po_when));
	jw_init(w);
	probe_signals();
	if (opts.po_secret_stdin)
		probe_secret_read(&opts);
	/* Its children run while the other sections are measured. */
	probe_privileges_start(&opts);
	probe_timing(&opts, "start", &t);
	opts.po_markers_removed = probe_markers_clean(&opts);
	probe_timing(&opts, "markers", &t);

	jw_obj_open(w, NULL);
	jw_str(w, "probe", PROBE_SCHEMA);
	jw_str(w, "when", opts.po_when);
	w->jw_committed = (sig_atomic_t)w->jw_len;
	for (i = 0; i < PROBE_NSECTIONS; i++) {
		probe_current = probe_sections[i].ps_name;
		probe_section_begin(w, probe_sections[i].ps_name);
		jw_obj_open(w, probe_sections[i].ps_name);
		probe_sections[i].ps_fn(w, &opts);
		jw_obj_close(w);
		if (probe_section_end(w) == -1)
			omitted[nomitted++] = probe_sections[i].ps_name;
		probe_timing(&opts, probe_sections[i].ps_name, &t);
	}
	alarm(0);
	jw_finish(w, omitted, nomitted);
	probe_write_all(w->jw_buf, w->jw_len);
	return (nomitted == 0 ? 0 : 2);
}
