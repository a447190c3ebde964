/*
 * The OCI bundle of a runsc fence: <dir>/config.json and <dir>/rootfs.
 *
 * runsc_bundle_config() decides every field of config.json, and nothing
 * else does (regress/bundle_test.c reads them back one by one against
 * docs/design.md section 3): the fence's uid (never 0), no_new_privileges, no
 * capabilities in any set, an empty environment, RLIMIT_CORE 0,
 * RLIMIT_NPROC at the pids limit (the sentry's own bound), a
 * read-only root holding the host's /usr and /etc read-only as a native
 * fence sees them (view_binds[], fencer_view.c, the same table), the sandbox home
 * read-write at /home/<user>, a private 256 MiB tmpfs /tmp mode 0700
 * owned by the fence's uid, no network (runsc --network=none, and a
 * network namespace), no devices, the memory, pids and cpu limits in a
 * cgroup the fencer names, and a filter inside the sandbox that refuses
 * a new user namespace.  The agent is the container's init.
 *
 * runsc_bundle_write() makes the root: an empty directory holding only
 * mount points and the merged-/usr links the host has.
 */
#include <sys/types.h>
#include <sys/ptrace.h>
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "fenced.h"
#include "names.h"
#include "fencer_view.h"
#include "fence.h"
#include "bundle.h"

/* A container id: random, never derived from a key, an owner or a path. */
int
runsc_id_new(char id[RUNSC_ID_SIZE])
{
	unsigned char	 b[RUNSC_ID_LEN / 2];
	size_t		 i;

	arc4random_buf(b, sizeof(b));
	for (i = 0; i < sizeof(b); i++)
		snprintf(id + 2 * i, 3, "%02x", b[i]);
	explicit_bzero(b, sizeof(b));
	return (0);
}

int
runsc_id_valid(const char *id)
{
	size_t	 i;

	for (i = 0; id[i] != '\0'; i++)
		if (i >= RUNSC_ID_LEN || !((id[i] >= '0' && id[i] <= '9') ||
		    (id[i] >= 'a' && id[i] <= 'f')))
			return (0);
	return (i == RUNSC_ID_LEN);
}

static int
bundle_add(json_t *arr, json_t *v)
{
	return (v == NULL || json_array_append_new(arr, v) == -1 ? -1 : 0);
}

static json_t *
bundle_bind(const char *src, const char *dst, int rw)
{
	return (json_pack("{s:s, s:s, s:s, s:[s,s,s,s]}",
	    "destination", dst, "type", "bind", "source", src,
	    "options", "bind", rw ? "rw" : "ro", "nosuid", "nodev"));
}

/*
 * The host paths of view_binds[] a root needs: /usr and /etc,
 * and each merged-/usr name the host has as a real directory (where it
 * is a link, the root holds the same link: runsc_bundle_write()).
 */
static int
bundle_host_mounts(json_t *mounts, char *err, size_t errlen)
{
	struct stat	 sb;
	size_t		 i;

	for (i = 0; i < view_nbinds; i++) {
		const struct view_bind *hb = &view_binds[i];

		if (hb->vb_kind == VIEW_LINKDIR &&
		    (lstat(hb->vb_src, &sb) == -1 || !S_ISDIR(sb.st_mode)))
			continue;
		if (hb->vb_kind != VIEW_RO && hb->vb_kind !=
		    VIEW_LINKDIR)
			continue;
		if (bundle_add(mounts, bundle_bind(hb->vb_src, hb->vb_dst,
		    0)) == -1) {
			snprintf(err, errlen, "bundle: mount %s", hb->vb_dst);
			return (-1);
		}
	}
	return (0);
}

static json_t *
bundle_mounts(const struct runsc_bundle_spec *s, char *err, size_t errlen)
{
	char		 home[PATH_MAX], src[PATH_MAX], dst[PATH_MAX];
	char		 tmpopt[4][64];
	json_t		*m;
	size_t		 i;

	if ((m = json_array()) == NULL)
		goto oom;
	if (bundle_host_mounts(m, err, errlen) == -1) {
		json_decref(m);
		return (NULL);
	}
	snprintf(home, sizeof(home), "/home/%s", s->rb_user);
	snprintf(tmpopt[0], sizeof(tmpopt[0]), "size=%llu",
	    (unsigned long long)RUNSC_TMP_SIZE);
	snprintf(tmpopt[1], sizeof(tmpopt[1]), "mode=0700");
	snprintf(tmpopt[2], sizeof(tmpopt[2]), "uid=%u", (unsigned)s->rb_uid);
	snprintf(tmpopt[3], sizeof(tmpopt[3]), "gid=%u", (unsigned)s->rb_gid);
	if (bundle_add(m, json_pack("{s:s, s:s, s:s, s:[s,s,s]}",
	    "destination", "/proc", "type", "proc", "source", "proc",
	    "options", "nosuid", "nodev", "noexec")) == -1 ||
	    bundle_add(m, json_pack("{s:s, s:s, s:s, s:[s,s,s,s,s,s]}",
	    "destination", "/tmp", "type", "tmpfs", "source", "tmpfs",
	    "options", "nosuid", "nodev", tmpopt[0], tmpopt[1], tmpopt[2],
	    tmpopt[3])) == -1 ||
	    /*
	     * gVisor gives a fence its own sysfs unless the bundle mounts
	     * /sys: an empty read-only tmpfs there, as a native fence has
	     * no /sys to read (docs/runsc.md).
	     */
	    bundle_add(m, json_pack("{s:s, s:s, s:s, s:[s,s,s,s,s,s]}",
	    "destination", "/sys", "type", "tmpfs", "source", "tmpfs",
	    "options", "ro", "nosuid", "nodev", "noexec", "size=4k",
	    "mode=0555")) == -1 ||
	    bundle_add(m, bundle_bind(s->rb_home, home, 1)) == -1)
		goto oom;
	for (i = 0; i < view_nbin_names; i++) {
		snprintf(src, sizeof(src), "%s/%s", s->rb_bindir,
		    view_bin_names[i]);
		snprintf(dst, sizeof(dst), "%s/%s", FENCE_BIN_DIR,
		    view_bin_names[i]);
		if (bundle_add(m, bundle_bind(src, dst, 0)) == -1)
			goto oom;
	}
#ifdef FENCED_TEST_HOOKS
	/* Test builds only: a host path the fence must not see. */
	if (s->rb_test_hostmount &&
	    bundle_add(m, bundle_bind("/var", "/var", 0)) == -1)
		goto oom;
#endif
	return (m);
 oom:
	json_decref(m);
	snprintf(err, errlen, "bundle: out of memory");
	return (NULL);
}

static json_t *
bundle_caps(const struct runsc_bundle_spec *s)
{
	const char	*sets[] = { "bounding", "effective", "inheritable",
			    "permitted", "ambient" };
	json_t		*c, *a;
	size_t		 i;

	if ((c = json_object()) == NULL)
		return (NULL);
	for (i = 0; i < nitems(sets); i++) {
		if ((a = json_array()) == NULL ||
		    json_object_set_new(c, sets[i], a) == -1) {
			json_decref(c);
			return (NULL);
		}
#ifdef FENCED_TEST_HOOKS
		/*
		 * Test builds only: a capability the fence must not have,
		 * ambient too, so that it outlives the agent's exec of a
		 * command as the fence's (non-root) uid.
		 */
		if (s->rb_test_cap &&
		    json_array_append_new(a, json_string("CAP_NET_RAW")) == -1) {
			json_decref(c);
			return (NULL);
		}
#endif
	}
	return (c);
}

static json_t *
bundle_process(const struct runsc_bundle_spec *s)
{
	char		 init[PATH_MAX];
	json_t		*caps;

	snprintf(init, sizeof(init), "%s/%s", FENCE_BIN_DIR, s->rb_init);
	if ((caps = bundle_caps(s)) == NULL)
		return (NULL);
	/* -s: the agent's channel is its stdin and stdout (agent.c). */
	/*
	 * RLIMIT_NPROC at the fence's pids limit: gVisor's tasks are not
	 * the host's, so the host's pids cgroup bounds only the sandbox's
	 * own threads and a fence could run far more processes than its
	 * limit; the sentry enforces this rlimit for the fence's uid,
	 * which in its user namespace is the fence's processes alone.
	 */
	return (json_pack("{s:b, s:{s:I, s:I, s:[]}, s:[s,s], s:[], s:s, "
	    "s:b, s:o, s:[{s:s, s:I, s:I}, {s:s, s:I, s:I}]}",
	    "terminal", 0,
	    "user", "uid", (json_int_t)s->rb_uid, "gid",
	    (json_int_t)s->rb_gid, "additionalGids",
	    "args", init, "-s",
	    "env",
	    "cwd", "/",
	    "noNewPrivileges", 1,
	    "capabilities", caps,
	    "rlimits", "type", "RLIMIT_CORE", "hard", (json_int_t)0, "soft",
	    (json_int_t)0, "type", "RLIMIT_NPROC", "hard",
	    (json_int_t)s->rb_limits.fl_pids, "soft",
	    (json_int_t)s->rb_limits.fl_pids));
}

/*
 * The host limits of a sandbox with the fence's limits l: its pids
 * (RUNSC_PIDS_FACTOR, above) and its cpu quota over RUNSC_CPU_PERIOD.
 * The bundle (cgroup v1) and the fencer's own cgroup (v2) use these.
 */
void
runsc_limits(const struct fence_limits *l, uint64_t *pids, uint64_t *quota)
{
	*pids = (uint64_t)l->fl_pids * RUNSC_PIDS_FACTOR + RUNSC_PIDS_OVERHEAD;
	*quota = (uint64_t)l->fl_cpu_milli * RUNSC_CPU_PERIOD / 1000;
}

/*
 * The filter gVisor applies inside the sandbox (runsc --oci-seccomp) to
 * every process of the fence, the agent included: no new user
 * namespace.  In one of its own a process holds every capability, and
 * this gVisor lets CAP_SYS_ADMIN or CAP_SYS_RESOURCE in the caller's own
 * namespace pass RLIMIT_NPROC (Linux asks for them in the initial one):
 * the one bound the sentry puts on the fence's processes
 * (docs/runsc.md).  So clone and unshare with CLONE_NEWUSER fail with
 * EPERM, as in a native fence from L1.5 on.  clone3 keeps its flags in
 * memory, where a filter cannot look: it fails with ENOSYS, which a
 * trace action answers when no tracer asked for seccomp stops and on
 * which the C library falls back to clone (runsc's filters give no
 * other errno than EPERM, on which it would not; this gVisor has no
 * clone3 at all).
 *
 * This gVisor checks a call against the filter once, before a tracer's
 * syscall-entry stop or seccomp stop, and runs whatever the tracer left
 * in the registers there: a tracer could turn an allowed unshare(0), or
 * the clone3 above, into unshare(CLONE_NEWUSER).  So the two ways to
 * such a stop are refused (EPERM): PTRACE_SYSCALL, and the option
 * PTRACE_O_TRACESECCOMP given by PTRACE_SETOPTIONS or PTRACE_SEIZE.
 * Every other ptrace request passes (gdb's attach, breakpoints,
 * register writes, stepping; PTRACE_SYSEMU stops before a call it then
 * never runs); strace, which needs PTRACE_SYSCALL, does not work in a
 * runsc fence (docs/runsc.md).  Everything else passes.  A runsc that
 * asks for the capabilities in the initial namespace (gVisor's from
 * January 2026) needs none of this.
 */
static json_t *
bundle_seccomp(void)
{
	const json_int_t newuser = CLONE_NEWUSER;
	const json_int_t tsc = PTRACE_O_TRACESECCOMP;

	return (json_pack("{s:s, s:["
	    "{s:[s], s:s, s:[{s:i, s:I, s:I, s:s}]}, "
	    "{s:[s], s:s, s:[{s:i, s:I, s:I, s:s}]}, "
	    "{s:[s], s:s}, "
	    "{s:[s], s:s, s:[{s:i, s:I, s:s}]}, "
	    "{s:[s], s:s, s:[{s:i, s:I, s:s}, {s:i, s:I, s:I, s:s}]}, "
	    "{s:[s], s:s, s:[{s:i, s:I, s:s}, {s:i, s:I, s:I, s:s}]}]}",
	    "defaultAction", "SCMP_ACT_ALLOW",
	    "syscalls",
	    "names", "clone", "action", "SCMP_ACT_ERRNO",
	    "args", "index", 0, "value", newuser, "valueTwo", newuser,
	    "op", "SCMP_CMP_MASKED_EQ",
	    "names", "unshare", "action", "SCMP_ACT_ERRNO",
	    "args", "index", 0, "value", newuser, "valueTwo", newuser,
	    "op", "SCMP_CMP_MASKED_EQ",
	    "names", "clone3", "action", "SCMP_ACT_TRACE",
	    "names", "ptrace", "action", "SCMP_ACT_ERRNO",
	    "args", "index", 0, "value", (json_int_t)PTRACE_SYSCALL,
	    "op", "SCMP_CMP_EQ",
	    "names", "ptrace", "action", "SCMP_ACT_ERRNO",
	    "args", "index", 0, "value", (json_int_t)PTRACE_SETOPTIONS,
	    "op", "SCMP_CMP_EQ",
	    "index", 3, "value", tsc, "valueTwo", tsc,
	    "op", "SCMP_CMP_MASKED_EQ",
	    "names", "ptrace", "action", "SCMP_ACT_ERRNO",
	    "args", "index", 0, "value", (json_int_t)PTRACE_SEIZE,
	    "op", "SCMP_CMP_EQ",
	    "index", 3, "value", tsc, "valueTwo", tsc,
	    "op", "SCMP_CMP_MASKED_EQ"));
}

static json_t *
bundle_linux(const struct runsc_bundle_spec *s)
{
	const struct fence_limits *l = &s->rb_limits;
	uint64_t	 pids, quota;
	json_t		*sc, *mem;

	if ((sc = bundle_seccomp()) == NULL)
		return (NULL);
	/* No cgroupsPath: the fencer has placed runsc in the fence's own. */
	if (s->rb_cgroups_path == NULL)
		return (json_pack("{s:[{s:s},{s:s},{s:s},{s:s},{s:s}], s:[], "
		    "s:o}",
		    "namespaces", "type", "pid", "type", "network", "type",
		    "ipc", "type", "uts", "type", "mount", "devices",
		    "seccomp", sc));
	runsc_limits(l, &pids, &quota);
	/*
	 * Where the kernel counts swap, memory and swap together may not
	 * pass the memory limit (OCI's "swap" is their sum, runsc's
	 * memory.memsw.limit_in_bytes): no swap, as a native fence.  runsc
	 * fails to start on a kernel without the file, so only then.
	 */
	if ((mem = json_pack("{s:I}", "limit", (json_int_t)l->fl_memory)) ==
	    NULL || (s->rb_swap && json_object_set_new(mem, "swap",
	    json_integer((json_int_t)l->fl_memory)) == -1)) {
		json_decref(mem);
		json_decref(sc);
		return (NULL);
	}
	return (json_pack("{s:[{s:s},{s:s},{s:s},{s:s},{s:s}], s:s, s:[], "
	    "s:{s:o, s:{s:I}, s:{s:I, s:I}}, s:o}",
	    "namespaces", "type", "pid", "type", "network", "type", "ipc",
	    "type", "uts", "type", "mount",
	    "cgroupsPath", s->rb_cgroups_path,
	    "devices",
	    "resources",
	    "memory", mem,
	    "pids", "limit", (json_int_t)pids,
	    "cpu", "quota", (json_int_t)quota, "period",
	    (json_int_t)RUNSC_CPU_PERIOD,
	    "seccomp", sc));
}

/*
 * config.json of one fence, or NULL and err.  What the caller passes is
 * checked once more here: the uid is never 0, every path absolute.
 */
json_t *
runsc_bundle_config(const struct runsc_bundle_spec *s, char *err,
    size_t errlen)
{
	json_t		*c, *proc, *mounts, *lnx;

	if (s->rb_uid == 0 || s->rb_gid == 0) {
		snprintf(err, errlen, "bundle: a fence never runs as root");
		return (NULL);
	}
	if (!fence_key_valid(s->rb_key) || s->rb_user[0] == '\0' ||
	    strchr(s->rb_user, '/') != NULL || s->rb_home[0] != '/' ||
	    s->rb_bindir[0] != '/' || strchr(s->rb_init, '/') != NULL ||
	    (s->rb_cgroups_path != NULL && s->rb_cgroups_path[0] == '\0')) {
		snprintf(err, errlen, "bundle: bad key, user or path");
		return (NULL);
	}
	if ((proc = bundle_process(s)) == NULL) {
		snprintf(err, errlen, "bundle: out of memory");
		return (NULL);
	}
	if ((mounts = bundle_mounts(s, err, errlen)) == NULL) {
		json_decref(proc);
		return (NULL);
	}
	if ((lnx = bundle_linux(s)) == NULL) {
		json_decref(proc);
		json_decref(mounts);
		snprintf(err, errlen, "bundle: out of memory");
		return (NULL);
	}
	c = json_pack("{s:s, s:o, s:{s:s, s:b}, s:s, s:o, s:o}",
	    "ociVersion", "1.0.2",
	    "process", proc,
	    "root", "path", "rootfs", "readonly", 1,
	    "hostname", s->rb_key,
	    "mounts", mounts,
	    "linux", lnx);
	if (c == NULL)
		snprintf(err, errlen, "bundle: out of memory");
	return (c);
}

static int
bundle_mkdir(int dfd, const char *path, char *err, size_t errlen)
{
	if (mkdirat(dfd, path, 0755) == -1 && errno != EEXIST) {
		snprintf(err, errlen, "bundle: mkdir rootfs/%s: %s", path,
		    strerror(errno));
		return (-1);
	}
	return (0);
}

static int
bundle_mkfile(int dfd, const char *path, char *err, size_t errlen)
{
	int	 fd;

	if ((fd = openat(dfd, path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC |
	    O_NOFOLLOW, 0444)) == -1) {
		snprintf(err, errlen, "bundle: create rootfs/%s: %s", path,
		    strerror(errno));
		return (-1);
	}
	(void)close(fd);
	return (0);
}

/* The mount points of config.json, and the host's merged-/usr links. */
static int
bundle_rootfs(int dfd, const struct runsc_bundle_spec *s, char *err,
    size_t errlen)
{
	static const char *const dirs[] = { "usr", "etc", "proc", "dev",
	    "sys", "tmp", "home", "run", "run/fenced", "run/fenced/bin" };
	char		 path[PATH_MAX], target[PATH_MAX];
	struct stat	 sb;
	ssize_t		 n;
	size_t		 i;

	for (i = 0; i < nitems(dirs); i++)
		if (bundle_mkdir(dfd, dirs[i], err, errlen) == -1)
			return (-1);
	snprintf(path, sizeof(path), "home/%s", s->rb_user);
	if (bundle_mkdir(dfd, path, err, errlen) == -1)
		return (-1);
	for (i = 0; i < view_nbin_names; i++) {
		snprintf(path, sizeof(path), "%s/%s", FENCE_BIN_DIR + 1,
		    view_bin_names[i]);
		if (bundle_mkfile(dfd, path, err, errlen) == -1)
			return (-1);
	}
	for (i = 0; i < view_nbinds; i++) {
		const struct view_bind *hb = &view_binds[i];

		if (hb->vb_kind != VIEW_LINKDIR ||
		    lstat(hb->vb_src, &sb) == -1)
			continue;
		if (S_ISDIR(sb.st_mode)) {
			if (bundle_mkdir(dfd, hb->vb_dst + 1, err, errlen) == -1)
				return (-1);
			continue;
		}
		if (!S_ISLNK(sb.st_mode) || (n = readlink(hb->vb_src, target,
		    sizeof(target) - 1)) == -1)
			continue;
		target[n] = '\0';
		if (symlinkat(target, dfd, hb->vb_dst + 1) == -1) {
			snprintf(err, errlen, "bundle: symlink rootfs%s: %s",
			    hb->vb_dst, strerror(errno));
			return (-1);
		}
	}
	return (0);
}

/*
 * Make the bundle in dir, which must not exist: dir 0700, rootfs 0755,
 * config.json 0600, all root's.  On failure what was made is removed.
 */
/*
 * Every source config c binds read-only, in the order it binds them.
 * Fails if one is not absolute, is too long, or there are more than
 * RUNSC_RO_MAX: the child could not make them all read-only.
 */
int
runsc_bundle_ro_binds(json_t *c, struct runsc_ro_binds *ro, char *err,
    size_t errlen)
{
	json_t		*m, *o;
	const char	*src;
	size_t		 i, j;
	int		 isro;

	ro->rr_n = 0;
	json_array_foreach(json_object_get(c, "mounts"), i, m) {
		if ((src = json_string_value(json_object_get(m, "type"))) ==
		    NULL || strcmp(src, "bind") != 0)
			continue;
		isro = 0;
		json_array_foreach(json_object_get(m, "options"), j, o)
			if (json_is_string(o) &&
			    strcmp(json_string_value(o), "ro") == 0)
				isro = 1;
		if (!isro)
			continue;
		src = json_string_value(json_object_get(m, "source"));
		if (src == NULL || src[0] != '/' || ro->rr_n == RUNSC_RO_MAX ||
		    strlcpy(ro->rr_path[ro->rr_n], src,
		    sizeof(ro->rr_path[0])) >= sizeof(ro->rr_path[0])) {
			snprintf(err, errlen, "bundle: read-only bind %zu "
			    "cannot be made read-only", i);
			return (-1);
		}
		ro->rr_n++;
	}
	return (0);
}

int
runsc_bundle_write(const char *dir, const struct runsc_bundle_spec *s,
    struct runsc_ro_binds *ro, char *err, size_t errlen)
{
	char		 path[PATH_MAX];
	json_t		*c;
	int		 dfd = -1, rfd = -1, fd = -1;

	if ((c = runsc_bundle_config(s, err, errlen)) == NULL)
		return (-1);
	if (ro != NULL && runsc_bundle_ro_binds(c, ro, err, errlen) == -1) {
		json_decref(c);
		return (-1);
	}
	if (mkdir(dir, 0700) == -1) {
		snprintf(err, errlen, "bundle: mkdir %s: %s", dir,
		    strerror(errno));
		json_decref(c);
		return (-1);
	}
	if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC |
	    O_NOFOLLOW)) == -1 || mkdirat(dfd, "rootfs", 0755) == -1 ||
	    (rfd = openat(dfd, "rootfs", O_RDONLY | O_DIRECTORY | O_CLOEXEC |
	    O_NOFOLLOW)) == -1) {
		snprintf(err, errlen, "bundle: %s/rootfs: %s", dir,
		    strerror(errno));
		goto fail;
	}
	if (bundle_rootfs(rfd, s, err, errlen) == -1)
		goto fail;
	if ((fd = openat(dfd, "config.json", O_WRONLY | O_CREAT | O_EXCL |
	    O_CLOEXEC | O_NOFOLLOW, 0600)) == -1 ||
	    json_dumpfd(c, fd, JSON_COMPACT) == -1 || close(fd) == -1) {
		fd = -1;
		snprintf(err, errlen, "bundle: %s/config.json: %s", dir,
		    strerror(errno));
		goto fail;
	}
	(void)close(rfd);
	(void)close(dfd);
	json_decref(c);
	return (0);
 fail:
	if (fd != -1)
		(void)close(fd);
	if (rfd != -1)
		(void)close(rfd);
	if (dfd != -1)
		(void)close(dfd);
	json_decref(c);
	snprintf(path, sizeof(path), "%s", dir);
	(void)runsc_bundle_remove(path);
	return (-1);
}

/* Remove a tree this file made (no mount is ever on it), fd-relative. */
static int
bundle_rm_at(int dfd, const char *name, int depth)
{
	struct dirent	*de;
	DIR		*d;
	int		 fd, rv = 0;

	if (unlinkat(dfd, name, 0) == 0 || errno == ENOENT)
		return (0);
	if ((errno != EISDIR && errno != EPERM) || depth > 8)
		return (-1);
	if ((fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC |
	    O_NOFOLLOW)) == -1)
		return (-1);
	if ((d = fdopendir(fd)) == NULL) {
		(void)close(fd);
		return (-1);
	}
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (bundle_rm_at(fd, de->d_name, depth + 1) == -1)
			rv = -1;
	}
	closedir(d);
	if (unlinkat(dfd, name, AT_REMOVEDIR) == -1 && errno != ENOENT)
		rv = -1;
	return (rv);
}

/* Remove a bundle: the whole of dir.  Returns -1 if some of it stays. */
int
runsc_bundle_remove(const char *dir)
{
	return (bundle_rm_at(AT_FDCWD, dir, 0));
}
