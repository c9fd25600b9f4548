/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * json_read.h - the one strict JSON reader: RFC 8259, UTF-8 only, no lone
 * surrogates, nesting at most JR_MAX_DEPTH.
 *
 * A pull reader over a buffer (not NUL-terminated) that allocates nothing
 * and copies nothing: a caller asks for the value it expects next and gets
 * it (or -EDOM, and the value stays for another try or jr_skip()), so a
 * record can be walked member by member at the cost of one pass over its
 * bytes.  Walking an object:
 *
 *	struct jr r;
 *	struct jr_str key;
 *	uint64_t pid;
 *
 *	jr_init(&r, buf, len);
 *	err = jr_obj_open(&r);
 *	while (!err && (err = jr_next_member(&r, &key)) > 0) {
 *		if (jr_str_eq(&key, "pid", 3) && jr_u64(&r, &pid) == 0)
 *			continue;
 *		err = jr_skip(&r);
 *	}
 *	if (!err)
 *		err = jr_end(&r);
 *
 * Every function returns 0 (or 1 where it says so) or a negative errno:
 * -EDOM the next value is of another type or out of range, and nothing was
 * read; -EINVAL the text is not valid JSON: r->err and r->err_off say what
 * and where, and every later call fails the same way.  A value's checks
 * are done when it is read: a member that is never asked for is still
 * checked by jr_skip(), so a walk that reaches jr_end() has checked all of
 * the text.  A struct jr may be copied to come back to a position.
 */
#ifndef JOBTRACE_JSON_READ_H
#define JOBTRACE_JSON_READ_H

#include <errno.h>	/* the -EDOM and -EINVAL it returns */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "json.h"

/* Objects and arrays nested deeper than this are invalid. */
#define JR_MAX_DEPTH 64

struct jr {
	const unsigned char *pos;	/* the next token (white space skipped) */
	const unsigned char *end;
	const unsigned char *base;	/* the text's start, for err_off */
	unsigned depth;			/* open containers */
	bool first;			/* just opened: no ',' before the next */
	uint64_t objs;			/* bit d: the container at depth d + 1 is an object */
	const char *err;		/* the first error, NULL while there is none */
	size_t err_off;			/* its byte offset in the text */
};

/* The kind of the next value, from its first byte (see jr_peek()). */
enum jr_type {
	JR_NONE,	/* none: the end, a byte no value starts with, or an error */
	JR_OBJ,
	JR_ARR,
	JR_STR,
	JR_NUM,
	JR_BOOL,
	JR_NULL,
};

/* A checked string token, as it stands between its quotes. */
struct jr_str {
	const char *s;
	size_t len;
	bool esc;	/* has escape sequences: decode before use */
	bool plain;	/* no escape and no DEL: json_strn() writes these bytes */
};

/* A checked number token (RFC 8259 grammar). */
struct jr_num {
	const char *s;
	size_t len;
	bool is_int;	/* no fraction, no exponent */
	bool neg;
};

/* jr_str_decode(), jr_str_jbuf(): \u0000-\u00ff as that byte, not U+00XX */
#define JR_BYTES 0x1

/* Start reading the text buf[0..len). */
void jr_init(struct jr *r, const char *buf, size_t len);
/* 0 if nothing but white space follows the value read; else -EINVAL. */
int jr_end(struct jr *r);

/* The kind of the next value; JR_NONE after an error or at the end. */
static inline enum jr_type jr_peek(const struct jr *r)
{
	if (r->pos >= r->end)
		return JR_NONE;
	switch (*r->pos) {
	case '{':
		return JR_OBJ;
	case '[':
		return JR_ARR;
	case '"':
		return JR_STR;
	case 't':
	case 'f':
		return JR_BOOL;
	case 'n':
		return JR_NULL;
	case '-':
	case '0' ... '9':
		return JR_NUM;
	default:
		return JR_NONE;
	}
}

/* Enter the object that is the next value. */
int jr_obj_open(struct jr *r);
/*
 * The next member of the object being read: 1 with its name in *key and
 * the reader at its value (which must be read or skipped before the next
 * call); 0 at the object's end, which is then closed.
 */
int jr_next_member(struct jr *r, struct jr_str *key);
/* Enter the array that is the next value. */
int jr_arr_open(struct jr *r);
/* 1 with the reader at the array's next element; 0 at its end (closed). */
int jr_next_elem(struct jr *r);
/*
 * Skip the rest of the innermost open object or array and close it (the
 * reader must be between members or elements, not at a member's value).
 */
int jr_close(struct jr *r);
/* Read (and check) the next value, whatever it is. */
int jr_skip(struct jr *r);

/* The next value as a string token: zero-copy, see jr_str_decode(). */
int jr_str(struct jr *r, struct jr_str *out);
/* The next value as a number token. */
int jr_num(struct jr *r, struct jr_num *out);
/* The next value as an integer 0..UINT64_MAX (-0 is 0). */
int jr_u64(struct jr *r, uint64_t *v);
/* The next value as an integer INT64_MIN..INT64_MAX. */
int jr_i64(struct jr *r, int64_t *v);
/* The next value as a finite double (any number token that is one). */
int jr_f64(struct jr *r, double *v);
/* The next value as true or false. */
int jr_bool(struct jr *r, bool *v);
/* The next value as null. */
int jr_null(struct jr *r);

/* The magnitude of an integer token; false if it is not one or overflows. */
bool jr_num_u64(const struct jr_num *n, uint64_t *mag);
/* A number token as a finite double; false if it is not one. */
bool jr_num_f64(const struct jr_num *n, double *v);

/*
 * Decode a string token into out (room for s->len bytes: decoding never
 * lengthens); returns the length.  flags: JR_BYTES.
 */
size_t jr_str_decode(const struct jr_str *s, char *out, unsigned flags);
/*
 * The decoded bytes of s: s->s itself when it has no escapes, else a copy
 * decoded into b (emptied first).  NULL when b could not grow.
 */
const char *jr_str_jbuf(const struct jr_str *s, struct jbuf *b,
			unsigned flags, size_t *len);
/*
 * The decoded bytes of s: s->s itself when it has no escapes, else a copy
 * decoded into buf[0..size), NULL if s as written is longer than size.
 * Inline: the common case (a member name without escapes) costs no call.
 */
static inline const char *jr_str_get(const struct jr_str *s, char *buf,
				     size_t size, size_t *len)
{
	if (!s->esc) {
		*len = s->len;
		return s->s;
	}
	if (s->len > size)
		return NULL;
	*len = jr_str_decode(s, buf, 0);
	return buf;
}
/* Whether s decodes to the n bytes at lit. */
bool jr_str_eq(const struct jr_str *s, const char *lit, size_t n);

/*
 * Move to the value of the next member named key (n bytes) of the object
 * being read, checking and skipping the members before it: 0 at its value,
 * -ENOENT when there is none (the object was read to its end and closed).
 */
int jr_find(struct jr *r, const char *key, size_t n);
/*
 * The string value of the first member named key of the object that the
 * text buf[0..len) starts with: 0, -ENOENT when it has none, -EDOM when
 * that member is not a string, -EINVAL when the text up to the answer is
 * not valid JSON or not an object.  Reads no further than the answer.
 */
int jr_member_str(const char *buf, size_t len, const char *key,
		  struct jr_str *out);

#endif
