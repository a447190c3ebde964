/*
 * imsg: typed, framed messages over a stream socket, with at most one
 * file descriptor per message.  Our own library in the spirit of
 * OpenBSD's imsg(3), driven by libevent.
 *
 * Wire format: struct imsg_hdr in host byte order (both ends are always
 * on the same machine) followed by ih_len - IMSG_HDR_SIZE payload bytes.
 * A descriptor travels as SCM_RIGHTS ancillary data on the first byte of
 * its message; IMSGF_HASFD in ih_flags says to expect it.
 */
#ifndef IMSG_H
#define IMSG_H

#include <sys/types.h>
#include <stddef.h>
#include <stdint.h>

struct event_base;

#define IMSG_HDR_SIZE		sizeof(struct imsg_hdr)
#define IMSG_MAX_SIZE		(4U * 1024 * 1024)	/* header + payload */
#define IMSG_MAX_PAYLOAD	(IMSG_MAX_SIZE - IMSG_HDR_SIZE)
#define IMSG_QUEUE_MAX		(64U * 1024 * 1024)	/* unsent bytes */

#define IMSGF_HASFD		0x0001

struct imsg_hdr {
	uint32_t	ih_type;
	uint32_t	ih_len;		/* header + payload */
	uint32_t	ih_peerid;
	uint32_t	ih_pid;
	uint16_t	ih_flags;
	uint16_t	ih_pad;		/* zero on the wire */
};

struct imsg {
	struct imsg_hdr	 hdr;
	int		 fd;		/* -1 if none; close-on-exec */
	void		*data;		/* payload, NULL when len is 0 */
	size_t		 len;		/* payload bytes */
};

struct imsgbuf;
struct imsgev;

/*
 * Buffer level.  imsgbuf_read() reads what the socket has (and any
 * descriptors), imsgbuf_get() takes one complete message out, and
 * imsgbuf_compose() queues one for imsgbuf_write()/imsgbuf_flush().
 * The fd given to compose belongs to the imsgbuf from then on: it is
 * closed once sent, or on free.
 */
struct imsgbuf	*imsgbuf_new(int);
void		 imsgbuf_free(struct imsgbuf *);
int		 imsgbuf_fd(struct imsgbuf *);
ssize_t		 imsgbuf_read(struct imsgbuf *);
int		 imsgbuf_get(struct imsgbuf *, struct imsg *);
int		 imsgbuf_compose(struct imsgbuf *, uint32_t, uint32_t,
		    uint32_t, int, const void *, size_t);
int		 imsgbuf_write(struct imsgbuf *);
int		 imsgbuf_flush(struct imsgbuf *);
size_t		 imsgbuf_queued(struct imsgbuf *);
void		 imsgbuf_set_queue_max(struct imsgbuf *, size_t);
void		 imsg_free(struct imsg *);

/*
 * Event level.  The dispatch callback is called once per complete
 * message; the imsg and its payload are freed after it returns, and an
 * fd it did not take (by setting imsg->fd = -1) is closed.  The close
 * callback is called once, when the peer closed (error 0), on an I/O
 * error (errno value) or on a protocol error (EBADMSG, EMSGSIZE).
 * imsgev_free() may be called from either callback.
 *
 * imsgev_set_bounds(iev, soft, hard): a peer that does not read what it
 * is sent is not read either.  While more than soft bytes wait to be
 * sent, no more is read from it (frames already read wait too); below
 * half of soft reading goes on.  Compose refuses (ENOBUFS) beyond hard.
 * Without it, the queue is IMSG_QUEUE_MAX and reading never stops: the
 * channels between the daemon's own processes.
 *
 * imsgev_compose() queues a frame; what a callback composes is written
 * in one go once it returns, on the same turn of the loop, and the write
 * event is armed only for what the socket does not take then.
 * imsgev_push(iev): one write of what is queued, now, never blocking,
 * instead of once the callback returns; what the socket does not take,
 * and any error, is left to the loop as for any frame.
 */
typedef void	 (*imsgev_dispatch_cb)(struct imsgev *, struct imsg *,
		    void *);
typedef void	 (*imsgev_close_cb)(struct imsgev *, int, void *);

struct imsgev	*imsgev_new(struct event_base *, int, imsgev_dispatch_cb,
		    imsgev_close_cb, void *);
void		 imsgev_free(struct imsgev *);
int		 imsgev_compose(struct imsgev *, uint32_t, uint32_t,
		    uint32_t, int, const void *, size_t);
int		 imsgev_flush(struct imsgev *);
void		 imsgev_push(struct imsgev *);
void		 imsgev_set_bounds(struct imsgev *, size_t, size_t);
unsigned int	 imsgev_paused(struct imsgev *);
struct imsgbuf	*imsgev_buf(struct imsgev *);
void		*imsgev_arg(struct imsgev *);

#endif /* IMSG_H */
