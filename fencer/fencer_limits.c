/*
 * A boot's limits against the configuration (issue 9): the ceilings of
 * one fence and the totals of one owner's fences, checked before
 * anything of the fence is made (fencer_limits_admit(), a step of
 * fencer_fence.c's boot).  A request above either is refused with
 * limit-over-ceiling or user-total-exceeded, never clamped.
 */
#include <sys/types.h>
#include <sys/queue.h>

#include <stdint.h>
#include <stdio.h>

#include "fenced.h"
#include "msg.h"
#include "fencer.h"
#include "backend.h"

/* A size as fenced.conf(5) writes it: 512M, 2G, or bytes. */
static void
limits_fmt_size(uint64_t v, char *buf, size_t len)
{
	static const char	 units[] = "TGMK";
	int			 i;

	for (i = 0; i < 4; i++) {
		int	 shift = 10 * (4 - i);

		if (v != 0 && (v & ((1ULL << shift) - 1)) == 0) {
			snprintf(buf, len, "%llu%c",
			    (unsigned long long)(v >> shift), units[i]);
			return;
		}
	}
	snprintf(buf, len, "%llu", (unsigned long long)v);
}

static void
limits_fmt_cpu(uint32_t milli, char *buf, size_t len)
{
	if (milli % 1000 == 0)
		snprintf(buf, len, "%u", milli / 1000);
	else
		snprintf(buf, len, "%.3g", milli / 1000.0);
}

/*
 * The memory a fence of backend be (NULL: none, the boot fails anyway)
 * with that limit holds against its owner's total: what its memory
 * cgroup allows, the backend's own beyond the limit included (a vm
 * fence's QEMU, docs/vm.md).  The one place the total counts it.
 */
static uint64_t
limits_memory_held(const struct fencer_backend *be, uint64_t limit)
{
	return (limit + (be != NULL ? be->fb_memory_extra : 0));
}

/* Each limit and the lifetime of one fence at most its ceiling. */
static int
limits_ceilings(uint32_t reqid, const struct fence_limits *out,
    uint32_t lifetime)
{
	const struct fenced_config *c = &fencer_self.ps_conf;
	const struct fence_limits *max = &c->c_limits_max;
	char			 a[32], m[32];

	if (out->fl_memory > max->fl_memory) {
		limits_fmt_size(out->fl_memory, a, sizeof(a));
		limits_fmt_size(max->fl_memory, m, sizeof(m));
		fencer_send_error(IMSG_FENCE_FAILED, reqid,
		    "limit-over-ceiling", "memory %s is above the ceiling %s "
		    "(limit memory ... max in fenced.conf)", a, m);
		return (-1);
	}
	if (out->fl_pids > max->fl_pids) {
		fencer_send_error(IMSG_FENCE_FAILED, reqid,
		    "limit-over-ceiling", "pids %u is above the ceiling %u "
		    "(limit pids ... max in fenced.conf)", out->fl_pids,
		    max->fl_pids);
		return (-1);
	}
	if (out->fl_cpu_milli > max->fl_cpu_milli) {
		limits_fmt_cpu(out->fl_cpu_milli, a, sizeof(a));
		limits_fmt_cpu(max->fl_cpu_milli, m, sizeof(m));
		fencer_send_error(IMSG_FENCE_FAILED, reqid,
		    "limit-over-ceiling", "cpu %s is above the ceiling %s "
		    "(limit cpu ... max in fenced.conf)", a, m);
		return (-1);
	}
	if (lifetime > c->c_lifetime_max) {
		fencer_send_error(IMSG_FENCE_FAILED, reqid,
		    "limit-over-ceiling", "lifetime %u s is above the ceiling "
		    "%u s (lifetime ... max in fenced.conf)", lifetime,
		    c->c_lifetime_max);
		return (-1);
	}
	return (0);
}

/*
 * The owner's running fences, this one (of backend, with limits out)
 * with them, within the per-user totals: the memory each holds
 * (limits_memory_held()).  Booting fences count: they hold their
 * cgroups already.
 */
static int
limits_totals(uint32_t reqid, uid_t owner, int backend,
    const struct fence_limits *out)
{
	const struct fenced_config *c = &fencer_self.ps_conf;
	const struct fence_limits *tot = &c->c_user_limits;
	struct fence_limits	 sum;
	struct fence		*f;
	char			 a[32], m[32], x[32], extra[96];
	uint64_t		 limits;
	uint32_t		 n = 0;

	sum = *out;
	sum.fl_memory = limits_memory_held(fencer_backend(backend),
	    out->fl_memory);
	limits = out->fl_memory;
	TAILQ_FOREACH(f, &fencer_fences, f_entry) {
		if (f->f_info.f_owner != owner)
			continue;
		n++;
		sum.fl_memory += limits_memory_held(f->f_backend,
		    f->f_info.f_limits.fl_memory);
		limits += f->f_info.f_limits.fl_memory;
		sum.fl_pids += f->f_info.f_limits.fl_pids;
		sum.fl_cpu_milli += f->f_info.f_limits.fl_cpu_milli;
	}
	if (n + 1 > c->c_user_fences) {
		fencer_send_error(IMSG_FENCE_FAILED, reqid,
		    "user-total-exceeded", "uid %u has %u fences running, the "
		    "most one user may have (user limit fences)",
		    (unsigned)owner, n);
		return (-1);
	}
	if (sum.fl_memory > tot->fl_memory) {
		limits_fmt_size(sum.fl_memory, a, sizeof(a));
		limits_fmt_size(tot->fl_memory, m, sizeof(m));
		extra[0] = '\0';
		if (sum.fl_memory > limits) {
			limits_fmt_size(sum.fl_memory - limits, x, sizeof(x));
			snprintf(extra, sizeof(extra), " (%s of it beyond "
			    "their limits: QEMU's own, in a vm fence)", x);
		}
		fencer_send_error(IMSG_FENCE_FAILED, reqid,
		    "user-total-exceeded", "with this fence the fences of uid "
		    "%u would hold memory %s%s, above the total %s one user "
		    "may have (user limit memory)", (unsigned)owner, a,
		    extra, m);
		return (-1);
	}
	if (sum.fl_pids > tot->fl_pids) {
		fencer_send_error(IMSG_FENCE_FAILED, reqid,
		    "user-total-exceeded", "with this fence the fences of uid "
		    "%u would hold pids %u, above the total %u one user may "
		    "have (user limit pids)", (unsigned)owner,
		    sum.fl_pids, tot->fl_pids);
		return (-1);
	}
	if (sum.fl_cpu_milli > tot->fl_cpu_milli) {
		limits_fmt_cpu(sum.fl_cpu_milli, a, sizeof(a));
		limits_fmt_cpu(tot->fl_cpu_milli, m, sizeof(m));
		fencer_send_error(IMSG_FENCE_FAILED, reqid,
		    "user-total-exceeded", "with this fence the fences of uid "
		    "%u would hold cpu %s, above the total %s one user may "
		    "have (user limit cpu)", (unsigned)owner, a, m);
		return (-1);
	}
	return (0);
}

/*
 * What a boot asks for against what the configuration allows (issue 9):
 * each limit and the lifetime at most its ceiling, then the owner's
 * running fences, this one with them, within the per-user totals.  A
 * request above either is refused, never clamped, whoever asks: an admin
 * raises a ceiling in fenced.conf.  Fills in the defaults for what was
 * not asked; returns 0, or -1 once the broker has the error.
 */
int
fencer_limits_admit(uint32_t reqid, const struct msg_boot *b, int backend,
    struct fence_limits *out, uint32_t *lifetime)
{
	const struct fenced_config *c = &fencer_self.ps_conf;

	*out = c->c_limits;
	if (b->b_limits.fl_memory != 0)
		out->fl_memory = b->b_limits.fl_memory;
	if (b->b_limits.fl_pids != 0)
		out->fl_pids = b->b_limits.fl_pids;
	if (b->b_limits.fl_cpu_milli != 0)
		out->fl_cpu_milli = b->b_limits.fl_cpu_milli;
	*lifetime = b->b_lifetime != 0 ? b->b_lifetime : c->c_lifetime;
	if (limits_ceilings(reqid, out, *lifetime) == -1 ||
	    limits_totals(reqid, b->b_owner, backend, out) == -1)
		return (-1);
	return (0);
}
