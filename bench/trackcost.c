// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * bench/trackcost.c - what the tracker costs per traced process on the
 * agent's own code: a fork, an exec (in a Slurm step's cgroup) and an
 * exit through tracker_event(), N times (default 200,000), with the
 * default classification (no Lua rules) and the process record encoded
 * and dropped.  Prints the CPU time of the whole run per process.  For
 * comparing the tracker before and after a change, in alternating runs.
 *
 *   bench/trackcost [N]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobs.h"
#include "tracker.h"
#include "util.h"

static unsigned long records;

/* A record: counted, not kept. */
static void on_record(void *ctx, struct jbuf *b)
{
	(void)ctx;
	(void)b;
	records++;
}

/* The three events of one process, filled once; pid and times per run. */
static void events_init(union jt_event *f, union jt_event *e,
			union jt_event *x)
{
	static const char argv[] = "gzip\0-9\0x.txt";

	f->hdr.type = JT_EV_FORK;
	f->fork.ppid = 1;
	snprintf(f->fork.comm, sizeof(f->fork.comm), "bash");
	e->hdr.type = JT_EV_EXEC;
	e->exec.ppid = 1;
	snprintf(e->exec.comm, sizeof(e->exec.comm), "gzip");
	snprintf(e->exec.filename, sizeof(e->exec.filename), "/usr/bin/gzip");
	memcpy(e->exec.argv, argv, sizeof(argv));
	e->exec.argv_len = sizeof(argv);
	e->exec.cg2_len = snprintf(e->exec.cg2, sizeof(e->exec.cg2),
				   "/slurm/uid_0/job_7/step_0/task_0");
	x->hdr.type = JT_EV_EXIT;
	x->exit.ppid = 1;
	x->exit.runtime_ns = 1000000;
	snprintf(x->exit.comm, sizeof(x->exit.comm), "gzip");
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 200000;
	static union jt_event f, e, x;	/* large */
	struct jt_host host = { .name = "node1" };
	struct tracker_cb cb = { .record = on_record };
	struct jobs *jobs = NULL;
	struct tracker *t = NULL;
	uint64_t c0, c1;

	if (n <= 0 || jobs_new(&jobs) ||
	    tracker_new(NULL, jobs, &host, &cb, &t)) {
		fprintf(stderr, "usage: trackcost [N > 0] (or out of memory)\n");
		jobs_free(jobs);
		return 2;
	}
	events_init(&f, &e, &x);
	c0 = util_now_ns(CLOCK_PROCESS_CPUTIME_ID);
	for (long i = 0; i < n; i++) {
		uint32_t pid = 1000 + (uint32_t)(i % 30000);
		uint64_t start = 1000 + (uint64_t)i * 10;

		f.hdr.pid = e.hdr.pid = x.hdr.pid = pid;
		f.hdr.start_ns = e.hdr.start_ns = x.hdr.start_ns = start;
		f.hdr.ts_ns = start;
		e.hdr.ts_ns = start + 1;
		x.hdr.ts_ns = start + 2;
		tracker_event(t, &f);
		tracker_event(t, &e);
		tracker_event(t, &x);
	}
	c1 = util_now_ns(CLOCK_PROCESS_CPUTIME_ID);
	printf("processes=%ld records=%lu cpu_ns_per_process=%.1f\n", n,
	       records, (double)(c1 - c0) / n);
	tracker_free(t);
	jobs_free(jobs);
	return 0;
}
