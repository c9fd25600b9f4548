/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * child.h - the agent's background children (`scontrol show job`, the
 * children that answer report and export): a bounded table, reaped
 * without blocking on every tick, killed when past their deadline.  Only
 * the event loop's thread uses a table.
 */
#ifndef JOBTRACE_CHILD_H
#define JOBTRACE_CHILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define CHILD_MAX 32

/* One child: who it works for (a uid, or 0) and until when. */
struct child {
	pid_t pid;		/* 0: a free slot */
	uint32_t owner;
	bool killed;
	uint64_t deadline_ns;	/* CLOCK_MONOTONIC */
	char what[64];		/* for messages: "scontrol show job 42" */
};

struct children {
	struct child v[CHILD_MAX];
};

/* Track pid until it is reaped; -EBUSY when the table is full. */
int children_add(struct children *c, pid_t pid, uint32_t owner,
		 uint64_t deadline_ns, const char *what);
/* Children not reaped yet, of owner (or of anyone when all). */
size_t children_count(const struct children *c, bool all, uint32_t owner);
/* Kill pid now (it is reaped by a later children_reap()). */
void children_kill(struct children *c, pid_t pid);
/* Reap the children that ended; kill those past their deadline. */
void children_reap(struct children *c, uint64_t now_ns);

#endif
