// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_rulesrc_ch.c - cmocka tests of agent/daemon/rulesrc_ch.c without
 * root or ClickHouse: its queries go to a fake that answers as
 * ClickHouse's TabSeparated does and counts them.  An unchanged bundle
 * costs the one small query; a new one is fetched byte for byte (a real
 * bundle: a tar, NULs and all); nothing pushed, a cut bundle, a row whose
 * sha256 is not its bundle's and a failing server are errors.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "chsql.h"
#include "rulebundle.h"
#include "rulesrc_ch.h"
#include "test_files.h"

#define SHA_A "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

/* What the fake server holds and what it was asked. */
struct fake {
	const char *version, *sha;	/* NULL: the table is empty */
	const unsigned char *bundle;
	size_t len;			/* the bundle's bytes */
	size_t size;			/* the size column */
	int fail;			/* -errno for every query */
	int latest_queries, bundle_queries;
	char last_sql[512];
};

/* The fake's answer to sql, as ClickHouse's TabSeparated. */
static int fake_query(void *qctx, const char *sql, size_t max_answer,
		      struct jbuf *resp, char *err, size_t errlen)
{
	struct fake *f = qctx;
	char line[256];

	snprintf(f->last_sql, sizeof(f->last_sql), "%s", sql);
	if (f->fail) {
		snprintf(err, errlen, "clickhouse fake: refused");
		return f->fail;
	}
	assert_non_null(strstr(sql, " FROM jt.rules "));
	assert_non_null(strstr(sql, "ORDER BY pushed_at DESC, pushed_at_us"
				    " DESC LIMIT 1 FORMAT TabSeparated"));
	if (!strncmp(sql, "SELECT version, sha256, size FROM", 33)) {
		f->latest_queries++;
		assert_true(max_answer > 0 && max_answer <= 4096);
		if (f->sha) {
			snprintf(line, sizeof(line), "%s\t%s\t%zu\n",
				 f->version, f->sha, f->size);
			jbuf_put(resp, line, strlen(line));
		}
		return 0;
	}
	assert_int_equal(strncmp(sql, "SELECT bundle FROM", 18), 0);
	f->bundle_queries++;
	snprintf(line, sizeof(line), "WHERE sha256 = '%s' ", f->sha);
	assert_non_null(strstr(sql, line));
	chsql_tsv_escape(resp, f->bundle, f->len);
	jbuf_put(resp, "\n", 1);
	assert_true(resp->len <= max_answer);
	return 0;
}

/* A bundle of one rule file whose text says n, in t; its id in sha. */
static void make_bundle(struct jbuf *t, int n, char sha[65])
{
	char dir[] = "/tmp/test_rulesrc_ch.XXXXXX", text[128], err[256];
	struct rulebundle b = { 0 };

	assert_non_null(mkdtemp(dir));
	snprintf(text, sizeof(text), "-- bundle %d\tof the test\\\n"
		 "jobtrace.rule(\"r\", function(p, d) end)\n", n);
	test_write_file(dir, "10-a.lua", text);
	jbuf_init(t);
	assert_int_equal(rulebundle_make(dir, "v1", NULL, t, err, sizeof(err)),
			 0);
	assert_int_equal(rulebundle_open(t->buf, t->len, NULL, &b, err,
					 sizeof(err)), 0);
	memcpy(sha, b.sha256, 65);
	rulebundle_free(&b);
	test_remove_tree(dir);
}

/* A new bundle is fetched whole; the same one again costs one small
 * query and is not fetched. */
static void test_fetch_new_then_unchanged(void **state)
{
	char sha1[65], sha2[65], tag[80], err[256];
	struct jbuf t1, t2, out;
	struct fake f = { .version = "v1" };
	struct rulesrc_ch *c;

	(void)state;
	make_bundle(&t1, 1, sha1);
	make_bundle(&t2, 2, sha2);
	assert_non_null(memchr(t1.buf, '\0', t1.len));	/* a tar: NULs */
	f.sha = sha1;
	f.bundle = (const unsigned char *)t1.buf;
	f.len = f.size = t1.len;
	jbuf_init(&out);
	assert_int_equal(rulesrc_clickhouse_new_query("jt", fake_query, &f,
						      &c), 0);
	assert_int_equal(rulesrc_clickhouse_fetch(c, NULL, &out, tag,
						  sizeof(tag), err,
						  sizeof(err)), 0);
	assert_string_equal(tag, sha1);
	assert_int_equal(out.len, t1.len);
	assert_memory_equal(out.buf, t1.buf, t1.len);
	assert_int_equal(f.latest_queries, 1);
	assert_int_equal(f.bundle_queries, 1);

	/* unchanged: one small query, nothing appended */
	jbuf_reset(&out);
	for (int i = 0; i < 3; i++)
		assert_int_equal(rulesrc_clickhouse_fetch(c, sha1, &out, tag,
							  sizeof(tag), err,
							  sizeof(err)), 1);
	assert_int_equal(out.len, 0);
	assert_int_equal(f.latest_queries, 4);
	assert_int_equal(f.bundle_queries, 1);

	/* another push: fetched */
	f.sha = sha2;
	f.bundle = (const unsigned char *)t2.buf;
	f.len = f.size = t2.len;
	assert_int_equal(rulesrc_clickhouse_fetch(c, sha1, &out, tag,
						  sizeof(tag), err,
						  sizeof(err)), 0);
	assert_string_equal(tag, sha2);
	assert_int_equal(f.bundle_queries, 2);
	assert_memory_equal(out.buf, t2.buf, t2.len);

	/* a row whose sha256 is not its bundle's: refused, not loaded */
	jbuf_reset(&out);
	f.sha = sha1;
	assert_int_equal(rulesrc_clickhouse_fetch(c, sha2, &out, tag,
						  sizeof(tag), err,
						  sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "its sha256 column is wrong"));
	assert_int_equal(out.len, 0);
	rulesrc_clickhouse_free(c);
	jbuf_free(&out);
	jbuf_free(&t1);
	jbuf_free(&t2);
}

/* Nothing pushed, a bundle cut short, a sha256 that is not one, and a
 * server that fails: errors, nothing appended. */
static void test_fetch_errors(void **state)
{
	static const unsigned char bytes[] = "ustar?";
	struct fake f = { .version = "v1", .sha = NULL, .bundle = bytes,
			  .len = 6, .size = 6 };
	struct rulesrc_ch *c;
	char tag[80], err[256];
	struct jbuf out;

	(void)state;
	jbuf_init(&out);
	assert_int_equal(rulesrc_clickhouse_new_query("jt", fake_query, &f,
						      &c), 0);
	assert_int_equal(rulesrc_clickhouse_fetch(c, NULL, &out, tag,
						  sizeof(tag), err,
						  sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "jt.rules is empty"));

	f.sha = SHA_A;
	f.size = 7;	/* the row says 7, the bundle has 6 bytes */
	assert_int_equal(rulesrc_clickhouse_fetch(c, NULL, &out, tag,
						  sizeof(tag), err,
						  sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "has 6 bytes, its row says 7"));

	f.size = 6;	/* the right size, but not a bundle */
	assert_int_equal(rulesrc_clickhouse_fetch(c, NULL, &out, tag,
						  sizeof(tag), err,
						  sizeof(err)), -EBADMSG);

	f.sha = "0123' OR 1 = 1 --";
	assert_int_equal(rulesrc_clickhouse_fetch(c, NULL, &out, tag,
						  sizeof(tag), err,
						  sizeof(err)), -EBADMSG);
	assert_int_equal(f.bundle_queries, 2);

	f.fail = -ECONNREFUSED;
	assert_int_equal(rulesrc_clickhouse_fetch(c, SHA_A, &out, tag,
						  sizeof(tag), err,
						  sizeof(err)), -ECONNREFUSED);
	assert_string_equal(err, "clickhouse fake: refused");
	assert_int_equal(out.len, 0);
	rulesrc_clickhouse_free(c);
	jbuf_free(&out);
}

/* rules.source = "clickhouse" without a clickhouse sink: refused,
 * naming the file; with one, the source opens (nothing is asked yet). */
static void test_open(void **state)
{
	struct jt_sink_config sink = { .type = JT_SINK_CLICKHOUSE,
				       .name = "fleet",
				       .url = "http://127.0.0.1:9/",
				       .database = "jt", .credentials_file = "",
				       .timeout_ms = 1000, .tls_verify = true,
				       .tls_ca_file = "", .tls_cert = "",
				       .tls_key = "" };
	struct jt_config cfg = { .source = "/etc/jt.conf" };
	char err[256];
	void *ctx = (void *)1;

	(void)state;
	assert_int_equal(rulesrc_clickhouse_open(&cfg, &ctx, err, sizeof(err)),
			 -EINVAL);
	assert_null(ctx);
	assert_non_null(strstr(err, "/etc/jt.conf has no clickhouse sink"));
	cfg.sinks = &sink;
	cfg.n_sinks = 1;
	assert_int_equal(rulesrc_clickhouse_open(&cfg, &ctx, err, sizeof(err)),
			 0);
	assert_non_null(ctx);
	rulesrc_clickhouse_close(ctx);
	rulesrc_clickhouse_close(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fetch_new_then_unchanged),
		cmocka_unit_test(test_fetch_errors),
		cmocka_unit_test(test_open),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
