/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * jobs.h - the job registry: what scheduler hooks told the agent about
 * each job (ids, user, account, allocation, workflow run), used to fill
 * the job fields of the job's processes.
 */
#ifndef JOBTRACE_JOBS_H
#define JOBTRACE_JOBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jobstate.h"
#include "proc.h"
#include "timesplit.h"

/* What a job, or one of its steps, used: from its processes. */
struct jt_usage {
	double cpu_s;			/* own CPU of its finished processes */
	uint64_t processes;		/* finished processes */
	uint64_t cgroup_peak_bytes;	/* its memory cgroup's charge peak */
	uint64_t rss_sum_peak_bytes;	/* peak of the sampled sum of RSS */
	uint64_t rss_sum_now;		/* the sum in the current pass */
	uint64_t proc_peak_bytes;	/* its largest finished process's */
	/* where its finished processes' time went (timesplit.h), added */
	double wall_s;			/* their end - start */
	double blkio_s;			/* their io.blkio_delay_s */
	struct jt_waits w;		/* their wait objects */
};

/* Where the memory peak of a job or step comes from. */
enum jt_mem_source {
	JT_MEM_NONE,			/* nothing known */
	JT_MEM_CGROUP,			/* its memory cgroup's charge peak */
	JT_MEM_SAMPLES,			/* the peak of its sampled RSS sum */
	JT_MEM_LARGEST_PROCESS,		/* its largest process's peak RSS */
};

/*
 * The memory peak of a job or step, the one figure its records, its cost's
 * efficiency and its reports use: its cgroup's charge peak; without a
 * cgroup of its own, the larger of the peak of its processes' RSS summed
 * at each sample pass and its largest finished process's own peak (a job
 * shorter than a pass has no sum, and a sum taken between peaks can be
 * below one process's).  0 (JT_MEM_NONE) when nothing is known; src may
 * be NULL.
 */
uint64_t jobs_mem_peak(const struct jt_usage *u, enum jt_mem_source *src);
/* Add the time figures of b (wall, CPU, block I/O, waits) to a. */
void jobs_usage_time_add(struct jt_usage *a, const struct jt_usage *b);
/* Where u's processes' time went, as timesplit_compute() takes it. */
void jobs_usage_split_in(const struct jt_usage *u, struct timesplit_in *in);

#define JT_JOB_STEPS 16

struct jt_step_usage {
	char step[JT_STR_SMALL];
	struct jt_usage u;
};

#define JT_STR_LARGE 256

/* What AWS Batch tells of a job beyond struct jt_job, from its
 * container, and a Slurm array task's index: in the job object of its
 * records. */
struct jt_batch {
	uint32_t attempt;		/* from 1; 0 when unknown */
	uint32_t array_index;		/* with has_array (Slurm's too) */
	uint32_t node_index;		/* with has_node */
	bool has_array;			/* an array job's child */
	bool has_node;			/* a node of a multi-node job */
	char queue[JT_STR_LARGE];
	char compute_env[JT_STR_LARGE];
	char ecs_task_arn[JT_STR_LARGE];
};

struct jt_jobinfo {
	struct jt_job job;		/* scheduler, id, run, user, account, ... */
	/* the scheduler's own id when the job's id is another one: the
	 * JobId (SLURM_JOB_ID, cgroup job_N, slurmstepd [N.S]) of Slurm
	 * array task "4_1" or heterogeneous job component "4+1"; "" when
	 * the same.  jobs_get() finds the job by either. */
	char raw_id[JT_STR_SMALL];
	struct jt_batch batch;		/* scheduler "aws-batch" only */
	char name[JT_STR_MEDIUM];
	char partition[JT_STR_SMALL];
	char node[JT_STR_MEDIUM];
	char cgroup[512];		/* processes under it belong to the job */
	/* the job's memory cgroup as a process of it showed it (Slurm's
	 * job_N level), "" until one did: for memory_near_limit when no
	 * cgroup was registered */
	char memcg[512];
	uint32_t uid;
	bool uid_known;
	/* registered by a user without control rights (`jobtrace run`), in
	 * their own namespace ("user:UID:ID"), who alone may join, update or
	 * end it; it shows them their own processes only: see jobtie.h */
	bool by_user;
	uint32_t cpus;
	uint64_t mem_bytes;
	uint32_t gpus;
	uint32_t time_limit_s;		/* 0: not known, or none */
	uint64_t start_ns;		/* CLOCK_REALTIME */
	uint64_t end_ns;		/* CLOCK_REALTIME, 0 while running */
	int exit_code;
	int exit_signal;		/* with exit_code: Slurm's code:signal */
	bool exit_known;
	bool oom;			/* the OOM killer hit one of its processes */
	char state[JOBSTATE_LEN];	/* how it ended (jobstate.h), "" until known */
	char reason[32];		/* Slurm's Reason= in its last answer */
	/* its start record waits for the scheduler's answer (a Slurm job's
	 * name and allocation), its end record for its final state until
	 * pending_until_ns */
	bool start_pending;
	bool end_pending;
	uint64_t pending_until_ns;	/* CLOCK_MONOTONIC */
	uint64_t next_query_ns;		/* CLOCK_MONOTONIC: ask again then */
	uint64_t touched_ns;		/* CLOCK_MONOTONIC of the last change */

	bool mem_near;			/* in a memory_near_limit episode */
	struct jt_usage usage;
	struct jt_step_usage steps[JT_JOB_STEPS];
	unsigned nsteps;
};

struct jobs;

/* Create an empty registry. */
int jobs_new(struct jobs **out);
/* Free the registry; accepts NULL. */
void jobs_free(struct jobs *j);
/* The job (scheduler, id), found by its id or its raw_id, created when
 * create is set; NULL if absent. */
struct jt_jobinfo *jobs_get(struct jobs *j, const char *scheduler,
			    const char *id, bool create);
/* Make ji a new job of its scheduler and id: nothing else is kept (an id
 * started again after its job ended). */
void jobs_reset(struct jt_jobinfo *ji);
/*
 * The scheduler of a request that names none: that of the one running
 * job with this id (a job-end or job-update for it), else of the latest
 * ended one (an epilog run twice); else "local" for a process tree tied
 * by pid (no scheduler's cgroup tells it), else "slurm" (the epilog's,
 * which has always said none).
 */
const char *jobs_default_scheduler(const struct jobs *j, const char *id,
				   bool by_pid);
/* The running job whose registered cgroup contains path, or NULL. */
struct jt_jobinfo *jobs_by_cgroup(struct jobs *j, const char *path);
/*
 * Fill the empty fields of a process's job from the registry: the job is
 * found by (scheduler, id), or by cgroup when the process has no job id.
 * A process that names the job by its raw_id takes the job's id.
 * Returns the registered job, or NULL.
 */
struct jt_jobinfo *jobs_fill(struct jobs *j, struct jt_job *pj,
			     const char *cgroup);
/* The usage of one step of a job (created; NULL when the step is "" or
 * the job has too many steps). */
struct jt_usage *jobs_step_usage(struct jt_jobinfo *ji, const char *step);
/* Start a sample pass: every job's and step's current RSS sum is 0. */
void jobs_rss_begin(struct jobs *j);
/* End a sample pass: the sums taken become peaks where higher. */
void jobs_rss_end(struct jobs *j);
/* Forget jobs that ended more than keep_ns ago (CLOCK_MONOTONIC now),
 * but for those whose record still waits. */
void jobs_expire(struct jobs *j, uint64_t now_ns, uint64_t keep_ns);
/* Number of jobs known that uid registered without control rights. */
size_t jobs_count_by_user(const struct jobs *j, uint32_t uid);
/* The running jobs (no end yet), at most max of them, into out, in the
 * order they were registered; returns how many there are in all. */
size_t jobs_running(const struct jobs *j, const struct jt_jobinfo **out,
		    size_t max);
/* Call fn on every running job (no end yet), in the order registered. */
void jobs_foreach_running(struct jobs *j,
			  void (*fn)(struct jt_jobinfo *ji, void *arg),
			  void *arg);
/* Call fn on every job whose start or end record waits, in the order
 * registered. */
void jobs_foreach_pending(struct jobs *j,
			  void (*fn)(struct jt_jobinfo *ji, void *arg),
			  void *arg);
/* Number of jobs known, and of those still running. */
size_t jobs_count(const struct jobs *j, size_t *running);

#endif
