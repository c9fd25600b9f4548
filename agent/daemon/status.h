/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * status.h - the agent's answers to "status" (its health, counters and
 * the state of each part) and "ps" (the tracked processes running now,
 * as the asker may see them), printed from what the loop's parts say.
 */
#ifndef JT_STATUS_H
#define JT_STATUS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "config.h"
#include "cost.h"
#include "events.h"
#include "idle.h"

struct tracker;
struct jobs;
struct proc_table;
struct spool;
struct sinks;
struct rules;
struct imds;
struct sig_agent;
struct dockjobs;
struct smklogq;
struct rulesctl;

/* What "status" reports: the agent's parts (borrowed) and counters. */
struct status_src {
	const struct jt_config *cfg;
	const struct jt_host *host;
	const struct tracker *trk;
	struct jobs *jobs;
	struct spool *spool;
	struct sinks *sinks;
	struct rules *rules;
	struct imds *imds;		/* NULL: not asked, imds_why says why */
	const char *imds_why;
	const struct cost_price *price;	/* the node's */
	const struct idle *idle;
	struct idle_params idle_params;
	const struct sig_agent *sig;
	const struct dockjobs *dj;	/* NULL: docker off */
	struct smklogq *smk;		/* NULL: no Snakemake log reader */
	const uint64_t *counters;	/* the kernel's, JT_CNT_NR of them */
	const char *missing;		/* signals not attached, "": none */
	uint64_t uptime_ns;
	uint64_t records_spooled;
	uint64_t records_unspooled;	/* never reached the spool: lost */
	uint64_t control_busy;		/* users' requests refused as busy */
	bool rules_failing;		/* the last load of the rules failed */
	const struct rulesctl *rc;	/* the rules' source; NULL: not shown */
};

/* Kernel events lost of every kind (the ring buffer's drops). */
uint64_t status_dropped(const uint64_t *counters);
/*
 * The first line of "status": "status: running", or "status: degraded:
 * N problems: ..." naming each (events or records lost, the spool or a
 * sink failing, the rules not loaded, look-ups failing).
 */
void status_health(const struct status_src *s, FILE *out);
/* The reply to "status"; a privileged asker sees users' file paths. */
void status_reply(const struct status_src *s, bool privileged, FILE *out);
/*
 * The reply to "ps": the tracked processes of procs running now, by pid,
 * with their rates; all, or (all false) uid's own and those of jobs root
 * said are uid's.
 */
void status_ps(struct proc_table *procs, struct jobs *jobs, bool all,
	       uid_t uid, FILE *out);

#endif
