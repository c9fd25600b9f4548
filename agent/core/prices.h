/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prices.h - the price table of cost.prices_file (written by `jobtrace
 * prices import`, read by the agent, edited by admins).
 *
 * UTF-8 text, one price per line, TAB separated; '#' comments and blank
 * lines are ignored.  A line has 5 fields (v1) or 11 (v2: the instance
 * type's attributes follow, as `jobtrace prices import` writes them):
 *
 *	# jobtrace prices v2
 *	# region instance_type on_demand_per_hour spot_per_hour currency
 *	#	vcpus memory_gib gpus gpu_model family arch
 *	us-east-1	m5.large	0.096	0.0391	USD	2	8	0	-	general-purpose	x86_64
 *	us-east-1a	m5.large	-	0.0391	USD	-	-	-	-	-	-
 *
 * A price is a decimal number >= 0 (digits, an optional '.' and digits),
 * or '-' when it is not known.  Region and instance type are printable
 * words (no spaces); the currency is 1 to 7 letters.  A (region, type)
 * appears once.  A "region" that is an availability zone (us-east-1a:
 * it ends in a letter) holds that zone's spot price; its region's line
 * holds the lowest of its zones' (`jobtrace prices import-spot`).
 * Attributes: vcpus and gpus whole numbers, memory_gib a decimal number,
 * gpu_model and family words, arch x86_64 or arm64; each may be '-' (not
 * known).  Any other line is an error that names the file and line: the
 * whole table is checked on every read, so an edit that breaks it is
 * reported instead of silently pricing with what is left.
 */
#ifndef JOBTRACE_PRICES_H
#define JOBTRACE_PRICES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define PRICES_HEADER "# jobtrace prices v2"
#define PRICES_LINE_MAX 4096
/* Fields of a v2 line; a v1 line has the first PRICES_V1_FIELDS. */
#define PRICES_NFIELDS 11
#define PRICES_V1_FIELDS 5

/* One line of the table, read (-1 or "" where it says '-'). */
struct prices_entry {
	char region[128];	/* us-east-1, or an AZ: us-east-1a */
	char type[128];	/* m5.large */
	double on_demand;	/* per hour, -1 not known */
	double spot;		/* per hour, -1 not known */
	char currency[8];
	int vcpus;		/* -1 not known */
	double memory_gib;	/* -1 not known */
	int gpus;		/* -1 not known */
	char gpu_model[32];	/* "" not known */
	char family[32];	/* general-purpose, compute-optimized, ... */
	char arch[8];		/* x86_64, arm64, "" not known */
};

/* A whole table, in the order of its lines. */
struct prices_set {
	struct prices_entry *e;
	size_t n, cap;
};

/*
 * Look up (region, type) in the table at path: *on_demand and *spot get
 * its prices per hour (-1 for '-', not known), currency its currency.
 * 0 found; -ENOENT not in the table (err: "m5.large in us-east-1 not in
 * FILE"), or no such file (err: "FILE: No such file or directory");
 * -EINVAL a bad line (err: "FILE:LINE: what is wrong"); another -errno
 * when the file cannot be read (err: "FILE: reason").
 */
int prices_lookup(const char *path, const char *region, const char *type,
		  double *on_demand, double *spot, char currency[8],
		  char *err, size_t errlen);

/*
 * Check one table line (no newline) and split it: fields[0..4] point at
 * region, type, on-demand, spot and currency, fields[5..10] at the
 * attributes ("-" on a v1 line) (NUL-terminated in line).  1 for a price
 * line, 0 for a comment or blank line, -EINVAL with the reason in why
 * (no file or line: the caller adds them).
 */
int prices_parse_line(char *line, char *fields[PRICES_NFIELDS], char *why,
		      size_t whylen);
/*
 * Read the whole table at path into *set (freed first): 0, or the errors
 * of prices_lookup() but -ENOENT (an empty table is a table).
 */
int prices_load(const char *path, struct prices_set *set, char *err,
		size_t errlen);
/* The line of region and type in set, or NULL. */
struct prices_entry *prices_find(const struct prices_set *set,
				 const char *region, const char *type);
/* A new line at the end of set (zeroed): NULL when out of memory. */
struct prices_entry *prices_add(struct prices_set *set);
/* Whether s is a decimal number >= 0 (digits, an optional '.' and digits). */
bool prices_decimal_ok(const char *s);
/* Whether name is an availability zone (us-east-1a), not a region. */
int prices_is_zone(const char *name);
/* Write one line of the table (v2) for e to out. */
void prices_write_entry(const struct prices_entry *e, FILE *out);
/* Release set's lines and empty it. */
void prices_set_free(struct prices_set *set);

#endif
