/*
 * fence-mcp: fenced's tools for an agent, as a Model Context Protocol
 * server (docs/mcp.md).  JSON-RPC 2.0, one message a line on standard
 * input, the answers one a line on standard output, logs on standard
 * error.  Every message is bounded (MCP_LINE_MAX bytes, MCP_DEPTH_MAX
 * deep) before jansson sees it; a bad one is answered with its error
 * and the next is read.  End of input ends the server, status 0.
 */
#include <sys/types.h>

#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fenced.h"
#include "log.h"
#include "mcp.h"


const char	*mcp_socket = FENCED_SOCKET;

/* The protocol's versions spoken, the newest first. */
static const char *const mcp_versions[] = {
	"2025-06-18", "2025-03-26", "2024-11-05"
};

static void	mcp_usage(void) __attribute__((noreturn));
static void	mcp_line(const char *, size_t);
static void	mcp_error(json_t *, int, const char *);
static int	mcp_depth_ok(const char *, size_t);
static void	mcp_request(const char *, json_t *, json_t *);

static void
mcp_usage(void)
{
	fprintf(stderr, "usage: fence-mcp [-s socket]\n");
	exit(1);
}

int
main(int argc, char *argv[])
{
	static char	 buf[65536];
	struct pollfd	 pfd;
	char		*line;
	size_t		 len = 0;
	ssize_t		 n, i, start;
	int		 ch, skipping = 0;

	log_init(1, 0);
	while ((ch = getopt(argc, argv, "hs:")) != -1) {
		switch (ch) {
		case 's':
			mcp_socket = optarg;
			break;
		default:
			mcp_usage();
		}
	}
	if (optind != argc)
		mcp_usage();
	/* A client gone is seen as EPIPE, and ends us quietly. */
	signal(SIGPIPE, SIG_IGN);
	if ((line = malloc(MCP_LINE_MAX)) == NULL)
		fatal("malloc");
	for (;;) {
		/* Waiting for a request, the terminals and forwards run. */
		pfd.fd = STDIN_FILENO;
		pfd.events = POLLIN;
		if (mcp_poll(&pfd, 1, -1) == -1)
			fatal("poll");
		if ((n = read(STDIN_FILENO, buf, sizeof(buf))) == -1) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			fatal("read");
		}
		if (n == 0)
			break;
		for (start = 0, i = 0; i < n; i++) {
			if (buf[i] != '\n')
				continue;
			if (!skipping && len + (i - start) <= MCP_LINE_MAX) {
				memcpy(line + len, buf + start, i - start);
				mcp_line(line, len + (i - start));
			} else
				mcp_error(NULL, RPC_INVALID_REQUEST,
				    "message longer than the limit");
			skipping = 0;
			len = 0;
			start = i + 1;
		}
		if (skipping)
			continue;
		if (len + (n - start) > MCP_LINE_MAX) {
			skipping = 1;
			continue;
		}
		memcpy(line + len, buf + start, n - start);
		len += n - start;
	}
	/* A last message without its newline is still one. */
	if (skipping)
		mcp_error(NULL, RPC_INVALID_REQUEST,
		    "message longer than the limit");
	else if (len > 0)
		mcp_line(line, len);
	free(line);
	return (0);
}

/* One message out, a line; a client gone ends us. */
void
mcp_send(json_t *msg)
{
	char	*s;
	size_t	 len, off = 0;
	ssize_t	 n;

	if (msg == NULL)
		fatalx("cannot make an answer");
	s = json_dumps(msg, JSON_COMPACT);
	json_decref(msg);
	if (s == NULL)
		fatalx("cannot encode an answer");
	len = strlen(s);
	s[len] = '\n';		/* the terminator's byte, written over */
	while (off < len + 1) {
		if ((n = write(STDOUT_FILENO, s + off, len + 1 - off)) == -1) {
			if (errno == EINTR)
				continue;
			if (errno == EPIPE)
				exit(0);
			fatal("write");
		}
		off += n;
	}
	free(s);
}

static void
mcp_error(json_t *id, int code, const char *message)
{
	mcp_send(json_pack("{s:s, s:O?, s:{s:i, s:s}}", "jsonrpc", "2.0",
	    "id", id, "error", "code", code, "message", message));
}

/* At most MCP_DEPTH_MAX arrays and objects deep, strings skipped. */
static int
mcp_depth_ok(const char *s, size_t len)
{
	size_t	 i;
	int	 depth = 0, instr = 0;

	for (i = 0; i < len; i++) {
		if (instr) {
			if (s[i] == '\\')
				i++;
			else if (s[i] == '"')
				instr = 0;
			continue;
		}
		if (s[i] == '"')
			instr = 1;
		else if (s[i] == '[' || s[i] == '{') {
			if (++depth > MCP_DEPTH_MAX)
				return (0);
		} else if (s[i] == ']' || s[i] == '}')
			depth--;
	}
	return (1);
}

static void
mcp_line(const char *s, size_t len)
{
	json_t		*msg, *id, *params;
	json_error_t	 jerr;
	const char	*method, *version;

	while (len > 0 && (s[len - 1] == '\r' || s[len - 1] == ' ' ||
	    s[len - 1] == '\t'))
		len--;
	if (len == 0)
		return;
	if (!mcp_depth_ok(s, len)) {
		mcp_error(NULL, RPC_INVALID_REQUEST, "nested too deep");
		return;
	}
	if ((msg = json_loadb(s, len, JSON_REJECT_DUPLICATES, &jerr)) ==
	    NULL) {
		mcp_error(NULL, RPC_PARSE_ERROR, "parse error");
		return;
	}
	if (!json_is_object(msg)) {
		/* Batches are not of the protocol since 2025-06-18. */
		mcp_error(NULL, RPC_INVALID_REQUEST, "not a request object");
		json_decref(msg);
		return;
	}
	id = json_object_get(msg, "id");
	method = json_string_value(json_object_get(msg, "method"));
	version = json_string_value(json_object_get(msg, "jsonrpc"));
	params = json_object_get(msg, "params");
	if (id != NULL && !json_is_string(id) && !json_is_integer(id)) {
		mcp_error(NULL, RPC_INVALID_REQUEST, "bad id");
	} else if (version == NULL || strcmp(version, "2.0") != 0) {
		if (id != NULL)
			mcp_error(id, RPC_INVALID_REQUEST, "not JSON-RPC 2.0");
	} else if (method == NULL) {
		/* A response: we ask the client nothing, so none is ours. */
		if (json_object_get(msg, "result") == NULL &&
		    json_object_get(msg, "error") == NULL)
			mcp_error(id, RPC_INVALID_REQUEST, "no method");
	} else if (params != NULL && !json_is_object(params)) {
		if (id != NULL)
			mcp_error(id, RPC_INVALID_PARAMS,
			    "params is not an object");
	} else if (id == NULL) {
		/* Notifications: initialized, cancelled, ...: nothing. */
	} else
		mcp_request(method, id, params);
	json_decref(msg);
}

static json_t *
mcp_initialize(json_t *params)
{
	const char	*asked, *v = mcp_versions[0];
	size_t		 i;

	asked = json_string_value(json_object_get(params, "protocolVersion"));
	for (i = 0; asked != NULL && i < nitems(mcp_versions); i++)
		if (strcmp(asked, mcp_versions[i]) == 0)
			v = mcp_versions[i];
	return (json_pack("{s:s, s:{s:{s:b}}, s:{s:s, s:s}, s:s}",
	    "protocolVersion", v,
	    "capabilities", "tools", "listChanged", 0,
	    "serverInfo", "name", "fence-mcp", "version", FENCED_VERSION,
	    "instructions", "Run commands in fenced's sandboxes: boot one "
	    "with a key, exec in it, read and write its files, reach its "
	    "ports, drive terminals in it, stop it. "
	    "Every result carries the fence's measured isolation level."));
}

static void
mcp_request(const char *method, json_t *id, json_t *params)
{
	struct mcp_call	 c;
	json_t		*result = NULL, *meta, *name;
	char		*text;

	if (strcmp(method, "initialize") == 0)
		result = mcp_initialize(params);
	else if (strcmp(method, "ping") == 0)
		result = json_object();
	else if (strcmp(method, "tools/list") == 0)
		result = json_pack("{s:o}", "tools", mcp_tools_list());
	else if (strcmp(method, "tools/call") == 0) {
		memset(&c, 0, sizeof(c));
		name = json_object_get(params, "name");
		c.c_args = json_object_get(params, "arguments");
		meta = json_object_get(params, "_meta");
		c.c_token = json_object_get(meta, "progressToken");
		if (c.c_token != NULL && !json_is_string(c.c_token) &&
		    !json_is_integer(c.c_token))
			c.c_token = NULL;
		if (!json_is_string(name)) {
			mcp_error(id, RPC_INVALID_PARAMS, "no tool name");
			return;
		}
		if (c.c_args != NULL && !json_is_object(c.c_args)) {
			mcp_error(id, RPC_INVALID_PARAMS,
			    "arguments is not an object");
			return;
		}
		if (mcp_tool_call(json_string_value(name), &c) == -1) {
			mcp_error(id, RPC_INVALID_PARAMS, c.c_bad);
			json_decref(c.c_out);
			return;
		}
		/* The same object as text, for clients of 2024-11-05. */
		if ((text = json_dumps(c.c_out, JSON_COMPACT)) != NULL)
			result = json_pack("{s:[{s:s, s:s}], s:O, s:b}",
			    "content", "type", "text", "text", text,
			    "structuredContent", c.c_out, "isError",
			    c.c_failed);
		free(text);
		json_decref(c.c_out);
	} else {
		mcp_error(id, RPC_METHOD_NOT_FOUND, "method not found");
		return;
	}
	if (result == NULL) {
		mcp_error(id, RPC_INTERNAL_ERROR, "cannot make the answer");
		return;
	}
	mcp_send(json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id,
	    "result", result));
}

/*
 * A progress notification of a streamed command's output: progress is
 * the bytes so far, message the chunk as text.
 */
void
mcp_progress(json_t *token, uint64_t sofar, const char *text, size_t len)
{
	json_t	*n;

	if ((n = json_pack("{s:s, s:s, s:{s:O, s:I, s:s%}}", "jsonrpc", "2.0",
	    "method", "notifications/progress", "params",
	    "progressToken", token, "progress", (json_int_t)sofar,
	    "message", text, len)) != NULL)
		mcp_send(n);
}

/*
 * Bytes as a JSON string's UTF-8: every byte of a sequence that is not
 * UTF-8 becomes U+FFFD; NUL bytes stay (jansson's "s%" keeps them).
 * The caller frees it.
 */
char *
mcp_utf8(const uint8_t *p, size_t len, size_t *outlen)
{
	char	*s, *o;
	size_t	 i, n, k;
	uint32_t c;

	if ((s = malloc(len * 3 + 1)) == NULL)
		return (NULL);
	for (o = s, i = 0; i < len; ) {
		if (p[i] < 0x80) {
			*o++ = p[i++];
			continue;
		}
		n = (p[i] & 0xe0) == 0xc0 ? 2 : (p[i] & 0xf0) == 0xe0 ? 3 :
		    (p[i] & 0xf8) == 0xf0 ? 4 : 0;
		c = n == 2 ? p[i] & 0x1f : n == 3 ? p[i] & 0x0f : p[i] & 0x07;
		for (k = 1; n != 0 && k < n; k++) {
			if (i + k >= len || (p[i + k] & 0xc0) != 0x80) {
				n = 0;
				break;
			}
			c = (c << 6) | (p[i + k] & 0x3f);
		}
		/* Overlong forms, surrogates and past U+10FFFF are not. */
		if (n == 0 || (n == 2 && c < 0x80) || (n == 3 && c < 0x800) ||
		    (n == 4 && c < 0x10000) || c > 0x10ffff ||
		    (c >= 0xd800 && c <= 0xdfff)) {
			memcpy(o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
			continue;
		}
		memcpy(o, p + i, n);
		o += n;
		i += n;
	}
	*o = '\0';
	*outlen = o - s;
	return (s);
}
