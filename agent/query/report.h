/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * report.h - `jobtrace report` and `jobtrace export` over the SQLite store
 * (the agent's, or a temporary one loaded from ClickHouse).  What every
 * analysis shares (the query, its selector, reading stored records) is
 * storeq.h; report_html.h, report_signals.h, costq.h and rightsize.h
 * build on that, never on this command.
 */
#ifndef JOBTRACE_REPORT_H
#define JOBTRACE_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "storeq.h"

struct store;

/*
 * Print the report of what q selects from the open store s (where names
 * it in messages): a title with the counts; for --job, the job's header
 * from its `job` records (user, name, state, exit code, elapsed, run,
 * pipeline, cost center) and
 * the efficiency (CPU over allocated CPUs x elapsed, the job's memory
 * peak over the memory requested); a summary by workflow task and one by
 * tool, most CPU first; the TOTAL of every process's own figures; then
 * the process tree (unless q->no_tree).  For --job, live processes without
 * a process record are shown from their latest sample, as running.  A
 * SIGPIPE and the scheduler's kill of the `extern` step at job end are
 * counted apart, not as failures.  HTML is report_html.h's page.  Returns
 * 0, -ENOENT when nothing matched (a message was printed on stderr), or
 * -errno.
 */
int report_run_store(struct store *s, const char *where,
		     const struct report_query *q, enum report_format fmt,
		     FILE *out);
/* Print the selected records of the open store s as schema v1 NDJSON, one
 * per line; where names s in messages. */
int report_export_store(struct store *s, const char *where,
			const struct report_query *q, FILE *out);

#endif
