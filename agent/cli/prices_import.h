/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prices_import.h - `jobtrace prices import`: the price table (the format
 * of agent/core/prices.h: region, instance type, on-demand and spot USD per
 * hour) made from AWS's Price List bulk offer file for EC2 (AmazonEC2),
 * so that nothing needs the network when a job's cost is computed.
 *
 * The offer file comes in two forms, told apart by its first byte:
 * - CSV: metadata rows ("FormatVersion","v1.0" ... "OfferCode","AmazonEC2"),
 *   then the header row ("SKU","OfferTermCode",...), then one row per price
 *   dimension of a product and term.  Columns are found by their names,
 *   fields are RFC 4180 (quotes doubled inside quoted fields, which may
 *   hold commas and line breaks).
 * - JSON: {"formatVersion", "offerCode", "version", "publicationDate",
 *   "products": {SKU: {"attributes": {...}}},
 *   "terms": {"OnDemand": {SKU: {TERM: {"priceDimensions": {RATE:
 *   {"unit", "pricePerUnit": {"USD": "0.0960000000"}}}}}}}}.
 *
 * A price is kept when it is the on-demand price of a plain instance
 * hour: term OnDemand, usage type containing "BoxUsage", Linux, Shared
 * tenancy, no pre-installed software (NA), capacity status Used, market
 * option OnDemand (or none), unit Hrs, in USD, above zero.  Each region
 * and instance type has one price: two different ones are an error that
 * names both SKUs; the same one twice is kept once.
 *
 * The file is read as it stands (mapped, never copied, no tree built):
 * the JSON is walked once with json_read.h's pull reader, keeping only
 * the SKUs of the products that pass (terms found before the products
 * are walked again afterwards), and the pages read are given back as the
 * walk moves on, so memory stays small whatever the size of the file.
 */
#ifndef JOBTRACE_PRICES_IMPORT_H
#define JOBTRACE_PRICES_IMPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * What the offer file says of an instance type (-1 or "" not known):
 * vCPU, Memory ("8 GiB", "1,952 GiB"), GPU (a count; AWS leaves it out
 * for a type without one: 0 then), Instance Family ("General purpose" ->
 * general-purpose), and the architecture from Physical Processor ("AWS
 * Graviton2 Processor" -> arm64, Intel or AMD -> x86_64; AWS's Processor
 * Architecture says "64-bit" for both, so it decides only when it reads
 * x86_64 or arm64).  The price list names no GPU model: gpu_model is '-'
 * in the table, for an admin to fill in.
 */
struct prices_attrs {
	int vcpus;
	char memory[16];	/* decimal text, "" not known */
	int gpus;
	char family[32];
	const char *arch;	/* "x86_64", "arm64" or NULL */
};

/* One line of the table. */
struct prices_row {
	char region[32];	/* us-east-1 */
	char type[32];		/* m5.large */
	char price[24];		/* decimal text, no trailing zeros: 0.096 */
	char sku[24];		/* the product it came from, for messages */
	uint64_t line;		/* CSV: its line; JSON: 0 */
	struct prices_attrs at;	/* the type's description */
};

/* What an offer file gave. */
struct prices_table {
	struct prices_row *rows;	/* sorted by region, then type */
	size_t n, cap;
	bool json;			/* the file's form */
	char offer[32];			/* OfferCode: AmazonEC2 */
	char version[32];		/* Version, "unknown" when absent */
	char published[40];		/* Publication Date, likewise */
	char regions_asked[160];	/* --region, space separated, or "" */
	size_t read;			/* CSV data rows, JSON products */
	size_t zero;			/* prices of zero, left out */
	size_t regions, types;		/* distinct in rows */
};

/*
 * Read the offer file text buf[0..len) (name: for messages) into t,
 * keeping only the regions listed (all when nregions is 0).  0, or
 * -EINVAL with err saying what is wrong and where ("NAME:LINE: ..." for
 * CSV, "NAME: $.products.SKU.attributes: ..." for JSON), -ENOMEM.
 * t is freed and emptied first.
 */
int prices_import_buf(struct prices_table *t, const char *name,
		      const char *buf, size_t len, const char *const *regions,
		      size_t nregions, char *err, size_t errlen);
/* The same from the file at path (a regular file): also -errno. */
int prices_import_file(struct prices_table *t, const char *path,
		       const char *const *regions, size_t nregions, char *err,
		       size_t errlen);
/* Write the table (its comment header, then its rows) to out: 0 or -EIO. */
int prices_import_write(const struct prices_table *t, FILE *out);
/*
 * Write the table to path atomically (a new file beside it, then a
 * rename): readers see the old table or the new one, never a part.
 */
int prices_import_save(const struct prices_table *t, const char *path,
		       char *err, size_t errlen);
/* The same with fn writing what goes in the file: 0 or -errno. */
int prices_import_save_with(const char *path,
			    int (*fn)(const void *arg, FILE *out),
			    const void *arg, char *err, size_t errlen);
/* Whether s is a region code as AWS writes them (us-east-1). */
bool prices_import_region_ok(const char *s);
/* Release t's rows and empty it. */
void prices_import_free(struct prices_table *t);

#endif
