/*
 * A request head parsed from bytes, rewritten for a fence, and a
 * chunked body's end: pure functions, fuzzed (fuzz/relay_fuzz.c).
 * http_head.h says what each does.
 */
#include <sys/types.h>

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http_head.h"
#include "msg.h"

#define TOKEN_HEADER	"x-voicebox-host-token"
#define CHUNK_LINE_MAX	256	/* a size line, its extensions included */
#define CHUNK_SIZE_MAX	((uint64_t)1 << 60)

enum {
	CK_SIZE = 0,	/* the size's digits */
	CK_EXT,		/* after them, to the line's end */
	CK_DATA,
	CK_DATA_CR,	/* the CRLF after the data */
	CK_DATA_LF,
	CK_TRAILER,	/* a trailer line, or the last blank line */
	CK_DONE
};

ssize_t
http_head_end(const char *buf, size_t len, size_t max)
{
	size_t	 i, n = len < max ? len : max;
	int	 eol = 1;	/* no blank line before the request line */

	for (i = 0; i < n; i++) {
		if (buf[i] == '\n') {
			if (eol && i > 1)
				return ((ssize_t)i + 1);
			eol = 1;
		} else if (buf[i] != '\r')
			eol = 0;
	}
	return (len >= max ? -1 : 0);
}

static int
head_refuse(struct http_head *h, int status, const char *why)
{
	h->h_status = status;
	snprintf(h->h_why, sizeof(h->h_why), "%s", why);
	return (-1);
}

/* A header value's bytes without the white space around them. */
static void
head_trim(const char **v, size_t *len)
{
	while (*len > 0 && (**v == ' ' || **v == '\t')) {
		(*v)++;
		(*len)--;
	}
	while (*len > 0 && ((*v)[*len - 1] == ' ' || (*v)[*len - 1] == '\t' ||
	    (*v)[*len - 1] == '\r'))
		(*len)--;
}

/* A header value without the white space around it, NUL ended in dst. */
static int
head_value(const char *v, size_t len, char *dst, size_t size)
{
	head_trim(&v, &len);
	if (len >= size || memchr(v, '\0', len) != NULL)
		return (-1);
	memcpy(dst, v, len);
	dst[len] = '\0';
	return (0);
}

static int
head_name_is(const char *line, size_t namelen, const char *name)
{
	return (namelen == strlen(name) &&
	    strncasecmp(line, name, namelen) == 0);
}

/* Whether the comma list v names word, without case. */
static int
head_list_has(const char *v, const char *word)
{
	size_t	 wl = strlen(word), n;

	while (*v != '\0') {
		v += strspn(v, " \t,");
		n = strcspn(v, ",");
		while (n > 0 && (v[n - 1] == ' ' || v[n - 1] == '\t'))
			n--;
		if (n == wl && strncasecmp(v, word, wl) == 0)
			return (1);
		v += strcspn(v, ",");
	}
	return (0);
}

static int
head_request_line(struct http_head *h, const char *line, size_t len)
{
	const char	*sp1, *sp2, *end = line + len;
	size_t		 n;

	if (len > 0 && line[len - 1] == '\r')
		end--;
	if ((sp1 = memchr(line, ' ', end - line)) == NULL ||
	    (sp2 = memchr(sp1 + 1, ' ', end - sp1 - 1)) == NULL)
		return (head_refuse(h, 400, "not an HTTP/1.x request line"));
	n = sp1 - line;
	if (n == 0 || n >= sizeof(h->h_method))
		return (head_refuse(h, 501, "unknown method"));
	memcpy(h->h_method, line, n);
	h->h_method[n] = '\0';
	for (n = 0; h->h_method[n] != '\0'; n++)
		if (!isupper((unsigned char)h->h_method[n]))
			return (head_refuse(h, 501, "unknown method"));
	n = sp2 - sp1 - 1;
	if (n == 0)
		return (head_refuse(h, 400, "no request target"));
	if (n >= sizeof(h->h_target))
		return (head_refuse(h, 414, "the request target is too long"));
	memcpy(h->h_target, sp1 + 1, n);
	h->h_target[n] = '\0';
	for (n = 0; h->h_target[n] != '\0'; n++)
		if ((unsigned char)h->h_target[n] <= ' ' ||
		    (unsigned char)h->h_target[n] >= 0x7f)
			return (head_refuse(h, 400, "a control character or "
			    "space in the request target"));
	h->h_pathlen = strcspn(h->h_target, "?");
	if (end - sp2 - 1 != 8 || strncmp(sp2 + 1, "HTTP/1.", 7) != 0 ||
	    (sp2[8] != '0' && sp2[8] != '1'))
		return (head_refuse(h, 400, "not HTTP/1.0 or HTTP/1.1"));
	h->h_minor = sp2[8] - '0';
	return (0);
}

/* The named fields every taker needs: counted, and kept when whole. */
static int
head_field(struct http_head *h, const char *line, size_t namelen,
    size_t len)
{
	static const struct {
		const char	*name;
		size_t		 cnt, val, size;
	} f[] = {
#define F(n, c, v) { n, offsetof(struct http_head, c),			\
	offsetof(struct http_head, v), sizeof(((struct http_head *)0)->v) }
		F("Host", h_host_n, h_host),
		F("Origin", h_origin_n, h_origin),
		F(TOKEN_HEADER, h_token_n, h_token),
		F("Upgrade", h_upgrade_n, h_upgrade),
		F("Connection", h_connection_n, h_connection),
		F("Sec-WebSocket-Key", h_wskey_n, h_wskey),
		F("Sec-WebSocket-Version", h_wsversion_n, h_wsversion),
		F("Sec-WebSocket-Protocol", h_wsprotocol_n, h_wsprotocol),
		F("Sec-WebSocket-Extensions", h_wsext_n, h_wsext),
#undef F
	};
	unsigned int	*cnt;
	size_t		 i, have;
	char		*dst;
	char		 v[HTTP_HEAD_COOKIE];

	if (head_name_is(line, namelen, "Cookie")) {
		if (head_value(line + namelen + 1, len - namelen - 1, v,
		    sizeof(v)) == -1)
			return (head_refuse(h, 431, "the Cookie header is "
			    "too long"));
		have = strlen(h->h_cookie);
		if (have + strlen(v) + 3 > sizeof(h->h_cookie))
			return (head_refuse(h, 431, "the Cookie headers are "
			    "too long"));
		if (have > 0)
			strlcat(h->h_cookie, "; ", sizeof(h->h_cookie));
		strlcat(h->h_cookie, v, sizeof(h->h_cookie));
		h->h_cookie_n++;
		return (0);
	}
	for (i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		if (!head_name_is(line, namelen, f[i].name))
			continue;
		cnt = (unsigned int *)((char *)h + f[i].cnt);
		dst = (char *)h + f[i].val;
		(*cnt)++;
		if (head_value(line + namelen + 1, len - namelen - 1, dst,
		    f[i].size) == -1) {
			dst[0] = '\0';
			return (head_refuse(h, 431, "a header the broker "
			    "reads is too long"));
		}
		return (0);
	}
	return (0);
}

static int
head_framing(struct http_head *h, const char *line, size_t namelen,
    size_t len, uint64_t body_max)
{
	char	 v[64];
	size_t	 digits;

	if (head_name_is(line, namelen, "Content-Length")) {
		if (h->h_cl_set)
			return (head_refuse(h, 400, "more than one "
			    "Content-Length"));
		if (head_value(line + namelen + 1, len - namelen - 1, v,
		    sizeof(v)) == -1)
			return (head_refuse(h, 400, "Content-Length too "
			    "long"));
		digits = strspn(v, "0123456789");
		if (digits == 0 || v[digits] != '\0')
			return (head_refuse(h, 400, "Content-Length is not a "
			    "number"));
		if (digits > 19 || (h->h_cl = strtoull(v, NULL, 10)) >
		    body_max)
			return (head_refuse(h, 413, "the body is too large"));
		h->h_cl_set = 1;
	} else if (head_name_is(line, namelen, "Transfer-Encoding")) {
		if (h->h_chunked)
			return (head_refuse(h, 400, "more than one "
			    "Transfer-Encoding"));
		if (head_value(line + namelen + 1, len - namelen - 1, v,
		    sizeof(v)) == -1 || strcasecmp(v, "chunked") != 0)
			return (head_refuse(h, 400, "Transfer-Encoding other "
			    "than chunked"));
		h->h_chunked = 1;
	}
	return (0);
}

int
http_head_parse(struct http_head *h, const char *buf, size_t len,
    uint64_t body_max)
{
	struct http_head_line	*hl;
	const char		*line, *nl;
	const char		*why;
	size_t			 off = 0, ll, namelen;
	int			 first = 1;

	memset(h, 0, sizeof(*h));
	/* Blank lines before the request line are skipped, as evhttp does. */
	while (off < len && (buf[off] == '\r' || buf[off] == '\n'))
		off++;
	while (off < len) {
		line = buf + off;
		if ((nl = memchr(line, '\n', len - off)) == NULL)
			return (head_refuse(h, 400, "the head is not whole"));
		ll = nl - line;
		if (ll == 0 || (ll == 1 && line[0] == '\r')) {
			h->h_len = nl + 1 - buf;
			break;
		}
		if (memchr(line, '\0', ll) != NULL)
			return (head_refuse(h, 400, "a NUL in the head"));
		/*
		 * A CR is a line's end only right before its LF: one
		 * inside a line could end it for the fence's server, which
		 * would then read headers the broker did not.
		 */
		if (memchr(line, '\r', ll - (line[ll - 1] == '\r')) != NULL)
			return (head_refuse(h, 400, "a CR inside a line of "
			    "the head"));
		if (first) {
			if (head_request_line(h, line, ll) == -1)
				return (-1);
			first = 0;
			off += ll + 1;
			continue;
		}
		if (line[0] == ' ' || line[0] == '\t')
			return (head_refuse(h, 400, "a header folded over two "
			    "lines"));
		/* Bounded by the line: the bytes are not a string. */
		for (namelen = 0; namelen < ll && line[namelen] != ':' &&
		    line[namelen] != ' ' && line[namelen] != '\t'; namelen++)
			;
		if (namelen < ll && line[namelen] != ':')
			return (head_refuse(h, 400, "white space in a header "
			    "name"));
		if (namelen >= ll || namelen == 0)
			return (head_refuse(h, 400, "a header line without a "
			    "name and a colon"));
		if (h->h_nlines >= HTTP_HEAD_LINES)
			return (head_refuse(h, 431, "too many header lines"));
		hl = &h->h_lines[h->h_nlines++];
		hl->hl_off = line - buf;
		hl->hl_len = ll;
		hl->hl_namelen = namelen;
		hl->hl_drop = head_name_is(line, namelen, TOKEN_HEADER);
		if (head_name_is(line, namelen, "Authorization") &&
		    http_head_bearer(line + namelen + 1, ll - namelen - 1,
		    h->h_bearer, sizeof(h->h_bearer))) {
			/* The host token: fenced's, never the fence's. */
			h->h_bearer_n++;
			hl->hl_drop = 1;
		}
		if (head_framing(h, line, namelen, ll, body_max) == -1 ||
		    head_field(h, line, namelen, ll) == -1)
			return (-1);
		off += ll + 1;
	}
	if (first || h->h_len == 0)
		return (head_refuse(h, 400, "the head is not whole"));
	if (h->h_cl_set && h->h_chunked)
		return (head_refuse(h, 400, "Content-Length and "
		    "Transfer-Encoding together"));
	h->h_upgrade_asked = h->h_upgrade_n == 1 && h->h_connection_n == 1 &&
	    head_list_has(h->h_connection, "upgrade");
	if (http_head_token_merge(h->h_token, sizeof(h->h_token),
	    &h->h_token_n, h->h_bearer, h->h_bearer_n, &why) == -1)
		return (head_refuse(h, 400, why));
	return (0);
}

int
http_head_bearer(const char *v, size_t len, char *out, size_t size)
{
	size_t	 sp;

	head_trim(&v, &len);
	if (len < 7 || strncasecmp(v, "Bearer", 6) != 0)
		return (0);
	for (sp = 6; sp < len && (v[sp] == ' ' || v[sp] == '\t'); sp++)
		;
	if (sp == 6 || !hosttoken_text_valid(v + sp, len - sp) ||
	    len - sp >= size)
		return (0);
	memcpy(out, v + sp, len - sp);
	out[len - sp] = '\0';
	return (1);
}

int
http_head_token_merge(char *tok, size_t size, unsigned int *n,
    const char *bearer, unsigned int nb, const char **why)
{
	if (nb == 0)
		return (0);
	if (nb > 1) {
		*why = "more than one Authorization: Bearer header";
		return (-1);
	}
	if (*n == 0) {
		if (strlcpy(tok, bearer, size) >= size) {
			tok[0] = '\0';
			*why = "the bearer token is too long";
			return (-1);
		}
		*n = 1;
	} else if (*n == 1 && strcmp(tok, bearer) != 0) {
		*why = TOKEN_HEADER " and Authorization: Bearer name "
		    "different tokens";
		return (-1);
	}
	return (0);
}

/*
 * The Cookie value without name's pairs, into out: "" when none is
 * left.  -1 when it does not fit.
 */
static int
head_cookie_without(const char *v, const char *name, char *out, size_t size)
{
	size_t	 nl = strlen(name), n, pl;
	const char *p;

	out[0] = '\0';
	while (*v != '\0') {
		v += strspn(v, " \t;");
		if (*v == '\0')
			break;
		pl = strcspn(v, ";");
		p = v;
		v += pl;
		while (pl > 0 && (p[pl - 1] == ' ' || p[pl - 1] == '\t'))
			pl--;
		/* Its name: to '=' or white space, whatever follows. */
		if ((n = strcspn(p, "= \t")) > pl)
			n = pl;
		if (n == nl && strncmp(p, name, nl) == 0)
			continue;
		if (strlen(out) + pl + 3 > size)
			return (-1);
		if (out[0] != '\0')
			strlcat(out, "; ", size);
		strncat(out, p, pl);
	}
	return (0);
}

size_t
http_head_rewrite(const struct http_head *h, const char *raw,
    const char *target, char *out, size_t outsz)
{
	const struct http_head_line *hl;
	char		 cookie[HTTP_HEAD_COOKIE];
	size_t		 n = 0, k;
	unsigned int	 i;
	int		 cookie_done = 0, r;

	r = snprintf(out, outsz, "%s %s HTTP/1.%d\r\n", h->h_method,
	    target != NULL ? target : h->h_target, h->h_minor);
	if (r < 0 || (size_t)r >= outsz)
		return (0);
	n = r;
	for (i = 0; i < h->h_nlines; i++) {
		hl = &h->h_lines[i];
		if (hl->hl_drop)
			continue;
		if (head_name_is(raw + hl->hl_off, hl->hl_namelen, "Cookie")) {
			/* All of them as one, once, without ours. */
			if (cookie_done++)
				continue;
			if (head_cookie_without(h->h_cookie, HTTP_PORT_COOKIE,
			    cookie, sizeof(cookie)) == -1)
				return (0);
			if (cookie[0] == '\0')
				continue;
			r = snprintf(out + n, outsz - n, "Cookie: %s\r\n",
			    cookie);
			if (r < 0 || (size_t)r >= outsz - n)
				return (0);
			n += r;
			continue;
		}
		k = hl->hl_len;
		if (k > 0 && raw[hl->hl_off + k - 1] == '\r')
			k--;
		if (n + k + 2 >= outsz)
			return (0);
		memcpy(out + n, raw + hl->hl_off, k);
		n += k;
		out[n++] = '\r';
		out[n++] = '\n';
	}
	if (n + 3 > outsz)
		return (0);
	out[n++] = '\r';
	out[n++] = '\n';
	out[n] = '\0';
	return (n);
}

int
http_head_cookie(const struct http_head *h, const char *name, char *out,
    size_t size)
{
	const char	*v = h->h_cookie, *p;
	size_t		 nl = strlen(name), pl, n;
	int		 found = 0;

	out[0] = '\0';
	while (*v != '\0') {
		v += strspn(v, " \t;");
		if (*v == '\0')
			break;
		pl = strcspn(v, ";");
		p = v;
		v += pl;
		while (pl > 0 && (p[pl - 1] == ' ' || p[pl - 1] == '\t'))
			pl--;
		n = strcspn(p, "=");
		if (n >= pl || n != nl || strncmp(p, name, nl) != 0)
			continue;
		if (found++ || pl - n - 1 >= size)
			return (-1);
		memcpy(out, p + n + 1, pl - n - 1);
		out[pl - n - 1] = '\0';
	}
	return (found ? 1 : 0);
}

static int
chunk_hex(int c)
{
	if (c >= '0' && c <= '9')
		return (c - '0');
	if (c >= 'a' && c <= 'f')
		return (c - 'a' + 10);
	if (c >= 'A' && c <= 'F')
		return (c - 'A' + 10);
	return (-1);
}

ssize_t
http_chunked_feed(struct http_chunked *c, const char *buf, size_t len,
    size_t max)
{
	size_t	 i = 0, n;
	int	 d;

	while (i < len && c->hc_state != CK_DONE) {
		switch (c->hc_state) {
		case CK_SIZE:
			if ((d = chunk_hex((unsigned char)buf[i])) != -1) {
				if (c->hc_left >= CHUNK_SIZE_MAX / 16)
					return (-1);
				c->hc_left = c->hc_left * 16 + d;
				c->hc_digits++;
				c->hc_linelen++;
				i++;
				break;
			}
			if (c->hc_digits == 0)
				return (-1);
			c->hc_state = CK_EXT;
			/* FALLTHROUGH */
		case CK_EXT:
			if (++c->hc_linelen > CHUNK_LINE_MAX)
				return (-1);
			if (buf[i++] != '\n')
				break;
			c->hc_linelen = 0;
			c->hc_digits = 0;
			c->hc_state = c->hc_left == 0 ? CK_TRAILER : CK_DATA;
			break;
		case CK_DATA:
			n = len - i;
			if (n > c->hc_left)
				n = c->hc_left;
			c->hc_left -= n;
			i += n;
			if (c->hc_left == 0)
				c->hc_state = CK_DATA_CR;
			break;
		case CK_DATA_CR:
			if (buf[i] == '\r') {
				i++;
				c->hc_state = CK_DATA_LF;
				break;
			}
			/* FALLTHROUGH */
		case CK_DATA_LF:
			if (buf[i++] != '\n')
				return (-1);
			c->hc_state = CK_SIZE;
			break;
		case CK_TRAILER:
			if (++c->hc_trailers > max)
				return (-1);
			if (buf[i] != '\n') {
				if (buf[i] != '\r')
					c->hc_linelen++;
				i++;
				break;
			}
			i++;
			if (c->hc_linelen == 0)
				c->hc_state = CK_DONE;
			c->hc_linelen = 0;
			break;
		}
	}
	if (c->hc_state == CK_DONE)
		c->hc_done = 1;
	return ((ssize_t)i);
}
