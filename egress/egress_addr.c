/*
 * Which addresses the proxy may connect to: ordinary public unicast
 * only.  v4 embedded in v6 (mapped, compatible, NAT64, 6to4) is judged
 * as its v4 (docs/egress.md).  And which are the host's own: that one
 * asks the kernel, the only part here that is not pure.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <netinet/in.h>

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "egress.h"

static const char *
addr_class4(uint32_t a)
{
	static const struct {
		uint32_t	 net, mask;
		const char	*class;
	} t[] = {
		{ 0x00000000, 0xff000000, "unspecified" },	/* 0/8 */
		{ 0x7f000000, 0xff000000, "loopback" },		/* 127/8 */
		{ 0x0a000000, 0xff000000, "private" },		/* 10/8 */
		{ 0xac100000, 0xfff00000, "private" },		/* 172.16/12 */
		{ 0xc0a80000, 0xffff0000, "private" },		/* 192.168/16 */
		{ 0xa9fe0000, 0xffff0000, "link-local" },	/* 169.254/16 */
		{ 0x64400000, 0xffc00000, "cgnat" },		/* 100.64/10 */
		{ 0xe0000000, 0xf0000000, "multicast" },	/* 224/4 */
		{ 0xffffffff, 0xffffffff, "reserved" },		/* broadcast */
		{ 0xf0000000, 0xf0000000, "reserved" },		/* 240/4 */
		{ 0xc0000000, 0xffffff00, "reserved" },		/* 192.0.0/24 */
		{ 0xc6120000, 0xfffe0000, "reserved" },		/* 198.18/15 */
		{ 0xc0000200, 0xffffff00, "documentation" },	/* 192.0.2/24 */
		{ 0xc6336400, 0xffffff00, "documentation" },	/* 198.51.100/24 */
		{ 0xcb007100, 0xffffff00, "documentation" },	/* 203.0.113/24 */
	};
	size_t	 i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if ((a & t[i].mask) == t[i].net)
			return (t[i].class);
	return ("public");
}

static uint32_t
addr_v4at(const uint8_t *p)
{
	return ((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | p[3]);
}

static const char *
addr_class6(const uint8_t *b)
{
	static const uint8_t	 zero[16];
	static const uint8_t	 mapped[12] = { 0,0,0,0,0,0,0,0,0,0,0xff,0xff };
	static const uint8_t	 nat64[12] = { 0,0x64,0xff,0x9b };
	static const uint8_t	 disc[8] = { 0x01,0x00 };

	if (memcmp(b, zero, 16) == 0)
		return ("unspecified");
	if (memcmp(b, zero, 15) == 0 && b[15] == 1)
		return ("loopback");
	if (memcmp(b, mapped, 12) == 0 || memcmp(b, nat64, 12) == 0)
		return (addr_class4(addr_v4at(b + 12)));
	if (memcmp(b, zero, 12) == 0)			/* ::/96 compatible */
		return ("reserved");
	if (b[0] == 0x20 && b[1] == 0x02)		/* 2002::/16 6to4 */
		return (addr_class4(addr_v4at(b + 2)));
	if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80)
		return ("link-local");
	if ((b[0] & 0xfe) == 0xfc)
		return ("private");
	if (b[0] == 0xff)
		return ("multicast");
	if (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x0d && b[3] == 0xb8)
		return ("documentation");
	if (memcmp(b, disc, 8) == 0)			/* 100::/64 */
		return ("reserved");
	return ("public");
}

const char *
egress_addr_class(const struct sockaddr *sa)
{
	const struct sockaddr_in	*s4;
	const struct sockaddr_in6	*s6;

	if (sa == NULL)
		return ("reserved");
	switch (sa->sa_family) {
	case AF_INET:
		s4 = (const struct sockaddr_in *)sa;
		return (addr_class4(ntohl(s4->sin_addr.s_addr)));
	case AF_INET6:
		s6 = (const struct sockaddr_in6 *)sa;
		return (addr_class6(s6->sin6_addr.s6_addr));
	}
	return ("reserved");
}

int
egress_addr_public(const struct sockaddr *sa)
{
	return (strcmp(egress_addr_class(sa), "public") == 0);
}

/* The same address (not port), of the same family. */
static int
addr_same(const struct sockaddr *a, const struct sockaddr *b)
{
	if (a->sa_family != b->sa_family)
		return (0);
	if (a->sa_family == AF_INET)
		return (((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		    ((const struct sockaddr_in *)b)->sin_addr.s_addr);
	if (a->sa_family == AF_INET6)
		return (memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
		    &((const struct sockaddr_in6 *)b)->sin6_addr,
		    sizeof(struct in6_addr)) == 0);
	return (0);
}

/*
 * Whether fd, a connected socket, is connected to this host itself:
 * for a destination the kernel delivers locally (an address of any
 * interface, v4 or v6, however recently added, or a local route of
 * IPv4 without a source of its own) the address it picks for our end is
 * the destination itself.  1 yes, 0 no, -1 cannot tell.
 */
int
egress_fd_self(int fd, const struct sockaddr *dst)
{
	struct sockaddr_storage	 me;
	socklen_t		 sl = sizeof(me);

	if (getsockname(fd, (struct sockaddr *)&me, &sl) == -1)
		return (-1);
	return (addr_same((struct sockaddr *)&me, dst));
}

/*
 * Whether sa is one of the host's own addresses, by the kernel's own
 * choice of route at this moment (egress_fd_self), on a UDP socket
 * connected to it: nothing is sent.  No route to it is not the host's;
 * anything else that fails cannot tell (-1), which the caller refuses.
 */
int
egress_addr_self(const struct sockaddr *sa)
{
	socklen_t	 sl;
	int		 fd, r;

	if (sa->sa_family == AF_INET)
		sl = sizeof(struct sockaddr_in);
	else if (sa->sa_family == AF_INET6)
		sl = sizeof(struct sockaddr_in6);
	else
		return (-1);
	if ((fd = socket(sa->sa_family, SOCK_DGRAM | SOCK_CLOEXEC, 0)) == -1)
		return (-1);
	if (connect(fd, sa, sl) == -1) {
		r = (errno == ENETUNREACH || errno == EHOSTUNREACH ||
		    errno == ENETDOWN) ? 0 : -1;
		close(fd);
		return (r);
	}
	r = egress_fd_self(fd, sa);
	close(fd);
	return (r);
}
