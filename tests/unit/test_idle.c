// SPDX-License-Identifier: GPL-2.0-or-later
/* test_idle.c - unit tests for agent/daemon/track/idle.c: /proc/stat parsing and the
 * idle episodes. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cost.h"
#include "idle.h"
#include "jobs.h"
#include "json.h"
#include "json_check.h"
#include "proc_table.h"
#include "record.h"

#define S 1000000000ull

/* A node of two CPUs: counters that grow by `busy` of 200 ticks a second
 * (USER_HZ 100), busy ticks in user, the rest in idle. */
struct node {
	struct idle_cpu c;
};

/* Let dt seconds pass at a CPU fraction of frac. */
static const struct idle_cpu *run(struct node *n, unsigned dt, double frac)
{
	uint64_t total = 200ull * dt, busy = (uint64_t)(frac * total + 0.5);

	n->c.col[IDLE_USER] += busy;
	n->c.col[IDLE_IDLE] += total - busy;
	return &n->c;
}

static const struct idle_params P = { .after_ns = 3 * S, .cpu_below = 0.05 };

/* An episode starts at the first idle interval's beginning and is
 * signalled when it is idle.after long, with its CPU over it. */
static void test_episode_start(void **state)
{
	struct idle s = { 0 };
	struct node n = { { { 1000, 0, 500, 90000 } } };
	struct idle_signal sig;

	(void)state;
	assert_false(idle_sample(&s, &P, 10 * S, &n.c, false, &sig));
	assert_int_equal(s.why, IDLE_WHY_START);
	assert_false(idle_sample(&s, &P, 11 * S, run(&n, 1, 0.01), false, &sig));
	assert_int_equal(s.why, IDLE_WHY_NONE);
	assert_int_equal(s.since_ns, 10 * S);
	assert_false(idle_sample(&s, &P, 12 * S, run(&n, 1, 0.03), false, &sig));
	assert_true(idle_sample(&s, &P, 13 * S, run(&n, 1, 0.02), false, &sig));
	assert_int_equal(sig.since_ns, 10 * S);
	assert_int_equal(sig.now_ns, 13 * S);
	assert_true(sig.idle_s == 3.0);
	/* (2 + 6 + 4) busy of 600 ticks */
	assert_true(sig.cpu > 0.02 - 1e-12 && sig.cpu < 0.02 + 1e-12);
	assert_int_equal(s.episodes, 1);
	assert_int_equal(s.signals, 1);
}

/* One signal per episode, however long it lasts; the next episode has
 * its own. */
static void test_one_signal_per_episode(void **state)
{
	struct idle s = { 0 };
	struct node n = { { { 0 } } };
	struct idle_signal sig;
	int signals = 0;

	(void)state;
	idle_sample(&s, &P, 0, &n.c, false, &sig);
	for (unsigned t = 1; t <= 100; t++)
		signals += idle_sample(&s, &P, t * S, run(&n, 1, 0.0), false,
				       &sig);
	assert_int_equal(signals, 1);
	/* a spike ends it; the next quiet stretch is a new episode */
	assert_false(idle_sample(&s, &P, 101 * S, run(&n, 1, 0.9), false, &sig));
	for (unsigned t = 102; t <= 200; t++)
		signals += idle_sample(&s, &P, t * S, run(&n, 1, 0.0), false,
				       &sig);
	assert_int_equal(signals, 2);
	assert_int_equal(sig.since_ns, 101 * S);
	assert_int_equal(s.episodes, 2);
	assert_int_equal(s.last_signal_ns, 104 * S);
}

/* CPU at or above cpu_below in one interval ends the episode: the
 * next one starts after the spike. */
static void test_cpu_spike_resets(void **state)
{
	struct idle s = { 0 };
	struct node n = { { { 0 } } };
	struct idle_signal sig;

	(void)state;
	idle_sample(&s, &P, 0, &n.c, false, &sig);
	assert_false(idle_sample(&s, &P, 1 * S, run(&n, 1, 0.0), false, &sig));
	assert_false(idle_sample(&s, &P, 2 * S, run(&n, 1, 0.0), false, &sig));
	/* exactly the threshold is not below it */
	assert_false(idle_sample(&s, &P, 3 * S, run(&n, 1, 0.05), false, &sig));
	assert_int_equal(s.why, IDLE_WHY_CPU);
	assert_true(s.last_cpu == 0.05);
	assert_false(s.in_episode);
	assert_false(idle_sample(&s, &P, 4 * S, run(&n, 1, 0.04), false, &sig));
	assert_int_equal(s.since_ns, 3 * S);
	assert_false(idle_sample(&s, &P, 5 * S, run(&n, 1, 0.0), false, &sig));
	assert_true(idle_sample(&s, &P, 6 * S, run(&n, 1, 0.0), false, &sig));
	assert_int_equal(sig.since_ns, 3 * S);
	assert_true(sig.idle_s == 3.0);
}

/* A job at a sample ends the episode; the interval after it is not idle
 * either (the job ran at its start), so the next episode starts at the
 * first sample without one. */
static void test_job_resets(void **state)
{
	struct idle s = { 0 };
	struct node n = { { { 0 } } };
	struct idle_signal sig;

	(void)state;
	idle_sample(&s, &P, 0, &n.c, false, &sig);
	assert_false(idle_sample(&s, &P, 1 * S, run(&n, 1, 0.0), false, &sig));
	assert_false(idle_sample(&s, &P, 2 * S, run(&n, 1, 0.0), false, &sig));
	/* a job that uses no CPU still makes the node busy */
	assert_false(idle_sample(&s, &P, 3 * S, run(&n, 1, 0.0), true, &sig));
	assert_int_equal(s.why, IDLE_WHY_JOB);
	assert_false(idle_sample(&s, &P, 4 * S, run(&n, 1, 0.0), false, &sig));
	assert_int_equal(s.why, IDLE_WHY_JOB);
	assert_false(s.in_episode);
	assert_false(idle_sample(&s, &P, 5 * S, run(&n, 1, 0.0), false, &sig));
	assert_int_equal(s.since_ns, 4 * S);
	assert_false(idle_sample(&s, &P, 6 * S, run(&n, 1, 0.0), false, &sig));
	assert_true(idle_sample(&s, &P, 7 * S, run(&n, 1, 0.0), false, &sig));
	assert_int_equal(sig.since_ns, 4 * S);
	/* a job from the first sample on: never idle */
	memset(&s, 0, sizeof(s));
	for (unsigned t = 10; t < 20; t++)
		assert_false(idle_sample(&s, &P, t * S, run(&n, 1, 0.0), true,
					 &sig));
	assert_int_equal(s.episodes, 0);
}

/* /proc/stat unreadable ends the episode and needs two samples again;
 * an interval under a tick waits for the next sample. */
static void test_unreadable_and_short(void **state)
{
	struct idle s = { 0 };
	struct node n = { { { 0 } } };
	struct idle_signal sig;

	(void)state;
	idle_sample(&s, &P, 0, &n.c, false, &sig);
	idle_sample(&s, &P, 2 * S, run(&n, 2, 0.0), false, &sig);
	assert_true(s.in_episode);
	assert_false(idle_sample(&s, &P, 3 * S, NULL, false, &sig));
	assert_false(s.in_episode);
	assert_int_equal(s.why, IDLE_WHY_NO_CPU);
	assert_false(idle_sample(&s, &P, 4 * S, run(&n, 1, 0.0), false, &sig));
	assert_int_equal(s.why, IDLE_WHY_START);
	/* no tick since the last sample: nothing changes */
	assert_false(idle_sample(&s, &P, 4 * S + 1000, &n.c, false, &sig));
	assert_int_equal(s.prev_ns, 4 * S);
	assert_false(idle_sample(&s, &P, 6 * S, run(&n, 2, 0.0), false, &sig));
	assert_true(idle_sample(&s, &P, 7 * S, run(&n, 1, 0.0), false, &sig));
	assert_int_equal(sig.since_ns, 4 * S);
	/* after = 0: the first idle interval is signalled */
	{
		struct idle_params p0 = { .after_ns = 0, .cpu_below = 0.05 };

		memset(&s, 0, sizeof(s));
		idle_sample(&s, &p0, 10 * S, &n.c, false, &sig);
		assert_true(idle_sample(&s, &p0, 11 * S, run(&n, 1, 0.0),
					false, &sig));
	}
}

/* A real /proc/stat's head, as Linux 6.1 writes it. */
static const char STAT[] =
	"cpu  4705 356 584 3699176 23 0 35 0 7 3\n"
	"cpu0 1393 280 293 1849220 17 0 13 0 0 0\n"
	"cpu1 3312 76 291 1849956 6 0 22 0 7 3\n"
	"intr 1145789 9 0 0 0 0 0 0 0 1 0 0 0 0\n"
	"ctxt 2002811\n";

/* The aggregate line: guest columns are left out (already in user). */
static void test_parse(void **state)
{
	struct idle_cpu c;
	uint64_t busy, total;
	struct idle_cpu zero = { { 0 } };

	(void)state;
	assert_int_equal(idle_parse_stat(STAT, strlen(STAT), &c), 0);
	assert_int_equal(c.col[IDLE_USER], 4705);
	assert_int_equal(c.col[IDLE_NICE], 356);
	assert_int_equal(c.col[IDLE_SYSTEM], 584);
	assert_int_equal(c.col[IDLE_IDLE], 3699176);
	assert_int_equal(c.col[IDLE_IOWAIT], 23);
	assert_int_equal(c.col[IDLE_SOFTIRQ], 35);
	assert_int_equal(c.col[IDLE_STEAL], 0);
	idle_cpu_delta(&zero, &c, &busy, &total);
	assert_int_equal(busy, 4705 + 356 + 584 + 35);
	assert_int_equal(total, 4705 + 356 + 584 + 3699176 + 23 + 35);
}

/* Lines that are not what they should be. */
static void test_parse_odd(void **state)
{
	struct idle_cpu c;
	const char *s;

	(void)state;
	/* per-CPU lines first, no trailing newline, tabs, CRLF */
	s = "cpu0 1 2 3 4\ncpu1 5 6 7 8\ncpu\t10 20 30 40";
	assert_int_equal(idle_parse_stat(s, strlen(s), &c), 0);
	assert_int_equal(c.col[IDLE_USER], 10);
	assert_int_equal(c.col[IDLE_IDLE], 40);
	assert_int_equal(c.col[IDLE_IOWAIT], 0);
	s = "cpu  1 2 3 4 5\r\n";
	assert_int_equal(idle_parse_stat(s, strlen(s), &c), 0);
	assert_int_equal(c.col[IDLE_IOWAIT], 5);
	/* a 2.4 kernel's four columns are enough, three are not */
	s = "cpu  1 2 3 4\n";
	assert_int_equal(idle_parse_stat(s, strlen(s), &c), 0);
	s = "cpu  1 2 3\n";
	assert_int_equal(idle_parse_stat(s, strlen(s), &c), -EINVAL);
	/* more columns than known: the extra ones are ignored */
	s = "cpu  1 2 3 4 5 6 7 8 9 10 11 12\n";
	assert_int_equal(idle_parse_stat(s, strlen(s), &c), 0);
	assert_int_equal(c.col[IDLE_STEAL], 8);
	/* a word that is no number ends the line */
	s = "cpu  1 2 3 4 x 6\n";
	assert_int_equal(idle_parse_stat(s, strlen(s), &c), 0);
	assert_int_equal(c.col[IDLE_IOWAIT], 0);
	s = "cpu  1 2 -3 4\n";
	assert_int_equal(idle_parse_stat(s, strlen(s), &c), -EINVAL);
	s = "cpu  1 2 3x 4\n";
	assert_int_equal(idle_parse_stat(s, strlen(s), &c), -EINVAL);
	/* beyond 64 bits */
	s = "cpu  1 2 3 18446744073709551616\n";
	assert_int_equal(idle_parse_stat(s, strlen(s), &c), -EINVAL);
	s = "cpu  1 2 3 18446744073709551615\n";
	assert_int_equal(idle_parse_stat(s, strlen(s), &c), 0);
	assert_true(c.col[IDLE_IDLE] == UINT64_MAX);
	/* no aggregate line; nothing; "cpus" is not "cpu" */
	s = "cpu0 1 2 3 4\nintr 5\n";
	assert_int_equal(idle_parse_stat(s, strlen(s), &c), -EINVAL);
	assert_int_equal(idle_parse_stat("", 0, &c), -EINVAL);
	s = "cpus 1 2 3 4\n";
	assert_int_equal(idle_parse_stat(s, strlen(s), &c), -EINVAL);
	s = "cpu\n1 2 3 4\n";
	assert_int_equal(idle_parse_stat(s, strlen(s), &c), -EINVAL);
	/* len bounds the text: a cut line is parsed as far as it goes */
	s = "cpu  1 2 3 4 5";
	assert_int_equal(idle_parse_stat(s, 11, &c), -EINVAL);
	assert_int_equal(idle_parse_stat(s, 12, &c), 0);
}

/* A column that goes back (iowait on tickless kernels, a wrapped
 * counter) adds nothing, and makes no interval look busy. */
static void test_counter_back(void **state)
{
	struct idle_cpu a = { { 100, 0, 50, 10000, 500, 0, 0, 0 } };
	struct idle_cpu b = { { 102, 0, 50, 10196, 498, 0, 0, 0 } };
	struct idle_cpu w = { { 5, 0, 50, 10400, 498, 0, 0, 0 } };
	uint64_t busy, total;
	struct idle s = { 0 };
	struct idle_signal sig;

	(void)state;
	idle_cpu_delta(&a, &b, &busy, &total);
	assert_int_equal(busy, 2);
	assert_int_equal(total, 198);
	/* user wrapped: its delta is lost, not 2^64 - 97 */
	idle_cpu_delta(&b, &w, &busy, &total);
	assert_int_equal(busy, 0);
	assert_int_equal(total, 204);
	idle_sample(&s, &P, 0, &a, false, &sig);
	idle_sample(&s, &P, 1 * S, &b, false, &sig);
	assert_true(s.in_episode);
	assert_false(idle_sample(&s, &P, 2 * S, &w, false, &sig));
	assert_true(s.in_episode);
	assert_true(s.last_cpu == 0.0);
}

/* This machine's /proc/stat parses, and a missing file is an error. */
static void test_read(void **state)
{
	struct idle_cpu c;

	(void)state;
	assert_int_equal(idle_read_stat("/proc/stat", &c), 0);
	assert_true(c.col[IDLE_IDLE] > 0);
	assert_int_equal(idle_read_stat("/nonexistent/stat", &c), -ENOENT);
}

/* The status lines say the state and the signals. */
static void test_status(void **state)
{
	struct idle s = { 0 };
	struct node n = { { { 0 } } };
	struct idle_signal sig;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	f = open_memstream(&buf, &len);
	idle_status(&s, &P, 0, 0, f);
	idle_sample(&s, &P, 0, &n.c, false, &sig);
	idle_sample(&s, &P, 4 * S, run(&n, 4, 0.01), false, &sig);
	idle_status(&s, &P, 5 * S, 1000 * S, f);
	idle_sample(&s, &P, 5 * S, run(&n, 1, 0.5), false, &sig);
	idle_status(&s, &P, 5 * S, 1000 * S, f);
	idle_sample(&s, &P, 6 * S, run(&n, 1, 0.0), true, &sig);
	idle_status(&s, &P, 6 * S, 1000 * S, f);
	fclose(f);
	assert_non_null(strstr(buf,
		"node_idle: unknown (fewer than two samples yet)\n"
		"node_idle_signals: 0\nnode_idle_last_signal: none\n"));
	assert_non_null(strstr(buf,
		"node_idle: idle since 1970-01-01T00:16:40.000000Z (5.0 s,"
		" cpu 1.00%)\nnode_idle_signals: 1\n"
		"node_idle_last_signal: 1970-01-01T00:16:44.000000Z (idle"
		" since 1970-01-01T00:16:40.000000Z)\n"));
	assert_non_null(strstr(buf, "node_idle: no (cpu 50.0% over the last"
				    " sample interval, idle.cpu_below is 5.0%)\n"));
	assert_non_null(strstr(buf, "node_idle: no (a job runs)\n"));
	free(buf);
}

/* What counts as a job running: a registered job not ended, a live
 * process with a job id, run, pipeline or task; not one that exited,
 * nor one without a job. */
static void test_job_runs(void **state)
{
	struct proc_table *pt;
	struct jobs *jobs;
	struct jt_jobinfo *ji;
	struct jt_proc *p, *q;
	int created;

	(void)state;
	assert_int_equal(proc_table_new(&pt), 0);
	assert_int_equal(jobs_new(&jobs), 0);
	assert_false(idle_job_runs(pt, jobs));
	p = proc_table_get(pt, 100, 1, &created);
	assert_false(idle_job_runs(pt, jobs));
	strcpy(p->job.task, "align");
	assert_true(idle_job_runs(pt, jobs));
	p->job.task[0] = '\0';
	strcpy(p->job.id, "42");
	assert_true(idle_job_runs(pt, jobs));
	p->state |= JT_PS_EXCLUDED;
	assert_true(idle_job_runs(pt, jobs));
	p->state |= JT_PS_EXITED;
	p->end_ns = 5;
	assert_false(idle_job_runs(pt, jobs));
	q = proc_table_get(pt, 101, 1, &created);
	strcpy(q->job.run, "run-1");
	assert_true(idle_job_runs(pt, jobs));
	proc_table_remove(pt, q);
	assert_false(idle_job_runs(pt, jobs));
	/* registered, no process yet: the node is the job's */
	ji = jobs_get(jobs, "slurm", "7", true);
	ji->start_ns = 1;
	assert_true(idle_job_runs(pt, jobs));
	ji->end_ns = 2;
	assert_false(idle_job_runs(pt, jobs));
	jobs_free(jobs);
	proc_table_free(pt);
}

/* The node_idle record: its evidence, the cost at the node's price, null
 * cost and currency without one; no job, process or tool. */
static void test_record(void **state)
{
	struct jt_host h = { .name = "node1",
			     .boot_id = "5f0c7e8a-3c1d-4b9e-9f2a-0123456789ab",
			     .boot_to_real_ns = 1795500000ll * 1000000000ll };
	struct idle_signal sig = { .since_ns = 10 * S, .now_ns = 13 * S + 5000,
				   .idle_s = 3.000005, .cpu = 0.0125 };
	struct cost_price p = { .per_hour = 3.6, .currency = "EUR" };
	struct jbuf b;
	const char *j;

	(void)state;
	jbuf_init(&b);
	record_node_idle(&b, &h, &sig, &p, "id-1");
	j = jbuf_str(&b);
	assert_true(json_valid(j));
	assert_non_null(strstr(j, "\"type\":\"signal\""));
	assert_non_null(strstr(j, "\"kind\":\"node_idle\""));
	assert_non_null(strstr(j, "\"time\":\"2026-11-24T06:00:13.000005Z\""));
	assert_non_null(strstr(j, "\"job\":null"));
	assert_non_null(strstr(j, "\"pid\":null"));
	/* 3.6 x 3.000005 / 3600, money's 12 decimals */
	assert_non_null(strstr(j, "\"evidence\":{"));
	assert_non_null(strstr(j, "\"idle_s\":3.000005"));
	assert_non_null(strstr(j, "\"cpu\":0.0125"));
	assert_non_null(strstr(j, "\"cost\":0.003000005,"));
	assert_non_null(strstr(j, "\"currency\":\"EUR\""));
	p.per_hour = -1;
	jbuf_reset(&b);
	record_node_idle(&b, &h, &sig, &p, "id-1");
	j = jbuf_str(&b);
	assert_true(json_valid(j));
	assert_non_null(strstr(j, "\"cost\":null,\"currency\":null"));
	jbuf_free(&b);
	assert_true(cost_node_time(NULL, 3) < 0);
	p.per_hour = 0;
	assert_true(cost_node_time(&p, 3) == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_episode_start),
		cmocka_unit_test(test_one_signal_per_episode),
		cmocka_unit_test(test_cpu_spike_resets),
		cmocka_unit_test(test_job_resets),
		cmocka_unit_test(test_unreadable_and_short),
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_parse_odd),
		cmocka_unit_test(test_counter_back),
		cmocka_unit_test(test_read),
		cmocka_unit_test(test_status),
		cmocka_unit_test(test_job_runs),
		cmocka_unit_test(test_record),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
