// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_schema.c - the one description of the records (agent/core/schema.h):
 * doc/records.md shows it as it is, and the writer follows it.
 */
#include <errno.h>
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
				    " from agent/core/schema.h\n", sf_records[i].name);
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

/* ---- writer and reader round trip ------------------------------------------ */

static const char *const strings[] = {
	"plain", "with \"quotes\" and \\", "tab\there\nnewline", "caf\xc3\xa9 \xe2\x82\xac",
	"ctl\x01\x1f", "",
};
static const char argv_bytes[] = "bwa\0mem\0-R\0@RG\\tID:x\0\xc3\xa9";
static const struct sv_count counts[] = { { "sqlite", 3 }, { "fleet", 0 } };
/* elements of arrays of objects: two per array, nsub values each */
static struct sv pool[512];
static size_t pool_used;

/* Give every member of f[0..n) a value of its type (k varies them). */
static void fill(const struct sf_field *f, size_t n, struct sv *v, unsigned *k)
{
	for (size_t i = 0; i < n; i++, f++, (*k)++) {
		struct sv *x = &v[f->slot];

		switch (f->type) {
		case SFT_OBJ:
			x->st = SV_SET;
			fill(f->sub, f->nsub, v, k);
			break;
		case SFT_STR:
			sv_str(x, strings[*k % 6]);
			break;
		case SFT_BOOL:
			sv_bool(x, *k & 1);
			break;
		case SFT_U8:
			sv_u64(x, 200 + *k % 50);
			break;
		case SFT_U32:
			sv_u64(x, UINT32_MAX - *k);
			break;
		case SFT_U64:
			sv_u64(x, UINT64_MAX - *k);
			break;
		case SFT_I32:
			sv_i64(x, *k & 1 ? INT32_MIN + (int)*k : -(int64_t)*k);
			break;
		case SFT_F64:
			sv_f64(x, 1234.5 + *k / 64.0);
			break;
		case SFT_TIME:
			sv_u64(x, 1763805600123456789ull + *k * 1000000001ull);
			break;
		case SFT_STRARR:
			x->st = SV_SET;
			x->s = argv_bytes;
			x->n = sizeof(argv_bytes);
			break;
		case SFT_COUNTS:
			x->st = SV_SET;
			x->counts = counts;
			x->n = 2;
			break;
		case SFT_OBJARR:
			assert_true(pool_used + 2 * f->nsub <= 512);
			x->st = SV_SET;
			x->elems = pool + pool_used;
			x->n = 2;
			pool_used += 2 * f->nsub;
			for (unsigned e = 0; e < 2; e++)
				fill(f->sub, f->nsub, (struct sv *)x->elems +
				     e * f->nsub, k);
			break;
		}
	}
}

/* What the reader got for f[0..n) is what was written. */
static void compare(const struct sf_field *f, size_t n, const struct sv *w,
		    const struct sv *g, const char *rec)
{
	for (size_t i = 0; i < n; i++, f++) {
		const struct sv *a = &w[f->slot], *b = &g[f->slot];

		if (f->type == SFT_RECTIME || f->type == SFT_OBJARR)
			continue;
		if (a->st != SV_SET) {
			if (b->st != SV_NULL)
				fail_msg("%s.%s: null or left out, read back as set", rec, f->key);
			continue;
		}
		if (b->st != (f->type == SFT_STRARR || f->type == SFT_COUNTS ?
			      SV_RAW : SV_SET))
			fail_msg("%s.%s: not read back (state %d)", rec, f->key, b->st);
		switch (f->type) {
		case SFT_OBJ:
			compare(f->sub, f->nsub, w, g, rec);
			break;
		case SFT_STR:
			if (a->n != b->n || memcmp(a->s, b->s, a->n))
				fail_msg("%s.%s: '%.*s' read back as '%.*s'", rec, f->key,
					 (int)a->n, a->s, (int)b->n, b->s);
			break;
		case SFT_F64:
			assert_true(a->d == b->d);	/* k/64: exact in 6 decimals */
			break;
		case SFT_TIME:
			/* written with microseconds */
			assert_int_equal(b->u, a->u / 1000 * 1000);
			break;
		case SFT_STRARR: {
			/* the array's text, as json.h writes it */
			struct jbuf e;

			jbuf_init(&e);
			json_arr_open(&e);
			for (const char *x = a->s; x < a->s + a->n; x += strlen(x) + 1)
				json_str(&e, x);
			json_arr_close(&e);
			assert_int_equal(b->n, e.len);
			assert_memory_equal(b->s, e.buf, e.len);
			jbuf_free(&e);
			break;
		}
		case SFT_COUNTS:
			assert_int_equal(b->n, strlen("{\"sqlite\":3,\"fleet\":0}"));
			assert_memory_equal(b->s, "{\"sqlite\":3,\"fleet\":0}", b->n);
			break;
		default:
			assert_true(a->u == b->u);
			break;
		}
	}
}

/* Every record type: every member written with a value of its type is
 * read back with that value (strings with escapes through the scratch). */
static void test_roundtrip(void **state)
{
	struct jbuf b, scratch;

	(void)state;
	jbuf_init(&b);
	jbuf_init(&scratch);
	for (size_t i = 0; i < SF_REC__N; i++) {
		const struct sf_record *r = &sf_records[i];
		struct sv w[V__N] = { 0 }, g[V__N];
		unsigned k = (unsigned)i;
		const char *why = NULL;

		pool_used = 0;
		fill(r->f, r->n, w, &k);
		jbuf_reset(&b);
		schema_write(&b, r, w);
		assert_false(b.oom);
		assert_ptr_equal(schema_type_of(b.buf, b.len), r);
		if (schema_read(r, b.buf, b.len, g, &scratch, &why))
			fail_msg("%s: %s in %s", r->name, why, b.buf);
		compare(r->f, r->n, w, g, r->name);

		/* all null: read back null */
		memset(w, 0, sizeof(w));
		jbuf_reset(&b);
		schema_write(&b, r, w);
		assert_int_equal(schema_read(r, b.buf, b.len, g, &scratch, NULL), 0);
		compare(r->f, r->n, w, g, r->name);
	}
	jbuf_free(&b);
	jbuf_free(&scratch);
}

/* What the reader refuses, and what it reads around. */
static void test_read_odd(void **state)
{
	const struct sf_record *p = &sf_records[SF_REC_PROCESS];
	struct jbuf scratch;
	struct sv v[V__N];
	const char *why = NULL;
	static const char *const bad[] = {
		"", "[]", "{\"pid\":1", "{\"pid\":1}x", "{\"pid\":01}",
		"{\"comm\":\"\\ud800\"}", "{\"comm\":\"\xff\"}",
	};

	(void)state;
	jbuf_init(&scratch);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why = NULL;
		assert_int_equal(schema_read(p, bad[i], strlen(bad[i]), v, &scratch,
					     &why), -EINVAL);
		assert_non_null(why);
	}
	/* wrong types stay null, unknown members are skipped, the first of
	 * two wins, an older record's plain job id fills job.id */
	static const char odd[] =
		"{\"pid\":\"1\",\"ppid\":-1,\"uid\":4294967296,\"x\":{\"pid\":7},"
		"\"comm\":\"a\",\"comm\":\"b\",\"job\":\"42\",\"exit\":{\"code\":2147483648},"
		"\"start_time\":\"yesterday\",\"argv\":\"bwa\",\"cpu\":{\"user_s\":1e400}}";
	assert_int_equal(schema_read(p, odd, strlen(odd), v, &scratch, NULL), 0);
	assert_int_equal(v[V_PID].st, SV_NULL);
	assert_int_equal(v[V_PPID].st, SV_NULL);
	assert_int_equal(v[V_UID].st, SV_NULL);
	assert_int_equal(v[V_COMM].st, SV_SET);
	assert_memory_equal(v[V_COMM].s, "a", 1);
	assert_int_equal(v[V_JOB_ID].st, SV_SET);
	assert_memory_equal(v[V_JOB_ID].s, "42", 2);
	assert_int_equal(v[V_EXIT_CODE].st, SV_NULL);
	assert_int_equal(v[V_START_TIME].st, SV_NULL);
	assert_int_equal(v[V_ARGV].st, SV_NULL);
	assert_int_equal(v[V_CPU_USER_S].st, SV_NULL);
	jbuf_free(&scratch);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_doc_tables),
		cmocka_unit_test(test_consistent),
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_read_odd),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
