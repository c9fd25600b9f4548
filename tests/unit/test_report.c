// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_report.c - `jobtrace report` on the records a Slurm job leaves: the
 * job header from its `job` records, the summaries by workflow task and by
 * tool, honest failure counts (SIGPIPE, the extern step's kill at job
 * end), the efficiency from the job's own memory peak, a running job shown
 * from its samples, and stored records of the wrong shape.
 *
 * The records are written here as schema v1 JSON text, so that the test
 * says exactly what a store holds.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "json_check.h"
#include "log.h"
#include "qcmd.h"
#include "report.h"
#include "report_html.h"
#include "store.h"
#include "storeq.h"
#include "test_files.h"

#define GIB (1ULL << 30)
#define MIB (1ULL << 20)

struct fixture {
	char dir[64];
	char db[96];
};

/* One process record (the fields a report reads). */
struct proc {
	const char *host;
	int pid, ppid;
	const char *start, *end;	/* "10:00:00.000000"; end NULL: none */
	const char *job, *step, *task, *tool;
	int code, sig;			/* sig 0: exited with code */
	double user, sys;
	unsigned long long rss, rd, wr, cancelled;
};

/* Job 100: a finished Slurm job with two workflow tasks. */
static const struct proc job100[] = {
	{ "n1", 1000, 999, "10:00:00.000000", "10:01:40.000000", "100",
	  "batch", NULL, "bash", 0, 0, 0.5, 0.1, 4 * MIB, MIB, MIB, 0 },
	{ "n1", 1001, 1000, "10:00:01.000000", "10:01:01.000000", "100",
	  "batch", "align", "bwa", 0, 0, 100, 5, 2 * GIB, 3 * GIB,
	  500 * MIB, 0 },
	{ "n1", 1002, 1000, "10:00:02.000000", "10:00:32.000000", "100",
	  "batch", "align", "bwa", 0, 0, 50, 2, 3 * GIB / 2, GIB, 0, 0 },
	{ "n1", 1003, 1000, "10:01:02.000000", "10:01:12.000000", "100",
	  "batch", "align", "samtools", 3, 0, 8, 1, 300 * MIB, 0, GIB,
	  16 * MIB },
	{ "n1", 1004, 1000, "10:01:13.000000", "10:01:14.000000", "100",
	  "batch", "sort", "yes", 0, 13, 0.2, 0.1, MIB, 0, 0, 0 },
	{ "n1", 1005, 1000, "10:01:13.000000", "10:01:14.000000", "100",
	  "batch", "sort", "head", 0, 0, 0.01, 0.01, MIB, 0, 0, 0 },
	{ "n1", 1006, 1000, "10:01:15.000000", "10:01:30.000000", "100",
	  "batch", "sort", "sort", 0, 0, 5, 1, 200 * MIB, 100 * MIB,
	  100 * MIB, 0 },
	{ "n1", 2000, 1, "09:59:59.000000", "10:01:41.000000", "100",
	  "extern", NULL, "sleep", 0, 9, 0, 0, MIB, 0, 0, 0 },
	{ "n1", 2001, 1, "09:59:59.500000", "10:01:41.000000", "100",
	  "extern", NULL, "sleep", 0, 15, 0, 0, MIB, 0, 0, 0 },
};

#define JOB100_CPU "172.92"	/* user + sys of job100, own figures */

/* The uid of the process and sample records put_proc() writes. */
static int proc_uid = 1000;

/* Put a process record; with sample_time, a sample of it instead. */
static void put_proc(struct store *s, const struct proc *p,
		     const char *sample_time, const char *sample_id)
{
	char step[64], task[64], end[64], ex[96], times[96];

	if (sample_time)
		snprintf(times, sizeof(times), "\"time\":\"2026-03-01T%sZ\",",
			 sample_time);
	else
		times[0] = '\0';
	if (p->end)
		snprintf(end, sizeof(end), "\"2026-03-01T%sZ\"", p->end);
	else
		snprintf(end, sizeof(end), "null");
	if (p->sig)
		snprintf(ex, sizeof(ex), "{\"code\":null,\"signal\":%d,"
			 "\"oom_killed\":false}", p->sig);
	else
		snprintf(ex, sizeof(ex), "{\"code\":%d,\"signal\":null,"
			 "\"oom_killed\":false}", p->code);
	test_put_json(s, "{\"type\":\"%s\",\"schema\":1,\"host\":\"%s\","
	    "\"id\":\"%s%s-%d\",%s\"pid\":%d,\"ppid\":%d,"
	    "\"parent_id\":\"p-%s-%d\","
	    "\"start_time\":\"2026-03-01T%sZ\",%s%s%s\"exe\":\"/usr/bin/%s\","
	    "\"comm\":\"%s\",\"argv\":[\"%s\"],\"uid\":%d,"
	    "\"job\":{\"scheduler\":\"slurm\",\"id\":\"%s\",\"step\":%s,"
	    "\"run\":\"r1\",\"pipeline\":\"rnaseq\",\"task\":%s,"
	    "\"user\":\"alice\",\"account\":\"bio\",\"cost_center\":\"lab-a\"},"
	    "\"tool\":{\"name\":\"%s\",\"category\":null},%s%s%s"
	    "\"cpu\":{\"user_s\":%.6f,\"sys_s\":%.6f},"
	    "\"mem\":{\"peak_rss_bytes\":%llu,\"rss_bytes\":%llu},"
	    "\"io\":{\"read_bytes\":%llu,\"write_bytes\":%llu,"
	    "\"cancelled_write_bytes\":%llu,\"rchar\":0,\"wchar\":0,"
	    "\"blkio_delay_s\":0},\"net\":{\"rx_bytes\":0,\"tx_bytes\":0}}",
	    sample_time ? "sample" : "process", p->host,
	    sample_time ? "s-" : "p-", sample_id ? sample_id : p->host,
	    p->pid, times, p->pid, p->ppid, p->host, p->ppid, p->start,
	    sample_time ? "" : "\"end_time\":", sample_time ? "" : end,
	    sample_time ? "" : ",", p->tool, p->tool, p->tool, proc_uid, p->job,
	    test_jstr(p->step, step, sizeof(step)),
	    test_jstr(p->task, task, sizeof(task)),
	    p->tool, sample_time ? "" : "\"exit\":", sample_time ? "" : ex,
	    sample_time ? "" : ",", p->user, p->sys, p->rss, p->rss, p->rd,
	    p->wr, p->cancelled);
}

/* Put a job record: phase start or end; rest is the tail of the object. */
static void put_job(struct store *s, const char *id, const char *job,
		    const char *phase, const char *rest)
{
	test_put_json(s, "{\"type\":\"job\",\"schema\":1,\"host\":\"n1\",\"id\":\"%s\","
	    "\"phase\":\"%s\",\"job\":{\"scheduler\":\"slurm\",\"id\":\"%s\","
	    "\"step\":null,\"run\":\"r1\",\"pipeline\":\"rnaseq\","
	    "\"task\":null,\"user\":\"alice\",\"account\":\"bio\","
	    "\"cost_center\":\"lab-a\"},\"name\":\"align-all\","
	    "\"partition\":\"batch\",\"node\":\"n1\",\"uid\":1000,%s}",
	    id, phase, job, rest);
}

/* The start record of a job at 10:00:00 with 4 CPUs and 8 GiB. */
static void put_job_start(struct store *s, const char *id, const char *job)
{
	put_job(s, id, job, "start",
		"\"start_time\":\"2026-03-01T10:00:00.000000Z\","
		"\"end_time\":null,\"allocation\":{\"cpus\":4,"
		"\"mem_bytes\":8589934592,\"gpus\":null},\"exit_code\":null,"
		"\"cost\":null");
}

/* Put an end record of job at 10:01:41 with usage (a JSON value) and
 * cost (members "cost", "efficiency", "flags"; NULL: an older agent's
 * "cost": null). */
static void put_job_end_cost(struct store *s, const char *id, const char *job,
			     const char *exit_code, const char *usage,
			     const char *cost)
{
	char rest[4096];

	snprintf(rest, sizeof(rest),
		 "\"start_time\":\"2026-03-01T10:00:00.000000Z\","
		 "\"end_time\":\"2026-03-01T10:01:41.000000Z\","
		 "\"allocation\":{\"cpus\":4,\"mem_bytes\":8589934592,"
		 "\"gpus\":null},\"exit_code\":%s,%s%s%s",
		 exit_code, cost ? cost : "\"cost\":null",
		 usage ? ",\"usage\":" : "", usage ? usage : "");
	put_job(s, id, job, "end", rest);
}

/* Put an end record as an older agent wrote it ("cost": null). */
static void put_job_end(struct store *s, const char *id, const char *job,
			const char *exit_code, const char *usage)
{
	put_job_end_cost(s, id, job, exit_code, usage, NULL);
}

/* Job 100's cost as the agent writes it: 3.6 an hour for a node of 8
 * CPUs and 32 GiB, max(4/8, 8/32) = 0.5 of it for 101 s; 172.92 CPU-s of
 * 4 x 101, 3.2 of 8 GiB. */
static const char cost100[] =
	"\"cost\":{\"amount\":0.0505,\"currency\":\"USD\","
	"\"source\":\"config:node_hour\",\"formula\":\"allocation_share\","
	"\"price_per_hour\":3.6,\"share\":0.5,\"elapsed_s\":101,\"note\":null},"
	"\"efficiency\":{\"cpu\":0.428020,\"memory\":0.4,\"time\":null},"
	"\"flags\":[\"cpu_underused\",\"memory_overrequested\"]";

/* The usage of job 100 as the agent writes it. */
static const char usage100[] =
	"{\"cpu_s\":172.92,\"processes\":9,\"mem_peak_bytes\":3435973837,"
	"\"mem_peak_source\":\"cgroup_v1\",\"steps\":["
	"{\"step\":\"batch\",\"cpu_s\":172.92,\"processes\":7,"
	"\"mem_peak_bytes\":3435973837,\"mem_peak_source\":\"cgroup_v1\"},"
	"{\"step\":\"extern\",\"cpu_s\":0,\"processes\":2,"
	"\"mem_peak_bytes\":1048576,\"mem_peak_source\":\"cgroup_v1\"}]}";

/* Job 200, running: bash -> python (live) -> a finished child. */
static const struct proc job200[] = {
	{ "n1", 3000, 1, "10:00:00.000000", NULL, "200", "batch", NULL,
	  "bash", 0, 0, 0.05, 0.01, 4 * MIB, 0, 0, 0 },
	{ "n1", 3001, 3000, "10:00:01.000000", NULL, "200", "batch",
	  "train", "python3", 0, 0, 21.5, 0.5, 900 * MIB, 50 * MIB,
	  10 * MIB, 0 },
	{ "n1", 3002, 3001, "10:00:02.000000", "10:00:03.000000", "200",
	  "batch", "train", "nvidia-smi", 0, 0, 0.1, 0.01, 20 * MIB, 0, 0,
	  0 },
};

/* Create the store with jobs 100 and 200. */
static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct proc early;
	struct store *s = NULL;

	assert_non_null(f);
	log_init("test_report", 0, LOG_LVL_ERROR);
	snprintf(f->dir, sizeof(f->dir), "/tmp/jt_report_XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->db, sizeof(f->db), "%s/jobtrace.db", f->dir);
	assert_int_equal(store_open(f->db, false, &s), 0);

	for (size_t i = 0; i < sizeof(job100) / sizeof(job100[0]); i++)
		put_proc(s, &job100[i], NULL, NULL);
	put_job_start(s, "j100-start", "100");
	put_job_end_cost(s, "j100-end", "100", "0", usage100, cost100);

	/* job 200: two samples of each live process, the later one wins */
	put_job_start(s, "j200-start", "200");
	early = job200[1];
	early.user = 1;
	early.sys = 0.1;
	put_proc(s, &early, "10:00:05.000000", "a");
	put_proc(s, &job200[1], "10:00:25.000000", "b");
	put_proc(s, &job200[0], "10:00:05.000000", "a");
	put_proc(s, &job200[0], "10:00:25.000000", "b");
	/* the finished child: a sample while it ran, and its record; the
	 * sample's start 1 us off, as agents before the clock offset fix in
	 * record.c wrote them: still the same process, not a running copy */
	early = job200[2];
	early.start = "10:00:02.000001";
	put_proc(s, &early, "10:00:02.500000", "a");
	put_proc(s, &job200[2], NULL, NULL);
	assert_true(store_flush(s) > 0);
	store_close(s);
	*state = f;
	return 0;
}

/* Remove the database and its WAL files. */
static int teardown(void **state)
{
	struct fixture *f = *state;
	const char *sfx[] = { "", "-wal", "-shm" };
	char path[128];

	for (size_t i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s%s", f->db, sfx[i]);
		unlink(path);
	}
	rmdir(f->dir);
	free(f);
	return 0;
}

/* The report of q on the fixture's store in fmt (malloc'd); must succeed. */
static char *report(void **state, const struct report_query *q,
		    enum report_format fmt)
{
	struct fixture *f = *state;
	char *text = test_report_of(f->db, q, fmt);

	if (getenv("TEST_REPORT_SHOW"))
		fputs(text, stdout);
	return text;
}

/* Run SQL on the fixture's store (to change what it holds). */
static void sql(void **state, const char *stmt)
{
	struct fixture *f = *state;
	sqlite3 *db = NULL;

	assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
	if (sqlite3_exec(db, stmt, NULL, NULL, NULL) != SQLITE_OK)
		fail_msg("%s: %s", stmt, sqlite3_errmsg(db));
	sqlite3_close(db);
}

/* The line of text that contains key (malloc'd), or NULL. */
static char *line_with(const char *text, const char *key)
{
	const char *p = strstr(text, key), *b, *e;

	if (!p)
		return NULL;
	if (*p == '\n')
		p++;
	for (b = p; b > text && b[-1] != '\n'; b--)
		;
	e = strchr(p, '\n');
	return strndup(b, e ? (size_t)(e - b) : strlen(b));
}

/* The line with key must also contain has. */
static void line_has(const char *text, const char *key, const char *has)
{
	char *line = line_with(text, key);

	if (!line)
		fail_msg("no line with \"%s\"", key);
	if (!strstr(line, has))
		fail_msg("line \"%s\" lacks \"%s\"", line, has);
	free(line);
}

/* A JSON path (or a line's key) and the value it must have (contain). */
struct want {
	const char *path, *value;
};

/* Check every value of a JSON text against a table. */
static void jq_all(const char *json, const struct want *w, size_t n)
{
	assert_true(json_valid(json));
	for (size_t i = 0; i < n; i++) {
		char *v = test_jq(json, w[i].path);

		if (strcmp(v, w[i].value))
			fail_msg("%s: got '%s', want '%s'", w[i].path, v,
				 w[i].value);
		free(v);
	}
}

/* Every line with w[i].path in it must also contain w[i].value. */
static void lines_have(const char *text, const struct want *w, size_t n)
{
	for (size_t i = 0; i < n; i++)
		line_has(text, w[i].path, w[i].value);
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Offset of s in text; fails when missing. */
static long pos(const char *text, const char *s)
{
	const char *p = strstr(text, s);

	if (!p)
		fail_msg("missing: \"%s\"", s);
	return p - text;
}

/* The header says what seff says first; failures are honest. */
static void test_header(void **state)
{
	static const struct want exits[] = {
		{ "\n1004 ", "SIGPIPE (reader closed)" },
		{ "\n2000 ", "SIGKILL (job end)" },
		{ "\n2001 ", "SIGTERM (job end)" },
		{ "\n1003 ", "  3" },
	};
	struct report_query q = { .job = "100" };
	char *t = report(state, &q, REPORT_TEXT);

	pos(t, "jobtrace report: job 100: 9 processes, 1 failed,"
	    " 0 OOM-killed, 2 killed at job end (extern step),"
	    " 1 SIGPIPE (reader closed) (2026-03-01, times UTC)\n"
	    "Job ID:      100 (slurm)\n"
	    "Job name:    align-all\n"
	    "User:        alice (uid 1000)\n"
	    "Account:     bio, cost center lab-a\n"
	    "State:       COMPLETED, exit code 0\n"
	    "Elapsed:     00:01:41 (started 2026-03-01T10:00:00.000000Z)\n"
	    "Run:         r1, pipeline rnaseq\n"
	    "Nodes:       1 (n1), partition batch\n"
	    "Cost:        0.050500 USD = 3.6/h x share 0.5 x 101.0 s / 3600\n"
	    "             price config:node_hour, formula allocation_share\n"
	    "Efficiency:  CPU 42.8%, memory 40.0%, time - (no time limit known)\n"
	    "Flags:       cpu_underused, memory_overrequested\n\nEfficiency");
	/* the exits say why they are not failures */
	lines_have(t, exits, N(exits));
	free(t);
}

/* By task and by tool: most CPU first, before the tree; own figures. */
static void test_summaries(void **state)
{
	static const struct want lines[] = {
		/* align: 3 processes, 100 s of wall, 71 s span, 166 s CPU */
		{ "\n  align ", "      3 " },
		{ "\n  align ", " 100.00s      71.00s     166.00s     166% " },
		{ "\n  align ", "2.0 GiB    4.0 GiB    1.5 GiB      1" },
		{ "\n  align ", "      1  cancelled 16.0 MiB" },
		{ "\n  sort ", "1 SIGPIPE" },
		{ "\n  (no task) ", "2 killed at job end" },
		{ "\n  bwa ", " 157.00s " },
		{ "\n  sleep ", "2 killed at job end" },
		/* every process's own figures once */
		{ "\nTOTAL ", "CPU " JOB100_CPU "s" },
		{ "\nTOTAL ", "read 4.1 GiB, write 1.6 GiB (cancelled 16.0 MiB)" },
	};
	/* in this order: tasks and tools by CPU, then TOTAL, then the tree */
	static const char *const order[] = {
		"\nBy workflow task", "\n  align ", "\n  sort ",
		"\n  (no task) ", "\nBy tool", "\n  bwa ", "\n  samtools ",
		"\nTOTAL ", "\nProcess tree:", "\n1000 ",
	};
	struct report_query q = { .job = "100" };
	char *t = report(state, &q, REPORT_TEXT);

	for (size_t i = 1; i < N(order); i++)
		assert_true(pos(t, order[i - 1]) < pos(t, order[i]));
	lines_have(t, lines, N(lines));
	free(t);

	/* --no-tree: the same summaries, no tree */
	q.no_tree = true;
	t = report(state, &q, REPORT_TEXT);
	lines_have(t, lines, N(lines));
	assert_null(strstr(t, "Process tree"));
	assert_null(strstr(t, "\n1000 "));
	free(t);
}

/* The efficiency uses the job's memory peak from its end record. */
static void test_efficiency(void **state)
{
	static const struct want lines[] = {
		/* 3.2 GiB of the cgroup, not the largest process's 2 GiB */
		{ "\n  job 100 ", "memory    3.2 GiB of 8.0 GiB =  40.0%"
		  " (cgroup v1 memory.max_usage_in_bytes)" },
		{ "\n  job 100 ", "CPU    172.92 s of    404.00 s =  42.8%" },
		{ "\n  step batch ", "3.2 GiB" },
		{ "\n  step extern ", "1.0 MiB" },
	};
	struct report_query q = { .job = "100" };
	char *t = report(state, &q, REPORT_TEXT);

	lines_have(t, lines, N(lines));
	assert_null(strstr(t, "largest single process"));
	free(t);
}

/* The JSON report: job, summaries by task and tool, records. */
static void test_json(void **state)
{
	static const struct want job100_json[] = {
		{ "$.summary.processes", "9" },
		{ "$.summary.failed", "1" },
		{ "$.summary.sigpipe", "1" },
		{ "$.summary.killed_at_job_end", "2" },
		{ "$.summary.cancelled_write_bytes", "16777216" },
		{ "$.job.state", "COMPLETED" },
		{ "$.job.exit_code", "0" },
		{ "$.job.user", "alice" },
		{ "$.job.cost_center", "lab-a" },
		{ "$.job.elapsed_s", "101" },
		{ "$.job.cost.amount", "0.0505" },
		{ "$.job.cost.currency", "USD" },
		{ "$.job.cost.formula", "allocation_share" },
		{ "$.job.cost.share", "0.5" },
		{ "$.job.efficiency.cpu", "0.42802" },
		{ "$.job.efficiency.time", "" },
		{ "$.job.flags", "[\"cpu_underused\",\"memory_overrequested\"]" },
		{ "$.efficiency.job.mem_peak_bytes", "3435973837" },
		{ "$.efficiency.job.mem_peak_source", "cgroup_v1" },
		{ "$.efficiency.job.peak_rss_bytes", "2147483648" },
		{ "$.by_task[0].task", "align" },
		{ "$.by_task[0].processes", "3" },
		{ "$.by_task[0].cpu_s", "166" },
		{ "$.by_task[0].failed", "1" },
		{ "$.by_task[2].task", "" },
		{ "$.by_tool[0].tool", "bwa" },
		{ "$.by_tool[0].processes", "2" },
		{ "$.processes[8].pid", "1006" },
		{ "$.processes[9]", "" },
		{ "$.samples", "[]" },
	};
	struct report_query q = { .job = "100" };
	char *t = report(state, &q, REPORT_JSON);

	jq_all(t, job100_json, N(job100_json));
	free(t);

	q.no_tree = true;
	t = report(state, &q, REPORT_JSON);
	jq_all(t, job100_json + 20, 7);
	assert_null(strstr(t, "\"processes\":["));
	free(t);
}

/* The sum of the numbers of a JSON array at path. */
static double jsum(const char *json, const char *path)
{
	sqlite3_stmt *st = NULL;
	sqlite3 *db = NULL;
	double v;

	assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT total(value) FROM"
					    " json_each(?1, ?2)", -1, &st,
					    NULL), SQLITE_OK);
	sqlite3_bind_text(st, 1, json, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, path, -1, SQLITE_STATIC);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	v = sqlite3_column_double(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return v;
}

/*
 * The HTML page of job 100: the answer first, the job's text header,
 * the tables by task and by tool, and the timeline's data: a lane per
 * task and per tool outside tasks, by first start, an instance per
 * topmost process of a lane, packed into rows, the failure marked.
 */
static void test_html(void **state)
{
	static const struct want lanes[] = {
		/* the extern step's sleeps (09:59:59), bash, align, sort */
		{ "$.sel", "job 100" },
		{ "$.lanes[0].n", "sleep" },
		{ "$.lanes[0].k", "tool" },
		{ "$.lanes[0].i", "2" },
		{ "$.lanes[1].n", "bash" },
		{ "$.lanes[2].n", "align" },
		{ "$.lanes[2].k", "task" },
		{ "$.lanes[2].i", "3" },
		{ "$.lanes[2].p", "3" },
		{ "$.lanes[2].f", "1" },
		/* 1001 and 1002 overlap, 1003 starts after 1001 ended */
		{ "$.lanes[2].r", "2" },
		{ "$.lanes[2].b[0]", "[2,62,1,0,0]" },
		{ "$.lanes[2].b[1]", "[3,33,1,0,1]" },
		{ "$.lanes[2].b[2]", "[63,73,1,1,0]" },
		{ "$.lanes[3].n", "sort" },
		{ "$.lanes[3].i", "3" },
		{ "$.lanes[4]", "" },
		/* every process on demand: start, end, pid, tool, flags, ... */
		{ "$.lanes[2].x[2][2]", "1003" },
		{ "$.lanes[2].x[2][4]", "1" },
		{ "$.lanes[2].x[2][7]", "3" },
		{ "$.lanes[2].xn", "3" },
		{ "$.span", "102" },
		{ "$.n", "9" },
		/* the JSON report's job and efficiency, as they are */
		{ "$.report.job.state", "COMPLETED" },
		{ "$.report.job.efficiency.memory", "0.4" },
		{ "$.report.efficiency.job.mem_peak_bytes", "3435973837" },
		{ "$.report.efficiency.job.memory_efficiency_pct", "40" },
	};
	struct report_query q = { .job = "100" };
	char *t = report(state, &q, REPORT_HTML), *d = test_page_data(t);

	assert_true(strncmp(t, "<!DOCTYPE html>", 15) == 0);
	pos(t, "COMPLETED</b>, exit code 0, elapsed 1m41s, job name"
	    " <b>align-all</b>, run r1, pipeline rnaseq</li>");
	pos(t, "<b>9 processes</b> in 2 tasks (9 instances, 7 tools) on"
	    " host n1, from 2026-03-01 09:59:59 UTC for <b>1m42s</b>");
	pos(t, "<li class=\"bad\"><b>1 failed</b>: samtools &times;1</li>");
	pos(t, "<li>CPU <b>2m52s</b>: align 96%, sort 4%, (no task) 0%</li>");
	/* the job's peak over its request, as the text's efficiency says:
	 * its cgroup's 3.2 GiB, not its largest process's 2 GiB */
	pos(t, "job memory peak: <b>3.2 GiB</b> (cgroup v1"
	    " memory.max_usage_in_bytes), 40.0% of the 8.0 GiB requested</li>");
	pos(t, "largest process: <b>2.0 GiB</b> peak RSS, bwa (pid 1001, task"
	    " align)</li>");
	pos(t, "State:       COMPLETED, exit code 0");
	pos(t, "Cost:        0.050500 USD");
	pos(t, "Flags:       cpu_underused, memory_overrequested");
	pos(t, "<h2>By workflow task</h2>");
	pos(t, "<h2>By tool</h2>");
	/* align: 3 instances, 3 processes, 1 failed, CPU 166 s over 100 s */
	pos(t, "align</td><td>3</td><td>3</td><td>1</td><td>1m11s</td>"
	    "<td>2m46s</td><td>166%</td><td>2.0 GiB</td><td>25%</td>");
	pos(t, "bwa</td><td>2</td><td>0</td>");
	assert_null(strstr(t, "Process tree"));
	pos(t, "</html>\n");
	/* nothing that fetches: no URL, no src, no href, no import */
	assert_null(strstr(t, "http"));
	assert_null(strstr(t, "src="));
	assert_null(strstr(t, "href"));
	assert_null(strstr(t, "@import"));
	jq_all(d, lanes, N(lanes));
	/* the data cannot end its script element */
	assert_null(strchr(d, '<'));
	free(d);
	free(t);

	/* --no-tree: the timeline without processes on demand */
	q.no_tree = true;
	t = report(state, &q, REPORT_HTML);
	d = test_page_data(t);
	jq_all(d, (const struct want[]){ { "$.lanes[2].x", "[]" } }, 1);
	free(d);
	free(t);
}

/*
 * CPU and memory over time from the samples, and the signals on their
 * process's lane: a sample of bwa 1001 at 10:00:31 with 50 s of CPU and
 * an OOM kill of samtools 1003, a spot interruption with no process.
 */
static void test_html_usage(void **state)
{
	static const struct want want[] = {
		{ "$.use.samples", "1" },
		{ "$.use.passes", "1" },
		{ "$.sign", "2" },
		{ "$.sig[0][1]", "oom_kill" },
		{ "$.sig[0][2]", "1003" },
		{ "$.sig[0][3]", "2" },		/* align's lane */
		{ "$.sig[0][5]", "samtools" },
		{ "$.sig[0][6]", "{\"rss_bytes\":314572800}" },
		{ "$.sig[1][1]", "spot_interruption" },
		{ "$.sig[1][3]", "-1" },
	};
	struct fixture *f = *state;
	struct report_query q = { .job = "100" };
	struct proc p = job100[1];
	struct store *s = NULL;
	char *t, *d, *v;
	double w;

	p.user = 45;
	p.sys = 5;
	assert_int_equal(store_open(f->db, false, &s), 0);
	put_proc(s, &p, "10:00:31.000000", "u");
	test_put_json(s, "{\"type\":\"signal\",\"schema\":1,\"host\":\"n1\","
		      "\"id\":\"g1\",\"kind\":\"oom_kill\",\"time\":"
		      "\"2026-03-01T10:01:11.500000Z\",\"job\":{\"scheduler\":"
		      "\"slurm\",\"id\":\"100\",\"step\":\"batch\",\"run\":null,"
		      "\"pipeline\":null,\"task\":\"align\",\"user\":null,"
		      "\"account\":null,\"cost_center\":null},\"pid\":1003,"
		      "\"comm\":\"samtools\",\"tool\":{\"name\":\"samtools\","
		      "\"category\":null},\"evidence\":{\"rss_bytes\":314572800}}");
	test_put_json(s, "{\"type\":\"signal\",\"schema\":1,\"host\":\"n1\","
		      "\"id\":\"g2\",\"kind\":\"spot_interruption\",\"time\":"
		      "\"2026-03-01T10:01:20.000000Z\",\"job\":null,\"pid\":null,"
		      "\"comm\":null,\"evidence\":{\"action\":\"terminate\"}}");
	assert_true(store_flush(s) > 0);
	store_close(s);

	t = report(state, &q, REPORT_HTML);
	d = test_page_data(t);
	jq_all(d, want, N(want));
	pos(t, "2 signals: 1 oom_kill, 1 spot_interruption</li>");
	/* every CPU second once: cores x bin width adds up to the CPU */
	w = 102.0 / 200;
	assert_true(fabs(jsum(d, "$.use.cores") * w - 172.92) < 0.1);
	/*
	 * bwa's 50 s until its sample fall in its first 30 s, the other 55 s
	 * in the next 30 (without the sample: 1.75 cores all along); with
	 * 1002's 52 s in 30 s and bash's 0.6 s in 100 s: 3.406 cores 21 s
	 * from the start (bin 41), 1.839 cores 50 s from it (bin 98)
	 */
	v = test_jq(d, "$.use.cores[41]");
	assert_true(fabs(atof(v) - 3.406) < 0.002);
	free(v);
	v = test_jq(d, "$.use.cores[98]");
	assert_true(fabs(atof(v) - 1.839) < 0.002);
	free(v);
	/* one pass: the RSS of the one process sampled */
	assert_true(fabs(jsum(d, "$.use.mem") - 2 * GIB) < 1);
	free(d);
	free(t);
}

/* A running job's page: live processes from their samples, running. */
static void test_html_running(void **state)
{
	static const struct want want[] = {
		{ "$.lanes[0].n", "bash" },
		{ "$.lanes[1].n", "train" },
		/* python3 and its finished child: one instance, running */
		{ "$.lanes[1].i", "1" },
		{ "$.lanes[1].b[0][2]", "2" },
		{ "$.lanes[1].b[0][3]", "4" },
		/* 5 samples of the 3 processes, in 3 passes */
		{ "$.use.samples", "5" },
		{ "$.use.passes", "3" },
	};
	struct report_query q = { .job = "200" };
	char *t = report(state, &q, REPORT_HTML), *d = test_page_data(t);

	jq_all(d, want, N(want));
	pos(t, "<b class=\"state s-RUNNING\">RUNNING</b>");
	pos(t, ", 2 still running");
	free(d);
	free(t);
}

/* One process of the model tests: pid 100 + its index. */
static struct report_html_proc mk(double start, double end, long parent,
				  const char *task, const char *tool)
{
	return (struct report_html_proc){ .start = start, .end = end,
		.parent = parent, .host = "h", .task = task, .tool = tool,
		.exit = "0", .argv = "", .cpu = (end - start) / 2 };
}

/* The lane of m named name, or -1. */
static long lane_named(const struct report_html_model *m, const char *name)
{
	for (size_t k = 0; k < m->nlanes; k++)
		if (!strcmp(m->lane[k].name, name))
			return (long)k;
	return -1;
}

/*
 * Lanes and instances: an instance is the topmost process of a lane and
 * its descendants in it; a task under another task starts a new one,
 * and so does a tool outside tasks under another tool.
 */
static void test_html_model(void **state)
{
	struct report_html_proc p[] = {
		mk(0, 100, -1, NULL, "snakemake"),
		mk(1, 50, 0, "align", "bash"),
		mk(2, 40, 1, "align", "bwa"),
		mk(3, 20, 2, "qc", "fastqc"),
		mk(4, 10, 3, "align", "samtools"),
		mk(60, 90, 0, "align", "bash"),
		mk(5, 6, 0, NULL, "sh"),
		mk(7, 8, 6, NULL, "sh"),
		mk(7.5, 7.6, 7, NULL, "true"),
	};
	struct report_html_model *m = NULL;
	const struct report_html_lane *l;
	long a, sh;

	(void)state;
	p[2].flags = REPORT_HTML_FAILED;
	assert_int_equal(report_html_model(p, N(p), true, &m), 0);
	assert_int_equal(m->nlanes, 5);
	assert_string_equal(m->lane[0].name, "snakemake");
	assert_string_equal(m->lane[1].name, "align");
	assert_string_equal(m->lane[2].name, "qc");
	assert_string_equal(m->lane[3].name, "sh");
	assert_string_equal(m->lane[4].name, "true");
	assert_true(m->t0 == 0 && m->t1 == 100);
	a = lane_named(m, "align");
	l = &m->lane[a];
	assert_true(l->task);
	assert_int_equal(l->ninst, 3);
	assert_int_equal(l->procs, 4);
	assert_int_equal(l->failed, 1);
	/* by start: 1-50 (bash and bwa), 4-10 (samtools), 60-90 */
	assert_true(l->inst[0].start == 1 && l->inst[0].end == 50);
	assert_int_equal(l->inst[0].procs, 2);
	assert_int_equal(l->inst[0].flags, REPORT_HTML_FAILED);
	assert_int_equal(l->inst[0].top, 1);
	assert_int_equal(l->inst[1].top, 4);
	assert_int_equal(l->inst[2].top, 5);
	assert_false(l->dense);
	assert_int_equal(l->rows, 2);
	assert_int_equal(l->inst[0].row, 0);
	assert_int_equal(l->inst[1].row, 1);
	assert_int_equal(l->inst[2].row, 0);
	/* sh under sh: one instance; true under sh: its own lane */
	sh = lane_named(m, "sh");
	assert_int_equal(m->lane[sh].ninst, 1);
	assert_int_equal(m->lane[sh].procs, 2);
	assert_int_equal(m->lane_of[7], sh);
	assert_int_equal(m->lane_of[8], lane_named(m, "true"));
	assert_int_equal(m->bars, 7);
	/* every process on demand, by instance: 1, 2, then 4, then 5 */
	assert_int_equal(l->ndetail, 4);
	assert_int_equal(l->detail[0], 1);
	assert_int_equal(l->detail[1], 2);
	assert_int_equal(l->detail[2], 4);
	assert_int_equal(l->detail[3], 5);
	report_html_model_free(m);

	/* hostile links: a cycle, a parent out of range; no detail */
	p[1].parent = 2;
	p[6].parent = 99;
	assert_int_equal(report_html_model(p, N(p), false, &m), 0);
	assert_int_equal(m->detail, 0);
	report_html_model_free(m);
	assert_int_equal(report_html_model(p, 0, true, &m), 0);
	assert_int_equal(m->nlanes, 0);
	report_html_model_free(m);
}

/*
 * 20,000 processes: bounded whatever the run.  Five tasks of 4,000
 * instances, 50 at once: too many rows for bars, so drawn as density,
 * whose instance-seconds add up to the instances' durations; the detail
 * within its limits, the failed process first.
 */
static void test_html_scale(void **state)
{
	size_t n = 20000, dense = 0, detail = 0;
	struct report_html_proc *p = calloc(n, sizeof(*p));
	static const char *const tasks[] = { "a", "b", "c", "d", "e" };
	struct report_html_model *m = NULL;
	double w;

	(void)state;
	assert_non_null(p);
	p[0] = mk(0, 2000, -1, NULL, "snakemake");
	for (size_t i = 1; i < n; i++)
		p[i] = mk(i * 0.1, i * 0.1 + 5, 0, tasks[i % 5], "tool");
	p[777].flags = REPORT_HTML_FAILED;
	assert_int_equal(report_html_model(p, n, true, &m), 0);
	assert_int_equal(m->nlanes, 6);
	w = (m->t1 - m->t0) / REPORT_HTML_BINS;
	for (size_t k = 0; k < m->nlanes; k++) {
		const struct report_html_lane *l = &m->lane[k];
		double sum = 0;
		bool failed = false;

		assert_true(l->ndetail <= REPORT_HTML_DETAIL_LANE);
		detail += l->ndetail;
		for (size_t i = 0; i < l->ndetail; i++)
			failed |= l->detail[i] == 777;
		if (!l->dense)
			continue;
		dense++;
		for (int b = 0; b < REPORT_HTML_BINS; b++)
			sum += l->dens[b] * w;
		assert_true(fabs(sum - 5.0 * l->ninst) < 1e-6 * sum);
		if (!strcmp(l->name, tasks[777 % 5]))
			assert_true(failed);
	}
	assert_int_equal(dense, 5);
	assert_int_equal(m->bars, 1);
	assert_int_equal(detail, m->detail);
	assert_true(m->detail <= REPORT_HTML_DETAIL_MAX);
	report_html_model_free(m);

	/* 10 lanes of 300 instances one after the other: bars while the
	 * budget lasts, the rest as density */
	for (size_t i = 0; i < 3000; i++) {
		char name[8];

		p[i] = mk((double)(i / 10), i / 10 + 0.5, -1, NULL,
			  tasks[i % 5]);
		p[i].tool = i % 10 < 5 ? tasks[i % 5] : i % 10 == 5 ? "f" :
			    i % 10 == 6 ? "g" : i % 10 == 7 ? "h" :
			    i % 10 == 8 ? "i" : "j";
		(void)name;
	}
	assert_int_equal(report_html_model(p, 3000, true, &m), 0);
	assert_int_equal(m->nlanes, 10);
	assert_int_equal(m->bars, 2400);
	dense = 0;
	for (size_t k = 0; k < m->nlanes; k++)
		dense += m->lane[k].dense;
	assert_int_equal(dense, 2);
	report_html_model_free(m);

	/* 100 instances of 3 processes, the 50th short and failed: on
	 * demand whole instances, the failed one first, then the longest */
	for (size_t i = 0; i < 300; i++) {
		double s = (double)(i / 3), d = i / 3 == 50 ? 0.5 : 1 + i / 3;

		p[i] = mk(s, s + d, i % 3 ? (long)(i - i % 3) : -1, "t", "x");
		p[i].flags = i == 151 ? REPORT_HTML_FAILED : 0;
	}
	assert_int_equal(report_html_model(p, 300, true, &m), 0);
	assert_int_equal(m->nlanes, 1);
	assert_int_equal(m->lane[0].ndetail, 198);
	for (size_t i = 0; i < 198; i += 3) {
		long top = m->lane[0].detail[i];

		/* an instance's three: the failed one's, the 65 longest others' */
		assert_int_equal(top % 3, 0);
		assert_int_equal(m->lane[0].detail[i + 1], top + 1);
		assert_int_equal(m->lane[0].detail[i + 2], top + 2);
		assert_true(top == 150 || top / 3 >= 34);
	}
	report_html_model_free(m);

	/* 100 tools: the 59 of most CPU, then one lane for the other 41 */
	for (size_t i = 0; i < 100; i++) {
		static char names[100][8];

		snprintf(names[i], sizeof(names[i]), "t%zu", i);
		p[i] = mk((double)i, i + 1.0, -1, NULL, names[i]);
		p[i].cpu = (double)i;
	}
	assert_int_equal(report_html_model(p, 100, true, &m), 0);
	assert_int_equal(m->nlanes, REPORT_HTML_LANES_MAX);
	assert_true(m->lane[m->nlanes - 1].other);
	assert_true(m->lane[m->nlanes - 1].dense);
	assert_int_equal(m->lane[m->nlanes - 1].groups, 41);
	assert_int_equal(m->lane[m->nlanes - 1].procs, 41);
	assert_true(m->lane[m->nlanes - 1].cpu == 820);
	assert_int_equal(m->lane_of[0], (long)m->nlanes - 1);
	assert_int_equal(m->lane_of[41], 0);
	report_html_model_free(m);
	free(p);
}

/* The series: CPU spread over time and conserved, memory per bin. */
static void test_html_series(void **state)
{
	struct report_html_series s;
	double sum = 0;

	(void)state;
	report_html_series_init(&s, 0, 100);
	report_html_series_cpu(&s, 10, 30, 20);
	report_html_series_cpu(&s, -5, 5, 10);	/* before t0: first bin */
	report_html_series_cpu(&s, 50, 50, 1);	/* an instant */
	report_html_series_cpu(&s, 150, 170, 4);	/* after t1: last bin */
	for (int b = 0; b < REPORT_HTML_BINS; b++)
		sum += s.cpu_s[b];
	assert_true(fabs(sum - 35) < 1e-9);
	/* 0.5 s bins: 10-30 s is bins 20-59, half a second each */
	assert_true(fabs(s.cpu_s[20] - 0.5) < 1e-9);
	assert_true(fabs(s.cpu_s[59] - 0.5) < 1e-9);
	assert_true(fabs(s.cpu_s[0] - 5.5) < 1e-9);
	assert_true(fabs(s.cpu_s[100] - 1) < 1e-9);
	assert_true(fabs(s.cpu_s[199] - 4) < 1e-9);
	report_html_series_mem(&s, 10, 5);
	report_html_series_mem(&s, 10.1, 7);
	assert_true(s.mem[20] == 7);
	assert_true(s.mem[30] == -1);
	assert_int_equal(s.passes, 2);
}

/* A running job: its live processes from their latest samples. */
static void test_running(void **state)
{
	static const struct want lines[] = {
		/* the latest sample: 22 s of CPU so far, 25 s into the job */
		{ "\n3001 ", "21.50/0.50" },
		{ "\n3001 ", "24.000s+" },
		{ "\n3001 ", "running (sample 10:00:25.000)" },
		{ "\nTOTAL ", "CPU 22.17s" },
		{ "\n  job 200 ", "CPU     22.17 s of    100.00 s =  22.2%" },
		{ "\n  train ", "      2 " },
		{ "\n  train ", "1 running" },
		/* the finished child hangs under its live parent */
		{ "\n3002 ", "└─ nvidia-smi" },
	};
	static const struct want job200_json[] = {
		{ "$.job.state", "RUNNING" },
		{ "$.job.exit_code", "" },
		{ "$.summary.running", "2" },
		{ "$.samples[2]", "" },
		{ "$.samples[1].type", "sample" },
		{ "$.samples[1].time", "2026-03-01T10:00:25.000000Z" },
		{ "$.processes[0].pid", "3002" },
		{ "$.efficiency.job.mem_peak_source", "largest_process" },
	};
	struct report_query q = { .job = "200" };
	char *t = report(state, &q, REPORT_TEXT);

	pos(t, "job 200: 3 processes, 0 failed, 0 OOM-killed, 2 running");
	pos(t, "\nState:       RUNNING\n");
	pos(t, " so far (started 2026-03-01T10:00:00.000000Z;"
	    " last record 2026-03-01T10:00:25.000000Z)\n");
	pos(t, "the job is still running");
	lines_have(t, lines, N(lines));
	/* once, after its parent (the sample of it is not shown) */
	assert_true(pos(t, "\n3001 ") < pos(t, "\n3002 "));
	assert_null(strstr(strstr(t, "\n3002 ") + 1, "\n3002 "));
	free(t);

	t = report(state, &q, REPORT_JSON);
	jq_all(t, job200_json, N(job200_json));
	free(t);
}

/* Without a job cgroup the peak is the sampled sum, marked so. */
static void test_samples_peak(void **state)
{
	struct report_query q = { .job = "200" };
	struct fixture *f = *state;
	struct store *s = NULL;
	char *t;

	assert_int_equal(store_open(f->db, false, &s), 0);
	put_job_end(s, "j200-end", "200", "137",
		    "{\"cpu_s\":22.2,\"processes\":3,\"mem_peak_bytes\":"
		    "1073741824,\"mem_peak_source\":\"samples\",\"steps\":[]}");
	assert_int_equal(store_flush(s), 1);
	store_close(s);
	t = report(state, &q, REPORT_TEXT);
	pos(t, "\nState:       FAILED, exit code 137 (128+SIGKILL)\n");
	line_has(t, "\n  job 200 ", "1.0 GiB of 8.0 GiB =  12.5% (sum of"
		 " processes' RSS, no job cgroup)");
	free(t);
}

/* An end record without usage (an older agent): said, and the fallback. */
static void test_no_usage(void **state)
{
	struct report_query q = { .job = "100" };
	char *t;

	sql(state, "UPDATE record SET json = json_remove(json, '$.usage')"
	    " WHERE id = 'j100-end'");
	t = report(state, &q, REPORT_TEXT);
	pos(t, "its end record has no usage");
	line_has(t, "\n  job 100 ", "2.0 GiB of 8.0 GiB =  25.0%"
		 " (largest single process)");
	/* the header's figure is the section's, not the record's 40% */
	line_has(t, "\nEfficiency:  ", "memory 25.0%");
	free(t);
}

/*
 * A job that ended before any sample pass, with no cgroup: its usage
 * has CPU but no memory peak, its record no memory efficiency.  The
 * header, the efficiency section and the JSON say the same figure.
 */
static void test_no_mem_peak(void **state)
{
	static const struct want w[] = {
		{ "$.job.efficiency.memory", "0.25" },
		{ "$.efficiency.job.memory_efficiency_pct", "25" },
		{ "$.efficiency.job.mem_peak_source", "largest_process" },
		{ "$.job.efficiency.cpu", "0.42802" },
		{ "$.efficiency.job.cpu_efficiency_pct", "42.802" },
	};
	struct report_query q = { .job = "100" };
	char *t;

	sql(state, "UPDATE record SET json = json_set(json_remove(json,"
	    " '$.usage.mem_peak_bytes', '$.usage.mem_peak_source'),"
	    " '$.efficiency.memory', json('null')) WHERE id = 'j100-end'");
	t = report(state, &q, REPORT_TEXT);
	line_has(t, "\n  job 100 ", "2.0 GiB of 8.0 GiB =  25.0%"
		 " (largest single process)");
	line_has(t, "\nEfficiency:  ", "CPU 42.8%, memory 25.0%, time -");
	free(t);
	t = report(state, &q, REPORT_JSON);
	jq_all(t, w, sizeof(w) / sizeof(w[0]));
	free(t);
}

/*
 * A task's CPU over wall time is its CPU over its instances' wall times
 * in every view: a shell of task t waits 10 s for its child of task t,
 * which burns 9.5 s.  One instance of 10 s: 95%, one core busy (over the
 * processes' 19.5 s of durations it would read 49%).
 */
static void test_task_cpu_per_wall(void **state)
{
	static const struct proc job500[] = {
		{ "n1", 5000, 1, "10:00:00.000000", "10:00:10.000000", "500",
		  NULL, "t", "sh", 0, 0, 0.01, 0.01, MIB, 0, 0, 0 },
		{ "n1", 5001, 5000, "10:00:00.500000", "10:00:10.000000", "500",
		  NULL, "t", "burn", 0, 0, 9.4, 0.1, MIB, 0, 0, 0 },
	};
	static const struct want json[] = {
		{ "$.by_task[0].task", "t" },
		{ "$.by_task[0].instances", "1" },
		{ "$.by_task[0].instance_wall_s", "10.0" },
		{ "$.by_task[0].process_wall_s", "19.5" },
		{ "$.by_task[0].cpu_per_wall_pct", "95.2" },
		/* a tool's processes are each its own instance */
		{ "$.by_tool[0].tool", "burn" },
		{ "$.by_tool[0].cpu_per_wall_pct", "100.0" },
	};
	struct report_query q = { .job = "500" };
	struct fixture *f = *state;
	struct store *s = NULL;
	char *t;

	assert_int_equal(store_open(f->db, false, &s), 0);
	for (size_t i = 0; i < N(job500); i++)
		put_proc(s, &job500[i], NULL, NULL);
	assert_true(store_flush(s) > 0);
	store_close(s);
	t = report(state, &q, REPORT_TEXT);
	line_has(t, "\n  t ", "      2      10.00s      10.00s       9.52s"
		 "      95% ");
	pos(t, "WALL: the instances' wall times added");
	free(t);
	t = report(state, &q, REPORT_JSON);
	for (size_t i = 0; i < N(json); i++) {
		char *v = test_jq(t, json[i].path);

		/* numbers to one decimal, as the text prints them */
		if (strchr(json[i].value, '.')) {
			char b[32];

			snprintf(b, sizeof(b), "%.1f", atof(v));
			free(v);
			v = strdup(b);
		}
		if (strcmp(v, json[i].value))
			fail_msg("%s: got '%s', want '%s'", json[i].path, v,
				 json[i].value);
		free(v);
	}
	free(t);
	t = report(state, &q, REPORT_HTML);
	pos(t, "t</td><td>1</td><td>2</td><td>0</td><td>10.0 s</td>"
	    "<td>9.52 s</td><td>95%</td>");
	free(t);
}

/* Put a process record of job 700, task align, with its waits. */
static void put_waited(struct store *s, int pid, double cpu, double blkio,
		       const char *wait)
{
	test_put_json(s, "{\"type\":\"process\",\"schema\":1,\"host\":\"n1\","
	    "\"id\":\"w-%d\",\"pid\":%d,\"ppid\":1,\"parent_id\":null,"
	    "\"start_time\":\"2026-03-01T10:00:00Z\","
	    "\"end_time\":\"2026-03-01T10:00:10Z\",\"exe\":\"/usr/bin/bwa\","
	    "\"comm\":\"bwa\",\"argv\":[\"bwa\"],\"uid\":0,"
	    "\"job\":{\"scheduler\":\"slurm\",\"id\":\"700\",\"step\":null,"
	    "\"run\":\"r1\",\"pipeline\":\"p\",\"task\":\"align\","
	    "\"user\":null,\"account\":null,\"cost_center\":null},"
	    "\"tool\":{\"name\":\"bwa\",\"category\":null},"
	    "\"exit\":{\"code\":0,\"signal\":null,\"oom_killed\":false},"
	    "\"cpu\":{\"user_s\":%.6f,\"sys_s\":0},"
	    "\"mem\":{\"peak_rss_bytes\":0,\"maxrss_kernel_bytes\":0},"
	    "\"io\":{\"read_bytes\":0,\"write_bytes\":0,"
	    "\"cancelled_write_bytes\":0,\"rchar\":0,\"wchar\":0,"
	    "\"blkio_delay_s\":%.6f},\"net\":{\"rx_bytes\":0,\"tx_bytes\":0},"
	    "\"wait\":%s}", pid, pid, cpu, blkio, wait);
}

/* Where a task's time went: its processes' waits added, in text (one
 * line a task, the rest of their wall as other sleep) and JSON; a record
 * of an agent before the wait object counts its blkio alone. */
static void test_where(void **state)
{
	static const struct want json[] = {
		{ "$.by_task[0].wait.run_queue_s", "4" },
		{ "$.by_task[0].wait.blkio_s", "1.5" },
		{ "$.by_task[0].wait.reclaim_s", "0.5" },
		{ "$.by_task[0].wait.thrashing_s", "0.75" },
		{ "$.by_task[0].wait.swapin_s", "0.125" },
		{ "$.by_task[0].wait.compact_s", "0.1" },
		{ "$.by_task[0].wait.net_s", "3.25" },
		{ "$.by_task[0].wait.children_s", "2" },
		{ "$.by_task[0].wait.nvcsw", "12" },
		{ "$.by_task[0].wait.nivcsw", "300" },
		{ "$.by_tool[0].wait.run_queue_s", "4" },
		{ "$.summary.wait.blkio_s", "1.5" },
		{ "$.by_task[0].where.wall_s", "30" },
		{ "$.by_task[0].where.cpu_s", "6" },
		{ "$.by_task[0].where.cpu_pct", "20" },
		{ "$.by_task[0].where.run_queue_s", "4" },
		{ "$.by_task[0].where.blkio_s", "1.5" },
		{ "$.by_task[0].where.blkio_pct", "5" },
		{ "$.by_task[0].where.memory_s", "1.375" },
		{ "$.by_task[0].where.net_s", "3.25" },
		{ "$.by_task[0].where.children_s", "2" },
		{ "$.by_task[0].where.other_s", "11.875" },
		{ "$.by_task[0].where.other_pct", "39.583333" },
	};
	struct report_query q = { .job = "700" };
	struct fixture *f = *state;
	struct store *s = NULL;
	char *t;

	assert_int_equal(store_open(f->db, false, &s), 0);
	put_waited(s, 7001, 3, 1, "{\"run_queue_s\":2.5,\"reclaim_s\":0.5,"
		   "\"thrashing_s\":0.25,\"swapin_s\":0.125,\"compact_s\":0.1,"
		   "\"net_s\":3,\"children_s\":2,"
		   "\"nvcsw\":10,\"nivcsw\":100}");
	put_waited(s, 7002, 2, 0, "{\"run_queue_s\":1.5,\"reclaim_s\":0,"
		   "\"thrashing_s\":0.5,\"swapin_s\":0,\"compact_s\":0,"
		   "\"net_s\":0.25,\"children_s\":0,"
		   "\"nvcsw\":2,\"nivcsw\":200}");
	put_waited(s, 7003, 1, 0.5, "null");
	assert_true(store_flush(s) > 0);
	store_close(s);
	t = report(state, &q, REPORT_TEXT);
	/* 30 s of wall - 6 CPU - 4 run queue - 1.5 blkio - 1.375 memory
	 * - 3.25 network - 2 children */
	pos(t, "\n  align: WALL 30.00s = running on a CPU 6.00s + waiting for a"
	    " CPU 4.00s + block I/O 1.50s + memory waits 1.38s (reclaim 0.50,"
	    " thrashing 0.75, swap-in 0.12) + network 3.25s + children 2.00s +"
	    " other 11.88s; switches 12 voluntary, 300 involuntary\n");
	free(t);
	t = report(state, &q, REPORT_JSON);
	for (size_t i = 0; i < N(json); i++) {
		char *v = test_jq(t, json[i].path);

		if (fabs(atof(v) - atof(json[i].value)) > 1e-9)
			fail_msg("%s: got '%s', want '%s'", json[i].path, v,
				 json[i].value);
		free(v);
	}
	free(t);
}

/* A job that has started and run nothing yet: its header, no rows. */
static void test_job_only(void **state)
{
	struct report_query q = { .job = "300" };
	struct fixture *f = *state;
	struct store *s = NULL;
	char *t;

	assert_int_equal(store_open(f->db, false, &s), 0);
	put_job_start(s, "j300-start", "300");
	assert_int_equal(store_flush(s), 1);
	store_close(s);
	t = report(state, &q, REPORT_TEXT);
	pos(t, "jobtrace report: job 300: 0 processes, 0 failed, 0 OOM-killed"
	    " (times UTC)\n");
	pos(t, "\nState:       RUNNING\n");
	pos(t, "\nBy workflow task: none recorded\n");
	pos(t, "\nBy tool: none recorded\n");
	free(t);
	t = report(state, &q, REPORT_JSON);
	assert_true(json_valid(t));
	free(t);
}

/* Put an end record of job with a state and Slurm's code:signal. */
static void put_job_end_state(struct store *s, const char *job,
			      const char *state, int code, int sig)
{
	char id[64], rest[512];

	snprintf(id, sizeof(id), "j%s-end", job);
	snprintf(rest, sizeof(rest),
		 "\"start_time\":\"2026-03-01T10:00:00.000000Z\","
		 "\"end_time\":\"2026-03-01T10:00:%02d.000000Z\","
		 "\"allocation\":{\"cpus\":1,\"mem_bytes\":1048576000,"
		 "\"gpus\":null},\"exit_code\":%d,\"exit_signal\":%d,"
		 "\"state\":\"%s\",\"cost\":null", 10 + code + sig % 40, code,
		 sig, state);
	put_job(s, id, job, "end", rest);
}

/*
 * The state and exit code as sacct shows them; an array's id (--job 300)
 * gives a line per task in task order (300_10 after 300_2), then the
 * total, and not job 3000; --job 300_2 is that task alone.
 */
static void test_states_tasks(void **state)
{
	static const struct want lines[] = {
		{ "\n  300_1 ", "COMPLETED      0:0 " },
		{ "\n  300_2 ", "TIMEOUT        0:0 " },
		{ "\n  300_10 ", "OUT_OF_MEMORY  0:125 " },
		{ "\n  TOTAL ", "3 tasks " },
	};
	struct report_query q = { .job = "300" };
	struct fixture *f = *state;
	struct store *s = NULL;
	char *t, *v;

	assert_int_equal(store_open(f->db, false, &s), 0);
	put_job_start(s, "j300_1-start", "300_1");
	put_job_end_state(s, "300_1", "COMPLETED", 0, 0);
	put_job_start(s, "j300_2-start", "300_2");
	put_job_end_state(s, "300_2", "TIMEOUT", 0, 0);
	put_job_start(s, "j300_10-start", "300_10");
	put_job_end_state(s, "300_10", "OUT_OF_MEMORY", 0, 125);
	put_job_start(s, "j3000-start", "3000");
	put_job_end_state(s, "3000", "FAILED", 0, 9);
	store_flush(s);
	store_close(s);

	t = report(state, &q, REPORT_TEXT);
	pos(t, "Job ID:      300 (slurm): 3 tasks");
	lines_have(t, lines, N(lines));
	assert_true(pos(t, "\n  300_2 ") < pos(t, "\n  300_10 "));
	assert_null(strstr(t, "3000"));
	free(t);
	t = report(state, &q, REPORT_JSON);
	assert_true(json_valid(t));
	v = test_jq(t, "$.jobs[2].id");
	assert_string_equal(v, "300_10");
	free(v);
	v = test_jq(t, "$.jobs[2].exit_signal");
	assert_string_equal(v, "125");
	free(v);
	v = test_jq(t, "$.job.tasks");
	assert_string_equal(v, "3");
	free(v);
	free(t);

	q.job = "300_2";
	t = report(state, &q, REPORT_TEXT);
	pos(t, "\nState:       TIMEOUT, exit code 0:0\n");
	assert_null(strstr(t, "tasks"));
	free(t);
	q.job = "3000";
	t = report(state, &q, REPORT_TEXT);
	pos(t, "\nState:       FAILED, exit code 0:9 (SIGKILL)\n");
	free(t);
	t = report(state, &q, REPORT_JSON);
	v = test_jq(t, "$.job.exit_signal");
	assert_string_equal(v, "9");
	free(v);
	free(t);
}

/* No job record: the header says what is missing; --run has none. */
static void test_no_job_record(void **state)
{
	struct report_query q = { .job = "100" };
	char *t;

	sql(state, "DELETE FROM record WHERE type = 'job'");
	t = report(state, &q, REPORT_TEXT);
	pos(t, "Job ID:      100: no job record in the store");
	pos(t, "no allocation recorded");
	free(t);

	q.job = NULL;
	q.run = "r1";
	t = report(state, &q, REPORT_TEXT);
	assert_null(strstr(t, "Job ID:"));
	pos(t, "\n  align ");
	free(t);
}

/* Stored records of the wrong shape never crash a report. */
static void test_hostile(void **state)
{
	static const char *const usage[] = {
		"\"x\"", "[]", "{\"cpu_s\":\"abc\",\"steps\":\"no\"}",
		"{\"steps\":[1,\"a\",null,[],{\"step\":5,\"cpu_s\":\"x\"},"
		"{\"step\":\"batch\",\"mem_peak_bytes\":-5,"
		"\"mem_peak_source\":{\"a\":1}}]}",
		"{\"cpu_s\":1e308,\"processes\":-3,\"mem_peak_bytes\":1e300,"
		"\"mem_peak_source\":\"samples\"}",
	};
	struct fixture *f = *state;
	struct report_query q = { .job = "100" };
	struct store *s = NULL;
	char id[32];

	assert_int_equal(store_open(f->db, false, &s), 0);
	for (size_t i = 0; i < sizeof(usage) / sizeof(usage[0]); i++) {
		snprintf(id, sizeof(id), "bad-end-%zu", i);
		put_job_end(s, id, "100", "\"0\"", usage[i]);
	}
	put_job_end_cost(s, "bad-cost-1", "100", "0", NULL,
			 "\"cost\":\"x\",\"efficiency\":[1],\"flags\":\"cpu_underused\"");
	put_job_end_cost(s, "bad-cost-2", "100", "0", NULL,
			 "\"cost\":{\"amount\":\"1\",\"currency\":5,\"note\":[1]},"
			 "\"efficiency\":{\"cpu\":\"x\",\"time\":-1e308},"
			 "\"flags\":[1,{},\"memory_overrequested\"]");
	put_job_end_cost(s, "bad-cost-3", "100", "0", NULL,
			 "\"cost\":{\"amount\":1e308,\"currency\":\"\\u0000\\n\","
			 "\"share\":-5,\"formula\":\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"}");
	test_put_json(s, "{\"type\":\"job\",\"id\":\"bad-1\",\"phase\":\"end\","
	    "\"job\":{\"id\":\"100\",\"user\":{\"a\":1}},\"name\":5,"
	    "\"allocation\":[],\"start_time\":5,\"end_time\":\"junk\","
	    "\"exit_code\":[1],\"uid\":\"root\"}");
	test_put_json(s, "{\"type\":\"job\",\"id\":\"bad-2\",\"phase\":7,"
	    "\"job\":{\"id\":\"100\"},\"host\":[1]}");
	test_put_json(s, "{\"type\":\"process\",\"id\":\"bad-p\",\"pid\":\"x\","
	    "\"job\":{\"id\":\"100\",\"task\":[1],\"step\":\"extern\"},"
	    "\"start_time\":5,\"end_time\":\"2026-03-01T10:00:00Z\","
	    "\"cpu\":{\"user_s\":\"abc\",\"sys_s\":-4},"
	    "\"io\":{\"cancelled_write_bytes\":-5,\"read_bytes\":1e300},"
	    "\"exit\":{\"signal\":\"KILL\"},\"argv\":\"x\"}");
	test_put_json(s, "{\"type\":\"sample\",\"id\":\"bad-s\",\"time\":\"x\","
	    "\"job\":{\"id\":\"100\"},\"pid\":{},\"start_time\":[],"
	    "\"cpu\":\"lots\",\"mem\":{\"peak_rss_bytes\":\"1\"}}");
	assert_true(store_flush(s) > 0);
	store_close(s);

	for (int fmt = REPORT_TEXT; fmt <= REPORT_HTML; fmt++) {
		char *t = report(state, &q, fmt);

		if (fmt == REPORT_JSON)
			assert_true(json_valid(t));
		free(t);
	}
}

/* The export of q (malloc'd) and its status; *lines counts its records. */
static char *export(void **state, const struct report_query *q, int *err,
		    size_t *lines)
{
	struct fixture *f = *state;
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	assert_non_null(out);
	*err = qcmd_run_path(qcmd_find("export"), f->db, q, NULL, out);
	fclose(out);
	*lines = 0;
	for (const char *c = text; (c = strchr(c, '\n')); c++)
		(*lines)++;
	return text;
}

/* Records in the fixture's store, counted by SQLite itself. */
static size_t store_rows(void **state)
{
	struct fixture *f = *state;
	sqlite3_stmt *st = NULL;
	sqlite3 *db = NULL;
	size_t n;

	assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT (SELECT count(*) FROM"
					    " process_rec) + (SELECT count(*)"
					    " FROM record)", -1, &st, NULL),
			 SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	n = (size_t)sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return n;
}

/* How many times s occurs in text. */
static size_t count_of(const char *text, const char *s)
{
	size_t n = 0;

	for (const char *c = text; (c = strstr(c, s)); c++)
		n++;
	return n;
}

/*
 * A user asking through the agent sees their processes, their jobs (the
 * job records with their uid) and everything of those jobs, root's
 * processes in them too; nothing of another user, no host record.  The
 * fixture's jobs 100 and 200 are alice's (uid 1000); bob (1001) has job
 * 400, a process without a job, and one in job 500 whose record names no
 * uid (so job 500 is nobody's).
 */
static void test_uid_only(void **state)
{
	struct report_query q = { .since = 1, .uid_only = true, .uid = 1000 };
	struct proc b = job100[1];
	struct store *s = NULL;
	size_t lines, all;
	int err;
	char *t;

	assert_int_equal(store_open(((struct fixture *)*state)->db, false, &s),
			 0);
	proc_uid = 1001;
	b.host = "b1";
	b.job = "400";
	put_proc(s, &b, NULL, NULL);
	put_proc(s, &b, "10:00:30.000000", "a");
	b.pid = 4002;
	put_proc(s, &b, NULL, NULL);
	b.pid = 4003;
	b.job = "500";
	put_proc(s, &b, NULL, NULL);
	proc_uid = 1000;
	test_put_json(s, "{\"type\":\"job\",\"id\":\"j400-start\",\"host\":\"b1\","
	    "\"phase\":\"start\",\"job\":{\"id\":\"400\"},\"uid\":1001,"
	    "\"start_time\":\"2026-03-01T10:00:00Z\"}");
	test_put_json(s, "{\"type\":\"job\",\"id\":\"j500-start\",\"host\":\"b1\","
	    "\"phase\":\"start\",\"job\":{\"id\":\"500\"},\"uid\":null,"
	    "\"start_time\":\"2026-03-01T10:00:00Z\"}");
	test_put_json(s, "{\"type\":\"signal\",\"id\":\"sig400\",\"host\":\"b1\","
	    "\"kind\":\"oom_kill\",\"job\":\"400\",\"pid\":4001,"
	    "\"time\":\"2026-03-01T10:00:40Z\"}");
	test_put_json(s, "{\"type\":\"process\",\"id\":\"bob-free\",\"host\":\"b1\","
	    "\"pid\":4100,\"uid\":1001,\"job\":null,"
	    "\"start_time\":\"2026-03-01T10:00:00Z\","
	    "\"end_time\":\"2026-03-01T10:00:01Z\"}");
	test_put_json(s, "{\"type\":\"process\",\"id\":\"alice-free\",\"host\":\"n1\","
	    "\"pid\":4200,\"uid\":1000,\"job\":null,"
	    "\"start_time\":\"2026-03-01T10:00:00Z\","
	    "\"end_time\":\"2026-03-01T10:00:01Z\"}");
	test_put_json(s, "{\"type\":\"process\",\"id\":\"root-in-100\",\"host\":\"n1\","
	    "\"pid\":4300,\"uid\":0,\"job\":{\"id\":\"100\"},"
	    "\"start_time\":\"2026-03-01T10:00:00Z\","
	    "\"end_time\":\"2026-03-01T10:00:01Z\"}");
	test_put_json(s, "{\"type\":\"process\",\"id\":\"root-free\",\"host\":\"n1\","
	    "\"pid\":4400,\"uid\":0,\"job\":null,"
	    "\"start_time\":\"2026-03-01T10:00:00Z\","
	    "\"end_time\":\"2026-03-01T10:00:01Z\"}");
	test_put_json(s, "{\"type\":\"host\",\"id\":\"host-1\",\"host\":\"n1\","
	    "\"time\":\"2026-03-01T10:00:00Z\"}");
	assert_true(store_flush(s) > 0);
	store_close(s);

	/* alice: job 100's 9 processes and root's, job 200's finished one
	 * and its 5 samples, the 3 job records, her process without a job */
	t = export(state, &q, &err, &lines);
	assert_int_equal(err, 0);
	assert_int_equal(lines, 20);
	assert_int_equal(count_of(t, "\"type\":\"process\""), 12);
	assert_int_equal(count_of(t, "\"type\":\"sample\""), 5);
	assert_int_equal(count_of(t, "\"type\":\"job\""), 3);
	assert_int_equal(count_of(t, "\"uid\":1001"), 0);
	assert_int_equal(count_of(t, "\"host\":\"b1\""), 0);
	assert_non_null(strstr(t, "\"root-in-100\""));
	free(t);

	/* bob: job 400 (2 processes, a sample, its record and signal), his
	 * process without a job and the one in nobody's job 500 */
	q.uid = 1001;
	t = export(state, &q, &err, &lines);
	assert_int_equal(err, 0);
	assert_int_equal(lines, 7);
	assert_int_equal(count_of(t, "\"uid\":1001"), 6);
	assert_int_equal(count_of(t, "\"type\":\"signal\""), 1);
	assert_null(strstr(t, "\"j500-start\""));
	assert_int_equal(count_of(t, "\"host\":\"n1\""), 0);
	free(t);

	/* unrestricted: every record of the store */
	q.uid_only = false;
	t = export(state, &q, &err, &all);
	free(t);
	assert_int_equal(all, store_rows(state));

	/* a report of bob's job is "no records" for alice, 2 processes for
	 * him; alice's job 100 shows root's process in it */
	q = (struct report_query){ .job = "400", .uid_only = true, .uid = 1000 };
	assert_int_equal(qcmd_run_path(qcmd_find("report"),
				       ((struct fixture *)*state)->db, &q,
				       "text", stdout), -ENOENT);
	q.uid = 1001;
	t = report(state, &q, REPORT_TEXT);
	assert_non_null(strstr(t, "job 400: 2 processes"));
	free(t);
	/* the page of it: his processes and his signal */
	t = report(state, &q, REPORT_HTML);
	assert_non_null(strstr(t, "<b>2 processes</b>"));
	assert_non_null(strstr(t, "\"sign\":1,"));
	free(t);
	/* alice's page of all she may see: nothing of bob's, nor his host */
	q = (struct report_query){ .since = 1, .uid_only = true, .uid = 1000 };
	t = report(state, &q, REPORT_HTML);
	assert_null(strstr(t, "b1"));
	assert_non_null(strstr(t, "\"sign\":0,"));
	free(t);
	q = (struct report_query){ .job = "100", .uid_only = true, .uid = 1000 };
	t = report(state, &q, REPORT_TEXT);
	assert_non_null(strstr(t, "job 100: 10 processes"));
	free(t);
	q.uid = 1001;
	assert_int_equal(qcmd_run_path(qcmd_find("report"),
				       ((struct fixture *)*state)->db, &q,
				       "text", stdout), -ENOENT);
}

/* A process record of uid in job (scheduler sched) on host n1. */
static void put_owned(struct store *s, const char *id, unsigned pid,
		      unsigned uid, const char *sched, const char *job)
{
	test_put_json(s, "{\"type\":\"process\",\"id\":\"%s\","
		      "\"host\":\"n1\",\"pid\":%u,\"uid\":%u,\"job\":{"
		      "\"scheduler\":\"%s\",\"id\":\"%s\"},\"start_time\":"
		      "\"2026-03-02T10:00:00Z\",\"end_time\":"
		      "\"2026-03-02T10:00:01Z\"}", id, pid, uid, sched, job);
}

/* A job start record of uid for job (scheduler sched). */
static void put_owner(struct store *s, const char *id, unsigned uid,
		      const char *sched, const char *job)
{
	test_put_json(s, "{\"type\":\"job\",\"id\":\"%s\",\"host\":"
		      "\"n1\",\"phase\":\"start\",\"job\":{\"scheduler\":"
		      "\"%s\",\"id\":\"%s\"},\"uid\":%u,\"start_time\":"
		      "\"2026-03-02T10:00:00Z\"}", id, sched, job, uid);
}

/* The export of what uid may see of job (NULL: all since), malloc'd. */
static char *seen(void **state, unsigned uid, const char *job)
{
	struct report_query q = { .uid_only = true, .uid = uid, .job = job,
				  .since = job ? 0 : 1 };
	size_t lines;
	int err;

	return export(state, &q, &err, &lines);
}

/*
 * A job shows its owner the records of others in it only when the job is
 * theirs as the scheduler or root stated it.  An id that two jobs used
 * (pbs:9001 that alice, uid 1000, registered in a store from before users
 * had their own namespace, and bob's slurm:9001 with root's process in
 * it) shows each their own records only.  Alice's own job user:1000:exp
 * shows her its signal and her processes, not the setuid root process
 * below them.  Her --job exp finds that job; --job 9001, where she has
 * records, stays 9001.
 */
static void test_uid_collide(void **state)
{
	struct fixture *f = *state;
	struct report_query q = { .job = "exp", .uid_only = true, .uid = 1000 };
	struct store *s = NULL;
	char buf[128], *t;

	assert_int_equal(store_open(f->db, false, &s), 0);
	put_owner(s, "b-9001", 1001, "slurm", "9001");
	put_owned(s, "b-proc", 5001, 1001, "slurm", "9001");
	put_owned(s, "root-in-b", 5002, 0, "slurm", "9001");
	put_owner(s, "a-9001", 1000, "pbs", "9001");
	put_owned(s, "a-proc", 5003, 1000, "pbs", "9001");
	put_owner(s, "a-exp", 1000, "local", "user:1000:exp");
	put_owned(s, "a-exp-proc", 5004, 1000, "local", "user:1000:exp");
	put_owned(s, "setuid-in-a", 5005, 0, "local", "user:1000:exp");
	test_put_json(s, "{\"type\":\"signal\",\"id\":\"sig-exp\",\"host\":"
		      "\"n1\",\"kind\":\"stall\",\"job\":{\"id\":"
		      "\"user:1000:exp\"},\"pid\":5004,"
		      "\"time\":\"2026-03-02T10:00:02Z\"}");
	/* a root registration in a user's namespace (no agent makes one
	 * now) shows nothing of it to its uid */
	put_owner(s, "odd", 1001, "pbs", "user:1000:odd");
	put_owned(s, "odd-proc", 5006, 0, "pbs", "user:1000:odd");
	assert_true(store_flush(s) > 0);
	store_close(s);

	t = seen(state, 1000, "9001");
	assert_int_equal(count_of(t, "\"type\":\"process\""), 1);
	assert_non_null(strstr(t, "\"a-proc\""));
	assert_int_equal(count_of(t, "\"type\":\"job\""), 1);
	assert_non_null(strstr(t, "\"a-9001\""));
	free(t);
	t = seen(state, 1001, "9001");
	assert_int_equal(count_of(t, "\"type\":\"process\""), 1);
	assert_non_null(strstr(t, "\"b-proc\""));
	assert_null(strstr(t, "\"root-in-b\""));
	assert_null(strstr(t, "\"a-9001\""));
	free(t);
	t = seen(state, 1000, "user:1000:exp");
	assert_non_null(strstr(t, "\"a-exp-proc\""));
	assert_non_null(strstr(t, "\"sig-exp\""));
	assert_non_null(strstr(t, "\"a-exp\""));
	assert_null(strstr(t, "\"setuid-in-a\""));
	free(t);
	t = seen(state, 1001, NULL);
	assert_null(strstr(t, "exp"));
	assert_null(strstr(t, "odd-proc"));
	free(t);

	assert_int_equal(store_open(f->db, true, &s), 0);
	assert_int_equal(storeq_user_job(s, f->db, &q, buf, sizeof(buf)), 0);
	assert_string_equal(q.job, "user:1000:exp");
	q.job = "9001";
	assert_int_equal(storeq_user_job(s, f->db, &q, buf, sizeof(buf)), 0);
	assert_string_equal(q.job, "9001");
	/* no job of hers by that name either: what she asked for stays */
	q.job = "none";
	assert_int_equal(storeq_user_job(s, f->db, &q, buf, sizeof(buf)), 0);
	assert_string_equal(q.job, "none");
	/* not for root, nor for another user's namespace */
	q = (struct report_query){ .job = "exp" };
	assert_int_equal(storeq_user_job(s, f->db, &q, buf, sizeof(buf)), 0);
	assert_string_equal(q.job, "exp");
	q = (struct report_query){ .job = "user:1001:exp", .uid_only = true,
				   .uid = 1000 };
	assert_int_equal(storeq_user_job(s, f->db, &q, buf, sizeof(buf)), 0);
	assert_string_equal(q.job, "user:1001:exp");
	store_close(s);
}

/*
 * Does text hold a byte that drives a terminal (but newline), or with c1
 * a C1 control in UTF-8?  (JSON keeps U+0080..U+009F as the characters
 * they are: \u0080..\u00ff stand for bytes that were not UTF-8.)
 */
static bool has_control(const char *text, bool c1)
{
	for (const unsigned char *c = (const unsigned char *)text; *c; c++)
		if ((*c < 0x20 && *c != '\n') || *c == 0x7f ||
		    (c1 && c[0] == 0xc2 && c[1] >= 0x80 && c[1] <= 0x9f))
			return true;
	return false;
}

/*
 * A program that names itself with a terminal title sequence (ESC ] 0;
 * ... BEL) and a CSI (U+009B), and a host with a colour sequence: the
 * text and HTML reports show them as '?', JSON escapes C0 controls.
 */
static void test_escapes(void **state)
{
	static const char evil[] = "\\u001b]0;pwned\\u0007x\\u009b2J";
	struct report_query q = { .job = "300" };
	struct fixture *f = *state;
	struct proc p = job100[1];
	struct store *s = NULL;

	p.job = "300";
	p.tool = evil;
	p.host = "n\\u001b[31m1";
	assert_int_equal(store_open(f->db, false, &s), 0);
	put_proc(s, &p, NULL, NULL);
	assert_true(store_flush(s) > 0);
	store_close(s);

	for (int fmt = REPORT_TEXT; fmt <= REPORT_HTML; fmt++) {
		char *t = report(state, &q, fmt);

		assert_false(has_control(t, fmt != REPORT_JSON));
		if (fmt == REPORT_TEXT) {
			size_t n = 0;

			/* the tool summary, the tree's tool and argv */
			for (const char *c = t; (c = strstr(c, "?]0;pwned?x?2J"));
			     c++)
				n++;
			assert_int_equal(n, 3);
		}
		free(t);
	}
}

/* count(*) of the process view on r (restricted or not), and whether the
 * statement was prepared again since it was made (*st kept across calls). */
static int count_procs(struct store *r, sqlite3_stmt **st, int *reprepared)
{
	int n;

	if (!*st)
		assert_int_equal(sqlite3_prepare_v2(store_handle(r),
						    "SELECT count(*) FROM process",
						    -1, st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(*st), SQLITE_ROW);
	n = sqlite3_column_int(*st, 0);
	sqlite3_reset(*st);
	*reprepared = sqlite3_stmt_status(*st, SQLITE_STMTSTATUS_REPREPARE, 0);
	return n;
}

/* A connection restricted again to the same uid (a view's frames in one
 * query child) sees the jobs that came since, with its views and its
 * prepared statements kept; restricted to another uid, it sees that uid's. */
static void test_restrict_again(void **state)
{
	struct report_query q = { .since = 1, .uid_only = true, .uid = 1000 };
	struct proc a = job100[0], b = job100[0], c = job100[0];
	char path[64];
	struct store *w = NULL, *r = NULL;
	sqlite3_stmt *st = NULL, *other = NULL;
	int re, changes;

	(void)state;
	snprintf(path, sizeof(path), "/tmp/jt_ragain_%d.db", (int)getpid());
	unlink(path);
	assert_int_equal(store_open(path, false, &w), 0);
	/* root's processes in alice's jobs 100, then 200 */
	proc_uid = 0;
	put_job_start(w, "j100-start", "100");
	put_proc(w, &a, NULL, NULL);
	assert_true(store_flush(w) >= 0);
	assert_int_equal(store_open(path, true, &r), 0);
	assert_int_equal(storeq_restrict(r, "test", &q), 0);
	assert_int_equal(count_procs(r, &st, &re), 1);
	b.job = "200";
	b.pid = 3000;
	put_job_start(w, "j200-start", "200");
	put_proc(w, &b, NULL, NULL);
	assert_true(store_flush(w) >= 0);
	c.job = "200";
	c.pid = 3001;
	/* not seen before the restriction is asked again */
	assert_int_equal(count_procs(r, &st, &re), 1);
	assert_int_equal(storeq_restrict(r, "test", &q), 0);
	assert_int_equal(count_procs(r, &st, &re), 2);
	assert_int_equal(re, 0);
	/* no job record since: the jobs are not found again (nothing is
	 * written to the connection's temporary tables) */
	changes = sqlite3_total_changes(store_handle(r));
	put_proc(w, &c, NULL, NULL);
	assert_true(store_flush(w) >= 0);
	assert_int_equal(storeq_restrict(r, "test", &q), 0);
	assert_int_equal(sqlite3_total_changes(store_handle(r)), changes);
	assert_int_equal(count_procs(r, &st, &re), 3);
	/* a record of job 200 naming bob: it is alice's no more */
	test_put_json(w, "{\"type\":\"job\",\"schema\":1,\"host\":\"n1\","
		      "\"id\":\"j200-end\",\"phase\":\"end\",\"job\":"
		      "{\"scheduler\":\"slurm\",\"id\":\"200\"},\"uid\":1001}");
	assert_true(store_flush(w) >= 0);
	assert_int_equal(storeq_restrict(r, "test", &q), 0);
	assert_true(sqlite3_total_changes(store_handle(r)) > changes);
	assert_int_equal(count_procs(r, &st, &re), 1);
	assert_int_equal(re, 0);
	/* bob on the same connection: neither job is his */
	q.uid = 1001;
	assert_int_equal(storeq_restrict(r, "test", &q), 0);
	assert_int_equal(count_procs(r, &other, &re), 0);
	sqlite3_finalize(st);
	sqlite3_finalize(other);
	proc_uid = 1000;
	store_close(r);
	store_close(w);
	unlink(path);
	strcat(path, "-wal");
	unlink(path);
	strcpy(path + strlen(path) - 3, "shm");
	unlink(path);
}

/* Run every report test, each on a fresh store. */
int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_header), T(test_summaries), T(test_efficiency),
		T(test_json), T(test_html), T(test_html_usage),
		T(test_html_running), T(test_html_model), T(test_html_scale),
		T(test_html_series), T(test_running),
		T(test_samples_peak), T(test_no_usage), T(test_no_mem_peak), T(test_task_cpu_per_wall),
		T(test_where),
		T(test_job_only),
		T(test_no_job_record), T(test_hostile), T(test_escapes),
		T(test_uid_only), T(test_restrict_again), T(test_states_tasks),
		T(test_uid_collide),
	};
#undef T

	return cmocka_run_group_tests(tests, NULL, NULL);
}
