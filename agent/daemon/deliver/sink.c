// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sink.c - one thread per sink: read a batch from the spool, store it,
 * acknowledge it; on failure rewind to the acknowledged position and retry
 * after an exponential back-off with jitter.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "chschema.h"
#include "http.h"
#include "log.h"
#include "schema.h"
#include "sink.h"
#include "store.h"
#include "util.h"

#define MAX_SINKS SINKS_MAX
#define BATCH_MAX_BYTES (32u << 20)
#define RETRY_BASE_MS 500
#define CH_TABLES_MAX 16
_Static_assert(SF_REC__N <= CH_TABLES_MAX, "a ClickHouse batch per record type");
/*
 * The store is kept within its limits between batches: a pass every
 * PRUNE_EVERY_MS (PRUNE_AGAIN_MS while work is left) deletes in
 * transactions of PRUNE_ROWS records and starts none after
 * PRUNE_BUDGET_MS, so a batch waits that long and one transaction (a
 * few ms) at most.
 */
#define PRUNE_ROWS 500
#define PRUNE_BUDGET_MS 50
#define PRUNE_EVERY_MS 2000
#define PRUNE_AGAIN_MS 200

struct sink;

/* A batch's encoded bodies. */
struct batch {
	struct jbuf body;			/* http */
	struct jbuf tbl[CH_TABLES_MAX];		/* clickhouse, per table */
	size_t n;				/* records */
	uint64_t end_seq;			/* acknowledged when stored */
};

/* What differs between sink types. */
struct sink_ops {
	int (*open)(struct sink *k, char *err, size_t errlen);
	/* take one record into the batch being built: 0, SKIP (counted,
	 * not stored) or -errno (the batch fails) */
	int (*add)(struct sink *k, const char *rec, size_t len);
	/* store batch b; 0 or -errno with the reason in err */
	int (*send)(struct sink *k, struct batch *b, char *err, size_t errlen);
	void (*close)(struct sink *k);
	/* between batches, NULL or: is the target still there?  0, or
	 * -errno with what happened in err (the reader is rewound) */
	int (*check)(struct sink *k, char *err, size_t errlen);
	/* network sinks send a batch in a second thread while the next one
	 * is built, so encoding and the backend's work overlap */
	bool pipelined;
	/* between batches, NULL or: the target's housekeeping, bounded in
	 * time */
	void (*maintain)(struct sink *k);
};

#define SKIP 1

struct sink_stats {
	uint64_t delivered;	/* records stored */
	uint64_t batches;
	uint64_t retries;	/* failed attempts */
	uint64_t skipped;	/* records the sink could not encode */
	uint64_t recreated;	/* store file deleted under us, made anew */
	uint64_t recreate_lost;	/* records it held that the spool lacks */
	unsigned failing;	/* consecutive failures */
	char last_error[256];
	uint64_t last_error_ns;	/* CLOCK_REALTIME */
	uint64_t last_ok_ns;
	uint64_t retry_at_ns;	/* CLOCK_MONOTONIC, while backing off */
	uint64_t waiting_since_ns;	/* CLOCK_MONOTONIC: records read and
					 * not yet stored since; 0: none */
	uint64_t expired;	/* store: records past the retention deleted */
	uint64_t pruned_size;	/* store: the oldest deleted for the size cap */
	struct store_usage usage;	/* store: at the last measure */
	bool measured;		/* usage is known */
};

struct sink {
	struct sinks *all;
	unsigned idx;		/* spool sink number */
	enum jt_sink_type type;
	struct jt_sink_config cfg;	/* strings borrowed from the config */
	const char *sqlite_path;
	const struct sink_ops *ops;
	struct spool_reader *reader;
	pthread_t thread;
	bool started;

	/* batch being built */
	struct batch b[2];	/* cur is built, the other may be in flight */
	unsigned cur;
	size_t n;
	size_t bytes;
	uint64_t end_seq;
	uint64_t started_ns;	/* CLOCK_MONOTONIC of its first record */
	unsigned batch_records;
	unsigned batch_age_ms;
	int add_error;		/* an add failed: the batch is retried */

	/* the sender thread (pipelined sinks), under tx_lock */
	pthread_t tx_thread;
	bool tx_started;
	pthread_mutex_t tx_lock;
	pthread_cond_t tx_cond;
	struct batch *tx;	/* handed over, not yet sent */
	bool tx_busy;		/* handed over, result not yet taken */
	bool tx_quit;
	int tx_err;
	char tx_errbuf[512];

	/* type state */
	struct store *store;
	struct http_client *http;
	struct jbuf row;			/* clickhouse scratch */
	struct jbuf query;			/* clickhouse URL suffix */
	bool logged_skip;
	struct store_limits limits;	/* sqlite, under all->lock (reload) */
	uint64_t prune_at_ns;		/* CLOCK_MONOTONIC of the next pass */
	bool grew;			/* a batch was committed since */

	struct sink_stats st;		/* under all->lock */
	unsigned seed;
};

struct sinks {
	struct spool *spool;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool stopping;
	uint64_t deadline_ns;	/* CLOCK_MONOTONIC; 0 while running */
	uint64_t wakeups;	/* bumped by sinks_notify */
	uint64_t flush_seq;	/* records below: deliver now, whatever age */
	size_t n;
	struct sink k[MAX_SINKS];
};

#define SINK_STUCK_NS (10ull * 1000000000ull)	/* records waiting: a problem */

static bool past_deadline(struct sinks *ks);

static const char *const type_names[] = {
	[JT_SINK_SQLITE] = "sqlite",
	[JT_SINK_CLICKHOUSE] = "clickhouse",
	[JT_SINK_HTTP] = "http",
};

/* ---- sqlite ----------------------------------------------------------- */

static int sqlite_open(struct sink *k, char *err, size_t errlen)
{
	int e = store_open(k->sqlite_path, false, &k->store);

	if (e)
		util_seterr(err, errlen, "%s: %s", k->sqlite_path,
			    log_last_error());
	return e;
}

/*
 * The store's file was deleted or replaced under the agent: what it
 * committed since went where nobody reads it.  Close it, open a new one
 * at the path, and move the sink back to the oldest record the spool
 * still has; what the old file held beyond those is counted as lost.
 * Returns 0 while the file is the one open, else -ESTALE (err says it).
 */
static int sqlite_check(struct sink *k, char *err, size_t errlen)
{
	struct sinks *ks = k->all;
	uint64_t held, again, lost;
	int64_t n;

	if (!k->store || !store_replaced(k->store))
		return 0;
	store_discard(k->store);	/* this batch is read again */
	n = store_records(k->store);
	held = n > 0 ? (uint64_t)n : 0;
	store_close(k->store);
	k->store = NULL;
	again = spool_reread(ks->spool, k->idx);
	lost = held > again ? held - again : 0;
	pthread_mutex_lock(&ks->lock);
	k->st.recreated++;
	k->st.recreate_lost += lost;
	pthread_mutex_unlock(&ks->lock);
	util_seterr(err, errlen, "%s was deleted or replaced under the agent:"
		    " it held %" PRIu64 " records; a new store is made and the"
		    " %" PRIu64 " the spool still has are stored again, %" PRIu64
		    " are lost", k->sqlite_path, held, again, lost);
	if (sqlite_open(k, NULL, 0))
		log_error("sink %s: %s: %s (retried with the next batch)",
			  k->cfg.name, k->sqlite_path, log_last_error());
	return -ESTALE;
}

static int sqlite_add(struct sink *k, const char *rec, size_t len)
{
	int e;

	/* a store that could not be made again is retried per batch */
	if (!k->store && (e = sqlite_open(k, NULL, 0)))
		return e;
	e = store_put_json(k->store, rec, len);

	/* a record that can never be stored is skipped (and logged by the
	 * store); any other failure fails the batch */
	return e == -EINVAL ? SKIP : e;
}

static int sqlite_send(struct sink *k, struct batch *b, char *err,
		       size_t errlen)
{
	int n;

	(void)b;
	n = sqlite_check(k, err, errlen);
	if (n)
		return n;
	n = store_flush(k->store);

	if (n < 0) {
		util_seterr(err, errlen, "%s: %s", k->sqlite_path,
			    log_last_error());
		return n;
	}
	k->grew = true;
	return 0;
}

static void sqlite_close(struct sink *k)
{
	store_close(k->store);
	k->store = NULL;
}

/* Measure the store for status; false when that could not be done (status
 * keeps the last measure). */
static bool sqlite_measure(struct sink *k, struct store_usage *u)
{
	struct sinks *ks = k->all;

	if (store_usage(k->store, u))
		return false;
	pthread_mutex_lock(&ks->lock);
	k->st.usage = *u;
	k->st.measured = true;
	pthread_mutex_unlock(&ks->lock);
	return true;
}

/*
 * Between batches: keep the store within store.retention and
 * store.max_size_mib.  A pass runs when due, or as soon as a committed
 * batch took the store over its cap (measuring is a page count).
 */
static void sqlite_maintain(struct sink *k)
{
	struct sinks *ks = k->all;
	struct store_pruned got = { 0, 0 };
	struct store_limits lim;
	struct store_usage u;
	uint64_t now = util_now_ns(CLOCK_MONOTONIC);
	uint64_t end = now + PRUNE_BUDGET_MS * 1000000ull;
	unsigned steps = 0;
	int more;

	if (!k->store)
		return;
	pthread_mutex_lock(&ks->lock);
	lim = k->limits;
	pthread_mutex_unlock(&ks->lock);
	if (now < k->prune_at_ns) {
		if (!k->grew || !lim.max_bytes)
			return;
		k->grew = false;
		if (!sqlite_measure(k, &u) || u.used_bytes <= lim.max_bytes)
			return;
	}
	k->grew = false;
	do {
		more = store_prune(k->store, &lim,
				   (double)util_now_ns(CLOCK_REALTIME) / 1e9,
				   PRUNE_ROWS, &got);
		steps++;
	} while (more > 0 && util_now_ns(CLOCK_MONOTONIC) < end);
	sqlite_measure(k, &u);
	if (got.expired || got.for_size)
		log_debug("sink %s: %" PRIu64 " records past the retention and"
			  " %" PRIu64 " for the size cap deleted in %u steps,"
			  " %.1f ms; %" PRIu64 " bytes in use", k->cfg.name,
			  got.expired, got.for_size, steps,
			  (double)(util_now_ns(CLOCK_MONOTONIC) - now) / 1e6,
			  u.used_bytes);

	pthread_mutex_lock(&ks->lock);
	k->st.expired += got.expired;
	k->st.pruned_size += got.for_size;
	pthread_mutex_unlock(&ks->lock);
	/* a batch left open (-EBUSY) is committed or dropped soon */
	k->prune_at_ns = util_now_ns(CLOCK_MONOTONIC) +
			 (more == 1 || more == -EBUSY ? PRUNE_AGAIN_MS :
							PRUNE_EVERY_MS) *
				 1000000ull;
}

static const struct sink_ops sqlite_ops = {
	sqlite_open, sqlite_add, sqlite_send, sqlite_close, sqlite_check,
	false, sqlite_maintain,
};

/* ---- http (NDJSON) ---------------------------------------------------- */

static int http_open(struct sink *k, char *err, size_t errlen)
{
	return http_client_new(&k->cfg, &k->http, err, errlen);
}

static int http_add(struct sink *k, const char *rec, size_t len)
{
	struct jbuf *body = &k->b[k->cur].body;

	if (jbuf_put(body, rec, len) || jbuf_put(body, "\n", 1))
		return -ENOMEM;
	return 0;
}

static int http_send(struct sink *k, struct batch *b, char *err,
		     size_t errlen)
{
	return http_post(k->http, NULL, "application/x-ndjson", b->body.buf,
			 b->body.len, k->cfg.gzip, NULL, err, errlen);
}

static void http_close(struct sink *k)
{
	http_client_free(k->http);
	k->http = NULL;
}

static const struct sink_ops http_ops = {
	http_open, http_add, http_send, http_close, NULL, true, NULL,
};

/* ---- clickhouse (JSONEachRow per table) ------------------------------- */

static int ch_open(struct sink *k, char *err, size_t errlen)
{
	return http_client_new(&k->cfg, &k->http, err, errlen);
}

static int ch_add(struct sink *k, const char *rec, size_t len)
{
	const char *table = NULL;
	int e;

	jbuf_reset(&k->row);
	e = chschema_row(&k->row, rec, len, &table);
	if (e == -ENOMEM || k->row.oom)
		return -ENOMEM;
	if (e) {
		if (!k->logged_skip)
			log_warn("sink %s: a record that is not a schema v1"
				 " record was skipped: %s (%.60s)", k->cfg.name,
				 chschema_strerror(), rec);
		k->logged_skip = true;
		return SKIP;
	}
	for (size_t i = 0; i < SF_REC__N; i++)
		if (!strcmp(sf_records[i].name, table))
			return jbuf_put(&k->b[k->cur].tbl[i], k->row.buf,
					k->row.len);
	return SKIP;
}

static int ch_send(struct sink *k, struct batch *b, char *err, size_t errlen)
{
	struct jbuf *q = &k->query;
	int e = 0;

	for (size_t i = 0; i < SF_REC__N && !e; i++) {
		char sql[256];

		if (!b->tbl[i].len)
			continue;
		if (past_deadline(k->all)) {
			util_seterr(err, errlen, "stopping");
			return -ETIMEDOUT;
		}
		snprintf(sql, sizeof(sql), "INSERT INTO %s.%s FORMAT"
			 " JSONEachRow", k->cfg.database, sf_records[i].name);
		jbuf_reset(q);
		jbuf_put(q, "?input_format_skip_unknown_fields=1&query=", 42);
		http_urlencode(q, sql);
		if (q->oom)
			return -ENOMEM;
		e = http_post(k->http, q->buf, "application/json",
			      b->tbl[i].buf, b->tbl[i].len, k->cfg.gzip, NULL,
			      err, errlen);
	}
	return e;
}

static const struct sink_ops ch_ops = {
	ch_open, ch_add, ch_send, http_close, NULL, true, NULL,
};

/* ---- the thread ------------------------------------------------------- */

/* spool_read callback: one record into the batch. */
static int take(void *arg, const char *rec, size_t len)
{
	struct sink *k = arg;
	int e = k->ops->add(k, rec, len);

	if (e < 0) {
		k->add_error = e;
		return e;	/* stops the read before this record */
	}
	if (e == SKIP) {
		pthread_mutex_lock(&k->all->lock);
		k->st.skipped++;
		pthread_mutex_unlock(&k->all->lock);
	}
	k->n++;
	k->bytes += len;
	return 0;
}

/* Empty a batch's buffers (their memory stays for the next one). */
static void batch_reset(struct batch *b)
{
	jbuf_reset(&b->body);
	for (size_t t = 0; t < CH_TABLES_MAX; t++)
		jbuf_reset(&b->tbl[t]);
	b->n = 0;
}

/* Forget the batch being built and read it again from the acknowledged
 * position (nothing may be in flight). */
static void drop_batch(struct sink *k)
{
	batch_reset(&k->b[k->cur]);
	k->n = 0;
	k->bytes = 0;
	k->add_error = 0;
	spool_reader_rewind(k->reader);
}

/* Record a failure: stats, log on the first of a streak. */
static void failed(struct sink *k, const char *what, const char *err)
{
	struct sinks *ks = k->all;

	pthread_mutex_lock(&ks->lock);
	k->st.retries++;
	k->st.failing++;
	snprintf(k->st.last_error, sizeof(k->st.last_error), "%s%s", what,
		 err);
	k->st.last_error_ns = util_now_ns(CLOCK_REALTIME);
	pthread_mutex_unlock(&ks->lock);
	if (k->st.failing == 1 || k->st.failing == 100)
		log_error("sink %s: %s%s (retrying with back-off; records"
			  " stay in the spool)", k->cfg.name, what, err);
	else
		log_debug("sink %s: %s%s", k->cfg.name, what, err);
}

/* Back-off before attempt number failing+1: exponential, full jitter. */
static uint64_t backoff_ms(struct sink *k)
{
	uint64_t d = RETRY_BASE_MS;

	for (unsigned i = 1; i < k->st.failing && d < k->cfg.retry_max_ms;
	     i++)
		d *= 2;
	if (d > k->cfg.retry_max_ms)
		d = k->cfg.retry_max_ms;
	return d / 2 + (uint64_t)rand_r(&k->seed) % (d / 2 + 1);
}

/* Wait on the sinks' condition until ns (CLOCK_MONOTONIC) or a wakeup.
 * Lock held. */
static void wait_until(struct sinks *ks, uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000ull),
			       (long)(ns % 1000000000ull) };

	pthread_cond_timedwait(&ks->cond, &ks->lock, &ts);
}

/* True once the agent is stopping and the drain time is over. */
static bool past_deadline(struct sinks *ks)
{
	return ks->deadline_ns && util_now_ns(CLOCK_MONOTONIC) >= ks->deadline_ns;
}

/* Open the sink's target, retrying with back-off until it works. */
static bool open_target(struct sink *k)
{
	struct sinks *ks = k->all;
	char err[512];

	for (;;) {
		uint64_t until;

		err[0] = '\0';
		if (k->ops->open(k, err, sizeof(err)) == 0)
			return true;
		failed(k, "", err);
		pthread_mutex_lock(&ks->lock);
		if (ks->stopping) {
			pthread_mutex_unlock(&ks->lock);
			return false;
		}
		until = util_now_ns(CLOCK_MONOTONIC) + backoff_ms(k) * 1000000;
		k->st.retry_at_ns = until;
		while (!ks->stopping && util_now_ns(CLOCK_MONOTONIC) < until)
			wait_until(ks, until);
		k->st.retry_at_ns = 0;
		pthread_mutex_unlock(&ks->lock);
	}
}

/* A batch was stored: acknowledge it and count it. */
static void stored(struct sink *k, size_t n, uint64_t end_seq)
{
	struct sinks *ks = k->all;

	spool_ack(ks->spool, k->idx, end_seq);
	pthread_mutex_lock(&ks->lock);
	k->st.delivered += n;
	k->st.batches++;
	if (k->st.failing)
		log_info("sink %s: delivering again after %u failed attempts",
			 k->cfg.name, k->st.failing);
	k->st.failing = 0;
	k->st.last_ok_ns = util_now_ns(CLOCK_REALTIME);
	k->st.waiting_since_ns = 0;
	pthread_mutex_unlock(&ks->lock);
}

/* The sender thread of a pipelined sink: sends what it is handed. */
static void *sender_main(void *arg)
{
	struct sink *k = arg;

	pthread_mutex_lock(&k->tx_lock);
	for (;;) {
		struct batch *b;
		int e;

		while (!k->tx && !k->tx_quit)
			pthread_cond_wait(&k->tx_cond, &k->tx_lock);
		if (!k->tx)
			break;
		b = k->tx;
		pthread_mutex_unlock(&k->tx_lock);
		k->tx_errbuf[0] = '\0';
		e = k->ops->send(k, b, k->tx_errbuf, sizeof(k->tx_errbuf));
		pthread_mutex_lock(&k->tx_lock);
		k->tx_err = e;
		k->tx = NULL;
		pthread_cond_broadcast(&k->tx_cond);
	}
	pthread_mutex_unlock(&k->tx_lock);
	return NULL;
}

/*
 * Wait for the batch in flight, if any, and take its result: acknowledge
 * it, or on failure forget the batch being built too and rewind to the
 * acknowledged position (the start of the failed batch).
 */
static int finish_tx(struct sink *k)
{
	struct batch *b = &k->b[k->cur ^ 1];
	int e;

	pthread_mutex_lock(&k->tx_lock);
	if (!k->tx_busy) {
		pthread_mutex_unlock(&k->tx_lock);
		return 0;
	}
	while (k->tx)
		pthread_cond_wait(&k->tx_cond, &k->tx_lock);
	k->tx_busy = false;
	e = k->tx_err;
	pthread_mutex_unlock(&k->tx_lock);
	if (e) {
		failed(k, "", k->tx_errbuf);
		batch_reset(b);
		drop_batch(k);
		return e;
	}
	stored(k, b->n, b->end_seq);
	batch_reset(b);
	return 0;
}

/* Deliver the batch being built: send it (a pipelined sink hands it to
 * its sender and returns once the previous one is stored).  Returns 0 or
 * -errno (the batch is dropped, to be read again). */
static int deliver(struct sink *k)
{
	struct batch *b = &k->b[k->cur];
	char err[512];
	int e;

	if (k->add_error) {
		e = k->add_error;
		failed(k, "encoding a batch: ", strerror(-e));
		drop_batch(k);
		return e;
	}
	b->n = k->n;
	b->end_seq = k->end_seq;
	if (!k->ops->pipelined) {
		err[0] = '\0';
		e = k->ops->send(k, b, err, sizeof(err));
		if (e) {
			failed(k, "", err);
			drop_batch(k);
			return e;
		}
		stored(k, b->n, b->end_seq);
		batch_reset(b);
		k->n = 0;
		k->bytes = 0;
		return 0;
	}
	e = finish_tx(k);
	if (e)
		return e;
	pthread_mutex_lock(&k->tx_lock);
	k->tx = b;
	k->tx_busy = true;
	pthread_cond_broadcast(&k->tx_cond);
	pthread_mutex_unlock(&k->tx_lock);
	k->cur ^= 1;
	k->n = 0;
	k->bytes = 0;
	return 0;
}

/* Sleep the back-off before the next attempt (a stop cuts it short). */
static void back_off(struct sink *k)
{
	struct sinks *ks = k->all;
	uint64_t wake;

	pthread_mutex_lock(&ks->lock);
	wake = util_now_ns(CLOCK_MONOTONIC) + backoff_ms(k) * 1000000;
	k->st.retry_at_ns = wake;
	while (!ks->stopping && util_now_ns(CLOCK_MONOTONIC) < wake)
		wait_until(ks, wake);
	k->st.retry_at_ns = 0;
	pthread_mutex_unlock(&ks->lock);
}

/* The sink thread. */
static void *sink_main(void *arg)
{
	struct sink *k = arg;
	struct sinks *ks = k->all;

	if (!open_target(k))
		return NULL;
	for (;;) {
		uint64_t now, first, wake, wakeups, flush_seq;
		bool stopping, full, old;
		int n;

		pthread_mutex_lock(&ks->lock);
		stopping = ks->stopping;
		wakeups = ks->wakeups;
		flush_seq = ks->flush_seq;
		pthread_mutex_unlock(&ks->lock);
		if (stopping && past_deadline(ks))
			break;
		if (!k->n && !stopping && k->ops->maintain)
			k->ops->maintain(k);

		n = spool_read(k->reader, k->batch_records - k->n,
			       BATCH_MAX_BYTES - k->bytes, take, k, &first);
		if (n < 0 && n != -ENOENT) {
			failed(k, "reading the spool: ", strerror(-n));
			drop_batch(k);
			n = 0;
		}
		if (n > 0) {
			if (k->n == (size_t)n) {
				k->started_ns = util_now_ns(CLOCK_MONOTONIC);
				pthread_mutex_lock(&ks->lock);
				if (!k->st.waiting_since_ns)
					k->st.waiting_since_ns = k->started_ns;
				pthread_mutex_unlock(&ks->lock);
			}
			k->end_seq = first + (uint64_t)n;
		}
		now = util_now_ns(CLOCK_MONOTONIC);
		full = k->n >= k->batch_records ||
		       k->bytes + SPOOL_MAX_RECORD > BATCH_MAX_BYTES;
		old = k->n && now - k->started_ns >=
			      (uint64_t)k->batch_age_ms * 1000000;
		/* a job ended, or a report waits: its records go now */
		old |= k->n && flush_seq > k->end_seq - k->n;
		if (k->n && (full || old || stopping || k->add_error)) {
			if (deliver(k) == 0)
				continue;
			if (stopping)
				break;	/* one attempt while stopping */
			back_off(k);
			continue;
		}
		if (n > 0 && k->n < k->batch_records)
			continue;	/* more may be there already */
		/* nothing new: take the result of the batch in flight */
		if (k->tx_busy && finish_tx(k)) {
			if (stopping)
				break;
			back_off(k);
			continue;
		}
		if (stopping && !k->n)
			break;		/* drained */
		if (!k->n && k->ops->check) {
			char err[512];

			if (k->ops->check(k, err, sizeof(err))) {
				failed(k, "", err);
				drop_batch(k);
				continue;	/* read again what it lost */
			}
		}

		/* wait for records, or for the batch to come of age */
		pthread_mutex_lock(&ks->lock);
		wake = now + (uint64_t)k->batch_age_ms * 1000000;
		if (k->n)
			wake = k->started_ns +
			       (uint64_t)k->batch_age_ms * 1000000;
		/* a notify since the read means records to read now */
		if (!ks->stopping && ks->wakeups == wakeups)
			wait_until(ks, wake);
		pthread_mutex_unlock(&ks->lock);
	}
	finish_tx(k);
	return NULL;
}

/* ---- setup and status ------------------------------------------------- */

/* The store's limits in configuration c. */
static struct store_limits store_limits_of(const struct jt_config *c)
{
	struct store_limits l = {
		.retention_s = c->store_retention_days * 86400.0,
		.max_bytes = (uint64_t)c->store_max_mib << 20,
	};

	return l;
}

/* The spool's sink names for this configuration. */
size_t sinks_names(const struct jt_config *c, const char **names, size_t max)
{
	size_t n = 0;

	if (c->store_enabled && n < max)
		names[n++] = "sqlite";
	for (size_t i = 0; i < c->n_sinks && n < max; i++)
		names[n++] = c->sinks[i].name;
	return n;
}

/* Start one thread per sink reading from sp. */
int sinks_start(const struct jt_config *c, struct spool *sp,
		struct sinks **out, char *err, size_t errlen)
{
	const char *names[MAX_SINKS];
	pthread_condattr_t ca;
	struct sinks *ks;
	size_t n = sinks_names(c, names, MAX_SINKS);
	int e = 0;

	*out = NULL;
	if (c->n_sinks + 1 > MAX_SINKS) {
		util_seterr(err, errlen, "at most %d sinks", MAX_SINKS - 1);
		return -EINVAL;
	}
	if (c->n_sinks && http_global_init()) {
		util_seterr(err, errlen, "libcurl initialisation failed");
		return -EIO;
	}
	ks = calloc(1, sizeof(*ks));
	if (!ks)
		return -ENOMEM;
	ks->spool = sp;
	pthread_mutex_init(&ks->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&ks->cond, &ca);
	pthread_condattr_destroy(&ca);

	for (size_t i = 0; i < n; i++) {
		struct sink *k = &ks->k[i];

		k->all = ks;
		k->idx = (unsigned)i;
		k->seed = (unsigned)(util_now_ns(CLOCK_REALTIME) ^ (i << 16));
		jbuf_init(&k->row);
		jbuf_init(&k->query);
		for (int j = 0; j < 2; j++) {
			jbuf_init(&k->b[j].body);
			for (size_t t = 0; t < CH_TABLES_MAX; t++)
				jbuf_init(&k->b[j].tbl[t]);
		}
		pthread_mutex_init(&k->tx_lock, NULL);
		pthread_cond_init(&k->tx_cond, NULL);
		if (c->store_enabled && i == 0) {
			k->type = JT_SINK_SQLITE;
			k->cfg.name = (char *)"sqlite";
			k->cfg.retry_max_ms = 30000;
			k->sqlite_path = c->sqlite_path;
			k->batch_records = c->flush_records;
			k->batch_age_ms = c->flush_interval_ms;
			k->limits = store_limits_of(c);
			k->ops = &sqlite_ops;
		} else {
			k->cfg = c->sinks[i - (c->store_enabled ? 1 : 0)];
			k->type = k->cfg.type;
			k->batch_records = k->cfg.batch_records;
			k->batch_age_ms = k->cfg.batch_age_ms;
			k->ops = k->type == JT_SINK_CLICKHOUSE ? &ch_ops :
								 &http_ops;
		}
		ks->n++;
		e = spool_reader_open(sp, k->idx, &k->reader);
		if (e)
			break;
	}
	for (size_t i = 0; !e && i < ks->n; i++) {
		struct sink *k = &ks->k[i];

		if (k->ops->pipelined) {
			e = util_thread_start(&k->tx_thread, sender_main, k);
			if (e)
				break;
			k->tx_started = true;
		}
		e = util_thread_start(&k->thread, sink_main, k);
		if (!e)
			k->started = true;
	}
	if (e) {
		util_seterr(err, errlen, "starting the sinks: %s", strerror(-e));
		sinks_stop(ks, 0);
		return e;
	}
	*out = ks;
	return 0;
}

/* New records were synced: wake the sinks. */
void sinks_notify(struct sinks *ks)
{
	if (!ks)
		return;
	pthread_mutex_lock(&ks->lock);
	ks->wakeups++;
	pthread_cond_broadcast(&ks->cond);
	pthread_mutex_unlock(&ks->lock);
}

/* Deliver the records below seq now (sink.h). */
void sinks_flush(struct sinks *ks, uint64_t seq)
{
	if (!ks)
		return;
	pthread_mutex_lock(&ks->lock);
	if (seq > ks->flush_seq)
		ks->flush_seq = seq;
	ks->wakeups++;
	pthread_cond_broadcast(&ks->cond);
	pthread_mutex_unlock(&ks->lock);
}

/* Where the SQLite store is in the spool (sink.h). */
bool sinks_store_position(struct sinks *ks, uint64_t *ack, bool *failing)
{
	for (size_t i = 0; ks && i < ks->n; i++) {
		struct sink *k = &ks->k[i];
		struct spool_sink_stats ps;

		if (k->type != JT_SINK_SQLITE)
			continue;
		spool_get_sink_stats(ks->spool, k->idx, &ps);
		*ack = ps.ack_seq;
		pthread_mutex_lock(&ks->lock);
		*failing = k->st.failing != 0;
		pthread_mutex_unlock(&ks->lock);
		return true;
	}
	return false;
}

/* What is wrong with the sinks now (sink.h). */
unsigned sinks_problems(struct sinks *ks, char *out, size_t len)
{
	uint64_t now = util_now_ns(CLOCK_MONOTONIC);
	unsigned n = 0;
	size_t o = 0;

	out[0] = '\0';
	for (size_t i = 0; ks && i < ks->n && o < len; i++) {
		struct sink *k = &ks->k[i];
		struct spool_sink_stats ps;
		struct sink_stats st;
		uint64_t lost;

		spool_get_sink_stats(ks->spool, k->idx, &ps);
		pthread_mutex_lock(&ks->lock);
		st = k->st;
		pthread_mutex_unlock(&ks->lock);
		if (st.failing) {
			o += snprintf(out + o, len - o, "%ssink %s retrying: %s",
				      n++ ? "; " : "", k->cfg.name,
				      st.last_error);
		} else if (st.waiting_since_ns &&
			   now - st.waiting_since_ns > SINK_STUCK_NS) {
			/* an insert that waits (a store locked by another
			 * writer, a collector that does not answer) */
			o += snprintf(out + o, len - o, "%ssink %s has not stored"
				      " what it read %.0f s ago",
				      n++ ? "; " : "", k->cfg.name,
				      (now - st.waiting_since_ns) / 1e9);
		}
		lost = ps.dropped + ps.corrupt + st.skipped + st.recreate_lost;
		if (lost && o < len)
			o += snprintf(out + o, len - o, "%ssink %s lost %" PRIu64
				      " records", n++ ? "; " : "", k->cfg.name,
				      lost);
	}
	return n;
}

/* Stop: drain within drain_ms, join, release. */
void sinks_stop(struct sinks *ks, unsigned drain_ms)
{
	if (!ks)
		return;
	pthread_mutex_lock(&ks->lock);
	ks->stopping = true;
	ks->deadline_ns = util_now_ns(CLOCK_MONOTONIC) +
			  (uint64_t)drain_ms * 1000000 + 1;
	pthread_cond_broadcast(&ks->cond);
	pthread_mutex_unlock(&ks->lock);
	for (size_t i = 0; i < ks->n; i++) {
		struct sink *k = &ks->k[i];

		if (k->started)
			pthread_join(k->thread, NULL);
		if (k->tx_started) {
			pthread_mutex_lock(&k->tx_lock);
			k->tx_quit = true;
			pthread_cond_broadcast(&k->tx_cond);
			pthread_mutex_unlock(&k->tx_lock);
			pthread_join(k->tx_thread, NULL);
		}
		if (k->ops)
			k->ops->close(k);
		spool_reader_close(k->reader);
		jbuf_free(&k->row);
		jbuf_free(&k->query);
		for (int j = 0; j < 2; j++) {
			jbuf_free(&k->b[j].body);
			for (size_t t = 0; t < CH_TABLES_MAX; t++)
				jbuf_free(&k->b[j].tbl[t]);
		}
		pthread_cond_destroy(&k->tx_cond);
		pthread_mutex_destroy(&k->tx_lock);
	}
	pthread_cond_destroy(&ks->cond);
	pthread_mutex_destroy(&ks->lock);
	free(ks);
}

/* Apply store.retention and store.max_size_mib of c from the next pass. */
void sinks_store_limits(struct sinks *ks, const struct jt_config *c)
{
	if (!ks)
		return;
	pthread_mutex_lock(&ks->lock);
	for (size_t i = 0; i < ks->n; i++)
		if (ks->k[i].type == JT_SINK_SQLITE)
			ks->k[i].limits = store_limits_of(c);
	pthread_mutex_unlock(&ks->lock);
}

/* Records the store deleted for its size cap since the start. */
uint64_t sinks_store_size_cap(struct sinks *ks)
{
	uint64_t n = 0;

	if (!ks)
		return 0;
	pthread_mutex_lock(&ks->lock);
	for (size_t i = 0; i < ks->n; i++)
		n += ks->k[i].st.pruned_size;
	pthread_mutex_unlock(&ks->lock);
	return n;
}

/* Seconds since a CLOCK_REALTIME ns stamp, as text ("never" for 0). */
static void ago(uint64_t ns, char *out, size_t len)
{
	uint64_t now = util_now_ns(CLOCK_REALTIME);

	if (!ns)
		snprintf(out, len, "never");
	else
		snprintf(out, len, "%.1f s ago",
			 now > ns ? (double)(now - ns) / 1e9 : 0.0);
}

/* The store's status lines: its size, age and what pruning deleted. */
static void store_status(const char *name, const struct sink_stats *st,
			 const struct store_limits *lim, FILE *out)
{
	const struct store_usage *u = &st->usage;
	double now = (double)util_now_ns(CLOCK_REALTIME) / 1e9;
	char when[64] = "none", day[32];
	time_t t = (time_t)u->oldest;
	struct tm tm;

	if (!st->measured) {
		fprintf(out, "sink.%s.store_bytes: unknown (not measured yet)\n",
			name);
	} else {
		fprintf(out, "sink.%s.store_bytes: %" PRIu64, name, u->used_bytes);
		if (lim->max_bytes)
			fprintf(out, " of %" PRIu64 " MiB\n", lim->max_bytes >> 20);
		else
			fprintf(out, " (no cap)\n");
		fprintf(out, "sink.%s.store_file_bytes: %" PRIu64 "\n", name,
			u->file_bytes);
		if (u->oldest > 0 && gmtime_r(&t, &tm) &&
		    strftime(day, sizeof(day), "%Y-%m-%dT%H:%M:%SZ", &tm))
			snprintf(when, sizeof(when), "%s (%.1f days ago)", day,
				 (now - u->oldest) / 86400);
		fprintf(out, "sink.%s.store_oldest_record: %s\n", name, when);
	}
	if (lim->retention_s > 0)
		fprintf(out, "sink.%s.store_retention_days: %g\n", name,
			lim->retention_s / 86400);
	else
		fprintf(out, "sink.%s.store_retention_days: 0 (for ever)\n",
			name);
	fprintf(out, "sink.%s.store_records_expired: %" PRIu64 "\n", name,
		st->expired);
	fprintf(out, "sink.%s.store_records_pruned_for_size: %" PRIu64 "\n",
		name, st->pruned_size);
}

/* CPU time of a running thread of ours, in ns (0 once it has ended). */
static uint64_t thread_cpu_ns(pthread_t t)
{
	clockid_t cid;
	struct timespec ts;

	if (pthread_getcpuclockid(t, &cid) || clock_gettime(cid, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* "key: value" status lines for every sink. */
void sinks_status(struct sinks *ks, FILE *out)
{
	struct spool_stats ss;

	if (!ks)
		return;
	spool_get_stats(ks->spool, &ss);
	fprintf(out, "sinks: %zu\n", ks->n);
	for (size_t i = 0; i < ks->n; i++) {
		struct sink *k = &ks->k[i];
		struct spool_sink_stats ps;
		struct store_limits lim;
		struct sink_stats st;
		char t1[64], t2[64];
		const char *state;
		uint64_t now = util_now_ns(CLOCK_MONOTONIC);

		spool_get_sink_stats(ks->spool, k->idx, &ps);
		pthread_mutex_lock(&ks->lock);
		st = k->st;
		lim = k->limits;
		pthread_mutex_unlock(&ks->lock);
		state = st.failing ? "retrying" : "ok";
		ago(st.last_ok_ns, t1, sizeof(t1));
		ago(st.last_error_ns, t2, sizeof(t2));
		fprintf(out, "sink.%s.type: %s\n", k->cfg.name,
			type_names[k->type]);
		/* any user may ask for the status: no userinfo, no query */
		if (k->cfg.url)
			fprintf(out, "sink.%s.url: %s\n", k->cfg.name,
				util_url_public(k->cfg.url, t1, sizeof(t1)));
		fprintf(out, "sink.%s.state: %s\n", k->cfg.name, state);
		fprintf(out, "sink.%s.lag_records: %" PRIu64 "\n", k->cfg.name,
			ss.next_seq > ps.ack_seq ? ss.next_seq - ps.ack_seq : 0);
		fprintf(out, "sink.%s.delivered: %" PRIu64 "\n", k->cfg.name,
			st.delivered);
		fprintf(out, "sink.%s.batches: %" PRIu64 "\n", k->cfg.name,
			st.batches);
		/* its threads' work: spool reads, encoding, storing, sending */
		fprintf(out, "sink.%s.cpu_ns: %" PRIu64 "\n", k->cfg.name,
			(k->started ? thread_cpu_ns(k->thread) : 0) +
			(k->tx_started ? thread_cpu_ns(k->tx_thread) : 0));
		fprintf(out, "sink.%s.retries: %" PRIu64 "\n", k->cfg.name,
			st.retries);
		fprintf(out, "sink.%s.dropped: %" PRIu64 "\n", k->cfg.name,
			ps.dropped);
		fprintf(out, "sink.%s.corrupt_skipped: %" PRIu64 "\n",
			k->cfg.name, ps.corrupt);
		fprintf(out, "sink.%s.unencodable_skipped: %" PRIu64 "\n",
			k->cfg.name, st.skipped);
		if (k->type == JT_SINK_SQLITE) {
			fprintf(out, "sink.%s.store_recreated: %" PRIu64 "\n",
				k->cfg.name, st.recreated);
			fprintf(out, "sink.%s.store_records_lost: %" PRIu64
				"\n", k->cfg.name, st.recreate_lost);
			store_status(k->cfg.name, &st, &lim, out);
		}
		fprintf(out, "sink.%s.last_success: %s\n", k->cfg.name, t1);
		fprintf(out, "sink.%s.last_error: %s%s%s%s\n", k->cfg.name,
			st.last_error[0] ? st.last_error : "none",
			st.last_error[0] ? " (" : "",
			st.last_error[0] ? t2 : "",
			st.last_error[0] ? ")" : "");
		if (st.retry_at_ns > now)
			fprintf(out, "sink.%s.next_retry_in: %.1f s\n",
				k->cfg.name,
				(double)(st.retry_at_ns - now) / 1e9);
	}
}

/* The "spool" member of a host record's drops. */
unsigned sinks_drop_counts(struct sinks *ks, struct sv_count *out,
			   unsigned max)
{
	unsigned n = 0;

	for (size_t i = 0; ks && i < ks->n && n < max; i++) {
		struct spool_sink_stats ps;

		spool_get_sink_stats(ks->spool, ks->k[i].idx, &ps);
		out[n].name = ks->k[i].cfg.name;
		out[n++].n = ps.dropped + ps.corrupt;
	}
	return n;
}

/* Records dropped or skipped as corrupt over all sinks. */
uint64_t sinks_lost_total(struct sinks *ks)
{
	uint64_t t = 0;

	for (size_t i = 0; ks && i < ks->n; i++) {
		struct spool_sink_stats ps;

		spool_get_sink_stats(ks->spool, ks->k[i].idx, &ps);
		t += ps.dropped + ps.corrupt;
	}
	return t;
}
