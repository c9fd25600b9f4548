// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_prices_import.c - cmocka tests of agent/cli/prices_import.c, the reader
 * of AWS's Price List offer file for EC2 behind `jobtrace prices import`.
 *
 * The fixtures (tests/fuzz/corpus/offer/ec2-offer.csv and .json, also the
 * fuzzer's seeds) are AWS's two forms of the same offer: the CSV's header
 * row is the one of AmazonEC2's index.csv of 2025-09 (91 columns), the
 * JSON is laid out as AWS's index.json ("key" : value).  They hold the
 * product kinds the filters must tell apart (Windows, Dedicated, SQL Web,
 * Dedicated Host, unused and allocated capacity reservations, a Reserved term with an
 * upfront fee, EBS storage, a zero price), and the prices of five kept
 * rows, which are checked against the table written by hand below.
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
#include <dirent.h>
#include <unistd.h>

#include <cmocka.h>

#include "prices_import.h"
#include "test_files.h"

/* The table of the fixtures, written by hand from their kept rows. */
static const char want_table[] =
	"# jobtrace prices v2\n"
	"# from AWS's Price List offer file AmazonEC2, version 20250912225308,"
	" published 2025-09-12T22:53:08Z\n"
	"# on-demand: Linux, shared tenancy, no pre-installed software, USD per"
	" hour\n"
	"# spot_per_hour '-': unknown (AWS's offer file has no spot prices:"
	" `jobtrace prices import-spot`, or by hand)\n"
	"# gpu_model '-': the offer file names none\n"
	"# region\tinstance_type\ton_demand_per_hour\tspot_per_hour\tcurrency"
	"\tvcpus\tmemory_gib\tgpus\tgpu_model\tfamily\tarch\n"
	"eu-west-1\tc5.xlarge\t0.192\t-\tUSD\t4\t8\t0\t-\tcompute-optimized\tx86_64\n"
	"eu-west-1\tm5.large\t0.107\t-\tUSD\t2\t8\t0\t-\tgeneral-purpose\tx86_64\n"
	"us-east-1\tc5.xlarge\t0.17\t-\tUSD\t4\t8\t0\t-\tcompute-optimized\tx86_64\n"
	"us-east-1\tm5.large\t0.096\t-\tUSD\t2\t8\t0\t-\tgeneral-purpose\tx86_64\n"
	"us-west-2\tm5.large\t0.096\t-\tUSD\t2\t8\t0\t-\tgeneral-purpose\tx86_64\n";

static char err[1024];

/* The fixture tests/fuzz/corpus/offer/NAME, read whole (malloc'd). */
static char *fixture(const char *name, size_t *len)
{
	return test_read_src("tests/fuzz/corpus/offer", name, len);
}

/* The table t as prices_import_write() writes it (malloc'd). */
static char *table_text(const struct prices_table *t)
{
	char *s = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&s, &n);

	assert_non_null(f);
	assert_int_equal(prices_import_write(t, f), 0);
	assert_int_equal(fclose(f), 0);
	return s;
}

/* Import text (a C string) that must be accepted. */
static void import_ok(struct prices_table *t, const char *text,
		      const char *const *regions, size_t n)
{
	int rc = prices_import_buf(t, "offer", text, strlen(text), regions, n,
				   err, sizeof(err));

	if (rc)
		fail_msg("refused (%d): %s", rc, err);
}

/* Import text that must be refused with an error containing each want. */
static void import_bad(const char *text, size_t len, ...)
{
	struct prices_table t = { 0 };
	const char *want;
	va_list ap;
	int rc;

	rc = prices_import_buf(&t, "offer", text, len, NULL, 0, err,
			       sizeof(err));
	if (rc != -EINVAL)
		fail_msg("accepted or not -EINVAL (%d): %.300s", rc, err);
	va_start(ap, len);
	while ((want = va_arg(ap, const char *)))
		if (!strstr(err, want))
			fail_msg("error '%s' does not say '%s'", err, want);
	va_end(ap);
	/* a refused file leaves nothing */
	assert_null(t.rows);
	assert_int_equal(t.n, 0);
}

/* text with its first from replaced by to (malloc'd; from must be there). */
static char *replace(const char *text, const char *from, const char *to)
{
	const char *at = strstr(text, from);
	size_t a, b = strlen(from), c = strlen(to);
	char *s;

	if (!at)
		fail_msg("'%s' is not in the text", from);
	a = (size_t)(at - text);
	s = malloc(strlen(text) - b + c + 1);
	assert_non_null(s);
	memcpy(s, text, a);
	memcpy(s + a, to, c);
	strcpy(s + a + c, at + b);
	return s;
}

/* The whole line of text holding needle, with its '\n' (malloc'd). */
static char *line_with(const char *text, const char *needle)
{
	const char *at = strstr(text, needle), *s, *e;

	if (!at)
		fail_msg("'%s' is not in the text", needle);
	for (s = at; s > text && s[-1] != '\n'; s--)
		;
	e = strchr(at, '\n');
	return strndup(s, (size_t)(e - s) + 1);
}

/* a + b (malloc'd). */
static char *concat(const char *a, const char *b)
{
	char *s = malloc(strlen(a) + strlen(b) + 1);

	assert_non_null(s);
	strcpy(s, a);
	strcat(s, b);
	return s;
}

/* A product and its on-demand price, for offers built by the tests. */
struct item {
	const char *sku, *region, *type, *os, *price;
};

/*
 * An offer in AWS's JSON form holding items (terms first when asked: JSON
 * has no order, the reader must not need one).  malloc'd.
 */
static char *json_offer(const struct item *it, size_t n, bool terms_first)
{
	char *s = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&s, &len);

	assert_non_null(f);
	fprintf(f, "{\n  \"formatVersion\" : \"v1.0\",\n  \"offerCode\" :"
		" \"AmazonEC2\",\n  \"version\" : \"20250912225308\",\n"
		"  \"publicationDate\" : \"2025-09-12T22:53:08Z\",\n");
	for (int part = 0; part < 2; part++) {
		bool terms = terms_first ? part == 0 : part == 1;

		fprintf(f, terms ? "  \"terms\" : {\n    \"OnDemand\" : {\n" :
			"  \"products\" : {\n");
		for (size_t i = 0; i < n; i++) {
			const char *sep = i + 1 < n ? "," : "";

			if (terms)
				fprintf(f,
					"      \"%s\" : { \"%s.JRTCKXETXF\" : {"
					" \"offerTermCode\" : \"JRTCKXETXF\","
					" \"sku\" : \"%s\", \"priceDimensions\" : {"
					" \"%s.JRTCKXETXF.6YS6EN2CT7\" : { \"unit\" :"
					" \"Hrs\", \"pricePerUnit\" : { \"USD\" :"
					" \"%s\" }, \"appliesTo\" : [ ] } },"
					" \"termAttributes\" : { } } }%s\n",
					it[i].sku, it[i].sku, it[i].sku,
					it[i].sku, it[i].price, sep);
			else
				fprintf(f,
					"    \"%s\" : { \"sku\" : \"%s\","
					" \"productFamily\" : \"Compute Instance\","
					" \"attributes\" : { \"regionCode\" : \"%s\","
					" \"instanceType\" : \"%s\", \"tenancy\" :"
					" \"Shared\", \"operatingSystem\" : \"%s\","
					" \"usagetype\" : \"BoxUsage:%s\","
					" \"capacitystatus\" : \"Used\","
					" \"preInstalledSw\" : \"NA\" } }%s\n",
					it[i].sku, it[i].sku, it[i].region,
					it[i].type, it[i].os, it[i].type, sep);
		}
		fprintf(f, terms ? "    }\n  }%s\n" : "  }%s\n",
			part == 0 ? "," : "");
	}
	fputs("}\n", f);
	assert_int_equal(fclose(f), 0);
	return s;
}

/* The CSV fixture: its table, and what it read. */
static void test_csv_fixture(void **state)
{
	struct prices_table t = { 0 };
	char *csv = fixture("ec2-offer.csv", NULL), *out, *bom;

	(void)state;
	import_ok(&t, csv, NULL, 0);
	out = table_text(&t);
	assert_string_equal(out, want_table);
	free(out);
	/* a byte order mark changes nothing */
	bom = concat("\xef\xbb\xbf", csv);
	import_ok(&t, bom, NULL, 0);
	free(bom);
	out = table_text(&t);
	assert_string_equal(out, want_table);
	assert_false(t.json);
	assert_string_equal(t.offer, "AmazonEC2");
	assert_string_equal(t.version, "20250912225308");
	assert_string_equal(t.published, "2025-09-12T22:53:08Z");
	/* 13 products: 15 rows (the kept one has 2 more, its Reserved term) */
	assert_int_equal(t.read, 15);
	assert_int_equal(t.n, 5);
	assert_int_equal(t.zero, 1);
	assert_int_equal(t.regions, 3);
	assert_int_equal(t.types, 2);
	/* where each kept price came from: its SKU and line */
	assert_string_equal(t.rows[3].sku, "6TVGQ3UR2QXYMSPT");
	assert_int_equal(t.rows[3].line, 7);
	free(out);
	prices_import_free(&t);
	free(csv);
}

/* The JSON fixture, the same offer: the same table, byte for byte. */
static void test_json_same_table(void **state)
{
	struct prices_table t = { 0 };
	char *json = fixture("ec2-offer.json", NULL), *out;

	(void)state;
	import_ok(&t, json, NULL, 0);
	out = table_text(&t);
	assert_string_equal(out, want_table);
	assert_true(t.json);
	assert_int_equal(t.read, 13);
	assert_int_equal(t.zero, 1);
	assert_int_equal(t.regions, 3);
	assert_int_equal(t.types, 2);
	assert_string_equal(t.rows[3].sku, "6TVGQ3UR2QXYMSPT");
	free(out);
	prices_import_free(&t);
	free(json);
}

/* --region keeps those regions only, and one without prices is an error. */
static void test_regions(void **state)
{
	static const char *const two[] = { "us-west-2", "us-east-1" };
	static const char *const none[] = { "us-east-1", "ap-south-1" };
	static const char *const files[] = { "ec2-offer.csv", "ec2-offer.json" };
	struct prices_table t = { 0 };

	(void)state;
	for (size_t f = 0; f < 2; f++) {
		char *text = fixture(files[f], NULL), *out;

		import_ok(&t, text, two, 2);
		out = table_text(&t);
		assert_non_null(strstr(out, "# regions: us-west-2 us-east-1\n"));
		assert_null(strstr(out, "eu-west-1"));
		assert_int_equal(t.n, 3);
		assert_int_equal(t.regions, 2);
		assert_string_equal(t.rows[0].region, "us-east-1");
		assert_string_equal(t.rows[2].region, "us-west-2");
		free(out);
		assert_int_equal(prices_import_buf(&t, "offer", text,
						   strlen(text), none, 2, err,
						   sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "no on-demand Linux instance price"
					    " for region ap-south-1"));
		assert_null(t.rows);
		free(text);
	}
	assert_true(prices_import_region_ok("us-gov-west-1"));
	assert_false(prices_import_region_ok("US-EAST-1"));
	assert_false(prices_import_region_ok(""));
	assert_false(prices_import_region_ok("us east"));
}

/*
 * RFC 4180: columns in another order (found by name), commas, doubled
 * quotes and a line break inside quoted fields, CRLF line ends, empty
 * fields unquoted, and no line end after the last row.
 */
static void test_quoting(void **state)
{
	static const char csv[] =
		"\"FormatVersion\",\"v1.0\"\r\n"
		"\"Disclaimer\",\"Prices, \"\"as is\"\"\"\r\n"
		"\"Publication Date\",\"2025-09-12T22:53:08Z\"\r\n"
		"\"Version\",\"20250912225308\"\r\n"
		"\"OfferCode\",\"AmazonEC2\"\r\n"
		"\"Currency\",\"Region Code\",\"PriceDescription\",\"Instance Type\","
		"\"SKU\",\"TermType\",\"Unit\",\"PricePerUnit\",\"Operating System\","
		"\"Tenancy\",\"Pre Installed S/W\",\"CapacityStatus\",\"usageType\","
		"\"Location\"\r\n"
		/* line 7: kept, a description with a comma, quotes, a line break */
		"\"USD\",\"us-east-1\",\"$0.096 per \"\"On Demand\"\", Linux\n"
		"m5.large\",\"m5.large\",\"AAAAAAAAAAAAAAA1\",\"OnDemand\",\"Hrs\","
		"\"0.0960000000\",\"Linux\",\"Shared\",\"NA\",\"Used\","
		"\"BoxUsage:m5.large\",\"US East (N. Virginia)\"\r\n"
		/* line 9: an OS with quotes in it is not Linux */
		"\"USD\",\"us-east-1\",,\"c5.large\",\"AAAAAAAAAAAAAAA2\",\"OnDemand\","
		"\"Hrs\",\"0.0850000000\",\"Linux \"\"beta\"\"\",\"Shared\",\"NA\","
		"\"Used\",\"BoxUsage:c5.large\",\r\n"
		/* line 10: kept, last, with no line end */
		"\"USD\",\"eu-west-1\",\"a, b\",\"t3.micro\",\"AAAAAAAAAAAAAAA3\","
		"\"OnDemand\",\"Hrs\",\"0.0114000000\",\"Linux\",\"Shared\",\"NA\","
		"\"Used\",\"EU-BoxUsage:t3.micro\",\"EU (Ireland)\"";
	struct prices_table t = { 0 };
	char *bad;

	(void)state;
	import_ok(&t, csv, NULL, 0);
	assert_int_equal(t.read, 3);
	assert_int_equal(t.n, 2);
	assert_string_equal(t.rows[0].region, "eu-west-1");
	assert_string_equal(t.rows[0].type, "t3.micro");
	assert_string_equal(t.rows[0].price, "0.0114");
	assert_int_equal(t.rows[0].line, 10);
	assert_string_equal(t.rows[1].type, "m5.large");
	assert_string_equal(t.rows[1].price, "0.096");
	assert_int_equal(t.rows[1].line, 7);
	/* no vCPU ... Processor Architecture columns: nothing known */
	assert_int_equal(t.rows[1].at.vcpus, -1);
	assert_int_equal(t.rows[1].at.gpus, -1);
	assert_string_equal(t.rows[1].at.memory, "");
	assert_string_equal(t.rows[1].at.family, "");
	assert_null(t.rows[1].at.arch);
	prices_import_free(&t);

	/* lines count the break inside the quotes: the bad price is on 10 */
	bad = replace(csv, "0.0114000000", "0.01.14");
	import_bad(bad, strlen(bad), "offer:10: SKU AAAAAAAAAAAAAAA3:",
		   "\"0.01.14\" is not a price", NULL);
	free(bad);
	bad = replace(csv, "\"a, b\"", "\"a\" b");
	import_bad(bad, strlen(bad), "offer:10: field 3: text after its"
		   " closing quote", NULL);
	free(bad);
	bad = replace(csv, "\"a, b\"", "a \"b\"");
	import_bad(bad, strlen(bad), "offer:10: field 3: a quote in a field",
		   NULL);
	free(bad);
}

/* The row of region and type in t (must be there). */
static const struct prices_row *row_of(const struct prices_table *t,
				       const char *region, const char *type)
{
	for (size_t i = 0; i < t->n; i++)
		if (!strcmp(t->rows[i].region, region) &&
		    !strcmp(t->rows[i].type, type))
			return &t->rows[i];
	fail_msg("%s in %s is not in the table", type, region);
	return NULL;
}

/* Check a row's price and attributes (arch NULL: not known). */
static void expect_row(const struct prices_table *t, const char *region,
		       const char *type, const char *price, int vcpus,
		       const char *memory, int gpus, const char *family,
		       const char *arch)
{
	const struct prices_row *r = row_of(t, region, type);

	assert_string_equal(r->price, price);
	assert_int_equal(r->at.vcpus, vcpus);
	assert_string_equal(r->at.memory, memory);
	assert_int_equal(r->at.gpus, gpus);
	assert_string_equal(r->at.family, family);
	if (arch)
		assert_string_equal(r->at.arch, arch);
	else
		assert_null(r->at.arch);
}

/*
 * ec2-offer-families.csv: 45 rows of AWS's CSV (the header of 2025-09),
 * 15 types of four families (general purpose, compute, memory, GPU; x86
 * and Graviton) in us-east-1 and eu-west-1, with Reserved terms and
 * Windows products beside four of them that must be left out.  Each
 * type's attributes as AWS's columns say them.
 */
static void test_families_fixture(void **state)
{
	struct prices_table t = { 0 };
	size_t len;
	char *csv = fixture("ec2-offer-families.csv", &len);
	char *text;

	(void)state;
	assert_int_equal(prices_import_buf(&t, "f.csv", csv, len, NULL, 0, err,
					   sizeof(err)), 0);
	assert_int_equal(t.read, 45);
	assert_int_equal(t.n, 29);
	assert_int_equal(t.regions, 2);
	assert_int_equal(t.types, 15);
	/* the on-demand Linux price, not the Reserved 0.019 nor Windows' */
	expect_row(&t, "us-east-1", "m5.large", "0.096", 2, "8", 0,
		   "general-purpose", "x86_64");
	expect_row(&t, "eu-west-1", "m5.large", "0.107", 2, "8", 0,
		   "general-purpose", "x86_64");
	expect_row(&t, "us-east-1", "m6g.medium", "0.0385", 1, "4", 0,
		   "general-purpose", "arm64");
	expect_row(&t, "us-east-1", "c5.large", "0.085", 2, "4", 0,
		   "compute-optimized", "x86_64");
	expect_row(&t, "eu-west-1", "c6g.large", "0.077", 2, "4", 0,
		   "compute-optimized", "arm64");
	expect_row(&t, "us-east-1", "r6g.medium", "0.0504", 1, "8", 0,
		   "memory-optimized", "arm64");
	expect_row(&t, "eu-west-1", "g4dn.xlarge", "0.587", 4, "16", 1,
		   "gpu-instance", "x86_64");
	/* "1,952 GiB"; "High Frequency Intel Xeon E7-8880 v3 (Haswell)" */
	expect_row(&t, "us-east-1", "x1.32xlarge", "13.338", 128, "1952", 0,
		   "memory-optimized", "x86_64");
	text = table_text(&t);
	assert_non_null(strstr(text, "\nus-east-1\tr6g.medium\t0.0504\t-\tUSD"
			       "\t1\t8\t0\t-\tmemory-optimized\tarm64\n"));
	assert_non_null(strstr(text, "\neu-west-1\tg4dn.xlarge\t0.587\t-\tUSD"
			       "\t4\t16\t1\t-\tgpu-instance\tx86_64\n"));
	free(text);
	prices_import_free(&t);
	free(csv);
}

/*
 * Attribute values of shapes the fixtures do not have: what cannot be
 * read is '-', never a guess; a file without the columns has '-' too.
 */
static void test_attr_shapes(void **state)
{
	static const char head[] =
		"\"FormatVersion\",\"v1.0\"\n"
		"\"OfferCode\",\"AmazonEC2\"\n"
		"\"SKU\",\"TermType\",\"Unit\",\"PricePerUnit\",\"Currency\","
		"\"Region Code\",\"Instance Type\",\"Operating System\",\"Tenancy\","
		"\"Pre Installed S/W\",\"CapacityStatus\",\"usageType\",\"vCPU\","
		"\"Memory\",\"GPU\",\"Instance Family\",\"Physical Processor\","
		"\"Processor Architecture\"\n";
	static const char rows[] =
		/* AMD; memory in GB, not GiB: not read */
		"\"S1\",\"OnDemand\",\"Hrs\",\"0.1\",\"USD\",\"us-east-1\",\"m5a.large\","
		"\"Linux\",\"Shared\",\"NA\",\"Used\",\"BoxUsage:m5a.large\",\"2\","
		"\"8 GB\",,\"General purpose\",\"AMD EPYC 7571\",\"64-bit\"\n"
		/* no vCPU figure, a half GiB, a processor AWS calls Variable */
		"\"S2\",\"OnDemand\",\"Hrs\",\"0.0052\",\"USD\",\"us-east-1\",\"t3.nano\","
		"\"Linux\",\"Shared\",\"NA\",\"Used\",\"BoxUsage:t3.nano\",\"NA\","
		"\"0.5 GiB\",,\"General purpose\",\"Variable\",\"64-bit\"\n"
		/* arm64 said by Processor Architecture alone; 8 GPUs; a family
		 * of several words and a '/' */
		"\"S3\",\"OnDemand\",\"Hrs\",\"7.5\",\"USD\",\"us-east-1\",\"x9.big\","
		"\"Linux\",\"Shared\",\"NA\",\"Used\",\"BoxUsage:x9.big\",\"96\","
		"\"1,024.5 GiB\",\"8\",\"Machine Learning ASIC/Instances\","
		"\"Some CPU\",\"arm64\"\n"
		/* a GPU count that is not one; memory that is two numbers */
		"\"S4\",\"OnDemand\",\"Hrs\",\"1\",\"USD\",\"us-east-1\",\"p9.odd\","
		"\"Linux\",\"Shared\",\"NA\",\"Used\",\"BoxUsage:p9.odd\",\"4\","
		"\"1.2.3 GiB\",\"many\",\"\",\"\",\"\"\n";
	struct prices_table t = { 0 };
	char *csv = concat(head, rows), *text;

	(void)state;
	import_ok(&t, csv, NULL, 0);
	assert_int_equal(t.n, 4);
	expect_row(&t, "us-east-1", "m5a.large", "0.1", 2, "", 0,
		   "general-purpose", "x86_64");
	expect_row(&t, "us-east-1", "t3.nano", "0.0052", -1, "0.5", -1,
		   "general-purpose", NULL);
	expect_row(&t, "us-east-1", "x9.big", "7.5", 96, "1024.5", 8,
		   "machine-learning-asicinstances", "arm64");
	expect_row(&t, "us-east-1", "p9.odd", "1", 4, "", -1, "", NULL);
	text = table_text(&t);
	assert_non_null(strstr(text, "\nus-east-1\tt3.nano\t0.0052\t-\tUSD\t-"
			       "\t0.5\t-\t-\tgeneral-purpose\t-\n"));
	assert_non_null(strstr(text, "\nus-east-1\tp9.odd\t1\t-\tUSD\t4\t-\t-"
			       "\t-\t-\t-\n"));
	free(text);
	prices_import_free(&t);
	free(csv);
}

/* Each condition on its own: a price that fails one of them is not kept. */
static void test_filters(void **state)
{
	static const char csv[] =
		"\"FormatVersion\",\"v1.0\"\n"
		"\"OfferCode\",\"AmazonEC2\"\n"
		"\"SKU\",\"TermType\",\"Unit\",\"PricePerUnit\",\"Currency\","
		"\"Instance Type\",\"Operating System\",\"Tenancy\","
		"\"Pre Installed S/W\",\"CapacityStatus\",\"MarketOption\","
		"\"Region Code\",\"usageType\"\n"
		"\"AAAAAAAAAAAAAAA1\",\"OnDemand\",\"Hrs\",\"0.0960000000\",\"USD\","
		"\"m5.large\",\"Linux\",\"Shared\",\"NA\",\"Used\",\"OnDemand\","
		"\"us-east-1\",\"BoxUsage:m5.large\"\n";
	/* what AWS writes for prices that are not a plain instance hour */
	static const char *const csv_other[][2] = {
		{ "\"OnDemand\",\"Hrs\"", "\"Reserved\",\"Hrs\"" },
		{ "\"Hrs\"", "\"Quantity\"" },
		{ "\"USD\"", "\"CNY\"" },
		{ "\"Linux\"", "\"RHEL\"" },
		{ "\"Shared\"", "\"Host\"" },
		{ "\"NA\"", "\"SQL Web\"" },
		{ "\"Used\"", "\"UnusedCapacityReservation\"" },
		{ "\"OnDemand\",\"us", "\"CapacityBlock\",\"us" },
		{ "\"BoxUsage:", "\"DedicatedUsage:" },
		{ "\"0.0960000000\"", "\"0.0000000000\"" },
	};
	static const char *const json_other[][2] = {
		{ "\"OnDemand\" :", "\"Reserved\" :" },
		{ "\"unit\" : \"Hrs\"", "\"unit\" : \"Quantity\"" },
		{ "\"USD\" :", "\"CNY\" :" },
		{ "\"operatingSystem\" : \"Linux\"", "\"operatingSystem\" : \"RHEL\"" },
		{ "\"tenancy\" : \"Shared\"", "\"tenancy\" : \"Host\"" },
		{ "\"preInstalledSw\" : \"NA\"", "\"preInstalledSw\" : \"SQL Web\"" },
		{ "\"capacitystatus\" : \"Used\"",
		  "\"capacitystatus\" : \"AllocatedCapacityReservation\"" },
		{ "\"tenancy\"", "\"marketoption\" : \"CapacityBlock\", \"tenancy\"" },
		{ "BoxUsage:", "UnusedBox:" },
		{ "\"0.0960000000\"", "\"0.0000000000\"" },
	};
	const struct item it[] = {
		{ "AAAAAAAAAAAAAAA1", "us-east-1", "m5.large", "Linux", "0.0960000000" },
	};
	struct prices_table t = { 0 };
	char *json = json_offer(it, 1, false), *bad;

	(void)state;
	import_ok(&t, csv, NULL, 0);
	assert_int_equal(t.n, 1);
	import_ok(&t, json, NULL, 0);
	assert_int_equal(t.n, 1);
	for (size_t i = 0; i < sizeof(csv_other) / sizeof(csv_other[0]); i++) {
		bad = replace(csv, csv_other[i][0], csv_other[i][1]);
		import_bad(bad, strlen(bad), "offer: no on-demand Linux instance"
			   " price in the file (1 rows read)", NULL);
		free(bad);
	}
	for (size_t i = 0; i < sizeof(json_other) / sizeof(json_other[0]); i++) {
		bad = replace(json, json_other[i][0], json_other[i][1]);
		import_bad(bad, strlen(bad), "offer: no on-demand Linux instance"
			   " price in the file (1 products read)", NULL);
		free(bad);
	}
	free(json);
	prices_import_free(&t);
}

/* One price per region and type: the same twice is kept once, two
 * different ones are an error naming both SKUs (and lines, in CSV). */
static void test_duplicates(void **state)
{
	const struct item same[] = {
		{ "AAAAAAAAAAAAAAA1", "us-east-1", "m5.large", "Linux", "0.0960000000" },
		{ "AAAAAAAAAAAAAAA2", "us-east-1", "m5.large", "Linux", "0.096" },
		{ "AAAAAAAAAAAAAAA3", "us-east-1", "m5.xlarge", "Linux", "0.192" },
	};
	struct item differ[3];
	struct prices_table t = { 0 };
	char *csv = fixture("ec2-offer.csv", NULL), *row, *dup, *text, *json;
	char *out;

	(void)state;
	/* a second SKU for m5.large in us-west-2, at line 22 */
	row = line_with(csv, "\"GZQ7U8C9VQV8XQ7Y\",\"JRTCKXETXF\"");
	dup = replace(row, "GZQ7U8C9VQV8XQ7Y", "DUPL1CATE0000SKU");
	text = concat(csv, dup);
	import_ok(&t, text, NULL, 0);
	out = table_text(&t);
	assert_string_equal(out, want_table);
	free(out);
	free(text);
	text = replace(dup, "0.0960000000", "0.0990000000");
	free(dup);
	dup = concat(csv, text);
	import_bad(dup, strlen(dup), "offer: m5.large in us-west-2 has two"
		   " on-demand prices:", "0.099 (SKU DUPL1CATE0000SKU, line 22)",
		   "0.096 (SKU GZQ7U8C9VQV8XQ7Y, line 19)", NULL);
	free(dup);
	free(text);
	free(row);

	json = json_offer(same, 3, false);
	import_ok(&t, json, NULL, 0);
	assert_int_equal(t.n, 2);
	assert_string_equal(t.rows[0].price, "0.096");
	free(json);
	memcpy(differ, same, sizeof(differ));
	differ[1].price = "0.1";
	json = json_offer(differ, 3, false);
	import_bad(json, strlen(json), "offer: m5.large in us-east-1 has two"
		   " on-demand prices: 0.096 (SKU AAAAAAAAAAAAAAA1) and 0.1 (SKU"
		   " AAAAAAAAAAAAAAA2)", NULL);
	free(json);
	prices_import_free(&t);
	free(csv);
}

/* A column missing from the CSV's header, an attribute from a product. */
static void test_missing_column(void **state)
{
	const struct item it[] = {
		{ "AAAAAAAAAAAAAAA1", "us-east-1", "m5.large", "Linux", "0.096" },
	};
	char *csv = fixture("ec2-offer.csv", NULL), *bad, *json;

	(void)state;
	bad = replace(csv, "\"Region Code\"", "\"Region\"");
	import_bad(bad, strlen(bad), "offer:6: the header has no column"
		   " \"Region Code\"", NULL);
	free(bad);
	bad = replace(csv, "\"Pre Installed S/W\"", "\"Pre-installed\"");
	import_bad(bad, strlen(bad), "offer:6:", "\"Pre Installed S/W\"", NULL);
	free(bad);
	bad = replace(csv, "\"CapacityStatus\"", "\"Tenancy\"");
	import_bad(bad, strlen(bad), "offer:6: the header has \"Tenancy\""
		   " twice", NULL);
	free(bad);

	json = json_offer(it, 1, false);
	bad = replace(json, "\"regionCode\" : \"us-east-1\",", "");
	import_bad(bad, strlen(bad), "offer: $.products.AAAAAAAAAAAAAAA1"
		   ".attributes: no region code", NULL);
	free(bad);
	bad = replace(json, "\"instanceType\" : \"m5.large\",",
		      "\"instanceType\" : 7,");
	import_bad(bad, strlen(bad), "offer: $.products.AAAAAAAAAAAAAAA1"
		   ".attributes.instanceType: a string is due here", NULL);
	free(bad);
	bad = replace(json, "\"USD\" : \"0.096\"", "\"USD\" : \"0,096\"");
	import_bad(bad, strlen(bad), "offer: $.terms.OnDemand.AAAAAAAAAAAAAAA1"
		   ".AAAAAAAAAAAAAAA1.JRTCKXETXF.priceDimensions"
		   ".AAAAAAAAAAAAAAA1.JRTCKXETXF.6YS6EN2CT7.pricePerUnit.USD:"
		   " not a price", NULL);
	free(bad);
	bad = replace(json, "\"instanceType\" : \"m5.large\"",
		      "\"instanceType\" : \"m5.LARGE\\t\"");
	import_bad(bad, strlen(bad), "the instance type is not of AWS's form",
		   NULL);
	free(bad);
	free(json);
	free(csv);
}

/* A file cut short anywhere is refused, never read as a smaller table. */
static void test_truncated(void **state)
{
	size_t clen, jlen, at;
	char *csv = fixture("ec2-offer.csv", &clen);
	char *json = fixture("ec2-offer.json", &jlen);
	const char *row;

	(void)state;
	/* inside a quoted field of line 19 */
	row = strstr(csv, "\"GZQ7U8C9VQV8XQ7Y\",\"JRTCKXETXF\"");
	at = (size_t)(strstr(row, "US West") - csv) + 4;
	import_bad(csv, at, "offer:19: field 18: the file ends inside its"
		   " quotes (cut short?)", NULL);
	/* between two fields of line 19 */
	at = (size_t)(strstr(row, "\"m5.large\"") - csv);
	import_bad(csv, at, "offer:19: 20 fields, the header has 91", NULL);
	/* in the metadata, or in the header */
	import_bad(csv, 100, "offer:2: field 2: the file ends inside", NULL);
	import_bad(csv, 23, "offer: no header row", NULL);
	/* the JSON, cut anywhere */
	for (at = 0; at + 1 < jlen; at += at < 64 ? 1 : 61) {
		struct prices_table t = { 0 };
		int rc = prices_import_buf(&t, "offer", json, at, NULL, 0, err,
					   sizeof(err));

		if (rc != -EINVAL || !err[0])
			fail_msg("cut at %zu: %d '%s'", at, rc, err);
		if (at > 0 && !strstr(err, "not valid JSON"))
			fail_msg("cut at %zu: '%s'", at, err);
	}
	/* and the message says where */
	import_bad(json, jlen / 2, "offer: line ", "not valid JSON",
		   "(in $.", NULL);
	free(csv);
	free(json);
}

/* Files that are not an EC2 offer file. */
static void test_not_an_offer(void **state)
{
	char *csv = fixture("ec2-offer.csv", NULL);
	char *json = fixture("ec2-offer.json", NULL), *bad;
	static const char rds[] = "\"FormatVersion\",\"v1.0\"\n"
		"\"OfferCode\",\"AmazonRDS\"\n";

	(void)state;
	import_bad("", 0, "offer: neither JSON", NULL);
	import_bad("hello", 5, "offer: neither JSON", NULL);
	import_bad("[1]", 3, "offer: neither JSON", NULL);
	import_bad("{}", 2, "offer: $: no \"products\" member", NULL);
	import_bad(rds, strlen(rds), "offer:2: OfferCode is \"AmazonRDS\"",
		   NULL);
	bad = replace(json, "\"AmazonEC2\"", "\"AmazonS3\"");
	import_bad(bad, strlen(bad), "offer: $.offerCode: this reads EC2's",
		   NULL);
	free(bad);
	bad = replace(json, "\"products\" :", "\"productz\" :");
	import_bad(bad, strlen(bad), "no \"products\" member", NULL);
	free(bad);
	bad = replace(csv, "\"OfferCode\",\"AmazonEC2\"\n", "");
	import_bad(bad, strlen(bad), "offer: no OfferCode", NULL);
	free(bad);
	/* right form, nothing kept: says so rather than writing no table */
	bad = replace(json, "\"OnDemand\" :", "\"Spot\" :");
	import_bad(bad, strlen(bad), "offer: no on-demand Linux instance price"
		   " in the file (13 products read)", NULL);
	free(bad);
	free(csv);
	free(json);
}

/* JSON has no order: terms before products give the same table; a
 * byte order mark and escapes in names change nothing. */
static void test_json_order(void **state)
{
	const struct item it[] = {
		{ "AAAAAAAAAAAAAAA1", "us-east-1", "m5.large", "Linux", "0.0960000000" },
		{ "AAAAAAAAAAAAAAA2", "us-east-1", "m5.large", "Windows", "0.1920000000" },
		{ "AAAAAAAAAAAAAAA3", "eu-west-1", "c5.xlarge", "Linux", "0.1920000000" },
	};
	struct prices_table t = { 0 };
	char *a = json_offer(it, 3, false), *b = json_offer(it, 3, true);
	char *ta, *tb, *c, *d;

	(void)state;
	import_ok(&t, a, NULL, 0);
	ta = table_text(&t);
	assert_int_equal(t.n, 2);
	import_ok(&t, b, NULL, 0);
	tb = table_text(&t);
	assert_string_equal(ta, tb);
	c = concat("\xef\xbb\xbf", b);
	d = replace(c, "\"operatingSystem\"", "\"operating\\u0053ystem\"");
	import_ok(&t, d, NULL, 0);
	free(tb);
	tb = table_text(&t);
	assert_string_equal(ta, tb);
	free(a);
	free(b);
	free(c);
	free(d);
	free(ta);
	free(tb);
	prices_import_free(&t);
}

/* Reading a file, and the atomic save. */
static void test_file_and_save(void **state)
{
	char dir[] = "/tmp/jt-prices-test.XXXXXX", path[4200], *want, *got;
	struct prices_table t = { 0 };
	const char *top = getenv("top_srcdir");
	struct dirent *e;
	struct stat st;
	size_t n = 0;
	DIR *d;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/tests/fuzz/corpus/offer/ec2-offer.json",
		 top ? top : ".");
	assert_int_equal(prices_import_file(&t, path, NULL, 0, err,
					    sizeof(err)), 0);
	assert_int_equal(t.n, 5);
	want = table_text(&t);
	assert_string_equal(want, want_table);

	snprintf(path, sizeof(path), "%s/prices.tsv", dir);
	test_write_file(dir, "prices.tsv", "old table\n");
	assert_int_equal(prices_import_save(&t, path, err, sizeof(err)), 0);
	got = test_read_file(path, NULL);
	assert_string_equal(got, want_table);
	free(got);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644);
	/* nothing else is left in the folder */
	d = opendir(dir);
	assert_non_null(d);
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	assert_int_equal(n, 1);

	/* a folder that is not there: an error, and the old file stays */
	snprintf(path, sizeof(path), "%s/none/prices.tsv", dir);
	assert_int_equal(prices_import_save(&t, path, err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "none/prices.tsv"));

	/* what is not a readable regular file */
	assert_int_equal(prices_import_file(&t, dir, NULL, 0, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "not a regular file"));
	assert_null(t.rows);
	snprintf(path, sizeof(path), "%s/missing.csv", dir);
	assert_int_equal(prices_import_file(&t, path, NULL, 0, err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "missing.csv: No such file"));
	test_write_file(dir, "empty.csv", "");
	snprintf(path, sizeof(path), "%s/empty.csv", dir);
	assert_int_equal(prices_import_file(&t, path, NULL, 0, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "empty file"));

	unlink(path);
	snprintf(path, sizeof(path), "%s/prices.tsv", dir);
	unlink(path);
	assert_int_equal(rmdir(dir), 0);
	free(want);
	prices_import_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_csv_fixture),
		cmocka_unit_test(test_json_same_table),
		cmocka_unit_test(test_regions),
		cmocka_unit_test(test_quoting),
		cmocka_unit_test(test_families_fixture),
		cmocka_unit_test(test_attr_shapes),
		cmocka_unit_test(test_filters),
		cmocka_unit_test(test_duplicates),
		cmocka_unit_test(test_missing_column),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_not_an_offer),
		cmocka_unit_test(test_json_order),
		cmocka_unit_test(test_file_and_save),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
