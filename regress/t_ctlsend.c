/*
 * t_ctlsend: speak badly to a control socket on purpose.
 *
 *	t_ctlsend SOCKET MODE [ARG]
 *
 * Modes: garbage N (N random bytes), oversized (a header claiming more
 * than the maximum), undersized (ih_len below the header), truncated
 * (half a header, then close), midclose (a header promising a payload,
 * half of it, then close), badpayload (show stats with a payload),
 * badpad (reserved header bits set), unknown (a type nobody knows),
 * withfd (show stats carrying a descriptor), testsyscall (the test hook),
 * idle SECONDS (connect, say nothing), flood N (N connections at once),
 * pipeline N (up to N list requests, never reading an answer: sent as
 * long as the daemon reads them, then "sent K" once it stopped reading
 * for 2 seconds or took all N, and the connection held open, unread,
 * until the process is killed or fenced hangs up), burst N (N stops of
 * a key nobody has at once, each a round trip to the fencer since lists
 * are answered by the broker alone; then every answer read: "ends E
 * errors R CODE...", the fencer's not-found not counted as an error),
 * bootleave KEY (boot KEY at L1.5 requiring L2, and hang up at once,
 * before any answer), puthold [UID/]KEY CONNS CHUNKS (on CONNS
 * connections, one after the other, a fencectl put of KEY's file
 * "puthold" in CHUNKS chunks of 1 MiB, none the last, each sent once
 * the one before was answered; then "accepted A refused R", the chunks
 * answered END alone and those answered an error (the connection's
 * put is over), and every connection held open 2 s more), gethold
 * [UID/]KEY PATH CONNS (on CONNS connections, one after the other, a
 * fencectl get of PATH, its first chunk read and no more asked: "got
 * G refused R", and every connection held open 2 s more).
 *
 * Prints "closed" when fenced hung up on us, "reply TYPE" for each
 * message it sent, "timeout" when it did neither in 5 seconds.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fenced.h"
#include "imsg.h"
#include "msg.h"

static int
t_connect(const char *path)
{
	int	 fd;

	if ((fd = unix_connect(path)) == -1)
		err(2, "connect %s", path);
	return (fd);
}

/* fenced hanging up on us mid-send is an answer, not a failure. */
static void
t_send(int fd, const void *buf, size_t len)
{
	if (send(fd, buf, len, MSG_NOSIGNAL) != (ssize_t)len) {
		if (errno == EPIPE || errno == ECONNRESET) {
			printf("closed\n");
			exit(0);
		}
		err(2, "send");
	}
}

static void
t_hdr(int fd, uint32_t type, uint32_t len, uint16_t flags, uint16_t pad)
{
	struct imsg_hdr	 h;

	memset(&h, 0, sizeof(h));
	h.ih_type = type;
	h.ih_len = len;
	h.ih_flags = flags;
	h.ih_pad = pad;
	t_send(fd, &h, sizeof(h));
}

/* Read what comes back until EOF or 5 s of silence. */
static void
t_drain(int fd)
{
	struct pollfd	 pfd = { fd, POLLIN, 0 };
	struct imsg_hdr	 h;
	char		 buf[65536];
	size_t		 have = 0;
	ssize_t		 n;

	for (;;) {
		if (poll(&pfd, 1, 5000) <= 0) {
			printf("timeout\n");
			return;
		}
		if ((n = recv(fd, buf + have, sizeof(buf) - have, 0)) <= 0) {
			printf("closed\n");
			return;
		}
		have += n;
		while (have >= sizeof(h)) {
			memcpy(&h, buf, sizeof(h));
			if (h.ih_len < sizeof(h) || h.ih_len > sizeof(buf))
				errx(2, "bad reply header");
			if (have < h.ih_len)
				break;
			printf("reply %s\n", msg_type_name(h.ih_type));
			memmove(buf, buf + h.ih_len, have - h.ih_len);
			have -= h.ih_len;
			if (h.ih_type == IMSG_CTL_END)
				return;
		}
	}
}

static void
t_pipeline(int fd, int n)
{
	struct msg_fence_req q;
	struct pollfd	 pfd = { fd, POLLOUT, 0 };
	struct imsgbuf	*ib;
	void		*buf;
	size_t		 len;
	int		 i, batch, r;

	memset(&q, 0, sizeof(q));
	strlcpy(q.r_key, "burst-nobody-has-this", sizeof(q.r_key));
	q.r_owner = MSG_OWNER_NONE;
	if (msg_fence_req_encode(&q, &buf, &len) == -1 ||
	    (ib = imsgbuf_new(fd)) == NULL)
		err(2, "encode");
	for (i = 0; i < n; ) {
		for (batch = 0; batch < 256 && i < n; batch++, i++)
			if (imsgbuf_compose(ib, IMSG_CTL_STOP, 0, 0, -1, buf,
			    len) == -1)
				err(2, "compose");
		while (imsgbuf_queued(ib) > 0) {
			if (imsgbuf_write(ib) == -1) {
				printf("closed after %d\n", i);
				imsgbuf_free(ib);
				free(buf);
				return;
			}
			if (imsgbuf_queued(ib) == 0)
				break;
			if ((r = poll(&pfd, 1, 2000)) == -1)
				err(2, "poll");
			if (r == 0)
				goto held;
		}
	}
 held:
	printf("sent %d\n", i - (int)(imsgbuf_queued(ib) / (IMSG_HDR_SIZE +
	    len)));
	fflush(stdout);
	imsgbuf_free(ib);
	free(buf);
	/* Held, never read, until fenced hangs up or we are killed. */
	pfd.events = POLLRDHUP;
	while (poll(&pfd, 1, -1) == -1 || !(pfd.revents &
	    (POLLRDHUP | POLLHUP | POLLERR)))
		;
	printf("closed\n");
}

static void
t_burst(int fd, int n)
{
	struct msg_fence_req q;
	struct msg_error e;
	struct imsgbuf	*ib;
	struct imsg	 imsg;
	struct pollfd	 pfd = { fd, POLLIN, 0 };
	void		*buf;
	size_t		 len;
	int		 i, ends = 0, errs = 0, r;
	char		 codes[4096] = "";

	memset(&q, 0, sizeof(q));
	strlcpy(q.r_key, "burst-nobody-has-this", sizeof(q.r_key));
	q.r_owner = MSG_OWNER_NONE;
	if (msg_fence_req_encode(&q, &buf, &len) == -1 ||
	    (ib = imsgbuf_new(fd)) == NULL)
		err(2, "encode");
	for (i = 0; i < n; i++)
		if (imsgbuf_compose(ib, IMSG_CTL_STOP, 0, 0, -1, buf,
		    len) == -1)
			err(2, "compose");
	if (imsgbuf_flush(ib) == -1)
		err(2, "send");
	while (ends < n) {
		if ((r = imsgbuf_get(ib, &imsg)) == -1)
			err(2, "get");
		if (r == 1) {
			if (imsg.hdr.ih_type == IMSG_CTL_END)
				ends++;
			else if (imsg.hdr.ih_type == IMSG_CTL_ERROR) {
				if (msg_error_decode(imsg.data, imsg.len,
				    &e) == 0 && strcmp(e.e_code,
				    "not-found") == 0) {
					imsg_free(&imsg);
					continue;
				}
				errs++;
				if (strstr(codes, e.e_code) ==
				    NULL && strlen(codes) + strlen(e.e_code) +
				    2 < sizeof(codes)) {
					strlcat(codes, " ", sizeof(codes));
					strlcat(codes, e.e_code, sizeof(codes));
				}
			}
			imsg_free(&imsg);
			continue;
		}
		if (poll(&pfd, 1, 5000) <= 0) {
			printf("timeout ");
			break;
		}
		if ((r = imsgbuf_read(ib)) == 0) {
			printf("closed ");
			break;
		}
		if (r == -1 && errno != EAGAIN)
			err(2, "read");
	}
	printf("ends %d errors %d%s\n", ends, errs, codes);
	imsgbuf_free(ib);
	free(buf);
}

static void
t_bootleave(int fd, const char *key)
{
	struct msg_boot	 b;
	struct imsgbuf	*ib;
	void		*buf;
	size_t		 len;

	memset(&b, 0, sizeof(b));
	strlcpy(b.b_key, key, sizeof(b.b_key));
	b.b_tier = TIER_L15;
	b.b_require = LEVEL_L2;
	if (msg_boot_encode(&b, &buf, &len) == -1 ||
	    (ib = imsgbuf_new(fd)) == NULL ||
	    imsgbuf_compose(ib, IMSG_CTL_BOOT, 0, 0, -1, buf, len) == -1 ||
	    imsgbuf_flush(ib) == -1)
		err(2, "boot");
	imsgbuf_free(ib);
	free(buf);
	close(fd);
	printf("closed\n");
}

/* The answers to one request: 1 if one was an error, 0 if not, -1 closed. */
static int
t_answer(struct imsgbuf *ib)
{
	struct pollfd	 pfd = { -1, POLLIN, 0 };
	struct imsg	 imsg;
	ssize_t		 n;
	int		 error = 0;
	uint32_t	 type;

	for (;;) {
		switch (imsgbuf_get(ib, &imsg)) {
		case -1:
			err(2, "imsgbuf_get");
		case 0:
			pfd.fd = imsgbuf_fd(ib);
			if (poll(&pfd, 1, 10000) != 1)
				return (-1);
			if ((n = imsgbuf_read(ib)) == 0 || (n == -1 &&
			    errno != EAGAIN && errno != EINTR))
				return (-1);
			continue;
		}
		type = imsg.hdr.ih_type;
		imsg_free(&imsg);
		if (type == IMSG_CTL_ERROR)
			error = 1;
		if (type == IMSG_CTL_END)
			return (error);
	}
}

static void
t_puthold(const char *sock, const char *name, int conns, int chunks)
{
	static uint8_t	 data[MSG_FILE_CHUNK];
	struct msg_file	 fl;
	struct imsgbuf	**ib;
	const char	*slash;
	void		*buf;
	size_t		 len;
	int		 c, k, rv, accepted = 0, refused = 0;

	memset(&fl, 0, sizeof(fl));
	fl.fl_owner = MSG_OWNER_NONE;
	if ((slash = strchr(name, '/')) != NULL) {
		fl.fl_owner = (uid_t)strtoul(name, NULL, 10);
		name = slash + 1;
	}
	strlcpy(fl.fl_key, name, sizeof(fl.fl_key));
	strlcpy(fl.fl_path, "puthold", sizeof(fl.fl_path));
	fl.fl_mode = 0644;
	memset(data, 'p', sizeof(data));
	if (conns < 1 || chunks < 1 ||
	    (ib = calloc(conns, sizeof(*ib))) == NULL)
		errx(2, "puthold: bad counts");
	for (c = 0; c < conns; c++) {
		if ((ib[c] = imsgbuf_new(t_connect(sock))) == NULL)
			err(2, "imsgbuf_new");
		for (k = 0; k < chunks; k++) {
			fl.fl_flags = k == 0 ? MSG_FILE_FIRST : 0;
			fl.fl_offset = (uint64_t)k * sizeof(data);
			fl.fl_data = data;
			fl.fl_data_len = sizeof(data);
			if (msg_file_encode(&fl, &buf, &len) == -1 ||
			    imsgbuf_compose(ib[c], IMSG_CTL_FILE_PUT, 0, 0, -1,
			    buf, len) == -1 || imsgbuf_flush(ib[c]) == -1)
				err(2, "put");
			free(buf);
			if ((rv = t_answer(ib[c])) == -1)
				errx(2, "puthold: closed");
			if (rv == 1) {
				refused++;
				break;
			}
			accepted++;
		}
	}
	printf("accepted %d refused %d\n", accepted, refused);
	fflush(stdout);
	sleep(2);
	for (c = 0; c < conns; c++)
		imsgbuf_free(ib[c]);
	free(ib);
}

static void
t_gethold(const char *sock, const char *name, const char *path, int conns)
{
	struct msg_file	 fl;
	struct imsgbuf	**ib;
	const char	*slash;
	void		*buf;
	size_t		 len;
	int		 c, rv, got = 0, refused = 0;

	memset(&fl, 0, sizeof(fl));
	fl.fl_owner = MSG_OWNER_NONE;
	if ((slash = strchr(name, '/')) != NULL) {
		fl.fl_owner = (uid_t)strtoul(name, NULL, 10);
		name = slash + 1;
	}
	strlcpy(fl.fl_key, name, sizeof(fl.fl_key));
	strlcpy(fl.fl_path, path, sizeof(fl.fl_path));
	if (conns < 1 || (ib = calloc(conns, sizeof(*ib))) == NULL)
		errx(2, "gethold: bad count");
	for (c = 0; c < conns; c++) {
		if ((ib[c] = imsgbuf_new(t_connect(sock))) == NULL)
			err(2, "imsgbuf_new");
		if (msg_file_encode(&fl, &buf, &len) == -1 ||
		    imsgbuf_compose(ib[c], IMSG_CTL_FILE_GET, 0, 0, -1, buf,
		    len) == -1 || imsgbuf_flush(ib[c]) == -1)
			err(2, "get");
		free(buf);
		if ((rv = t_answer(ib[c])) == -1)
			errx(2, "gethold: closed");
		if (rv == 1)
			refused++;
		else
			got++;
	}
	printf("got %d refused %d\n", got, refused);
	fflush(stdout);
	sleep(2);
	for (c = 0; c < conns; c++)
		imsgbuf_free(ib[c]);
	free(ib);
}

int
main(int argc, char *argv[])
{
	const char	*sock, *mode;
	char		 buf[4096];
	int		 fd, i, n, *fds;

	if (argc < 3)
		errx(2, "usage: t_ctlsend socket mode [arg]");
	sock = argv[1];
	mode = argv[2];
	n = argc > 3 ? atoi(argv[3]) : 0;

	if (strcmp(mode, "puthold") == 0 && argc > 5) {
		t_puthold(sock, argv[3], atoi(argv[4]), atoi(argv[5]));
		return (0);
	}
	if (strcmp(mode, "gethold") == 0 && argc > 5) {
		t_gethold(sock, argv[3], argv[4], atoi(argv[5]));
		return (0);
	}
	if (strcmp(mode, "flood") == 0) {
		if ((fds = calloc(n, sizeof(int))) == NULL)
			err(2, "calloc");
		for (i = 0; i < n; i++)
			fds[i] = t_connect(sock);
		for (i = 0; i < n; i++)
			close(fds[i]);
		free(fds);
		printf("flooded %d\n", n);
		return (0);
	}

	fd = t_connect(sock);
	if (strcmp(mode, "garbage") == 0) {
		for (i = 0; i < n; i += sizeof(buf)) {
			arc4random_buf(buf, sizeof(buf));
			t_send(fd, buf, n - i < (int)sizeof(buf) ?
			    (size_t)(n - i) : sizeof(buf));
		}
	} else if (strcmp(mode, "oversized") == 0) {
		t_hdr(fd, IMSG_CTL_SHOW_STATS, IMSG_MAX_SIZE + 1, 0, 0);
		memset(buf, 'A', sizeof(buf));
		t_send(fd, buf, sizeof(buf));
	} else if (strcmp(mode, "undersized") == 0) {
		t_hdr(fd, IMSG_CTL_SHOW_STATS, 4, 0, 0);
	} else if (strcmp(mode, "truncated") == 0) {
		t_send(fd, "\x08\x00\x00\x00\x14\x00", 6);
		close(fd);
		printf("closed\n");
		return (0);
	} else if (strcmp(mode, "midclose") == 0) {
		t_hdr(fd, IMSG_CTL_SHOW_STATS, IMSG_HDR_SIZE + 100, 0, 0);
		t_send(fd, "abc", 3);
		close(fd);
		printf("closed\n");
		return (0);
	} else if (strcmp(mode, "badpayload") == 0) {
		t_hdr(fd, IMSG_CTL_SHOW_STATS, IMSG_HDR_SIZE + 3, 0, 0);
		t_send(fd, "xyz", 3);
	} else if (strcmp(mode, "badpad") == 0) {
		t_hdr(fd, IMSG_CTL_SHOW_STATS, IMSG_HDR_SIZE, 0, 0xffff);
	} else if (strcmp(mode, "unknown") == 0) {
		t_hdr(fd, 9999, IMSG_HDR_SIZE, 0, 0);
	} else if (strcmp(mode, "withfd") == 0) {
		struct imsgbuf	*ib;
		int		 nfd;

		if ((nfd = open("/dev/null", O_RDONLY)) == -1)
			err(2, "open");
		if ((ib = imsgbuf_new(fd)) == NULL ||
		    imsgbuf_compose(ib, IMSG_CTL_SHOW_STATS, 0, 0, nfd, NULL,
		    0) == -1 || imsgbuf_flush(ib) == -1)
			err(2, "send fd");
		t_drain(fd);
		imsgbuf_free(ib);
		return (0);
	} else if (strcmp(mode, "testsyscall") == 0) {
		t_hdr(fd, IMSG_CTL_TEST_SYSCALL, IMSG_HDR_SIZE, 0, 0);
	} else if (strcmp(mode, "idle") == 0) {
		sleep(n);
	} else if (strcmp(mode, "burst") == 0) {
		t_burst(fd, n);
		return (0);
	} else if (strcmp(mode, "pipeline") == 0) {
		t_pipeline(fd, n);
		return (0);
	} else if (strcmp(mode, "bootleave") == 0 && argc > 3) {
		t_bootleave(fd, argv[3]);
		return (0);
	} else
		errx(2, "unknown mode %s", mode);
	t_drain(fd);
	return (0);
}
