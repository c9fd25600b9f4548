// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_store.c - the SQLite store and `jobtrace report`/`export` over it:
 * a fixed three-level process tree for job 42 plus unrelated processes,
 * stored as the agent's own schema v1 records through store_put_json().
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "chquery.h"
#include "chsql.h"
#include "json.h"
#include "log.h"
#include "qcmd.h"
#include "proc.h"
#include "record.h"
#include "schema.h"
#include "report.h"
#include "store.h"
#include "util.h"

#define BOOT_TO_REAL 1700000000000000000LL	/* 2023-11-14T22:13:20Z */
#define MS 1000000ULL

/* One test process; times are boottime milliseconds. */
struct spec {
	uint32_t pid, ppid;
	uint64_t start_ms, pstart_ms, end_ms;
	const char *job;
	const char *tool;
	const char *exe;
	const char *comm;
	const char *argv;
	size_t argv_len;
	int code, sig;
	bool oom;
	double user, sys;
	uint64_t rss, rd, wr, rx, tx;
};

#define ARGV(s) s, sizeof(s)

static const struct spec specs[] = {
	/* job 42: 1000 -> {1001 -> 1003, 1002 -> 1004} */
	{ 1000, 1, 10000, 500, 130000, "42", "", "/usr/bin/bash",
	  "bash", ARGV("bash\0run.sh"), 0, 0, false, 1.25, 0.5,
	  10 << 20, 1 << 20, 2 << 20, 1024, 2048 },
	{ 1001, 1000, 11250, 10000, 100000, "42", "bwa",
	  "/opt/bwa/bwa", "bwa", ARGV("bwa\0mem\0-t\0" "4\0ref.fa"), 3, 0,
	  false, 8.5, 1.0, 512ULL << 20, 3ULL << 30, 100, 0, 0 },
	{ 1002, 1000, 20000, 10000, 120000, "42", "", NULL,
	  "python3", ARGV("python3\0-c\0print('\x1b[2J')\0"
			  "--a-rather-long-option=with-a-long-value"),
	  0, 0, false, 0.75, 0.25, 64 << 20, 0, 0, 0, 0 },
	{ 1003, 1001, 25000, 11250, 90000, "42", "samtools",
	  "/usr/bin/samtools", "samtools",
	  ARGV("samtools\0sort\0<script>alert(1)</script>"), -1, 9, true,
	  2.0, 0.25, 3ULL << 29, 0, 5 << 20, 0, 0 },
	{ 1004, 1002, 30000, 20000, 60000, "42", "", "/usr/bin/sort",
	  "sort", ARGV("sort\0-u"), -1, 15, false, 0.5, 0.25, 2048, 10, 20,
	  0, 0 },
	/* unrelated: another job, an older pid 1001, a running one */
	{ 2000, 1, 5000, 500, 8000, "43", "", "/bin/true", "true",
	  ARGV("true"), 0, 0, false, 0, 0, 0, 0, 0, 0, 0 },
	{ 1001, 1, 1000, 500, 2000, "7", "", "/bin/ls", "ls",
	  ARGV("ls"), 0, 0, false, 0, 0, 0, 0, 0, 0, 0 },
	{ 3000, 1, 500000, 500, 0, "", "", "/usr/bin/sleep",
	  "sleep", ARGV("sleep\0" "1000"), 0, 0, false, 0, 0, 4096, 0, 0,
	  0, 0 },
};

#define NSPECS (sizeof(specs) / sizeof(specs[0]))
#define JOB42 5

/* Other records: time in realtime ms after BOOT_TO_REAL. */
static const struct {
	const char *type, *id, *job;
	uint64_t ms;
} others[] = {
	{ "job", "rec-job", "42", 9000 },
	{ "signal", "rec-oom", "42", 90000 },
	{ "host", "rec-host", NULL, 0 },
};

#define NOTHERS (sizeof(others) / sizeof(others[0]))

struct fixture {
	char dir[64];
	char db[96];
	struct jt_host host;
	char id[NSPECS][37];
	char *json[NSPECS];
	char *other_json[NOTHERS];
};

/* Fill a jt_proc from a spec (strings borrowed, not owned). */
static void fill_proc(const struct spec *sp, struct jt_proc *p)
{
	memset(p, 0, sizeof(*p));
	p->pid = sp->pid;
	p->ppid = sp->ppid;
	p->start_ns = sp->start_ms * MS;
	p->parent_start_ns = sp->pstart_ms * MS;
	p->end_ns = sp->end_ms * MS;
	snprintf(p->comm, sizeof(p->comm), "%s", sp->comm);
	p->exe = (char *)sp->exe;
	p->argv = (char *)sp->argv;
	p->argv_len = sp->argv_len;
	snprintf(p->job.id, sizeof(p->job.id), "%s", sp->job);
	snprintf(p->job.scheduler, sizeof(p->job.scheduler), "slurm");
	snprintf(p->tool_name, sizeof(p->tool_name), "%s", sp->tool);
	p->exit_code = sp->code;
	p->exit_signal = sp->sig;
	p->oom_killed = sp->oom;
	p->c.cpu_user_s = sp->user;
	p->c.cpu_sys_s = sp->sys;
	p->c.peak_rss_bytes = sp->rss;
	p->c.read_bytes = sp->rd;
	p->c.write_bytes = sp->wr;
	p->c.rx_bytes = sp->rx;
	p->c.tx_bytes = sp->tx;
}

/* bwa's files: a path with characters JSON escapes, a size not known, a
 * file of an array of objects kept as one column's JSON text */
static struct jt_file bwa_files[] = {
	{ "/data/ref \"hg38\".fa", JT_FF_READ, 2, 3ULL << 30, 0, 3ULL << 30,
	  true, true, false },
	{ "/scratch/out\t1.sam", JT_FF_WRITE | JT_FF_CREATE | JT_FF_TRUNCATE,
	  1, 0, 12345, 0, false, false, true },
};
static struct jt_files bwa_fileset = {
	bwa_files, 2, 2, { 7, 9, 100, 200 }, { 1, 2, 300, 400 },
};
static struct jt_files no_files;

/* The schema v1 process record of a spec on host h (malloc'd). */
static char *proc_json(const struct jt_host *h, const struct spec *sp,
		       char id[37])
{
	struct jt_proc p;
	struct jbuf b;
	char *s;

	fill_proc(sp, &p);
	/* files: a list (bwa), an empty one (bash), null (the others) */
	if (sp == &specs[1])
		p.files = &bwa_fileset;
	else if (sp == &specs[0])
		p.files = &no_files;
	record_process_id(h, &p, id);
	jbuf_init(&b);
	record_process(&b, h, &p, NULL, id);
	assert_false(b.oom);
	s = strdup(jbuf_str(&b));
	jbuf_free(&b);
	return s;
}

/* A small record of another type with its time (malloc'd). */
static char *other_record(const struct jt_host *h, const char *type,
			  const char *id, uint64_t ms, const char *job)
{
	struct jbuf b;
	char *s;

	jbuf_init(&b);
	if (!strcmp(type, "job")) {
		struct jt_jobinfo ji;

		memset(&ji, 0, sizeof(ji));
		snprintf(ji.job.scheduler, sizeof(ji.job.scheduler), "slurm");
		snprintf(ji.job.id, sizeof(ji.job.id), "%s", job);
		ji.cpus = 4;
		ji.mem_bytes = 8ULL << 30;
		ji.start_ns = BOOT_TO_REAL + ms * MS;
		record_job(&b, h, &ji, "start", id, NULL);
	} else {
		struct sv v[V__N] = { 0 };
		struct jt_job j;

		memset(&j, 0, sizeof(j));
		record_head_values(v, h, id);
		sv_u64(&v[V_TIME], BOOT_TO_REAL + ms * MS);
		if (job) {
			snprintf(j.id, sizeof(j.id), "%s", job);
			record_job_values(v, &j);
		}
		schema_write(&b, sf_record_find(type, strlen(type)), v);
	}
	assert_false(b.oom);
	s = strdup(jbuf_str(&b));
	jbuf_free(&b);
	return s;
}

/* Set up host name, boot id and clock of a test host. */
static void host_init(struct jt_host *h, const char *name, const char *boot)
{
	memset(h, 0, sizeof(*h));
	snprintf(h->name, sizeof(h->name), "%s", name);
	snprintf(h->boot_id, sizeof(h->boot_id), "%s", boot);
	h->boot_to_real_ns = BOOT_TO_REAL;
}

/* Create the database with every spec and record committed. */
static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct store *s = NULL;

	assert_non_null(f);
	log_init("test_store", 0, LOG_LVL_ERROR);
	snprintf(f->dir, sizeof(f->dir), "/tmp/jt_store_XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->db, sizeof(f->db), "%s/jobtrace.db", f->dir);
	host_init(&f->host, "node01", "b0000000-0000-4000-8000-000000000001");

	assert_int_equal(store_open(f->db, false, &s), 0);
	for (size_t i = 0; i < NSPECS; i++) {
		f->json[i] = proc_json(&f->host, &specs[i], f->id[i]);
		assert_int_equal(store_put_json(s, f->json[i],
						strlen(f->json[i])), 0);
	}
	for (size_t i = 0; i < NOTHERS; i++) {
		f->other_json[i] = other_record(&f->host, others[i].type,
						others[i].id, others[i].ms,
						others[i].job);
		assert_int_equal(store_put_json(s, f->other_json[i],
						strlen(f->other_json[i])), 0);
	}
	assert_int_equal(store_pending(s), NSPECS + NOTHERS);
	assert_int_equal(store_flush(s), NSPECS + NOTHERS);
	assert_int_equal(store_count(s), NSPECS + NOTHERS);
	assert_int_equal(store_pending(s), 0);
	store_close(s);
	*state = f;
	return 0;
}

/* Remove the database and its WAL files. */
static int teardown(void **state)
{
	struct fixture *f = *state;
	char path[128];
	const char *sfx[] = { "", "-wal", "-shm" };

	for (size_t i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s%s", f->db, sfx[i]);
		unlink(path);
	}
	rmdir(f->dir);
	for (size_t i = 0; i < NSPECS; i++)
		free(f->json[i]);
	for (size_t i = 0; i < NOTHERS; i++)
		free(f->other_json[i]);
	free(f);
	return 0;
}

/* One value of a query on the database as text (malloc'd, "" for NULL). */
static char *query1(const char *db_path, const char *sql, const char *arg)
{
	sqlite3_stmt *st = NULL;
	sqlite3 *db = NULL;
	char *v;

	assert_int_equal(sqlite3_open(db_path, &db), SQLITE_OK);
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		fail_msg("%s: %s", sql, sqlite3_errmsg(db));
	if (arg)
		sqlite3_bind_text(st, 1, arg, -1, SQLITE_STATIC);
	if (sqlite3_step(st) != SQLITE_ROW)
		fail_msg("%s (%s): no row: %s", sql, arg ? arg : "",
			 sqlite3_errmsg(db));
	v = strdup(sqlite3_column_text(st, 0) ?
		   (const char *)sqlite3_column_text(st, 0) : "");
	sqlite3_finalize(st);
	sqlite3_close(db);
	return v;
}

/* Check one query value. */
static void query_is(const char *db_path, const char *sql, const char *arg,
		     const char *want)
{
	char *v = query1(db_path, sql, arg);

	if (strcmp(v, want) != 0)
		fail_msg("%s (%s): got '%s', want '%s'", sql, arg ? arg : "",
			 v, want);
	free(v);
}

/* Run a report into a malloc'd string; returns report_run's result. */
static int run_report(const char *db, const struct report_query *q,
		      enum report_format fmt, char **text)
{
	size_t len = 0;
	FILE *out = open_memstream(text, &len);
	int err;

	assert_non_null(out);
	err = qcmd_run_path(qcmd_find("report"), db, q,
			    storeq_format_name(fmt), out);
	fclose(out);
	return err;
}

/* The line of a text report that starts with "PID " (malloc'd). */
static char *pid_line(const char *text, unsigned pid)
{
	char key[16];
	const char *p, *e;
	size_t klen;

	klen = (size_t)snprintf(key, sizeof(key), "%u ", pid);
	for (p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strncmp(p, key, klen) == 0) {
			e = strchr(p, '\n');
			return strndup(p, e ? (size_t)(e - p) : strlen(p));
		}
	}
	return NULL;
}

/* Does s end with suffix? */
static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* Check the line of pid ends with want and contains has. */
static void check_line(const char *text, unsigned pid, const char *has,
		       const char *end)
{
	char *line = pid_line(text, pid);

	assert_non_null(line);
	if (has)
		assert_non_null(strstr(line, has));
	if (end && !ends_with(line, end))
		fail_msg("line of %u: \"%s\" does not end with \"%s\"", pid,
			 line, end);
	free(line);
}

/* Offset of the line of a pid, for order checks. */
static long line_pos(const char *text, unsigned pid)
{
	char key[16];
	const char *p;

	snprintf(key, sizeof(key), "\n%u ", pid);
	p = strstr(text, key);
	return p ? p - text : -1;
}

/* Duplicate ids are ignored (a spool replay); counts count new rows. */
static void test_duplicate_ignored(void **state)
{
	struct fixture *f = *state;
	struct store *s = NULL;
	char *again;

	assert_int_equal(store_open(f->db, false, &s), 0);
	/* every record of the fixture again */
	for (size_t i = 0; i < NSPECS; i++)
		assert_int_equal(store_put_json(s, f->json[i],
						strlen(f->json[i])), 0);
	for (size_t i = 0; i < NOTHERS; i++)
		assert_int_equal(store_put_json(s, f->other_json[i],
						strlen(f->other_json[i])), 0);
	/* same id, other content: the first one stays */
	again = strdup(f->json[1]);
	memcpy(strstr(again, "\"bwa\""), "\"BWA\"", 5);
	assert_int_equal(store_put_json(s, again, strlen(again)), 0);
	assert_int_equal(store_pending(s), 0);
	assert_int_equal(store_flush(s), 0);
	assert_int_equal(store_count(s), 0);
	store_close(s);
	free(again);
	query_is(f->db, "SELECT count(*) FROM process", NULL, "8");
	query_is(f->db, "SELECT count(*) FROM record", NULL, "3");
	query_is(f->db, "SELECT comm FROM process WHERE id = ?1", f->id[1],
		 "bwa");
}

/*
 * A writer notices when its file is deleted or replaced under it, still
 * counts what the deleted file holds (NSPECS + NOTHERS from the fixture),
 * and a discarded batch is not committed.
 */
static void test_replaced(void **state)
{
	struct fixture *f = *state;
	struct store *s = NULL;
	char moved[160];
	int fd;

	assert_int_equal(store_open(f->db, false, &s), 0);
	assert_false(store_replaced(s));
	assert_int_equal(store_records(s), NSPECS + NOTHERS);
	snprintf(moved, sizeof(moved), "%s.moved", f->db);
	assert_int_equal(rename(f->db, moved), 0);
	assert_true(store_replaced(s));		/* gone from the path */
	fd = open(f->db, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	close(fd);
	assert_true(store_replaced(s));		/* another file there */
	assert_int_equal(unlink(f->db), 0);
	assert_int_equal(unlink(moved), 0);
	/* a batch in the deleted file is rolled back, the rest counted */
	assert_int_equal(store_put_json(s, f->json[0], strlen(f->json[0])), 0);
	store_discard(s);
	assert_int_equal(store_pending(s), 0);
	assert_int_equal(store_records(s), NSPECS + NOTHERS);
	store_close(s);

	/* closed first (its WAL goes with it): the new file is empty */
	assert_int_equal(store_open(f->db, false, &s), 0);
	assert_false(store_replaced(s));
	assert_int_equal(store_records(s), 0);
	store_close(s);
}

/* Readonly open works on the file and refuses writes. */
static void test_readonly(void **state)
{
	struct fixture *f = *state;
	struct store *s = NULL;
	char missing[128];

	assert_int_equal(store_open(f->db, true, &s), 0);
	assert_int_equal(store_put_json(s, f->json[0], strlen(f->json[0])),
			 -EROFS);
	store_close(s);

	snprintf(missing, sizeof(missing), "%s/nope.db", f->dir);
	s = (struct store *)1;
	assert_int_equal(store_open(missing, true, &s), -ENOENT);
	assert_null(s);
	assert_int_equal(access(missing, F_OK), -1);
}

/* One count of st's only row, st given back. */
static long long count_of(struct store *s, sqlite3_stmt *st)
{
	long long n;

	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	n = sqlite3_column_int64(st, 0);
	store_stmt_done(s, st);
	return n;
}

/*
 * Kept statements: the same text gives the same statement back, reset
 * and unbound; one in use is not handed out twice; a temp view made after
 * a statement was kept (what restricting a connection to a user does)
 * is what the kept statement reads next; text the store cannot compile is
 * an error with nothing kept; past what it keeps, statements are still
 * given (and finalized when given back).
 */
static void test_kept_statements(void **state)
{
	static const char sql[] = "SELECT count(*) FROM process WHERE ?1 IS NULL"
				  " OR job_id = ?1";
	struct fixture *f = *state;
	sqlite3_stmt *a, *b, *c, *many[40];
	struct store *s = NULL;
	long long all;

	assert_int_equal(store_open(f->db, true, &s), 0);
	assert_int_equal(store_stmt(s, sql, &a), SQLITE_OK);
	all = count_of(s, a);
	assert_true(all > 1);
	assert_int_equal(store_stmt(s, sql, &b), SQLITE_OK);
	assert_ptr_equal(a, b);
	assert_int_equal(sqlite3_bind_text(b, 1, "42", -1, SQLITE_STATIC),
			 SQLITE_OK);
	assert_int_equal(store_stmt(s, sql, &c), SQLITE_OK);
	assert_ptr_not_equal(b, c);	/* b is in use */
	assert_int_equal(count_of(s, c), all);
	assert_true(count_of(s, b) < all);
	/* given back unbound: ?1 is NULL again */
	assert_int_equal(store_stmt(s, sql, &a), SQLITE_OK);
	assert_ptr_equal(a, b);
	assert_int_equal(count_of(s, a), all);
	/* a temp view over the name, made after: the kept one reads it */
	assert_int_equal(sqlite3_exec(store_handle(s), "CREATE TEMP VIEW"
				      " process AS SELECT * FROM main.process"
				      " WHERE 0", NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(store_stmt(s, sql, &a), SQLITE_OK);
	assert_ptr_equal(a, b);
	assert_int_equal(count_of(s, a), 0);
	assert_int_equal(store_stmt(s, "SELECT nope FROM nowhere", &a),
			 SQLITE_ERROR);
	assert_null(a);
	for (int i = 0; i < 40; i++) {
		char q[64];

		snprintf(q, sizeof(q), "SELECT %d", i);
		assert_int_equal(store_stmt(s, q, &many[i]), SQLITE_OK);
		assert_non_null(many[i]);
	}
	for (int i = 0; i < 40; i++)
		assert_int_equal(count_of(s, many[i]), i);
	store_stmt_done(s, NULL);
	store_close(s);		/* valgrind: nothing kept is lost */
}

/* The text report: tree order, columns, exit states and totals. */
static void test_report_text(void **state)
{
	struct fixture *f = *state;
	struct report_query q = { .job = "42" };
	char *t = NULL;

	assert_int_equal(run_report(f->db, &q, REPORT_TEXT, &t), 0);
	if (getenv("TEST_STORE_SHOW"))
		fputs(t, stdout);
	assert_non_null(strstr(t, "jobtrace report: job 42: 5 processes,"
			       " 3 failed, 1 OOM-killed (2023-11-14,"
			       " times UTC)\n"));
	for (size_t i = 0; i < JOB42; i++)
		assert_true(line_pos(t, specs[i].pid) > 0);
	assert_int_equal(line_pos(t, 2000), -1);
	assert_int_equal(line_pos(t, 3000), -1);

	/* depth first: a child's subtree before its later sibling */
	assert_true(line_pos(t, 1000) < line_pos(t, 1001));
	assert_true(line_pos(t, 1001) < line_pos(t, 1003));
	assert_true(line_pos(t, 1003) < line_pos(t, 1002));
	assert_true(line_pos(t, 1002) < line_pos(t, 1004));

	check_line(t, 1000, " bash ", "  0");
	check_line(t, 1001, "├─ bwa ", "  3");
	check_line(t, 1003, "│  └─ samtools ", "  SIGKILL OOM");
	check_line(t, 1002, "└─ python3 ", "  0");
	check_line(t, 1004, "   └─ sort ", "  SIGTERM");
	check_line(t, 1000, "22:13:30.000", NULL);
	check_line(t, 1001, "22:13:31.250", NULL);
	check_line(t, 1000, "120.000s", NULL);
	check_line(t, 1000, "1.25/0.50", NULL);
	check_line(t, 1000, "10.0 MiB", NULL);
	check_line(t, 1003, "1.5 GiB", NULL);
	check_line(t, 1001, "3.0 GiB", NULL);
	check_line(t, 1004, "2.0 KiB", NULL);
	check_line(t, 1000, "1.0 KiB/2.0 KiB", NULL);

	/* argv: shown, control characters neutralised, cut at 60 */
	assert_non_null(strstr(t, "bash run.sh\n"));
	assert_non_null(strstr(t, "bwa mem -t 4 ref.fa\n"));
	assert_null(strchr(t, '\x1b'));
	assert_non_null(strstr(t, "python3 -c print('?[2J') --a-rather-long"
			       "-option=with-a-lo...\n"));

	assert_non_null(strstr(t, "\nTOTAL   CPU 15.25s (user 13.00 + sys"
			       " 2.25), peak RSS max 1.5 GiB, read 3.0 GiB,"
			       " write 7.0 MiB, net rx 1.0 KiB tx 2.0 KiB,"
			       " wall 120.000s\n"));
	free(t);
}

/* A superficial JSON check: balanced brackets outside strings. */
static void assert_json_balanced(const char *s)
{
	int depth = 0;
	bool str = false;

	assert_int_equal(s[0], '{');
	for (; *s; s++) {
		if (str) {
			if (*s == '\\' && s[1])
				s++;
			else if (*s == '"')
				str = false;
			continue;
		}
		if (*s == '"')
			str = true;
		else if (*s == '{' || *s == '[')
			depth++;
		else if (*s == '}' || *s == ']')
			assert_true(--depth >= 0);
		else if (depth == 0)
			assert_true(*s == '\n' && s[1] == '\0');
	}
	assert_false(str);
	assert_int_equal(depth, 0);
}

/* The JSON report holds the query, a summary and every stored record. */
static void test_report_json(void **state)
{
	struct fixture *f = *state;
	static const char json_head[] = "{\"query\":{\"job\":\"42\"},"
		"\"summary\":{\"processes\":5,\"failed\":3,\"oom_killed\":1,";
	struct report_query q = { .job = "42" };
	char *t = NULL;

	assert_int_equal(run_report(f->db, &q, REPORT_JSON, &t), 0);
	assert_json_balanced(t);
	assert_true(strncmp(t, json_head, strlen(json_head)) == 0);
	for (size_t i = 0; i < JOB42; i++)
		assert_non_null(strstr(t, f->json[i]));
	assert_null(strstr(t, "id-2000"));
	/* ordered by start time: 1002 started before 1003 */
	assert_true(strstr(t, f->id[2]) < strstr(t, f->id[3]));
	free(t);
}

/* The HTML report escapes what argv carries. */
static void test_report_html(void **state)
{
	struct fixture *f = *state;
	struct report_query q = { .job = "42" };
	char *t = NULL;

	assert_int_equal(run_report(f->db, &q, REPORT_HTML, &t), 0);
	assert_true(strncmp(t, "<!DOCTYPE html>", 15) == 0);
	/* argv is in the page's data, where '<' cannot end the element */
	assert_null(strstr(t, "<script>alert"));
	assert_non_null(strstr(t, "\\u003cscript\\u003ealert(1)"
			       "\\u003c/script\\u003e"));
	assert_non_null(strstr(t, "</html>\n"));
	free(t);
}

/* Export prints the stored JSON verbatim, in time order. */
static void test_export(void **state)
{
	struct fixture *f = *state;
	struct report_query q = { .job = "42" };
	/* job record (9 s), 1000, 1001, 1002, 1003, 1004, signal (90 s) */
	const char *want[] = {
		f->other_json[0], f->json[0], f->json[1], f->json[2],
		f->json[3], f->json[4], f->other_json[1],
	};
	char *t = NULL, *line, *save = NULL;
	size_t len = 0, n = 0;
	FILE *out = open_memstream(&t, &len);

	assert_int_equal(qcmd_run_path(qcmd_find("export"), f->db, &q,
				       NULL, out), 0);
	fclose(out);
	assert_true(ends_with(t, "\n"));
	for (line = strtok_r(t, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		assert_true(n < sizeof(want) / sizeof(want[0]));
		assert_string_equal(line, want[n]);
		n++;
	}
	assert_int_equal(n, sizeof(want) / sizeof(want[0]));
	free(t);
}

/* --pid: the newest process with that pid and its subtree only. */
static void test_report_pid(void **state)
{
	struct fixture *f = *state;
	struct report_query q = { .pid = 1001 };
	char *t = NULL;

	assert_int_equal(run_report(f->db, &q, REPORT_TEXT, &t), 0);
	assert_non_null(strstr(t, "pid 1001: 2 processes, 2 failed"));
	check_line(t, 1001, " bwa ", "  3");
	check_line(t, 1003, "└─ samtools ", "SIGKILL OOM");
	assert_int_equal(line_pos(t, 1000), -1);
	assert_int_equal(line_pos(t, 1002), -1);
	assert_int_equal(line_pos(t, 1004), -1);
	assert_null(strstr(t, " ls "));
	free(t);
}

/* --since: by start or end time; running processes say so. */
static void test_report_since(void **state)
{
	struct fixture *f = *state;
	struct report_query q = { .since = 1700000400.0 };
	char *t = NULL;

	assert_int_equal(run_report(f->db, &q, REPORT_TEXT, &t), 0);
	assert_non_null(strstr(t, "since 2023-11-14T22:20:00.000000Z: 1"
			       " processes, 0 failed, 0 OOM-killed,"
			       " 1 running"));
	check_line(t, 3000, " sleep ", "  running");
	assert_int_equal(line_pos(t, 1000), -1);
	free(t);

	/* 1000 ended at +130 s; 3000 started at +500 s */
	q.since = 1700000125.0;
	assert_int_equal(run_report(f->db, &q, REPORT_TEXT, &t), 0);
	assert_true(line_pos(t, 1000) > 0);
	assert_true(line_pos(t, 3000) > 0);
	assert_int_equal(line_pos(t, 1002), -1);
	free(t);
}

/* Nothing matched: -ENOENT and a message naming the selector. */
static void test_report_nothing(void **state)
{
	struct fixture *f = *state;
	struct report_query q = { .job = "nope" };
	char *t = NULL, msg[256] = "";
	FILE *err = tmpfile();
	int saved = dup(2);
	size_t n;

	assert_non_null(err);
	fflush(stderr);
	dup2(fileno(err), 2);
	assert_int_equal(run_report(f->db, &q, REPORT_TEXT, &t), -ENOENT);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(err);
	n = fread(msg, 1, sizeof(msg) - 1, err);
	msg[n] = '\0';
	fclose(err);
	assert_non_null(strstr(msg, "jobtrace: no records for job nope in "));
	assert_non_null(strstr(msg, f->db));
	free(t);

	t = NULL;
	q.job = NULL;
	q.pid = 99999;
	assert_int_equal(run_report(f->db, &q, REPORT_JSON, &t), -ENOENT);
	free(t);
}

/* A missing database and a bad query are clean errors. */
static void test_report_errors(void **state)
{
	struct fixture *f = *state;
	struct report_query q = { .job = "42" };
	struct report_query two = { .job = "42", .pid = 1 };
	char missing[128], *t = NULL;

	snprintf(missing, sizeof(missing), "%s/missing.db", f->dir);
	assert_int_equal(run_report(missing, &q, REPORT_TEXT, &t), -ENOENT);
	free(t);
	t = NULL;
	assert_int_equal(run_report(f->db, &two, REPORT_TEXT, &t), -EINVAL);
	free(t);
}

/* A corrupt argv column never breaks the report or the terminal. */
static void test_report_hostile_argv(void **state)
{
	static const char *const bad[] = {
		"", "[", "not json", "[\"abc", "[\"\\u1", "[\"\\u12\"]",
		"[\"\\", "[\"a\\u001b[2Jb\"]", "[\"\x1b]0;pwned\x07\"]",
		NULL,	/* filled below: 300 stray continuation bytes */
	};
	struct fixture *f = *state;
	struct report_query q = { .job = "42" };
	sqlite3_stmt *st = NULL;
	sqlite3 *db = NULL;
	char *t = NULL, cont[310];

	memset(cont, 0x80, sizeof(cont));
	memcpy(cont, "[\"", 2);
	memcpy(cont + sizeof(cont) - 3, "\"]", 3);

	/* the columns come from the JSON: a string argv is a corrupt column */
	assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
	/* the columns the store bound from the JSON, as a store another
	 * program wrote might hold them */
	assert_int_equal(sqlite3_prepare_v2(db, "UPDATE process_rec SET"
					    " argv = ?1, tool_name = 'a' ||"
					    " char(27) || '[2J' WHERE id = ?2",
					    -1, &st, NULL), SQLITE_OK);
	sqlite3_bind_text(st, 2, f->id[0], -1, SQLITE_STATIC);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *argv;

		sqlite3_bind_text(st, 1, bad[i] ? bad[i] : cont, -1,
				  SQLITE_STATIC);
		assert_int_equal(sqlite3_step(st), SQLITE_DONE);
		sqlite3_reset(st);
		argv = query1(f->db, "SELECT argv FROM process WHERE id = ?1",
			      f->id[0]);
		assert_string_equal(argv, bad[i] ? bad[i] : cont);
		free(argv);
		for (int fmt = REPORT_TEXT; fmt <= REPORT_HTML; fmt++) {
			assert_int_equal(run_report(f->db, &q, fmt, &t), 0);
			assert_null(strchr(t, '\x1b'));
			assert_null(strchr(t, '\x07'));
			free(t);
			t = NULL;
		}
	}
	sqlite3_finalize(st);
	sqlite3_close(db);
}

/* Every record type lands in its table with its generated columns. */
static void test_put_json_columns(void **state)
{
	struct fixture *f = *state;
	struct jt_proc p;
	char pid1[37];

	/* process rows: identity, tree, times, exit as schema 1 had it */
	query_is(f->db, "SELECT host || '|' || pid || '|' || ppid"
		 " FROM process WHERE id = ?1", f->id[3], "node01|1003|1001");
	query_is(f->db, "SELECT parent_id FROM process WHERE id = ?1",
		 f->id[3], f->id[1]);
	query_is(f->db, "SELECT printf('%.6f|%.6f', start_time, end_time)"
		 " FROM process WHERE id = ?1", f->id[3],
		 "1700000025.000000|1700000090.000000");
	query_is(f->db, "SELECT exit_code || '|' || exit_signal || '|' ||"
		 " oom_killed FROM process WHERE id = ?1", f->id[3], "-1|9|1");
	query_is(f->db, "SELECT exit_code || '|' || exit_signal || '|' ||"
		 " oom_killed FROM process WHERE id = ?1", f->id[1], "3|0|0");
	query_is(f->db, "SELECT quote(end_time) || '|' || quote(exit_signal)"
		 " FROM process WHERE id = ?1", f->id[7], "NULL|NULL");
	query_is(f->db, "SELECT quote(job_id) FROM process WHERE id = ?1",
		 f->id[7], "NULL");
	query_is(f->db, "SELECT job_id || '|' || job_scheduler || '|' ||"
		 " tool_name || '|' || exe || '|' || comm || '|' || argv ||"
		 " '|' || cpu_user_s || '|' || peak_rss_bytes || '|' ||"
		 " read_bytes FROM process WHERE id = ?1", f->id[1],
		 "42|slurm|bwa|/opt/bwa/bwa|bwa|[\"bwa\",\"mem\",\"-t\",\"4\","
		 "\"ref.fa\"]|8.5|536870912|3221225472");
	/* the root's parent is pid 1, not stored: its id all the same */
	fill_proc(&specs[0], &p);
	record_parent_id(&f->host, &p, pid1);
	query_is(f->db, "SELECT parent_id FROM process WHERE id = ?1",
		 f->id[0], pid1);

	/* other types: job at its start, signal's plain job id, host */
	query_is(f->db, "SELECT type || '|' || printf('%.6f', time) || '|' ||"
		 " job_id FROM record WHERE id = ?1", "rec-job",
		 "job|1700000009.000000|42");
	query_is(f->db, "SELECT type || '|' || printf('%.6f', time) || '|' ||"
		 " job_id FROM record WHERE id = ?1", "rec-oom",
		 "signal|1700000090.000000|42");
	query_is(f->db, "SELECT type || '|' || printf('%.6f', time) || '|' ||"
		 " quote(job_id) FROM record WHERE id = ?1", "rec-host",
		 "host|1700000000.000000|NULL");
	query_is(f->db, "SELECT count(*) FROM record WHERE type = 'process'",
		 NULL, "0");
}

/* Times keep their microseconds; sample and job-end times are chosen. */
static void test_put_json_times(void **state)
{
	static const struct {
		uint64_t ns;		/* after BOOT_TO_REAL */
		const char *want;
	} t[] = {
		{ 1000, "1700000000.000001" },
		{ 999999000, "1700000000.999999" },
		{ 500000000, "1700000000.500000" },
		{ 59999999000ULL, "1700000059.999999" },
		{ 86399999999000ULL, "1700086399.999999" },
	};
	struct fixture *f = *state;
	struct jt_jobinfo ji;
	struct store *s = NULL;
	struct jt_proc p;
	struct jbuf b;
	char id[37], key[16];

	jbuf_init(&b);
	assert_int_equal(store_open(f->db, false, &s), 0);
	fill_proc(&specs[1], &p);
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		/* a process starting at that time, and a sample at it */
		p.pid = 5000 + i;
		p.start_ns = t[i].ns;
		p.end_ns = t[i].ns + 1000;
		p.sample_ns = t[i].ns;
		jbuf_reset(&b);
		record_process_id(&f->host, &p, id);
		record_process(&b, &f->host, &p, NULL, id);
		assert_int_equal(store_put_json(s, jbuf_str(&b), b.len), 0);
		snprintf(key, sizeof(key), "s%zu", i);
		jbuf_reset(&b);
		record_sample(&b, &f->host, &p, NULL, key);
		assert_int_equal(store_put_json(s, jbuf_str(&b), b.len), 0);
	}
	/* a job's end record sorts at its end, not its start */
	memset(&ji, 0, sizeof(ji));
	snprintf(ji.job.id, sizeof(ji.job.id), "77");
	ji.start_ns = BOOT_TO_REAL + 1000;
	ji.end_ns = BOOT_TO_REAL + 2500000;
	jbuf_reset(&b);
	record_job(&b, &f->host, &ji, "end", "job-end", NULL);
	assert_int_equal(store_put_json(s, jbuf_str(&b), b.len), 0);
	assert_int_equal(store_flush(s), 2 * 5 + 1);
	store_close(s);

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		char pid[16], want[64];

		snprintf(pid, sizeof(pid), "%zu", 5000 + i);
		query_is(f->db, "SELECT printf('%.6f', start_time) FROM process"
			 " WHERE pid = CAST(?1 AS INTEGER)", pid, t[i].want);
		snprintf(key, sizeof(key), "s%zu", i);
		snprintf(want, sizeof(want), "%s|sample|42", t[i].want);
		query_is(f->db, "SELECT printf('%.6f', time) || '|' || type ||"
			 " '|' || job_id FROM record WHERE id = ?1", key, want);
	}
	query_is(f->db, "SELECT printf('%.6f', time) || '|' || job_id"
		 " FROM record WHERE id = ?1", "job-end",
		 "1700000000.002500|77");
	jbuf_free(&b);
}
/* Records that can never be stored are refused; the batch goes on. */
static void test_put_json_rejects(void **state)
{
	static const char *const bad[] = {
		"", "not json", "[]", "[{\"type\":\"process\"}]", "{}",
		"{\"id\":\"no-type\"}",
		"{\"type\":\"process\"}",
		"{\"type\":\"job\",\"id\":null}",
		"{\"type\":\"process\",\"id\":\"cut\",\"pid\":",
		"{\"type\":\"signal\",\"id\":\"cut\",\"job\":\"4",
		"{\"type\":\"sample\",\"id\":\"bad\",\"time\":tru}",
		"{\"job\":{\"type\":\"process\"},\"id\":\"nested\"}",
	};
	/* an escape is JSON like any other: this is a process record */
	static const char escaped[] = "{\"type\":\"pro\\u0063ess\",\"id\":\"escaped\"}";
	static const char tail[] = "{\"type\":\"host\",\"id\":\"tail\","
		"\"time\":\"2023-11-14T22:13:20.000000Z\"}GARBAGE";
	struct fixture *f = *state;
	struct store *s = NULL;

	assert_int_equal(store_open(f->db, false, &s), 0);
	assert_int_equal(store_put_json(s, f->json[0], strlen(f->json[0])), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (store_put_json(s, bad[i], strlen(bad[i])) != -EINVAL)
			fail_msg("accepted: %s", bad[i]);
		assert_non_null(strstr(log_last_error(), f->db));
		assert_non_null(strstr(log_last_error(), "rejected"));
	}
	assert_int_equal(store_put_json(s, NULL, 0), -EINVAL);
	/* len bounds the record: what follows is not read */
	assert_int_equal(store_put_json(s, tail, sizeof(tail) - 8), 0);
	assert_int_equal(store_put_json(s, escaped, strlen(escaped)), 0);
	assert_int_equal(store_pending(s), 2);
	assert_int_equal(store_flush(s), 2);
	store_close(s);
	query_is(f->db, "SELECT count(*) FROM process_rec WHERE id = 'escaped'",
		 NULL, "1");
	query_is(f->db, "SELECT count(*) FROM record", NULL, "4");
	query_is(f->db, "SELECT json FROM record WHERE id = 'tail'", NULL,
		 "{\"type\":\"host\",\"id\":\"tail\","
		 "\"time\":\"2023-11-14T22:13:20.000000Z\"}");
}

/* parent_id is the id the parent's own record has; null without one. */
static void test_parent_id(void **state)
{
	struct jt_host h, other;
	struct jt_proc parent, child;
	char pid_parent[37], pid_child_parent[37];
	struct jbuf b;

	(void)state;
	host_init(&h, "node01", "b0000000-0000-4000-8000-000000000001");
	host_init(&other, "node02", "b0000000-0000-4000-8000-000000000002");
	fill_proc(&specs[1], &parent);
	fill_proc(&specs[3], &child);
	record_process_id(&h, &parent, pid_parent);
	record_parent_id(&h, &child, pid_child_parent);
	assert_string_equal(pid_parent, pid_child_parent);
	/* the same pids and times on another host are other processes */
	record_parent_id(&other, &child, pid_child_parent);
	assert_string_not_equal(pid_parent, pid_child_parent);

	jbuf_init(&b);
	record_process(&b, &h, &child, NULL, "x");
	assert_non_null(strstr(jbuf_str(&b), "\"ppid\":1001,\"parent_id\":\""));
	assert_non_null(strstr(jbuf_str(&b), pid_parent));
	jbuf_reset(&b);
	record_sample(&b, &h, &child, NULL, "y");
	assert_non_null(strstr(jbuf_str(&b), pid_parent));
	child.ppid = 0;
	jbuf_reset(&b);
	record_process(&b, &h, &child, NULL, "z");
	assert_non_null(strstr(jbuf_str(&b), "\"ppid\":0,\"parent_id\":null,"));
	jbuf_free(&b);
}

/*
 * A store made before members joined the process record (here: made now,
 * the AWS Batch ones dropped again) gets their columns at the next open,
 * keeps its rows, and stores the new members.
 */
static void test_new_columns(void **state)
{
	struct fixture *f = *state;
	struct jt_batch batch = { .attempt = 2, .has_array = true,
				  .array_index = 7, .queue = "q1" };
	struct store *s = NULL;
	sqlite3 *db = NULL;
	struct jt_proc p;
	struct jbuf b;
	char id[37];

	assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
	/* the view's json names every column: a store older than a
	 * column had a view without it, which the writer makes again */
	assert_int_equal(sqlite3_exec(db,
		"DROP VIEW process;"
		"ALTER TABLE process_rec DROP COLUMN job_queue;"
		"ALTER TABLE process_rec DROP COLUMN job_attempt;"
		"ALTER TABLE process_rec DROP COLUMN job_array_index;",
		NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	query_is(f->db, "SELECT count(*) FROM pragma_table_info('process_rec')"
		 " WHERE name IN ('job_queue', 'job_attempt')", NULL, "0");

	/* a reader (the CLI beside an agent not yet restarted) is told
	 * who adds them, rather than failing each query */
	assert_int_equal(store_open(f->db, true, &s), -EPROTO);
	assert_null(s);
	assert_int_equal(store_open(f->db, false, &s), 0);
	fill_proc(&specs[0], &p);
	p.pid = 99999;
	snprintf(p.job.scheduler, sizeof(p.job.scheduler), "aws-batch");
	record_process_id(&f->host, &p, id);
	jbuf_init(&b);
	record_process(&b, &f->host, &p, &batch, id);
	assert_int_equal(store_put_json(s, b.buf, b.len), 0);
	assert_int_equal(store_flush(s), 1);
	store_close(s);
	jbuf_free(&b);
	assert_int_equal(store_open(f->db, true, &s), 0);	/* added */
	store_close(s);
	snprintf(id, sizeof(id), "%zu", NSPECS + 1);
	query_is(f->db, "SELECT count(*) FROM process_rec", NULL, id);
	query_is(f->db, "SELECT job_queue || '|' || job_attempt || '|' ||"
		 " job_array_index FROM process_rec WHERE pid = 99999", NULL,
		 "q1|2|7");
	snprintf(id, sizeof(id), "%zu", NSPECS);
	query_is(f->db, "SELECT count(*) FROM process_rec WHERE job_queue IS"
		 " NULL", NULL, id);
}

/* A store of schema 1 is refused with what to do, by writer and reader. */
static void test_v1_refused(void **state)
{
	struct fixture *f = *state;
	struct report_query q = { .job = "42" };
	struct store *s = (struct store *)1;
	char old[128], *t = NULL;
	sqlite3 *db = NULL;

	snprintf(old, sizeof(old), "%s/v1.db", f->dir);
	assert_int_equal(sqlite3_open(old, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db,
		"CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);"
		"INSERT INTO meta VALUES('schema_version', '1');"
		"CREATE TABLE process(id TEXT PRIMARY KEY, host TEXT,"
		" pid INTEGER, ppid INTEGER, start_ns INTEGER,"
		" parent_start_ns INTEGER, job_id TEXT, json TEXT NOT NULL);"
		"CREATE TABLE record(id TEXT PRIMARY KEY, type TEXT, time REAL,"
		" job_id TEXT, json TEXT NOT NULL);", NULL, NULL, NULL),
		SQLITE_OK);
	sqlite3_close(db);

	assert_int_equal(store_open(old, false, &s), -EPROTO);
	assert_null(s);
	assert_non_null(strstr(log_last_error(), old));
	assert_non_null(strstr(log_last_error(), "older jobtrace"));
	assert_non_null(strstr(log_last_error(), "store schema 1"));
	assert_non_null(strstr(log_last_error(), "mv "));
	assert_int_equal(store_open(old, true, &s), -EPROTO);
	assert_int_equal(run_report(old, &q, REPORT_TEXT, &t), -EPROTO);
	free(t);
	assert_non_null(strstr(log_last_error(), "store schema 1"));
	/* untouched: still schema 1, no table of a later schema added */
	query_is(old, "SELECT value || '|' || (SELECT count(*) FROM"
		 " sqlite_master WHERE type = 'table') FROM meta", NULL, "1|3");

	/* and a newer one, and a database that is not ours */
	assert_int_equal(sqlite3_open(old, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "UPDATE meta SET value = '8'",
				      NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	assert_int_equal(store_open(old, false, &s), -EPROTO);
	assert_non_null(strstr(log_last_error(), "newer jobtrace"));
	assert_int_equal(sqlite3_open(old, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "DROP TABLE meta", NULL, NULL,
				      NULL), SQLITE_OK);
	sqlite3_close(db);
	assert_int_equal(store_open(old, false, &s), -EPROTO);
	assert_non_null(strstr(log_last_error(), "not a jobtrace store"));
	unlink(old);
}

/*
 * Store schemas 3 to 5 (every record's JSON, columns generated by SQLite
 * from it): a writer upgrades them in place, every record read back in;
 * a reader tells the admin to start the agent once.
 */
#define J5(path) "json_extract(json, '" path "')"
static const char store5_sql[] =
	"CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);"
	"INSERT INTO meta VALUES('schema_version', '5');"
	"CREATE TABLE process_rec(id TEXT PRIMARY KEY NOT NULL,"
	" json TEXT NOT NULL,"
	" job_id TEXT AS (" J5("$.job.id") ") STORED,"
	" job_run TEXT AS (" J5("$.job.run") ") STORED,"
	" pid INTEGER AS (" J5("$.pid") ") STORED,"
	" ppid INTEGER AS (" J5("$.ppid") ") STORED,"
	" since_time REAL AS (1.0) STORED);"
	"CREATE INDEX process_job_id ON process_rec(job_id) WHERE job_id IS NOT NULL;"
	"CREATE INDEX process_job_run ON process_rec(job_run) WHERE job_run IS NOT NULL;"
	"CREATE INDEX process_since ON process_rec(since_time);"
	"CREATE INDEX process_pid ON process_rec(pid);"
	"CREATE INDEX process_ppid ON process_rec(ppid);"
	"CREATE VIEW process AS SELECT id, json, job_id, pid FROM process_rec;"
	"CREATE TABLE record(id TEXT PRIMARY KEY NOT NULL, json TEXT NOT NULL,"
	" type TEXT AS (" J5("$.type") "),"
	" time REAL AS (1.0),"
	" job_id TEXT AS (CASE json_type(json, '$.job') WHEN 'object' THEN "
	J5("$.job.id") " WHEN 'text' THEN " J5("$.job") " END));"
	"CREATE INDEX record_job_id ON record(job_id) WHERE job_id IS NOT NULL;"
	"CREATE INDEX record_time ON record(time);";

/* Every column of process and record, row by row, as one text. */
static const char dump_sql[] =
	"SELECT (SELECT group_concat(r, ';') FROM (SELECT quote(id) || quote(json)"
	" || quote(job_id) || quote(job_run) || quote(pid) || quote(ppid) ||"
	" quote(since_time) || quote(host) || quote(parent_id) ||"
	" quote(start_time) || quote(end_time) || quote(exe) ||"
	" quote(exe_truncated) || quote(comm) || quote(argv) || quote(uid) ||"
	" quote(job_scheduler) || quote(tool_name) || quote(exit_code) ||"
	" quote(exit_signal) || quote(oom_killed) || quote(cpu_user_s) ||"
	" quote(peak_rss_bytes) || quote(read_bytes) || quote(rx_bytes) AS r"
	" FROM process ORDER BY id)) || '/' || (SELECT group_concat(r, ';') FROM"
	" (SELECT quote(id) || quote(type) || quote(time) || quote(job_id) AS r"
	" FROM record ORDER BY id))";

/* Put n records into table of a schema-5 store, as that agent did. */
static void store5_put(sqlite3 *db, const char *table,
		       const char *const *json, size_t n)
{
	sqlite3_stmt *st = NULL;
	char sql[128];

	snprintf(sql, sizeof(sql), "INSERT INTO %s(id, json)"
		 " VALUES(json_extract(?1, '$.id'), ?1)", table);
	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	for (size_t i = 0; i < n; i++) {
		sqlite3_bind_text(st, 1, json[i], -1, SQLITE_STATIC);
		assert_int_equal(sqlite3_step(st), SQLITE_DONE);
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
}

static void test_upgrade_from_5(void **state)
{
	struct fixture *f = *state;
	struct store *s = NULL;
	char old[128], *want, *got;
	sqlite3 *db = NULL;

	snprintf(old, sizeof(old), "%s/v5.db", f->dir);
	assert_int_equal(sqlite3_open(old, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, store5_sql, NULL, NULL, NULL), SQLITE_OK);
	/* a signal as older agents wrote it: the job's id alone */
	static const char *const old_oom[] = {
		"{\"type\":\"signal\",\"id\":\"old-oom\",\"time\":"
		"\"2026-11-22T10:03:00Z\",\"job\":\"42\",\"tool\":\"bwa\"}",
	};

	store5_put(db, "process_rec", (const char *const *)f->json, NSPECS);
	store5_put(db, "record", (const char *const *)f->other_json, NOTHERS);
	store5_put(db, "record", old_oom, 1);
	sqlite3_close(db);

	/* a reader: refused, with what to do */
	assert_int_equal(store_open(old, true, &s), -EPROTO);
	assert_non_null(strstr(log_last_error(), "store schema 5"));
	assert_non_null(strstr(log_last_error(), "upgrades the store"));
	/* a writer: upgraded, every record kept, the columns as a new
	 * store's (the fixture's, stored from the same JSON) */
	assert_int_equal(store_open(old, false, &s), 0);
	assert_int_equal(store_records(s), NSPECS + NOTHERS + 1);
	assert_int_equal(store_pending(s), 0);
	store_close(s);
	s = NULL;
	query_is(old, "SELECT value || '|' || (SELECT count(*) FROM sqlite_master"
		 " WHERE name LIKE 'old_%') FROM meta", NULL, "7|0");
	query_is(old, "SELECT job_id || '|' || printf('%.0f', time) FROM record"
		 " WHERE id = ?1", "old-oom", "42|1795341780");
	assert_int_equal(sqlite3_open(old, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "DELETE FROM record WHERE id = 'old-oom'",
				      NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	want = query1(f->db, dump_sql, NULL);
	got = query1(old, dump_sql, NULL);
	assert_true(strlen(want) > 1000);
	assert_string_equal(got, want);
	free(want);
	free(got);
	unlink(old);
}

/*
 * Every record of every type comes back as the JSON that was put: process
 * records made again from their columns (store_process_json(), export),
 * the others as stored.
 */
static void test_round_trip(void **state)
{
	struct fixture *f = *state;
	struct report_query q = { .since = 946684800 };
	struct store *s = NULL;
	char *t = NULL, *line, *save = NULL;
	size_t len = 0, n = 0, seen[SF_REC__N] = { 0 };
	const char *json;
	char *sample = other_record(&f->host, "sample", "rec-sample", 5000,
				    NULL);
	FILE *out;

	/* the fixture has no sample: one of no job */
	assert_int_equal(store_open(f->db, false, &s), 0);
	assert_int_equal(store_put_json(s, sample, strlen(sample)), 0);
	assert_int_equal(store_flush(s), 1);
	store_close(s);
	assert_int_equal(store_open(f->db, true, &s), 0);
	for (size_t i = 0; i < NSPECS; i++) {
		assert_int_equal(store_process_json(s, f->id[i],
						    strlen(f->id[i]), &json,
						    &len), 0);
		assert_int_equal(len, strlen(f->json[i]));
		assert_string_equal(json, f->json[i]);
	}
	assert_int_equal(store_process_json(s, "no-such-id", 10, &json, &len),
			 -ENOENT);
	out = open_memstream(&t, &len);
	assert_int_equal(report_export_store(s, f->db, &q, out), 0);
	fclose(out);
	store_close(s);
	for (line = strtok_r(t, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save), n++) {
		bool found = false;

		for (size_t i = 0; !found && i < NSPECS; i++)
			found = !strcmp(line, f->json[i]);
		for (size_t i = 0; !found && i < NOTHERS; i++)
			found = !strcmp(line, f->other_json[i]);
		found = found || !strcmp(line, sample);
		if (!found)
			fail_msg("exported, never put: %s", line);
		seen[schema_type_of(line, strlen(line)) - sf_records]++;
	}
	assert_int_equal(n, NSPECS + NOTHERS + 1);
	for (int r = 0; r < SF_REC__N; r++)
		if (!seen[r])
			fail_msg("no %s record in the fixture", sf_records[r].name);
	free(t);
	free(sample);
}

/*
 * A process whose job is null and one whose job is an object of nulls stay
 * apart: in the record made again, and in the view's json.
 */
static void test_job_null_or_nulls(void **state)
{
	const struct sf_record *r = &sf_records[SF_REC_PROCESS];
	struct fixture *f = *state;
	struct sv v[V__N];
	struct jbuf scratch, b[2];
	struct store *s = NULL;
	const char *json;
	size_t len;
	char id[2][16] = { "job-null", "job-nulls" };

	jbuf_init(&scratch);
	assert_int_equal(store_open(f->db, false, &s), 0);
	for (int k = 0; k < 2; k++) {
		assert_int_equal(schema_read(r, f->json[0], strlen(f->json[0]),
					     v, &scratch, NULL), 0);
		v[V_JOB].st = k ? SV_SET : SV_NULL;
		for (size_t i = 0; i < sf_job_nfields; i++)
			v[sf_job_fields[i].slot].st = SV_NULL;
		sv_str(&v[V_ID], id[k]);
		jbuf_init(&b[k]);
		schema_write(&b[k], r, v);
		assert_non_null(jbuf_str(&b[k]));
		assert_int_equal(store_put_json(s, b[k].buf, b[k].len), 0);
	}
	assert_non_null(strstr(b[0].buf, "\"job\":null,"));
	assert_non_null(strstr(b[1].buf, "\"job\":{\"scheduler\":null,"));
	assert_int_equal(store_flush(s), 2);
	for (int k = 0; k < 2; k++) {
		assert_int_equal(store_process_json(s, id[k], strlen(id[k]),
						    &json, &len), 0);
		assert_string_equal(json, b[k].buf);
	}
	store_close(s);
	query_is(f->db, "SELECT json_type(json, '$.job') FROM process"
		 " WHERE id = ?1", id[0], "null");
	query_is(f->db, "SELECT json_type(json, '$.job') || '|' ||"
		 " json_type(json, '$.job.id') FROM process WHERE id = ?1",
		 id[1], "object|null");
	for (int k = 0; k < 2; k++)
		jbuf_free(&b[k]);
	jbuf_free(&scratch);
}

/*
 * A path that is not UTF-8: the agent writes its bytes as \u00XX, and the
 * record made again from the columns says so too (the columns hold the
 * bytes themselves), not the characters U+00XX.
 */
static void test_bytes_round_trip(void **state)
{
	static const char from[] = "\"exe\":\"/usr/bin/bash\"";
	static const char to[] = "\"exe\":\"/tmp/a\\u00ffb\\u001bc\\u00e9\"";
	struct fixture *f = *state;
	struct store *s = NULL;
	const char *at = strstr(f->json[0], from), *json;
	char rec[4096], id[37], *hex;
	size_t len;

	assert_non_null(at);
	snprintf(rec, sizeof(rec), "%.*s%s%s", (int)(at - f->json[0]),
		 f->json[0], to, at + strlen(from));
	memcpy(id, f->id[0], sizeof(id));
	memcpy(id, "bytes-id", 8);
	memcpy(strstr(rec, f->id[0]), id, 8);
	assert_int_equal(store_open(f->db, false, &s), 0);
	assert_int_equal(store_put_json(s, rec, strlen(rec)), 0);
	assert_int_equal(store_flush(s), 1);
	assert_int_equal(store_process_json(s, id, strlen(id), &json, &len),
			 0);
	assert_string_equal(json, rec);
	store_close(s);
	hex = query1(f->db, "SELECT hex(exe) FROM process_rec WHERE id = ?1",
		     id);
	assert_string_equal(hex, "2F746D702F61FF621B63E9");
	free(hex);
}

/* The text of the file at top_srcdir/rel (malloc'd). */
static char *read_src(const char *rel)
{
	const char *top = getenv("top_srcdir");
	char path[PATH_MAX], *text;
	FILE *in;
	long n;

	snprintf(path, sizeof(path), "%s/%s", top ? top : ".", rel);
	in = fopen(path, "r");
	if (!in)
		fail_msg("cannot open %s (top_srcdir is set by make check)",
			 path);
	assert_int_equal(fseek(in, 0, SEEK_END), 0);
	n = ftell(in);
	rewind(in);
	text = calloc(1, (size_t)n + 1);
	assert_non_null(text);
	assert_int_equal(fread(text, 1, (size_t)n, in), (size_t)n);
	fclose(in);
	return text;
}

/* text with the members added since as null ("wait", "files",
 * "files_rest", "files_nonregular"), closing each process record
 * (malloc'd) */
static char *with_new_nulls(const char *text)
{
	static const char add[] = ",\"wait\":null,\"files\":null,"
		"\"files_rest\":null,\"files_nonregular\":null";
	static const char proc[] = "{\"type\":\"process\"";
	char *out = calloc(1, strlen(text) * 3 + 1), *o = out;
	const char *line = text, *nl;

	assert_non_null(out);
	for (; *line; line = nl + 1) {
		nl = strchr(line, '\n');
		assert_non_null(nl);
		if (!strncmp(line, proc, sizeof(proc) - 1)) {
			memcpy(o, line, (size_t)(nl - line - 1));
			o += nl - line - 1;
			o = stpcpy(o, add);
			*o++ = '}';
		} else {
			memcpy(o, line, (size_t)(nl - line));
			o += nl - line;
		}
		*o++ = '\n';
	}
	return out;
}

/*
 * A store of schema 6, made by the agent before records were stored once
 * (tests/unit/store-v6.sql: a .dump of a store an integration test made,
 * trimmed): a reader is refused; a writer upgrades it in place, the
 * process records' JSON column goes, and `jobtrace export` prints what it
 * printed before the upgrade (store-v6.ndjson, exported by that agent)
 * byte for byte, but for the process records' "wait", "files",
 * "files_rest" and "files_nonregular", null: members the old agent did not
 * have.
 */
static void test_upgrade_from_6(void **state)
{
	struct fixture *f = *state;
	struct report_query q = { .since = 946684800 };
	struct store *s = NULL;
	char old[128], *sql, *want, *got = NULL;
	sqlite3 *db = NULL;
	size_t len = 0;
	FILE *out;

	snprintf(old, sizeof(old), "%s/v6.db", f->dir);
	sql = read_src("tests/unit/store-v6.ndjson");
	want = with_new_nulls(sql);
	free(sql);
	sql = read_src("tests/unit/store-v6.sql");
	assert_int_equal(sqlite3_open(old, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	query_is(old, "SELECT count(*) FROM pragma_table_info('process_rec')"
		 " WHERE name = 'json'", NULL, "1");

	assert_int_equal(store_open(old, true, &s), -EPROTO);
	assert_non_null(strstr(log_last_error(), "store schema 6"));
	assert_int_equal(store_open(old, false, &s), 0);
	store_close(s);
	query_is(old, "SELECT value FROM meta", NULL, "7");
	query_is(old, "SELECT count(*) FROM pragma_table_info('process_rec')"
		 " WHERE name = 'json'", NULL, "0");
	query_is(old, "SELECT count(*) || '|' || sum(job_obj IS NULL) || '|' ||"
		 " sum(job_obj = 1 AND job_id IS NULL) FROM process_rec", NULL,
		 "24|15|3");

	assert_int_equal(store_open(old, true, &s), 0);
	out = open_memstream(&got, &len);
	assert_int_equal(report_export_store(s, old, &q, out), 0);
	fclose(out);
	store_close(s);
	assert_int_equal(len, strlen(want));
	assert_string_equal(got, want);
	free(got);
	free(want);
	free(sql);
	unlink(old);
}

/* exe_truncated: the record's flag, 0 for a record that has none. */
static void test_exe_truncated_column(void **state)
{
	struct fixture *f = *state;
	static const char *const recs[] = {
		"{\"type\":\"process\",\"id\":\"cut-1\",\"exe\":\"/a/b\","
		"\"exe_truncated\":true}",
		"{\"type\":\"process\",\"id\":\"cut-2\",\"exe\":\"/a/b\"}",
	};
	struct store *s = NULL;

	assert_int_equal(store_open(f->db, false, &s), 0);
	for (size_t i = 0; i < 2; i++)
		assert_int_equal(store_put_json(s, recs[i], strlen(recs[i])), 0);
	assert_int_equal(store_flush(s), 2);
	store_close(s);
	query_is(f->db, "SELECT exe_truncated FROM process WHERE id = ?1",
		 "cut-1", "1");
	query_is(f->db, "SELECT exe_truncated FROM process WHERE id = ?1",
		 "cut-2", "0");
	query_is(f->db, "SELECT exe_truncated FROM process WHERE id = ?1",
		 f->id[1], "0");
}

/* Put job 42's records of a second host, with the same pids and times. */
static void add_second_host(struct fixture *f, char ids[2][37])
{
	struct jt_host h2;
	struct store *s = NULL;

	host_init(&h2, "node02", "b0000000-0000-4000-8000-000000000002");
	assert_int_equal(store_open(f->db, false, &s), 0);
	for (size_t i = 0; i < 2; i++) {
		char *json = proc_json(&h2, &specs[i], ids[i]);

		assert_int_equal(store_put_json(s, json, strlen(json)), 0);
		free(json);
	}
	assert_int_equal(store_flush(s), 2);
	store_close(s);
}

/* A job on two hosts is one report; each host's tree stays its own. */
static void test_report_two_hosts(void **state)
{
	struct fixture *f = *state;
	struct report_query q = { .job = "42" };
	char ids[2][37], *t = NULL, *line;
	const char *p;
	int n = 0;

	add_second_host(f, ids);
	assert_int_equal(run_report(f->db, &q, REPORT_TEXT, &t), 0);
	if (getenv("TEST_STORE_SHOW"))
		fputs(t, stdout);
	assert_non_null(strstr(t, "jobtrace report: job 42: 7 processes on"
			       " 2 hosts, 4 failed, 1 OOM-killed"));
	assert_non_null(strstr(t, "\nPID     HOST   TOOL "));
	/* node02's bwa is the only child of node02's bash */
	for (p = t; (p = strstr(p, "\n1001    node02 ")); p++, n++) {
		line = strndup(p + 1, strcspn(p + 1, "\n"));
		assert_non_null(strstr(line, "└─ bwa "));
		free(line);
	}
	assert_int_equal(n, 1);
	check_line(t, 1001, "node01 ├─ bwa ", "  3");
	check_line(t, 1003, "node01 │  └─ samtools ", "SIGKILL OOM");
	assert_non_null(strstr(t, "\n1000    node02 bash "));
	/* argv lines stay under the tool column */
	assert_non_null(strstr(t, "\n               │ bash run.sh\n"));
	free(t);

	assert_int_equal(run_report(f->db, &q, REPORT_JSON, &t), 0);
	assert_json_balanced(t);
	assert_non_null(strstr(t, "\"processes\":7,"));
	assert_non_null(strstr(t, "\"hosts\":[\"node01\",\"node02\"]"));
	assert_non_null(strstr(t, ids[1]));
	free(t);

	/* the page names both, and each process's host on demand */
	assert_int_equal(run_report(f->db, &q, REPORT_HTML, &t), 0);
	assert_non_null(strstr(t, " on 2 hosts (node01, node02), from "));
	assert_non_null(strstr(t, "\"hosts\":[\"node01\",\"node02\"]"));
	free(t);

	/* one host: no HOST column, and the json names it */
	q.job = "43";
	assert_int_equal(run_report(f->db, &q, REPORT_TEXT, &t), 0);
	assert_null(strstr(t, "HOST"));
	assert_null(strstr(t, " hosts"));
	free(t);
	assert_int_equal(run_report(f->db, &q, REPORT_JSON, &t), 0);
	assert_non_null(strstr(t, "\"hosts\":[\"node01\"]"));
	free(t);
}

/* Insert cost of process records: batches of 1000 in one transaction. */
static void test_put_json_cost(void **state)
{
	struct fixture *f = *state;
	struct store *s = NULL;
	struct jt_proc p;
	struct jbuf b;
	char id[37], path[128], **json;
	double best = 1e9, sum = 0;
	const int batches = 5, per = 1000;

	snprintf(path, sizeof(path), "%s/cost.db", f->dir);
	json = calloc(per, sizeof(*json));
	assert_non_null(json);
	jbuf_init(&b);
	assert_int_equal(store_open(path, false, &s), 0);
	fill_proc(&specs[1], &p);
	for (int k = 0; k < batches; k++) {
		uint64_t t0;
		double us;

		for (int i = 0; i < per; i++) {
			p.pid = 10000 + k * per + i;
			p.start_ns = (uint64_t)(k * per + i) * 1000 * MS;
			p.end_ns = p.start_ns + 5000 * MS;
			record_process_id(&f->host, &p, id);
			jbuf_reset(&b);
			record_process(&b, &f->host, &p, NULL, id);
			json[i] = strdup(jbuf_str(&b));
		}
		t0 = util_now_ns(CLOCK_MONOTONIC);
		for (int i = 0; i < per; i++)
			assert_int_equal(store_put_json(s, json[i],
							strlen(json[i])), 0);
		assert_int_equal(store_flush(s), per);
		us = (util_now_ns(CLOCK_MONOTONIC) - t0) / 1e3 / per;
		sum += us;
		if (us < best)
			best = us;
		for (int i = 0; i < per; i++)
			free(json[i]);
	}
	store_close(s);
	print_message("store_put_json: %zu-byte process records: %.1f us"
		      " each (best batch), %.1f us mean, %d x %d\n",
		      strlen(jbuf_str(&b)), best, sum / batches, batches, per);
	/* a loose bound: only an order-of-magnitude regression fails */
	assert_true(best < 1000);
	jbuf_free(&b);
	free(json);
	snprintf(path, sizeof(path), "%s/cost.db-wal", f->dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/cost.db-shm", f->dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/cost.db", f->dir);
	unlink(path);
}

/* Selector values become safe ClickHouse literals and identifiers. */
static void test_chsql_quote(void **state)
{
	static const struct {
		const char *in, *want;
	} lit[] = {
		{ "42", "'42'" },
		{ "", "''" },
		{ "4'2", "'4\\'2'" },
		{ "a\\b", "'a\\\\b'" },
		{ "x' OR 1=1 --", "'x\\' OR 1=1 --'" },
		{ "\\'", "'\\\\\\''" },
		{ "ünï ✓", "'ünï ✓'" },
	}, id[] = {
		{ "jobtrace", "jobtrace" },
		{ "jt_2", "jt_2" },
		{ "2jt", "`2jt`" },
		{ "a-b", "`a-b`" },
		{ "a`b\\", "`a\\`b\\\\`" },
	};
	struct jbuf b;

	(void)state;
	jbuf_init(&b);
	for (size_t i = 0; i < sizeof(lit) / sizeof(lit[0]); i++) {
		jbuf_reset(&b);
		assert_int_equal(chsql_quote(&b, lit[i].in), 0);
		assert_string_equal(jbuf_str(&b), lit[i].want);
	}
	jbuf_reset(&b);
	assert_int_equal(chsql_quote(&b, "a\nb"), -EINVAL);
	assert_int_equal(chsql_quote(&b, "tab\there"), -EINVAL);
	assert_int_equal(chsql_quote(&b, "del\x7f"), -EINVAL);
	for (size_t i = 0; i < sizeof(id) / sizeof(id[0]); i++) {
		jbuf_reset(&b);
		chsql_ident(&b, id[i].in);
		assert_string_equal(jbuf_str(&b), id[i].want);
	}
	jbuf_free(&b);
}

/* A TabSeparated answer is unescaped into the records, byte for byte. */
static void test_chquery_tsv(void **state)
{
	/* what ClickHouse sends for two records (one with JSON escapes, a
	 * quote and a tab between tokens), a duplicate, an empty line and a
	 * broken record */
	static const char answer[] =
		"{\"type\":\"host\",\"id\":\"h1\",\"time\":"
		"\"2023-11-14T22:13:20.000001Z\",\"x\":\"a\\\\tb\\\\nc\\\\\\\\d"
		"\\'e\",\\t\"y\":1}\n"
		"{\"type\":\"job\",\"id\":\"j1\",\"phase\":\"start\",\"job\":"
		"{\"id\":\"4\\'2\"},\"start_time\":\"2023-11-14T22:13:21Z\"}\n"
		"{\"type\":\"host\",\"id\":\"h1\",\"time\":"
		"\"2023-11-14T22:13:20.000001Z\"}\n"
		"\n"
		"{\"type\":\"host\",\"id\":\"broken\"\n";
	struct fixture *f = *state;
	struct store *s = NULL;
	char *tsv = strdup(answer);

	assert_int_equal(store_open(f->db, false, &s), 0);
	assert_int_equal(chquery_put_tsv(s, tsv, strlen(tsv)), 4);
	assert_int_equal(store_flush(s), 2);
	store_close(s);
	free(tsv);
	/* TSV's \t is a real tab; the JSON's own \t escape stays two bytes */
	query_is(f->db, "SELECT json FROM record WHERE id = ?1", "h1",
		 "{\"type\":\"host\",\"id\":\"h1\",\"time\":"
		 "\"2023-11-14T22:13:20.000001Z\",\"x\":\"a\\tb\\nc\\\\d'e\",\t"
		 "\"y\":1}");
	query_is(f->db, "SELECT job_id || '|' || printf('%.6f', time) FROM"
		 " record WHERE id = ?1", "j1", "4'2|1700000001.000000");
}

/* --format words. */
static void test_format_parse(void **state)
{
	enum report_format fmt;

	(void)state;
	assert_int_equal(storeq_format_parse("text", &fmt), 0);
	assert_int_equal(fmt, REPORT_TEXT);
	assert_int_equal(storeq_format_parse("json", &fmt), 0);
	assert_int_equal(fmt, REPORT_JSON);
	assert_int_equal(storeq_format_parse("html", &fmt), 0);
	assert_int_equal(fmt, REPORT_HTML);
	assert_int_equal(storeq_format_parse("ndjson", &fmt), 0);
	assert_int_equal(fmt, REPORT_NDJSON);
	assert_int_equal(storeq_format_parse("xml", &fmt), -EINVAL);
	assert_int_equal(storeq_format_parse("", &fmt), -EINVAL);
	assert_int_equal(storeq_format_parse("TEXT ", &fmt), -EINVAL);
}

/* Parse one --since form and compare exactly. */
static void since_is(const char *s, double now, double want)
{
	double v = -1;

	if (storeq_parse_since(s, now, &v) != 0)
		fail_msg("\"%s\" rejected", s);
	if (v != want)
		fail_msg("\"%s\": got %.6f, want %.6f", s, v, want);
}

/* Every --since form, and garbage. */
static void test_parse_since(void **state)
{
	static const char *const bad[] = {
		"", "yesterday", "10x", "90", "-5m", "1.5h", "5 m", "m",
		"@", "@abc", "@-5", "@12x", "@ 5",
		"2026-13-01", "2026-02-30", "2026-11-31", "2026-11-2",
		"2026/11/22", "2026-11-22T25:00:00Z", "2026-11-22T10:60",
		"2026-11-22T10:00:00+0200", "2026-11-22T10:00:00Zjunk",
		"2026-11-22T10:00:00.Z", "2026-11-22T10", "2026-11-22 ",
		"1969-12-31", "99999999999999999999s",
	};
	const double now = 1800000000.0;
	double v;

	(void)state;
	since_is("2026-11-22T10:00:00Z", now, 1795341600.0);
	since_is("2026-11-22t10:00:00z", now, 1795341600.0);
	since_is("2026-11-22T10:00:00.5Z", now, 1795341600.5);
	since_is("2026-11-22T10:00:00.25+02:00", now, 1795334400.25);
	since_is("2026-11-22T10:00:00-01:30", now, 1795347000.0);
	since_is("2026-11-22", now, 1795305600.0);
	since_is("2026-11-22 10:30", now, 1795343400.0);
	since_is("2026-11-22 10:30:15", now, 1795343415.0);
	since_is("2024-02-29", now, 1709164800.0);
	since_is("@1700000000", now, 1700000000.0);
	since_is("@1700000000.5", now, 1700000000.5);
	since_is("90s", now, now - 90);
	since_is("15m", now, now - 900);
	since_is("2h", now, now - 7200);
	since_is("3d", now, now - 3 * 86400);
	since_is("0s", now, now);

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (storeq_parse_since(bad[i], now, &v) != -EINVAL)
			fail_msg("\"%s\" accepted", bad[i]);
	}
	assert_int_equal(storeq_parse_since(NULL, now, &v), -EINVAL);
}

/* Run every store and report test. */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format_parse),
		cmocka_unit_test(test_parse_since),
		cmocka_unit_test_setup_teardown(test_duplicate_ignored, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_replaced, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_kept_statements, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_readonly, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_report_text, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_report_json, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_report_html, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_export, setup, teardown),
		cmocka_unit_test_setup_teardown(test_round_trip, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_job_null_or_nulls, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_upgrade_from_6, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_bytes_round_trip, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_report_pid, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_report_since, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_report_nothing, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_report_errors, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_report_hostile_argv,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_put_json_columns, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_put_json_times, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_put_json_rejects, setup,
						teardown),
		cmocka_unit_test(test_parent_id),
		cmocka_unit_test_setup_teardown(test_upgrade_from_5, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_exe_truncated_column, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_v1_refused, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_new_columns, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_report_two_hosts, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_put_json_cost, setup,
						teardown),
		cmocka_unit_test(test_chsql_quote),
		cmocka_unit_test_setup_teardown(test_chquery_tsv, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
