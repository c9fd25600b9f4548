// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_report.c - the readers of record JSON behind `jobtrace report`,
 * `export` and `cost`: the SQLite store's intake (store_put_json, which reads the
 * record's "type" itself and leaves the rest to SQLite's JSON functions)
 * and the report's loaders and printers (argv display, job header,
 * efficiency, summaries, tree) and the cost's (costq.c: split, idle
 * allocation, idle nodes, every --by and format) over whatever the store
 * accepted.
 *
 * Input: NDJSON, one record per line, as the spool hands the SQLite sink.
 * The input's length picks the selector (--since, --job, --run or --pid
 * of the first stored record that has one) and the format, so that every
 * combination is reached and a saved input replays the same way.
 */
#include <errno.h>

#include <sqlite3.h>

#include "costq.h"
#include "fuzz.h"
#include "log.h"
#include "report.h"
#include "store.h"

static struct store *st;
static FILE *devnull;

/* The first value of a column over both tables, or "" (static buffer). */
static const char *first_value(const char *sql)
{
	static char val[256];
	sqlite3_stmt *q = NULL;

	val[0] = '\0';
	if (sqlite3_prepare_v2(store_handle(st), sql, -1, &q, NULL) ==
	    SQLITE_OK && sqlite3_step(q) == SQLITE_ROW &&
	    sqlite3_column_text(q, 0))
		snprintf(val, sizeof(val), "%s",
			 (const char *)sqlite3_column_text(q, 0));
	sqlite3_finalize(q);
	return val;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum report_format fmts[] = { REPORT_TEXT, REPORT_JSON,
						   REPORT_HTML };
	struct report_query q = { 0 };
	const char *p = (const char *)data, *end = p + size, *v;
	char job[256], run[256];
	int rc;

	if (!st) {
		log_init("fuzz", 0, LOG_LVL_ERROR);
		devnull = fopen("/dev/null", "w");
		if (!devnull || store_open("", false, &st))
			abort();
	}
	while (p < end) {
		const char *nl = memchr(p, '\n', end - p);
		const char *e = nl ? nl : end;

		if (e > p) {
			rc = store_put_json(st, p, e - p);
			FUZZ_CHECK(rc == 0 || rc == -EINVAL);
		}
		p = e + 1;
	}
	FUZZ_CHECK(store_flush(st) >= 0);

	switch (size % 4) {
	case 1:
		v = first_value("SELECT job_id FROM process_rec WHERE job_id"
				" IS NOT NULL UNION ALL SELECT job_id FROM"
				" record WHERE job_id IS NOT NULL LIMIT 1");
		snprintf(job, sizeof(job), "%s", v);
		q.job = job;
		break;
	case 2:
		v = first_value("SELECT job_run FROM process_rec WHERE job_run"
				" IS NOT NULL LIMIT 1");
		snprintf(run, sizeof(run), "%s", v);
		q.run = run;
		break;
	case 3:
		q.pid = strtoll(first_value("SELECT pid FROM process_rec"
					    " WHERE pid > 0 LIMIT 1"), NULL,
				10);
		break;
	}
	if (!(q.job && *q.job) && !(q.run && *q.run) && q.pid <= 0) {
		memset(&q, 0, sizeof(q));
		q.since = 1;	/* everything since 1970 */
	}
	q.no_tree = (size / 12) % 2;
	rc = report_run_store(st, "fuzz", &q, fmts[(size / 4) % 3], devnull);
	FUZZ_CHECK(rc == 0 || rc == -ENOENT);
	rc = report_export_store(st, "fuzz", &q, devnull);
	FUZZ_CHECK(rc == 0 || rc == -ENOENT);
	if (!q.pid) {
		static const char *const bys[] = { "job", "task", "tool", "user",
						   "account", "cost-center" };
		static const enum report_format cfmts[] = { REPORT_TEXT,
							    REPORT_JSON, REPORT_CSV };

		q.by = bys[(size / 24) % 6];
		rc = costq_run_store(st, "fuzz", &q, cfmts[(size / 4) % 3],
				     2e9, devnull);
		FUZZ_CHECK(rc == 0 || rc == -ENOENT);
	}

	if (sqlite3_exec(store_handle(st), "DELETE FROM process_rec;"
			 " DELETE FROM record;", NULL, NULL, NULL) != SQLITE_OK)
		abort();
	return 0;
}
