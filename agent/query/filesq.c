// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * filesq.c - what each process read and wrote: `jobtrace files`, report's
 * Data section and the progress of running tools (filesq.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "filesq.h"
#include "json.h"
#include "json_read.h"
#include "log.h"
#include "store.h"
#include "tasks.h"
#include "util.h"

/* How many files of each list the text shows per task (JSON has all). */
#define TEXT_ROWS 20
/* How many temporary files a task's Data section keeps, largest first. */
#define TEMP_ROWS 10

static const char *const flag_words[] = {
	"read", "write", "create", "append", "truncate", "directory", "direct",
};
#define NFLAGS (sizeof(flag_words) / sizeof(flag_words[0]))

/* The flag of the word w[0..n). */
int filesq_flag_parse(const char *w, size_t n, unsigned *flag)
{
	for (size_t i = 0; i < NFLAGS; i++) {
		if (strlen(flag_words[i]) == n && !memcmp(flag_words[i], w, n)) {
			*flag = 1u << i;
			return 0;
		}
	}
	return -EINVAL;
}

/* The flags as words joined by sep. */
void filesq_flags_text(unsigned flags, const char *sep, char *out, size_t len)
{
	size_t k;

	*out = '\0';
	for (size_t i = 0; i < NFLAGS; i++) {
		if (!(flags & (1u << i)))
			continue;
		k = strlen(out);
		snprintf(out + k, len - k, "%s%s", k ? sep : "", flag_words[i]);
	}
}

/* A copy of the string token s (decoded), or NULL. */
static char *str_dup(const struct jr_str *s)
{
	char *v = malloc(s->len + 1);

	if (v)
		v[jr_str_decode(s, v, JR_BYTES)] = '\0';
	return v;
}

/* Read the flags array at r into *flags (unknown words ignored). */
static int read_flags(struct jr *r, unsigned *flags)
{
	struct jr_str w;
	unsigned f;
	int err;

	err = jr_arr_open(r);
	while (!err && (err = jr_next_elem(r)) > 0) {
		err = jr_str(r, &w);
		if (err == -EDOM)
			err = jr_skip(r);
		else if (!err && !filesq_flag_parse(w.s, w.len, &f))
			*flags |= f;
	}
	return err;
}

/* One member key of a files[] element into f; 1 when it was not one. */
static int file_member(struct jr *r, const struct jr_str *key,
		       struct filesq_file *f, struct jr_str *path)
{
	static const char *const nums[] = {
		"opens", "read_bytes", "write_bytes", "size_bytes"
	};
	uint64_t *num[] = { &f->opens, &f->read_bytes, &f->write_bytes,
			    &f->size };

	if (jr_str_eq(key, "path", 4))
		return jr_str(r, path);
	if (jr_str_eq(key, "flags", 5) && jr_peek(r) == JR_ARR)
		return read_flags(r, &f->flags);
	if (jr_str_eq(key, "mmap", 4))
		return jr_bool(r, &f->mmap);
	if (jr_str_eq(key, "deleted", 7))
		return jr_bool(r, &f->deleted);
	for (size_t i = 0; i < 4; i++)
		if (jr_str_eq(key, nums[i], strlen(nums[i])))
			return jr_u64(r, num[i]);
	return 1;
}

/* Read one files[] element at r; *ok when it had a path. */
static int read_file(struct jr *r, struct filesq_file *f, bool *ok)
{
	struct jr_str key, path = { 0 };
	int err;

	memset(f, 0, sizeof(*f));
	f->size = FILESQ_NO_SIZE;
	*ok = false;
	if (jr_peek(r) != JR_OBJ)
		return jr_skip(r);
	err = jr_obj_open(r);
	while (!err && (err = jr_next_member(r, &key)) > 0) {
		err = file_member(r, &key, f, &path);
		if (err)	/* another member, or a value of another type */
			err = err == 1 || err == -EDOM ? jr_skip(r) : err;
	}
	if (err || !path.s || !path.len)
		return err;
	f->path = str_dup(&path);
	*ok = true;
	return f->path ? 0 : -ENOMEM;
}

/* Start reading text[0..len): 1 when it is null (read), else 0. */
static int start(struct jr *r, const char *text, size_t len)
{
	jr_init(r, text, len);
	if (jr_peek(r) != JR_NULL)
		return 0;
	return jr_null(r) ? -EINVAL : 1;
}

/* Read the files array text into p. */
static int parse_files(struct filesq_proc *p, const char *text, size_t len)
{
	struct filesq_file f, *v;
	struct jr r;
	bool ok;
	int err;

	err = start(&r, text, len);
	if (err)
		return err < 0 ? err : 0;
	err = jr_arr_open(&r);
	p->has_files = !err;
	while (!err && (err = jr_next_elem(&r)) > 0) {
		err = read_file(&r, &f, &ok);
		if (err || !ok)
			continue;
		v = realloc(p->f, (p->nf + 1) * sizeof(*v));
		if (!v) {
			free(f.path);
			return -ENOMEM;
		}
		p->f = v;
		p->f[p->nf++] = f;
	}
	return err ? err : jr_end(&r);
}

/* Read the members names[] of the object text into vals (others
 * skipped, a value of another type left at 0). */
static int parse_counts(const char *text, const char *const *names,
			uint64_t *vals, size_t n)
{
	struct jr_str key;
	struct jr r;
	size_t i;
	int err;

	if (!text)
		return 0;
	jr_init(&r, text, strlen(text));
	err = jr_obj_open(&r);
	while (!err && (err = jr_next_member(&r, &key)) > 0) {
		for (i = 0; i < n; i++)
			if (jr_str_eq(&key, names[i], strlen(names[i])))
				break;
		err = i < n ? jr_u64(&r, &vals[i]) : jr_skip(&r);
		if (err == -EDOM)
			err = jr_skip(&r);
	}
	return err;
}

/* The members of files_rest and files_nonregular, in their v[] order. */
static const char *const rest_names[] = {
	"count", "opens", "read_bytes", "write_bytes"
};
static const char *const nonreg_names[] = {
	"pipes", "sockets", "read_bytes", "write_bytes"
};

/* Read a record's files, files_rest and files_nonregular into p. */
int filesq_parse(struct filesq_proc *p, const char *files, size_t len,
		 const char *rest, const char *nonreg)
{
	int err = 0;

	if (files)
		err = parse_files(p, files, len);
	if (!err)
		err = parse_counts(rest, rest_names, p->rest.v, 4);
	if (!err)
		err = parse_counts(nonreg, nonreg_names, p->nonreg.v, 4);
	return err;
}

/* Read a sample's progress object text into p->progress. */
int filesq_parse_progress(struct filesq_proc *p, const char *text,
			  size_t len)
{
	struct filesq_file f;
	struct jr r;
	bool ok;
	int err;

	err = start(&r, text, len);
	if (err)
		return err < 0 ? err : 0;
	err = read_file(&r, &f, &ok);
	if (err || !ok)
		return err;
	/* the same shape as a file's: path, size_bytes; offset_bytes */
	jr_init(&r, text, len);
	if (!jr_obj_open(&r) && !jr_find(&r, "offset_bytes", 12))
		jr_u64(&r, &f.opens);
	else
		f.opens = 0;
	p->progress = (struct filesq_progress){ f.path, f.opens, f.size };
	return 0;
}

/* A member of j, the record as stored (NULL when it is no JSON). */
#define JX(path) "CASE WHEN json_valid(j) THEN json_extract(j, '" path "') END"
/*
 * The process columns filesq reads, from (SELECT PROC_FROM WHERE ...): the
 * record's JSON as the store makes it again from its columns in C
 * (jobtrace_json()), never the view's json, which one corrupt column (an
 * argv that is no JSON) makes fail the whole statement.
 */
#define PROC_COLUMNS \
	"id, host, pid, ppid, job_task, tool_name, exe, comm, tool_category," \
	" start_time, end_time, " JX("$.files") ", " JX("$.files_rest") ", " \
	JX("$.files_nonregular") ", NULL, rchar, wchar"
#define PROC_FROM \
	"id, host, pid, ppid, job_task, tool_name, exe, comm, tool_category," \
	" start_time, end_time, rchar, wchar, jobtrace_json(id) AS j" \
	" FROM process"

#define SJ(path) STOREQ_SJ(path)

/*
 * The latest sample of each live process of the selection (job ?1, run
 * ?1: %s) that has no process record, in PROC_COLUMNS' order with its
 * progress, rchar and wchar last.
 */
#define LIVE_SAMPLES \
	"SELECT s.id, " SJ("$.host") ", " SJ("$.pid") ", " SJ("$.ppid") ", " \
	SJ("$.job.task") ", " SJ("$.tool.name") ", " SJ("$.exe") ", " \
	SJ("$.comm") ", " SJ("$.tool.category") ", " SJ("$.start_time") \
	", NULL, NULL, NULL, NULL, " SJ("$.progress") ", " SJ("$.io.rchar") \
	", " SJ("$.io.wchar") STOREQ_LIVE_SAMPLES("%s")

/* A text column's bytes, or NULL. */
static const char *col_str(sqlite3_stmt *st, int i)
{
	if (sqlite3_column_type(st, i) != SQLITE_TEXT)
		return NULL;
	return (const char *)sqlite3_column_text(st, i);
}

/* Append the current row of st (PROC_COLUMNS or LIVE_SAMPLES) to the
 * struct filesq_procs arg. */
static int add_proc(sqlite3_stmt *st, void *arg)
{
	struct filesq_procs *out = arg;
	struct filesq_proc *p, *v = realloc(out->v, (out->n + 1) * sizeof(*v));
	const char *files = col_str(st, 11), *pg = col_str(st, 14);
	int err;

	if (!v)
		return -ENOMEM;
	out->v = v;
	p = &v[out->n++];
	memset(p, 0, sizeof(*p));
	p->pid = (uint32_t)storeq_col_u64(st, 2);
	p->ppid = (uint32_t)storeq_col_u64(st, 3);
	p->start = storeq_col_time(st, 9, 0);
	p->end = storeq_col_time(st, 10, 0);
	p->rchar = storeq_col_u64(st, 15);
	p->wchar = storeq_col_u64(st, 16);
	err = storeq_col_dup(st, 0, &p->id);
	if (!err)
		err = storeq_col_dup(st, 1, &p->host);
	if (!err)
		err = storeq_col_dup(st, 4, &p->task);
	if (!err)
		err = storeq_col_dup(st, 8, &p->category);
	if (!err) {
		p->tool = strdup(storeq_tool_name(col_str(st, 5),
						  col_str(st, 6),
						  col_str(st, 7)));
		err = p->tool ? 0 : -ENOMEM;
	}
	if (!err)
		err = filesq_parse(p, files, files ? strlen(files) : 0,
				   col_str(st, 12), col_str(st, 13));
	if (!err && pg)
		err = filesq_parse_progress(p, pg, strlen(pg));
	if (err == -EINVAL)	/* a stored value of the wrong shape */
		err = 0;
	return err;
}

/* Order processes as reports do. */
static int cmp_proc(const void *a, const void *b)
{
	const struct filesq_proc *x = a, *y = b;

	return storeq_proc_order(x->start, x->host, x->pid, x->id,
				 y->start, y->host, y->pid, y->id);
}

/* The processes of q with their files, and the live ones' progress. */
int filesq_load(struct store *st, const char *where,
		const struct report_query *q, struct filesq_procs *out)
{
	const char *task = q->task ? " AND job_task IS ?2" : "";
	const char *live = NULL;
	char sql[2048];
	int err;

	memset(out, 0, sizeof(*out));
	if (q->pid)
		snprintf(sql, sizeof(sql), STOREQ_PID_SUBTREE "SELECT "
			 PROC_COLUMNS " FROM (SELECT " PROC_FROM " WHERE id IN"
			 " (SELECT id FROM sel)%s)", task);
	else
		snprintf(sql, sizeof(sql), "SELECT " PROC_COLUMNS
			 " FROM (SELECT " PROC_FROM " WHERE %s%s)",
			 storeq_process_where(q), task);
	err = storeq_each(st, where, sql, q, add_proc, out);
	if (q->job && *q->job)
		live = STOREQ_LIVE_JOB_SEL;
	else if (q->run && *q->run)
		live = STOREQ_SAMPLE_RUN_SEL;
	if (!err && live) {
		snprintf(sql, sizeof(sql), LIVE_SAMPLES "%s", live,
			 q->task ? " AND " SJ("$.job.task") " IS ?2" : "");
		err = storeq_each(st, where, sql, q, add_proc, out);
	}
	if (err) {
		filesq_procs_free(out);
		return err;
	}
	if (out->n)
		qsort(out->v, out->n, sizeof(*out->v), cmp_proc);
	return 0;
}

/* Free what filesq_load() made. */
void filesq_procs_free(struct filesq_procs *p)
{
	for (size_t i = 0; i < p->n; i++) {
		struct filesq_proc *w = &p->v[i];

		for (size_t j = 0; j < w->nf; j++)
			free(w->f[j].path);
		free(w->f);
		free(w->id);
		free(w->host);
		free(w->task);
		free(w->tool);
		free(w->category);
		free(w->progress.path);
	}
	free(p->v);
	p->v = NULL;
	p->n = 0;
}

/* ---- the Data section --------------------------------------------------- */

/* One path over the whole selection. */
struct pathinfo {
	const char *path;
	uint64_t size;
	double last;		/* the end of the process that gave size */
	bool deleted;		/* as the last process to touch it saw it */
	bool written;		/* by any process of the selection */
	const char *writer;	/* the first task (by start) that wrote it */
	bool writer_set;
};

/* Order pathinfo by path. */
static int cmp_pathinfo(const void *a, const void *b)
{
	return strcmp(((const struct pathinfo *)a)->path,
		      ((const struct pathinfo *)b)->path);
}

/* The task of a process for the Data section: NULL for none or a client. */
static const char *proc_task(const struct filesq_proc *p)
{
	if (!p->task || !*p->task ||
	    (p->category && !strcmp(p->category, TASKS_CLIENT)))
		return NULL;
	return p->task;
}

/* The time a process last touched its files: its end, else now. */
static double proc_last(const struct filesq_proc *p)
{
	return p->end > 0 ? p->end : 1e300;
}

/* Did file f count as read (opened for reading, not a directory)? */
static bool f_read(const struct filesq_file *f)
{
	return (f->flags & FILESQ_READ || f->mmap || f->read_bytes) &&
	       !(f->flags & FILESQ_DIRECTORY);
}

/* Did file f count as written? */
static bool f_wrote(const struct filesq_file *f)
{
	return (f->flags & FILESQ_WROTE || f->write_bytes) &&
	       !(f->flags & FILESQ_DIRECTORY);
}

/* Every path of p once, with what the whole selection did to it. */
static int path_table(const struct filesq_procs *p, struct pathinfo **out,
		      size_t *n)
{
	struct pathinfo *v = NULL, key, *hit;
	size_t cap = 0, k = 0;

	for (size_t i = 0; i < p->n; i++)
		cap += p->v[i].nf;
	v = calloc(cap ? cap : 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < p->n; i++)
		for (size_t j = 0; j < p->v[i].nf; j++)
			v[k++].path = p->v[i].f[j].path;
	qsort(v, k, sizeof(*v), cmp_pathinfo);
	*n = 0;
	for (size_t i = 0; i < k; i++)	/* unique */
		if (!*n || strcmp(v[*n - 1].path, v[i].path))
			v[(*n)++] = (struct pathinfo){ .path = v[i].path,
						       .size = FILESQ_NO_SIZE,
						       .last = -1 };
	/* p is in start order: the first writer is the earliest */
	for (size_t i = 0; i < p->n; i++) {
		const struct filesq_proc *w = &p->v[i];

		for (size_t j = 0; j < w->nf; j++) {
			const struct filesq_file *f = &w->f[j];

			key.path = f->path;
			hit = bsearch(&key, v, *n, sizeof(*v), cmp_pathinfo);
			if (f_wrote(f) && !hit->writer_set) {
				hit->writer = proc_task(w);
				hit->writer_set = true;
			}
			hit->written |= f_wrote(f);
			if (proc_last(w) < hit->last)
				continue;
			hit->last = proc_last(w);
			hit->deleted = f->deleted;
			if (f->size != FILESQ_NO_SIZE)
				hit->size = f->size;
		}
	}
	*out = v;
	return 0;
}

/* The task named name in d (NULL: none), added when missing. */
static struct filesq_task *task_of(struct filesq_data *d, const char *name)
{
	struct filesq_task *v;

	for (size_t i = 0; i < d->n; i++)
		if (name == d->v[i].name ||
		    (name && d->v[i].name && !strcmp(name, d->v[i].name)))
			return &d->v[i];
	v = realloc(d->v, (d->n + 1) * sizeof(*v));
	if (!v)
		return NULL;
	d->v = v;
	memset(&v[d->n], 0, sizeof(*v));
	v[d->n].name = name;
	return &v[d->n++];
}

/* The item of path in list role of t, added when missing. */
static struct filesq_item *item_of(struct filesq_task *t, int role,
				   const char *path)
{
	struct filesq_item *v;

	for (size_t i = 0; i < t->n[role]; i++)
		if (!strcmp(t->v[role][i].path, path))
			return &t->v[role][i];
	v = realloc(t->v[role], (t->n[role] + 1) * sizeof(*v));
	if (!v)
		return NULL;
	t->v[role] = v;
	memset(&v[t->n[role]], 0, sizeof(*v));
	v[t->n[role]].path = path;
	return &v[t->n[role]++];
}

/* Order items by size (else bytes moved), largest first, then path. */
static int cmp_item(const void *a, const void *b)
{
	const struct filesq_item *x = a, *y = b;
	uint64_t sx = x->size != FILESQ_NO_SIZE ? x->size :
		      x->read_bytes + x->write_bytes;
	uint64_t sy = y->size != FILESQ_NO_SIZE ? y->size :
		      y->read_bytes + y->write_bytes;

	if (sx != sy)
		return sx > sy ? -1 : 1;
	return strcmp(x->path, y->path);
}

/* Add f of process w to its task's lists; tw: the task wrote the path. */
static int add_file(struct filesq_task *t, const struct filesq_file *f,
		    const struct pathinfo *pi, bool task_wrote)
{
	int role = pi->written && pi->deleted ? FILESQ_TEMP :
		   task_wrote ? FILESQ_OUTPUT : FILESQ_INPUT;
	struct filesq_item *it;

	if (role == FILESQ_TEMP && !task_wrote)
		role = FILESQ_INPUT;	/* read another task's scratch */
	it = item_of(t, role, f->path);
	if (!it)
		return -ENOMEM;
	it->flags |= f->flags;
	it->read_bytes += f->read_bytes;
	it->write_bytes += f->write_bytes;
	it->size = pi->size;
	if (role == FILESQ_INPUT) {
		it->from_outside = !pi->written;
		it->from = pi->written ? pi->writer : NULL;
	}
	return 0;
}

/* Did a process of task t write path (over all of p)? */
static bool task_wrote(const struct filesq_procs *p, const char *task,
		       const char *path)
{
	for (size_t i = 0; i < p->n; i++) {
		const char *pt = proc_task(&p->v[i]);

		if (pt != task && (!pt || !task || strcmp(pt, task)))
			continue;
		for (size_t j = 0; j < p->v[i].nf; j++)
			if (f_wrote(&p->v[i].f[j]) &&
			    !strcmp(p->v[i].f[j].path, path))
				return true;
	}
	return false;
}

/* The Data sections of p's tasks (filesq.h). */
int filesq_data(const struct filesq_procs *p, struct filesq_data *out)
{
	struct pathinfo *pt = NULL, key, *pi;
	struct filesq_task *t;
	size_t npt = 0;
	int err;

	memset(out, 0, sizeof(*out));
	err = path_table(p, &pt, &npt);
	for (size_t i = 0; !err && i < p->n; i++) {
		const struct filesq_proc *w = &p->v[i];

		if (!w->has_files)
			continue;
		out->with_files++;
		t = task_of(out, proc_task(w));
		if (!t) {
			err = -ENOMEM;
			break;
		}
		t->processes++;
		t->rest += w->rest.count;
		t->rest_read += w->rest.read_bytes;
		t->rest_write += w->rest.write_bytes;
		t->rchar += w->rchar;
		t->wchar += w->wchar;
		t->file_read += w->rest.read_bytes;
		t->file_write += w->rest.write_bytes;
		for (size_t j = 0; !err && j < w->nf; j++) {
			const struct filesq_file *f = &w->f[j];

			t->file_read += f->read_bytes;
			t->file_write += f->write_bytes;
			if (!f_read(f) && !f_wrote(f))
				continue;
			key.path = f->path;
			pi = bsearch(&key, pt, npt, sizeof(*pt), cmp_pathinfo);
			err = add_file(t, f, pi,
				       task_wrote(p, t->name, f->path));
		}
	}
	for (size_t i = 0; !err && i < out->n; i++) {
		for (int r = 0; r < FILESQ__ROLES; r++)
			if (out->v[i].n[r])
				qsort(out->v[i].v[r], out->v[i].n[r],
				      sizeof(struct filesq_item), cmp_item);
		if (out->v[i].n[FILESQ_TEMP] > TEMP_ROWS)
			out->v[i].n[FILESQ_TEMP] = TEMP_ROWS;
	}
	free(pt);
	if (err)
		filesq_data_free(out);
	return err;
}

/* Free what filesq_data() made. */
void filesq_data_free(struct filesq_data *d)
{
	for (size_t i = 0; i < d->n; i++)
		for (int r = 0; r < FILESQ__ROLES; r++)
			free(d->v[i].v[r]);
	free(d->v);
	d->v = NULL;
	d->n = 0;
}

/* ---- printing ------------------------------------------------------------ */

/* s as the text shows it: control bytes and bytes that are not UTF-8 as
 * '?' (a path is any bytes: never a terminal's escape). */
static const char *shown(const char *s, char *buf, size_t len)
{
	util_strlcpy(buf, s ? s : "", len);
	return util_printable(buf);
}

/* A size for the text: "5.0 GiB", or "?" when not known. */
static void size_text(uint64_t v, char *out, size_t len)
{
	if (v == FILESQ_NO_SIZE)
		util_strlcpy(out, "?", len);
	else
		util_human_bytes(v, out, len);
}

/* "read 62% of sample.fq.gz (3.1 of 5.0 GiB)". */
void filesq_progress_text(const struct filesq_progress *pg, char *out,
			  size_t len)
{
	char off[32], size[32], *unit, name[256];

	*out = '\0';
	if (!pg->path)
		return;
	util_human_bytes(pg->offset, off, sizeof(off));
	if (pg->size == FILESQ_NO_SIZE || !pg->size) {
		snprintf(out, len, "read %s of %s", off,
			 shown(util_basename(pg->path), name, sizeof(name)));
		return;
	}
	util_human_bytes(pg->size, size, sizeof(size));
	unit = strchr(off, ' ');	/* "3.1 of 5.0 GiB": one unit */
	if (unit && !strcmp(unit, strchr(size, ' ')))
		*unit = '\0';
	snprintf(out, len, "read %.0f%% of %s (%s of %s)",
		 100.0 * (double)pg->offset / (double)pg->size,
		 shown(util_basename(pg->path), name, sizeof(name)), off, size);
}

static const char *const role_title[FILESQ__ROLES] = {
	"inputs", "outputs", "temporary (largest, created and deleted)",
};

/* A task's files not listed, and its bytes in all against those through
 * files (a file not seen shows as the difference). */
static void print_task_bytes(const struct filesq_task *t, FILE *out)
{
	char rd[32], wr[32], frd[32], fwr[32];

	if (t->rest) {
		util_human_bytes(t->rest_read, rd, sizeof(rd));
		util_human_bytes(t->rest_write, wr, sizeof(wr));
		fprintf(out, "  %" PRIu64 " more files not listed (dropped by"
			" the rules, over files.max_per_process, or no name"
			" known): read %s, written %s\n", t->rest, rd, wr);
	}
	util_human_bytes(t->rchar, rd, sizeof(rd));
	util_human_bytes(t->wchar, wr, sizeof(wr));
	util_human_bytes(t->file_read, frd, sizeof(frd));
	util_human_bytes(t->file_write, fwr, sizeof(fwr));
	fprintf(out, "  in all its processes read %s and wrote %s (pipes,"
		" sockets, terminals too); through files: read %s, written"
		" %s\n", rd, wr, frd, fwr);
}

/* One list of a task's Data section as text. */
static void print_items(const struct filesq_task *t, int role, FILE *out)
{
	char size[32], rd[32], wr[32], from[160], path[4096], task[128];
	size_t n = t->n[role];

	if (!n)
		return;
	fprintf(out, "  %s:\n", role_title[role]);
	for (size_t i = 0; i < n && i < TEXT_ROWS; i++) {
		const struct filesq_item *it = &t->v[role][i];

		size_text(it->size, size, sizeof(size));
		util_human_bytes(it->read_bytes, rd, sizeof(rd));
		util_human_bytes(it->write_bytes, wr, sizeof(wr));
		*from = '\0';
		if (role == FILESQ_INPUT && !it->from_outside)
			snprintf(from, sizeof(from), "  (from %s)",
				 it->from ? shown(it->from, task, sizeof(task)) :
				 "(no task)");
		fprintf(out, "    %10s  read %10s  written %10s  %s%s\n", size,
			rd, wr, shown(it->path, path, sizeof(path)), from);
	}
	if (n > TEXT_ROWS)
		fprintf(out, "    ... and %zu more (jobtrace files)\n",
			n - TEXT_ROWS);
}

/* text in parentheses, wrapped at 76 columns, indented by two. */
static void print_wrapped(const char *text, FILE *out)
{
	const char *p = text;
	size_t col = 0;

	fputs("  (", out);
	col = 3;
	while (*p) {
		size_t n = strcspn(p, " ");

		if (col + n + 1 > 76 && col > 3) {
			fputs("\n   ", out);
			col = 3;
		} else if (p != text) {
			fputc(' ', out);
			col++;
		}
		fwrite(p, 1, n, out);
		col += n;
		p += n;
		p += strspn(p, " ");
	}
	fputs(")\n", out);
}

/*
 * What the Data section can miss, as the kernel side sees files
 * (doc/architecture.md, "Files"): said in the text and the JSON, not left
 * for the reader to guess.
 */
static const char data_note[] =
	"files as the agent saw them open at each sample pass and at each"
	" process's end: unless it ran with files.follow_opens, a file opened"
	" and closed between two passes is not listed (its bytes are only in"
	" rchar and wchar), nor are create and truncate known; bytes are"
	" offsets, not exact after seeks, pread/pwrite, mmap or O_APPEND; a"
	" file deleted after every process that opened it had ended (an rm at"
	" the end of a script, Snakemake's temp()) is an output, not"
	" temporary";

/* The Data section as text, then the progress of live processes. */
void filesq_data_print(const struct filesq_data *d,
		       const struct filesq_procs *p, FILE *out)
{
	char pg[320], name[128];
	bool head = false;

	if (d->with_files) {
		fputs("\nData (per workflow task: inputs, outputs, temporary"
		      " files)\n", out);
		print_wrapped(data_note, out);
		for (size_t i = 0; i < d->n; i++) {
			const struct filesq_task *t = &d->v[i];

			fprintf(out, "%s (%zu process%s)\n",
				t->name ? shown(t->name, name, sizeof(name)) :
				"(no task)", t->processes,
				t->processes == 1 ? "" : "es");
			for (int r = 0; r < FILESQ__ROLES; r++)
				print_items(t, r, out);
			print_task_bytes(t, out);
		}
	} else if (p->n) {
		fputs("\nData: no record here lists files (the agent that wrote"
		      " them had files.enabled\n= false, or was older than"
		      " files): inputs and outputs are not known\n", out);
	}
	for (size_t i = 0; i < p->n; i++) {
		if (!p->v[i].progress.path)
			continue;
		if (!head)
			fputs("\nProgress (running processes, latest"
			      " sample)\n", out);
		head = true;
		filesq_progress_text(&p->v[i].progress, pg, sizeof(pg));
		fprintf(out, "  %7" PRIu32 " %-16s %s\n", p->v[i].pid,
			shown(p->v[i].tool, name, sizeof(name)), pg);
	}
}

/* A size member: the number, or null when not known. */
static void json_size(struct jbuf *b, const char *key, uint64_t v)
{
	json_key(b, key);
	if (v == FILESQ_NO_SIZE)
		json_null(b);
	else
		json_u64(b, v);
}

/* The flags as a JSON array of words. */
static void json_flags(struct jbuf *b, unsigned flags)
{
	json_key(b, "flags");
	json_arr_open(b);
	for (size_t i = 0; i < NFLAGS; i++)
		if (flags & (1u << i))
			json_str(b, flag_words[i]);
	json_arr_close(b);
}

/* One list of a task's Data section as a JSON array member. */
static void json_items(struct jbuf *b, const struct filesq_task *t, int role)
{
	static const char *const keys[] = { "inputs", "outputs", "temporary" };

	json_key(b, keys[role]);
	json_arr_open(b);
	for (size_t i = 0; i < t->n[role]; i++) {
		const struct filesq_item *it = &t->v[role][i];

		json_obj_open(b);
		json_kv_str(b, "path", it->path);
		json_flags(b, it->flags);
		json_kv_u64(b, "read_bytes", it->read_bytes);
		json_kv_u64(b, "write_bytes", it->write_bytes);
		json_size(b, "size_bytes", it->size);
		if (role == FILESQ_INPUT) {
			json_key(b, "from");
			if (it->from_outside)
				json_null(b);
			else
				json_str(b, it->from ? it->from : "");
		}
		json_obj_close(b);
	}
	json_arr_close(b);
}

/* The progress object of a live process. */
void filesq_progress_json(struct jbuf *b, const struct filesq_progress *pg)
{
	json_key(b, "progress");
	if (!pg->path) {
		json_null(b);
		return;
	}
	json_obj_open(b);
	json_kv_str(b, "path", pg->path);
	json_kv_u64(b, "offset_bytes", pg->offset);
	json_size(b, "size_bytes", pg->size);
	json_obj_close(b);
}

/* "data": {"tasks": [...], "progress": [...]} of report's JSON. */
void filesq_data_json(struct jbuf *b, const struct filesq_data *d,
		      const struct filesq_procs *p)
{
	json_key(b, "data");
	json_obj_open(b);
	json_kv_str(b, "note", data_note);
	json_key(b, "tasks");
	json_arr_open(b);
	for (size_t i = 0; i < d->n; i++) {
		const struct filesq_task *t = &d->v[i];

		json_obj_open(b);
		json_key(b, "task");
		if (t->name)
			json_str(b, t->name);
		else
			json_null(b);
		json_kv_u64(b, "processes", t->processes);
		for (int r = 0; r < FILESQ__ROLES; r++)
			json_items(b, t, r);
		json_kv_u64(b, "files_not_listed", t->rest);
		json_kv_u64(b, "not_listed_read_bytes", t->rest_read);
		json_kv_u64(b, "not_listed_write_bytes", t->rest_write);
		json_kv_u64(b, "rchar", t->rchar);
		json_kv_u64(b, "wchar", t->wchar);
		json_kv_u64(b, "file_read_bytes", t->file_read);
		json_kv_u64(b, "file_write_bytes", t->file_write);
		json_obj_close(b);
	}
	json_arr_close(b);
	json_key(b, "progress");
	json_arr_open(b);
	for (size_t i = 0; i < p->n; i++) {
		if (!p->v[i].progress.path)
			continue;
		json_obj_open(b);
		json_kv_u64(b, "pid", p->v[i].pid);
		json_kv_str(b, "tool", p->v[i].tool);
		filesq_progress_json(b, &p->v[i].progress);
		json_obj_close(b);
	}
	json_arr_close(b);
	json_obj_close(b);
}

/* ---- jobtrace files -------------------------------------------------------- */

/* One process and its files as text. */
static void text_proc(const struct filesq_proc *w, FILE *out)
{
	char size[32], rd[32], wr[32], fl[96], pg[320], path[4096];
	char tool[128], task[128];

	fprintf(out, "\npid %" PRIu32 "  %s  task %s%s\n", w->pid,
		shown(w->tool, tool, sizeof(tool)),
		w->task ? shown(w->task, task, sizeof(task)) : "(none)",
		w->end > 0 ? "" : "  (running)");
	if (!w->has_files && !w->progress.path)
		fputs("  (no files recorded)\n", out);
	for (size_t j = 0; j < w->nf; j++) {
		const struct filesq_file *f = &w->f[j];

		size_text(f->size, size, sizeof(size));
		util_human_bytes(f->read_bytes, rd, sizeof(rd));
		util_human_bytes(f->write_bytes, wr, sizeof(wr));
		filesq_flags_text(f->flags, ",", fl, sizeof(fl));
		fprintf(out, "  %-22s %5" PRIu64 " %10s %10s %10s  %s%s%s\n",
			fl, f->opens, rd, wr, size,
			shown(f->path, path, sizeof(path)),
			f->mmap ? "  (mmap)" : "",
			f->deleted ? "  (deleted)" : "");
	}
	if (w->rest.count) {
		util_human_bytes(w->rest.read_bytes, rd, sizeof(rd));
		util_human_bytes(w->rest.write_bytes, wr, sizeof(wr));
		fprintf(out, "  %-22s %5" PRIu64 " %10s %10s %10s  (%" PRIu64
			" more files)\n", "", w->rest.opens, rd, wr, "",
			w->rest.count);
	}
	if (w->nonreg.pipes || w->nonreg.sockets) {
		util_human_bytes(w->nonreg.read_bytes, rd, sizeof(rd));
		util_human_bytes(w->nonreg.write_bytes, wr, sizeof(wr));
		fprintf(out, "  %-22s %5s %10s %10s %10s  (%" PRIu64 " pipes, %"
			PRIu64 " sockets)\n", "", "", rd, wr, "",
			w->nonreg.pipes, w->nonreg.sockets);
	}
	filesq_progress_text(&w->progress, pg, sizeof(pg));
	if (*pg)
		fprintf(out, "  %s\n", pg);
}

/* Write s as a CSV field (RFC 4180). */
static void csv_str(FILE *out, const char *s)
{
	storeq_csv_field(out, s ? s : "");
	fputc(',', out);
}

/* One process's files as CSV lines. */
static void csv_proc(const struct filesq_proc *w, FILE *out)
{
	char fl[96], pid[24];

	snprintf(pid, sizeof(pid), "%" PRIu32, w->pid);
	for (size_t j = 0; j < w->nf; j++) {
		const struct filesq_file *f = &w->f[j];

		csv_str(out, w->host);
		csv_str(out, pid);
		csv_str(out, w->task);
		csv_str(out, w->tool);
		csv_str(out, f->path);
		filesq_flags_text(f->flags, " ", fl, sizeof(fl));
		csv_str(out, fl);
		fprintf(out, "%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",", f->opens,
			f->read_bytes, f->write_bytes);
		if (f->size != FILESQ_NO_SIZE)
			fprintf(out, "%" PRIu64, f->size);
		fprintf(out, ",%s,%s\n", f->mmap ? "true" : "false",
			f->deleted ? "true" : "false");
	}
}

/* The member key: an object of the 4 counts v named by names. */
static void json_counts(struct jbuf *b, const char *key,
			const char *const *names, const uint64_t *v)
{
	json_key(b, key);
	json_obj_open(b);
	for (size_t i = 0; i < 4; i++)
		json_kv_u64(b, names[i], v[i]);
	json_obj_close(b);
}

/* One process and its files as a JSON object. */
static void json_proc(struct jbuf *b, const struct filesq_proc *w)
{
	json_obj_open(b);
	json_kv_str(b, "id", w->id);
	json_kv_str(b, "host", w->host);
	json_kv_u64(b, "pid", w->pid);
	json_kv_u64(b, "ppid", w->ppid);
	json_kv_str(b, "task", w->task);
	json_kv_str(b, "tool", w->tool);
	json_kv_bool(b, "running", !(w->end > 0));
	json_key(b, "files");
	json_arr_open(b);
	for (size_t j = 0; j < w->nf; j++) {
		const struct filesq_file *f = &w->f[j];

		json_obj_open(b);
		json_kv_str(b, "path", f->path);
		json_flags(b, f->flags);
		json_kv_u64(b, "opens", f->opens);
		json_kv_u64(b, "read_bytes", f->read_bytes);
		json_kv_u64(b, "write_bytes", f->write_bytes);
		json_size(b, "size_bytes", f->size);
		json_kv_bool(b, "mmap", f->mmap);
		json_kv_bool(b, "deleted", f->deleted);
		json_obj_close(b);
	}
	json_arr_close(b);
	json_counts(b, "files_rest", rest_names, w->rest.v);
	json_counts(b, "files_nonregular", nonreg_names, w->nonreg.v);
	filesq_progress_json(b, &w->progress);
	json_obj_close(b);
}

/* `jobtrace files` as JSON: the query, the processes, the Data section. */
static int print_json(const struct report_query *q,
		      const struct filesq_procs *p, FILE *out)
{
	struct filesq_data d;
	struct jbuf b;
	int err;

	err = filesq_data(p, &d);
	if (err)
		return err;
	jbuf_init(&b);
	json_obj_open(&b);
	storeq_json_query(&b, "query", q, NULL);
	json_key(&b, "processes");
	json_arr_open(&b);
	for (size_t i = 0; i < p->n; i++)
		json_proc(&b, &p->v[i]);
	json_arr_close(&b);
	filesq_data_json(&b, &d, p);
	json_obj_close(&b);
	err = storeq_json_print(&b, out);
	filesq_data_free(&d);
	return err;
}

/* `jobtrace files`: the processes p of q in format. */
int filesq_print(const struct report_query *q, const struct filesq_procs *p,
		 const char *format, FILE *out)
{
	char sel[256];

	if (!strcmp(format, "json"))
		return print_json(q, p, out);
	if (!strcmp(format, "csv")) {
		fputs("host,pid,task,tool,path,flags,opens,read_bytes,"
		      "write_bytes,size_bytes,mmap,deleted\n", out);
		for (size_t i = 0; i < p->n; i++)
			csv_proc(&p->v[i], out);
		return 0;
	}
	storeq_describe(q, sel, sizeof(sel));
	fprintf(out, "Files of %s%s%s: %zu processes\n", sel,
		q->task ? ", task " : "", q->task ? q->task : "", p->n);
	fprintf(out, "  %-22s %5s %10s %10s %10s  %s\n", "FLAGS", "OPENS",
		"READ", "WRITTEN", "SIZE", "PATH");
	for (size_t i = 0; i < p->n; i++)
		text_proc(&p->v[i], out);
	return 0;
}

/* `jobtrace files`: q over st in text, json or csv. */
int filesq_run_store(struct store *st, const char *where,
		     const struct report_query *q, const char *format,
		     FILE *out)
{
	struct filesq_procs p;
	char sel[256];
	int err;

	err = storeq_restrict(st, where, q);
	if (!err)
		err = filesq_load(st, where, q, &p);
	if (err)
		return err;
	if (!p.n) {
		storeq_describe(q, sel, sizeof(sel));
		fprintf(stderr, "jobtrace: no records for %s%s%s in %s\n", sel,
			q->task ? ", task " : "", q->task ? q->task : "",
			where);
		err = -ENOENT;
	} else {
		err = filesq_print(q, &p, format, out);
	}
	filesq_procs_free(&p);
	return storeq_written(out, "files", err);
}
