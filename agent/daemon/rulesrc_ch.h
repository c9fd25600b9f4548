/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rulesrc_ch.h - the fleet's ClickHouse as a source of rules bundles
 * (rules.source = "clickhouse"): the latest bundle of the rules table on
 * the ClickHouse sink's server.  One row of rulesrc.c's sources' table.
 */
#ifndef JT_RULESRC_CH_H
#define JT_RULESRC_CH_H

#include <stddef.h>

#include "config.h"
#include "json.h"

/* The source over cfg's ClickHouse sink in *ctx: 0 or -errno, err. */
int rulesrc_clickhouse_open(const struct jt_config *cfg, void **ctx,
			    char *err, size_t errlen);
/* A rulesrc_fetch_fn (rulesrc.h): the latest bundle, or 1 unchanged. */
int rulesrc_clickhouse_fetch(void *ctx, const char *have_tag,
			     struct jbuf *out, char *tag, size_t taglen,
			     char *err, size_t errlen);
/* Release the source; accepts NULL. */
void rulesrc_clickhouse_close(void *ctx);

#endif
