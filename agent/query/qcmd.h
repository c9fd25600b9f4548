/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qcmd.h - the commands that read stored records (report, export,
 * rightsize, cost, files): one table of what each takes (its selectors,
 * its --format words, --no-tree, --by, --task, a ClickHouse source) and of the code
 * that answers it.
 *
 * The CLI's options and the agent's query requests ("report<TAB>job=42
 * <TAB>format=text", query.h) are checked by the same two functions from
 * this table: qcmd_arg() for each argument, qcmd_done() for exactly one
 * selector and a required --format.  Only the spelling of an argument in
 * a message differs: "--job" on the command line, "job" on the socket.
 */
#ifndef JOBTRACE_QCMD_H
#define JOBTRACE_QCMD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "chquery.h"
#include "report.h"

/* How arguments are spelled in messages. */
enum qcmd_style {
	QCMD_CLI,	/* --job, --no-tree */
	QCMD_SOCKET,	/* job, no_tree */
};

struct store;

/* One command that reads stored records. */
struct qcmd {
	const char *name;
	const char *const *selectors;	/* option names, in the order messages use */
	const char *const *formats;	/* --format words, the default first */
	bool format_required;		/* on the command line */
	bool no_tree;			/* takes --no-tree */
	bool by;			/* takes --by */
	bool task;			/* takes --task T (a filter) */
	bool clickhouse;		/* takes --source clickhouse[:NAME] */
	enum chq_what what;		/* what a ClickHouse source loads */
	bool by_node;			/* from ClickHouse: a level per node
					 * (report_query.by_node) */
	double since_default;		/* > 0: no selector is --since this
					 * many seconds ago */
	/* answer q over st (where names it) in format (never NULL) on out */
	int (*run)(struct store *st, const char *where,
		   const struct report_query *q, const char *format,
		   FILE *out);
};

/* The arguments of one command, as qcmd_arg() takes them. */
struct qcmd_args {
	struct report_query q;
	const char *format;	/* NULL: the command's default */
	int nsel;		/* selectors given, empty ones too */
	bool empty;		/* a selector's value was empty */
};

extern const struct qcmd qcmd_table[];
extern const size_t qcmd_count;

/* The command named name, or NULL. */
const struct qcmd *qcmd_find(const char *name);
/* The metavariable of selector sel in a synopsis ("ID", "P", "TIME"). */
const char *qcmd_metavar(const char *sel);
/*
 * Take argument key of c (an option's long name without "--", or a
 * request's field: "no-tree" and "no_tree" alike) with value val (NULL for
 * --no-tree on the command line) into a; now is the time relative
 * --since values count back from.  Returns 0, or -EINVAL with why set
 * (the argument named as style spells it).
 */
int qcmd_arg(const struct qcmd *c, enum qcmd_style style, const char *key,
	     const char *val, double now, struct qcmd_args *a, char *why,
	     size_t len);
/*
 * After the last argument: exactly one selector (none: --since the
 * command's since_default ago, when it has one), none empty, and
 * (QCMD_CLI) a --format where the command requires one; a->format is then
 * never NULL.  Returns 0 or -EINVAL with why set.
 */
int qcmd_done(const struct qcmd *c, enum qcmd_style style,
	      struct qcmd_args *a, char *why, size_t len);
/*
 * Answer c for q in format (its --format word; NULL: its default) from
 * the SQLite store at path, opened read-only and named by path in
 * messages: what `jobtrace NAME` does with a store it may read.  Returns
 * what c->run returns, or store_open()'s error.
 */
int qcmd_run_path(const struct qcmd *c, const char *path,
		  const struct report_query *q, const char *format,
		  FILE *out);
/* "a, b or c" of the NULL-ended words w, each after sep ("--" or ""),
 * between them mid (", "), before the last last (" or "), into out. */
void qcmd_words(const char *const *w, const char *sep, const char *mid,
		const char *last, char *out, size_t len);

#endif
