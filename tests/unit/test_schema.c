// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_schema.c - the one description of the records (agent/schema.h):
 * doc/records.md shows it as it is, and the writer follows it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "json.h"
#include "schema.h"

/* doc/records.md, read whole (malloc'd). */
static char *read_doc(void)
{
	const char *top = getenv("top_srcdir");
	char path[4096];
	char *buf = NULL;
	size_t cap = 0;
	FILE *f, *m;

	snprintf(path, sizeof(path), "%s/doc/records.md", top ? top : ".");
	f = fopen(path, "r");
	if (!f)
		fail_msg("cannot open %s (top_srcdir is set by make check)", path);
	m = open_memstream(&buf, &cap);
	assert_non_null(m);
	for (int c; (c = fgetc(f)) != EOF;)
		fputc(c, m);
	fclose(f);
	fclose(m);
	return buf;
}

/* Every record type's field table is in doc/records.md as printed. */
static void test_doc_tables(void **state)
{
	char *doc = read_doc();
	unsigned stale = 0;

	(void)state;
	for (size_t i = 0; i < SF_REC__N; i++) {
		char *tab = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&tab, &len);

		assert_non_null(m);
		schema_print_markdown_one(m, &sf_records[i]);
		fclose(m);
		if (!strstr(doc, tab)) {
			print_error("doc/records.md: the table of %s records differs"
				    " from agent/schema.h\n", sf_records[i].name);
			stale++;
		}
		free(tab);
	}
	free(doc);
	if (stale)
		fail_msg("%u stale table(s): run scripts/records-doc.sh BUILD_DIR"
			 " and commit doc/records.md", stale);
}

/* Record types, columns and slots are consistent: every column name
 * appears once per table, and an object's members have values of their
 * own (no two members of one record share a slot). */
static void check_fields(const struct sf_field *f, size_t n, unsigned char *seen,
			 const char **cols, size_t *ncols, const char *rec)
{
	for (size_t i = 0; i < n; i++, f++) {
		/* doc lines are SQL comments: clients split at ';' */
		if (f->doc && strchr(f->doc, ';'))
			fail_msg("%s: the doc of %s has a ';'", rec, f->key);
		if (f->type != SFT_OBJARR) {
			if (seen[f->slot])
				fail_msg("%s: slot of %s used twice", rec, f->key);
			seen[f->slot] = 1;
		}
		if (f->type == SFT_OBJ) {
			assert_non_null(f->sub);
			assert_null(f->col);
			check_fields(f->sub, f->nsub, seen, cols, ncols, rec);
			continue;
		}
		if (f->type == SFT_OBJARR) {
			assert_non_null(f->sub);
			continue;
		}
		assert_non_null(f->col);
		assert_int_equal(f->keylen, strlen(f->key));
		for (size_t j = 0; j < *ncols; j++)
			if (!strcmp(cols[j], f->col))
				fail_msg("%s: column %s twice", rec, f->col);
		cols[(*ncols)++] = f->col;
		if (f->col2)
			cols[(*ncols)++] = f->col2;
	}
}

static void test_consistent(void **state)
{
	(void)state;
	for (size_t i = 0; i < SF_REC__N; i++) {
		unsigned char seen[V__N] = { 0 };
		const char *cols[256];
		size_t ncols = 0;

		check_fields(sf_records[i].f, sf_records[i].n, seen, cols, &ncols,
			     sf_records[i].name);
		assert_null(strchr(sf_records[i].doc, ';'));
		assert_ptr_equal(sf_record_find(sf_records[i].name,
						strlen(sf_records[i].name)),
				 &sf_records[i]);
	}
	assert_null(sf_record_find("proc", 4));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_doc_tables),
		cmocka_unit_test(test_consistent),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
