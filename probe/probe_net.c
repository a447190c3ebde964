/*
 * The section "network": DNS resolution of one name, TCP connects to a
 * few targets and to the canary the host listens on, and the interfaces
 * the fence sees.
 *
 * Bounds: names are resolved in children (getaddrinfo cannot be
 * interrupted), all at once, and whatever has not answered after
 * PROBE_DNS_MS is killed; then every connect is started at once,
 * non-blocking, and whatever has not completed after PROBE_TCP_MS is
 * abandoned.  With no network, or one that refuses, both phases end as
 * soon as the kernel answers, well under a second; with packets dropped
 * the section ends within PROBE_DNS_MS + PROBE_TCP_MS.  With
 * --no-outbound only the canary and the interfaces are measured.  With
 * --egress-proxy the checks through the fence's proxy follow
 * (probe_egress.c), within PROBE_EGRESS_MS more.
 */
#include <sys/types.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "probe.h"

#define PROBE_NAMES_MAX		(1 + PROBE_TCP_MAX + 1)	/* dns, tcp, canary */
#define PROBE_CONNS_MAX		(PROBE_TCP_MAX + 1)

/* What a resolver child writes on its pipe (less than PIPE_BUF). */
struct probe_dns_rec {
	int			 dr_gai;	/* 0, or getaddrinfo's error */
	int			 dr_errno;	/* for EAI_SYSTEM */
	int			 dr_naddr;
	struct sockaddr_storage	 dr_addr[PROBE_ADDRS_MAX];
};

struct probe_name {
	const char		*pn_name;
	pid_t			 pn_pid;
	int			 pn_fd;
	size_t			 pn_got;
	int			 pn_done;	/* 1 answered, -1 timed out */
	long long		 pn_ms;
	struct probe_dns_rec	 pn_rec;
};

struct probe_conn {
	const struct probe_target *pc_target;
	const char		*pc_send;	/* written once connected */
	int			 pc_name;	/* index in names, or -1 */
	struct sockaddr_storage	 pc_addr;
	socklen_t		 pc_addrlen;
	int			 pc_fd;
	int			 pc_error;	/* 0 connected, -1 timeout */
	const char		*pc_unresolved;	/* DNS error, if no address */
	long long		 pc_ms;
};

static const struct {
	int		 gn_code;
	const char	*gn_name;
} probe_gai_names[] = {
	{ EAI_AGAIN, "EAI_AGAIN" }, { EAI_BADFLAGS, "EAI_BADFLAGS" },
	{ EAI_FAIL, "EAI_FAIL" }, { EAI_FAMILY, "EAI_FAMILY" },
	{ EAI_MEMORY, "EAI_MEMORY" }, { EAI_NONAME, "EAI_NONAME" },
	{ EAI_SERVICE, "EAI_SERVICE" }, { EAI_SOCKTYPE, "EAI_SOCKTYPE" },
	{ EAI_SYSTEM, "EAI_SYSTEM" }, { EAI_NODATA, "EAI_NODATA" },
	{ EAI_ADDRFAMILY, "EAI_ADDRFAMILY" }, { EAI_OVERFLOW, "EAI_OVERFLOW" },
};

static const char *
probe_gai_name(int code)
{
	size_t	 i;

	for (i = 0; i < sizeof(probe_gai_names) / sizeof(probe_gai_names[0]);
	    i++)
		if (probe_gai_names[i].gn_code == code)
			return (probe_gai_names[i].gn_name);
	return ("EAI_UNKNOWN");
}

/* A literal address needs no resolver. */
static int
probe_literal(const char *host, struct sockaddr_storage *ss, socklen_t *len)
{
	struct sockaddr_in	*sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6	*sin6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, host, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		*len = sizeof(*sin);
		return (1);
	}
	if (inet_pton(AF_INET6, host, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		*len = sizeof(*sin6);
		return (1);
	}
	return (0);
}

static void
probe_dns_child(const char *name, int fd)
{
	struct probe_dns_rec	 rec;
	struct addrinfo		 hints, *res, *ai;

	memset(&rec, 0, sizeof(rec));
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	rec.dr_gai = getaddrinfo(name, NULL, &hints, &res);
	rec.dr_errno = errno;
	if (rec.dr_gai == 0) {
		for (ai = res; ai != NULL && rec.dr_naddr < PROBE_ADDRS_MAX;
		    ai = ai->ai_next)
			if (ai->ai_addrlen <= sizeof(rec.dr_addr[0]))
				memcpy(&rec.dr_addr[rec.dr_naddr++],
				    ai->ai_addr, ai->ai_addrlen);
		freeaddrinfo(res);
	}
	_exit(write(fd, &rec, sizeof(rec)) == (ssize_t)sizeof(rec) ? 0 : 1);
}

static void
probe_dns_start(struct probe_name *n)
{
	int	 p[2];

	n->pn_fd = -1;
	n->pn_pid = -1;
	if (pipe2(p, O_CLOEXEC) == -1) {
		n->pn_done = -1;
		return;
	}
	if ((n->pn_pid = fork()) == 0) {
		probe_child_setup();
		(void)close(p[0]);
		probe_dns_child(n->pn_name, p[1]);
	}
	(void)close(p[1]);
	if (n->pn_pid == -1) {
		(void)close(p[0]);
		n->pn_done = -1;
		return;
	}
	probe_child_add(n->pn_pid);
	n->pn_fd = p[0];
}

/* Read what is there; done at a full record or end of file. */
static void
probe_dns_read(struct probe_name *n, const struct timespec *t0)
{
	ssize_t	 r;

	r = read(n->pn_fd, (char *)&n->pn_rec + n->pn_got,
	    sizeof(n->pn_rec) - n->pn_got);
	if (r == -1 && errno == EINTR)
		return;
	if (r > 0)
		n->pn_got += (size_t)r;
	if (r <= 0 || n->pn_got == sizeof(n->pn_rec)) {
		n->pn_done = n->pn_got == sizeof(n->pn_rec) ? 1 : -1;
		n->pn_ms = probe_ms_since(t0);
	}
}

static void
probe_dns_run(struct probe_name *names, int nnames)
{
	struct pollfd	 pfd[PROBE_NAMES_MAX];
	struct timespec	 t0, dl;
	int		 i, np, idx[PROBE_NAMES_MAX], st;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	probe_deadline(&dl, PROBE_DNS_MS);
	for (i = 0; i < nnames; i++)
		probe_dns_start(&names[i]);
	for (;;) {
		for (i = 0, np = 0; i < nnames; i++)
			if (names[i].pn_done == 0) {
				pfd[np].fd = names[i].pn_fd;
				pfd[np].events = POLLIN;
				idx[np++] = i;
			}
		if (np == 0 || probe_ms_left(&dl) == 0)
			break;
		if (poll(pfd, (nfds_t)np, probe_ms_left(&dl)) <= 0)
			continue;
		for (i = 0; i < np; i++)
			if (pfd[i].revents != 0)
				probe_dns_read(&names[idx[i]], &t0);
	}
	for (i = 0; i < nnames; i++) {
		if (names[i].pn_done == 0) {
			names[i].pn_done = -1;
			names[i].pn_ms = probe_ms_since(&t0);
		}
		if (names[i].pn_fd != -1)
			(void)close(names[i].pn_fd);
		if (names[i].pn_pid > 0)
			(void)probe_wait_until(names[i].pn_pid, &st, &dl);
	}
}

static const char *
probe_dns_error(const struct probe_name *n)
{
	if (n->pn_done != 1)
		return ("timeout");
	if (n->pn_rec.dr_gai == 0)
		return (n->pn_rec.dr_naddr > 0 ? NULL : "EAI_NODATA");
	return (probe_gai_name(n->pn_rec.dr_gai));
}

static void
probe_addr_text(const struct sockaddr_storage *ss, char *buf, size_t len)
{
	const void	*a;

	if (ss->ss_family == AF_INET)
		a = &((const struct sockaddr_in *)ss)->sin_addr;
	else if (ss->ss_family == AF_INET6)
		a = &((const struct sockaddr_in6 *)ss)->sin6_addr;
	else {
		snprintf(buf, len, "family %d", ss->ss_family);
		return;
	}
	if (inet_ntop(ss->ss_family, a, buf, (socklen_t)len) == NULL)
		snprintf(buf, len, "?");
}

/*
 * The canary's secret, written on the connection once it is up: the
 * host counts a connection as ours only if it carries it.
 */
static void
probe_conn_send(const struct probe_conn *c)
{
	if (c->pc_send != NULL && c->pc_error == 0)
		(void)send(c->pc_fd, c->pc_send, strlen(c->pc_send),
		    MSG_NOSIGNAL | MSG_DONTWAIT);
}

/* Start a connect; done at once if the kernel answered at once. */
static void
probe_conn_start(struct probe_conn *c)
{
	c->pc_fd = -1;
	c->pc_error = -1;
	if (c->pc_unresolved != NULL)
		return;
	c->pc_fd = socket(c->pc_addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0);
	if (c->pc_fd == -1) {
		c->pc_error = errno;
		return;
	}
	if (connect(c->pc_fd, (struct sockaddr *)&c->pc_addr,
	    c->pc_addrlen) == 0) {
		c->pc_error = 0;
		probe_conn_send(c);
	} else if (errno != EINPROGRESS)
		c->pc_error = errno;
	else
		return;		/* in flight */
	(void)close(c->pc_fd);
	c->pc_fd = -1;
}

static void
probe_conn_finish(struct probe_conn *c, const struct timespec *t0)
{
	socklen_t	 l = sizeof(c->pc_error);

	if (getsockopt(c->pc_fd, SOL_SOCKET, SO_ERROR, &c->pc_error, &l)
	    == -1)
		c->pc_error = errno;
	probe_conn_send(c);
	(void)close(c->pc_fd);
	c->pc_fd = -1;
	c->pc_ms = probe_ms_since(t0);
}

static void
probe_conn_run(struct probe_conn *conns, int nconns)
{
	struct pollfd	 pfd[PROBE_CONNS_MAX];
	struct timespec	 t0, dl;
	int		 i, np, idx[PROBE_CONNS_MAX];

	clock_gettime(CLOCK_MONOTONIC, &t0);
	probe_deadline(&dl, PROBE_TCP_MS);
	for (i = 0; i < nconns; i++) {
		probe_conn_start(&conns[i]);
		conns[i].pc_ms = probe_ms_since(&t0);
	}
	for (;;) {
		for (i = 0, np = 0; i < nconns; i++)
			if (conns[i].pc_fd != -1) {
				pfd[np].fd = conns[i].pc_fd;
				pfd[np].events = POLLOUT;
				idx[np++] = i;
			}
		if (np == 0 || probe_ms_left(&dl) == 0)
			break;
		if (poll(pfd, (nfds_t)np, probe_ms_left(&dl)) <= 0)
			continue;
		for (i = 0; i < np; i++)
			if (pfd[i].revents != 0)
				probe_conn_finish(&conns[idx[i]], &t0);
	}
	for (i = 0; i < nconns; i++)
		if (conns[i].pc_fd != -1) {
			(void)close(conns[i].pc_fd);
			conns[i].pc_fd = -1;
			conns[i].pc_error = -1;
			conns[i].pc_ms = probe_ms_since(&t0);
		}
}

static void
probe_conn_json(struct jw *w, const char *key, const struct probe_conn *c)
{
	char	 addr[INET6_ADDRSTRLEN + 16];

	jw_obj_open(w, key);
	jw_str(w, "target", c->pc_target->pt_text);
	if (c->pc_unresolved != NULL) {
		jw_null(w, "address");
		jw_bool(w, "connected", 0);
		jw_str(w, "error", c->pc_unresolved);
	} else {
		probe_addr_text(&c->pc_addr, addr, sizeof(addr));
		jw_str(w, "address", addr);
		jw_bool(w, "connected", c->pc_error == 0);
		if (c->pc_error == -1)
			jw_str(w, "error", "timeout");
		else
			jw_err(w, "error", c->pc_error);
	}
	jw_int(w, "ms", c->pc_ms);
	jw_obj_close(w);
}

static void
probe_dns_json(struct jw *w, const struct probe_name *n)
{
	char	 addr[INET6_ADDRSTRLEN + 16];
	int	 i;

	jw_obj_open(w, "dns");
	jw_str(w, "name", n->pn_name);
	jw_bool(w, "resolved", probe_dns_error(n) == NULL);
	jw_arr_open(w, "addresses");
	for (i = 0; n->pn_done == 1 && i < n->pn_rec.dr_naddr; i++) {
		probe_addr_text(&n->pn_rec.dr_addr[i], addr, sizeof(addr));
		jw_str(w, NULL, addr);
	}
	jw_arr_close(w);
	jw_str(w, "error", probe_dns_error(n));
	jw_int(w, "ms", n->pn_ms);
	jw_obj_close(w);
}

static void
probe_iface_json(struct jw *w, int s, const char *name)
{
	struct ifreq	 ifr;

	jw_obj_open(w, NULL);
	jw_str(w, "name", name);
	memset(&ifr, 0, sizeof(ifr));
	memcpy(ifr.ifr_name, name, strlen(name));
	if (s != -1 && ioctl(s, SIOCGIFFLAGS, &ifr) == 0) {
		jw_bool(w, "up", (ifr.ifr_flags & IFF_UP) != 0);
		jw_bool(w, "loopback", (ifr.ifr_flags & IFF_LOOPBACK) != 0);
	} else {
		jw_null(w, "up");
		jw_null(w, "loopback");
	}
	jw_obj_close(w);
}

/* The interface names of /proc/net/dev, in place; -1 if unreadable. */
static int
probe_iface_names(char *buf, size_t len, char **names, int max)
{
	char	*line, *next, *colon, *name;
	int	 n = 0;

	if (probe_read_file("/proc/net/dev", buf, len) == -1)
		return (-1);
	for (line = buf; line != NULL && n < max; line = next) {
		if ((next = strchr(line, '\n')) != NULL)
			*next++ = '\0';
		if ((colon = strchr(line, ':')) == NULL)
			continue;
		*colon = '\0';
		for (name = line; *name == ' '; name++)
			;
		if (*name != '\0' && strlen(name) < IFNAMSIZ)
			names[n++] = name;
	}
	return (n);
}

/*
 * The interfaces the fence sees, with their flags: from /proc/net/dev,
 * or from netlink (if_nameindex) in a root without /proc.
 */
static void
probe_interfaces(struct jw *w)
{
	struct if_nameindex	*ni = NULL;
	char			 buf[8192], *names[PROBE_IFACES_MAX];
	int			 s, n, i;

	jw_arr_open(w, "interfaces");
	if ((n = probe_iface_names(buf, sizeof(buf), names,
	    PROBE_IFACES_MAX)) == -1 && (ni = if_nameindex()) != NULL)
		for (n = 0; n < PROBE_IFACES_MAX && ni[n].if_index != 0; n++)
			names[n] = ni[n].if_name;
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s == -1)
		s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	for (i = 0; i < n; i++)
		if (strlen(names[i]) < IFNAMSIZ)
			probe_iface_json(w, s, names[i]);
	if (s != -1)
		(void)close(s);
	if (ni != NULL)
		if_freenameindex(ni);
	jw_arr_close(w);
}

static int
probe_name_add(struct probe_name *names, int *n, const char *name)
{
	int	 i;

	for (i = 0; i < *n; i++)
		if (strcmp(names[i].pn_name, name) == 0)
			return (i);
	memset(&names[*n], 0, sizeof(names[*n]));
	names[*n].pn_name = name;
	return ((*n)++);
}

/* The targets' addresses: literal, or the first one DNS gave. */
static void
probe_conn_addresses(struct probe_conn *c, int nconns,
    const struct probe_name *names)
{
	const struct probe_name	*n;
	const char		*err;
	int			 i;

	for (i = 0; i < nconns; i++) {
		if (c[i].pc_name == -1)
			continue;
		n = &names[c[i].pc_name];
		if ((err = probe_dns_error(n)) != NULL) {
			c[i].pc_unresolved = err;
			continue;
		}
		memcpy(&c[i].pc_addr, &n->pn_rec.dr_addr[0],
		    sizeof(c[i].pc_addr));
		c[i].pc_addrlen = c[i].pc_addr.ss_family == AF_INET6 ?
		    sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
	}
}

/* The port goes in after resolution: the records carry none. */
static void
probe_conn_ports(struct probe_conn *c, int nconns)
{
	in_port_t	 port;
	int		 i;

	for (i = 0; i < nconns; i++) {
		port = htons((in_port_t)atoi(c[i].pc_target->pt_port));
		if (c[i].pc_addr.ss_family == AF_INET)
			((struct sockaddr_in *)&c[i].pc_addr)->sin_port = port;
		else if (c[i].pc_addr.ss_family == AF_INET6)
			((struct sockaddr_in6 *)&c[i].pc_addr)->sin6_port =
			    port;
	}
}

void
probe_network(struct jw *w, const struct probe_opts *o)
{
	static struct probe_name names[PROBE_NAMES_MAX];
	static struct probe_conn conns[PROBE_CONNS_MAX];
	struct timespec		 t0;
	int			 nnames = 0, nconns = 0, i;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (!o->po_no_outbound)
		(void)probe_name_add(names, &nnames, o->po_dns);
	for (i = 0; i < o->po_ntcp + o->po_has_canary; i++) {
		memset(&conns[nconns], 0, sizeof(conns[nconns]));
		conns[nconns].pc_target = i < o->po_ntcp ? &o->po_tcp[i] :
		    &o->po_canary;
		conns[nconns].pc_name = -1;
		if (i == o->po_ntcp && o->po_canary_secret[0] != '\0')
			conns[nconns].pc_send = o->po_canary_secret;
		if (!probe_literal(conns[nconns].pc_target->pt_host,
		    &conns[nconns].pc_addr, &conns[nconns].pc_addrlen))
			conns[nconns].pc_name = probe_name_add(names, &nnames,
			    conns[nconns].pc_target->pt_host);
		nconns++;
	}
	probe_dns_run(names, nnames);
	probe_conn_addresses(conns, nconns, names);
	probe_conn_ports(conns, nconns);
	probe_conn_run(conns, nconns);

	if (o->po_no_outbound)
		jw_null(w, "dns");
	else
		probe_dns_json(w, &names[0]);
	jw_arr_open(w, "tcp");
	for (i = 0; i < o->po_ntcp; i++)
		probe_conn_json(w, NULL, &conns[i]);
	jw_arr_close(w);
	if (o->po_has_canary)
		probe_conn_json(w, "canary", &conns[o->po_ntcp]);
	else
		jw_null(w, "canary");
	if (o->po_has_egress)
		probe_egress(w, o);
	probe_interfaces(w);
	jw_int(w, "ms", probe_ms_since(&t0));
}
