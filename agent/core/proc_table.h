/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * proc_table.h - the processes the agent follows, keyed by (pid, start).
 * A pid that is reused gets a new entry; exited processes leave the table
 * once their record is stored, so memory follows the live process count.
 */
#ifndef JOBTRACE_PROC_TABLE_H
#define JOBTRACE_PROC_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "proc.h"

struct proc_table;

/* Create an empty table; returns 0 or -ENOMEM. */
int proc_table_new(struct proc_table **out);
/* Free the table and every entry; accepts NULL. */
void proc_table_free(struct proc_table *t);
/* The entry for (pid, start_ns), or NULL. */
struct jt_proc *proc_table_lookup(const struct proc_table *t, uint32_t pid,
				  uint64_t start_ns);
/* The parent entry of p, or NULL if not followed. */
struct jt_proc *proc_table_parent(const struct proc_table *t,
				  const struct jt_proc *p);
/*
 * The entry for (pid, start_ns), created zeroed if missing (*created set
 * to 1 then).  Returns NULL only when out of memory.
 */
struct jt_proc *proc_table_get(struct proc_table *t, uint32_t pid,
			       uint64_t start_ns, int *created);
/* Remove and free one entry. */
void proc_table_remove(struct proc_table *t, struct jt_proc *p);
/* Number of entries. */
size_t proc_table_count(const struct proc_table *t);
/* Call fn on every entry; fn may remove the entry it is given. */
void proc_table_foreach(struct proc_table *t,
			void (*fn)(struct jt_proc *p, void *arg), void *arg);
/* Release the strings of a jt_proc (not the struct). */
void proc_free_strings(struct jt_proc *p);
/* Set one of p's strings (exe, argv, cgroup) to a copy of len bytes. */
int proc_set_str(char **field, const char *s, size_t len);
/*
 * The tool name of p when no rule names it: exe's base name, or when the
 * kernel cut exe, argv[0]'s if it agrees with comm; else comm.
 */
const char *proc_default_tool(const struct jt_proc *p);

#endif
