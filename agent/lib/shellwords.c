// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * shellwords.c - POSIX shell word splitting for the redaction rules (the
 * quoting rules are in shellwords.h).  One pass, no allocation: the caller
 * gives the room for the unquoted text.
 */
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "shellwords.h"

/* A blank between words (a newline is an operator). */
static bool blank(char c)
{
	return c == ' ' || c == '\t';
}

/* A byte that starts an operator when unquoted. */
static bool opchar(char c)
{
	switch (c) {
	case ';': case '&': case '|': case '(': case ')':
	case '<': case '>': case '`': case '\n':
		return true;
	default:
		return false;
	}
}

/* Length of the operator at s[i]: its longest form. */
static size_t op_len(const char *s, size_t len, size_t i)
{
	static const char *const ops[] = {
		"<<-", "<<<", "&>>", ";;&",
		"&&", "||", ";;", ">>", "<<", "<&", ">&", "<>", ">|", "&>",
		"|&", ";&", NULL
	};

	for (const char *const *o = ops; *o; o++) {
		size_t n = strlen(*o);

		if (n <= len - i && memcmp(s + i, *o, n) == 0)
			return n;
	}
	return 1;
}

/* Append byte c (from s[at]) to the unquoted text. */
static void put(char *out, size_t *map, size_t *o, char c, size_t at)
{
	if (out)
		out[*o] = c;
	if (map)
		map[*o] = at;
	(*o)++;
}

/* Read the next token; see shellwords.h. */
bool shellwords_next(const char *s, size_t len, size_t *pos,
		     struct shellword *w, char *out, size_t *map)
{
	size_t i = *pos, o = 0;
	char q = 0;	/* the quote we are in, or 0 */

	/* blanks and joined lines between words */
	while (i < len && (blank(s[i]) ||
			   (s[i] == '\\' && i + 1 < len && s[i + 1] == '\n')))
		i += blank(s[i]) ? 1 : 2;
	if (i >= len) {
		*pos = len;
		return false;
	}
	w->start = i;
	w->op = false;
	if (opchar(s[i])) {
		w->op = true;
		w->end = i + op_len(s, len, i);
		w->len = 0;
		*pos = w->end;
		return true;
	}
	while (i < len) {
		char c = s[i];

		if (q == '\'') {
			if (c == '\'')
				q = 0;
			else
				put(out, map, &o, c, i);
			i++;
		} else if (q == '"') {
			if (c == '"') {
				q = 0;
			} else if (c == '\\' && i + 1 < len &&
				   strchr("$`\"\\\n", s[i + 1]) && s[i + 1]) {
				if (s[i + 1] != '\n')
					put(out, map, &o, s[i + 1], i + 1);
				i++;
			} else {
				put(out, map, &o, c, i);
			}
			i++;
		} else if (blank(c) || opchar(c)) {
			break;
		} else if (c == '\'' || c == '"') {
			q = c;
			i++;
		} else if (c == '\\' && i + 1 < len) {
			if (s[i + 1] != '\n')
				put(out, map, &o, s[i + 1], i + 1);
			i += 2;
		} else {
			/* a backslash at the very end stays itself */
			put(out, map, &o, c, i);
			i++;
		}
	}
	w->end = i;
	w->len = o;
	*pos = i;
	return true;
}

/* jobtrace.shell_words(s): words (false for operators), starts, ends. */
int shellwords_lua_words(lua_State *L)
{
	size_t len, pos = 0;
	const char *s = luaL_checklstring(L, 1, &len);
	char *out = lua_newuserdatauv(L, len ? len : 1, 0);
	struct shellword w;
	lua_Integer n = 0;
	int t;

	lua_newtable(L);
	t = lua_gettop(L);
	lua_newtable(L);
	lua_newtable(L);
	while (shellwords_next(s, len, &pos, &w, out, NULL)) {
		n++;
		if (w.op)
			lua_pushboolean(L, 0);
		else
			lua_pushlstring(L, out, w.len);
		lua_rawseti(L, t, n);
		lua_pushinteger(L, (lua_Integer)w.start + 1);
		lua_rawseti(L, t + 1, n);
		lua_pushinteger(L, (lua_Integer)w.end);
		lua_rawseti(L, t + 2, n);
	}
	return 3;
}

/* jobtrace.shell_span(s, start, i, j): bytes of s behind unquoted i..j. */
int shellwords_lua_span(lua_State *L)
{
	size_t len, pos;
	const char *s = luaL_checklstring(L, 1, &len);
	lua_Integer start = luaL_checkinteger(L, 2);
	lua_Integer i = luaL_checkinteger(L, 3), j = luaL_checkinteger(L, 4);
	struct shellword w;
	size_t *map, first;

	luaL_argcheck(L, start >= 1 && (lua_Unsigned)start <= len, 2,
		      "not a byte of the string");
	pos = (size_t)start - 1;
	if (!shellwords_next(s, len, &pos, &w, NULL, NULL) || w.op ||
	    w.start != (size_t)start - 1)
		return luaL_argerror(L, 2, "no word starts there");
	/* again with the map, sized for this word only */
	pos = w.start;
	map = lua_newuserdatauv(L, (w.end - w.start + 1) * sizeof(*map), 0);
	shellwords_next(s, len, &pos, &w, NULL, map);
	luaL_argcheck(L, i >= 1 && i <= j && (lua_Unsigned)j <= w.len, 3,
		      "not bytes of the word");
	first = map[i - 1];
	/* the backslash that escapes byte i goes with it */
	if (first > w.start && s[first - 1] == '\\' &&
	    (i == 1 || map[i - 2] != first - 1))
		first--;
	lua_pushinteger(L, (lua_Integer)first + 1);
	lua_pushinteger(L, (lua_Integer)map[j - 1] + 1);
	return 2;
}
