// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_gcp_import.c - cmocka tests of agent/cli/gcp_import.c (`jobtrace
 * prices import-gcp`): the documented CSV form read into price table
 * lines (figures, family and architecture from the series), a table
 * written and read back by the agent's reader (prices_load), lines of an
 * older table kept or replaced, and files of another form refused with
 * the file, line and column named.
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

#include <cmocka.h>

#include "gcp_import.h"
#include "prices_import.h"
#include "spot_import.h"
#include "test_files.h"

/* Prices of Google's price list pages for us-central1 and europe-west4
 * (November 2026 figures as an admin would copy them). */
static const char csv[] =
	"# Compute Engine, Linux, per hour\n"
	GCP_IMPORT_HEADER "\n"
	"e2-standard-4,us-central1,4,16,0,-,0.134012,0.040204,USD\n"
	"c3-highcpu-8,us-central1,8,16,0,-,0.34272,0.13709,USD\r\n"
	"\n"
	"m3-ultramem-32,europe-west4,32,976,0,-,6.0978,-,USD\n"
	"t2a-standard-2,us-central1,2,8,0,-,0.077,0.0231,USD\n"
	"g2-standard-4,us-central1,4,16,1,nvidia-l4,0.7068,0.2827,USD\n";

static char err[1024];

/* The entry of region and type in set; fails when missing. */
static const struct prices_entry *entry(const struct prices_set *set,
					const char *region, const char *type)
{
	const struct prices_entry *e = prices_find(set, region, type);

	if (!e)
		fail_msg("no %s in %s", type, region);
	return e;
}

/* Every row as a table line, its attributes and prices exact. */
static void test_rows(void **state)
{
	struct prices_set set = { 0 };
	const struct prices_entry *e;
	size_t rows = 0;

	(void)state;
	assert_int_equal(gcp_import_buf(&set, "gcp.csv", csv, strlen(csv),
					&rows, err, sizeof(err)), 0);
	assert_int_equal(rows, 5);
	assert_int_equal(set.n, 5);
	e = entry(&set, "us-central1", "e2-standard-4");
	assert_float_equal(e->on_demand, 0.134012, 1e-12);
	assert_float_equal(e->spot, 0.040204, 1e-12);
	assert_string_equal(e->currency, "USD");
	assert_int_equal(e->vcpus, 4);
	assert_float_equal(e->memory_gib, 16, 1e-12);
	assert_int_equal(e->gpus, 0);
	assert_string_equal(e->gpu_model, "");
	assert_string_equal(e->family, "general-purpose");
	assert_string_equal(e->arch, "x86_64");
	e = entry(&set, "us-central1", "c3-highcpu-8");
	assert_string_equal(e->family, "compute-optimized");
	e = entry(&set, "europe-west4", "m3-ultramem-32");
	assert_string_equal(e->family, "memory-optimized");
	assert_true(e->spot < 0);
	assert_float_equal(e->memory_gib, 976, 1e-12);
	e = entry(&set, "us-central1", "t2a-standard-2");
	assert_string_equal(e->arch, "arm64");
	e = entry(&set, "us-central1", "g2-standard-4");
	assert_string_equal(e->family, "accelerator-optimized");
	assert_int_equal(e->gpus, 1);
	assert_string_equal(e->gpu_model, "nvidia-l4");
	prices_set_free(&set);
}

/* Written as a table (beside an AWS line of an older table) and read
 * back by the agent's reader: the same lines; the older line kept, a GCP
 * line of it replaced. */
static void test_table_round_trip(void **state)
{
	char dir[] = "/tmp/jt-test-gcp.XXXXXX";
	struct prices_set set = { 0 }, back = { 0 };
	const char *old;
	char table[300];
	struct spot_out o;
	double od, spot;
	char cur[8];
	size_t rows;

	(void)state;
	assert_non_null(mkdtemp(dir));
	old = test_write_file(dir, "prices.tsv", PRICES_HEADER "\n"
			      "# from AWS\n"
			      "us-east-1\tm5.large\t0.096\t-\tUSD\t2\t8\t0\t-\t"
			      "general-purpose\tx86_64\n"
			      "us-central1\te2-standard-4\t9\t-\tUSD\t4\t16\t0\t-\t"
			      "general-purpose\tx86_64\n");
	snprintf(table, sizeof(table), "%s", old);
	assert_int_equal(prices_load(table, &set, err, sizeof(err)), 0);
	assert_int_equal(gcp_import_buf(&set, "gcp.csv", csv, strlen(csv),
					&rows, err, sizeof(err)), 0);
	assert_int_equal(set.n, 6);
	o = (struct spot_out){ .table = table, .spot_file = "gcp.csv",
			       .note = "Compute Engine machine types from gcp.csv",
			       .set = &set };
	assert_int_equal(prices_import_save_with(table, spot_import_write, &o,
						 err, sizeof(err)), 0);
	assert_int_equal(prices_load(table, &back, err, sizeof(err)), 0);
	assert_int_equal(back.n, 6);
	assert_int_equal(prices_lookup(table, "us-central1", "e2-standard-4",
				       &od, &spot, cur, err, sizeof(err)), 0);
	assert_float_equal(od, 0.134012, 1e-12);
	assert_float_equal(spot, 0.040204, 1e-12);
	assert_int_equal(prices_lookup(table, "us-east-1", "m5.large", &od,
				       &spot, cur, err, sizeof(err)), 0);
	assert_float_equal(od, 0.096, 1e-12);
	prices_set_free(&set);
	prices_set_free(&back);
	test_remove_tree(dir);
}

/* A file of another form: refused, naming the file, line and column. */
static void test_bad(void **state)
{
	static const struct { const char *row, *want; } bad[] = {
		{ "E2-standard-4,us-central1,4,16,0,-,0.1,0.04,USD",
		  "gcp.csv:2: machine_type 'E2-standard-4'" },
		{ "e2-standard-4,us-central1-a,4,16,0,-,0.1,0.04,USD",
		  "gcp.csv:2: region 'us-central1-a': not a region" },
		{ "e2-standard-4,us-central1,0,16,0,-,0.1,0.04,USD",
		  "gcp.csv:2: vcpus '0'" },
		{ "e2-standard-4,us-central1,4,16GB,0,-,0.1,0.04,USD",
		  "gcp.csv:2: memory_gib '16GB'" },
		{ "e2-standard-4,us-central1,4,16,-1,-,0.1,0.04,USD",
		  "gcp.csv:2: gpus '-1'" },
		{ "e2-standard-4,us-central1,4,16,0,NVIDIA L4,0.1,0.04,USD",
		  "gcp.csv:2: gpu_model 'NVIDIA L4'" },
		{ "e2-standard-4,us-central1,4,16,0,-,-,0.04,USD",
		  "gcp.csv:2: on_demand_per_hour '-'" },
		{ "e2-standard-4,us-central1,4,16,0,-,0.1,1e-3,USD",
		  "gcp.csv:2: spot_per_hour '1e-3'" },
		{ "e2-standard-4,us-central1,4,16,0,-,0.1,0.04,usd",
		  "gcp.csv:2: currency 'usd'" },
		{ "e2-standard-4,us-central1,4,16,0,-,0.1,0.04",
		  "gcp.csv:2: not 9 comma-separated columns" },
		{ "e2-standard-4,us-central1,4,16,0,-,0.1,0.04,USD,x",
		  "gcp.csv:2: not 9 comma-separated columns" },
		{ "\"e2-standard-4\",us-central1,4,16,0,-,0.1,0.04,USD",
		  "gcp.csv:2: machine_type" },
	};
	char text[512];
	struct prices_set set = { 0 };
	size_t rows;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), GCP_IMPORT_HEADER "\n%s\n",
			 bad[i].row);
		if (gcp_import_buf(&set, "gcp.csv", text, strlen(text), &rows,
				   err, sizeof(err)) != -EINVAL ||
		    !strstr(err, bad[i].want))
			fail_msg("%s: error '%s', want '%s'", bad[i].row, err,
				 bad[i].want);
		prices_set_free(&set);
	}
	snprintf(text, sizeof(text), "machine_type,region\n");
	assert_int_equal(gcp_import_buf(&set, "gcp.csv", text, strlen(text),
					&rows, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "gcp.csv:1: the header must be"));
	snprintf(text, sizeof(text), "# nothing\n" GCP_IMPORT_HEADER "\n");
	assert_int_equal(gcp_import_buf(&set, "gcp.csv", text, strlen(text),
					&rows, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "gcp.csv: no machine type"));
	snprintf(text, sizeof(text), GCP_IMPORT_HEADER "\n"
		 "e2-micro,us-east1,2,1,0,-,0.0084,-,USD\n"
		 "e2-small,us-east1,2,2,0,-,0.0168,-,USD\n"
		 "e2-micro,us-east1,2,1,0,-,0.0090,-,USD\n");
	assert_int_equal(gcp_import_buf(&set, "gcp.csv", text, strlen(text),
					&rows, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "gcp.csv:4: e2-micro in us-east1 again"
			       " (line 2)"));
	prices_set_free(&set);
	assert_int_equal(gcp_import_file(&set, "/nonexistent/gcp.csv", &rows,
					 err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "/nonexistent/gcp.csv: No such file"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_table_round_trip),
		cmocka_unit_test(test_bad),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
