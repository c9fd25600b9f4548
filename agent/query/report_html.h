/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * report_html.h - `jobtrace report --format html`: one self-contained page
 * (inline CSS, inline script, the data as embedded JSON; nothing fetched)
 * in the spirit of Nextflow's timeline and execution report.
 *
 *  - The answer first: what ran, how long, failures and OOM kills, the
 *    largest CPU and memory consumers, the cost when the job end records
 *    carry one (costq.h's split by CPU time).
 *  - A timeline with one lane per workflow task (job.task) and one per tool
 *    of the processes that are no task's (tasks.h: also a submitting
 *    client), ordered by first start.  A task lane's instances are
 *    tasks.h's; a tool lane's, its topmost process and its descendants
 *    in the lane.  Each is one bar, failures (OUT_FAILED) and OOM kills
 *    marked, `signal` records as markers.  Bars are packed into at most
 *    REPORT_HTML_ROWS_MAX rows a lane; a lane whose instances need more
 *    rows, or do not fit the REPORT_HTML_BARS_MAX budget, is drawn as its
 *    concurrency over time (instance-seconds per bin) instead.  A lane's
 *    processes are drawn on demand (a click), from at most
 *    REPORT_HTML_DETAIL_LANE of them (failed first, then the longest) and
 *    REPORT_HTML_DETAIL_MAX in all.
 *  - Tables by task and by tool: processes, CPU time, CPU over wall, peak
 *    (a task's: its largest instance's memory peak, tasks.h; a tool's: its
 *    largest process's RSS) against the memory requested, read and write,
 *    cost.
 *  - CPU (cores) and memory (RSS) of the selection over time from its
 *    `sample` records, in REPORT_HTML_BINS bins.
 * Whatever the run's size, the page holds at most those many drawn things
 * (README's HTML report section gives the sizes test_report_html.sh
 * measures).
 */
#ifndef JOBTRACE_REPORT_HTML_H
#define JOBTRACE_REPORT_HTML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "storeq.h"
#include "tasks.h"
#include "timesplit.h"

struct store;

#define REPORT_HTML_LANES_MAX 60	/* lanes; the rest make one "other" */
#define REPORT_HTML_BARS_MAX 2500	/* instance bars, all lanes */
#define REPORT_HTML_ROWS_MAX 16	/* rows of bars in a lane */
#define REPORT_HTML_BINS 200		/* time bins of densities and charts */
#define REPORT_HTML_MARKS_MAX 100	/* failure marks of a dense lane */
#define REPORT_HTML_DETAIL_LANE 200	/* processes drawn for a lane */
#define REPORT_HTML_DETAIL_MAX 3000	/* processes drawn, all lanes */
#define REPORT_HTML_SIGNALS_MAX 1000	/* signal markers */
#define REPORT_HTML_TABLE_MAX 200	/* rows of a table */

/* report_html_proc.flags */
#define REPORT_HTML_FAILED 0x1		/* non-zero exit or killed */
#define REPORT_HTML_OOM 0x2		/* killed by the OOM killer */
#define REPORT_HTML_RUNNING 0x4		/* no end yet */

/* One selected process, as report.c hands it over (strings borrowed). */
struct report_html_proc {
	double start, end;	/* epoch seconds; running: its last sample */
	long parent;		/* index of its parent in the array, -1 */
	const char *host;
	const char *task;	/* job.task, NULL or "": none */
	const char *job;	/* job.id, NULL: none */
	const char *step;	/* job.step, NULL: none */
	const char *category;	/* tool.category, NULL: none */
	/* its job's end record on its host: allocation, memory peak; 0:
	 * unknown (tasks_proc's) */
	uint64_t job_cpus, job_mem, job_peak;
	const char *tool;	/* as storeq_tool_name() names it */
	const char *exit;	/* "0", "SIGKILL OOM", "running", ... */
	const char *argv;	/* one display line, cut */
	int64_t pid;
	unsigned flags;
	double cpu;		/* user + sys seconds */
	uint64_t peak_rss;
	uint64_t read_bytes;
	uint64_t write_bytes;
};

/* What the `job` records say (--job only; strings borrowed). */
struct report_html_job {
	bool recorded;		/* there is a job record */
	const char *state;	/* COMPLETED, FAILED, ..., NULL: unknown */
	const char *name;
	const char *run;
	const char *pipeline;
	double elapsed;		/* seconds, -1: unknown */
	const char *exit;	/* as Slurm's ExitCode: "3:0", "0:9 (SIGKILL)" */
	bool exit_known;
	uint64_t cpus;		/* 0: not known */
	uint64_t mem_bytes;	/* 0: not known */
	/* the job's figures as the text report's efficiency prints them */
	uint64_t mem_peak;	/* the job's memory peak, 0: not known */
	const char *mem_source;	/* where it comes from, for people */
	double mem_pct;		/* of mem_bytes, -1: not known */
	/* the JSON report's "job" and "efficiency" members (one object's
	 * text), put in the page's data as "report"; NULL: none */
	const char *data;
};

/*
 * One row of the page's tables by task and by tool: report.c's summary
 * of the group, the figures report's text and JSON print (the page does
 * not count them again).
 */
struct report_html_group {
	const char *name;	/* NULL: no task */
	size_t procs, inst, failed, oom, running;
	double cpu;		/* user + system seconds */
	double wall;		/* a task's instances' wall, else its
				 * processes' */
	double first, last;	/* first start, last end */
	uint64_t rss;		/* a task's largest instance's memory peak
				 * (tasks.h), else the largest process's */
	uint64_t rd, wr;
	struct timesplit where;	/* where its processes' time went */
};

/* Everything the page shows that report.c has gathered. */
struct report_html_input {
	const char *sel;			/* "job 42", "run r1" */
	const struct report_html_proc *p;	/* in start order */
	size_t n;
	const char *const *hosts;		/* distinct, sorted */
	size_t nhosts;
	const struct report_html_job *job;	/* --job only, else NULL */
	const char *job_text;	/* the text report's job header and
				 * efficiency, or NULL */
	const char *data_text;	/* the text report's Data section, or NULL */
	double now;		/* epoch seconds: for the cost of --job/--run */
	const struct report_html_group *by_task, *by_tool;	/* most CPU
								 * first */
	size_t ntasks, ntools;
};

/* A lane of the timeline. */
struct report_html_inst {
	double start, end;
	size_t procs;
	unsigned flags;		/* any process's REPORT_HTML_* */
	int row;		/* its row in the lane */
	long top;		/* its topmost process */
};

struct report_html_lane {
	const char *name;	/* borrowed from a process */
	bool task;		/* a workflow task, else a tool */
	bool other;		/* the groups beyond REPORT_HTML_LANES_MAX */
	size_t groups;		/* other: how many groups it stands for */
	size_t procs;
	size_t failed;
	size_t oom;
	double cpu;
	double first, last;
	struct report_html_inst *inst;	/* by start */
	size_t ninst;
	bool dense;		/* drawn as density, not bars */
	int rows;		/* rows of bars (not dense) */
	double dens[REPORT_HTML_BINS];	/* dense: instances running */
	long *detail;		/* process indices drawn on demand, by start */
	size_t ndetail;
};

/* The timeline of a selection. */
struct report_html_model {
	double t0, t1;		/* first start, last end */
	struct report_html_lane *lane;	/* by first start, "other" last */
	size_t nlanes;
	size_t bars;		/* instance bars drawn */
	size_t detail;		/* processes with a detail bar */
	long *lane_of;		/* each process's lane */
	long *top;		/* each process's instance: its topmost */
	struct tasks tasks;	/* the task instances (tasks.h) */
	/* the processes as the lanes see them: task NULL unless a task's */
	struct report_html_proc *p;
};

/*
 * Group the processes into lanes and instances, pack the bars, pick the
 * detail; detail false (--no-tree): none.  0 or -ENOMEM; free *out with
 * report_html_model_free().
 */
int report_html_model(const struct report_html_proc *p, size_t n,
		      bool detail, struct report_html_model **out);
/* Free a model; accepts NULL. */
void report_html_model_free(struct report_html_model *m);

/* CPU and memory over time, in REPORT_HTML_BINS bins from t0 to t1. */
struct report_html_series {
	double t0, t1;
	double cpu_s[REPORT_HTML_BINS];	/* CPU seconds spent in the bin */
	double mem[REPORT_HTML_BINS];	/* largest RSS sum, -1: no sample */
	size_t samples;			/* sample records used */
	size_t passes;			/* distinct sample times */
};

/* Start series over [t0, t1]: no CPU, no memory known. */
void report_html_series_init(struct report_html_series *s, double t0,
			     double t1);
/* Spread cpu seconds evenly over [a, b] (a == b: all at a). */
void report_html_series_cpu(struct report_html_series *s, double a,
			    double b, double cpu);
/* One sample pass: its processes' RSS added, at time t. */
void report_html_series_mem(struct report_html_series *s, double t,
			    double rss_sum);

/*
 * Print the page for q from the open store st (where names it in
 * messages): it reads the selection's samples, signals, cost and
 * allocation itself.  Returns 0 or -errno.
 */
int report_html_print(struct store *st, const char *where,
		      const struct report_query *q,
		      const struct report_html_input *in, FILE *out);

#endif
