/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rightsize.h - `jobtrace rightsize`: what each workflow task (Snakemake
 * rule, Nextflow process: job.task) used over the selected runs, and the
 * resources to ask for next time, in a form Nextflow, Snakemake or Slurm
 * reads as it is.
 *
 * Definitions (the --help text and README's "Rightsizing" say the same):
 *  - Instances, their memory peak, CPU and wall time, and when a task ran
 *    as its own job: tasks.h, the definition report and cost use too.  A
 *    submitting client (sbatch, qsub, aws batch submit-job, ...) is never
 *    an instance.
 *  - Runs seen: the distinct job.run values of its instances; an instance
 *    without a run counts by its job id, one with neither by itself.
 *  - Requested: own job: the allocation (cpus, mem_bytes) of its `job` end
 *    record; else unknown.
 *  - Cores used: an instance's CPU seconds over its wall time.
 *  - p95: nearest rank over the instances (the ceil(0.95 n)-th smallest).
 *  - Recommendation, from RIGHTSIZE_MIN_RUNS runs on: RIGHTSIZE_RULE.  A
 *    single-threaded tool gets 1 core: one thread never shows more CPU
 *    than wall time (tasks.h), so no margin is added or taken.
 */
#ifndef JOBTRACE_RIGHTSIZE_H
#define JOBTRACE_RIGHTSIZE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "storeq.h"

#define RIGHTSIZE_MIN_RUNS 3		/* fewer: no recommendation */
#define RIGHTSIZE_MEM_STEP (100ULL << 20)	/* memory granularity */
/* The rule, as --help, every output's comment and the README state it. */
#define RIGHTSIZE_RULE \
	"memory = ceil(1.2 x p95 peak) up to 100 MiB, cores = max(1," \
	" ceil(p95 cores used)), time = 1.5 x p95 wall in minutes rounded up"

enum rightsize_format {
	RIGHTSIZE_TEXT,
	RIGHTSIZE_NEXTFLOW,	/* a config file for nextflow -c */
	RIGHTSIZE_SNAKEMAKE,	/* a profile's config.yaml */
	RIGHTSIZE_SLURM,	/* sbatch options, one line a task */
	RIGHTSIZE_JSON,
	RIGHTSIZE_INSTANCES,	/* instance types (instances.h), text */
	RIGHTSIZE_INSTANCES_JSON,	/* the same as JSON */
	RIGHTSIZE_SNAKEMAKE_RULES,	/* a rules file: callables by input size */
};

/* Parse a --format word; returns -EINVAL if unknown. */
int rightsize_format_parse(const char *s, enum rightsize_format *out);

/*
 * Memory to ask for, from the p95 peak in bytes: ceil(1.2 x peak) rounded
 * up to RIGHTSIZE_MEM_STEP, at least one step.
 */
uint64_t rightsize_memory(uint64_t peak);
/* Cores to ask for, from the p95 cores used: max(1, ceil(used)). */
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
 * q->run, q->job, q->since; q->uid_only honoured) from the open store st
 * (where names it in messages).
 * Returns 0 (also when no task has enough runs: the output says so),
 * -ENOENT when no process with a task matched (a message on stderr),
 * -EINVAL for another selector, or -errno.
 */
int rightsize_run_store(struct store *st, const char *where,
			const struct report_query *q,
			enum rightsize_format fmt, FILE *out);

#endif
