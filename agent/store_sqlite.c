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
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <sqlite3.h>

#include "json_read.h"
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

	/* 8 MiB of page cache: inserts touch index pages all over */
	rc = sqlite3_exec(s->db, "PRAGMA journal_mode=WAL;"
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
	sqlite3_busy_timeout(s->db, 5000);
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
 * into out.  The text is read (strictly) up to that value only: SQLite
 * checks the whole record when it is inserted.  A type written with
 * escapes is refused: no writer of records makes one.
 */
static int json_type_of(const char *json, size_t len, char *out,
			size_t outlen)
{
	struct jr_str type;

	if (jr_member_str(json, len, "type", &type) || type.esc ||
	    type.len >= outlen)
		return -EINVAL;
	memcpy(out, type.s, type.len);
	out[type.len] = '\0';
	return 0;
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
