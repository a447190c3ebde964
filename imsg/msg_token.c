/*
 * msg_token: the payloads of host tokens, in the manner of msg.c: a
 * fixed array of fields, one validity check shared by encoder and
 * decoder.
 *
 * msg_token (broker <-> parent) carries a uid, a name and the SHA-256
 * of its token, never the token; msg_hosttoken (broker -> fencectl)
 * carries the token itself, once, to the user it belongs to;
 * msg_ctltoken (fencectl -> broker) asks for one by name, and
 * msg_tokeninfo (broker -> fencectl) lists them without a secret.
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

#define MSG_ID_MAX		UINT32_MAX

static int
msg_token_bad(void)
{
	errno = EBADMSG;
	return (-1);
}

/* Exactly HOSTTOKEN_TEXT lowercase hex digits, as the broker mints. */
int
hosttoken_text_valid(const char *s, size_t len)
{
	size_t	 i;

	if (len != HOSTTOKEN_TEXT)
		return (0);
	for (i = 0; i < len; i++)
		if (!((s[i] >= '0' && s[i] <= '9') ||
		    (s[i] >= 'a' && s[i] <= 'f')))
			return (0);
	return (1);
}

/*
 * A token's name: 1 to HOSTTOKEN_NAME_MAX of A-Z a-z 0-9 . _ -, not
 * beginning with a '-' (which fencectl's command line would take for
 * an option).
 */
int
hosttoken_name_valid(const char *s)
{
	size_t	 n = strnlen(s, HOSTTOKEN_NAME_MAX + 1);

	return (n > 0 && n <= HOSTTOKEN_NAME_MAX && s[0] != '-' &&
	    strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "0123456789._-") == n);
}

/*
 * (uid_t)-1 is no uid; an all-zero hash is one nobody computed, and
 * only a deletion carries one.
 */
static int
msg_token_valid(const struct msg_token *t)
{
	uint8_t	 any = 0;
	size_t	 i;

	if (t->tk_uid == (uid_t)-1 || !hosttoken_name_valid(t->tk_name) ||
	    t->tk_created < 0 || t->tk_delete > 1)
		return (0);
	for (i = 0; i < sizeof(t->tk_hash); i++)
		any |= t->tk_hash[i];
	return (t->tk_delete ? any == 0 : any != 0);
}

static const struct mc_field msg_token_fields[] = {
	MC_U(struct msg_token, tk_uid, 0, MSG_ID_MAX - 1),
	MC_BIN(struct msg_token, tk_hash),
	MC_S(struct msg_token, tk_name),
	MC_I(struct msg_token, tk_created, 0, INT64_MAX),
	MC_U(struct msg_token, tk_delete, 0, 1),
};
static const struct mc_table msg_token = MC_TABLE(msg_token_fields);

int
msg_token_encode(const struct msg_token *t, void **buf, size_t *len)
{
	if (!msg_token_valid(t)) {
		errno = EINVAL;
		return (-1);
	}
	return (mc_encode(&msg_token, t, buf, len));
}

int
msg_token_decode(const void *data, size_t len, struct msg_token *out)
{
	struct msg_token t;

	if (mc_decode(&msg_token, data, len, &t, sizeof(t)) == -1 ||
	    !msg_token_valid(&t))
		return (msg_token_bad());
	*out = t;
	return (0);
}

static int
msg_hosttoken_valid(const struct msg_hosttoken *h)
{
	return (h->ht_uid != (uid_t)-1 && hosttoken_name_valid(h->ht_name) &&
	    hosttoken_text_valid(h->ht_token,
	    strnlen(h->ht_token, sizeof(h->ht_token))));
}

static const struct mc_field msg_hosttoken_fields[] = {
	MC_U(struct msg_hosttoken, ht_uid, 0, MSG_ID_MAX - 1),
	MC_S(struct msg_hosttoken, ht_token),
	MC_S(struct msg_hosttoken, ht_name),
};
static const struct mc_table msg_hosttoken =
    MC_TABLE(msg_hosttoken_fields);

int
msg_hosttoken_encode(const struct msg_hosttoken *h, void **buf, size_t *len)
{
	if (!msg_hosttoken_valid(h)) {
		errno = EINVAL;
		return (-1);
	}
	return (mc_encode(&msg_hosttoken, h, buf, len));
}

/* The token text is a secret: h is wiped on every path. */
int
msg_hosttoken_decode(const void *data, size_t len, struct msg_hosttoken *out)
{
	struct msg_hosttoken h;
	int		 ok;

	ok = mc_decode(&msg_hosttoken, data, len, &h, sizeof(h)) == 0 &&
	    msg_hosttoken_valid(&h);
	if (ok)
		*out = h;
	explicit_bzero(&h, sizeof(h));
	return (ok ? 0 : msg_token_bad());
}

static int
msg_ctltoken_valid(const struct msg_ctltoken *c)
{
	return (c->ct_op <= CTLTOKEN_DELETE && hosttoken_name_valid(c->ct_name));
}

static const struct mc_field msg_ctltoken_fields[] = {
	MC_U(struct msg_ctltoken, ct_op, CTLTOKEN_MINT, CTLTOKEN_DELETE),
	MC_S(struct msg_ctltoken, ct_name),
};
static const struct mc_table msg_ctltoken = MC_TABLE(msg_ctltoken_fields);

int
msg_ctltoken_encode(const struct msg_ctltoken *c, void **buf, size_t *len)
{
	if (!msg_ctltoken_valid(c)) {
		errno = EINVAL;
		return (-1);
	}
	return (mc_encode(&msg_ctltoken, c, buf, len));
}

int
msg_ctltoken_decode(const void *data, size_t len, struct msg_ctltoken *out)
{
	struct msg_ctltoken c;

	if (mc_decode(&msg_ctltoken, data, len, &c, sizeof(c)) == -1 ||
	    !msg_ctltoken_valid(&c))
		return (msg_token_bad());
	*out = c;
	return (0);
}

static const struct mc_field msg_tokeninfo_fields[] = {
	MC_S(struct msg_tokeninfo, ti_name),
	MC_I(struct msg_tokeninfo, ti_created, 0, INT64_MAX),
};
static const struct mc_table msg_tokeninfo = MC_TABLE(msg_tokeninfo_fields);

int
msg_tokeninfo_encode(const struct msg_tokeninfo *t, void **buf, size_t *len)
{
	if (!hosttoken_name_valid(t->ti_name) || t->ti_created < 0) {
		errno = EINVAL;
		return (-1);
	}
	return (mc_encode(&msg_tokeninfo, t, buf, len));
}

int
msg_tokeninfo_decode(const void *data, size_t len, struct msg_tokeninfo *out)
{
	struct msg_tokeninfo t;

	if (mc_decode(&msg_tokeninfo, data, len, &t, sizeof(t)) == -1 ||
	    !hosttoken_name_valid(t.ti_name) || t.ti_created < 0)
		return (msg_token_bad());
	*out = t;
	return (0);
}
