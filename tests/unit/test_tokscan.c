// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_tokscan.c - cmocka tests of the word sets, secret formats and code
 * literals the redaction rules use: finding words against a naive
 * reference on random input, boundaries and case, string literals, the Lua
 * functions (words, find, first, scan, code_named, code_literals) with
 * their errors, the deadline check inside scan, and linear time on hostile
 * input.
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

#include "tokscan.h"
#include "util.h"

static unsigned long checks;	/* calls of the check */
static unsigned long stop_after;	/* raise an error at this many (0: never) */

/* The check the pattern matcher calls every LUAPAT_CHECK_STEPS steps. */
static void check(lua_State *L, void *ud)
{
	(void)ud;
	checks++;
	if (stop_after && checks >= stop_after)
		luaL_error(L, "stopped after %I checks", (lua_Integer)checks);
}

/* A state with the base libraries and jobtrace.words & co. */
static lua_State *new_state(void)
{
	lua_State *L = luaL_newstate();

	assert_non_null(L);
	luaL_openlibs(L);
	lua_newtable(L);
	tokscan_install(L, -1, check, NULL);
	lua_setglobal(L, "jobtrace");
	return L;
}

/* Run chunk in L; it must return one string, compared with want. */
static void expect(lua_State *L, const char *chunk, const char *want)
{
	if (luaL_dostring(L, chunk) != LUA_OK)
		fail_msg("%s\nraised: %s", chunk, lua_tostring(L, -1));
	if (strcmp(lua_tostring(L, -1) ? lua_tostring(L, -1) : "(nil)", want))
		fail_msg("%s\ngot  '%s'\nwant '%s'", chunk, lua_tostring(L, -1), want);
	lua_settop(L, 0);
}

/* Run chunk in L; it must raise an error that contains want. */
static void expect_error(lua_State *L, const char *chunk, const char *want)
{
	if (luaL_dostring(L, chunk) == LUA_OK)
		fail_msg("%s\ndid not raise (want '%s')", chunk, want);
	if (!strstr(lua_tostring(L, -1), want))
		fail_msg("%s\nraised '%s', want '%s'", chunk, lua_tostring(L, -1), want);
	lua_settop(L, 0);
}

/* Helpers in Lua: a flat result as text. */
static const char helpers[] =
	"function flat(t) if t == nil or t[1] == nil then return 'nil' end\n"
	"  local o = {} for i = 1, #t do o[#o + 1] = tostring(t[i]) end\n"
	"  return table.concat(o, ',') end\n"
	"function spans(s, t) if t == nil then return 'nil' end\n"
	"  local o = {} for i = 1, #t, 3 do o[#o + 1] = t[i] .. ':' .. s:sub(t[i + 1], t[i + 2]) end\n"
	"  return table.concat(o, '|') end\n"
	"function named(s, w) local t = jobtrace.code_named(s, jobtrace.words(w))\n"
	"  if t == nil then return 'nil' end\n"
	"  local o = {} for i = 1, #t, 3 do o[#o + 1] = t[i] .. '=' .. s:sub(t[i + 1], t[i + 2]) end\n"
	"  return table.concat(o, '|') end\n"
	"function lits(s) local t = jobtrace.code_literals(s)\n"
	"  if t == nil then return 'nil' end\n"
	"  local o = {} for i = 1, #t, 3 do o[#o + 1] = s:sub(t[i], t[i + 1]) .. (t[i + 2] and '+' or '') end\n"
	"  return table.concat(o, '|') end\n";

/* A state with the helpers. */
static lua_State *lua_with_helpers(void)
{
	lua_State *L = new_state();

	assert_int_equal(luaL_dostring(L, helpers), LUA_OK);
	return L;
}

/* The first word of list (n words, flags) at or after from in s, the
 * slow way: every position, every word in order. */
static bool naive_find(const char *const *list, const uint8_t *flags, int n,
		       const char *s, size_t from, size_t *at, unsigned *word)
{
	size_t len = strlen(s);

	for (size_t i = from; i < len; i++) {
		for (int k = 0; k < n; k++) {
			size_t wl = strlen(list[k]);
			bool ok = wl <= len - i;

			for (size_t j = 0; ok && j < wl; j++) {
				char a = s[i + j], b = list[k][j];

				if (flags[k] & TOKSCAN_ICASE) {
					a = (char)(a >= 'A' && a <= 'Z' ? a + 32 : a);
					b = (char)(b >= 'A' && b <= 'Z' ? b + 32 : b);
				}
				ok = a == b;
			}
			if (ok && (flags[k] & TOKSCAN_LEFT) && i > 0 &&
			    strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
				   s[i - 1]))
				ok = false;
			if (ok && (flags[k] & TOKSCAN_RIGHT) && i + wl < len &&
			    strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.:",
				   s[i + wl]))
				ok = false;
			if (ok) {
				*at = i;
				*word = (unsigned)k;
				return true;
			}
		}
	}
	return false;
}

/* Random word sets and texts: tokscan_find agrees with the naive search. */
static void test_find_random(void **state)
{
	static const char abc[] = "abAB_-:.x'\"";
	lua_State *L = new_state();
	unsigned seed = (unsigned)time(NULL);

	(void)state;
	srand(seed);
	for (int round = 0; round < 300; round++) {
		char words[8][8], text[200];
		const char *list[8];
		uint8_t flags[8];
		int n = 1 + rand() % 8;
		size_t len = (size_t)(rand() % 199);
		const struct tokscan *ts;

		lua_settop(L, 0);
		lua_createtable(L, n, 0);
		for (int k = 0; k < n; k++) {
			int wl = 2 + rand() % 4;

			for (int j = 0; j < wl; j++)
				words[k][j] = abc[rand() % (sizeof(abc) - 1)];
			words[k][wl] = '\0';
			list[k] = words[k];
			flags[k] = (uint8_t)(rand() % 8);
			lua_createtable(L, 1, 3);
			lua_pushstring(L, words[k]);
			lua_rawseti(L, -2, 1);
			lua_pushboolean(L, flags[k] & TOKSCAN_ICASE);
			lua_setfield(L, -2, "icase");
			lua_pushboolean(L, flags[k] & TOKSCAN_LEFT);
			lua_setfield(L, -2, "left");
			lua_pushboolean(L, flags[k] & TOKSCAN_RIGHT);
			lua_setfield(L, -2, "right");
			lua_rawseti(L, -2, k + 1);
		}
		lua_getglobal(L, "jobtrace");
		lua_getfield(L, -1, "words");
		lua_pushvalue(L, 1);
		assert_int_equal(lua_pcall(L, 1, 1, 0), LUA_OK);
		ts = lua_touserdata(L, -1);
		for (size_t i = 0; i < len; i++)
			text[i] = abc[rand() % (sizeof(abc) - 1)];
		text[len] = '\0';
		for (size_t from = 0; from <= len; from++) {
			size_t a1 = 0, a2 = 0, e1 = 0, map[200], m = 0, tf = 0;
			unsigned w1 = 0, w2 = 0;
			bool f1 = tokscan_find(ts, text, len, from, &a1, &w1);
			bool f2 = naive_find(list, flags, n, text, from, &a2, &w2);
			char plain[200];

			if (f1 != f2 || (f1 && (a1 != a2 || w1 != w2)))
				fail_msg("seed %u round %d from %zu in '%s': got %d@%zu w%u, want %d@%zu w%u",
					 seed, round, from, text, f1, a1, w1, f2, a2, w2);
			/* unquoted: the same as on the text with ' and " taken out */
			for (size_t i = 0; i < len; i++) {
				if (text[i] == '\'' || text[i] == '"')
					continue;
				if (i < from)
					tf = m + 1;
				map[m] = i;
				plain[m++] = text[i];
			}
			plain[m] = '\0';
			f1 = tokscan_find_unquoted(ts, text, len, from, &a1, &e1, &w1);
			f2 = naive_find(list, flags, n, plain, tf, &a2, &w2);
			if (f1 != f2 || (f1 && (a1 != map[a2] || w1 != w2 ||
						e1 != map[a2 + strlen(list[w2]) - 1] + 1)))
				fail_msg("seed %u round %d from %zu unquoted in '%s': got %d@%zu-%zu w%u, want %d@%zu w%u",
					 seed, round, from, text, f1, a1, e1, w1, f2,
					 f2 ? map[a2] : 0, w2);
		}
	}
	lua_close(L);
}

/* Case, boundaries and order of the Lua find and first. */
static void test_find_lua(void **state)
{
	lua_State *L = lua_with_helpers();

	(void)state;
	expect(L, "local W = jobtrace.words{ 'pass', { 'AKIA', icase = false, left = true } }\n"
		  "return flat{ W:find('xPASSy') } .. ' ' .. flat{ W:find('xAKIA') } .. ' '\n"
		  "  .. flat{ W:find('-akia-AKIA') } .. ' ' .. flat{ W:find('pass', 2) }",
	       "2,5,1 nil 7,10,2 nil");
	expect(L, "local W = jobtrace.words{ { 'curl', left = true, right = true } }\n"
		  "return flat{ W:find('/usr/bin/curl') } .. ' ' .. flat{ W:find('curly') } .. ' '\n"
		  "  .. flat{ W:find('curl:8') } .. ' ' .. flat{ W:find('c\\ncurl\\nx') } .. ' '\n"
		  "  .. flat{ W:find('curl.sh') }",
	       "10,13,1 nil nil 3,6,1 nil");
	expect(L, "local W = jobtrace.words{ { 'curl', left = true, right = true } }\n"
		  "return flat{ W:find('c\\\"url\\\" -u', 1, true) } .. ' ' .. flat{ W:find('cu\\\\rl', 1, true) } .. ' '\n"
		  "  .. flat{ W:find('c\\\"url\\\" -u') } .. ' ' .. flat{ W:first({ 'x', \"'curl'\" }, 1, true) }",
	       "1,5,1 1,5,1 nil 2,1");
	expect(L, "local W = jobtrace.words{ 'key', 'token' }\n"
		  "return flat{ W:first({ 'a', 'b', 'my_TOKEN', 'key' }) } .. ' '\n"
		  "  .. flat{ W:first({ 'a', 'key' }, 3) } .. ' ' .. flat{ W:first({ 'a', 1, 'akey' }) }",
	       "3,2 nil 3,1");
	/* the first listed word wins where two start at the same byte */
	expect(L, "local W = jobtrace.words{ 'sk-', 'sk-ant-' }\n"
		  "return flat{ W:find('x sk-ant-1') }", "3,5,1");
	lua_close(L);
}

/* words() refuses bad lists with a clear message. */
static void test_words_errors(void **state)
{
	lua_State *L = lua_with_helpers();

	(void)state;
	expect_error(L, "jobtrace.words{ 'a' }", "entry 1: a word of 2 to 255 bytes");
	expect_error(L, "jobtrace.words{ 'ab', 3 }", "entry 2 is a number");
	expect_error(L, "jobtrace.words{ { icase = true } }", "entry 1: the word must be a string");
	expect_error(L, "jobtrace.words{ { 'ab', pattern = 3 } }", "entry 1: pattern must be a string");
	expect_error(L, "jobtrace.words(3)", "table expected");
	expect_error(L, "jobtrace.words{ 'ab' }:find()", "string expected");
	expect_error(L, "local W = jobtrace.words{ 'ab' }; W.find({}, 'x')", "jobtrace.words expected");
	lua_close(L);
}

/* scan: anchored patterns where their word stands, position captures,
 * leftmost and never overlapping, pattern errors raised. */
static void test_scan(void **state)
{
	lua_State *L = lua_with_helpers();

	(void)state;
	expect(L, "local W = jobtrace.words{ { 'ghp_', icase = false, left = true,\n"
		  "  pattern = 'ghp_' .. ('%w'):rep(4) .. '%w*' }, 'plain' }\n"
		  "local s = 'a ghp_abcd1 xghp_abcd ghp_ab ghp_1234-ghp_5678'\n"
		  "return spans(s, W:scan(s))",
	       "1:ghp_abcd1|1:ghp_1234|1:ghp_5678");
	/* only the captured bytes are the span; a match resumes after its end */
	expect(L, "local W = jobtrace.words{ { 'BEGIN', pattern = 'BEGIN%-()[^%-]*()%-END' },\n"
		  "  { 'xx', pattern = 'xx%d+' } }\n"
		  "local s = 'BEGIN-k1 xx12-END xx34 BEGIN--END'\n"
		  "return spans(s, W:scan(s))", "1:k1 xx12|2:xx34");
	/* several formats at one byte: the first that matches */
	expect(L, "local W = jobtrace.words{ { 'sk-', pattern = 'sk%-%d+' }, { 'sk-', pattern = 'sk%-%a+' } }\n"
		  "local s = 'sk-abc sk-123'\n"
		  "return spans(s, W:scan(s))", "2:sk-abc|1:sk-123");
	expect(L, "return spans('nothing', jobtrace.words{ { 'zz', pattern = 'zz' } }:scan('nothing'))",
	       "nil");
	expect_error(L, "jobtrace.words{ { 'ab', pattern = 'ab[' } }:scan('xab')",
		     "malformed pattern");
	lua_close(L);
}

/* A backtracking format is stopped by the check inside scan. */
static void test_scan_deadline(void **state)
{
	lua_State *L = lua_with_helpers();
	uint64_t t0 = util_now_ns(CLOCK_MONOTONIC);

	(void)state;
	checks = 0;
	stop_after = 50;
	expect_error(L, "local W = jobtrace.words{ { 'aa', pattern = 'aa.-.-.-.-.-.-x' } }\n"
		     "W:scan(('a'):rep(2000))", "stopped after 50 checks");
	stop_after = 0;
	if ((util_now_ns(CLOCK_MONOTONIC) - t0) / 1e9 > 2)
		fail_msg("the check did not stop the scan in time");
	lua_close(L);
}

/* String literals: quotes, escapes, triples, SQL's '', open ones. */
static void test_literal(void **state)
{
	static const struct {
		const char *code;
		size_t at;
		const char *content;
		bool open;
	} cases[] = {
		{ "x = 'abc' + y", 4, "abc", false },
		{ "x = \"a\\\"b\" y", 4, "a\\\"b", false },
		{ "`tmpl ${x}`", 0, "tmpl ${x}", false },
		{ "'''a ' b''' c", 0, "a ' b", false },
		{ "\"\"\"doc\"\"\"", 0, "doc", false },
		{ "'it''s' x", 0, "it''s", false },
		{ "'' , 'x'", 0, "", false },
		{ "'open to the end", 0, "open to the end", true },
		{ "'a\\'", 0, "a\\'", true },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tokscan_lit lit;
		size_t n = strlen(cases[i].code);

		tokscan_literal(cases[i].code, n, cases[i].at, &lit);
		if (lit.end - lit.start != strlen(cases[i].content) ||
		    memcmp(cases[i].code + lit.start, cases[i].content, lit.end - lit.start) ||
		    lit.open != cases[i].open)
			fail_msg("case %zu '%s': got '%.*s' open %d", i, cases[i].code,
				 (int)(lit.end - lit.start), cases[i].code + lit.start, lit.open);
		assert_true(lit.next <= n && lit.next >= lit.end);
	}
}

/* code_named: what binds a literal to a name, in many languages. */
static void test_code_named(void **state)
{
	lua_State *L = lua_with_helpers();
	const char *w = "{ 'pass', 'token', 'key', 'auth', 'identified', '_pat', 'secret' }";
	char chunk[1024];
	static const struct {
		const char *code, *want;
	} cases[] = {
		{ "db.connect(host='h', password='p1')", "password=p1" },
		{ "token = \"t1\"; x = 'y'", "token=t1" },
		{ "cfg = {'api_key': 'k1', \"n\": 4}", "api_key=k1" },
		{ "os.environ['GH_TOKEN'] = 't2'", "GH_TOKEN=t2" },
		{ "$ENV{API_TOKEN} = \"t3\";", "API_TOKEN=t3" },
		{ "my %h = (token => 't4');", "token=t4" },
		{ "Sys.setenv(GITHUB_PAT = \"p2\")", "GITHUB_PAT=p2" },
		{ "token <- 'r1'", "token=r1" },
		{ "ALTER USER u WITH PASSWORD 'q1'", "PASSWORD=q1" },
		{ "CREATE USER b IDENTIFIED BY 'q2'", "IDENTIFIED=q2" },
		{ "set_password(\"s1\", \"s2\")", "set_password=s1|set_password=s2" },
		{ "get(u, auth=('alice', 'pw'))", "auth=alice|auth=pw" },
		{ "if password == 'c1': pass", "password=c1" },
		{ "putenv(\"TOKEN\", \"e1\")", "TOKEN=e1" },
		{ "client_secret = r'raw1'", "client_secret=raw1" },
		{ "{apiKey: `b1`}", "apiKey=b1" },
		{ "password = get_password()", "nil" },
		{ "print('password')", "nil" },
		{ "x.password_prod = 'z1' # don't", "password_prod=z1" },
		{ "# don't\npassword = 'z2'", "password=z2" },
		{ "password = 'open", "password=open" },
		{ "secret::value = 'n1'", "nil" },
		{ "set password to \"a1\"", "password=a1" },
		{ "password total 'x'", "nil" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		lua_pushstring(L, cases[i].code);
		lua_setglobal(L, "code");
		snprintf(chunk, sizeof(chunk), "return named(code, %s)", w);
		expect(L, chunk, cases[i].want);
	}
	expect(L, "return lits(\"run(['sshpass', '-p', 'x'], 'y') + f('z')\")",
	       "sshpass|-p+|x+|y|z");
	expect(L, "return lits('no literal here')", "nil");
	/* with a word set: only the runs in which a literal holds a word */
	expect(L, "local s = \"a('x', 'y') b(['curl', '-u', 'u:p']) c('z') d('key: 1')\"\n"
		  "local t = jobtrace.code_literals(s, 256, jobtrace.words{ 'curl', 'key' })\n"
		  "local o = {} for i = 1, #t, 3 do o[#o + 1] = s:sub(t[i], t[i + 1]) .. (t[i + 2] and '+' or '') end\n"
		  "return table.concat(o, '|')", "curl|-u+|u:p+|key: 1");
	expect(L, "return flat(jobtrace.code_literals(\"'a' 'b' 'c'\", 2))", "2,2,false,6,6,false");
	lua_close(L);
}

/* Hostile input costs linear time: 1 MiB in well under a second each. */
static void test_linear(void **state)
{
	static const char *const unit[] = { "ghp_", "-ghp_", "password=\"", "'", "\\'",
					    "password ", "aaaa", "pass" };
	lua_State *L = lua_with_helpers();

	(void)state;
	assert_int_equal(luaL_dostring(L,
		"W = jobtrace.words{ { 'ghp_', icase = false, left = true,\n"
		"  pattern = 'ghp_' .. ('%w'):rep(36) .. '%w*' }, 'pass', 'password' }"), LUA_OK);
	for (size_t u = 0; u < sizeof(unit) / sizeof(unit[0]); u++) {
		char chunk[512];
		uint64_t t0;
		double t;

		lua_pushstring(L, unit[u]);
		lua_setglobal(L, "unit");
		snprintf(chunk, sizeof(chunk),
			 "local s = unit:rep(%zu)\n"
			 "W:find(s) W:scan(s) jobtrace.code_named(s, W) jobtrace.code_literals(s, 1e9)",
			 (size_t)(1 << 20) / strlen(unit[u]));
		t0 = util_now_ns(CLOCK_MONOTONIC);
		if (luaL_dostring(L, chunk) != LUA_OK)
			fail_msg("%s: %s", unit[u], lua_tostring(L, -1));
		t = (util_now_ns(CLOCK_MONOTONIC) - t0) / 1e9;
		/* linear is tens of ms for 1 MiB; quadratic would take minutes */
		if (t > 1.5)
			fail_msg("1 MiB of '%s' took %.3f s", unit[u], t);
		print_message("# 1 MiB of '%s': %.1f ms\n", unit[u], t * 1e3);
	}
	lua_close(L);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_find_random),
		cmocka_unit_test(test_find_lua),
		cmocka_unit_test(test_words_errors),
		cmocka_unit_test(test_scan),
		cmocka_unit_test(test_scan_deadline),
		cmocka_unit_test(test_literal),
		cmocka_unit_test(test_code_named),
		cmocka_unit_test(test_linear),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
