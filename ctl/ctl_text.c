/*
 * Text a fence chose, as fencectl prints it: the names of a home's
 * files, the commands of its processes, the messages of its agent.
 * A fence is hostile, and whoever reads fencectl's output (root
 * included) reads it on a terminal: nothing of it may reach the
 * terminal as a control.  Printable ASCII and UTF-8 characters go as
 * they are; a C0 or C1 control, DEL, a bidirectional override, a byte
 * that is not UTF-8, and the backslash itself go as \ooo (octal, as
 * vis(3) writes them; a backslash as \\), so two names never look the
 * same and the bytes can be read back.
 */
#include <sys/types.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "fenced.h"
#include "msg.h"
#include "ctl_procs.h"

/*
 * The length of the UTF-8 character at s (at most left bytes) and its
 * code point in *cp; 0 if it is not one (overlong, a surrogate, past
 * U+10FFFF, cut short).
 */
static size_t
ctl_utf8(const unsigned char *s, size_t left, uint32_t *cp)
{
	size_t	 n, i;
	uint32_t c;

	if (s[0] < 0x80) {
		*cp = s[0];
		return (1);
	}
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		n = 2;
		c = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		n = 3;
		c = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		n = 4;
		c = s[0] & 0x07;
	} else
		return (0);
	if (n > left)
		return (0);
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return (0);
		c = c << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && c < 0x800) || (n == 4 && c < 0x10000) ||
	    c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return (0);
	*cp = c;
	return (n);
}

/* Whether code point c may reach a terminal as it is. */
static int
ctl_shown(uint32_t c)
{
	if (c < 0x20 || c == 0x7f || c == '\\')
		return (0);
	if (c >= 0x80 && c <= 0x9f)		/* C1: CSI, OSC, ... */
		return (0);
	/* Bidirectional embeddings, overrides and isolates. */
	if ((c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069) ||
	    c == 0x200e || c == 0x200f || c == 0x061c)
		return (0);
	return (1);
}

/* len bytes at p to fp, made safe. */
void
ctl_safe_n(FILE *fp, const void *p, size_t len)
{
	const unsigned char *s = p;
	size_t		 i = 0, n, k;
	uint32_t	 c;

	while (i < len) {
		n = ctl_utf8(s + i, len - i, &c);
		if (n > 0 && ctl_shown(c)) {
			fwrite(s + i, 1, n, fp);
			i += n;
			continue;
		}
		if (n > 0 && c == '\\') {
			fputs("\\\\", fp);
			i++;
			continue;
		}
		/* Each byte of a character not shown, or a byte not UTF-8. */
		if (n == 0)
			n = 1;
		for (k = 0; k < n; k++)
			fprintf(fp, "\\%03o", s[i + k]);
		i += n;
	}
}

/* A string, made safe. */
void
ctl_safe(FILE *fp, const char *s)
{
	ctl_safe_n(fp, s, strlen(s));
}

/* "fencectl: CODE: MESSAGE" on stderr: both may come from a fence. */
void
ctl_error(const char *code, const char *message)
{
	fputs("fencectl: ", stderr);
	ctl_safe(stderr, code);
	fputs(": ", stderr);
	ctl_safe(stderr, message);
	fputc('\n', stderr);
}

/*
 * What a command or process was refused (docs/denials.md), one line
 * each on stderr: text is the result's lines (checked by its decoder),
 * dropped how many more there were; open: stderr so far ends no line.
 */
void
ctl_denials(const char *text, uint32_t dropped, int open)
{
	struct msg_denial_line dl[MSG_DENIALS_MAX];
	int		 i, n;

	n = text != NULL ? msg_denials_parse(text, dl, nitems(dl)) : 0;
	if ((n > 0 || dropped > 0) && open)
		fputc('\n', stderr);
	for (i = 0; i < n && i < (int)nitems(dl); i++)
		fprintf(stderr, "fenced: denied: %s: %s x%u%s%s\n",
		    msg_denial_layer_name(dl[i].dl_layer), dl[i].dl_what,
		    dl[i].dl_count, dl[i].dl_remedy[0] != '\0' ? " - " : "",
		    dl[i].dl_remedy);
	if (dropped > 0)
		fprintf(stderr, "fenced: denied: %u more not listed\n",
		    dropped);
}
