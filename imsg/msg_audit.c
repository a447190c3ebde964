/*
 * msg_audit: the payload of IMSG_AUDIT (broker -> parent), one event of
 * the audit log, in the manner of msg.c: one table of fields, one
 * validity check run by both ends.  The parent holds the broker for
 * possibly compromised: every field is bounded here, and the texts
 * (an argument, a command, a path) may hold any byte but NUL; the
 * parent escapes them (parent/audit.c).
 */
#include <sys/types.h>

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fenced.h"
#include "msg.h"
#include "mp.h"
#include "msg_codec.h"

#define AUDIT_NARGS_MAX		(1U << 20)

/* An outcome, a why, a layer: 1 to size - 1 of a-z 0-9 . _ -. */
int
msg_audit_word_valid(const char *s, size_t size)
{
	size_t	 n = strnlen(s, size);

	return (n > 0 && n < size &&
	    strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789._-") == n);
}

static int
msg_audit_valid(const struct msg_audit *a)
{
	int	 fence = a->au_kind != AUDIT_TOKEN;
	/* A denial may be of no fence, a stop of all of them. */
	int	 keyless = a->au_kind == AUDIT_DENIAL ||
		    a->au_kind == AUDIT_STOP;

	if (a->au_kind < AUDIT_BOOT || a->au_kind > AUDIT_KIND_MAX ||
	    a->au_via < AUDIT_VIA_CONTROL || a->au_via > AUDIT_VIA_DAEMON ||
	    a->au_uid == (uid_t)-1 || a->au_truncated > 1 ||
	    a->au_nargs > AUDIT_NARGS_MAX)
		return (0);
	if (a->au_token[0] != '\0' && (a->au_via != AUDIT_VIA_HTTP ||
	    !hosttoken_name_valid(a->au_token)))
		return (0);
	if (a->au_key[0] != '\0' ? !fence ||
	    !fence_key_valid(a->au_key) : fence && !keyless)
		return (0);
	if (!msg_audit_word_valid(a->au_outcome, sizeof(a->au_outcome)))
		return (0);
	if (a->au_what[0] != '\0' &&
	    !msg_audit_word_valid(a->au_what, sizeof(a->au_what)))
		return (0);
	switch (a->au_kind) {
	case AUDIT_TERM:
		return (strcmp(a->au_what, "open") == 0 ||
		    strcmp(a->au_what, "close") == 0);
	case AUDIT_TOKEN:
		return ((strcmp(a->au_what, "create") == 0 ||
		    strcmp(a->au_what, "replace") == 0 ||
		    strcmp(a->au_what, "delete") == 0) &&
		    hosttoken_name_valid(a->au_text));
	case AUDIT_STOP:
	case AUDIT_DENIAL:
		return (a->au_what[0] != '\0');
	case AUDIT_EXEC:
		/* How it ended, when it ran: the parent names a field so. */
		return (a->au_what[0] == '\0' ||
		    strcmp(a->au_what, "exit") == 0 ||
		    strcmp(a->au_what, "signal") == 0);
	default:
		return (a->au_nargs == 0);
	}
}

static const struct mc_field msg_audit_fields[] = {
	MC_U(struct msg_audit, au_kind, AUDIT_BOOT, AUDIT_KIND_MAX),
	MC_U(struct msg_audit, au_via, AUDIT_VIA_CONTROL, AUDIT_VIA_DAEMON),
	MC_U(struct msg_audit, au_uid, 0, UINT32_MAX - 1),
	MC_S(struct msg_audit, au_token),
	MC_S(struct msg_audit, au_key),
	MC_U(struct msg_audit, au_owner, 0, UINT32_MAX),
	MC_S(struct msg_audit, au_outcome),
	MC_S(struct msg_audit, au_what),
	MC_S(struct msg_audit, au_text),
	MC_S(struct msg_audit, au_cwd),
	MC_U(struct msg_audit, au_num, 0, UINT64_MAX),
	MC_U(struct msg_audit, au_truncated, 0, 1),
	MC_U(struct msg_audit, au_nargs, 0, AUDIT_NARGS_MAX),
	MC_STRS_OF(struct msg_audit, au_argv, au_nargs),
};
static const struct mc_table msg_audit = MC_TABLE(msg_audit_fields);

int
msg_audit_encode(const struct msg_audit *a, void **buf, size_t *len)
{
	if (!msg_audit_valid(a)) {
		errno = EINVAL;
		return (-1);
	}
	return (mc_encode(&msg_audit, a, buf, len));
}

/* A payload the table or the check refuses is EBADMSG. */
int
msg_audit_decode(const void *data, size_t len, struct msg_audit *out)
{
	if (mc_decode(&msg_audit, data, len, out, sizeof(*out)) == -1 ||
	    !msg_audit_valid(out)) {
		memset(out, 0, sizeof(*out));
		errno = EBADMSG;
		return (-1);
	}
	return (0);
}

static const struct mc_field msg_audit_read_fields[] = {
	MC_U(struct msg_audit_read, ar_uid, 0, UINT32_MAX - 1),
	MC_U(struct msg_audit_read, ar_admin, 0, 1),
	MC_U(struct msg_audit_read, ar_count, 1, AUDIT_SHOW_MAX),
};
static const struct mc_table msg_audit_read =
    MC_TABLE(msg_audit_read_fields);

int
msg_audit_read_encode(const struct msg_audit_read *r, void **buf,
    size_t *len)
{
	return (mc_encode(&msg_audit_read, r, buf, len));
}

int
msg_audit_read_decode(const void *data, size_t len,
    struct msg_audit_read *out)
{
	if (mc_decode(&msg_audit_read, data, len, out, sizeof(*out)) == -1) {
		errno = EBADMSG;
		return (-1);
	}
	return (0);
}

/* A line as the parent writes them: printable ASCII, not empty. */
static int
msg_audit_line_valid(const struct msg_audit_line *l)
{
	return (l->al_line != NULL && l->al_line[0] != '\0' &&
	    mc_printable(l->al_line, AUDIT_LINE_MAX));
}

static const struct mc_field msg_audit_line_fields[] = {
	MC_TEXT(struct msg_audit_line, al_line, AUDIT_LINE_MAX),
};
static const struct mc_table msg_audit_line =
    MC_TABLE(msg_audit_line_fields);

int
msg_audit_line_encode(const struct msg_audit_line *l, void **buf,
    size_t *len)
{
	if (!msg_audit_line_valid(l)) {
		errno = EINVAL;
		return (-1);
	}
	return (mc_encode(&msg_audit_line, l, buf, len));
}

/* Decoded lines are malloc'ed: msg_audit_line_free(). */
int
msg_audit_line_decode(const void *data, size_t len,
    struct msg_audit_line *out)
{
	if (mc_decode(&msg_audit_line, data, len, out, sizeof(*out)) == -1 ||
	    !msg_audit_line_valid(out)) {
		msg_audit_line_free(out);
		errno = EBADMSG;
		return (-1);
	}
	return (0);
}

void
msg_audit_line_free(struct msg_audit_line *l)
{
	mc_free(&msg_audit_line, l);
}
