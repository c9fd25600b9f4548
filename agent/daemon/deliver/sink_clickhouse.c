// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sink_clickhouse.c - the sink backend that inserts each batch into
 * ClickHouse over HTTP: records become JSONEachRow rows of their type's
 * table (chschema.h), and a process record's files rows of the table
 * `files` too, one INSERT per table.
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

/* the batch's parts: one per record type, then the files rows */
#define PART_FILES SF_REC__N
_Static_assert(PART_FILES < SINK_PARTS,
	       "a ClickHouse batch part per record type, and one for files");

/* The backend's state: the HTTP client's first. */
struct ch {
	struct sink_net net;
	struct jbuf row;		/* one record's row */
	struct jbuf query;		/* the URL's suffix */
	bool logged_skip;
	bool logged_no_files;		/* the files table is missing */
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
	for (size_t i = 0; i < SF_REC__N; i++) {
		if (strcmp(sf_records[i].name, table))
			continue;
		if (jbuf_put(&b->part[i], c->row.buf, c->row.len))
			return -ENOMEM;
		/* a valid record: its files are valid JSON too */
		if (i == SF_REC_PROCESS &&
		    chschema_file_rows(&b->part[PART_FILES], rec, len) ==
		    -ENOMEM)
			return -ENOMEM;
		return 0;
	}
	return SINK_SKIP;
}

/*
 * The database has no table `files` (ClickHouse's UNKNOWN_TABLE, code 60:
 * made before it, by an older jobtrace schema clickhouse): its rows are
 * dropped, logged once, so that the records themselves keep going in
 * (each process record keeps its files in `json`).
 */
static int no_files_table(struct sink *k, struct ch *c, const char *err)
{
	if (!c->logged_no_files)
		log_warn("sink %s: no table %s.%s (%s): the rows of process"
			 " records' files are dropped until `jobtrace schema"
			 " clickhouse` makes it", sink_name(k),
			 c->net.cfg.database, CHSCHEMA_FILES_TABLE, err);
	c->logged_no_files = true;
	return 0;
}

/* INSERT each table's rows; the first failure fails the batch. */
static int ch_send(struct sink *k, struct sink_batch *b, char *err,
		   size_t errlen)
{
	struct ch *c = sink_ctx(k);
	struct jbuf *q = &c->query;
	int e = 0;

	for (size_t i = 0; i <= PART_FILES && !e; i++) {
		char sql[256];

		if (!b->part[i].len)
			continue;
		if (sink_past_deadline(k)) {
			util_seterr(err, errlen, "stopping");
			return -ETIMEDOUT;
		}
		snprintf(sql, sizeof(sql), "INSERT INTO %s.%s FORMAT"
			 " JSONEachRow", c->net.cfg.database,
			 i == PART_FILES ? CHSCHEMA_FILES_TABLE :
			 sf_records[i].name);
		jbuf_reset(q);
		jbuf_put(q, "?input_format_skip_unknown_fields=1&query=", 42);
		http_urlencode(q, sql);
		if (q->oom)
			return -ENOMEM;
		e = http_post(c->net.http, q->buf, "application/json",
			      b->part[i].buf, b->part[i].len, c->net.cfg.gzip,
			      NULL, err, errlen);
		if (e && i == PART_FILES && strstr(err, "Code: 60,"))
			e = no_files_table(k, c, err);
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
