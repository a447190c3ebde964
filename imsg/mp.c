/*
 * mp: strict msgpack for imsg payloads.  See mp.h for the contract.
 *
 * msgpack-c trusts the lengths it reads: for an array that claims n
 * elements it allocates n objects before looking for them, so five
 * bytes can ask for 2^32 of them.  mp_scan() walks the raw bytes first
 * and only lets through what is really there.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <msgpack.h>

#include "mp.h"

static int	mp_scan_uint(const unsigned char *, size_t, size_t *, size_t,
		    uint64_t *);
static int	mp_werr(struct mp_writer *, int);
static int	mp_rerr(struct mp_reader *);
static const msgpack_object *mp_next(struct mp_reader *);

/*
 * Writer.
 */

/*
 * msgpack_sbuffer_write() grows with realloc(), which frees the old
 * bytes unwiped; a payload may hold a bearer.  Grow by copy and wipe.
 */
static int
mp_sbuffer_write(void *data, const char *buf, size_t len)
{
	msgpack_sbuffer	*sb = data;
	char		*nb;
	size_t		 nsize;

	if (len == 0)
		return (0);	/* an empty bin or string: buf may be NULL */
	if (len > SIZE_MAX - sb->size)
		return (-1);
	if (sb->alloc - sb->size < len) {
		nsize = sb->alloc != 0 ? sb->alloc : MSGPACK_SBUFFER_INIT_SIZE;
		while (nsize < sb->size + len) {
			if (nsize > SIZE_MAX / 2)
				return (-1);
			nsize *= 2;
		}
		if ((nb = malloc(nsize)) == NULL)
			return (-1);
		if (sb->data != NULL) {
			memcpy(nb, sb->data, sb->size);
			explicit_bzero(sb->data, sb->size);
			free(sb->data);
		}
		sb->data = nb;
		sb->alloc = nsize;
	}
	memcpy(sb->data + sb->size, buf, len);
	sb->size += len;
	return (0);
}

void
mp_write_init(struct mp_writer *w)
{
	msgpack_sbuffer_init(&w->w_sbuf);
	msgpack_packer_init(&w->w_pk, &w->w_sbuf, mp_sbuffer_write);
	w->w_error = 0;
}

/* Remember the first failure; later writes do nothing. */
static int
mp_werr(struct mp_writer *w, int error)
{
	if (w->w_error == 0)
		w->w_error = error;
	errno = w->w_error;
	return (-1);
}

int
mp_write_array(struct mp_writer *w, size_t n)
{
	if (w->w_error)
		return (mp_werr(w, w->w_error));
	if (n > UINT32_MAX)
		return (mp_werr(w, EINVAL));
	if (msgpack_pack_array(&w->w_pk, n) != 0)
		return (mp_werr(w, ENOMEM));
	return (0);
}

int
mp_write_u64(struct mp_writer *w, uint64_t v)
{
	if (w->w_error)
		return (mp_werr(w, w->w_error));
	if (msgpack_pack_uint64(&w->w_pk, v) != 0)
		return (mp_werr(w, ENOMEM));
	return (0);
}

int
mp_write_i64(struct mp_writer *w, int64_t v)
{
	if (w->w_error)
		return (mp_werr(w, w->w_error));
	if (msgpack_pack_int64(&w->w_pk, v) != 0)
		return (mp_werr(w, ENOMEM));
	return (0);
}

int
mp_write_bool(struct mp_writer *w, int v)
{
	int	 r;

	if (w->w_error)
		return (mp_werr(w, w->w_error));
	r = v ? msgpack_pack_true(&w->w_pk) : msgpack_pack_false(&w->w_pk);
	if (r != 0)
		return (mp_werr(w, ENOMEM));
	return (0);
}

int
mp_write_nil(struct mp_writer *w)
{
	if (w->w_error)
		return (mp_werr(w, w->w_error));
	if (msgpack_pack_nil(&w->w_pk) != 0)
		return (mp_werr(w, ENOMEM));
	return (0);
}

/*
 * s comes from a char[size] field: it must be terminated inside it and
 * be valid UTF-8, exactly what mp_read_str() into the same field accepts.
 */
int
mp_write_str(struct mp_writer *w, const char *s, size_t size)
{
	size_t	 len;

	if (w->w_error)
		return (mp_werr(w, w->w_error));
	if (s == NULL || size == 0 || (len = strnlen(s, size)) == size ||
	    len > UINT32_MAX || !mp_utf8_valid(s, len))
		return (mp_werr(w, EINVAL));
	if (msgpack_pack_str_with_body(&w->w_pk, s, len) != 0)
		return (mp_werr(w, ENOMEM));
	return (0);
}

int
mp_write_bin(struct mp_writer *w, const void *p, size_t len)
{
	if (w->w_error)
		return (mp_werr(w, w->w_error));
	if ((p == NULL && len > 0) || len > UINT32_MAX)
		return (mp_werr(w, EINVAL));
	if (msgpack_pack_bin_with_body(&w->w_pk, p, len) != 0)
		return (mp_werr(w, ENOMEM));
	return (0);
}

/*
 * Hand over the bytes (malloc'ed, to be freed by the caller), or, after
 * any failure, free them and return -1 with the first error.
 */
int
mp_write_finish(struct mp_writer *w, void **buf, size_t *len)
{
	char	*p;
	size_t	 n;

	if (w->w_error == 0 && w->w_sbuf.size == 0)
		w->w_error = EINVAL;
	if (w->w_error) {
		if (w->w_sbuf.data != NULL)
			explicit_bzero(w->w_sbuf.data, w->w_sbuf.size);
		msgpack_sbuffer_destroy(&w->w_sbuf);
		msgpack_sbuffer_init(&w->w_sbuf);
		errno = w->w_error;
		return (-1);
	}
	n = w->w_sbuf.size;
	p = msgpack_sbuffer_release(&w->w_sbuf);
	/* sbuffer starts at 8 KiB; most payloads are a few dozen bytes. */
	if (n < 4096) {
		char	*q;

		/* Not realloc(): the bytes may hold a bearer, wipe the old. */
		if ((q = malloc(n)) != NULL) {
			memcpy(q, p, n);
			explicit_bzero(p, n);
			free(p);
			p = q;
		}
	}
	*buf = p;
	*len = n;
	return (0);
}

/*
 * Pre-scan.
 */

/* A big-endian unsigned of nbytes at *off, if that many are left. */
static int
mp_scan_uint(const unsigned char *p, size_t len, size_t *off, size_t nbytes,
    uint64_t *v)
{
	size_t	 i;

	if (len - *off < nbytes)
		return (-1);
	*v = 0;
	for (i = 0; i < nbytes; i++)
		*v = (*v << 8) | p[(*off)++];
	return (0);
}

/*
 * Walk every object of buf without building anything.  0 if buf is
 * exactly one object whose every claimed length fits in the bytes that
 * follow it, within MP_DEPTH_MAX and MP_OBJECTS_MAX, using no reserved
 * byte and no ext type; else -1 with errno EBADMSG.
 */
int
mp_scan(const void *buf, size_t len)
{
	const unsigned char *p = buf;
	uint64_t	 left[MP_DEPTH_MAX + 1];	/* objects still to walk */
	uint64_t	 n;
	size_t		 off = 0, nobj = 0, lenbytes, skip;
	int		 depth = 0, container, pairs;
	unsigned char	 b;

	if (p == NULL)
		goto bad;
	left[0] = 1;
	for (;;) {
		while (left[depth] == 0) {
			if (depth == 0)
				goto done;
			depth--;
		}
		left[depth]--;
		if (off >= len || ++nobj > MP_OBJECTS_MAX)
			goto bad;
		b = p[off++];
		container = pairs = 0;
		lenbytes = skip = 0;
		n = 0;

		if (b <= 0x7f || b >= 0xe0)
			;			/* fixint */
		else if (b <= 0x8f) {
			container = pairs = 1;	/* fixmap */
			n = b & 0x0f;
		} else if (b <= 0x9f) {
			container = 1;		/* fixarray */
			n = b & 0x0f;
		} else if (b <= 0xbf)
			skip = b & 0x1f;	/* fixstr */
		else {
			switch (b) {
			case 0xc0:		/* nil, false, true */
			case 0xc2:
			case 0xc3:
				break;
			case 0xc4:		/* bin 8, 16, 32 */
			case 0xd9:		/* str 8, 16, 32 */
				lenbytes = 1;
				break;
			case 0xc5:
			case 0xda:
				lenbytes = 2;
				break;
			case 0xc6:
			case 0xdb:
				lenbytes = 4;
				break;
			case 0xcc:		/* uint, int, float */
			case 0xd0:
				skip = 1;
				break;
			case 0xcd:
			case 0xd1:
				skip = 2;
				break;
			case 0xca:
			case 0xce:
			case 0xd2:
				skip = 4;
				break;
			case 0xcb:
			case 0xcf:
			case 0xd3:
				skip = 8;
				break;
			case 0xdc:		/* array 16, 32 */
				container = 1;
				lenbytes = 2;
				break;
			case 0xdd:
				container = 1;
				lenbytes = 4;
				break;
			case 0xde:		/* map 16, 32 */
				container = pairs = 1;
				lenbytes = 2;
				break;
			case 0xdf:
				container = pairs = 1;
				lenbytes = 4;
				break;
			default:
				/* 0xc1 (never used) and every ext type. */
				goto bad;
			}
		}
		if (lenbytes > 0) {
			if (mp_scan_uint(p, len, &off, lenbytes, &n) == -1)
				goto bad;
			if (!container)
				skip = n;
		}
		if (container) {
			if (pairs)
				n *= 2;
			/* Every element takes at least one byte. */
			if (n > len - off)
				goto bad;
			if (n > 0) {
				if (depth == MP_DEPTH_MAX)
					goto bad;
				left[++depth] = n;
			}
		} else {
			if (skip > len - off)
				goto bad;
			off += skip;
		}
	}
done:
	if (off != len)
		goto bad;
	return (0);
bad:
	errno = EBADMSG;
	return (-1);
}

/*
 * Reader.
 */
static int
mp_rerr(struct mp_reader *r)
{
	if (r->r_error == 0)
		r->r_error = EBADMSG;
	errno = r->r_error;
	return (-1);
}

int
mp_read_begin(struct mp_reader *r, const void *buf, size_t len,
    size_t nfields)
{
	const msgpack_object *top;
	msgpack_unpack_return ret;
	size_t		 off = 0;

	memset(r, 0, sizeof(*r));
	msgpack_unpacked_init(&r->r_unp);
	if (buf == NULL || len == 0 || mp_scan(buf, len) == -1)
		return (mp_rerr(r));
	ret = msgpack_unpack_next(&r->r_unp, buf, len, &off);
	if (ret == MSGPACK_UNPACK_NOMEM_ERROR) {
		r->r_error = ENOMEM;
		return (mp_rerr(r));
	}
	if (ret != MSGPACK_UNPACK_SUCCESS || off != len)
		return (mp_rerr(r));
	top = &r->r_unp.data;
	if (top->type != MSGPACK_OBJECT_ARRAY ||
	    top->via.array.size != nfields)
		return (mp_rerr(r));
	r->r_stack[0].f_obj = top->via.array.ptr;
	r->r_stack[0].f_n = top->via.array.size;
	r->r_stack[0].f_next = 0;
	r->r_depth = 1;
	return (0);
}

/* The next element of the array we are in, or NULL if there is none. */
static const msgpack_object *
mp_next(struct mp_reader *r)
{
	struct mp_frame	*f;

	if (r->r_error || r->r_depth == 0) {
		mp_rerr(r);
		return (NULL);
	}
	f = &r->r_stack[r->r_depth - 1];
	if (f->f_next >= f->f_n) {
		mp_rerr(r);
		return (NULL);
	}
	return (&f->f_obj[f->f_next++]);
}

int
mp_read_u64(struct mp_reader *r, uint64_t *v, uint64_t min, uint64_t max)
{
	const msgpack_object *o;

	if ((o = mp_next(r)) == NULL)
		return (-1);
	if (o->type != MSGPACK_OBJECT_POSITIVE_INTEGER ||
	    o->via.u64 < min || o->via.u64 > max)
		return (mp_rerr(r));
	*v = o->via.u64;
	return (0);
}

int
mp_read_i64(struct mp_reader *r, int64_t *v, int64_t min, int64_t max)
{
	const msgpack_object *o;
	int64_t		 x;

	if ((o = mp_next(r)) == NULL)
		return (-1);
	if (o->type == MSGPACK_OBJECT_POSITIVE_INTEGER) {
		if (o->via.u64 > INT64_MAX)
			return (mp_rerr(r));
		x = (int64_t)o->via.u64;
	} else if (o->type == MSGPACK_OBJECT_NEGATIVE_INTEGER)
		x = o->via.i64;
	else
		return (mp_rerr(r));
	if (x < min || x > max)
		return (mp_rerr(r));
	*v = x;
	return (0);
}

int
mp_read_bool(struct mp_reader *r, int *v)
{
	const msgpack_object *o;

	if ((o = mp_next(r)) == NULL)
		return (-1);
	if (o->type != MSGPACK_OBJECT_BOOLEAN)
		return (mp_rerr(r));
	*v = o->via.boolean ? 1 : 0;
	return (0);
}

int
mp_read_nil(struct mp_reader *r)
{
	const msgpack_object *o;

	if ((o = mp_next(r)) == NULL)
		return (-1);
	if (o->type != MSGPACK_OBJECT_NIL)
		return (mp_rerr(r));
	return (0);
}

/*
 * Into a char[dstsize], NUL-terminated.  A string that would not fit,
 * holds a NUL (it would silently end early in C) or is not UTF-8 is
 * refused rather than cut.
 */
int
mp_read_str(struct mp_reader *r, char *dst, size_t dstsize)
{
	const msgpack_object *o;
	size_t		 len;

	if ((o = mp_next(r)) == NULL)
		return (-1);
	if (o->type != MSGPACK_OBJECT_STR)
		return (mp_rerr(r));
	len = o->via.str.size;
	if (dstsize == 0 || len >= dstsize ||
	    (len > 0 && memchr(o->via.str.ptr, '\0', len) != NULL) ||
	    !mp_utf8_valid(o->via.str.ptr, len))
		return (mp_rerr(r));
	if (len > 0)
		memcpy(dst, o->via.str.ptr, len);
	dst[len] = '\0';
	return (0);
}

int
mp_read_bin(struct mp_reader *r, const void **p, size_t *len, size_t max)
{
	const msgpack_object *o;

	if ((o = mp_next(r)) == NULL)
		return (-1);
	if (o->type != MSGPACK_OBJECT_BIN || o->via.bin.size > max)
		return (mp_rerr(r));
	*p = o->via.bin.size > 0 ? o->via.bin.ptr : NULL;
	*len = o->via.bin.size;
	return (0);
}

/* Step into a nested array of at most max elements. */
int
mp_read_array(struct mp_reader *r, size_t *n, size_t max)
{
	const msgpack_object *o;
	struct mp_frame	*f;

	if ((o = mp_next(r)) == NULL)
		return (-1);
	if (o->type != MSGPACK_OBJECT_ARRAY || o->via.array.size > max ||
	    r->r_depth == MP_DEPTH_MAX)
		return (mp_rerr(r));
	f = &r->r_stack[r->r_depth++];
	f->f_obj = o->via.array.ptr;
	f->f_n = o->via.array.size;
	f->f_next = 0;
	*n = f->f_n;
	return (0);
}

/* Step out of a nested array, all of which must have been read. */
int
mp_read_leave(struct mp_reader *r)
{
	struct mp_frame	*f;

	if (r->r_error || r->r_depth < 2)
		return (mp_rerr(r));
	f = &r->r_stack[r->r_depth - 1];
	if (f->f_next != f->f_n)
		return (mp_rerr(r));
	r->r_depth--;
	return (0);
}

int
mp_read_end(struct mp_reader *r)
{
	struct mp_frame	*f;
	int		 ok;

	f = &r->r_stack[0];
	ok = r->r_error == 0 && r->r_depth == 1 && f->f_next == f->f_n;
	msgpack_unpacked_destroy(&r->r_unp);
	if (!ok) {
		mp_rerr(r);
		r->r_depth = 0;
		return (-1);
	}
	/* Nothing is left to read from a released reader. */
	r->r_depth = 0;
	r->r_error = EBADMSG;
	return (0);
}

/*
 * Well-formed UTF-8 as RFC 3629 has it: shortest forms only, no
 * surrogates, nothing above U+10FFFF.
 */
int
mp_utf8_valid(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t		 i = 0, n, k;
	unsigned char	 lo, hi;

	while (i < len) {
		if (p[i] < 0x80) {
			i++;
			continue;
		}
		lo = 0x80;
		hi = 0xbf;
		if (p[i] >= 0xc2 && p[i] <= 0xdf)
			n = 1;
		else if (p[i] >= 0xe0 && p[i] <= 0xef) {
			n = 2;
			if (p[i] == 0xe0)
				lo = 0xa0;	/* overlong */
			else if (p[i] == 0xed)
				hi = 0x9f;	/* surrogates */
		} else if (p[i] >= 0xf0 && p[i] <= 0xf4) {
			n = 3;
			if (p[i] == 0xf0)
				lo = 0x90;	/* overlong */
			else if (p[i] == 0xf4)
				hi = 0x8f;	/* above U+10FFFF */
		} else
			return (0);
		if (len - i - 1 < n)
			return (0);
		if (p[i + 1] < lo || p[i + 1] > hi)
			return (0);
		for (k = 2; k <= n; k++)
			if (p[i + k] < 0x80 || p[i + k] > 0xbf)
				return (0);
		i += n + 1;
	}
	return (1);
}
