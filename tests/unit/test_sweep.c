// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_sweep.c - `jobtrace sweep` (agent/query/sweep.c) on a store of
 * chosen records: idle time and its cost per node, node_idle signals,
 * the CPU of each node over the period (a process clipped to it), stuck
 * jobs as the union of their stalls (clipped, an open stall up to now),
 * and the totals per currency.  Every expected figure is worked out by
 * hand in the comments from the records written here.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "json.h"
#include "json_check.h"
#include "log.h"
#include "store.h"
#include "sweep.h"
#include "test_files.h"

#define T0 1772359200.0		/* 2026-03-01T10:00:00Z */
#define NOW (T0 + 7200)
#define EPS 1e-6

static unsigned seq;		/* record ids */

/* T0 + off as a JSON string value. */
static const char *when(double off, char *buf, size_t len)
{
	char t[40];

	json_format_time((uint64_t)((T0 + off) * 1e9 + 0.5), t, sizeof(t));
	snprintf(buf, len, "\"%s\"", t);
	return buf;
}

/* A host record at T0 + off; per_hour NAN: no price. */
static void put_host(struct store *s, const char *host, const char *phase,
		     double off, double per_hour, const char *cur, int cpus,
		     const char *type)
{
	char t[48], price[256], cloud[256], ty[64];

	if (isnan(per_hour))
		snprintf(price, sizeof(price), "{\"per_hour\":null,"
			 "\"currency\":null,\"node_cpus\":%d,"
			 "\"note\":\"no price\"}", cpus);
	else
		snprintf(price, sizeof(price), "{\"per_hour\":%.17g,"
			 "\"currency\":\"%s\",\"node_cpus\":%d,"
			 "\"note\":null}", per_hour, cur, cpus);
	snprintf(cloud, sizeof(cloud), "{\"provider\":\"aws\","
		 "\"instance_type\":%s,\"lifecycle\":\"on-demand\"}",
		 test_jstr(type, ty, sizeof(ty)));
	test_put_json(s, "{\"type\":\"host\",\"schema\":1,\"host\":\"%s\","
	    "\"id\":\"host-%u\",\"time\":%s,\"phase\":\"%s\",\"drops\":{},"
	    "\"cloud\":%s,\"price\":%s}", host, ++seq,
	    when(off, t, sizeof(t)), phase, type ? cloud : "null", price);
}

/* A job's start record, and its end record unless end is NAN. */
static void put_job(struct store *s, const char *host, const char *id,
		    double start, double end, double amount, const char *cur)
{
	char st[48], en[48], cost[256];

	for (int phase = 0; phase < 1 + !isnan(end); phase++) {
		snprintf(cost, sizeof(cost), phase ? "{\"amount\":%.17g,"
			 "\"currency\":\"%s\",\"note\":null}" : "null",
			 amount, cur);
		test_put_json(s, "{\"type\":\"job\",\"schema\":1,\"host\":\"%s\","
		    "\"id\":\"job-%u\",\"phase\":\"%s\",\"job\":"
		    "{\"scheduler\":\"slurm\",\"id\":\"%s\"},\"uid\":0,"
		    "\"start_time\":%s,\"end_time\":%s,\"allocation\":"
		    "{\"cpus\":null},\"cost\":%s}", host, ++seq,
		    phase ? "end" : "start", id, when(start, st, sizeof(st)),
		    phase ? when(end, en, sizeof(en)) : "null", cost);
	}
}

/* A process record of job on host from T0 + a to T0 + b. */
static void put_proc(struct store *s, const char *host, const char *job,
		     double a, double b, double user, double sys)
{
	char st[48], en[48];
	unsigned n = ++seq;

	test_put_json(s, "{\"type\":\"process\",\"schema\":1,\"host\":\"%s\","
	    "\"id\":\"proc-%u\",\"pid\":%u,\"ppid\":1,\"start_time\":%s,"
	    "\"exe\":\"/bin/x\",\"comm\":\"x\",\"argv\":[\"x\"],\"uid\":0,"
	    "\"job\":{\"scheduler\":\"slurm\",\"id\":\"%s\"},\"tool\":"
	    "{\"name\":\"x\"},\"end_time\":%s,\"exit\":{\"code\":0},"
	    "\"cpu\":{\"user_s\":%.17g,\"sys_s\":%.17g}}", host, n, 1000 + n,
	    when(a, st, sizeof(st)), job, when(b, en, sizeof(en)), user, sys);
}

/* A stall of pid in job (scheduler sch) on host: its start record
 * (last progress T0 + a, written 60 s later) and its end record at
 * T0 + b unless b is NAN. */
static void put_stall(struct store *s, const char *host, const char *job,
		      const char *sch, int pid, double a, double b)
{
	char t[48], lp[48];

	for (int end = 0; end < 1 + !isnan(b); end++)
		test_put_json(s, "{\"type\":\"signal\",\"schema\":1,\"host\":\"%s\","
		    "\"id\":\"sig-%u\",\"kind\":\"stall\",\"time\":%s,"
		    "\"job\":{\"scheduler\":\"%s\",\"id\":\"%s\"},"
		    "\"pid\":%d,\"evidence\":{\"phase\":\"%s\","
		    "\"stalled_s\":%g,\"last_progress\":%s}}", host, ++seq,
		    when(end ? b : a + 60, t, sizeof(t)), sch, job, pid,
		    end ? "end" : "start", end ? b - a : 60,
		    when(a, lp, sizeof(lp)));
}

/* A node_idle signal on host at T0 + off of idle_s seconds. */
static void put_node_idle(struct store *s, const char *host, double off,
			  double idle_s)
{
	char t[48];

	test_put_json(s, "{\"type\":\"signal\",\"schema\":1,\"host\":\"%s\","
	    "\"id\":\"sig-%u\",\"kind\":\"node_idle\",\"time\":%s,"
	    "\"job\":null,\"pid\":null,\"evidence\":{\"idle_s\":%g,"
	    "\"cpu\":0.01,\"cost\":null}}", host, ++seq,
	    when(off, t, sizeof(t)), idle_s);
}

/*
 * The fleet, swept over [T0, T0 + 7200]:
 *  n1: up from T0 - 1000 (no stop: 7200 s in the period), 3.6 USD/h,
 *      2 CPUs, m5.large.  Job j1 T0+1000..T0+3000, job j3 from T0+6000
 *      (running): idle 7200 - 2000 - 1200 = 4000 s, 3.6 x 4000 / 3600
 *      = 4.0 USD.  j1's process: 144 s of CPU inside the period: CPU
 *      144 / (7200 x 2) = 0.01, low.  One node_idle signal of 1800 s (and
 *      one before the period, not counted).  j1's stalls: pid 500 from
 *      T0+1500 to T0+2500, pid 501 from T0+2000 to T0+2800: union
 *      1500..2800 = 1300 s (not the sum, 1800), 1.3 USD.  j3's stall from
 *      T0+6600 without an end: to now, 600 s, 0.6 USD, still stalled.
 *  n2: up T0-500 to T0+3600 (3600 s in the period), 7.2 EUR/h, 4 CPUs.
 *      Job j2 T0..T0+3600: idle 0.  Its process ran T0-1800..T0+3600 with
 *      10800 s of CPU: 3600 / 5400 of it in the period, 7200 s: CPU
 *      7200 / (3600 x 4) = 0.5, not low.  Its stalls (aws-batch): one from
 *      T0-300 to T0+60 (clipped: 60 s), one T0+100..T0+700 (600 s): 660 s,
 *      7.2 x 660 / 3600 = 1.32 EUR.
 *  n3: up from T0 without a price, 2 CPUs, one process of no job whose
 *      user_s is text (junk: 0) and sys_s 72: idle 7200 s unpriced, CPU
 *      72 / (7200 x 2) = 0.005 (low).
 * Saved: USD 4.0 + 1.3 + 0.6 = 5.9 (idle 4.0, stuck 1.9); EUR 1.32.
 */
static struct store *fleet(void)
{
	struct store *s = NULL;

	assert_int_equal(store_open("", false, &s), 0);
	put_host(s, "n1", "start", -1000, 3.6, "USD", 2, "m5.large");
	put_job(s, "n1", "j1", 1000, 3000, 2, "USD");
	put_job(s, "n1", "j3", 6000, NAN, 0, "USD");
	put_proc(s, "n1", "j1", 1000, 3000, 100, 44);
	put_node_idle(s, "n1", 4800, 1800);
	put_node_idle(s, "n1", -100, 1800);
	put_stall(s, "n1", "j1", "slurm", 500, 1500, 2500);
	put_stall(s, "n1", "j1", "slurm", 501, 2000, 2800);
	put_stall(s, "n1", "j3", "slurm", 600, 6600, NAN);
	put_host(s, "n2", "start", -500, 7.2, "EUR", 4, "c5.xlarge");
	put_host(s, "n2", "stop", 3600, 7.2, "EUR", 4, "c5.xlarge");
	put_job(s, "n2", "j2", 0, 3600, 7.2, "EUR");
	put_proc(s, "n2", "j2", -1800, 3600, 10000, 800);
	put_stall(s, "n2", "j2", "aws-batch", 700, -300, 60);
	put_stall(s, "n2", "j2", "aws-batch", 701, 100, 700);
	put_host(s, "n3", "start", 0, NAN, NULL, 2, NULL);
	test_put_json(s, "{\"type\":\"process\",\"schema\":1,\"host\":\"n3\","
		      "\"id\":\"proc-junk\",\"pid\":9,\"ppid\":1,\"start_time\":"
		      "\"2026-03-01T10:00:00Z\",\"exe\":\"/bin/y\",\"comm\":\"y\","
		      "\"argv\":[\"y\"],\"uid\":0,\"job\":null,\"tool\":{\"name\":"
		      "\"y\"},\"end_time\":\"2026-03-01T10:01:40Z\",\"exit\":"
		      "{\"code\":0},\"cpu\":{\"user_s\":\"x\",\"sys_s\":72}}");
	assert_true(store_flush(s) >= 0);
	return s;
}

/* The element of v[0..n) (each size bytes) whose string at off is key. */
static const void *find_at(const void *v, size_t n, size_t size, size_t off,
			   const char *key)
{
	for (size_t i = 0; i < n; i++) {
		const char *e = (const char *)v + i * size;

		if (!strcmp(*(char *const *)(e + off), key))
			return e;
	}
	fail_msg("no %s", key);
	return NULL;
}

/* The element of array v (n long) whose member field is key. */
#define FIND(v, n, field, key) \
	((__typeof__(&(v)[0]))find_at((v), (n), sizeof(*(v)), \
				      offsetof(__typeof__(*(v)), field), key))
#define node(r, h) FIND((r)->nodes, (r)->nnodes, host, h)
#define stuck(r, j) FIND((r)->stuck, (r)->nstuck, job, j)
#define total(r, c) FIND((r)->totals, (r)->ntotals, currency, c)

/* Every figure of the fleet above. */
static void test_fleet(void **state)
{
	struct report_query q = { .since = T0 };
	struct sweep_result *r = NULL;
	struct store *s = fleet();
	const struct sweep_node *n;
	const struct sweep_stuck *x;

	(void)state;
	assert_int_equal(sweep_compute(s, "test", &q, NOW, &r), 0);
	assert_int_equal(r->nnodes, 3);
	/* most idle first */
	assert_string_equal(r->nodes[0].host, "n3");
	assert_string_equal(r->nodes[1].host, "n1");
	assert_string_equal(r->nodes[2].host, "n2");

	n = node(r, "n1");
	assert_float_equal(n->up_s, 7200, EPS);
	assert_float_equal(n->idle_s, 4000, EPS);
	assert_float_equal(n->idle_cost, 4.0, EPS);
	assert_float_equal(n->up_cost, 7.2, EPS);
	assert_int_equal(n->idle_signals, 1);
	assert_float_equal(n->signal_idle_s, 1800, EPS);
	assert_float_equal(n->cpu_s, 144, EPS);
	assert_float_equal(n->cpu, 0.01, EPS);
	assert_true(n->low_cpu);
	assert_string_equal(n->instance_type, "m5.large");

	n = node(r, "n2");
	assert_float_equal(n->up_s, 3600, EPS);
	assert_float_equal(n->idle_s, 0, EPS);
	assert_float_equal(n->cpu_s, 7200, 1e-3);
	assert_float_equal(n->cpu, 0.5, EPS);
	assert_false(n->low_cpu);

	n = node(r, "n3");
	assert_float_equal(n->idle_s, 7200, EPS);
	assert_true(n->idle_cost < 0);
	assert_float_equal(n->cpu_s, 72, EPS);
	assert_float_equal(n->cpu, 0.005, EPS);
	assert_true(n->low_cpu);
	assert_null(n->instance_type);

	assert_int_equal(r->nstuck, 3);
	x = stuck(r, "j1");
	assert_int_equal(x->stalls, 2);
	assert_float_equal(x->stuck_s, 1300, EPS);
	assert_float_equal(x->cost, 1.3, EPS);
	assert_false(x->ongoing);
	x = stuck(r, "j3");
	assert_float_equal(x->stuck_s, 600, EPS);
	assert_float_equal(x->cost, 0.6, EPS);
	assert_true(x->ongoing);
	x = stuck(r, "j2");
	assert_float_equal(x->stuck_s, 660, EPS);
	assert_float_equal(x->cost, 1.32, EPS);
	assert_string_equal(x->scheduler, "aws-batch");
	assert_string_equal(x->currency, "EUR");

	assert_int_equal(r->ntotals, 2);
	assert_float_equal(total(r, "USD")->idle, 4.0, EPS);
	assert_float_equal(total(r, "USD")->stuck, 1.9, EPS);
	assert_float_equal(total(r, "USD")->total, 5.9, EPS);
	assert_float_equal(total(r, "EUR")->idle, 0, EPS);
	assert_float_equal(total(r, "EUR")->total, 1.32, EPS);
	sweep_result_free(r);
	store_close(s);
}

/* The answer of the fleet in fmt (malloc'd). */
static char *printed(struct store *s, enum report_format fmt)
{
	struct report_query q = { .since = T0 };
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	assert_non_null(out);
	assert_int_equal(sweep_run_store(s, "test", &q, fmt, NOW, out), 0);
	fclose(out);
	return text;
}

/* Text, JSON and CSV carry the same figures. */
static void test_formats(void **state)
{
	struct store *s = fleet();
	char *t;

	(void)state;
	t = printed(s, REPORT_TEXT);
	assert_non_null(strstr(t, "Could have been saved: 5.90 USD (idle nodes"
			       " 4.00, stuck jobs 1.90)"));
	assert_non_null(strstr(t, "Could have been saved: 1.32 EUR"));
	assert_non_null(strstr(t, "n1 (m5.large): 1.00% of 2 CPUs over 7200 s,"
			       " cost 7.20 USD"));
	assert_non_null(strstr(t, "n2 job j2 on aws-batch: 660 s in 2 stalls,"
			       " cost 1.32 EUR"));
	assert_non_null(strstr(t, "(still stalled)"));
	free(t);
	t = printed(s, REPORT_JSON);
	assert_true(json_valid_n(t, strlen(t)));
	assert_non_null(strstr(t, "\"currency\":\"USD\",\"idle_nodes\":4,"
			       "\"stuck_jobs\":1.9,\"total\":5.9"));
	assert_non_null(strstr(t, "\"host\":\"n3\",\"instance_type\":null"));
	free(t);
	t = printed(s, REPORT_CSV);
	assert_non_null(strstr(t, "what,host,job,currency,seconds,cost,up_s,"
			       "cpu\r\n"));
	assert_non_null(strstr(t, "idle_node_low_cpu,n1,,USD,4000,4,7200,"
			       "0.01\r\n"));
	assert_non_null(strstr(t, "stuck_job,n1,j1,USD,1300,1.3,,\r\n"));
	assert_non_null(strstr(t, "saved,,,EUR,,1.32,,\r\n"));
	free(t);
	store_close(s);
}

/* Only --since; a user's view (host records hidden) is refused; an empty
 * store sweeps to nothing. */
static void test_bad_and_empty(void **state)
{
	struct report_query job = { .job = "j1" };
	struct report_query user = { .since = T0, .uid_only = true };
	struct report_query q = { .since = T0 };
	struct sweep_result *r = NULL;
	struct store *s = NULL;

	(void)state;
	assert_int_equal(store_open("", false, &s), 0);
	assert_int_equal(sweep_compute(s, "test", &job, NOW, &r), -EINVAL);
	assert_int_equal(sweep_compute(s, "test", &user, NOW, &r), -EACCES);
	assert_null(r);
	assert_int_equal(sweep_compute(s, "test", &q, NOW, &r), 0);
	assert_int_equal(r->nnodes + r->nstuck + r->ntotals, 0);
	sweep_result_free(r);
	assert_int_equal(sweep_run_store(s, "test", &q, REPORT_HTML, NOW,
					 stdout), -EINVAL);
	store_close(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fleet),
		cmocka_unit_test(test_formats),
		cmocka_unit_test(test_bad_and_empty),
	};

	log_init("test_sweep", 0, LOG_LVL_ERROR);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
