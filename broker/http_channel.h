/*
 * WebSockets of the HTTP API (docs/interactive.md, "/api/channel"):
 * the one channel per page (http_channel.c) and a terminal's own
 * attachment (.../terminals/<id>/attach), both connections taken over
 * from evhttp (http_takeover.h) and spoken over broker/ws.c.
 */
#ifndef HTTP_CHANNEL_H
#define HTTP_CHANNEL_H

#include <stdint.h>

struct http_head;
struct http_taken;

#define CHAN_PATH		"/api/channel"
#define CHAN_AUTH_SEC		10	/* the first message: auth, by then */
#define CHAN_USER_MAX		16	/* channels of one user at once */
#define CHAN_STREAMS_MAX	32	/* streams of one channel at once */
#define CHAN_MSG_MAX		(256U * 1024)	/* a client's message */
#define CHAN_WINDOW		(256U * 1024)	/* a stream's bytes sent,
						   not acknowledged */
#define CHAN_READ_CHUNK		(16U * 1024)	/* a tunnel's bytes a frame */
#define CHAN_TUNNEL_OUT		(64U * 1024)	/* a tunnel's bytes not yet
						   written: the page waits */
#define CHAN_WATCH_PENDING	32	/* fences a watch holds back */
#define CHAN_STREAM_ID_MAX	0x7fffffffU

/* The rows of http_take_rows[] (http_takeover.c). */
int	 chan_match(const struct http_head *);
void	 chan_take(struct http_taken *);
int	 chan_attach_match(const struct http_head *);
void	 chan_attach_take(struct http_taken *);

#endif /* HTTP_CHANNEL_H */
