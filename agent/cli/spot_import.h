/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * spot_import.h - `jobtrace prices import-spot`: spot prices by instance
 * type and availability zone into the price table (agent/core/prices.h),
 * from the JSON that `aws ec2 describe-spot-price-history` prints:
 *
 *	{"SpotPriceHistory": [{"AvailabilityZone": "us-east-1a",
 *	  "InstanceType": "m5.large", "ProductDescription": "Linux/UNIX",
 *	  "SpotPrice": "0.039100", "Timestamp": "2026-11-20T08:15:32+00:00"},
 *	  ...], "NextToken": ""}
 *
 * Only Linux products count ("Linux/UNIX", "Linux/UNIX (Amazon VPC)"),
 * as the table's on-demand prices are Linux ones; of the history, the
 * latest price of each zone and type is kept (the same time twice with
 * two prices is an error naming both).  A zone belongs to the region its
 * name starts with (us-east-1a: us-east-1); a price whose region and type
 * have no line in the table is left out and counted, never given made-up
 * attributes.  In the table, each zone gets a line of its own (its spot
 * price, '-' elsewhere) and its region's line the lowest of its zones'.
 */
#ifndef JOBTRACE_SPOT_IMPORT_H
#define JOBTRACE_SPOT_IMPORT_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "prices.h"

/* The latest spot price of one zone and type. */
struct spot_price {
	char zone[32];		/* us-east-1a */
	char type[32];		/* m5.large */
	double price;		/* USD per hour */
	int64_t when;		/* its Timestamp, epoch seconds */
	size_t elem;		/* its index in SpotPriceHistory, for messages */
};

/* What a spot file gave, and what of it went into a table. */
struct spot_set {
	struct spot_price *p;
	size_t n, cap;
	size_t read;		/* entries in SpotPriceHistory */
	size_t other_os;	/* not Linux, left out */
	size_t merged;		/* zone lines written */
	size_t not_in_table;	/* region or type without a line */
	int64_t latest;		/* the latest Timestamp kept */
};

/*
 * Read the spot file text buf[0..len) (name: for messages) into s:
 * 0, -EINVAL with err naming the file and what is wrong where
 * ("NAME: $.SpotPriceHistory[3].SpotPrice: ..."), -ENOMEM.
 */
int spot_import_buf(struct spot_set *s, const char *name, const char *buf,
		    size_t len, char *err, size_t errlen);
/* Read the regular file at path (at most 256 MiB) into *buf (malloc'd,
 * NUL-terminated) and *len: 0, or -errno with err naming the file. */
int spot_import_read(const char *path, char **buf, size_t *len, char *err,
		     size_t errlen);
/* The same from the file at path: also -errno. */
int spot_import_file(struct spot_set *s, const char *path, char *err,
		     size_t errlen);
/*
 * Put s's prices into the table set: zone lines added or replaced, each
 * region line's spot the lowest of its zones'.  0 or -ENOMEM.
 */
int spot_import_merge(struct spot_set *s, struct prices_set *set);
/* What spot_import_write() writes. */
struct spot_out {
	const char *table;		/* the table read: its comments kept */
	const char *spot_file;		/* named in a comment */
	const char *note;		/* not NULL: this comment instead (a
					 * GCP import: spot is NULL then) */
	const struct prices_set *set;
	const struct spot_set *spot;
};

/*
 * Write the merged table to out: the old table's comments (but those
 * this rewrites), a comment naming the spot file and its latest time,
 * the column header, the lines.  0 or -EIO.
 */
int spot_import_write(const void *spot_out, FILE *out);
/* Release s's prices and empty it. */
void spot_import_free(struct spot_set *s);

#endif
