/*
 * Watchers of fences' states (docs/interactive.md, "/api/channel"): a
 * front end that wants to hear a fence boot, be measured and stop
 * registers here, and is told the owner and key of each fence whose
 * record changed, as it changes (svc_fence.c and svc_probe.c call
 * svc_watch_notify()), never by polling.  It asks svc_list() for the
 * state itself, so what it says is what the records say and the one
 * ownership rule, svc_may(), decides who hears of which fence.
 *
 * A watcher's callback must not call back into the service: it notes
 * the key and answers from its own event (the channel coalesces, so
 * that a page that reads slowly gets the latest state, not a queue).
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/tree.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "fenced.h"
#include "imsg.h"
#include "log.h"
#include "msg.h"
#include "broker.h"
#include "svc.h"

struct svc_watch {
	TAILQ_ENTRY(svc_watch)	 sw_entry;
	struct svc_who		 sw_who;
	svc_watch_fn		 sw_fn;
	void			*sw_arg;
};

static TAILQ_HEAD(, svc_watch) svc_watches =
    TAILQ_HEAD_INITIALIZER(svc_watches);

struct svc_watch *
svc_watch_add(const struct svc_who *w, svc_watch_fn fn, void *arg)
{
	struct svc_watch *sw;

	if ((sw = calloc(1, sizeof(*sw))) == NULL) {
		log_warn("%s: calloc", __func__);
		return (NULL);
	}
	sw->sw_who = *w;
	sw->sw_who.w_token = NULL;	/* the asker's; not kept */
	sw->sw_fn = fn;
	sw->sw_arg = arg;
	TAILQ_INSERT_TAIL(&svc_watches, sw, sw_entry);
	return (sw);
}

void
svc_watch_del(struct svc_watch *sw)
{
	if (sw == NULL)
		return;
	TAILQ_REMOVE(&svc_watches, sw, sw_entry);
	free(sw);
}

/* bf's record changed (booted, measured, stopped, gone). */
void
svc_watch_notify(const struct bfence *bf)
{
	struct svc_watch *sw, *next;

	TAILQ_FOREACH_SAFE(sw, &svc_watches, sw_entry, next)
		if (svc_may(&sw->sw_who, bf->bf_info.f_owner))
			sw->sw_fn(sw->sw_arg, bf->bf_info.f_owner,
			    bf->bf_info.f_key);
}
