/*
 * The HTTP API's answers: every status with its reason, every body as
 * JSON (errors as {"error", "message"}) or a file's bytes, and the
 * request forgotten once answered or its client gone.
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/tree.h>

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/event_struct.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/listener.h>
#include <jansson.h>

#include "fenced.h"
#include "imsg.h"
#include "log.h"
#include "msg.h"
#include "proc.h"
#include "broker.h"
#include "http.h"
#include "files.h"
#include "http_page.h"
#include "http_conn.h"

const char *
http_reason(int status)
{
	switch (status) {
	case 200: return ("OK");
	case 201: return ("Created");
	case 204: return ("No Content");
	case 400: return ("Bad Request");
	case 401: return ("Unauthorized");
	case 403: return ("Forbidden");
	case 404: return ("Not Found");
	case 405: return ("Method Not Allowed");
	case 408: return ("Request Timeout");
	case 409: return ("Conflict");
	case 412: return ("Precondition Failed");
	case 413: return ("Content Too Large");
	case 417: return ("Expectation Failed");
	case 421: return ("Misdirected Request");
	case 422: return ("Unprocessable Content");
	case 429: return ("Too Many Requests");
	case 431: return ("Request Header Fields Too Large");
	case 500: return ("Internal Server Error");
	case 501: return ("Not Implemented");
	case 502: return ("Bad Gateway");
	case 503: return ("Service Unavailable");
	case 504: return ("Gateway Timeout");
	case 507: return ("Insufficient Storage");
	default: return (status < 500 ? "Client Error" : "Server Error");
	}
}

void
http_header(struct hreq *hr, const char *name, const char *value)
{
	evhttp_add_header(evhttp_request_get_output_headers(hr->hr_req),
	    name, value);
}

static int
http_json_out(const char *buf, size_t len, void *arg)
{
	return (evbuffer_add(arg, buf, len));
}

/*
 * Send what hr's output buffer holds with status, and forget hr:
 * whatever else its request to the fence service says goes nowhere.
 */
static void
http_send_as(struct hreq *hr, int status, const char *type)
{
	struct evhttp_request *req = hr->hr_req;

	if (type != NULL)
		http_header(hr, "Content-Type", type);
	http_header(hr, "Cache-Control", "no-store");
	http_header(hr, "X-Content-Type-Options", "nosniff");
	http_cors_headers(hr);
	http_forget(hr);
	/* The request, and perhaps the connection, are evhttp's again. */
	evhttp_send_reply(req, status, http_reason(status), NULL);
}

/*
 * hr is answered (or its answer is about to end, http_stream.c): it is
 * freed, and whatever else its request says goes nowhere.
 */
void
http_forget(struct hreq *hr)
{
	struct hconn	*hc = hr->hr_conn;

	if (hc != NULL) {
		http_conn_unwatch(hc);
		hc->hc_req = NULL;
	}
	inflight_orphan(hr);
	if (hr->hr_list != NULL)
		evbuffer_free(hr->hr_list);
	json_decref(hr->hr_snaps);
	free(hr);
}

/* hr is still waiting for its answer (not answered at once). */
int
http_pending(const struct hreq *hr, const struct hconn *hc)
{
	return (hc != NULL && hc->hc_req == hr);
}

static void
http_send(struct hreq *hr, int status)
{
	if (status == 204) {
		http_send_as(hr, status, NULL);
		return;
	}
	if (hr->hr_raw) {
		/* Bytes of a file, exactly as they are (http_files.c). */
		http_header(hr, "Content-Disposition", "attachment");
		http_send_as(hr, status, "application/octet-stream");
		return;
	}
	evbuffer_add(evhttp_request_get_output_buffer(hr->hr_req), "\n", 1);
	http_send_as(hr, status, "application/json");
}

/* An answer without a body (204: a preflight). */
void
http_reply_empty(struct hreq *hr, int status)
{
	http_send(hr, status);
}

static void
http_internal(struct evbuffer *out)
{
	evbuffer_drain(out, evbuffer_get_length(out));
	evbuffer_add_printf(out, "{\"error\":\"internal\","
	    "\"message\":\"cannot encode the answer\"}");
}

/* Answer hr with status and body (taken over, NULL: it failed). */
void
http_reply(struct hreq *hr, int status, json_t *body)
{
	struct evbuffer	*out;

	/* A request read for another front end (the channel): kept. */
	if (hr->hr_req == NULL) {
		json_decref(hr->hr_captured);
		hr->hr_captured = body;
		hr->hr_captured_status = status;
		return;
	}
	out = evhttp_request_get_output_buffer(hr->hr_req);

	if (body == NULL || json_dump_callback(body, http_json_out, out,
	    JSON_COMPACT) == -1) {
		http_internal(out);
		status = 500;
	}
	if (body != NULL)
		json_decref(body);
	http_send(hr, status);
}

/* Answer hr with status and a body of JSON text (NULL: it failed). */
void
http_reply_text(struct hreq *hr, int status, const char *text, size_t len)
{
	struct evbuffer	*out = evhttp_request_get_output_buffer(hr->hr_req);

	if (text == NULL || evbuffer_add(out, text, len) == -1) {
		http_internal(out);
		status = 500;
	}
	http_send(hr, status);
}

/* Answer hr with status and the body gathered in body (NULL: it failed). */
void
http_reply_buffer(struct hreq *hr, int status, struct evbuffer *body)
{
	struct evbuffer	*out = evhttp_request_get_output_buffer(hr->hr_req);

	if (body == NULL || evbuffer_add_buffer(out, body) == -1) {
		http_internal(out);
		status = 500;
	}
	http_send(hr, status);
}

/* Answer hr with status and len bytes of data, a file of type. */
void
http_reply_static(struct hreq *hr, int status, const char *type,
    const void *data, size_t len)
{
	struct evbuffer	*out = evhttp_request_get_output_buffer(hr->hr_req);

	if (evbuffer_add_reference(out, data, len, NULL, NULL) == -1) {
		http_internal(out);
		http_send(hr, 500);
		return;
	}
	http_send_as(hr, status, type);
}

/* Answer hr with status and a copy of len bytes of data, of type. */
void
http_reply_copy(struct hreq *hr, int status, const char *type,
    const void *data, size_t len)
{
	struct evbuffer	*out = evhttp_request_get_output_buffer(hr->hr_req);

	if (evbuffer_add(out, data, len) == -1) {
		http_internal(out);
		http_send(hr, 500);
		return;
	}
	http_send_as(hr, status, type);
}

/* An error, with more fields in extra (taken over, may be NULL). */
void
http_error_with(struct hreq *hr, int status, const char *code,
    const char *message, json_t *extra)
{
	json_t	*body = http_api_message(code, message);

	if (extra != NULL) {
		if (body != NULL)
			json_object_update_missing(body, extra);
		json_decref(extra);
	}
	http_reply(hr, status, body);
}

void
http_error(struct hreq *hr, int status, const char *code, const char *fmt,
    ...)
{
	char	 msg[MSG_ERROR_TEXT_MAX];
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_debug("http: %d %s: %s", status, code, msg);
	http_error_with(hr, status, code, msg, NULL);
}
