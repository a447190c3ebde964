/*
 * Connections that leave evhttp once their request's head is whole
 * (http_takeover.h).  The head's bytes are kept as they arrive
 * (http_conn_scan()); when the read that ends the head comes, before
 * evhttp's read callback sees a byte of it, the rows of
 * http_take_rows[] are asked in order.  The one that claims the head
 * gets the connection: evhttp's callbacks on its bufferevent are
 * removed and the bufferevent disabled (so nothing of evhttp reads or
 * writes it again; evhttp may have read lines of the head already and
 * waits for the rest for ever), the socket is dup'd for the handler,
 * the bytes after the head move to the handler's buffer, and evhttp's
 * connection is freed only when the handler ends it, so the
 * connection counts (in all, and for its user once claimed) until it
 * is closed.
 *
 * A request pipelined behind one evhttp answered is whole in the input
 * before we could take it from evhttp's deferred read: it stays
 * evhttp's and is refused (http_takeover_pipelined()).
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/tree.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/event_struct.h>
#include <event2/http.h>
#include <jansson.h>

#include "fenced.h"
#include "imsg.h"
#include "log.h"
#include "msg.h"
#include "proc.h"
#include "broker.h"
#include "http.h"
#include "http_conn.h"
#include "http_takeover.h"
#include "http_channel.h"

const struct http_take_row http_take_rows[] = {
	{ "channel", chan_match, chan_take },
	{ "terminal attachment", chan_attach_match, chan_attach_take },
	{ "port relay, path form", relay_match_path, relay_take },
	{ "port relay, host form", relay_match_host, relay_take },
	{ NULL, NULL, NULL }
};

const struct http_take_row *
http_take_match(const struct http_head *h)
{
	const struct http_take_row *r;

	for (r = http_take_rows; r->tr_name != NULL; r++)
		if (r->tr_match(h))
			return (r);
	return (NULL);
}

/* The head kept so far, parsed: the row that claims it, or NULL. */
static const struct http_take_row *
takeover_parse(struct hconn *hc, struct http_head *h, char **rawp)
{
	const struct http_take_row *row;
	size_t		 len = evbuffer_get_length(hc->hc_head);
	ssize_t		 end;
	char		*raw;

	*rawp = NULL;
	if (len == 0 || (raw = (char *)evbuffer_pullup(hc->hc_head,
	    len)) == NULL)
		return (NULL);
	if ((end = http_head_end(raw, len, len + 1)) <= 0)
		return (NULL);
	/* The body's size is the relay's to bound, not evhttp's. */
	if (http_head_parse(h, raw, end, UINT64_MAX) == -1)
		return (NULL);
	if ((row = http_take_match(h)) == NULL)
		return (NULL);
	if ((*rawp = malloc(end + 1)) == NULL) {
		log_warn("%s: malloc", __func__);
		return (NULL);
	}
	memcpy(*rawp, raw, end);
	(*rawp)[end] = '\0';
	return (row);
}

static void
takeover_run(evutil_socket_t fd, short ev, void *arg)
{
	struct hconn	*hc = arg;

	if (hc->hc_taken != NULL && hc->hc_take_row != NULL)
		hc->hc_take_row->tr_fn(hc->hc_taken);
}

/*
 * The read that ended a head (in buf, hc_hdr_end bytes in) came: take
 * the connection if a row claims the head.  Framing refused by
 * http_frame_line() stays evhttp's to answer, but for a body larger
 * than `http body max', which is the relay's to pass on.
 */
void
http_takeover_try(struct hconn *hc, struct evbuffer *buf)
{
	const struct http_take_row *row;
	struct http_taken *ht;
	struct http_head *h;
	char		*raw;
	int		 fd, nfd;

	if (hc->hc_state != HC_READING || hc->hc_over || hc->hc_no_take ||
	    hc->hc_evcon == NULL || (hc->hc_frame_status != 0 &&
	    !(hc->hc_frame_status == 413 && hc->hc_cl_set == 0 &&
	    hc->hc_cl_count == 1 && hc->hc_te_count == 0)))
		return;
	if ((h = malloc(sizeof(*h))) == NULL) {
		log_warn("%s: malloc", __func__);
		return;
	}
	if ((row = takeover_parse(hc, h, &raw)) == NULL) {
		free(h);
		return;
	}
	/* A Content-Length refused for the API only. */
	if (hc->hc_frame_status == 413 && !h->h_cl_set) {
		free(raw);
		free(h);
		return;
	}
	if ((fd = bufferevent_getfd(hc->hc_bev)) == -1 ||
	    (nfd = fcntl(fd, F_DUPFD_CLOEXEC, 0)) == -1 ||
	    (ht = calloc(1, sizeof(*ht))) == NULL ||
	    (ht->ht_in = evbuffer_new()) == NULL) {
		log_warn("%s: %s", __func__, row->tr_name);
		/* evhttp goes on; the route answers. */
		if (fd != -1 && nfd != -1)
			close(nfd);
		free(raw);
		free(h);
		return;
	}
	ht->ht_fd = nfd;
	ht->ht_head = h;
	ht->ht_raw = raw;
	ht->ht_conn = hc;
	/* evhttp hears nothing more of this connection. */
	bufferevent_setcb(hc->hc_bev, NULL, NULL, NULL, NULL);
	bufferevent_disable(hc->hc_bev, EV_READ | EV_WRITE);
	bufferevent_set_timeouts(hc->hc_bev, NULL, NULL);
	if (evbuffer_drain(buf, hc->hc_hdr_end) == -1 ||
	    evbuffer_add_buffer(ht->ht_in, buf) == -1)
		fatalx("%s: evbuffer", __func__);
	evbuffer_drain(hc->hc_head, evbuffer_get_length(hc->hc_head));
	hc->hc_state = HC_TAKEN;
	hc->hc_taken = ht;
	hc->hc_take_row = row;
	evtimer_del(&hc->hc_timer);
	event_del(&hc->hc_frame_ev);
	http_conn_unwatch(hc);
	log_debug("http: connection taken: %s", row->tr_name);
	/* The handler runs outside the bufferevent's read. */
	event_assign(&hc->hc_take_ev, broker_self.ps_evbase, -1, 0,
	    takeover_run, hc);
	event_active(&hc->hc_take_ev, EV_TIMEOUT, 1);
}

/*
 * A request whose head was whole in the input when evhttp answered the
 * one before: evhttp reads it.  1 if a row would have taken it (the
 * route refuses it: http_request()).
 */
int
http_takeover_pipelined(struct hconn *hc)
{
	struct http_head *h;
	char		*raw;
	int		 r;

	if (!hc->hc_hdr_done || (h = malloc(sizeof(*h))) == NULL)
		return (0);
	r = takeover_parse(hc, h, &raw) != NULL;
	free(raw);
	free(h);
	if (r)
		hc->hc_no_take = 1;
	return (r);
}

int
http_taken_claim(struct http_taken *ht, uid_t uid)
{
	if (ht->ht_conn == NULL)
		return (-1);
	return (http_conn_claim(ht->ht_conn, uid));
}

static void
taken_free(struct http_taken *ht)
{
	if (ht->ht_fd != -1)
		close(ht->ht_fd);
	if (ht->ht_in != NULL)
		evbuffer_free(ht->ht_in);
	free(ht->ht_raw);
	free(ht->ht_head);
	free(ht);
}

void
http_taken_end(struct http_taken *ht)
{
	struct hconn	*hc = ht->ht_conn;

	if (hc != NULL) {
		hc->hc_taken = NULL;
		event_del(&hc->hc_take_ev);
		/* Frees hc (http_conn_closed()); the socket is closed. */
		evhttp_connection_free(hc->hc_evcon);
	}
	taken_free(ht);
}

/* evhttp lets go of a taken connection first: the daemon stops. */
void
http_takeover_release(struct hconn *hc)
{
	struct http_taken *ht;

	if (event_initialized(&hc->hc_take_ev))
		event_del(&hc->hc_take_ev);
	if ((ht = hc->hc_taken) == NULL)
		return;
	hc->hc_taken = NULL;
	ht->ht_conn = NULL;
	if (ht->ht_dropped != NULL)
		ht->ht_dropped(ht->ht_arg);
	else
		taken_free(ht);
}

void
http_taken_error(struct evbuffer *out, int status, const char *code,
    const char *msg)
{
	json_t	*body;

	body = http_api_message(code, msg);
	http_raw_json(out, status, body);
	json_decref(body);
}
