/*
 * report_parse(): a report from inside a fence is hostile input.  It is
 * bounded in size and nesting before jansson sees it, parsed strictly
 * (duplicate keys, invalid UTF-8, NUL in strings and numbers out of
 * range all refused), held against the schema (report_schema.c), copied
 * into a typed extract, and only then judged (level.c).  Anything wrong
 * makes the level "unmeasured" and says why; nothing makes it crash.
 */
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "report_impl.h"

const char *const report_priv_names[PRIV_MAX] = {
	[PRIV_UNSHARE_USER] = "unshare_user",
	[PRIV_KEYCTL] = "keyctl",
	[PRIV_BPF] = "bpf",
	[PRIV_PTRACE] = "ptrace",
	[PRIV_IO_URING] = "io_uring_setup",
	[PRIV_USERFAULTFD] = "userfaultfd",
	[PRIV_PERF] = "perf_event_open",
	[PRIV_MOUNT] = "mount",
	[PRIV_I386] = "i386",
	[PRIV_PACKET] = "socket_packet",
};

const char *const report_surface_ids[SURFACE_MAX] = {
#define SURFACE_ID(e, id, how, why)	[e] = id,
	SURFACE_TABLE(SURFACE_ID)
#undef SURFACE_ID
};

/*
 * The deepest nesting of [ and { outside strings, counted before the
 * parser (which recurses) is given the bytes; -1 past the bound.
 */
static int
report_depth_ok(const char *buf, size_t len)
{
	size_t	 i;
	int	 depth = 0, instr = 0, esc = 0;

	for (i = 0; i < len; i++) {
		if (instr) {
			if (esc)
				esc = 0;
			else if (buf[i] == '\\')
				esc = 1;
			else if (buf[i] == '"')
				instr = 0;
			continue;
		}
		switch (buf[i]) {
		case '"':
			instr = 1;
			break;
		case '[':
		case '{':
			if (++depth > REPORT_DEPTH_MAX)
				return (-1);
			break;
		case ']':
		case '}':
			depth--;
			break;
		}
	}
	return (0);
}

/* Copy a string value, "" for null; the schema bounded its length. */
static void
report_copy(char *dst, size_t len, const json_t *o, const char *key)
{
	const char	*s = json_string_value(json_object_get(o, key));

	strlcpy(dst, s != NULL ? s : "", len);
}

static long long
report_int(const json_t *o, const char *key)
{
	const json_t	*v = json_object_get(o, key);

	return (json_is_integer(v) ? json_integer_value(v) : -1);
}

static int
report_bool(const json_t *o, const char *key)
{
	return (json_is_true(json_object_get(o, key)));
}

static void
report_identity(const json_t *id, struct probe_report *r)
{
	const json_t	*k = json_object_get(id, "kernel");

	r->r_uid = report_int(id, "uid");
	report_copy(r->r_release, sizeof(r->r_release), k, "release");
	report_copy(r->r_version, sizeof(r->r_version), k, "version");
	report_copy(r->r_boot_id, sizeof(r->r_boot_id), id, "bootId");
}

static uint64_t
report_ns(const json_t *nss, const char *name)
{
	long long	 v;

	v = report_int(json_object_get(nss, name), "inode");
	return (v > 0 ? (uint64_t)v : 0);
}

static void
report_hints(const json_t *h, struct probe_report *r)
{
	static const char *const caps[CAP_SET_MAX] = {
		[CAP_SET_EFF] = "capEff", [CAP_SET_PRM] = "capPrm",
		[CAP_SET_BND] = "capBnd", [CAP_SET_AMB] = "capAmb",
	};
	const json_t	*nss = json_object_get(h, "namespaces");
	const char	*s;
	int		 i;

	r->r_seccomp = report_int(h, "seccomp");
	r->r_nnp = report_int(h, "noNewPrivs");
	for (i = 0; i < CAP_SET_MAX; i++)
		if ((s = json_string_value(json_object_get(h, caps[i])))
		    != NULL) {
			r->r_has_cap[i] = 1;
			r->r_cap[i] = strtoull(s, NULL, 16);
		}
	r->r_ns_pid = report_ns(nss, "pid");
	r->r_ns_net = report_ns(nss, "net");
	r->r_ns_mnt = report_ns(nss, "mnt");
}

static void
report_filesystem(const json_t *fs, struct probe_report *r)
{
	const json_t		*a, *p;
	struct report_path	*rp;
	size_t			 i;

	a = json_object_get(fs, "paths");
	for (i = 0; i < json_array_size(a) && r->r_npaths < REPORT_PATHS_MAX;
	    i++) {
		p = json_array_get(a, i);
		rp = &r->r_paths[r->r_npaths++];
		report_copy(rp->rp_label, sizeof(rp->rp_label), p, "label");
		rp->rp_has_path = json_is_string(json_object_get(p, "path"));
		rp->rp_exists = report_bool(p, "exists");
		rp->rp_listable = report_bool(p, "listable");
		rp->rp_writable = report_bool(p, "writable");
		rp->rp_entries = report_int(p, "entries");
		report_copy(rp->rp_error, sizeof(rp->rp_error), p, "error");
	}
	a = json_object_get(fs, "hostPaths");
	for (i = 0; i < json_array_size(a) &&
	    r->r_nsecrets < REPORT_SECRETS_MAX; i++) {
		p = json_array_get(a, i);
		report_copy(r->r_secrets[r->r_nsecrets].rs_path,
		    sizeof(r->r_secrets[0].rs_path), p, "path");
		r->r_secrets[r->r_nsecrets++].rs_readable =
		    report_bool(p, "readable");
	}
}

static void
report_processes(const json_t *pr, struct probe_report *r)
{
	const json_t	*a, *hp;
	size_t		 i;

	r->r_other_uids = report_bool(pr, "otherUids");
	a = json_object_get(pr, "otherUidSample");
	for (i = 0; i < json_array_size(a) && r->r_nother < REPORT_OTHER_UIDS;
	    i++)
		r->r_other_sample[r->r_nother++] =
		    json_integer_value(json_array_get(a, i));
	hp = json_object_get(pr, "hostPid");
	if (json_is_object(hp)) {
		r->r_has_host_pid = 1;
		r->r_host_pid = report_int(hp, "pid");
		r->r_host_pid_visible = report_bool(hp, "visible");
	}
}

/* The outcome words of a section's names (privileges, surface). */
static void
report_words(const json_t *o, const char *const *names, int n,
    char (*dst)[REPORT_WORD_LEN])
{
	int	 i;

	for (i = 0; i < n; i++)
		report_copy(dst[i], REPORT_WORD_LEN, o, names[i]);
}

/*
 * A surface section names every entry: one left out could be the one
 * reached, and "not tried" is not "not reachable".
 */
static int
report_surface_whole(const struct probe_report *r, char *err, size_t len)
{
	int	 i;

	if (!(r->r_sections & REPORT_S_SURFACE))
		return (0);
	for (i = 0; i < SURFACE_MAX; i++)
		if (r->r_surface[i][0] == '\0') {
			snprintf(err, len, "surface.%s: missing",
			    report_surface_ids[i]);
			return (-1);
		}
	return (0);
}

/* One egress check; the schema bounded and checked every field. */
static void
report_egress_try(const json_t *eg, const char *key,
    struct probe_egress_try *t)
{
	const json_t	*o = json_object_get(eg, key);

	if (!json_is_object(o))
		return;
	t->et_present = 1;
	report_copy(t->et_target, sizeof(t->et_target), o, "target");
	t->et_proxy = report_bool(o, "proxy");
	t->et_status = (int)report_int(o, "status");
	report_copy(t->et_code, sizeof(t->et_code), o, "code");
	/* The report can only take away: either word of a way out counts. */
	t->et_reached = report_bool(o, "reached") || t->et_status == 200;
	report_copy(t->et_error, sizeof(t->et_error), o, "error");
}

static void
report_network(const json_t *net, struct probe_report *r)
{
	const json_t	*c = json_object_get(net, "canary"), *a, *eg;
	size_t		 i;

	if (json_is_object(c)) {
		r->r_has_canary = 1;
		report_copy(r->r_canary_target, sizeof(r->r_canary_target), c,
		    "target");
		r->r_canary_connected = report_bool(c, "connected");
	}
	a = json_object_get(net, "interfaces");
	for (i = 0; i < json_array_size(a) && r->r_nifaces < REPORT_IFACES_MAX;
	    i++)
		report_copy(r->r_ifaces[r->r_nifaces++],
		    sizeof(r->r_ifaces[0]), json_array_get(a, i), "name");
	if (json_is_object(eg = json_object_get(net, "egress"))) {
		r->r_has_egress = 1;
		report_egress_try(eg, "allowed", &r->r_egress_allowed);
		report_egress_try(eg, "refused", &r->r_egress_refused);
	}
}

/* A path reported twice could say two things: refuse the report. */
static int
report_paths_unique(const struct probe_report *r, char *err, size_t len)
{
	int	 i, j;

	for (i = 0; i < r->r_npaths; i++)
		for (j = i + 1; j < r->r_npaths; j++)
			if (strcmp(r->r_paths[i].rp_label,
			    r->r_paths[j].rp_label) == 0) {
				snprintf(err, len, "filesystem.paths: %s "
				    "twice", r->r_paths[i].rp_label);
				return (-1);
			}
	return (0);
}

static void
report_extract(const json_t *root, struct probe_report *r)
{
	static const struct {
		const char	*s_name;
		unsigned int	 s_bit;
	} sections[] = {
		{ "identity", REPORT_S_IDENTITY },
		{ "sandboxHints", REPORT_S_HINTS },
		{ "filesystem", REPORT_S_FILESYSTEM },
		{ "processes", REPORT_S_PROCESSES },
		{ "limits", REPORT_S_LIMITS },
		{ "tools", REPORT_S_TOOLS },
		{ "privileges", REPORT_S_PRIVILEGES },
		{ "network", REPORT_S_NETWORK },
		{ "surface", REPORT_S_SURFACE },
	};
	size_t	 i;

	for (i = 0; i < sizeof(sections) / sizeof(sections[0]); i++)
		if (json_object_get(root, sections[i].s_name) != NULL)
			r->r_sections |= sections[i].s_bit;
	report_copy(r->r_when, sizeof(r->r_when), root, "when");
	report_copy(r->r_incomplete, sizeof(r->r_incomplete), root,
	    "incomplete");
	r->r_seccomp = r->r_nnp = r->r_uid = -1;
	if (r->r_sections & REPORT_S_IDENTITY)
		report_identity(json_object_get(root, "identity"), r);
	if (r->r_sections & REPORT_S_HINTS)
		report_hints(json_object_get(root, "sandboxHints"), r);
	if (r->r_sections & REPORT_S_FILESYSTEM)
		report_filesystem(json_object_get(root, "filesystem"), r);
	if (r->r_sections & REPORT_S_PROCESSES)
		report_processes(json_object_get(root, "processes"), r);
	if (r->r_sections & REPORT_S_PRIVILEGES)
		report_words(json_object_get(root, "privileges"),
		    report_priv_names, PRIV_MAX, r->r_priv);
	if (r->r_sections & REPORT_S_NETWORK)
		report_network(json_object_get(root, "network"), r);
	if (r->r_sections & REPORT_S_SURFACE)
		report_words(json_object_get(root, "surface"),
		    report_surface_ids, SURFACE_MAX, r->r_surface);
}

int
report_parse(const char *buf, size_t len, const struct probe_expect *e,
    struct probe_verdict *out)
{
	struct probe_report	*r;
	json_error_t		 jerr;
	json_t			*root;
	char			 err[VERDICT_REASON_LEN];

	memset(out, 0, sizeof(*out));
	if (e != NULL && e->pe_run_error[0] != '\0') {
		/* The run does not count, whatever it printed. */
		verdict_unmeasured(out, "%.*s", PROBE_RUN_ERR_LEN,
		    e->pe_run_error);
		return (-1);
	}
	if (buf == NULL || len == 0) {
		verdict_unmeasured(out, "empty report");
		return (-1);
	}
	if (len > REPORT_MAX) {
		verdict_unmeasured(out, "report of %zu bytes, over the bound "
		    "of %d", len, REPORT_MAX);
		return (-1);
	}
	if (report_depth_ok(buf, len) == -1) {
		verdict_unmeasured(out, "report nested deeper than %d",
		    REPORT_DEPTH_MAX);
		return (-1);
	}
	if ((root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr))
	    == NULL) {
		verdict_unmeasured(out, "malformed report: line %d column %d: "
		    "%s", jerr.line, jerr.column, jerr.text);
		return (-1);
	}
	if (report_schema_check(root, err, sizeof(err)) == -1) {
		json_decref(root);
		verdict_unmeasured(out, "malformed report: %s", err);
		return (-1);
	}
	if ((r = calloc(1, sizeof(*r))) == NULL) {
		json_decref(root);
		verdict_unmeasured(out, "out of memory");
		return (-1);
	}
	report_extract(root, r);
	json_decref(root);
	if (report_paths_unique(r, err, sizeof(err)) == -1 ||
	    report_surface_whole(r, err, sizeof(err)) == -1) {
		free(r);
		verdict_unmeasured(out, "malformed report: %s", err);
		return (-1);
	}
	level_judge(r, e, out);
	free(r);
	return (0);
}
