/*
 * bundle_test: fencer/runsc/bundle.c, the OCI bundle of a runsc fence,
 * read back field by field against docs/design.md section 3: the fence's uid
 * (never 0), no_new_privileges, no capabilities, an empty environment,
 * RLIMIT_CORE 0, a read-only root with the host's /usr and /etc
 * read-only and the home read-write, a private 256 MiB tmpfs /tmp mode
 * 0700 owned by the fence's uid, a network namespace, no devices, the
 * cgroup limits, the filter inside the sandbox, the agent as init; and
 * the container ids.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <atf-c.h>
#include <jansson.h>

#include "fenced.h"
#include "names.h"
#include "fence.h"
#include "bundle.h"

static void
spec_init(struct runsc_bundle_spec *s)
{
	memset(s, 0, sizeof(*s));
	strlcpy(s->rb_key, "g", sizeof(s->rb_key));
	s->rb_uid = 1234;
	s->rb_gid = 2345;
	strlcpy(s->rb_user, "alice", sizeof(s->rb_user));
	s->rb_home = "/srv/homes/alice/g";
	s->rb_bindir = "/usr/libexec/fenced";
	s->rb_init = "fence-agent";
	s->rb_cgroups_path = "1234.g";
	s->rb_limits.fl_memory = 512ULL << 20;
	s->rb_limits.fl_pids = 256;
	s->rb_limits.fl_cpu_milli = 1500;
}

static json_t *
config(const struct runsc_bundle_spec *s)
{
	char	 err[256];
	json_t	*c;

	c = runsc_bundle_config(s, err, sizeof(err));
	if (c == NULL)
		atf_tc_fail("runsc_bundle_config: %s", err);
	return (c);
}

static json_t *
get(json_t *o, const char *path)
{
	char	 buf[256], *p, *q;

	strlcpy(buf, path, sizeof(buf));
	for (p = buf; o != NULL && p != NULL; p = q) {
		if ((q = strchr(p, '.')) != NULL)
			*q++ = '\0';
		o = json_object_get(o, p);
	}
	if (o == NULL)
		atf_tc_fail("no %s in config.json", path);
	return (o);
}

static json_t *
mount_at(json_t *c, const char *dst)
{
	json_t	*m;
	size_t	 i;

	json_array_foreach(get(c, "mounts"), i, m)
		if (strcmp(json_string_value(json_object_get(m,
		    "destination")), dst) == 0)
			return (m);
	return (NULL);
}

static int
has_option(json_t *m, const char *opt)
{
	json_t	*o;
	size_t	 i;

	json_array_foreach(json_object_get(m, "options"), i, o)
		if (strcmp(json_string_value(o), opt) == 0)
			return (1);
	return (0);
}

ATF_TC_WITHOUT_HEAD(process);
ATF_TC_BODY(process, tc)
{
	struct runsc_bundle_spec s;
	const char	*sets[] = { "bounding", "effective", "inheritable",
			    "permitted", "ambient" };
	json_t		*c, *p, *rl;
	size_t		 i;

	spec_init(&s);
	c = config(&s);
	p = get(c, "process");
	ATF_CHECK_EQ(json_integer_value(get(p, "user.uid")), 1234);
	ATF_CHECK_EQ(json_integer_value(get(p, "user.gid")), 2345);
	ATF_CHECK_EQ(json_array_size(get(p, "user.additionalGids")), 0);
	ATF_CHECK(json_is_true(get(p, "noNewPrivileges")));
	ATF_CHECK(json_is_false(get(p, "terminal")));
	/* The environment is empty: the agent builds each command's. */
	ATF_CHECK(json_is_array(get(p, "env")));
	ATF_CHECK_EQ(json_array_size(get(p, "env")), 0);
	ATF_CHECK_STREQ(json_string_value(get(p, "cwd")), "/");
	/* The agent is init, its channel on stdio. */
	ATF_CHECK_EQ(json_array_size(get(p, "args")), 2);
	ATF_CHECK_STREQ(json_string_value(json_array_get(get(p, "args"), 0)),
	    FENCE_BIN_DIR "/fence-agent");
	ATF_CHECK_STREQ(json_string_value(json_array_get(get(p, "args"), 1)),
	    "-s");
	/* Every capability set there, and empty. */
	for (i = 0; i < nitems(sets); i++) {
		json_t	*a = json_object_get(get(p, "capabilities"), sets[i]);

		ATF_CHECK_MSG(json_is_array(a) && json_array_size(a) == 0,
		    "capabilities.%s not empty", sets[i]);
	}
	ATF_CHECK_EQ(json_object_size(get(p, "capabilities")), nitems(sets));
	rl = get(p, "rlimits");
	ATF_REQUIRE_EQ(json_array_size(rl), 2);
	ATF_CHECK_STREQ(json_string_value(get(json_array_get(rl, 0), "type")),
	    "RLIMIT_CORE");
	ATF_CHECK_EQ(json_integer_value(get(json_array_get(rl, 0), "hard")), 0);
	ATF_CHECK_EQ(json_integer_value(get(json_array_get(rl, 0), "soft")), 0);
	/* The sentry's bound on the fence's processes: its pids limit. */
	ATF_CHECK_STREQ(json_string_value(get(json_array_get(rl, 1), "type")),
	    "RLIMIT_NPROC");
	ATF_CHECK_EQ(json_integer_value(get(json_array_get(rl, 1), "hard")),
	    (json_int_t)s.rb_limits.fl_pids);
	ATF_CHECK_EQ(json_integer_value(get(json_array_get(rl, 1), "soft")),
	    (json_int_t)s.rb_limits.fl_pids);
	json_decref(c);
}

ATF_TC_WITHOUT_HEAD(never_root);
ATF_TC_BODY(never_root, tc)
{
	struct runsc_bundle_spec s;
	char		 err[256];

	spec_init(&s);
	s.rb_uid = 0;
	ATF_CHECK(runsc_bundle_config(&s, err, sizeof(err)) == NULL);
	ATF_CHECK(strstr(err, "root") != NULL);
	spec_init(&s);
	s.rb_gid = 0;
	ATF_CHECK(runsc_bundle_config(&s, err, sizeof(err)) == NULL);
	/* Nothing of the caller's makes a path of it. */
	spec_init(&s);
	strlcpy(s.rb_user, "../x", sizeof(s.rb_user));
	ATF_CHECK(runsc_bundle_config(&s, err, sizeof(err)) == NULL);
	spec_init(&s);
	s.rb_home = "relative";
	ATF_CHECK(runsc_bundle_config(&s, err, sizeof(err)) == NULL);
	spec_init(&s);
	strlcpy(s.rb_key, "A/b", sizeof(s.rb_key));
	ATF_CHECK(runsc_bundle_config(&s, err, sizeof(err)) == NULL);
}

ATF_TC_WITHOUT_HEAD(filesystem);
ATF_TC_BODY(filesystem, tc)
{
	struct runsc_bundle_spec s;
	json_t		*c, *m, *o;
	char		 opt[64];
	size_t		 i, j, nhost = 0, nrw = 0;

	spec_init(&s);
	c = config(&s);
	ATF_CHECK_STREQ(json_string_value(get(c, "root.path")), "rootfs");
	ATF_CHECK(json_is_true(get(c, "root.readonly")));
	ATF_CHECK_STREQ(json_string_value(get(c, "hostname")), "g");

	/* /usr and /etc: the host's, read-only, as native binds them. */
	ATF_REQUIRE((m = mount_at(c, "/usr")) != NULL);
	ATF_CHECK_STREQ(json_string_value(get(m, "source")), "/usr");
	ATF_CHECK_STREQ(json_string_value(get(m, "type")), "bind");
	ATF_CHECK(has_option(m, "ro") && !has_option(m, "rw"));
	ATF_CHECK(has_option(m, "nosuid") && has_option(m, "nodev"));
	ATF_REQUIRE((m = mount_at(c, "/etc")) != NULL);
	ATF_CHECK_STREQ(json_string_value(get(m, "source")), "/etc");
	ATF_CHECK(has_option(m, "ro") && !has_option(m, "rw"));

	/* The home, read-write, the one writable host path. */
	ATF_REQUIRE((m = mount_at(c, "/home/alice")) != NULL);
	ATF_CHECK_STREQ(json_string_value(get(m, "source")),
	    "/srv/homes/alice/g");
	ATF_CHECK(has_option(m, "rw") && has_option(m, "nosuid") &&
	    has_option(m, "nodev"));

	/* A private /tmp: tmpfs, 256 MiB, 0700, the fence's. */
	ATF_REQUIRE((m = mount_at(c, "/tmp")) != NULL);
	ATF_CHECK_STREQ(json_string_value(get(m, "type")), "tmpfs");
	snprintf(opt, sizeof(opt), "size=%llu", 256ULL << 20);
	ATF_CHECK(has_option(m, opt));
	ATF_CHECK(has_option(m, "mode=0700"));
	ATF_CHECK(has_option(m, "uid=1234"));
	ATF_CHECK(has_option(m, "gid=2345"));

	/* The binaries: each file read-only, not the daemon's folder. */
	ATF_REQUIRE((m = mount_at(c, FENCE_BIN_DIR "/fence-agent")) != NULL);
	ATF_CHECK_STREQ(json_string_value(get(m, "source")),
	    "/usr/libexec/fenced/fence-agent");
	ATF_CHECK(has_option(m, "ro"));
	ATF_CHECK(mount_at(c, FENCE_BIN_DIR "/fence-probe") != NULL);
	ATF_CHECK(mount_at(c, FENCE_BIN_DIR) == NULL);

	/* Nothing else of the host; only the home is writable. */
	json_array_foreach(get(c, "mounts"), i, m) {
		const char *type = json_string_value(get(m, "type"));

		ATF_CHECK_MSG(strcmp(type, "bind") == 0 ||
		    strcmp(type, "tmpfs") == 0 || strcmp(type, "proc") == 0,
		    "mount of type %s", type);
		if (strcmp(type, "bind") != 0)
			continue;
		nhost++;
		if (!has_option(m, "ro")) {
			nrw++;
			ATF_CHECK_STREQ(json_string_value(get(m,
			    "destination")), "/home/alice");
		}
		json_array_foreach(get(m, "options"), j, o)
			ATF_CHECK(strcmp(json_string_value(o), "rbind") != 0);
	}
	ATF_CHECK_EQ(nrw, 1);
	/* /usr, /etc, merged-/usr dirs the host has as dirs, home, 2 bins. */
	ATF_CHECK(nhost >= 5 && nhost <= 11);
	ATF_CHECK(mount_at(c, "/var") == NULL);
	/* /sys: empty and read-only, not gVisor's own sysfs. */
	ATF_REQUIRE((m = mount_at(c, "/sys")) != NULL);
	ATF_CHECK_STREQ(json_string_value(get(m, "type")), "tmpfs");
	ATF_CHECK(has_option(m, "ro") && has_option(m, "noexec"));
	ATF_CHECK(has_option(m, "mode=0555"));
	ATF_CHECK(mount_at(c, "/dev") == NULL);
	json_decref(c);
}

ATF_TC_WITHOUT_HEAD(linux_section);
ATF_TC_BODY(linux_section, tc)
{
	struct runsc_bundle_spec s;
	json_t		*c, *n;
	size_t		 i;
	int		 net = 0, pid = 0, ipc = 0, uts = 0, mnt = 0;
	uint64_t	 pids, quota;

	spec_init(&s);
	c = config(&s);
	json_array_foreach(get(c, "linux.namespaces"), i, n) {
		const char *t = json_string_value(get(n, "type"));

		net += strcmp(t, "network") == 0;
		pid += strcmp(t, "pid") == 0;
		ipc += strcmp(t, "ipc") == 0;
		uts += strcmp(t, "uts") == 0;
		mnt += strcmp(t, "mount") == 0;
		/* A new namespace, never a path to join. */
		ATF_CHECK(json_object_get(n, "path") == NULL);
	}
	ATF_CHECK(net == 1 && pid == 1 && ipc == 1 && uts == 1 && mnt == 1);
	ATF_CHECK(json_is_array(get(c, "linux.devices")));
	ATF_CHECK_EQ(json_array_size(get(c, "linux.devices")), 0);
	ATF_CHECK_STREQ(json_string_value(get(c, "linux.cgroupsPath")),
	    "1234.g");
	ATF_CHECK_EQ(json_integer_value(get(c,
	    "linux.resources.memory.limit")), 512 << 20);
	/* A kernel that does not count swap has no file for runsc. */
	ATF_CHECK(json_object_get(get(c, "linux.resources.memory"),
	    "swap") == NULL);
	ATF_CHECK_EQ(json_integer_value(get(c, "linux.resources.pids.limit")),
	    256 * 16 + 256);
	ATF_CHECK_EQ(json_integer_value(get(c, "linux.resources.cpu.quota")),
	    150000);
	ATF_CHECK_EQ(json_integer_value(get(c, "linux.resources.cpu.period")),
	    100000);
	json_decref(c);

	/* One that counts it: memory and swap at the memory limit. */
	s.rb_swap = 1;
	c = config(&s);
	ATF_CHECK_EQ(json_integer_value(get(c,
	    "linux.resources.memory.limit")), 512 << 20);
	ATF_CHECK_EQ(json_integer_value(get(c,
	    "linux.resources.memory.swap")), 512 << 20);
	json_decref(c);

	/*
	 * cgroup v2: the fencer places runsc in the fence's cgroup itself;
	 * the bundle names none and asks runsc for no limits.  The limits
	 * the fencer writes are the same numbers.
	 */
	s.rb_cgroups_path = NULL;
	c = config(&s);
	ATF_CHECK(json_object_get(get(c, "linux"), "cgroupsPath") == NULL);
	ATF_CHECK(json_object_get(get(c, "linux"), "resources") == NULL);
	ATF_CHECK_EQ(json_array_size(get(c, "linux.devices")), 0);
	ATF_CHECK_EQ(json_array_size(get(c, "linux.namespaces")), 5);
	json_decref(c);
	runsc_limits(&s.rb_limits, &pids, &quota);
	ATF_CHECK_EQ(pids, 256 * 16 + 256);
	ATF_CHECK_EQ(quota, 150000);
}

/* One condition of a rule: index, op, value and (masked) valueTwo. */
static void
check_arg(json_t *a, int index, const char *op, json_int_t value,
    json_int_t two)
{
	ATF_CHECK_EQ(json_integer_value(get(a, "index")), index);
	ATF_CHECK_STREQ(json_string_value(get(a, "op")), op);
	ATF_CHECK_EQ(json_integer_value(get(a, "value")), value);
	if (two != -1)
		ATF_CHECK_EQ(json_integer_value(get(a, "valueTwo")), two);
}

/*
 * The filter inside the sandbox: no new user namespace (its root may
 * pass RLIMIT_NPROC in this gVisor), no ptrace stop at which a tracer
 * could rewrite a call past it, nothing else refused; the same with
 * cgroup v1 and v2.
 */
static void
check_seccomp(json_t *c)
{
	json_t		*r, *a;
	size_t		 i;
	int		 clone = 0, unshare = 0, clone3 = 0, psys = 0;
	int		 popt = 0, pseize = 0;

	ATF_CHECK_STREQ(json_string_value(get(c,
	    "linux.seccomp.defaultAction")), "SCMP_ACT_ALLOW");
	ATF_CHECK_EQ(json_array_size(get(c, "linux.seccomp.syscalls")), 6);
	json_array_foreach(get(c, "linux.seccomp.syscalls"), i, r) {
		const char *n;

		ATF_REQUIRE_EQ(json_array_size(get(r, "names")), 1);
		n = json_string_value(json_array_get(get(r, "names"), 0));
		ATF_REQUIRE(n != NULL);
		if (strcmp(n, "clone3") == 0) {
			/* ENOSYS when untraced: the C library falls back. */
			clone3++;
			ATF_CHECK_STREQ(json_string_value(get(r, "action")),
			    "SCMP_ACT_TRACE");
			ATF_CHECK(json_object_get(r, "args") == NULL);
			continue;
		}
		ATF_CHECK_STREQ(json_string_value(get(r, "action")),
		    "SCMP_ACT_ERRNO");
		if (strcmp(n, "ptrace") == 0) {
			a = json_array_get(get(r, "args"), 0);
			switch (json_integer_value(get(a, "value"))) {
			case 24:	/* PTRACE_SYSCALL, whatever else */
				psys++;
				ATF_REQUIRE_EQ(json_array_size(get(r, "args")),
				    1);
				check_arg(a, 0, "SCMP_CMP_EQ", 24, -1);
				continue;
			case 0x4200:	/* PTRACE_SETOPTIONS */
				popt++;
				break;
			case 0x4206:	/* PTRACE_SEIZE */
				pseize++;
				break;
			default:
				ATF_CHECK_MSG(0, "ptrace request %lld refused",
				    json_integer_value(get(a, "value")));
				continue;
			}
			/* ... only with PTRACE_O_TRACESECCOMP in data. */
			ATF_REQUIRE_EQ(json_array_size(get(r, "args")), 2);
			check_arg(a, 0, "SCMP_CMP_EQ",
			    json_integer_value(get(a, "value")), -1);
			check_arg(json_array_get(get(r, "args"), 1), 3,
			    "SCMP_CMP_MASKED_EQ", 0x80, 0x80);
			continue;
		}
		clone += strcmp(n, "clone") == 0;
		unshare += strcmp(n, "unshare") == 0;
		/* Only the flag: a clone or unshare without it passes. */
		ATF_REQUIRE_EQ(json_array_size(get(r, "args")), 1);
		check_arg(json_array_get(get(r, "args"), 0), 0,
		    "SCMP_CMP_MASKED_EQ", 0x10000000, 0x10000000);
	}
	ATF_CHECK(clone == 1 && unshare == 1 && clone3 == 1);
	ATF_CHECK(psys == 1 && popt == 1 && pseize == 1);
}

ATF_TC_WITHOUT_HEAD(seccomp);
ATF_TC_BODY(seccomp, tc)
{
	struct runsc_bundle_spec s;
	json_t		*c;

	spec_init(&s);
	c = config(&s);
	check_seccomp(c);
	json_decref(c);
	s.rb_cgroups_path = NULL;
	c = config(&s);
	check_seccomp(c);
	json_decref(c);
}

ATF_TC_WITHOUT_HEAD(ids);
ATF_TC_BODY(ids, tc)
{
	char	 a[RUNSC_ID_SIZE], b[RUNSC_ID_SIZE];

	runsc_id_new(a);
	runsc_id_new(b);
	ATF_CHECK(runsc_id_valid(a));
	ATF_CHECK(runsc_id_valid(b));
	ATF_CHECK(strcmp(a, b) != 0);
	ATF_CHECK_EQ(strlen(a), RUNSC_ID_LEN);
	ATF_CHECK(!runsc_id_valid(""));
	ATF_CHECK(!runsc_id_valid("g"));
	ATF_CHECK(!runsc_id_valid("../0123456789abcdef0123456789abc"));
	ATF_CHECK(!runsc_id_valid("0123456789ABCDEF0123456789abcdef"));
	ATF_CHECK(!runsc_id_valid("0123456789abcdef0123456789abcdef0"));
	ATF_CHECK(runsc_id_valid("0123456789abcdef0123456789abcdef"));
}

ATF_TC_WITHOUT_HEAD(write_remove);
ATF_TC_BODY(write_remove, tc)
{
	struct runsc_bundle_spec s;
	struct stat	 sb;
	char		 dir[PATH_MAX / 2], path[PATH_MAX], err[256];

	spec_init(&s);
	ATF_REQUIRE(getcwd(dir, sizeof(dir) - 8) != NULL);
	strlcat(dir, "/b", sizeof(dir));
	ATF_REQUIRE_MSG(runsc_bundle_write(dir, &s, NULL, err, sizeof(err)) == 0,
	    "%s", err);
	ATF_REQUIRE(stat(dir, &sb) == 0);
	ATF_CHECK_EQ(sb.st_mode & 07777, 0700);
	snprintf(path, sizeof(path), "%s/config.json", dir);
	ATF_REQUIRE(stat(path, &sb) == 0);
	ATF_CHECK_EQ(sb.st_mode & 07777, 0600);
	snprintf(path, sizeof(path), "%s/rootfs/home/alice", dir);
	ATF_CHECK(stat(path, &sb) == 0 && S_ISDIR(sb.st_mode));
	snprintf(path, sizeof(path), "%s/rootfs" FENCE_BIN_DIR "/fence-agent",
	    dir);
	ATF_CHECK(stat(path, &sb) == 0 && S_ISREG(sb.st_mode) &&
	    sb.st_size == 0);
	snprintf(path, sizeof(path), "%s/rootfs/usr", dir);
	ATF_CHECK(stat(path, &sb) == 0 && S_ISDIR(sb.st_mode));
	/* The same bundle twice is refused: an id is never reused. */
	ATF_CHECK(runsc_bundle_write(dir, &s, NULL, err, sizeof(err)) == -1);
	ATF_CHECK(runsc_bundle_remove(dir) == 0);
	ATF_CHECK(stat(dir, &sb) == -1 && errno == ENOENT);
}

/*
 * What the child that runs runsc makes read-only: exactly the sources
 * the config binds read-only, never the home; and a config it could
 * not make read-only is refused, not run half read-only.
 */
ATF_TC_WITHOUT_HEAD(ro_binds);
ATF_TC_BODY(ro_binds, tc)
{
	struct runsc_bundle_spec s;
	struct runsc_ro_binds *ro;
	json_t		*c, *m, *bad;
	char		 err[256];
	size_t		 i;
	int		 j, nro = 0, found;

	ATF_REQUIRE((ro = calloc(1, sizeof(*ro))) != NULL);
	spec_init(&s);
	c = config(&s);
	ATF_REQUIRE_MSG(runsc_bundle_ro_binds(c, ro, err, sizeof(err)) == 0,
	    "%s", err);
	json_array_foreach(get(c, "mounts"), i, m) {
		if (strcmp(json_string_value(get(m, "type")), "bind") != 0 ||
		    !has_option(m, "ro"))
			continue;
		nro++;
		for (j = 0, found = 0; j < ro->rr_n; j++)
			if (strcmp(ro->rr_path[j],
			    json_string_value(get(m, "source"))) == 0)
				found = 1;
		ATF_CHECK_MSG(found, "%s not made read-only",
		    json_string_value(get(m, "source")));
	}
	ATF_CHECK_EQ(ro->rr_n, nro);
	ATF_CHECK(nro >= 4);
	for (j = 0; j < ro->rr_n; j++)
		ATF_CHECK(strcmp(ro->rr_path[j], s.rb_home) != 0);
	ATF_CHECK_STREQ(ro->rr_path[0], "/usr");

	/* A relative source, or more than RUNSC_RO_MAX: refused. */
	bad = json_pack("{s:[{s:s,s:s,s:s,s:[s]}]}", "mounts", "type", "bind",
	    "source", "usr", "destination", "/usr", "options", "ro");
	ATF_CHECK(runsc_bundle_ro_binds(bad, ro, err, sizeof(err)) == -1);
	json_decref(bad);
	bad = json_pack("{s:[]}", "mounts");
	for (j = 0; j <= RUNSC_RO_MAX; j++)
		json_array_append_new(json_object_get(bad, "mounts"),
		    json_pack("{s:s,s:s,s:s,s:[s]}", "type", "bind", "source",
		    "/usr", "destination", "/usr", "options", "ro"));
	ATF_CHECK(runsc_bundle_ro_binds(bad, ro, err, sizeof(err)) == -1);
	json_decref(bad);
	json_decref(c);
	free(ro);
}

/* runsc_parse.c: what runsc and /proc say, as the backend reads them. */
ATF_TC_WITHOUT_HEAD(runsc_answers);
ATF_TC_BODY(runsc_answers, tc)
{
	char	 ver[64], kids_text[64];
	pid_t	 kids[3];

	ATF_CHECK_EQ(runsc_version_date("runsc version 0.0~20221219.0\n"
	    "spec: 1.0.2-dev\n", ver, sizeof(ver)), 20221219);
	ATF_CHECK_STREQ(ver, "0.0~20221219.0");
	ATF_CHECK_EQ(runsc_version_date("runsc version release-20240401.0\n",
	    ver, sizeof(ver)), 20240401);
	ATF_CHECK_EQ(runsc_version_date("runsc version 1.2.3\n", ver,
	    sizeof(ver)), 0);
	ATF_CHECK_STREQ(ver, "1.2.3");
	ATF_CHECK_EQ(runsc_version_date("gvisor 20221219\n", ver,
	    sizeof(ver)), 0);

	ATF_CHECK_EQ(runsc_state_pid("{\n  \"id\": \"x\",\n  \"pid\": 31337,"
	    "\n}"), 31337);
	ATF_CHECK_EQ(runsc_state_pid("{\"pid\":0}"), 0);
	ATF_CHECK_EQ(runsc_state_pid("{\"pid\": 99999999999}"), 0);
	ATF_CHECK_EQ(runsc_state_pid("{\"status\": \"stopped\"}"), 0);

	ATF_CHECK_EQ(runsc_status_ppid("Name:\trunsc\nPPid:\t4242\n"), 4242);
	ATF_CHECK_EQ(runsc_status_ppid("PPid:\t4242\n"), -1);
	ATF_CHECK_EQ(runsc_status_ppid("Name:\tx\nPPid:\t-3\n"), -1);

	strlcpy(kids_text, "12 13 12\n", sizeof(kids_text));
	ATF_CHECK_EQ(runsc_pids_parse(kids_text, kids, 0, 3), 2);
	ATF_CHECK_EQ(kids[0], 12);
	ATF_CHECK_EQ(kids[1], 13);
	strlcpy(kids_text, "14 x 0 -5 15", sizeof(kids_text));
	ATF_CHECK_EQ(runsc_pids_parse(kids_text, kids, 2, 3), 4);
}

/*
 * runsc_panic_line(): the reason in a panic log as the sentry of this
 * gVisor wrote it at a fork its host's limits refused, after a log line
 * of its own; a fatal error when there is no panic; the line cut to the
 * buffer, control bytes shown as '?'; nothing from a log without one,
 * nor from "panic: " inside a line.
 */
ATF_TC_WITHOUT_HEAD(runsc_panic);
ATF_TC_BODY(runsc_panic, tc)
{
	char	 line[48], small[12];

	ATF_CHECK_EQ(runsc_panic_line("I1207 08:38:09.849715      85 "
	    "rate_limited.go:36] A process tried to create a raw socket\n"
	    "panic: error initializing first thread: resource temporarily "
	    "unavailable\n\ngoroutine 249 [running]:\npanic({0xe7f040, "
	    "0xc000345350})\n", line, sizeof(line)), 0);
	ATF_CHECK_STREQ(line, "panic: error initializing first thread: resourc");
	ATF_CHECK_EQ(runsc_panic_line("runtime: out of memory\nfatal error: "
	    "runtime: out of memory\n", line, sizeof(line)), 0);
	ATF_CHECK_STREQ(line, "fatal error: runtime: out of memory");
	ATF_CHECK_EQ(runsc_panic_line("fatal error: x\npanic: \033[2Jy\n",
	    small, sizeof(small)), 0);
	ATF_CHECK_STREQ(small, "panic: ?[2J");
	ATF_CHECK_EQ(runsc_panic_line("I1207 a log line, no panic: here\n",
	    line, sizeof(line)), -1);
	ATF_CHECK_STREQ(line, "");
	ATF_CHECK_EQ(runsc_panic_line("", line, sizeof(line)), -1);
	ATF_CHECK_EQ(runsc_panic_line("panic: x", line, 0), -1);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, runsc_answers);
	ATF_TP_ADD_TC(tp, runsc_panic);
	ATF_TP_ADD_TC(tp, ro_binds);
	ATF_TP_ADD_TC(tp, process);
	ATF_TP_ADD_TC(tp, never_root);
	ATF_TP_ADD_TC(tp, filesystem);
	ATF_TP_ADD_TC(tp, linux_section);
	ATF_TP_ADD_TC(tp, seccomp);
	ATF_TP_ADD_TC(tp, ids);
	ATF_TP_ADD_TC(tp, write_remove);
	return (atf_no_error());
}
