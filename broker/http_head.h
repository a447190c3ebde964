/*
 * One HTTP/1.x request head read whole from a byte string, and what the
 * port relay does with it, with no I/O and no allocation (http_head.c),
 * so that it is fuzzed (fuzz/relay_fuzz.c): the head's fields every
 * taker of a connection needs (http_takeover.h), the framing of its body
 * (refused where it is ambiguous, as http_frame.c refuses it for the
 * API), the head rewritten for a fence (the token header and fenced's
 * cookie removed, the target replaced), and a chunked body's end found
 * as its bytes pass.  docs/interactive.md, "The HTTP API".
 */
#ifndef HTTP_HEAD_H
#define HTTP_HEAD_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

#define HTTP_HEAD_METHOD	16	/* the longest method, NUL included */
#define HTTP_HEAD_TARGET	2048	/* a request target, NUL included */
#define HTTP_HEAD_VALUE		256	/* Host, Origin, Upgrade, ... */
#define HTTP_HEAD_COOKIE	4096	/* the Cookie header(s), joined */
#define HTTP_HEAD_LINES		128	/* header lines, at most */
#define HTTP_HEAD_TOKEN		128	/* the token header's value */
#define HTTP_PORT_COOKIE	"fenced_port"	/* the host form's cookie */
#define HTTP_HEAD_WHY		128

/* A header line of the head: where it is in the bytes parsed. */
struct http_head_line {
	uint32_t	 hl_off;	/* its first byte */
	uint32_t	 hl_len;	/* to its LF, excluded (CR included) */
	uint32_t	 hl_namelen;
	int		 hl_drop;	/* left out of the relayed head */
};

struct http_head {
	size_t		 h_len;		/* of the head, its blank line included */
	char		 h_method[HTTP_HEAD_METHOD];
	char		 h_target[HTTP_HEAD_TARGET];	/* as sent */
	size_t		 h_pathlen;	/* of h_target before '?' */
	int		 h_minor;	/* HTTP/1.minor: 0 or 1 */
	/* Each header's count, and its value when there was one of it. */
	unsigned int	 h_host_n, h_origin_n, h_token_n, h_cookie_n;
	unsigned int	 h_upgrade_n, h_connection_n, h_wskey_n;
	unsigned int	 h_wsversion_n, h_wsprotocol_n, h_wsext_n;
	char		 h_host[HTTP_HEAD_VALUE];
	char		 h_origin[HTTP_HEAD_VALUE];
	char		 h_token[HTTP_HEAD_TOKEN];	/* or the Bearer's */
	char		 h_cookie[HTTP_HEAD_COOKIE];	/* "; "-joined */
	char		 h_upgrade[HTTP_HEAD_VALUE];
	char		 h_connection[HTTP_HEAD_VALUE];
	char		 h_wskey[HTTP_HEAD_VALUE];	/* Sec-WebSocket-Key */
	char		 h_wsversion[HTTP_HEAD_VALUE];
	char		 h_wsprotocol[HTTP_HEAD_VALUE];
	char		 h_wsext[HTTP_HEAD_VALUE];
	/* Authorization: Bearer with a host token's shape (merged). */
	unsigned int	 h_bearer_n;
	char		 h_bearer[HTTP_HEAD_TOKEN];
	/* The body's framing. */
	int		 h_cl_set;
	uint64_t	 h_cl;		/* Content-Length */
	int		 h_chunked;	/* Transfer-Encoding: chunked */
	int		 h_upgrade_asked; /* Upgrade named in Connection */
	/* The header lines, in order. */
	unsigned int	 h_nlines;
	struct http_head_line h_lines[HTTP_HEAD_LINES];
	/* Refused: the status (400, 413, 414, 431, 501) and why. */
	int		 h_status;
	char		 h_why[HTTP_HEAD_WHY];
};

/*
 * Where the head of buf (len bytes) ends: its length, the blank line
 * included; 0 when it is not whole yet and could still be within max
 * bytes; -1 when it is longer than max (431).
 */
ssize_t	 http_head_end(const char *, size_t, size_t);

/*
 * Parse the whole head buf (len bytes, as http_head_end() found it)
 * into h.  The body's framing is refused as http_frame.c refuses it: a
 * second Content-Length, a Content-Length not a number or over
 * body_max (UINT64_MAX: none), Transfer-Encoding other than chunked
 * alone, both, a folded line, white space in a header name.  0, or -1
 * with h_status and h_why.
 */
int	 http_head_parse(struct http_head *, const char *, size_t, uint64_t);

/*
 * A host token sent as "Authorization: Bearer TOKEN": v (len bytes) is
 * the header's value, "Bearer" in any case, one space or more, and a
 * credential shaped as a host token (hosttoken_text_valid()).  1 with
 * the credential in out (size bytes), or 0: another scheme, or a
 * credential that is not fenced's, left to whoever it is for.
 */
int	 http_head_bearer(const char *, size_t, char *, size_t);

/*
 * One host token from the token header (*n of them, the value in tok,
 * size bytes) and nb Bearer credentials (bearer): tok and *n as if the
 * Bearer's had come in the token header.  -1 with *why when there are
 * two Bearers or the two headers name different tokens (a 400).
 */
int	 http_head_token_merge(char *, size_t, unsigned int *, const char *,
	    unsigned int, const char **);

/*
 * The head relayed to a fence: the request line with target instead
 * of the one sent (NULL: kept), every header line but the token header
 * and an Authorization: Bearer with a host token in it,
 * the Cookie header without HTTP_PORT_COOKIE (left out when nothing
 * else is in it), lines ended by CRLF.  Written to out (outsz bytes);
 * returns its length, or 0 when it does not fit.
 */
size_t	 http_head_rewrite(const struct http_head *, const char *,
	    const char *, char *, size_t);

/* The value of cookie name in h's Cookie header(s) (NULL: none; -1 if two). */
int	 http_head_cookie(const struct http_head *, const char *, char *,
	    size_t);

/* A chunked body's end found as it passes (RFC 9112 7.1). */
struct http_chunked {
	int		 hc_state;
	uint64_t	 hc_left;	/* of the chunk's data */
	size_t		 hc_linelen;	/* of a size or trailer line */
	size_t		 hc_trailers;	/* bytes of trailers so far */
	int		 hc_digits;
	int		 hc_done;
};

/*
 * Feed len bytes of the body: how many of them belong to it (fewer
 * than len once its end is found: hc_done), or -1 when it is not a
 * chunked body (a bad size line, a chunk larger than 2^60, trailers
 * over max bytes).
 */
ssize_t	 http_chunked_feed(struct http_chunked *, const char *, size_t,
	    size_t);

#endif /* HTTP_HEAD_H */
