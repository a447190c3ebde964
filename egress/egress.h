/*
 * The egress proxy's pure parts (docs/egress.md): the parser of a
 * request's head, the classifier of addresses and the stub resolver's
 * codec.  No libevent, no globals; no sockets but the kernel's word on
 * the host's own addresses (egress_addr_self, egress_fd_self).
 */
#ifndef EGRESS_H
#define EGRESS_H

#include <sys/types.h>
#include <sys/socket.h>

#include <stdint.h>

#include "fenced.h"

#define EGRESS_HEAD_MAX		8192	/* a request's head, CRLFCRLF included */
#define EGRESS_PATH_LEN		4096	/* origin-form path, NUL included */
#define EGRESS_DNS_MAX		512	/* a UDP query or answer */
#define EGRESS_DNS_A		1
#define EGRESS_DNS_AAAA		28
#define EGRESS_DNS_CNAME	5

struct egress_req {
	char		 er_method[8];
	char		 er_host[EGRESS_NAME_LEN];	/* lower case */
	uint16_t	 er_port;
	int		 er_connect;			/* 1: CONNECT */
	char		 er_path[EGRESS_PATH_LEN];	/* http:// only */
	size_t		 er_head_len;			/* bytes of the head */
	size_t		 er_hdr_off;	/* header block after the request line */
	size_t		 er_hdr_len;
};

/* egress/egress_req.c */
int		 egress_req_parse(const char *, size_t, struct egress_req *,
		    const char **);

/* egress/egress_addr.c */
int		 egress_addr_public(const struct sockaddr *);
const char	*egress_addr_class(const struct sockaddr *);
int		 egress_addr_self(const struct sockaddr *);
int		 egress_fd_self(int, const struct sockaddr *);

/* egress/egress_dns.c */
ssize_t		 egress_dns_query(uint8_t *, size_t, uint16_t, const char *,
		    int);
int		 egress_dns_answer(const uint8_t *, size_t, uint16_t,
		    const char *, int, struct sockaddr_storage *, size_t,
		    size_t *, const char **);

#endif
