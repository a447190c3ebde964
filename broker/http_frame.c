/*
 * The framing of HTTP requests, read beside evhttp as the bytes arrive
 * (http.c says why): each header line looked at once, what evhttp would
 * read ambiguously refused before a body is read, the body's limit set
 * from what the headers show (http_put_authorise()), and each request's
 * deadline started with its first byte.
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
#include "http_takeover.h"

#define HTTP_FRAME_NUMBER	64	/* a Content-Length line, at most */
#define HTTP_PUT_FILES		"PUT /api/environments/"

static void
http_frame_refuse(struct hconn *hc, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/*
 * What a request's body may hold: `http body max', or a file for a PUT
 * of a file known to be authorised (http_put_authorise()).
 */
uint32_t
http_body_limit(const struct hconn *hc)
{
	const struct fenced_config *c = http_conf();

	return (hc->hc_big ? c->c_files_max : c->c_http_body_max);
}

/* The most any request's body may hold: a PUT of a file's. */
uint32_t
http_body_ceiling(void)
{
	const struct fenced_config *c = http_conf();

	return (c->c_files_max > c->c_http_body_max ? c->c_files_max :
	    c->c_http_body_max);
}

/* The first reason to refuse a request's framing is the one it gets. */
static void
http_frame_refuse(struct hconn *hc, int status, const char *fmt, ...)
{
	va_list	 ap;

	if (hc->hc_frame_status != 0)
		return;
	hc->hc_frame_status = status;
	va_start(ap, fmt);
	vsnprintf(hc->hc_frame_msg, sizeof(hc->hc_frame_msg), fmt, ap);
	va_end(ap);
}

/*
 * Whether a PUT of a file may bring a body larger than `http body max':
 * from its headers alone, before evhttp reads a byte of its body, the
 * checks http_request() will make, in its order: one Host of ours, no
 * foreign Origin, one valid token, a connection the token's owner may
 * have (it is the owner's from then on, as http_conn_owner() would
 * make it), and the owner's running fence of the path's key.  Then
 * evhttp reads up to `files max'.
 * Returns NULL, or why not (for the 413 of a larger Content-Length).
 */
static const char *
http_put_authorise(struct hconn *hc)
{
	struct svc_who	 w;
	const char	*why;
	uid_t		 uid;
	int		 r;

	if (hc->hc_host_count != 1 || hc->hc_origin_count > 1 ||
	    !http_host_origin_ok(hc->hc_host, hc->hc_origin_count == 0 ?
	    NULL : hc->hc_origin))
		return ("Host or Origin refused");
	r = http_head_token_merge(hc->hc_token, sizeof(hc->hc_token),
	    &hc->hc_token_count, hc->hc_bearer, hc->hc_bearer_count, &why);
	if (r == 0 && hc->hc_token_count == 1)
		r = token_lookup(hc->hc_token, strlen(hc->hc_token), &uid);
	explicit_bzero(hc->hc_token, sizeof(hc->hc_token));
	explicit_bzero(hc->hc_bearer, sizeof(hc->hc_bearer));
	if (r == -1 || hc->hc_token_count != 1)
		return ("no valid token");
	memset(&w, 0, sizeof(w));
	w.w_uid = uid;
	w.w_noun = "environment";
	if (hc->hc_over || http_conn_claim(hc, uid) == -1)
		return ("too many connections");
	if (!svc_fence_known(&w, MSG_OWNER_NONE, hc->hc_put_key))
		return ("no such environment of the token's owner");
	hc->hc_big = 1;
	if (hc->hc_evcon != NULL)
		evhttp_connection_set_max_body_size(hc->hc_evcon,
		    http_body_limit(hc));
	return (NULL);
}

/*
 * The request line: whether it is a PUT of a file, and of which key
 * (the same bytes http_api.c routes by).  A line cut short is not.
 */
static void
http_frame_request(struct hconn *hc, const char *line)
{
	const char	*key = line + strlen(HTTP_PUT_FILES);
	size_t		 keylen;

	if (strncmp(line, HTTP_PUT_FILES, strlen(HTTP_PUT_FILES)) != 0)
		return;
	keylen = strcspn(key, "/ ");
	if (keylen == 0 || keylen > FENCE_KEY_MAX ||
	    strncmp(key + keylen, "/files/", strlen("/files/")) != 0)
		return;
	memcpy(hc->hc_put_key, key, keylen);
	hc->hc_put_key[keylen] = '\0';
	hc->hc_put_file = fence_key_valid(hc->hc_put_key);
}

/* A header's value, as evhttp takes it: without the white space around. */
static const char *
http_frame_value(char *line, size_t namelen)
{
	char	*v = line + namelen + 1, *e;

	v += strspn(v, " \t");
	e = v + strlen(v);
	while (e > v && (e[-1] == ' ' || e[-1] == '\t'))
		*--e = '\0';
	return (v);
}

/*
 * Host, Origin and the token of a PUT of a file, kept for
 * http_put_authorise(): a value cut short (cut) is kept empty, which
 * it refuses.  1 if the line was one of them.
 */
static int
http_frame_keep(struct hconn *hc, char *line, size_t namelen, int cut)
{
	const char	*v;
	char		*dst;
	size_t		 size;

	if (namelen == strlen("Host") &&
	    strncasecmp(line, "Host", namelen) == 0) {
		hc->hc_host_count++;
		dst = hc->hc_host;
		size = sizeof(hc->hc_host);
	} else if (namelen == strlen("Origin") &&
	    strncasecmp(line, "Origin", namelen) == 0) {
		hc->hc_origin_count++;
		dst = hc->hc_origin;
		size = sizeof(hc->hc_origin);
	} else if (namelen == strlen(HTTP_TOKEN_HEADER) &&
	    strncasecmp(line, HTTP_TOKEN_HEADER, namelen) == 0) {
		hc->hc_token_count++;
		dst = hc->hc_token;
		size = sizeof(hc->hc_token);
	} else if (namelen == strlen("Authorization") &&
	    strncasecmp(line, "Authorization", namelen) == 0) {
		v = http_frame_value(line, namelen);
		if (!cut && http_head_bearer(v, strlen(v), hc->hc_bearer,
		    sizeof(hc->hc_bearer)))
			hc->hc_bearer_count++;
		return (1);
	} else
		return (0);
	v = http_frame_value(line, namelen);
	if (cut || strlcpy(dst, v, size) >= size)
		dst[0] = '\0';
	return (1);
}

/* The end of the headers (or blank lines before a request). */
static void
http_frame_end(struct hconn *hc)
{
	const char	*why;

	if (hc->hc_lineno > 0 && hc->hc_cl_count > 0 &&
	    hc->hc_te_count > 0)
		http_frame_refuse(hc, 400, "Content-Length and "
		    "Transfer-Encoding together");
	if (hc->hc_lineno > 0 && hc->hc_frame_status == 0 &&
	    hc->hc_put_file) {
		why = http_put_authorise(hc);
		if (hc->hc_cl_set && hc->hc_cl > http_body_limit(hc))
			http_frame_refuse(hc, 413, "the body is larger "
			    "than %u bytes%s%s%s", http_body_limit(hc),
			    why == NULL ? "" : ", the most before a "
			    "PUT is authorised (", why == NULL ? "" :
			    why, why == NULL ? "" : ")");
	}
	if (hc->hc_frame_status != 0)
		event_active(&hc->hc_frame_ev, EV_TIMEOUT, 1);
}

/* A Content-Length line, len long (more than was kept of it: cut). */
static void
http_frame_length(struct hconn *hc, char *line, size_t namelen, size_t len)
{
	const char	*v;
	unsigned long long cl;
	uint32_t	 limit;
	int		 digits;

	if (++hc->hc_cl_count > 1) {
		http_frame_refuse(hc, 400, "more than one "
		    "Content-Length");
		return;
	}
	v = http_frame_value(line, namelen);
	if (len >= HTTP_FRAME_NUMBER) {
		/* Longer than any number of ours. */
		http_frame_refuse(hc, strspn(v, "0123456789") ==
		    strlen(v) ? 413 : 400, "Content-Length too long");
		return;
	}
	digits = (int)strspn(v, "0123456789");
	if (digits == 0 || v[digits] != '\0') {
		http_frame_refuse(hc, 400, "Content-Length is not a "
		    "number");
		return;
	}
	/* A PUT of a file's is checked again once it is known. */
	limit = hc->hc_put_file ? http_body_ceiling() :
	    http_body_limit(hc);
	if (digits > 19 || (cl = strtoull(v, NULL, 10)) > limit) {
		http_frame_refuse(hc, 413, "the body is larger than %u "
		    "bytes", limit);
		return;
	}
	hc->hc_cl_set = 1;
	hc->hc_cl = cl;
}

/*
 * One whole line of the header section (hc_line, hc_linelen long, its
 * LF dropped, only HTTP_FRAME_LINE - 1 bytes of it kept).  Only what
 * decides where the body ends is looked at; evhttp parses the rest.
 */
static void
http_frame_line(struct hconn *hc)
{
	size_t		 len = hc->hc_linelen, kept, namelen;
	char		*line = hc->hc_line;
	const char	*v;

	kept = len < sizeof(hc->hc_line) ? len : sizeof(hc->hc_line) - 1;
	/* CRLF ends a line as LF does; only a CR right before the LF. */
	if (len == kept && kept > 0 && line[kept - 1] == '\r')
		len = --kept;
	line[kept] = '\0';
	hc->hc_linelen = 0;
	if (len == 0) {
		http_frame_end(hc);
		return;
	}
	if (hc->hc_lineno++ == 0) {
		/*
		 * The request line.  Every body is held to `http body
		 * max' until a PUT of a file is known to be authorised,
		 * at the end of its headers; evhttp reads the limit of
		 * the connection only once the headers are in.
		 */
		http_frame_request(hc, line);
		if (hc->hc_evcon != NULL)
			evhttp_connection_set_max_body_size(hc->hc_evcon,
			    http_body_limit(hc));
		return;
	}
	if (line[0] == ' ' || line[0] == '\t') {
		http_frame_refuse(hc, 400, "a header folded over two lines");
		return;
	}
	namelen = strcspn(line, ":");
	if (namelen < kept && strcspn(line, " \t") < namelen) {
		http_frame_refuse(hc, 400, "white space in a header name");
		return;
	}
	if (namelen == strlen("Content-Length") && namelen < kept &&
	    strncasecmp(line, "Content-Length", namelen) == 0) {
		http_frame_length(hc, line, namelen, len);
		return;
	}
	/* What a PUT of a file is authorised by: kept only whole. */
	if (hc->hc_put_file && namelen < kept && http_frame_keep(hc, line,
	    namelen, len > kept))
		return;
	if (namelen == strlen("Transfer-Encoding") && namelen < kept &&
	    strncasecmp(line, "Transfer-Encoding", namelen) == 0) {
		if (++hc->hc_te_count > 1) {
			http_frame_refuse(hc, 400, "more than one "
			    "Transfer-Encoding");
			return;
		}
		v = http_frame_value(line, namelen);
		if (len > kept || strcasecmp(v, "chunked") != 0)
			http_frame_refuse(hc, 400, "Transfer-Encoding other "
			    "than chunked");
		return;
	}
	/* A name longer than we keep may be one of them cut: refuse it. */
	if (namelen >= kept && (strncasecmp(line, "Content-Length",
	    kept) == 0 || strncasecmp(line, "Transfer-Encoding", kept) == 0))
		http_frame_refuse(hc, 400, "a framing header cut short");
}

/*
 * Refused framing, once the headers are in: a request evhttp still
 * reads (waiting for a body) is ended here with the status; one it
 * already handed over is answered by http_request().
 */
void
http_conn_frame(evutil_socket_t fd, short ev, void *arg)
{
	struct hconn	*hc = arg;

	if (hc->hc_frame_status == 0 || hc->hc_state != HC_READING ||
	    http_conn_attach(hc) == -1)
		return;
	log_debug("http: %d: %s", hc->hc_frame_status, hc->hc_frame_msg);
	hc->hc_abort = hc->hc_frame_status;
	bufferevent_trigger_event(hc->hc_bev, BEV_EVENT_READING, 0);
}

/*
 * Where the request's header section ends: at an empty line, ended by
 * LF or CRLF as evhttp reads lines.  Only to tell a header flood from
 * another malformed request; it stops once past the limit.
 */
void
http_conn_scan(struct hconn *hc, struct evbuffer *buf, size_t from)
{
	struct evbuffer_ptr	 pos;
	char			 chunk[512];
	ev_ssize_t		 n, i;
	size_t			 limit = http_conf()->c_http_headers_max;

	if (from >= evbuffer_get_length(buf) ||
	    evbuffer_ptr_set(buf, &pos, from, EVBUFFER_PTR_SET) == -1)
		return;
	while (!hc->hc_hdr_done && hc->hc_hdr_bytes <= limit &&
	    (n = evbuffer_copyout_from(buf, &pos, chunk,
	    sizeof(chunk))) > 0) {
		for (i = 0; i < n && !hc->hc_hdr_done; i++) {
			hc->hc_hdr_bytes++;
			if (chunk[i] == '\n') {
				http_frame_line(hc);
				if (hc->hc_eol && hc->hc_lineno > 0) {
					hc->hc_hdr_done = 1;
					hc->hc_hdr_end = from + i + 1;
				}
				hc->hc_eol = 1;
			} else {
				if (chunk[i] != '\r')
					hc->hc_eol = 0;
				/* A CR inside a line is part of it, as for evhttp. */
				if (hc->hc_linelen < sizeof(hc->hc_line) - 1)
					hc->hc_line[hc->hc_linelen] = chunk[i];
				hc->hc_linelen++;
			}
		}
		/* The head's bytes kept, those of blank lines before it aside. */
		if (hc->hc_lineno > 0 || hc->hc_linelen > 0) {
			if (evbuffer_add(hc->hc_head, chunk, i) == -1)
				fatalx("%s: evbuffer_add", __func__);
		}
		from += i;
		if (evbuffer_ptr_set(buf, &pos, n, EVBUFFER_PTR_ADD) == -1)
			break;
	}
}

/* A request begins: its deadline starts with its first byte. */
void
http_conn_reading(struct hconn *hc, size_t pending)
{
	struct timeval	 tv = { http_conf()->c_http_timeout, 0 };

	hc->hc_state = HC_READING;
	hc->hc_bytes = pending;
	hc->hc_hdr_bytes = 0;
	hc->hc_hdr_done = 0;
	hc->hc_eol = 0;
	hc->hc_linelen = 0;
	hc->hc_lineno = 0;
	hc->hc_cl_count = 0;
	hc->hc_te_count = 0;
	hc->hc_cl_set = 0;
	hc->hc_cl = 0;
	hc->hc_put_file = 0;
	hc->hc_big = 0;
	hc->hc_put_key[0] = '\0';
	hc->hc_host_count = hc->hc_origin_count = hc->hc_token_count = 0;
	hc->hc_bearer_count = 0;
	hc->hc_host[0] = hc->hc_origin[0] = '\0';
	explicit_bzero(hc->hc_token, sizeof(hc->hc_token));
	explicit_bzero(hc->hc_bearer, sizeof(hc->hc_bearer));
	hc->hc_frame_status = 0;
	hc->hc_frame_msg[0] = '\0';
	hc->hc_hdr_end = 0;
	hc->hc_no_take = 0;
	evbuffer_drain(hc->hc_head, evbuffer_get_length(hc->hc_head));
	event_del(&hc->hc_frame_ev);
	evtimer_add(&hc->hc_timer, &tv);
}

void
http_conn_input(struct evbuffer *buf, const struct evbuffer_cb_info *info,
    void *arg)
{
	struct hconn	*hc = arg;
	size_t		 len;

	if (info->n_added == 0)
		return;
	switch (hc->hc_state) {
	case HC_NEW:
		if (http_conn_attach(hc) == -1)
			return;
		/* FALLTHROUGH */
	case HC_IDLE:
		http_conn_reading(hc, 0);
		break;
	case HC_READING:
		break;
	default:
		return;
	}
	len = evbuffer_get_length(buf);
	hc->hc_bytes += info->n_added;
	if (!hc->hc_hdr_done) {
		http_conn_scan(hc, buf, len - info->n_added);
		if (hc->hc_hdr_done)
			http_takeover_try(hc, buf);
	}
}

