// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * chsql.c - SQL to ClickHouse over HTTP: literals, identifiers, one
 * query and its TabSeparated answer (chsql.h).
 *
 * ClickHouse 18.16 has no query parameters, so values are written into
 * the query as string literals, quotes and backslashes escaped and
 * control characters refused.  Data of any bytes (a rules bundle) goes as
 * TabSeparated in the body instead, escaped as ClickHouse reads it.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "chsql.h"
#include "log.h"
#include "util.h"

/* Append a C string to b. */
static void put(struct jbuf *b, const char *s)
{
	jbuf_put(b, s, strlen(s));
}

/* Append s as a ClickHouse string literal (see chsql.h). */
int chsql_quote(struct jbuf *b, const char *s)
{
	const char *p;

	for (p = s; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return -EINVAL;
	put(b, "'");
	for (; *s; s++) {
		if (*s == '\'' || *s == '\\')
			put(b, "\\");
		jbuf_put(b, s, 1);
	}
	put(b, "'");
	return b->oom ? -ENOMEM : 0;
}

/* Append name as an identifier, back-quoted unless it is plain. */
void chsql_ident(struct jbuf *b, const char *name)
{
	bool plain = (*name >= 'a' && *name <= 'z') ||
		     (*name >= 'A' && *name <= 'Z') || *name == '_';
	const char *s;

	for (s = name; plain && *s; s++)
		plain = (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
			(*s >= '0' && *s <= '9') || *s == '_';
	if (plain) {
		put(b, name);
		return;
	}
	put(b, "`");
	for (s = name; *s; s++) {
		if (*s == '`' || *s == '\\')
			put(b, "\\");
		jbuf_put(b, s, 1);
	}
	put(b, "`");
}

/* Append "db.table" to b. */
void chsql_table(struct jbuf *b, const char *db, const char *table)
{
	chsql_ident(b, db && *db ? db : "jobtrace");
	put(b, ".");
	chsql_ident(b, table);
}

/* Undo ClickHouse's TabSeparated escaping of one value, in place. */
size_t chsql_unescape(char *p, size_t len)
{
	static const char from[] = "bfnrt0av", to[] = "\b\f\n\r\t\0\a\v";
	char *start = p, *o = p, *end = p + len;
	const char *k;

	for (; p < end; p++) {
		if (*p != '\\' || p + 1 == end) {
			*o++ = *p;
			continue;
		}
		p++;
		k = *p ? memchr(from, *p, sizeof(from) - 1) : NULL;
		/* \\, \', and anything else as is */
		*o++ = k ? to[k - from] : *p;
	}
	return (size_t)(o - start);
}

/* The next row of a TabSeparated answer, split and unescaped (chsql.h). */
int chsql_row(char **p, char *end, char **f, int max)
{
	char *s = *p, *nl, *tab;
	int n = 0;

	if (s >= end || max < 1)
		return 0;
	nl = memchr(s, '\n', (size_t)(end - s));
	if (!nl)
		nl = end;
	*p = nl < end ? nl + 1 : end;
	while (n < max) {
		tab = n + 1 < max ? memchr(s, '\t', (size_t)(nl - s)) : NULL;
		if (!tab)
			tab = nl;
		f[n++] = s;
		s[chsql_unescape(s, (size_t)(tab - s))] = '\0';
		if (tab == nl)
			break;
		s = tab + 1;
	}
	return n;
}

/* Append p[0..len) as one TabSeparated value (see chsql.h). */
void chsql_tsv_escape(struct jbuf *b, const void *p, size_t len)
{
	const unsigned char *s = p, *e = s + len, *run = s;
	char esc[2] = { '\\', 0 };

	for (; s < e; s++) {
		switch (*s) {
		case '\\': esc[1] = '\\'; break;
		case '\t': esc[1] = 't'; break;
		case '\n': esc[1] = 'n'; break;
		case '\0': esc[1] = '0'; break;
		default: continue;
		}
		jbuf_put(b, run, (size_t)(s - run));
		jbuf_put(b, esc, 2);
		run = s + 1;
	}
	jbuf_put(b, run, (size_t)(e - run));
}

/* Send one query and append its answer (see chsql.h). */
int chsql_run(struct http_client *c, const char *url, const char *sql,
	      const char *params, const void *body, size_t len,
	      size_t max_answer, struct jbuf *resp, char *err, size_t errlen)
{
	struct http_req rq = { .method = "POST", .max_answer = max_answer,
			       .content_type = "text/plain; charset=utf-8" };
	struct jbuf suffix;
	char msg[512];
	bool schema;
	int e;

	jbuf_init(&suffix);
	if (params || body) {
		put(&suffix, "?");
		if (params)
			put(&suffix, params);
	}
	if (body) {
		put(&suffix, params ? "&query=" : "query=");
		http_urlencode(&suffix, sql);
		rq.body = body;
		rq.len = len;
	} else {
		rq.body = sql;
		rq.len = strlen(sql);
	}
	rq.suffix = suffix.len ? jbuf_str(&suffix) : NULL;
	if (suffix.oom) {
		jbuf_free(&suffix);
		util_seterr(err, errlen, "out of memory");
		return -ENOMEM;
	}
	log_debug("clickhouse %s: %s", url, sql);
	e = http_request(c, &rq, resp, NULL, msg, sizeof(msg));
	jbuf_free(&suffix);
	if (!e && resp && resp->oom)
		e = -ENOMEM;
	if (!e)
		return 0;
	/* 60: no such table, 81: no such database */
	schema = strstr(msg, "Code: 60,") || strstr(msg, "Code: 81,");
	util_seterr(err, errlen, "clickhouse %s: %s%s", url,
		    e == -ENOMEM ? "out of memory" : msg,
		    schema ? " (create the tables with: jobtrace schema"
		    " clickhouse | clickhouse-client --multiquery)" : "");
	return e;
}
