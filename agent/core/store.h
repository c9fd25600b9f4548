/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * store.h - the embedded SQLite store: schema v1 records kept as the
 * columns reports query (process records: only those, their JSON made
 * again from them; other records: with their JSON), written in batched
 * transactions.
 */
#ifndef JOBTRACE_STORE_H
#define JOBTRACE_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct store;
struct sqlite3;
struct sqlite3_stmt;

/*
 * A member of a sample record (table record, column json) as the index on
 * samples holds it: a query uses an index only when it writes the same
 * expression, so readers take this.
 */
#define STORE_SAMPLE_PID	"json_extract(json, '$.pid')"

/*
 * Open (creating) the database at path; readonly for the CLI.  An empty
 * path is a private temporary database, deleted when closed.  A database
 * of another store schema version is refused with a message saying what
 * to do (-EPROTO).
 */
int store_open(const char *path, bool readonly, struct store **out);
/* Commit anything pending and close; accepts NULL. */
void store_close(struct store *s);
/*
 * Queue one record given as its schema v1 JSON text (len bytes, any
 * type): `process` records go to the process table, every other type to
 * the record table.  A second put of the same id is ignored (a spool
 * replay after a crash).  Committed by store_flush(); counted in
 * store_pending() when new.  Returns 0, -EINVAL for a record that can
 * never be stored (not a JSON object, no "type" or "id": logged, the
 * batch goes on), or -errno.
 */
int store_put_json(struct store *s, const char *json, size_t len);
/* Commit the open transaction; returns records committed or -errno. */
int store_flush(struct store *s);
/* Records committed since open. */
uint64_t store_count(const struct store *s);
/* Records waiting in the open transaction. */
unsigned store_pending(const struct store *s);
/*
 * The JSON of process record id (idlen bytes), made again from its
 * columns by schema_write(): the text the agent stored, byte for byte.
 * *json stays valid until the next call or store_close().  0, -ENOENT
 * for no such record, or -errno.  SQL on this store's handle can call it
 * as jobtrace_json(id).
 */
int store_process_json(struct store *s, const char *id, size_t idlen,
		       const char **json, size_t *len);
/* The SQLite handle, for readers (report, export). */
struct sqlite3 *store_handle(struct store *s);
/*
 * sql prepared on s's handle, kept for the next call with the same text
 * (a view that draws a frame a second asks the same statements each
 * frame; SQLite prepares one again by itself when the schema changes).
 * A statement in use is not handed out twice: a second one is prepared.
 * SQLITE_OK or SQLite's code.  Give it back with store_stmt_done().
 */
int store_stmt(struct store *s, const char *sql, struct sqlite3_stmt **out);
/* Give back a statement of store_stmt(): reset, its bindings cleared
 * (none points into the caller's memory any more), kept; one that is not
 * kept (more than the store keeps, no memory) is finalized.  NULL: no-op. */
void store_stmt_done(struct store *s, struct sqlite3_stmt *st);
/* The path given to store_open(), for messages. */
const char *store_path(const struct store *s);
/*
 * True when the writer's path no longer names the file it opened (deleted
 * or replaced under it: what it commits then is lost to every reader).
 */
bool store_replaced(const struct store *s);
/* Roll back the open transaction; its records are not stored. */
void store_discard(struct store *s);
/* Records the file holds, over both tables; -errno on failure. */
int64_t store_records(struct store *s);

/* What the store keeps; 0 in a field: no limit. */
struct store_limits {
	double retention_s;	/* records older than this are deleted */
	uint64_t max_bytes;	/* cap of the pages holding records */
};

/* How large and how old the store is. */
struct store_usage {
	uint64_t used_bytes;	/* pages holding records: what max_bytes caps */
	uint64_t file_bytes;	/* the database file and its WAL on disk */
	double oldest;		/* epoch seconds of the oldest record; 0: none */
};

/* Records deleted by store_prune(), by reason. */
struct store_pruned {
	uint64_t expired;	/* older than the retention */
	uint64_t for_size;	/* the oldest, while over max_bytes */
};

/*
 * One bounded step towards limits l at now (epoch seconds), in one
 * transaction of at most max_rows deletions: first records whose time
 * (a process's end, else its start; another record's `time`, a job's
 * start or end) is before now - retention; then, once the pages in use
 * are over max_bytes, the oldest records of both tables until they are
 * under STORE_LOW_WATER percent of it.  Pages freed go back to the
 * filesystem when the store was made with auto_vacuum=INCREMENTAL (every
 * store this version creates); an older store reuses them.  Records
 * without a time are never deleted.  Adds what it deleted to *out.
 * Returns 1 when more is left to delete, 0 when within the limits,
 * -EBUSY while a batch is open or another writer has the store (nothing
 * is done, nothing waits), or -errno (logged).
 */
int store_prune(struct store *s, const struct store_limits *l, double now,
		unsigned max_rows, struct store_pruned *out);
/* Measure the store into *u; 0, -EBUSY while a batch is open, or -errno
 * (logged). */
int store_usage(struct store *s, struct store_usage *u);

/* A size-capped store is pruned down to this percent of its cap. */
#define STORE_LOW_WATER 90

#endif
