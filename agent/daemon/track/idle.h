/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * idle.h - is the node idle: no job process and little CPU for a while.
 *
 * At every sample pass the agent reads the node's CPU counters from
 * /proc/stat and tells whether a job runs; idle_sample() follows the idle
 * episodes and says when one reaches idle.after, once per episode, for the
 * `signal` record of kind node_idle.
 *
 * An interval between two samples is idle when no job ran at either end
 * and the node's CPU over it (busy / total ticks of all CPUs) stayed below
 * idle.cpu_below.  An episode is a run of idle intervals: it starts at the
 * first one's beginning and ends with the first interval that is not idle
 * (a job appears or the CPU rises).  No record marks its end.
 *
 * Pure logic: no I/O but idle_read_stat(), no clock of its own (times are
 * the caller's, CLOCK_BOOTTIME in the agent), so unit tests drive it.
 */
#ifndef JOBTRACE_IDLE_H
#define JOBTRACE_IDLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "record.h"	/* struct idle_signal */

/* The columns of /proc/stat's "cpu" line that idle_parse_stat() reads. */
enum {
	IDLE_USER, IDLE_NICE, IDLE_SYSTEM, IDLE_IDLE, IDLE_IOWAIT, IDLE_IRQ,
	IDLE_SOFTIRQ, IDLE_STEAL, IDLE_NCOLS
};

/* The node's CPU time counters (USER_HZ ticks, all CPUs summed).  Guest
 * time is left out: the kernel counts it in user and nice already. */
struct idle_cpu {
	uint64_t col[IDLE_NCOLS];	/* absent columns (old kernels): 0 */
};

/* Thresholds (the configuration's idle section). */
struct idle_params {
	uint64_t after_ns;		/* idle.after */
	double cpu_below;		/* idle.cpu_below, a fraction */
};

/* Why the node is not idle now (for status). */
enum idle_why {
	IDLE_WHY_START,			/* fewer than two samples yet */
	IDLE_WHY_NO_CPU,		/* /proc/stat could not be read */
	IDLE_WHY_JOB,			/* a job runs */
	IDLE_WHY_CPU,			/* the CPU was at or above cpu_below */
	IDLE_WHY_NONE,			/* idle */
};

/* The state: zero it to start. */
struct idle {
	bool have_prev;			/* prev and prev_ns hold a sample */
	struct idle_cpu prev;
	uint64_t prev_ns;
	bool prev_job;			/* a job ran at the previous sample */
	enum idle_why why;
	double last_cpu;		/* over the last interval, -1: none */

	bool in_episode;
	uint64_t since_ns;		/* the episode's start */
	uint64_t ep_busy, ep_total;	/* ticks over the episode */
	bool signalled;			/* its signal is out */

	uint64_t episodes;		/* started so far */
	uint64_t signals;		/* signals so far */
	uint64_t last_signal_ns;	/* 0: none */
	uint64_t last_since_ns;		/* the last signal's episode start */
};

/*
 * Parse the aggregate "cpu" line of /proc/stat text buf[0..len) (other
 * lines, "cpu0" and the like, are skipped).  Returns 0, or -EINVAL when
 * there is no such line or it has fewer than four numbers.
 */
int idle_parse_stat(const char *buf, size_t len, struct idle_cpu *out);
/* Read and parse the file at path (/proc/stat): 0 or -errno. */
int idle_read_stat(const char *path, struct idle_cpu *out);
/*
 * Busy and total ticks from a to b.  A column that went back (iowait
 * does, on tickless kernels; a counter that wrapped) adds 0, as procps
 * top does.
 */
void idle_cpu_delta(const struct idle_cpu *a, const struct idle_cpu *b,
		    uint64_t *busy, uint64_t *total);
/*
 * One sample at now_ns: the CPU counters (NULL: not readable, which ends
 * an episode) and whether a job runs.  Returns true, with *sig filled,
 * when the episode reaches p->after_ns: once per episode.
 */
bool idle_sample(struct idle *s, const struct idle_params *p, uint64_t now_ns,
		 const struct idle_cpu *cpu, bool job, struct idle_signal *sig);
struct proc_table;
struct jobs;

/*
 * Whether a job runs on the node: a registered job that has not ended
 * (it holds the node even before its first process, or between two), or
 * a live process that belongs to a job (an id, run, pipeline or task:
 * its records' job object is not null), excluded ones too.
 */
bool idle_job_runs(struct proc_table *procs, const struct jobs *jobs);
/*
 * The node_idle lines of the agent's status: its state now and the
 * signals so far.  Times are s's clock plus to_real_ns (realtime).
 */
void idle_status(const struct idle *s, const struct idle_params *p,
		 uint64_t now_ns, int64_t to_real_ns, FILE *out);

#endif
