// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * bench/stagecost.c - what the always-on stage accounting (agent/daemon/collect/stages.h)
 * costs the agent per traced process: the switches one process makes
 * (fork: decode, track, back; exec: the same and classify in and out;
 * exit: the same and encode and spool in and out, 15 in all), repeated
 * N times (default 2,000,000) on the agent's own clock, or on
 * CLOCK_MONOTONIC (the clock where the TSC is not the kernel's).  With
 * "cputime" it times N reads of CLOCK_THREAD_CPUTIME_ID instead, the
 * clock the rules' deadline reads (a system call: agent/core/rules.c).
 *
 *   bench/stagecost [N [monotonic|cputime]]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stages.h"
#include "util.h"

/* One event through on_rb; inner, if not idle, nested in the tracker. */
static void event(enum stage inner, enum stage inner2)
{
	enum stage prev = stages_enter(STAGE_DECODE), p;

	stages_enter(STAGE_TRACK);
	if (inner != STAGE_IDLE) {
		p = stages_enter(inner);
		stages_leave(p);
	}
	if (inner2 != STAGE_IDLE) {
		p = stages_enter(inner2);
		stages_leave(p);
	}
	stages_leave(prev);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 2000000;
	uint64_t t0, t1, sw;

	if (argc > 2 && !strcmp(argv[2], "cputime")) {
		uint64_t sum = 0;

		t0 = util_now_ns(CLOCK_MONOTONIC);
		for (long i = 0; i < n; i++)
			sum += util_now_ns(CLOCK_THREAD_CPUTIME_ID);
		t1 = util_now_ns(CLOCK_MONOTONIC);
		printf("clock=thread_cputime reads=%ld ns_per_read=%.1f (%s)\n", n,
		       (double)(t1 - t0) / n, sum ? "read" : "none");
		return 0;
	}
	stages_init();
	if (argc > 2 && !strcmp(argv[2], "monotonic"))
		stages_main.tsc = 0;
	t0 = util_now_ns(CLOCK_MONOTONIC);
	for (long i = 0; i < n; i++) {
		event(STAGE_IDLE, STAGE_IDLE);		/* fork */
		event(STAGE_CLASSIFY, STAGE_IDLE);	/* exec */
		event(STAGE_ENCODE, STAGE_SPOOL);	/* exit */
	}
	t1 = util_now_ns(CLOCK_MONOTONIC);
	sw = 0;
	for (int s = 0; s < STAGE_NR; s++)
		sw += stages_main.count[s];
	/* every counted enter has one leave, but for track (left by the
	 * decode's leave) */
	sw = 2 * sw - stages_main.count[STAGE_TRACK];
	printf("clock=%s processes=%ld switches_per_process=%.1f"
	       " ns_per_switch=%.1f ns_per_process=%.1f\n",
	       stages_main.tsc ? "tsc" : "monotonic", n, (double)sw / n,
	       (double)(t1 - t0) / sw, (double)(t1 - t0) / n);
	return 0;
}
