/*
 * The agent's tunnels (docs/interactive.md, "Tunnels"): one engine of
 * framed byte streams between the broker and an "end" inside the
 * fence, which owns the credit, the bounds, half-close and abort; the
 * ends plug in through struct agent_tunnel_ops.  A port's connected
 * socket is one end (agent_port.c); a terminal's pty and a background
 * process's output are others.
 *
 * Both directions are windowed: the end may send at most what
 * agent_tunnel_room() says (MSG_TUNNEL_WINDOW less what the broker
 * has not given back); the broker's bytes wait in the tunnel (never
 * more than the window: more is a broker that is not ours, fatal)
 * until the end takes them with agent_tunnel_input() and says it wrote
 * them with agent_tunnel_consumed(), which gives the credit back.
 */
#ifndef AGENT_TUNNEL_H
#define AGENT_TUNNEL_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

#include "msg.h"

#define AGENT_TUNNELS_MAX	256	/* open at once, every kind */
#define AGENT_PORT_CONNECT_MS	5000	/* a port's connect(2), at most */

struct agent_tunnel;

struct agent_tunnel_ops {
	/*
	 * Bytes from the broker wait: take them with agent_tunnel_input()
	 * (now, or when the end can write again).
	 */
	void	(*to_input)(struct agent_tunnel *, void *);
	/* The room to send grew from nothing: send again. */
	void	(*to_resume)(struct agent_tunnel *, void *);
	/*
	 * The broker sends no more (its MSG_TUNNEL_SHUT), and every byte
	 * it sent was consumed: shutdown(SHUT_WR) or the like.  Optional.
	 */
	void	(*to_eof)(struct agent_tunnel *, void *);
	/*
	 * The tunnel is over (both sides shut, aborted by the broker, or
	 * the channel gone): release the end.  The tunnel is freed
	 * already: its first argument is NULL.  (An end that aborts
	 * itself, agent_tunnel_abort(), hears nothing.)
	 */
	void	(*to_closed)(struct agent_tunnel *, void *);
};

/* agent_tunnel.c */
void	 agent_tunnel_open(uint32_t, struct msg_tunnel_open *);
int	 agent_tunnel_full(void);
size_t	 agent_tunnel_count(void);
struct agent_tunnel *agent_tunnel_new(uint32_t,
	    const struct agent_tunnel_ops *, void *);
size_t	 agent_tunnel_room(const struct agent_tunnel *);
size_t	 agent_tunnel_send(struct agent_tunnel *, const void *, size_t);
size_t	 agent_tunnel_input(struct agent_tunnel *, const uint8_t **);
void	 agent_tunnel_consumed(struct agent_tunnel *, size_t);
void	 agent_tunnel_shutdown(struct agent_tunnel *);
void	 agent_tunnel_abort(struct agent_tunnel *);
uint32_t agent_tunnel_id(const struct agent_tunnel *);
void	 agent_tunnel_data(uint32_t, struct msg_tunnel_data *);
void	 agent_tunnel_credit(uint32_t, const struct msg_tunnel_credit *);
void	 agent_tunnel_close(uint32_t, const struct msg_tunnel_close *);
void	 agent_tunnel_end_all(void);

/* agent_port.c */
void	 agent_port_open(uint32_t, const struct msg_tunnel_open *);
void	 agent_ports(uint32_t, const struct msg_ports_req *);
int	 agent_ports_read(struct msg_portlist *);

#endif /* AGENT_TUNNEL_H */
