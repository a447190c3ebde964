/*
 * msg_codec: a message's fields as one table, read by one encoder and
 * one decoder (msg_codec.c), so that the field list is written once.
 *
 * A table lists a struct's members in wire order, each with its kind
 * and, for numbers, the bounds the decoder holds it to.  The payload is
 * a msgpack array with one element per field; a MC_SUB field is a
 * nested array of its own table, a MC_NIL one a reserved nil.  The
 * decoder takes exactly the elements of the table, each of its type and
 * within its bounds, and nothing more; what relates fields to each other
 * stays in each codec's own validity check, run by both ends.
 */
#ifndef MSG_CODEC_H
#define MSG_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "mp.h"

enum mc_kind {
	MC_UINT,	/* unsigned (or non-negative) integer, lo..hi */
	MC_INT,		/* signed integer (4 or 8 bytes), lo..hi */
	MC_BOOL,	/* an int, 0 or 1 */
	MC_STR,		/* a char[size], NUL-terminated */
	MC_BIN,		/* exactly size bytes */
	MC_NIL,		/* a reserved nil, no member */
	MC_SUB,		/* a nested array: mc_sub's fields */
	MC_STRS,	/* char[hi][size] strings, their count at mc_count */
	MC_BEARER,	/* uint8_t[size]: a bin of size bytes not all zero,
			   or an empty bin for all zero */
	MC_DATA,	/* uint8_t *: a bin of at most hi bytes, malloc'ed,
			   NULL when empty; its length a size_t at mc_count */
	MC_TEXT,	/* char *: a string under size bytes, malloc'ed,
			   NULL when empty ("" on the wire) */
	MC_ARGV,	/* char **: 0..hi strings under size bytes each,
			   NULL-terminated, NULL when none; count at mc_count */
	MC_STRS_OF,	/* char[hi][size]: min(total, hi) strings, where the
			   total is a uint32_t at mc_count read before */
	MC_REPORT,	/* uint8_t *: as MC_DATA, but always malloc'ed with a
			   NUL after its bytes */
	MC_ARRAY	/* an inline array of 0..hi elements of mc_size bytes,
			   each a nested array of mc_sub's fields; their
			   count a uint32_t at mc_count */
};

struct mc_table;

struct mc_field {
	enum mc_kind		 mc_kind;
	size_t			 mc_off;	/* offsetof the member */
	size_t			 mc_size;	/* sizeof the member */
	uint64_t		 mc_lo, mc_hi;	/* MC_UINT; MC_INT as int64 */
	const struct mc_table	*mc_sub;	/* MC_SUB */
	size_t			 mc_count;	/* MC_STRS: a uint32_t */
};

struct mc_table {
	const struct mc_field	*mt_fields;
	size_t			 mt_n;
};

#define MC_MSIZE(type, m)	sizeof(((type *)0)->m)

#define MC_U(type, m, lo, hi) \
	{ MC_UINT, offsetof(type, m), MC_MSIZE(type, m), (lo), (hi), NULL, 0 }
#define MC_I(type, m, lo, hi) \
	{ MC_INT, offsetof(type, m), MC_MSIZE(type, m), (uint64_t)(lo), \
	    (uint64_t)(hi), NULL, 0 }
#define MC_B(type, m) \
	{ MC_BOOL, offsetof(type, m), MC_MSIZE(type, m), 0, 1, NULL, 0 }
#define MC_S(type, m) \
	{ MC_STR, offsetof(type, m), MC_MSIZE(type, m), 0, 0, NULL, 0 }
#define MC_BIN(type, m) \
	{ MC_BIN, offsetof(type, m), MC_MSIZE(type, m), 0, 0, NULL, 0 }
#define MC_NIL() \
	{ MC_NIL, 0, 0, 0, 0, NULL, 0 }
#define MC_SUB(type, m, table) \
	{ MC_SUB, offsetof(type, m), MC_MSIZE(type, m), 0, 0, &(table), 0 }
/* A nested array of some of the same struct's members. */
#define MC_NEST(table) \
	{ MC_SUB, 0, 0, 0, 0, &(table), 0 }
#define MC_STRS(type, m, n) \
	{ MC_STRS, offsetof(type, m), MC_MSIZE(type, m[0]), 0, \
	    sizeof(((type *)0)->m) / MC_MSIZE(type, m[0]), NULL, \
	    offsetof(type, n) }

#define MC_BEARER(type, m) \
	{ MC_BEARER, offsetof(type, m), MC_MSIZE(type, m), 0, 0, NULL, 0 }
#define MC_DATA(type, m, len, max) \
	{ MC_DATA, offsetof(type, m), 0, 0, (max), NULL, offsetof(type, len) }
#define MC_TEXT(type, m, size) \
	{ MC_TEXT, offsetof(type, m), (size), 0, 0, NULL, 0 }
#define MC_ARGV(type, m, n, max, size) \
	{ MC_ARGV, offsetof(type, m), (size), 0, (max), NULL, offsetof(type, n) }

#define MC_STRS_OF(type, m, n) \
	{ MC_STRS_OF, offsetof(type, m), MC_MSIZE(type, m[0]), 0, \
	    sizeof(((type *)0)->m) / MC_MSIZE(type, m[0]), NULL, \
	    offsetof(type, n) }
#define MC_REPORT(type, m, len, max) \
	{ MC_REPORT, offsetof(type, m), 0, 0, (max), NULL, offsetof(type, len) }
#define MC_ARRAY(type, m, n, table) \
	{ MC_ARRAY, offsetof(type, m), MC_MSIZE(type, m[0]), 0, \
	    sizeof(((type *)0)->m) / MC_MSIZE(type, m[0]), &(table), \
	    offsetof(type, n) }
/* An unsigned element of an array member: its own offset and size. */
#define MC_UAT(off, size, lo, hi) \
	{ MC_UINT, (off), (size), (lo), (hi), NULL, 0 }

#define MC_TABLE(fields)	{ (fields), sizeof(fields) / sizeof((fields)[0]) }

void	mc_write(struct mp_writer *, const struct mc_table *, const void *);
void	mc_read(struct mp_reader *, const struct mc_table *, void *);
int	mc_encode(const struct mc_table *, const void *, void **, size_t *);
int	mc_decode(const struct mc_table *, const void *, size_t, void *,
	    size_t);
void	mc_free(const struct mc_table *, void *);
int	mc_printable(const char *, size_t);

#endif /* MSG_CODEC_H */
