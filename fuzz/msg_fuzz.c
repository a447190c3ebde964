/*
 * libFuzzer target for every msgpack decoder of imsg/msg*.c.  The first
 * byte picks the decoder, the rest is its payload.  Whatever the bytes,
 * a decoder must not crash, leak or read out of bounds; when it refuses,
 * errno is EBADMSG (or ENOMEM); when it accepts, the value must be one
 * its encoder accepts too (msg.c: "the encoder refuses what the decoder
 * would refuse"), and encode, decode, encode again must give the same
 * bytes.  The seeds in fuzz/corpus/msg/ come from the encoders
 * themselves (fuzz/mkseeds.c).
 */
#include <sys/types.h>

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fenced.h"
#include "fuzz.h"
#include "msg.h"
#include "probe_expect.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static void
fuzz_refused(void)
{
	if (errno != EBADMSG && errno != ENOMEM)
		FUZZ_FAIL();
}

static void
fuzz_same(void *b1, size_t l1, void *b2, size_t l2)
{
	if (l1 != l2 || memcmp(b1, b2, l1) != 0)
		FUZZ_FAIL();
	free(b1);
	free(b2);
}

static void	nofree(void *p) { (void)p; }
static void	verdict_free(void *p) { msg_verdict_free(p); }
static void	report_free(void *p) { msg_probe_report_free(p); }
static void	exec_free(void *p) { msg_exec_free(p); }
static void	result_free(void *p) { msg_result_free(p); }
static void	data_free(void *p) { msg_tunnel_data_free(p); }

/*
 * Decode; on success encode, decode that, encode again, and compare the
 * two encodings.  FREE releases what a decoded value owns.
 */
#define ROUND_TRIP(name, type, fr) do {					\
	type	 a, b;							\
	void	*e1, *e2;						\
	size_t	 l1, l2;						\
									\
	memset(&a, 0, sizeof(a));					\
	memset(&b, 0, sizeof(b));					\
	errno = 0;							\
	if (name##_decode(p, n, &a) == -1) {				\
		fuzz_refused();						\
		break;							\
	}								\
	if (name##_encode(&a, &e1, &l1) == -1)				\
		FUZZ_FAIL();					\
	if (name##_decode(e1, l1, &b) == -1)				\
		FUZZ_FAIL();					\
	if (name##_encode(&b, &e2, &l2) == -1)				\
		FUZZ_FAIL();					\
	fuzz_same(e1, l1, e2, l2);					\
	fr(&a);								\
	fr(&b);								\
} while (0)

enum fuzz_kind {
	FK_EMPTY, FK_U32, FK_I32, FK_CONFIG, FK_PROCINFO, FK_ERROR,
	FK_STATS, FK_VERDICT, FK_PROBE_REPORT, FK_BOOT, FK_FENCE_REQ,
	FK_FENCE, FK_TOKEN, FK_HOSTTOKEN, FK_HELLO, FK_EXEC, FK_RESULT,
	FK_GITCONFIG, FK_GITINIT, FK_TUNNEL_OPEN, FK_TUNNEL, FK_TUNNEL_DATA,
	FK_TUNNEL_CREDIT, FK_TUNNEL_CLOSE, FK_PORTS_REQ, FK_PORTLIST,
	FK_PORT_TICKET, FK_SNAP, FK_SNAP_INFO, FK_USAGE, FK_CHECK, FK_AUDIT,
	FK_AUDIT_READ, FK_AUDIT_LINE, FK_DENIAL, FK_TERM, FK_MAX
};

static void
fuzz_u32(const uint8_t *p, size_t n)
{
	uint32_t	 v, w;
	void		*e1, *e2;
	size_t		 l1, l2;

	errno = 0;
	/* The bounds the daemon uses are small ranges; so are these. */
	if (msg_u32_decode(p, n, &v, 0, 4096) == -1) {
		fuzz_refused();
		return;
	}
	if (v > 4096 || msg_u32_encode(v, &e1, &l1) == -1 ||
	    msg_u32_decode(e1, l1, &w, 0, 4096) == -1 || w != v ||
	    msg_u32_encode(w, &e2, &l2) == -1)
		FUZZ_FAIL();
	fuzz_same(e1, l1, e2, l2);
}

static void
fuzz_i32(const uint8_t *p, size_t n)
{
	int32_t		 v, w;
	void		*e1, *e2;
	size_t		 l1, l2;

	errno = 0;
	if (msg_i32_decode(p, n, &v, -8, 8) == -1) {
		fuzz_refused();
		return;
	}
	if (v < -8 || v > 8 || msg_i32_encode(v, &e1, &l1) == -1 ||
	    msg_i32_decode(e1, l1, &w, -8, 8) == -1 || w != v ||
	    msg_i32_encode(w, &e2, &l2) == -1)
		FUZZ_FAIL();
	fuzz_same(e1, l1, e2, l2);
}

/* msg_usage is large (MSG_USAGE_FENCES_MAX fences): on the heap. */
static void
fuzz_usage(const uint8_t *p, size_t n)
{
	struct msg_usage *a, *b;
	void		*e1, *e2;
	size_t		 l1, l2;

	if ((a = calloc(1, sizeof(*a))) == NULL ||
	    (b = calloc(1, sizeof(*b))) == NULL)
		abort();
	errno = 0;
	if (msg_usage_decode(p, n, a) == -1) {
		fuzz_refused();
		free(a);
		free(b);
		return;
	}
	if (a->u_nfences > MSG_USAGE_FENCES_MAX ||
	    a->u_nfences > a->u_fences ||
	    msg_usage_encode(a, &e1, &l1) == -1 ||
	    msg_usage_decode(e1, l1, b) == -1 ||
	    msg_usage_encode(b, &e2, &l2) == -1)
		FUZZ_FAIL();
	fuzz_same(e1, l1, e2, l2);
	free(a);
	free(b);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t	*p;
	size_t		 n;

	if (size < 1)
		return (0);
	p = data + 1;
	n = size - 1;
	switch (data[0] % FK_MAX) {
	case FK_EMPTY:
		errno = 0;
		if (msg_empty_decode(p, n) == -1)
			fuzz_refused();
		else if (n != 0)
			FUZZ_FAIL();	/* empty is empty */
		break;
	case FK_U32:
		fuzz_u32(p, n);
		break;
	case FK_I32:
		fuzz_i32(p, n);
		break;
	case FK_CONFIG:
		ROUND_TRIP(msg_config, struct fenced_config, nofree);
		break;
	case FK_PROCINFO:
		ROUND_TRIP(msg_procinfo, struct msg_procinfo, nofree);
		break;
	case FK_ERROR:
		ROUND_TRIP(msg_error, struct msg_error, nofree);
		break;
	case FK_STATS:
		ROUND_TRIP(msg_stats, struct msg_stats, nofree);
		break;
	case FK_VERDICT:
		ROUND_TRIP(msg_verdict, struct msg_verdict, verdict_free);
		break;
	case FK_PROBE_REPORT:
		ROUND_TRIP(msg_probe_report, struct msg_probe_report,
		    report_free);
		break;
	case FK_BOOT:
		ROUND_TRIP(msg_boot, struct msg_boot, nofree);
		break;
	case FK_FENCE_REQ:
		ROUND_TRIP(msg_fence_req, struct msg_fence_req, nofree);
		break;
	case FK_FENCE:
		ROUND_TRIP(msg_fence, struct msg_fence, nofree);
		break;
	case FK_TOKEN:
		ROUND_TRIP(msg_token, struct msg_token, nofree);
		break;
	case FK_HOSTTOKEN:
		ROUND_TRIP(msg_hosttoken, struct msg_hosttoken, nofree);
		break;
	case FK_HELLO:
		ROUND_TRIP(msg_hello, struct msg_hello, nofree);
		break;
	case FK_EXEC:
		ROUND_TRIP(msg_exec, struct msg_exec, exec_free);
		break;
	case FK_RESULT:
		ROUND_TRIP(msg_result, struct msg_result, result_free);
		break;
	case FK_GITCONFIG:
		ROUND_TRIP(msg_gitconfig, struct msg_gitconfig, nofree);
		break;
	case FK_GITINIT:
		ROUND_TRIP(msg_gitinit, struct msg_gitinit, nofree);
		break;
	case FK_TUNNEL_OPEN:
		ROUND_TRIP(msg_tunnel_open, struct msg_tunnel_open, nofree);
		break;
	case FK_TUNNEL:
		ROUND_TRIP(msg_tunnel, struct msg_tunnel, nofree);
		break;
	case FK_TUNNEL_DATA:
		ROUND_TRIP(msg_tunnel_data, struct msg_tunnel_data, data_free);
		break;
	case FK_TUNNEL_CREDIT:
		ROUND_TRIP(msg_tunnel_credit, struct msg_tunnel_credit,
		    nofree);
		break;
	case FK_TUNNEL_CLOSE:
		ROUND_TRIP(msg_tunnel_close, struct msg_tunnel_close, nofree);
		break;
	case FK_PORTS_REQ:
		ROUND_TRIP(msg_ports_req, struct msg_ports_req, nofree);
		break;
	case FK_PORTLIST:
		ROUND_TRIP(msg_portlist, struct msg_portlist, nofree);
		break;
	case FK_PORT_TICKET:
		ROUND_TRIP(msg_port_ticket, struct msg_port_ticket, nofree);
		break;
	case FK_SNAP:
		ROUND_TRIP(msg_snap, struct msg_snap, nofree);
		break;
	case FK_SNAP_INFO:
		ROUND_TRIP(msg_snap_info, struct msg_snap_info, nofree);
		break;
	case FK_USAGE:
		fuzz_usage(p, n);
		break;
	case FK_CHECK:
		ROUND_TRIP(msg_check, struct msg_check, nofree);
		break;
	case FK_AUDIT:
		ROUND_TRIP(msg_audit, struct msg_audit, nofree);
		break;
	case FK_AUDIT_READ:
		ROUND_TRIP(msg_audit_read, struct msg_audit_read, nofree);
		break;
	case FK_AUDIT_LINE:
		ROUND_TRIP(msg_audit_line, struct msg_audit_line,
		    msg_audit_line_free);
		break;
	case FK_DENIAL:
		ROUND_TRIP(msg_denial, struct msg_denial, nofree);
		break;
	case FK_TERM:
		/* No pointer in it: a decoded one owns nothing. */
		ROUND_TRIP(msg_term, struct msg_term, nofree);
		break;
	}
	return (0);
}
