// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_sink.c - the sink engine (sink.c) over a real spool with a fake
 * backend whose failures the test scripts: batches by count and age, a
 * flush delivers a young batch, a failed send, add, open or check keeps
 * the records (retried, each stored once, in spool order), a stop drains
 * what is synced, and a stop on a failing backend leaves the records in
 * the spool for the next start; and the configured SQLite backend over
 * a real store, made again when deleted under the sink.  No root.
 */
#include <errno.h>
#include <pthread.h>
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

#include "config.h"
#include "sink.h"
#include "sink_backend.h"
#include "spool.h"
#include "store.h"
#include "util.h"

#define MAX_REC 4096

/* The fake backend's script (set before the start) and what it saw. */
struct fake {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	/* script */
	unsigned open_fail;	/* the first opens that fail */
	unsigned send_fail;	/* the first sends that fail */
	unsigned send_fail_every; /* then every Nth send fails; 0: none */
	long add_fail_rec;	/* this record's first add fails; -1: none */
	unsigned check_reread;	/* checks that report a lost target */
	/* seen */
	unsigned opens, sends, send_failed, checks, closes;
	uint64_t reread;	/* what sink_reread answered */
	unsigned stored[MAX_REC];	/* record numbers stored, in order */
	size_t n_stored;
	size_t batch[MAX_REC];	/* records of each stored batch */
	size_t n_batches;
	size_t skipped_seen;
};

static struct fake fk;
static struct fake seen;	/* a copy of fk to assert on, lock free */
static struct sink_backend fake_ops;
static char dir[64];
/* what a failed test left running, stopped by teardown */
static struct sinks *running;
static struct spool *opened;

/* Open: fails the first open_fail times. */
static int fake_open(struct sink *k, char *err, size_t errlen)
{
	struct fake *f = sink_ctx(k);
	int e = 0;

	pthread_mutex_lock(&f->lock);
	if (f->opens++ < f->open_fail) {
		snprintf(err, errlen, "fake: cannot open");
		e = -ECONNREFUSED;
	}
	pthread_mutex_unlock(&f->lock);
	return e;
}

/* The record's number: records are {"n":N} (or {"skip":N}). */
static long rec_no(const char *rec, size_t len)
{
	char buf[64];
	const char *c;

	snprintf(buf, sizeof(buf), "%.*s", (int)(len < 63 ? len : 63), rec);
	c = strchr(buf, ':');
	return c ? strtol(c + 1, NULL, 10) : -1;
}

/* Add: the record's number as a line of part 0; "skip" records skipped. */
static int fake_add(struct sink *k, struct sink_batch *b, const char *rec,
		    size_t len)
{
	struct fake *f = sink_ctx(k);
	long no = rec_no(rec, len);
	char line[32];
	int n;

	if (memmem(rec, len, "skip", 4))
		return SINK_SKIP;
	pthread_mutex_lock(&f->lock);
	if (no == f->add_fail_rec) {
		f->add_fail_rec = -1;
		pthread_mutex_unlock(&f->lock);
		return -ENOMEM;
	}
	pthread_mutex_unlock(&f->lock);
	n = snprintf(line, sizeof(line), "%ld\n", no);
	return jbuf_put(&b->part[0], line, (size_t)n);
}

/* Send: fails as scripted, else stores the batch's record numbers. */
static int fake_send(struct sink *k, struct sink_batch *b, char *err,
		     size_t errlen)
{
	struct fake *f = sink_ctx(k);
	size_t got = 0;
	unsigned i;

	pthread_mutex_lock(&f->lock);
	i = f->sends++;
	if (i < f->send_fail ||
	    (f->send_fail_every && i % f->send_fail_every == 0)) {
		f->send_failed++;
		pthread_cond_broadcast(&f->cond);
		pthread_mutex_unlock(&f->lock);
		snprintf(err, errlen, "fake: down");
		return -EIO;
	}
	for (const char *p = b->part[0].buf, *end = p + b->part[0].len;
	     p && p < end && f->n_stored < MAX_REC;
	     p = memchr(p, '\n', (size_t)(end - p)) + 1) {
		f->stored[f->n_stored++] = (unsigned)strtoul(p, NULL, 10);
		got++;
	}
	f->skipped_seen += b->n - got;
	f->batch[f->n_batches++] = b->n;
	pthread_cond_broadcast(&f->cond);
	pthread_mutex_unlock(&f->lock);
	return 0;
}

/* Check: the first check_reread times, the target lost what it had. */
static int fake_check(struct sink *k, char *err, size_t errlen)
{
	struct fake *f = sink_ctx(k);
	int e = 0;

	pthread_mutex_lock(&f->lock);
	f->checks++;
	if (f->check_reread) {
		f->check_reread--;
		f->reread += sink_reread(k);
		snprintf(err, errlen, "fake: target lost its records");
		e = -ESTALE;
	}
	pthread_mutex_unlock(&f->lock);
	return e;
}

/* Close: counted. */
static void fake_close(struct sink *k)
{
	struct fake *f = sink_ctx(k);

	pthread_mutex_lock(&f->lock);
	f->closes++;
	pthread_mutex_unlock(&f->lock);
}

/* A fresh spool folder and a fake with nothing scripted. */
static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/jt-sink-test.XXXXXX");
	assert_non_null(mkdtemp(dir));
	memset(&fk, 0, sizeof(fk));
	pthread_mutex_init(&fk.lock, NULL);
	pthread_cond_init(&fk.cond, NULL);
	fk.add_fail_rec = -1;
	fake_ops = (struct sink_backend){
		.type = "fake", .open = fake_open, .add = fake_add,
		.send = fake_send, .check = fake_check, .close = fake_close,
	};
	return 0;
}

/* Remove the spool folder. */
static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	sinks_stop(running, 0);
	running = NULL;
	spool_close(opened);
	opened = NULL;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd);
}

/* The spool with the one sink name. */
static struct spool *open_spool_for(const char *name)
{
	const char *const names[] = { name };
	struct spool_opts o = { .dir = dir, .max_bytes = 64 << 20,
				.segment_bytes = 1 << 20 };
	struct spool *s = NULL;
	char err[256];

	assert_int_equal(spool_open(&o, names, 1, &s, err, sizeof(err)), 0);
	opened = s;
	return s;
}

/* The spool with the one sink "fake". */
static struct spool *open_spool(void)
{
	return open_spool_for("fake");
}

/* Append records from..to-1 ({"n":N}) and sync them. */
static void append(struct spool *s, unsigned from, unsigned to)
{
	char buf[64];

	for (unsigned i = from; i < to; i++) {
		int n = snprintf(buf, sizeof(buf), "{\"n\":%u}", i);

		assert_int_equal(spool_append(s, buf, (size_t)n), 0);
	}
	assert_int_equal(spool_sync(s), 0);
}

/* Start the engine over s with the fake: batches of batch records or
 * age_ms, back-off at most 20 ms. */
static struct sinks *start(struct spool *s, unsigned batch, unsigned age_ms)
{
	struct sink_def d = {
		.name = "fake", .batch_records = batch, .batch_age_ms = age_ms,
		.retry_max_ms = 20, .ops = &fake_ops, .ctx = &fk,
	};
	struct sinks *ks = NULL;
	char err[256];

	assert_int_equal(sinks_start_defs(s, &d, 1, &ks, err, sizeof(err)), 0);
	running = ks;
	return ks;
}

/* Stop the sinks, draining within drain_ms. */
static void stop(struct sinks *ks, unsigned drain_ms)
{
	running = NULL;
	sinks_stop(ks, drain_ms);
}

/* Close the spool. */
static void close_spool(struct spool *s)
{
	opened = NULL;
	spool_close(s);
}

/* Wait (at most 10 s) until the fake stored n records; returns how many
 * it stored. */
static size_t wait_stored(size_t n)
{
	uint64_t end = util_now_ns(CLOCK_REALTIME) + 10000000000ull;
	struct timespec ts = { (time_t)(end / 1000000000ull),
			       (long)(end % 1000000000ull) };
	size_t got;

	pthread_mutex_lock(&fk.lock);
	while (fk.n_stored < n &&
	       pthread_cond_timedwait(&fk.cond, &fk.lock, &ts) != ETIMEDOUT)
		;
	got = fk.n_stored;
	pthread_mutex_unlock(&fk.lock);
	return got;
}

/* A status line's value: sink.NAME.KEY for sink "fake" when key has no
 * dot, else sink.KEY. */
static uint64_t status_of(struct sinks *ks, const char *key)
{
	char want[64], *buf = NULL, *p;
	size_t len = 0;
	uint64_t v = UINT64_MAX;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	sinks_status(ks, f);
	fclose(f);
	snprintf(want, sizeof(want), "\nsink.%s%s: ", strchr(key, '.') ? "" :
		 "fake.", key);
	p = strstr(buf, want);
	if (p)
		v = strtoull(p + strlen(want), NULL, 10);
	free(buf);
	return v;
}

/* Wait (at most 10 s) until status line key (status_of) reaches n;
 * returns its value. */
static uint64_t wait_status(struct sinks *ks, const char *key, uint64_t n)
{
	uint64_t v = 0;

	for (int i = 0; i < 10000 && ((v = status_of(ks, key)) < n ||
				      v == UINT64_MAX); i++)
		usleep(1000);
	return v;
}

/* Wait until the engine counted n records delivered (it has acknowledged
 * them then); returns its count. */
static uint64_t wait_delivered(struct sinks *ks, uint64_t n)
{
	return wait_status(ks, "delivered", n);
}

/* The sink's acknowledged position in s. */
static uint64_t acked(struct spool *s)
{
	struct spool_sink_stats ps;

	spool_get_sink_stats(s, 0, &ps);
	return ps.ack_seq;
}

/* Copy what the fake saw into seen (an assertion that fails must not
 * leave fk's lock held: teardown stops the sinks). */
static void snap(void)
{
	pthread_mutex_lock(&fk.lock);
	memcpy(&seen, &fk, sizeof(seen));
	pthread_mutex_unlock(&fk.lock);
}

/* The fake stored exactly records 0..n-1, in order. */
static void assert_stored_once_in_order(size_t n)
{
	snap();
	assert_int_equal(seen.n_stored, n);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(seen.stored[i], i);
}

/* Batches fill to batch_records; a young partial batch waits for its age
 * until a flush; everything is acknowledged once stored. */
static void test_batching_and_flush(void **state)
{
	struct spool *s = open_spool();
	struct sinks *ks = start(s, 4, 60000);

	(void)state;
	append(s, 0, 10);
	sinks_notify(ks);
	assert_int_equal(wait_stored(8), 8);
	assert_int_equal(wait_delivered(ks, 8), 8);
	usleep(300000);	/* the last 2 are 60 s from their age */
	snap();
	assert_int_equal(seen.n_stored, 8);
	assert_int_equal(seen.n_batches, 2);
	assert_int_equal(seen.batch[0], 4);
	assert_int_equal(seen.batch[1], 4);
	assert_int_equal(acked(s), 8);

	/* a flush up to record 9 takes the batch holding 8 and 9 */
	sinks_flush(ks, 9);
	assert_int_equal(wait_stored(10), 10);
	assert_int_equal(wait_delivered(ks, 10), 10);
	assert_int_equal(fk.n_batches, 3);
	assert_int_equal(fk.batch[2], 2);
	assert_stored_once_in_order(10);
	assert_int_equal(status_of(ks, "delivered"), 10);
	assert_int_equal(status_of(ks, "batches"), 3);
	assert_int_equal(status_of(ks, "retries"), 0);
	stop(ks, 1000);
	assert_int_equal(acked(s), 10);
	assert_int_equal(fk.closes, 1);
	close_spool(s);
}

/* A young batch comes of age: delivered without a flush. */
static void test_batch_age(void **state)
{
	struct spool *s = open_spool();
	struct sinks *ks = start(s, 1000, 50);
	uint64_t t0;

	(void)state;
	t0 = util_now_ns(CLOCK_MONOTONIC);
	append(s, 0, 3);
	sinks_notify(ks);
	assert_int_equal(wait_stored(3), 3);
	/* not before its age of 50 ms (the first record's read) */
	assert_true(util_now_ns(CLOCK_MONOTONIC) - t0 >= 50000000ull);
	assert_int_equal(fk.n_batches, 1);
	stop(ks, 1000);
	close_spool(s);
}

/* Failed sends keep the records: retried, each stored once, in order. */
static void run_send_failures(bool pipelined)
{
	struct spool *s = open_spool();
	struct sinks *ks;

	fake_ops.pipelined = pipelined;
	fk.send_fail = 3;
	fk.send_fail_every = 5;
	ks = start(s, 7, 5);
	append(s, 0, 500);
	sinks_notify(ks);
	assert_int_equal(wait_stored(500), 500);
	stop(ks, 1000);
	assert_stored_once_in_order(500);
	/* sends 0, 1, 2 fail, then 5, 10, ...: each failure one retry */
	assert_true(fk.send_failed >= 3 + 1);
	assert_int_equal(fk.sends, fk.send_failed + fk.n_batches);
	assert_int_equal(acked(s), 500);
	close_spool(s);

	/* the counters a new start reads: nothing left to deliver */
	s = open_spool();
	assert_int_equal(acked(s), 500);
	close_spool(s);
}

/* ... for a sink that sends in the sink thread (the store's way). */
static void test_send_failure_kept(void **state)
{
	(void)state;
	run_send_failures(false);
}

/* ... and for one that sends in a sender thread (the network sinks'). */
static void test_send_failure_kept_pipelined(void **state)
{
	(void)state;
	run_send_failures(true);
}

/* Status counts the failed attempts, and says the sink is retrying while
 * it fails. */
static void test_retry_counted(void **state)
{
	struct spool *s = open_spool();
	struct sinks *ks;
	char line[512];

	(void)state;
	fk.send_fail = 4;
	ks = start(s, 10, 5);
	append(s, 0, 5);
	sinks_notify(ks);
	assert_int_equal(wait_stored(5), 5);
	assert_int_equal(wait_delivered(ks, 5), 5);
	assert_int_equal(status_of(ks, "retries"), 4);
	assert_int_equal(status_of(ks, "delivered"), 5);
	assert_int_equal(sinks_problems(ks, line, sizeof(line)), 0);
	stop(ks, 1000);
	assert_stored_once_in_order(5);
	close_spool(s);
}

/* An add that fails makes the batch read again: nothing lost or doubled;
 * a skipped record is counted, acknowledged and not stored. */
static void test_add_failure_and_skip(void **state)
{
	struct spool *s = open_spool();
	struct sinks *ks;

	(void)state;
	fk.add_fail_rec = 3;
	ks = start(s, 4, 5);
	append(s, 0, 6);
	assert_int_equal(spool_append(s, "{\"skip\":6}", 10), 0);
	append(s, 7, 10);
	sinks_notify(ks);
	assert_int_equal(wait_stored(9), 9);
	assert_int_equal(wait_delivered(ks, 10), 10);
	assert_int_equal(status_of(ks, "unencodable_skipped"), 1);
	assert_int_equal(status_of(ks, "retries"), 1);
	stop(ks, 1000);
	snap();
	assert_int_equal(seen.n_stored, 9);
	for (size_t i = 0; i < 9; i++)
		assert_int_equal(seen.stored[i], i < 6 ? i : i + 1);
	assert_int_equal(seen.skipped_seen, 1);
	assert_int_equal(acked(s), 10);
	close_spool(s);
}

/* A target that cannot be opened is retried until it can. */
static void test_open_retried(void **state)
{
	struct spool *s = open_spool();
	struct sinks *ks;

	(void)state;
	fk.open_fail = 3;
	append(s, 0, 20);
	ks = start(s, 8, 5);
	assert_int_equal(wait_stored(20), 20);
	assert_int_equal(wait_delivered(ks, 20), 20);
	assert_int_equal(fk.opens, 4);
	assert_int_equal(status_of(ks, "retries"), 3);
	stop(ks, 1000);
	assert_stored_once_in_order(20);
	close_spool(s);
}

/* A target that lost what it stored (the store's file deleted) reads
 * again everything the spool still has, from its oldest record. */
static void test_check_reread(void **state)
{
	struct spool *s = open_spool();
	struct sinks *ks;

	(void)state;
	fk.check_reread = 1;
	append(s, 0, 12);
	ks = start(s, 5, 5);
	assert_int_equal(wait_stored(24), 24);
	stop(ks, 1000);
	snap();
	assert_int_equal(seen.reread, 12);
	for (size_t i = 0; i < 24; i++)
		assert_int_equal(seen.stored[i], i % 12);
	assert_int_equal(acked(s), 12);
	close_spool(s);
}

/* A stop drains what is synced, whatever the batch's age or size. */
static void test_stop_drains(void **state)
{
	struct spool *s = open_spool();
	struct sinks *ks;

	(void)state;
	fake_ops.pipelined = true;
	append(s, 0, 7);
	ks = start(s, 100, 60000);
	stop(ks, 5000);
	assert_stored_once_in_order(7);
	assert_int_equal(fk.n_batches, 1);
	assert_int_equal(acked(s), 7);
	close_spool(s);
}

/* A stop while the target fails makes one attempt and keeps the records
 * in the spool: the next start delivers them, each once. */
static void test_stop_failing_keeps(void **state)
{
	struct spool *s = open_spool();
	struct sinks *ks;
	char line[512];

	(void)state;
	fk.send_fail = 1000000;
	append(s, 0, 7);
	ks = start(s, 100, 5);
	for (int i = 0; i < 1000 && status_of(ks, "retries") == 0; i++)
		usleep(10000);
	assert_int_equal(sinks_problems(ks, line, sizeof(line)), 1);
	assert_non_null(strstr(line, "sink fake retrying: fake: down"));
	stop(ks, 200);
	assert_int_equal(fk.n_stored, 0);
	assert_int_equal(acked(s), 0);
	close_spool(s);

	/* the next start: the same records, once */
	s = open_spool();
	assert_int_equal(acked(s), 0);
	fk.send_fail = 0;
	ks = start(s, 100, 5);
	assert_int_equal(wait_stored(7), 7);
	stop(ks, 1000);
	assert_stored_once_in_order(7);
	assert_int_equal(acked(s), 7);
	close_spool(s);
}

/* A status line's text after "sink.fake.KEY: " into out (len bytes);
 * "" when there is none. */
static void status_text(struct sinks *ks, const char *key, char *out,
			size_t len)
{
	char want[64], *buf = NULL, *p;
	size_t blen = 0;
	FILE *f = open_memstream(&buf, &blen);

	assert_non_null(f);
	sinks_status(ks, f);
	fclose(f);
	snprintf(want, sizeof(want), "\nsink.fake.%s: ", key);
	p = strstr(buf, want);
	snprintf(out, len, "%.*s", p ? (int)strcspn(p + strlen(want), "\n") :
		 0, p ? p + strlen(want) : "");
	free(buf);
}

/* Status of a sink that never stored: its URL without secrets, whole
 * however long, and "never" as its last success (the URL was written
 * over it). */
static void test_status_url_and_never(void **state)
{
	char url[200], want[200], got[256];
	struct spool *s = open_spool();
	struct sink_def d = {
		.name = "fake", .url = url, .batch_records = 10,
		.batch_age_ms = 5, .retry_max_ms = 20, .ops = &fake_ops,
		.ctx = &fk,
	};
	struct sinks *ks = NULL;

	(void)state;
	snprintf(url, sizeof(url), "https://user:secret@collector.example.org"
		 ":8443/ingest/a-long-path-of-the-collector/v1/records"
		 "?token=hidden");
	snprintf(want, sizeof(want), "https://collector.example.org:8443"
		 "/ingest/a-long-path-of-the-collector/v1/records");
	fk.send_fail = 1000000;
	append(s, 0, 3);
	assert_int_equal(sinks_start_defs(s, &d, 1, &ks, got, sizeof(got)), 0);
	running = ks;
	assert_true(wait_status(ks, "retries", 1) >= 1);
	status_text(ks, "url", got, sizeof(got));
	assert_string_equal(got, want);
	status_text(ks, "last_success", got, sizeof(got));
	assert_string_equal(got, "never");
	stop(ks, 0);
	close_spool(s);
}

/* Records in the SQLite store at path (its own reader). */
static int64_t store_count_at(const char *path)
{
	struct store *st = NULL;
	int64_t n;

	assert_int_equal(store_open(path, true, &st), 0);
	n = store_records(st);
	store_close(st);
	return n;
}

/* Remove the SQLite store at path under the running sink. */
static void remove_store(const char *path)
{
	static const char *const sfx[] = { "", "-wal", "-shm" };
	char p[256];

	for (size_t i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "%s%s", path, sfx[i]);
		unlink(p);
	}
}

/*
 * The configured SQLite backend (sink_sqlite.c over a real store): the
 * records land in the store, one that is no record is skipped, and a
 * store deleted under the sink is made again with what the spool has.
 */
static void test_sqlite_backend(void **state)
{
	struct jt_config c;
	struct spool *s;
	struct sinks *ks = NULL;
	const char *names[SINKS_MAX];
	char err[256], rec[256], path[128];
	uint64_t ack = 0;
	bool failing = true;

	(void)state;
	assert_int_equal(config_defaults(&c), 0);
	snprintf(path, sizeof(path), "%s/jt.db", dir);
	free(c.sqlite_path);
	c.sqlite_path = strdup(path);
	c.flush_records = 8;
	c.flush_interval_ms = 20;
	assert_int_equal(sinks_names(&c, names, SINKS_MAX), 1);
	assert_string_equal(names[0], "sqlite");
	s = open_spool_for("sqlite");
	for (unsigned i = 0; i < 20; i++) {
		int n = snprintf(rec, sizeof(rec), "{\"type\":\"job\","
				 "\"schema\":1,\"host\":\"n1\",\"id\":\"j%u\","
				 "\"phase\":\"start\"}", i);

		assert_int_equal(spool_append(s, rec, (size_t)n), 0);
	}
	assert_int_equal(spool_append(s, "{\"x\":1}", 7), 0);
	assert_int_equal(spool_sync(s), 0);
	assert_int_equal(sinks_start(&c, s, &ks, err, sizeof(err)), 0);
	running = ks;
	assert_int_equal(wait_status(ks, "sqlite.delivered", 21), 21);
	assert_int_equal(status_of(ks, "sqlite.unencodable_skipped"), 1);
	assert_true(sinks_store_position(ks, &ack, &failing));
	assert_int_equal(ack, 21);
	assert_false(failing);
	assert_int_equal(store_count_at(path), 20);

	/* deleted under the sink: a new store gets what the spool has */
	remove_store(path);
	assert_int_equal(wait_status(ks, "sqlite.store_recreated", 1), 1);
	assert_int_equal(wait_status(ks, "sqlite.delivered", 42), 42);
	assert_int_equal(status_of(ks, "sqlite.store_records_lost"), 0);
	stop(ks, 1000);
	assert_int_equal(store_count_at(path), 20);
	close_spool(s);
	config_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_batching_and_flush, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_batch_age, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_send_failure_kept, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_send_failure_kept_pipelined,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_retry_counted, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_add_failure_and_skip,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_retried, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_check_reread, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_stop_drains, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_stop_failing_keeps, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_sqlite_backend, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_status_url_and_never,
						setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
