/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * classify.h - the seam where rules decide about a process after exec:
 * include or exclude, tool name and category.  For now the tool is the
 * executable's base name; the Lua rules engine plugs in here.
 */
#ifndef JOBTRACE_CLASSIFY_H
#define JOBTRACE_CLASSIFY_H

#include "proc.h"

enum classify_verdict { CLASSIFY_INCLUDE = 0, CLASSIFY_EXCLUDE = 1 };

/* Decide about p (just exec'd or discovered); parent may be NULL. */
enum classify_verdict classify_process(struct jt_proc *p,
				       const struct jt_proc *parent);

#endif
