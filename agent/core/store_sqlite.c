// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * store_sqlite.c - the embedded SQLite store.  Process records are stored
 * once, as columns: one for every member of the process record as
 * schema.h describes them, read from the JSON in C (schema_read) and
 * bound (SQLite parses no JSON at insert), plus one for each object that
 * may be null, so that null and an object of nulls stay apart.  Their
 * JSON is made again from the columns by the same schema_write() that
 * wrote it (jobtrace_json(id), store_process_json()).  The other types
 * share one table with their JSON, type, time and job.  Writes are
 * batched: the first put opens a transaction, store_flush() commits it.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <sqlite3.h>

#include "json_read.h"
#include "log.h"
#include "schema.h"
#include "store.h"

#define STORE_SCHEMA_VERSION 7
/*
 * Stores of versions 3 to 6 keep every record's JSON in process_rec and
 * record too (3 to 5 with generated columns, 6 with the columns bound
 * beside it): a writer upgrades them in place by reading every record
 * back in (upgrade_from_json).
 */
#define STORE_SCHEMA_JSON 3
#define STORE_STR_(x) #x
#define STORE_STR(x) STORE_STR_(x)
/* an older store's generated columns (read when it is upgraded) need
 * 3.31; jobtrace report uses JSON1, built in since 3.38 */
#define STORE_SQLITE_MIN 3031000
/* how long a write waits for another writer's lock */
#define STORE_BUSY_MS 5000
/* free pages one pruning step gives back to the filesystem (8 MiB) */
#define PRUNE_VACUUM_PAGES 2048

/* The statements of store_prune() and store_usage(). */
enum { PR_BEGIN, PR_OLD_PROCESS, PR_OLD_RECORD, PR_NTH, PR_PAGES,
       PR_OLDEST, PR_VACUUM, PR_NR };

/* A statement store_stmt() keeps: its text, whether it is handed out. */
struct kept_stmt {
	char *sql;
	sqlite3_stmt *st;
	bool busy;
};

/* How many it keeps: a frame of top asks about ten. */
#define KEPT_STMTS 32

struct store {
	sqlite3 *db;
	char *path;
	bool readonly;
	bool in_txn;
	bool failed;		/* an error was logged; do not repeat it */
	unsigned pending;
	uint64_t committed;
	sqlite3_stmt *ins_process;
	sqlite3_stmt *ins_record;
	sqlite3_stmt *begin;
	sqlite3_stmt *commit;
	sqlite3_stmt *rollback;
	struct sv v[V__N];	/* the record being stored */
	struct jbuf scratch;	/* its decoded strings */
	sqlite3_stmt *sel_process;	/* jobtrace_json(): a process's columns */
	struct sv rv[V__N];	/* ... as values */
	struct jbuf out;	/* ... and as JSON */
	bool watch;		/* a writer's file: dev/ino of the one opened */
	dev_t dev;
	ino_t ino;
	/* keeping within limits: prepared at the first store_prune() */
	sqlite3_stmt *pr[PR_NR];
	bool incremental;	/* auto_vacuum=INCREMENTAL: pages can go back */
	bool shrinking;		/* over max_bytes: pruning to the low water */
	bool prune_failed;	/* a pruning error was logged */
	struct kept_stmt kept[KEPT_STMTS];	/* store_stmt() */
};

/*
 * process_rec: id, since_time (the end, else the start: --since) and a
 * column for every member of the process record (schema.h's column
 * names) and for every object that may be null (KEY_obj), made by
 * process_sql().  The view `process` gives them the names of store
 * schemas 3 to 5, which jobtrace report and sqlite3(1) users query, and
 * its `json` made again in SQL (view_members()): the same members and
 * values, numbers in SQLite's notation.  jobtrace_json(id) gives the
 * record's own text.
 */
static const char schema_head_sql[] =
	"CREATE TABLE IF NOT EXISTS meta("
	" key TEXT PRIMARY KEY, value TEXT);"
	"INSERT OR IGNORE INTO meta(key, value)"
	" VALUES('schema_version', '" STORE_STR(STORE_SCHEMA_VERSION) "');";

static const char schema_tail_sql[] =
	/* partial: most processes of a node belong to no job, and every
	 * index entry is work at ingest */
	"CREATE INDEX IF NOT EXISTS process_job_id ON process_rec(job_id)"
	" WHERE job_id IS NOT NULL;"
	"CREATE INDEX IF NOT EXISTS process_job_run ON process_rec(job_run)"
	" WHERE job_run IS NOT NULL;"
	/* --pipeline, and top's expected durations every frame (the
	 * pipeline's earlier runs): not a scan of every process */
	"CREATE INDEX IF NOT EXISTS process_job_pipeline ON"
	" process_rec(job_pipeline) WHERE job_pipeline IS NOT NULL;"
	"CREATE INDEX IF NOT EXISTS process_since ON process_rec(since_time);"
	/*
	 * --pid: the process, then its descendants by ppid (and parent_id).
	 * Not an index on parent_id: random UUIDs put every insert on
	 * another page, recent pids mostly on the last ones.
	 */
	"CREATE INDEX IF NOT EXISTS process_pid ON process_rec(pid);"
	"CREATE INDEX IF NOT EXISTS process_ppid ON process_rec(ppid);"
	/*
	 * Other record types: time is the record's own (a job's end, else
	 * its start), job_id its job.id; both from the JSON, in C.
	 */
	"CREATE TABLE IF NOT EXISTS record("
	" id TEXT PRIMARY KEY NOT NULL,"
	" json TEXT NOT NULL,"
	" type TEXT NOT NULL,"
	" time REAL,"
	" job_id TEXT);"
	"CREATE INDEX IF NOT EXISTS record_job_id ON record(job_id)"
	" WHERE job_id IS NOT NULL;"
	"CREATE INDEX IF NOT EXISTS record_time ON record(time);"
	/*
	 * A live process's two latest samples as top reads them every frame
	 * (topq.h TOPQ_SAMPLES_SQL), by job, pid and time; without it each
	 * frame parsed every sample's JSON of the job for each of its
	 * processes.  The same expression, word for word, as the query;
	 * made on open for a store that lacks it.  record_sample_run (a
	 * run's samples by process, for their latest) gave way to
	 * sample_latest: a writer drops it.
	 */
	"DROP INDEX IF EXISTS record_sample_run;"
	"CREATE INDEX IF NOT EXISTS record_sample_pid ON record(job_id, "
	STORE_SAMPLE_PID ", time) WHERE type = 'sample';"
	/*
	 * A job's signals (top, report) and the job records a user's
	 * restriction reads (storeq.c), not among all of a job's samples or
	 * every record: few rows, little work at ingest.
	 */
	"CREATE INDEX IF NOT EXISTS record_signal_job ON record(job_id, time)"
	" WHERE type = 'signal';"
	"CREATE INDEX IF NOT EXISTS record_job ON record(job_id)"
	" WHERE type = 'job';";

/*
 * The view `process`, around its json (view_members()): made again by
 * every writer, so that its json has a member added since it was made;
 * in a savepoint (a transaction of its own, or nested in an upgrade's),
 * so that a reader never finds it missing.
 */
static const char view_head_sql[] =
	"SAVEPOINT process_view;"
	"DROP VIEW IF EXISTS process;"
	"CREATE VIEW process AS SELECT id, ";
static const char view_tail_sql[] =
	" AS json, job_id,"
	" job_run, pid, ppid, since_time, host, parent_id, start_time,"
	" end_time, exe, COALESCE(exe_truncated, 0) AS exe_truncated,"
	" NULLIF(comm, '') AS comm, argv, uid,"
	" cgroup, container, job_scheduler, job_step, job_pipeline, job_task,"
	" job_user, job_account, job_cost_center, tool_name, tool_category,"
	" COALESCE(exit_code, CASE WHEN exit_signal IS NOT NULL THEN -1 END)"
	" AS exit_code,"
	" COALESCE(exit_signal, CASE WHEN end_time IS NOT NULL THEN 0 END)"
	" AS exit_signal,"
	" COALESCE(exit_oom_killed, 0) AS oom_killed, cpu_user_s, cpu_sys_s,"
	" mem_peak_rss_bytes AS peak_rss_bytes, io_read_bytes AS read_bytes,"
	" io_write_bytes AS write_bytes,"
	" COALESCE(io_cancelled_write_bytes, 0) AS cancelled_write_bytes,"
	" io_rchar AS rchar, io_wchar AS wchar,"
	" io_blkio_delay_s AS blkio_delay_s, net_rx_bytes AS rx_bytes,"
	" net_tx_bytes AS tx_bytes, wait_run_queue_s, wait_reclaim_s,"
	" wait_thrashing_s, wait_swapin_s, wait_compact_s, wait_nvcsw,"
	" wait_nivcsw, wait_net_s, wait_children_s FROM process_rec;"
	"RELEASE process_view;";

/*
 * Each sampled process's latest sample (sample_latest), kept by triggers
 * on record, so that top and report on a running job read one row a
 * process instead of grouping every sample of the run (a frame's cost
 * grew with the run's age: 52 % of a view's CPU).  The key is the
 * sample's host, pid and start_time; a replayed sample (its id known) is
 * not inserted, so it changes nothing; a pruned one goes with its record.
 * Beside it the sample before (prev_id, prev_time: the one it replaced),
 * so that a view's rates need no search for it.  Made on open for a
 * store that lacks it (or has it without prev_id) and filled from its
 * samples (with no sample before: the next one brings it).
 */
#define LATEST_KEY(j) \
	"COALESCE(json_extract(" j ", '$.host'), ''),"                        \
	" COALESCE(json_extract(" j ", '$.pid'), 0),"                         \
	" COALESCE(json_extract(" j ", '$.start_time'), '')"
#define LATEST_COLS(j) LATEST_KEY(j) ", json_extract(" j ", '$.job.run')"
static const char latest_sql[] =
	"CREATE TABLE IF NOT EXISTS sample_latest("
	" host TEXT NOT NULL, pid INTEGER NOT NULL, start TEXT NOT NULL,"
	" run TEXT, job_id TEXT, id TEXT NOT NULL, time REAL,"
	" prev_id TEXT, prev_time REAL,"
	" PRIMARY KEY(host, pid, start)) WITHOUT ROWID;"
	"CREATE INDEX IF NOT EXISTS sample_latest_run ON sample_latest(run)"
	" WHERE run IS NOT NULL;"
	"CREATE INDEX IF NOT EXISTS sample_latest_job ON sample_latest(job_id)"
	" WHERE job_id IS NOT NULL;"
	"CREATE TRIGGER IF NOT EXISTS sample_latest_put AFTER INSERT ON record"
	" WHEN NEW.type = 'sample' BEGIN"
	" INSERT INTO sample_latest(host, pid, start, run, job_id, id, time)"
	" VALUES(" LATEST_COLS("NEW.json") ", NEW.job_id, NEW.id, NEW.time)"
	" ON CONFLICT(host, pid, start) DO UPDATE SET run = excluded.run,"
	" job_id = excluded.job_id, prev_id = sample_latest.id,"
	" prev_time = sample_latest.time, id = excluded.id,"
	" time = excluded.time"
	" WHERE excluded.time >= sample_latest.time"
	" OR sample_latest.time IS NULL;"
	" END;"
	"CREATE TRIGGER IF NOT EXISTS sample_latest_drop AFTER DELETE ON record"
	" WHEN OLD.type = 'sample' BEGIN"
	" DELETE FROM sample_latest WHERE (host, pid, start) ="
	" (" LATEST_KEY("OLD.json") ") AND id = OLD.id;"
	" END;";
/* the rows of sample_latest from the samples stored: filling a store
 * that lacked it, and a reader's stand-in (the same per run and job) */
#define LATEST_GROUPED \
	"SELECT " LATEST_COLS("json") ", job_id, id, MAX(time) FROM main.record" \
	" WHERE type = 'sample' GROUP BY 1, 2, 3"
static const char latest_fill_sql[] =
	"INSERT INTO sample_latest(host, pid, start, run, job_id, id, time) "
	LATEST_GROUPED;
static const char latest_view_sql[] =
	"CREATE TEMP VIEW IF NOT EXISTS sample_latest(host, pid, start, run,"
	" job_id, id, time, prev_id, prev_time) AS SELECT *, NULL, NULL FROM"
	" (" LATEST_GROUPED ", 4, 5)";
/* sample_latest as b0e69eb made it, without prev_id: made again */
static const char latest_drop_sql[] =
	"DROP TRIGGER IF EXISTS sample_latest_put;"
	"DROP TRIGGER IF EXISTS sample_latest_drop;"
	"DROP TABLE IF EXISTS sample_latest;";

/* a known id is a replay: ignored */
static const char ins_record_sql[] =
	"INSERT INTO record(id, json, type, time, job_id)"
	" VALUES(?1, ?2, ?3, ?4, ?5) ON CONFLICT(id) DO NOTHING";

/* The SQL type of a member's column. */
static const char *sql_type(const struct sf_field *f)
{
	switch (f->type) {
	case SFT_STR:
	case SFT_STRARR:	/* the array's JSON text */
	case SFT_OBJARR:
	case SFT_COUNTS:
		return "TEXT";
	case SFT_F64:
	case SFT_TIME:		/* epoch seconds with the microseconds */
		return "REAL";
	default:
		return "INTEGER";
	}
}

enum col_text { COL_DEF, COL_NAME, COL_PARAM };

/*
 * The column of member f, or NULL for none: its own, or for an object that
 * may be null or left out KEY_obj in buf (NULL: null, 1: the object, 0:
 * left out).  The record's id is column 1, not a member column.
 */
static const char *col_of(const struct sf_field *f, char *buf, size_t len)
{
	if (f->type == SFT_OBJ && (f->flags & (SF_NULL | SF_OPT))) {
		snprintf(buf, len, "%s_obj", f->key);
		return buf;
	}
	if (!f->col || f->slot == V_ID || f->type == SFT_RECTIME)
		return NULL;
	return f->col;
}

/* Append s to the statement being made. */
static void sql_put(struct jbuf *sql, const char *s)
{
	jbuf_put(sql, s, strlen(s));
}

/*
 * Append to sql, for every column member of f[0..n) in order (objects
 * flattened; id left out: it comes first), ", NAME TYPE" (COL_DEF),
 * ", NAME" or ", ?N" (its parameter: 4 on); count them in *ncols.
 */
static void columns(struct jbuf *sql, const struct sf_field *f, size_t n,
		    enum col_text what, unsigned *ncols)
{
	char buf[160], name[64];

	for (size_t i = 0; i < n; i++, f++) {
		const char *col = col_of(f, name, sizeof(name));

		if (col) {
			(*ncols)++;
			if (what == COL_DEF)
				snprintf(buf, sizeof(buf), ", %s %s", col,
					 sql_type(f));
			else if (what == COL_NAME)
				snprintf(buf, sizeof(buf), ", %s", col);
			else
				snprintf(buf, sizeof(buf), ", ?%u", *ncols + 2);
			sql_put(sql, buf);
		}
		if (f->type == SFT_OBJ)
			columns(sql, f->sub, f->nsub, what, ncols);
	}
}

/*
 * Append, for the members f[0..n) of an object, "'key', VALUE" in SQL:
 * the record's JSON made again from process_rec's columns for the view.
 * Times as RFC 3339 with microseconds, booleans as true and false.
 */
static void view_members(struct jbuf *sql, const struct sf_field *f, size_t n)
{
	if (!n)
		return;
	char buf[512], name[64];
	bool first = true;

	for (size_t i = 0; i < n; i++, f++) {
		const char *col = f->slot == V_ID ? "id" :
				  col_of(f, name, sizeof(name));

		if (f->type == SFT_RECTIME)
			continue;
		snprintf(buf, sizeof(buf), "%s'%s', ", first ? "" : ", ",
			 f->key);
		first = false;
		sql_put(sql, buf);
		switch (f->type) {
		case SFT_OBJ:
			if (col) {
				snprintf(buf, sizeof(buf),
					 "json(CASE WHEN %s THEN ", col);
				sql_put(sql, buf);
			}
			sql_put(sql, "json_object(");
			view_members(sql, f->sub, f->nsub);
			sql_put(sql, ")");
			if (col)
				sql_put(sql, " ELSE 'null' END)");
			continue;
		case SFT_BOOL:
			snprintf(buf, sizeof(buf), "json(CASE WHEN %1$s IS NULL"
				 " THEN 'null' WHEN %1$s THEN 'true'"
				 " ELSE 'false' END)", col);
			break;
		case SFT_TIME:
			snprintf(buf, sizeof(buf), "strftime('%%Y-%%m-%%dT%%H:"
				 "%%M:%%S', CAST(round(%1$s * 1e6) AS INTEGER)"
				 " / 1000000, 'unixepoch') || printf('.%%06dZ',"
				 " CAST(round(%1$s * 1e6) AS INTEGER) %% 1000000)",
				 col);
			break;
		case SFT_STRARR:
		case SFT_OBJARR:
		case SFT_COUNTS:
			snprintf(buf, sizeof(buf), "json(%s)", col);
			break;
		default:
			snprintf(buf, sizeof(buf), "%s", col);
			break;
		}
		sql_put(sql, buf);
	}
}

/*
 * The statements that make process_rec, insert into it and make the view
 * `process` (malloc'd).
 */
static int process_sql(char **create, char **insert, char **view)
{
	const struct sf_record *r = &sf_records[SF_REC_PROCESS];
	struct jbuf c, i, w;
	unsigned n = 0;

	jbuf_init(&c);
	jbuf_init(&i);
	jbuf_init(&w);
	sql_put(&c, "CREATE TABLE IF NOT EXISTS process_rec("
		" id TEXT PRIMARY KEY NOT NULL, since_time REAL");
	columns(&c, r->f, r->n, COL_DEF, &n);
	sql_put(&c, ");");
	sql_put(&w, view_head_sql);
	sql_put(&w, "json_object('type', '");
	sql_put(&w, r->name);
	sql_put(&w, "', ");
	view_members(&w, r->f, r->n);
	sql_put(&w, ")");
	sql_put(&w, view_tail_sql);
	sql_put(&i, "INSERT INTO process_rec(id, since_time");
	n = 0;
	columns(&i, r->f, r->n, COL_NAME, &n);
	sql_put(&i, ") VALUES(?1, ?2");
	n = 0;
	columns(&i, r->f, r->n, COL_PARAM, &n);
	sql_put(&i, ") ON CONFLICT(id) DO NOTHING");
	if (c.oom || i.oom || w.oom || !jbuf_str(&w)) {
		jbuf_free(&c);
		jbuf_free(&i);
		jbuf_free(&w);
		return -ENOMEM;
	}
	*create = c.buf;
	*insert = i.buf;
	*view = w.buf;
	return 0;
}

/* Map an SQLite result code to a negative errno. */
static int sql_errno(int rc)
{
	switch (rc & 0xff) {
	case SQLITE_NOMEM:
		return -ENOMEM;
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return -EBUSY;
	case SQLITE_READONLY:
		return -EROFS;
	case SQLITE_CANTOPEN:
		return -ENOENT;
	case SQLITE_FULL:
		return -ENOSPC;
	case SQLITE_PERM:
	case SQLITE_AUTH:
		return -EACCES;
	case SQLITE_CORRUPT:
	case SQLITE_NOTADB:
		return -EBADMSG;
	default:
		return -EIO;
	}
}

/* Log an SQLite failure once per store, with the path and SQLite's message. */
static int fail(struct store *s, const char *what, int rc)
{
	if (!s->failed)
		log_error("sqlite store %s: %s: %s", s->path, what,
			  s->db ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc));
	s->failed = true;
	return sql_errno(rc);
}

/* Execute one prepared statement that returns no rows. */
static int step_done(sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* Run sql (several statements); log what failed. */
static int exec_sql(struct store *s, const char *what, const char *sql)
{
	char *msg = NULL;
	int rc = sqlite3_exec(s->db, sql, NULL, NULL, &msg);

	if (rc == SQLITE_OK)
		return 0;
	log_error("sqlite store %s: %s: %s", s->path, what,
		  msg ? msg : sqlite3_errstr(rc));
	sqlite3_free(msg);
	s->failed = true;
	return sql_errno(rc);
}

/*
 * A store of this version made before a member joined the process record
 * lacks its column: a writer adds it (NULL in the older rows), so that a
 * new field costs no version and no rewrite of the store; a reader (the
 * CLI) says which column is missing and who adds it, instead of failing
 * each query with "no such column".
 */
static int add_new_columns(struct store *s)
{
	const struct sf_record *r = &sf_records[SF_REC_PROCESS];
	sqlite3_stmt *st = NULL;
	struct jbuf defs;
	unsigned n = 0;
	char *d, *next;
	int rc, err = 0;

	jbuf_init(&defs);
	columns(&defs, r->f, r->n, COL_DEF, &n);
	if (defs.oom || !jbuf_str(&defs))
		return -ENOMEM;
	rc = sqlite3_prepare_v2(s->db, "SELECT 1 FROM pragma_table_info("
				"'process_rec') WHERE name = ?1", -1, &st,
				NULL);
	if (rc != SQLITE_OK)
		err = fail(s, "reading the columns", rc);
	/* ", NAME TYPE, NAME TYPE": no definition has a comma */
	for (d = defs.buf; !err && d && *d; d = next) {
		char sql[256];
		size_t namelen;

		d += strspn(d, ", ");
		next = strchr(d, ',');
		if (next)
			*next++ = '\0';
		namelen = strcspn(d, " ");
		sqlite3_bind_text(st, 1, d, (int)namelen, SQLITE_STATIC);
		rc = sqlite3_step(st);
		sqlite3_reset(st);
		if (rc == SQLITE_ROW)
			continue;
		if (rc != SQLITE_DONE) {
			err = fail(s, "reading the columns", rc);
			break;
		}
		if (s->readonly) {
			log_error("sqlite store %s: written by an older"
				  " jobtraced (no column %.*s): start this"
				  " version's jobtraced once, it adds the"
				  " columns of the new fields in place",
				  s->path, (int)namelen, d);
			err = -EPROTO;
			break;
		}
		snprintf(sql, sizeof(sql), "ALTER TABLE process_rec ADD COLUMN %s", d);
		log_info("sqlite store %s: adding column %.*s", s->path,
			 (int)namelen, d);
		err = exec_sql(s, "adding a column", sql);
	}
	sqlite3_finalize(st);
	jbuf_free(&defs);
	return err;
}

/* 2 if the store has the table sample_latest with prev_id, 1 without,
 * 0 if it has no such table, < 0 on error. */
static int has_latest(struct store *s)
{
	sqlite3_stmt *st = NULL;
	int rc, n = 0;

	rc = sqlite3_prepare_v2(s->db, "SELECT name FROM"
				" pragma_table_info('sample_latest', 'main')",
				-1, &st, NULL);
	while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *c = (const char *)sqlite3_column_text(st, 0);

		n = n ? n : 1;
		if (c && !strcmp(c, "prev_id"))
			n = 2;
		rc = SQLITE_OK;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? n : fail(s, "reading the schema", rc);
}

/* A writer: make sample_latest and its triggers, filled from the samples
 * of a store that lacked it (made again where it had no prev_id).  A
 * reader of such a store: a stand-in view that groups the samples as
 * before, with no sample before the latest. */
static int setup_latest(struct store *s)
{
	int had = has_latest(s), err;

	if (had < 0)
		return had;
	if (s->readonly)
		return had == 2 ? 0 : exec_sql(s, "reading the latest samples",
					       latest_view_sql);
	err = had == 1 ? exec_sql(s, "creating schema", latest_drop_sql) : 0;
	if (!err)
		err = exec_sql(s, "creating schema", latest_sql);
	if (!err && had < 2) {
		err = exec_sql(s, "filling sample_latest", latest_fill_sql);
		if (!err && sqlite3_changes(s->db))
			log_info("sqlite store %s: sample_latest made from %d"
				 " processes' samples", s->path,
				 sqlite3_changes(s->db));
	}
	return err;
}

/* Create tables and prepare the statements a writer needs. */
static int setup_writer(struct store *s)
{
	char *create = NULL, *insert = NULL, *view = NULL;
	int rc, err;

	err = process_sql(&create, &insert, &view);
	if (err)
		return err;
	err = exec_sql(s, "creating schema", schema_head_sql);
	if (!err)
		err = exec_sql(s, "creating schema", create);
	if (!err)
		err = add_new_columns(s);
	if (!err)
		err = exec_sql(s, "creating schema", schema_tail_sql);
	if (!err)
		err = exec_sql(s, "creating schema", view);
	if (!err)
		err = setup_latest(s);
	if (err)
		goto out;

	rc = sqlite3_prepare_v2(s->db, insert, -1, &s->ins_process, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(s->db, ins_record_sql, -1,
					&s->ins_record, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(s->db, "BEGIN", -1, &s->begin, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(s->db, "COMMIT", -1, &s->commit, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(s->db, "ROLLBACK", -1, &s->rollback,
					NULL);
	if (rc != SQLITE_OK)
		err = fail(s, "preparing statements", rc);
out:
	free(create);
	free(insert);
	free(view);
	return err;
}

/* Read the schema version into *v: 0 for a database without tables. */
static int read_version(struct store *s, int *v)
{
	static const char sql[] =
		"SELECT (SELECT count(*) FROM sqlite_master),"
		" (SELECT count(*) FROM sqlite_master"
		"  WHERE type = 'table' AND name = 'meta')";
	sqlite3_stmt *st = NULL;
	int rc, err = 0;

	*v = 0;
	rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		err = fail(s, "reading schema version", rc);
		goto cleanup;
	}
	if (sqlite3_column_int(st, 0) == 0)
		goto cleanup;		/* a new, empty database */
	if (sqlite3_column_int(st, 1) == 0) {
		log_error("sqlite store %s: not a jobtrace store (no schema"
			  " version)", s->path);
		err = -EPROTO;
		goto cleanup;
	}
	sqlite3_finalize(st);
	st = NULL;
	rc = sqlite3_prepare_v2(s->db, "SELECT value FROM meta"
				" WHERE key = 'schema_version'", -1, &st,
				NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*v = sqlite3_column_int(st, 0);
	else if (rc != SQLITE_DONE)
		err = fail(s, "reading schema version", rc);

cleanup:
	sqlite3_finalize(st);
	return err;
}

/*
 * Check that the database is new or carries the schema version we use,
 * and tell the admin what to do with one of another version.  *old is set
 * to the version of a store a writer upgrades (upgrade_from_json()).
 */
static int check_version(struct store *s, int *old)
{
	int v, err;

	*old = 0;
	err = read_version(s, &v);
	if (err)
		return err;
	if (v == STORE_SCHEMA_VERSION || (v == 0 && !s->readonly))
		return 0;
	if (v >= STORE_SCHEMA_JSON && v < STORE_SCHEMA_VERSION && !s->readonly) {
		/* its tables step aside; setup_writer() makes the new ones */
		*old = v;
		return exec_sql(s, "upgrading the store",
				"BEGIN IMMEDIATE;"
				"DROP VIEW IF EXISTS process;"
				"DROP INDEX IF EXISTS process_job_id;"
				"DROP INDEX IF EXISTS process_job_run;"
				"DROP INDEX IF EXISTS process_job_pipeline;"
				"DROP INDEX IF EXISTS process_since;"
				"DROP INDEX IF EXISTS process_pid;"
				"DROP INDEX IF EXISTS process_ppid;"
				"DROP INDEX IF EXISTS record_job_id;"
				"DROP INDEX IF EXISTS record_time;"
				"ALTER TABLE process_rec RENAME TO old_process_rec;"
				"ALTER TABLE record RENAME TO old_record;");
	}
	if (v >= STORE_SCHEMA_JSON && v < STORE_SCHEMA_VERSION)
		log_error("sqlite store %s: written by an older jobtraced"
			  " (store schema %d): start this version's jobtraced"
			  " once, it upgrades the store in place", s->path, v);
	else if (v == 0)
		log_error("sqlite store %s: no jobtrace records yet (empty"
			  " database)", s->path);
	else if (v < STORE_SCHEMA_VERSION)
		log_error("sqlite store %s: written by an older jobtrace"
			  " (store schema %d; this version uses %d and does"
			  " not convert it): stop jobtraced, move the file"
			  " aside (mv %s %s.v%d, and its -wal and -shm files"
			  " if any) and start jobtraced to create a new store;"
			  " the old records stay readable with sqlite3(1)",
			  s->path, v, STORE_SCHEMA_VERSION, s->path, s->path,
			  v);
	else
		log_error("sqlite store %s: written by a newer jobtrace"
			  " (store schema %d; this version reads %d): use"
			  " that version, or move the file aside to start a"
			  " new store", s->path, v, STORE_SCHEMA_VERSION);
	return -EPROTO;
}

static int put_json(struct store *s, const char *json, size_t len);
static void sql_jobtrace_json(sqlite3_context *ctx, int argc,
			      sqlite3_value **argv);

/*
 * Store schemas 3 to 5 keep every record's JSON: after check_version()
 * renamed their tables and setup_writer() made the new ones, every record
 * is stored again from its JSON, in the transaction check_version() began,
 * and the old tables go.
 */
static int upgrade_from_json(struct store *s, int old)
{
	static const char sql[] = "SELECT json FROM old_process_rec"
				  " UNION ALL SELECT json FROM old_record";
	sqlite3_stmt *st = NULL;
	uint64_t n = 0, bad = 0;
	int rc, err = 0;

	rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
	while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		err = put_json(s, (const char *)sqlite3_column_text(st, 0),
			       (size_t)sqlite3_column_bytes(st, 0));
		if (err == -EINVAL) {
			bad++;		/* logged; it was unreadable before too */
			err = 0;
		}
		if (err)
			break;
		n++;
		rc = SQLITE_OK;
	}
	sqlite3_finalize(st);
	if (!err && rc != SQLITE_DONE)
		err = fail(s, "upgrading the store: reading records", rc);
	if (!err)
		err = exec_sql(s, "upgrading the store",
			       "DROP TABLE old_process_rec;"
			       "DROP TABLE old_record;"
			       "UPDATE meta SET value = '"
			       STORE_STR(STORE_SCHEMA_VERSION) "'"
			       " WHERE key = 'schema_version';"
			       "COMMIT;");
	if (err) {
		exec_sql(s, "upgrading the store", "ROLLBACK");
		return err;
	}
	s->pending = 0;
	log_info("sqlite store %s: upgraded from store schema %d to %d"
		 " (%" PRIu64 " records%s)", s->path, old, STORE_SCHEMA_VERSION,
		 n, bad ? ", some unreadable left out" : "");
	return 0;
}

/* Open (creating) the database at path; readonly for the CLI. */
int store_open(const char *path, bool readonly, struct store **out)
{
	struct store *s = NULL;
	struct stat sb;
	int flags, rc, err, old;

	*out = NULL;
	if (sqlite3_libversion_number() < STORE_SQLITE_MIN) {
		log_error("sqlite store %s: SQLite %s is too old: the store"
			  " needs 3.31 or later (generated columns, JSON1)",
			  path, sqlite3_libversion());
		return -ENOTSUP;
	}
	if (readonly && *path && stat(path, &sb) < 0) {
		err = -errno;
		log_error("sqlite store %s: %s", path, strerror(-err));
		return err;
	}

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->path = strdup(*path ? path : "(temporary)");
	if (!s->path) {
		free(s);
		return -ENOMEM;
	}
	s->readonly = readonly;

	flags = readonly ? SQLITE_OPEN_READONLY :
			   SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
	/* one thread uses a connection (the sink's, or the CLI's): no
	 * per-call locking */
	flags |= SQLITE_OPEN_NOMUTEX;
	rc = sqlite3_open_v2(path, &s->db, flags, NULL);
	if (rc != SQLITE_OK) {
		err = fail(s, "open", rc);
		goto cleanup;
	}
	sqlite3_busy_timeout(s->db, STORE_BUSY_MS);
	sqlite3_extended_result_codes(s->db, 0);
	rc = sqlite3_create_function_v2(s->db, "jobtrace_json", 1,
					SQLITE_UTF8, s, sql_jobtrace_json,
					NULL, NULL, NULL);
	if (rc != SQLITE_OK) {
		err = fail(s, "adding jobtrace_json()", rc);
		goto cleanup;
	}

	/*
	 * 2 MiB of page cache: ids that begin with the time put each insert
	 * at the end of the id index, and 1, 2 and 8 MiB cost the same per
	 * record up to 200k records (bench/README.md); 8 MiB was 6 MB of
	 * RSS.  A new file gets 16 KiB pages and auto_vacuum=INCREMENTAL
	 * (both no-ops on one with tables), so that store_prune() can give
	 * pages back; a record of about 1.5 KiB (store schema 6: its JSON
	 * and its columns) cost the sink 20-30 % less CPU in 16 KiB pages
	 * than in 4 KiB ones
	 * (bench/deliver, 30k records, three alternating runs: 11.4-13.9 vs
	 * 14.7-19.1 us), 64 KiB pages no less than 4 KiB.  The automatic
	 * checkpoint comes at 4 MiB of WAL (256 pages), and a WAL that grew
	 * past that (a long reader, a large transaction) is cut back to it
	 * once it is reset.  Statement journals in memory (temp_store): an
	 * insert in the batch's transaction with its triggers (sample_latest)
	 * journals the pages it changes, and past 64 KiB (four 16 KiB pages)
	 * SQLite wrote them to a deleted file in /var/tmp: 7 MB a second for
	 * 50 samples a second (strace), the sink's pwrite a quarter of the
	 * agent's CPU (perf).  A statement's journal is the pages it changes,
	 * and store_prune() deletes in bounded steps.
	 */
	err = readonly ? 0 : exec_sql(s, "setting up",
				      "PRAGMA page_size=16384;"
				      "PRAGMA temp_store=MEMORY;"
				      "PRAGMA auto_vacuum=INCREMENTAL;"
				      "PRAGMA journal_mode=WAL;"
				      "PRAGMA wal_autocheckpoint=256;"
				      "PRAGMA journal_size_limit=4194304;"
				      "PRAGMA synchronous=NORMAL;"
				      "PRAGMA cache_size=-2048;");
	/*
	 * a temporary store (a query's copy of ClickHouse's records) lives in
	 * its page cache: spilled to its file, 3000 process records and 2000
	 * samples of `top --source clickhouse` spent a third of the frame in
	 * pwrite (perf); its journal in memory, as nothing survives it
	 */
	if (!err && !readonly && !*path)
		err = exec_sql(s, "setting up", "PRAGMA journal_mode=MEMORY;"
			       "PRAGMA cache_size=-262144;");
	if (!err)
		err = check_version(s, &old);
	if (!err && !readonly)
		err = setup_writer(s);
	else if (!err)
		err = add_new_columns(s);	/* a reader: only checks */
	if (!err && readonly && old == 0)
		err = setup_latest(s);
	if (!err && old)
		err = upgrade_from_json(s, old);
	if (err)
		goto cleanup;
	/* which file this is, to notice when the path names another one */
	if (!readonly && *path && stat(path, &sb) == 0) {
		s->watch = true;
		s->dev = sb.st_dev;
		s->ino = sb.st_ino;
	}
	*out = s;
	return 0;

cleanup:
	store_close(s);
	return err;
}

/* Commit anything pending and close; accepts NULL. */
void store_close(struct store *s)
{
	if (!s)
		return;
	if (s->in_txn)
		store_flush(s);
	sqlite3_finalize(s->ins_process);
	sqlite3_finalize(s->sel_process);
	sqlite3_finalize(s->ins_record);
	sqlite3_finalize(s->begin);
	sqlite3_finalize(s->commit);
	sqlite3_finalize(s->rollback);
	for (int i = 0; i < PR_NR; i++)
		sqlite3_finalize(s->pr[i]);
	for (int i = 0; i < KEPT_STMTS; i++) {
		sqlite3_finalize(s->kept[i].st);
		free(s->kept[i].sql);
	}
	sqlite3_close(s->db);
	jbuf_free(&s->scratch);
	jbuf_free(&s->out);
	free(s->path);
	free(s);
}

/* Open the batch transaction unless one is already open. */
static int begin_lazy(struct store *s)
{
	int rc;

	if (s->readonly) {
		log_error("sqlite store %s: opened read-only", s->path);
		return -EROFS;
	}
	if (s->in_txn)
		return 0;
	rc = step_done(s->begin);
	if (rc != SQLITE_OK)
		return fail(s, "begin", rc);
	s->in_txn = true;
	return 0;
}

/* How much of a rejected record a message shows. */
static int snippet(size_t len)
{
	return len < 80 ? (int)len : 80;
}

/* A time (realtime ns) as epoch seconds with the microseconds. */
static double epoch(const struct sv *v)
{
	return (double)(v->u / 1000) / 1e6;
}

/* Bind value v of member f to parameter i; an SQLite result code. */
static int bind_value(sqlite3_stmt *st, int i, const struct sf_field *f,
		      const struct sv *v)
{
	if (f->type == SFT_OBJ && v->st != SV_NULL)
		return sqlite3_bind_int(st, i, v->st != SV_OMIT);
	if (v->st == SV_NULL || v->st == SV_OMIT)
		return sqlite3_bind_null(st, i);
	switch (f->type) {
	case SFT_STR:
	case SFT_STRARR:
	case SFT_COUNTS:
		return sqlite3_bind_text(st, i, v->s, (int)v->n, SQLITE_STATIC);
	case SFT_OBJARR:
		/* as schema_read() left it: the array's JSON text */
		if (v->st != SV_RAW)
			return sqlite3_bind_null(st, i);
		return sqlite3_bind_text(st, i, v->s, (int)v->n, SQLITE_STATIC);
	case SFT_F64:
		return sqlite3_bind_double(st, i, v->d);
	case SFT_TIME:
		return sqlite3_bind_double(st, i, epoch(v));
	case SFT_I32:
		return sqlite3_bind_int64(st, i, v->i);
	case SFT_U64:
		/* SQLite's integers are signed: larger ones as REAL */
		if (v->u > INT64_MAX)
			return sqlite3_bind_double(st, i, (double)v->u);
		return sqlite3_bind_int64(st, i, (sqlite3_int64)v->u);
	default:
		return sqlite3_bind_int64(st, i, (sqlite3_int64)v->u);
	}
}

/* Bind the column members of f[0..n) in columns() order from *i on. */
static int bind_columns(sqlite3_stmt *st, const struct sf_field *f, size_t n,
			const struct sv *v, int *i)
{
	char name[64];
	int rc = SQLITE_OK;

	for (size_t k = 0; rc == SQLITE_OK && k < n; k++, f++) {
		if (col_of(f, name, sizeof(name)))
			rc = bind_value(st, (*i)++, f, &v[f->slot]);
		if (rc == SQLITE_OK && f->type == SFT_OBJ)
			rc = bind_columns(st, f->sub, f->nsub, v, i);
	}
	return rc;
}

/*
 * True when text[0..n) is one JSON array (SFT_STRARR, SFT_OBJARR) or object
 * (SFT_COUNTS) that json_read.h accepts: a column another program wrote
 * is never copied into a record as it is unless it is.
 */
static bool raw_ok(const struct sf_field *f, const char *text, size_t n)
{
	struct jr r;

	if (!text)
		return false;
	jr_init(&r, text, n);
	if (jr_peek(&r) != (f->type == SFT_COUNTS ? JR_OBJ : JR_ARR))
		return false;
	return !jr_skip(&r) && !jr_end(&r);
}

/* The value of member f from column i of a row (bind_value() undone). */
static void column_value(sqlite3_stmt *st, int i, const struct sf_field *f,
			 struct sv *v)
{
	double d;

	if (sqlite3_column_type(st, i) == SQLITE_NULL) {
		v->st = SV_NULL;
		return;
	}
	switch (f->type) {
	case SFT_OBJ:
		v->st = sqlite3_column_int(st, i) ? SV_SET : SV_OMIT;
		break;
	case SFT_STR:
	case SFT_STRARR:
	case SFT_OBJARR:
	case SFT_COUNTS:
		v->s = (const char *)sqlite3_column_text(st, i);
		v->n = (uint32_t)sqlite3_column_bytes(st, i);
		v->st = f->type == SFT_STR ? SV_SET :
			raw_ok(f, v->s, v->n) ? SV_RAW : SV_NULL;
		break;
	case SFT_F64:
		sv_f64(v, sqlite3_column_double(st, i));
		break;
	case SFT_TIME:
		/* µs since the epoch are exact in a double's 53 bits, and
		 * one rounding each way stays within 0.25 µs */
		sv_u64(v, (uint64_t)llround(sqlite3_column_double(st, i) * 1e6) *
			  1000);
		break;
	case SFT_I32:
		sv_i64(v, sqlite3_column_int64(st, i));
		break;
	case SFT_U64:
		if (sqlite3_column_type(st, i) == SQLITE_FLOAT) {
			d = sqlite3_column_double(st, i);
			sv_u64(v, d >= 18446744073709551615.0 ? UINT64_MAX :
				  (uint64_t)d);
			break;
		}
		/* fall through */
	default:
		sv_u64(v, (uint64_t)sqlite3_column_int64(st, i));
		break;
	}
}

/*
 * The values of the members f[0..n) from a row in columns() order from *i
 * on; an object that cannot be null is always there.
 */
static void column_values(sqlite3_stmt *st, const struct sf_field *f,
			  size_t n, struct sv *v, int *i)
{
	char name[64];

	for (size_t k = 0; k < n; k++, f++) {
		if (col_of(f, name, sizeof(name)))
			column_value(st, (*i)++, f, &v[f->slot]);
		else if (f->type == SFT_OBJ)
			v[f->slot].st = SV_SET;
		if (f->type == SFT_OBJ)
			column_values(st, f->sub, f->nsub, v, i);
	}
}

/* Bind a record of another type: type, its own time, its job's id. */
static int bind_record(sqlite3_stmt *st, const struct sf_record *r,
		       const struct sv *v)
{
	const struct sv *t = &v[V_TIME];
	int rc;

	if (r == &sf_records[SF_REC_JOB]) {
		/* a job record is at its end, or its start while it runs */
		bool end = v[V_PHASE].st == SV_SET && v[V_PHASE].n == 3 &&
			   !memcmp(v[V_PHASE].s, "end", 3);

		t = end && v[V_JOB_END_TIME].st == SV_SET ? &v[V_JOB_END_TIME] :
		    v[V_JOB_START_TIME].st == SV_SET ? &v[V_JOB_START_TIME] :
						       &v[V_JOB_END_TIME];
	}
	rc = sqlite3_bind_text(st, 3, r->name, -1, SQLITE_STATIC);
	if (rc == SQLITE_OK)
		rc = t->st == SV_SET ? sqlite3_bind_double(st, 4, epoch(t)) :
				       sqlite3_bind_null(st, 4);
	if (rc == SQLITE_OK)
		rc = v[V_JOB_ID].st == SV_SET ?
		     sqlite3_bind_text(st, 5, v[V_JOB_ID].s, (int)v[V_JOB_ID].n,
				       SQLITE_STATIC) :
		     sqlite3_bind_null(st, 5);
	return rc;
}

/*
 * Store one record: its members read in C (schema_read), bound to the
 * columns of its table.  -EINVAL for a record that can never be stored.
 */
static int put_json(struct store *s, const char *json, size_t len)
{
	const struct sf_record *r;
	struct sv *v = s->v;
	const char *why = NULL;
	sqlite3_stmt *st;
	int rc, err, i = 3;

	r = json && len <= INT_MAX ? schema_type_of(json, len) : NULL;
	if (!r) {
		log_error("sqlite store %s: record rejected: not a JSON object"
			  " with a known \"type\": %.*s", s->path, snippet(len),
			  json ? json : "");
		return -EINVAL;
	}
	err = schema_read(r, json, len, v, &s->scratch, &why);
	if (!err && v[V_ID].st != SV_SET) {
		why = "no \"id\"";
		err = -EINVAL;
	}
	if (err == -EINVAL) {
		log_error("sqlite store %s: %s record rejected: %s: %.*s",
			  s->path, r->name, why, snippet(len), json);
		return err;
	}
	if (err)
		return err;

	st = r == &sf_records[SF_REC_PROCESS] ? s->ins_process : s->ins_record;
	rc = sqlite3_bind_text(st, 1, v[V_ID].s, (int)v[V_ID].n, SQLITE_STATIC);
	if (rc == SQLITE_OK && st == s->ins_process) {
		/* --since: started or ended since, and the end is never earlier */
		const struct sv *t = v[V_END_TIME].st == SV_SET ?
				     &v[V_END_TIME] : &v[V_START_TIME];

		rc = t->st == SV_SET ? sqlite3_bind_double(st, 2, epoch(t)) :
				       sqlite3_bind_null(st, 2);
		if (rc == SQLITE_OK)
			rc = bind_columns(st, r->f, r->n, v, &i);
	} else if (rc == SQLITE_OK) {
		rc = sqlite3_bind_text(st, 2, json, (int)len, SQLITE_STATIC);
		if (rc == SQLITE_OK)
			rc = bind_record(st, r, v);
	}
	/* every parameter is bound again for the next record: no
	 * sqlite3_clear_bindings() per record */
	if (rc != SQLITE_OK)
		return fail(s, "binding record", rc);
	rc = step_done(st);
	switch (rc) {
	case SQLITE_OK:
		if (sqlite3_changes(s->db) > 0)
			s->pending++;
		return 0;
	case SQLITE_CONSTRAINT:
	case SQLITE_MISMATCH:
	case SQLITE_TOOBIG:
		/* this record can never be stored; the batch goes on */
		log_error("sqlite store %s: %s record rejected: %s: %.*s",
			  s->path, r->name, sqlite3_errmsg(s->db), snippet(len),
			  json);
		return -EINVAL;
	default:
		return fail(s, "inserting record", rc);
	}
}

/* Prepare the statement that reads one process's columns by id. */
static int prepare_select(struct store *s)
{
	const struct sf_record *r = &sf_records[SF_REC_PROCESS];
	struct jbuf sql;
	unsigned n = 0;
	int rc;

	if (s->sel_process)
		return 0;
	jbuf_init(&sql);
	sql_put(&sql, "SELECT id");
	columns(&sql, r->f, r->n, COL_NAME, &n);
	sql_put(&sql, " FROM process_rec WHERE id = ?1");
	if (sql.oom || !jbuf_str(&sql)) {
		jbuf_free(&sql);
		return -ENOMEM;
	}
	rc = sqlite3_prepare_v2(s->db, sql.buf, -1, &s->sel_process, NULL);
	jbuf_free(&sql);
	return rc == SQLITE_OK ? 0 : fail(s, "preparing the process reader", rc);
}

/* The JSON of the process record id, made again from its columns. */
int store_process_json(struct store *s, const char *id, size_t idlen,
		       const char **json, size_t *len)
{
	const struct sf_record *r = &sf_records[SF_REC_PROCESS];
	sqlite3_stmt *st;
	int rc, i = 1, err = prepare_select(s);

	if (err)
		return err;
	st = s->sel_process;
	sqlite3_bind_text(st, 1, id, (int)idlen, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		memset(s->rv, 0, sizeof(s->rv));
		s->rv[V_ID].st = SV_SET;
		s->rv[V_ID].s = (const char *)sqlite3_column_text(st, 0);
		s->rv[V_ID].n = (uint32_t)sqlite3_column_bytes(st, 0);
		column_values(st, r->f, r->n, s->rv, &i);
		jbuf_reset(&s->out);
		schema_write(&s->out, r, s->rv);
		err = s->out.oom || !jbuf_str(&s->out) ? -ENOMEM : 0;
	} else {
		err = rc == SQLITE_DONE ? -ENOENT :
		      fail(s, "reading a process record", rc);
	}
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	*json = err ? NULL : s->out.buf;
	*len = err ? 0 : s->out.len;
	return err;
}

/* SQL jobtrace_json(id): a process record's JSON, NULL when none. */
static void sql_jobtrace_json(sqlite3_context *ctx, int argc,
			      sqlite3_value **argv)
{
	struct store *s = sqlite3_user_data(ctx);
	const char *id = (const char *)sqlite3_value_text(argv[0]);
	const char *json;
	size_t len;
	int err;

	(void)argc;
	if (!id) {
		sqlite3_result_null(ctx);
		return;
	}
	err = store_process_json(s, id, (size_t)sqlite3_value_bytes(argv[0]),
				 &json, &len);
	if (!err)
		sqlite3_result_text(ctx, json, (int)len, SQLITE_TRANSIENT);
	else if (err == -ENOENT)
		sqlite3_result_null(ctx);
	else if (err == -ENOMEM)
		sqlite3_result_error_nomem(ctx);
	else
		sqlite3_result_error(ctx, "jobtrace_json: reading the record",
				     -1);
}

/* Queue one record given as schema v1 JSON; committed by store_flush(). */
int store_put_json(struct store *s, const char *json, size_t len)
{
	int err = begin_lazy(s);

	return err ? err : put_json(s, json, len);
}

/* Commit the open transaction; returns records committed or -errno. */
int store_flush(struct store *s)
{
	unsigned n;
	int rc;

	if (!s->in_txn)
		return 0;
	rc = step_done(s->commit);
	if (rc != SQLITE_OK) {
		int err = fail(s, "commit", rc);

		/* Still busy after the timeout: keep the batch for a retry. */
		if ((rc & 0xff) == SQLITE_BUSY &&
		    !sqlite3_get_autocommit(s->db))
			return err;
		if (!sqlite3_get_autocommit(s->db))
			step_done(s->rollback);
		s->in_txn = false;
		s->pending = 0;
		return err;
	}
	n = s->pending;
	s->in_txn = false;
	s->pending = 0;
	s->committed += n;
	s->failed = false;
	return (int)n;
}

/* Records committed since open. */
uint64_t store_count(const struct store *s)
{
	return s->committed;
}

/* Records waiting in the open transaction. */
unsigned store_pending(const struct store *s)
{
	return s->pending;
}

/* The SQLite handle, for readers (report, export). */
sqlite3 *store_handle(struct store *s)
{
	return s->db;
}

/* sql prepared, or kept from before (see store.h). */
int store_stmt(struct store *s, const char *sql, sqlite3_stmt **out)
{
	struct kept_stmt *slot = NULL;
	int rc;

	*out = NULL;
	for (int i = 0; i < KEPT_STMTS; i++) {
		struct kept_stmt *k = &s->kept[i];

		if (!k->st) {
			if (!slot)
				slot = k;
		} else if (!k->busy && !strcmp(k->sql, sql)) {
			k->busy = true;
			*out = k->st;
			return SQLITE_OK;
		}
	}
	rc = sqlite3_prepare_v3(s->db, sql, -1,
				slot ? SQLITE_PREPARE_PERSISTENT : 0, out,
				NULL);
	if (rc != SQLITE_OK || !slot)
		return rc;
	slot->sql = strdup(sql);
	if (slot->sql) {	/* else not kept: finalized when given back */
		slot->st = *out;
		slot->busy = true;
	}
	return SQLITE_OK;
}

/* Give back a statement of store_stmt() (see store.h). */
void store_stmt_done(struct store *s, sqlite3_stmt *st)
{
	if (!st)
		return;
	for (int i = 0; i < KEPT_STMTS; i++)
		if (s->kept[i].st == st) {
			sqlite3_reset(st);
			sqlite3_clear_bindings(st);
			s->kept[i].busy = false;
			return;
		}
	sqlite3_finalize(st);
}

/* The database path given to store_open(), for messages. */
const char *store_path(const struct store *s)
{
	return s->path;
}

/* True when the path no longer names the file the writer has open. */
bool store_replaced(const struct store *s)
{
	struct stat sb;

	if (!s->watch)
		return false;
	if (stat(s->path, &sb) < 0)
		return errno == ENOENT;
	return sb.st_dev != s->dev || sb.st_ino != s->ino;
}

/* Roll back the open transaction: its records are not stored. */
void store_discard(struct store *s)
{
	if (!s->in_txn)
		return;
	step_done(s->rollback);
	s->in_txn = false;
	s->pending = 0;
}

/* Records in the file (both tables); -errno on failure. */
int64_t store_records(struct store *s)
{
	static const char sql[] =
		"SELECT (SELECT count(*) FROM process_rec)"
		" + (SELECT count(*) FROM record)";
	sqlite3_stmt *st = NULL;
	int64_t n;
	int rc;

	rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	n = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) :
			       fail(s, "counting records", rc);
	sqlite3_finalize(st);
	return n;
}

/* ---- keeping the store within its limits -------------------------------- */

static const char *const prune_sql[PR_NR] = {
	[PR_BEGIN] = "BEGIN IMMEDIATE",
	/* oldest first through the time indexes: ?1 cutoff, ?2 how many */
	[PR_OLD_PROCESS] = "DELETE FROM process_rec WHERE rowid IN"
		" (SELECT rowid FROM process_rec WHERE since_time < ?1"
		" ORDER BY since_time LIMIT ?2)",
	[PR_OLD_RECORD] = "DELETE FROM record WHERE rowid IN"
		" (SELECT rowid FROM record WHERE time < ?1"
		" ORDER BY time LIMIT ?2)",
	/* the time of the ?1-th oldest record of both tables */
	[PR_NTH] = "SELECT max(t) FROM"
		" (SELECT t FROM (SELECT since_time AS t FROM process_rec"
		"  WHERE since_time IS NOT NULL ORDER BY since_time LIMIT ?1)"
		" UNION ALL SELECT t FROM (SELECT time AS t FROM record"
		"  WHERE time IS NOT NULL ORDER BY time LIMIT ?1)"
		" ORDER BY t LIMIT ?1)",
	[PR_PAGES] = "SELECT * FROM pragma_page_count, pragma_freelist_count,"
		" pragma_page_size",
	[PR_OLDEST] = "SELECT min(t) FROM"
		" (SELECT min(since_time) AS t FROM process_rec"
		" UNION ALL SELECT min(time) FROM record)",
	[PR_VACUUM] = "PRAGMA incremental_vacuum("
		STORE_STR(PRUNE_VACUUM_PAGES) ")",
};

/* Log a pruning failure once until a step succeeds again. */
static int prune_fail(struct store *s, const char *what, int rc)
{
	if (!s->prune_failed)
		log_error("sqlite store %s: pruning: %s: %s", s->path, what,
			  sqlite3_errmsg(s->db));
	s->prune_failed = true;
	return sql_errno(rc);
}

/* Prepare the pruning statements once; learn the file's auto_vacuum. */
static int prune_prepare(struct store *s)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if (s->pr[0])
		return 0;
	rc = sqlite3_prepare_v2(s->db, "PRAGMA auto_vacuum", -1, &st, NULL);
	if (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		s->incremental = sqlite3_column_int(st, 0) == 2;
	sqlite3_finalize(st);
	for (int i = 0; rc == SQLITE_OK && i < PR_NR; i++)
		rc = sqlite3_prepare_v2(s->db, prune_sql[i], -1, &s->pr[i],
					NULL);
	if (rc == SQLITE_OK)
		return 0;
	rc = prune_fail(s, "preparing statements", rc);
	for (int i = 0; i < PR_NR; i++) {
		sqlite3_finalize(s->pr[i]);
		s->pr[i] = NULL;
	}
	return rc;
}

/* The file's pages: all of them, the free ones, and their size. */
static int read_pages(struct store *s, uint64_t *pages, uint64_t *nfree,
		      uint64_t *size)
{
	sqlite3_stmt *st = s->pr[PR_PAGES];
	int rc = sqlite3_step(st);

	if (rc == SQLITE_ROW) {
		*pages = (uint64_t)sqlite3_column_int64(st, 0);
		*nfree = (uint64_t)sqlite3_column_int64(st, 1);
		*size = (uint64_t)sqlite3_column_int64(st, 2);
	}
	sqlite3_reset(st);
	return rc == SQLITE_ROW ? 0 : prune_fail(s, "counting pages", rc);
}

/*
 * Delete at most n records whose time is before t, from the process
 * table first; returns how many or -errno.
 */
static int64_t delete_before(struct store *s, double t, int64_t n)
{
	static const int which[] = { PR_OLD_PROCESS, PR_OLD_RECORD };
	int64_t done = 0;

	for (size_t i = 0; i < 2 && done < n; i++) {
		sqlite3_stmt *st = s->pr[which[i]];
		int rc;

		sqlite3_bind_double(st, 1, t);
		sqlite3_bind_int64(st, 2, n - done);
		rc = step_done(st);
		sqlite3_clear_bindings(st);
		if (rc != SQLITE_OK)
			return prune_fail(s, "deleting records", rc);
		done += sqlite3_changes(s->db);
	}
	return done;
}

/*
 * Delete the n oldest records of both tables: every one before the time
 * of the n-th oldest, then as many as are left of n at that time.  Sets
 * *none when there is no record with a time; returns how many or -errno.
 */
static int64_t delete_oldest(struct store *s, int64_t n, bool *none)
{
	sqlite3_stmt *st = s->pr[PR_NTH];
	int64_t k, done;
	double t;
	int rc;

	sqlite3_bind_int64(st, 1, n);
	rc = sqlite3_step(st);
	*none = rc != SQLITE_ROW || sqlite3_column_type(st, 0) == SQLITE_NULL;
	t = *none ? 0 : sqlite3_column_double(st, 0);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (rc != SQLITE_ROW)
		return prune_fail(s, "finding the oldest records", rc);
	if (*none)
		return 0;
	done = delete_before(s, t, n);
	if (done < 0 || done >= n)
		return done;
	k = delete_before(s, nextafter(t, INFINITY), n - done);
	return k < 0 ? k : done + k;
}

/* One bounded step towards the limits, in one transaction. */
int store_prune(struct store *s, const struct store_limits *l, double now,
		unsigned max_rows, struct store_pruned *out)
{
	uint64_t pages, nfree, psize, used;
	int64_t expired = 0, for_size = 0;
	bool none = false;
	int rc, err;

	if (s->readonly)
		return -EROFS;
	if (s->in_txn)
		return -EBUSY;
	err = prune_prepare(s);
	if (err)
		return err;
	/* another writer has the store: try later, never wait for it */
	sqlite3_busy_timeout(s->db, 0);
	rc = step_done(s->pr[PR_BEGIN]);
	sqlite3_busy_timeout(s->db, STORE_BUSY_MS);
	if ((rc & 0xff) == SQLITE_BUSY)
		return -EBUSY;
	if (rc != SQLITE_OK)
		return prune_fail(s, "begin", rc);
	err = read_pages(s, &pages, &nfree, &psize);
	if (err)
		goto rollback;
	used = (pages - nfree) * psize;
	if (l->max_bytes && used > l->max_bytes)
		s->shrinking = true;
	else if (!l->max_bytes ||
		 used <= l->max_bytes / 100 * STORE_LOW_WATER)
		s->shrinking = false;

	if (l->retention_s > 0) {
		expired = delete_before(s, now - l->retention_s, max_rows);
		if (expired < 0) {
			err = (int)expired;
			goto rollback;
		}
	}
	if (s->shrinking && expired < max_rows) {
		for_size = delete_oldest(s, max_rows - expired, &none);
		if (for_size < 0) {
			err = (int)for_size;
			goto rollback;
		}
		if (none)
			s->shrinking = false;	/* nothing left it may delete */
	}
	if (s->incremental && (nfree || expired || for_size)) {
		/* a row for each page given back */
		while ((rc = sqlite3_step(s->pr[PR_VACUUM])) == SQLITE_ROW)
			;
		sqlite3_reset(s->pr[PR_VACUUM]);
		if (rc != SQLITE_DONE) {
			err = prune_fail(s, "giving free pages back", rc);
			goto rollback;
		}
	}
	rc = step_done(s->commit);
	if (rc != SQLITE_OK) {
		err = prune_fail(s, "commit", rc);
		goto rollback;
	}
	s->prune_failed = false;
	out->expired += (uint64_t)expired;
	out->for_size += (uint64_t)for_size;
	return expired + for_size >= max_rows || s->shrinking ||
	       (s->incremental && nfree > PRUNE_VACUUM_PAGES);

rollback:
	if (!sqlite3_get_autocommit(s->db))
		step_done(s->rollback);
	return err;
}

/* Measure the store into *u. */
int store_usage(struct store *s, struct store_usage *u)
{
	const char *file = sqlite3_db_filename(s->db, "main");
	uint64_t pages, nfree, psize;
	sqlite3_stmt *st;
	struct stat sb;
	char wal[PATH_MAX];
	int rc, err;

	memset(u, 0, sizeof(*u));
	/* a read in the batch's transaction would pin its snapshot */
	if (s->in_txn)
		return -EBUSY;
	err = prune_prepare(s);
	if (!err)
		err = read_pages(s, &pages, &nfree, &psize);
	if (err)
		return err;
	u->used_bytes = (pages - nfree) * psize;
	u->file_bytes = pages * psize;
	st = s->pr[PR_OLDEST];
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		u->oldest = sqlite3_column_double(st, 0);
	sqlite3_reset(st);
	if (rc != SQLITE_ROW)
		return prune_fail(s, "finding the oldest record", rc);
	/* what is on disk: the file, whose pages the WAL may still hold
	 * in part, and the WAL */
	if (file && *file && stat(file, &sb) == 0) {
		u->file_bytes = (uint64_t)sb.st_size;
		if ((size_t)snprintf(wal, sizeof(wal), "%s-wal", file) <
		    sizeof(wal) && stat(wal, &sb) == 0)
			u->file_bytes += (uint64_t)sb.st_size;
	}
	return 0;
}
