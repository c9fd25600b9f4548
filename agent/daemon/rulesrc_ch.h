/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rulesrc_ch.h - the agent's `clickhouse` rules source: the latest bundle
 * of the fleet store's rules table (chschema.h), which `jobtrace rules
 * push --source clickhouse` fills.  Each poll asks for the latest row's
 * version and sha256 only (one small query); the bundle itself is fetched
 * only when its sha256 differs from the one in force.  The bundle is
 * handed back unchecked: the rules source's caller verifies, unpacks and
 * loads it (rulebundle.h, rulesctl.h).  One row of rulesrc.c's sources'
 * table (rulesrc.h): open, fetch, close, all on the fetcher's thread.
 */
#ifndef JOBTRACE_RULESRC_CH_H
#define JOBTRACE_RULESRC_CH_H

#include <stddef.h>

#include "config.h"
#include "json.h"

struct rulesrc_ch;

/*
 * How a query is sent: sql, its answer appended to resp (at most
 * max_answer bytes); 0 or -errno with one line in err.  The ClickHouse
 * sink's HTTP client by default; a test's own otherwise.
 */
typedef int (*rulesrc_ch_query_fn)(void *qctx, const char *sql,
				   size_t max_answer, struct jbuf *resp,
				   char *err, size_t errlen);

/*
 * A source reading the rules table of the ClickHouse sink s (its URL,
 * database, credentials file, TLS settings and timeout).  0, or -errno
 * with err naming what is wrong (a credentials file, say).
 */
int rulesrc_clickhouse_new(const struct jt_sink_config *s,
			   struct rulesrc_ch **out, char *err, size_t errlen);
/* A source whose queries go to q(qctx, ...), of database db (tests). */
int rulesrc_clickhouse_new_query(const char *db, rulesrc_ch_query_fn q,
				 void *qctx, struct rulesrc_ch **out);
/* Free a source; accepts NULL. */
void rulesrc_clickhouse_free(struct rulesrc_ch *c);

/*
 * The source over the first clickhouse sink of cfg (rules.source =
 * "clickhouse") in *ctx, a struct rulesrc_ch: 0, or -errno with err
 * naming what is wrong (no such sink, its credentials file).
 */
int rulesrc_clickhouse_open(const struct jt_config *cfg, void **ctx,
			    char *err, size_t errlen);
/* Release a source that open made; accepts NULL. */
void rulesrc_clickhouse_close(void *ctx);
/* Make the running query, and every later one, end with -ECANCELED
 * (the agent stops); safe from any thread. */
void rulesrc_clickhouse_cancel(void *ctx);

/*
 * The rules source's fetch (rulesrc.h's rulesrc_fetch_fn; ctx a struct
 * rulesrc_ch): 0 with the latest bundle appended to out and its sha256 in
 * tag; 1 when the latest push's sha256 is have_tag ("" or NULL: none
 * held) (nothing else is
 * fetched; tag is set too); -ENOENT when nothing was pushed yet;
 * -EBADMSG when the row's bundle is not the size it says, not a bundle, or
 * not the one its sha256 names (the rest, its files and signature, is the
 * caller's to check); another -errno
 * when ClickHouse cannot be asked.  err gets one line on failure.
 */
int rulesrc_clickhouse_fetch(void *ctx, const char *have_tag,
			     struct jbuf *out, char *tag, size_t taglen,
			     char *err, size_t errlen);

#endif
