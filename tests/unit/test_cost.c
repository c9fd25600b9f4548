// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_cost.c - cmocka tests of agent/core/prices.c (the price table) and
 * agent/core/cost.c (node price, job cost, efficiency, flags, time limits),
 * every figure against the formula worked out by hand in the test.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include "test_files.h"

#include "config.h"
#include "cost.h"
#include "jobs.h"
#include "json.h"
#include "prices.h"
#include "record.h"
#include "schema.h"

#define GIB 1073741824ull

static char tmpdir[] = "/tmp/jt-test-cost.XXXXXX";
static char err[1024];

/* Create the scratch folder shared by every test. */
static int setup_dir(void **state)
{
	(void)state;
	return mkdtemp(tmpdir) ? 0 : -1;
}

/* Remove the scratch folder and everything in it. */
static int teardown_dir(void **state)
{
	(void)state;
	return test_remove_tree(tmpdir);
}

/* Assert that a and b differ by less than 1e-9 (relative or absolute). */
static void assert_near(double a, double b)
{
	if (!(fabs(a - b) <= 1e-9 * (fabs(b) > 1 ? fabs(b) : 1)))
		fail_msg("got %.12g, want %.12g", a, b);
}

static const char table[] =
	"# jobtrace prices v1\n"
	"# region\tinstance_type\ton_demand_per_hour\tspot_per_hour\tcurrency\n"
	"\n"
	"us-east-1\tm5.large\t0.096\t-\tUSD\n"
	"us-east-1\tc5.xlarge\t0.17\t0.0685\tUSD\r\n"
	"   # an indented comment\n"
	"eu-west-1\tm5.large\t0.107\t0.04\tEUR\n"
	"eu-west-1\tx1.odd\t-\t0.5\tEUR\n";

/* A row is found; '-' is -1; CRLF lines and comments are fine. */
static void test_prices_found(void **state)
{
	const char *path = test_write_file(tmpdir, "prices.tsv", table);
	double od = 0, spot = 0;
	char cur[8];

	(void)state;
	assert_int_equal(prices_lookup(path, "us-east-1", "m5.large", &od, &spot,
				       cur, err, sizeof(err)), 0);
	assert_near(od, 0.096);
	assert_near(spot, -1);
	assert_string_equal(cur, "USD");
	assert_string_equal(err, "");
	assert_int_equal(prices_lookup(path, "us-east-1", "c5.xlarge", &od,
				       &spot, cur, err, sizeof(err)), 0);
	assert_near(od, 0.17);
	assert_near(spot, 0.0685);
	/* the same type in another region is another row */
	assert_int_equal(prices_lookup(path, "eu-west-1", "m5.large", &od, &spot,
				       cur, err, sizeof(err)), 0);
	assert_near(od, 0.107);
	assert_near(spot, 0.04);
	assert_string_equal(cur, "EUR");
	assert_int_equal(prices_lookup(path, "eu-west-1", "x1.odd", &od, &spot,
				       cur, err, sizeof(err)), 0);
	assert_near(od, -1);
	assert_near(spot, 0.5);
}

/* A (region, type) not in the table, and a missing file. */
static void test_prices_not_found(void **state)
{
	const char *path = test_write_file(tmpdir, "prices2.tsv", table);
	char want[PATH_MAX + 64], p[PATH_MAX];
	double od, spot;
	char cur[8];

	(void)state;
	snprintf(p, sizeof(p), "%s", path);
	assert_int_equal(prices_lookup(p, "us-west-2", "m5.large", &od, &spot,
				       cur, err, sizeof(err)), -ENOENT);
	snprintf(want, sizeof(want), "m5.large in us-west-2 not in %s", p);
	assert_string_equal(err, want);
	assert_int_equal(prices_lookup(p, "us-east-1", "m5", &od, &spot, cur,
				       err, sizeof(err)), -ENOENT);
	snprintf(p, sizeof(p), "%s/none.tsv", tmpdir);
	assert_int_equal(prices_lookup(p, "us-east-1", "m5.large", &od, &spot,
				       cur, err, sizeof(err)), -ENOENT);
	snprintf(want, sizeof(want), "%s: No such file or directory", p);
	assert_string_equal(err, want);
	assert_int_equal(prices_lookup(tmpdir, "us-east-1", "m5.large", &od,
				       &spot, cur, err, sizeof(err)), -EISDIR);
}

/* Expect text to be a bad table at line: -EINVAL and "FILE:LINE: what". */
static void expect_bad(const char *text, unsigned line, const char *what)
{
	const char *path = test_write_file(tmpdir, "bad.tsv", text);
	char prefix[PATH_MAX + 32], p[PATH_MAX];
	double od, spot;
	char cur[8];

	snprintf(p, sizeof(p), "%s", path);
	assert_int_equal(prices_lookup(p, "us-east-1", "m5.large", &od, &spot,
				       cur, err, sizeof(err)), -EINVAL);
	snprintf(prefix, sizeof(prefix), "%s:%u: ", p, line);
	if (strncmp(err, prefix, strlen(prefix)) || !strstr(err, what))
		fail_msg("got \"%s\", want \"%s...%s\"", err, prefix, what);
}

/* Every bad line names its file and line, even after the row looked for. */
static void test_prices_bad(void **state)
{
	(void)state;
	expect_bad("# x\nus-east-1 m5.large 0.096 - USD\n", 2,
		   "1 fields, want 5 separated by tabs");
	expect_bad("us-east-1\tm5.large\t0.096\t-\n", 1, "4 fields");
	expect_bad("us-east-1\tm5.large\t0.096\t-\tUSD\tx\n", 1,
		   "6 fields, want 5 separated by tabs");
	expect_bad("us-east-1\tm5.large\t0.096\t-\tUSD\t2\t8\t0\t-\tg\tx86_64"
		   "\tx\n", 1, "more than 11 tab-separated fields");
	/* the attributes of a v2 line are checked like the prices */
	expect_bad("us-east-1\tm5.large\t0.096\t-\tUSD\t2.5\t8\t0\t-\tg\t-\n",
		   1, "vcpus \"2.5\": want a whole number or '-'");
	expect_bad("us-east-1\tm5.large\t0.096\t-\tUSD\t2\t8 GiB\t0\t-\tg\t-\n",
		   1, "memory_gib \"8 GiB\": want a decimal number >= 0");
	expect_bad("us-east-1\tm5.large\t0.096\t-\tUSD\t2\t8\t-1\t-\tg\t-\n",
		   1, "gpus \"-1\": want a whole number or '-'");
	expect_bad("us-east-1\tm5.large\t0.096\t-\tUSD\t2\t8\t0\t-\t\t-\n",
		   1, "family \"\": want a word without spaces or '-'");
	expect_bad("us-east-1\tm5.large\t0.096\t-\tUSD\t2\t8\t0\t-\tg\tamd64\n",
		   1, "arch \"amd64\": want x86_64 or arm64 or '-'");
	expect_bad("us-east-1\tm5.large\t0,096\t-\tUSD\n", 1,
		   "on-demand price \"0,096\": want a decimal number >= 0");
	expect_bad("us-east-1\tm5.large\t-0.1\t-\tUSD\n", 1,
		   "on-demand price \"-0.1\"");
	expect_bad("us-east-1\tm5.large\t0.096\t1e3\tUSD\n", 1,
		   "spot price \"1e3\"");
	expect_bad("us-east-1\tm5.large\t.5\t-\tUSD\n", 1, "\".5\"");
	expect_bad("us-east-1\tm5.large\t5.\t-\tUSD\n", 1, "\"5.\"");
	expect_bad("us-east-1\tm5.large\tnan\t-\tUSD\n", 1, "\"nan\"");
	expect_bad("us-east-1\tm5.large\t0.096\t-\tUS$\n", 1,
		   "currency \"US$\": want 1 to 7 letters");
	expect_bad("us-east-1\tm5.large\t0.096\t-\t\n", 1, "currency \"\"");
	expect_bad("us-east-1\t\t0.096\t-\tUSD\n", 1,
		   "instance type \"\": want a word without spaces");
	expect_bad("us east\tm5.large\t0.096\t-\tUSD\n", 1, "region \"us east\"");
	/* a bad line after the one looked for still fails the table */
	expect_bad("us-east-1\tm5.large\t0.096\t-\tUSD\n\nfoo\n", 3,
		   "1 fields");
	expect_bad("us-east-1\tm5.large\t0.096\t-\tUSD\n"
		   "us-east-1\tm5.large\t0.1\t-\tUSD\n", 2,
		   "m5.large in us-east-1 already at line 1");
}

/* prices_parse_line: comments and blanks are 0, a row 1. */
static void test_prices_parse_line(void **state)
{
	char line[64], *f[PRICES_NFIELDS], why[256];

	(void)state;
	strcpy(line, "  # comment");
	assert_int_equal(prices_parse_line(line, f, why, sizeof(why)), 0);
	strcpy(line, " \t ");
	assert_int_equal(prices_parse_line(line, f, why, sizeof(why)), 0);
	strcpy(line, "r\tt\t1\t2.5\tUSD");
	assert_int_equal(prices_parse_line(line, f, why, sizeof(why)), 1);
	assert_string_equal(f[0], "r");
	assert_string_equal(f[1], "t");
	assert_string_equal(f[2], "1");
	assert_string_equal(f[3], "2.5");
	assert_string_equal(f[4], "USD");
}

/* A configuration of defaults with these cost keys. */
static void conf(struct jt_config *c, double node_hour, double core,
		 double gib, double gpu, const char *prices)
{
	assert_int_equal(config_defaults(c), 0);
	c->cost_node_hour = node_hour;
	c->cost_core_hour = core;
	c->cost_gib_hour = gib;
	c->cost_gpu_hour = gpu;
	free(c->cost_prices_file);
	c->cost_prices_file = strdup(prices ? prices : "");
	c->cost_node_cpus = 8;
	c->cost_node_mem_gib = 16;
}

/* A cloud identity. */
static struct jt_cloud cloud(const char *region, const char *type,
			     const char *lifecycle)
{
	struct jt_cloud c;

	memset(&c, 0, sizeof(c));
	strcpy(c.provider, "aws");
	strcpy(c.region, region);
	strcpy(c.instance_type, type);
	strcpy(c.lifecycle, lifecycle);
	return c;
}

/* The order: prices file with an identity, node_hour, rates, none. */
static void test_node_price(void **state)
{
	const char *path = test_write_file(tmpdir, "p3.tsv", table);
	struct jt_cloud on = cloud("us-east-1", "m5.large", "on-demand");
	struct jt_cloud spot = cloud("us-east-1", "c5.xlarge", "spot");
	struct jt_cloud spot_unknown = cloud("us-east-1", "m5.large", "spot");
	struct jt_cloud absent = cloud("us-west-2", "m5.large", "on-demand");
	struct jt_cloud none;
	struct cost_price p;
	struct jt_config c;
	char p3[PATH_MAX], src[PATH_MAX + 16];

	(void)state;
	snprintf(p3, sizeof(p3), "%s", path);
	snprintf(src, sizeof(src), "prices:%s", p3);
	memset(&none, 0, sizeof(none));

	conf(&c, 3.6, 0.02, 0.005, 0, p3);
	cost_node_price(&c, &on, &p);
	assert_near(p.per_hour, 0.096);
	assert_string_equal(p.source, src);
	assert_string_equal(p.currency, "USD");
	assert_string_equal(p.note, "");
	assert_int_equal(p.node_cpus, 8);
	assert_true(p.node_mem_bytes == 16 * GIB);

	/* a spot instance: the spot column */
	cost_node_price(&c, &spot, &p);
	assert_near(p.per_hour, 0.0685);
	/* a spot instance without a spot price: null, never on-demand
	 * nor node_hour */
	cost_node_price(&c, &spot_unknown, &p);
	assert_true(p.per_hour < 0);
	assert_non_null(strstr(p.note, "no spot price of m5.large in us-east-1"));
	assert_non_null(strstr(p.note, "on-demand price is not used"));
	/* not in the table: null with the reason, not node_hour */
	cost_node_price(&c, &absent, &p);
	assert_true(p.per_hour < 0);
	snprintf(src, sizeof(src), "m5.large in us-west-2 not in %s", p3);
	assert_string_equal(p.note, src);

	/* no identity: the prices file does not apply, node_hour does */
	cost_node_price(&c, &none, &p);
	assert_near(p.per_hour, 3.6);
	assert_string_equal(p.source, "config:node_hour");
	cost_node_price(&c, NULL, &p);
	assert_near(p.per_hour, 3.6);
	config_free(&c);

	/* rates: 8 x 0.02 + 16 x 0.005 + 0 GPUs */
	conf(&c, 0, 0.02, 0.005, 1.5, NULL);
	cost_node_price(&c, &on, &p);
	assert_near(p.per_hour, 8 * 0.02 + 16 * 0.005);
	assert_string_equal(p.source, "config:rates");
	c.cost_node_gpus = 2;
	cost_node_price(&c, &on, &p);
	assert_near(p.per_hour, 8 * 0.02 + 16 * 0.005 + 2 * 1.5);
	config_free(&c);

	/* nothing */
	conf(&c, 0, 0, 0, 0, NULL);
	cost_node_price(&c, &on, &p);
	assert_true(p.per_hour < 0);
	assert_string_equal(p.source, "");
	assert_string_equal(p.note, "no price configured (cost.node_hour, cost.core_hour/gib_hour/gpu_hour or cost.prices_file)");
	config_free(&c);
	/* only a prices file, and no identity */
	conf(&c, 0, 0, 0, 0, p3);
	cost_node_price(&c, NULL, &p);
	assert_true(p.per_hour < 0);
	assert_non_null(strstr(p.note, "cost.prices_file needs the instance's type and region"));
	config_free(&c);
	/* a broken table: its file and line */
	conf(&c, 3.6, 0, 0, 0, test_write_file(tmpdir, "p4.tsv", "x\n"));
	cost_node_price(&c, &on, &p);
	assert_true(p.per_hour < 0);
	assert_non_null(strstr(p.note, "p4.tsv:1: 1 fields"));
	config_free(&c);
}

/* Node size 0: the machine's online CPUs and MemTotal. */
static void test_node_size_machine(void **state)
{
	struct cost_price p;
	struct jt_config c;
	unsigned long long kib = 0;
	char line[256];
	FILE *f = fopen("/proc/meminfo", "r");

	(void)state;
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemTotal: %llu kB", &kib) == 1)
			break;
	fclose(f);
	conf(&c, 1, 0, 0, 0, NULL);
	c.cost_node_cpus = 0;
	c.cost_node_mem_gib = 0;
	cost_node_price(&c, NULL, &p);
	assert_int_equal(p.node_cpus, sysconf(_SC_NPROCESSORS_ONLN));
	assert_true(p.node_mem_bytes == kib * 1024);
	assert_int_equal(p.node_gpus, 0);
	config_free(&c);
}

/* A price of per_hour for a node of 8 CPUs, 16 GiB and gpus GPUs. */
static struct cost_price price(double per_hour, const char *source,
			       unsigned gpus)
{
	struct cost_price p;

	memset(&p, 0, sizeof(p));
	p.per_hour = per_hour;
	strcpy(p.currency, "USD");
	strcpy(p.source, source);
	p.node_cpus = 8;
	p.node_mem_bytes = 16 * GIB;
	p.node_gpus = gpus;
	return p;
}

/* Allocation share: max(CPUs, memory, GPUs over the node's), capped at 1. */
static void test_job_allocation_share(void **state)
{
	struct cost_price p = price(3.6, "config:node_hour", 0);
	struct cost_inputs in = { .cpus = 2, .mem_bytes = GIB, .elapsed_s = 10,
				  .cpu_s = 9.6, .mem_peak_bytes = GIB / 2 };
	struct cost_job j;
	struct jt_config c;

	(void)state;
	conf(&c, 3.6, 0, 0, 0, NULL);
	cost_job(&c, &p, &in, &j);
	/* max(2/8, 1/16) = 0.25; 3.6 x 0.25 x 10 / 3600 */
	assert_near(j.share, 0.25);
	assert_near(j.amount, 3.6 * 0.25 * 10 / 3600);
	assert_near(j.price_per_hour, 3.6);
	assert_near(j.elapsed_s, 10);
	assert_string_equal(j.formula, "allocation_share");
	assert_string_equal(j.source, "config:node_hour");
	assert_string_equal(j.currency, "USD");
	assert_string_equal(j.note, "");

	/* memory dominates: 12 GiB of 16 */
	in.mem_bytes = 12 * GIB;
	cost_job(&c, &p, &in, &j);
	assert_near(j.share, 0.75);
	/* capped at the whole node */
	in.cpus = 16;
	cost_job(&c, &p, &in, &j);
	assert_near(j.share, 1);
	assert_near(j.amount, 3.6 * 10 / 3600);
	/* GPUs count when the node has some: 3 of 4 */
	p = price(3.6, "config:node_hour", 4);
	in.cpus = 1;
	in.mem_bytes = GIB;
	in.gpus = 3;
	cost_job(&c, &p, &in, &j);
	assert_near(j.share, 0.75);
	/* the node's size not known for what the job has: no share */
	p.node_cpus = 0;
	in.mem_bytes = 0;
	in.gpus = 0;
	cost_job(&c, &p, &in, &j);
	assert_true(j.amount < 0 && j.share < 0 && j.elapsed_s < 0);
	assert_null(j.formula);
	assert_string_equal(j.source, "");
	assert_non_null(strstr(j.note, "node's size is not known"));
	p.node_cpus = 8;
	/* only the CPUs known: their share alone */
	in.mem_bytes = 0;
	in.gpus = 0;
	in.cpus = 4;
	cost_job(&c, &p, &in, &j);
	assert_near(j.share, 0.5);
	config_free(&c);
}

/* Usage share: attribution "usage", or no allocation at all. */
static void test_job_usage_share(void **state)
{
	struct cost_price p = price(2, "config:node_hour", 0);
	struct cost_inputs in = { .cpus = 8, .mem_bytes = 16 * GIB,
				  .elapsed_s = 100, .cpu_s = 50,
				  .mem_peak_bytes = 4 * GIB };
	struct cost_job j;
	struct jt_config c;

	(void)state;
	conf(&c, 2, 0, 0, 0, NULL);
	c.cost_attribution = JT_ATTR_USAGE;
	cost_job(&c, &p, &in, &j);
	/* max(50/100/8, 4/16) = 0.25 */
	assert_string_equal(j.formula, "usage_share");
	assert_near(j.share, 0.25);
	assert_near(j.amount, 2 * 0.25 * 100 / 3600);
	assert_string_equal(j.note, "");
	/* CPU dominates: 600 CPU-seconds in 100 s = 6 of 8 CPUs */
	in.cpu_s = 600;
	cost_job(&c, &p, &in, &j);
	assert_near(j.share, 0.75);

	/* allocation attribution, but no allocation: usage, and a note */
	c.cost_attribution = JT_ATTR_ALLOCATION;
	in.cpus = 0;
	in.mem_bytes = 0;
	in.cpu_s = 50;
	cost_job(&c, &p, &in, &j);
	assert_string_equal(j.formula, "usage_share");
	assert_near(j.share, 0.25);
	assert_string_equal(j.note, "no allocation known: attributed by usage");
	/* and nothing used known either: null */
	in.cpu_s = -1;
	in.mem_peak_bytes = 0;
	cost_job(&c, &p, &in, &j);
	assert_true(j.amount < 0);
	assert_null(j.formula);
	assert_non_null(strstr(j.note, "neither the allocation nor the usage"));
	config_free(&c);
}

/* Rates: the job's CPUs, GiB and GPUs at the rates, no share. */
static void test_job_rates(void **state)
{
	struct cost_price p;
	struct cost_inputs in = { .cpus = 2, .mem_bytes = 3 * GIB, .gpus = 1,
				  .elapsed_s = 7200, .cpu_s = 3600,
				  .mem_peak_bytes = GIB };
	struct cost_job j;
	struct jt_config c;

	(void)state;
	conf(&c, 0, 0.02, 0.005, 1.5, NULL);
	cost_node_price(&c, NULL, &p);
	cost_job(&c, &p, &in, &j);
	assert_string_equal(j.formula, "rates");
	assert_string_equal(j.source, "config:rates");
	assert_near(j.price_per_hour, 2 * 0.02 + 3 * 0.005 + 1.5);
	assert_true(j.share < 0);
	assert_near(j.amount, (2 * 0.02 + 3 * 0.005 + 1.5) * 2);
	/* usage_rates: 3600 CPU-s over 7200 s = 0.5 CPUs, 1 GiB peak */
	c.cost_attribution = JT_ATTR_USAGE;
	cost_job(&c, &p, &in, &j);
	assert_string_equal(j.formula, "usage_rates");
	assert_near(j.price_per_hour, 0.5 * 0.02 + 1 * 0.005 + 1.5);
	assert_near(j.amount, (0.5 * 0.02 + 1 * 0.005 + 1.5) * 2);
	config_free(&c);
}

/* No price, no elapsed time: amount and the rest null, a note why. */
static void test_job_null(void **state)
{
	struct cost_price p = price(-1, "", 0);
	struct cost_inputs in = { .cpus = 2, .mem_bytes = GIB, .elapsed_s = 10,
				  .cpu_s = 1 };
	struct cost_job j;
	struct jt_config c;

	(void)state;
	conf(&c, 0, 0, 0, 0, NULL);
	strcpy(p.note, "no price configured (x)");
	cost_job(&c, &p, &in, &j);
	assert_true(j.amount < 0 && j.price_per_hour < 0 && j.share < 0 &&
		    j.elapsed_s < 0);
	assert_null(j.formula);
	assert_string_equal(j.currency, "");
	assert_string_equal(j.source, "");
	assert_string_equal(j.note, "no price configured (x)");
	/* efficiency does not need a price */
	assert_near(j.eff_cpu, 1.0 / 20);
	cost_job(&c, NULL, &in, &j);
	assert_true(j.amount < 0);
	assert_string_equal(j.note, "no price known");

	p = price(3.6, "config:node_hour", 0);
	in.elapsed_s = 0;
	cost_job(&c, &p, &in, &j);
	assert_true(j.amount < 0 && j.elapsed_s < 0);
	assert_non_null(strstr(j.note, "no elapsed time"));
	assert_true(j.eff_cpu < 0 && j.eff_time < 0);
	config_free(&c);
}

/* Efficiency and the flags at their thresholds (strictly below). */
static void test_efficiency_flags(void **state)
{
	struct cost_price p = price(3.6, "config:node_hour", 0);
	struct cost_inputs in = { .cpus = 4, .mem_bytes = 1000 * 1000,
				  .elapsed_s = 400, .time_limit_s = 1000,
				  .cpu_s = 400, .mem_peak_bytes = 50 * 1000 };
	struct cost_job j;
	struct jt_config c;

	(void)state;
	conf(&c, 3.6, 0, 0, 0, NULL);
	cost_job(&c, &p, &in, &j);
	/* 400 / (4 x 400), 50 kB of 1 MB, 400 / 1000 */
	assert_near(j.eff_cpu, 0.25);
	assert_near(j.eff_memory, 0.05);
	assert_near(j.eff_time, 0.4);
	assert_int_equal(j.flags, COST_F_CPU_UNDERUSED |
			 COST_F_MEMORY_OVERREQUESTED | COST_F_TIME_OVERREQUESTED);

	/* exactly at the thresholds: no flags */
	in.cpu_s = 0.65 * 4 * 400;
	in.mem_peak_bytes = 700 * 1000;
	in.time_limit_s = 400 / 0.6;
	cost_job(&c, &p, &in, &j);
	assert_near(j.eff_cpu, 0.65);
	assert_near(j.eff_memory, 0.7);
	assert_int_equal(j.flags, 0);

	/* time: only for jobs of time_min_elapsed or more */
	in.time_limit_s = 10000;
	in.elapsed_s = 299;
	in.cpu_s = 4 * 299;
	cost_job(&c, &p, &in, &j);
	assert_near(j.eff_time, 0.0299);
	assert_int_equal(j.flags, 0);
	in.elapsed_s = 300;
	in.cpu_s = 4 * 300;
	cost_job(&c, &p, &in, &j);
	assert_int_equal(j.flags, COST_F_TIME_OVERREQUESTED);
	/* thresholds from waste { } */
	c.waste_time_min_s = 0;
	c.waste_cpu_below = 1.01;
	in.elapsed_s = 10;
	in.cpu_s = 40;
	cost_job(&c, &p, &in, &j);
	assert_int_equal(j.flags, COST_F_CPU_UNDERUSED | COST_F_TIME_OVERREQUESTED);

	/* unknown terms: null figures, no flags */
	in.cpu_s = -1;
	in.mem_peak_bytes = 0;
	in.time_limit_s = 0;
	cost_job(&c, &p, &in, &j);
	assert_true(j.eff_cpu < 0 && j.eff_memory < 0 && j.eff_time < 0);
	assert_int_equal(j.flags, 0);
	in.cpus = 0;
	in.mem_bytes = 0;
	in.cpu_s = 10;
	in.mem_peak_bytes = GIB;
	cost_job(&c, &p, &in, &j);
	assert_true(j.eff_cpu < 0 && j.eff_memory < 0);
	config_free(&c);
}

/* cost_inputs_of: elapsed from the job's times; CPU unknown without a
 * finished process; the cgroup peak before the samples' sum. */
static void test_inputs_of(void **state)
{
	struct jt_jobinfo ji;
	struct cost_inputs in;

	(void)state;
	memset(&ji, 0, sizeof(ji));
	ji.cpus = 2;
	ji.mem_bytes = GIB;
	ji.time_limit_s = 600;
	ji.start_ns = 1000000000ull * 1700000000;
	ji.end_ns = ji.start_ns + 12345678901ull;
	ji.usage.cpu_s = 0;
	ji.usage.rss_sum_peak_bytes = 300;
	cost_inputs_of(&ji, &in);
	assert_near(in.elapsed_s, 12.345678901);
	assert_true(in.cpu_s < 0);
	assert_true(in.mem_peak_bytes == 300);
	assert_near(in.time_limit_s, 600);
	ji.usage.processes = 3;
	ji.usage.cpu_s = 4.5;
	ji.usage.cgroup_peak_bytes = 5000;
	cost_inputs_of(&ji, &in);
	assert_near(in.cpu_s, 4.5);
	assert_true(in.mem_peak_bytes == 5000);
	ji.end_ns = 0;
	cost_inputs_of(&ji, &in);
	assert_true(in.elapsed_s <= 0);
}

/* Time limits: seconds, Slurm's forms, unlimited, and what is wrong. */
static void test_time_limit(void **state)
{
	static const struct { const char *s; uint32_t want; } good[] = {
		{ "3600", 3600 }, { "0", 0 }, { "01:00:00", 3600 },
		{ "1:02:03", 3723 }, { "05:30", 330 },
		{ "1-00:00:00", 86400 }, { "2-12", 216000 },
		{ "1-01:30", 91800 }, { "10-23:59:59", 950399 },
		{ "UNLIMITED", 0 }, { "INFINITE", 0 },
	};
	static const char *const bad[] = {
		"", "abc", "1:2:3:4", "01:60:00", "00:00:60", "-5", "5-",
		"1-25:00:00", "1h", "12:", ":12", "9999999999", "1.5",
		"1-2-3", "unlimited",
	};
	uint32_t v;

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		v = 12345;
		if (cost_parse_time_limit(good[i].s, &v) || v != good[i].want)
			fail_msg("\"%s\": got %u, want %u", good[i].s, v,
				 good[i].want);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (cost_parse_time_limit(bad[i], &v) != -EINVAL)
			fail_msg("\"%s\" was accepted as %u", bad[i], v);
}

/* The job end record: cost, efficiency, flags; a start record has none. */
static void test_record(void **state)
{
	struct jt_host h;
	struct jt_jobinfo ji;
	struct cost_price p = price(3.6, "config:node_hour", 0);
	struct cost_inputs in;
	struct cost_job j;
	struct jt_config c;
	struct jbuf b;

	(void)state;
	memset(&h, 0, sizeof(h));
	strcpy(h.name, "node-1");
	memset(&ji, 0, sizeof(ji));
	strcpy(ji.job.scheduler, "slurm");
	strcpy(ji.job.id, "42");
	ji.cpus = 4;
	ji.mem_bytes = 2 * GIB;
	ji.time_limit_s = 3600;
	ji.start_ns = 1000000000ull * 1700000000;
	ji.end_ns = ji.start_ns + 400000000000ull;
	ji.usage.processes = 1;
	ji.usage.cpu_s = 400;
	ji.usage.cgroup_peak_bytes = GIB / 8;
	conf(&c, 3.6, 0, 0, 0, NULL);
	cost_inputs_of(&ji, &in);
	cost_job(&c, &p, &in, &j);
	jbuf_init(&b);
	record_job(&b, &h, &ji, "end", "x", &j);
	assert_false(b.oom);
	/* 4/8 CPUs, 3.6 x 0.5 x 400 / 3600 = 0.2 */
	if (!strstr(jbuf_str(&b),
		    "\"cost\":{\"amount\":0.2,\"currency\":\"USD\","
		    "\"source\":\"config:node_hour\",\"formula\":\"allocation_share\","
		    "\"price_per_hour\":3.6,\"share\":0.5,\"elapsed_s\":400,\"note\":null}") ||
	    !strstr(jbuf_str(&b),
		    "\"efficiency\":{\"cpu\":0.25,\"memory\":0.0625,\"time\":0.111111},"
		    "\"flags\":[\"cpu_underused\",\"memory_overrequested\","
		    "\"time_overrequested\"]}"))
		fail_msg("%s", jbuf_str(&b));
	assert_non_null(strstr(jbuf_str(&b), "\"time_limit_s\":3600"));

	jbuf_reset(&b);
	record_job(&b, &h, &ji, "start", "y", NULL);
	assert_null(strstr(jbuf_str(&b), "\"cost\""));
	assert_null(strstr(jbuf_str(&b), "\"efficiency\""));
	assert_null(strstr(jbuf_str(&b), "\"flags\""));

	/* money has 12 decimals: a tiny job's cost is not rounded away */
	j.amount = 0.1234 * 0.25 * 1.41358 / 3600;
	jbuf_reset(&b);
	record_job(&b, &h, &ji, "end", "x", &j);
	if (!strstr(jbuf_str(&b), "\"cost\":{\"amount\":0.000012113595,"))
		fail_msg("%s", jbuf_str(&b));
	jbuf_reset(&b);
	json_double12(&b, 1e-13);
	json_double12(&b, -2.5);
	json_double12(&b, 1.0 / 3);
	json_double12(&b, NAN);
	/* (no separators outside an array or object) */
	assert_string_equal(jbuf_str(&b), "0-2.50.333333333333null");

	/* no cost computed: an object of nulls that says so, no flags */
	jbuf_reset(&b);
	record_job(&b, &h, &ji, "end", "z", NULL);
	if (!strstr(jbuf_str(&b), "\"cost\":{\"amount\":null,\"currency\":null,"
		    "\"source\":null,\"formula\":null,\"price_per_hour\":null,"
		    "\"share\":null,\"elapsed_s\":null,\"note\":\"cost not computed\"}") ||
	    !strstr(jbuf_str(&b), "\"flags\":[]"))
		fail_msg("%s", jbuf_str(&b));
	jbuf_free(&b);
	config_free(&c);
}

/* The host record's price object. */
static void test_record_price(void **state)
{
	struct cost_price p = price(-1, "", 0);
	struct sv v[V__N];
	struct jbuf b;

	(void)state;
	strcpy(p.note, "no price configured");
	memset(v, 0, sizeof(v));
	record_price_values(v, &p);
	jbuf_init(&b);
	schema_write(&b, &sf_records[SF_REC_HOST], v);
	assert_non_null(strstr(jbuf_str(&b), "\"price\":{\"per_hour\":null,"
			       "\"currency\":\"USD\",\"source\":null,\"node_cpus\":8,"
			       "\"node_mem_bytes\":17179869184,"
			       "\"note\":\"no price configured\"}"));
	jbuf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_prices_found),
		cmocka_unit_test(test_prices_not_found),
		cmocka_unit_test(test_prices_bad),
		cmocka_unit_test(test_prices_parse_line),
		cmocka_unit_test(test_node_price),
		cmocka_unit_test(test_node_size_machine),
		cmocka_unit_test(test_job_allocation_share),
		cmocka_unit_test(test_job_usage_share),
		cmocka_unit_test(test_job_rates),
		cmocka_unit_test(test_job_null),
		cmocka_unit_test(test_efficiency_flags),
		cmocka_unit_test(test_inputs_of),
		cmocka_unit_test(test_time_limit),
		cmocka_unit_test(test_record),
		cmocka_unit_test(test_record_price),
	};

	return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
