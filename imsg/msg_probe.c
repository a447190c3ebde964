/*
 * msg_probe: the payloads of probing a fence, in the manner of msg.c.
 * The report itself is opaque bytes here: it came from inside a fence,
 * and only the prober parses it.
 */
#include <sys/types.h>

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fenced.h"
#include "msg.h"
#include "mp.h"
#include "probe_expect.h"

#define MSG_VERDICT_FIELDS	3
#define MSG_REPORT_FIELDS	17
#define MSG_HOST_FIELDS		23

static int
msg_probe_bad(void)
{
	errno = EBADMSG;
	return (-1);
}

static int
msg_probe_key_ok(const char *key)
{
	return (strnlen(key, FENCE_KEY_SIZE) < FENCE_KEY_SIZE &&
	    fence_key_valid(key));
}

static int
msg_verdict_valid(const struct msg_verdict *v)
{
	return (msg_probe_key_ok(v->v_key) && v->v_level >= LEVEL_UNMEASURED &&
	    v->v_level <= LEVEL_L4 && v->v_json != NULL &&
	    strlen(v->v_json) < MSG_VERDICT_JSON_MAX);
}

int
msg_verdict_encode(const struct msg_verdict *v, void **buf, size_t *len)
{
	struct mp_writer w;

	if (!msg_verdict_valid(v)) {
		errno = EINVAL;
		return (-1);
	}
	mp_write_init(&w);
	mp_write_array(&w, MSG_VERDICT_FIELDS);
	mp_write_str(&w, v->v_key, sizeof(v->v_key));
	mp_write_u64(&w, (uint64_t)v->v_level);
	mp_write_str(&w, v->v_json, MSG_VERDICT_JSON_MAX);
	return (mp_write_finish(&w, buf, len));
}

int
msg_verdict_decode(const void *data, size_t len, struct msg_verdict *out)
{
	struct msg_verdict v;
	struct mp_reader r;
	uint64_t	 level = 0;

	memset(&v, 0, sizeof(v));
	if ((v.v_json = malloc(MSG_VERDICT_JSON_MAX)) == NULL)
		return (-1);
	v.v_json[0] = '\0';
	mp_read_begin(&r, data, len, MSG_VERDICT_FIELDS);
	mp_read_str(&r, v.v_key, sizeof(v.v_key));
	mp_read_u64(&r, &level, LEVEL_UNMEASURED, LEVEL_L4);
	mp_read_str(&r, v.v_json, MSG_VERDICT_JSON_MAX);
	v.v_level = (int)level;
	if (mp_read_end(&r) == -1 || !msg_verdict_valid(&v)) {
		free(v.v_json);
		return (msg_probe_bad());
	}
	*out = v;
	return (0);
}

void
msg_verdict_free(struct msg_verdict *v)
{
	free(v->v_json);
	v->v_json = NULL;
}

static int
msg_expect_valid(const struct probe_expect *e)
{
	return (e->pe_tier >= TIER_L1 && e->pe_tier <= TIER_L2 &&
	    e->pe_backend >= BACKEND_NATIVE &&
	    e->pe_backend <= BACKEND_SUBPROCESS &&
	    e->pe_canary >= CANARY_NOT_RUN && e->pe_canary <= CANARY_YES &&
	    e->pe_host_pid >= 0);
}

static int
msg_host_valid(const struct probe_host *h)
{
	return (h->ph_seccomp >= 0 && h->ph_seccomp <= 2 && h->ph_nnp >= 0 &&
	    h->ph_nnp <= 1 && h->ph_usr_ro >= -1 && h->ph_usr_ro <= 1 &&
	    h->ph_etc_ro >= -1 && h->ph_etc_ro <= 1 &&
	    memchr(h->ph_status_error, '\0', sizeof(h->ph_status_error)) &&
	    memchr(h->ph_mounts_error, '\0', sizeof(h->ph_mounts_error)) &&
	    memchr(h->ph_net_error, '\0', sizeof(h->ph_net_error)) &&
	    memchr(h->ph_iface_other, '\0', sizeof(h->ph_iface_other)));
}

/* The host's reading of pid 1: one nested array, every field bounded. */
static void
msg_host_write(struct mp_writer *w, const struct probe_host *h)
{
	uint32_t	 i, nbad;

	nbad = h->ph_nbad < PROBE_HOST_BINDS_MAX ? h->ph_nbad :
	    PROBE_HOST_BINDS_MAX;
	mp_write_array(w, MSG_HOST_FIELDS);
	mp_write_bool(w, h->ph_status_read);
	mp_write_str(w, h->ph_status_error, sizeof(h->ph_status_error));
	mp_write_array(w, 4);
	for (i = 0; i < 4; i++)
		mp_write_u64(w, h->ph_uid[i]);
	mp_write_u64(w, h->ph_nspid_depth);
	mp_write_u64(w, h->ph_nspid_self_depth);
	mp_write_u64(w, h->ph_nspid_last);
	mp_write_u64(w, (uint64_t)h->ph_seccomp);
	mp_write_u64(w, h->ph_filters);
	mp_write_u64(w, h->ph_filters_self);
	mp_write_u64(w, (uint64_t)h->ph_nnp);
	mp_write_array(w, HOST_CAP_MAX);
	for (i = 0; i < HOST_CAP_MAX; i++)
		mp_write_u64(w, h->ph_cap[i]);
	mp_write_bool(w, h->ph_mounts_read);
	mp_write_str(w, h->ph_mounts_error, sizeof(h->ph_mounts_error));
	mp_write_bool(w, h->ph_root_host);
	mp_write_i64(w, h->ph_usr_ro);
	mp_write_i64(w, h->ph_etc_ro);
	mp_write_u64(w, h->ph_nbad);
	mp_write_array(w, nbad);
	for (i = 0; i < nbad; i++)
		mp_write_str(w, h->ph_bad[i], sizeof(h->ph_bad[i]));
	mp_write_bool(w, h->ph_net_read);
	mp_write_str(w, h->ph_net_error, sizeof(h->ph_net_error));
	mp_write_bool(w, h->ph_canary_seen);
	mp_write_u64(w, h->ph_nifaces);
	mp_write_str(w, h->ph_iface_other, sizeof(h->ph_iface_other));
}

static int
msg_host_read(struct mp_reader *r, struct probe_host *h)
{
	uint64_t	 u;
	int64_t		 s;
	size_t		 i, n;

	if (mp_read_array(r, &n, MSG_HOST_FIELDS) == -1 ||
	    n != MSG_HOST_FIELDS)
		return (-1);
	mp_read_bool(r, &h->ph_status_read);
	mp_read_str(r, h->ph_status_error, sizeof(h->ph_status_error));
	if (mp_read_array(r, &n, 4) == -1 || n != 4)
		return (-1);
	for (i = 0; i < 4; i++) {
		mp_read_u64(r, &u, 0, UINT32_MAX);
		h->ph_uid[i] = (uint32_t)u;
	}
	mp_read_leave(r);
	mp_read_u64(r, &u, 0, UINT32_MAX);
	h->ph_nspid_depth = (uint32_t)u;
	mp_read_u64(r, &u, 0, UINT32_MAX);
	h->ph_nspid_self_depth = (uint32_t)u;
	mp_read_u64(r, &u, 0, UINT32_MAX);
	h->ph_nspid_last = (uint32_t)u;
	mp_read_u64(r, &u, 0, 2);
	h->ph_seccomp = (int)u;
	mp_read_u64(r, &u, 0, UINT32_MAX);
	h->ph_filters = (uint32_t)u;
	mp_read_u64(r, &u, 0, UINT32_MAX);
	h->ph_filters_self = (uint32_t)u;
	mp_read_u64(r, &u, 0, 1);
	h->ph_nnp = (int)u;
	if (mp_read_array(r, &n, HOST_CAP_MAX) == -1 || n != HOST_CAP_MAX)
		return (-1);
	for (i = 0; i < HOST_CAP_MAX; i++)
		mp_read_u64(r, &h->ph_cap[i], 0, UINT64_MAX);
	mp_read_leave(r);
	mp_read_bool(r, &h->ph_mounts_read);
	mp_read_str(r, h->ph_mounts_error, sizeof(h->ph_mounts_error));
	mp_read_bool(r, &h->ph_root_host);
	mp_read_i64(r, &s, -1, 1);
	h->ph_usr_ro = (int)s;
	mp_read_i64(r, &s, -1, 1);
	h->ph_etc_ro = (int)s;
	mp_read_u64(r, &u, 0, UINT32_MAX);
	h->ph_nbad = (uint32_t)u;
	if (mp_read_array(r, &n, PROBE_HOST_BINDS_MAX) == -1 ||
	    n != (h->ph_nbad < PROBE_HOST_BINDS_MAX ? h->ph_nbad :
	    PROBE_HOST_BINDS_MAX))
		return (-1);
	for (i = 0; i < n; i++)
		mp_read_str(r, h->ph_bad[i], sizeof(h->ph_bad[i]));
	mp_read_leave(r);
	mp_read_bool(r, &h->ph_net_read);
	mp_read_str(r, h->ph_net_error, sizeof(h->ph_net_error));
	mp_read_bool(r, &h->ph_canary_seen);
	mp_read_u64(r, &u, 0, UINT32_MAX);
	h->ph_nifaces = (uint32_t)u;
	mp_read_str(r, h->ph_iface_other, sizeof(h->ph_iface_other));
	return (mp_read_leave(r));
}

int
msg_probe_report_encode(const struct msg_probe_report *p, void **buf,
    size_t *len)
{
	const struct probe_expect *e = p->pr_expect;
	struct mp_writer w;

	if (!msg_probe_key_ok(p->pr_key) || e == NULL ||
	    !msg_expect_valid(e) || !msg_host_valid(&e->pe_host) ||
	    memchr(e->pe_run_error, '\0', sizeof(e->pe_run_error)) == NULL ||
	    p->pr_report_len > REPORT_MAX ||
	    (p->pr_report == NULL && p->pr_report_len != 0)) {
		errno = EINVAL;
		return (-1);
	}
	mp_write_init(&w);
	mp_write_array(&w, MSG_REPORT_FIELDS);
	mp_write_str(&w, p->pr_key, sizeof(p->pr_key));
	mp_write_u64(&w, (uint64_t)e->pe_tier);
	mp_write_u64(&w, (uint64_t)e->pe_backend);
	mp_write_str(&w, e->pe_boot_id, sizeof(e->pe_boot_id));
	mp_write_str(&w, e->pe_release, sizeof(e->pe_release));
	mp_write_str(&w, e->pe_version, sizeof(e->pe_version));
	mp_write_u64(&w, (uint64_t)e->pe_canary);
	mp_write_str(&w, e->pe_canary_target, sizeof(e->pe_canary_target));
	mp_write_str(&w, e->pe_secret, sizeof(e->pe_secret));
	mp_write_u64(&w, (uint64_t)e->pe_host_pid);
	mp_write_u64(&w, e->pe_ns_pid);
	mp_write_u64(&w, e->pe_ns_net);
	mp_write_u64(&w, e->pe_ns_mnt);
	mp_write_str(&w, e->pe_run_error, sizeof(e->pe_run_error));
	mp_write_bool(&w, e->pe_has_host);
	msg_host_write(&w, &e->pe_host);
	mp_write_bin(&w, p->pr_report != NULL ? p->pr_report :
	    (const uint8_t *)"", p->pr_report_len);
	return (mp_write_finish(&w, buf, len));
}

int
msg_probe_report_decode(const void *data, size_t len,
    struct msg_probe_report *out)
{
	struct msg_probe_report p;
	struct probe_expect *e;
	struct mp_reader r;
	const void	*rep = NULL;
	size_t		 replen = 0;
	uint64_t	 u[4] = { 0, 0, 0, 0 };
	int		 hostok;

	memset(&p, 0, sizeof(p));
	if ((e = calloc(1, sizeof(*e))) == NULL)
		return (-1);
	mp_read_begin(&r, data, len, MSG_REPORT_FIELDS);
	mp_read_str(&r, p.pr_key, sizeof(p.pr_key));
	mp_read_u64(&r, &u[0], TIER_L1, TIER_L2);
	mp_read_u64(&r, &u[1], BACKEND_NATIVE, BACKEND_SUBPROCESS);
	mp_read_str(&r, e->pe_boot_id, sizeof(e->pe_boot_id));
	mp_read_str(&r, e->pe_release, sizeof(e->pe_release));
	mp_read_str(&r, e->pe_version, sizeof(e->pe_version));
	mp_read_u64(&r, &u[2], CANARY_NOT_RUN, CANARY_YES);
	mp_read_str(&r, e->pe_canary_target, sizeof(e->pe_canary_target));
	mp_read_str(&r, e->pe_secret, sizeof(e->pe_secret));
	mp_read_u64(&r, &u[3], 0, INT32_MAX);
	mp_read_u64(&r, &e->pe_ns_pid, 0, UINT64_MAX);
	mp_read_u64(&r, &e->pe_ns_net, 0, UINT64_MAX);
	mp_read_u64(&r, &e->pe_ns_mnt, 0, UINT64_MAX);
	mp_read_str(&r, e->pe_run_error, sizeof(e->pe_run_error));
	mp_read_bool(&r, &e->pe_has_host);
	hostok = msg_host_read(&r, &e->pe_host) == 0;
	mp_read_bin(&r, &rep, &replen, REPORT_MAX);
	if (mp_read_end(&r) == -1 || !hostok ||
	    !msg_probe_key_ok(p.pr_key) || !msg_host_valid(&e->pe_host))
		goto bad;
	e->pe_tier = (int)u[0];
	e->pe_backend = (int)u[1];
	e->pe_canary = (int)u[2];
	e->pe_host_pid = (pid_t)u[3];
	if ((p.pr_report = malloc(replen + 1)) == NULL)
		goto bad;
	/* An empty report arrives as no bytes at all: rep is NULL then. */
	if (replen > 0)
		memcpy(p.pr_report, rep, replen);
	p.pr_report[replen] = '\0';
	p.pr_report_len = replen;
	p.pr_expect = e;
	*out = p;
	return (0);
 bad:
	free(e);
	return (msg_probe_bad());
}

void
msg_probe_report_free(struct msg_probe_report *p)
{
	free(p->pr_expect);
	free(p->pr_report);
	p->pr_expect = NULL;
	p->pr_report = NULL;
}
