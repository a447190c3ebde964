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
 * More room.  The job may have ended meanwhile (a credit crosses its
 * RESULT): nothing to do then.  Credit beyond the window is not given.
 * A CREDIT or CANCEL with a wrong bearer never comes here: the
 * agent's dispatch drops it (it answers no request of its own, so
 * nothing is said).
 */
void
agent_stream_credit(uint32_t id, const struct msg_credit *cr)
{
	struct agent_job *j;

	if ((j = agent_stream_find(id)) == NULL)
		return;
	j->j_credit += cr->cr_bytes;
	if (j->j_credit > MSG_STREAM_WINDOW)
		j->j_credit = MSG_STREAM_WINDOW;
	agent_job_resume(j);
}

void
agent_stream_cancel(uint32_t id, const struct msg_credit *cr)
{
	struct agent_job *j;

	if ((j = agent_stream_find(id)) == NULL)
		return;
	log_debug("%s: request %u: cancelled", __func__, id);
	agent_job_cancel(j);
}
