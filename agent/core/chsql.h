/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * chsql.h - SQL to ClickHouse over its HTTP interface, shared by the
 * CLI's readers of the fleet store (chquery.c, rulesq.c) and the agent's
 * rules source (rulesrc_ch.c): literals and identifiers written into a
 * query (18.16 has no query parameters), one query sent and its answer
 * read, TabSeparated values escaped and unescaped.
 */
#ifndef JOBTRACE_CHSQL_H
#define JOBTRACE_CHSQL_H

#include <stddef.h>

#include "http.h"
#include "json.h"

/*
 * Append s to b as a ClickHouse string literal in single quotes, with
 * quotes and backslashes escaped.  Control characters are refused
 * (-EINVAL): no value written into a query needs them.
 */
int chsql_quote(struct jbuf *b, const char *s);

/* Append name to b as a ClickHouse identifier, back-quoted when needed. */
void chsql_ident(struct jbuf *b, const char *name);

/* Append "db.table" to b; db NULL or "" is "jobtrace". */
void chsql_table(struct jbuf *b, const char *db, const char *table);

/* Undo ClickHouse's TabSeparated escaping of one value, in place;
 * returns the new length. */
size_t chsql_unescape(char *p, size_t len);

/*
 * The next row of a TabSeparated answer at *p (up to end): its values
 * split at tabs, unescaped and NUL-terminated in place, into f[0..max)
 * (a row with more values keeps the rest in the last); *p moves past the
 * row.  *end must be writable (a jbuf_str()'s NUL).  Returns the number
 * of values, 0 at the end of the answer.
 */
int chsql_row(char **p, char *end, char **f, int max);

/* Append len bytes at p to b as one TabSeparated value (any bytes). */
void chsql_tsv_escape(struct jbuf *b, const void *p, size_t len);

/*
 * Send the query sql[0..len) (POST, as its body) through c, with the URL
 * parameters params ("a=1&b=2", or NULL) and body the query's data when
 * not NULL (then the query goes in the URL).  The answer is appended to
 * resp (when not NULL); an answer over max_answer bytes (0: no cap) fails
 * with -EMSGSIZE.  Returns 0, or -errno with "clickhouse URL: why" in
 * err (url is the one to name, without credentials); a missing table or
 * database adds how to create them.
 */
int chsql_run(struct http_client *c, const char *url, const char *sql,
	      const char *params, const void *body, size_t len,
	      size_t max_answer, struct jbuf *resp, char *err, size_t errlen);

#endif
