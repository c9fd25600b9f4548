/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * store.h - the embedded SQLite store: schema v1 records kept as their
 * JSON, with the columns reports query generated from it, written in
 * batched transactions.
 */
#ifndef JOBTRACE_STORE_H
#define JOBTRACE_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct store;
struct sqlite3;

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
/* The SQLite handle, for readers (report, export). */
struct sqlite3 *store_handle(struct store *s);
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

#endif
