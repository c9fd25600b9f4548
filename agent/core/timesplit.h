/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * timesplit.h - where a process's, task's or job's time went: its wall
 * time split into running on a CPU, the waits of its wait object (doc/
 * wait.md) and the rest.  One table of components (timesplit.c) drives
 * every view: the report's text line, its JSON "where" object, the HTML
 * page's bars and slower_than_usual's evidence; a new wait is one row.
 *
 * The figures are sums over processes: wall is their wall times added,
 * so a task whose processes ran side by side can have more wall than its
 * span.  The rest (wall minus the components, never below 0) is sleep
 * of another kind: children, network, timers, locks.
 */
#ifndef JOBTRACE_TIMESPLIT_H
#define JOBTRACE_TIMESPLIT_H

#include <stddef.h>

#include "proc.h"

/* What a split is made from (seconds, summed over processes). */
struct timesplit_in {
	double wall_s;		/* their wall times added */
	double cpu_s;		/* user + system */
	double blkio_s;		/* io.blkio_delay_s */
	struct jt_waits w;	/* their wait objects added */
};

/* Components with a row in timesplit.c's table, the rest after them. */
#define TIMESPLIT_MAX 12

/* One part of the wall time. */
struct timesplit_part {
	const char *name;	/* JSON member and key: "run_queue" */
	const char *label;	/* words: "waiting for a CPU" */
	double s;		/* seconds */
	double pct;		/* of the wall time, 0 when there is none */
};

/* A wall time split: the table's components in its order, "other" last. */
struct timesplit {
	double wall_s;
	size_t n;
	struct timesplit_part part[TIMESPLIT_MAX];
};

/* The name of the last part, the rest of the wall time. */
#define TIMESPLIT_OTHER "other"

/* Split in's wall time into *out (the table's components, then the rest). */
void timesplit_compute(const struct timesplit_in *in, struct timesplit *out);
/* The seconds of in's component number i (i < timesplit_ncomponents()). */
double timesplit_component(const struct timesplit_in *in, size_t i);
/* How many components the table has (without the rest). */
size_t timesplit_ncomponents(void);
/* The name and label of component i, "other" for i == ncomponents. */
const char *timesplit_name(size_t i);
const char *timesplit_label(size_t i);
/*
 * The figures a split is made of, as a job's end record keeps them (its
 * usage object: wall_s, cpu_s, blkio_delay_s, wait.*): how many, the
 * path of figure i under usage ("wait.run_queue_s"), and setting it.
 * Figure 0 is the wall time.
 */
size_t timesplit_nfields(void);
const char *timesplit_field_path(size_t i);
void timesplit_field_set(struct timesplit_in *in, size_t i, double v);
/* The seconds of in's component called name ("memory": what
 * memory_pressure counts); 0 for "other" or a name not in the table. */
double timesplit_component_named(const struct timesplit_in *in,
				 const char *name);
/* The words of the part called name, NULL when there is none. */
const char *timesplit_label_of(const char *name);
/* Add the waits b to a. */
void timesplit_waits_add(struct jt_waits *a, const struct jt_waits *b);

#endif
