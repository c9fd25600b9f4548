// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sink.c - the sink engine: one thread per sink reads a batch from the
 * spool, has its backend (sink_backend.h) store it and acknowledges it;
 * on failure it rewinds to the acknowledged position and retries after an
 * exponential back-off with jitter.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "http.h"
#include "log.h"
#include "schema.h"
#include "sink.h"
#include "sink_backend.h"
#include "util.h"

#define MAX_SINKS SINKS_MAX
#define BATCH_MAX_BYTES (32u << 20)
#define RETRY_BASE_MS 500

struct sink_stats {
	uint64_t delivered;	/* records stored */
	uint64_t batches;
	uint64_t retries;	/* failed attempts */
	uint64_t skipped;	/* records the sink could not encode */
	unsigned failing;	/* consecutive failures */
	char last_error[256];
	uint64_t last_error_ns;	/* CLOCK_REALTIME */
	uint64_t last_ok_ns;
	uint64_t retry_at_ns;	/* CLOCK_MONOTONIC, while backing off */
	uint64_t waiting_since_ns;	/* CLOCK_MONOTONIC: records read and
					 * not yet stored since; 0: none */
};

struct sink {
	struct sinks *all;
	unsigned idx;		/* spool sink number */
	const char *name;
	const char *url;	/* or NULL */
	unsigned retry_max_ms;
	const struct sink_backend *ops;
	void *ctx;		/* the backend's */
	struct spool_reader *reader;
	pthread_t thread;
	bool started;

	/* batch being built */
	struct sink_batch b[2];	/* cur is built, the other may be in flight */
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
	struct sink_batch *tx;	/* handed over, not yet sent */
	bool tx_busy;		/* handed over, result not yet taken */
	bool tx_quit;
	int tx_err;
	char tx_errbuf[512];

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

/* ---- services to the backends (sink_backend.h) ------------------------ */

/* The backend's state. */
void *sink_ctx(struct sink *k)
{
	return k->ctx;
}

/* The sink's name. */
const char *sink_name(const struct sink *k)
{
	return k->name;
}

/* True once the agent is stopping and the drain time is over. */
static bool past_deadline(struct sinks *ks)
{
	return ks->deadline_ns && util_now_ns(CLOCK_MONOTONIC) >= ks->deadline_ns;
}

/* True once the agent is stopping and the drain time is over. */
bool sink_past_deadline(const struct sink *k)
{
	return past_deadline(k->all);
}

/* The target lost what it stored: read again from the spool's oldest. */
uint64_t sink_reread(struct sink *k)
{
	return spool_reread(k->all->spool, k->idx);
}

/* ---- the thread ------------------------------------------------------- */

/* spool_read callback: one record into the batch. */
static int take(void *arg, const char *rec, size_t len)
{
	struct sink *k = arg;
	int e = k->ops->add(k, &k->b[k->cur], rec, len);

	if (e < 0) {
		k->add_error = e;
		return e;	/* stops the read before this record */
	}
	if (e == SINK_SKIP) {
		pthread_mutex_lock(&k->all->lock);
		k->st.skipped++;
		pthread_mutex_unlock(&k->all->lock);
	}
	k->n++;
	k->bytes += len;
	return 0;
}

/* Empty a batch's buffers (their memory stays for the next one). */
static void batch_reset(struct sink_batch *b)
{
	for (size_t t = 0; t < SINK_PARTS; t++)
		jbuf_reset(&b->part[t]);
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
			  " stay in the spool)", k->name, what, err);
	else
		log_debug("sink %s: %s%s", k->name, what, err);
}

/* Back-off before attempt number failing+1: exponential, full jitter. */
static uint64_t backoff_ms(struct sink *k)
{
	uint64_t d = RETRY_BASE_MS;

	for (unsigned i = 1; i < k->st.failing && d < k->retry_max_ms;
	     i++)
		d *= 2;
	if (d > k->retry_max_ms)
		d = k->retry_max_ms;
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
			 k->name, k->st.failing);
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
		struct sink_batch *b;
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
	struct sink_batch *b = &k->b[k->cur ^ 1];
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
	struct sink_batch *b = &k->b[k->cur];
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

/* Close the backends' states of d (n of them) that no sink took. */
static void close_defs(const struct sink_def *d, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct sink k = { .name = d[i].name, .ctx = d[i].ctx };

		d[i].ops->close(&k);
	}
}

/* Set up sink i of ks from d (no reader, no thread yet). */
static void sink_init(struct sinks *ks, unsigned i, const struct sink_def *d)
{
	struct sink *k = &ks->k[i];

	k->all = ks;
	k->idx = i;
	k->name = d->name;
	k->url = d->url;
	k->retry_max_ms = d->retry_max_ms;
	k->batch_records = d->batch_records;
	k->batch_age_ms = d->batch_age_ms;
	k->ops = d->ops;
	k->ctx = d->ctx;
	k->seed = (unsigned)(util_now_ns(CLOCK_REALTIME) ^ ((uint64_t)i << 16));
	for (int j = 0; j < 2; j++)
		for (size_t t = 0; t < SINK_PARTS; t++)
			jbuf_init(&k->b[j].part[t]);
	pthread_mutex_init(&k->tx_lock, NULL);
	pthread_cond_init(&k->tx_cond, NULL);
	ks->n++;
}

/* Start each sink's threads. */
static int sinks_run(struct sinks *ks)
{
	int e = 0;

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
	return e;
}

/* Start one thread per sink of d reading from sp (sink_backend.h). */
int sinks_start_defs(struct spool *sp, const struct sink_def *d, size_t n,
		     struct sinks **out, char *err, size_t errlen)
{
	pthread_condattr_t ca;
	struct sinks *ks;
	int e = 0;

	*out = NULL;
	if (n > MAX_SINKS) {
		close_defs(d, n);
		util_seterr(err, errlen, "at most %d sinks", MAX_SINKS - 1);
		return -EINVAL;
	}
	ks = calloc(1, sizeof(*ks));
	if (!ks) {
		close_defs(d, n);
		return -ENOMEM;
	}
	ks->spool = sp;
	pthread_mutex_init(&ks->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&ks->cond, &ca);
	pthread_condattr_destroy(&ca);
	for (size_t i = 0; i < n; i++)
		sink_init(ks, (unsigned)i, &d[i]);
	for (size_t i = 0; !e && i < n; i++)
		e = spool_reader_open(sp, (unsigned)i, &ks->k[i].reader);
	if (!e)
		e = sinks_run(ks);
	if (e) {
		util_seterr(err, errlen, "starting the sinks: %s", strerror(-e));
		sinks_stop(ks, 0);
		return e;
	}
	*out = ks;
	return 0;
}

/* The SQLite store's and each configured sink's definition in c; n of
 * them.  Returns 0 or -ENOMEM (the states made are closed). */
static int config_defs(const struct jt_config *c, struct sink_def *d,
		       size_t n)
{
	size_t i = 0;

	if (c->store_enabled) {
		d[0] = (struct sink_def){
			.name = "sqlite", .batch_records = c->flush_records,
			.batch_age_ms = c->flush_interval_ms,
			.retry_max_ms = 30000, .ops = &sink_sqlite_backend,
			.ctx = sink_sqlite_new(c),
		};
		i = 1;
	}
	for (const struct jt_sink_config *s = c->sinks; i < n; i++, s++) {
		bool ch = s->type == JT_SINK_CLICKHOUSE;

		d[i] = (struct sink_def){
			.name = s->name, .url = s->url,
			.batch_records = s->batch_records,
			.batch_age_ms = s->batch_age_ms,
			.retry_max_ms = s->retry_max_ms,
			.ops = ch ? &sink_clickhouse_backend : &sink_http_backend,
			.ctx = ch ? sink_clickhouse_new(s) : sink_http_new(s),
		};
	}
	for (i = 0; i < n; i++)
		if (!d[i].ctx) {
			close_defs(d, n);
			return -ENOMEM;
		}
	return 0;
}

/* Start one thread per sink reading from sp. */
int sinks_start(const struct jt_config *c, struct spool *sp,
		struct sinks **out, char *err, size_t errlen)
{
	struct sink_def d[MAX_SINKS];
	size_t n;
	int e;

	*out = NULL;
	if (c->n_sinks + 1 > MAX_SINKS) {
		util_seterr(err, errlen, "at most %d sinks", MAX_SINKS - 1);
		return -EINVAL;
	}
	if (c->n_sinks && http_global_init()) {
		util_seterr(err, errlen, "libcurl initialisation failed");
		return -EIO;
	}
	n = (c->store_enabled ? 1 : 0) + c->n_sinks;
	e = config_defs(c, d, n);
	if (e) {
		util_seterr(err, errlen, "starting the sinks: %s", strerror(-e));
		return e;
	}
	return sinks_start_defs(sp, d, n, out, err, errlen);
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

		if (k->ops != &sink_sqlite_backend)
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
				      n++ ? "; " : "", k->name,
				      st.last_error);
		} else if (st.waiting_since_ns &&
			   now - st.waiting_since_ns > SINK_STUCK_NS) {
			/* an insert that waits (a store locked by another
			 * writer, a collector that does not answer) */
			o += snprintf(out + o, len - o, "%ssink %s has not stored"
				      " what it read %.0f s ago",
				      n++ ? "; " : "", k->name,
				      (now - st.waiting_since_ns) / 1e9);
		}
		lost = ps.dropped + ps.corrupt + st.skipped +
		       (k->ops->lost ? k->ops->lost(k) : 0);
		if (lost && o < len)
			o += snprintf(out + o, len - o, "%ssink %s lost %" PRIu64
				      " records", n++ ? "; " : "", k->name,
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
		k->ops->close(k);
		spool_reader_close(k->reader);
		for (int j = 0; j < 2; j++)
			for (size_t t = 0; t < SINK_PARTS; t++)
				jbuf_free(&k->b[j].part[t]);
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
	for (size_t i = 0; i < ks->n; i++)
		if (ks->k[i].ops == &sink_sqlite_backend)
			sink_sqlite_limits(ks->k[i].ctx, c);
}

/* Records the store deleted for its size cap since the start. */
uint64_t sinks_store_size_cap(struct sinks *ks)
{
	uint64_t n = 0;

	if (!ks)
		return 0;
	for (size_t i = 0; i < ks->n; i++)
		if (ks->k[i].ops == &sink_sqlite_backend)
			n += sink_sqlite_pruned(ks->k[i].ctx);
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
		struct sink_stats st;
		char t1[64], t2[64], url[1024];
		const char *state;
		uint64_t now = util_now_ns(CLOCK_MONOTONIC);

		spool_get_sink_stats(ks->spool, k->idx, &ps);
		pthread_mutex_lock(&ks->lock);
		st = k->st;
		pthread_mutex_unlock(&ks->lock);
		state = st.failing ? "retrying" : "ok";
		ago(st.last_ok_ns, t1, sizeof(t1));
		ago(st.last_error_ns, t2, sizeof(t2));
		fprintf(out, "sink.%s.type: %s\n", k->name,
			k->ops->type);
		/* any user may ask for the status: no userinfo, no query */
		if (k->url)
			fprintf(out, "sink.%s.url: %s\n", k->name,
				util_url_public(k->url, url, sizeof(url)));
		fprintf(out, "sink.%s.state: %s\n", k->name, state);
		fprintf(out, "sink.%s.lag_records: %" PRIu64 "\n", k->name,
			ss.next_seq > ps.ack_seq ? ss.next_seq - ps.ack_seq : 0);
		fprintf(out, "sink.%s.delivered: %" PRIu64 "\n", k->name,
			st.delivered);
		fprintf(out, "sink.%s.batches: %" PRIu64 "\n", k->name,
			st.batches);
		/* its threads' work: spool reads, encoding, storing, sending */
		fprintf(out, "sink.%s.cpu_ns: %" PRIu64 "\n", k->name,
			(k->started ? thread_cpu_ns(k->thread) : 0) +
			(k->tx_started ? thread_cpu_ns(k->tx_thread) : 0));
		fprintf(out, "sink.%s.retries: %" PRIu64 "\n", k->name,
			st.retries);
		fprintf(out, "sink.%s.dropped: %" PRIu64 "\n", k->name,
			ps.dropped);
		fprintf(out, "sink.%s.corrupt_skipped: %" PRIu64 "\n",
			k->name, ps.corrupt);
		fprintf(out, "sink.%s.unencodable_skipped: %" PRIu64 "\n",
			k->name, st.skipped);
		if (k->ops->describe)
			k->ops->describe(k, out);
		fprintf(out, "sink.%s.last_success: %s\n", k->name, t1);
		fprintf(out, "sink.%s.last_error: %s%s%s%s\n", k->name,
			st.last_error[0] ? st.last_error : "none",
			st.last_error[0] ? " (" : "",
			st.last_error[0] ? t2 : "",
			st.last_error[0] ? ")" : "");
		if (st.retry_at_ns > now)
			fprintf(out, "sink.%s.next_retry_in: %.1f s\n",
				k->name,
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
		out[n].name = ks->k[i].name;
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
