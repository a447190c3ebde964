/*
 * libFuzzer target for the port relay's parsing (broker/http_head.c):
 * the first byte chooses what the rest is, a request head (found,
 * parsed, rewritten, its cookie read) or a chunked body fed in pieces.
 * None may crash, read past the input or hang, and what each hands back
 * must hold together: a head's length within the input, its lines
 * within the head, a rewritten head with neither the token header nor
 * fenced's cookie, a chunked body's end never past the bytes fed.
 * Built and run by scripts/fuzz.sh.
 */
#include <sys/types.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http_head.h"

#define OUT_MAX		(HTTP_HEAD_TARGET + 16384)

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static struct http_head	 head;
static char		 out[OUT_MAX];

/* Whether the relayed head's Cookie line still carries fenced_port. */
static int
fuzz_cookie_left(const char *o)
{
	const char	*c, *e, *p;
	size_t		 n;

	if ((c = strstr(o, "\r\nCookie: ")) == NULL)
		return (0);
	c += strlen("\r\nCookie: ");
	e = strstr(c, "\r\n");
	for (p = c; p < e; p += n + (p + n < e)) {
		p += strspn(p, " \t");
		n = strcspn(p, ";\r");
		if (strncmp(p, "fenced_port", 11) == 0 && (p[11] == '=' ||
		    p[11] == ';' || p[11] == '\r' || p[11] == ' '))
			return (1);
	}
	return (0);
}

/* Whether the relayed head still carries a host token as a Bearer. */
static int
fuzz_bearer_left(const char *o)
{
	const char	*p, *e;
	char		 tok[HTTP_HEAD_TOKEN];

	for (p = o; (p = strcasestr(p, "\r\nauthorization:")) != NULL;
	    p = e) {
		p += strlen("\r\nauthorization:");
		if ((e = strstr(p, "\r\n")) == NULL)
			return (1);	/* a rewritten head ends its lines */
		if (http_head_bearer(p, e - p, tok, sizeof(tok)))
			return (1);
	}
	return (0);
}

static void
fuzz_head(const char *buf, size_t len, int limited)
{
	struct http_head_line *hl;
	char		 v[128];
	ssize_t		 end;
	size_t		 n;
	unsigned int	 i;

	end = http_head_end(buf, len, limited ? 512 : len + 1);
	if (end > (ssize_t)len || end < -1)
		__builtin_trap();
	if (end <= 0)
		return;
	if (http_head_parse(&head, buf, end, limited ? 1000 : UINT64_MAX) ==
	    -1) {
		if (head.h_status < 400 || head.h_status > 599 ||
		    memchr(head.h_why, '\0', sizeof(head.h_why)) == NULL)
			__builtin_trap();
		return;
	}
	if (head.h_len != (size_t)end || head.h_nlines > HTTP_HEAD_LINES ||
	    head.h_pathlen > strlen(head.h_target) ||
	    (head.h_cl_set && head.h_chunked))
		__builtin_trap();
	for (i = 0; i < head.h_nlines; i++) {
		hl = &head.h_lines[i];
		if (hl->hl_off + hl->hl_len > (size_t)end ||
		    hl->hl_namelen >= hl->hl_len)
			__builtin_trap();
	}
	n = http_head_rewrite(&head, buf, limited ? "/x" : NULL, out,
	    sizeof(out));
	if (n >= sizeof(out) || (n > 0 && (strlen(out) != n ||
	    strcasestr(out, "\nx-voicebox-host-token:") != NULL ||
	    fuzz_cookie_left(out) || fuzz_bearer_left(out))))
		__builtin_trap();
	(void)http_head_cookie(&head, "fenced_port", v, sizeof(v));
	if (memchr(v, '\0', sizeof(v)) == NULL)
		__builtin_trap();
}

static void
fuzz_chunked(const char *buf, size_t len, size_t step)
{
	struct http_chunked c;
	ssize_t		 k;
	size_t		 off = 0, n;

	memset(&c, 0, sizeof(c));
	while (off < len && !c.hc_done) {
		n = len - off < step ? len - off : step;
		if ((k = http_chunked_feed(&c, buf + off, n, 1024)) == -1)
			return;
		if ((size_t)k > n || (!c.hc_done && (size_t)k != n))
			__builtin_trap();
		off += k;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char	*copy;

	if (size < 1)
		return (0);
	/* An exact copy: a read past it is ASan's to see. */
	if ((copy = malloc(size - 1 + 1)) == NULL)
		return (0);
	memcpy(copy, data + 1, size - 1);
	if ((data[0] & 3) == 0)
		fuzz_chunked(copy, size - 1, 1 + (data[0] >> 2));
	else
		fuzz_head(copy, size - 1, data[0] & 2);
	free(copy);
	return (0);
}
