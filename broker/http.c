/*
 * The HTTP API's server: libevent's evhttp on the loopback socket the
 * parent opened, and around it what evhttp 2.1 does not do itself
 * (docs/http.md):
 *
 * - a deadline per request: evhttp only times out a connection that
 *   sends nothing at all, so one byte a second would hold it for ever.
 *   From the first byte of a request, the whole of it must arrive within
 *   `http timeout' or the client gets 408 and the connection is closed;
 *   a keep-alive connection idle that long is closed quietly.
 * - every error as JSON: evhttp answers malformed requests, bodies over
 *   the limit and header floods with pages of its own; those are
 *   replaced, before a byte of them is sent, by {"error", "message"}.
 * - who asks: the host token, and limits per user on connections.
 *   A connection that has shown no token is anonymous; anonymous ones
 *   have a share of their own (1 / HTTP_ANON_SHARE of `http
 *   connections max'), the oldest one not being answered gives way to
 *   a new one, and a 401 closes its connection: token-less clients
 *   cannot hold the slots of users who have one.
 * - framing: what evhttp would read ambiguously is refused before it
 *   reads a body (http_frame_line()): a second Content-Length, any
 *   Transfer-Encoding but `chunked' alone, both together, a folded
 *   header; a Content-Length over `http body max' is 413 at once.
 * - a body larger than `http body max' (a file, up to `files max') only
 *   for a PUT of a file already known, from its headers, to be
 *   authorised: the Host and Origin taken, a valid token, the token's
 *   owner's running fence (http_put_authorise()).  Nobody else makes
 *   the broker hold more than `http body max' per connection.
 *
 * Each connection is followed from the bufferevent evhttp asks us for
 * (evhttp_set_bevcb), holding a reference of our own to it, so that a
 * connection evhttp drops before we have seen it is still found and
 * let go safely.
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

#define HTTP_ACCEPT_PAUSE_SEC	1	/* out of descriptors: wait */
#define HTTP_ANON_SHARE		2	/* anonymous: max / 2 at most */
#define HTTP_ANON_MIN		4	/* but this many if max allows */
#define HTTP_METHODS		(EVHTTP_REQ_GET | EVHTTP_REQ_POST |	\
				 EVHTTP_REQ_HEAD | EVHTTP_REQ_PUT |	\
				 EVHTTP_REQ_DELETE | EVHTTP_REQ_OPTIONS | \
				 EVHTTP_REQ_TRACE | EVHTTP_REQ_CONNECT | \
				 EVHTTP_REQ_PATCH)


RB_HEAD(hconn_tree, hconn);

static int	hconn_cmp(struct hconn *, struct hconn *);
RB_PROTOTYPE(hconn_tree, hconn, hc_node, hconn_cmp);

static struct evhttp	*http;
static struct evconnlistener *http_lev;
static struct event	 http_ev_pause;
static int		 http_fd = -1;
static struct hconn_tree hconns = RB_INITIALIZER(&hconns);
static unsigned int	 http_nconns;
static TAILQ_HEAD(, hconn) http_anon = TAILQ_HEAD_INITIALIZER(http_anon);
static unsigned int	 http_nanon;
static unsigned int	 http_nevicting;	/* closing for newer ones */

static struct bufferevent *http_bev_new(struct event_base *, void *);
static void	http_request(struct evhttp_request *, void *);
static void	http_request_done(struct evhttp_request *, void *);
static void	http_accept_error(struct evconnlistener *, void *);
static void	http_accept_resume(evutil_socket_t, short, void *);
static void	http_conn_release(struct hconn *);
static void	http_conn_closed(struct evhttp_connection *, void *);
static void	http_conn_output(struct evbuffer *,
		    const struct evbuffer_cb_info *, void *);
static void	http_conn_fix(evutil_socket_t, short, void *);
static void	http_conn_gone(evutil_socket_t, short, void *);
static void	http_anon_leave(struct hconn *);

static int
hconn_cmp(struct hconn *a, struct hconn *b)
{
	uintptr_t	 x = (uintptr_t)a->hc_bev, y = (uintptr_t)b->hc_bev;

	return (x < y ? -1 : x > y);
}

RB_GENERATE(hconn_tree, hconn, hc_node, hconn_cmp);

const struct fenced_config *
http_conf(void)
{
	return (&broker_self.ps_conf);
}

/* The listening socket arrives before IMSG_START; served from then on. */
void
http_listen(int fd)
{
	if (http_fd != -1)
		fatalx("%s: second HTTP socket", __func__);
	http_fd = fd;
}

void
http_start(void)
{
	struct evhttp_bound_socket *bound;

	if (http_fd == -1)
		fatalx("%s: no HTTP socket from the parent", __func__);
	if ((http = evhttp_new(broker_self.ps_evbase)) == NULL)
		fatalx("%s: evhttp_new", __func__);
	evhttp_set_gencb(http, http_request, NULL);
	evhttp_set_bevcb(http, http_bev_new, NULL);
	http_configure();
	/* Backlog 0 inside: evhttp takes the socket as already listening. */
	if ((bound = evhttp_accept_socket_with_handle(http, http_fd)) == NULL)
		fatalx("%s: evhttp_accept_socket", __func__);
	http_lev = evhttp_bound_socket_get_listener(bound);
	evconnlistener_set_error_cb(http_lev, http_accept_error);
	evtimer_assign(&http_ev_pause, broker_self.ps_evbase,
	    http_accept_resume, NULL);
}

/*
 * At start and on every reload.  evhttp applies its limits to
 * connections accepted from then on; the deadlines and the per-user
 * limits, which are ours, apply at once.  evhttp's own timeout (idle
 * reads, stalled writes) is twice ours, so ours always comes first.
 */
void
http_configure(void)
{
	const struct fenced_config *c = http_conf();

	if (http == NULL)
		return;
	/* A PUT's may be larger: http_frame_line() sets it per request. */
	evhttp_set_max_body_size(http, c->c_http_body_max);
	evhttp_set_max_headers_size(http, c->c_http_headers_max);
	evhttp_set_timeout(http, 2 * c->c_http_timeout);
	evhttp_set_allowed_methods(http, HTTP_METHODS);
	/* Read a body over the limit to its end, so the 413 is read too. */
	evhttp_set_flags(http, EVHTTP_SERVER_LINGERING_CLOSE);
	evhttp_set_default_content_type(http, "application/json");
}

void
http_shutdown(void)
{
	if (http != NULL) {
		evhttp_free(http);	/* every connection: http_conn_closed */
		http = NULL;
	}
	if (event_initialized(&http_ev_pause))
		evtimer_del(&http_ev_pause);
}

/* Out of descriptors: stop accepting for a moment rather than spin. */
static void
http_accept_error(struct evconnlistener *lev, void *arg)
{
	struct timeval	 tv = { HTTP_ACCEPT_PAUSE_SEC, 0 };
	int		 e = EVUTIL_SOCKET_ERROR();

	if (e == EMFILE || e == ENFILE || e == ENOBUFS || e == ENOMEM) {
		log_warnx("http: accept: %s, pausing", strerror(e));
		evconnlistener_disable(lev);
		evtimer_add(&http_ev_pause, &tv);
	} else
		log_warnx("http: accept: %s", strerror(e));
}

static void
http_accept_resume(evutil_socket_t fd, short ev, void *arg)
{
	if (http_lev != NULL)
		evconnlistener_enable(http_lev);
}

static unsigned int
http_anon_max(void)
{
	unsigned int	 max = http_conf()->c_http_conns_max;
	unsigned int	 n = max / HTTP_ANON_SHARE;

	if (n < HTTP_ANON_MIN)
		n = HTTP_ANON_MIN;
	return (n < max ? n : max);
}

/*
 * Room for one more anonymous connection: at the limit, the oldest one
 * that is not being answered (still quiet, or still sending a request)
 * is closed for it.  -1 when every one of them is being answered.
 */
static int
http_anon_make_room(void)
{
	struct hconn	*hc;
	unsigned int	 n = 0;

	TAILQ_FOREACH(hc, &http_anon, hc_anon_entry)
		if (!hc->hc_evict)
			n++;
	if (n < http_anon_max())
		return (0);
	TAILQ_FOREACH(hc, &http_anon, hc_anon_entry) {
		if (hc->hc_evict || (hc->hc_state != HC_NEW &&
		    hc->hc_state != HC_IDLE && hc->hc_state != HC_READING))
			continue;
		hc->hc_evict = 1;
		http_nevicting++;
		/* Closed from its timer, outside evhttp's accept. */
		event_active(&hc->hc_timer, EV_TIMEOUT, 1);
		return (0);
	}
	return (-1);
}

static void
http_anon_leave(struct hconn *hc)
{
	if (!hc->hc_anon)
		return;
	TAILQ_REMOVE(&http_anon, hc, hc_anon_entry);
	http_nanon--;
	hc->hc_anon = 0;
}

/*
 * evhttp asks for the bufferevent of each connection it accepts: make
 * it, keep a reference, and watch the bytes going in and out of it.
 */
static struct bufferevent *
http_bev_new(struct event_base *base, void *arg)
{
	struct timeval	 now = { 0, 0 };
	struct hconn	*hc;

	if ((hc = calloc(1, sizeof(*hc))) == NULL) {
		log_warn("%s: calloc", __func__);
		return (NULL);		/* evhttp makes one of its own */
	}
	if ((hc->hc_bev = bufferevent_socket_new(base, -1,
	    BEV_OPT_CLOSE_ON_FREE)) == NULL) {
		log_warnx("%s: bufferevent_socket_new", __func__);
		free(hc);
		return (NULL);
	}
	bufferevent_incref(hc->hc_bev);
	if ((hc->hc_head = evbuffer_new()) == NULL)
		fatalx("%s: evbuffer_new", __func__);
	if (evbuffer_add_cb(bufferevent_get_input(hc->hc_bev),
	    http_conn_input, hc) == NULL ||
	    evbuffer_add_cb(bufferevent_get_output(hc->hc_bev),
	    http_conn_output, hc) == NULL)
		fatalx("%s: evbuffer_add_cb", __func__);
	evtimer_assign(&hc->hc_timer, base, http_conn_timer, hc);
	event_assign(&hc->hc_fix, base, -1, 0, http_conn_fix, hc);
	event_assign(&hc->hc_frame_ev, base, -1, 0, http_conn_frame, hc);
	hc->hc_state = HC_NEW;
	/* Those giving way are as good as gone. */
	if (http_anon_make_room() == -1 || http_nconns - http_nevicting >=
	    http_conf()->c_http_conns_max)
		hc->hc_over = 1;
	http_nconns++;
	RB_INSERT(hconn_tree, &hconns, hc);
	hc->hc_anon = 1;
	TAILQ_INSERT_TAIL(&http_anon, hc, hc_anon_entry);
	http_nanon++;
	/* Looked at once evhttp has set it up, after this callback. */
	evtimer_add(&hc->hc_timer, &now);
	return (hc->hc_bev);
}

/*
 * Find the evhttp connection behind our bufferevent: evhttp's callbacks
 * on it carry it.  A bufferevent evhttp has freed has none left; then
 * only our reference holds it, and it is let go.  Returns 0, or -1 when
 * the connection is gone (hc freed).
 */
int
http_conn_attach(struct hconn *hc)
{
	bufferevent_data_cb	 rcb, wcb;
	bufferevent_event_cb	 ecb;
	void			*cbarg;

	if (hc->hc_evcon != NULL)
		return (0);
	bufferevent_getcb(hc->hc_bev, &rcb, &wcb, &ecb, &cbarg);
	if (rcb == NULL || ecb == NULL || cbarg == NULL) {
		http_conn_release(hc);
		return (-1);
	}
	hc->hc_evcon = cbarg;
	evhttp_connection_set_closecb(hc->hc_evcon, http_conn_closed, hc);
	return (0);
}

static unsigned int
http_user_conns(uid_t uid)
{
	struct hconn	*hc;
	unsigned int	 n = 0;

	RB_FOREACH(hc, hconn_tree, &hconns)
		if (hc->hc_has_uid && hc->hc_uid == uid)
			n++;
	return (n);
}

/*
 * hc is uid's from now on, if uid may have one more connection (or it
 * is uid's already): 0, else -1 and nothing changed.
 */
int
http_conn_claim(struct hconn *hc, uid_t uid)
{
	if (hc->hc_has_uid && hc->hc_uid == uid)
		return (0);
	if (http_user_conns(uid) >= http_conf()->c_http_conns_user)
		return (-1);
	hc->hc_has_uid = 1;
	hc->hc_uid = uid;
	http_anon_leave(hc);
	return (0);
}

void
http_conn_unwatch(struct hconn *hc)
{
	if (hc->hc_gone_set) {
		event_del(&hc->hc_gone);
		hc->hc_gone_set = 0;
	}
}

/*
 * Forget a connection: its request, if one is being worked on, is
 * orphaned (its answer will go nowhere), and our reference dropped.
 */
static void
http_conn_release(struct hconn *hc)
{
	struct hreq	*hr;

	http_takeover_release(hc);
	RB_REMOVE(hconn_tree, &hconns, hc);
	http_nconns--;
	if (hc->hc_evict)
		http_nevicting--;
	http_anon_leave(hc);
	evtimer_del(&hc->hc_timer);
	event_del(&hc->hc_fix);
	event_del(&hc->hc_frame_ev);
	http_conn_unwatch(hc);
	if ((hr = hc->hc_req) != NULL) {
		hc->hc_req = NULL;
		inflight_orphan(hr);
		if (hr->hr_list != NULL)
			evbuffer_free(hr->hr_list);
		json_decref(hr->hr_snaps);
		free(hr);
	}
	if (hc->hc_evcon != NULL)
		evhttp_connection_set_closecb(hc->hc_evcon, NULL, NULL);
	evbuffer_remove_cb(bufferevent_get_input(hc->hc_bev),
	    http_conn_input, hc);
	evbuffer_remove_cb(bufferevent_get_output(hc->hc_bev),
	    http_conn_output, hc);
	bufferevent_decref(hc->hc_bev);
	explicit_bzero(hc->hc_token, sizeof(hc->hc_token));
	explicit_bzero(hc->hc_bearer, sizeof(hc->hc_bearer));
	evbuffer_free(hc->hc_head);
	free(hc);
}

/* evhttp frees the connection (closecb): let go of ours. */
static void
http_conn_closed(struct evhttp_connection *evcon, void *arg)
{
	http_conn_release(arg);
}

void
http_conn_idle(struct hconn *hc)
{
	struct timeval	 tv = { http_conf()->c_http_timeout, 0 };

	hc->hc_state = HC_IDLE;
	evtimer_add(&hc->hc_timer, &tv);
}

/*
 * The status of the answer an output buffer begins with, 0 if it does
 * not begin with one.  Its first bytes are read with evbuffer_peek():
 * evbuffer_copyout() refuses (-1) while the buffer's start is frozen,
 * as a socket bufferevent keeps its output between writes.  evhttp
 * writes the request's version as it parsed it (HTTP/1.12, HTTP/1.-92),
 * so the status is what follows the first space.
 */
static int
http_out_status(struct evbuffer *buf)
{
	struct evbuffer_iovec	 v[4];
	char			 head[24], *sp;
	size_t			 got = 0, k;
	int			 i, n;

	n = evbuffer_peek(buf, sizeof(head) - 1, NULL, v, 4);
	for (i = 0; i < n && i < 4 && got < sizeof(head) - 1; i++) {
		k = v[i].iov_len < sizeof(head) - 1 - got ? v[i].iov_len :
		    sizeof(head) - 1 - got;
		memcpy(head + got, v[i].iov_base, k);
		got += k;
	}
	head[got] = '\0';
	if (strncmp(head, "HTTP/", 5) != 0 || (sp = strchr(head, ' ')) == NULL ||
	    strspn(sp + 1, "0123456789") != 3)
		return (0);
	return (atoi(sp + 1));
}

/*
 * Bytes going out while we have no request: evhttp answering one it
 * could not read (a status of 400 and up; 100 Continue is left alone).
 * Its page is replaced before the connection writes a byte of it.
 */
static void
http_conn_output(struct evbuffer *buf, const struct evbuffer_cb_info *info,
    void *arg)
{
	struct hconn	*hc = arg;

	if (info->n_added == 0 || info->orig_size != 0 ||
	    (hc->hc_state != HC_READING && hc->hc_state != HC_IDLE &&
	    hc->hc_state != HC_NEW))
		return;
	if (http_out_status(buf) < 400)
		return;
	hc->hc_state = HC_CLOSING;
	evtimer_del(&hc->hc_timer);
	event_active(&hc->hc_fix, EV_TIMEOUT, 1);
}

void
http_raw_json(struct evbuffer *out, int status, json_t *body)
{
	char	*text;

	if ((text = json_dumps(body, JSON_COMPACT)) == NULL)
		fatalx("%s: json_dumps", __func__);
	evbuffer_add_printf(out, "HTTP/1.1 %d %s\r\n"
	    "Content-Type: application/json\r\n"
	    "Content-Length: %zu\r\n"
	    "Cache-Control: no-store\r\n"
	    "Connection: close\r\n\r\n%s\n", status, http_reason(status),
	    strlen(text) + 1, text);
	free(text);
}

/* evhttp's error page out, ours in; the connection closes after it. */
static void
http_conn_fix(evutil_socket_t fd, short ev, void *arg)
{
	struct hconn	*hc = arg;
	const struct fenced_config *c = http_conf();
	struct evbuffer	*out = bufferevent_get_output(hc->hc_bev);
	char		 msg[160];
	const char	*code;
	json_t		*body;
	int		 status;

	if ((status = http_out_status(out)) == 0)
		status = 400;
	if (hc->hc_abort != 0)
		status = hc->hc_abort;
	if (hc->hc_frame_status != 0 && status == hc->hc_frame_status) {
		code = status == 413 ? "body-too-large" : "bad-request";
		strlcpy(msg, hc->hc_frame_msg, sizeof(msg));
		goto out;
	}
	switch (status) {
	case 408:
		code = "request-timeout";
		snprintf(msg, sizeof(msg), "the request did not arrive whole "
		    "within %u seconds", c->c_http_timeout);
		break;
	case 413:
		code = "body-too-large";
		snprintf(msg, sizeof(msg), "the body is larger than %u bytes",
		    http_body_limit(hc));
		break;
	case 417:
		code = "expectation-failed";
		snprintf(msg, sizeof(msg), "only \"Expect: 100-continue\" is "
		    "understood");
		break;
	case 501:
		code = "method-not-implemented";
		snprintf(msg, sizeof(msg), "unknown method");
		break;
	default:
		if (hc->hc_hdr_bytes > c->c_http_headers_max) {
			status = 431;
			code = "headers-too-large";
			snprintf(msg, sizeof(msg), "the request line and "
			    "headers are longer than %u bytes",
			    c->c_http_headers_max);
		} else {
			status = 400;
			code = "bad-request";
			snprintf(msg, sizeof(msg), "not an HTTP/1.x request "
			    "this server can read");
		}
		break;
	}
 out:
	log_debug("http: %d %s", status, code);
	evbuffer_unfreeze(out, 1);
	evbuffer_drain(out, evbuffer_get_length(out));
	evbuffer_freeze(out, 1);
	body = http_api_message(code, msg);
	http_raw_json(out, status, body);
	json_decref(body);
}

/*
 * The deadline of a request (408, then close) or of an idle keep-alive
 * connection (close).  Both go through evhttp's own failure path, so it
 * frees the connection itself once the answer is out.
 */
void
http_conn_timer(evutil_socket_t fd, short ev, void *arg)
{
	struct hconn	*hc = arg;

	if (hc->hc_evict && (hc->hc_state == HC_NEW ||
	    hc->hc_state == HC_IDLE || hc->hc_state == HC_READING)) {
		if (http_conn_attach(hc) == -1)
			return;
		log_debug("http: anonymous connection closed for a newer one");
		/* hc may be freed by this. */
		bufferevent_trigger_event(hc->hc_bev,
		    BEV_EVENT_READING | BEV_EVENT_EOF, 0);
		return;
	}
	switch (hc->hc_state) {
	case HC_NEW:
		if (http_conn_attach(hc) == 0)
			http_conn_idle(hc);
		return;
	case HC_IDLE:
		if (http_conn_attach(hc) == -1)
			return;
		log_debug("http: idle connection closed");
		/* hc may be freed by this. */
		bufferevent_trigger_event(hc->hc_bev,
		    BEV_EVENT_READING | BEV_EVENT_EOF, 0);
		return;
	case HC_READING:
		if (http_conn_attach(hc) == -1)
			return;
		log_debug("http: request not whole in %u s, 408",
		    http_conf()->c_http_timeout);
		hc->hc_abort = 408;
		/* A read error: evhttp answers, we make it a 408. */
		bufferevent_trigger_event(hc->hc_bev, BEV_EVENT_READING, 0);
		return;
	default:
		return;
	}
}

/*
 * The client closed its end while its request was being worked on:
 * nobody will read the answer.  Drop the connection; the request's
 * answer is orphaned (http_conn_release).
 */
static void
http_conn_gone(evutil_socket_t fd, short ev, void *arg)
{
	struct hconn	*hc = arg;

	hc->hc_gone_set = 0;
	log_debug("http: client left before its answer");
	evhttp_connection_free(hc->hc_evcon);
}

static void
http_conn_watch(struct hconn *hc)
{
	evutil_socket_t	 fd = bufferevent_getfd(hc->hc_bev);

	if (fd == -1 || hc->hc_gone_set)
		return;
	event_assign(&hc->hc_gone, broker_self.ps_evbase, fd, EV_CLOSED,
	    http_conn_gone, hc);
	if (event_add(&hc->hc_gone, NULL) == 0)
		hc->hc_gone_set = 1;
}

/* The answer went out: the connection may carry the next request. */
static void
http_request_done(struct evhttp_request *req, void *arg)
{
	struct hconn	*hc = arg;
	struct evbuffer	*in = bufferevent_get_input(hc->hc_bev);
	size_t		 pending;

	if (hc->hc_state != HC_BUSY)
		return;
	if ((pending = evbuffer_get_length(in)) > 0) {
		/* Pipelined: the next request has begun already. */
		http_conn_reading(hc, pending);
		http_conn_scan(hc, in, 0);
		http_takeover_pipelined(hc);
	} else
		http_conn_idle(hc);
}


/*
 * A connection counts as its user's from its first request with a
 * token; a user's next connection over the limit is refused with 429
 * and closed.
 */
static int
http_conn_owner(struct hreq *hr, struct hconn *hc, uid_t uid)
{
	if (http_conn_claim(hc, uid) == -1) {
		http_header(hr, "Connection", "close");
		http_header(hr, "Retry-After", "1");
		http_error(hr, 429, "too-many-connections", "at most %u "
		    "connections per user", http_conf()->c_http_conns_user);
		return (-1);
	}
	return (0);
}

/* evhttp read a whole request: it is ours now. */
static void
http_request(struct evhttp_request *req, void *arg)
{
	struct evhttp_connection *evcon = evhttp_request_get_connection(req);
	struct hconn	 key, *hc;
	struct hreq	*hr;
	uid_t		 uid;

	/*
	 * Not one of ours only if http_bev_new() could not allocate and
	 * evhttp made the bufferevent itself: refuse, and say so.
	 */
	key.hc_bev = evhttp_connection_get_bufferevent(evcon);
	if ((hc = RB_FIND(hconn_tree, &hconns, &key)) == NULL ||
	    http_conn_attach(hc) == -1) {
		log_warnx("%s: a connection not followed; refused", __func__);
		evhttp_send_error(req, 503, NULL);	/* and closed */
		return;
	}
	evtimer_del(&hc->hc_timer);
	hc->hc_state = HC_BUSY;
	evhttp_request_set_on_complete_cb(req, http_request_done, hc);

	if ((hr = calloc(1, sizeof(*hr))) == NULL) {
		log_warn("%s: calloc", __func__);
		evhttp_send_error(req, 503, NULL);
		return;
	}
	hr->hr_req = req;
	hr->hr_conn = hc;
	hc->hc_req = hr;

	if (hc->hc_frame_status != 0) {
		http_header(hr, "Connection", "close");
		http_error(hr, hc->hc_frame_status, hc->hc_frame_status ==
		    413 ? "body-too-large" : "bad-request", "%s",
		    hc->hc_frame_msg);
		return;
	}
	if (hc->hc_no_take) {
		http_header(hr, "Connection", "close");
		http_error(hr, 400, "bad-request", "a request to a port or a "
		    "WebSocket pipelined behind another: send it when the "
		    "answer before it is in, or on a connection of its own");
		return;
	}
	if (hc->hc_over) {
		http_header(hr, "Connection", "close");
		http_header(hr, "Retry-After", "1");
		http_error(hr, 503, "too-many-connections", "at most %u "
		    "connections", http_conf()->c_http_conns_max);
		return;
	}
	/* The browser's rules first: no token is looked at before. */
	if (http_host_check(hr) == -1 || http_origin_check(hr) != 0 ||
	    http_page(hr))
		return;
	if (http_auth(hr, &uid) == -1 || http_conn_owner(hr, hc, uid) == -1)
		return;
	/*
	 * A chunked body passes the framing check: its length is here.
	 * Larger than `http body max' only for a PUT of a file
	 * authorised from its headers (whose path routes it to the files).
	 */
	if (evbuffer_get_length(evhttp_request_get_input_buffer(req)) >
	    http_conf()->c_http_body_max && !hc->hc_big) {
		http_header(hr, "Connection", "close");
		http_error(hr, 413, "body-too-large", "the body is larger than "
		    "%u bytes", http_conf()->c_http_body_max);
		return;
	}
	hr->hr_uid = uid;
	http_api_request(hr);
	/*
	 * Answered at once (a list, a state, a refusal: hc_req is NULL
	 * again) or waiting for the fence service: only a request still
	 * waiting needs to notice its client leave.
	 */
	if (hc->hc_req != NULL)
		http_conn_watch(hc);
}
