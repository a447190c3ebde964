/*
 * What the files of the HTTP API's endpoints share (http_api.c: routes
 * and answers; http_api_render.c: JSON out; http_api_read.c: request
 * bodies by their tables; http_api_boot.c, http_api_exec.c: the bodies
 * of each request), and nobody else.
 */
#ifndef HTTP_API_H
#define HTTP_API_H

#include <stddef.h>

#define API_FIELD_SHOW		48	/* of a field name, in a message */

/*
 * A request body as a table of its fields, read by one walk
 * (api_read()) in the table's order, which is the order the errors
 * come in.  Strings are at most af_hi bytes (af_hi_fn, if set, decides
 * from what was read before) and hold no NUL unless API_TEXT; numbers
 * are from af_lo to af_hi; an object is read by its own table.  A
 * present field's value goes to af_set, or (a whole number) to af_off
 * in what is read into.  An API_CHECK row is a rule between fields,
 * checked where it stands.  No field of these bodies is required
 * alone: what is (exec's argv or command) is an API_CHECK.
 */
enum api_type {
	API_STRING,
	API_TEXT,	/* a string that may hold NUL */
	API_INT,
	API_NUMBER,
	API_OBJECT,
	API_JSON,	/* any: the setter looks */
	API_CHECK,
};

struct api_value {
	const char	*av_str;
	size_t		 av_len;
	long long	 av_int;
	json_t		*av_json;
};

struct api_fields;

struct api_field {
	const char		*af_name;
	enum api_type		 af_type;
	long long		 af_lo, af_hi;
	long long		(*af_hi_fn)(const void *);
	const char		*af_want;	/* API_NUMBER: "must be ..." */
	const struct api_fields	*af_sub;	/* API_OBJECT */
	int			(*af_set)(struct hreq *,
				    const struct api_field *,
				    const struct api_value *, void *);
	size_t			 af_off;	/* API_INT without af_set */
	size_t			 af_size;	/* 4 or 8 */
};

struct api_fields {
	const char		*as_what;	/* "a boot request" */
	const struct api_field	*as_fields;
	size_t			 as_nfields;
};

#define API_FIELDS(what, t)	{ what, t, nitems(t) }
#define API_U32(s, m)		offsetof(s, m), sizeof(uint32_t)
#define API_U64(s, m)		offsetof(s, m), sizeof(uint64_t)


enum http_endpoint {
	EP_LIST = 1,		/* /api/environments */
	EP_ENV,			/* /api/environments/KEY */
	EP_EXEC,		/* .../exec */
	EP_GIT_CONFIG,		/* .../git/config */
	EP_GIT_INIT,		/* .../git/init */
	EP_PROBE,		/* .../probe */
	EP_PROBE_DEFAULT,	/* /api/probe */
	EP_PROCS,		/* .../processes */
	EP_PROC,		/* .../processes/<id> (takes its query) */
	EP_FILES,		/* .../files/PATH (http_files.c) */
	EP_TICKETS,		/* .../tickets (http_ports.c, http_term.c) */
	EP_PORTS,		/* .../ports, the listing (http_ports.c) */
	/* In the order of HTTP_TERMS, HTTP_TERM, HTTP_STDIN (http.h). */
	EP_TERMS,		/* .../terminals (http_term.c) */
	EP_TERM,		/* .../terminals/<id> */
	EP_PROC_STDIN,		/* .../processes/<id>/stdin (takes its query) */
	EP_SNAPS,		/* .../snapshots (http_snap.c) */
	EP_SNAP,		/* .../snapshots/<name> */
	EP_SNAP_RESTORE,	/* .../snapshots/<name>/restore */
	EP_UNDO,		/* .../undo */
	EP_METRICS,		/* /api/metrics (docs/metrics.md) */
	EP_HOST			/* /api/host (http_host.c) */
};

/* http_api.c: routes and answers */
void	 api_who(const struct hreq *, struct svc_who *);
void	 api_answer(void *, const struct svc_answer *);
void	 api_gathered_drop(struct hreq *);

/* http_api_render.c: JSON out */
void	 api_show(char *, size_t, const char *, size_t);
json_t	*api_boundary(const char *);
const char *api_fence_text(const struct svc_answer *, char **);
ssize_t	 api_b64_decode(const char *, size_t, uint8_t *, size_t);


/* http_api_read.c: request bodies */
json_t	*api_body(struct hreq *, int);
int	 api_read(struct hreq *, json_t *, const struct api_fields *, void *);

/* http_api_boot.c, http_api_exec.c: the requests' bodies */
void	 api_boot(struct hreq *);
void	 api_exec(struct hreq *, int);

/* http_snap.c: snapshots, restore, undo */
int	 http_snap_id(struct hreq *, const char *, int *);
void	 http_snap_request(struct hreq *, int);
void	 http_host_request(struct hreq *);
json_t	*http_snap_json(const struct msg_snap_info *);
struct msg_exec;
int	 api_exec_read(struct hreq *, json_t *, struct msg_exec *, int *);
void	 api_git_config(struct hreq *, int);
void	 api_git_init(struct hreq *);

/* http_ports.c: tickets of the ports' host form */
void	 api_tickets(struct hreq *);
void	 api_ports(struct hreq *);

#endif /* HTTP_API_H */
