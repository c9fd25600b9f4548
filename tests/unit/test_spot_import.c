// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_spot_import.c - cmocka tests of agent/cli/spot_import.c (spot prices
 * from `aws ec2 describe-spot-price-history` into the price table) and of
 * the table's v2 lines (agent/core/prices.c: prices_load, prices_find).
 *
 * The fixture tests/fuzz/corpus/spot/spot-history.json is in the shape
 * the AWS CLI prints: older and newer prices of one zone and type, a
 * Windows price, a type and a region the table of ec2-offer-families.csv
 * does not have.  What each zone and region line must hold is worked out
 * by hand below from the fixture's entries.
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
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "prices_import.h"
#include "spot_import.h"
#include "test_files.h"

static char err[1024];

/* Read spot text (a C string) that must be accepted. */
static void spot_ok(struct spot_set *s, const char *text)
{
	int rc = spot_import_buf(s, "spot.json", text, strlen(text), err,
				 sizeof(err));

	if (rc)
		fail_msg("refused (%d): %s", rc, err);
}

/* Spot text that must be refused with an error containing want. */
static void spot_bad(const char *text, const char *want)
{
	struct spot_set s = { 0 };
	int rc = spot_import_buf(&s, "spot.json", text, strlen(text), err,
				 sizeof(err));

	if (rc != -EINVAL)
		fail_msg("accepted or not -EINVAL (%d) for %s", rc, text);
	if (!strstr(err, want))
		fail_msg("error '%s' does not say '%s'", err, want);
	assert_null(s.p);
	assert_int_equal(s.n, 0);
}

/* One history entry as the AWS CLI prints it. */
static char *entry(const char *zone, const char *type, const char *product,
		   const char *price, const char *when)
{
	char *s = NULL;

	assert_true(asprintf(&s, "{\"SpotPriceHistory\": [{\"AvailabilityZone\":"
			     " \"%s\", \"InstanceType\": \"%s\","
			     " \"ProductDescription\": \"%s\", \"SpotPrice\":"
			     " \"%s\", \"Timestamp\": \"%s\"}], \"NextToken\":"
			     " \"\"}", zone, type, product, price, when) > 0);
	return s;
}

/* The table of ec2-offer-families.csv, loaded from a file in dir. */
static void family_table(const char *dir, struct prices_set *set)
{
	struct prices_table t = { 0 };
	char path[512];
	size_t len;
	char *csv = test_read_src("tests/fuzz/corpus/offer",
				  "ec2-offer-families.csv", &len);

	assert_int_equal(prices_import_buf(&t, "f.csv", csv, len, NULL, 0, err,
					   sizeof(err)), 0);
	snprintf(path, sizeof(path), "%s/prices.tsv", dir);
	assert_int_equal(prices_import_save(&t, path, err, sizeof(err)), 0);
	assert_int_equal(prices_load(path, set, err, sizeof(err)), 0);
	prices_import_free(&t);
	free(csv);
}

/* The spot price of region (or zone) and type in set; -2 if no line. */
static double spot_of(const struct prices_set *set, const char *region,
		      const char *type)
{
	const struct prices_entry *e = prices_find(set, region, type);

	return e ? e->spot : -2;
}

/*
 * The fixture: of each Linux zone and type, the latest price; the region
 * line has the lowest of its zones'.  By hand from the fixture:
 * us-east-1a c5.large 0.0354 (08:15, not 0.0312 of the day before),
 * us-east-1b c5.large 0.0329 -> us-east-1 c5.large 0.0329; us-east-1c
 * c5.large is Windows only (no line); m5.large 0.0391 (1a, a "Z" time)
 * and 0.0418 (1c) -> 0.0391; eu-west-1b r5.large 0.0483 (04:44, not 0.051
 * of 02:00); t3.micro is not in the table, nor is ap-south-1.
 */
static void test_fixture_merge(void **state)
{
	char dir[] = "/tmp/test_spot.XXXXXX";
	struct prices_set set = { 0 };
	struct spot_set s = { 0 };
	size_t len;
	char *json = test_read_src("tests/fuzz/corpus/spot",
				   "spot-history.json", &len);
	const struct prices_entry *e;

	(void)state;
	assert_non_null(mkdtemp(dir));
	family_table(dir, &set);
	assert_int_equal(set.n, 29);
	assert_int_equal(spot_import_buf(&s, "h.json", json, len, err,
					 sizeof(err)), 0);
	assert_int_equal(s.read, 12);
	assert_int_equal(s.other_os, 1);
	assert_int_equal(s.n, 9);	/* zone and type pairs, Linux */
	/* 2026-11-20T09:30:00Z: date -u -d 2026-11-20T09:30:00Z +%s */
	assert_int_equal(s.latest, 1795167000);
	assert_int_equal(spot_import_merge(&s, &set), 0);
	assert_int_equal(s.merged, 7);
	assert_int_equal(s.not_in_table, 2);
	assert_int_equal(set.n, 29 + 7);
	assert_float_equal(spot_of(&set, "us-east-1a", "c5.large"), 0.0354, 1e-9);
	assert_float_equal(spot_of(&set, "us-east-1b", "c5.large"), 0.0329, 1e-9);
	assert_float_equal(spot_of(&set, "us-east-1c", "c5.large"), -2, 0);
	assert_float_equal(spot_of(&set, "us-east-1", "c5.large"), 0.0329, 1e-9);
	assert_float_equal(spot_of(&set, "us-east-1", "m5.large"), 0.0391, 1e-9);
	assert_float_equal(spot_of(&set, "us-east-1c", "m5.large"), 0.0418, 1e-9);
	assert_float_equal(spot_of(&set, "eu-west-1", "c5.large"), 0.0377, 1e-9);
	assert_float_equal(spot_of(&set, "eu-west-1", "r5.large"), 0.0483, 1e-9);
	assert_float_equal(spot_of(&set, "us-east-1", "m6g.medium"), 0.0161, 1e-9);
	/* no zone price: the region keeps '-' */
	assert_float_equal(spot_of(&set, "us-east-1", "r5.large"), -1, 0);
	assert_float_equal(spot_of(&set, "us-east-1a", "t3.micro"), -2, 0);
	assert_float_equal(spot_of(&set, "ap-south-1a", "c5.large"), -2, 0);
	/* a zone line says nothing else; the region line keeps its own */
	e = prices_find(&set, "us-east-1a", "c5.large");
	assert_float_equal(e->on_demand, -1, 0);
	assert_int_equal(e->vcpus, -1);
	e = prices_find(&set, "us-east-1", "c5.large");
	assert_float_equal(e->on_demand, 0.085, 1e-9);
	assert_int_equal(e->vcpus, 2);
	assert_float_equal(e->memory_gib, 4, 0);
	assert_string_equal(e->family, "compute-optimized");
	assert_string_equal(e->arch, "x86_64");

	/* a newer file: the zone's price moves, the region's with it */
	spot_import_free(&s);
	{
		char *j = entry("us-east-1b", "c5.large", "Linux/UNIX",
				"0.0400", "2026-11-21T00:00:00+01:00");

		spot_ok(&s, j);
		free(j);
	}
	assert_int_equal(spot_import_merge(&s, &set), 0);
	assert_int_equal(set.n, 29 + 7);
	assert_float_equal(spot_of(&set, "us-east-1b", "c5.large"), 0.04, 1e-9);
	assert_float_equal(spot_of(&set, "us-east-1", "c5.large"), 0.0354, 1e-9);
	assert_int_equal(s.latest, 1795215600);	/* 2026-11-20T23:00:00Z */
	spot_import_free(&s);
	prices_set_free(&set);
	free(json);
	test_remove_tree(dir);
}

/* The written table reads back the same; its old comments are kept. */
static void test_write_reads_back(void **state)
{
	char dir[] = "/tmp/test_spot.XXXXXX", path[512], out[512];
	struct prices_set set = { 0 }, again = { 0 };
	struct spot_set s = { 0 };
	struct spot_out o;
	char *j, *text;
	size_t len;

	(void)state;
	assert_non_null(mkdtemp(dir));
	family_table(dir, &set);
	snprintf(path, sizeof(path), "%s/prices.tsv", dir);
	snprintf(out, sizeof(out), "%s/merged.tsv", dir);
	j = entry("eu-west-1c", "m6g.large", "Linux/UNIX", "0.0301",
		  "2026-11-20T10:00:00Z");
	spot_ok(&s, j);
	assert_int_equal(spot_import_merge(&s, &set), 0);
	o = (struct spot_out){ .table = path, .spot_file = "h.json",
			       .set = &set, .spot = &s };
	assert_int_equal(prices_import_save_with(out, spot_import_write, &o,
						 err, sizeof(err)), 0);
	assert_int_equal(prices_load(out, &again, err, sizeof(err)), 0);
	assert_int_equal(again.n, set.n);
	for (size_t i = 0; i < set.n; i++)
		assert_memory_equal(&again.e[i], &set.e[i], sizeof(set.e[i]));
	text = test_read_file(out, &len);
	assert_true(!strncmp(text, "# jobtrace prices v2\n", 21));
	assert_non_null(strstr(text, "# from AWS's Price List offer file"
			       " AmazonEC2, version 20250912225308"));
	assert_non_null(strstr(text, "# spot prices from h.json (latest"
			       " 2026-11-20T10:00:00Z)"));
	assert_null(strstr(text, "spot_per_hour '-': unknown"));
	assert_non_null(strstr(text, "\neu-west-1\tm6g.large\t0.086\t0.0301\tUSD"
			       "\t2\t8\t0\t-\tgeneral-purpose\tarm64\n"));
	assert_non_null(strstr(text, "\neu-west-1c\tm6g.large\t-\t0.0301\tUSD"
			       "\t-\t-\t-\t-\t-\t-\n"));
	free(text);
	free(j);
	spot_import_free(&s);
	prices_set_free(&set);
	prices_set_free(&again);
	test_remove_tree(dir);
}

/* Hostile and broken spot files: each refused, naming where. */
static void test_bad_spot(void **state)
{
	static const struct {
		const char *zone, *type, *product, *price, *when, *want;
	} bad[] = {
		{ "us-east-1", "m5.large", "Linux/UNIX", "0.1",
		  "2026-11-20T00:00:00Z", "[0].AvailabilityZone: a zone's name"
		  " ends in a letter" },
		{ "US-EAST-1A", "m5.large", "Linux/UNIX", "0.1",
		  "2026-11-20T00:00:00Z", "[0].AvailabilityZone: not a zone" },
		{ "us-east-1a", "m5 large", "Linux/UNIX", "0.1",
		  "2026-11-20T00:00:00Z", "[0].InstanceType: not a type" },
		{ "us-east-1a", "m5.large", "Linux/UNIX", "-0.1",
		  "2026-11-20T00:00:00Z", "[0].SpotPrice: not a price" },
		{ "us-east-1a", "m5.large", "Linux/UNIX", "1e3",
		  "2026-11-20T00:00:00Z", "[0].SpotPrice: not a price" },
		{ "us-east-1a", "m5.large", "Linux/UNIX", "0.1",
		  "2026-11-20 00:00:00", "[0].Timestamp: not a time" },
		{ "us-east-1a", "m5.large", "Linux/UNIX", "0.1",
		  "2026-13-20T00:00:00Z", "[0].Timestamp: not a time" },
		{ "us-east-1a", "m5.large", "Linux/UNIX", "0.1",
		  "2026-11-20T00:00:00+0100", "[0].Timestamp: not a time" },
		{ "us-east-1a", "../../etc", "Linux/UNIX", "0.1",
		  "2026-11-20T00:00:00Z", "[0].InstanceType: not a type" },
	};
	char *long_zone, *j;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		j = entry(bad[i].zone, bad[i].type, bad[i].product,
			  bad[i].price, bad[i].when);
		spot_bad(j, bad[i].want);
		free(j);
	}
	spot_bad("", "spot.json: byte 0: not valid JSON");
	spot_bad("[]", "not valid JSON");
	spot_bad("{\"SpotPrices\": []}", "no \"SpotPriceHistory\" member");
	spot_bad("{\"SpotPriceHistory\": {}}", "$.SpotPriceHistory: want an array");
	spot_bad("{\"SpotPriceHistory\": [1]}", "$.SpotPriceHistory[0]: want an object");
	spot_bad("{\"SpotPriceHistory\": [{\"AvailabilityZone\": \"us-east-1a\"}]}",
		 "$.SpotPriceHistory[0]: no \"InstanceType\"");
	spot_bad("{\"SpotPriceHistory\": [{\"SpotPrice\": 0.1}]}",
		 "$.SpotPriceHistory[0].SpotPrice: want a string");
	spot_bad("{\"SpotPriceHistory\": [{\"InstanceType\": \"m5\\u002elarge\"}]}",
		 "$.SpotPriceHistory[0].InstanceType: want a string of at most 63"
		 " plain bytes");
	spot_bad("{\"SpotPriceHistory\": [{\"AvailabilityZone\": \"us-east-1a\",",
		 "not valid JSON");
	spot_bad("{\"SpotPriceHistory\": []} x", "not valid JSON");
	/* a name longer than any of AWS's */
	long_zone = malloc(200);
	memset(long_zone, 'a', 199);
	long_zone[199] = '\0';
	j = entry(long_zone, "m5.large", "Linux/UNIX", "0.1",
		  "2026-11-20T00:00:00Z");
	spot_bad(j, "[0].AvailabilityZone: want a string of at most 63");
	free(j);
	free(long_zone);
	/* one zone, type and time with two prices */
	spot_bad("{\"SpotPriceHistory\": ["
		 "{\"AvailabilityZone\": \"us-east-1a\", \"InstanceType\": \"m5.large\","
		 " \"ProductDescription\": \"Linux/UNIX\", \"SpotPrice\": \"0.1\","
		 " \"Timestamp\": \"2026-11-20T00:00:00Z\"},"
		 "{\"AvailabilityZone\": \"us-east-1a\", \"InstanceType\": \"m5.large\","
		 " \"ProductDescription\": \"Linux/UNIX (Amazon VPC)\", \"SpotPrice\":"
		 " \"0.2\", \"Timestamp\": \"2026-11-20T01:00:00+01:00\"}]}",
		 "$.SpotPriceHistory[1]: m5.large in us-east-1a has two prices at"
		 " 2026-11-20T01:00:00+01:00: 0.1 and 0.2 ([0])");
}

/*
 * The latest price wins whatever the order (the AWS CLI prints newest
 * first, a file put together by hand may not); times in other offsets
 * compare as instants: 01:30+02:00 is before 00:00Z.
 */
static void test_latest_any_order(void **state)
{
	static const char text[] = "{\"SpotPriceHistory\": ["
		"{\"AvailabilityZone\": \"us-east-1a\", \"InstanceType\": \"m5.large\","
		" \"ProductDescription\": \"Linux/UNIX\", \"SpotPrice\": \"0.031\","
		" \"Timestamp\": \"2026-11-19T12:00:00Z\"},"
		"{\"AvailabilityZone\": \"us-east-1a\", \"InstanceType\": \"m5.large\","
		" \"ProductDescription\": \"Linux/UNIX\", \"SpotPrice\": \"0.045\","
		" \"Timestamp\": \"2026-11-20T00:00:00Z\"},"
		"{\"AvailabilityZone\": \"us-east-1a\", \"InstanceType\": \"m5.large\","
		" \"ProductDescription\": \"Linux/UNIX\", \"SpotPrice\": \"0.020\","
		" \"Timestamp\": \"2026-11-20T01:30:00+02:00\"}]}";
	struct spot_set s = { 0 };

	(void)state;
	spot_ok(&s, text);
	assert_int_equal(s.n, 1);
	assert_float_equal(s.p[0].price, 0.045, 1e-12);
	assert_int_equal(s.p[0].elem, 1);
	spot_import_free(&s);
}

/* An empty history is a file with nothing to add, not an error. */
static void test_empty_history(void **state)
{
	struct spot_set s = { 0 };
	struct prices_set set = { 0 };

	(void)state;
	spot_ok(&s, "{\"SpotPriceHistory\": [], \"NextToken\": \"\"}");
	assert_int_equal(s.read, 0);
	assert_int_equal(spot_import_merge(&s, &set), 0);
	assert_int_equal(s.merged, 0);
	spot_import_free(&s);
}

/* prices_load: v1 and v2 lines together; a (region, type) twice fails. */
static void test_load(void **state)
{
	char dir[] = "/tmp/test_spot.XXXXXX";
	struct prices_set set = { 0 };
	const char *p;

	(void)state;
	assert_non_null(mkdtemp(dir));
	p = test_write_file(dir, "t.tsv", "# jobtrace prices v1\n"
			    "us-east-1\tm5.large\t0.096\t-\tUSD\n"
			    "us-east-1\tc6g.medium\t0.034\t0.01\tUSD\t1\t2\t0\t-"
			    "\tcompute-optimized\tarm64\n");
	assert_int_equal(prices_load(p, &set, err, sizeof(err)), 0);
	assert_int_equal(set.n, 2);
	assert_int_equal(set.e[0].vcpus, -1);
	assert_float_equal(set.e[0].memory_gib, -1, 0);
	assert_string_equal(set.e[0].arch, "");
	assert_int_equal(set.e[1].vcpus, 1);
	assert_float_equal(set.e[1].spot, 0.01, 1e-12);
	assert_string_equal(set.e[1].arch, "arm64");
	p = test_write_file(dir, "t.tsv", "us-east-1\tm5.large\t0.096\t-\tUSD\n"
			    "# again\n"
			    "us-east-1\tm5.large\t0.096\t-\tUSD\t2\t8\t0\t-\tg\t-\n");
	assert_int_equal(prices_load(p, &set, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "t.tsv:3: m5.large in us-east-1 already in"
			       " the table"));
	assert_null(set.e);
	assert_int_equal(set.n, 0);
	test_remove_tree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixture_merge),
		cmocka_unit_test(test_write_reads_back),
		cmocka_unit_test(test_bad_spot),
		cmocka_unit_test(test_latest_any_order),
		cmocka_unit_test(test_empty_history),
		cmocka_unit_test(test_load),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
