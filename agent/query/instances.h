/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * instances.h - `jobtrace rightsize --format instances`: for each workflow
 * task, the instance types it ran on and what that cost, and the cheapest
 * types of the price table (cost.prices_file, agent/core/prices.h) that
 * fit what rightsize recommends, on-demand and spot, in every region the
 * table covers; the family its memory per vCPU points to; the saving at
 * the observed volume per month.
 *
 * Definitions (README's "Instance types" and --help say the same):
 *  - Needs: rightsize's recommendation (RIGHTSIZE_RULE: the p95 peak
 *    memory x 1.2, the p95 cores used rounded up), so the headroom is
 *    rightsize's.  GPUs: jobtrace does not measure GPU use, so a task
 *    that ran on types with GPUs needs the fewest of them it had, else 0.
 *  - A type fits when its vCPUs, memory and GPUs (the table's, all known)
 *    are at least the needs and its architecture may be used.
 *  - Architecture: arm64 (AWS Graviton) types are candidates only for a
 *    task every instance of which ran on an arm64 type: that its tools ran
 *    there shows they have arm64 builds, which jobtrace cannot tell from a
 *    process record.  Otherwise (x86_64, or no known type) x86_64 types
 *    only; the cheapest arm64 type that would fit is named, not proposed.
 *  - Family: from the needed GiB per vCPU, the one of compute (2 GiB per
 *    vCPU), general (4) and memory optimized (8) that is nearest on a log
 *    scale: compute up to 2.83 (2 x sqrt 2), memory from 5.66 (4 x sqrt 2),
 *    general between.
 *  - Volume: each task instance on an instance of its own for its wall
 *    time (as one AWS Batch job or one cloud job per instance); the hours
 *    of the period, a month being 30 days.  The period: --since to now,
 *    else from the first instance's start to the last one's end, whole
 *    days, at least one.
 *  - Cost now: per type it ran on, its hours x its price (spot for a spot
 *    instance, else on-demand) scaled to a month; not known when a host
 *    had no cloud identity or its type and region are not in the table.
 *  - Saving: cost now - the cheapest fitting on-demand (and spot) type's
 *    price x the monthly hours, in the region it ran in.
 *  - AWS Batch: for each compute environment its jobs ran in, the
 *    instanceTypes to set: the cheapest fitting on-demand type of each of
 *    its tasks, in the region it ran in.
 */
#ifndef JOBTRACE_INSTANCES_H
#define JOBTRACE_INSTANCES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "prices.h"

struct sqlite3;

/* The log-scale midpoints between the families' GiB per vCPU (2, 4, 8). */
#define INSTANCES_COMPUTE_MAX 2.828427	/* 2 x sqrt(2) */
#define INSTANCES_MEMORY_MIN 5.656854	/* 4 x sqrt(2) */
#define INSTANCES_MONTH_H (30.0 * 24)

/* Where some of a task's instances ran (NULL: not known). */
struct instances_seen {
	const char *type, *region, *lifecycle, *compute_env;
	double hours;		/* their wall hours in the selection */
};

/* One task's needs and where it ran. */
struct instances_task {
	const char *name;
	size_t runs, n;
	bool enough;		/* rightsize has a recommendation */
	unsigned cpus;		/* rightsize's cores */
	uint64_t mem;		/* rightsize's memory, bytes */
	double hours;		/* the instances' wall hours */
	struct instances_seen *seen;
	size_t nseen;
};

/* What the answer is made from. */
struct instances_in {
	const char *sel;		/* "pipeline eval" */
	const char *rule;		/* rightsize's rule, for the head */
	unsigned min_runs;		/* runs rightsize needs */
	const char *prices_file;	/* cost.prices_file; NULL or "": none */
	double period_s;
	const struct instances_task *task;
	size_t ntask;
};

/* A host record's cloud identity at a time. */
struct instances_host {
	char *host, *type, *region, *lifecycle;
	double time;
};

/* The host records of a store, by host then time. */
struct instances_hosts {
	struct instances_host *h;
	size_t n;
};

/*
 * Read every host record's cloud identity from the store db (where:
 * for messages) into hs.  0, -EIO, -ENOMEM.
 */
int instances_hosts_load(struct sqlite3 *db, const char *where,
			 struct instances_hosts *hs);
/*
 * The identity of host at time t: its latest host record at or before
 * t, else its first after; NULL when it has none.
 */
const struct instances_host *instances_host_at(const struct instances_hosts *hs,
					       const char *host, double t);
/* Release hs. */
void instances_hosts_free(struct instances_hosts *hs);
/*
 * The AWS Batch compute environment of job (its job records'
 * job.compute_environment) in *ce (malloc'd, NULL when none).  0, -EIO,
 * -ENOMEM.
 */
int instances_compute_env(struct sqlite3 *db, const char *where,
			  const char *job, char **ce);

/* Family advice for gib_per_vcpu: "compute-optimized", ... */
const char *instances_family(double gib_per_vcpu);
/* The period of the selection, seconds: see above. */
double instances_period(double since, double now, double first,
			double last);
/*
 * Print the answer as text or JSON to out.  0, -ENOENT when there is no
 * price table (a message on stderr naming cost.prices_file), -EINVAL
 * when it is broken (FILE:LINE on stderr), -ENOMEM.
 */
int instances_print(const struct instances_in *in, bool json, FILE *out);

#endif
