/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rightsize.h - `jobtrace rightsize`: what each workflow task (Snakemake
 * rule, Nextflow process: job.task) used over the selected runs, and the
 * resources to ask for next time, in a form Nextflow, Snakemake or Slurm
 * reads as it is.
 *
 * Definitions (the --help text and README's "Rightsizing" say the same):
 *  - An instance is one execution of a task: the topmost process with that
 *    task and its descendants (parent_id links) with the same task and job.
 *    When the task ran as its own job (every process with a task in that
 *    job has this task), the job is the instance.
 *  - Runs seen: the distinct job.run values of its instances; an instance
 *    without a run counts by its job id, one with neither by itself.
 *  - Requested: own job: the allocation (cpus, mem_bytes) of its `job` end
 *    record; else unknown.
 *  - Used memory: own job: the end record's usage.mem_peak_bytes (the
 *    job's cgroup peak); else (or when the job has none) the concurrent
 *    peak of the instance's processes: the largest sum of peak_rss_bytes
 *    of the processes alive together, leaving out those whose
 *    tool.category is "workflow-engine" (Snakemake's own python, run
 *    again inside each job script, is not the rule's command).
 *  - Cores used: the instance's CPU seconds (user + system of all its
 *    processes) over its wall time (its last end - its first start).
 *  - p95: nearest rank over the instances (the ceil(0.95 n)-th smallest).
 *  - Recommendation, from RIGHTSIZE_MIN_RUNS runs on: memory = ceil(1.2 x
 *    p95 peak) rounded up to a multiple of 100 MiB; cores = max(1,
 *    ceil(p95 cores - 0.01)) (the 0.01 absorbs the clocks of CPU and wall
 *    time disagreeing by a hair on a busy single thread); time = 1.5 x p95
 *    wall, written in whole minutes rounded up (at least 1).
 */
#ifndef JOBTRACE_RIGHTSIZE_H
#define JOBTRACE_RIGHTSIZE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "report.h"

#define RIGHTSIZE_MIN_RUNS 3		/* fewer: no recommendation */
#define RIGHTSIZE_MEM_STEP (100ULL << 20)	/* memory granularity */

enum rightsize_format {
	RIGHTSIZE_TEXT,
	RIGHTSIZE_NEXTFLOW,	/* a config file for nextflow -c */
	RIGHTSIZE_SNAKEMAKE,	/* a profile's config.yaml */
	RIGHTSIZE_SLURM,	/* sbatch options, one line a task */
	RIGHTSIZE_JSON,
};

/* Parse a --format word; returns -EINVAL if unknown. */
int rightsize_format_parse(const char *s, enum rightsize_format *out);

/*
 * Memory to ask for, from the p95 peak in bytes: ceil(1.2 x peak) rounded
 * up to RIGHTSIZE_MEM_STEP, at least one step.
 */
uint64_t rightsize_memory(uint64_t peak);
/* Cores to ask for, from the p95 cores used: max(1, ceil(used - 0.01)). */
unsigned rightsize_cores(double used);
/* Minutes to ask for, from the p95 wall seconds: ceil(1.5 x wall / 60), >= 1. */
unsigned rightsize_minutes(double wall_s);
/*
 * The nearest-rank pct-th percentile (1..100) of the n values v: the
 * ceil(pct/100 x n)-th smallest (v is sorted in place); 0 when n is 0.
 */
double rightsize_percentile(double *v, size_t n, unsigned pct);

/*
 * Print the rightsizing of what q selects (exactly one of q->pipeline,
 * q->run, q->since; q->uid_only honoured) from the store at db_path.
 * Returns 0 (also when no task has enough runs: the output says so),
 * -ENOENT when no process with a task matched (a message on stderr),
 * -EINVAL for another selector, or -errno.
 */
int rightsize_run(const char *db_path, const struct report_query *q,
		  enum rightsize_format fmt, FILE *out);
/* As rightsize_run(), over an open store; where names it in messages. */
int rightsize_run_store(struct store *st, const char *where,
			const struct report_query *q,
			enum rightsize_format fmt, FILE *out);

#endif
