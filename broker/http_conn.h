/*
 * What the files of the HTTP server share (http.c: connections, limits,
 * who asks; http_frame.c: the framing of requests; http_reply.c: the
 * answers), and nobody else: a connection as the server follows it.
 */
#ifndef HTTP_CONN_H
#define HTTP_CONN_H

#define HTTP_FRAME_LINE		256	/* of a header line, looked at */

struct http_taken;
struct http_take_row;

enum hconn_state {
	HC_NEW = 0,	/* accepted; not looked at yet */
	HC_IDLE,	/* waiting for the first byte of a request */
	HC_READING,	/* a request is arriving: its deadline runs */
	HC_BUSY,	/* a request is ours, or its answer is being sent */
	HC_CLOSING,	/* an error page goes out, then the connection */
	HC_TAKEN	/* out of evhttp: a handler's (http_takeover.c) */
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
	unsigned int		 hc_bearer_count; /* Authorization: Bearer */
	char			 hc_bearer[HOSTTOKEN_TEXT + 1];
	struct event		 hc_frame_ev;	/* refuse it while reading */
	/*
	 * The head's bytes as they arrived (evhttp reads lines out of the
	 * input as they come), for a request a takeover row may claim;
	 * where in the input the head ended, in the read that ended it.
	 */
	struct evbuffer		*hc_head;
	size_t			 hc_hdr_end;
	int			 hc_no_take;	/* pipelined: evhttp's */
	struct http_taken	*hc_taken;	/* HC_TAKEN */
	struct event		 hc_take_ev;	/* runs the handler */
	const struct http_take_row *hc_take_row;
};

/* http.c */
const struct fenced_config *http_conf(void);
void	http_conn_idle(struct hconn *);
void	http_conn_timer(evutil_socket_t, short, void *);
void	http_raw_json(struct evbuffer *, int, json_t *);
int	http_conn_claim(struct hconn *, uid_t);
int	http_conn_attach(struct hconn *);
void	http_conn_unwatch(struct hconn *);

/* http_takeover.c */
void	http_takeover_try(struct hconn *, struct evbuffer *);
void	http_takeover_release(struct hconn *);
int	http_takeover_pipelined(struct hconn *);

/* http_frame.c */
void	http_conn_input(struct evbuffer *, const struct evbuffer_cb_info *,
	    void *);
void	http_conn_frame(evutil_socket_t, short, void *);
void	http_conn_scan(struct hconn *, struct evbuffer *, size_t);
void	http_conn_reading(struct hconn *, size_t);
uint32_t http_body_limit(const struct hconn *);
uint32_t http_body_ceiling(void);

#endif /* HTTP_CONN_H */
