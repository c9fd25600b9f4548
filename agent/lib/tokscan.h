/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tokscan.h - find many words in a text in one pass, the secret formats
 * that start with them, and the string literals of code that a name binds,
 * for the redaction rules (lua-rules/30-redact.lua).
 *
 * A word set is built once from a list of words (at least 2 bytes each),
 * each matched with or without case and optionally only at a word
 * boundary.  Finding the next word costs one table look-up per byte of the
 * text (a bitmap of the words' first two bytes, then the few words that
 * begin with that byte), whatever the number of words.  A word may carry a
 * Lua pattern: scanning a text tries it, anchored, where the word occurs,
 * with the engine's own matcher (luapat.c) so the rules' deadline holds.
 *
 * Code given to interpreters (python -c, perl -e, SQL ...) is read without
 * knowing its language: a name (an identifier or a quoted key) followed by
 * an assignment, a key separator or a call's parenthesis binds the string
 * literals that come next, and every string literal can be listed with
 * whether only commas and blanks separate it from the previous one.
 */
#ifndef JOBTRACE_TOKSCAN_H
#define JOBTRACE_TOKSCAN_H

#include <stdbool.h>
#include <stddef.h>

#include "luapat.h"

#define TOKSCAN_ICASE 0x1	/* match without regard to ASCII case */
#define TOKSCAN_LEFT 0x2	/* no letter or digit just before the word */
#define TOKSCAN_RIGHT 0x4	/* no letter, digit, '_', '-', '.', ':' after */

struct tokscan;

/* A string literal's content (offsets in the code) and its quote. */
struct tokscan_lit {
	size_t start, end;	/* content [start, end); end == length if open */
	size_t next;		/* offset just after the closing quote */
	bool open;		/* no closing quote before the end */
};

/*
 * Read the string literal whose opening quote (' " or `, a tripled ' or "
 * too) is at code[at].  A backslash escapes the next byte; a doubled '
 * inside a '...' literal (SQL) is part of it.
 */
void tokscan_literal(const char *code, size_t len, size_t at,
		     struct tokscan_lit *lit);

/*
 * Find the first word of ts in s[from..len): its offset and number (0-based,
 * in the order given) go to *at and *word; false when there is none.
 */
bool tokscan_find(const struct tokscan *ts, const char *s, size_t len,
		  size_t from, size_t *at, unsigned *word);

/*
 * tokscan_find on s as a shell reads it: quotes and backslashes are taken
 * out (c"url" and cu\\rl hold curl), boundaries looked for past them;
 * *end gets the offset just after the word's last byte.
 */
bool tokscan_find_unquoted(const struct tokscan *ts, const char *s, size_t len,
			   size_t from, size_t *at, size_t *end, unsigned *word);

struct lua_State;
/*
 * Add to the table at idx (the rules' `jobtrace` table) the functions
 * words(list), code_named(code, words) and code_literals(code [, max
 * [, words]]),
 * and the methods find and scan of a word set; check/ud stop a pattern at
 * the rules' deadline as in luapat_install.  See lua-rules/README.md.
 */
void tokscan_install(struct lua_State *L, int idx, luapat_check_fn check,
		     void *ud);

#endif
