/*
 * The broker's side of the audit log (docs/audit.md): it knows who
 * asked (uid, token name, front end), which fence, and how it ended, so
 * it composes each event; the parent writes it (parent/audit.c).  An
 * event goes as typed fields (IMSG_AUDIT), never as a line.  What a
 * client gave (an argument, a path) is cut to its field at a
 * character's edge and made valid UTF-8 (a byte that is not is U+FFFD),
 * which the codec requires; the parent escapes the rest.
 */
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fenced.h"
#include "log.h"
#include "msg.h"
#include "mp.h"
#include "broker.h"

#define AUDIT_BAD_CHAR		"\xef\xbf\xbd"	/* U+FFFD */

/* The length of the UTF-8 character at s (of n bytes), or 0 if none. */
static size_t
audit_char(const unsigned char *s, size_t n)
{
	size_t	 len;

	if (s[0] < 0x80)
		return (1);
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4;
	else
		return (0);
	if (len > n || !mp_utf8_valid((const char *)s, len))
		return (0);
	return (len);
}

/*
 * src into dst (size bytes, NUL included), valid UTF-8, cut at a
 * character's edge; *cut set to 1 when it did not all fit.
 */
void
audit_text(char *dst, size_t size, const char *src, uint32_t *cut)
{
	const unsigned char *s = (const unsigned char *)src;
	size_t		 n, o = 0, c;
	const char	*put;
	size_t		 putlen;

	if (size == 0)
		return;
	n = src != NULL ? strlen(src) : 0;
	while (n > 0) {
		if ((c = audit_char(s, n)) == 0) {
			put = AUDIT_BAD_CHAR;
			putlen = sizeof(AUDIT_BAD_CHAR) - 1;
			c = 1;
		} else {
			put = (const char *)s;
			putlen = c;
		}
		if (o + putlen >= size) {
			*cut = 1;
			break;
		}
		memcpy(dst + o, put, putlen);
		o += putlen;
		s += c;
		n -= c;
	}
	dst[o] = '\0';
}

/* A code as the log's word: [a-z0-9._-], or "error" if it is not one. */
static void
audit_word(char *dst, size_t size, const char *word)
{
	if (word != NULL && msg_audit_word_valid(word, size))
		(void)strlcpy(dst, word, size);
	else
		(void)strlcpy(dst, "error", size);
}

/* The front end a who speaks for: its noun says which. */
uint32_t
audit_via(const struct svc_who *w)
{
	if (w == NULL)
		return (AUDIT_VIA_DAEMON);
	return (strcmp(w->w_noun, "environment") == 0 ? AUDIT_VIA_HTTP :
	    AUDIT_VIA_CONTROL);
}

/*
 * A new event of kind: who asked (uid, via, token; uid 0 and via
 * AUDIT_VIA_DAEMON for the daemon itself), whose fence (owner:
 * MSG_OWNER_NONE, the asker's own) and its key.
 */
struct msg_audit *
audit_new(uint32_t kind, uid_t uid, uint32_t via, const char *token,
    uid_t owner, const char *key)
{
	struct msg_audit *a;

	if ((a = calloc(1, sizeof(*a))) == NULL)
		fatal("%s: calloc", __func__);
	a->au_kind = kind;
	a->au_via = via;
	a->au_uid = uid;
	if (via == AUDIT_VIA_HTTP && token != NULL &&
	    hosttoken_name_valid(token))
		(void)strlcpy(a->au_token, token, sizeof(a->au_token));
	a->au_owner = owner == MSG_OWNER_NONE ? uid : owner;
	if (key != NULL && fence_key_valid(key))
		(void)strlcpy(a->au_key, key, sizeof(a->au_key));
	return (a);
}

struct msg_audit *
audit_new_who(uint32_t kind, const struct svc_who *w, uid_t owner,
    const char *key)
{
	return (audit_new(kind, w != NULL ? w->w_uid : 0, audit_via(w),
	    w != NULL ? w->w_token : NULL, owner, key));
}

/*
 * a, ended by outcome ("ok" or an error's code), to the parent; a is
 * freed.  An event the codec refuses is a bug of ours: said, not sent.
 */
void
audit_send(struct msg_audit *a, const char *outcome)
{
	void		*buf;
	size_t		 len;

	if (a == NULL)
		return;
	audit_word(a->au_outcome, sizeof(a->au_outcome), outcome);
	if (msg_audit_encode(a, &buf, &len) == -1)
		log_warnx("%s: event of kind %u not valid, not logged",
		    __func__, (unsigned)a->au_kind);
	else {
		if (proc_compose(&broker_self, PROC_PARENT, IMSG_AUDIT, 0, -1,
		    buf, len) == -1)
			fatal("%s: to parent", __func__);
		free(buf);
	}
	free(a);
}

/* A file written into a fence's home (or removed: bytes 0). */
void
audit_file(const struct svc_who *w, uid_t owner, const char *key,
    const char *path, uint64_t bytes, const char *outcome)
{
	struct msg_audit *a;

	a = audit_new_who(AUDIT_FILE, w, owner, key);
	audit_text(a->au_text, sizeof(a->au_text), path, &a->au_truncated);
	a->au_num = bytes;
	audit_send(a, outcome);
}

/* A host token made, replaced or deleted (the control socket's). */
void
audit_token(uid_t uid, const char *action, const char *name,
    const char *outcome)
{
	struct msg_audit *a;

	a = audit_new(AUDIT_TOKEN, uid, AUDIT_VIA_CONTROL, NULL,
	    MSG_OWNER_NONE, NULL);
	(void)strlcpy(a->au_what, action, sizeof(a->au_what));
	audit_text(a->au_text, sizeof(a->au_text), name, &a->au_truncated);
	audit_send(a, outcome);
}

/* A connection relayed to a fence's port, from the client's address. */
void
audit_port(const struct svc_who *w, uid_t owner, const char *key,
    uint16_t port, const char *from, const char *outcome)
{
	struct msg_audit *a;

	a = audit_new_who(AUDIT_PORT, w, owner, key);
	a->au_num = port;
	audit_text(a->au_text, sizeof(a->au_text), from, &a->au_truncated);
	audit_send(a, outcome);
}

/*
 * A denial, a made: count times, layer (a word: "seccomp", "landlock",
 * "egress", "limit") refused what (any text).
 */
void
audit_denial(struct msg_audit *a, const char *layer, const char *what,
    uint64_t count)
{
	audit_word(a->au_what, sizeof(a->au_what), layer);
	audit_text(a->au_text, sizeof(a->au_text), what, &a->au_truncated);
	a->au_num = count;
	audit_send(a, "denied");
}
