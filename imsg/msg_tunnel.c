/*
 * msg_tunnel: the payloads of tunnels between the broker and an agent
 * (docs/interactive.md, "Tunnels"): the request that opens one, its
 * answer, the DATA, CREDIT and CLOSE that go both ways, and the listing
 * of the ports that listen inside a fence.  Every field is bounded and
 * a request's fields are checked against its kind, by both ends.
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

static int	msg_tunnel_bad(int);
static int	msg_tunnel_open_valid(const struct msg_tunnel_open *);
static int	msg_portlist_valid(const struct msg_portlist *);

static int
msg_tunnel_bad(int e)
{
	errno = e;
	return (-1);
}

/*
 * A port tunnel names a port and nothing else; a terminal its id (and
 * how much to replay); an output its process, stream and offset.
 */
static int
msg_tunnel_open_valid(const struct msg_tunnel_open *to)
{
	if (memchr(to->to_key, '\0', sizeof(to->to_key)) == NULL)
		return (0);
	switch (to->to_kind) {
	case MSG_TUNNEL_PORT:
		return (to->to_port >= 1 && to->to_port <= 65535 &&
		    to->to_id == 0 && to->to_stream == 0 &&
		    to->to_offset == 0);
	case MSG_TUNNEL_TERMINAL:
		return (to->to_port == 0 && to->to_stream == 0);
	case MSG_TUNNEL_OUTPUT:
		return (to->to_port == 0 &&
		    (to->to_stream == MSG_CHUNK_STDOUT ||
		    to->to_stream == MSG_CHUNK_STDERR));
	}
	return (0);
}

static const struct mc_field msg_tunnel_open_fields[] = {
	MC_S(struct msg_tunnel_open, to_key),
	MC_U(struct msg_tunnel_open, to_owner, 0, UINT32_MAX),
	MC_BEARER(struct msg_tunnel_open, to_bearer),
	MC_U(struct msg_tunnel_open, to_kind, 1, MSG_TUNNEL_KIND_MAX),
	MC_U(struct msg_tunnel_open, to_port, 0, 65535),
	MC_U(struct msg_tunnel_open, to_id, 0, UINT32_MAX),
	MC_U(struct msg_tunnel_open, to_stream, 0, MSG_CHUNK_STDERR),
	MC_U(struct msg_tunnel_open, to_offset, 0, UINT64_MAX),
};
static const struct mc_table msg_tunnel_open_t =
    MC_TABLE(msg_tunnel_open_fields);

int
msg_tunnel_open_encode(const struct msg_tunnel_open *to, void **buf,
    size_t *len)
{
	if (!msg_tunnel_open_valid(to))
		return (msg_tunnel_bad(EINVAL));
	return (mc_encode(&msg_tunnel_open_t, to, buf, len));
}

int
msg_tunnel_open_decode(const void *data, size_t len,
    struct msg_tunnel_open *out)
{
	struct msg_tunnel_open to;
	int		 ok;

	ok = mc_decode(&msg_tunnel_open_t, data, len, &to, sizeof(to)) == 0 &&
	    msg_tunnel_open_valid(&to);
	if (ok)
		*out = to;
	explicit_bzero(&to, sizeof(to));
	return (ok ? 0 : msg_tunnel_bad(EBADMSG));
}

static const struct mc_field msg_tunnel_fields[] = {
	MC_U(struct msg_tunnel, tn_mode, MSG_TUNNEL_FD, MSG_TUNNEL_FRAMED),
};
static const struct mc_table msg_tunnel_t = MC_TABLE(msg_tunnel_fields);

int
msg_tunnel_encode(const struct msg_tunnel *tn, void **buf, size_t *len)
{
	if (tn->tn_mode != MSG_TUNNEL_FD && tn->tn_mode != MSG_TUNNEL_FRAMED)
		return (msg_tunnel_bad(EINVAL));
	return (mc_encode(&msg_tunnel_t, tn, buf, len));
}

int
msg_tunnel_decode(const void *data, size_t len, struct msg_tunnel *out)
{
	struct msg_tunnel tn;

	if (mc_decode(&msg_tunnel_t, data, len, &tn, sizeof(tn)) == -1)
		return (msg_tunnel_bad(EBADMSG));
	*out = tn;
	return (0);
}

/* DATA is never empty. */
static const struct mc_field msg_tunnel_data_fields[] = {
	MC_BEARER(struct msg_tunnel_data, td_bearer),
	MC_DATA(struct msg_tunnel_data, td_data, td_len, MSG_TUNNEL_DATA_MAX),
};
static const struct mc_table msg_tunnel_data_t =
    MC_TABLE(msg_tunnel_data_fields);

int
msg_tunnel_data_encode(const struct msg_tunnel_data *td, void **buf,
    size_t *len)
{
	if (td->td_len == 0 || td->td_len > MSG_TUNNEL_DATA_MAX ||
	    td->td_data == NULL)
		return (msg_tunnel_bad(EINVAL));
	return (mc_encode(&msg_tunnel_data_t, td, buf, len));
}

int
msg_tunnel_data_decode(const void *data, size_t len,
    struct msg_tunnel_data *out)
{
	struct msg_tunnel_data td;

	if (mc_decode(&msg_tunnel_data_t, data, len, &td, sizeof(td)) == -1 ||
	    td.td_len == 0) {
		msg_tunnel_data_free(&td);
		explicit_bzero(&td, sizeof(td));
		return (msg_tunnel_bad(EBADMSG));
	}
	*out = td;
	explicit_bzero(&td, sizeof(td));
	return (0);
}

void
msg_tunnel_data_free(struct msg_tunnel_data *td)
{
	mc_free(&msg_tunnel_data_t, td);
}

static const struct mc_field msg_tunnel_credit_fields[] = {
	MC_BEARER(struct msg_tunnel_credit, tc_bearer),
	MC_U(struct msg_tunnel_credit, tc_bytes, 1, MSG_TUNNEL_WINDOW),
};
static const struct mc_table msg_tunnel_credit_t =
    MC_TABLE(msg_tunnel_credit_fields);

int
msg_tunnel_credit_encode(const struct msg_tunnel_credit *tc, void **buf,
    size_t *len)
{
	if (tc->tc_bytes == 0 || tc->tc_bytes > MSG_TUNNEL_WINDOW)
		return (msg_tunnel_bad(EINVAL));
	return (mc_encode(&msg_tunnel_credit_t, tc, buf, len));
}

int
msg_tunnel_credit_decode(const void *data, size_t len,
    struct msg_tunnel_credit *out)
{
	struct msg_tunnel_credit tc;
	int		 ok;

	ok = mc_decode(&msg_tunnel_credit_t, data, len, &tc, sizeof(tc)) == 0;
	if (ok)
		*out = tc;
	explicit_bzero(&tc, sizeof(tc));
	return (ok ? 0 : msg_tunnel_bad(EBADMSG));
}

static const struct mc_field msg_tunnel_close_fields[] = {
	MC_BEARER(struct msg_tunnel_close, tl_bearer),
	MC_U(struct msg_tunnel_close, tl_how, MSG_TUNNEL_SHUT,
	    MSG_TUNNEL_ABORT),
};
static const struct mc_table msg_tunnel_close_t =
    MC_TABLE(msg_tunnel_close_fields);

int
msg_tunnel_close_encode(const struct msg_tunnel_close *tl, void **buf,
    size_t *len)
{
	if (tl->tl_how != MSG_TUNNEL_SHUT && tl->tl_how != MSG_TUNNEL_ABORT)
		return (msg_tunnel_bad(EINVAL));
	return (mc_encode(&msg_tunnel_close_t, tl, buf, len));
}

int
msg_tunnel_close_decode(const void *data, size_t len,
    struct msg_tunnel_close *out)
{
	struct msg_tunnel_close tl;
	int		 ok;

	ok = mc_decode(&msg_tunnel_close_t, data, len, &tl, sizeof(tl)) == 0;
	if (ok)
		*out = tl;
	explicit_bzero(&tl, sizeof(tl));
	return (ok ? 0 : msg_tunnel_bad(EBADMSG));
}

static const struct mc_field msg_ports_req_fields[] = {
	MC_S(struct msg_ports_req, ps_key),
	MC_U(struct msg_ports_req, ps_owner, 0, UINT32_MAX),
	MC_BEARER(struct msg_ports_req, ps_bearer),
};
static const struct mc_table msg_ports_req_t =
    MC_TABLE(msg_ports_req_fields);

int
msg_ports_req_encode(const struct msg_ports_req *ps, void **buf, size_t *len)
{
	if (memchr(ps->ps_key, '\0', sizeof(ps->ps_key)) == NULL)
		return (msg_tunnel_bad(EINVAL));
	return (mc_encode(&msg_ports_req_t, ps, buf, len));
}

int
msg_ports_req_decode(const void *data, size_t len, struct msg_ports_req *out)
{
	struct msg_ports_req ps;
	int		 ok;

	ok = mc_decode(&msg_ports_req_t, data, len, &ps, sizeof(ps)) == 0;
	if (ok)
		*out = ps;
	explicit_bzero(&ps, sizeof(ps));
	return (ok ? 0 : msg_tunnel_bad(EBADMSG));
}

/*
 * A listing: its count, whether it was cut short, and the ports as
 * one nested array, each 1..65535, strictly ascending (so no port
 * twice and never more than the count says).
 */
static int
msg_portlist_valid(const struct msg_portlist *pl)
{
	uint32_t	 i;

	if (pl->pl_count > MSG_PORTS_MAX ||
	    (pl->pl_truncated != 0 && pl->pl_truncated != 1))
		return (0);
	for (i = 0; i < pl->pl_count; i++)
		if (pl->pl_ports[i] == 0 ||
		    (i > 0 && pl->pl_ports[i] <= pl->pl_ports[i - 1]))
			return (0);
	return (1);
}

int
msg_portlist_encode(const struct msg_portlist *pl, void **buf, size_t *len)
{
	struct mp_writer w;
	uint32_t	 i;

	if (!msg_portlist_valid(pl))
		return (msg_tunnel_bad(EINVAL));
	mp_write_init(&w);
	mp_write_array(&w, 2);
	mp_write_bool(&w, pl->pl_truncated);
	mp_write_array(&w, pl->pl_count);
	for (i = 0; i < pl->pl_count; i++)
		mp_write_u64(&w, pl->pl_ports[i]);
	return (mp_write_finish(&w, buf, len));
}

int
msg_portlist_decode(const void *data, size_t len, struct msg_portlist *out)
{
	struct mp_reader r;
	struct msg_portlist pl;
	uint64_t	 v;
	size_t		 n, i;

	memset(&pl, 0, sizeof(pl));
	if (mp_read_begin(&r, data, len, 2) == 0) {
		mp_read_bool(&r, &pl.pl_truncated);
		if (mp_read_array(&r, &n, MSG_PORTS_MAX) == 0) {
			for (i = 0; i < n; i++) {
				if (mp_read_u64(&r, &v, 1, 65535) == -1)
					break;
				pl.pl_ports[i] = (uint16_t)v;
			}
			pl.pl_count = (uint32_t)n;
			mp_read_leave(&r);
		}
	}
	if (mp_read_end(&r) == -1 || !msg_portlist_valid(&pl))
		return (msg_tunnel_bad(EBADMSG));
	*out = pl;
	return (0);
}
