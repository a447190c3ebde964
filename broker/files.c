/*
 * Files moved in and out of a fence's home (docs/files.md): one
 * transfer is a chain of file requests to the fence's agent through the
 * fence service, MSG_FILE_CHUNK bytes each, one at a time.  The front
 * ends (http_files.c; control.c) give a path and bytes and hear one
 * answer; this is the one place that knows the chunks.
 *
 * What the broker holds of one transfer is bounded by `files max': a
 * write's body (taken whole by evhttp, then moved here), a read's bytes
 * gathered until the answer goes out.  A streamed transfer (the control
 * socket's) holds one chunk at most: a write takes each chunk from its
 * maker and asks for the next once the agent wrote it; a read hands
 * each chunk over and reads the next when asked.  The agent is inside
 * the fence and is not trusted: every answer must be the one asked for
 * (the same inode, size and time on every chunk of a read, the bytes
 * asked), or the transfer fails.
 */
#include <sys/types.h>
#include <sys/queue.h>

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "fenced.h"
#include "log.h"
#include "msg.h"
#include "broker.h"
#include "files.h"

enum files_op {
	FOP_READ = 1,
	FOP_WRITE,
	FOP_DELETE,
	FOP_ABORT	/* a write failed: its temporary goes */
};

struct ftx {
	struct inflight	 ft_in;		/* its maker */
	enum files_op	 ft_op;
	struct svc_who	 ft_who;	/* w_token: ft_token */
	char		 ft_token[HOSTTOKEN_NAME_MAX + 1];
	uid_t		 ft_owner;
	char		 ft_key[FENCE_KEY_SIZE];
	char		 ft_path[PATH_MAX];
	char		 ft_tmp[MSG_FILE_NAME_MAX + 1];
	files_cb	 ft_cb;		/* NULL: its maker is gone */
	struct evbuffer	*ft_data;	/* to write, or read so far */
	uint64_t	 ft_size;	/* the whole */
	uint64_t	 ft_offset;	/* done so far */
	uint32_t	 ft_want;	/* asked of the last read */
	uint64_t	 ft_ino;
	int64_t		 ft_mtime;
	uint32_t	 ft_mode;
	uint32_t	 ft_flags;
	int		 ft_stream;	/* a chunk at a time, its maker's */
	int		 ft_last;	/* streamed: the last chunk is in */
	int		 ft_busy;	/* a request to the agent is out */
};

static void	files_orphan(struct inflight *);
static const struct inflight_kind files_inflight = {
	"file", files_orphan
};
#define FTX_OF(in)	((struct ftx *)((char *)(in) -			\
			    offsetof(struct ftx, ft_in)))

static void	files_step(struct ftx *);
static void	files_answer(void *, const struct svc_answer *);

static uint32_t
files_max(void)
{
	return (broker_self.ps_conf.c_files_max);
}

static struct ftx *
files_new(enum files_op op, const struct svc_who *w, uid_t owner,
    const char *key, const char *path, files_cb cb, void *arg)
{
	struct ftx	*ft;

	if ((ft = calloc(1, sizeof(*ft))) == NULL)
		fatal("%s: calloc", __func__);
	ft->ft_op = op;
	ft->ft_who = *w;
	/* The asker's token name outlives it here, in ft's own copy. */
	if (w->w_token != NULL)
		strlcpy(ft->ft_token, w->w_token, sizeof(ft->ft_token));
	ft->ft_who.w_token = w->w_token != NULL ? ft->ft_token : NULL;
	ft->ft_owner = owner;
	strlcpy(ft->ft_key, key, sizeof(ft->ft_key));
	strlcpy(ft->ft_path, path, sizeof(ft->ft_path));
	ft->ft_cb = cb;
	inflight_add(&ft->ft_in, &files_inflight, arg);
	return (ft);
}

static void
files_free(struct ftx *ft)
{
	inflight_remove(&ft->ft_in);
	if (ft->ft_data != NULL)
		evbuffer_free(ft->ft_data);
	free(ft);
}

/*
 * ft ends: a write that left its temporary removes it first (ABORT,
 * then freed by its answer), anything else is freed now.
 */
static void
files_end(struct ftx *ft)
{
	if (ft->ft_op == FOP_WRITE && ft->ft_tmp[0] != '\0') {
		ft->ft_op = FOP_ABORT;
		files_step(ft);
	} else
		files_free(ft);
}

/* The maker hears it; the transfer ends, or only its temporary stays. */
static void
files_say(struct ftx *ft, const struct files_answer *fa)
{
	files_cb	 cb = ft->ft_cb;
	void		*arg = ft->ft_in.in_maker;
	struct evbuffer	*keep = NULL;

	ft->ft_cb = NULL;
	/* What changed a home is in the audit log; reads are not. */
	if (ft->ft_op == FOP_WRITE || ft->ft_op == FOP_DELETE)
		audit_file(&ft->ft_who, ft->ft_owner, ft->ft_key, ft->ft_path,
		    ft->ft_op == FOP_WRITE ? ft->ft_size : 0,
		    fa->fa_code != NULL ? fa->fa_code : "ok");
	/* A read's bytes outlive ft until its maker has them. */
	if (fa->fa_data != NULL && fa->fa_data == ft->ft_data) {
		keep = ft->ft_data;
		ft->ft_data = NULL;
	}
	/* Failed half way: remove what was written, quietly. */
	if (fa->fa_code != NULL)
		files_end(ft);
	else
		files_free(ft);
	if (cb != NULL)
		cb(arg, fa);
	if (keep != NULL)
		evbuffer_free(keep);
}

static void __attribute__((format(printf, 3, 4)))
files_error(struct ftx *ft, const char *code, const char *fmt, ...)
{
	struct files_answer fa;
	char		 message[MSG_ERROR_TEXT_MAX];
	va_list		 ap;

	va_start(ap, fmt);
	vsnprintf(message, sizeof(message), fmt, ap);
	va_end(ap);
	memset(&fa, 0, sizeof(fa));
	fa.fa_code = code;
	fa.fa_message = message;
	files_say(ft, &fa);
}

void
files_get(const struct svc_who *w, uid_t owner, const char *key,
    const char *path, files_cb cb, void *arg)
{
	struct ftx	*ft;

	ft = files_new(FOP_READ, w, owner, key, path, cb, arg);
	if ((ft->ft_data = evbuffer_new()) == NULL)
		fatal("%s: evbuffer_new", __func__);
	files_step(ft);
}

/* data's bytes are moved out of it, whatever becomes of the write. */
void
files_put(const struct svc_who *w, uid_t owner, const char *key,
    const char *path, struct evbuffer *data, uint32_t mode, uint32_t flags,
    files_cb cb, void *arg)
{
	struct ftx	*ft;

	ft = files_new(FOP_WRITE, w, owner, key, path, cb, arg);
	if ((ft->ft_data = evbuffer_new()) == NULL ||
	    evbuffer_add_buffer(ft->ft_data, data) == -1)
		fatal("%s: evbuffer", __func__);
	ft->ft_size = evbuffer_get_length(ft->ft_data);
	ft->ft_mode = mode;
	ft->ft_flags = flags & (MSG_FILE_MKDIR | MSG_FILE_EXCL);
	if (ft->ft_size > files_max()) {
		files_error(ft, "file-too-large", "%llu bytes; at most %u "
		    "(files max)", (unsigned long long)ft->ft_size,
		    files_max());
		return;
	}
	files_step(ft);
}

void
files_delete(const struct svc_who *w, uid_t owner, const char *key,
    const char *path, files_cb cb, void *arg)
{
	files_step(files_new(FOP_DELETE, w, owner, key, path, cb, arg));
}

/*
 * The maker went away: a read stops, a write it gave whole goes on to
 * its end, and a streamed write stops, its temporary removed (now, or
 * once the agent answers the chunk it has).
 */
static void
files_orphan(struct inflight *in)
{
	struct ftx	*ft = FTX_OF(in);

	if (ft->ft_cb == NULL)
		return;
	ft->ft_cb = NULL;
	if (!ft->ft_stream || ft->ft_busy)
		return;
	files_end(ft);
}

/* The maker of a streamed transfer lets go of it, as if it went away. */
void
files_close(struct ftx *ft)
{
	files_orphan(&ft->ft_in);
}

/*
 * A streamed write: nothing is asked of the agent before the first
 * chunk (files_put_chunk()).
 */
struct ftx *
files_put_open(const struct svc_who *w, uid_t owner, const char *key,
    const char *path, uint32_t mode, uint32_t flags, files_cb cb, void *arg)
{
	struct ftx	*ft;

	ft = files_new(FOP_WRITE, w, owner, key, path, cb, arg);
	if ((ft->ft_data = evbuffer_new()) == NULL)
		fatal("%s: evbuffer_new", __func__);
	ft->ft_stream = 1;
	ft->ft_mode = mode;
	ft->ft_flags = flags & (MSG_FILE_MKDIR | MSG_FILE_EXCL);
	return (ft);
}

/*
 * The next chunk of a streamed write (last: the file ends with it),
 * copied; answered with fa_more once written, or the write's end.
 */
void
files_put_chunk(struct ftx *ft, const void *data, size_t len, int last)
{
	if (ft->ft_busy || ft->ft_last || ft->ft_op != FOP_WRITE)
		fatalx("%s: a chunk out of turn", __func__);
	if (len > MSG_FILE_CHUNK || ft->ft_offset + len > files_max()) {
		files_error(ft, "file-too-large", "more than %u bytes (files "
		    "max)", files_max());
		return;
	}
	if (len > 0 && evbuffer_add(ft->ft_data, data, len) == -1)
		fatal("%s: evbuffer_add", __func__);
	ft->ft_size = ft->ft_offset + len;
	ft->ft_last = last;
	files_step(ft);
}

/* A streamed read: nothing is asked before files_get_next(). */
struct ftx *
files_get_open(const struct svc_who *w, uid_t owner, const char *key,
    const char *path, files_cb cb, void *arg)
{
	struct ftx	*ft;

	ft = files_new(FOP_READ, w, owner, key, path, cb, arg);
	if ((ft->ft_data = evbuffer_new()) == NULL)
		fatal("%s: evbuffer_new", __func__);
	ft->ft_stream = 1;
	return (ft);
}

/* The next chunk of a streamed read (the first, to begin with). */
void
files_get_next(struct ftx *ft)
{
	if (ft->ft_busy || ft->ft_op != FOP_READ)
		fatalx("%s: a read out of turn", __func__);
	files_step(ft);
}

/* The next request of ft; its answer may come before this returns. */
static void
files_step(struct ftx *ft)
{
	struct msg_file	 fl;
	uint32_t	 type;
	uint64_t	 left;
	size_t		 n;

	memset(&fl, 0, sizeof(fl));
	strlcpy(fl.fl_key, ft->ft_key, sizeof(fl.fl_key));
	fl.fl_owner = ft->ft_owner;
	strlcpy(fl.fl_path, ft->ft_path, sizeof(fl.fl_path));
	strlcpy(fl.fl_tmp, ft->ft_tmp, sizeof(fl.fl_tmp));
	fl.fl_offset = ft->ft_offset;
	switch (ft->ft_op) {
	case FOP_READ:
		type = IMSG_AGENT_FILE_READ;
		left = ft->ft_offset == 0 ? MSG_FILE_CHUNK :
		    ft->ft_size - ft->ft_offset;
		ft->ft_want = left < MSG_FILE_CHUNK ? left : MSG_FILE_CHUNK;
		fl.fl_length = ft->ft_want;
		fl.fl_ino = ft->ft_ino;
		break;
	case FOP_WRITE:
		type = IMSG_AGENT_FILE_WRITE;
		left = ft->ft_size - ft->ft_offset;
		n = left < MSG_FILE_CHUNK ? left : MSG_FILE_CHUNK;
		fl.fl_flags = ft->ft_flags;
		if (ft->ft_offset == 0)
			fl.fl_flags |= MSG_FILE_FIRST;
		/* Streamed: ft_size is what was given so far. */
		if (n == left && (!ft->ft_stream || ft->ft_last))
			fl.fl_flags |= MSG_FILE_LAST;
		fl.fl_mode = ft->ft_mode;
		fl.fl_size = ft->ft_size;
		fl.fl_data_len = n;
		/* Linear only while the chunk is in view: one copy at most. */
		if (n > 0 && (fl.fl_data = evbuffer_pullup(ft->ft_data,
		    n)) == NULL)
			fatal("%s: evbuffer_pullup", __func__);
		ft->ft_want = n;
		break;
	case FOP_DELETE:
		type = IMSG_AGENT_FILE_DELETE;
		break;
	default:
		/*
		 * No bytes: at offset 0, or the agent would take it for
		 * a chunk past the size and refuse to remove anything.
		 */
		type = IMSG_AGENT_FILE_WRITE;
		fl.fl_flags = MSG_FILE_ABORT;
		fl.fl_offset = 0;
		break;
	}
	ft->ft_busy = 1;
	svc_file(&ft->ft_who, type, &fl, files_answer, ft);
}

/*
 * A streamed transfer's chunk done: its maker hears it (fa_more) and
 * gives or asks for the next.  A maker gone meanwhile, or going from
 * its callback (ft is not freed under it), ends the transfer here.
 */
static void
files_more(struct ftx *ft, struct files_answer *fa)
{
	fa->fa_more = 1;
	if (ft->ft_cb != NULL) {
		ft->ft_busy = 1;
		ft->ft_cb(ft->ft_in.in_maker, fa);
		ft->ft_busy = 0;
	}
	if (ft->ft_op == FOP_READ)
		evbuffer_drain(ft->ft_data, evbuffer_get_length(ft->ft_data));
	if (ft->ft_cb != NULL)
		return;
	files_end(ft);
}

static void
files_read_more(struct ftx *ft, const struct msg_file *fl)
{
	struct files_answer fa;

	if (fl->fl_kind != MSG_FILE_REG || fl->fl_offset != ft->ft_offset ||
	    fl->fl_data_len > ft->ft_want) {
		files_error(ft, "agent-error", "the agent answered another "
		    "read");
		return;
	}
	if (ft->ft_offset == 0) {
		if (fl->fl_size > files_max()) {
			files_error(ft, "file-too-large", "%s: %llu bytes; at "
			    "most %u (files max)", ft->ft_path,
			    (unsigned long long)fl->fl_size, files_max());
			return;
		}
		ft->ft_size = fl->fl_size;
		ft->ft_ino = fl->fl_ino;
		ft->ft_mtime = fl->fl_mtime;
		ft->ft_mode = fl->fl_mode;
	} else if (fl->fl_size != ft->ft_size || fl->fl_ino != ft->ft_ino ||
	    fl->fl_mtime != ft->ft_mtime) {
		files_error(ft, "file-changed", "%s changed while it was read",
		    ft->ft_path);
		return;
	}
	if (fl->fl_data_len != (ft->ft_size - ft->ft_offset < ft->ft_want ?
	    ft->ft_size - ft->ft_offset : ft->ft_want)) {
		files_error(ft, "file-changed", "%s changed while it was read",
		    ft->ft_path);
		return;
	}
	if (fl->fl_data_len > 0 && evbuffer_add(ft->ft_data, fl->fl_data,
	    fl->fl_data_len) == -1)
		fatal("%s: evbuffer_add", __func__);
	ft->ft_offset += fl->fl_data_len;
	if (ft->ft_offset < ft->ft_size) {
		if (ft->ft_cb == NULL) {
			files_free(ft);
			return;
		}
		if (!ft->ft_stream) {
			files_step(ft);
			return;
		}
		/* Handed over; the next is read when the maker asks. */
		memset(&fa, 0, sizeof(fa));
		fa.fa_file = fl;
		fa.fa_data = ft->ft_data;
		files_more(ft, &fa);
		return;
	}
	memset(&fa, 0, sizeof(fa));
	fa.fa_file = fl;
	fa.fa_data = ft->ft_data;
	files_say(ft, &fa);
}

static void
files_write_more(struct ftx *ft, const struct msg_file *fl)
{
	struct files_answer fa;
	size_t		 tmplen = strlen(MSG_FILE_TMP_PREFIX);

	if (ft->ft_offset + ft->ft_want == ft->ft_size &&
	    (!ft->ft_stream || ft->ft_last)) {
		memset(&fa, 0, sizeof(fa));
		ft->ft_tmp[0] = '\0';
		fa.fa_file = fl;
		files_say(ft, &fa);
		return;
	}
	if (strncmp(fl->fl_tmp, MSG_FILE_TMP_PREFIX, tmplen) != 0 ||
	    fl->fl_size != ft->ft_offset + ft->ft_want) {
		files_error(ft, "agent-error", "the agent answered another "
		    "write");
		return;
	}
	strlcpy(ft->ft_tmp, fl->fl_tmp, sizeof(ft->ft_tmp));
	evbuffer_drain(ft->ft_data, ft->ft_want);
	ft->ft_offset += ft->ft_want;
	if (!ft->ft_stream) {
		files_step(ft);
		return;
	}
	memset(&fa, 0, sizeof(fa));
	files_more(ft, &fa);
}

static void
files_answer(void *arg, const struct svc_answer *a)
{
	struct ftx	*ft = arg;
	struct files_answer fa;

	ft->ft_busy = 0;
	if (ft->ft_op == FOP_ABORT) {
		files_free(ft);
		return;
	}
	memset(&fa, 0, sizeof(fa));
	switch (a->a_what) {
	case SVC_ERROR:
		fa.fa_code = a->a_code;
		fa.fa_message = a->a_message;
		files_say(ft, &fa);
		return;
	case SVC_FILE_LIST:
		if (ft->ft_op != FOP_READ || ft->ft_offset != 0)
			break;
		fa.fa_list = a->a_filelist;
		files_say(ft, &fa);
		return;
	case SVC_FILE:
		if (ft->ft_op == FOP_READ)
			files_read_more(ft, a->a_file);
		else if (ft->ft_op == FOP_WRITE)
			files_write_more(ft, a->a_file);
		else {
			fa.fa_file = a->a_file;
			files_say(ft, &fa);
		}
		return;
	default:
		break;
	}
	files_error(ft, "agent-error", "unexpected answer");
}
