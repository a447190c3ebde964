/*
 * The fence service's records (service.c says what the service is):
 * one struct bfence per running fence, as the fencer reported it, with
 * the channel to its agent and its bearer, and for a while the state of
 * fences that stopped; the one ownership rule (svc_may()) and the
 * listing, which answers from these records alone.
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/tree.h>

#include <errno.h>
#include <event.h>
#include <jansson.h>
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
#include "broker.h"
#include "svc.h"
#include "ticket.h"

/*
 * A stopped fence stays listed, state stopped with its reason, for
 * SVC_STOPPED_SECS, at most SVC_STOPPED_OWNER of one owner and
 * SVC_STOPPED_MAX in all; the oldest goes first, and a new boot of the
 * same owner and key replaces it.
 */
#define SVC_STOPPED_SECS	600
#define SVC_STOPPED_OWNER	64
#define SVC_STOPPED_MAX		1024

static struct bfence_list svc_fences = TAILQ_HEAD_INITIALIZER(svc_fences);
/* Stopped fences kept for their state, oldest first. */
static struct bfence_list svc_kept = TAILQ_HEAD_INITIALIZER(svc_kept);
static unsigned int	 svc_nfences;
static unsigned int	 svc_nkept;

/* Fences. */

static struct bfence *
bfence_in(struct bfence_list *list, uid_t owner, const char *key)
{
	struct bfence	*bf;

	TAILQ_FOREACH(bf, list, bf_entry)
		if (bf->bf_info.f_owner == owner &&
		    strcmp(bf->bf_info.f_key, key) == 0)
			return (bf);
	return (NULL);
}

/* A running fence. */
struct bfence *
bfence_find(uid_t owner, const char *key)
{
	return (bfence_in(&svc_fences, owner, key));
}

unsigned int
svc_running(void)
{
	return (svc_nfences);
}

/* The fence's state changed: what a front end made of it is stale. */
void
bfence_changed(struct bfence *bf)
{
	free(bf->bf_rendered);
	bf->bf_rendered = NULL;
	svc_watch_notify(bf);
}

static void
bfence_changed_cb(void *arg)
{
	bfence_changed(arg);
}

static void
bfence_free(struct bfence *bf)
{
	svc_egress_free(bf->bf_egress);
	svc_denials_free(bf);
	free(bf->bf_boundary);
	free(bf->bf_refused);
	free(bf->bf_rendered);
	explicit_bzero(bf, sizeof(*bf));
	free(bf);
}

/*
 * The one ownership rule: a user acts on and sees their own fences;
 * root and the admin group (w_admin) those of everyone.
 */
int
svc_may(const struct svc_who *w, uid_t owner)
{
	return (owner == w->w_uid || w->w_admin);
}

/* The owner a request names: none (a plain KEY) is the asker's own. */
uid_t
svc_owner(const struct svc_who *w, uid_t named)
{
	return (named == MSG_OWNER_NONE ? w->w_uid : named);
}

/*
 * The terminals of owner's fences (docs/interactive.md): as each agent
 * last counted them, and those being opened.
 */
unsigned int
svc_terms_of(uid_t owner)
{
	struct bfence	*bf;
	struct breq	*r;
	unsigned int	 n = 0;

	TAILQ_FOREACH(bf, &svc_fences, bf_entry) {
		if (bf->bf_info.f_owner != owner)
			continue;
		n += bf->bf_nterms;
		TAILQ_FOREACH(r, &bf->bf_reqs, r_fentry)
			if (r->r_type == IMSG_AGENT_TERM_OPEN)
				n++;
	}
	return (n);
}

/*
 * Owner's fence KEY if w may act on it; else "not-found" is said, as
 * for a fence that does not exist: whether another's exists is not
 * theirs to know.
 */
struct bfence *
svc_fence_for(const struct svc_who *w, uid_t named, const char *key,
    svc_cb cb, void *arg)
{
	struct bfence	*bf;
	uid_t		 owner = svc_owner(w, named);

	/* One being stopped for its `require' never was the user's. */
	if (svc_may(w, owner) && (bf = bfence_find(owner, key)) != NULL &&
	    !bf->bf_stopping)
		return (bf);
	if (owner == w->w_uid)
		svc_refuse(cb, arg, "not-found", "no %s %s", w->w_noun, key);
	else
		svc_refuse(cb, arg, "not-found", "no %s %u/%s", w->w_noun,
		    (unsigned)owner, key);
	return (NULL);
}

/*
 * Whether w may act on owner's (named's) running fence KEY, as
 * svc_fence_for() decides, without saying anything: for a front end
 * deciding what it will read of a request before it is whole (an HTTP
 * PUT's body, a control socket put's chunks).
 */
int
svc_fence_known(const struct svc_who *w, uid_t named, const char *key)
{
	struct bfence	*bf;
	uid_t		 owner = svc_owner(w, named);

	return (svc_may(w, owner) && (bf = bfence_find(owner, key)) != NULL &&
	    !bf->bf_stopping);
}

/*
 * The label of owner's (named's) running fence KEY, if w may act on
 * it: 0, else -1 as for no such fence.
 */
int
svc_fence_label(const struct svc_who *w, uid_t named, const char *key,
    char *label)
{
	struct bfence	*bf;
	uid_t		 owner = svc_owner(w, named);

	if (!svc_may(w, owner) || (bf = bfence_find(owner, key)) == NULL ||
	    bf->bf_stopping)
		return (-1);
	strlcpy(label, bf->bf_label, SVC_LABEL_LEN + 1);
	return (0);
}

/*
 * Whose running fence KEY has this label: 0 and *owner, or -1.  A
 * label names one boot of one fence; nobody is told whose it is.
 */
int
svc_label_owner(const char *key, const char *label, uid_t *owner)
{
	struct bfence	*bf;

	if (strlen(label) != SVC_LABEL_LEN)
		return (-1);
	TAILQ_FOREACH(bf, &svc_fences, bf_entry)
		if (!bf->bf_stopping && strcmp(bf->bf_info.f_key, key) == 0 &&
		    timingsafe_bcmp(bf->bf_label, label, SVC_LABEL_LEN) == 0) {
			*owner = bf->bf_info.f_owner;
			return (0);
		}
	return (-1);
}

/*
 * A fence's state for a front end: bf's record (whose bf_info holds no
 * bearer), or else a message's info, copied to *copy without its bearer.
 */
void
svc_fence_answer(struct svc_answer *a, struct bfence *bf,
    const struct msg_fence *info, struct msg_fence *copy)
{
	memset(a, 0, sizeof(*a));
	a->a_what = SVC_FENCE;
	if (bf != NULL) {
		a->a_fence = &bf->bf_info;
		a->a_boundary = bf->bf_boundary;
		a->a_rendered = &bf->bf_rendered;
		a->a_egress = bf->bf_egress;
		if (bf->bf_info.f_state != FENCE_STOPPED)
			a->a_label = bf->bf_label;
		return;
	}
	*copy = *info;
	explicit_bzero(copy->f_bearer, sizeof(copy->f_bearer));
	a->a_fence = copy;
}

/* Stopped fences. */

static int64_t
svc_now(void)
{
	struct timespec	 ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) == -1)
		fatal("%s: clock_gettime", __func__);
	return ((int64_t)ts.tv_sec);
}

static void
stopped_drop(struct bfence *bf)
{
	TAILQ_REMOVE(&svc_kept, bf, bf_entry);
	svc_nkept--;
	bfence_free(bf);
}

/* A fence kept as stopped. */
struct bfence *
stopped_find(uid_t owner, const char *key)
{
	return (bfence_in(&svc_kept, owner, key));
}

/* Entries older than SVC_STOPPED_SECS go; the list is by age. */
static void
stopped_expire(void)
{
	struct bfence	*bf;
	int64_t		 now = svc_now();

	while ((bf = TAILQ_FIRST(&svc_kept)) != NULL &&
	    now - bf->bf_stopped_at >= SVC_STOPPED_SECS)
		stopped_drop(bf);
}

/*
 * A fence that stopped is kept, state and reason as the fencer sent
 * them with the level the broker measured, its agent and bearer gone,
 * within the bounds above (the oldest makes room).
 */
static void
stopped_keep(struct bfence *bf, const struct msg_fence *info)
{
	struct bfence	*old, *next;
	unsigned int	 mine = 0;
	int		 level = bf->bf_info.f_level;
	int		 kernel = bf->bf_info.f_kernel;
	char		 release[MSG_KERNEL_RELEASE_LEN];
	char		 surface[MSG_SURFACE_LEN];
	struct msg_egress_counts egress = bf->bf_info.f_egress_n;

	strlcpy(release, bf->bf_info.f_kernel_release, sizeof(release));
	strlcpy(surface, bf->bf_info.f_surface, sizeof(surface));
	bf->bf_info = *info;
	bf->bf_info.f_egress_n = egress;
	bf->bf_info.f_level = level;
	bf->bf_info.f_kernel = kernel;
	strlcpy(bf->bf_info.f_kernel_release, release, sizeof(release));
	strlcpy(bf->bf_info.f_surface, surface, sizeof(surface));
	explicit_bzero(bf->bf_info.f_bearer, sizeof(bf->bf_info.f_bearer));
	explicit_bzero(bf->bf_bearer, sizeof(bf->bf_bearer));
	bf->bf_info.f_state = FENCE_STOPPED;
	free(bf->bf_boundary);
	bf->bf_boundary = NULL;
	bfence_changed(bf);
	bf->bf_stopped_at = svc_now();
	stopped_expire();
	if ((old = stopped_find(info->f_owner, info->f_key)) != NULL)
		stopped_drop(old);
	TAILQ_FOREACH(old, &svc_kept, bf_entry)
		if (old->bf_info.f_owner == info->f_owner)
			mine++;
	for (old = TAILQ_FIRST(&svc_kept); old != NULL &&
	    mine >= SVC_STOPPED_OWNER; old = next) {
		next = TAILQ_NEXT(old, bf_entry);
		if (old->bf_info.f_owner == info->f_owner) {
			stopped_drop(old);
			mine--;
		}
	}
	while (svc_nkept >= SVC_STOPPED_MAX)
		stopped_drop(TAILQ_FIRST(&svc_kept));
	TAILQ_INSERT_TAIL(&svc_kept, bf, bf_entry);
	svc_nkept++;
}

/* Listing. */

static int
svc_listed(const struct svc_who *w, const struct bfence *bf, uid_t owner,
    const char *key)
{
	if (!svc_may(w, bf->bf_info.f_owner) || bf->bf_stopping)
		return (0);
	return (key[0] == '\0' || (bf->bf_info.f_owner == owner &&
	    strcmp(bf->bf_info.f_key, key) == 0));
}

/* Each record, running ones first, then those kept since they stopped. */
void
bfence_each(void (*fn)(void *, const struct bfence *), void *arg)
{
	struct bfence	*bf;
	int		 pass;

	stopped_expire();
	/* Once for the listing, not once a fence (svc_denials_count()). */
	svc_denials_pending();
	for (pass = 0; pass < 2; pass++)
		TAILQ_FOREACH(bf, pass == 0 ? &svc_fences : &svc_kept,
		    bf_entry)
			fn(arg, bf);
}

/*
 * The fences w may see, running first, then those stopped lately
 * (never both for one key: a boot drops what was kept); with a key,
 * NAMED's (MSG_OWNER_NONE: w's) KEY only.  Each is said to cb as an
 * SVC_FENCE that is not the last: the front end ends the answer.
 * Answered from what the service keeps, never asking the fencer.
 * Returns how many were said, or -1 when w may not name that owner
 * (and then "not-found" was said, the last answer).
 */
int
svc_list(const struct svc_who *w, uid_t named, const char *key, svc_cb cb,
    void *arg)
{
	struct svc_answer a;
	struct bfence	*bf;
	uid_t		 owner = svc_owner(w, named);
	int		 n = 0, pass;

	if (key[0] != '\0' && !svc_may(w, owner)) {
		svc_refuse(cb, arg, "not-found", "no %s %u/%s", w->w_noun,
		    (unsigned)owner, key);
		return (-1);
	}
	stopped_expire();
	for (pass = 0; pass < 2; pass++)
		TAILQ_FOREACH(bf, pass == 0 ? &svc_fences : &svc_kept,
		    bf_entry) {
			if (!svc_listed(w, bf, owner, key))
				continue;
			svc_denials_count(bf);
			svc_fence_answer(&a, bf, NULL, NULL);
			svc_say(cb, arg, &a);
			n++;
		}
	return (n);
}

/* The fencer booted a fence: it is measured right away. */
struct bfence *
bfence_add(struct msg_fence *info, int fd)
{
	struct bfence	*bf;
	uint8_t		 raw[SVC_LABEL_LEN / 2];
	size_t		 i;

	if (bfence_find(info->f_owner, info->f_key) != NULL)
		fatalx("%s: fencer booted %u's %s twice", __func__,
		    (unsigned)info->f_owner, info->f_key);
	/* A new boot replaces what was kept of the last one. */
	if ((bf = stopped_find(info->f_owner, info->f_key)) != NULL)
		stopped_drop(bf);
	if ((bf = calloc(1, sizeof(*bf))) == NULL)
		fatal("%s: calloc", __func__);
	bf->bf_limit_fd[0] = bf->bf_limit_fd[1] = -1;
	bf->bf_info = *info;
	/* The bearer is kept apart, for svc_agent_encode() alone. */
	memcpy(bf->bf_bearer, info->f_bearer, sizeof(bf->bf_bearer));
	explicit_bzero(bf->bf_info.f_bearer, sizeof(bf->bf_info.f_bearer));
	if ((bf->bf_agent = imsgev_new(broker_self.ps_evbase, fd,
	    svc_agent_dispatch, svc_agent_closed, bf)) == NULL)
		fatal("%s: imsgev_new", __func__);
	TAILQ_INIT(&bf->bf_reqs);
	arc4random_buf(raw, sizeof(raw));
	for (i = 0; i < sizeof(raw); i++)
		snprintf(bf->bf_label + 2 * i, 3, "%02x", raw[i]);
	TAILQ_INSERT_TAIL(&svc_fences, bf, bf_entry);
	svc_nfences++;
	/* The proxy knows the fence before its agent can be asked a thing. */
	bf->bf_egress = svc_egress_new(&bf->bf_info, &bf->bf_info.f_egress_n,
	    bfence_changed_cb, bf);
	/* Until the report is in it is unmeasured. */
	bf->bf_info.f_level = 0;
	svc_watch_notify(bf);
	svc_probe_start(bf, 0);
	return (bf);
}

/* The fence ended (the fencer said so): it is kept as stopped. */
void
bfence_remove(struct bfence *bf, const struct msg_fence *info)
{
	TAILQ_REMOVE(&svc_fences, bf, bf_entry);
	svc_nfences--;
	ticket_forget_fence(bf->bf_info.f_owner, bf->bf_info.f_key);
	explicit_bzero(bf->bf_label, sizeof(bf->bf_label));
	if (bf->bf_agent != NULL)
		imsgev_free(bf->bf_agent);
	bf->bf_agent = NULL;
	svc_egress_end(bf->bf_egress);
	svc_fail_fence(bf, "stopped", 1);
	svc_audit_ended(info);
	svc_denials_free(bf);
	/*
	 * One the service stopped itself was never its owner's to use:
	 * a `require' not met was refused to whoever booted it, who heard
	 * why, and an abandoned boot was said in the log (svc_abandon()).
	 * It is not kept.
	 */
	if (bf->bf_stopping) {
		/* Gone: its watchers find it no more. */
		svc_watch_notify(bf);
		bfence_free(bf);
	} else
		stopped_keep(bf, info);
}
