/*
 * Host tokens: who an HTTP request comes from.
 *
 * A token is HOSTTOKEN_BYTES from arc4random, given to its user once, as
 * hex, over the control socket (where SO_PEERCRED says who asks).  A
 * user holds up to HOSTTOKEN_PER_USER of them, each by a name (one per
 * tool), and replaces or deletes one without touching the others.  The
 * broker keeps only the SHA-256 of each; the parent keeps the same
 * hashes in <state>/tokens, since the broker can write no file.  A new
 * token is used only once the parent says it is stored, so that the
 * table here and the file never disagree, and a restart loses nothing.
 */
#include <sys/types.h>
#include <sys/queue.h>

#include <errno.h>
#include <event.h>
#include <sha2.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fenced.h"
#include "imsg.h"
#include "log.h"
#include "msg.h"
#include "proc.h"
#include "broker.h"

/*
 * New tokens per TOKEN_WINDOW_SEC: TOKEN_USER_MAX of one user, so that
 * one user cannot use up the rest's, and TOKEN_STORES_MAX of all, half
 * of what the parent takes (parent_reqs[] in parent/fenced.c), so it
 * never has to refuse one of ours.
 */
#define TOKEN_WINDOW_SEC	10
#define TOKEN_STORES_MAX	20
#define TOKEN_USER_MAX		3

struct token_pending {
	struct inflight		 tp_in;		/* its id, its maker */
	struct msg_token	 tp_token;	/* uid, name and hash */
	struct msg_hosttoken	 tp_text;	/* what the user gets */
	token_cb		 tp_cb;		/* NULL: asker gone */
	enum ctltoken_op	 tp_op;		/* for the audit log */
};

static struct msg_token	 tokens[HOSTTOKEN_MAX];
static size_t		 ntokens;
static void	token_orphan(struct inflight *);
static const char *token_action(enum ctltoken_op);
static const char *token_outcome(uint32_t);
static const struct inflight_kind token_inflight = {
	"token", token_orphan
};
#define TOKEN_OF(in)	((struct token_pending *)((char *)(in) -	\
			    offsetof(struct token_pending, tp_in)))
static unsigned int	 token_window_count;
static time_t		 token_window;
/* Who minted in this window: at most TOKEN_STORES_MAX users can. */
static struct {
	uid_t		 tu_uid;
	unsigned int	 tu_count;
}			 token_users[TOKEN_STORES_MAX];
static size_t		 token_nusers;

static unsigned int *
token_user_count(uid_t uid)
{
	size_t	 i;

	for (i = 0; i < token_nusers; i++)
		if (token_users[i].tu_uid == uid)
			return (&token_users[i].tu_count);
	return (NULL);
}

static void
token_hash(const uint8_t *raw, uint8_t *hash)
{
	SHA2_CTX	 ctx;

	SHA256Init(&ctx);
	SHA256Update(&ctx, raw, HOSTTOKEN_BYTES);
	SHA256Final(hash, &ctx);
	explicit_bzero(&ctx, sizeof(ctx));
}

/* The index of uid's token of that name, or -1. */
static ssize_t
token_find(uid_t uid, const char *name)
{
	size_t	 i;

	for (i = 0; i < ntokens; i++)
		if (tokens[i].tk_uid == uid &&
		    strcmp(tokens[i].tk_name, name) == 0)
			return ((ssize_t)i);
	return (-1);
}

/* Install (or replace) a token; the table has room for the file's. */
static void
token_set(const struct msg_token *t)
{
	ssize_t	 i;

	if ((i = token_find(t->tk_uid, t->tk_name)) == -1) {
		if (ntokens == HOSTTOKEN_MAX)
			fatalx("%s: more than %d host tokens", __func__,
			    HOSTTOKEN_MAX);
		i = ntokens++;
	}
	tokens[i] = *t;
}

static void
token_remove(uid_t uid, const char *name)
{
	ssize_t	 i;

	if ((i = token_find(uid, name)) == -1)
		return;
	tokens[i] = tokens[--ntokens];
	explicit_bzero(&tokens[ntokens], sizeof(tokens[ntokens]));
}

/* IMSG_TOKEN_LOAD: one stored token, before the broker serves anyone. */
void
token_load(struct imsg *imsg)
{
	struct msg_token t;

	if (broker_self.ps_started ||
	    msg_token_decode(imsg->data, imsg->len, &t) == -1 || t.tk_delete)
		fatalx("%s: bad host token from the parent", __func__);
	token_set(&t);
}

/* A token of that name is stored, or being stored, for uid. */
static int
token_exists(uid_t uid, const char *name)
{
	struct token_pending *tp;
	struct inflight	*in;

	if (token_find(uid, name) != -1)
		return (1);
	for (in = inflight_next(NULL, &token_inflight); in != NULL;
	    in = inflight_next(in, &token_inflight))
		if ((tp = TOKEN_OF(in))->tp_token.tk_uid == uid && !tp->tp_token.tk_delete &&
		    strcmp(tp->tp_token.tk_name, name) == 0)
			return (1);
	return (0);
}

/*
 * Tokens uid has or is being given, and all have: a store of a new
 * name that is still on its way counts already.
 */
static void
token_counts(uid_t uid, size_t *user, size_t *all)
{
	struct token_pending *tp;
	struct inflight	*in;
	size_t		 i;

	*user = 0;
	*all = ntokens;
	for (i = 0; i < ntokens; i++)
		if (tokens[i].tk_uid == uid)
			(*user)++;
	for (in = inflight_next(NULL, &token_inflight); in != NULL;
	    in = inflight_next(in, &token_inflight)) {
		tp = TOKEN_OF(in);
		if (tp->tp_token.tk_delete || token_find(tp->tp_token.tk_uid,
		    tp->tp_token.tk_name) != -1)
			continue;
		(*all)++;
		if (tp->tp_token.tk_uid == uid)
			(*user)++;
	}
}

/*
 * Whose token is this?  The text is checked for shape, then hashed, and
 * the hash compared with every stored one, to the end of the table and
 * in constant time: how long it takes says nothing about how near a
 * guess came.  Returns 0 and sets *uid, or -1.
 */
int
token_lookup(const char *text, size_t len, uid_t *uid)
{
	return (token_lookup_name(text, len, uid, NULL, 0));
}

/* The same, and the token's name into name (size bytes) if not NULL. */
int
token_lookup_name(const char *text, size_t len, uid_t *uid, char *name,
    size_t size)
{
	uint8_t		 raw[HOSTTOKEN_BYTES], hash[HOSTTOKEN_HASH];
	size_t		 i, at = 0;
	uid_t		 found = (uid_t)-1;
	int		 match = 0;

	if (text == NULL || !hosttoken_text_valid(text, len))
		return (-1);
	for (i = 0; i < HOSTTOKEN_BYTES; i++)
		raw[i] = hexdigit(text[2 * i]) << 4 |
		    hexdigit(text[2 * i + 1]);
	token_hash(raw, hash);
	explicit_bzero(raw, sizeof(raw));
	for (i = 0; i < ntokens; i++) {
		if (timingsafe_bcmp(tokens[i].tk_hash, hash,
		    sizeof(hash)) == 0) {
			found = tokens[i].tk_uid;
			at = i;
			match = 1;
		}
	}
	explicit_bzero(hash, sizeof(hash));
	if (!match)
		return (-1);
	*uid = found;
	if (name != NULL)
		(void)strlcpy(name, tokens[at].tk_name, size);
	return (0);
}

/* Each of uid's tokens, by name and time, never a hash. */
void
token_list(uid_t uid, void (*fn)(void *, const struct msg_tokeninfo *),
    void *arg)
{
	struct msg_tokeninfo ti;
	size_t		 i;

	for (i = 0; i < ntokens; i++) {
		if (tokens[i].tk_uid != uid)
			continue;
		memset(&ti, 0, sizeof(ti));
		strlcpy(ti.ti_name, tokens[i].tk_name, sizeof(ti.ti_name));
		ti.ti_created = tokens[i].tk_created;
		fn(arg, &ti);
	}
}

/* The rate of changes, one user's and everyone's.  0, or -1 with why. */
static int
token_rate(uid_t uid, unsigned int **count, const char **code,
    const char **why)
{
	time_t	 now = time(NULL);

	if (now - token_window >= TOKEN_WINDOW_SEC || now < token_window) {
		token_window = now;
		token_window_count = 0;
		token_nusers = 0;
	}
	if ((*count = token_user_count(uid)) != NULL &&
	    **count >= TOKEN_USER_MAX) {
		*code = "too-many-requests";
		*why = "you changed your host tokens 3 times in 10 seconds; "
		    "try again in a few seconds";
		return (-1);
	}
	if (token_window_count >= TOKEN_STORES_MAX) {
		*code = "busy";
		*why = "too many host tokens changed just now; try again in "
		    "a few seconds";
		return (-1);
	}
	return (0);
}

/*
 * Whether op on uid's token name may go to the parent: 0, or -1 with
 * *code and *why set.  A mint without replace of a name the user has
 * (or is being given) is refused: the old one cannot be shown again,
 * and a new one would silently end it.
 */
static int
token_may(uid_t uid, enum ctltoken_op op, const char *name,
    const char **code, const char **why)
{
	size_t	 user, all;
	int	 exists = token_exists(uid, name);

	if (op == CTLTOKEN_MINT && exists) {
		*code = "token-exists";
		*why = "you have a host token of that name already, and it "
		    "cannot be shown again; `fencectl token -r NAME' "
		    "replaces it (the old one stops working)";
		return (-1);
	}
	if (op == CTLTOKEN_DELETE) {
		if (!exists) {
			*code = "no-such-token";
			*why = "you have no host token of that name";
			return (-1);
		}
		return (0);
	}
	if (exists)
		return (0);
	token_counts(uid, &user, &all);
	if (user >= HOSTTOKEN_PER_USER) {
		*code = "too-many-tokens";
		*why = "a user holds at most 16 host tokens; `fencectl token "
		    "-d NAME' deletes one";
		return (-1);
	}
	if (all >= HOSTTOKEN_MAX) {
		*code = "too-many-tokens";
		*why = "the daemon keeps at most 8192 host tokens in all";
		return (-1);
	}
	return (0);
}

/*
 * Mint, replace or delete uid's token name and ask the parent to store
 * the change; cb gets the new token once stored (NULL and 0 for a
 * deletion), or NULL and an errno.  Returns 0, or -1 with *code and
 * *why set (cb is then not called).
 */
int
token_request(uid_t uid, enum ctltoken_op op, const char *name,
    token_cb cb, void *arg, const char **code, const char **why)
{
	struct token_pending *tp;
	uint8_t		 raw[HOSTTOKEN_BYTES];
	unsigned int	*count;
	void		*buf;
	size_t		 len, i;

	if (!hosttoken_name_valid(name)) {
		*code = "bad-name";
		*why = "a token's name is 1 to 32 of A-Z, a-z, 0-9, '.', "
		    "'_' and '-', not beginning with '-'";
		return (-1);
	}
	if (token_may(uid, op, name, code, why) == -1 ||
	    token_rate(uid, &count, code, why) == -1) {
		audit_token(uid, token_action(op), name, *code);
		return (-1);
	}
	if ((tp = calloc(1, sizeof(*tp))) == NULL)
		fatal("%s: calloc", __func__);
	tp->tp_token.tk_uid = uid;
	strlcpy(tp->tp_token.tk_name, name, sizeof(tp->tp_token.tk_name));
	if (op == CTLTOKEN_DELETE)
		tp->tp_token.tk_delete = 1;
	else {
		tp->tp_token.tk_created = time(NULL);
		arc4random_buf(raw, sizeof(raw));
		token_hash(raw, tp->tp_token.tk_hash);
		tp->tp_text.ht_uid = uid;
		strlcpy(tp->tp_text.ht_name, name, sizeof(tp->tp_text.ht_name));
		for (i = 0; i < sizeof(raw); i++)
			snprintf(tp->tp_text.ht_token + 2 * i, 3, "%02x",
			    raw[i]);
		explicit_bzero(raw, sizeof(raw));
	}
	tp->tp_cb = cb;
	tp->tp_op = op;
	inflight_add(&tp->tp_in, &token_inflight, arg);

	if (msg_token_encode(&tp->tp_token, &buf, &len) == -1)
		fatal("%s: encode", __func__);
	if (proc_compose(&broker_self, PROC_PARENT, IMSG_TOKEN_STORE,
	    tp->tp_in.in_id, -1, buf, len) == -1)
		fatal("%s: to parent", __func__);
	free(buf);
	token_window_count++;
	if (count == NULL) {
		/* Fewer users than mints in a window: there is room. */
		token_users[token_nusers].tu_uid = uid;
		token_users[token_nusers].tu_count = 0;
		count = &token_users[token_nusers++].tu_count;
	}
	(*count)++;
	return (0);
}

/* The audit log's words for a change and for how it went. */
static const char *
token_action(enum ctltoken_op op)
{
	return (op == CTLTOKEN_DELETE ? "delete" : op == CTLTOKEN_REPLACE ?
	    "replace" : "create");
}

static const char *
token_outcome(uint32_t result)
{
	switch (result) {
	case 0:
		return ("ok");
	case ENOENT:
		return ("not-found");
	case ENOSPC:
		return ("too-many-tokens");
	case EBUSY:
		return ("busy");
	default:
		return ("not-stored");
	}
}

/*
 * IMSG_TOKEN_STORED: the parent wrote the file (or could not).  The
 * change takes effect even when the asker left: the file has it now.
 * A deleted token stops working here, for the next request.
 */
void
token_stored(struct imsg *imsg)
{
	struct token_pending *tp;
	struct inflight	*in;
	struct msg_token *t;
	uint32_t	 result;

	if (msg_u32_decode(imsg->data, imsg->len, &result, 0,
	    INT32_MAX) == -1)
		fatalx("%s: bad answer from the parent", __func__);
	if ((in = inflight_find(imsg->hdr.ih_peerid, &token_inflight)) ==
	    NULL)
		fatalx("%s: parent answered unknown request %u", __func__,
		    imsg->hdr.ih_peerid);
	tp = TOKEN_OF(in);
	inflight_remove(&tp->tp_in);
	t = &tp->tp_token;
	if (result != 0)
		log_warnx("host token \"%s\" of uid %u not %s: %s",
		    t->tk_name, (unsigned)t->tk_uid,
		    t->tk_delete ? "deleted" : "stored", strerror(result));
	else if (t->tk_delete) {
		token_remove(t->tk_uid, t->tk_name);
		log_info("uid %u deleted host token \"%s\"",
		    (unsigned)t->tk_uid, t->tk_name);
	} else {
		token_set(t);
		log_info("uid %u has a new host token \"%s\"",
		    (unsigned)t->tk_uid, t->tk_name);
	}
	audit_token(t->tk_uid, token_action(tp->tp_op), t->tk_name,
	    token_outcome(result));
	if (tp->tp_cb != NULL)
		tp->tp_cb(tp->tp_in.in_maker, result == 0 && !t->tk_delete ?
		    &tp->tp_text : NULL, (int)result);
	explicit_bzero(tp, sizeof(*tp));
	free(tp);
}

/* The asker went away: its token is stored all the same, and lost. */
static void
token_orphan(struct inflight *in)
{
	TOKEN_OF(in)->tp_cb = NULL;
}
