/*
 * fencectl's command line: a tree of token tables (parser.c), each path
 * through it one command, parsed into one parse_result that fencectl.c
 * turns into one request to the daemon.
 */
#ifndef CTL_PARSER_H
#define CTL_PARSER_H

#include <sys/types.h>

#include <stdint.h>
#include <stdio.h>

#include "fenced.h"

enum ctl_action {
	CTL_NONE = 0,
	CTL_HELP,
	CTL_SHOW_STATS,
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
	CTL_SHOW_TOKENS,
	CTL_SPAWN,
	CTL_SHOW_PROCS,
	CTL_SHOW_PROC,
	CTL_KILL,
	CTL_PUT,
	CTL_GET,
	CTL_FORWARD,
	CTL_PORTS,
	CTL_PORT,
	CTL_SNAPSHOT,
	CTL_SHOW_SNAPS,
	CTL_DELETE_SNAP,
	CTL_RESTORE,
	CTL_UNDO,
	CTL_SHOW_METRICS,
	CTL_DOCTOR,
	CTL_SHOW_AUDIT
};

/*
 * What a command said.  Strings point into argv; a value not given is
 * 0 or NULL (the daemon's configuration decides it).
 */
struct parse_result {
	enum ctl_action	 action;
	const char	*key;		/* the fence, or NULL: none, stop all */
	uid_t		 owner;		/* USER/KEY, UID/KEY, or MSG_OWNER_NONE */
	int		 all;		/* stop all */
	int		 tier;		/* enum fence_tier */
	int		 backend;	/* enum fence_backend */
	int		 inner;		/* enum fence_inner */
	int		 require;	/* enum fence_level */
	int		 require_inner;	/* require L4+runsc: INNER_RUNSC */
	uint32_t	 lifetime;	/* seconds */
	uint64_t	 memory;	/* bytes */
	uint32_t	 pids;
	uint32_t	 cpu_milli;
	uint32_t	 timeout_ms;
	uint32_t	 output;	/* bytes */
	const char	*cwd;
	const char	*name;		/* git user.name */
	const char	*email;		/* git user.email */
	const char	*path;		/* git-init; put and get: in the home */
	const char	*local;		/* put and get: a file here, "-": stdio */
	int		 replace;	/* token -r */
	int		 delete;	/* token -d */
	const char	*token;		/* token NAME */
	int		 cold;		/* boot ... cold */
	char		 egress[EGRESS_LIST_MAX][EGRESS_ENTRY_LEN];
	uint32_t	 negress;	/* boot ... egress NAME:PORT ... */
	char		**argv;		/* exec, after -- */
	int		 argc;
	uint32_t	 proc;		/* show process, kill: its id */
	const char	*signal;	/* kill: TERM, KILL, INT, HUP */
	int		 stdin_open;	/* spawn ... stdin-open */
	uint32_t	 port;		/* forward, port: the port in the fence */
	uint32_t	 localport;	/* forward: on 127.0.0.1; 0: any */
	const char	*snap;		/* snapshot, restore, delete: its name */
	char		 from_key[FENCE_KEY_SIZE];	/* boot ... from K[@S] */
	char		 from_snap[FENCE_KEY_SIZE];
	int		 undo;		/* exec ... undo */
	uint32_t	 lines;		/* show audit N; 0: the default */
};

/* Parses argv (the command, options removed) or exits 1 saying why. */
const struct parse_result *parse(int, char *[]);
/* Every command, one a line. */
void	 parse_usage(FILE *);

#endif /* CTL_PARSER_H */
