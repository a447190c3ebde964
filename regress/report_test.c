/*
 * report_test: the prober's judging of sandbox-probe/1 reports, fed
 * crafted ones.  The base report is a real L1.5 report of fence-probe
 * (trimmed, and with the host's values replaced by fixed ones); each
 * case changes what it names and checks the verdicts and the level.
 */
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <atf-c.h>
#include <jansson.h>

#include "fenced.h"
#include "msg.h"
#include "report.h"
#include "fencer_host.h"
#include "backend.h"

#define HOST_BOOT_ID	"00000000-1111-2222-3333-444444444444"
#define HOST_NS_PID	4026531836ULL
#define HOST_NS_NET	4026531833ULL
#define HOST_NS_MNT	4026531832ULL
#define HEADER		"{\"probe\":\"sandbox-probe/1\"," \
			"\"when\":\"2025-06-01T12:00:00Z\","

/* Indexes of filesystem.paths in the base report. */
#define P_ROOT		0
#define P_USR		1
#define P_ETC		2
#define P_HOME		7
#define P_PROCSYS	9
#define P_SYS		10

static const char base_report[] =
	"{\"probe\":\"sandbox-probe/1\","
	"\"when\":\"2025-06-01T12:00:00.000Z\",\"identity\":{\"uid\":64203,"
	"\"euid\":64203,\"gid\":64203,\"egid\":64203,\"groups\":[],"
	"\"cwd\":\"/home/fence\",\"platform\":\"linux\","
	"\"kernel\":{\"release\":\"6.1.0-test\",\"version\":\"#1 SMP test\","
	"\"machine\":\"x86_64\"},"
	"\"bootId\":\"00000000-1111-2222-3333-444444444444\"},"
	"\"sandboxHints\":{\"seccomp\":2,\"seccompFilters\":1,"
	"\"noNewPrivs\":1,\"capEff\":\"0000000000000000\","
	"\"capBnd\":\"0000000000000000\",\"capPrm\":\"0000000000000000\","
	"\"capAmb\":\"0000000000000000\",\"capInh\":\"0000000000000000\","
	"\"namespaces\":{\"cgroup\":{\"inode\":4026532185,\"error\":null,"
	"\"differs\":null},\"ipc\":{\"inode\":4026532183,\"error\":null,"
	"\"differs\":null},\"mnt\":{\"inode\":4026532181,\"error\":null,"
	"\"differs\":null},\"net\":{\"inode\":4026531833,\"error\":null,"
	"\"differs\":null},\"pid\":{\"inode\":4026532184,\"error\":null,"
	"\"differs\":null},\"time\":{\"inode\":4026531834,\"error\":null,"
	"\"differs\":null},\"user\":{\"inode\":4026531837,\"error\":null,"
	"\"differs\":null},\"uts\":{\"inode\":4026532182,\"error\":null,"
	"\"differs\":null}},\"mountSample\":{\"error\":null,"
	"\"lines\":[\"tmpfs / tmpfs ro,nosuid,nodev,noexec,relatime,size=64k,"
	"nr_inodes=64,mode=755 0 0\"],\"total\":28},\"landlock\":{\"abi\":7,"
	"\"error\":null,\"restricted\":true},\"cgroup\":{\"error\":null,"
	"\"lines\":[\"0::/\"],\"total\":1},\"deadline\":null},"
	"\"filesystem\":{\"home\":\"/home/fence\",\"markersRemoved\":0,"
	"\"paths\":[{\"label\":\"/\",\"path\":\"/\",\"exists\":true,"
	"\"listable\":true,\"entries\":13,\"writable\":false,"
	"\"error\":\"EROFS\"},{\"label\":\"/usr\",\"path\":\"/usr\","
	"\"exists\":true,\"listable\":true,\"entries\":12,\"writable\":false,"
	"\"error\":\"EROFS\"},{\"label\":\"/etc\",\"path\":\"/etc\","
	"\"exists\":true,\"listable\":true,\"entries\":140,"
	"\"writable\":false,\"error\":\"EROFS\"},{\"label\":\"/tmp\","
	"\"path\":\"/tmp\",\"exists\":true,\"listable\":true,\"entries\":0,"
	"\"writable\":true,\"error\":null},{\"label\":\"/run\","
	"\"path\":\"/run\",\"exists\":true,\"listable\":true,\"entries\":1,"
	"\"writable\":false,\"error\":\"EACCES\"},{\"label\":\"/var\","
	"\"path\":\"/var\",\"exists\":true,\"listable\":true,\"entries\":1,"
	"\"writable\":false,\"error\":\"EACCES\"},{\"label\":\"/home\","
	"\"path\":\"/home\",\"exists\":true,\"listable\":true,\"entries\":1,"
	"\"writable\":false,\"error\":\"EACCES\"},{\"label\":\"HOME\","
	"\"path\":\"/home/fence\",\"exists\":true,\"listable\":true,"
	"\"entries\":1,\"writable\":true,\"error\":null},"
	"{\"label\":\"/root\",\"path\":\"/root\",\"exists\":false,"
	"\"listable\":false,\"entries\":null,\"writable\":false,"
	"\"error\":\"ENOENT\"},{\"label\":\"/proc/sys\","
	"\"path\":\"/proc/sys\",\"exists\":true,\"listable\":true,"
	"\"entries\":8,\"writable\":false,\"error\":\"EACCES\"},"
	"{\"label\":\"/sys\",\"path\":\"/sys\",\"exists\":false,"
	"\"listable\":false,\"entries\":null,\"writable\":false,"
	"\"error\":\"ENOENT\"},{\"label\":\"/dev\",\"path\":\"/dev\","
	"\"exists\":true,\"listable\":true,\"entries\":11,\"writable\":false,"
	"\"error\":\"EROFS\"},{\"label\":\"/boot\",\"path\":\"/boot\","
	"\"exists\":false,\"listable\":false,\"entries\":null,"
	"\"writable\":false,\"error\":\"ENOENT\"},{\"label\":\"/var/lib\","
	"\"path\":\"/var/lib\",\"exists\":false,\"listable\":false,"
	"\"entries\":null,\"writable\":false,\"error\":\"ENOENT\"}],"
	"\"hostPaths\":[{\"path\":\"/var/lib/test/secret\","
	"\"readable\":false,\"error\":\"ENOENT\"}]},"
	"\"processes\":{\"error\":null,\"visible\":2,"
	"\"pid1Comm\":\"fence-agent\",\"pid1Agent\":true,\"otherUids\":false,"
	"\"otherUidSample\":[],\"hostPid\":{\"pid\":4242,\"visible\":false}},"
	"\"limits\":{\"cpus\":2,\"memTotal\":25276026880,"
	"\"cgroupMemoryMax\":null,\"rlimits\":{\"core\":{\"soft\":0,"
	"\"hard\":0},\"nofile\":{\"soft\":1024,\"hard\":1024},"
	"\"nproc\":{\"soft\":4160,\"hard\":4160}}},"
	"\"tools\":{\"path\":\"/usr/local/bin:/usr/bin:/bin\","
	"\"concurrency\":8,\"found\":{\"node\":\"/usr/bin/node\","
	"\"git\":\"/usr/bin/git\",\"python3\":\"/usr/bin/python3\","
	"\"sh\":\"/usr/bin/sh\",\"bash\":\"/usr/bin/bash\","
	"\"curl\":\"/usr/bin/curl\",\"gcc\":\"/usr/bin/gcc\","
	"\"make\":\"/usr/bin/make\",\"perl\":\"/usr/bin/perl\"}},"
	"\"privileges\":{\"unshare_user\":\"EPERM\",\"keyctl\":\"EPERM\","
	"\"bpf\":\"EPERM\",\"ptrace\":\"EPERM\",\"io_uring_setup\":\"EPERM\","
	"\"userfaultfd\":\"EPERM\",\"perf_event_open\":\"EPERM\","
	"\"mount\":\"EPERM\",\"i386\":\"SIGSEGV\","
	"\"socket_packet\":\"EPERM\"},"
	"\"surface\":{\"af_alg\":\"EPERM\",\"io_uring\":\"EPERM\","
	"\"nf_tables\":\"EPERM\",\"rds\":\"EPERM\",\"vsock\":\"EPERM\","
	"\"esp\":\"EPERM\",\"rxrpc\":\"EPERM\",\"keyctl\":\"EPERM\","
	"\"bpf\":\"EPERM\",\"perf_event\":\"EPERM\","
	"\"userfaultfd\":\"EPERM\",\"userns\":\"EPERM\","
	"\"ptrace\":\"EPERM\"},"
	"\"network\":{\"dns\":{\"name\":\"localhost\",\"resolved\":true,"
	"\"addresses\":[\"127.0.0.1\"],\"error\":null,\"ms\":1},"
	"\"tcp\":[{\"target\":\"127.0.0.1:9\",\"address\":\"127.0.0.1\","
	"\"connected\":false,\"error\":\"ECONNREFUSED\",\"ms\":0}],"
	"\"canary\":{\"target\":\"127.0.0.1:7777\",\"address\":\"127.0.0.1\","
	"\"connected\":true,\"error\":null,\"ms\":0},"
	"\"interfaces\":[{\"name\":\"lo\",\"up\":true,\"loopback\":true},"
	"{\"name\":\"eth0\",\"up\":true,\"loopback\":false}],\"ms\":4}}"
	;

static json_t *
base(void)
{
	json_error_t	 e;
	json_t		*r;

	r = json_loads(base_report, JSON_REJECT_DUPLICATES, &e);
	ATF_REQUIRE_MSG(r != NULL, "base report: %s", e.text);
	return (r);
}

/* The value at "a.b.3.c" (numbers index arrays). */
static json_t *
at(json_t *root, const char *path)
{
	char	*copy, *p, *seg;
	json_t	*v = root;

	copy = strdup(path);
	ATF_REQUIRE(copy != NULL);
	for (p = copy; v != NULL && (seg = strsep(&p, ".")) != NULL;)
		v = json_is_array(v) ? json_array_get(v, atoi(seg)) :
		    json_object_get(v, seg);
	free(copy);
	ATF_REQUIRE_MSG(v != NULL, "no %s in the report", path);
	return (v);
}

/* Set (or with v NULL, delete) the value at path. */
static void
set(json_t *root, const char *path, json_t *v)
{
	char	*parent, *last;
	json_t	*p;

	parent = strdup(path);
	ATF_REQUIRE(parent != NULL);
	if ((last = strrchr(parent, '.')) == NULL) {
		p = root;
		last = parent;
	} else {
		*last++ = '\0';
		p = at(root, parent);
	}
	if (json_is_array(p)) {
		ATF_REQUIRE(v != NULL);
		ATF_REQUIRE(json_array_set_new(p, atoi(last), v) == 0);
	} else if (v == NULL)
		ATF_REQUIRE(json_object_del(p, last) == 0);
	else
		ATF_REQUIRE(json_object_set_new(p, last, v) == 0);
	free(parent);
}

/*
 * The fencer's reading of a native fence's pid 1 from the host, as a
 * fence of that tier shows it (docs/probe.md, "What grants each axis").
 */
static void
host_reading(struct probe_expect *e, int tier)
{
	struct probe_host	*h = &e->pe_host;
	int			 i;

	memset(h, 0, sizeof(*h));
	e->pe_has_host = 1;
	h->ph_status_read = 1;
	for (i = 0; i < 4; i++)
		h->ph_uid[i] = 61000;
	h->ph_nspid_depth = 2;
	h->ph_nspid_self_depth = 1;
	h->ph_nspid_last = 1;
	h->ph_seccomp = 2;
	h->ph_filters_self = 1;
	h->ph_filters = tier == TIER_L1 ? 1 : 2;
	h->ph_nnp = 1;
	if (tier == TIER_L1)
		h->ph_cap[HOST_CAP_BND] = 0x2411ebULL;
	h->ph_mounts_read = 1;
	h->ph_usr_ro = 1;
	h->ph_etc_ro = 1;
	h->ph_net_read = 1;
	if (tier == TIER_L2) {
		h->ph_nifaces = 1;
	} else {
		h->ph_canary_seen = 1;
		h->ph_nifaces = 2;
		strlcpy(h->ph_iface_other, "eth0", sizeof(h->ph_iface_other));
	}
}

/* What the fencer tells the prober of a backend: its table's entry. */
static void
expect_backend(struct probe_expect *e, int backend)
{
	const struct fencer_backend *b = fencer_backend(backend);

	ATF_REQUIRE(b != NULL);
	e->pe_backend = backend;
	e->pe_traits = b->fb_probe;
}

/* What the fencer would know about the base report's fence. */
static struct probe_expect
expect(int tier)
{
	struct probe_expect	 e;

	memset(&e, 0, sizeof(e));
	e.pe_tier = tier;
	expect_backend(&e, BACKEND_NATIVE);
	strlcpy(e.pe_boot_id, HOST_BOOT_ID, sizeof(e.pe_boot_id));
	strlcpy(e.pe_release, "6.1.0-test", sizeof(e.pe_release));
	strlcpy(e.pe_version, "#1 SMP test", sizeof(e.pe_version));
	e.pe_canary = CANARY_YES;
	strlcpy(e.pe_canary_target, "127.0.0.1:7777",
	    sizeof(e.pe_canary_target));
	strlcpy(e.pe_secret, "/var/lib/test/secret", sizeof(e.pe_secret));
	e.pe_host_pid = 4242;
	e.pe_ns_pid = HOST_NS_PID;
	e.pe_ns_net = HOST_NS_NET;
	e.pe_ns_mnt = HOST_NS_MNT;
	host_reading(&e, tier);
	return (e);
}

static int
judge(json_t *root, const struct probe_expect *e, struct probe_verdict *v)
{
	char	*s;
	int	 rv;

	s = json_dumps(root, JSON_COMPACT);
	ATF_REQUIRE(s != NULL);
	rv = report_parse(s, strlen(s), e, v);
	free(s);
	json_decref(root);
	return (rv);
}

static int
judge_buf(const char *buf, size_t len, struct probe_verdict *v)
{
	struct probe_expect	 e = expect(TIER_L15);

	return (report_parse(buf, len, &e, v));
}

static int
has_violation(const struct probe_verdict *v, int axis, const char *text)
{
	const struct probe_axis_verdict	*a = &v->pv_axes[axis];
	int				 i;

	for (i = 0; i < a->av_nviolations; i++)
		if (strstr(a->av_violations[i], text) != NULL)
			return (1);
	return (0);
}

#define CHECK_LEVEL(v, l)						\
	ATF_CHECK_STREQ_MSG(level_name((v)->pv_level), level_name(l),	\
	    "reason: %s", (v)->pv_reason)
#define CHECK_AXIS(v, a, verdict)					\
	ATF_CHECK_STREQ(verdict_name((v)->pv_axes[a].av_verdict),	\
	    verdict_name(verdict))
#define CHECK_VIOLATION(v, a, text)					\
	ATF_CHECK_MSG(has_violation(v, a, text), "no violation \"%s\"",	\
	    text)

/* An L2 fence: its own network with only lo, the canary unreached. */
static json_t *
l2_report(void)
{
	json_t	*r = base();

	set(r, "sandboxHints.namespaces.net.inode", json_integer(4026532190));
	set(r, "network.canary.connected", json_false());
	set(r, "network.canary.error", json_string("ENETUNREACH"));
	set(r, "network.interfaces", json_pack("[{s:s,s:b,s:b}]", "name",
	    "lo", "up", 1, "loopback", 1));
	return (r);
}

static struct probe_expect
l2_expect(void)
{
	struct probe_expect	 e = expect(TIER_L2);

	e.pe_canary = CANARY_NO;
	return (e);
}

/* What an L1 fence shows: no filter, calls reach the kernel. */
static json_t *
l1_report(void)
{
	json_t	*r = base();

	set(r, "sandboxHints.seccomp", json_integer(0));
	set(r, "sandboxHints.seccompFilters", json_integer(0));
	set(r, "sandboxHints.noNewPrivs", json_integer(0));
	set(r, "sandboxHints.capBnd", json_string("000001fffeffffff"));
	set(r, "privileges", json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,"
	    "s:s,s:s}", "unshare_user", "ok", "keyctl", "ok", "bpf", "EINVAL",
	    "ptrace", "ok", "io_uring_setup", "ok", "userfaultfd", "ok",
	    "perf_event_open", "ok", "mount", "ENOENT", "i386", "SIGSEGV",
	    "socket_packet", "EPERM"));
	/* As fence-probe measured an L1 fence on this machine (6.18). */
	set(r, "surface", json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,"
	    "s:s,s:s,s:s,s:s}", "af_alg", "EAFNOSUPPORT", "io_uring", "ok",
	    "nf_tables", "ok", "rds", "EAFNOSUPPORT", "vsock", "ok", "esp",
	    "ok", "rxrpc", "EAFNOSUPPORT", "keyctl", "ok", "bpf", "EPERM",
	    "perf_event", "ok", "userfaultfd", "EPERM", "userns", "ok",
	    "ptrace", "ok"));
	return (r);
}

ATF_TC_WITHOUT_HEAD(l15_earns_l15);
ATF_TC_BODY(l15_earns_l15, tc)
{
	struct probe_expect	 e = expect(TIER_L15);
	struct probe_verdict	 v;

	ATF_REQUIRE_EQ(judge(base(), &e, &v), 0);
	CHECK_LEVEL(&v, LEVEL_L15);
	CHECK_AXIS(&v, AXIS_FILESYSTEM, VERDICT_FENCED);
	CHECK_AXIS(&v, AXIS_PROCESSES, VERDICT_FENCED);
	CHECK_AXIS(&v, AXIS_PRIVILEGES, VERDICT_FENCED);
	CHECK_AXIS(&v, AXIS_NETWORK, VERDICT_PASSES);
	CHECK_AXIS(&v, AXIS_KERNEL, VERDICT_SHARED);
	ATF_CHECK_STREQ(v.pv_when, "2025-06-01T12:00:00.000Z");
	ATF_CHECK_STREQ(v.pv_boot_id, HOST_BOOT_ID);
	ATF_CHECK_EQ(v.pv_reason[0], '\0');
}

ATF_TC_WITHOUT_HEAD(l1_earns_l1);
ATF_TC_BODY(l1_earns_l1, tc)
{
	struct probe_expect	 e = expect(TIER_L1);
	struct probe_verdict	 v;

	ATF_REQUIRE_EQ(judge(l1_report(), &e, &v), 0);
	CHECK_LEVEL(&v, LEVEL_L1);
	CHECK_AXIS(&v, AXIS_FILESYSTEM, VERDICT_FENCED);
	CHECK_AXIS(&v, AXIS_PROCESSES, VERDICT_FENCED);
	CHECK_AXIS(&v, AXIS_PRIVILEGES, VERDICT_NOT_FENCED);
	CHECK_AXIS(&v, AXIS_NETWORK, VERDICT_PASSES);
	CHECK_VIOLATION(&v, AXIS_PRIVILEGES, "privileges: Seccomp is 0");
	CHECK_VIOLATION(&v, AXIS_PRIVILEGES, "privileges: NoNewPrivs is 0");
	CHECK_VIOLATION(&v, AXIS_PRIVILEGES, "privileges: CapBnd is");
	CHECK_VIOLATION(&v, AXIS_PRIVILEGES, "privileges: keyctl allowed");
	CHECK_VIOLATION(&v, AXIS_PRIVILEGES,
	    "privileges: bpf not refused by a filter (EINVAL)");
	ATF_CHECK(!has_violation(&v, AXIS_PRIVILEGES, "mount allowed"));
}

/* The weakened fence: called L1.5, no seccomp: L1, says why. */
ATF_TC_WITHOUT_HEAD(weakened_l15_earns_l1);
ATF_TC_BODY(weakened_l15_earns_l1, tc)
{
	struct probe_expect	 e = expect(TIER_L15);
	struct probe_verdict	 v;
	json_t			*r = base();

	set(r, "sandboxHints.seccomp", json_integer(0));
	ATF_REQUIRE_EQ(judge(r, &e, &v), 0);
	CHECK_LEVEL(&v, LEVEL_L1);
	CHECK_AXIS(&v, AXIS_PRIVILEGES, VERDICT_NOT_FENCED);
	ATF_CHECK_EQ(v.pv_axes[AXIS_PRIVILEGES].av_nviolations, 1);
	CHECK_VIOLATION(&v, AXIS_PRIVILEGES, "privileges: Seccomp is 0");
}

/*
 * Seccomp 2 from the daemon's own filter, inherited: the calls the
 * fence's filter refuses get through, so no L1.5.
 */
ATF_TC_WITHOUT_HEAD(inherited_filter_not_l15);
ATF_TC_BODY(inherited_filter_not_l15, tc)
{
	struct probe_expect	 e = expect(TIER_L15);
	struct probe_verdict	 v;
	json_t			*r;

	r = base();
	set(r, "privileges.keyctl", json_string("ok"));
	ATF_REQUIRE_EQ(judge(r, &e, &v), 0);
	CHECK_LEVEL(&v, LEVEL_L1);
	CHECK_VIOLATION(&v, AXIS_PRIVILEGES, "privileges: keyctl allowed");

	r = base();
	set(r, "privileges.keyctl", json_string("ENOKEY"));
	set(r, "privileges.unshare_user", json_string("EINVAL"));
	ATF_REQUIRE_EQ(judge(r, &e, &v), 0);
	CHECK_LEVEL(&v, LEVEL_L1);
	CHECK_VIOLATION(&v, AXIS_PRIVILEGES,
	    "privileges: keyctl not refused by a filter (ENOKEY)");
	CHECK_VIOLATION(&v, AXIS_PRIVILEGES,
	    "privileges: unshare_user not refused by a filter (EINVAL)");

	/* Refused by a kill is refused. */
	r = base();
	set(r, "privileges.bpf", json_string("SIGSYS"));
	set(r, "privileges.keyctl", json_string("ENOSYS"));
	ATF_REQUIRE_EQ(judge(r, &e, &v), 0);
	CHECK_LEVEL(&v, LEVEL_L15);
}

ATF_TC_WITHOUT_HEAD(privileges_missing_fields);
ATF_TC_BODY(privileges_missing_fields, tc)
{
	struct probe_expect	 e = expect(TIER_L15);
	struct probe_verdict	 v;
	json_t			*r;

	r = base();
	set(r, "sandboxHints.noNewPrivs", json_null());
	set(r, "sandboxHints.capEff", json_null());
	set(r, "privileges.ptrace", NULL);
	ATF_REQUIRE_EQ(judge(r, &e, &v), 0);
	CHECK_LEVEL(&v, LEVEL_L1);
	CHECK_VIOLATION(&v, AXIS_PRIVILEGES,
	    "privileges: NoNewPrivs not reported");
	CHECK_VIOLATION(&v, AXIS_PRIVILEGES, "privileges: CapEff not reported");
	CHECK_VIOLATION(&v, AXIS_PRIVILEGES, "privileges: ptrace not tried");

	r = base();
	set(r, "sandboxHints.capAmb", json_string("0000000000000400"));
	set(r, "privileges.io_uring_setup", json_string("ok"));
	ATF_REQUIRE_EQ(judge(r, &e, &v), 0);
	CHECK_LEVEL(&v, LEVEL_L1);
	CHECK_VIOLATION(&v, AXIS_PRIVILEGES,
	    "privileges: CapAmb is 0000000000000400");
	CHECK_VIOLATION(&v, AXIS_PRIVILEGES,
	    "privileges: io_uring_setup allowed");
}

ATF_TC_WITHOUT_HEAD(l2_earns_l2);
ATF_TC_BODY(l2_earns_l2, tc)
{
	struct probe_expect	 e = l2_expect();
	struct probe_verdict	 v;

	ATF_REQUIRE_EQ(judge(l2_report(), &e, &v), 0);
	CHECK_LEVEL(&v, LEVEL_L2);
	CHECK_AXIS(&v, AXIS_NETWORK, VERDICT_FENCED);
	CHECK_AXIS(&v, AXIS_PRIVILEGES, VERDICT_FENCED);
}

ATF_TC_WITHOUT_HEAD(l2_network_not_fenced);
ATF_TC_BODY(l2_network_not_fenced, tc)
{
	struct probe_expect	 e;
	struct probe_verdict	 v;
	json_t			*r;

	/* The report says the canary answered. */
	e = l2_expect();
	r = l2_report();
	set(r, "network.canary.connected", json_true());
	ATF_REQUIRE_EQ(judge(r, &e, &v), 0);
	CHECK_LEVEL(&v, LEVEL_L15);
	CHECK_AXIS(&v, AXIS_NETWORK, VERDICT_NOT_FENCED);
	CHECK_VIOLATION(&v, AXIS_NETWORK,
	    "network: canary reached from an L2 fence");

	/* The report lies; the host saw the connection. */
	e = l2_expect();
	e.pe_canary = CANARY_YES;
	ATF_REQUIRE_EQ(judge(l2_report(), &e, &v), 0);
	CHECK_LEVEL(&v, LEVEL_L15);
	CHECK_VIOLATION(&v, AXIS_NETWORK, "network: canary reached");

	/* Another interface than lo. */
	e = l2_expect();
	r = l2_report();
	set(r, "network.interfaces", json_pack("[{s:s,s:b,s:b},{s:s,s:b,s:b}]",
	    "name", "lo", "up", 1, "loopback", 1, "name", "eth0", "up", 1,
	    "loopback", 0));
	ATF_REQUIRE_EQ(judge(r, &e, &v), 0);
	CHECK_LEVEL(&v, LEVEL_L15);
	CHECK_VIOLATION(&v, AXIS_NETWORK,
	    "network: interface other than lo: eth0");

	/* The host's network namespace. */
	e = l2_expect();
	r = l2_report();
	set(r, "sandboxHints.namespaces.net.inode", json_integer(HOST_NS_NET));
	ATF_REQUIRE_EQ(judge(r, &e, &v), 0);
	CHECK_LEVEL(&v, LEVEL_L15);
	CHECK_VIOLATION(&v, AXIS_NETWORK,
	    "network: network namespace is the host's");

	/* The canary the host opened was not the one probed. */
	e = l2_expect();
	r = l2_report();
	set(r, "network.canary", json_null());
	ATF_REQUIRE_EQ(judge(r, &e, &v), 0);
	CHECK_LEVEL(&v, LEVEL_L15);
	CHECK_VIOLATION(&v, AXIS_NETWORK, "network: canary not probed");
	r = l2_report();
	set(r, "network.canary.target", json_string("127.0.0.1:1"));
	ATF_REQUIRE_EQ(judge(r, &e, &v), 0);
	CHECK_VIOLATION(&v, AXIS_NETWORK, "network: canary not probed");
}

ATF_TC_WITHOUT_HEAD(l2_without_canary);
ATF_TC_BODY(l2_without_canary, tc)
{
	struct probe_expect	 e = l2_expect();
	struct probe_verdict	 v;

	e.pe_canary = CANARY_NOT_RUN;
	ATF_REQUIRE_EQ(judge(l2_report(), &e, &v), 0);
	CHECK_AXIS(&v, AXIS_NETWORK, VERDICT_NOT_MEASURED);
	ATF_CHECK_STREQ(v.pv_axes[AXIS_NETWORK].av_reason,
	    "no canary was run");
	CHECK_LEVEL(&v, LEVEL_L15);
}

/*
 * An L2 fence with an egress list (docs/egress.md): its network is
 * "allowlisted" when everything the strict network asks holds and the
 * proxy kept to the list, as the probe measured it through the proxy.
 */
#define EG_ALLOWED	"api.example.com:443"
#define EG_REFUSED	"egress-refused.invalid:443"

static struct probe_expect
egress_expect(void)
{
	struct probe_expect	 e = l2_expect();

	e.pe_negress = 2;
	strlcpy(e.pe_egress[0], "*.cdn.example.com:443",
	    sizeof(e.pe_egress[0]));
	strlcpy(e.pe_egress[1], EG_ALLOWED, sizeof(e.pe_egress[1]));
	strlcpy(e.pe_egress_allowed, EG_ALLOWED, sizeof(e.pe_egress_allowed));
	strlcpy(e.pe_egress_refused, EG_REFUSED, sizeof(e.pe_egress_refused));
	return (e);
}

/* One check through the proxy as fence-probe writes it. */
static json_t *
egress_try(const char *target, int status, const char *code)
{
	json_t	*t;

	t = json_pack("{s:s,s:b,s:i,s:s,s:b,s:n,s:i}", "target", target,
	    "proxy", 1, "status", status, "code", code, "reached",
	    status == 200, "error", "ms", 3);
	ATF_REQUIRE(t != NULL);
	return (t);
}

/* The allowed target through, the other refused 403 not-listed. */
static json_t *
egress_report(void)
{
	json_t	*r = l2_report();

	set(r, "network.egress", json_pack("{s:s,s:o,s:o}", "proxy",
	    "127.0.0.1:3128", "allowed", egress_try(EG_ALLOWED, 200, ""),
	    "refused", egress_try(EG_REFUSED, 403, "not-listed")));
	return (r);
}

/* The boundary of v, parsed back. */
static json_t *
boundary(const struct probe_verdict *v)
{
	json_t	*o;
	char	*s;

	ATF_REQUIRE((s = verdict_json(v)) != NULL);
	ATF_REQUIRE((o = json_loads(s, JSON_REJECT_DUPLICATES, NULL)) != NULL);
	free(s);
	return (o);
}

ATF_TC_WITHOUT_HEAD(egress_allowlisted);
ATF_TC_BODY(egress_allowlisted, tc)
{
	struct probe_expect	 e = egress_expect();
	struct probe_verdict	 v;
	json_t			*o, *r;

	ATF_REQUIRE_EQ(judge(egress_report(), &e, &v), 0);
	CHECK_LEVEL(&v, LEVEL_L2);
	ATF_CHECK(level_satisfies(v.pv_level, LEVEL_L2));
	CHECK_AXIS(&v, AXIS_NETWORK, VERDICT_ALLOWLISTED);
	ATF_CHECK_EQ(v.pv_axes[AXIS_NETWORK].av_nviolations, 0);
	o = boundary(&v);
	ATF_CHECK_STREQ(json_string_value(at(o, "axes.network.verdict")),
	    "allowlisted");
	ATF_CHECK(json_is_null(at(o, "axes.network.reason")));
	ATF_CHECK_EQ(json_array_size(at(o, "axes.network.egress.list")), 2);
	ATF_CHECK_STREQ(json_string_value(at(o, "axes.network.egress.list.0")),
	    "*.cdn.example.com:443");
	ATF_CHECK_STREQ(json_string_value(at(o, "axes.network.egress.list.1")),
	    EG_ALLOWED);
	ATF_CHECK_STREQ(json_string_value(at(o,
	    "axes.network.egress.allowed.target")), EG_ALLOWED);
	ATF_CHECK_EQ(json_integer_value(at(o,
	    "axes.network.egress.allowed.status")), 200);
	ATF_CHECK(json_is_true(at(o, "axes.network.egress.allowed.reached")));
	ATF_CHECK(json_is_null(at(o, "axes.network.egress.allowed.error")));
	ATF_CHECK_STREQ(json_string_value(at(o,
	    "axes.network.egress.refused.code")), "not-listed");
	ATF_CHECK(json_is_false(at(o, "axes.network.egress.refused.reached")));
	ATF_CHECK_EQ(json_array_size(at(o, "violations")), 0);
	json_decref(o);

	/* The allowed target not reached: stated, no violation. */
	r = egress_report();
	set(r, "network.egress.allowed", egress_try(EG_ALLOWED, 502,
	    "resolve-failed"));
	ATF_REQUIRE_EQ(judge(r, &e, &v), 0);
	CHECK_LEVEL(&v, LEVEL_L2);
	CHECK_AXIS(&v, AXIS_NETWORK, VERDICT_ALLOWLISTED);
	o = boundary(&v);
	ATF_CHECK(json_is_false(at(o, "axes.network.egress.allowed.reached")));
	ATF_CHECK_STREQ(json_string_value(at(o,
	    "axes.network.egress.allowed.code")), "resolve-failed");
	json_decref(o);
	r = egress_report();
	set(r, "network.egress.allowed.proxy", json_false());
	set(r, "network.egress.allowed.status", json_integer(0));
	set(r, "network.egress.allowed.reached", json_false());
	set(r, "network.egress.allowed.error", json_string("ECONNREFUSED"));
	ATF_REQUIRE_EQ(judge(r, &e, &v), 0);
	CHECK_AXIS(&v, AXIS_NETWORK, VERDICT_ALLOWLISTED);
	ATF_CHECK_STREQ(v.pv_egress_allowed.et_error, "ECONNREFUSED");

	/* No exact entry on the list: only the refused target is tried. */
	e = egress_expect();
	e.pe_negress = 1;
	e.pe_egress_allowed[0] = '\0';
	r = egress_report();
	set(r, "network.egress.allowed", json_null());
	ATF_REQUIRE_EQ(judge(r, &e, &v), 0);
	CHECK_LEVEL(&v, LEVEL_L2);
	CHECK_AXIS(&v, AXIS_NETWORK, VERDICT_ALLOWLISTED);
	o = boundary(&v);
	ATF_CHECK(json_is_null(at(o, "axes.network.egress.allowed")));
	json_decref(o);

	/* A list never makes an L1.5 fence's network anything but its own. */
	e = egress_expect();
	e.pe_tier = TIER_L15;
	ATF_REQUIRE_EQ(judge(egress_report(), &e, &v), 0);
	CHECK_AXIS(&v, AXIS_NETWORK, VERDICT_NOT_MEASURED);
	CHECK_LEVEL(&v, LEVEL_L15);
}

ATF_TC_WITHOUT_HEAD(egress_refused_reached);
ATF_TC_BODY(egress_refused_reached, tc)
{
	struct probe_expect	 e = egress_expect();
	struct probe_verdict	 v;
	json_t			*r;

	r = egress_report();
	set(r, "network.egress.refused", egress_try(EG_REFUSED, 200, ""));
	ATF_REQUIRE_EQ(judge(r, &e, &v), 0);
	CHECK_LEVEL(&v, LEVEL_L15);
	ATF_CHECK(!level_satisfies(v.pv_level, LEVEL_L2));
	CHECK_AXIS(&v, AXIS_NETWORK, VERDICT_NOT_FENCED);
	CHECK_VIOLATION(&v, AXIS_NETWORK, "network: " EG_REFUSED ", not in "
	    "the list, reached through the proxy");

	/* "reached" alone, or status 200 alone, is enough. */
	r = egress_report();
	set(r, "network.egress.refused.reached", json_true());
	ATF_REQUIRE_EQ(judge(r, &e, &v), 0);
	CHECK_AXIS(&v, AXIS_NETWORK, VERDICT_NOT_FENCED);
	r = egress_report();
	set(r, "network.egress.refused.status", json_integer(200));
	ATF_REQUIRE_EQ(judge(r, &e, &v), 0);
	CHECK_AXIS(&v, AXIS_NETWORK, VERDICT_NOT_FENCED);
	CHECK_LEVEL(&v, LEVEL_L15);

	/* The strict network's violations still hold, beside it. */
	r = egress_report();
	set(r, "network.egress.refused", egress_try(EG_REFUSED, 200, ""));
	set(r, "network.canary.connected", json_true());
	ATF_REQUIRE_EQ(judge(r, &e, &v), 0);
	CHECK_VIOLATION(&v, AXIS_NETWORK, "network: canary reached");
	CHECK_VIOLATION(&v, AXIS_NETWORK, "reached through the proxy");
	e = egress_expect();
	e.pe_host.ph_canary_seen = 1;
	ATF_REQUIRE_EQ(judge(egress_report(), &e, &v), 0);
	CHECK_AXIS(&v, AXIS_NETWORK, VERDICT_NOT_FENCED);
	CHECK_VIOLATION(&v, AXIS_NETWORK, "network: pid 1 shares the host's "
	    "network");
	CHECK_LEVEL(&v, LEVEL_L15);

	/* The refused target on the list after all tests nothing. */
	e = egress_expect();
	strlcpy(e.pe_egress[0], "*.refused.invalid:443",
	    sizeof(e.pe_egress[0]));
	strlcpy(e.pe_egress_refused, "x.refused.invalid:443",
	    sizeof(e.pe_egress_refused));
	r = egress_report();
	set(r, "network.egress.refused.target",
	    json_string("x.refused.invalid:443"));
	ATF_REQUIRE_EQ(judge(r, &e, &v), 0);
	CHECK_AXIS(&v, AXIS_NETWORK, VERDICT_NOT_MEASURED);
	ATF_CHECK_STREQ(v.pv_axes[AXIS_NETWORK].av_reason,
	    "the refused target is on the list");
	CHECK_LEVEL(&v, LEVEL_L15);
}

ATF_TC_WITHOUT_HEAD(egress_not_measured);
ATF_TC_BODY(egress_not_measured, tc)
{
	struct probe_expect	 e = egress_expect();
	struct probe_verdict	 v;
	json_t			*r, *o;

	/* No egress object: a fence with a list is not measured. */
	ATF_REQUIRE_EQ(judge(l2_report(), &e, &v), 0);
	CHECK_AXIS(&v, AXIS_NETWORK, VERDICT_NOT_MEASURED);
	ATF_CHECK_STREQ(v.pv_axes[AXIS_NETWORK].av_reason,
	    "no egress section");
	CHECK_LEVEL(&v, LEVEL_L15);
	ATF_CHECK(!level_satisfies(v.pv_level, LEVEL_L2));
	o = boundary(&v);
	ATF_CHECK_STREQ(json_string_value(at(o, "axes.network.reason")),
	    "no egress section");
	ATF_CHECK(json_is_null(at(o, "axes.network.egress.allowed")));
	ATF_CHECK_EQ(json_array_size(at(o, "axes.network.egress.list")), 2);
	json_decref(o);

	/* ...but its violations stand. */
	r = l2_report();
	set(r, "network.canary.connected", json_true());
	ATF_REQUIRE_EQ(judge(r, &e, &v), 0);
	CHECK_AXIS(&v, AXIS_NETWORK, VERDICT_NOT_FENCED);

	/* Checks of other targets than the ones asked. */
	r = egress_report();
	set(r, "network.egress.allowed.target",
	    json_string("other.example.com:443"));
	ATF_REQUIRE_EQ(judge(r, &e, &v), 0);
	CHECK_AXIS(&v, AXIS_NETWORK, VERDICT_NOT_MEASURED);
	ATF_CHECK_STREQ(v.pv_axes[AXIS_NETWORK].av_reason,
	    "egress targets not the ones asked");
	CHECK_LEVEL(&v, LEVEL_L15);
	r = egress_report();
	set(r, "network.egress.refused.target",
	    json_string("egress-refused.invalid:80"));
	ATF_REQUIRE_EQ(judge(r, &e, &v), 0);
	CHECK_AXIS(&v, AXIS_NETWORK, VERDICT_NOT_MEASURED);
	r = egress_report();
	set(r, "network.egress.refused", json_null());
	ATF_REQUIRE_EQ(judge(r, &e, &v), 0);
	CHECK_AXIS(&v, AXIS_NETWORK, VERDICT_NOT_MEASURED);
	r = egress_report();
	set(r, "network.egress.allowed", json_null());
	ATF_REQUIRE_EQ(judge(r, &e, &v), 0);
	CHECK_AXIS(&v, AXIS_NETWORK, VERDICT_NOT_MEASURED);
	/* An allowed target tried where none was asked. */
	e.pe_egress_allowed[0] = '\0';
	ATF_REQUIRE_EQ(judge(egress_report(), &e, &v), 0);
	CHECK_AXIS(&v, AXIS_NETWORK, VERDICT_NOT_MEASURED);
	ATF_CHECK_STREQ(v.pv_axes[AXIS_NETWORK].av_reason,
	    "egress targets not the ones asked");

	/* The canary not run: not measured, as without a list. */
	e = egress_expect();
	e.pe_canary = CANARY_NOT_RUN;
	ATF_REQUIRE_EQ(judge(egress_report(), &e, &v), 0);
	CHECK_AXIS(&v, AXIS_NETWORK, VERDICT_NOT_MEASURED);
	ATF_CHECK_STREQ(v.pv_axes[AXIS_NETWORK].av_reason,
	    "no canary was run");
}

/* Without a list the egress object is only the fence's word: ignored. */
ATF_TC_WITHOUT_HEAD(egress_without_list);
ATF_TC_BODY(egress_without_list, tc)
{
	struct probe_expect	 e = l2_expect();
	struct probe_verdict	 v;
	json_t			*r, *o;

	r = egress_report();
	set(r, "network.egress.refused", egress_try(EG_REFUSED, 200, ""));
	ATF_REQUIRE_EQ(judge(r, &e, &v), 0);
	CHECK_LEVEL(&v, LEVEL_L2);
	CHECK_AXIS(&v, AXIS_NETWORK, VERDICT_FENCED);
	ATF_CHECK_EQ(v.pv_negress, 0);
	o = boundary(&v);
	ATF_CHECK(json_object_get(at(o, "axes.network"), "egress") == NULL);
	json_decref(o);
	/* Nor does a clean one make a fence without a list allowlisted. */
	ATF_REQUIRE_EQ(judge(egress_report(), &e, &v), 0);
	CHECK_AXIS(&v, AXIS_NETWORK, VERDICT_FENCED);
	CHECK_LEVEL(&v, LEVEL_L2);
	e = expect(TIER_L15);
	ATF_REQUIRE_EQ(judge(egress_report(), &e, &v), 0);
	CHECK_AXIS(&v, AXIS_NETWORK, VERDICT_PASSES);
}

/* A hostile egress object: the report is malformed, the level unmeasured. */
ATF_TC_WITHOUT_HEAD(egress_hostile);
ATF_TC_BODY(egress_hostile, tc)
{
	static const struct {
		const char	*h_path;	/* under network.egress */
		const char	*h_json;	/* NULL: delete */
	} bad[] = {
		{ "allowed.target", "\"EVIL.example.com:443\"" },
		{ "allowed.target", "\"*.cdn.example.com:443\"" },
		{ "allowed.target", "\"10.0.0.1:443\"" },
		{ "allowed.target", "\"api.example.com:0\"" },
		{ "allowed.target", "\"api.example.com\"" },
		{ "allowed.target", "\"api.example.com:443\\r\\nX: y\"" },
		{ "allowed.target", "\"\"" },
		{ "allowed.target", "443" },
		{ "allowed.target", "null" },
		{ "allowed.status", "200000" },
		{ "allowed.status", "-1" },
		{ "allowed.status", "4611686018427387904" },
		{ "allowed.status", "\"200\"" },
		{ "allowed.status", "200.0" },
		{ "allowed.proxy", "1" },
		{ "allowed.reached", "\"yes\"" },
		{ "allowed.reached", "null" },
		{ "allowed.code", "5" },
		{ "allowed.code", "null" },
		{ "allowed.code", "\"not listed\"" },
		{ "allowed.code", "\"NOT-LISTED\"" },
		{ "allowed.code", "\"caf\\u00e9\"" },
		{ "allowed.code",
		    "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"" },
		{ "allowed.error", "\"two words\"" },
		{ "allowed.error", "7" },
		{ "allowed.ms", "-5" },
		{ "allowed.extra", "1" },
		{ "allowed.ms", NULL },
		{ "allowed", "[]" },
		{ "allowed", "\"api.example.com:443\"" },
		{ "refused", "true" },
		{ "refused", NULL },
		{ "proxy", "null" },
		{ "proxy", "3128" },
		{ "extra", "{}" },
	};
	struct probe_expect	 e = egress_expect();
	struct probe_verdict	 v;
	json_t			*r, *val;
	char			 path[128], big[512];
	size_t			 i;

	for (i = 0; i < nitems(bad); i++) {
		r = egress_report();
		snprintf(path, sizeof(path), "network.egress.%s",
		    bad[i].h_path);
		if (bad[i].h_json == NULL)
			set(r, path, NULL);
		else {
			val = json_loads(bad[i].h_json, JSON_DECODE_ANY, NULL);
			ATF_REQUIRE_MSG(val != NULL, "%s", bad[i].h_json);
			set(r, path, val);
		}
		ATF_CHECK_EQ_MSG(judge(r, &e, &v), -1, "%s = %s", path,
		    bad[i].h_json != NULL ? bad[i].h_json : "deleted");
		CHECK_LEVEL(&v, LEVEL_UNMEASURED);
		ATF_CHECK_MSG(strstr(v.pv_reason, "network.egress") != NULL,
		    "%s: %s", path, v.pv_reason);
	}
	/* Over-long strings, each past its bound. */
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	r = egress_report();
	set(r, "network.egress.proxy", json_string(big));
	ATF_CHECK_EQ(judge(r, &e, &v), -1);
	ATF_CHECK(strstr(v.pv_reason, "string too long") != NULL);
	memcpy(big + 300, ":443", 5);
	r = egress_report();
	set(r, "network.egress.refused.target", json_string(big));
	ATF_CHECK_EQ(judge(r, &e, &v), -1);
	ATF_CHECK(strstr(v.pv_reason, "string too long") != NULL);
	/* A name of 254 bytes, too long for a list entry. */
	memcpy(big + 254, ":443", 5);
	r = egress_report();
	set(r, "network.egress.refused.target", json_string(big));
	ATF_CHECK_EQ(judge(r, &e, &v), -1);
	/* An egress object that is no object. */
	r = egress_report();
	set(r, "network.egress", json_string("allowlisted"));
	ATF_CHECK_EQ(judge(r, &e, &v), -1);
	r = egress_report();
	set(r, "network.egress", json_null());
	ATF_CHECK_EQ(judge(r, &e, &v), -1);
	/* The same bounds hold where no list is known. */
	e = l2_expect();
	r = egress_report();
	set(r, "network.egress.refused.status", json_integer(1000));
	ATF_CHECK_EQ(judge(r, &e, &v), -1);
	CHECK_LEVEL(&v, LEVEL_UNMEASURED);
}

/* A shared network is no violation where it is shared by design. */
ATF_TC_WITHOUT_HEAD(l15_network);
ATF_TC_BODY(l15_network, tc)
{
	struct probe_expect	 e;
	struct probe_verdict	 v;

	e = expect(TIER_L15);
	ATF_REQUIRE_EQ(judge(base(), &e, &v), 0);
	CHECK_AXIS(&v, AXIS_NETWORK, VERDICT_PASSES);
	ATF_CHECK_EQ(v.pv_axes[AXIS_NETWORK].av_nviolations, 0);
	/* ...but one with no network at all measures as fenced: L2. */
	e = l2_expect();
	e.pe_tier = TIER_L15;
	ATF_REQUIRE_EQ(judge(l2_report(), &e, &v), 0);
	CHECK_AXIS(&v, AXIS_NETWORK, VERDICT_FENCED);
	CHECK_LEVEL(&v, LEVEL_L2);
	/* Only lo, but the canary not run: passes. */
	e.pe_canary = CANARY_NOT_RUN;
	ATF_REQUIRE_EQ(judge(l2_report(), &e, &v), 0);
	CHECK_AXIS(&v, AXIS_NETWORK, VERDICT_PASSES);
	CHECK_LEVEL(&v, LEVEL_L15);
}

/* gVisor: Seccomp 0, no NoNewPrivs line, no boot_id. */
static json_t *
runsc_report(void)
{
	json_t	*r = l2_report();

	set(r, "identity.bootId", json_null());
	set(r, "identity.kernel.version", json_string("#1 SMP Sun Jan 10 "
	    "15:06:54 PST 2016"));
	set(r, "sandboxHints.seccomp", json_integer(0));
	set(r, "sandboxHints.noNewPrivs", json_null());
	return (r);
}

/*
 * The host's reading of a runsc fence as this machine shows it: the
 * sandbox as nobody in a user namespace of its own (mapping only
 * nobody), holding CAP_SYS_ADMIN and CAP_SYS_CHROOT there, in the
 * host's pid namespace, filtered; the gofer's mounts read-only.
 */
static struct probe_expect
runsc_expect(void)
{
	struct probe_expect	 e = l2_expect();
	struct probe_host	*h = &e.pe_host;
	int			 i;

	expect_backend(&e, BACKEND_RUNSC);
	for (i = 0; i < 4; i++)
		h->ph_uid[i] = 65534;
	h->ph_nspid_depth = 1;
	h->ph_nspid_last = 31337;
	h->ph_cap[HOST_CAP_EFF] = h->ph_cap[HOST_CAP_PRM] =
	    h->ph_cap[HOST_CAP_AMB] = 0x240000ULL;
	h->ph_cap[HOST_CAP_BND] = 0x1ffffffffffULL;
	h->ph_userns_own = 1;
	h->ph_files_apart = 1;
	return (e);
}

/* The filesystem axis's check of /usr as gVisor answers: EACCES. */
static json_t *
runsc_report_eacces(void)
{
	json_t	*r = runsc_report();

	set(r, "filesystem.paths.1.error", json_string("EACCES"));
	set(r, "filesystem.paths.2.error", json_string("EACCES"));
	return (r);
}

ATF_TC_WITHOUT_HEAD(l3_host_reading);
ATF_TC_BODY(l3_host_reading, tc)
{
	struct probe_expect	 e;
	struct probe_verdict	 v;

	e = runsc_expect();
	ATF_REQUIRE_EQ(judge(runsc_report_eacces(), &e, &v), 0);
	CHECK_AXIS(&v, AXIS_FILESYSTEM, VERDICT_FENCED);
	CHECK_AXIS(&v, AXIS_PROCESSES, VERDICT_FENCED);
	CHECK_AXIS(&v, AXIS_NETWORK, VERDICT_FENCED);
	CHECK_LEVEL(&v, LEVEL_L3);

	/* The gofer's /usr writable in the host's eyes: no L3. */
	e = runsc_expect();
	e.pe_host.ph_usr_ro = 0;
	ATF_REQUIRE_EQ(judge(runsc_report_eacces(), &e, &v), 0);
	CHECK_VIOLATION(&v, AXIS_FILESYSTEM,
	    "filesystem: /usr of the gofer is not mounted read-only");
	CHECK_LEVEL(&v, LEVEL_NOT_EARNED);
	/* A host path the bundle should not have bound. */
	e = runsc_expect();
	e.pe_host.ph_nbad = 1;
	strlcpy(e.pe_host.ph_bad[0], "/var on /var", PROBE_HOST_PATH_LEN);
	ATF_REQUIRE_EQ(judge(runsc_report_eacces(), &e, &v), 0);
	CHECK_VIOLATION(&v, AXIS_FILESYSTEM,
	    "filesystem: host path /var on /var bound in");
	CHECK_LEVEL(&v, LEVEL_NOT_EARNED);
	/* The sentry's own table holding a host filesystem. */
	e = runsc_expect();
	e.pe_host.ph_inner_nhost = 2;
	ATF_REQUIRE_EQ(judge(runsc_report_eacces(), &e, &v), 0);
	CHECK_VIOLATION(&v, AXIS_FILESYSTEM, "filesystem: the sandbox's own "
	    "mount table holds 2 mounts of the host's");
	/* The gofer not read at all: what is not read is not granted. */
	e = runsc_expect();
	e.pe_host.ph_files_apart = 0;
	ATF_REQUIRE_EQ(judge(runsc_report_eacces(), &e, &v), 0);
	CHECK_VIOLATION(&v, AXIS_FILESYSTEM,
	    "filesystem: the host did not read the gofer's mounts");
	CHECK_LEVEL(&v, LEVEL_NOT_EARNED);

	/* The sandbox in the host's user namespace, or as root. */
	e = runsc_expect();
	e.pe_host.ph_userns_own = 0;
	ATF_REQUIRE_EQ(judge(runsc_report_eacces(), &e, &v), 0);
	CHECK_VIOLATION(&v, AXIS_PROCESSES, "processes: the sandbox is in "
	    "the host's user namespace");
	CHECK_LEVEL(&v, LEVEL_NOT_EARNED);
	e = runsc_expect();
	e.pe_host.ph_userns_root = 1;
	ATF_REQUIRE_EQ(judge(runsc_report_eacces(), &e, &v), 0);
	CHECK_VIOLATION(&v, AXIS_PROCESSES, "processes: the sandbox's user "
	    "namespace maps the host's uid 0");
	CHECK_LEVEL(&v, LEVEL_NOT_EARNED);
	e = runsc_expect();
	e.pe_host.ph_uid[1] = 0;
	ATF_REQUIRE_EQ(judge(runsc_report_eacces(), &e, &v), 0);
	CHECK_VIOLATION(&v, AXIS_PROCESSES,
	    "processes: the sandbox runs as uid 0");

	/* Capabilities over the host's own: fenced axes, but no L3. */
	e = runsc_expect();
	e.pe_host.ph_userns_own = 0;
	e.pe_host.ph_cap[HOST_CAP_EFF] = 0x2000;
	ATF_REQUIRE_EQ(judge(runsc_report_eacces(), &e, &v), 0);
	CHECK_VIOLATION(&v, AXIS_PRIVILEGES,
	    "privileges: the sandbox has CapEff 0000000000002000");
	ATF_CHECK(v.pv_level != LEVEL_L3);
	/* ...or seen inside (a bundle that gives one). */
	e = runsc_expect();
	{
		json_t *r = runsc_report_eacces();

		set(r, "sandboxHints.capEff", json_string("0000000000002000"));
		ATF_REQUIRE_EQ(judge(r, &e, &v), 0);
	}
	CHECK_AXIS(&v, AXIS_FILESYSTEM, VERDICT_FENCED);
	CHECK_VIOLATION(&v, AXIS_PRIVILEGES,
	    "privileges: CapEff is 0000000000002000");
	CHECK_LEVEL(&v, LEVEL_L1);

	/* EACCES for /usr is gVisor's answer, not a native fence's. */
	e = l2_expect();
	ATF_REQUIRE_EQ(judge(runsc_report_eacces(), &e, &v), 0);
	CHECK_VIOLATION(&v, AXIS_FILESYSTEM,
	    "filesystem: /usr not read-only (EACCES)");
}

ATF_TC_WITHOUT_HEAD(l3_and_l4);
ATF_TC_BODY(l3_and_l4, tc)
{
	struct probe_expect	 e = runsc_expect();
	struct probe_verdict	 v;
	json_t			*r;

	ATF_REQUIRE_EQ(judge(runsc_report(), &e, &v), 0);
	CHECK_AXIS(&v, AXIS_KERNEL, VERDICT_SEPARATE);
	CHECK_AXIS(&v, AXIS_PRIVILEGES, VERDICT_NOT_FENCED);
	CHECK_LEVEL(&v, LEVEL_L3);
	e = l2_expect();

	/* The same from a VM: another boot_id and release. */
	expect_backend(&e, BACKEND_VM);
	r = l2_report();
	set(r, "identity.bootId",
	    json_string("99999999-1111-2222-3333-444444444444"));
	set(r, "identity.kernel.release", json_string("6.1.0-guest"));
	ATF_REQUIRE_EQ(judge(r, &e, &v), 0);
	CHECK_AXIS(&v, AXIS_KERNEL, VERDICT_SEPARATE);
	CHECK_LEVEL(&v, LEVEL_L4);

	/* Capabilities in the guest: no L4. */
	r = l2_report();
	set(r, "identity.kernel.release", json_string("6.1.0-guest"));
	set(r, "sandboxHints.capEff", json_string("00000000a80425fb"));
	ATF_REQUIRE_EQ(judge(r, &e, &v), 0);
	CHECK_AXIS(&v, AXIS_KERNEL, VERDICT_SEPARATE);
	CHECK_LEVEL(&v, LEVEL_L1);

	/* A runsc fence whose kernel is the host's is no L3. */
	e = runsc_expect();
	r = runsc_report();
	set(r, "identity.bootId", json_string(HOST_BOOT_ID));
	set(r, "identity.kernel.version", json_string("#1 SMP test"));
	ATF_REQUIRE_EQ(judge(r, &e, &v), 0);
	CHECK_AXIS(&v, AXIS_KERNEL, VERDICT_SHARED);
	CHECK_LEVEL(&v, LEVEL_L1);

	/* A separate kernel on the native backend earns no L3 either. */
	e = l2_expect();
	ATF_REQUIRE_EQ(judge(runsc_report(), &e, &v), 0);
	CHECK_LEVEL(&v, LEVEL_L1);
}

/* A vm fence with the layer inside (`inner runsc'): gVisor answers. */
static struct probe_expect
inner_expect(void)
{
	struct probe_expect	 e = l2_expect();

	expect_backend(&e, BACKEND_VM);
	e.pe_traits.pt_inner = PROBE_KERNEL_USER;
	return (e);
}

static json_t *
inner_report(void)
{
	json_t	*r = runsc_report_eacces();

	set(r, "identity.kernel.release", json_string("4.4.0"));
	set(r, "surface.io_uring", json_string("ok"));
	return (r);
}

/* The boundary's "inner" of v, its "kernel" and "verdict" joined. */
static void
check_inner_json(const struct probe_verdict *v, const char *kernel,
    const char *verdict)
{
	json_t	*o = boundary(v), *in;

	in = json_object_get(o, "inner");
	ATF_REQUIRE(in != NULL);
	if (kernel == NULL)
		ATF_CHECK(json_is_null(in));
	else {
		ATF_CHECK_STREQ(json_string_value(json_object_get(in,
		    "kernel")), kernel);
		ATF_CHECK_STREQ(json_string_value(json_object_get(in,
		    "verdict")), verdict);
	}
	json_decref(o);
}

ATF_TC_WITHOUT_HEAD(l4_inner);
ATF_TC_BODY(l4_inner, tc)
{
	struct probe_expect	 e;
	struct probe_verdict	 v;
	json_t			*r, *o;

	/*
	 * gVisor's answers in a vm fence that asked for them: EACCES for
	 * /usr and /etc, no NoNewPrivs line, no boot_id, io_uring reaching
	 * the sentry: L4, both layers in the boundary.
	 */
	e = inner_expect();
	ATF_REQUIRE_EQ(judge(inner_report(), &e, &v), 0);
	CHECK_AXIS(&v, AXIS_FILESYSTEM, VERDICT_FENCED);
	CHECK_AXIS(&v, AXIS_PROCESSES, VERDICT_FENCED);
	CHECK_AXIS(&v, AXIS_NETWORK, VERDICT_FENCED);
	CHECK_AXIS(&v, AXIS_KERNEL, VERDICT_SEPARATE);
	CHECK_AXIS(&v, AXIS_PRIVILEGES, VERDICT_NOT_FENCED);
	CHECK_AXIS(&v, AXIS_SURFACE, VERDICT_PASSES);
	CHECK_LEVEL(&v, LEVEL_L4);
	ATF_CHECK_EQ(v.pv_surface_kernel, PROBE_KERNEL_USER);
	ATF_CHECK_EQ(v.pv_inner_verdict, VERDICT_SEPARATE);
	check_inner_json(&v, "user", "separate");
	o = boundary(&v);
	ATF_CHECK_STREQ(json_string_value(at(o, "axes.surface.kernel")),
	    "user");
	json_decref(o);

	/* The plain vm's expectations are not weakened: EACCES is no EROFS. */
	e = inner_expect();
	e.pe_traits.pt_inner = PROBE_KERNEL_HOST;
	ATF_REQUIRE_EQ(judge(inner_report(), &e, &v), 0);
	CHECK_VIOLATION(&v, AXIS_FILESYSTEM,
	    "filesystem: /usr not read-only (EACCES)");
	ATF_CHECK(v.pv_level != LEVEL_L4);
	ATF_CHECK_EQ(v.pv_surface_kernel, PROBE_KERNEL_GUEST);
	check_inner_json(&v, NULL, NULL);

	/*
	 * The layer missing: the guest's Linux kernel answered (a boot_id,
	 * its release, EROFS): the report takes the layer away, and the
	 * fence earns nothing, whatever its axes say.
	 */
	e = inner_expect();
	r = l2_report();
	set(r, "identity.bootId",
	    json_string("99999999-1111-2222-3333-444444444444"));
	set(r, "identity.kernel.release", json_string("6.1.0-guest"));
	ATF_REQUIRE_EQ(judge(r, &e, &v), 0);
	CHECK_AXIS(&v, AXIS_FILESYSTEM, VERDICT_FENCED);
	CHECK_AXIS(&v, AXIS_KERNEL, VERDICT_SEPARATE);
	CHECK_LEVEL(&v, LEVEL_NOT_EARNED);
	ATF_CHECK_EQ(v.pv_inner_verdict, VERDICT_NOT_FENCED);
	ATF_CHECK(strstr(v.pv_inner_reason, "the layer inside is missing: a "
	    "Linux kernel answered (release 6.1.0-guest") != NULL);
	check_inner_json(&v, "user", "not-fenced");
	o = boundary(&v);
	ATF_CHECK(strstr(json_string_value(at(o, "violations.0")),
	    "the layer inside is missing") != NULL);
	json_decref(o);

	/* The host's reading still grants: the jail's /usr writable. */
	e = inner_expect();
	e.pe_host.ph_usr_ro = 0;
	ATF_REQUIRE_EQ(judge(inner_report(), &e, &v), 0);
	CHECK_VIOLATION(&v, AXIS_FILESYSTEM,
	    "filesystem: /usr of pid 1 is not mounted read-only");
	ATF_CHECK(v.pv_level != LEVEL_L4);
	/* ...and capabilities inside still take L4 away. */
	e = inner_expect();
	r = inner_report();
	set(r, "sandboxHints.capEff", json_string("0000000000002000"));
	ATF_REQUIRE_EQ(judge(r, &e, &v), 0);
	ATF_CHECK(v.pv_level != LEVEL_L4);
	/* A report without its identity is unmeasured, the layer too. */
	e = inner_expect();
	r = inner_report();
	set(r, "identity", NULL);
	ATF_REQUIRE_EQ(judge(r, &e, &v), 0);
	CHECK_LEVEL(&v, LEVEL_UNMEASURED);
	ATF_CHECK_EQ(v.pv_inner_verdict, VERDICT_NOT_MEASURED);
}

ATF_TC_WITHOUT_HEAD(kernel_axis);
ATF_TC_BODY(kernel_axis, tc)
{
	struct probe_expect	 e = expect(TIER_L15);
	struct probe_verdict	 v;
	json_t			*r;

	memset(e.pe_boot_id, 0, sizeof(e.pe_boot_id));
	memset(e.pe_release, 0, sizeof(e.pe_release));
	memset(e.pe_version, 0, sizeof(e.pe_version));
	ATF_REQUIRE_EQ(judge(base(), &e, &v), 0);
	CHECK_AXIS(&v, AXIS_KERNEL, VERDICT_NOT_MEASURED);
	CHECK_LEVEL(&v, LEVEL_L15);

	e = expect(TIER_L15);
	r = base();
	set(r, "identity.kernel.version", json_string("#2 SMP other"));
	ATF_REQUIRE_EQ(judge(r, &e, &v), 0);
	CHECK_AXIS(&v, AXIS_KERNEL, VERDICT_SEPARATE);
	ATF_CHECK_STREQ(v.pv_version, "#2 SMP other");
}

/* One change to the base report, one filesystem violation. */
static void
fs_case(const char *path, json_t *value, const char *violation)
{
	struct probe_expect	 e = expect(TIER_L15);
	struct probe_verdict	 v;
	json_t			*r = base();

	set(r, path, value);
	ATF_REQUIRE_EQ(judge(r, &e, &v), 0);
	CHECK_LEVEL(&v, LEVEL_NOT_EARNED);
	CHECK_AXIS(&v, AXIS_FILESYSTEM, VERDICT_NOT_FENCED);
	CHECK_VIOLATION(&v, AXIS_FILESYSTEM, violation);
}

ATF_TC_WITHOUT_HEAD(filesystem_not_fenced);
ATF_TC_BODY(filesystem_not_fenced, tc)
{
	fs_case("filesystem.paths.1.writable", json_true(),
	    "filesystem: /usr writable");
	fs_case("filesystem.paths.2.error", json_string("EACCES"),
	    "filesystem: /etc not read-only (EACCES)");
	fs_case("filesystem.paths.7.writable", json_false(),
	    "filesystem: HOME not writable");
	fs_case("filesystem.paths.7.path", json_null(),
	    "filesystem: HOME not set");
	fs_case("filesystem.hostPaths.0.readable", json_true(),
	    "filesystem: host secret /var/lib/test/secret readable");
	fs_case("filesystem.hostPaths", json_array(),
	    "filesystem: host secret not checked");
	fs_case("filesystem.paths.9.writable", json_true(),
	    "filesystem: /proc/sys writable");
	fs_case("filesystem.paths.10", json_pack("{s:s,s:s,s:b,s:b,s:i,s:b,"
	    "s:s}", "label", "/sys", "path", "/sys", "exists", 1, "listable", 1,
	    "entries", 10, "writable", 0, "error", "EROFS"),
	    "filesystem: /sys visible (10 entries)");
	fs_case("filesystem.paths.1", json_pack("{s:s,s:n,s:b,s:b,s:n,s:b,"
	    "s:s}", "label", "/opt", "path", "exists", 0, "listable", 0,
	    "entries", "writable", 0, "error", "ENOENT"),
	    "filesystem: /usr not reported");
	fs_case("sandboxHints.namespaces.mnt.inode", json_integer(HOST_NS_MNT),
	    "filesystem: mount namespace is the host's");
}

ATF_TC_WITHOUT_HEAD(filesystem_empty_sys);
ATF_TC_BODY(filesystem_empty_sys, tc)
{
	struct probe_expect	 e = expect(TIER_L15);
	struct probe_verdict	 v;
	json_t			*r = base();

	/* An empty /sys is as good as none. */
	set(r, "filesystem.paths.10", json_pack("{s:s,s:s,s:b,s:b,s:i,s:b,"
	    "s:s}", "label", "/sys", "path", "/sys", "exists", 1, "listable", 1,
	    "entries", 0, "writable", 0, "error", "EROFS"));
	ATF_REQUIRE_EQ(judge(r, &e, &v), 0);
	CHECK_AXIS(&v, AXIS_FILESYSTEM, VERDICT_FENCED);
	CHECK_LEVEL(&v, LEVEL_L15);
}

static void
proc_case(const char *path, json_t *value, const char *violation)
{
	struct probe_expect	 e = expect(TIER_L15);
	struct probe_verdict	 v;
	json_t			*r = base();

	set(r, path, value);
	ATF_REQUIRE_EQ(judge(r, &e, &v), 0);
	CHECK_LEVEL(&v, LEVEL_NOT_EARNED);
	CHECK_AXIS(&v, AXIS_PROCESSES, VERDICT_NOT_FENCED);
	CHECK_VIOLATION(&v, AXIS_PROCESSES, violation);
}

ATF_TC_WITHOUT_HEAD(processes_not_fenced);
ATF_TC_BODY(processes_not_fenced, tc)
{
	struct probe_expect	 e = expect(TIER_L15);
	struct probe_verdict	 v;
	json_t			*r;

	r = base();
	set(r, "processes.otherUids", json_true());
	set(r, "processes.otherUidSample", json_pack("[i,i]", 0, 999));
	ATF_REQUIRE_EQ(judge(r, &e, &v), 0);
	CHECK_LEVEL(&v, LEVEL_NOT_EARNED);
	CHECK_VIOLATION(&v, AXIS_PROCESSES,
	    "processes: processes of other uids visible (0, 999)");

	proc_case("processes.hostPid.visible", json_true(),
	    "processes: host pid 4242 visible");
	proc_case("processes.hostPid", json_null(),
	    "processes: host pid not checked");
	proc_case("processes.hostPid.pid", json_integer(1),
	    "processes: host pid not checked");
	proc_case("sandboxHints.namespaces.pid.inode",
	    json_integer(HOST_NS_PID),
	    "processes: pid namespace is the host's");
	proc_case("sandboxHints.namespaces.pid.inode", json_null(),
	    "processes: pid namespace not reported");
}

static void
missing_case(const char *section, const char *reason)
{
	struct probe_expect	 e = expect(TIER_L15);
	struct probe_verdict	 v;
	json_t			*r = base();

	set(r, section, NULL);
	ATF_CHECK_EQ(judge(r, &e, &v), 0);
	CHECK_LEVEL(&v, LEVEL_UNMEASURED);
	ATF_CHECK_STREQ(v.pv_reason, reason);
}

ATF_TC_WITHOUT_HEAD(missing_sections);
ATF_TC_BODY(missing_sections, tc)
{
	struct probe_expect	 e = expect(TIER_L15);
	struct probe_verdict	 v;
	json_t			*r;

	missing_case("identity", "no identity section");
	missing_case("sandboxHints", "no sandboxHints section");
	missing_case("filesystem", "no filesystem section");
	missing_case("processes", "no processes section");

	/* Without privileges: no L1.5, but L1 stands. */
	r = base();
	set(r, "privileges", NULL);
	ATF_REQUIRE_EQ(judge(r, &e, &v), 0);
	CHECK_AXIS(&v, AXIS_PRIVILEGES, VERDICT_NOT_MEASURED);
	CHECK_LEVEL(&v, LEVEL_L1);

	/* Without network: no L2, the rest stands. */
	e = l2_expect();
	r = l2_report();
	set(r, "network", NULL);
	ATF_REQUIRE_EQ(judge(r, &e, &v), 0);
	CHECK_AXIS(&v, AXIS_NETWORK, VERDICT_NOT_MEASURED);
	CHECK_LEVEL(&v, LEVEL_L15);

	/* A probe stopped by its alarm says where. */
	r = base();
	set(r, "processes", NULL);
	set(r, "limits", NULL);
	set(r, "tools", NULL);
	set(r, "privileges", NULL);
	set(r, "network", NULL);
	set(r, "incomplete", json_string("processes"));
	ATF_REQUIRE_EQ(judge(r, &e, &v), 0);
	CHECK_LEVEL(&v, LEVEL_UNMEASURED);
	ATF_CHECK_STREQ(v.pv_reason,
	    "no processes section: the probe stopped in processes");

	/* Nothing but the header. */
	r = json_pack("{s:s,s:s}", "probe", "sandbox-probe/1", "when",
	    "2025-06-01T12:00:00Z");
	ATF_REQUIRE_EQ(judge(r, &e, &v), 0);
	CHECK_LEVEL(&v, LEVEL_UNMEASURED);
	CHECK_AXIS(&v, AXIS_FILESYSTEM, VERDICT_NOT_MEASURED);
	CHECK_AXIS(&v, AXIS_KERNEL, VERDICT_NOT_MEASURED);
}

/* Malformed input: -1, unmeasured, a reason. */
static void
bad(const char *buf, size_t len, const char *reason)
{
	struct probe_verdict	 v;

	ATF_CHECK_EQ_MSG(judge_buf(buf, len, &v), -1, "accepted: %.60s", buf);
	CHECK_LEVEL(&v, LEVEL_UNMEASURED);
	ATF_CHECK_MSG(strstr(v.pv_reason, reason) != NULL,
	    "reason \"%s\", not \"%s\"", v.pv_reason, reason);
}

static void
bad_str(const char *s, const char *reason)
{
	bad(s, strlen(s), reason);
}

/* The base report with one change; must be refused for the reason. */
static void
bad_set(const char *path, json_t *value, const char *reason)
{
	json_t	*r = base();
	char	*s;

	set(r, path, value);
	s = json_dumps(r, JSON_COMPACT);
	ATF_REQUIRE(s != NULL);
	json_decref(r);
	bad_str(s, reason);
	free(s);
}

ATF_TC_WITHOUT_HEAD(malformed_truncated);
ATF_TC_BODY(malformed_truncated, tc)
{
	size_t	 len = strlen(base_report), cut;

	for (cut = 0; cut < len; cut += 7)
		bad(base_report, cut, cut == 0 ? "empty report" :
		    "malformed report");
	bad(base_report, len - 1, "malformed report");
}

ATF_TC_WITHOUT_HEAD(malformed_oversized);
ATF_TC_BODY(malformed_oversized, tc)
{
	struct probe_verdict	 v;
	size_t			 len = REPORT_MAX + 1, n = strlen(base_report);
	char			*buf;

	ATF_REQUIRE((buf = malloc(len)) != NULL);
	/* A valid report followed by blanks: refused on its size alone... */
	memcpy(buf, base_report, n);
	memset(buf + n, ' ', len - n);
	bad(buf, len, "over the bound");
	/* ...and accepted one byte shorter. */
	ATF_CHECK_EQ(judge_buf(buf, REPORT_MAX, &v), 0);
	CHECK_LEVEL(&v, LEVEL_L15);
	free(buf);
}

ATF_TC_WITHOUT_HEAD(malformed_nested);
ATF_TC_BODY(malformed_nested, tc)
{
	struct probe_expect	 e = expect(TIER_L15);
	struct probe_verdict	 v;
	json_t			*r;
	char			*buf;
	size_t			 i, n = 10000;

	ATF_REQUIRE((buf = malloc(2 * n + 1)) != NULL);
	for (i = 0; i < n; i++) {
		buf[i] = '[';
		buf[n + i] = ']';
	}
	bad(buf, n, "nested deeper");
	bad(buf, 2 * n, "nested deeper");
	memset(buf, '{', n);
	bad(buf, n, "nested deeper");
	free(buf);
	/* Brackets in a string are no nesting; in a field they are. */
	r = base();
	set(r, "tools.found.node", json_string("[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
	    "[[[[[[[[[[[[[[[[[\"[[[[[[["));
	ATF_CHECK_EQ(judge(r, &e, &v), 0);
	CHECK_LEVEL(&v, LEVEL_L15);
	bad_set("tools.found.node", json_loads("[[[[[[[[[[[[[[[[[[[[0]]]]]]]]]]"
	    "]]]]]]]]]]", 0, NULL), "nested deeper");
}

ATF_TC_WITHOUT_HEAD(malformed_duplicates);
ATF_TC_BODY(malformed_duplicates, tc)
{
	char	 buf[sizeof(base_report) + 64];

	snprintf(buf, sizeof(buf), "{\"probe\":\"sandbox-probe/1\",%s",
	    base_report + 1);
	bad_str(buf, "duplicate object key");
	bad_str(HEADER
	    "\"privileges\":{\"keyctl\":\"ok\",\"keyctl\":\"EPERM\"}}",
	    "duplicate object key");
}

ATF_TC_WITHOUT_HEAD(malformed_utf8);
ATF_TC_BODY(malformed_utf8, tc)
{
	static const char *const seqs[] = {
		"\xff", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80",
		"\xe2\x82"
	};
	struct probe_verdict	 v;
	const char		*p = strstr(base_report, "fence-agent");
	char			 buf[sizeof(base_report) + 16];
	size_t			 i, off;

	ATF_REQUIRE(p != NULL);
	off = (size_t)(p - base_report);
	for (i = 0; i < sizeof(seqs) / sizeof(seqs[0]); i++) {
		snprintf(buf, sizeof(buf), "%.*s%s%s", (int)off, base_report,
		    seqs[i], base_report + off);
		bad_str(buf, "malformed report");
	}
	/* The same with valid UTF-8 passes. */
	snprintf(buf, sizeof(buf), "%.*s\xc3\xa9%s", (int)off, base_report,
	    base_report + off);
	ATF_CHECK_EQ(judge_buf(buf, strlen(buf), &v), 0);
	CHECK_LEVEL(&v, LEVEL_L15);
}

ATF_TC_WITHOUT_HEAD(malformed_nul);
ATF_TC_BODY(malformed_nul, tc)
{
	char	 buf[sizeof(base_report) + 16];
	size_t	 n = strlen(base_report);
	const char *p = strstr(base_report, "fence-agent");

	/* \u0000 in a string. */
	snprintf(buf, sizeof(buf), "%.*s\\u0000%s", (int)(p - base_report),
	    base_report, p);
	bad_str(buf, "malformed report");
	/* A raw NUL after the report, and inside it. */
	memcpy(buf, base_report, n);
	buf[n] = '\0';
	bad(buf, n + 1, "malformed report");
	buf[10] = '\0';
	bad(buf, n, "malformed report");
	/* \u0000 in a key. */
	bad_str(HEADER
	    "\"privileges\":{\"key\\u0000ctl\":\"ok\"}}", "malformed report");
}

ATF_TC_WITHOUT_HEAD(malformed_types);
ATF_TC_BODY(malformed_types, tc)
{
	bad_set("sandboxHints.seccomp", json_string("2"),
	    "sandboxHints.seccomp: wrong type");
	bad_set("sandboxHints.seccomp", json_real(2.0),
	    "sandboxHints.seccomp: wrong type");
	bad_set("sandboxHints.seccomp", json_integer(3),
	    "sandboxHints.seccomp: number out of range");
	bad_set("identity.uid", json_integer(-1),
	    "identity.uid: number out of range");
	bad_set("identity.groups", json_string("x"),
	    "identity.groups: wrong type");
	bad_set("filesystem.paths", json_object(),
	    "filesystem.paths: wrong type");
	bad_set("filesystem.paths.1.writable", json_integer(0),
	    "filesystem.paths[1].writable: wrong type");
	bad_set("privileges.keyctl", json_integer(1),
	    "privileges.keyctl: wrong type");
	bad_set("privileges.keyctl", json_string("E PERM"),
	    "privileges.keyctl: malformed string");
	bad_set("privileges.keyctl", json_string("<script>"),
	    "privileges.keyctl: malformed string");
	bad_set("network.interfaces", json_object(),
	    "network.interfaces: wrong type");
	bad_set("sandboxHints.capEff", json_string("0000000000000000 "),
	    "sandboxHints.capEff: string too long");
	bad_set("sandboxHints.capEff", json_string("000000000000000g"),
	    "sandboxHints.capEff: malformed string");
	bad_set("identity.bootId", json_string("not-a-boot-id"),
	    "identity.bootId: malformed string");
	bad_set("probe", json_string("sandbox-probe/2"),
	    "probe: malformed string");
	bad_set("when", json_string("yesterday"), "when: malformed string");
	bad_set("surprise", json_true(), "report: unknown key");
	bad_set("processes.surprise", json_true(),
	    "processes: unknown key");
	bad_set("processes.pid1Agent", NULL, "processes.pid1Agent: missing");
	bad_set("filesystem.paths.3.label", json_string("/usr"),
	    "filesystem.paths: /usr twice");
	bad_set("probe", NULL, "probe: missing");
	bad_str("[]", "report: wrong type");
	bad_str("null", "malformed report");
	bad_str("\"sandbox-probe/1\"", "malformed report");
}

ATF_TC_WITHOUT_HEAD(malformed_bounds);
ATF_TC_BODY(malformed_bounds, tc)
{
	json_t	*paths;
	char	 big[2048];
	int	 i;

	bad_str(HEADER
	    "\"identity\":{\"uid\":99999999999999999999999}}",
	    "malformed report");
	bad_str(HEADER
	    "\"identity\":{\"uid\":1e400}}", "malformed report");
	bad_set("identity.uid", json_integer(4294967296LL),
	    "identity.uid: number out of range");
	paths = json_array();
	for (i = 0; i < 33; i++)
		json_array_append_new(paths, json_pack("{s:s,s:n,s:b,s:b,s:n,"
		    "s:b,s:n}", "label", "/x", "path", "exists", 0,
		    "listable", 0, "entries", "writable", 0, "error"));
	bad_set("filesystem.paths", paths,
	    "filesystem.paths: too many elements");
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	bad_set("processes.pid1Comm", json_string(big),
	    "processes.pid1Comm: string too long");
}

/* What the fence sent may appear in a reason, but never raw. */
ATF_TC_WITHOUT_HEAD(reason_sanitized);
ATF_TC_BODY(reason_sanitized, tc)
{
	struct probe_verdict	 v;
	const char		*s = "{\"probe\":\x01\x1b[2J\xe2\x80\xae}";
	size_t			 i;

	ATF_CHECK_EQ(judge_buf(s, strlen(s), &v), -1);
	ATF_CHECK(v.pv_reason[0] != '\0');
	for (i = 0; v.pv_reason[i] != '\0'; i++)
		ATF_CHECK_MSG(v.pv_reason[i] >= 0x20 && v.pv_reason[i] < 0x7f,
		    "byte 0x%02x in the reason",
		    (unsigned char)v.pv_reason[i]);
}

/* The worst privileges axis: every violation stored and shown. */
ATF_TC_WITHOUT_HEAD(violations_all_listed);
ATF_TC_BODY(violations_all_listed, tc)
{
	struct probe_expect	 e = expect(TIER_L15);
	struct probe_verdict	 v;
	json_t			*r = l1_report(), *o, *val;
	const char		*k;
	char			*s;

	set(r, "sandboxHints.capEff", json_string("000001fffeffffff"));
	set(r, "sandboxHints.capPrm", json_string("000001fffeffffff"));
	set(r, "sandboxHints.capAmb", json_string("000001fffeffffff"));
	json_object_foreach(at(r, "privileges"), k, val)
		json_string_set(val, "ok");
	ATF_REQUIRE_EQ(judge(r, &e, &v), 0);
	/* Seccomp, NoNewPrivs, 4 capability sets, 10 calls. */
	ATF_CHECK_EQ(v.pv_axes[AXIS_PRIVILEGES].av_nviolations, 16);
	ATF_CHECK_EQ(v.pv_axes[AXIS_PRIVILEGES].av_more, 0);
	CHECK_VIOLATION(&v, AXIS_PRIVILEGES, "privileges: i386 allowed");
	CHECK_VIOLATION(&v, AXIS_PRIVILEGES, "privileges: mount allowed");
	ATF_REQUIRE((s = verdict_json(&v)) != NULL);
	ATF_REQUIRE((o = json_loads(s, 0, NULL)) != NULL);
	ATF_CHECK_EQ(json_array_size(at(o, "axes.privileges.violations")), 16);
	/* And the 8 entries of the surface an L1 fence reaches. */
	ATF_CHECK_EQ(v.pv_axes[AXIS_SURFACE].av_nviolations, 8);
	ATF_CHECK_EQ(json_array_size(at(o, "violations")), 16 + 8);
	json_decref(o);
	free(s);
}

ATF_TC_WITHOUT_HEAD(verdict_json_shape);
ATF_TC_BODY(verdict_json_shape, tc)
{
	struct probe_expect	 e = expect(TIER_L15);
	struct probe_verdict	 v;
	json_t			*o, *r = base();
	char			*s;

	set(r, "sandboxHints.seccomp", json_integer(0));
	ATF_REQUIRE_EQ(judge(r, &e, &v), 0);
	ATF_REQUIRE((s = verdict_json(&v)) != NULL);
	ATF_REQUIRE((o = json_loads(s, JSON_REJECT_DUPLICATES, NULL)) != NULL);
	ATF_CHECK_STREQ(json_string_value(at(o, "level")), "L1");
	ATF_CHECK_STREQ(json_string_value(at(o, "measuredBy")), "probe");
	ATF_CHECK_STREQ(json_string_value(at(o, "when")),
	    "2025-06-01T12:00:00.000Z");
	ATF_CHECK(json_is_null(at(o, "reason")));
	ATF_CHECK_STREQ(json_string_value(at(o,
	    "axes.filesystem.verdict")), "fenced");
	ATF_CHECK_STREQ(json_string_value(at(o,
	    "axes.privileges.verdict")), "not-fenced");
	ATF_CHECK_STREQ(json_string_value(at(o,
	    "axes.privileges.violations.0")), "privileges: Seccomp is 0");
	ATF_CHECK_STREQ(json_string_value(at(o, "axes.network.verdict")),
	    "passes");
	ATF_CHECK_STREQ(json_string_value(at(o, "axes.kernel.verdict")),
	    "shared");
	ATF_CHECK_EQ(json_array_size(at(o, "violations")), 1);
	ATF_CHECK_STREQ(json_string_value(at(o, "kernel.bootId")),
	    HOST_BOOT_ID);
	json_decref(o);
	free(s);

	/* An unmeasured one says why. */
	ATF_CHECK_EQ(judge_buf("{", 1, &v), -1);
	ATF_REQUIRE((s = verdict_json(&v)) != NULL);
	ATF_REQUIRE((o = json_loads(s, 0, NULL)) != NULL);
	ATF_CHECK_STREQ(json_string_value(at(o, "level")), "unmeasured");
	ATF_CHECK(strstr(json_string_value(at(o, "reason")),
	    "malformed report") != NULL);
	ATF_CHECK_STREQ(json_string_value(at(o,
	    "axes.network.verdict")), "not measured");
	ATF_CHECK(json_is_null(at(o, "kernel.bootId")));
	json_decref(o);
	free(s);
}

ATF_TC_WITHOUT_HEAD(level_names);
ATF_TC_BODY(level_names, tc)
{
	static const char *const names[] = { "unmeasured", "not-earned", "L1",
	    "L1.5", "L2", "L3", "L4" };
	size_t	 i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		ATF_CHECK_EQ(level_parse(names[i]), (int)i);
		ATF_CHECK_STREQ(level_name((int)i), names[i]);
	}
	ATF_CHECK_EQ(level_parse("L1.6"), -1);
	ATF_CHECK_EQ(level_parse(""), -1);
	ATF_CHECK(level_satisfies(LEVEL_L2, LEVEL_L15));
	ATF_CHECK(level_satisfies(LEVEL_L3, LEVEL_L2));
	ATF_CHECK(level_satisfies(LEVEL_L15, LEVEL_L15));
	ATF_CHECK(!level_satisfies(LEVEL_L15, LEVEL_L2));
	ATF_CHECK(!level_satisfies(LEVEL_NOT_EARNED, LEVEL_L1));
	ATF_CHECK(!level_satisfies(LEVEL_UNMEASURED, LEVEL_L1));
	ATF_CHECK(!level_satisfies(LEVEL_NOT_EARNED, LEVEL_NOT_EARNED));
	ATF_CHECK(level_satisfies(LEVEL_UNMEASURED, LEVEL_UNMEASURED));
	ATF_CHECK_STREQ(axis_name(AXIS_KERNEL), "kernel");
	ATF_CHECK_STREQ(verdict_name(VERDICT_NOT_MEASURED), "not measured");
	ATF_CHECK_STREQ(verdict_name(VERDICT_NOT_FENCED), "not-fenced");
	ATF_CHECK_STREQ(verdict_name(VERDICT_ALLOWLISTED), "allowlisted");
}

/*
 * The host's reading grants; the report only takes away.  Each case:
 * a report that says "fenced" everywhere, and a host that does not.
 */
ATF_TC_WITHOUT_HEAD(host_reading_decides);
ATF_TC_BODY(host_reading_decides, tc)
{
	struct probe_expect	 e;
	struct probe_verdict	 v;

	/* The daemon's filter only: Seccomp 2, but no filter of its own. */
	e = expect(TIER_L15);
	e.pe_host.ph_filters = 1;
	ATF_REQUIRE_EQ(judge(base(), &e, &v), 0);
	CHECK_LEVEL(&v, LEVEL_L1);
	CHECK_VIOLATION(&v, AXIS_PRIVILEGES,
	    "privileges: pid 1 has no filter of its own (Seccomp_filters 1)");

	/* Capabilities and no_new_privs, as the host sees them. */
	e = expect(TIER_L15);
	e.pe_host.ph_cap[HOST_CAP_EFF] = 0x20;
	e.pe_host.ph_nnp = 0;
	ATF_REQUIRE_EQ(judge(base(), &e, &v), 0);
	CHECK_LEVEL(&v, LEVEL_L1);
	CHECK_VIOLATION(&v, AXIS_PRIVILEGES,
	    "privileges: pid 1 has CapEff 0000000000000020");
	CHECK_VIOLATION(&v, AXIS_PRIVILEGES, "privileges: pid 1 has NoNewPrivs 0");

	/* pid 1 in the host's pid namespace, or as uid 0. */
	e = expect(TIER_L15);
	e.pe_host.ph_nspid_depth = 1;
	ATF_REQUIRE_EQ(judge(base(), &e, &v), 0);
	CHECK_LEVEL(&v, LEVEL_NOT_EARNED);
	CHECK_VIOLATION(&v, AXIS_PROCESSES, "processes: pid 1 is not pid 1");
	e = expect(TIER_L15);
	e.pe_host.ph_uid[1] = 0;
	ATF_REQUIRE_EQ(judge(base(), &e, &v), 0);
	CHECK_VIOLATION(&v, AXIS_PROCESSES, "processes: pid 1 runs as uid 0");

	/* A host path bound in, / the host's, /usr writable. */
	e = expect(TIER_L15);
	e.pe_host.ph_nbad = 1;
	strlcpy(e.pe_host.ph_bad[0], "/root on /mnt",
	    sizeof(e.pe_host.ph_bad[0]));
	ATF_REQUIRE_EQ(judge(base(), &e, &v), 0);
	CHECK_LEVEL(&v, LEVEL_NOT_EARNED);
	CHECK_VIOLATION(&v, AXIS_FILESYSTEM,
	    "filesystem: host path /root on /mnt bound in");
	e = expect(TIER_L15);
	e.pe_host.ph_root_host = 1;
	e.pe_host.ph_usr_ro = 0;
	e.pe_host.ph_etc_ro = -1;
	ATF_REQUIRE_EQ(judge(base(), &e, &v), 0);
	CHECK_VIOLATION(&v, AXIS_FILESYSTEM,
	    "filesystem: / of pid 1 is the host's");
	CHECK_VIOLATION(&v, AXIS_FILESYSTEM,
	    "filesystem: /usr of pid 1 is not mounted read-only");
	CHECK_VIOLATION(&v, AXIS_FILESYSTEM,
	    "filesystem: pid 1 has no /etc mount");

	/* What cannot be read cannot be granted. */
	e = expect(TIER_L2);
	e.pe_canary = CANARY_NO;
	e.pe_has_host = 0;
	ATF_REQUIRE_EQ(judge(l2_report(), &e, &v), 0);
	CHECK_LEVEL(&v, LEVEL_NOT_EARNED);
	CHECK_VIOLATION(&v, AXIS_FILESYSTEM, "filesystem: the host could not "
	    "judge the mounts of pid 1 (no reading)");
	CHECK_VIOLATION(&v, AXIS_NETWORK, "network: the host could not read");
	e = l2_expect();
	e.pe_host.ph_status_read = 0;
	strlcpy(e.pe_host.ph_status_error, "status: no Seccomp_filters",
	    sizeof(e.pe_host.ph_status_error));
	ATF_REQUIRE_EQ(judge(l2_report(), &e, &v), 0);
	CHECK_LEVEL(&v, LEVEL_NOT_EARNED);
	CHECK_VIOLATION(&v, AXIS_PRIVILEGES, "privileges: the host could not "
	    "read pid 1 (status: no Seccomp_filters)");
}

/*
 * The forgery: an L1.5 fence (or an L1 one) whose report says
 * "only lo, canary unreached" stays on the host's network, and the host
 * sees it there: no L2.
 */
ATF_TC_WITHOUT_HEAD(forged_network_report);
ATF_TC_BODY(forged_network_report, tc)
{
	struct probe_expect	 e;
	struct probe_verdict	 v;

	e = expect(TIER_L15);
	e.pe_canary = CANARY_NO;
	ATF_REQUIRE_EQ(judge(l2_report(), &e, &v), 0);
	CHECK_AXIS(&v, AXIS_NETWORK, VERDICT_PASSES);
	CHECK_LEVEL(&v, LEVEL_L15);
	e = expect(TIER_L1);
	e.pe_canary = CANARY_NO;
	ATF_REQUIRE_EQ(judge(l2_report(), &e, &v), 0);
	CHECK_LEVEL(&v, LEVEL_L1);
	/* An L2 fence the host sees on its network: a violation. */
	e = l2_expect();
	e.pe_host.ph_canary_seen = 1;
	ATF_REQUIRE_EQ(judge(l2_report(), &e, &v), 0);
	CHECK_LEVEL(&v, LEVEL_L15);
	CHECK_VIOLATION(&v, AXIS_NETWORK, "network: pid 1 shares the host's "
	    "network (the canary listener is in its tables)");
	e = l2_expect();
	e.pe_host.ph_nifaces = 2;
	strlcpy(e.pe_host.ph_iface_other, "veth0",
	    sizeof(e.pe_host.ph_iface_other));
	ATF_REQUIRE_EQ(judge(l2_report(), &e, &v), 0);
	CHECK_VIOLATION(&v, AXIS_NETWORK, "network: pid 1 has interface veth0");
}

/* A run that did not end well is unmeasured, whatever it printed. */
ATF_TC_WITHOUT_HEAD(run_not_counted);
ATF_TC_BODY(run_not_counted, tc)
{
	struct probe_expect	 e = l2_expect();
	struct probe_verdict	 v;

	strlcpy(e.pe_run_error, "the probe was killed by signal 9",
	    sizeof(e.pe_run_error));
	ATF_REQUIRE_EQ(judge(l2_report(), &e, &v), -1);
	CHECK_LEVEL(&v, LEVEL_UNMEASURED);
	ATF_CHECK_STREQ(v.pv_reason, "the probe was killed by signal 9");
}

/* The codec carries the reading whole, and an empty report (no NULL). */
ATF_TC_WITHOUT_HEAD(report_message_codec);
ATF_TC_BODY(report_message_codec, tc)
{
	struct probe_expect	 e = l2_expect();
	struct msg_probe_report	 p, q;
	void			*buf;
	size_t			 len;

	e.pe_host.ph_nbad = 11;		/* more than are named */
	strlcpy(e.pe_host.ph_bad[0], "/srv on /srv", sizeof(e.pe_host.ph_bad[0]));
	strlcpy(e.pe_run_error, "the probe exited 1", sizeof(e.pe_run_error));
	memset(&p, 0, sizeof(p));
	strlcpy(p.pr_key, "k1", sizeof(p.pr_key));
	p.pr_expect = &e;
	ATF_REQUIRE_EQ(msg_probe_report_encode(&p, &buf, &len), 0);
	ATF_REQUIRE_EQ(msg_probe_report_decode(buf, len, &q), 0);
	ATF_CHECK_EQ(q.pr_report_len, 0);
	ATF_CHECK_STREQ((char *)q.pr_report, "");
	ATF_CHECK_EQ(q.pr_expect->pe_has_host, 1);
	ATF_CHECK_EQ(q.pr_expect->pe_host.ph_nbad, 11);
	ATF_CHECK_STREQ(q.pr_expect->pe_host.ph_bad[0], "/srv on /srv");
	ATF_CHECK_EQ(q.pr_expect->pe_host.ph_filters, 2);
	ATF_CHECK_EQ(q.pr_expect->pe_host.ph_nspid_depth, 2);
	ATF_CHECK_STREQ(q.pr_expect->pe_run_error, "the probe exited 1");
	ATF_CHECK_EQ(memcmp(&q.pr_expect->pe_host, &e.pe_host,
	    sizeof(e.pe_host)), 0);
	msg_probe_report_free(&q);
	/* Every byte cut short is refused. */
	for (size_t n = 0; n < len; n++)
		ATF_CHECK_EQ(msg_probe_report_decode(buf, n, &q), -1);
	free(buf);
	/* Out of range values are refused by the encoder. */
	e.pe_host.ph_seccomp = 3;
	ATF_CHECK_EQ(msg_probe_report_encode(&p, &buf, &len), -1);
}

#define STATUS_OK "Name:\tfence-agent\nUid:\t61000\t61000\t61000\t61000\n" \
	"NSpid:\t396\t1\nCapInh:\t0000000000000000\n" \
	"CapPrm:\t0000000000000000\nCapEff:\t0000000000000000\n" \
	"CapBnd:\t0000000000000000\nCapAmb:\t0000000000000000\n" \
	"NoNewPrivs:\t1\nSeccomp:\t2\nSeccomp_filters:\t2\n"

ATF_TC_WITHOUT_HEAD(host_status);
ATF_TC_BODY(host_status, tc)
{
	static const char *const bad[] = {
		"Uid:\t1\t2\t3\n",				/* short */
		"Seccomp:\t3\n",				/* range */
		"CapEff:\t00000000000000zz\n",			/* hex */
		"CapEff:\t0\n",					/* width */
		"NSpid:\t0\n",					/* zero */
		"Seccomp_filters:\t99999999999\n",		/* range */
		"no colon here\n",
	};
	struct host_status	 st;
	char			 buf[2048], err[128];
	size_t			 i;

	strlcpy(buf, STATUS_OK, sizeof(buf));
	ATF_REQUIRE_EQ(host_status_parse(buf, &st, err, sizeof(err)), 0);
	ATF_CHECK_EQ(st.hs_uid[2], 61000);
	ATF_CHECK_EQ(st.hs_nspid_depth, 2);
	ATF_CHECK_EQ(st.hs_nspid_last, 1);
	ATF_CHECK_EQ(st.hs_seccomp, 2);
	ATF_CHECK_EQ(st.hs_filters, 2);
	ATF_CHECK_EQ(st.hs_nnp, 1);
	/* Twice, or missing (a kernel without Seccomp_filters). */
	snprintf(buf, sizeof(buf), "%sSeccomp:\t2\n", STATUS_OK);
	ATF_CHECK_EQ(host_status_parse(buf, &st, err, sizeof(err)), -1);
	ATF_CHECK_STREQ(err, "status: Seccomp twice");
	strlcpy(buf, "Uid:\t1\t1\t1\t1\nNSpid:\t5\t1\nNoNewPrivs:\t1\n"
	    "Seccomp:\t2\n", sizeof(buf));
	ATF_CHECK_EQ(host_status_parse(buf, &st, err, sizeof(err)), -1);
	ATF_CHECK_STREQ(err, "status: no Seccomp_filters");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(buf, sizeof(buf), "%s", bad[i]);
		ATF_CHECK_EQ_MSG(host_status_parse(buf, &st, err,
		    sizeof(err)), -1, "%s", bad[i]);
	}
	/*
	 * A one-digit value over a small bound, in a status otherwise
	 * whole: the bound check wrapped (found by fuzz/host_fuzz.c).
	 */
	snprintf(buf, sizeof(buf), "NoNewPrivs:\t5\n%s", STATUS_OK);
	ATF_CHECK_EQ(host_status_parse(buf, &st, err, sizeof(err)), -1);
	ATF_CHECK_STREQ(err, "status: bad NoNewPrivs");
	snprintf(buf, sizeof(buf), "Seccomp:\t9\n%s", STATUS_OK);
	ATF_CHECK_EQ(host_status_parse(buf, &st, err, sizeof(err)), -1);
	ATF_CHECK_STREQ(err, "status: bad Seccomp");
	snprintf(buf, sizeof(buf), "Seccomp:\t3\n%s", STATUS_OK);
	ATF_CHECK_EQ(host_status_parse(buf, &st, err, sizeof(err)), -1);
	ATF_CHECK_STREQ(err, "status: bad Seccomp");
}

/* The fencer's own table, as this machine has it. */
#define HOST_MOUNTS \
	"22 27 0:21 / /proc rw,relatime - proc proc rw\n" \
	"24 27 0:6 / /dev rw,relatime - devtmpfs devtmpfs rw\n" \
	"27 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n" \
	"31 27 0:28 / /srv\\040data rw,relatime shared:5 - tmpfs tmpfs rw\n"

/* A native fence's, with the bin folder bound whole. */
#define FENCE_MOUNTS \
	"97 46 0:53 / / ro,nosuid - tmpfs tmpfs rw\n" \
	"98 97 254:0 /usr /usr ro,nosuid,nodev,relatime - ext4 /dev/vda rw\n" \
	"99 97 254:0 /etc /etc ro,nosuid,nodev,relatime - ext4 /dev/vda rw\n" \
	"103 102 254:0 /opt/fenced/bin /run/fenced/bin ro - ext4 /dev/vda rw\n" \
	"105 104 254:0 /home/u/sandbox-homes/k /home/u rw - ext4 /dev/vda rw\n" \
	"107 106 0:6 /null /dev/null rw - devtmpfs devtmpfs rw\n" \
	"114 97 0:60 / /proc rw - proc proc rw\n" \
	"116 114 0:6 /null /proc/keys rw - devtmpfs devtmpfs rw\n"

static const char *const allow[] = {
	"/usr", "/etc", "/dev/null", "/opt/fenced/bin",
	"/opt/fenced/bin/fence-agent", "/opt/fenced/bin/fence-probe",
	"/home/u/sandbox-homes/k"
};

static void
mounts_judge(const char *fence, struct probe_host *ph)
{
	struct host_mount	 fm[32], hm[32];
	char			 fb[4096], hb[4096], err[128];
	int			 nf, nh;

	strlcpy(hb, HOST_MOUNTS, sizeof(hb));
	strlcpy(fb, fence, sizeof(fb));
	memset(ph, 0, sizeof(*ph));
	ATF_REQUIRE((nh = host_mounts_parse(hb, hm, 32, HOST_MOUNTS_HOST,
	    err, sizeof(err))) == 4);
	ATF_REQUIRE_MSG((nf = host_mounts_parse(fb, fm, 32, HOST_MOUNTS_FENCE,
	    err, sizeof(err))) > 0, "%s", err);
	host_mounts_judge(fm, nf, hm, nh, allow, 7, NULL, ph);
}

ATF_TC_WITHOUT_HEAD(host_mounts);
ATF_TC_BODY(host_mounts, tc)
{
	struct host_mount	 m[4];
	struct probe_host	 ph;
	char			 buf[1024], err[128];

	mounts_judge(FENCE_MOUNTS, &ph);
	ATF_CHECK_EQ(ph.ph_nbad, 0);
	ATF_CHECK_EQ(ph.ph_root_host, 0);
	ATF_CHECK_EQ(ph.ph_usr_ro, 1);
	ATF_CHECK_EQ(ph.ph_etc_ro, 1);
	/* Only the two programs bound, not the folder: passes too. */
	mounts_judge("97 46 0:53 / / ro - tmpfs tmpfs rw\n"
	    "98 97 254:0 /usr /usr ro - ext4 /dev/vda rw\n"
	    "99 97 254:0 /etc /etc ro - ext4 /dev/vda rw\n"
	    "103 102 254:0 /opt/fenced/bin/fence-agent /run/fenced/agent ro "
	    "- ext4 /dev/vda rw\n"
	    "104 102 254:0 /opt/fenced/bin/fence-probe /run/fenced/probe ro "
	    "- ext4 /dev/vda rw\n", &ph);
	ATF_CHECK_EQ(ph.ph_nbad, 0);
	/* Anything else of the host is named: the other binaries... */
	mounts_judge(FENCE_MOUNTS
	    "120 102 254:0 /opt/fenced/bin/fenced /run/fenced/fenced ro - "
	    "ext4 /dev/vda rw\n"
	    "121 97 0:28 /x /mnt rw - tmpfs tmpfs rw\n"
	    "122 97 254:0 /etc/shadow /etc/shadow rw - ext4 /dev/vda rw\n",
	    &ph);
	ATF_CHECK_EQ(ph.ph_nbad, 3);
	ATF_CHECK_STREQ(ph.ph_bad[0],
	    "/opt/fenced/bin/fenced on /run/fenced/fenced");
	ATF_CHECK_STREQ(ph.ph_bad[1], "/srv data/x on /mnt");
	ATF_CHECK_STREQ(ph.ph_bad[2], "/etc/shadow on /etc/shadow");
	/* /usr writable, no /etc, / the host's own root. */
	mounts_judge("27 1 254:0 / / rw - ext4 /dev/vda rw\n"
	    "98 27 254:0 /usr /usr rw - ext4 /dev/vda rw\n", &ph);
	ATF_CHECK_EQ(ph.ph_root_host, 1);
	ATF_CHECK_EQ(ph.ph_usr_ro, 0);
	ATF_CHECK_EQ(ph.ph_etc_ro, -1);
	ATF_CHECK(ph.ph_nbad >= 1);
	/* Malformed lines are refused. */
	strlcpy(buf, "1 2 3:4 / / rw\n", sizeof(buf));	/* no " - " */
	ATF_CHECK_EQ(host_mounts_parse(buf, m, 4, HOST_MOUNTS_FENCE, err,
	    sizeof(err)), -1);
	strlcpy(buf, "1 2 3 / / rw - a b c\n", sizeof(buf));
	ATF_CHECK_EQ(host_mounts_parse(buf, m, 4, HOST_MOUNTS_FENCE, err,
	    sizeof(err)), -1);
	strlcpy(buf, "1 2 3:4 /a\\09 / rw - a b c\n", sizeof(buf));
	ATF_CHECK_EQ(host_mounts_parse(buf, m, 4, HOST_MOUNTS_FENCE, err,
	    sizeof(err)), -1);
	strlcpy(buf, "1 2 3:4 /a\\000 / rw - a b c\n", sizeof(buf));
	ATF_CHECK_EQ(host_mounts_parse(buf, m, 4, HOST_MOUNTS_FENCE, err,
	    sizeof(err)), -1);
	strlcpy(buf, "1 2 3:4 / / rw - a b c\n1 2 3:4 / / rw - a b c\n",
	    sizeof(buf));
	ATF_CHECK_EQ(host_mounts_parse(buf, m, 1, HOST_MOUNTS_FENCE, err,
	    sizeof(err)), -1);
}

/*
 * The host's own table as real hosts have it (issue 28): namespace files
 * bound in (ip netns, Docker, podman, CNI), escapes in paths, deleted
 * roots.  What a fence's table may not hold is still refused there.
 */
#define HOST_NETNS \
	"40 27 0:4 net:[4026532301] /run/netns/cni-1\\040a rw shared:9 - " \
	"nsfs nsfs rw\n" \
	"41 27 0:4 mnt:[4026532302] /run/docker/netns/x rw - nsfs nsfs rw\n" \
	"42 27 254:0 /srv//deleted /mnt/a\\012b\\011c\\134d\\040(deleted) rw " \
	"- ext4 /dev/vda rw\n"

ATF_TC_WITHOUT_HEAD(host_mounts_real);
ATF_TC_BODY(host_mounts_real, tc)
{
	static const char *const bad[] = {
		"",			/* no mounts: 0 here, an error below */
		"1 2 3:4 / / rw - a b c\n\n",
		"1 2 3:4 / / rw - a b c\n\n1 2 3:4 / / rw - a b c\n",
		"\n1 2 3:4 / / rw - a b c\n",
		"1 2 3:4 / net:[1] rw - a b c\n",	/* a point no path */
		"1 2 3:4 net:[1] /a\\ rw - a b c\n",
		"1 2 3:4 net:[1] /a\\4000 rw - a b c\n",
		"1 2 3:4 net\\000 /a rw - a b c\n",
		"1 2 3:4  /a rw - a b c\n",		/* an empty root */
		"1 2 3:4 net:[1] /a rw -\n",
		"1 2 3:4 net:[1] /a rw a b c\n",
		"4294967296 2 3:4 net:[1] /a rw - a b c\n",
	};
	struct host_mount	 hm[16], fm[8];
	struct probe_host	 ph;
	const char		*one = "/usr";
	char			 hb[4096], fb[1024], err[128];
	size_t			 i;
	int			 nh, nf;

	strlcpy(hb, HOST_MOUNTS HOST_NETNS, sizeof(hb));
	nh = host_mounts_parse(hb, hm, 16, HOST_MOUNTS_HOST, err,
	    sizeof(err));
	ATF_REQUIRE_MSG(nh == 7, "%d: %s", nh, err);
	ATF_CHECK_STREQ(hm[4].hm_root, "net:[4026532301]");
	ATF_CHECK_STREQ(hm[4].hm_point, "/run/netns/cni-1 a");
	ATF_CHECK_EQ(hm[4].hm_major, 0);
	ATF_CHECK_EQ(hm[4].hm_minor, 4);
	ATF_CHECK_STREQ(hm[5].hm_root, "mnt:[4026532302]");
	ATF_CHECK_STREQ(hm[6].hm_root, "/srv//deleted");
	ATF_CHECK_STREQ(hm[6].hm_point, "/mnt/a\nb\tc\\d (deleted)");

	/* The same lines in a fence's table: refused, the fencer made none. */
	strlcpy(fb, HOST_NETNS, sizeof(fb));
	ATF_CHECK_EQ(host_mounts_parse(fb, fm, 8, HOST_MOUNTS_FENCE, err,
	    sizeof(err)), -1);
	ATF_CHECK_STREQ(err, "mountinfo: malformed line 1");

	/*
	 * A fence's mount of the namespace files' filesystem is a host
	 * mount no expected path explains: named, never translated
	 * through a root that is no path.
	 */
	strlcpy(hb, HOST_MOUNTS HOST_NETNS, sizeof(hb));
	nh = host_mounts_parse(hb, hm, 16, HOST_MOUNTS_HOST, err,
	    sizeof(err));
	strlcpy(fb, "97 46 0:53 / / ro - tmpfs tmpfs rw\n"
	    "98 97 254:0 /usr /usr ro - ext4 /dev/vda rw\n"
	    "99 97 0:4 / /mnt ro - nsfs nsfs rw\n", sizeof(fb));
	nf = host_mounts_parse(fb, fm, 8, HOST_MOUNTS_FENCE, err,
	    sizeof(err));
	ATF_REQUIRE(nh == 7 && nf == 3);
	memset(&ph, 0, sizeof(ph));
	host_mounts_judge(fm, nf, hm, nh, &one, 1, NULL, &ph);
	ATF_CHECK_EQ(ph.ph_root_host, 0);
	ATF_CHECK_EQ(ph.ph_nbad, 1);
	ATF_CHECK_STREQ(ph.ph_bad[0], "/ of device 0:4 on /mnt");

	/* Malformed in either table. */
	for (i = 0; i < nitems(bad); i++) {
		strlcpy(hb, bad[i], sizeof(hb));
		nh = host_mounts_parse(hb, hm, 16, HOST_MOUNTS_HOST, err,
		    sizeof(err));
		if (i == 0)
			ATF_CHECK_EQ_MSG(nh, 0, "bad[0]");
		else
			ATF_CHECK_EQ_MSG(nh, -1, "bad[%zu]", i);
	}
	/* No newline after the last line: still the line. */
	strlcpy(hb, "1 2 3:4 net:[1] /a rw - a b c", sizeof(hb));
	ATF_CHECK_EQ(host_mounts_parse(hb, hm, 16, HOST_MOUNTS_HOST, err,
	    sizeof(err)), 1);
}

/* A file of n copies of line, in the test's work directory. */
static void
table_file(const char *path, const char *line, size_t n, const char *tail)
{
	FILE	*f;
	size_t	 i;

	ATF_REQUIRE((f = fopen(path, "w")) != NULL);
	for (i = 0; i < n; i++)
		ATF_REQUIRE(fputs(line, f) != EOF);
	if (tail != NULL)
		ATF_REQUIRE(fwrite(tail, 1, strlen(tail) + 1, f) > 0);
	ATF_REQUIRE(fclose(f) == 0);
}

ATF_TC_WITHOUT_HEAD(host_self_read);
ATF_TC_BODY(host_self_read, tc)
{
	struct host_table	 ht;
	char			 err[PROBE_HOST_ERR_LEN], line[513];
	size_t			 n;

	/* This process's own table, whatever this machine holds. */
	ATF_REQUIRE_MSG(host_self_read("/proc/self/mountinfo", &ht, err,
	    sizeof(err)) == 0, "%s", err);
	ATF_CHECK(ht.ht_n > 0);
	host_table_free(&ht);

	/* 200,000 mounts (a large Kubernetes node has tens of thousands). */
	table_file("many", "4000 29 0:4 net:[4026532301] /run/netns/cni-"
	    "0123456789abcdef rw shared:9 - nsfs nsfs rw\n", 200000, NULL);
	ATF_REQUIRE_MSG(host_self_read("many", &ht, err, sizeof(err)) == 0,
	    "%s", err);
	ATF_CHECK_EQ(ht.ht_n, 200000);
	ATF_CHECK_STREQ(ht.ht_m[199999].hm_root, "net:[4026532301]");
	host_table_free(&ht);

	/* One mount over the count, and one byte over the size: said. */
	table_file("lines", "1 2 3:4 / / rw - a b c\n",
	    HOST_SELF_LINES_MAX + 1, NULL);
	ATF_CHECK_EQ(host_self_read("lines", &ht, err, sizeof(err)), -1);
	ATF_CHECK_MATCH("more than [0-9]+ mounts", err);
	host_table_free(&ht);
	/* Lines of 512 bytes: HOST_SELF_MOUNTS_MAX is a multiple of it. */
	memset(line, 'a', 512);
	memcpy(line, "1 2 3:4 / /", 11);
	memcpy(line + 512 - 12, " rw - a b c\n", 12);
	line[512] = '\0';
	n = HOST_SELF_MOUNTS_MAX / 512;
	table_file("big", line, n - 1, NULL);	/* just under */
	ATF_REQUIRE_MSG(host_self_read("big", &ht, err, sizeof(err)) == 0,
	    "%s", err);
	ATF_CHECK_EQ((size_t)ht.ht_n, n - 1);
	host_table_free(&ht);
	table_file("big", line, n, NULL);	/* no room for the NUL */
	ATF_CHECK_EQ(host_self_read("big", &ht, err, sizeof(err)), -1);
	ATF_CHECK_MATCH("larger than 32 MiB", err);
	host_table_free(&ht);

	/* A NUL inside, a malformed line: said, named the fencer's. */
	table_file("nul", "1 2 3:4 / / rw - a b c\n", 3, "1 2");
	ATF_CHECK_EQ(host_self_read("nul", &ht, err, sizeof(err)), -1);
	ATF_CHECK_MATCH("^the fencer's mountinfo: ", err);
	host_table_free(&ht);
	table_file("bad", "1 2 3:4 / / rw - a b c\n1 2 3:4 / x rw - a\n", 1,
	    NULL);
	ATF_CHECK_EQ(host_self_read("bad", &ht, err, sizeof(err)), -1);
	ATF_CHECK_STREQ(err, "the fencer's mountinfo: malformed line 2");
	host_table_free(&ht);
	table_file("empty", "", 0, NULL);
	ATF_CHECK_EQ(host_self_read("empty", &ht, err, sizeof(err)), -1);
	ATF_CHECK_STREQ(err, "the fencer's mountinfo: no mounts");
	host_table_free(&ht);
	ATF_CHECK_EQ(host_self_read("absent", &ht, err, sizeof(err)), -1);
	ATF_CHECK_MATCH("No such file", err);
	host_table_free(&ht);
}

/*
 * runsc's gofer: its root is the bundle's rootfs, a directory of the
 * host's; that passes only as that directory and read-only.
 */
#define GOFER_MOUNTS(rootopt) \
	"91 89 254:0 /srv/state/runsc/bundles/ab/rootfs / " rootopt \
	" - ext4 /dev/vda rw\n" \
	"92 91 254:0 /usr /usr ro,nosuid,nodev - ext4 /dev/vda rw\n" \
	"93 91 254:0 /etc /etc ro,nosuid,nodev - ext4 /dev/vda rw\n" \
	"94 91 254:0 /home/u/sandbox-homes/k /home/fence rw - ext4 " \
	"/dev/vda rw\n"

static void
gofer_judge(const char *fence, const char *rootdir, struct probe_host *ph)
{
	struct host_mount	 fm[32], hm[32];
	char			 fb[4096], hb[4096], err[128];
	int			 nf, nh;

	strlcpy(hb, HOST_MOUNTS, sizeof(hb));
	strlcpy(fb, fence, sizeof(fb));
	memset(ph, 0, sizeof(*ph));
	ATF_REQUIRE((nh = host_mounts_parse(hb, hm, 32, HOST_MOUNTS_HOST,
	    err, sizeof(err))) == 4);
	ATF_REQUIRE((nf = host_mounts_parse(fb, fm, 32, HOST_MOUNTS_FENCE,
	    err, sizeof(err))) > 0);
	host_mounts_judge(fm, nf, hm, nh, allow, 7, rootdir, ph);
}

ATF_TC_WITHOUT_HEAD(host_gofer_root);
ATF_TC_BODY(host_gofer_root, tc)
{
	struct probe_host	 ph;
	struct host_mount	 fm[8], hm[8];
	char			 fb[4096], hb[4096], err[128];
	int			 nf, nh;

	gofer_judge(GOFER_MOUNTS("ro,relatime"),
	    "/srv/state/runsc/bundles/ab/rootfs", &ph);
	ATF_CHECK_EQ(ph.ph_root_host, 0);
	ATF_CHECK_EQ(ph.ph_nbad, 0);
	ATF_CHECK_EQ(ph.ph_usr_ro, 1);
	/* Writable, it is the host's. */
	gofer_judge(GOFER_MOUNTS("rw,relatime"),
	    "/srv/state/runsc/bundles/ab/rootfs", &ph);
	ATF_CHECK_EQ(ph.ph_root_host, 1);
	/* Another directory than the one made for it. */
	gofer_judge(GOFER_MOUNTS("ro,relatime"),
	    "/srv/state/runsc/bundles/cd/rootfs", &ph);
	ATF_CHECK_EQ(ph.ph_root_host, 1);
	ATF_CHECK_EQ(ph.ph_nbad, 1);
	/* Without one (a native fence), a host root never passes. */
	gofer_judge(GOFER_MOUNTS("ro,relatime"), NULL, &ph);
	ATF_CHECK_EQ(ph.ph_root_host, 1);
	/* The host's own root, read-only or not, never passes. */
	gofer_judge("27 1 254:0 / / ro - ext4 /dev/vda rw\n", "/", &ph);
	ATF_CHECK_EQ(ph.ph_root_host, 1);

	/* The sentry's own table: nothing of a host filesystem. */
	strlcpy(hb, HOST_MOUNTS, sizeof(hb));
	nh = host_mounts_parse(hb, hm, 8, HOST_MOUNTS_HOST, err,
	    sizeof(err));
	strlcpy(fb, "46 67 0:44 / / ro,relatime - tmpfs runsc-root rw\n",
	    sizeof(fb));
	nf = host_mounts_parse(fb, fm, 8, HOST_MOUNTS_FENCE, err,
	    sizeof(err));
	ATF_REQUIRE(nh == 4 && nf == 1);
	ATF_CHECK_EQ(host_mounts_nhost(fm, nf, hm, nh), 0);
	strlcpy(fb, "46 67 0:44 / / ro - tmpfs runsc-root rw\n"
	    "47 46 254:0 /etc /etc ro - ext4 /dev/vda rw\n", sizeof(fb));
	nf = host_mounts_parse(fb, fm, 8, HOST_MOUNTS_FENCE, err,
	    sizeof(err));
	ATF_CHECK_EQ(host_mounts_nhost(fm, nf, hm, nh), 1);
}

ATF_TC_WITHOUT_HEAD(host_uidmap);
ATF_TC_BODY(host_uidmap, tc)
{
	static const char self[] = "         0          0 4294967295\n";
	static const char *const bad[] = {
		"", "0 0\n", "0 0 0\n", "a 0 1\n", "0 0 4294967297\n",
		"4294967295 0 2\n", "0 4294967295 2\n", "0 0 1 2\n",
		"-1 0 1\n", "0 0 1\n\n",
	};
	char	 buf[256], err[128];
	size_t	 i;
	int	 own, root;

	/* The fencer's own namespace reads as the fencer's. */
	strlcpy(buf, self, sizeof(buf));
	ATF_REQUIRE(host_uidmap_parse(buf, self, &own, &root, err,
	    sizeof(err)) == 0);
	ATF_CHECK(!own && root);
	/* runsc's sandbox: nobody only. */
	strlcpy(buf, "     65534      65534          1\n", sizeof(buf));
	ATF_REQUIRE(host_uidmap_parse(buf, self, &own, &root, err,
	    sizeof(err)) == 0);
	ATF_CHECK(own && !root);
	/* A namespace of its own that maps the host's root. */
	strlcpy(buf, "0 100000 65536\n1 0 1\n", sizeof(buf));
	ATF_REQUIRE(host_uidmap_parse(buf, self, &own, &root, err,
	    sizeof(err)) == 0);
	ATF_CHECK(own && root);
	for (i = 0; i < nitems(bad); i++) {
		strlcpy(buf, bad[i], sizeof(buf));
		ATF_CHECK_EQ_MSG(host_uidmap_parse(buf, self, &own, &root,
		    err, sizeof(err)), -1, "%s", bad[i]);
	}
}

ATF_TC_WITHOUT_HEAD(host_net);
ATF_TC_BODY(host_net, tc)
{
	struct probe_host	 ph;
	char			 buf[1024], err[128];

	memset(&ph, 0, sizeof(ph));
	strlcpy(buf, "Inter-| Receive\n face |bytes\n    lo: 1 2 3\n",
	    sizeof(buf));
	ATF_REQUIRE_EQ(host_netdev_parse(buf, &ph, err, sizeof(err)), 0);
	ATF_CHECK_EQ(ph.ph_nifaces, 1);
	ATF_CHECK_STREQ(ph.ph_iface_other, "");
	strlcpy(buf, "h\nh\n    lo: 1\n  eth0: 2\n", sizeof(buf));
	ATF_REQUIRE_EQ(host_netdev_parse(buf, &ph, err, sizeof(err)), 0);
	ATF_CHECK_EQ(ph.ph_nifaces, 2);
	ATF_CHECK_STREQ(ph.ph_iface_other, "eth0");
	strlcpy(buf, "h\nh\n  nocolon\n", sizeof(buf));
	ATF_CHECK_EQ(host_netdev_parse(buf, &ph, err, sizeof(err)), -1);
	strlcpy(buf, "h\nh\n  averyveryverylongname0: 2\n", sizeof(buf));
	ATF_CHECK_EQ(host_netdev_parse(buf, &ph, err, sizeof(err)), -1);
}

/* The boundary's surface axis as JSON: "reachable" and "kernel". */
static void
check_surface_json(const struct probe_verdict *v, const char *reachable,
    const char *kernel)
{
	json_t	*j, *ax;
	char	*s, *list;

	ATF_REQUIRE((s = verdict_json(v)) != NULL);
	ATF_REQUIRE((j = json_loads(s, 0, NULL)) != NULL);
	free(s);
	ax = json_object_get(json_object_get(j, "axes"), "surface");
	ATF_REQUIRE(ax != NULL);
	list = json_dumps(json_object_get(ax, "reachable"),
	    JSON_COMPACT | JSON_ENCODE_ANY);
	ATF_CHECK_STREQ(list, reachable);
	free(list);
	if (kernel == NULL)
		ATF_CHECK(json_is_null(json_object_get(ax, "kernel")));
	else
		ATF_CHECK_STREQ(json_string_value(json_object_get(ax,
		    "kernel")), kernel);
	json_decref(j);
}

ATF_TC_WITHOUT_HEAD(surface_l1_lists);
ATF_TC_BODY(surface_l1_lists, tc)
{
	struct probe_expect	 e = expect(TIER_L1);
	struct probe_verdict	 v;

	ATF_REQUIRE_EQ(judge(l1_report(), &e, &v), 0);
	CHECK_LEVEL(&v, LEVEL_L1);
	/* Reachable by design at L1: listed, no violation. */
	CHECK_AXIS(&v, AXIS_SURFACE, VERDICT_PASSES);
	ATF_CHECK_EQ(v.pv_axes[AXIS_SURFACE].av_nviolations, 0);
	check_surface_json(&v, "[\"io_uring\",\"nf_tables\",\"vsock\","
	    "\"esp\",\"keyctl\",\"perf_event\",\"userns\",\"ptrace\"]",
	    "host");
}

ATF_TC_WITHOUT_HEAD(surface_l15_none);
ATF_TC_BODY(surface_l15_none, tc)
{
	struct probe_expect	 e = expect(TIER_L15);
	struct probe_verdict	 v;

	ATF_REQUIRE_EQ(judge(base(), &e, &v), 0);
	CHECK_AXIS(&v, AXIS_SURFACE, VERDICT_FENCED);
	CHECK_LEVEL(&v, LEVEL_L15);
	check_surface_json(&v, "[]", "host");
	e = l2_expect();
	ATF_REQUIRE_EQ(judge(l2_report(), &e, &v), 0);
	CHECK_AXIS(&v, AXIS_SURFACE, VERDICT_FENCED);
	CHECK_LEVEL(&v, LEVEL_L2);
}

/* One entry reached where the tier expects none: L1.5 and L2 lost. */
ATF_TC_WITHOUT_HEAD(surface_reachable_loses);
ATF_TC_BODY(surface_reachable_loses, tc)
{
	struct probe_expect	 e = expect(TIER_L15);
	struct probe_verdict	 v;
	json_t			*r;

	r = base();
	set(r, "surface.io_uring", json_string("ok"));
	ATF_REQUIRE_EQ(judge(r, &e, &v), 0);
	CHECK_AXIS(&v, AXIS_SURFACE, VERDICT_NOT_FENCED);
	CHECK_VIOLATION(&v, AXIS_SURFACE, "surface: io_uring reachable");
	/* The filter is still the fence's own: privileges stays fenced. */
	CHECK_AXIS(&v, AXIS_PRIVILEGES, VERDICT_FENCED);
	CHECK_LEVEL(&v, LEVEL_L1);
	check_surface_json(&v, "[\"io_uring\"]", "host");

	e = l2_expect();
	r = l2_report();
	set(r, "surface.af_alg", json_string("ok"));
	set(r, "surface.nf_tables", json_string("ok"));
	ATF_REQUIRE_EQ(judge(r, &e, &v), 0);
	CHECK_VIOLATION(&v, AXIS_SURFACE, "surface: af_alg reachable");
	CHECK_VIOLATION(&v, AXIS_SURFACE, "surface: nf_tables reachable");
	CHECK_AXIS(&v, AXIS_NETWORK, VERDICT_FENCED);
	CHECK_LEVEL(&v, LEVEL_L1);

	/* Not tried to its end is no refusal. */
	e = expect(TIER_L15);
	r = base();
	set(r, "surface.ptrace", json_string("timeout"));
	set(r, "surface.rds", json_string("fork-failed"));
	set(r, "surface.esp", json_string("ETIMEDOUT"));
	ATF_REQUIRE_EQ(judge(r, &e, &v), 0);
	CHECK_VIOLATION(&v, AXIS_SURFACE,
	    "surface: ptrace not tried to its end (timeout)");
	CHECK_VIOLATION(&v, AXIS_SURFACE,
	    "surface: rds not tried to its end (fork-failed)");
	CHECK_VIOLATION(&v, AXIS_SURFACE,
	    "surface: esp not tried to its end (ETIMEDOUT)");
	CHECK_LEVEL(&v, LEVEL_L1);

	/* Any refusal word refuses: a signal, another errno. */
	r = base();
	set(r, "surface.vsock", json_string("EAFNOSUPPORT"));
	set(r, "surface.bpf", json_string("SIGSYS"));
	ATF_REQUIRE_EQ(judge(r, &e, &v), 0);
	CHECK_AXIS(&v, AXIS_SURFACE, VERDICT_FENCED);
	CHECK_LEVEL(&v, LEVEL_L15);
}

/* No section (an older probe, the alarm): not measured, no L1.5. */
ATF_TC_WITHOUT_HEAD(surface_missing);
ATF_TC_BODY(surface_missing, tc)
{
	struct probe_expect	 e = expect(TIER_L15);
	struct probe_verdict	 v;
	json_t			*r;

	r = base();
	set(r, "surface", NULL);
	ATF_REQUIRE_EQ(judge(r, &e, &v), 0);
	CHECK_AXIS(&v, AXIS_SURFACE, VERDICT_NOT_MEASURED);
	ATF_CHECK_STREQ(v.pv_axes[AXIS_SURFACE].av_reason,
	    "no surface section");
	CHECK_LEVEL(&v, LEVEL_L1);
	check_surface_json(&v, "null", NULL);
	e = l2_expect();
	r = l2_report();
	set(r, "surface", NULL);
	ATF_REQUIRE_EQ(judge(r, &e, &v), 0);
	CHECK_LEVEL(&v, LEVEL_L1);
	/* The alarm stopped the probe there. */
	r = l2_report();
	set(r, "surface", NULL);
	set(r, "network", NULL);
	set(r, "incomplete", json_string("surface"));
	ATF_REQUIRE_EQ(judge(r, &e, &v), 0);
	CHECK_LEVEL(&v, LEVEL_L1);
}

ATF_TC_WITHOUT_HEAD(surface_malformed);
ATF_TC_BODY(surface_malformed, tc)
{
	static const struct {
		const char	*m_key;
		const char	*m_json;	/* NULL: delete */
		const char	*m_why;
	} cases[] = {
		{ "surface.tls_ulp", "\"ok\"", "surface: too many entries" },
		{ "surface.io_uring", NULL, "surface.io_uring: missing" },
		{ "surface.rds", "true", "surface.rds: wrong type" },
		{ "surface.rds", "null", "surface.rds: wrong type" },
		{ "surface.vsock", "\"ok ok\"",
		    "surface.vsock: malformed string" },
		{ "surface.vsock", "\"\"", "surface.vsock: malformed string" },
		{ "surface.esp", "\"EAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\"",
		    "surface.esp: string too long" },
		{ "surface", "[]", "surface: wrong type" },
		{ "surface", "\"none\"", "surface: wrong type" },
	};
	struct probe_expect	 e = expect(TIER_L15);
	struct probe_verdict	 v;
	json_t			*r;
	size_t			 i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		r = base();
		set(r, cases[i].m_key, cases[i].m_json == NULL ? NULL :
		    json_loads(cases[i].m_json, JSON_DECODE_ANY, NULL));
		ATF_CHECK_EQ_MSG(judge(r, &e, &v), -1, "%s", cases[i].m_why);
		CHECK_LEVEL(&v, LEVEL_UNMEASURED);
		ATF_CHECK_MSG(strstr(v.pv_reason, cases[i].m_why) != NULL,
		    "reason \"%s\", not \"%s\"", v.pv_reason, cases[i].m_why);
	}
	/* A name not in the table, in place of one that is. */
	r = base();
	set(r, "surface.io_uring", NULL);
	set(r, "surface.io_uring2", json_string("EPERM"));
	ATF_CHECK_EQ(judge(r, &e, &v), -1);
	ATF_CHECK_MSG(strstr(v.pv_reason, "surface: bad key") !=
	    NULL, "reason \"%s\"", v.pv_reason);
}

/*
 * An L1 fence that claims it reaches nothing: the surface is the
 * fence's word and can only take away; what would grant L1.5, the
 * host's reading of a filter of pid 1's own, is not there.
 */
ATF_TC_WITHOUT_HEAD(surface_forged_l1);
ATF_TC_BODY(surface_forged_l1, tc)
{
	struct probe_expect	 e = expect(TIER_L1);
	struct probe_verdict	 v;
	json_t			*r;

	r = base();		/* every call refused, all it says */
	ATF_REQUIRE_EQ(judge(r, &e, &v), 0);
	CHECK_AXIS(&v, AXIS_SURFACE, VERDICT_FENCED);
	CHECK_AXIS(&v, AXIS_PRIVILEGES, VERDICT_NOT_FENCED);
	CHECK_VIOLATION(&v, AXIS_PRIVILEGES,
	    "privileges: pid 1 has no filter of its own");
	CHECK_LEVEL(&v, LEVEL_L1);
	/* Asked L1.5 with the host's reading of L1: the same. */
	e = expect(TIER_L15);
	host_reading(&e, TIER_L1);
	ATF_REQUIRE_EQ(judge(base(), &e, &v), 0);
	CHECK_LEVEL(&v, LEVEL_L1);
}

/* A kernel of its own answers for itself: listed, not held, L3 kept. */
ATF_TC_WITHOUT_HEAD(surface_own_kernel);
ATF_TC_BODY(surface_own_kernel, tc)
{
	struct probe_expect	 e = runsc_expect();
	struct probe_verdict	 v;
	json_t			*r;

	r = runsc_report();
	/* What gVisor answered on this machine. */
	set(r, "surface.io_uring", json_string("ok"));
	set(r, "surface.keyctl", json_string("ok"));
	ATF_REQUIRE_EQ(judge(r, &e, &v), 0);
	CHECK_AXIS(&v, AXIS_SURFACE, VERDICT_PASSES);
	ATF_CHECK_EQ(v.pv_axes[AXIS_SURFACE].av_nviolations, 0);
	CHECK_LEVEL(&v, LEVEL_L3);
	check_surface_json(&v, "[\"io_uring\",\"keyctl\"]", "user");
	/* Without the section, L3 does not ask for it either. */
	r = runsc_report();
	set(r, "surface", NULL);
	ATF_REQUIRE_EQ(judge(r, &e, &v), 0);
	CHECK_LEVEL(&v, LEVEL_L3);
	/* A guest's. */
	e = l2_expect();
	expect_backend(&e, BACKEND_VM);
	r = l2_report();
	set(r, "identity.kernel.release", json_string("6.1.0-guest"));
	set(r, "surface.userns", json_string("ok"));
	ATF_REQUIRE_EQ(judge(r, &e, &v), 0);
	CHECK_AXIS(&v, AXIS_SURFACE, VERDICT_PASSES);
	CHECK_LEVEL(&v, LEVEL_L4);
	check_surface_json(&v, "[\"userns\"]", "guest");
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, surface_l1_lists);
	ATF_TP_ADD_TC(tp, surface_l15_none);
	ATF_TP_ADD_TC(tp, surface_reachable_loses);
	ATF_TP_ADD_TC(tp, surface_missing);
	ATF_TP_ADD_TC(tp, surface_malformed);
	ATF_TP_ADD_TC(tp, surface_forged_l1);
	ATF_TP_ADD_TC(tp, surface_own_kernel);
	ATF_TP_ADD_TC(tp, host_reading_decides);
	ATF_TP_ADD_TC(tp, forged_network_report);
	ATF_TP_ADD_TC(tp, run_not_counted);
	ATF_TP_ADD_TC(tp, report_message_codec);
	ATF_TP_ADD_TC(tp, host_status);
	ATF_TP_ADD_TC(tp, host_mounts);
	ATF_TP_ADD_TC(tp, host_mounts_real);
	ATF_TP_ADD_TC(tp, host_self_read);
	ATF_TP_ADD_TC(tp, host_gofer_root);
	ATF_TP_ADD_TC(tp, host_uidmap);
	ATF_TP_ADD_TC(tp, host_net);
	ATF_TP_ADD_TC(tp, l15_earns_l15);
	ATF_TP_ADD_TC(tp, l1_earns_l1);
	ATF_TP_ADD_TC(tp, weakened_l15_earns_l1);
	ATF_TP_ADD_TC(tp, inherited_filter_not_l15);
	ATF_TP_ADD_TC(tp, privileges_missing_fields);
	ATF_TP_ADD_TC(tp, l2_earns_l2);
	ATF_TP_ADD_TC(tp, l2_network_not_fenced);
	ATF_TP_ADD_TC(tp, l2_without_canary);
	ATF_TP_ADD_TC(tp, l15_network);
	ATF_TP_ADD_TC(tp, egress_allowlisted);
	ATF_TP_ADD_TC(tp, egress_refused_reached);
	ATF_TP_ADD_TC(tp, egress_not_measured);
	ATF_TP_ADD_TC(tp, egress_without_list);
	ATF_TP_ADD_TC(tp, egress_hostile);
	ATF_TP_ADD_TC(tp, l3_and_l4);
	ATF_TP_ADD_TC(tp, l4_inner);
	ATF_TP_ADD_TC(tp, l3_host_reading);
	ATF_TP_ADD_TC(tp, kernel_axis);
	ATF_TP_ADD_TC(tp, filesystem_not_fenced);
	ATF_TP_ADD_TC(tp, filesystem_empty_sys);
	ATF_TP_ADD_TC(tp, processes_not_fenced);
	ATF_TP_ADD_TC(tp, missing_sections);
	ATF_TP_ADD_TC(tp, malformed_truncated);
	ATF_TP_ADD_TC(tp, malformed_oversized);
	ATF_TP_ADD_TC(tp, malformed_nested);
	ATF_TP_ADD_TC(tp, malformed_duplicates);
	ATF_TP_ADD_TC(tp, malformed_utf8);
	ATF_TP_ADD_TC(tp, malformed_nul);
	ATF_TP_ADD_TC(tp, malformed_types);
	ATF_TP_ADD_TC(tp, malformed_bounds);
	ATF_TP_ADD_TC(tp, reason_sanitized);
	ATF_TP_ADD_TC(tp, violations_all_listed);
	ATF_TP_ADD_TC(tp, verdict_json_shape);
	ATF_TP_ADD_TC(tp, level_names);
	return (atf_no_error());
}
