// SPDX-License-Identifier: GPL-2.0-or-later
/* classify.c - apply the rules' decision to one process. */
#include <stdlib.h>
#include <string.h>

#include "classify.h"
#include "exetrust.h"
#include "util.h"

/* Gather p's ancestors from the table (nearest first). */
void classify_input(const struct proc_table *t, const struct jt_proc *p,
		    struct rules_input *in)
{
	const struct jt_proc *a = p;

	memset(in, 0, sizeof(*in));
	in->p = p;
	in->cached = t != NULL;
	in->exe_check = t ? exetrust_proc : NULL;
	while (t && in->nanc < RULES_MAX_ANCESTORS &&
	       (a = proc_table_parent(t, a)) != NULL && a != p)
		in->anc[in->nanc++] = a;
}

/* Copy a job field the rules named; an empty one leaves the old value. */
static void set_field(char *dst, size_t len, const char *src)
{
	if (*src)
		util_strlcpy(dst, src, len);
}

/* Run the rules on p and apply the decision. */
enum classify_verdict classify_process(struct rules *r, struct jt_proc *p,
				       const struct proc_table *t,
				       const struct rules_engine_job *ej)
{
	struct rules_decision d;
	struct rules_input in;

	classify_input(t, p, &in);
	in.engine_job = ej;
	if (r) {
		rules_classify(r, &in, &d);
	} else {
		memset(&d, 0, sizeof(d));
		d.include = true;
		d.children = -1;
		util_strlcpy(d.tool, proc_default_tool(p), sizeof(d.tool));
	}
	p->gen++;	/* after an exec or a discovery: what the rules see */
	util_strlcpy(p->tool_name, d.tool, sizeof(p->tool_name));
	util_strlcpy(p->tool_category, d.category, sizeof(p->tool_category));
	util_strlcpy(p->tool_version, d.version, sizeof(p->tool_version));
	if (d.argv) {
		/* the redacted argv replaces the original everywhere */
		free(p->argv);
		p->argv = d.argv;
		p->argv_len = d.argv_len;
		d.argv = NULL;
	}
	/* job.step is the scheduler's; the workflow's step (or, when it
	 * names none, its task id) goes to job.task */
	set_field(p->job.task, sizeof(p->job.task), d.step[0] ? d.step : d.task);
	set_field(p->job.run, sizeof(p->job.run), d.run);
	set_field(p->job.pipeline, sizeof(p->job.pipeline), d.pipeline);
	set_field(p->job.cost_center, sizeof(p->job.cost_center),
		  d.cost_center);
	rules_decision_free(&d);
	if (d.include)
		return CLASSIFY_INCLUDE;
	return d.children == 1 ? CLASSIFY_EXCLUDE : CLASSIFY_EXCLUDE_TREE;
}
