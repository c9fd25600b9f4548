/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * costq.h - `jobtrace cost`: what the selected jobs cost, grouped by job,
 * workflow task, tool, user, account or cost center, with the idle
 * allocation and (for --since) the nodes' idle time, from the `job` end
 * records' cost (doc/cost.md).
 *
 * A job's cost is the `cost.amount` of its `job` end record (one per host
 * it ran on); costq never prices anything itself.  Within a job (on one
 * host) the cost is split over its process records by their own CPU time
 * (cpu.user_s + cpu.sys_s); a job whose processes have no CPU puts it on
 * "(no process)".  --by task (a task's processes as tasks.h says: a
 * submitting client is none) and --by tool group those parts; --by job,
 * user, account and cost-center group whole jobs.  The TOTAL is the sum
 * over the jobs, the same for every --by.
 *
 * Idle allocation: a job with an allocation paid cost * (1 - min(1,
 * cpu_s / (cpus * elapsed_s))) for CPUs it did not use; split like the
 * cost.  Idle nodes (--since): each host's price.per_hour (its `host`
 * records) times the time in [since, now] that its agent was up (host
 * records from a start to its stop) and no job of that host ran (the union
 * of its jobs' [start_time, end_time]).
 *
 * Jobs whose cost.amount is null are listed with their note and not
 * counted; amounts in different currencies are never added.
 */
#ifndef JOBTRACE_COSTQ_H
#define JOBTRACE_COSTQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "storeq.h"

struct store;

/* What the cost is grouped by (--by). */
enum costq_by {
	COSTQ_BY_JOB,
	COSTQ_BY_TASK,
	COSTQ_BY_TOOL,
	COSTQ_BY_USER,
	COSTQ_BY_ACCOUNT,
	COSTQ_BY_COST_CENTER,
};

#define COSTQ_NO_PROCESS "(no process)"	/* a job's cost without CPU */
#define COSTQ_NONE "(none)"		/* no task, user, account, ... */
#define COSTQ_CURRENCY_MAX 16

/* One line of the table: a group in one currency, or an idle node. */
struct costq_row {
	char *name;		/* the group; for an idle node its host */
	char currency[COSTQ_CURRENCY_MAX];
	bool idle_node;		/* "idle node HOST" */
	double cost;
	double idle;		/* idle allocation (an idle node: its cost) */
	double cpu_s;		/* the processes' own CPU counted in it */
	double idle_s;		/* an idle node's idle seconds */
	size_t jobs;		/* distinct job ids */
	size_t processes;
};

/* The total of one currency. */
struct costq_total {
	char currency[COSTQ_CURRENCY_MAX];
	double cost;		/* jobs' plus idle nodes' */
	double jobs_cost;
	double idle_alloc;	/* of jobs_cost: idle allocation */
	double idle_nodes;	/* the idle nodes' */
	double cpu_s;
	size_t jobs;
	size_t processes;
};

/* A job (on one host) or an idle node that has no price: not counted. */
struct costq_unpriced {
	char *job;		/* NULL: an idle node */
	char *host;
	char *note;		/* why, as the record says */
	double idle_s;		/* an idle node's idle seconds */
};

/* A job with a start record and no end record: no cost yet. */
struct costq_running {
	char *job;
	char *host;
	double start;		/* epoch seconds; 0: not known */
};

/* What costq_compute() found. */
struct costq_result {
	enum costq_by by;
	struct costq_row *rows;		/* groups, then idle nodes */
	size_t nrows;
	struct costq_total *totals;	/* one per currency, by name */
	size_t ntotals;
	struct costq_unpriced *unpriced;
	size_t nunpriced;
	struct costq_running *running;
	size_t nrunning;
	size_t units;			/* job end records selected */
	bool node_idle;			/* idle nodes were computed */
	bool node_idle_hidden;		/* --since, but host records are
					 * not the asking user's to see */
};

/* Parse a --by word (NULL: job); -EINVAL if unknown. */
int costq_by_parse(const char *s, enum costq_by *out);
/* The --by word of b. */
const char *costq_by_name(enum costq_by b);

/*
 * Compute the cost of what q selects (--job, --run or --since, q->by)
 * from an open store, as of now (epoch seconds: the end of the --since
 * window and of a running job).  where names the store in messages.
 * Returns 0 with *out set (free it with costq_result_free()), -EINVAL for
 * a bad query, -ENOENT when nothing matched (no message: the caller says
 * it, or shows no cost), or -errno.
 */
int costq_compute(struct store *st, const char *where,
		  const struct report_query *q, double now,
		  struct costq_result **out);
/* Free a result; accepts NULL. */
void costq_result_free(struct costq_result *r);

/*
 * Print a result as text (the answer first: totals, top groups, what is
 * not counted; then the table), JSON or CSV (a header row, numbers
 * unformatted).  Returns 0, -EINVAL for another format, or -EIO.
 */
int costq_print(const struct costq_result *r, const struct report_query *q,
		enum report_format fmt, FILE *out);

/* costq_compute() and costq_print() over an open store. */
int costq_run_store(struct store *st, const char *where,
		    const struct report_query *q, enum report_format fmt,
		    double now, FILE *out);
/*
 * An amount of money for people, into out: 2 decimals from 1 on, 4 below,
 * more under 0.01 so that two significant digits show (0.000046, not
 * 0.0000), at most 12.  Returns out.
 */
const char *costq_money(double v, char *out, size_t len);

#endif
