// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_luapat.c - our pattern matcher (agent/lib/luapat.c) against the stock
 * Lua 5.4 string library: every case runs in two plain lua_States, one with
 * the stock find/match/gmatch/gsub and one with ours, and the results (or
 * error messages) must be the same.  A table of cases covers every pattern
 * item and argument; random patterns and subjects cover the corners.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "luapat.h"

static lua_State *ref, *ours;
static unsigned long checks;	/* calls of the check in the ours state */
static unsigned long stop_after;	/* raise an error at this many (0: never) */

/* Helpers defined in both states: gmatch results as one list. */
static const char helpers[] =
	"function all(...)\n"
	"  local out = {}\n"
	"  for a, b, c in ... do out[#out + 1] = { a, b, c } end\n"
	"  return out\n"
	"end\n";

/* The check our matcher calls every LUAPAT_CHECK_STEPS steps. */
static void check(lua_State *L, void *ud)
{
	(void)ud;
	checks++;
	if (stop_after && checks >= stop_after)
		luaL_error(L, "stopped after %I checks", (lua_Integer)checks);
}

/* A plain state with every library and the helpers. */
static lua_State *new_state(bool with_ours)
{
	lua_State *L = luaL_newstate();

	assert_non_null(L);
	luaL_openlibs(L);
	if (with_ours) {
		lua_getglobal(L, "string");
		luapat_install(L, -1, check, NULL);
		lua_pop(L, 1);
	}
	assert_int_equal(luaL_dostring(L, helpers), LUA_OK);
	return L;
}

/* A growing text buffer. */
struct text {
	char *p;
	size_t n, cap;
};

/* Append n bytes to t. */
static void add(struct text *t, const char *s, size_t n)
{
	if (t->n + n + 1 > t->cap) {
		t->cap = (t->n + n + 1) * 2;
		t->p = realloc(t->p, t->cap);
		assert_non_null(t->p);
	}
	memcpy(t->p + t->n, s, n);
	t->n += n;
	t->p[t->n] = '\0';
}

/* Append value idx of L to t as text that tells types apart. */
static void put_value(lua_State *L, int idx, struct text *t)
{
	char num[64];
	size_t len;
	const char *s;

	switch (lua_type(L, idx)) {
	case LUA_TSTRING:
		s = lua_tolstring(L, idx, &len);
		add(t, num, (size_t)snprintf(num, sizeof(num), "s%zu:", len));
		add(t, s, len);
		break;
	case LUA_TNUMBER:
		if (lua_isinteger(L, idx))
			len = (size_t)snprintf(num, sizeof(num), "i%lld",
					       (long long)lua_tointeger(L, idx));
		else
			len = (size_t)snprintf(num, sizeof(num), "f%.17g",
					       lua_tonumber(L, idx));
		add(t, num, len);
		break;
	case LUA_TTABLE:
		add(t, "{", 1);
		for (lua_Integer i = 1, n = (lua_Integer)lua_rawlen(L, idx); i <= n; i++) {
			lua_rawgeti(L, idx, i);
			put_value(L, lua_gettop(L), t);
			lua_pop(L, 1);
			add(t, ",", 1);
		}
		add(t, "}", 1);
		break;
	case LUA_TBOOLEAN:
		add(t, lua_toboolean(L, idx) ? "true" : "false",
		    lua_toboolean(L, idx) ? 4 : 5);
		break;
	default:
		s = luaL_typename(L, idx);
		add(t, s, strlen(s));
		break;
	}
}

/* Run "return EXPR" in L; the results (or "E:" and the error) as one string. */
static char *run(lua_State *L, const char *expr)
{
	struct text t = { 0 };
	char chunk[8192], num[32];
	int top = lua_gettop(L), n;

	snprintf(chunk, sizeof(chunk), "return %s", expr);
	if (luaL_loadbuffer(L, chunk, strlen(chunk), "=case") != LUA_OK)
		fail_msg("case does not compile: %s: %s", expr, lua_tostring(L, -1));
	if (lua_pcall(L, 0, LUA_MULTRET, 0) != LUA_OK) {
		add(&t, "E:", 2);
		put_value(L, -1, &t);
	} else {
		n = lua_gettop(L) - top;
		add(&t, num, (size_t)snprintf(num, sizeof(num), "%d|", n));
		for (int i = 1; i <= n; i++) {
			put_value(L, top + i, &t);
			add(&t, "|", 1);
		}
	}
	lua_settop(L, top);
	return t.p;
}

/* Both states must give the same results for expr; returns them. */
static void same(const char *expr)
{
	char *want = run(ref, expr), *got = run(ours, expr);

	if (strcmp(want, got))
		fail_msg("%s\n  stock: %s\n  ours:  %s", expr, want, got);
	free(want);
	free(got);
}

/* Write a Lua string literal for the n bytes at s into out. */
static void quote(char *out, size_t cap, const char *s, size_t n)
{
	size_t o = 0;

	out[o++] = '"';
	for (size_t i = 0; i < n && o + 5 < cap; i++)
		o += (size_t)snprintf(out + o, cap - o, "\\%u", (unsigned char)s[i]);
	out[o++] = '"';
	out[o] = '\0';
}

static const char *const subjects[] = {
	"", "a", "hello world", "  leading and trailing  ", "THE (quick) [brown] fox",
	"key=value,other=2,empty=,=novalue", "f(a(b)c)d((e)", "x1y22z333",
	"aaa", "abcabcabc", "--opt=value -p secret", "tab\tand\nnewline",
	"punct!?.,;:-_", "caf\xc3\xa9 \x01\x7f\xff", "THE the ThE", "ab$cd^ef",
	"/opt/samtools-1.17/bin/samtools", "a.b.c", "%d%s", "nul\0in", NULL,
};

static const char *const patterns[] = {
	"", "a", "l+", "o w", "^h", "^hello", "d$", "world$", "^$", ".", ".-", ".*",
	"a*", "a-b", "a?", "a?b", "x?y", "%a+", "%A+", "%d+", "%D", "%l+", "%u+",
	"%s+", "%S+", "%w+", "%W", "%x+", "%X", "%p+", "%P", "%c", "%C+", "%g+",
	"%G", "[aeiou]", "[^aeiou]+", "[a-f]+", "[%d%s]+", "[%a_]+", "[]]", "[^]]+",
	"[a-]", "[-a]", "[%-]", "[%]]", "[^%s=,]+", "(%w+)=(%w*)", "([^,=]+)=([^,]*)",
	"()", "()a()", "(a)(b)", "(a*(.)%w(%s*))", "%b()", "%b[]", "%bxy",
	"%f[%w]%w+", "%f[%W]", "%f[%a]", "%f[^%z]", "(%w)%1", "(a)%1", "((a)%2)",
	"%.", "%%", "%$", "%(", "%d%s", "$", "^", "a$b", "%^", "^%^", "[%.%-]",
	"(h)(e)(l)", "(.-)%s", "(.*)%s", "%s*(.-)%s*$", "^(%S+)%s+(.*)$", "x*$",
	"[a-c]-c", ".-b", "%d-%d", "(()b)", "[\xc3\xa9]", "\xff", "[\x01-\x1f]",
	"[%w.]+", "[.]", "[%a-z]", "[z-a]", "[a%-z]", "(=)", "=()", "in$",
	NULL,
};

/* Every function on every subject/pattern pair of the table. */
static void test_table(void **state)
{
	unsigned n = 0;

	(void)state;
	for (const char *const *s = subjects; *s; s++) {
		char qs[512], qp[256], expr[1200];
		size_t sl = strcmp(*s, "nul") ? strlen(*s) : 6;

		quote(qs, sizeof(qs), *s, sl);
		for (const char *const *p = patterns; *p; p++) {
			quote(qp, sizeof(qp), *p, strlen(*p));
			snprintf(expr, sizeof(expr), "string.find(%s, %s)", qs, qp);
			same(expr);
			snprintf(expr, sizeof(expr), "string.match(%s, %s)", qs, qp);
			same(expr);
			snprintf(expr, sizeof(expr), "all(string.gmatch(%s, %s))", qs, qp);
			same(expr);
			snprintf(expr, sizeof(expr), "string.gsub(%s, %s, '<%%0>')", qs, qp);
			same(expr);
			n += 4;
		}
	}
	assert_true(n > 1000);
}

/* Arguments, replacements and errors, one case each. */
static void test_cases(void **state)
{
	static const char *const cases[] = {
		/* find: init (negative, zero, past the end) and plain */
		"string.find('hello', 'l', 1)", "string.find('hello', 'l', 4)",
		"string.find('hello', 'l', -2)", "string.find('hello', 'l', -100)",
		"string.find('hello', 'l', 0)", "string.find('hello', '', 6)",
		"string.find('hello', '', 7)", "string.find('hello', '', 100)",
		"string.find('hello', 'l', 6)", "string.find('', '')",
		"string.find('', '', 1)", "string.find('', '', 2)",
		"string.find('a.b', '.', 1, true)", "string.find('a.b', '.', 2, true)",
		"string.find('a+b', '+', 1, true)", "string.find('a+b', 'a+', 1, true)",
		"string.find('a+b', '', 3, true)", "string.find('a(b', '(', 1, 1)",
		"string.find('abc', 'b', nil, false)", "string.find('abc', '[b', 1, true)",
		"string.find('a\\0b', '\\0')", "string.find('a\\0b', '%z')",
		"string.find('abc', 'b()')", "string.find(12345, 3)",
		"string.find('abc', 'b', 2.0)", "string.find('x', '^')",
		"string.find('hello', '^l', 3)", "string.find('hello', 'o$', -1)",
		/* match and gmatch with init */
		"string.match('key = value', '(%w+)%s*=%s*(%w+)')",
		"string.match('hello', '.', -1)", "string.match('hello', '()ll()')",
		"string.match('hello', 'l+', 10)", "string.match('  x  ', '^%s*(.-)%s*$')",
		"all(string.gmatch('one two three', '%a+'))",
		"all(string.gmatch('one two three', '%a+', 5))",
		"all(string.gmatch('one two three', '%a+', -5))",
		"all(string.gmatch('one two three', '%a+', 100))",
		"all(string.gmatch('a=1, b=2', '(%w+)=(%w+)'))",
		"all(string.gmatch('abc', ''))", "all(string.gmatch('abc', '.-'))",
		"all(string.gmatch('^a^a', '^a'))", "all(string.gmatch('abc', '()'))",
		"all(string.gmatch('', 'x*'))",
		/* gsub: templates, tables, functions, n */
		"string.gsub('hello world', 'o', '0')",
		"string.gsub('hello world', 'o', '0', 1)",
		"string.gsub('hello world', 'o', '0', 0)",
		"string.gsub('hello world', 'o', '0', -1)",
		"string.gsub('hello world', '(o)', '[%1%1]')",
		"string.gsub('hello world', 'o', '[%1]')",
		"string.gsub('hello world', '%w+', '%0 %0')",
		"string.gsub('hello', '', '-')", "string.gsub('hello', 'x*', '-')",
		"string.gsub('abc', '%w', '%%')", "string.gsub('abc', '()', '%1')",
		"string.gsub('abc', '^a', 'A')", "string.gsub('aaa', '^a', 'A')",
		"string.gsub('abc', '$', '!')", "string.gsub('abc', 'b', 5)",
		"string.gsub('abc', 'b', 2.5)",
		"string.gsub('$name is $age', '%$(%w+)', { name = 'ann', age = 7 })",
		"string.gsub('$name is $x', '%$(%w+)', { name = false })",
		"string.gsub('abc', '%w', { a = 1, b = 2.5 })",
		"string.gsub('abc', '()', { [1] = 'one', [3] = 'three' })",
		"string.gsub('hello world', '%w+', string.upper)",
		"string.gsub('a,b', '(%w)', function(c) return nil end)",
		"string.gsub('a,b', '(%w)', function(c) return false end)",
		"string.gsub('a=1', '(%w)=(%w)', function(k, v) return v .. '=' .. k end)",
		"string.gsub('ab', '()(%w)', function(p, c) return c .. p end)",
		"string.gsub('ab', '%w', function(c) return 7 end)",
		"string.gsub('ALL,A=1,B=', '([^,=]+)=([^,]*)', function(n, v) if v == '' then return n .. '=' end return n .. '=X' end)",
		/* errors: the same messages */
		"string.gsub('abc', 'b', '%2')", "string.gsub('abc', '(b)', '%2')",
		"string.gsub('abc', 'b', '%x')", "string.gsub('abc', 'b', 'x%')",
		"string.gsub('abc', 'b', {b = {}})", "string.gsub('abc', 'b', function() return {} end)",
		"string.gsub('abc', 'b')", "string.gsub('abc', 'b', true)",
		"string.gsub('abc', 'b', 'x', 'many')",
		"string.find('abc', '%')", "string.find('abc', '[a')", "string.find('abc', '[a%')",
		"string.find('abc', '[]')", "string.find('abc', '[^]')", "string.find('abc', '(')",
		"string.find('abc', ')')", "string.find('abc', 'a)')", "string.find('abc', '%b')",
		"string.find('abc', '%ba')", "string.find('abc', '%f')", "string.find('abc', '%fa')",
		"string.find('abc', '%1')", "string.find('abc', '(a)%2')", "string.find('abc', '(a%1)')",
		"string.find('abc', '%0')", "string.match('abc', '(a')", "string.find('abc', '(a')",
		"all(string.gmatch('abc', '(a'))", "string.gsub('abc', '(a', 'x')",
		"string.find('abc', string.rep('(', 33))",
		"string.find('abc', string.rep('()', 32))", "string.find('abc', string.rep('()', 33))",
		"string.find(string.rep('a', 300), string.rep('a?', 300))",
		"string.find(nil, 'a')", "string.find('a')", "string.find('a', {})",
		"string.match('a', 'a', 'x')", "string.gmatch(nil, 'a')",
		"string.find('abc', 'a', 1.5)",
		/* methods through the string metatable */
		"('hello'):find('l')", "('hello'):match('(h)(e)')", "('a b'):gsub(' ', '_')",
		"all(('a b'):gmatch('%a'))", "('x'):find()",
		/* position captures and back-references */
		"string.find('hello', '()(l+)()')", "string.match('xyyx', '(x)(y)%2%1')",
		"string.find('abcabc', '(abc)%1')", "string.find('[[x]]', '%[(=*)%[(.-)%]%1%]')",
		"string.find('a\\0b\\0c', '%z', 3)", "string.gsub('a\\0b', '%z', '0')",
		"string.find('THE (quick) fox', '%((%a+)%)')",
		"string.gsub('THE (quick) fox', '%f[%a]%a+', 'W')",
		"string.gsub('hello.world', '%.', '/')",
		NULL,
	};
	unsigned n = 0;

	(void)state;
	for (const char *const *c = cases; *c; c++, n++)
		same(*c);
	assert_true(n > 120);
}

/* Random patterns and subjects from small alphabets, against the stock ones. */
static void test_random(void **state)
{
	static const char *const pieces[] = {
		"a", "b", "c", ".", "%a", "%d", "%s", "%w", "%W", "[ab]", "[^a]",
		"[a-c]", "[%d_]", "*", "+", "-", "?", "(", ")", "()", "%1", "%2",
		"%bab", "%f[a]", "%f[%W]", "^", "$", "%", "[", "]", "=", ",", "x",
	};
	static const char alphabet[] = "aabbc 1_=,x";
	/* head SUBJECT, PATTERN mid, INIT tail */
	static const struct call {
		const char *head, *mid, *tail;
	} calls[] = {
		{ "string.find(", "", ")" },
		{ "string.match(", "", ")" },
		{ "all(string.gmatch(", "", "))" },
		{ "string.gsub(", ", '<%1>'", ")" },
		{ "string.gsub(", ", function(a, b) return b end", ")" },
	};
	unsigned seed = 20240610, n = 0;
	const char *env = getenv("JT_LUAPAT_SEED");

	(void)state;
	if (env)
		seed = (unsigned)strtoul(env, NULL, 10);
	srand(seed);
	for (int k = 0; k < 6000; k++) {
		char pat[128] = "", subj[40], qs[256], qp[512], expr[1200];
		int np = 1 + rand() % 7, ns = rand() % 24;
		const struct call *c;

		for (int i = 0; i < np; i++)
			strcat(pat, pieces[rand() % (sizeof(pieces) / sizeof(pieces[0]))]);
		for (int i = 0; i < ns; i++)
			subj[i] = alphabet[rand() % (sizeof(alphabet) - 1)];
		quote(qs, sizeof(qs), subj, (size_t)ns);
		quote(qp, sizeof(qp), pat, strlen(pat));
		c = &calls[k % (sizeof(calls) / sizeof(calls[0]))];
		snprintf(expr, sizeof(expr), "%s%s, %s%s, %d%s", c->head, qs, qp,
			 c->mid, rand() % 30 - 10, c->tail);
		same(expr);
		n++;
	}
	print_message("%u random cases (seed %u, JT_LUAPAT_SEED to repeat)\n", n, seed);
}

/* A pattern that is one class ("[%s;|]", "%d") is scanned through a table:
 * the same results and errors as the stock matcher, every init. */
static void test_one_class(void **state)
{
	static const char *const classes[] = {
		"[%s;|&`]", "[^%w_%-]", "%d", "%W", "[\"'\\]", "[a-c]", "[]]",
		"[^]]", "%%", ".", "[%a_][", "[", "%", "%z", "[^\0]",
	};
	static const char *const subj[] = {
		"", "abc", "a b;c", "x\\\"y'z", "12ab", "]]a", "%%", "a\0b",
	};
	char expr[512], qs[128], qp[128];

	(void)state;
	for (size_t c = 0; c < sizeof(classes) / sizeof(classes[0]); c++)
		for (size_t t = 0; t < sizeof(subj) / sizeof(subj[0]); t++)
			for (int init = -6; init <= 6; init++) {
				quote(qs, sizeof(qs), subj[t], strlen(subj[t]));
				quote(qp, sizeof(qp), classes[c], strlen(classes[c]));
				snprintf(expr, sizeof(expr), "string.find(%s, %s, %d)", qs, qp, init);
				same(expr);
				snprintf(expr, sizeof(expr), "string.match(%s, %s, %d)", qs, qp, init);
				same(expr);
			}
}

/* s:find() and string.find are ours; the metatable points at our table. */
static void test_installed(void **state)
{
	char *r;

	(void)state;
	r = run(ours, "('x').find == string.find and getmetatable('').__index == string");
	assert_string_equal(r, "1|true|");
	free(r);
	r = run(ours, "('x').gsub == string.gsub and ('x').gmatch == string.gmatch "
		      "and ('x').match == string.match");
	assert_string_equal(r, "1|true|");
	free(r);
	/* ours carries the guard as an upvalue, the stock one has none */
	lua_getglobal(ours, "string");
	lua_getfield(ours, -1, "find");
	assert_non_null(lua_getupvalue(ours, -1, 1));
	lua_pop(ours, 3);
	lua_getglobal(ref, "string");
	lua_getfield(ref, -1, "find");
	assert_null(lua_getupvalue(ref, -1, 1));
	lua_pop(ref, 2);
}

/* A backtracking pattern is stopped by the check; a cheap one never calls it. */
static void test_check_stops(void **state)
{
	static const char *const slow[] = {
		/* every .- tries every end: ~n^8 steps, for ever without a check */
		"string.find(string.rep('a', 2048), '.-.-.-.-.-.-.-.-x')",
		"string.gsub(string.rep('mysql -p', 250), '([^,=]+)=([^,]*)', 'x')",
		"all(string.gmatch(string.rep('a', 2048), '.-.-.-.-x'))",
		"string.match(string.rep('a', 2048), '(a*)*b')",
		"string.find(string.rep('(', 5000), '%b()')",
		NULL,
	};
	char *r;

	(void)state;
	checks = 0;
	stop_after = 0;
	r = run(ours, "string.find('hello world', 'w(o)r')");
	free(r);
	assert_int_equal(checks, 0);
	stop_after = 50;
	for (const char *const *e = slow; *e; e++) {
		checks = 0;
		r = run(ours, *e);
		if (!strstr(r, ": stopped after 50 checks"))
			fail_msg("%s: %s", *e, r);
		free(r);
	}
	stop_after = 0;
	/* the iterator and the state still work after being stopped */
	same("all(string.gmatch('a b', '%a'))");
}

/* Create both states. */
static int setup(void **state)
{
	(void)state;
	ref = new_state(false);
	ours = new_state(true);
	return 0;
}

/* Close both states. */
static int teardown(void **state)
{
	(void)state;
	lua_close(ref);
	lua_close(ours);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_cases),
		cmocka_unit_test(test_random),
		cmocka_unit_test(test_one_class),
		cmocka_unit_test(test_installed),
		cmocka_unit_test(test_check_stops),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
