/*
 * The head of a request a fence sent its proxy: CONNECT host:port or a
 * GET (etc.) of an absolute http:// URI.  Everything else is refused,
 * with "bad-request" or "bad-method" (docs/egress.md).
 */
#include <sys/types.h>

#include <ctype.h>
#include <string.h>

#include "egress.h"

static int
req_port(const char *s, size_t n, uint16_t *port)
{
	unsigned long	 v = 0;
	size_t		 i;

	if (n == 0 || n > 5)
		return (-1);
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return (-1);
		v = v * 10 + (s[i] - '0');
	}
	if (v == 0 || v > 65535)
		return (-1);
	*port = v;
	return (0);
}

/* host or host:port or [v6] or [v6]:port, s[0..n). */
static int
req_authority(const char *s, size_t n, struct egress_req *r, int needport)
{
	const char	*hs, *colon;
	size_t		 hn, i;

	if (n == 0)
		return (-1);
	if (memchr(s, '@', n) != NULL)
		return (-1);
	if (s[0] == '[') {
		const char *rb = memchr(s, ']', n);

		if (rb == NULL)
			return (-1);
		hs = s + 1;
		hn = rb - hs;
		for (i = 0; i < hn; i++)
			if (!isxdigit((unsigned char)hs[i]) && hs[i] != ':' &&
			    hs[i] != '.')
				return (-1);
		if ((size_t)(rb + 1 - s) == n)
			colon = NULL;
		else if (rb[1] == ':')
			colon = rb + 1;
		else
			return (-1);
	} else {
		colon = memchr(s, ':', n);
		hs = s;
		hn = colon != NULL ? (size_t)(colon - s) : n;
		for (i = 0; i < hn; i++)
			if (!isalnum((unsigned char)hs[i]) && hs[i] != '-' &&
			    hs[i] != '.' && hs[i] != '_')
				return (-1);
	}
	if (hn == 0 || hn >= sizeof(r->er_host))
		return (-1);
	for (i = 0; i < hn; i++)
		r->er_host[i] = tolower((unsigned char)hs[i]);
	r->er_host[hn] = '\0';
	if (colon != NULL) {
		if (req_port(colon + 1, s + n - colon - 1, &r->er_port) == -1)
			return (-1);
	} else if (needport)
		return (-1);
	else
		r->er_port = 80;
	return (0);
}

int
egress_req_parse(const char *buf, size_t len, struct egress_req *r,
    const char **code)
{
	const char	*end = NULL, *eol, *sp1, *sp2, *tgt, *ver;
	size_t		 i, hlen, llen, mlen, tlen, vlen;

	memset(r, 0, sizeof(*r));
	*code = "bad-request";
	for (i = 0; i < len && i < EGRESS_HEAD_MAX; i++) {
		unsigned char c = buf[i];

		if (c == '\0')
			return (-1);
		if (c < 0x20 && c != '\r' && c != '\n' && c != '\t')
			return (-1);
		if (c == 0x7f)
			return (-1);
		if (c == '\n' && i >= 1 && buf[i - 1] == '\n') {
			end = buf + i + 1;
			break;
		}
		if (c == '\n' && i >= 3 && buf[i - 1] == '\r' &&
		    buf[i - 2] == '\n' && buf[i - 3] == '\r') {
			end = buf + i + 1;
			break;
		}
	}
	if (end == NULL)
		return (len >= EGRESS_HEAD_MAX ? -1 : 0);
	hlen = end - buf;
	r->er_head_len = hlen;

	/* The request line. */
	eol = memchr(buf, '\n', hlen);
	llen = eol - buf;
	r->er_hdr_off = llen + 1;
	r->er_hdr_len = hlen - r->er_hdr_off;
	if (llen > 0 && buf[llen - 1] == '\r')
		llen--;
	if (memchr(buf, '\r', llen) != NULL || memchr(buf, '\t', llen) != NULL)
		return (-1);
	sp1 = memchr(buf, ' ', llen);
	if (sp1 == NULL)
		return (-1);
	mlen = sp1 - buf;
	tgt = sp1 + 1;
	sp2 = memchr(tgt, ' ', buf + llen - tgt);
	if (sp2 == NULL)
		return (-1);
	tlen = sp2 - tgt;
	ver = sp2 + 1;
	vlen = buf + llen - ver;
	if (mlen == 0 || tlen == 0)
		return (-1);
	if (vlen != 8 || (memcmp(ver, "HTTP/1.1", 8) != 0 &&
	    memcmp(ver, "HTTP/1.0", 8) != 0))
		return (-1);
	if (memchr(tgt, ' ', tlen) != NULL)
		return (-1);
	for (i = 0; i < mlen; i++)
		if (buf[i] < 'A' || buf[i] > 'Z') {
			*code = "bad-method";
			return (-1);
		}
	if (mlen >= sizeof(r->er_method)) {
		*code = "bad-method";
		return (-1);
	}
	memcpy(r->er_method, buf, mlen);

	if (strcmp(r->er_method, "CONNECT") == 0) {
		r->er_connect = 1;
		if (req_authority(tgt, tlen, r, 1) == -1)
			return (-1);
		return (1);
	}
	if (tlen < 7 || strncasecmp(tgt, "http://", 7) != 0) {
		*code = "bad-method";
		return (-1);
	}
	{
		const char	*a = tgt + 7, *p;
		size_t		 alen, plen;

		p = memchr(a, '/', tgt + tlen - a);
		if (p == NULL)
			p = memchr(a, '?', tgt + tlen - a);
		alen = p != NULL ? (size_t)(p - a) : (size_t)(tgt + tlen - a);
		if (req_authority(a, alen, r, 0) == -1)
			return (-1);
		plen = tgt + tlen - a - alen;
		if (plen + 2 > sizeof(r->er_path))
			return (-1);
		i = 0;
		if (plen == 0 || a[alen] != '/')
			r->er_path[i++] = '/';
		memcpy(r->er_path + i, a + alen, plen);
		r->er_path[i + plen] = '\0';
	}
	return (1);
}
