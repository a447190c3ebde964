/*
 * cgroup_test: common/cg_daemon.c pointed at fake trees (a fake
 * /proc/self with its cgroup and mountinfo, a cgroup file system made of
 * plain directories and files in the test's work directory): where each
 * controller's fences go on a hybrid machine (v1 controllers, a v2
 * mount without them: this one) and on a unified v2 hierarchy, that on
 * v2 the daemon moves into a leaf of its own and still places fences
 * under the cgroup it started in, that the fencer hands memory, pids
 * and cpu down from that cgroup to its folder in one write each, and
 * that a v2 cgroup lacking a controller is refused, naming it.  The real
 * kernel's side (the no-internal-processes rule, memory.max read back)
 * is the guest's: docs/fence.md, "cgroups".  And what a fence's
 * cgroups counted, as the metrics read it.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include <atf-c.h>

#include "fenced.h"
#include "log.h"
#include "cg.h"

#define ID	"0123456789abcdef"

static char	 cwd[PATH_MAX];

static void
put(const char *path, const char *text)
{
	FILE	*fp;

	ATF_REQUIRE_MSG((fp = fopen(path, "w")) != NULL, "%s: %s", path,
	    strerror(errno));
	fputs(text, fp);
	ATF_REQUIRE(fclose(fp) == 0);
}

static void
get(const char *path, char *buf, size_t len)
{
	FILE	*fp;
	size_t	 n;

	ATF_REQUIRE_MSG((fp = fopen(path, "r")) != NULL, "%s: %s", path,
	    strerror(errno));
	n = fread(buf, 1, len - 1, fp);
	buf[n] = '\0';
	fclose(fp);
}

/* mkdir -p of a path under the work directory. */
static void
dirs(const char *rel)
{
	char	 path[PATH_MAX], *p;

	ATF_REQUIRE((size_t)snprintf(path, sizeof(path), "%s/%s", cwd,
	    rel) < sizeof(path));
	for (p = path + strlen(cwd) + 1; (p = strchr(p, '/')) != NULL; p++) {
		*p = '\0';
		ATF_REQUIRE(mkdir(path, 0755) == 0 || errno == EEXIST);
		*p = '/';
	}
	ATF_REQUIRE(mkdir(path, 0755) == 0 || errno == EEXIST);
}

static void
file(const char *rel, const char *text)
{
	char	 path[PATH_MAX];

	ATF_REQUIRE((size_t)snprintf(path, sizeof(path), "%s/%s", cwd,
	    rel) < sizeof(path));
	put(path, text);
}

static void
setup(const char *selfcg, const char *mountinfo)
{
	static char	 procdir[PATH_MAX];
	char		 mi[8192];
	const char	*p;
	size_t		 n = 0;

	ATF_REQUIRE(getcwd(cwd, sizeof(cwd)) != NULL);
	ATF_REQUIRE(strlen(cwd) < 1024);
	log_init(1, LOG_DAEMON);
	dirs("proc");
	file("proc/cgroup", selfcg);
	/* Mount points are absolute: each @ is the work directory. */
	for (p = mountinfo; *p != '\0' && n + strlen(cwd) + 1 < sizeof(mi);
	    p++)
		if (*p == '@')
			n += strlcpy(mi + n, cwd, sizeof(mi) - n);
		else
			mi[n++] = *p;
	mi[n] = '\0';
	file("proc/mountinfo", mi);
	ATF_REQUIRE((size_t)snprintf(procdir, sizeof(procdir), "%s/proc",
	    cwd) < sizeof(procdir));
	cg_procdir(procdir);
}

static void
want_parent(char parents[3][PATH_MAX], int i, const char *rel)
{
	char	 path[PATH_MAX];

	ATF_REQUIRE((size_t)snprintf(path, sizeof(path), "%s/%s", cwd,
	    rel) < sizeof(path));
	ATF_CHECK_STREQ_MSG(parents[i], path, "controller %d", i);
}

static const char mi_hybrid[] =
    "30 24 0:26 / /sys/fs/cgroup ro,nosuid - tmpfs tmpfs ro,mode=755\n"
    "31 30 0:27 / @/unified rw,nosuid - cgroup2 cgroup2 rw\n"
    "33 30 0:29 / @/v1/memory rw,nosuid - cgroup cgroup rw,memory\n"
    "34 30 0:30 / @/v1/pids rw,nosuid - cgroup cgroup rw,pids\n"
    "35 30 0:31 / @/v1/cpu,cpuacct rw,nosuid - cgroup cgroup "
    "rw,cpu,cpuacct\n";

static const char mi_unified[] =
    "22 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n"
    "31 22 0:27 / @/cg rw,nosuid,nodev,noexec shared:9 - cgroup2 "
    "cgroup2 rw,nsdelegate,memory_recursiveprot\n";

ATF_TC_WITHOUT_HEAD(hybrid);
ATF_TC_BODY(hybrid, tc)
{
	char	 parents[3][PATH_MAX], err[512];

	setup("12:memory:/user.slice\n"
	    "5:pids:/user.slice/user-0.slice\n"
	    "3:cpu,cpuacct:/\n"
	    "0::/user.slice/user-0.slice/session-1.scope\n", mi_hybrid);
	dirs("v1/memory/user.slice");
	dirs("v1/pids/user.slice/user-0.slice");
	dirs("v1/cpu,cpuacct");
	dirs("unified/user.slice/user-0.slice/session-1.scope");
	/* The unified mount offers nothing: it must not be asked. */
	file("unified/user.slice/user-0.slice/session-1.scope/"
	    "cgroup.controllers", "\n");

	ATF_REQUIRE_MSG(cg_parents("fenced." ID, parents, err,
	    sizeof(err)) == 0, "%s", err);
	want_parent(parents, 0, "v1/memory/user.slice/fenced." ID);
	want_parent(parents, 1, "v1/pids/user.slice/user-0.slice/fenced." ID);
	want_parent(parents, 2, "v1/cpu,cpuacct/fenced." ID);

	/* v1 has no rule against processes in inner cgroups: nobody moves. */
	ATF_CHECK_EQ(cg_daemon_enter(ID, err, sizeof(err)), 0);
	ATF_CHECK(access("unified/user.slice/user-0.slice/session-1.scope/"
	    "fenced." ID, F_OK) == -1);
	ATF_REQUIRE_MSG(cg_daemon_init(ID, parents, err,
	    sizeof(err)) == 0, "%s", err);
	ATF_CHECK(access("v1/memory/user.slice/fenced." ID, F_OK) == 0);
	ATF_CHECK(access("v1/cpu,cpuacct/fenced." ID, F_OK) == 0);
	ATF_CHECK(access("unified/user.slice/user-0.slice/session-1.scope/"
	    "cgroup.subtree_control", F_OK) == -1);
}

/* A systemd unit with Delegate=yes: the daemon's cgroup is its own. */
ATF_TC_WITHOUT_HEAD(unified);
ATF_TC_BODY(unified, tc)
{
	char	 parents[3][PATH_MAX], again[3][PATH_MAX], err[512];
	char	 buf[256];
	int	 i;

	setup("0::/system.slice/fenced.service\n", mi_unified);
	dirs("cg/system.slice/fenced.service");
	file("cg/system.slice/fenced.service/cgroup.controllers",
	    "cpuset cpu io memory hugetlb pids rdma misc\n");
	file("cg/system.slice/fenced.service/cgroup.subtree_control", "\n");

	ATF_REQUIRE_MSG(cg_parents("fenced." ID, parents, err,
	    sizeof(err)) == 0, "%s", err);
	for (i = 0; i < 3; i++)
		want_parent(parents, i,
		    "cg/system.slice/fenced.service/fenced." ID);

	/* The parent moves itself (all of it: "0") into its leaf. */
	dirs("cg/system.slice/fenced.service/fenced." ID "/daemon");
	file("cg/system.slice/fenced.service/fenced." ID "/daemon/"
	    "cgroup.procs", "");
	ATF_REQUIRE_MSG(cg_daemon_enter(ID, err, sizeof(err)) == 1,
	    "%s", err);
	get("cg/system.slice/fenced.service/fenced." ID "/daemon/"
	    "cgroup.procs", buf, sizeof(buf));
	ATF_CHECK_STREQ(buf, "0");

	/* From the leaf, fences still go under the cgroup it started in. */
	file("proc/cgroup", "0::/system.slice/fenced.service/fenced." ID
	    "/daemon\n");
	ATF_REQUIRE_MSG(cg_parents("fenced." ID, again, err,
	    sizeof(err)) == 0, "%s", err);
	for (i = 0; i < 3; i++)
		ATF_CHECK_STREQ(again[i], parents[i]);

	/* The fencer hands the three down, to the folder and below it. */
	file("cg/system.slice/fenced.service/fenced." ID
	    "/cgroup.subtree_control", "\n");
	ATF_REQUIRE_MSG(cg_daemon_init(ID, again, err,
	    sizeof(err)) == 0, "%s", err);
	get("cg/system.slice/fenced.service/cgroup.subtree_control", buf,
	    sizeof(buf));
	ATF_CHECK_STREQ(buf, "+memory +pids +cpu");
	get("cg/system.slice/fenced.service/fenced." ID
	    "/cgroup.subtree_control", buf, sizeof(buf));
	ATF_CHECK_STREQ(buf, "+memory +pids +cpu");

	/* What is handed down already is not asked for again. */
	file("cg/system.slice/fenced.service/cgroup.subtree_control",
	    "cpu memory\n");
	file("cg/system.slice/fenced.service/fenced." ID
	    "/cgroup.subtree_control", "memory pids cpu\n");
	ATF_REQUIRE_MSG(cg_daemon_init(ID, again, err,
	    sizeof(err)) == 0, "%s", err);
	get("cg/system.slice/fenced.service/cgroup.subtree_control", buf,
	    sizeof(buf));
	ATF_CHECK_STREQ(buf, "+pids");
	get("cg/system.slice/fenced.service/fenced." ID
	    "/cgroup.subtree_control", buf, sizeof(buf));
	ATF_CHECK_STREQ(buf, "memory pids cpu\n");
}

/* A plain root shell in the root cgroup: the leaf is at the top. */
ATF_TC_WITHOUT_HEAD(root);
ATF_TC_BODY(root, tc)
{
	char	 parents[3][PATH_MAX], err[512];
	int	 i;

	setup("0::/fenced." ID "/daemon\n", mi_unified);
	dirs("cg/fenced." ID "/daemon");
	file("cg/cgroup.controllers", "cpuset cpu io memory pids\n");
	ATF_REQUIRE_MSG(cg_parents("fenced." ID, parents, err,
	    sizeof(err)) == 0, "%s", err);
	for (i = 0; i < 3; i++)
		want_parent(parents, i, "cg/fenced." ID);

	/* Only a daemon's leaf is seen through: not a look-alike. */
	file("proc/cgroup", "0::/a/fenced.0123456789abcdeZ/daemon\n");
	dirs("cg/a/fenced.0123456789abcdeZ/daemon");
	file("cg/a/fenced.0123456789abcdeZ/daemon/cgroup.controllers",
	    "memory pids cpu\n");
	ATF_REQUIRE_MSG(cg_parents("fenced." ID, parents, err,
	    sizeof(err)) == 0, "%s", err);
	want_parent(parents, 0, "cg/a/fenced.0123456789abcdeZ/daemon/"
	    "fenced." ID);
}

/* A v2 cgroup that is not given a controller: no placement, and why. */
ATF_TC_WITHOUT_HEAD(lacking);
ATF_TC_BODY(lacking, tc)
{
	char	 parents[3][PATH_MAX], err[512];

	setup("0::/system.slice/fenced.service\n", mi_unified);
	dirs("cg/system.slice/fenced.service");
	file("cg/system.slice/fenced.service/cgroup.controllers",
	    "cpu io memory\n");
	ATF_CHECK_EQ(cg_parents("fenced." ID, parents, err,
	    sizeof(err)), -1);
	ATF_CHECK_MSG(strstr(err, "cgroup.controllers lacks pids") != NULL,
	    "%s", err);
	ATF_CHECK_EQ(cg_daemon_enter(ID, err, sizeof(err)), -1);
	ATF_CHECK_EQ(cg_daemon_init(ID, parents, err, sizeof(err)), -1);
	ATF_CHECK_MSG(strstr(err, "lacks pids") != NULL, "%s", err);

	/* No unified mount at all, and pids on no v1 hierarchy either. */
	file("proc/cgroup", "4:memory:/\n3:cpu,cpuacct:/\n");
	file("proc/mountinfo", "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n");
	ATF_CHECK_EQ(cg_parents("fenced." ID, parents, err,
	    sizeof(err)), -1);
	ATF_CHECK_MSG(strstr(err, "memory hierarchy is not mounted") != NULL,
	    "%s", err);
}

/*
 * What a fence's cgroups counted (the metrics): v1's files read from a
 * fake tree, each value only where its file holds a number; v2's cpu
 * time from the machine's own cgroup2 mount, where there is one.
 */
ATF_TC_WITHOUT_HEAD(usage);
ATF_TC_BODY(usage, tc)
{
	const char	*d[CG_NCTRL];
	char		 mem[PATH_MAX], pids[PATH_MAX], cpu[PATH_MAX];
	char		 line[1024], *v2 = NULL, *p;
	struct cg_usage	 u;
	FILE		*fp;

	ATF_REQUIRE(getcwd(cwd, sizeof(cwd)) != NULL);
	dirs("v1/memory/f");
	dirs("v1/pids/f");
	dirs("v1/cpu/f");
	file("v1/memory/f/memory.usage_in_bytes", "1234\n");
	file("v1/memory/f/memory.max_usage_in_bytes", "5678\n");
	file("v1/pids/f/pids.current", "3\n");
	file("v1/cpu/f/cpuacct.usage", "2500000\n");
	ATF_REQUIRE((size_t)snprintf(mem, sizeof(mem), "%s/v1/memory/f",
	    cwd) < sizeof(mem));
	ATF_REQUIRE((size_t)snprintf(pids, sizeof(pids), "%s/v1/pids/f",
	    cwd) < sizeof(pids));
	ATF_REQUIRE((size_t)snprintf(cpu, sizeof(cpu), "%s/v1/cpu/f",
	    cwd) < sizeof(cpu));
	d[CG_MEMORY] = mem;
	d[CG_PIDS] = pids;
	d[CG_CPU] = cpu;
	cg_fence_usage(d, &u);
	ATF_CHECK_EQ(u.cu_have, CG_USAGE_MEM | CG_USAGE_MEM_PEAK |
	    CG_USAGE_PIDS | CG_USAGE_CPU);
	ATF_CHECK_EQ(u.cu_mem_bytes, 1234);
	ATF_CHECK_EQ(u.cu_mem_peak, 5678);
	ATF_CHECK_EQ(u.cu_pids, 3);
	ATF_CHECK_EQ(u.cu_cpu_usec, 2500);	/* ns to us */
	ATF_CHECK_EQ(u.cu_pids_peak, 0);

	/* Not numbers, or not there: nothing said of them. */
	file("v1/memory/f/memory.usage_in_bytes", "12x\n");
	file("v1/memory/f/memory.max_usage_in_bytes", "-5\n");
	file("v1/pids/f/pids.current", "max\n");
	ATF_REQUIRE((size_t)snprintf(line, sizeof(line), "%s/cpuacct.usage",
	    cpu) < sizeof(line) && unlink(line) == 0);
	cg_fence_usage(d, &u);
	ATF_CHECK_EQ(u.cu_have, 0);
	d[CG_MEMORY] = d[CG_PIDS] = d[CG_CPU] = "";
	cg_fence_usage(d, &u);
	ATF_CHECK_EQ(u.cu_have, 0);

	/* v2: cpu.stat's usage_usec of the cgroup2 mount's root. */
	if ((fp = fopen("/proc/self/mountinfo", "r")) == NULL)
		atf_tc_fail("/proc/self/mountinfo: %s", strerror(errno));
	while (v2 == NULL && fgets(line, sizeof(line), fp) != NULL)
		if ((p = strstr(line, " - cgroup2 ")) != NULL) {
			*p = '\0';
			/* The fifth field is the mount point. */
			if (sscanf(line, "%*s %*s %*s %*s %1023s", mem) == 1)
				v2 = mem;
		}
	fclose(fp);
	if (v2 == NULL)
		atf_tc_skip("no cgroup2 mount for v2's cpu.stat");
	d[CG_CPU] = v2;
	cg_fence_usage(d, &u);
	ATF_CHECK_EQ(u.cu_have, CG_USAGE_CPU);
	ATF_CHECK(u.cu_cpu_usec > 0);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, hybrid);
	ATF_TP_ADD_TC(tp, unified);
	ATF_TP_ADD_TC(tp, root);
	ATF_TP_ADD_TC(tp, lacking);
	ATF_TP_ADD_TC(tp, usage);
	return (atf_no_error());
}
