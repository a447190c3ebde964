/*
 * libFuzzer target for the control socket as the broker serves it: the
 * input is what a client writes on its connection, read by the real
 * broker/control.c (included whole, so its static accept and dispatch
 * are the ones that run) through imsgev on a real unix socket and a
 * libevent loop.  The fence service (fuzz/stub_svc.c), the token store
 * and the parent are stand-ins that check what reaches them and answer
 * at once.
 *
 * The first byte picks who the client is (root, an admin, a plain
 * user) and how the stand-ins answer; the rest is the stream.
 * Invariants: the service hears the connection's uid and admin bit,
 * never anything from the message, and only values its own encoders
 * accept; a plain user never reaches the parent (log level, reload);
 * every reply decodes as fencectl would decode it; while the broker
 * keeps the connection, every request got exactly one END; and once
 * it is closed, no descriptor is left.
 */
#include "../broker/control.c"

#include <sys/un.h>

#include "fuzz.h"
#include "stub_svc.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);
int	LLVMFuzzerInitialize(int *, char ***);

struct proc_self	 broker_self;
struct broker_stats	 broker_stats;
struct msg_procinfo	 broker_procinfo;

static int		 fz_listen = -1;
static struct ctl_conn	*fz_cc;		/* the connection being fuzzed */
static int		 fz_token_fails;


void
token_list(uid_t uid, void (*fn)(void *, const struct msg_tokeninfo *),
    void *arg)
{
	struct msg_tokeninfo ti;

	FUZZ_CHECK(uid == fz_cc->cc_uid);
	memset(&ti, 0, sizeof(ti));
	strlcpy(ti.ti_name, HOSTTOKEN_NAME_DEFAULT, sizeof(ti.ti_name));
	fn(arg, &ti);
}

int
token_request(uid_t uid, enum ctltoken_op op, const char *name, token_cb cb,
    void *arg, const char **code, const char **why)
{
	struct msg_hosttoken ht;

	FUZZ_CHECK(uid == fz_cc->cc_uid);
	FUZZ_CHECK(op <= CTLTOKEN_DELETE && hosttoken_name_valid(name));
	if (op == CTLTOKEN_DELETE) {
		cb(arg, NULL, 0);
		return (0);
	}
	if (fz_token_fails) {
		*code = "token-exists";
		*why = "a stand-in of the fuzzer";
		return (-1);
	}
	memset(&ht, 0, sizeof(ht));
	ht.ht_uid = uid;
	strlcpy(ht.ht_name, name, sizeof(ht.ht_name));
	memset(ht.ht_token, 'b', HOSTTOKEN_TEXT);
	cb(arg, &ht, 0);
	return (0);
}

/* A reload the stand-in parent answers on the loop's next turn. */
static uint32_t		 fz_reload;

/* A read of the audit log, answered on the loop's next turn too. */
static uint32_t		 fz_audit;

/* Only an admin's request goes on to the parent, or a read of the log. */
int
proc_compose(struct proc_self *ps, enum fenced_proc to, uint32_t type,
    uint32_t peerid, int fd, const void *data, size_t len)
{
	struct msg_audit_read ar;
	int32_t	 v;

	FUZZ_CHECK(fz_cc != NULL && to == PROC_PARENT && fd == -1);
	if (type == IMSG_AUDIT_READ) {
		/* The connection's own uid; admin as it is. */
		FUZZ_CHECK(msg_audit_read_decode(data, len, &ar) == 0);
		FUZZ_CHECK(ar.ar_uid == fz_cc->cc_uid &&
		    ar.ar_admin == (uint32_t)fz_cc->cc_admin);
		FUZZ_CHECK(peerid != 0 && fz_audit == 0);
		fz_audit = peerid;
		return (0);
	}
	FUZZ_CHECK(fz_cc->cc_admin);
	FUZZ_CHECK(type == IMSG_LOG_VERBOSE || type == IMSG_RELOAD);
	if (type == IMSG_LOG_VERBOSE)
		FUZZ_CHECK(msg_i32_decode(data, len, &v, 0, 3) == 0);
	else {
		FUZZ_CHECK(len == 0 && peerid != 0 && fz_reload == 0);
		fz_reload = peerid;
	}
	return (0);
}

/* The parent's IMSG_RELOADED for the reload asked, as it sends it. */
static void
fz_reloaded(void)
{
	struct imsg	 m;
	void		*buf;
	size_t		 len;

	if (fz_reload == 0)
		return;
	memset(&m, 0, sizeof(m));
	m.hdr.ih_type = IMSG_RELOADED;
	m.hdr.ih_peerid = fz_reload;
	m.fd = -1;
	fz_reload = 0;
	if (msg_error_format(&buf, &len, "ok", "reloaded") == -1)
		FUZZ_FAIL();
	m.data = buf;
	m.len = len;
	control_reloaded(&m);
	free(buf);
}

/* The parent's answer to a read of the log: one line, then the end. */
static void
fz_audit_answer(void)
{
	struct msg_audit_line l;
	struct imsg	 m;
	void		*buf;
	size_t		 len;

	if (fz_audit == 0)
		return;
	memset(&m, 0, sizeof(m));
	m.hdr.ih_type = IMSG_AUDIT_LINE;
	m.hdr.ih_peerid = fz_audit;
	m.fd = -1;
	l.al_line = "{\"kind\":\"boot\"}";
	if (msg_audit_line_encode(&l, &buf, &len) == -1)
		FUZZ_FAIL();
	m.data = buf;
	m.len = len;
	control_audit_answer(&m);
	free(buf);
	m.hdr.ih_type = IMSG_AUDIT_END;
	m.data = NULL;
	m.len = 0;
	fz_audit = 0;
	control_audit_answer(&m);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct sockaddr_un sun;
	socklen_t	 sl;

	log_init(1, 0);
	log_ratelimit(1);
	if ((broker_self.ps_evbase = event_base_new()) == NULL)
		FUZZ_FAIL();
	broker_self.ps_started = 1;
	broker_self.ps_conf.c_admin_gid = (gid_t)-1;
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	/* Abstract: nothing on disk, unique to this process. */
	snprintf(sun.sun_path + 1, sizeof(sun.sun_path) - 1,
	    "fenced-ctl-fuzz-%d", (int)getpid());
	sl = offsetof(struct sockaddr_un, sun_path) + 1 +
	    strlen(sun.sun_path + 1);
	if ((fz_listen = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1 ||
	    bind(fz_listen, (struct sockaddr *)&sun, sl) == -1 ||
	    listen(fz_listen, 8) == -1 ||
	    getsockname(fz_listen, (struct sockaddr *)&sun, &sl) == -1)
		FUZZ_FAIL();
	ctl_fd = fz_listen;
	return (0);
}

/* What fencectl would make of one reply. */
static void
fz_reply(const struct imsg *m)
{
	union {
		struct msg_error	 e;
		struct msg_stats	 st;
		struct msg_fence	 f;
		struct msg_hosttoken	 ht;
		struct msg_gitconfig	 g;
		struct msg_tokeninfo	 ti;
	} u;
	struct msg_verdict	 v;
	struct msg_result	 rs;
	struct msg_proc		 p;
	struct msg_file		 fl;
	struct msg_filelist	 fls;
	struct msg_chunk	 ch;
	struct msg_portlist	 pl;
	struct msg_port_ticket	 pk;
	struct msg_snap_info	 sn;
	struct msg_check	 hc;
	struct msg_audit_line	 al;

	switch (m->hdr.ih_type) {
	case IMSG_CTL_OK:
	case IMSG_CTL_END:
		FUZZ_CHECK(msg_empty_decode(m->data, m->len) == 0);
		break;
	case IMSG_CTL_ERROR:
		FUZZ_CHECK(msg_error_decode(m->data, m->len, &u.e) == 0);
		break;
	case IMSG_CTL_STATS:
		FUZZ_CHECK(msg_stats_decode(m->data, m->len, &u.st) == 0);
		break;
	case IMSG_CTL_FENCE:
		FUZZ_CHECK(msg_fence_decode(m->data, m->len, &u.f) == 0);
		break;
	case IMSG_CTL_HOSTTOKEN:
		FUZZ_CHECK(msg_hosttoken_decode(m->data, m->len, &u.ht) == 0);
		break;
	case IMSG_CTL_GIT_IDENTITY:
		FUZZ_CHECK(msg_gitconfig_decode(m->data, m->len, &u.g) == 0);
		break;
	case IMSG_CTL_VERDICT:
		FUZZ_CHECK(msg_verdict_decode(m->data, m->len, &v) == 0);
		msg_verdict_free(&v);
		break;
	case IMSG_CTL_RESULT:
		FUZZ_CHECK(msg_result_decode(m->data, m->len, &rs) == 0);
		msg_result_free(&rs);
		break;
	case IMSG_CTL_TOKENINFO:
		FUZZ_CHECK(msg_tokeninfo_decode(m->data, m->len, &u.ti) == 0);
		break;
	case IMSG_CTL_PROC:
		FUZZ_CHECK(msg_proc_decode(m->data, m->len, &p) == 0);
		msg_proc_free(&p);
		break;
	case IMSG_CTL_FILE:
		FUZZ_CHECK(msg_file_decode(m->data, m->len, &fl) == 0);
		msg_file_free(&fl);
		break;
	case IMSG_CTL_FILE_LIST:
		FUZZ_CHECK(msg_filelist_decode(m->data, m->len, &fls) == 0);
		msg_filelist_free(&fls);
		break;
	case IMSG_CTL_CHUNK:
		FUZZ_CHECK(msg_chunk_decode(m->data, m->len, &ch) == 0);
		msg_chunk_free(&ch);
		break;
	case IMSG_CTL_PORT_LIST:
		FUZZ_CHECK(msg_portlist_decode(m->data, m->len, &pl) == 0);
		break;
	case IMSG_CTL_PORT_URLS:
		FUZZ_CHECK(msg_port_ticket_decode(m->data, m->len, &pk) == 0);
		break;
	case IMSG_CTL_SNAP_INFO:
		FUZZ_CHECK(msg_snap_info_decode(m->data, m->len, &sn) == 0);
		break;
	case IMSG_CTL_CHECK:
		FUZZ_CHECK(msg_check_decode(m->data, m->len, &hc) == 0);
		/* Only an admin's connection sees a detail (stub_svc.c). */
		FUZZ_CHECK(stub_admin || hc.hc_detail[0] == '\0');
		break;
	case IMSG_CTL_AUDIT:
		FUZZ_CHECK(msg_audit_line_decode(m->data, m->len, &al) == 0);
		msg_audit_line_free(&al);
		break;
	default:
		FUZZ_FAIL();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct imsgbuf	*cb;
	struct imsg	 m;
	uint64_t	 fds_before;
	size_t		 off = 0;
	ssize_t		 n;
	unsigned int	 ends = 0, rounds, idle;
	int		 c, r, open;

	if (size < 1)
		return (0);
	fds_before = fuzz_open_fds();
	memset(&broker_stats, 0, sizeof(broker_stats));
	stub_errors = (data[0] >> 2) & 1;
	fz_token_fails = (data[0] >> 3) & 1;

	/* Connect, and let the broker's own accept take it. */
	{
		struct sockaddr_un sun;
		socklen_t	 sl = sizeof(sun);

		if (getsockname(fz_listen, (struct sockaddr *)&sun, &sl) == -1 ||
		    (c = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1 ||
		    connect(c, (struct sockaddr *)&sun, sl) == -1)
			FUZZ_FAIL();
	}
	control_accept(fz_listen, EV_READ, NULL);
	FUZZ_CHECK((fz_cc = TAILQ_FIRST(&ctl_conns)) != NULL);
	FUZZ_CHECK(ctl_nconns == 1);
	/* Who: root, an admin, or a plain user. */
	switch (data[0] & 3) {
	case 0:
		break;
	case 1:
		fz_cc->cc_uid = 1000;
		fz_cc->cc_admin = 1;
		break;
	default:
		fz_cc->cc_uid = 1001;
		fz_cc->cc_admin = 0;
		break;
	}
	stub_uid = fz_cc->cc_uid;
	stub_admin = fz_cc->cc_admin;
	stub_unbounded = fz_cc->cc_uid == 0;
	if ((cb = imsgbuf_new(c)) == NULL)
		FUZZ_FAIL();

	/* Write what the socket takes, serve, read the answers; again. */
	for (rounds = 0, idle = 0; rounds < 64 && idle < 2; rounds++) {
		idle++;
		if (off < size - 1) {
			n = write(c, data + 1 + off, size - 1 - off);
			if (n > 0) {
				off += (size_t)n;
				idle = 0;
			}
		}
		event_base_loop(broker_self.ps_evbase, EVLOOP_NONBLOCK);
		fz_reloaded();
		fz_audit_answer();
		while ((n = imsgbuf_read(cb)) > 0)
			idle = 0;
		if (n == 0)
			break;		/* the broker closed it */
		while ((r = imsgbuf_get(cb, &m)) == 1) {
			fz_reply(&m);
			if (m.hdr.ih_type == IMSG_CTL_END)
				ends++;
			imsg_free(&m);
		}
		FUZZ_CHECK(r == 0);
	}
	open = !TAILQ_EMPTY(&ctl_conns);
	FUZZ_CHECK(ends <= broker_stats.bs_ctl_requests);
	if (open && off == size - 1)
		FUZZ_CHECK(ends == broker_stats.bs_ctl_requests);

	if (open)
		control_close(TAILQ_FIRST(&ctl_conns));
	event_base_loop(broker_self.ps_evbase, EVLOOP_NONBLOCK);
	FUZZ_CHECK(ctl_nconns == 0 && TAILQ_EMPTY(&ctl_conns));
	fz_cc = NULL;
	fz_reload = 0;		/* its asker is gone: nobody to answer */
	imsgbuf_free(cb);
	close(c);
	FUZZ_CHECK(fuzz_open_fds() == fds_before);
	return (0);
}
