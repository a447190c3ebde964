/*
 * Unit tests of the audit log's two halves: the codec the parent reads
 * the broker's events with (imsg/msg_audit.c), which refuses every
 * forged field, and the parent's writer (parent/audit.c), which turns
 * hostile text into one escaped ASCII line, rotates, and counts what a
 * full disk lost instead of failing.  Each test works in its own
 * directory.
 */
#include <sys/types.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <atf-c.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "fenced.h"
#include "log.h"
#include "msg.h"
#include "parent.h"

/* A valid command's event, its texts marked for patching. */
static void
event_sample(struct msg_audit *a)
{
	memset(a, 0, sizeof(*a));
	a->au_kind = AUDIT_EXEC;
	a->au_via = AUDIT_VIA_HTTP;
	a->au_uid = 1000;
	strlcpy(a->au_token, "laptop", sizeof(a->au_token));
	strlcpy(a->au_key, "work", sizeof(a->au_key));
	a->au_owner = 1000;
	strlcpy(a->au_outcome, "okokok", sizeof(a->au_outcome));
	strlcpy(a->au_cwd, "CWDMARK", sizeof(a->au_cwd));
	a->au_nargs = 2;
	strlcpy(a->au_argv[0], "ls", sizeof(a->au_argv[0]));
	strlcpy(a->au_argv[1], "ARGMARK", sizeof(a->au_argv[1]));
}

/*
 * The encoded sample with the bytes of mark replaced by with (as long):
 * what a broker that lies could send past its own encoder.
 */
static void
forged(const char *mark, const char *with, void **buf, size_t *len)
{
	struct msg_audit a;
	char		*p;

	event_sample(&a);
	ATF_REQUIRE_EQ(0, msg_audit_encode(&a, buf, len));
	ATF_REQUIRE(strlen(mark) == strlen(with));
	p = memmem(*buf, *len, mark, strlen(mark));
	ATF_REQUIRE_MSG(p != NULL, "%s not in the payload", mark);
	memcpy(p, with, strlen(with));
}

ATF_TC(codec);
ATF_TC_HEAD(codec, tc)
{
	atf_tc_set_md_var(tc, "descr", "an event round-trips; a forged one "
	    "(a control byte in an outcome, an upper-case or empty word, "
	    "bytes that are not UTF-8, a bad token name or key, a kind or "
	    "front end out of range, a terminal's action or a token's name "
	    "that is not one) is refused by both ends");
}
ATF_TC_BODY(codec, tc)
{
	struct msg_audit_read r, s;
	struct msg_audit_line l, m;
	struct msg_audit a, b;
	void		*buf;
	size_t		 len;
	static const char *const bad[][2] = {
		{ "okokok", "ok\nok{" },	/* a newline in a word */
		{ "okokok", "OKokok" },
		{ "okokok", "ok ok " },
		{ "ARGMARK", "ARG\xff\xfeRK" },	/* not UTF-8 */
		{ "CWDMARK", "CWD\xc0\x80RK" },	/* an overlong NUL */
		{ "laptop", "lap\ntp" },
		{ "work", "w/rk" },
	};
	size_t		 i;

	event_sample(&a);
	ATF_REQUIRE_EQ(0, msg_audit_encode(&a, &buf, &len));
	memset(&b, 0xa5, sizeof(b));
	ATF_REQUIRE_EQ(0, msg_audit_decode(buf, len, &b));
	ATF_REQUIRE(memcmp(&a, &b, sizeof(a)) == 0);
	free(buf);
	/* A control byte is any byte of a text, escaped by the parent. */
	strlcpy(a.au_argv[1], "a\nb\x1b[31m\"}", sizeof(a.au_argv[1]));
	ATF_REQUIRE_EQ(0, msg_audit_encode(&a, &buf, &len));
	ATF_REQUIRE_EQ(0, msg_audit_decode(buf, len, &b));
	ATF_REQUIRE_STREQ(b.au_argv[1], "a\nb\x1b[31m\"}");
	free(buf);

	for (i = 0; i < nitems(bad); i++) {
		forged(bad[i][0], bad[i][1], &buf, &len);
		ATF_REQUIRE_EQ_MSG(-1, msg_audit_decode(buf, len, &b),
		    "case %zu", i);
		ATF_REQUIRE_EQ(EBADMSG, errno);
		free(buf);
	}
	for (i = 0; i < 10; i++) {
		event_sample(&a);
		switch (i) {
		case 0: a.au_kind = 0; break;
		case 1: a.au_kind = AUDIT_KIND_MAX + 1; break;
		case 2: a.au_via = 0; break;
		case 3: a.au_uid = (uid_t)-1; break;
		case 4: a.au_via = AUDIT_VIA_CONTROL; break;	/* a token */
		case 5: a.au_outcome[0] = '\0'; break;
		case 6: a.au_kind = AUDIT_TERM;
			strlcpy(a.au_what, "opened", sizeof(a.au_what));
			a.au_nargs = 0; break;
		case 7: a.au_kind = AUDIT_TOKEN; a.au_key[0] = '\0';
			strlcpy(a.au_what, "create", sizeof(a.au_what));
			strlcpy(a.au_text, "-x", sizeof(a.au_text));
			a.au_nargs = 0; break;
		case 8: a.au_kind = AUDIT_BOOT; break;	/* arguments */
		case 9: a.au_key[0] = '\0'; break;	/* a command of none */
		}
		ATF_REQUIRE_EQ_MSG(-1, msg_audit_encode(&a, &buf, &len),
		    "case %zu", i);
		ATF_REQUIRE_EQ(EINVAL, errno);
	}
	/* show audit's: the count in bounds, a line printable ASCII. */
	memset(&r, 0, sizeof(r));
	r.ar_uid = 1000;
	r.ar_count = AUDIT_SHOW_MAX;
	ATF_REQUIRE_EQ(0, msg_audit_read_encode(&r, &buf, &len));
	ATF_REQUIRE_EQ(0, msg_audit_read_decode(buf, len, &s));
	ATF_REQUIRE(memcmp(&r, &s, sizeof(r)) == 0);
	free(buf);
	r.ar_count = AUDIT_SHOW_MAX + 1;
	if (msg_audit_read_encode(&r, &buf, &len) == 0) {
		ATF_REQUIRE_EQ(-1, msg_audit_read_decode(buf, len, &s));
		free(buf);
	}
	l.al_line = "{\"kind\":\"boot\"}";
	ATF_REQUIRE_EQ(0, msg_audit_line_encode(&l, &buf, &len));
	ATF_REQUIRE_EQ(0, msg_audit_line_decode(buf, len, &m));
	ATF_REQUIRE_STREQ(l.al_line, m.al_line);
	msg_audit_line_free(&m);
	free(buf);
	l.al_line = "{\"kind\":\"boot\"}\n{";
	ATF_REQUIRE_EQ(-1, msg_audit_line_encode(&l, &buf, &len));
	l.al_line = "{\"kind\":\"boot\"}\x7f{";
	ATF_REQUIRE_EQ(-1, msg_audit_line_encode(&l, &buf, &len));

	/* Truncated payloads: every proper prefix. */
	event_sample(&a);
	ATF_REQUIRE_EQ(0, msg_audit_encode(&a, &buf, &len));
	for (i = 0; i < len; i++)
		ATF_REQUIRE_EQ_MSG(-1, msg_audit_decode(buf, i, &b),
		    "prefix %zu", i);
	free(buf);
}

/* line is one line: ASCII, no control byte but its final newline. */
static void
line_clean(const char *line)
{
	size_t		 i, n = strlen(line);

	ATF_REQUIRE(n > 1 && line[n - 1] == '\n');
	for (i = 0; i + 1 < n; i++)
		ATF_REQUIRE_MSG((unsigned char)line[i] >= 0x20 &&
		    (unsigned char)line[i] <= 0x7e, "byte %#x at %zu",
		    (unsigned char)line[i], i);
}

ATF_TC(hostile_line);
ATF_TC_HEAD(hostile_line, tc)
{
	atf_tc_set_md_var(tc, "descr", "every text field full of control "
	    "bytes, quotes, backslashes, DEL, U+2028 and a forged "
	    "\"}\\n{\"kind\":\"boot\" makes one ASCII line that reads back "
	    "as the same strings, the time RFC 3339 UTC with milliseconds");
}
ATF_TC_BODY(hostile_line, tc)
{
	struct msg_audit a, b;
	struct timespec	 ts = { 1796608984, 567000000 };
	json_t		*o, *argv;
	json_error_t	 err;
	char		 nasty[AUDIT_ARG_SIZE], *line;
	void		*buf;
	size_t		 i;
	size_t		 len;

	/* Bytes 1..0x7f, then the line separator and the forgery. */
	for (i = 0; i < 127; i++)
		nasty[i] = (char)(i + 1);
	nasty[127] = '\0';
	strlcat(nasty, "\xe2\x80\xa8\"}\n{\"kind\":\"boot\"\\", sizeof(nasty));
	event_sample(&a);
	a.au_nargs = 1000;
	for (i = 0; i < AUDIT_ARGS_MAX; i++)
		strlcpy(a.au_argv[i], nasty, sizeof(a.au_argv[i]));
	strlcpy(a.au_cwd, nasty, sizeof(a.au_cwd));
	strlcpy(a.au_outcome, "exec-timeout", sizeof(a.au_outcome));
	/* As the parent has it: through the codec. */
	ATF_REQUIRE_EQ(0, msg_audit_encode(&a, &buf, &len));
	ATF_REQUIRE_EQ(0, msg_audit_decode(buf, len, &b));
	free(buf);
	ATF_REQUIRE((line = audit_line(&b, &ts)) != NULL);
	line_clean(line);
	ATF_REQUIRE(strncmp(line, "{\"time\":\"2026-12-07T02:03:04.567Z\","
	    "\"kind\":\"exec\",", 46) == 0);
	ATF_REQUIRE((o = json_loads(line, 0, &err)) != NULL);
	ATF_REQUIRE_EQ(1000, json_integer_value(json_object_get(o, "uid")));
	ATF_REQUIRE_STREQ("laptop",
	    json_string_value(json_object_get(o, "token")));
	ATF_REQUIRE_STREQ("exec-timeout",
	    json_string_value(json_object_get(o, "outcome")));
	ATF_REQUIRE_EQ(1000, json_integer_value(json_object_get(o, "argc")));
	ATF_REQUIRE(json_is_true(json_object_get(o, "truncated")));
	argv = json_object_get(o, "argv");
	ATF_REQUIRE_EQ(AUDIT_ARGS_MAX, json_array_size(argv));
	for (i = 0; i < AUDIT_ARGS_MAX; i++)
		ATF_REQUIRE_STREQ(nasty,
		    json_string_value(json_array_get(argv, i)));
	ATF_REQUIRE_STREQ(nasty, json_string_value(json_object_get(o, "cwd")));
	json_decref(o);
	free(line);

	/* A command line instead, the same bytes. */
	a.au_nargs = 0;
	strlcpy(a.au_text, nasty, sizeof(a.au_text));
	ATF_REQUIRE((line = audit_line(&a, &ts)) != NULL);
	line_clean(line);
	ATF_REQUIRE((o = json_loads(line, 0, &err)) != NULL);
	ATF_REQUIRE_STREQ(nasty,
	    json_string_value(json_object_get(o, "command")));
	ATF_REQUIRE(json_object_get(o, "argv") == NULL);
	json_decref(o);
	free(line);
}

/* The configuration of a log in this test's directory. */
static void
conf_here(struct fenced_config *c, const char *dir, uint64_t size,
    uint32_t keep)
{
	char	 cwd[PATH_MAX];

	memset(c, 0, sizeof(*c));
	ATF_REQUIRE(getcwd(cwd, sizeof(cwd)) != NULL);
	ATF_REQUIRE((size_t)snprintf(c->c_audit_log, sizeof(c->c_audit_log),
	    "%s/%s/audit.log", cwd, dir) < sizeof(c->c_audit_log));
	c->c_audit_size = size;
	c->c_audit_keep = keep;
}

/* The lines of path, each whole and clean; their count. */
static size_t
lines_of(const char *path)
{
	char	 line[16384];
	FILE	*fp;
	size_t	 n = 0;

	ATF_REQUIRE_MSG((fp = fopen(path, "r")) != NULL, "%s", path);
	while (fgets(line, sizeof(line), fp) != NULL) {
		line_clean(line);
		n++;
	}
	fclose(fp);
	return (n);
}

ATF_TC(rotate);
ATF_TC_HEAD(rotate, tc)
{
	atf_tc_set_md_var(tc, "descr", "past its size the log is renamed to "
	    ".1, .1 to .2, and no more than keep are kept; keep 0 keeps "
	    "none; each file 0600 and of whole lines");
}
ATF_TC_BODY(rotate, tc)
{
	struct fenced_config c;
	struct msg_audit a;
	struct stat	 st;
	size_t		 i, total = 0;

	log_init(1, LOG_DAEMON);
	ATF_REQUIRE(mkdir("log", 0700) == 0);
	conf_here(&c, "log", 4096, 2);
	ATF_REQUIRE_EQ(0, audit_open(&c));
	event_sample(&a);
	for (i = 0; i < 200; i++)
		audit_write(&a);
	audit_close();
	ATF_REQUIRE(stat("log/audit.log.3", &st) == -1 && errno == ENOENT);
	total += lines_of("log/audit.log");
	total += lines_of("log/audit.log.1");
	total += lines_of("log/audit.log.2");
	/* The last two files are full: about 4096 bytes each. */
	ATF_REQUIRE(stat("log/audit.log.1", &st) == 0);
	ATF_REQUIRE(st.st_size <= 4096 && st.st_size > 3500);
	ATF_REQUIRE_EQ(0600, st.st_mode & 07777);
	ATF_REQUIRE(total < 200 && total > 30);

	ATF_REQUIRE(mkdir("none", 0700) == 0);
	conf_here(&c, "none", 4096, 0);
	ATF_REQUIRE_EQ(0, audit_open(&c));
	for (i = 0; i < 100; i++)
		audit_write(&a);
	audit_close();
	ATF_REQUIRE(stat("none/audit.log.1", &st) == -1 && errno == ENOENT);
	ATF_REQUIRE(lines_of("none/audit.log") > 0);
}

ATF_TC(unsafe);
ATF_TC_HEAD(unsafe, tc)
{
	atf_tc_set_md_var(tc, "descr", "a log whose folder others may write, "
	    "a log that is a symbolic link, a hard link or a folder, and a "
	    "relative path are refused");
}
ATF_TC_BODY(unsafe, tc)
{
	struct fenced_config c;

	log_init(1, LOG_DAEMON);
	ATF_REQUIRE(mkdir("open", 0700) == 0);
	ATF_REQUIRE(chmod("open", 0777) == 0);
	conf_here(&c, "open", 4096, 1);
	ATF_REQUIRE_EQ(-1, audit_open(&c));

	ATF_REQUIRE(mkdir("link", 0700) == 0);
	ATF_REQUIRE(symlink("/etc/passwd", "link/audit.log") == 0);
	conf_here(&c, "link", 4096, 1);
	ATF_REQUIRE_EQ(-1, audit_open(&c));

	ATF_REQUIRE(mkdir("hard", 0700) == 0);
	ATF_REQUIRE(close(open("hard/other", O_CREAT | O_WRONLY, 0600)) == 0);
	ATF_REQUIRE(link("hard/other", "hard/audit.log") == 0);
	conf_here(&c, "hard", 4096, 1);
	ATF_REQUIRE_EQ(-1, audit_open(&c));

	ATF_REQUIRE(mkdir("dir", 0700) == 0);
	ATF_REQUIRE(mkdir("dir/audit.log", 0700) == 0);
	conf_here(&c, "dir", 4096, 1);
	ATF_REQUIRE_EQ(-1, audit_open(&c));

	memset(&c, 0, sizeof(c));
	strlcpy(c.c_audit_log, "relative/audit.log", sizeof(c.c_audit_log));
	ATF_REQUIRE_EQ(-1, audit_open(&c));
	/* None: nothing opened, nothing written, no failure. */
	c.c_audit_log[0] = '\0';
	ATF_REQUIRE_EQ(0, audit_open(&c));
	audit_close();
}

ATF_TC(disk_full);
ATF_TC_HEAD(disk_full, tc)
{
	atf_tc_set_md_var(tc, "descr", "writes that fail (the file size "
	    "limit standing in for a full disk) drop lines and never fail "
	    "the writer; once writing works again one \"dropped\" line "
	    "says how many were lost, then the events go on");
}
ATF_TC_BODY(disk_full, tc)
{
	struct fenced_config c;
	struct msg_audit a;
	struct rlimit	 rl, full;
	struct stat	 st;
	char		 line[16384];
	json_t		*o;
	json_error_t	 err;
	FILE		*fp;
	size_t		 i;

	log_init(1, LOG_DAEMON);
	signal(SIGXFSZ, SIG_IGN);
	ATF_REQUIRE(mkdir("log", 0700) == 0);
	conf_here(&c, "log", 1 << 20, 1);
	ATF_REQUIRE_EQ(0, audit_open(&c));
	event_sample(&a);
	audit_write(&a);
	ATF_REQUIRE(stat("log/audit.log", &st) == 0);
	ATF_REQUIRE(getrlimit(RLIMIT_FSIZE, &rl) == 0);
	full = rl;
	full.rlim_cur = (rlim_t)st.st_size;
	ATF_REQUIRE(setrlimit(RLIMIT_FSIZE, &full) == 0);
	for (i = 0; i < 5; i++)
		audit_write(&a);
	ATF_REQUIRE(setrlimit(RLIMIT_FSIZE, &rl) == 0);
	audit_write(&a);
	audit_close();

	ATF_REQUIRE((fp = fopen("log/audit.log", "r")) != NULL);
	ATF_REQUIRE(fgets(line, sizeof(line), fp) != NULL);
	ATF_REQUIRE(strstr(line, "\"kind\":\"exec\"") != NULL);
	ATF_REQUIRE(fgets(line, sizeof(line), fp) != NULL);
	line_clean(line);
	ATF_REQUIRE((o = json_loads(line, 0, &err)) != NULL);
	ATF_REQUIRE_STREQ("dropped",
	    json_string_value(json_object_get(o, "kind")));
	ATF_REQUIRE_EQ(5, json_integer_value(json_object_get(o, "count")));
	ATF_REQUIRE_STREQ("write", json_string_value(json_object_get(o, "why")));
	json_decref(o);
	ATF_REQUIRE(fgets(line, sizeof(line), fp) != NULL);
	ATF_REQUIRE(strstr(line, "\"kind\":\"exec\"") != NULL);
	ATF_REQUIRE(fgets(line, sizeof(line), fp) == NULL);
	fclose(fp);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, codec);
	ATF_TP_ADD_TC(tp, hostile_line);
	ATF_TP_ADD_TC(tp, rotate);
	ATF_TP_ADD_TC(tp, unsafe);
	ATF_TP_ADD_TC(tp, disk_full);
	return (atf_no_error());
}
