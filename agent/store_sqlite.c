// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * store_sqlite.c - the embedded SQLite store.  Process records keep their
 * schema v1 JSON verbatim plus the columns `jobtrace report` queries; other
 * record types go to one generic table.  Writes are batched: the first put
 * opens a transaction, store_flush() commits it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <sqlite3.h>

#include "json.h"
#include "log.h"
#include "store.h"

#define STORE_SCHEMA_VERSION 1

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
};

static const char schema_sql[] =
	"CREATE TABLE IF NOT EXISTS meta("
	" key TEXT PRIMARY KEY, value TEXT);"
	"INSERT OR IGNORE INTO meta(key, value)"
	" VALUES('schema_version', '1');"
	"CREATE TABLE IF NOT EXISTS process("
	" id TEXT PRIMARY KEY, host TEXT, pid INTEGER, ppid INTEGER,"
	" start_ns INTEGER, parent_start_ns INTEGER,"
	" start_time REAL, end_time REAL,"
	" exe TEXT, comm TEXT, argv TEXT, uid INTEGER, cgroup TEXT,"
	" container TEXT, job_scheduler TEXT, job_id TEXT, job_step TEXT,"
	" job_run TEXT, job_pipeline TEXT, job_task TEXT, job_user TEXT,"
	" job_account TEXT, job_cost_center TEXT,"
	" tool_name TEXT, tool_category TEXT,"
	" exit_code INTEGER, exit_signal INTEGER, oom_killed INTEGER,"
	" cpu_user_s REAL, cpu_sys_s REAL, peak_rss_bytes INTEGER,"
	" read_bytes INTEGER, write_bytes INTEGER, rchar INTEGER,"
	" wchar INTEGER, blkio_delay_s REAL,"
	" rx_bytes INTEGER, tx_bytes INTEGER,"
	" json TEXT NOT NULL);"
	/* partial: most processes of a node belong to no job, and every
	 * index entry is work at ingest */
	"CREATE INDEX IF NOT EXISTS process_job_id ON process(job_id)"
	" WHERE job_id IS NOT NULL;"
	"CREATE INDEX IF NOT EXISTS process_job_run ON process(job_run)"
	" WHERE job_run IS NOT NULL;"
	"CREATE INDEX IF NOT EXISTS process_start_time ON process(start_time);"
	"CREATE INDEX IF NOT EXISTS process_identity"
	" ON process(host, pid, start_ns);"
	"CREATE TABLE IF NOT EXISTS record("
	" id TEXT PRIMARY KEY, type TEXT, time REAL, job_id TEXT,"
	" json TEXT NOT NULL);"
	"CREATE INDEX IF NOT EXISTS record_job_id ON record(job_id)"
	" WHERE job_id IS NOT NULL;"
	"CREATE INDEX IF NOT EXISTS record_time ON record(time);";

static const char ins_process_sql[] =
	"INSERT OR IGNORE INTO process(id, host, pid, ppid, start_ns,"
	" parent_start_ns, start_time, end_time, exe, comm, argv, uid, cgroup,"
	" container, job_scheduler, job_id, job_step, job_run, job_pipeline,"
	" job_task, job_user, job_account, job_cost_center, tool_name,"
	" tool_category, exit_code, exit_signal, oom_killed, cpu_user_s,"
	" cpu_sys_s, peak_rss_bytes, read_bytes, write_bytes, rchar, wchar,"
	" blkio_delay_s, rx_bytes, tx_bytes, json)"
	" VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14,"
	" ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27,"
	" ?28, ?29, ?30, ?31, ?32, ?33, ?34, ?35, ?36, ?37, ?38, ?39)";

static const char ins_record_sql[] =
	"INSERT OR IGNORE INTO record(id, type, time, job_id, json)"
	" VALUES(?1, ?2, ?3, ?4, ?5)";

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

/* Boottime ns to realtime epoch seconds (same arithmetic as record.c). */
static double realtime_s(const struct jt_host *h, uint64_t boot_ns)
{
	return (double)(boot_ns + (uint64_t)h->boot_to_real_ns) / 1e9;
}

/* Bind a C string, or NULL when it is missing or empty. */
static int bind_opt(sqlite3_stmt *st, int i, const char *v)
{
	if (!v || !*v)
		return sqlite3_bind_null(st, i);
	return sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT);
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

	rc = sqlite3_exec(s->db, "PRAGMA journal_mode=WAL;"
			  "PRAGMA synchronous=NORMAL;", NULL, NULL, &msg);
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

/* Check that an existing database carries a schema version we read. */
static int check_version(struct store *s)
{
	sqlite3_stmt *st = NULL;
	int rc, err = 0;

	rc = sqlite3_prepare_v2(s->db, "SELECT value FROM meta"
				" WHERE key = 'schema_version'", -1, &st,
				NULL);
	if (rc != SQLITE_OK)
		return fail(s, "reading schema version", rc);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		int v = sqlite3_column_int(st, 0);

		if (v != STORE_SCHEMA_VERSION) {
			log_error("sqlite store %s: schema version %d,"
				  " expected %d", s->path, v,
				  STORE_SCHEMA_VERSION);
			err = -EPROTO;
		}
	} else if (rc != SQLITE_DONE) {
		err = fail(s, "reading schema version", rc);
	}
	sqlite3_finalize(st);
	return err;
}

/* Open (creating) the database at path; readonly for the CLI. */
int store_open(const char *path, bool readonly, struct store **out)
{
	struct store *s = NULL;
	struct stat sb;
	int flags, rc, err;

	*out = NULL;
	if (readonly && stat(path, &sb) < 0) {
		err = -errno;
		log_error("sqlite store %s: %s", path, strerror(-err));
		return err;
	}

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->path = strdup(path);
	if (!s->path) {
		free(s);
		return -ENOMEM;
	}
	s->readonly = readonly;

	flags = readonly ? SQLITE_OPEN_READONLY :
			   SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
	rc = sqlite3_open_v2(path, &s->db, flags, NULL);
	if (rc != SQLITE_OK) {
		err = fail(s, "open", rc);
		goto cleanup;
	}
	sqlite3_busy_timeout(s->db, 5000);
	sqlite3_extended_result_codes(s->db, 0);

	err = readonly ? check_version(s) : setup_writer(s);
	if (err)
		goto cleanup;
	if (!readonly) {
		err = check_version(s);
		if (err)
			goto cleanup;
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

/* Build the argv column: a JSON array of the NUL-separated arguments. */
static int argv_json(const struct jt_proc *p, struct jbuf *b)
{
	size_t off = 0;

	json_arr_open(b);
	while (p->argv && off < p->argv_len) {
		const char *a = p->argv + off;
		const char *nul = memchr(a, '\0', p->argv_len - off);
		size_t n = nul ? (size_t)(nul - a) : p->argv_len - off;

		json_strn(b, a, n);
		off += n + 1;
	}
	json_arr_close(b);
	return b->oom ? -ENOMEM : 0;
}

/* Bind every column of one process row. */
static int bind_process(sqlite3_stmt *st, const struct jt_host *h,
			const struct jt_proc *p, const char *id,
			const char *argv, const char *json)
{
	const struct jt_counters *c = &p->c;
	const struct jt_job *j = &p->job;
	char comm[sizeof(p->comm) + 1];
	int rc = 0;

	memcpy(comm, p->comm, sizeof(p->comm));
	comm[sizeof(p->comm)] = '\0';

	rc |= sqlite3_bind_text(st, 1, id, -1, SQLITE_TRANSIENT);
	rc |= bind_opt(st, 2, h->name);
	rc |= sqlite3_bind_int64(st, 3, p->pid);
	rc |= sqlite3_bind_int64(st, 4, p->ppid);
	rc |= sqlite3_bind_int64(st, 5, (sqlite3_int64)p->start_ns);
	rc |= sqlite3_bind_int64(st, 6, (sqlite3_int64)p->parent_start_ns);
	rc |= sqlite3_bind_double(st, 7, realtime_s(h, p->start_ns));
	if (p->end_ns)
		rc |= sqlite3_bind_double(st, 8, realtime_s(h, p->end_ns));
	else
		rc |= sqlite3_bind_null(st, 8);
	rc |= bind_opt(st, 9, p->exe);
	rc |= bind_opt(st, 10, comm);
	rc |= sqlite3_bind_text(st, 11, argv, -1, SQLITE_TRANSIENT);
	rc |= sqlite3_bind_int64(st, 12, p->uid);
	rc |= bind_opt(st, 13, p->cgroup);
	rc |= bind_opt(st, 14, p->container);
	rc |= bind_opt(st, 15, j->scheduler);
	rc |= bind_opt(st, 16, j->id);
	rc |= bind_opt(st, 17, j->step);
	rc |= bind_opt(st, 18, j->run);
	rc |= bind_opt(st, 19, j->pipeline);
	rc |= bind_opt(st, 20, j->task);
	rc |= bind_opt(st, 21, j->user);
	rc |= bind_opt(st, 22, j->account);
	rc |= bind_opt(st, 23, j->cost_center);
	rc |= bind_opt(st, 24, p->tool_name);
	rc |= bind_opt(st, 25, p->tool_category);
	if (p->end_ns) {
		rc |= sqlite3_bind_int(st, 26, p->exit_code);
		rc |= sqlite3_bind_int(st, 27, p->exit_signal);
	} else {
		rc |= sqlite3_bind_null(st, 26);
		rc |= sqlite3_bind_null(st, 27);
	}
	rc |= sqlite3_bind_int(st, 28, p->oom_killed ? 1 : 0);
	rc |= sqlite3_bind_double(st, 29, c->cpu_user_s);
	rc |= sqlite3_bind_double(st, 30, c->cpu_sys_s);
	rc |= sqlite3_bind_int64(st, 31, (sqlite3_int64)c->peak_rss_bytes);
	rc |= sqlite3_bind_int64(st, 32, (sqlite3_int64)c->read_bytes);
	rc |= sqlite3_bind_int64(st, 33, (sqlite3_int64)c->write_bytes);
	rc |= sqlite3_bind_int64(st, 34, (sqlite3_int64)c->rchar);
	rc |= sqlite3_bind_int64(st, 35, (sqlite3_int64)c->wchar);
	rc |= sqlite3_bind_double(st, 36, c->blkio_delay_s);
	rc |= sqlite3_bind_int64(st, 37, (sqlite3_int64)c->rx_bytes);
	rc |= sqlite3_bind_int64(st, 38, (sqlite3_int64)c->tx_bytes);
	rc |= sqlite3_bind_text(st, 39, json, -1, SQLITE_TRANSIENT);
	return rc;
}

/* Run a bound insert; count the row if it was new (not a duplicate id). */
static int run_insert(struct store *s, sqlite3_stmt *st, const char *what)
{
	int rc = step_done(st);

	sqlite3_clear_bindings(st);
	if (rc != SQLITE_OK)
		return fail(s, what, rc);
	if (sqlite3_changes(s->db) > 0)
		s->pending++;
	return 0;
}

/* Queue one finished process; committed by store_flush(). */
int store_put_process(struct store *s, const struct jt_host *h,
		      const struct jt_proc *p, const char *id,
		      const char *json)
{
	struct jbuf argv;
	int rc, err;

	if (!id || !json)
		return -EINVAL;
	err = begin_lazy(s);
	if (err)
		return err;

	jbuf_init(&argv);
	err = argv_json(p, &argv);
	if (err)
		goto cleanup;
	rc = bind_process(s->ins_process, h, p, id, jbuf_str(&argv), json);
	if (rc != SQLITE_OK) {
		sqlite3_clear_bindings(s->ins_process);
		err = fail(s, "binding process", rc);
		goto cleanup;
	}
	err = run_insert(s, s->ins_process, "inserting process");

cleanup:
	jbuf_free(&argv);
	return err;
}

/* Queue any other record type (host, job, signal, sample). */
int store_put_record(struct store *s, const char *type, const char *id,
		     uint64_t time_ns, const char *job_id, const char *json)
{
	sqlite3_stmt *st;
	int rc = 0, err;

	if (!type || !id || !json)
		return -EINVAL;
	err = begin_lazy(s);
	if (err)
		return err;

	st = s->ins_record;
	rc |= sqlite3_bind_text(st, 1, id, -1, SQLITE_TRANSIENT);
	rc |= sqlite3_bind_text(st, 2, type, -1, SQLITE_TRANSIENT);
	rc |= sqlite3_bind_double(st, 3, (double)time_ns / 1e9);
	rc |= bind_opt(st, 4, job_id);
	rc |= sqlite3_bind_text(st, 5, json, -1, SQLITE_TRANSIENT);
	if (rc != SQLITE_OK) {
		sqlite3_clear_bindings(st);
		return fail(s, "binding record", rc);
	}
	return run_insert(s, st, "inserting record");
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
