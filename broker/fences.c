/*
 * The broker's view of fences: what the fencer reported booted, with
 * the channel to each fence's agent and its bearer, and the requests in
 * flight to the fencer and to agents.  A request is answered through
 * the callback of whoever made it (a control connection or an HTTP
 * request); one whose maker went away is answered into the void.
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/tree.h>

#include <errno.h>
#include <event.h>
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

static TAILQ_HEAD(, bfence) bfences = TAILQ_HEAD_INITIALIZER(bfences);
/* Stopped fences kept for their state, oldest first. */
static TAILQ_HEAD(, bfence) bstopped = TAILQ_HEAD_INITIALIZER(bstopped);
static unsigned int	 bstopped_count;
RB_HEAD(breq_tree, breq);
RB_HEAD(breq_user_tree, breq_user);
static struct breq_tree	 breqs = RB_INITIALIZER(&breqs);
static struct breq_user_tree breq_users = RB_INITIALIZER(&breq_users);
static TAILQ_HEAD(, breq) breq_list = TAILQ_HEAD_INITIALIZER(breq_list);
static unsigned int	 breq_count;
static uint32_t		 breq_next = 1;
static unsigned int	 bfence_count;

/* A request to an agent held until the fence's first verdict. */
struct bqueued {
	TAILQ_ENTRY(bqueued)	 q_entry;
	uint32_t		 q_reqid;
	uint32_t		 q_type;
	void			*q_buf;		/* may hold the bearer */
	size_t			 q_len;
};

static void	bfence_agent_dispatch(struct imsgev *, struct imsg *, void *);
static void	bfence_agent_closed(struct imsgev *, int, void *);

/* A fence is named by its owner and its key. */
struct bfence *
bfence_find(uid_t owner, const char *key)
{
	struct bfence	*bf;

	TAILQ_FOREACH(bf, &bfences, bf_entry)
		if (bf->bf_info.f_owner == owner &&
		    strcmp(bf->bf_info.f_key, key) == 0)
			return (bf);
	return (NULL);
}

unsigned int
bfence_running(void)
{
	return (bfence_count);
}

/*
 * The requests in flight, by id: every answer from the fencer or an
 * agent is looked up here, so the lookup is a tree, never a scan.  Each
 * owner's count is kept alongside, for the limits per user.
 */
static int	breq_cmp(struct breq *, struct breq *);
static int	breq_user_cmp(struct breq_user *, struct breq_user *);
RB_PROTOTYPE(breq_tree, breq, r_node, breq_cmp);
RB_PROTOTYPE(breq_user_tree, breq_user, bu_node, breq_user_cmp);

static int
breq_cmp(struct breq *a, struct breq *b)
{
	return (a->r_id < b->r_id ? -1 : a->r_id > b->r_id);
}

static int
breq_user_cmp(struct breq_user *a, struct breq_user *b)
{
	return (a->bu_uid < b->bu_uid ? -1 : a->bu_uid > b->bu_uid);
}

RB_GENERATE(breq_tree, breq, r_node, breq_cmp);
RB_GENERATE(breq_user_tree, breq_user, bu_node, breq_user_cmp);

static struct breq_user *
breq_user_get(uid_t uid, int create)
{
	struct breq_user key, *bu;

	key.bu_uid = uid;
	if ((bu = RB_FIND(breq_user_tree, &breq_users, &key)) != NULL ||
	    !create)
		return (bu);
	if ((bu = calloc(1, sizeof(*bu))) == NULL)
		fatal("%s: calloc", __func__);
	bu->bu_uid = uid;
	RB_INSERT(breq_user_tree, &breq_users, bu);
	return (bu);
}

struct breq *
breq_new(enum breq_kind kind, uid_t owner, const char *key, breq_cb cb,
    void *arg)
{
	struct breq	*r;

	if ((r = calloc(1, sizeof(*r))) == NULL)
		return (NULL);
	/* Ids wrap; one still in flight is skipped, never shared. */
	do {
		r->r_id = breq_next++;
	} while (r->r_id == 0 || RB_INSERT(breq_tree, &breqs, r) != NULL);
	r->r_kind = kind;
	r->r_owner = owner;
	if (key != NULL)
		strlcpy(r->r_key, key, sizeof(r->r_key));
	r->r_cb = cb;
	r->r_arg = arg;
	TAILQ_INSERT_TAIL(&breq_list, r, r_entry);
	breq_count++;
	return (r);
}

/* Whose request r is, for the limits per user; exec: a running command. */
void
breq_owner(struct breq *r, uid_t uid, int exec)
{
	struct breq_user *bu;

	if (r->r_owned)
		fatalx("%s: request %u has an owner", __func__, r->r_id);
	bu = breq_user_get(uid, 1);
	r->r_owned = 1;
	r->r_uid = uid;
	r->r_exec = exec != 0;
	bu->bu_reqs++;
	if (r->r_exec)
		bu->bu_execs++;
}

static struct breq *
breq_find(uint32_t id)
{
	struct breq	 key;

	if (id == 0)
		return (NULL);
	key.r_id = id;
	return (RB_FIND(breq_tree, &breqs, &key));
}

void
breq_done(struct breq *r)
{
	struct breq_user *bu;

	if (r->r_owned && (bu = breq_user_get(r->r_uid, 0)) != NULL) {
		bu->bu_reqs--;
		if (r->r_exec)
			bu->bu_execs--;
		if (bu->bu_reqs == 0) {
			RB_REMOVE(breq_user_tree, &breq_users, bu);
			free(bu);
		}
	}
	RB_REMOVE(breq_tree, &breqs, r);
	TAILQ_REMOVE(&breq_list, r, r_entry);
	breq_count--;
	free(r);
}

/*
 * The maker went away: keep the id so late answers are recognised.  A
 * maker has few requests of its own (its front end bounds them), but
 * all of them are looked through: it happens once per maker.
 */
void
breq_orphan(void *arg)
{
	struct breq	*r;

	TAILQ_FOREACH(r, &breq_list, r_entry)
		if (r->r_arg == arg)
			r->r_cb = NULL;
}

/*
 * The execs of uid still running, their makers gone or not: the
 * commands run on in their fences until they answer.
 */
unsigned int
breq_execs(uid_t uid)
{
	struct breq_user *bu;

	return ((bu = breq_user_get(uid, 0)) == NULL ? 0 : bu->bu_execs);
}

/* All of uid's requests in flight, orphans included. */
unsigned int
breq_pending(uid_t uid)
{
	struct breq_user *bu;

	return ((bu = breq_user_get(uid, 0)) == NULL ? 0 : bu->bu_reqs);
}

/* All requests in flight. */
unsigned int
breq_total(void)
{
	return (breq_count);
}

static void
breq_answer(struct breq *r, uint32_t type, struct imsg *imsg, int last)
{
	if (r->r_cb != NULL)
		r->r_cb(r, type, imsg);
	if (last)
		breq_done(r);
}

/* An answer to a request that does not exist: the peer is confused. */
static struct breq *
breq_lookup(const char *who, struct imsg *imsg)
{
	struct breq	*r;

	if ((r = breq_find(imsg->hdr.ih_peerid)) == NULL)
		fatalx("%s: %s answered unknown request %u with %s", __func__,
		    who, imsg->hdr.ih_peerid, msg_type_name(imsg->hdr.ih_type));
	return (r);
}

static int64_t
bfence_now(void)
{
	struct timespec	 ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) == -1)
		fatal("%s: clock_gettime", __func__);
	return ((int64_t)ts.tv_sec);
}

static void
bstopped_drop(struct bfence *bf)
{
	TAILQ_REMOVE(&bstopped, bf, bf_entry);
	bstopped_count--;
	free(bf->bf_boundary);
	explicit_bzero(bf, sizeof(*bf));
	free(bf);
}

static struct bfence *
bstopped_find(uid_t owner, const char *key)
{
	struct bfence	*bf;

	TAILQ_FOREACH(bf, &bstopped, bf_entry)
		if (bf->bf_info.f_owner == owner &&
		    strcmp(bf->bf_info.f_key, key) == 0)
			return (bf);
	return (NULL);
}

/* Entries older than BFENCE_STOPPED_SECS go; the list is by age. */
static void
bstopped_expire(void)
{
	struct bfence	*bf;
	int64_t		 now = bfence_now();

	while ((bf = TAILQ_FIRST(&bstopped)) != NULL &&
	    now - bf->bf_stopped_at >= BFENCE_STOPPED_SECS)
		bstopped_drop(bf);
}

/*
 * A fence that stopped is kept, state and reason as the fencer sent
 * them with the level the broker measured, its agent and bearer gone,
 * within the bounds of broker.h (the oldest makes room).
 */
static void
bstopped_keep(struct bfence *bf, const struct msg_fence *info)
{
	struct bfence	*old, *next;
	unsigned int	 mine = 0;
	int		 level = bf->bf_info.f_level;

	bf->bf_info = *info;
	bf->bf_info.f_level = level;
	explicit_bzero(bf->bf_info.f_bearer, sizeof(bf->bf_info.f_bearer));
	bf->bf_info.f_state = FENCE_STOPPED;
	free(bf->bf_boundary);
	bf->bf_boundary = NULL;
	bf->bf_stopped_at = bfence_now();
	bstopped_expire();
	if ((old = bstopped_find(info->f_owner, info->f_key)) != NULL)
		bstopped_drop(old);
	TAILQ_FOREACH(old, &bstopped, bf_entry)
		if (old->bf_info.f_owner == info->f_owner)
			mine++;
	for (old = TAILQ_FIRST(&bstopped); old != NULL &&
	    mine >= BFENCE_STOPPED_OWNER; old = next) {
		next = TAILQ_NEXT(old, bf_entry);
		if (old->bf_info.f_owner == info->f_owner) {
			bstopped_drop(old);
			mine--;
		}
	}
	while (bstopped_count >= BFENCE_STOPPED_MAX)
		bstopped_drop(TAILQ_FIRST(&bstopped));
	TAILQ_INSERT_TAIL(&bstopped, bf, bf_entry);
	bstopped_count++;
}

static int
bfence_listed(const struct bfence *bf, uid_t uid, int admin, uid_t owner,
    const char *key)
{
	/* The one ownership rule: a user sees their own, admin all. */
	if (!admin && bf->bf_info.f_owner != uid)
		return (0);
	if (key[0] != '\0' && (strcmp(bf->bf_info.f_key, key) != 0 ||
	    bf->bf_info.f_owner != (owner == MSG_OWNER_NONE ? uid : owner)))
		return (0);
	return (1);
}

static int
bfence_list_one(const struct bfence *bf, fences_list_cb cb, void *arg)
{
	struct msg_fence f;
	int		 stop;

	f = bf->bf_info;
	explicit_bzero(f.f_bearer, sizeof(f.f_bearer));
	stop = cb(arg, &f);
	explicit_bzero(&f, sizeof(f));
	return (stop);
}

/*
 * The fences uid may see (admin: all), running first, then those
 * stopped lately (never both for one key: a boot drops what was kept);
 * with a key, OWNER's (MSG_OWNER_NONE: uid's) KEY only.
 * Answered from what the broker keeps, never asking the fencer: the
 * state is the fencer's as last reported (booted, level, stopped).
 * Returns how many were passed to cb.
 */
int
fences_list(uid_t uid, int admin, uid_t owner, const char *key,
    fences_list_cb cb, void *arg)
{
	struct bfence	*bf;
	int		 n = 0;

	bstopped_expire();
	TAILQ_FOREACH(bf, &bfences, bf_entry) {
		if (!bfence_listed(bf, uid, admin, owner, key))
			continue;
		n++;
		if (bfence_list_one(bf, cb, arg))
			return (n);
	}
	TAILQ_FOREACH(bf, &bstopped, bf_entry) {
		if (!bfence_listed(bf, uid, admin, owner, key))
			continue;
		n++;
		if (bfence_list_one(bf, cb, arg))
			return (n);
	}
	return (n);
}

static void
bfence_add(struct msg_fence *info, int fd)
{
	struct bfence	*bf;

	if (bfence_find(info->f_owner, info->f_key) != NULL)
		fatalx("%s: fencer booted %u's %s twice", __func__,
		    (unsigned)info->f_owner, info->f_key);
	/* A new boot replaces what was kept of the last one. */
	if ((bf = bstopped_find(info->f_owner, info->f_key)) != NULL)
		bstopped_drop(bf);
	if ((bf = calloc(1, sizeof(*bf))) == NULL)
		fatal("%s: calloc", __func__);
	bf->bf_info = *info;
	if ((bf->bf_agent = imsgev_new(broker_self.ps_evbase, fd,
	    bfence_agent_dispatch, bfence_agent_closed, bf)) == NULL)
		fatal("%s: imsgev_new", __func__);
	TAILQ_INIT(&bf->bf_queue);
	TAILQ_INSERT_TAIL(&bfences, bf, bf_entry);
	bfence_count++;
	/* Measured right away; until the report is in it is unmeasured. */
	bf->bf_info.f_level = 0;
	if (probe_start(bf, NULL, NULL, 0, 0) == -1)
		log_warnx("%s: cannot probe %s", __func__, info->f_key);
}

static void
bqueued_free(struct bfence *bf, struct bqueued *q)
{
	TAILQ_REMOVE(&bf->bf_queue, q, q_entry);
	bf->bf_nqueued--;
	bf->bf_queued_bytes -= q->q_len;
	explicit_bzero(q->q_buf, q->q_len);
	free(q->q_buf);
	free(q);
}

static void
bfence_queue_clear(struct bfence *bf)
{
	struct bqueued	*q;

	while ((q = TAILQ_FIRST(&bf->bf_queue)) != NULL)
		bqueued_free(bf, q);
}

/* Requests to a fence that is gone get an error now, not never. */
static void
bfence_fail_pending(uid_t owner, const char *key, const char *why)
{
	struct bfence	*bf;
	struct breq	*r, *next;
	void		*buf;
	size_t		 len;
	struct imsg	 imsg;

	if ((bf = bfence_find(owner, key)) != NULL)
		bfence_queue_clear(bf);
	if (msg_error_format(&buf, &len, "fence-stopped", "fence %s %s", key,
	    why) == -1)
		fatal("%s: encode", __func__);
	TAILQ_FOREACH_SAFE(r, &breq_list, r_entry, next) {
		if (r->r_kind != BREQ_AGENT || r->r_owner != owner ||
		    strcmp(r->r_key, key) != 0)
			continue;
		memset(&imsg, 0, sizeof(imsg));
		imsg.hdr.ih_type = IMSG_AGENT_ERROR;
		imsg.fd = -1;
		imsg.data = buf;
		imsg.len = len;
		breq_answer(r, IMSG_AGENT_ERROR, &imsg, 1);
	}
	free(buf);
}

/* The fence ended: it is kept as stopped, as info says. */
static void
bfence_remove(struct bfence *bf, const struct msg_fence *info,
    const char *why)
{
	char	 key[FENCE_KEY_SIZE];
	uid_t	 owner = bf->bf_info.f_owner;

	strlcpy(key, bf->bf_info.f_key, sizeof(key));
	TAILQ_REMOVE(&bfences, bf, bf_entry);
	bfence_count--;
	if (bf->bf_agent != NULL)
		imsgev_free(bf->bf_agent);
	bf->bf_agent = NULL;
	bfence_queue_clear(bf);
	/*
	 * One the broker stopped itself (a `require' not met) was refused
	 * to whoever booted it, who heard why: it is not kept.
	 */
	if (bf->bf_stopping) {
		free(bf->bf_boundary);
		explicit_bzero(bf, sizeof(*bf));
		free(bf);
	} else
		bstopped_keep(bf, info);
	bfence_fail_pending(owner, key, why);
}

void
fences_dispatch_fencer(struct imsgev *iev, struct imsg *imsg, void *arg)
{
	struct msg_fence info;
	struct msg_error e;
	struct bfence	*bf;
	struct breq	*r;

	switch (imsg->hdr.ih_type) {
	case IMSG_FENCE_BOOTED:
		if (msg_fence_decode(imsg->data, imsg->len, &info) == -1 ||
		    imsg->fd == -1)
			fatalx("%s: bad %s", __func__,
			    msg_type_name(imsg->hdr.ih_type));
		r = breq_lookup("fencer", imsg);
		bfence_add(&info, imsg->fd);
		imsg->fd = -1;
		explicit_bzero(&info, sizeof(info));
		breq_answer(r, imsg->hdr.ih_type, imsg, 1);
		break;
	case IMSG_FENCE_FAILED:
		if (msg_error_decode(imsg->data, imsg->len, &e) == -1)
			fatalx("%s: bad failure", __func__);
		/* A boot that ended before anyone waited on it: log only. */
		if (imsg->hdr.ih_peerid == 0) {
			log_info("%s: %s", e.e_code, e.e_message);
			break;
		}
		r = breq_lookup("fencer", imsg);
		breq_answer(r, imsg->hdr.ih_type, imsg, 1);
		break;
	case IMSG_FENCE_STOPPED:
		if (msg_fence_decode(imsg->data, imsg->len, &info) == -1)
			fatalx("%s: bad stopped", __func__);
		if ((bf = bfence_find(info.f_owner, info.f_key)) != NULL)
			bfence_remove(bf, &info, "stopped");
		if (imsg->hdr.ih_peerid == 0)
			break;
		r = breq_lookup("fencer", imsg);
		/* stop KEY ends with its one answer; stop all with END. */
		breq_answer(r, imsg->hdr.ih_type, imsg, r->r_key[0] != '\0');
		break;
	case IMSG_FENCE_INFO:
		if (msg_fence_decode(imsg->data, imsg->len, &info) == -1)
			fatalx("%s: bad info", __func__);
		r = breq_lookup("fencer", imsg);
		breq_answer(r, imsg->hdr.ih_type, imsg, 0);
		break;
	case IMSG_PROBE_EXEC:
		r = breq_lookup("fencer", imsg);
		breq_answer(r, imsg->hdr.ih_type, imsg, 0);
		break;
	case IMSG_FENCE_LEVEL:
		r = breq_lookup("fencer", imsg);
		breq_answer(r, imsg->hdr.ih_type, imsg, 1);
		break;
	case IMSG_FENCE_END:
		if (msg_empty_decode(imsg->data, imsg->len) == -1)
			fatalx("%s: bad end", __func__);
		r = breq_lookup("fencer", imsg);
		breq_answer(r, imsg->hdr.ih_type, imsg, 1);
		break;
	default:
		fatalx("%s: unexpected %s", __func__,
		    msg_type_name(imsg->hdr.ih_type));
	}
}

int
fences_to_fencer(struct breq *r, uint32_t type, const void *buf, size_t len)
{
	return (proc_compose(&broker_self, PROC_FENCER, type, r->r_id, -1,
	    buf, len));
}

/* Stop a fence on the daemon's own account; nobody hears the answer. */
void
fences_stop(uid_t owner, const char *key)
{
	struct msg_fence_req q;
	struct bfence	*bf;
	struct breq	*r;
	void		*buf;
	size_t		 len;

	/* What waits on the verdict now waits for the end, and fails. */
	if ((bf = bfence_find(owner, key)) != NULL)
		bf->bf_stopping = 1;
	memset(&q, 0, sizeof(q));
	strlcpy(q.r_key, key, sizeof(q.r_key));
	q.r_owner = owner;
	q.r_admin = 1;
	if ((r = breq_new(BREQ_FENCER, owner, key, NULL, NULL)) == NULL ||
	    msg_fence_req_encode(&q, &buf, &len) == -1 ||
	    fences_to_fencer(r, IMSG_FENCE_STOP, buf, len) == -1)
		fatal("%s: stop %s", __func__, key);
	free(buf);
}

/* The probe's own exec: it decides the level, so it never waits. */
int
fences_to_agent_probe(struct bfence *bf, struct breq *r, uint32_t type,
    const void *buf, size_t len)
{
	if (bf->bf_agent == NULL) {
		errno = ENOTCONN;
		return (-1);
	}
	return (imsgev_compose(bf->bf_agent, type, r->r_id, 0, -1, buf, len));
}

/* Answer r with an agent error of our own, as the agent would. */
static void
breq_agent_error(struct breq *r, const char *code, const char *message)
{
	struct imsg	 imsg;
	void		*buf;
	size_t		 len;

	if (msg_error_format(&buf, &len, code, "%s", message) == -1)
		fatal("%s: encode", __func__);
	memset(&imsg, 0, sizeof(imsg));
	imsg.hdr.ih_type = IMSG_AGENT_ERROR;
	imsg.hdr.ih_peerid = r->r_id;
	imsg.fd = -1;
	imsg.data = buf;
	imsg.len = len;
	breq_answer(r, IMSG_AGENT_ERROR, &imsg, 1);
	free(buf);
}

/*
 * A request for a fence's agent (exec, git), from the control socket or
 * HTTP.  DESIGN.md section 3: nothing runs in a fence that has not
 * earned what was asked, so until the first probe's verdict is in (and
 * the broker knows whether the fence stays), a request waits, at most
 * BFENCE_QUEUE_MAX of them and BFENCE_QUEUE_BYTES per fence; beyond
 * that it is refused at once.  A
 * fence the broker is stopping takes nothing more: what waits fails
 * with the fence's end.  0 when sent or held (or answered with an
 * error), -1 when the fence has no agent.
 */
int
fences_to_agent(struct bfence *bf, struct breq *r, uint32_t type,
    const void *buf, size_t len)
{
	struct bqueued	*q;
	char		 why[MSG_ERROR_TEXT_MAX];

	if (bf->bf_agent == NULL) {
		errno = ENOTCONN;
		return (-1);
	}
	if (bf->bf_measured && !bf->bf_stopping)
		return (imsgev_compose(bf->bf_agent, type, r->r_id, 0, -1,
		    buf, len));
	if (bf->bf_nqueued >= BFENCE_QUEUE_MAX ||
	    len > BFENCE_QUEUE_BYTES - bf->bf_queued_bytes) {
		snprintf(why, sizeof(why), "fence %s is not measured yet and "
		    "has %u requests (%zu bytes) waiting already",
		    bf->bf_info.f_key, bf->bf_nqueued, bf->bf_queued_bytes);
		breq_agent_error(r, "exec-busy", why);
		return (0);
	}
	if ((q = calloc(1, sizeof(*q))) == NULL ||
	    (len > 0 && (q->q_buf = malloc(len)) == NULL)) {
		free(q);
		return (-1);
	}
	if (len > 0)
		memcpy(q->q_buf, buf, len);
	q->q_len = len;
	q->q_type = type;
	q->q_reqid = r->r_id;
	TAILQ_INSERT_TAIL(&bf->bf_queue, q, q_entry);
	bf->bf_nqueued++;
	bf->bf_queued_bytes += len;
	log_debug("fence %s: request %u waits for the first verdict",
	    bf->bf_info.f_key, r->r_id);
	return (0);
}

/*
 * The first verdict of OWNER's KEY is in and its waiters have heard it (a `require'
 * not met has called fences_stop() by now): what waited goes to the
 * agent, unless the fence is being stopped.
 */
void
fences_measured(uid_t owner, const char *key)
{
	struct bfence	*bf;
	struct bqueued	*q;
	struct breq	*r;

	if ((bf = bfence_find(owner, key)) == NULL || bf->bf_measured)
		return;
	bf->bf_measured = 1;
	if (bf->bf_stopping)
		return;
	while ((q = TAILQ_FIRST(&bf->bf_queue)) != NULL) {
		r = breq_find(q->q_reqid);
		if (r != NULL && (bf->bf_agent == NULL ||
		    imsgev_compose(bf->bf_agent, q->q_type, q->q_reqid, 0, -1,
		    q->q_buf, q->q_len) == -1))
			breq_agent_error(r, "fence-stopped", "the fence has "
			    "no agent");
		bqueued_free(bf, q);
	}
}

/*
 * What an agent says is checked for shape by whoever asked (the answer
 * is passed on); here only that it answers a request made to it.
 */
static void
bfence_agent_dispatch(struct imsgev *iev, struct imsg *imsg, void *arg)
{
	struct bfence	*bf = arg;
	struct breq	*r;

	switch (imsg->hdr.ih_type) {
	case IMSG_AGENT_RESULT:
	case IMSG_AGENT_ERROR:
	case IMSG_AGENT_GIT_IDENTITY:
		r = breq_find(imsg->hdr.ih_peerid);
		if (r == NULL || r->r_kind != BREQ_AGENT ||
		    r->r_owner != bf->bf_info.f_owner ||
		    strcmp(r->r_key, bf->bf_info.f_key) != 0)
			goto bad;
		breq_answer(r, imsg->hdr.ih_type, imsg, 1);
		return;
	default:
		goto bad;
	}
 bad:
	/* A fence's agent is inside the fence: never trusted, never fatal. */
	log_warnx("fence %s: agent sent %s for request %u; channel closed",
	    bf->bf_info.f_key, msg_type_name(imsg->hdr.ih_type),
	    imsg->hdr.ih_peerid);
	imsgev_free(bf->bf_agent);
	bf->bf_agent = NULL;
	bfence_fail_pending(bf->bf_info.f_owner, bf->bf_info.f_key,
	    "has a misbehaving agent");
}

static void
bfence_agent_closed(struct imsgev *iev, int error, void *arg)
{
	struct bfence	*bf = arg;

	log_debug("fence %s: agent channel closed%s%s", bf->bf_info.f_key,
	    error ? ": " : "", error ? strerror(error) : "");
	imsgev_free(iev);
	bf->bf_agent = NULL;
	bfence_fail_pending(bf->bf_info.f_owner, bf->bf_info.f_key,
	    "lost its agent");
}
