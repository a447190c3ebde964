/*
 * The warm pool of native fences (docs/pool.md): `pool TIER N' keeps N
 * fences of TIER built ahead to the split point of their steps
 * (fence.c), where pid 1 executed the agent, which waits for a boot
 * (agent/agent_pool.c).  A native boot of that tier takes one
 * (native_boot() -> pool_take()), which binds only what is the boot's
 * own; the pool is refilled one fence at a time from the event loop,
 * never inside a request: a zero-timeout event after each take and at
 * start, a second's pause after a failure.
 *
 * A pool fence belongs to no user: it is not in fencer_fences, is
 * listed nowhere and counts against no one's limits.  Its cgroups are
 * "pool.<tier>-<n>" in the daemon's folder, which the sweeps of a
 * killed daemon's folder remove like any fence's (common/cg_daemon.c);
 * its pid 1 dies with the fencer (PR_SET_PDEATHSIG).
 */
#include <sys/types.h>

#include <errno.h>
#include <event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fenced.h"
#include "log.h"
#include "fencer.h"
#include "backend.h"
#include "fence.h"
#include "pool.h"

#define POOL_RETRY_MS		1000	/* after a failed build */
#define POOL_AFTER_BOOT_MS	20	/* after a boot is over */

enum pool_state {
	POOL_FREE = 0,
	POOL_BUILDING,		/* built to the split point, its agent
				   starting */
	POOL_READY		/* its agent waits for an assignment */
};

struct pool_slot {
	enum pool_state		 ps_state;
	struct fence_pooled	 ps_pp;
	struct event		 ps_ev;		/* its status socket */
	char			 ps_key[FENCE_KEY_SIZE];
	char			 ps_cgname[FENCER_CGNAME_SIZE];
};

static struct pool_slot	 pool_slots[3][POOL_MAX];
static struct msg_pool	 pool_stats;
static struct event	 pool_ev_refill;
static int		 pool_on;
static int		 pool_started;	/* pool_start() was called */
static unsigned long	 pool_seq;
static const char *const pool_tier_tag[3] = { "l1", "l15", "l2" };

static void	pool_refill(int, short, void *);

static void
pool_send_stats(void)
{
	void	*buf;
	size_t	 len;
	int	 t;

	for (t = 0; t < 3; t++)
		pool_stats.p_tier[t].pt_size =
		    fencer_self.ps_conf.c_pool[t] > POOL_MAX ? POOL_MAX :
		    fencer_self.ps_conf.c_pool[t];
	if (msg_pool_encode(&pool_stats, &buf, &len) == -1)
		fatal("%s: encode", __func__);
	if (proc_compose(&fencer_self, PROC_BROKER, IMSG_POOL_STATS, 0, -1,
	    buf, len) == -1)
		log_warn("%s: to broker", __func__);
	free(buf);
}

static void
pool_schedule(int ms)
{
	struct timeval	 tv = { ms / 1000, (ms % 1000) * 1000 };

	if (!pool_on)
		return;
	if (ms == 0 || !evtimer_pending(&pool_ev_refill, NULL))
		evtimer_add(&pool_ev_refill, &tv);
}

/* A slot's fence goes: killed, reaped, its cgroups removed. */
static void
pool_slot_drop(int t, struct pool_slot *ps)
{
	if (ps->ps_state == POOL_FREE)
		return;
	event_del(&ps->ps_ev);
	if (ps->ps_state == POOL_READY && pool_stats.p_tier[t].pt_ready > 0)
		pool_stats.p_tier[t].pt_ready--;
	fence_pool_drop(&ps->ps_pp);
	memset(&ps->ps_pp, 0, sizeof(ps->ps_pp));
	ps->ps_state = POOL_FREE;
}

static void
pool_failed(int t, struct pool_slot *ps, const char *why)
{
	log_warnx("pool %s: %s: %s", tier_name(TIER_L1 + t), ps->ps_key, why);
	pool_slot_drop(t, ps);
	pool_stats.p_tier[t].pt_failed++;
	pool_send_stats();
	pool_schedule(POOL_RETRY_MS);
}

/*
 * Its status socket: once, it waits at the split point.  Readable again
 * while it waits means it died (EOF) or wrote an error.
 */
static void
pool_status(int fd, short event, void *arg)
{
	struct pool_slot	*ps = arg;
	char			 err[FENCE_ERR_MAX];
	int			 t = ps->ps_pp.pp_tier - TIER_L1, r;

	if (ps->ps_state == POOL_READY) {
		pool_failed(t, ps, "pid 1 died while it waited");
		return;
	}
	if ((r = fence_pool_ready(&ps->ps_pp, err, sizeof(err))) == 0)
		return;
	if (r == -1) {
		pool_failed(t, ps, err);
		return;
	}
	ps->ps_state = POOL_READY;
	pool_stats.p_tier[t].pt_ready++;
	pool_stats.p_tier[t].pt_refilled++;
	log_debug("pool %s: %s ready: clone %u us, built in %u us",
	    tier_name(TIER_L1 + t), ps->ps_key, ps->ps_pp.pp_clone_us,
	    ps->ps_pp.pp_build_us);
	pool_send_stats();
	pool_schedule(0);
}

static void
pool_build(int t, struct pool_slot *ps)
{
	const struct fenced_config *c = &fencer_self.ps_conf;
	struct backend_boot	 bb;
	struct fence_spec	 spec;
	char			 err[FENCE_ERR_MAX];
	int			 i;

	pool_seq++;
	snprintf(ps->ps_key, sizeof(ps->ps_key), "pool-%s-%lu",
	    pool_tier_tag[t], pool_seq);
	snprintf(ps->ps_cgname, sizeof(ps->ps_cgname), "pool.%s-%lu",
	    pool_tier_tag[t], pool_seq);
	fencer_boot_args(NULL, &bb);
	memset(&spec, 0, sizeof(spec));
	strlcpy(spec.fs_key, ps->ps_key, sizeof(spec.fs_key));
	spec.fs_tier = TIER_L1 + t;
	spec.fs_limits = c->c_limits;
	spec.fs_bindir = bb.bb_bindir;
	spec.fs_init = bb.bb_init;
	spec.fs_init_argv = bb.bb_argv;
	spec.fs_chan = -1;
	for (i = 0; i < 3; i++)
		spec.fs_cgroup_parent[i] = bb.bb_cgroup_parent[i];
	spec.fs_cgroup_name = ps->ps_cgname;
	if (fence_pool_start(&spec, &ps->ps_pp, err, sizeof(err)) == -1) {
		/* fence_pool_start() left nothing behind. */
		log_warnx("pool %s: %s: %s", tier_name(TIER_L1 + t),
		    ps->ps_key, err);
		memset(&ps->ps_pp, 0, sizeof(ps->ps_pp));
		pool_stats.p_tier[t].pt_failed++;
		pool_send_stats();
		pool_schedule(POOL_RETRY_MS);
		return;
	}
	ps->ps_state = POOL_BUILDING;
	event_assign(&ps->ps_ev, fencer_self.ps_evbase, ps->ps_pp.pp_status,
	    EV_READ | EV_PERSIST, pool_status, ps);
	event_add(&ps->ps_ev, NULL);
}

/*
 * One step towards the configured sizes: one fence built, or one too
 * many dropped (a reload made a pool smaller).  Never two builds at
 * once: the next step comes when this one is ready or failed.
 */
static void
pool_refill(int fd, short event, void *arg)
{
	const struct fenced_config *c = &fencer_self.ps_conf;
	struct pool_slot	*ps;
	uint32_t		 n, want;
	int			 t, i, free_i;

	if (!pool_on)
		return;
	/*
	 * Not while a boot is under way: a build is a pid 1 walking its
	 * steps and an agent starting, both of which would take the CPU
	 * from that boot (measured: a pooled boot 40% slower than a cold
	 * one when the refill started at the take).  pool_kick() comes
	 * when the boot is over.
	 */
	if (fencer_booting() > 0)
		return;
	for (t = 0; t < 3; t++)
		for (i = 0; i < POOL_MAX; i++)
			if (pool_slots[t][i].ps_state == POOL_BUILDING)
				return;
	for (t = 0; t < 3; t++) {
		want = c->c_pool[t] > POOL_MAX ? POOL_MAX : c->c_pool[t];
		for (n = 0, free_i = -1, i = 0; i < POOL_MAX; i++) {
			ps = &pool_slots[t][i];
			if (ps->ps_state != POOL_FREE)
				n++;
			else if (free_i == -1)
				free_i = i;
		}
		if (n > want) {
			for (i = POOL_MAX - 1; i >= 0; i--)
				if (pool_slots[t][i].ps_state != POOL_FREE)
					break;
			pool_slot_drop(t, &pool_slots[t][i]);
			pool_send_stats();
			pool_schedule(0);
			return;
		}
		if (n < want && free_i != -1) {
			pool_build(t, &pool_slots[t][free_i]);
			return;
		}
	}
}

/*
 * A boot is over (its agent ready, or it failed): the pool may refill,
 * a moment later.  At once, the build would come before the boot's
 * answer left the fencer (libevent runs the zero timer and the write
 * in no set order; measured: 0.7 ms more from request to answer than
 * from request to agent ready) and compete with the probe the broker
 * asks for right after a boot.
 */
void
pool_kick(void)
{
	if (!pool_on)
		return;
	if (!evtimer_pending(&pool_ev_refill, NULL)) {
		struct timeval	 tv = { 0, POOL_AFTER_BOOT_MS * 1000 };

		evtimer_add(&pool_ev_refill, &tv);
	}
}

/* The fencer started: native fences can be built (cgroups and all). */
void
pool_start(void)
{
	const struct fenced_config *c = &fencer_self.ps_conf;
	const char	*why;
	int		 t, any = 0;

	pool_started = 1;
	for (t = 0; t < 3; t++)
		any |= c->c_pool[t] != 0;
	if (!any)
		return;
	if ((why = fencer_cgroups_missing()) != NULL) {
		log_warnx("no warm pool: pool fences need their cgroups: %s",
		    why);
		return;
	}
	evtimer_assign(&pool_ev_refill, fencer_self.ps_evbase, pool_refill,
	    NULL);
	pool_on = 1;
	pool_send_stats();
	pool_schedule(0);
}

/*
 * A reload, or the fencer gave up a capability (the vm backend's KVM
 * try failed): the sizes may have changed.  What is now too many goes
 * at once (the statistics never show more ready than configured), and
 * so does a fence built with a capability the fencer no longer has,
 * which no boot could take; pool_refill() grows a pool a fence at a
 * time; a pool that was off starts.
 */
void
pool_configured(void)
{
	const struct fenced_config *c = &fencer_self.ps_conf;
	uint32_t	 n, want;
	int		 t, i;

	if (!pool_started)
		return;		/* the first configuration: pool_start() */
	if (!pool_on) {
		pool_start();
		return;
	}
	for (t = 0; t < 3; t++) {
		want = c->c_pool[t] > POOL_MAX ? POOL_MAX : c->c_pool[t];
		for (n = 0, i = 0; i < POOL_MAX; i++) {
			if (pool_slots[t][i].ps_state == POOL_FREE)
				continue;
			if (++n > want ||
			    fence_pool_stale(&pool_slots[t][i].ps_pp))
				pool_slot_drop(t, &pool_slots[t][i]);
		}
	}
	pool_send_stats();
	pool_schedule(0);
}

/* The daemon stops: no pool fence outlives the fencer's own stop. */
void
pool_fini(void)
{
	int	 t, i;

	pool_started = 0;
	if (!pool_on)
		return;
	pool_on = 0;
	evtimer_del(&pool_ev_refill);
	for (t = 0; t < 3; t++)
		for (i = 0; i < POOL_MAX; i++)
			pool_slot_drop(t, &pool_slots[t][i]);
}

/* The fencer reaped pid: 1 if it was a pool fence's pid 1. */
int
pool_reaped(pid_t pid)
{
	struct pool_slot	*ps;
	int			 t, i;

	for (t = 0; t < 3; t++)
		for (i = 0; i < POOL_MAX; i++) {
			ps = &pool_slots[t][i];
			if (ps->ps_state == POOL_FREE ||
			    ps->ps_pp.pp_proc.fp_pid != pid)
				continue;
			ps->ps_pp.pp_proc.fp_pid = -1;	/* reaped already */
			pool_failed(t, ps, "pid 1 died");
			return (1);
		}
	return (0);
}

/*
 * A native boot of spec: 0 if it took a pool fence (proc is its fence),
 * 1 if it boots cold (no ready pool fence, or one that could not be
 * taken before anything of the boot's was handed over), -1 if the take
 * failed after that (err): the boot fails as a cold one would.
 */
int
pool_take(const struct fence_spec *spec, struct fence_proc *proc, char *err,
    size_t errlen)
{
	struct pool_slot	*ps = NULL;
	int			 t = spec->fs_tier - TIER_L1, i, r;

	if (!pool_on || t < 0 || t > 2)
		return (1);
	for (i = 0; i < POOL_MAX; i++)
		if (pool_slots[t][i].ps_state == POOL_READY) {
			ps = &pool_slots[t][i];
			break;
		}
	if (ps == NULL)
		return (1);
	event_del(&ps->ps_ev);
	r = fence_pool_take(&ps->ps_pp, spec, proc, err, errlen);
	if (r == 1 && ps->ps_pp.pp_proc.fp_pidfd != -1) {
		/* Not for this boot (what it asks is not pooled): kept. */
		event_add(&ps->ps_ev, NULL);
		return (1);
	}
	ps->ps_state = POOL_FREE;
	memset(&ps->ps_pp, 0, sizeof(ps->ps_pp));
	if (pool_stats.p_tier[t].pt_ready > 0)
		pool_stats.p_tier[t].pt_ready--;
	if (r == 0)
		pool_stats.p_tier[t].pt_taken++;
	else
		pool_stats.p_tier[t].pt_failed++;
	pool_send_stats();
	pool_schedule(0);
	return (r);
}
