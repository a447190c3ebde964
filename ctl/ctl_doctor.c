/*
 * fencectl doctor: the host doctor's rows (docs/doctor.md), grouped as
 * they come (the host's checks, the backends, the tiers, the default
 * last), each with its verdict, why, the fix and, for root and the
 * admin group, the detail.  The rows come from the daemon, checked by
 * its codec; they are printed through ctl_safe() all the same.
 */
#include <sys/types.h>

#include <err.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "fenced.h"
#include "imsg.h"
#include "msg.h"
#include "ctl_procs.h"

static const char *const ctl_check_heads[] = {
	[CHECK_HOST] = "The host",
	[CHECK_BACKEND] = "Backends",
	[CHECK_TIER] = "Tiers: can a fence be built now"
};
static const char *const ctl_check_words[] = {
	[CHECK_OK] = "ok", [CHECK_WARN] = "warn", [CHECK_FAIL] = "FAIL"
};

static void
ctl_doctor_line(const char *label, const char *text)
{
	if (text[0] == '\0')
		return;
	printf("      %s: ", label);
	ctl_safe(stdout, text);
	printf("\n");
}

/*
 * One row; *last is the kind of the row before (0: none).  Returns 1
 * when the row is the configured default and it cannot be built.
 */
int
ctl_doctor_print(struct imsg *imsg, int *last)
{
	struct msg_check c;

	if (msg_check_decode(imsg->data, imsg->len, &c) == -1)
		errx(1, "bad doctor reply");
	if (c.hc_default) {
		printf("\nThe default: %s\n", c.hc_status == CHECK_FAIL ?
		    "cannot be built" : "can be built");
		ctl_doctor_line("why", c.hc_reason);
		ctl_doctor_line("fix", c.hc_fix);
		return (c.hc_status == CHECK_FAIL);
	}
	if (c.hc_kind != *last)
		printf("%s%s:\n", *last != 0 ? "\n" : "",
		    ctl_check_heads[c.hc_kind]);
	*last = c.hc_kind;
	printf("  %-4s  %s", ctl_check_words[c.hc_status], c.hc_name);
	if (c.hc_reason[0] != '\0') {
		printf(": ");
		ctl_safe(stdout, c.hc_reason);
	}
	printf("\n");
	ctl_doctor_line("fix", c.hc_fix);
	ctl_doctor_line("detail", c.hc_detail);
	return (0);
}
