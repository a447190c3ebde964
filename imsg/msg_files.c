/*
 * msg_files: the payloads of file requests to a fence's agent and of
 * its answers (docs/files.md).  A request and an answer are the same
 * struct msg_file; a listing is an array of entries, each name a bin
 * (a file name is bytes, not always UTF-8), at most MSG_FILE_LIST_MAX.
 *
 * As for exec, well-formed values out of policy (a mode with setuid
 * bits, a path with "..") pass the codec: the agent answers them.
 */
#include <sys/types.h>

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fenced.h"
#include "msg.h"
#include "mp.h"
#include "msg_codec.h"

static int	msg_file_valid(const struct msg_file *);
static int	msg_fileent_valid(const struct msg_fileent *, size_t);

static const struct mc_field msg_file_fields[] = {
	MC_S(struct msg_file, fl_key),
	MC_U(struct msg_file, fl_owner, 0, UINT32_MAX),
	MC_BEARER(struct msg_file, fl_bearer),
	MC_S(struct msg_file, fl_path),
	MC_S(struct msg_file, fl_tmp),
	MC_U(struct msg_file, fl_flags, 0, MSG_FILE_FLAGS),
	MC_U(struct msg_file, fl_mode, 0, UINT32_MAX),
	MC_U(struct msg_file, fl_kind, 0, MSG_FILE_OTHER),
	MC_U(struct msg_file, fl_length, 0, MSG_FILE_CHUNK),
	MC_U(struct msg_file, fl_offset, 0, INT64_MAX),
	MC_U(struct msg_file, fl_size, 0, INT64_MAX),
	MC_U(struct msg_file, fl_ino, 0, UINT64_MAX),
	MC_I(struct msg_file, fl_mtime, INT64_MIN, INT64_MAX),
	MC_B(struct msg_file, fl_created),
	MC_DATA(struct msg_file, fl_data, fl_data_len, MSG_FILE_CHUNK),
};
static const struct mc_table msg_file = MC_TABLE(msg_file_fields);

/* Every string terminated; paths without NUL by construction. */
static int
msg_file_valid(const struct msg_file *fl)
{
	if (strnlen(fl->fl_path, sizeof(fl->fl_path)) >= sizeof(fl->fl_path) ||
	    strnlen(fl->fl_tmp, sizeof(fl->fl_tmp)) >= sizeof(fl->fl_tmp) ||
	    strchr(fl->fl_tmp, '/') != NULL)
		return (0);
	if (fl->fl_key[0] != '\0' && !fence_key_valid(fl->fl_key))
		return (0);
	if (fl->fl_data_len > MSG_FILE_CHUNK ||
	    fl->fl_offset > INT64_MAX - fl->fl_data_len)
		return (0);
	return (1);
}

int
msg_file_encode(const struct msg_file *fl, void **buf, size_t *len)
{
	if (!msg_file_valid(fl)) {
		errno = EINVAL;
		return (-1);
	}
	return (mc_encode(&msg_file, fl, buf, len));
}

int
msg_file_decode(const void *data, size_t len, struct msg_file *out)
{
	struct msg_file	 fl;

	if (mc_decode(&msg_file, data, len, &fl, sizeof(fl)) == -1 ||
	    !msg_file_valid(&fl)) {
		mc_free(&msg_file, &fl);
		explicit_bzero(&fl, sizeof(fl));
		errno = EBADMSG;
		return (-1);
	}
	*out = fl;
	explicit_bzero(&fl, sizeof(fl));
	return (0);
}

void
msg_file_free(struct msg_file *fl)
{
	mc_free(&msg_file, fl);
}

/* A name: 1..255 bytes, no '/' or NUL, not "." or "..". */
static int
msg_fileent_valid(const struct msg_fileent *e, size_t len)
{
	if (len == 0 || len > MSG_FILE_NAME_MAX ||
	    memchr(e->fe_name, '/', len) != NULL ||
	    memchr(e->fe_name, '\0', len) != NULL)
		return (0);
	if (strcmp(e->fe_name, ".") == 0 || strcmp(e->fe_name, "..") == 0)
		return (0);
	return (e->fe_kind >= MSG_FILE_REG && e->fe_kind <= MSG_FILE_OTHER &&
	    e->fe_mode <= 07777 && e->fe_size <= INT64_MAX);
}

/* [truncated, [[name, kind, mode, size, mtime], ...]] */
int
msg_filelist_encode(const struct msg_filelist *l, void **buf, size_t *len)
{
	struct mp_writer w;
	const struct msg_fileent *e;
	size_t		 i, n;

	if (l->fls_count > MSG_FILE_LIST_MAX) {
		errno = EINVAL;
		return (-1);
	}
	mp_write_init(&w);
	mp_write_array(&w, 2);
	mp_write_bool(&w, l->fls_truncated);
	mp_write_array(&w, l->fls_count);
	for (i = 0; i < l->fls_count; i++) {
		e = &l->fls_ents[i];
		n = strnlen(e->fe_name, sizeof(e->fe_name));
		if (!msg_fileent_valid(e, n))
			w.w_error = EINVAL;
		mp_write_array(&w, 5);
		mp_write_bin(&w, e->fe_name, n);
		mp_write_u64(&w, e->fe_kind);
		mp_write_u64(&w, e->fe_mode);
		mp_write_u64(&w, e->fe_size);
		mp_write_i64(&w, e->fe_mtime);
	}
	return (mp_write_finish(&w, buf, len));
}

int
msg_filelist_decode(const void *data, size_t len, struct msg_filelist *out)
{
	struct mp_reader r;
	struct msg_fileent *e;
	const void	*name;
	size_t		 n = 0, i, m, namelen = 0;
	uint64_t	 kind, mode, size;
	int64_t		 mtime;
	int		 trunc = 0, bad = 0;

	memset(out, 0, sizeof(*out));
	mp_read_begin(&r, data, len, 2);
	mp_read_bool(&r, &trunc);
	if (mp_read_array(&r, &n, MSG_FILE_LIST_MAX) == 0 && n > 0 &&
	    (out->fls_ents = calloc(n, sizeof(*out->fls_ents))) == NULL)
		bad = 1;
	for (i = 0; !bad && r.r_error == 0 && i < n; i++) {
		e = &out->fls_ents[i];
		if (mp_read_array(&r, &m, 5) == -1 || m != 5) {
			bad = 1;
			break;
		}
		mp_read_bin(&r, &name, &namelen, MSG_FILE_NAME_MAX);
		mp_read_u64(&r, &kind, MSG_FILE_REG, MSG_FILE_OTHER);
		mp_read_u64(&r, &mode, 0, 07777);
		mp_read_u64(&r, &size, 0, INT64_MAX);
		mp_read_i64(&r, &mtime, INT64_MIN, INT64_MAX);
		if (mp_read_leave(&r) == -1 || namelen == 0) {
			bad = 1;
			break;
		}
		memcpy(e->fe_name, name, namelen);
		e->fe_name[namelen] = '\0';
		e->fe_kind = kind;
		e->fe_mode = mode;
		e->fe_size = size;
		e->fe_mtime = mtime;
		if (!msg_fileent_valid(e, namelen))
			bad = 1;
	}
	if (!bad && r.r_error == 0)
		mp_read_leave(&r);
	if (mp_read_end(&r) == -1 || bad) {
		msg_filelist_free(out);
		errno = EBADMSG;
		return (-1);
	}
	out->fls_count = n;
	out->fls_truncated = trunc;
	return (0);
}

void
msg_filelist_free(struct msg_filelist *l)
{
	free(l->fls_ents);
	l->fls_ents = NULL;
	l->fls_count = 0;
}
