/*
 * What the metrics ask of the fencer (docs/metrics.md): each fence's
 * cgroups as the kernel counts them (cpu time, memory and its peak,
 * processes and their peak) and the fencer's queues, in one answer
 * to the broker's IMSG_FENCE_USAGE_REQ.  A fence's cgroups are read
 * where every backend's are made: the fences' parent of each
 * controller, the fence's own folder below it.
 */
#include <sys/types.h>
#include <sys/queue.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fenced.h"
#include "cg.h"
#include "imsg.h"
#include "log.h"
#include "msg.h"
#include "fencer.h"

static void
fencer_usage_fence(const struct fence *f, struct msg_usage_fence *uf)
{
	static const struct { uint32_t cg, msg; } bits[] = {
		{ CG_USAGE_CPU, MSG_USAGE_CPU },
		{ CG_USAGE_MEM, MSG_USAGE_MEM },
		{ CG_USAGE_MEM_PEAK, MSG_USAGE_MEM_PEAK },
		{ CG_USAGE_PIDS, MSG_USAGE_PIDS },
		{ CG_USAGE_PIDS_PEAK, MSG_USAGE_PIDS_PEAK },
	};
	char		 dirs[CG_NCTRL][PATH_MAX];
	const char	*d[CG_NCTRL], *parent;
	struct cg_usage	 cu;
	size_t		 i;
	int		 n;

	strlcpy(uf->uf_key, f->f_info.f_key, sizeof(uf->uf_key));
	uf->uf_owner = f->f_info.f_owner;
	for (i = 0; i < CG_NCTRL; i++) {
		dirs[i][0] = '\0';
		if ((parent = fencer_cg_parent((int)i)) != NULL) {
			n = snprintf(dirs[i], sizeof(dirs[i]), "%s/%s", parent,
			    f->f_cgname);
			if (n < 0 || (size_t)n >= sizeof(dirs[i]))
				dirs[i][0] = '\0';
		}
		d[i] = dirs[i];
	}
	cg_fence_usage(d, &cu);
	uf->uf_cpu_usec = cu.cu_cpu_usec;
	uf->uf_mem_bytes = cu.cu_mem_bytes;
	uf->uf_mem_peak = cu.cu_mem_peak;
	uf->uf_pids = cu.cu_pids;
	uf->uf_pids_peak = cu.cu_pids_peak;
	for (i = 0; i < nitems(bits); i++)
		if (cu.cu_have & bits[i].cg)
			uf->uf_have |= bits[i].msg;
}

/*
 * IMSG_FENCE_USAGE_REQ: every booted fence (its cgroups made), the
 * first MSG_USAGE_FENCES_MAX of them in the fencer's order, and the
 * queues.
 */
void
fencer_usage(uint32_t reqid)
{
	struct msg_usage *u;
	struct fence	*f;
	void		*buf;
	size_t		 len;

	if ((u = calloc(1, sizeof(*u))) == NULL)
		fatal("%s: calloc", __func__);
	TAILQ_FOREACH(f, &fencer_fences, f_entry) {
		if (!f->f_started || !fence_key_valid(f->f_info.f_key) ||
		    f->f_info.f_owner == MSG_OWNER_NONE)
			continue;
		u->u_fences++;
		if (u->u_nfences < MSG_USAGE_FENCES_MAX)
			fencer_usage_fence(f, &u->u_fence[u->u_nfences++]);
	}
	fencer_queue_depths(u);
	if (msg_usage_encode(u, &buf, &len) == -1)
		fatal("%s: encode", __func__);
	free(u);
	if (proc_compose(&fencer_self, PROC_BROKER, IMSG_FENCE_USAGE, reqid,
	    -1, buf, len) == -1)
		fatal("%s: to broker", __func__);
	free(buf);
}
