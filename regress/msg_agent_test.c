/*
 * msg_agent_test: the agent's payload codecs (imsg/msg_agent.c), round
 * trips of every message and hostile payloads built by hand.  Under
 * the sanitizer build a decoder that leaks on a refused payload fails
 * the program.
 */
#include <sys/types.h>

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include <atf-c.h>
#include <msgpack.h>

#include "fenced.h"
#include "mp.h"
#include "msg.h"

/* What an EXEC payload on the wire looks like; tests bend one field. */
struct xwire {
	size_t		 nfields;	/* 11 */
	size_t		 bearer_len;	/* 0 or MSG_BEARER_LEN */
	size_t		 argc;
	size_t		 arglen;	/* bytes of each argument */
	int		 arg_int;	/* argv[0] an integer, not a string */
	size_t		 cmdlen;	/* 0: "" */
	size_t		 cwdlen;
	size_t		 stdinlen;
	int		 nul;		/* 1 in an arg, 2 command, 3 cwd */
};

static void
xwire_default(struct xwire *xw)
{
	memset(xw, 0, sizeof(*xw));
	xw->nfields = 11;
	xw->bearer_len = MSG_BEARER_LEN;
	xw->argc = 2;
	xw->arglen = 4;
}

static void
pack_str(struct mp_writer *w, size_t len, int nul)
{
	char	*s;

	ATF_REQUIRE((s = malloc(len + 1)) != NULL);
	memset(s, 'a', len);
	if (nul && len > 1)
		s[len / 2] = '\0';
	ATF_REQUIRE(msgpack_pack_str_with_body(&w->w_pk, s, len) == 0);
	free(s);
}

static void
xwire_build(const struct xwire *xw, void **buf, size_t *len)
{
	struct mp_writer w;
	uint8_t		 bearer[64];
	uint8_t		*in;
	size_t		 i;

	memset(bearer, 0x5a, sizeof(bearer));
	mp_write_init(&w);
	mp_write_array(&w, xw->nfields);
	mp_write_str(&w, "", 1);
	mp_write_bin(&w, bearer, xw->bearer_len);
	mp_write_array(&w, xw->argc);
	for (i = 0; i < xw->argc; i++) {
		if (i == 0 && xw->arg_int)
			mp_write_u64(&w, 7);
		else
			pack_str(&w, xw->arglen, i == 0 && xw->nul == 1);
	}
	pack_str(&w, xw->cmdlen, xw->nul == 2);
	pack_str(&w, xw->cwdlen, xw->nul == 3);
	if (xw->nfields > 5)
		mp_write_u64(&w, 0);
	if (xw->nfields > 6)
		mp_write_u64(&w, 0);
	if (xw->nfields > 7) {
		ATF_REQUIRE((in = calloc(1, xw->stdinlen + 1)) != NULL);
		mp_write_bin(&w, in, xw->stdinlen);
		free(in);
	}
	if (xw->nfields > 8)
		mp_write_u64(&w, MSG_OWNER_NONE);
	if (xw->nfields > 9)
		mp_write_bool(&w, 0);		/* x_stdin_open */
	if (xw->nfields > 10)
		mp_write_bool(&w, 0);		/* x_undo */
	for (i = 11; i < xw->nfields; i++)
		mp_write_nil(&w);
	ATF_REQUIRE(mp_write_finish(&w, buf, len) == 0);
}

/* The decoder refuses it, leaves *out as it was, and leaks nothing. */
static void
xwire_refused(const struct xwire *xw)
{
	struct msg_exec	 x;
	void		*buf;
	size_t		 len;

	xwire_build(xw, &buf, &len);
	memset(&x, 0x77, sizeof(x));
	errno = 0;
	ATF_CHECK_EQ(msg_exec_decode(buf, len, &x), -1);
	ATF_CHECK_EQ(errno, EBADMSG);
	ATF_CHECK_EQ(x.x_timeout_ms, 0x77777777);
	free(buf);
}

static void
xwire_accepted(const struct xwire *xw)
{
	struct msg_exec	 x;
	void		*buf;
	size_t		 len;

	xwire_build(xw, &buf, &len);
	ATF_CHECK_EQ(msg_exec_decode(buf, len, &x), 0);
	msg_exec_free(&x);
	free(buf);
}

static void
hello_sample(struct msg_hello *h)
{
	memset(h, 0, sizeof(*h));
	memset(h->h_bearer, 0xa5, sizeof(h->h_bearer));
	h->h_bearer[0] = 0;
	strlcpy(h->h_key, "dev-1", sizeof(h->h_key));
	strlcpy(h->h_user, "alice", sizeof(h->h_user));
	strlcpy(h->h_home, "/home/alice", sizeof(h->h_home));
	h->h_timeout_def = 10000;
	h->h_timeout_max = 60000;
	h->h_output_def = 262144;
	h->h_output_max = 1048576;
}

ATF_TC_WITHOUT_HEAD(hello_roundtrip);
ATF_TC_BODY(hello_roundtrip, tc)
{
	struct msg_hello h, o;
	void		*buf;
	size_t		 len;

	hello_sample(&h);
	ATF_REQUIRE(msg_hello_encode(&h, &buf, &len) == 0);
	ATF_REQUIRE(msg_hello_decode(buf, len, &o) == 0);
	ATF_CHECK(memcmp(&h, &o, sizeof(h)) == 0);
	/* Cut anywhere, it is refused. */
	for (size_t n = 0; n < len; n++)
		ATF_CHECK_EQ(msg_hello_decode(buf, n, &o), -1);
	free(buf);
}

ATF_TC_WITHOUT_HEAD(hello_invalid);
ATF_TC_BODY(hello_invalid, tc)
{
	struct msg_hello h;
	void		*buf;
	size_t		 len;

	hello_sample(&h);
	memset(h.h_bearer, 0, sizeof(h.h_bearer));
	ATF_CHECK_EQ(msg_hello_encode(&h, &buf, &len), -1);
	hello_sample(&h);
	strlcpy(h.h_key, "Bad", sizeof(h.h_key));
	ATF_CHECK_EQ(msg_hello_encode(&h, &buf, &len), -1);
	hello_sample(&h);
	strlcpy(h.h_home, "home/alice", sizeof(h.h_home));
	ATF_CHECK_EQ(msg_hello_encode(&h, &buf, &len), -1);
	hello_sample(&h);
	strlcpy(h.h_user, "", sizeof(h.h_user));
	ATF_CHECK_EQ(msg_hello_encode(&h, &buf, &len), -1);
	hello_sample(&h);
	h.h_timeout_def = 60001;
	ATF_CHECK_EQ(msg_hello_encode(&h, &buf, &len), -1);
	hello_sample(&h);
	h.h_output_max = EXEC_OUTPUT_MAX + 1;
	ATF_CHECK_EQ(msg_hello_encode(&h, &buf, &len), -1);
}

/* A HELLO whose bearer is len bytes. */
static int
hello_bearer_decode(size_t blen)
{
	struct mp_writer w;
	struct msg_hello h;
	uint8_t		 b[64];
	void		*buf;
	size_t		 len;
	int		 r;

	memset(b, 1, sizeof(b));
	mp_write_init(&w);
	mp_write_array(&w, 10);
	mp_write_bin(&w, b, blen);
	mp_write_str(&w, "dev", 4);
	mp_write_str(&w, "alice", 6);
	mp_write_str(&w, "/home/alice", 12);
	mp_write_u64(&w, 10000);
	mp_write_u64(&w, 60000);
	mp_write_u64(&w, 262144);
	mp_write_u64(&w, 1048576);
	mp_write_bool(&w, 0);		/* h_egress */
	mp_write_bool(&w, 1);		/* h_fdpass */
	ATF_REQUIRE(mp_write_finish(&w, &buf, &len) == 0);
	r = msg_hello_decode(buf, len, &h);
	free(buf);
	return (r);
}

ATF_TC_WITHOUT_HEAD(bearer_length);
ATF_TC_BODY(bearer_length, tc)
{
	struct xwire	 xw;

	ATF_CHECK_EQ(hello_bearer_decode(MSG_BEARER_LEN), 0);
	ATF_CHECK_EQ(hello_bearer_decode(0), -1);	/* hello needs one */
	ATF_CHECK_EQ(hello_bearer_decode(16), -1);
	ATF_CHECK_EQ(hello_bearer_decode(MSG_BEARER_LEN - 1), -1);
	ATF_CHECK_EQ(hello_bearer_decode(MSG_BEARER_LEN + 1), -1);
	xwire_default(&xw);
	xw.bearer_len = 0;		/* a request without one */
	xwire_accepted(&xw);
	xw.bearer_len = 1;
	xwire_refused(&xw);
	xw.bearer_len = MSG_BEARER_LEN - 1;
	xwire_refused(&xw);
	xw.bearer_len = MSG_BEARER_LEN + 1;
	xwire_refused(&xw);
}

ATF_TC_WITHOUT_HEAD(exec_roundtrip_argv);
ATF_TC_BODY(exec_roundtrip_argv, tc)
{
	char		*argv[] = { "ls", "-l", "", "héllo", NULL };
	struct msg_exec	 x, o;
	uint8_t		 in[] = { 0, 1, 2, 0xff, 0 };
	void		*buf;
	size_t		 len, i;

	memset(&x, 0, sizeof(x));
	memset(x.x_bearer, 0x42, sizeof(x.x_bearer));
	x.x_argv = argv;
	x.x_argc = 4;
	strlcpy(x.x_cwd, "src/..", sizeof(x.x_cwd));
	x.x_timeout_ms = 500;
	x.x_max_bytes = 2048;
	x.x_stdin = in;
	x.x_stdin_len = sizeof(in);
	ATF_REQUIRE(msg_exec_encode(&x, &buf, &len) == 0);
	ATF_REQUIRE(msg_exec_decode(buf, len, &o) == 0);
	ATF_CHECK(memcmp(o.x_bearer, x.x_bearer, MSG_BEARER_LEN) == 0);
	ATF_REQUIRE_EQ(o.x_argc, 4);
	for (i = 0; i < 4; i++)
		ATF_CHECK_STREQ(o.x_argv[i], argv[i]);
	ATF_CHECK(o.x_argv[4] == NULL);
	ATF_CHECK(o.x_command == NULL);
	ATF_CHECK_STREQ(o.x_cwd, "src/..");
	ATF_CHECK_EQ(o.x_timeout_ms, 500);
	ATF_CHECK_EQ(o.x_max_bytes, 2048);
	ATF_REQUIRE_EQ(o.x_stdin_len, sizeof(in));
	ATF_CHECK(memcmp(o.x_stdin, in, sizeof(in)) == 0);
	msg_exec_free(&o);
	ATF_CHECK(o.x_argv == NULL && o.x_stdin == NULL);
	free(buf);
}

ATF_TC_WITHOUT_HEAD(exec_roundtrip_command);
ATF_TC_BODY(exec_roundtrip_command, tc)
{
	struct msg_exec	 x, o;
	void		*buf;
	size_t		 len;

	memset(&x, 0, sizeof(x));
	strlcpy(x.x_key, "dev-1", sizeof(x.x_key));
	x.x_command = "echo hi; exit 3";
	/* Out-of-range limits pass the codec: the agent answers them. */
	x.x_timeout_ms = 70000;
	x.x_max_bytes = 1;
	ATF_REQUIRE(msg_exec_encode(&x, &buf, &len) == 0);
	ATF_REQUIRE(msg_exec_decode(buf, len, &o) == 0);
	ATF_CHECK_STREQ(o.x_key, "dev-1");
	ATF_CHECK_STREQ(o.x_command, x.x_command);
	ATF_CHECK(o.x_argv == NULL && o.x_argc == 0);
	ATF_CHECK(o.x_stdin == NULL && o.x_stdin_len == 0);
	ATF_CHECK_EQ(o.x_timeout_ms, 70000);
	ATF_CHECK_EQ(o.x_max_bytes, 1);
	for (size_t i = 0; i < MSG_BEARER_LEN; i++)
		ATF_CHECK_EQ(o.x_bearer[i], 0);
	msg_exec_free(&o);
	free(buf);
}

ATF_TC_WITHOUT_HEAD(exec_encode_refuses);
ATF_TC_BODY(exec_encode_refuses, tc)
{
	char		*argv[] = { "true", NULL }, *empty[] = { "", NULL };
	struct msg_exec	 x;
	void		*buf;
	size_t		 len;

	memset(&x, 0, sizeof(x));
	ATF_CHECK_EQ(msg_exec_encode(&x, &buf, &len), -1);	/* neither */
	x.x_argv = argv;
	x.x_argc = 1;
	x.x_command = "true";
	ATF_CHECK_EQ(msg_exec_encode(&x, &buf, &len), -1);	/* both */
	x.x_command = NULL;
	x.x_argv = empty;
	ATF_CHECK_EQ(msg_exec_encode(&x, &buf, &len), -1);
	x.x_argv = argv;
	x.x_stdin_len = 3;					/* no bytes */
	ATF_CHECK_EQ(msg_exec_encode(&x, &buf, &len), -1);
	x.x_stdin_len = 0;
	strlcpy(x.x_key, "-bad", sizeof(x.x_key));
	ATF_CHECK_EQ(msg_exec_encode(&x, &buf, &len), -1);
}

ATF_TC_WITHOUT_HEAD(exec_malformed);
ATF_TC_BODY(exec_malformed, tc)
{
	struct xwire	 xw;

	xwire_default(&xw);
	xwire_accepted(&xw);
	xw.nfields = 10;
	xwire_refused(&xw);
	xw.nfields = 12;
	xwire_refused(&xw);

	xwire_default(&xw);
	xw.argc = MSG_ARGV_MAX;
	xwire_accepted(&xw);
	xw.argc = MSG_ARGV_MAX + 1;		/* too many arguments */
	xwire_refused(&xw);

	xwire_default(&xw);
	xw.arglen = MSG_ARG_MAX;
	xwire_accepted(&xw);
	xw.arglen = MSG_ARG_MAX + 1;		/* one argument too long */
	xwire_refused(&xw);
	xwire_default(&xw);
	xw.arglen = 0;				/* argv[0] empty */
	xwire_refused(&xw);
	xwire_default(&xw);
	xw.arg_int = 1;
	xwire_refused(&xw);
	xwire_default(&xw);
	xw.nul = 1;
	xwire_refused(&xw);

	xwire_default(&xw);
	xw.argc = 0;				/* neither */
	xwire_refused(&xw);
	xw.cmdlen = MSG_COMMAND_MAX;
	xwire_accepted(&xw);
	xw.cmdlen = MSG_COMMAND_MAX + 1;	/* command too long */
	xwire_refused(&xw);
	xw.cmdlen = 10;
	xw.nul = 2;
	xwire_refused(&xw);
	xw.nul = 3;
	xw.cwdlen = 10;
	xwire_refused(&xw);
	xw.nul = 0;
	xw.cwdlen = PATH_MAX;			/* no room for the NUL */
	xwire_refused(&xw);
	xw.cwdlen = 0;
	xw.argc = 1;				/* both */
	xwire_refused(&xw);

	xwire_default(&xw);
	xw.stdinlen = MSG_STDIN_MAX;
	xwire_accepted(&xw);
	xw.stdinlen = MSG_STDIN_MAX + 1;	/* stdin too big */
	xwire_refused(&xw);
}

static void
result_sample(struct msg_result *rs, uint8_t *out, size_t outlen)
{
	memset(rs, 0, sizeof(*rs));
	rs->rs_exit = 3;
	rs->rs_stdout = out;
	rs->rs_stdout_len = outlen;
	rs->rs_stderr = (uint8_t *)"oops\n";
	rs->rs_stderr_len = 5;
	rs->rs_duration_ms = 1234;
}

ATF_TC_WITHOUT_HEAD(result_roundtrip);
ATF_TC_BODY(result_roundtrip, tc)
{
	struct msg_result rs, o;
	uint8_t		 out[256];
	void		*buf;
	size_t		 len, i;

	for (i = 0; i < sizeof(out); i++)
		out[i] = (uint8_t)i;		/* NULs and all */
	result_sample(&rs, out, sizeof(out));
	ATF_REQUIRE(msg_result_encode(&rs, &buf, &len) == 0);
	ATF_REQUIRE(msg_result_decode(buf, len, &o) == 0);
	ATF_CHECK_EQ(o.rs_exit, 3);
	ATF_CHECK_EQ(o.rs_signal, 0);
	ATF_REQUIRE_EQ(o.rs_stdout_len, sizeof(out));
	ATF_CHECK(memcmp(o.rs_stdout, out, sizeof(out)) == 0);
	ATF_REQUIRE_EQ(o.rs_stderr_len, 5);
	ATF_CHECK(memcmp(o.rs_stderr, "oops\n", 5) == 0);
	ATF_CHECK_EQ(o.rs_duration_ms, 1234);
	ATF_CHECK_EQ(o.rs_truncated, 0);
	msg_result_free(&o);
	free(buf);

	result_sample(&rs, NULL, 0);
	strlcpy(rs.rs_error, "exec-timeout", sizeof(rs.rs_error));
	strlcpy(rs.rs_message, "slow", sizeof(rs.rs_message));
	rs.rs_exit = -1;
	rs.rs_signal = 9;
	rs.rs_truncated = 1;
	ATF_REQUIRE(msg_result_encode(&rs, &buf, &len) == 0);
	ATF_REQUIRE(msg_result_decode(buf, len, &o) == 0);
	ATF_CHECK_STREQ(o.rs_error, "exec-timeout");
	ATF_CHECK_STREQ(o.rs_message, "slow");
	ATF_CHECK(o.rs_exit == -1 && o.rs_signal == 9 && o.rs_truncated);
	ATF_CHECK(o.rs_stdout == NULL && o.rs_stdout_len == 0);
	for (i = 0; i < len; i++)
		ATF_CHECK_EQ(msg_result_decode(buf, i, &o), -1);
	msg_result_free(&o);
	free(buf);
}

ATF_TC_WITHOUT_HEAD(result_invalid);
ATF_TC_BODY(result_invalid, tc)
{
	struct msg_result rs;
	uint8_t		*big;
	void		*buf;
	size_t		 len;

	ATF_REQUIRE((big = calloc(1, EXEC_OUTPUT_MAX + 1)) != NULL);
	result_sample(&rs, big, EXEC_OUTPUT_MAX);
	rs.rs_stderr_len = 0;
	ATF_CHECK_EQ(msg_result_encode(&rs, &buf, &len), 0);
	free(buf);
	rs.rs_stderr_len = 1;			/* over, both together */
	ATF_CHECK_EQ(msg_result_encode(&rs, &buf, &len), -1);
	result_sample(&rs, big, EXEC_OUTPUT_MAX + 1);
	rs.rs_stderr_len = 0;
	ATF_CHECK_EQ(msg_result_encode(&rs, &buf, &len), -1);
	free(big);
	result_sample(&rs, NULL, 0);
	rs.rs_signal = 9;			/* signal with an exit code */
	ATF_CHECK_EQ(msg_result_encode(&rs, &buf, &len), -1);
	rs.rs_exit = -1;
	rs.rs_signal = 0;
	ATF_CHECK_EQ(msg_result_encode(&rs, &buf, &len), -1);
	rs.rs_exit = 256;
	ATF_CHECK_EQ(msg_result_encode(&rs, &buf, &len), -1);
	rs.rs_exit = 0;
	strlcpy(rs.rs_error, "Exec Timeout", sizeof(rs.rs_error));
	ATF_CHECK_EQ(msg_result_encode(&rs, &buf, &len), -1);
}

/* What a RESULT has after its output: no supervisor, no denials. */
static void
result_tail(struct mp_writer *w)
{
	mp_write_u64(w, 0);
	mp_write_str(w, "", MSG_DENIALS_TEXT_MAX);
	mp_write_u64(w, 0);
	mp_write_str(w, "", MSG_DENIAL_NOTE_LEN);
}

/*
 * Denials in a result: lines of "LAYER\tCOUNT\tWHAT\tREMEDY", checked
 * whole, both ways; a result with a bad line is refused.
 */
ATF_TC_WITHOUT_HEAD(result_denials);
ATF_TC_BODY(result_denials, tc)
{
	struct msg_denial_line dl[MSG_DENIALS_MAX];
	struct msg_result rs, o;
	char		 many[MSG_DENIALS_TEXT_MAX], one[64];
	void		*buf;
	size_t		 len, i;
	const char	*bad[] = {
		"seccomp\t1\tunshare()\t",		/* no newline */
		"seccomp\t0\tunshare()\t\n",	/* count 0 */
		"seccomp\t01\tunshare()\t\n",	/* leading zero */
		"seccomp\t-1\tunshare()\t\n",
		"seccomp\t4294967296\tunshare()\t\n",
		"kernel\t1\tunshare()\t\n",	/* no such layer */
		"seccomp\t1\t\t\n",		/* nothing refused */
		"seccomp\t1\tun\x01share()\t\n",
		"seccomp\t1\tunshare()\ttab\there\n",
		"seccomp\t1\tunshare()\n",		/* no remedy field */
		"\n",
	};

	result_sample(&rs, NULL, 0);
	rs.rs_super = 42;
	rs.rs_denials = (char *)"seccomp\t3\tunshare(CLONE_NEWUSER)\t"
	    "tier L1 does not refuse it\negress\t1\texample.com:443\t\n";
	rs.rs_denials_dropped = 7;
	strlcpy(rs.rs_denials_note, "not observed", sizeof(rs.rs_denials_note));
	ATF_REQUIRE(msg_result_encode(&rs, &buf, &len) == 0);
	ATF_REQUIRE(msg_result_decode(buf, len, &o) == 0);
	free(buf);
	ATF_CHECK_EQ(o.rs_super, 42);
	ATF_CHECK_EQ(o.rs_denials_dropped, 7);
	ATF_CHECK_STREQ(o.rs_denials_note, "not observed");
	ATF_REQUIRE(o.rs_denials != NULL);
	ATF_REQUIRE_EQ(msg_denials_parse(o.rs_denials, dl, nitems(dl)), 2);
	ATF_CHECK_EQ(dl[0].dl_layer, DENIAL_SECCOMP);
	ATF_CHECK_EQ(dl[0].dl_count, 3);
	ATF_CHECK_STREQ(dl[0].dl_what, "unshare(CLONE_NEWUSER)");
	ATF_CHECK_STREQ(dl[0].dl_remedy, "tier L1 does not refuse it");
	ATF_CHECK_EQ(dl[1].dl_layer, DENIAL_EGRESS);
	ATF_CHECK_STREQ(dl[1].dl_remedy, "");
	ATF_REQUIRE(msg_denial_line_format(&dl[0], one, sizeof(one)) == 0);
	ATF_CHECK_STREQ(one, "seccomp\t3\tunshare(CLONE_NEWUSER)\t"
	    "tier L1 does not refuse it\n");
	msg_result_free(&o);

	for (i = 0; i < nitems(bad); i++) {
		rs.rs_denials = (char *)bad[i];
		ATF_CHECK_MSG(msg_denials_parse(bad[i], NULL, 0) == -1,
		    "line %zu", i);
		ATF_CHECK_MSG(msg_result_encode(&rs, &buf, &len) == -1,
		    "line %zu", i);
	}
	/* MSG_DENIALS_MAX lines, not one more. */
	many[0] = '\0';
	for (i = 0; i < MSG_DENIALS_MAX; i++)
		strlcat(many, "limit\t1\tpids\t\n", sizeof(many));
	ATF_CHECK_EQ(msg_denials_parse(many, NULL, 0), MSG_DENIALS_MAX);
	strlcat(many, "limit\t1\tpids\t\n", sizeof(many));
	ATF_CHECK_EQ(msg_denials_parse(many, NULL, 0), -1);
	rs.rs_denials = NULL;
	rs.rs_denials_note[0] = '\n';
	ATF_CHECK_EQ(msg_result_encode(&rs, &buf, &len), -1);
}

/* The fencer's datagram: a fence, a layer, what, and a pid chain. */
ATF_TC_WITHOUT_HEAD(denial_codec);
ATF_TC_BODY(denial_codec, tc)
{
	struct msg_denial dn, o;
	uint32_t	 pids[MSG_DENIAL_CHAIN_MAX];
	char		 chain[MSG_DENIAL_CHAIN_LEN];
	void		*buf;
	size_t		 len, i;
	const char	*bad[] = { " 1", "1 ", "1  2", "0", "a", "1 -2",
			    "4194305", "012345678" };

	memset(&dn, 0, sizeof(dn));
	dn.dn_owner = 1000;
	strlcpy(dn.dn_key, "k", sizeof(dn.dn_key));
	dn.dn_boot = 4321;
	dn.dn_layer = DENIAL_SECCOMP;
	dn.dn_count = 1;
	strlcpy(dn.dn_what, "keyctl(operation 1)", sizeof(dn.dn_what));
	strlcpy(dn.dn_chain, "7 5 2 1", sizeof(dn.dn_chain));
	ATF_REQUIRE(msg_denial_encode(&dn, &buf, &len) == 0);
	ATF_REQUIRE(msg_denial_decode(buf, len, &o) == 0);
	ATF_CHECK(memcmp(&dn, &o, sizeof(dn)) == 0);
	for (i = 0; i < len; i++)
		ATF_CHECK_EQ(msg_denial_decode(buf, i, &o), -1);
	free(buf);
	ATF_REQUIRE_EQ(msg_denial_chain(dn.dn_chain, pids, nitems(pids)), 4);
	ATF_CHECK(pids[0] == 7 && pids[1] == 5 && pids[2] == 2 &&
	    pids[3] == 1);
	ATF_CHECK_EQ(msg_denial_chain("", pids, nitems(pids)), 0);
	for (i = 0; i < nitems(bad); i++)
		ATF_CHECK_MSG(msg_denial_chain(bad[i], NULL, 0) == -1,
		    "chain \"%s\"", bad[i]);
	/* At most MSG_DENIAL_CHAIN_MAX pids. */
	chain[0] = '\0';
	for (i = 0; i < MSG_DENIAL_CHAIN_MAX; i++)
		strlcat(chain, i ? " 9" : "9", sizeof(chain));
	ATF_CHECK_EQ(msg_denial_chain(chain, NULL, 0), MSG_DENIAL_CHAIN_MAX);
	strlcat(chain, " 9", sizeof(chain));
	ATF_CHECK_EQ(msg_denial_chain(chain, NULL, 0), -1);

	o = dn;
	o.dn_layer = DENIAL_LAYER_MAX;
	ATF_CHECK_EQ(msg_denial_encode(&o, &buf, &len), -1);
	o = dn;
	o.dn_count = 0;
	ATF_CHECK_EQ(msg_denial_encode(&o, &buf, &len), -1);
	o = dn;
	o.dn_what[0] = '\0';
	ATF_CHECK_EQ(msg_denial_encode(&o, &buf, &len), -1);
	o = dn;
	strlcpy(o.dn_remedy, "a\tb", sizeof(o.dn_remedy));
	ATF_CHECK_EQ(msg_denial_encode(&o, &buf, &len), -1);
	o = dn;
	o.dn_boot = 0;
	ATF_CHECK_EQ(msg_denial_encode(&o, &buf, &len), -1);
	o = dn;
	strlcpy(o.dn_key, "../x", sizeof(o.dn_key));
	ATF_CHECK_EQ(msg_denial_encode(&o, &buf, &len), -1);
}

/* A RESULT whose stdout claims len bytes and has them. */
ATF_TC_WITHOUT_HEAD(result_malformed);
ATF_TC_BODY(result_malformed, tc)
{
	struct mp_writer w;
	struct msg_result o;
	uint8_t		*big;
	void		*buf;
	size_t		 len;

	ATF_REQUIRE((big = calloc(1, EXEC_OUTPUT_MAX + 1)) != NULL);
	mp_write_init(&w);
	mp_write_array(&w, 12);
	mp_write_str(&w, "", 1);
	mp_write_str(&w, "", 1);
	mp_write_i64(&w, 0);
	mp_write_i64(&w, 0);
	mp_write_bin(&w, big, EXEC_OUTPUT_MAX + 1);
	mp_write_bin(&w, NULL, 0);
	mp_write_u64(&w, 1);
	mp_write_bool(&w, 0);
	result_tail(&w);
	ATF_REQUIRE(mp_write_finish(&w, &buf, &len) == 0);
	ATF_CHECK_EQ(msg_result_decode(buf, len, &o), -1);
	free(buf);
	/* Both within the cap alone, over it together: the first is freed. */
	mp_write_init(&w);
	mp_write_array(&w, 12);
	mp_write_str(&w, "", 1);
	mp_write_str(&w, "", 1);
	mp_write_i64(&w, 0);
	mp_write_i64(&w, 0);
	mp_write_bin(&w, big, EXEC_OUTPUT_MAX / 2 + 1);
	mp_write_bin(&w, big, EXEC_OUTPUT_MAX / 2 + 1);
	mp_write_u64(&w, 1);
	mp_write_bool(&w, 0);
	result_tail(&w);
	ATF_REQUIRE(mp_write_finish(&w, &buf, &len) == 0);
	ATF_CHECK_EQ(msg_result_decode(buf, len, &o), -1);
	free(buf);
	free(big);
}

ATF_TC_WITHOUT_HEAD(gitconfig_roundtrip);
ATF_TC_BODY(gitconfig_roundtrip, tc)
{
	struct msg_gitconfig g, o;
	void		*buf;
	size_t		 len;

	memset(&g, 0, sizeof(g));
	memset(g.g_bearer, 9, sizeof(g.g_bearer));
	g.g_set_name = 1;
	strlcpy(g.g_name, "Zoë Example", sizeof(g.g_name));
	strlcpy(g.g_email, "zoe@example.org", sizeof(g.g_email));
	ATF_REQUIRE(msg_gitconfig_encode(&g, &buf, &len) == 0);
	ATF_REQUIRE(msg_gitconfig_decode(buf, len, &o) == 0);
	ATF_CHECK(memcmp(&g, &o, sizeof(g)) == 0);
	free(buf);
	memset(g.g_name, 'x', MSG_GIT_VALUE_MAX);
	g.g_name[MSG_GIT_VALUE_MAX] = '\0';
	ATF_REQUIRE(msg_gitconfig_encode(&g, &buf, &len) == 0);
	ATF_REQUIRE(msg_gitconfig_decode(buf, len, &o) == 0);
	ATF_CHECK_EQ(strlen(o.g_name), MSG_GIT_VALUE_MAX);
	free(buf);
	g.g_set_email = 2;
	ATF_CHECK_EQ(msg_gitconfig_encode(&g, &buf, &len), -1);
}

ATF_TC_WITHOUT_HEAD(gitconfig_malformed);
ATF_TC_BODY(gitconfig_malformed, tc)
{
	struct mp_writer w;
	struct msg_gitconfig o;
	uint8_t		 b[MSG_BEARER_LEN + 1];
	void		*buf;
	size_t		 len, blen, vlen;
	int		 i;

	memset(b, 3, sizeof(b));
	for (i = 0; i < 3; i++) {
		blen = i == 1 ? 5 : MSG_BEARER_LEN;
		vlen = i == 2 ? MSG_GIT_VALUE_MAX + 1 : 3;
		mp_write_init(&w);
		mp_write_array(&w, 7);
		mp_write_str(&w, "", 1);
		mp_write_bin(&w, b, blen);
		mp_write_bool(&w, 1);
		mp_write_bool(&w, 0);
		pack_str(&w, vlen, 0);
		mp_write_str(&w, "", 1);
		mp_write_u64(&w, MSG_OWNER_NONE);
		ATF_REQUIRE(mp_write_finish(&w, &buf, &len) == 0);
		ATF_CHECK_EQ(msg_gitconfig_decode(buf, len, &o), i == 0 ? 0 : -1);
		free(buf);
	}
}

ATF_TC_WITHOUT_HEAD(gitinit_roundtrip);
ATF_TC_BODY(gitinit_roundtrip, tc)
{
	struct msg_gitinit gi, o;
	void		*buf;
	size_t		 len;

	memset(&gi, 0, sizeof(gi));
	memset(gi.gi_bearer, 1, sizeof(gi.gi_bearer));
	strlcpy(gi.gi_path, "projects/new", sizeof(gi.gi_path));
	ATF_REQUIRE(msg_gitinit_encode(&gi, &buf, &len) == 0);
	ATF_REQUIRE(msg_gitinit_decode(buf, len, &o) == 0);
	ATF_CHECK(memcmp(&gi, &o, sizeof(gi)) == 0);
	/* One field short. */
	ATF_CHECK_EQ(msg_gitinit_decode("\x91\xc4\x00", 3, &o), -1);
	free(buf);
	memset(gi.gi_path, 'p', sizeof(gi.gi_path));
	ATF_CHECK_EQ(msg_gitinit_encode(&gi, &buf, &len), -1);
}

ATF_TC_WITHOUT_HEAD(proc_req_roundtrip);
ATF_TC_BODY(proc_req_roundtrip, tc)
{
	struct msg_proc_req q, o;
	void		*buf;
	size_t		 len, i;

	memset(&q, 0, sizeof(q));
	strlcpy(q.q_key, "web", sizeof(q.q_key));
	q.q_owner = MSG_OWNER_NONE;
	memset(q.q_bearer, 0x5a, sizeof(q.q_bearer));
	q.q_op = MSG_PROC_READ;
	q.q_id = 7;
	q.q_off[0] = 10;
	q.q_off[1] = EXEC_OUTPUT_MAX;
	ATF_REQUIRE(msg_proc_req_encode(&q, &buf, &len) == 0);
	ATF_REQUIRE(msg_proc_req_decode(buf, len, &o) == 0);
	ATF_CHECK_STREQ(o.q_key, "web");
	ATF_CHECK(o.q_op == MSG_PROC_READ && o.q_id == 7 &&
	    o.q_off[0] == 10 && o.q_off[1] == EXEC_OUTPUT_MAX);
	ATF_CHECK(memcmp(o.q_bearer, q.q_bearer, sizeof(q.q_bearer)) == 0);
	for (i = 0; i < len; i++)
		ATF_CHECK_EQ(msg_proc_req_decode(buf, i, &o), -1);
	free(buf);

	/* Refused: a signal not passed on, a read with a signal, id 0. */
	q.q_op = MSG_PROC_SIGNAL;
	q.q_signal = SIGSTOP;
	ATF_CHECK_EQ(msg_proc_req_encode(&q, &buf, &len), -1);
	q.q_signal = SIGTERM;
	ATF_REQUIRE(msg_proc_req_encode(&q, &buf, &len) == 0);
	free(buf);
	q.q_op = MSG_PROC_READ;
	ATF_CHECK_EQ(msg_proc_req_encode(&q, &buf, &len), -1);
	q.q_signal = 0;
	q.q_id = 0;
	ATF_CHECK_EQ(msg_proc_req_encode(&q, &buf, &len), -1);
	q.q_op = MSG_PROC_LIST;
	ATF_REQUIRE(msg_proc_req_encode(&q, &buf, &len) == 0);
	free(buf);
	q.q_op = 4;
	ATF_CHECK_EQ(msg_proc_req_encode(&q, &buf, &len), -1);
}

ATF_TC_WITHOUT_HEAD(proc_roundtrip);
ATF_TC_BODY(proc_roundtrip, tc)
{
	struct msg_proc	 p, o;
	char		*argv[] = { "sleep", "30", NULL };
	uint8_t		 out[16] = "0123456789abcdef";
	void		*buf;
	size_t		 len, i;

	memset(&p, 0, sizeof(p));
	p.p_id = 3;
	p.p_running = 1;
	p.p_count = 2;
	p.p_argv = argv;
	p.p_argc = 2;
	p.p_max_bytes = 1024;
	p.p_kept[0] = 16;
	p.p_off[0] = 4;
	p.p_stdout = out + 4;
	p.p_stdout_len = 12;
	ATF_REQUIRE(msg_proc_encode(&p, &buf, &len) == 0);
	ATF_REQUIRE(msg_proc_decode(buf, len, &o) == 0);
	ATF_CHECK(o.p_id == 3 && o.p_running && o.p_count == 2);
	ATF_REQUIRE(o.p_argc == 2 && o.p_command == NULL);
	ATF_CHECK_STREQ(o.p_argv[1], "30");
	ATF_REQUIRE_EQ(o.p_stdout_len, 12);
	ATF_CHECK(memcmp(o.p_stdout, "456789abcdef", 12) == 0);
	msg_proc_free(&o);
	for (i = 0; i < len; i++)
		ATF_CHECK_EQ(msg_proc_decode(buf, i, &o), -1);
	free(buf);

	/* What does not hold together is refused. */
	p.p_stdout_len = 11;			/* not kept less offset */
	ATF_CHECK_EQ(msg_proc_encode(&p, &buf, &len), -1);
	p.p_stdout_len = 12;
	p.p_kept[1] = 1009;			/* over maxBytes together */
	ATF_CHECK_EQ(msg_proc_encode(&p, &buf, &len), -1);
	p.p_kept[1] = 0;
	p.p_exit = 1;				/* running, with an exit */
	ATF_CHECK_EQ(msg_proc_encode(&p, &buf, &len), -1);
	p.p_running = 0;
	p.p_signal = 9;				/* a signal and an exit */
	ATF_CHECK_EQ(msg_proc_encode(&p, &buf, &len), -1);
	p.p_exit = -1;
	ATF_REQUIRE(msg_proc_encode(&p, &buf, &len) == 0);
	free(buf);
	p.p_command = "sleep 30";		/* argv and command */
	ATF_CHECK_EQ(msg_proc_encode(&p, &buf, &len), -1);
	p.p_argv = NULL;
	p.p_argc = 0;
	ATF_REQUIRE(msg_proc_encode(&p, &buf, &len) == 0);
	free(buf);
	p.p_id = 0;
	ATF_CHECK_EQ(msg_proc_encode(&p, &buf, &len), -1);
}

/* CHUNK: one stream, 1..MSG_CHUNK_MAX bytes, exact. */
ATF_TC_WITHOUT_HEAD(chunk_codec);
ATF_TC_BODY(chunk_codec, tc)
{
	static uint8_t	 data[MSG_CHUNK_MAX + 1];
	struct msg_chunk ch, o;
	void		*buf;
	size_t		 len;

	memset(data, 0xff, sizeof(data));
	ch.ch_stream = MSG_CHUNK_STDERR;
	ch.ch_data = data;
	ch.ch_len = MSG_CHUNK_MAX;
	ATF_REQUIRE(msg_chunk_encode(&ch, &buf, &len) == 0);
	ATF_REQUIRE(msg_chunk_decode(buf, len, &o) == 0);
	ATF_CHECK_EQ(o.ch_stream, MSG_CHUNK_STDERR);
	ATF_CHECK_EQ(o.ch_len, MSG_CHUNK_MAX);
	ATF_CHECK(memcmp(o.ch_data, data, MSG_CHUNK_MAX) == 0);
	msg_chunk_free(&o);
	/* Cut short anywhere: refused. */
	ATF_CHECK_EQ(msg_chunk_decode(buf, len - 1, &o), -1);
	free(buf);
	ch.ch_len = MSG_CHUNK_MAX + 1;
	ATF_CHECK_EQ(msg_chunk_encode(&ch, &buf, &len), -1);
	ch.ch_len = 0;
	ATF_CHECK_EQ(msg_chunk_encode(&ch, &buf, &len), -1);
	ch.ch_len = 1;
	ch.ch_stream = 3;
	ATF_CHECK_EQ(msg_chunk_encode(&ch, &buf, &len), -1);
	/* [3, bin 1] and [1, bin 0] on the wire. */
	ATF_CHECK_EQ(msg_chunk_decode("\x92\x03\xc4\x01x", 5, &o), -1);
	ATF_CHECK_EQ(msg_chunk_decode("\x92\x01\xc4\x00", 4, &o), -1);
	ATF_CHECK_EQ(msg_chunk_decode("\x92\x01\xc4\x01x", 5, &o), 0);
	msg_chunk_free(&o);
}

/* CREDIT: at most the window. */
ATF_TC_WITHOUT_HEAD(credit_codec);
ATF_TC_BODY(credit_codec, tc)
{
	struct msg_credit cr, o;
	void		*buf;
	size_t		 len;

	memset(&cr, 0, sizeof(cr));
	memset(cr.cr_bearer, 7, sizeof(cr.cr_bearer));
	cr.cr_bytes = MSG_STREAM_WINDOW;
	ATF_REQUIRE(msg_credit_encode(&cr, &buf, &len) == 0);
	ATF_REQUIRE(msg_credit_decode(buf, len, &o) == 0);
	ATF_CHECK(memcmp(&cr, &o, sizeof(cr)) == 0);
	free(buf);
	cr.cr_bytes = MSG_STREAM_WINDOW + 1;
	ATF_CHECK_EQ(msg_credit_encode(&cr, &buf, &len), -1);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, chunk_codec);
	ATF_TP_ADD_TC(tp, credit_codec);
	ATF_TP_ADD_TC(tp, hello_roundtrip);
	ATF_TP_ADD_TC(tp, hello_invalid);
	ATF_TP_ADD_TC(tp, bearer_length);
	ATF_TP_ADD_TC(tp, exec_roundtrip_argv);
	ATF_TP_ADD_TC(tp, exec_roundtrip_command);
	ATF_TP_ADD_TC(tp, exec_encode_refuses);
	ATF_TP_ADD_TC(tp, exec_malformed);
	ATF_TP_ADD_TC(tp, result_roundtrip);
	ATF_TP_ADD_TC(tp, result_invalid);
	ATF_TP_ADD_TC(tp, result_malformed);
	ATF_TP_ADD_TC(tp, result_denials);
	ATF_TP_ADD_TC(tp, denial_codec);
	ATF_TP_ADD_TC(tp, gitconfig_roundtrip);
	ATF_TP_ADD_TC(tp, gitconfig_malformed);
	ATF_TP_ADD_TC(tp, gitinit_roundtrip);
	ATF_TP_ADD_TC(tp, proc_req_roundtrip);
	ATF_TP_ADD_TC(tp, proc_roundtrip);
	return (atf_no_error());
}
