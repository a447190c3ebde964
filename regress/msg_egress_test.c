/*
 * msg_egress_test: what the broker and the egress proxy say to each
 * other (imsg/msg_egress.c) and a fence's egress in its state
 * (msg_fence.c): round trips, and what each decoder refuses.  A
 * decision carries what a hostile fence asked for, so its strings are
 * held to printable ASCII whoever encodes it; every truncation of a
 * good payload is refused.
 */
#include <sys/types.h>

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <atf-c.h>

#include "fenced.h"
#include "msg.h"

static void
fence_sample(struct msg_egress_fence *f)
{
	memset(f, 0, sizeof(*f));
	f->ef_id = 7;
	f->ef_owner = 1000;
	strlcpy(f->ef_key, "web", sizeof(f->ef_key));
	strlcpy(f->ef_list[0], "api.openai.com:443", sizeof(f->ef_list[0]));
	strlcpy(f->ef_list[1], "*.googleapis.com:443", sizeof(f->ef_list[1]));
	f->ef_nlist = 2;
}

static void
decision_sample(struct msg_egress_decision *d)
{
	memset(d, 0, sizeof(*d));
	d->ed_id = 7;
	d->ed_allowed = 1;
	strlcpy(d->ed_name, "api.openai.com", sizeof(d->ed_name));
	d->ed_port = 443;
	strlcpy(d->ed_method, "CONNECT", sizeof(d->ed_method));
	strlcpy(d->ed_reason, "closed", sizeof(d->ed_reason));
	strlcpy(d->ed_address, "2001:db8::1", sizeof(d->ed_address));
	d->ed_up = UINT64_MAX;
	d->ed_down = 1;
	d->ed_ms = UINT32_MAX;
}

/* Every proper prefix of buf fails to decode. */
#define PREFIXES_REFUSED(fn, buf, len, out) do {			\
	size_t	 _n;							\
	for (_n = 0; _n < (len); _n++)					\
		ATF_CHECK_MSG(fn((buf), _n, (out)) == -1,		\
		    "a prefix of %zu bytes decoded", _n);		\
} while (0)

ATF_TC_WITHOUT_HEAD(fence_roundtrip);
ATF_TC_BODY(fence_roundtrip, tc)
{
	struct msg_egress_fence a, b;
	void		*buf;
	size_t		 len;

	fence_sample(&a);
	ATF_REQUIRE_EQ(0, msg_egress_fence_encode(&a, &buf, &len));
	memset(&b, 0xff, sizeof(b));
	ATF_REQUIRE_EQ(0, msg_egress_fence_decode(buf, len, &b));
	ATF_CHECK_EQ(7, b.ef_id);
	ATF_CHECK_EQ(2, b.ef_nlist);
	ATF_CHECK_STREQ("*.googleapis.com:443", b.ef_list[1]);
	ATF_CHECK_STREQ("web", b.ef_key);
	PREFIXES_REFUSED(msg_egress_fence_decode, buf, len, &b);
	free(buf);

	/* The id alone: FORGET and CONN. */
	memset(&a, 0, sizeof(a));
	a.ef_id = UINT32_MAX;
	ATF_REQUIRE_EQ(0, msg_egress_fence_encode(&a, &buf, &len));
	ATF_REQUIRE_EQ(0, msg_egress_fence_decode(buf, len, &b));
	ATF_CHECK_EQ(UINT32_MAX, b.ef_id);
	ATF_CHECK_EQ(0, b.ef_nlist);
	free(buf);
}

ATF_TC_WITHOUT_HEAD(fence_refused);
ATF_TC_BODY(fence_refused, tc)
{
	static const char *bad[] = { "API.openai.com:443", "1.2.3.4:443",
	    "a.test", "a.test:0", "*.com:443", "a..test:1", " a.test:1" };
	struct msg_egress_fence f;
	void		*buf;
	size_t		 len, i;

	fence_sample(&f);
	f.ef_id = 0;
	ATF_CHECK(msg_egress_fence_encode(&f, &buf, &len) == -1);
	fence_sample(&f);
	strlcpy(f.ef_key, "no/slash", sizeof(f.ef_key));
	ATF_CHECK(msg_egress_fence_encode(&f, &buf, &len) == -1);
	fence_sample(&f);
	f.ef_nlist = EGRESS_LIST_MAX + 1;
	ATF_CHECK(msg_egress_fence_encode(&f, &buf, &len) == -1);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		fence_sample(&f);
		strlcpy(f.ef_list[1], bad[i], sizeof(f.ef_list[1]));
		ATF_CHECK_MSG(msg_egress_fence_encode(&f, &buf, &len) == -1,
		    "entry \"%s\" encoded", bad[i]);
	}
}

ATF_TC_WITHOUT_HEAD(decision_roundtrip);
ATF_TC_BODY(decision_roundtrip, tc)
{
	struct msg_egress_decision a, b;
	void		*buf;
	size_t		 len;

	decision_sample(&a);
	ATF_REQUIRE_EQ(0, msg_egress_decision_encode(&a, &buf, &len));
	memset(&b, 0xff, sizeof(b));
	ATF_REQUIRE_EQ(0, msg_egress_decision_decode(buf, len, &b));
	ATF_CHECK(memcmp(&a, &b, sizeof(a)) == 0);
	PREFIXES_REFUSED(msg_egress_decision_decode, buf, len, &b);
	free(buf);

	/* A refusal of a request that did not parse: nothing but why. */
	memset(&a, 0, sizeof(a));
	a.ed_id = 1;
	strlcpy(a.ed_reason, "bad-request", sizeof(a.ed_reason));
	ATF_REQUIRE_EQ(0, msg_egress_decision_encode(&a, &buf, &len));
	ATF_REQUIRE_EQ(0, msg_egress_decision_decode(buf, len, &b));
	ATF_CHECK_STREQ("", b.ed_name);
	ATF_CHECK_STREQ("bad-request", b.ed_reason);
	free(buf);
}

ATF_TC_WITHOUT_HEAD(decision_refused);
ATF_TC_BODY(decision_refused, tc)
{
	struct msg_egress_decision d;
	void		*buf;
	size_t		 len;

	decision_sample(&d);
	d.ed_id = 0;
	ATF_CHECK(msg_egress_decision_encode(&d, &buf, &len) == -1);
	decision_sample(&d);
	d.ed_allowed = 2;
	ATF_CHECK(msg_egress_decision_encode(&d, &buf, &len) == -1);
	/* What the fence asked for, with a terminal's escape in it. */
	decision_sample(&d);
	strlcpy(d.ed_name, "a\033[2Jb", sizeof(d.ed_name));
	ATF_CHECK(msg_egress_decision_encode(&d, &buf, &len) == -1);
	decision_sample(&d);
	strlcpy(d.ed_name, "a b", sizeof(d.ed_name));
	ATF_CHECK(msg_egress_decision_encode(&d, &buf, &len) == -1);
	decision_sample(&d);
	strlcpy(d.ed_method, "connect", sizeof(d.ed_method));
	ATF_CHECK(msg_egress_decision_encode(&d, &buf, &len) == -1);
	decision_sample(&d);
	d.ed_reason[0] = '\0';
	ATF_CHECK(msg_egress_decision_encode(&d, &buf, &len) == -1);
	decision_sample(&d);
	strlcpy(d.ed_reason, "Not-Listed", sizeof(d.ed_reason));
	ATF_CHECK(msg_egress_decision_encode(&d, &buf, &len) == -1);
	decision_sample(&d);
	strlcpy(d.ed_address, "256.1.1.1", sizeof(d.ed_address));
	ATF_CHECK(msg_egress_decision_encode(&d, &buf, &len) == -1);
	decision_sample(&d);
	memset(d.ed_name, 'a', sizeof(d.ed_name));
	ATF_CHECK(msg_egress_decision_encode(&d, &buf, &len) == -1);
}

static void
state_sample(struct msg_fence *f)
{
	memset(f, 0, sizeof(*f));
	strlcpy(f->f_key, "web", sizeof(f->f_key));
	f->f_owner = 1000;
	f->f_uid = 100000;
	f->f_tier = TIER_L2;
	f->f_backend = BACKEND_NATIVE;
	f->f_state = FENCE_RUNNING;
	f->f_reason = STOP_NONE;
	strlcpy(f->f_egress[0], "api.openai.com:443", sizeof(f->f_egress[0]));
	f->f_negress = 1;
	f->f_egress_n.en_allowed = 3;
	f->f_egress_n.en_refused = UINT64_MAX;
	f->f_egress_n.en_open = 2;
	f->f_egress_n.en_up = 10;
	f->f_egress_n.en_down = 20;
}

ATF_TC_WITHOUT_HEAD(fence_state);
ATF_TC_BODY(fence_state, tc)
{
	struct msg_fence a, b;
	void		*buf;
	size_t		 len;

	state_sample(&a);
	ATF_REQUIRE_EQ(0, msg_fence_encode(&a, &buf, &len));
	memset(&b, 0xff, sizeof(b));
	ATF_REQUIRE_EQ(0, msg_fence_decode(buf, len, &b));
	ATF_CHECK_EQ(1, b.f_negress);
	ATF_CHECK_STREQ("api.openai.com:443", b.f_egress[0]);
	ATF_CHECK_EQ(UINT64_MAX, b.f_egress_n.en_refused);
	ATF_CHECK_EQ(2, b.f_egress_n.en_open);
	ATF_CHECK_EQ(20, b.f_egress_n.en_down);
	free(buf);

	/* A list is L2's alone, and canonical. */
	state_sample(&a);
	a.f_tier = TIER_L15;
	ATF_CHECK(msg_fence_encode(&a, &buf, &len) == -1);
	state_sample(&a);
	strlcpy(a.f_egress[0], "10.0.0.1:443", sizeof(a.f_egress[0]));
	ATF_CHECK(msg_fence_encode(&a, &buf, &len) == -1);
	state_sample(&a);
	a.f_negress = EGRESS_LIST_MAX + 1;
	ATF_CHECK(msg_fence_encode(&a, &buf, &len) == -1);

	/* The surface line of its verdict: kept, printable only. */
	state_sample(&a);
	strlcpy(a.f_surface, "passes, the host's kernel: io_uring userns",
	    sizeof(a.f_surface));
	ATF_REQUIRE_EQ(0, msg_fence_encode(&a, &buf, &len));
	ATF_REQUIRE_EQ(0, msg_fence_decode(buf, len, &b));
	ATF_CHECK_STREQ(b.f_surface, a.f_surface);
	free(buf);
	a.f_surface[6] = '\n';
	ATF_CHECK(msg_fence_encode(&a, &buf, &len) == -1);
}

/* The owner's name: kept, a plain name of at most 32 bytes, or "". */
ATF_TC_WITHOUT_HEAD(fence_owner_name);
ATF_TC_BODY(fence_owner_name, tc)
{
	static const char *const bad[] = {
		"a b", "<b>x</b>", "a&b", "a\"b", "a'b", "a`b", "a\\b",
		"caf\xc3\xa9", "a\tb", "a\x7f"
	};
	struct msg_fence a, b;
	void		*buf;
	size_t		 len, i;

	state_sample(&a);
	strlcpy(a.f_owner_name, "alice.b-c_d$", sizeof(a.f_owner_name));
	ATF_REQUIRE_EQ(0, msg_fence_encode(&a, &buf, &len));
	memset(&b, 0xff, sizeof(b));
	ATF_REQUIRE_EQ(0, msg_fence_decode(buf, len, &b));
	ATF_CHECK_STREQ("alice.b-c_d$", b.f_owner_name);
	/* The last field: a state cut short of it is refused. */
	ATF_CHECK(msg_fence_decode(buf, len - 1, &b) == -1);
	free(buf);

	/* None: "" passes. */
	state_sample(&a);
	ATF_REQUIRE_EQ(0, msg_fence_encode(&a, &buf, &len));
	ATF_REQUIRE_EQ(0, msg_fence_decode(buf, len, &b));
	ATF_CHECK_STREQ("", b.f_owner_name);
	free(buf);

	/* 32 bytes pass, 33 do not fit. */
	memset(a.f_owner_name, 'n', MSG_OWNER_NAME_MAX);
	a.f_owner_name[MSG_OWNER_NAME_MAX] = '\0';
	ATF_REQUIRE_EQ(0, msg_fence_encode(&a, &buf, &len));
	free(buf);
	ATF_CHECK_EQ(0, msg_owner_name_valid("nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn",
	    0));
	ATF_CHECK_EQ(0, msg_owner_name_valid("", 0));
	ATF_CHECK_EQ(1, msg_owner_name_valid("", 1));

	for (i = 0; i < nitems(bad); i++) {
		state_sample(&a);
		strlcpy(a.f_owner_name, bad[i], sizeof(a.f_owner_name));
		ATF_CHECK_MSG(msg_fence_encode(&a, &buf, &len) == -1,
		    "%s was encoded", bad[i]);
		ATF_CHECK_EQ(0, msg_owner_name_valid(bad[i], 0));
	}
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, fence_roundtrip);
	ATF_TP_ADD_TC(tp, fence_refused);
	ATF_TP_ADD_TC(tp, decision_roundtrip);
	ATF_TP_ADD_TC(tp, decision_refused);
	ATF_TP_ADD_TC(tp, fence_state);
	ATF_TP_ADD_TC(tp, fence_owner_name);
	return (atf_no_error());
}
