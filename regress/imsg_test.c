/*
 * imsg_test: framing, buffered I/O, descriptor passing and the libevent
 * wrapper of imsg/imsg.c, over real socketpairs.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <atf-c.h>
#include <event2/event.h>

#include "imsg.h"
#include "imsg_impl.h"

/* Descriptors open in this process, to prove nothing leaked. */
static int
fds_open(void)
{
	DIR		*d;
	struct dirent	*de;
	int		 n = 0;

	ATF_REQUIRE((d = opendir("/proc/self/fd")) != NULL);
	while ((de = readdir(d)) != NULL)
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return (n - 1);		/* the directory's own */
}

static int
fd_is_open(int fd)
{
	return (fcntl(fd, F_GETFD) != -1 || errno != EBADF);
}

static void
mkpair(int sv[2])
{
	ATF_REQUIRE(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0,
	    sv) == 0);
}

/*
 * Send one hand-made frame, optionally with descriptors, bypassing
 * imsgbuf_compose() so the tests can say what a broken peer says.
 */
static void
raw_send(int s, const void *buf, size_t len, const int *fds, size_t nfds)
{
	char		 cbuf[CMSG_SPACE(sizeof(int) * 32)];
	struct msghdr	 msg;
	struct iovec	 iov;
	struct cmsghdr	*cm;

	ATF_REQUIRE(nfds <= 32);
	memset(&msg, 0, sizeof(msg));
	memset(cbuf, 0, sizeof(cbuf));
	iov.iov_base = (void *)buf;
	iov.iov_len = len;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	if (nfds > 0) {
		msg.msg_control = cbuf;
		msg.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		cm = CMSG_FIRSTHDR(&msg);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * nfds);
	}
	ATF_REQUIRE_EQ((ssize_t)len, sendmsg(s, &msg, MSG_NOSIGNAL));
}

static void
raw_hdr(int s, uint32_t type, uint32_t len, uint16_t flags, uint16_t pad)
{
	struct imsg_hdr	 h;

	memset(&h, 0, sizeof(h));
	h.ih_type = type;
	h.ih_len = len;
	h.ih_flags = flags;
	h.ih_pad = pad;
	raw_send(s, &h, sizeof(h), NULL, 0);
}

/* A whole frame of type with plen bytes of payload (all 'x'). */
static void
raw_frame(int s, uint32_t type, size_t plen, uint16_t flags, int fd)
{
	unsigned char	*buf;
	struct imsg_hdr	 h;

	ATF_REQUIRE((buf = malloc(sizeof(h) + plen)) != NULL);
	memset(&h, 0, sizeof(h));
	h.ih_type = type;
	h.ih_len = sizeof(h) + plen;
	h.ih_flags = flags;
	memcpy(buf, &h, sizeof(h));
	memset(buf + sizeof(h), 'x', plen);
	raw_send(s, buf, sizeof(h) + plen, fd == -1 ? NULL : &fd,
	    fd == -1 ? 0 : 1);
	free(buf);
}

/*
 * Move frames from a to b until b yields one (1) or fails (-1).  Both
 * sides are non-blocking and in this one thread, so alternate.
 */
static int
pump(struct imsgbuf *a, struct imsgbuf *b, struct imsg *m)
{
	struct pollfd	 pfd;
	ssize_t		 n;
	int		 r;

	for (;;) {
		if ((r = imsgbuf_get(b, m)) != 0)
			return (r);
		if (imsgbuf_write(a) == -1)
			return (-1);
		n = imsgbuf_read(b);
		if (n == 0)
			return (-1);
		if (n == -1 && errno != EAGAIN)
			return (-1);
		if (n == -1 && imsgbuf_queued(a) == 0) {
			/* Nothing on the way: wait briefly, then give up. */
			pfd.fd = imsgbuf_fd(b);
			pfd.events = POLLIN;
			if (poll(&pfd, 1, 2000) != 1)
				return (-1);
		}
	}
}

ATF_TC(roundtrip);
ATF_TC_HEAD(roundtrip, tc)
{
	atf_tc_set_md_var(tc, "descr", "Header fields and payloads come "
	    "out of imsgbuf_get() as they went into imsgbuf_compose()");
}
ATF_TC_BODY(roundtrip, tc)
{
	struct imsgbuf	*a, *b;
	struct imsg	 m;
	int		 sv[2], base;
	char		 big[5000];

	base = fds_open();
	mkpair(sv);
	ATF_REQUIRE((a = imsgbuf_new(sv[0])) != NULL);
	ATF_REQUIRE((b = imsgbuf_new(sv[1])) != NULL);
	ATF_REQUIRE(fcntl(sv[0], F_GETFL) & O_NONBLOCK);
	ATF_REQUIRE(fcntl(sv[1], F_GETFL) & O_NONBLOCK);

	memset(big, 'B', sizeof(big));
	ATF_REQUIRE_EQ(0, imsgbuf_compose(a, 7, 11, 13, -1, "hello", 5));
	ATF_REQUIRE_EQ(0, imsgbuf_compose(a, 8, 0, 0, -1, NULL, 0));
	ATF_REQUIRE_EQ(0, imsgbuf_compose(a, UINT32_MAX, UINT32_MAX,
	    UINT32_MAX, -1, big, sizeof(big)));
	ATF_REQUIRE_EQ(3 * IMSG_HDR_SIZE + 5 + sizeof(big),
	    imsgbuf_queued(a));
	ATF_REQUIRE_EQ(0, imsgbuf_flush(a));
	ATF_REQUIRE_EQ(0, imsgbuf_queued(a));

	ATF_REQUIRE_EQ(1, pump(a, b, &m));
	ATF_REQUIRE_EQ(7, m.hdr.ih_type);
	ATF_REQUIRE_EQ(11, m.hdr.ih_peerid);
	ATF_REQUIRE_EQ(13, m.hdr.ih_pid);
	ATF_REQUIRE_EQ(0, m.hdr.ih_flags);
	ATF_REQUIRE_EQ(IMSG_HDR_SIZE + 5, m.hdr.ih_len);
	ATF_REQUIRE_EQ(5, m.len);
	ATF_REQUIRE_EQ(-1, m.fd);
	ATF_REQUIRE(memcmp(m.data, "hello", 5) == 0);
	imsg_free(&m);

	ATF_REQUIRE_EQ(1, pump(a, b, &m));
	ATF_REQUIRE_EQ(8, m.hdr.ih_type);
	ATF_REQUIRE_EQ(0, m.len);
	ATF_REQUIRE(m.data == NULL);
	imsg_free(&m);

	ATF_REQUIRE_EQ(1, pump(a, b, &m));
	ATF_REQUIRE_EQ(UINT32_MAX, m.hdr.ih_type);
	ATF_REQUIRE_EQ(UINT32_MAX, m.hdr.ih_peerid);
	ATF_REQUIRE_EQ(UINT32_MAX, m.hdr.ih_pid);
	ATF_REQUIRE_EQ(sizeof(big), m.len);
	ATF_REQUIRE(memcmp(m.data, big, sizeof(big)) == 0);
	imsg_free(&m);

	ATF_REQUIRE_EQ(0, imsgbuf_get(b, &m));
	imsgbuf_free(a);
	imsgbuf_free(b);
	close(sv[0]);
	close(sv[1]);
	ATF_REQUIRE_EQ(base, fds_open());
}

/* How many times secret (len bytes) is in b's read buffer, anywhere. */
static int
rbuf_holds(struct imsgbuf *b, const unsigned char *secret, size_t len)
{
	size_t	 i;
	int	 n = 0;

	for (i = 0; b->ib_rbuf != NULL && i + len <= b->ib_rsize; i++)
		if (memcmp(b->ib_rbuf + i, secret, len) == 0)
			n++;
	return (n);
}

ATF_TC(rbuf_freed);
ATF_TC_HEAD(rbuf_freed, tc)
{
	atf_tc_set_md_var(tc, "descr", "The read buffer a big frame made "
	    "grow is freed as soon as the frame is taken, not at the next "
	    "read a quiet peer may never give");
}
ATF_TC_BODY(rbuf_freed, tc)
{
	static unsigned char payload[256 * 1024];
	struct imsgbuf	*a, *b;
	struct imsg	 m;
	int		 sv[2], r;

	mkpair(sv);
	ATF_REQUIRE((a = imsgbuf_new(sv[0])) != NULL);
	ATF_REQUIRE((b = imsgbuf_new(sv[1])) != NULL);
	memset(payload, 'x', sizeof(payload));
	ATF_REQUIRE_EQ(0, imsgbuf_compose(a, 7, 0, 0, -1, payload,
	    sizeof(payload)));
	while ((r = imsgbuf_get(b, &m)) == 0) {
		(void)imsgbuf_write(a);
		(void)imsgbuf_read(b);
	}
	ATF_REQUIRE_EQ(1, r);
	ATF_REQUIRE_EQ(sizeof(payload), m.len);
	imsg_free(&m);
	ATF_REQUIRE(b->ib_rbuf == NULL);
	ATF_REQUIRE_EQ(0, (int)b->ib_rsize);
	/* And the next frame is read as ever. */
	ATF_REQUIRE_EQ(0, imsgbuf_compose(a, 8, 0, 0, -1, "hi", 2));
	while ((r = imsgbuf_get(b, &m)) == 0) {
		(void)imsgbuf_write(a);
		(void)imsgbuf_read(b);
	}
	ATF_REQUIRE_EQ(1, r);
	ATF_REQUIRE_EQ(8, (int)m.hdr.ih_type);
	imsg_free(&m);
	imsgbuf_free(a);
	imsgbuf_free(b);
	close(sv[0]);
	close(sv[1]);
}

ATF_TC(rbuf_wiped);
ATF_TC_HEAD(rbuf_wiped, tc)
{
	atf_tc_set_md_var(tc, "descr", "A frame taken out of the read "
	    "buffer, and the old copy of a partial frame moved down, leave "
	    "no trace of their payload (a bearer) in it");
}
ATF_TC_BODY(rbuf_wiped, tc)
{
	struct imsgbuf	*b;
	struct imsg	 m;
	struct imsg_hdr	 h;
	unsigned char	 secret[32], frame[sizeof(h) + sizeof(secret)];
	size_t		 i, half;
	int		 sv[2];

	for (i = 0; i < sizeof(secret); i++)
		secret[i] = (unsigned char)(0xa0 ^ (i * 7));
	memset(&h, 0, sizeof(h));
	h.ih_type = 42;
	h.ih_len = sizeof(frame);
	memcpy(frame, &h, sizeof(h));
	memcpy(frame + sizeof(h), secret, sizeof(secret));
	half = sizeof(h) + sizeof(secret) / 2;

	mkpair(sv);
	ATF_REQUIRE((b = imsgbuf_new(sv[1])) != NULL);

	/* One whole frame and half of the next in one read. */
	raw_send(sv[0], frame, sizeof(frame), NULL, 0);
	raw_send(sv[0], frame, half, NULL, 0);
	ATF_REQUIRE_EQ((ssize_t)(sizeof(frame) + half), imsgbuf_read(b));
	ATF_REQUIRE_EQ(1, rbuf_holds(b, secret, sizeof(secret)));
	ATF_REQUIRE_EQ(1, imsgbuf_get(b, &m));
	ATF_REQUIRE(memcmp(m.data, secret, sizeof(secret)) == 0);
	imsg_free(&m);
	ATF_REQUIRE(m.data == NULL);
	ATF_REQUIRE_EQ(0, rbuf_holds(b, secret, sizeof(secret)));
	ATF_REQUIRE_EQ(0, imsgbuf_get(b, &m));

	/* The rest: the half moves to the front, its old copy goes. */
	raw_send(sv[0], frame + half, sizeof(frame) - half, NULL, 0);
	ATF_REQUIRE_EQ((ssize_t)(sizeof(frame) - half), imsgbuf_read(b));
	ATF_REQUIRE_EQ(1, rbuf_holds(b, secret, sizeof(secret)));
	ATF_REQUIRE(memmem(b->ib_rbuf + b->ib_rend, b->ib_rsize - b->ib_rend,
	    secret, sizeof(secret) / 2) == NULL);
	ATF_REQUIRE_EQ(1, imsgbuf_get(b, &m));
	ATF_REQUIRE(memcmp(m.data, secret, sizeof(secret)) == 0);
	imsg_free(&m);
	ATF_REQUIRE_EQ(0, rbuf_holds(b, secret, sizeof(secret)));
	/* Emptied, a grown buffer is freed at once (wiped as it went). */
	ATF_REQUIRE(b->ib_rbuf == NULL || memmem(b->ib_rbuf, b->ib_rsize,
	    secret, sizeof(secret) / 2) == NULL);

	imsgbuf_free(b);
	close(sv[0]);
	close(sv[1]);
}

ATF_TC(split_bytes);
ATF_TC_HEAD(split_bytes, tc)
{
	atf_tc_set_md_var(tc, "descr", "Frames arriving one byte per read "
	    "are only returned once complete, and then intact");
}
ATF_TC_BODY(split_bytes, tc)
{
	struct imsgbuf	*a, *b;
	struct imsg	 m;
	unsigned char	 wire[512];
	int		 s1[2], s2[2], got = 0;
	ssize_t		 n, i;

	mkpair(s1);
	mkpair(s2);
	ATF_REQUIRE((a = imsgbuf_new(s1[0])) != NULL);
	ATF_REQUIRE((b = imsgbuf_new(s2[1])) != NULL);
	ATF_REQUIRE_EQ(0, imsgbuf_compose(a, 1, 0, 0, -1, "first", 5));
	ATF_REQUIRE_EQ(0, imsgbuf_compose(a, 2, 0, 0, -1, "second!", 7));
	ATF_REQUIRE_EQ(0, imsgbuf_flush(a));
	n = read(s1[1], wire, sizeof(wire));
	ATF_REQUIRE_EQ((ssize_t)(2 * IMSG_HDR_SIZE + 12), n);

	for (i = 0; i < n; i++) {
		ATF_REQUIRE_EQ(1, write(s2[0], &wire[i], 1));
		ATF_REQUIRE_EQ(1, imsgbuf_read(b));
		if (i + 1 == (ssize_t)(IMSG_HDR_SIZE + 5) || i + 1 == n) {
			ATF_REQUIRE_EQ(1, imsgbuf_get(b, &m));
			got++;
			ATF_REQUIRE_EQ((uint32_t)got, m.hdr.ih_type);
			ATF_REQUIRE(memcmp(m.data, got == 1 ? "first" :
			    "second!", m.len) == 0);
			imsg_free(&m);
		}
		ATF_REQUIRE_EQ(0, imsgbuf_get(b, &m));
	}
	ATF_REQUIRE_EQ(2, got);
	imsgbuf_free(a);
	imsgbuf_free(b);
	close(s1[0]);
	close(s1[1]);
	close(s2[0]);
	close(s2[1]);
}

ATF_TC(many_in_one_read);
ATF_TC_HEAD(many_in_one_read, tc)
{
	atf_tc_set_md_var(tc, "descr", "Many frames taken in by a single "
	    "read all come out, in order");
}
ATF_TC_BODY(many_in_one_read, tc)
{
	struct imsgbuf	*a, *b;
	struct imsg	 m;
	uint32_t	 i, v;
	int		 sv[2];
	ssize_t		 n;

	mkpair(sv);
	ATF_REQUIRE((a = imsgbuf_new(sv[0])) != NULL);
	ATF_REQUIRE((b = imsgbuf_new(sv[1])) != NULL);
	for (i = 0; i < 200; i++)
		ATF_REQUIRE_EQ(0, imsgbuf_compose(a, 100, i, 0, -1, &i,
		    sizeof(i)));
	ATF_REQUIRE_EQ(0, imsgbuf_flush(a));
	n = imsgbuf_read(b);
	ATF_REQUIRE_EQ((ssize_t)(200 * (IMSG_HDR_SIZE + sizeof(i))), n);
	for (i = 0; i < 200; i++) {
		ATF_REQUIRE_EQ(1, imsgbuf_get(b, &m));
		ATF_REQUIRE_EQ(i, m.hdr.ih_peerid);
		ATF_REQUIRE_EQ(sizeof(v), m.len);
		memcpy(&v, m.data, sizeof(v));
		ATF_REQUIRE_EQ(i, v);
		imsg_free(&m);
	}
	ATF_REQUIRE_EQ(0, imsgbuf_get(b, &m));
	ATF_REQUIRE_EQ(-1, imsgbuf_read(b));
	ATF_REQUIRE_EQ(EAGAIN, errno);
	imsgbuf_free(a);
	imsgbuf_free(b);
	close(sv[0]);
	close(sv[1]);
}

ATF_TC(fd_pass);
ATF_TC_HEAD(fd_pass, tc)
{
	atf_tc_set_md_var(tc, "descr", "A descriptor arrives as a working, "
	    "close-on-exec duplicate and the sender's copy is closed");
}
ATF_TC_BODY(fd_pass, tc)
{
	struct imsgbuf	*a, *b;
	struct imsg	 m;
	int		 sv[2], p[2], base;
	char		 c;

	base = fds_open();
	mkpair(sv);
	ATF_REQUIRE(pipe(p) == 0);	/* no O_CLOEXEC on purpose */
	ATF_REQUIRE((a = imsgbuf_new(sv[0])) != NULL);
	ATF_REQUIRE((b = imsgbuf_new(sv[1])) != NULL);
	ATF_REQUIRE_EQ(0, imsgbuf_compose(a, 5, 0, 0, p[1], "w", 1));
	ATF_REQUIRE(fd_is_open(p[1]));
	ATF_REQUIRE_EQ(0, imsgbuf_flush(a));
	ATF_REQUIRE_MSG(!fd_is_open(p[1]), "sent fd not closed");

	ATF_REQUIRE_EQ(1, pump(a, b, &m));
	ATF_REQUIRE_EQ(IMSGF_HASFD, m.hdr.ih_flags);
	ATF_REQUIRE(m.fd >= 0);
	ATF_REQUIRE(fcntl(m.fd, F_GETFD) & FD_CLOEXEC);
	ATF_REQUIRE_EQ(1, write(m.fd, "z", 1));
	ATF_REQUIRE_EQ(1, read(p[0], &c, 1));
	ATF_REQUIRE_EQ('z', c);
	imsg_free(&m);
	ATF_REQUIRE_EQ(-1, m.fd);
	/* The last write end is gone: the pipe reads EOF. */
	ATF_REQUIRE_EQ(0, read(p[0], &c, 1));

	imsgbuf_free(a);
	imsgbuf_free(b);
	close(sv[0]);
	close(sv[1]);
	close(p[0]);
	ATF_REQUIRE_EQ(base, fds_open());
}

ATF_TC(fd_interleaved);
ATF_TC_HEAD(fd_interleaved, tc)
{
	atf_tc_set_md_var(tc, "descr", "Descriptors mixed with plain frames "
	    "each reach the frame they were sent with");
}
ATF_TC_BODY(fd_interleaved, tc)
{
	static const int has[] = { 0, 1, 0, 1, 1, 0, 0, 1 };
	struct imsgbuf	*a, *b;
	struct imsg	 m;
	int		 sv[2], rd[8], p[2], base, fd;
	size_t		 i;
	char		 c;

	base = fds_open();
	mkpair(sv);
	ATF_REQUIRE((a = imsgbuf_new(sv[0])) != NULL);
	ATF_REQUIRE((b = imsgbuf_new(sv[1])) != NULL);
	for (i = 0; i < 8; i++) {
		fd = -1;
		rd[i] = -1;
		if (has[i]) {
			ATF_REQUIRE(pipe(p) == 0);
			rd[i] = p[0];
			fd = p[1];
		}
		ATF_REQUIRE_EQ(0, imsgbuf_compose(a, 1, (uint32_t)i, 0, fd,
		    "abc", 3));
	}
	ATF_REQUIRE_EQ(0, imsgbuf_flush(a));
	for (i = 0; i < 8; i++) {
		ATF_REQUIRE_EQ(1, pump(a, b, &m));
		ATF_REQUIRE_EQ(i, m.hdr.ih_peerid);
		if (!has[i]) {
			ATF_REQUIRE_EQ(-1, m.fd);
			imsg_free(&m);
			continue;
		}
		ATF_REQUIRE(m.fd >= 0);
		c = (char)('0' + i);
		ATF_REQUIRE_EQ(1, write(m.fd, &c, 1));
		imsg_free(&m);
		ATF_REQUIRE_EQ(1, read(rd[i], &c, 1));
		ATF_REQUIRE_EQ((char)('0' + i), c);
		close(rd[i]);
	}
	imsgbuf_free(a);
	imsgbuf_free(b);
	close(sv[0]);
	close(sv[1]);
	ATF_REQUIRE_EQ(base, fds_open());
}

ATF_TC(fd_missing);
ATF_TC_HEAD(fd_missing, tc)
{
	atf_tc_set_md_var(tc, "descr", "A frame flagged IMSGF_HASFD that "
	    "came without a descriptor is EBADMSG");
}
ATF_TC_BODY(fd_missing, tc)
{
	struct imsgbuf	*b;
	struct imsg	 m;
	int		 sv[2];

	mkpair(sv);
	ATF_REQUIRE((b = imsgbuf_new(sv[1])) != NULL);
	raw_frame(sv[0], 1, 4, IMSGF_HASFD, -1);
	ATF_REQUIRE(imsgbuf_read(b) > 0);
	ATF_REQUIRE_EQ(-1, imsgbuf_get(b, &m));
	ATF_REQUIRE_EQ(EBADMSG, errno);
	imsgbuf_free(b);
	close(sv[0]);
	close(sv[1]);
}

ATF_TC(fd_stray);
ATF_TC_HEAD(fd_stray, tc)
{
	atf_tc_set_md_var(tc, "descr", "A descriptor no frame claims is a "
	    "protocol error, and is closed rather than leaked");
}
ATF_TC_BODY(fd_stray, tc)
{
	struct imsgbuf	*b;
	struct imsg	 m;
	int		 sv[2], p[2], base;

	base = fds_open();
	mkpair(sv);
	ATF_REQUIRE(pipe2(p, O_CLOEXEC) == 0);
	ATF_REQUIRE((b = imsgbuf_new(sv[1])) != NULL);
	raw_frame(sv[0], 1, 4, 0, p[1]);	/* fd, but no flag */
	raw_frame(sv[0], 2, 4, 0, -1);
	close(p[1]);

	while (imsgbuf_read(b) > 0)
		;
	ATF_REQUIRE_EQ(EAGAIN, errno);
	ATF_REQUIRE_EQ(1, imsgbuf_get(b, &m));
	ATF_REQUIRE_EQ(-1, m.fd);
	imsg_free(&m);
	ATF_REQUIRE_EQ(-1, imsgbuf_get(b, &m));
	ATF_REQUIRE_EQ(EBADMSG, errno);
	/* Sticky: the stream is not trusted again. */
	ATF_REQUIRE_EQ(-1, imsgbuf_get(b, &m));
	ATF_REQUIRE_EQ(EBADMSG, errno);
	ATF_REQUIRE_EQ(base + 4, fds_open());	/* sv, p[0], stray */
	imsgbuf_free(b);
	close(sv[0]);
	close(sv[1]);
	close(p[0]);
	ATF_REQUIRE_EQ(base, fds_open());
}

ATF_TC(fd_ctrunc);
ATF_TC_HEAD(fd_ctrunc, tc)
{
	atf_tc_set_md_var(tc, "descr", "More descriptors in one message "
	    "than the control buffer holds: EBADMSG, none leaked");
}
ATF_TC_BODY(fd_ctrunc, tc)
{
	struct imsgbuf	*b;
	int		 sv[2], p[2], fds[24], base;
	size_t		 i;

	base = fds_open();
	mkpair(sv);
	ATF_REQUIRE(pipe2(p, O_CLOEXEC) == 0);
	for (i = 0; i < 24; i++)
		fds[i] = p[1];
	ATF_REQUIRE((b = imsgbuf_new(sv[1])) != NULL);
	raw_send(sv[0], "x", 1, fds, 24);
	ATF_REQUIRE_EQ(-1, imsgbuf_read(b));
	ATF_REQUIRE_EQ(EBADMSG, errno);
	ATF_REQUIRE_EQ(-1, imsgbuf_read(b));
	ATF_REQUIRE_EQ(EBADMSG, errno);
	ATF_REQUIRE_EQ(base + 4, fds_open());
	imsgbuf_free(b);
	close(sv[0]);
	close(sv[1]);
	close(p[0]);
	close(p[1]);
	ATF_REQUIRE_EQ(base, fds_open());
}

ATF_TC(fd_too_many);
ATF_TC_HEAD(fd_too_many, tc)
{
	atf_tc_set_md_var(tc, "descr", "Descriptors piling up unclaimed "
	    "beyond the bound are refused, none leaked");
}
ATF_TC_BODY(fd_too_many, tc)
{
	struct imsgbuf	*b;
	int		 sv[2], p[2], base, i, err = 0;
	ssize_t		 n;

	base = fds_open();
	mkpair(sv);
	ATF_REQUIRE(pipe2(p, O_CLOEXEC) == 0);
	ATF_REQUIRE((b = imsgbuf_new(sv[1])) != NULL);
	for (i = 0; i < 40; i++)
		raw_frame(sv[0], 1, 0, IMSGF_HASFD, p[1]);
	/* Read without taking frames: the queue of fds only grows. */
	for (i = 0; i < 40; i++) {
		if ((n = imsgbuf_read(b)) == -1) {
			err = errno;
			break;
		}
		ATF_REQUIRE(n > 0);
	}
	ATF_REQUIRE_EQ(EBADMSG, err);
	ATF_REQUIRE(i >= 16 && i < 40);
	imsgbuf_free(b);
	close(sv[0]);
	close(sv[1]);		/* the kernel drops what was never read */
	close(p[0]);
	close(p[1]);
	ATF_REQUIRE_EQ(base, fds_open());
}

ATF_TC(frame_oversized);
ATF_TC_HEAD(frame_oversized, tc)
{
	atf_tc_set_md_var(tc, "descr", "A header claiming more than "
	    "IMSG_MAX_SIZE is EMSGSIZE at once, without waiting for it");
}
ATF_TC_BODY(frame_oversized, tc)
{
	struct imsgbuf	*b;
	struct imsg	 m;
	int		 sv[2];

	mkpair(sv);
	ATF_REQUIRE((b = imsgbuf_new(sv[1])) != NULL);
	raw_hdr(sv[0], 1, IMSG_MAX_SIZE + 1, 0, 0);
	ATF_REQUIRE(imsgbuf_read(b) > 0);
	ATF_REQUIRE_EQ(-1, imsgbuf_get(b, &m));
	ATF_REQUIRE_EQ(EMSGSIZE, errno);
	ATF_REQUIRE_EQ(-1, imsgbuf_read(b));
	ATF_REQUIRE_EQ(EMSGSIZE, errno);
	imsgbuf_free(b);
	close(sv[0]);
	close(sv[1]);

	/* UINT32_MAX too. */
	mkpair(sv);
	ATF_REQUIRE((b = imsgbuf_new(sv[1])) != NULL);
	raw_hdr(sv[0], 1, UINT32_MAX, 0, 0);
	ATF_REQUIRE(imsgbuf_read(b) > 0);
	ATF_REQUIRE_EQ(-1, imsgbuf_get(b, &m));
	ATF_REQUIRE_EQ(EMSGSIZE, errno);
	imsgbuf_free(b);
	close(sv[0]);
	close(sv[1]);
}

ATF_TC(frame_undersized);
ATF_TC_HEAD(frame_undersized, tc)
{
	atf_tc_set_md_var(tc, "descr", "A header claiming less than its "
	    "own size is EMSGSIZE; exactly its size is an empty frame");
}
ATF_TC_BODY(frame_undersized, tc)
{
	static const uint32_t lens[] = { 0, 1, IMSG_HDR_SIZE - 1 };
	struct imsgbuf	*b;
	struct imsg	 m;
	int		 sv[2];
	size_t		 i;

	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		mkpair(sv);
		ATF_REQUIRE((b = imsgbuf_new(sv[1])) != NULL);
		raw_hdr(sv[0], 1, lens[i], 0, 0);
		ATF_REQUIRE(imsgbuf_read(b) > 0);
		ATF_REQUIRE_EQ(-1, imsgbuf_get(b, &m));
		ATF_REQUIRE_EQ(EMSGSIZE, errno);
		imsgbuf_free(b);
		close(sv[0]);
		close(sv[1]);
	}
	mkpair(sv);
	ATF_REQUIRE((b = imsgbuf_new(sv[1])) != NULL);
	raw_hdr(sv[0], 9, IMSG_HDR_SIZE, 0, 0);
	ATF_REQUIRE(imsgbuf_read(b) > 0);
	ATF_REQUIRE_EQ(1, imsgbuf_get(b, &m));
	ATF_REQUIRE_EQ(9, m.hdr.ih_type);
	ATF_REQUIRE_EQ(0, m.len);
	imsg_free(&m);
	imsgbuf_free(b);
	close(sv[0]);
	close(sv[1]);
}

ATF_TC(frame_bad_bits);
ATF_TC_HEAD(frame_bad_bits, tc)
{
	atf_tc_set_md_var(tc, "descr", "Unknown flag bits and a non-zero "
	    "pad are EBADMSG");
}
ATF_TC_BODY(frame_bad_bits, tc)
{
	struct imsgbuf	*b;
	struct imsg	 m;
	int		 sv[2], i;

	for (i = 0; i < 3; i++) {
		mkpair(sv);
		ATF_REQUIRE((b = imsgbuf_new(sv[1])) != NULL);
		if (i == 0)
			raw_hdr(sv[0], 1, IMSG_HDR_SIZE, 0x0002, 0);
		else if (i == 1)
			raw_hdr(sv[0], 1, IMSG_HDR_SIZE, 0x8000, 0);
		else
			raw_hdr(sv[0], 1, IMSG_HDR_SIZE, 0, 1);
		ATF_REQUIRE(imsgbuf_read(b) > 0);
		ATF_REQUIRE_EQ(-1, imsgbuf_get(b, &m));
		ATF_REQUIRE_EQ(EBADMSG, errno);
		imsgbuf_free(b);
		close(sv[0]);
		close(sv[1]);
	}
}

ATF_TC(compose_oversized);
ATF_TC_HEAD(compose_oversized, tc)
{
	atf_tc_set_md_var(tc, "descr", "A payload over IMSG_MAX_PAYLOAD is "
	    "refused and its fd closed; IMSG_MAX_PAYLOAD itself goes through");
}
ATF_TC_BODY(compose_oversized, tc)
{
	struct imsgbuf	*a, *b;
	struct imsg	 m;
	unsigned char	*big;
	int		 sv[2], p[2], base;
	size_t		 i;

	base = fds_open();
	ATF_REQUIRE((big = malloc(IMSG_MAX_PAYLOAD + 1)) != NULL);
	for (i = 0; i < IMSG_MAX_PAYLOAD + 1; i++)
		big[i] = (unsigned char)(i * 7 + i / 251);
	mkpair(sv);
	ATF_REQUIRE((a = imsgbuf_new(sv[0])) != NULL);
	ATF_REQUIRE((b = imsgbuf_new(sv[1])) != NULL);
	ATF_REQUIRE(pipe2(p, O_CLOEXEC) == 0);

	ATF_REQUIRE_EQ(-1, imsgbuf_compose(a, 1, 0, 0, p[1], big,
	    IMSG_MAX_PAYLOAD + 1));
	ATF_REQUIRE_EQ(EMSGSIZE, errno);
	ATF_REQUIRE_MSG(!fd_is_open(p[1]), "fd of a refused compose leaked");
	ATF_REQUIRE_EQ(0, imsgbuf_queued(a));

	/* The largest legal frame, through a socket that takes far less. */
	ATF_REQUIRE_EQ(0, imsgbuf_compose(a, 2, 0, 0, p[0], big,
	    IMSG_MAX_PAYLOAD));
	ATF_REQUIRE_EQ(1, pump(a, b, &m));
	ATF_REQUIRE_EQ(2, m.hdr.ih_type);
	ATF_REQUIRE_EQ(IMSG_MAX_PAYLOAD, m.len);
	ATF_REQUIRE(memcmp(m.data, big, IMSG_MAX_PAYLOAD) == 0);
	ATF_REQUIRE(m.fd >= 0);
	imsg_free(&m);
	ATF_REQUIRE_EQ(0, imsgbuf_queued(a));

	free(big);
	imsgbuf_free(a);
	imsgbuf_free(b);
	close(sv[0]);
	close(sv[1]);
	ATF_REQUIRE_EQ(base, fds_open());
}

ATF_TC(queue_limit);
ATF_TC_HEAD(queue_limit, tc)
{
	atf_tc_set_md_var(tc, "descr", "Unsent bytes are bounded by "
	    "IMSG_QUEUE_MAX: ENOBUFS past it, and the fd is closed");
}
ATF_TC_BODY(queue_limit, tc)
{
	struct imsgbuf	*a;
	unsigned char	*mb;
	int		 sv[2], p[2], base, i, r = 0;

	base = fds_open();
	ATF_REQUIRE((mb = calloc(1, 1024 * 1024)) != NULL);
	mkpair(sv);
	ATF_REQUIRE((a = imsgbuf_new(sv[0])) != NULL);
	ATF_REQUIRE(pipe2(p, O_CLOEXEC) == 0);
	for (i = 0; i < 100; i++)
		if ((r = imsgbuf_compose(a, 1, 0, 0, -1, mb,
		    1024 * 1024)) == -1)
			break;
	ATF_REQUIRE_EQ(-1, r);
	ATF_REQUIRE_EQ(ENOBUFS, errno);
	ATF_REQUIRE_EQ(IMSG_QUEUE_MAX / (1024 * 1024 + IMSG_HDR_SIZE), i);
	ATF_REQUIRE(imsgbuf_queued(a) <= IMSG_QUEUE_MAX);

	/* Still full: a small one with an fd is refused, the fd closed. */
	ATF_REQUIRE_EQ(-1, imsgbuf_compose(a, 1, 0, 0, p[1], mb,
	    IMSG_QUEUE_MAX - imsgbuf_queued(a)));
	ATF_REQUIRE_EQ(ENOBUFS, errno);
	ATF_REQUIRE(!fd_is_open(p[1]));
	/* What still fits, fits. */
	ATF_REQUIRE_EQ(0, imsgbuf_compose(a, 1, 0, 0, -1, mb,
	    IMSG_QUEUE_MAX - imsgbuf_queued(a) - IMSG_HDR_SIZE));
	ATF_REQUIRE_EQ(IMSG_QUEUE_MAX, imsgbuf_queued(a));

	/* Unsent frames with fds are closed by imsgbuf_free(). */
	close(p[0]);
	ATF_REQUIRE(pipe2(p, O_CLOEXEC) == 0);
	close(p[1]);
	imsgbuf_free(a);
	ATF_REQUIRE((a = imsgbuf_new(sv[0])) != NULL);
	ATF_REQUIRE_EQ(0, imsgbuf_compose(a, 1, 0, 0, p[0], NULL, 0));
	imsgbuf_free(a);
	ATF_REQUIRE(!fd_is_open(p[0]));

	free(mb);
	close(sv[0]);
	close(sv[1]);
	ATF_REQUIRE_EQ(base, fds_open());
}

ATF_TC(write_peer_gone);
ATF_TC_HEAD(write_peer_gone, tc)
{
	atf_tc_set_md_var(tc, "descr", "Writing to a closed peer is EPIPE, "
	    "not SIGPIPE; reading from one is 0");
}
ATF_TC_BODY(write_peer_gone, tc)
{
	struct imsgbuf	*a;
	int		 sv[2];

	mkpair(sv);
	ATF_REQUIRE((a = imsgbuf_new(sv[0])) != NULL);
	close(sv[1]);
	ATF_REQUIRE_EQ(0, imsgbuf_read(a));
	ATF_REQUIRE_EQ(0, imsgbuf_compose(a, 1, 0, 0, -1, "x", 1));
	ATF_REQUIRE_EQ(-1, imsgbuf_flush(a));
	ATF_REQUIRE_EQ(EPIPE, errno);
	imsgbuf_free(a);
	close(sv[0]);
}

ATF_TC(not_a_socket);
ATF_TC_HEAD(not_a_socket, tc)
{
	atf_tc_set_md_var(tc, "descr", "Frames also travel over a pipe "
	    "(as over a virtio-serial port); a descriptor cannot, and is "
	    "closed when refused");
}
ATF_TC_BODY(not_a_socket, tc)
{
	struct imsgbuf	*a, *b;
	struct imsg	 m;
	int		 p[2], q[2], base;

	base = fds_open();
	ATF_REQUIRE(pipe2(p, O_CLOEXEC) == 0);
	ATF_REQUIRE(pipe2(q, O_CLOEXEC) == 0);
	ATF_REQUIRE((a = imsgbuf_new(p[1])) != NULL);
	ATF_REQUIRE((b = imsgbuf_new(p[0])) != NULL);
	ATF_REQUIRE_EQ(-1, imsgbuf_compose(a, 1, 0, 0, q[1], "x", 1));
	ATF_REQUIRE_EQ(EOPNOTSUPP, errno);
	ATF_REQUIRE(!fd_is_open(q[1]));
	ATF_REQUIRE_EQ(0, imsgbuf_compose(a, 4, 5, 6, -1, "pipe", 4));
	ATF_REQUIRE_EQ(0, imsgbuf_compose(a, 7, 0, 0, -1, NULL, 0));
	ATF_REQUIRE_EQ(1, pump(a, b, &m));
	ATF_REQUIRE_EQ(4, m.hdr.ih_type);
	ATF_REQUIRE_EQ(5, m.hdr.ih_peerid);
	ATF_REQUIRE_EQ(4, m.len);
	ATF_REQUIRE(memcmp(m.data, "pipe", 4) == 0);
	imsg_free(&m);
	ATF_REQUIRE_EQ(1, pump(a, b, &m));
	ATF_REQUIRE_EQ(7, m.hdr.ih_type);
	imsg_free(&m);
	imsgbuf_free(a);
	imsgbuf_free(b);
	close(p[0]);
	close(p[1]);
	close(q[0]);
	ATF_REQUIRE_EQ(base, fds_open());
}

/*
 * Event level.
 */
struct evt {
	struct event_base *base;
	struct imsgev	*iev;
	int		 ndispatch;
	int		 nclose;
	int		 error;
	int		 free_in_dispatch;
	int		 free_in_close;
	int		 kept_fd;	/* taken from a dispatched imsg */
	uint32_t	 last_type;
};

static void
evt_dispatch(struct imsgev *iev, struct imsg *m, void *arg)
{
	struct evt	*t = arg;

	ATF_REQUIRE(iev == t->iev);
	ATF_REQUIRE(imsgev_arg(iev) == t);
	t->ndispatch++;
	t->last_type = m->hdr.ih_type;
	if (m->fd != -1 && t->kept_fd == -2) {
		t->kept_fd = m->fd;
		m->fd = -1;
	}
	if (t->free_in_dispatch) {
		imsgev_free(iev);
		t->iev = NULL;
		event_base_loopbreak(t->base);
	}
}

static void
evt_close(struct imsgev *iev, int error, void *arg)
{
	struct evt	*t = arg;

	ATF_REQUIRE(iev == t->iev);
	t->nclose++;
	t->error = error;
	event_base_loopbreak(t->base);
	if (t->free_in_close) {
		imsgev_free(iev);
		t->iev = NULL;
	}
}

static void
evt_init(struct evt *t, int fd)
{
	memset(t, 0, sizeof(*t));
	t->kept_fd = -1;
	ATF_REQUIRE((t->base = event_base_new()) != NULL);
	ATF_REQUIRE((t->iev = imsgev_new(t->base, fd, evt_dispatch,
	    evt_close, t)) != NULL);
}

static void
evt_done(struct evt *t)
{
	imsgev_free(t->iev);
	event_base_free(t->base);
}

/*
 * Run the loop until a callback breaks it (close, or free in dispatch),
 * or for at most a few seconds should the code under test hang.
 */
static void
evt_run(struct event_base *base)
{
	struct timeval	 tv = { 5, 0 };

	event_base_loopexit(base, &tv);
	event_base_dispatch(base);
}

ATF_TC(ev_eof_clean);
ATF_TC_HEAD(ev_eof_clean, tc)
{
	atf_tc_set_md_var(tc, "descr", "A peer closing between frames: "
	    "every frame dispatched, then close with 0, once");
}
ATF_TC_BODY(ev_eof_clean, tc)
{
	struct evt	 t;
	int		 sv[2];

	mkpair(sv);
	evt_init(&t, sv[1]);
	raw_frame(sv[0], 3, 10, 0, -1);
	raw_frame(sv[0], 4, 0, 0, -1);
	close(sv[0]);
	evt_run(t.base);
	ATF_REQUIRE_EQ(2, t.ndispatch);
	ATF_REQUIRE_EQ(4, t.last_type);
	ATF_REQUIRE_EQ(1, t.nclose);
	ATF_REQUIRE_EQ(0, t.error);
	evt_done(&t);
	ATF_REQUIRE(!fd_is_open(sv[1]));
}

ATF_TC(ev_eof_mid_frame);
ATF_TC_HEAD(ev_eof_mid_frame, tc)
{
	atf_tc_set_md_var(tc, "descr", "A peer closing in the middle of a "
	    "frame: nothing dispatched, close once with EBADMSG");
}
ATF_TC_BODY(ev_eof_mid_frame, tc)
{
	unsigned char	 buf[IMSG_HDR_SIZE + 10];
	struct imsg_hdr	 h;
	struct evt	 t;
	int		 sv[2];

	mkpair(sv);
	evt_init(&t, sv[1]);
	memset(&h, 0, sizeof(h));
	h.ih_type = 1;
	h.ih_len = sizeof(buf) + 100;
	memcpy(buf, &h, sizeof(h));
	memset(buf + sizeof(h), 'y', sizeof(buf) - sizeof(h));
	raw_send(sv[0], buf, sizeof(buf), NULL, 0);
	close(sv[0]);
	evt_run(t.base);
	ATF_REQUIRE_EQ(0, t.ndispatch);
	ATF_REQUIRE_EQ(1, t.nclose);
	ATF_REQUIRE_EQ(EBADMSG, t.error);
	evt_done(&t);

	/* Half a header is no better. */
	mkpair(sv);
	evt_init(&t, sv[1]);
	raw_send(sv[0], buf, IMSG_HDR_SIZE / 2, NULL, 0);
	close(sv[0]);
	evt_run(t.base);
	ATF_REQUIRE_EQ(0, t.ndispatch);
	ATF_REQUIRE_EQ(1, t.nclose);
	ATF_REQUIRE_EQ(EBADMSG, t.error);
	evt_done(&t);
}

ATF_TC(ev_protocol_error);
ATF_TC_HEAD(ev_protocol_error, tc)
{
	atf_tc_set_md_var(tc, "descr", "Frames before a bad one are "
	    "dispatched, then close once with EMSGSIZE; nothing after");
}
ATF_TC_BODY(ev_protocol_error, tc)
{
	struct evt	 t;
	int		 sv[2];

	mkpair(sv);
	evt_init(&t, sv[1]);
	raw_frame(sv[0], 1, 3, 0, -1);
	raw_hdr(sv[0], 2, IMSG_MAX_SIZE + 1, 0, 0);
	raw_frame(sv[0], 3, 3, 0, -1);
	evt_run(t.base);
	ATF_REQUIRE_EQ(1, t.ndispatch);
	ATF_REQUIRE_EQ(1, t.last_type);
	ATF_REQUIRE_EQ(1, t.nclose);
	ATF_REQUIRE_EQ(EMSGSIZE, t.error);
	/* After close the channel is dead: compose refuses, closes fd. */
	ATF_REQUIRE_EQ(-1, imsgev_compose(t.iev, 1, 0, 0, -1, NULL, 0));
	ATF_REQUIRE_EQ(EPIPE, errno);
	evt_done(&t);
	close(sv[0]);
}

ATF_TC(ev_free_in_dispatch);
ATF_TC_HEAD(ev_free_in_dispatch, tc)
{
	atf_tc_set_md_var(tc, "descr", "imsgev_free() from the dispatch "
	    "callback: no further dispatch, no close callback, no UAF");
}
ATF_TC_BODY(ev_free_in_dispatch, tc)
{
	struct evt	 t;
	int		 sv[2], base, p[2];

	base = fds_open();
	mkpair(sv);
	ATF_REQUIRE(pipe2(p, O_CLOEXEC) == 0);
	evt_init(&t, sv[1]);
	t.free_in_dispatch = 1;
	raw_frame(sv[0], 1, 3, 0, -1);
	raw_frame(sv[0], 2, 3, IMSGF_HASFD, p[1]);
	raw_frame(sv[0], 3, 3, 0, -1);
	close(p[1]);
	evt_run(t.base);
	ATF_REQUIRE_EQ(1, t.ndispatch);
	ATF_REQUIRE_EQ(0, t.nclose);
	ATF_REQUIRE(t.iev == NULL);
	ATF_REQUIRE(!fd_is_open(sv[1]));
	evt_done(&t);
	close(sv[0]);
	close(p[0]);
	ATF_REQUIRE_EQ(base, fds_open());
}

ATF_TC(ev_free_in_close);
ATF_TC_HEAD(ev_free_in_close, tc)
{
	atf_tc_set_md_var(tc, "descr", "imsgev_free() from the close "
	    "callback, after an EOF and after a protocol error");
}
ATF_TC_BODY(ev_free_in_close, tc)
{
	struct evt	 t;
	int		 sv[2];

	mkpair(sv);
	evt_init(&t, sv[1]);
	t.free_in_close = 1;
	raw_frame(sv[0], 1, 3, 0, -1);
	close(sv[0]);
	evt_run(t.base);
	ATF_REQUIRE_EQ(1, t.ndispatch);
	ATF_REQUIRE_EQ(1, t.nclose);
	ATF_REQUIRE_EQ(0, t.error);
	ATF_REQUIRE(t.iev == NULL);
	evt_done(&t);

	mkpair(sv);
	evt_init(&t, sv[1]);
	t.free_in_close = 1;
	raw_hdr(sv[0], 1, 2, 0, 0);
	evt_run(t.base);
	ATF_REQUIRE_EQ(0, t.ndispatch);
	ATF_REQUIRE_EQ(1, t.nclose);
	ATF_REQUIRE_EQ(EMSGSIZE, t.error);
	evt_done(&t);
	close(sv[0]);
}

ATF_TC(ev_write_error);
ATF_TC_HEAD(ev_write_error, tc)
{
	atf_tc_set_md_var(tc, "descr", "A peer that is gone while we write: "
	    "the close callback is called exactly once");
}
ATF_TC_BODY(ev_write_error, tc)
{
	struct evt	 t;
	int		 sv[2];

	mkpair(sv);
	evt_init(&t, sv[1]);
	close(sv[0]);
	ATF_REQUIRE_EQ(0, imsgev_compose(t.iev, 1, 0, 0, -1, "x", 1));
	evt_run(t.base);
	ATF_REQUIRE_EQ(0, t.ndispatch);
	ATF_REQUIRE_EQ(1, t.nclose);
	ATF_REQUIRE(t.error == 0 || t.error == EPIPE ||
	    t.error == ECONNRESET);
	evt_done(&t);

	/* Only the write side can see it: the peer shut its read side. */
	mkpair(sv);
	evt_init(&t, sv[1]);
	ATF_REQUIRE(shutdown(sv[0], SHUT_RD) == 0);
	ATF_REQUIRE_EQ(0, imsgev_compose(t.iev, 1, 0, 0, -1, "x", 1));
	evt_run(t.base);
	ATF_REQUIRE_EQ(1, t.nclose);
	ATF_REQUIRE_EQ(EPIPE, t.error);
	evt_done(&t);
	close(sv[0]);
}

ATF_TC(ev_take_fd);
ATF_TC_HEAD(ev_take_fd, tc)
{
	atf_tc_set_md_var(tc, "descr", "A dispatched fd the callback takes "
	    "stays open; one it leaves is closed");
}
ATF_TC_BODY(ev_take_fd, tc)
{
	struct evt	 t;
	int		 sv[2], p[2], base;
	char		 c;

	base = fds_open();
	mkpair(sv);
	ATF_REQUIRE(pipe2(p, O_CLOEXEC) == 0);
	evt_init(&t, sv[1]);
	t.kept_fd = -2;			/* take the first one */
	raw_frame(sv[0], 1, 0, IMSGF_HASFD, p[1]);
	raw_frame(sv[0], 2, 0, IMSGF_HASFD, p[1]);
	close(p[1]);
	close(sv[0]);
	evt_run(t.base);
	ATF_REQUIRE_EQ(2, t.ndispatch);
	ATF_REQUIRE_EQ(1, t.nclose);
	ATF_REQUIRE_EQ(0, t.error);
	ATF_REQUIRE(t.kept_fd >= 0);
	ATF_REQUIRE_EQ(1, write(t.kept_fd, "k", 1));
	ATF_REQUIRE_EQ(1, read(p[0], &c, 1));
	close(t.kept_fd);
	/* The second was closed for us: the pipe has no writer left. */
	ATF_REQUIRE_EQ(0, read(p[0], &c, 1));
	evt_done(&t);
	close(p[0]);
	ATF_REQUIRE_EQ(base, fds_open());
}

/*
 * Two imsgevs on one loop: a sends frames (a large one, one with an fd),
 * b echoes every frame back, a stops the loop when it has all echoes.
 */
#define EX_FRAMES	40
#define EX_BIG		(1024 * 1024 + 3)

struct ex {
	struct event_base *base;
	struct imsgev	*a, *b;
	int		 a_got, b_got, closes;
	int		 bad;
	unsigned char	*big;
};

static int
ex_check(struct imsg *m, const unsigned char *big)
{
	uint32_t	 i = m->hdr.ih_peerid;

	if (i == 7)
		return (m->len == EX_BIG && memcmp(m->data, big, EX_BIG) == 0);
	if (i == 9 && m->fd < 0)
		return (0);
	return (m->len == sizeof(i) && memcmp(m->data, &i, sizeof(i)) == 0);
}

static void
ex_dispatch_a(struct imsgev *iev, struct imsg *m, void *arg)
{
	struct ex	*x = arg;

	if (m->hdr.ih_type != 2 || m->hdr.ih_peerid != (uint32_t)x->a_got ||
	    !ex_check(m, x->big))
		x->bad++;
	if (++x->a_got == EX_FRAMES)
		event_base_loopbreak(x->base);
}

static void
ex_dispatch_b(struct imsgev *iev, struct imsg *m, void *arg)
{
	struct ex	*x = arg;
	int		 fd = -1;

	if (m->hdr.ih_type != 1 || m->hdr.ih_peerid != (uint32_t)x->b_got ||
	    !ex_check(m, x->big))
		x->bad++;
	x->b_got++;
	if (m->fd != -1) {
		fd = m->fd;
		m->fd = -1;
	}
	if (imsgev_compose(iev, 2, m->hdr.ih_peerid, 0, fd, m->data,
	    m->len) == -1)
		x->bad++;
}

static void
ex_close(struct imsgev *iev, int error, void *arg)
{
	struct ex	*x = arg;

	x->closes++;
	event_base_loopbreak(x->base);
}

ATF_TC(ev_exchange);
ATF_TC_HEAD(ev_exchange, tc)
{
	atf_tc_set_md_var(tc, "descr", "A libevent-driven exchange, with a "
	    "large frame and a descriptor, echoed back intact and in order");
}
ATF_TC_BODY(ev_exchange, tc)
{
	struct ex	 x;
	int		 sv[2], p[2], base, fd;
	uint32_t	 i;
	size_t		 k;
	char		 c;

	base = fds_open();
	memset(&x, 0, sizeof(x));
	ATF_REQUIRE((x.big = malloc(EX_BIG)) != NULL);
	for (k = 0; k < EX_BIG; k++)
		x.big[k] = (unsigned char)(k % 253);
	mkpair(sv);
	ATF_REQUIRE(pipe2(p, O_CLOEXEC) == 0);
	ATF_REQUIRE((x.base = event_base_new()) != NULL);
	ATF_REQUIRE((x.a = imsgev_new(x.base, sv[0], ex_dispatch_a, ex_close,
	    &x)) != NULL);
	ATF_REQUIRE((x.b = imsgev_new(x.base, sv[1], ex_dispatch_b, ex_close,
	    &x)) != NULL);
	ATF_REQUIRE(imsgev_buf(x.a) != NULL);
	ATF_REQUIRE_EQ(sv[0], imsgbuf_fd(imsgev_buf(x.a)));

	for (i = 0; i < EX_FRAMES; i++) {
		fd = i == 9 ? p[1] : -1;
		if (i == 7)
			ATF_REQUIRE_EQ(0, imsgev_compose(x.a, 1, i, 0, -1,
			    x.big, EX_BIG));
		else
			ATF_REQUIRE_EQ(0, imsgev_compose(x.a, 1, i, 0, fd, &i,
			    sizeof(i)));
	}
	evt_run(x.base);
	ATF_REQUIRE_EQ(EX_FRAMES, x.b_got);
	ATF_REQUIRE_EQ(EX_FRAMES, x.a_got);
	ATF_REQUIRE_EQ(0, x.bad);
	ATF_REQUIRE_EQ(0, x.closes);
	ATF_REQUIRE_EQ(0, imsgbuf_queued(imsgev_buf(x.a)));
	ATF_REQUIRE_EQ(0, imsgbuf_queued(imsgev_buf(x.b)));

	/* The fd went there and back; the echo was closed on dispatch. */
	ATF_REQUIRE_EQ(0, read(p[0], &c, 1));

	/* imsgev_flush() sends without the loop. */
	ATF_REQUIRE_EQ(0, imsgev_compose(x.b, 5, 0, 0, -1, "f", 1));
	ATF_REQUIRE_EQ(0, imsgev_flush(x.b));
	ATF_REQUIRE_EQ(0, imsgbuf_queued(imsgev_buf(x.b)));

	imsgev_free(x.a);
	imsgev_free(x.b);
	event_base_free(x.base);
	free(x.big);
	close(p[0]);
	ATF_REQUIRE_EQ(base, fds_open());
}

/*
 * Backpressure: a server that answers every frame with BP_ANSWER bytes
 * to a client that does not read.
 */
#define BP_FRAMES	1000
#define BP_ANSWER	(16 * 1024)
#define BP_SOFT		(64 * 1024)

struct bp {
	struct event_base *base;
	struct imsgev	*iev;
	unsigned char	*answer;
	int		 got;
	int		 bad;
	size_t		 maxq;		/* the most queued after a dispatch */
	size_t		 drained;	/* bytes the client read */
};

static void
bp_dispatch(struct imsgev *iev, struct imsg *m, void *arg)
{
	struct bp	*b = arg;
	size_t		 q;

	if (m->hdr.ih_peerid != (uint32_t)b->got)
		b->bad++;
	b->got++;
	if (imsgev_compose(iev, 2, m->hdr.ih_peerid, 0, -1, b->answer,
	    BP_ANSWER) == -1)
		b->bad++;
	if ((q = imsgbuf_queued(imsgev_buf(iev))) > b->maxq)
		b->maxq = q;
	if (b->got == BP_FRAMES)
		event_base_loopbreak(b->base);
}

static void
bp_close(struct imsgev *iev, int error, void *arg)
{
	struct bp	*b = arg;

	b->bad++;
	event_base_loopbreak(b->base);
}

static void
bp_drain(evutil_socket_t fd, short ev, void *arg)
{
	struct bp	*b = arg;
	char		 buf[65536];
	ssize_t		 n;

	while ((n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT)) > 0)
		b->drained += (size_t)n;
}

ATF_TC(ev_backpressure);
ATF_TC_HEAD(ev_backpressure, tc)
{
	atf_tc_set_md_var(tc, "descr", "With a soft bound, a peer that does "
	    "not read its answers is not read either: dispatching stops "
	    "just past the bound, goes on once the peer reads, and no frame "
	    "is lost or reordered");
}
ATF_TC_BODY(ev_backpressure, tc)
{
	struct bp	 b;
	struct event	*drain;
	struct timeval	 tv = { 0, 500000 };
	struct imsg_hdr	*hs;
	int		 sv[2], i, fl;
	uint32_t	 id;

	memset(&b, 0, sizeof(b));
	ATF_REQUIRE((b.answer = calloc(1, BP_ANSWER)) != NULL);
	mkpair(sv);
	ATF_REQUIRE((b.base = event_base_new()) != NULL);
	ATF_REQUIRE((b.iev = imsgev_new(b.base, sv[1], bp_dispatch, bp_close,
	    &b)) != NULL);
	imsgev_set_bounds(b.iev, BP_SOFT, IMSG_MAX_SIZE);
	ATF_REQUIRE_EQ(0, imsgev_paused(b.iev));
	/* The client sends everything at once, and reads nothing. */
	ATF_REQUIRE((fl = fcntl(sv[0], F_GETFL)) != -1);
	ATF_REQUIRE(fcntl(sv[0], F_SETFL, fl | O_NONBLOCK) == 0);
	ATF_REQUIRE((hs = calloc(BP_FRAMES, sizeof(*hs))) != NULL);
	for (id = 0, i = 0; i < BP_FRAMES; i++, id++) {
		hs[i].ih_type = 1;
		hs[i].ih_len = IMSG_HDR_SIZE;
		hs[i].ih_peerid = id;
	}
	ATF_REQUIRE_EQ((ssize_t)(BP_FRAMES * sizeof(*hs)), send(sv[0], hs,
	    BP_FRAMES * sizeof(*hs), 0));
	free(hs);
	event_base_loopexit(b.base, &tv);
	event_base_dispatch(b.base);
	ATF_REQUIRE_EQ(0, b.bad);
	ATF_REQUIRE_MSG(b.got < BP_FRAMES, "all %d dispatched", b.got);
	ATF_REQUIRE(imsgev_paused(b.iev) != 0);
	/* Stopped at the first answer past the bound. */
	ATF_REQUIRE_MSG(b.maxq <= BP_SOFT + BP_ANSWER + IMSG_HDR_SIZE,
	    "%zu queued", b.maxq);

	/* The client reads: the rest is dispatched, in order. */
	ATF_REQUIRE((drain = event_new(b.base, sv[0], EV_READ | EV_PERSIST,
	    bp_drain, &b)) != NULL);
	ATF_REQUIRE_EQ(0, event_add(drain, NULL));
	evt_run(b.base);
	ATF_REQUIRE_EQ(0, b.bad);
	ATF_REQUIRE_EQ(BP_FRAMES, b.got);
	ATF_REQUIRE(b.maxq <= BP_SOFT + BP_ANSWER + IMSG_HDR_SIZE);
	event_free(drain);
	imsgev_free(b.iev);
	event_base_free(b.base);
	close(sv[0]);
	free(b.answer);
}

ATF_TC(ev_hard_bound);
ATF_TC_HEAD(ev_hard_bound, tc)
{
	atf_tc_set_md_var(tc, "descr", "The hard bound refuses a frame that "
	    "would pass it with ENOBUFS; what was queued stays whole");
}
ATF_TC_BODY(ev_hard_bound, tc)
{
	struct event_base *base;
	struct imsgev	*iev;
	unsigned char	*big;
	int		 sv[2], i;

	ATF_REQUIRE((big = calloc(1, 1024 * 1024)) != NULL);
	mkpair(sv);
	ATF_REQUIRE((base = event_base_new()) != NULL);
	ATF_REQUIRE((iev = imsgev_new(base, sv[1], evt_dispatch, evt_close,
	    NULL)) != NULL);
	/* Below one largest frame is raised to it: 4 MiB. */
	imsgev_set_bounds(iev, 0, 1024);
	for (i = 0; i < 3; i++)
		ATF_REQUIRE_EQ(0, imsgev_compose(iev, 1, i, 0, -1, big,
		    1024 * 1024));
	ATF_REQUIRE_EQ(-1, imsgev_compose(iev, 1, 3, 0, -1, big,
	    1024 * 1024));
	ATF_REQUIRE_EQ(ENOBUFS, errno);
	ATF_REQUIRE_EQ(3 * (1024 * 1024 + IMSG_HDR_SIZE),
	    imsgbuf_queued(imsgev_buf(iev)));
	imsgev_free(iev);
	event_base_free(base);
	close(sv[0]);
	free(big);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, roundtrip);
	ATF_TP_ADD_TC(tp, split_bytes);
	ATF_TP_ADD_TC(tp, rbuf_wiped);
	ATF_TP_ADD_TC(tp, rbuf_freed);
	ATF_TP_ADD_TC(tp, many_in_one_read);
	ATF_TP_ADD_TC(tp, fd_pass);
	ATF_TP_ADD_TC(tp, fd_interleaved);
	ATF_TP_ADD_TC(tp, fd_missing);
	ATF_TP_ADD_TC(tp, fd_stray);
	ATF_TP_ADD_TC(tp, fd_ctrunc);
	ATF_TP_ADD_TC(tp, fd_too_many);
	ATF_TP_ADD_TC(tp, frame_oversized);
	ATF_TP_ADD_TC(tp, frame_undersized);
	ATF_TP_ADD_TC(tp, frame_bad_bits);
	ATF_TP_ADD_TC(tp, compose_oversized);
	ATF_TP_ADD_TC(tp, queue_limit);
	ATF_TP_ADD_TC(tp, write_peer_gone);
	ATF_TP_ADD_TC(tp, not_a_socket);
	ATF_TP_ADD_TC(tp, ev_eof_clean);
	ATF_TP_ADD_TC(tp, ev_eof_mid_frame);
	ATF_TP_ADD_TC(tp, ev_protocol_error);
	ATF_TP_ADD_TC(tp, ev_free_in_dispatch);
	ATF_TP_ADD_TC(tp, ev_free_in_close);
	ATF_TP_ADD_TC(tp, ev_write_error);
	ATF_TP_ADD_TC(tp, ev_take_fd);
	ATF_TP_ADD_TC(tp, ev_exchange);
	ATF_TP_ADD_TC(tp, ev_backpressure);
	ATF_TP_ADD_TC(tp, ev_hard_bound);
	return (atf_no_error());
}
