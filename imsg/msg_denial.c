/*
 * msg_denial: what was refused to a fence (docs/denials.md).  The
 * fencer sends the broker one struct msg_denial a datagram; a command's
 * result carries its denials as lines of text (struct msg_denial_line),
 * which the broker writes and fencectl and the HTTP front end read.
 * What was refused is named by the fencer, never by the fence, but a
 * line is held to printable ASCII without tabs whoever wrote it.
 */
#include <sys/types.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fenced.h"
#include "msg.h"
#include "mp.h"
#include "msg_codec.h"

#define MSG_PID_MAX		(1U << 22)	/* PID_MAX_LIMIT */

static const char *const msg_denial_layers[DENIAL_LAYER_MAX] = {
	[DENIAL_SECCOMP] = "seccomp",
	[DENIAL_LANDLOCK] = "landlock",
	[DENIAL_EGRESS] = "egress",
	[DENIAL_LIMIT] = "limit",
};

const char *
msg_denial_layer_name(uint32_t layer)
{
	if (layer == 0 || layer >= DENIAL_LAYER_MAX)
		return (NULL);
	return (msg_denial_layers[layer]);
}

/* Printable, under size bytes, no tab; empty only if may_empty. */
static int
msg_denial_text_valid(const char *s, size_t size, int may_empty)
{
	if (!mc_printable(s, size) || strchr(s, '\t') != NULL)
		return (0);
	return (may_empty || s[0] != '\0');
}

/*
 * A chain: decimal pids 1..PID_MAX_LIMIT separated by one space, at
 * most MSG_DENIAL_CHAIN_MAX.  Into pids (max of them) if not NULL;
 * returns how many, or -1.
 */
int
msg_denial_chain(const char *s, uint32_t *pids, size_t max)
{
	const char	*p = s;
	uint64_t	 v;
	size_t		 n = 0, digits;

	if (strnlen(s, MSG_DENIAL_CHAIN_LEN) >= MSG_DENIAL_CHAIN_LEN)
		return (-1);
	while (*p != '\0') {
		if (n > 0) {
			if (*p != ' ')
				return (-1);
			p++;
		}
		v = 0;
		for (digits = 0; *p >= '0' && *p <= '9'; p++, digits++) {
			v = v * 10 + (uint64_t)(*p - '0');
			if (digits >= 8 || v > MSG_PID_MAX)
				return (-1);
		}
		if (digits == 0 || v == 0 || n >= MSG_DENIAL_CHAIN_MAX)
			return (-1);
		if (pids != NULL && n < max)
			pids[n] = (uint32_t)v;
		n++;
	}
	return ((int)n);
}

static int
msg_denial_valid(const struct msg_denial *dn)
{
	return (fence_key_valid(dn->dn_key) && dn->dn_boot > 0 &&
	    msg_denial_layer_name(dn->dn_layer) != NULL &&
	    dn->dn_count >= 1 &&
	    msg_denial_text_valid(dn->dn_what, sizeof(dn->dn_what), 0) &&
	    msg_denial_text_valid(dn->dn_remedy, sizeof(dn->dn_remedy), 1) &&
	    msg_denial_chain(dn->dn_chain, NULL, 0) != -1);
}

static const struct mc_field msg_denial_fields[] = {
	MC_U(struct msg_denial, dn_owner, 0, UINT32_MAX),
	MC_S(struct msg_denial, dn_key),
	MC_U(struct msg_denial, dn_boot, 1, UINT32_MAX),
	MC_U(struct msg_denial, dn_layer, 1, DENIAL_LAYER_MAX - 1),
	MC_U(struct msg_denial, dn_count, 1, UINT32_MAX),
	MC_S(struct msg_denial, dn_what),
	MC_S(struct msg_denial, dn_remedy),
	MC_S(struct msg_denial, dn_chain),
};
static const struct mc_table msg_denial = MC_TABLE(msg_denial_fields);

int
msg_denial_encode(const struct msg_denial *dn, void **buf, size_t *len)
{
	if (!msg_denial_valid(dn)) {
		errno = EINVAL;
		return (-1);
	}
	return (mc_encode(&msg_denial, dn, buf, len));
}

int
msg_denial_decode(const void *data, size_t len, struct msg_denial *out)
{
	struct msg_denial dn;

	if (mc_decode(&msg_denial, data, len, &dn, sizeof(dn)) == -1)
		return (-1);
	if (!msg_denial_valid(&dn)) {
		errno = EBADMSG;
		return (-1);
	}
	*out = dn;
	return (0);
}

/* One line of rs_denials into buf; -1 if dl is not valid or too long. */
int
msg_denial_line_format(const struct msg_denial_line *dl, char *buf,
    size_t len)
{
	const char	*layer = msg_denial_layer_name(dl->dl_layer);
	int		 n;

	if (layer == NULL || dl->dl_count == 0 ||
	    !msg_denial_text_valid(dl->dl_what, sizeof(dl->dl_what), 0) ||
	    !msg_denial_text_valid(dl->dl_remedy, sizeof(dl->dl_remedy), 1))
		return (-1);
	n = snprintf(buf, len, "%s\t%u\t%s\t%s\n", layer, dl->dl_count,
	    dl->dl_what, dl->dl_remedy);
	return (n < 0 || (size_t)n >= len ? -1 : 0);
}

/* Copy the field at *p up to stop into dst (size); -1 if bad. */
static int
msg_denial_field(const char **p, char stop, char *dst, size_t size)
{
	const char	*e = strchr(*p, stop);
	size_t		 n;

	if (e == NULL || (n = (size_t)(e - *p)) >= size)
		return (-1);
	memcpy(dst, *p, n);
	dst[n] = '\0';
	*p = e + 1;
	return (0);
}

/*
 * The lines of rs_denials, each checked, into out (max of them, out may
 * be NULL): how many, or -1 if any line is bad or there are more than
 * MSG_DENIALS_MAX.
 */
int
msg_denials_parse(const char *text, struct msg_denial_line *out,
    size_t max)
{
	struct msg_denial_line	 dl;
	const char		*p = text, *errstr;
	char			 layer[16], count[12];
	size_t			 n = 0;
	uint32_t		 l;

	if (strnlen(text, MSG_DENIALS_TEXT_MAX) >= MSG_DENIALS_TEXT_MAX)
		return (-1);
	while (*p != '\0') {
		memset(&dl, 0, sizeof(dl));
		if (n >= MSG_DENIALS_MAX ||
		    msg_denial_field(&p, '\t', layer, sizeof(layer)) == -1 ||
		    msg_denial_field(&p, '\t', count, sizeof(count)) == -1 ||
		    msg_denial_field(&p, '\t', dl.dl_what,
		    sizeof(dl.dl_what)) == -1 ||
		    msg_denial_field(&p, '\n', dl.dl_remedy,
		    sizeof(dl.dl_remedy)) == -1)
			return (-1);
		for (l = 1; l < DENIAL_LAYER_MAX; l++)
			if (strcmp(layer, msg_denial_layers[l]) == 0)
				break;
		if (l == DENIAL_LAYER_MAX)
			return (-1);
		dl.dl_layer = l;
		if (count[0] < '1' || count[0] > '9')
			return (-1);
		dl.dl_count = (uint32_t)strtonum(count, 1, UINT32_MAX,
		    &errstr);
		if (errstr != NULL || !msg_denial_text_valid(dl.dl_what,
		    sizeof(dl.dl_what), 0) || !msg_denial_text_valid(
		    dl.dl_remedy, sizeof(dl.dl_remedy), 1))
			return (-1);
		if (out != NULL && n < max)
			out[n] = dl;
		n++;
	}
	return ((int)n);
}
