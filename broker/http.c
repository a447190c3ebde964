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

#define HTTP_ACCEPT_PAUSE_SEC	1	/* out of descriptors: wait */
#define HTTP_ANON_SHARE		2	/* anonymous: max / 2 at most */
#define HTTP_ANON_MIN		4	/* but this many if max allows */
#define HTTP_FRAME_LINE		256	/* of a header line, looked at */
#define HTTP_FRAME_NUMBER	64	/* a Content-Length line, at most */
#define HTTP_PUT_FILES		"PUT /api/environments/"
#define HTTP_METHODS		(EVHTTP_REQ_GET | EVHTTP_REQ_POST |	\
				 EVHTTP_REQ_HEAD | EVHTTP_REQ_PUT |	\
				 EVHTTP_REQ_DELETE | EVHTTP_REQ_OPTIONS | \
				 EVHTTP_REQ_TRACE | EVHTTP_REQ_CONNECT | \
				 EVHTTP_REQ_PATCH)

enum hconn_state {
	HC_NEW = 0,	/* accepted; not looked at yet */
	HC_IDLE,	/* waiting for the first byte of a request */
	HC_READING,	/* a request is arriving: its deadline runs */
	HC_BUSY,	/* a request is ours, or its answer is being sent */
	HC_CLOSING	/* an error page goes out, then the connection */
};

struct hconn {
	RB_ENTRY(hconn)		 hc_node;	/* by hc_bev */
	TAILQ_ENTRY(hconn)	 hc_anon_entry;	/* while anonymous, oldest first */
	struct bufferevent	*hc_bev;	/* our reference to it */
	struct evhttp_connection *hc_evcon;	/* once seen */
	struct event		 hc_timer;	/* deadline, or idle */
	struct event		 hc_fix;	/* put ours for evhttp's page */
	struct event		 hc_gone;	/* client left while we work */
	int			 hc_gone_set;
	enum hconn_state	 hc_state;
	int			 hc_over;	/* over http connections max */
	int			 hc_abort;	/* status of a close we made */
	int			 hc_has_uid;	/* counted as hc_uid's */
	uid_t			 hc_uid;
	size_t			 hc_bytes;	/* of the request being read */
	size_t			 hc_hdr_bytes;	/* to the end of its headers */
	int			 hc_hdr_done;
	int			 hc_eol;	/* the last line ended */
	struct hreq		*hc_req;
	int			 hc_anon;	/* on http_anon, no token yet */
	int			 hc_evict;	/* gives way to a newer one */
	/* The framing of the request being read (http_frame_line()). */
	char			 hc_line[HTTP_FRAME_LINE];
	size_t			 hc_linelen;	/* may exceed what is kept */
	unsigned int		 hc_lineno;	/* 0: the request line */
	unsigned int		 hc_cl_count;
	unsigned int		 hc_te_count;
	int			 hc_frame_status;	/* 0, 400 or 413 */
	int			 hc_cl_set;	/* a Content-Length was read */
	unsigned long long	 hc_cl;
	char			 hc_frame_msg[160];
	/*
	 * What a PUT of a file must show before its body may be larger
	 * than `http body max' (http_put_authorise()); each value kept
	 * only if whole, else empty (and so refused).
	 */
	int			 hc_put_file;	/* PUT .../KEY/files/... */
	int			 hc_big;	/* authorised: `files max' */
	char			 hc_put_key[FENCE_KEY_SIZE];
	unsigned int		 hc_host_count;
	char			 hc_host[HTTP_FRAME_LINE];
	unsigned int		 hc_origin_count;
	char			 hc_origin[HTTP_FRAME_LINE];
	unsigned int		 hc_token_count;
	char			 hc_token[HOSTTOKEN_TEXT + 1];
	struct event		 hc_frame_ev;	/* refuse it while reading */
};

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
static int	http_conn_attach(struct hconn *);
static void	http_conn_release(struct hconn *);
static void	http_conn_closed(struct evhttp_connection *, void *);
static void	http_conn_input(struct evbuffer *,
		    const struct evbuffer_cb_info *, void *);
static void	http_conn_output(struct evbuffer *,
		    const struct evbuffer_cb_info *, void *);
static void	http_conn_timer(evutil_socket_t, short, void *);
static void	http_conn_fix(evutil_socket_t, short, void *);
static void	http_conn_gone(evutil_socket_t, short, void *);
static void	http_conn_idle(struct hconn *);
static void	http_conn_reading(struct hconn *, size_t);
static void	http_conn_frame(evutil_socket_t, short, void *);
static void	http_anon_leave(struct hconn *);

static int
hconn_cmp(struct hconn *a, struct hconn *b)
{
	uintptr_t	 x = (uintptr_t)a->hc_bev, y = (uintptr_t)b->hc_bev;

	return (x < y ? -1 : x > y);
}

RB_GENERATE(hconn_tree, hconn, hc_node, hconn_cmp);

static const struct fenced_config *
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
static int
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
static int
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

static void
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
		svc_orphan(hr);
		files_orphan(hr);
		if (hr->hr_list != NULL)
			evbuffer_free(hr->hr_list);
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
	free(hc);
}

/* evhttp frees the connection (closecb): let go of ours. */
static void
http_conn_closed(struct evhttp_connection *evcon, void *arg)
{
	http_conn_release(arg);
}

static void
http_conn_idle(struct hconn *hc)
{
	struct timeval	 tv = { http_conf()->c_http_timeout, 0 };

	hc->hc_state = HC_IDLE;
	evtimer_add(&hc->hc_timer, &tv);
}

static void
http_frame_refuse(struct hconn *hc, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/*
 * What a request's body may hold: `http body max', or a file for a PUT
 * of a file known to be authorised (http_put_authorise()).
 */
static uint32_t
http_body_limit(const struct hconn *hc)
{
	const struct fenced_config *c = http_conf();

	return (hc->hc_big ? c->c_files_max : c->c_http_body_max);
}

/* The most any request's body may hold: a PUT of a file's. */
static uint32_t
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
	uid_t		 uid;

	if (hc->hc_host_count != 1 || hc->hc_origin_count > 1 ||
	    !http_host_origin_ok(hc->hc_host, hc->hc_origin_count == 0 ?
	    NULL : hc->hc_origin))
		return ("Host or Origin refused");
	if (hc->hc_token_count != 1 || token_lookup(hc->hc_token,
	    strlen(hc->hc_token), &uid) == -1) {
		explicit_bzero(hc->hc_token, sizeof(hc->hc_token));
		return ("no valid token");
	}
	explicit_bzero(hc->hc_token, sizeof(hc->hc_token));
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
	} else
		return (0);
	v = http_frame_value(line, namelen);
	if (cut || strlcpy(dst, v, size) >= size)
		dst[0] = '\0';
	return (1);
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
	const char	*v, *why;
	unsigned long long cl;
	uint32_t	 limit;
	int		 digits;

	kept = len < sizeof(hc->hc_line) ? len : sizeof(hc->hc_line) - 1;
	/* CRLF ends a line as LF does; only a CR right before the LF. */
	if (len == kept && kept > 0 && line[kept - 1] == '\r')
		len = --kept;
	line[kept] = '\0';
	hc->hc_linelen = 0;
	if (len == 0) {
		/* The end of the headers (or blank lines before a request). */
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
static void
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
static void
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
				if (hc->hc_eol)
					hc->hc_hdr_done = 1;
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
		if (evbuffer_ptr_set(buf, &pos, n, EVBUFFER_PTR_ADD) == -1)
			break;
	}
}

/* A request begins: its deadline starts with its first byte. */
static void
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
	hc->hc_host[0] = hc->hc_origin[0] = '\0';
	explicit_bzero(hc->hc_token, sizeof(hc->hc_token));
	hc->hc_frame_status = 0;
	hc->hc_frame_msg[0] = '\0';
	event_del(&hc->hc_frame_ev);
	evtimer_add(&hc->hc_timer, &tv);
}

static void
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
	if (!hc->hc_hdr_done)
		http_conn_scan(hc, buf, len - info->n_added);
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

static void
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
static void
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
	} else
		http_conn_idle(hc);
}

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
	svc_orphan(hr);
	files_orphan(hr);
	if (hr->hr_list != NULL)
		evbuffer_free(hr->hr_list);
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
	struct evbuffer	*out = evhttp_request_get_output_buffer(hr->hr_req);

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

/*
 * Who asks: exactly one x-voicebox-host-token header with a stored
 * token.  Returns 0 and sets *uid, or -1 with the answer sent.
 */
static int
http_auth(struct hreq *hr, uid_t *uid)
{
	struct evkeyvalq *h = evhttp_request_get_input_headers(hr->hr_req);
	struct evkeyval	*kv;
	const char	*token = NULL;
	int		 n = 0;

	TAILQ_FOREACH(kv, h, next) {
		if (strcasecmp(kv->key, HTTP_TOKEN_HEADER) == 0) {
			token = kv->value;
			n++;
		}
	}
	if (n > 1) {
		http_header(hr, "Connection", "close");
		http_error(hr, 400, "bad-request", "more than one %s header",
		    HTTP_TOKEN_HEADER);
		return (-1);
	}
	if (token == NULL || token_lookup(token, strlen(token), uid) == -1) {
		/* Nothing more to say to one without a token: close. */
		http_header(hr, "Connection", "close");
		http_header(hr, "WWW-Authenticate",
		    "X-Voicebox-Host-Token realm=\"fenced\"");
		http_error(hr, 401, "unauthorized", "%s", token == NULL ?
		    "no " HTTP_TOKEN_HEADER " header; `fencectl token' "
		    "gives you one" : "the host token is not valid");
		return (-1);
	}
	return (0);
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
