/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * store.h - the embedded SQLite store: process records (schema v1 JSON
 * plus the columns reports query), written in batched transactions.
 */
#ifndef JOBTRACE_STORE_H
#define JOBTRACE_STORE_H

#include <stdbool.h>
#include <stdint.h>

#include "proc.h"
#include "record.h"

struct store;

/* Open (creating) the database at path; readonly for the CLI. */
int store_open(const char *path, bool readonly, struct store **out);
/* Commit anything pending and close; accepts NULL. */
void store_close(struct store *s);
/*
 * Queue one finished process: p (and h for host name and clock) supply
 * the query columns, json is its schema v1 record, id its unique record
 * id (a second put of the same id is ignored).  Committed by store_flush().
 */
int store_put_process(struct store *s, const struct jt_host *h,
		      const struct jt_proc *p, const char *id,
		      const char *json);
/* Queue any other record type (host, job, signal, sample). */
int store_put_record(struct store *s, const char *type, const char *id,
		     uint64_t time_ns, const char *job_id, const char *json);
/* Commit the open transaction; returns records committed or -errno. */
int store_flush(struct store *s);
/* Records committed since open. */
uint64_t store_count(const struct store *s);
/* Records waiting in the open transaction. */
unsigned store_pending(const struct store *s);

#endif
