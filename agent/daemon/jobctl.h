/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * jobctl.h - job control: the job-start, job-end and job-update requests
 * of the control socket (hooks, `jobtrace job ...`) change the job
 * registry and write the jobs' start and end records; a Slurm job's
 * records wait (bounded) for what `scontrol show job` says of it, asked
 * in the background on the agent's loop.
 */
#ifndef JT_JOBCTL_H
#define JT_JOBCTL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "control.h"
#include "jobs.h"

struct tracker;
struct jt_config;
struct jobctl;

/* What job control asks of the agent around it. */
struct jobctl_ops {
	/* the kernel's events so far into the tracker (collector_drain) */
	void (*drain)(void *ctx);
	/* the exits the kernel holds for a last switch, at most ms */
	void (*settle)(void *ctx, unsigned ms);
	/* a job's end record is written: its signals, the store flushed */
	void (*ended)(void *ctx, struct jt_jobinfo *ji);
	/* what ended so far to the sinks now (a report may ask next) */
	void (*flush)(void *ctx);
	void *ctx;
};

/*
 * Job control over the registry jobs and the tracker trk (both borrowed,
 * as cfg is); scontrol's pipes are added to epfd (-1: none, a test).
 * 0 or -ENOMEM.
 */
int jobctl_new(struct jobs *jobs, struct tracker *trk,
	       const struct jt_config *cfg, int epfd,
	       const struct jobctl_ops *ops, struct jobctl **out);
/* Stop: what waits for slurmctld is written as it is known now; then
 * free (NULL: nothing). */
void jobctl_free(struct jobctl *jc);
/*
 * Answer one job-start, job-end or job-update request r of a peer
 * (privileged: root or the control group) into out: "ok" and what was
 * done, or "error ..." naming the field or the reason.
 */
void jobctl_request(struct jobctl *jc, const struct control_req *r,
		    bool privileged, const struct control_peer *peer,
		    FILE *out);
/* Data on fd: true if it was a query's pipe (and is read), else false. */
bool jobctl_on_fd(struct jobctl *jc, int fd);
/* Every tick (CLOCK_MONOTONIC now): stop hung queries, ask again or write
 * what waits, reap the queries' children. */
void jobctl_tick(struct jobctl *jc, uint64_t now);
/* At stop: queries end now, every waiting record is written. */
void jobctl_stop(struct jobctl *jc);

#endif
