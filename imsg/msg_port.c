/*
 * msg_port: fencectl port's request and its answer (docs/interactive.md,
 * "The HTTP API"): a key, whose fence, a port; the broker's answer the
 * same with both URLs set.  Every field bounded, the URLs printable.
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

static int
msg_port_url_ok(const char *s, size_t size)
{
	size_t	 i;

	if (memchr(s, '\0', size) == NULL)
		return (0);
	for (i = 0; s[i] != '\0'; i++)
		if (s[i] <= ' ' || s[i] >= 0x7f)
			return (0);
	return (1);
}

static int
msg_port_ticket_valid(const struct msg_port_ticket *pk)
{
	return (memchr(pk->pk_key, '\0', sizeof(pk->pk_key)) != NULL &&
	    fence_key_valid(pk->pk_key) && pk->pk_port >= 1 &&
	    pk->pk_port <= 65535 &&
	    msg_port_url_ok(pk->pk_path, sizeof(pk->pk_path)) &&
	    msg_port_url_ok(pk->pk_url, sizeof(pk->pk_url)));
}

static const struct mc_field msg_port_ticket_fields[] = {
	MC_S(struct msg_port_ticket, pk_key),
	MC_U(struct msg_port_ticket, pk_owner, 0, UINT32_MAX),
	MC_U(struct msg_port_ticket, pk_port, 1, 65535),
	MC_S(struct msg_port_ticket, pk_path),
	MC_S(struct msg_port_ticket, pk_url),
	MC_U(struct msg_port_ticket, pk_expires_ms, 0, UINT32_MAX),
};
static const struct mc_table msg_port_ticket_t =
    MC_TABLE(msg_port_ticket_fields);

int
msg_port_ticket_encode(const struct msg_port_ticket *pk, void **buf,
    size_t *len)
{
	if (!msg_port_ticket_valid(pk)) {
		errno = EINVAL;
		return (-1);
	}
	return (mc_encode(&msg_port_ticket_t, pk, buf, len));
}

int
msg_port_ticket_decode(const void *data, size_t len,
    struct msg_port_ticket *out)
{
	struct msg_port_ticket pk;
	int		 ok;

	ok = mc_decode(&msg_port_ticket_t, data, len, &pk, sizeof(pk)) == 0 &&
	    msg_port_ticket_valid(&pk);
	if (ok)
		*out = pk;
	explicit_bzero(&pk, sizeof(pk));
	if (ok)
		return (0);
	errno = EBADMSG;
	return (-1);
}
