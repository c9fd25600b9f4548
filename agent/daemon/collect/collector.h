/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * collector.h - loads and drives the BPF programs: ring-buffer events,
 * task-iterator samples, the tracked-pid map and drop counters.
 */
#ifndef JOBTRACE_COLLECTOR_H
#define JOBTRACE_COLLECTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "decode.h"
#include "events.h"

struct collector;

struct collector_opts {
	unsigned ringbuf_kib;
	unsigned max_tracked;
	unsigned argv_max;
	bool files;		/* follow opens, reads and writes (files.enabled) */
	bool follow_opens;	/* and every open and close (files.follow_opens) */
	bool verbose;		/* pass libbpf's debug output to the log */
};

struct collector_cb {
	/* one decoded ring-buffer event */
	void (*event)(void *ctx, const union jt_event *ev);
	/* one iterator pass: n per-thread samples */
	void (*samples)(void *ctx, const struct jt_sample *s, size_t n,
			bool discovery);
	void *ctx;
};

/*
 * Check BTF, open, size and load the programs, attach them (optional ones
 * that this kernel lacks are skipped with a warning).  Returns 0 or -errno
 * after logging why.
 */
int collector_open(const struct collector_opts *o,
		   const struct collector_cb *cb, struct collector **out);
/* Detach and free; accepts NULL. */
void collector_close(struct collector *c);
/* Does the kernel follow what processes open, read and write (files
 * asked for and the kernel has the tracepoint)? */
bool collector_files(const struct collector *c);
/* fd to poll for ring-buffer data. */
int collector_fd(const struct collector *c);
/* Deliver every pending ring-buffer event; returns events or -errno. */
int collector_drain(struct collector *c);
/*
 * Wait at most timeout_ms until the exits the kernel holds for their
 * task's last context switch (the CPU is final only then) at the call
 * have reached the ring buffer, delivering events meanwhile: a process a
 * job's wrapper or epilog has just reaped may be one.  Returns how many
 * are still held.
 */
int collector_settle(struct collector *c, unsigned timeout_ms);
/* Run the task iterator once; discovery also starts tracking every
 * process it meets.  Returns samples delivered or -errno. */
int collector_sample(struct collector *c, bool discovery);
/*
 * Exclude a process: its later events stay in the kernel (counted in
 * JT_CNT_EXCLUDED).  With tree, its descendants are excluded too; without,
 * its children are followed, and a new exec of its own is classified again.
 */
int collector_exclude(struct collector *c, uint32_t pid, bool tree);
/* Whether the kernel still follows pid, the process that started at
 * start_ns (boot-time ns): its entry in the tracked map is there until the
 * process is gone, excluded or not. */
bool collector_follows(struct collector *c, uint32_t pid, uint64_t start_ns);
/* Sum the per-CPU counters into out[JT_CNT_NR]. */
int collector_counters(struct collector *c, uint64_t out[JT_CNT_NR]);
/* Comma-separated names of signals this kernel cannot give ("" if none). */
const char *collector_missing(const struct collector *c);

#endif
