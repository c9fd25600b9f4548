/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * luapat.h - Lua 5.4 patterns (reference manual 6.4.1) that can be stopped.
 *
 * Lua's count hook never runs inside a C function, and the stock matcher
 * backtracks inside one: string.find(s, ".-.-.-.-x") on a few KB runs for
 * minutes.  These find, match, gmatch and gsub give the stock results and
 * errors, and call a check every LUAPAT_CHECK_STEPS steps (one step: one
 * pattern item tried at one subject position); the check raises a Lua error
 * (lua_error/luaL_error) to stop the match.  The matcher holds no memory of
 * its own, so a raised error leaks nothing.
 */
#ifndef JOBTRACE_LUAPAT_H
#define JOBTRACE_LUAPAT_H

#include <lua.h>

#define LUAPAT_CHECK_STEPS 1024

/* Called every LUAPAT_CHECK_STEPS steps; raises a Lua error to stop. */
typedef void (*luapat_check_fn)(lua_State *L, void *ud);

/*
 * Set find, match, gmatch and gsub of the table at idx (the sandbox's
 * string table, which the string metatable's __index also is).  check may
 * be NULL (never stopped); ud must outlive the state.
 */
void luapat_install(lua_State *L, int idx, luapat_check_fn check, void *ud);

/*
 * Match pattern p (lp bytes, anchored: a leading '^' is allowed) at offset
 * init of s (ls bytes), counted and stopped like string.find with check and
 * ud.  Returns the offset just after the match, or -1 when there is none.
 * The first two position captures "()" of the match go to pos[0] and
 * pos[1] as offsets in s, and their number (0 to 2) to *npos (may be NULL).
 * A malformed pattern raises the stock library's error.
 */
ptrdiff_t luapat_match_at(lua_State *L, const char *s, size_t ls, size_t init,
			  const char *p, size_t lp, luapat_check_fn check,
			  void *ud, size_t pos[2], int *npos);

#endif
