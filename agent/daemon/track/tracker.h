/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tracker.h - kernel events and samples in, schema v1 records out.
 *
 * The tracker keeps the process table: a fork inherits its parent's
 * program and job, an exec is correlated (cgroup, ancestry, job registry)
 * and classified by the rules, an exit makes the process record and adds
 * the process to its job's usage.  Sample passes update running processes,
 * write `sample` records, keep the jobs' RSS sums and retire processes
 * whose exit was lost.  It does no I/O of its own but for /proc reads of
 * processes found already running; records and exclusions leave through
 * the callbacks, so unit tests drive it with synthetic events.  Its state
 * is tracker.c's alone (tests/code/layers.py keeps the struct's definition
 * there): the rest of the agent uses the functions below.
 */
#ifndef JOBTRACE_TRACKER_H
#define JOBTRACE_TRACKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "decode.h"
#include "jobs.h"
#include "json.h"
#include "proc_table.h"
#include "procfiles.h"
#include "record.h"
#include "rules.h"

struct tracker_cb {
	/* one encoded record for the spool */
	void (*record)(void *ctx, struct jbuf *b);
	/* keep a process's later events (with tree, its descendants') in
	 * the kernel; may be NULL */
	void (*exclude)(void *ctx, uint32_t pid, bool tree);
	/* the node's price now, for a job end record's cost; may be NULL
	 * (no price) */
	const struct cost_price *(*price)(void *ctx);
	/* a tracked process is gone, its record written, just before it is
	 * forgotten; may be NULL */
	void (*gone)(void *ctx, struct jt_proc *p);
	/* does the kernel still follow the process pid that started at
	 * start_ns?  Asked after a pass for an excluded process, which the
	 * iterator does not report and whose exit the kernel keeps; may be
	 * NULL: such a process is forgotten at the first pass */
	bool (*followed)(void *ctx, uint32_t pid, uint64_t start_ns);
	/* what the workflow engine engine (tool category workflow-engine)
	 * says of the job of its child `sh -c cmd` that has no task yet
	 * (Snakemake's local mode, smklog.h): fill *out and return true, or
	 * false; called before the rules run, it may wait a bounded time
	 * (smklogq.h); may be NULL */
	bool (*engine_job)(void *ctx, const struct jt_proc *engine,
			   const char *cmd, struct rules_engine_job *out);
	/* is the cgroup folder dir (a path as in /proc/PID/cgroup) root's?
	 * A Slurm job's or a container's cgroup names its job only then: a
	 * user with a delegated subtree (systemd's user@UID.service) can make
	 * .../slurmstepd.scope/job_N or .../docker/ID folders of their own;
	 * may be NULL: every one is (cgtrust.h has the real one) */
	bool (*cg_root)(void *ctx, const char *dir);
	/* a process the rules included as a workflow engine (tool category
	 * workflow-engine), at its exec or when found running; may be
	 * NULL */
	void (*engine_seen)(void *ctx, const struct jt_proc *engine);
	void *ctx;
};

struct tracker;
struct jt_usage;

/*
 * The containers the processes run in (cloud/containers.h fills it with
 * containers_tracker()): the tracker tells them who enters and leaves
 * one, and asks where a finished process of a container without a job
 * yet counts.  A layer above the tracker's: it calls down (through the
 * callbacks it was given at its own start), the tracker only through
 * these.
 */
struct tracker_containers {
	void (*enter)(void *cts, const struct jt_proc *p);
	void (*leave)(void *cts, const struct jt_proc *p);
	struct jt_usage *(*usage)(void *cts, const struct jt_proc *p);
	void *cts;		/* NULL: containers are not looked up */
};
struct cost_price;
struct jt_config;

/* What status and host records show of the tracker (tracker_stats()). */
struct tracker_stats {
	uint64_t events_seen;	/* kernel events handled */
	uint64_t exits_lost;	/* processes retired without their exit */
	uint64_t oom_kills;
	uint64_t excluded;	/* processes the rules excluded */
	size_t tracked;		/* processes in the table now */
	unsigned passes;	/* sample passes so far */
	/* collector.record = "jobs": processes outside jobs get no record,
	 * they are counted in outside (host records carry it) */
	bool jobs_only;
	struct jt_outside outside;
	/* files opened, by where their name came from */
	uint64_t files_named[PROCFILES_NAMED_NR];
};

/* The most jobs a spot interruption's signal record names. */
#define TRACKER_SPOT_JOBS 256

/* A spot interruption notice: a `signal` record naming the running jobs. */
void tracker_spot(struct tracker *t, const struct jt_spot *s);
/*
 * A new empty tracker in *out (the parts given are borrowed; rules may be
 * NULL: the defaults); 0 or -ENOMEM.
 */
int tracker_new(struct rules *rules, struct jobs *jobs,
		const struct jt_host *host, const struct tracker_cb *cb,
		struct tracker **out);
/* Free the process table and buffers (not the borrowed parts); accepts
 * NULL. */
void tracker_free(struct tracker *t);
/*
 * What the configuration cfg (borrowed) decides: job end records carry a
 * cost, collector.record ("jobs": processes outside jobs are counted, not
 * recorded, from now on) and first_sample.
 */
void tracker_configure(struct tracker *t, const struct jt_config *cfg);
/* A job's process no pass has seen is due one this old (0: off; see
 * tracker_young_due()). */
void tracker_set_first_sample(struct tracker *t, uint64_t young_ns);
/* Whether the kernel follows files (collector_files()): process records
 * list them, samples carry progress; else files are null. */
void tracker_set_files(struct tracker *t, bool files);
/* The containers from now on (ct copied; ct->cts NULL: none). */
void tracker_set_containers(struct tracker *t,
			    const struct tracker_containers *ct);
/* The process table (the tracker's: it stays while the tracker does). */
struct proc_table *tracker_procs(const struct tracker *t);
/* The tracker's counters now. */
struct tracker_stats tracker_stats(const struct tracker *t);
/* Handle one decoded kernel event. */
void tracker_event(struct tracker *t, const union jt_event *ev);
/*
 * One iterator pass of n per-thread samples taken at now_ns (boottime);
 * discovery passes start following the processes they find.
 */
void tracker_samples(struct tracker *t, const struct jt_sample *s, size_t n,
		     bool discovery, uint64_t now_ns);
/*
 * After a sample pass that began at before_ns: retire processes it did
 * not see (their exit was lost), write `sample` records for running job
 * processes and take the jobs' sums of RSS.
 */
void tracker_after_pass(struct tracker *t, uint64_t before_ns);
/*
 * Is a pass due for a job's process that no pass has seen and that is now
 * (boottime) first_sample old or more, running still?  Also moves on to
 * the next such process, so that a process shorter than the sample
 * interval leaves samples.
 */
bool tracker_young_due(struct tracker *t, uint64_t now_ns);
/* Write a job record ("start" or "end"; an end carries the usage). */
void tracker_job_record(struct tracker *t, const struct jt_jobinfo *ji,
			const char *phase);
/*
 * How many levels above the memory cgroup path memcg the job's own memory
 * cgroup is (returned) and its step's (*step_level); -1 when the job (step)
 * has no memory cgroup of its own there.  Slurm's job_N/step_S levels, or
 * the cgroup a hook registered for the job.
 */
int tracker_memcg_levels(const char *memcg, const struct jt_job *job,
			 const char *registered_cgroup, int *step_level);

#endif
