/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * chschema.h - schema v1 records as ClickHouse tables and rows.
 *
 * ClickHouse 18.16's JSONEachRow input takes no nested objects and has no
 * DateTime64, Map or JSONExtract, so every record type gets a table of
 * flattened, typed columns (job.id -> job_id, cpu.user_s -> cpu_user_s,
 * times as X DateTime('UTC') plus X_us UInt32) and keeps the record itself
 * verbatim in a `json String` column.  chschema_print() writes the DDL,
 * chschema_row() turns one record into one JSONEachRow line for
 * `INSERT INTO db.TABLE FORMAT JSONEachRow` (with
 * input_format_skip_unknown_fields=1).  The table `files` has a row per
 * process and file, made from process records by chschema_file_rows().
 */
#ifndef JOBTRACE_CHSCHEMA_H
#define JOBTRACE_CHSCHEMA_H

#include <stddef.h>
#include <stdio.h>

#include "json.h"

/* Nesting deeper than this (objects and arrays) is rejected as -EINVAL. */
#define CHSCHEMA_MAX_DEPTH 64

/*
 * Print CREATE DATABASE IF NOT EXISTS db and one CREATE TABLE IF NOT EXISTS
 * per record type, each statement ending with ';' on its own line, for
 * `clickhouse-client --multiquery` (or for a program that sends the
 * statements one by one: split at those lines).  db is quoted when it needs
 * to be; NULL or "" means "jobtrace".
 */
void chschema_print(FILE *out, const char *db);

/*
 * The table of the fleet's rules bundles (`jobtrace rules push --source
 * clickhouse` inserts, agents with rules.source = "clickhouse" poll it):
 * one row per push, the latest pushed_at (then pushed_at_us) in force.
 * Its DDL is part of chschema_print()'s.
 */
#define CHSCHEMA_RULES_TABLE "rules"
/* Its columns, in the order of the DDL (for INSERT ... FORMAT
 * TabSeparated). */
/* The order of its rows that puts the bundle in force first. */
#define CHSCHEMA_RULES_LATEST \
	"ORDER BY pushed_at DESC, pushed_at_us DESC LIMIT 1"
#define CHSCHEMA_RULES_COLUMNS \
	"version, sha256, pushed_at, pushed_at_us, pushed_by, host, size, bundle"

/*
 * Append to b (which must be at the top level: no open object) one
 * JSONEachRow line, a JSON object and '\n', for the record json[0..len):
 * its flattened columns plus `json`, the record's text verbatim (without
 * surrounding white space).  *table is set to the table's name (a static
 * string, the record's type).  A value that does not fit its column (wrong
 * JSON type, out of range, a time ClickHouse's DateTime cannot hold) is left
 * out, so the column gets NULL or its default; unknown fields are ignored.
 *
 * Returns 0; -EINVAL when the input is not one valid JSON object (RFC 8259,
 * UTF-8, nesting <= CHSCHEMA_MAX_DEPTH) with a string "type" (the first
 * "type" member counts); -ENOENT for a valid record of an unknown type;
 * -ENOMEM when memory ran out (if b could not grow, b->oom is set and its
 * contents are invalid, as json.h has it).  On -EINVAL and -ENOENT b is
 * left as it was, *table is NULL and chschema_strerror() says why.
 * Reentrant: no state is kept between calls but that message.
 */
int chschema_row(struct jbuf *b, const char *json, size_t len,
		 const char **table);

/* The table of one row per process and file (chschema_file_rows()). */
#define CHSCHEMA_FILES_TABLE "files"

/*
 * Append to b (at the top level) one JSONEachRow line for table `files`
 * per element of the files of the process record json[0..len): the
 * element's columns (path, flags, opens, read_bytes, write_bytes,
 * size_bytes, mmap, deleted) and its process's (host, process_id, pid,
 * uid, start_time, job_*, tool_*).  An element that is no object, or has
 * none of its members, gives no row.  Returns how many rows, or -EINVAL
 * (not valid JSON; b as it was), -ENOMEM.
 */
int chschema_file_rows(struct jbuf *b, const char *json, size_t len);

/* Why the last chschema_row() call in this thread failed ("" if it did not). */
const char *chschema_strerror(void);

#endif
