/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * storeq.h - the one reader of stored records: what report, export, cost,
 * rightsize, the HTML page and the signals list share to read the SQLite
 * store (the agent's, or a temporary one loaded from ClickHouse).
 *
 *  - The query (struct report_query: exactly one selector) and the output
 *    formats; the selector as SQL, bound as ?1 by storeq_prepare().
 *  - Column readers.  A stored field of the wrong type reads as "not
 *    known" (the caller's default), never as a wrong number: text is no
 *    number, NaN and infinity are none, a count is never negative.
 *  - Time: one rule for a stored time (storeq_parse_time): what record.c
 *    writes and the schema states, RFC 3339 with a zone ('Z' or an
 *    offset), or epoch seconds as a number (the store's time columns);
 *    nothing before 1970.  A loose form ("2026-11-22", no zone) is what a
 *    person types, and only --since reads it (storeq_parse_since): a
 *    stored value in that form is not one record.c wrote, so it reads as
 *    not known, as junk does.
 *  - uid restriction (a user asking through the agent) as temporary views
 *    every later statement reads through.
 *  - Process rows (storeq_procs_load): the selected processes with every
 *    figure read by the rules above, once for report, the HTML page and
 *    rightsize, so that a figure has one value in every view.
 */
#ifndef JOBTRACE_STOREQ_H
#define JOBTRACE_STOREQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "proc.h"
#include "store.h"

struct jbuf;
struct store;
struct sqlite3;
struct sqlite3_stmt;

enum report_format { REPORT_TEXT, REPORT_JSON, REPORT_HTML, REPORT_NDJSON,
		     REPORT_CSV /* jobtrace cost only */ };

/*
 * The runs of a pipeline that report_query.recent_runs keeps: a user's
 * latest by their first process's start (a run is its job_run, else its
 * job_id), so that what top reads for expected durations does not grow
 * with the pipeline's history.  The run shown is one of them when it is
 * the latest, so 20 earlier runs count.
 */
#define STOREQ_RECENT_RUNS 21

/* Which records (exactly one selector is set), and how to show them. */
struct report_query {
	const char *job;	/* --job ID: with its array's tasks (REPORT_JOB_SEL) */
	const char *run;	/* --run ID */
	const char *pipeline;	/* --pipeline P: processes whose job.pipeline is P */
	double since;		/* --since, epoch seconds (0: unset) */
	int64_t pid;		/* --pid PID (0: unset): that process and descendants */
	bool no_tree;		/* --no-tree: the summaries without the tree */
	const char *by;		/* jobtrace cost --by (NULL: job), costq.h */
	const char *prices_file;	/* cost.prices_file, for rightsize
					 * --format instances (NULL: none) */
	const char *task;	/* jobtrace files --task T (NULL: every task) */
	bool by_node;		/* jobtrace top: a level per node (the fleet) */
	bool recent_runs;	/* with pipeline: its STOREQ_RECENT_RUNS latest
				 * runs of user only (top's expected
				 * durations) */
	const char *user;	/* with recent_runs: job.user (NULL: none);
				 * pipeline names are the users' to choose:
				 * another's runs under the same name would
				 * set the expected durations, or push the
				 * user's own runs out of the latest */
	/*
	 * Only what uid may see: its processes, the `job` records that name
	 * it, and every process, sample and signal of those jobs.  Host
	 * records and other users' records are left out.
	 */
	bool uid_only;
	uint32_t uid;
};

/*
 * A field of the record in column c at path expression p, when it is a
 * string (JSTR_AT) or a number (JNUM_AT); NULL when missing or of another
 * type, so a stored record of the wrong shape reads as "not known".
 */
#define JSTR_AT(c, p) "(CASE json_type(" c ", " p ") WHEN 'text'" \
	" THEN json_extract(" c ", " p ") END)"
#define JNUM_AT(c, p) "(CASE WHEN json_type(" c ", " p ")" \
	" IN ('integer', 'real') THEN json_extract(" c ", " p ") END)"
#define JSTR(path) JSTR_AT("json", "'" path "'")
#define JNUM(path) JNUM_AT("json", "'" path "'")

/*
 * The condition of --job on the job id column c, ?1 the id given: that
 * job, and when it is a Slurm array's or heterogeneous job's id, its
 * tasks "ID_N" and components "ID+N" (the ids that start "ID_" or "ID+":
 * '`' and ',' follow '_' and '+', so these are ranges of an index).
 */
#define REPORT_JOB_SEL_AT(c) "(" c " = ?1 OR (" c " > ?1 || '_' AND " c \
	" < ?1 || '`') OR (" c " > ?1 || '+' AND " c " < ?1 || ','))"
#define REPORT_JOB_SEL REPORT_JOB_SEL_AT("job_id")

/*
 * The newest process with pid ?1 and its descendants (by ppid and
 * parent_id), as the table sel(id, pid) that a statement follows with
 * "SELECT ... FROM process WHERE id IN (SELECT id FROM sel)".
 */
#define STOREQ_PID_SUBTREE \
	"WITH RECURSIVE sel(id, pid) AS (" \
	" SELECT * FROM (SELECT id, pid FROM process" \
	"  WHERE pid = ?1 ORDER BY start_time DESC, id DESC LIMIT 1)" \
	" UNION" \
	" SELECT c.id, c.pid FROM process c JOIN sel" \
	"  ON c.ppid = sel.pid AND c.parent_id = sel.id) "

/* The conditions of STOREQ_LIVE_SAMPLES: a job's (REPORT_JOB_SEL) and
 * --run's, on a process's latest sample l (the store's sample_latest). */
#define STOREQ_LIVE_JOB_SEL REPORT_JOB_SEL_AT("l.job_id")
#define STOREQ_SAMPLE_RUN_SEL "l.run = ?1"
/* A field of a live process's latest sample (s.json). */
#define STOREQ_SJ(path) "json_extract(s.json, '" path "')"
/*
 * FROM the latest sample s (id, json, time) of each live process whose
 * latest sample l matches cond (STOREQ_LIVE_JOB_SEL, STOREQ_SAMPLE_RUN_SEL)
 * and that has no process record yet.  The store keeps each process's
 * latest sample in sample_latest (store_sqlite.c), one row a process
 * found by run or job, so that a frame reads no older sample; a user's
 * uid restriction (storeq_restrict()) applies to that latest sample
 * through `record` (a process whose latest sample is not theirs is not
 * shown).  A record and its samples may
 * carry starts 1 us apart (stores written before record.c ignored clock
 * offset changes under 1 ms), and julianday() keeps milliseconds: the
 * same process is the same pid and host within 2 ms.
 */
#define STOREQ_LIVE_SAMPLES(cond) \
	" FROM (SELECT r.id AS id, r.json AS json, l.time AS time," \
	"  l.prev_id AS prev_id, l.prev_time AS prev_time FROM" \
	"  sample_latest l JOIN record r ON r.id = l.id WHERE " cond ") s" \
	" WHERE NOT EXISTS (SELECT 1 FROM process p" \
	"  WHERE p.pid = " STOREQ_SJ("$.pid") \
	"  AND p.host IS " STOREQ_SJ("$.host") \
	"  AND abs(p.start_time - (julianday(" STOREQ_SJ("$.start_time") ")" \
	"   - 2440587.5) * 86400.0) < 0.002)"

/*
 * One selected process as every view reads it (strings owned; NULL: not
 * known, or not text in the store).  Amounts that are not numbers, not
 * finite or below 0 read as 0 (CPU: user and system each), counts as
 * storeq_col_u64() reads them.
 */
/* Where a process's time went besides the CPU (its record's io.blkio_delay_s
 * and wait object; a record without wait has only blkio). */
struct storeq_wait {
	double blkio_s;		/* io.blkio_delay_s */
	struct jt_waits k;	/* its wait object */
};

struct storeq_proc {
	char *id;		/* its record id */
	char *parent_id;	/* its parent's record id */
	char *host;
	char *exe;
	char *comm;
	char *argv;		/* JSON array text */
	char *tool;		/* tool.name */
	char *category;		/* tool.category */
	char *job;		/* job.id */
	char *run;		/* job.run */
	char *pipeline;		/* job.pipeline */
	char *user;		/* job.user */
	char *task;		/* job.task: the workflow's step */
	char *step;		/* job.step: the scheduler's step */
	char *json;		/* the record (STOREQ_PROC_JSON), else NULL */
	/* sampled: the sample before the latest (its record id, NULL if
	 * none is known, and its time), the latest's RSS and progress
	 * (JSON text, or NULL) */
	char *prev_id;
	double prev_time;
	uint64_t rss;
	char *progress;
	int64_t pid;
	int64_t ppid;
	uint32_t uid;		/* its real uid at exec */
	long parent;		/* the row of parent_id among those loaded; -1 */
	double start;		/* epoch seconds */
	double end;		/* epoch seconds, >= start; running: start,
				 * sampled: the sample's time */
	bool running;		/* no end time */
	bool sampled;		/* no process record: its latest sample */
	int exit_code;
	int exit_signal;
	bool oom;
	double cpu_user;
	double cpu_sys;
	uint64_t peak_rss;
	uint64_t read_bytes;
	uint64_t write_bytes;
	uint64_t cancelled;	/* io.cancelled_write_bytes */
	uint64_t rx;
	uint64_t tx;
	struct storeq_wait w;	/* where its time went */
};

/* What storeq_procs_load() reads besides the process records of q. */
#define STOREQ_PROC_JSON	0x1	/* each record's JSON (.json) */
#define STOREQ_PROC_SAMPLES	0x2	/* --job, --run: the live processes
					 * without a process record, from their
					 * latest sample (running, sampled),
					 * linked to a live parent by ppid */
#define STOREQ_PROC_TASKS	0x4	/* only the processes with a job.task */

/* Parse a --format word; returns -EINVAL if unknown. */
int storeq_format_parse(const char *s, enum report_format *out);
/* The --format word of fmt. */
const char *storeq_format_name(enum report_format fmt);
/*
 * Parse --since: RFC 3339 ("2026-11-22T10:00:00Z", fractional seconds and
 * offsets allowed), "YYYY-MM-DD[ hh:mm[:ss]]" (UTC), epoch seconds
 * ("@1700000000"), or a relative "90s", "15m", "2h", "3d" before now.
 */
int storeq_parse_since(const char *s, double now, double *out);
/*
 * A stored time (the rule above): RFC 3339 text with its zone as epoch
 * seconds in *out; 0, or -EINVAL (junk, a loose form, before 1970).
 */
int storeq_parse_time(const char *s, double *out);
/* Epoch seconds as realtime ns, rounded; not positive (or NaN) is 0,
 * beyond 2554 the largest value. */
uint64_t storeq_time_ns(double t);

/* Number column i: a finite number, else dflt (NULL, text, NaN). */
double storeq_col_num(struct sqlite3_stmt *st, int i, double dflt);
/* An amount (seconds, bytes): a finite number above 0, else 0. */
double storeq_col_amount(struct sqlite3_stmt *st, int i);
/* A count (bytes, processes): negative, junk and text are 0, beyond
 * UINT64_MAX the largest. */
uint64_t storeq_col_u64(struct sqlite3_stmt *st, int i);
/* A time column: a number as epoch seconds, text by storeq_parse_time();
 * dflt when neither. */
double storeq_col_time(struct sqlite3_stmt *st, int i, double dflt);
/* A copy of text column i in *out (NULL for NULL or another type);
 * -ENOMEM. */
int storeq_col_dup(struct sqlite3_stmt *st, int i, char **out);
/* Copy text column i into out[len) when it is text and not empty (out is
 * left as it is otherwise); whether it did. */
bool storeq_col_text(struct sqlite3_stmt *st, int i, char *out, size_t len);

/*
 * The selector of q as an SQL condition on the `process` view (job, run,
 * pipeline or since: ?1; NULL for --pid), and its words for messages
 * ("run R1", "pipeline rnaseq").
 */
const char *storeq_process_where(const struct report_query *q);
void storeq_describe(const struct report_query *q, char *out, size_t len);
/*
 * Prepare sql on st (or on the handle db) with q's selector bound as ?1
 * when sql has a parameter, and q->task as ?2 when it is set and sql has
 * two; -EIO, logged with where.
 */
int storeq_prepare(struct store *st, const char *where, const char *sql,
		   const struct report_query *q, struct sqlite3_stmt **out);
int storeq_prepare_db(struct sqlite3 *db, const char *where, const char *sql,
		      const struct report_query *q, struct sqlite3_stmt **out);
/*
 * The same with a statement st keeps (store_stmt(): what a view asks each
 * frame is compiled once), given back with store_stmt_done(st, *out).
 */
int storeq_stmt(struct store *st, const char *where, const char *sql,
		const struct report_query *q, struct sqlite3_stmt **out);
/*
 * Run sql (as storeq_stmt() gives it) and call row(stmt, arg) on each row
 * it returns; the first error of row() or of SQLite (-EIO, logged with
 * where) ends it.
 */
int storeq_each(struct store *st, const char *where, const char *sql,
		const struct report_query *q,
		int (*row)(struct sqlite3_stmt *stmt, void *arg), void *arg);
/* The end of a statement's rows (rc the last sqlite3_step()): 0 when it
 * ended cleanly, else -EIO, logged with where. */
int storeq_step_done(struct sqlite3 *db, const char *where, int rc);
/* Write s as one CSV field (RFC 4180: quoted when it needs to be). */
void storeq_csv_field(FILE *out, const char *s);
/* After printing to out: err, or -EIO (logged as "CMD: write failed")
 * when out failed and err did not. */
int storeq_written(FILE *out, const char *cmd, int err);
/*
 * When q->uid_only, make every later statement on st see only what q->uid
 * may (temporary views over `process` and `record`).  Returns 0 or -EIO.
 */
int storeq_restrict(struct store *st, const char *where,
		    const struct report_query *q);
/*
 * For a user (q->uid_only) whose --job ID shows them nothing, their own job
 * of that name, "user:UID:ID" (`jobtrace run` as that user, jobtie.h),
 * when it has records: q->job then points to it in buf (else it stays, and
 * messages name what they asked for).  Returns 0 or -EIO.
 */
int storeq_user_job(struct store *st, const char *where,
		    struct report_query *q, char *buf, size_t len);
/*
 * The processes q selects from st (where names it in messages; flags
 * above) into *out (*n of them, storeq_procs_free()), ordered by start
 * time, host, pid and record id, each linked to its parent's row by
 * parent_id (a self link kept: the caller cuts hostile links), a
 * sampled row's child by ppid.  A --pid
 * selects that process and its descendants (STOREQ_PID_SUBTREE).
 * Returns 0, -EIO (logged) or -ENOMEM; *out holds what was read even
 * then.
 */
int storeq_procs_load(struct store *st, const char *where,
		      const struct report_query *q, unsigned flags,
		      struct storeq_proc **out, size_t *n);
/*
 * How reports order processes: by start time, then host, pid and record
 * id (NULL sorts as ""); < 0, 0 or > 0 as strcmp().
 */
int storeq_proc_order(double start_a, const char *host_a, int64_t pid_a,
		      const char *id_a, double start_b, const char *host_b,
		      int64_t pid_b, const char *id_b);
/* Free n rows of storeq_procs_load() and the array; accepts NULL. */
void storeq_procs_free(struct storeq_proc *v, size_t n);
/*
 * Write the member key (report, cost: "query"; rightsize: "selection")
 * of an open JSON object: an object with q's selector, "job": ID, "run",
 * "pipeline", "pid" or "since" (RFC 3339), "task" when q->task is set
 * (files --task), and "by": by unless by is NULL (cost's grouping); how
 * report, cost, rightsize and files name their query.
 */
void storeq_json_query(struct jbuf *b, const char *key,
		       const struct report_query *q, const char *by);
/* Print the JSON answer b with a newline on out, then free b: 0, or
 * -ENOMEM (nothing printed) when b ran out of memory. */
int storeq_json_print(struct jbuf *b, FILE *out);
/* A process's tool as reports name it: the rules' tool name, else the
 * base name of exe, else comm, else "?". */
const char *storeq_tool_name(const char *tool, const char *exe,
			     const char *comm);

#endif
