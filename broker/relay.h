/*
 * The port relay (docs/interactive.md, "The HTTP API"): relay.c moves
 * each relayed connection's bytes, relay_auth.c decides who a request
 * is and which fence and port it names (the path form, the host form,
 * tickets and the fenced_port cookie).  Shared by the two alone.
 */
#ifndef RELAY_H
#define RELAY_H

#define RELAY_PATH	1	/* /api/environments/<key>/ports/<port>/ */
#define RELAY_HOST	2	/* <port>-<label>.<key>.localhost */

/* What a request names and who sends it, once authorised. */
struct relay_target {
	int		 rt_form;
	uid_t		 rt_uid;		/* who asks */
	char		 rt_token[HOSTTOKEN_NAME_MAX + 1];	/* by the
					   token of this name, or "" */
	uid_t		 rt_owner;		/* whose fence */
	char		 rt_key[FENCE_KEY_SIZE];
	char		 rt_label[SVC_LABEL_LEN + 1];	/* RELAY_HOST */
	uint32_t	 rt_port;
	char		 rt_target[HTTP_HEAD_TARGET];	/* for the fence */
	/* Not relayed: answered by the broker (a ticket taken). */
	int		 rt_status;
	char		 rt_cookie[TICKET_TEXT + 1];
};

/* A refusal: status, code, message. */
struct relay_refusal {
	int		 rr_status;
	const char	*rr_code;
	char		 rr_msg[192];
};

/* relay_auth.c */
int	 relay_authorise(const struct http_head *, struct relay_target *,
	    struct relay_refusal *);
void	 relay_answer_ticket(struct evbuffer *, const struct relay_target *);

#endif /* RELAY_H */
