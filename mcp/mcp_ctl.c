/*
 * fence-mcp's side of the control socket: one connection per tool
 * call, as fencectl makes one per command; imsg/'s framing and the
 * codecs of msg.h, nothing of its own.  While it waits for fenced it
 * watches its own client too: a client gone (its end of our standard
 * output closed) ends fence-mcp at once, and closing the connection
 * abandons what was asked (docs/mcp.md, "A client that goes").
 */
#include <sys/types.h>

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fenced.h"
#include "imsg.h"
#include "log.h"
#include "msg.h"
#include "mcp.h"

struct mcp_ctl {
	struct imsgbuf	*m_ibuf;
	int		 m_fd;
};

/* Connected and the request sent, or NULL and why in err. */
struct mcp_ctl *
mcp_ctl_open(uint32_t type, const void *buf, size_t len, char *err,
    size_t errlen)
{
	struct mcp_ctl	*m;

	if ((m = calloc(1, sizeof(*m))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return (NULL);
	}
	if ((m->m_fd = unix_connect(mcp_socket)) == -1) {
		snprintf(err, errlen, "cannot connect to %s: %s", mcp_socket,
		    strerror(errno));
		free(m);
		return (NULL);
	}
	if ((m->m_ibuf = imsgbuf_new(m->m_fd)) == NULL) {
		snprintf(err, errlen, "out of memory");
		close(m->m_fd);
		free(m);
		return (NULL);
	}
	if (mcp_ctl_send(m, type, buf, len) == -1) {
		snprintf(err, errlen, "cannot send to fenced: %s",
		    strerror(errno));
		mcp_ctl_close(m);
		return (NULL);
	}
	return (m);
}

int
mcp_ctl_send(struct mcp_ctl *m, uint32_t type, const void *buf, size_t len)
{
	if (imsgbuf_compose(m->m_ibuf, type, 0, 0, -1, buf, len) == -1 ||
	    imsgbuf_flush(m->m_ibuf) == -1)
		return (-1);
	return (0);
}

/*
 * poll(2) on the caller's n descriptors until one has an event or
 * wait_ms passed (-1: no end), and meanwhile, unless one of their
 * handlers is what waits, on the terminals' and the forwards'
 * (mcp_term.c, mcp_port.c), whose events are handled here: what a
 * tool call waits for never stops their bytes.  The caller's
 * descriptors with events, 0 when the time passed, -1 (errno).
 */
int
mcp_poll(struct pollfd *pfd, int n, int wait_ms)
{
	static int	 busy;
	struct pollfd	 all[MCP_POLL_MAX];
	struct timespec	 now, end;
	int		 nterm = 0, nport = 0, r, i, left = wait_ms;

	if (n < 0 || n > MCP_POLL_OWN)
		fatalx("%s: %d descriptors", __func__, n);
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += wait_ms / 1000;
	end.tv_nsec += (long)(wait_ms % 1000) * 1000000;
	if (end.tv_nsec >= 1000000000) {
		end.tv_sec++;
		end.tv_nsec -= 1000000000;
	}
	for (;;) {
		memcpy(all, pfd, n * sizeof(*pfd));
		if (!busy) {
			nterm = mcp_term_fill(all + n, MCP_POLL_MAX - n);
			nport = mcp_port_fill(all + n + nterm,
			    MCP_POLL_MAX - n - nterm);
		}
		if ((r = poll(all, n + nterm + nport, left)) == -1) {
			if (errno == EINTR)
				continue;
			return (-1);
		}
		if (!busy && nterm + nport > 0) {
			busy = 1;
			mcp_term_handle(all + n, nterm);
			mcp_port_handle(all + n + nterm, nport);
			busy = 0;
		}
		for (r = 0, i = 0; i < n; i++)
			if ((pfd[i].revents = all[i].revents) != 0)
				r++;
		if (r > 0)
			return (r);
		if (wait_ms == -1)
			continue;
		clock_gettime(CLOCK_MONOTONIC, &now);
		left = (end.tv_sec - now.tv_sec) * 1000 +
		    (end.tv_nsec - now.tv_nsec) / 1000000;
		if (left <= 0)
			return (0);
	}
}

/*
 * The next answer, waiting at most wait_ms; -1 and why in err when
 * fenced closes, says something unreadable or nothing.
 */
int
mcp_ctl_next(struct mcp_ctl *m, struct imsg *imsg, int wait_ms, char *err,
    size_t errlen)
{
	struct pollfd	 pfd[2];
	ssize_t		 n;
	int		 r;

	for (;;) {
		if ((r = imsgbuf_get(m->m_ibuf, imsg)) == -1) {
			snprintf(err, errlen, "bad reply from fenced");
			return (-1);
		}
		if (r == 1)
			return (0);
		pfd[0].fd = imsgbuf_fd(m->m_ibuf);
		pfd[0].events = POLLIN;
		/* No events: only its error or hang-up is reported. */
		pfd[1].fd = STDOUT_FILENO;
		pfd[1].events = 0;
		if ((r = mcp_poll(pfd, 2, wait_ms)) == -1) {
			snprintf(err, errlen, "poll: %s", strerror(errno));
			return (-1);
		}
		if (pfd[1].revents & (POLLERR | POLLHUP | POLLNVAL)) {
			log_warnx("the client went away; what it asked is "
			    "abandoned");
			mcp_ctl_close(m);
			exit(0);
		}
		if (r == 0) {
			snprintf(err, errlen, "no reply from fenced in %d ms",
			    wait_ms);
			return (-1);
		}
		if (!(pfd[0].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		if ((n = imsgbuf_read(m->m_ibuf)) == -1) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			snprintf(err, errlen, "read: %s", strerror(errno));
			return (-1);
		}
		if (n == 0) {
			snprintf(err, errlen, "fenced closed the connection");
			return (-1);
		}
	}
}

void
mcp_ctl_close(struct mcp_ctl *m)
{
	if (m == NULL)
		return;
	imsgbuf_free(m->m_ibuf);
	close(m->m_fd);
	free(m);
}

/* Wait ms, still watching the client: gone, fence-mcp ends. */
void
mcp_ctl_sleep(int ms)
{
	struct pollfd	 pfd;

	pfd.fd = STDOUT_FILENO;
	pfd.events = 0;
	if (mcp_poll(&pfd, 1, ms) == 1 &&
	    (pfd.revents & (POLLERR | POLLHUP | POLLNVAL))) {
		log_warnx("the client went away");
		exit(0);
	}
}
