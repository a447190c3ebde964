/*
 * imsg: framed messages with optional descriptors over a stream socket.
 *
 * Reading keeps one growable buffer of unparsed bytes and a short FIFO
 * of descriptors that arrived with them.  Each descriptor remembers the
 * stretch of the byte stream that came in the same recvmsg(), which is
 * how a message that claims a descriptor is matched to it and how one
 * that nobody claims is noticed instead of piling up.
 *
 * Writing keeps a queue of whole frames (header and payload in one
 * allocation); a frame with a descriptor always starts its own
 * sendmsg(), so the descriptor rides on the first byte of its frame.
 *
 * Every byte a frame leaves behind is wiped before its memory is
 * reused or freed: the taken frame in the read buffer, a written frame,
 * a payload at imsg_free().  Some frames carry a fence's bearer.
 *
 * imsgbuf_free() never closes the socket itself: whoever made the
 * imsgbuf owns that.  imsgev, which is given the socket, does close it.
 *
 * A descriptor that is not a socket (a virtio-serial port inside a VM,
 * a pipe) carries frames too, with read(2) and writev(2), but never
 * descriptors; writing to one whose reader is gone raises SIGPIPE, which
 * a daemon ignores anyway.
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "imsg.h"
#include "imsg_impl.h"

#define IMSG_READ_CHUNK	(64U * 1024)
#define IMSG_RBUF_MAX	(IMSG_MAX_SIZE + IMSG_READ_CHUNK)
#define IMSG_IOV_MAX	64	/* frames per sendmsg() */

struct imsgev {
	struct imsgbuf	*iev_ibuf;
	struct event	*iev_rev;
	struct event	*iev_wev;
	struct event	*iev_fev;	/* the write of this turn (imsgev_compose) */
	imsgev_dispatch_cb iev_dispatch;
	imsgev_close_cb	 iev_close;
	void		*iev_arg;
	int		 iev_fd;
	int		 iev_busy;	/* depth of our own event handlers */
	int		 iev_freed;	/* imsgev_free() while busy */
	int		 iev_closed;	/* close callback has been called */
	size_t		 iev_soft;	/* 0, or stop reading above it */
	int		 iev_paused;	/* reading stopped: answers unread */
	unsigned int	 iev_npauses;	/* how many times it stopped */
};

static void	imsgbuf_close_fds(int *, size_t);
static int	imsgbuf_rspace(struct imsgbuf *, size_t *);
static int	imsgbuf_take_fds(struct imsgbuf *, struct msghdr *,
		    uint64_t, uint64_t);
static int	imsgbuf_fail(struct imsgbuf *, int);
static void	imsgbuf_sent(struct imsgbuf *, size_t);
static void	imsgev_read_cb(evutil_socket_t, short, void *);
static void	imsgev_write_cb(evutil_socket_t, short, void *);
static void	imsgev_turn_cb(evutil_socket_t, short, void *);
static void	imsgev_lost(struct imsgev *, int);
static int	imsgev_arm(struct imsgev *);
static int	imsgev_bound(struct imsgev *, size_t);
static void	imsgev_leave(struct imsgev *);
static void	imsgev_destroy(struct imsgev *);
static void	imsgev_process(struct imsgev *);

struct imsgbuf *
imsgbuf_new(int fd)
{
	struct imsgbuf	*ib;
	struct stat	 st;
	int		 fl;

	if (fstat(fd, &st) == -1 || (fl = fcntl(fd, F_GETFL)) == -1)
		return (NULL);
	if (!(fl & O_NONBLOCK) && fcntl(fd, F_SETFL, fl | O_NONBLOCK) == -1)
		return (NULL);
	if ((ib = calloc(1, sizeof(*ib))) == NULL)
		return (NULL);
	ib->ib_fd = fd;
	ib->ib_sock = S_ISSOCK(st.st_mode);
	ib->ib_queue_max = IMSG_QUEUE_MAX;
	TAILQ_INIT(&ib->ib_wq);
	return (ib);
}

void
imsgbuf_free(struct imsgbuf *ib)
{
	struct imsg_out	*o;
	size_t		 i;

	if (ib == NULL)
		return;
	for (i = 0; i < ib->ib_nrfds; i++)
		close(ib->ib_rfds[i].rf_fd);
	while ((o = TAILQ_FIRST(&ib->ib_wq)) != NULL) {
		TAILQ_REMOVE(&ib->ib_wq, o, o_entry);
		if (o->o_fd != -1)
			close(o->o_fd);
		explicit_bzero(o->o_buf, o->o_len);
		free(o->o_buf);
		free(o);
	}
	/* Taken bytes are wiped already, those past ib_rend never held any. */
	if (ib->ib_rbuf != NULL)
		explicit_bzero(ib->ib_rbuf, ib->ib_rend);
	free(ib->ib_rbuf);
	free(ib);
}

int
imsgbuf_fd(struct imsgbuf *ib)
{
	return (ib->ib_fd);
}

size_t
imsgbuf_queued(struct imsgbuf *ib)
{
	return (ib->ib_queued);
}

/* At most max unsent bytes (never more than IMSG_QUEUE_MAX). */
void
imsgbuf_set_queue_max(struct imsgbuf *ib, size_t max)
{
	if (max > IMSG_QUEUE_MAX)
		max = IMSG_QUEUE_MAX;
	if (max < IMSG_MAX_SIZE)
		max = IMSG_MAX_SIZE;
	ib->ib_queue_max = max;
}

static void
imsgbuf_close_fds(int *fds, size_t n)
{
	int	 saved = errno;

	while (n-- > 0)
		close(fds[n]);
	errno = saved;
}

/* A broken stream stays broken: every later call fails the same way. */
static int
imsgbuf_fail(struct imsgbuf *ib, int error)
{
	ib->ib_error = error;
	errno = error;
	return (-1);
}

/*
 * Make room to read into.  Taken bytes are dropped first, so the buffer
 * only ever holds part of one frame plus whatever followed it, and it
 * never grows past one largest frame plus one read.
 */
static int
imsgbuf_rspace(struct imsgbuf *ib, size_t *space)
{
	unsigned char	*nb;
	size_t		 want, nsize, left;

	if (ib->ib_rstart > 0) {
		left = ib->ib_rend - ib->ib_rstart;
		memmove(ib->ib_rbuf, ib->ib_rbuf + ib->ib_rstart, left);
		/* The old copy of what moved down. */
		explicit_bzero(ib->ib_rbuf + left, ib->ib_rend - left);
		ib->ib_rbase += ib->ib_rstart;
		ib->ib_rend = left;
		ib->ib_rstart = 0;
	}
	/* An idle channel should not keep the memory of its last big frame. */
	if (ib->ib_rend == 0 && ib->ib_rsize > IMSG_READ_CHUNK) {
		free(ib->ib_rbuf);
		ib->ib_rbuf = NULL;
		ib->ib_rsize = 0;
	}
	if (ib->ib_rend >= IMSG_RBUF_MAX) {
		/* A whole frame is waiting: the caller must take it first. */
		errno = ENOBUFS;
		return (-1);
	}
	want = ib->ib_rend + IMSG_READ_CHUNK;
	if (want > IMSG_RBUF_MAX)
		want = IMSG_RBUF_MAX;
	if (ib->ib_rsize < want) {
		nsize = ib->ib_rsize * 2;
		if (nsize < want)
			nsize = want;
		if (nsize > IMSG_RBUF_MAX)
			nsize = IMSG_RBUF_MAX;
		/* Not realloc(): it would free the old bytes unwiped. */
		if ((nb = malloc(nsize)) == NULL)
			return (-1);
		if (ib->ib_rbuf != NULL) {
			memcpy(nb, ib->ib_rbuf, ib->ib_rend);
			explicit_bzero(ib->ib_rbuf, ib->ib_rend);
			free(ib->ib_rbuf);
		}
		ib->ib_rbuf = nb;
		ib->ib_rsize = nsize;
	}
	*space = ib->ib_rsize - ib->ib_rend;
	return (0);
}

/*
 * Queue the descriptors of one recvmsg().  Anything unexpected (cut
 * control data, foreign control messages, too many waiting) closes what
 * did arrive and breaks the stream: the peer is not following protocol.
 */
static int
imsgbuf_take_fds(struct imsgbuf *ib, struct msghdr *msg, uint64_t start,
    uint64_t end)
{
	struct cmsghdr	*cm;
	int		 fds[IMSG_FDS_MAX];
	size_t		 nfds = 0, n, i, room;
	int		 bad = 0;

	for (cm = CMSG_FIRSTHDR(msg); cm != NULL; cm = CMSG_NXTHDR(msg, cm)) {
		if (cm->cmsg_level != SOL_SOCKET ||
		    cm->cmsg_type != SCM_RIGHTS) {
			bad = 1;
			continue;
		}
		n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < n; i++) {
			int	 fd;

			memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int),
			    sizeof(fd));
			/* The control buffer holds IMSG_FDS_MAX at most. */
			if (nfds < IMSG_FDS_MAX)
				fds[nfds++] = fd;
			else {
				close(fd);
				bad = 1;
			}
		}
	}
	room = IMSG_FDS_MAX - ib->ib_nrfds;
	if (bad || (msg->msg_flags & MSG_CTRUNC) || nfds > room) {
		imsgbuf_close_fds(fds, nfds);
		return (imsgbuf_fail(ib, EBADMSG));
	}
	for (i = 0; i < nfds; i++) {
		ib->ib_rfds[ib->ib_nrfds].rf_fd = fds[i];
		ib->ib_rfds[ib->ib_nrfds].rf_start = start;
		ib->ib_rfds[ib->ib_nrfds].rf_end = end;
		ib->ib_nrfds++;
	}
	return (0);
}

ssize_t
imsgbuf_read(struct imsgbuf *ib)
{
	union {
		struct cmsghdr	 hdr;
		char		 buf[CMSG_SPACE(sizeof(int) * IMSG_FDS_MAX)];
	} cmsgbuf;
	struct msghdr	 msg;
	struct iovec	 iov;
	uint64_t	 start;
	size_t		 space;
	ssize_t		 n;

	if (ib->ib_error) {
		errno = ib->ib_error;
		return (-1);
	}
	if (imsgbuf_rspace(ib, &space) == -1)
		return (-1);

	memset(&msg, 0, sizeof(msg));
	memset(&cmsgbuf, 0, sizeof(cmsgbuf));
	iov.iov_base = ib->ib_rbuf + ib->ib_rend;
	iov.iov_len = space;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cmsgbuf.buf;
	msg.msg_controllen = sizeof(cmsgbuf.buf);

	if (ib->ib_sock)
		n = recvmsg(ib->ib_fd, &msg, MSG_CMSG_CLOEXEC);
	else
		n = read(ib->ib_fd, iov.iov_base, iov.iov_len);
	if (n == -1)
		return (-1);
	start = ib->ib_rbase + ib->ib_rend;
	if (ib->ib_sock &&
	    imsgbuf_take_fds(ib, &msg, start, start + (size_t)n) == -1)
		return (-1);
	ib->ib_rend += (size_t)n;
	return (n);
}

int
imsgbuf_get(struct imsgbuf *ib, struct imsg *imsg)
{
	struct imsg_hdr	 hdr;
	uint64_t	 at;
	size_t		 avail, plen;
	void		*data = NULL;

	if (ib->ib_error) {
		errno = ib->ib_error;
		return (-1);
	}
	at = ib->ib_rbase + ib->ib_rstart;
	avail = ib->ib_rend - ib->ib_rstart;

	/*
	 * A descriptor travels with the first byte of its frame.  One that
	 * came entirely before the frame we are at was claimed by nobody.
	 */
	if (ib->ib_nrfds > 0 && ib->ib_rfds[0].rf_end <= at)
		return (imsgbuf_fail(ib, EBADMSG));

	if (avail < IMSG_HDR_SIZE)
		return (0);
	memcpy(&hdr, ib->ib_rbuf + ib->ib_rstart, sizeof(hdr));
	if (hdr.ih_len < IMSG_HDR_SIZE || hdr.ih_len > IMSG_MAX_SIZE)
		return (imsgbuf_fail(ib, EMSGSIZE));
	if (hdr.ih_pad != 0 || (hdr.ih_flags & ~IMSGF_HASFD) != 0)
		return (imsgbuf_fail(ib, EBADMSG));
	/* Its first byte is here, so its descriptor must be too. */
	if ((hdr.ih_flags & IMSGF_HASFD) &&
	    (ib->ib_nrfds == 0 || ib->ib_rfds[0].rf_start > at))
		return (imsgbuf_fail(ib, EBADMSG));
	if (avail < hdr.ih_len)
		return (0);

	plen = hdr.ih_len - IMSG_HDR_SIZE;
	if (plen > 0) {
		if ((data = malloc(plen)) == NULL)
			return (-1);
		memcpy(data, ib->ib_rbuf + ib->ib_rstart + IMSG_HDR_SIZE,
		    plen);
	}
	explicit_bzero(ib->ib_rbuf + ib->ib_rstart, hdr.ih_len);
	imsg->hdr = hdr;
	imsg->data = data;
	imsg->len = plen;
	imsg->fd = -1;
	if (hdr.ih_flags & IMSGF_HASFD) {
		imsg->fd = ib->ib_rfds[0].rf_fd;
		ib->ib_nrfds--;
		memmove(&ib->ib_rfds[0], &ib->ib_rfds[1],
		    ib->ib_nrfds * sizeof(ib->ib_rfds[0]));
	}
	ib->ib_rstart += hdr.ih_len;
	/*
	 * Nothing more is here: a big frame's buffer goes now, not at the
	 * next read, which a quiet peer may never give (every frame's
	 * bytes were wiped as it was taken).
	 */
	if (ib->ib_rstart == ib->ib_rend && ib->ib_rsize > IMSG_READ_CHUNK) {
		free(ib->ib_rbuf);
		ib->ib_rbuf = NULL;
		ib->ib_rsize = 0;
		ib->ib_rbase += ib->ib_rstart;
		ib->ib_rstart = ib->ib_rend = 0;
	}
	return (1);
}

void
imsg_free(struct imsg *imsg)
{
	if (imsg->data != NULL)
		explicit_bzero(imsg->data, imsg->len);
	free(imsg->data);
	imsg->data = NULL;
	imsg->len = 0;
	if (imsg->fd != -1) {
		close(imsg->fd);
		imsg->fd = -1;
	}
}

int
imsgbuf_compose(struct imsgbuf *ib, uint32_t type, uint32_t peerid,
    uint32_t pid, int fd, const void *data, size_t len)
{
	struct imsg_out	*o = NULL;
	struct imsg_hdr	 hdr;
	size_t		 total;
	int		 error;

	if (len > IMSG_MAX_PAYLOAD) {
		error = EMSGSIZE;
		goto fail;
	}
	if (len > 0 && data == NULL) {
		error = EINVAL;
		goto fail;
	}
	if (fd != -1 && !ib->ib_sock) {
		error = EOPNOTSUPP;
		goto fail;
	}
	total = IMSG_HDR_SIZE + len;
	if (ib->ib_queued > ib->ib_queue_max ||
	    total > ib->ib_queue_max - ib->ib_queued) {
		error = ENOBUFS;
		goto fail;
	}
	if ((o = calloc(1, sizeof(*o))) == NULL ||
	    (o->o_buf = malloc(total)) == NULL) {
		error = ENOMEM;
		goto fail;
	}
	memset(&hdr, 0, sizeof(hdr));
	hdr.ih_type = type;
	hdr.ih_len = (uint32_t)total;
	hdr.ih_peerid = peerid;
	hdr.ih_pid = pid;
	hdr.ih_flags = fd != -1 ? IMSGF_HASFD : 0;
	memcpy(o->o_buf, &hdr, sizeof(hdr));
	if (len > 0)
		memcpy(o->o_buf + IMSG_HDR_SIZE, data, len);
	o->o_len = total;
	o->o_fd = fd;
	TAILQ_INSERT_TAIL(&ib->ib_wq, o, o_entry);
	ib->ib_queued += total;
	return (0);

fail:
	free(o);
	/* The descriptor was handed over to us: never leak it. */
	if (fd != -1)
		close(fd);
	errno = error;
	return (-1);
}

/* Account for n bytes sent from the head of the queue. */
static void
imsgbuf_sent(struct imsgbuf *ib, size_t n)
{
	struct imsg_out	*o;
	size_t		 left;

	ib->ib_queued -= n;
	while (n > 0 && (o = TAILQ_FIRST(&ib->ib_wq)) != NULL) {
		left = o->o_len - o->o_off;
		if (n < left) {
			o->o_off += n;
			return;
		}
		n -= left;
		TAILQ_REMOVE(&ib->ib_wq, o, o_entry);
		explicit_bzero(o->o_buf, o->o_len);
		free(o->o_buf);
		free(o);
	}
}

/*
 * Send what the socket takes now.  0 when some or nothing could be sent
 * (see imsgbuf_queued()), -1 with errno on an error of the socket.
 */
int
imsgbuf_write(struct imsgbuf *ib)
{
	union {
		struct cmsghdr	 hdr;
		char		 buf[CMSG_SPACE(sizeof(int))];
	} cmsgbuf;
	struct iovec	 iov[IMSG_IOV_MAX];
	struct msghdr	 msg;
	struct cmsghdr	*cm;
	struct imsg_out	*o, *head;
	ssize_t		 n;
	int		 niov = 0;

	if ((head = TAILQ_FIRST(&ib->ib_wq)) == NULL)
		return (0);
	TAILQ_FOREACH(o, &ib->ib_wq, o_entry) {
		if (niov == IMSG_IOV_MAX || (o != head && o->o_fd != -1))
			break;
		iov[niov].iov_base = o->o_buf + o->o_off;
		iov[niov].iov_len = o->o_len - o->o_off;
		niov++;
	}

	memset(&msg, 0, sizeof(msg));
	msg.msg_iov = iov;
	msg.msg_iovlen = niov;
	if (head->o_fd != -1) {
		memset(&cmsgbuf, 0, sizeof(cmsgbuf));
		msg.msg_control = cmsgbuf.buf;
		msg.msg_controllen = sizeof(cmsgbuf.buf);
		cm = CMSG_FIRSTHDR(&msg);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &head->o_fd, sizeof(int));
	}

	if (ib->ib_sock)
		n = sendmsg(ib->ib_fd, &msg, MSG_NOSIGNAL);
	else
		n = writev(ib->ib_fd, iov, niov);
	if (n == -1) {
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
			return (0);
		return (-1);
	}
	/* The peer has its own copy now; ours was only borrowed for this. */
	if (head->o_fd != -1) {
		close(head->o_fd);
		head->o_fd = -1;
	}
	imsgbuf_sent(ib, (size_t)n);
	return (0);
}

int
imsgbuf_flush(struct imsgbuf *ib)
{
	struct pollfd	 pfd;

	while (ib->ib_queued > 0) {
		if (imsgbuf_write(ib) == -1)
			return (-1);
		if (ib->ib_queued == 0)
			break;
		pfd.fd = ib->ib_fd;
		pfd.events = POLLOUT;
		pfd.revents = 0;
		if (poll(&pfd, 1, -1) == -1) {
			if (errno == EINTR)
				continue;
			return (-1);
		}
		if (pfd.revents & POLLNVAL) {
			errno = EBADF;
			return (-1);
		}
		/* POLLHUP and POLLERR: the next write says what went wrong. */
	}
	return (0);
}

/*
 * Event level.
 *
 * iev_busy counts our handlers on the stack; imsgev_free() called from
 * a callback only marks the imsgev, and the handler that called it does
 * the real free once nothing of it is on the stack any more.
 */
struct imsgev *
imsgev_new(struct event_base *base, int fd, imsgev_dispatch_cb dispatch,
    imsgev_close_cb closecb, void *arg)
{
	struct imsgev	*iev;
	int		 saved;

	if ((iev = calloc(1, sizeof(*iev))) == NULL)
		goto fail;
	iev->iev_fd = fd;
	iev->iev_dispatch = dispatch;
	iev->iev_close = closecb;
	iev->iev_arg = arg;
	if ((iev->iev_ibuf = imsgbuf_new(fd)) == NULL)
		goto fail;
	if ((iev->iev_rev = event_new(base, fd, EV_READ | EV_PERSIST,
	    imsgev_read_cb, iev)) == NULL)
		goto fail;
	if ((iev->iev_wev = event_new(base, fd, EV_WRITE | EV_PERSIST,
	    imsgev_write_cb, iev)) == NULL)
		goto fail;
	if ((iev->iev_fev = event_new(base, -1, 0, imsgev_turn_cb, iev)) ==
	    NULL)
		goto fail;
	if (event_add(iev->iev_rev, NULL) == -1)
		goto fail;
	return (iev);

fail:
	saved = errno;
	if (iev != NULL) {
		if (iev->iev_rev != NULL)
			event_free(iev->iev_rev);
		if (iev->iev_wev != NULL)
			event_free(iev->iev_wev);
		if (iev->iev_fev != NULL)
			event_free(iev->iev_fev);
		imsgbuf_free(iev->iev_ibuf);
		free(iev);
	}
	/* The socket was given to us, so it is ours to close on failure. */
	close(fd);
	errno = saved;
	return (NULL);
}

static void
imsgev_destroy(struct imsgev *iev)
{
	event_free(iev->iev_rev);
	event_free(iev->iev_wev);
	event_free(iev->iev_fev);
	imsgbuf_free(iev->iev_ibuf);
	close(iev->iev_fd);
	free(iev);
}

void
imsgev_free(struct imsgev *iev)
{
	if (iev == NULL || iev->iev_freed)
		return;
	if (iev->iev_busy > 0) {
		iev->iev_freed = 1;
		event_del(iev->iev_rev);
		event_del(iev->iev_wev);
		event_del(iev->iev_fev);
		return;
	}
	imsgev_destroy(iev);
}

static void
imsgev_leave(struct imsgev *iev)
{
	if (--iev->iev_busy == 0 && iev->iev_freed)
		imsgev_destroy(iev);
}

/* The channel is over: stop watching it and say so, exactly once. */
static void
imsgev_lost(struct imsgev *iev, int error)
{
	if (iev->iev_closed || iev->iev_freed)
		return;
	iev->iev_closed = 1;
	event_del(iev->iev_rev);
	event_del(iev->iev_wev);
	event_del(iev->iev_fev);
	if (iev->iev_close != NULL)
		iev->iev_close(iev, error, iev->iev_arg);
}

/*
 * Watch for writability only while something is left that the socket
 * did not take (each change is an epoll_ctl()), and mind the soft bound.
 */
static int
imsgev_arm(struct imsgev *iev)
{
	size_t	 q;

	if (iev->iev_closed || iev->iev_freed)
		return (0);
	q = imsgbuf_queued(iev->iev_ibuf);
	if (imsgev_bound(iev, q) == -1)
		return (-1);
	if (q > 0)
		return (event_add(iev->iev_wev, NULL));
	return (event_del(iev->iev_wev));
}

/*
 * With a soft bound, stop reading while more than it waits to be sent,
 * and read again once half of it went: a peer that does not read what
 * it asked for gets nothing more read from it.
 */
static int
imsgev_bound(struct imsgev *iev, size_t q)
{
	if (iev->iev_soft == 0)
		return (0);
	if (!iev->iev_paused && q > iev->iev_soft) {
		iev->iev_paused = 1;
		if (++iev->iev_npauses == 0)
			iev->iev_npauses = 1;
		if (event_del(iev->iev_rev) == -1)
			return (-1);
	} else if (iev->iev_paused && q <= iev->iev_soft / 2) {
		iev->iev_paused = 0;
		if (event_add(iev->iev_rev, NULL) == -1)
			return (-1);
		/* What was read before the pause comes first. */
		event_active(iev->iev_rev, EV_READ, 1);
	}
	return (0);
}

/* Take and dispatch the whole frames already read, unless paused. */
static void
imsgev_process(struct imsgev *iev)
{
	struct imsg	 imsg;
	int		 r;

	while (!iev->iev_freed && !iev->iev_closed && !iev->iev_paused) {
		if ((r = imsgbuf_get(iev->iev_ibuf, &imsg)) == 0)
			break;
		if (r == -1) {
			imsgev_lost(iev, errno);
			break;
		}
		iev->iev_dispatch(iev, &imsg, iev->iev_arg);
		imsg_free(&imsg);
	}
}

void
imsgev_set_bounds(struct imsgev *iev, size_t soft, size_t hard)
{
	iev->iev_soft = soft;
	imsgbuf_set_queue_max(iev->iev_ibuf, hard);
}

/* 0 while reading, else which pause this is (it changes with each). */
unsigned int
imsgev_paused(struct imsgev *iev)
{
	return (iev->iev_paused ? iev->iev_npauses : 0);
}

static void
imsgev_read_cb(evutil_socket_t fd, short events, void *arg)
{
	struct imsgev	*iev = arg;
	struct imsgbuf	*ib = iev->iev_ibuf;
	ssize_t		 n;

	iev->iev_busy++;
	if (iev->iev_paused)
		goto done;
	/* Frames read before a pause: theirs is the turn, then read. */
	imsgev_process(iev);
	if (iev->iev_freed || iev->iev_closed || iev->iev_paused)
		goto done;
	if ((n = imsgbuf_read(ib)) == -1) {
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			imsgev_lost(iev, errno);
		goto done;
	}
	imsgev_process(iev);
	/*
	 * End of stream.  Between frames it is a clean close; in the middle
	 * of one, or with descriptors nobody claimed, the peer broke off.
	 * Paused with whole frames left, it is seen again on the next read.
	 */
	if (n == 0 && !iev->iev_freed && !iev->iev_closed && !iev->iev_paused)
		imsgev_lost(iev, ib->ib_rend > ib->ib_rstart ||
		    ib->ib_nrfds > 0 ? EBADMSG : 0);
done:
	imsgev_leave(iev);
}

/* Write what is queued; the write event stays armed for what is left. */
static void
imsgev_write_queued(struct imsgev *iev)
{
	iev->iev_busy++;
	if (imsgbuf_write(iev->iev_ibuf) == -1)
		imsgev_lost(iev, errno);
	else if (imsgev_arm(iev) == -1)
		imsgev_lost(iev, errno ? errno : EIO);
	imsgev_leave(iev);
}

static void
imsgev_write_cb(evutil_socket_t fd, short events, void *arg)
{
	imsgev_write_queued(arg);
}

/*
 * The frame is queued, and written on this turn of the loop, once the
 * callback that composed it (and whatever else it composes: one
 * sendmsg() for them all) has returned: imsgev_turn_cb(), an event
 * made active, which costs no system call.  The write event is armed
 * only for what the socket does not take then, so a message costs no
 * epoll_ctl() on a socket with room (it cost two: armed here, disarmed
 * once written).  The order of frames and their descriptors is the
 * queue's, whoever writes.
 */
int
imsgev_compose(struct imsgev *iev, uint32_t type, uint32_t peerid,
    uint32_t pid, int fd, const void *data, size_t len)
{
	if (iev->iev_closed || iev->iev_freed) {
		if (fd != -1)
			close(fd);
		errno = EPIPE;
		return (-1);
	}
	if (imsgbuf_compose(iev->iev_ibuf, type, peerid, pid, fd, data,
	    len) == -1)
		return (-1);
	if (imsgev_bound(iev, imsgbuf_queued(iev->iev_ibuf)) == -1)
		return (-1);
	/* Armed: the socket is full, and its event writes when it can. */
	if (!event_pending(iev->iev_wev, EV_WRITE, NULL))
		event_active(iev->iev_fev, EV_TIMEOUT, 1);
	return (0);
}

/* What this turn composed (imsgev_compose()), written now. */
static void
imsgev_turn_cb(evutil_socket_t fd, short events, void *arg)
{
	struct imsgev	*iev = arg;

	if (iev->iev_closed || iev->iev_freed ||
	    imsgbuf_queued(iev->iev_ibuf) == 0)
		return;
	imsgev_write_queued(iev);
}

/* Blocks until all is sent; errors are the caller's to handle. */
int
imsgev_flush(struct imsgev *iev)
{
	int	 r, saved;

	if (iev->iev_closed || iev->iev_freed) {
		errno = EPIPE;
		return (-1);
	}
	r = imsgbuf_flush(iev->iev_ibuf);
	saved = errno;
	imsgev_arm(iev);
	errno = saved;
	return (r);
}

/*
 * Write what is queued now, not once the callback has returned (nothing
 * the caller does next, a fork say, delays it).  Never blocks.  An
 * error is not acted on here: this turn's write (imsgev_turn_cb()) finds
 * it again and closes from the loop, so no close callback ever runs
 * inside a caller's compose.
 */
void
imsgev_push(struct imsgev *iev)
{
	if (iev->iev_closed || iev->iev_freed ||
	    imsgbuf_queued(iev->iev_ibuf) == 0)
		return;
	if (imsgbuf_write(iev->iev_ibuf) == -1) {
		event_active(iev->iev_fev, EV_TIMEOUT, 1);
		return;
	}
	(void)imsgev_arm(iev);
}

struct imsgbuf *
imsgev_buf(struct imsgev *iev)
{
	return (iev->iev_ibuf);
}

void *
imsgev_arg(struct imsgev *iev)
{
	return (iev->iev_arg);
}
