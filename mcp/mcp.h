/*
 * fence-mcp: a Model Context Protocol server on standard input and
 * output (docs/mcp.md).  mcp.c reads and answers JSON-RPC, one message
 * a line; mcp_tools.c is the tools; mcp_ctl.c speaks fenced's control
 * socket with imsg/'s framing and codecs, as the user who runs it.
 */
#ifndef MCP_H
#define MCP_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

struct imsg;

/* JSON-RPC 2.0's codes. */
#define RPC_PARSE_ERROR		-32700
#define RPC_INVALID_REQUEST	-32600
#define RPC_METHOD_NOT_FOUND	-32601
#define RPC_INVALID_PARAMS	-32602
#define RPC_INTERNAL_ERROR	-32603

#define MCP_LINE_MAX	(4 * 1024 * 1024)	/* bytes of one message */
#define MCP_DEPTH_MAX	32			/* nesting of one message */
#define MCP_READ_MAX	(4 * 1024 * 1024)	/* bytes read_file returns */
#define MCP_OUTPUT_MAX	(4 * 1024 * 1024)	/* exec's, each stream */
#define MCP_ERR_LEN	256

/* A tool call: what it answers, or why the call itself is bad. */
struct mcp_call {
	const char	*c_tool;	/* its name */
	json_t		*c_args;	/* the arguments, an object */
	json_t		*c_token;	/* _meta.progressToken, or NULL */
	json_t		*c_out;		/* the tool's result object */
	int		 c_failed;	/* isError: the fence's refusal */
	char		 c_bad[MCP_ERR_LEN];	/* "" or -32602's message */
};

/* mcp.c */
extern const char *mcp_socket;
void	 mcp_send(json_t *);
void	 mcp_progress(json_t *, uint64_t, const char *, size_t);
char	*mcp_utf8(const uint8_t *, size_t, size_t *);

/* An answer of fenced but END and ERROR: 0, or -1 for a bad one. */
struct mcp_ctl;
typedef int (*mcp_reply_fn)(struct mcp_call *, struct imsg *, void *);

/* mcp_tools.c */
json_t	*mcp_tools_list(void);
int	 mcp_tool_call(const char *, struct mcp_call *);
int	 mcp_arg_str(struct mcp_call *, const char *, int, size_t,
	    const char **);
int	 mcp_arg_key(struct mcp_call *, const char *, char *);
int	 mcp_arg_argv(struct mcp_call *, char ***, size_t *);
int	 mcp_arg_int(struct mcp_call *, const char *, json_int_t, json_int_t,
	    json_int_t, uint32_t *);
void	 mcp_failed(struct mcp_call *, const char *, const char *);
int	 mcp_until_end(struct mcp_ctl *, struct mcp_call *, int,
	    mcp_reply_fn, void *);
void	 mcp_ask(struct mcp_call *, uint32_t, void *, size_t, int,
	    mcp_reply_fn, void *);
void	 mcp_show(struct mcp_call *, const char *);

/* mcp_ctl.c: one connection per request, closed by mcp_ctl_close(). */
struct mcp_ctl	*mcp_ctl_open(uint32_t, const void *, size_t, char *, size_t);
int	 mcp_ctl_send(struct mcp_ctl *, uint32_t, const void *, size_t);
int	 mcp_ctl_next(struct mcp_ctl *, struct imsg *, int, char *, size_t);
void	 mcp_ctl_close(struct mcp_ctl *);
void	 mcp_ctl_sleep(int);
struct pollfd;
int	 mcp_poll(struct pollfd *, int, int);

/* mcp_term.c: terminals driven by calls (docs/mcp.md, "Terminals"). */
#define MCP_TERMS_MAX	16		/* held at once, in all */
#define MCP_TERM_OUT	(64 * 1024)	/* output kept unread, each */
#define MCP_TERM_IN	(64 * 1024)	/* input not yet written, each */
#define MCP_TERM_WAIT_MAX 10000		/* term_read's wait_ms */
int	 mcp_term_fill(struct pollfd *, int);
void	 mcp_term_handle(struct pollfd *, int);
int	 mcp_term_open(struct mcp_call *);
int	 mcp_term_write(struct mcp_call *);
int	 mcp_term_read(struct mcp_call *);
int	 mcp_term_close(struct mcp_call *);

/* mcp_port.c: ports, and forwards held (docs/mcp.md, "Ports"). */
#define MCP_FWDS_MAX	8		/* forwards held at once */
#define MCP_FWD_CONNS	8		/* connections relayed, each */
int	 mcp_port_fill(struct pollfd *, int);
void	 mcp_port_handle(struct pollfd *, int);
int	 mcp_port_open(struct mcp_call *);
int	 mcp_port_list(struct mcp_call *);
int	 mcp_port_close(struct mcp_call *);
int	 mcp_tunnel(const char *, uint32_t, uint32_t, uint64_t,
	    struct mcp_call *);

#define MCP_POLL_OWN	4		/* a caller's descriptors */
#define MCP_POLL_MAX	(MCP_POLL_OWN + MCP_TERMS_MAX + \
			    MCP_FWDS_MAX * (1 + 2 * MCP_FWD_CONNS))
#define MCP_WAIT_MS	30000

#endif /* MCP_H */
