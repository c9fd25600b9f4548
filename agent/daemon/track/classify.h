/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * classify.h - apply the rules' decision to a process that just exec'd (or
 * was found running): tool name, category and version, redacted argv,
 * job fields from the process tree, and whether to follow it at all.
 */
#ifndef JOBTRACE_CLASSIFY_H
#define JOBTRACE_CLASSIFY_H

#include "proc.h"
#include "proc_table.h"
#include "rules.h"

enum classify_verdict {
	CLASSIFY_INCLUDE = 0,
	CLASSIFY_EXCLUDE = 1,		/* this process only */
	CLASSIFY_EXCLUDE_TREE = 2,	/* it and its descendants */
};

/* Gather p's ancestors from the table into in (nearest first). */
void classify_input(const struct proc_table *t, const struct jt_proc *p,
		    struct rules_input *in);
/* Run the rules on p (r may be NULL: defaults) and apply the decision;
 * ej: what the workflow engine says of p's job, NULL: nothing. */
enum classify_verdict classify_process(struct rules *r, struct jt_proc *p,
				       const struct proc_table *t,
				       const struct rules_engine_job *ej);

#endif
