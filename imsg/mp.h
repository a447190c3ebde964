/*
 * mp: a small, strict msgpack writer and reader for imsg payloads,
 * on top of msgpack-c.
 *
 * Writer: mp_write_init(), then one call per value; errors are sticky,
 * so a codec can write every field and check once, in mp_write_finish(),
 * which hands over the malloc'ed bytes.  mp_write_str() refuses strings
 * that the reader would refuse (too long for the field, invalid UTF-8).
 *
 * Reader: mp_read_begin() checks the raw bytes before msgpack-c sees
 * them (every claimed length against the bytes there are, nesting depth,
 * object count, no reserved or ext types, exactly one object and nothing
 * after it), then requires a top-level array of exactly the given number
 * of fields.  Each mp_read_*() takes the next element of the current
 * array, checking its type and bounds.  mp_read_array() steps into a
 * nested array, mp_read_leave() steps out once it is fully read.
 * mp_read_end() checks that everything was read and releases the reader;
 * call it after every mp_read_begin(), whether that succeeded or not.
 * Errors are sticky too.  Every function returns 0, or -1 with errno
 * EBADMSG (ENOMEM if msgpack-c could not allocate).
 *
 * Strings and bin values read point into, or are copied from, the
 * buffer given to mp_read_begin(), which must outlive the reader.
 */
#ifndef MP_H
#define MP_H

#include <stddef.h>
#include <stdint.h>

#include <msgpack.h>

#define MP_DEPTH_MAX	16		/* nested arrays and maps */
#define MP_OBJECTS_MAX	65536		/* objects in one payload */

struct mp_writer {
	msgpack_sbuffer	 w_sbuf;
	msgpack_packer	 w_pk;
	int		 w_error;	/* errno of the first failure */
};

struct mp_frame {
	const msgpack_object	*f_obj;	/* elements of this array */
	size_t			 f_n;
	size_t			 f_next;
};

struct mp_reader {
	msgpack_unpacked r_unp;
	struct mp_frame	 r_stack[MP_DEPTH_MAX];
	int		 r_depth;	/* frames in use; 0: nothing to read */
	int		 r_error;
};

void	mp_write_init(struct mp_writer *);
int	mp_write_array(struct mp_writer *, size_t);
int	mp_write_u64(struct mp_writer *, uint64_t);
int	mp_write_i64(struct mp_writer *, int64_t);
int	mp_write_bool(struct mp_writer *, int);
int	mp_write_nil(struct mp_writer *);
int	mp_write_str(struct mp_writer *, const char *, size_t);
int	mp_write_bin(struct mp_writer *, const void *, size_t);
int	mp_write_finish(struct mp_writer *, void **, size_t *);

int	mp_scan(const void *, size_t);
int	mp_read_begin(struct mp_reader *, const void *, size_t, size_t);
int	mp_read_u64(struct mp_reader *, uint64_t *, uint64_t, uint64_t);
int	mp_read_i64(struct mp_reader *, int64_t *, int64_t, int64_t);
int	mp_read_bool(struct mp_reader *, int *);
int	mp_read_nil(struct mp_reader *);
int	mp_read_str(struct mp_reader *, char *, size_t);
int	mp_read_bin(struct mp_reader *, const void **, size_t *, size_t);
int	mp_read_array(struct mp_reader *, size_t *, size_t);
int	mp_read_leave(struct mp_reader *);
int	mp_read_end(struct mp_reader *);

int	mp_utf8_valid(const char *, size_t);

#endif /* MP_H */
