/*
 * The fencer's fences: boot requests from the broker turned into a
 * backend's boot (backend.h), the handshake with each fence's agent,
 * lifetimes, deaths, stops and listings.
 */
#include <sys/types.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <event.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fenced.h"
#include "imsg.h"
#include "log.h"
#include "msg.h"
#include "fencer.h"
#include "cg.h"
#include "fencer_home.h"
#include "fencer_snap.h"

struct fencelist	 fencer_fences = TAILQ_HEAD_INITIALIZER(fencer_fences);
static unsigned int	 fencer_nfences;
static char		 fencer_cgparent[3][PATH_MAX];
static const char	*cgparents[3];
/* Why fences get no cgroups, if they get none: L1.5 and L2 refused. */
static char		 cgerr[256];

static void	fencer_agent_dispatch(struct imsgev *, struct imsg *, void *);
static void	fencer_agent_closed(struct imsgev *, int, void *);
static void	fencer_timeout(int, short, void *);
static void	fencer_end(struct fence *, int, uint32_t);
static void	fencer_send(uint32_t, uint32_t, struct fence *, int);

void
fencer_init(const char *id)
{
	int		 i;

	if (fencer_bindir_path()[0] == '\0')
		fatal("%s: readlink /proc/self/exe", __func__);
	if (cg_daemon_init(id, fencer_cgparent, cgerr,
	    sizeof(cgerr)) == -1) {
		log_warnx("no cgroup limits for fences, L1.5 and L2 refused: "
		    "%s", cgerr);
		if (cgerr[0] == '\0')
			strlcpy(cgerr, "no usable cgroup hierarchy",
			    sizeof(cgerr));
		return;
	}
	cgerr[0] = '\0';
	for (i = 0; i < 3; i++)
		cgparents[i] = fencer_cgparent[i];
}

#ifndef FENCED_LIBEXEC_REL
#define FENCED_LIBEXEC_REL	"../lib/fenced"	/* GNUmakefile's */
#endif

/*
 * The host folder of fence-agent and fence-probe (docs/install.md):
 * an installed daemon's libexec folder, FENCED_LIBEXEC_REL from the
 * folder of its own program (../lib/fenced from /usr/sbin), if that
 * holds fence-agent; else the program's own folder, as in the build
 * tree (build/bin, build/hooks).  Canonical, for the mount tables the
 * probe compares with it.  "" if /proc/self/exe cannot be read.
 */
const char *
fencer_bindir_path(void)
{
	static char	 dir[PATH_MAX];
	char		 exe[PATH_MAX], lib[PATH_MAX], agent[PATH_MAX], *self;
	ssize_t		 n;

	if (dir[0] != '\0')
		return (dir);
	if ((n = readlink("/proc/self/exe", exe, sizeof(exe) - 1)) <= 0)
		return (dir);
	exe[n] = '\0';
	self = dirname(exe);
	if ((size_t)snprintf(lib, sizeof(lib), "%s/%s", self,
	    FENCED_LIBEXEC_REL) < sizeof(lib) &&
	    (size_t)snprintf(agent, sizeof(agent), "%s/fence-agent", lib) <
	    sizeof(agent) && access(agent, X_OK) == 0 &&
	    realpath(lib, dir) != NULL)
		return (dir);
	dir[0] = '\0';
	if (realpath(self, dir) == NULL)
		(void)strlcpy(dir, self, sizeof(dir));
	return (dir);
}

/* The fences' cgroup parent of a controller, or NULL: none. */
const char *
fencer_cg_parent(int ctrl)
{
	if (cgerr[0] != '\0' || ctrl < 0 || ctrl >= 3 ||
	    fencer_cgparent[ctrl][0] == '\0')
		return (NULL);
	return (fencer_cgparent[ctrl]);
}

/* A fence is named by its owner and its key. */
struct fence *
fencer_find(uid_t owner, const char *key)
{
	struct fence	*f;

	TAILQ_FOREACH(f, &fencer_fences, f_entry)
		if (f->f_info.f_owner == owner &&
		    strcmp(f->f_info.f_key, key) == 0)
			return (f);
	return (NULL);
}

static int
fencer_visible(const struct fence *f, const struct msg_fence_req *q)
{
	return (q->r_admin || f->f_info.f_owner == q->r_uid);
}

/*
 * The one fence a request names, if the asker may see it: the owner the
 * broker named, or with none the asker's own.  Checked here as well as
 * in the broker, so a confused broker cannot hand one user's fence to
 * another.
 */
struct fence *
fencer_lookup(const struct msg_fence_req *q)
{
	struct fence	*f;
	uid_t		 owner;

	if (q->r_key[0] == '\0')
		return (NULL);
	owner = q->r_owner == MSG_OWNER_NONE ? q->r_uid : q->r_owner;
	if ((f = fencer_find(owner, q->r_key)) == NULL || !fencer_visible(f, q))
		return (NULL);
	return (f);
}

/*
 * <state>/envs/<owner>/<key>: what the fencer keeps of a running fence
 * (its probe report).  With create, made (0700, root's) if missing.
 * Removed when the fence ends: only what must persist outlives a fence,
 * and the uid of a root-owned fence is kept in <state>/fence-uids.
 */
int
fencer_env_dir(const struct fence *f, int create, char *buf, size_t len)
{
	const char	*state = fencer_self.ps_conf.c_state;

	if ((size_t)snprintf(buf, len, "%s/envs/%u", state,
	    (unsigned)f->f_info.f_owner) >= len) {
		errno = ENAMETOOLONG;
		return (-1);
	}
	if (create && mkdir(buf, 0700) == -1 && errno != EEXIST)
		return (-1);
	if (strlcat(buf, "/", len) >= len ||
	    strlcat(buf, f->f_info.f_key, len) >= len) {
		errno = ENAMETOOLONG;
		return (-1);
	}
	if (create && mkdir(buf, 0700) == -1 && errno != EEXIST)
		return (-1);
	return (0);
}

static void
fencer_env_remove(const struct fence *f)
{
	char	 dir[PATH_MAX], *slash;

	if (fencer_env_dir(f, 0, dir, sizeof(dir)) == -1)
		return;
	if (state_env_remove(dir) == -1)
		log_warn("%s: rmdir %s", __func__, dir);
	/* The owner's folder goes with its last fence. */
	if ((slash = strrchr(dir, '/')) != NULL) {
		*slash = '\0';
		if (rmdir(dir) == -1 && errno != ENOENT && errno != ENOTEMPTY)
			log_warn("%s: rmdir %s", __func__, dir);
	}
}

void
fencer_send_error(uint32_t type, uint32_t reqid, const char *code,
    const char *fmt, ...)
{
	va_list		 ap;
	void		*buf;
	size_t		 len;
	int		 rv;

	va_start(ap, fmt);
	rv = msg_error_vformat(&buf, &len, code, fmt, ap);
	va_end(ap);
	if (rv == -1)
		fatal("%s: encode", __func__);
	log_debug("%s: request %u: %s", __func__, reqid, code);
	if (proc_compose(&fencer_self, PROC_BROKER, type, reqid, -1, buf,
	    len) == -1)
		log_warn("%s: to broker", __func__);
	free(buf);
}

/* The home image of the boot under way: its loop device is held open
 * until the backend's boot returns, then belongs to the fence's mount. */
static struct fencer_home_img fencer_boot_img = { .hi_loopfd = -1 };

static void
fencer_boot_img_close(void)
{
	if (fencer_boot_img.hi_loopfd != -1)
		(void)close(fencer_boot_img.hi_loopfd);
	memset(&fencer_boot_img, 0, sizeof(fencer_boot_img));
	fencer_boot_img.hi_loopfd = -1;
}

/* A fence that is not, or no longer, booted: its memory wiped. */
static void
fencer_free(struct fence *f)
{
	if (f->f_home_tree != -1)
		(void)close(f->f_home_tree);
	fencer_denials_forget(f);
	if (f->f_be != NULL) {
		explicit_bzero(f->f_be, f->f_backend->fb_state_size);
		free(f->f_be);
	}
	explicit_bzero(f, sizeof(*f));
	free(f);
}

static uint32_t
elapsed_us(const struct timespec *t0)
{
	struct timespec	 now;
	int64_t		 us;

	clock_gettime(CLOCK_MONOTONIC, &now);
	us = (now.tv_sec - t0->tv_sec) * 1000000 +
	    (now.tv_nsec - t0->tv_nsec) / 1000;
	return (us < 0 ? 0 : us > UINT32_MAX ? UINT32_MAX : (uint32_t)us);
}

/*
 * A boot's first step: may it be booted at all?  Not a key running
 * already, not beyond the fencer's count, an egress list only where it
 * can be enforced, limits within the configuration (fencer_limits.c), a
 * backend that can boot, cgroups where the tier needs them, an owner
 * with a passwd entry.  Fills in *bep, *limits, *lifetime and returns
 * the owner's entry, or NULL once the broker has the error.
 */
static struct passwd *
fencer_admit(uint32_t reqid, const struct msg_boot *b,
    const struct fencer_backend **bep, struct fence_limits *limits,
    uint32_t *lifetime)
{
	const struct fenced_config *c = &fencer_self.ps_conf;
	const struct fencer_backend *be;
	struct passwd	*pw;
	int		 backend = b->b_backend ? b->b_backend : c->c_backend;
	int		 tier = b->b_tier ? b->b_tier : c->c_tier;
	const char	*code;
	char		 why[MSG_ERROR_TEXT_MAX];

	if (fencer_find(b->b_owner, b->b_key) != NULL) {
		fencer_send_error(IMSG_FENCE_FAILED, reqid, "exists",
		    "fence %s is already running", b->b_key);
		return (NULL);
	}
	if (fencer_nfences >= FENCER_MAX_FENCES) {
		fencer_send_error(IMSG_FENCE_FAILED, reqid, "too-many-fences",
		    "at most %d fences", FENCER_MAX_FENCES);
		return (NULL);
	}
	/* An allowlist is L2's, through the proxy port of the agent. */
	if (b->b_negress > 0 && tier != TIER_L2) {
		fencer_send_error(IMSG_FENCE_FAILED, reqid, "egress-needs-l2",
		    "an egress list is for tier L2 alone, not %s: L1 and "
		    "L1.5 fences have the host's network already",
		    tier_name(tier));
		return (NULL);
	}
	/* Only a backend with the agent's proxy port enforces a list. */
	be = fencer_backend(backend);
	if (b->b_negress > 0 && (be == NULL || !be->fb_probe.pt_egress)) {
		fencer_send_error(IMSG_FENCE_FAILED, reqid,
		    "egress-unsupported", "an egress list needs the native "
		    "backend: the %s backend has no proxy port yet",
		    backend_name(backend));
		return (NULL);
	}
	/* gVisor inside the guest: a vm fence's alone (docs/vm.md). */
	if (b->b_inner == INNER_RUNSC && (be == NULL || !be->fb_inner)) {
		fencer_send_error(IMSG_FENCE_FAILED, reqid, "inner-needs-vm",
		    "inner runsc is the vm backend's inner boundary; backend "
		    "%s has none", backend_name(backend));
		return (NULL);
	}
	if (fencer_limits_admit(reqid, b, backend, limits, lifetime) == -1)
		return (NULL);
	if ((code = fencer_boot_refusal(tier, backend, why,
	    sizeof(why))) != NULL) {
		fencer_send_error(IMSG_FENCE_FAILED, reqid, code, "%s", why);
		return (NULL);
	}
	if ((pw = getpwuid(b->b_owner)) == NULL) {
		fencer_send_error(IMSG_FENCE_FAILED, reqid, "unknown-user",
		    "uid %u has no passwd entry", (unsigned)b->b_owner);
		return (NULL);
	}
	*bep = be;
	return (pw);
}

/* The fence a boot admitted, before its uid and home: NULL, out of memory. */
static struct fence *
fencer_new(uint32_t reqid, const struct msg_boot *b,
    const struct fencer_backend *be, const char *user,
    const struct fence_limits *limits, uint32_t lifetime)
{
	const struct fenced_config *c = &fencer_self.ps_conf;
	struct fence	*f;
	uint32_t	 i;

	if ((f = calloc(1, sizeof(*f))) == NULL ||
	    (f->f_be = calloc(1, be->fb_state_size)) == NULL) {
		free(f);
		return (NULL);
	}
	f->f_backend = be;
	f->f_canary = -1;
	f->f_home_tree = -1;
	f->f_notify_fd = -1;
	strlcpy(f->f_info.f_key, b->b_key, sizeof(f->f_info.f_key));
	strlcpy(f->f_user, user, sizeof(f->f_user));
	f->f_info.f_owner = b->b_owner;
	/*
	 * The owner's name as the host's user database says it now, kept
	 * for the fence's life (docs/http.md, "ownerName"); the broker, in
	 * its chroot, cannot read that database.  One that is not a plain
	 * name of at most MSG_OWNER_NAME_MAX bytes is not kept.
	 */
	if (msg_owner_name_valid(user, 0))
		strlcpy(f->f_info.f_owner_name, user,
		    sizeof(f->f_info.f_owner_name));
	snprintf(f->f_cgname, sizeof(f->f_cgname), "%u.%s",
	    (unsigned)b->b_owner, b->b_key);
	f->f_info.f_tier = b->b_tier ? b->b_tier : c->c_tier;
	f->f_info.f_backend = be->fb_id;
	f->f_info.f_state = FENCE_BOOTING;
	f->f_reqid = reqid;
	f->f_info.f_limits = *limits;
	f->f_info.f_deadline = lifetime;
	f->f_cold = b->b_cold || b->b_negress > 0;
	/* The configured default is a vm fence's only: never refused. */
	if (be->fb_inner)
		f->f_info.f_inner = b->b_inner == INNER_RUNSC ||
		    (b->b_inner == INNER_CONFIGURED && c->c_vm_inner);
	/* The boot's egress list (canonical); none: no proxy. */
	for (i = 0; i < b->b_negress && i < EGRESS_LIST_MAX; i++)
		strlcpy(f->f_info.f_egress[i], b->b_egress[i],
		    sizeof(f->f_info.f_egress[i]));
	f->f_info.f_negress = i;
	return (f);
}

/*
 * A boot's home step, once f has its uid: with `limit home' the image in
 * the state dir (fencer_boot_img, attached), else <homes>/<key> made or
 * checked (fencer_home.c).  The details name paths the user may not see:
 * they go to the log only.  -1 once the broker has the error.
 */
static int
fencer_home_make(struct fence *f, const char *homes, uint32_t reqid)
{
	const struct fenced_config *c = &fencer_self.ps_conf;
	char		 err[BACKEND_ERR_MAX];

	if (c->c_home_limit != 0) {
		if (fencer_home_image(c->c_state, f->f_info.f_owner,
		    f->f_info.f_key, c->c_home_limit, f->f_info.f_uid,
		    f->f_gid, &fencer_boot_img, err, sizeof(err)) == -1) {
			log_warnx("fence %s of uid %u: home image refused: %s",
			    f->f_info.f_key, (unsigned)f->f_info.f_owner, err);
			fencer_send_error(IMSG_FENCE_FAILED, reqid,
			    "home-refused", "cannot use home for %s",
			    f->f_info.f_key);
			return (-1);
		}
		strlcpy(f->f_info.f_home, fencer_boot_img.hi_path,
		    sizeof(f->f_info.f_home));
		f->f_info.f_home_limit = fencer_boot_img.hi_size;
		f->f_info.f_home_used = fencer_boot_img.hi_used;
		return (0);
	}
	if (fencer_home_prepare(homes, f->f_info.f_key, f->f_info.f_uid,
	    f->f_gid, f->f_info.f_home, sizeof(f->f_info.f_home), err,
	    sizeof(err)) == -1) {
		log_warnx("fence %s of uid %u: home refused: %s",
		    f->f_info.f_key, (unsigned)f->f_info.f_owner, err);
		fencer_send_error(IMSG_FENCE_FAILED, reqid, "home-refused",
		    "cannot use home for %s", f->f_info.f_key);
		return (-1);
	}
	return (0);
}

/*
 * Everything a boot needs before the backend builds the fence, in its
 * steps: admission (limits included), the fence, where its home is,
 * its uid, its home made; the spec is fencer_boot_args().  Errors go to
 * the broker.
 */
static struct fence *
fencer_boot_prepare(uint32_t reqid, const struct msg_boot *b)
{
	const struct fencer_backend *be;
	struct fence_limits limits;
	struct passwd	*pw;
	struct fence	*f;
	char		 homes[PATH_MAX], home[PATH_MAX], upper[PATH_MAX];
	char		 err[MSG_ERROR_TEXT_MAX];
	uint32_t	 lifetime;
	int		 branch;

	if ((pw = fencer_admit(reqid, b, &be, &limits, &lifetime)) == NULL)
		return (NULL);
	if ((f = fencer_new(reqid, b, be, pw->pw_name, &limits,
	    lifetime)) == NULL) {
		fencer_send_error(IMSG_FENCE_FAILED, reqid, "internal",
		    "out of memory");
		return (NULL);
	}
	if (fencer_home_path(&fencer_self.ps_conf, pw, b->b_owner, b->b_key,
	    homes, sizeof(homes), home, sizeof(home), err, sizeof(err)) == -1) {
		fencer_send_error(IMSG_FENCE_FAILED, reqid, "home-refused",
		    "%s", err);
		goto fail;
	}
	/*
	 * A branch's home is an overlay on a snapshot (fencer_snap.c): its
	 * uid's record names the upper layer, what holds the uid's files.
	 */
	branch = b->b_from_key[0] != '\0' ||
	    fencer_branch_is(b->b_owner, b->b_key);
	if (branch && fencer_branch_upper(b->b_owner, b->b_key, upper,
	    sizeof(upper)) == -1) {
		fencer_send_error(IMSG_FENCE_FAILED, reqid, "branch-failed",
		    "no snapshot store for the branch %s", b->b_key);
		goto fail;
	}
	if (fencer_uid_assign(f, pw->pw_gid, branch ? upper : home,
	    reqid) == -1)
		goto fail;
	if (branch) {
		if (fencer_branch_home(f, b, home, reqid) == -1)
			goto fail;
	} else if (fencer_home_make(f, homes, reqid) == -1)
		goto fail;
	return (f);
 fail:
	fencer_free(f);
	return (NULL);
}

/*
 * Why a boot of this tier and backend is refused before anything of it
 * is made: the backend is not in this build, or what its start found
 * missing (fb_unavailable), or the tier's limits, which this machine
 * cannot set.  Returns the error's code with the message in why, or
 * NULL: the boot may go on.  A boot's admission and the host doctor
 * (fencer_doctor.c) both ask here, so what the doctor predicts is what
 * the boot says.
 */
const char *
fencer_boot_refusal(int tier, int backend, char *why, size_t len)
{
	const struct fencer_backend *be = fencer_backend(backend);
	const char	*miss;

	miss = be == NULL ? fencer_backend_missing(backend) :
	    be->fb_unavailable != NULL ? be->fb_unavailable() : NULL;
	if (miss != NULL) {
		snprintf(why, len, "backend %s is not available: %s; nothing "
		    "falls back to another", backend_name(backend), miss);
		return ("backend-unavailable");
	}
	/* The limits are part of L1.5 and L2: never a fence without. */
	if (cgerr[0] != '\0' && tier >= TIER_L15) {
		snprintf(why, len, "%s needs memory, pids and cpu limits, "
		    "which this machine cannot set: %s", tier_name(tier),
		    cgerr);
		return ("no-cgroups");
	}
	return (NULL);
}

/*
 * A backend whose every fence needs cgroups (runsc's sandbox, vm's
 * QEMU jail), asked by its fb_unavailable: why it can boot none here,
 * or NULL.
 */
const char *
fencer_cgroups_refusal(void)
{
	static char	 why[BACKEND_ERR_MAX];

	if (cgerr[0] == '\0')
		return (NULL);
	snprintf(why, sizeof(why), "it needs memory, pids and cpu cgroups, "
	    "which this machine cannot give a fence: %s", cgerr);
	return (why);
}

/* Why fences can have no cgroup limits here, or NULL. */
const char *
fencer_cgroups_missing(void)
{
	return (cgerr[0] != '\0' ? cgerr : NULL);
}

/* What the backend builds for f: the boot's part of the spec. */
void
fencer_boot_args(const struct fence *f, struct backend_boot *bb)
{
	static char *argv[] = { "fence-agent", NULL };

	memset(bb, 0, sizeof(*bb));
	bb->bb_home_dev = fencer_boot_img.hi_loopfd != -1 ?
	    fencer_boot_img.hi_dev : "";
	bb->bb_home_tree = f != NULL ? f->f_home_tree : -1;
	bb->bb_bindir = fencer_bindir_path();
	bb->bb_init = "fence-agent";
	bb->bb_argv = argv;
	memcpy(bb->bb_cgroup_parent, cgparents, sizeof(cgparents));
	bb->bb_cgroup_name = f != NULL ? f->f_cgname : NULL;
#ifdef FENCED_TEST_HOOKS
	/*
	 * Test builds only: a fence that is called what it asked for but
	 * lacks its seccomp filter, to show the probe catches it.
	 */
	bb->bb_test_noseccomp = getenv("FENCED_TEST_NOSECCOMP") != NULL;
#endif
}

/* The fence runs: what its start measured goes into its state. */
static void
fencer_boot_started(struct fence *f)
{
	f->f_started = 1;
	f->f_info.f_started = time(NULL);
	f->f_info.f_deadline += f->f_info.f_started;
	TAILQ_INSERT_TAIL(&fencer_fences, f, f_entry);
	fencer_nfences++;
}

/* How long a boot may wait for the agent's READY. */
static int
fencer_agent_wait(const struct fence *f)
{
	return (f->f_backend->fb_agent_wait > 0 ?
	    f->f_backend->fb_agent_wait : FENCER_AGENT_WAIT_SEC);
}

/* The agent's first message: who it is and the bounds of an exec. */
static void
fencer_boot_hello(struct fence *f)
{
	const struct fenced_config *c = &fencer_self.ps_conf;
	struct msg_hello hello;
	void		*buf;
	size_t		 len;

	memset(&hello, 0, sizeof(hello));
	memcpy(hello.h_bearer, f->f_info.f_bearer, sizeof(hello.h_bearer));
	strlcpy(hello.h_key, f->f_info.f_key, sizeof(hello.h_key));
	strlcpy(hello.h_user, f->f_user, sizeof(hello.h_user));
	if (f->f_backend->fb_host_view)
		strlcpy(hello.h_home, f->f_info.f_home, sizeof(hello.h_home));
	else
		snprintf(hello.h_home, sizeof(hello.h_home), "/home/%s",
		    f->f_user);
	hello.h_timeout_def = c->c_exec_timeout;
	hello.h_timeout_max = c->c_exec_timeout_max;
	hello.h_output_def = c->c_exec_output;
	hello.h_output_max = c->c_exec_output_max;
	hello.h_egress = f->f_info.f_negress > 0;
	hello.h_fdpass = f->f_backend->fb_fdpass;
	if (msg_hello_encode(&hello, &buf, &len) == -1)
		fatal("%s: encode hello", __func__);
	explicit_bzero(&hello, sizeof(hello));
	if (imsgev_compose(f->f_agent, IMSG_AGENT_HELLO, 0, 0, -1, buf,
	    len) == -1)
		fatal("%s: hello", __func__);
	explicit_bzero(buf, len);
	free(buf);
}

/*
 * A boot whose turn came (fencer_queue.c; t0: its request arrived), in
 * its steps: fencer_boot_prepare() (owner, uid, home),
 * fencer_boot_args(), the backend's fb_boot() (the fence and the agent's
 * channel), fencer_boot_started(), the agent's channel and
 * fencer_boot_hello(); then it waits for the agent's IMSG_AGENT_READY
 * (fencer_agent_dispatch()) at most FENCER_AGENT_WAIT_SEC.
 */
void
fencer_boot_now(uint32_t reqid, const struct msg_boot *b,
    const struct timespec *t0)
{
	struct backend_boot bb;
	struct timeval	 tv = { 0, 0 };
	struct fence	*f;
	char		 err[BACKEND_ERR_MAX];
	int		 chan, r;

	if ((f = fencer_boot_prepare(reqid, b)) == NULL) {
		fencer_boot_img_close();
		return;
	}
	f->f_t0 = *t0;
	arc4random_buf(f->f_info.f_bearer, sizeof(f->f_info.f_bearer));

	fencer_boot_args(f, &bb);
	r = f->f_backend->fb_boot(f, &bb, &chan, err, sizeof(err));
	fencer_boot_img_close();
	if (r == -1) {
		fencer_send_error(IMSG_FENCE_FAILED, reqid, "boot-failed",
		    "%s", err);
		fencer_free(f);
		return;
	}
	fencer_boot_started(f);
	if (f->f_notify_fd == -1 && f->f_info.f_denials_note[0] == '\0' &&
	    f->f_backend->fb_denials_unobserved != NULL)
		strlcpy(f->f_info.f_denials_note,
		    f->f_backend->fb_denials_unobserved,
		    sizeof(f->f_info.f_denials_note));
	fencer_denials_watch(f);

	if ((f->f_agent = imsgev_new(fencer_self.ps_evbase, chan,
	    fencer_agent_dispatch, fencer_agent_closed, f)) == NULL) {
		close(chan);
		fencer_send_error(IMSG_FENCE_FAILED, reqid, "boot-failed",
		    "agent channel: %s", strerror(errno));
		fencer_end(f, STOP_CRASH, 0);
		return;
	}
	fencer_boot_hello(f);
	/* Its first probe made while the agent starts (fencer_probe.c). */
	fencer_probe_early(f);
	tv.tv_sec = fencer_agent_wait(f);
	evtimer_assign(&f->f_timer, fencer_self.ps_evbase, fencer_timeout, f);
	evtimer_add(&f->f_timer, &tv);
}

/* The agent said it is ready: hand its channel to the broker. */
static void
fencer_agent_dispatch(struct imsgev *iev, struct imsg *imsg, void *arg)
{
	struct fence	*f = arg;
	struct timeval	 tv;
	time_t		 now = time(NULL);
	int		 fd, sent;

	if (imsg->hdr.ih_type != IMSG_AGENT_READY ||
	    msg_empty_decode(imsg->data, imsg->len) == -1) {
		log_warnx("%s: fence %s: agent sent %s, stopping it",
		    __func__, f->f_info.f_key,
		    msg_type_name(imsg->hdr.ih_type));
		fencer_send_error(IMSG_FENCE_FAILED, f->f_reqid, "boot-failed",
		    "the agent of %s misbehaved", f->f_info.f_key);
		fencer_end(f, STOP_CRASH, 0);
		return;
	}
	f->f_info.f_timings.t_agent_us = elapsed_us(&f->f_t0);
	/* Its first probe goes now, from here (fencer_probe.c). */
	if ((sent = fencer_probe_first(f)) == -1) {
		fencer_send_error(IMSG_FENCE_FAILED, f->f_reqid, "boot-failed",
		    "the first probe of %s did not fit its agent's channel",
		    f->f_info.f_key);
		fencer_end(f, STOP_CRASH, 0);
		return;
	}
	if ((fd = dup(imsgbuf_fd(imsgev_buf(iev)))) == -1) {
		fencer_send_error(IMSG_FENCE_FAILED, f->f_reqid, "boot-failed",
		    "dup: %s", strerror(errno));
		fencer_end(f, STOP_CRASH, 0);
		return;
	}
	imsgev_free(iev);
	f->f_agent = NULL;
	f->f_info.f_state = FENCE_RUNNING;

	evtimer_del(&f->f_timer);
	tv.tv_sec = f->f_info.f_deadline > now ? f->f_info.f_deadline - now : 0;
	tv.tv_usec = 0;
	evtimer_add(&f->f_timer, &tv);

	log_info("fence %s booted: owner %u uid %u tier %s, %u us",
	    f->f_info.f_key, (unsigned)f->f_info.f_owner,
	    (unsigned)f->f_info.f_uid, tier_name(f->f_info.f_tier),
	    f->f_info.f_timings.t_agent_us);
	f->f_info.f_probe_sent = sent;
	fencer_send(IMSG_FENCE_BOOTED, f->f_reqid, f, fd);
	f->f_info.f_probe_sent = 0;
	fencer_denials_limits(f);
	f->f_reqid = 0;
	if (sent)
		fencer_probe_host(f);
	fencer_backends_warm_refill();
}

static void
fencer_agent_closed(struct imsgev *iev, int error, void *arg)
{
	struct fence	*f = arg;

	imsgev_free(iev);
	f->f_agent = NULL;
	fencer_send_error(IMSG_FENCE_FAILED, f->f_reqid, "boot-failed",
	    "the agent of %s went away before it was ready",
	    f->f_info.f_key);
	fencer_end(f, STOP_CRASH, 0);
}

static void
fencer_timeout(int fd, short event, void *arg)
{
	struct fence	*f = arg;

	if (f->f_info.f_state == FENCE_BOOTING) {
		fencer_send_error(IMSG_FENCE_FAILED, f->f_reqid, "boot-failed",
		    "the agent of %s was not ready in %d s", f->f_info.f_key,
		    fencer_agent_wait(f));
		fencer_end(f, STOP_CRASH, 0);
		return;
	}
	log_info("fence %s: lifetime over", f->f_info.f_key);
	fencer_end(f, STOP_DEADLINE, 0);
}

/* Send one fence's state; the bearer only with BOOTED. */
static void
fencer_send(uint32_t type, uint32_t reqid, struct fence *f, int fd)
{
	struct msg_fence info = f->f_info;
	struct stat	 sb;
	void		*buf;
	size_t		 len;

	/* What the home image takes on the host now. */
	if (info.f_home_limit != 0 && stat(info.f_home, &sb) == 0)
		info.f_home_used = (uint64_t)sb.st_blocks * 512;
	if (type != IMSG_FENCE_BOOTED)
		explicit_bzero(info.f_bearer, sizeof(info.f_bearer));
	if (msg_fence_encode(&info, &buf, &len) == -1)
		fatal("%s: encode", __func__);
	explicit_bzero(&info, sizeof(info));
	if (proc_compose(&fencer_self, PROC_BROKER, type, reqid, fd, buf,
	    len) == -1)
		log_warn("%s: to broker", __func__);
	explicit_bzero(buf, len);
	free(buf);
}

/*
 * Stop a fence and forget it: every process killed, cgroups removed,
 * the home kept.  The broker hears STOPPED unless the fence never got
 * to running (then it heard FAILED).
 */
static void
fencer_end(struct fence *f, int reason, uint32_t reqid)
{
	int	 was_running = f->f_info.f_state == FENCE_RUNNING, oom = 0;
	int	 was_booting = f->f_info.f_state == FENCE_BOOTING;

	evtimer_del(&f->f_timer);
	fencer_probe_end(f, 1);
	if (f->f_agent != NULL) {
		imsgev_free(f->f_agent);
		f->f_agent = NULL;
	}
	fencer_denials_forget(f);
	if (f->f_started) {
		if (f->f_backend->fb_stop(f, &oom) == -1)
			log_warnx("%s: fence %s: not fully cleaned up",
			    __func__, f->f_info.f_key);
		if (reason == STOP_CRASH && oom)
			reason = STOP_OOM;
		f->f_started = 0;
	}
	fencer_env_remove(f);
	f->f_info.f_state = FENCE_STOPPED;
	f->f_info.f_reason = reason;
	log_info("fence %s stopped (%s)", f->f_info.f_key,
	    stop_reason_name(reason) != NULL ? stop_reason_name(reason) :
	    "unknown");
	if (was_running || reqid != 0)
		fencer_send(IMSG_FENCE_STOPPED, reqid, f, -1);
	TAILQ_REMOVE(&fencer_fences, f, f_entry);
	fencer_nfences--;
	fencer_free(f);
	if (was_booting)
		fencer_backends_warm_refill();
}

void
fencer_stop_req(uint32_t reqid, const struct msg_fence_req *q)
{
	struct fence	*f, *next;
	int		 n = 0;

	if (q->r_key[0] != '\0') {
		/*
		 * Boots of the key still queued never start; the stop is
		 * answered by the fence's end, or else by theirs.
		 */
		f = fencer_lookup(q);
		if (fencer_queue_stop(f == NULL ? reqid : 0, q) > 0 &&
		    f == NULL)
			return;
		if (f == NULL) {
			fencer_send_error(IMSG_FENCE_FAILED, reqid,
			    "not-found", "no fence %s", q->r_key);
			return;
		}
		if (f->f_info.f_state == FENCE_BOOTING)
			fencer_send_error(IMSG_FENCE_FAILED, f->f_reqid,
			    "boot-failed", "stopped while booting");
		fencer_end(f, STOP_REQUEST, reqid);
		return;
	}
	/* stop all: every fence the asker may see, then END. */
	n = fencer_queue_stop(reqid, q);
	TAILQ_FOREACH_SAFE(f, &fencer_fences, f_entry, next) {
		if (!fencer_visible(f, q))
			continue;
		if (f->f_info.f_state == FENCE_BOOTING)
			fencer_send_error(IMSG_FENCE_FAILED, f->f_reqid,
			    "boot-failed", "stopped while booting");
		fencer_end(f, STOP_REQUEST, reqid);
		n++;
	}
	if (proc_compose(&fencer_self, PROC_BROKER, IMSG_FENCE_END, reqid, -1,
	    NULL, 0) == -1)
		log_warn("%s: to broker", __func__);
	log_debug("%s: stopped %d", __func__, n);
}

/* How many boots are under way (before their agent is ready). */
int
fencer_booting(void)
{
	struct fence	*f;
	int		 n = 0;

	TAILQ_FOREACH(f, &fencer_fences, f_entry)
		if (f->f_info.f_state == FENCE_BOOTING)
			n++;
	return (n);
}

/* A fence's pid 1 died: the fence is over. */
void
fencer_reap(void)
{
	struct fence	*f;
	pid_t		 pid;
	int		 status;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		TAILQ_FOREACH(f, &fencer_fences, f_entry)
			if (f->f_started && f->f_info.f_pid == pid)
				break;
		if (f == NULL) {
			(void)fencer_backends_child(pid, status);
			continue;
		}
		f->f_backend->fb_reaped(f);	/* nothing left to wait for */
		if (f->f_info.f_state == FENCE_BOOTING)
			fencer_send_error(IMSG_FENCE_FAILED, f->f_reqid,
			    "boot-failed", "pid 1 of %s died during boot",
			    f->f_info.f_key);
		fencer_end(f, STOP_CRASH, 0);
	}
}

void
fencer_stop_all(void)
{
	struct fence	*f;

	fencer_queue_fini();
	fencer_backends_warm_fini();
	while ((f = TAILQ_FIRST(&fencer_fences)) != NULL)
		fencer_end(f, STOP_SHUTDOWN, 0);
	fencer_backends_fini();
	cg_daemon_fini(fencer_cgparent);
}
