/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * report.h - `jobtrace report` and `jobtrace export` over the SQLite store
 * (the agent's, or a temporary one loaded from ClickHouse).
 */
#ifndef JOBTRACE_REPORT_H
#define JOBTRACE_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct jbuf;
struct store;
struct sqlite3_stmt;

enum report_format { REPORT_TEXT, REPORT_JSON, REPORT_HTML, REPORT_NDJSON,
		     REPORT_CSV /* jobtrace cost only */ };

/* Which records (exactly one selector is set), and how to show them. */
struct report_query {
	const char *job;	/* --job ID: with its array's tasks (REPORT_JOB_SEL) */
	const char *run;	/* --run ID */
	const char *pipeline;	/* --pipeline P: processes whose job.pipeline is P */
	double since;		/* --since, epoch seconds (0: unset) */
	int64_t pid;		/* --pid PID (0: unset): that process and descendants */
	bool no_tree;		/* --no-tree: the summaries without the tree */
	const char *by;		/* jobtrace cost --by (NULL: job), costq.h */
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

/* Parse a --format word; returns -EINVAL if unknown. */
int report_format_parse(const char *s, enum report_format *out);
/* The --format word of fmt. */
const char *report_format_name(enum report_format fmt);
/*
 * Parse --since: RFC 3339 ("2026-11-22T10:00:00Z", fractional seconds and
 * offsets allowed), "YYYY-MM-DD[ hh:mm[:ss]]" (UTC), epoch seconds
 * ("@1700000000"), or a relative "90s", "15m", "2h", "3d" before now.
 */
int report_parse_since(const char *s, double now, double *out);
/*
 * Print the report of what q selects from the store at db_path: a title
 * with the counts; for --job, the job's header from its `job` records
 * (user, name, state, exit code, elapsed, run, pipeline, cost center) and
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
int report_run(const char *db_path, const struct report_query *q,
	       enum report_format fmt, FILE *out);
/* As report_run(), over an open store; where names it in messages. */
int report_run_store(struct store *s, const char *where,
		     const struct report_query *q, enum report_format fmt,
		     FILE *out);
/*
 * The selector of q as an SQL condition on the `process` view (job, run,
 * pipeline or since: ?1; NULL for --pid), its words for messages ("run
 * R1", "pipeline rnaseq"), and a statement with it bound as ?1 (-EIO,
 * logged with where).
 */
const char *report_process_where(const struct report_query *q);
void report_query_describe(const struct report_query *q, char *out,
			   size_t len);
int report_prepare(struct store *st, const char *where, const char *sql,
		   const struct report_query *q, struct sqlite3_stmt **out);
/* A copy of text column i of st in *out (NULL for NULL); -ENOMEM. */
int report_col_dup(struct sqlite3_stmt *st, int i, char **out);
/*
 * When q->uid_only, make every later statement on st see only what q->uid
 * may (temporary views over `process` and `record`).  Returns 0 or -EIO.
 */
int report_restrict(struct store *st, const char *where,
		    const struct report_query *q);
/*
 * For a user (q->uid_only) whose --job ID shows them nothing, their own job
 * of that name, "user:UID:ID" (`jobtrace run` as that user, jobtie.h),
 * when it has records: q->job then points to it in buf (else it stays, and
 * messages name what they asked for).  Returns 0 or -EIO.
 */
int report_user_job(struct store *st, const char *where,
		    struct report_query *q, char *buf, size_t len);
/* Write q's selector as one member of an open JSON object: "job": ID,
 * "run", "pipeline", "pid" or "since" (RFC 3339); report, cost and
 * rightsize name their query with it. */
void report_json_selector(struct jbuf *b, const struct report_query *q);
/* A process's tool as reports name it: the rules' tool name, else the
 * base name of exe, else comm, else "?". */
const char *report_tool_name(const char *tool, const char *exe,
			     const char *comm);
/* Print the selected records as schema v1 NDJSON, one per line. */
int report_export(const char *db_path, const struct report_query *q,
		  FILE *out);
/* As report_export(), over an open store; where names it in messages. */
int report_export_store(struct store *s, const char *where,
			const struct report_query *q, FILE *out);

#endif
