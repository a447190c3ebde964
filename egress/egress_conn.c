/*
 * One connection through the egress proxy (docs/egress.md), in its
 * states: the head of the request is read (at most EGRESS_HEAD_MAX
 * bytes, within the idle time), the name and port are held against the
 * fence's list before anything is resolved, the name is resolved (an
 * `egress host' mapping for that port, else the stub resolver over UDP)
 * and every address that is not ordinary public unicast, or is one of
 * the host's own, refused, then the addresses are connected to in turn
 * (a connection that turns out to be to the host itself closed unused),
 * all within the connect deadline;
 * then the bytes are relayed both ways, each way through the fence's
 * own bucket, until either side closes or nothing moved for the idle
 * time.  Anything else is answered with a refusal and closed.  Each
 * connection ends in exactly one decision to the broker.
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <errno.h>
#include <event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fenced.h"
#include "log.h"
#include "egress_proc.h"

static void	conn_in_read(struct bufferevent *, void *);
static void	conn_in_write(struct bufferevent *, void *);
static void	conn_in_event(struct bufferevent *, short, void *);
static void	conn_out_read(struct bufferevent *, void *);
static void	conn_out_write(struct bufferevent *, void *);
static void	conn_out_event(struct bufferevent *, short, void *);
static void	conn_timer(int, short, void *);
static void	conn_dns_read(int, short, void *);
static void	conn_connected(int, short, void *);
static void	conn_relay(struct bufferevent *, struct bufferevent *,
		    uint64_t *);
static void	conn_resolve(struct econn *);
static void	conn_connect_next(struct econn *);
static void	conn_refuse(struct econn *, int, const char *, const char *);

/* A refusal's status, code and line of text (docs/egress.md). */
struct conn_refusal {
	const char	*cr_code;
	int		 cr_status;
	const char	*cr_text;
};

static const struct conn_refusal conn_refusals[] = {
	{ "bad-request",	400, "the request could not be read" },
	{ "bad-method",		405, "only CONNECT host:port and absolute "
	    "http:// requests are carried" },
	{ "not-listed",		403, "not in this fence's egress list" },
	{ "private-address",	403, "the name resolves only to addresses "
	    "that are not public" },
	{ "host-address",	403, "the name resolves only to this host's "
	    "own addresses" },
	{ "not-mapped",		403, "egress host maps this name for other "
	    "ports only" },
	{ "fenced-listener",	403, "fenced's own API is never a "
	    "destination" },
	{ "resolve-failed",	502, "the name could not be resolved" },
	{ "connect-failed",	502, "no address of the name could be "
	    "connected to" },
	{ "timeout",		504, "no connection within the deadline" },
	{ "too-many",		429, "this fence has too many connections "
	    "open" },
	{ "busy",		503, "the proxy holds all the connections it "
	    "can" },
};

static const char *
conn_reason_phrase(int status)
{
	switch (status) {
	case 400:	return ("Bad Request");
	case 403:	return ("Forbidden");
	case 405:	return ("Method Not Allowed");
	case 429:	return ("Too Many Requests");
	case 502:	return ("Bad Gateway");
	case 503:	return ("Service Unavailable");
	case 504:	return ("Gateway Timeout");
	default:	return ("Error");
	}
}

static void
conn_now(struct timespec *ts)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
}

/* Arm the connection's one timer for sec seconds from now. */
static void
conn_timer_in(struct econn *ec, long sec)
{
	struct timeval	 tv = { sec, 0 };

	evtimer_add(&ec->ec_timer, &tv);
}

/*
 * A connection from inside a fence: refused at once with too-many or
 * busy, else read until its head is in.
 */
void
egress_conn_new(struct efence *ef, int fd)
{
	const struct fenced_config *c = egress_conf();
	struct econn	*ec;
	const char	*over = NULL;

	if ((ec = calloc(1, sizeof(*ec))) == NULL) {
		log_warn("%s: calloc", __func__);
		close(fd);
		return;
	}
	ec->ec_fence = ef;
	ec->ec_dns_fd = -1;
	ec->ec_conn_fd = -1;
	conn_now(&ec->ec_t0);
	ec->ec_last = ec->ec_t0;
	evtimer_assign(&ec->ec_timer, egress_base(), conn_timer, ec);
	if ((ec->ec_in = bufferevent_socket_new(egress_base(), fd,
	    BEV_OPT_CLOSE_ON_FREE)) == NULL) {
		log_warnx("%s: bufferevent_socket_new", __func__);
		close(fd);
		free(ec);
		return;
	}
	if (evutil_make_socket_nonblocking(fd) == -1)
		log_warn("%s: non-blocking", __func__);
	TAILQ_INSERT_TAIL(&ef->ef_conns, ec, ec_entry);
	ef->ef_nconns++;
	egress_nconns++;
	bufferevent_setcb(ec->ec_in, conn_in_read, conn_in_write,
	    conn_in_event, ec);
	if (bufferevent_add_to_rate_limit_group(ec->ec_in, ef->ef_up) == -1)
		log_warnx("%s: rate limit group", __func__);

	if (egress_nconns > egress_nconns_max)
		over = "busy";
	else if (ef->ef_nconns > c->c_egress_conns)
		over = "too-many";
	if (over != NULL) {
		conn_refuse(ec, 0, over, NULL);
		return;
	}
	ec->ec_state = EC_HEAD;
	/* Nothing past the longest head is read before it is decided. */
	bufferevent_setwatermark(ec->ec_in, EV_READ, 0, EGRESS_HEAD_MAX);
	bufferevent_enable(ec->ec_in, EV_READ);
	conn_timer_in(ec, c->c_egress_idle);
}

/*
 * Release everything; the decision goes now unless a refusal already
 * sent it.
 */
void
egress_conn_end(struct econn *ec, const char *reason)
{
	struct efence	*ef = ec->ec_fence;

	if (ec->ec_state != EC_DRAIN)
		egress_decided(ec, reason);
	evtimer_del(&ec->ec_timer);
	if (ec->ec_dns_fd != -1) {
		event_del(&ec->ec_dns_ev);
		close(ec->ec_dns_fd);
	}
	if (ec->ec_conn_fd != -1) {
		event_del(&ec->ec_conn_ev);
		close(ec->ec_conn_fd);
	}
	/*
	 * Out of the fence's buckets now: libevent would leave them only
	 * when it finalizes the bufferevent, after the fence may be gone.
	 */
	if (ec->ec_out != NULL) {
		bufferevent_remove_from_rate_limit_group(ec->ec_out);
		bufferevent_free(ec->ec_out);
	}
	bufferevent_remove_from_rate_limit_group(ec->ec_in);
	bufferevent_free(ec->ec_in);
	TAILQ_REMOVE(&ef->ef_conns, ec, ec_entry);
	ef->ef_nconns--;
	egress_nconns--;
	free(ec);
}

/*
 * Answer the refusal and close once it is written (or EGRESS_DRAIN_SEC
 * passed).  What the fence sent meanwhile is not read.
 */
static void
conn_refuse(struct econn *ec, int allowed, const char *code,
    const char *detail)
{
	const struct conn_refusal *r = NULL;
	size_t		 i;
	char		 body[256];

	for (i = 0; i < sizeof(conn_refusals) / sizeof(conn_refusals[0]); i++)
		if (strcmp(conn_refusals[i].cr_code, code) == 0)
			r = &conn_refusals[i];
	if (r == NULL)
		fatalx("%s: no refusal %s", __func__, code);
	ec->ec_allowed = allowed;
	if (ec->ec_parsed)
		log_debug("fence %u: %s %s:%u refused: %s%s%s",
		    ec->ec_fence->ef_id, ec->ec_req.er_method,
		    ec->ec_req.er_host, ec->ec_req.er_port, code,
		    detail != NULL ? ": " : "", detail != NULL ? detail : "");
	snprintf(body, sizeof(body), "%s%s%s\n", r->cr_text,
	    detail != NULL ? ": " : "", detail != NULL ? detail : "");
	evbuffer_add_printf(bufferevent_get_output(ec->ec_in),
	    "HTTP/1.1 %d %s\r\nX-Fenced-Egress: %s\r\n"
	    "Content-Type: text/plain\r\nContent-Length: %zu\r\n"
	    "Connection: close\r\n\r\n%s", r->cr_status,
	    conn_reason_phrase(r->cr_status), code, strlen(body), body);
	/* The decision now: the connection is over but for this answer. */
	egress_decided(ec, code);
	ec->ec_state = EC_DRAIN;
	if (ec->ec_dns_fd != -1) {
		event_del(&ec->ec_dns_ev);
		close(ec->ec_dns_fd);
		ec->ec_dns_fd = -1;
	}
	if (ec->ec_conn_fd != -1) {
		event_del(&ec->ec_conn_ev);
		close(ec->ec_conn_fd);
		ec->ec_conn_fd = -1;
	}
	bufferevent_disable(ec->ec_in, EV_READ);
	bufferevent_setwatermark(ec->ec_in, EV_WRITE, 0, 0);
	bufferevent_enable(ec->ec_in, EV_WRITE);
	evtimer_del(&ec->ec_timer);
	conn_timer_in(ec, EGRESS_DRAIN_SEC);
}

/* An address as text, without its port. */
static void
conn_addr_str(const struct sockaddr_storage *ss, char *buf, size_t len)
{
	const void	*a;

	if (ss->ss_family == AF_INET)
		a = &((const struct sockaddr_in *)ss)->sin_addr;
	else
		a = &((const struct sockaddr_in6 *)ss)->sin6_addr;
	if (inet_ntop(ss->ss_family, a, buf, len) == NULL)
		buf[0] = '\0';
}

/*
 * The `egress host' address of name at port: 1 if the configuration
 * maps both, 2 if it maps the name for other ports only, 0 if not.
 */
static int
conn_mapped(const char *name, uint16_t port, struct sockaddr_storage *ss)
{
	const struct fenced_config *c = egress_conf();
	char		 n[EGRESS_NAME_LEN], a[FENCED_ADDR_MAX];
	uint32_t	 i;
	uint16_t	 p;
	int		 other = 0;

	for (i = 0; i < c->c_egress_nhosts; i++) {
		if (!egress_host_parse(c->c_egress_host[i], n, sizeof(n), a,
		    sizeof(a), &p) || strcmp(n, name) != 0)
			continue;
		if (p == port && egress_sockaddr(a, port, ss))
			return (1);
		other = 1;
	}
	return (other ? 2 : 0);
}

/*
 * fenced's own API: the listen port on a loopback address or on one of
 * the host's own (the API listens on loopback only, but which address
 * is the host's can change; this holds whatever the configuration
 * says).
 */
static int
conn_api(const struct sockaddr_storage *ss, uint16_t port, int self)
{
	if (port != egress_conf()->c_listen_port)
		return (0);
	return (self != 0 || strcmp(egress_addr_class((const struct sockaddr *)
	    ss), "loopback") == 0 || strcmp(egress_addr_class(
	    (const struct sockaddr *)ss), "unspecified") == 0);
}

/* The head is in: decide by the list, then find the name's addresses. */
static void
conn_decide(struct econn *ec)
{
	const struct fenced_config *c = egress_conf();
	struct efence	*ef = ec->ec_fence;
	struct egress_req *r = &ec->ec_req;
	struct timespec	 now;
	int		 exact = 0, self;

	bufferevent_disable(ec->ec_in, EV_READ);
	if (!egress_list_match((const char (*)[EGRESS_ENTRY_LEN])ef->ef_list,
	    ef->ef_nlist, r->er_host, r->er_port, &exact)) {
		conn_refuse(ec, 0, "not-listed", NULL);
		return;
	}
	ec->ec_allowed = 1;
	conn_now(&now);
	ec->ec_deadline = now;
	ec->ec_deadline.tv_sec += c->c_egress_connect;
	evtimer_del(&ec->ec_timer);
	conn_timer_in(ec, c->c_egress_connect);
	switch (conn_mapped(r->er_host, r->er_port, &ec->ec_addrs[0])) {
	case 1:
		/*
		 * Mapped by the configuration for this port: a private
		 * address or one of the host's own is reached only for an
		 * exact entry of the list, fenced's API never.
		 */
		self = egress_addr_self((struct sockaddr *)&ec->ec_addrs[0]);
		if (conn_api(&ec->ec_addrs[0], r->er_port, self)) {
			conn_refuse(ec, 1, "fenced-listener", NULL);
			return;
		}
		if (!exact && !egress_addr_public((struct sockaddr *)
		    &ec->ec_addrs[0])) {
			conn_refuse(ec, 1, "private-address", NULL);
			return;
		}
		if (!exact && self != 0) {
			conn_refuse(ec, 1, "host-address", NULL);
			return;
		}
		ec->ec_mapped = 1;
		ec->ec_naddrs = 1;
		ec->ec_state = EC_CONNECT;
		conn_connect_next(ec);
		return;
	case 2:
		/* The name is the configuration's: not resolved elsewhere. */
		conn_refuse(ec, 1, "not-mapped", NULL);
		return;
	}
	ec->ec_state = EC_RESOLVE;
	ec->ec_dns_server = 0;
	conn_resolve(ec);
}

static void
conn_in_read(struct bufferevent *bev, void *arg)
{
	struct econn	*ec = arg;
	struct evbuffer	*in = bufferevent_get_input(bev);
	const char	*code;
	unsigned char	*p;
	size_t		 len;
	int		 r;

	conn_now(&ec->ec_last);
	switch (ec->ec_state) {
	case EC_HEAD:
		len = evbuffer_get_length(in);
		if (len > EGRESS_HEAD_MAX)
			len = EGRESS_HEAD_MAX;
		if ((p = evbuffer_pullup(in, len)) == NULL) {
			egress_conn_end(ec, "no-memory");
			return;
		}
		r = egress_req_parse((const char *)p, len, &ec->ec_req, &code);
		if (r == 0)
			return;
		if (r == -1) {
			conn_refuse(ec, 0, code, NULL);
			return;
		}
		ec->ec_parsed = 1;
		conn_decide(ec);
		return;
	case EC_RELAY:
		conn_relay(bev, ec->ec_out, &ec->ec_up);
		return;
	default:
		/* Not read in the other states. */
		return;
	}
}

/*
 * What from read goes on to to, counted in *n; from is not read again
 * until to has taken it below EGRESS_RELAY_MAX / 2 (its write callback).
 */
static void
conn_relay(struct bufferevent *from, struct bufferevent *to, uint64_t *n)
{
	struct evbuffer	*in = bufferevent_get_input(from);
	struct evbuffer	*out = bufferevent_get_output(to);

	*n += evbuffer_get_length(in);
	evbuffer_add_buffer(out, in);
	if (evbuffer_get_length(out) >= EGRESS_RELAY_MAX)
		bufferevent_disable(from, EV_READ);
}

/* One side has sent all it will: pass the end on once drained. */
static void
conn_half_close(struct econn *ec)
{
	if (ec->ec_in_eof && ec->ec_out != NULL &&
	    evbuffer_get_length(bufferevent_get_output(ec->ec_out)) == 0)
		shutdown(bufferevent_getfd(ec->ec_out), SHUT_WR);
	if (ec->ec_out_eof &&
	    evbuffer_get_length(bufferevent_get_output(ec->ec_in)) == 0)
		shutdown(bufferevent_getfd(ec->ec_in), SHUT_WR);
	if (ec->ec_in_eof && ec->ec_out_eof &&
	    evbuffer_get_length(bufferevent_get_output(ec->ec_in)) == 0 &&
	    evbuffer_get_length(bufferevent_get_output(ec->ec_out)) == 0)
		egress_conn_end(ec, "closed");
}

/* The fence's side took what was written: upstream may be read again. */
static void
conn_in_write(struct bufferevent *bev, void *arg)
{
	struct econn	*ec = arg;

	if (ec->ec_state == EC_DRAIN) {
		egress_conn_end(ec, "refused");
		return;
	}
	if (ec->ec_state != EC_RELAY)
		return;
	if (!ec->ec_out_eof)
		bufferevent_enable(ec->ec_out, EV_READ);
	conn_half_close(ec);
}

static void
conn_in_event(struct bufferevent *bev, short what, void *arg)
{
	struct econn	*ec = arg;

	if (ec->ec_state == EC_DRAIN) {
		egress_conn_end(ec, "refused");
		return;
	}
	if ((what & BEV_EVENT_EOF) && ec->ec_state == EC_RELAY) {
		ec->ec_in_eof = 1;
		bufferevent_disable(bev, EV_READ);
		conn_half_close(ec);
		return;
	}
	/* An end before the head was decided, or an error: over. */
	egress_conn_end(ec, ec->ec_state == EC_HEAD ? "gone" : "closed");
}

static void
conn_out_read(struct bufferevent *bev, void *arg)
{
	struct econn	*ec = arg;

	conn_now(&ec->ec_last);
	conn_relay(bev, ec->ec_in, &ec->ec_down);
}

static void
conn_out_write(struct bufferevent *bev, void *arg)
{
	struct econn	*ec = arg;

	if (!ec->ec_in_eof)
		bufferevent_enable(ec->ec_in, EV_READ);
	conn_half_close(ec);
}

static void
conn_out_event(struct bufferevent *bev, short what, void *arg)
{
	struct econn	*ec = arg;

	if (what & BEV_EVENT_EOF) {
		ec->ec_out_eof = 1;
		bufferevent_disable(bev, EV_READ);
		conn_half_close(ec);
		return;
	}
	egress_conn_end(ec, "upstream-error");
}

/*
 * The one timer: in the head, the idle time to send it; resolving and
 * connecting, the deadline; relaying, idle when nothing moved either
 * way for the idle time (else it is armed for what is left); draining
 * a refusal, its time to be read.
 */
static void
conn_timer(int fd, short ev, void *arg)
{
	const struct fenced_config *c = egress_conf();
	struct econn	*ec = arg;
	struct timespec	 now;
	long		 idle;

	switch (ec->ec_state) {
	case EC_HEAD:
		egress_conn_end(ec, "idle");
		return;
	case EC_RESOLVE:
	case EC_CONNECT:
		conn_refuse(ec, 1, "timeout", NULL);
		return;
	case EC_RELAY:
		conn_now(&now);
		idle = now.tv_sec - ec->ec_last.tv_sec;
		if (idle < (long)c->c_egress_idle) {
			conn_timer_in(ec, c->c_egress_idle - idle);
			return;
		}
		egress_conn_end(ec, "idle");
		return;
	case EC_DRAIN:
		egress_conn_end(ec, "refused");
		return;
	}
}

/* The seconds left of the connect deadline, at least 1. */
static long
conn_left(const struct econn *ec)
{
	struct timespec	 now;
	long		 left;

	conn_now(&now);
	left = ec->ec_deadline.tv_sec - now.tv_sec;
	return (left < 1 ? 1 : left);
}

/*
 * Ask the next resolver for the name's A and AAAA records at once, on
 * one connected UDP socket, for EGRESS_DNS_TRY_SEC or what is left of
 * the deadline.  No resolver left: refused.
 */
static void
conn_resolve(struct econn *ec)
{
	struct sockaddr_storage srv[EGRESS_RESOLVERS_MAX];
	uint8_t		 q[EGRESS_DNS_MAX];
	struct timeval	 tv;
	size_t		 nsrv;
	ssize_t		 n;
	int		 i, fd;
	socklen_t	 sl;

	if (ec->ec_dns_fd != -1) {
		event_del(&ec->ec_dns_ev);
		close(ec->ec_dns_fd);
		ec->ec_dns_fd = -1;
	}
	nsrv = egress_resolvers(srv, EGRESS_RESOLVERS_MAX);
	for (; ec->ec_dns_server < nsrv; ec->ec_dns_server++) {
		sl = srv[ec->ec_dns_server].ss_family == AF_INET ?
		    sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
		if ((fd = socket(srv[ec->ec_dns_server].ss_family,
		    SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) == -1) {
			log_warn("%s: socket", __func__);
			continue;
		}
		if (connect(fd, (struct sockaddr *)&srv[ec->ec_dns_server],
		    sl) == -1) {
			close(fd);
			continue;
		}
		for (i = 0; i < 2; i++) {
			ec->ec_dns_id[i] = arc4random() & 0xffff;
			ec->ec_dns_done[i] = 0;
			if ((n = egress_dns_query(q, sizeof(q),
			    ec->ec_dns_id[i], ec->ec_req.er_host, i == 0 ?
			    EGRESS_DNS_A : EGRESS_DNS_AAAA)) == -1 ||
			    send(fd, q, n, 0) != n)
				break;
		}
		if (i < 2) {
			close(fd);
			continue;
		}
		ec->ec_dns_fd = fd;
		ec->ec_dns_server++;
		ec->ec_naddrs = 0;
		ec->ec_nprivate = 0;
		ec->ec_nself = 0;
		event_assign(&ec->ec_dns_ev, egress_base(), fd,
		    EV_READ | EV_PERSIST | EV_TIMEOUT, conn_dns_read, ec);
		tv.tv_sec = conn_left(ec) < EGRESS_DNS_TRY_SEC ?
		    conn_left(ec) : EGRESS_DNS_TRY_SEC;
		tv.tv_usec = 0;
		event_add(&ec->ec_dns_ev, &tv);
		return;
	}
	conn_refuse(ec, 1, "resolve-failed", nsrv == 0 ? "no resolver" :
	    ec->ec_dns_why);
}

/*
 * The addresses of one answer: the public ones that are not the host's
 * own kept, others counted.
 */
static void
conn_dns_take(struct econn *ec, const struct sockaddr_storage *a, size_t n)
{
	size_t		 i;

	for (i = 0; i < n && ec->ec_naddrs < EGRESS_ADDRS_MAX; i++) {
		if (!egress_addr_public((const struct sockaddr *)&a[i])) {
			ec->ec_nprivate++;
			continue;
		}
		if (egress_addr_self((const struct sockaddr *)&a[i]) != 0) {
			ec->ec_nself++;
			continue;
		}
		ec->ec_addrs[ec->ec_naddrs] = a[i];
		egress_sockaddr_port(&ec->ec_addrs[ec->ec_naddrs++],
		    ec->ec_req.er_port);
	}
}

/*
 * An answer, or the resolver's time is up.  A packet that is no answer
 * to our queries (a wrong id, another name) is ignored: only the socket
 * the resolver answers on is ours, and it is connected.
 */
static void
conn_dns_read(int fd, short ev, void *arg)
{
	struct econn	*ec = arg;
	struct sockaddr_storage a[EGRESS_ADDRS_MAX];
	uint8_t		 buf[EGRESS_DNS_MAX + 1];
	const char	*why;
	ssize_t		 n;
	size_t		 na;
	int		 i, r;

	if (ev & EV_TIMEOUT) {
		ec->ec_dns_why = "the resolver did not answer";
		conn_resolve(ec);
		return;
	}
	while ((n = recv(fd, buf, sizeof(buf), 0)) != -1) {
		if (n < 2 || (size_t)n > EGRESS_DNS_MAX)
			continue;
		for (i = 0; i < 2; i++) {
			if (ec->ec_dns_done[i] ||
			    (buf[0] << 8 | buf[1]) != ec->ec_dns_id[i])
				continue;
			r = egress_dns_answer(buf, n, ec->ec_dns_id[i],
			    ec->ec_req.er_host, i == 0 ? EGRESS_DNS_A :
			    EGRESS_DNS_AAAA, a, EGRESS_ADDRS_MAX, &na, &why);
			if (r == -1 && strcmp(why, "wrong id") != 0) {
				ec->ec_dns_done[i] = 1;
				ec->ec_dns_why = why;
			} else if (r >= 0) {
				ec->ec_dns_done[i] = 1;
				conn_dns_take(ec, a, na);
			}
		}
	}
	if (errno != EAGAIN && errno != EWOULDBLOCK) {
		ec->ec_dns_why = strerror(errno);
		conn_resolve(ec);
		return;
	}
	if (!ec->ec_dns_done[0] || !ec->ec_dns_done[1])
		return;
	event_del(&ec->ec_dns_ev);
	close(ec->ec_dns_fd);
	ec->ec_dns_fd = -1;
	if (ec->ec_naddrs == 0) {
		if (ec->ec_nself > 0)
			conn_refuse(ec, 1, "host-address", NULL);
		else if (ec->ec_nprivate > 0)
			conn_refuse(ec, 1, "private-address", NULL);
		else
			conn_refuse(ec, 1, "resolve-failed",
			    ec->ec_dns_why != NULL ? ec->ec_dns_why :
			    "no address");
		return;
	}
	ec->ec_state = EC_CONNECT;
	conn_connect_next(ec);
}

/* Start a non-blocking connect to the next address; none left: refused. */
static void
conn_connect_next(struct econn *ec)
{
	struct sockaddr_storage *ss;
	struct timeval	 tv;
	socklen_t	 sl;
	int		 fd;
	char		 a[FENCED_ADDR_MAX];

	for (; ec->ec_next < ec->ec_naddrs; ec->ec_next++) {
		ss = &ec->ec_addrs[ec->ec_next];
		sl = ss->ss_family == AF_INET ? sizeof(struct sockaddr_in) :
		    sizeof(struct sockaddr_in6);
		if ((fd = socket(ss->ss_family, SOCK_STREAM | SOCK_NONBLOCK |
		    SOCK_CLOEXEC, 0)) == -1) {
			log_warn("%s: socket", __func__);
			continue;
		}
		if (log_getverbose()) {
			conn_addr_str(ss, a, sizeof(a));
			log_debug("fence %u: %s:%u trying %s",
			    ec->ec_fence->ef_id, ec->ec_req.er_host,
			    ec->ec_req.er_port, a);
		}
		if (connect(fd, (struct sockaddr *)ss, sl) == -1 &&
		    errno != EINPROGRESS) {
			close(fd);
			continue;
		}
		ec->ec_conn_fd = fd;
		event_assign(&ec->ec_conn_ev, egress_base(), fd, EV_WRITE,
		    conn_connected, ec);
		tv.tv_sec = conn_left(ec);
		tv.tv_usec = 0;
		event_add(&ec->ec_conn_ev, &tv);
		return;
	}
	if (ec->ec_self_late)
		conn_refuse(ec, 1, "host-address", "one was this host's own "
		    "by the time it was connected");
	else
		conn_refuse(ec, 1, "connect-failed", NULL);
}

/*
 * Forwarded upstream: the request line in origin form, the header block
 * without its Proxy-* and Connection lines, and "Connection: close":
 * one request per connection, so that a client that keeps the proxy
 * connection for its next request, to another name, meets a closed one
 * rather than this upstream.
 */
static void
conn_forward_head(struct econn *ec, const char *head)
{
	struct evbuffer	*out = bufferevent_get_output(ec->ec_out);
	const struct egress_req *r = &ec->ec_req;
	const char	*p, *end, *eol, *ver;
	size_t		 llen;

	/* The version is the request line's last 8 bytes. */
	llen = r->er_hdr_off - 1;
	if (llen > 0 && head[llen - 1] == '\r')
		llen--;
	ver = head + llen - 8;
	evbuffer_add_printf(out, "%s %s %.8s\r\n", r->er_method, r->er_path,
	    ver);
	p = head + r->er_hdr_off;
	end = p + r->er_hdr_len;
	while (p < end) {
		if ((eol = memchr(p, '\n', end - p)) == NULL)
			eol = end - 1;
		if (p[0] == '\r' || p[0] == '\n')
			evbuffer_add_printf(out, "Connection: close\r\n");
		if ((eol - p < 6 || strncasecmp(p, "proxy-", 6) != 0) &&
		    (eol - p < 11 || strncasecmp(p, "connection:", 11) != 0))
			evbuffer_add(out, p, eol + 1 - p);
		p = eol + 1;
	}
}

/* Connected, refused or out of time: relay, or the next address. */
static void
conn_connected(int fd, short ev, void *arg)
{
	struct econn	*ec = arg;
	struct evbuffer	*in = bufferevent_get_input(ec->ec_in);
	unsigned char	*head;
	socklen_t	 sl = sizeof(int);
	int		 err = 0;

	if (ev & EV_TIMEOUT) {
		conn_refuse(ec, 1, "timeout", NULL);
		return;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &sl) == -1)
		err = errno;
	ec->ec_conn_fd = -1;
	/*
	 * A resolved address that became the host's own after it was
	 * checked: closed before a byte is relayed.
	 */
	if (err == 0 && !ec->ec_mapped && egress_fd_self(fd,
	    (struct sockaddr *)&ec->ec_addrs[ec->ec_next]) != 0) {
		ec->ec_self_late = 1;
		err = -1;
	}
	if (err != 0) {
		close(fd);
		ec->ec_next++;
		conn_connect_next(ec);
		return;
	}
	conn_addr_str(&ec->ec_addrs[ec->ec_next], ec->ec_address,
	    sizeof(ec->ec_address));
	if ((ec->ec_out = bufferevent_socket_new(egress_base(), fd,
	    BEV_OPT_CLOSE_ON_FREE)) == NULL) {
		close(fd);
		egress_conn_end(ec, "no-memory");
		return;
	}
	bufferevent_setcb(ec->ec_out, conn_out_read, conn_out_write,
	    conn_out_event, ec);
	if (bufferevent_add_to_rate_limit_group(ec->ec_out,
	    ec->ec_fence->ef_down) == -1)
		log_warnx("%s: rate limit group", __func__);
	bufferevent_setwatermark(ec->ec_in, EV_READ, 0, EGRESS_RELAY_MAX);
	bufferevent_setwatermark(ec->ec_in, EV_WRITE, EGRESS_RELAY_MAX / 2, 0);
	bufferevent_setwatermark(ec->ec_out, EV_READ, 0, EGRESS_RELAY_MAX);
	bufferevent_setwatermark(ec->ec_out, EV_WRITE, EGRESS_RELAY_MAX / 2,
	    0);

	if ((head = evbuffer_pullup(in, ec->ec_req.er_head_len)) == NULL) {
		egress_conn_end(ec, "no-memory");
		return;
	}
	if (ec->ec_req.er_connect)
		evbuffer_add_printf(bufferevent_get_output(ec->ec_in),
		    "HTTP/1.1 200 Connection established\r\n\r\n");
	else {
		conn_forward_head(ec, (const char *)head);
		ec->ec_up += evbuffer_get_length(bufferevent_get_output(
		    ec->ec_out));
	}
	evbuffer_drain(in, ec->ec_req.er_head_len);
	conn_relay(ec->ec_in, ec->ec_out, &ec->ec_up);

	ec->ec_state = EC_RELAY;
	log_debug("fence %u: %s %s:%u via %s", ec->ec_fence->ef_id,
	    ec->ec_req.er_method, ec->ec_req.er_host, ec->ec_req.er_port,
	    ec->ec_address);
	conn_now(&ec->ec_last);
	evtimer_del(&ec->ec_timer);
	conn_timer_in(ec, egress_conf()->c_egress_idle);
	bufferevent_enable(ec->ec_in, EV_READ | EV_WRITE);
	bufferevent_enable(ec->ec_out, EV_READ | EV_WRITE);
}
