/*
 * The stub resolver's codec: an A or AAAA query, and the checks of its
 * answer.  Every read is bounded by the packet's length and every name
 * by a count of compression pointers (docs/egress.md).
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <netinet/in.h>

#include <ctype.h>
#include <string.h>

#include "egress.h"

#define DNS_HDR		12
#define DNS_PTRS_MAX	32

ssize_t
egress_dns_query(uint8_t *buf, size_t len, uint16_t id, const char *name,
    int qtype)
{
	size_t	 n, o, l;
	const char *p, *dot;

	if (qtype != EGRESS_DNS_A && qtype != EGRESS_DNS_AAAA)
		return (-1);
	n = strlen(name);
	if (n > 0 && name[n - 1] == '.')
		n--;
	if (n == 0 || n >= EGRESS_NAME_LEN || len < DNS_HDR + n + 2 + 4)
		return (-1);
	memset(buf, 0, DNS_HDR);
	buf[0] = id >> 8;
	buf[1] = id & 0xff;
	buf[2] = 0x01;				/* RD */
	buf[5] = 1;				/* QDCOUNT */
	o = DNS_HDR;
	for (p = name; p < name + n; p = dot + 1) {
		dot = memchr(p, '.', name + n - p);
		if (dot == NULL)
			dot = name + n;
		l = dot - p;
		if (l == 0 || l > 63)
			return (-1);
		buf[o++] = l;
		memcpy(buf + o, p, l);
		o += l;
	}
	buf[o++] = 0;
	buf[o++] = 0;
	buf[o++] = qtype;
	buf[o++] = 0;
	buf[o++] = 1;				/* IN */
	return (o);
}

/*
 * Read the name at *off into out (lower case, dotted, no final dot);
 * *off moves past it in the packet.  -1 when malformed.
 */
static int
dns_name(const uint8_t *buf, size_t len, size_t *off, char *out, size_t outlen)
{
	size_t	 o = *off, w = 0, l;
	int	 jumped = 0, ptrs = 0;

	for (;;) {
		if (o >= len)
			return (-1);
		l = buf[o];
		if ((l & 0xc0) == 0xc0) {
			if (o + 1 >= len || ++ptrs > DNS_PTRS_MAX)
				return (-1);
			if (!jumped)
				*off = o + 2;
			jumped = 1;
			o = (l & 0x3f) << 8 | buf[o + 1];
			continue;
		}
		if ((l & 0xc0) != 0)
			return (-1);
		if (l == 0) {
			if (!jumped)
				*off = o + 1;
			break;
		}
		if (o + 1 + l > len)
			return (-1);
		if (w != 0) {
			if (w + 1 >= outlen)
				return (-1);
			out[w++] = '.';
		}
		if (w + l >= outlen)
			return (-1);
		for (size_t i = 0; i < l; i++)
			out[w++] = tolower(buf[o + 1 + i]);
		o += 1 + l;
	}
	out[w] = '\0';
	return (0);
}

static int
dns_same(const char *a, const char *b)
{
	size_t	 na = strlen(a), nb = strlen(b);

	if (na > 0 && a[na - 1] == '.')
		na--;
	if (nb > 0 && b[nb - 1] == '.')
		nb--;
	return (na == nb && strncasecmp(a, b, na) == 0);
}

int
egress_dns_answer(const uint8_t *buf, size_t len, uint16_t id,
    const char *name, int qtype, struct sockaddr_storage *out, size_t max,
    size_t *n, const char **why)
{
	char		 owner[EGRESS_NAME_LEN], want[EGRESS_NAME_LEN];
	char		 target[EGRESS_NAME_LEN];
	size_t		 o, rdlen, qd, an, i;
	unsigned int	 type, klass, rcode;

	*n = 0;
	*why = "malformed answer";
	if (len < DNS_HDR)
		return (-1);
	if ((buf[0] << 8 | buf[1]) != id) {
		*why = "wrong id";
		return (-1);
	}
	if ((buf[2] & 0x80) == 0 || (buf[2] & 0x78) != 0)
		return (-1);
	if (buf[2] & 0x02) {
		*why = "truncated";
		return (-1);
	}
	rcode = buf[3] & 0x0f;
	if (rcode == 3) {
		*why = "no such name";
		return (-1);
	}
	if (rcode != 0) {
		*why = "server failure";
		return (-1);
	}
	qd = buf[4] << 8 | buf[5];
	an = buf[6] << 8 | buf[7];
	if (qd != 1)
		return (-1);
	o = DNS_HDR;
	if (dns_name(buf, len, &o, owner, sizeof(owner)) == -1 ||
	    o + 4 > len)
		return (-1);
	if (!dns_same(owner, name) || (unsigned int)(buf[o] << 8 | buf[o + 1]) !=
	    (unsigned int)qtype || (buf[o + 2] << 8 | buf[o + 3]) != 1) {
		*why = "question not echoed";
		return (-1);
	}
	o += 4;
	if (strlcpy(want, name, sizeof(want)) >= sizeof(want))
		return (-1);
	for (i = 0; i < an; i++) {
		if (dns_name(buf, len, &o, owner, sizeof(owner)) == -1 ||
		    o + 10 > len)
			return (-1);
		type = buf[o] << 8 | buf[o + 1];
		klass = buf[o + 2] << 8 | buf[o + 3];
		rdlen = buf[o + 8] << 8 | buf[o + 9];
		o += 10;
		if (o + rdlen > len)
			return (-1);
		if (klass == 1 && dns_same(owner, want)) {
			if (type == EGRESS_DNS_CNAME) {
				size_t t = o;

				if (dns_name(buf, o + rdlen, &t, target,
				    sizeof(target)) == -1)
					return (-1);
				strlcpy(want, target, sizeof(want));
			} else if (type == (unsigned int)qtype &&
			    type == EGRESS_DNS_A && rdlen == 4 && *n < max) {
				struct sockaddr_in *s4 = (void *)&out[*n];

				memset(&out[*n], 0, sizeof(out[*n]));
				s4->sin_family = AF_INET;
				memcpy(&s4->sin_addr, buf + o, 4);
				(*n)++;
			} else if (type == (unsigned int)qtype &&
			    type == EGRESS_DNS_AAAA && rdlen == 16 && *n < max) {
				struct sockaddr_in6 *s6 = (void *)&out[*n];

				memset(&out[*n], 0, sizeof(out[*n]));
				s6->sin6_family = AF_INET6;
				memcpy(&s6->sin6_addr, buf + o, 16);
				(*n)++;
			}
		}
		o += rdlen;
	}
	if (*n == 0) {
		*why = "no address";
		return (0);
	}
	*why = NULL;
	return (1);
}
