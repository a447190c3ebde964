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
#include "msg_codec.h"
#include "probe_expect.h"

#define MSG_VERDICT_FIELDS	8

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

/* A string of a typed verdict: within size, printable ASCII, nonempty. */
static int
msg_verdict_text_ok(const char *s, size_t size, int empty)
{
	return (mc_printable(s, size) && (empty || s[0] != '\0'));
}

static int
msg_verdict_valid(const struct msg_verdict *v)
{
	uint32_t	 i;

	if (!msg_probe_key_ok(v->v_key) || v->v_level < LEVEL_UNMEASURED ||
	    v->v_level > LEVEL_L4 || v->v_json == NULL ||
	    strlen(v->v_json) >= MSG_VERDICT_JSON_MAX ||
	    v->v_kernel < MSG_KERNEL_UNMEASURED ||
	    v->v_kernel > MSG_KERNEL_SEPARATE ||
	    !msg_verdict_text_ok(v->v_kernel_release,
	    sizeof(v->v_kernel_release), 1) ||
	    !msg_verdict_text_ok(v->v_surface, sizeof(v->v_surface), 1) ||
	    v->v_naxes > MSG_VERDICT_AXES_MAX ||
	    v->v_nviolations > MSG_VERDICT_VIOLATIONS_MAX)
		return (0);
	for (i = 0; i < v->v_naxes; i++)
		if (!msg_verdict_text_ok(v->v_axes[i].va_name,
		    sizeof(v->v_axes[i].va_name), 0) ||
		    !msg_verdict_text_ok(v->v_axes[i].va_verdict,
		    sizeof(v->v_axes[i].va_verdict), 0))
			return (0);
	for (i = 0; i < v->v_nviolations; i++)
		if (!msg_verdict_text_ok(v->v_violations[i],
		    sizeof(v->v_violations[i]), 1))
			return (0);
	return (1);
}

int
msg_verdict_encode(const struct msg_verdict *v, void **buf, size_t *len)
{
	struct mp_writer w;
	uint32_t	 i;

	if (!msg_verdict_valid(v)) {
		errno = EINVAL;
		return (-1);
	}
	mp_write_init(&w);
	mp_write_array(&w, MSG_VERDICT_FIELDS);
	mp_write_str(&w, v->v_key, sizeof(v->v_key));
	mp_write_u64(&w, (uint64_t)v->v_level);
	mp_write_str(&w, v->v_json, MSG_VERDICT_JSON_MAX);
	mp_write_u64(&w, (uint64_t)v->v_kernel);
	mp_write_str(&w, v->v_kernel_release, sizeof(v->v_kernel_release));
	mp_write_array(&w, v->v_naxes);
	for (i = 0; i < v->v_naxes; i++) {
		mp_write_array(&w, 2);
		mp_write_str(&w, v->v_axes[i].va_name,
		    sizeof(v->v_axes[i].va_name));
		mp_write_str(&w, v->v_axes[i].va_verdict,
		    sizeof(v->v_axes[i].va_verdict));
	}
	mp_write_array(&w, v->v_nviolations);
	for (i = 0; i < v->v_nviolations; i++)
		mp_write_str(&w, v->v_violations[i],
		    sizeof(v->v_violations[i]));
	mp_write_str(&w, v->v_surface, sizeof(v->v_surface));
	return (mp_write_finish(&w, buf, len));
}

/* The typed part of a verdict: its axes and its violations; -1: bad. */
static int
msg_verdict_decode_lists(struct mp_reader *r, struct msg_verdict *v)
{
	size_t		 n = 0, m = 0, i;

	if (mp_read_array(r, &n, MSG_VERDICT_AXES_MAX) == -1)
		return (-1);
	for (i = 0; i < n; i++) {
		if (mp_read_array(r, &m, 2) == -1 || m != 2 ||
		    mp_read_str(r, v->v_axes[i].va_name,
		    sizeof(v->v_axes[i].va_name)) == -1 ||
		    mp_read_str(r, v->v_axes[i].va_verdict,
		    sizeof(v->v_axes[i].va_verdict)) == -1 ||
		    mp_read_leave(r) == -1)
			return (-1);
	}
	v->v_naxes = (uint32_t)n;
	if (mp_read_leave(r) == -1 ||
	    mp_read_array(r, &n, MSG_VERDICT_VIOLATIONS_MAX) == -1)
		return (-1);
	for (i = 0; i < n; i++)
		if (mp_read_str(r, v->v_violations[i],
		    sizeof(v->v_violations[i])) == -1)
			return (-1);
	v->v_nviolations = (uint32_t)n;
	return (mp_read_leave(r));
}

int
msg_verdict_decode(const void *data, size_t len, struct msg_verdict *out)
{
	struct msg_verdict v;
	struct mp_reader r;
	uint64_t	 level = 0, kernel = 0;
	int		 bad;

	memset(&v, 0, sizeof(v));
	if ((v.v_json = malloc(MSG_VERDICT_JSON_MAX)) == NULL)
		return (-1);
	v.v_json[0] = '\0';
	mp_read_begin(&r, data, len, MSG_VERDICT_FIELDS);
	mp_read_str(&r, v.v_key, sizeof(v.v_key));
	mp_read_u64(&r, &level, LEVEL_UNMEASURED, LEVEL_L4);
	mp_read_str(&r, v.v_json, MSG_VERDICT_JSON_MAX);
	mp_read_u64(&r, &kernel, MSG_KERNEL_UNMEASURED, MSG_KERNEL_SEPARATE);
	mp_read_str(&r, v.v_kernel_release, sizeof(v.v_kernel_release));
	bad = msg_verdict_decode_lists(&r, &v) == -1;
	if (!bad)
		mp_read_str(&r, v.v_surface, sizeof(v.v_surface));
	v.v_level = (int)level;
	v.v_kernel = (int)kernel;
	/* The reader is released whatever the lists held. */
	if (mp_read_end(&r) == -1 || bad || !msg_verdict_valid(&v)) {
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

/* A target of the egress checks: one exact entry, or "" for none. */
static int
msg_egress_target_valid(const char *t)
{
	size_t	 n = strnlen(t, EGRESS_ENTRY_LEN);

	return (n == 0 || (n < EGRESS_ENTRY_LEN && egress_entry_valid(t) &&
	    t[0] != '*'));
}

/*
 * The egress list and the probe's targets: a list only for an L2 fence
 * of a backend that may hold one (the only one the fencer builds with
 * a list), always with a target off it; no targets without a list.
 */
static int
msg_expect_egress_valid(const struct probe_expect *e)
{
	if (!msg_egress_list_valid(e->pe_egress, e->pe_negress) ||
	    !msg_egress_target_valid(e->pe_egress_allowed) ||
	    !msg_egress_target_valid(e->pe_egress_refused))
		return (0);
	if (e->pe_negress == 0)
		return (e->pe_egress_allowed[0] == '\0' &&
		    e->pe_egress_refused[0] == '\0');
	return (e->pe_tier == TIER_L2 && e->pe_traits.pt_egress &&
	    e->pe_egress_refused[0] != '\0');
}

/*
 * What the backend declares of the fence: the judge grants by it, so
 * every field is checked; the home's words go into the boundary.
 */
static int
msg_traits_valid(const struct probe_traits *t)
{
	return (t->pt_kernel >= PROBE_KERNEL_HOST &&
	    t->pt_kernel < PROBE_KERNEL_MAX &&
	    (t->pt_procs_apart == 0 || t->pt_procs_apart == 1) &&
	    (t->pt_files_apart == 0 || t->pt_files_apart == 1) &&
	    (t->pt_net_own == 0 || t->pt_net_own == 1) &&
	    (t->pt_egress == 0 || t->pt_egress == 1) &&
	    (t->pt_inner == PROBE_KERNEL_HOST ||
	    (t->pt_inner == PROBE_KERNEL_USER &&
	    t->pt_kernel == PROBE_KERNEL_GUEST)) &&
	    mc_printable(t->pt_home, sizeof(t->pt_home)));
}

static int
msg_expect_valid(const struct probe_expect *e)
{
	return (e->pe_tier >= TIER_L1 && e->pe_tier <= TIER_L2 &&
	    e->pe_backend >= BACKEND_MIN &&
	    e->pe_backend < BACKEND_MAX && msg_traits_valid(&e->pe_traits) &&
	    e->pe_canary >= CANARY_NOT_RUN && e->pe_canary <= CANARY_YES &&
	    e->pe_host_pid >= 0 && msg_expect_egress_valid(e));
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
#define PH_UID(i)	MC_UAT(offsetof(struct probe_host, ph_uid) + \
			    (i) * sizeof(uint32_t), sizeof(uint32_t), \
			    0, UINT32_MAX)
static const struct mc_field msg_host_uid_fields[] = {
	PH_UID(0), PH_UID(1), PH_UID(2), PH_UID(3),
};
static const struct mc_table msg_host_uid = MC_TABLE(msg_host_uid_fields);

#define PH_CAP(i)	MC_UAT(offsetof(struct probe_host, ph_cap) + \
			    (i) * sizeof(uint64_t), sizeof(uint64_t), \
			    0, UINT64_MAX)
static const struct mc_field msg_host_cap_fields[HOST_CAP_MAX] = {
	PH_CAP(HOST_CAP_EFF), PH_CAP(HOST_CAP_PRM), PH_CAP(HOST_CAP_BND),
	PH_CAP(HOST_CAP_AMB),
};
static const struct mc_table msg_host_cap = MC_TABLE(msg_host_cap_fields);

static const struct mc_field msg_host_fields[] = {
	MC_B(struct probe_host, ph_status_read),
	MC_S(struct probe_host, ph_status_error),
	MC_NEST(msg_host_uid),
	MC_U(struct probe_host, ph_nspid_depth, 0, UINT32_MAX),
	MC_U(struct probe_host, ph_nspid_self_depth, 0, UINT32_MAX),
	MC_U(struct probe_host, ph_nspid_last, 0, UINT32_MAX),
	MC_U(struct probe_host, ph_seccomp, 0, 2),
	MC_U(struct probe_host, ph_filters, 0, UINT32_MAX),
	MC_U(struct probe_host, ph_filters_self, 0, UINT32_MAX),
	MC_U(struct probe_host, ph_nnp, 0, 1),
	MC_B(struct probe_host, ph_userns_own),
	MC_B(struct probe_host, ph_userns_root),
	MC_NEST(msg_host_cap),
	MC_B(struct probe_host, ph_mounts_read),
	MC_S(struct probe_host, ph_mounts_error),
	MC_B(struct probe_host, ph_root_host),
	MC_I(struct probe_host, ph_usr_ro, -1, 1),
	MC_I(struct probe_host, ph_etc_ro, -1, 1),
	MC_U(struct probe_host, ph_nbad, 0, UINT32_MAX),
	MC_STRS_OF(struct probe_host, ph_bad, ph_nbad),
	MC_B(struct probe_host, ph_files_apart),
	MC_U(struct probe_host, ph_inner_nhost, 0, UINT32_MAX),
	MC_B(struct probe_host, ph_net_read),
	MC_S(struct probe_host, ph_net_error),
	MC_B(struct probe_host, ph_canary_seen),
	MC_U(struct probe_host, ph_nifaces, 0, UINT32_MAX),
	MC_S(struct probe_host, ph_iface_other),
};
static const struct mc_table msg_host = MC_TABLE(msg_host_fields);

static const struct mc_field msg_traits_fields[] = {
	MC_U(struct probe_traits, pt_kernel, PROBE_KERNEL_HOST,
	    PROBE_KERNEL_MAX - 1),
	MC_B(struct probe_traits, pt_procs_apart),
	MC_B(struct probe_traits, pt_files_apart),
	MC_B(struct probe_traits, pt_net_own),
	MC_B(struct probe_traits, pt_egress),
	MC_S(struct probe_traits, pt_home),
	MC_U(struct probe_traits, pt_inner, PROBE_KERNEL_HOST,
	    PROBE_KERNEL_MAX - 1),
};
static const struct mc_table msg_traits = MC_TABLE(msg_traits_fields);

/* The report as it travels: its key, what the host expects, the bytes. */
struct msg_report_wire {
	char			 rw_key[FENCE_KEY_SIZE];
	struct probe_expect	 rw_e;
	uint8_t			*rw_report;
	size_t			 rw_report_len;
};

#define RW	struct msg_report_wire
static const struct mc_field msg_report_fields[] = {
	MC_S(RW, rw_key),
	MC_U(RW, rw_e.pe_tier, TIER_L1, TIER_L2),
	MC_U(RW, rw_e.pe_backend, BACKEND_MIN, BACKEND_MAX - 1),
	MC_SUB(RW, rw_e.pe_traits, msg_traits),
	MC_S(RW, rw_e.pe_boot_id),
	MC_S(RW, rw_e.pe_release),
	MC_S(RW, rw_e.pe_version),
	MC_U(RW, rw_e.pe_canary, CANARY_NOT_RUN, CANARY_YES),
	MC_S(RW, rw_e.pe_canary_target),
	MC_S(RW, rw_e.pe_secret),
	MC_U(RW, rw_e.pe_host_pid, 0, INT32_MAX),
	MC_U(RW, rw_e.pe_ns_pid, 0, UINT64_MAX),
	MC_U(RW, rw_e.pe_ns_net, 0, UINT64_MAX),
	MC_U(RW, rw_e.pe_ns_mnt, 0, UINT64_MAX),
	MC_S(RW, rw_e.pe_run_error),
	MC_B(RW, rw_e.pe_has_host),
	MC_SUB(RW, rw_e.pe_host, msg_host),
	MC_STRS(RW, rw_e.pe_egress, rw_e.pe_negress),
	MC_S(RW, rw_e.pe_egress_allowed),
	MC_S(RW, rw_e.pe_egress_refused),
	MC_REPORT(RW, rw_report, rw_report_len, REPORT_MAX),
};
#undef RW
static const struct mc_table msg_report = MC_TABLE(msg_report_fields);

int
msg_probe_report_encode(const struct msg_probe_report *p, void **buf,
    size_t *len)
{
	const struct probe_expect *e = p->pr_expect;
	struct msg_report_wire *rw;
	int		 rv;

	if (!msg_probe_key_ok(p->pr_key) || e == NULL ||
	    !msg_expect_valid(e) || !msg_host_valid(&e->pe_host) ||
	    memchr(e->pe_run_error, '\0', sizeof(e->pe_run_error)) == NULL ||
	    p->pr_report_len > REPORT_MAX ||
	    (p->pr_report == NULL && p->pr_report_len != 0)) {
		errno = EINVAL;
		return (-1);
	}
	if ((rw = calloc(1, sizeof(*rw))) == NULL)
		return (-1);
	memcpy(rw->rw_key, p->pr_key, sizeof(rw->rw_key));
	rw->rw_e = *e;
	rw->rw_report = p->pr_report;
	rw->rw_report_len = p->pr_report_len;
	rv = mc_encode(&msg_report, rw, buf, len);
	explicit_bzero(rw, sizeof(*rw));	/* the host secret's path */
	free(rw);
	return (rv);
}

int
msg_probe_report_decode(const void *data, size_t len,
    struct msg_probe_report *out)
{
	struct msg_probe_report p;
	struct msg_report_wire *rw;
	struct probe_expect *e;

	if ((rw = malloc(sizeof(*rw))) == NULL)
		return (-1);
	if (mc_decode(&msg_report, data, len, rw, sizeof(*rw)) == -1 ||
	    !msg_probe_key_ok(rw->rw_key) ||
	    !msg_host_valid(&rw->rw_e.pe_host) ||
	    !msg_traits_valid(&rw->rw_e.pe_traits) ||
	    !msg_expect_egress_valid(&rw->rw_e))
		goto bad;
	if ((e = malloc(sizeof(*e))) == NULL)
		goto bad;
	*e = rw->rw_e;
	memset(&p, 0, sizeof(p));
	memcpy(p.pr_key, rw->rw_key, sizeof(p.pr_key));
	p.pr_expect = e;
	p.pr_report = rw->rw_report;
	p.pr_report_len = rw->rw_report_len;
	free(rw);
	*out = p;
	return (0);
 bad:
	mc_free(&msg_report, rw);
	free(rw);
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
