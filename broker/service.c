/*
 * The fence service: everything the broker knows and decides about
 * fences, whichever front end asks (control.c for fencectl, http_api.c
 * for the HTTP API).  It owns
 *
 *  - every fence's state as the fencer reports it (booted, level,
 *    stopped and why), with the channel to its agent and its bearer,
 *    and for a while the state of fences that stopped;
 *  - the one registry of requests in flight: to the fencer, to an
 *    agent (held until the fence's first verdict), and waiting on a
 *    fence's probe, each answered through its maker's callback, or into
 *    the void once the maker is gone (svc_orphan());
 *  - the one ownership rule (svc_may()), the one `require' decision
 *    (svc_require()), and the one place a request gets the fence's
 *    bearer (svc_to_agent()).
 *
 * A front end turns its wire format into a call here and each struct
 * svc_answer back into its wire format, and knows nothing else.
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

/* Requests waiting on a fence's first verdict: as many as its agent runs. */
#define SVC_HELD_MAX		128
#define SVC_HELD_BYTES		(8 * 1024 * 1024)

/*
 * A stopped fence stays listed, state stopped with its reason, for
 * SVC_STOPPED_SECS, at most SVC_STOPPED_OWNER of one owner and
 * SVC_STOPPED_MAX in all; the oldest goes first, and a new boot of the
 * same owner and key replaces it.
 */
#define SVC_STOPPED_SECS	600
#define SVC_STOPPED_OWNER	64
#define SVC_STOPPED_MAX		1024

struct breq;

struct bfence {
	TAILQ_ENTRY(bfence)	 bf_entry;
	struct msg_fence	 bf_info;	/* f_bearer zero; f_level ours */
	uint8_t			 bf_bearer[MSG_BEARER_LEN];
	struct imsgev		*bf_agent;
	char			*bf_boundary;	/* the last verdicts, JSON */
	char			*bf_rendered;	/* svc_answer's a_rendered */
	int			 bf_probing;	/* a probe runs */
	/*
	 * Until the first verdict is in, nothing but the probe reaches
	 * the agent: other requests are held (bf_nheld of them), and
	 * after a stop of our own they wait for the fence to end.
	 */
	int			 bf_measured;
	int			 bf_stopping;
	TAILQ_HEAD(, breq)	 bf_reqs;	/* agent requests and waiters */
	unsigned int		 bf_nheld;
	unsigned int		 bf_nprocs;	/* background, as the agent
						   last counted */
	size_t			 bf_held_bytes;
	int64_t			 bf_stopped_at;	/* monotonic s; 0: running */
	struct svc_egress	*bf_egress;	/* with a list: svc_egress.c */
};

enum breq_kind {
	BREQ_FENCER = 1,	/* boot, stop, a probe's preparation */
	BREQ_AGENT,		/* exec, git, a probe's own exec */
	BREQ_VERDICT		/* waits for the fence's next verdict */
};

/* A message from the fencer or an agent, decoded once. */
struct svc_msg {
	uint32_t		 m_type;
	const void		*m_data;	/* as it came */
	size_t			 m_len;
	struct msg_fence	*m_fence;	/* BOOTED, STOPPED */
	struct msg_error	*m_error;	/* FAILED, AGENT_ERROR */
	struct msg_verdict	*m_verdict;	/* LEVEL */
	struct msg_exec		*m_exec;	/* PROBE_EXEC */
	struct msg_result	*m_result;	/* AGENT_RESULT */
	struct msg_gitconfig	*m_git;		/* AGENT_GIT_IDENTITY */
	struct msg_proc		*m_proc;	/* AGENT_PROC */
	struct msg_file		*m_file;	/* AGENT_FILE */
	struct msg_filelist	*m_filelist;	/* AGENT_FILE_LIST */
	struct msg_chunk	*m_chunk;	/* AGENT_CHUNK */
};

/* What the service does with an answer to one of its requests. */
typedef void	(*breq_fn)(struct breq *, const struct svc_msg *);

struct breq {
	RB_ENTRY(breq)		 r_node;	/* by r_id */
	TAILQ_ENTRY(breq)	 r_entry;	/* svc_reqs */
	TAILQ_ENTRY(breq)	 r_fentry;	/* r_fence's bf_reqs */
	uint32_t		 r_id;
	enum breq_kind		 r_kind;
	uint32_t		 r_type;	/* what was sent (or held) */
	uid_t			 r_owner;	/* with r_key: whose fence */
	char			 r_key[FENCE_KEY_SIZE];	/* "" for all */
	struct bfence		*r_fence;	/* agent requests, waiters */
	breq_fn			 r_fn;
	svc_cb			 r_cb;		/* the maker's; NULL: gone */
	void			*r_arg;
	const char		*r_noun;	/* svc_who's w_noun */
	uint32_t		 r_parent;	/* a probe's exec: its request */
	int			 r_want;	/* a boot's `require' level */
	int			 r_abandoned;	/* a boot nobody waits for; 2:
						   its stop is sent */
	char			*r_refusal;	/* not met: said once stopped */
	int			 r_counted;	/* in svc_user's counts */
	uid_t			 r_uid;		/* who asked */
	int			 r_exec;	/* a command that runs */
	void			*r_held;	/* held for the first verdict */
	size_t			 r_held_len;	/* (holds the bearer) */
	int			 r_is_held;
	int			 r_list;	/* PROCS: a listing */
	unsigned int		 r_nprocs;	/* of it, so far */
	size_t			 r_unacked;	/* streamed: CHUNK bytes not
						   given back as CREDIT */
};

/* The requests in flight of one user, for the limits per user. */
struct svc_user {
	RB_ENTRY(svc_user)	 su_node;
	uid_t			 su_uid;
	unsigned int		 su_reqs;
	unsigned int		 su_execs;
};

RB_HEAD(breq_tree, breq);
RB_HEAD(svc_user_tree, svc_user);

TAILQ_HEAD(bfence_list, bfence);
static struct bfence_list svc_fences = TAILQ_HEAD_INITIALIZER(svc_fences);
/* Stopped fences kept for their state, oldest first. */
static struct bfence_list svc_kept = TAILQ_HEAD_INITIALIZER(svc_kept);
static TAILQ_HEAD(, breq) svc_reqs = TAILQ_HEAD_INITIALIZER(svc_reqs);
static struct breq_tree	 svc_req_tree = RB_INITIALIZER(&svc_req_tree);
static struct svc_user_tree svc_users = RB_INITIALIZER(&svc_users);
static unsigned int	 svc_nfences;
static unsigned int	 svc_nkept;
static unsigned int	 svc_nreqs;
static uint32_t		 svc_next_id = 1;

static const struct svc_who svc_daemon = { 0, 1, 1, "fence" };

static void	svc_agent_dispatch(struct imsgev *, struct imsg *, void *);
static void	svc_agent_closed(struct imsgev *, int, void *);
static void	svc_probe_start(struct bfence *, int);
static void	svc_stop_fence(struct bfence *);
static void	svc_fail_fence(struct bfence *, const char *, int);
static void	svc_stream_send(struct breq *, uint32_t, uint32_t);

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
static struct bfence *
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
static void
bfence_changed(struct bfence *bf)
{
	free(bf->bf_rendered);
	bf->bf_rendered = NULL;
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
	free(bf->bf_boundary);
	free(bf->bf_rendered);
	explicit_bzero(bf, sizeof(*bf));
	free(bf);
}

/*
 * The one ownership rule: a user acts on and sees their own fences;
 * root and the admin group (w_admin) those of everyone.
 */
static int
svc_may(const struct svc_who *w, uid_t owner)
{
	return (owner == w->w_uid || w->w_admin);
}

/* The owner a request names: none (a plain KEY) is the asker's own. */
static uid_t
svc_owner(const struct svc_who *w, uid_t named)
{
	return (named == MSG_OWNER_NONE ? w->w_uid : named);
}

/* Answers. */

static void
svc_say(svc_cb cb, void *arg, const struct svc_answer *a)
{
	if (cb != NULL)
		cb(arg, a);
}

static void
svc_say_error(svc_cb cb, void *arg, const char *code, const char *message)
{
	struct svc_answer a;

	memset(&a, 0, sizeof(a));
	a.a_what = SVC_ERROR;
	a.a_last = 1;
	a.a_code = code;
	a.a_message = message;
	svc_say(cb, arg, &a);
}

/* A refusal before any request was made. */
static void __attribute__((format(printf, 4, 5)))
svc_refuse(svc_cb cb, void *arg, const char *code, const char *fmt, ...)
{
	char		 message[MSG_ERROR_TEXT_MAX];
	va_list		 ap;

	va_start(ap, fmt);
	vsnprintf(message, sizeof(message), fmt, ap);
	va_end(ap);
	svc_say_error(cb, arg, code, message);
}

/*
 * Owner's fence KEY if w may act on it; else "not-found" is said, as
 * for a fence that does not exist: whether another's exists is not
 * theirs to know.
 */
static struct bfence *
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
 * A fence's state for a front end: bf's record (whose bf_info holds no
 * bearer), or else a message's info, copied to *copy without its bearer.
 */
static void
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
		return;
	}
	*copy = *info;
	explicit_bzero(copy->f_bearer, sizeof(copy->f_bearer));
	a->a_fence = copy;
}

/* The requests in flight. */

static int	breq_cmp(struct breq *, struct breq *);
static int	svc_user_cmp(struct svc_user *, struct svc_user *);
RB_PROTOTYPE(breq_tree, breq, r_node, breq_cmp);
RB_PROTOTYPE(svc_user_tree, svc_user, su_node, svc_user_cmp);

static int
breq_cmp(struct breq *a, struct breq *b)
{
	return (a->r_id < b->r_id ? -1 : a->r_id > b->r_id);
}

static int
svc_user_cmp(struct svc_user *a, struct svc_user *b)
{
	return (a->su_uid < b->su_uid ? -1 : a->su_uid > b->su_uid);
}

RB_GENERATE(breq_tree, breq, r_node, breq_cmp);
RB_GENERATE(svc_user_tree, svc_user, su_node, svc_user_cmp);

static struct svc_user *
svc_user_get(uid_t uid, int create)
{
	struct svc_user	 key, *su;

	key.su_uid = uid;
	if ((su = RB_FIND(svc_user_tree, &svc_users, &key)) != NULL ||
	    !create)
		return (su);
	if ((su = calloc(1, sizeof(*su))) == NULL)
		fatal("%s: calloc", __func__);
	su->su_uid = uid;
	RB_INSERT(svc_user_tree, &svc_users, su);
	return (su);
}

/*
 * A request about owner's KEY, answered to fn; w (NULL for the
 * daemon's own) is who asked, counted for the limits per user until it
 * is done, cb and arg the maker's.  exec: a command that will run.
 */
static struct breq *
breq_new(enum breq_kind kind, uid_t owner, const char *key, breq_fn fn,
    const struct svc_who *w, int exec, svc_cb cb, void *arg)
{
	struct breq	*r;
	struct svc_user	*su;

	if ((r = calloc(1, sizeof(*r))) == NULL)
		fatal("%s: calloc", __func__);
	/* Ids wrap; one still in flight is skipped, never shared. */
	do {
		r->r_id = svc_next_id++;
	} while (r->r_id == 0 ||
	    RB_INSERT(breq_tree, &svc_req_tree, r) != NULL);
	r->r_kind = kind;
	r->r_owner = owner;
	strlcpy(r->r_key, key, sizeof(r->r_key));
	r->r_fn = fn;
	r->r_cb = cb;
	r->r_arg = arg;
	r->r_noun = (w != NULL ? w : &svc_daemon)->w_noun;
	if (w != NULL) {
		su = svc_user_get(w->w_uid, 1);
		r->r_counted = 1;
		r->r_uid = w->w_uid;
		r->r_exec = exec != 0;
		su->su_reqs++;
		if (r->r_exec)
			su->su_execs++;
	}
	TAILQ_INSERT_TAIL(&svc_reqs, r, r_entry);
	svc_nreqs++;
	return (r);
}

static void
breq_attach(struct breq *r, struct bfence *bf)
{
	r->r_fence = bf;
	TAILQ_INSERT_TAIL(&bf->bf_reqs, r, r_fentry);
}

static struct breq *
breq_find(uint32_t id)
{
	struct breq	 key;

	if (id == 0)
		return (NULL);
	key.r_id = id;
	return (RB_FIND(breq_tree, &svc_req_tree, &key));
}

static void
breq_unhold(struct breq *r)
{
	if (!r->r_is_held)
		return;
	r->r_fence->bf_nheld--;
	r->r_fence->bf_held_bytes -= r->r_held_len;
	explicit_bzero(r->r_held, r->r_held_len);
	free(r->r_held);
	r->r_held = NULL;
	r->r_held_len = 0;
	r->r_is_held = 0;
}

static void
breq_done(struct breq *r)
{
	struct svc_user	*su;

	if (r->r_counted && (su = svc_user_get(r->r_uid, 0)) != NULL) {
		su->su_reqs--;
		if (r->r_exec)
			su->su_execs--;
		if (su->su_reqs == 0) {
			RB_REMOVE(svc_user_tree, &svc_users, su);
			free(su);
		}
	}
	if (r->r_fence != NULL) {
		breq_unhold(r);
		TAILQ_REMOVE(&r->r_fence->bf_reqs, r, r_fentry);
	}
	RB_REMOVE(breq_tree, &svc_req_tree, r);
	TAILQ_REMOVE(&svc_reqs, r, r_entry);
	svc_nreqs--;
	free(r->r_refusal);
	free(r);
}

/*
 * Tell r's maker; the last answer ends r first, so a maker that goes
 * away while it hears it (svc_orphan()) finds nothing left of it.
 */
static void
breq_reply(struct breq *r, const struct svc_answer *a)
{
	svc_cb		 cb = r->r_cb;
	void		*arg = r->r_arg;

	if (a->a_last)
		breq_done(r);
	svc_say(cb, arg, a);
}

/*
 * The last answer of r: an error.  The message is made before r ends,
 * as its arguments may be r's own (r_key, r_noun).
 */
static void __attribute__((format(printf, 3, 4)))
breq_error(struct breq *r, const char *code, const char *fmt, ...)
{
	svc_cb		 cb = r->r_cb;
	void		*arg = r->r_arg;
	char		 message[MSG_ERROR_TEXT_MAX];
	va_list		 ap;

	va_start(ap, fmt);
	vsnprintf(message, sizeof(message), fmt, ap);
	va_end(ap);
	breq_done(r);
	svc_say_error(cb, arg, code, message);
}

/* The last answer of r: bf's state. */
static void
breq_reply_fence(struct breq *r, struct bfence *bf)
{
	struct svc_answer a;

	svc_fence_answer(&a, bf, NULL, NULL);
	a.a_last = 1;
	breq_reply(r, &a);
}

/* The last answer of r: the error the fencer sent (FAILED). */
static void
breq_failed(struct breq *r, const struct svc_msg *m)
{
	breq_error(r, m->m_error->e_code, "%s", m->m_error->e_message);
}

static void	svc_stop_key(uid_t, const char *);

/*
 * Whether boot r, sent to the fencer and not answered, is the only one
 * that can have made a fence of its owner and key there: no fence of
 * them is known here, and no other boot of them is in flight.  (One
 * that is would be refused `exists', and a stop by owner and key would
 * end the other's fence.)
 */
static int
svc_boot_alone(const struct breq *r)
{
	const struct breq *o;

	if (bfence_find(r->r_owner, r->r_key) != NULL)
		return (0);
	TAILQ_FOREACH(o, &svc_reqs, r_entry)
		if (o != r && o->r_kind == BREQ_FENCER &&
		    o->r_type == IMSG_FENCE_BOOT && o->r_owner == r->r_owner &&
		    strcmp(o->r_key, r->r_key) == 0)
			return (0);
	return (1);
}

/*
 * A boot whose maker went away before its answer (fencectl gave up or
 * was interrupted, an HTTP client closed): nobody learns that the
 * fence is up, so it is not left to run unowned.  One still being built
 * is stopped in the fencer now, where it alone can be that key's (a
 * vm nobody waits for does not boot on for minutes): its boot then
 * fails into the void, or, if the fence came up meanwhile,
 * svc_booted() hides it until the stop ends it.  Otherwise it is
 * stopped once it comes up (svc_booted()).  One up and waiting for its
 * `require' verdict is stopped as a fence below what was asked would
 * be.  Either way it is never listed again.
 */
static void
svc_abandon(struct breq *r)
{
	log_info("fence %s of uid %u: the client of its boot went away; "
	    "stopping it", r->r_key, (unsigned)r->r_owner);
	if (r->r_kind == BREQ_FENCER) {
		r->r_abandoned = 1;
		if (svc_boot_alone(r)) {
			r->r_abandoned = 2;
			svc_stop_key(r->r_owner, r->r_key);
		}
	} else if (!r->r_fence->bf_stopping)
		svc_stop_fence(r->r_fence);
}

/*
 * The maker went away: its requests are answered into the void, and
 * one that only waited to tell it a verdict is over.  A boot not yet
 * answered is abandoned (svc_abandon()).  A maker has few requests (its
 * front end bounds them), but all are looked through: once per maker.
 */
void
svc_orphan(void *arg)
{
	struct breq	*r, *next;

	TAILQ_FOREACH_SAFE(r, &svc_reqs, r_entry, next) {
		if (r->r_arg != arg || r->r_cb == NULL)
			continue;
		r->r_cb = NULL;
		if ((r->r_kind == BREQ_FENCER &&
		    r->r_type == IMSG_FENCE_BOOT) ||
		    (r->r_kind == BREQ_VERDICT && r->r_want != 0))
			svc_abandon(r);
		else if (r->r_kind == BREQ_VERDICT)
			breq_done(r);
		/* A stream nobody reads: its command dies (or never runs). */
		else if (r->r_kind == BREQ_AGENT &&
		    r->r_type == IMSG_AGENT_EXEC_STREAM) {
			if (r->r_is_held)
				breq_done(r);
			else
				svc_stream_send(r, IMSG_AGENT_CANCEL, 0);
		}
	}
}

/* All of uid's requests in flight, orphans included. */
unsigned int
svc_pending(uid_t uid)
{
	struct svc_user	*su;

	return ((su = svc_user_get(uid, 0)) == NULL ? 0 : su->su_reqs);
}

/* All requests in flight. */
unsigned int
svc_total(void)
{
	return (svc_nreqs);
}

/* uid's commands still running, their makers gone or not. */
static unsigned int
svc_execs(uid_t uid)
{
	struct svc_user	*su;

	return ((su = svc_user_get(uid, 0)) == NULL ? 0 : su->su_execs);
}

static void
svc_to_fencer(struct breq *r, uint32_t type, const void *buf, size_t len)
{
	r->r_type = type;
	if (proc_compose(&broker_self, PROC_FENCER, type, r->r_id, -1, buf,
	    len) == -1)
		fatal("%s: %s", __func__, msg_type_name(type));
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
static struct bfence *
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
 * Which kernel answered the verdict, for the state: the kernel axis and
 * the release the fence reported, printable ASCII only (it is the
 * fence's word).
 */
static void
svc_kernel_of(const char *json, struct msg_fence *f)
{
	json_t		*root, *v;
	const char	*s;
	size_t		 i;

	f->f_kernel = MSG_KERNEL_UNMEASURED;
	f->f_kernel_release[0] = '\0';
	if ((root = json_loads(json, 0, NULL)) == NULL)
		return;
	v = json_object_get(json_object_get(json_object_get(root, "axes"),
	    "kernel"), "verdict");
	if ((s = json_string_value(v)) != NULL && strcmp(s, "separate") == 0)
		f->f_kernel = MSG_KERNEL_SEPARATE;
	else if (s != NULL && strcmp(s, "shared") == 0)
		f->f_kernel = MSG_KERNEL_SHARED;
	v = json_object_get(json_object_get(root, "kernel"), "release");
	if ((s = json_string_value(v)) != NULL) {
		strlcpy(f->f_kernel_release, s, sizeof(f->f_kernel_release));
		for (i = 0; f->f_kernel_release[i] != '\0'; i++)
			if ((unsigned char)f->f_kernel_release[i] < 0x20 ||
			    (unsigned char)f->f_kernel_release[i] > 0x7e)
				f->f_kernel_release[i] = '?';
	}
	json_decref(root);
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
	struct msg_egress_counts egress = bf->bf_info.f_egress_n;

	strlcpy(release, bf->bf_info.f_kernel_release, sizeof(release));
	bf->bf_info = *info;
	bf->bf_info.f_egress_n = egress;
	bf->bf_info.f_level = level;
	bf->bf_info.f_kernel = kernel;
	strlcpy(bf->bf_info.f_kernel_release, release, sizeof(release));
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
			svc_fence_answer(&a, bf, NULL, NULL);
			svc_say(cb, arg, &a);
			n++;
		}
	return (n);
}

/* Boot. */

static void	svc_booted(struct breq *, const struct svc_msg *);

/*
 * Boot b for w.  The fencer builds it; whether it earned b_require is
 * decided here (svc_require()), after its first verdict, and only
 * then is the boot answered.
 */
void
svc_boot(const struct svc_who *w, struct msg_boot *b, svc_cb cb, void *arg)
{
	struct breq	*r;
	void		*buf;
	size_t		 len;
	int		 want;

	b->b_owner = w->w_uid;
	b->b_admin = w->w_admin;
	want = b->b_require;
	b->b_require = 0;
	if (bfence_find(b->b_owner, b->b_key) != NULL) {
		svc_refuse(cb, arg, "exists", "%s %s is already running",
		    w->w_noun, b->b_key);
		return;
	}
	if (msg_boot_encode(b, &buf, &len) == -1) {
		svc_refuse(cb, arg, "bad-request", "cannot encode the boot "
		    "request");
		return;
	}
	r = breq_new(BREQ_FENCER, b->b_owner, b->b_key, svc_booted, w, 0,
	    cb, arg);
	r->r_want = want;
	svc_to_fencer(r, IMSG_FENCE_BOOT, buf, len);
	explicit_bzero(buf, len);
	free(buf);
}

/* The fencer booted a fence: it is measured right away. */
static struct bfence *
bfence_add(struct msg_fence *info, int fd)
{
	struct bfence	*bf;

	if (bfence_find(info->f_owner, info->f_key) != NULL)
		fatalx("%s: fencer booted %u's %s twice", __func__,
		    (unsigned)info->f_owner, info->f_key);
	/* A new boot replaces what was kept of the last one. */
	if ((bf = stopped_find(info->f_owner, info->f_key)) != NULL)
		stopped_drop(bf);
	if ((bf = calloc(1, sizeof(*bf))) == NULL)
		fatal("%s: calloc", __func__);
	bf->bf_info = *info;
	/* The bearer is kept apart, for svc_agent_encode() alone. */
	memcpy(bf->bf_bearer, info->f_bearer, sizeof(bf->bf_bearer));
	explicit_bzero(bf->bf_info.f_bearer, sizeof(bf->bf_info.f_bearer));
	if ((bf->bf_agent = imsgev_new(broker_self.ps_evbase, fd,
	    svc_agent_dispatch, svc_agent_closed, bf)) == NULL)
		fatal("%s: imsgev_new", __func__);
	TAILQ_INIT(&bf->bf_reqs);
	TAILQ_INSERT_TAIL(&svc_fences, bf, bf_entry);
	svc_nfences++;
	/* The proxy knows the fence before its agent can be asked a thing. */
	bf->bf_egress = svc_egress_new(&bf->bf_info, &bf->bf_info.f_egress_n,
	    bfence_changed_cb, bf);
	/* Until the report is in it is unmeasured. */
	bf->bf_info.f_level = 0;
	svc_probe_start(bf, 0);
	return (bf);
}

static void
svc_booted(struct breq *r, const struct svc_msg *m)
{
	struct bfence	*bf;

	switch (m->m_type) {
	case IMSG_FENCE_BOOTED:
		bf = bfence_find(r->r_owner, r->r_key);
		/* Nobody's to use: stopped, or its stop is on its way. */
		if (r->r_abandoned) {
			if (r->r_abandoned == 2)
				bf->bf_stopping = 1;
			else
				svc_stop_fence(bf);
			breq_done(r);
			return;
		}
		/* Nothing runs in a fence before it earned what was asked. */
		if (r->r_want != 0) {
			r->r_kind = BREQ_VERDICT;
			breq_attach(r, bf);
			return;
		}
		breq_reply_fence(r, bf);
		return;
	case IMSG_FENCE_FAILED:
		breq_failed(r, m);
		return;
	}
	fatalx("%s: %s to a boot", __func__, msg_type_name(m->m_type));
}

/*
 * The one `require' decision, on a boot's first verdict: a fence that
 * measured what was asked is answered booted; one below it, or not
 * measured, is stopped, and once it is gone (nothing of it left to
 * list, count or find in a cgroup) the boot fails naming every
 * violation the prober found.
 */
static void	svc_kernel_short(const char *, int, char *, size_t);

static void
svc_require(struct breq *r, struct bfence *bf, const struct svc_msg *m)
{
	char		 why[MSG_ERROR_TEXT_MAX], kern[160];
	int		 rv;

	if (m->m_type == IMSG_FENCE_LEVEL &&
	    level_satisfies(m->m_verdict->v_level, r->r_want)) {
		breq_reply_fence(r, bf);
		return;
	}
	if (m->m_type != IMSG_FENCE_LEVEL)
		rv = asprintf(&r->r_refusal, "%s %s was stopped: %s: %s",
		    r->r_noun, r->r_key, m->m_error->e_code,
		    m->m_error->e_message);
	else {
		svc_violations(m->m_verdict->v_json, why, sizeof(why));
		svc_kernel_short(m->m_verdict->v_json, r->r_want, kern,
		    sizeof(kern));
		rv = asprintf(&r->r_refusal, "%s %s measured %s, required "
		    "%s; stopped: %s%s", r->r_noun, r->r_key,
		    level_name(m->m_verdict->v_level), level_name(r->r_want),
		    kern, why);
	}
	if (rv == -1)
		fatal("%s: asprintf", __func__);
	/*
	 * Said once the fence is gone (svc_fail_fence()), not before; an
	 * abandoned boot's is being stopped already (svc_abandon()).
	 */
	if (!bf->bf_stopping)
		svc_stop_fence(bf);
}

/* Stop. */

static void	svc_stop_answer(struct breq *, const struct svc_msg *);

/*
 * Stop NAMED's (MSG_OWNER_NONE: w's) KEY, answered with its last state;
 * with key "", every fence w may see, each said as it stops, then
 * SVC_END.
 */
void
svc_stop(const struct svc_who *w, uid_t named, const char *key, svc_cb cb,
    void *arg)
{
	struct msg_fence_req q;
	struct breq	*r;
	void		*buf;
	size_t		 len;

	memset(&q, 0, sizeof(q));
	strlcpy(q.r_key, key, sizeof(q.r_key));
	q.r_uid = w->w_uid;
	q.r_admin = w->w_admin;
	q.r_owner = key[0] == '\0' ? MSG_OWNER_NONE : svc_owner(w, named);
	if (key[0] != '\0' && !svc_may(w, q.r_owner)) {
		svc_refuse(cb, arg, "not-found", "no %s %u/%s", w->w_noun,
		    (unsigned)q.r_owner, key);
		return;
	}
	if (msg_fence_req_encode(&q, &buf, &len) == -1)
		fatal("%s: encode", __func__);
	r = breq_new(BREQ_FENCER, q.r_owner == MSG_OWNER_NONE ? w->w_uid :
	    q.r_owner, key, svc_stop_answer, w, 0, cb, arg);
	svc_to_fencer(r, IMSG_FENCE_STOP, buf, len);
	free(buf);
}

/*
 * Stop owner's KEY, running or booting, on the daemon's own account;
 * nobody hears the answer (not-found: it failed to boot meanwhile).
 */
static void
svc_stop_key(uid_t owner, const char *key)
{
	struct msg_fence_req q;
	struct breq	*r;
	void		*buf;
	size_t		 len;

	memset(&q, 0, sizeof(q));
	strlcpy(q.r_key, key, sizeof(q.r_key));
	q.r_owner = owner;
	q.r_admin = 1;
	if (msg_fence_req_encode(&q, &buf, &len) == -1)
		fatal("%s: encode", __func__);
	r = breq_new(BREQ_FENCER, q.r_owner, q.r_key, svc_stop_answer, NULL, 0,
	    NULL, NULL);
	svc_to_fencer(r, IMSG_FENCE_STOP, buf, len);
	free(buf);
}

/* Stop a running fence on the daemon's own account: it is nobody's now. */
static void
svc_stop_fence(struct bfence *bf)
{
	/* What waits on the verdict now waits for the end, and fails. */
	bf->bf_stopping = 1;
	svc_stop_key(bf->bf_info.f_owner, bf->bf_info.f_key);
}

static void
svc_stop_answer(struct breq *r, const struct svc_msg *m)
{
	struct svc_answer a;
	struct msg_fence copy;

	switch (m->m_type) {
	case IMSG_FENCE_STOPPED:
		svc_fence_answer(&a, stopped_find(m->m_fence->f_owner,
		    m->m_fence->f_key), m->m_fence, &copy);
		/* stop KEY ends with its one answer; stop all with END. */
		a.a_last = r->r_key[0] != '\0';
		breq_reply(r, &a);
		explicit_bzero(&copy, sizeof(copy));
		return;
	case IMSG_FENCE_END:
		memset(&a, 0, sizeof(a));
		a.a_what = SVC_END;
		a.a_last = 1;
		breq_reply(r, &a);
		return;
	case IMSG_FENCE_FAILED:
		breq_failed(r, m);
		return;
	}
	fatalx("%s: %s to a stop", __func__, msg_type_name(m->m_type));
}

/* The fence ended (the fencer said so): it is kept as stopped. */
static void
bfence_remove(struct bfence *bf, const struct msg_fence *info)
{
	TAILQ_REMOVE(&svc_fences, bf, bf_entry);
	svc_nfences--;
	if (bf->bf_agent != NULL)
		imsgev_free(bf->bf_agent);
	bf->bf_agent = NULL;
	svc_egress_end(bf->bf_egress);
	svc_fail_fence(bf, "stopped", 1);
	/*
	 * One the service stopped itself was never its owner's to use:
	 * a `require' not met was refused to whoever booted it, who heard
	 * why, and an abandoned boot was said in the log (svc_abandon()).
	 * It is not kept.
	 */
	if (bf->bf_stopping)
		bfence_free(bf);
	else
		stopped_keep(bf, info);
}

/* Requests to the agent. */

static void	svc_agent_answer(struct breq *, const struct svc_msg *);

/*
 * Encode msg, a request of type for bf's agent, with bf's bearer: the
 * one place a request gets it.  The bearer is wiped from msg again; the
 * caller wipes *buf.
 */
static int
svc_agent_encode(struct bfence *bf, uint32_t type, void *msg, void **buf,
    size_t *len)
{
	struct msg_exec	*x = msg;
	struct msg_gitconfig *g = msg;
	struct msg_gitinit *gi = msg;
	struct msg_proc_req *q = msg;
	struct msg_file	*fl = msg;
	uint8_t		*bearer;
	int		 rv;

	switch (type) {
	case IMSG_AGENT_EXEC:
	case IMSG_AGENT_SPAWN:
	case IMSG_AGENT_EXEC_STREAM:
	case IMSG_AGENT_PROBE:
		bearer = x->x_bearer;
		break;
	case IMSG_AGENT_PROCS:
		bearer = q->q_bearer;
		break;
	case IMSG_AGENT_GIT_CONFIG:
		bearer = g->g_bearer;
		break;
	case IMSG_AGENT_GIT_INIT:
		bearer = gi->gi_bearer;
		break;
	case IMSG_AGENT_FILE_READ:
	case IMSG_AGENT_FILE_WRITE:
	case IMSG_AGENT_FILE_DELETE:
		bearer = fl->fl_bearer;
		break;
	default:
		fatalx("%s: %s", __func__, msg_type_name(type));
	}
	memcpy(bearer, bf->bf_bearer, MSG_BEARER_LEN);
	switch (type) {
	case IMSG_AGENT_EXEC:
	case IMSG_AGENT_SPAWN:
	case IMSG_AGENT_EXEC_STREAM:
	case IMSG_AGENT_PROBE:
		rv = msg_exec_encode(x, buf, len);
		break;
	case IMSG_AGENT_PROCS:
		rv = msg_proc_req_encode(q, buf, len);
		break;
	case IMSG_AGENT_GIT_CONFIG:
		rv = msg_gitconfig_encode(g, buf, len);
		break;
	case IMSG_AGENT_FILE_READ:
	case IMSG_AGENT_FILE_WRITE:
	case IMSG_AGENT_FILE_DELETE:
		rv = msg_file_encode(fl, buf, len);
		break;
	default:
		rv = msg_gitinit_encode(gi, buf, len);
		break;
	}
	explicit_bzero(bearer, MSG_BEARER_LEN);
	return (rv);
}

/*
 * Every request for a fence's agent passes here: the exec and git
 * requests of users and the probe's own exec (probe: it decides the
 * level, so it never waits).  DESIGN.md section 3: nothing runs in a
 * fence that has not earned what was asked, so until the first
 * verdict is in (and the service knows whether the fence stays) a
 * request is held, at most SVC_HELD_MAX of them and SVC_HELD_BYTES per
 * fence; beyond that it is refused at once.  A fence the service is
 * stopping takes nothing more: what is held fails with its end.  r is
 * answered (and ended) here when it cannot go.
 */
static void
svc_to_agent(struct bfence *bf, struct breq *r, uint32_t type, void *msg,
    int probe)
{
	void		*buf;
	size_t		 len;

	r->r_type = type;
	breq_attach(r, bf);
	if (bf->bf_agent == NULL) {
		breq_error(r, "fence-stopped", "%s %s has no agent",
		    r->r_noun, r->r_key);
		return;
	}
	if (svc_agent_encode(bf, type, msg, &buf, &len) == -1) {
		breq_error(r, "bad-request", "cannot encode the request");
		return;
	}
	if (probe || (bf->bf_measured && !bf->bf_stopping)) {
		if (imsgev_compose(bf->bf_agent, type, r->r_id, 0, -1, buf,
		    len) == -1)
			breq_error(r, "fence-stopped", "%s %s: %s", r->r_noun,
			    r->r_key, strerror(errno));
		explicit_bzero(buf, len);
		free(buf);
		return;
	}
	if (bf->bf_nheld >= SVC_HELD_MAX ||
	    len > SVC_HELD_BYTES - bf->bf_held_bytes) {
		explicit_bzero(buf, len);
		free(buf);
		breq_error(r, "exec-busy", "%s %s is not measured yet and "
		    "has %u requests (%zu bytes) waiting already", r->r_noun,
		    r->r_key, bf->bf_nheld, bf->bf_held_bytes);
		return;
	}
	r->r_held = buf;
	r->r_held_len = len;
	r->r_is_held = 1;
	bf->bf_nheld++;
	bf->bf_held_bytes += len;
	log_debug("fence %s: request %u waits for the first verdict",
	    r->r_key, r->r_id);
}

/* A user's request for NAMED's KEY's agent: exec, git config, git init. */
static void
svc_agent_req(const struct svc_who *w, uid_t named, const char *key,
    uint32_t type, void *msg, svc_cb cb, void *arg)
{
	const struct fenced_config *c = &broker_self.ps_conf;
	struct bfence	*bf;
	struct breq	*r;
	int		 exec = type == IMSG_AGENT_EXEC ||
			    type == IMSG_AGENT_EXEC_STREAM;

	if ((bf = svc_fence_for(w, named, key, cb, arg)) == NULL)
		return;
	if (exec && !w->w_unbounded &&
	    svc_execs(w->w_uid) >= c->c_exec_inflight_user) {
		svc_refuse(cb, arg, "too-many-execs", "at most %u commands "
		    "of one user run at once", c->c_exec_inflight_user);
		return;
	}
	r = breq_new(BREQ_AGENT, bf->bf_info.f_owner, bf->bf_info.f_key,
	    svc_agent_answer, w, exec, cb, arg);
	svc_to_agent(bf, r, type, msg, 0);
}

void
svc_exec(const struct svc_who *w, struct msg_exec *x, svc_cb cb, void *arg)
{
	svc_agent_req(w, x->x_owner, x->x_key, IMSG_AGENT_EXEC, x, cb, arg);
}

/*
 * A streamed exec: SVC_CHUNK answers as the command writes, then its
 * RESULT or ERROR.  At most MSG_STREAM_WINDOW bytes of chunks are out
 * that the maker has not handed back with svc_stream_credit(): it does
 * so once it has passed them on, and the command waits till then.
 */
void
svc_exec_stream(const struct svc_who *w, struct msg_exec *x, svc_cb cb,
    void *arg)
{
	svc_agent_req(w, x->x_owner, x->x_key, IMSG_AGENT_EXEC_STREAM, x, cb,
	    arg);
}

/* CREDIT (bytes) or CANCEL (0) to r's agent, with the fence's bearer. */
static void
svc_stream_send(struct breq *r, uint32_t type, uint32_t bytes)
{
	struct msg_credit cr;
	struct bfence	*bf = r->r_fence;
	void		*buf;
	size_t		 len;

	if (bf == NULL || bf->bf_agent == NULL)
		return;
	memset(&cr, 0, sizeof(cr));
	memcpy(cr.cr_bearer, bf->bf_bearer, sizeof(cr.cr_bearer));
	cr.cr_bytes = bytes;
	if (msg_credit_encode(&cr, &buf, &len) == -1)
		fatal("%s: msg_credit_encode", __func__);
	explicit_bzero(&cr, sizeof(cr));
	if (imsgev_compose(bf->bf_agent, type, r->r_id, 0, -1, buf,
	    len) == -1)
		log_warn("fence %s: %s for request %u", bf->bf_info.f_key,
		    msg_type_name(type), r->r_id);
	explicit_bzero(buf, len);
	free(buf);
}

/*
 * The maker (arg) of streamed request id passed n bytes of its chunks
 * on: the agent may send that much more.  An id that is over, or not
 * the maker's, is let be.
 */
void
svc_stream_credit(uint32_t id, void *arg, size_t n)
{
	struct breq	*r;

	if ((r = breq_find(id)) == NULL || r->r_arg != arg ||
	    r->r_cb == NULL || r->r_kind != BREQ_AGENT ||
	    r->r_type != IMSG_AGENT_EXEC_STREAM)
		return;
	if (n > r->r_unacked)
		n = r->r_unacked;
	if (n == 0)
		return;
	r->r_unacked -= n;
	svc_stream_send(r, IMSG_AGENT_CREDIT, (uint32_t)n);
}

void
svc_git_config(const struct svc_who *w, struct msg_gitconfig *g, svc_cb cb,
    void *arg)
{
	svc_agent_req(w, g->g_owner, g->g_key, IMSG_AGENT_GIT_CONFIG, g, cb,
	    arg);
}

/* One file request (docs/files.md); files.c makes a transfer of them. */
void
svc_file(const struct svc_who *w, uint32_t type, struct msg_file *fl,
    svc_cb cb, void *arg)
{
	if (type != IMSG_AGENT_FILE_READ && type != IMSG_AGENT_FILE_WRITE &&
	    type != IMSG_AGENT_FILE_DELETE)
		fatalx("%s: %s", __func__, msg_type_name(type));
	svc_agent_req(w, fl->fl_owner, fl->fl_key, type, fl, cb, arg);
}

void
svc_git_init(const struct svc_who *w, struct msg_gitinit *gi, svc_cb cb,
    void *arg)
{
	svc_agent_req(w, gi->gi_owner, gi->gi_key, IMSG_AGENT_GIT_INIT, gi,
	    cb, arg);
}

/* Background processes: docs/http.md, "Background processes". */

static void	svc_proc_answer(struct breq *, const struct svc_msg *);

/* Starts in flight for bf: they count against its processes too. */
static unsigned int
svc_spawning(struct bfence *bf)
{
	struct breq	*r;
	unsigned int	 n = 0;

	TAILQ_FOREACH(r, &bf->bf_reqs, r_fentry)
		if (r->r_type == IMSG_AGENT_SPAWN)
			n++;
	return (n);
}

/*
 * Start x in the background in its fence.  At most `exec processes'
 * per fence, exited ones included until deleted; timeoutMs at most
 * what is left of the fence's lifetime, and that by default: it dies
 * with the fence either way.
 */
void
svc_spawn(const struct svc_who *w, struct msg_exec *x, svc_cb cb, void *arg)
{
	const struct fenced_config *c = &broker_self.ps_conf;
	struct bfence	*bf;
	struct breq	*r;
	int64_t		 left;

	if ((bf = svc_fence_for(w, x->x_owner, x->x_key, cb, arg)) == NULL)
		return;
	if (bf->bf_nprocs + svc_spawning(bf) >= c->c_exec_processes) {
		svc_refuse(cb, arg, "too-many-processes", "%s %s holds %u "
		    "background processes (exec processes %u): delete "
		    "exited ones first", w->w_noun, x->x_key,
		    bf->bf_nprocs + svc_spawning(bf), c->c_exec_processes);
		return;
	}
	left = ((int64_t)bf->bf_info.f_deadline - (int64_t)time(NULL)) * 1000;
	if (left < EXEC_TIMEOUT_MIN)
		left = EXEC_TIMEOUT_MIN;
	if (left > (int64_t)LIFETIME_MAX * 1000)
		left = (int64_t)LIFETIME_MAX * 1000;
	if (x->x_timeout_ms == 0)
		x->x_timeout_ms = (uint32_t)left;
	else if (x->x_timeout_ms > left) {
		svc_refuse(cb, arg, "exec-bad-request", "timeoutMs must be "
		    "%u..%lld: %s %s ends in %lld ms", EXEC_TIMEOUT_MIN,
		    (long long)left, w->w_noun, x->x_key, (long long)left);
		return;
	}
	r = breq_new(BREQ_AGENT, bf->bf_info.f_owner, bf->bf_info.f_key,
	    svc_proc_answer, w, 0, cb, arg);
	svc_to_agent(bf, r, IMSG_AGENT_SPAWN, x, 0);
}

/* List, read or signal the background processes of q's fence. */
void
svc_procs(const struct svc_who *w, struct msg_proc_req *q, svc_cb cb,
    void *arg)
{
	struct bfence	*bf;
	struct breq	*r;

	if ((bf = svc_fence_for(w, q->q_owner, q->q_key, cb, arg)) == NULL)
		return;
	r = breq_new(BREQ_AGENT, bf->bf_info.f_owner, bf->bf_info.f_key,
	    svc_proc_answer, w, 0, cb, arg);
	r->r_list = q->q_op == MSG_PROC_LIST;
	svc_to_agent(bf, r, IMSG_AGENT_PROCS, q, 0);
}

/*
 * The agent's PROC (a listing's are not the last), PROC_END or ERROR.
 * Its count of processes is what `exec processes' holds the fence to.
 */
static void
svc_proc_answer(struct breq *r, const struct svc_msg *m)
{
	struct svc_answer a;

	memset(&a, 0, sizeof(a));
	a.a_last = 1;
	switch (m->m_type) {
	case IMSG_AGENT_PROC:
		if (r->r_fence != NULL)
			r->r_fence->bf_nprocs = m->m_proc->p_count;
		a.a_what = SVC_PROC;
		a.a_proc = m->m_proc;
		a.a_last = !r->r_list;
		r->r_nprocs++;
		break;
	case IMSG_AGENT_PROC_END:
		if (r->r_fence != NULL)
			r->r_fence->bf_nprocs = r->r_nprocs;
		a.a_what = SVC_END;
		break;
	default:
		a.a_what = SVC_ERROR;
		a.a_code = m->m_error->e_code;
		a.a_message = m->m_error->e_message;
		break;
	}
	breq_reply(r, &a);
}

/* An agent's answer to a user's request, checked whole by now. */
static void
svc_agent_answer(struct breq *r, const struct svc_msg *m)
{
	struct svc_answer a;

	memset(&a, 0, sizeof(a));
	a.a_last = 1;
	switch (m->m_type) {
	case IMSG_AGENT_RESULT:
		a.a_what = SVC_RESULT;
		a.a_result = m->m_result;
		a.a_raw = m->m_data;
		a.a_rawlen = m->m_len;
		break;
	case IMSG_AGENT_GIT_IDENTITY:
		a.a_what = SVC_IDENTITY;
		a.a_git = m->m_git;
		break;
	case IMSG_AGENT_FILE:
		a.a_what = SVC_FILE;
		a.a_file = m->m_file;
		break;
	case IMSG_AGENT_FILE_LIST:
		a.a_what = SVC_FILE_LIST;
		a.a_filelist = m->m_filelist;
		break;
	case IMSG_AGENT_CHUNK:
		a.a_what = SVC_CHUNK;
		a.a_last = 0;
		a.a_chunk = m->m_chunk;
		a.a_id = r->r_id;
		break;
	default:
		a.a_what = SVC_ERROR;
		a.a_code = m->m_error->e_code;
		a.a_message = m->m_error->e_message;
		break;
	}
	breq_reply(r, &a);
}

/* Answer r with an agent error of our own, as the agent would. */
static void
breq_agent_error(struct breq *r, const char *code, const char *message)
{
	struct msg_error e;
	struct svc_msg	 m;

	memset(&e, 0, sizeof(e));
	strlcpy(e.e_code, code, sizeof(e.e_code));
	strlcpy(e.e_message, message, sizeof(e.e_message));
	memset(&m, 0, sizeof(m));
	m.m_type = IMSG_AGENT_ERROR;
	m.m_error = &e;
	r->r_fn(r, &m);
}

/*
 * bf is gone, or its agent is (not gone: the fence may still run):
 * every request about it fails now, not never (a probe's own exec too,
 * which tells the fencer), and what waited on its verdict hears it will
 * not come.  A boot's `require' is not met then: a fence still running
 * is stopped, and the boot hears it once the fence is gone.
 */
static void
svc_fail_fence(struct bfence *bf, const char *why, int gone)
{
	struct breq	*r;
	char		 message[MSG_ERROR_TEXT_MAX];

	if (!gone && !bf->bf_stopping)
		TAILQ_FOREACH(r, &bf->bf_reqs, r_fentry)
			if (r->r_want != 0) {
				svc_stop_fence(bf);
				break;
			}
	for (;;) {
		/* A `require' decided waits for the end, then is said. */
		TAILQ_FOREACH(r, &bf->bf_reqs, r_fentry)
			if (gone || r->r_refusal == NULL)
				break;
		if (r == NULL)
			break;
		breq_unhold(r);
		if (!gone && r->r_want != 0 && r->r_refusal == NULL) {
			if (asprintf(&r->r_refusal, "%s %s %s before it was "
			    "measured", r->r_noun, r->r_key, why) == -1)
				fatal("%s: asprintf", __func__);
			continue;
		}
		if (r->r_refusal != NULL)
			breq_error(r, "require-not-met", "%s", r->r_refusal);
		else if (r->r_kind == BREQ_AGENT) {
			snprintf(message, sizeof(message), "%s %s %s",
			    r->r_noun, r->r_key, why);
			breq_agent_error(r, "fence-stopped", message);
		} else if (r->r_want != 0)
			breq_error(r, "require-not-met", "%s %s %s before "
			    "it was measured", r->r_noun, r->r_key, why);
		else
			breq_error(r, "fence-stopped", "%s %s %s before its "
			    "probe ended", r->r_noun, r->r_key, why);
	}
}

/*
 * bf's first verdict is in and its waiters have heard it (a `require'
 * not met has stopped it by now): what was held goes to the agent,
 * unless the fence is being stopped.
 */
static void
svc_measured(struct bfence *bf)
{
	struct breq	*r, *next;

	if (bf->bf_measured)
		return;
	bf->bf_measured = 1;
	if (bf->bf_stopping)
		return;
	/* An answer may end other requests: look again from the start. */
	for (r = TAILQ_FIRST(&bf->bf_reqs); r != NULL; r = next) {
		next = TAILQ_NEXT(r, r_fentry);
		if (!r->r_is_held)
			continue;
		if (bf->bf_agent != NULL &&
		    imsgev_compose(bf->bf_agent, r->r_type, r->r_id, 0, -1,
		    r->r_held, r->r_held_len) == 0) {
			breq_unhold(r);
			continue;
		}
		breq_unhold(r);
		breq_agent_error(r, "fence-stopped", "the fence has no agent");
		next = TAILQ_FIRST(&bf->bf_reqs);
	}
}

/*
 * What an agent says is decoded here, once, and must answer a request
 * made to it with a kind of answer that request takes; a malformed
 * answer fails its request.  Anything else closes the channel.
 */
static void
svc_agent_dispatch(struct imsgev *iev, struct imsg *imsg, void *arg)
{
	struct bfence	*bf = arg;
	struct breq	*r;
	struct svc_msg	 m;
	struct msg_result rs;
	struct msg_gitconfig g;
	struct msg_error e;
	struct msg_proc	 p;
	struct msg_file	 fl;
	struct msg_filelist fls;
	struct msg_chunk ch;
	uint32_t	 type = imsg->hdr.ih_type;
	int		 file;
	int		 ok;

	/*
	 * A connection at the proxy port, to be passed on as it is; from
	 * a fence without a list there is no proxy port to accept at.
	 */
	if (type == IMSG_AGENT_EGRESS_CONN) {
		if (imsg->fd == -1 || bf->bf_egress == NULL ||
		    msg_empty_decode(imsg->data, imsg->len) == -1)
			goto bad;
		svc_egress_conn(bf->bf_egress, imsg->fd);
		imsg->fd = -1;
		return;
	}
	r = breq_find(imsg->hdr.ih_peerid);
	if (r == NULL || r->r_kind != BREQ_AGENT || r->r_fence != bf ||
	    r->r_is_held)
		goto bad;
	memset(&m, 0, sizeof(m));
	m.m_type = type;
	m.m_data = imsg->data;
	m.m_len = imsg->len;
	file = r->r_type == IMSG_AGENT_FILE_READ ||
	    r->r_type == IMSG_AGENT_FILE_WRITE ||
	    r->r_type == IMSG_AGENT_FILE_DELETE;
	switch (type) {
	case IMSG_AGENT_RESULT:
		if (r->r_type == IMSG_AGENT_GIT_CONFIG ||
		    r->r_type == IMSG_AGENT_SPAWN ||
		    r->r_type == IMSG_AGENT_PROCS || file)
			goto bad;
		ok = msg_result_decode(imsg->data, imsg->len, &rs) == 0;
		if (ok)
			m.m_result = &rs;
		break;
	case IMSG_AGENT_GIT_IDENTITY:
		if (r->r_type != IMSG_AGENT_GIT_CONFIG)
			goto bad;
		ok = msg_gitconfig_decode(imsg->data, imsg->len, &g) == 0;
		if (ok) {
			explicit_bzero(g.g_bearer, sizeof(g.g_bearer));
			m.m_git = &g;
		}
		break;
	case IMSG_AGENT_ERROR:
		ok = msg_error_decode(imsg->data, imsg->len, &e) == 0;
		if (ok)
			m.m_error = &e;
		break;
	case IMSG_AGENT_PROC:
		if (r->r_type != IMSG_AGENT_SPAWN &&
		    r->r_type != IMSG_AGENT_PROCS)
			goto bad;
		/*
		 * A listing is bounded as the agent's table is, and carries
		 * no output: an agent that sends more is not ours.
		 */
		if (r->r_list && r->r_nprocs >= EXEC_PROCESSES_MAX)
			goto bad;
		ok = msg_proc_decode(imsg->data, imsg->len, &p) == 0;
		if (ok)
			m.m_proc = &p;
		if (ok && r->r_list && (p.p_stdout_len > 0 ||
		    p.p_stderr_len > 0)) {
			msg_proc_free(&p);
			goto bad;
		}
		break;
	case IMSG_AGENT_PROC_END:
		if (!r->r_list)
			goto bad;
		ok = msg_empty_decode(imsg->data, imsg->len) == 0;
		break;
	case IMSG_AGENT_FILE:
		if (!file)
			goto bad;
		ok = msg_file_decode(imsg->data, imsg->len, &fl) == 0;
		if (ok)
			m.m_file = &fl;
		break;
	case IMSG_AGENT_FILE_LIST:
		if (r->r_type != IMSG_AGENT_FILE_READ)
			goto bad;
		ok = msg_filelist_decode(imsg->data, imsg->len, &fls) == 0;
		if (ok)
			m.m_filelist = &fls;
		break;
	case IMSG_AGENT_CHUNK:
		/* Only of a stream, and never beyond the credit it has. */
		if (r->r_type != IMSG_AGENT_EXEC_STREAM ||
		    msg_chunk_decode(imsg->data, imsg->len, &ch) == -1)
			goto bad;
		if (ch.ch_len > MSG_STREAM_WINDOW - r->r_unacked) {
			msg_chunk_free(&ch);
			goto bad;
		}
		r->r_unacked += ch.ch_len;
		m.m_chunk = &ch;
		r->r_fn(r, &m);
		msg_chunk_free(&ch);
		return;
	default:
		goto bad;
	}
	if (!ok)
		breq_agent_error(r, "agent-error", "the agent's answer was "
		    "malformed");
	else
		r->r_fn(r, &m);
	if (m.m_result != NULL)
		msg_result_free(&rs);
	if (m.m_git != NULL)
		explicit_bzero(&g, sizeof(g));
	if (m.m_proc != NULL)
		msg_proc_free(&p);
	if (m.m_file != NULL)
		msg_file_free(&fl);
	if (m.m_filelist != NULL)
		msg_filelist_free(&fls);
	return;
 bad:
	/* A fence's agent is inside the fence: never trusted, never fatal. */
	log_warnx("fence %s: agent sent %s for request %u; channel closed",
	    bf->bf_info.f_key, msg_type_name(type), imsg->hdr.ih_peerid);
	imsgev_free(bf->bf_agent);
	bf->bf_agent = NULL;
	svc_fail_fence(bf, "has a misbehaving agent", 0);
}

static void
svc_agent_closed(struct imsgev *iev, int error, void *arg)
{
	struct bfence	*bf = arg;

	log_debug("fence %s: agent channel closed%s%s", bf->bf_info.f_key,
	    error ? ": " : "", error ? strerror(error) : "");
	imsgev_free(iev);
	bf->bf_agent = NULL;
	svc_fail_fence(bf, "lost its agent", 0);
}

/* Probes. */

static void	svc_probe_fencer(struct breq *, const struct svc_msg *);
static void	svc_probe_agent(struct breq *, const struct svc_msg *);

/*
 * Measure bf (with full, its outbound checks too) unless a probe runs
 * already: then whoever waits gets what that one measures.  The fencer
 * prepares it (IMSG_PROBE_PREPARE), the service runs fence-probe in the
 * fence with the command line the fencer sends (IMSG_PROBE_EXEC) and
 * hands the output back (IMSG_PROBE_OUTPUT); the verdict ends it
 * (IMSG_FENCE_LEVEL).
 */
static void
svc_probe_start(struct bfence *bf, int full)
{
	struct msg_fence_req q;
	struct breq	*r;
	void		*buf;
	size_t		 len;

	if (bf->bf_probing)
		return;
	memset(&q, 0, sizeof(q));
	strlcpy(q.r_key, bf->bf_info.f_key, sizeof(q.r_key));
	q.r_owner = bf->bf_info.f_owner;
	q.r_uid = bf->bf_info.f_owner;
	q.r_full = full;
	if (msg_fence_req_encode(&q, &buf, &len) == -1)
		fatal("%s: encode", __func__);
	r = breq_new(BREQ_FENCER, q.r_owner, q.r_key, svc_probe_fencer, NULL,
	    0, NULL, NULL);
	svc_to_fencer(r, IMSG_PROBE_PREPARE, buf, len);
	free(buf);
	bf->bf_probing = 1;
	log_debug("%s: probing %u's %s", __func__, (unsigned)q.r_owner,
	    q.r_key);
}

/*
 * NAMED's KEY's verdicts: the last probe's, or with refresh (or before
 * there was one) a new probe's, with its outbound checks.
 */
void
svc_probe(const struct svc_who *w, uid_t named, const char *key,
    int refresh, svc_cb cb, void *arg)
{
	struct svc_answer a;
	struct bfence	*bf;
	struct breq	*r;

	if ((bf = svc_fence_for(w, named, key, cb, arg)) == NULL)
		return;
	if (!refresh && !bf->bf_probing && bf->bf_boundary != NULL) {
		memset(&a, 0, sizeof(a));
		a.a_what = SVC_VERDICT;
		a.a_last = 1;
		a.a_key = bf->bf_info.f_key;
		a.a_level = bf->bf_info.f_level;
		a.a_boundary = bf->bf_boundary;
		svc_say(cb, arg, &a);
		return;
	}
	r = breq_new(BREQ_VERDICT, bf->bf_info.f_owner, bf->bf_info.f_key,
	    NULL, w, 0, cb, arg);
	breq_attach(r, bf);
	svc_probe_start(bf, 1);
}

/*
 * The probe did not run: the fencer still gets an output, empty with
 * the reason, so that its request ends the usual way ("unmeasured").
 */
static void
svc_probe_output_error(uint32_t parent, const char *code,
    const char *message)
{
	struct msg_result rs;
	void		*buf;
	size_t		 len;

	memset(&rs, 0, sizeof(rs));
	strlcpy(rs.rs_error, code, sizeof(rs.rs_error));
	strlcpy(rs.rs_message, message, sizeof(rs.rs_message));
	/* No exit status (rs_exit 0, rs_signal 0): rs_error says why. */
	if (msg_result_encode(&rs, &buf, &len) == -1)
		fatal("%s: encode", __func__);
	if (proc_compose(&broker_self, PROC_FENCER, IMSG_PROBE_OUTPUT, parent,
	    -1, buf, len) == -1)
		fatal("%s: to fencer", __func__);
	free(buf);
}

/* The agent ran fence-probe (or could not): its output goes to the fencer. */
static void
svc_probe_agent(struct breq *r, const struct svc_msg *m)
{
	uint32_t	 parent = r->r_parent;

	breq_done(r);
	if (m->m_type == IMSG_AGENT_RESULT) {
		if (proc_compose(&broker_self, PROC_FENCER,
		    IMSG_PROBE_OUTPUT, parent, -1, m->m_data, m->m_len) == -1)
			fatal("%s: to fencer", __func__);
	} else
		svc_probe_output_error(parent, m->m_error->e_code,
		    m->m_error->e_message);
}

/* A verdict for a waiter that asked for one (svc_probe()). */
static void
svc_verdict_answer(struct breq *r, struct bfence *bf,
    const struct svc_msg *m)
{
	struct svc_answer a;

	if (m->m_type != IMSG_FENCE_LEVEL) {
		breq_failed(r, m);
		return;
	}
	memset(&a, 0, sizeof(a));
	a.a_what = SVC_VERDICT;
	a.a_last = 1;
	a.a_key = bf->bf_info.f_key;
	a.a_level = m->m_verdict->v_level;
	a.a_boundary = m->m_verdict->v_json;
	breq_reply(r, &a);
}

/*
 * A probe ended, with a verdict (LEVEL) or without (FAILED): the fence
 * keeps it, everyone waiting hears it, a boot's `require' is decided,
 * and what was held goes out.
 */
static void
svc_probe_ended(struct breq *r, const struct svc_msg *m)
{
	struct bfence	*bf;
	struct breq	*w;
	char		*json;

	bf = bfence_find(r->r_owner, r->r_key);
	breq_done(r);
	if (bf == NULL)
		return;		/* its waiters heard it stop */
	bf->bf_probing = 0;
	if (m->m_type == IMSG_FENCE_LEVEL) {
		if ((json = strdup(m->m_verdict->v_json)) == NULL)
			fatal("%s: strdup", __func__);
		free(bf->bf_boundary);
		bf->bf_boundary = json;
		bf->bf_info.f_level = m->m_verdict->v_level;
		svc_kernel_of(json, &bf->bf_info);
		bfence_changed(bf);
	}
	/* Each answer ends its waiter; held requests are not waiters. */
	for (;;) {
		TAILQ_FOREACH(w, &bf->bf_reqs, r_fentry)
			if (w->r_kind == BREQ_VERDICT && w->r_refusal == NULL)
				break;
		if (w == NULL)
			break;
		if (w->r_want != 0)
			svc_require(w, bf, m);
		else
			svc_verdict_answer(w, bf, m);
	}
	svc_measured(bf);
}

static void
svc_probe_fencer(struct breq *r, const struct svc_msg *m)
{
	struct bfence	*bf;
	struct breq	*ra;

	switch (m->m_type) {
	case IMSG_PROBE_EXEC:
		if ((bf = bfence_find(r->r_owner, r->r_key)) == NULL)
			return;		/* the fencer will say so */
		ra = breq_new(BREQ_AGENT, r->r_owner, r->r_key,
		    svc_probe_agent, NULL, 0, NULL, NULL);
		ra->r_parent = r->r_id;
		svc_to_agent(bf, ra, IMSG_AGENT_PROBE, m->m_exec, 1);
		return;
	case IMSG_FENCE_LEVEL:
	case IMSG_FENCE_FAILED:
		svc_probe_ended(r, m);
		return;
	}
	fatalx("%s: %s to a probe", __func__, msg_type_name(m->m_type));
}

/*
 * L3 and L4 need a kernel that is not the host's: where that is what a
 * fence lacks, the kernel axis comes first in the refusal ("" if not).
 */
static void
svc_kernel_short(const char *json, int want, char *buf, size_t len)
{
	json_t		*root, *v;
	const char	*s;

	buf[0] = '\0';
	if (want < LEVEL_L3 || json == NULL ||
	    (root = json_loads(json, 0, NULL)) == NULL)
		return;
	v = json_object_get(json_object_get(json_object_get(root, "axes"),
	    "kernel"), "verdict");
	s = json_is_string(v) ? json_string_value(v) : "not measured";
	if (strcmp(s, "separate") != 0)
		snprintf(buf, len, "kernel: %s (%s needs a kernel that is "
		    "not the host's: %s); ", s, level_name(want),
		    want == LEVEL_L3 ? "gVisor's, backend runsc" :
		    "a virtual machine's, backend vm");
	json_decref(root);
}

/*
 * Why a fence stands below a level: every violation the verdicts name,
 * or where there is none (a network shared by design), each axis that
 * is not fenced and what it is instead.
 */
void
svc_violations(const char *json, char *buf, size_t len)
{
	json_t		*root, *list, *axes, *v, *verdict;
	const char	*name, *s;
	size_t		 i;

	strlcpy(buf, "no violation recorded", len);
	if (json == NULL || (root = json_loads(json, 0, NULL)) == NULL)
		return;
	buf[0] = '\0';
	list = json_object_get(root, "violations");
	if (json_is_array(list))
		json_array_foreach(list, i, v) {
			if (!json_is_string(v))
				continue;
			if (buf[0] != '\0')
				strlcat(buf, "; ", len);
			strlcat(buf, json_string_value(v), len);
		}
	axes = json_object_get(root, "axes");
	if (buf[0] == '\0' && json_is_object(axes))
		json_object_foreach(axes, name, v) {
			verdict = json_object_get(v, "verdict");
			if (!json_is_string(verdict))
				continue;
			s = json_string_value(verdict);
			if (strcmp(s, "fenced") == 0 ||
			    strcmp(s, "allowlisted") == 0 ||
			    strcmp(s, "separate") == 0 ||
			    strcmp(s, "shared") == 0)
				continue;
			if (buf[0] != '\0')
				strlcat(buf, "; ", len);
			strlcat(buf, name, len);
			strlcat(buf, ": ", len);
			strlcat(buf, s, len);
		}
	if (buf[0] == '\0')
		strlcpy(buf, "no violation recorded", len);
	json_decref(root);
}

/* The fencer. */

/*
 * Every message from the fencer, decoded here once, then handed to the
 * request it answers.  The fencer is one of our own: a message that
 * does not decode, or answers no request, is fatal.
 */
void
svc_dispatch_fencer(struct imsgev *iev, struct imsg *imsg, void *arg)
{
	struct svc_msg	 m;
	struct msg_fence info;
	struct msg_error e;
	struct msg_verdict v;
	struct msg_exec	 x;
	struct bfence	*bf;
	struct breq	*r = NULL;
	uint32_t	 type = imsg->hdr.ih_type;
	int		 bad;

	memset(&m, 0, sizeof(m));
	m.m_type = type;
	m.m_data = imsg->data;
	m.m_len = imsg->len;
	switch (type) {
	case IMSG_FENCE_BOOTED:
	case IMSG_FENCE_STOPPED:
		bad = msg_fence_decode(imsg->data, imsg->len, &info) == -1 ||
		    (type == IMSG_FENCE_BOOTED && imsg->fd == -1);
		m.m_fence = &info;
		break;
	case IMSG_FENCE_FAILED:
		bad = msg_error_decode(imsg->data, imsg->len, &e) == -1;
		m.m_error = &e;
		break;
	case IMSG_FENCE_LEVEL:
		bad = msg_verdict_decode(imsg->data, imsg->len, &v) == -1;
		m.m_verdict = &v;
		break;
	case IMSG_PROBE_EXEC:
		bad = msg_exec_decode(imsg->data, imsg->len, &x) == -1;
		m.m_exec = &x;
		break;
	case IMSG_FENCE_END:
		bad = msg_empty_decode(imsg->data, imsg->len) == -1;
		break;
	case IMSG_POOL_STATS:
		/* Answers nothing: what `fencectl show stats' shows. */
		if (imsg->hdr.ih_peerid != 0 || msg_pool_decode(imsg->data,
		    imsg->len, &broker_stats.bs_pool) == -1)
			fatalx("%s: bad %s", __func__, msg_type_name(type));
		return;
	default:
		bad = 1;
		break;
	}
	if (bad)
		fatalx("%s: bad %s", __func__, msg_type_name(type));
	if (imsg->hdr.ih_peerid != 0 &&
	    (r = breq_find(imsg->hdr.ih_peerid)) == NULL)
		fatalx("%s: fencer answered unknown request %u with %s",
		    __func__, imsg->hdr.ih_peerid, msg_type_name(type));
	if (r != NULL && r->r_kind != BREQ_FENCER)
		fatalx("%s: fencer answered request %u of another peer",
		    __func__, imsg->hdr.ih_peerid);

	switch (type) {
	case IMSG_FENCE_BOOTED:
		if (r == NULL)
			fatalx("%s: a boot nobody asked for", __func__);
		bfence_add(&info, imsg->fd);
		imsg->fd = -1;
		break;
	case IMSG_FENCE_STOPPED:
		if ((bf = bfence_find(info.f_owner, info.f_key)) != NULL)
			bfence_remove(bf, &info);
		break;
	case IMSG_FENCE_FAILED:
		/* A boot that ended before anyone waited on it: log only. */
		if (r == NULL)
			log_info("%s: %s", e.e_code, e.e_message);
		break;
	}
	if (r != NULL)
		r->r_fn(r, &m);
	else if (type != IMSG_FENCE_STOPPED && type != IMSG_FENCE_FAILED)
		fatalx("%s: %s answers no request", __func__,
		    msg_type_name(type));
	switch (type) {
	case IMSG_FENCE_BOOTED:
	case IMSG_FENCE_STOPPED:
		explicit_bzero(&info, sizeof(info));
		break;
	case IMSG_FENCE_LEVEL:
		msg_verdict_free(&v);
		break;
	case IMSG_PROBE_EXEC:
		explicit_bzero(x.x_bearer, sizeof(x.x_bearer));
		msg_exec_free(&x);
		break;
	}
}
