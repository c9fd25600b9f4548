/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * stages.h - where the event loop's time goes, always on.
 *
 * The main thread switches between stages (decode an event, track it,
 * classify, encode a record, spool it, a sample pass); each switch reads
 * one cheap clock and charges the time since the last switch to the stage
 * that is left.  The clock is the TSC on x86-64 when the kernel keeps time
 * with it (about 10 ns a read), else CLOCK_MONOTONIC through the vDSO
 * (about 25 ns); neither is a system call.  It is the main thread's wall
 * time: a stage during which the thread was preempted is charged the wait
 * too, so on a busy machine the sum of the stages can exceed the main
 * thread's CPU time (status prints both).
 *
 * Main thread only: no locks, no atomics.  The sink threads' CPU is read
 * from the kernel's per-thread clocks when status asks (sink.c).
 */
#ifndef JOBTRACE_STAGES_H
#define JOBTRACE_STAGES_H

#include <stdint.h>
#include <stdio.h>
#include <time.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

enum stage {
	STAGE_IDLE,	/* none of the below: not reported */
	STAGE_DECODE,	/* ring-buffer bytes -> checked event */
	STAGE_TRACK,	/* the tracker: process table, correlation */
	STAGE_CLASSIFY,	/* the rules (Lua) */
	STAGE_ENCODE,	/* a record's JSON */
	STAGE_SPOOL,	/* spool_append */
	STAGE_SAMPLE,	/* task-iterator passes, but for the above */
	STAGE_NR
};

struct stages {
	uint64_t ticks[STAGE_NR];	/* clock units, see stages_ns() */
	uint64_t count[STAGE_NR];	/* times entered */
	uint64_t since;			/* clock at the last switch */
	enum stage cur;
	int tsc;			/* 1: the clock is the TSC */
};

extern struct stages stages_main;

/* The stage clock: TSC ticks, or CLOCK_MONOTONIC ns. */
static inline uint64_t stages_clock(void)
{
	struct timespec ts;

#if defined(__x86_64__)
	if (stages_main.tsc)
		return __rdtsc();
#endif
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Charge the time since the last switch and go to stage s. */
static inline void stages_switch(enum stage s)
{
	struct stages *m = &stages_main;
	uint64_t now = stages_clock();

	m->ticks[m->cur] += now - m->since;
	m->since = now;
	m->cur = s;
}

/* Enter stage s (counted); returns the stage to go back to. */
static inline enum stage stages_enter(enum stage s)
{
	enum stage prev = stages_main.cur;

	stages_switch(s);
	stages_main.count[s]++;
	return prev;
}

/* Go back to the stage stages_enter() returned (not counted). */
static inline void stages_leave(enum stage prev)
{
	stages_switch(prev);
}

/* Choose the clock; before it, stages count in CLOCK_MONOTONIC ns. */
void stages_init(void);
/* Nanoseconds charged to stage s so far. */
uint64_t stages_ns(enum stage s);
/*
 * "key: value" status lines: stage.clock, stage.NAME_ns and
 * stage.NAME_count for every stage, cpu_ns (the process, all threads) and
 * cpu_main_ns (the calling thread, which must be the main thread).
 */
void stages_status(FILE *out);

#endif
