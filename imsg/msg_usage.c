/*
 * msg_usage: the fencer's answer to the broker's IMSG_FENCE_USAGE_REQ
 * (docs/metrics.md): its queues, and each fence's cgroups as the kernel
 * counts them.  Every key valid, every owner a real uid, no bit but the
 * known ones, at most MSG_USAGE_FENCES_MAX fences and never more than
 * the fencer says it holds.
 */
#include <sys/types.h>

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fenced.h"
#include "msg.h"
#include "mp.h"
#include "msg_codec.h"

static const struct mc_field msg_usage_fence_fields[] = {
	MC_S(struct msg_usage_fence, uf_key),
	MC_U(struct msg_usage_fence, uf_owner, 0, UINT32_MAX - 1),
	MC_U(struct msg_usage_fence, uf_have, 0, MSG_USAGE_ALL),
	MC_U(struct msg_usage_fence, uf_cpu_usec, 0, UINT64_MAX),
	MC_U(struct msg_usage_fence, uf_mem_bytes, 0, UINT64_MAX),
	MC_U(struct msg_usage_fence, uf_mem_peak, 0, UINT64_MAX),
	MC_U(struct msg_usage_fence, uf_pids, 0, UINT64_MAX),
	MC_U(struct msg_usage_fence, uf_pids_peak, 0, UINT64_MAX),
};
static const struct mc_table msg_usage_fence =
    MC_TABLE(msg_usage_fence_fields);

static const struct mc_field msg_usage_fields[] = {
	MC_U(struct msg_usage, u_boots_queued, 0, UINT32_MAX),
	MC_U(struct msg_usage, u_probes_queued, 0, UINT32_MAX),
	MC_U(struct msg_usage, u_probes_running, 0, UINT32_MAX),
	MC_U(struct msg_usage, u_probe_slots, 0, UINT32_MAX),
	MC_U(struct msg_usage, u_fences, 0, UINT32_MAX),
	MC_ARRAY(struct msg_usage, u_fence, u_nfences, msg_usage_fence),
};
static const struct mc_table msg_usage = MC_TABLE(msg_usage_fields);

static int
msg_usage_valid(const struct msg_usage *u)
{
	const struct msg_usage_fence *uf;
	uint32_t	 i;

	if (u->u_nfences > MSG_USAGE_FENCES_MAX ||
	    u->u_nfences > u->u_fences)
		return (0);
	for (i = 0; i < u->u_nfences; i++) {
		uf = &u->u_fence[i];
		if (memchr(uf->uf_key, '\0', sizeof(uf->uf_key)) == NULL ||
		    !fence_key_valid(uf->uf_key) ||
		    uf->uf_owner == MSG_OWNER_NONE ||
		    (uf->uf_have & ~MSG_USAGE_ALL) != 0)
			return (0);
	}
	return (1);
}

int
msg_usage_encode(const struct msg_usage *u, void **buf, size_t *len)
{
	if (!msg_usage_valid(u)) {
		errno = EINVAL;
		return (-1);
	}
	return (mc_encode(&msg_usage, u, buf, len));
}

/* Into *out, which is large (MSG_USAGE_FENCES_MAX fences): not a stack's. */
int
msg_usage_decode(const void *data, size_t len, struct msg_usage *out)
{
	if (mc_decode(&msg_usage, data, len, out, sizeof(*out)) == -1 ||
	    !msg_usage_valid(out)) {
		memset(out, 0, sizeof(*out));
		errno = EBADMSG;
		return (-1);
	}
	return (0);
}
