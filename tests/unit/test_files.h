/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_files.h - scratch files for unit tests (include after cmocka.h).
 */
#ifndef JOBTRACE_TEST_FILES_H
#define JOBTRACE_TEST_FILES_H

#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "qcmd.h"
#include "store.h"

/* The report of q on the store at db in fmt (malloc'd); must succeed. */
static inline char *test_report_of(const char *db,
				   const struct report_query *q,
				   enum report_format fmt)
{
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	assert_non_null(out);
	assert_int_equal(qcmd_run_path(qcmd_find("report"), db, q,
				       storeq_format_name(fmt), out), 0);
	fclose(out);
	return text;
}

/* Write text to dir/name, failing the test if it cannot; returns the path
 * (a static buffer, valid until the next call). */
static inline const char *test_write_file(const char *dir, const char *name,
					  const char *text)
{
	static char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
	return path;
}

/* The file at path, read whole (malloc'd, NUL-terminated), its size in
 * *len when len is not NULL; fails the test if it cannot. */
static inline char *test_read_file(const char *path, size_t *len)
{
	char *buf;
	long n;
	FILE *f = fopen(path, "rb");

	if (!f)
		fail_msg("cannot open %s (top_srcdir is set by make check)", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	if (len)
		*len = (size_t)n;
	return buf;
}

/* The file top_srcdir/dir/name (top_srcdir from make check), read whole
 * as test_read_file() does. */
static inline char *test_read_src(const char *dir, const char *name,
				  size_t *len)
{
	const char *top = getenv("top_srcdir");
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s/%s", top ? top : ".", dir, name);
	return test_read_file(path, len);
}

/* Remove one entry of a scratch folder (an nftw callback). */
static inline int test_rm_entry(const char *path, const struct stat *st,
				int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* Remove the scratch folder dir and everything in it. */
static inline int test_remove_tree(const char *dir)
{
	return nftw(dir, test_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Remove an SQLite store dir/NAME with its WAL files, and dir (empty by
 * then). */
static inline void test_remove_store(const char *db, const char *dir)
{
	static const char *const sfx[] = { "", "-wal", "-shm" };
	char path[PATH_MAX];

	for (size_t i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s%s", db, sfx[i]);
		unlink(path);
	}
	rmdir(dir);
}

/* Put one record, given as printf output, into the store s; the test
 * fails if the store refuses it. */
__attribute__((format(printf, 2, 3)))
static inline void test_put_json(struct store *s, const char *fmt, ...)
{
	char buf[4096];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	assert_true(n > 0 && (size_t)n < sizeof(buf));
	if (store_put_json(s, buf, (size_t)n))
		fail_msg("refused: %s", buf);
}

/* Fail unless text holds line as one whole line. */
static inline void test_has_line(const char *text, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : p)
		if (!strncmp(p, line, n) && (p[n] == '\n' || !p[n]))
			return;
	fail_msg("no line \"%s\" in:\n%s", line, text);
}

/* s as a JSON string in buf, or "null" for NULL (s holds nothing to
 * escape). */
static inline const char *test_jstr(const char *s, char *buf, size_t len)
{
	if (!s)
		return "null";
	snprintf(buf, len, "\"%s\"", s);
	return buf;
}

/* The HTML page's data element (malloc'd); fails without one. */
static inline char *test_page_data(const char *page)
{
	const char *b = strstr(page, "id=\"jt-data\">");
	const char *e = b ? strstr(b, "</script>") : NULL;

	if (!b || !e)
		fail_msg("the page has no data element");
	b += strlen("id=\"jt-data\">");
	return strndup(b, (size_t)(e - b));
}

/* A value of a JSON text at a path, as text (malloc'd; "" for null). */
static inline char *test_jq(const char *json, const char *path)
{
	sqlite3_stmt *st = NULL;
	sqlite3 *db = NULL;
	char *v;

	assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT json_extract(?1, ?2)",
					    -1, &st, NULL), SQLITE_OK);
	sqlite3_bind_text(st, 1, json, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, path, -1, SQLITE_STATIC);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	v = strdup(sqlite3_column_text(st, 0) ?
		   (const char *)sqlite3_column_text(st, 0) : "");
	sqlite3_finalize(st);
	sqlite3_close(db);
	return v;
}

#endif
