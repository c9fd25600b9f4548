// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * json_read.c - the one strict JSON reader (see json_read.h).
 *
 * It reads every record the sinks deliver (the ClickHouse target is
 * 50,000 records/s on two cores), so strings, which are most of a record,
 * are scanned eight bytes at a time and handed out as they stand; only a
 * caller that wants the bytes of a string with escapes decodes it.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json_read.h"

/* Note the first error at the current position; returns -EINVAL. */
static int fail(struct jr *r, const char *why)
{
	if (!r->err) {
		r->err = why;
		r->err_off = (size_t)(r->pos - r->base);
	}
	/* nothing is left to read: every later call fails too */
	r->pos = r->end;
	return -EINVAL;
}

/* Skip JSON white space. */
static inline void ws(struct jr *r)
{
	while (r->pos < r->end && (*r->pos == ' ' || *r->pos == '\n' ||
				   *r->pos == '\r' || *r->pos == '\t'))
		r->pos++;
}

/* Start reading the text buf[0..len). */
void jr_init(struct jr *r, const char *buf, size_t len)
{
	r->base = r->pos = (const unsigned char *)buf;
	r->end = r->pos + len;
	r->depth = 0;
	r->first = false;
	r->objs = 0;
	r->err = NULL;
	r->err_off = 0;
	ws(r);
}

/* 0 if nothing but white space follows the value read; else -EINVAL. */
int jr_end(struct jr *r)
{
	if (r->err)
		return -EINVAL;
	ws(r);
	if (r->pos != r->end)
		return fail(r, "text after the value");
	return 0;
}

/* The next value is not of the kind asked for: -EDOM if it is a value. */
static int mismatch(struct jr *r)
{
	if (r->pos >= r->end)
		return fail(r, "value missing");
	if (jr_peek(r) == JR_NONE)
		return fail(r, "invalid value");
	return -EDOM;
}

/* ---- strings ---------------------------------------------------------------- */

/* Byte classes in a string: 0 plain, 1 '"', 2 '\\', 3 control, 4 high, 5 DEL. */
static const unsigned char str_class[256] = {
	[0x00 ... 0x1f] = 3, ['"'] = 1, ['\\'] = 2, [0x7f] = 5, [0x80 ... 0xff] = 4,
};

/* Value of 4 hex digits at s, or -1. */
static int hex4(const unsigned char *s)
{
	int v = 0, i, d;

	for (i = 0; i < 4; i++) {
		if (s[i] >= '0' && s[i] <= '9')
			d = s[i] - '0';
		else if ((s[i] | 0x20) >= 'a' && (s[i] | 0x20) <= 'f')
			d = (s[i] | 0x20) - 'a' + 10;
		else
			return -1;
		v = v << 4 | d;
	}
	return v;
}

/*
 * The escape sequence at s (s[0] == '\\'): its length (2, 6, or 12 for a
 * surrogate pair) with the code point in *cp, or 0 if it is invalid.
 */
static size_t escape_len(const unsigned char *s, const unsigned char *end,
			 uint32_t *cp)
{
	int u, lo;

	if (end - s < 2)
		return 0;
	switch (s[1]) {
	case '"': *cp = '"'; return 2;
	case '\\': *cp = '\\'; return 2;
	case '/': *cp = '/'; return 2;
	case 'b': *cp = '\b'; return 2;
	case 'f': *cp = '\f'; return 2;
	case 'n': *cp = '\n'; return 2;
	case 'r': *cp = '\r'; return 2;
	case 't': *cp = '\t'; return 2;
	case 'u':
		break;
	default:
		return 0;
	}
	if (end - s < 6 || (u = hex4(s + 2)) < 0)
		return 0;
	if (u >= 0xdc00 && u <= 0xdfff)
		return 0;		/* a low surrogate first */
	if (u < 0xd800 || u > 0xdbff) {
		*cp = (uint32_t)u;
		return 6;
	}
	if (end - s < 12 || s[6] != '\\' || s[7] != 'u')
		return 0;		/* a high surrogate alone */
	lo = hex4(s + 8);
	if (lo < 0xdc00 || lo > 0xdfff)
		return 0;
	*cp = 0x10000 + (((uint32_t)u - 0xd800) << 10) + ((uint32_t)lo - 0xdc00);
	return 12;
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ONES  0x0101010101010101ull
#define HIGHS 0x8080808080808080ull

/* High bit of each byte of w that equals c (exact up to the first one). */
static inline uint64_t bytes_eq(uint64_t w, unsigned char c)
{
	uint64_t x = w ^ (ONES * c);

	return (x - ONES) & ~x & HIGHS;
}

/*
 * Offset of the first byte among the 8 at s that is not plain string
 * content ('"', '\\', a control character, DEL or a byte >= 0x80), or 8.
 * The lowest flagged byte of each test is exact, so their union's is too.
 */
static inline unsigned special8(const unsigned char *s)
{
	uint64_t w, m;

	memcpy(&w, s, 8);
	m = bytes_eq(w, '"') | bytes_eq(w, '\\') | bytes_eq(w, 0x7f) |
	    ((w - ONES * 0x20) & ~w & HIGHS) | (w & HIGHS);
	return m ? (unsigned)__builtin_ctzll(m) >> 3 : 8;
}
#endif

/*
 * Read and check a string token at r->pos (a '"').  Inlined into its few
 * callers: strings are most of a record, and a call less for each is
 * measurable (chrow --bench).
 */
static inline __attribute__((always_inline)) int
parse_string(struct jr *r, struct jr_str *str)
{
	const unsigned char *q = r->pos + 1, *end = r->end;
	bool esc = false, del = false;
	uint32_t cp;
	size_t n;

	for (;;) {
#ifdef ONES
		/* eight bytes at a time through the plain runs */
		while (end - q >= 8) {
			unsigned k = special8(q);

			q += k;
			if (k < 8)
				break;
		}
#endif
		while (q < end && !str_class[*q])
			q++;
		if (q >= end)
			return fail(r, "unterminated string");
		switch (str_class[*q]) {
		case 1:
			str->s = (const char *)r->pos + 1;
			str->len = (size_t)(q - r->pos - 1);
			str->esc = esc;
			str->plain = !esc && !del;
			r->pos = q + 1;
			return 0;
		case 2:
			n = escape_len(q, end, &cp);
			if (!n) {
				r->pos = q;
				return fail(r, "invalid escape or lone surrogate");
			}
			esc = true;
			q += n;
			break;
		case 3:
			r->pos = q;
			return fail(r, "control character in a string");
		case 5:
			del = true;	/* json_strn() writes it as \u007f */
			q++;
			break;
		default:
			n = json_utf8_len(q, (size_t)(end - q));
			if (!n) {
				r->pos = q;
				return fail(r, "invalid UTF-8");
			}
			q += n;
			break;
		}
	}
}

/* The next value as a string token: zero-copy, see jr_str_decode(). */
int jr_str(struct jr *r, struct jr_str *out)
{
	if (r->pos >= r->end || *r->pos != '"')
		return mismatch(r);
	return parse_string(r, out);
}

/* Decode a checked string token into out (>= s->len bytes). */
size_t jr_str_decode(const struct jr_str *str, char *out, unsigned flags)
{
	const unsigned char *s = (const unsigned char *)str->s;
	const unsigned char *end = s + str->len, *bs;
	size_t n = 0, k;
	uint32_t cp = 0;

	while (s < end) {
		bs = memchr(s, '\\', (size_t)(end - s));
		if (!bs)
			bs = end;
		memcpy(out + n, s, (size_t)(bs - s));
		n += (size_t)(bs - s);
		if (bs == end)
			break;
		k = escape_len(bs, end, &cp);	/* checked: never 0 here */
		if ((flags & JR_BYTES) && cp <= 0xff)
			out[n++] = (char)cp;	/* json.h's byte that was not UTF-8 */
		else
			n += json_utf8_put(out + n, cp);
		s = bs + (k ? k : 2);
	}
	return n;
}

/* The decoded bytes of s: s->s, or a copy decoded into b. */
const char *jr_str_jbuf(const struct jr_str *s, struct jbuf *b,
			unsigned flags, size_t *len)
{
	char *out;

	if (!s->esc) {
		*len = s->len;
		return s->s;
	}
	jbuf_reset(b);
	out = jbuf_room(b, s->len);
	if (!out)
		return NULL;
	*len = jr_str_decode(s, out, flags);
	jbuf_added(b, *len);
	return out;
}

/* Whether s decodes to the n bytes at lit. */
bool jr_str_eq(const struct jr_str *s, const char *lit, size_t n)
{
	const unsigned char *p = (const unsigned char *)s->s, *end = p + s->len;
	const char *l = lit, *lend = lit + n;
	char u8[4];
	uint32_t cp;
	size_t k, m;

	if (!s->esc)
		return s->len == n && !memcmp(s->s, lit, n);
	while (p < end) {
		if (*p != '\\') {
			if (l == lend || *l != (char)*p)
				return false;
			l++;
			p++;
			continue;
		}
		k = escape_len(p, end, &cp);	/* checked: never 0 here */
		m = json_utf8_put(u8, cp);
		if ((size_t)(lend - l) < m || memcmp(l, u8, m))
			return false;
		l += m;
		p += k ? k : 2;
	}
	return l == lend;
}

/* ---- numbers and words ----------------------------------------------------- */

/* Step q past the digits there; false if there is none. */
static inline bool skip_digits(const unsigned char **q, const unsigned char *end)
{
	const unsigned char *p = *q;

	while (p < end && *p >= '0' && *p <= '9')
		p++;
	if (p == *q)
		return false;
	*q = p;
	return true;
}

/* Read and check a number token (RFC 8259 grammar) at r->pos. */
static int parse_number(struct jr *r, struct jr_num *num)
{
	const unsigned char *q = r->pos, *end = r->end;

	num->neg = q < end && *q == '-';
	if (num->neg)
		q++;
	if (q >= end || *q < '0' || *q > '9')
		return fail(r, "invalid value");
	if (*q == '0')
		q++;		/* no leading zeros */
	else
		skip_digits(&q, end);
	num->is_int = true;
	if (q < end && *q == '.') {
		q++;
		if (!skip_digits(&q, end))
			goto bad;
		num->is_int = false;
	}
	if (q < end && (*q == 'e' || *q == 'E')) {
		q++;
		if (q < end && (*q == '+' || *q == '-'))
			q++;
		if (!skip_digits(&q, end))
			goto bad;
		num->is_int = false;
	}
	num->s = (const char *)r->pos;
	num->len = (size_t)(q - r->pos);
	r->pos = q;
	return 0;
bad:
	r->pos = q;
	return fail(r, "invalid number");
}

/* The next value as a number token. */
int jr_num(struct jr *r, struct jr_num *out)
{
	if (jr_peek(r) != JR_NUM)
		return mismatch(r);
	return parse_number(r, out);
}

/* The magnitude of an integer token; false if it is not one or overflows. */
bool jr_num_u64(const struct jr_num *num, uint64_t *mag)
{
	const unsigned char *s = (const unsigned char *)num->s + num->neg;
	const unsigned char *end = (const unsigned char *)num->s + num->len;
	uint64_t x = 0;

	if (!num->is_int)
		return false;
	for (; s < end; s++) {
		unsigned d = *s - '0';

		if (x > (UINT64_MAX - d) / 10)
			return false;
		x = x * 10 + d;
	}
	*mag = x;
	return true;
}

/* A number token as a finite double; false if it is not one. */
bool jr_num_f64(const struct jr_num *num, double *v)
{
	static const double pow10[] = {
		1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
		1e12, 1e13, 1e14, 1e15,
	};
	const unsigned char *s = (const unsigned char *)num->s + num->neg;
	const unsigned char *end = (const unsigned char *)num->s + num->len;
	uint64_t m = 0;
	int digits = 0, frac = -1;
	char tmp[512];
	char *e;

	/* exact fast path: up to 15 digits, no exponent (Clinger) */
	for (; s < end && digits <= 15; s++) {
		if (*s == '.') {
			frac = 0;
			continue;
		}
		if (*s < '0' || *s > '9')
			break;
		m = m * 10 + (uint64_t)(*s - '0');
		digits++;
		if (frac >= 0)
			frac++;
	}
	if (s == end && digits <= 15) {
		*v = frac > 0 ? (double)m / pow10[frac] : (double)m;
		if (num->neg)
			*v = -*v;
		return true;
	}
	if (num->len >= sizeof(tmp))
		return false;
	memcpy(tmp, num->s, num->len);
	tmp[num->len] = '\0';
	*v = strtod(tmp, &e);
	return *e == '\0' && isfinite(*v);
}

/* A number that does not fit the read asked for: back to it; -EDOM. */
static int unread(struct jr *r, const struct jr_num *num)
{
	r->pos = (const unsigned char *)num->s;
	return -EDOM;
}

/* The next value as an integer 0..UINT64_MAX (-0 is 0). */
int jr_u64(struct jr *r, uint64_t *v)
{
	struct jr_num num;
	uint64_t x;
	int err = jr_num(r, &num);

	if (err)
		return err;
	if (!jr_num_u64(&num, &x) || (num.neg && x))
		return unread(r, &num);
	*v = x;
	return 0;
}

/* The next value as an integer INT64_MIN..INT64_MAX. */
int jr_i64(struct jr *r, int64_t *v)
{
	struct jr_num num;
	uint64_t x;
	int err = jr_num(r, &num);

	if (err)
		return err;
	if (!jr_num_u64(&num, &x) || x > (uint64_t)INT64_MAX + num.neg)
		return unread(r, &num);
	*v = num.neg ? (int64_t)(0 - x) : (int64_t)x;
	return 0;
}

/* The next value as a finite double. */
int jr_f64(struct jr *r, double *v)
{
	struct jr_num num;
	int err = jr_num(r, &num);

	if (err)
		return err;
	return jr_num_f64(&num, v) ? 0 : unread(r, &num);
}

/* Accept the literal word w (true, false, null) at r->pos. */
static int literal(struct jr *r, const char *w, size_t n)
{
	if ((size_t)(r->end - r->pos) < n || memcmp(r->pos, w, n))
		return fail(r, "invalid value");
	r->pos += n;
	return 0;
}

/* The next value as true or false. */
int jr_bool(struct jr *r, bool *v)
{
	if (jr_peek(r) != JR_BOOL)
		return mismatch(r);
	*v = *r->pos == 't';
	return *v ? literal(r, "true", 4) : literal(r, "false", 5);
}

/* The next value as null. */
int jr_null(struct jr *r)
{
	if (jr_peek(r) != JR_NULL)
		return mismatch(r);
	return literal(r, "null", 4);
}

/* ---- objects and arrays ---------------------------------------------------- */

/* Enter the container at r->pos (its opening bracket). */
static int enter(struct jr *r, bool obj)
{
	if (r->depth >= JR_MAX_DEPTH)
		return fail(r, "nested too deeply");
	if (obj)
		r->objs |= 1ull << r->depth;
	else
		r->objs &= ~(1ull << r->depth);
	r->depth++;
	r->first = true;
	r->pos++;
	ws(r);
	return 0;
}

/* Enter the object that is the next value. */
int jr_obj_open(struct jr *r)
{
	if (r->pos >= r->end || *r->pos != '{')
		return mismatch(r);
	return enter(r, true);
}

/* Enter the array that is the next value. */
int jr_arr_open(struct jr *r)
{
	if (r->pos >= r->end || *r->pos != '[')
		return mismatch(r);
	return enter(r, false);
}

/*
 * Step past the ',' before the next member or element: 1 if there is
 * one, 0 (closed) at the closing bracket.
 */
static inline int next(struct jr *r, unsigned char close)
{
	if (r->first) {
		r->first = false;
		if (r->pos < r->end && *r->pos == close)
			goto closed;
		return 1;
	}
	ws(r);
	if (r->pos >= r->end)
		return fail(r, close == '}' ? "unterminated object" :
					      "unterminated array");
	if (*r->pos == close)
		goto closed;
	if (*r->pos != ',')
		return fail(r, close == '}' ? "expected ',' or '}'" :
					      "expected ',' or ']'");
	r->pos++;
	ws(r);
	return 1;
closed:
	r->pos++;
	r->depth--;
	return 0;
}

/* The next member of the object being read: 1 (at its value) or 0 (end). */
int jr_next_member(struct jr *r, struct jr_str *key)
{
	int n, err;

	if (r->err)
		return -EINVAL;
	n = next(r, '}');
	if (n <= 0)
		return n;
	if (r->pos >= r->end || *r->pos != '"')
		return fail(r, "expected a member name");
	err = parse_string(r, key);
	if (err)
		return err;
	ws(r);
	if (r->pos >= r->end || *r->pos != ':')
		return fail(r, "expected ':'");
	r->pos++;
	ws(r);
	return 1;
}

/* 1 with the reader at the array's next element; 0 at its end (closed). */
int jr_next_elem(struct jr *r)
{
	if (r->err)
		return -EINVAL;
	return next(r, ']');
}

/* Skip the rest of the innermost open container and close it. */
int jr_close(struct jr *r)
{
	struct jr_str key;
	bool obj;
	int err;

	if (r->err)
		return -EINVAL;
	if (!r->depth)
		return fail(r, "no open object or array");
	obj = r->objs >> (r->depth - 1) & 1;
	while ((err = obj ? jr_next_member(r, &key) : jr_next_elem(r)) > 0) {
		err = jr_skip(r);
		if (err)
			return err;
	}
	return err;
}

/* Read (and check) the next value, whatever it is. */
int jr_skip(struct jr *r)
{
	struct jr_str str;
	struct jr_num num;
	int err;

	switch (jr_peek(r)) {
	case JR_OBJ:
		err = jr_obj_open(r);
		return err ? err : jr_close(r);
	case JR_ARR:
		err = jr_arr_open(r);
		return err ? err : jr_close(r);
	case JR_STR:
		return parse_string(r, &str);
	case JR_BOOL:
		return *r->pos == 't' ? literal(r, "true", 4) :
					literal(r, "false", 5);
	case JR_NULL:
		return literal(r, "null", 4);
	case JR_NUM:
		return parse_number(r, &num);
	default:
		return mismatch(r);
	}
}

/* ---- look-ups -------------------------------------------------------------- */

/* Move to the value of the next member named key of the object being read. */
int jr_find(struct jr *r, const char *key, size_t n)
{
	struct jr_str k;
	int err;

	while ((err = jr_next_member(r, &k)) > 0) {
		if (jr_str_eq(&k, key, n))
			return 0;
		err = jr_skip(r);
		if (err)
			return err;
	}
	return err ? err : -ENOENT;
}

/* The string value of the first member named key of the object in buf. */
int jr_member_str(const char *buf, size_t len, const char *key,
		  struct jr_str *out)
{
	struct jr r;
	int err;

	jr_init(&r, buf, len);
	err = jr_obj_open(&r);
	if (err)
		return -EINVAL;		/* not an object, whatever it is */
	err = jr_find(&r, key, strlen(key));
	return err ? err : jr_str(&r, out);
}
