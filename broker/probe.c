/*
 * Probing a fence, the broker's part: it holds the channel to the
 * fence's agent, so it runs fence-probe there with the command line the
 * fencer supplies (IMSG_PROBE_EXEC), hands the output back to the fencer
 * (IMSG_PROBE_OUTPUT), and hears the measured level and verdicts at the
 * end (IMSG_FENCE_LEVEL), which it keeps for the fence's state and
 * passes to everyone waiting on that fence's probe.
 *
 * One probe per fence at a time; whoever asks while one runs waits for
 * it.  A waiter that goes away is forgotten (probe_orphan()).
 */
#include <sys/types.h>
#include <sys/queue.h>

#include <errno.h>
#include <jansson.h>
#include <event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fenced.h"
#include "imsg.h"
#include "log.h"
#include "msg.h"
#include "broker.h"

struct probe_waiter {
	TAILQ_ENTRY(probe_waiter) pw_entry;
	uid_t			 pw_owner;
	char			 pw_key[FENCE_KEY_SIZE];
	probe_done_cb		 pw_cb;
	void			*pw_arg;
	int			 pw_want;	/* passed back: pr_want */
};

static TAILQ_HEAD(, probe_waiter) probe_waiters =
    TAILQ_HEAD_INITIALIZER(probe_waiters);

static void	probe_fencer_answer(struct breq *, uint32_t, struct imsg *);
static void	probe_agent_answer(struct breq *, uint32_t, struct imsg *);
static void	probe_output_error(struct breq *, const char *, const char *);

/*
 * The probe did not run: the fencer still gets an output, empty with the
 * reason, so that its request ends the usual way ("unmeasured").
 */
static void
probe_output_error(struct breq *ra, const char *code, const char *message)
{
	struct msg_result rs;
	void		*buf;
	size_t		 len;

	memset(&rs, 0, sizeof(rs));
	strlcpy(rs.rs_error, code, sizeof(rs.rs_error));
	strlcpy(rs.rs_message, message, sizeof(rs.rs_message));
	rs.rs_exit = -1;
	if (msg_result_encode(&rs, &buf, &len) == -1) {
		log_warn("%s: encode", __func__);
		return;
	}
	if (proc_compose(&broker_self, PROC_FENCER, IMSG_PROBE_OUTPUT,
	    ra->r_parent, -1, buf, len) == -1)
		log_warn("%s: to fencer", __func__);
	free(buf);
}

/* Everyone waiting on the probe of owner's KEY hears how it ended, once. */
static void
probe_finish(uid_t owner, const char *key, struct probe_result *res)
{
	struct probe_waiter *pw, *next;

	TAILQ_FOREACH_SAFE(pw, &probe_waiters, pw_entry, next) {
		if (pw->pw_owner != owner || strcmp(pw->pw_key, key) != 0)
			continue;
		TAILQ_REMOVE(&probe_waiters, pw, pw_entry);
		res->pr_want = pw->pw_want;
		res->pr_owner = owner;
		pw->pw_cb(pw->pw_arg, key, res);
		free(pw);
	}
}

void
probe_orphan(void *arg)
{
	struct probe_waiter *pw, *next;

	TAILQ_FOREACH_SAFE(pw, &probe_waiters, pw_entry, next) {
		if (pw->pw_arg != arg)
			continue;
		TAILQ_REMOVE(&probe_waiters, pw, pw_entry);
		free(pw);
	}
}

/*
 * Probe fence bf; cb (may be NULL) hears the outcome, with want passed
 * back.  With full, the probe also runs its outbound checks (a request
 * joining a probe already running gets what that one measures).
 * Returns -1 only when nothing could be started, and then cb is not
 * called.
 */
int
probe_start(struct bfence *bf, probe_done_cb cb, void *arg, int want,
    int full)
{
	struct msg_fence_req q;
	struct probe_waiter *pw;
	struct breq	*r;
	void		*buf;
	size_t		 len;

	if (cb != NULL) {
		if ((pw = calloc(1, sizeof(*pw))) == NULL)
			return (-1);
		pw->pw_owner = bf->bf_info.f_owner;
		strlcpy(pw->pw_key, bf->bf_info.f_key, sizeof(pw->pw_key));
		pw->pw_cb = cb;
		pw->pw_arg = arg;
		pw->pw_want = want;
		TAILQ_INSERT_TAIL(&probe_waiters, pw, pw_entry);
	}
	if (bf->bf_probing)
		return (0);

	memset(&q, 0, sizeof(q));
	strlcpy(q.r_key, bf->bf_info.f_key, sizeof(q.r_key));
	q.r_owner = bf->bf_info.f_owner;
	q.r_uid = bf->bf_info.f_owner;
	q.r_full = full;
	if ((r = breq_new(BREQ_FENCER, q.r_owner, q.r_key,
	    probe_fencer_answer, NULL)) == NULL ||
	    msg_fence_req_encode(&q, &buf, &len) == -1)
		fatal("%s: request", __func__);
	if (fences_to_fencer(r, IMSG_PROBE_PREPARE, buf, len) == -1)
		fatal("%s: to fencer", __func__);
	free(buf);
	bf->bf_probing = 1;
	log_debug("%s: probing %u's %s", __func__, (unsigned)q.r_owner,
	    q.r_key);
	return (0);
}

static void
probe_set_result(struct bfence *bf, const struct msg_verdict *v)
{
	char	*json;

	if ((json = strdup(v->v_json)) == NULL) {
		log_warn("%s: strdup", __func__);
		return;
	}
	free(bf->bf_boundary);
	bf->bf_boundary = json;
	bf->bf_info.f_level = v->v_level;
}

static void
probe_fencer_answer(struct breq *r, uint32_t type, struct imsg *imsg)
{
	struct probe_result res;
	struct bfence	*bf = bfence_find(r->r_owner, r->r_key);
	struct msg_verdict v;
	struct msg_error e;
	struct msg_exec	 x;
	struct breq	*ra;
	void		*buf;
	size_t		 len;

	memset(&res, 0, sizeof(res));
	switch (type) {
	case IMSG_PROBE_EXEC:
		/* The fencer's command line, with the bearer only we hold. */
		if (msg_exec_decode(imsg->data, imsg->len, &x) == -1)
			fatalx("%s: bad probe command", __func__);
		if (bf == NULL) {
			msg_exec_free(&x);
			return;		/* the fencer will say so */
		}
		memcpy(x.x_bearer, bf->bf_info.f_bearer, sizeof(x.x_bearer));
		if ((ra = breq_new(BREQ_AGENT, r->r_owner, r->r_key,
		    probe_agent_answer, NULL)) == NULL ||
		    msg_exec_encode(&x, &buf, &len) == -1)
			fatal("%s: exec", __func__);
		ra->r_parent = r->r_id;
		explicit_bzero(x.x_bearer, sizeof(x.x_bearer));
		msg_exec_free(&x);
		if (fences_to_agent_probe(bf, ra, IMSG_AGENT_EXEC, buf,
		    len) == -1) {
			probe_output_error(ra, "fence-stopped",
			    "the fence has no agent");
			breq_done(ra);
		}
		explicit_bzero(buf, len);
		free(buf);
		return;
	case IMSG_FENCE_FAILED:
		if (msg_error_decode(imsg->data, imsg->len, &e) == -1)
			fatalx("%s: bad failure", __func__);
		res.pr_error = e.e_code;
		res.pr_message = e.e_message;
		break;
	case IMSG_FENCE_LEVEL:
		if (msg_verdict_decode(imsg->data, imsg->len, &v) == -1)
			fatalx("%s: bad verdict", __func__);
		if (bf != NULL)
			probe_set_result(bf, &v);
		res.pr_level = v.v_level;
		res.pr_json = v.v_json;
		if (bf != NULL)
			bf->bf_probing = 0;
		probe_finish(r->r_owner, r->r_key, &res);
		fences_measured(r->r_owner, r->r_key);
		msg_verdict_free(&v);
		return;
	default:
		fatalx("%s: unexpected %s", __func__, msg_type_name(type));
	}
	if (bf != NULL)
		bf->bf_probing = 0;
	probe_finish(r->r_owner, r->r_key, &res);
	fences_measured(r->r_owner, r->r_key);
}

/* The agent ran the probe (or could not): its output goes to the fencer. */
static void
probe_agent_answer(struct breq *r, uint32_t type, struct imsg *imsg)
{
	struct msg_error e;

	switch (type) {
	case IMSG_AGENT_RESULT:
		if (proc_compose(&broker_self, PROC_FENCER, IMSG_PROBE_OUTPUT,
		    r->r_parent, -1, imsg->data, imsg->len) == -1)
			log_warn("%s: to fencer", __func__);
		break;
	case IMSG_AGENT_ERROR:
		if (msg_error_decode(imsg->data, imsg->len, &e) == -1)
			strlcpy(e.e_code, "agent-error", sizeof(e.e_code));
		probe_output_error(r, e.e_code, e.e_message);
		break;
	default:
		probe_output_error(r, "agent-error", "unexpected answer");
		break;
	}
}

/*
 * Why a fence stands below a level: every violation the verdicts name,
 * or where there is none (a network shared by design), each axis that
 * is not fenced and what it is instead.
 */
void
probe_violations(const char *json, char *buf, size_t len)
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
