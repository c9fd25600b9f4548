/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * shellwords.h - split a shell command string into POSIX shell words, so
 * that the rules can redact secrets inside `sh -c '...'` strings.
 *
 * Quoting is read as POSIX sh reads it: '...' keeps every byte; "..." keeps
 * every byte but a backslash before $ ` " \ or a newline; an unquoted
 * backslash keeps the next byte; backslash-newline joins two lines.
 * Unquoted blanks end a word.  The operators ; & | ( ) < > ` in their
 * one-, two- and three-byte forms (&& || ;; >> << <& >& <> >| &> |& ;&
 * <<- <<< &>> ;;&) and an unquoted newline are tokens of their own.
 * Nothing is expanded: $x, ${x}, globs and # are word bytes ($( splits into
 * a word "$" and the operator "(", so the command inside is a command).
 * An unterminated quote runs to the end of the input.  Linear in the
 * input; a word's unquoted text is never longer than its span.
 */
#ifndef JOBTRACE_SHELLWORDS_H
#define JOBTRACE_SHELLWORDS_H

#include <stdbool.h>
#include <stddef.h>

/* One token of a command string. */
struct shellword {
	size_t start;	/* byte span [start, end) of the token in the input */
	size_t end;
	size_t len;	/* bytes of unquoted text (0 for an operator) */
	bool op;	/* an operator or a newline, not a word */
};

/*
 * Read the next token of s[0..len) from *pos on, skipping blanks, and move
 * *pos past it; returns true with *w filled, false at the end of s.  A
 * word's unquoted text goes to out, which needs room for w->end - w->start
 * bytes (len - *pos always suffices); out may be NULL.  map, if not NULL,
 * gets the offset in s of each byte of the unquoted text.
 */
bool shellwords_next(const char *s, size_t len, size_t *pos,
		     struct shellword *w, char *out, size_t *map);

struct lua_State;
/*
 * jobtrace.shell_words(s) for the rules: returns three lists, one entry per
 * token: the word's unquoted text (false for an operator), and the first
 * and last byte of its span in s (1-based, as string.sub takes them).
 */
int shellwords_lua_words(struct lua_State *L);
/*
 * jobtrace.shell_span(s, start, i, j) for the rules: where bytes i..j of
 * the unquoted text of the word starting at byte start of s came from;
 * returns the first and the last byte in s (1-based).  The backslash that
 * escapes byte i is part of the span, so that replacing it leaves no
 * dangling escape.
 */
int shellwords_lua_span(struct lua_State *L);

#endif
