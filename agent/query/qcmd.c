// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * qcmd.c - the table of the commands that read stored records, and the
 * one check of their arguments (qcmd.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "costq.h"
#include "filesq.h"
#include "proc.h"
#include "qcmd.h"
#include "rightsize.h"
#include "store.h"
#include "topq.h"
#include "sweep.h"
#include "util.h"

/* `report`: the summaries and the process tree. */
static int run_report(struct store *st, const char *where,
		      const struct report_query *q, const char *format,
		      FILE *out)
{
	enum report_format fmt;

	if (storeq_format_parse(format, &fmt))
		return -EINVAL;
	return report_run_store(st, where, q, fmt, out);
}

/* `export`: the records as NDJSON. */
static int run_export(struct store *st, const char *where,
		      const struct report_query *q, const char *format,
		      FILE *out)
{
	(void)format;
	return report_export_store(st, where, q, out);
}

/* `rightsize`: the resources to ask for, per workflow task. */
static int run_rightsize(struct store *st, const char *where,
			 const struct report_query *q, const char *format,
			 FILE *out)
{
	enum rightsize_format fmt;

	if (rightsize_format_parse(format, &fmt))
		return -EINVAL;
	return rightsize_run_store(st, where, q, fmt, out);
}

/* `cost`: what the jobs cost. */
static int run_cost(struct store *st, const char *where,
		    const struct report_query *q, const char *format,
		    FILE *out)
{
	enum report_format fmt;

	if (storeq_format_parse(format, &fmt))
		return -EINVAL;
	return costq_run_store(st, where, q, fmt,
			       util_now_ns(CLOCK_REALTIME) / 1e9, out);
}

/* `top --once`: one frame of the runs as they are now. */
static int run_top(struct store *st, const char *where,
		   const struct report_query *q, const char *format,
		   FILE *out)
{
	enum report_format fmt;

	if (storeq_format_parse(format, &fmt))
		return -EINVAL;
	return topq_run_store(st, where, q, fmt,
			      util_now_ns(CLOCK_REALTIME) / 1e9, out);
}

/* `sweep`: idle nodes, low-CPU instances and stuck jobs of the fleet. */
static int run_sweep(struct store *st, const char *where,
		     const struct report_query *q, const char *format,
		     FILE *out)
{
	enum report_format fmt;

	if (storeq_format_parse(format, &fmt))
		return -EINVAL;
	return sweep_run_store(st, where, q, fmt,
			       util_now_ns(CLOCK_REALTIME) / 1e9, out);
}

/* `files`: what each process read and wrote. */
static int run_files(struct store *st, const char *where,
		     const struct report_query *q, const char *format,
		     FILE *out)
{
	return filesq_run_store(st, where, q, format, out);
}

static const char *const sel_report[] = {
	"job", "run", "pipeline", "since", "pid", NULL
};
static const char *const sel_export[] = {
	"job", "run", "pipeline", "since", NULL
};
static const char *const sel_rightsize[] = {
	"pipeline", "run", "job", "since", NULL
};
static const char *const sel_cost[] = { "since", "job", "run", NULL };
static const char *const sel_top[] = {
	"since", "run", "job", "pipeline", NULL
};
static const char *const fmt_top[] = { "text", "json", NULL };
static const char *const sel_sweep[] = { "since", NULL };
static const char *const sel_files[] = { "job", "run", "pid", NULL };
static const char *const fmt_report[] = { "text", "json", "html", NULL };
static const char *const fmt_export[] = { "ndjson", NULL };
static const char *const fmt_rightsize[] = {
	"text", "nextflow", "snakemake", "slurm", "json", "instances",
	"instances-json", "snakemake-rules", NULL
};
static const char *const fmt_cost[] = { "text", "json", "csv", NULL };
static const char *const fmt_files[] = { "text", "json", "csv", NULL };
static const char *const by_words[] = {
	"job", "task", "tool", "user", "account", "cost-center", NULL
};

const struct qcmd qcmd_table[] = {
	{ .name = "report", .selectors = sel_report, .formats = fmt_report,
	  .no_tree = true, .clickhouse = true, .what = CHQ_REPORT,
	  .run = run_report },
	{ .name = "export", .selectors = sel_export, .formats = fmt_export,
	  .format_required = true, .clickhouse = true, .what = CHQ_EXPORT,
	  .run = run_export },
	{ .name = "rightsize", .selectors = sel_rightsize,
	  .formats = fmt_rightsize, .clickhouse = true, .what = CHQ_JOBS,
	  .run = run_rightsize },
	{ .name = "cost", .selectors = sel_cost, .formats = fmt_cost,
	  .by = true, .clickhouse = true, .what = CHQ_COST,
	  .run = run_cost },
	{ .name = "top", .selectors = sel_top, .formats = fmt_top,
	  .since_default = TOPQ_SINCE_S, .clickhouse = true, .what = CHQ_TOP,
	  .by_node = true, .run = run_top },
	{ .name = "sweep", .selectors = sel_sweep, .formats = fmt_cost,
	  .clickhouse = true, .what = CHQ_SWEEP, .run = run_sweep },
	{ .name = "files", .selectors = sel_files, .formats = fmt_files,
	  .task = true, .clickhouse = true, .what = CHQ_REPORT,
	  .run = run_files },
};
const size_t qcmd_count = sizeof(qcmd_table) / sizeof(qcmd_table[0]);

/* The command named name, or NULL. */
const struct qcmd *qcmd_find(const char *name)
{
	for (size_t i = 0; i < qcmd_count; i++)
		if (!strcmp(qcmd_table[i].name, name))
			return &qcmd_table[i];
	return NULL;
}

/* Answer c from the store at path (see qcmd.h). */
int qcmd_run_path(const struct qcmd *c, const char *path,
		  const struct report_query *q, const char *format,
		  FILE *out)
{
	struct store *st = NULL;
	int err = store_open(path, true, &st);

	if (err)
		return err;
	err = c->run(st, path, q, format ? format : c->formats[0], out);
	store_close(st);
	return err;
}

/* The metavariable of a selector in a synopsis. */
const char *qcmd_metavar(const char *sel)
{
	if (!strcmp(sel, "pipeline"))
		return "P";
	if (!strcmp(sel, "since"))
		return "TIME";
	if (!strcmp(sel, "pid"))
		return "PID";
	return "ID";
}

/* Is w one of the NULL-ended words? */
static bool in_words(const char *const *words, const char *w)
{
	for (; *words; words++)
		if (!strcmp(*words, w))
			return true;
	return false;
}

/* "a, b or c" of the NULL-ended words w, each after sep ("--" or ""),
 * between them mid (", "), before the last last (" or "). */
void qcmd_words(const char *const *w, const char *sep, const char *mid,
		const char *last, char *out, size_t len)
{
	size_t n = 0, k;

	while (w[n])
		n++;
	*out = '\0';
	for (size_t i = 0; i < n; i++) {
		k = strlen(out);
		snprintf(out + k, len - k, "%s%s%s",
			 i == 0 ? "" : i + 1 == n ? last : mid, sep, w[i]);
	}
}

/* The commands of the table that take option key, for a message. */
static void takers(const char *key, char *out, size_t len)
{
	const char *names[8];
	size_t n = 0;

	for (size_t i = 0; i < qcmd_count && n + 1 < 8; i++) {
		const struct qcmd *c = &qcmd_table[i];

		if (in_words(c->selectors, key) ||
		    (!strcmp(key, "no-tree") && c->no_tree) ||
		    (!strcmp(key, "by") && c->by) ||
		    (!strcmp(key, "task") && c->task))
			names[n++] = c->name;
	}
	names[n] = NULL;
	qcmd_words(names, "", ", ", " or ", out, len);
}

/* Set selector key of a->q to val; false when val is not valid. */
static bool set_selector(const char *key, const char *val, double now,
			 struct qcmd_args *a)
{
	char *end;

	a->nsel++;
	if (!strcmp(key, "since"))
		return !storeq_parse_since(val, now, &a->q.since) &&
		       a->q.since > 0;
	if (!strcmp(key, "pid")) {
		errno = 0;
		a->q.pid = strtoll(val, &end, 10);
		return !errno && !*end && a->q.pid > 0 &&
		       a->q.pid <= JT_PID_MAX;
	}
	if (!*val)
		a->empty = true;
	*(key[0] == 'j' ? &a->q.job : key[0] == 'r' ? &a->q.run :
	  &a->q.pipeline) = val;
	return true;
}

/* Take one argument of c into a. */
int qcmd_arg(const struct qcmd *c, enum qcmd_style style, const char *key,
	     const char *val, double now, struct qcmd_args *a, char *why,
	     size_t len)
{
	const char *dash = style == QCMD_CLI ? "--" : "";
	bool cli = style == QCMD_CLI;
	char list[128];

	if (!strcmp(key, "no_tree"))
		key = "no-tree";
	if (in_words(c->selectors, key)) {
		if (set_selector(key, val, now, a))
			return 0;
		if (!strcmp(key, "pid") && cli)
			snprintf(why, len, "--pid '%s': not a process id", val);
		else if (!strcmp(key, "pid"))
			snprintf(why, len, "pid: not a process id");
		else if (cli)
			snprintf(why, len, "--since '%s': not a time (see"
				 " jobtrace %s --help)", val, c->name);
		else
			snprintf(why, len, "since: not a time");
		return -EINVAL;
	}
	if (!strcmp(key, "format")) {
		if (in_words(c->formats, val)) {
			a->format = val;
			return 0;
		}
		qcmd_words(c->formats, "", ", ", " or ", list, sizeof(list));
		if (cli)
			snprintf(why, len, "--format '%s': expected %s", val,
				 list);
		else
			snprintf(why, len, "format: expected %s", list);
		return -EINVAL;
	}
	if (!strcmp(key, "by") && c->by) {
		if (in_words(by_words, val)) {
			a->q.by = val;
			return 0;
		}
		qcmd_words(by_words, "", ", ", " or ", list, sizeof(list));
		if (cli)
			snprintf(why, len, "--by '%s': expected %s", val, list);
		else
			snprintf(why, len, "by: expected %s", list);
		return -EINVAL;
	}
	if (!strcmp(key, "task") && c->task) {
		if (val && *val) {
			a->q.task = val;
			return 0;
		}
		snprintf(why, len, "%stask: give a workflow task's name", dash);
		return -EINVAL;
	}
	if (!strcmp(key, "no-tree") && c->no_tree) {
		a->q.no_tree = cli || (val && !strcmp(val, "1"));
		return 0;
	}
	takers(key, list, sizeof(list));
	if (*list)
		snprintf(why, len, "%s%s is for %s only", dash,
			 cli ? key : strcmp(key, "no-tree") ? key : "no_tree",
			 list);
	else
		snprintf(why, len, "%s%s: unknown %s", dash, key,
			 cli ? "option" : "field");
	return -EINVAL;
}

/* Exactly one selector, none empty, and a required --format. */
int qcmd_done(const struct qcmd *c, enum qcmd_style style,
	      struct qcmd_args *a, char *why, size_t len)
{
	const char *dash = style == QCMD_CLI ? "--" : "";
	char list[128];

	if (!a->nsel && c->since_default > 0) {
		a->q.since = util_now_ns(CLOCK_REALTIME) / 1e9 -
			     c->since_default;
		a->nsel = 1;
	}
	if (a->nsel != 1 || a->empty) {
		qcmd_words(c->selectors, dash, ", ", ", ", list, sizeof(list));
		snprintf(why, len, "give exactly one of %s (not empty)", list);
		return -EINVAL;
	}
	if (!a->format && c->format_required && style == QCMD_CLI) {
		snprintf(why, len, "--format %s is required", c->formats[0]);
		return -EINVAL;
	}
	if (!a->format)
		a->format = c->formats[0];
	return 0;
}
