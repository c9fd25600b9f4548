// SPDX-License-Identifier: GPL-2.0-or-later
/* test_json.c - unit tests for the JSON writer (agent/lib/json.c). */
#include <math.h>
#include <stdio.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "json.h"
#include "util.h"

#include "json_check.h"

/* Code points to UTF-8 at every length boundary. */
static void test_utf8_put(void **state)
{
	static const struct { uint32_t cp; const char *want; } v[] = {
		{ 0x24, "\x24" }, { 0x7f, "\x7f" }, { 0x80, "\xc2\x80" },
		{ 0x7ff, "\xdf\xbf" }, { 0x800, "\xe0\xa0\x80" },
		{ 0x20ac, "\xe2\x82\xac" }, { 0xffff, "\xef\xbf\xbf" },
		{ 0x10000, "\xf0\x90\x80\x80" },
		{ 0x1f600, "\xf0\x9f\x98\x80" },
		{ 0x10ffff, "\xf4\x8f\xbf\xbf" },
	};
	char o[4];

	(void)state;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		size_t n = json_utf8_put(o, v[i].cp);

		assert_int_equal(n, strlen(v[i].want));
		assert_memory_equal(o, v[i].want, n);
		/* and the validator's reading agrees */
		assert_int_equal(json_utf8_len((const unsigned char *)o, n),
				 n > 1 ? n : 0);
	}
}

/* The validator itself must reject what it should. */
static void test_validator(void **state)
{
	(void)state;
	assert_true(json_valid("{\"a\":[1,-2.5,1e3,true,false,null,\"x\"]}"));
	assert_false(json_valid("{\"a\":1,}"));
	assert_false(json_valid("[1 2]"));
	assert_false(json_valid("\"\x01\""));
	assert_false(json_valid("\"\xff\""));
	assert_false(json_valid("\"\xed\xa0\x80\""));
	assert_false(json_valid("01"));
	assert_false(json_valid("1."));
	assert_false(json_valid("{\"a\"}"));
	assert_false(json_valid(""));
}

/* Write s as one string value and return the output (static buffer). */
static const char *enc(const char *s, size_t len)
{
	static char out[1024];
	struct jbuf b;

	jbuf_init(&b);
	json_strn(&b, s, len);
	assert_false(b.oom);
	assert_true(json_valid(jbuf_str(&b)));
	snprintf(out, sizeof(out), "%s", jbuf_str(&b));
	jbuf_free(&b);
	return out;
}

#define ENC(lit) enc(lit, sizeof(lit) - 1)

/* An empty buffer reads as "" and free/reset accept it. */
static void test_empty(void **state)
{
	struct jbuf b;

	(void)state;
	jbuf_init(&b);
	assert_string_equal(jbuf_str(&b), "");
	jbuf_reset(&b);
	assert_string_equal(jbuf_str(&b), "");
	jbuf_free(&b);
	jbuf_free(&b);
	assert_null(b.buf);
}

/* Nested objects and arrays get commas in the right places only. */
static void test_nesting_commas(void **state)
{
	struct jbuf b;

	(void)state;
	jbuf_init(&b);
	json_obj_open(&b);
	json_kv_str(&b, "type", "process");
	json_kv_u64(&b, "schema", 1);
	json_key(&b, "argv");
	json_arr_open(&b);
	json_str(&b, "ls");
	json_str(&b, "-l");
	json_arr_close(&b);
	json_key(&b, "empty_obj");
	json_obj_open(&b);
	json_obj_close(&b);
	json_key(&b, "empty_arr");
	json_arr_open(&b);
	json_arr_close(&b);
	json_key(&b, "job");
	json_obj_open(&b);
	json_kv_str(&b, "id", "123");
	json_kv_str(&b, "step", NULL);
	json_key(&b, "deep");
	json_arr_open(&b);
	json_arr_open(&b);
	json_arr_close(&b);
	json_arr_open(&b);
	json_i64(&b, -1);
	json_null(&b);
	json_arr_close(&b);
	json_obj_open(&b);
	json_obj_close(&b);
	json_arr_close(&b);
	json_obj_close(&b);
	json_kv_bool(&b, "t", true);
	json_kv_bool(&b, "f", false);
	json_kv_i64(&b, "neg", -42);
	json_kv_double(&b, "d", 0.5);
	json_obj_close(&b);
	assert_false(b.oom);
	assert_int_equal(b.depth, 0);
	assert_string_equal(jbuf_str(&b),
		"{\"type\":\"process\",\"schema\":1,\"argv\":[\"ls\",\"-l\"],"
		"\"empty_obj\":{},\"empty_arr\":[],"
		"\"job\":{\"id\":\"123\",\"step\":null,"
		"\"deep\":[[],[-1,null],{}]},"
		"\"t\":true,\"f\":false,\"neg\":-42,\"d\":0.5}");
	assert_true(json_valid(jbuf_str(&b)));

	/* reset keeps the memory and starts a fresh document */
	char *mem = b.buf;

	jbuf_reset(&b);
	assert_string_equal(jbuf_str(&b), "");
	json_arr_open(&b);
	json_u64(&b, 1);
	json_u64(&b, 2);
	json_arr_close(&b);
	assert_ptr_equal(b.buf, mem);
	assert_string_equal(jbuf_str(&b), "[1,2]");
	jbuf_free(&b);
}

/* JSON_MAX_DEPTH levels work; one more marks the buffer invalid. */
static void test_depth_limit(void **state)
{
	struct jbuf b;
	int i;

	(void)state;
	jbuf_init(&b);
	for (i = 0; i < JSON_MAX_DEPTH; i++)
		json_arr_open(&b);
	for (i = 0; i < JSON_MAX_DEPTH; i++)
		json_arr_close(&b);
	assert_false(b.oom);
	assert_true(json_valid(jbuf_str(&b)));
	jbuf_reset(&b);
	for (i = 0; i < JSON_MAX_DEPTH + 1; i++)
		json_arr_open(&b);
	assert_true(b.oom);
	jbuf_reset(&b);
	assert_false(b.oom);
	json_arr_close(&b);	/* unbalanced close */
	assert_true(b.oom);
	jbuf_free(&b);
}

/* Quotes, backslash and control characters are escaped. */
static void test_escape_ascii(void **state)
{
	(void)state;
	assert_string_equal(ENC("plain text 123 /path"),
			    "\"plain text 123 /path\"");
	assert_string_equal(ENC("a\"b"), "\"a\\\"b\"");
	assert_string_equal(ENC("a\\b"), "\"a\\\\b\"");
	assert_string_equal(ENC("l1\nl2"), "\"l1\\nl2\"");
	assert_string_equal(ENC("\t\r\b\f"), "\"\\t\\r\\b\\f\"");
	assert_string_equal(ENC("\x01"), "\"\\u0001\"");
	assert_string_equal(ENC("\x1f"), "\"\\u001f\"");
	assert_string_equal(ENC("x\x7fy"), "\"x\\u007fy\"");
	assert_string_equal(ENC("\x1b[31m"), "\"\\u001b[31m\"");
	assert_string_equal(ENC(""), "\"\"");
}

/* Embedded NUL through json_strn is kept as \u0000. */
static void test_embedded_nul(void **state)
{
	(void)state;
	assert_string_equal(ENC("a\0b"), "\"a\\u0000b\"");
	assert_string_equal(ENC("\0"), "\"\\u0000\"");
}

/* Each byte of an invalid UTF-8 sequence becomes \u00XX. */
static void test_invalid_utf8(void **state)
{
	(void)state;
	/* lone bytes */
	assert_string_equal(ENC("\xff"), "\"\\u00ff\"");
	assert_string_equal(ENC("a\xfe"), "\"a\\u00fe\"");
	assert_string_equal(ENC("\x80"), "\"\\u0080\"");
	assert_string_equal(ENC("\xbf" "x"), "\"\\u00bfx\"");
	/* truncated multibyte sequences, also at the very end */
	assert_string_equal(ENC("\xc3"), "\"\\u00c3\"");
	assert_string_equal(ENC("\xe2\x82"), "\"\\u00e2\\u0082\"");
	assert_string_equal(ENC("\xe2\x82x"), "\"\\u00e2\\u0082x\"");
	assert_string_equal(ENC("\xf0\x9f\x98"),
			    "\"\\u00f0\\u009f\\u0098\"");
	/* overlong encodings */
	assert_string_equal(ENC("\xc0\xaf"), "\"\\u00c0\\u00af\"");
	assert_string_equal(ENC("\xc1\xbf"), "\"\\u00c1\\u00bf\"");
	assert_string_equal(ENC("\xe0\x80\xaf"),
			    "\"\\u00e0\\u0080\\u00af\"");
	assert_string_equal(ENC("\xf0\x80\x80\xaf"),
			    "\"\\u00f0\\u0080\\u0080\\u00af\"");
	/* UTF-16 surrogates */
	assert_string_equal(ENC("\xed\xa0\x80"),
			    "\"\\u00ed\\u00a0\\u0080\"");
	assert_string_equal(ENC("\xed\xbf\xbf"),
			    "\"\\u00ed\\u00bf\\u00bf\"");
	/* above U+10FFFF and never-valid lead bytes */
	assert_string_equal(ENC("\xf4\x90\x80\x80"),
			    "\"\\u00f4\\u0090\\u0080\\u0080\"");
	assert_string_equal(ENC("\xf5\x80\x80\x80"),
			    "\"\\u00f5\\u0080\\u0080\\u0080\"");
	/* a valid character right after an invalid byte survives */
	assert_string_equal(ENC("\xff\xc3\xa9"), "\"\\u00ff\xc3\xa9\"");
	/* a lead byte followed by a valid character */
	assert_string_equal(ENC("\xe2\xc3\xa9"), "\"\\u00e2\xc3\xa9\"");
}

/* Valid multibyte UTF-8 passes through byte for byte. */
static void test_valid_utf8(void **state)
{
	(void)state;
	assert_string_equal(ENC("caf\xc3\xa9"), "\"caf\xc3\xa9\"");
	assert_string_equal(ENC("\xc2\x80"), "\"\xc2\x80\"");
	assert_string_equal(ENC("\xe2\x82\xac 5"), "\"\xe2\x82\xac 5\"");
	assert_string_equal(ENC("\xe0\xa0\x80"), "\"\xe0\xa0\x80\"");
	assert_string_equal(ENC("\xed\x9f\xbf"), "\"\xed\x9f\xbf\"");
	assert_string_equal(ENC("\xef\xbf\xbf"), "\"\xef\xbf\xbf\"");
	assert_string_equal(ENC("\xf0\x9d\x84\x9e"), "\"\xf0\x9d\x84\x9e\"");
	assert_string_equal(ENC("\xf4\x8f\xbf\xbf"), "\"\xf4\x8f\xbf\xbf\"");
	assert_string_equal(ENC("\xe6\x97\xa5\xe6\x9c\xac"),
			    "\"\xe6\x97\xa5\xe6\x9c\xac\"");
}

/* Keys are escaped like values. */
static void test_key_escape(void **state)
{
	struct jbuf b;

	(void)state;
	jbuf_init(&b);
	json_obj_open(&b);
	json_kv_str(&b, "k\"\n\xff", "v");
	json_obj_close(&b);
	assert_string_equal(jbuf_str(&b), "{\"k\\\"\\n\\u00ff\":\"v\"}");
	assert_true(json_valid(jbuf_str(&b)));
	jbuf_free(&b);
}

/* Integers at their limits. */
static void test_integers(void **state)
{
	struct jbuf b;

	(void)state;
	jbuf_init(&b);
	json_arr_open(&b);
	json_u64(&b, 0);
	json_u64(&b, UINT64_MAX);
	json_i64(&b, -1);
	json_i64(&b, INT64_MIN);
	json_i64(&b, INT64_MAX);
	json_arr_close(&b);
	assert_string_equal(jbuf_str(&b),
		"[0,18446744073709551615,-1,-9223372036854775808,"
		"9223372036854775807]");
	assert_true(json_valid(jbuf_str(&b)));
	jbuf_free(&b);
}

/* One double as written. */
static const char *dbl(double v)
{
	static char out[512];
	struct jbuf b;

	jbuf_init(&b);
	json_double(&b, v);
	assert_true(json_valid(jbuf_str(&b)));
	snprintf(out, sizeof(out), "%s", jbuf_str(&b));
	jbuf_free(&b);
	return out;
}

/* Doubles: up to 6 decimals, trimmed, never an exponent. */
static void test_doubles(void **state)
{
	const char *s;

	(void)state;
	assert_string_equal(dbl(0.5), "0.5");
	assert_string_equal(dbl(0.0), "0");
	assert_string_equal(dbl(-0.0), "0");
	assert_string_equal(dbl(1e-7), "0");
	assert_string_equal(dbl(-1e-7), "0");
	assert_string_equal(dbl(1.5e-6), "0.000002");
	assert_string_equal(dbl(12345.678901), "12345.678901");
	assert_string_equal(dbl(100.0), "100");
	assert_string_equal(dbl(-2.25), "-2.25");
	assert_string_equal(dbl(1e15), "1000000000000000");
	assert_string_equal(dbl(NAN), "null");
	assert_string_equal(dbl(INFINITY), "null");
	assert_string_equal(dbl(-INFINITY), "null");
	s = dbl(1.7976931348623157e308);
	assert_null(strchr(s, 'e'));
	assert_int_equal(strlen(s), 309);
}

/* Times are RFC 3339 UTC with microseconds, truncated not rounded. */
static void test_time(void **state)
{
	char out[40];
	struct jbuf b;

	(void)state;
	json_format_time(0, out, sizeof(out));
	assert_string_equal(out, "1970-01-01T00:00:00.000000Z");
	json_format_time(1000000000ULL * 1795341600ULL + 123456789ULL,
			 out, sizeof(out));
	assert_string_equal(out, "2026-11-22T10:00:00.123456Z");
	json_format_time(951782400ULL * 1000000000ULL + 999999999ULL,
			 out, sizeof(out));
	assert_string_equal(out, "2000-02-29T00:00:00.999999Z");
	json_format_time(1234567890ULL * 1000000000ULL + 1000ULL,
			 out, sizeof(out));
	assert_string_equal(out, "2009-02-13T23:31:30.000001Z");
	json_format_time(UINT64_MAX, out, sizeof(out));
	assert_string_equal(out, "2554-07-21T23:34:33.709551Z");
	/* exactly 28 bytes is enough */
	json_format_time(0, out, 28);
	assert_string_equal(out, "1970-01-01T00:00:00.000000Z");
	/* a short buffer is truncated but terminated */
	json_format_time(0, out, 5);
	assert_string_equal(out, "1970");

	jbuf_init(&b);
	json_obj_open(&b);
	json_key(&b, "start_time");
	json_time(&b, 1795341600ULL * 1000000000ULL + 123456789ULL);
	json_obj_close(&b);
	assert_string_equal(jbuf_str(&b),
		"{\"start_time\":\"2026-11-22T10:00:00.123456Z\"}");
	jbuf_free(&b);
}

/* Long strings make the buffer grow many times and stay exact. */
static void test_growth(void **state)
{
	const size_t n = 200000;
	char *in = malloc(n);
	struct jbuf b;
	const char *out;
	size_t i;

	(void)state;
	assert_non_null(in);
	for (i = 0; i < n; i++)
		in[i] = (i % 2) ? 'a' + (char)(i % 26) : '\n';
	jbuf_init(&b);
	json_arr_open(&b);
	json_strn(&b, in, n);
	json_strn(&b, in, n);
	json_arr_close(&b);
	assert_false(b.oom);
	out = jbuf_str(&b);
	/* each '\n' becomes two bytes: 1.5 * n per string */
	assert_int_equal(strlen(out), 2 * (n / 2 * 3 + 2) + 3);
	assert_int_equal(b.len, strlen(out));
	assert_true(b.cap > b.len);
	assert_true(json_valid(out));
	assert_memory_equal(out, "[\"\\nb\\nd", 8);
	free(in);
	jbuf_free(&b);
}

/* A key without a value marks the buffer invalid. */
static void test_key_misuse(void **state)
{
	struct jbuf b;

	(void)state;
	jbuf_init(&b);
	json_obj_open(&b);
	json_key(&b, "a");
	json_key(&b, "b");	/* key without a value */
	assert_true(b.oom);
	jbuf_reset(&b);
	json_obj_open(&b);
	json_key(&b, "a");
	json_obj_close(&b);	/* dangling key */
	assert_true(b.oom);
	jbuf_free(&b);
}

/* Run every test in this file. */
/* The printf-free double path agrees with the value to 6 decimals. */
static void test_double_fast_path(void **state)
{
	static const struct {
		double v;
		const char *text;
	} edge[] = {
		{ 2147483647.5, "2147483647.5" },
		{ 2147483648.25, "2147483648.25" },
		{ -2147483648.75, "-2147483648.75" },
		{ 4407370955.1, "4407370955.1" },
		{ 999999999999.999, "999999999999.999023" },
	};
	uint64_t x = 88172645463325252ull;
	char text[64];
	struct jbuf b;

	(void)state;
	jbuf_init(&b);
	for (int i = 0; i < 20000; i++) {
		double v, back;
		char *end;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		/* magnitudes from 1e-7 to 1e11, both signs */
		v = (double)(x % 1000000007) / 1000000007.0 *
		    pow(10.0, (double)(int)(x % 19) - 7);
		if (x & 1)
			v = -v;
		jbuf_reset(&b);
		json_double(&b, v);
		back = strtod(jbuf_str(&b), &end);
		assert_int_equal(*end, '\0');
		assert_true(fabs(back - v) <= 5e-7 + fabs(v) * 1e-15);
		/* what is read back is written the same */
		snprintf(text, sizeof(text), "%s", jbuf_str(&b));
		jbuf_reset(&b);
		json_double(&b, back);
		assert_string_equal(jbuf_str(&b), text);
	}
	/* around 2^31, where printf takes over, and past it */
	for (size_t i = 0; i < sizeof(edge) / sizeof(edge[0]); i++) {
		jbuf_reset(&b);
		json_double(&b, edge[i].v);
		assert_string_equal(jbuf_str(&b), edge[i].text);
		jbuf_reset(&b);
		json_double(&b, strtod(edge[i].text, NULL));
		assert_string_equal(jbuf_str(&b), edge[i].text);
	}
	jbuf_free(&b);
}

/*
 * json_double_exact(): every digit (what json_double's six decimals lose),
 * the shortest text that reads back as the same double, valid JSON.
 */
static void test_double_exact(void **state)
{
	static const struct { double v; const char *text; } cases[] = {
		{ 0.0000277, "2.77e-05" }, { 0.1, "0.1" }, { 2.1, "2.1" },
		{ 0.1 + 0.2, "0.30000000000000004" }, { 5, "5" },
		{ -1234567.125, "-1234567.125" }, { 1e300, "1e+300" },
		{ NAN, "null" }, { INFINITY, "null" },
	};
	uint64_t x = 88172645463325252ull;
	char buf[JSON_DOUBLE_MAX];
	struct jbuf b;

	(void)state;
	jbuf_init(&b);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		jbuf_reset(&b);
		json_arr_open(&b);
		json_double_exact(&b, cases[i].v);
		json_arr_close(&b);
		snprintf(buf, sizeof(buf), "[%s]", cases[i].text);
		assert_string_equal(jbuf_str(&b), buf);
		assert_true(json_valid(jbuf_str(&b)));
	}
	for (int i = 0; i < 20000; i++) {
		double v;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memcpy(&v, &x, sizeof(v));
		if (!isfinite(v))
			continue;
		json_format_double(v, buf);
		assert_true(strtod(buf, NULL) == v);
		assert_true(json_valid(buf));
	}
	jbuf_free(&b);
}

/* The raw appends write what the escaping calls would, bytes for bytes. */
static void test_plain_appends(void **state)
{
	static const char text[] =
		"{\"type\":\"process\", \"argv\":[\"a\\\"b\",\"caf\xc3\xa9\","
		"\"\\\\x\"],\n\t\"n\":\r\n 1, \"e\":\"\xe2\x82\xac\xf0\x9f\x98\x80\"}";
	struct jbuf a, b;
	char *p;

	(void)state;
	jbuf_init(&a);
	jbuf_init(&b);
	/* every length, so the eight-byte loop meets every tail */
	for (size_t n = 0; n < sizeof(text); n++) {
		if (((unsigned char)text[n] & 0xc0) == 0x80)
			continue;	/* not at a character's start */
		jbuf_reset(&a);
		jbuf_reset(&b);
		json_arr_open(&a);
		json_arr_open(&b);
		json_strn(&a, "x", 1);
		json_str_plain(&b, "x", 1);
		json_obj_open(&a);
		json_obj_open(&b);
		json_key(&a, "json");
		json_key_plain(&b, "json", 4);
		json_strn(&a, text, n);
		json_str_text(&b, text, n);
		json_key(&a, "k_2");
		json_key_plain(&b, "k_2", 3);
		json_strn(&a, "caf\xc3\xa9", 5);
		json_str_plain(&b, "caf\xc3\xa9", 5);
		json_obj_close(&a);
		json_obj_close(&b);
		json_arr_close(&a);
		json_arr_close(&b);
		assert_false(b.oom);
		assert_string_equal(jbuf_str(&b), jbuf_str(&a));
		assert_int_equal(b.len, a.len);
		assert_true(json_valid(jbuf_str(&b)));
	}
	/* a plain key where a value is due is misuse, as with json_key() */
	jbuf_reset(&b);
	json_obj_open(&b);
	json_key_plain(&b, "a", 1);
	json_key_plain(&b, "b", 1);
	assert_true(b.oom);

	/* rewind: back to a length at the top level */
	jbuf_reset(&b);
	json_obj_open(&b);
	json_kv_u64(&b, "a", 1);
	json_obj_close(&b);
	assert_true(jbuf_at_top(&b));
	json_obj_open(&b);
	assert_false(jbuf_at_top(&b));
	json_key(&b, "half");
	jbuf_rewind(&b, 7);
	assert_true(jbuf_at_top(&b));
	assert_string_equal(jbuf_str(&b), "{\"a\":1}");
	json_obj_open(&b);
	json_obj_close(&b);
	assert_string_equal(jbuf_str(&b), "{\"a\":1}{}");

	/* room and added: a byte buffer written in place */
	jbuf_reset(&b);
	p = jbuf_room(&b, 10000);
	assert_non_null(p);
	memset(p, 'z', 10000);
	jbuf_added(&b, 9999);
	assert_int_equal(b.len, 9999);
	assert_int_equal(strlen(jbuf_str(&b)), 9999);
	jbuf_free(&a);
	jbuf_free(&b);
}

/*
 * util_printable: controls, C1 in UTF-8 and bytes that are not part of
 * valid UTF-8 (a store's column holds a path's own bytes) become '?';
 * valid UTF-8 stays.
 */
static void test_printable(void **state)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "plain", "plain" },
		{ "a\x1b[2Jb\x7f", "a?[2Jb?" },
		{ "\xc2\x9b" "2J", "?2J" },		/* U+009B CSI */
		{ "\x9b" "2J", "?2J" },		/* 8-bit CSI alone */
		{ "/tmp/a\xff" "b\xe9", "/tmp/a?b?" },	/* not UTF-8 */
		{ "\xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9f\x99\x82",
		  "\xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9f\x99\x82" },
		{ "\xe2\x82", "??" },			/* cut short */
		{ "\xed\xa0\x80", "???" },		/* a surrogate */
	};
	char buf[64];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(buf, sizeof(buf), "%s", cases[i].in);
		assert_string_equal(util_printable(buf), cases[i].out);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_double_fast_path),
		cmocka_unit_test(test_validator),
		cmocka_unit_test(test_utf8_put),
		cmocka_unit_test(test_printable),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_nesting_commas),
		cmocka_unit_test(test_depth_limit),
		cmocka_unit_test(test_escape_ascii),
		cmocka_unit_test(test_embedded_nul),
		cmocka_unit_test(test_invalid_utf8),
		cmocka_unit_test(test_valid_utf8),
		cmocka_unit_test(test_key_escape),
		cmocka_unit_test(test_integers),
		cmocka_unit_test(test_doubles),
		cmocka_unit_test(test_double_exact),
		cmocka_unit_test(test_time),
		cmocka_unit_test(test_growth),
		cmocka_unit_test(test_key_misuse),
		cmocka_unit_test(test_plain_appends),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
