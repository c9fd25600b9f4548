// SPDX-License-Identifier: GPL-2.0-or-later
/* stages.c - the event loop's time per stage (see stages.h). */
#include <inttypes.h>
#include <string.h>

#include "stages.h"
#include "util.h"

struct stages stages_main;

static const char *const names[STAGE_NR] = {
	[STAGE_IDLE] = "idle",
	[STAGE_DECODE] = "decode",
	[STAGE_TRACK] = "track",
	[STAGE_CLASSIFY] = "classify",
	[STAGE_ENCODE] = "encode",
	[STAGE_SPOOL] = "spool",
	[STAGE_SAMPLE] = "sample",
};

/* TSC and CLOCK_MONOTONIC at stages_init(): the TSC's rate from them. */
static uint64_t tsc0, mono0;

/* Choose the clock. */
void stages_init(void)
{
	char cs[32] = "";

	memset(&stages_main, 0, sizeof(stages_main));
#if defined(__x86_64__)
	/* the kernel keeps time with the TSC only when it is constant and
	 * the same on every CPU: then so can we */
	if (util_read_file("/sys/devices/system/clocksource/clocksource0/"
			   "current_clocksource", cs, sizeof(cs)) > 0 &&
	    !strcmp(cs, "tsc\n")) {
		stages_main.tsc = 1;
		mono0 = util_now_ns(CLOCK_MONOTONIC);
		tsc0 = __rdtsc();
	}
#endif
	stages_main.since = stages_clock();
}

/* Nanoseconds charged to stage s. */
uint64_t stages_ns(enum stage s)
{
	uint64_t dt, dm;

	if (!stages_main.tsc)
		return stages_main.ticks[s];
	dm = util_now_ns(CLOCK_MONOTONIC) - mono0;
	dt = stages_clock() - tsc0;
	return dt ? (uint64_t)((double)stages_main.ticks[s] * dm / dt) : 0;
}

/* Status lines. */
void stages_status(FILE *out)
{
	fprintf(out, "stage.clock: %s\n",
		stages_main.tsc ? "tsc" : "monotonic");
	for (int s = STAGE_IDLE + 1; s < STAGE_NR; s++) {
		fprintf(out, "stage.%s_ns: %" PRIu64 "\n", names[s],
			stages_ns(s));
		fprintf(out, "stage.%s_count: %" PRIu64 "\n", names[s],
			stages_main.count[s]);
	}
	fprintf(out, "cpu_ns: %" PRIu64 "\n",
		util_now_ns(CLOCK_PROCESS_CPUTIME_ID));
	fprintf(out, "cpu_main_ns: %" PRIu64 "\n",
		util_now_ns(CLOCK_THREAD_CPUTIME_ID));
}
