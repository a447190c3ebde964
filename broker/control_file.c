/*
 * The control socket's file transfers (fencectl put and get): one
 * streamed transfer of files.c per connection, a chunk at a time.
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>

#include "fenced.h"
#include "imsg.h"
#include "log.h"
#include "msg.h"
#include "broker.h"
#include "files.h"
#include "control.h"

/*
 * fencectl put and get (docs/files.md): chunks of at most
 * MSG_FILE_CHUNK, each a request answered with END, streamed through
 * the agent one at a time (files_put_open(), files_get_open()): a put's
 * chunk is written into the fence before its END goes, a get's next
 * chunk read only when FILE_MORE asks.  So a connection holds one chunk
 * at most, and a user CONTROL_MAX_PER_UID of them; a key the asker may
 * not use is refused before a byte of it is taken.
 */

/* The transfer is over (its last answer came): none is under way. */
static void
control_file_over(struct ctl_conn *cc)
{
	cc->cc_file = NULL;
	cc->cc_file_get = 0;
	cc->cc_file_busy = 0;
}

/* A get's chunk as fencectl takes it: the file's stat, the bytes. */
static void
control_file_chunk(struct ctl_conn *cc, const struct files_answer *fa)
{
	struct msg_file	 fl;
	size_t		 n = evbuffer_get_length(fa->fa_data);
	void		*buf;
	size_t		 len;

	memset(&fl, 0, sizeof(fl));
	strlcpy(fl.fl_key, cc->cc_file_req.fl_key, sizeof(fl.fl_key));
	fl.fl_owner = cc->cc_file_req.fl_owner;
	strlcpy(fl.fl_path, cc->cc_file_req.fl_path, sizeof(fl.fl_path));
	fl.fl_kind = fa->fa_file->fl_kind;
	fl.fl_mode = fa->fa_file->fl_mode;
	fl.fl_size = fa->fa_file->fl_size;
	fl.fl_mtime = fa->fa_file->fl_mtime;
	fl.fl_offset = fa->fa_file->fl_offset;
	fl.fl_flags = fa->fa_more ? 0 : MSG_FILE_LAST;
	fl.fl_data_len = n;
	if (n > 0 && (fl.fl_data = evbuffer_pullup(fa->fa_data, n)) == NULL)
		fatal("%s: evbuffer_pullup", __func__);
	if (msg_file_encode(&fl, &buf, &len) == -1) {
		control_error(cc, "internal", "cannot encode a chunk");
		return;
	}
	control_reply(cc, IMSG_CTL_FILE, buf, len);
	free(buf);
	control_reply(cc, IMSG_CTL_END, NULL, 0);
}

static void
control_file_answer(void *arg, const struct files_answer *fa)
{
	struct ctl_conn	*cc = arg;
	struct msg_file	 fl;
	void		*buf;
	size_t		 len;
	int		 rv;

	cc->cc_file_busy = 0;
	if (!fa->fa_more)
		control_file_over(cc);
	if (fa->fa_code != NULL) {
		control_error(cc, fa->fa_code, "%s", fa->fa_message);
		return;
	}
	if (fa->fa_list != NULL) {
		rv = msg_filelist_encode(fa->fa_list, &buf, &len);
		if (rv == 0)
			control_reply(cc, IMSG_CTL_FILE_LIST, buf, len);
		free(rv == 0 ? buf : NULL);
		control_reply(cc, IMSG_CTL_END, NULL, 0);
		return;
	}
	if (fa->fa_data != NULL) {
		control_file_chunk(cc, fa);
		return;
	}
	if (fa->fa_more) {
		/* A put's chunk is in the fence: the next one may come. */
		control_reply(cc, IMSG_CTL_END, NULL, 0);
		return;
	}
	fl = *fa->fa_file;
	fl.fl_data = NULL;
	fl.fl_data_len = 0;
	if (msg_file_encode(&fl, &buf, &len) == 0) {
		control_reply(cc, IMSG_CTL_FILE, buf, len);
		free(buf);
	}
	control_reply(cc, IMSG_CTL_END, NULL, 0);
}

/* Drop the connection's transfer (a put's temporary goes). */
void
control_file_drop(struct ctl_conn *cc)
{
	if (cc->cc_file != NULL)
		files_close(cc->cc_file);
	control_file_over(cc);
}

/* FILE_MORE: the next chunk of the connection's get. */
static int
control_file_more(struct ctl_conn *cc, struct imsg *imsg)
{
	if (msg_empty_decode(imsg->data, imsg->len) == -1)
		return (-1);
	if (cc->cc_file == NULL || !cc->cc_file_get)
		control_error(cc, "bad-request", "no get under way");
	else if (control_room(cc) == -1)
		control_file_drop(cc);
	else {
		cc->cc_file_busy = 1;
		files_get_next(cc->cc_file);
	}
	return (0);
}

/* A get, or a put's first chunk: a transfer begins. */
static void
control_file_open(struct ctl_conn *cc, struct imsg *imsg,
    struct msg_file *fl, const struct svc_who *w)
{
	uid_t		 owner;

	if (cc->cc_file != NULL) {
		control_file_drop(cc);
		control_error(cc, "bad-request", "a transfer is under "
		    "way on this connection");
		return;
	}
	/* The key first: nothing is taken for a fence not theirs. */
	if (!svc_fence_known(w, fl->fl_owner, fl->fl_key)) {
		owner = fl->fl_owner == MSG_OWNER_NONE ? w->w_uid :
		    fl->fl_owner;
		if (owner == w->w_uid)
			control_error(cc, "not-found", "no %s %s",
			    w->w_noun, fl->fl_key);
		else
			control_error(cc, "not-found", "no %s %u/%s",
			    w->w_noun, (unsigned)owner, fl->fl_key);
		return;
	}
	if (control_room(cc) == -1)
		return;
	cc->cc_file_req = *fl;
	cc->cc_file_req.fl_data = NULL;
	cc->cc_file_req.fl_data_len = 0;
	cc->cc_file_busy = 1;
	if (imsg->hdr.ih_type == IMSG_CTL_FILE_GET) {
		cc->cc_file_get = 1;
		cc->cc_file = files_get_open(w, fl->fl_owner,
		    fl->fl_key, fl->fl_path, control_file_answer, cc);
		files_get_next(cc->cc_file);
	} else {
		cc->cc_file = files_put_open(w, fl->fl_owner,
		    fl->fl_key, fl->fl_path, fl->fl_mode, fl->fl_flags,
		    control_file_answer, cc);
		files_put_chunk(cc->cc_file, fl->fl_data,
		    fl->fl_data_len, (fl->fl_flags & MSG_FILE_LAST) != 0);
	}
}

/*
 * A file request.  -1 for a message that cannot be taken: undecodable,
 * or a chunk or FILE_MORE while one is out (fencectl waits for each
 * END), which closes the connection.
 */
int
control_file(struct ctl_conn *cc, struct imsg *imsg)
{
	struct msg_file	 fl;
	struct svc_who	 w;

	if (cc->cc_file_busy)
		return (-1);
	if (imsg->hdr.ih_type == IMSG_CTL_FILE_MORE)
		return (control_file_more(cc, imsg));
	if (msg_file_decode(imsg->data, imsg->len, &fl) == -1)
		return (-1);
	control_who(cc, &w);
	if (imsg->hdr.ih_type == IMSG_CTL_FILE_GET ||
	    (fl.fl_flags & MSG_FILE_FIRST)) {
		control_file_open(cc, imsg, &fl, &w);
		goto done;
	}
	if (cc->cc_file == NULL || cc->cc_file_get ||
	    strcmp(fl.fl_path, cc->cc_file_req.fl_path) != 0 ||
	    strcmp(fl.fl_key, cc->cc_file_req.fl_key) != 0 ||
	    fl.fl_owner != cc->cc_file_req.fl_owner) {
		control_file_drop(cc);
		control_error(cc, "bad-request", "no put of that path under "
		    "way");
		goto done;
	}
	if (control_room(cc) == -1) {
		control_file_drop(cc);
		goto done;
	}
	cc->cc_file_busy = 1;
	files_put_chunk(cc->cc_file, fl.fl_data, fl.fl_data_len,
	    (fl.fl_flags & MSG_FILE_LAST) != 0);
 done:
	msg_file_free(&fl);
	return (0);
}
