/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tasks.h - what a workflow task's processes, instances and memory peak
 * are: the one definition that `jobtrace report` (text, JSON, HTML),
 * `jobtrace cost --by task` and `jobtrace rightsize` use.
 *
 *  - A task's processes: the processes with a job.task whose tool category
 *    is not "scheduler-helper".  Such a client (sbatch, qsub, bsub, aws
 *    batch submit-job, squeue, ...) hands work to a scheduler, or asks
 *    about it: the work runs elsewhere, as a job of its own, never in the
 *    client.  A client keeps its task in its record, but is no process of
 *    the task (report and cost count it under no task).
 *  - An instance: one execution of a task, the topmost of its processes
 *    and their descendants (parent links) with the same task and job.
 *  - Its own job: a job on one host whose task processes all have the same
 *    task and have one topmost process in each of the job's steps
 *    (job.step: Slurm's batch script, extern step and srun steps start
 *    apart).  The job is then the one instance (Snakemake's and Nextflow's
 *    cluster jobs): its request is the job's allocation and its memory
 *    peak is the job's (its memory cgroup's charge at its peak: what the
 *    job's --mem must cover, the job script's shell and engine included).
 *    A job that ran a task several times (a Snakemake run of one rule
 *    inside one Slurm job) is not the own job of any of them.
 *  - The memory peak otherwise: the largest sum of the peak RSS of the
 *    instance's processes alive together (each counted for its whole life,
 *    so an upper bound), the workflow engine's own (tool category
 *    "workflow-engine": the python Snakemake runs again inside each job
 *    script) left out, unless the instance has no other process with
 *    memory (a Snakemake `run:` block is the engine's own code).
 *  - CPU: the user + system seconds of all its processes; wall: its last
 *    end less its first start; cores used: CPU over wall.  A process's CPU
 *    is read at its last context switch and its end time at that same
 *    moment, its start is its fork: one thread can never show more CPU
 *    than wall time, and an instance more than one core only when its
 *    processes or threads ran at the same time.
 */
#ifndef JOBTRACE_TASKS_H
#define JOBTRACE_TASKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sqlite3;
struct storeq_proc;

#define TASKS_CLIENT "scheduler-helper"	/* never a task's process */
#define TASKS_ENGINE "workflow-engine"	/* left out of the memory sum */

/* One process as the definition needs it (strings borrowed). */
struct tasks_proc {
	long parent;		/* index of its parent among them, -1: none */
	const char *host;
	const char *job;	/* job id, NULL: none */
	const char *step;	/* job.step (the scheduler's), NULL: none */
	const char *task;	/* job.task, NULL or "": none */
	const char *category;	/* tool.category, NULL: none */
	double start, end;	/* epoch seconds, end >= start */
	double cpu;		/* user + system seconds */
	uint64_t rss;		/* peak_rss_bytes */
	/* its job's end record on its host (tasks_load_jobs); 0: unknown */
	uint64_t job_cpus, job_mem, job_peak;
};

/* One instance of a task. */
struct tasks_inst {
	const char *task;	/* borrowed from its top */
	long top;		/* its topmost process */
	size_t procs;
	double start, end, cpu;
	uint64_t mem;		/* its memory peak */
	bool own_job;		/* the task ran as its own job */
	bool mem_job;		/* mem is the job's peak */
	uint64_t req_cpus, req_mem;	/* own job: its allocation; 0: unknown */
};

/* The instances of a set of processes. */
struct tasks {
	long *of;		/* per process: its instance, -1: none */
	struct tasks_inst *inst;	/* by task, then start, then top */
	size_t n;
};

/* Is a process with this task and tool category one of a task's? */
bool tasks_member(const char *task, const char *category);
/*
 * Group the n processes p into instances (see above); t is filled and must
 * be freed with tasks_free().  Hostile parent links (loops, out of range)
 * are cut.  Returns 0 or -ENOMEM.
 */
int tasks_build(const struct tasks_proc *p, size_t n, struct tasks *t);
/* Free what tasks_build() made; accepts a zeroed t. */
void tasks_free(struct tasks *t);
/* Cores used by an instance: its CPU over its wall time, 0 without wall. */
double tasks_cores(const struct tasks_inst *in);
/*
 * Fill job_cpus, job_mem and job_peak of the task processes among p from
 * the latest `job` end record of their job on their host in db (where
 * names it in messages).  Returns 0, or -EIO (logged), -ENOMEM.
 */
int tasks_load_jobs(struct sqlite3 *db, const char *where,
		    struct tasks_proc *p, size_t n);
/*
 * The instances of the n processes v (storeq_procs_load(), their parent
 * links as they are): in *tp the processes as tasks_build() takes them
 * (strings borrowed from v) with their jobs' end records from db
 * (tasks_load_jobs()), and their instances in t.  *tp (free()) and t
 * (tasks_free()) are set even on an error.  Returns 0, -EIO or -ENOMEM.
 */
int tasks_of_procs(struct sqlite3 *db, const char *where,
		   const struct storeq_proc *v, size_t n,
		   struct tasks_proc **tp, struct tasks *t);

#endif
