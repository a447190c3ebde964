/*
 * libFuzzer target for report_parse(): the prober's parser of reports
 * from inside fences.  Whatever the bytes, it must not crash, leak or
 * hang, and what it hands back must hold together: a level in range,
 * a parse error only ever "unmeasured", every string terminated and
 * printable, and a boundary that serialises.  Built and run by
 * scripts/fuzz.sh (make fuzz); the seeds are in fuzz/corpus/.
 */
#include <sys/types.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "fenced.h"
#include "report.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);
int	LLVMFuzzerInitialize(int *, char ***);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	/* As the prober does before its lockdown; fixed for replays. */
	json_object_seed(1);
	return (0);
}

static void
fuzz_check_text(const char *s, size_t len)
{
	size_t	 i;

	if (memchr(s, '\0', len) == NULL)
		__builtin_trap();
	for (i = 0; s[i] != '\0'; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] >= 0x7f)
			__builtin_trap();
}

static void
fuzz_check(const struct probe_verdict *v, int rv)
{
	const struct probe_axis_verdict	*a;
	int				 i, j;

	if (v->pv_level < LEVEL_UNMEASURED || v->pv_level > LEVEL_L4)
		__builtin_trap();
	if (rv != 0 && (v->pv_level != LEVEL_UNMEASURED ||
	    v->pv_reason[0] == '\0'))
		__builtin_trap();
	fuzz_check_text(v->pv_reason, sizeof(v->pv_reason));
	for (i = 0; i < AXIS_MAX; i++) {
		a = &v->pv_axes[i];
		if (a->av_nviolations < 0 || a->av_nviolations > VIOLATIONS_MAX)
			__builtin_trap();
		if (a->av_nviolations > 0 &&
		    a->av_verdict != VERDICT_NOT_FENCED)
			__builtin_trap();
		for (j = 0; j < a->av_nviolations; j++)
			fuzz_check_text(a->av_violations[j], VIOLATION_LEN);
		fuzz_check_text(a->av_reason, sizeof(a->av_reason));
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct probe_expect	 e;
	struct probe_verdict	 v;
	char			*s;
	int			 rv;

	memset(&e, 0, sizeof(e));
	/* The input's length picks what the host knows. */
	e.pe_tier = size % 3 == 0 ? TIER_L2 : TIER_L15;
	e.pe_backend = size % 5 == 0 ? BACKEND_RUNSC : BACKEND_NATIVE;
	/* What those backends' entries declare (fencer/backend.h). */
	if (e.pe_backend == BACKEND_RUNSC) {
		e.pe_traits.pt_kernel = PROBE_KERNEL_USER;
		e.pe_traits.pt_procs_apart = e.pe_traits.pt_files_apart = 1;
		e.pe_traits.pt_net_own = 1;
	} else if (size % 7 == 0) {
		/* A vm fence with the layer inside (gVisor in the guest). */
		e.pe_backend = BACKEND_VM;
		e.pe_traits.pt_kernel = PROBE_KERNEL_GUEST;
		e.pe_traits.pt_net_own = 1;
		e.pe_traits.pt_inner = PROBE_KERNEL_USER;
	} else
		e.pe_traits.pt_egress = 1;
	e.pe_canary = (int)(size % 3);
	if (size % 2 == 0) {
		strcpy(e.pe_boot_id, "00000000-1111-2222-3333-444444444444");
		strcpy(e.pe_secret, "/var/lib/test/secret");
		strcpy(e.pe_canary_target, "127.0.0.1:7777");
		e.pe_host_pid = 4242;
		e.pe_ns_pid = 4026531836ULL;
	}
	rv = report_parse((const char *)data, size, &e, &v);
	fuzz_check(&v, rv);
	if ((s = verdict_json(&v)) == NULL)
		__builtin_trap();
	free(s);
	return (0);
}
