/*
 * msg_token: the payloads of host tokens, in the manner of msg.c: a
 * fixed array of fields, one validity check shared by encoder and
 * decoder.
 *
 * msg_token (broker <-> parent) carries a uid and the SHA-256 of its
 * token, never the token; msg_hosttoken (broker -> fencectl) carries the
 * token itself, once, to the user it belongs to.
 */
#include <sys/types.h>

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fenced.h"
#include "msg.h"
#include "mp.h"

#define MSG_TOKEN_FIELDS	2
#define MSG_HOSTTOKEN_FIELDS	2

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

/* (uid_t)-1 is no uid; an all-zero hash is one nobody computed. */
static int
msg_token_valid(const struct msg_token *t)
{
	uint8_t	 any = 0;
	size_t	 i;

	if (t->tk_uid == (uid_t)-1)
		return (0);
	for (i = 0; i < sizeof(t->tk_hash); i++)
		any |= t->tk_hash[i];
	return (any != 0);
}

int
msg_token_encode(const struct msg_token *t, void **buf, size_t *len)
{
	struct mp_writer w;

	if (!msg_token_valid(t)) {
		errno = EINVAL;
		return (-1);
	}
	mp_write_init(&w);
	mp_write_array(&w, MSG_TOKEN_FIELDS);
	mp_write_u64(&w, t->tk_uid);
	mp_write_bin(&w, t->tk_hash, sizeof(t->tk_hash));
	return (mp_write_finish(&w, buf, len));
}

int
msg_token_decode(const void *data, size_t len, struct msg_token *out)
{
	struct msg_token t;
	struct mp_reader r;
	const void	*hash = NULL;
	size_t		 hlen = 0;
	uint64_t	 uid = 0;
	int		 ok;

	memset(&t, 0, sizeof(t));
	mp_read_begin(&r, data, len, MSG_TOKEN_FIELDS);
	mp_read_u64(&r, &uid, 0, MSG_ID_MAX - 1);
	mp_read_bin(&r, &hash, &hlen, sizeof(t.tk_hash));
	ok = mp_read_end(&r) == 0 && hlen == sizeof(t.tk_hash);
	if (ok) {
		t.tk_uid = (uid_t)uid;
		memcpy(t.tk_hash, hash, sizeof(t.tk_hash));
		ok = msg_token_valid(&t);
	}
	if (!ok)
		return (msg_token_bad());
	*out = t;
	return (0);
}

static int
msg_hosttoken_valid(const struct msg_hosttoken *h)
{
	return (h->ht_uid != (uid_t)-1 &&
	    hosttoken_text_valid(h->ht_token,
	    strnlen(h->ht_token, sizeof(h->ht_token))));
}

int
msg_hosttoken_encode(const struct msg_hosttoken *h, void **buf, size_t *len)
{
	struct mp_writer w;

	if (!msg_hosttoken_valid(h)) {
		errno = EINVAL;
		return (-1);
	}
	mp_write_init(&w);
	mp_write_array(&w, MSG_HOSTTOKEN_FIELDS);
	mp_write_u64(&w, h->ht_uid);
	mp_write_str(&w, h->ht_token, sizeof(h->ht_token));
	return (mp_write_finish(&w, buf, len));
}

int
msg_hosttoken_decode(const void *data, size_t len, struct msg_hosttoken *out)
{
	struct msg_hosttoken h;
	struct mp_reader r;
	uint64_t	 uid = 0;

	memset(&h, 0, sizeof(h));
	mp_read_begin(&r, data, len, MSG_HOSTTOKEN_FIELDS);
	mp_read_u64(&r, &uid, 0, MSG_ID_MAX - 1);
	mp_read_str(&r, h.ht_token, sizeof(h.ht_token));
	if (mp_read_end(&r) == -1) {
		explicit_bzero(&h, sizeof(h));
		return (msg_token_bad());
	}
	h.ht_uid = (uid_t)uid;
	if (!msg_hosttoken_valid(&h)) {
		explicit_bzero(&h, sizeof(h));
		return (msg_token_bad());
	}
	*out = h;
	explicit_bzero(&h, sizeof(h));
	return (0);
}
