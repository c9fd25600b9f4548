/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * filesq.h - what each process read and wrote, from the `files` member of
 * its process record (doc/records.md): `jobtrace files`, the "Data"
 * section of `jobtrace report` and the progress of running tools.
 *
 * The one definition of a task's inputs, outputs and temporary files
 * (doc/reports.md, "Data"), over the processes of the selection (a job, a
 * run, a process tree), per workflow task (tasks.h: a scheduler client is
 * no process of its task; processes without a task are "(no task)"):
 *
 *  - A process read a file when it opened it for reading (flag "read"),
 *    wrote it when it opened it for writing, creating, appending or
 *    truncating ("write", "create", "append", "truncate").  Directories
 *    are neither.
 *  - The file's size is the latest known one: size_bytes of the record of
 *    the process that ended last among those that touched it.
 *  - A temporary file of the selection: one that a process of the
 *    selection wrote and that the last process to touch it saw deleted
 *    (the record's deleted: unlinked while open, or a file it wrote whose
 *    path was gone at its end).  It is the temporary of each task that
 *    wrote it.
 *  - A task's outputs: the files its processes wrote that are not
 *    temporary.
 *  - A task's inputs: the files its processes read and none of them
 *    wrote.  An input that another task of the selection wrote names that
 *    task ("from"): the lineage of the data; one that no process of the
 *    selection wrote came from outside it.
 *  - Bytes read and written are the sums over the task's processes; a
 *    file only mapped (flag mmap, no bytes read) counts as read.
 *
 * A process record keeps at most files.max_per_process files (the busiest
 * by bytes); files_rest counts the others (and those the rules dropped or
 * whose name was not known), so a task's lists can miss a file: the Data
 * section says how many were left out and their bytes.  Beside them, the
 * bytes its processes read and wrote in all (io.rchar, io.wchar: pipes,
 * sockets and terminals too) against those through files, listed or not:
 * a file the kernel side did not see shows as the difference.
 */
#ifndef JOBTRACE_FILESQ_H
#define JOBTRACE_FILESQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "storeq.h"

struct jbuf;
struct store;

/* The open flags of a files[] element (its "flags" words). */
enum {
	FILESQ_READ = 0x01,
	FILESQ_WRITE = 0x02,
	FILESQ_CREATE = 0x04,
	FILESQ_APPEND = 0x08,
	FILESQ_TRUNCATE = 0x10,
	FILESQ_DIRECTORY = 0x20,
	FILESQ_DIRECT = 0x40,
};
#define FILESQ_WROTE (FILESQ_WRITE | FILESQ_CREATE | FILESQ_APPEND | \
		      FILESQ_TRUNCATE)
#define FILESQ_NO_SIZE UINT64_MAX	/* size_bytes null: not known */

/* One file a process opened (an element of its record's files). */
struct filesq_file {
	char *path;
	unsigned flags;		/* FILESQ_READ ... */
	uint64_t opens, read_bytes, write_bytes;
	uint64_t size;		/* FILESQ_NO_SIZE: not known */
	bool mmap, deleted;
};

/* The files a record did not list: files_rest and files_nonregular
 * (v: the members in their order, as filesq.c reads and writes them). */
struct filesq_rest {
	union {
		struct {
			uint64_t count, opens, read_bytes, write_bytes;
		};
		uint64_t v[4];
	};
};
struct filesq_nonregular {
	union {
		struct {
			uint64_t pipes, sockets, read_bytes, write_bytes;
		};
		uint64_t v[4];
	};
};

/* The progress of a running process: its latest sample's "progress". */
struct filesq_progress {
	char *path;
	uint64_t offset, size;	/* size FILESQ_NO_SIZE: not known */
};

/* One process of the selection, with its files. */
struct filesq_proc {
	char *id, *host, *task, *tool, *category;
	uint32_t pid, ppid;
	double start, end;	/* epoch seconds; end 0: still running */
	uint64_t rchar, wchar;	/* io.rchar, io.wchar: every read and write */
	bool has_files;		/* the record has a files member (not null) */
	struct filesq_file *f;
	size_t nf;
	struct filesq_rest rest;
	struct filesq_nonregular nonreg;
	struct filesq_progress progress;	/* path NULL: none */
};

struct filesq_procs {
	struct filesq_proc *v;
	size_t n;
};

/* One file in a task's Data section (strings borrowed from the procs). */
struct filesq_item {
	const char *path;
	unsigned flags;		/* the task's processes' flags together */
	uint64_t read_bytes, write_bytes, size;
	const char *from;	/* an input: the task that wrote it, else NULL */
	bool from_outside;	/* an input no process of the selection wrote */
};

enum filesq_role { FILESQ_INPUT, FILESQ_OUTPUT, FILESQ_TEMP, FILESQ__ROLES };

/* A task's Data section. */
struct filesq_task {
	const char *name;	/* NULL: processes without a task */
	struct filesq_item *v[FILESQ__ROLES];
	size_t n[FILESQ__ROLES];
	uint64_t rest;		/* files its records left out (files_rest) */
	uint64_t rest_read, rest_write;	/* ... and their bytes */
	uint64_t rchar, wchar;	/* its processes' reads and writes in all */
	uint64_t file_read, file_write;	/* ... through files, listed or not */
	size_t processes;
};

struct filesq_data {
	struct filesq_task *v;
	size_t n;
	size_t with_files;	/* processes whose records have files */
};

/* The flags words of a files[] element; -EINVAL for an unknown word. */
int filesq_flag_parse(const char *w, size_t n, unsigned *flag);
/* The flags as words ("read,write"), sep between them, into out. */
void filesq_flags_text(unsigned flags, const char *sep, char *out,
		       size_t len);
/*
 * Read a record's files (JSON array text, or "null"), files_rest and
 * files_nonregular (object text or NULL) into p.  Elements of another
 * shape are skipped; -EINVAL when a text is not JSON, -ENOMEM.
 */
int filesq_parse(struct filesq_proc *p, const char *files, size_t len,
		 const char *rest, const char *nonreg);
/* Read a sample's progress object text into p->progress. */
int filesq_parse_progress(struct filesq_proc *p, const char *text,
			  size_t len);
/*
 * Load the processes of q (its selector; q->task when set: those of that
 * workflow task only) with their files, and the live processes' latest
 * samples' progress, from st (restricted by storeq_restrict() when
 * q->uid_only: the caller's).
 */
int filesq_load(struct store *st, const char *where,
		const struct report_query *q, struct filesq_procs *out);
void filesq_procs_free(struct filesq_procs *p);
/* The Data sections of p's tasks (the definition above). */
int filesq_data(const struct filesq_procs *p, struct filesq_data *out);
void filesq_data_free(struct filesq_data *d);

/* The member "progress" of a live process: {"path", "offset_bytes",
 * "size_bytes"}, or null when pg has none. */
void filesq_progress_json(struct jbuf *b, const struct filesq_progress *pg);
/* "read 62% of sample.fq.gz (3.1 of 5.0 GiB)", or "" when none. */
void filesq_progress_text(const struct filesq_progress *pg, char *out,
			  size_t len);
/* The Data section as report's text, and as the member "data" of its
 * JSON (and the progress of live processes). */
void filesq_data_print(const struct filesq_data *d,
		       const struct filesq_procs *p, FILE *out);
void filesq_data_json(struct jbuf *b, const struct filesq_data *d,
		      const struct filesq_procs *p);

/* `jobtrace files` of the processes p of q in format (text, json, csv). */
int filesq_print(const struct report_query *q, const struct filesq_procs *p,
		 const char *format, FILE *out);
/* `jobtrace files`: q (with q->task) from st in text, json or csv. */
int filesq_run_store(struct store *st, const char *where,
		     const struct report_query *q, const char *format,
		     FILE *out);

#endif
