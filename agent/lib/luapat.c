// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * luapat.c - Lua 5.4 patterns with a step count (see luapat.h).
 *
 * Written from the reference manual (6.4.1 Patterns, 6.4 string.find,
 * string.match, string.gmatch, string.gsub): a backtracking matcher over
 * pattern items.  Error messages are the stock library's, so a rule sees
 * the same thing whichever matcher runs it; tests/unit/test_rules.c checks
 * results and errors against the stock library case by case.
 */
#include <ctype.h>
#include <stdbool.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "luapat.h"

#define MAX_CAPS 32		/* LUA_MAXCAPTURES of the stock library */
#define MAX_DEPTH 200		/* nested items before "pattern too complex" */
#define CAP_OPEN (-1)		/* a capture started and not yet closed */
#define CAP_POS (-2)		/* a position capture "()" */
#define SPECIALS "^$*+?.([%-"
#define CLASS_SCAN_MIN 256	/* subject bytes for a one-class find's table */

#define uch(c) ((unsigned char)(c))

/* What luapat_install was given; an upvalue of every function. */
struct guard {
	luapat_check_fn fn;
	void *ud;
};

/* One capture: where it starts and its length (or CAP_OPEN/CAP_POS). */
struct capture {
	const char *at;
	ptrdiff_t len;
};

/* The state of one match attempt over one subject. */
struct mstate {
	lua_State *L;
	const char *s0, *s_end;	/* the subject */
	const char *p_end;	/* end of the pattern */
	const struct guard *g;
	unsigned steps;		/* since the last check */
	int depth;		/* nesting still allowed */
	int ncap;
	struct capture cap[MAX_CAPS];
};

/* Count one step; every LUAPAT_CHECK_STEPS ask the guard whether to stop. */
static inline void step(struct mstate *m)
{
	if (++m->steps >= LUAPAT_CHECK_STEPS) {
		m->steps = 0;
		if (m->g->fn)
			m->g->fn(m->L, m->g->ud);
	}
}

/* Start a match over subject s (ls bytes) with pattern p (lp bytes). */
static void state_init(struct mstate *m, lua_State *L, const char *s,
		       size_t ls, const char *p, size_t lp,
		       const struct guard *g)
{
	m->L = L;
	m->s0 = s;
	m->s_end = s + ls;
	m->p_end = p + lp;
	m->g = g;
	m->steps = 0;
}

/* Forget the captures of the previous attempt (steps go on counting). */
static void state_reset(struct mstate *m)
{
	m->ncap = 0;
	m->depth = MAX_DEPTH;
}

/* Does c belong to %cl (an upper-case letter is the complement)? */
static bool in_class(int c, int cl)
{
	bool yes;

	switch (tolower(cl)) {
	case 'a': yes = isalpha(c); break;
	case 'c': yes = iscntrl(c); break;
	case 'd': yes = isdigit(c); break;
	case 'g': yes = isgraph(c); break;
	case 'l': yes = islower(c); break;
	case 'p': yes = ispunct(c); break;
	case 's': yes = isspace(c); break;
	case 'u': yes = isupper(c); break;
	case 'w': yes = isalnum(c); break;
	case 'x': yes = isxdigit(c); break;
	case 'z': yes = c == 0; break;	/* deprecated, still in 5.4 */
	default: return cl == c;	/* %. %% %[ ...: the character itself */
	}
	return isupper(cl) ? !yes : yes;
}

/* Does c belong to the set from open ('[') to close (its ']')? */
static bool in_set(int c, const char *open, const char *close)
{
	const char *p = open + 1;
	bool yes = true;

	if (*p == '^') {
		yes = false;
		p++;
	}
	for (; p < close; p++) {
		if (*p == '%') {
			p++;
			if (in_class(c, uch(*p)))
				return yes;
		} else if (p[1] == '-' && p + 2 < close) {
			if (uch(p[0]) <= c && c <= uch(p[2]))
				return yes;
			p += 2;
		} else if (uch(*p) == c) {
			return yes;
		}
	}
	return !yes;
}

/* End of the single-character class at p (past a set's ']'). */
static const char *item_end(struct mstate *m, const char *p)
{
	char c = *p++;

	if (c == '%') {
		if (p >= m->p_end)
			luaL_error(m->L, "malformed pattern (ends with '%%')");
		return p + 1;
	}
	if (c != '[')
		return p;
	if (*p == '^')
		p++;
	/* the first member is never the end: "[]]" is a set holding ']' */
	do {
		if (p >= m->p_end)
			luaL_error(m->L, "malformed pattern (missing ']')");
		c = *p++;
		if (c == '%' && p < m->p_end)
			p++;
	} while (*p != ']');
	return p + 1;
}

/* Does the subject character at s match the class p..ep? */
static bool single(const struct mstate *m, const char *s, const char *p,
		   const char *ep)
{
	int c;

	if (s >= m->s_end)
		return false;
	c = uch(*s);
	switch (*p) {
	case '.':
		return true;
	case '%':
		return in_class(c, uch(p[1]));
	case '[':
		return in_set(c, p, ep - 1);
	default:
		return uch(*p) == c;
	}
}

static const char *match(struct mstate *m, const char *s, const char *p);

/* Class p..ep as often as it matches at s, then back off until the rest matches. */
static const char *greedy(struct mstate *m, const char *s, const char *p,
			  const char *ep)
{
	ptrdiff_t n = 0;

	while (single(m, s + n, p, ep)) {
		step(m);
		n++;
	}
	for (; n >= 0; n--) {
		const char *r = match(m, s + n, ep + 1);

		if (r)
			return r;
	}
	return NULL;
}

/* Class p..ep as rarely as the rest of the pattern allows. */
static const char *lazy(struct mstate *m, const char *s, const char *p,
			const char *ep)
{
	for (;;) {
		const char *r = match(m, s, ep + 1);

		if (r)
			return r;
		if (!single(m, s, p, ep))
			return NULL;
		s++;
	}
}

/* Open a capture at s (len CAP_OPEN or CAP_POS) and match on from p. */
static const char *open_cap(struct mstate *m, const char *s, const char *p,
			    ptrdiff_t len)
{
	const char *r;

	if (m->ncap >= MAX_CAPS)
		luaL_error(m->L, "too many captures");
	m->cap[m->ncap].at = s;
	m->cap[m->ncap].len = len;
	m->ncap++;
	r = match(m, s, p);
	if (!r)
		m->ncap--;
	return r;
}

/* Close the innermost open capture at s and match on from p. */
static const char *close_cap(struct mstate *m, const char *s, const char *p)
{
	const char *r;
	int i = m->ncap - 1;

	while (i >= 0 && m->cap[i].len != CAP_OPEN)
		i--;
	if (i < 0)
		luaL_error(m->L, "invalid pattern capture");
	m->cap[i].len = s - m->cap[i].at;
	r = match(m, s, p);
	if (!r)
		m->cap[i].len = CAP_OPEN;
	return r;
}

/* %bxy at s (p points at x): the end of the balanced run, or NULL. */
static const char *balance(struct mstate *m, const char *s, const char *p)
{
	int depth = 1;
	char open, close;

	if (p + 1 >= m->p_end)
		luaL_error(m->L, "malformed pattern (missing arguments to '%%b')");
	if (s >= m->s_end || *s != *p)
		return NULL;
	open = p[0];
	close = p[1];
	while (++s < m->s_end) {
		step(m);
		if (*s == close) {
			if (--depth == 0)
				return s + 1;
		} else if (*s == open) {
			depth++;
		}
	}
	return NULL;
}

/* %1..%9 at s: the end of the repeated capture, or NULL. */
static const char *backref(struct mstate *m, const char *s, int digit)
{
	int i = digit - '1';
	size_t len;

	if (i < 0 || i >= m->ncap || m->cap[i].len == CAP_OPEN)
		luaL_error(m->L, "invalid capture index %%%d", i + 1);
	/* a position capture is never repeated: its length reads as huge */
	len = (size_t)m->cap[i].len;
	if ((size_t)(m->s_end - s) >= len && memcmp(m->cap[i].at, s, len) == 0)
		return s + len;
	return NULL;
}

/* %f[set] at s: true where the previous character is not in set and this one is. */
static bool frontier(struct mstate *m, const char *s, const char *set,
		     const char *end)
{
	int prev = s == m->s0 ? 0 : uch(s[-1]);
	int cur = s < m->s_end ? uch(*s) : 0;

	return !in_set(prev, set, end - 1) && in_set(cur, set, end - 1);
}

/* Match pattern p at subject position s: the end of the match, or NULL. */
static const char *match_at(struct mstate *m, const char *s, const char *p)
{
	for (;;) {
		const char *ep;

		step(m);
		if (p >= m->p_end)
			return s;
		switch (*p) {
		case '(':
			if (p[1] == ')')
				return open_cap(m, s, p + 2, CAP_POS);
			return open_cap(m, s, p + 1, CAP_OPEN);
		case ')':
			return close_cap(m, s, p + 1);
		case '$':
			if (p + 1 == m->p_end)
				return s == m->s_end ? s : NULL;
			break;		/* elsewhere '$' is itself */
		case '%':
			if (p[1] == 'b') {
				s = balance(m, s, p + 2);
				if (!s)
					return NULL;
				p += 4;
				continue;
			}
			if (p[1] == 'f') {
				p += 2;
				if (*p != '[')
					luaL_error(m->L, "missing '[' after '%%f' in pattern");
				ep = item_end(m, p);
				if (!frontier(m, s, p, ep))
					return NULL;
				p = ep;
				continue;
			}
			if (isdigit(uch(p[1]))) {
				s = backref(m, s, uch(p[1]));
				if (!s)
					return NULL;
				p += 2;
				continue;
			}
			break;
		}
		/* a single-character class, maybe with a quantifier */
		ep = item_end(m, p);
		if (!single(m, s, p, ep)) {
			if (*ep == '*' || *ep == '?' || *ep == '-') {
				p = ep + 1;	/* zero times is fine */
				continue;
			}
			return NULL;
		}
		switch (*ep) {
		case '?': {
			const char *r = match(m, s + 1, ep + 1);

			if (r)
				return r;
			p = ep + 1;
			continue;
		}
		case '+':
			return greedy(m, s + 1, p, ep);
		case '*':
			return greedy(m, s, p, ep);
		case '-':
			return lazy(m, s, p, ep);
		default:
			s++;
			p = ep;
			continue;
		}
	}
}

/* match_at with the nesting limit of the stock library. */
static const char *match(struct mstate *m, const char *s, const char *p)
{
	const char *r;

	if (m->depth == 0)
		luaL_error(m->L, "pattern too complex");
	m->depth--;
	r = match_at(m, s, p);
	m->depth++;
	return r;
}

/* Push capture i, or the whole match s..e when there are none and i is 0. */
static void push_cap(struct mstate *m, int i, const char *s, const char *e)
{
	if (i >= m->ncap) {
		if (i != 0)
			luaL_error(m->L, "invalid capture index %%%d", i + 1);
		lua_pushlstring(m->L, s, (size_t)(e - s));
	} else if (m->cap[i].len == CAP_OPEN) {
		luaL_error(m->L, "unfinished capture");
	} else if (m->cap[i].len == CAP_POS) {
		lua_pushinteger(m->L, m->cap[i].at - m->s0 + 1);
	} else {
		lua_pushlstring(m->L, m->cap[i].at, (size_t)m->cap[i].len);
	}
}

/* Push every capture (or the whole match s..e when s is set and there are none). */
static int push_caps(struct mstate *m, const char *s, const char *e)
{
	int n = m->ncap == 0 && s ? 1 : m->ncap;

	luaL_checkstack(m->L, n, "too many captures");
	for (int i = 0; i < n; i++)
		push_cap(m, i, s, e);
	return n;
}

/* A 1-based (or negative, from the end) init argument as a 0-based offset. */
static size_t start_of(lua_Integer pos, size_t len)
{
	if (pos > 0)
		return (size_t)pos - 1;
	if (pos == 0 || pos < -(lua_Integer)len)
		return 0;
	return len - (size_t)(-pos);
}

/* Does p (lp bytes) hold none of the pattern's special characters? */
static bool plain_text(const char *p, size_t lp)
{
	for (size_t i = 0; i < lp; i++)
		if (p[i] && strchr(SPECIALS, p[i]))
			return false;
	return true;
}

/* Is the whole pattern p one single-character class ("[%s;|]", "%d")? */
static bool one_class(struct mstate *m, const char *p)
{
	if (*p == '%' && (p[1] == 'b' || p[1] == 'f' || isdigit(uch(p[1]))))
		return false;
	return item_end(m, p) == m->p_end;
}

/*
 * The first byte from at that the class p (the whole pattern) matches, or
 * NULL: what match would find trying each position, through a table, with
 * one step counted per byte as match counts them.
 */
static const char *class_scan(struct mstate *m, const char *at, const char *p)
{
	const char *ep = m->p_end;
	bool in[256];

	for (int c = 0; c < 256; c++) {
		char ch = (char)c;

		in[c] = single(&(struct mstate){ .s_end = &ch + 1 }, &ch, p, ep);
	}
	for (; at < m->s_end; at++) {
		step(m);
		if (in[uch(*at)])
			return at;
	}
	return NULL;
}

/* string.find and string.match. */
static int find_or_match(lua_State *L, bool find)
{
	const struct guard *g = lua_touserdata(L, lua_upvalueindex(1));
	size_t ls, lp, init;
	const char *s = luaL_checklstring(L, 1, &ls);
	const char *p = luaL_checklstring(L, 2, &lp);
	const char *at;
	struct mstate m;
	bool anchor;

	init = start_of(luaL_optinteger(L, 3, 1), ls);
	if (init > ls) {
		luaL_pushfail(L);
		return 1;
	}
	if (find && (lua_toboolean(L, 4) || plain_text(p, lp))) {
		/* glibc's memmem is linear; an empty needle is found at init */
		const char *hit = memmem(s + init, ls - init, p, lp);

		if (!hit) {
			luaL_pushfail(L);
			return 1;
		}
		lua_pushinteger(L, hit - s + 1);
		lua_pushinteger(L, (lua_Integer)(hit - s + lp));
		return 2;
	}
	anchor = lp > 0 && *p == '^';
	if (anchor) {
		p++;
		lp--;
	}
	state_init(&m, L, s, ls, p, lp, g);
	at = s + init;
	/* (the table costs 256 tests: only for a long subject) */
	if (!anchor && lp > 1 && (*p == '[' || *p == '%') &&
	    m.s_end - at >= CLASS_SCAN_MIN && one_class(&m, p)) {
		at = class_scan(&m, at, p);
		if (!at) {
			luaL_pushfail(L);
			return 1;
		}
		if (find) {
			lua_pushinteger(L, at - s + 1);
			lua_pushinteger(L, at - s + 1);
			return 2;
		}
		lua_pushlstring(L, at, 1);
		return 1;
	}
	for (;;) {
		const char *e;

		state_reset(&m);
		e = match(&m, at, p);
		if (e && find) {
			lua_pushinteger(L, at - s + 1);
			lua_pushinteger(L, e - s);
			return 2 + push_caps(&m, NULL, NULL);
		}
		if (e)
			return push_caps(&m, at, e);
		if (anchor || at >= m.s_end)
			break;
		at++;
	}
	luaL_pushfail(L);
	return 1;
}

/* string.find(s, pattern [, init [, plain]]). */
static int l_find(lua_State *L)
{
	return find_or_match(L, true);
}

/* string.match(s, pattern [, init]). */
static int l_match(lua_State *L)
{
	return find_or_match(L, false);
}

/* The iterator's state: a userdata upvalue of gmatch_next. */
struct gmatch {
	struct mstate m;
	const char *p;
	size_t at;		/* next start offset */
	const char *last;	/* end of the last match: not matched empty again */
};

/* One step of string.gmatch: the next match's captures, or nothing. */
static int gmatch_next(lua_State *L)
{
	struct gmatch *gm = lua_touserdata(L, lua_upvalueindex(3));
	size_t len = (size_t)(gm->m.s_end - gm->m.s0);

	gm->m.L = L;
	for (size_t at = gm->at; at <= len; at++) {
		const char *s = gm->m.s0 + at, *e;

		state_reset(&gm->m);
		e = match(&gm->m, s, gm->p);
		if (e && e != gm->last) {
			gm->at = (size_t)(e - gm->m.s0);
			gm->last = e;
			return push_caps(&gm->m, s, e);
		}
	}
	gm->at = len + 1;
	return 0;
}

/* string.gmatch(s, pattern [, init]): '^' is an ordinary character here. */
static int l_gmatch(lua_State *L)
{
	const struct guard *g = lua_touserdata(L, lua_upvalueindex(1));
	size_t ls, lp, init;
	const char *s = luaL_checklstring(L, 1, &ls);
	const char *p = luaL_checklstring(L, 2, &lp);
	struct gmatch *gm;

	init = start_of(luaL_optinteger(L, 3, 1), ls);
	lua_settop(L, 2);	/* s and p stay alive as upvalues */
	gm = lua_newuserdatauv(L, sizeof(*gm), 0);
	state_init(&gm->m, L, s, ls, p, lp, g);
	gm->p = p;
	gm->at = init > ls ? ls + 1 : init;
	gm->last = NULL;
	lua_pushvalue(L, lua_upvalueindex(1));	/* keeps the guard alive */
	lua_pushcclosure(L, gmatch_next, 4);
	return 1;
}

/* Append the replacement string (argument 3) for the match s..e. */
static void add_template(struct mstate *m, luaL_Buffer *b, const char *s,
			 const char *e)
{
	lua_State *L = m->L;
	size_t l;
	const char *t = lua_tolstring(L, 3, &l), *pct;

	while ((pct = memchr(t, '%', l)) != NULL) {
		luaL_addlstring(b, t, (size_t)(pct - t));
		pct++;		/* the string's NUL ends a trailing '%' */
		if (*pct == '%') {
			luaL_addchar(b, '%');
		} else if (*pct == '0') {
			luaL_addlstring(b, s, (size_t)(e - s));
		} else if (isdigit(uch(*pct))) {
			push_cap(m, *pct - '1', s, e);
			luaL_tolstring(L, -1, NULL);	/* a position is a number */
			lua_remove(L, -2);
			luaL_addvalue(b);
		} else {
			luaL_error(L, "invalid use of '%c' in replacement string", '%');
		}
		l -= (size_t)(pct + 1 - t);
		t = pct + 1;
	}
	luaL_addlstring(b, t, l);
}

/* Append what replaces the match s..e; false when the match stays as is. */
static bool add_replacement(struct mstate *m, luaL_Buffer *b, const char *s,
			    const char *e, int type)
{
	lua_State *L = m->L;

	if (type == LUA_TFUNCTION) {
		int n;

		lua_pushvalue(L, 3);
		n = push_caps(m, s, e);
		lua_call(L, n, 1);
	} else if (type == LUA_TTABLE) {
		push_cap(m, 0, s, e);
		lua_gettable(L, 3);
	} else {
		add_template(m, b, s, e);
		return true;
	}
	if (!lua_toboolean(L, -1)) {	/* nil or false: keep the match */
		lua_pop(L, 1);
		luaL_addlstring(b, s, (size_t)(e - s));
		return false;
	}
	if (!lua_isstring(L, -1))
		luaL_error(L, "invalid replacement value (a %s)", luaL_typename(L, -1));
	luaL_addvalue(b);
	return true;
}

/* string.gsub(s, pattern, repl [, n]). */
static int l_gsub(lua_State *L)
{
	const struct guard *g = lua_touserdata(L, lua_upvalueindex(1));
	size_t ls, lp;
	const char *src = luaL_checklstring(L, 1, &ls);
	const char *p = luaL_checklstring(L, 2, &lp);
	const char *last = NULL;
	int type = lua_type(L, 3);
	lua_Integer max = luaL_optinteger(L, 4, (lua_Integer)ls + 1), n = 0;
	bool anchor = lp > 0 && *p == '^', changed = false;
	struct mstate m;
	luaL_Buffer b;

	luaL_argexpected(L, type == LUA_TNUMBER || type == LUA_TSTRING ||
				    type == LUA_TFUNCTION || type == LUA_TTABLE,
			 3, "string/function/table");
	luaL_buffinit(L, &b);
	if (anchor) {
		p++;
		lp--;
	}
	state_init(&m, L, src, ls, p, lp, g);
	while (n < max) {
		const char *e;

		state_reset(&m);
		e = match(&m, src, p);
		if (e && e != last) {
			n++;
			changed = add_replacement(&m, &b, src, e, type) || changed;
			src = last = e;
		} else if (src < m.s_end) {
			luaL_addchar(&b, *src++);
		} else {
			break;
		}
		if (anchor)
			break;
	}
	if (changed) {
		luaL_addlstring(&b, src, (size_t)(m.s_end - src));
		luaL_pushresult(&b);
	} else {
		lua_pushvalue(L, 1);	/* nothing replaced: the same string */
	}
	lua_pushinteger(L, n);
	return 2;
}

/* Match p anchored at s[init]; see luapat.h. */
ptrdiff_t luapat_match_at(lua_State *L, const char *s, size_t ls, size_t init,
			  const char *p, size_t lp, luapat_check_fn check,
			  void *ud, size_t pos[2], int *npos)
{
	struct guard g = { check, ud };
	struct mstate m;
	const char *e;
	int k = 0;

	if (init > ls)
		return -1;
	if (lp > 0 && *p == '^') {
		p++;
		lp--;
	}
	state_init(&m, L, s, ls, p, lp, &g);
	state_reset(&m);
	e = match(&m, s + init, p);
	if (!e)
		return -1;
	for (int i = 0; i < m.ncap && k < 2; i++)
		if (m.cap[i].len == CAP_POS)
			pos[k++] = (size_t)(m.cap[i].at - s);
	if (npos)
		*npos = k;
	return e - s;
}

/* Set find, match, gmatch and gsub of the table at idx. */
void luapat_install(lua_State *L, int idx, luapat_check_fn check, void *ud)
{
	static const luaL_Reg fns[] = {
		{ "find", l_find },
		{ "match", l_match },
		{ "gmatch", l_gmatch },
		{ "gsub", l_gsub },
		{ NULL, NULL },
	};
	struct guard *g;

	lua_pushvalue(L, idx);
	g = lua_newuserdatauv(L, sizeof(*g), 0);
	g->fn = check;
	g->ud = ud;
	luaL_setfuncs(L, fns, 1);
	lua_pop(L, 1);
}
