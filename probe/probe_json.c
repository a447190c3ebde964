/*
 * The report's JSON, written by hand into one fixed buffer: no library
 * the fence might lack, and a hard bound on the output.  Every string is
 * escaped and made valid UTF-8 (an invalid byte becomes U+FFFD), so the
 * prober's strict parser accepts whatever a path or a mount line holds.
 */
#include <sys/types.h>

#include <stdio.h>
#include <string.h>

#include "probe.h"

/* Room kept at the end for the closing of the report. */
#define JW_RESERVE	512

static void
jw_put(struct jw *w, const char *s, size_t n)
{
	if (w->jw_full)
		return;
	if (n > sizeof(w->jw_buf) - (w->jw_closing ? 0 : JW_RESERVE) -
	    w->jw_len) {
		w->jw_full = 1;
		return;
	}
	memcpy(w->jw_buf + w->jw_len, s, n);
	w->jw_len += n;
}

/* The length of the valid UTF-8 sequence at s, or 0. */
static size_t
jw_utf8_len(const unsigned char *s, size_t n)
{
	unsigned char	 c = s[0], lo = 0x80, hi = 0xbf;
	size_t		 len, i;

	if (c < 0x80)
		return (1);
	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		if (c == 0xe0)
			lo = 0xa0;
		else if (c == 0xed)
			hi = 0x9f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		if (c == 0xf0)
			lo = 0x90;
		else if (c == 0xf4)
			hi = 0x8f;
	} else
		return (0);
	if (n < len)
		return (0);
	if (s[1] < lo || s[1] > hi)
		return (0);
	for (i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return (0);
	return (len);
}

static void
jw_escaped(struct jw *w, const char *str, size_t n, size_t max)
{
	const unsigned char	*s = (const unsigned char *)str;
	char			 esc[8];
	size_t			 i = 0, l;

	if (n > max)
		n = max;
	jw_put(w, "\"", 1);
	while (i < n && s[i] != '\0') {
		if (s[i] == '"' || s[i] == '\\') {
			esc[0] = '\\';
			esc[1] = (char)s[i];
			jw_put(w, esc, 2);
			i++;
		} else if (s[i] < 0x20 || s[i] == 0x7f) {
			snprintf(esc, sizeof(esc), "\\u%04x", s[i]);
			jw_put(w, esc, 6);
			i++;
		} else if ((l = jw_utf8_len(s + i, n - i)) == 0) {
			jw_put(w, "\\ufffd", 6);
			i++;
		} else {
			jw_put(w, (const char *)s + i, l);
			i += l;
		}
	}
	jw_put(w, "\"", 1);
}

/* The comma before a value and its key, if in an object. */
static void
jw_sep(struct jw *w, const char *key)
{
	if (w->jw_depth > 0) {
		if (!w->jw_first[w->jw_depth - 1])
			jw_put(w, ",", 1);
		w->jw_first[w->jw_depth - 1] = 0;
	}
	if (key != NULL) {
		jw_escaped(w, key, strlen(key), PROBE_STR_MAX);
		jw_put(w, ":", 1);
	}
}

void
jw_init(struct jw *w)
{
	memset(w, 0, sizeof(*w));
}

static void
jw_open(struct jw *w, const char *key, const char *c)
{
	jw_sep(w, key);
	if (w->jw_depth >= PROBE_DEPTH_MAX) {
		w->jw_full = 1;
		return;
	}
	jw_put(w, c, 1);
	w->jw_first[w->jw_depth++] = 1;
}

static void
jw_close(struct jw *w, const char *c)
{
	if (w->jw_depth > 0)
		w->jw_depth--;
	jw_put(w, c, 1);
}

void
jw_obj_open(struct jw *w, const char *key)
{
	jw_open(w, key, "{");
}

void
jw_obj_close(struct jw *w)
{
	jw_close(w, "}");
}

void
jw_arr_open(struct jw *w, const char *key)
{
	jw_open(w, key, "[");
}

void
jw_arr_close(struct jw *w)
{
	jw_close(w, "]");
}

void
jw_strn(struct jw *w, const char *key, const char *s, size_t n)
{
	if (s == NULL) {
		jw_null(w, key);
		return;
	}
	jw_sep(w, key);
	jw_escaped(w, s, n, PROBE_STR_MAX);
}

/*
 * A target of the egress checks (NAME:PORT, checked by the caller):
 * never cut, so the host can compare it with the one it asked for.
 */
void
jw_target(struct jw *w, const char *key, const char *s)
{
	jw_sep(w, key);
	jw_escaped(w, s, strlen(s), PROBE_EGRESS_TARGET_LEN - 1);
}

void
jw_str(struct jw *w, const char *key, const char *s)
{
	jw_strn(w, key, s, s == NULL ? 0 : strlen(s));
}

void
jw_int(struct jw *w, const char *key, long long v)
{
	char	 num[32];
	int	 n;

	jw_sep(w, key);
	n = snprintf(num, sizeof(num), "%lld", v);
	jw_put(w, num, (size_t)n);
}

void
jw_uint(struct jw *w, const char *key, unsigned long long v)
{
	char	 num[32];
	int	 n;

	jw_sep(w, key);
	n = snprintf(num, sizeof(num), "%llu", v);
	jw_put(w, num, (size_t)n);
}

void
jw_bool(struct jw *w, const char *key, int v)
{
	jw_sep(w, key);
	if (v)
		jw_put(w, "true", 4);
	else
		jw_put(w, "false", 5);
}

void
jw_null(struct jw *w, const char *key)
{
	jw_sep(w, key);
	jw_put(w, "null", 4);
}

/* An errno as its name, or null for 0. */
void
jw_err(struct jw *w, const char *key, int e)
{
	if (e == 0)
		jw_null(w, key);
	else
		jw_str(w, key, probe_errname(e));
}

/*
 * A section is all or nothing: if it did not fit, the report goes on
 * without it (and names it under "omitted").
 */
void
probe_section_begin(struct jw *w, const char *name)
{
	w->jw_mark = w->jw_len;
	w->jw_mark_depth = w->jw_depth;
	w->jw_mark_first = w->jw_first[w->jw_depth - 1];
}

int
probe_section_end(struct jw *w)
{
	if (w->jw_full || w->jw_depth != w->jw_mark_depth) {
		w->jw_len = w->jw_mark;
		w->jw_depth = w->jw_mark_depth;
		w->jw_first[w->jw_depth - 1] = w->jw_mark_first;
		w->jw_full = 0;
		return (-1);
	}
	w->jw_committed = (sig_atomic_t)w->jw_len;
	return (0);
}

/*
 * The end of the report, in the room kept for it: the sections left out
 * and the closing brace.
 */
void
jw_finish(struct jw *w, const char *const *omitted, int nomitted)
{
	int	 i;

	w->jw_closing = 1;
	w->jw_full = 0;
	if (nomitted > 0) {
		jw_arr_open(w, "omitted");
		for (i = 0; i < nomitted; i++)
			jw_str(w, NULL, omitted[i]);
		jw_arr_close(w);
	}
	jw_obj_close(w);
	jw_put(w, "\n", 1);
}
