/*
 * Stand-ins of broker/service.c for the front ends' fuzz targets.  A
 * front end must name who asks from its own knowledge (credentials, a
 * token) and hand over only values its codecs accept: each stand-in
 * checks both, then answers synchronously, as a service that already
 * knew the answer would (a fence, a verdict, a result, an identity), or
 * with an error when stub_errors is set.
 */
#include <sys/types.h>

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fenced.h"
#include "msg.h"
#include "broker.h"
#include "fuzz.h"
#include "stub_svc.h"

uid_t		 stub_uid;
int		 stub_admin;
int		 stub_unbounded;
int		 stub_errors;
unsigned int	 stub_calls;

static void
stub_who(const struct svc_who *w)
{
	stub_calls++;
	FUZZ_CHECK(w->w_uid == stub_uid);
	FUZZ_CHECK(w->w_admin == stub_admin);
	FUZZ_CHECK(w->w_unbounded == stub_unbounded);
	FUZZ_CHECK(w->w_noun != NULL);
	FUZZ_CHECK(w->w_token == NULL || hosttoken_name_valid(w->w_token));
}

/* A key as the service takes it: "" (all) or a valid name. */
static void
stub_key(const char *key)
{
	FUZZ_CHECK(memchr(key, '\0', FENCE_KEY_SIZE) != NULL);
	FUZZ_CHECK(key[0] == '\0' || fence_key_valid(key));
}

/* A file written or removed, for the audit log: said, not sent. */
void
audit_file(const struct svc_who *w, uid_t owner, const char *key,
    const char *path, uint64_t bytes, const char *outcome)
{
	FUZZ_CHECK(w->w_uid == stub_uid && w->w_noun != NULL);
	stub_key(key);
	FUZZ_CHECK(path != NULL && strnlen(path, PATH_MAX) < PATH_MAX);
	FUZZ_CHECK(outcome != NULL && outcome[0] != '\0');
}

static void
stub_error(svc_cb cb, void *arg)
{
	struct svc_answer a;

	memset(&a, 0, sizeof(a));
	a.a_what = SVC_ERROR;
	a.a_last = 1;
	a.a_code = "not-found";
	a.a_message = "a stand-in of the fuzzer";
	cb(arg, &a);
}

static void
stub_fence(svc_cb cb, void *arg, const char *key, int last)
{
	struct svc_answer a;
	struct msg_fence f;

	memset(&f, 0, sizeof(f));
	strlcpy(f.f_key, key[0] != '\0' ? key : "work", sizeof(f.f_key));
	f.f_owner = stub_uid;
	f.f_uid = 61001;
	f.f_tier = TIER_L15;
	f.f_backend = BACKEND_NATIVE;
	f.f_state = FENCE_RUNNING;
	f.f_pid = 4242;
	f.f_started = 1700000000;
	f.f_deadline = 1700001800;
	f.f_level = LEVEL_L15;
	f.f_kernel = MSG_KERNEL_SHARED;
	strlcpy(f.f_kernel_release, "6.1.0", sizeof(f.f_kernel_release));
	strlcpy(f.f_home, "/home/u/sandbox-homes/work", sizeof(f.f_home));
	/* A key starting "e": an L2 fence behind the egress proxy. */
	if (key[0] == 'e') {
		f.f_tier = TIER_L2;
		strlcpy(f.f_egress[0], "allowed.test:443",
		    sizeof(f.f_egress[0]));
		f.f_negress = 1;
		f.f_egress_n.en_allowed = 1;
	}
	memset(&a, 0, sizeof(a));
	a.a_what = SVC_FENCE;
	a.a_last = last;
	a.a_fence = &f;
	a.a_boundary = "{\"level\":\"L1.5\"}";
	cb(arg, &a);
}

void
svc_boot(const struct svc_who *w, struct msg_boot *b, svc_cb cb, void *arg)
{
	void	*buf;
	size_t	 len;

	stub_who(w);
	FUZZ_CHECK(msg_boot_encode(b, &buf, &len) == 0);
	free(buf);
	if (stub_errors)
		stub_error(cb, arg);
	else
		stub_fence(cb, arg, b->b_key, 1);
}

void
svc_stop(const struct svc_who *w, uid_t owner, const char *key, svc_cb cb,
    void *arg)
{
	struct svc_answer a;
	int		 all = key[0] == '\0';

	stub_who(w);
	stub_key(key);
	if (stub_errors) {
		stub_error(cb, arg);
		return;
	}
	/* A last answer may free what key points into. */
	stub_fence(cb, arg, key, !all);
	if (all) {
		memset(&a, 0, sizeof(a));
		a.a_what = SVC_END;
		a.a_last = 1;
		cb(arg, &a);
	}
}

/*
 * As the real one: each fence an SVC_FENCE that is not the last, the
 * count returned; -1 with "not-found" said only for an owner w may not
 * name.  With stub_errors, nothing is found.
 */
int
svc_list(const struct svc_who *w, uid_t owner, const char *key, svc_cb cb,
    void *arg)
{
	stub_who(w);
	stub_key(key);
	if (key[0] != '\0' && owner != MSG_OWNER_NONE && owner != w->w_uid &&
	    !w->w_admin) {
		stub_error(cb, arg);
		return (-1);
	}
	if (stub_errors)
		return (0);
	stub_fence(cb, arg, key, 0);
	return (1);
}

/* As the real one: every fence w may name is running, but with stub_errors. */
int
svc_fence_known(const struct svc_who *w, uid_t owner, const char *key)
{
	stub_who(w);
	stub_key(key);
	FUZZ_CHECK(key[0] != '\0');
	if (owner != MSG_OWNER_NONE && owner != w->w_uid && !w->w_admin)
		return (0);
	return (!stub_errors);
}

void
svc_probe(const struct svc_who *w, uid_t owner, const char *key, int full,
    svc_cb cb, void *arg)
{
	struct svc_answer a;

	stub_who(w);
	stub_key(key);
	if (stub_errors) {
		stub_error(cb, arg);
		return;
	}
	memset(&a, 0, sizeof(a));
	a.a_what = SVC_VERDICT;
	a.a_last = 1;
	a.a_key = key[0] != '\0' ? key : "work";
	a.a_level = LEVEL_L2;
	a.a_boundary = "{\"level\":\"L2\"}";
	cb(arg, &a);
}

void
svc_exec(const struct svc_who *w, struct msg_exec *x, svc_cb cb, void *arg)
{
	struct svc_answer a;
	struct msg_result rs;
	void		*buf;
	size_t		 len;

	stub_who(w);
	FUZZ_CHECK(msg_exec_encode(x, &buf, &len) == 0);
	free(buf);
	if (stub_errors) {
		stub_error(cb, arg);
		return;
	}
	memset(&rs, 0, sizeof(rs));
	rs.rs_stdout = (uint8_t *)"out\n\x01\xff";
	rs.rs_stdout_len = 6;
	rs.rs_duration_ms = 3;
	FUZZ_CHECK(msg_result_encode(&rs, &buf, &len) == 0);
	memset(&a, 0, sizeof(a));
	a.a_what = SVC_RESULT;
	a.a_last = 1;
	a.a_result = &rs;
	a.a_raw = buf;
	a.a_rawlen = len;
	cb(arg, &a);
	free(buf);
}

void
svc_git_config(const struct svc_who *w, struct msg_gitconfig *g, svc_cb cb,
    void *arg)
{
	struct svc_answer a;
	void		*buf;
	size_t		 len;

	stub_who(w);
	FUZZ_CHECK(msg_gitconfig_encode(g, &buf, &len) == 0);
	free(buf);
	if (stub_errors) {
		stub_error(cb, arg);
		return;
	}
	memset(&a, 0, sizeof(a));
	a.a_what = SVC_IDENTITY;
	a.a_last = 1;
	a.a_git = g;
	cb(arg, &a);
}

void
svc_git_init(const struct svc_who *w, struct msg_gitinit *gi, svc_cb cb,
    void *arg)
{
	struct svc_answer a;
	struct msg_result rs;
	void	*buf;
	size_t	 len;

	stub_who(w);
	FUZZ_CHECK(msg_gitinit_encode(gi, &buf, &len) == 0);
	free(buf);
	if (stub_errors) {
		stub_error(cb, arg);
		return;
	}
	memset(&rs, 0, sizeof(rs));
	FUZZ_CHECK(msg_result_encode(&rs, &buf, &len) == 0);
	memset(&a, 0, sizeof(a));
	a.a_what = SVC_RESULT;
	a.a_last = 1;
	a.a_result = &rs;
	a.a_raw = buf;
	a.a_rawlen = len;
	cb(arg, &a);
	free(buf);
}

/*
 * A tunnel: a real one is answered only after a round trip with the
 * agent; what can come at once is a refusal.  The listing of ports
 * comes after one too, but holds nothing: it is given at once.
 */
void
svc_tunnel_open(const struct svc_who *w, uid_t owner, const char *key,
    const struct msg_tunnel_open *to, svc_cb cb, void *arg)
{
	void	*buf;
	size_t	 len;

	stub_who(w);
	FUZZ_CHECK(msg_tunnel_open_encode(to, &buf, &len) == 0);
	free(buf);
	stub_error(cb, arg);
}

void
svc_tunnel_close(uint32_t id, void *arg)
{
	FUZZ_CHECK(arg != NULL);
}

void
svc_tunnel_adopt(uint32_t id, void *from, void *to)
{
	FUZZ_CHECK(from != NULL && to != NULL);
}

void
svc_ports(const struct svc_who *w, uid_t owner, const char *key, svc_cb cb,
    void *arg)
{
	struct svc_answer a;
	struct msg_portlist pl;

	stub_who(w);
	if (stub_errors) {
		stub_error(cb, arg);
		return;
	}
	memset(&pl, 0, sizeof(pl));
	pl.pl_count = 2;
	pl.pl_ports[0] = 22;
	pl.pl_ports[1] = 8000;
	memset(&a, 0, sizeof(a));
	a.a_what = SVC_PORTS;
	a.a_last = 1;
	a.a_ports = &pl;
	cb(arg, &a);
}

/*
 * As the real one: the asker's uid and admin bit are the service's, a
 * request only what msg_snap_encode() takes; a listing two snapshots
 * and its END, anything else one.
 */
void
svc_snap(const struct svc_who *w, struct msg_snap *q, svc_cb cb, void *arg)
{
	struct svc_answer a;
	struct msg_snap_info si;
	void		*buf;
	size_t		 len;
	int		 i, n;

	stub_who(w);
	stub_key(q->s_key);
	q->s_uid = w->w_uid;
	q->s_admin = w->w_admin;
	FUZZ_CHECK(q->s_op != SNAP_UNDO_MARK);
	FUZZ_CHECK(msg_snap_encode(q, &buf, &len) == 0);
	free(buf);
	if (stub_errors) {
		stub_error(cb, arg);
		return;
	}
	memset(&si, 0, sizeof(si));
	strlcpy(si.sn_key, q->s_key[0] != '\0' ? q->s_key : "k",
	    sizeof(si.sn_key));
	strlcpy(si.sn_name, q->s_name[0] != '\0' ? q->s_name : "s1",
	    sizeof(si.sn_name));
	strlcpy(si.sn_how, "copy", sizeof(si.sn_how));
	n = q->s_op == SNAP_LIST ? 2 : 1;
	for (i = 0; i < n; i++) {
		memset(&a, 0, sizeof(a));
		a.a_what = SVC_SNAP;
		a.a_snap = &si;
		a.a_last = q->s_op != SNAP_LIST;
		cb(arg, &a);
	}
	if (q->s_op == SNAP_LIST) {
		memset(&a, 0, sizeof(a));
		a.a_what = SVC_END;
		a.a_last = 1;
		cb(arg, &a);
	}
}

/*
 * As the real one: the metrics for w_admin alone, else not-permitted;
 * a front end says who is an admin as it knows (svc_admin_uid() for a
 * token: the target's stub_admin).
 */
void
svc_metrics(const struct svc_who *w, svc_cb cb, void *arg)
{
	static const char text[] = "# HELP fenced_x A stand-in.\n"
	    "# TYPE fenced_x gauge\nfenced_x{key=\"a\\\"b\"} 1\n";
	struct svc_answer a;

	stub_who(w);
	memset(&a, 0, sizeof(a));
	a.a_last = 1;
	if (!w->w_admin || stub_errors) {
		a.a_what = SVC_ERROR;
		a.a_code = "not-permitted";
		a.a_message = "metrics are for root and the admin group";
	} else {
		a.a_what = SVC_TEXT;
		a.a_text = text;
		a.a_textlen = sizeof(text) - 1;
	}
	cb(arg, &a);
}

int	 svc_admin_uid(uid_t uid) { return (stub_admin); }

/*
 * As the real one: a host row and the default's, the detail an admin's
 * alone, then the END.
 */
void
svc_doctor(const struct svc_who *w, svc_cb cb, void *arg)
{
	struct svc_answer a;
	struct msg_check c;
	int		 i;

	stub_who(w);
	if (stub_errors) {
		stub_error(cb, arg);
		return;
	}
	for (i = 0; i < 2; i++) {
		memset(&c, 0, sizeof(c));
		c.hc_kind = i == 0 ? CHECK_HOST : CHECK_TIER;
		strlcpy(c.hc_name, i == 0 ? "cgroups" : "default",
		    sizeof(c.hc_name));
		c.hc_status = i == 0 ? CHECK_OK : CHECK_FAIL;
		c.hc_default = i == 1;
		strlcpy(c.hc_reason, "a stand-in", sizeof(c.hc_reason));
		if (w->w_admin)
			strlcpy(c.hc_detail, "/sys/fs/cgroup/stub",
			    sizeof(c.hc_detail));
		memset(&a, 0, sizeof(a));
		a.a_what = SVC_CHECK;
		a.a_check = &c;
		cb(arg, &a);
	}
	memset(&a, 0, sizeof(a));
	a.a_what = SVC_END;
	a.a_last = 1;
	cb(arg, &a);
}

unsigned int	 svc_running(void) { return (1); }
unsigned int	 svc_pending(uid_t uid) { return (0); }
unsigned int	 svc_total(void) { return (0); }

/* The egress state of a stand-in fence: no decisions yet. */
json_t *
svc_egress_recent_json(const struct svc_egress *se)
{
	return (json_array());
}

/*
 * A streamed exec: a real one answers its chunks and result only after
 * a round trip with the agent, never from inside this call; what can
 * come at once is a refusal, so that is what the stand-in gives.
 */
void
svc_exec_stream(const struct svc_who *w, struct msg_exec *x, svc_cb cb,
    void *arg)
{
	void	*buf;
	size_t	 len;

	stub_who(w);
	FUZZ_CHECK(msg_exec_encode(x, &buf, &len) == 0);
	free(buf);
	stub_error(cb, arg);
}

void
svc_stream_credit(uint32_t id, void *arg, size_t bytes)
{
	FUZZ_CHECK(arg != NULL);
	FUZZ_CHECK(bytes <= MSG_STREAM_WINDOW);
}

/* One background process, as the agent describes it. */
static void
stub_proc(svc_cb cb, void *arg, enum svc_what what, int last)
{
	struct svc_answer a;
	struct msg_proc	 p;

	memset(&p, 0, sizeof(p));
	p.p_id = 1;
	p.p_running = 1;
	p.p_count = 1;
	p.p_command = "sleep 30";
	p.p_timeout_ms = 60000;
	p.p_max_bytes = 1024;
	memset(&a, 0, sizeof(a));
	a.a_what = what;
	a.a_last = last;
	a.a_proc = what == SVC_PROC ? &p : NULL;
	cb(arg, &a);
}

void
svc_spawn(const struct svc_who *w, struct msg_exec *x, svc_cb cb, void *arg)
{
	void	*buf;
	size_t	 len;

	stub_who(w);
	FUZZ_CHECK(msg_exec_encode(x, &buf, &len) == 0);
	free(buf);
	if (stub_errors)
		stub_error(cb, arg);
	else
		stub_proc(cb, arg, SVC_PROC, 1);
}

void
svc_procs(const struct svc_who *w, struct msg_proc_req *q, svc_cb cb,
    void *arg)
{
	void	*buf;
	size_t	 len;

	stub_who(w);
	FUZZ_CHECK(msg_proc_req_encode(q, &buf, &len) == 0);
	free(buf);
	if (stub_errors)
		stub_error(cb, arg);
	else if (q->q_op == MSG_PROC_LIST) {
		stub_proc(cb, arg, SVC_PROC, 0);
		stub_proc(cb, arg, SVC_END, 1);
	} else
		stub_proc(cb, arg, SVC_PROC, 1);
}

/* A file request: checked as the agent would take it, then refused. */
void
svc_file(const struct svc_who *w, uint32_t type, struct msg_file *fl,
    svc_cb cb, void *arg)
{
	void	*buf;
	size_t	 len;

	stub_who(w);
	FUZZ_CHECK(type == IMSG_AGENT_FILE_READ ||
	    type == IMSG_AGENT_FILE_WRITE || type == IMSG_AGENT_FILE_DELETE);
	FUZZ_CHECK(msg_file_encode(fl, &buf, &len) == 0);
	free(buf);
	stub_error(cb, arg);
}

/*
 * The port relay's calls (relay.c, relay_auth.c, http_ports.c): a fence
 * "work" whose label is all 'a', whose ports nobody listens on.
 */
#define STUB_LABEL	"aaaaaaaaaaaaaaaa"

int
svc_fence_label(const struct svc_who *w, uid_t owner, const char *key,
    char *label)
{
	stub_who(w);
	stub_key(key);
	if (strcmp(key, "work") != 0)
		return (-1);
	strlcpy(label, STUB_LABEL, SVC_LABEL_LEN + 1);
	return (0);
}

int
svc_label_owner(const char *key, const char *label, uid_t *owner)
{
	stub_key(key);
	FUZZ_CHECK(strlen(label) == SVC_LABEL_LEN);
	if (strcmp(key, "work") != 0 || strcmp(label, STUB_LABEL) != 0)
		return (-1);
	*owner = stub_uid;
	return (0);
}

/* Terminals and a process's stdin (http_term.c): refused, once checked. */
void
svc_term_open(const struct svc_who *w, struct msg_term_open *to, svc_cb cb,
    void *arg)
{
	size_t	 i;

	stub_who(w);
	stub_key(to->to_key);
	FUZZ_CHECK(to->to_owner == MSG_OWNER_NONE);
	FUZZ_CHECK(to->to_argv == NULL || to->to_command == NULL);
	for (i = 0; to->to_argv != NULL && i < to->to_argc; i++)
		FUZZ_CHECK(strlen(to->to_argv[i]) <= MSG_ARG_MAX);
	FUZZ_CHECK(to->to_cols >= 1 && to->to_cols <= MSG_TERM_DIM_MAX);
	FUZZ_CHECK(to->to_rows >= 1 && to->to_rows <= MSG_TERM_DIM_MAX);
	FUZZ_CHECK(to->to_idle_s <= MSG_TERM_IDLE_MAX);
	stub_error(cb, arg);
}

static void
stub_term_req(const struct svc_who *w, const struct msg_term_req *tq)
{
	stub_who(w);
	stub_key(tq->tq_key);
	FUZZ_CHECK(tq->tq_owner == MSG_OWNER_NONE);
	FUZZ_CHECK(tq->tq_cols <= MSG_TERM_DIM_MAX &&
	    tq->tq_rows <= MSG_TERM_DIM_MAX);
}

void
svc_terms(const struct svc_who *w, struct msg_term_req *tq, svc_cb cb,
    void *arg)
{
	stub_term_req(w, tq);
	FUZZ_CHECK(tq->tq_op == MSG_TERM_LIST);
	stub_error(cb, arg);
}

void
svc_term_resize(const struct svc_who *w, struct msg_term_req *tq,
    svc_cb cb, void *arg)
{
	stub_term_req(w, tq);
	FUZZ_CHECK(tq->tq_op == MSG_TERM_RESIZE && tq->tq_cols >= 1 &&
	    tq->tq_rows >= 1);
	stub_error(cb, arg);
}

void
svc_term_kill(const struct svc_who *w, struct msg_term_req *tq, svc_cb cb,
    void *arg)
{
	stub_term_req(w, tq);
	FUZZ_CHECK(tq->tq_op == MSG_TERM_KILL && tq->tq_id >= 1);
	stub_error(cb, arg);
}

void
svc_proc_input(const struct svc_who *w, struct msg_proc_input *pi,
    svc_cb cb, void *arg)
{
	stub_who(w);
	stub_key(pi->pi_key);
	FUZZ_CHECK(pi->pi_id >= 1 && pi->pi_len <= MSG_INPUT_MAX);
	FUZZ_CHECK(pi->pi_len == 0 || pi->pi_data != NULL);
	stub_error(cb, arg);
}

/* The channel's watches (http_channel.c): never told of a change. */
static int	 stub_watching;

struct svc_watch *
svc_watch_add(const struct svc_who *w, svc_watch_fn fn, void *arg)
{
	stub_who(w);
	stub_watching++;
	return ((struct svc_watch *)&stub_watching);
}

void
svc_watch_del(struct svc_watch *sw)
{
	if (sw == NULL)
		return;
	FUZZ_CHECK(stub_watching > 0);
	stub_watching--;
}
