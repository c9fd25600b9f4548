/* SPDX-License-Identifier: GPL-2.0-or-later */
/* record.h - schema v1 records (one JSON object per line). */
#ifndef JOBTRACE_RECORD_H
#define JOBTRACE_RECORD_H

#include <stdbool.h>
#include <stdint.h>

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
/* Open a record object with type, schema, host and id; the caller adds
 * its fields and closes it. */
void record_head(struct jbuf *b, const char *type, const struct jt_host *h,
		 const char *id);
/* Encode a finished process as a schema v1 `process` record. */
void record_process(struct jbuf *b, const struct jt_host *h,
		    const struct jt_proc *p, const char *id);
/* Encode a `job` record: phase "start" or "end" of a registered job. */
void record_job(struct jbuf *b, const struct jt_host *h,
		const struct jt_jobinfo *ji, const char *phase, const char *id);
/* Encode a running process's counters as a `sample` record. */
void record_sample(struct jbuf *b, const struct jt_host *h,
		   const struct jt_proc *p, const char *id);

#endif
