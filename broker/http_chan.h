/*
 * What the files of the channel share (docs/interactive.md,
 * "/api/channel"): http_channel.c (a channel's connection, its messages
 * and streams), http_channel_ops.c (the ops and the sources of their
 * bytes), http_channel_take.c (the handshake, a terminal's attach), and
 * nobody else.
 */
#ifndef HTTP_CHAN_H
#define HTTP_CHAN_H

#include <sys/queue.h>

#include <stdint.h>

#include <jansson.h>

struct bufferevent;
struct http_taken;
struct svc_watch;
struct svc_who;
struct ws;

enum chan_mode {
	CHAN_API = 1,		/* /api/channel: ops and streams */
	CHAN_ATTACH		/* one terminal, its bytes alone */
};

enum cs_kind {
	CS_WATCH = 1,
	CS_EXEC,
	CS_OUTPUT,
	CS_TERMINAL,
	CS_INPUT		/* a process's stdin: one answer */
};

struct channel;

struct chan_stream {
	TAILQ_ENTRY(chan_stream) cs_entry;
	struct channel		*cs_chan;
	uint32_t		 cs_id;		/* the page's */
	enum cs_kind		 cs_kind;
	size_t			 cs_unacked;	/* sent, not acknowledged */
	/* exec */
	uint32_t		 cs_svc_id;	/* for svc_stream_credit() */
	size_t			 cs_owed;	/* acknowledged, not credited */
	int			 cs_b64;
	/* tunnels: output, terminal */
	char			 cs_key[FENCE_KEY_SIZE];
	uint32_t		 cs_target;	/* process or terminal id */
	int			 cs_tunnel_set;
	uint32_t		 cs_tunnel;	/* svc_tunnel_close()'s id */
	struct bufferevent	*cs_bev;
	int			 cs_blocking;	/* its output is full: the page
						   waits */
	int			 cs_eof;	/* the tunnel ended */
	/* watch */
	struct svc_watch	*cs_watch;
	int			 cs_all;	/* every fence, not cs_key */
	unsigned int		 cs_npending;
	int			 cs_overflow;	/* too many: list them all */
	char			 cs_pending[CHAN_WATCH_PENDING][FENCE_KEY_SIZE];
};

struct channel {
	TAILQ_ENTRY(channel)	 ch_entry;
	enum chan_mode		 ch_mode;
	struct http_taken	*ch_ht;
	struct ws		*ch_ws;
	int			 ch_authed;
	uid_t			 ch_uid;
	struct event		 ch_auth_ev;
	struct event		 ch_flush_ev;	/* watches, from the loop */
	TAILQ_HEAD(, chan_stream) ch_streams;
	unsigned int		 ch_nstreams;
	unsigned int		 ch_blocked;	/* streams blocking input */
	int			 ch_closing;
};

TAILQ_HEAD(chan_list, channel);
extern struct chan_list	 chan_all;

/* http_channel.c */
struct channel	*chan_open(struct http_taken *, enum chan_mode);
void		 chan_send(struct channel *, json_t *);
void		 chan_error(struct channel *, uint32_t, const char *,
		    const char *, ...) __attribute__((format(printf, 4, 5)));
void		 chan_say(struct chan_stream *, const char *, json_t *);
struct chan_stream *chan_stream_find(struct channel *, uint32_t);
struct chan_stream *chan_stream_new(struct channel *, uint32_t,
		    enum cs_kind);
void		 chan_stream_free(struct chan_stream *, int);
void		 chan_unblock(struct chan_stream *);
void		 chan_who(const struct channel *, struct svc_who *);

/* http_channel_ops.c */
void		 chan_op_watch(struct channel *, uint32_t, json_t *);
void		 chan_op_exec(struct channel *, uint32_t, json_t *);
void		 chan_op_tunnel(struct channel *, uint32_t, json_t *, int);
void		 chan_op_resize(struct channel *, uint32_t, json_t *);
void		 chan_op_input(struct channel *, uint32_t, json_t *);
void		 chan_op_ack(struct channel *, uint32_t, json_t *);
void		 chan_resize(struct chan_stream *, long long, long long);
void		 chan_pump(struct chan_stream *);
void		 chan_flush(evutil_socket_t, short, void *);
void		 chan_tunnel_answer(void *, const struct svc_answer *);
void		 chan_tunnel_write(struct chan_stream *, const uint8_t *,
		    size_t);

/* http_channel_take.c */
int		 chan_handshake(struct http_taken *, int);
unsigned int	 chan_user_count(uid_t);

#endif /* HTTP_CHAN_H */
