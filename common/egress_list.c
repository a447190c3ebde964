/*
 * A fence's egress allowlist (docs/egress.md): its entries, checked
 * the same way wherever one is read (the HTTP body, fencectl, the
 * codecs, the proxy), and the one matcher the proxy decides by.
 *
 * An entry is "name:port": name an exact host name or "*.suffix", at
 * most 253 bytes, labels of 1..63 letters, digits and inner hyphens;
 * port 1..65535 in decimal.  A name whose last label is all digits
 * would be an IPv4 literal (or read as one by some resolver) and is
 * refused, as is anything with ':' or '[' in it (IPv6).  A wildcard
 * covers one label or more in front of its suffix, never the suffix
 * itself, and its suffix has two labels at least ("*.com" is refused).
 * Upper case is taken and lowered; the canonical form is lower case.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <arpa/inet.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "fenced.h"

/* A host name, lower case, no trailing dot; *why says what is wrong. */
static int
egress_name_check(const char *name, const char **why)
{
	const char	*p, *label = name;
	size_t		 len = strlen(name), n;
	int		 digits = 1;

	if (len == 0) {
		*why = "the name is empty";
		return (0);
	}
	if (len > EGRESS_NAME_LEN - 1) {
		*why = "the name is over 253 bytes";
		return (0);
	}
	for (p = name;; p++) {
		if (*p == '.' || *p == '\0') {
			n = p - label;
			if (n == 0) {
				*why = "the name has an empty label";
				return (0);
			}
			if (n > 63) {
				*why = "a label of the name is over 63 bytes";
				return (0);
			}
			if (label[0] == '-' || p[-1] == '-') {
				*why = "a label begins or ends with '-'";
				return (0);
			}
			if (*p == '\0')
				break;
			label = p + 1;
			digits = 1;
			continue;
		}
		if (isdigit((unsigned char)*p))
			continue;
		digits = 0;
		if ((*p >= 'a' && *p <= 'z') || *p == '-')
			continue;
		*why = (*p == ':' || *p == '[') ? "an IP literal is not a "
		    "name" : "the name has a character other than a-z, 0-9, "
		    "'-' and '.'";
		return (0);
	}
	if (digits) {
		*why = "an IP literal is not a name";
		return (0);
	}
	return (1);
}

int
egress_name_valid(const char *name)
{
	const char	*why;

	return (egress_name_check(name, &why));
}

/*
 * s ("name:port", any case) into e, lowered; 0 with *why on a bad one.
 * why may be NULL.
 */
int
egress_entry_parse(const char *s, struct egress_entry *e, const char **why)
{
	char		 name[EGRESS_ENTRY_LEN];
	const char	*colon, *p, *dummy;
	size_t		 n, i;
	unsigned long	 port = 0;

	if (why == NULL)
		why = &dummy;
	memset(e, 0, sizeof(*e));
	if (strnlen(s, EGRESS_ENTRY_LEN) >= EGRESS_ENTRY_LEN) {
		*why = "the entry is too long";
		return (0);
	}
	if ((colon = strrchr(s, ':')) == NULL) {
		*why = "the entry has no \":PORT\"";
		return (0);
	}
	if (colon[1] == '\0' || strlen(colon + 1) > 5 || colon[1] == '0') {
		*why = "the port is not a number 1..65535";
		return (0);
	}
	for (p = colon + 1; *p != '\0'; p++) {
		if (!isdigit((unsigned char)*p)) {
			*why = "the port is not a number 1..65535";
			return (0);
		}
		port = port * 10 + (*p - '0');
	}
	if (port < 1 || port > 65535) {
		*why = "the port is not a number 1..65535";
		return (0);
	}
	n = colon - s;
	for (i = 0; i < n; i++)
		name[i] = tolower((unsigned char)s[i]);
	name[n] = '\0';
	p = name;
	if (strncmp(name, "*.", 2) == 0) {
		e->ee_wild = 1;
		p = name + 2;
		if (strchr(p, '.') == NULL) {
			*why = "a wildcard's suffix needs two labels at least";
			return (0);
		}
	}
	if (!egress_name_check(p, why))
		return (0);
	(void)strlcpy(e->ee_name, p, sizeof(e->ee_name));
	e->ee_port = port;
	return (1);
}

/*
 * s parsed and written to out (EGRESS_ENTRY_LEN bytes) in canonical
 * form, which is s in lower case: the port has no leading zero.
 */
int
egress_entry_canon(const char *s, char *out, const char **why)
{
	struct egress_entry e;
	size_t		 i;

	if (!egress_entry_parse(s, &e, why))
		return (0);
	for (i = 0; s[i] != '\0'; i++)
		out[i] = tolower((unsigned char)s[i]);
	out[i] = '\0';
	return (1);
}

/* In canonical form: what the codecs hold every entry to. */
int
egress_entry_valid(const char *s)
{
	struct egress_entry e;
	const char	*p;

	if (!egress_entry_parse(s, &e, NULL))
		return (0);
	for (p = s; *p != '\0'; p++)
		if (*p >= 'A' && *p <= 'Z')
			return (0);
	return (1);
}

/*
 * Whether host (canonical: egress_name_valid()) and port are on the
 * list; *exact (may be NULL) says an exact entry matched.  The first
 * exact match wins over any wildcard.
 */
int
egress_list_match(const char list[][EGRESS_ENTRY_LEN], size_t n,
    const char *host, uint16_t port, int *exact)
{
	struct egress_entry e;
	size_t		 i, hl, nl;
	int		 found = 0;

	if (exact != NULL)
		*exact = 0;
	if (!egress_name_valid(host))
		return (0);
	hl = strlen(host);
	for (i = 0; i < n; i++) {
		if (!egress_entry_parse(list[i], &e, NULL) ||
		    e.ee_port != port)
			continue;
		if (!e.ee_wild) {
			if (strcmp(e.ee_name, host) == 0) {
				if (exact != NULL)
					*exact = 1;
				return (1);
			}
			continue;
		}
		nl = strlen(e.ee_name);
		if (hl > nl + 1 && host[hl - nl - 1] == '.' &&
		    strcmp(host + hl - nl, e.ee_name) == 0)
			found = 1;
	}
	return (found);
}

/*
 * "NAME ADDRESS PORT" of `egress host' into name, addr and *port; 0 on
 * a bad one (the address numeric, the port 1..65535 in decimal).
 */
int
egress_host_parse(const char *s, char *name, size_t namesize, char *addr,
    size_t addrsize, uint16_t *port)
{
	unsigned char	 bin[sizeof(struct in6_addr)];
	const char	*sp, *sp2, *errstr;
	size_t		 n;
	long long	 v;

	if ((sp = strchr(s, ' ')) == NULL || (n = sp - s) >= namesize ||
	    n >= EGRESS_NAME_LEN ||
	    (sp2 = strchr(sp + 1, ' ')) == NULL ||
	    (size_t)(sp2 - (sp + 1)) >= addrsize ||
	    (size_t)(sp2 - (sp + 1)) >= FENCED_ADDR_MAX ||
	    strlen(sp2 + 1) > 5 || sp2[1] < '1' || sp2[1] > '9')
		return (0);
	memcpy(name, s, n);
	name[n] = '\0';
	memcpy(addr, sp + 1, sp2 - (sp + 1));
	addr[sp2 - (sp + 1)] = '\0';
	if (!egress_name_valid(name))
		return (0);
	if (inet_pton(AF_INET, addr, bin) != 1 &&
	    inet_pton(AF_INET6, addr, bin) != 1)
		return (0);
	v = strtonum(sp2 + 1, 1, 65535, &errstr);
	if (errstr != NULL)
		return (0);
	*port = (uint16_t)v;
	return (1);
}
