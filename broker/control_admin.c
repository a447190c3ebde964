/*
 * The control socket's requests about the daemon rather than a fence:
 * host tokens, statistics, the log level, the audit log's lines, and
 * the test hooks.
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stddef.h>
#include <event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>

#include "fenced.h"
#include "imsg.h"
#include "log.h"
#include "msg.h"
#include "broker.h"
#include "files.h"
#include "control.h"

/* The new host token, once the parent stored its hash; or why not. */
static void
control_token(void *arg, const struct msg_hosttoken *ht, int error)
{
	struct ctl_conn	*cc = arg;
	void		*buf;
	size_t		 len;

	if (ht == NULL && error == 0) {
		control_ok(cc);		/* deleted */
		return;
	}
	if (ht == NULL) {
		control_error(cc, "token-not-stored", "the change of the host "
		    "token could not be stored: %s", strerror(error));
		return;
	}
	if (msg_hosttoken_encode(ht, &buf, &len) == -1) {
		control_error(cc, "internal", "cannot encode the token");
		return;
	}
	control_reply(cc, IMSG_CTL_HOSTTOKEN, buf, len);
	explicit_bzero(buf, len);
	free(buf);
	control_reply(cc, IMSG_CTL_END, NULL, 0);
}


/*
 * The caller's own token of a name: whose comes from SO_PEERCRED, for
 * root and the admin group too (tokens are per user).
 */
int
control_mint(struct ctl_conn *cc, struct imsg *imsg)
{
	struct msg_ctltoken ct;
	const char	*code, *why;

	if (msg_ctltoken_decode(imsg->data, imsg->len, &ct) == -1)
		return (-1);
	if (token_request(cc->cc_uid, ct.ct_op, ct.ct_name, control_token,
	    cc, &code, &why) == -1)
		control_error(cc, code, "%s", why);
	return (0);
}

static void
control_tokeninfo(void *arg, const struct msg_tokeninfo *ti)
{
	struct ctl_conn	*cc = arg;
	void		*buf;
	size_t		 len;

	if (msg_tokeninfo_encode(ti, &buf, &len) == -1)
		fatal("%s: encode", __func__);
	control_reply(cc, IMSG_CTL_TOKENINFO, buf, len);
	free(buf);
}

/* The caller's own tokens' names and times; never anyone else's. */
int
control_show_tokens(struct ctl_conn *cc, struct imsg *imsg)
{
	token_list(cc->cc_uid, control_tokeninfo, cc);
	control_reply(cc, IMSG_CTL_END, NULL, 0);
	return (0);
}

int
control_stats(struct ctl_conn *cc, struct imsg *imsg)
{
	control_show_stats(cc);
	return (0);
}

/*
 * IMSG_CTL_METRICS, for root and the admin group (the table says so):
 * the exposition as fencectl prints it, CHUNKs of its standard output.
 */
int
control_metrics(struct ctl_conn *cc, struct imsg *imsg)
{
	struct svc_who	 w;

	if (control_room(cc) == -1)
		return (0);
	control_who(cc, &w);
	svc_metrics(&w, control_answer, cc);
	return (0);
}

/* Text for fencectl's standard output, in chunks it takes. */
void
control_text(struct ctl_conn *cc, const char *text, size_t len)
{
	struct msg_chunk ch;
	void		*buf;
	size_t		 n, blen;

	memset(&ch, 0, sizeof(ch));
	ch.ch_stream = MSG_CHUNK_STDOUT;
	while (len > 0) {
		n = len > MSG_CHUNK_MAX ? MSG_CHUNK_MAX : len;
		ch.ch_data = (uint8_t *)(uintptr_t)text;
		ch.ch_len = n;
		if (msg_chunk_encode(&ch, &buf, &blen) == -1) {
			log_warn("%s: encode", __func__);
			control_doom(cc);
			return;
		}
		control_reply(cc, IMSG_CTL_CHUNK, buf, blen);
		free(buf);
		text += n;
		len -= n;
	}
}

int
control_verbosity(struct imsg *imsg)
{
	int32_t		 v;

	return (msg_i32_decode(imsg->data, imsg->len, &v, 0, 3));
}

int
control_empty(struct imsg *imsg)
{
	return (msg_empty_decode(imsg->data, imsg->len));
}

/* Checked by control_verbosity() before. */
int
control_log_verbose(struct ctl_conn *cc, struct imsg *imsg)
{
	int32_t		 v;
	void		*buf;
	size_t		 len;

	if (msg_i32_decode(imsg->data, imsg->len, &v, 0, 3) == -1)
		return (-1);
	log_setverbose(v);
	broker_self.ps_conf.c_verbose = v;
	if (msg_i32_encode(v, &buf, &len) == -1 ||
	    proc_compose(&broker_self, PROC_PARENT, IMSG_LOG_VERBOSE, 0, -1,
	    buf, len) == -1)
		fatal("%s: log verbose to parent", __func__);
	free(buf);
	control_ok(cc);
	return (0);
}

#ifdef FENCED_TEST_HOOKS
int
control_test_syscall(struct ctl_conn *cc, struct imsg *imsg)
{
	/* Outside the broker's allowlist: the filter must kill us. */
	log_warnx("%s: test hook: calling socket(2)", __func__);
	(void)socket(AF_INET, SOCK_DGRAM, 0);
	control_error(cc, "internal", "socket(2) was not refused");
	return (0);
}
#endif

/*
 * `fencectl show audit [N]': the parent reads its log (the broker may
 * not) and sends the lines that are the caller's, or every line for
 * root and the admin group; they go to fencectl as they come, then END.
 */
struct audit_ask {
	struct inflight	 aa_in;		/* its maker: the connection */
	int		 aa_gone;	/* it closed: the lines are dropped */
};

static void	control_audit_orphan(struct inflight *);
static const struct inflight_kind audit_inflight = {
	"audit", control_audit_orphan
};
#define AUDIT_ASK_OF(in)	((struct audit_ask *)((char *)(in) -	\
				    offsetof(struct audit_ask, aa_in)))

static void
control_audit_orphan(struct inflight *in)
{
	AUDIT_ASK_OF(in)->aa_gone = 1;
}

int
control_show_audit(struct ctl_conn *cc, struct imsg *imsg)
{
	struct msg_audit_read r;
	struct audit_ask *aa;
	uint32_t	 n;
	void		*buf;
	size_t		 len;

	if (msg_u32_decode(imsg->data, imsg->len, &n, 1,
	    AUDIT_SHOW_MAX) == -1)
		return (-1);
	memset(&r, 0, sizeof(r));
	r.ar_uid = cc->cc_uid;
	r.ar_admin = cc->cc_admin;
	r.ar_count = n;
	if ((aa = calloc(1, sizeof(*aa))) == NULL)
		fatal("%s: calloc", __func__);
	inflight_add(&aa->aa_in, &audit_inflight, cc);
	if (msg_audit_read_encode(&r, &buf, &len) == -1)
		fatal("%s: encode", __func__);
	if (proc_compose(&broker_self, PROC_PARENT, IMSG_AUDIT_READ,
	    aa->aa_in.in_id, -1, buf, len) == -1)
		fatal("%s: to parent", __func__);
	free(buf);
	return (0);
}

/* IMSG_AUDIT_LINE and IMSG_AUDIT_END from the parent. */
void
control_audit_answer(struct imsg *imsg)
{
	struct msg_audit_line l;
	struct inflight	*in;
	struct audit_ask *aa;
	struct ctl_conn	*cc;

	if ((in = inflight_find(imsg->hdr.ih_peerid, &audit_inflight)) ==
	    NULL)
		fatalx("%s: parent answered unknown request %u", __func__,
		    imsg->hdr.ih_peerid);
	aa = AUDIT_ASK_OF(in);
	cc = aa->aa_gone ? NULL : in->in_maker;
	if (imsg->hdr.ih_type == IMSG_AUDIT_END) {
		if (msg_empty_decode(imsg->data, imsg->len) == -1)
			fatalx("%s: bad end from the parent", __func__);
		inflight_remove(in);
		free(aa);
		if (cc != NULL)
			control_reply(cc, IMSG_CTL_END, NULL, 0);
		return;
	}
	if (msg_audit_line_decode(imsg->data, imsg->len, &l) == -1)
		fatalx("%s: bad line from the parent", __func__);
	msg_audit_line_free(&l);
	if (cc != NULL)
		control_reply(cc, IMSG_CTL_AUDIT, imsg->data, imsg->len);
}
