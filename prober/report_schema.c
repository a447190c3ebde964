/*
 * The schema of sandbox-probe/1 as tables, and one walk that holds a
 * parsed report against them: every key known, every value of its type
 * and within its bounds, every list and map bounded.  A report that
 * passes can be read without another check (report.c does).  Sections
 * are optional at the top (a missing one is "not measured"); inside a
 * section every field the probe writes is required.
 */
#include <sys/types.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "fenced.h"
#include "report_impl.h"

#define JT_NULL		0x01
#define JT_BOOL		0x02
#define JT_INT		0x04
#define JT_STR		0x08
#define JT_OBJ		0x10
#define JT_ARR		0x20

#define RS_TEXT_MAX	1024	/* the probe cuts at 256, U+FFFD takes 3 */

struct rs_field;

struct rs_node {
	int			 n_types;	/* JT_* allowed */
	long long		 n_lo, n_hi;	/* JT_INT */
	size_t			 n_maxlen;	/* JT_STR, bytes */
	int			(*n_str)(const char *);	/* JT_STR, or NULL */
	const struct rs_field	*n_fields;	/* JT_OBJ: known keys */
	int			(*n_key)(const char *);	/* JT_OBJ: a map */
	const struct rs_node	*n_value;	/* JT_OBJ map: every value */
	const struct rs_node	*n_elem;	/* JT_ARR: every element */
	size_t			 n_max;		/* JT_ARR, map: entries */
};

struct rs_field {
	const char		*f_key;
	const struct rs_node	*f_node;
	int			 f_optional;
};

struct rs_ctx {
	char			 c_path[128];
	char			*c_err;
	size_t			 c_errlen;
};

/* Strings of a fixed shape. */
static int
rs_charset(const char *s, const char *set, size_t lo, size_t hi)
{
	size_t	 n = strlen(s);

	return (n >= lo && n <= hi && strspn(s, set) == n);
}

#define RS_UPPER	"ABCDEFGHIJKLMNOPQRSTUVWXYZ"
#define RS_LOWER	"abcdefghijklmnopqrstuvwxyz"
#define RS_DIGIT	"0123456789"

/* An errno or signal name, "ok", "timeout": they end up in violations. */
static int
rs_word(const char *s)
{
	return (rs_charset(s, RS_UPPER RS_LOWER RS_DIGIT "_+-", 1,
	    REPORT_WORD_LEN - 1));
}

static int
rs_hex16(const char *s)
{
	return (rs_charset(s, RS_DIGIT "abcdef", 16, 16));
}

static int
rs_boot_id(const char *s)
{
	return (rs_charset(s, RS_DIGIT "abcdef-", 36, 36));
}

/* 2025-01-31T12:34:56Z or with .sss before the Z. */
static int
rs_iso(const char *s)
{
	size_t	 n = strlen(s);
	int	 i;

	if (n != 20 && n != 24)
		return (0);
	for (i = 0; i < (int)n; i++) {
		switch (i) {
		case 4: case 7:
			if (s[i] != '-')
				return (0);
			break;
		case 10:
			if (s[i] != 'T')
				return (0);
			break;
		case 13: case 16:
			if (s[i] != ':')
				return (0);
			break;
		case 19:
			if (s[i] != (n == 20 ? 'Z' : '.'))
				return (0);
			break;
		case 23:
			if (s[i] != 'Z')
				return (0);
			break;
		default:
			if (s[i] < '0' || s[i] > '9')
				return (0);
		}
	}
	return (1);
}

static int
rs_schema(const char *s)
{
	return (strcmp(s, "sandbox-probe/1") == 0);
}

static int
rs_label(const char *s)
{
	return (strcmp(s, "HOME") == 0 || (s[0] == '/' &&
	    strlen(s) < REPORT_LABEL_LEN));
}

static int
rs_max_word(const char *s)
{
	return (strcmp(s, "max") == 0 || strcmp(s, "unlimited") == 0);
}

static int
rs_key_lower(const char *s)
{
	return (rs_charset(s, RS_LOWER RS_DIGIT "_", 1, 31));
}

static int
rs_key_tool(const char *s)
{
	return (rs_charset(s, RS_LOWER RS_DIGIT "_+.-", 1, 31));
}

/* An id of common/surface.h: no other. */
static int
rs_surface_id(const char *s)
{
	int	 i;

	for (i = 0; i < SURFACE_MAX; i++)
		if (strcmp(s, report_surface_ids[i]) == 0)
			return (1);
	return (0);
}

/* A target of the egress checks: an exact entry of a list. */
static int
rs_egress_target(const char *s)
{
	return (s[0] != '*' && egress_entry_valid(s));
}

/* An X-Fenced-Egress code ("not-listed"), or "" for none. */
static int
rs_egress_code(const char *s)
{
	return (s[0] == '\0' || rs_charset(s, RS_LOWER RS_DIGIT "-", 1,
	    EGRESS_CODE_LEN - 1));
}

#define I64	INT64_MAX
#define U32	4294967295LL

/* Leaves. */
static const struct rs_node rs_bool = { .n_types = JT_BOOL };
static const struct rs_node rs_bool_n = { .n_types = JT_BOOL | JT_NULL };
static const struct rs_node rs_uid = { .n_types = JT_INT, .n_hi = U32 };
static const struct rs_node rs_count = { .n_types = JT_INT, .n_hi = I64 };
static const struct rs_node rs_count_n = { .n_types = JT_INT | JT_NULL,
	.n_hi = I64 };
static const struct rs_node rs_any_int = { .n_types = JT_INT,
	.n_lo = INT64_MIN, .n_hi = I64 };
static const struct rs_node rs_text = { .n_types = JT_STR,
	.n_maxlen = RS_TEXT_MAX };
static const struct rs_node rs_text_n = { .n_types = JT_STR | JT_NULL,
	.n_maxlen = RS_TEXT_MAX };
static const struct rs_node rs_short = { .n_types = JT_STR, .n_maxlen = 64 };
static const struct rs_node rs_short_n = { .n_types = JT_STR | JT_NULL,
	.n_maxlen = PROBE_UNAME_LEN - 1 };
static const struct rs_node rs_word_n = { .n_types = JT_STR | JT_NULL,
	.n_maxlen = REPORT_WORD_LEN, .n_str = rs_word };
static const struct rs_node rs_outcome = { .n_types = JT_STR,
	.n_maxlen = REPORT_WORD_LEN, .n_str = rs_word };
static const struct rs_node rs_caps_n = { .n_types = JT_STR | JT_NULL,
	.n_maxlen = 16, .n_str = rs_hex16 };
static const struct rs_node rs_limit = { .n_types = JT_INT | JT_STR,
	.n_hi = I64, .n_maxlen = 16, .n_str = rs_max_word };
static const struct rs_node rs_limit_n = { .n_types = JT_INT | JT_STR |
	JT_NULL, .n_hi = I64, .n_maxlen = 16, .n_str = rs_max_word };

/* identity */
static const struct rs_field rs_kernel_f[] = {
	{ "release", &rs_short_n, 0 }, { "version", &rs_short_n, 0 },
	{ "machine", &rs_short_n, 0 }, { NULL, NULL, 0 }
};
static const struct rs_node rs_kernel = { .n_types = JT_OBJ,
	.n_fields = rs_kernel_f };
static const struct rs_node rs_groups = { .n_types = JT_ARR,
	.n_elem = &rs_uid, .n_max = 256 };
static const struct rs_node rs_boot_id_n = { .n_types = JT_STR | JT_NULL,
	.n_maxlen = 36, .n_str = rs_boot_id };
static const struct rs_field rs_identity_f[] = {
	{ "uid", &rs_uid, 0 }, { "euid", &rs_uid, 0 }, { "gid", &rs_uid, 0 },
	{ "egid", &rs_uid, 0 }, { "groups", &rs_groups, 0 },
	{ "cwd", &rs_text_n, 0 }, { "platform", &rs_short, 0 },
	{ "kernel", &rs_kernel, 0 }, { "bootId", &rs_boot_id_n, 0 },
	{ NULL, NULL, 0 }
};
static const struct rs_node rs_identity = { .n_types = JT_OBJ,
	.n_fields = rs_identity_f };

/* sandboxHints */
static const struct rs_node rs_inode_n = { .n_types = JT_INT | JT_NULL,
	.n_lo = 1, .n_hi = I64 };
static const struct rs_field rs_ns_f[] = {
	{ "inode", &rs_inode_n, 0 }, { "error", &rs_word_n, 0 },
	{ "differs", &rs_bool_n, 0 }, { NULL, NULL, 0 }
};
static const struct rs_node rs_ns = { .n_types = JT_OBJ, .n_fields = rs_ns_f };
static const struct rs_field rs_nss_f[] = {
	{ "cgroup", &rs_ns, 0 }, { "ipc", &rs_ns, 0 }, { "mnt", &rs_ns, 0 },
	{ "net", &rs_ns, 0 }, { "pid", &rs_ns, 0 }, { "time", &rs_ns, 0 },
	{ "user", &rs_ns, 0 }, { "uts", &rs_ns, 0 }, { NULL, NULL, 0 }
};
static const struct rs_node rs_nss = { .n_types = JT_OBJ,
	.n_fields = rs_nss_f };
static const struct rs_node rs_line_list = { .n_types = JT_ARR,
	.n_elem = &rs_text, .n_max = 64 };
static const struct rs_field rs_lines_f[] = {
	{ "error", &rs_word_n, 0 }, { "lines", &rs_line_list, 0 },
	{ "total", &rs_count_n, 0 }, { NULL, NULL, 0 }
};
static const struct rs_node rs_lines = { .n_types = JT_OBJ,
	.n_fields = rs_lines_f };
static const struct rs_node rs_seccomp_n = { .n_types = JT_INT | JT_NULL,
	.n_hi = 2 };
static const struct rs_node rs_nnp_n = { .n_types = JT_INT | JT_NULL,
	.n_hi = 1 };
static const struct rs_node rs_abi_n = { .n_types = JT_INT | JT_NULL,
	.n_hi = 1000 };
static const struct rs_field rs_landlock_f[] = {
	{ "abi", &rs_abi_n, 0 }, { "error", &rs_word_n, 0 },
	{ "restricted", &rs_bool_n, 0 }, { NULL, NULL, 0 }
};
static const struct rs_node rs_landlock = { .n_types = JT_OBJ,
	.n_fields = rs_landlock_f };
static const struct rs_node rs_iso_n = { .n_types = JT_STR | JT_NULL,
	.n_maxlen = 32 };
static const struct rs_field rs_deadline_f[] = {
	{ "unix", &rs_count, 0 }, { "iso", &rs_iso_n, 0 },
	{ "remainingSec", &rs_any_int, 0 }, { NULL, NULL, 0 }
};
static const struct rs_node rs_deadline = { .n_types = JT_OBJ | JT_NULL,
	.n_fields = rs_deadline_f };
static const struct rs_field rs_hints_f[] = {
	{ "seccomp", &rs_seccomp_n, 0 }, { "seccompFilters", &rs_count_n, 0 },
	{ "noNewPrivs", &rs_nnp_n, 0 }, { "capEff", &rs_caps_n, 0 },
	{ "capBnd", &rs_caps_n, 0 }, { "capPrm", &rs_caps_n, 0 },
	{ "capAmb", &rs_caps_n, 0 }, { "capInh", &rs_caps_n, 0 },
	{ "namespaces", &rs_nss, 0 }, { "mountSample", &rs_lines, 0 },
	{ "landlock", &rs_landlock, 0 }, { "cgroup", &rs_lines, 0 },
	{ "deadline", &rs_deadline, 0 }, { NULL, NULL, 0 }
};
static const struct rs_node rs_hints = { .n_types = JT_OBJ,
	.n_fields = rs_hints_f };

/* filesystem */
static const struct rs_node rs_label_s = { .n_types = JT_STR,
	.n_maxlen = REPORT_LABEL_LEN - 1, .n_str = rs_label };
static const struct rs_field rs_path_f[] = {
	{ "label", &rs_label_s, 0 }, { "path", &rs_text_n, 0 },
	{ "exists", &rs_bool, 0 }, { "listable", &rs_bool, 0 },
	{ "entries", &rs_count_n, 0 }, { "writable", &rs_bool, 0 },
	{ "error", &rs_word_n, 0 }, { "markerLeft", &rs_bool, 1 },
	{ NULL, NULL, 0 }
};
static const struct rs_node rs_path = { .n_types = JT_OBJ,
	.n_fields = rs_path_f };
static const struct rs_node rs_paths = { .n_types = JT_ARR,
	.n_elem = &rs_path, .n_max = REPORT_PATHS_MAX };
static const struct rs_node rs_secret_path = { .n_types = JT_STR,
	.n_maxlen = PATH_MAX - 1 };
static const struct rs_field rs_secret_f[] = {
	{ "path", &rs_secret_path, 0 }, { "readable", &rs_bool, 0 },
	{ "error", &rs_word_n, 0 }, { NULL, NULL, 0 }
};
static const struct rs_node rs_secret = { .n_types = JT_OBJ,
	.n_fields = rs_secret_f };
static const struct rs_node rs_secrets = { .n_types = JT_ARR,
	.n_elem = &rs_secret, .n_max = REPORT_SECRETS_MAX };
static const struct rs_field rs_fs_f[] = {
	{ "home", &rs_text_n, 0 }, { "markersRemoved", &rs_count, 0 },
	{ "paths", &rs_paths, 0 }, { "hostPaths", &rs_secrets, 0 },
	{ NULL, NULL, 0 }
};
static const struct rs_node rs_fs = { .n_types = JT_OBJ, .n_fields = rs_fs_f };

/* processes */
static const struct rs_node rs_pid = { .n_types = JT_INT, .n_lo = 1,
	.n_hi = INT32_MAX };
static const struct rs_field rs_hostpid_f[] = {
	{ "pid", &rs_pid, 0 }, { "visible", &rs_bool, 0 }, { NULL, NULL, 0 }
};
static const struct rs_node rs_hostpid = { .n_types = JT_OBJ | JT_NULL,
	.n_fields = rs_hostpid_f };
static const struct rs_node rs_uids = { .n_types = JT_ARR, .n_elem = &rs_uid,
	.n_max = REPORT_OTHER_UIDS };
static const struct rs_field rs_procs_f[] = {
	{ "error", &rs_word_n, 0 }, { "visible", &rs_count_n, 0 },
	{ "pid1Comm", &rs_text_n, 0 }, { "pid1Agent", &rs_bool, 0 },
	{ "otherUids", &rs_bool, 0 }, { "otherUidSample", &rs_uids, 0 },
	{ "hostPid", &rs_hostpid, 0 }, { NULL, NULL, 0 }
};
static const struct rs_node rs_procs = { .n_types = JT_OBJ,
	.n_fields = rs_procs_f };

/* limits */
static const struct rs_field rs_rlimit_f[] = {
	{ "soft", &rs_limit, 0 }, { "hard", &rs_limit, 0 }, { NULL, NULL, 0 }
};
static const struct rs_node rs_rlimit = { .n_types = JT_OBJ,
	.n_fields = rs_rlimit_f };
static const struct rs_node rs_rlimits = { .n_types = JT_OBJ,
	.n_key = rs_key_lower, .n_value = &rs_rlimit, .n_max = 32 };
static const struct rs_field rs_limits_f[] = {
	{ "cpus", &rs_count_n, 0 }, { "memTotal", &rs_count_n, 0 },
	{ "cgroupMemoryMax", &rs_limit_n, 0 }, { "rlimits", &rs_rlimits, 0 },
	{ NULL, NULL, 0 }
};
static const struct rs_node rs_limits = { .n_types = JT_OBJ,
	.n_fields = rs_limits_f };

/* tools */
static const struct rs_node rs_found = { .n_types = JT_OBJ,
	.n_key = rs_key_tool, .n_value = &rs_text_n, .n_max = 32 };
static const struct rs_node rs_concurrency = { .n_types = JT_INT,
	.n_lo = 1, .n_hi = 64 };
static const struct rs_field rs_tools_f[] = {
	{ "path", &rs_text_n, 0 }, { "concurrency", &rs_concurrency, 0 },
	{ "found", &rs_found, 0 }, { NULL, NULL, 0 }
};
static const struct rs_node rs_tools = { .n_types = JT_OBJ,
	.n_fields = rs_tools_f };

/* privileges */
static const struct rs_node rs_privs = { .n_types = JT_OBJ,
	.n_key = rs_key_lower, .n_value = &rs_outcome, .n_max = 32 };

/* surface: a map of the table's ids, report.c wants each of them */
static const struct rs_node rs_surface = { .n_types = JT_OBJ,
	.n_key = rs_surface_id, .n_value = &rs_outcome, .n_max = SURFACE_MAX };

/* network */
static const struct rs_node rs_addrs = { .n_types = JT_ARR,
	.n_elem = &rs_short, .n_max = 8 };
static const struct rs_field rs_dns_f[] = {
	{ "name", &rs_text, 0 }, { "resolved", &rs_bool, 0 },
	{ "addresses", &rs_addrs, 0 }, { "error", &rs_word_n, 0 },
	{ "ms", &rs_count, 0 }, { NULL, NULL, 0 }
};
static const struct rs_node rs_dns = { .n_types = JT_OBJ | JT_NULL,
	.n_fields = rs_dns_f };
static const struct rs_node rs_target = { .n_types = JT_STR,
	.n_maxlen = REPORT_TARGET_LEN - 1 };
static const struct rs_field rs_conn_f[] = {
	{ "target", &rs_target, 0 }, { "address", &rs_short_n, 0 },
	{ "connected", &rs_bool, 0 }, { "error", &rs_word_n, 0 },
	{ "ms", &rs_count, 0 }, { NULL, NULL, 0 }
};
static const struct rs_node rs_conn = { .n_types = JT_OBJ,
	.n_fields = rs_conn_f };
static const struct rs_node rs_conn_n = { .n_types = JT_OBJ | JT_NULL,
	.n_fields = rs_conn_f };
static const struct rs_node rs_conns = { .n_types = JT_ARR,
	.n_elem = &rs_conn, .n_max = 8 };
static const struct rs_node rs_ifname = { .n_types = JT_STR,
	.n_maxlen = REPORT_LABEL_LEN - 1 };
static const struct rs_field rs_iface_f[] = {
	{ "name", &rs_ifname, 0 }, { "up", &rs_bool_n, 0 },
	{ "loopback", &rs_bool_n, 0 }, { NULL, NULL, 0 }
};
static const struct rs_node rs_iface = { .n_types = JT_OBJ,
	.n_fields = rs_iface_f };
static const struct rs_node rs_ifaces = { .n_types = JT_ARR,
	.n_elem = &rs_iface, .n_max = REPORT_IFACES_MAX };
static const struct rs_node rs_eg_target = { .n_types = JT_STR,
	.n_maxlen = EGRESS_ENTRY_LEN - 1, .n_str = rs_egress_target };
static const struct rs_node rs_eg_status = { .n_types = JT_INT,
	.n_hi = 599 };
static const struct rs_node rs_eg_code = { .n_types = JT_STR,
	.n_maxlen = EGRESS_CODE_LEN - 1, .n_str = rs_egress_code };
static const struct rs_node rs_eg_error = { .n_types = JT_STR | JT_NULL,
	.n_maxlen = EGRESS_WORD_LEN - 1, .n_str = rs_word };
static const struct rs_field rs_eg_try_f[] = {
	{ "target", &rs_eg_target, 0 }, { "proxy", &rs_bool, 0 },
	{ "status", &rs_eg_status, 0 }, { "code", &rs_eg_code, 0 },
	{ "reached", &rs_bool, 0 }, { "error", &rs_eg_error, 0 },
	{ "ms", &rs_count, 0 }, { NULL, NULL, 0 }
};
static const struct rs_node rs_eg_try_n = { .n_types = JT_OBJ | JT_NULL,
	.n_fields = rs_eg_try_f };
static const struct rs_field rs_egress_f[] = {
	{ "proxy", &rs_short, 0 }, { "allowed", &rs_eg_try_n, 0 },
	{ "refused", &rs_eg_try_n, 0 }, { NULL, NULL, 0 }
};
static const struct rs_node rs_egress = { .n_types = JT_OBJ,
	.n_fields = rs_egress_f };
static const struct rs_field rs_net_f[] = {
	{ "dns", &rs_dns, 0 }, { "tcp", &rs_conns, 0 },
	{ "canary", &rs_conn_n, 0 }, { "egress", &rs_egress, 1 },
	{ "interfaces", &rs_ifaces, 0 }, { "ms", &rs_count, 0 },
	{ NULL, NULL, 0 }
};
static const struct rs_node rs_net = { .n_types = JT_OBJ,
	.n_fields = rs_net_f };

/* the report */
static const struct rs_node rs_probe = { .n_types = JT_STR, .n_maxlen = 32,
	.n_str = rs_schema };
static const struct rs_node rs_when = { .n_types = JT_STR, .n_maxlen = 24,
	.n_str = rs_iso };
static const struct rs_node rs_name = { .n_types = JT_STR, .n_maxlen = 31 };
static const struct rs_node rs_names = { .n_types = JT_ARR,
	.n_elem = &rs_name, .n_max = 16 };
static const struct rs_field rs_report_f[] = {
	{ "probe", &rs_probe, 0 }, { "when", &rs_when, 0 },
	{ "identity", &rs_identity, 1 }, { "sandboxHints", &rs_hints, 1 },
	{ "filesystem", &rs_fs, 1 }, { "processes", &rs_procs, 1 },
	{ "limits", &rs_limits, 1 }, { "tools", &rs_tools, 1 },
	{ "privileges", &rs_privs, 1 }, { "surface", &rs_surface, 1 },
	{ "network", &rs_net, 1 },
	{ "omitted", &rs_names, 1 }, { "incomplete", &rs_name, 1 },
	{ NULL, NULL, 0 }
};
static const struct rs_node rs_report = { .n_types = JT_OBJ,
	.n_fields = rs_report_f };

static int	rs_check(const json_t *, const struct rs_node *,
		    struct rs_ctx *);

static int
rs_fail(struct rs_ctx *c, const char *what)
{
	snprintf(c->c_err, c->c_errlen, "%s: %s",
	    c->c_path[0] != '\0' ? c->c_path : "report", what);
	return (-1);
}

/* Descend into path + ".key" or "[i]"; the caller restores the length. */
static int
rs_descend(const json_t *v, const struct rs_node *n, struct rs_ctx *c,
    const char *key, size_t idx)
{
	size_t	 len = strlen(c->c_path);
	int	 rv;

	if (key != NULL)
		snprintf(c->c_path + len, sizeof(c->c_path) - len, "%s%.32s",
		    len > 0 ? "." : "", key);
	else
		snprintf(c->c_path + len, sizeof(c->c_path) - len, "[%zu]",
		    idx);
	rv = rs_check(v, n, c);
	c->c_path[len] = '\0';
	return (rv);
}

static int
rs_check_fields(const json_t *v, const struct rs_field *f, struct rs_ctx *c)
{
	const char	*key;
	json_t		*val;
	size_t		 i;

	json_object_foreach((json_t *)v, key, val) {
		for (i = 0; f[i].f_key != NULL; i++)
			if (strcmp(f[i].f_key, key) == 0)
				break;
		if (f[i].f_key == NULL)
			return (rs_fail(c, "unknown key"));
		if (rs_descend(val, f[i].f_node, c, key, 0) == -1)
			return (-1);
	}
	for (i = 0; f[i].f_key != NULL; i++)
		if (!f[i].f_optional &&
		    json_object_get(v, f[i].f_key) == NULL) {
			snprintf(c->c_err, c->c_errlen, "%s%s%s: missing",
			    c->c_path, c->c_path[0] != '\0' ? "." : "",
			    f[i].f_key);
			return (-1);
		}
	return (0);
}

static int
rs_check_map(const json_t *v, const struct rs_node *n, struct rs_ctx *c)
{
	const char	*key;
	json_t		*val;

	if (json_object_size(v) > n->n_max)
		return (rs_fail(c, "too many entries"));
	json_object_foreach((json_t *)v, key, val) {
		if (!n->n_key(key))
			return (rs_fail(c, "bad key"));
		if (rs_descend(val, n->n_value, c, key, 0) == -1)
			return (-1);
	}
	return (0);
}

static int
rs_check_array(const json_t *v, const struct rs_node *n, struct rs_ctx *c)
{
	size_t	 i;

	if (json_array_size(v) > n->n_max)
		return (rs_fail(c, "too many elements"));
	for (i = 0; i < json_array_size(v); i++)
		if (rs_descend(json_array_get(v, i), n->n_elem, c, NULL, i)
		    == -1)
			return (-1);
	return (0);
}

static int
rs_check_string(const json_t *v, const struct rs_node *n, struct rs_ctx *c)
{
	const char	*s = json_string_value(v);
	size_t		 len = json_string_length(v);

	if (len > n->n_maxlen)
		return (rs_fail(c, "string too long"));
	if (memchr(s, '\0', len) != NULL)
		return (rs_fail(c, "NUL in string"));
	if (n->n_str != NULL && !n->n_str(s))
		return (rs_fail(c, "malformed string"));
	return (0);
}

static int
rs_type(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_NULL:
		return (JT_NULL);
	case JSON_TRUE:
	case JSON_FALSE:
		return (JT_BOOL);
	case JSON_INTEGER:
		return (JT_INT);
	case JSON_STRING:
		return (JT_STR);
	case JSON_OBJECT:
		return (JT_OBJ);
	case JSON_ARRAY:
		return (JT_ARR);
	default:
		return (0);	/* reals: the probe writes none */
	}
}

static int
rs_check(const json_t *v, const struct rs_node *n, struct rs_ctx *c)
{
	long long	 i;
	int		 t = rs_type(v);

	if ((t & n->n_types) == 0)
		return (rs_fail(c, "wrong type"));
	switch (t) {
	case JT_INT:
		i = json_integer_value(v);
		if (i < n->n_lo || i > n->n_hi)
			return (rs_fail(c, "number out of range"));
		return (0);
	case JT_STR:
		return (rs_check_string(v, n, c));
	case JT_ARR:
		return (rs_check_array(v, n, c));
	case JT_OBJ:
		if (n->n_fields != NULL)
			return (rs_check_fields(v, n->n_fields, c));
		return (rs_check_map(v, n, c));
	default:
		return (0);
	}
}

int
report_schema_check(const json_t *root, char *err, size_t errlen)
{
	struct rs_ctx	 c;

	memset(&c, 0, sizeof(c));
	c.c_err = err;
	c.c_errlen = errlen;
	return (rs_check(root, &rs_report, &c));
}
