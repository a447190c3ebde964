/*
 * fencectl's command line as a tree of token tables, the shape of
 * OpenBSD's relayctl and bgpctl parsers.  parse() walks it from t_main
 * one word at a time: a word matches a fixed word of the table it is at
 * (a KEYWORD naming the command, an OPTION before its value, a FLAG, the
 * "--" of an ARGV) or else the table's one value token (a fence, a
 * number with its bounds, a tier, a string with its length); the match
 * says where the next word is looked up.  A table with a NOTOKEN may end
 * the command.  Option tables point their values back at themselves, so
 * options come in any order, the last of a name counting.  Words match
 * whole, never abbreviated as relayctl allows: a new command must not
 * turn an old abbreviation into another one.  A word that matches
 * nothing is named with what the table expected there, and nothing is
 * sent.  The usage is printed from the same tables, so it cannot tell
 * another story.
 */
#include <sys/types.h>

#include <ctype.h>
#include <err.h>
#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fenced.h"
#include "msg.h"
#include "parser.h"

enum token_type {
	NOTOKEN,	/* the command may end here */
	ENDTOKEN,	/* the end of a table */
	KEYWORD,	/* a command's word; t_value its action, or CTL_NONE */
	OPTION,		/* an option's name; its value is in t_next */
	FLAG,		/* a word that sets t_value */
	ARGV,		/* "--", then t_min to t_max words, the rest */
	FENCE,		/* [OWNER/]KEY */
	FENCE_ALL,	/* [OWNER/]KEY, or all */
	NUMBER,		/* decimal, t_min to t_max */
	SIZE,		/* decimal with K, M or G, t_min to t_max */
	CPUS,		/* a number of cpus, t_min to t_max thousandths */
	TIER,
	LEVEL,
	BACKEND,
	INNER,		/* none or runsc */
	STRING		/* at most t_max bytes */
};

/* Where a value goes in the parse_result. */
enum token_field {
	F_NONE = 0,
	F_KEY,
	F_TIER,
	F_BACKEND,
	F_INNER,
	F_REQUIRE,
	F_LIFETIME,
	F_MEMORY,
	F_PIDS,
	F_CPU,
	F_TIMEOUT,
	F_CWD,
	F_OUTPUT,
	F_NAME,
	F_EMAIL,
	F_PATH,
	F_LOCAL,
	F_REPLACE,
	F_DELETE,
	F_TOKEN,
	F_COLD,
	F_STDIN_OPEN,
	F_ARGV,
	F_PROC,
	F_SIGNAL,
	F_EGRESS,
	F_PORT,
	F_LOCALPORT,
	F_SNAP,
	F_FROM,
	F_UNDO,
	F_LINES
};

struct token {
	enum token_type		 t_type;
	const char		*t_word;	/* the word, or the value's name */
	int			 t_value;	/* an action, or a token_field */
	const struct token	*t_next;
	uint64_t		 t_min;
	uint64_t		 t_max;
};

static const struct token t_main[];
static const struct token t_snap[];
static const struct token t_snap_name[];
static const struct token t_snap_need[];
static const struct token t_snap_key[];
static const struct token t_show_snaps[];
static const struct token t_delete[];
static const struct token t_boot_from[];
static const struct token t_show[];
static const struct token t_log[];
static const struct token t_end[];
static const struct token t_key[];
static const struct token t_boot[];
static const struct token t_boot_opts[];
static const struct token t_boot_tier[];
static const struct token t_boot_egress[];
static const struct token t_boot_egress_more[];
static const struct token t_boot_backend[];
static const struct token t_boot_inner[];
static const struct token t_boot_require[];
static const struct token t_boot_lifetime[];
static const struct token t_boot_memory[];
static const struct token t_boot_pids[];
static const struct token t_boot_cpu[];
static const struct token t_stop[];
static const struct token t_put[];
static const struct token t_put_local[];
static const struct token t_put_path[];
static const struct token t_get[];
static const struct token t_get_path[];
static const struct token t_get_local[];
static const struct token t_exec[];
static const struct token t_exec_opts[];
static const struct token t_exec_timeout[];
static const struct token t_exec_cwd[];
static const struct token t_exec_output[];
static const struct token t_gitconfig[];
static const struct token t_gitconfig_opts[];
static const struct token t_gitconfig_name[];
static const struct token t_gitconfig_email[];
static const struct token t_gitinit[];
static const struct token t_gitinit_path[];
static const struct token t_token[];
static const struct token t_token_name[];
static const struct token t_token_named[];
static const struct token t_spawn[];
static const struct token t_spawn_opts[];
static const struct token t_spawn_timeout[];
static const struct token t_spawn_cwd[];
static const struct token t_spawn_output[];
static const struct token t_proc_key[];
static const struct token t_proc_id[];
static const struct token t_kill_key[];
static const struct token t_kill_id[];
static const struct token t_kill_signal[];
static const struct token t_forward[];
static const struct token t_port[];
static const struct token t_port_port[];
static const struct token t_forward_port[];
static const struct token t_forward_local[];

static const struct token t_main[] = {
	{ KEYWORD, "show", CTL_NONE, t_show, 0, 0 },
	{ KEYWORD, "doctor", CTL_DOCTOR, t_end, 0, 0 },
	{ KEYWORD, "boot", CTL_BOOT, t_boot, 0, 0 },
	{ KEYWORD, "stop", CTL_STOP, t_stop, 0, 0 },
	{ KEYWORD, "exec", CTL_EXEC, t_exec, 0, 0 },
	{ KEYWORD, "git-config", CTL_GIT_CONFIG, t_gitconfig, 0, 0 },
	{ KEYWORD, "git-init", CTL_GIT_INIT, t_gitinit, 0, 0 },
	{ KEYWORD, "put", CTL_PUT, t_put, 0, 0 },
	{ KEYWORD, "get", CTL_GET, t_get, 0, 0 },
	{ KEYWORD, "probe", CTL_PROBE, t_key, 0, 0 },
	{ KEYWORD, "log", CTL_NONE, t_log, 0, 0 },
	{ KEYWORD, "reload", CTL_RELOAD, t_end, 0, 0 },
	{ KEYWORD, "token", CTL_TOKEN, t_token, 0, 0 },
	{ KEYWORD, "spawn", CTL_SPAWN, t_spawn, 0, 0 },
	{ KEYWORD, "kill", CTL_KILL, t_kill_key, 0, 0 },
	{ KEYWORD, "forward", CTL_FORWARD, t_forward, 0, 0 },
	{ KEYWORD, "ports", CTL_PORTS, t_key, 0, 0 },
	{ KEYWORD, "port", CTL_PORT, t_port, 0, 0 },
	{ KEYWORD, "snapshot", CTL_SNAPSHOT, t_snap, 0, 0 },
	{ KEYWORD, "restore", CTL_RESTORE, t_snap_key, 0, 0 },
	{ KEYWORD, "undo", CTL_UNDO, t_key, 0, 0 },
	{ KEYWORD, "delete", CTL_NONE, t_delete, 0, 0 },
	{ KEYWORD, "help", CTL_HELP, t_end, 0, 0 },
	{ ENDTOKEN, NULL, 0, NULL, 0, 0 }
};

/* snapshot KEY [NAME]; restore KEY NAME; delete snapshot KEY NAME. */
static const struct token t_snap[] = {
	{ FENCE, "KEY", F_KEY, t_snap_name, 0, 0 },
	{ ENDTOKEN, NULL, 0, NULL, 0, 0 }
};

static const struct token t_snap_name[] = {
	{ NOTOKEN, NULL, 0, NULL, 0, 0 },
	{ STRING, "NAME", F_SNAP, t_end, 0, FENCE_KEY_MAX },
	{ ENDTOKEN, NULL, 0, NULL, 0, 0 }
};

static const struct token t_snap_key[] = {
	{ FENCE, "KEY", F_KEY, t_snap_need, 0, 0 },
	{ ENDTOKEN, NULL, 0, NULL, 0, 0 }
};

static const struct token t_snap_need[] = {
	{ STRING, "NAME", F_SNAP, t_end, 0, FENCE_KEY_MAX },
	{ ENDTOKEN, NULL, 0, NULL, 0, 0 }
};

static const struct token t_delete[] = {
	{ KEYWORD, "snapshot", CTL_DELETE_SNAP, t_snap_key, 0, 0 },
	{ ENDTOKEN, NULL, 0, NULL, 0, 0 }
};

/* show snapshots [KEY] */
static const struct token t_show_snaps[] = {
	{ NOTOKEN, NULL, 0, NULL, 0, 0 },
	{ FENCE, "KEY", F_KEY, t_end, 0, 0 },
	{ ENDTOKEN, NULL, 0, NULL, 0, 0 }
};

/* boot ... from KEY[@SNAPSHOT] */
static const struct token t_boot_from[] = {
	{ STRING, "KEY[@SNAPSHOT]", F_FROM, t_boot_opts, 0,
	    2 * FENCE_KEY_MAX + 1 },
	{ ENDTOKEN, NULL, 0, NULL, 0, 0 }
};

/* show audit [N] */
static const struct token t_show_audit[] = {
	{ NOTOKEN, NULL, 0, NULL, 0, 0 },
	{ NUMBER, "N", F_LINES, t_end, 1, AUDIT_SHOW_MAX },
	{ ENDTOKEN, NULL, 0, NULL, 0, 0 }
};

static const struct token t_show[] = {
	{ KEYWORD, "stats", CTL_SHOW_STATS, t_end, 0, 0 },
	{ KEYWORD, "environments", CTL_SHOW_ENVS, t_end, 0, 0 },
	{ KEYWORD, "environment", CTL_SHOW_ENV, t_key, 0, 0 },
	{ KEYWORD, "tokens", CTL_SHOW_TOKENS, t_end, 0, 0 },
	{ KEYWORD, "processes", CTL_SHOW_PROCS, t_key, 0, 0 },
	{ KEYWORD, "process", CTL_SHOW_PROC, t_proc_key, 0, 0 },
	{ KEYWORD, "snapshots", CTL_SHOW_SNAPS, t_show_snaps, 0, 0 },
	{ KEYWORD, "metrics", CTL_SHOW_METRICS, t_end, 0, 0 },
	{ KEYWORD, "audit", CTL_SHOW_AUDIT, t_show_audit, 0, 0 },
	{ ENDTOKEN, NULL, 0, NULL, 0, 0 }
};

/* Background processes: exec's options, timeout up to a lifetime. */
static const struct token t_spawn[] = {
	{ FENCE, "KEY", F_KEY, t_spawn_opts, 0, 0 },
	{ ENDTOKEN, NULL, 0, NULL, 0, 0 }
};

static const struct token t_spawn_opts[] = {
	{ OPTION, "timeout", F_NONE, t_spawn_timeout, 0, 0 },
	{ OPTION, "cwd", F_NONE, t_spawn_cwd, 0, 0 },
	{ OPTION, "output", F_NONE, t_spawn_output, 0, 0 },
	{ FLAG, "stdin-open", F_STDIN_OPEN, t_spawn_opts, 0, 0 },
	{ ARGV, "--", F_ARGV, NULL, 1, MSG_ARGV_MAX },
	{ ENDTOKEN, NULL, 0, NULL, 0, 0 }
};

static const struct token t_spawn_timeout[] = {
	{ NUMBER, "MS", F_TIMEOUT, t_spawn_opts,
	    EXEC_TIMEOUT_MIN, (uint64_t)LIFETIME_MAX * 1000 },
	{ ENDTOKEN, NULL, 0, NULL, 0, 0 }
};

static const struct token t_spawn_cwd[] = {
	{ STRING, "DIR", F_CWD, t_spawn_opts, 0, PATH_MAX - 1 },
	{ ENDTOKEN, NULL, 0, NULL, 0, 0 }
};

static const struct token t_spawn_output[] = {
	{ SIZE, "BYTES", F_OUTPUT, t_spawn_opts,
	    EXEC_OUTPUT_MIN, EXEC_OUTPUT_MAX },
	{ ENDTOKEN, NULL, 0, NULL, 0, 0 }
};

static const struct token t_proc_key[] = {
	{ FENCE, "KEY", F_KEY, t_proc_id, 0, 0 },
	{ ENDTOKEN, NULL, 0, NULL, 0, 0 }
};

static const struct token t_proc_id[] = {
	{ NUMBER, "ID", F_PROC, t_end, 1, MSG_PROC_ID_MAX },
	{ ENDTOKEN, NULL, 0, NULL, 0, 0 }
};

static const struct token t_kill_key[] = {
	{ FENCE, "KEY", F_KEY, t_kill_id, 0, 0 },
	{ ENDTOKEN, NULL, 0, NULL, 0, 0 }
};

static const struct token t_kill_id[] = {
	{ NUMBER, "ID", F_PROC, t_kill_signal, 1, MSG_PROC_ID_MAX },
	{ ENDTOKEN, NULL, 0, NULL, 0, 0 }
};

static const struct token t_kill_signal[] = {
	{ NOTOKEN, NULL, 0, NULL, 0, 0 },
	{ STRING, "TERM | KILL | INT | HUP", F_SIGNAL, t_end, 0, 8 },
	{ ENDTOKEN, NULL, 0, NULL, 0, 0 }
};

/* port KEY PORT: the URLs of PORT in the fence. */
static const struct token t_port[] = {
	{ FENCE, "KEY", F_KEY, t_port_port, 0, 0 },
	{ ENDTOKEN, NULL, 0, NULL, 0, 0 }
};

static const struct token t_port_port[] = {
	{ NUMBER, "PORT", F_PORT, t_end, 1, 65535 },
	{ ENDTOKEN, NULL, 0, NULL, 0, 0 }
};

/* forward KEY PORT [LOCALPORT]: a local port on 127.0.0.1 to PORT. */
static const struct token t_forward[] = {
	{ FENCE, "KEY", F_KEY, t_forward_port, 0, 0 },
	{ ENDTOKEN, NULL, 0, NULL, 0, 0 }
};

static const struct token t_forward_port[] = {
	{ NUMBER, "PORT", F_PORT, t_forward_local, 1, 65535 },
	{ ENDTOKEN, NULL, 0, NULL, 0, 0 }
};

static const struct token t_forward_local[] = {
	{ NOTOKEN, NULL, 0, NULL, 0, 0 },
	{ NUMBER, "LOCALPORT", F_LOCALPORT, t_end, 1, 65535 },
	{ ENDTOKEN, NULL, 0, NULL, 0, 0 }
};

static const struct token t_log[] = {
	{ KEYWORD, "verbose", CTL_LOG_VERBOSE, t_end, 0, 0 },
	{ KEYWORD, "brief", CTL_LOG_BRIEF, t_end, 0, 0 },
	{ ENDTOKEN, NULL, 0, NULL, 0, 0 }
};

static const struct token t_end[] = {
	{ NOTOKEN, NULL, 0, NULL, 0, 0 },
	{ ENDTOKEN, NULL, 0, NULL, 0, 0 }
};

static const struct token t_key[] = {
	{ FENCE, "KEY", F_KEY, t_end, 0, 0 },
	{ ENDTOKEN, NULL, 0, NULL, 0, 0 }
};

static const struct token t_boot[] = {
	{ FENCE, "KEY", F_KEY, t_boot_opts, 0, 0 },
	{ ENDTOKEN, NULL, 0, NULL, 0, 0 }
};

static const struct token t_boot_opts[] = {
	{ NOTOKEN, NULL, 0, NULL, 0, 0 },
	{ OPTION, "tier", F_NONE, t_boot_tier, 0, 0 },
	{ OPTION, "backend", F_NONE, t_boot_backend, 0, 0 },
	{ OPTION, "inner", F_NONE, t_boot_inner, 0, 0 },
	{ OPTION, "require", F_NONE, t_boot_require, 0, 0 },
	{ OPTION, "lifetime", F_NONE, t_boot_lifetime, 0, 0 },
	{ OPTION, "memory", F_NONE, t_boot_memory, 0, 0 },
	{ OPTION, "pids", F_NONE, t_boot_pids, 0, 0 },
	{ OPTION, "cpu", F_NONE, t_boot_cpu, 0, 0 },
	{ FLAG, "cold", F_COLD, t_boot_opts, 0, 0 },
	{ OPTION, "egress", F_NONE, t_boot_egress, 0, 0 },
	{ OPTION, "from", F_NONE, t_boot_from, 0, 0 },
	{ ENDTOKEN, NULL, 0, NULL, 0, 0 }
};

/* egress NAME:PORT [NAME:PORT ...]: entries until the next option. */
static const struct token t_boot_egress[] = {
	{ STRING, "NAME:PORT", F_EGRESS, t_boot_egress_more, 0,
	    EGRESS_ENTRY_LEN - 1 },
	{ ENDTOKEN, NULL, 0, NULL, 0, 0 }
};

static const struct token t_boot_egress_more[] = {
	{ NOTOKEN, NULL, 0, NULL, 0, 0 },
	{ OPTION, "tier", F_NONE, t_boot_tier, 0, 0 },
	{ OPTION, "backend", F_NONE, t_boot_backend, 0, 0 },
	{ OPTION, "inner", F_NONE, t_boot_inner, 0, 0 },
	{ OPTION, "require", F_NONE, t_boot_require, 0, 0 },
	{ OPTION, "lifetime", F_NONE, t_boot_lifetime, 0, 0 },
	{ OPTION, "memory", F_NONE, t_boot_memory, 0, 0 },
	{ OPTION, "pids", F_NONE, t_boot_pids, 0, 0 },
	{ OPTION, "cpu", F_NONE, t_boot_cpu, 0, 0 },
	{ FLAG, "cold", F_COLD, t_boot_opts, 0, 0 },
	{ OPTION, "egress", F_NONE, t_boot_egress, 0, 0 },
	{ OPTION, "from", F_NONE, t_boot_from, 0, 0 },
	{ STRING, "NAME:PORT", F_EGRESS, t_boot_egress_more, 0,
	    EGRESS_ENTRY_LEN - 1 },
	{ ENDTOKEN, NULL, 0, NULL, 0, 0 }
};

static const struct token t_boot_tier[] = {
	{ TIER, "TIER", F_TIER, t_boot_opts, 0, 0 },
	{ ENDTOKEN, NULL, 0, NULL, 0, 0 }
};

static const struct token t_boot_backend[] = {
	{ BACKEND, "BACKEND", F_BACKEND, t_boot_opts, 0, 0 },
	{ ENDTOKEN, NULL, 0, NULL, 0, 0 }
};

static const struct token t_boot_inner[] = {
	{ INNER, "INNER", F_INNER, t_boot_opts, 0, 0 },
	{ ENDTOKEN, NULL, 0, NULL, 0, 0 }
};

static const struct token t_boot_require[] = {
	{ LEVEL, "LEVEL", F_REQUIRE, t_boot_opts, 0, 0 },
	{ ENDTOKEN, NULL, 0, NULL, 0, 0 }
};

static const struct token t_boot_lifetime[] = {
	{ NUMBER, "SECONDS", F_LIFETIME, t_boot_opts,
	    LIFETIME_MIN, LIFETIME_MAX },
	{ ENDTOKEN, NULL, 0, NULL, 0, 0 }
};

static const struct token t_boot_memory[] = {
	{ SIZE, "SIZE", F_MEMORY, t_boot_opts, MEMORY_MIN, MEMORY_MAX },
	{ ENDTOKEN, NULL, 0, NULL, 0, 0 }
};

static const struct token t_boot_pids[] = {
	{ NUMBER, "N", F_PIDS, t_boot_opts, PIDS_MIN, PIDS_MAX },
	{ ENDTOKEN, NULL, 0, NULL, 0, 0 }
};

static const struct token t_boot_cpu[] = {
	{ CPUS, "CPUS", F_CPU, t_boot_opts, CPU_MILLI_MIN, CPU_MILLI_MAX },
	{ ENDTOKEN, NULL, 0, NULL, 0, 0 }
};

static const struct token t_stop[] = {
	{ FENCE_ALL, "KEY | all", F_KEY, t_end, 0, 0 },
	{ ENDTOKEN, NULL, 0, NULL, 0, 0 }
};

static const struct token t_exec[] = {
	{ FENCE, "KEY", F_KEY, t_exec_opts, 0, 0 },
	{ ENDTOKEN, NULL, 0, NULL, 0, 0 }
};

/* No NOTOKEN: an exec ends in its command. */
static const struct token t_exec_opts[] = {
	{ OPTION, "timeout", F_NONE, t_exec_timeout, 0, 0 },
	{ OPTION, "cwd", F_NONE, t_exec_cwd, 0, 0 },
	{ OPTION, "output", F_NONE, t_exec_output, 0, 0 },
	{ FLAG, "undo", F_UNDO, t_exec_opts, 0, 0 },
	{ ARGV, "--", F_ARGV, NULL, 1, MSG_ARGV_MAX },
	{ ENDTOKEN, NULL, 0, NULL, 0, 0 }
};

static const struct token t_exec_timeout[] = {
	{ NUMBER, "MS", F_TIMEOUT, t_exec_opts,
	    EXEC_TIMEOUT_MIN, EXEC_TIMEOUT_MAX },
	{ ENDTOKEN, NULL, 0, NULL, 0, 0 }
};

static const struct token t_exec_cwd[] = {
	{ STRING, "DIR", F_CWD, t_exec_opts, 0, PATH_MAX - 1 },
	{ ENDTOKEN, NULL, 0, NULL, 0, 0 }
};

static const struct token t_exec_output[] = {
	{ SIZE, "BYTES", F_OUTPUT, t_exec_opts,
	    EXEC_OUTPUT_MIN, EXEC_OUTPUT_MAX },
	{ ENDTOKEN, NULL, 0, NULL, 0, 0 }
};

static const struct token t_gitconfig[] = {
	{ FENCE, "KEY", F_KEY, t_gitconfig_opts, 0, 0 },
	{ ENDTOKEN, NULL, 0, NULL, 0, 0 }
};

static const struct token t_gitconfig_opts[] = {
	{ NOTOKEN, NULL, 0, NULL, 0, 0 },
	{ OPTION, "name", F_NONE, t_gitconfig_name, 0, 0 },
	{ OPTION, "email", F_NONE, t_gitconfig_email, 0, 0 },
	{ ENDTOKEN, NULL, 0, NULL, 0, 0 }
};

static const struct token t_gitconfig_name[] = {
	{ STRING, "NAME", F_NAME, t_gitconfig_opts, 0, MSG_GIT_VALUE_MAX },
	{ ENDTOKEN, NULL, 0, NULL, 0, 0 }
};

static const struct token t_gitconfig_email[] = {
	{ STRING, "EMAIL", F_EMAIL, t_gitconfig_opts, 0, MSG_GIT_VALUE_MAX },
	{ ENDTOKEN, NULL, 0, NULL, 0, 0 }
};

static const struct token t_gitinit[] = {
	{ FENCE, "KEY", F_KEY, t_gitinit_path, 0, 0 },
	{ ENDTOKEN, NULL, 0, NULL, 0, 0 }
};

/* Any one word is the path, "--" and option names included. */
static const struct token t_gitinit_path[] = {
	{ NOTOKEN, NULL, 0, NULL, 0, 0 },
	{ STRING, "PATH", F_PATH, t_end, 0, PATH_MAX - 1 },
	{ ENDTOKEN, NULL, 0, NULL, 0, 0 }
};

/* put KEY LOCAL PATH, get KEY PATH LOCAL; LOCAL "-" is stdin, stdout. */
static const struct token t_put[] = {
	{ FENCE, "KEY", F_KEY, t_put_local, 0, 0 },
	{ ENDTOKEN, NULL, 0, NULL, 0, 0 }
};

static const struct token t_put_local[] = {
	{ STRING, "LOCAL", F_LOCAL, t_put_path, 1, PATH_MAX - 1 },
	{ ENDTOKEN, NULL, 0, NULL, 0, 0 }
};

static const struct token t_put_path[] = {
	{ STRING, "PATH", F_PATH, t_end, 1, PATH_MAX - 1 },
	{ ENDTOKEN, NULL, 0, NULL, 0, 0 }
};

static const struct token t_get[] = {
	{ FENCE, "KEY", F_KEY, t_get_path, 0, 0 },
	{ ENDTOKEN, NULL, 0, NULL, 0, 0 }
};

static const struct token t_get_path[] = {
	{ STRING, "PATH", F_PATH, t_get_local, 0, PATH_MAX - 1 },
	{ ENDTOKEN, NULL, 0, NULL, 0, 0 }
};

static const struct token t_get_local[] = {
	{ STRING, "LOCAL", F_LOCAL, t_end, 1, PATH_MAX - 1 },
	{ ENDTOKEN, NULL, 0, NULL, 0, 0 }
};

/* token [NAME], token -r [NAME], token -d NAME */
static const struct token t_token[] = {
	{ NOTOKEN, NULL, 0, NULL, 0, 0 },
	{ FLAG, "-r", F_REPLACE, t_token_name, 0, 0 },
	{ FLAG, "-d", F_DELETE, t_token_named, 0, 0 },
	{ STRING, "NAME", F_TOKEN, t_end, 1, HOSTTOKEN_NAME_MAX },
	{ ENDTOKEN, NULL, 0, NULL, 0, 0 }
};

static const struct token t_token_name[] = {
	{ NOTOKEN, NULL, 0, NULL, 0, 0 },
	{ STRING, "NAME", F_TOKEN, t_end, 1, HOSTTOKEN_NAME_MAX },
	{ ENDTOKEN, NULL, 0, NULL, 0, 0 }
};

static const struct token t_token_named[] = {
	{ STRING, "NAME", F_TOKEN, t_end, 1, HOSTTOKEN_NAME_MAX },
	{ ENDTOKEN, NULL, 0, NULL, 0, 0 }
};

#define PARSE_WORD_SHOWN	64	/* bytes of a word an error repeats */
#define USAGE_DEPTH		4	/* keywords before a command's values */
#define USAGE_WIDTH		76
#define USAGE_INDENT		8	/* a tab */
#define USAGE_MORE		12	/* a continued line */

static struct parse_result	 res;
static char			**parse_argv;
static int			 parse_argc;

static void	parse_fail(int, const char *, ...)
		    __attribute__((format(printf, 2, 3), noreturn));
static const struct token *parse_match(const struct token *, const char *);
static void	parse_take(const struct token *, int);
static void	parse_egress(const char *, int);
static void	parse_from(const char *, int);
static void	parse_fence(const char *, int);
static uint64_t	parse_number(const struct token *, const char *, int);
static void	parse_expected(const struct token *);

/* A word of the command line as an error shows it: printable, bounded. */
static void
parse_putword(FILE *fp, const char *s)
{
	size_t	 i;

	for (i = 0; s[i] != '\0' && i < PARSE_WORD_SHOWN; i++) {
		if (isprint((unsigned char)s[i]))
			fputc(s[i], fp);
		else
			fprintf(fp, "\\%03o", (unsigned char)s[i]);
	}
	if (s[i] != '\0')
		fputs("...", fp);
}

/* "fencectl: WORD WORD...: ", the first n words. */
static void
parse_context(int n)
{
	int	 i;

	fputs("fencectl: ", stderr);
	for (i = 0; i < n && i < parse_argc; i++) {
		if (i > 0)
			fputc(' ', stderr);
		parse_putword(stderr, parse_argv[i]);
	}
	fputs(": ", stderr);
}

static void
parse_fail(int n, const char *fmt, ...)
{
	va_list	 ap;

	parse_context(n);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

const struct parse_result *
parse(int argc, char *argv[])
{
	const struct token	*table = t_main, *t;
	const char		*word;
	int			 i;

	memset(&res, 0, sizeof(res));
	res.owner = MSG_OWNER_NONE;
	parse_argv = argv;
	parse_argc = argc;
	if (argc < 1) {
		parse_usage(stderr);
		exit(1);
	}
	for (i = 0;; i++) {
		word = i < argc ? argv[i] : NULL;
		if ((t = parse_match(table, word)) != NULL) {
			if (t->t_type == NOTOKEN)
				break;
			if (t->t_type == ARGV) {
				if ((uint64_t)(argc - i - 1) < t->t_min ||
				    (uint64_t)(argc - i - 1) > t->t_max)
					parse_fail(i + 1, "give %llu to %llu "
					    "arguments after --",
					    (unsigned long long)t->t_min,
					    (unsigned long long)t->t_max);
				res.argv = argv + i + 1;
				res.argc = argc - i - 1;
				break;
			}
			parse_take(t, i);
			table = t->t_next;
			continue;
		}
		if (table == t_main) {
			fputs("fencectl: unknown command \"", stderr);
			parse_putword(stderr, word);
			fputs("\"\n", stderr);
			parse_usage(stderr);
			exit(1);
		}
		if (word == NULL) {
			parse_context(argc);
			fputs("missing word", stderr);
		} else {
			parse_context(i + 1);
			fputs("unknown word \"", stderr);
			parse_putword(stderr, word);
			fputc('"', stderr);
		}
		parse_expected(table);
		exit(1);
	}
	return (&res);
}

/* The fixed word the table has for word, else its value token. */
static const struct token *
parse_match(const struct token *table, const char *word)
{
	const struct token	*t, *value = NULL;

	for (t = table; t->t_type != ENDTOKEN; t++) {
		switch (t->t_type) {
		case NOTOKEN:
			if (word == NULL)
				return (t);
			break;
		case KEYWORD:
		case OPTION:
		case FLAG:
		case ARGV:
			if (word != NULL && strcmp(word, t->t_word) == 0)
				return (t);
			break;
		default:
			if (word != NULL)
				value = t;
			break;
		}
	}
	return (value);
}

/* "; expected one of: a b c, or nothing more" */
static void
parse_expected(const struct token *table)
{
	const struct token	*t;
	int			 n = 0, end = 0;

	for (t = table; t->t_type != ENDTOKEN; t++)
		if (t->t_type == NOTOKEN)
			end = 1;
		else
			n++;
	if (n == 0) {
		fputs("; expected nothing more\n", stderr);
		return;
	}
	fputs(n > 1 ? "; expected one of:" : "; expected", stderr);
	for (t = table; t->t_type != ENDTOKEN; t++)
		if (t->t_type != NOTOKEN)
			fprintf(stderr, " %s", t->t_word);
	fprintf(stderr, "%s\n", end ? ", or nothing more" : "");
}

/* Word i matched t: what it says goes into the result. */
static void
parse_take(const struct token *t, int i)
{
	const char	*word = parse_argv[i];
	uint64_t	 v = 0;
	int		 id;

	switch (t->t_type) {
	case KEYWORD:
		if (t->t_value != CTL_NONE)
			res.action = t->t_value;
		return;
	case OPTION:
		return;
	case FLAG:
		v = 1;
		break;
	case FENCE:
	case FENCE_ALL:
		parse_fence(word, i + 1);
		/* "all", or OWNER/all as it always was: every fence. */
		if (t->t_type == FENCE_ALL && strcmp(res.key, "all") == 0) {
			res.key = NULL;
			res.all = 1;
		}
		return;
	case NUMBER:
	case SIZE:
	case CPUS:
		v = parse_number(t, word, i + 1);
		break;
	case TIER:
		if ((id = tier_parse(word)) == -1)
			parse_fail(i + 1, "not one of L1, L1.5, L2");
		v = id;
		break;
	case LEVEL:
		if ((id = require_parse_inner(word, &res.require_inner)) == -1)
			parse_fail(i + 1, "not one of L1, L1.5, L2, L3, L4, "
			    "L4+runsc");
		v = id;
		break;
	case BACKEND:
		if ((id = backend_parse(word)) == -1)
			parse_fail(i + 1, "not one of native, runsc, vm, "
			    "mock, subprocess");
		v = id;
		break;
	case INNER:
		if ((id = inner_parse(word)) == -1)
			parse_fail(i + 1, "not one of none, runsc");
		v = id;
		break;
	case STRING:
		if (strlen(word) > t->t_max)
			parse_fail(i + 1, "longer than %llu bytes",
			    (unsigned long long)t->t_max);
		break;
	default:
		errx(1, "%s: token %d", __func__, t->t_type);
	}

	switch (t->t_value) {
	case F_TIER:		res.tier = v;		break;
	case F_BACKEND:		res.backend = v;	break;
	case F_INNER:		res.inner = v;		break;
	case F_REQUIRE:		res.require = v;	break;
	case F_LIFETIME:	res.lifetime = v;	break;
	case F_MEMORY:		res.memory = v;		break;
	case F_PIDS:		res.pids = v;		break;
	case F_CPU:		res.cpu_milli = v;	break;
	case F_TIMEOUT:		res.timeout_ms = v;	break;
	case F_OUTPUT:		res.output = v;		break;
	case F_REPLACE:		res.replace = v;	break;
	case F_DELETE:		res.delete = v;		break;
	case F_COLD:		res.cold = v;		break;
	case F_STDIN_OPEN:	res.stdin_open = v;	break;
	case F_CWD:		res.cwd = word;		break;
	case F_NAME:		res.name = word;	break;
	case F_EMAIL:		res.email = word;	break;
	case F_PATH:		res.path = word;	break;
	case F_TOKEN:
		if (!hosttoken_name_valid(word))
			parse_fail(i + 1, "a token's name is 1 to %d of "
			    "A-Z, a-z, 0-9, '.', '_' and '-', not beginning "
			    "with '-'", HOSTTOKEN_NAME_MAX);
		res.token = word;
		break;
	case F_PROC:		res.proc = v;		break;
	case F_SIGNAL:		res.signal = word;	break;
	case F_PORT:		res.port = v;		break;
	case F_LOCALPORT:	res.localport = v;	break;
	case F_LINES:		res.lines = v;		break;
	case F_LOCAL:		res.local = word;	break;
	case F_EGRESS:
		parse_egress(word, i + 1);
		break;
	case F_UNDO:		res.undo = v;		break;
	case F_SNAP:
		if (!fence_key_valid(word))
			parse_fail(i + 1, "a snapshot's name is 1 to %d of "
			    "a-z, 0-9, '_' and '-', beginning with a letter or "
			    "digit", FENCE_KEY_MAX);
		res.snap = word;
		break;
	case F_FROM:
		parse_from(word, i + 1);
		break;
	default:
		errx(1, "%s: field %d", __func__, t->t_value);
	}
}

/* boot ... from KEY[@SNAPSHOT]: a fence of the caller's, a snapshot. */
static void
parse_from(const char *word, int n)
{
	const char	*at = strchr(word, '@');
	size_t		 klen = at != NULL ? (size_t)(at - word) : strlen(word);

	if (klen == 0 || klen > FENCE_KEY_MAX)
		parse_fail(n, "from names a key, then @ and a snapshot");
	memcpy(res.from_key, word, klen);
	res.from_key[klen] = '\0';
	if (!fence_key_valid(res.from_key))
		parse_fail(n, "%s is not a key", res.from_key);
	if (at == NULL)
		return;
	if (at[1] == '\0')
		parse_fail(n, "from %s@ names no snapshot: KEY@NAME, or KEY "
		    "alone for its home now", res.from_key);
	if (strlcpy(res.from_snap, at + 1, sizeof(res.from_snap)) >=
	    sizeof(res.from_snap) || !fence_key_valid(res.from_snap))
		parse_fail(n, "%s is not a snapshot's name", at + 1);
}

/*
 * An egress entry, checked as the daemon checks it and kept canonical;
 * "egress" given again adds to the list.
 */
static void
parse_egress(const char *word, int n)
{
	const char	*why;
	size_t		 k;

	if (res.negress >= EGRESS_LIST_MAX)
		parse_fail(n, "at most %d egress entries", EGRESS_LIST_MAX);
	if (!egress_entry_canon(word, res.egress[res.negress], &why))
		parse_fail(n, "not an egress entry: %s", why);
	for (k = 0; k < res.negress; k++)
		if (strcmp(res.egress[k], res.egress[res.negress]) == 0)
			parse_fail(n, "%s is given twice", res.egress[k]);
	res.negress++;
}

/*
 * [OWNER/]KEY: a plain KEY is the caller's own fence; root and the admin
 * group name another user's as USER/KEY or UID/KEY (a key holds no
 * slash).  The daemon decides who may; here only the name is resolved.
 * Anything that is not OWNER/KEY is taken whole, and refused as a key.
 */
static void
parse_fence(const char *arg, int n)
{
	struct passwd	*pw;
	const char	*slash, *p, *errstr;
	char		*user;

	res.key = arg;
	if ((slash = strchr(arg, '/')) != NULL && slash != arg &&
	    fence_key_valid(slash + 1) && arg[0] != '-' && arg[0] != '.') {
		for (p = arg; p < slash; p++)
			if (!((*p >= 'a' && *p <= 'z') ||
			    (*p >= 'A' && *p <= 'Z') ||
			    (*p >= '0' && *p <= '9') ||
			    *p == '_' || *p == '-' || *p == '.'))
				break;
		if (p == slash) {
			if ((user = strndup(arg, slash - arg)) == NULL)
				err(1, NULL);
			res.key = slash + 1;
			errstr = NULL;
			if (user[0] >= '0' && user[0] <= '9')
				res.owner = strtonum(user, 0, UINT32_MAX - 1,
				    &errstr);
			else if ((pw = getpwnam(user)) != NULL)
				res.owner = pw->pw_uid;
			else
				errstr = "unknown";
			free(user);
			if (errstr != NULL && arg[0] >= '0' && arg[0] <= '9')
				parse_fail(n, "uid %.*s is %s",
				    (int)(slash - arg), arg, errstr);
			if (errstr != NULL)
				parse_fail(n, "no such user %.*s",
				    (int)(slash - arg), arg);
		}
	}
	if (!fence_key_valid(res.key))
		parse_fail(n, "not a fence key ([a-z0-9][a-z0-9_-]{0,62})");
}

/* Decimal (with K, M, G for a SIZE), or cpus with decimals, in bounds. */
static uint64_t
parse_number(const struct token *t, const char *s, int n)
{
	unsigned long long v;
	uint64_t	 mult = 1;
	double		 d;
	char		*end;

	errno = 0;
	if (t->t_type == CPUS) {
		d = strtod(s, &end);
		if (end == s || *end != '\0' || errno != 0 ||
		    !(d * 1000 >= t->t_min && d * 1000 <= t->t_max))
			parse_fail(n, "not a number of cpus from %.2f to %.0f",
			    t->t_min / 1000.0, t->t_max / 1000.0);
		return ((uint64_t)(d * 1000 + 0.5));
	}
	v = strtoull(s, &end, 10);
	if (t->t_type == SIZE && end != s && end[0] != '\0' &&
	    end[1] == '\0') {
		switch (end[0]) {
		case 'K': case 'k': mult = 1ULL << 10; end++; break;
		case 'M': case 'm': mult = 1ULL << 20; end++; break;
		case 'G': case 'g': mult = 1ULL << 30; end++; break;
		}
	}
	if (s[0] == '-' || end == s || *end != '\0' || errno != 0 ||
	    v > t->t_max / mult || v * mult < t->t_min ||
	    v * mult > t->t_max)
		parse_fail(n, "not a number from %llu to %llu",
		    (unsigned long long)t->t_min,
		    (unsigned long long)t->t_max);
	return (v * mult);
}

/* The usage of the commands, printed from the tables. */
struct usage {
	FILE	*u_fp;
	int	 u_col;
	int	 u_fresh;	/* nothing on the line yet */
};

static void
usage_item(struct usage *u, const char *fmt, ...)
{
	char	 buf[128];
	va_list	 ap;
	int	 len;

	va_start(ap, fmt);
	len = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (len < 0)
		return;
	if (!u->u_fresh && u->u_col + 1 + len > USAGE_WIDTH) {
		fputs("\n\t    ", u->u_fp);
		u->u_col = USAGE_MORE;
		u->u_fresh = 1;
	}
	fprintf(u->u_fp, "%s%s", u->u_fresh ? "" : " ", buf);
	u->u_col += len + !u->u_fresh;
	u->u_fresh = 0;
}

/* What follows a command's words: its values, then its options. */
static void
usage_tail(struct usage *u, const struct token *table)
{
	const struct token	*t, *value;
	int			 end;

	while (table != NULL) {
		value = NULL;
		end = 0;
		for (t = table; t->t_type != ENDTOKEN; t++)
			if (t->t_type == NOTOKEN)
				end = 1;
			else if (t->t_type >= FENCE)
				value = t;
		if (value == NULL)
			break;
		/* Flags beside a value come before it: token [-r] NAME. */
		for (t = table; t->t_type != ENDTOKEN; t++)
			if (t->t_type == FLAG)
				usage_item(u, "[%s]", t->t_word);
		usage_item(u, end ? "[%s]" : "%s", value->t_word);
		table = value->t_next;
	}
	for (t = table; t != NULL && t->t_type != ENDTOKEN; t++) {
		switch (t->t_type) {
		case OPTION:
			usage_item(u, "[%s %s]", t->t_word,
			    t->t_next[0].t_word);
			break;
		case FLAG:
			usage_item(u, "[%s]", t->t_word);
			break;
		case ARGV:
			usage_item(u, "%s ARGV...", t->t_word);
			break;
		default:
			break;
		}
	}
}

static void
usage_walk(FILE *fp, const struct token *table, const char **words, int n)
{
	const struct token	*t;
	struct usage		 u;
	int			 i;

	for (t = table; t->t_type != ENDTOKEN && n < USAGE_DEPTH; t++) {
		if (t->t_type != KEYWORD)
			continue;
		words[n] = t->t_word;
		if (t->t_next[0].t_type == KEYWORD) {
			usage_walk(fp, t->t_next, words, n + 1);
			continue;
		}
		u.u_fp = fp;
		u.u_col = USAGE_INDENT;
		u.u_fresh = 1;
		fputc('\t', fp);
		for (i = 0; i <= n; i++)
			usage_item(&u, "%s", words[i]);
		usage_tail(&u, t->t_next);
		fputc('\n', fp);
	}
}

void
parse_usage(FILE *fp)
{
	const char	*words[USAGE_DEPTH];

	fprintf(fp, "usage: fencectl [-hnV] [-s socket] [-w seconds] command "
	    "[argument ...]\ncommands:\n");
	usage_walk(fp, t_main, words, 0);
	/* Read by ctl_term.c, not by the table: options after the key. */
	fprintf(fp, "\tterm KEY [-i SECONDS] [-- ARGV...]\n"
	    "\tterm KEY -a ID [-r BYTES] | -l | -k ID\n"
	    "\tinput KEY ID [-c]\n"
	    "\tfollow KEY ID [stdout | stderr]\n");
}
