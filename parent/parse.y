/*
 * The grammar of fenced.conf(5).
 *
 * One statement per line.  The lexer reads from a stack of files (for
 * include), replaces $name with the value of a macro, and hands words
 * to the grammar below; every value is a word, and the action that
 * uses it converts and range-checks it.  Each error is printed as
 * FILE:LINE: message and counted, and the parse goes on to the end so
 * that one run shows them all.  The caller's configuration changes only
 * if there were none.
 */

%{
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fenced.h"
#include "log.h"
#include "mp.h"

#define CONF_STRING_MAX		1024	/* longest word, string or value */
#define CONF_NAME_MAX		64	/* longest macro name */
#define CONF_INCLUDE_DEPTH	8	/* files open at once, top included */
#define CONF_FILE_MAX		(1024 * 1024)	/* bytes, a file and all */
						/* it includes together */
#define CONF_ERRORS_MAX		50	/* then stop reading */
#define CONF_PUSHBACK		(CONF_STRING_MAX + 8)

struct conf_file {
	TAILQ_ENTRY(conf_file)	 f_entry;
	FILE			*f_stream;
	char			*f_name;
	int			 f_lineno;
	int			 f_ended;	/* its last newline was given */
	int			 f_nulline;	/* NUL reported on this line */
	dev_t			 f_dev;
	ino_t			 f_ino;
};
TAILQ_HEAD(conf_files, conf_file);

/*
 * Macros sit in a hash table that doubles as it fills, so that setting
 * and expanding one costs the same however many there are: with a list
 * a 1 MiB file of macros took seconds to parse, blocking the parent on
 * reload.
 */
struct conf_macro {
	struct conf_macro	*m_next;	/* in its bucket */
	uint32_t		 m_hash;
	char			*m_name;
	char			*m_value;
};

struct conf_macros {
	struct conf_macro	**mt_bucket;
	size_t			 mt_size;	/* a power of 2, or 0 */
	size_t			 mt_count;
};
#define CONF_MACRO_BUCKETS	64	/* to start with */

/*
 * The text of every word lives until the parse ends: error recovery
 * drops values from the parser's stack without a word to anyone.
 */
struct conf_word {
	struct conf_word	*w_next;
	char			 w_text[];
};

/* A character given back to the lexer, and whether a macro made it. */
struct conf_pushback {
	int			 pb_c;
	int			 pb_macro;
};

/* How a number is written and how far it may go. */
enum conf_unit {
	UNIT_NONE,			/* digits only */
	UNIT_SIZE,			/* K, M, G, T: powers of 1024 */
	UNIT_TIME			/* s, m, h, d */
};

struct conf_num {
	const char		*n_name;
	enum conf_unit		 n_unit;
	long long		 n_min;
	long long		 n_max;
	const char		*n_what;	/* after the range */
};

static const struct conf_num conf_num_port =
    { "listen port", UNIT_NONE, 1, 65535, "" };
static const struct conf_num conf_num_lifetime =
    { "lifetime", UNIT_TIME, LIFETIME_MIN, LIFETIME_MAX, "" };
static const struct conf_num conf_num_lifetime_max =
    { "lifetime max", UNIT_TIME, LIFETIME_MIN, LIFETIME_MAX, "" };
static const struct conf_num conf_num_memory =
    { "limit memory", UNIT_SIZE, MEMORY_MIN, MEMORY_MAX, "" };
static const struct conf_num conf_num_memory_max =
    { "limit memory max", UNIT_SIZE, MEMORY_MIN, MEMORY_MAX, "" };
static const struct conf_num conf_num_home =
    { "limit home", UNIT_SIZE, HOME_LIMIT_MIN, HOME_LIMIT_MAX, "" };
static const struct conf_num conf_num_snap_count =
    { "limit snapshots", UNIT_NONE, SNAP_COUNT_MIN, SNAP_COUNT_MAX, "" };
static const struct conf_num conf_num_snap_bytes =
    { "limit snapshots size", UNIT_SIZE, SNAP_BYTES_MIN, SNAP_BYTES_MAX,
    "" };
static const struct conf_num conf_num_user_snap_count =
    { "user limit snapshots", UNIT_NONE, SNAP_COUNT_MIN, SNAP_COUNT_MAX,
    "" };
static const struct conf_num conf_num_user_snap_bytes =
    { "user limit snapshots size", UNIT_SIZE, SNAP_BYTES_MIN,
    SNAP_BYTES_MAX, "" };
static const struct conf_num conf_num_pids =
    { "limit pids", UNIT_NONE, PIDS_MIN, PIDS_MAX, "" };
static const struct conf_num conf_num_pids_max =
    { "limit pids max", UNIT_NONE, PIDS_MIN, PIDS_MAX, "" };
static const struct conf_num conf_num_user_fences =
    { "user limit fences", UNIT_NONE, USER_FENCES_MIN, USER_FENCES_MAX,
    "" };
static const struct conf_num conf_num_user_memory =
    { "user limit memory", UNIT_SIZE, MEMORY_MIN, USER_MEMORY_MAX, "" };
static const struct conf_num conf_num_user_pids =
    { "user limit pids", UNIT_NONE, PIDS_MIN, USER_PIDS_MAX, "" };
static const struct conf_num conf_num_timeout =
    { "exec timeout", UNIT_NONE, EXEC_TIMEOUT_MIN, EXEC_TIMEOUT_MAX,
    " milliseconds" };
static const struct conf_num conf_num_timeout_max =
    { "exec timeout max", UNIT_NONE, EXEC_TIMEOUT_MIN, EXEC_TIMEOUT_MAX,
    " milliseconds" };
static const struct conf_num conf_num_output =
    { "exec output", UNIT_SIZE, EXEC_OUTPUT_MIN, EXEC_OUTPUT_MAX, "" };
static const struct conf_num conf_num_output_max =
    { "exec output max", UNIT_SIZE, EXEC_OUTPUT_MIN, EXEC_OUTPUT_MAX,
    "" };
static const struct conf_num conf_num_inflight =
    { "exec inflight per user", UNIT_NONE, EXEC_INFLIGHT_MIN,
    EXEC_INFLIGHT_MAX, "" };
static const struct conf_num conf_num_processes =
    { "exec processes", UNIT_NONE, EXEC_PROCESSES_MIN, EXEC_PROCESSES_MAX,
    "" };
static const struct conf_num conf_num_http_body =
    { "http body max", UNIT_SIZE, HTTP_BODY_MIN, HTTP_BODY_MAX, "" };
static const struct conf_num conf_num_files =
    { "files max", UNIT_SIZE, FILES_MIN, FILES_MAX, "" };
static const struct conf_num conf_num_http_headers =
    { "http headers max", UNIT_SIZE, HTTP_HEADERS_MIN, HTTP_HEADERS_MAX,
    "" };
static const struct conf_num conf_num_http_timeout =
    { "http timeout", UNIT_TIME, HTTP_TIMEOUT_MIN, HTTP_TIMEOUT_MAX, "" };
static const struct conf_num conf_num_http_conns =
    { "http connections max", UNIT_NONE, HTTP_CONNS_MIN, HTTP_CONNS_MAX,
    "" };
static const struct conf_num conf_num_egress_conns =
    { "egress connections", UNIT_NONE, EGRESS_CONNS_MIN, EGRESS_CONNS_MAX,
    "" };
static const struct conf_num conf_num_egress_rate =
    { "egress rate", UNIT_SIZE, EGRESS_RATE_MIN, EGRESS_RATE_MAX,
    " bytes per second" };
static const struct conf_num conf_num_egress_idle =
    { "egress idle", UNIT_TIME, EGRESS_IDLE_MIN, EGRESS_IDLE_MAX, "" };
static const struct conf_num conf_num_egress_connect =
    { "egress connect timeout", UNIT_TIME, EGRESS_CONNECT_MIN,
    EGRESS_CONNECT_MAX, "" };
static const struct conf_num conf_num_audit_size =
    { "audit size", UNIT_SIZE, AUDIT_SIZE_MIN, AUDIT_SIZE_MAX, "" };
static const struct conf_num conf_num_audit_keep =
    { "audit keep", UNIT_NONE, 0, AUDIT_KEEP_MAX, " files" };
static const struct conf_num conf_num_http_conns_user =
    { "http connections per user", UNIT_NONE, HTTP_CONNS_MIN,
    HTTP_CONNS_MAX, "" };

#define FENCE_UID_MIN		1000
#define FENCE_UID_MAX		(0x7fffffffLL)
#define FENCE_UID_NOBODY	65534

/* Everything one parse knows; reset by config_parse(). */
static struct {
	struct fenced_config	*conf;
	struct conf_files	 files;
	struct conf_file	*file;		/* the one being read */
	struct conf_macros	 macros;
	struct conf_word	*words;
	int			 errors;
	int			 giveup;	/* too many errors */
	int			 lexfail;	/* lexer reported this token */
	struct conf_pushback	 pb[CONF_PUSHBACK];
	int			 npb;
	int			 frommacro;	/* of the last character */
	int			 bol;		/* next token starts a line */
	int			 second;	/* next token is a line's 2nd */
	int			 unknown;	/* line starts with a non-keyword */
	char			 first[64];	/* the line's first word */
	char			 last[64];	/* the last token, for errors */
	int			 probe_tcp;	/* `probe tcp' lines so far */
	size_t			 nread;		/* bytes, every file */
	int			 user_set;	/* USER_SET_* written */
} ps;

#define USER_SET_MEMORY		0x1
#define USER_SET_PIDS		0x2
#define USER_SET_CPU		0x4

typedef struct {
	union {
		char		*string;
	} v;
	int			 lineno;
} YYSTYPE;
#define YYSTYPE_IS_DECLARED	1

int		 yylex(void);
int		 yyparse(void);
void		 yyerror(const char *, ...)
		    __attribute__((format(printf, 1, 2)));
static void	 conf_parser_error(const char *);
#define YYERROR_CALL(msg)	conf_parser_error(msg)

/* config.c has the rules `homes' shares with the environment. */

static void	 conf_listen(const char *, const char *);
static void	 conf_path(const char *, const char *, char *, size_t);
static void	 conf_homes(const char *);
static void	 conf_audit(const char *, const char *);
static void	 conf_name(const char *, const char *, char *, size_t);
static void	 conf_uids(const char *);
static void	 conf_probe_dns(const char *);
static void	 conf_probe_tcp(const char *);
static void	 conf_probe_egress(const char *, const char *, char *);
static void	 conf_egress_host(const char *, const char *, const char *);
static int	 conf_egress_host_api(const char *, uint16_t);
static void	 conf_egress_resolver(const char *, const char *);
static void	 conf_tier(const char *);
static void	 conf_backend(const char *);
static void	 conf_pool(const char *, const char *);
static void	 conf_runsc_platform(const char *);
static void	 conf_vm_accel(const char *);
static void	 conf_vm_file(int, const char *, const char *);
static void	 conf_lifetime(const char *, const char *);
static void	 conf_limit(int, const char *, const char *);
static void	 conf_user_limit(int, const char *);
static int	 conf_check(void);
static void	 conf_home(const char *);
static void	 conf_snap(const struct conf_num *, const char *, uint32_t *,
	    uint64_t *);
static void	 conf_exec(const struct conf_num *, const struct conf_num *,
		    const char *, const char *, uint32_t *, uint32_t *);
static void	 conf_u32(const struct conf_num *, const char *, uint32_t *);
static void	 conf_conns(const char *, const char *);
static void	 conf_origin(const char *);
static void	 conf_macro_set(const char *, const char *);
static void	 conf_include(const char *);
%}

%token	ADMIN BACKEND BODY CONNECTIONS CPU DNS EXEC FENCE FENCES GROUP HEADERS
%token	HOME HOMES HTTP INCLUDE INFLIGHT LIFETIME LIMIT LISTEN MAX MEMORY ON ORIGIN
%token	OUTPUT
%token	PER PIDS PLATFORM POOL PORT PROBE RUNSC SOCKET STATE TCP TIER TIMEOUT UIDS
%token	USER VM ACCEL KERNEL INITRD IMAGE SHA256 PROCESSES SNAPSHOTS SIZE
%token	FILES
%token	EGRESS HOST RESOLVER RATE IDLE CONNECT ALLOWED REFUSED
%token	AUDIT
%token	OBSERVE DENIALS
%token	ERROR
%token	<v.string>	STRING
%type	<v.string>	port max peruser

%%

grammar		: /* empty */
		| grammar '\n'
		| grammar include
		| grammar varset '\n'
		| grammar main '\n'
		| grammar error '\n'		{ yyerrok; }
		;

/*
 * The newline belongs to the include, so that the included file is
 * read after it: the file's first token is not this line's lookahead.
 */
include		: INCLUDE STRING '\n'		{ conf_include($2); }
		;

varset		: STRING '=' STRING		{ conf_macro_set($1, $3); }
		;

main		: LISTEN ON STRING port		{ conf_listen($3, $4); }
		| SOCKET STRING			{
			conf_path("socket", $2, ps.conf->c_socket,
			    sizeof(((struct sockaddr_un *)0)->sun_path));
		}
		| STATE STRING			{
			conf_path("state", $2, ps.conf->c_state,
			    sizeof(ps.conf->c_state));
		}
		| HOMES STRING			{ conf_homes($2); }
		| USER STRING			{
			conf_name("user", $2, ps.conf->c_user,
			    sizeof(ps.conf->c_user));
		}
		| FENCE UIDS STRING		{ conf_uids($3); }
		| ADMIN GROUP STRING		{
			conf_name("admin group", $3, ps.conf->c_admin_group,
			    sizeof(ps.conf->c_admin_group));
		}
		| TIER STRING			{ conf_tier($2); }
		| BACKEND STRING		{ conf_backend($2); }
		| BACKEND RUNSC			{ conf_backend("runsc"); }
		| BACKEND VM			{ conf_backend("vm"); }
		| POOL STRING STRING		{ conf_pool($2, $3); }
		| OBSERVE DENIALS STRING	{
			if (strcmp($3, "yes") == 0)
				ps.conf->c_observe_denials = 1;
			else if (strcmp($3, "no") == 0)
				ps.conf->c_observe_denials = 0;
			else
				yyerror("observe denials: yes or no, not %s",
				    $3);
		}
		| RUNSC STRING			{
			conf_path("runsc", $2, ps.conf->c_runsc,
			    sizeof(ps.conf->c_runsc));
		}
		| RUNSC PLATFORM STRING		{ conf_runsc_platform($3); }
		| VM ACCEL STRING		{ conf_vm_accel($3); }
		| VM ON				{ ps.conf->c_vm_off = 0; }
		/* `runsc' is a keyword: vm inner runsc, vm inner none. */
		| VM STRING RUNSC		{
			if (strcmp($2, "inner") != 0)
				yyerror("vm %s runsc: expected vm inner runsc "
				    "or vm inner none", $2);
			else
				ps.conf->c_vm_inner = 1;
		}
		| VM STRING STRING		{
			if (strcmp($2, "inner") != 0)
				yyerror("vm %s %s: expected vm inner runsc or "
				    "vm inner none", $2, $3);
			else if (strcmp($3, "none") == 0)
				ps.conf->c_vm_inner = 0;
			else
				yyerror("vm inner %s: expected runsc or none",
				    $3);
		}
		| VM STRING			{
			if (strcmp($2, "off") == 0)
				ps.conf->c_vm_off = 1;
			else
				yyerror("vm %s: expected vm on, vm off, vm "
				    "accel, vm kernel, vm initrd or vm image",
				    $2);
		}
		| VM KERNEL STRING SHA256 STRING {
			conf_vm_file(VM_FILE_KERNEL, $3, $5);
		}
		| VM INITRD STRING SHA256 STRING {
			conf_vm_file(VM_FILE_INITRD, $3, $5);
		}
		| VM IMAGE STRING SHA256 STRING	{
			conf_vm_file(VM_FILE_IMAGE, $3, $5);
		}
		| VM KERNEL STRING		{
			yyerror("vm kernel \"%s\" needs its hash: vm kernel "
			    "PATH sha256 HEX", $3);
		}
		| VM INITRD STRING		{
			yyerror("vm initrd \"%s\" needs its hash: vm initrd "
			    "PATH sha256 HEX", $3);
		}
		| VM IMAGE STRING		{
			yyerror("vm image \"%s\" needs its hash: vm image "
			    "PATH sha256 HEX", $3);
		}
		| LIFETIME STRING max		{ conf_lifetime($2, $3); }
		| LIMIT MEMORY STRING max	{ conf_limit(MEMORY, $3, $4); }
		| LIMIT PIDS STRING max		{ conf_limit(PIDS, $3, $4); }
		| LIMIT CPU STRING max		{ conf_limit(CPU, $3, $4); }
		| USER LIMIT FENCES STRING	{ conf_user_limit(FENCES, $4); }
		| USER LIMIT MEMORY STRING	{ conf_user_limit(MEMORY, $4); }
		| USER LIMIT PIDS STRING	{ conf_user_limit(PIDS, $4); }
		| USER LIMIT CPU STRING		{ conf_user_limit(CPU, $4); }
		| LIMIT HOME STRING		{ conf_home($3); }
		| LIMIT SNAPSHOTS STRING	{
			conf_snap(&conf_num_snap_count, $3,
			    &ps.conf->c_snap_count, NULL);
		}
		| LIMIT SNAPSHOTS SIZE STRING	{
			conf_snap(&conf_num_snap_bytes, $4, NULL,
			    &ps.conf->c_snap_bytes);
		}
		| USER LIMIT SNAPSHOTS STRING	{
			conf_snap(&conf_num_user_snap_count, $4,
			    &ps.conf->c_user_snap_count, NULL);
		}
		| USER LIMIT SNAPSHOTS SIZE STRING {
			conf_snap(&conf_num_user_snap_bytes, $5, NULL,
			    &ps.conf->c_user_snap_bytes);
		}
		| EXEC TIMEOUT STRING max	{
			conf_exec(&conf_num_timeout, &conf_num_timeout_max,
			    $3, $4, &ps.conf->c_exec_timeout,
			    &ps.conf->c_exec_timeout_max);
		}
		| EXEC OUTPUT STRING max	{
			conf_exec(&conf_num_output, &conf_num_output_max,
			    $3, $4, &ps.conf->c_exec_output,
			    &ps.conf->c_exec_output_max);
		}
		| EXEC INFLIGHT PER USER STRING	{
			conf_u32(&conf_num_inflight, $5,
			    &ps.conf->c_exec_inflight_user);
		}
		| EXEC PROCESSES STRING		{
			conf_u32(&conf_num_processes, $3,
			    &ps.conf->c_exec_processes);
		}
		| FILES MAX STRING		{
			conf_u32(&conf_num_files, $3, &ps.conf->c_files_max);
		}
		| HTTP BODY MAX STRING		{
			conf_u32(&conf_num_http_body, $4,
			    &ps.conf->c_http_body_max);
		}
		| HTTP HEADERS MAX STRING	{
			conf_u32(&conf_num_http_headers, $4,
			    &ps.conf->c_http_headers_max);
		}
		| HTTP TIMEOUT STRING		{
			conf_u32(&conf_num_http_timeout, $3,
			    &ps.conf->c_http_timeout);
		}
		| HTTP CONNECTIONS MAX STRING peruser {
			conf_conns($4, $5);
		}
		| HTTP ORIGIN STRING		{ conf_origin($3); }
		| PROBE DNS STRING		{ conf_probe_dns($3); }
		| PROBE TCP STRING		{ conf_probe_tcp($3); }
		| PROBE EGRESS ALLOWED STRING	{
			conf_probe_egress("allowed", $4,
			    ps.conf->c_probe_egress_allowed);
		}
		| PROBE EGRESS REFUSED STRING	{
			conf_probe_egress("refused", $4,
			    ps.conf->c_probe_egress_refused);
		}
		| EGRESS HOST STRING STRING port {
			conf_egress_host($3, $4, $5);
		}
		| EGRESS RESOLVER STRING port	{ conf_egress_resolver($3, $4); }
		| EGRESS RESOLVER PORT STRING	{
			conf_egress_resolver(NULL, $4);
		}
		| EGRESS CONNECTIONS STRING	{
			conf_u32(&conf_num_egress_conns, $3,
			    &ps.conf->c_egress_conns);
		}
		| EGRESS RATE STRING		{
			conf_u32(&conf_num_egress_rate, $3,
			    &ps.conf->c_egress_rate);
		}
		| EGRESS IDLE STRING		{
			conf_u32(&conf_num_egress_idle, $3,
			    &ps.conf->c_egress_idle);
		}
		| EGRESS CONNECT TIMEOUT STRING	{
			conf_u32(&conf_num_egress_connect, $4,
			    &ps.conf->c_egress_connect);
		}
		| AUDIT STRING STRING		{ conf_audit($2, $3); }
		| AUDIT SIZE STRING		{
			conf_snap(&conf_num_audit_size, $3, NULL,
			    &ps.conf->c_audit_size);
		}
		| AUDIT STRING			{ conf_audit($2, NULL); }
		;

port		: /* empty */			{ $$ = NULL; }
		| PORT STRING			{ $$ = $2; }
		;

max		: /* empty */			{ $$ = NULL; }
		| MAX STRING			{ $$ = $2; }
		;

peruser		: /* empty */			{ $$ = NULL; }
		| PER USER STRING		{ $$ = $3; }
		;

%%

/* Sorted by name: looked up with bsearch(3). */
static const struct conf_keyword {
	const char	*k_name;
	int		 k_token;
} conf_keywords[] = {
	{ "accel",	ACCEL },
	{ "admin",	ADMIN },
	{ "allowed",	ALLOWED },
	{ "audit",	AUDIT },
	{ "backend",	BACKEND },
	{ "body",	BODY },
	{ "connect",	CONNECT },
	{ "connections", CONNECTIONS },
	{ "cpu",	CPU },
	{ "denials",	DENIALS },
	{ "dns",	DNS },
	{ "egress",	EGRESS },
	{ "exec",	EXEC },
	{ "fence",	FENCE },
	{ "fences",	FENCES },
	{ "files",	FILES },
	{ "group",	GROUP },
	{ "headers",	HEADERS },
	{ "home",	HOME },
	{ "homes",	HOMES },
	{ "host",	HOST },
	{ "http",	HTTP },
	{ "idle",	IDLE },
	{ "image",	IMAGE },
	{ "include",	INCLUDE },
	{ "inflight",	INFLIGHT },
	{ "initrd",	INITRD },
	{ "kernel",	KERNEL },
	{ "lifetime",	LIFETIME },
	{ "limit",	LIMIT },
	{ "listen",	LISTEN },
	{ "max",	MAX },
	{ "memory",	MEMORY },
	{ "observe",	OBSERVE },
	{ "on",		ON },
	{ "origin",	ORIGIN },
	{ "output",	OUTPUT },
	{ "per",	PER },
	{ "pids",	PIDS },
	{ "platform",	PLATFORM },
	{ "pool",	POOL },
	{ "port",	PORT },
	{ "probe",	PROBE },
	{ "processes",	PROCESSES },
	{ "rate",	RATE },
	{ "refused",	REFUSED },
	{ "resolver",	RESOLVER },
	{ "runsc",	RUNSC },
	{ "sha256",	SHA256 },
	{ "size",	SIZE },
	{ "snapshots",	SNAPSHOTS },
	{ "socket",	SOCKET },
	{ "state",	STATE },
	{ "tcp",	TCP },
	{ "tier",	TIER },
	{ "timeout",	TIMEOUT },
	{ "uids",	UIDS },
	{ "user",	USER },
	{ "vm",		VM }
};

static int
conf_keyword_cmp(const void *key, const void *elem)
{
	return (strcmp(key, ((const struct conf_keyword *)elem)->k_name));
}

static int
conf_keyword(const char *word)
{
	const struct conf_keyword *k;

	k = bsearch(word, conf_keywords,
	    sizeof(conf_keywords) / sizeof(conf_keywords[0]),
	    sizeof(conf_keywords[0]), conf_keyword_cmp);
	return (k != NULL ? k->k_token : STRING);
}

/* Errors. */

static void
conf_verror(int, const char *, va_list)
    __attribute__((format(printf, 2, 0)));

static void
conf_verror(int lineno, const char *fmt, va_list ap)
{
	char	 msg[CONF_STRING_MAX + 256];

	if (++ps.errors > CONF_ERRORS_MAX) {
		if (!ps.giveup)
			log_warnx("%s: too many errors, giving up",
			    ps.file->f_name);
		ps.giveup = 1;
		return;
	}
	(void)vsnprintf(msg, sizeof(msg), fmt, ap);
	log_warnx("%s:%d: %s", ps.file->f_name, lineno, msg);
}

/* An error at the current token's line. */
void
yyerror(const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	conf_verror(yylval.lineno, fmt, ap);
	va_end(ap);
}

/* An error at the line being read, whatever the token. */
static void
conf_lexerror(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

static void
conf_lexerror(const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	conf_verror(ps.file->f_lineno, fmt, ap);
	va_end(ap);
}

/*
 * The parser found no rule for the token it holds.  A line that starts
 * with a word that is neither a keyword nor a macro being set is most
 * often a misspelt keyword, so say that.
 */
static void
conf_parser_error(const char *msg)
{
	if (ps.lexfail)
		return;			/* the lexer said why already */
	if (strcmp(msg, "syntax error") != 0)
		yyerror("%s", msg);
	else if (ps.unknown)
		yyerror("unknown keyword \"%s\"", ps.first);
	else
		yyerror("syntax error at %s", ps.last);
}

/* Memory. */

static char *
conf_word(const char *text, size_t len)
{
	struct conf_word	*w;

	if ((w = malloc(sizeof(*w) + len + 1)) == NULL)
		fatal("%s", __func__);
	memcpy(w->w_text, text, len);
	w->w_text[len] = '\0';
	w->w_next = ps.words;
	ps.words = w;
	return (w->w_text);
}

static void
conf_words_free(void)
{
	struct conf_word	*w;

	while ((w = ps.words) != NULL) {
		ps.words = w->w_next;
		free(w);
	}
}

/* Files. */

/*
 * Open a configuration file for reading, or say why not.  The daemon
 * reads it as root, so one that someone else could write would hand
 * them root: refuse it.  A FIFO or device is not a configuration file,
 * and opening with O_NONBLOCK keeps one from hanging us.
 */
static struct conf_file *
conf_file_open(const char *path, char *why, size_t whylen)
{
	struct conf_file	*f;
	struct stat		 st;
	FILE			*fp;
	int			 fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK |
	    O_NOCTTY)) == -1) {
		(void)strlcpy(why, strerror(errno), whylen);
		return (NULL);
	}
	if (fstat(fd, &st) == -1) {
		(void)strlcpy(why, strerror(errno), whylen);
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		(void)strlcpy(why, "not a regular file", whylen);
		goto fail;
	}
	if (st.st_uid != 0 && st.st_uid != geteuid()) {
		(void)snprintf(why, whylen, "owned by uid %u, neither root "
		    "nor the user reading it", (unsigned)st.st_uid);
		goto fail;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		(void)snprintf(why, whylen, "writable by group or others "
		    "(mode %04o)", (unsigned)(st.st_mode & 07777));
		goto fail;
	}
	if (st.st_size > CONF_FILE_MAX) {
		(void)snprintf(why, whylen, "%lld bytes, larger than the %d "
		    "a configuration may have", (long long)st.st_size,
		    CONF_FILE_MAX);
		goto fail;
	}
	if ((fp = fdopen(fd, "r")) == NULL) {
		(void)strlcpy(why, strerror(errno), whylen);
		goto fail;
	}
	if ((f = calloc(1, sizeof(*f))) == NULL ||
	    (f->f_name = strdup(path)) == NULL)
		fatal("%s", __func__);
	f->f_stream = fp;
	f->f_lineno = 1;
	f->f_dev = st.st_dev;
	f->f_ino = st.st_ino;
	return (f);
 fail:
	close(fd);
	return (NULL);
}

static void
conf_file_close(struct conf_file *f)
{
	fclose(f->f_stream);
	free(f->f_name);
	free(f);
}

static void
conf_file_push(struct conf_file *f)
{
	TAILQ_INSERT_TAIL(&ps.files, f, f_entry);
	ps.file = f;
}

/* Back to the including file; -1 if this was the first. */
static int
conf_file_pop(void)
{
	struct conf_file	*prev;

	if ((prev = TAILQ_PREV(ps.file, conf_files, f_entry)) == NULL)
		return (-1);
	TAILQ_REMOVE(&ps.files, ps.file, f_entry);
	conf_file_close(ps.file);
	ps.file = prev;
	return (0);
}

/* Characters. */

/*
 * One byte of f, counted: a file may grow after conf_file_open() looked
 * at its size, and includes add up, so what one parse reads is bounded
 * here.  Past the bound the file reads as ended, and the parse fails.
 */
static int
conf_getc(struct conf_file *f)
{
	int	 c;

	if (ps.nread >= CONF_FILE_MAX) {
		if (!ps.giveup) {
			conf_lexerror("the configuration is larger than %d "
			    "bytes (its includes counted); refused",
			    CONF_FILE_MAX);
			ps.giveup = 1;
		}
		return (EOF);
	}
	if ((c = getc(f->f_stream)) != EOF)
		ps.nread++;
	return (c);
}

/*
 * The next character of the file being read.  A backslash before a
 * newline joins the lines (cont), except in a comment.  A NUL byte is
 * an error, reported once a line, and read as a space.
 */
static int
conf_filec(int cont)
{
	struct conf_file	*f = ps.file;
	int			 c, next;

	for (;;) {
		c = conf_getc(f);
		if (c != '\\' || !cont)
			break;
		if ((next = conf_getc(f)) != '\n') {
			if (next != EOF) {
				(void)ungetc(next, f->f_stream);
				ps.nread--;
			}
			break;
		}
		f->f_lineno++;
	}
	if (c == '\0') {
		if (f->f_nulline != f->f_lineno)
			conf_lexerror("NUL byte in file");
		f->f_nulline = f->f_lineno;
		c = ' ';
	}
	return (c);
}

static int
lgetc(int cont)
{
	if (ps.npb > 0) {
		ps.npb--;
		ps.frommacro = ps.pb[ps.npb].pb_macro;
		return (ps.pb[ps.npb].pb_c);
	}
	ps.frommacro = 0;
	return (conf_filec(cont));
}

/* Give back the character lgetc() returned last. */
static void
lungetc(int c)
{
	if (c == EOF)
		return;
	if (ps.npb >= CONF_PUSHBACK)
		fatalx("%s: pushback full", __func__);
	ps.pb[ps.npb].pb_c = c;
	ps.pb[ps.npb].pb_macro = ps.frommacro;
	ps.npb++;
}

/* Tokens. */

/*
 * Every token leaves through here, which keeps what a syntax error
 * needs to say: the token itself, and whether its line started with
 * a word that is not a keyword (and is not `name = value').
 */
static int
conf_token(int tok, const char *text)
{
	if (tok == '\n')
		(void)strlcpy(ps.last, "end of line", sizeof(ps.last));
	else if (tok == 0)
		(void)strlcpy(ps.last, "end of file", sizeof(ps.last));
	else
		(void)snprintf(ps.last, sizeof(ps.last), "\"%s\"", text);

	if (ps.bol) {
		ps.unknown = (tok == STRING);
		(void)strlcpy(ps.first, text, sizeof(ps.first));
		ps.second = 1;
	} else if (ps.second) {
		if (tok == '=')
			ps.unknown = 0;
		ps.second = 0;
	}
	ps.bol = (tok == '\n');
	return (tok);
}

/* Skip the rest of a line the lexer could not make sense of. */
static int
conf_findeol(void)
{
	int	 c;

	while ((c = lgetc(1)) != EOF) {
		if (c == '\n' && !ps.frommacro) {
			lungetc(c);
			break;
		}
	}
	ps.lexfail = 1;
	return (conf_token(ERROR, "error"));
}

static int
conf_wordchar(int c)
{
	if (c <= 0 || c > 0x7f)
		return (0);
	return (isalnum(c) || strchr("._-/:~%+@,", c) != NULL);
}

/* FNV-1a: names are short and written by the administrator. */
static uint32_t
conf_macro_hash(const char *name)
{
	uint32_t	 h = 2166136261U;

	for (; *name != '\0'; name++) {
		h ^= (unsigned char)*name;
		h *= 16777619U;
	}
	return (h);
}

static struct conf_macro *
conf_macro_find(const char *name, uint32_t hash)
{
	struct conf_macro	*m;

	if (ps.macros.mt_size == 0)
		return (NULL);
	for (m = ps.macros.mt_bucket[hash & (ps.macros.mt_size - 1)];
	    m != NULL; m = m->m_next)
		if (m->m_hash == hash && strcmp(m->m_name, name) == 0)
			return (m);
	return (NULL);
}

static const char *
conf_macro_get(const char *name)
{
	struct conf_macro	*m;

	m = conf_macro_find(name, conf_macro_hash(name));
	return (m != NULL ? m->m_value : NULL);
}

/*
 * $name: read the name, and give the value back to the lexer to read
 * as if it stood in the file.  What a macro brings is not expanded
 * again, so a macro can never expand itself.
 */
static int
conf_expand(void)
{
	char		 name[CONF_NAME_MAX + 1];
	const char	*value;
	size_t		 len = 0, i;
	int		 c;

	while ((c = lgetc(1)) != EOF && (isalnum(c) || c == '_')) {
		if (len >= CONF_NAME_MAX) {
			yyerror("macro name too long (more than %d "
			    "characters)", CONF_NAME_MAX);
			return (-1);
		}
		name[len++] = c;
	}
	lungetc(c);
	name[len] = '\0';
	if (len == 0) {
		yyerror("$ must be followed by a macro name");
		return (-1);
	}
	if ((value = conf_macro_get(name)) == NULL) {
		yyerror("macro \"%s\" is not defined", name);
		return (-1);
	}
	len = strlen(value);
	if (ps.npb + len > CONF_PUSHBACK)
		fatalx("%s: macro too long", __func__);
	for (i = len; i > 0; i--) {
		ps.pb[ps.npb].pb_c = (unsigned char)value[i - 1];
		ps.pb[ps.npb].pb_macro = 1;
		ps.npb++;
	}
	return (0);
}

/* "..." or '...'; a backslash quotes the quote or itself. */
static int
conf_quoted(int quote)
{
	char	 buf[CONF_STRING_MAX];
	size_t	 len = 0;
	int	 c, next;

	for (;;) {
		c = lgetc(1);
		if (c == EOF || (c == '\n' && !ps.frommacro)) {
			lungetc(c);
			yyerror("unterminated string");
			ps.lexfail = 1;
			return (conf_token(ERROR, "error"));
		}
		if (c == '\\') {
			next = lgetc(1);
			if (next == quote || next == '\\')
				c = next;
			else
				lungetc(next);
		} else if (c == quote)
			break;
		else if (iscntrl(c) && c != '\t') {
			yyerror("control character 0x%02x in string", c);
			return (conf_findeol());
		}
		if (len >= sizeof(buf)) {
			yyerror("string too long (more than %d bytes)",
			    CONF_STRING_MAX);
			return (conf_findeol());
		}
		buf[len++] = c;
	}
	/* Every string goes to the children in msgpack, which takes UTF-8. */
	if (!mp_utf8_valid(buf, len)) {
		yyerror("string is not valid UTF-8");
		return (conf_findeol());
	}
	yylval.v.string = conf_word(buf, len);
	return (conf_token(STRING, yylval.v.string));
}

static int
conf_bare(int c)
{
	char	 buf[CONF_STRING_MAX];
	char	*word;
	size_t	 len = 0;

	do {
		if (len >= sizeof(buf)) {
			yyerror("word too long (more than %d bytes)",
			    CONF_STRING_MAX);
			return (conf_findeol());
		}
		buf[len++] = c;
	} while (conf_wordchar(c = lgetc(1)));
	lungetc(c);
	word = conf_word(buf, len);
	yylval.v.string = word;
	return (conf_token(conf_keyword(word), word));
}

int
yylex(void)
{
	char	 text[8];
	int	 c;

	ps.lexfail = 0;
	if (ps.giveup)
		return (conf_token(0, ""));
 top:
	while ((c = lgetc(1)) == ' ' || c == '\t' || c == '\r')
		;
	yylval.lineno = ps.file->f_lineno;
	yylval.v.string = NULL;

	if (c == '#' && !ps.frommacro) {
		while ((c = lgetc(0)) != '\n' && c != EOF)
			;
	}
	if (c == '$' && !ps.frommacro) {
		if (conf_expand() == -1)
			return (conf_findeol());
		goto top;
	}
	if (c == EOF) {
		/* Every file ends a line, with a newline or without. */
		if (!ps.file->f_ended) {
			ps.file->f_ended = 1;
			return (conf_token('\n', "\n"));
		}
		if (conf_file_pop() == 0)
			goto top;
		return (conf_token(0, ""));
	}
	if (c == '\n') {
		ps.file->f_lineno++;
		return (conf_token('\n', "\n"));
	}
	if (c == '"' || c == '\'')
		return (conf_quoted(c));
	if (conf_wordchar(c))
		return (conf_bare(c));

	if (isprint(c))
		(void)snprintf(text, sizeof(text), "%c", c);
	else
		(void)snprintf(text, sizeof(text), "\\x%02x", c);
	return (conf_token(c, text));
}

/* Values. */

static const struct {
	enum conf_unit	 u_unit;
	int		 u_suffix;
	long long	 u_mult;
} conf_suffixes[] = {
	{ UNIT_SIZE,	'K',	1LL << 10 },
	{ UNIT_SIZE,	'M',	1LL << 20 },
	{ UNIT_SIZE,	'G',	1LL << 30 },
	{ UNIT_SIZE,	'T',	1LL << 40 },
	{ UNIT_TIME,	's',	1 },
	{ UNIT_TIME,	'm',	60 },
	{ UNIT_TIME,	'h',	3600 },
	{ UNIT_TIME,	'd',	86400 }
};
#define CONF_NSUFFIXES	(sizeof(conf_suffixes) / sizeof(conf_suffixes[0]))

static long long
conf_suffix(enum conf_unit unit, int c)
{
	size_t	 i;

	if (unit == UNIT_SIZE)
		c = toupper(c);
	for (i = 0; i < CONF_NSUFFIXES; i++)
		if (conf_suffixes[i].u_unit == unit &&
		    conf_suffixes[i].u_suffix == c)
			return (conf_suffixes[i].u_mult);
	return (-1);
}

/* A bound as one would write it: 4M rather than 4194304. */
static void
conf_fmt(enum conf_unit unit, long long v, char *buf, size_t len)
{
	size_t	 i;

	for (i = CONF_NSUFFIXES; i > 0; i--) {
		if (conf_suffixes[i - 1].u_unit != unit)
			continue;
		if (v != 0 && v % conf_suffixes[i - 1].u_mult == 0) {
			(void)snprintf(buf, len, "%lld%c",
			    v / conf_suffixes[i - 1].u_mult,
			    conf_suffixes[i - 1].u_suffix);
			return;
		}
	}
	(void)snprintf(buf, len, "%lld", v);
}

/*
 * A whole number with the suffixes its unit allows, range-checked.
 * The errors name the setting, as written, and what it may be.
 */
static int
conf_value(const struct conf_num *n, const char *text, long long *out)
{
	static const char *expect[] = {
		[UNIT_NONE] = "a number",
		[UNIT_SIZE] = "a number of bytes, optionally with K, M, G "
		    "or T",
		[UNIT_TIME] = "a number of seconds, optionally with s, m, h "
		    "or d"
	};
	const char	*p = text;
	char		 lo[32], hi[32];
	long long	 v = 0, mult = 1;
	int		 neg = 0, big = 0;

	if (*p == '-') {
		neg = 1;
		p++;
	}
	if (!isdigit((unsigned char)*p))
		goto invalid;
	for (; isdigit((unsigned char)*p); p++) {
		if (v > (LLONG_MAX - 9) / 10)
			big = 1;
		else
			v = v * 10 + (*p - '0');
	}
	if (*p != '\0') {
		if (n->n_unit == UNIT_NONE || p[1] != '\0' ||
		    (mult = conf_suffix(n->n_unit, (unsigned char)*p)) == -1)
			goto invalid;
	}
	if (v > LLONG_MAX / mult)
		big = 1;
	else
		v *= mult;
	if (neg)
		v = -v;
	if (big || v < n->n_min || v > n->n_max) {
		conf_fmt(n->n_unit, n->n_min, lo, sizeof(lo));
		conf_fmt(n->n_unit, n->n_max, hi, sizeof(hi));
		yyerror("%s %s is out of range: must be between %s and %s%s",
		    n->n_name, text, lo, hi, n->n_what);
		return (-1);
	}
	*out = v;
	return (0);
 invalid:
	yyerror("%s \"%s\" is not valid: expected %s", n->n_name, text,
	    expect[n->n_unit]);
	return (-1);
}

static void
conf_listen(const char *addr, const char *port)
{
	struct in_addr	 a4;
	struct in6_addr	 a6;
	char		 text[INET6_ADDRSTRLEN];
	long long	 n = ps.conf->c_listen_port;

	if (inet_pton(AF_INET, addr, &a4) == 1) {
		if ((ntohl(a4.s_addr) >> 24) != IN_LOOPBACKNET) {
			yyerror("listen on %s: not a loopback address; the "
			    "API listens on 127.0.0.0/8 or ::1 only", addr);
			return;
		}
		if (inet_ntop(AF_INET, &a4, text, sizeof(text)) == NULL)
			fatal("%s: inet_ntop", __func__);
	} else if (inet_pton(AF_INET6, addr, &a6) == 1) {
		if (!IN6_IS_ADDR_LOOPBACK(&a6)) {
			yyerror("listen on %s: not a loopback address; the "
			    "API listens on 127.0.0.0/8 or ::1 only", addr);
			return;
		}
		if (inet_ntop(AF_INET6, &a6, text, sizeof(text)) == NULL)
			fatal("%s: inet_ntop", __func__);
	} else {
		yyerror("listen on %s: not an IPv4 or IPv6 address literal",
		    addr);
		return;
	}
	if (port != NULL && conf_value(&conf_num_port, port, &n) == -1)
		return;
	(void)strlcpy(ps.conf->c_listen_addr, text,
	    sizeof(ps.conf->c_listen_addr));
	ps.conf->c_listen_port = (uint16_t)n;
}

/* An absolute path that fits in len bytes (a socket's is short). */
static void
conf_path(const char *setting, const char *path, char *dst, size_t len)
{
	if (path[0] != '/') {
		yyerror("%s \"%s\" must be an absolute path", setting, path);
		return;
	}
	if (path[strspn(path, "/")] == '\0') {
		yyerror("%s \"%s\" may not be the root directory", setting,
		    path);
		return;
	}
	if (strlen(path) >= len) {
		yyerror("%s \"%s\" is too long (at most %zu bytes)", setting,
		    path, len - 1);
		return;
	}
	(void)strlcpy(dst, path, len);
}

/* `audit log PATH', `audit keep N', `audit off' (`audit size' above). */
static void
conf_audit(const char *word, const char *value)
{
	if (strcmp(word, "off") == 0 && value == NULL)
		ps.conf->c_audit_off = 1;
	else if (strcmp(word, "log") == 0 && value != NULL) {
		conf_path("audit log", value, ps.conf->c_audit_log,
		    sizeof(ps.conf->c_audit_log));
		ps.conf->c_audit_off = 0;
	} else if (strcmp(word, "keep") == 0 && value != NULL)
		conf_u32(&conf_num_audit_keep, value, &ps.conf->c_audit_keep);
	else
		yyerror("audit %s%s: expected `audit log PATH', `audit size "
		    "SIZE', `audit keep N' or `audit off'", word,
		    value != NULL ? " ..." : "");
}

static void
conf_homes(const char *homes)
{
	const char	*why;

	if (config_homes_check(homes, &why) == -1) {
		yyerror("homes \"%s\" %s", homes, why);
		return;
	}
	(void)strlcpy(ps.conf->c_homes, homes, sizeof(ps.conf->c_homes));
}

/* A user or group name as useradd(8) would take it. */
static void
conf_name(const char *setting, const char *name, char *dst, size_t len)
{
	size_t	 n;

	n = strlen(name);
	if (n == 0 || n >= len) {
		yyerror("%s \"%s\" must be 1 to %zu characters long",
		    setting, name, len - 1);
		return;
	}
	if (name[0] == '-' || strspn(name, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != n) {
		yyerror("%s \"%s\" is not a valid name", setting, name);
		return;
	}
	if (strspn(name, "0123456789") == n) {
		yyerror("%s \"%s\" is a number; give a name", setting, name);
		return;
	}
	(void)strlcpy(dst, name, len);
}

static void
conf_probe_dns(const char *name)
{
	if (!probe_name_valid(name)) {
		yyerror("probe dns \"%s\" is not a DNS name", name);
		return;
	}
	(void)strlcpy(ps.conf->c_probe_dns, name, sizeof(ps.conf->c_probe_dns));
}

/* `http origin "http://localhost:5173"': one page that may call the API. */
static void
conf_origin(const char *origin)
{
	uint32_t	 i;

	if (!http_origin_valid(origin)) {
		yyerror("http origin \"%s\" is not an origin: http:// or "
		    "https://, a lowercase host, a port only if not the "
		    "scheme's default, and nothing after", origin);
		return;
	}
	for (i = 0; i < ps.conf->c_http_norigins; i++)
		if (strcmp(ps.conf->c_http_origin[i], origin) == 0) {
			yyerror("http origin \"%s\" is listed twice", origin);
			return;
		}
	if (ps.conf->c_http_norigins >= HTTP_ORIGINS_MAX) {
		yyerror("http origin: at most %d origins", HTTP_ORIGINS_MAX);
		return;
	}
	(void)strlcpy(ps.conf->c_http_origin[ps.conf->c_http_norigins++],
	    origin, sizeof(ps.conf->c_http_origin[0]));
}

/* The first `probe tcp' of a configuration replaces the defaults. */
static void
conf_probe_tcp(const char *target)
{
	if (!probe_target_valid(target)) {
		yyerror("probe tcp \"%s\" is not host:port", target);
		return;
	}
	if (ps.probe_tcp == 0)
		ps.conf->c_probe_ntcp = 0;
	ps.probe_tcp++;
	if (ps.conf->c_probe_ntcp >= PROBE_TCP_MAX) {
		yyerror("probe tcp: at most %d targets", PROBE_TCP_MAX);
		return;
	}
	(void)strlcpy(ps.conf->c_probe_tcp[ps.conf->c_probe_ntcp++], target,
	    sizeof(ps.conf->c_probe_tcp[0]));
}

/* `probe egress allowed|refused NAME:PORT': an exact entry. */
static void
conf_probe_egress(const char *which, const char *target, char *dst)
{
	char		 canon[EGRESS_ENTRY_LEN];
	const char	*why;

	if (!egress_entry_canon(target, canon, &why)) {
		yyerror("probe egress %s \"%s\": %s", which, target, why);
		return;
	}
	if (canon[0] == '*') {
		yyerror("probe egress %s \"%s\": a target is one name, not "
		    "a wildcard", which, target);
		return;
	}
	(void)strlcpy(dst, canon, EGRESS_ENTRY_LEN);
}

/*
 * `egress host NAME ADDRESS port P': the proxy takes ADDRESS for NAME at
 * port P without asking a resolver; the one way to a private address or
 * one of the host's own, and only to that port (docs/egress.md).  The
 * form without a port, which granted every port of ADDRESS to any list
 * naming NAME, is refused with the form to use.
 */
static void
conf_egress_host(const char *name, const char *addr, const char *port)
{
	static const struct conf_num pn =
	    { "egress host port", UNIT_NONE, 1, 65535, "" };
	struct fenced_config	*c = ps.conf;
	char			 lname[EGRESS_NAME_LEN], line[EGRESS_HOST_LEN];
	char			 n[EGRESS_NAME_LEN], a[FENCED_ADDR_MAX];
	char			 n2[EGRESS_NAME_LEN], a2[FENCED_ADDR_MAX];
	size_t			 i;
	uint32_t		 k;
	uint16_t		 p, p2;
	long long		 v;

	if (strlen(name) >= sizeof(lname)) {
		yyerror("egress host: the name is over 253 bytes");
		return;
	}
	for (i = 0; name[i] != '\0'; i++)
		lname[i] = tolower((unsigned char)name[i]);
	lname[i] = '\0';
	if (!egress_name_valid(lname)) {
		yyerror("egress host \"%s\" is not a host name", name);
		return;
	}
	if (port == NULL) {
		yyerror("egress host %s %s: name the one port it is for: "
		    "egress host %s %s port NUMBER", name, addr, name, addr);
		return;
	}
	if (conf_value(&pn, port, &v) == -1)
		return;
	(void)snprintf(line, sizeof(line), "%s %s %lld", lname, addr, v);
	if (strlen(addr) >= sizeof(a) || strchr(addr, ' ') != NULL ||
	    !egress_host_parse(line, n, sizeof(n), a, sizeof(a), &p)) {
		yyerror("egress host %s: \"%s\" is not an IPv4 or IPv6 "
		    "address", name, addr);
		return;
	}
	for (k = 0; k < c->c_egress_nhosts; k++) {
		if (egress_host_parse(c->c_egress_host[k], n2, sizeof(n2),
		    a2, sizeof(a2), &p2) && strcmp(n2, n) == 0 && p2 == p) {
			yyerror("egress host %s port %u is given twice", name,
			    (unsigned)p);
			return;
		}
	}
	if (c->c_egress_nhosts >= EGRESS_HOSTS_MAX) {
		yyerror("egress host: at most %d names", EGRESS_HOSTS_MAX);
		return;
	}
	(void)strlcpy(c->c_egress_host[c->c_egress_nhosts++], line,
	    sizeof(c->c_egress_host[0]));
}

/*
 * Whether ADDRESS at port is fenced's own API: a loopback or unspecified
 * address, or the listen address, at the listen port.  The API listens
 * on loopback only; any loopback address at its port is refused, as it
 * could be it.
 */
static int
conf_egress_host_api(const char *addr, uint16_t port)
{
	struct fenced_config	*c = ps.conf;
	struct in_addr		 a4;
	struct in6_addr		 a6;

	if (port != c->c_listen_port)
		return (0);
	if (strcmp(addr, c->c_listen_addr) == 0)
		return (1);
	if (inet_pton(AF_INET, addr, &a4) == 1)
		return ((ntohl(a4.s_addr) >> 24) == IN_LOOPBACKNET ||
		    a4.s_addr == htonl(INADDR_ANY));
	if (inet_pton(AF_INET6, addr, &a6) == 1)
		return (IN6_IS_ADDR_LOOPBACK(&a6) ||
		    IN6_IS_ADDR_UNSPECIFIED(&a6) ||
		    (IN6_IS_ADDR_V4MAPPED(&a6) &&
		    (a6.s6_addr[12] == IN_LOOPBACKNET ||
		    memcmp(&a6.s6_addr[12], "\0\0\0\0", 4) == 0)));
	return (0);
}

/*
 * `egress resolver ADDRESS [port N]': a numeric address; one port for
 * all of them.  `egress resolver port N' alone sets the port, also of
 * the nameservers taken from /etc/resolv.conf.
 */
static void
conf_egress_resolver(const char *addr, const char *port)
{
	struct fenced_config	*c = ps.conf;
	unsigned char		 bin[sizeof(struct in6_addr)];
	long long		 v;

	if (addr != NULL && (strlen(addr) >= sizeof(c->c_egress_resolver[0]) ||
	    (inet_pton(AF_INET, addr, bin) != 1 &&
	    inet_pton(AF_INET6, addr, bin) != 1))) {
		yyerror("egress resolver \"%s\" is not an IPv4 or IPv6 "
		    "address", addr);
		return;
	}
	if (port != NULL) {
		static const struct conf_num n =
		    { "egress resolver port", UNIT_NONE, 1, 65535, "" };

		if (conf_value(&n, port, &v) == -1)
			return;
		c->c_egress_resolver_port = (uint16_t)v;
	}
	if (addr == NULL)
		return;
	if (c->c_egress_nresolvers >= EGRESS_RESOLVERS_MAX) {
		yyerror("egress resolver: at most %d", EGRESS_RESOLVERS_MAX);
		return;
	}
	(void)strlcpy(c->c_egress_resolver[c->c_egress_nresolvers++], addr,
	    sizeof(c->c_egress_resolver[0]));
}

/* LOW-HIGH, both ends included. */
static void
conf_uids(const char *range)
{
	static const struct conf_num uid =
	    { "fence uids", UNIT_NONE, FENCE_UID_MIN, FENCE_UID_MAX, "" };
	const char	*dash;
	char		 low[32];
	long long	 lo, hi;

	dash = strchr(range, '-');
	if (dash == NULL || dash == range || dash[1] == '\0' ||
	    (size_t)(dash - range) >= sizeof(low)) {
		yyerror("fence uids \"%s\" is not valid: expected a range "
		    "LOW-HIGH, as 1879048192-1879049215", range);
		return;
	}
	memcpy(low, range, dash - range);
	low[dash - range] = '\0';
	if (conf_value(&uid, low, &lo) == -1 ||
	    conf_value(&uid, dash + 1, &hi) == -1)
		return;
	if (lo > hi) {
		yyerror("fence uids %s is reversed: %lld is above %lld",
		    range, lo, hi);
		return;
	}
	if (lo <= FENCE_UID_NOBODY && hi >= FENCE_UID_NOBODY) {
		yyerror("fence uids %s contains %d, the uid of nobody", range,
		    FENCE_UID_NOBODY);
		return;
	}
	ps.conf->c_fence_uid_lo = (uid_t)lo;
	ps.conf->c_fence_uid_hi = (uid_t)hi;
}

static void
conf_tier(const char *name)
{
	int	 tier;

	if ((tier = tier_parse(name)) == -1) {
		yyerror("tier \"%s\" is not valid: expected L1, L1.5 or L2",
		    name);
		return;
	}
	ps.conf->c_tier = tier;
}

static void
conf_backend(const char *name)
{
	int	 backend;

	if ((backend = backend_parse(name)) == -1) {
		yyerror("backend \"%s\" is not valid: expected native, runsc, "
		    "vm, mock or subprocess", name);
		return;
	}
	ps.conf->c_backend = backend;
}

/* `pool TIER N': N fences of TIER built ahead (docs/pool.md). */
static void
conf_pool(const char *tiername, const char *count)
{
	const char	*errstr;
	long long	 n;
	int		 tier;

	if ((tier = tier_parse(tiername)) == -1) {
		yyerror("pool tier \"%s\" is not valid: expected L1, L1.5 "
		    "or L2", tiername);
		return;
	}
	n = strtonum(count, 0, POOL_MAX, &errstr);
	if (errstr != NULL) {
		yyerror("pool %s %s: the number of fences is %s: expected "
		    "0 to %d", tiername, count, errstr, POOL_MAX);
		return;
	}
	ps.conf->c_pool[tier - TIER_L1] = (uint32_t)n;
}

/* `vm accel auto|kvm|tcg'. */
static void
conf_vm_accel(const char *name)
{
	if (strcmp(name, "auto") == 0)
		ps.conf->c_vm_accel = VM_ACCEL_AUTO;
	else if (strcmp(name, "kvm") == 0)
		ps.conf->c_vm_accel = VM_ACCEL_KVM;
	else if (strcmp(name, "tcg") == 0)
		ps.conf->c_vm_accel = VM_ACCEL_TCG;
	else
		yyerror("vm accel \"%s\" is not valid: expected auto, kvm "
		    "or tcg", name);
}

/* `vm kernel|initrd|image PATH sha256 HEX': the file and its hash. */
static void
conf_vm_file(int which, const char *path, const char *hex)
{
	static const char *const names[VM_FILE_MAX] = {
		"vm kernel", "vm initrd", "vm image"
	};

	conf_path(names[which], path, ps.conf->c_vm_path[which],
	    sizeof(ps.conf->c_vm_path[which]));
	if (!sha256_hex_valid(hex)) {
		yyerror("%s sha256 \"%s\" is not valid: expected 64 "
		    "lowercase hex digits", names[which], hex);
		ps.conf->c_vm_path[which][0] = '\0';
		return;
	}
	(void)strlcpy(ps.conf->c_vm_sha256[which], hex,
	    sizeof(ps.conf->c_vm_sha256[which]));
}

/* The gVisor platforms runsc has; which work is found at start. */
static void
conf_runsc_platform(const char *name)
{
	if (strcmp(name, "ptrace") != 0 && strcmp(name, "kvm") != 0 &&
	    strcmp(name, "systrap") != 0) {
		yyerror("runsc platform \"%s\" is not valid: expected ptrace, "
		    "systrap or kvm", name);
		return;
	}
	(void)strlcpy(ps.conf->c_runsc_platform, name,
	    sizeof(ps.conf->c_runsc_platform));
}

static void
conf_home(const char *text)
{
	long long	 v;

	if (conf_value(&conf_num_home, text, &v) == 0)
		ps.conf->c_home_limit = (uint64_t)v;
}

/* `limit snapshots' and the user's: a count or a size. */
static void
conf_snap(const struct conf_num *n, const char *text, uint32_t *count,
    uint64_t *bytes)
{
	long long	 v;

	if (conf_value(n, text, &v) != 0)
		return;
	if (count != NULL)
		*count = (uint32_t)v;
	else
		*bytes = (uint64_t)v;
}

static void
conf_fmt_milli(long long milli, char *buf, size_t len)
{
	size_t	 n;

	(void)snprintf(buf, len, "%lld.%03lld", milli / 1000, milli % 1000);
	n = strlen(buf);
	while (buf[n - 1] == '0')
		buf[--n] = '\0';
	if (buf[n - 1] == '.')
		buf[--n] = '\0';
}

/* CPUs as a decimal, to a thousandth: 1, 0.5, 2.25. */
static int
conf_cpu_value(const char *setting, const char *text, long long max,
    long long *out)
{
	const char	*p = text;
	char		 lo[32], hi[32];
	long long	 whole = 0, frac = 0;
	int		 ndec = 0, big = 0;

	if (!isdigit((unsigned char)*p))
		goto invalid;
	for (; isdigit((unsigned char)*p); p++) {
		if (whole > LLONG_MAX / 10000)
			big = 1;
		else
			whole = whole * 10 + (*p - '0');
	}
	if (*p == '.') {
		if (!isdigit((unsigned char)*++p))
			goto invalid;
		for (; isdigit((unsigned char)*p); p++) {
			if (ndec == 3) {
				if (*p != '0') {
					yyerror("%s %s: at most three "
					    "decimals", setting, text);
					return (-1);
				}
				continue;
			}
			frac = frac * 10 + (*p - '0');
			ndec++;
		}
	}
	if (*p != '\0')
		goto invalid;
	for (; ndec < 3; ndec++)
		frac *= 10;
	whole = whole * 1000 + frac;
	if (big || whole < CPU_MILLI_MIN || whole > max) {
		conf_fmt_milli(CPU_MILLI_MIN, lo, sizeof(lo));
		conf_fmt_milli(max, hi, sizeof(hi));
		yyerror("%s %s is out of range: must be between %s and "
		    "%s cpus", setting, text, lo, hi);
		return (-1);
	}
	*out = whole;
	return (0);
 invalid:
	yyerror("%s \"%s\" is not valid: expected a number of cpus, "
	    "as 1 or 0.5", setting, text);
	return (-1);
}

/*
 * A fence's default and its ceiling, the most a boot request may ask
 * for.  Without `max' the one value is both: `limit memory 1G' is what
 * every fence gets and no request may ask for more.
 */
static void
conf_default_max(const char *setting, const char *def, const char *max,
    long long d, long long m, uint64_t *pdef, uint64_t *pmax)
{
	if (d > m) {
		yyerror("%s %s is above its max %s", setting, def, max);
		return;
	}
	*pdef = (uint64_t)d;
	*pmax = (uint64_t)m;
}

static void
conf_lifetime(const char *def, const char *max)
{
	uint64_t	 d, m;
	long long	 vd, vm;

	if (conf_value(&conf_num_lifetime, def, &vd) == -1)
		return;
	vm = vd;
	if (max != NULL && conf_value(&conf_num_lifetime_max, max, &vm) == -1)
		return;
	d = ps.conf->c_lifetime;
	m = ps.conf->c_lifetime_max;
	conf_default_max("lifetime", def, max, vd, vm, &d, &m);
	ps.conf->c_lifetime = (uint32_t)d;
	ps.conf->c_lifetime_max = (uint32_t)m;
}

/* limit memory|pids|cpu DEFAULT [max CEILING] */
static void
conf_limit(int which, const char *def, const char *max)
{
	struct fence_limits	*ld = &ps.conf->c_limits;
	struct fence_limits	*lm = &ps.conf->c_limits_max;
	uint64_t		 d, m;
	long long		 vd, vm;

	switch (which) {
	case MEMORY:
		if (conf_value(&conf_num_memory, def, &vd) == -1)
			return;
		vm = vd;
		if (max != NULL &&
		    conf_value(&conf_num_memory_max, max, &vm) == -1)
			return;
		conf_default_max("limit memory", def, max, vd, vm,
		    &ld->fl_memory, &lm->fl_memory);
		break;
	case PIDS:
		if (conf_value(&conf_num_pids, def, &vd) == -1)
			return;
		vm = vd;
		if (max != NULL &&
		    conf_value(&conf_num_pids_max, max, &vm) == -1)
			return;
		d = ld->fl_pids;
		m = lm->fl_pids;
		conf_default_max("limit pids", def, max, vd, vm, &d, &m);
		ld->fl_pids = (uint32_t)d;
		lm->fl_pids = (uint32_t)m;
		break;
	case CPU:
		if (conf_cpu_value("limit cpu", def, CPU_MILLI_MAX, &vd) == -1)
			return;
		vm = vd;
		if (max != NULL && conf_cpu_value("limit cpu max", max,
		    CPU_MILLI_MAX, &vm) == -1)
			return;
		d = ld->fl_cpu_milli;
		m = lm->fl_cpu_milli;
		conf_default_max("limit cpu", def, max, vd, vm, &d, &m);
		ld->fl_cpu_milli = (uint32_t)d;
		lm->fl_cpu_milli = (uint32_t)m;
		break;
	}
}

/* user limit fences|memory|pids|cpu TOTAL: one owner's running fences. */
static void
conf_user_limit(int which, const char *text)
{
	struct fence_limits	*lu = &ps.conf->c_user_limits;
	long long		 v;

	switch (which) {
	case FENCES:
		if (conf_value(&conf_num_user_fences, text, &v) == 0)
			ps.conf->c_user_fences = (uint32_t)v;
		break;
	case MEMORY:
		if (conf_value(&conf_num_user_memory, text, &v) == 0) {
			lu->fl_memory = (uint64_t)v;
			ps.user_set |= USER_SET_MEMORY;
		}
		break;
	case PIDS:
		if (conf_value(&conf_num_user_pids, text, &v) == 0) {
			lu->fl_pids = (uint32_t)v;
			ps.user_set |= USER_SET_PIDS;
		}
		break;
	case CPU:
		if (conf_cpu_value("user limit cpu", text, USER_CPU_MILLI_MAX,
		    &v) == 0) {
			lu->fl_cpu_milli = (uint32_t)v;
			ps.user_set |= USER_SET_CPU;
		}
		break;
	}
}

/*
 * What only the whole file can say, whatever the order of its lines:
 * a user's total below the default of one fence would refuse every
 * boot with the defaults.  Written so, it is an error rather than a
 * surprise at boot; left at the built-in value, it is raised to the
 * default.
 */
static int
conf_check(void)
{
	struct fenced_config	*c = ps.conf;
	struct fence_limits	*d = &c->c_limits, *u = &c->c_user_limits;
	char			 a[32], b[32];
	int			 bad = 0, i;

	/* fenced's own API is never a destination of the egress proxy. */
	for (i = 0; i < (int)c->c_egress_nhosts; i++) {
		char		 n[EGRESS_NAME_LEN], ad[FENCED_ADDR_MAX];
		uint16_t	 p;

		if (egress_host_parse(c->c_egress_host[i], n, sizeof(n), ad,
		    sizeof(ad), &p) && conf_egress_host_api(ad, p)) {
			log_warnx("%s: egress host %s %s port %u: that is "
			    "fenced's own API (listen on %s port %u), never "
			    "a destination", ps.file->f_name, n, ad,
			    (unsigned)p, c->c_listen_addr,
			    (unsigned)c->c_listen_port);
			bad = 1;
		}
	}
	/*
	 * The vm's boot files: all three named, or none (the ones built
	 * into fenced, docs/vm.md); never some of one and some of the other.
	 */
	for (i = 0; i < VM_FILE_MAX; i++)
		if ((c->c_vm_path[i][0] == '\0') !=
		    (c->c_vm_path[0][0] == '\0')) {
			log_warnx("%s: vm kernel, vm initrd and vm image go "
			    "together: name all three, or none for the files "
			    "built into fenced", ps.file->f_name);
			bad = 1;
			break;
		}
	/* Only native fences are pooled: another backend's pool is refused. */
	for (i = 0; i < 3; i++)
		if (c->c_pool[i] != 0 && c->c_backend != BACKEND_NATIVE) {
			log_warnx("%s: pool %s %u: only the native backend "
			    "keeps a pool, and backend is %s", ps.file->f_name,
			    tier_name(TIER_L1 + i), c->c_pool[i],
			    backend_name(c->c_backend));
			bad = 1;
		}
	/* A fence holds no more snapshots than its owner may. */
	if (c->c_snap_count > c->c_user_snap_count)
		c->c_snap_count = c->c_user_snap_count;
	if (c->c_snap_bytes > c->c_user_snap_bytes)
		c->c_snap_bytes = c->c_user_snap_bytes;
	if (u->fl_memory < d->fl_memory) {
		if (ps.user_set & USER_SET_MEMORY) {
			conf_fmt(UNIT_SIZE, u->fl_memory, a, sizeof(a));
			conf_fmt(UNIT_SIZE, d->fl_memory, b, sizeof(b));
			log_warnx("%s: user limit memory %s is below limit "
			    "memory %s: no fence could boot with the "
			    "defaults", ps.file->f_name, a, b);
			bad = 1;
		} else
			u->fl_memory = d->fl_memory;
	}
	if (u->fl_pids < d->fl_pids) {
		if (ps.user_set & USER_SET_PIDS) {
			log_warnx("%s: user limit pids %u is below limit pids "
			    "%u: no fence could boot with the defaults",
			    ps.file->f_name, u->fl_pids, d->fl_pids);
			bad = 1;
		} else
			u->fl_pids = d->fl_pids;
	}
	if (u->fl_cpu_milli < d->fl_cpu_milli) {
		if (ps.user_set & USER_SET_CPU) {
			conf_fmt_milli(u->fl_cpu_milli, a, sizeof(a));
			conf_fmt_milli(d->fl_cpu_milli, b, sizeof(b));
			log_warnx("%s: user limit cpu %s is below limit cpu "
			    "%s: no fence could boot with the defaults",
			    ps.file->f_name, a, b);
			bad = 1;
		} else
			u->fl_cpu_milli = d->fl_cpu_milli;
	}
	return (bad ? -1 : 0);
}

/* A default and, optionally, the most a request may ask for. */
static void
conf_exec(const struct conf_num *ndef, const struct conf_num *nmax,
    const char *def, const char *max, uint32_t *pdef, uint32_t *pmax)
{
	char		 text[32];
	long long	 d, m = *pmax;

	if (conf_value(ndef, def, &d) == -1)
		return;
	if (max != NULL && conf_value(nmax, max, &m) == -1)
		return;
	if (d > m) {
		conf_fmt(ndef->n_unit, m, text, sizeof(text));
		yyerror("%s %s is above its max %s%s", ndef->n_name, def,
		    text, ndef->n_what);
		return;
	}
	*pdef = (uint32_t)d;
	*pmax = (uint32_t)m;
}

/* A whole number the grammar stores as is. */
static void
conf_u32(const struct conf_num *n, const char *text, uint32_t *dst)
{
	long long	 v;

	if (conf_value(n, text, &v) == 0)
		*dst = (uint32_t)v;
}

/*
 * The most connections, and the most of one user.  Without `per user'
 * the per-user limit is kept, and lowered to the total if above it.
 */
static void
conf_conns(const char *max, const char *per)
{
	long long	 m, u = ps.conf->c_http_conns_user;

	if (conf_value(&conf_num_http_conns, max, &m) == -1)
		return;
	if (per != NULL) {
		if (conf_value(&conf_num_http_conns_user, per, &u) == -1)
			return;
		if (u > m) {
			yyerror("http connections per user %s is above the "
			    "max %s", per, max);
			return;
		}
	} else if (u > m)
		u = m;
	ps.conf->c_http_conns_max = (uint32_t)m;
	ps.conf->c_http_conns_user = (uint32_t)u;
}

/* Macros and includes. */

/* Twice the buckets, at most one macro a bucket on average. */
static void
conf_macros_grow(void)
{
	struct conf_macro	**nb, *m, *next;
	size_t			 nsize, i;

	nsize = ps.macros.mt_size == 0 ? CONF_MACRO_BUCKETS :
	    ps.macros.mt_size * 2;
	if ((nb = calloc(nsize, sizeof(*nb))) == NULL)
		fatal("%s", __func__);
	for (i = 0; i < ps.macros.mt_size; i++) {
		for (m = ps.macros.mt_bucket[i]; m != NULL; m = next) {
			next = m->m_next;
			m->m_next = nb[m->m_hash & (nsize - 1)];
			nb[m->m_hash & (nsize - 1)] = m;
		}
	}
	free(ps.macros.mt_bucket);
	ps.macros.mt_bucket = nb;
	ps.macros.mt_size = nsize;
}

static void
conf_macro_set(const char *name, const char *value)
{
	struct conf_macro	*m, **b;
	uint32_t		 hash;
	size_t			 n;

	n = strlen(name);
	if (n == 0 || n > CONF_NAME_MAX || strspn(name,
	    "abcdefghijklmnopqrstuvwxyz" "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "0123456789_") != n) {
		yyerror("macro name \"%s\" is not valid: use 1 to %d letters, "
		    "digits or _", name, CONF_NAME_MAX);
		return;
	}
	hash = conf_macro_hash(name);
	if ((m = conf_macro_find(name, hash)) == NULL) {
		if (ps.macros.mt_count >= ps.macros.mt_size)
			conf_macros_grow();
		if ((m = calloc(1, sizeof(*m))) == NULL ||
		    (m->m_name = strdup(name)) == NULL)
			fatal("%s", __func__);
		m->m_hash = hash;
		b = &ps.macros.mt_bucket[hash & (ps.macros.mt_size - 1)];
		m->m_next = *b;
		*b = m;
		ps.macros.mt_count++;
	}
	free(m->m_value);
	if ((m->m_value = strdup(value)) == NULL)
		fatal("%s", __func__);
}

static void
conf_macros_free(void)
{
	struct conf_macro	*m, *next;
	size_t			 i;

	for (i = 0; i < ps.macros.mt_size; i++) {
		for (m = ps.macros.mt_bucket[i]; m != NULL; m = next) {
			next = m->m_next;
			free(m->m_name);
			free(m->m_value);
			free(m);
		}
	}
	free(ps.macros.mt_bucket);
	memset(&ps.macros, 0, sizeof(ps.macros));
}

/*
 * Read another file in place of the include line.  A relative name is
 * taken from the directory of the file that includes it, so that a
 * configuration reads the same from wherever the daemon was started.
 */
static void
conf_include(const char *name)
{
	struct conf_file	*f, *g;
	const char		*slash;
	char			 path[PATH_MAX], why[128];
	int			 depth = 0, n;

	TAILQ_FOREACH(g, &ps.files, f_entry)
		depth++;
	if (depth >= CONF_INCLUDE_DEPTH) {
		yyerror("include \"%s\": files nested more than %d deep",
		    name, CONF_INCLUDE_DEPTH);
		return;
	}
	slash = strrchr(ps.file->f_name, '/');
	if (name[0] == '/' || slash == NULL)
		n = snprintf(path, sizeof(path), "%s", name);
	else
		n = snprintf(path, sizeof(path), "%.*s/%s",
		    (int)(slash - ps.file->f_name), ps.file->f_name, name);
	if (name[0] == '\0' || n < 0 || (size_t)n >= sizeof(path)) {
		yyerror("include \"%s\": not a valid file name", name);
		return;
	}
	if ((f = conf_file_open(path, why, sizeof(why))) == NULL) {
		yyerror("include %s: %s", path, why);
		return;
	}
	TAILQ_FOREACH(g, &ps.files, f_entry) {
		if (g->f_dev == f->f_dev && g->f_ino == f->f_ino) {
			yyerror("include %s: that file is being read "
			    "already (an include loop)", path);
			conf_file_close(f);
			return;
		}
	}
	conf_file_push(f);
}

/*
 * Parse filename on top of what conf holds (config_defaults(), as a
 * rule).  Returns 0, or -1 after logging every error; conf is changed
 * only on success.
 */
int
config_parse(const char *filename, struct fenced_config *conf)
{
	struct fenced_config	 work;
	struct conf_file	*f;
	char			 why[128];
	int			 rv;

	memset(&ps, 0, sizeof(ps));
	TAILQ_INIT(&ps.files);
	if ((f = conf_file_open(filename, why, sizeof(why))) == NULL) {
		log_warnx("%s: %s", filename, why);
		return (-1);
	}
	work = *conf;
	ps.conf = &work;
	ps.bol = 1;
	conf_file_push(f);

	rv = yyparse();
	if (rv == 0 && ps.errors == 0 && conf_check() == -1)
		rv = -1;

	while ((f = TAILQ_FIRST(&ps.files)) != NULL) {
		TAILQ_REMOVE(&ps.files, f, f_entry);
		conf_file_close(f);
	}
	ps.file = NULL;
	ps.conf = NULL;
	conf_macros_free();
	conf_words_free();
	if (rv != 0 || ps.errors > 0)
		return (-1);
	*conf = work;
	return (0);
}
