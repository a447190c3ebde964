/*
 * fencectl show environment's times and boundary: a time as the local
 * clock has it with how long from now, and one line per axis of the
 * last probe's verdicts, as the API's "boundary" has them.  The
 * verdicts are the prober's JSON, passed on by the broker: read as any
 * input (a member missing, of another type, or too long is shown as
 * such) and printed without a control (ctl_text.c).
 */
#include <sys/types.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "fenced.h"
#include "msg.h"
#include "ctl_procs.h"

#define CTL_VIOLATIONS_SHOWN	8	/* of an axis, then "and N more" */

static const char *const ctl_axes[] = {
	"filesystem", "processes", "privileges", "network", "kernel",
	"surface"
};

/* secs as "1d 2h 3m 4s", the units before the first not 0 left out. */
static void
ctl_span(char *buf, size_t size, long long secs)
{
	long long	 d = secs / 86400, h = secs / 3600 % 24;
	long long	 m = secs / 60 % 60, s = secs % 60;

	if (d > 0)
		snprintf(buf, size, "%lldd %lldh %lldm %llds", d, h, m, s);
	else if (h > 0)
		snprintf(buf, size, "%lldh %lldm %llds", h, m, s);
	else if (m > 0)
		snprintf(buf, size, "%lldm %llds", m, s);
	else
		snprintf(buf, size, "%llds", s);
}

/*
 * "label: 2026-12-07 03:30:00 UTC (29m 55s left)", or "(5m ago)" for a
 * time gone: t in the local time zone, seen from now.
 */
void
ctl_when(const char *label, int64_t t, time_t now)
{
	struct tm	 tm;
	time_t		 tt = (time_t)t;
	char		 stamp[64], span[64];
	long long	 d = (long long)t - (long long)now;

	if (t <= 0 || localtime_r(&tt, &tm) == NULL ||
	    strftime(stamp, sizeof(stamp), "%Y-%m-%d %H:%M:%S %Z", &tm) == 0) {
		printf("%-10s%lld\n", label, (long long)t);
		return;
	}
	ctl_span(span, sizeof(span), d > 0 ? d : -d);
	printf("%-10s%s (%s %s)\n", label, stamp, span, d > 0 ? "left" :
	    "ago");
}

/* One axis: "  NAME  VERDICT[ (REASON)][: VIOLATION; ...]". */
static void
ctl_axis(const char *name, json_t *ax)
{
	json_t		*vs, *v;
	const char	*verdict, *reason;
	size_t		 i, n;

	verdict = json_string_value(json_object_get(ax, "verdict"));
	reason = json_string_value(json_object_get(ax, "reason"));
	vs = json_object_get(ax, "violations");
	n = json_is_array(vs) ? json_array_size(vs) : 0;
	printf("  %-11s ", name);
	ctl_safe(stdout, verdict != NULL ? verdict : "(none)");
	if (reason != NULL) {
		fputs(" (", stdout);
		ctl_safe(stdout, reason);
		fputc(')', stdout);
	}
	for (i = 0; i < n && i < CTL_VIOLATIONS_SHOWN; i++) {
		v = json_array_get(vs, i);
		fputs(i == 0 ? ": " : "; ", stdout);
		ctl_safe(stdout, json_is_string(v) ? json_string_value(v) :
		    "(not text)");
	}
	if (n > CTL_VIOLATIONS_SHOWN)
		printf("; and %zu more", n - CTL_VIOLATIONS_SHOWN);
	fputc('\n', stdout);
}

/*
 * "boundary: probed WHEN", then each axis of the verdicts in json (the
 * broker's copy of the last probe's), in the API's order.
 */
void
ctl_boundary(const char *json)
{
	json_t		*root, *axes, *ax;
	const char	*when;
	size_t		 i;

	if (json == NULL || (root = json_loads(json, 0, NULL)) == NULL) {
		printf("boundary: unreadable\n");
		return;
	}
	when = json_string_value(json_object_get(root, "when"));
	fputs("boundary: the last probe's", stdout);
	if (when != NULL) {
		fputs(", ", stdout);
		ctl_safe(stdout, when);
	}
	fputc('\n', stdout);
	axes = json_object_get(root, "axes");
	for (i = 0; i < nitems(ctl_axes); i++) {
		if ((ax = json_object_get(axes, ctl_axes[i])) != NULL &&
		    json_is_object(ax))
			ctl_axis(ctl_axes[i], ax);
		else
			printf("  %-11s (not in the verdicts)\n", ctl_axes[i]);
	}
	json_decref(root);
}
