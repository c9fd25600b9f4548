/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * containers.h - the Docker containers the agent sees processes in, what
 * Docker says of each, and the AWS Batch jobs they run.
 *
 * The tracker tells when a process enters a container (exec, fork) and
 * leaves it (exit, or a move).  A container seen for the first time is
 * looked up once through the ask callback (dockerq: off the loop); its
 * answer comes back through containers_answer().  A container whose
 * environment names an AWS Batch job becomes that job in the registry
 * (scheduler "aws-batch", its allocation from the container's limits):
 * a `job` start record then, its processes given the job, and an end
 * record with the usage when its last process is gone.
 *
 * Records before the answer: nothing waits for Docker.  A process record
 * is written at the exit as always; when the answer is not in by then its
 * job fields stay null, but its figures count in the job's usage (the
 * container keeps them until the answer).  A job's start record is
 * written with the answer and carries the start of the container's first
 * process.  A failed look-up (Docker absent, slow, an unreadable answer)
 * is asked again while the container has processes, after 10 s, doubling
 * to 5 min.
 *
 * Bounded: an entry lives while the container has processes (or its
 * answer is awaited), at most max entries; a container seen beyond that
 * is not looked up (counted in full).  Loop thread only.
 */
#ifndef JOBTRACE_CONTAINERS_H
#define JOBTRACE_CONTAINERS_H

#include <stddef.h>
#include <stdint.h>

#include "dockerq.h"
#include "jobs.h"
#include "proc.h"

struct containers;
struct tracker;

/* Queue a look-up of container id: 0, or -errno when it cannot. */
typedef int (*containers_ask_fn)(void *ctx, const char *id);

struct containers_stats {
	size_t entries;		/* containers followed now */
	size_t jobs;		/* ... that run an AWS Batch job */
	uint64_t full;		/* containers not followed: the table was full */
};

/* An empty table of at most max entries; 0 or -ENOMEM. */
int containers_new(size_t max, containers_ask_fn ask, void *ctx,
		   struct containers **out);
/* Free the table; accepts NULL. */
void containers_free(struct containers *cs);
/* p now runs in the container its p->container names. */
void containers_enter(struct containers *cs, struct tracker *t,
		      const struct jt_proc *p);
/* p is gone from the container its p->container names (its end, if it
 * ended, in p). */
void containers_leave(struct containers *cs, struct tracker *t,
		      const struct jt_proc *p);
/* Where a finished process of p's container that has no job counts:
 * the container's own usage until Docker's answer, or NULL. */
struct jt_usage *containers_usage(struct containers *cs,
				  const struct jt_proc *p);
/* Docker's answer about one container. */
void containers_answer(struct containers *cs, struct tracker *t,
		       const struct dockerq_result *r);
/* Ask again about containers whose look-up failed, when due. */
void containers_retry(struct containers *cs, uint64_t now_ns);
/* How many entries, jobs, refusals. */
void containers_stats(const struct containers *cs,
		      struct containers_stats *st);

#endif
