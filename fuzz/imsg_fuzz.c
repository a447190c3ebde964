/*
 * libFuzzer target for the imsg framing (imsg/imsg.c): a peer's byte
 * stream, cut into writes and carrying descriptors where the input
 * says, is read with imsgbuf_read() and taken apart with imsgbuf_get()
 * over a real socketpair, as every channel of the daemon reads.
 *
 * The first input byte seeds how the rest is cut and where descriptors
 * ride; the rest is the stream.  Invariants: every message taken is the
 * next ih_len bytes of the stream, header and payload, with a length in
 * bounds; a descriptor comes with a message exactly when IMSGF_HASFD
 * says, open and close-on-exec; an error is sticky; a message taken and
 * sent again with imsgbuf_compose() arrives the same; and when it is
 * all freed no descriptor is left open.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "imsg.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static int	devnull = -1;

/* A small deterministic generator: the input decides, nothing else. */
static uint32_t
fuzz_next(uint32_t *st)
{
	*st = *st * 1103515245U + 12345U;
	return (*st >> 16);
}


static void
fuzz_send(int s, const uint8_t *p, size_t n, int nfds)
{
	union {
		struct cmsghdr	 hdr;
		char		 buf[CMSG_SPACE(sizeof(int) * 2)];
	} cm;
	struct msghdr	 msg;
	struct iovec	 iov;
	struct cmsghdr	*c;
	int		 fds[2], i;

	memset(&msg, 0, sizeof(msg));
	iov.iov_base = (void *)p;
	iov.iov_len = n;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	if (nfds > 0) {
		memset(&cm, 0, sizeof(cm));
		for (i = 0; i < nfds; i++)
			if ((fds[i] = dup(devnull)) == -1)
				FUZZ_FAIL();
		msg.msg_control = cm.buf;
		msg.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
	}
	if (sendmsg(s, &msg, 0) != (ssize_t)n)
		FUZZ_FAIL();
	for (i = 0; i < nfds; i++)
		close(fds[i]);
}

/* Send one message again through compose, and check it arrives whole. */
static void
fuzz_echo(const struct imsg *m)
{
	struct imsgbuf	*wb, *rb;
	struct imsg	 back;
	int		 sv[2], fd = -1, r;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1)
		FUZZ_FAIL();
	if ((wb = imsgbuf_new(sv[0])) == NULL ||
	    (rb = imsgbuf_new(sv[1])) == NULL)
		FUZZ_FAIL();
	if (m->fd != -1 && (fd = dup(m->fd)) == -1)
		FUZZ_FAIL();
	if (imsgbuf_compose(wb, m->hdr.ih_type, m->hdr.ih_peerid,
	    m->hdr.ih_pid, fd, m->data, m->len) == -1 ||
	    imsgbuf_flush(wb) == -1)
		FUZZ_FAIL();
	for (;;) {
		if ((r = imsgbuf_get(rb, &back)) == -1)
			FUZZ_FAIL();
		if (r == 1)
			break;
		if (imsgbuf_read(rb) <= 0)
			FUZZ_FAIL();
	}
	if (back.hdr.ih_type != m->hdr.ih_type ||
	    back.hdr.ih_peerid != m->hdr.ih_peerid ||
	    back.hdr.ih_pid != m->hdr.ih_pid ||
	    back.hdr.ih_len != m->hdr.ih_len ||
	    back.hdr.ih_flags != m->hdr.ih_flags ||
	    back.len != m->len ||
	    (m->len > 0 && memcmp(back.data, m->data, m->len) != 0) ||
	    (back.fd == -1) != (m->fd == -1))
		FUZZ_FAIL();
	imsg_free(&back);
	imsgbuf_free(wb);
	imsgbuf_free(rb);
	close(sv[0]);
	close(sv[1]);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct imsgbuf	*ib;
	struct imsg	 m;
	const uint8_t	*stream;
	size_t		 len, sent = 0, taken = 0, chunk;
	uint32_t	 st;
	ssize_t		 n;
	uint64_t	 fds_before;
	int		 sv[2], r, failed = 0, nfds;

	if (size < 1)
		return (0);
	if (devnull == -1 &&
	    (devnull = open("/dev/null", O_RDONLY | O_CLOEXEC)) == -1)
		FUZZ_FAIL();
	st = data[0];
	stream = data + 1;
	len = size - 1;
	fds_before = fuzz_open_fds();

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1)
		FUZZ_FAIL();
	if ((ib = imsgbuf_new(sv[1])) == NULL)
		FUZZ_FAIL();
	while (sent < len) {
		/* Cuts of 1 to 512 bytes, a descriptor on one in four. */
		chunk = 1 + fuzz_next(&st) % 512;
		if (chunk > len - sent)
			chunk = len - sent;
		nfds = fuzz_next(&st) % 8;
		nfds = nfds == 0 ? 1 : nfds == 1 ? 2 : 0;
		fuzz_send(sv[0], stream + sent, chunk, nfds);
		sent += chunk;
		while ((n = imsgbuf_read(ib)) > 0)
			;
		if (n == 0)
			FUZZ_FAIL();	/* the writer is still open */
		if (n == -1 && errno != EAGAIN) {
			/* Broken for good: the next get says so too. */
			if (imsgbuf_get(ib, &m) != -1)
				FUZZ_FAIL();
			failed = 1;
			break;
		}
		while ((r = imsgbuf_get(ib, &m)) == 1) {
			if (m.hdr.ih_len < IMSG_HDR_SIZE ||
			    m.hdr.ih_len > IMSG_MAX_SIZE ||
			    m.len != m.hdr.ih_len - IMSG_HDR_SIZE ||
			    (m.len == 0) != (m.data == NULL) ||
			    taken + m.hdr.ih_len > sent ||
			    memcmp(&m.hdr, stream + taken,
			    IMSG_HDR_SIZE) != 0 ||
			    (m.len > 0 && memcmp(m.data, stream + taken +
			    IMSG_HDR_SIZE, m.len) != 0))
				FUZZ_FAIL();
			if ((m.hdr.ih_flags & IMSGF_HASFD) ?
			    (m.fd < 0 || fcntl(m.fd, F_GETFD) != FD_CLOEXEC) :
			    m.fd != -1)
				FUZZ_FAIL();
			taken += m.hdr.ih_len;
			fuzz_echo(&m);
			imsg_free(&m);
		}
		if (r == -1) {
			if (errno != EBADMSG && errno != EMSGSIZE)
				FUZZ_FAIL();
			if (imsgbuf_get(ib, &m) != -1 ||
			    imsgbuf_read(ib) != -1)
				FUZZ_FAIL();
			failed = 1;
			break;
		}
	}
	if (!failed && taken > sent)
		FUZZ_FAIL();
	imsgbuf_free(ib);
	close(sv[0]);
	close(sv[1]);
	/* Every descriptor that came is closed again. */
	FUZZ_CHECK(fuzz_open_fds() == fds_before);
	return (0);
}
