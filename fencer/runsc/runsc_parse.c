/*
 * runsc_parse: what the runsc backend reads of runsc's answers and of
 * the host's account of its processes, apart from the reading so that
 * each parse can be tested alone (fuzz/runsc_fuzz.c).  Every text here
 * is NUL-terminated by its reader and bounded by its buffer.
 */
#include <sys/types.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "fenced.h"
#include "bundle.h"

/* The date of a release (0.0~20221219.0, release-20221219.0), or 0. */
long
runsc_version_date(const char *text, char *ver, size_t verlen)
{
	const char	*p, *e;
	long		 d = 0;
	int		 i;

	if (strncmp(text, "runsc version ", 14) != 0)
		return (0);
	p = text + 14;
	e = p + strcspn(p, "\n");
	snprintf(ver, verlen, "%.*s", (int)(e - p), p);
	for (; p + 8 <= e; p++) {
		for (i = 0, d = 0; i < 8 && p[i] >= '0' && p[i] <= '9'; i++)
			d = d * 10 + (p[i] - '0');
		if (i == 8 && (p + 8 == e || p[8] < '0' || p[8] > '9') &&
		    d >= 20000101 && d <= 29991231)
			return (d);
	}
	return (0);
}

/* "pid": N of `runsc state`'s answer; 0 if there is none. */
pid_t
runsc_state_pid(const char *out)
{
	const char	*p;
	long		 v;

	if ((p = strstr(out, "\"pid\":")) == NULL)
		return (0);
	p += 6;
	while (*p == ' ')
		p++;
	v = strtol(p, NULL, 10);
	return (v > 0 && v <= INT32_MAX ? (pid_t)v : 0);
}

/* The PPid: line of a /proc/PID/status text; -1 if there is none. */
pid_t
runsc_status_ppid(const char *buf)
{
	const char	*p;
	long		 v;

	if ((p = strstr(buf, "\nPPid:\t")) == NULL)
		return (-1);
	v = strtol(p + 7, NULL, 10);
	return (v > 0 && v <= INT32_MAX ? (pid_t)v : -1);
}

/*
 * The pids of a /proc/PID/task/TID/children text (buf, cut in place),
 * added to the n of kids[] not there yet.  Returns the new count, or
 * max + 1 when there are more than max.
 */
int
runsc_pids_parse(char *buf, pid_t *kids, int n, int max)
{
	char	*w, *s;
	long	 v;
	int	 i;

	for (s = buf; (w = strsep(&s, " \n")) != NULL;) {
		if (*w == '\0' || (v = strtol(w, NULL, 10)) <= 0 ||
		    v > INT32_MAX)
			continue;
		for (i = 0; i < n && kids[i] != (pid_t)v; i++)
			;
		if (i == n && n < max)
			kids[n++] = (pid_t)v;
		else if (i == n)
			return (max + 1);
	}
	return (n);
}

/*
 * The first line of runsc's panic log (--panic-log) that says why the
 * sentry ended: "panic: ..." or Go's "fatal error: ...", the first of
 * the two kinds found, into out with anything but printable ASCII as
 * '?'.  0 if it has one, -1 if not (out is then empty).
 */
int
runsc_panic_line(const char *text, char *out, size_t outlen)
{
	static const char *const marks[] = { "panic: ", "fatal error: " };
	const char	*p;
	size_t		 i, n, k;

	if (outlen == 0)
		return (-1);
	out[0] = '\0';
	for (i = 0; i < sizeof(marks) / sizeof(marks[0]); i++) {
		for (p = text; *p != '\0'; p += strcspn(p, "\n"),
		    p += *p == '\n') {
			if (strncmp(p, marks[i], strlen(marks[i])) != 0)
				continue;
			n = strcspn(p, "\n");
			if (n > outlen - 1)
				n = outlen - 1;
			for (k = 0; k < n; k++)
				out[k] = p[k] >= ' ' && p[k] <= '~' ? p[k] :
				    '?';
			out[n] = '\0';
			return (0);
		}
	}
	return (-1);
}
