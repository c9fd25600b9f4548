// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_json_read.c - unit tests for the JSON reader (agent/lib/json_read.c)
 * and the RFC 3339 time codec (agent/lib/json.c).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "json.h"
#include "json_read.h"

#include "json_check.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Read a whole text of n bytes (at an exact-size copy): 0 or the error. */
static int walk_n(const char *text, size_t n, struct jr *out)
{
	char *copy = malloc(n ? n : 1);
	struct jr r;
	int err;

	assert_non_null(copy);
	memcpy(copy, text, n);
	jr_init(&r, copy, n);
	err = jr_skip(&r);
	if (!err)
		err = jr_end(&r);
	free(copy);
	if (out)
		*out = r;
	return err;
}

/* walk_n() of a C string. */
static int walk(const char *text)
{
	return walk_n(text, strlen(text), NULL);
}

/* The error message and offset a text is refused with. */
static void refused_at(const char *text, const char *why, size_t off)
{
	struct jr r;

	if (walk_n(text, strlen(text), &r) != -EINVAL)
		fail_msg("accepted: %s", text);
	if (strcmp(r.err, why) || r.err_off != off)
		fail_msg("%s: \"%s\" at %zu, want \"%s\" at %zu", text, r.err,
			 r.err_off, why, off);
}

/* Valid texts are read to their end; the validator agrees. */
static void test_valid(void **state)
{
	static const char *const good[] = {
		"{}", "[]", "0", "-0", "1", "-1", "0.5", "-0.5e-3", "1E+2",
		"1e2", "123456789012345678901234567890", "true", "false",
		"null", "\"\"", "\"a\"", " \t\r\n{ \"a\" : [ 1 , 2 ] } \n",
		"{\"a\":{\"b\":{\"c\":[[],[{}],\"x\"]}},\"a\":null}",
		"\"\\\"\\\\\\/\\b\\f\\n\\r\\t\\u0000\\u00e9\\uD83D\\uDE00\"",
		"\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \x7f\"",
		"[1,-2,3.25,true,false,null,\"s\",{\"k\":[]}]",
	};

	(void)state;
	for (size_t i = 0; i < N(good); i++) {
		if (walk(good[i]))
			fail_msg("refused: %s", good[i]);
		assert_true(json_valid(good[i]));
	}
}

/* Invalid texts are refused; the validator agrees (but on surrogates). */
static void test_invalid(void **state)
{
	static const char *const bad[] = {
		"", " ", "{", "}", "[", "]", "{]", "[}", "[1,]", "{\"a\":1,}",
		"{,}", "[,1]", "{\"a\"}", "{\"a\":}", "{\"a\" 1}", "{a:1}",
		"{1:1}", "[1 2]", "{\"a\":1 \"b\":2}", "01", "-", "+1", "1.",
		".5", "1e", "1e+", "--1", "0x10", "1.e3", "Infinity", "NaN",
		"tru", "truex", "nul", "nulll", "falsy", "True", "'a'",
		"\"a", "\"\\\"", "\"\\x\"", "\"\\u12\"", "\"\\u12G4\"",
		"\"\\U0041\"", "\"a\tb\"", "\"a\nb\"", "\"\x01\"",
		"\"\x80\"", "\"\xc3\"", "\"\xc0\x80\"", "\"\xc1\xbf\"",
		"\"\xe0\x80\x80\"", "\"\xed\xa0\x80\"", "\"\xf4\x90\x80\x80\"",
		"\"\xf5\x80\x80\x80\"", "\"\xff\"", "\"\xf0\x9f\x98\"",
		"1 2", "{} {}", "[] x", "{}}", "/* */ 1", "\xef\xbb\xbf{}",
	};

	(void)state;
	for (size_t i = 0; i < N(bad); i++) {
		if (walk(bad[i]) != -EINVAL)
			fail_msg("accepted: %s", bad[i]);
		assert_false(json_valid(bad[i]));
	}
	/* NUL is no white space, and inside a string a control character */
	assert_int_equal(walk_n("{}\0", 3, NULL), -EINVAL);
	assert_int_equal(walk_n("\"a\0b\"", 5, NULL), -EINVAL);
	/* the length bounds the text: what follows is not read */
	assert_int_equal(walk_n("truex", 4, NULL), 0);
	assert_int_equal(walk_n("[1]]", 3, NULL), 0);
	assert_int_equal(walk_n("\"ab\"", 3, NULL), -EINVAL);
}

/* Lone and misordered surrogates are refused (RFC 8259 allows them). */
static void test_surrogates(void **state)
{
	static const char *const bad[] = {
		"\"\\ud800\"", "\"\\udbff\"", "\"\\udc00\"", "\"\\udfff\"",
		"\"\\ud83d\\u0041\"", "\"\\ud83d\\ud83d\"", "\"\\ude00\\ud83d\"",
		"\"\\ud83dx\"", "\"\\ud83d\\n\"",
		/* and RFC 8259 refuses these too */
		"\"\\ud83d\\\"", "\"\\ud83d\\ude0\"",
	};
	char out[8];
	struct jr_str s;
	struct jr r;

	(void)state;
	for (size_t i = 0; i < N(bad); i++) {
		jr_init(&r, bad[i], strlen(bad[i]));
		assert_int_equal(jr_str(&r, &s), -EINVAL);
		assert_string_equal(r.err, "invalid escape or lone surrogate");
		assert_int_equal(r.err_off, 1);
		assert_true(json_valid(bad[i]) == (i < N(bad) - 2));
	}
	/* the highest pair, U+10FFFF */
	jr_init(&r, "\"\\udbff\\udfff\"", 14);
	assert_int_equal(jr_str(&r, &s), 0);
	assert_int_equal(jr_str_decode(&s, out, 0), 4);
	assert_memory_equal(out, "\xf4\x8f\xbf\xbf", 4);
}

/* Escapes decode to UTF-8; JR_BYTES gives json.h's odd bytes back. */
static void test_escapes(void **state)
{
	static const char text[] =
		"\"a\\\"\\\\\\/\\b\\f\\n\\r\\t\\u0000\\u0041\\u00e9\\u00ff"
		"\\u20ac\\ud83d\\ude00z\"";
	static const char utf8[] = "a\"\\/\b\f\n\r\t\0A\xc3\xa9\xc3\xbf"
				   "\xe2\x82\xac\xf0\x9f\x98\x80z";
	static const char bytes[] = "a\"\\/\b\f\n\r\t\0A\xe9\xff"
				    "\xe2\x82\xac\xf0\x9f\x98\x80z";
	char out[sizeof(text)], small[4];
	const char *p;
	struct jr_str s;
	struct jbuf b;
	struct jr r;
	size_t n;

	(void)state;
	jr_init(&r, text, sizeof(text) - 1);
	assert_int_equal(jr_str(&r, &s), 0);
	assert_int_equal(jr_end(&r), 0);
	assert_true(s.esc);
	assert_false(s.plain);
	assert_int_equal(s.len, sizeof(text) - 3);
	n = jr_str_decode(&s, out, 0);
	assert_int_equal(n, sizeof(utf8) - 1);
	assert_memory_equal(out, utf8, n);
	n = jr_str_decode(&s, out, JR_BYTES);
	assert_int_equal(n, sizeof(bytes) - 1);
	assert_memory_equal(out, bytes, n);
	assert_true(jr_str_eq(&s, utf8, sizeof(utf8) - 1));
	assert_false(jr_str_eq(&s, utf8, sizeof(utf8) - 2));
	assert_false(jr_str_eq(&s, bytes, sizeof(bytes) - 1));

	/* into a buffer: only when the text as written fits */
	p = jr_str_get(&s, out, s.len, &n);
	assert_ptr_equal(p, out);
	assert_int_equal(n, sizeof(utf8) - 1);
	assert_null(jr_str_get(&s, small, sizeof(small), &n));
	jbuf_init(&b);
	assert_int_equal(jbuf_put(&b, "old", 3), 0);
	p = jr_str_jbuf(&s, &b, JR_BYTES, &n);
	assert_non_null(p);
	assert_int_equal(n, sizeof(bytes) - 1);
	assert_int_equal(b.len, n);
	assert_memory_equal(p, bytes, n);

	/* no escapes: the text itself, whatever the buffer */
	jr_init(&r, "\"plain\x7f\"", 8);
	assert_int_equal(jr_str(&r, &s), 0);
	assert_false(s.esc);
	assert_false(s.plain);		/* json_strn() would write \u007f */
	assert_ptr_equal(jr_str_get(&s, small, sizeof(small), &n), s.s);
	assert_ptr_equal(jr_str_jbuf(&s, &b, 0, &n), s.s);
	assert_true(jr_str_eq(&s, "plain\x7f", 6));
	jr_init(&r, "\"caf\xc3\xa9\"", 7);
	assert_int_equal(jr_str(&r, &s), 0);
	assert_true(s.plain);
	/* an escaped name matches its meaning */
	jr_init(&r, "\"\\u0074yp\\u0065\"", 16);
	assert_int_equal(jr_str(&r, &s), 0);
	assert_true(jr_str_eq(&s, "type", 4));
	assert_false(jr_str_eq(&s, "typ", 3));
	assert_false(jr_str_eq(&s, "types", 5));
	jbuf_free(&b);
}

/* Integers at the edges of u64 and i64; -EDOM leaves the value. */
static void test_numbers(void **state)
{
	static const struct {
		const char *text;
		int u, i, f;		/* 0 or -EDOM */
		uint64_t uv;
		int64_t iv;
		double fv;
	} t[] = {
		{ "0", 0, 0, 0, 0, 0, 0 },
		{ "-0", 0, 0, 0, 0, 0, -0.0 },
		{ "18446744073709551615", 0, -EDOM, 0, UINT64_MAX, 0,
		  18446744073709551615.0 },
		{ "18446744073709551616", -EDOM, -EDOM, 0, 0, 0,
		  18446744073709551616.0 },
		{ "9223372036854775807", 0, 0, 0, INT64_MAX, INT64_MAX,
		  9223372036854775807.0 },
		{ "9223372036854775808", 0, -EDOM, 0, 9223372036854775808ull,
		  0, 9223372036854775808.0 },
		{ "-9223372036854775808", -EDOM, 0, 0, 0, INT64_MIN,
		  -9223372036854775808.0 },
		{ "-9223372036854775809", -EDOM, -EDOM, 0, 0, 0,
		  -9223372036854775809.0 },
		{ "-1", -EDOM, 0, 0, 0, -1, -1 },
		{ "1.0", -EDOM, -EDOM, 0, 0, 0, 1 },
		{ "1e3", -EDOM, -EDOM, 0, 0, 0, 1000 },
		{ "312.5", -EDOM, -EDOM, 0, 0, 0, 312.5 },
		{ "0.1", -EDOM, -EDOM, 0, 0, 0, 0.1 },
		{ "123456789012345.6", -EDOM, -EDOM, 0, 0, 0,
		  123456789012345.6 },
		{ "1.7976931348623157e308", -EDOM, -EDOM, 0, 0, 0,
		  1.7976931348623157e308 },
		{ "1e309", -EDOM, -EDOM, -EDOM, 0, 0, 0 },
		{ "-1e309", -EDOM, -EDOM, -EDOM, 0, 0, 0 },
		{ "5e-324", -EDOM, -EDOM, 0, 0, 0, 5e-324 },
	};

	(void)state;
	for (size_t k = 0; k < N(t); k++) {
		size_t n = strlen(t[k].text);
		uint64_t u = 7;
		int64_t i = 7;
		double f = 7;
		struct jr r;

		jr_init(&r, t[k].text, n);
		if (jr_u64(&r, &u) != t[k].u || (!t[k].u && u != t[k].uv))
			fail_msg("jr_u64(%s)", t[k].text);
		if (!t[k].u)
			jr_init(&r, t[k].text, n);
		if (jr_i64(&r, &i) != t[k].i || (!t[k].i && i != t[k].iv))
			fail_msg("jr_i64(%s)", t[k].text);
		if (!t[k].i)
			jr_init(&r, t[k].text, n);
		if (jr_f64(&r, &f) != t[k].f || (!t[k].f && f != t[k].fv))
			fail_msg("jr_f64(%s) = %.17g", t[k].text, f);
		if (t[k].f)
			assert_int_equal(jr_skip(&r), 0);
		assert_int_equal(jr_end(&r), 0);
	}
}

/* Each typed read says -EDOM for another type and leaves it in place. */
static void test_types(void **state)
{
	static const char text[] =
		"[{\"a\":1},[2],\"s\",4,true,false,null]";
	static const enum jr_type want[] = {
		JR_OBJ, JR_ARR, JR_STR, JR_NUM, JR_BOOL, JR_BOOL, JR_NULL,
	};
	struct jr_str s;
	struct jr_num num;
	uint64_t u;
	int64_t i;
	double f;
	bool b;
	struct jr r;
	size_t k = 0;

	(void)state;
	jr_init(&r, text, sizeof(text) - 1);
	assert_int_equal(jr_peek(&r), JR_ARR);
	assert_int_equal(jr_obj_open(&r), -EDOM);
	assert_int_equal(jr_arr_open(&r), 0);
	while (jr_next_elem(&r) > 0) {
		enum jr_type ty = jr_peek(&r);

		assert_int_equal(ty, want[k]);
		if (ty != JR_OBJ)
			assert_int_equal(jr_obj_open(&r), -EDOM);
		if (ty != JR_ARR)
			assert_int_equal(jr_arr_open(&r), -EDOM);
		if (ty != JR_STR)
			assert_int_equal(jr_str(&r, &s), -EDOM);
		if (ty != JR_NUM) {
			assert_int_equal(jr_num(&r, &num), -EDOM);
			assert_int_equal(jr_u64(&r, &u), -EDOM);
			assert_int_equal(jr_i64(&r, &i), -EDOM);
			assert_int_equal(jr_f64(&r, &f), -EDOM);
		}
		if (ty != JR_BOOL)
			assert_int_equal(jr_bool(&r, &b), -EDOM);
		if (ty != JR_NULL)
			assert_int_equal(jr_null(&r), -EDOM);
		assert_int_equal(jr_peek(&r), ty);
		switch (ty) {
		case JR_STR:
			assert_int_equal(jr_str(&r, &s), 0);
			assert_true(jr_str_eq(&s, "s", 1));
			break;
		case JR_NUM:
			assert_int_equal(jr_u64(&r, &u), 0);
			assert_int_equal(u, 4);
			break;
		case JR_BOOL:
			assert_int_equal(jr_bool(&r, &b), 0);
			assert_int_equal(b, k == 4);
			break;
		case JR_NULL:
			assert_int_equal(jr_null(&r), 0);
			break;
		default:
			assert_int_equal(jr_skip(&r), 0);
			break;
		}
		k++;
	}
	assert_int_equal(k, N(want));
	assert_int_equal(jr_end(&r), 0);
	assert_int_equal(r.depth, 0);
}

/* A record's members by name; errors say what and where. */
static void test_walk_record(void **state)
{
	static const char rec[] =
		"{\"type\":\"process\",\"pid\":4242,\"argv\":[\"a\",\"b c\"],"
		"\"job\":{\"id\":\"42\",\"x\":[1,{\"y\":2}]},"
		"\"cpu\":{\"user_s\":312.5},\"end\":null}";
	uint64_t pid = 0;
	double user = 0;
	size_t nargv = 0;
	struct jr_str key, v;
	bool id = false;
	struct jr r;
	int err;

	(void)state;
	jr_init(&r, rec, sizeof(rec) - 1);
	err = jr_obj_open(&r);
	while (!err && (err = jr_next_member(&r, &key)) > 0) {
		if (jr_str_eq(&key, "pid", 3)) {
			err = jr_u64(&r, &pid);
		} else if (jr_str_eq(&key, "argv", 4)) {
			err = jr_arr_open(&r);
			while (!err && (err = jr_next_elem(&r)) > 0) {
				err = jr_str(&r, &v);
				nargv++;
			}
		} else if (jr_str_eq(&key, "job", 3)) {
			err = jr_obj_open(&r);
			if (!err)
				err = jr_find(&r, "id", 2);
			if (!err)
				err = jr_str(&r, &v);
			id = !err && jr_str_eq(&v, "42", 2);
			if (!err)
				err = jr_close(&r);	/* "x" and its '}' */
		} else if (jr_str_eq(&key, "cpu", 3)) {
			err = jr_obj_open(&r);
			if (!err)
				err = jr_find(&r, "user_s", 6);
			if (!err)
				err = jr_f64(&r, &user);
			if (!err)
				err = jr_close(&r);
		} else {
			err = jr_skip(&r);
		}
	}
	assert_int_equal(err, 0);
	assert_int_equal(jr_end(&r), 0);
	assert_int_equal(pid, 4242);
	assert_int_equal(nargv, 2);
	assert_true(id);
	assert_true(user == 312.5);

	/* jr_find: -ENOENT reads the object to its end */
	jr_init(&r, rec, sizeof(rec) - 1);
	assert_int_equal(jr_obj_open(&r), 0);
	assert_int_equal(jr_find(&r, "user_s", 6), -ENOENT);
	assert_int_equal(r.depth, 0);
	assert_int_equal(jr_end(&r), 0);
	assert_int_equal(jr_close(&r), -EINVAL);	/* nothing open */
}

/* Where and why a text is refused; an error sticks. */
static void test_errors(void **state)
{
	struct jr_str s;
	struct jr r;
	uint64_t u;

	(void)state;
	refused_at("{\"a\":1 \"b\":2}", "expected ',' or '}'", 7);
	refused_at("[1 2]", "expected ',' or ']'", 3);
	refused_at("{\"a\":1", "unterminated object", 6);
	refused_at("[1,", "value missing", 3);
	refused_at("[1,]", "invalid value", 3);
	refused_at("{\"a\" 1}", "expected ':'", 5);
	refused_at("{1:1}", "expected a member name", 1);
	refused_at("\"ab", "unterminated string", 0);
	refused_at("[\"a\\qb\"]", "invalid escape or lone surrogate", 3);
	refused_at("[\"a\x01\"]", "control character in a string", 3);
	refused_at("[\"ab\xc3(\"]", "invalid UTF-8", 4);
	refused_at("[1.]", "invalid number", 3);
	refused_at("[1e+x]", "invalid number", 4);
	refused_at("[tru]", "invalid value", 1);
	refused_at("{} x", "text after the value", 3);
	refused_at("", "value missing", 0);

	/* after an error every call fails, and the first error stays */
	jr_init(&r, "[1 2] 3", 7);
	assert_int_equal(jr_arr_open(&r), 0);
	assert_int_equal(jr_next_elem(&r), 1);
	assert_int_equal(jr_u64(&r, &u), 0);
	assert_int_equal(jr_next_elem(&r), -EINVAL);
	assert_int_equal(jr_next_elem(&r), -EINVAL);
	assert_int_equal(jr_str(&r, &s), -EINVAL);
	assert_int_equal(jr_skip(&r), -EINVAL);
	assert_int_equal(jr_close(&r), -EINVAL);
	assert_int_equal(jr_end(&r), -EINVAL);
	assert_int_equal(jr_peek(&r), JR_NONE);
	assert_string_equal(r.err, "expected ',' or ']'");
	assert_int_equal(r.err_off, 3);
}

/* Nested depth levels of arrays, or objects {"k":...}, around 1. */
static size_t nest(char *text, int depth, bool obj)
{
	size_t n = 0;

	for (int i = 0; i < depth; i++) {
		memcpy(text + n, obj ? "{\"k\":" : "[", obj ? 5 : 1);
		n += obj ? 5 : 1;
	}
	text[n++] = '1';
	for (int i = 0; i < depth; i++)
		text[n++] = obj ? '}' : ']';
	text[n] = '\0';
	return n;
}

/* JR_MAX_DEPTH containers nest; one more is refused. */
static void test_depth(void **state)
{
	char text[8 * JR_MAX_DEPTH];
	struct jr r;
	size_t n;

	(void)state;
	for (int obj = 0; obj < 2; obj++) {
		n = nest(text, JR_MAX_DEPTH, obj);
		assert_true(json_valid_n(text, n));
		assert_int_equal(walk_n(text, n, NULL), 0);
		n = nest(text, JR_MAX_DEPTH + 1, obj);
		assert_false(json_valid_n(text, n));
		assert_int_equal(walk_n(text, n, &r), -EINVAL);
		assert_string_equal(r.err, "nested too deeply");
		assert_int_equal(r.err_off, JR_MAX_DEPTH * (obj ? 5 : 1));
	}
	/* far past the limit: refused where the limit is passed */
	n = 100000;
	{
		char *deep = malloc(n);

		assert_non_null(deep);
		memset(deep, '[', n);
		assert_int_equal(walk_n(deep, n, &r), -EINVAL);
		assert_int_equal(r.err_off, JR_MAX_DEPTH);
		free(deep);
	}
}

/* The first top-level member of a name, reading no further. */
static void test_member_str(void **state)
{
	static const struct {
		const char *text;
		int err;
		const char *val;
	} t[] = {
		{ "{\"type\":\"process\",\"id\":\"x\"}", 0, "process" },
		{ " { \"id\" : \"x\" , \"type\" : \"job\" } ", 0, "job" },
		{ "{\"type\":\"host\"} junk", 0, "host" },
		{ "{\"type\":\"host\",broken", 0, "host" },
		{ "{\"job\":{\"type\":\"no\"},\"type\":\"sample\"}", 0, "sample" },
		{ "{\"\\u0074ype\":\"signal\"}", 0, "signal" },
		{ "{\"type\":\"a\",\"type\":\"b\"}", 0, "a" },
		{ "{\"type\":5,\"type\":\"b\"}", -EDOM, NULL },
		{ "{\"type\":null}", -EDOM, NULL },
		{ "{\"job\":{\"type\":\"process\"}}", -ENOENT, NULL },
		{ "{}", -ENOENT, NULL },
		{ "{\"types\":\"x\",\"typ\":\"y\"}", -ENOENT, NULL },
		{ "[{\"type\":\"process\"}]", -EINVAL, NULL },
		{ "\"type\"", -EINVAL, NULL },
		{ "", -EINVAL, NULL },
		{ "{\"id\":\"\xff\",\"type\":\"process\"}", -EINVAL, NULL },
		{ "{\"id\":1 \"type\":\"process\"}", -EINVAL, NULL },
		{ "{\"type\":\"pro", -EINVAL, NULL },
	};
	struct jr_str v;

	(void)state;
	for (size_t k = 0; k < N(t); k++) {
		int err = jr_member_str(t[k].text, strlen(t[k].text), "type", &v);

		if (err != t[k].err)
			fail_msg("%s: %d, want %d", t[k].text, err, t[k].err);
		if (!err && !jr_str_eq(&v, t[k].val, strlen(t[k].val)))
			fail_msg("%s: got %.*s", t[k].text, (int)v.len, v.s);
	}
}

/* ---- the time codec ------------------------------------------------------------ */

/* Parse s strictly (or loosely); -EINVAL or 0 with the time. */
static int ptime(const char *s, unsigned flags, int64_t *secs, uint32_t *ns)
{
	size_t n = strlen(s);
	char *copy = malloc(n ? n : 1);	/* no NUL: nothing past n is read */
	int err;

	assert_non_null(copy);
	memcpy(copy, s, n);
	err = json_parse_time(copy, n, flags, secs, ns);
	free(copy);
	return err;
}

/* Times the agent writes, and the other RFC 3339 forms. */
static void test_time_parse(void **state)
{
	static const struct {
		const char *text;
		unsigned flags;
		int64_t secs;
		uint32_t ns;
	} t[] = {
		{ "1970-01-01T00:00:00.000000Z", 0, 0, 0 },
		{ "2026-11-22T10:00:00.123456Z", 0, 1795341600, 123456000 },
		{ "2026-11-22t10:00:00z", 0, 1795341600, 0 },
		{ "2026-11-22 10:00:00Z", 0, 1795341600, 0 },
		{ "2026-11-22T10:00:00.5Z", 0, 1795341600, 500000000 },
		{ "2026-11-22T10:00:00.123456789Z", 0, 1795341600, 123456789 },
		{ "2026-11-22T10:00:00.1234567899999Z", 0, 1795341600, 123456789 },
		{ "2026-11-22T10:00:00.000000001Z", 0, 1795341600, 1 },
		{ "2026-11-22T10:00:00+02:00", 0, 1795334400, 0 },
		{ "2026-11-22T10:00:00.25-01:30", 0, 1795347000, 250000000 },
		{ "2026-11-22T10:00:00+23:59", 0, 1795341600 - 86340, 0 },
		{ "1969-12-31T23:59:59Z", 0, -1, 0 },
		{ "1970-01-01T00:30:00+01:00", 0, -1800, 0 },
		{ "0000-01-01T00:00:00Z", 0, -62167219200, 0 },
		{ "9999-12-31T23:59:59.999999Z", 0, 253402300799, 999999000 },
		{ "2106-02-07T06:28:15Z", 0, 4294967295, 0 },
		/* leap years: every 4th, not every 100th, every 400th */
		{ "2024-02-29T00:00:00Z", 0, 1709164800, 0 },
		{ "2000-02-29T00:00:00Z", 0, 951782400, 0 },
		{ "2400-02-29T00:00:00Z", 0, 13574563200, 0 },
		{ "2100-03-01T00:00:00Z", 0, 4107542400, 0 },
		{ "2100-02-28T23:59:59Z", 0, 4107542399, 0 },
		/* what a person types, with JSON_TIME_LOOSE */
		{ "2026-11-22", JSON_TIME_LOOSE, 1795305600, 0 },
		{ "2026-11-22 10:30", JSON_TIME_LOOSE, 1795343400, 0 },
		{ "2026-11-22T10:30+01:00", JSON_TIME_LOOSE, 1795339800, 0 },
		{ "2026-11-22 10:30:15", JSON_TIME_LOOSE, 1795343415, 0 },
		{ "2026-11-22T10:00:00.5Z", JSON_TIME_LOOSE, 1795341600, 500000000 },
	};

	(void)state;
	for (size_t i = 0; i < N(t); i++) {
		int64_t secs = -1;
		uint32_t ns = 1;

		if (ptime(t[i].text, t[i].flags, &secs, &ns))
			fail_msg("refused: %s", t[i].text);
		if (secs != t[i].secs || ns != t[i].ns)
			fail_msg("%s: %lld.%09u, want %lld.%09u", t[i].text,
				 (long long)secs, ns, (long long)t[i].secs,
				 t[i].ns);
	}
}

/* Out of range, short, or with something else: refused. */
static void test_time_refused(void **state)
{
	static const char *const bad[] = {
		"", "2026", "2026-11-22", "2026-11-22T", "2026-11-22T10",
		"2026-11-22T10:00", "2026-11-22T10:00Z", "2026-11-22T10:00:00",
		"2026-11-22T10:00:0Z", "2026-11-22T10:00:00.Z",
		"2026-11-22T10:00:00.", "2026-11-22T10:00:00,5Z",
		"2026-11-22T10:00:00ZZ", "2026-11-22T10:00:00Z ",
		" 2026-11-22T10:00:00Z", "2026-11-22T10:00:00+0200",
		"2026-11-22T10:00:00+02", "2026-11-22T10:00:00+24:00",
		"2026-11-22T10:00:00+02:60", "2026-11-22T10:00:00 +02:00",
		"2026-11-22X10:00:00Z", "2026/11/22T10:00:00Z",
		"2026-11-2T10:00:00Z", "026-11-22T10:00:00Z",
		"+2026-11-22T10:00:00Z", "-2026-11-22T10:00:00Z",
		"2026-00-22T10:00:00Z", "2026-13-22T10:00:00Z",
		"2026-11-00T10:00:00Z", "2026-11-31T10:00:00Z",
		"2026-12-32T10:00:00Z", "2026-04-31T10:00:00Z",
		"2023-02-29T10:00:00Z", "2100-02-29T10:00:00Z",
		"1900-02-29T10:00:00Z", "2026-11-22T24:00:00Z",
		"2026-11-22T23:60:00Z", "2026-11-22T23:59:60Z",
		"2026-11-22T1a:00:00Z", "2026-11-22T10:00:00.1a",
		"2026-11-22T10:00:00\xc2\xa0Z",
	};
	static const char *const bad_loose[] = {
		"2026-11-22 ", "2026-11-22T10", "2026-11-22T10:60",
		"2026-11-22T10:00:00.Z", "2026-11-22T10:00.5",
		"2026-11-22T10:00:00+0200", "2026-11-22T10:00:00Zjunk",
		"2026-11-2", "2026-02-30", "2026-13-01", "1969-12-3",
	};
	int64_t s;
	uint32_t ns;

	(void)state;
	for (size_t i = 0; i < N(bad); i++)
		if (ptime(bad[i], 0, &s, &ns) != -EINVAL)
			fail_msg("accepted: \"%s\"", bad[i]);
	for (size_t i = 0; i < N(bad_loose); i++)
		if (ptime(bad_loose[i], JSON_TIME_LOOSE, &s, &ns) != -EINVAL)
			fail_msg("accepted (loose): \"%s\"", bad_loose[i]);
}

/* format -> parse gives the time back to the microsecond, everywhere. */
static void test_time_round_trip(void **state)
{
	static const uint64_t edges[] = {
		0, 999, 1000, 86399999999999ull, 86400000000000ull,
		951782400000000000ull,			/* 2000-02-29 */
		951868799999999999ull,			/* its last ns */
		4107542399999999000ull,			/* 2100-02-28 23:59:59 */
		4107542400000000000ull,			/* 2100-03-01 */
		UINT64_MAX,
	};
	uint64_t x = 88172645463325252ull;
	char out[40];
	int64_t secs;
	uint32_t ns;

	(void)state;
	for (size_t i = 0; i < N(edges) + 20000; i++) {
		uint64_t t;

		if (i < N(edges)) {
			t = edges[i];
		} else {
			x ^= x << 13;	/* xorshift: anything up to 2554 */
			x ^= x >> 7;
			x ^= x << 17;
			t = i % 2 ? x : x % (200ull * 365 * 86400 * 1000000000);
		}
		json_format_time(t, out, sizeof(out));
		assert_int_equal(strlen(out), 27);
		if (json_parse_time(out, 27, 0, &secs, &ns))
			fail_msg("refused its own %s", out);
		if ((uint64_t)secs != t / 1000000000 ||
		    ns != t % 1000000000 / 1000 * 1000)
			fail_msg("%llu -> %s -> %lld.%09u",
				 (unsigned long long)t, out, (long long)secs, ns);
	}
	json_format_time(UINT64_MAX, out, sizeof(out));
	assert_string_equal(out, "2554-07-21T23:34:33.709551Z");
	json_format_time(4107542399999999000ull, out, sizeof(out));
	assert_string_equal(out, "2100-02-28T23:59:59.999999Z");
	json_format_time(951868799999999999ull, out, sizeof(out));
	assert_string_equal(out, "2000-02-29T23:59:59.999999Z");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid),
		cmocka_unit_test(test_invalid),
		cmocka_unit_test(test_surrogates),
		cmocka_unit_test(test_escapes),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_types),
		cmocka_unit_test(test_walk_record),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_depth),
		cmocka_unit_test(test_member_str),
		cmocka_unit_test(test_time_parse),
		cmocka_unit_test(test_time_refused),
		cmocka_unit_test(test_time_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
