/*
 * The egress proxy (docs/egress.md): the one process that connects out
 * for fences that boot with an allowlist.  It hears from the broker
 * alone: a fence's list, each connection a program inside made to the
 * proxy port of its own loopback (the descriptor, passed on by the
 * agent and the broker), the end of a fence.  It answers with one
 * decision per connection.  Unprivileged, chrooted, no capabilities,
 * an allowlist filter with outbound TCP and UDP sockets and nothing
 * else of the network, never exec.
 */
#include <sys/types.h>
#include <sys/resource.h>
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
#include "imsg.h"
#include "lockdown.h"
#include "log.h"
#include "msg.h"
#include "proc.h"
#include "egress_proc.h"

static void	egress_dispatch_broker(struct imsgev *, struct imsg *, void *);
static void	egress_prepare(const struct proc_args *);
static void	egress_init(const struct proc_args *);
static void	egress_shutdown(void);

static const struct proc_peer egress_peers[] = {
	{ PROC_PARENT,	NULL },
	{ PROC_BROKER,	egress_dispatch_broker },
};

struct proc_self egress_self = {
	.ps_proc = PROC_EGRESS,
	.ps_peers = egress_peers,
	.ps_npeers = sizeof(egress_peers) / sizeof(egress_peers[0]),
	.ps_lockdown = {
		.ld_promises = "stdio recvfd sendfd inet connect",
		.ld_filter = LOCKDOWN_ALLOW,
	},
	.ps_prepare_cb = egress_prepare,
	.ps_init_cb = egress_init,
	.ps_shutdown_cb = egress_shutdown,
};

static int	efence_cmp(struct efence *, struct efence *);
RB_HEAD(efence_tree, efence);
RB_PROTOTYPE(efence_tree, efence, ef_node, efence_cmp);
RB_GENERATE(efence_tree, efence, ef_node, efence_cmp);
static struct efence_tree efences = RB_INITIALIZER(&efences);
static unsigned int	 egress_nfences;
static struct imsgbuf	*egress_denials;	/* to the broker */

unsigned int		 egress_nconns;
unsigned int		 egress_nconns_max;

/* The nameservers of /etc/resolv.conf, read before the chroot. */
static struct sockaddr_storage resolv_conf[EGRESS_RESOLVERS_MAX];
static size_t		 resolv_nconf;

static int
efence_cmp(struct efence *a, struct efence *b)
{
	return (a->ef_id < b->ef_id ? -1 : a->ef_id > b->ef_id);
}

struct event_base *
egress_base(void)
{
	return (egress_self.ps_evbase);
}

const struct fenced_config *
egress_conf(void)
{
	return (&egress_self.ps_conf);
}

/* The port of ss, an AF_INET or AF_INET6 address. */
void
egress_sockaddr_port(struct sockaddr_storage *ss, uint16_t port)
{
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_port = htons(port);
	else
		((struct sockaddr_in6 *)ss)->sin6_port = htons(port);
}

/* A numeric address and a port into ss; 0 if it is neither v4 nor v6. */
int
egress_sockaddr(const char *addr, uint16_t port, struct sockaddr_storage *ss)
{
	struct sockaddr_in	*s4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6	*s6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, addr, &s4->sin_addr) == 1)
		s4->sin_family = AF_INET;
	else if (inet_pton(AF_INET6, addr, &s6->sin6_addr) == 1)
		s6->sin6_family = AF_INET6;
	else
		return (0);
	egress_sockaddr_port(ss, port);
	return (1);
}

/*
 * `nameserver ADDRESS' lines of /etc/resolv.conf, at most
 * EGRESS_RESOLVERS_MAX; anything else of the file is not ours to use
 * (search domains would resolve names the list never named).
 */
static void
egress_read_resolv(void)
{
	FILE		*fp;
	char		 line[256], addr[FENCED_ADDR_MAX], *p, *e;

	if ((fp = fopen("/etc/resolv.conf", "re")) == NULL) {
		log_debug("%s: /etc/resolv.conf: %s", __func__,
		    strerror(errno));
		return;
	}
	while (resolv_nconf < EGRESS_RESOLVERS_MAX &&
	    fgets(line, sizeof(line), fp) != NULL) {
		if (strncmp(line, "nameserver", 10) != 0 ||
		    (line[10] != ' ' && line[10] != '\t'))
			continue;
		p = line + 10 + strspn(line + 10, " \t");
		e = p + strcspn(p, " \t\r\n%");
		if ((size_t)(e - p) >= sizeof(addr))
			continue;
		memcpy(addr, p, e - p);
		addr[e - p] = '\0';
		if (egress_sockaddr(addr, 53, &resolv_conf[resolv_nconf]))
			resolv_nconf++;
	}
	fclose(fp);
}

/*
 * The resolvers to ask, in order: `egress resolver' if the
 * configuration names any, else /etc/resolv.conf's as read at start;
 * each at the configured port.
 */
size_t
egress_resolvers(struct sockaddr_storage *out, size_t max)
{
	const struct fenced_config *c = egress_conf();
	size_t		 i, n = 0;

	if (c->c_egress_nresolvers > 0) {
		for (i = 0; i < c->c_egress_nresolvers && n < max; i++)
			if (egress_sockaddr(c->c_egress_resolver[i],
			    c->c_egress_resolver_port, &out[n]))
				n++;
		return (n);
	}
	for (i = 0; i < resolv_nconf && n < max; i++) {
		out[n] = resolv_conf[i];
		egress_sockaddr_port(&out[n++], c->c_egress_resolver_port);
	}
	return (n);
}

static void
egress_prepare(const struct proc_args *pa)
{
	proc_nofile_raise();
	egress_read_resolv();
}

/*
 * The descriptors left once the channels have theirs bound how many
 * connections are held at once: each takes the fence's, an upstream
 * and a resolver's socket.
 */
static void
egress_init(const struct proc_args *pa)
{
	struct rlimit	 rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == -1)
		fatal("%s: getrlimit", __func__);
	if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > 1U << 20)
		rl.rlim_cur = 1U << 20;
	if (rl.rlim_cur < EGRESS_FD_RESERVE + EGRESS_FDS_PER_CONN)
		fatalx("%s: %llu descriptors are too few", __func__,
		    (unsigned long long)rl.rlim_cur);
	egress_nconns_max = (rl.rlim_cur - EGRESS_FD_RESERVE) /
	    EGRESS_FDS_PER_CONN;
	log_debug("%s: %u connections at most, %zu resolvers from "
	    "/etc/resolv.conf", __func__, egress_nconns_max, resolv_nconf);
}

static struct efence *
efence_find(uint32_t id)
{
	struct efence	 key;

	key.ef_id = id;
	return (RB_FIND(efence_tree, &efences, &key));
}

/* Each fence's own buckets, one each way, at the configured rate. */
static struct bufferevent_rate_limit_group *
efence_bucket(void)
{
	const struct fenced_config *c = egress_conf();
	struct bufferevent_rate_limit_group *g;
	struct ev_token_bucket_cfg *cfg;
	struct timeval	 tick = { 0, 100 * 1000 };
	size_t		 rate = c->c_egress_rate / 10;

	if ((cfg = ev_token_bucket_cfg_new(rate, rate, EV_RATE_LIMIT_MAX,
	    EV_RATE_LIMIT_MAX, &tick)) == NULL)
		fatalx("%s: ev_token_bucket_cfg_new", __func__);
	if ((g = bufferevent_rate_limit_group_new(egress_base(), cfg)) ==
	    NULL)
		fatalx("%s: bufferevent_rate_limit_group_new", __func__);
	ev_token_bucket_cfg_free(cfg);
	return (g);
}

static void
efence_add(const struct msg_egress_fence *m)
{
	struct efence	*ef;
	uint32_t	 i;

	if (m->ef_nlist == 0)
		fatalx("%s: fence %u with no list", __func__, m->ef_id);
	if (efence_find(m->ef_id) != NULL)
		fatalx("%s: fence %u given twice", __func__, m->ef_id);
	if ((ef = calloc(1, sizeof(*ef))) == NULL)
		fatal("%s: calloc", __func__);
	ef->ef_id = m->ef_id;
	ef->ef_owner = m->ef_owner;
	strlcpy(ef->ef_key, m->ef_key, sizeof(ef->ef_key));
	for (i = 0; i < m->ef_nlist; i++)
		strlcpy(ef->ef_list[i], m->ef_list[i], sizeof(ef->ef_list[i]));
	ef->ef_nlist = m->ef_nlist;
	TAILQ_INIT(&ef->ef_conns);
	ef->ef_up = efence_bucket();
	ef->ef_down = efence_bucket();
	RB_INSERT(efence_tree, &efences, ef);
	egress_nfences++;
	log_debug("fence %u (%s of %u): %u entries; %u fences", ef->ef_id,
	    ef->ef_key, (unsigned)ef->ef_owner, ef->ef_nlist, egress_nfences);
}

/* The fence is gone: every connection of it ends now. */
static void
efence_forget(struct efence *ef)
{
	struct econn	*ec;

	while ((ec = TAILQ_FIRST(&ef->ef_conns)) != NULL)
		egress_conn_end(ec, "ended");
	RB_REMOVE(efence_tree, &efences, ef);
	egress_nfences--;
	bufferevent_rate_limit_group_free(ef->ef_up);
	bufferevent_rate_limit_group_free(ef->ef_down);
	free(ef);
}

/*
 * What the broker says.  It is the proxy's only client and is trusted
 * to speak the protocol: a message that does not decode is a bug, and
 * fatal.  A connection for a fence the proxy no longer knows (it ended
 * while the descriptor was on its way) is closed unanswered.
 */
static void
egress_dispatch_broker(struct imsgev *iev, struct imsg *imsg, void *arg)
{
	struct msg_egress_fence	 m;
	struct efence		*ef;
	int			 fd = imsg->fd;

	imsg->fd = -1;
	if (imsg->hdr.ih_type == IMSG_DENIALS_FD) {
		if (fd == -1 || egress_denials != NULL ||
		    msg_empty_decode(imsg->data, imsg->len) == -1)
			fatalx("%s: bad %s", __func__,
			    msg_type_name(imsg->hdr.ih_type));
		if ((egress_denials = imsgbuf_new(fd)) == NULL)
			fatal("%s: imsgbuf_new", __func__);
		/* A broker that does not read loses denials, not memory. */
		imsgbuf_set_queue_max(egress_denials, 1U << 20);
		return;
	}
	if (msg_egress_fence_decode(imsg->data, imsg->len, &m) == -1)
		fatalx("%s: bad %s", __func__,
		    msg_type_name(imsg->hdr.ih_type));
	switch (imsg->hdr.ih_type) {
	case IMSG_EGRESS_FENCE:
		if (fd != -1)
			fatalx("%s: a descriptor with a list", __func__);
		efence_add(&m);
		return;
	case IMSG_EGRESS_FORGET:
		if (fd != -1 || m.ef_nlist != 0)
			fatalx("%s: bad forget", __func__);
		if ((ef = efence_find(m.ef_id)) != NULL)
			efence_forget(ef);
		return;
	case IMSG_EGRESS_CONN:
		if (fd == -1 || m.ef_nlist != 0)
			fatalx("%s: connection without a descriptor",
			    __func__);
		if ((ef = efence_find(m.ef_id)) == NULL) {
			log_debug("%s: fence %u unknown, closed", __func__,
			    m.ef_id);
			close(fd);
			return;
		}
		egress_conn_new(ef, fd);
		return;
	default:
		fatalx("%s: unexpected %s", __func__,
		    msg_type_name(imsg->hdr.ih_type));
	}
}

/*
 * The refusals that are denials of the fence (docs/denials.md): what
 * would allow the connection, where something would.  The rest (a name
 * that does not resolve, an upstream that does not answer) are the
 * network's, not the fence's rules.
 */
static const struct {
	const char	*er_code;
	const char	*er_remedy;	/* before NAME:PORT, if er_after */
	const char	*er_after;
} egress_remedies[] = {
	{ "not-listed",		"add ", " to the fence's egress list" },
	{ "not-mapped",		"an egress host entry for ", "" },
	{ "bad-method",		"CONNECT host:port or an absolute http:// "
	    "request", NULL },
	{ "private-address",	"none: private addresses are never a "
	    "destination", NULL },
	{ "host-address",	"none: this host is never a destination",
	    NULL },
	{ "fenced-listener",	"none: fenced's own API is never a "
	    "destination", NULL },
	{ "too-many",		"fewer connections at once (egress "
	    "connections in fenced.conf)", NULL },
	{ "busy",		"", NULL },
};

/*
 * A refusal, as a denial of the fence, on the broker's socket of them
 * (IMSG_DENIALS_FD), now: before the refusal's answer is written to the
 * fence, so that it is with the broker before the command can end.
 */
static void
egress_denial(const struct econn *ec, const char *reason)
{
	struct msg_denial dn;
	char		 dest[EGRESS_NAME_LEN + 8];
	size_t		 i;
	void		*buf;
	size_t		 len;

	/* ec_allowed: the list allowed it, the address was refused. */
	if (egress_denials == NULL)
		return;
	for (i = 0; i < nitems(egress_remedies); i++)
		if (strcmp(reason, egress_remedies[i].er_code) == 0)
			break;
	if (i == nitems(egress_remedies))
		return;
	if (ec->ec_parsed)
		snprintf(dest, sizeof(dest), "%s:%u", ec->ec_req.er_host,
		    ec->ec_req.er_port);
	else
		strlcpy(dest, "a connection", sizeof(dest));
	memset(&dn, 0, sizeof(dn));
	dn.dn_owner = ec->ec_fence->ef_owner;
	strlcpy(dn.dn_key, ec->ec_fence->ef_key, sizeof(dn.dn_key));
	dn.dn_boot = ec->ec_fence->ef_id;
	dn.dn_layer = DENIAL_EGRESS;
	dn.dn_count = 1;
	/* A long name is cut: what was refused stays recognisable. */
	strlcpy(dn.dn_what, dest, sizeof(dn.dn_what));
	strlcat(dn.dn_what, " (", sizeof(dn.dn_what));
	strlcat(dn.dn_what, reason, sizeof(dn.dn_what));
	strlcat(dn.dn_what, ")", sizeof(dn.dn_what));
	strlcpy(dn.dn_remedy, egress_remedies[i].er_remedy,
	    sizeof(dn.dn_remedy));
	if (egress_remedies[i].er_after != NULL) {
		strlcat(dn.dn_remedy, dest, sizeof(dn.dn_remedy));
		strlcat(dn.dn_remedy, egress_remedies[i].er_after,
		    sizeof(dn.dn_remedy));
	}
	/* Whatever the fence asked for is held to printable by the codec. */
	if (msg_denial_encode(&dn, &buf, &len) == -1)
		return;
	if (imsgbuf_compose(egress_denials, IMSG_DENIAL, 0, 0, -1, buf,
	    len) == -1 || imsgbuf_write(egress_denials) == -1)
		log_debug("%s: fence %u: not sent: %s", __func__,
		    ec->ec_fence->ef_id, strerror(errno));
	free(buf);
}

/* One connection's outcome, to the broker, which counts and logs it. */
void
egress_decided(struct econn *ec, const char *reason)
{
	struct msg_egress_decision d;
	struct timespec	 now;
	int64_t		 ms;
	void		*buf;
	size_t		 len;

	memset(&d, 0, sizeof(d));
	d.ed_id = ec->ec_fence->ef_id;
	d.ed_allowed = ec->ec_allowed;
	if (ec->ec_parsed) {
		strlcpy(d.ed_name, ec->ec_req.er_host, sizeof(d.ed_name));
		d.ed_port = ec->ec_req.er_port;
		strlcpy(d.ed_method, ec->ec_req.er_method,
		    sizeof(d.ed_method));
	}
	strlcpy(d.ed_reason, reason, sizeof(d.ed_reason));
	strlcpy(d.ed_address, ec->ec_address, sizeof(d.ed_address));
	egress_denial(ec, reason);
	d.ed_up = ec->ec_up;
	d.ed_down = ec->ec_down;
	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = (now.tv_sec - ec->ec_t0.tv_sec) * 1000 +
	    (now.tv_nsec - ec->ec_t0.tv_nsec) / 1000000;
	d.ed_ms = ms < 0 ? 0 : ms > UINT32_MAX ? UINT32_MAX : (uint32_t)ms;
	/* The parser lets through nothing it refuses; should it, say less. */
	if (msg_egress_decision_encode(&d, &buf, &len) == -1) {
		log_warnx("%s: fence %u: the request's name not sent",
		    __func__, d.ed_id);
		d.ed_name[0] = d.ed_method[0] = '\0';
		if (msg_egress_decision_encode(&d, &buf, &len) == -1)
			fatal("%s: encode", __func__);
	}
	if (proc_compose(&egress_self, PROC_BROKER, IMSG_EGRESS_DECISION, 0,
	    -1, buf, len) == -1)
		log_warn("%s: to broker", __func__);
	free(buf);
}

static void
egress_shutdown(void)
{
	struct efence	*ef;

	while ((ef = RB_MIN(efence_tree, &efences)) != NULL)
		efence_forget(ef);
}
