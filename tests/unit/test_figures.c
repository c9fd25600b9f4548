// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_figures.c - one figure, one value, in every view.  One stored job
 * (a store this test writes) is read through `jobtrace report` (JSON),
 * `jobtrace cost --by task` and `--by tool` (JSON), `jobtrace rightsize`
 * (JSON) and the HTML page (its data and its tables), by --run and by
 * --job, and each headline figure of each workflow task and each tool is
 * checked against what the test put in the store:
 *
 *  - processes, failures, CPU seconds (user + system), read and write
 *    bytes: sums over the task's or tool's processes;
 *  - instances and the memory peak of a task (tasks.h): align ran twice,
 *    each a shell with tools under it; the first instance's peak is the
 *    sum of the RSS of its tools alive together (300 + 100 + 2 MiB), the
 *    workflow engine's python (73 MiB) left out, the second's 502 MiB; the
 *    task's peak is the larger in report and HTML, and rightsize's p95 of
 *    two instances is that same instance;
 *  - a tool's peak: its largest process's peak RSS;
 *  - the cost of a task or tool: the job's cost split by CPU time, the
 *    same in cost's JSON and the page's table;
 *  - an sbatch with align's name is no task's process in any view;
 *  - a stored CPU figure below 0 (a hostile or broken record) counts as 0,
 *    user and system each, in report, the page and rightsize alike.
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

#include "costq.h"
#include "log.h"
#include "qcmd.h"
#include "report.h"
#include "rightsize.h"
#include "store.h"
#include "test_files.h"
#include "util.h"

#define MIB (1ULL << 20)
#define GIB (1ULL << 30)
#define JOB_COST 0.12		/* the job's cost.amount, USD */

/* One process record as the test writes it (times: seconds after 10:00). */
struct proc {
	int pid, ppid;
	double start, end;
	const char *task, *tool, *category;
	int code;
	double user, sys;
	unsigned long long rss, rd, wr;
};

/* Job 500: bash runs align twice (a shell each, tools under it), sort
 * once, and an sbatch that carries align's name. */
static const struct proc job[] = {
	{ 100, 1, 0, 100, NULL, "bash", NULL, 0, 0.5, 0.1, 4 * MIB, 0, 0 },
	/* align, instance 1: peak 2 + 300 + 100 MiB (10 s to 30 s) */
	{ 101, 100, 1, 40, "align", "sh", NULL, 0, 0.1, 0, 2 * MIB, 0, 0 },
	{ 102, 101, 2, 30, "align", "bwa", NULL, 0, 20, 1, 300 * MIB, GIB,
	  100 * MIB },
	{ 103, 101, 10, 35, "align", "samtools", NULL, 0, 5, 0.5, 100 * MIB,
	  200 * MIB, 50 * MIB },
	{ 104, 101, 1, 40, "align", "snakemake", "workflow-engine", 0, 2,
	  0.2, 73 * MIB, 0, 0 },
	/* align, instance 2: 2 + 500 MiB, bwa failed */
	{ 110, 100, 41, 70, "align", "sh", NULL, 0, 0.1, 0, 2 * MIB, 0, 0 },
	{ 111, 110, 42, 69, "align", "bwa", NULL, 1, 10, 1, 500 * MIB,
	  2 * GIB, 0 },
	{ 120, 100, 71, 90, "sort", "sort", NULL, 0, 4, 1, 50 * MIB,
	  10 * MIB, 10 * MIB },
	{ 130, 100, 91, 92, "align", "sbatch", "scheduler-helper", 0, 0.01,
	  0.01, 5 * MIB, 0, 0 },
};
#define NPROC (sizeof(job) / sizeof(job[0]))

struct fixture {
	char dir[64];
	char db[96];
};

/* "2026-03-01T10:00:SS.uuuuuuZ" for s seconds after 10:00. */
static const char *at(double s, char *buf, size_t len)
{
	int m = (int)(s / 60);

	snprintf(buf, len, "2026-03-01T10:%02d:%09.6fZ", m, s - 60 * m);
	return buf;
}

/* Put process p of job 500. */
static void put_proc(struct store *s, const struct proc *p)
{
	char t0[40], t1[40], task[40], cat[40];

	test_put_json(s, "{\"type\":\"process\",\"schema\":1,\"host\":\"n1\","
	    "\"id\":\"p-n1-%d\",\"pid\":%d,\"ppid\":%d,"
	    "\"parent_id\":\"p-n1-%d\",\"start_time\":\"%s\","
	    "\"end_time\":\"%s\",\"exe\":\"/usr/bin/%s\",\"comm\":\"%s\","
	    "\"argv\":[\"%s\"],\"uid\":1000,"
	    "\"job\":{\"scheduler\":\"slurm\",\"id\":\"500\",\"step\":\"batch\","
	    "\"run\":\"r5\",\"pipeline\":\"p5\",\"task\":%s,\"user\":\"alice\","
	    "\"account\":\"bio\",\"cost_center\":null},"
	    "\"tool\":{\"name\":\"%s\",\"category\":%s},"
	    "\"exit\":{\"code\":%d,\"signal\":null,\"oom_killed\":false},"
	    "\"cpu\":{\"user_s\":%.6f,\"sys_s\":%.6f},"
	    "\"mem\":{\"peak_rss_bytes\":%llu},"
	    "\"io\":{\"read_bytes\":%llu,\"write_bytes\":%llu,"
	    "\"cancelled_write_bytes\":0,\"rchar\":0,\"wchar\":0,"
	    "\"blkio_delay_s\":0},\"net\":{\"rx_bytes\":0,\"tx_bytes\":0}}",
	    p->pid, p->pid, p->ppid, p->ppid, at(p->start, t0, sizeof(t0)),
	    at(p->end, t1, sizeof(t1)), p->tool, p->tool, p->tool,
	    test_jstr(p->task, task, sizeof(task)), p->tool,
	    test_jstr(p->category, cat, sizeof(cat)), p->code, p->user, p->sys,
	    p->rss, p->rd, p->wr);
}

/* Put job 500's start or end record (phase), 4 CPUs and 8 GiB. */
static void put_job(struct store *s, const char *phase)
{
	bool end = !strcmp(phase, "end");

	test_put_json(s, "{\"type\":\"job\",\"schema\":1,\"host\":\"n1\","
	    "\"id\":\"j500-%s\",\"phase\":\"%s\",\"job\":{\"scheduler\":"
	    "\"slurm\",\"id\":\"500\",\"step\":null,\"run\":\"r5\","
	    "\"pipeline\":\"p5\",\"task\":null,\"user\":\"alice\","
	    "\"account\":\"bio\",\"cost_center\":null},\"name\":\"wf\","
	    "\"node\":\"n1\",\"uid\":1000,"
	    "\"start_time\":\"2026-03-01T10:00:00.000000Z\",\"end_time\":%s,"
	    "\"allocation\":{\"cpus\":4,\"mem_bytes\":8589934592,"
	    "\"gpus\":null},\"exit_code\":%s,\"cost\":%s}",
	    phase, phase, end ? "\"2026-03-01T10:01:40.000000Z\"" : "null",
	    end ? "0" : "null",
	    end ? "{\"amount\":0.12,\"currency\":\"USD\",\"source\":"
		  "\"config:node_hour\",\"formula\":\"allocation_share\","
		  "\"price_per_hour\":4.32,\"share\":1,\"elapsed_s\":100,"
		  "\"note\":null}" : "null");
}

/* Write the store. */
static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct store *s = NULL;

	assert_non_null(f);
	log_init("test_figures", 0, LOG_LVL_ERROR);
	snprintf(f->dir, sizeof(f->dir), "/tmp/jt_figures_XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->db, sizeof(f->db), "%s/jobtrace.db", f->dir);
	assert_int_equal(store_open(f->db, false, &s), 0);
	put_job(s, "start");
	for (size_t i = 0; i < NPROC; i++)
		put_proc(s, &job[i]);
	put_job(s, "end");
	assert_true(store_flush(s) > 0);
	store_close(s);
	*state = f;
	return 0;
}

/* Remove the store. */
static int teardown(void **state)
{
	struct fixture *f = *state;
	char path[160];

	for (const char *x = ""; x; x = !*x ? "-wal" : !strcmp(x, "-wal") ?
	     "-shm" : NULL) {
		snprintf(path, sizeof(path), "%s%s", f->db, x);
		unlink(path);
	}
	rmdir(f->dir);
	free(f);
	return 0;
}

/* ---- the views ----------------------------------------------------------- */

/* The views this test reads. */
enum view { V_REPORT, V_HTML, V_COST, V_RIGHTSIZE };

/* What view kind printed of q from the store at db (malloc'd); it must
 * succeed. */
static char *view(const char *db, const struct report_query *q,
		  enum view kind)
{
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	int err = -EINVAL;

	assert_non_null(out);
	if (kind == V_REPORT)
		err = qcmd_run_path(qcmd_find("report"), db, q, "json", out);
	else if (kind == V_HTML)
		err = qcmd_run_path(qcmd_find("report"), db, q, "html", out);
	else if (kind == V_COST)
		err = qcmd_run_path(qcmd_find("cost"), db, q, "json", out);
	else if (kind == V_RIGHTSIZE)
		err = qcmd_run_path(qcmd_find("rightsize"), db, q, "json",
				    out);
	assert_int_equal(err, 0);
	fclose(out);
	if (getenv("TEST_FIGURES_SHOW"))
		fputs(text, stdout);
	return text;
}

/* Number field of the element of array arr in json whose member key is
 * name (NULL: null), or NAN when there is none. */
static double jfind(const char *json, const char *arr, const char *key,
		    const char *name, const char *field)
{
	char sql[256];
	sqlite3_stmt *st = NULL;
	sqlite3 *db = NULL;
	double v = NAN;

	snprintf(sql, sizeof(sql), "SELECT json_extract(value, '$.%s') FROM"
		 " json_each(?1, ?2) WHERE json_extract(value, '$.%s') IS ?3",
		 field, key);
	assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL),
			 SQLITE_OK);
	sqlite3_bind_text(st, 1, json, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, arr, -1, SQLITE_STATIC);
	if (name)
		sqlite3_bind_text(st, 3, name, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW &&
	    sqlite3_column_type(st, 0) != SQLITE_NULL)
		v = sqlite3_column_double(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return v;
}

/* The text of the cell at p ("<td ...>...</td>" or th), tags dropped,
 * into out; returns what follows the cell, NULL at the row's end. */
static const char *cell(const char *p, const char *row_end, char *out,
			size_t len)
{
	const char *c = strstr(p, "<t");
	size_t o = 0;
	bool tag = false;

	while (c && c < row_end && c[2] != 'd' && c[2] != 'h')
		c = strstr(c + 2, "<t");
	if (!c || c >= row_end)
		return NULL;
	c = strchr(c, '>') + 1;
	for (; *c && strncmp(c, "</t", 3); c++) {
		if (*c == '<' || *c == '>')
			tag = *c == '<';
		else if (!tag && o + 1 < len)
			out[o++] = *c;
	}
	out[o] = '\0';
	return c;
}

/* The cell of table id (by-task, by-tool) in the row named name under
 * the column headed col, into out; fails when there is none. */
static void table_cell(const char *page, const char *id, const char *name,
		       const char *col, char *out, size_t len)
{
	char want[64], text[256];
	const char *t, *end, *row, *row_end, *p;
	int k = 0, at = -1;

	snprintf(want, sizeof(want), "id=\"%s\"", id);
	t = strstr(page, want);
	end = t ? strstr(t, "</table>") : NULL;
	assert_non_null(end);
	row_end = strstr(t, "</tr>");
	for (p = t; (p = cell(p, row_end, text, sizeof(text))); k++)
		if (!strcmp(text, col))
			at = k;
	if (at < 0)
		fail_msg("%s has no column %s", id, col);
	for (row = strstr(row_end, "<tr"); row && row < end;
	     row = strstr(row_end, "<tr")) {
		row_end = strstr(row, "</tr>");
		p = cell(row, row_end, text, sizeof(text));
		if (!p || strcmp(text, name))
			continue;
		for (k = 0; k < at && p; k++)
			p = cell(p, row_end, out, len);
		if (at == 0)
			util_strlcpy(out, text, len);
		if (!p && at)
			break;
		return;
	}
	fail_msg("%s has no row %s with a column %s", id, name, col);
}

/* A table's "12.3 MiB" or "40.0 s" as a number (bytes, seconds). */
static double unit_value(const char *s)
{
	static const struct { const char *u; double f; } units[] = {
		{ "B", 1 }, { "KiB", 1024.0 }, { "MiB", 1048576.0 },
		{ "GiB", 1073741824.0 }, { "ms", 1e-3 }, { "s", 1 },
	};
	char u[8] = "";
	double v;

	if (sscanf(s, "%lf %7s", &v, u) != 2)
		fail_msg("not a number with a unit: %s", s);
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(u, units[i].u))
			return v * units[i].f;
	fail_msg("unknown unit in %s", s);
	return NAN;
}

/* The figure v as the page's table printed it: within half its last
 * digit (0.05 of its unit). */
static void near_table(double v, const char *printed)
{
	double x = unit_value(printed);
	double unit = strstr(printed, "GiB") ? GIB : strstr(printed, "MiB") ?
		      MIB : strstr(printed, "KiB") ? 1024 : 1;

	if (fabs(x - v) > 0.05 * unit + 1e-9)
		fail_msg("table says %s, the figure is %.6f", printed, v);
}

/* An amount as the page's table printed it ("0.1052 USD"): within half
 * its last digit. */
static void near_money(double v, const char *printed)
{
	const char *dot = strchr(printed, '.');
	size_t digits = dot ? strspn(dot + 1, "0123456789") : 0;

	if (!strstr(printed, " USD") ||
	    fabs(atof(printed) - v) > 0.5 * pow(10, -(double)digits) + 1e-12)
		fail_msg("table says %s, the figure is %.6f", printed, v);
}

/* ---- the reference: what the test put in the store ---------------------- */

/* Sums over the processes of task (is_task) or tool name. */
struct ref {
	size_t procs, failed;
	double cpu;
	uint64_t rd, wr, largest;
};

/* Is p a process of the group: a task's (no scheduler-helper), a tool's. */
static bool in_group(const struct proc *p, bool is_task, const char *name)
{
	if (is_task)
		return p->task && !strcmp(p->task, name) &&
		       !(p->category && !strcmp(p->category,
						"scheduler-helper"));
	return !strcmp(p->tool, name);
}

/* The reference figures of a task or tool. */
static struct ref ref_of(bool is_task, const char *name)
{
	struct ref r = { 0 };

	for (size_t i = 0; i < NPROC; i++) {
		const struct proc *p = &job[i];

		if (!in_group(p, is_task, name))
			continue;
		r.procs++;
		r.failed += p->code != 0;
		r.cpu += p->user + p->sys;
		r.rd += p->rd;
		r.wr += p->wr;
		if (p->rss > r.largest)
			r.largest = p->rss;
	}
	return r;
}

/* The job's CPU: every process's. */
static double job_cpu(void)
{
	double c = 0;

	for (size_t i = 0; i < NPROC; i++)
		c += job[i].user + job[i].sys;
	return c;
}

/* ---- the test ------------------------------------------------------------ */

/* Every view of selector q. */
struct views {
	char *report, *cost_task, *cost_tool, *html, *data, *rightsize;
};

/* Read every view of q (rightsize only for --run). */
static void views_of(void **state, const struct report_query *q,
		     struct views *v)
{
	struct fixture *f = *state;
	struct report_query byq = *q;

	v->report = view(f->db, q, V_REPORT);
	v->html = view(f->db, q, V_HTML);
	v->data = test_page_data(v->html);
	byq.by = "task";
	v->cost_task = view(f->db, &byq, V_COST);
	byq.by = "tool";
	v->cost_tool = view(f->db, &byq, V_COST);
	v->rightsize = q->run ? view(f->db, q, V_RIGHTSIZE) : NULL;
}

/* Free the views. */
static void views_free(struct views *v)
{
	free(v->report);
	free(v->cost_task);
	free(v->cost_tool);
	free(v->html);
	free(v->data);
	free(v->rightsize);
}

/* A figure equal to its reference (within 1e-6 of it). */
#define SAME(what, got, want) do {					\
	double g_ = (got), w_ = (want);					\
	if (!(fabs(g_ - w_) <= 1e-6 * fmax(1, fabs(w_))))		\
		fail_msg("%s: %.6f, the reference %.6f", what, g_, w_); \
} while (0)

/* Check the figures of task (is_task) or tool name in every view
 * against the reference; a task's memory peak is peak, its instances
 * inst. */
static void check_group(const struct views *v, bool is_task,
			const char *name, uint64_t peak, size_t inst)
{
	static const struct { const char *json, *table; } sums[] = {
		{ "processes", "PROCESSES" }, { "failed", "FAILED" },
		{ "cpu_s", "CPU TIME" }, { "read_bytes", "READ" },
		{ "write_bytes", "WRITE" },
	};
	struct ref r = ref_of(is_task, name);
	const double want[] = { r.procs, r.failed, r.cpu, r.rd, r.wr };
	double share = r.cpu / job_cpu() * JOB_COST;
	const char *arr = is_task ? "$.by_task" : "$.by_tool";
	const char *key = is_task ? "task" : "tool";
	const char *table = is_task ? "by-task" : "by-tool";
	const char *cost = is_task ? v->cost_task : v->cost_tool;
	char c[128];

	if (!is_task)
		peak = r.largest;
	for (size_t i = 0; i < sizeof(sums) / sizeof(sums[0]); i++) {
		SAME(sums[i].json, jfind(v->report, arr, key, name,
					 sums[i].json), want[i]);
		table_cell(v->html, table, name, sums[i].table, c, sizeof(c));
		if (i < 2)
			SAME(sums[i].table, atof(c), want[i]);
		else
			near_table(want[i], c);
	}
	SAME("report peak", jfind(v->report, arr, key, name, is_task ?
				  "mem_peak_bytes" : "peak_rss_bytes"), peak);
	table_cell(v->html, table, name, is_task ? "PEAK" : "PEAK RSS", c,
		   sizeof(c));
	near_table((double)peak, c);

	SAME("cost processes", jfind(cost, "$.groups", "name", name,
				     "processes"), r.procs);
	SAME("cost cpu", jfind(cost, "$.groups", "name", name, "cpu_s"),
	     r.cpu);
	SAME("cost", jfind(cost, "$.groups", "name", name, "cost"), share);
	table_cell(v->html, table, name, "COST", c, sizeof(c));
	near_money(share, c);
	if (!is_task)
		return;

	SAME("report instances", jfind(v->report, arr, key, name,
				       "instances"), inst);
	table_cell(v->html, table, name, "INSTANCES", c, sizeof(c));
	SAME("table instances", atof(c), inst);
	if (v->rightsize) {
		SAME("rightsize instances", jfind(v->rightsize, "$.tasks",
			"task", name, "instances"), inst);
		SAME("rightsize peak", jfind(v->rightsize, "$.tasks", "task",
			name, "used_p95.mem_peak_bytes"), peak);
	}
	SAME("page lane processes", jfind(v->data, "$.lanes", "n", name, "p"),
	     r.procs);
	SAME("page lane failed", jfind(v->data, "$.lanes", "n", name, "f"),
	     r.failed);
	SAME("page lane cpu", jfind(v->data, "$.lanes", "n", name, "cpu"),
	     r.cpu);
	SAME("page lane instances", jfind(v->data, "$.lanes", "n", name, "i"),
	     inst);
}

/* Every task's and tool's figures of one selector. */
static void check_all(void **state, const struct report_query *q)
{
	static const char *const tools[] = {
		"bash", "sh", "bwa", "samtools", "snakemake", "sort", "sbatch",
	};
	struct views v = { 0 };

	views_of(state, q, &v);
	/* instance 1: sh + bwa + samtools alive together, python left out */
	check_group(&v, true, "align", 500 * MIB + 2 * MIB, 2);
	check_group(&v, true, "sort", 50 * MIB, 1);
	for (size_t i = 0; i < sizeof(tools) / sizeof(tools[0]); i++)
		check_group(&v, false, tools[i], 0, 0);
	/* the totals: every process once */
	SAME("cost total", jfind(v.cost_task, "$.totals", "currency", "USD",
				 "cost"), JOB_COST);
	SAME("cost total processes", jfind(v.cost_task, "$.totals", "currency",
					   "USD", "processes"), NPROC);
	views_free(&v);
}

/* --run: report, cost, rightsize and the page. */
static void test_by_run(void **state)
{
	struct report_query q = { .run = "r5" };

	check_all(state, &q);
}

/* --job: report, cost and the page (rightsize takes runs). */
static void test_by_job(void **state)
{
	struct report_query q = { .job = "500" };

	check_all(state, &q);
}

/* Put process pid of job 600 (run r6, task neg) with CPU user and sys. */
static void put_neg(struct store *s, int pid, int parent, double start,
		    double end, double user, double sys)
{
	char t0[40], t1[40];

	test_put_json(s, "{\"type\":\"process\",\"schema\":1,\"host\":\"n1\","
	    "\"id\":\"p-n1-%d\",\"pid\":%d,\"ppid\":%d,"
	    "\"parent_id\":\"p-n1-%d\",\"start_time\":\"%s\","
	    "\"end_time\":\"%s\",\"exe\":\"/usr/bin/neg\",\"comm\":\"neg\","
	    "\"argv\":[\"neg\"],\"uid\":1000,"
	    "\"job\":{\"scheduler\":\"slurm\",\"id\":\"600\",\"step\":\"batch\","
	    "\"run\":\"r6\",\"pipeline\":null,\"task\":\"neg\",\"user\":null,"
	    "\"account\":null,\"cost_center\":null},"
	    "\"tool\":{\"name\":\"neg\",\"category\":null},"
	    "\"exit\":{\"code\":0,\"signal\":null,\"oom_killed\":false},"
	    "\"cpu\":{\"user_s\":%.6f,\"sys_s\":%.6f},"
	    "\"mem\":{\"peak_rss_bytes\":1048576},"
	    "\"io\":{\"read_bytes\":0,\"write_bytes\":0,"
	    "\"cancelled_write_bytes\":0,\"rchar\":0,\"wchar\":0,"
	    "\"blkio_delay_s\":0},\"net\":{\"rx_bytes\":0,\"tx_bytes\":0}}",
	    pid, pid, parent, parent, at(600 + start, t0, sizeof(t0)),
	    at(600 + end, t1, sizeof(t1)), user, sys);
}

/*
 * CPU below 0: the task neg's one instance (10 s) of a process with user
 * -5 s and system 3 s and its child with 2 s and -1 s has 3 + 2 = 5 s of
 * CPU in report, the page and rightsize (whose cores were 0.1: it added
 * user and system before it cut at 0); cost cuts each too (no job end
 * record here: cost has nothing to price).
 */
static void test_negative_cpu(void **state)
{
	struct fixture *f = *state;
	struct report_query q = { .run = "r6" };
	struct store *s = NULL;
	struct views v = { 0 };
	char c[128];

	assert_int_equal(store_open(f->db, false, &s), 0);
	put_neg(s, 600, 1, 0, 10, -5, 3);
	put_neg(s, 601, 600, 2, 8, 2, -1);
	assert_true(store_flush(s) > 0);
	store_close(s);

	v.report = view(f->db, &q, V_REPORT);
	v.html = view(f->db, &q, V_HTML);
	v.data = test_page_data(v.html);
	v.rightsize = view(f->db, &q, V_RIGHTSIZE);
	SAME("report cpu", jfind(v.report, "$.by_task", "task", "neg",
				 "cpu_s"), 5);
	table_cell(v.html, "by-task", "neg", "CPU TIME", c, sizeof(c));
	near_table(5, c);
	SAME("page lane cpu", jfind(v.data, "$.lanes", "n", "neg", "cpu"), 5);
	SAME("rightsize wall", jfind(v.rightsize, "$.tasks", "task", "neg",
				     "used_p95.wall_s"), 10);
	SAME("rightsize cores", jfind(v.rightsize, "$.tasks", "task", "neg",
				      "used_p95.cores"), 5.0 / 10);
	views_free(&v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_by_run),
		cmocka_unit_test(test_by_job),
		cmocka_unit_test(test_negative_cpu),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
