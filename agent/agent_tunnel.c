/*
 * The agent's tunnels (docs/interactive.md, "Tunnels"): framed byte
 * streams between the broker and an end inside the fence, one per id
 * (the id of the TUNNEL_OPEN that made it).  This file owns what every
 * kind shares: the windows both ways, the broker's bytes waiting for
 * the end, half-close and abort; an end (agent_port.c's socket, a
 * terminal, a process's output) plugs in with struct agent_tunnel_ops.
 *
 * What the ends call never calls them back at once: an end of file
 * for the end, or the tunnel's end after both sides shut, is said from
 * an event of the tunnel's own, so an end never finds itself freed
 * under its feet.  What the broker says (DATA, CREDIT, CLOSE) is told
 * the end from the dispatch, as the last thing done with the tunnel.
 */
#include <sys/types.h>
#include <sys/queue.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "fenced.h"
#include "imsg.h"
#include "log.h"
#include "msg.h"
#include "agent.h"
#include "agent_tunnel.h"

/* Credit is given back in batches of this much, or when all is taken. */
#define AGENT_TUNNEL_ACK	(32 * 1024)

struct agent_tunnel {
	TAILQ_ENTRY(agent_tunnel) t_entry;
	uint32_t	 t_id;
	const struct agent_tunnel_ops *t_ops;
	void		*t_arg;
	size_t		 t_room;	/* bytes we may send unacknowledged */
	uint8_t		*t_in;		/* the broker's bytes, MSG_TUNNEL_WINDOW */
	size_t		 t_in_off;
	size_t		 t_in_len;
	size_t		 t_unacked;	/* consumed, not given back yet */
	int		 t_shut_in;	/* the broker sends no more */
	int		 t_eof_said;	/* to_eof was called */
	int		 t_shut_out;	/* we send no more */
	struct event	*t_later;	/* what is said outside the end's calls */
};

static TAILQ_HEAD(, agent_tunnel) agent_tunnels =
    TAILQ_HEAD_INITIALIZER(agent_tunnels);
static size_t		 agent_ntunnels;

static struct agent_tunnel *agent_tunnel_find(uint32_t);
static void	agent_tunnel_free(struct agent_tunnel *);
static void	agent_tunnel_later(evutil_socket_t, short, void *);
static void	agent_tunnel_schedule(struct agent_tunnel *);
static void	agent_tunnel_say_close(uint32_t, uint32_t);
static void	agent_tunnel_ack(struct agent_tunnel *);

/*
 * TUNNEL_OPEN, paired: each kind to its end.  A kind not built in this
 * agent is refused by name, never left unanswered.
 */
void
agent_tunnel_open(uint32_t id, struct msg_tunnel_open *to)
{
	switch (to->to_kind) {
	case MSG_TUNNEL_PORT:
		agent_port_open(id, to);
		return;
	case MSG_TUNNEL_TERMINAL:
		agent_term_attach(id, to);
		return;
	case MSG_TUNNEL_OUTPUT:
		agent_bg_output(id, to);
		return;
	default:
		agent_error(id, "tunnel-kind", "this agent opens no tunnel "
		    "of kind %u", to->to_kind);
		return;
	}
}

size_t
agent_tunnel_count(void)
{
	return (agent_ntunnels);
}

/* No room for another tunnel (the ends ask before they build one). */
int
agent_tunnel_full(void)
{
	return (agent_ntunnels >= AGENT_TUNNELS_MAX);
}

/*
 * A framed tunnel of request id, with its end's ops and arg; the broker
 * is told it is open (IMSG_AGENT_TUNNEL, framed).  NULL when the agent
 * holds AGENT_TUNNELS_MAX already: the request is answered
 * too-many-tunnels then.
 */
struct agent_tunnel *
agent_tunnel_new(uint32_t id, const struct agent_tunnel_ops *ops, void *arg)
{
	struct agent_tunnel *t;
	struct msg_tunnel tn;
	void		*buf;
	size_t		 len;

	if (agent_tunnel_full() || agent_tunnel_find(id) != NULL) {
		agent_error(id, "too-many-tunnels", "the fence has %d "
		    "tunnels open", AGENT_TUNNELS_MAX);
		return (NULL);
	}
	if ((t = calloc(1, sizeof(*t))) == NULL)
		fatal("%s: calloc", __func__);
	if ((t->t_later = evtimer_new(agent_env->a_base, agent_tunnel_later,
	    t)) == NULL)
		fatalx("%s: evtimer_new", __func__);
	t->t_id = id;
	t->t_ops = ops;
	t->t_arg = arg;
	t->t_room = MSG_TUNNEL_WINDOW;
	TAILQ_INSERT_TAIL(&agent_tunnels, t, t_entry);
	agent_ntunnels++;
	tn.tn_mode = MSG_TUNNEL_FRAMED;
	if (msg_tunnel_encode(&tn, &buf, &len) == -1)
		fatal("%s: msg_tunnel_encode", __func__);
	agent_reply(IMSG_AGENT_TUNNEL, id, buf, len);
	log_debug("%s: tunnel %u open, framed", __func__, id);
	return (t);
}

uint32_t
agent_tunnel_id(const struct agent_tunnel *t)
{
	return (t->t_id);
}

static struct agent_tunnel *
agent_tunnel_find(uint32_t id)
{
	struct agent_tunnel *t;

	TAILQ_FOREACH(t, &agent_tunnels, t_entry)
		if (t->t_id == id)
			return (t);
	return (NULL);
}

static void
agent_tunnel_free(struct agent_tunnel *t)
{
	TAILQ_REMOVE(&agent_tunnels, t, t_entry);
	agent_ntunnels--;
	event_free(t->t_later);
	free(t->t_in);
	free(t);
}

/* How much the end may send now. */
size_t
agent_tunnel_room(const struct agent_tunnel *t)
{
	return (t->t_shut_out ? 0 : t->t_room);
}

/*
 * Send what fits in the window of len bytes at p, as DATA of at most
 * MSG_TUNNEL_DATA_MAX each; how much went.  Once the window is used
 * up the end waits for to_resume.
 */
size_t
agent_tunnel_send(struct agent_tunnel *t, const void *p, size_t len)
{
	struct msg_tunnel_data td;
	const uint8_t	*b = p;
	size_t		 n, sent = 0;
	void		*buf;
	size_t		 blen;

	if (t->t_shut_out)
		return (0);
	if (len > t->t_room)
		len = t->t_room;
	memset(&td, 0, sizeof(td));
	while (sent < len) {
		n = len - sent;
		if (n > MSG_TUNNEL_DATA_MAX)
			n = MSG_TUNNEL_DATA_MAX;
		td.td_data = (uint8_t *)(b + sent);
		td.td_len = n;
		if (msg_tunnel_data_encode(&td, &buf, &blen) == -1)
			fatal("%s: msg_tunnel_data_encode", __func__);
		agent_reply(IMSG_AGENT_TUNNEL_DATA, t->t_id, buf, blen);
		sent += n;
	}
	t->t_room -= sent;
	return (sent);
}

/* The broker's bytes that wait for the end: their count, *p at them. */
size_t
agent_tunnel_input(struct agent_tunnel *t, const uint8_t **p)
{
	*p = t->t_in != NULL ? t->t_in + t->t_in_off : NULL;
	return (t->t_in_len);
}

/* Give back what the end took, in batches, and always once all is. */
static void
agent_tunnel_ack(struct agent_tunnel *t)
{
	struct msg_tunnel_credit tc;
	void		*buf;
	size_t		 len;

	if (t->t_unacked == 0 || (t->t_unacked < AGENT_TUNNEL_ACK &&
	    t->t_in_len > 0) || t->t_shut_in)
		return;
	memset(&tc, 0, sizeof(tc));
	tc.tc_bytes = (uint32_t)t->t_unacked;
	if (msg_tunnel_credit_encode(&tc, &buf, &len) == -1)
		fatal("%s: msg_tunnel_credit_encode", __func__);
	agent_reply(IMSG_AGENT_TUNNEL_CREDIT, t->t_id, buf, len);
	t->t_unacked = 0;
}

/*
 * The end wrote n of the waiting bytes on: they go, and the broker
 * may send that much more.  With all taken after the broker's shut,
 * the end hears its end of file (later).
 */
void
agent_tunnel_consumed(struct agent_tunnel *t, size_t n)
{
	if (n > t->t_in_len)
		fatalx("%s: tunnel %u: %zu consumed of %zu", __func__,
		    t->t_id, n, t->t_in_len);
	t->t_in_off += n;
	t->t_in_len -= n;
	if (t->t_in_len == 0)
		t->t_in_off = 0;
	t->t_unacked += n;
	agent_tunnel_ack(t);
	if (t->t_in_len == 0 && t->t_shut_in && !t->t_eof_said)
		agent_tunnel_schedule(t);
}

static void
agent_tunnel_say_close(uint32_t id, uint32_t how)
{
	struct msg_tunnel_close tl;
	void		*buf;
	size_t		 len;

	memset(&tl, 0, sizeof(tl));
	tl.tl_how = how;
	if (msg_tunnel_close_encode(&tl, &buf, &len) == -1)
		fatal("%s: msg_tunnel_close_encode", __func__);
	agent_reply(IMSG_AGENT_TUNNEL_CLOSE, id, buf, len);
}

/* The end has no more to send (its end of file). */
void
agent_tunnel_shutdown(struct agent_tunnel *t)
{
	if (t->t_shut_out)
		return;
	t->t_shut_out = 1;
	agent_tunnel_say_close(t->t_id, MSG_TUNNEL_SHUT);
	if (t->t_eof_said)
		agent_tunnel_schedule(t);
}

/*
 * The end gives up (an error, its process gone): the broker hears
 * ABORT and the tunnel is freed now, without to_closed: the end that
 * calls this releases itself.
 */
void
agent_tunnel_abort(struct agent_tunnel *t)
{
	log_debug("%s: tunnel %u aborted", __func__, t->t_id);
	agent_tunnel_say_close(t->t_id, MSG_TUNNEL_ABORT);
	agent_tunnel_free(t);
}

static void
agent_tunnel_schedule(struct agent_tunnel *t)
{
	struct timeval	 tv = { 0, 0 };

	evtimer_add(t->t_later, &tv);
}

/*
 * Outside any call of the end's: its end of file once the broker's
 * bytes are all taken, then the tunnel's end once both sides shut.
 */
static void
agent_tunnel_later(evutil_socket_t fd, short events, void *arg)
{
	struct agent_tunnel *t = arg;
	const struct agent_tunnel_ops *ops = t->t_ops;
	void		*earg = t->t_arg;

	if (t->t_shut_in && t->t_in_len == 0 && !t->t_eof_said) {
		t->t_eof_said = 1;
		if (ops->to_eof != NULL) {
			/* It may shut or abort: look again from the event. */
			agent_tunnel_schedule(t);
			ops->to_eof(t, earg);
			return;
		}
	}
	if (t->t_eof_said && t->t_shut_out) {
		log_debug("%s: tunnel %u over", __func__, t->t_id);
		agent_tunnel_free(t);
		ops->to_closed(NULL, earg);
	}
}

/*
 * DATA from the broker: never more than the window it was given; a
 * broker that sends more, or after its own shut, is not ours.
 */
void
agent_tunnel_data(uint32_t id, struct msg_tunnel_data *td)
{
	struct agent_tunnel *t;

	if ((t = agent_tunnel_find(id)) == NULL) {
		/* It crossed our ABORT: dropped. */
		msg_tunnel_data_free(td);
		return;
	}
	if (t->t_shut_in || td->td_len > MSG_TUNNEL_WINDOW -
	    (t->t_in_len + t->t_unacked))
		fatalx("%s: tunnel %u: data beyond the window", __func__, id);
	if (t->t_in == NULL &&
	    (t->t_in = malloc(MSG_TUNNEL_WINDOW)) == NULL)
		fatal("%s: malloc", __func__);
	if (t->t_in_off + t->t_in_len + td->td_len > MSG_TUNNEL_WINDOW) {
		memmove(t->t_in, t->t_in + t->t_in_off, t->t_in_len);
		t->t_in_off = 0;
	}
	memcpy(t->t_in + t->t_in_off + t->t_in_len, td->td_data, td->td_len);
	t->t_in_len += td->td_len;
	msg_tunnel_data_free(td);
	t->t_ops->to_input(t, t->t_arg);
}

void
agent_tunnel_credit(uint32_t id, const struct msg_tunnel_credit *tc)
{
	struct agent_tunnel *t;
	int		 was_empty;

	if ((t = agent_tunnel_find(id)) == NULL)
		return;
	if (tc->tc_bytes > MSG_TUNNEL_WINDOW - t->t_room)
		fatalx("%s: tunnel %u: credit beyond the window", __func__,
		    id);
	was_empty = t->t_room == 0;
	t->t_room += tc->tc_bytes;
	if (was_empty && !t->t_shut_out && t->t_ops->to_resume != NULL)
		t->t_ops->to_resume(t, t->t_arg);
}

void
agent_tunnel_close(uint32_t id, const struct msg_tunnel_close *tl)
{
	struct agent_tunnel *t;
	const struct agent_tunnel_ops *ops;
	void		*earg;

	if ((t = agent_tunnel_find(id)) == NULL)
		return;
	if (tl->tl_how == MSG_TUNNEL_SHUT) {
		if (t->t_shut_in)
			fatalx("%s: tunnel %u: shut twice", __func__, id);
		t->t_shut_in = 1;
		if (t->t_in_len == 0)
			agent_tunnel_schedule(t);
		return;
	}
	log_debug("%s: tunnel %u aborted by the broker", __func__, id);
	ops = t->t_ops;
	earg = t->t_arg;
	agent_tunnel_free(t);
	ops->to_closed(NULL, earg);
}

/* The channel is gone: every tunnel ends, its end released. */
void
agent_tunnel_end_all(void)
{
	struct agent_tunnel *t;
	const struct agent_tunnel_ops *ops;
	void		*earg;

	while ((t = TAILQ_FIRST(&agent_tunnels)) != NULL) {
		ops = t->t_ops;
		earg = t->t_arg;
		agent_tunnel_free(t);
		ops->to_closed(NULL, earg);
	}
}
