/*
 * libFuzzer target for the broker's WebSocket connections (broker/ws.c
 * over libwslay): the input is what a client sends after its opening
 * handshake, its frames, read on a socket pair as the broker reads a
 * connection taken over from the HTTP server.  The user of the
 * connection echoes each message while there is room, as the channel
 * answers.
 *
 * The first byte picks the bound of a message (16 bytes to 4 KiB) and
 * whether the input arrives whole or in pieces; the rest is the
 * client's bytes.  Invariants: no message handed up is over the bound,
 * text handed up is UTF-8 (jansson agrees), the connection answers 101
 * with the right accept key and then only well-formed server frames
 * (unmasked, known opcodes, control frames whole and at most 125
 * bytes), a close frame is the last one, and nothing is left open
 * after the connection is freed.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <jansson.h>

#include "fenced.h"
#include "log.h"
#include "msg.h"
#include "proc.h"
#include "broker.h"
#include "ws.h"
#include "fuzz.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);
int	LLVMFuzzerInitialize(int *, char ***);

struct proc_self	 broker_self;
struct broker_stats	 broker_stats;
struct msg_procinfo	 broker_procinfo;

#define FZ_KEY		"dGhlIHNhbXBsZSBub25jZQ=="
#define FZ_ACCEPT	"s3pPLMBiTxaQ9kYGzzhZRbK+xOo="	/* RFC 6455's */
#define FZ_OUT_MAX	(1U << 20)

static size_t	 fz_msgmax;
static int	 fz_closed;
static unsigned int fz_code;
static uint8_t	*fz_out;
static size_t	 fz_outlen;

static void
fz_message(void *arg, struct ws *ws, int binary, const uint8_t *p, size_t len)
{
	json_t	*s;

	FUZZ_CHECK(len <= fz_msgmax);
	/* An empty message may come as NULL. */
	if (!binary && len > 0) {
		/* jansson's own UTF-8 check agrees with ours. */
		FUZZ_CHECK((s = json_stringn((const char *)p, len)) != NULL);
		json_decref(s);
	}
	if (ws_room(ws))
		(void)ws_send(ws, binary, p, len);
}

static void
fz_drained(void *arg, struct ws *ws)
{
}

static void
fz_closedcb(void *arg, struct ws *ws, unsigned int code)
{
	fz_closed = 1;
	fz_code = code;
	if (getenv("FUZZ_SHOW") != NULL)
		fprintf(stderr, "ws_fuzz: closed, code %u\n", code);
}

static const struct ws_ops fz_ops = { fz_message, fz_drained, fz_closedcb };

static void
fz_drain(int fd)
{
	ssize_t	 n;

	for (;;) {
		if (fz_outlen == FZ_OUT_MAX) {
			uint8_t	 junk[4096];

			if (read(fd, junk, sizeof(junk)) <= 0)
				return;
			continue;
		}
		n = read(fd, fz_out + fz_outlen, FZ_OUT_MAX - fz_outlen);
		if (n <= 0)
			return;
		fz_outlen += n;
	}
}

/* What the connection wrote: 101, then server frames. */
static void
fz_check_out(void)
{
	const char	*head = "HTTP/1.1 101 Switching Protocols\r\n";
	uint8_t		*p, *end = fz_out + fz_outlen, *hend;
	uint64_t	 len;
	unsigned int	 op, fin;
	int		 closed = 0;

	if (fz_outlen == FZ_OUT_MAX)
		return;		/* cut: only the start is known */
	FUZZ_CHECK(fz_outlen >= strlen(head) &&
	    memcmp(fz_out, head, strlen(head)) == 0);
	hend = memmem(fz_out, fz_outlen, "\r\n\r\n", 4);
	FUZZ_CHECK(hend != NULL);
	FUZZ_CHECK(memmem(fz_out, hend - fz_out, FZ_ACCEPT,
	    strlen(FZ_ACCEPT)) != NULL);
	for (p = hend + 4; p < end; p += len) {
		FUZZ_CHECK(!closed);
		FUZZ_CHECK(end - p >= 2);
		op = p[0] & 0x0f;
		fin = p[0] & 0x80;
		FUZZ_CHECK((p[0] & 0x70) == 0);		/* no reserved bit */
		FUZZ_CHECK((p[1] & 0x80) == 0);		/* never masked */
		FUZZ_CHECK(op == 1 || op == 2 || op == 0 || op >= 8);
		FUZZ_CHECK(op <= 10);
		len = p[1] & 0x7f;
		p += 2;
		if (len == 126) {
			FUZZ_CHECK(end - p >= 2);
			len = (uint64_t)p[0] << 8 | p[1];
			p += 2;
		} else if (len == 127) {
			FUZZ_CHECK(end - p >= 8);
			len = 0;
			for (int i = 0; i < 8; i++)
				len = len << 8 | p[i];
			p += 8;
		}
		if (op >= 8)
			FUZZ_CHECK(len <= 125 && fin);
		FUZZ_CHECK((uint64_t)(end - p) >= len);
		if (op == 8) {
			closed = 1;
			if (getenv("FUZZ_SHOW") != NULL)
				fprintf(stderr, "ws_fuzz: close frame, code %u\n",
				    len >= 2 ? (unsigned int)p[0] << 8 | p[1] : 0);
		}
	}
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	if (getenv("FUZZ_SHOW") != NULL)
		log_setverbose(3);
	log_init(1, 0);
	if ((broker_self.ps_evbase = event_base_new()) == NULL)
		abort();
	if ((fz_out = malloc(FZ_OUT_MAX)) == NULL)
		abort();
	return (0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t	 fds = fuzz_open_fds();
	struct ws	*ws;
	size_t		 off, step;
	int		 sv[2], i, pieces;

	if (size < 1)
		return (0);
	fz_msgmax = 16U << (data[0] & 0x07);
	pieces = data[0] & 0x08;
	data++;
	size--;
	fz_closed = 0;
	fz_outlen = 0;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv) == -1)
		abort();
	FUZZ_CHECK((ws = ws_new(sv[0], FZ_KEY, NULL, 0, fz_msgmax, &fz_ops,
	    NULL)) != NULL);
	for (off = 0; off < size && !fz_closed; off += step) {
		step = pieces ? 1 + (data[off] & 0x0f) : size - off;
		if (step > size - off)
			step = size - off;
		ws_feed(ws, data + off, step);
		event_base_loop(broker_self.ps_evbase, EVLOOP_NONBLOCK);
		fz_drain(sv[1]);
	}
	for (i = 0; i < 4 && !fz_closed; i++) {
		event_base_loop(broker_self.ps_evbase, EVLOOP_NONBLOCK);
		fz_drain(sv[1]);
	}
	if (!fz_closed) {
		if (getenv("FUZZ_SHOW") != NULL)
			fprintf(stderr, "ws_fuzz: still open\n");
		ws_free(ws);
	}
	/* libevent closes a freed bufferevent's socket from the loop. */
	event_base_loop(broker_self.ps_evbase, EVLOOP_NONBLOCK);
	fz_drain(sv[1]);
	close(sv[1]);
	fz_check_out();
	FUZZ_CHECK(fuzz_open_fds() == fds);
	return (0);
}
