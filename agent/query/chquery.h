/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * chquery.h - read records back from ClickHouse for `jobtrace report` and
 * `jobtrace export --source clickhouse`: the selected records' `json`
 * column is fetched over HTTP and put into a (temporary) SQLite store, on
 * which the usual report and export code runs.
 */
#ifndef JOBTRACE_CHQUERY_H
#define JOBTRACE_CHQUERY_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"
#include "json.h"
#include "storeq.h"
#include "store.h"

/*
 * Load into st every record of the ClickHouse sink s that q selects: for
 * a report the process records (and a job's `job` records and the latest
 * `sample` of each of its processes), for an export (export true) every
 * record type.  What ClickHouse returns is a superset
 * (times to the second, --pid by ppid); the report's own SQL picks the
 * exact set.  Duplicates (a retried delivery) are dropped by the store.
 * Returns the records loaded (not committed: the caller flushes), or
 * -errno with one line in err naming the URL and ClickHouse's message.
 */
int chquery_load(const struct jt_sink_config *s, const struct report_query *q,
		 bool export, struct store *st, char *err, size_t errlen);

/* What to load: a report's, an export's, a report's and its jobs', or
 * what `jobtrace cost` needs (chquery_load_cost()), `sweep`, `top`. */
enum chq_what { CHQ_REPORT, CHQ_EXPORT, CHQ_JOBS, CHQ_COST, CHQ_SWEEP,
		CHQ_TOP };

/*
 * As chquery_load(); CHQ_REPORT and CHQ_JOBS: the process records and the
 * `job` records of their jobs (allocations and job peaks: a task that ran
 * as its own job, tasks.h); CHQ_COST: as chquery_load_cost(); CHQ_SWEEP:
 * that, the process records and the `signal` records since (jobtrace
 * sweep; a stall that began before since is not loaded); CHQ_TOP: what
 * `jobtrace top` reads (chquery.c load_top()).
 */
int chquery_load_what(const struct jt_sink_config *s,
		      const struct report_query *q, enum chq_what what,
		      struct store *st, char *err, size_t errlen);

/*
 * Load into st what `jobtrace cost` needs for q (--job, --run or --since):
 * every `job` record of the jobs selected (for --run: the jobs whose own
 * record or whose processes name the run) and all their process records;
 * for --since also every `job` start record without an end record on its
 * host (a job still running), and the `host` records from q->since on
 * plus each host's last one before it (its state and price then).  A
 * superset, as chquery_load(); costq.c narrows it.  Returns the records
 * loaded (not committed), or -errno with one line in err.
 */
int chquery_load_cost(const struct jt_sink_config *s,
		      const struct report_query *q, struct store *st,
		      char *err, size_t errlen);

/*
 * Put the records of a TabSeparated answer (one escaped `json` value per
 * line) into st; tsv is unescaped in place.  Returns the records put (new
 * or duplicate), or -errno; a record the store refuses is logged and
 * skipped.
 */
int chquery_put_tsv(struct store *st, char *tsv, size_t len);

#endif
