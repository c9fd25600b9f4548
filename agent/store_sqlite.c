// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * store_sqlite.c - the embedded SQLite store.  Every record keeps its
 * schema v1 JSON verbatim; the columns `jobtrace report` queries are
 * generated from it by SQLite.  Process records have their own table, the
 * other types share one.  Writes are batched: the first put opens a
 * transaction, store_flush() commits it.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <sqlite3.h>

#include "log.h"
#include "store.h"

#define STORE_SCHEMA_VERSION 5
/*
 * From this version on only the view changed, which a writer makes anew:
 * 3 -> 4: the process view gained cancelled_write_bytes;
 * 4 -> 5: and exe_truncated.
 */
#define STORE_SCHEMA_VIEW_ONLY 3
#define STORE_STR_(x) #x
#define STORE_STR(x) STORE_STR_(x)
/* generated columns need 3.31; JSON1 is built in since 3.38 */
#define STORE_SQLITE_MIN 3031000
/* how long a write waits for another writer's lock */
#define STORE_BUSY_MS 5000
/* free pages one pruning step gives back to the filesystem (8 MiB) */
#define PRUNE_VACUUM_PAGES 2048

/* The statements of store_prune() and store_usage(). */
enum { PR_BEGIN, PR_OLD_PROCESS, PR_OLD_RECORD, PR_NTH, PR_PAGES,
       PR_OLDEST, PR_VACUUM, PR_NR };

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
	bool watch;		/* a writer's file: dev/ino of the one opened */
	dev_t dev;
	ino_t ino;
	/* keeping within limits: prepared at the first store_prune() */
	sqlite3_stmt *pr[PR_NR];
	bool incremental;	/* auto_vacuum=INCREMENTAL: pages can go back */
	bool shrinking;		/* over max_bytes: pruning to the low water */
	bool prune_failed;	/* a pruning error was logged */
};

/* A field of the record: json_extract of a path. */
#define J(path) "json_extract(json, '" path "')"
/*
 * RFC 3339 "YYYY-MM-DDThh:mm:ss.uuuuuuZ" to epoch seconds with the
 * microseconds.  julianday() and strftime() keep only milliseconds (and
 * '%s' of ".999999" rounds up a second), so the whole seconds come from
 * the first 19 characters and the fraction is added as it is written.
 */
#define EPOCH(t) "(CAST(strftime('%s', substr(" t ", 1, 19)) AS REAL)" \
	" + CAST(substr(" t ", 20, 7) AS REAL))"
#define COL(name, type, expr) " " name " " type " AS (" expr "),"

/*
 * Since schema 3, every table keeps the record's id and its JSON.  Process
 * records go to process_rec, whose only other columns are the few that
 * indexes need (STORED, computed once at insert); the view `process` adds
 * every column reports and sqlite3(1) users query, computed from the JSON
 * when read.  Generated columns, even VIRTUAL ones, are all computed at
 * every insert: 38 of them made an insert cost about 68 us, this layout
 * about 16 us.
 */
#define VCOL(name, expr) " " expr " AS " name ","
static const char schema_sql[] =
	"CREATE TABLE IF NOT EXISTS meta("
	" key TEXT PRIMARY KEY, value TEXT);"
	"INSERT OR IGNORE INTO meta(key, value)"
	" VALUES('schema_version', '" STORE_STR(STORE_SCHEMA_VERSION) "');"
	"CREATE TABLE IF NOT EXISTS process_rec("
	" id TEXT PRIMARY KEY NOT NULL,"
	" json TEXT NOT NULL,"
	" job_id TEXT AS (" J("$.job.id") ") STORED,"
	" job_run TEXT AS (" J("$.job.run") ") STORED,"
	" pid INTEGER AS (" J("$.pid") ") STORED,"
	" ppid INTEGER AS (" J("$.ppid") ") STORED,"
	/* --since: started or ended since, and the end is never earlier */
	" since_time REAL AS (COALESCE(" EPOCH(J("$.end_time")) ", "
	EPOCH(J("$.start_time")) ")) STORED);"
	/* partial: most processes of a node belong to no job, and every
	 * index entry is work at ingest */
	"CREATE INDEX IF NOT EXISTS process_job_id ON process_rec(job_id)"
	" WHERE job_id IS NOT NULL;"
	"CREATE INDEX IF NOT EXISTS process_job_run ON process_rec(job_run)"
	" WHERE job_run IS NOT NULL;"
	"CREATE INDEX IF NOT EXISTS process_since ON process_rec(since_time);"
	/*
	 * --pid: the process, then its descendants by ppid (and parent_id).
	 * Not an index on parent_id: random UUIDs put every insert on
	 * another page, recent pids mostly on the last ones.
	 */
	"CREATE INDEX IF NOT EXISTS process_pid ON process_rec(pid);"
	"CREATE INDEX IF NOT EXISTS process_ppid ON process_rec(ppid);"
	"CREATE VIEW IF NOT EXISTS process AS SELECT id, json, job_id,"
	" job_run, pid, ppid, since_time,"
	VCOL("host", J("$.host"))
	VCOL("parent_id", J("$.parent_id"))
	VCOL("start_time", EPOCH(J("$.start_time")))
	VCOL("end_time", EPOCH(J("$.end_time")))
	VCOL("exe", J("$.exe"))
	VCOL("exe_truncated", "COALESCE(" J("$.exe_truncated") ", 0)")
	VCOL("comm", "NULLIF(" J("$.comm") ", '')")
	VCOL("argv", J("$.argv"))
	VCOL("uid", J("$.uid"))
	VCOL("cgroup", J("$.cgroup"))
	VCOL("container", J("$.container"))
	VCOL("job_scheduler", J("$.job.scheduler"))
	VCOL("job_step", J("$.job.step"))
	VCOL("job_pipeline", J("$.job.pipeline"))
	VCOL("job_task", J("$.job.task"))
	VCOL("job_user", J("$.job.user"))
	VCOL("job_account", J("$.job.account"))
	VCOL("job_cost_center", J("$.job.cost_center"))
	VCOL("tool_name", J("$.tool.name"))
	VCOL("tool_category", J("$.tool.category"))
	VCOL("exit_code", "COALESCE(" J("$.exit.code") ","
	    " CASE WHEN " J("$.exit.signal") " IS NOT NULL THEN -1 END)")
	VCOL("exit_signal", "COALESCE(" J("$.exit.signal") ","
	    " CASE WHEN " J("$.end_time") " IS NOT NULL THEN 0 END)")
	VCOL("oom_killed", "COALESCE(" J("$.exit.oom_killed") ", 0)")
	VCOL("cpu_user_s", J("$.cpu.user_s"))
	VCOL("cpu_sys_s", J("$.cpu.sys_s"))
	VCOL("peak_rss_bytes", J("$.mem.peak_rss_bytes"))
	VCOL("read_bytes", J("$.io.read_bytes"))
	VCOL("write_bytes", J("$.io.write_bytes"))
	VCOL("cancelled_write_bytes", "COALESCE(" J("$.io.cancelled_write_bytes") ", 0)")
	VCOL("rchar", J("$.io.rchar"))
	VCOL("wchar", J("$.io.wchar"))
	VCOL("blkio_delay_s", J("$.io.blkio_delay_s"))
	VCOL("rx_bytes", J("$.net.rx_bytes"))
	" " J("$.net.tx_bytes") " AS tx_bytes FROM process_rec;"
	"CREATE TABLE IF NOT EXISTS record("
	" id TEXT PRIMARY KEY NOT NULL,"
	" json TEXT NOT NULL,"
	COL("type", "TEXT", J("$.type"))
	/* a job record is at its end, or its start while it runs */
	COL("time_text", "TEXT", "CASE WHEN " J("$.type") " = 'job' THEN"
	    " COALESCE(CASE " J("$.phase") " WHEN 'end' THEN"
	    " " J("$.end_time") " END, " J("$.start_time") ")"
	    " ELSE " J("$.time") " END")
	COL("time", "REAL", EPOCH("time_text"))
	/* job is an object, or a signal's plain id */
	" job_id TEXT AS (CASE json_type(json, '$.job')"
	" WHEN 'object' THEN " J("$.job.id")
	" WHEN 'text' THEN " J("$.job") " END));"
	"CREATE INDEX IF NOT EXISTS record_job_id ON record(job_id)"
	" WHERE job_id IS NOT NULL;"
	"CREATE INDEX IF NOT EXISTS record_time ON record(time);";

/* a known id is a replay: ignored; a record without one is an error */
static const char ins_process_sql[] =
	"INSERT INTO process_rec(id, json)"
	" VALUES(json_extract(?1, '$.id'), ?1)"
	" ON CONFLICT(id) DO NOTHING";

static const char ins_record_sql[] =
	"INSERT INTO record(id, json)"
	" VALUES(json_extract(?1, '$.id'), ?1)"
	" ON CONFLICT(id) DO NOTHING";

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

/* Create tables and prepare the statements a writer needs. */
static int setup_writer(struct store *s)
{
	char *msg = NULL;
	int rc;

	/*
	 * 8 MiB of page cache: inserts touch index pages all over.  A new
	 * file gets auto_vacuum=INCREMENTAL (a no-op on one with tables),
	 * so that store_prune() can give pages back; a WAL that grew past
	 * the 4 MiB of an automatic checkpoint (a long reader, a large
	 * transaction) is cut back to that once it is reset.
	 */
	rc = sqlite3_exec(s->db, "PRAGMA auto_vacuum=INCREMENTAL;"
			  "PRAGMA journal_mode=WAL;"
			  "PRAGMA journal_size_limit=4194304;"
			  "PRAGMA synchronous=NORMAL;"
			  "PRAGMA cache_size=-8192;", NULL, NULL, &msg);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(s->db, schema_sql, NULL, NULL, &msg);
	if (rc != SQLITE_OK) {
		log_error("sqlite store %s: creating schema: %s", s->path,
			  msg ? msg : sqlite3_errstr(rc));
		sqlite3_free(msg);
		s->failed = true;
		return sql_errno(rc);
	}

	rc = sqlite3_prepare_v2(s->db, ins_process_sql, -1, &s->ins_process,
				NULL);
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
		return fail(s, "preparing statements", rc);
	return 0;
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
 * and tell the admin what to do with one of another version.
 */
static int check_version(struct store *s)
{
	int v, err;

	err = read_version(s, &v);
	if (err)
		return err;
	if (v == STORE_SCHEMA_VERSION || (v == 0 && !s->readonly))
		return 0;
	if (v >= STORE_SCHEMA_VIEW_ONLY && v < STORE_SCHEMA_VERSION &&
	    !s->readonly) {
		/* only the view changed: the writer makes it anew */
		char *msg = NULL;
		int rc = sqlite3_exec(s->db, "DROP VIEW IF EXISTS process;"
				      "UPDATE meta SET value = '"
				      STORE_STR(STORE_SCHEMA_VERSION) "'"
				      " WHERE key = 'schema_version';",
				      NULL, NULL, &msg);

		if (rc == SQLITE_OK) {
			log_info("sqlite store %s: upgraded from store schema"
				 " %d to %d", s->path, v, STORE_SCHEMA_VERSION);
			return 0;
		}
		log_error("sqlite store %s: upgrading store schema %d: %s",
			  s->path, v, msg ? msg : sqlite3_errstr(rc));
		sqlite3_free(msg);
		return sql_errno(rc);
	}
	if (v >= STORE_SCHEMA_VIEW_ONLY && v < STORE_SCHEMA_VERSION)
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

/* Open (creating) the database at path; readonly for the CLI. */
int store_open(const char *path, bool readonly, struct store **out)
{
	struct store *s = NULL;
	struct stat sb;
	int flags, rc, err;

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

	err = check_version(s);
	if (!err && !readonly)
		err = setup_writer(s);
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
	sqlite3_finalize(s->ins_record);
	sqlite3_finalize(s->begin);
	sqlite3_finalize(s->commit);
	sqlite3_finalize(s->rollback);
	for (int i = 0; i < PR_NR; i++)
		sqlite3_finalize(s->pr[i]);
	sqlite3_close(s->db);
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

/*
 * Copy the value of the top-level string member "type" of a JSON object
 * into out.  Nested values and strings are skipped without being parsed;
 * SQLite validates the whole record when it is inserted.
 */
static int json_type_of(const char *json, size_t len, char *out,
			size_t outlen)
{
	const char *p = json, *end = json + len;
	bool want_key = false;
	int depth = 0;

	while (p < end) {
		const char *str;

		switch (*p) {
		case '{':
		case '[':
			if (++depth == 1 && *p != '{')
				return -EINVAL;
			want_key = depth == 1;
			p++;
			continue;
		case '}':
		case ']':
			if (--depth <= 0)
				return -EINVAL;
			p++;
			continue;
		case ',':
			want_key = depth == 1;
			p++;
			continue;
		case '"':
			break;
		default:
			p++;
			continue;
		}
		/* a string: skip it, and look closer at a member name */
		str = ++p;
		while (p < end && *p != '"')
			p += *p == '\\' ? 2 : 1;
		if (p >= end)
			return -EINVAL;
		p++;
		if (!want_key)
			continue;
		want_key = false;
		if (p - str - 1 != 4 || memcmp(str, "type", 4) != 0)
			continue;
		while (p < end && strchr(" \t\r\n:", *p))
			p++;
		if (p >= end || *p != '"')
			return -EINVAL;
		str = ++p;
		while (p < end && *p != '"' && *p != '\\')
			p++;
		if (p >= end || *p != '"' || (size_t)(p - str) >= outlen)
			return -EINVAL;
		memcpy(out, str, p - str);
		out[p - str] = '\0';
		return 0;
	}
	return -EINVAL;
}

/* How much of a rejected record a message shows. */
static int snippet(size_t len)
{
	return len < 80 ? (int)len : 80;
}

/* Queue one record given as schema v1 JSON; committed by store_flush(). */
int store_put_json(struct store *s, const char *json, size_t len)
{
	sqlite3_stmt *st;
	char type[32];
	int rc, err;

	if (!json || len > INT_MAX || json_type_of(json, len, type,
						   sizeof(type))) {
		log_error("sqlite store %s: record rejected: not a JSON object"
			  " with a \"type\": %.*s", s->path, snippet(len),
			  json ? json : "");
		return -EINVAL;
	}
	err = begin_lazy(s);
	if (err)
		return err;

	st = strcmp(type, "process") ? s->ins_record : s->ins_process;
	rc = sqlite3_bind_text(st, 1, json, (int)len, SQLITE_STATIC);
	if (rc != SQLITE_OK) {
		sqlite3_clear_bindings(st);
		return fail(s, "binding record", rc);
	}
	rc = step_done(st);
	sqlite3_clear_bindings(st);
	switch (rc) {
	case SQLITE_OK:
		if (sqlite3_changes(s->db) > 0)
			s->pending++;
		return 0;
	case SQLITE_CONSTRAINT:		/* no "id" */
	case SQLITE_ERROR:		/* malformed JSON */
	case SQLITE_MISMATCH:
	case SQLITE_TOOBIG:
		/* this record can never be stored; the batch goes on */
		log_error("sqlite store %s: %s record rejected: %s: %.*s",
			  s->path, type, sqlite3_errmsg(s->db), snippet(len),
			  json);
		return -EINVAL;
	default:
		return fail(s, "inserting record", rc);
	}
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
