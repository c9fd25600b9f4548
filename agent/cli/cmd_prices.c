// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cmd_prices.c - `jobtrace prices import`: the price table from AWS's EC2
 * offer file (prices_import.h); `jobtrace prices import-spot`: spot prices
 * into it (spot_import.h).
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "gcp_import.h"
#include "prices_import.h"
#include "spot_import.h"
#include "util.h"

/* Usage of prices. */
void cli_help_prices(FILE *out)
{
	fputs("Usage: jobtrace prices import [--region R]... [--output FILE] OFFER_FILE\n"
	      "       jobtrace prices import-spot --table TABLE [--output FILE] SPOT_FILE\n"
	      "       jobtrace prices import-gcp [--table TABLE] [--output FILE] GCP_FILE\n"
	      "\n"
	      "Make the price table that cost.prices_file names from AWS's Price List\n"
	      "bulk offer file for EC2 (AmazonEC2), CSV or JSON, told apart by its\n"
	      "content.  All regions' (or index.json in its place):\n"
	      "  https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonEC2/current/index.csv\n"
	      "one region's: its URL in .../AmazonEC2/current/region_index.json.\n"
	      "Nothing needs the network at run time.\n"
	      "It keeps each instance type's on-demand price in each region: term\n"
	      "OnDemand, usage type BoxUsage, Linux, shared tenancy, no pre-installed\n"
	      "software, capacity status Used, USD per hour.  One price per region and\n"
	      "type: two different ones are an error naming both SKUs.  Beside it, the\n"
	      "type's vCPUs, memory (GiB), GPUs, family (general-purpose, compute-\n"
	      "optimized, memory-optimized, ...) and architecture (arm64 when the\n"
	      "processor is AWS Graviton, x86_64 when Intel or AMD, '-' otherwise).\n"
	      "\n"
	      "  --region R     only region R (a code: us-east-1); repeat for more\n"
	      "  --output FILE  write the table to FILE (a new file renamed over it:\n"
	      "                 readers never see half a table); default stdout\n"
	      "\n"
	      "The table: '#' comments, then one line per region and instance type,\n"
	      "TAB separated: region instance_type on_demand_per_hour spot_per_hour\n"
	      "currency vcpus memory_gib gpus gpu_model family arch ('-': not known;\n"
	      "AWS's offer file names no GPU model).  spot_per_hour is '-': AWS's\n"
	      "bulk offer file has no spot prices.  An admin may fill it in (or edit\n"
	      "any line); while it is '-', a spot instance's cost stays null, never\n"
	      "the on-demand price.\n"
	      "A summary goes to stderr: rows read, prices kept, regions, types.\n"
	      "\n"
	      "import-spot puts the spot prices of SPOT_FILE, what\n"
	      "  aws ec2 describe-spot-price-history --product-descriptions Linux/UNIX\n"
	      "prints (JSON), into the table TABLE: the latest price of each zone and\n"
	      "type gets a line of its own (region: the zone, us-east-1a), and each\n"
	      "region's line the lowest of its zones'.  A price for a region or type\n"
	      "the table has no line for is left out and counted.  TABLE is replaced\n"
	      "(a new file renamed over it) unless --output names another file.\n"
	      "\n"
	      "import-gcp puts Compute Engine machine types into TABLE (replaced\n"
	      "unless --output names another file), or into a new table (--output,\n"
	      "without --table), from GCP_FILE, a CSV file of this form:\n"
	      "  " GCP_IMPORT_HEADER "\n"
	      "  e2-standard-4,us-central1,4,16,0,-,0.134012,0.040204,USD\n"
	      "(the header exactly; '#' comments; '-': spot or GPU model not known).\n"
	      "The family and architecture follow from the machine series: see\n"
	      "jobtrace(1).\n"
	      "\n"
	      "Exit status: 0 ok, 1 the offer file is unusable (the message says\n"
	      "where: FILE:LINE for CSV, the JSON path) or the output cannot be\n"
	      "written, 2 bad usage.\n", out);
}

/* Merge the file at path into set: spot prices (spot), else GCP machine
 * types (*rows their rows); 0 or -errno with err set. */
static int merge_file(struct prices_set *set, struct spot_set *spot,
		      bool gcp, const char *path, size_t *rows, char *err,
		      size_t errlen)
{
	if (gcp)
		return gcp_import_file(set, path, rows, err, errlen);
	if (spot_import_file(spot, path, err, errlen))
		return -EINVAL;
	if (spot_import_merge(spot, set)) {
		util_seterr(err, errlen, "%s: out of memory", path);
		return -ENOMEM;
	}
	return 0;
}

/*
 * `prices import-spot`: spot prices into the table; `prices import-gcp`
 * (gcp): Compute Engine machine types into it, or into a new table when
 * there is no --table.
 */
static int run_import_more(int argc, char **argv, bool gcp)
{
	static const struct option opts[] = {
		{ "table", required_argument, NULL, 't' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *who = gcp ? "jobtrace prices import-gcp" :
			  "jobtrace prices import-spot";
	const char *table = NULL, *output = NULL, *path;
	struct prices_set set = { 0 };
	struct spot_set spot = { 0 };
	char err[1024], note[512];
	struct spot_out o;
	size_t rows = 0;
	int opt, rc = EXIT_USAGE;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (opt) {
		case 't':
		case 'o':
			if (!*optarg) {
				fprintf(stderr, "%s: --%s: empty file name\n", who,
					opt == 't' ? "table" : "output");
				return EXIT_USAGE;
			}
			*(opt == 't' ? &table : &output) = optarg;
			break;
		case 'h':
			cli_help_prices(stdout);
			return 0;
		default:
			cli_help_prices(stderr);
			return EXIT_USAGE;
		}
	}
	if (!table && !gcp) {
		fprintf(stderr, "%s: which price table? (--table TABLE, made by"
			" `jobtrace prices import`)\n", who);
		return EXIT_USAGE;
	}
	if (optind != argc - 1) {
		if (optind < argc)
			fprintf(stderr, "%s: unexpected argument '%s'\n", who,
				util_printable(argv[optind + 1]));
		else
			fprintf(stderr, "%s: which %s file? (%s)\n", who,
				gcp ? "machine type" : "spot",
				gcp ? "GCP_FILE" : "SPOT_FILE");
		return EXIT_USAGE;
	}
	path = argv[optind];
	output = output ? output : table;
	if (!output) {
		fprintf(stderr, "%s: where to? (--table TABLE to add to, or"
			" --output FILE for a new table)\n", who);
		return EXIT_USAGE;
	}
	rc = 1;
	if ((table && prices_load(table, &set, err, sizeof(err))) ||
	    merge_file(&set, &spot, gcp, path, &rows, err, sizeof(err)))
		goto fail;
	snprintf(note, sizeof(note), "Compute Engine machine types from %s"
		 " (jobtrace prices import-gcp)", path);
	o = (struct spot_out){ .table = table ? table : "", .spot_file = path,
			       .note = gcp ? note : NULL, .set = &set,
			       .spot = gcp ? NULL : &spot };
	if (prices_import_save_with(output, spot_import_write, &o, err,
				    sizeof(err)))
		goto fail;
	if (gcp)
		fprintf(stderr, "%s: %s: %zu machine types and regions -> %s\n",
			who, util_printable((char *)path), rows,
			util_printable((char *)output));
	else
		fprintf(stderr, "%s: %s: %zu prices read, %zu of other systems"
			" left out, %zu zone and type prices kept, %zu for a"
			" region or type not in %s left out -> %s\n", who,
			util_printable((char *)path), spot.read, spot.other_os,
			spot.merged, spot.not_in_table,
			util_printable((char *)table),
			util_printable((char *)output));
	rc = 0;
	goto out;
fail:
	fprintf(stderr, "%s: %s\n", who, util_printable(err));
out:
	prices_set_free(&set);
	spot_import_free(&spot);
	return rc;
}

/* `prices import`: the price table from AWS's EC2 offer file. */
int cli_run_prices(struct cli *c, const struct cli_cmd *cmd, int argc,
		   char **argv)
{
	static const struct option opts[] = {
		{ "region", required_argument, NULL, 'r' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *who = "jobtrace prices import", *output = NULL, *path;
	struct prices_table t = { 0 };
	const char **regions;
	size_t nregions = 0;
	char err[1024];
	int opt, rc = EXIT_USAGE;

	(void)c;
	if (cli_help_asked(cmd, argc, argv))
		return 0;
	if (argc >= 2 && !strcmp(argv[1], "import-spot"))
		return run_import_more(argc - 1, argv + 1, false);
	if (argc >= 2 && !strcmp(argv[1], "import-gcp"))
		return run_import_more(argc - 1, argv + 1, true);
	if (argc < 2 || strcmp(argv[1], "import") != 0) {
		if (argc >= 2)
			fprintf(stderr, "jobtrace prices: unknown command '%s'\n",
				util_printable(argv[1]));
		cli_help_prices(stderr);
		return EXIT_USAGE;
	}
	argc--;
	argv++;
	regions = calloc((size_t)argc, sizeof(*regions));
	if (!regions)
		return 1;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (opt) {
		case 'r':
			if (!prices_import_region_ok(optarg)) {
				fprintf(stderr, "%s: --region '%s': not a region code"
					" (like us-east-1)\n", who,
					util_printable(optarg));
				goto out;
			}
			regions[nregions++] = optarg;
			break;
		case 'o':
			if (!*optarg) {
				fprintf(stderr, "%s: --output: empty file name\n", who);
				goto out;
			}
			output = optarg;
			break;
		case 'h':
			cli_help_prices(stdout);
			rc = 0;
			goto out;
		default:
			cli_help_prices(stderr);
			goto out;
		}
	}
	if (optind != argc - 1) {
		if (optind < argc)
			fprintf(stderr, "%s: unexpected argument '%s'\n", who,
				util_printable(argv[optind + 1]));
		else
			fprintf(stderr, "%s: which offer file? (OFFER_FILE)\n", who);
		goto out;
	}
	path = argv[optind];
	rc = 1;
	if (prices_import_file(&t, path, regions, nregions, err, sizeof(err)) ||
	    (output && prices_import_save(&t, output, err, sizeof(err)))) {
		fprintf(stderr, "%s: %s\n", who, util_printable(err));
		goto out;
	}
	if (!output) {
		prices_import_write(&t, stdout);
		if (cli_stdout_done(who))
			goto out;
	}
	fprintf(stderr, "%s: %s (%s, %s version %s, published %s): %zu %s read,"
		" %zu prices kept (%zu of zero left out), %zu regions, %zu"
		" instance types -> %s\n", who, util_printable((char *)path),
		t.json ? "JSON" : "CSV", t.offer, t.version, t.published, t.read,
		t.json ? "products" : "rows", t.n, t.zero, t.regions, t.types,
		output ? util_printable((char *)output) : "stdout");
	rc = 0;
out:
	prices_import_free(&t);
	free(regions);
	return rc;
}
