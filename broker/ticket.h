/*
 * Tickets (ticket.c): short random secrets a front end mints for an
 * authenticated caller and a client presents where it cannot send the
 * host token (a browser's navigation or WebSocket).  Each grants one
 * thing of one kind to one user; the store keeps only their SHA-256,
 * bounded per user and in all.  A ticket of a kind that is taken once
 * is gone when taken, and expires; a port cookie (TICKET_PORT_COOKIE)
 * lasts while the fence of its grant runs with the same label.
 */
#ifndef TICKET_H
#define TICKET_H

#include <sys/types.h>

#include <stdint.h>

#include "fenced.h"

#define TICKET_BYTES		32
#define TICKET_TEXT		(TICKET_BYTES * 2)	/* hex */
#define TICKET_LABEL		16	/* a fence's host label, hex */
#define TICKET_TTL_MS		60000	/* a ticket taken once: 60 s */
#define TICKET_MAX_USER		64
#define TICKET_MAX		4096

enum ticket_kind {
	TICKET_PORT = 1,	/* once: the host form's cookie of a port */
	TICKET_PORT_COOKIE,	/* fenced_port: a port while its fence runs */
	TICKET_TERMINAL		/* once: attach to a terminal */
};

/* What a ticket grants. */
struct ticket_grant {
	enum ticket_kind	 tg_kind;
	uid_t			 tg_uid;	/* whose */
	char			 tg_key[FENCE_KEY_SIZE];
	char			 tg_label[TICKET_LABEL + 1];
	uint32_t		 tg_port;	/* PORT, PORT_COOKIE */
	uint32_t		 tg_id;		/* TERMINAL: its id */
};

/*
 * Mint a ticket granting g: its text (TICKET_TEXT + 1 bytes) in text.
 * 0, or -1 when the user or the store holds too many (those expired
 * or of a fence no longer running are let go first).
 */
int	 ticket_mint(const struct ticket_grant *, char *);

/*
 * Take a ticket of kind: its grant in g.  A kind taken once is gone,
 * taken or not, and counts only within its time; 0, or -1 when the
 * text is no ticket of that kind (forged, used, expired: the same).
 */
int	 ticket_take(const char *, enum ticket_kind, struct ticket_grant *);

/* Forget every ticket of the fence (uid, key): it stopped. */
void	 ticket_forget_fence(uid_t, const char *);

/*
 * How long a ticket taken once lasts, in ms: TICKET_TTL_MS, or in a
 * test build FENCED_TEST_TICKET_MS from the environment.
 */
uint32_t ticket_ttl(void);

/*
 * The host form's name of a port grant: <port>-<label>.<key>.localhost:
 * <listen port>; and the path form's URL of its port.
 */
void	 ticket_port_host(const struct ticket_grant *, char *, size_t);
void	 ticket_port_path(const struct ticket_grant *, char *, size_t);

#endif /* TICKET_H */
