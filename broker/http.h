/*
 * The HTTP API inside the broker: http.c serves connections (evhttp,
 * deadlines, limits, who asks), http_frame.c reads their framing,
 * http_reply.c sends the answers; http_api.c routes the endpoints of
 * docs/design.md section 6 (their bodies read by http_api_read.c,
 * http_api_boot.c and http_api_exec.c, their JSON made by
 * http_api_render.c).  docs/http.md says why it is built so.
 */
#ifndef HTTP_H
#define HTTP_H

#include <sys/types.h>

#include <limits.h>

#include <jansson.h>

#include "fenced.h"
#include "msg.h"

struct evbuffer;
struct evhttp_request;
struct hconn;
struct svc_answer;
struct msg_result;

/* One request being answered; freed once answered or its client left. */
struct hreq {
	struct evhttp_request	*hr_req;
	struct hconn		*hr_conn;
	uid_t			 hr_uid;	/* whose token it carries */
	char			 hr_token[HOSTTOKEN_NAME_MAX + 1];	/* its
						   name, for the audit log */
	int			 hr_endpoint;	/* enum http_endpoint */
	char			 hr_key[FENCE_KEY_SIZE];
	int			 hr_base64;	/* output asked as base64 */
	int			 hr_created;	/* a boot: 201 for its fence */
	int			 hr_listed;	/* fences gathered in hr_list */
	struct evbuffer		*hr_list;	/* their JSON, comma-separated */
	char			 hr_origin[HTTP_ORIGIN_LEN];	/* listed */
	uint32_t		 hr_proc;	/* .../processes/<id> */
	uint32_t		 hr_term;	/* .../terminals/<id> */
	int			 hr_signal;	/* its DELETE's signal */
	int			 hr_raw;	/* the answer is a file's bytes */
	char			 hr_file_path[PATH_MAX];	/* files/PATH */
	char			 hr_snap[FENCE_KEY_SIZE];	/* snapshots/NAME */
	json_t			*hr_snaps;	/* a listing, gathered: the
						   snapshots, or the host
						   doctor's rows */
	int			 hr_stream;	/* exec asked "stream": true */
	int			 hr_streaming;	/* the event stream began */
	uint32_t		 hr_stream_id;	/* the service's request */
	size_t			 hr_owed;	/* chunk bytes not credited */
	/*
	 * A body read for the channel (no hr_req): the refusal
	 * http_reply() would have sent, kept instead.
	 */
	json_t			*hr_captured;
	int			 hr_captured_status;
};

/* The header that carries the host token. */
#define HTTP_TOKEN_HEADER	"x-voicebox-host-token"

/* http.c */
void	 http_reply(struct hreq *, int, json_t *);
void	 http_reply_text(struct hreq *, int, const char *, size_t);
void	 http_reply_buffer(struct hreq *, int, struct evbuffer *);
void	 http_reply_static(struct hreq *, int, const char *, const void *,
	    size_t);
void	 http_reply_copy(struct hreq *, int, const char *, const void *,
	    size_t);
void	 http_error(struct hreq *, int, const char *, const char *, ...)
	    __attribute__((format(printf, 4, 5)));
void	 http_error_with(struct hreq *, int, const char *, const char *,
	    json_t *);
void	 http_header(struct hreq *, const char *, const char *);
void	 http_reply_empty(struct hreq *, int);
const char *http_reason(int);
void	 http_forget(struct hreq *);
int	 http_pending(const struct hreq *, const struct hconn *);

/* http_stream.c */
void	 http_stream_start(struct hreq *);
void	 http_stream_answer(void *, const struct svc_answer *);

/* http_cors.c */
int	 http_host_check(struct hreq *);
int	 http_origin_check(struct hreq *);
int	 http_host_origin_ok(const char *, const char *);
void	 http_cors_headers(struct hreq *);
int	 http_auth(struct hreq *, uid_t *);
/* http_files.c */
void	 http_files_request(struct hreq *, int, const char *, const char *);

/* http_api.c */
void	 http_api_request(struct hreq *);
int	 http_api_status(const char *);
json_t	*http_api_message(const char *, const char *);
struct msg_result;
json_t	*http_api_result(const struct msg_result *, int);
int	 api_denials(json_t *, const char *, uint32_t, const char *);

/* http_term.c: terminals, a process's stdin, terminal tickets */
#define HTTP_TERMS	1	/* .../terminals */
#define HTTP_TERM	2	/* .../terminals/<id> */
#define HTTP_STDIN	3	/* .../processes/<id>/stdin */
void	 http_term_request(struct hreq *, int, int, const char *);
int	 http_term_id(struct hreq *, const char *);
void	 http_term_ticket(struct hreq *, json_t *);
int	 http_json_id(const json_t *, uint32_t *);

/* http_procs.c: background processes */
struct svc_answer;
void	 http_procs_list(struct hreq *);
void	 http_procs_read(struct hreq *, const char *);
void	 http_procs_delete(struct hreq *, const char *);
void	 http_procs_answer(void *, const struct svc_answer *);
int	 http_procs_id(struct hreq *, const char *);
void	 http_api_answer(void *, const struct svc_answer *);
json_t	*api_b64_encode(const uint8_t *, size_t);
json_t	*api_result(const struct msg_result *, int);

#endif /* HTTP_H */
