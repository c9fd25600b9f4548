// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * tokscan.c - word sets, secret formats and code literals for the
 * redaction rules (see tokscan.h).  Linear in the text: every byte costs
 * one bitmap look-up, and only the words that start with that byte pair
 * are compared; a format's pattern runs only where its word stands.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "tokscan.h"

#define MAX_WORDS 4096
#define BUCKETS 4096		/* chains of words by their first two bytes */
#define MAX_WORD_LEN 255
#define MAX_BOUND 16		/* literals one name binds: auth=("u", "p") */
#define DEFAULT_LITERALS 256	/* code_literals' default cap */
#define META "jobtrace.words"

/* One word of a set; text and pattern live in the set's byte area. */
struct tokword {
	uint32_t text;		/* offset of the word (lower case if ICASE) */
	uint32_t pat;		/* offset of its pattern */
	uint32_t plen;		/* pattern bytes, 0: none */
	uint16_t len;
	uint8_t flags;
	int32_t next;		/* next word with the same first byte, or -1 */
};

struct tokscan {
	uint32_t n;
	int32_t head[BUCKETS];	/* first word of each bucket of byte pairs */
	int32_t tail[BUCKETS];
	uint8_t pair[65536 / 8];	/* (first, second) lower-case byte pairs */
	struct tokword w[];	/* n words, then their bytes */
};

/* What stops a pattern at the deadline: an upvalue of every function. */
struct guard {
	luapat_check_fn fn;
	void *ud;
};

/* ASCII lower case. */
static inline unsigned char lc(unsigned char c)
{
	return c >= 'A' && c <= 'Z' ? c + 32 : c;
}

/* A letter or a digit. */
static inline bool alnum(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
	       (c >= 'A' && c <= 'Z');
}

/* A byte of an identifier or a key as code_named reads them. */
static inline bool idch(unsigned char c)
{
	return alnum(c) || c == '_' || c == '-';
}

/* A blank between tokens of code. */
static inline bool blank(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* A quote that opens a string literal. */
static inline bool quote(unsigned char c)
{
	return c == '"' || c == '\'' || c == '`';
}

/* The bytes of the set (after the words). */
static inline const char *bytes_of(const struct tokscan *ts)
{
	return (const char *)&ts->w[ts->n];
}

/* Does word w stand at s[i] (text and boundaries)? */
static bool word_at(const struct tokscan *ts, const struct tokword *w,
		    const char *s, size_t len, size_t i)
{
	const unsigned char *t = (const unsigned char *)bytes_of(ts) + w->text;
	const unsigned char *u = (const unsigned char *)s + i;

	if (w->len > len - i)
		return false;
	if (w->flags & TOKSCAN_ICASE) {
		for (size_t k = 0; k < w->len; k++)
			if (lc(u[k]) != t[k])
				return false;
	} else if (memcmp(u, t, w->len) != 0) {
		return false;
	}
	if ((w->flags & TOKSCAN_LEFT) && i > 0 && alnum(u[-1]))
		return false;
	if ((w->flags & TOKSCAN_RIGHT) && i + w->len < len) {
		unsigned char c = u[w->len];

		if (alnum(c) || c == '_' || c == '-' || c == '.' || c == ':')
			return false;
	}
	return true;
}

/* The pair of (lower-case) bytes a and b as a number. */
static inline unsigned pair_of(unsigned char a, unsigned char b)
{
	return (unsigned)lc(a) << 8 | lc(b);
}

/* The chain of words that begin with pair k. */
static inline unsigned bucket(unsigned k)
{
	return (k * 2654435761u) >> 20 & (BUCKETS - 1);
}

/* The first word that may start with the pair k (-1 if none): the bitmap
 * says whether any word does, the bucket holds the few that may. */
static inline int32_t first_at(const struct tokscan *ts, unsigned k)
{
	if (!(ts->pair[k >> 3] & (1u << (k & 7))))
		return -1;
	return ts->head[bucket(k)];
}

/* Find the next word; see tokscan.h. */
bool tokscan_find(const struct tokscan *ts, const char *s, size_t len,
		  size_t from, size_t *at, unsigned *word)
{
	for (size_t i = from; i + 1 < len; i++) {
		for (int32_t k = first_at(ts, pair_of((unsigned char)s[i],
						      (unsigned char)s[i + 1]));
		     k >= 0; k = ts->w[k].next) {
			if (word_at(ts, &ts->w[k], s, len, i)) {
				*at = i;
				*word = (unsigned)k;
				return true;
			}
		}
	}
	return false;
}

/* A quote or a backslash, which a shell takes out: c"url" is curl. */
static inline bool shq(unsigned char c)
{
	return c == '"' || c == '\'' || c == '\\';
}

/* word_at on the text with quotes and backslashes taken out; *end gets
 * the offset just after the word's last byte. */
static bool word_at_unquoted(const struct tokscan *ts, const struct tokword *w,
			     const char *s, size_t len, size_t i, size_t *end)
{
	const unsigned char *t = (const unsigned char *)bytes_of(ts) + w->text;
	const unsigned char *u = (const unsigned char *)s;
	size_t j = i, p = i;

	for (size_t k = 0; k < w->len; k++) {
		while (k > 0 && j < len && shq(u[j]))
			j++;
		if (j >= len)
			return false;
		if ((w->flags & TOKSCAN_ICASE) ? lc(u[j]) != t[k] : u[j] != t[k])
			return false;
		j++;
	}
	while (p > 0 && shq(u[p - 1]))
		p--;
	if ((w->flags & TOKSCAN_LEFT) && p > 0 && alnum(u[p - 1]))
		return false;
	if (w->flags & TOKSCAN_RIGHT) {
		size_t q = j;

		while (q < len && shq(u[q]))
			q++;
		if (q < len && (alnum(u[q]) || u[q] == '_' || u[q] == '-' ||
				u[q] == '.' || u[q] == ':'))
			return false;
	}
	*end = j;
	return true;
}

/* Find the next word as a shell would read the text; see tokscan.h. */
bool tokscan_find_unquoted(const struct tokscan *ts, const char *s, size_t len,
			   size_t from, size_t *at, size_t *end, unsigned *word)
{
	for (size_t i = from; i + 1 < len; i++) {
		size_t i2 = i + 1;
		unsigned b;

		if (shq((unsigned char)s[i]))
			continue;
		while (i2 < len && shq((unsigned char)s[i2]))
			i2++;
		if (i2 >= len)
			return false;
		b = pair_of((unsigned char)s[i], (unsigned char)s[i2]);
		for (int32_t k = first_at(ts, b); k >= 0; k = ts->w[k].next) {
			if (word_at_unquoted(ts, &ts->w[k], s, len, i, end)) {
				*at = i;
				*word = (unsigned)k;
				return true;
			}
		}
	}
	return false;
}

/* Read the literal at code[at]; see tokscan.h. */
void tokscan_literal(const char *code, size_t len, size_t at,
		     struct tokscan_lit *lit)
{
	char q = code[at];
	size_t i = at + 1;
	bool triple = q != '`' && at + 2 < len && code[at + 1] == q &&
		      code[at + 2] == q;

	if (triple)
		i = at + 3;
	lit->start = i;
	lit->open = false;
	while (i < len) {
		char c = code[i];

		if (c == '\\' && i + 1 < len) {
			i += 2;
			continue;
		}
		if (c == q) {
			if (triple) {
				if (i + 2 < len && code[i + 1] == q && code[i + 2] == q) {
					lit->end = i;
					lit->next = i + 3;
					return;
				}
			} else if (q == '\'' && i > lit->start && i + 1 < len &&
				   code[i + 1] == '\'') {
				i += 2;		/* SQL's '' inside '...' */
				continue;
			} else {
				lit->end = i;
				lit->next = i + 1;
				return;
			}
		}
		i++;
	}
	lit->end = len;
	lit->next = len;
	lit->open = true;
}

/* The word set argument idx, checked. */
static struct tokscan *check_set(lua_State *L, int idx)
{
	return luaL_checkudata(L, idx, META);
}

/* Read entry i of the list at index 1: word, flags, pattern. */
static void read_entry(lua_State *L, lua_Integer i, const char **word,
		       size_t *wlen, uint8_t *flags, const char **pat,
		       size_t *plen)
{
	int t = lua_rawgeti(L, 1, i);

	*pat = NULL;
	*plen = 0;
	*flags = TOKSCAN_ICASE;
	if (t == LUA_TSTRING) {
		*word = lua_tolstring(L, -1, wlen);
	} else if (t == LUA_TTABLE) {
		int top = lua_gettop(L);

		if (lua_rawgeti(L, top, 1) != LUA_TSTRING)
			luaL_error(L, "words: entry %d: the word must be a string", (int)i);
		*word = lua_tolstring(L, -1, wlen);
		if (lua_getfield(L, top, "icase") != LUA_TNIL && !lua_toboolean(L, -1))
			*flags &= (uint8_t)~TOKSCAN_ICASE;
		if (lua_getfield(L, top, "left") != LUA_TNIL && lua_toboolean(L, -1))
			*flags |= TOKSCAN_LEFT;
		if (lua_getfield(L, top, "right") != LUA_TNIL && lua_toboolean(L, -1))
			*flags |= TOKSCAN_RIGHT;
		t = lua_getfield(L, top, "pattern");
		if (t == LUA_TSTRING)
			*pat = lua_tolstring(L, -1, plen);
		else if (t != LUA_TNIL)
			luaL_error(L, "words: entry %d: pattern must be a string", (int)i);
		/* the strings stay referenced by the list while we copy */
		lua_settop(L, top);
	} else {
		luaL_error(L, "words: entry %d is a %s, not a string or a table",
			   (int)i, luaL_typename(L, -1));
	}
	if (*wlen < 2 || *wlen > MAX_WORD_LEN)
		luaL_error(L, "words: entry %d: a word of 2 to %d bytes", (int)i,
			   MAX_WORD_LEN);
}

/* jobtrace.words(list): a word set. */
static int l_words(lua_State *L)
{
	lua_Integer n;
	size_t total = 0, off = 0;
	struct tokscan *ts;
	char *buf;

	luaL_checktype(L, 1, LUA_TTABLE);
	n = luaL_len(L, 1);
	luaL_argcheck(L, n >= 0 && n <= MAX_WORDS, 1, "at most 4096 words");
	for (lua_Integer i = 1; i <= n; i++) {
		const char *w, *p;
		size_t wl, pl;
		uint8_t f;

		read_entry(L, i, &w, &wl, &f, &p, &pl);
		total += wl + pl + 1;	/* a pattern ends with a NUL, as Lua's do */
		lua_pop(L, 1);
	}
	ts = lua_newuserdatauv(L, sizeof(*ts) + (size_t)n * sizeof(ts->w[0]) +
				  total + 1, 0);
	memset(ts, 0, sizeof(*ts));
	ts->n = (uint32_t)n;
	for (int c = 0; c < BUCKETS; c++)
		ts->head[c] = ts->tail[c] = -1;
	buf = (char *)&ts->w[n];
	for (lua_Integer i = 1; i <= n; i++) {
		struct tokword *tw = &ts->w[i - 1];
		const char *w, *p;
		size_t wl, pl;
		uint8_t f;
		unsigned k, b;

		read_entry(L, i, &w, &wl, &f, &p, &pl);
		tw->text = (uint32_t)off;
		tw->len = (uint16_t)wl;
		tw->flags = f;
		for (size_t j = 0; j < wl; j++)
			buf[off + j] = (f & TOKSCAN_ICASE) ?
				       (char)lc((unsigned char)w[j]) : w[j];
		off += wl;
		tw->pat = (uint32_t)off;
		tw->plen = (uint32_t)pl;
		if (pl)
			memcpy(buf + off, p, pl);
		/* the matcher reads the byte after a pattern's last (a Lua
		 * string's NUL) to find where an item ends */
		buf[off + pl] = '\0';
		off += pl + 1;
		lua_pop(L, 1);
		k = pair_of((unsigned char)w[0], (unsigned char)w[1]);
		ts->pair[k >> 3] |= (uint8_t)(1u << (k & 7));
		/* keep the list's order among the words of one bucket */
		b = bucket(k);
		tw->next = -1;
		if (ts->tail[b] >= 0)
			ts->w[ts->tail[b]].next = (int32_t)(i - 1);
		else
			ts->head[b] = (int32_t)(i - 1);
		ts->tail[b] = (int32_t)(i - 1);
	}
	luaL_setmetatable(L, META);
	return 1;
}

/* Find in s from init (1-based), plainly or unquoted: found, 0-based
 * start and end (past the word), word. */
static bool find_in(const struct tokscan *ts, const char *s, size_t len,
		    lua_Integer init, bool unquoted, size_t *at, size_t *end,
		    unsigned *w)
{
	if (init < 1)
		init = 1;
	if ((size_t)init > len)
		return false;
	if (unquoted)
		return tokscan_find_unquoted(ts, s, len, (size_t)init - 1, at, end, w);
	if (!tokscan_find(ts, s, len, (size_t)init - 1, at, w))
		return false;
	*end = *at + ts->w[*w].len;
	return true;
}

/* W:find(s [, init [, unquoted]]): start, end, word number of the first
 * word, or nil; unquoted: as a shell reads s (c"url" holds curl). */
static int l_find(lua_State *L)
{
	const struct tokscan *ts = check_set(L, 1);
	size_t len, at, end;
	const char *s = luaL_checklstring(L, 2, &len);
	unsigned w;

	if (!find_in(ts, s, len, luaL_optinteger(L, 3, 1), lua_toboolean(L, 4),
		     &at, &end, &w)) {
		lua_pushnil(L);
		return 1;
	}
	lua_pushinteger(L, (lua_Integer)at + 1);
	lua_pushinteger(L, (lua_Integer)end);
	lua_pushinteger(L, (lua_Integer)w + 1);
	return 3;
}

/* W:first(list [, i [, unquoted]]): the index of the first string of
 * list[i..] holding a word, and that word's number; nil when none does. */
static int l_first(lua_State *L)
{
	const struct tokscan *ts = check_set(L, 1);
	lua_Integer n, i = luaL_optinteger(L, 3, 1);
	bool unquoted = lua_toboolean(L, 4);

	luaL_checktype(L, 2, LUA_TTABLE);
	n = luaL_len(L, 2);
	for (; i <= n; i++) {
		size_t len, at, end;
		const char *s;
		unsigned w;

		if (lua_rawgeti(L, 2, i) != LUA_TSTRING) {
			lua_pop(L, 1);
			continue;
		}
		s = lua_tolstring(L, -1, &len);
		if (find_in(ts, s, len, 1, unquoted, &at, &end, &w)) {
			lua_pop(L, 1);
			lua_pushinteger(L, i);
			lua_pushinteger(L, (lua_Integer)w + 1);
			return 2;
		}
		lua_pop(L, 1);
	}
	lua_pushnil(L);
	return 1;
}

/* W:scan(s): { word, first, last, ... } of every format match, or nil. */
static int l_scan(lua_State *L)
{
	const struct guard *g = lua_touserdata(L, lua_upvalueindex(1));
	const struct tokscan *ts = check_set(L, 1);
	const char *bytes = bytes_of(ts);
	size_t len, i = 0;
	const char *s = luaL_checklstring(L, 2, &len);
	lua_Integer n = 0;
	int out = 0;

	while (i + 1 < len) {
		size_t next = i + 1;

		for (int32_t k = first_at(ts, pair_of((unsigned char)s[i],
						      (unsigned char)s[i + 1]));
		     k >= 0; k = ts->w[k].next) {
			const struct tokword *w = &ts->w[k];
			size_t pos[2], a, b;
			ptrdiff_t e;
			int np = 0;

			if (!w->plen || !word_at(ts, w, s, len, i))
				continue;
			e = luapat_match_at(L, s, len, i, bytes + w->pat, w->plen,
					    g->fn, g->ud, pos, &np);
			if (e < 0)
				continue;
			a = np == 2 ? pos[0] : i;
			b = np == 2 ? pos[1] : (size_t)e;
			if (b > a) {
				if (!out) {
					lua_newtable(L);
					out = lua_gettop(L);
				}
				lua_pushinteger(L, k + 1);
				lua_rawseti(L, out, ++n);
				lua_pushinteger(L, (lua_Integer)a + 1);
				lua_rawseti(L, out, ++n);
				lua_pushinteger(L, (lua_Integer)b);
				lua_rawseti(L, out, ++n);
			}
			if ((size_t)e > i)
				next = (size_t)e;
			break;
		}
		i = next;
	}
	if (!out)
		lua_pushnil(L);
	return 1;
}

/* Skip blanks from p. */
static size_t skip_blanks(const char *c, size_t n, size_t p)
{
	while (p < n && blank((unsigned char)c[p]))
		p++;
	return p;
}

/* The length of the operator at c[p] that binds a name to what follows, or
 * 0 (quoted: the name was a quoted key). */
static size_t bind_op(const char *c, size_t n, size_t p, bool quoted)
{
	static const char *const ops[] = { ":=", "<<-", "<-", "=>", "===",
					   "!==", "==", "!=", "=", ":", NULL };

	for (const char *const *o = ops; *o; o++) {
		size_t l = strlen(*o);

		if (l <= n - p && memcmp(c + p, *o, l) == 0) {
			if (l == 1 && c[p] == ':' && p + 1 < n && c[p + 1] == ':')
				return 0;	/* a scope, C++'s :: */
			return l;
		}
	}
	if (p < n && c[p] == ',' && quoted)
		return 1;	/* putenv("TOKEN", "x") */
	if (p < n && c[p] == '(' && !quoted)
		return 1;	/* set_password("x") */
	return 0;
}

/* Is c[a..b) the word w (lower case), whatever its case? */
static bool is_word(const char *c, size_t a, size_t b, const char *w)
{
	size_t l = strlen(w);

	if (b - a != l)
		return false;
	for (size_t k = 0; k < l; k++)
		if (lc((unsigned char)c[a + k]) != (unsigned char)w[k])
			return false;
	return true;
}

/* Push name c[a..b) and the literal's content span as three entries. */
static void push_bound(lua_State *L, int out, lua_Integer *n, const char *c,
		       size_t a, size_t b, const struct tokscan_lit *lit)
{
	lua_pushlstring(L, c + a, b - a);
	lua_rawseti(L, out, ++*n);
	lua_pushinteger(L, (lua_Integer)lit->start + 1);
	lua_rawseti(L, out, ++*n);
	lua_pushinteger(L, (lua_Integer)lit->end);
	lua_rawseti(L, out, ++*n);
}

/*
 * jobtrace.code_named(code, words): { name, first, last, ... } for every
 * string literal that a name holding one of the words binds, or nil.
 */
static int l_code_named(lua_State *L)
{
	size_t n, from = 0, last_end = 0, at;
	const char *c = luaL_checklstring(L, 1, &n);
	const struct tokscan *ts = check_set(L, 2);
	lua_Integer cnt = 0;
	unsigned w;
	int out;

	lua_newtable(L);
	out = lua_gettop(L);
	while (from < n && tokscan_find(ts, c, n, from, &at, &w)) {
		size_t a = at, b = at + ts->w[w].len, p, op, bound = 0;
		bool quoted = false, had_blank, opener;
		unsigned char q;

		from = at + 1;
		while (a > 0 && idch((unsigned char)c[a - 1]))
			a--;
		while (b < n && idch((unsigned char)c[b]))
			b++;
		if (a < last_end)
			continue;	/* a word inside the last name */
		last_end = b;
		from = b;
		p = b;
		q = a > 0 ? (unsigned char)c[a - 1] : 0;
		if (quote(q) && p < n && (unsigned char)c[p] == q) {
			quoted = true;
			p++;
		}
		p = skip_blanks(c, n, p);
		had_blank = p > b + quoted;
		for (int k = 0; k < 2 && p < n && (c[p] == ']' || c[p] == '}'); k++)
			p = skip_blanks(c, n, p + 1);
		if (!quoted && is_word(c, a, b, "identified") && p + 2 < n &&
		    lc((unsigned char)c[p]) == 'b' && lc((unsigned char)c[p + 1]) == 'y' &&
		    blank((unsigned char)c[p + 2])) {
			p = skip_blanks(c, n, p + 2);	/* SQL: IDENTIFIED BY 'x' */
			had_blank = true;
		}
		op = p < n ? bind_op(c, n, p, quoted) : 0;
		if (!op && !quoted && had_blank && p + 2 < n && is_word(c, p, p + 2, "to") &&
		    blank((unsigned char)c[p + 2]))
			op = 2;		/* AppleScript: set password to "x" */
		if (op == 0 && (quoted || !had_blank))
			continue;	/* SQL's PASSWORD 'x' needs the blank */
		/* set_password("a", "b"), auth=("u", "p"), k => ["a", "b"] */
		opener = op == 1 && c[p] == '(';
		p = skip_blanks(c, n, p + op);
		if (!opener && p < n && (c[p] == '(' || c[p] == '[' || c[p] == '{')) {
			opener = true;
			p = skip_blanks(c, n, p + 1);
		}
		while (p < n && bound < MAX_BOUND) {
			struct tokscan_lit lit;
			size_t k = p;

			/* python's r"", b'', f"", rb'' */
			while (k < n && k < p + 2 && strchr("rRbBfFuU", c[k]) && c[k])
				k++;
			if (k >= n || !quote((unsigned char)c[k]))
				break;
			tokscan_literal(c, n, k, &lit);
			push_bound(L, out, &cnt, c, a, b, &lit);
			bound++;
			p = lit.next;
			if (!opener || lit.open)
				break;
			p = skip_blanks(c, n, p);
			if (p < n && (c[p] == ',' || c[p] == ':'))
				p = skip_blanks(c, n, p + 1);
			else
				break;
		}
	}
	if (cnt == 0)
		lua_pushnil(L);
	return 1;
}

/* One string literal of code_literals: content span, joined to the last. */
struct lit_span {
	size_t start, end;
	bool joined;
};

/*
 * jobtrace.code_literals(code [, max [, words]]): { first, last, joined,
 * ... } of the string literals of code in order (content spans; joined:
 * only blanks and at least one comma since the previous one), at most max
 * (256), or nil.  With a word set, only the runs of joined literals (a
 * list, an argument list) of which one holds a word.
 */
static int l_code_literals(lua_State *L)
{
	size_t n, p = 0, prev_next = 0, cnt = 0;
	const char *c = luaL_checklstring(L, 1, &n);
	lua_Integer max = luaL_optinteger(L, 2, DEFAULT_LITERALS), k = 0, emitted = 0;
	const struct tokscan *ts = lua_isnoneornil(L, 3) ? NULL : check_set(L, 3);
	struct lit_span *lits;
	int out;

	/* a literal takes two quotes: at most n / 2 + 1 of them */
	lits = lua_newuserdatauv(L, (n / 2 + 1) * sizeof(*lits), 0);
	while (p < n) {
		struct tokscan_lit lit;
		bool joined = cnt > 0, comma = false;

		while (p < n && !quote((unsigned char)c[p]))
			p++;
		if (p >= n)
			break;
		for (size_t i = prev_next; joined && i < p; i++) {
			if (c[i] == ',')
				comma = true;
			else if (!blank((unsigned char)c[i]))
				joined = false;
		}
		tokscan_literal(c, n, p, &lit);
		lits[cnt].start = lit.start;
		lits[cnt].end = lit.end;
		lits[cnt].joined = joined && comma;
		cnt++;
		p = prev_next = lit.next;
	}
	lua_newtable(L);
	out = lua_gettop(L);
	for (size_t r = 0; r < cnt && emitted < max;) {
		size_t e = r + 1, at;
		bool hit = ts == NULL;
		unsigned w;

		while (e < cnt && lits[e].joined)
			e++;
		for (size_t i = r; !hit && i < e; i++)
			hit = tokscan_find(ts, c + lits[i].start,
					   lits[i].end - lits[i].start, 0, &at, &w);
		for (size_t i = r; hit && i < e && emitted < max; i++, emitted++) {
			lua_pushinteger(L, (lua_Integer)lits[i].start + 1);
			lua_rawseti(L, out, ++k);
			lua_pushinteger(L, (lua_Integer)lits[i].end);
			lua_rawseti(L, out, ++k);
			lua_pushboolean(L, i > r && lits[i].joined);
			lua_rawseti(L, out, ++k);
		}
		r = e;
	}
	if (emitted == 0)
		lua_pushnil(L);
	return 1;
}

/* Add words, code_named, code_literals and the set's methods; see tokscan.h. */
void tokscan_install(lua_State *L, int idx, luapat_check_fn check, void *ud)
{
	static const luaL_Reg methods[] = {
		{ "find", l_find },
		{ "first", l_first },
		{ "scan", l_scan },
		{ NULL, NULL },
	};
	static const luaL_Reg funcs[] = {
		{ "words", l_words },
		{ "code_named", l_code_named },
		{ "code_literals", l_code_literals },
		{ NULL, NULL },
	};
	struct guard *g;

	lua_pushvalue(L, idx);
	if (luaL_newmetatable(L, META)) {
		lua_createtable(L, 0, 3);
		g = lua_newuserdatauv(L, sizeof(*g), 0);
		g->fn = check;
		g->ud = ud;
		luaL_setfuncs(L, methods, 1);
		lua_setfield(L, -2, "__index");
		lua_pushboolean(L, 0);
		lua_setfield(L, -2, "__metatable");
	}
	lua_pop(L, 1);
	luaL_setfuncs(L, funcs, 0);
	lua_pop(L, 1);
}
