/*
 * Boots in turn, and probes in turn.
 *
 * Boots in turn.  A boot holds the fencer's one event loop from its
 * admission until its pid 1 has executed the agent (pid 1 is cloned
 * with CLONE_VFORK: docs/fence.md), 1 to 2 ms on a quiet machine and
 * tens of ms on a loaded one.  Boots sent at once reach the fencer as
 * one read of the broker's channel; run as they were read, a burst of
 * N held the loop for all N before anything else was heard: the agents
 * of the first fences said READY to nobody (and past 10 s their boots
 * failed, the agent "not ready"), and no probe of any of them began
 * before the last boot of the burst had.
 *
 * So a boot request is queued as it arrives, and the queue is worked
 * one boot per turn of the event loop, behind a zero timeout: between
 * two boots the loop polls, and what the fences already booted have to
 * say (READY, their probes, their verdicts, stops) is heard first.
 * The queue is in arrival order and bounded by what the broker lets be
 * in flight (CONTROL_PENDING_ALL and the HTTP bounds); a stop names
 * queued boots as it names booting fences, which never start then.
 * The time a boot waited here is part of its request to agent ready.
 *
 * Probes in turn.  Every boot is probed as soon as its agent is ready
 * (the first probe made at the boot and sent by the fencer at READY
 * when one may begin then: fencer_probe_early(), fencer_probe_first()),
 * and the probe is a program run in the fence (its checks, some of them
 * in children) and the host's reading of its pid 1: several ms of cpu.
 * With no bound, a burst of N boots had N probes running at once, each
 * slowed N-fold, every first verdict (and every first answer, which
 * waits for it) came at the end of the burst, and probes ran into their
 * 10 s timeout.  So at most fencer_probes_max (2 per cpu, 2 to 64) run
 * at once, from their sending (a first probe) or preparation to their
 * end (verdict, failure, or the fence's end); the others wait here in
 * arrival order (a first probe then the broker's to ask for), and are
 * prepared, or refused as before (a fence gone, a probe running), as
 * their turn comes.  A probe's own timeout starts when it is sent into
 * the fence, after its wait.
 */
#include <sys/types.h>
#include <sys/queue.h>

#include <event.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fenced.h"
#include "imsg.h"
#include "log.h"
#include "msg.h"
#include "fencer.h"

/*
 * The broker bounds what it has in flight (CONTROL_PENDING_ALL and the
 * HTTP bounds, all under this), and a fence has one probe at a time;
 * the fencer bounds both queues itself all the same, as it bounds
 * everything a peer sends.
 */
#define FENCER_QUEUE_MAX	8192

struct fencer_queued {
	TAILQ_ENTRY(fencer_queued) q_entry;
	uint32_t		 q_reqid;
	struct timespec		 q_t0;		/* the request arrived */
	struct msg_boot		 q_boot;
};

static TAILQ_HEAD(, fencer_queued) fencer_queue =
    TAILQ_HEAD_INITIALIZER(fencer_queue);
static struct event	 fencer_queue_ev;
static int		 fencer_queue_init;
static unsigned int	 fencer_queue_len;	/* in fencer_queue */

struct fencer_probeq {
	TAILQ_ENTRY(fencer_probeq) pq_entry;
	uint32_t		 pq_reqid;
	struct msg_fence_req	 pq_req;
};

static TAILQ_HEAD(, fencer_probeq) fencer_probeq =
    TAILQ_HEAD_INITIALIZER(fencer_probeq);
static struct event	 fencer_probeq_ev;
static int		 fencer_probeq_init;
static unsigned int	 fencer_probeq_len;	/* in fencer_probeq */
static unsigned int	 fencer_probing;	/* prepared, not ended */
static unsigned int	 fencer_probes_max;

static void	fencer_queue_next(int, short, void *);
static void	fencer_probe_next(int, short, void *);
static unsigned int fencer_probes_bound(void);

static void
fencer_queue_kick(void)
{
	struct timeval	 tv = { 0, 0 };

	if (!fencer_queue_init) {
		evtimer_assign(&fencer_queue_ev, fencer_self.ps_evbase,
		    fencer_queue_next, NULL);
		fencer_queue_init = 1;
	}
	if (!evtimer_pending(&fencer_queue_ev, NULL))
		evtimer_add(&fencer_queue_ev, &tv);
}

/* A boot request from the broker: in the queue, its turn to come. */
void
fencer_boot(uint32_t reqid, const struct msg_boot *b)
{
	struct fencer_queued *q;

	if (fencer_queue_len >= FENCER_QUEUE_MAX) {
		fencer_send_error(IMSG_FENCE_FAILED, reqid, "busy",
		    "too many boots waiting in the fencer");
		return;
	}
	if ((q = calloc(1, sizeof(*q))) == NULL) {
		fencer_send_error(IMSG_FENCE_FAILED, reqid, "internal",
		    "out of memory");
		return;
	}
	q->q_reqid = reqid;
	clock_gettime(CLOCK_MONOTONIC, &q->q_t0);
	q->q_boot = *b;
	TAILQ_INSERT_TAIL(&fencer_queue, q, q_entry);
	fencer_queue_len++;
	fencer_queue_kick();
}

static void
fencer_queue_free(struct fencer_queued *q)
{
	TAILQ_REMOVE(&fencer_queue, q, q_entry);
	fencer_queue_len--;
	explicit_bzero(q, sizeof(*q));
	free(q);
}

/* The first boot of the queue, then the loop polls before the next. */
static void
fencer_queue_next(int fd, short event, void *arg)
{
	struct fencer_queued *q;

	if ((q = TAILQ_FIRST(&fencer_queue)) == NULL)
		return;
	TAILQ_REMOVE(&fencer_queue, q, q_entry);
	fencer_queue_len--;
	if (!TAILQ_EMPTY(&fencer_queue))
		fencer_queue_kick();
	fencer_boot_now(q->q_reqid, &q->q_boot, &q->q_t0);
	explicit_bzero(q, sizeof(*q));
	free(q);
}

/*
 * A stop names queued boots too (key "": every one the asker may see):
 * each fails as a fence stopped while booting does, and they never
 * start.  reqid (0: none) hears of each as of a fence stopped; for a
 * key, of the first alone (a stop of one key is answered once).  How
 * many were named.
 */
int
fencer_queue_stop(uint32_t reqid, const struct msg_fence_req *r)
{
	struct fencer_queued *q, *next;
	struct msg_fence info;
	uid_t		 owner;
	void		*buf;
	size_t		 len;
	int		 n = 0;

	owner = r->r_owner == MSG_OWNER_NONE ? r->r_uid : r->r_owner;
	TAILQ_FOREACH_SAFE(q, &fencer_queue, q_entry, next) {
		if (!r->r_admin && q->q_boot.b_owner != r->r_uid)
			continue;
		if (r->r_key[0] != '\0' && (q->q_boot.b_owner != owner ||
		    strcmp(q->q_boot.b_key, r->r_key) != 0))
			continue;
		fencer_send_error(IMSG_FENCE_FAILED, q->q_reqid, "boot-failed",
		    "stopped while booting");
		log_info("fence %s stopped before its boot began",
		    q->q_boot.b_key);
		if (reqid != 0) {
			memset(&info, 0, sizeof(info));
			strlcpy(info.f_key, q->q_boot.b_key,
			    sizeof(info.f_key));
			info.f_owner = q->q_boot.b_owner;
			info.f_tier = q->q_boot.b_tier ? q->q_boot.b_tier :
			    fencer_self.ps_conf.c_tier;
			info.f_backend = q->q_boot.b_backend ?
			    q->q_boot.b_backend : fencer_self.ps_conf.c_backend;
			info.f_state = FENCE_STOPPED;
			info.f_reason = STOP_REQUEST;
			if (msg_fence_encode(&info, &buf, &len) == -1)
				fatal("%s: encode", __func__);
			if (proc_compose(&fencer_self, PROC_BROKER,
			    IMSG_FENCE_STOPPED, reqid, -1, buf, len) == -1)
				log_warn("%s: to broker", __func__);
			free(buf);
			if (r->r_key[0] != '\0')
				reqid = 0;
		}
		fencer_queue_free(q);
		n++;
	}
	return (n);
}

/*
 * The daemon goes down: the queued boots and probes are dropped,
 * unanswered.
 */
void
fencer_queue_fini(void)
{
	struct fencer_queued *q;
	struct fencer_probeq *pq;

	while ((q = TAILQ_FIRST(&fencer_queue)) != NULL)
		fencer_queue_free(q);
	if (fencer_queue_init)
		evtimer_del(&fencer_queue_ev);
	while ((pq = TAILQ_FIRST(&fencer_probeq)) != NULL) {
		TAILQ_REMOVE(&fencer_probeq, pq, pq_entry);
		fencer_probeq_len--;
		free(pq);
	}
	if (fencer_probeq_init)
		evtimer_del(&fencer_probeq_ev);
}

/* How long both queues are, and how many probes run (the metrics). */
void
fencer_queue_depths(struct msg_usage *u)
{
	u->u_boots_queued = fencer_queue_len;
	u->u_probes_queued = fencer_probeq_len;
	u->u_probes_running = fencer_probing;
	u->u_probe_slots = fencer_probes_bound();
}

/* Probes in turn. */

/* 2 per cpu online, 2 to 64. */
static unsigned int
fencer_probes_bound(void)
{
	long	 n;

	if (fencer_probes_max == 0) {
		n = sysconf(_SC_NPROCESSORS_ONLN);
		n = n < 1 ? 2 : 2 * n;
		fencer_probes_max = n > 64 ? 64 : n < 2 ? 2 : (unsigned int)n;
	}
	return (fencer_probes_max);
}

static void
fencer_probe_kick(void)
{
	struct timeval	 tv = { 0, 0 };

	if (!fencer_probeq_init) {
		evtimer_assign(&fencer_probeq_ev, fencer_self.ps_evbase,
		    fencer_probe_next, NULL);
		fencer_probeq_init = 1;
	}
	if (!evtimer_pending(&fencer_probeq_ev, NULL))
		evtimer_add(&fencer_probeq_ev, &tv);
}

/* Prepare a probe now; counted if it began (the fence is being probed). */
static void
fencer_probe_begin(uint32_t reqid, const struct msg_fence_req *q)
{
	struct fence	*f;

	fencer_probe_prepare(reqid, q);
	if ((f = fencer_lookup(q)) != NULL && f->f_probe_reqid == reqid)
		fencer_probing++;
}

/*
 * Whether a probe may begin now, ahead of any request (a fence's
 * first: fencer_probe_early(), fencer_probe_first()); with take, it
 * begins, and is counted.
 */
int
fencer_probe_slot(int take)
{
	if (fencer_probing >= fencer_probes_bound() ||
	    !TAILQ_EMPTY(&fencer_probeq))
		return (0);
	if (take)
		fencer_probing++;
	return (1);
}

/*
 * IMSG_PROBE_PREPARE from the broker: the first probe of the fence,
 * already running and counted (fencer_probe_adopt()), or a probe now,
 * or in turn.
 */
void
fencer_probe_request(uint32_t reqid, const struct msg_fence_req *q)
{
	struct fencer_probeq *pq;

	if (fencer_probe_adopt(reqid, q))
		return;
	if (fencer_probing < fencer_probes_bound() &&
	    TAILQ_EMPTY(&fencer_probeq)) {
		fencer_probe_begin(reqid, q);
		return;
	}
	if (fencer_probeq_len >= FENCER_QUEUE_MAX) {
		fencer_send_error(IMSG_FENCE_FAILED, reqid, "probe-failed",
		    "cannot queue a probe of %s: too many waiting", q->r_key);
		return;
	}
	if ((pq = calloc(1, sizeof(*pq))) == NULL) {
		fencer_send_error(IMSG_FENCE_FAILED, reqid, "probe-failed",
		    "cannot queue a probe of %s: out of memory", q->r_key);
		return;
	}
	pq->pq_reqid = reqid;
	pq->pq_req = *q;
	TAILQ_INSERT_TAIL(&fencer_probeq, pq, pq_entry);
	fencer_probeq_len++;
}

/* A probe that began ended (fencer_probe_end()): the next one's turn. */
void
fencer_probe_ended(void)
{
	if (fencer_probing > 0)
		fencer_probing--;
	if (!TAILQ_EMPTY(&fencer_probeq))
		fencer_probe_kick();
}

static void
fencer_probe_next(int fd, short event, void *arg)
{
	struct fencer_probeq *pq;

	while (fencer_probing < fencer_probes_bound() &&
	    (pq = TAILQ_FIRST(&fencer_probeq)) != NULL) {
		TAILQ_REMOVE(&fencer_probeq, pq, pq_entry);
		fencer_probeq_len--;
		fencer_probe_begin(pq->pq_reqid, &pq->pq_req);
		free(pq);
	}
}
