/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * report_signals.h - the Signals section of `jobtrace report`: the
 * `signal` records of the jobs (run, pipeline, time span) a report
 * selects, one line each in text, the stored records in JSON.
 */
#ifndef JOBTRACE_REPORT_SIGNALS_H
#define JOBTRACE_REPORT_SIGNALS_H

#include <stdio.h>

#include "storeq.h"

struct store;

/*
 * Print the section "Signals" with one line a signal (time, kind,
 * job, process, evidence in words), or "Signals: none".  0 or -errno.
 */
int report_signals_text(struct store *st, const char *where,
			const struct report_query *q, FILE *out);
/* Print the member ,"signals":[stored records] of an open JSON object
 * (the records verbatim, oldest first).  0 or -errno. */
int report_signals_json(struct store *st, const char *where,
			const struct report_query *q, FILE *out);

#endif
