/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sink.h - the sinks that store the spool's records: the local SQLite
 * store, ClickHouse and any HTTP (NDJSON) collector.  Each runs in its own
 * thread with its own spool reader, batches, retries with exponential
 * back-off and jitter, and acknowledges what it stored; a sink that keeps
 * failing slows neither the event loop nor the other sinks.  sink.c is
 * that engine; each backend is a file of its own (sink_sqlite.c,
 * sink_http.c, sink_clickhouse.c) behind the table of sink_backend.h.
 */
#ifndef JOBTRACE_SINK_H
#define JOBTRACE_SINK_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "config.h"
#include "json.h"
#include "spool.h"

struct sinks;

/*
 * The spool's sink names for this configuration: "sqlite" when the store
 * is enabled, then each configured sink.  Fills names (at most max) and
 * returns how many.
 */
size_t sinks_names(const struct jt_config *c, const char **names, size_t max);
/* Start one thread per sink reading from sp (opened with sinks_names()). */
int sinks_start(const struct jt_config *c, struct spool *sp,
		struct sinks **out, char *err, size_t errlen);
/* New records were synced: wake the sinks. */
void sinks_notify(struct sinks *ks);
/*
 * Deliver the synced records below spool sequence number seq now, without
 * waiting for a batch to fill or come of age (a job ended: its report is
 * asked for next).  Accepts NULL.
 */
void sinks_flush(struct sinks *ks, uint64_t seq);
/*
 * The SQLite store's acknowledged position in the spool (the records
 * below it are in the store) and whether it is retrying a failure; false
 * when there is no store sink.
 */
bool sinks_store_position(struct sinks *ks, uint64_t *ack, bool *failing);
/*
 * Stop: each sink stores what it can of the synced records within
 * drain_ms (one attempt, no retries), then its thread ends.  What is left
 * stays in the spool for the next start.  Accepts NULL.
 */
void sinks_stop(struct sinks *ks, unsigned drain_ms);
/* "key: value" status lines for every sink. */
void sinks_status(struct sinks *ks, FILE *out);
/*
 * What is wrong with the sinks now, for status's first line: each sink
 * retrying a failure (with its last error) or holding records it read
 * more than 10 s ago and has not stored (an insert that waits), and the
 * records each has dropped or skipped since the start.  Writes one "; "-separated line
 * into out (len bytes) and returns how many problems.
 */
unsigned sinks_problems(struct sinks *ks, char *out, size_t len);
/* At most this many sinks (the store and 16 configured ones). */
#define SINKS_MAX 17

struct sv_count;

/* The "spool" member of a host record's drops: each sink's name and the
 * records lost to it; fills out (at most max) and returns how many.  The
 * names live as long as ks. */
unsigned sinks_drop_counts(struct sinks *ks, struct sv_count *out,
			   unsigned max);
/* Records dropped or skipped as corrupt over all sinks (host records). */
uint64_t sinks_lost_total(struct sinks *ks);
/*
 * Apply store.retention and store.max_size_mib of c (a reload): the
 * store's next pruning pass, within a few seconds, keeps to them.
 */
void sinks_store_limits(struct sinks *ks, const struct jt_config *c);
/* Records the store deleted for store.max_size_mib since the start. */
uint64_t sinks_store_size_cap(struct sinks *ks);

#endif
