/*
 * Files moved in and out of a fence's home through its agent
 * (files.c, docs/files.md), for the HTTP API and the control socket.
 */
#ifndef FILES_H
#define FILES_H

#include <sys/types.h>
#include <stdint.h>

struct evbuffer;
struct msg_file;
struct msg_filelist;
struct svc_who;

/*
 * The one answer of a transfer: an error (fa_code set), or what it did:
 * fa_file (the file's stat, after a write or a delete; of the file read),
 * with fa_data the bytes read (the maker may take them), or fa_list the
 * entries of a directory read.  Nothing in it outlives the callback.
 *
 * A streamed transfer (files_put_open(), files_get_open()) answers each
 * chunk: fa_more set, the transfer goes on (a chunk was written; fa_data
 * holds the chunk read, fa_file its answer) and waits for the maker's
 * next files_put_chunk() or files_get_next().  Any other answer is its
 * last: the transfer is gone.
 */
struct files_answer {
	const char		*fa_code;
	const char		*fa_message;
	const struct msg_file	*fa_file;
	struct evbuffer		*fa_data;
	const struct msg_filelist *fa_list;
	int			 fa_more;
};
typedef void	(*files_cb)(void *, const struct files_answer *);

void	files_get(const struct svc_who *, uid_t, const char *, const char *,
	    files_cb, void *);
void	files_put(const struct svc_who *, uid_t, const char *, const char *,
	    struct evbuffer *, uint32_t, uint32_t, files_cb, void *);
void	files_delete(const struct svc_who *, uid_t, const char *,
	    const char *, files_cb, void *);

struct ftx;
struct ftx *files_put_open(const struct svc_who *, uid_t, const char *,
	    const char *, uint32_t, uint32_t, files_cb, void *);
void	files_put_chunk(struct ftx *, const void *, size_t, int);
struct ftx *files_get_open(const struct svc_who *, uid_t, const char *,
	    const char *, files_cb, void *);
void	files_get_next(struct ftx *);
void	files_close(struct ftx *);

#endif /* FILES_H */
