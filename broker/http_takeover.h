/*
 * Connections that leave evhttp (http_takeover.c): once a request's
 * head is whole and a row of http_take_rows[] claims it (the port relay
 * by path and by host name, the WebSocket upgrades), evhttp forgets the
 * connection without answering and the row's handler gets it: its
 * socket, the bytes read after the head, and the head parsed.  The
 * connection still counts as open (for its user once claimed, and in
 * all) until the handler ends it.  docs/interactive.md, "The HTTP API".
 */
#ifndef HTTP_TAKEOVER_H
#define HTTP_TAKEOVER_H

#include <sys/types.h>

#include "http_head.h"

struct evbuffer;
struct hconn;

/* A connection taken from evhttp, the handler's until http_taken_end(). */
struct http_taken {
	int			 ht_fd;		/* the client's socket: the
						   handler's, to close */
	struct evbuffer		*ht_in;		/* read after the head: the
						   handler's, to free */
	struct http_head	*ht_head;	/* the head, parsed */
	char			*ht_raw;	/* its bytes, h_len of them */
	void			*ht_arg;	/* the handler's */
	/*
	 * Called if the daemon drops the connection first (shutdown):
	 * the handler lets go of it and calls http_taken_end(), which
	 * then closes nothing twice.  NULL: ht is freed.
	 */
	void			(*ht_dropped)(void *);
	struct hconn		*ht_conn;	/* http.c's; not the handler's */
};

typedef void	(*http_take_fn)(struct http_taken *);

/* A row: whether a head is this row's, and who takes it. */
struct http_take_row {
	const char	*tr_name;
	int		(*tr_match)(const struct http_head *);
	http_take_fn	 tr_fn;
};

/* http_takeover.c: the rows, in order; the first that matches takes. */
extern const struct http_take_row http_take_rows[];

const struct http_take_row *http_take_match(const struct http_head *);

/*
 * The taken connection is its user's from now on (the same per-user
 * bound as every connection, http connections per user): 0, or -1
 * when the user has too many (answer 429 and end it).
 */
int	 http_taken_claim(struct http_taken *, uid_t);

/*
 * The end: the connection is closed and forgotten (its counts go), ht
 * freed.  The handler has closed ht_fd and freed ht_in (or passed them
 * on) before, or they are closed and freed here when still set (-1 and
 * NULL say they are not).
 */
void	 http_taken_end(struct http_taken *);

/* An answer of ours in JSON ({"error", "message"}) and Connection: close. */
void	 http_taken_error(struct evbuffer *, int, const char *, const char *);

/* The relay's rows (relay.c). */
int	 relay_match_path(const struct http_head *);
int	 relay_match_host(const struct http_head *);
void	 relay_take(struct http_taken *);

#endif /* HTTP_TAKEOVER_H */
