/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sink_backend.h - the contract between the sink engine (sink.c) and its
 * backends (sink_sqlite.c, sink_http.c, sink_clickhouse.c).
 *
 * The engine owns everything that does not depend on where records go:
 * its thread, the spool reader, batching by count, bytes and age, the
 * back-off and retries, acknowledging, flushing, draining at a stop and
 * the common status lines.  A backend encodes records into a batch and
 * stores a batch, through the table of functions below, each called from
 * the sink's threads only (send from the sender thread of a pipelined
 * backend, the rest from the sink thread), except describe and lost,
 * called from any thread (a backend's counters have a lock of its own).
 */
#ifndef JOBTRACE_SINK_BACKEND_H
#define JOBTRACE_SINK_BACKEND_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "config.h"
#include "json.h"
#include "spool.h"

struct sink;
struct sinks;
struct http_client;

/* Encoded parts of a batch a backend may fill (ClickHouse: one a table). */
#define SINK_PARTS 16

/* A batch: what the backend encoded, the records and where they end. */
struct sink_batch {
	struct jbuf part[SINK_PARTS];	/* emptied by the engine after it */
	size_t n;			/* records */
	uint64_t end_seq;		/* acknowledged when stored */
};

/* add's answer for a record that is counted and not stored */
#define SINK_SKIP 1

/* What differs between backends. */
struct sink_backend {
	const char *type;	/* status's sink.NAME.type */
	/* network backends send a batch in a second thread while the next
	 * one is built, so encoding and the backend's work overlap */
	bool pipelined;
	/* reach the target; 0 or -errno with why in err (retried with
	 * back-off until it works) */
	int (*open)(struct sink *k, char *err, size_t errlen);
	/* take one record into batch b: 0, SINK_SKIP or -errno (the batch
	 * is read again after a back-off) */
	int (*add)(struct sink *k, struct sink_batch *b, const char *rec,
		   size_t len);
	/* store batch b; 0 or -errno with the reason in err (it is read
	 * again from the acknowledged position after a back-off) */
	int (*send)(struct sink *k, struct sink_batch *b, char *err,
		    size_t errlen);
	/* between batches, NULL or: is the target still there?  0, or
	 * -errno with what happened in err (the reader is rewound) */
	int (*check)(struct sink *k, char *err, size_t errlen);
	/* between batches, NULL or: the target's housekeeping, bounded in
	 * time */
	void (*maintain)(struct sink *k);
	/* NULL or: the backend's own "sink.NAME.key: value" status lines */
	void (*describe)(struct sink *k, FILE *out);
	/* NULL or: records the target lost after it had stored them */
	uint64_t (*lost)(struct sink *k);
	/* close the target and free the backend's state (never opened, or
	 * NULL state, too) */
	void (*close)(struct sink *k);
};

/* One sink to start: its name, batching, back-off and backend. */
struct sink_def {
	const char *name;		/* the spool's sink name */
	const char *url;		/* status shows its public part; NULL */
	unsigned batch_records;
	unsigned batch_age_ms;
	unsigned retry_max_ms;		/* the longest back-off */
	const struct sink_backend *ops;
	void *ctx;			/* the backend's state: ops->close */
};

/*
 * Start one thread per sink of d (n of them, the spool's sinks in its
 * order) reading from sp.  The sinks own each d[i].ctx from here, also on
 * failure.  sinks_start() is this with the configured backends.
 */
int sinks_start_defs(struct spool *sp, const struct sink_def *d, size_t n,
		     struct sinks **out, char *err, size_t errlen);

/* The engine's services to a backend. */
/* The backend's state (sink_def.ctx). */
void *sink_ctx(struct sink *k);
/* The sink's name, for messages. */
const char *sink_name(const struct sink *k);
/* True once the agent is stopping and the drain time is over. */
bool sink_past_deadline(const struct sink *k);
/*
 * The target lost what it had stored: read again what the spool still
 * has from its oldest record.  Returns how many acknowledged records are
 * read again.
 */
uint64_t sink_reread(struct sink *k);

/* The backends. */
extern const struct sink_backend sink_sqlite_backend;
extern const struct sink_backend sink_http_backend;
extern const struct sink_backend sink_clickhouse_backend;

/* The SQLite store's state for configuration c, or NULL (no memory). */
void *sink_sqlite_new(const struct jt_config *c);
/* Apply c's store.retention and store.max_size_mib (a reload). */
void sink_sqlite_limits(void *ctx, const struct jt_config *c);
/* Records the store deleted for its size cap since the start. */
uint64_t sink_sqlite_pruned(void *ctx);

/*
 * A network backend's state: the sink's configuration (strings borrowed
 * from it) and its HTTP client.  ClickHouse's state begins with it.
 */
struct sink_net {
	struct jt_sink_config cfg;
	struct http_client *http;
};
/* A network backend's state for cfg: a sink_net at the start of size
 * bytes, the rest zeroed; NULL (no memory). */
void *sink_net_new(const struct jt_sink_config *cfg, size_t size);
/* The HTTP (NDJSON) backend's state for cfg, or NULL (no memory). */
void *sink_http_new(const struct jt_sink_config *cfg);
/* The ClickHouse backend's state for cfg, or NULL (no memory). */
void *sink_clickhouse_new(const struct jt_sink_config *cfg);
/* Open a network backend's HTTP client (its state is a sink_net). */
int sink_net_open(struct sink *k, char *err, size_t errlen);
/* Free a network backend's HTTP client (not its state). */
void sink_net_close(struct sink *k);

#endif
