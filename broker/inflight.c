/*
 * The broker's one registry of requests in flight, whoever made them:
 * the fence service's (to the fencer, to an agent, waiting on a verdict;
 * svc_req.c), host tokens being stored by the parent (token.c) and file
 * transfers (files.c).  Each is known by its id, unique among all in
 * flight, and by its maker, the front end's request or connection that
 * hears its answers.
 *
 * A front end whose client goes makes one call, inflight_orphan(), and
 * every request of that maker is told, each as its kind decides (a boot
 * is abandoned, a stream cancelled, a token stored all the same, a
 * streamed write's temporary removed).  The record itself belongs to
 * its kind's file, which embeds a struct inflight in it.
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/tree.h>

#include <stdint.h>
#include <stdlib.h>

#include "fenced.h"
#include "imsg.h"
#include "log.h"
#include "msg.h"
#include "broker.h"

RB_HEAD(inflight_tree, inflight);
TAILQ_HEAD(inflight_list, inflight);

static int	inflight_cmp(struct inflight *, struct inflight *);
RB_PROTOTYPE(inflight_tree, inflight, in_node, inflight_cmp);

static struct inflight_tree inflight_ids = RB_INITIALIZER(&inflight_ids);
static struct inflight_list inflight_all =
    TAILQ_HEAD_INITIALIZER(inflight_all);
static uint32_t		 inflight_next_id = 1;

static int
inflight_cmp(struct inflight *a, struct inflight *b)
{
	return (a->in_id < b->in_id ? -1 : a->in_id > b->in_id);
}

RB_GENERATE(inflight_tree, inflight, in_node, inflight_cmp);

/* in is in flight now, of kind and made by maker (NULL: the daemon). */
void
inflight_add(struct inflight *in, const struct inflight_kind *kind,
    void *maker)
{
	/* Ids wrap; one still in flight is skipped, never shared. */
	do {
		in->in_id = inflight_next_id++;
	} while (in->in_id == 0 ||
	    RB_INSERT(inflight_tree, &inflight_ids, in) != NULL);
	in->in_kind = kind;
	in->in_maker = maker;
	TAILQ_INSERT_TAIL(&inflight_all, in, in_entry);
}

/* in is over. */
void
inflight_remove(struct inflight *in)
{
	RB_REMOVE(inflight_tree, &inflight_ids, in);
	TAILQ_REMOVE(&inflight_all, in, in_entry);
}

/* The request of kind with that id, or NULL. */
struct inflight *
inflight_find(uint32_t id, const struct inflight_kind *kind)
{
	struct inflight	 key, *in;

	if (id == 0)
		return (NULL);
	key.in_id = id;
	if ((in = RB_FIND(inflight_tree, &inflight_ids, &key)) == NULL ||
	    in->in_kind != kind)
		return (NULL);
	return (in);
}

/* The request of kind after in (NULL: the first), oldest first. */
struct inflight *
inflight_next(struct inflight *in, const struct inflight_kind *kind)
{
	in = in == NULL ? TAILQ_FIRST(&inflight_all) :
	    TAILQ_NEXT(in, in_entry);
	while (in != NULL && in->in_kind != kind)
		in = TAILQ_NEXT(in, in_entry);
	return (in);
}

/*
 * The maker went away: each of its requests hears it through its kind.
 * A maker has few requests (its front end bounds them), but all are
 * looked through: once per maker.  What a kind does may end that
 * request, or make new ones (never of this maker), at the tail.
 */
void
inflight_orphan(void *maker)
{
	struct inflight	*in, *next;

	if (maker == NULL)
		return;
	TAILQ_FOREACH_SAFE(in, &inflight_all, in_entry, next)
		if (in->in_maker == maker)
			in->in_kind->ik_orphan(in);
}
