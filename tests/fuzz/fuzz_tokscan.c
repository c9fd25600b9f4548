// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_tokscan.c - the word sets, formats and code readers of
 * agent/lib/tokscan.c on any text (a command line's argument is anyone's).
 *
 * Input: lines up to the first empty line are words ("FLAGS WORD[\tPATTERN]",
 * FLAGS a digit 0-7: icase 1, left 2, right 4), the rest is the text.
 * Checks: find and first agree with a naive search (every position, every
 * word in order); find reading the text as a shell does agrees with find on
 * the text with its quotes and backslashes taken out; scan's spans lie in
 * the text, in order, without overlap; code_named's names lie in the text
 * and its spans are in bounds; code_literals' spans are in order and in
 * bounds; a pattern that runs long is stopped by the check, not hung.
 */
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "fuzz.h"
#include "tokscan.h"

#define MAX_WORDS 16
#define MAX_STEPS 200	/* checks (LUAPAT_CHECK_STEPS each) before a stop */

static unsigned long checks;

/* Stop a pattern that runs long, as the rules' deadline does. */
static void check(lua_State *L, void *ud)
{
	(void)ud;
	if (++checks > MAX_STEPS)
		luaL_error(L, "stopped");
}

/* ASCII lower case. */
static unsigned char lc(unsigned char c)
{
	return c >= 'A' && c <= 'Z' ? c + 32 : c;
}

/* A letter or a digit. */
static int alnum(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
	       (c >= 'A' && c <= 'Z');
}

struct word {
	const char *w;
	size_t len;
	int flags;
};

/* The first word at or after from in s, the slow way. */
static int naive(const struct word *ws, int n, const char *s, size_t len,
		 size_t from, size_t *at, unsigned *which)
{
	for (size_t i = from; i < len; i++) {
		for (int k = 0; k < n; k++) {
			const struct word *w = &ws[k];
			size_t j;

			if (w->len > len - i)
				continue;
			for (j = 0; j < w->len; j++) {
				unsigned char a = (unsigned char)s[i + j], b = (unsigned char)w->w[j];

				if ((w->flags & TOKSCAN_ICASE) ? lc(a) != lc(b) : a != b)
					break;
			}
			if (j < w->len)
				continue;
			if ((w->flags & TOKSCAN_LEFT) && i > 0 && alnum((unsigned char)s[i - 1]))
				continue;
			if ((w->flags & TOKSCAN_RIGHT) && i + w->len < len) {
				unsigned char c = (unsigned char)s[i + w->len];

				if (alnum(c) || c == '_' || c == '-' || c == '.' || c == ':')
					continue;
			}
			*at = i;
			*which = (unsigned)k;
			return 1;
		}
	}
	return 0;
}

/* Call jobtrace.NAME(args at the stack top...) protected; 1 if it ran. */
static int call(lua_State *L, const char *name, int nargs)
{
	lua_getglobal(L, "jobtrace");
	lua_getfield(L, -1, name);
	lua_remove(L, -2);
	lua_insert(L, -1 - nargs);
	checks = 0;
	if (lua_pcall(L, nargs, 1, 0) != LUA_OK) {
		lua_pop(L, 1);
		return 0;
	}
	return 1;
}

/* Check a flat result table at the top: groups of `per`, spans in [1, n+1]. */
static void spans_ok(lua_State *L, size_t n, int per, int first, int ordered)
{
	lua_Integer len = (lua_Integer)luaL_len(L, -1), last = 0;

	FUZZ_CHECK(len % per == 0);
	for (lua_Integer i = 1; i <= len; i += per) {
		lua_Integer a, b;

		lua_rawgeti(L, -1, i + first);
		lua_rawgeti(L, -2, i + first + 1);
		a = lua_tointeger(L, -2);
		b = lua_tointeger(L, -1);
		lua_pop(L, 2);
		FUZZ_CHECK(a >= 1 && a <= (lua_Integer)n + 1);
		FUZZ_CHECK(b >= a - 1 && b <= (lua_Integer)n);
		if (ordered)
			FUZZ_CHECK(a > last);
		last = b;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *in = fuzz_strndup(data, size), *p = in, *text;
	struct word ws[MAX_WORDS];
	int n = 0;
	size_t tlen, at, end;
	unsigned which;
	lua_State *L;
	const struct tokscan *ts;

	if (!in)
		return 0;
	/* the words, one a line, to the first empty line */
	while (*p && *p != '\n' && n < MAX_WORDS) {
		char *nl = strchr(p, '\n'), *tab;

		if (!nl)
			break;
		*nl = '\0';
		tab = strchr(p, '\t');
		if (tab)
			*tab = '\0';
		if (p[0] >= '0' && p[0] <= '7' && strlen(p + 1) >= 2 && strlen(p + 1) <= 255) {
			ws[n].w = p + 1;
			ws[n].len = strlen(p + 1);
			ws[n].flags = p[0] - '0';
			n++;
		}
		if (tab)
			*tab = '\t';
		p = nl + 1;
	}
	if (*p == '\n')
		p++;
	text = p;
	tlen = size - (size_t)(text - in);
	if (n == 0) {
		free(in);
		return 0;
	}
	L = luaL_newstate();
	luaL_openlibs(L);
	lua_newtable(L);
	tokscan_install(L, -1, check, NULL);
	lua_setglobal(L, "jobtrace");
	/* the set, with the patterns after a tab */
	lua_createtable(L, n, 0);
	for (int k = 0; k < n; k++) {
		const char *tab = ws[k].w + ws[k].len;

		lua_createtable(L, 1, 4);
		lua_pushlstring(L, ws[k].w, ws[k].len);
		lua_rawseti(L, -2, 1);
		lua_pushboolean(L, ws[k].flags & TOKSCAN_ICASE);
		lua_setfield(L, -2, "icase");
		lua_pushboolean(L, ws[k].flags & TOKSCAN_LEFT);
		lua_setfield(L, -2, "left");
		lua_pushboolean(L, ws[k].flags & TOKSCAN_RIGHT);
		lua_setfield(L, -2, "right");
		if (*tab == '\t') {
			lua_pushstring(L, tab + 1);
			lua_setfield(L, -2, "pattern");
		}
		lua_rawseti(L, -2, k + 1);
	}
	FUZZ_CHECK(call(L, "words", 1));
	ts = lua_touserdata(L, -1);
	lua_setglobal(L, "W");

	/* find: every start agrees with the naive search */
	for (size_t from = 0; from <= tlen && from < 64; from++) {
		size_t a2 = 0;
		unsigned w2 = 0;
		int f1 = tokscan_find(ts, text, tlen, from, &at, &which);
		int f2 = naive(ws, n, text, tlen, from, &a2, &w2);

		FUZZ_CHECK(f1 == f2);
		if (f1)
			FUZZ_CHECK(at == a2 && which == w2);
	}
	/* unquoted: find on the text with quotes and backslashes out */
	{
		char *plain = malloc(tlen + 1);
		size_t *map = malloc((tlen + 1) * sizeof(*map)), m = 0;
		int f1, f2;

		FUZZ_CHECK(plain && map);
		for (size_t i = 0; i < tlen; i++) {
			if (text[i] == '"' || text[i] == '\'' || text[i] == '\\')
				continue;
			map[m] = i;
			plain[m++] = text[i];
		}
		{
			size_t a2 = 0;
			unsigned w2 = 0;

			f1 = tokscan_find_unquoted(ts, text, tlen, 0, &at, &end, &which);
			f2 = naive(ws, n, plain, m, 0, &a2, &w2);
			FUZZ_CHECK(f1 == f2);
			if (f1) {
				FUZZ_CHECK(at == map[a2] && which == w2);
				FUZZ_CHECK(end == map[a2 + ws[w2].len - 1] + 1);
			}
		}
		free(plain);
		free(map);
	}
	/* scan, code_named, code_literals over the text */
	lua_getglobal(L, "W");
	lua_getfield(L, -1, "scan");
	lua_insert(L, -2);
	lua_pushlstring(L, text, tlen);
	checks = 0;
	if (lua_pcall(L, 2, 1, 0) == LUA_OK) {
		if (lua_istable(L, -1))
			spans_ok(L, tlen, 3, 1, 1);
	}
	lua_settop(L, 0);
	lua_pushlstring(L, text, tlen);
	lua_getglobal(L, "W");
	if (call(L, "code_named", 2)) {
		if (lua_istable(L, -1)) {
			lua_Integer len = (lua_Integer)luaL_len(L, -1);

			spans_ok(L, tlen, 3, 1, 0);
			for (lua_Integer i = 1; i <= len; i += 3) {
				size_t nl;
				const char *name;

				lua_rawgeti(L, -1, i);
				name = lua_tolstring(L, -1, &nl);
				FUZZ_CHECK(name && nl > 0 && memmem(text, tlen, name, nl));
				lua_pop(L, 1);
			}
		}
	}
	lua_settop(L, 0);
	lua_pushlstring(L, text, tlen);
	lua_pushinteger(L, 100000);
	lua_getglobal(L, "W");
	if (call(L, "code_literals", 3)) {
		if (lua_istable(L, -1))
			spans_ok(L, tlen, 3, 0, 1);
	}
	lua_close(L);
	free(in);
	return 0;
}
