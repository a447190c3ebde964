/*
 * The messages every fenced process speaks: one enum of types, and for
 * each payload one encoder and one decoder.  Payloads are msgpack arrays
 * of a fixed number of fields; a decoder accepts exactly its own shape,
 * with every length and number bounded, and nothing left over.
 *
 * Encoders return a malloc'ed buffer in *buf and its size in *len, or -1.
 * Decoders return 0, or -1 with errno set to EBADMSG.
 */
#ifndef MSG_H
#define MSG_H

#include <stddef.h>
#include <stdint.h>

#include "fenced.h"

enum imsg_type {
	IMSG_NONE = 0,

	/* parent -> child */
	IMSG_CONFIG,		/* struct fenced_config */
	IMSG_PEER_FD,		/* u32 enum fenced_proc; fd: channel to it */
	IMSG_LISTEN_FD,		/* u32 enum listen_kind; fd: listening socket */
	IMSG_PROC_INFO,		/* struct msg_procinfo */
	IMSG_START,		/* empty: configured, begin serving */

	/* child -> parent, parent -> child */
	IMSG_LOG_VERBOSE,	/* i32 level */
	IMSG_RELOAD,		/* empty */

	/* fencectl -> broker */
	IMSG_CTL_SHOW_STATS,	/* empty */
	IMSG_CTL_LOG_VERBOSE,	/* i32 level */
	IMSG_CTL_RELOAD,	/* empty */

	/* broker -> fencectl */
	IMSG_CTL_STATS,		/* struct msg_stats */
	IMSG_CTL_OK,		/* empty */
	IMSG_CTL_ERROR,		/* struct msg_error */
	IMSG_CTL_END,		/* empty: last message of a reply */

	IMSG_TYPE_MAX
};

enum listen_kind {
	LISTEN_CONTROL = 1,
	LISTEN_HTTP
};

struct msg_procinfo {
	pid_t		 pi_pid[PROC_MAX];
	int64_t		 pi_started;	/* unix time the daemon started */
};

#define MSG_ERROR_CODE_MAX	64
#define MSG_ERROR_TEXT_MAX	1024
struct msg_error {
	char		 e_code[MSG_ERROR_CODE_MAX];	/* e.g. "bad-key" */
	char		 e_message[MSG_ERROR_TEXT_MAX];
};

struct msg_stats {
	pid_t		 st_pid[PROC_MAX];
	int64_t		 st_started;		/* unix time */
	int64_t		 st_now;		/* unix time */
	uint64_t	 st_ctl_conns;		/* control connections accepted */
	uint64_t	 st_ctl_active;		/* open now */
	uint64_t	 st_ctl_requests;	/* requests served */
	uint64_t	 st_ctl_errors;		/* malformed or refused */
	uint64_t	 st_fences;		/* fences running */
	int32_t		 st_verbose;
};

/* imsg/msg.c */
const char	*msg_type_name(uint32_t);

int	 msg_empty_decode(const void *, size_t);
int	 msg_u32_encode(uint32_t, void **, size_t *);
int	 msg_u32_decode(const void *, size_t, uint32_t *, uint32_t, uint32_t);
int	 msg_i32_encode(int32_t, void **, size_t *);
int	 msg_i32_decode(const void *, size_t, int32_t *, int32_t, int32_t);
int	 msg_config_encode(const struct fenced_config *, void **, size_t *);
int	 msg_config_decode(const void *, size_t, struct fenced_config *);
int	 msg_procinfo_encode(const struct msg_procinfo *, void **, size_t *);
int	 msg_procinfo_decode(const void *, size_t, struct msg_procinfo *);
int	 msg_error_encode(const struct msg_error *, void **, size_t *);
int	 msg_error_decode(const void *, size_t, struct msg_error *);
int	 msg_stats_encode(const struct msg_stats *, void **, size_t *);
int	 msg_stats_decode(const void *, size_t, struct msg_stats *);

#endif /* MSG_H */
