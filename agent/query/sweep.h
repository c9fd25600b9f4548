/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sweep.h - `jobtrace sweep --since T`: what the fleet paid for that did
 * no work over [T, now], from the stored records alone.
 *
 *  - Idle nodes: per host, the time its agent was up and no job of it ran,
 *    and what that cost (costq.h's idle node figures: one definition), with
 *    the node_idle signals it wrote in the period (count, their idle_s).
 *  - Low-CPU instances: hosts whose CPU over the period, the CPU seconds
 *    of the process records ended in it (each clipped to the period in
 *    proportion to its time in it) over the agent's up time x the node's
 *    CPUs (price.node_cpus of its host records), stayed below
 *    SWEEP_CPU_BELOW.  A mean over the period, not a peak.
 *  - Stuck jobs: jobs (a Batch worker, a Slurm allocation) whose processes
 *    made no progress (stall signals: no CPU, I/O or network for
 *    signals.stall_after) for a while: per host and job, the union of the
 *    stalls' [last_progress, end] (no end record: now) in the period, priced
 *    at the host's price.per_hour.
 *  - Could have been saved: per currency, the idle nodes' cost plus the
 *    stuck jobs' (disjoint: an idle node runs no job).  A low-CPU
 *    instance's up cost is shown, not added (its idle time is in it).
 *
 * compute -> a result struct -> text, JSON or CSV, as costq.h.
 */
#ifndef JOBTRACE_SWEEP_H
#define JOBTRACE_SWEEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "storeq.h"

struct store;

#define SWEEP_CPU_BELOW 0.05	/* as idle.cpu_below's default */
#define SWEEP_CURRENCY_MAX 16

/* One host over the period. */
struct sweep_node {
	char *host;		/* first: the key */
	char *instance_type;	/* its last host record's cloud, NULL: none */
	char *lifecycle;	/* spot, on-demand, NULL */
	char currency[SWEEP_CURRENCY_MAX];	/* "": no price */
	double per_hour;	/* its last price, -1: none */
	double cpus;		/* price.node_cpus, 0: not known */
	double up_s;		/* its agent up in the period */
	double up_cost;		/* per_hour x up_s, -1: no price */
	double idle_s;		/* up, no job (costq) */
	double idle_cost;	/* -1: no price */
	size_t idle_signals;	/* node_idle records in the period */
	double signal_idle_s;	/* their evidence.idle_s */
	double cpu_s;		/* its processes' CPU in the period */
	double cpu;		/* cpu_s / (up_s x cpus), -1: not known */
	bool low_cpu;		/* cpu < SWEEP_CPU_BELOW */
};

/* One job on one host whose processes made no progress. */
struct sweep_stuck {
	char *host;
	char *job;		/* job.id, "(none)" */
	char *scheduler;	/* job.scheduler, NULL */
	size_t stalls;		/* stall start records */
	double first;		/* the first stall's last progress */
	double stuck_s;		/* union of the stalls in the period */
	bool ongoing;		/* a stall has no end record */
	char currency[SWEEP_CURRENCY_MAX];
	double cost;		/* -1: no price */
};

/* What could have been saved in one currency. */
struct sweep_total {
	char *currency;		/* first: the key */
	double idle;		/* idle nodes */
	double stuck;		/* stuck jobs */
	double total;		/* idle + stuck */
};

/* What sweep_compute() found. */
struct sweep_result {
	double since, now;
	struct sweep_node *nodes;	/* most idle seconds first */
	size_t nnodes;
	struct sweep_stuck *stuck;	/* most stuck seconds first */
	size_t nstuck;
	struct sweep_total *totals;	/* by currency */
	size_t ntotals;
};

/*
 * Sweep the store st (where names it in messages) over [q->since, now]
 * (q: --since only).  Returns 0 with *out (sweep_result_free()), -EINVAL
 * for another selector, -ENOMEM or -EIO.
 */
int sweep_compute(struct store *st, const char *where,
		  const struct report_query *q, double now,
		  struct sweep_result **out);
/* Free a result; accepts NULL. */
void sweep_result_free(struct sweep_result *r);
/* Print r as text, JSON or CSV: 0, -EINVAL (another format) or -EIO. */
int sweep_print(const struct sweep_result *r, enum report_format fmt,
		FILE *out);
/* sweep_compute() and sweep_print() over an open store. */
int sweep_run_store(struct store *st, const char *where,
		    const struct report_query *q, enum report_format fmt,
		    double now, FILE *out);

#endif
