/*
 * names_test: common/names.c, the one spelling of every level, fence
 * state and stop reason (tiers and backends: config_test's "names").
 * Every value of each enum has its name and parses back; what is not a
 * value has none; the stop reasons are spelt as fenced.8 documents them
 * for the API, which fencectl and the logs now print too.
 */
#include <sys/types.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <atf-c.h>

#include "names.h"

ATF_TC_WITHOUT_HEAD(levels);
ATF_TC_BODY(levels, tc)
{
	static const struct {
		int		 id;
		const char	*name;
	} want[] = {
		{ LEVEL_UNMEASURED,	"unmeasured" },
		{ LEVEL_NOT_EARNED,	"not-earned" },
		{ LEVEL_L1,		"L1" },
		{ LEVEL_L15,		"L1.5" },
		{ LEVEL_L2,		"L2" },
		{ LEVEL_L3,		"L3" },
		{ LEVEL_L4,		"L4" }
	};
	size_t	 i;

	for (i = 0; i < nitems(want); i++) {
		ATF_CHECK_STREQ(level_name(want[i].id), want[i].name);
		ATF_CHECK_EQ(level_parse(want[i].name), want[i].id);
	}
	/* Whatever is not a level was not measured, and parses as none. */
	ATF_CHECK_STREQ(level_name(-1), "unmeasured");
	ATF_CHECK_STREQ(level_name(LEVEL_L4 + 1), "unmeasured");
	ATF_CHECK_STREQ(level_name(INT_MAX), "unmeasured");
	ATF_CHECK_EQ(level_parse("l1"), -1);
	ATF_CHECK_EQ(level_parse("L1.5 "), -1);
	ATF_CHECK_EQ(level_parse(""), -1);
	ATF_CHECK_EQ(level_parse(NULL), -1);
	/* A tier and the level that meets it are spelt alike. */
	ATF_CHECK_STREQ(level_name(LEVEL_L1), tier_name(TIER_L1));
	ATF_CHECK_STREQ(level_name(LEVEL_L15), tier_name(TIER_L15));
	ATF_CHECK_STREQ(level_name(LEVEL_L2), tier_name(TIER_L2));
}

ATF_TC_WITHOUT_HEAD(require_inner);
ATF_TC_BODY(require_inner, tc)
{
	static const char *const bad[] = {
		"L3+runsc", "L2+runsc", "+runsc", "runsc", "L4+", "L4+gvisor",
		"L4+runsc ", "L4+runsc+runsc", "L4 +runsc", "l4+runsc",
		"L1.5+runsc", "not-earned+runsc", "",
	};
	size_t	 i;
	int	 inner;

	ATF_CHECK_EQ(require_parse_inner("L4+runsc", &inner), LEVEL_L4);
	ATF_CHECK_EQ(inner, INNER_RUNSC);
	/* A level alone: the configured inner, as before. */
	inner = -1;
	ATF_CHECK_EQ(require_parse_inner("L4", &inner), LEVEL_L4);
	ATF_CHECK_EQ(inner, INNER_CONFIGURED);
	ATF_CHECK_EQ(require_parse_inner("L1.5", &inner), LEVEL_L15);
	ATF_CHECK_EQ(inner, INNER_CONFIGURED);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ATF_CHECK_EQ_MSG(require_parse_inner(bad[i], &inner), -1,
		    "%s", bad[i]);
}

ATF_TC_WITHOUT_HEAD(states);
ATF_TC_BODY(states, tc)
{
	ATF_CHECK_STREQ(fence_state_name(FENCE_BOOTING), "booting");
	ATF_CHECK_STREQ(fence_state_name(FENCE_RUNNING), "running");
	ATF_CHECK_STREQ(fence_state_name(FENCE_STOPPING), "stopping");
	ATF_CHECK_STREQ(fence_state_name(FENCE_STOPPED), "stopped");
	ATF_CHECK_STREQ(fence_state_name(FENCE_FAILED), "failed");
	ATF_CHECK_STREQ(fence_state_name(0), "unknown");
	ATF_CHECK_STREQ(fence_state_name(FENCE_FAILED + 1), "unknown");
	ATF_CHECK_STREQ(fence_state_name(-1), "unknown");
}

ATF_TC_WITHOUT_HEAD(stop_reasons);
ATF_TC_BODY(stop_reasons, tc)
{
	ATF_CHECK_STREQ(stop_reason_name(STOP_REQUEST), "request");
	ATF_CHECK_STREQ(stop_reason_name(STOP_DEADLINE), "deadline");
	ATF_CHECK_STREQ(stop_reason_name(STOP_CRASH), "crash");
	ATF_CHECK_STREQ(stop_reason_name(STOP_OOM), "out-of-memory");
	ATF_CHECK_STREQ(stop_reason_name(STOP_SHUTDOWN), "shutdown");
	/* No reason is no name: the API shows null, fencectl nothing. */
	ATF_CHECK(stop_reason_name(STOP_NONE) == NULL);
	ATF_CHECK(stop_reason_name(STOP_SHUTDOWN + 1) == NULL);
	ATF_CHECK(stop_reason_name(-1) == NULL);
}

ATF_TC(manual);
ATF_TC_HEAD(manual, tc)
{
	atf_tc_set_md_var(tc, "descr", "every stop reason is spelt as "
	    "fenced.8 documents the API's reason");
}
ATF_TC_BODY(manual, tc)
{
	static const int reasons[] = { STOP_REQUEST, STOP_DEADLINE,
	    STOP_CRASH, STOP_OOM, STOP_SHUTDOWN };
	char		 path[PATH_MAX], want[64], *man, *p;
	const char	*topdir;
	FILE		*fp;
	size_t		 i, n;

	if (!atf_tc_has_config_var(tc, "topdir"))
		atf_tc_skip("no topdir: run through make check");
	topdir = atf_tc_get_config_var(tc, "topdir");
	(void)snprintf(path, sizeof(path), "%s/man/fenced.8", topdir);
	ATF_REQUIRE_MSG((fp = fopen(path, "r")) != NULL, "%s", path);
	ATF_REQUIRE((man = calloc(1, 1 << 20)) != NULL);
	n = fread(man, 1, (1 << 20) - 1, fp);
	fclose(fp);
	ATF_REQUIRE(n > 0);
	for (i = 0; i < nitems(reasons); i++) {
		(void)snprintf(want, sizeof(want), "\n.Qq %s",
		    stop_reason_name(reasons[i]));
		/* The whole word: ".Qq out-of-memory ," or at a line's end. */
		for (p = strstr(man, want); p != NULL; p = strstr(p + 1, want))
			if (p[strlen(want)] == ' ' || p[strlen(want)] == '\n')
				break;
		ATF_CHECK_MSG(p != NULL, "fenced.8 has no %s",
		    stop_reason_name(reasons[i]));
	}
	free(man);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, levels);
	ATF_TP_ADD_TC(tp, require_inner);
	ATF_TP_ADD_TC(tp, states);
	ATF_TP_ADD_TC(tp, stop_reasons);
	ATF_TP_ADD_TC(tp, manual);
	return (atf_no_error());
}
