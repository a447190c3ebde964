/*
 * Two connected stream sockets relayed both ways, each direction
 * through a buffer of PUMP_BUF bytes, a half-close passed on: the
 * engine of fencectl forward and of fence-mcp's forwards.  The caller
 * owns the poll loop: pump_events() fills the pair's two pollfds,
 * pump_move() moves what they allow and says when the pair is over.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fenced.h"

/* The pair, or NULL; the descriptors are the pump's from then on. */
struct pump *
pump_new(int a, int b)
{
	struct pump	*p;

	if ((p = calloc(1, sizeof(*p))) == NULL)
		return (NULL);
	p->p_fd[0] = a;
	p->p_fd[1] = b;
	return (p);
}

void
pump_free(struct pump *p)
{
	if (p == NULL)
		return;
	(void)close(p->p_fd[0]);
	(void)close(p->p_fd[1]);
	free(p);
}

/* What each side waits for; nothing wanted, -1 (its hang-up waits). */
void
pump_events(const struct pump *p, struct pollfd *pfd)
{
	int	 k;

	for (k = 0; k < 2; k++) {
		pfd[k].fd = p->p_fd[k];
		pfd[k].events = 0;
		pfd[k].revents = 0;
		if (!p->p_dir[k].d_eof && p->p_dir[k].d_len < PUMP_BUF)
			pfd[k].events |= POLLIN;
		if (p->p_dir[!k].d_len > 0)
			pfd[k].events |= POLLOUT;
		if (pfd[k].events == 0)
			pfd[k].fd = -1;
	}
}

/* Move what can be moved; 1 when the pair is over (both shut, or an error). */
int
pump_move(struct pump *p, const struct pollfd *pfd)
{
	struct pump_dir	*d;
	ssize_t		 n;
	int		 k, src, dst;

	for (k = 0; k < 2; k++) {
		d = &p->p_dir[k];
		src = p->p_fd[k];
		dst = p->p_fd[!k];
		if ((pfd[k].revents & (POLLIN | POLLHUP | POLLERR)) &&
		    !d->d_eof && d->d_len < PUMP_BUF) {
			n = read(src, d->d_buf + d->d_len, PUMP_BUF - d->d_len);
			if (n == -1 && errno != EAGAIN && errno != EINTR)
				return (1);
			if (n == 0)
				d->d_eof = 1;
			if (n > 0)
				d->d_len += (size_t)n;
		}
		if (d->d_len > 0 && (pfd[!k].revents & (POLLOUT | POLLERR))) {
			n = send(dst, d->d_buf, d->d_len, MSG_NOSIGNAL);
			if (n == -1 && errno != EAGAIN && errno != EINTR)
				return (1);
			if (n > 0) {
				memmove(d->d_buf, d->d_buf + n,
				    d->d_len - (size_t)n);
				d->d_len -= (size_t)n;
			}
		}
		if (d->d_eof && d->d_len == 0 && !d->d_shut) {
			(void)shutdown(dst, SHUT_WR);
			d->d_shut = 1;
		}
	}
	return (p->p_dir[0].d_shut && p->p_dir[1].d_shut);
}
