// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_chquery.c - the reader of ClickHouse's answer to `jobtrace report
 * --source clickhouse` (chquery_put_tsv): TabSeparated lines, each one
 * escaped `json` value, unescaped and put into a temporary SQLite store,
 * then exported as NDJSON as `jobtrace export` does.
 */
#include <errno.h>

#include <sqlite3.h>

#include "chquery.h"
#include "fuzz.h"
#include "log.h"
#include "report.h"
#include "store.h"

static struct store *st;
static FILE *devnull;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct report_query q = { .since = 1 };
	char *tsv = fuzz_strndup(data, size);
	int n, rc;

	if (!tsv)
		return 0;
	if (!st) {
		log_init("fuzz", 0, LOG_LVL_ERROR);
		devnull = fopen("/dev/null", "w");
		if (!devnull || store_open("", false, &st))
			abort();
	}
	n = chquery_put_tsv(st, tsv, size);
	FUZZ_CHECK(n >= 0);
	FUZZ_CHECK(store_flush(st) >= 0);
	rc = report_export_store(st, "fuzz", &q, devnull);
	FUZZ_CHECK(rc == 0 || rc == -ENOENT);
	if (sqlite3_exec(store_handle(st), "DELETE FROM process_rec;"
			 " DELETE FROM record;", NULL, NULL, NULL) != SQLITE_OK)
		abort();
	free(tsv);
	return 0;
}
