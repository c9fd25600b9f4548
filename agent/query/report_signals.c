// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * report_signals.c - the Signals section of `jobtrace report` (see
 * report_signals.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include <sqlite3.h>

#include "json.h"
#include "report_signals.h"
#include "store.h"
#include "timesplit.h"
#include "util.h"

/* Columns: time, kind, job id, pid, comm, then the evidence. */
#define SIG_COLUMNS \
	"time, " JSTR("$.kind") ", job_id, " JNUM("$.pid") ", " \
	JSTR("$.comm") ", " JSTR("$.evidence.phase") ", " \
	JNUM("$.evidence.stalled_s") ", " JSTR("$.evidence.state") ", " \
	JSTR("$.evidence.wchan") ", " JNUM("$.evidence.exited") ", " \
	JNUM("$.evidence.blkio_delay_s") ", " \
	JNUM("$.evidence.window_s") ", " JNUM("$.evidence.fraction") ", " \
	JNUM("$.evidence.duration_s") ", " JNUM("$.evidence.median_s") ", " \
	JNUM("$.evidence.runs") ", " JNUM("$.evidence.mem_bytes") ", " \
	JNUM("$.evidence.limit_bytes") ", " JNUM("$.evidence.rss_bytes") \
	", json, " JNUM("$.evidence.run_queue_s") ", " \
	JNUM("$.evidence.memory_wait_s") ", " JSTR("$.jobs") ", " \
	JSTR("$.evidence.grew") ", " JNUM("$.evidence.grew_s") ", " \
	JNUM("$.evidence.net_wait_s")

enum { C_TIME, C_KIND, C_JOB, C_PID, C_COMM, C_PHASE, C_STALLED, C_STATE,
       C_WCHAN, C_EXITED, C_DELAY, C_WINDOW, C_FRACTION, C_DURATION,
       C_MEDIAN, C_RUNS, C_MEM, C_LIMIT, C_RSS, C_JSON, C_RUN_QUEUE,
       C_MEM_WAIT, C_JOBS, C_GREW, C_GREW_S, C_NET_WAIT };

/* The signals q selects, oldest first, as a statement. */
static int prepare(struct store *st, const char *where,
		   const struct report_query *q, sqlite3_stmt **out)
{
	static const char head[] = "SELECT " SIG_COLUMNS " FROM record"
				   " WHERE type = 'signal' AND ";
	char sql[8192];

	if (q->job && *q->job)
		snprintf(sql, sizeof(sql), "%s" REPORT_JOB_SEL
			 " ORDER BY time, id", head);
	else if (q->pid)
		/* the process's own signals */
		snprintf(sql, sizeof(sql), "%s%s = ?1 ORDER BY time, id", head,
			 JNUM("$.pid"));
	else if (storeq_process_where(q) && strcmp(storeq_process_where(q),
						   "since_time >= ?1"))
		snprintf(sql, sizeof(sql),
			 "%sjob_id IN (SELECT DISTINCT job_id FROM process"
			 " WHERE %s) ORDER BY time, id", head,
			 storeq_process_where(q));
	else
		snprintf(sql, sizeof(sql), "%stime >= ?1 ORDER BY time, id",
			 head);
	return storeq_prepare(st, where, sql, q, out);
}

/* Text column i, or def when NULL. */
static const char *text(sqlite3_stmt *st, int i, const char *def)
{
	const char *s = (const char *)sqlite3_column_text(st, i);

	return s ? s : def;
}

/* A printable copy of s in buf. */
static const char *clean(const char *s, char *buf, size_t len)
{
	util_strlcpy(buf, s, len);
	return util_printable(buf);
}

/* slower_than_usual's evidence in words: the duration against the
 * median, and the part of the time that grew most ("+310.00 s waiting
 * for a CPU", timesplit.h's words). */
static void slower_text(sqlite3_stmt *st, char *out, size_t len)
{
	const char *grew = text(st, C_GREW, NULL);
	const char *label = grew ? timesplit_label_of(grew) : NULL;
	int o;

	o = snprintf(out, len, "%.2f s, %.1fx the median %.2f s of %d earlier"
		     " runs", sqlite3_column_double(st, C_DURATION),
		     sqlite3_column_double(st, C_MEDIAN) > 0 ?
		     sqlite3_column_double(st, C_DURATION) /
		     sqlite3_column_double(st, C_MEDIAN) : 0,
		     sqlite3_column_double(st, C_MEDIAN),
		     sqlite3_column_int(st, C_RUNS));
	if (label && o > 0 && (size_t)o < len)
		snprintf(out + o, len - (size_t)o, "; +%.2f s %s",
			 sqlite3_column_double(st, C_GREW_S), label);
}

/* The evidence of the current row in words. */
static void evidence_text(sqlite3_stmt *st, char *out, size_t len)
{
	const char *kind = text(st, C_KIND, "");
	char a[24], b[24], jobs[160];

	out[0] = '\0';
	if (!strcmp(kind, "stall") && !strcmp(text(st, C_PHASE, ""), "end"))
		snprintf(out, len, "%s after %.1f s without progress",
			 sqlite3_column_int(st, C_EXITED) ? "exited" :
			 "resumed", sqlite3_column_double(st, C_STALLED));
	else if (!strcmp(kind, "stall"))
		snprintf(out, len, "no CPU or I/O progress for %.1f s,"
			 " state %s, waits in %s",
			 sqlite3_column_double(st, C_STALLED),
			 text(st, C_STATE, "?"), text(st, C_WCHAN, "?"));
	else if (!strcmp(kind, "io_bound"))
		snprintf(out, len, "block-I/O delay %.2f s of %.2f s (%.0f%%)",
			 sqlite3_column_double(st, C_DELAY),
			 sqlite3_column_double(st, C_WINDOW),
			 100 * sqlite3_column_double(st, C_FRACTION));
	else if (!strcmp(kind, "cpu_starved"))
		snprintf(out, len, "waited %.2f s for a CPU of %.2f s (%.0f%%),"
			 " other jobs %s", sqlite3_column_double(st, C_RUN_QUEUE),
			 sqlite3_column_double(st, C_WINDOW),
			 100 * sqlite3_column_double(st, C_FRACTION),
			 clean(text(st, C_JOBS, "[]"), jobs, sizeof(jobs)));
	else if (!strcmp(kind, "memory_pressure"))
		snprintf(out, len, "reclaim, thrashing, swap-in %.2f s of %.2f s"
			 " (%.0f%%)", sqlite3_column_double(st, C_MEM_WAIT),
			 sqlite3_column_double(st, C_WINDOW),
			 100 * sqlite3_column_double(st, C_FRACTION));
	else if (!strcmp(kind, "net_wait"))
		snprintf(out, len, "waited %.2f s on the network of %.2f s"
			 " (%.0f%%)", sqlite3_column_double(st, C_NET_WAIT),
			 sqlite3_column_double(st, C_WINDOW),
			 100 * sqlite3_column_double(st, C_FRACTION));
	else if (!strcmp(kind, "slower_than_usual"))
		slower_text(st, out, len);
	else if (!strcmp(kind, "memory_near_limit")) {
		util_human_bytes((uint64_t)sqlite3_column_int64(st, C_MEM), a,
				 sizeof(a));
		util_human_bytes((uint64_t)sqlite3_column_int64(st, C_LIMIT), b,
				 sizeof(b));
		snprintf(out, len, "%s of the limit %s (%.0f%%)", a, b,
			 100 * sqlite3_column_double(st, C_FRACTION));
	} else if (!strcmp(kind, "oom_kill") &&
		   sqlite3_column_type(st, C_RSS) != SQLITE_NULL) {
		util_human_bytes((uint64_t)sqlite3_column_int64(st, C_RSS), a,
				 sizeof(a));
		snprintf(out, len, "RSS %s", a);
	}
}

/* One row in text: the section's head before the first. */
static void text_row(sqlite3_stmt *st, size_t i, FILE *out)
{
	char when[32], ev[256], proc[48] = "-", kind[32], job[64], comm[32];

	if (!i)
		fprintf(out, "\nSignals\n  %-27s %-19s %-16s %-20s %s\n",
			"TIME", "KIND", "JOB", "PROCESS", "EVIDENCE");
	json_format_time((uint64_t)(sqlite3_column_double(st, C_TIME) * 1e9),
			 when, sizeof(when));
	if (sqlite3_column_type(st, C_PID) != SQLITE_NULL)
		snprintf(proc, sizeof(proc), "%d %s",
			 sqlite3_column_int(st, C_PID),
			 clean(text(st, C_COMM, ""), comm, sizeof(comm)));
	evidence_text(st, ev, sizeof(ev));
	fprintf(out, "  %-27s %-19s %-16s %-20s %s\n", when,
		clean(text(st, C_KIND, "?"), kind, sizeof(kind)),
		clean(text(st, C_JOB, "-"), job, sizeof(job)), proc,
		util_printable(ev));
}

/* One row in JSON: the stored record. */
static void json_row(sqlite3_stmt *st, size_t i, FILE *out)
{
	fprintf(out, "%s%s", i ? "," : "", text(st, C_JSON, "null"));
}

/* Call row on each signal q selects; *n: how many.  0 or -errno. */
static int each(struct store *s, const char *where,
		const struct report_query *q, FILE *out, size_t *n,
		void (*row)(sqlite3_stmt *st, size_t i, FILE *out))
{
	sqlite3_stmt *st = NULL;
	int rc, err = prepare(s, where, q, &st);

	*n = 0;
	if (err)
		return err;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		row(st, (*n)++, out);
	err = storeq_step_done(store_handle(s), where, rc);
	sqlite3_finalize(st);
	return err;
}

/* The Signals section in text. */
int report_signals_text(struct store *s, const char *where,
			const struct report_query *q, FILE *out)
{
	size_t n;
	int err = each(s, where, q, out, &n, text_row);

	if (!err && !n)
		fprintf(out, "\nSignals: none\n");
	return err;
}

/* The Signals member in JSON: the stored records. */
int report_signals_json(struct store *s, const char *where,
			const struct report_query *q, FILE *out)
{
	size_t n;
	int err;

	fputs(",\"signals\":[", out);
	err = each(s, where, q, out, &n, json_row);
	fputc(']', out);
	return err;
}
