/*
 * The egress checks of the network section: where the fence has an
 * allowlisting proxy (docs/egress.md), the probe asks it, on the
 * fence's own loopback, for one target on the list and one off it, and
 * records what it answered.  The host knows which targets it asked
 * for and what the list is; the report only says what happened.
 *
 * For each target: a non-blocking connect to the proxy (bounded by
 * PROBE_TCP_MS), "CONNECT NAME:PORT HTTP/1.1" with its Host header,
 * then the head of the answer, at most PROBE_EGRESS_HEAD_MAX bytes,
 * until PROBE_EGRESS_MS after the start.  Both at once.  A 200 means
 * the proxy opened the tunnel: the target was reached; nothing is sent
 * through it.  Anything else, a refusal with its X-Fenced-Egress code,
 * a proxy that does not answer, closes early or answers garbage, is
 * recorded as such and never hangs the probe.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "probe.h"

#define EG_REQ_MAX	(2 * PROBE_EGRESS_TARGET_LEN + 64)
#define EG_HEADER	"X-Fenced-Egress:"

enum eg_state {
	EG_IDLE = 0,		/* not asked */
	EG_CONNECTING,
	EG_SENDING,
	EG_READING,
	EG_DONE
};

struct probe_eg {
	const char	*eg_target;
	int		 eg_state;
	int		 eg_fd;
	int		 eg_proxy;	/* connected to the proxy */
	const char	*eg_why;	/* NULL, or why there is no answer */
	int		 eg_errno;	/* the errno behind eg_why, or 0 */
	int		 eg_status;	/* 0: none */
	char		 eg_code[PROBE_EGRESS_CODE_LEN];
	char		 eg_req[EG_REQ_MAX];
	size_t		 eg_reqlen;
	size_t		 eg_sent;
	char		 eg_head[PROBE_EGRESS_HEAD_MAX + 1];
	size_t		 eg_got;
	long long	 eg_ms;
};

/*
 * NAME:PORT as the fencer passes it (an exact entry of the list, lower
 * case): a name of 1..253 bytes of a-z, 0-9, '-' and '.' whose last
 * label is not all digits, a port of 1..65535 without a leading zero.
 * Nothing else may reach the request line; the prober holds the
 * target it reads back to the list's own rules (egress_entry_valid).
 */
int
probe_egress_target_valid(const char *s)
{
	const char	*colon, *last;
	size_t		 n;
	long		 port;
	char		*ep;

	if (strnlen(s, PROBE_EGRESS_TARGET_LEN) >= PROBE_EGRESS_TARGET_LEN ||
	    (colon = strrchr(s, ':')) == NULL)
		return (0);
	n = (size_t)(colon - s);
	if (n == 0 || n > 253 || s[0] == '.' || s[0] == '-' ||
	    strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-.") != n)
		return (0);
	/* A last label of digits would be an address, not a name. */
	for (last = colon; last > s && last[-1] != '.'; last--)
		;
	if (strspn(last, "0123456789") == (size_t)(colon - last))
		return (0);
	if (colon[1] < '1' || colon[1] > '9' || strlen(colon + 1) > 5)
		return (0);
	errno = 0;
	port = strtol(colon + 1, &ep, 10);
	return (errno == 0 && *ep == '\0' && port >= 1 && port <= 65535);
}

static int
eg_addr(const struct probe_target *t, struct sockaddr_storage *ss,
    socklen_t *len)
{
	struct sockaddr_in	*sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6	*sin6 = (struct sockaddr_in6 *)ss;
	in_port_t		 port = htons((in_port_t)atoi(t->pt_port));

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, t->pt_host, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = port;
		*len = sizeof(*sin);
		return (0);
	}
	if (inet_pton(AF_INET6, t->pt_host, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = port;
		*len = sizeof(*sin6);
		return (0);
	}
	return (-1);
}

static void
eg_done(struct probe_eg *g, const char *why, int err,
    const struct timespec *t0)
{
	g->eg_state = EG_DONE;
	g->eg_why = why;
	g->eg_errno = err;
	g->eg_ms = probe_ms_since(t0);
	if (g->eg_fd != -1) {
		(void)close(g->eg_fd);
		g->eg_fd = -1;
	}
}

/* The length of the head (its blank line included), or 0 if not yet. */
static size_t
eg_head_end(const char *buf, size_t len)
{
	size_t	 i;

	for (i = 0; i < len; i++) {
		if (buf[i] != '\n')
			continue;
		if (i + 1 < len && buf[i + 1] == '\n')
			return (i + 2);
		if (i + 2 < len && buf[i + 1] == '\r' && buf[i + 2] == '\n')
			return (i + 3);
	}
	return (0);
}

/* The code of an X-Fenced-Egress line, kept only if it is a plain word. */
static void
eg_code(struct probe_eg *g, const char *v)
{
	size_t	 n;

	v += strspn(v, " \t");
	n = strcspn(v, " \t\r");
	if (n == 0 || n >= sizeof(g->eg_code) || v[n + strspn(v + n, " \t\r")]
	    != '\0' || strspn(v, "abcdefghijklmnopqrstuvwxyz0123456789-") < n)
		return;
	memcpy(g->eg_code, v, n);
	g->eg_code[n] = '\0';
}

/*
 * "HTTP/1.x DDD[ reason]" and the headers, of a head NUL-terminated
 * after its blank line; -1 if it is not an HTTP answer.
 */
static int
eg_parse(struct probe_eg *g, size_t len)
{
	char	*h = g->eg_head, *line, *next;
	int	 status;

	if (memchr(h, '\0', len) != NULL || strncmp(h, "HTTP/1.", 7) != 0 ||
	    (h[7] != '0' && h[7] != '1') || h[8] != ' ' ||
	    h[9] < '1' || h[9] > '5' || h[10] < '0' || h[10] > '9' ||
	    h[11] < '0' || h[11] > '9' ||
	    (h[12] != ' ' && h[12] != '\r' && h[12] != '\n'))
		return (-1);
	status = (h[9] - '0') * 100 + (h[10] - '0') * 10 + (h[11] - '0');
	h[len] = '\0';
	for (line = strchr(h, '\n'); line != NULL; line = next) {
		*line++ = '\0';
		if ((next = strchr(line, '\n')) != NULL)
			*next = '\0';
		if (g->eg_code[0] == '\0' &&
		    strncasecmp(line, EG_HEADER, strlen(EG_HEADER)) == 0)
			eg_code(g, line + strlen(EG_HEADER));
		if (next != NULL)
			*next = '\n';
	}
	g->eg_status = status;
	return (0);
}

static void
eg_start(struct probe_eg *g, const struct sockaddr_storage *ss,
    socklen_t sl, const struct timespec *t0)
{
	g->eg_fd = -1;
	g->eg_reqlen = (size_t)snprintf(g->eg_req, sizeof(g->eg_req),
	    "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", g->eg_target,
	    g->eg_target);
	if ((g->eg_fd = socket(ss->ss_family, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0)) == -1) {
		eg_done(g, NULL, errno, t0);
		return;
	}
	if (connect(g->eg_fd, (const struct sockaddr *)ss, sl) == 0) {
		g->eg_proxy = 1;
		g->eg_state = EG_SENDING;
	} else if (errno == EINPROGRESS)
		g->eg_state = EG_CONNECTING;
	else
		eg_done(g, NULL, errno, t0);
}

static void
eg_send(struct probe_eg *g, const struct timespec *t0)
{
	ssize_t	 n;

	n = send(g->eg_fd, g->eg_req + g->eg_sent, g->eg_reqlen - g->eg_sent,
	    MSG_NOSIGNAL | MSG_DONTWAIT);
	if (n == -1) {
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			eg_done(g, NULL, errno, t0);
		return;
	}
	g->eg_sent += (size_t)n;
	if (g->eg_sent == g->eg_reqlen)
		g->eg_state = EG_READING;
}

static void
eg_read(struct probe_eg *g, const struct timespec *t0)
{
	size_t	 end;
	ssize_t	 n;

	n = recv(g->eg_fd, g->eg_head + g->eg_got,
	    PROBE_EGRESS_HEAD_MAX - g->eg_got, MSG_DONTWAIT);
	if (n == -1) {
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			eg_done(g, NULL, errno, t0);
		return;
	}
	if (n == 0) {
		eg_done(g, "closed", 0, t0);
		return;
	}
	g->eg_got += (size_t)n;
	if ((end = eg_head_end(g->eg_head, g->eg_got)) > 0)
		eg_done(g, eg_parse(g, end) == -1 ? "malformed" : NULL, 0, t0);
	else if (g->eg_got == PROBE_EGRESS_HEAD_MAX)
		eg_done(g, "malformed", 0, t0);
}

static void
eg_event(struct probe_eg *g, short revents, const struct timespec *t0)
{
	socklen_t	 l = sizeof(int);
	int		 e = 0;

	switch (g->eg_state) {
	case EG_CONNECTING:
		if (getsockopt(g->eg_fd, SOL_SOCKET, SO_ERROR, &e, &l) == -1)
			e = errno;
		if (e != 0) {
			eg_done(g, NULL, e, t0);
			return;
		}
		g->eg_proxy = 1;
		g->eg_state = EG_SENDING;
		/* FALLTHROUGH */
	case EG_SENDING:
		eg_send(g, t0);
		break;
	case EG_READING:
		if (revents & (POLLIN | POLLHUP | POLLERR))
			eg_read(g, t0);
		break;
	}
}

/* Every target asked (eg_target set) at once, to its end or the bound. */
static void
eg_run(struct probe_eg *g, int ng, const struct probe_target *proxy)
{
	struct sockaddr_storage	 ss;
	struct pollfd		 pfd[2];
	struct timespec		 t0, dl, cdl;
	socklen_t		 sl;
	int			 i, np, idx[2], connecting, left, bad;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	probe_deadline(&dl, PROBE_EGRESS_MS);
	probe_deadline(&cdl, PROBE_TCP_MS);
	bad = eg_addr(proxy, &ss, &sl) == -1;
	for (i = 0; i < ng; i++) {
		g[i].eg_fd = -1;
		if (g[i].eg_target == NULL)
			continue;
		if (bad)
			eg_done(&g[i], NULL, EAFNOSUPPORT, &t0);
		else
			eg_start(&g[i], &ss, sl, &t0);
	}
	for (;;) {
		connecting = 0;
		for (i = 0, np = 0; i < ng; i++) {
			if (g[i].eg_state == EG_IDLE ||
			    g[i].eg_state == EG_DONE)
				continue;
			if (g[i].eg_state == EG_CONNECTING) {
				if (probe_ms_left(&cdl) == 0) {
					eg_done(&g[i], "timeout", 0, &t0);
					continue;
				}
				connecting = 1;
			}
			pfd[np].fd = g[i].eg_fd;
			pfd[np].events = g[i].eg_state == EG_READING ?
			    POLLIN : POLLOUT;
			idx[np++] = i;
		}
		if (np == 0 || (left = probe_ms_left(&dl)) == 0)
			break;
		if (connecting && probe_ms_left(&cdl) < left)
			left = probe_ms_left(&cdl);
		if (poll(pfd, (nfds_t)np, left) <= 0)
			continue;
		for (i = 0; i < np; i++)
			if (pfd[i].revents != 0)
				eg_event(&g[idx[i]], pfd[i].revents, &t0);
	}
	for (i = 0; i < ng; i++)
		if (g[i].eg_state != EG_IDLE && g[i].eg_state != EG_DONE)
			eg_done(&g[i], "timeout", 0, &t0);
}

static void
eg_json(struct jw *w, const char *key, const struct probe_eg *g)
{
	if (g->eg_target == NULL) {
		jw_null(w, key);
		return;
	}
	jw_obj_open(w, key);
	jw_target(w, "target", g->eg_target);
	jw_bool(w, "proxy", g->eg_proxy);
	jw_int(w, "status", g->eg_status);
	jw_str(w, "code", g->eg_code);
	jw_bool(w, "reached", g->eg_status == 200);
	if (g->eg_why != NULL)
		jw_str(w, "error", g->eg_why);
	else
		jw_err(w, "error", g->eg_errno);
	jw_int(w, "ms", g->eg_ms);
	jw_obj_close(w);
}

void
probe_egress(struct jw *w, const struct probe_opts *o)
{
	static struct probe_eg	 g[2];

	memset(g, 0, sizeof(g));
	if (o->po_egress_allowed[0] != '\0')
		g[0].eg_target = o->po_egress_allowed;
	if (o->po_egress_refused[0] != '\0')
		g[1].eg_target = o->po_egress_refused;
	eg_run(g, 2, &o->po_egress_proxy);

	jw_obj_open(w, "egress");
	jw_str(w, "proxy", o->po_egress_proxy.pt_text);
	eg_json(w, "allowed", &g[0]);
	eg_json(w, "refused", &g[1]);
	jw_obj_close(w);
}
