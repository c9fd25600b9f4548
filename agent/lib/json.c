// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * json.c - a small JSON writer into a growable buffer.
 *
 * Once an allocation fails (or the nesting is misused) b->oom is set and
 * every later call is a no-op, so callers check b->oom once per record.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "util.h"

#define JBUF_MIN_CAP 256

/* Make room for n more bytes plus the terminating NUL. */
static int grow(struct jbuf *b, size_t n)
{
	size_t need, cap;
	char *p;

	if (b->oom)
		return -1;
	if (n > SIZE_MAX - b->len - 1)
		goto fail;
	need = b->len + n + 1;
	if (need <= b->cap)
		return 0;
	cap = b->cap ? b->cap : JBUF_MIN_CAP;
	while (cap < need) {
		if (cap > SIZE_MAX / 2) {
			cap = need;
			break;
		}
		cap *= 2;
	}
	if (b->wipe) {
		/* realloc() could leave the old bytes behind */
		p = malloc(cap);
		if (p && b->buf) {
			memcpy(p, b->buf, b->len);
			explicit_bzero(b->buf, b->cap);
			free(b->buf);
		}
	} else {
		p = realloc(b->buf, cap);
	}
	if (!p)
		goto fail;
	b->buf = p;
	b->cap = cap;
	return 0;
fail:
	b->oom = true;
	return -1;
}

/* grow(), with the common case (room enough) inline. */
static inline int reserve(struct jbuf *b, size_t n)
{
	if (!b->oom && n < b->cap - b->len)
		return 0;
	return grow(b, n);
}

/* Append n raw bytes. */
static void put(struct jbuf *b, const char *s, size_t n)
{
	if (reserve(b, n))
		return;
	memcpy(b->buf + b->len, s, n);
	b->len += n;
	b->buf[b->len] = '\0';
}

/* Append n raw bytes (no separators): the buffer as a byte buffer. */
int jbuf_put(struct jbuf *b, const void *p, size_t n)
{
	put(b, p, n);
	return b->oom ? -ENOMEM : 0;
}

/* Append one raw byte. */
static void put_char(struct jbuf *b, char c)
{
	put(b, &c, 1);
}

/* Write the comma a new member or element needs, if any. */
static void sep(struct jbuf *b)
{
	if (b->after_key) {
		b->after_key = false;
		return;
	}
	if (b->depth > 0 && b->need_comma[b->depth - 1])
		put_char(b, ',');
}

/* Note that a value is complete at the current level. */
static void done(struct jbuf *b)
{
	if (b->depth > 0)
		b->need_comma[b->depth - 1] = true;
}

/* Initialise an empty buffer (no allocation yet). */
void jbuf_init(struct jbuf *b)
{
	memset(b, 0, sizeof(*b));
}

/* Initialise an empty buffer whose contents are zeroed when let go. */
void jbuf_init_wipe(struct jbuf *b)
{
	jbuf_init(b);
	b->wipe = true;
}

/* Release the buffer's memory; accepts a zeroed struct. */
void jbuf_free(struct jbuf *b)
{
	bool wipe;

	if (!b)
		return;
	wipe = b->wipe;
	if (wipe && b->buf)
		explicit_bzero(b->buf, b->cap);
	free(b->buf);
	memset(b, 0, sizeof(*b));
	b->wipe = wipe;
}

/* Empty the buffer, keep its memory. */
void jbuf_reset(struct jbuf *b)
{
	char *buf = b->buf;
	size_t cap = b->cap;
	bool wipe = b->wipe;

	if (wipe && buf)
		explicit_bzero(buf, b->len);
	memset(b, 0, sizeof(*b));
	b->buf = buf;
	b->cap = cap;
	b->wipe = wipe;
	if (buf)
		buf[0] = '\0';
}

/* NUL-terminated contents ("" when empty). */
const char *jbuf_str(struct jbuf *b)
{
	return b->buf ? b->buf : "";
}

/* Room for n more bytes at the end of b: where to write them, or NULL. */
char *jbuf_room(struct jbuf *b, size_t n)
{
	if (reserve(b, n))
		return NULL;
	return b->buf + b->len;
}

/* Count n bytes written at jbuf_room()'s pointer. */
void jbuf_added(struct jbuf *b, size_t n)
{
	if (b->oom)
		return;
	b->len += n;
	b->buf[b->len] = '\0';
}

/* Cut b back to its first len bytes, with no container open. */
void jbuf_rewind(struct jbuf *b, size_t len)
{
	if (len < b->len) {
		if (b->wipe)
			explicit_bzero(b->buf + len, b->len - len);
		b->len = len;
		b->buf[len] = '\0';
	}
	b->depth = 0;
	b->after_key = false;
}

/* Whether b is at the top level: no container open, no key waiting. */
bool jbuf_at_top(const struct jbuf *b)
{
	return !b->depth && !b->after_key;
}

/* Open a container with the given bracket. */
static void open_container(struct jbuf *b, char c)
{
	if (b->oom)
		return;
	if (b->depth >= JSON_MAX_DEPTH) {
		b->oom = true;	/* too deep: the contents would be invalid */
		return;
	}
	sep(b);
	put_char(b, c);
	b->need_comma[b->depth++] = false;
}

/* Close the innermost container with the given bracket. */
static void close_container(struct jbuf *b, char c)
{
	if (b->oom)
		return;
	if (b->depth <= 0 || b->after_key) {
		b->oom = true;	/* unbalanced or key without value */
		return;
	}
	b->depth--;
	put_char(b, c);
	done(b);
}

/* Start an object. */
void json_obj_open(struct jbuf *b)
{
	open_container(b, '{');
}

/* End an object. */
void json_obj_close(struct jbuf *b)
{
	close_container(b, '}');
}

/* Start an array. */
void json_arr_open(struct jbuf *b)
{
	open_container(b, '[');
}

/* End an array. */
void json_arr_close(struct jbuf *b)
{
	close_container(b, ']');
}

/* Write code point cp (< 0x110000) as UTF-8 at o; returns the length. */
size_t json_utf8_put(char *o, uint32_t cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | cp >> 6);
		o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | cp >> 12);
		o[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | cp >> 18);
	o[1] = (char)(0x80 | (cp >> 12 & 0x3f));
	o[2] = (char)(0x80 | (cp >> 6 & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* Length of the valid UTF-8 sequence at s (RFC 3629), 0 if invalid. */
size_t json_utf8_len(const unsigned char *s, size_t n)
{
	return util_utf8_len(s, n);
}

/* Write s[0..len) as the body of a JSON string, escaped. */
static void escape(struct jbuf *b, const unsigned char *s, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	size_t i = 0, run = 0, n;
	char esc[6];

	while (i < len) {
		unsigned char c = s[i];
		const char *e = NULL;
		size_t elen = 2;

		if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
			run++;
			i++;
			continue;
		}
		if (c >= 0x80) {
			n = json_utf8_len(s + i, len - i);
			if (n) {
				run += n;
				i += n;
				continue;
			}
		}
		/* flush the plain run before this byte */
		put(b, (const char *)s + i - run, run);
		run = 0;
		switch (c) {
		case '"': e = "\\\""; break;
		case '\\': e = "\\\\"; break;
		case '\b': e = "\\b"; break;
		case '\f': e = "\\f"; break;
		case '\n': e = "\\n"; break;
		case '\r': e = "\\r"; break;
		case '\t': e = "\\t"; break;
		default:
			esc[0] = '\\';
			esc[1] = 'u';
			esc[2] = '0';
			esc[3] = '0';
			esc[4] = hex[c >> 4];
			esc[5] = hex[c & 0xf];
			e = esc;
			elen = 6;
			break;
		}
		put(b, e, elen);
		i++;
	}
	put(b, (const char *)s + i - run, run);
}

/* Write an object key; the next value call writes its value. */
void json_key(struct jbuf *b, const char *key)
{
	if (b->oom)
		return;
	if (b->after_key) {
		b->oom = true;	/* two keys in a row */
		return;
	}
	sep(b);
	put_char(b, '"');
	if (key)
		escape(b, (const unsigned char *)key, strlen(key));
	put(b, "\":", 2);
	b->after_key = true;
}

/* Write a complete scalar token (already valid JSON). */
static void scalar(struct jbuf *b, const char *tok, size_t n)
{
	if (b->oom)
		return;
	sep(b);
	put(b, tok, n);
	done(b);
}

/* A value given as its checked JSON text: copied as it is. */
void json_raw(struct jbuf *b, const char *text, size_t n)
{
	scalar(b, text, n);
}

/* String value from len bytes (may contain NUL and invalid UTF-8). */
void json_strn(struct jbuf *b, const char *s, size_t len)
{
	if (b->oom)
		return;
	if (!s && len) {
		json_null(b);
		return;
	}
	sep(b);
	put_char(b, '"');
	if (len)
		escape(b, (const unsigned char *)s, len);
	put_char(b, '"');
	done(b);
}

/* String value from a C string; NULL writes null. */
void json_str(struct jbuf *b, const char *s)
{
	if (!s)
		json_null(b);
	else
		json_strn(b, s, strlen(s));
}

/*
 * The separator sep() writes and the mark done() sets, for a raw writer
 * that made room for it already.
 */
static inline void sep_raw(struct jbuf *b)
{
	if (b->after_key)
		b->after_key = false;
	else if (b->depth > 0 && b->need_comma[b->depth - 1])
		b->buf[b->len++] = ',';
	if (b->depth > 0)
		b->need_comma[b->depth - 1] = true;
}

/* Write a separator, then s[0..n) quoted (needing no escapes), then tail. */
static void quoted_plain(struct jbuf *b, const char *s, size_t n,
			 const char *tail, size_t tail_n)
{
	if (n > SIZE_MAX / 2) {
		b->oom = true;
		return;
	}
	if (reserve(b, n + tail_n + 3))
		return;
	sep_raw(b);
	b->buf[b->len++] = '"';
	memcpy(b->buf + b->len, s, n);
	b->len += n;
	b->buf[b->len++] = '"';
	memcpy(b->buf + b->len, tail, tail_n);
	b->len += tail_n;
	b->buf[b->len] = '\0';
}

/* Write a key that needs no escaping, as json_key() would. */
void json_key_plain(struct jbuf *b, const char *key, size_t n)
{
	if (b->after_key)
		b->oom = true;	/* two keys in a row */
	quoted_plain(b, key, n, ":", 1);
	b->after_key = true;
}

/* Write a string value whose bytes need no escaping, as json_strn() would. */
void json_str_plain(struct jbuf *b, const char *s, size_t n)
{
	quoted_plain(b, s, n, "", 0);
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ONES 0x0101010101010101ull

/* High bit of each zero byte of x, exactly. */
static inline uint64_t zero_bytes(uint64_t x)
{
	const uint64_t low7 = 0x7f7f7f7f7f7f7f7full;

	return ~(((x & low7) + low7) | x | low7);
}
#endif

/* Escapes for a checked JSON text inside a string: 0 means as is. */
static const char text_esc[256] = {
	['"'] = '"', ['\\'] = '\\', ['\n'] = 'n', ['\r'] = 'r', ['\t'] = 't',
};

/*
 * Escape a checked JSON text into out (2 * n + 8 bytes); returns the
 * length.  A record has a quote every six bytes or so, too often for
 * byte-at-a-time loops with branches: each eight bytes are copied at once
 * and the quotes, backslashes and white space among them fixed up in
 * place.
 */
static size_t escape_text(char *restrict out, const unsigned char *restrict s,
			  size_t n)
{
	const unsigned char *end = s + n;
	char *o = out;

#ifdef ONES
	while (end - s >= 8) {
		uint64_t w, m, rest;
		unsigned k;

		memcpy(&w, s, 8);
		memcpy(o, &w, 8);
		m = zero_bytes(w ^ (ONES * '"')) | zero_bytes(w ^ (ONES * '\\')) |
		    zero_bytes(w & (ONES * 0xe0));
		for (; m; m &= m - 1, o++) {
			k = (unsigned)__builtin_ctzll(m) >> 3;
			rest = w >> (8 * k) >> 8;	/* the bytes after it */
			o[k] = '\\';
			o[k + 1] = text_esc[s[k]];
			memcpy(o + k + 2, &rest, 8);
		}
		o += 8;
		s += 8;
	}
#endif
	for (; s < end; s++) {
		if (text_esc[*s]) {
			*o++ = '\\';
			*o++ = text_esc[*s];
		} else {
			*o++ = (char)*s;
		}
	}
	return (size_t)(o - out);
}

/*
 * A checked JSON text as a string value (see json.h): its only control
 * characters are white space and its bytes are UTF-8, so escaping is a
 * table lookup per byte.
 */
void json_str_text(struct jbuf *b, const char *text, size_t n)
{
	/* separator, quotes, and escape_text()'s last 8-byte store */
	if (n > SIZE_MAX / 4) {
		b->oom = true;
		return;
	}
	if (reserve(b, 2 * n + 24))
		return;
	sep_raw(b);
	b->buf[b->len++] = '"';
	b->len += escape_text(b->buf + b->len, (const unsigned char *)text, n);
	b->buf[b->len++] = '"';
	b->buf[b->len] = '\0';
}

/* Write v as exactly width decimal digits, zero-padded, at out. */
static void put_digits(char *out, unsigned v, int width)
{
	while (width--) {
		out[width] = (char)('0' + v % 10);
		v /= 10;
	}
}

/* Unsigned integer value. */
void json_u64(struct jbuf *b, uint64_t v)
{
	char tmp[24];
	char *s = util_fmt_u64(v, tmp + sizeof(tmp));

	scalar(b, s, (size_t)(tmp + sizeof(tmp) - s));
}

/* Signed integer value. */
void json_i64(struct jbuf *b, int64_t v)
{
	char tmp[24];
	uint64_t mag = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
	char *p = util_fmt_u64(mag, tmp + sizeof(tmp));

	if (v < 0)
		*--p = '-';
	scalar(b, p, (size_t)(tmp + sizeof(tmp) - p));
}

/* Finite v with up to decimals decimals, trailing zeros trimmed. */
static void fixed(struct jbuf *b, double v, int decimals)
{
	char tmp[400];	/* %.12f of DBL_MAX is 322 characters */
	int n;

	n = snprintf(tmp, sizeof(tmp), "%.*f", decimals, v);
	if (n <= 0 || (size_t)n >= sizeof(tmp)) {
		json_null(b);
		return;
	}
	/* "%.*f" always has a '.', so trimming stops at it */
	while (tmp[n - 1] == '0')
		n--;
	if (tmp[n - 1] == '.')
		n--;
	tmp[n] = '\0';
	if (strcmp(tmp, "-0") == 0) {
		tmp[0] = '0';
		n = 1;
	}
	scalar(b, tmp, (size_t)n);
}

/* Float with up to 6 decimals, no exponent; NaN/Inf written as null. */
void json_double(struct jbuf *b, double v)
{
	char tmp[32];

	if (!isfinite(v)) {
		json_null(b);
		return;
	}
	/*
	 * The common case (seconds, ratios) without printf.  Below 2^31,
	 * v * 1e6 is off by less than half a microsecond, so the text is
	 * within the double's precision and reads back to the same text;
	 * above, it drifts by one in the last digit (4407370955.1 came out
	 * as ...100001, which read and written again is ...100002).
	 */
	if (fabs(v) < 2147483648.0) {
		uint64_t micros = (uint64_t)llround(fabs(v) * 1e6);
		char *end = tmp + sizeof(tmp), *p = end;
		unsigned frac = micros % 1000000, digits = 6;

		while (digits && frac % 10 == 0) {	/* trim trailing zeros */
			frac /= 10;
			digits--;
		}
		for (unsigned k = 0; k < digits; k++) {
			*--p = (char)('0' + frac % 10);
			frac /= 10;
		}
		if (digits)
			*--p = '.';
		p = util_fmt_u64(micros / 1000000, p);
		if (v < 0 && micros)
			*--p = '-';
		scalar(b, p, (size_t)(end - p));
		return;
	}
	fixed(b, v, 6);
}

/* Float with up to 12 decimals, no exponent (amounts of money). */
void json_double12(struct jbuf *b, double v)
{
	if (!isfinite(v)) {
		json_null(b);
		return;
	}
	fixed(b, v, 12);
}

/* Boolean value. */
void json_bool(struct jbuf *b, bool v)
{
	if (v)
		scalar(b, "true", 4);
	else
		scalar(b, "false", 5);
}

/* null value. */
void json_null(struct jbuf *b)
{
	scalar(b, "null", 4);
}

/* v as the shortest %.15g to %.17g text that reads back as v. */
void json_format_double(double v, char out[JSON_DOUBLE_MAX])
{
	if (!isfinite(v)) {
		memcpy(out, "null", 5);
		return;
	}
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(out, JSON_DOUBLE_MAX, "%.*g", prec, v);
		if (strtod(out, NULL) == v)
			break;
	}
}

/* Float with every significant digit; NaN/Inf written as null. */
void json_double_exact(struct jbuf *b, double v)
{
	char buf[JSON_DOUBLE_MAX];

	json_format_double(v, buf);
	scalar(b, buf, strlen(buf));
}

/* ---- RFC 3339 times ---------------------------------------------------------- */

/* Days from 1970-01-01 to y-m-d (proleptic Gregorian; H. Hinnant). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
	int64_t era;
	unsigned yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = (unsigned)(y - era * 400);
	doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

/* Write realtime ns as "YYYY-MM-DDThh:mm:ss.uuuuuuZ" and a NUL at out[0..28). */
static void format_time(uint64_t realtime_ns, char *out)
{
	uint64_t secs = realtime_ns / 1000000000ULL;
	uint32_t days = (uint32_t)(secs / 86400), rem = (uint32_t)(secs % 86400);
	/* civil_from_days (H. Hinnant) for days >= 0: no gmtime_r per record */
	uint32_t z = days + 719468, era = z / 146097, doe = z - era * 146097;
	uint32_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	uint32_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	uint32_t mp = (5 * doy + 2) / 153;
	uint32_t d = doy - (153 * mp + 2) / 5 + 1;
	uint32_t m = mp < 10 ? mp + 3 : mp - 9;
	uint32_t y = yoe + era * 400 + (m <= 2);

	/* 2^64 ns is in 2554: always four digits of year */
	put_digits(out, y, 4);
	out[4] = '-';
	put_digits(out + 5, m, 2);
	out[7] = '-';
	put_digits(out + 8, d, 2);
	out[10] = 'T';
	put_digits(out + 11, rem / 3600, 2);
	out[13] = ':';
	put_digits(out + 14, rem / 60 % 60, 2);
	out[16] = ':';
	put_digits(out + 17, rem % 60, 2);
	out[19] = '.';
	put_digits(out + 20, (unsigned)(realtime_ns % 1000000000ULL / 1000), 6);
	out[26] = 'Z';
	out[27] = '\0';
}

/* Format realtime ns as "YYYY-MM-DDThh:mm:ss.uuuuuuZ" into out (>= 28). */
void json_format_time(uint64_t realtime_ns, char *out, size_t outlen)
{
	char tmp[28];

	if (!out || !outlen)
		return;
	if (outlen >= sizeof(tmp)) {
		format_time(realtime_ns, out);
		return;
	}
	format_time(realtime_ns, tmp);
	memcpy(out, tmp, outlen - 1);
	out[outlen - 1] = '\0';
}

/* Parse n digits at s into *v; false if any is not a digit. */
static bool digits(const char *s, int n, unsigned *v)
{
	unsigned x = 0;

	while (n--) {
		if (*s < '0' || *s > '9')
			return false;
		x = x * 10 + (unsigned)(*s++ - '0');
	}
	*v = x;
	return true;
}

/* Parse an RFC 3339 time into seconds since the epoch and nanoseconds. */
int json_parse_time(const char *s, size_t n, unsigned flags, int64_t *secs,
		    uint32_t *nsec)
{
	static const unsigned char mdays[] = {
		31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31
	};
	const char *end = s + n, *q;
	unsigned y, mo, d, h = 0, mi = 0, sec = 0, ns = 0, oh, om, k;
	bool loose = flags & JSON_TIME_LOOSE, leap, have_sec;
	int64_t off = 0;

	if (n < 10 || !digits(s, 4, &y) || s[4] != '-' || !digits(s + 5, 2, &mo) ||
	    s[7] != '-' || !digits(s + 8, 2, &d))
		return -EINVAL;
	leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
	if (mo < 1 || mo > 12 || d < 1 ||
	    d > mdays[mo - 1] + (unsigned)(mo == 2 && leap))
		return -EINVAL;
	q = s + 10;
	if (loose && q == end)
		goto done;		/* a date alone: its midnight, UTC */
	/* the time: hh:mm, and :ss unless loose */
	if (end - q < 6 || (*q != 'T' && *q != 't' && *q != ' ') ||
	    !digits(q + 1, 2, &h) || q[3] != ':' || !digits(q + 4, 2, &mi))
		return -EINVAL;
	q += 6;
	have_sec = end - q >= 3 && *q == ':';
	if (have_sec) {
		if (!digits(q + 1, 2, &sec))
			return -EINVAL;
		q += 3;
	} else if (!loose) {
		return -EINVAL;
	}
	/* no leap second: nothing that writes these times makes one */
	if (h > 23 || mi > 59 || sec > 59)
		return -EINVAL;
	if (have_sec && q < end && *q == '.') {
		q++;
		if (q >= end || *q < '0' || *q > '9')
			return -EINVAL;
		for (k = 0; q < end && *q >= '0' && *q <= '9'; q++, k++)
			if (k < 9)
				ns = ns * 10 + (unsigned)(*q - '0');
		for (; k < 9; k++)
			ns *= 10;
	}
	if (q < end && (*q == 'Z' || *q == 'z')) {
		q++;
	} else if (end - q == 6 && (*q == '+' || *q == '-') &&
		   digits(q + 1, 2, &oh) && q[3] == ':' && digits(q + 4, 2, &om) &&
		   oh <= 23 && om <= 59) {
		off = (int64_t)(oh * 3600 + om * 60) * (*q == '-' ? -1 : 1);
		q += 6;
	} else if (!loose || q != end) {
		return -EINVAL;
	}
	if (q != end)
		return -EINVAL;
done:
	*secs = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec - off;
	*nsec = ns;
	return 0;
}

/* Time in CLOCK_REALTIME ns as RFC 3339 UTC with microseconds. */
void json_time(struct jbuf *b, uint64_t realtime_ns)
{
	char tmp[28];

	/* digits and punctuation only: nothing to escape */
	json_format_time(realtime_ns, tmp, sizeof(tmp));
	json_str_plain(b, tmp, sizeof(tmp) - 1);
}

/* Key plus string value. */
void json_kv_str(struct jbuf *b, const char *key, const char *val)
{
	json_key(b, key);
	json_str(b, val);
}

/* Key plus unsigned integer value. */
void json_kv_u64(struct jbuf *b, const char *key, uint64_t val)
{
	json_key(b, key);
	json_u64(b, val);
}

/* Key plus signed integer value. */
void json_kv_i64(struct jbuf *b, const char *key, int64_t val)
{
	json_key(b, key);
	json_i64(b, val);
}

/* Key plus float value. */
void json_kv_double(struct jbuf *b, const char *key, double val)
{
	json_key(b, key);
	json_double(b, val);
}

/* Key plus boolean value. */
void json_kv_bool(struct jbuf *b, const char *key, bool val)
{
	json_key(b, key);
	json_bool(b, val);
}
