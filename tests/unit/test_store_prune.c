// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_store_prune.c - store_prune() and store_usage() on real SQLite
 * files: records of known times in both tables, pruned by retention and
 * by size, and exactly the ones that should remain are counted.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "log.h"
#include "store.h"
#include "test_files.h"

#define DAY 86400.0
/* "now" of every test: 2026-11-24T00:00:00Z */
#define NOW 1795478400.0

struct fixture {
	char dir[64];
	char db[96];
};

/* A scratch folder and the path of a store in it. */
static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	log_init("test_store_prune", 0, LOG_LVL_ERROR);
	snprintf(f->dir, sizeof(f->dir), "/tmp/jt_prune_XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->db, sizeof(f->db), "%s/jobtrace.db", f->dir);
	*state = f;
	return 0;
}

/* Remove the store, its WAL files and the folder. */
static int teardown(void **state)
{
	struct fixture *f = *state;

	test_remove_store(f->db, f->dir);
	free(f);
	return 0;
}

/* RFC 3339 with microseconds of epoch seconds t (whole microseconds). */
static void rfc3339(double t, char out[32])
{
	time_t sec = (time_t)t;
	struct tm tm;
	char day[24];

	gmtime_r(&sec, &tm);
	strftime(day, sizeof(day), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out, 32, "%s.%06ldZ", day,
		 (long)((t - (double)sec) * 1e6 + 0.5));
}

/*
 * Record number i, whose time (the one pruning goes by) is t: a process
 * (ended at t), a sample (at t) or a job end record (ended at t, started
 * long before), in turn; pad bytes of filler make it larger.
 */
static int put_record(struct store *s, unsigned i, double t, size_t pad)
{
	char a[32], b[32], json[4096], fill[2048];

	assert_true(pad < sizeof(fill));
	memset(fill, 'x', pad);
	fill[pad] = '\0';
	rfc3339(t, a);
	rfc3339(t - 100, b);
	switch (i % 3) {
	case 0:
		snprintf(json, sizeof(json), "{\"type\":\"process\",\"schema\":1,"
			 "\"host\":\"n1\",\"id\":\"r%u\",\"pid\":%u,\"ppid\":1,"
			 "\"start_time\":\"%s\",\"end_time\":\"%s\","
			 "\"argv\":[\"%s\"]}", i, i + 100, b, a, fill);
		break;
	case 1:
		snprintf(json, sizeof(json), "{\"type\":\"sample\",\"schema\":1,"
			 "\"host\":\"n1\",\"id\":\"r%u\",\"pid\":%u,"
			 "\"time\":\"%s\",\"argv\":[\"%s\"]}", i, i + 100, a,
			 fill);
		break;
	default:
		snprintf(json, sizeof(json), "{\"type\":\"job\",\"schema\":1,"
			 "\"host\":\"n1\",\"id\":\"r%u\",\"phase\":\"end\","
			 "\"job\":{\"id\":\"%u\"},\"start_time\":\"%s\","
			 "\"end_time\":\"%s\",\"name\":\"%s\"}", i, i, b, a,
			 fill);
		break;
	}
	return store_put_json(s, json, strlen(json));
}

/* One integer a query on the database returns. */
static int64_t query_int(const char *db_path, const char *sql)
{
	sqlite3_stmt *st = NULL;
	sqlite3 *db = NULL;
	int64_t v;

	assert_int_equal(sqlite3_open(db_path, &db), SQLITE_OK);
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		fail_msg("%s: %s", sql, sqlite3_errmsg(db));
	if (sqlite3_step(st) != SQLITE_ROW)
		fail_msg("%s: no row: %s", sql, sqlite3_errmsg(db));
	v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return v;
}

/* The number n of the record ids "rN" left, lowest and count. */
#define IDS "(SELECT CAST(substr(id, 2) AS INTEGER) AS n FROM process_rec" \
	" UNION ALL SELECT CAST(substr(id, 2) AS INTEGER) FROM record" \
	" WHERE id LIKE 'r%')"

/*
 * Prune until within the limits, checking that no step deletes more than
 * max_rows; returns the number of steps.
 */
static unsigned prune_all(struct store *s, const struct store_limits *l,
			  unsigned max_rows, struct store_pruned *got)
{
	unsigned steps = 0;
	int more;

	do {
		int64_t before = store_records(s);
		uint64_t sum = got->expired + got->for_size;

		more = store_prune(s, l, NOW, max_rows, got);
		assert_true(more == 0 || more == 1);
		assert_true(got->expired + got->for_size - sum <= max_rows);
		assert_int_equal(before - store_records(s),
				 got->expired + got->for_size - sum);
		assert_true(++steps < 100000);
	} while (more);
	return steps;
}

/*
 * Retention: 160 records, one every 6 hours back to 40 days ago, half an
 * hour off the day: those before now - 30 days go, in steps of at most 7;
 * a job that started before the cutoff and ended after it stays, a record
 * without a time stays.
 */
static void test_retention(void **state)
{
	struct fixture *f = *state;
	struct store_limits l = { .retention_s = 30 * DAY };
	struct store_pruned got = { 0, 0 };
	struct store_usage u;
	struct store *s = NULL;
	static const char notime[] = "{\"type\":\"host\",\"id\":\"no-time\"}";
	unsigned old = 0, steps;

	assert_int_equal(store_open(f->db, false, &s), 0);
	for (unsigned i = 0; i < 160; i++) {
		double t = NOW - 40 * DAY + 0.5 * 3600 + i * 0.25 * DAY;

		assert_int_equal(put_record(s, i, t, 50), 0);
		old += t < NOW - 30 * DAY;
	}
	assert_int_equal(store_put_json(s, notime, strlen(notime)), 0);
	assert_int_equal(store_flush(s), 161);
	assert_int_equal(old, 40);

	steps = prune_all(s, &l, 7, &got);
	assert_int_equal(got.expired, old);
	assert_int_equal(got.for_size, 0);
	assert_true(steps >= (old + 6) / 7);
	assert_int_equal(store_records(s), 161 - old);
	/* exactly the newest 120 are left, and the record without a time */
	assert_int_equal(query_int(f->db, "SELECT min(n) FROM " IDS), old);
	assert_int_equal(query_int(f->db, "SELECT count(*) FROM record"
				   " WHERE id = 'no-time'"), 1);
	assert_int_equal(store_usage(s, &u), 0);
	assert_true(u.oldest >= NOW - 30 * DAY);
	assert_true(u.oldest < NOW - 30 * DAY + 0.25 * DAY);

	/* nothing more to do: a step deletes nothing */
	assert_int_equal(store_prune(s, &l, NOW, 7, &got), 0);
	assert_int_equal(got.expired, old);
	/* 0: for ever */
	l.retention_s = 0;
	assert_int_equal(store_prune(s, &l, NOW + 365 * DAY, 7, &got), 0);
	assert_int_equal(store_records(s), 161 - old);
	store_close(s);
}

/*
 * Both limits: 2400 records of about 1 KiB, one every 72 s over the last
 * two days, the first 1200 past a retention of 1 day.  Expired and pruned for size are
 * counted apart, the newest records are the ones left, the pages in use
 * end under the low water, and the file shrinks with them (a new store is
 * auto_vacuum=INCREMENTAL).
 */
static void test_size_cap(void **state)
{
	struct fixture *f = *state;
	struct store_limits l = { .retention_s = DAY };
	struct store_pruned got = { 0, 0 };
	struct store_usage empty, full, half, u;
	struct store *s = NULL;
	int64_t left;

	assert_int_equal(store_open(f->db, false, &s), 0);
	assert_int_equal(query_int(f->db, "PRAGMA auto_vacuum"), 2);
	/* the tables' and indexes' first pages (16 KiB each) */
	assert_int_equal(store_usage(s, &empty), 0);
	for (unsigned i = 0; i < 2400; i++) {
		assert_int_equal(put_record(s, i, NOW - 2 * DAY + i * 72 + 36,
					    1000), 0);
		if (i == 1199) {
			assert_int_equal(store_flush(s), 1200);
			assert_int_equal(store_usage(s, &half), 0);
		}
	}
	assert_int_equal(store_flush(s), 1200);
	assert_int_equal(store_usage(s, &full), 0);
	assert_true(full.used_bytes > 2400 * 1000);
	assert_true(full.file_bytes >= full.used_bytes);
	assert_true(full.oldest == NOW - 2 * DAY + 36);

	/* a quarter of what is left after the retention, above an empty
	 * store's pages */
	l.max_bytes = empty.used_bytes + (full.used_bytes - half.used_bytes) / 2;
	prune_all(s, &l, 500, &got);
	left = store_records(s);
	assert_int_equal(got.expired, 1200);
	assert_true(got.for_size > 0);
	assert_int_equal(got.expired + got.for_size + (uint64_t)left, 2400);
	assert_int_equal(query_int(f->db, "SELECT min(n) || '|' || max(n)"
				   " = (2400 - count(*)) || '|2399' FROM " IDS), 1);
	assert_int_equal(store_usage(s, &u), 0);
	assert_true(u.used_bytes <= l.max_bytes / 100 * STORE_LOW_WATER);
	/* not much more than needed: the next 500 would have been enough */
	assert_true(u.used_bytes + 500 * 1100 > l.max_bytes / 100 *
		    STORE_LOW_WATER);
	assert_true(u.oldest == NOW - 2 * DAY + (2400 - left) * 72.0 + 36);
	/* the free pages went back to the filesystem */
	assert_int_equal(query_int(f->db, "PRAGMA freelist_count"), 0);
	assert_true((uint64_t)query_int(f->db, "SELECT page_count * page_size"
					" FROM pragma_page_count, pragma_page_size")
		    == u.used_bytes);

	/* within the limits: nothing more goes */
	assert_int_equal(store_prune(s, &l, NOW, 500, &got), 0);
	assert_int_equal(store_records(s), left);
	/* a smaller cap read again (a reload) prunes further */
	l.max_bytes /= 2;
	prune_all(s, &l, 500, &got);
	assert_true(store_records(s) < left);
	assert_int_equal(store_usage(s, &u), 0);
	assert_true(u.used_bytes <= l.max_bytes / 100 * STORE_LOW_WATER);
	store_close(s);
}

/*
 * A store made before auto_vacuum (here: its first table came first)
 * cannot give pages back: pruning frees them inside the file, new records
 * reuse them, and the cap counts only the pages in use.
 */
static void test_size_cap_old_store(void **state)
{
	struct fixture *f = *state;
	struct store_limits l = { 0 };
	struct store_pruned got = { 0, 0 };
	struct store_usage full, u, again;
	struct store *s = NULL;
	sqlite3 *db = NULL;
	int64_t pages;

	assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "CREATE TABLE meta(key TEXT"
				      " PRIMARY KEY, value TEXT);"
				      "INSERT INTO meta VALUES"
				      "('schema_version', '7');",
				      NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	assert_int_equal(store_open(f->db, false, &s), 0);
	assert_int_equal(query_int(f->db, "PRAGMA auto_vacuum"), 0);
	for (unsigned i = 0; i < 1500; i++)
		assert_int_equal(put_record(s, i, NOW - DAY + i, 1000), 0);
	assert_int_equal(store_flush(s), 1500);
	assert_int_equal(store_usage(s, &full), 0);

	l.max_bytes = full.used_bytes / 2;
	prune_all(s, &l, 500, &got);
	assert_int_equal(got.expired, 0);
	assert_int_equal(got.for_size + (uint64_t)store_records(s), 1500);
	assert_int_equal(store_usage(s, &u), 0);
	assert_true(u.used_bytes <= l.max_bytes / 100 * STORE_LOW_WATER);
	pages = query_int(f->db, "PRAGMA page_count");
	assert_true(query_int(f->db, "PRAGMA freelist_count") > 0);
	assert_true(u.file_bytes >= full.used_bytes);

	/* new records go into the free pages: the file does not grow */
	for (unsigned i = 0; i < 300; i++)
		assert_int_equal(put_record(s, 2000 + i, NOW + i, 1000), 0);
	assert_int_equal(store_flush(s), 300);
	assert_int_equal(query_int(f->db, "PRAGMA page_count"), pages);
	assert_int_equal(store_usage(s, &again), 0);
	assert_true(again.used_bytes > u.used_bytes);
	store_close(s);
}

/* A batch that is open is not touched: store_prune waits for its commit. */
static void test_prune_waits_for_batch(void **state)
{
	struct fixture *f = *state;
	struct store_limits l = { .retention_s = DAY };
	struct store_pruned got = { 0, 0 };
	struct store *s = NULL;

	assert_int_equal(store_open(f->db, false, &s), 0);
	assert_int_equal(put_record(s, 0, NOW - 2 * DAY, 10), 0);
	assert_int_equal(store_flush(s), 1);
	assert_int_equal(put_record(s, 1, NOW - 3 * DAY, 10), 0);
	assert_int_equal(store_prune(s, &l, NOW, 500, &got), -EBUSY);
	assert_int_equal(got.expired, 0);
	assert_int_equal(store_pending(s), 1);
	assert_int_equal(store_flush(s), 1);
	assert_int_equal(store_prune(s, &l, NOW, 500, &got), 0);
	assert_int_equal(got.expired, 2);
	assert_int_equal(store_records(s), 0);
	store_close(s);
}

/* An empty store: no oldest record, a page or so per table and index. */
static void test_usage_empty(void **state)
{
	struct fixture *f = *state;
	struct store *s = NULL;
	struct store_usage u;

	assert_int_equal(store_open(f->db, false, &s), 0);
	assert_int_equal(store_usage(s, &u), 0);
	assert_true(u.oldest == 0);
	/* a page or so per table and index: 76 pages of 4 KiB (304 KiB)
	 * with the sample, signal and job indexes of `jobtrace top` */
	assert_true(u.used_bytes > 0 && u.used_bytes < 512 * 1024);
	assert_true(u.file_bytes >= u.used_bytes);
	store_close(s);
}

/* Run every pruning test. */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_retention, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_size_cap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_size_cap_old_store, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_prune_waits_for_batch,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_usage_empty, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
