/*
 * msg_tunnel_test: the payloads of tunnels (imsg/msg_tunnel.c): round
 * trips, and what each decoder refuses: a field out of its bounds, a
 * request whose fields do not fit its kind, DATA empty or over its
 * bound, CREDIT beyond the window, a port listing out of order, and
 * every truncation of a good payload.
 */
#include <sys/types.h>

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <atf-c.h>

#include "fenced.h"
#include "msg.h"
#include "mp.h"

#define PREFIXES_REFUSED(fn, buf, len, out) do {			\
	size_t	 _n;							\
	for (_n = 0; _n < (len); _n++)					\
		ATF_CHECK_MSG(fn((buf), _n, (out)) == -1,		\
		    "a prefix of %zu bytes decoded", _n);		\
} while (0)

static void
open_sample(struct msg_tunnel_open *to)
{
	memset(to, 0, sizeof(*to));
	strlcpy(to->to_key, "web", sizeof(to->to_key));
	to->to_owner = 1000;
	memset(to->to_bearer, 7, sizeof(to->to_bearer));
	to->to_kind = MSG_TUNNEL_PORT;
	to->to_port = 8080;
}

/* Encode the raw fields of an open as a peer might, then decode. */
static int
open_raw(uint64_t kind, uint64_t port, uint64_t id, uint64_t stream,
    uint64_t offset)
{
	struct mp_writer w;
	struct msg_tunnel_open to;
	uint8_t		 b[MSG_BEARER_LEN];
	void		*buf;
	size_t		 len;
	int		 r;

	memset(b, 1, sizeof(b));
	mp_write_init(&w);
	mp_write_array(&w, 8);
	mp_write_str(&w, "web", 4);
	mp_write_u64(&w, 1000);
	mp_write_bin(&w, b, sizeof(b));
	mp_write_u64(&w, kind);
	mp_write_u64(&w, port);
	mp_write_u64(&w, id);
	mp_write_u64(&w, stream);
	mp_write_u64(&w, offset);
	ATF_REQUIRE(mp_write_finish(&w, &buf, &len) == 0);
	r = msg_tunnel_open_decode(buf, len, &to);
	free(buf);
	return (r);
}

ATF_TC_WITHOUT_HEAD(open_roundtrip);
ATF_TC_BODY(open_roundtrip, tc)
{
	struct msg_tunnel_open a, b;
	void		*buf;
	size_t		 len;

	open_sample(&a);
	ATF_REQUIRE_EQ(0, msg_tunnel_open_encode(&a, &buf, &len));
	memset(&b, 0xff, sizeof(b));
	ATF_REQUIRE_EQ(0, msg_tunnel_open_decode(buf, len, &b));
	ATF_CHECK_STREQ("web", b.to_key);
	ATF_CHECK_EQ(1000, b.to_owner);
	ATF_CHECK_EQ(MSG_TUNNEL_PORT, b.to_kind);
	ATF_CHECK_EQ(8080, b.to_port);
	ATF_CHECK_EQ(0, memcmp(a.to_bearer, b.to_bearer, MSG_BEARER_LEN));
	PREFIXES_REFUSED(msg_tunnel_open_decode, buf, len, &b);
	free(buf);

	a.to_kind = MSG_TUNNEL_TERMINAL;
	a.to_port = 0;
	a.to_id = 3;
	a.to_offset = 65536;
	ATF_REQUIRE_EQ(0, msg_tunnel_open_encode(&a, &buf, &len));
	ATF_REQUIRE_EQ(0, msg_tunnel_open_decode(buf, len, &b));
	ATF_CHECK_EQ(3, b.to_id);
	ATF_CHECK_EQ(65536, b.to_offset);
	free(buf);

	a.to_kind = MSG_TUNNEL_OUTPUT;
	a.to_stream = MSG_CHUNK_STDERR;
	a.to_offset = UINT64_MAX;
	ATF_REQUIRE_EQ(0, msg_tunnel_open_encode(&a, &buf, &len));
	ATF_REQUIRE_EQ(0, msg_tunnel_open_decode(buf, len, &b));
	ATF_CHECK_EQ(MSG_CHUNK_STDERR, b.to_stream);
	free(buf);
}

ATF_TC_WITHOUT_HEAD(open_refused);
ATF_TC_BODY(open_refused, tc)
{
	struct msg_tunnel_open a;
	void		*buf;
	size_t		 len;

	ATF_CHECK_EQ(0, open_raw(MSG_TUNNEL_PORT, 1, 0, 0, 0));
	ATF_CHECK_EQ(0, open_raw(MSG_TUNNEL_PORT, 65535, 0, 0, 0));
	ATF_CHECK_EQ(-1, open_raw(MSG_TUNNEL_PORT, 0, 0, 0, 0));
	ATF_CHECK_EQ(-1, open_raw(MSG_TUNNEL_PORT, 65536, 0, 0, 0));
	ATF_CHECK_EQ(-1, open_raw(MSG_TUNNEL_PORT, 80, 1, 0, 0));
	ATF_CHECK_EQ(-1, open_raw(MSG_TUNNEL_PORT, 80, 0, 1, 0));
	ATF_CHECK_EQ(-1, open_raw(MSG_TUNNEL_PORT, 80, 0, 0, 1));
	ATF_CHECK_EQ(-1, open_raw(0, 80, 0, 0, 0));
	ATF_CHECK_EQ(-1, open_raw(MSG_TUNNEL_KIND_MAX + 1, 0, 0, 0, 0));
	ATF_CHECK_EQ(-1, open_raw(MSG_TUNNEL_TERMINAL, 80, 1, 0, 0));
	ATF_CHECK_EQ(-1, open_raw(MSG_TUNNEL_TERMINAL, 0, 1, 1, 0));
	ATF_CHECK_EQ(0, open_raw(MSG_TUNNEL_OUTPUT, 0, 1, 1, 9));
	ATF_CHECK_EQ(-1, open_raw(MSG_TUNNEL_OUTPUT, 0, 1, 0, 0));
	ATF_CHECK_EQ(-1, open_raw(MSG_TUNNEL_OUTPUT, 0, 1, 3, 0));

	/* The encoder holds the same rules. */
	open_sample(&a);
	a.to_port = 0;
	ATF_CHECK_EQ(-1, msg_tunnel_open_encode(&a, &buf, &len));
	open_sample(&a);
	a.to_kind = 9;
	ATF_CHECK_EQ(-1, msg_tunnel_open_encode(&a, &buf, &len));
	open_sample(&a);
	memset(a.to_key, 'k', sizeof(a.to_key));
	ATF_CHECK_EQ(-1, msg_tunnel_open_encode(&a, &buf, &len));
}

ATF_TC_WITHOUT_HEAD(answer);
ATF_TC_BODY(answer, tc)
{
	struct msg_tunnel a, b;
	void		*buf;
	size_t		 len;

	a.tn_mode = MSG_TUNNEL_FD;
	ATF_REQUIRE_EQ(0, msg_tunnel_encode(&a, &buf, &len));
	ATF_REQUIRE_EQ(0, msg_tunnel_decode(buf, len, &b));
	ATF_CHECK_EQ(MSG_TUNNEL_FD, b.tn_mode);
	PREFIXES_REFUSED(msg_tunnel_decode, buf, len, &b);
	free(buf);
	a.tn_mode = 0;
	ATF_CHECK_EQ(-1, msg_tunnel_encode(&a, &buf, &len));
	a.tn_mode = 3;
	ATF_CHECK_EQ(-1, msg_tunnel_encode(&a, &buf, &len));
}

/* A DATA payload with n bytes, written as any peer could. */
static int
data_raw(size_t n)
{
	struct mp_writer w;
	struct msg_tunnel_data td;
	uint8_t		*p;
	void		*buf;
	size_t		 len;
	int		 r;

	ATF_REQUIRE((p = calloc(1, n + 1)) != NULL);
	mp_write_init(&w);
	mp_write_array(&w, 2);
	mp_write_bin(&w, NULL, 0);
	mp_write_bin(&w, p, n);
	ATF_REQUIRE(mp_write_finish(&w, &buf, &len) == 0);
	r = msg_tunnel_data_decode(buf, len, &td);
	if (r == 0) {
		ATF_CHECK_EQ(n, td.td_len);
		msg_tunnel_data_free(&td);
	}
	free(buf);
	free(p);
	return (r);
}

ATF_TC_WITHOUT_HEAD(data);
ATF_TC_BODY(data, tc)
{
	struct msg_tunnel_data a, b;
	uint8_t		 bytes[300];
	void		*buf;
	size_t		 len;

	memset(&a, 0, sizeof(a));
	memset(bytes, 'x', sizeof(bytes));
	bytes[0] = 0;
	a.td_data = bytes;
	a.td_len = sizeof(bytes);
	ATF_REQUIRE_EQ(0, msg_tunnel_data_encode(&a, &buf, &len));
	ATF_REQUIRE_EQ(0, msg_tunnel_data_decode(buf, len, &b));
	ATF_CHECK_EQ(sizeof(bytes), b.td_len);
	ATF_CHECK_EQ(0, memcmp(bytes, b.td_data, sizeof(bytes)));
	msg_tunnel_data_free(&b);
	PREFIXES_REFUSED(msg_tunnel_data_decode, buf, len, &b);
	free(buf);

	ATF_CHECK_EQ(0, data_raw(1));
	ATF_CHECK_EQ(0, data_raw(MSG_TUNNEL_DATA_MAX));
	ATF_CHECK_EQ(-1, data_raw(0));
	ATF_CHECK_EQ(-1, data_raw(MSG_TUNNEL_DATA_MAX + 1));
	a.td_len = 0;
	ATF_CHECK_EQ(-1, msg_tunnel_data_encode(&a, &buf, &len));
	a.td_len = MSG_TUNNEL_DATA_MAX + 1;
	ATF_CHECK_EQ(-1, msg_tunnel_data_encode(&a, &buf, &len));
}

ATF_TC_WITHOUT_HEAD(credit_close);
ATF_TC_BODY(credit_close, tc)
{
	struct msg_tunnel_credit c, c2;
	struct msg_tunnel_close l, l2;
	void		*buf;
	size_t		 len;

	memset(&c, 0, sizeof(c));
	memset(c.tc_bearer, 3, sizeof(c.tc_bearer));
	c.tc_bytes = MSG_TUNNEL_WINDOW;
	ATF_REQUIRE_EQ(0, msg_tunnel_credit_encode(&c, &buf, &len));
	ATF_REQUIRE_EQ(0, msg_tunnel_credit_decode(buf, len, &c2));
	ATF_CHECK_EQ(MSG_TUNNEL_WINDOW, c2.tc_bytes);
	ATF_CHECK_EQ(0, memcmp(c.tc_bearer, c2.tc_bearer, MSG_BEARER_LEN));
	PREFIXES_REFUSED(msg_tunnel_credit_decode, buf, len, &c2);
	free(buf);
	c.tc_bytes = 0;
	ATF_CHECK_EQ(-1, msg_tunnel_credit_encode(&c, &buf, &len));
	c.tc_bytes = MSG_TUNNEL_WINDOW + 1;
	ATF_CHECK_EQ(-1, msg_tunnel_credit_encode(&c, &buf, &len));

	memset(&l, 0, sizeof(l));
	l.tl_how = MSG_TUNNEL_ABORT;
	ATF_REQUIRE_EQ(0, msg_tunnel_close_encode(&l, &buf, &len));
	ATF_REQUIRE_EQ(0, msg_tunnel_close_decode(buf, len, &l2));
	ATF_CHECK_EQ(MSG_TUNNEL_ABORT, l2.tl_how);
	PREFIXES_REFUSED(msg_tunnel_close_decode, buf, len, &l2);
	free(buf);
	l.tl_how = 0;
	ATF_CHECK_EQ(-1, msg_tunnel_close_encode(&l, &buf, &len));
	l.tl_how = 3;
	ATF_CHECK_EQ(-1, msg_tunnel_close_encode(&l, &buf, &len));
}

/* A listing written as any peer could: truncated flag, the ports. */
static int
ports_raw(const uint64_t *ports, size_t n, struct msg_portlist *out)
{
	struct mp_writer w;
	void		*buf;
	size_t		 len, i;
	int		 r;

	mp_write_init(&w);
	mp_write_array(&w, 2);
	mp_write_bool(&w, 0);
	mp_write_array(&w, n);
	for (i = 0; i < n; i++)
		mp_write_u64(&w, ports[i]);
	ATF_REQUIRE(mp_write_finish(&w, &buf, &len) == 0);
	r = msg_portlist_decode(buf, len, out);
	free(buf);
	return (r);
}

ATF_TC_WITHOUT_HEAD(ports);
ATF_TC_BODY(ports, tc)
{
	struct msg_portlist a, b;
	struct msg_ports_req q, q2;
	uint64_t	 raw[MSG_PORTS_MAX + 1];
	void		*buf;
	size_t		 len, i;

	memset(&a, 0, sizeof(a));
	a.pl_count = 3;
	a.pl_ports[0] = 1;
	a.pl_ports[1] = 8000;
	a.pl_ports[2] = 65535;
	a.pl_truncated = 1;
	ATF_REQUIRE_EQ(0, msg_portlist_encode(&a, &buf, &len));
	ATF_REQUIRE_EQ(0, msg_portlist_decode(buf, len, &b));
	ATF_CHECK_EQ(3, b.pl_count);
	ATF_CHECK_EQ(8000, b.pl_ports[1]);
	ATF_CHECK_EQ(65535, b.pl_ports[2]);
	ATF_CHECK_EQ(1, b.pl_truncated);
	PREFIXES_REFUSED(msg_portlist_decode, buf, len, &b);
	free(buf);

	/* Out of order, twice, zero, too big, too many: refused. */
	a.pl_ports[1] = 1;
	ATF_CHECK_EQ(-1, msg_portlist_encode(&a, &buf, &len));
	raw[0] = 80; raw[1] = 22;
	ATF_CHECK_EQ(-1, ports_raw(raw, 2, &b));
	raw[0] = 80; raw[1] = 80;
	ATF_CHECK_EQ(-1, ports_raw(raw, 2, &b));
	raw[0] = 0;
	ATF_CHECK_EQ(-1, ports_raw(raw, 1, &b));
	raw[0] = 65536;
	ATF_CHECK_EQ(-1, ports_raw(raw, 1, &b));
	for (i = 0; i < MSG_PORTS_MAX + 1; i++)
		raw[i] = i + 1;
	ATF_CHECK_EQ(0, ports_raw(raw, MSG_PORTS_MAX, &b));
	ATF_CHECK_EQ(MSG_PORTS_MAX, b.pl_count);
	ATF_CHECK_EQ(-1, ports_raw(raw, MSG_PORTS_MAX + 1, &b));
	ATF_CHECK_EQ(0, ports_raw(raw, 0, &b));
	ATF_CHECK_EQ(0, b.pl_count);

	memset(&q, 0, sizeof(q));
	strlcpy(q.ps_key, "web", sizeof(q.ps_key));
	q.ps_owner = MSG_OWNER_NONE;
	ATF_REQUIRE_EQ(0, msg_ports_req_encode(&q, &buf, &len));
	ATF_REQUIRE_EQ(0, msg_ports_req_decode(buf, len, &q2));
	ATF_CHECK_STREQ("web", q2.ps_key);
	ATF_CHECK_EQ(MSG_OWNER_NONE, q2.ps_owner);
	PREFIXES_REFUSED(msg_ports_req_decode, buf, len, &q2);
	free(buf);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, open_roundtrip);
	ATF_TP_ADD_TC(tp, open_refused);
	ATF_TP_ADD_TC(tp, answer);
	ATF_TP_ADD_TC(tp, data);
	ATF_TP_ADD_TC(tp, credit_close);
	ATF_TP_ADD_TC(tp, ports);
	return (atf_no_error());
}
