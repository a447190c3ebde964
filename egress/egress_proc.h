/*
 * The egress proxy's process (docs/egress.md): the fences it knows, the
 * connections it holds, and what egress.c and egress_conn.c say to each
 * other.
 */
#ifndef EGRESS_PROC_H
#define EGRESS_PROC_H

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/tree.h>

#include <event.h>
#include <time.h>

#include "fenced.h"
#include "egress.h"

#define EGRESS_ADDRS_MAX	16	/* addresses of one name tried */
#define EGRESS_RELAY_MAX	(64 * 1024)	/* bytes queued one way */
#define EGRESS_DRAIN_SEC	5	/* a refusal's answer, to be read */
#define EGRESS_DNS_TRY_SEC	3	/* one resolver's turn */
#define EGRESS_FD_RESERVE	32	/* descriptors kept for the channels */
#define EGRESS_FDS_PER_CONN	3	/* the fence's, upstream, resolver */

struct econn;

struct efence {
	RB_ENTRY(efence)	 ef_node;
	uint32_t		 ef_id;
	uid_t			 ef_owner;
	char			 ef_key[FENCE_KEY_SIZE];
	char			 ef_list[EGRESS_LIST_MAX][EGRESS_ENTRY_LEN];
	uint32_t		 ef_nlist;
	unsigned int		 ef_nconns;
	TAILQ_HEAD(, econn)	 ef_conns;
	/* Each way its own bucket: up reads the fence, down upstream. */
	struct bufferevent_rate_limit_group *ef_up;
	struct bufferevent_rate_limit_group *ef_down;
};

enum econn_state {
	EC_HEAD = 1,	/* reading the request's head */
	EC_RESOLVE,	/* waiting for the resolver */
	EC_CONNECT,	/* connecting upstream */
	EC_RELAY,	/* bytes both ways */
	EC_DRAIN	/* a refusal being written, then closed */
};

struct econn {
	TAILQ_ENTRY(econn)	 ec_entry;	/* its fence's */
	struct efence		*ec_fence;
	enum econn_state	 ec_state;
	struct bufferevent	*ec_in;		/* the fence's side */
	struct bufferevent	*ec_out;	/* upstream; NULL before */
	struct egress_req	 ec_req;
	int			 ec_parsed;
	struct timespec		 ec_t0;
	struct timespec		 ec_last;	/* bytes either way */
	struct event		 ec_timer;	/* deadline, idle, drain */
	struct timespec		 ec_deadline;	/* resolve + connect */

	/* The resolver: one socket, an A and an AAAA query on it. */
	int			 ec_dns_fd;
	struct event		 ec_dns_ev;
	unsigned int		 ec_dns_server;	/* index of the next */
	uint16_t		 ec_dns_id[2];
	int			 ec_dns_done[2];
	const char		*ec_dns_why;
	unsigned int		 ec_nprivate;	/* answers refused as such */
	unsigned int		 ec_nself;	/* the host's own, refused */

	struct sockaddr_storage	 ec_addrs[EGRESS_ADDRS_MAX];
	size_t			 ec_naddrs;
	size_t			 ec_next;	/* to try */
	int			 ec_mapped;	/* by `egress host' */
	int			 ec_self_late;	/* connected: the host's own */
	int			 ec_conn_fd;
	struct event		 ec_conn_ev;

	int			 ec_in_eof;
	int			 ec_out_eof;
	int			 ec_allowed;
	char			 ec_address[FENCED_ADDR_MAX];
	uint64_t		 ec_up;
	uint64_t		 ec_down;
};

/* egress/egress.c */
extern unsigned int	 egress_nconns;
extern unsigned int	 egress_nconns_max;
struct event_base	*egress_base(void);
const struct fenced_config *egress_conf(void);
size_t			 egress_resolvers(struct sockaddr_storage *, size_t);
int			 egress_sockaddr(const char *, uint16_t,
			    struct sockaddr_storage *);
void			 egress_sockaddr_port(struct sockaddr_storage *,
			    uint16_t);
void			 egress_decided(struct econn *, const char *);

/* egress/egress_conn.c */
void			 egress_conn_new(struct efence *, int);
void			 egress_conn_end(struct econn *, const char *);

#endif
