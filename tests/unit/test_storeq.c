// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_storeq.c - the one reader of stored records: the stored time rule
 * (RFC 3339 with its zone, or epoch seconds; a loose form and junk are
 * not known), the column readers on values of every SQLite type, and the
 * selector bound by storeq_prepare_db() (also into a statement that takes
 * no parameter), the query's object in a JSON answer, and the process
 * rows every view reads (storeq_procs_load) from a store this test writes.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sqlite3.h>
#include <unistd.h>

#include "json.h"
#include "log.h"
#include "store.h"
#include "storeq.h"
#include "test_files.h"

/* A row of values of every kind, in column order (see the enum). */
#define ROW_SQL "SELECT 1700000000.25, '2026-03-01T10:00:00.5Z'," \
	" '2026-03-01T12:00:00+02:00', '2026-03-01', '2026-03-01 10:00'," \
	" NULL, 'junk', 42, -5, 3.7, 1e30, 1e999, '12', ''," \
	" '1969-12-31T23:59:59Z', x'41'"
enum { C_EPOCH, C_RFC, C_OFFSET, C_DATE, C_LOOSE, C_NULL, C_JUNK, C_INT,
       C_NEG, C_FRAC, C_HUGE, C_INF, C_NUMTEXT, C_EMPTY, C_1969, C_BLOB };

/* 2026-03-01T10:00:00Z */
#define T_1000 1772359200.0

/* The statement of ROW_SQL, stepped to its row. */
static sqlite3_stmt *row(sqlite3 **db)
{
	sqlite3_stmt *st = NULL;

	assert_int_equal(sqlite3_open(":memory:", db), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(*db, ROW_SQL, -1, &st, NULL),
			 SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	return st;
}

/* The stored time rule: strict RFC 3339 with a zone, from 1970 on. */
static void test_parse_time(void **state)
{
	double t = -1;

	(void)state;
	assert_int_equal(storeq_parse_time("2026-03-01T10:00:00.5Z", &t), 0);
	assert_true(fabs(t - (T_1000 + 0.5)) < 1e-6);
	assert_int_equal(storeq_parse_time("2026-03-01T12:00:00+02:00", &t),
			 0);
	assert_true(fabs(t - T_1000) < 1e-6);
	/* what a person types is for --since, not a stored value */
	assert_int_equal(storeq_parse_time("2026-03-01", &t), -EINVAL);
	assert_int_equal(storeq_parse_time("2026-03-01 10:00", &t), -EINVAL);
	assert_int_equal(storeq_parse_time("2026-03-01T10:00:00", &t),
			 -EINVAL);
	assert_int_equal(storeq_parse_time("1969-12-31T23:59:59Z", &t),
			 -EINVAL);
	assert_int_equal(storeq_parse_time("junk", &t), -EINVAL);
	assert_int_equal(storeq_parse_time("", &t), -EINVAL);
	assert_int_equal(storeq_parse_time(NULL, &t), -EINVAL);
	/* --since still takes the loose forms */
	assert_int_equal(storeq_parse_since("2026-03-01 10:00", 0, &t), 0);
	assert_true(fabs(t - T_1000) < 1e-6);
}

/* A time column: a number, or text by the rule; dflt otherwise. */
static void test_col_time(void **state)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = row(&db);

	(void)state;
	assert_true(fabs(storeq_col_time(st, C_EPOCH, -1) - 1700000000.25) <
		    1e-6);
	assert_true(fabs(storeq_col_time(st, C_RFC, -1) - (T_1000 + 0.5)) <
		    1e-6);
	assert_true(fabs(storeq_col_time(st, C_OFFSET, -1) - T_1000) < 1e-6);
	assert_true(storeq_col_time(st, C_DATE, -1) == -1);
	assert_true(storeq_col_time(st, C_LOOSE, 0) == 0);
	assert_true(storeq_col_time(st, C_NULL, -1) == -1);
	assert_true(storeq_col_time(st, C_JUNK, -1) == -1);
	assert_true(storeq_col_time(st, C_1969, -1) == -1);
	assert_true(storeq_col_time(st, C_INF, -1) == -1);
	assert_true(storeq_col_time(st, C_BLOB, -1) == -1);
	sqlite3_finalize(st);
	sqlite3_close(db);
}

/* Numbers, amounts and counts: the wrong type is not known. */
static void test_col_numbers(void **state)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = row(&db);

	(void)state;
	assert_true(storeq_col_num(st, C_INT, -1) == 42);
	assert_true(storeq_col_num(st, C_NEG, -1) == -5);
	assert_true(storeq_col_num(st, C_NULL, -1) == -1);
	assert_true(storeq_col_num(st, C_NUMTEXT, -1) == -1);
	assert_true(storeq_col_num(st, C_INF, -1) == -1);
	assert_true(storeq_col_amount(st, C_NEG) == 0);
	assert_true(fabs(storeq_col_amount(st, C_FRAC) - 3.7) < 1e-12);
	assert_true(storeq_col_amount(st, C_INF) == 0);
	assert_true(storeq_col_u64(st, C_INT) == 42);
	assert_true(storeq_col_u64(st, C_NEG) == 0);
	assert_true(storeq_col_u64(st, C_FRAC) == 3);
	assert_true(storeq_col_u64(st, C_HUGE) == UINT64_MAX);
	assert_true(storeq_col_u64(st, C_NUMTEXT) == 0);
	assert_true(storeq_col_u64(st, C_NULL) == 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
}

/* Text: copied only when it is text. */
static void test_col_text(void **state)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = row(&db);
	char buf[8] = "kept", *s = NULL;

	(void)state;
	assert_int_equal(storeq_col_dup(st, C_JUNK, &s), 0);
	assert_string_equal(s, "junk");
	free(s);
	assert_int_equal(storeq_col_dup(st, C_INT, &s), 0);
	assert_null(s);
	assert_int_equal(storeq_col_dup(st, C_NULL, &s), 0);
	assert_null(s);
	assert_false(storeq_col_text(st, C_EMPTY, buf, sizeof(buf)));
	assert_false(storeq_col_text(st, C_INT, buf, sizeof(buf)));
	assert_string_equal(buf, "kept");
	assert_true(storeq_col_text(st, C_RFC, buf, sizeof(buf)));
	assert_string_equal(buf, "2026-03");	/* cut to the field */
	sqlite3_finalize(st);
	sqlite3_close(db);
}

/* The value bound as ?1 for q, as text. */
static void bound(sqlite3 *db, const struct report_query *q,
		  const char *want)
{
	sqlite3_stmt *st = NULL;

	assert_int_equal(storeq_prepare_db(db, "test", "SELECT ?1 || ''", q,
					   &st), 0);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_string_equal((const char *)sqlite3_column_text(st, 0), want);
	sqlite3_finalize(st);
}

/* Every selector is bound as ?1; a statement without one is prepared. */
static void test_prepare(void **state)
{
	struct report_query job = { .job = "42" }, run = { .run = "r1" };
	struct report_query pipe = { .pipeline = "p" }, pid = { .pid = 7 };
	struct report_query since = { .since = 1.5 };
	sqlite3_stmt *st = NULL;
	sqlite3 *db = NULL;

	(void)state;
	assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
	bound(db, &job, "42");
	bound(db, &run, "r1");
	bound(db, &pipe, "p");
	bound(db, &pid, "7");
	bound(db, &since, "1.5");
	/* report's own wrapper failed here (bind out of range) */
	assert_int_equal(storeq_prepare_db(db, "test", "SELECT 1", &job, &st),
			 0);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_int_equal(storeq_step_done(db, "test", sqlite3_step(st)), 0);
	sqlite3_finalize(st);
	st = NULL;
	assert_int_equal(storeq_prepare_db(db, "test", "SELECT * FROM nope",
					   &job, &st), -EIO);
	assert_null(st);
	assert_int_equal(storeq_step_done(db, "test", SQLITE_ERROR), -EIO);
	sqlite3_close(db);
}

/* {"K": the query's object} of q with by (NULL: none), as text. */
static void query_json(const struct report_query *q, const char *key,
		       const char *by, const char *want)
{
	struct jbuf b;

	jbuf_init(&b);
	json_obj_open(&b);
	storeq_json_query(&b, key, q, by);
	json_obj_close(&b);
	assert_false(b.oom);
	assert_string_equal(jbuf_str(&b), want);
	jbuf_free(&b);
}

/* Each selector names itself, the one that is set; by follows it. */
static void test_json_query(void **state)
{
	struct report_query job = { .job = "4\"2" }, run = { .run = "r1" };
	struct report_query pipe = { .pipeline = "p" }, pid = { .pid = 7 };
	struct report_query since = { .since = 1767225600.5 };
	struct report_query empty = { .job = "", .run = "r2" };

	(void)state;
	query_json(&job, "query", NULL, "{\"query\":{\"job\":\"4\\\"2\"}}");
	query_json(&run, "selection", NULL,
		   "{\"selection\":{\"run\":\"r1\"}}");
	query_json(&pipe, "query", "task",
		   "{\"query\":{\"pipeline\":\"p\",\"by\":\"task\"}}");
	query_json(&pid, "query", NULL, "{\"query\":{\"pid\":7}}");
	query_json(&since, "query", "job", "{\"query\":{\"since\":"
		   "\"2026-01-01T00:00:00.500000Z\",\"by\":\"job\"}}");
	/* an empty --job is no selector */
	query_json(&empty, "query", NULL, "{\"query\":{\"run\":\"r2\"}}");
}

/* An answer is printed with a newline; one that ran out of memory is
 * not printed at all. */
static void test_json_print(void **state)
{
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	struct jbuf b;

	(void)state;
	assert_non_null(out);
	jbuf_init(&b);
	json_obj_open(&b);
	json_kv_u64(&b, "n", 1);
	json_obj_close(&b);
	assert_int_equal(storeq_json_print(&b, out), 0);
	jbuf_init(&b);
	json_obj_open(&b);
	b.oom = true;
	assert_int_equal(storeq_json_print(&b, out), -ENOMEM);
	fclose(out);
	assert_string_equal(text, "{\"n\":1}\n");
	free(text);
}

/* Put a process (type "process") or a live one's sample ("sample") of
 * job J1 on host h1; times in seconds after 2026-03-01T10:00:00Z. */
static void put(struct store *s, const char *type, int pid, int ppid,
		const char *task, int start, int end, const char *cpu)
{
	char ends[64] = "";

	if (end >= 0)
		snprintf(ends, sizeof(ends), "\"end_time\":"
			 "\"2026-03-01T10:00:%02dZ\",", end);
	test_put_json(s, "{\"type\":\"%s\",\"schema\":1,\"host\":\"h1\","
	    "\"id\":\"%c%d\",%s\"pid\":%d,\"ppid\":%d,\"parent_id\":\"p%d\","
	    "\"start_time\":\"2026-03-01T10:00:%02dZ\",%s\"exe\":\"/bin/x\","
	    "\"comm\":\"x\",\"argv\":[\"x\"],\"uid\":0,\"job\":{"
	    "\"scheduler\":\"slurm\",\"id\":\"J1\",\"step\":\"batch\","
	    "\"run\":\"R1\",\"pipeline\":null,\"task\":%s%s%s,\"user\":null,"
	    "\"account\":null,\"cost_center\":null},\"tool\":{\"name\":\"x\","
	    "\"category\":null},\"exit\":{\"code\":0,\"signal\":null,"
	    "\"oom_killed\":false},\"cpu\":{%s},\"mem\":{\"peak_rss_bytes\":"
	    "%d},\"io\":{\"read_bytes\":0,\"write_bytes\":0},\"net\":{"
	    "\"rx_bytes\":0,\"tx_bytes\":0}}", type, type[0], pid,
	    type[0] == 's' ? "\"time\":\"2026-03-01T10:00:30Z\"," : "", pid,
	    ppid, ppid, start, ends, task ? "\"" : "", task ? task : "null",
	    task ? "\"" : "", cpu, pid * 1024);
}

/*
 * The rows of job J1: p1 (the root, no task) and its child p2 (task t)
 * with CPU below 0, p3 under p2 (task t), a live process s4 under p2 seen
 * only in a sample; by start time, linked by parent_id, CPU cut at 0 user
 * and system each; the sample with STOREQ_PROC_SAMPLES only, the JSON
 * with STOREQ_PROC_JSON only, the processes without a task left out with
 * STOREQ_PROC_TASKS; --pid the process and its descendants.
 */
static void test_procs(void **state)
{
	char dir[] = "/tmp/jt_storeq_XXXXXX", db[64];
	struct report_query job = { .job = "J1" }, pid = { .pid = 2 };
	struct storeq_proc *v = NULL;
	struct store *s = NULL;
	size_t n = 0;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(db, sizeof(db), "%s/store.db", dir);
	assert_int_equal(store_open(db, false, &s), 0);
	put(s, "process", 3, 2, "t", 5, 9, "\"user_s\":1,\"sys_s\":0.5");
	put(s, "process", 1, 0, NULL, 1, 20, "\"user_s\":0.25,\"sys_s\":0");
	put(s, "process", 2, 1, "t", 2, 10, "\"user_s\":-4,\"sys_s\":2");
	put(s, "sample", 4, 2, "t", 3, -1, "\"user_s\":7,\"sys_s\":1");
	assert_true(store_flush(s) > 0);

	assert_int_equal(storeq_procs_load(s, "test", &job, 0, &v, &n), 0);
	assert_int_equal(n, 3);
	assert_string_equal(v[0].id, "p1");
	assert_string_equal(v[1].id, "p2");
	assert_string_equal(v[2].id, "p3");
	assert_int_equal(v[0].parent, -1);	/* p0 is not loaded */
	assert_int_equal(v[1].parent, 0);
	assert_int_equal(v[2].parent, 1);
	assert_true(v[1].cpu_user == 0 && v[1].cpu_sys == 2);
	assert_true(v[2].cpu_user == 1 && v[2].cpu_sys == 0.5);
	assert_true(v[1].start == 1772359202 && v[1].end == 1772359210);
	assert_int_equal(v[2].peak_rss, 3 * 1024);
	assert_string_equal(v[1].task, "t");
	assert_string_equal(v[1].run, "R1");
	assert_null(v[0].task);
	assert_null(v[0].json);
	assert_false(v[1].running || v[1].sampled);
	storeq_procs_free(v, n);

	assert_int_equal(storeq_procs_load(s, "test", &job, STOREQ_PROC_SAMPLES |
					   STOREQ_PROC_JSON, &v, &n), 0);
	assert_int_equal(n, 4);
	assert_string_equal(v[2].id, "s4");	/* started at 3 s */
	assert_true(v[2].sampled && v[2].running);
	assert_true(v[2].end == 1772359230);	/* the sample's time */
	assert_int_equal(v[2].parent, 1);
	assert_int_equal(v[3].parent, 1);
	assert_non_null(strstr(v[3].json, "\"id\":\"p3\""));
	storeq_procs_free(v, n);

	assert_int_equal(storeq_procs_load(s, "test", &job, STOREQ_PROC_TASKS,
					   &v, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(v[0].parent, -1);	/* p1 has no task */
	assert_int_equal(v[1].parent, 0);
	storeq_procs_free(v, n);

	assert_int_equal(storeq_procs_load(s, "test", &pid, 0, &v, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(v[0].id, "p2");
	assert_string_equal(v[1].id, "p3");
	storeq_procs_free(v, n);
	storeq_procs_free(NULL, 0);
	store_close(s);
	test_remove_store(db, dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_time),
		cmocka_unit_test(test_col_time),
		cmocka_unit_test(test_col_numbers),
		cmocka_unit_test(test_col_text),
		cmocka_unit_test(test_prepare),
		cmocka_unit_test(test_json_query),
		cmocka_unit_test(test_json_print),
		cmocka_unit_test(test_procs),
	};

	log_init("test_storeq", 0, LOG_LVL_ERROR);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
