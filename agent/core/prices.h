/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prices.h - the price table of cost.prices_file (written by `jobtrace
 * prices import`, read by the agent, edited by admins).
 *
 * UTF-8 text, one price per line, TAB separated; '#' comments and blank
 * lines are ignored:
 *
 *	# jobtrace prices v1
 *	# region	instance_type	on_demand_per_hour	spot_per_hour	currency
 *	us-east-1	m5.large	0.096	-	USD
 *
 * A price is a decimal number >= 0 (digits, an optional '.' and digits),
 * or '-' when it is not known.  Region and instance type are printable
 * words (no spaces); the currency is 1 to 7 letters.  A (region, type)
 * appears once.  Any other line is an error that names the file and line:
 * the whole table is checked on every read, so an edit that breaks it is
 * reported instead of silently pricing with what is left.
 */
#ifndef JOBTRACE_PRICES_H
#define JOBTRACE_PRICES_H

#include <stddef.h>

#define PRICES_HEADER "# jobtrace prices v1"
#define PRICES_LINE_MAX 4096

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
 * region, type, on-demand, spot and currency (NUL-terminated in line).
 * 1 for a price line, 0 for a comment or blank line, -EINVAL with the
 * reason in why (no file or line: the caller adds them).
 */
int prices_parse_line(char *line, char *fields[5], char *why, size_t whylen);

#endif
