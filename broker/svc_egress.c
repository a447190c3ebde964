/*
 * The broker's side of the egress proxy (docs/egress.md): it registers
 * each fence that booted with a list before anything reaches its agent,
 * passes on every connection the agent accepted at the proxy port with
 * the fence's number, counts the proxy's decisions into the fence's
 * state, logs the refusals, and tells the proxy when the fence is gone.
 *
 * The agent is inside the fence, so what it sends is bounded here:
 * connections a fence has open (passed, not decided) are held to twice
 * `egress connections' (the proxy answers too-many above the limit
 * itself; past twice it the broker closes them unanswered) and all
 * fences together to SVC_EGRESS_OPEN_MAX, so that a fence cannot make
 * the broker queue descriptors without end.
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/tree.h>

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fenced.h"
#include "imsg.h"
#include "log.h"
#include "msg.h"
#include "proc.h"
#include "broker.h"

#define SVC_EGRESS_OPEN_MAX	4096	/* passed, not decided, all fences */
#define SVC_EGRESS_LOG_PER_SEC	10	/* refusals logged, per fence */

struct svc_egress {
	RB_ENTRY(svc_egress)	 se_node;
	uint32_t		 se_id;
	int			 se_live;	/* the proxy knows it */
	uid_t			 se_owner;
	char			 se_key[FENCE_KEY_SIZE];
	struct msg_egress_counts *se_counts;	/* in the fence's state */
	void			(*se_changed)(void *);
	void			*se_arg;
	struct msg_egress_decision se_recent[SVC_EGRESS_RECENT];
	unsigned int		 se_nrecent;	/* at most SVC_EGRESS_RECENT */
	unsigned int		 se_next;	/* where the next goes */
	time_t			 se_log_sec;
	unsigned int		 se_log_n;
	unsigned int		 se_log_hushed;
};

static int	svc_egress_cmp(struct svc_egress *, struct svc_egress *);
RB_HEAD(svc_egress_tree, svc_egress);
RB_PROTOTYPE(svc_egress_tree, svc_egress, se_node, svc_egress_cmp);
RB_GENERATE(svc_egress_tree, svc_egress, se_node, svc_egress_cmp);
static struct svc_egress_tree svc_egresses =
    RB_INITIALIZER(&svc_egresses);
static uint32_t		 svc_egress_next_id = 1;
static unsigned int	 svc_egress_open;

static int
svc_egress_cmp(struct svc_egress *a, struct svc_egress *b)
{
	return (a->se_id < b->se_id ? -1 : a->se_id > b->se_id);
}

static void
svc_egress_send(uint32_t type, const struct msg_egress_fence *m, int fd)
{
	void		*buf;
	size_t		 len;

	if (msg_egress_fence_encode(m, &buf, &len) == -1)
		fatal("%s: encode", __func__);
	if (proc_compose(&broker_self, PROC_EGRESS, type, 0, fd, buf,
	    len) == -1)
		log_warn("%s: to the egress proxy", __func__);
	free(buf);
}

/*
 * Register a fence that has a list with the proxy; NULL for one
 * without.  counts is where the fence's state holds what is counted,
 * changed what says it changed.
 */
struct svc_egress *
svc_egress_new(const struct msg_fence *info, struct msg_egress_counts *counts,
    void (*changed)(void *), void *arg)
{
	struct msg_egress_fence m;
	struct svc_egress *se;
	uint32_t	 i;

	if (info->f_negress == 0)
		return (NULL);
	svc_denials_egress_start();
	if ((se = calloc(1, sizeof(*se))) == NULL)
		fatal("%s: calloc", __func__);
	se->se_id = svc_egress_next_id++;
	if (svc_egress_next_id == 0)
		fatalx("%s: out of numbers", __func__);
	se->se_owner = info->f_owner;
	strlcpy(se->se_key, info->f_key, sizeof(se->se_key));
	se->se_counts = counts;
	se->se_changed = changed;
	se->se_arg = arg;
	memset(&m, 0, sizeof(m));
	m.ef_id = se->se_id;
	m.ef_owner = info->f_owner;
	strlcpy(m.ef_key, info->f_key, sizeof(m.ef_key));
	for (i = 0; i < info->f_negress; i++)
		strlcpy(m.ef_list[i], info->f_egress[i], sizeof(m.ef_list[i]));
	m.ef_nlist = info->f_negress;
	svc_egress_send(IMSG_EGRESS_FENCE, &m, -1);
	se->se_live = 1;
	RB_INSERT(svc_egress_tree, &svc_egresses, se);
	return (se);
}

static void
svc_egress_log_hushed(struct svc_egress *se)
{
	if (se->se_log_hushed > 0)
		log_info("fence %s of %u: %u more egress refusals not logged",
		    se->se_key, (unsigned)se->se_owner, se->se_log_hushed);
	se->se_log_hushed = 0;
}

/* The fence ended: the proxy ends its connections; the counts stay. */
void
svc_egress_end(struct svc_egress *se)
{
	struct msg_egress_fence m;

	if (se == NULL || !se->se_live)
		return;
	svc_egress_log_hushed(se);
	memset(&m, 0, sizeof(m));
	m.ef_id = se->se_id;
	svc_egress_send(IMSG_EGRESS_FORGET, &m, -1);
	se->se_live = 0;
	svc_egress_open -= se->se_counts->en_open;
	se->se_counts->en_open = 0;
	RB_REMOVE(svc_egress_tree, &svc_egresses, se);
	se->se_changed(se->se_arg);
}

void
svc_egress_free(struct svc_egress *se)
{
	if (se == NULL)
		return;
	svc_egress_end(se);
	free(se);
}

/* The fence's state moved: keep counting into its new place. */
void
svc_egress_moved(struct svc_egress *se, struct msg_egress_counts *counts)
{
	if (se != NULL)
		se->se_counts = counts;
}

/*
 * At most SVC_EGRESS_LOG_PER_SEC lines a second; how many were hushed
 * is said with the next second's first, or when the fence ends.
 */
static int
svc_egress_log_ok(struct svc_egress *se)
{
	time_t	 now = time(NULL);

	if (now != se->se_log_sec) {
		svc_egress_log_hushed(se);
		se->se_log_sec = now;
		se->se_log_n = 0;
	}
	if (se->se_log_n++ < SVC_EGRESS_LOG_PER_SEC)
		return (1);
	se->se_log_hushed++;
	return (0);
}

/*
 * A connection the agent accepted at the proxy port (fd): on to the
 * proxy, unless the fence has too many open (or has just ended).
 */
void
svc_egress_conn(struct svc_egress *se, int fd)
{
	const struct fenced_config *c = &broker_self.ps_conf;
	struct msg_egress_fence m;

	if (!se->se_live) {
		close(fd);
		return;
	}
	if (se->se_counts->en_open >= 2 * c->c_egress_conns ||
	    svc_egress_open >= SVC_EGRESS_OPEN_MAX) {
		se->se_counts->en_refused++;
		if (svc_egress_log_ok(se))
			log_info("fence %s of %u: egress connection closed: "
			    "%u open", se->se_key, (unsigned)se->se_owner,
			    se->se_counts->en_open);
		close(fd);
		se->se_changed(se->se_arg);
		return;
	}
	memset(&m, 0, sizeof(m));
	m.ef_id = se->se_id;
	svc_egress_send(IMSG_EGRESS_CONN, &m, fd);
	se->se_counts->en_open++;
	svc_egress_open++;
	se->se_changed(se->se_arg);
}

/* The proxy's number of the fence; 0: none (no egress list). */
uint32_t
svc_egress_id(const struct svc_egress *se)
{
	return (se != NULL ? se->se_id : 0);
}

/* One decision of the proxy: counted, kept among the recent, logged. */
void
svc_dispatch_egress(struct imsgev *iev, struct imsg *imsg, void *arg)
{
	struct msg_egress_decision d;
	struct svc_egress key, *se;
	struct msg_egress_counts *n;

	if (imsg->hdr.ih_type != IMSG_EGRESS_DECISION || imsg->fd != -1 ||
	    msg_egress_decision_decode(imsg->data, imsg->len, &d) == -1)
		fatalx("%s: bad %s from the egress proxy", __func__,
		    msg_type_name(imsg->hdr.ih_type));
	metrics_egress(d.ed_address[0] != '\0', d.ed_up, d.ed_down);
	key.se_id = d.ed_id;
	/* A fence that ended meanwhile: its connections were ended too. */
	if ((se = RB_FIND(svc_egress_tree, &svc_egresses, &key)) == NULL)
		return;
	n = se->se_counts;
	if (n->en_open > 0) {
		n->en_open--;
		svc_egress_open--;
	}
	if (d.ed_address[0] != '\0') {
		n->en_allowed++;
		n->en_up += d.ed_up;
		n->en_down += d.ed_down;
	} else {
		n->en_refused++;
		if (svc_egress_log_ok(se))
			log_info("fence %s of %u: egress %s %s:%u refused: %s",
			    se->se_key, (unsigned)se->se_owner,
			    d.ed_method[0] != '\0' ? d.ed_method : "-",
			    d.ed_name[0] != '\0' ? d.ed_name : "-",
			    d.ed_port, d.ed_reason);
	}
	se->se_recent[se->se_next] = d;
	se->se_next = (se->se_next + 1) % SVC_EGRESS_RECENT;
	if (se->se_nrecent < SVC_EGRESS_RECENT)
		se->se_nrecent++;
	se->se_changed(se->se_arg);
}

/* The recent decisions, oldest first, as JSON for the fence's state. */
json_t *
svc_egress_recent_json(const struct svc_egress *se)
{
	const struct msg_egress_decision *d;
	json_t		*a, *o;
	unsigned int	 i, at;

	if ((a = json_array()) == NULL)
		return (NULL);
	if (se == NULL)
		return (a);
	for (i = 0; i < se->se_nrecent; i++) {
		at = (se->se_next + SVC_EGRESS_RECENT - se->se_nrecent + i) %
		    SVC_EGRESS_RECENT;
		d = &se->se_recent[at];
		o = json_pack("{s:s, s:s?, s:i, s:s?, s:s, s:s?, s:I, s:I, "
		    "s:I}",
		    "decision", d->ed_address[0] != '\0' ? "allowed" :
		    "refused",
		    "name", d->ed_name[0] != '\0' ? d->ed_name : NULL,
		    "port", (int)d->ed_port,
		    "method", d->ed_method[0] != '\0' ? d->ed_method : NULL,
		    "reason", d->ed_reason,
		    "address", d->ed_address[0] != '\0' ? d->ed_address :
		    NULL,
		    "bytesUp", (json_int_t)d->ed_up,
		    "bytesDown", (json_int_t)d->ed_down,
		    "ms", (json_int_t)d->ed_ms);
		if (o == NULL || json_array_append_new(a, o) == -1) {
			json_decref(a);
			return (NULL);
		}
	}
	return (a);
}
