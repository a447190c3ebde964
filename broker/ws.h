/*
 * A WebSocket server connection in the broker (docs/interactive.md,
 * "WebSocket"): on a descriptor the HTTP server has handed over after
 * reading an upgrade request's head, framed by libwslay, driven by
 * libevent.  Its users (the channel, a terminal's attachment) see
 * whole messages, a way to send, and whether the peer keeps up.
 */
#ifndef WS_H
#define WS_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

/* Every limit of a connection. */
#define WS_KEY_LEN		24	/* Sec-WebSocket-Key: 16 bytes, base64 */
#define WS_ACCEPT_LEN		28	/* base64 of a SHA-1 */
#define WS_MSG_DEFAULT		(64U * 1024)	/* a message, fragments
						   together, unless told */
#define WS_MSG_CEILING		(1U << 20)	/* what anyone may ask */
#define WS_OUT_HIGH		(512U * 1024)	/* output held: sources pause */
#define WS_OUT_LOW		(128U * 1024)	/* drained to: they resume */
#define WS_STALL_SEC		30	/* output not moving: closed */
#define WS_IDLE_SEC		75	/* nothing from the peer: closed */
#define WS_PING_SEC		25	/* we ping a quiet peer */
#define WS_CLOSE_SEC		5	/* its close answered, or we go */
#define WS_REASON_MAX		123	/* of a close frame's reason */

/* The close codes the broker sends (RFC 6455, 7.4.1). */
#define WS_CLOSE_NORMAL		1000
#define WS_CLOSE_GOING_AWAY	1001
#define WS_CLOSE_PROTOCOL	1002
#define WS_CLOSE_INVALID_DATA	1007
#define WS_CLOSE_POLICY		1008
#define WS_CLOSE_TOO_BIG	1009
#define WS_CLOSE_INTERNAL	1011
#define WS_CLOSE_TRY_AGAIN	1013

struct ws;

/* What a connection's user hears; arg is ws_new()'s. */
struct ws_ops {
	/*
	 * A whole text (binary 0) or binary message from the peer; text
	 * is UTF-8.  An empty one may be NULL.
	 */
	void	(*wo_message)(void *, struct ws *, int, const uint8_t *,
		    size_t);
	/* The output held fell to WS_OUT_LOW: paused sources may go on. */
	void	(*wo_drained)(void *, struct ws *);
	/*
	 * The connection is over (closed by either side, its deadline,
	 * an error); code is the close code sent or received, 1006 when
	 * none was.  ws is freed when this returns: never used again.
	 */
	void	(*wo_closed)(void *, struct ws *, unsigned int);
};

/*
 * The handshake, as the client sent it (each NULL when absent, or
 * when the header came more than once).
 */
struct ws_handshake {
	const char	*wh_method;
	int		 wh_http11;	/* HTTP/1.1 */
	const char	*wh_upgrade;
	const char	*wh_connection;
	const char	*wh_version;	/* Sec-WebSocket-Version */
	const char	*wh_key;	/* Sec-WebSocket-Key */
};

/*
 * 0 if h is a WebSocket opening handshake the broker answers (GET,
 * HTTP/1.1, Upgrade: websocket, Connection naming upgrade, version 13,
 * a key of 16 bytes in base64); else -1 with *why set (a static text)
 * and *status the HTTP status to refuse with (400, or 426 for a version
 * we do not speak: then Sec-WebSocket-Version: 13 goes with it).
 */
int	 ws_handshake_check(const struct ws_handshake *, const char **, int *);
/* accept = base64(SHA-1(key GUID)), NUL-terminated. */
void	 ws_accept_key(const char *, char [WS_ACCEPT_LEN + 1]);

/*
 * A connection on fd (connected, taken over; ours from now on, closed
 * with the connection): answers 101 to the handshake key (checked
 * already), then reads frames.  pre holds bytes the client sent after
 * the head, read already.  msgmax bounds a message (0: WS_MSG_DEFAULT;
 * at most WS_MSG_CEILING).  NULL (fd closed) when out of memory.
 */
struct ws	*ws_new(int, const char *, const void *, size_t, size_t,
		    const struct ws_ops *, void *);
/*
 * Queue a text (binary 0) or binary message: 0, or -1 when the
 * connection is closing (nothing queued).  Bounded by the caller:
 * ws_room() says whether to go on.
 */
int	 ws_send(struct ws *, int, const void *, size_t);
/* Bytes queued, not yet written to the socket. */
size_t	 ws_queued(const struct ws *);
/* 1 while the output held is under WS_OUT_HIGH. */
int	 ws_room(struct ws *);
/* Stop (1) or resume (0) reading the peer's frames. */
void	 ws_pause(struct ws *, int);
/*
 * Close with code and reason (truncated to WS_REASON_MAX): the close
 * frame goes after what is queued; wo_closed follows once the peer
 * answers, or WS_CLOSE_SEC after.
 */
void	 ws_close(struct ws *, unsigned int, const char *);
/* Frees at once, without a close frame; wo_closed is not called. */
void	 ws_free(struct ws *);

/* For the fuzzer and tests: feed bytes as read from the peer. */
void	 ws_feed(struct ws *, const void *, size_t);

#endif /* WS_H */
