// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_store.c - the SQLite store and `jobtrace report`/`export` over it:
 * a fixed three-level process tree for job 42 plus unrelated processes.
 */
#include <errno.h>
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

#include "json.h"
#include "log.h"
#include "proc.h"
#include "record.h"
#include "report.h"
#include "store.h"

#define BOOT_TO_REAL 1700000000000000000LL	/* 2023-11-14T22:13:20Z */
#define MS 1000000ULL

/* One test process; times are boottime milliseconds. */
struct spec {
	const char *id;
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
	{ "id-1000", 1000, 1, 10000, 500, 130000, "42", "", "/usr/bin/bash",
	  "bash", ARGV("bash\0run.sh"), 0, 0, false, 1.25, 0.5,
	  10 << 20, 1 << 20, 2 << 20, 1024, 2048 },
	{ "id-1001", 1001, 1000, 11250, 10000, 100000, "42", "bwa",
	  "/opt/bwa/bwa", "bwa", ARGV("bwa\0mem\0-t\0" "4\0ref.fa"), 3, 0,
	  false, 8.5, 1.0, 512ULL << 20, 3ULL << 30, 100, 0, 0 },
	{ "id-1002", 1002, 1000, 20000, 10000, 120000, "42", "", NULL,
	  "python3", ARGV("python3\0-c\0print('\x1b[2J')\0"
			  "--a-rather-long-option=with-a-long-value"),
	  0, 0, false, 0.75, 0.25, 64 << 20, 0, 0, 0, 0 },
	{ "id-1003", 1003, 1001, 25000, 11250, 90000, "42", "samtools",
	  "/usr/bin/samtools", "samtools",
	  ARGV("samtools\0sort\0<script>alert(1)</script>"), -1, 9, true,
	  2.0, 0.25, 3ULL << 29, 0, 5 << 20, 0, 0 },
	{ "id-1004", 1004, 1002, 30000, 20000, 60000, "42", "", "/usr/bin/sort",
	  "sort", ARGV("sort\0-u"), -1, 15, false, 0.5, 0.25, 2048, 10, 20,
	  0, 0 },
	/* unrelated: another job, an older pid 1001, a running one */
	{ "id-2000", 2000, 1, 5000, 500, 8000, "43", "", "/bin/true", "true",
	  ARGV("true"), 0, 0, false, 0, 0, 0, 0, 0, 0, 0 },
	{ "id-1001-old", 1001, 1, 1000, 500, 2000, "7", "", "/bin/ls", "ls",
	  ARGV("ls"), 0, 0, false, 0, 0, 0, 0, 0, 0, 0 },
	{ "id-3000", 3000, 1, 500000, 500, 0, "", "", "/usr/bin/sleep",
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

/* A small schema v1-shaped process record for a spec. */
static char *proc_json(const struct spec *sp)
{
	struct jbuf b;
	size_t off = 0;
	char *s;

	jbuf_init(&b);
	json_obj_open(&b);
	json_kv_str(&b, "type", "process");
	json_kv_u64(&b, "schema", 1);
	json_kv_str(&b, "id", sp->id);
	json_kv_str(&b, "host", "node01");
	json_kv_u64(&b, "pid", sp->pid);
	json_kv_u64(&b, "ppid", sp->ppid);
	json_key(&b, "argv");
	json_arr_open(&b);
	while (off < sp->argv_len) {
		size_t n = strnlen(sp->argv + off, sp->argv_len - off);

		json_strn(&b, sp->argv + off, n);
		off += n + 1;
	}
	json_arr_close(&b);
	json_key(&b, "job");
	json_obj_open(&b);
	json_kv_str(&b, "id", sp->job);
	json_obj_close(&b);
	json_obj_close(&b);
	assert_false(b.oom);
	s = strdup(jbuf_str(&b));
	jbuf_free(&b);
	return s;
}

/* Create the database with every spec and record committed. */
static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct store *s = NULL;
	struct jt_proc p;
	char json[128];

	assert_non_null(f);
	log_init("test_store", 0, LOG_LVL_ERROR);
	snprintf(f->dir, sizeof(f->dir), "/tmp/jt_store_XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->db, sizeof(f->db), "%s/jobtrace.db", f->dir);
	snprintf(f->host.name, sizeof(f->host.name), "node01");
	f->host.boot_to_real_ns = BOOT_TO_REAL;

	assert_int_equal(store_open(f->db, false, &s), 0);
	for (size_t i = 0; i < NSPECS; i++) {
		f->json[i] = proc_json(&specs[i]);
		fill_proc(&specs[i], &p);
		assert_int_equal(store_put_process(s, &f->host, &p,
						   specs[i].id, f->json[i]), 0);
	}
	for (size_t i = 0; i < NOTHERS; i++) {
		snprintf(json, sizeof(json),
			 "{\"type\":\"%s\",\"schema\":1,\"id\":\"%s\"}",
			 others[i].type, others[i].id);
		f->other_json[i] = strdup(json);
		assert_int_equal(store_put_record(s, others[i].type,
						  others[i].id,
						  BOOT_TO_REAL +
						  others[i].ms * MS,
						  others[i].job, json), 0);
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

/* Run a report into a malloc'd string; returns report_run's result. */
static int run_report(const char *db, const struct report_query *q,
		      enum report_format fmt, char **text)
{
	size_t len = 0;
	FILE *out = open_memstream(text, &len);
	int err;

	assert_non_null(out);
	err = report_run(db, q, fmt, out);
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

/* Duplicate ids are ignored; counts only count new rows. */
static void test_duplicate_ignored(void **state)
{
	struct fixture *f = *state;
	struct store *s = NULL;
	struct jt_proc p;

	assert_int_equal(store_open(f->db, false, &s), 0);
	fill_proc(&specs[0], &p);
	assert_int_equal(store_put_process(s, &f->host, &p, specs[0].id,
					   f->json[0]), 0);
	assert_int_equal(store_put_record(s, "job", "rec-job", 1, "42",
					  "{}"), 0);
	assert_int_equal(store_pending(s), 0);
	assert_int_equal(store_flush(s), 0);
	assert_int_equal(store_count(s), 0);
	store_close(s);
}

/* Readonly open works on the file and refuses writes. */
static void test_readonly(void **state)
{
	struct fixture *f = *state;
	struct store *s = NULL;
	char missing[128];

	assert_int_equal(store_open(f->db, true, &s), 0);
	assert_int_equal(store_put_record(s, "job", "x", 1, "42", "{}"),
			 -EROFS);
	store_close(s);

	snprintf(missing, sizeof(missing), "%s/nope.db", f->dir);
	s = (struct store *)1;
	assert_int_equal(store_open(missing, true, &s), -ENOENT);
	assert_null(s);
	assert_int_equal(access(missing, F_OK), -1);
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
	assert_true(strstr(t, "\"id-1002\"") < strstr(t, "\"id-1003\""));
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
	assert_null(strstr(t, "<script>"));
	assert_non_null(strstr(t, "&lt;script&gt;alert(1)&lt;/script&gt;"));
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

	assert_int_equal(report_export(f->db, &q, out), 0);
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

	assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, "UPDATE process SET argv = ?1,"
					    " tool_name = 'a' || char(27) ||"
					    " '[2J' WHERE id = 'id-1000'",
					    -1, &st, NULL), SQLITE_OK);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		sqlite3_bind_text(st, 1, bad[i] ? bad[i] : cont, -1,
				  SQLITE_STATIC);
		assert_int_equal(sqlite3_step(st), SQLITE_DONE);
		sqlite3_reset(st);
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

/* --format words. */
static void test_format_parse(void **state)
{
	enum report_format fmt;

	(void)state;
	assert_int_equal(report_format_parse("text", &fmt), 0);
	assert_int_equal(fmt, REPORT_TEXT);
	assert_int_equal(report_format_parse("json", &fmt), 0);
	assert_int_equal(fmt, REPORT_JSON);
	assert_int_equal(report_format_parse("html", &fmt), 0);
	assert_int_equal(fmt, REPORT_HTML);
	assert_int_equal(report_format_parse("ndjson", &fmt), 0);
	assert_int_equal(fmt, REPORT_NDJSON);
	assert_int_equal(report_format_parse("xml", &fmt), -EINVAL);
	assert_int_equal(report_format_parse("", &fmt), -EINVAL);
	assert_int_equal(report_format_parse("TEXT ", &fmt), -EINVAL);
}

/* Parse one --since form and compare exactly. */
static void since_is(const char *s, double now, double want)
{
	double v = -1;

	if (report_parse_since(s, now, &v) != 0)
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
		if (report_parse_since(bad[i], now, &v) != -EINVAL)
			fail_msg("\"%s\" accepted", bad[i]);
	}
	assert_int_equal(report_parse_since(NULL, now, &v), -EINVAL);
}

/* Run every store and report test. */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format_parse),
		cmocka_unit_test(test_parse_since),
		cmocka_unit_test_setup_teardown(test_duplicate_ignored, setup,
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
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
