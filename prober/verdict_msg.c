/*
 * The verdicts typed, beside their JSON, for the broker (struct
 * msg_verdict): the kernel that answered, each axis's verdict by name in
 * the order the JSON shows them, and every violation the JSON lists.
 * The broker keeps the kernel in a fence's state and names the rest in
 * a refusal; it never parses the JSON again.
 */
#include <sys/types.h>

#include <string.h>

#include "fenced.h"
#include "msg.h"
#include "report_impl.h"

/* Printable ASCII only: the release is the fence's word. */
static void
verdict_msg_printable(char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e)
			*s = '?';
}

/*
 * The surface axis in a line: "fenced, the host's kernel: none
 * reachable", "passes, its own kernel in user space: io_uring keyctl",
 * or the verdict alone when it was not measured.
 */
static void
verdict_msg_surface(const struct probe_verdict *pv, char *buf, size_t len)
{
	static const char *const whose[PROBE_KERNEL_MAX] = {
		[PROBE_KERNEL_HOST] = "the host's kernel",
		[PROBE_KERNEL_USER] = "its own kernel in user space",
		[PROBE_KERNEL_GUEST] = "its guest kernel",
	};
	int	 i, k = pv->pv_surface_kernel, n = 0;

	strlcpy(buf, verdict_name(pv->pv_axes[AXIS_SURFACE].av_verdict), len);
	if (!pv->pv_has_surface)
		return;
	strlcat(buf, ", ", len);
	strlcat(buf, k >= 0 && k < PROBE_KERNEL_MAX ? whose[k] :
	    whose[PROBE_KERNEL_HOST], len);
	strlcat(buf, ":", len);
	for (i = 0; i < SURFACE_MAX; i++)
		if (pv->pv_surface & (1U << i)) {
			strlcat(buf, " ", len);
			strlcat(buf, report_surface_ids[i], len);
			n++;
		}
	if (n == 0)
		strlcat(buf, " none reachable", len);
}

void
verdict_msg(const struct probe_verdict *pv, struct msg_verdict *v)
{
	const struct probe_axis_verdict *a;
	int		 i, j;

	switch (pv->pv_axes[AXIS_KERNEL].av_verdict) {
	case VERDICT_SEPARATE:
		v->v_kernel = MSG_KERNEL_SEPARATE;
		break;
	case VERDICT_SHARED:
		v->v_kernel = MSG_KERNEL_SHARED;
		break;
	default:
		v->v_kernel = MSG_KERNEL_UNMEASURED;
		break;
	}
	strlcpy(v->v_kernel_release, pv->pv_release,
	    sizeof(v->v_kernel_release));
	verdict_msg_printable(v->v_kernel_release);
	verdict_msg_surface(pv, v->v_surface, sizeof(v->v_surface));
	v->v_naxes = 0;
	v->v_nviolations = 0;
	/* The layer inside missing comes first: the fence is stopped. */
	if (pv->pv_inner != PROBE_KERNEL_HOST &&
	    pv->pv_inner_verdict == VERDICT_NOT_FENCED)
		strlcpy(v->v_violations[v->v_nviolations++],
		    pv->pv_inner_reason, MSG_VERDICT_VIOLATION_LEN);
	for (i = 0; i < AXIS_MAX && i < MSG_VERDICT_AXES_MAX; i++) {
		a = &pv->pv_axes[i];
		strlcpy(v->v_axes[i].va_name, axis_name(i),
		    sizeof(v->v_axes[i].va_name));
		strlcpy(v->v_axes[i].va_verdict, verdict_name(a->av_verdict),
		    sizeof(v->v_axes[i].va_verdict));
		v->v_naxes++;
		for (j = 0; j < a->av_nviolations &&
		    v->v_nviolations < MSG_VERDICT_VIOLATIONS_MAX; j++)
			strlcpy(v->v_violations[v->v_nviolations++],
			    a->av_violations[j], MSG_VERDICT_VIOLATION_LEN);
	}
}
