// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_shellwords.c - cmocka tests of the shell word splitter: words and
 * their exact spans, quoting, operators, unterminated quotes, the byte map
 * behind each unquoted byte, linear time on 64 KB of hostile input, and
 * the two functions the rules call.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "shellwords.h"
#include "util.h"

/* One expected token: its text (NULL for an operator) and span. */
struct tok {
	const char *text;
	size_t start, end;
};

/* Split s and compare every token with want (n tokens). */
static void expect_tokens(const char *s, const struct tok *want, size_t n)
{
	size_t len = strlen(s), pos = 0, k = 0;
	char *out = malloc(len + 1);
	struct shellword w;

	assert_non_null(out);
	while (shellwords_next(s, len, &pos, &w, out, NULL)) {
		assert_true(k < n);
		if (want[k].text) {
			assert_false(w.op);
			assert_int_equal(w.len, strlen(want[k].text));
			assert_memory_equal(out, want[k].text, w.len);
		} else {
			assert_true(w.op);
			assert_int_equal(w.len, 0);
		}
		assert_int_equal(w.start, want[k].start);
		assert_int_equal(w.end, want[k].end);
		assert_true(w.end - w.start >= w.len);
		k++;
	}
	assert_int_equal(k, n);
	assert_int_equal(pos, len);
	free(out);
}

/* Blanks split words; runs of blanks and the ends give no empty words. */
static void test_plain(void **state)
{
	static const struct tok t[] = {
		{ "mytool", 1, 7 }, { "--password", 8, 18 }, { "canarypw", 20, 28 },
	};

	(void)state;
	expect_tokens(" mytool\t--password  canarypw ", t, 3);
	expect_tokens("", NULL, 0);
	expect_tokens(" \t ", NULL, 0);
}

/* Single quotes keep everything; double quotes unescape $ ` " \ only. */
static void test_quotes(void **state)
{
	static const struct tok t1[] = {
		{ "a b\\c", 0, 7 }, { "x\"y$z`\\d\\e", 8, 24 },
	};
	static const struct tok t2[] = {
		{ "x", 0, 1 }, { "--password=\"canaryA2\"", 2, 25 },
	};
	static const struct tok t3[] = {
		{ "", 0, 2 }, { "", 3, 5 }, { "ab", 6, 12 },
	};
	static const struct tok t4[] = {
		{ "it's", 0, 9 }, { "a b", 10, 14 },
	};

	(void)state;
	expect_tokens("'a b\\c' \"x\\\"y\\$z\\`\\\\d\\e\"", t1, 2);
	/* what bash -c 'x --password=\"canaryA2\"' gets */
	expect_tokens("x --password=\\\"canaryA2\\\"", t2, 2);
	expect_tokens("'' \"\" a''b\"\"", t3, 3);
	expect_tokens("'it'\\''s' a\\ b", t4, 2);
}

/* Operators are tokens of their own (longest form) and split words. */
static void test_operators(void **state)
{
	static const struct tok t[] = {
		{ "a", 0, 1 }, { NULL, 1, 2 }, { "b", 2, 3 }, { NULL, 3, 5 },
		{ "c", 5, 6 }, { NULL, 6, 8 }, { "d", 8, 9 }, { NULL, 9, 10 },
		{ "e", 10, 11 }, { NULL, 11, 12 }, { "f", 12, 13 },
		{ NULL, 13, 14 }, { "g", 14, 15 }, { NULL, 15, 16 },
		{ "h", 16, 17 }, { NULL, 17, 19 }, { "i", 19, 20 },
		{ NULL, 20, 21 }, { "j", 21, 22 }, { NULL, 22, 23 },
		{ "k", 23, 24 }, { NULL, 24, 27 }, { "l", 27, 28 },
		{ "2", 29, 30 }, { NULL, 30, 32 }, { "1", 32, 33 },
		{ "m", 34, 35 }, { NULL, 35, 37 }, { "n", 37, 38 },
		{ NULL, 38, 39 }, { "x", 39, 40 }, { NULL, 40, 41 },
		{ NULL, 41, 44 },
	};
	static const struct tok q[] = {
		{ "a;b|c&&d", 0, 10 }, { NULL, 11, 12 }, { "$", 13, 14 },
		{ NULL, 14, 15 }, { "e", 15, 16 }, { NULL, 16, 17 },
		{ "\"$(f)\"", 18, 26 },
	};

	(void)state;
	expect_tokens("a;b&&c||d|e(f)g<h>>i>j\nk<<<l 2>&1 m&>n`x`;;&", t,
		      sizeof(t) / sizeof(t[0]));
	/* quoted operators are word bytes; $( splits off the command */
	expect_tokens("'a;b|c&&d' ; $(e) '\"$(f)\"'", q, sizeof(q) / sizeof(q[0]));
}

/* Backslash-newline joins lines; a lone backslash at the end stays. */
static void test_backslashes(void **state)
{
	static const struct tok t1[] = {
		{ "ab", 0, 4 }, { "c", 8, 9 },
	};
	static const struct tok t2[] = {
		{ "ab", 0, 6 }, { "x\\", 7, 9 },
	};
	static const struct tok t3[] = {
		{ "a", 0, 1 }, { NULL, 1, 2 }, { "b", 2, 3 },
	};

	(void)state;
	expect_tokens("a\\\nb \\\n c", t1, 2);
	expect_tokens("\"a\\\nb\" x\\", t2, 2);
	expect_tokens("a\nb", t3, 3);
}

/* Unterminated quotes run to the end without reading past it. */
static void test_unterminated(void **state)
{
	static const struct tok t1[] = { { "x", 0, 1 }, { "ab c", 2, 7 } };
	static const struct tok t2[] = { { "ab\\", 0, 4 } };
	static const struct tok t3[] = { { "a\"b", 0, 4 } };
	/* the string ends inside a quote: the byte after it is not read */
	char *s = malloc(4);
	size_t pos = 0;
	struct shellword w;
	char out[4];

	(void)state;
	expect_tokens("x 'ab c", t1, 2);
	expect_tokens("\"ab\\", t2, 1);
	expect_tokens("'a\"b", t3, 1);
	assert_non_null(s);
	memcpy(s, "'\"\\x", 4);
	assert_true(shellwords_next(s, 3, &pos, &w, out, NULL));
	assert_int_equal(w.end, 3);
	assert_int_equal(w.len, 2);
	assert_memory_equal(out, "\"\\", 2);
	assert_false(shellwords_next(s, 3, &pos, &w, out, NULL));
	free(s);
}

/* The map names the byte of the input behind every unquoted byte. */
static void test_map(void **state)
{
	static const char s[] = "cmd x'ab'\"c\\\"d\"e\\ f";
	static const size_t want[] = { 4, 6, 7, 10, 12, 13, 15, 17, 18 };
	size_t pos = 0, map[sizeof(s)];
	struct shellword w;
	char out[sizeof(s)];

	(void)state;
	assert_true(shellwords_next(s, strlen(s), &pos, &w, out, map));
	assert_true(shellwords_next(s, strlen(s), &pos, &w, out, map));
	assert_int_equal(w.len, 9);
	assert_memory_equal(out, "xabc\"de f", 9);
	for (size_t i = 0; i < w.len; i++) {
		assert_int_equal(map[i], want[i]);
		assert_int_equal(s[map[i]], out[i]);
	}
	assert_false(shellwords_next(s, strlen(s), &pos, &w, out, map));
}

/* Seconds of this thread's CPU time to split s (len bytes) to the end. */
static double split_time(const char *s, size_t len, size_t *tokens)
{
	uint64_t t0 = util_now_ns(CLOCK_THREAD_CPUTIME_ID);
	char *out = malloc(len);
	size_t pos = 0;
	struct shellword w;

	assert_non_null(out);
	*tokens = 0;
	while (shellwords_next(s, len, &pos, &w, out, NULL))
		(*tokens)++;
	free(out);
	return (util_now_ns(CLOCK_THREAD_CPUTIME_ID) - t0) / 1e9;
}

/* 64 KB of the worst inputs split in linear time (ms, not seconds). */
static void test_linear(void **state)
{
	static const char *const unit[] = { "'", "\"", "\\", "\\\n", "a",
					    ";", "<<<", " ", "\"\\" };
	size_t len = 64 * 1024, tokens;
	char *s = malloc(len);

	(void)state;
	assert_non_null(s);
	for (size_t u = 0; u < sizeof(unit) / sizeof(unit[0]); u++) {
		size_t ul = strlen(unit[u]);
		double t;

		for (size_t i = 0; i < len; i++)
			s[i] = unit[u][i % ul];
		t = split_time(s, len, &tokens);
		/* linear is well under 10 ms; a quadratic splitter takes seconds */
		if (t > 0.25)
			fail_msg("64 KB of '%s' took %.3f s", unit[u], t);
	}
	/* an unterminated quote at the start makes one word of it all */
	s[0] = '\'';
	memset(s + 1, 'x', len - 1);
	split_time(s, len, &tokens);
	assert_int_equal(tokens, 1);
	free(s);
}

/* A Lua state with the two functions as globals. */
static lua_State *lua_with_api(void)
{
	lua_State *L = luaL_newstate();

	assert_non_null(L);
	luaL_openlibs(L);
	lua_register(L, "shell_words", shellwords_lua_words);
	lua_register(L, "shell_span", shellwords_lua_span);
	return L;
}

/* Run chunk in L; it must return the string "ok". */
static void lua_ok(lua_State *L, const char *chunk)
{
	int rc = luaL_dostring(L, chunk);

	if (rc != LUA_OK)
		fail_msg("lua: %s", lua_tostring(L, -1));
	assert_string_equal(lua_tostring(L, -1), "ok");
	lua_pop(L, 1);
}

/* What the rules get: words, false for operators, 1-based spans. */
static void test_lua(void **state)
{
	lua_State *L = lua_with_api();

	(void)state;
	lua_ok(L,
	       "local s = [[mytool --password=\"canary A1\"; true]]\n"
	       "local w, a, b = shell_words(s)\n"
	       "assert(#w == 4 and #a == 4 and #b == 4)\n"
	       "assert(w[1] == 'mytool' and a[1] == 1 and b[1] == 6)\n"
	       "assert(w[2] == '--password=canary A1' and a[2] == 8 and b[2] == 29)\n"
	       "assert(w[3] == false and s:sub(a[3], b[3]) == ';')\n"
	       "assert(w[4] == 'true' and a[4] == 32 and b[4] == 35)\n"
	       "local i, j = shell_span(s, 8, 12, 20)\n"
	       "assert(s:sub(i, j) == 'canary A1', s:sub(i, j))\n"
	       "i, j = shell_span(s, 8, 1, 1)\n"
	       "assert(i == 8 and j == 8)\n"
	       "s = [[x --password=\\\"canaryA2\\\"]]\n"
	       "w, a = shell_words(s)\n"
	       "assert(w[2] == '--password=\"canaryA2\"', w[2])\n"
	       "i, j = shell_span(s, a[2], 12, 21)\n"
	       "assert(s:sub(i, j) == [[\\\"canaryA2\\\"]], s:sub(i, j))\n"
	       "i, j = shell_span(s, a[2], 13, 20)\n"
	       "assert(s:sub(i, j) == 'canaryA2', s:sub(i, j))\n"
	       "s = [[a\\\\b \"\\x\"]]\n"
	       "w, a = shell_words(s)\n"
	       "assert(w[1] == 'a\\\\b' and w[2] == '\\\\x')\n"
	       "i, j = shell_span(s, a[1], 3, 3)\n"
	       "assert(i == 4 and j == 4)\n"
	       "i, j = shell_span(s, a[2], 2, 2)\n"
	       "assert(i == 8 and j == 8)\n"
	       "return 'ok'");
	lua_ok(L,
	       "local w = shell_words('')\n"
	       "assert(#w == 0)\n"
	       "assert(not pcall(shell_span, 'ab ; c', 3, 1, 1))\n"
	       "assert(not pcall(shell_span, 'ab c', 3, 1, 1))\n"
	       "assert(not pcall(shell_span, 'ab c', 1, 1, 3))\n"
	       "assert(not pcall(shell_span, 'ab c', 1, 2, 1))\n"
	       "assert(not pcall(shell_span, 'ab c', 9, 1, 1))\n"
	       "assert(not pcall(shell_words, {}))\n"
	       "return 'ok'");
	lua_close(L);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain),
		cmocka_unit_test(test_quotes),
		cmocka_unit_test(test_operators),
		cmocka_unit_test(test_backslashes),
		cmocka_unit_test(test_unterminated),
		cmocka_unit_test(test_map),
		cmocka_unit_test(test_linear),
		cmocka_unit_test(test_lua),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
