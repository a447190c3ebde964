/*
 * A streamed exec over HTTP: POST .../exec with "stream": true is
 * answered 200 with server-sent events (docs/http.md, "Streamed exec"),
 * sent as evhttp chunks: one stdout or stderr event per chunk of
 * output the agent read, then one result or error event, the end.
 *
 * Backpressure: the service lets the agent have MSG_STREAM_WINDOW bytes
 * of chunks out that we have not credited back (svc_stream_credit()).
 * We credit them once the connection's output buffer has drained to
 * the socket (evhttp's write callback); a client that reads nothing
 * fills the socket, the buffer stays, no credit goes, the agent stops
 * reading the command's pipes and the command blocks.  What the broker
 * holds for one stream is so bounded by the window (as JSON) and the
 * final result.  A client that goes away (the connection closes:
 * http.c orphans the request) has its command killed by the service.
 */
#include <sys/types.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/http.h>
#include <jansson.h>

#include "fenced.h"
#include "log.h"
#include "msg.h"
#include "broker.h"
#include "http.h"

static void	http_stream_send(struct hreq *, const char *, json_t *);
static void	http_stream_drained(struct evhttp_connection *, void *);
static void	http_stream_chunk(struct hreq *, const struct svc_answer *);
static void	http_stream_result(struct hreq *, const struct msg_result *);
static void	http_stream_error(struct hreq *, const char *, const char *,
		    json_t *);
static void	http_stream_end(struct hreq *, const char *, json_t *);

/* The status line and headers: the command is on its way. */
void
http_stream_start(struct hreq *hr)
{
	if (hr->hr_streaming)
		return;
	hr->hr_streaming = 1;
	http_header(hr, "Content-Type", "text/event-stream");
	http_header(hr, "Cache-Control", "no-store");
	http_header(hr, "X-Content-Type-Options", "nosniff");
	http_cors_headers(hr);
	evhttp_send_reply_start(hr->hr_req, 200, http_reason(200));
}

/* The output went to the socket: the agent may send as much again. */
static void
http_stream_drained(struct evhttp_connection *evcon, void *arg)
{
	struct hreq	*hr = arg;
	size_t		 n = hr->hr_owed;

	hr->hr_owed = 0;
	if (n > 0)
		svc_stream_credit(hr->hr_stream_id, hr, n);
}

/* One event: its data one line of JSON (taken over; NULL: it failed). */
static void
http_stream_send(struct hreq *hr, const char *event, json_t *data)
{
	struct evbuffer	*buf;
	char		*text = NULL;

	if (data != NULL)
		text = json_dumps(data, JSON_COMPACT);
	json_decref(data);
	if ((buf = evbuffer_new()) == NULL)
		fatal("%s: evbuffer_new", __func__);
	if (text == NULL)
		evbuffer_add_printf(buf, "event: error\ndata: {\"error\":"
		    "\"internal\",\"message\":\"cannot encode the answer\","
		    "\"status\":500}\n\n");
	else
		evbuffer_add_printf(buf, "event: %s\ndata: %s\n\n", event,
		    text);
	free(text);
	evhttp_send_reply_chunk_with_cb(hr->hr_req, buf, http_stream_drained,
	    hr);
	evbuffer_free(buf);
}

/* The last event, and the end of the reply; hr is gone after it. */
static void
http_stream_end(struct hreq *hr, const char *event, json_t *data)
{
	struct evhttp_request *req = hr->hr_req;

	http_stream_send(hr, event, data);
	http_forget(hr);
	evhttp_send_reply_end(req);
}

/* Text when it is UTF-8 on its own and base64 was not asked, else base64. */
static void
http_stream_chunk(struct hreq *hr, const struct svc_answer *a)
{
	const struct msg_chunk *ch = a->a_chunk;
	json_t		*d = NULL;
	int		 b64 = hr->hr_base64;

	hr->hr_stream_id = a->a_id;
	hr->hr_owed += ch->ch_len;
	if (!b64 && (d = json_stringn((const char *)ch->ch_data,
	    ch->ch_len)) == NULL)
		b64 = 1;
	if (b64)
		d = api_b64_encode(ch->ch_data, ch->ch_len);
	http_stream_send(hr, ch->ch_stream == MSG_CHUNK_STDOUT ? "stdout" :
	    "stderr", d == NULL ? NULL : json_pack("{s:o, s:s}", "data", d,
	    "encoding", b64 ? "base64" : "utf-8"));
}

/* {"error", "message", "status"} and what extra holds (taken over). */
static void
http_stream_error(struct hreq *hr, const char *code, const char *message,
    json_t *extra)
{
	json_t	*o;

	if ((o = http_api_message(code, message)) != NULL &&
	    json_object_set_new(o, "status",
	    json_integer(http_api_status(code))) == -1) {
		json_decref(o);
		o = NULL;
	}
	if (o != NULL && extra != NULL)
		json_object_update_missing(o, extra);
	json_decref(extra);
	http_stream_end(hr, "error", o);
}

/* The object a non-streamed exec answers, or its error with the output. */
static void
http_stream_result(struct hreq *hr, const struct msg_result *rs)
{
	json_t	*o;

	if ((o = api_result(rs, hr->hr_base64)) == NULL)
		http_stream_error(hr, "internal", "cannot encode the result",
		    NULL);
	else if (rs->rs_error[0] != '\0')
		http_stream_error(hr, rs->rs_error, rs->rs_message, o);
	else
		http_stream_end(hr, "result", o);
}

void
http_stream_answer(void *arg, const struct svc_answer *a)
{
	struct hreq	*hr = arg;

	/* Refused before it went to the agent: a plain answer. */
	if (!hr->hr_streaming && a->a_what != SVC_CHUNK) {
		http_api_answer(arg, a);
		return;
	}
	http_stream_start(hr);
	switch (a->a_what) {
	case SVC_CHUNK:
		http_stream_chunk(hr, a);
		break;
	case SVC_RESULT:
		http_stream_result(hr, a->a_result);
		break;
	case SVC_ERROR:
		http_stream_error(hr, a->a_code, a->a_message, NULL);
		break;
	default:
		http_stream_error(hr, "internal", "unexpected answer", NULL);
		break;
	}
}
