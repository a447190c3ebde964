/*
 * log_test: repeated lines are held back (common/log.c): past the burst
 * of one format in a second only a count, said by the next line of that
 * format; other formats, and fatal paths, are not affected.
 */
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <atf-c.h>

#include "log.h"

#define TEST_LOG	"stderr.log"

static int	 saved_stderr = -1;

static void
capture_start(void)
{
	int	 fd;

	log_init(1, LOG_DAEMON);
	fflush(stderr);
	ATF_REQUIRE((saved_stderr = dup(STDERR_FILENO)) != -1);
	ATF_REQUIRE((fd = open(TEST_LOG, O_WRONLY | O_CREAT | O_TRUNC,
	    0600)) != -1);
	ATF_REQUIRE(dup2(fd, STDERR_FILENO) != -1);
	close(fd);
}

/* Lines logged, and how many of them contain what. */
static int
capture_end(const char *what, int *matching)
{
	char	 line[4096];
	FILE	*fp;
	int	 n = 0;

	fflush(stderr);
	ATF_REQUIRE(dup2(saved_stderr, STDERR_FILENO) != -1);
	close(saved_stderr);
	ATF_REQUIRE((fp = fopen(TEST_LOG, "r")) != NULL);
	*matching = 0;
	while (fgets(line, sizeof(line), fp) != NULL) {
		n++;
		if (strstr(line, what) != NULL)
			(*matching)++;
	}
	fclose(fp);
	return (n);
}

/* Wait for the next second of the monotonic clock to begin. */
static void
next_second(void)
{
	struct timespec	 a, b;

	ATF_REQUIRE(clock_gettime(CLOCK_MONOTONIC, &a) == 0);
	do {
		usleep(10000);
		ATF_REQUIRE(clock_gettime(CLOCK_MONOTONIC, &b) == 0);
	} while (b.tv_sec == a.tv_sec);
}

static void
warn_many(int n)
{
	int	 i;

	for (i = 0; i < n; i++)
		log_warnx("client %d sent nonsense", i);
}

ATF_TC(burst);
ATF_TC_HEAD(burst, tc)
{
	atf_tc_set_md_var(tc, "descr", "100000 lines of one format in a "
	    "second are at most 20 lines, then one that says how many were "
	    "left out");
}
ATF_TC_BODY(burst, tc)
{
	int	 n, m;

	log_ratelimit(1);
	next_second();
	capture_start();
	warn_many(100000);
	next_second();
	log_warnx("client %d sent nonsense", -1);
	n = capture_end("sent nonsense", &m);
	/* The burst, the count, and the line after. */
	ATF_REQUIRE_MSG(n <= 2 * 20 + 2, "%d lines", n);
	ATF_REQUIRE_MSG(m >= 21, "%d lines of the format", m);
	capture_start();
	warn_many(1);
	n = capture_end("sent nonsense", &m);
	ATF_REQUIRE_EQ(1, m);
}

ATF_TC(count_said);
ATF_TC_HEAD(count_said, tc)
{
	atf_tc_set_md_var(tc, "descr", "the next line of a held-back format "
	    "says \"last message repeated N times\" with the right N");
}
ATF_TC_BODY(count_said, tc)
{
	int	 n, m;

	log_ratelimit(1);
	next_second();
	capture_start();
	warn_many(25);
	n = capture_end("sent nonsense", &m);
	/* Unless the second turned meanwhile: then fewer were held. */
	ATF_REQUIRE(m <= 25);
	next_second();
	capture_start();
	warn_many(1);
	n = capture_end("last message repeated", &m);
	ATF_REQUIRE_EQ(1, m);
	ATF_REQUIRE_EQ(2, n);
}

ATF_TC(other_formats);
ATF_TC_HEAD(other_formats, tc)
{
	atf_tc_set_md_var(tc, "descr", "one format flooding does not hold "
	    "back another; without log_ratelimit() nothing is held back");
}
ATF_TC_BODY(other_formats, tc)
{
	int	 m;

	log_ratelimit(1);
	next_second();
	capture_start();
	warn_many(1000);
	log_warnx("%s", "another thing entirely");
	capture_end("another thing entirely", &m);
	ATF_REQUIRE_EQ(1, m);

	log_ratelimit(0);
	capture_start();
	warn_many(1000);
	capture_end("sent nonsense", &m);
	ATF_REQUIRE_EQ(1000, m);
}

ATF_TC(keep);
ATF_TC_HEAD(keep, tc)
{
	atf_tc_set_md_var(tc, "descr", "log_keep: the warnings while it is "
	    "set, in order, bounded, and nothing else (fencectl reload's "
	    "reason)");
}
ATF_TC_BODY(keep, tc)
{
	char	 kept[64], small[8];
	int	 n;

	capture_start();
	log_warnx("before %d", 1);
	log_keep(kept, sizeof(kept));
	log_info("an info line");
	log_warnx("first %s", "error");
	errno = ENOENT;
	log_warn("second");
	log_keep(NULL, 0);
	log_warnx("after");
	ATF_CHECK_STREQ(kept, "first error; second: No such file or "
	    "directory");
	/* What does not fit is left out, the buffer stays terminated. */
	log_keep(small, sizeof(small));
	log_warnx("a much longer line than fits");
	log_warnx("more");
	log_keep(NULL, 0);
	ATF_CHECK_STREQ(small, "a much ");
	/* Everything still went to the log. */
	ATF_CHECK_EQ(capture_end("", &n), 7);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, burst);
	ATF_TP_ADD_TC(tp, count_said);
	ATF_TP_ADD_TC(tp, other_formats);
	ATF_TP_ADD_TC(tp, keep);
	return (atf_no_error());
}
