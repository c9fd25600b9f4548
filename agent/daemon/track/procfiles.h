/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * procfiles.h - the kernel's file events of a tracked process into its
 * files (core/files.h), and what /proc says of them.
 *
 * An open's path is resolved when its event is decoded: a relative path
 * against the process's folder (/proc/PID/cwd, or the folder fd of an
 * openat), an fd whose open was not seen (inherited) by its link
 * /proc/PID/fd/N.  Both are read while the process runs, after the open:
 * exact unless the process changed its folder (or closed the fd) between
 * the open and the decode, usually well under a second; then the path is
 * not known and the file is counted in files_rest, never guessed.
 * Progress reads /proc/PID/fdinfo/N (pos) and stat()s /proc/PID/fd/N at
 * the sample's time: never a file's contents.
 */
#ifndef JOBTRACE_PROCFILES_H
#define JOBTRACE_PROCFILES_H

#include <stdbool.h>

#include "events.h"
#include "files.h"
#include "proc.h"
#include "proc_table.h"
#include "rules.h"

/* The kernel's dev_t (MAJOR << 20 | MINOR) as stat(2)'s st_dev. */
uint64_t procfiles_dev(uint64_t kdev);
/* Where the name of an opened file came from: jobtrace status counts each
 * open event (inherited fds too), a diagnostic, not the records' opens. */
enum procfiles_named {
	PROCFILES_NAMED_OWN,	   /* the kernel's, or the process's /proc */
	PROCFILES_NAMED_PARENT,	   /* the parent's open (JT_FS_NAME_PARENT) */
	PROCFILES_NAMED_PARENT_FD, /* the parent's /proc fd link (same) */
	PROCFILES_UNNAMED,	   /* none (the file has no path unless
				    * another open of it named it) */
	PROCFILES_NAMED_NR
};
/* A file p opened (JT_EV_FOPEN); parent: p's parent (NULL: not
 * tracked), which names it for JT_FS_NAME_PARENT.  Where its name came
 * from (enum procfiles_named) or -ENOMEM. */
int procfiles_open(struct jt_proc *p, const struct jt_proc *parent,
		   const struct jt_ev_fopen *e);
/* ... closed, or had open at its end (JT_EV_FCLOSE). */
void procfiles_close(struct jt_proc *p, const struct jt_ev_fclose *e);
/*
 * p has ended (e: its exit event, NULL when lost): its record's files
 * into p->files (malloc'd), after the rules (r may be NULL: no path is
 * kept), at most cap listed.  0 or -ENOMEM (then p->files stays NULL).
 */
int procfiles_finish(struct jt_proc *p, const struct jt_ev_exit *e,
		     struct rules *r, const struct proc_table *t, unsigned cap);
/* Free p->files. */
void procfiles_free(struct jt_proc *p);
/*
 * p->progress at sample pass gen: the largest regular file p has open for
 * reading only whose path the rules keep, its read offset and size from
 * /proc (unset when there is none); the pass before's when p used no CPU
 * and read nothing since, and had no live child then (progress.child_gen,
 * which the pass sets on the parent of each live process).
 */
void procfiles_progress(struct jt_proc *p, struct rules *r,
			const struct proc_table *t, unsigned gen);
/* "read 62% of sample.fq.gz (3.1 of 5.0 GiB)" of p's progress into buf. */
void procfiles_progress_text(const struct jt_progress *pg, char *buf,
			     size_t len);

#endif
