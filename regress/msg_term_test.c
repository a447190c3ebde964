/*
 * msg_term_test: the payloads of terminals and of a background
 * process's stdin (imsg/msg_term.c): round trips, and what each
 * decoder refuses: a size out of 1..1000, argv and command both, an op
 * with fields it does not take, a terminal ended yet attached or
 * running with an exit, an unprintable program, input over 64 KiB or
 * with nothing in it, and every truncation of a good payload.
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

static char	*sample_argv[] = { "vim", "notes.txt", NULL };

static void
open_sample(struct msg_term_open *to)
{
	memset(to, 0, sizeof(*to));
	strlcpy(to->to_key, "web", sizeof(to->to_key));
	to->to_owner = 1000;
	memset(to->to_bearer, 7, sizeof(to->to_bearer));
	to->to_argv = sample_argv;
	to->to_argc = 2;
	strlcpy(to->to_cwd, "src", sizeof(to->to_cwd));
	to->to_cols = 120;
	to->to_rows = 40;
	to->to_idle_s = 60;
}

/* An open's fields as a peer might write them: argv of n words. */
static int
open_raw(uint64_t cols, uint64_t rows, uint64_t idle, int argv,
    const char *command)
{
	struct mp_writer w;
	struct msg_term_open to;
	uint8_t		 b[MSG_BEARER_LEN];
	void		*buf;
	size_t		 len;
	int		 r;

	memset(b, 1, sizeof(b));
	mp_write_init(&w);
	mp_write_array(&w, 9);
	mp_write_str(&w, "web", 4);
	mp_write_u64(&w, 1000);
	mp_write_bin(&w, b, sizeof(b));
	if (argv) {
		mp_write_array(&w, 1);
		mp_write_str(&w, "sh", 3);
	} else
		mp_write_array(&w, 0);
	mp_write_str(&w, command, strlen(command) + 1);
	mp_write_str(&w, "", 1);
	mp_write_u64(&w, cols);
	mp_write_u64(&w, rows);
	mp_write_u64(&w, idle);
	ATF_REQUIRE(mp_write_finish(&w, &buf, &len) == 0);
	memset(&to, 0, sizeof(to));
	r = msg_term_open_decode(buf, len, &to);
	free(buf);
	if (r == 0)
		msg_term_open_free(&to);
	return (r);
}

ATF_TC_WITHOUT_HEAD(open_roundtrip);
ATF_TC_BODY(open_roundtrip, tc)
{
	struct msg_term_open a, b;
	void		*buf;
	size_t		 len;

	open_sample(&a);
	ATF_REQUIRE_EQ(0, msg_term_open_encode(&a, &buf, &len));
	memset(&b, 0, sizeof(b));
	ATF_REQUIRE_EQ(0, msg_term_open_decode(buf, len, &b));
	ATF_CHECK_STREQ("web", b.to_key);
	ATF_CHECK_EQ(1000, b.to_owner);
	ATF_CHECK(memcmp(a.to_bearer, b.to_bearer, MSG_BEARER_LEN) == 0);
	ATF_REQUIRE_EQ(2, b.to_argc);
	ATF_CHECK_STREQ("vim", b.to_argv[0]);
	ATF_CHECK_STREQ("notes.txt", b.to_argv[1]);
	ATF_CHECK(b.to_argv[2] == NULL);
	ATF_CHECK(b.to_command == NULL);
	ATF_CHECK_STREQ("src", b.to_cwd);
	ATF_CHECK_EQ(120, b.to_cols);
	ATF_CHECK_EQ(40, b.to_rows);
	ATF_CHECK_EQ(60, b.to_idle_s);
	msg_term_open_free(&b);
	PREFIXES_REFUSED(msg_term_open_decode, buf, len, &b);
	free(buf);

	/* Neither argv nor command: the login shell. */
	a.to_argv = NULL;
	a.to_argc = 0;
	ATF_REQUIRE_EQ(0, msg_term_open_encode(&a, &buf, &len));
	ATF_REQUIRE_EQ(0, msg_term_open_decode(buf, len, &b));
	ATF_CHECK(b.to_argv == NULL && b.to_command == NULL);
	msg_term_open_free(&b);
	free(buf);
}

ATF_TC_WITHOUT_HEAD(open_refused);
ATF_TC_BODY(open_refused, tc)
{
	struct msg_term_open a;
	void		*buf;
	size_t		 len;

	ATF_CHECK_EQ(0, open_raw(80, 24, 0, 1, ""));
	ATF_CHECK_EQ(0, open_raw(1, 1, MSG_TERM_IDLE_MAX, 0, "top"));
	ATF_CHECK_EQ(0, open_raw(MSG_TERM_DIM_MAX, MSG_TERM_DIM_MAX, 0, 0,
	    ""));
	ATF_CHECK_EQ(-1, open_raw(0, 24, 0, 1, ""));
	ATF_CHECK_EQ(-1, open_raw(80, 0, 0, 1, ""));
	ATF_CHECK_EQ(-1, open_raw(MSG_TERM_DIM_MAX + 1, 24, 0, 1, ""));
	ATF_CHECK_EQ(-1, open_raw(80, 65536 + 24, 0, 1, ""));
	ATF_CHECK_EQ(-1, open_raw(80, 24, MSG_TERM_IDLE_MAX + 1, 1, ""));
	/* argv and a command: one of the two, or neither. */
	ATF_CHECK_EQ(-1, open_raw(80, 24, 0, 1, "top"));

	/* The encoder holds itself to the same. */
	open_sample(&a);
	a.to_cols = 0;
	ATF_CHECK_EQ(-1, msg_term_open_encode(&a, &buf, &len));
	open_sample(&a);
	a.to_rows = MSG_TERM_DIM_MAX + 1;
	ATF_CHECK_EQ(-1, msg_term_open_encode(&a, &buf, &len));
	open_sample(&a);
	strlcpy(a.to_key, "../x", sizeof(a.to_key));
	ATF_CHECK_EQ(-1, msg_term_open_encode(&a, &buf, &len));
}

static int
req_try(uint32_t op, uint32_t id, uint32_t cols, uint32_t rows)
{
	struct msg_term_req q, out;
	void		*buf;
	size_t		 len;
	int		 r;

	memset(&q, 0, sizeof(q));
	strlcpy(q.tq_key, "web", sizeof(q.tq_key));
	q.tq_owner = MSG_OWNER_NONE;
	q.tq_op = op;
	q.tq_id = id;
	q.tq_cols = cols;
	q.tq_rows = rows;
	if (msg_term_req_encode(&q, &buf, &len) == -1)
		return (-1);
	r = msg_term_req_decode(buf, len, &out);
	if (r == 0) {
		ATF_CHECK_EQ(op, out.tq_op);
		ATF_CHECK_EQ(id, out.tq_id);
		ATF_CHECK_EQ(cols, out.tq_cols);
		ATF_CHECK_EQ(rows, out.tq_rows);
		PREFIXES_REFUSED(msg_term_req_decode, buf, len, &out);
	}
	free(buf);
	return (r);
}

ATF_TC_WITHOUT_HEAD(requests);
ATF_TC_BODY(requests, tc)
{
	ATF_CHECK_EQ(0, req_try(MSG_TERM_LIST, 0, 0, 0));
	ATF_CHECK_EQ(0, req_try(MSG_TERM_LIST, 3, 0, 0));
	ATF_CHECK_EQ(0, req_try(MSG_TERM_RESIZE, 3, 100, 30));
	ATF_CHECK_EQ(0, req_try(MSG_TERM_KILL, 3, 0, 0));
	/* Each op with its own fields only. */
	ATF_CHECK_EQ(-1, req_try(MSG_TERM_LIST, 0, 80, 24));
	ATF_CHECK_EQ(-1, req_try(MSG_TERM_RESIZE, 0, 100, 30));
	ATF_CHECK_EQ(-1, req_try(MSG_TERM_RESIZE, 3, 0, 30));
	ATF_CHECK_EQ(-1, req_try(MSG_TERM_RESIZE, 3, 1001, 30));
	ATF_CHECK_EQ(-1, req_try(MSG_TERM_KILL, 0, 0, 0));
	ATF_CHECK_EQ(-1, req_try(MSG_TERM_KILL, 3, 1, 1));
	ATF_CHECK_EQ(-1, req_try(0, 3, 0, 0));
	ATF_CHECK_EQ(-1, req_try(MSG_TERM_KILL + 1, 3, 0, 0));
}

static void
term_sample(struct msg_term *t)
{
	memset(t, 0, sizeof(*t));
	t->t_id = 2;
	t->t_running = 1;
	t->t_cols = 80;
	t->t_rows = 24;
	t->t_age_ms = 1500;
	t->t_attached = 1;
	t->t_kept = 1234;
	t->t_idle_s = 600;
	t->t_count = 3;
	strlcpy(t->t_program, "-bash", sizeof(t->t_program));
}

ATF_TC_WITHOUT_HEAD(term);
ATF_TC_BODY(term, tc)
{
	struct msg_term	 a, b;
	void		*buf;
	size_t		 len;

	term_sample(&a);
	ATF_REQUIRE_EQ(0, msg_term_encode(&a, &buf, &len));
	ATF_REQUIRE_EQ(0, msg_term_decode(buf, len, &b));
	ATF_CHECK(memcmp(&a, &b, sizeof(a)) == 0);
	PREFIXES_REFUSED(msg_term_decode, buf, len, &b);
	free(buf);

	/* Ended: exit or signal, never attached. */
	term_sample(&a);
	a.t_running = a.t_attached = 0;
	a.t_exit = -1;
	a.t_signal = 9;
	strlcpy(a.t_why, "idle", sizeof(a.t_why));
	ATF_REQUIRE_EQ(0, msg_term_encode(&a, &buf, &len));
	ATF_REQUIRE_EQ(0, msg_term_decode(buf, len, &b));
	ATF_CHECK_STREQ("idle", b.t_why);
	free(buf);
	a.t_attached = 1;
	ATF_CHECK_EQ(-1, msg_term_encode(&a, &buf, &len));
	term_sample(&a);
	a.t_exit = 3;
	ATF_CHECK_EQ(-1, msg_term_encode(&a, &buf, &len));
	term_sample(&a);
	strlcpy(a.t_why, "killed", sizeof(a.t_why));
	ATF_CHECK_EQ(-1, msg_term_encode(&a, &buf, &len));
	term_sample(&a);
	a.t_program[1] = '\033';
	ATF_CHECK_EQ(-1, msg_term_encode(&a, &buf, &len));
	term_sample(&a);
	a.t_kept = MSG_TERM_RING + 1;
	ATF_CHECK_EQ(-1, msg_term_encode(&a, &buf, &len));
	term_sample(&a);
	a.t_count = MSG_TERM_MAX + 1;
	ATF_CHECK_EQ(-1, msg_term_encode(&a, &buf, &len));
	term_sample(&a);
	a.t_cols = 0;
	ATF_CHECK_EQ(-1, msg_term_encode(&a, &buf, &len));

	/* Its supervisor and its denials (the broker's), checked. */
	term_sample(&a);
	a.t_super = 7;
	strlcpy(a.t_denials, "seccomp\t3\tunshare(CLONE_NEWUSER)\ttier L1 "
	    "does not refuse it\nlimit\t1\tpids: x\t\n", sizeof(a.t_denials));
	a.t_denials_dropped = 2;
	ATF_REQUIRE_EQ(0, msg_term_encode(&a, &buf, &len));
	ATF_REQUIRE_EQ(0, msg_term_decode(buf, len, &b));
	ATF_CHECK(memcmp(&a, &b, sizeof(a)) == 0);
	free(buf);
	strlcpy(a.t_denials, "seccomp\t0\tx\t\n", sizeof(a.t_denials));
	ATF_CHECK_EQ(-1, msg_term_encode(&a, &buf, &len));
	strlcpy(a.t_denials, "nolayer\t1\tx\t\n", sizeof(a.t_denials));
	ATF_CHECK_EQ(-1, msg_term_encode(&a, &buf, &len));
	strlcpy(a.t_denials, "seccomp\t1\tx", sizeof(a.t_denials));
	ATF_CHECK_EQ(-1, msg_term_encode(&a, &buf, &len));
	a.t_denials[0] = '\0';
	a.t_denials_dropped = MSG_DENIALS_DROPPED_MAX + 1;
	ATF_CHECK_EQ(-1, msg_term_encode(&a, &buf, &len));
}

ATF_TC_WITHOUT_HEAD(input);
ATF_TC_BODY(input, tc)
{
	struct msg_proc_input a, b;
	static uint8_t	 big[MSG_INPUT_MAX + 1];
	void		*buf;
	size_t		 len;

	memset(&a, 0, sizeof(a));
	strlcpy(a.pi_key, "web", sizeof(a.pi_key));
	a.pi_owner = MSG_OWNER_NONE;
	a.pi_id = 4;
	a.pi_data = big;
	a.pi_len = MSG_INPUT_MAX;
	ATF_REQUIRE_EQ(0, msg_proc_input_encode(&a, &buf, &len));
	ATF_REQUIRE_EQ(0, msg_proc_input_decode(buf, len, &b));
	ATF_CHECK_EQ(4, b.pi_id);
	ATF_CHECK_EQ(MSG_INPUT_MAX, b.pi_len);
	ATF_CHECK(!b.pi_close);
	msg_proc_input_free(&b);
	free(buf);
	/* The end alone. */
	a.pi_data = NULL;
	a.pi_len = 0;
	a.pi_close = 1;
	ATF_REQUIRE_EQ(0, msg_proc_input_encode(&a, &buf, &len));
	ATF_REQUIRE_EQ(0, msg_proc_input_decode(buf, len, &b));
	ATF_CHECK(b.pi_close && b.pi_len == 0 && b.pi_data == NULL);
	msg_proc_input_free(&b);
	PREFIXES_REFUSED(msg_proc_input_decode, buf, len, &b);
	free(buf);
	/* Nothing at all, too much, no process. */
	a.pi_close = 0;
	ATF_CHECK_EQ(-1, msg_proc_input_encode(&a, &buf, &len));
	a.pi_data = big;
	a.pi_len = MSG_INPUT_MAX + 1;
	ATF_CHECK_EQ(-1, msg_proc_input_encode(&a, &buf, &len));
	a.pi_len = 1;
	a.pi_id = 0;
	ATF_CHECK_EQ(-1, msg_proc_input_encode(&a, &buf, &len));
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, open_roundtrip);
	ATF_TP_ADD_TC(tp, open_refused);
	ATF_TP_ADD_TC(tp, requests);
	ATF_TP_ADD_TC(tp, term);
	ATF_TP_ADD_TC(tp, input);
	return (atf_no_error());
}
