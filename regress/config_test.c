/*
 * Unit tests of the configuration: defaults, grammar, errors (each
 * with its file and line), environment overrides and resolution.
 *
 * Each test writes its files in its own work directory.  The parser
 * reports through log_warnx(), which goes to stderr after log_init(1);
 * the tests point stderr at a file for the call and read it back.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <atf-c.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "fenced.h"
#include "log.h"

#define TEST_CONF	"test.conf"
#define TEST_LOG	"stderr.log"

static char	 logbuf[16384];
static int	 saved_stderr = -1;

static void
write_file(const char *name, const char *text)
{
	int	 fd;

	fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ATF_REQUIRE_MSG(fd != -1, "open %s", name);
	/* The parser refuses a group-writable file; the umask may not. */
	ATF_REQUIRE(fchmod(fd, 0644) == 0);
	ATF_REQUIRE((size_t)write(fd, text, strlen(text)) == strlen(text));
	ATF_REQUIRE(close(fd) == 0);
}

static void
capture_start(void)
{
	int	 fd;

	log_init(1, LOG_DAEMON);
	fflush(stderr);
	saved_stderr = dup(STDERR_FILENO);
	ATF_REQUIRE(saved_stderr != -1);
	fd = open(TEST_LOG, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ATF_REQUIRE(fd != -1);
	ATF_REQUIRE(dup2(fd, STDERR_FILENO) != -1);
	close(fd);
}

/* Restore stderr, load what was logged into logbuf and echo it. */
static void
capture_end(void)
{
	ssize_t	 n;
	int	 fd;

	fflush(stderr);
	ATF_REQUIRE(dup2(saved_stderr, STDERR_FILENO) != -1);
	close(saved_stderr);
	saved_stderr = -1;
	fd = open(TEST_LOG, O_RDONLY);
	ATF_REQUIRE(fd != -1);
	n = read(fd, logbuf, sizeof(logbuf) - 1);
	ATF_REQUIRE(n >= 0);
	logbuf[n] = '\0';
	close(fd);
	fprintf(stderr, "%s", logbuf);
}

/* Parse text as test.conf on top of the defaults. */
static int
parse_text(const char *text, struct fenced_config *c)
{
	int	 rv;

	write_file(TEST_CONF, text);
	config_defaults(c);
	capture_start();
	rv = config_parse(TEST_CONF, c);
	capture_end();
	return (rv);
}

static void
logged(const char *what)
{
	ATF_CHECK_MSG(strstr(logbuf, what) != NULL,
	    "expected \"%s\" in the log, got:\n%s", what, logbuf);
}

static void
not_logged(const char *what)
{
	ATF_CHECK_MSG(strstr(logbuf, what) == NULL,
	    "did not expect \"%s\" in the log, got:\n%s", what, logbuf);
}

static int
log_lines(void)
{
	const char	*p;
	int		 n = 0;

	for (p = logbuf; (p = strchr(p, '\n')) != NULL; p++)
		n++;
	return (n);
}

/* Field by field: a struct's padding is not part of its value. */
static int
same_config(const struct fenced_config *a, const struct fenced_config *b)
{
	return (strcmp(a->c_listen_addr, b->c_listen_addr) == 0 &&
	    a->c_listen_port == b->c_listen_port &&
	    strcmp(a->c_socket, b->c_socket) == 0 &&
	    strcmp(a->c_state, b->c_state) == 0 &&
	    strcmp(a->c_homes, b->c_homes) == 0 &&
	    strcmp(a->c_user, b->c_user) == 0 &&
	    a->c_fence_uid_lo == b->c_fence_uid_lo &&
	    a->c_fence_uid_hi == b->c_fence_uid_hi &&
	    strcmp(a->c_admin_group, b->c_admin_group) == 0 &&
	    a->c_tier == b->c_tier &&
	    a->c_backend == b->c_backend &&
	    a->c_lifetime == b->c_lifetime &&
	    a->c_limits.fl_memory == b->c_limits.fl_memory &&
	    a->c_limits.fl_pids == b->c_limits.fl_pids &&
	    a->c_limits.fl_cpu_milli == b->c_limits.fl_cpu_milli &&
	    a->c_lifetime_max == b->c_lifetime_max &&
	    a->c_limits_max.fl_memory == b->c_limits_max.fl_memory &&
	    a->c_limits_max.fl_pids == b->c_limits_max.fl_pids &&
	    a->c_limits_max.fl_cpu_milli == b->c_limits_max.fl_cpu_milli &&
	    a->c_user_fences == b->c_user_fences &&
	    a->c_user_limits.fl_memory == b->c_user_limits.fl_memory &&
	    a->c_user_limits.fl_pids == b->c_user_limits.fl_pids &&
	    a->c_user_limits.fl_cpu_milli == b->c_user_limits.fl_cpu_milli &&
	    a->c_snap_count == b->c_snap_count &&
	    a->c_snap_bytes == b->c_snap_bytes &&
	    a->c_user_snap_count == b->c_user_snap_count &&
	    a->c_user_snap_bytes == b->c_user_snap_bytes &&
	    a->c_exec_timeout == b->c_exec_timeout &&
	    a->c_exec_timeout_max == b->c_exec_timeout_max &&
	    a->c_exec_output == b->c_exec_output &&
	    a->c_exec_output_max == b->c_exec_output_max &&
	    a->c_exec_inflight_user == b->c_exec_inflight_user &&
	    a->c_exec_processes == b->c_exec_processes &&
	    a->c_http_body_max == b->c_http_body_max &&
	    a->c_http_headers_max == b->c_http_headers_max &&
	    a->c_http_timeout == b->c_http_timeout &&
	    a->c_http_conns_max == b->c_http_conns_max &&
	    a->c_http_conns_user == b->c_http_conns_user &&
	    strcmp(a->c_probe_dns, b->c_probe_dns) == 0 &&
	    a->c_probe_ntcp == b->c_probe_ntcp &&
	    memcmp(a->c_probe_tcp, b->c_probe_tcp, sizeof(a->c_probe_tcp)) == 0 &&
	    a->c_http_norigins == b->c_http_norigins &&
	    memcmp(a->c_http_origin, b->c_http_origin,
	    sizeof(a->c_http_origin)) == 0 &&
	    a->c_egress_nhosts == b->c_egress_nhosts &&
	    memcmp(a->c_egress_host, b->c_egress_host,
	    sizeof(a->c_egress_host)) == 0 &&
	    a->c_egress_nresolvers == b->c_egress_nresolvers &&
	    memcmp(a->c_egress_resolver, b->c_egress_resolver,
	    sizeof(a->c_egress_resolver)) == 0 &&
	    a->c_egress_resolver_port == b->c_egress_resolver_port &&
	    a->c_egress_conns == b->c_egress_conns &&
	    a->c_egress_rate == b->c_egress_rate &&
	    a->c_egress_idle == b->c_egress_idle &&
	    a->c_egress_connect == b->c_egress_connect &&
	    strcmp(a->c_probe_egress_allowed, b->c_probe_egress_allowed) == 0 &&
	    strcmp(a->c_probe_egress_refused, b->c_probe_egress_refused) == 0 &&
	    a->c_uid == b->c_uid &&
	    a->c_gid == b->c_gid &&
	    a->c_admin_gid == b->c_admin_gid &&
	    a->c_verbose == b->c_verbose);
}

/*
 * The parse fails at file:line, with a message containing what and no
 * other, and leaves the configuration exactly as it was.
 */
static void
parse_fails_at(const char *text, const char *file, int line,
    const char *what)
{
	struct fenced_config	 c, d;
	char			 where[PATH_MAX];

	config_defaults(&d);
	ATF_CHECK_EQ_MSG(parse_text(text, &c), -1, "parsed: %s", text);
	ATF_CHECK_MSG(same_config(&c, &d),
	    "configuration changed by a failed parse of: %s", text);
	(void)snprintf(where, sizeof(where), "%s:%d: ", file, line);
	logged(where);
	logged(what);
	ATF_CHECK_EQ_MSG(log_lines(), 1, "one error expected for: %s",
	    text);
}

static void
parse_fails(const char *text, int line, const char *what)
{
	parse_fails_at(text, TEST_CONF, line, what);
}

/* Two good lines before the one under test, so its line is 3. */
#define OK2	"tier L2\n# comment\n"

ATF_TC_WITHOUT_HEAD(defaults);
ATF_TC_BODY(defaults, tc)
{
	struct fenced_config	 c;

	/* docs/design.md section 8, written out, not taken from macros. */
	memset(&c, 0xa5, sizeof(c));
	config_defaults(&c);
	ATF_CHECK_STREQ(c.c_listen_addr, "127.0.0.1");
	ATF_CHECK_EQ(c.c_listen_port, 7700);
	ATF_CHECK_STREQ(c.c_socket, "/run/fenced.sock");
	ATF_CHECK_STREQ(c.c_state, "/var/lib/fenced");
	ATF_CHECK_STREQ(c.c_homes, "~/sandbox-homes");
	ATF_CHECK_STREQ(c.c_user, "_fenced");
	ATF_CHECK_EQ(c.c_fence_uid_lo, 1879048192);
	ATF_CHECK_EQ(c.c_fence_uid_hi, 1879049215);
	ATF_CHECK_STREQ(c.c_admin_group, "sudo");
	ATF_CHECK_EQ(c.c_tier, TIER_L15);
	ATF_CHECK_EQ(c.c_backend, BACKEND_NATIVE);
	ATF_CHECK_EQ(c.c_lifetime, 1800);
	ATF_CHECK_EQ(c.c_limits.fl_memory, 512ULL * 1024 * 1024);
	ATF_CHECK_EQ(c.c_limits.fl_pids, 256);
	ATF_CHECK_EQ(c.c_limits.fl_cpu_milli, 1000);
	ATF_CHECK_EQ(c.c_exec_timeout, 10000);
	ATF_CHECK_EQ(c.c_exec_timeout_max, 60000);
	ATF_CHECK_EQ(c.c_exec_output, 262144);
	ATF_CHECK_EQ(c.c_exec_output_max, 1048576);
	/* The HTTP limits docs/design.md leaves to docs/http.md. */
	ATF_CHECK_EQ(c.c_exec_inflight_user, 32);
	ATF_CHECK_EQ(c.c_exec_processes, 16);
	ATF_CHECK_EQ(c.c_http_body_max, 2 * 1024 * 1024);
	ATF_CHECK_EQ(c.c_http_headers_max, 8192);
	ATF_CHECK_EQ(c.c_http_timeout, 10);
	ATF_CHECK_EQ(c.c_http_conns_max, 256);
	ATF_CHECK_EQ(c.c_http_conns_user, 32);
	ATF_CHECK_STREQ(c.c_probe_dns, "example.com");
	ATF_CHECK_EQ(c.c_probe_ntcp, 2);
	ATF_CHECK_STREQ(c.c_probe_tcp[0], "1.1.1.1:443");
	ATF_CHECK_STREQ(c.c_probe_tcp[1], "example.com:80");
	ATF_CHECK_EQ(c.c_uid, (uid_t)-1);
	ATF_CHECK_EQ(c.c_gid, (gid_t)-1);
	ATF_CHECK_EQ(c.c_admin_gid, (gid_t)-1);
	ATF_CHECK_EQ(c.c_verbose, 0);
}

ATF_TC_WITHOUT_HEAD(empty_file);
ATF_TC_BODY(empty_file, tc)
{
	struct fenced_config	 c, d;

	config_defaults(&d);
	ATF_CHECK_EQ(parse_text("", &c), 0);
	ATF_CHECK(same_config(&c, &d));
	ATF_CHECK_EQ(parse_text("# only\n\n   # comments\n\t\n", &c), 0);
	ATF_CHECK(same_config(&c, &d));
	ATF_CHECK_STREQ(logbuf, "");
}

/* etc/fenced.conf says what the defaults are, and must say it right. */
ATF_TC_WITHOUT_HEAD(probe_targets);
ATF_TC_BODY(probe_targets, tc)
{
	struct fenced_config	 c;
	char			 many[1024];
	int			 i;

	config_defaults(&c);
	write_file("p.conf", "probe dns \"localhost\"\n"
	    "probe tcp \"127.0.0.1:1\"\nprobe tcp \"[::1]:80\"\n");
	ATF_REQUIRE_EQ(config_parse("p.conf", &c), 0);
	ATF_CHECK_STREQ(c.c_probe_dns, "localhost");
	ATF_CHECK_EQ(c.c_probe_ntcp, 2);
	ATF_CHECK_STREQ(c.c_probe_tcp[0], "127.0.0.1:1");
	ATF_CHECK_STREQ(c.c_probe_tcp[1], "[::1]:80");

	config_defaults(&c);
	write_file("bad.conf", "probe tcp \"1.2.3.4\"\nprobe dns \"-x\"\n"
	    "probe tcp \"h:0\"\n");
	ATF_CHECK_EQ(config_parse("bad.conf", &c), -1);
	ATF_CHECK_STREQ(c.c_probe_dns, "example.com");

	config_defaults(&c);
	many[0] = '\0';
	for (i = 0; i < PROBE_TCP_MAX + 1; i++)
		strlcat(many, "probe tcp \"127.0.0.1:1\"\n", sizeof(many));
	write_file("many.conf", many);
	ATF_CHECK_EQ(config_parse("many.conf", &c), -1);
}

/* `egress ...' and `probe egress ...': each form, each refusal. */
ATF_TC_WITHOUT_HEAD(egress);
ATF_TC_BODY(egress, tc)
{
	struct fenced_config	 c;
	char			 many[4096];
	int			 i;

	ATF_REQUIRE_EQ(parse_text("egress host Allowed.Test 127.0.0.1 port 80\n"
	    "egress host v6.test ::1 port 443\n"
	    "egress host allowed.test 10.0.0.1 port 8080\n"
	    "egress resolver 127.0.0.1 port 5353\n"
	    "egress resolver ::1\n"
	    "egress resolver port 5353\n"
	    "egress connections 8\n"
	    "egress rate 1M\n"
	    "egress idle 2m\n"
	    "egress connect timeout 5\n"
	    "probe egress allowed \"Allowed.test:8443\"\n"
	    "probe egress refused \"nope.test:443\"\n", &c), 0);
	ATF_CHECK_EQ(c.c_egress_nhosts, 3);
	ATF_CHECK_STREQ(c.c_egress_host[0], "allowed.test 127.0.0.1 80");
	ATF_CHECK_STREQ(c.c_egress_host[1], "v6.test ::1 443");
	ATF_CHECK_STREQ(c.c_egress_host[2], "allowed.test 10.0.0.1 8080");
	ATF_CHECK_EQ(c.c_egress_nresolvers, 2);
	ATF_CHECK_STREQ(c.c_egress_resolver[0], "127.0.0.1");
	ATF_CHECK_STREQ(c.c_egress_resolver[1], "::1");
	ATF_CHECK_EQ(c.c_egress_resolver_port, 5353);
	ATF_CHECK_EQ(c.c_egress_conns, 8);
	ATF_CHECK_EQ(c.c_egress_rate, 1024 * 1024);
	ATF_CHECK_EQ(c.c_egress_idle, 120);
	ATF_CHECK_EQ(c.c_egress_connect, 5);
	ATF_CHECK_STREQ(c.c_probe_egress_allowed, "allowed.test:8443");
	ATF_CHECK_STREQ(c.c_probe_egress_refused, "nope.test:443");
	ATF_CHECK_STREQ(logbuf, "");

	parse_fails(OK2 "egress host 1.2.3.4 127.0.0.1 port 1\n", 3,
	    "egress host \"1.2.3.4\" is not a host name");
	parse_fails(OK2 "egress host a.test here port 1\n", 3,
	    "\"here\" is not an IPv4 or IPv6 address");
	parse_fails(OK2 "egress host a.test \"10.0.0.1 80\" port 1\n", 3,
	    "\"10.0.0.1 80\" is not an IPv4 or IPv6 address");
	parse_fails(OK2 "egress host \"*.a.test\" 127.0.0.1 port 1\n", 3,
	    "is not a host name");
	parse_fails(OK2 "egress host a.test 10.0.0.1 port 5\negress host "
	    "A.TEST 10.0.0.2 port 5\n", 4,
	    "egress host A.TEST port 5 is given twice");
	parse_fails(OK2 "egress host a.test\n", 3, "syntax error");
	/* The old form, every port of the address: refused, the new named. */
	parse_fails(OK2 "egress host a.test 10.0.0.1\n", 3,
	    "egress host a.test 10.0.0.1: name the one port it is for: "
	    "egress host a.test 10.0.0.1 port NUMBER");
	parse_fails(OK2 "egress host a.test 10.0.0.1 port 0\n", 3,
	    "egress host port 0 is out of range");
	parse_fails(OK2 "egress host a.test 10.0.0.1 port 65536\n", 3,
	    "is out of range");
	/*
	 * fenced's own API, on any loopback or unspecified address, and
	 * wherever the listen line is.
	 */
	ATF_CHECK_EQ(parse_text("egress host a.test 127.0.0.5 port 7701\n"
	    "listen on 127.0.0.1 port 7701\n", &c), -1);
	logged("egress host a.test 127.0.0.5 port 7701: that is fenced's own "
	    "API (listen on 127.0.0.1 port 7701), never a destination");
	ATF_CHECK_EQ(parse_text("egress host a.test ::ffff:127.0.0.1 port "
	    "7700\n", &c), -1);
	logged("egress host a.test ::ffff:127.0.0.1 port 7700: that is "
	    "fenced's own API");
	ATF_CHECK_EQ(parse_text("egress host a.test 0.0.0.0 port 7700\n", &c),
	    -1);
	logged("egress host a.test 0.0.0.0 port 7700: that is fenced's own "
	    "API");
	ATF_CHECK_EQ(parse_text("listen on ::1 port 7702\negress host a.test "
	    ":: port 7702\n", &c), -1);
	logged("egress host a.test :: port 7702: that is fenced's own API");
	ATF_CHECK_EQ(parse_text("egress host a.test 127.0.0.5 port 7701\n",
	    &c), 0);
	ATF_CHECK_EQ(parse_text("egress host a.test 10.0.0.1 port 7700\n",
	    &c), 0);
	parse_fails(OK2 "egress resolver dns.test\n", 3,
	    "egress resolver \"dns.test\" is not an IPv4 or IPv6 address");
	parse_fails(OK2 "egress resolver 127.0.0.1 port 0\n", 3,
	    "egress resolver port 0 is out of range");
	parse_fails(OK2 "egress connections 0\n", 3,
	    "egress connections 0 is out of range");
	parse_fails(OK2 "egress connections 1025\n", 3, "is out of range");
	parse_fails(OK2 "egress rate 1023\n", 3,
	    "egress rate 1023 is out of range");
	parse_fails(OK2 "egress rate 2G\n", 3, "is out of range");
	parse_fails(OK2 "egress idle 0\n", 3, "egress idle 0 is out of range");
	parse_fails(OK2 "egress connect timeout 121\n", 3,
	    "egress connect timeout 121 is out of range");
	parse_fails(OK2 "egress connect 5\n", 3, "syntax error");
	parse_fails(OK2 "probe egress allowed \"*.a.test:443\"\n", 3,
	    "a target is one name, not a wildcard");
	parse_fails(OK2 "probe egress refused \"127.0.0.1:443\"\n", 3,
	    "an IP literal is not a name");
	parse_fails(OK2 "probe egress refused \"a.test\"\n", 3,
	    "probe egress refused \"a.test\"");

	many[0] = '\0';
	for (i = 0; i <= EGRESS_HOSTS_MAX; i++) {
		char	 line[64];

		(void)snprintf(line, sizeof(line),
		    "egress host h%d.test 127.0.0.1 port 80\n", i);
		strlcat(many, line, sizeof(many));
	}
	parse_fails_at(many, TEST_CONF, EGRESS_HOSTS_MAX + 1,
	    "egress host: at most 32 names");
}

/* `http origin': repeatable, checked, bounded, no duplicates. */
ATF_TC_WITHOUT_HEAD(http_origins);
ATF_TC_BODY(http_origins, tc)
{
	struct fenced_config	 c;
	char			 many[4096], line[64];
	int			 i;

	config_defaults(&c);
	ATF_CHECK_EQ(c.c_http_norigins, 0);
	write_file("o.conf", "http origin \"http://localhost:5173\"\n"
	    "http origin \"https://ui.example.org\"\n");
	ATF_REQUIRE_EQ(config_parse("o.conf", &c), 0);
	ATF_CHECK_EQ(c.c_http_norigins, 2);
	ATF_CHECK_STREQ(c.c_http_origin[0], "http://localhost:5173");
	ATF_CHECK_STREQ(c.c_http_origin[1], "https://ui.example.org");

	ATF_CHECK_EQ(parse_text("http origin \"http://localhost:5173/\"\n",
	    &c), -1);
	logged("is not an origin");
	ATF_CHECK_EQ(parse_text("http origin \"null\"\n", &c), -1);
	logged("is not an origin");
	ATF_CHECK_EQ(parse_text("http origin \"http://a:1\"\n"
	    "http origin \"http://a:1\"\n", &c), -1);
	logged("listed twice");

	many[0] = '\0';
	for (i = 0; i < HTTP_ORIGINS_MAX + 1; i++) {
		snprintf(line, sizeof(line), "http origin \"http://a:%d\"\n",
		    1000 + i);
		strlcat(many, line, sizeof(many));
	}
	ATF_CHECK_EQ(parse_text(many, &c), -1);
	logged("at most 16 origins");
}

ATF_TC(example_conf);
ATF_TC_HEAD(example_conf, tc)
{
	atf_tc_set_md_var(tc, "descr", "etc/fenced.conf equals the defaults");
}
ATF_TC_BODY(example_conf, tc)
{
	struct fenced_config	 c, d;
	char			 path[PATH_MAX];
	const char		*topdir;

	/* The source tree, as the GNUmakefile passes it to kyua. */
	if (!atf_tc_has_config_var(tc, "topdir"))
		atf_tc_skip("no topdir: run through make check");
	topdir = atf_tc_get_config_var(tc, "topdir");
	(void)snprintf(path, sizeof(path), "%s/etc/fenced.conf", topdir);
	ATF_REQUIRE_MSG(access(path, F_OK) == 0, "%s not found", path);

	/* Start from something else, so that every line must count. */
	memset(&c, 0, sizeof(c));
	c.c_uid = c.c_gid = c.c_admin_gid = (uid_t)-1;
	config_defaults(&d);
	capture_start();
	ATF_CHECK_EQ(config_parse(path, &c), 0);
	capture_end();
	ATF_CHECK(same_config(&c, &d));
	ATF_CHECK_STREQ(logbuf, "");
}

ATF_TC_WITHOUT_HEAD(runsc);
ATF_TC_BODY(runsc, tc)
{
	struct fenced_config	 c;

	config_defaults(&c);
	ATF_CHECK_STREQ(c.c_runsc, "");
	ATF_CHECK_STREQ(c.c_runsc_platform, "ptrace");
	ATF_REQUIRE_EQ(parse_text("runsc \"/opt/gvisor/runsc\"\n"
	    "runsc platform kvm\n", &c), 0);
	ATF_CHECK_STREQ(c.c_runsc, "/opt/gvisor/runsc");
	ATF_CHECK_STREQ(c.c_runsc_platform, "kvm");
	ATF_REQUIRE_EQ(parse_text("runsc platform systrap\n", &c), 0);
	ATF_CHECK_STREQ(c.c_runsc_platform, "systrap");
	parse_fails(OK2 "runsc \"runsc\"\n", 3, "must be an absolute path");
	parse_fails(OK2 "runsc platform hypervisor\n", 3,
	    "expected ptrace, systrap or kvm");
	parse_fails(OK2 "runsc platform \"\"\n", 3, "is not valid");
}

#define SHA_A \
	"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

ATF_TC_WITHOUT_HEAD(vm);
ATF_TC_BODY(vm, tc)
{
	struct fenced_config	 c;

	config_defaults(&c);
	ATF_CHECK_EQ(c.c_vm_accel, VM_ACCEL_AUTO);
	ATF_CHECK_STREQ(c.c_vm_path[VM_FILE_KERNEL], "");
	ATF_REQUIRE_EQ(parse_text("vm accel tcg\n"
	    "vm kernel \"/i/vmlinuz\" sha256 \"" SHA_A "\"\n"
	    "vm initrd \"/i/initrd\" sha256 " SHA_A "\n"
	    "vm image /i/root.squashfs sha256 \"" SHA_A "\"\n"
	    "backend vm\n", &c), 0);
	ATF_CHECK_EQ(c.c_vm_accel, VM_ACCEL_TCG);
	ATF_CHECK_EQ(c.c_backend, BACKEND_VM);
	ATF_CHECK_STREQ(c.c_vm_path[VM_FILE_KERNEL], "/i/vmlinuz");
	ATF_CHECK_STREQ(c.c_vm_path[VM_FILE_INITRD], "/i/initrd");
	ATF_CHECK_STREQ(c.c_vm_path[VM_FILE_IMAGE], "/i/root.squashfs");
	ATF_CHECK_STREQ(c.c_vm_sha256[VM_FILE_IMAGE], SHA_A);
	ATF_REQUIRE_EQ(parse_text("vm accel kvm\n", &c), 0);
	ATF_CHECK_EQ(c.c_vm_accel, VM_ACCEL_KVM);
	parse_fails(OK2 "vm kernel \"/i/vmlinuz\"\n", 3, "needs its hash");
	parse_fails(OK2 "vm image \"/i/r\" sha256 \"abc\"\n", 3,
	    "64 lowercase hex digits");
	parse_fails(OK2 "vm initrd \"/i/r\" sha256 \"E3B0C44298FC1C149AFBF4"
	    "C8996FB92427AE41E4649B934CA495991B7852B855\"\n", 3,
	    "64 lowercase hex digits");
	parse_fails(OK2 "vm kernel \"vmlinuz\" sha256 " SHA_A "\n", 3,
	    "must be an absolute path");
	parse_fails(OK2 "vm accel fast\n", 3, "expected auto, kvm or tcg");
	/* vm off: not offered; vm on (the default) undoes it. */
	config_defaults(&c);
	ATF_CHECK_EQ(c.c_vm_off, 0);
	ATF_REQUIRE_EQ(parse_text("vm off\n", &c), 0);
	ATF_CHECK_EQ(c.c_vm_off, 1);
	ATF_REQUIRE_EQ(parse_text("vm off\nvm on\n", &c), 0);
	ATF_CHECK_EQ(c.c_vm_off, 0);
	parse_fails(OK2 "vm maybe\n", 3, "expected vm on, vm off, vm accel");
	/* vm inner: a vm fence's default inner boundary, none unless set. */
	config_defaults(&c);
	ATF_CHECK_EQ(c.c_vm_inner, 0);
	ATF_REQUIRE_EQ(parse_text("vm inner runsc\n", &c), 0);
	ATF_CHECK_EQ(c.c_vm_inner, 1);
	ATF_REQUIRE_EQ(parse_text("vm inner runsc\nvm inner none\n", &c), 0);
	ATF_CHECK_EQ(c.c_vm_inner, 0);
	parse_fails(OK2 "vm inner gvisor\n", 3, "expected runsc or none");
	parse_fails(OK2 "vm outer runsc\n", 3, "expected vm inner runsc");
	/* None: the files built into fenced; some: refused. */
	ATF_REQUIRE_EQ(parse_text("backend vm\n", &c), 0);
	ATF_CHECK_STREQ(c.c_vm_path[VM_FILE_INITRD], "");
	ATF_CHECK_EQ(parse_text("vm kernel \"/i/vmlinuz\" sha256 " SHA_A "\n"
	    "vm image \"/i/root\" sha256 " SHA_A "\n", &c), -1);
	logged("vm kernel, vm initrd and vm image go together: name all "
	    "three, or none");
	ATF_CHECK_EQ(parse_text("vm initrd \"/i/initrd\" sha256 " SHA_A "\n",
	    &c), -1);
	logged("go together");
}

ATF_TC_WITHOUT_HEAD(every_keyword);
ATF_TC_BODY(every_keyword, tc)
{
	struct fenced_config	 c;

	ATF_REQUIRE_EQ(parse_text(
	    "listen on 127.0.0.53 port 8080\n"
	    "socket \"/run/other.sock\"\n"
	    "state /srv/fenced\n"
	    "homes \"/home/%u/fences\"\n"
	    "user \"fence-user\"\n"
	    "fence uids 70000-70999\n"
	    "admin group staff\n"
	    "tier L2\n"
	    "backend runsc\n"
	    "lifetime 3600\n"
	    "limit memory 1073741824\n"
	    "limit pids 1000\n"
	    "limit cpu 2.5\n"
	    "exec timeout 500 max 2000\n"
	    "exec output 4096 max 8192\n"
	    "exec inflight per user 8\n"
	    "exec processes 5\n"
	    "http body max 1M\n"
	    "http headers max 16K\n"
	    "http timeout 2m\n"
	    "http connections max 100 per user 10\n", &c), 0);
	ATF_CHECK_STREQ(c.c_listen_addr, "127.0.0.53");
	ATF_CHECK_EQ(c.c_listen_port, 8080);
	ATF_CHECK_STREQ(c.c_socket, "/run/other.sock");
	ATF_CHECK_STREQ(c.c_state, "/srv/fenced");
	ATF_CHECK_STREQ(c.c_homes, "/home/%u/fences");
	ATF_CHECK_STREQ(c.c_user, "fence-user");
	ATF_CHECK_EQ(c.c_fence_uid_lo, 70000);
	ATF_CHECK_EQ(c.c_fence_uid_hi, 70999);
	ATF_CHECK_STREQ(c.c_admin_group, "staff");
	ATF_CHECK_EQ(c.c_tier, TIER_L2);
	ATF_CHECK_EQ(c.c_backend, BACKEND_RUNSC);
	ATF_CHECK_EQ(c.c_lifetime, 3600);
	ATF_CHECK_EQ(c.c_limits.fl_memory, 1ULL << 30);
	ATF_CHECK_EQ(c.c_limits.fl_pids, 1000);
	ATF_CHECK_EQ(c.c_limits.fl_cpu_milli, 2500);
	ATF_CHECK_EQ(c.c_exec_timeout, 500);
	ATF_CHECK_EQ(c.c_exec_timeout_max, 2000);
	ATF_CHECK_EQ(c.c_exec_output, 4096);
	ATF_CHECK_EQ(c.c_exec_output_max, 8192);
	ATF_CHECK_EQ(c.c_exec_inflight_user, 8);
	ATF_CHECK_EQ(c.c_exec_processes, 5);
	ATF_CHECK_EQ(c.c_http_body_max, 1024 * 1024);
	ATF_CHECK_EQ(c.c_http_headers_max, 16384);
	ATF_CHECK_EQ(c.c_http_timeout, 120);
	ATF_CHECK_EQ(c.c_http_conns_max, 100);
	ATF_CHECK_EQ(c.c_http_conns_user, 10);
	ATF_CHECK_STREQ(logbuf, "");

	/* The other tiers and backends, and the last word winning. */
	ATF_REQUIRE_EQ(parse_text("tier L2\ntier L1\nbackend vm\n", &c), 0);
	ATF_CHECK_EQ(c.c_tier, TIER_L1);
	ATF_CHECK_EQ(c.c_backend, BACKEND_VM);
	ATF_REQUIRE_EQ(parse_text("tier L1.5\nbackend mock\n", &c), 0);
	ATF_CHECK_EQ(c.c_tier, TIER_L15);
	ATF_CHECK_EQ(c.c_backend, BACKEND_MOCK);
	ATF_REQUIRE_EQ(parse_text("backend subprocess\nbackend native\n"
	    "backend subprocess\n", &c), 0);
	ATF_CHECK_EQ(c.c_backend, BACKEND_SUBPROCESS);
}

ATF_TC_WITHOUT_HEAD(listen_forms);
ATF_TC_BODY(listen_forms, tc)
{
	struct fenced_config	 c;

	/* No port keeps the port; the address is kept canonical. */
	ATF_REQUIRE_EQ(parse_text("listen on ::1\n", &c), 0);
	ATF_CHECK_STREQ(c.c_listen_addr, "::1");
	ATF_CHECK_EQ(c.c_listen_port, 7700);
	ATF_REQUIRE_EQ(parse_text("listen on \"0:0::1\" port 1\n", &c), 0);
	ATF_CHECK_STREQ(c.c_listen_addr, "::1");
	ATF_CHECK_EQ(c.c_listen_port, 1);
	ATF_REQUIRE_EQ(parse_text("listen on 127.255.0.1 port 65535\n", &c),
	    0);
	ATF_CHECK_STREQ(c.c_listen_addr, "127.255.0.1");
	ATF_CHECK_EQ(c.c_listen_port, 65535);
}

ATF_TC_WITHOUT_HEAD(http_limits);
ATF_TC_BODY(http_limits, tc)
{
	struct fenced_config	 c;

	/* Without `per user', the per-user limit is lowered to the max. */
	ATF_REQUIRE_EQ(parse_text("http connections max 8\n", &c), 0);
	ATF_CHECK_EQ(c.c_http_conns_max, 8);
	ATF_CHECK_EQ(c.c_http_conns_user, 8);
	ATF_REQUIRE_EQ(parse_text("http connections max 4096\n", &c), 0);
	ATF_CHECK_EQ(c.c_http_conns_max, 4096);
	ATF_CHECK_EQ(c.c_http_conns_user, 32);
	ATF_REQUIRE_EQ(parse_text("http body max 4K\nhttp headers max 1K\n"
	    "http timeout 1\nexec inflight per user 1\n", &c), 0);
	ATF_CHECK_EQ(c.c_http_body_max, 4096);
	ATF_CHECK_EQ(c.c_http_headers_max, 1024);
	ATF_CHECK_EQ(c.c_http_timeout, 1);
	ATF_CHECK_EQ(c.c_exec_inflight_user, 1);

	parse_fails(OK2 "http connections max 10 per user 11\n", 3,
	    "http connections per user 11 is above the max 10");
	parse_fails(OK2 "http connections max 0\n", 3,
	    "http connections max 0 is out of range: must be between 1 "
	    "and 4096");
	parse_fails(OK2 "http body max 100M\n", 3,
	    "http body max 100M is out of range: must be between 4K and 8M");
	/* files max: 16M unless said, 4K to 256M. */
	ATF_CHECK_EQ(c.c_files_max, 16U << 20);
	ATF_REQUIRE_EQ(parse_text("files max 64K\n", &c), 0);
	ATF_CHECK_EQ(c.c_files_max, 65536);
	ATF_REQUIRE_EQ(parse_text("files max 256M\n", &c), 0);
	ATF_CHECK_EQ(c.c_files_max, 256U << 20);
	parse_fails(OK2 "files max 1K\n", 3,
	    "files max 1K is out of range: must be between 4K and 256M");
	parse_fails(OK2 "files max 1G\n", 3, "files max 1G is out of range");
	parse_fails(OK2 "http headers max 512\n", 3,
	    "http headers max 512 is out of range");
	parse_fails(OK2 "http timeout 0\n", 3,
	    "http timeout 0 is out of range: must be between 1s and 5m");
	parse_fails(OK2 "http timeout 2K\n", 3,
	    "http timeout \"2K\" is not valid");
	parse_fails(OK2 "exec inflight per user 2000\n", 3,
	    "exec inflight per user 2000 is out of range");
	parse_fails(OK2 "http timeouts 5\n", 3, "syntax error");
	parse_fails(OK2 "exec inflight 5\n", 3, "syntax error");
	parse_fails(OK2 "exec processes 65\n", 3,
	    "exec processes 65 is out of range");
	parse_fails(OK2 "exec processes 0\n", 3,
	    "exec processes 0 is out of range");
}

ATF_TC_WITHOUT_HEAD(suffixes);
ATF_TC_BODY(suffixes, tc)
{
	struct fenced_config	 c;

	ATF_REQUIRE_EQ(parse_text("limit memory 4096K\n", &c), 0);
	ATF_CHECK_EQ(c.c_limits.fl_memory, 4096ULL << 10);
	ATF_REQUIRE_EQ(parse_text("limit memory 768m\n", &c), 0);
	ATF_CHECK_EQ(c.c_limits.fl_memory, 768ULL << 20);
	ATF_REQUIRE_EQ(parse_text("limit memory 2G\n", &c), 0);
	ATF_CHECK_EQ(c.c_limits.fl_memory, 2ULL << 30);
	ATF_REQUIRE_EQ(parse_text("limit memory 1T\n", &c), 0);
	ATF_CHECK_EQ(c.c_limits.fl_memory, 1ULL << 40);

	ATF_REQUIRE_EQ(parse_text("limit home 1G\n", &c), 0);
	ATF_CHECK_EQ(c.c_home_limit, 1ULL << 30);
	ATF_REQUIRE_EQ(parse_text("limit home 16M\n", &c), 0);
	ATF_CHECK_EQ(c.c_home_limit, 16ULL << 20);
	ATF_REQUIRE_EQ(parse_text("lifetime 1h\n", &c), 0);
	ATF_CHECK_EQ(c.c_home_limit, 0);	/* none by default */
	parse_fails("limit home 1M\n", 1, "limit home");
	parse_fails("limit home 2T\n", 1, "limit home");

	ATF_REQUIRE_EQ(parse_text("lifetime 90s\n", &c), 0);
	ATF_CHECK_EQ(c.c_lifetime, 90);
	ATF_REQUIRE_EQ(parse_text("lifetime 30m\n", &c), 0);
	ATF_CHECK_EQ(c.c_lifetime, 1800);
	ATF_REQUIRE_EQ(parse_text("lifetime 2h\n", &c), 0);
	ATF_CHECK_EQ(c.c_lifetime, 7200);
	ATF_REQUIRE_EQ(parse_text("lifetime 7d\n", &c), 0);
	ATF_CHECK_EQ(c.c_lifetime, 7 * 86400);

	ATF_REQUIRE_EQ(parse_text("exec output 2K max 1M\n", &c), 0);
	ATF_CHECK_EQ(c.c_exec_output, 2048);
	ATF_CHECK_EQ(c.c_exec_output_max, 1048576);

	ATF_REQUIRE_EQ(parse_text("limit cpu 0.5\n", &c), 0);
	ATF_CHECK_EQ(c.c_limits.fl_cpu_milli, 500);
	ATF_REQUIRE_EQ(parse_text("limit cpu 2\n", &c), 0);
	ATF_CHECK_EQ(c.c_limits.fl_cpu_milli, 2000);
	ATF_REQUIRE_EQ(parse_text("limit cpu 0.25\n", &c), 0);
	ATF_CHECK_EQ(c.c_limits.fl_cpu_milli, 250);
	ATF_REQUIRE_EQ(parse_text("limit cpu 0.010\n", &c), 0);
	ATF_CHECK_EQ(c.c_limits.fl_cpu_milli, 10);
	ATF_REQUIRE_EQ(parse_text("limit cpu 1024.0000\n", &c), 0);
	ATF_CHECK_EQ(c.c_limits.fl_cpu_milli, 1024000);

	/* Suffixes belong to their unit. */
	parse_fails("lifetime 2G\n", 1, "lifetime \"2G\" is not valid");
	parse_fails("limit memory 2h\n", 1,
	    "limit memory \"2h\" is not valid");
	parse_fails("limit pids 2K\n", 1, "limit pids \"2K\" is not valid");
	parse_fails("limit memory 2MB\n", 1,
	    "limit memory \"2MB\" is not valid");
	parse_fails("limit cpu 1.\n", 1, "limit cpu \"1.\" is not valid");
	parse_fails("limit cpu 1.0005\n", 1, "at most three decimals");
}

ATF_TC(macros);
ATF_TC_HEAD(macros, tc)
{
	atf_tc_set_md_var(tc, "descr", "macros are set, used, not re-expanded, and errors named");
	/* A lexer that loops fails here rather than hangs. */
	atf_tc_set_md_var(tc, "timeout", "20");
}
ATF_TC_BODY(macros, tc)
{
	struct fenced_config	 c;

	ATF_REQUIRE_EQ(parse_text(
	    "lo = \"127.0.0.1\"\n"
	    "port_1 = 8081\n"
	    "t=L2\n"
	    "listen on $lo port $port_1\n"
	    "tier $t\n"
	    "base = \"/srv\"\n"
	    "homes $base/homes\n"
	    "t = L1\n"			/* redefined */
	    "tier $t\n"
	    "both = \"memory 1G\"\n"	/* a value may hold several words */
	    "limit $both\n"
	    "q = \"$t\"\n"		/* quoted: not expanded */
	    "state \"/x/$t\"\n", &c), 0);
	ATF_CHECK_STREQ(c.c_listen_addr, "127.0.0.1");
	ATF_CHECK_EQ(c.c_listen_port, 8081);
	ATF_CHECK_STREQ(c.c_homes, "/srv/homes");
	ATF_CHECK_EQ(c.c_tier, TIER_L1);
	ATF_CHECK_EQ(c.c_limits.fl_memory, 1ULL << 30);
	ATF_CHECK_STREQ(c.c_state, "/x/$t");

	parse_fails(OK2 "tier $undefined\n", 3,
	    "macro \"undefined\" is not defined");
	parse_fails(OK2 "bad-name = 5\n", 3,
	    "macro name \"bad-name\" is not valid");
	parse_fails(OK2 "tier $\n", 3, "$ must be followed by a macro name");
	/* A macro without a value is not an unknown keyword. */
	parse_fails(OK2 "x =\n", 3, "syntax error at end of line");
	/* A macro's value is not expanded again: no loop, an error. */
	parse_fails(OK2 "x = \"$x\"\ntier $x\n", 4, "syntax error at \"$\"");
	/* A keyword is no macro name. */
	parse_fails(OK2 "tier = L2\n", 3, "syntax error at \"=\"");
}

ATF_TC_WITHOUT_HEAD(include);
ATF_TC_BODY(include, tc)
{
	struct fenced_config	 c;

	ATF_REQUIRE(mkdir("sub", 0755) == 0);
	/* Relative to the file that includes: sub/two.conf, not ./two.conf. */
	write_file("sub/one.conf",
	    "limit pids 300\n"
	    "include \"two.conf\"\n"
	    "lifetime $life\n");
	write_file("sub/two.conf", "backend vm\nlife = 60\n");
	write_file("two.conf", "backend mock\n");
	ATF_REQUIRE_EQ(parse_text(
	    "limit pids 100\n"
	    "include \"sub/one.conf\"\n"
	    "tier L1\n"
	    "include \"sub/two.conf\"", &c), 0);	/* no final newline */
	ATF_CHECK_EQ(c.c_limits.fl_pids, 300);
	ATF_CHECK_EQ(c.c_backend, BACKEND_VM);
	ATF_CHECK_EQ(c.c_lifetime, 60);
	ATF_CHECK_EQ(c.c_tier, TIER_L1);
	ATF_CHECK_STREQ(logbuf, "");

	/* After an include, the lines of each file are counted right. */
	write_file("sub/bad.conf", "tier L1\n\nlimit pids 1\n");
	ATF_CHECK_EQ(parse_text(
	    "tier L1\n"
	    "include \"sub/bad.conf\"\n"
	    "\n"
	    "limit pids 2\n", &c), -1);
	logged("sub/bad.conf:3: limit pids 1 is out of range");
	logged(TEST_CONF ":4: limit pids 2 is out of range");
	ATF_CHECK_EQ(log_lines(), 2);
}

ATF_TC(include_errors);
ATF_TC_HEAD(include_errors, tc)
{
	atf_tc_set_md_var(tc, "descr", "missing, looping and too deeply nested includes");
	/* A lexer that loops fails here rather than hangs. */
	atf_tc_set_md_var(tc, "timeout", "20");
}
ATF_TC_BODY(include_errors, tc)
{
	char	 name[32], text[64];
	int	 i;

	parse_fails(OK2 "include \"missing.conf\"\n", 3,
	    "include missing.conf: No such file or directory");

	write_file("loop.conf", "include \"" TEST_CONF "\"\n");
	/* The loop is found in loop.conf, so it names that file. */
	parse_fails_at("include \"loop.conf\"\n", "loop.conf", 1,
	    "include " TEST_CONF ": that file is being read already");

	/* A chain of 12 files: too deep, and said where. */
	for (i = 1; i < 12; i++) {
		(void)snprintf(name, sizeof(name), "deep%d.conf", i);
		(void)snprintf(text, sizeof(text), "\ninclude deep%d.conf\n",
		    i + 1);
		write_file(name, text);
	}
	write_file("deep12.conf", "tier L1\n");
	/* test.conf and deep1 to deep7 are open: deep7 may not include. */
	parse_fails_at("include deep1.conf\n", "deep7.conf", 2,
	    "include \"deep8.conf\": files nested more than 8 deep");

	ATF_REQUIRE(mkdir("dir.conf", 0755) == 0);
	parse_fails("include \"dir.conf\"\n", 1, "not a regular file");
}

/* Each kind of error, at its line, and nothing else reported. */
ATF_TC_WITHOUT_HEAD(errors);
ATF_TC_BODY(errors, tc)
{
	parse_fails(OK2 "lisen on 127.0.0.1\n", 3,
	    "unknown keyword \"lisen\"");
	parse_fails(OK2 "frobnicate\n", 3, "unknown keyword \"frobnicate\"");
	parse_fails(OK2 "limit bogus 5\n", 3, "syntax error at \"bogus\"");
	parse_fails(OK2 "limit pids\n", 3, "syntax error at end of line");
	parse_fails(OK2 "tier L1 L2\n", 3, "syntax error at \"L2\"");

	parse_fails(OK2 "listen on 10.0.0.1\n", 3,
	    "listen on 10.0.0.1: not a loopback address");
	parse_fails(OK2 "listen on 0.0.0.0 port 80\n", 3,
	    "not a loopback address");
	parse_fails(OK2 "listen on ::\n", 3, "not a loopback address");
	parse_fails(OK2 "listen on ::ffff:127.0.0.1\n", 3,
	    "not a loopback address");
	parse_fails(OK2 "listen on localhost\n", 3,
	    "not an IPv4 or IPv6 address literal");

	parse_fails(OK2 "socket \"run/fenced.sock\"\n", 3,
	    "socket \"run/fenced.sock\" must be an absolute path");
	parse_fails(OK2 "socket \"/run/"
	    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	    ".sock\"\n", 3, "is too long");
	parse_fails(OK2 "state var/lib/fenced\n", 3,
	    "state \"var/lib/fenced\" must be an absolute path");
	parse_fails(OK2 "state //\n", 3, "may not be the root directory");

	parse_fails(OK2 "homes /tmp/homes\n", 3,
	    "homes \"/tmp/homes\" may not be in /tmp");
	parse_fails(OK2 "homes /tmp\n", 3, "may not be in /tmp");
	parse_fails(OK2 "homes //tmp//x\n", 3, "may not be in /tmp");
	parse_fails(OK2 "homes /var/tmp/x\n", 3, "may not be in /tmp");
	parse_fails(OK2 "homes /dev/shm\n", 3, "may not be in /tmp");
	parse_fails(OK2 "homes /srv/../tmp/x\n", 3,
	    "may not have a \".\" or \"..\" component");
	parse_fails(OK2 "homes sandbox-homes\n", 3,
	    "must be an absolute path or start with ~/");
	parse_fails(OK2 "homes ~other/x\n", 3, "may use ~ only");
	parse_fails(OK2 "homes /home/%n\n", 3, "no % escape but %u");

	parse_fails(OK2 "user \"-rf\"\n", 3, "user \"-rf\" is not a valid name");
	parse_fails(OK2 "user 1000\n", 3, "is a number");
	parse_fails(OK2 "admin group \"a b\"\n", 3, "is not a valid name");
	parse_fails(OK2 "admin group "
	    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	    "\n", 3, "must be 1 to 63 characters long");

	parse_fails(OK2 "fence uids 61999-61000\n", 3,
	    "fence uids 61999-61000 is reversed");
	parse_fails(OK2 "fence uids 61000\n", 3, "expected a range LOW-HIGH");
	parse_fails(OK2 "fence uids 60000-70000\n", 3,
	    "contains 65534, the uid of nobody");

	parse_fails(OK2 "tier L3\n", 3, "tier \"L3\" is not valid");
	parse_fails(OK2 "backend docker\n", 3,
	    "backend \"docker\" is not valid");

	parse_fails(OK2 "exec timeout 20000 max 10000\n", 3,
	    "exec timeout 20000 is above its max 10000");
	parse_fails(OK2 "exec timeout 30000 max 60000\nexec timeout 50000 "
	    "max 20000\n", 4, "exec timeout 50000 is above its max 20000");
	parse_fails(OK2 "exec output 65536 max 4096\n", 3,
	    "exec output 65536 is above its max 4K");

	parse_fails(OK2 "state \"/var/lib/fenced\n", 3,
	    "unterminated string");
	parse_fails(OK2 "state \"/var/lib/fenced", 3, "unterminated string");
}

/* Every numeric setting, just outside its range on each side. */
ATF_TC_WITHOUT_HEAD(ranges);
ATF_TC_BODY(ranges, tc)
{
	struct fenced_config	 c;

	parse_fails(OK2 "listen on 127.0.0.1 port 0\n", 3,
	    "listen port 0 is out of range: must be between 1 and 65535");
	parse_fails(OK2 "listen on 127.0.0.1 port 65536\n", 3,
	    "listen port 65536 is out of range");
	/* A service name is no port ("http" is a keyword: www). */
	parse_fails(OK2 "listen on 127.0.0.1 port www\n", 3,
	    "listen port \"www\" is not valid: expected a number");

	parse_fails(OK2 "fence uids 999-2000\n", 3,
	    "fence uids 999 is out of range: must be between 1000 and "
	    "2147483647");
	parse_fails(OK2 "fence uids 1000-2147483648\n", 3,
	    "fence uids 2147483648 is out of range");

	parse_fails(OK2 "lifetime 0\n", 3,
	    "lifetime 0 is out of range: must be between 1s and 7d");
	parse_fails(OK2 "lifetime 604801\n", 3, "lifetime 604801 is out of "
	    "range");
	parse_fails(OK2 "lifetime -5\n", 3, "lifetime -5 is out of range");

	parse_fails(OK2 "limit memory 4194303\n", 3,
	    "limit memory 4194303 is out of range: must be between 4M and 1T");
	parse_fails(OK2 "limit memory 1025G\n", 3,
	    "limit memory 1025G is out of range");
	parse_fails(OK2 "limit memory 99999999999999999999999999T\n", 3,
	    "limit memory 99999999999999999999999999T is out of range");

	parse_fails(OK2 "limit pids 7\n", 3,
	    "limit pids 7 is out of range: must be between 8 and 65536");
	parse_fails(OK2 "limit pids 65537\n", 3,
	    "limit pids 65537 is out of range");

	parse_fails(OK2 "limit cpu 0.009\n", 3,
	    "limit cpu 0.009 is out of range: must be between 0.01 and 1024");
	parse_fails(OK2 "limit cpu 1024.001\n", 3,
	    "limit cpu 1024.001 is out of range");

	parse_fails(OK2 "exec timeout 99\n", 3,
	    "exec timeout 99 is out of range: must be between 100 and 60000");
	parse_fails(OK2 "exec timeout 100 max 60001\n", 3,
	    "exec timeout max 60001 is out of range");
	parse_fails(OK2 "exec output 1023\n", 3,
	    "exec output 1023 is out of range: must be between 1K and 1M");
	parse_fails(OK2 "exec output 1024 max 1048577\n", 3,
	    "exec output max 1048577 is out of range");

	/* And the bounds themselves are in. */
	ATF_REQUIRE_EQ(parse_text("lifetime 1\nlimit memory 4M\n"
	    "limit pids 8\nlimit cpu 0.01\nexec timeout 100 max 100\n"
	    "exec output 1024 max 1024\nfence uids 1000-1000\n", &c), 0);
	ATF_CHECK_EQ(c.c_lifetime, LIFETIME_MIN);
	ATF_CHECK_EQ(c.c_limits.fl_memory, MEMORY_MIN);
	ATF_CHECK_EQ(c.c_limits.fl_pids, PIDS_MIN);
	ATF_CHECK_EQ(c.c_limits.fl_cpu_milli, CPU_MILLI_MIN);
	ATF_CHECK_EQ(c.c_exec_timeout_max, EXEC_TIMEOUT_MIN);
	ATF_CHECK_EQ(c.c_exec_output_max, EXEC_OUTPUT_MIN);
	ATF_REQUIRE_EQ(parse_text("lifetime 604800\nlimit memory 1024G\n"
	    "limit pids 65536\nlimit cpu 1024\nexec timeout 60000 max 60000\n"
	    "exec output 1M max 1M\nfence uids 70000-2147483647\n", &c), 0);
	ATF_CHECK_EQ(c.c_lifetime, LIFETIME_MAX);
	ATF_CHECK_EQ(c.c_limits.fl_memory, MEMORY_MAX);
	ATF_CHECK_EQ(c.c_limits.fl_pids, PIDS_MAX);
	ATF_CHECK_EQ(c.c_limits.fl_cpu_milli, CPU_MILLI_MAX);
	ATF_CHECK_EQ(c.c_exec_timeout, EXEC_TIMEOUT_MAX);
	ATF_CHECK_EQ(c.c_exec_output, EXEC_OUTPUT_MAX);
	ATF_CHECK_EQ(c.c_fence_uid_hi, 2147483647U);
}

/* One run reports every error, each at its own line. */
ATF_TC(every_error);
ATF_TC_HEAD(every_error, tc)
{
	atf_tc_set_md_var(tc, "descr", "one parse reports every error at its line");
	/* A lexer that loops fails here rather than hangs. */
	atf_tc_set_md_var(tc, "timeout", "20");
}
ATF_TC_BODY(every_error, tc)
{
	struct fenced_config	 c;

	ATF_CHECK_EQ(parse_text(
	    "bogus\n"				/* 1 */
	    "bogus\n"				/* 2: right after another */
	    "tier L1\n"
	    "limit pids 1\n"			/* 4 */
	    "limit memory \\\n"			/* a continued line */
	    "    512M\n"
	    "state \"unterminated\n"		/* 7 */
	    "lifetime x\n"			/* 8 */
	    "tier L1\n", &c), -1);
	logged(TEST_CONF ":1: unknown keyword \"bogus\"");
	logged(TEST_CONF ":2: unknown keyword \"bogus\"");
	logged(TEST_CONF ":4: limit pids 1");
	logged(TEST_CONF ":7: unterminated string");
	logged(TEST_CONF ":8: lifetime \"x\"");
	ATF_CHECK_EQ(log_lines(), 5);

	/* A file of nothing but errors is cut short. */
	{
		char	*text;
		size_t	 i;

		ATF_REQUIRE((text = malloc(200 * 4 + 1)) != NULL);
		for (i = 0; i < 200; i++)
			memcpy(text + i * 4, "xx\n\n", 4);
		text[200 * 4] = '\0';
		ATF_CHECK_EQ(parse_text(text, &c), -1);
		free(text);
		logged("too many errors");
		ATF_CHECK(log_lines() < 60);
	}
}

ATF_TC_WITHOUT_HEAD(lexer);
ATF_TC_BODY(lexer, tc)
{
	struct fenced_config	 c;
	char			 text[2048];

	/* Continuations, quotes, escapes, CRLF, a comment after a value. */
	ATF_REQUIRE_EQ(parse_text(
	    "exec timeout 500 \\\n"
	    "    max 1000\n"
	    "state '/srv/it\\'s'\n"
	    "socket \"/run/a\\\"b\\\\c\"\n"
	    "limit pids 300\r\n"
	    "tier L2 # trailing comment \\\n"
	    "backend vm\n"
	    "homes \"/srv/with space\"\n", &c), 0);
	ATF_CHECK_EQ(c.c_exec_timeout, 500);
	ATF_CHECK_EQ(c.c_exec_timeout_max, 1000);
	ATF_CHECK_STREQ(c.c_state, "/srv/it's");
	ATF_CHECK_STREQ(c.c_socket, "/run/a\"b\\c");
	ATF_CHECK_EQ(c.c_limits.fl_pids, 300);
	ATF_CHECK_EQ(c.c_tier, TIER_L2);
	/* A comment does not continue onto the next line. */
	ATF_CHECK_EQ(c.c_backend, BACKEND_VM);
	ATF_CHECK_STREQ(c.c_homes, "/srv/with space");

	/* Lines after a continued line are still counted right. */
	parse_fails("exec timeout 500 \\\n max 1000\n\nlimit pids 1\n", 4,
	    "limit pids 1 is out of range");

	/* Strings are bounded. */
	memset(text, 0, sizeof(text));
	memcpy(text, OK2 "state \"/", strlen(OK2 "state \"/"));
	memset(text + strlen(text), 'a', 1100);
	strlcat(text, "\"\n", sizeof(text));
	parse_fails(text, 3, "string too long");
	memset(text, 0, sizeof(text));
	memcpy(text, OK2 "state /", strlen(OK2 "state /"));
	memset(text + strlen(text), 'a', 1100);
	strlcat(text, "\n", sizeof(text));
	parse_fails(text, 3, "word too long");

	parse_fails(OK2 "state \"/a\tb\x01\"\n", 3,
	    "control character 0x01 in string");
	/*
	 * Strings go to the children as msgpack, which takes UTF-8 only:
	 * one the codec refuses made parent_send_config() fatal at start
	 * and on reload (found by fuzz/config_fuzz.c).
	 */
	parse_fails(OK2 "runsc \"/opt/\x95x\"\n", 3,
	    "string is not valid UTF-8");
	parse_fails(OK2 "homes \"/h/\xc3\"\n", 3, "string is not valid UTF-8");
	ATF_REQUIRE_EQ(parse_text("state \"/srv/f\xc3\xa9nced\"\n", &c), 0);
	ATF_CHECK_STREQ(c.c_state, "/srv/f\xc3\xa9nced");
}

ATF_TC_WITHOUT_HEAD(nul_byte);
ATF_TC_BODY(nul_byte, tc)
{
	struct fenced_config	 c;
	int			 fd;

	fd = open(TEST_CONF, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ATF_REQUIRE(fd != -1);
	ATF_REQUIRE(fchmod(fd, 0644) == 0);
	ATF_REQUIRE(write(fd, "tier L1\n\nstate \"/a\0b\"\n", 22) == 22);
	close(fd);
	config_defaults(&c);
	capture_start();
	ATF_CHECK_EQ(config_parse(TEST_CONF, &c), -1);
	capture_end();
	logged(TEST_CONF ":3: NUL byte in file");
	ATF_CHECK_STREQ(c.c_state, "/var/lib/fenced");
}

ATF_TC_WITHOUT_HEAD(file_checks);
ATF_TC_BODY(file_checks, tc)
{
	struct fenced_config	 c;

	config_defaults(&c);
	capture_start();
	ATF_CHECK_EQ(config_parse("nonexistent.conf", &c), -1);
	capture_end();
	logged("nonexistent.conf: No such file or directory");

	write_file(TEST_CONF, "tier L1\n");
	ATF_REQUIRE(chmod(TEST_CONF, 0664) == 0);
	capture_start();
	ATF_CHECK_EQ(config_parse(TEST_CONF, &c), -1);
	capture_end();
	logged(TEST_CONF ": writable by group or others");
	ATF_CHECK_EQ(c.c_tier, TIER_L15);

	ATF_REQUIRE(mkdir("dir.conf", 0755) == 0);
	capture_start();
	ATF_CHECK_EQ(config_parse("dir.conf", &c), -1);
	capture_end();
	logged("dir.conf: not a regular file");

	/* A FIFO must not hang the daemon. */
	ATF_REQUIRE(mkfifo("fifo.conf", 0644) == 0);
	capture_start();
	ATF_CHECK_EQ(config_parse("fifo.conf", &c), -1);
	capture_end();
	logged("fifo.conf: not a regular file");
}

ATF_TC_WITHOUT_HEAD(env_override);
ATF_TC_BODY(env_override, tc)
{
	struct fenced_config	 c, d;

	log_init(1, LOG_DAEMON);
	unsetenv("VOICEBOX_SANDBOX_HOMES");
	unsetenv("VOICEBOX_FENCE_MAX_SEC");
	config_defaults(&c);
	config_defaults(&d);
	ATF_CHECK_EQ(config_env_override(&c), 0);
	ATF_CHECK(same_config(&c, &d));

	ATF_REQUIRE(setenv("VOICEBOX_SANDBOX_HOMES", "/srv/homes/%u", 1) == 0);
	ATF_REQUIRE(setenv("VOICEBOX_FENCE_MAX_SEC", "120", 1) == 0);
	ATF_CHECK_EQ(config_env_override(&c), 0);
	ATF_CHECK_STREQ(c.c_homes, "/srv/homes/%u");
	ATF_CHECK_EQ(c.c_lifetime, 120);

	ATF_REQUIRE(setenv("VOICEBOX_SANDBOX_HOMES", "~/elsewhere", 1) == 0);
	ATF_REQUIRE(setenv("VOICEBOX_FENCE_MAX_SEC", "604800", 1) == 0);
	ATF_CHECK_EQ(config_env_override(&c), 0);
	ATF_CHECK_STREQ(c.c_homes, "~/elsewhere");
	ATF_CHECK_EQ(c.c_lifetime, 604800);
}

static void
env_fails(const char *homes, const char *secs, const char *what)
{
	struct fenced_config	 c, d;

	unsetenv("VOICEBOX_SANDBOX_HOMES");
	unsetenv("VOICEBOX_FENCE_MAX_SEC");
	if (homes != NULL)
		ATF_REQUIRE(setenv("VOICEBOX_SANDBOX_HOMES", homes, 1) == 0);
	if (secs != NULL)
		ATF_REQUIRE(setenv("VOICEBOX_FENCE_MAX_SEC", secs, 1) == 0);
	config_defaults(&c);
	config_defaults(&d);
	capture_start();
	ATF_CHECK_EQ_MSG(config_env_override(&c), -1, "accepted %s %s",
	    homes ? homes : "-", secs ? secs : "-");
	capture_end();
	logged(what);
	ATF_CHECK_STREQ(c.c_homes, d.c_homes);
	ATF_CHECK_EQ(c.c_lifetime, d.c_lifetime);
}

ATF_TC_WITHOUT_HEAD(env_invalid);
ATF_TC_BODY(env_invalid, tc)
{
	env_fails(NULL, "abc", "VOICEBOX_FENCE_MAX_SEC \"abc\" is not valid");
	env_fails(NULL, "0", "between 1 and 604800");
	env_fails(NULL, "604801", "VOICEBOX_FENCE_MAX_SEC \"604801\"");
	env_fails(NULL, "-1", "VOICEBOX_FENCE_MAX_SEC \"-1\"");
	env_fails(NULL, "30m", "VOICEBOX_FENCE_MAX_SEC \"30m\"");
	env_fails(NULL, "", "VOICEBOX_FENCE_MAX_SEC \"\"");
	env_fails(NULL, " +60", "VOICEBOX_FENCE_MAX_SEC \" +60\"");
	env_fails("/tmp/homes", NULL,
	    "VOICEBOX_SANDBOX_HOMES \"/tmp/homes\" may not be in /tmp");
	env_fails("relative", NULL, "VOICEBOX_SANDBOX_HOMES \"relative\"");
	env_fails("", NULL, "VOICEBOX_SANDBOX_HOMES \"\" is empty");
	env_fails("/srv/../tmp", NULL, "VOICEBOX_SANDBOX_HOMES");
	/* Both wrong: both said, and neither applied. */
	env_fails("/tmp", "x", "VOICEBOX_SANDBOX_HOMES \"/tmp\"");
	logged("VOICEBOX_FENCE_MAX_SEC \"x\"");
	/* One right and one wrong: the start is refused all the same. */
	env_fails("/srv/homes", "x", "VOICEBOX_FENCE_MAX_SEC \"x\"");
}

/* `audit ...': where the log goes, its size and its rotated files. */
ATF_TC_WITHOUT_HEAD(audit);
ATF_TC_BODY(audit, tc)
{
	struct fenced_config	 c;

	config_defaults(&c);
	ATF_CHECK_STREQ(c.c_audit_log, "");
	ATF_CHECK_EQ(c.c_audit_size, 16ULL << 20);
	ATF_CHECK_EQ(c.c_audit_keep, 5);
	ATF_REQUIRE_EQ(parse_text("audit log \"/var/log/x/a.log\"\n"
	    "audit size 64K\naudit keep 0\n", &c), 0);
	ATF_CHECK_STREQ(logbuf, "");
	ATF_CHECK_STREQ(c.c_audit_log, "/var/log/x/a.log");
	ATF_CHECK_EQ(c.c_audit_size, 64ULL << 10);
	ATF_CHECK_EQ(c.c_audit_keep, 0);
	ATF_CHECK_EQ(c.c_audit_off, 0);
	ATF_REQUIRE_EQ(parse_text("audit off\n", &c), 0);
	ATF_CHECK_EQ(c.c_audit_off, 1);
	ATF_REQUIRE_EQ(parse_text("audit keep 99\naudit size 1T\n", &c), 0);
	ATF_CHECK_EQ(c.c_audit_keep, 99);
	ATF_CHECK_EQ(c.c_audit_size, 1ULL << 40);

	parse_fails(OK2 "audit keep 100\n", 3,
	    "audit keep 100 is out of range: must be between 0 and 99 files");
	parse_fails(OK2 "audit size 3K\n", 3,
	    "audit size 3K is out of range: must be between 4K and 1T");
	parse_fails(OK2 "audit log \"var/log/a.log\"\n", 3,
	    "audit log \"var/log/a.log\" must be an absolute path");
	parse_fails(OK2 "audit later\n", 3, "expected `audit log PATH'");
	parse_fails(OK2 "audit off now\n", 3, "expected `audit log PATH'");
	parse_fails(OK2 "audit log\n", 3, "expected `audit log PATH'");
}

ATF_TC_WITHOUT_HEAD(resolve);
ATF_TC_BODY(resolve, tc)
{
	struct fenced_config	 c;
	struct passwd		*pw;
	struct group		*gr;
	uid_t			 uid;
	gid_t			 gid;

	/* Copied: the next getpwnam(), config_resolve()'s, overwrites it. */
	if ((pw = getpwnam("nobody")) == NULL)
		atf_tc_skip("no user nobody");
	uid = pw->pw_uid;
	gid = pw->pw_gid;

	config_defaults(&c);
	(void)strlcpy(c.c_user, "fenced_no_such_user", sizeof(c.c_user));
	capture_start();
	ATF_CHECK_EQ(config_resolve(&c), -1);
	capture_end();
	logged("user fenced_no_such_user does not exist; create it "
	    "(make run does) or set `user`");

	config_defaults(&c);
	(void)strlcpy(c.c_user, "root", sizeof(c.c_user));
	capture_start();
	ATF_CHECK_EQ(config_resolve(&c), -1);
	capture_end();
	logged("user root has uid or gid 0");

	/* The user in the fence range: a fence could signal the broker. */
	config_defaults(&c);
	(void)strlcpy(c.c_user, "nobody", sizeof(c.c_user));
	c.c_fence_uid_lo = uid;
	c.c_fence_uid_hi = uid;
	capture_start();
	ATF_CHECK_EQ(config_resolve(&c), -1);
	capture_end();
	logged("is in fence uids");

	/* Another account's uid in the fence range: named, refused. */
	config_defaults(&c);
	(void)strlcpy(c.c_user, "nobody", sizeof(c.c_user));
	c.c_fence_uid_lo = 0;
	c.c_fence_uid_hi = 0;
	capture_start();
	ATF_CHECK_EQ(config_resolve(&c), -1);
	capture_end();
	logged("fence uids 0-0 hold uid 0 of user root: ");

	/* A group's gid, no user's uid: a fence's gid is its uid. */
	setgrent();
	while ((gr = getgrent()) != NULL && getpwuid(gr->gr_gid) != NULL)
		;
	if (gr != NULL) {
		gid_t	 g = gr->gr_gid;
		char	 want[128];

		(void)snprintf(want, sizeof(want), "fence uids %u-%u hold "
		    "gid %u of group %s: ", (unsigned)g, (unsigned)g,
		    (unsigned)g, gr->gr_name);
		endgrent();
		config_defaults(&c);
		(void)strlcpy(c.c_user, "nobody", sizeof(c.c_user));
		c.c_fence_uid_lo = c.c_fence_uid_hi = g;
		capture_start();
		ATF_CHECK_EQ(config_resolve(&c), -1);
		capture_end();
		logged(want);
	} else
		endgrent();

	/* No admin group: a warning, and no gid. */
	config_defaults(&c);
	(void)strlcpy(c.c_user, "nobody", sizeof(c.c_user));
	(void)strlcpy(c.c_admin_group, "fenced_no_such_group",
	    sizeof(c.c_admin_group));
	c.c_admin_gid = 12345;
	capture_start();
	ATF_CHECK_EQ(config_resolve(&c), 0);
	capture_end();
	ATF_CHECK_EQ(c.c_uid, uid);
	ATF_CHECK_EQ(c.c_gid, gid);
	ATF_CHECK_EQ(c.c_admin_gid, (gid_t)-1);
	logged("admin group fenced_no_such_group does not exist");

	config_defaults(&c);
	(void)strlcpy(c.c_user, "nobody", sizeof(c.c_user));
	(void)strlcpy(c.c_admin_group, "root", sizeof(c.c_admin_group));
	capture_start();
	ATF_CHECK_EQ(config_resolve(&c), 0);
	capture_end();
	ATF_CHECK_EQ(c.c_admin_gid, 0);
	not_logged("admin group");
}

ATF_TC_WITHOUT_HEAD(names);
ATF_TC_BODY(names, tc)
{
	static const char *tiers[] = { "L1", "L1.5", "L2" };
	static const char *backends[] = { "native", "runsc", "vm", "mock",
	    "subprocess" };
	size_t	 i;

	for (i = 0; i < sizeof(tiers) / sizeof(tiers[0]); i++)
		ATF_CHECK_STREQ(tier_name(tier_parse(tiers[i])), tiers[i]);
	ATF_CHECK_EQ(tier_parse("L1"), TIER_L1);
	ATF_CHECK_EQ(tier_parse("L1.5"), TIER_L15);
	ATF_CHECK_EQ(tier_parse("L2"), TIER_L2);
	ATF_CHECK_EQ(tier_parse("l1"), -1);
	ATF_CHECK_EQ(tier_parse("L3"), -1);
	ATF_CHECK_EQ(tier_parse(""), -1);
	ATF_CHECK_EQ(tier_parse(NULL), -1);
	ATF_CHECK_STREQ(tier_name(0), "unknown");

	for (i = 0; i < sizeof(backends) / sizeof(backends[0]); i++)
		ATF_CHECK_STREQ(backend_name(backend_parse(backends[i])),
		    backends[i]);
	ATF_CHECK_EQ(backend_parse("native"), BACKEND_NATIVE);
	ATF_CHECK_EQ(backend_parse("runsc"), BACKEND_RUNSC);
	ATF_CHECK_EQ(backend_parse("vm"), BACKEND_VM);
	ATF_CHECK_EQ(backend_parse("mock"), BACKEND_MOCK);
	ATF_CHECK_EQ(backend_parse("subprocess"), BACKEND_SUBPROCESS);
	ATF_CHECK_EQ(backend_parse("Native"), -1);
	ATF_CHECK_EQ(backend_parse(NULL), -1);
	ATF_CHECK_STREQ(backend_name(99), "unknown");
}

/* issue 9: what a fence gets, the most a boot may ask, a user's totals. */
ATF_TC_WITHOUT_HEAD(ceilings);
ATF_TC_BODY(ceilings, tc)
{
	struct fenced_config	 c;

	/* The built-in ceilings and totals (docs/limits.md). */
	config_defaults(&c);
	ATF_CHECK_EQ(c.c_lifetime_max, 7200);
	ATF_CHECK_EQ(c.c_limits_max.fl_memory, 2ULL << 30);
	ATF_CHECK_EQ(c.c_limits_max.fl_pids, 1024);
	ATF_CHECK_EQ(c.c_limits_max.fl_cpu_milli, 2000);
	ATF_CHECK_EQ(c.c_user_fences, 16);
	ATF_CHECK_EQ(c.c_user_limits.fl_memory, 8ULL << 30);
	ATF_CHECK_EQ(c.c_user_limits.fl_pids, 4096);
	ATF_CHECK_EQ(c.c_user_limits.fl_cpu_milli, 16000);

	/* A default and a ceiling, as `exec timeout N max M' has them. */
	ATF_REQUIRE_EQ(parse_text("limit memory 256M max 1G\n"
	    "limit pids 100 max 500\nlimit cpu 0.5 max 1.5\n"
	    "lifetime 10m max 1h\n", &c), 0);
	ATF_CHECK_EQ(c.c_limits.fl_memory, 256ULL << 20);
	ATF_CHECK_EQ(c.c_limits_max.fl_memory, 1ULL << 30);
	ATF_CHECK_EQ(c.c_limits.fl_pids, 100);
	ATF_CHECK_EQ(c.c_limits_max.fl_pids, 500);
	ATF_CHECK_EQ(c.c_limits.fl_cpu_milli, 500);
	ATF_CHECK_EQ(c.c_limits_max.fl_cpu_milli, 1500);
	ATF_CHECK_EQ(c.c_lifetime, 600);
	ATF_CHECK_EQ(c.c_lifetime_max, 3600);
	ATF_CHECK_STREQ(logbuf, "");

	/* Without max the one value is both, lower or higher. */
	ATF_REQUIRE_EQ(parse_text("limit memory 64M\nlimit pids 4000\n"
	    "limit cpu 3\nlifetime 60\n", &c), 0);
	ATF_CHECK_EQ(c.c_limits.fl_memory, 64ULL << 20);
	ATF_CHECK_EQ(c.c_limits_max.fl_memory, 64ULL << 20);
	ATF_CHECK_EQ(c.c_limits.fl_pids, 4000);
	ATF_CHECK_EQ(c.c_limits_max.fl_pids, 4000);
	ATF_CHECK_EQ(c.c_limits.fl_cpu_milli, 3000);
	ATF_CHECK_EQ(c.c_limits_max.fl_cpu_milli, 3000);
	ATF_CHECK_EQ(c.c_lifetime, 60);
	ATF_CHECK_EQ(c.c_lifetime_max, 60);
	/* Totals left alone follow a default raised above them. */
	ATF_CHECK_EQ(c.c_user_limits.fl_pids, 4096);
	ATF_CHECK_EQ(c.c_user_limits.fl_cpu_milli, 16000);
	ATF_REQUIRE_EQ(parse_text("limit pids 5000\nlimit memory 16G\n", &c),
	    0);
	ATF_CHECK_EQ(c.c_user_limits.fl_pids, 5000);
	ATF_CHECK_EQ(c.c_user_limits.fl_memory, 16ULL << 30);

	ATF_REQUIRE_EQ(parse_text("user limit fences 8\nuser limit memory 4G\n"
	    "user limit pids 1024\nuser limit cpu 2.5\n", &c), 0);
	ATF_CHECK_EQ(c.c_user_fences, 8);
	ATF_CHECK_EQ(c.c_user_limits.fl_memory, 4ULL << 30);
	ATF_CHECK_EQ(c.c_user_limits.fl_pids, 1024);
	ATF_CHECK_EQ(c.c_user_limits.fl_cpu_milli, 2500);
	/* "limit" after `user' is the keyword; the user name can be quoted. */
	ATF_REQUIRE_EQ(parse_text("user \"limit\"\n", &c), 0);
	ATF_CHECK_STREQ(c.c_user, "limit");

	parse_fails(OK2 "limit memory 1G max 512M\n", 3,
	    "limit memory 1G is above its max 512M");
	parse_fails(OK2 "limit pids 300 max 200\n", 3,
	    "limit pids 300 is above its max 200");
	parse_fails(OK2 "limit cpu 2 max 1.5\n", 3,
	    "limit cpu 2 is above its max 1.5");
	parse_fails(OK2 "lifetime 2h max 1h\n", 3,
	    "lifetime 2h is above its max 1h");
	parse_fails(OK2 "limit memory 512M max 2T\n", 3,
	    "limit memory max 2T is out of range");
	parse_fails(OK2 "lifetime 60 max 8d\n", 3,
	    "lifetime max 8d is out of range");
	parse_fails(OK2 "limit cpu 1 max 1025\n", 3,
	    "limit cpu max 1025 is out of range");
	parse_fails(OK2 "user limit fences 0\n", 3,
	    "user limit fences 0 is out of range: must be between 1 and 4096");
	parse_fails(OK2 "user limit pids x\n", 3,
	    "user limit pids \"x\" is not valid");
	parse_fails(OK2 "user limit swap 1\n", 3, "syntax error");
	/* A total written below one default fence refuses every boot. */
	ATF_CHECK_EQ(parse_text("user limit memory 256M\n", &c), -1);
	logged("user limit memory 256M is below limit memory 512M");
	ATF_CHECK_EQ(parse_text("limit pids 300\nuser limit pids 299\n", &c),
	    -1);
	logged("user limit pids 299 is below limit pids 300");
}

/*
 * issue 32: `limit snapshots [size]' and `user limit snapshots [size]':
 * the defaults, each bound accepted, one past it refused with the
 * message, and a fence's bound above its owner's lowered to it.
 */
ATF_TC_WITHOUT_HEAD(snapshots);
ATF_TC_BODY(snapshots, tc)
{
	struct fenced_config	 c;

	config_defaults(&c);
	ATF_CHECK_EQ(c.c_snap_count, 16);
	ATF_CHECK_EQ(c.c_snap_bytes, 4ULL << 30);
	ATF_CHECK_EQ(c.c_user_snap_count, 64);
	ATF_CHECK_EQ(c.c_user_snap_bytes, 16ULL << 30);

	ATF_REQUIRE_EQ(parse_text("limit snapshots 3\n"
	    "limit snapshots size 512M\nuser limit snapshots 10\n"
	    "user limit snapshots size 2G\n", &c), 0);
	ATF_CHECK_STREQ(logbuf, "");
	ATF_CHECK_EQ(c.c_snap_count, 3);
	ATF_CHECK_EQ(c.c_snap_bytes, 512ULL << 20);
	ATF_CHECK_EQ(c.c_user_snap_count, 10);
	ATF_CHECK_EQ(c.c_user_snap_bytes, 2ULL << 30);
	/* Each setting alone leaves the other three at their defaults. */
	ATF_REQUIRE_EQ(parse_text("limit snapshots size 1G\n", &c), 0);
	ATF_CHECK_EQ(c.c_snap_count, 16);
	ATF_CHECK_EQ(c.c_snap_bytes, 1ULL << 30);
	ATF_CHECK_EQ(c.c_user_snap_count, 64);
	ATF_CHECK_EQ(c.c_user_snap_bytes, 16ULL << 30);

	/* The bounds themselves (SNAP_* in fenced.h). */
	ATF_REQUIRE_EQ(parse_text("limit snapshots 1\n"
	    "limit snapshots size 1M\nuser limit snapshots 1\n"
	    "user limit snapshots size 1048576\n", &c), 0);
	ATF_CHECK_EQ(c.c_snap_count, 1);
	ATF_CHECK_EQ(c.c_snap_bytes, 1ULL << 20);
	ATF_CHECK_EQ(c.c_user_snap_count, 1);
	ATF_CHECK_EQ(c.c_user_snap_bytes, 1ULL << 20);
	ATF_REQUIRE_EQ(parse_text("limit snapshots 4096\n"
	    "limit snapshots size 1024T\nuser limit snapshots 4096\n"
	    "user limit snapshots size 1024T\n", &c), 0);
	ATF_CHECK_EQ(c.c_snap_count, 4096);
	ATF_CHECK_EQ(c.c_snap_bytes, 1ULL << 50);
	ATF_CHECK_EQ(c.c_user_snap_count, 4096);
	ATF_CHECK_EQ(c.c_user_snap_bytes, 1ULL << 50);

	/* One past each bound: refused, the configuration untouched. */
	parse_fails(OK2 "limit snapshots 0\n", 3,
	    "limit snapshots 0 is out of range: must be between 1 and 4096");
	parse_fails(OK2 "limit snapshots 4097\n", 3,
	    "limit snapshots 4097 is out of range: must be between 1 and "
	    "4096");
	parse_fails(OK2 "limit snapshots -1\n", 3,
	    "limit snapshots -1 is out of range");
	parse_fails(OK2 "limit snapshots x\n", 3,
	    "limit snapshots \"x\" is not valid");
	parse_fails(OK2 "limit snapshots 2G\n", 3,
	    "limit snapshots \"2G\" is not valid");
	parse_fails(OK2 "limit snapshots size 1023K\n", 3,
	    "limit snapshots size 1023K is out of range: must be between 1M "
	    "and 1024T");
	parse_fails(OK2 "limit snapshots size 1025T\n", 3,
	    "limit snapshots size 1025T is out of range: must be between 1M "
	    "and 1024T");
	parse_fails(OK2 "limit snapshots size\n", 3, "syntax error");
	parse_fails(OK2 "user limit snapshots 0\n", 3,
	    "user limit snapshots 0 is out of range: must be between 1 and "
	    "4096");
	parse_fails(OK2 "user limit snapshots 4097\n", 3,
	    "user limit snapshots 4097 is out of range: must be between 1 "
	    "and 4096");
	parse_fails(OK2 "user limit snapshots size 1048575\n", 3,
	    "user limit snapshots size 1048575 is out of range: must be "
	    "between 1M and 1024T");
	parse_fails(OK2 "user limit snapshots size 1025T\n", 3,
	    "user limit snapshots size 1025T is out of range: must be "
	    "between 1M and 1024T");
	parse_fails(OK2 "user limit snapshots size 1P\n", 3,
	    "user limit snapshots size \"1P\" is not valid");
	parse_fails(OK2 "user limit snapshot 4\n", 3, "syntax error");

	/* A fence's bound above its owner's is lowered to it, silently. */
	ATF_REQUIRE_EQ(parse_text("limit snapshots 100\n"
	    "limit snapshots size 8G\nuser limit snapshots 20\n"
	    "user limit snapshots size 1G\n", &c), 0);
	ATF_CHECK_STREQ(logbuf, "");
	ATF_CHECK_EQ(c.c_snap_count, 20);
	ATF_CHECK_EQ(c.c_snap_bytes, 1ULL << 30);
	ATF_CHECK_EQ(c.c_user_snap_count, 20);
	ATF_CHECK_EQ(c.c_user_snap_bytes, 1ULL << 30);
	/* Against the owner's defaults (64, 16G) too, in either order. */
	ATF_REQUIRE_EQ(parse_text("limit snapshots 4096\n"
	    "limit snapshots size 1024T\n", &c), 0);
	ATF_CHECK_EQ(c.c_snap_count, 64);
	ATF_CHECK_EQ(c.c_snap_bytes, 16ULL << 30);
	ATF_REQUIRE_EQ(parse_text("user limit snapshots 2\n"
	    "limit snapshots 3\n", &c), 0);
	ATF_CHECK_EQ(c.c_snap_count, 2);
	/* Equal or below is kept as written. */
	ATF_REQUIRE_EQ(parse_text("limit snapshots 5\n"
	    "user limit snapshots 5\nlimit snapshots size 2G\n"
	    "user limit snapshots size 3G\n", &c), 0);
	ATF_CHECK_EQ(c.c_snap_count, 5);
	ATF_CHECK_EQ(c.c_snap_bytes, 2ULL << 30);

	/* "size" and "snapshots" are keywords: as a value, quoted. */
	ATF_REQUIRE_EQ(parse_text("user \"size\"\n", &c), 0);
	ATF_CHECK_STREQ(c.c_user, "size");
	parse_fails(OK2 "user snapshots\n", 3, "syntax error");
}

/* issue 15: `pool TIER N', native fences only, none by default. */
ATF_TC_WITHOUT_HEAD(pool);
ATF_TC_BODY(pool, tc)
{
	struct fenced_config	 c;

	ATF_REQUIRE_EQ(parse_text("", &c), 0);
	ATF_CHECK_EQ(c.c_pool[0], 0);
	ATF_CHECK_EQ(c.c_pool[1], 0);
	ATF_CHECK_EQ(c.c_pool[2], 0);
	ATF_REQUIRE_EQ(parse_text("pool L1.5 4\npool L2 64\npool L1 0\n",
	    &c), 0);
	ATF_CHECK_EQ(c.c_pool[TIER_L1 - TIER_L1], 0);
	ATF_CHECK_EQ(c.c_pool[TIER_L15 - TIER_L1], 4);
	ATF_CHECK_EQ(c.c_pool[TIER_L2 - TIER_L1], 64);
	parse_fails(OK2 "pool L3 1\n", 3, "pool tier \"L3\" is not valid");
	parse_fails(OK2 "pool L1.5 65\n", 3, "pool L1.5 65: the number of "
	    "fences is too large");
	parse_fails(OK2 "pool L1.5 -1\n", 3, "is too small");
	parse_fails(OK2 "pool L1.5\n", 3, "syntax error");
	/* Whichever line comes first, a pool of another backend is refused. */
	ATF_CHECK_EQ(parse_text("pool L1.5 2\nbackend runsc\n", &c), -1);
	logged("pool L1.5 2: only the native backend keeps a pool, and "
	    "backend is runsc");
	ATF_CHECK_EQ(parse_text("backend vm\npool L2 1\n", &c), -1);
	logged("only the native backend keeps a pool");
	ATF_CHECK_EQ(parse_text("backend native\npool L2 1\n", &c), 0);
}

/* issue 33: `observe denials yes|no', yes by default. */
ATF_TC_WITHOUT_HEAD(observe_denials);
ATF_TC_BODY(observe_denials, tc)
{
	struct fenced_config	 c;

	ATF_REQUIRE_EQ(parse_text("", &c), 0);
	ATF_CHECK_EQ(c.c_observe_denials, 1);
	ATF_REQUIRE_EQ(parse_text("observe denials no\n", &c), 0);
	ATF_CHECK_EQ(c.c_observe_denials, 0);
	ATF_REQUIRE_EQ(parse_text("observe denials no\nobserve denials yes\n",
	    &c), 0);
	ATF_CHECK_EQ(c.c_observe_denials, 1);
	parse_fails(OK2 "observe denials maybe\n", 3,
	    "observe denials: yes or no, not maybe");
	parse_fails(OK2 "observe denials\n", 3, "syntax error");
	parse_fails(OK2 "observe no\n", 3, "syntax error");
}

/*
 * issue 9: the parse was quadratic in macros (a 1 MiB file took 58 s,
 * the parent blocked on reload).  Many macros, set and used, parse
 * here in what a linear parser takes; a configuration larger than
 * 1 MiB, one file or its includes together, is refused.
 */
ATF_TC(big_files);
ATF_TC_HEAD(big_files, tc)
{
	atf_tc_set_md_var(tc, "descr", "40,000 macros parse in linear time; more than 1 MiB is refused");
	/* Quadratic, this took about 8 s here. */
	atf_tc_set_md_var(tc, "timeout", "4");
}
ATF_TC_BODY(big_files, tc)
{
	struct fenced_config	 c;
	FILE			*fp;
	int			 i, fd;

	ATF_REQUIRE((fp = fopen(TEST_CONF, "w")) != NULL);
	for (i = 0; i < 40000; i++)
		fprintf(fp, "m%d = %d\n", i, 60 + i % 100);
	for (i = 0; i < 20000; i++)
		fprintf(fp, "lifetime $m%d\n", 39999 - i);
	fprintf(fp, "lifetime $m0\n");
	ATF_REQUIRE(fclose(fp) == 0);
	ATF_REQUIRE(chmod(TEST_CONF, 0644) == 0);
	config_defaults(&c);
	capture_start();
	ATF_CHECK_EQ(config_parse(TEST_CONF, &c), 0);
	capture_end();
	ATF_CHECK_EQ(c.c_lifetime, 60);

	/* One byte over. */
	ATF_REQUIRE((fd = open(TEST_CONF, O_WRONLY | O_TRUNC)) != -1);
	ATF_REQUIRE(ftruncate(fd, 1024 * 1024 + 1) == 0);
	ATF_REQUIRE(close(fd) == 0);
	config_defaults(&c);
	capture_start();
	ATF_CHECK_EQ(config_parse(TEST_CONF, &c), -1);
	capture_end();
	logged("1048577 bytes, larger than the 1048576 a configuration "
	    "may have");

	/* Files under the bound each, over it together. */
	ATF_REQUIRE((fp = fopen("part.conf", "w")) != NULL);
	for (i = 0; i < 700 * 1024 / 16; i++)
		fprintf(fp, "# %12d\n", i);
	ATF_REQUIRE(fclose(fp) == 0);
	ATF_REQUIRE(chmod("part.conf", 0644) == 0);
	write_file(TEST_CONF, "include \"part.conf\"\n"
	    "include \"part.conf\"\ntier L1\n");
	config_defaults(&c);
	capture_start();
	ATF_CHECK_EQ(config_parse(TEST_CONF, &c), -1);
	capture_end();
	logged("the configuration is larger than 1048576 bytes (its "
	    "includes counted); refused");
	ATF_CHECK_EQ(c.c_tier, TIER_L15);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, defaults);
	ATF_TP_ADD_TC(tp, empty_file);
	ATF_TP_ADD_TC(tp, example_conf);
	ATF_TP_ADD_TC(tp, probe_targets);
	ATF_TP_ADD_TC(tp, egress);
	ATF_TP_ADD_TC(tp, http_origins);
	ATF_TP_ADD_TC(tp, every_keyword);
	ATF_TP_ADD_TC(tp, runsc);
	ATF_TP_ADD_TC(tp, listen_forms);
	ATF_TP_ADD_TC(tp, http_limits);
	ATF_TP_ADD_TC(tp, suffixes);
	ATF_TP_ADD_TC(tp, macros);
	ATF_TP_ADD_TC(tp, include);
	ATF_TP_ADD_TC(tp, include_errors);
	ATF_TP_ADD_TC(tp, errors);
	ATF_TP_ADD_TC(tp, ranges);
	ATF_TP_ADD_TC(tp, every_error);
	ATF_TP_ADD_TC(tp, lexer);
	ATF_TP_ADD_TC(tp, vm);
	ATF_TP_ADD_TC(tp, nul_byte);
	ATF_TP_ADD_TC(tp, file_checks);
	ATF_TP_ADD_TC(tp, env_override);
	ATF_TP_ADD_TC(tp, env_invalid);
	ATF_TP_ADD_TC(tp, resolve);
	ATF_TP_ADD_TC(tp, names);
	ATF_TP_ADD_TC(tp, ceilings);
	ATF_TP_ADD_TC(tp, big_files);
	ATF_TP_ADD_TC(tp, pool);
	ATF_TP_ADD_TC(tp, observe_denials);
	ATF_TP_ADD_TC(tp, snapshots);
	ATF_TP_ADD_TC(tp, audit);
	return (atf_no_error());
}
