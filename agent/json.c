// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * json.c - a small JSON writer into a growable buffer.
 *
 * Once an allocation fails (or the nesting is misused) b->oom is set and
 * every later call is a no-op, so callers check b->oom once per record.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <errno.h>

#include "json.h"

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
	p = realloc(b->buf, cap);
	if (!p)
		goto fail;
	b->buf = p;
	b->cap = cap;
	return 0;
fail:
	b->oom = true;
	return -1;
}

/* Append n raw bytes. */
static void put(struct jbuf *b, const char *s, size_t n)
{
	if (grow(b, n))
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

/* Release the buffer's memory; accepts a zeroed struct. */
void jbuf_free(struct jbuf *b)
{
	if (!b)
		return;
	free(b->buf);
	memset(b, 0, sizeof(*b));
}

/* Empty the buffer, keep its memory. */
void jbuf_reset(struct jbuf *b)
{
	char *buf = b->buf;
	size_t cap = b->cap;

	memset(b, 0, sizeof(*b));
	b->buf = buf;
	b->cap = cap;
	if (buf)
		buf[0] = '\0';
}

/* NUL-terminated contents ("" when empty). */
const char *jbuf_str(struct jbuf *b)
{
	return b->buf ? b->buf : "";
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
	unsigned char c = s[0];
	unsigned char lo = 0x80, hi = 0xbf;
	size_t len, i;

	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		if (c == 0xe0)
			lo = 0xa0;	/* overlong */
		else if (c == 0xed)
			hi = 0x9f;	/* UTF-16 surrogates */
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		if (c == 0xf0)
			lo = 0x90;	/* overlong */
		else if (c == 0xf4)
			hi = 0x8f;	/* above U+10FFFF */
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
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

/* Write v in decimal, ending just before end; returns the first digit. */
static char *fmt_u64(uint64_t v, char *end)
{
	char *p = end;

	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return p;
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
	char *s = fmt_u64(v, tmp + sizeof(tmp));

	scalar(b, s, (size_t)(tmp + sizeof(tmp) - s));
}

/* Signed integer value. */
void json_i64(struct jbuf *b, int64_t v)
{
	char tmp[24];
	uint64_t mag = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
	char *p = fmt_u64(mag, tmp + sizeof(tmp));

	if (v < 0)
		*--p = '-';
	scalar(b, p, (size_t)(tmp + sizeof(tmp) - p));
}

/* Float with up to 6 decimals, no exponent; NaN/Inf written as null. */
void json_double(struct jbuf *b, double v)
{
	char tmp[400];	/* %.6f of DBL_MAX is 316 characters */
	int n;

	if (!isfinite(v)) {
		json_null(b);
		return;
	}
	if (fabs(v) < 1e12) {
		/* the common case (seconds, ratios) without printf */
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
		p = fmt_u64(micros / 1000000, p);
		if (v < 0 && micros)
			*--p = '-';
		scalar(b, p, (size_t)(end - p));
		return;
	}
	n = snprintf(tmp, sizeof(tmp), "%.6f", v);
	if (n <= 0 || (size_t)n >= sizeof(tmp)) {
		json_null(b);
		return;
	}
	/* "%.6f" always has a '.', so trimming stops at it */
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

/* Format realtime ns as "YYYY-MM-DDThh:mm:ss.uuuuuuZ" into out (>= 28). */
void json_format_time(uint64_t realtime_ns, char *out, size_t outlen)
{
	time_t secs = (time_t)(realtime_ns / 1000000000ULL);
	unsigned int usec = (unsigned int)(realtime_ns % 1000000000ULL / 1000);
	struct tm tm;

	if (!out || !outlen)
		return;
	if (!gmtime_r(&secs, &tm)) {
		out[0] = '\0';
		return;
	}
	if (outlen < 28 || tm.tm_year + 1900 > 9999 || tm.tm_year + 1900 < 0) {
		snprintf(out, outlen, "%04d-%02d-%02dT%02d:%02d:%02d.%06uZ",
			 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
			 tm.tm_hour, tm.tm_min, tm.tm_sec, usec);
		return;
	}
	/* fixed-width digits by hand: this runs for every record */
	put_digits(out, (unsigned)tm.tm_year + 1900, 4);
	out[4] = '-';
	put_digits(out + 5, (unsigned)tm.tm_mon + 1, 2);
	out[7] = '-';
	put_digits(out + 8, (unsigned)tm.tm_mday, 2);
	out[10] = 'T';
	put_digits(out + 11, (unsigned)tm.tm_hour, 2);
	out[13] = ':';
	put_digits(out + 14, (unsigned)tm.tm_min, 2);
	out[16] = ':';
	put_digits(out + 17, (unsigned)tm.tm_sec, 2);
	out[19] = '.';
	put_digits(out + 20, usec, 6);
	out[26] = 'Z';
	out[27] = '\0';
}

/* Time in CLOCK_REALTIME ns as RFC 3339 UTC with microseconds. */
void json_time(struct jbuf *b, uint64_t realtime_ns)
{
	char tmp[64];

	json_format_time(realtime_ns, tmp, sizeof(tmp));
	json_str(b, tmp);
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
