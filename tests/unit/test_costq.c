// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_costq.c - `jobtrace cost` (agent/query/costq.c) on stores of chosen
 * records: the split of a job's cost by CPU adds up to the job's cost,
 * the TOTAL is the same for every --by, jobs without a price are listed
 * and never priced, currencies are never added, a node's idle time is the
 * union of its jobs' time subtracted (not their sum), and --run counts a
 * job outside the run only for the run's processes.
 *
 * The records are written here as schema v1 JSON text (the `cost` object
 * of the job end records as helper-13 section 3 fixes it), and every
 * expected figure is worked out by hand from them in the comments.
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

#include <cmocka.h>

#include "costq.h"
#include "json.h"
#include "json_check.h"
#include "log.h"
#include "store.h"
#include "test_files.h"

#define T0 1772359200.0		/* 2026-03-01T10:00:00Z */
#define NOTE_NO_PRICE "no price configured (cost.node_hour," \
	" cost.core_hour/gib_hour/gpu_hour or cost.prices_file)"

/* A job record to write. */
struct job {
	const char *host, *id, *run, *user, *account, *cost_center;
	double start, end;	/* seconds after T0; end NAN: a start record */
	double amount;		/* NAN: null, with note */
	const char *currency;
	double cpus;		/* 0: no allocation */
	double usage_cpu;	/* NAN: no usage */
	unsigned uid;
};

/* A process record to write. */
struct proc {
	const char *host, *job, *run, *task, *tool, *exe;
	double user, sys;
	double start;		/* seconds after T0 */
};

static unsigned seq;		/* record ids */

/* Put one record given as printf output into s. */
__attribute__((format(printf, 2, 3)))
static void put(struct store *s, const char *fmt, ...)
{
	char buf[4096];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	assert_true(n > 0 && (size_t)n < sizeof(buf));
	if (store_put_json(s, buf, (size_t)n))
		fail_msg("refused: %s", buf);
}

/* T0 + off as a JSON string value ("null" for NAN). */
static const char *when(double off, char *buf, size_t len)
{
	char t[40];

	if (isnan(off))
		return "null";
	json_format_time((uint64_t)((T0 + off) * 1e9 + 0.5), t, sizeof(t));
	snprintf(buf, len, "\"%s\"", t);
	return buf;
}

/* Put a job's start record, and its end record unless j->end is NAN. */
static void put_job(struct store *s, const struct job *j)
{
	char st[48], en[48], run[64], user[64], acc[64], cc[64];
	char cost[512], alloc[128], usage[128], id[32];
	bool end = !isnan(j->end);

	for (int phase = 0; phase < 1 + end; phase++) {
		if (!phase)
			snprintf(cost, sizeof(cost), "null");
		else if (isnan(j->amount))
			snprintf(cost, sizeof(cost), "{\"amount\":null,"
				 "\"currency\":null,\"source\":null,"
				 "\"formula\":null,\"price_per_hour\":null,"
				 "\"share\":null,\"elapsed_s\":null,"
				 "\"note\":\"%s\"}", NOTE_NO_PRICE);
		else
			snprintf(cost, sizeof(cost), "{\"amount\":%.17g,"
				 "\"currency\":\"%s\",\"source\":"
				 "\"config:node_hour\",\"formula\":"
				 "\"allocation_share\",\"price_per_hour\":3.6,"
				 "\"share\":1,\"elapsed_s\":%.17g,"
				 "\"note\":null}", j->amount, j->currency,
				 j->end - j->start);
		if (j->cpus > 0)
			snprintf(alloc, sizeof(alloc), "{\"cpus\":%g,"
				 "\"mem_bytes\":1073741824,\"gpus\":null}",
				 j->cpus);
		else
			snprintf(alloc, sizeof(alloc), "{\"cpus\":null,"
				 "\"mem_bytes\":null,\"gpus\":null}");
		if (phase && !isnan(j->usage_cpu))
			snprintf(usage, sizeof(usage), ",\"usage\":{\"cpu_s\":"
				 "%.17g,\"processes\":1,\"mem_peak_bytes\":null,"
				 "\"mem_peak_source\":null,\"steps\":[]}",
				 j->usage_cpu);
		else
			usage[0] = '\0';
		snprintf(id, sizeof(id), "rec-%u", ++seq);
		put(s, "{\"type\":\"job\",\"schema\":1,\"host\":\"%s\","
		    "\"id\":\"%s\",\"phase\":\"%s\",\"job\":{\"scheduler\":"
		    "\"slurm\",\"id\":\"%s\",\"step\":null,\"run\":%s,"
		    "\"pipeline\":null,\"task\":null,\"user\":%s,"
		    "\"account\":%s,\"cost_center\":%s},\"name\":null,"
		    "\"partition\":null,\"node\":\"%s\",\"uid\":%u,"
		    "\"start_time\":%s,\"end_time\":%s,\"allocation\":%s,"
		    "\"exit_code\":%s,\"cost\":%s%s}",
		    j->host, id, phase ? "end" : "start", j->id,
		    test_jstr(j->run, run, sizeof(run)),
		    test_jstr(j->user, user, sizeof(user)),
		    test_jstr(j->account, acc, sizeof(acc)),
		    test_jstr(j->cost_center, cc, sizeof(cc)), j->host, j->uid,
		    when(j->start, st, sizeof(st)),
		    phase ? when(j->end, en, sizeof(en)) : "null", alloc,
		    phase ? "0" : "null", cost, usage);
	}
}

/* Put a process record (finished a second after its start) with the
 * tool category cat (NULL: null). */
static void put_proc_cat(struct store *s, const struct proc *p,
			 const char *cat)
{
	char st[48], en[48], run[64], task[64], tool[64], exe[128], c[64];
	unsigned n = ++seq;

	put(s, "{\"type\":\"process\",\"schema\":1,\"host\":\"%s\","
	    "\"id\":\"proc-%u\",\"pid\":%u,\"ppid\":1,\"start_time\":%s,"
	    "\"exe\":%s,\"comm\":\"x\",\"argv\":[\"x\"],\"uid\":1000,"
	    "\"job\":{\"scheduler\":\"slurm\",\"id\":\"%s\",\"step\":\"batch\","
	    "\"run\":%s,\"pipeline\":null,\"task\":%s,\"user\":null,"
	    "\"account\":null,\"cost_center\":null},\"tool\":{\"name\":%s,"
	    "\"category\":%s},\"end_time\":%s,\"exit\":{\"code\":0,"
	    "\"signal\":null,\"oom_killed\":false},\"cpu\":{\"user_s\":%.17g,"
	    "\"sys_s\":%.17g},\"mem\":{\"peak_rss_bytes\":1},\"io\":"
	    "{\"read_bytes\":0,\"write_bytes\":0},\"net\":{\"rx_bytes\":0,"
	    "\"tx_bytes\":0}}", p->host, n, 1000 + n,
	    when(p->start, st, sizeof(st)), test_jstr(p->exe, exe, sizeof(exe)),
	    p->job, test_jstr(p->run, run, sizeof(run)),
	    test_jstr(p->task, task, sizeof(task)),
	    test_jstr(p->tool, tool, sizeof(tool)), test_jstr(cat, c, sizeof(c)),
	    when(p->start + 1, en, sizeof(en)), p->user, p->sys);
}

/* Put a process record without a tool category. */
static void put_proc(struct store *s, const struct proc *p)
{
	put_proc_cat(s, p, NULL);
}

/* Put a host record; per_hour NAN: no price (with the note). */
static void put_host(struct store *s, const char *host, const char *phase,
		     double off, double per_hour, const char *currency)
{
	char t[48], price[256];

	if (isnan(per_hour))
		snprintf(price, sizeof(price), "{\"per_hour\":null,"
			 "\"currency\":null,\"source\":null,\"node_cpus\":2,"
			 "\"node_mem_bytes\":1000,\"note\":\"%s\"}",
			 NOTE_NO_PRICE);
	else
		snprintf(price, sizeof(price), "{\"per_hour\":%.17g,"
			 "\"currency\":\"%s\",\"source\":\"config:node_hour\","
			 "\"node_cpus\":2,\"node_mem_bytes\":1000,"
			 "\"note\":null}", per_hour, currency);
	put(s, "{\"type\":\"host\",\"schema\":1,\"host\":\"%s\","
	    "\"id\":\"host-%u\",\"time\":%s,\"phase\":\"%s\","
	    "\"boot_id\":\"b\",\"agent_version\":\"0\",\"events_seen\":0,"
	    "\"drops\":{},\"price\":%s}", host, ++seq,
	    when(off, t, sizeof(t)), phase, price);
}

/* Put every job and process record of a case's tables. */
static void put_all(struct store *s, const struct job *jobs, size_t njobs,
		    const struct proc *procs, size_t nprocs)
{
	for (size_t i = 0; i < njobs; i++)
		put_job(s, &jobs[i]);
	for (size_t i = 0; i < nprocs; i++)
		put_proc(s, &procs[i]);
}

#define PUT_ALL(s, jobs, procs) \
	put_all((s), (jobs), sizeof(jobs) / sizeof((jobs)[0]), (procs), \
		sizeof(procs) / sizeof((procs)[0]))

/* A private temporary store. */
static struct store *new_store(void)
{
	struct store *s = NULL;

	assert_int_equal(store_open("", false, &s), 0);
	return s;
}

/* Commit and compute q by `by`; the result is checked to be there. */
static struct costq_result *compute(struct store *s, struct report_query q,
				    const char *by, double now)
{
	struct costq_result *r = NULL;

	assert_true(store_flush(s) >= 0);
	q.by = by;
	assert_int_equal(costq_compute(s, "test", &q, now, &r), 0);
	assert_non_null(r);
	return r;
}

/* The row named name (an idle node when node) in currency cur. */
static const struct costq_row *row(const struct costq_result *r,
				   const char *name, const char *cur,
				   bool node)
{
	for (size_t i = 0; i < r->nrows; i++)
		if (!strcmp(r->rows[i].name, name) &&
		    !strcmp(r->rows[i].currency, cur) &&
		    r->rows[i].idle_node == node)
			return &r->rows[i];
	fail_msg("no row %s in %s", name, cur);
	return NULL;
}

/* The total of currency cur. */
static const struct costq_total *total(const struct costq_result *r,
				       const char *cur)
{
	for (size_t i = 0; i < r->ntotals; i++)
		if (!strcmp(r->totals[i].currency, cur))
			return &r->totals[i];
	fail_msg("no total in %s", cur);
	return NULL;
}

/* a and b equal to 1e-9 relative (absolute near 0). */
static void near(double a, double b)
{
	if (fabs(a - b) > 1e-9 * fmax(1, fmax(fabs(a), fabs(b))))
		fail_msg("%.17g != %.17g", a, b);
}

/* Sum of the rows (groups and idle nodes) of currency cur. */
static double rows_sum(const struct costq_result *r, const char *cur,
		       double *idle)
{
	double sum = 0;

	*idle = 0;
	for (size_t i = 0; i < r->nrows; i++) {
		if (strcmp(r->rows[i].currency, cur))
			continue;
		sum += r->rows[i].cost;
		*idle += r->rows[i].idle;
	}
	return sum;
}

/* ---- a job's cost split by CPU ------------------------------------------- */

/*
 * Job 100 on n1: cost 1 USD, 4 CPUs for 100 s, usage.cpu_s 150, so its
 * idle allocation is 1 x (1 - 150 / 400) = 0.625.  Processes' own CPU:
 * bwa 10 + 1 (align), samtools 20 (align), sort 5 (sort), bash 0 (no
 * task): 36 s in all.
 */
/* Amounts for people: two decimals from 1 on, four below, two
 * significant digits under 0.01, never more than 12 decimals. */
static void test_money_text(void **state)
{
	static const struct { double v; const char *want; } c[] = {
		{ 8.164, "8.16" }, { 1, "1.00" }, { 0.5, "0.5000" },
		{ 0.0123, "0.0123" }, { 0.0099, "0.0099" },
		{ 0.000044, "0.000044" }, { 0.0000054, "0.0000054" },
		{ 0, "0.0000" }, { 1e-15, "0.000000000000" },
		{ -0.25, "-0.2500" },
	};
	char buf[40];

	(void)state;
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		assert_string_equal(costq_money(c[i].v, buf, sizeof(buf)),
				    c[i].want);
}

static void test_split_by_cpu(void **state)
{
	static const struct proc procs[] = {
		{ "n1", "100", NULL, "align", "bwa", "/usr/bin/bwa", 10, 1, 1 },
		{ "n1", "100", NULL, "align", "samtools", NULL, 20, 0, 2 },
		{ "n1", "100", NULL, "sort", NULL, "/usr/bin/sort", 4, 1, 3 },
		{ "n1", "100", NULL, NULL, "bash", NULL, 0, 0, 0 },
	};
	struct job j = { "n1", "100", NULL, "alice", "bio", "lab-a", 0, 100,
			 1.0, "USD", 4, 150, 1000 };
	struct report_query q = { .job = "100" };
	struct store *s = new_store();
	struct costq_result *r;
	double idle;

	(void)state;
	put_all(s, &j, 1, procs, sizeof(procs) / sizeof(procs[0]));

	r = compute(s, q, "task", T0 + 200);
	near(row(r, "align", "USD", false)->cost, 31.0 / 36);
	near(row(r, "sort", "USD", false)->cost, 5.0 / 36);
	near(row(r, COSTQ_NONE, "USD", false)->cost, 0);
	assert_int_equal(row(r, COSTQ_NONE, "USD", false)->processes, 1);
	near(row(r, "align", "USD", false)->idle, 0.625 * 31 / 36);
	near(row(r, "align", "USD", false)->cpu_s, 31);
	assert_int_equal(row(r, "align", "USD", false)->processes, 2);
	near(rows_sum(r, "USD", &idle), 1.0);
	near(idle, 0.625);
	assert_true(total(r, "USD")->cost == 1.0);	/* the job's, exactly */
	near(total(r, "USD")->idle_alloc, 0.625);
	assert_int_equal(total(r, "USD")->jobs, 1);
	assert_int_equal(total(r, "USD")->processes, 4);
	assert_false(r->node_idle);	/* --job: no idle nodes */
	costq_result_free(r);

	/* by tool: the rules' name, else the exe's base name */
	r = compute(s, q, "tool", T0 + 200);
	near(row(r, "bwa", "USD", false)->cost, 11.0 / 36);
	near(row(r, "samtools", "USD", false)->cost, 20.0 / 36);
	near(row(r, "sort", "USD", false)->cost, 5.0 / 36);
	near(row(r, "bash", "USD", false)->cost, 0);
	assert_int_equal(r->nrows, 4);
	costq_result_free(r);
	store_close(s);
}

/*
 * A submitting client is no process of a task (tasks.h): job 200 (1 USD)
 * ran align (8 s of CPU) and the sbatch of a follow-up with task align,
 * tool category scheduler-helper (2 s): align 0.80, (none) 0.20.
 */
static void test_submitter_no_task(void **state)
{
	static const struct proc align = { "n1", "200", NULL, "align", "bwa",
					   NULL, 8, 0, 1 };
	static const struct proc sbatch = { "n1", "200", NULL, "align",
					    "sbatch", NULL, 2, 0, 2 };
	struct job j = { "n1", "200", NULL, "alice", "bio", "lab-a", 0, 100,
			 1.0, "USD", 0, 10, 1000 };
	struct report_query q = { .job = "200" };
	struct store *s = new_store();
	struct costq_result *r;

	(void)state;
	put_all(s, &j, 1, NULL, 0);
	put_proc(s, &align);
	put_proc_cat(s, &sbatch, "scheduler-helper");
	r = compute(s, q, "task", T0 + 200);
	near(row(r, "align", "USD", false)->cost, 0.8);
	assert_int_equal(row(r, "align", "USD", false)->processes, 1);
	near(row(r, COSTQ_NONE, "USD", false)->cost, 0.2);
	assert_int_equal(row(r, COSTQ_NONE, "USD", false)->processes, 1);
	assert_true(total(r, "USD")->cost == 1.0);
	costq_result_free(r);
	store_close(s);
}

/*
 * 1000 processes of uneven CPU (a few with none) and a cost that is not
 * a round number: the parts add up to the job's cost to 1e-9 relative,
 * by task and by tool.
 */
static void test_split_many(void **state)
{
	struct job j = { "n1", "7", NULL, "u", "a", "c", 0, 3600,
			 12.3456789, "USD", 8, NAN, 1000 };
	struct report_query q = { .job = "7" };
	static const char *const tasks[] = { "t0", "t1", "t2", NULL };
	static const char *const tools[] = { "bwa", "gatk", "samtools" };
	struct store *s = new_store();
	double cpu = 0, idle;

	(void)state;
	put_job(s, &j);
	for (int i = 0; i < 1000; i++) {
		struct proc p = { "n1", "7", NULL, tasks[i % 4], tools[i % 3],
				  NULL, (i * 7919 % 1000) / 37.0,
				  (i % 11) / 1000.0, i * 0.5 };

		cpu += p.user + p.sys;
		put_proc(s, &p);
	}
	for (int b = 0; b < 2; b++) {
		struct costq_result *r = compute(s, q, b ? "tool" : "task",
						 T0 + 4000);

		near(rows_sum(r, "USD", &idle), 12.3456789);
		/* no usage.cpu_s: the processes' CPU over 8 x 3600 */
		near(idle, 12.3456789 * (1 - cpu / (8 * 3600)));
		assert_true(total(r, "USD")->cost == 12.3456789);
		costq_result_free(r);
	}
	store_close(s);
}

/* A job whose processes used no CPU, and one without processes. */
static void test_no_process(void **state)
{
	struct job a = { "n1", "1", NULL, "u", "a", "c", 0, 10, 0.5, "USD",
			 0, NAN, 1000 };
	struct job b = { "n1", "2", NULL, "u", "a", "c", 0, 10, 0.25, "USD",
			 0, NAN, 1000 };
	struct proc p = { "n1", "1", NULL, "t", "sleep", NULL, 0, 0, 1 };
	struct report_query q = { .since = T0 - 10 };
	struct store *s = new_store();
	struct costq_result *r;

	(void)state;
	put_job(s, &a);
	put_job(s, &b);
	put_proc(s, &p);
	r = compute(s, q, "task", T0 + 20);
	near(row(r, COSTQ_NO_PROCESS, "USD", false)->cost, 0.75);
	assert_int_equal(row(r, COSTQ_NO_PROCESS, "USD", false)->jobs, 2);
	near(total(r, "USD")->cost, 0.75);
	costq_result_free(r);
	store_close(s);
}

/* ---- a fleet: every --by, unpriced jobs and nodes, currencies ---------- */

/*
 * since = T0, now = T0 + 4000.
 *  n1: host start T0-1000 at 3.6 USD/h, stop T0+5000.
 *  n2: host start T0-1000 at 7.2 USD/h, no stop (up until now).
 *  n3: host start T0 without a price.
 *  job 1 on n1 [100, 1100]: 1 USD, 2 CPUs, usage 1000 s: idle 0.5.
 *     bwa 300 s (task a), samtools 100 s (task b).
 *  job 2 on n1 [1000, 1500]: 0.5 USD, 1 CPU, usage 100 s: idle 0.4;
 *     bwa 50 s (a), python3 50 s (c, no tool name: exe).
 *  job 2 on n2 [1000, 2000]: 0.8 USD, no allocation, no processes.
 *  job 3 on n2 [2500, 3000]: 2 EUR; bwa 10 s (a); no cost center.
 *  job 4 on n1 [3000, 3500]: no price (note); 5 s.
 *  job 5 on n3: started at 3600, running.
 *  job 6 on n1 [-900, -800]: 9 USD, ended before since.
 *
 * USD: jobs 1 + 0.5 + 0.8 = 2.3; idle allocation 0.9.
 * Idle nodes: n1 up [0, 4000], jobs' union [100, 1500] + [3000, 3500]
 * = 1900 s (their sum would be 1000 + 500 + 500 = 2000), idle 2100 s at
 * 0.001 USD/s = 2.1 USD; n2 up [0, 4000], jobs [1000, 2000] + [2500,
 * 3000], idle 2500 s at 0.002 = 5 USD; n3 up [0, 4000] but job 5 from
 * 3600: 3600 s idle without a price.  USD total 9.4; EUR 2.
 */
static struct store *fleet(void)
{
	static const struct job jobs[] = {
		{ "n1", "1", NULL, "alice", "bio", "lab-a", 100, 1100, 1.0,
		  "USD", 2, 1000, 1000 },
		{ "n1", "2", NULL, "bob", "bio", "lab-b", 1000, 1500, 0.5,
		  "USD", 1, 100, 1001 },
		{ "n2", "2", NULL, "bob", "bio", "lab-b", 1000, 2000, 0.8,
		  "USD", 0, NAN, 1001 },
		{ "n2", "3", NULL, "alice", "chem", NULL, 2500, 3000, 2.0,
		  "EUR", 0, NAN, 1000 },
		{ "n1", "4", NULL, "carol", "bio", "lab-a", 3000, 3500, NAN,
		  NULL, 1, NAN, 1002 },
		{ "n3", "5", NULL, "carol", "bio", "lab-a", 3600, NAN, NAN,
		  NULL, 1, NAN, 1002 },
		{ "n1", "6", NULL, "alice", "bio", "lab-a", -900, -800, 9.0,
		  "USD", 1, NAN, 1000 },
	};
	static const struct proc procs[] = {
		{ "n1", "1", NULL, "a", "bwa", NULL, 290, 10, 110 },
		{ "n1", "1", NULL, "b", "samtools", NULL, 100, 0, 120 },
		{ "n1", "2", NULL, "a", "bwa", NULL, 50, 0, 1010 },
		{ "n1", "2", NULL, "c", NULL, "/usr/bin/python3", 45, 5, 1020 },
		{ "n2", "3", NULL, "a", "bwa", NULL, 10, 0, 2510 },
		{ "n1", "4", NULL, "a", "bwa", NULL, 5, 0, 3010 },
		{ "n1", "6", NULL, "a", "bwa", NULL, 5, 0, -850 },
	};
	struct store *s = new_store();

	put_host(s, "n1", "start", -1000, 3.6, "USD");
	put_host(s, "n1", "stop", 5000, 3.6, "USD");
	put_host(s, "n2", "start", -1000, 7.2, "USD");
	put_host(s, "n3", "start", 0, NAN, NULL);
	PUT_ALL(s, jobs, procs);
	return s;
}

/* The fleet's totals, the same whatever the grouping. */
static void check_fleet_totals(const struct costq_result *r)
{
	const struct costq_total *usd = total(r, "USD"), *eur = total(r, "EUR");

	assert_int_equal(r->ntotals, 2);
	near(usd->cost, 9.4);
	near(usd->jobs_cost, 2.3);
	near(usd->idle_alloc, 0.9);
	near(usd->idle_nodes, 7.1);
	assert_int_equal(usd->jobs, 2);
	assert_int_equal(usd->processes, 4);
	near(usd->cpu_s, 500);
	near(eur->cost, 2.0);
	near(eur->idle_alloc, 0);
	near(eur->idle_nodes, 0);
	assert_int_equal(eur->jobs, 1);
}

/* Every --by: the same totals, and its rows add up to them. */
static void test_totals_every_by(void **state)
{
	static const char *const bys[] = {
		"job", "task", "tool", "user", "account", "cost-center",
	};
	struct report_query q = { .since = T0 };
	struct store *s = fleet();
	double cost[2], ref[2] = { 0 }, idle;

	(void)state;
	for (size_t i = 0; i < sizeof(bys) / sizeof(bys[0]); i++) {
		struct costq_result *r = compute(s, q, bys[i], T0 + 4000);

		check_fleet_totals(r);
		cost[0] = total(r, "USD")->cost;
		cost[1] = total(r, "EUR")->cost;
		if (!i) {
			ref[0] = cost[0];
			ref[1] = cost[1];
		}
		/* not only close: the same number, whatever the grouping */
		assert_true(cost[0] == ref[0] && cost[1] == ref[1]);
		near(rows_sum(r, "USD", &idle), total(r, "USD")->cost);
		near(idle, 0.9 + 7.1);
		near(rows_sum(r, "EUR", &idle), 2.0);
		near(row(r, "n1", "USD", true)->cost, 2.1);
		near(row(r, "n1", "USD", true)->idle_s, 2100);
		near(row(r, "n2", "USD", true)->cost, 5.0);
		costq_result_free(r);
	}
	store_close(s);
}

/* The groups of each --by, worked out from the fleet by hand. */
static void test_fleet_groups(void **state)
{
	struct report_query q = { .since = T0 };
	struct store *s = fleet();
	struct costq_result *r;

	(void)state;
	r = compute(s, q, "task", T0 + 4000);
	/* a: job 1 x 300/400 + job 2 on n1 x 50/100 */
	near(row(r, "a", "USD", false)->cost, 0.75 + 0.25);
	near(row(r, "a", "USD", false)->idle, 0.5 * 0.75 + 0.4 * 0.5);
	assert_int_equal(row(r, "a", "USD", false)->jobs, 2);
	near(row(r, "b", "USD", false)->cost, 0.25);
	near(row(r, "c", "USD", false)->cost, 0.25);
	near(row(r, COSTQ_NO_PROCESS, "USD", false)->cost, 0.8);
	near(row(r, "a", "EUR", false)->cost, 2.0);
	costq_result_free(r);

	r = compute(s, q, "tool", T0 + 4000);
	near(row(r, "bwa", "USD", false)->cost, 1.0);
	near(row(r, "python3", "USD", false)->cost, 0.25);
	costq_result_free(r);

	r = compute(s, q, "job", T0 + 4000);
	near(row(r, "2", "USD", false)->cost, 1.3);	/* both hosts */
	assert_int_equal(row(r, "2", "USD", false)->jobs, 1);
	near(row(r, "2", "USD", false)->idle, 0.4);
	costq_result_free(r);

	r = compute(s, q, "user", T0 + 4000);
	near(row(r, "alice", "USD", false)->cost, 1.0);
	near(row(r, "bob", "USD", false)->cost, 1.3);
	/* alice in two currencies: two rows, never one sum */
	near(row(r, "alice", "EUR", false)->cost, 2.0);
	costq_result_free(r);

	r = compute(s, q, "cost-center", T0 + 4000);
	near(row(r, "lab-a", "USD", false)->cost, 1.0);
	near(row(r, COSTQ_NONE, "EUR", false)->cost, 2.0);
	costq_result_free(r);
	store_close(s);
}

/* Jobs and nodes without a price: listed with the note, never priced. */
static void test_unpriced(void **state)
{
	struct report_query q = { .since = T0 };
	struct store *s = fleet();
	struct costq_result *r = compute(s, q, "job", T0 + 4000);
	bool job4 = false, n3 = false;
	char *text = NULL;
	size_t len = 0;
	FILE *out;

	(void)state;
	for (size_t i = 0; i < r->nrows; i++)
		assert_string_not_equal(r->rows[i].name, "4");
	for (size_t i = 0; i < r->nunpriced; i++) {
		const struct costq_unpriced *x = &r->unpriced[i];

		if (x->job && !strcmp(x->job, "4")) {
			job4 = true;
			assert_string_equal(x->host, "n1");
			assert_string_equal(x->note, NOTE_NO_PRICE);
		} else if (!x->job && !strcmp(x->host, "n3")) {
			n3 = true;
			near(x->idle_s, 3600);
		}
	}
	assert_true(job4 && n3);
	assert_int_equal(r->nunpriced, 2);
	assert_int_equal(r->nrunning, 1);
	assert_string_equal(r->running[0].job, "5");

	out = open_memstream(&text, &len);
	assert_int_equal(costq_print(r, &q, REPORT_TEXT, out), 0);
	fclose(out);
	assert_non_null(strstr(text, "1 job without a cost, not counted: "
			       NOTE_NO_PRICE ": 4 on n1\n"));
	assert_non_null(strstr(text, "node n3 idle 1.00 h without a price"));
	assert_non_null(strstr(text, "1 job running (no end record"));
	/* the answer first */
	assert_non_null(strstr(text, "\nTOTAL 9.40 USD = 2.30 USD for 2 jobs"));
	assert_non_null(strstr(text, "\nTOTAL 2.00 EUR"));
	free(text);
	costq_result_free(r);
	store_close(s);
}

/* Only a null cost: nothing is counted, the job is listed. */
static void test_only_unpriced(void **state)
{
	struct job j = { "n1", "9", NULL, "u", "a", "c", 0, 10, NAN, NULL, 2,
			 NAN, 1000 };
	struct report_query q = { .job = "9" };
	struct store *s = new_store();
	struct costq_result *r;

	(void)state;
	put_job(s, &j);
	r = compute(s, q, "task", T0 + 20);
	assert_int_equal(r->ntotals, 0);
	assert_int_equal(r->nrows, 0);
	assert_int_equal(r->nunpriced, 1);
	costq_result_free(r);
	store_close(s);
}

/* ---- idle nodes ---------------------------------------------------------- */

/*
 * since = T0 + 100, now = T0 + 2000.  n1 at 36 USD/h (0.01/s): start
 * T0, stop T0 + 1100, start T0 + 1500 (up to now).  Jobs on n1: [200,
 * 500] and [400, 700] overlap, [900, 1000], [1200, 1300] (the agent is
 * down then), [1800, 2500] (ends after now: cut).  Up in the window:
 * [100, 1100] and [1500, 2000]; jobs cover [200, 700] + [900, 1000] and
 * [1800, 2000]: idle 1000 - 600 + 500 - 200 = 700 s = 7 USD.
 * n2 at 3.6 EUR/h: start T0 - 50, spool_drop T0 + 300, start T0 + 600
 * (the agent ended unseen: known up to T0 + 300), stop T0 + 800: idle
 * [100, 300] + [600, 800] = 400 s = 0.4 EUR.
 */
static void test_node_idle(void **state)
{
	static const struct job jobs[] = {
		{ "n1", "1", NULL, "u", "a", "c", 200, 500, 0.1, "USD", 0, NAN, 1 },
		{ "n1", "2", NULL, "u", "a", "c", 400, 700, 0.1, "USD", 0, NAN, 1 },
		{ "n1", "3", NULL, "u", "a", "c", 900, 1000, 0.1, "USD", 0, NAN, 1 },
		{ "n1", "4", NULL, "u", "a", "c", 1200, 1300, 0.1, "USD", 0, NAN, 1 },
		{ "n1", "5", NULL, "u", "a", "c", 1800, 2500, 0.1, "USD", 0, NAN, 1 },
	};
	struct report_query q = { .since = T0 + 100 };
	struct store *s = new_store();
	struct costq_result *r;

	(void)state;
	put_host(s, "n1", "start", 0, 36, "USD");
	put_host(s, "n1", "stop", 1100, 36, "USD");
	put_host(s, "n1", "start", 1500, 36, "USD");
	put_host(s, "n2", "start", -50, 3.6, "EUR");
	put_host(s, "n2", "spool_drop", 300, 3.6, "EUR");
	put_host(s, "n2", "start", 600, 3.6, "EUR");
	put_host(s, "n2", "stop", 800, 3.6, "EUR");
	for (size_t i = 0; i < sizeof(jobs) / sizeof(jobs[0]); i++)
		put_job(s, &jobs[i]);
	r = compute(s, q, "job", T0 + 2000);
	near(row(r, "n1", "USD", true)->idle_s, 700);
	near(row(r, "n1", "USD", true)->cost, 7.0);
	near(row(r, "n2", "EUR", true)->idle_s, 400);
	near(row(r, "n2", "EUR", true)->cost, 0.4);
	near(total(r, "USD")->cost, 0.5 + 7.0);
	near(total(r, "EUR")->cost, 0.4);
	near(total(r, "EUR")->jobs_cost, 0);
	costq_result_free(r);
	store_close(s);
}

/* ---- --run --------------------------------------------------------------- */

/*
 * Run r1: job 200's own record names it (2 USD, all of it); job 300's
 * record names run "other" (1 USD, 4 CPUs for 100 s, usage 100 s: idle
 * 0.75) but two of its processes carry r1: 30 + 10 of its 100 CPU
 * seconds, so 0.4 USD and 0.3 idle of it.  Job 300 on n2 (no price)
 * ran nothing of r1: not counted, not even as unpriced.  Job 400 has
 * nothing of r1.
 */
static void test_run_partial(void **state)
{
	static const struct job jobs[] = {
		{ "n1", "200", "r1", "u", "a", "c", 0, 100, 2.0, "USD", 0, NAN, 1 },
		{ "n1", "300", "other", "v", "b", "d", 0, 100, 1.0, "USD", 4,
		  100, 1 },
		{ "n1", "400", "other", "v", "b", "d", 0, 100, 5.0, "USD", 0,
		  NAN, 1 },
		{ "n2", "300", "other", "v", "b", "d", 0, 100, NAN, NULL, 4,
		  100, 1 },
	};
	static const struct proc procs[] = {
		{ "n1", "200", "r1", "x", "t", NULL, 10, 0, 1 },
		{ "n1", "300", "r1", "y", "t", NULL, 25, 5, 2 },
		{ "n1", "300", "r1", "y", "t", NULL, 10, 0, 3 },
		{ "n1", "300", "other", "z", "t", NULL, 60, 0, 4 },
		{ "n1", "400", "other", "z", "t", NULL, 60, 0, 5 },
		{ "n2", "300", "other", "z", "t", NULL, 60, 0, 6 },
	};
	struct report_query q = { .run = "r1" };
	struct store *s = new_store();
	struct costq_result *r;
	double idle;

	(void)state;
	PUT_ALL(s, jobs, procs);
	r = compute(s, q, "task", T0 + 200);
	near(row(r, "x", "USD", false)->cost, 2.0);
	near(row(r, "y", "USD", false)->cost, 0.4);
	near(row(r, "y", "USD", false)->idle, 0.3);
	assert_int_equal(r->nrows, 2);		/* nothing of z */
	assert_int_equal(r->nunpriced, 0);	/* nor of n2 */
	near(total(r, "USD")->cost, 2.4);
	near(rows_sum(r, "USD", &idle), 2.4);
	assert_int_equal(total(r, "USD")->processes, 3);
	costq_result_free(r);

	r = compute(s, q, "job", T0 + 200);
	near(row(r, "300", "USD", false)->cost, 0.4);
	assert_int_equal(row(r, "300", "USD", false)->processes, 2);
	near(row(r, "200", "USD", false)->cost, 2.0);
	near(total(r, "USD")->cost, 2.4);
	near(total(r, "USD")->idle_alloc, 0.3);
	assert_int_equal(total(r, "USD")->jobs, 2);
	costq_result_free(r);
	store_close(s);
}

/*
 * A job id used again on one host (a scheduler's counter wrapped, a
 * restarted cluster): two end records, each with the processes that
 * started within it, none counted twice.  Job 7 [0, 100] 1 USD: task a
 * 10 s; job 7 [1000, 1100] 3 USD: a 30 s, b 10 s.
 */
static void test_job_id_reused(void **state)
{
	static const struct job jobs[] = {
		{ "n1", "7", NULL, "u", "a", "c", 0, 100, 1.0, "USD", 0, NAN, 1 },
		{ "n1", "7", NULL, "u", "a", "c", 1000, 1100, 3.0, "USD", 0, NAN,
		  1 },
	};
	static const struct proc procs[] = {
		{ "n1", "7", NULL, "a", "t", NULL, 10, 0, 10 },
		{ "n1", "7", NULL, "a", "t", NULL, 30, 0, 1010 },
		{ "n1", "7", NULL, "b", "t", NULL, 10, 0, 1020 },
	};
	struct report_query q = { .job = "7" };
	struct store *s = new_store();
	struct costq_result *r;
	double idle;

	(void)state;
	PUT_ALL(s, jobs, procs);
	r = compute(s, q, "task", T0 + 2000);
	near(row(r, "a", "USD", false)->cost, 1.0 + 3.0 * 30 / 40);
	near(row(r, "b", "USD", false)->cost, 3.0 * 10 / 40);
	near(total(r, "USD")->cost, 4.0);
	near(total(r, "USD")->cpu_s, 50);
	near(rows_sum(r, "USD", &idle), 4.0);
	assert_int_equal(total(r, "USD")->processes, 3);
	costq_result_free(r);
	store_close(s);
}

/* ---- formats and access --------------------------------------------------- */

/* Print the fleet in fmt by task into a new string. */
static char *fleet_text(enum report_format fmt)
{
	struct report_query q = { .since = T0, .by = "task" };
	struct store *s = fleet();
	char *text = NULL;
	size_t len = 0;
	FILE *out;

	assert_true(store_flush(s) >= 0);
	out = open_memstream(&text, &len);
	assert_int_equal(costq_run_store(s, "test", &q, fmt, T0 + 4000, out), 0);
	fclose(out);
	store_close(s);
	return text;
}

/* CSV: a header, numbers as they are; JSON: one valid text. */
static void test_formats(void **state)
{
	char *csv = fleet_text(REPORT_CSV), *json = fleet_text(REPORT_JSON);
	char *line;
	double v;

	(void)state;
	assert_memory_equal(csv, "kind,name,currency,cost,idle,share,jobs,"
			    "processes,cpu_s,idle_s,note\r\n", 56);
	line = strstr(csv, "\r\ntotal,TOTAL,USD,");
	assert_non_null(line);
	v = strtod(line + 18, NULL);
	near(v, 9.4);
	assert_non_null(strstr(csv, "\r\nidle_node,n1,USD,2.1"));
	assert_non_null(strstr(csv, "\r\nnot_counted_job,4,,,,,,,,,\"" NOTE_NO_PRICE "\"\r\n"));
	assert_non_null(strstr(csv, "\r\ntask,a,EUR,2,"));
	assert_true(json_valid(json));
	assert_non_null(strstr(json, "\"by\":\"task\""));
	assert_non_null(strstr(json, "\"kind\":\"idle_node\",\"name\":\"n2\","
			       "\"currency\":\"USD\",\"cost\":5,"));
	free(csv);
	free(json);
}

/* A user's view: their jobs only, no idle nodes (host records are not
 * theirs). */
static void test_uid_only(void **state)
{
	struct report_query q = { .since = T0, .uid_only = true, .uid = 1001 };
	struct store *s = fleet();
	struct costq_result *r = compute(s, q, "job", T0 + 4000);

	(void)state;
	assert_int_equal(r->ntotals, 1);
	near(total(r, "USD")->cost, 1.3);	/* bob's job 2 only */
	assert_false(r->node_idle);
	assert_true(r->node_idle_hidden);
	for (size_t i = 0; i < r->nrows; i++)
		assert_false(r->rows[i].idle_node);
	costq_result_free(r);
	store_close(s);
}

/*
 * Records of the wrong shape are never priced: a scalar cost (records
 * before prices), an amount as text, one without a currency, a negative
 * one.  Negative CPU and CPUs count as none.
 */
static void test_odd_records(void **state)
{
	static const char *const costs[] = {
		"1.25", "{\"amount\":\"1.5\",\"currency\":\"USD\",\"note\":null}",
		"{\"amount\":1.5,\"currency\":null,\"note\":null}",
		"{\"amount\":-1,\"currency\":\"USD\",\"note\":null}",
		"{\"amount\":2,\"currency\":\"USD\",\"elapsed_s\":-5,\"note\":null}",
	};
	static const char *const notes[] = {
		"no cost object in the end record (an agent without prices)",
		"cost.amount is null or not a number, and no note says why",
		"an amount without a currency", "a negative amount",
	};
	struct report_query q = { .since = T0 };
	struct store *s = new_store();
	struct costq_result *r;

	(void)state;
	for (size_t i = 0; i < sizeof(costs) / sizeof(costs[0]); i++)
		put(s, "{\"type\":\"job\",\"schema\":1,\"host\":\"n1\","
		    "\"id\":\"odd-%zu\",\"phase\":\"end\",\"job\":{\"id\":"
		    "\"%zu\"},\"start_time\":\"2026-03-01T10:00:00Z\","
		    "\"end_time\":\"2026-03-01T10:00:10Z\",\"allocation\":"
		    "{\"cpus\":-2},\"cost\":%s}", i, i, costs[i]);
	put(s, "{\"type\":\"process\",\"schema\":1,\"host\":\"n1\","
	    "\"id\":\"odd-p\",\"pid\":5,\"ppid\":1,\"start_time\":"
	    "\"2026-03-01T10:00:01Z\",\"end_time\":\"2026-03-01T10:00:02Z\","
	    "\"job\":{\"id\":\"4\",\"task\":\"t\"},\"cpu\":{\"user_s\":-3,"
	    "\"sys_s\":1}}");
	r = compute(s, q, "task", T0 + 20);
	assert_int_equal(r->nunpriced, 4);
	for (size_t i = 0; i < 4; i++)
		assert_string_equal(r->unpriced[i].note, notes[i]);
	/* job 4: priced; its one process has 1 s of CPU (not -2) */
	near(total(r, "USD")->cost, 2);
	near(total(r, "USD")->cpu_s, 1);
	near(total(r, "USD")->idle_alloc, 0);	/* no CPUs, no idle */
	near(row(r, "t", "USD", false)->cost, 2);
	costq_result_free(r);
	store_close(s);
}

/* Bad queries are refused; a selection with nothing says so. */
static void test_bad_and_empty(void **state)
{
	struct report_query two = { .job = "1", .run = "r" };
	struct report_query by = { .job = "1", .by = "queue" };
	struct report_query none = { .job = "nope" };
	struct store *s = fleet();
	struct costq_result *r = NULL;
	enum costq_by b;

	(void)state;
	assert_true(store_flush(s) >= 0);
	assert_int_equal(costq_compute(s, "test", &two, T0, &r), -EINVAL);
	assert_int_equal(costq_compute(s, "test", &by, T0, &r), -EINVAL);
	assert_int_equal(costq_compute(s, "test", &none, T0, &r), -ENOENT);
	assert_null(r);
	assert_int_equal(costq_by_parse("cost-center", &b), 0);
	assert_int_equal(b, COSTQ_BY_COST_CENTER);
	assert_int_equal(costq_by_parse("cost_center", &b), -EINVAL);
	assert_int_equal(costq_run_store(s, "test", &none, REPORT_HTML, T0,
					 stdout), -EINVAL);
	store_close(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_split_by_cpu),
		cmocka_unit_test(test_submitter_no_task),
		cmocka_unit_test(test_split_many),
		cmocka_unit_test(test_no_process),
		cmocka_unit_test(test_totals_every_by),
		cmocka_unit_test(test_fleet_groups),
		cmocka_unit_test(test_unpriced),
		cmocka_unit_test(test_only_unpriced),
		cmocka_unit_test(test_node_idle),
		cmocka_unit_test(test_run_partial),
		cmocka_unit_test(test_job_id_reused),
		cmocka_unit_test(test_formats),
		cmocka_unit_test(test_money_text),
		cmocka_unit_test(test_uid_only),
		cmocka_unit_test(test_odd_records),
		cmocka_unit_test(test_bad_and_empty),
	};

	log_init("test_costq", 0, LOG_LVL_ERROR);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
