/*
 * The ticket store (ticket.h): each ticket is TICKET_BYTES from
 * arc4random, given out once as hex; the store keeps its SHA-256 and
 * its grant.  Tickets taken once last TICKET_TTL_MS (ticket_ttl()); port cookies last while their fence runs and go with
 * it (ticket_forget_fence()).  At most TICKET_MAX_USER per user and
 * TICKET_MAX in all: the expired go first, then a user's oldest cookie
 * makes room for a new cookie of theirs; a ticket over the bounds is
 * refused.
 */
#include <sys/types.h>

#include <sys/queue.h>
#include <sys/tree.h>

#include <sha2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fenced.h"
#include "log.h"
#include "imsg.h"
#include "msg.h"
#include "proc.h"
#include "broker.h"
#include "ticket.h"

struct ticket {
	int			 t_used;
	uint8_t			 t_hash[SHA256_DIGEST_LENGTH];
	struct ticket_grant	 t_grant;
	int64_t			 t_expires;	/* monotonic ms; 0: none */
	uint64_t		 t_serial;	/* age: lower is older */
};

static struct ticket	 tickets[TICKET_MAX];
static uint64_t		 ticket_serial;
static uint32_t		 ticket_ttl_ms = TICKET_TTL_MS;

static int64_t
ticket_now(void)
{
	struct timespec	 ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) == -1)
		fatal("%s: clock_gettime", __func__);
	return ((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

static int
ticket_once(enum ticket_kind k)
{
	return (k != TICKET_PORT_COOKIE);
}

uint32_t
ticket_ttl(void)
{
#ifdef FENCED_TEST_HOOKS
	static int	 read;
	const char	*s, *errstr;
	uint32_t	 ms;

	if (!read++ && (s = getenv("FENCED_TEST_TICKET_MS")) != NULL) {
		ms = strtonum(s, 1, TICKET_TTL_MS, &errstr);
		if (errstr != NULL)
			fatalx("FENCED_TEST_TICKET_MS %s: %s", s, errstr);
		ticket_ttl_ms = ms;
	}
#endif
	return (ticket_ttl_ms);
}

static void
ticket_hash(const uint8_t *raw, uint8_t *hash)
{
	SHA2_CTX	 ctx;

	SHA256Init(&ctx);
	SHA256Update(&ctx, raw, TICKET_BYTES);
	SHA256Final(hash, &ctx);
	explicit_bzero(&ctx, sizeof(ctx));
}

static void
ticket_drop(struct ticket *t)
{
	explicit_bzero(t, sizeof(*t));
}

/* The expired go; how many uid holds is counted. */
static unsigned int
ticket_sweep(uid_t uid, unsigned int *all)
{
	int64_t		 now = ticket_now();
	unsigned int	 mine = 0, i;

	*all = 0;
	for (i = 0; i < TICKET_MAX; i++) {
		if (!tickets[i].t_used)
			continue;
		if (tickets[i].t_expires != 0 && now >= tickets[i].t_expires) {
			ticket_drop(&tickets[i]);
			continue;
		}
		(*all)++;
		if (tickets[i].t_grant.tg_uid == uid)
			mine++;
	}
	return (mine);
}

/* uid's oldest cookie, or NULL. */
static struct ticket *
ticket_oldest_cookie(uid_t uid)
{
	struct ticket	*t, *old = NULL;
	unsigned int	 i;

	for (i = 0; i < TICKET_MAX; i++) {
		t = &tickets[i];
		if (t->t_used && t->t_grant.tg_uid == uid &&
		    t->t_grant.tg_kind == TICKET_PORT_COOKIE &&
		    (old == NULL || t->t_serial < old->t_serial))
			old = t;
	}
	return (old);
}

int
ticket_mint(const struct ticket_grant *g, char *text)
{
	struct ticket	*t = NULL, *old;
	uint8_t		 raw[TICKET_BYTES];
	unsigned int	 mine, all, i;

	mine = ticket_sweep(g->tg_uid, &all);
	if (mine >= TICKET_MAX_USER || all >= TICKET_MAX) {
		if (g->tg_kind != TICKET_PORT_COOKIE ||
		    (old = ticket_oldest_cookie(g->tg_uid)) == NULL)
			return (-1);
		ticket_drop(old);
	}
	for (i = 0; i < TICKET_MAX && t == NULL; i++)
		if (!tickets[i].t_used)
			t = &tickets[i];
	if (t == NULL)
		return (-1);
	arc4random_buf(raw, sizeof(raw));
	ticket_hash(raw, t->t_hash);
	for (i = 0; i < TICKET_BYTES; i++)
		snprintf(text + 2 * i, 3, "%02x", raw[i]);
	explicit_bzero(raw, sizeof(raw));
	t->t_grant = *g;
	t->t_expires = ticket_once(g->tg_kind) ? ticket_now() + ticket_ttl() :
	    0;
	t->t_serial = ++ticket_serial;
	t->t_used = 1;
	return (0);
}

static int
ticket_unhex(const char *text, uint8_t *raw)
{
	unsigned int	 i, v;
	int		 c, k;

	if (strlen(text) != TICKET_TEXT)
		return (-1);
	for (i = 0; i < TICKET_BYTES; i++) {
		v = 0;
		for (k = 0; k < 2; k++) {
			c = text[2 * i + k];
			if (c >= '0' && c <= '9')
				v = v * 16 + (c - '0');
			else if (c >= 'a' && c <= 'f')
				v = v * 16 + (c - 'a' + 10);
			else
				return (-1);
		}
		raw[i] = v;
	}
	return (0);
}

int
ticket_take(const char *text, enum ticket_kind kind, struct ticket_grant *g)
{
	struct ticket	*t;
	uint8_t		 raw[TICKET_BYTES], hash[SHA256_DIGEST_LENGTH];
	int64_t		 now = ticket_now();
	unsigned int	 i;

	if (ticket_unhex(text, raw) == -1)
		return (-1);
	ticket_hash(raw, hash);
	explicit_bzero(raw, sizeof(raw));
	for (i = 0; i < TICKET_MAX; i++) {
		t = &tickets[i];
		if (!t->t_used || memcmp(t->t_hash, hash, sizeof(hash)) != 0)
			continue;
		if (t->t_grant.tg_kind != kind) {
			/* Shown where it does not belong: it is spent. */
			if (ticket_once(t->t_grant.tg_kind))
				ticket_drop(t);
			return (-1);
		}
		if (t->t_expires != 0 && now >= t->t_expires) {
			ticket_drop(t);
			return (-1);
		}
		*g = t->t_grant;
		if (ticket_once(kind))
			ticket_drop(t);
		return (0);
	}
	return (-1);
}

void
ticket_forget_fence(uid_t uid, const char *key)
{
	unsigned int	 i;

	for (i = 0; i < TICKET_MAX; i++)
		if (tickets[i].t_used && tickets[i].t_grant.tg_uid == uid &&
		    strcmp(tickets[i].t_grant.tg_key, key) == 0)
			ticket_drop(&tickets[i]);
}

void
ticket_port_host(const struct ticket_grant *g, char *host, size_t size)
{
	snprintf(host, size, "%u-%s.%s.localhost:%u", (unsigned)g->tg_port,
	    g->tg_label, g->tg_key,
	    (unsigned)broker_self.ps_conf.c_listen_port);
}

void
ticket_port_path(const struct ticket_grant *g, char *url, size_t size)
{
	const struct fenced_config *c = &broker_self.ps_conf;
	int		 v6 = strchr(c->c_listen_addr, ':') != NULL;

	snprintf(url, size, "http://%s%s%s:%u/api/environments/%s/ports/%u/",
	    v6 ? "[" : "", c->c_listen_addr, v6 ? "]" : "",
	    (unsigned)c->c_listen_port, g->tg_key, (unsigned)g->tg_port);
}
