/*
 * The configuration outside the grammar: the built-in defaults, the
 * environment overrides, the names of tiers and backends, and the
 * resolution of user and group names against the password database.
 * The grammar itself is parse.y.
 */
#include <sys/types.h>

#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>

#include "fenced.h"
#include "log.h"

/*
 * Temporary directories a sandbox home may never live in: anyone can
 * create names there first, and cleaners delete what they find.
 */
static const char *config_tmpdirs[] = { "/tmp", "/var/tmp", "/dev/shm" };

static int	config_uids_clear(const struct fenced_config *);
static void	config_admin_uids(struct fenced_config *, const struct group *);
static int	config_admin_add(struct fenced_config *, uid_t);
static int	config_audit_resolve(struct fenced_config *);
static void	config_uids_more(char *, size_t, unsigned);

/*
 * The defaults of docs/design.md section 8, and the HTTP limits it leaves to
 * us (docs/http.md).
 */
void
config_defaults(struct fenced_config *c)
{
	memset(c, 0, sizeof(*c));
	(void)strlcpy(c->c_listen_addr, FENCED_LISTEN_ADDR,
	    sizeof(c->c_listen_addr));
	c->c_listen_port = FENCED_LISTEN_PORT;
	(void)strlcpy(c->c_socket, FENCED_SOCKET, sizeof(c->c_socket));
	(void)strlcpy(c->c_state, FENCED_STATE, sizeof(c->c_state));
	(void)strlcpy(c->c_runsc_platform, "ptrace",
	    sizeof(c->c_runsc_platform));
	(void)strlcpy(c->c_homes, FENCED_HOMES, sizeof(c->c_homes));
	(void)strlcpy(c->c_user, FENCED_USER, sizeof(c->c_user));
	/* Above every range systemd gives out (fenced.conf(5)). */
	c->c_fence_uid_lo = FENCE_UIDS_DEFAULT_LO;
	c->c_fence_uid_hi = FENCE_UIDS_DEFAULT_LO + 1023;
	(void)strlcpy(c->c_admin_group, FENCED_ADMIN_GROUP,
	    sizeof(c->c_admin_group));
	c->c_tier = TIER_L15;
	c->c_backend = BACKEND_NATIVE;
	c->c_lifetime = 1800;
	c->c_lifetime_max = 7200;
	c->c_limits.fl_memory = 512ULL << 20;
	c->c_limits.fl_pids = 256;
	c->c_limits.fl_cpu_milli = 1000;
	c->c_limits_max.fl_memory = 2ULL << 30;
	c->c_limits_max.fl_pids = 1024;
	c->c_limits_max.fl_cpu_milli = 2000;
	/* Sixteen fences of the defaults (docs/limits.md). */
	c->c_user_fences = 16;
	c->c_user_limits.fl_memory = 8ULL << 30;
	c->c_user_limits.fl_pids = 4096;
	c->c_user_limits.fl_cpu_milli = 16000;
	/* docs/snapshots.md: "Bounds". */
	c->c_snap_count = 16;
	c->c_observe_denials = 1;
	c->c_snap_bytes = 4ULL << 30;
	c->c_user_snap_count = 64;
	c->c_user_snap_bytes = 16ULL << 30;
	c->c_exec_timeout = 10000;
	c->c_exec_timeout_max = 60000;
	c->c_exec_output = 262144;
	c->c_exec_output_max = 1048576;
	c->c_exec_inflight_user = 32;
	c->c_exec_processes = 16;
	c->c_http_body_max = 2U << 20;
	c->c_files_max = 16U << 20;
	c->c_egress_resolver_port = 53;
	c->c_audit_size = AUDIT_SIZE_DEFAULT;
	c->c_audit_keep = AUDIT_KEEP_DEFAULT;
	c->c_egress_conns = 32;
	c->c_egress_rate = 4U << 20;
	c->c_egress_idle = 60;
	c->c_egress_connect = 10;
	(void)strlcpy(c->c_probe_egress_refused, EGRESS_REFUSED_DEFAULT,
	    sizeof(c->c_probe_egress_refused));
	c->c_http_headers_max = 8192;
	c->c_http_timeout = 10;
	(void)strlcpy(c->c_probe_dns, PROBE_DNS_DEFAULT,
	    sizeof(c->c_probe_dns));
	(void)strlcpy(c->c_probe_tcp[0], PROBE_TCP_DEFAULT1,
	    sizeof(c->c_probe_tcp[0]));
	(void)strlcpy(c->c_probe_tcp[1], PROBE_TCP_DEFAULT2,
	    sizeof(c->c_probe_tcp[1]));
	c->c_probe_ntcp = 2;
	c->c_http_conns_max = 256;
	c->c_http_conns_user = 32;

	/* Not resolved yet. */
	c->c_uid = (uid_t)-1;
	c->c_gid = (gid_t)-1;
	c->c_admin_gid = (gid_t)-1;
}

/*
 * Is path dir or below it?  Compared a component at a time, so that
 * "//tmp/x" is caught and "/tmpx" is not; "." and ".." are refused
 * before this is asked.
 */
static int
config_path_under(const char *path, const char *dir)
{
	const char	*p = path, *d = dir;

	for (;;) {
		while (*p == '/')
			p++;
		while (*d == '/')
			d++;
		if (*d == '\0')
			return (1);
		while (*d != '\0' && *d != '/') {
			if (*p != *d)
				return (0);
			p++;
			d++;
		}
		if (*p != '\0' && *p != '/')
			return (0);
	}
}

/* Does path have a "." or ".." component? */
static int
config_path_dots(const char *path)
{
	const char	*p = path;
	size_t		 n;

	while (*p != '\0') {
		n = strcspn(p, "/");
		if ((n == 1 && p[0] == '.') ||
		    (n == 2 && p[0] == '.' && p[1] == '.'))
			return (1);
		p += n;
		while (*p == '/')
			p++;
	}
	return (0);
}

/*
 * The rules for `homes' and VOICEBOX_SANDBOX_HOMES.  The value is kept
 * unexpanded, so what can be checked here is its shape: "~" or "~/..."
 * (the owner's home) or an absolute path, %u the only escape, no "."
 * or ".." to walk out of what was checked, and nowhere in a temporary
 * directory.  Returns 0, or -1 with *why set.
 */
int
config_homes_check(const char *homes, const char **why)
{
	const char	*p;
	size_t		 i, len;

	len = strlen(homes);
	if (len == 0) {
		*why = "is empty";
		return (-1);
	}
	if (len >= PATH_MAX) {
		*why = "is too long";
		return (-1);
	}
	if (homes[0] == '~') {
		if (homes[1] != '\0' && homes[1] != '/') {
			*why = "may use ~ only for the owner's own home "
			    "(\"~\" or \"~/...\")";
			return (-1);
		}
	} else if (homes[0] != '/') {
		*why = "must be an absolute path or start with ~/";
		return (-1);
	}
	for (p = homes; (p = strchr(p, '%')) != NULL; p += 2) {
		if (p[1] != 'u') {
			*why = "may use no % escape but %u";
			return (-1);
		}
	}
	if (config_path_dots(homes)) {
		*why = "may not have a \".\" or \"..\" component";
		return (-1);
	}
	if (homes[0] == '/') {
		for (i = 0; i < nitems(config_tmpdirs); i++) {
			if (config_path_under(homes, config_tmpdirs[i])) {
				*why = "may not be in /tmp, /var/tmp or "
				    "/dev/shm";
				return (-1);
			}
		}
	}
	*why = NULL;
	return (0);
}

/*
 * The environment wins over the file.  A value that is set but not
 * valid stops the daemon, and then neither is applied: running with a
 * setting the operator did not ask for is worse than not running.
 */
int
config_env_override(struct fenced_config *c)
{
	const char	*homes, *secs, *why, *errstr;
	long long	 lifetime = 0;
	int		 rv = 0;

	if ((homes = getenv("VOICEBOX_SANDBOX_HOMES")) != NULL &&
	    config_homes_check(homes, &why) == -1) {
		log_warnx("VOICEBOX_SANDBOX_HOMES \"%s\" %s", homes, why);
		rv = -1;
	}
	if ((secs = getenv("VOICEBOX_FENCE_MAX_SEC")) != NULL) {
		/* Digits only: strtonum() would let " +60" through. */
		errstr = "invalid";
		if (secs[0] != '\0' &&
		    strspn(secs, "0123456789") == strlen(secs))
			lifetime = strtonum(secs, LIFETIME_MIN, LIFETIME_MAX,
			    &errstr);
		if (errstr != NULL) {
			log_warnx("VOICEBOX_FENCE_MAX_SEC \"%s\" is not valid: "
			    "must be a number of seconds between %d and %d",
			    secs, LIFETIME_MIN, LIFETIME_MAX);
			rv = -1;
		}
	}
	if (rv == -1)
		return (-1);

	if (homes != NULL) {
		(void)strlcpy(c->c_homes, homes, sizeof(c->c_homes));
		log_debug("homes %s from VOICEBOX_SANDBOX_HOMES", homes);
	}
	if (secs != NULL) {
		/* As `lifetime N' without max: the default and the most. */
		c->c_lifetime = c->c_lifetime_max = (uint32_t)lifetime;
		log_debug("lifetime %lld from VOICEBOX_FENCE_MAX_SEC",
		    lifetime);
	}
	return (0);
}

/*
 * Where the audit log goes when `audit log' is not given: where a
 * Debian admin looks, /var/log/fenced/audit.log, for the daemon of the
 * default state directory; a daemon on a state of its own (a second
 * daemon, a test's) writes <state>/audit.log, so that two daemons never
 * share one log or rotate each other's.  `audit off': none.
 */
static int
config_audit_resolve(struct fenced_config *c)
{
	if (c->c_audit_off) {
		c->c_audit_log[0] = '\0';
		return (0);
	}
	if (c->c_audit_log[0] != '\0')
		return (0);
	if (strcmp(c->c_state, FENCED_STATE) == 0)
		(void)strlcpy(c->c_audit_log, AUDIT_LOG_DEFAULT,
		    sizeof(c->c_audit_log));
	else if ((size_t)snprintf(c->c_audit_log, sizeof(c->c_audit_log),
	    "%s/%s", c->c_state, AUDIT_LOG_STATE) >= sizeof(c->c_audit_log)) {
		log_warnx("state %s: too long for the audit log's path",
		    c->c_state);
		return (-1);
	}
	return (0);
}

/*
 * No account of the host may hold an id of `fence uids': a user with
 * such a uid could signal the fence that gets it and reach its home,
 * and since a root-owned fence's gid is its uid, the members of a group
 * with such a gid would share the fence's group.  Every user and group
 * NSS lists (files, systemd, and any module that enumerates) is looked
 * at; a source that does not enumerate (sss or ldap without
 * enumeration) answers the fencer's getpwuid() and getgrgid() of each
 * uid before it is given out (fencer_uids.c).  The first of each kind
 * is named, with how many more there are.
 */
static int
config_uids_clear(const struct fenced_config *c)
{
	struct passwd	*pw;
	struct group	*gr;
	char		 first[LOGIN_NAME_MAX + 64], more[32];
	unsigned	 n = 0;

	setpwent();
	while ((pw = getpwent()) != NULL) {
		if (pw->pw_uid < c->c_fence_uid_lo ||
		    pw->pw_uid > c->c_fence_uid_hi)
			continue;
		if (n++ == 0)
			(void)snprintf(first, sizeof(first), "uid %u of user %s",
			    (unsigned)pw->pw_uid, pw->pw_name);
	}
	endpwent();
	if (n > 0) {
		config_uids_more(more, sizeof(more), n);
		log_warnx("fence uids %u-%u hold %s%s: a fence given that "
		    "uid would be the user's to signal and to read; choose a "
		    "range no user and no group has",
		    (unsigned)c->c_fence_uid_lo, (unsigned)c->c_fence_uid_hi,
		    first, more);
		return (-1);
	}
	setgrent();
	while ((gr = getgrent()) != NULL) {
		if (gr->gr_gid < c->c_fence_uid_lo ||
		    gr->gr_gid > c->c_fence_uid_hi)
			continue;
		if (n++ == 0)
			(void)snprintf(first, sizeof(first),
			    "gid %u of group %s", (unsigned)gr->gr_gid,
			    gr->gr_name);
	}
	endgrent();
	if (n > 0) {
		config_uids_more(more, sizeof(more), n);
		log_warnx("fence uids %u-%u hold %s%s: a root-owned fence's "
		    "gid is its uid, so the group's members would share its "
		    "files; choose a range no user and no group has",
		    (unsigned)c->c_fence_uid_lo, (unsigned)c->c_fence_uid_hi,
		    first, more);
		return (-1);
	}
	return (0);
}

/* " (and N more)" after the first of n, or nothing. */
static void
config_uids_more(char *buf, size_t len, unsigned n)
{
	if (n > 1)
		(void)snprintf(buf, len, " (and %u more)", n - 1);
	else
		buf[0] = '\0';
}

/*
 * Names to ids.  The unprivileged user must exist; the admin group may
 * not (Debian has no wheel), and then only root is an admin.
 */
int
config_resolve(struct fenced_config *c)
{
	struct passwd	*pw;
	struct group	*gr;

	errno = 0;
	if ((pw = getpwnam(c->c_user)) == NULL) {
		/* getpwnam(3): these all mean "no such user". */
		if (errno != 0 && errno != ENOENT && errno != ESRCH &&
		    errno != EBADF && errno != EPERM)
			log_warn("getpwnam %s", c->c_user);
		else
			log_warnx("user %s does not exist; create it "
			    "(make run does) or set `user`", c->c_user);
		return (-1);
	}
	if (pw->pw_uid == 0 || pw->pw_gid == 0) {
		log_warnx("user %s has uid or gid 0; broker and prober must "
		    "run unprivileged", c->c_user);
		return (-1);
	}
	if (pw->pw_uid >= c->c_fence_uid_lo &&
	    pw->pw_uid <= c->c_fence_uid_hi) {
		log_warnx("user %s (uid %u) is in fence uids %u-%u; a fence "
		    "could then signal the broker", c->c_user,
		    (unsigned)pw->pw_uid, (unsigned)c->c_fence_uid_lo,
		    (unsigned)c->c_fence_uid_hi);
		return (-1);
	}
	c->c_uid = pw->pw_uid;
	c->c_gid = pw->pw_gid;
	if (config_uids_clear(c) == -1)
		return (-1);

	if ((gr = getgrnam(c->c_admin_group)) == NULL) {
		log_warnx("admin group %s does not exist; only root may "
		    "control every environment", c->c_admin_group);
		c->c_admin_gid = (gid_t)-1;
	} else {
		c->c_admin_gid = gr->gr_gid;
		config_admin_uids(c, gr);
	}
	return (config_audit_resolve(c));
}

/* uid added to c's admin uids, or there already; -1: no room. */
static int
config_admin_add(struct fenced_config *c, uid_t uid)
{
	uint32_t	 i;

	for (i = 0; i < c->c_nadmin_uids; i++)
		if (c->c_admin_uids[i] == uid)
			return (0);
	if (c->c_nadmin_uids == ADMIN_UIDS_MAX) {
		log_warnx("admin group %s has more than %d members; the "
		    "host tokens of uid %u and any after it are not an "
		    "admin's", c->c_admin_group, ADMIN_UIDS_MAX,
		    (unsigned)uid);
		return (-1);
	}
	c->c_admin_uids[c->c_nadmin_uids++] = uid;
	return (0);
}

/*
 * The admin group's members as the file is read: those it lists and
 * those whose group it is.  The broker, in its chroot, cannot ask; a
 * host token's owner is an admin if listed here (docs/metrics.md).
 */
static void
config_admin_uids(struct fenced_config *c, const struct group *gr)
{
	struct passwd	*pw;
	char		**mem, *names[ADMIN_UIDS_MAX];
	gid_t		 gid = gr->gr_gid;
	size_t		 i, n = 0;
	int		 full = 0;

	c->c_nadmin_uids = 0;
	/* getpwnam() may reuse getgrnam()'s buffers: the names first. */
	for (mem = gr->gr_mem; mem != NULL && *mem != NULL &&
	    n < ADMIN_UIDS_MAX; mem++)
		if ((names[n] = strdup(*mem)) != NULL)
			n++;
	for (i = 0; i < n; i++) {
		if (full == 0 && (pw = getpwnam(names[i])) != NULL &&
		    pw->pw_uid != 0)
			full = config_admin_add(c, pw->pw_uid);
		free(names[i]);
	}
	setpwent();
	while (full == 0 && (pw = getpwent()) != NULL)
		if (pw->pw_gid == gid && pw->pw_uid != 0)
			full = config_admin_add(c, pw->pw_uid);
	endpwent();
}
