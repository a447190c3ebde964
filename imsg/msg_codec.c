/*
 * msg_codec: the one encoder and the one decoder of the field tables
 * (msg_codec.h).  A member is read and written through its size, so
 * a table entry fits whatever integer type the struct declares.
 */
#include <sys/types.h>

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mp.h"
#include "msg_codec.h"

static uint64_t	 mc_get(const unsigned char *, size_t);
static int	 mc_put(unsigned char *, size_t, uint64_t);
static int64_t	 mc_iget(const unsigned char *, size_t);
static int	 mc_iput(unsigned char *, size_t, int64_t);
static int	 mc_nonzero(const unsigned char *, size_t);
static void	 mc_read_argv(struct mp_reader *, const struct mc_field *,
		    unsigned char *);	/* the struct, not the member */
static void	 mc_read_text(struct mp_reader *, const struct mc_field *,
		    unsigned char *);
static void	 mc_read_array(struct mp_reader *, const struct mc_field *,
		    unsigned char *);	/* the struct, not the member */

/* A member of 1, 2, 4 or 8 bytes, zero-extended. */
static uint64_t
mc_get(const unsigned char *p, size_t size)
{
	uint8_t		 u8;
	uint16_t	 u16;
	uint32_t	 u32;
	uint64_t	 u64;

	switch (size) {
	case 1:
		memcpy(&u8, p, 1);
		return (u8);
	case 2:
		memcpy(&u16, p, 2);
		return (u16);
	case 4:
		memcpy(&u32, p, 4);
		return (u32);
	case 8:
		memcpy(&u64, p, 8);
		return (u64);
	}
	abort();	/* a table that does not fit its struct */
}

/* The value as the member's size holds it; -1 if it does not fit. */
static int
mc_put(unsigned char *p, size_t size, uint64_t v)
{
	uint8_t		 u8 = (uint8_t)v;
	uint16_t	 u16 = (uint16_t)v;
	uint32_t	 u32 = (uint32_t)v;

	switch (size) {
	case 1:
		memcpy(p, &u8, 1);
		return (u8 == v ? 0 : -1);
	case 2:
		memcpy(p, &u16, 2);
		return (u16 == v ? 0 : -1);
	case 4:
		memcpy(p, &u32, 4);
		return (u32 == v ? 0 : -1);
	case 8:
		memcpy(p, &v, 8);
		return (0);
	}
	abort();
}

/* A signed member of 4 or 8 bytes. */
static int64_t
mc_iget(const unsigned char *p, size_t size)
{
	int32_t		 i32;
	int64_t		 i64;

	switch (size) {
	case 4:
		memcpy(&i32, p, 4);
		return (i32);
	case 8:
		memcpy(&i64, p, 8);
		return (i64);
	}
	abort();
}

static int
mc_iput(unsigned char *p, size_t size, int64_t v)
{
	int32_t		 i32 = (int32_t)v;

	switch (size) {
	case 4:
		memcpy(p, &i32, 4);
		return (i32 == v ? 0 : -1);
	case 8:
		memcpy(p, &v, 8);
		return (0);
	}
	abort();
}

static int
mc_nonzero(const unsigned char *p, size_t n)
{
	unsigned char	 acc = 0;

	while (n-- > 0)
		acc |= *p++;
	return (acc != 0);
}

/*
 * The count at mc_count of an array field, its array begun; over the
 * field's bound, the writer's error (EINVAL) and -1.
 */
static int
mc_write_count(struct mp_writer *w, const unsigned char *base,
    const struct mc_field *f, uint32_t *cnt)
{
	memcpy(cnt, base + f->mc_count, sizeof(*cnt));
	if (*cnt > f->mc_hi) {
		if (w->w_error == 0)
			w->w_error = EINVAL;
		return (-1);
	}
	mp_write_array(w, *cnt);
	return (0);
}

void
mc_write(struct mp_writer *w, const struct mc_table *t, const void *s)
{
	const unsigned char	*base = s, *p;
	const struct mc_field	*f;
	const uint8_t		*data;
	const char		*str;
	char * const		*argv;
	uint32_t		 cnt;
	int			 b;
	size_t			 k, j, len;

	mp_write_array(w, t->mt_n);
	for (k = 0; k < t->mt_n; k++) {
		f = &t->mt_fields[k];
		p = base + f->mc_off;
		switch (f->mc_kind) {
		case MC_UINT:
			mp_write_u64(w, mc_get(p, f->mc_size));
			break;
		case MC_INT:
			mp_write_i64(w, mc_iget(p, f->mc_size));
			break;
		case MC_BOOL:
			if (f->mc_size != sizeof(b))
				abort();
			memcpy(&b, p, sizeof(b));
			mp_write_bool(w, b);
			break;
		case MC_STR:
			mp_write_str(w, (const char *)p, f->mc_size);
			break;
		case MC_BIN:
			mp_write_bin(w, p, f->mc_size);
			break;
		case MC_NIL:
			mp_write_nil(w);
			break;
		case MC_SUB:
			mc_write(w, f->mc_sub, p);
			break;
		case MC_STRS:
			if (mc_write_count(w, base, f, &cnt) == -1)
				break;
			for (j = 0; j < cnt; j++)
				mp_write_str(w, (const char *)p +
				    j * f->mc_size, f->mc_size);
			break;
		case MC_BEARER:
			mp_write_bin(w, p, mc_nonzero(p, f->mc_size) ?
			    f->mc_size : 0);
			break;
		case MC_DATA:
		case MC_REPORT:
			memcpy(&data, p, sizeof(data));
			memcpy(&len, base + f->mc_count, sizeof(len));
			mp_write_bin(w, data, len);
			break;
		case MC_STRS_OF:
			memcpy(&cnt, base + f->mc_count, sizeof(cnt));
			if (cnt > f->mc_hi)
				cnt = (uint32_t)f->mc_hi;
			mp_write_array(w, cnt);
			for (j = 0; j < cnt; j++)
				mp_write_str(w, (const char *)p +
				    j * f->mc_size, f->mc_size);
			break;
		case MC_TEXT:
			memcpy(&str, p, sizeof(str));
			mp_write_str(w, str != NULL ? str : "", f->mc_size);
			break;
		case MC_ARGV:
			memcpy(&argv, p, sizeof(argv));
			memcpy(&len, base + f->mc_count, sizeof(len));
			if (argv == NULL)
				len = 0;
			mp_write_array(w, len);
			for (j = 0; j < len; j++)
				mp_write_str(w, argv[j], f->mc_size);
			break;
		case MC_ARRAY:
			if (mc_write_count(w, base, f, &cnt) == -1)
				break;
			for (j = 0; j < cnt; j++)
				mc_write(w, f->mc_sub, p + j * f->mc_size);
			break;
		}
	}
}

/*
 * Into s, which the caller zeroed.  Errors are the reader's, sticky:
 * check mp_read_end() (or mp_read_leave()) after.
 */
void
mc_read(struct mp_reader *r, const struct mc_table *t, void *s)
{
	unsigned char		*base = s, *p;
	const struct mc_field	*f;
	const void		*bin;
	uint64_t		 u;
	int64_t			 i;
	void			*copy;
	uint32_t		 cnt;
	int			 b;
	size_t			 k, n, j;

	for (k = 0; k < t->mt_n; k++) {
		f = &t->mt_fields[k];
		p = base + f->mc_off;
		switch (f->mc_kind) {
		case MC_UINT:
			u = 0;
			if (mp_read_u64(r, &u, f->mc_lo, f->mc_hi) == 0 &&
			    mc_put(p, f->mc_size, u) == -1)
				r->r_error = EBADMSG;
			break;
		case MC_INT:
			i = 0;
			if (mp_read_i64(r, &i, (int64_t)f->mc_lo,
			    (int64_t)f->mc_hi) == 0 &&
			    mc_iput(p, f->mc_size, i) == -1)
				r->r_error = EBADMSG;
			break;
		case MC_BOOL:
			if (f->mc_size != sizeof(b))
				abort();
			b = 0;
			mp_read_bool(r, &b);
			memcpy(p, &b, sizeof(b));
			break;
		case MC_STR:
			mp_read_str(r, (char *)p, f->mc_size);
			break;
		case MC_BIN:
			bin = NULL;
			n = 0;
			if (mp_read_bin(r, &bin, &n, f->mc_size) == 0) {
				if (n == f->mc_size)
					memcpy(p, bin, n);
				else
					r->r_error = EBADMSG;
			}
			break;
		case MC_NIL:
			mp_read_nil(r);
			break;
		case MC_SUB:
			n = 0;
			if (mp_read_array(r, &n, f->mc_sub->mt_n) == 0 &&
			    n != f->mc_sub->mt_n)
				r->r_error = EBADMSG;
			mc_read(r, f->mc_sub, p);
			mp_read_leave(r);
			break;
		case MC_STRS:
			n = 0;
			if (mp_read_array(r, &n, f->mc_hi) == 0) {
				for (j = 0; j < n; j++)
					mp_read_str(r, (char *)p +
					    j * f->mc_size, f->mc_size);
				mp_read_leave(r);
			}
			cnt = (uint32_t)n;
			memcpy(base + f->mc_count, &cnt, sizeof(cnt));
			break;
		case MC_BEARER:
			bin = NULL;
			n = 0;
			if (mp_read_bin(r, &bin, &n, f->mc_size) == -1 ||
			    n == 0)
				break;
			if (n == f->mc_size)
				memcpy(p, bin, n);
			if (n != f->mc_size || !mc_nonzero(p, n))
				r->r_error = EBADMSG;
			break;
		case MC_DATA:
			bin = NULL;
			n = 0;
			if (mp_read_bin(r, &bin, &n, f->mc_hi) == -1 || n == 0)
				break;
			if ((copy = malloc(n)) == NULL) {
				r->r_error = ENOMEM;
				break;
			}
			memcpy(copy, bin, n);
			memcpy(p, &copy, sizeof(copy));
			memcpy(base + f->mc_count, &n, sizeof(n));
			break;
		case MC_REPORT:
			bin = NULL;
			n = 0;
			if (mp_read_bin(r, &bin, &n, f->mc_hi) == -1)
				break;
			if ((copy = malloc(n + 1)) == NULL) {
				r->r_error = ENOMEM;
				break;
			}
			/* An empty bin arrives as no bytes: bin is NULL. */
			if (n > 0)
				memcpy(copy, bin, n);
			((unsigned char *)copy)[n] = '\0';
			memcpy(p, &copy, sizeof(copy));
			memcpy(base + f->mc_count, &n, sizeof(n));
			break;
		case MC_STRS_OF:
			memcpy(&cnt, base + f->mc_count, sizeof(cnt));
			if (cnt > f->mc_hi)
				cnt = (uint32_t)f->mc_hi;
			n = 0;
			if (mp_read_array(r, &n, f->mc_hi) == -1)
				break;
			if (n != cnt)
				r->r_error = EBADMSG;
			for (j = 0; j < n; j++)
				mp_read_str(r, (char *)p + j * f->mc_size,
				    f->mc_size);
			mp_read_leave(r);
			break;
		case MC_TEXT:
			mc_read_text(r, f, p);
			break;
		case MC_ARGV:
			mc_read_argv(r, f, base);
			break;
		case MC_ARRAY:
			mc_read_array(r, f, base);
			break;
		}
	}
}

/* 0..hi elements, each exactly its table's fields; the count set. */
static void
mc_read_array(struct mp_reader *r, const struct mc_field *f,
    unsigned char *base)
{
	uint32_t	 cnt;
	size_t		 j, n, k;

	n = 0;
	if (mp_read_array(r, &n, f->mc_hi) == -1)
		return;
	for (j = 0; j < n && r->r_error == 0; j++) {
		k = 0;
		if (mp_read_array(r, &k, f->mc_sub->mt_n) == 0 &&
		    k != f->mc_sub->mt_n)
			r->r_error = EBADMSG;
		mc_read(r, f->mc_sub, base + f->mc_off + j * f->mc_size);
		mp_read_leave(r);
	}
	mp_read_leave(r);
	cnt = (uint32_t)n;
	memcpy(base + f->mc_count, &cnt, sizeof(cnt));
}

/* A string under f->mc_size bytes, strdup'ed; "" leaves NULL. */
static void
mc_read_text(struct mp_reader *r, const struct mc_field *f, unsigned char *p)
{
	char	*s, *d;

	if ((s = malloc(f->mc_size)) == NULL) {
		r->r_error = ENOMEM;
		return;
	}
	if (mp_read_str(r, s, f->mc_size) == 0 && s[0] != '\0') {
		if ((d = strdup(s)) == NULL)
			r->r_error = ENOMEM;
		else
			memcpy(p, &d, sizeof(d));
	}
	free(s);
}

/*
 * 0..hi strings into a NULL-terminated vector, always consistent for
 * mc_free(); an empty array leaves NULL.
 */
static void
mc_read_argv(struct mp_reader *r, const struct mc_field *f,
    unsigned char *base)
{
	char	**argv, *arg;
	size_t	  i, n;

	if (mp_read_array(r, &n, f->mc_hi) == -1)
		return;
	if (n > 0) {
		if ((argv = calloc(n + 1, sizeof(*argv))) == NULL ||
		    (arg = malloc(f->mc_size)) == NULL) {
			free(argv);
			r->r_error = ENOMEM;
			return;
		}
		memcpy(base + f->mc_off, &argv, sizeof(argv));
		memcpy(base + f->mc_count, &n, sizeof(n));
		for (i = 0; i < n; i++) {
			if (mp_read_str(r, arg, f->mc_size) == -1)
				break;
			if ((argv[i] = strdup(arg)) == NULL) {
				r->r_error = ENOMEM;
				break;
			}
		}
		free(arg);
	}
	mp_read_leave(r);
}

/*
 * Frees what mc_read() allocated (MC_DATA, MC_TEXT, MC_ARGV) and
 * zeroes those members and their counts.
 */
void
mc_free(const struct mc_table *t, void *s)
{
	unsigned char		*base = s, *p;
	const struct mc_field	*f;
	uint8_t			*data;
	char			*str, **argv;
	uint32_t		 cnt;
	size_t			 k, i, zero = 0;

	for (k = 0; k < t->mt_n; k++) {
		f = &t->mt_fields[k];
		p = base + f->mc_off;
		switch (f->mc_kind) {
		case MC_DATA:
		case MC_REPORT:
			memcpy(&data, p, sizeof(data));
			free(data);
			data = NULL;
			memcpy(p, &data, sizeof(data));
			memcpy(base + f->mc_count, &zero, sizeof(zero));
			break;
		case MC_TEXT:
			memcpy(&str, p, sizeof(str));
			free(str);
			str = NULL;
			memcpy(p, &str, sizeof(str));
			break;
		case MC_ARGV:
			memcpy(&argv, p, sizeof(argv));
			for (i = 0; argv != NULL && argv[i] != NULL; i++)
				free(argv[i]);
			free(argv);
			argv = NULL;
			memcpy(p, &argv, sizeof(argv));
			memcpy(base + f->mc_count, &zero, sizeof(zero));
			break;
		case MC_SUB:
			mc_free(f->mc_sub, p);
			break;
		case MC_ARRAY:
			memcpy(&cnt, base + f->mc_count, sizeof(cnt));
			for (i = 0; i < cnt && i < f->mc_hi; i++)
				mc_free(f->mc_sub, p + i * f->mc_size);
			break;
		default:
			break;
		}
	}
}

/* The whole payload: s as t's array; -1 with errno from the writer. */
int
mc_encode(const struct mc_table *t, const void *s, void **buf, size_t *len)
{
	struct mp_writer w;

	mp_write_init(&w);
	mc_write(&w, t, s);
	return (mp_write_finish(&w, buf, len));
}

/*
 * The whole payload into s (zeroed first): exactly t's fields and
 * nothing else, or -1 with errno EBADMSG (ENOMEM).
 */
int
mc_decode(const struct mc_table *t, const void *data, size_t len, void *s,
    size_t size)
{
	struct mp_reader r;

	memset(s, 0, size);
	mp_read_begin(&r, data, len, t->mt_n);
	mc_read(&r, t, s);
	return (mp_read_end(&r));
}

/*
 * A string field of size bytes that is NUL-terminated within them and
 * printable ASCII before the NUL: what a peer may put in text that is
 * logged, printed or judged.
 */
int
mc_printable(const char *s, size_t size)
{
	size_t	 i;

	for (i = 0; i < size && s[i] != '\0'; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7e)
			return (0);
	return (i < size);
}
