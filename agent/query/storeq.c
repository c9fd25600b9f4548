// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * storeq.c - the one reader of stored records (storeq.h): the query's
 * selector as SQL, its statements, column readers and the stored time
 * rule, and the uid restriction every query of a user goes through.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>	/* isfinite only: no libm needed */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "json.h"
#include "log.h"
#include "store.h"
#include "storeq.h"
#include "util.h"

static const char *const format_names[] = {
	[REPORT_TEXT] = "text", [REPORT_JSON] = "json",
	[REPORT_HTML] = "html", [REPORT_NDJSON] = "ndjson",
	[REPORT_CSV] = "csv",
};

/* The word of a format. */
const char *storeq_format_name(enum report_format fmt)
{
	return (unsigned)fmt < sizeof(format_names) / sizeof(format_names[0]) ?
	       format_names[fmt] : "text";
}

/* Parse a --format word. */
int storeq_format_parse(const char *s, enum report_format *out)
{
	const char *const *names = format_names;

	if (!s)
		return -EINVAL;
	for (unsigned i = 0; i < sizeof(format_names) / sizeof(names[0]); i++) {
		if (strcmp(s, names[i]) == 0) {
			*out = (enum report_format)i;
			return 0;
		}
	}
	return -EINVAL;
}

/* Parse an absolute date/time (json.h's loose RFC 3339); UTC unless an
 * offset is given; nothing before 1970. */
static int parse_datetime(const char *s, double *out)
{
	int64_t secs;
	uint32_t ns;

	if (json_parse_time(s, strlen(s), JSON_TIME_LOOSE, &secs, &ns) ||
	    secs < 0)
		return -EINVAL;
	*out = (double)secs + ns / 1e9;
	return 0;
}

/* Parse --since: absolute, @epoch or relative to now. */
int storeq_parse_since(const char *s, double now, double *out)
{
	static const struct { char unit; double secs; } units[] = {
		{ 's', 1 }, { 'm', 60 }, { 'h', 3600 }, { 'd', 86400 },
	};
	char *end;
	double v;

	if (!s || !*s)
		return -EINVAL;
	if (s[0] == '@') {
		if (!isdigit((unsigned char)s[1]))
			return -EINVAL;
		errno = 0;
		v = strtod(s + 1, &end);
		if (errno || *end || !isfinite(v))
			return -EINVAL;
		*out = v;
		return 0;
	}
	if (strlen(s) >= 10 && s[4] == '-')
		return parse_datetime(s, out);

	/* relative: digits and one unit letter */
	if (!isdigit((unsigned char)s[0]))
		return -EINVAL;
	errno = 0;
	unsigned long long n = strtoull(s, &end, 10);

	if (errno || n > 1000000000ULL || !end[0] || end[1])
		return -EINVAL;
	for (unsigned i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (end[0] == units[i].unit) {
			*out = now - (double)n * units[i].secs;
			return 0;
		}
	}
	return -EINVAL;
}

/* A stored time: strict RFC 3339 (see storeq.h). */
int storeq_parse_time(const char *s, double *out)
{
	int64_t secs;
	uint32_t ns;

	if (!s || json_parse_time(s, strlen(s), 0, &secs, &ns) || secs < 0)
		return -EINVAL;
	*out = (double)secs + ns / 1e9;
	return 0;
}

/* Epoch seconds to realtime ns, rounded; negative (or NaN) becomes 0,
 * beyond 2554 (a record's time can be anything) the largest value. */
uint64_t storeq_time_ns(double t)
{
	if (!(t > 0))
		return 0;
	if (t * 1e9 + 0.5 >= 18446744073709551616.0)
		return UINT64_MAX;
	return (uint64_t)(t * 1e9 + 0.5);
}

/* A number column; dflt when NULL, not a number or not finite. */
double storeq_col_num(sqlite3_stmt *st, int i, double dflt)
{
	int t = sqlite3_column_type(st, i);
	double v;

	if (t != SQLITE_INTEGER && t != SQLITE_FLOAT)
		return dflt;
	v = sqlite3_column_double(st, i);
	return isfinite(v) ? v : dflt;
}

/* A numeric column as a finite amount above 0; anything else is 0. */
double storeq_col_amount(sqlite3_stmt *st, int i)
{
	double v = storeq_col_num(st, i, 0);

	return v > 0 ? v : 0;
}

/* A count column: negative, fractional junk and text become 0. */
uint64_t storeq_col_u64(sqlite3_stmt *st, int i)
{
	double v;

	if (sqlite3_column_type(st, i) == SQLITE_INTEGER) {
		int64_t n = sqlite3_column_int64(st, i);

		return n > 0 ? (uint64_t)n : 0;
	}
	v = storeq_col_amount(st, i);
	return v < 1.8e19 ? (uint64_t)v : UINT64_MAX;
}

/* A time column: epoch seconds, or RFC 3339 text; dflt when neither. */
double storeq_col_time(sqlite3_stmt *st, int i, double dflt)
{
	double v;

	if (sqlite3_column_type(st, i) != SQLITE_TEXT)
		return storeq_col_num(st, i, dflt);
	if (storeq_parse_time((const char *)sqlite3_column_text(st, i), &v))
		return dflt;
	return v;
}

/* strdup of a text column; NULL and other types stay NULL (storeq.h). */
int storeq_col_dup(sqlite3_stmt *st, int i, char **out)
{
	const unsigned char *t = sqlite3_column_text(st, i);

	*out = NULL;
	if (!t || sqlite3_column_type(st, i) != SQLITE_TEXT)
		return 0;
	*out = strdup((const char *)t);
	return *out ? 0 : -ENOMEM;
}

/* Copy a text column into a fixed field unless it is NULL or empty. */
bool storeq_col_text(sqlite3_stmt *st, int i, char *out, size_t len)
{
	const unsigned char *t = sqlite3_column_text(st, i);

	if (!t || !*t || sqlite3_column_type(st, i) != SQLITE_TEXT)
		return false;
	util_strlcpy(out, (const char *)t, len);
	return true;
}

/*
 * The one place that restricts what a query sees to a uid (a user asking
 * through the agent): temporary views named `process` and `record`, which
 * SQLite finds before the store's own (temp comes before main), so every
 * statement of report and export reads through them unchanged.
 *
 * A user sees their own processes and samples, the `job` records with
 * their uid, and through a job the records of others in it only when the
 * job is theirs as a scheduler or root stated it: every `job` record of
 * its id that names a uid names theirs (a record without one, a start
 * before the uid was known, goes with its job).  An id whose records name
 * several uids (two jobs that used one id, or a user who registered a
 * scheduler's id before jobs of users got their own namespace) shows each
 * its own records only.  A user's own job ("user:UID:ID", jobtie.h) shows
 * them their own processes and its signals, never another uid's.
 */
#define RESTRICT_JOBS(u) \
	"INSERT INTO visible_job SELECT job_id FROM main.record" \
	" WHERE type = 'job' AND job_id IS NOT NULL" \
	" AND substr(job_id, 1, 5) != 'user:'" \
	" GROUP BY job_id" \
	" HAVING total(json_extract(json, '$.uid') = " u ") > 0" \
	" AND total(json_extract(json, '$.uid') != " u ") = 0;" \
	"INSERT OR IGNORE INTO own_job SELECT job_id FROM main.record" \
	" WHERE type = 'job' AND substr(job_id, 1, length('user:" u ":'))" \
	" = 'user:" u ":';"

/*
 * The job records a restriction was found from: their count, largest and
 * summed rowid (index record_job), kept in temp.restricted.  Records are
 * only added (a new rowid) or pruned, so any change to them changes this.
 */
#define JOBS_SEEN "SELECT count(*) AS n, max(rowid) AS top, total(rowid)" \
	" AS total FROM main.record WHERE type = 'job'"

/*
 * 2 if this connection's views are restricted to uid already (the uid
 * kept beside them in temp.restricted) and the job records are those they
 * were found from, 1 if restricted to uid but they changed, else 0.
 */
static int restricted_to(struct store *s, unsigned uid)
{
	sqlite3_stmt *st = NULL;
	int yes = 0;

	/* no such table: a connection not restricted yet.  Kept: a view
	 * asks it every frame (7 % of a frame was preparing it). */
	if (store_stmt(s, "SELECT r.uid, r.n IS j.n AND r.top IS j.top AND"
		       " r.total IS j.total FROM temp.restricted AS r, ("
		       JOBS_SEEN ") AS j", &st) != SQLITE_OK)
		return 0;
	if (sqlite3_step(st) == SQLITE_ROW &&
	    sqlite3_column_int64(st, 0) == (sqlite3_int64)uid)
		yes = 1 + sqlite3_column_int(st, 1);
	store_stmt_done(s, st);
	return yes;
}

static int restrict_uid(struct store *s, const char *path,
			const struct report_query *q)
{
	static const char fmt[] =
		"DROP VIEW IF EXISTS temp.process;"
		"DROP VIEW IF EXISTS temp.record;"
		"DROP TABLE IF EXISTS temp.visible_job;"
		"DROP TABLE IF EXISTS temp.own_job;"
		"DROP TABLE IF EXISTS temp.restricted;"
		"CREATE TEMP TABLE restricted(uid INTEGER, n, top, total);"
		"INSERT INTO restricted SELECT %1$u, * FROM (" JOBS_SEEN ");"
		"CREATE TEMP TABLE visible_job(job_id TEXT PRIMARY KEY);"
		"CREATE TEMP TABLE own_job(job_id TEXT PRIMARY KEY);"
		RESTRICT_JOBS("%1$u")
		"CREATE TEMP VIEW process AS SELECT * FROM main.process"
		" WHERE uid = %1$u OR job_id IN (SELECT job_id FROM visible_job);"
		"CREATE TEMP VIEW record AS SELECT * FROM main.record"
		" WHERE CASE type"
		" WHEN 'job' THEN COALESCE(json_extract(json, '$.uid') = %1$u,"
		"  job_id IN (SELECT job_id FROM visible_job))"
		" WHEN 'sample' THEN json_extract(json, '$.uid') = %1$u"
		"  OR job_id IN (SELECT job_id FROM visible_job)"
		" WHEN 'signal' THEN job_id IN (SELECT job_id FROM visible_job)"
		"  OR job_id IN (SELECT job_id FROM own_job)"
		" ELSE 0 END;";
	/*
	 * Asked again on a connection restricted to the same uid (a view's
	 * frames, one query child): the jobs it may see are found again when
	 * a job record came or went since (11 % of a view's frame was finding
	 * them, every frame), the views stay.  Changing no schema, it keeps
	 * the statements prepared on the connection valid (a schema change
	 * makes SQLite prepare them again).  The job records' mark is taken
	 * before the jobs are found: one that comes between the two is in
	 * the jobs or makes the next call find them again, never neither.
	 */
	static const char again_fmt[] =
		"DELETE FROM temp.restricted;"
		"INSERT INTO temp.restricted SELECT %1$u, * FROM (" JOBS_SEEN ");"
		"DELETE FROM temp.visible_job;"
		"DELETE FROM temp.own_job;"
		RESTRICT_JOBS("%1$u");
	sqlite3 *db = store_handle(s);
	char sql[sizeof(fmt) + 128], *msg = NULL;
	int rc, done;

	if (!q->uid_only)
		return 0;
	done = restricted_to(s, (unsigned)q->uid);
	if (done == 2)
		return 0;
	snprintf(sql, sizeof(sql), done ? again_fmt : fmt, (unsigned)q->uid);
	rc = sqlite3_exec(db, sql, NULL, NULL, &msg);
	if (rc != SQLITE_OK) {
		log_error("database %s: restricting to uid %u: %s", path,
			  (unsigned)q->uid, msg ? msg : sqlite3_errstr(rc));
		sqlite3_free(msg);
		/* half done: the next call restricts from the start */
		sqlite3_exec(db, "DROP TABLE IF EXISTS temp.restricted", NULL,
			     NULL, NULL);
		return -EIO;
	}
	return 0;
}

int storeq_restrict(struct store *st, const char *where,
		    const struct report_query *q)
{
	return restrict_uid(st, where, q);
}

/* The selector as a condition on the process view (see storeq.h). */
const char *storeq_process_where(const struct report_query *q)
{
	if (q->job && *q->job)
		return REPORT_JOB_SEL;
	if (q->run && *q->run)
		return "job_run = ?1";
	if (q->pipeline && *q->pipeline && q->recent_runs)
		return "job_pipeline = ?1 AND job_user IS ?3 AND"
		       " coalesce(job_run, job_id) IN"
		       " (SELECT coalesce(job_run, job_id) AS r FROM process"
		       " WHERE job_pipeline = ?1 AND job_user IS ?3 GROUP BY r"
		       " ORDER BY min(start_time) DESC, r DESC LIMIT "
		       UTIL_STR(STOREQ_RECENT_RUNS) ")";
	if (q->pipeline && *q->pipeline)
		return "job_pipeline = ?1";
	if (q->pid)
		return NULL;
	return "since_time >= ?1";
}

/* Describe the selector for messages and headers ("job 42"). */
void storeq_describe(const struct report_query *q, char *out,
			   size_t len)
{
	char t[40];

	if (q->job && *q->job) {
		snprintf(out, len, "job %s", q->job);
	} else if (q->run && *q->run) {
		snprintf(out, len, "run %s", q->run);
	} else if (q->pipeline && *q->pipeline) {
		snprintf(out, len, "pipeline %s", q->pipeline);
	} else if (q->pid) {
		snprintf(out, len, "pid %lld", (long long)q->pid);
	} else {
		json_format_time(storeq_time_ns(q->since), t, sizeof(t));
		snprintf(out, len, "since %s", t);
	}
}

/* Bind the query's selector as ?1, its task as ?2 and the user of its
 * recent runs as ?3 on st: SQLite's code. */
static int bind_query(sqlite3_stmt *st, const struct report_query *q)
{
	int rc;

	if (sqlite3_bind_parameter_count(st) < 1)
		rc = SQLITE_OK;
	else if (q->job && *q->job)
		rc = sqlite3_bind_text(st, 1, q->job, -1, SQLITE_STATIC);
	else if (q->run && *q->run)
		rc = sqlite3_bind_text(st, 1, q->run, -1, SQLITE_STATIC);
	else if (q->pipeline && *q->pipeline)
		rc = sqlite3_bind_text(st, 1, q->pipeline, -1,
				       SQLITE_STATIC);
	else if (q->pid)
		rc = sqlite3_bind_int64(st, 1, q->pid);
	else
		rc = sqlite3_bind_double(st, 1, q->since);
	if (rc == SQLITE_OK && q && q->task &&
	    sqlite3_bind_parameter_count(st) >= 2)
		rc = sqlite3_bind_text(st, 2, q->task, -1, SQLITE_STATIC);
	if (rc == SQLITE_OK && q && q->recent_runs &&
	    sqlite3_bind_parameter_count(st) >= 3)
		rc = sqlite3_bind_text(st, 3, q->user, -1, SQLITE_STATIC);
	return rc;
}

/* Prepare a statement and bind the query's selector as ?1 (storeq.h). */
int storeq_prepare_db(sqlite3 *db, const char *where, const char *sql,
		      const struct report_query *q, sqlite3_stmt **out)
{
	int rc;

	rc = sqlite3_prepare_v2(db, sql, -1, out, NULL);
	if (rc == SQLITE_OK)
		rc = bind_query(*out, q);
	if (rc != SQLITE_OK) {
		log_error("database %s: %s", where, sqlite3_errmsg(db));
		sqlite3_finalize(*out);
		*out = NULL;
		return -EIO;
	}
	return 0;
}

/* The end of a statement's rows: 0, or -EIO (logged). */
int storeq_step_done(sqlite3 *db, const char *where, int rc)
{
	if (rc == SQLITE_DONE)
		return 0;
	log_error("database %s: %s", where, sqlite3_errmsg(db));
	return -EIO;
}

/* After printing (see storeq.h). */
int storeq_written(FILE *out, const char *cmd, int err)
{
	if (!err && ferror(out)) {
		log_error("%s: write failed", cmd);
		return -EIO;
	}
	return err;
}

/* A user's --job ID that shows them nothing: their own job of that name. */
int storeq_user_job(struct store *st, const char *where,
		    struct report_query *q, char *buf, size_t len)
{
	sqlite3_stmt *stmt = NULL;
	int err, rc;

	if (!q->uid_only || !q->job || !*q->job ||
	    !strncmp(q->job, "user:", 5) ||
	    (size_t)snprintf(buf, len, "user:%u:%s", (unsigned)q->uid,
			     q->job) >= len)
		return 0;
	err = storeq_restrict(st, where, q);
	if (err)
		return err;
	/* ?1 the id as given, ?2 their own */
	err = storeq_prepare(st, where, "SELECT NOT (EXISTS(SELECT 1 FROM"
			     " process WHERE job_id = ?1) OR EXISTS(SELECT 1"
			     " FROM record WHERE job_id = ?1)) AND"
			     " EXISTS(SELECT 1 FROM record WHERE job_id = ?2)",
			     q, &stmt);
	if (err)
		return err;
	if (sqlite3_bind_text(stmt, 2, buf, -1, SQLITE_STATIC) != SQLITE_OK ||
	    (rc = sqlite3_step(stmt)) != SQLITE_ROW) {
		log_error("database %s: %s", where,
			  sqlite3_errmsg(store_handle(st)));
		err = -EIO;
	} else if (sqlite3_column_int(stmt, 0)) {
		q->job = buf;
	}
	sqlite3_finalize(stmt);
	return err;
}

/* A kept statement with the query bound (see storeq.h). */
int storeq_stmt(struct store *st, const char *where, const char *sql,
		const struct report_query *q, sqlite3_stmt **out)
{
	int rc = store_stmt(st, sql, out);

	if (rc == SQLITE_OK)
		rc = bind_query(*out, q);
	if (rc != SQLITE_OK) {
		log_error("database %s: %s", where,
			  sqlite3_errmsg(store_handle(st)));
		store_stmt_done(st, *out);
		*out = NULL;
		return -EIO;
	}
	return 0;
}

/* Call row() on each row of sql (see storeq.h). */
int storeq_each(struct store *st, const char *where, const char *sql,
		const struct report_query *q,
		int (*row)(sqlite3_stmt *stmt, void *arg), void *arg)
{
	sqlite3_stmt *stmt = NULL;
	int rc, err;

	err = storeq_stmt(st, where, sql, q, &stmt);
	if (err)
		return err;
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		err = row(stmt, arg);
		if (err)
			goto cleanup;
	}
	err = storeq_step_done(store_handle(st), where, rc);

cleanup:
	store_stmt_done(st, stmt);
	return err;
}

/* Prepare sql on st with the selector bound as ?1 (see storeq.h). */
int storeq_prepare(struct store *st, const char *where, const char *sql,
		   const struct report_query *q, struct sqlite3_stmt **out)
{
	return storeq_prepare_db(store_handle(st), where, sql, q, out);
}

/* Write s as a CSV field (RFC 4180: quoted when it needs to be). */
void storeq_csv_field(FILE *out, const char *s)
{
	if (!s[strcspn(s, ",\"\r\n")]) {
		fputs(s, out);
		return;
	}
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

/* A tool's name: rule's tool name, else basename of exe, else comm. */
const char *storeq_tool_name(const char *tool, const char *exe,
			     const char *comm)
{
	const char *slash;

	if (tool && *tool)
		return tool;
	if (exe && *exe) {
		slash = strrchr(exe, '/');
		return slash && slash[1] ? slash + 1 : exe;
	}
	return comm && *comm ? comm : "?";
}

/* Write the query's object as member key (see storeq.h). */
void storeq_json_query(struct jbuf *b, const char *key,
		       const struct report_query *q, const char *by)
{
	json_key(b, key);
	json_obj_open(b);
	if (q->job && *q->job) {
		json_kv_str(b, "job", q->job);
	} else if (q->run && *q->run) {
		json_kv_str(b, "run", q->run);
	} else if (q->pipeline && *q->pipeline) {
		json_kv_str(b, "pipeline", q->pipeline);
	} else if (q->pid) {
		json_kv_i64(b, "pid", q->pid);
	} else {
		json_key(b, "since");
		json_time(b, storeq_time_ns(q->since));
	}
	if (q->task)
		json_kv_str(b, "task", q->task);
	if (by)
		json_kv_str(b, "by", by);
	json_obj_close(b);
}

/* Print a finished JSON answer and free it (see storeq.h). */
int storeq_json_print(struct jbuf *b, FILE *out)
{
	int err = b->oom ? -ENOMEM : 0;

	if (!err)
		fprintf(out, "%s\n", jbuf_str(b));
	jbuf_free(b);
	return err;
}

/* A process row, the record's JSON (%s: made again from the columns only
 * when asked for) in the middle. */
#define PROC_COLUMNS \
	"id, host, pid, ppid, parent_id, start_time," \
	" end_time, exe, comm, argv, tool_name, exit_code, exit_signal," \
	" oom_killed, cpu_user_s, cpu_sys_s, peak_rss_bytes, read_bytes," \
	" write_bytes, rx_bytes, tx_bytes, %s, job_task, job_step," \
	" cancelled_write_bytes, job_id, tool_category, job_run, job_pipeline," \
	" job_user, NULL, blkio_delay_s, wait_run_queue_s, wait_reclaim_s," \
	" wait_thrashing_s, wait_swapin_s, wait_compact_s, wait_nvcsw," \
	" wait_nivcsw, wait_net_s, wait_children_s, NULL, NULL, NULL, NULL," \
	" uid"

#define SJ(path) STOREQ_SJ(path)

/*
 * The latest sample of each live process of the job or run ?1 (%s: the
 * condition on `record`) that has no process
 * record yet, in the columns of PROC_COLUMNS: start_time as its text, the
 * sample's time in the column of the record's since_time, and last the
 * sample before it (id, time), the latest's RSS and progress, and its uid.
 */
#define SAMPLE_ROWS \
	"SELECT s.id, " SJ("$.host") ", " SJ("$.pid") ", " SJ("$.ppid") ", " \
	SJ("$.parent_id") ", " SJ("$.start_time") ", NULL, " SJ("$.exe") \
	", NULLIF(" SJ("$.comm") ", ''), " SJ("$.argv") ", " \
	SJ("$.tool.name") ", NULL, NULL, 0, " SJ("$.cpu.user_s") ", " \
	SJ("$.cpu.sys_s") ", " SJ("$.mem.peak_rss_bytes") ", " \
	SJ("$.io.read_bytes") ", " SJ("$.io.write_bytes") ", " \
	SJ("$.net.rx_bytes") ", " SJ("$.net.tx_bytes") ", s.json, " \
	SJ("$.job.task") ", " SJ("$.job.step") ", " \
	SJ("$.io.cancelled_write_bytes") ", " SJ("$.job.id") ", " \
	SJ("$.tool.category") ", " SJ("$.job.run") ", " \
	SJ("$.job.pipeline") ", " SJ("$.job.user") ", COALESCE(s.time, 0), " \
	SJ("$.io.blkio_delay_s") ", " SJ("$.wait.run_queue_s") ", " \
	SJ("$.wait.reclaim_s") ", " SJ("$.wait.thrashing_s") ", " \
	SJ("$.wait.swapin_s") ", " SJ("$.wait.compact_s") ", " \
	SJ("$.wait.nvcsw") ", " SJ("$.wait.nivcsw") ", " \
	SJ("$.wait.net_s") ", " SJ("$.wait.children_s") ", s.prev_id," \
	" s.prev_time, " SJ("$.mem.rss_bytes") ", json_extract(s.json," \
	" '$.progress'), " SJ("$.uid") STOREQ_LIVE_SAMPLES("%s")

/* The rows being loaded. */
struct procs {
	struct storeq_proc *v;
	size_t n, cap;
};

/* Free the rows' strings and the array. */
void storeq_procs_free(struct storeq_proc *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++) {
		struct storeq_proc *w = &v[i];

		free(w->id);
		free(w->parent_id);
		free(w->host);
		free(w->exe);
		free(w->comm);
		free(w->argv);
		free(w->tool);
		free(w->category);
		free(w->job);
		free(w->run);
		free(w->pipeline);
		free(w->user);
		free(w->task);
		free(w->step);
		free(w->json);
		free(w->prev_id);
		free(w->progress);
	}
	free(v);
}

/*
 * Append the current result row of st (PROC_COLUMNS or SAMPLE_ROWS: a
 * sample's time in the last column makes it a sampled, running row).
 */
static int proc_add(struct procs *r, sqlite3_stmt *st)
{
	struct storeq_proc *w;
	int err = 0;

	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 64;
		struct storeq_proc *v = realloc(r->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		r->v = v;
		r->cap = cap;
	}
	w = &r->v[r->n++];
	memset(w, 0, sizeof(*w));
	err |= storeq_col_dup(st, 0, &w->id);
	err |= storeq_col_dup(st, 1, &w->host);
	w->pid = sqlite3_column_int64(st, 2);
	w->ppid = sqlite3_column_int64(st, 3);
	err |= storeq_col_dup(st, 4, &w->parent_id);
	w->start = storeq_col_time(st, 5, 0);
	w->running = sqlite3_column_type(st, 6) == SQLITE_NULL;
	w->end = w->running ? w->start : storeq_col_time(st, 6, 0);
	err |= storeq_col_dup(st, 7, &w->exe);
	err |= storeq_col_dup(st, 8, &w->comm);
	err |= storeq_col_dup(st, 9, &w->argv);
	err |= storeq_col_dup(st, 10, &w->tool);
	w->exit_code = sqlite3_column_int(st, 11);
	w->exit_signal = sqlite3_column_int(st, 12);
	w->oom = sqlite3_column_int(st, 13) != 0;
	w->cpu_user = storeq_col_amount(st, 14);
	w->cpu_sys = storeq_col_amount(st, 15);
	w->peak_rss = storeq_col_u64(st, 16);
	w->read_bytes = storeq_col_u64(st, 17);
	w->write_bytes = storeq_col_u64(st, 18);
	w->rx = storeq_col_u64(st, 19);
	w->tx = storeq_col_u64(st, 20);
	err |= storeq_col_dup(st, 21, &w->json);
	err |= storeq_col_dup(st, 22, &w->task);
	err |= storeq_col_dup(st, 23, &w->step);
	w->cancelled = storeq_col_u64(st, 24);
	err |= storeq_col_dup(st, 25, &w->job);
	err |= storeq_col_dup(st, 26, &w->category);
	err |= storeq_col_dup(st, 27, &w->run);
	err |= storeq_col_dup(st, 28, &w->pipeline);
	err |= storeq_col_dup(st, 29, &w->user);
	if (sqlite3_column_type(st, 30) != SQLITE_NULL) {
		w->sampled = true;
		w->end = storeq_col_amount(st, 30);
	}
	w->w.blkio_s = storeq_col_amount(st, 31);
	w->w.k.run_queue_s = storeq_col_amount(st, 32);
	w->w.k.reclaim_s = storeq_col_amount(st, 33);
	w->w.k.thrashing_s = storeq_col_amount(st, 34);
	w->w.k.swapin_s = storeq_col_amount(st, 35);
	w->w.k.compact_s = storeq_col_amount(st, 36);
	w->w.k.nvcsw = storeq_col_u64(st, 37);
	w->w.k.nivcsw = storeq_col_u64(st, 38);
	w->w.k.net_s = storeq_col_amount(st, 39);
	w->w.k.children_s = storeq_col_amount(st, 40);
	err |= storeq_col_dup(st, 41, &w->prev_id);
	w->prev_time = storeq_col_amount(st, 42);
	w->rss = storeq_col_u64(st, 43);
	err |= storeq_col_dup(st, 44, &w->progress);
	w->uid = (uint32_t)storeq_col_u64(st, 45);
	if (w->end < w->start)
		w->end = w->start;
	w->parent = -1;
	return err ? -ENOMEM : 0;
}

/* proc_add() as storeq_each() calls it. */
static int add_proc(sqlite3_stmt *st, void *r)
{
	return proc_add(r, st);
}

/* Order processes as reports list them (see storeq.h). */
int storeq_proc_order(double start_a, const char *host_a, int64_t pid_a,
		      const char *id_a, double start_b, const char *host_b,
		      int64_t pid_b, const char *id_b)
{
	int c;

	if (start_a != start_b)
		return start_a < start_b ? -1 : 1;
	c = strcmp(host_a ? host_a : "", host_b ? host_b : "");
	if (c)
		return c;
	if (pid_a != pid_b)
		return pid_a < pid_b ? -1 : 1;
	return strcmp(id_a ? id_a : "", id_b ? id_b : "");
}

/* Order rows as the SQL does. */
static int cmp_start(const void *a, const void *b)
{
	const struct storeq_proc *x = a, *y = b;

	return storeq_proc_order(x->start, x->host, x->pid, x->id,
				 y->start, y->host, y->pid, y->id);
}

/* Order row indices by record id for the parent lookup. */
static int cmp_id(const void *a, const void *b, void *arg)
{
	const struct storeq_proc *v = arg;
	const char *x = v[*(const long *)a].id;
	const char *y = v[*(const long *)b].id;

	return strcmp(x ? x : "", y ? y : "");
}

/* The row with record id id in the index sorted by id, or -1. */
static long find_id(const struct procs *r, const long *idx, const char *id)
{
	size_t lo = 0, hi = r->n;

	while (id && lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const char *m = r->v[idx[mid]].id;
		int c = strcmp(m ? m : "", id);

		if (c == 0)
			return idx[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/*
 * The sampled row that is row i's parent.  A live process has no process
 * record, so its children's parent_id names no row: its parent is the live
 * process of the same host with pid ppid, started before it (a live pid is
 * not reused).
 */
static long live_parent(const struct procs *r, size_t i)
{
	const struct storeq_proc *w = &r->v[i];

	for (size_t k = 0; k < r->n; k++) {
		const struct storeq_proc *p = &r->v[k];

		if (k != i && p->sampled && p->pid == w->ppid &&
		    p->start <= w->start &&
		    !strcmp(p->host ? p->host : "", w->host ? w->host : ""))
			return (long)k;
	}
	return -1;
}

/* Link every row to its parent's row by parent_id, a live process's
 * children by ppid (live: some rows are sampled). */
static int link_parents(struct procs *r, bool live)
{
	long *idx = malloc((r->n ? r->n : 1) * sizeof(*idx));

	if (!idx)
		return -ENOMEM;
	for (size_t i = 0; i < r->n; i++)
		idx[i] = (long)i;
	qsort_r(idx, r->n, sizeof(*idx), cmp_id, r->v);
	for (size_t i = 0; i < r->n; i++)
		r->v[i].parent = find_id(r, idx, r->v[i].parent_id);
	for (size_t i = 0; live && i < r->n; i++)
		if (r->v[i].parent < 0)
			r->v[i].parent = live_parent(r, i);
	free(idx);
	return 0;
}

/* Load the process rows of q (see storeq.h). */
int storeq_procs_load(struct store *st, const char *where,
		      const struct report_query *q, unsigned flags,
		      struct storeq_proc **out, size_t *n)
{
	static const char order[] = " ORDER BY start_time, host, pid, id";
	const char *rec = flags & STOREQ_PROC_JSON ? "jobtrace_json(id)" :
			  "NULL";
	const char *task = flags & STOREQ_PROC_TASKS ?
			   " AND job_task IS NOT NULL" : "";
	struct procs r = { 0 };
	char sql[4096];
	size_t first;
	int err;

	if (q->pid)
		snprintf(sql, sizeof(sql), STOREQ_PID_SUBTREE "SELECT "
			 PROC_COLUMNS " FROM process WHERE id IN (SELECT id"
			 " FROM sel)%s%s", rec, task, order);
	else
		snprintf(sql, sizeof(sql), "SELECT " PROC_COLUMNS
			 " FROM process WHERE %s%s%s", rec,
			 storeq_process_where(q), task, order);
	err = storeq_each(st, where, sql, q, add_proc, &r);
	first = r.n;
	if (!err && (flags & STOREQ_PROC_SAMPLES) && q->job && *q->job) {
		snprintf(sql, sizeof(sql), SAMPLE_ROWS, STOREQ_LIVE_JOB_SEL);
		err = storeq_each(st, where, sql, q, add_proc, &r);
	} else if (!err && (flags & STOREQ_PROC_SAMPLES) && q->run && *q->run) {
		snprintf(sql, sizeof(sql), SAMPLE_ROWS,
			 STOREQ_SAMPLE_RUN_SEL);
		err = storeq_each(st, where, sql, q, add_proc, &r);
	}
	if (!err && r.n > first)
		qsort(r.v, r.n, sizeof(*r.v), cmp_start);
	if (!err)
		err = link_parents(&r, r.n > first);
	*out = r.v;
	*n = r.n;
	return err;
}

