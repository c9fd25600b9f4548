/* SPDX-License-Identifier: GPL-2.0-or-later */
/* record.h - schema v1 records (one JSON object per line). */
#ifndef JOBTRACE_RECORD_H
#define JOBTRACE_RECORD_H

#include <stdbool.h>
#include <stdint.h>

#include "cost.h"
#include "jobs.h"
#include "json.h"
#include "proc.h"

#define JT_SCHEMA_VERSION 1

/* Host facts every record carries, and clock conversion. */
struct jt_host {
	char name[256];
	char boot_id[40];
	int64_t boot_to_real_ns;	/* realtime = boottime + this */
	bool memcg_v2;			/* the memory controller is on v2 */
};

/* Fill host name, boot id and where the memory controller is; hostname
 * overrides gethostname when set. */
int record_host_init(struct jt_host *h, const char *hostname);
/* Recompute the boottime -> realtime offset (after clock steps). */
void record_host_sync_clock(struct jt_host *h);
/* Boottime ns to realtime ns. */
uint64_t record_realtime(const struct jt_host *h, uint64_t boot_ns);
/* Deterministic record id (UUID text, 37 bytes) for a process. */
void record_process_id(const struct jt_host *h, const struct jt_proc *p,
		       char out[37]);
/* The id record_process_id() gives p's parent (same host and boot). */
void record_parent_id(const struct jt_host *h, const struct jt_proc *p,
		      char out[37]);
/* Deterministic record id for any (type, key, time). */
void record_make_id(const struct jt_host *h, const char *type,
		    const char *key, uint64_t ns, char out[37]);
struct sv;

/* The values of the members every record starts with (schema.h). */
void record_head_values(struct sv *v, const struct jt_host *h, const char *id);
/* Whether j names a job: an id, run, pipeline or task. */
bool record_job_named(const struct jt_job *j);
/* The values of the job object (null when j names no job). */
void record_job_values(struct sv *v, const struct jt_job *j);
/* The values of the job object's members but AWS Batch's
 * (record_batch_values()), even when j names no job; v need not be
 * zeroed: each of those members is set or nulled. */
void record_job_fill(struct sv *v, const struct jt_job *j);
/* The values of the tool object. */
void record_tool_values(struct sv *v, const char *name, const char *category,
			const char *version);
/* The AWS Batch members of the job object from batch (NULL: none). */
void record_batch_values(struct sv *v, const struct jt_batch *batch);
/* Encode a finished process as a schema v1 `process` record; batch is
 * its AWS Batch job's (NULL for none). */
void record_process(struct jbuf *b, const struct jt_host *h,
		    const struct jt_proc *p, const struct jt_batch *batch,
		    const char *id);
struct cost_job;
struct cost_price;

/* Encode a `job` record: phase "start" or "end" of a registered job; an
 * end record's cost, efficiency and flags from cost (NULL: not computed,
 * all null with a note). */
void record_job(struct jbuf *b, const struct jt_host *h,
		const struct jt_jobinfo *ji, const char *phase, const char *id,
		const struct cost_job *cost);
/* Encode a running process's counters as a `sample` record (batch as
 * for record_process()). */
void record_sample(struct jbuf *b, const struct jt_host *h,
		   const struct jt_proc *p, const struct jt_batch *batch,
		   const char *id);

/* What an OOM kill's signal record tells. */
struct jt_oom {
	uint32_t pid;
	const char *comm;
	uint64_t boot_ns;		/* when (CLOCK_BOOTTIME) */
	uint64_t rss_bytes;
	uint64_t total_vm_bytes;
};

/* Encode an OOM kill as a `signal` record (p: the victim, or NULL;
 * batch: its AWS Batch job's fields, or NULL). */
void record_oom(struct jbuf *b, const struct jt_host *h,
		const struct jt_proc *p, const struct jt_batch *batch,
		const struct jt_oom *o, const char *id);

/* The host record's cloud object: null when provider is "". */
void record_cloud_values(struct sv *v, const struct jt_cloud *c);
/* The host record's price object. */
void record_price_values(struct sv *v, const struct cost_price *p);

/* The processes outside jobs that had no record of their own
 * (collector.record = "jobs"). */
struct jt_outside {
	uint64_t processes;
	double cpu_s;
	uint64_t read_bytes;
	uint64_t write_bytes;
};
/* The host record's outside_jobs object. */
void record_outside_values(struct sv *v, const struct jt_outside *o);

/* What a node_idle signal tells (idle.h finds the episodes). */
struct idle_signal {
	uint64_t since_ns;		/* the episode's start */
	uint64_t now_ns;		/* when it reached idle.after */
	double idle_s;			/* now - since */
	double cpu;			/* busy / total over the episode */
};

/* Encode an idle episode that reached idle.after as a `signal` record of
 * kind node_idle; its cost is p's price over it (null when p has none). */
void record_node_idle(struct jbuf *b, const struct jt_host *h,
		      const struct idle_signal *s, const struct cost_price *p,
		      const char *id);

/* What a spot interruption notice's signal record tells. */
struct jt_spot {
	const char *action;		/* terminate, stop or hibernate */
	uint64_t action_ns;		/* when EC2 acts (CLOCK_REALTIME) */
	uint64_t seen_ns;		/* when the notice was read (CLOCK_REALTIME) */
};

/*
 * Encode a spot interruption notice as a `signal` record naming the jobs
 * running (running[0..n)); its job object is the job when there is
 * exactly one.
 */
void record_spot(struct jbuf *b, const struct jt_host *h,
		 const struct jt_spot *s,
		 const struct jt_jobinfo *const *running, size_t n,
		 const char *id);

#endif
