// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sink_clickhouse.c - the sink backend that inserts each batch into
 * ClickHouse over HTTP: records become JSONEachRow rows of their type's
 * table (chschema.h), one INSERT per table.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chschema.h"
#include "http.h"
#include "log.h"
#include "schema.h"
#include "sink_backend.h"
#include "util.h"

_Static_assert(SF_REC__N <= SINK_PARTS, "a ClickHouse batch part per record type");

/* The backend's state: the HTTP client's first. */
struct ch {
	struct sink_net net;
	struct jbuf row;		/* one record's row */
	struct jbuf query;		/* the URL's suffix */
	bool logged_skip;
};

/* The ClickHouse backend's state for cfg. */
void *sink_clickhouse_new(const struct jt_sink_config *cfg)
{
	struct ch *c = sink_net_new(cfg, sizeof(*c));

	if (!c)
		return NULL;
	jbuf_init(&c->row);
	jbuf_init(&c->query);
	return c;
}

/* One record as a row of its table's part of the batch. */
static int ch_add(struct sink *k, struct sink_batch *b, const char *rec,
		  size_t len)
{
	struct ch *c = sink_ctx(k);
	const char *table = NULL;
	int e;

	jbuf_reset(&c->row);
	e = chschema_row(&c->row, rec, len, &table);
	if (e == -ENOMEM || c->row.oom)
		return -ENOMEM;
	if (e) {
		if (!c->logged_skip)
			log_warn("sink %s: a record that is not a schema v1"
				 " record was skipped: %s (%.60s)", sink_name(k),
				 chschema_strerror(), rec);
		c->logged_skip = true;
		return SINK_SKIP;
	}
	for (size_t i = 0; i < SF_REC__N; i++)
		if (!strcmp(sf_records[i].name, table))
			return jbuf_put(&b->part[i], c->row.buf, c->row.len);
	return SINK_SKIP;
}

/* INSERT each table's rows; the first failure fails the batch. */
static int ch_send(struct sink *k, struct sink_batch *b, char *err,
		   size_t errlen)
{
	struct ch *c = sink_ctx(k);
	struct jbuf *q = &c->query;
	int e = 0;

	for (size_t i = 0; i < SF_REC__N && !e; i++) {
		char sql[256];

		if (!b->part[i].len)
			continue;
		if (sink_past_deadline(k)) {
			util_seterr(err, errlen, "stopping");
			return -ETIMEDOUT;
		}
		snprintf(sql, sizeof(sql), "INSERT INTO %s.%s FORMAT"
			 " JSONEachRow", c->net.cfg.database,
			 sf_records[i].name);
		jbuf_reset(q);
		jbuf_put(q, "?input_format_skip_unknown_fields=1&query=", 42);
		http_urlencode(q, sql);
		if (q->oom)
			return -ENOMEM;
		e = http_post(c->net.http, q->buf, "application/json",
			      b->part[i].buf, b->part[i].len, c->net.cfg.gzip,
			      NULL, err, errlen);
	}
	return e;
}

/* Close the client and free the state. */
static void ch_close(struct sink *k)
{
	struct ch *c = sink_ctx(k);

	if (!c)
		return;
	sink_net_close(k);
	jbuf_free(&c->row);
	jbuf_free(&c->query);
	free(c);
}

const struct sink_backend sink_clickhouse_backend = {
	.type = "clickhouse",
	.pipelined = true,
	.open = sink_net_open,
	.add = ch_add,
	.send = ch_send,
	.close = ch_close,
};
