// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sink_sqlite.c - the sink backend of the embedded SQLite store: a thin
 * adapter over store.h (a batch is one transaction), which also keeps the
 * store within store.retention and store.max_size_mib between batches and
 * makes the store again when its file is deleted under the agent.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "log.h"
#include "sink_backend.h"
#include "store.h"
#include "util.h"

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

/* What status shows of the store, under lock. */
struct sq_stats {
	uint64_t recreated;	/* store file deleted under us, made anew */
	uint64_t recreate_lost;	/* records it held that the spool lacks */
	uint64_t expired;	/* records past the retention deleted */
	uint64_t pruned_size;	/* the oldest deleted for the size cap */
	struct store_usage usage;	/* at the last measure */
	bool measured;		/* usage is known */
};

/* The backend's state. */
struct sq {
	const char *path;		/* borrowed from the config */
	struct store *store;
	uint64_t prune_at_ns;		/* CLOCK_MONOTONIC of the next pass */
	bool grew;			/* a batch was committed since */
	pthread_mutex_t lock;		/* limits and st: status, reload */
	struct store_limits limits;
	struct sq_stats st;
};

/* The store's limits in configuration c. */
static struct store_limits limits_of(const struct jt_config *c)
{
	struct store_limits l = {
		.retention_s = c->store_retention_days * 86400.0,
		.max_bytes = (uint64_t)c->store_max_mib << 20,
	};

	return l;
}

/* The SQLite store's state for configuration c. */
void *sink_sqlite_new(const struct jt_config *c)
{
	struct sq *q = calloc(1, sizeof(*q));

	if (!q)
		return NULL;
	q->path = c->sqlite_path;
	q->limits = limits_of(c);
	pthread_mutex_init(&q->lock, NULL);
	return q;
}

/* Apply c's store.retention and store.max_size_mib from the next pass. */
void sink_sqlite_limits(void *ctx, const struct jt_config *c)
{
	struct sq *q = ctx;

	pthread_mutex_lock(&q->lock);
	q->limits = limits_of(c);
	pthread_mutex_unlock(&q->lock);
}

/* Records the store deleted for its size cap since the start. */
uint64_t sink_sqlite_pruned(void *ctx)
{
	struct sq *q = ctx;
	uint64_t n;

	pthread_mutex_lock(&q->lock);
	n = q->st.pruned_size;
	pthread_mutex_unlock(&q->lock);
	return n;
}

/* Open (creating) the store's file. */
static int sq_open(struct sink *k, char *err, size_t errlen)
{
	struct sq *q = sink_ctx(k);
	int e = store_open(q->path, false, &q->store);

	if (e)
		util_seterr(err, errlen, "%s: %s", q->path, log_last_error());
	return e;
}

/*
 * The store's file was deleted or replaced under the agent: what it
 * committed since went where nobody reads it.  Close it, open a new one
 * at the path, and move the sink back to the oldest record the spool
 * still has; what the old file held beyond those is counted as lost.
 * Returns 0 while the file is the one open, else -ESTALE (err says it).
 */
static int sq_check(struct sink *k, char *err, size_t errlen)
{
	struct sq *q = sink_ctx(k);
	uint64_t held, again, lost;
	int64_t n;

	if (!q->store || !store_replaced(q->store))
		return 0;
	store_discard(q->store);	/* this batch is read again */
	n = store_records(q->store);
	held = n > 0 ? (uint64_t)n : 0;
	store_close(q->store);
	q->store = NULL;
	again = sink_reread(k);
	lost = held > again ? held - again : 0;
	pthread_mutex_lock(&q->lock);
	q->st.recreated++;
	q->st.recreate_lost += lost;
	pthread_mutex_unlock(&q->lock);
	util_seterr(err, errlen, "%s was deleted or replaced under the agent:"
		    " it held %" PRIu64 " records; a new store is made and the"
		    " %" PRIu64 " the spool still has are stored again, %" PRIu64
		    " are lost", q->path, held, again, lost);
	if (sq_open(k, NULL, 0))
		log_error("sink %s: %s: %s (retried with the next batch)",
			  sink_name(k), q->path, log_last_error());
	return -ESTALE;
}

/* Put one record into the open transaction. */
static int sq_add(struct sink *k, struct sink_batch *b, const char *rec,
		  size_t len)
{
	struct sq *q = sink_ctx(k);
	int e;

	(void)b;
	/* a store that could not be made again is retried per batch */
	if (!q->store && (e = sq_open(k, NULL, 0)))
		return e;
	e = store_put_json(q->store, rec, len);

	/* a record that can never be stored is skipped (and logged by the
	 * store); any other failure fails the batch */
	return e == -EINVAL ? SINK_SKIP : e;
}

/* Commit the batch's transaction, unless the file went away meanwhile. */
static int sq_send(struct sink *k, struct sink_batch *b, char *err,
		   size_t errlen)
{
	struct sq *q = sink_ctx(k);
	int n;

	(void)b;
	n = sq_check(k, err, errlen);
	if (n)
		return n;
	n = store_flush(q->store);

	if (n < 0) {
		util_seterr(err, errlen, "%s: %s", q->path, log_last_error());
		return n;
	}
	q->grew = true;
	return 0;
}

/* Close the store and free the state. */
static void sq_close(struct sink *k)
{
	struct sq *q = sink_ctx(k);

	if (!q)
		return;
	store_close(q->store);
	pthread_mutex_destroy(&q->lock);
	free(q);
}

/* Measure the store for status; false when that could not be done (status
 * keeps the last measure). */
static bool measure(struct sq *q, struct store_usage *u)
{
	if (store_usage(q->store, u))
		return false;
	pthread_mutex_lock(&q->lock);
	q->st.usage = *u;
	q->st.measured = true;
	pthread_mutex_unlock(&q->lock);
	return true;
}

/*
 * Between batches: keep the store within store.retention and
 * store.max_size_mib.  A pass runs when due, or as soon as a committed
 * batch took the store over its cap (measuring is a page count).
 */
static void sq_maintain(struct sink *k)
{
	struct sq *q = sink_ctx(k);
	struct store_pruned got = { 0, 0 };
	struct store_limits lim;
	struct store_usage u;
	uint64_t now = util_now_ns(CLOCK_MONOTONIC);
	uint64_t end = now + PRUNE_BUDGET_MS * 1000000ull;
	unsigned steps = 0;
	int more;

	if (!q->store)
		return;
	pthread_mutex_lock(&q->lock);
	lim = q->limits;
	pthread_mutex_unlock(&q->lock);
	if (now < q->prune_at_ns) {
		if (!q->grew || !lim.max_bytes)
			return;
		q->grew = false;
		if (!measure(q, &u) || u.used_bytes <= lim.max_bytes)
			return;
	}
	q->grew = false;
	do {
		more = store_prune(q->store, &lim,
				   (double)util_now_ns(CLOCK_REALTIME) / 1e9,
				   PRUNE_ROWS, &got);
		steps++;
	} while (more > 0 && util_now_ns(CLOCK_MONOTONIC) < end);
	measure(q, &u);
	if (got.expired || got.for_size)
		log_debug("sink %s: %" PRIu64 " records past the retention and"
			  " %" PRIu64 " for the size cap deleted in %u steps,"
			  " %.1f ms; %" PRIu64 " bytes in use", sink_name(k),
			  got.expired, got.for_size, steps,
			  (double)(util_now_ns(CLOCK_MONOTONIC) - now) / 1e6,
			  u.used_bytes);

	pthread_mutex_lock(&q->lock);
	q->st.expired += got.expired;
	q->st.pruned_size += got.for_size;
	pthread_mutex_unlock(&q->lock);
	/* a batch left open (-EBUSY) is committed or dropped soon */
	q->prune_at_ns = util_now_ns(CLOCK_MONOTONIC) +
			 (more == 1 || more == -EBUSY ? PRUNE_AGAIN_MS :
							PRUNE_EVERY_MS) *
				 1000000ull;
}

/* The store's size, age and what pruning deleted, as status lines. */
static void usage_status(const char *name, const struct sq_stats *st,
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

/* The store's status lines: made anew, lost, then its size and age. */
static void sq_describe(struct sink *k, FILE *out)
{
	struct sq *q = sink_ctx(k);
	const char *name = sink_name(k);
	struct store_limits lim;
	struct sq_stats st;

	pthread_mutex_lock(&q->lock);
	st = q->st;
	lim = q->limits;
	pthread_mutex_unlock(&q->lock);
	fprintf(out, "sink.%s.store_recreated: %" PRIu64 "\n", name,
		st.recreated);
	fprintf(out, "sink.%s.store_records_lost: %" PRIu64 "\n", name,
		st.recreate_lost);
	usage_status(name, &st, &lim, out);
}

/* Records a deleted store held that the spool no longer had. */
static uint64_t sq_lost(struct sink *k)
{
	struct sq *q = sink_ctx(k);
	uint64_t n;

	pthread_mutex_lock(&q->lock);
	n = q->st.recreate_lost;
	pthread_mutex_unlock(&q->lock);
	return n;
}

const struct sink_backend sink_sqlite_backend = {
	.type = "sqlite",
	.pipelined = false,
	.open = sq_open,
	.add = sq_add,
	.send = sq_send,
	.check = sq_check,
	.maintain = sq_maintain,
	.describe = sq_describe,
	.lost = sq_lost,
	.close = sq_close,
};
