/*
 * /api/environments/KEY/files/PATH (docs/files.md, docs/http.md): a
 * file's bytes in and out, a directory's entries, a removal.  The path
 * is percent-decoded exactly once here and given to the agent as it
 * is; what it names is decided inside the fence, never here.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/http.h>
#include <jansson.h>

#include "fenced.h"
#include "log.h"
#include "msg.h"
#include "mp.h"
#include "broker.h"
#include "http.h"
#include "files.h"

#define FILES_MODE_DEFAULT	0644

static const char *const http_files_kinds[] = {
	[MSG_FILE_REG] = "file",
	[MSG_FILE_DIR] = "directory",
	[MSG_FILE_LNK] = "symlink",
	[MSG_FILE_FIFO] = "fifo",
	[MSG_FILE_SOCK] = "socket",
	[MSG_FILE_DEV] = "device",
	[MSG_FILE_OTHER] = "other",
};

static int
http_files_hex(int c)
{
	if (c >= '0' && c <= '9')
		return (c - '0');
	if (c >= 'a' && c <= 'f')
		return (c - 'a' + 10);
	if (c >= 'A' && c <= 'F')
		return (c - 'A' + 10);
	return (-1);
}

/*
 * Percent-decoding, once: "%2F" is a slash, "%252F" the three bytes
 * "%2F".  A bad escape, a NUL, or more than PATH_MAX - 1 bytes: -1.
 */
static int
http_files_decode(const char *in, char *out, size_t size)
{
	size_t	 n = 0;
	int	 hi, lo, c;

	for (; *in != '\0'; in++) {
		c = (unsigned char)*in;
		if (c == '%') {
			if ((hi = http_files_hex(in[1])) == -1 ||
			    (lo = http_files_hex(in[2])) == -1)
				return (-1);
			c = hi << 4 | lo;
			in += 2;
		}
		if (c == '\0' || n + 1 >= size)
			return (-1);
		out[n++] = c;
	}
	out[n] = '\0';
	return (0);
}

/* mode=NNN (octal, at most 0777), mkdir=0|1, exclusive=0|1; PUT only. */
static int
http_files_query(struct hreq *hr, int method, const char *query,
    uint32_t *mode, uint32_t *flags)
{
	char		 q[256], *p, *kv, *v, *end;
	unsigned long	 m;

	*mode = FILES_MODE_DEFAULT;
	*flags = 0;
	if (query == NULL || query[0] == '\0')
		return (0);
	if (method != EVHTTP_REQ_PUT || strlcpy(q, query, sizeof(q)) >=
	    sizeof(q)) {
		http_error(hr, 400, "bad-parameter", "%s", method !=
		    EVHTTP_REQ_PUT ? "only a PUT takes parameters" :
		    "the parameters are too long");
		return (-1);
	}
	for (p = q; (kv = strsep(&p, "&")) != NULL; ) {
		if ((v = strchr(kv, '=')) == NULL)
			goto bad;
		*v++ = '\0';
		if (strcmp(kv, "mode") == 0) {
			errno = 0;
			m = strtoul(v, &end, 8);
			if (*v == '\0' || *end != '\0' || strlen(v) > 4 ||
			    m > 0777 || v[0] == '-' || v[0] == '+')
				goto bad;
			*mode = m;
		} else if (strcmp(kv, "mkdir") == 0 && (strcmp(v, "0") == 0 ||
		    strcmp(v, "1") == 0)) {
			if (v[0] == '1')
				*flags |= MSG_FILE_MKDIR;
		} else if (strcmp(kv, "exclusive") == 0 &&
		    (strcmp(v, "0") == 0 || strcmp(v, "1") == 0)) {
			if (v[0] == '1')
				*flags |= MSG_FILE_EXCL;
		} else
			goto bad;
	}
	return (0);
 bad:
	http_error(hr, 400, "bad-parameter", "the parameters are mode=OCTAL "
	    "(at most 0777), mkdir=0|1 and exclusive=0|1");
	return (-1);
}

static json_t *
http_files_stat(const char *path, const struct msg_file *fl)
{
	char	 mode[8];
	json_t	*o;

	snprintf(mode, sizeof(mode), "%04o", fl->fl_mode & 07777);
	o = json_pack("{s:s, s:s, s:I, s:s, s:I}", "path", path, "type",
	    http_files_kinds[fl->fl_kind >= MSG_FILE_REG &&
	    fl->fl_kind <= MSG_FILE_OTHER ? fl->fl_kind : MSG_FILE_OTHER],
	    "size", (json_int_t)fl->fl_size, "mode", mode,
	    "mtime", (json_int_t)fl->fl_mtime);
	return (o);
}

/* One entry; a name that is not UTF-8 goes as base64 (RFC 4648). */
static json_t *
http_files_entry(const struct msg_fileent *e)
{
	static const char b64[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const unsigned char *p = (const unsigned char *)e->fe_name;
	char		 mode[8], enc[(MSG_FILE_NAME_MAX + 2) / 3 * 4 + 1];
	size_t		 len = strlen(e->fe_name), i, n = 0;
	uint32_t	 v;
	json_t		*o;
	int		 utf8 = mp_utf8_valid(e->fe_name, len);

	snprintf(mode, sizeof(mode), "%04o", e->fe_mode & 07777);
	o = json_pack("{s:s, s:I, s:s, s:I}", "type",
	    http_files_kinds[e->fe_kind], "size", (json_int_t)e->fe_size,
	    "mode", mode, "mtime", (json_int_t)e->fe_mtime);
	if (o == NULL)
		return (NULL);
	if (utf8) {
		json_object_set_new(o, "name", json_stringn(e->fe_name, len));
		return (o);
	}
	for (i = 0; i < len; i += 3) {
		v = (uint32_t)p[i] << 16;
		if (i + 1 < len)
			v |= (uint32_t)p[i + 1] << 8;
		if (i + 2 < len)
			v |= p[i + 2];
		enc[n++] = b64[v >> 18 & 63];
		enc[n++] = b64[v >> 12 & 63];
		enc[n++] = i + 1 < len ? b64[v >> 6 & 63] : '=';
		enc[n++] = i + 2 < len ? b64[v & 63] : '=';
	}
	enc[n] = '\0';
	json_object_set_new(o, "name", json_string(enc));
	json_object_set_new(o, "encoding", json_string("base64"));
	return (o);
}

static void
http_files_list(struct hreq *hr, const char *path,
    const struct msg_filelist *l)
{
	json_t	*a, *o;
	size_t	 i;

	if ((a = json_array()) == NULL) {
		http_error(hr, 500, "internal", "out of memory");
		return;
	}
	for (i = 0; i < l->fls_count; i++)
		if (json_array_append_new(a, http_files_entry(
		    &l->fls_ents[i])) == -1) {
			json_decref(a);
			http_error(hr, 500, "internal", "cannot encode the "
			    "entries");
			return;
		}
	o = json_pack("{s:s, s:o, s:b}", "path", path, "entries", a,
	    "truncated", l->fls_truncated);
	http_reply(hr, 200, o);
}

/* The transfer's answer, to hr (here only while hr is). */
static void
http_files_answer(void *arg, const struct files_answer *fa)
{
	struct hreq	*hr = arg;
	int		 method = evhttp_request_get_command(hr->hr_req);
	const char	*path = hr->hr_file_path;
	json_t		*o;

	if (fa->fa_code != NULL) {
		http_error_with(hr, http_api_status(fa->fa_code), fa->fa_code,
		    fa->fa_message, NULL);
		return;
	}
	if (fa->fa_list != NULL) {
		http_files_list(hr, path, fa->fa_list);
		return;
	}
	if (method == EVHTTP_REQ_GET || method == EVHTTP_REQ_HEAD) {
		hr->hr_raw = 1;
		http_reply_buffer(hr, 200, fa->fa_data);
		return;
	}
	if ((o = http_files_stat(path, fa->fa_file)) == NULL) {
		http_error(hr, 500, "internal", "cannot encode the answer");
		return;
	}
	if (method == EVHTTP_REQ_DELETE)
		json_object_set_new(o, "deleted", json_true());
	else
		json_object_set_new(o, "created",
		    json_boolean(fa->fa_file->fl_created));
	http_reply(hr, method == EVHTTP_REQ_PUT && fa->fa_file->fl_created ?
	    201 : 200, o);
}

/* rawpath: what follows ".../files/", as it came. */
void
http_files_request(struct hreq *hr, int method, const char *rawpath,
    const char *query)
{
	struct svc_who	 w;
	struct evbuffer	*body;
	uint32_t	 mode, flags;

	/* UTF-8: the path goes on as a msgpack and a JSON string. */
	if (http_files_decode(rawpath, hr->hr_file_path,
	    sizeof(hr->hr_file_path)) == -1 || !mp_utf8_valid(
	    hr->hr_file_path, strlen(hr->hr_file_path))) {
		http_error(hr, 400, "file-bad-path", "a path is at most %d "
		    "bytes of UTF-8 once percent-decoded, without NUL or a "
		    "bad escape", PATH_MAX - 1);
		return;
	}
	if (http_files_query(hr, method, query, &mode, &flags) == -1)
		return;
	w.w_uid = hr->hr_uid;
	w.w_admin = 0;
	w.w_unbounded = 0;
	w.w_noun = "environment";
	w.w_token = hr->hr_token[0] != '\0' ? hr->hr_token : NULL;
	switch (method) {
	case EVHTTP_REQ_GET:
	case EVHTTP_REQ_HEAD:
		files_get(&w, MSG_OWNER_NONE, hr->hr_key, hr->hr_file_path,
		    http_files_answer, hr);
		break;
	case EVHTTP_REQ_PUT:
		body = evhttp_request_get_input_buffer(hr->hr_req);
		files_put(&w, MSG_OWNER_NONE, hr->hr_key, hr->hr_file_path,
		    body, mode, flags, http_files_answer, hr);
		break;
	case EVHTTP_REQ_DELETE:
		files_delete(&w, MSG_OWNER_NONE, hr->hr_key, hr->hr_file_path,
		    http_files_answer, hr);
		break;
	}
}
