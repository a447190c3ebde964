/*
 * msg_files_test: the file payloads (imsg/msg_files.c): round trips,
 * and what a hostile agent or client could send built by hand.  Under
 * the sanitizer build a decoder that leaks on a refused payload fails
 * the program.
 */
#include <sys/types.h>

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <atf-c.h>
#include <msgpack.h>

#include "fenced.h"
#include "mp.h"
#include "msg.h"

static void
file_sample(struct msg_file *fl, uint8_t *data, size_t len)
{
	memset(fl, 0, sizeof(*fl));
	strlcpy(fl->fl_key, "web", sizeof(fl->fl_key));
	fl->fl_owner = 1000;
	memset(fl->fl_bearer, 7, sizeof(fl->fl_bearer));
	strlcpy(fl->fl_path, "d/f.bin", sizeof(fl->fl_path));
	strlcpy(fl->fl_tmp, MSG_FILE_TMP_PREFIX "0123456789ab",
	    sizeof(fl->fl_tmp));
	fl->fl_flags = MSG_FILE_FIRST | MSG_FILE_LAST;
	fl->fl_mode = 0640;
	fl->fl_size = len;
	fl->fl_mtime = -5;
	fl->fl_data = data;
	fl->fl_data_len = len;
}

ATF_TC_WITHOUT_HEAD(file_roundtrip);
ATF_TC_BODY(file_roundtrip, tc)
{
	struct msg_file	 fl, out;
	uint8_t		 data[256];
	void		*buf;
	size_t		 len, i;

	for (i = 0; i < sizeof(data); i++)
		data[i] = i;
	file_sample(&fl, data, sizeof(data));
	ATF_REQUIRE(msg_file_encode(&fl, &buf, &len) == 0);
	ATF_REQUIRE(msg_file_decode(buf, len, &out) == 0);
	free(buf);
	ATF_CHECK_STREQ(out.fl_path, "d/f.bin");
	ATF_CHECK_STREQ(out.fl_tmp, fl.fl_tmp);
	ATF_CHECK_EQ(out.fl_flags, fl.fl_flags);
	ATF_CHECK_EQ(out.fl_mode, 0640);
	ATF_CHECK_EQ(out.fl_mtime, -5);
	ATF_CHECK(memcmp(out.fl_bearer, fl.fl_bearer, MSG_BEARER_LEN) == 0);
	ATF_REQUIRE_EQ(out.fl_data_len, sizeof(data));
	ATF_CHECK(memcmp(out.fl_data, data, sizeof(data)) == 0);
	msg_file_free(&out);
	ATF_CHECK(out.fl_data == NULL);
}

ATF_TC_WITHOUT_HEAD(file_refused);
ATF_TC_BODY(file_refused, tc)
{
	struct msg_file	 fl, out;
	static uint8_t	 big[MSG_FILE_CHUNK + 1];
	void		*buf;
	size_t		 len;

	/* A temporary name with a slash, either way. */
	file_sample(&fl, NULL, 0);
	strlcpy(fl.fl_tmp, "../x", sizeof(fl.fl_tmp));
	ATF_CHECK(msg_file_encode(&fl, &buf, &len) == -1);
	/* A chunk over MSG_FILE_CHUNK. */
	file_sample(&fl, big, sizeof(big));
	ATF_CHECK(msg_file_encode(&fl, &buf, &len) == -1);
	/* A bad key. */
	file_sample(&fl, NULL, 0);
	strlcpy(fl.fl_key, "../x", sizeof(fl.fl_key));
	ATF_CHECK(msg_file_encode(&fl, &buf, &len) == -1);
	/* Flags we do not know. */
	file_sample(&fl, NULL, 0);
	fl.fl_flags = 0x100;
	ATF_REQUIRE(msg_file_encode(&fl, &buf, &len) == 0);
	ATF_CHECK(msg_file_decode(buf, len, &out) == -1);
	free(buf);
	/* Truncated, and with a byte too many. */
	file_sample(&fl, NULL, 0);
	ATF_REQUIRE(msg_file_encode(&fl, &buf, &len) == 0);
	ATF_CHECK(msg_file_decode(buf, len - 1, &out) == -1);
	free(buf);
}

static void
list_sample(struct msg_filelist *l, struct msg_fileent *e, size_t n)
{
	size_t	 i;

	memset(e, 0, n * sizeof(*e));
	for (i = 0; i < n; i++) {
		snprintf(e[i].fe_name, sizeof(e[i].fe_name), "f%zu", i);
		e[i].fe_kind = MSG_FILE_REG;
		e[i].fe_mode = 0644;
		e[i].fe_size = i;
		e[i].fe_mtime = 1000 + i;
	}
	l->fls_ents = e;
	l->fls_count = n;
	l->fls_truncated = 0;
}

ATF_TC_WITHOUT_HEAD(list_roundtrip);
ATF_TC_BODY(list_roundtrip, tc)
{
	static struct msg_fileent e[MSG_FILE_LIST_MAX];
	struct msg_filelist l, out;
	void		*buf;
	size_t		 len;

	list_sample(&l, e, MSG_FILE_LIST_MAX);
	/* Not UTF-8: names travel as bytes. */
	memcpy(e[3].fe_name, "\xff\xfe", 3);
	l.fls_truncated = 1;
	ATF_REQUIRE(msg_filelist_encode(&l, &buf, &len) == 0);
	ATF_REQUIRE(msg_filelist_decode(buf, len, &out) == 0);
	free(buf);
	ATF_REQUIRE_EQ(out.fls_count, MSG_FILE_LIST_MAX);
	ATF_CHECK(out.fls_truncated);
	ATF_CHECK_STREQ(out.fls_ents[3].fe_name, "\xff\xfe");
	ATF_CHECK_STREQ(out.fls_ents[999].fe_name, "f999");
	ATF_CHECK_EQ(out.fls_ents[999].fe_mtime, 1999);
	msg_filelist_free(&out);
	/* Empty. */
	list_sample(&l, e, 0);
	ATF_REQUIRE(msg_filelist_encode(&l, &buf, &len) == 0);
	ATF_REQUIRE(msg_filelist_decode(buf, len, &out) == 0);
	ATF_CHECK_EQ(out.fls_count, 0);
	free(buf);
	msg_filelist_free(&out);
}

/* Build [trunc, [[name, kind, mode, size, mtime] x n]] with one bent. */
static void
list_wire(size_t n, const char *name, size_t namelen, uint64_t kind,
    size_t fields, void **buf, size_t *len)
{
	struct mp_writer w;
	size_t		 i;

	mp_write_init(&w);
	mp_write_array(&w, 2);
	mp_write_bool(&w, 0);
	mp_write_array(&w, n);
	for (i = 0; i < n; i++) {
		mp_write_array(&w, fields);
		mp_write_bin(&w, name, namelen);
		mp_write_u64(&w, kind);
		mp_write_u64(&w, 0644);
		if (fields > 3)
			mp_write_u64(&w, 1);
		if (fields > 4)
			mp_write_i64(&w, 1);
	}
	ATF_REQUIRE(mp_write_finish(&w, buf, len) == 0);
}

ATF_TC_WITHOUT_HEAD(list_hostile);
ATF_TC_BODY(list_hostile, tc)
{
	struct msg_filelist out;
	void		*buf;
	size_t		 len;
	char		 longname[MSG_FILE_NAME_MAX + 1];

	memset(longname, 'a', sizeof(longname));
	list_wire(1, "ok", 2, MSG_FILE_REG, 5, &buf, &len);
	ATF_CHECK(msg_filelist_decode(buf, len, &out) == 0);
	msg_filelist_free(&out);
	free(buf);
	list_wire(1, "a/b", 3, MSG_FILE_REG, 5, &buf, &len);
	ATF_CHECK(msg_filelist_decode(buf, len, &out) == -1);
	free(buf);
	list_wire(1, "a\0b", 3, MSG_FILE_REG, 5, &buf, &len);
	ATF_CHECK(msg_filelist_decode(buf, len, &out) == -1);
	free(buf);
	list_wire(1, "..", 2, MSG_FILE_REG, 5, &buf, &len);
	ATF_CHECK(msg_filelist_decode(buf, len, &out) == -1);
	free(buf);
	list_wire(1, "", 0, MSG_FILE_REG, 5, &buf, &len);
	ATF_CHECK(msg_filelist_decode(buf, len, &out) == -1);
	free(buf);
	list_wire(1, longname, sizeof(longname), MSG_FILE_REG, 5, &buf, &len);
	ATF_CHECK(msg_filelist_decode(buf, len, &out) == -1);
	free(buf);
	list_wire(1, "k", 1, 99, 5, &buf, &len);
	ATF_CHECK(msg_filelist_decode(buf, len, &out) == -1);
	free(buf);
	list_wire(2, "k", 1, MSG_FILE_REG, 4, &buf, &len);
	ATF_CHECK(msg_filelist_decode(buf, len, &out) == -1);
	free(buf);
	list_wire(MSG_FILE_LIST_MAX + 1, "k", 1, MSG_FILE_REG, 5, &buf, &len);
	ATF_CHECK(msg_filelist_decode(buf, len, &out) == -1);
	free(buf);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, file_roundtrip);
	ATF_TP_ADD_TC(tp, file_refused);
	ATF_TP_ADD_TC(tp, list_roundtrip);
	ATF_TP_ADD_TC(tp, list_hostile);
	return (atf_no_error());
}
