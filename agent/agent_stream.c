/*
 * Streamed exec, the agent's side (docs/agent.md, "Streaming").
 *
 * A job started by EXEC_STREAM sends what it reads from the command's
 * stdout and stderr as CHUNKs, as it reads it, besides keeping it for
 * its RESULT.  It may have at most MSG_STREAM_WINDOW bytes of CHUNKs
 * out that its peer has not given back as CREDIT; with none left it
 * stops reading the pipes (agent_job.c), which fill, and the command
 * blocks in its write: a reader that does not read slows the command
 * down, and nothing grows.  CANCEL kills the job.
 */
#include <sys/types.h>

#include <stdlib.h>
#include <string.h>

#include "fenced.h"
#include "log.h"
#include "msg.h"
#include "agent.h"

static struct agent_job	*agent_stream_find(uint32_t);
static int		 agent_stream_msg(uint32_t, const void *, size_t,
			    struct msg_credit *);

/* One CHUNK of j, n bytes of stream at p (n within j's credit). */
void
agent_stream_chunk(struct agent_job *j, int stream, const uint8_t *p,
    size_t n)
{
	struct msg_chunk ch;
	void		*buf;
	size_t		 len;

	while (n > 0) {
		ch.ch_stream = (uint32_t)stream;
		ch.ch_data = (uint8_t *)p;
		ch.ch_len = n < MSG_CHUNK_MAX ? n : MSG_CHUNK_MAX;
		if (msg_chunk_encode(&ch, &buf, &len) == -1)
			fatal("%s: msg_chunk_encode", __func__);
		agent_reply(IMSG_AGENT_CHUNK, j->j_id, buf, len);
		j->j_credit -= ch.ch_len < j->j_credit ? ch.ch_len :
		    j->j_credit;
		p += ch.ch_len;
		n -= ch.ch_len;
	}
}

/* The streamed job of request id, or NULL: it ended, or never was. */
static struct agent_job *
agent_stream_find(uint32_t id)
{
	struct agent_job *j;

	TAILQ_FOREACH(j, &agent_env->a_jobs, j_entry)
		if (j->j_id == id && j->j_stream)
			return (j);
	return (NULL);
}

/*
 * A CREDIT or CANCEL: decoded, its bearer checked.  A malformed one is
 * a protocol error as any; one with a wrong bearer is dropped (it
 * answers no request of its own, so nothing is said).
 */
static int
agent_stream_msg(uint32_t id, const void *data, size_t len,
    struct msg_credit *cr)
{
	int	 ok;

	if (msg_credit_decode(data, len, cr) == -1)
		fatalx("%s: malformed credit for request %u", __func__, id);
	ok = agent_bearer_ok(cr->cr_bearer);
	explicit_bzero(cr->cr_bearer, sizeof(cr->cr_bearer));
	if (!ok) {
		log_warnx("%s: request %u: unpaired, dropped", __func__, id);
		return (-1);
	}
	return (0);
}

/*
 * More room.  The job may have ended meanwhile (a credit crosses its
 * RESULT): nothing to do then.  Credit beyond the window is not given.
 */
void
agent_stream_credit(uint32_t id, const void *data, size_t len)
{
	struct msg_credit cr;
	struct agent_job *j;

	if (agent_stream_msg(id, data, len, &cr) == -1 ||
	    (j = agent_stream_find(id)) == NULL)
		return;
	j->j_credit += cr.cr_bytes;
	if (j->j_credit > MSG_STREAM_WINDOW)
		j->j_credit = MSG_STREAM_WINDOW;
	agent_job_resume(j);
}

void
agent_stream_cancel(uint32_t id, const void *data, size_t len)
{
	struct msg_credit cr;
	struct agent_job *j;

	if (agent_stream_msg(id, data, len, &cr) == -1 ||
	    (j = agent_stream_find(id)) == NULL)
		return;
	log_debug("%s: request %u: cancelled", __func__, id);
	agent_job_cancel(j);
}
