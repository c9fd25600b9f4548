/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rulesq.h - the fleet's rules in ClickHouse, for `jobtrace rules push
 * --source clickhouse` and `jobtrace rules status --source clickhouse`:
 * a checked bundle inserted into the rules table (chschema.h), and the
 * roll-out as the nodes' latest host records tell it (which nodes run the
 * latest push, which are behind, which refused a bundle).
 */
#ifndef JOBTRACE_RULESQ_H
#define JOBTRACE_RULESQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "config.h"

#define RULESQ_TEXT 256		/* a node's name, version, source */
#define RULESQ_ERROR 512	/* a node's rules error */

/* One push: the bundle and what the rules table says of it. */
struct rulesq_push {
	const void *tar;		/* the bundle's bytes */
	size_t len;
	const char *version, *sha256;	/* its MANIFEST's version, its id */
	const char *by, *host;		/* who pushed it, from where */
	uint64_t when_ns;		/* CLOCK_REALTIME */
};

/*
 * Insert the bundle p into the rules table of the ClickHouse sink s.
 * Returns 0, or -errno with one line in err naming the URL and
 * ClickHouse's message.
 */
int rulesq_push(const struct jt_sink_config *s, const struct rulesq_push *p,
		char *err, size_t errlen);

/* One node, from its latest host record. */
struct rulesq_node {
	char host[RULESQ_TEXT];
	char version[RULESQ_TEXT];	/* rules.version, "" when none */
	char sha256[RULESQ_TEXT];	/* rules.sha256 */
	char source[RULESQ_TEXT];	/* rules.source */
	char error[RULESQ_ERROR];	/* rules.error: the last refusal */
	char time[40];			/* the record's time, RFC 3339 */
	bool following;			/* its rules.source is clickhouse */
	bool behind;			/* following, not on the latest push */
	bool refused;			/* error set */
};

/* The latest push and every node. */
struct rulesq_fleet {
	bool pushed;			/* the rules table has a row */
	char version[RULESQ_TEXT];
	char sha256[RULESQ_TEXT];
	char pushed_by[RULESQ_TEXT];
	char pushed_from[RULESQ_TEXT];
	char pushed_at[40];		/* RFC 3339 */
	struct rulesq_node *nodes;	/* by host name, after _finish */
	size_t n, cap;
	size_t behind, refused;		/* counts, after _finish */
	size_t elsewhere;		/* nodes on another rules.source */
};

/*
 * Add the node of one host record (its JSON text) to f: host, time and
 * the rules object's version, sha256, source, error.  A second record of
 * the same host keeps the later one.  Returns 0; -EINVAL for a text that
 * is not a host record with a host; -ENOMEM.
 */
int rulesq_fleet_add_host(struct rulesq_fleet *f, const char *json,
			  size_t len);
/* Sort the nodes by name and mark those that follow the store, those
 * behind the push and those that refused a bundle. */
void rulesq_fleet_finish(struct rulesq_fleet *f);
/*
 * Fill f from the ClickHouse sink s: the latest row of the rules table and
 * the latest host record of every host; then rulesq_fleet_finish().
 * Returns 0, or -errno with one line in err.
 */
int rulesq_fleet_load(const struct jt_sink_config *s, struct rulesq_fleet *f,
		      char *err, size_t errlen);
/* Print f as text (a table made safe for a terminal) or as one JSON
 * object; 0, or -EIO when out failed. */
int rulesq_fleet_print(const struct rulesq_fleet *f, FILE *out, bool json);
/* Release the nodes; accepts a zeroed f. */
void rulesq_fleet_free(struct rulesq_fleet *f);

#endif
