/*
 * msg_egress: what the broker and the egress proxy say to each other
 * (docs/egress.md).  The broker gives the proxy a fence's list, a
 * connection from inside it, the end of it; the proxy answers with one
 * decision per connection.  A decision carries what a hostile fence
 * asked for, so every string of it is held to printable ASCII here,
 * whoever sends it.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fenced.h"
#include "msg.h"
#include "mp.h"
#include "msg_codec.h"

static int	msg_egress_fence_valid(const struct msg_egress_fence *);
static int	msg_egress_decision_valid(const struct msg_egress_decision *);

/* n canonical entries (egress_entry_valid()), at most EGRESS_LIST_MAX. */
int
msg_egress_list_valid(const char list[][EGRESS_ENTRY_LEN], uint32_t n)
{
	uint32_t	 i;

	if (n > EGRESS_LIST_MAX)
		return (0);
	for (i = 0; i < n; i++)
		if (strnlen(list[i], EGRESS_ENTRY_LEN) >= EGRESS_ENTRY_LEN ||
		    !egress_entry_valid(list[i]))
			return (0);
	return (1);
}

static int
msg_egress_fence_valid(const struct msg_egress_fence *f)
{
	if (f->ef_id == 0)
		return (0);
	if (strnlen(f->ef_key, sizeof(f->ef_key)) >= sizeof(f->ef_key) ||
	    (f->ef_key[0] != '\0' && !fence_key_valid(f->ef_key)))
		return (0);
	return (msg_egress_list_valid(f->ef_list, f->ef_nlist));
}

static const struct mc_field msg_egress_fence_fields[] = {
	MC_U(struct msg_egress_fence, ef_id, 1, UINT32_MAX),
	MC_U(struct msg_egress_fence, ef_owner, 0, UINT32_MAX),
	MC_S(struct msg_egress_fence, ef_key),
	MC_STRS(struct msg_egress_fence, ef_list, ef_nlist),
};
static const struct mc_table msg_egress_fence =
    MC_TABLE(msg_egress_fence_fields);

int
msg_egress_fence_encode(const struct msg_egress_fence *f, void **buf,
    size_t *len)
{
	if (!msg_egress_fence_valid(f)) {
		errno = EINVAL;
		return (-1);
	}
	return (mc_encode(&msg_egress_fence, f, buf, len));
}

int
msg_egress_fence_decode(const void *data, size_t len,
    struct msg_egress_fence *out)
{
	if (mc_decode(&msg_egress_fence, data, len, out, sizeof(*out)) ==
	    -1 || !msg_egress_fence_valid(out)) {
		errno = EBADMSG;
		return (-1);
	}
	return (0);
}

/* Terminated within size, and every byte in lo..hi (or a '-'). */
static int
msg_egress_str(const char *s, size_t size, int lo, int hi)
{
	size_t		 i, n;

	if ((n = strnlen(s, size)) >= size)
		return (0);
	for (i = 0; i < n; i++)
		if (((unsigned char)s[i] < lo || (unsigned char)s[i] > hi) &&
		    s[i] != '-')
			return (0);
	return (1);
}

static int
msg_egress_decision_valid(const struct msg_egress_decision *d)
{
	unsigned char	 bin[sizeof(struct in6_addr)];

	if (d->ed_id == 0 || (d->ed_allowed != 0 && d->ed_allowed != 1))
		return (0);
	if (!msg_egress_str(d->ed_name, sizeof(d->ed_name), '!', '~') ||
	    !msg_egress_str(d->ed_method, sizeof(d->ed_method), 'A', 'Z') ||
	    !msg_egress_str(d->ed_reason, sizeof(d->ed_reason), 'a', 'z') ||
	    d->ed_reason[0] == '\0')
		return (0);
	if (strnlen(d->ed_address, sizeof(d->ed_address)) >=
	    sizeof(d->ed_address) || (d->ed_address[0] != '\0' &&
	    inet_pton(AF_INET, d->ed_address, bin) != 1 &&
	    inet_pton(AF_INET6, d->ed_address, bin) != 1))
		return (0);
	return (1);
}

static const struct mc_field msg_egress_decision_fields[] = {
	MC_U(struct msg_egress_decision, ed_id, 1, UINT32_MAX),
	MC_B(struct msg_egress_decision, ed_allowed),
	MC_S(struct msg_egress_decision, ed_name),
	MC_U(struct msg_egress_decision, ed_port, 0, UINT16_MAX),
	MC_S(struct msg_egress_decision, ed_method),
	MC_S(struct msg_egress_decision, ed_reason),
	MC_S(struct msg_egress_decision, ed_address),
	MC_U(struct msg_egress_decision, ed_up, 0, UINT64_MAX),
	MC_U(struct msg_egress_decision, ed_down, 0, UINT64_MAX),
	MC_U(struct msg_egress_decision, ed_ms, 0, UINT32_MAX),
};
static const struct mc_table msg_egress_decision =
    MC_TABLE(msg_egress_decision_fields);

int
msg_egress_decision_encode(const struct msg_egress_decision *d, void **buf,
    size_t *len)
{
	if (!msg_egress_decision_valid(d)) {
		errno = EINVAL;
		return (-1);
	}
	return (mc_encode(&msg_egress_decision, d, buf, len));
}

int
msg_egress_decision_decode(const void *data, size_t len,
    struct msg_egress_decision *out)
{
	if (mc_decode(&msg_egress_decision, data, len, out, sizeof(*out)) ==
	    -1 || !msg_egress_decision_valid(out)) {
		errno = EBADMSG;
		return (-1);
	}
	return (0);
}
