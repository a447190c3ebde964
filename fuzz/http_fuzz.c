/*
 * libFuzzer target for the HTTP API as the broker serves it: the input
 * is what a client sends on one TCP connection to 127.0.0.1, read by
 * evhttp with the broker's own broker/http.c (framing, deadlines, who
 * asks, evhttp's pages replaced) and broker/http_api.c (routes, methods,
 * queries, the JSON bodies of every endpoint).  The fence service is
 * fuzz/stub_svc.c, the token store a stand-in knowing two tokens.
 *
 * The first byte picks whether the service answers with errors; the
 * rest is the request stream.  Invariants: the service hears the
 * token's owner, never an admin, and only values its codecs accept;
 * every answer on the wire is HTTP/ with a status from 100 to 599,
 * Content-Type application/json and a body that is a JSON object, an
 * error (400 and up) with string "error" and "message" (docs/http.md,
 * "JSON errors"); and once the client is gone no descriptor is left.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <event2/event.h>
#include <jansson.h>

#include "fenced.h"
#include "log.h"
#include "msg.h"
#include "proc.h"
#include "broker.h"
#include "fuzz.h"
#include "stub_svc.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);
int	LLVMFuzzerInitialize(int *, char ***);
void	config_defaults(struct fenced_config *);

struct proc_self	 broker_self;
struct broker_stats	 broker_stats;
struct msg_procinfo	 broker_procinfo;

#define FZ_OUT_MAX	(4U << 20)	/* answers kept to check */

static struct sockaddr_in fz_addr;
static int		 fz_show;	/* FUZZ_SHOW set: print the answers */

/* Two tokens: 64 times 'a' is uid 1000's, 64 times 'b' uid 1001's. */
int
token_lookup(const char *text, size_t len, uid_t *uid)
{
	size_t	 i;

	FUZZ_CHECK(text != NULL && strlen(text) == len);
	if (!hosttoken_text_valid(text, len))
		return (-1);
	for (i = 1; i < len; i++)
		if (text[i] != text[0])
			return (-1);
	if (text[0] == 'a')
		*uid = 1000;
	else if (text[0] == 'b')
		*uid = 1001;
	else
		return (-1);
	/* The service must hear this uid, as a plain user. */
	stub_uid = *uid;
	return (0);
}

/* The same, the token named "fz" (the audit log's token name). */
int
token_lookup_name(const char *text, size_t len, uid_t *uid, char *name,
    size_t size)
{
	if (token_lookup(text, len, uid) == -1)
		return (-1);
	if (name != NULL)
		(void)strlcpy(name, "fz", size);
	return (0);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	socklen_t	 sl = sizeof(fz_addr);
	int		 fd;

	fz_show = getenv("FUZZ_SHOW") != NULL;
	if (fz_show)
		log_setverbose(3);
	log_init(1, 0);
	log_ratelimit(1);
	json_object_seed(1);
	config_defaults(&broker_self.ps_conf);
	if ((broker_self.ps_evbase = event_base_new()) == NULL)
		FUZZ_FAIL();
	memset(&fz_addr, 0, sizeof(fz_addr));
	fz_addr.sin_family = AF_INET;
	fz_addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0)) == -1 ||
	    bind(fd, (struct sockaddr *)&fz_addr, sizeof(fz_addr)) == -1 ||
	    listen(fd, 16) == -1 ||
	    getsockname(fd, (struct sockaddr *)&fz_addr, &sl) == -1)
		FUZZ_FAIL();
	broker_self.ps_started = 1;
	http_listen(fd);
	http_start();
	return (0);
}

/* The value of header name in the header section [h, e), or NULL. */
/* The header value v (vl bytes) is exactly type. */
static int
fz_type_is(const char *v, size_t vl, const char *type)
{
	return (vl == strlen(type) && memcmp(v, type, vl) == 0);
}

static const char *
fz_header(const char *h, const char *e, const char *name, size_t *vlen)
{
	const char	*l, *nl, *v;
	size_t		 n = strlen(name);

	for (l = h; l < e; l = nl + 2) {
		if ((nl = memmem(l, e - l, "\r\n", 2)) == NULL)
			nl = e;
		if ((size_t)(nl - l) > n && l[n] == ':' &&
		    strncasecmp(l, name, n) == 0) {
			v = l + n + 1;
			while (v < nl && *v == ' ')
				v++;
			*vlen = nl - v;
			return (v);
		}
		if (nl == e)
			break;
	}
	return (NULL);
}

/*
 * Check the answers in out[0..len): each whole one, in order.  A HEAD
 * answer has a Content-Length but no body, so after one (or where the
 * stream cannot say) only the first answer is held to the body rules.
 */
static void
fz_answers(const char *out, size_t len, int head)
{
	const char	*p = out, *end = out + len, *hend, *v, *sp;
	char		 num[24];
	json_t		*o, *err, *msg;
	size_t		 vl, cl;
	int		 status, json;

	while (p < end) {
		if ((hend = memmem(p, end - p, "\r\n\r\n", 4)) == NULL)
			return;		/* cut off by the close: fine */
		FUZZ_CHECK(end - p >= 13);
		if (fz_show)
			fprintf(stderr, "answer: %.*s\n", (int)(hend - p), p);
		/*
		 * evhttp answers in the request's version as it parsed it:
		 * HTTP/0.1, or HTTP/1.-92 for a request of HTTP/1.1700 (its
		 * minor is a char).  Its, not ours: only the status is held.
		 */
		FUZZ_CHECK(memcmp(p, "HTTP/", 5) == 0);
		FUZZ_CHECK((sp = memchr(p, ' ', hend - p)) != NULL &&
		    hend - sp > 4);
		status = atoi(sp + 1);
		FUZZ_CHECK(status >= 100 && status <= 599);
		/*
		 * A WebSocket's handshake answered (the channel, a
		 * terminal's attach): what follows is frames, ws_fuzz's.
		 */
		if (status == 101) {
			FUZZ_CHECK(fz_header(p, hend, "Upgrade", &vl) != NULL);
			FUZZ_CHECK(fz_header(p, hend, "Sec-WebSocket-Accept",
			    &vl) != NULL && vl == 28);
			return;
		}
		/*
		 * JSON, but for the status page's own files (GET /,
		 * broker/page/): a 200 of the types scripts/page.sh gives
		 * them, whose bodies are ours, not JSON; and an admin's
		 * metrics (the text format).
		 */
		v = fz_header(p, hend, "Content-Type", &vl);
		FUZZ_CHECK(v != NULL);
		json = vl >= 16 && strncmp(v, "application/json", 16) == 0;
		FUZZ_CHECK(json || (status == 200 &&
		    (fz_type_is(v, vl, "text/html; charset=utf-8") ||
		    fz_type_is(v, vl, "text/css; charset=utf-8") ||
		    fz_type_is(v, vl, "text/javascript; charset=utf-8") ||
		    fz_type_is(v, vl, "text/plain; version=0.0.4; "
		    "charset=utf-8"))));
		if ((v = fz_header(p, hend, "Content-Length", &vl)) == NULL)
			return;
		FUZZ_CHECK(vl > 0 && vl < sizeof(num));
		memcpy(num, v, vl);
		num[vl] = '\0';
		cl = strtoul(num, NULL, 10);
		p = hend + 4;
		if (head)
			return;
		if ((size_t)(end - p) < cl)
			return;
		if (!json) {
			p += cl;
			continue;
		}
		if (fz_show)
			fprintf(stderr, "body: %.*s\n", (int)cl, p);
		FUZZ_CHECK((o = json_loadb(p, cl, 0, NULL)) != NULL);
		FUZZ_CHECK(json_is_object(o));
		if (status >= 400) {
			err = json_object_get(o, "error");
			msg = json_object_get(o, "message");
			FUZZ_CHECK(json_is_string(err) && json_is_string(msg));
		}
		json_decref(o);
		p += cl;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char	 out[FZ_OUT_MAX];
	uint64_t	 fds_before;
	const uint8_t	*req;
	size_t		 reqlen, off = 0, outlen = 0;
	ssize_t		 n;
	unsigned int	 rounds, idle;
	int		 c, closed = 0;

	if (size < 1)
		return (0);
	fds_before = fuzz_open_fds();
	stub_errors = data[0] & 1;
	stub_uid = (uid_t)-1;
	stub_admin = 0;
	stub_unbounded = 0;
	req = data + 1;
	reqlen = size - 1;

	if ((c = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0)) == -1)
		FUZZ_FAIL();
	if (connect(c, (struct sockaddr *)&fz_addr, sizeof(fz_addr)) == -1 &&
	    errno != EINPROGRESS)
		FUZZ_FAIL();

	for (rounds = 0, idle = 0; rounds < 200 && idle < 3; rounds++) {
		idle++;
		if (off < reqlen) {
			n = write(c, req + off, reqlen - off);
			if (n > 0) {
				off += (size_t)n;
				idle = 0;
			}
		}
		event_base_loop(broker_self.ps_evbase, EVLOOP_NONBLOCK);
		for (;;) {
			n = read(c, out + outlen, sizeof(out) - outlen);
			if (n > 0) {
				outlen += (size_t)n;
				idle = 0;
				if (outlen == sizeof(out))
					break;
				continue;
			}
			if (n == 0 || (n == -1 && errno != EAGAIN))
				closed = 1;
			break;
		}
		if (closed || outlen == sizeof(out))
			break;
	}
	fz_answers(out, outlen, memmem(req, reqlen, "HEAD", 4) != NULL);

	/* The client leaves; the broker must let go of everything. */
	close(c);
	for (rounds = 0; rounds < 50 && fuzz_open_fds() != fds_before;
	    rounds++)
		event_base_loop(broker_self.ps_evbase, EVLOOP_NONBLOCK);
	FUZZ_CHECK(fuzz_open_fds() == fds_before);
	return (0);
}
