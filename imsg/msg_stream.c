/*
 * msg_stream: the payloads of a streamed exec between the broker and
 * the agent (docs/agent.md, "Streaming"): CHUNK, a piece of a job's
 * stdout or stderr, and CREDIT (CANCEL too), room given back for more.
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

static int	msg_stream_bad(int);
static int	msg_chunk_valid(const struct msg_chunk *);

static int
msg_stream_bad(int e)
{
	errno = e;
	return (-1);
}

/* A chunk is never empty, and is of one stream. */
static int
msg_chunk_valid(const struct msg_chunk *ch)
{
	if (ch->ch_stream != MSG_CHUNK_STDOUT &&
	    ch->ch_stream != MSG_CHUNK_STDERR)
		return (0);
	return (ch->ch_len > 0 && ch->ch_len <= MSG_CHUNK_MAX &&
	    ch->ch_data != NULL);
}

static const struct mc_field msg_chunk_fields[] = {
	MC_U(struct msg_chunk, ch_stream, MSG_CHUNK_STDOUT, MSG_CHUNK_STDERR),
	MC_DATA(struct msg_chunk, ch_data, ch_len, MSG_CHUNK_MAX),
};
static const struct mc_table msg_chunk = MC_TABLE(msg_chunk_fields);

int
msg_chunk_encode(const struct msg_chunk *ch, void **buf, size_t *len)
{
	if (!msg_chunk_valid(ch))
		return (msg_stream_bad(EINVAL));
	return (mc_encode(&msg_chunk, ch, buf, len));
}

int
msg_chunk_decode(const void *data, size_t len, struct msg_chunk *out)
{
	struct msg_chunk ch;

	if (mc_decode(&msg_chunk, data, len, &ch, sizeof(ch)) == -1 ||
	    !msg_chunk_valid(&ch)) {
		msg_chunk_free(&ch);
		return (msg_stream_bad(EBADMSG));
	}
	*out = ch;
	return (0);
}

void
msg_chunk_free(struct msg_chunk *ch)
{
	mc_free(&msg_chunk, ch);
}

/* CREDIT: the bearer and 1..MSG_STREAM_WINDOW bytes; CANCEL: 0. */
static const struct mc_field msg_credit_fields[] = {
	MC_BEARER(struct msg_credit, cr_bearer),
	MC_U(struct msg_credit, cr_bytes, 0, MSG_STREAM_WINDOW),
};
static const struct mc_table msg_credit = MC_TABLE(msg_credit_fields);

int
msg_credit_encode(const struct msg_credit *cr, void **buf, size_t *len)
{
	if (cr->cr_bytes > MSG_STREAM_WINDOW)
		return (msg_stream_bad(EINVAL));
	return (mc_encode(&msg_credit, cr, buf, len));
}

int
msg_credit_decode(const void *data, size_t len, struct msg_credit *out)
{
	struct msg_credit cr;
	int		 ok;

	ok = mc_decode(&msg_credit, data, len, &cr, sizeof(cr)) == 0;
	if (ok)
		*out = cr;
	explicit_bzero(&cr, sizeof(cr));
	return (ok ? 0 : msg_stream_bad(EBADMSG));
}
