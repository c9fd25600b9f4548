/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * containers.h - the Docker containers the agent sees processes in, what
 * Docker says of each, and the AWS Batch jobs they run.
 *
 * The tracker tells when a process of a container starts being one of its
 * processes (exec or fork in it, not excluded by the rules) and stops
 * (exit, a move, or an exec the rules exclude), through the callbacks of
 * containers_tracker(); the containers know nothing of the tracker but
 * what their start gave them (struct containers_ops: the job registry,
 * the process table, and a callback that writes a job's records).  A
 * container runtime's own bootstrap (`runc init`, which runc moves into
 * the container's cgroup before the container's command runs) is excluded
 * by the rules, so it is no process of the container's job.  A container
 * seen for the first time is looked up once through the ask callback
 * (dockerq: off the loop); its answer comes back through
 * containers_answer().  A container whose environment names an AWS Batch
 * job becomes that job in the registry (scheduler "aws-batch", its
 * allocation from the container's limits): a `job` start record then,
 * its processes given the job.
 *
 * The job ends when the container ends, not when the count of its
 * processes first touches zero (runc's bootstrap, or the gap between a
 * container's create and its start, would split one job in two): once no
 * process of the container is left, Docker is asked again, after 0.25 s,
 * 0.5 s, ... up to 30 s, and the job's end record (with the usage) is
 * written when Docker says the container has ended (State.Status exited or
 * dead, what its `die` event leaves, with Docker's exit code) or no longer
 * knows it; a process that starts in it meanwhile goes on with the job.
 * When Docker cannot answer (absent, timing out, unreadable), the
 * container's own cgroup decides: empty or gone at every check for the
 * grace period (docker.end_grace) ends the job.
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
 * Bounded: an entry lives while the container has processes, its answer
 * is awaited or its job's end is, at most max entries; a container seen
 * beyond that is not looked up (counted in full), and to make room for a
 * new one an entry without processes goes first (a job that waited for
 * its end then ends).  Loop thread only.
 */
#ifndef JOBTRACE_CONTAINERS_H
#define JOBTRACE_CONTAINERS_H

#include <stddef.h>
#include <stdint.h>

#include "dockerq.h"
#include "jobs.h"
#include "proc.h"
#include "proc_table.h"
#include "record.h"
#include "tracker.h"

struct containers;

/* Queue a look-up of container id: 0, or -errno when it cannot. */
typedef int (*containers_ask_fn)(void *ctx, const char *id);
/* Whether the cgroup at path (as /proc shows it) still holds a process:
 * 1 yes, 0 empty or gone. */
typedef int (*containers_populated_fn)(void *ctx, const char *cgroup);
/* Write the record of job ji's start or end (phase "start" or "end"; the
 * tracker's tracker_job_record()). */
typedef void (*containers_job_record_fn)(void *ctx,
					 const struct jt_jobinfo *ji,
					 const char *phase);

/* What the containers ask and where they work, given at their start. */
struct containers_ops {
	containers_ask_fn ask;
	containers_populated_fn populated;	/* NULL: never populated */
	containers_job_record_fn job_record;	/* NULL: no job records */
	void *ctx;				/* of the three */
	uint64_t end_grace_ns;	/* empty or gone this long: ended */
	/* borrowed: the registry a container's AWS Batch job goes in, the
	 * tracker's processes (a job found gives its running ones the job)
	 * and the host (its clock) */
	struct jobs *jobs;
	struct proc_table *procs;
	const struct jt_host *host;
};

struct containers_stats {
	size_t entries;		/* containers followed now */
	size_t jobs;		/* ... that run an AWS Batch job */
	size_t ending;		/* ... whose job awaits the container's end */
	uint64_t full;		/* containers not followed: the table was full */
};

/* An empty table of at most max entries; 0 or -ENOMEM. */
int containers_new(size_t max, const struct containers_ops *ops,
		   struct containers **out);
/* Free the table; accepts NULL. */
void containers_free(struct containers *cs);
/* p is now a process of the container its p->container names. */
void containers_enter(struct containers *cs, const struct jt_proc *p);
/* p is no longer a process of the container its p->container names (its
 * end, if it ended, in p). */
void containers_leave(struct containers *cs, const struct jt_proc *p);
/* Where a finished process of p's container that has no job counts:
 * the container's own usage until Docker's answer, or NULL. */
struct jt_usage *containers_usage(struct containers *cs,
				  const struct jt_proc *p);
/* The tracker's view of cs (tracker.h: struct tracker_containers). */
struct tracker_containers containers_tracker(struct containers *cs);
/* Docker's answer about one container. */
void containers_answer(struct containers *cs,
		       const struct dockerq_result *r);
/* At now_ns (CLOCK_MONOTONIC): ask again about containers whose look-up
 * failed, or whose end is awaited, when due; end the jobs of containers
 * whose cgroup stayed empty for the grace period while Docker could not
 * answer. */
void containers_tick(struct containers *cs, uint64_t now_ns);
/* The real populated callback: cgroup.procs of path under cgroup v2
 * (/sys/fs/cgroup/unified or /sys/fs/cgroup) or the v1 memory hierarchy
 * (ctx unused). */
int containers_cgroup_populated(void *ctx, const char *cgroup);
/* How many entries, jobs, ending jobs, refusals. */
void containers_stats(const struct containers *cs,
		      struct containers_stats *st);

#endif
