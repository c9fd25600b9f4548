/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * json.h - a small JSON writer into a growable buffer.
 *
 * Strings are escaped per RFC 8259; bytes that are not valid UTF-8 are
 * written as \u00XX of the byte (so argv with odd bytes stays valid JSON
 * and round-trips the byte value).  Commas between members/elements are
 * inserted automatically.  Also the one RFC 3339 time codec.  The reader
 * is json_read.h.
 */
#ifndef JOBTRACE_JSON_H
#define JOBTRACE_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JSON_MAX_DEPTH 16

/*
 * buf, len and oom may be read; the rest is the writer's, and only the
 * functions below change any of it.
 */
struct jbuf {
	char *buf;
	size_t len;
	size_t cap;
	int depth;
	bool need_comma[JSON_MAX_DEPTH];
	bool after_key;
	bool oom;		/* allocation failed: contents invalid */
	bool wipe;		/* jbuf_init_wipe(): contents zeroed when let go */
};

/* Initialise an empty buffer (no allocation yet). */
void jbuf_init(struct jbuf *b);
/* The same, for contents that may be secret (an answer naming a
 * container's environment, a token): bytes are zeroed when reset,
 * rewound or freed, and a buffer that grows is copied and the old one
 * zeroed, so no stray copy is left on the heap. */
void jbuf_init_wipe(struct jbuf *b);
/* Release the buffer's memory; accepts a zeroed struct. */
void jbuf_free(struct jbuf *b);
/* Empty the buffer, keep its memory. */
void jbuf_reset(struct jbuf *b);
/* Append n raw bytes (a byte buffer); 0 or -ENOMEM. */
int jbuf_put(struct jbuf *b, const void *p, size_t n);
/* NUL-terminated contents ("" when empty). */
const char *jbuf_str(struct jbuf *b);
/*
 * Room for n more bytes at the end of b: a pointer to write them at, or
 * NULL (b->oom).  jbuf_added() then counts the ones written (<= n).
 */
char *jbuf_room(struct jbuf *b, size_t n);
void jbuf_added(struct jbuf *b, size_t n);
/*
 * Cut b back to its first len bytes with no container open: undoes what
 * was written since b held len bytes at the top level.
 */
void jbuf_rewind(struct jbuf *b, size_t len);
/* Whether b is at the top level: no container open, no key waiting. */
bool jbuf_at_top(const struct jbuf *b);

void json_obj_open(struct jbuf *b);
void json_obj_close(struct jbuf *b);
void json_arr_open(struct jbuf *b);
void json_arr_close(struct jbuf *b);
/* Write an object key; the next value call writes its value. */
void json_key(struct jbuf *b, const char *key);
/* String value from len bytes (may contain NUL and invalid UTF-8). */
void json_strn(struct jbuf *b, const char *s, size_t len);
/* String value from a C string; NULL writes null. */
void json_str(struct jbuf *b, const char *s);
void json_u64(struct jbuf *b, uint64_t v);
void json_i64(struct jbuf *b, int64_t v);
/* Float with up to 6 decimals, no exponent; NaN/Inf written as null. */
void json_double(struct jbuf *b, double v);
/* Float with up to 12 decimals, no exponent: amounts of money, whose
 * micro-units would not add up over many small jobs. */
void json_double12(struct jbuf *b, double v);
void json_bool(struct jbuf *b, bool v);
void json_null(struct jbuf *b);
/*
 * Float with every significant digit (money: 0.0000277 USD stays that),
 * exponent allowed: the shortest of %.15g, %.16g, %.17g that reads back
 * as the same double.  NaN/Inf written as null.
 */
void json_double_exact(struct jbuf *b, double v);
#define JSON_DOUBLE_MAX 32
/* The text json_double_exact() writes, into out. */
void json_format_double(double v, char out[JSON_DOUBLE_MAX]);
/* Time in CLOCK_REALTIME ns as RFC 3339 UTC with microseconds. */
void json_time(struct jbuf *b, uint64_t realtime_ns);

/*
 * For a copier of checked JSON (chschema.c), which knows its bytes need no
 * escaping and writes many: the same output as the calls above, without
 * their per-byte escaper.
 *
 * A key that needs no escaping (letters, digits, '_'), as json_key().
 */
void json_key_plain(struct jbuf *b, const char *key, size_t n);
/*
 * A string value whose bytes need no escaping, as json_strn() writes it:
 * UTF-8 with no '"', '\\', control character or DEL (a plain jr_str).
 */
void json_str_plain(struct jbuf *b, const char *s, size_t n);
/*
 * A string value holding a JSON text that json_read.h accepted (UTF-8,
 * control characters only as white space between tokens), escaped eight
 * bytes at a time.  Any other text may come out as invalid JSON.  Unlike
 * json_strn() it leaves DEL as it is.
 */
void json_str_text(struct jbuf *b, const char *text, size_t n);
/* A value given as its JSON text, which json_read.h accepted: copied. */
void json_raw(struct jbuf *b, const char *text, size_t n);

/* Write code point cp (< 0x110000) as UTF-8 at o (room for 4 bytes);
 * returns the length. */
size_t json_utf8_put(char *o, uint32_t cp);
/* Length of the valid UTF-8 sequence at s (RFC 3629; n > 0 bytes
 * available), 0 if it is not one. */
size_t json_utf8_len(const unsigned char *s, size_t n);

/*
 * Format realtime ns as "YYYY-MM-DDThh:mm:ss.uuuuuuZ" (UTC, microseconds
 * cut, not rounded) into out (28 bytes; a shorter out gets the start).
 */
void json_format_time(uint64_t realtime_ns, char *out, size_t outlen);

/* json_parse_time(): also a date alone, no seconds, no zone (UTC) */
#define JSON_TIME_LOOSE 0x1
/*
 * Parse the RFC 3339 time s[0..n): "YYYY-MM-DDThh:mm:ss" ('T' also 't' or
 * ' '), a fraction of any length (kept to the nanosecond), then 'Z' ('z')
 * or +hh:mm or -hh:mm; years 0000-9999, no leap second.  With
 * JSON_TIME_LOOSE also what a person types: "YYYY-MM-DD", "... hh:mm",
 * with the zone left out for UTC.  Sets *secs (since the epoch, negative
 * before 1970) and *nsec; 0 or -EINVAL.
 */
int json_parse_time(const char *s, size_t n, unsigned flags, int64_t *secs,
		    uint32_t *nsec);

/* Convenience: key + value. */
void json_kv_str(struct jbuf *b, const char *key, const char *val);
void json_kv_u64(struct jbuf *b, const char *key, uint64_t val);
void json_kv_i64(struct jbuf *b, const char *key, int64_t val);
void json_kv_double(struct jbuf *b, const char *key, double val);
void json_kv_bool(struct jbuf *b, const char *key, bool val);

#endif
