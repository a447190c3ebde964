/*
 * splice: relay two connected, non-blocking stream sockets to each
 * other inside the broker, both ways, with half-close, holding at most
 * SPLICE_HIGH bytes per direction: a side that does not read stops the
 * other side being read.  The control socket hands fencectl one end of
 * a socket pair spliced to a tunnel's descriptor, never the fence's
 * own socket (docs/interactive.md).  When both directions are done, or
 * either fails, both descriptors are closed and the done callback is
 * called once.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "log.h"
#include "broker.h"

#define SPLICE_HIGH	(256 * 1024)

struct splice {
	struct bufferevent	*sp_b[2];
	int			 sp_eof[2];	/* side i sent its end */
	int			 sp_shut[2];	/* side i was shut for writing */
	void			(*sp_done)(void *);
	void			*sp_arg;
};

static void	splice_read(struct bufferevent *, void *);
static void	splice_write(struct bufferevent *, void *);
static void	splice_event(struct bufferevent *, short, void *);
static void	splice_end(struct splice *);
static void	splice_check(struct splice *, int);

static int
splice_side(struct splice *sp, struct bufferevent *b)
{
	return (b == sp->sp_b[1]);
}

/* Splice a and b (both ours from now on, closed at the end). */
int
splice_new(int a, int b, void (*done)(void *), void *arg)
{
	struct splice	*sp;
	int		 i;

	if ((sp = calloc(1, sizeof(*sp))) == NULL)
		return (-1);
	sp->sp_done = done;
	sp->sp_arg = arg;
	if ((sp->sp_b[0] = bufferevent_socket_new(broker_self.ps_evbase, a,
	    BEV_OPT_CLOSE_ON_FREE)) == NULL ||
	    (sp->sp_b[1] = bufferevent_socket_new(broker_self.ps_evbase, b,
	    BEV_OPT_CLOSE_ON_FREE)) == NULL) {
		if (sp->sp_b[0] != NULL)
			bufferevent_free(sp->sp_b[0]);
		free(sp);
		return (-1);
	}
	for (i = 0; i < 2; i++) {
		bufferevent_setcb(sp->sp_b[i], splice_read, splice_write,
		    splice_event, sp);
		bufferevent_setwatermark(sp->sp_b[i], EV_READ, 0, SPLICE_HIGH);
		bufferevent_setwatermark(sp->sp_b[i], EV_WRITE,
		    SPLICE_HIGH / 2, 0);
		bufferevent_enable(sp->sp_b[i], EV_READ | EV_WRITE);
	}
	return (0);
}

static void
splice_end(struct splice *sp)
{
	bufferevent_free(sp->sp_b[0]);
	bufferevent_free(sp->sp_b[1]);
	if (sp->sp_done != NULL)
		sp->sp_done(sp->sp_arg);
	free(sp);
}

/* Side i read: on to the other, and no more reading while it is full. */
static void
splice_read(struct bufferevent *b, void *arg)
{
	struct splice	*sp = arg;
	int		 i = splice_side(sp, b);
	struct bufferevent *o = sp->sp_b[!i];

	evbuffer_add_buffer(bufferevent_get_output(o),
	    bufferevent_get_input(b));
	if (evbuffer_get_length(bufferevent_get_output(o)) >= SPLICE_HIGH)
		bufferevent_disable(b, EV_READ);
}

/* Side i's output went below half: the other may be read again. */
static void
splice_write(struct bufferevent *b, void *arg)
{
	struct splice	*sp = arg;
	int		 i = splice_side(sp, b);

	if (!sp->sp_eof[!i])
		bufferevent_enable(sp->sp_b[!i], EV_READ);
	splice_check(sp, i);
}

/*
 * Side i's output is empty and the other side ended: shut i for
 * writing.  Both ended and shut: over.
 */
static void
splice_check(struct splice *sp, int i)
{
	if (sp->sp_eof[!i] && !sp->sp_shut[i] &&
	    evbuffer_get_length(bufferevent_get_output(sp->sp_b[i])) == 0) {
		(void)shutdown(bufferevent_getfd(sp->sp_b[i]), SHUT_WR);
		sp->sp_shut[i] = 1;
	}
	if (sp->sp_shut[0] && sp->sp_shut[1])
		splice_end(sp);
}

static void
splice_event(struct bufferevent *b, short what, void *arg)
{
	struct splice	*sp = arg;
	int		 i = splice_side(sp, b);

	if (what & BEV_EVENT_ERROR) {
		splice_end(sp);
		return;
	}
	if (what & BEV_EVENT_EOF) {
		/* What was read before it is passed on first. */
		splice_read(b, sp);
		sp->sp_eof[i] = 1;
		bufferevent_disable(b, EV_READ);
		splice_check(sp, !i);
	}
}
