/*
 * egress_test: egress/, the proxy's request parser, address classifier,
 * its test of the host's own addresses and stub resolver codec
 * (docs/egress.md).
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <ifaddrs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <atf-c.h>

#include "egress.h"

static int
req(const char *s, struct egress_req *r, const char **code)
{
	return (egress_req_parse(s, strlen(s), r, code));
}

static void
refused(const char *s, const char *want)
{
	struct egress_req	 r;
	const char		*code = NULL;

	ATF_CHECK_EQ_MSG(req(s, &r, &code), -1, "%s", s);
	if (code != NULL)
		ATF_CHECK_STREQ_MSG(code, want, "%s", s);
}

ATF_TC_WITHOUT_HEAD(req_connect);
ATF_TC_BODY(req_connect, tc)
{
	struct egress_req	 r;
	const char		*code;
	const char		*s = "CONNECT Example.COM:443 HTTP/1.1\r\n"
				     "Host: example.com\r\n\r\nBODY";

	ATF_REQUIRE_EQ(req(s, &r, &code), 1);
	ATF_CHECK_STREQ(r.er_method, "CONNECT");
	ATF_CHECK_STREQ(r.er_host, "example.com");
	ATF_CHECK_EQ(r.er_port, 443);
	ATF_CHECK_EQ(r.er_head_len, strlen(s) - 4);
	ATF_CHECK_EQ(req("CONNECT 1.2.3.4:22 HTTP/1.0\n\n", &r, &code), 1);
	ATF_CHECK_STREQ(r.er_host, "1.2.3.4");
	ATF_CHECK_EQ(req("CONNECT [::1]:443 HTTP/1.1\r\n\r\n", &r, &code), 1);
	ATF_CHECK_STREQ(r.er_host, "::1");
	refused("CONNECT example.com HTTP/1.1\r\n\r\n", "bad-request");
	refused("CONNECT example.com:0 HTTP/1.1\r\n\r\n", "bad-request");
	refused("CONNECT example.com:65536 HTTP/1.1\r\n\r\n", "bad-request");
	refused("CONNECT example.com:4a3 HTTP/1.1\r\n\r\n", "bad-request");
	refused("CONNECT :443 HTTP/1.1\r\n\r\n", "bad-request");
	refused("CONNECT example.com:443 HTTP/2.0\r\n\r\n", "bad-request");
	refused("CONNECT example.com:443 HTTP/1.2\r\n\r\n", "bad-request");
	refused("CONNECT example.com:443 http/1.1\r\n\r\n", "bad-request");
	refused("CONNECT example.com:443\r\n\r\n", "bad-request");
	refused("CONNECT example.com:443 HTTP/1.1\r\nX: \001\r\n\r\n",
	    "bad-request");
	refused("connect example.com:443 HTTP/1.1\r\n\r\n", "bad-method");
	refused("GET /x HTTP/1.1\r\n\r\n", "bad-method");
	refused("GET https://example.com/ HTTP/1.1\r\n\r\n", "bad-method");
	refused("LONGMETHOD http://example.com/ HTTP/1.1\r\n\r\n",
	    "bad-method");
}

ATF_TC_WITHOUT_HEAD(req_http);
ATF_TC_BODY(req_http, tc)
{
	struct egress_req	 r;
	const char		*code;
	const char		*s = "GET http://Host.example/a/b?c HTTP/1.1\r\n"
				     "Host: host.example\r\n\r\n";

	ATF_REQUIRE_EQ(req(s, &r, &code), 1);
	ATF_CHECK_STREQ(r.er_method, "GET");
	ATF_CHECK_STREQ(r.er_host, "host.example");
	ATF_CHECK_EQ(r.er_port, 80);
	ATF_CHECK_STREQ(r.er_path, "/a/b?c");
	ATF_CHECK_EQ(r.er_hdr_off, strlen("GET http://Host.example/a/b?c "
	    "HTTP/1.1\r\n"));
	ATF_CHECK(memcmp(s + r.er_hdr_off, "Host:", 5) == 0);
	ATF_CHECK_EQ(r.er_hdr_off + r.er_hdr_len, strlen(s));
	ATF_CHECK_EQ(req("POST http://h.example:8080 HTTP/1.0\r\n\r\n", &r,
	    &code), 1);
	ATF_CHECK_EQ(r.er_port, 8080);
	ATF_CHECK_STREQ(r.er_path, "/");
	ATF_CHECK_EQ(req("GET http://h.example HTTP/1.1\r\n\r\n", &r,
	    &code), 1);
	ATF_CHECK_STREQ(r.er_path, "/");
	refused("GET http://u:p@h.example/ HTTP/1.1\r\n\r\n", "bad-request");
	refused("GET http:///x HTTP/1.1\r\n\r\n", "bad-request");
	refused("GET http://h.example:99999/ HTTP/1.1\r\n\r\n",
	    "bad-request");
}

ATF_TC_WITHOUT_HEAD(req_limits);
ATF_TC_BODY(req_limits, tc)
{
	struct egress_req	 r;
	const char		*code;
	const char		*good = "CONNECT a.example:443 HTTP/1.1\r\n"
				        "Host: a.example\r\n\r\n";
	char			*big, nul[] = "CONNECT a.example:443 HTTP/1.1"
				    "\r\nX: a\0b\r\n\r\n";
	size_t			 i;

	big = malloc(EGRESS_HEAD_MAX + 100);
	ATF_REQUIRE(big != NULL);
	memset(big, 'a', EGRESS_HEAD_MAX + 100);
	memcpy(big, "CONNECT a.example:443 HTTP/1.1\r\nX: ", 35);
	memcpy(big + EGRESS_HEAD_MAX + 96, "\r\n\r\n", 4);
	ATF_CHECK_EQ(egress_req_parse(big, EGRESS_HEAD_MAX + 100, &r, &code),
	    -1);
	ATF_CHECK_STREQ(code, "bad-request");
	ATF_CHECK_EQ(egress_req_parse(big, EGRESS_HEAD_MAX, &r, &code), -1);
	free(big);
	ATF_CHECK_EQ(egress_req_parse(nul, sizeof(nul) - 1, &r, &code), -1);
	ATF_CHECK_STREQ(code, "bad-request");
	/* Every split point: need more until the last byte. */
	for (i = 0; i < strlen(good); i++)
		ATF_CHECK_EQ_MSG(egress_req_parse(good, i, &r, &code), 0,
		    "split %zu", i);
	ATF_CHECK_EQ(egress_req_parse(good, strlen(good), &r, &code), 1);
	/* Many refusals, one after another (atf_lsan finds a leak). */
	for (i = 0; i < 10000; i++)
		ATF_REQUIRE_EQ(req(i % 2 ? "GET /x HTTP/1.1\r\n\r\n" :
		    "CONNECT x HTTP/1.1\r\n\r\n", &r, &code), -1);
}

static int
v4(const char *s)
{
	struct sockaddr_in	 sin;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	ATF_REQUIRE(inet_pton(AF_INET, s, &sin.sin_addr) == 1);
	return (egress_addr_public((struct sockaddr *)&sin));
}

static const char *
v6class(const char *s)
{
	static struct sockaddr_in6	 sin6;

	memset(&sin6, 0, sizeof(sin6));
	sin6.sin6_family = AF_INET6;
	ATF_REQUIRE(inet_pton(AF_INET6, s, &sin6.sin6_addr) == 1);
	return (egress_addr_class((struct sockaddr *)&sin6));
}

ATF_TC_WITHOUT_HEAD(addr_v4);
ATF_TC_BODY(addr_v4, tc)
{
	static const struct {
		const char	*in, *out;	/* a member, a neighbour */
	} t[] = {
		{ "0.255.255.255", "1.0.0.0" },
		{ "127.0.0.1", "128.0.0.0" },
		{ "10.1.2.3", "11.0.0.0" },
		{ "172.16.0.1", "172.32.0.0" },
		{ "172.31.255.255", "172.15.255.255" },
		{ "192.168.1.1", "192.169.0.0" },
		{ "169.254.1.1", "169.255.0.0" },
		{ "100.64.0.1", "100.63.255.255" },
		{ "100.127.255.255", "100.128.0.0" },
		{ "224.0.0.1", "223.255.255.255" },
		{ "255.255.255.255", "223.1.1.1" },
		{ "192.0.0.8", "192.0.1.0" },
		{ "192.0.2.1", "192.0.3.0" },
		{ "198.18.0.1", "198.17.255.255" },
		{ "198.19.255.255", "198.20.0.0" },
		{ "198.51.100.1", "198.51.101.0" },
		{ "203.0.113.1", "203.0.114.0" },
		{ "240.0.0.1", "223.255.255.254" },
	};
	size_t	 i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		ATF_CHECK_EQ_MSG(v4(t[i].in), 0, "%s", t[i].in);
		ATF_CHECK_EQ_MSG(v4(t[i].out), 1, "%s", t[i].out);
	}
	ATF_CHECK_EQ(v4("8.8.8.8"), 1);
}

ATF_TC_WITHOUT_HEAD(addr_v6);
ATF_TC_BODY(addr_v6, tc)
{
	static const struct {
		const char	*addr, *class;
	} t[] = {
		{ "::", "unspecified" },
		{ "::1", "loopback" },
		{ "::2", "reserved" },
		{ "fe80::1", "link-local" },
		{ "febf::1", "link-local" },
		{ "fec0::1", "public" },
		{ "fc00::1", "private" },
		{ "fdff::1", "private" },
		{ "fe00::1", "public" },
		{ "ff02::1", "multicast" },
		{ "2001:db8::1", "documentation" },
		{ "2001:db9::1", "public" },
		{ "64:ff9b::a00:1", "private" },
		{ "64:ff9b::808:808", "public" },
		{ "64:ff9b:1::808:808", "public" },
		{ "::ffff:127.0.0.1", "loopback" },
		{ "::ffff:8.8.8.8", "public" },
		{ "::1.2.3.4", "reserved" },
		{ "2002:c0a8:101::1", "private" },
		{ "2002:808:808::1", "public" },
		{ "100::1", "reserved" },
		{ "100:0:0:1::1", "public" },
		{ "2606:4700::1111", "public" },
	};
	size_t	 i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		ATF_CHECK_STREQ_MSG(v6class(t[i].addr), t[i].class, "%s",
		    t[i].addr);
}

/* A hand-built answer: header, question, then answers. */
static size_t
dns_build(uint8_t *b, uint16_t id, uint8_t flags2, uint8_t rcode,
    const char *name, int qtype, int an)
{
	ssize_t	 n;

	n = egress_dns_query(b, 512, id, name, qtype);
	ATF_REQUIRE(n > 0);
	b[2] = 0x81 | flags2;
	b[3] = 0x80 | rcode;
	b[7] = an;
	return (n);
}

static size_t
put(uint8_t *b, size_t o, const void *p, size_t n)
{
	memcpy(b + o, p, n);
	return (o + n);
}

ATF_TC_WITHOUT_HEAD(dns);
ATF_TC_BODY(dns, tc)
{
	uint8_t			 b[512];
	struct sockaddr_storage	 ss[4];
	const char		*why;
	size_t			 n, o, i;
	/* ptr to question name (offset 12), A IN ttl, 4 bytes */
	static const uint8_t	 a1[] = { 0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60,
				    0, 4, 93, 184, 216, 34 };
	static const uint8_t	 ptrloop[] = { 0xc0, 27, 0, 1, 0, 1,
				    0, 0, 0, 60, 0, 4, 1, 2, 3, 4 };
	struct sockaddr_in	*s4 = (struct sockaddr_in *)&ss[0];

	ATF_CHECK_EQ(egress_dns_query(b, sizeof(b), 1, "a..b", 1), -1);
	ATF_CHECK_EQ(egress_dns_query(b, sizeof(b), 1, "a.b", 15), -1);
	ATF_CHECK_EQ(egress_dns_query(b, 10, 1, "a.b", 1), -1);

	o = dns_build(b, 0x1234, 0, 0, "www.example.com", 1, 1);
	o = put(b, o, a1, sizeof(a1));
	ATF_CHECK_EQ(egress_dns_answer(b, o, 0x1234, "WWW.example.com", 1,
	    ss, 4, &n, &why), 1);
	ATF_CHECK_EQ(n, 1);
	ATF_CHECK_EQ(s4->sin_family, AF_INET);
	ATF_CHECK_EQ(ntohl(s4->sin_addr.s_addr), 0x5db8d822);
	ATF_CHECK_EQ(egress_dns_answer(b, o, 0x1235, "www.example.com", 1,
	    ss, 4, &n, &why), -1);
	ATF_CHECK_STREQ(why, "wrong id");
	ATF_CHECK_EQ(egress_dns_answer(b, o, 0x1234, "www.example.org", 1,
	    ss, 4, &n, &why), -1);
	ATF_CHECK_EQ(egress_dns_answer(b, o, 0x1234, "www.example.com", 28,
	    ss, 4, &n, &why), -1);
	for (i = 0; i < o; i++)
		ATF_CHECK_EQ_MSG(egress_dns_answer(b, i, 0x1234,
		    "www.example.com", 1, ss, 4, &n, &why), -1, "len %zu", i);

	/* NXDOMAIN, truncation. */
	o = dns_build(b, 7, 0, 3, "gone.example", 1, 0);
	ATF_CHECK_EQ(egress_dns_answer(b, o, 7, "gone.example", 1, ss, 4, &n,
	    &why), -1);
	ATF_CHECK_STREQ(why, "no such name");
	o = dns_build(b, 7, 0x02, 0, "big.example", 1, 0);
	ATF_CHECK_EQ(egress_dns_answer(b, o, 7, "big.example", 1, ss, 4, &n,
	    &why), -1);
	ATF_CHECK_STREQ(why, "truncated");

	/* A pointer that points at itself. */
	o = dns_build(b, 9, 0, 0, "l.example", 1, 1);
	ATF_REQUIRE_EQ(o, 27);
	o = put(b, o, ptrloop, sizeof(ptrloop));
	ATF_CHECK_EQ(egress_dns_answer(b, o, 9, "l.example", 1, ss, 4, &n,
	    &why), -1);

	/* CNAME chain a.example -> b.example -> AAAA; and an off-chain A. */
	{
		static const uint8_t	 cn[] = { 0xc0, 12, 0, 5, 0, 1, 0, 0,
					    0, 60, 0, 4, 1, 'b', 0xc0, 14 };
		/* b.example at offset 29+12+... written by name below */
		uint8_t			 aaaa[28] = { 0 };
		size_t			 bname;

		o = dns_build(b, 5, 0, 0, "a.example", 28, 3);
		o = put(b, o, cn, sizeof(cn));
		bname = o - 4;		/* "1 b ptr" inside the rdata */
		aaaa[0] = 0xc0 | (bname >> 8);
		aaaa[1] = bname & 0xff;
		aaaa[3] = 28; aaaa[5] = 1; aaaa[9] = 60; aaaa[11] = 16;
		aaaa[12] = 0x26; aaaa[13] = 0x06; aaaa[27] = 1;
		o = put(b, o, aaaa, sizeof(aaaa));
		/* An AAAA for an unrelated owner: ignored. */
		aaaa[1] = 14;		/* "example" */
		aaaa[27] = 2;
		o = put(b, o, aaaa, sizeof(aaaa));
		ATF_CHECK_EQ(egress_dns_answer(b, o, 5, "a.example", 28, ss,
		    4, &n, &why), 1);
		ATF_CHECK_EQ(n, 1);
		ATF_CHECK_EQ(ss[0].ss_family, AF_INET6);
		ATF_CHECK_EQ(((struct sockaddr_in6 *)&ss[0])->
		    sin6_addr.s6_addr[15], 1);
	}
}

static void
sa_text(const struct sockaddr *sa, char *buf, size_t len)
{
	const void	*a = sa->sa_family == AF_INET ?
	    (const void *)&((const struct sockaddr_in *)sa)->sin_addr :
	    (const void *)&((const struct sockaddr_in6 *)sa)->sin6_addr;

	if (inet_ntop(sa->sa_family, a, buf, len) == NULL)
		strlcpy(buf, "?", len);
}

/*
 * Every address of every interface is the host's own, by the kernel's
 * word, whatever its class; addresses of nobody here are not, and
 * nothing is sent to either.  A TCP connection to a listener of ours
 * on loopback is one to the host itself.
 */
ATF_TC_WITHOUT_HEAD(addr_self);
ATF_TC_BODY(addr_self, tc)
{
	struct ifaddrs		*ifa, *i;
	struct sockaddr_in	 sin;
	struct sockaddr_in6	 sin6;
	socklen_t		 sl = sizeof(sin);
	char			 text[INET6_ADDRSTRLEN];
	int			 n = 0, ls, cs;

	ATF_REQUIRE(getifaddrs(&ifa) == 0);
	for (i = ifa; i != NULL; i = i->ifa_next) {
		if (i->ifa_addr == NULL || (i->ifa_addr->sa_family != AF_INET &&
		    i->ifa_addr->sa_family != AF_INET6))
			continue;
		sa_text(i->ifa_addr, text, sizeof(text));
		ATF_CHECK_EQ_MSG(egress_addr_self(i->ifa_addr), 1, "%s of %s",
		    text, i->ifa_name);
		n++;
	}
	freeifaddrs(ifa);
	ATF_CHECK(n > 0);

	/* 127.0.0.1 in v4-mapped form; ::1. */
	memset(&sin6, 0, sizeof(sin6));
	sin6.sin6_family = AF_INET6;
	ATF_REQUIRE(inet_pton(AF_INET6, "::ffff:127.0.0.1",
	    &sin6.sin6_addr) == 1);
	ATF_CHECK_EQ(egress_addr_self((struct sockaddr *)&sin6), 1);
	ATF_REQUIRE(inet_pton(AF_INET6, "::1", &sin6.sin6_addr) == 1);
	ATF_CHECK_EQ(egress_addr_self((struct sockaddr *)&sin6), 1);

	/* Documentation addresses: nobody's, unless this host took one. */
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(9);
	ATF_REQUIRE(inet_pton(AF_INET, "198.51.100.77", &sin.sin_addr) == 1);
	ATF_CHECK_EQ(egress_addr_self((struct sockaddr *)&sin), 0);
	ATF_REQUIRE(inet_pton(AF_INET6, "2001:db8:77::77",
	    &sin6.sin6_addr) == 1);
	ATF_CHECK_EQ(egress_addr_self((struct sockaddr *)&sin6), 0);

	/* A connected TCP socket, to a listener of ours. */
	ATF_REQUIRE((ls = socket(AF_INET, SOCK_STREAM, 0)) != -1);
	sin.sin_port = 0;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ATF_REQUIRE(bind(ls, (struct sockaddr *)&sin, sizeof(sin)) == 0);
	ATF_REQUIRE(listen(ls, 1) == 0);
	ATF_REQUIRE(getsockname(ls, (struct sockaddr *)&sin, &sl) == 0);
	ATF_REQUIRE((cs = socket(AF_INET, SOCK_STREAM, 0)) != -1);
	ATF_REQUIRE(connect(cs, (struct sockaddr *)&sin, sizeof(sin)) == 0);
	ATF_CHECK_EQ(egress_fd_self(cs, (struct sockaddr *)&sin), 1);
	ATF_REQUIRE(inet_pton(AF_INET, "198.51.100.77", &sin.sin_addr) == 1);
	ATF_CHECK_EQ(egress_fd_self(cs, (struct sockaddr *)&sin), 0);
	close(cs);
	close(ls);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, req_connect);
	ATF_TP_ADD_TC(tp, req_http);
	ATF_TP_ADD_TC(tp, req_limits);
	ATF_TP_ADD_TC(tp, addr_v4);
	ATF_TP_ADD_TC(tp, addr_v6);
	ATF_TP_ADD_TC(tp, addr_self);
	ATF_TP_ADD_TC(tp, dns);
	return (atf_no_error());
}
