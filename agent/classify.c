// SPDX-License-Identifier: GPL-2.0-or-later
/* classify.c - default classification: the tool is the program's name. */
#include <string.h>

#include "classify.h"
#include "util.h"

/* Decide about p: include it, named after its executable. */
enum classify_verdict classify_process(struct jt_proc *p,
				       const struct jt_proc *parent)
{
	const char *name = p->exe && *p->exe ? util_basename(p->exe) : p->comm;

	util_strlcpy(p->tool_name, name, sizeof(p->tool_name));
	p->tool_category[0] = '\0';
	return CLASSIFY_INCLUDE;
}
