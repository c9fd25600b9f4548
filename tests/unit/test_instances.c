// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_instances.c - `jobtrace rightsize --format instances`
 * (agent/query/instances.c) on records written here, priced by the table
 * of tests/fuzz/corpus/offer/ec2-offer-families.csv with the spot prices
 * of tests/fuzz/corpus/spot/spot-history.json (imported as `jobtrace
 * prices import` and `import-spot` do).  Every figure below is worked out
 * by hand from those files and these records.
 *
 * Hosts (their `host` records' cloud identity): n1 an on-demand
 * m5.xlarge in us-east-1 (x86_64, 0.192/h); n2 a spot r6g.large in
 * eu-west-1 (arm64; the table has no spot price for it); n3 no cloud
 * identity.  Runs r1..r3 start at T0, T0 + 1 day, T0 + 2 days, so the
 * period is 3 whole days and a month is 10 times the hours seen.
 *
 *  align: on n1, job A<k> of compute environment ce-x86, 1 hour, 1 core,
 *    3 GiB -> needs 1 vCPU, 3700 MiB (3.613 GiB per vCPU: general
 *    purpose); x86_64 only.  us-east-1: c5.large 0.085 on-demand (m5.large
 *    0.096 and r5.large 0.126 fit too; c6g/m6g are arm64), c5.large spot
 *    0.0329 in us-east-1b; eu-west-1: c5.large 0.096, spot 0.0377
 *    (eu-west-1a).  arm64 not proposed: m6g.medium 0.0385 in us-east-1.
 *    Now: 3 h x 10 x 0.192 = 5.76 a month; c5.large 30 h x 0.085 = 2.55,
 *    saving 3.21; spot 30 x 0.0329 = 0.987, saving 4.773.
 *  sort: on n2, 2 cores, 10 GiB -> 2 vCPUs, 12300 MiB (6.006 GiB per
 *    vCPU: memory optimized); ran on arm64 only, so arm64: r6g.large in
 *    both regions (0.1008, 0.1128); cost now not known (no spot price).
 *  qc: on n3 (no identity), 1 core, 100 MiB: c5.large... no: c6g.medium
 *    is arm64, so c5.large at 0.085 in us-east-1; cost now not known.
 *  huge: on n1, 1 core, 3000 GiB: no type fits anywhere.
 *  few: two runs only: no recommendation.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "instances.h"
#include "json.h"
#include "log.h"
#include "prices_import.h"
#include "qcmd.h"
#include "spot_import.h"
#include "store.h"
#include "test_files.h"

#define MIB (1ULL << 20)
#define GIB (1ULL << 30)
#define T0 1772359200.0		/* 2026-03-01T10:00:00Z */
#define DAY 86400.0

struct fixture {
	char dir[64];
	char db[128];
	char prices[128];
};

static char err[1024];

/* A host record of host at T0 - 60 s with its cloud identity (NULL: none). */
static void put_host(struct store *s, const char *host, const char *type,
		     const char *region, const char *lifecycle)
{
	char t[32];

	json_format_time((uint64_t)((T0 - 60) * 1e9), t, sizeof(t));
	if (!type) {
		test_put_json(s, "{\"type\":\"host\",\"schema\":1,\"host\":\"%s\","
		    "\"id\":\"h-%s\",\"time\":\"%s\",\"phase\":\"start\","
		    "\"cloud\":null}", host, host, t);
		return;
	}
	test_put_json(s, "{\"type\":\"host\",\"schema\":1,\"host\":\"%s\","
	    "\"id\":\"h-%s\",\"time\":\"%s\",\"phase\":\"start\",\"cloud\":"
	    "{\"provider\":\"aws\",\"instance_id\":\"i-0abc\",\"instance_type\":"
	    "\"%s\",\"region\":\"%s\",\"zone\":\"%sa\",\"lifecycle\":\"%s\"}}",
	    host, host, t, type, region, region, lifecycle);
}

/* A job start record of id (in compute environment ce, or none). */
static void put_job(struct store *s, const char *host, const char *id,
		    const char *run, const char *ce, double t0)
{
	char t[32], c[64];

	json_format_time((uint64_t)(t0 * 1e9), t, sizeof(t));
	test_put_json(s, "{\"type\":\"job\",\"schema\":1,\"host\":\"%s\","
	    "\"id\":\"start-%s\",\"phase\":\"start\",\"job\":{\"scheduler\":"
	    "\"aws_batch\",\"id\":\"%s\",\"step\":null,\"run\":\"%s\","
	    "\"pipeline\":\"p\",\"task\":null,\"user\":\"u\",\"account\":null,"
	    "\"cost_center\":null,\"compute_environment\":%s},\"uid\":1000,"
	    "\"start_time\":\"%s\"}", host, id, id, run,
	    test_jstr(ce, c, sizeof(c)), t);
}

/* A process of task on host: [t0, t0 + wall], cpu seconds, rss. */
static void put_proc(struct store *s, const char *host, const char *job,
		     const char *run, const char *task, double t0,
		     double wall, double cpu, uint64_t rss)
{
	static int pid = 7000;
	char st[32], en[32];

	json_format_time((uint64_t)(t0 * 1e9), st, sizeof(st));
	json_format_time((uint64_t)((t0 + wall) * 1e9), en, sizeof(en));
	pid++;
	test_put_json(s, "{\"type\":\"process\",\"schema\":1,\"host\":\"%s\","
	    "\"id\":\"p%d\",\"pid\":%d,\"ppid\":1,\"parent_id\":null,"
	    "\"start_time\":\"%s\",\"end_time\":\"%s\",\"exe\":\"/bin/x\","
	    "\"comm\":\"x\",\"argv\":[\"x\"],\"uid\":1000,"
	    "\"job\":{\"scheduler\":\"aws_batch\",\"id\":\"%s\",\"step\":null,"
	    "\"run\":\"%s\",\"pipeline\":\"p\",\"task\":\"%s\",\"user\":\"u\","
	    "\"account\":null,\"cost_center\":null},"
	    "\"tool\":{\"name\":\"x\",\"category\":null},"
	    "\"exit\":{\"code\":0,\"signal\":null,\"oom_killed\":false},"
	    "\"cpu\":{\"user_s\":%.6f,\"sys_s\":0},"
	    "\"mem\":{\"peak_rss_bytes\":%llu},"
	    "\"io\":{\"read_bytes\":0,\"write_bytes\":0},"
	    "\"net\":{\"rx_bytes\":0,\"tx_bytes\":0}}",
	    host, pid, pid, st, en, job, run, task, cpu,
	    (unsigned long long)rss);
}

/* The price table of the fixtures, at f->prices. */
static void make_prices(struct fixture *f)
{
	struct prices_table t = { 0 };
	struct prices_set set = { 0 };
	struct spot_set sp = { 0 };
	struct spot_out o;
	size_t len, jlen;
	char *csv = test_read_src("tests/fuzz/corpus/offer",
				  "ec2-offer-families.csv", &len);
	char *json = test_read_src("tests/fuzz/corpus/spot",
				   "spot-history.json", &jlen);

	assert_int_equal(prices_import_buf(&t, "f.csv", csv, len, NULL, 0, err,
					   sizeof(err)), 0);
	assert_int_equal(prices_import_save(&t, f->prices, err, sizeof(err)), 0);
	assert_int_equal(prices_load(f->prices, &set, err, sizeof(err)), 0);
	assert_int_equal(spot_import_buf(&sp, "s.json", json, jlen, err,
					 sizeof(err)), 0);
	assert_int_equal(spot_import_merge(&sp, &set), 0);
	o = (struct spot_out){ .table = f->prices, .spot_file = "s.json",
			       .set = &set, .spot = &sp };
	assert_int_equal(prices_import_save_with(f->prices, spot_import_write,
						 &o, err, sizeof(err)), 0);
	prices_import_free(&t);
	prices_set_free(&set);
	spot_import_free(&sp);
	free(csv);
	free(json);
}

/* The store every test reads, and the price table. */
static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct store *s = NULL;
	char job[16], run[16];

	assert_non_null(f);
	log_init("test_instances", 0, LOG_LVL_ERROR);
	snprintf(f->dir, sizeof(f->dir), "/tmp/jt_instances_XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->db, sizeof(f->db), "%s/jobtrace.db", f->dir);
	snprintf(f->prices, sizeof(f->prices), "%s/prices.tsv", f->dir);
	make_prices(f);
	assert_int_equal(store_open(f->db, false, &s), 0);
	put_host(s, "n1", "m5.xlarge", "us-east-1", "on-demand");
	put_host(s, "n2", "r6g.large", "eu-west-1", "spot");
	put_host(s, "n3", NULL, NULL, NULL);
	for (int k = 0; k < 3; k++) {
		double t = T0 + k * DAY;

		snprintf(run, sizeof(run), "r%d", k + 1);
		snprintf(job, sizeof(job), "A%d", k + 1);
		put_job(s, "n1", job, run, "ce-x86", t);
		put_proc(s, "n1", job, run, "align", t, 3600, 3600, 3 * GIB);
		snprintf(job, sizeof(job), "S%d", k + 1);
		put_job(s, "n2", job, run, NULL, t);
		put_proc(s, "n2", job, run, "sort", t, 600, 1200, 10 * GIB);
		snprintf(job, sizeof(job), "Q%d", k + 1);
		put_proc(s, "n3", job, run, "qc", t, 60, 60, 100 * MIB);
		snprintf(job, sizeof(job), "H%d", k + 1);
		put_job(s, "n1", job, run, "ce-x86", t);
		put_proc(s, "n1", job, run, "huge", t, 60, 60, 3000 * GIB);
		if (k < 2) {
			snprintf(job, sizeof(job), "F%d", k + 1);
			put_proc(s, "n1", job, run, "few", t, 60, 60, GIB);
		}
	}
	assert_true(store_flush(s) > 0);
	store_close(s);
	*state = f;
	return 0;
}

/* Remove the store and the table. */
static int teardown(void **state)
{
	struct fixture *f = *state;

	unlink(f->prices);
	test_remove_store(f->db, f->dir);
	free(f);
	return 0;
}

/* rightsize --pipeline p in format with prices (NULL: none). */
static char *run(const struct fixture *f, const char *prices,
		 const char *format, int want)
{
	struct report_query q = { .pipeline = "p", .prices_file = prices };
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	assert_non_null(out);
	assert_int_equal(qcmd_run_path(qcmd_find("rightsize"), f->db, &q,
					format, out), want);
	fclose(out);
	return buf;
}

/* The families' thresholds and the period. */
static void test_family_period(void **state)
{
	(void)state;
	assert_string_equal(instances_family(0.5), "compute-optimized");
	assert_string_equal(instances_family(2.8), "compute-optimized");
	assert_string_equal(instances_family(2.9), "general-purpose");
	assert_string_equal(instances_family(4), "general-purpose");
	assert_string_equal(instances_family(5.6), "general-purpose");
	assert_string_equal(instances_family(5.7), "memory-optimized");
	assert_string_equal(instances_family(64), "memory-optimized");
	/* --since: to now; else whole days, at least one */
	assert_float_equal(instances_period(1000, 8200, 0, 0), 7200, 0);
	assert_float_equal(instances_period(0, 0, 100, 160), DAY, 0);
	assert_float_equal(instances_period(0, 0, 100, 100 + 2 * DAY + 1),
			   3 * DAY, 0);
	assert_float_equal(instances_period(0, 0, 100, 100), DAY, 0);
}

/* The text answer, figure by figure (see the top of this file). */
static void test_text(void **state)
{
	struct fixture *f = *state;
	char *t = run(f, f->prices, "instances", 0);

	test_has_line(t, "task align: 3 runs, 3 instances, 3 instance-hours (30 a"
		 " month)");
	test_has_line(t, "  ran on: m5.xlarge in us-east-1 (on-demand), 3 h");
	test_has_line(t, "  cost now: 5.7600 USD a month");
	test_has_line(t, "  needs: 1 vCPU, 3.613 GiB, 0 GPUs (rightsize's"
		 " recommendation)");
	test_has_line(t, "  family: general-purpose (3.61 GiB per vCPU)");
	test_has_line(t, "  not proposed: m6g.medium in us-east-1 fits at 0.0385"
		 " USD/h (arm64: are all its tools built for it?)");
	test_has_line(t, "  us-east-1      on-demand c5.large 0.085 USD/h, spot"
		 " c5.large 0.0329 USD/h in us-east-1b");
	test_has_line(t, "  eu-west-1      on-demand c5.large 0.096 USD/h, spot"
		 " c5.large 0.0377 USD/h in eu-west-1a");
	test_has_line(t, "  saving a month in us-east-1: on-demand 3.2100 USD,"
		 " spot 4.7730 USD");
	/* sort ran on arm64 only: arm64 types; its spot price is unknown */
	test_has_line(t, "  ran on: r6g.large in eu-west-1 (spot), 0.5 h");
	test_has_line(t, "  cost now: not known: the table has no spot price for"
		 " r6g.large in eu-west-1");
	test_has_line(t, "  family: memory-optimized (6.01 GiB per vCPU)");
	test_has_line(t, "  architecture: arm64 (it ran on arm64 only)");
	test_has_line(t, "  us-east-1      on-demand r6g.large 0.1008 USD/h, spot"
		 " - -");
	test_has_line(t, "  eu-west-1      on-demand r6g.large 0.1128 USD/h, spot"
		 " - -");
	test_has_line(t, "  saving a month in eu-west-1: on-demand -, spot -");
	/* qc: no identity */
	test_has_line(t, "  ran on: no known type in - (-), 0.05 h");
	test_has_line(t, "  cost now: not known: some instances ran on a host of"
		 " no known instance type (no cloud identity)");
	test_has_line(t, "  saving a month: not known (no known region)");
	/* huge fits nothing; few has too few runs */
	test_has_line(t, "  us-east-1      no type in the table fits");
	test_has_line(t, "  no recommendation: 2 runs, at least 3 needed");
	/* the Batch compute environment: align's and huge's tasks */
	test_has_line(t, "AWS Batch compute environment ce-x86: instanceTypes"
		 " c5.large (some of its tasks fit no type or lack a"
		 " recommendation)");
	free(t);
}

/* The JSON answer says the same. */
static void test_json(void **state)
{
	struct fixture *f = *state;
	char *t = run(f, f->prices, "instances-json", 0);

	assert_non_null(strstr(t, "\"task\":\"align\",\"runs\":3,\"instances\""
			       ":3,\"hours\":3,\"hours_month\":30,"));
	assert_non_null(strstr(t, "\"cost_month\":5.76,"));
	assert_non_null(strstr(t, "\"needs\":{\"vcpus\":1,\"mem_bytes\":"
			       "3879731200,\"gpus\":0}"));
	assert_non_null(strstr(t, "\"region\":\"us-east-1\",\"on_demand\":"
			       "{\"type\":\"c5.large\",\"per_hour\":0.085,"
			       "\"vcpus\":2,\"memory_gib\":4,\"family\":"
			       "\"compute-optimized\",\"arch\":\"x86_64\"},"
			       "\"spot\":{\"type\":\"c5.large\",\"per_hour\":"
			       "0.0329,"));
	assert_non_null(strstr(t, "\"saving_month_on_demand\":3.21,"
			       "\"saving_month_spot\":4.773"));
	assert_non_null(strstr(t, "\"batch\":[{\"compute_environment\":"
			       "\"ce-x86\",\"instanceTypes\":[\"c5.large\"],"
			       "\"tasks_without_a_type\":1}]"));
	free(t);
}

/* No table, a broken one: a message naming cost.prices_file. */
static void test_no_table(void **state)
{
	struct fixture *f = *state;
	char bad[160], *t;
	FILE *b;

	t = run(f, NULL, "instances", -ENOENT);
	assert_string_equal(t, "");
	free(t);
	snprintf(bad, sizeof(bad), "%s/bad.tsv", f->dir);
	b = fopen(bad, "w");
	assert_non_null(b);
	fputs("us-east-1\tm5.large\t0.096\t-\tUSD\t2\t8\t0\t-\tg\tamd64\n", b);
	fclose(b);
	t = run(f, bad, "instances-json", -EINVAL);
	assert_string_equal(t, "");
	free(t);
	unlink(bad);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_family_period),
		cmocka_unit_test_setup_teardown(test_text, setup, teardown),
		cmocka_unit_test_setup_teardown(test_json, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_table, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
