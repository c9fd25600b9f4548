// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * tasks.c - a workflow task's processes, instances and memory peak: the
 * one definition (tasks.h) behind report, cost and rightsize.
 *
 * Linear in the processes but for the sorts: the topmost process of each
 * is found with one walk up its parent links that stops at a process
 * already placed (a loop of hostile links is cut where the walk meets
 * itself); the memory peak is a sweep over start and end times.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "log.h"
#include "storeq.h"
#include "tasks.h"

/* Is a process with this task and tool category one of a task's? */
bool tasks_member(const char *task, const char *category)
{
	return task && *task && !(category && !strcmp(category, TASKS_CLIENT));
}

/* NULL-tolerant string order (NULL first). */
static int cmp_nstr(const char *a, const char *b)
{
	if (!a || !b)
		return !!a - !!b;
	return strcmp(a, b);
}

/* Work arrays of one build. */
struct build {
	const struct tasks_proc *p;
	size_t n;
	long *link;		/* parent in the same instance, -1 */
	long *root;		/* topmost process, -1: not a task's */
	bool *own;		/* its job is its instance's own */
};

/* The parent of i in the same instance, or -1. */
static long link_of(const struct build *b, long i)
{
	const struct tasks_proc *w = &b->p[i];
	long a = w->parent;

	if (a < 0 || a >= (long)b->n || a == i ||
	    !tasks_member(b->p[a].task, b->p[a].category))
		return -1;
	if (strcmp(b->p[a].task, w->task) || cmp_nstr(b->p[a].job, w->job) ||
	    cmp_nstr(b->p[a].host, w->host))
		return -1;
	return a;
}

/* The topmost process of every task process; a loop of links is cut
 * where the walk meets a process it placed on this walk.  stack has room
 * for n. */
static int find_roots(struct build *b, long *stack)
{
	enum { NEW, ACTIVE, DONE };
	unsigned char *state = calloc(b->n ? b->n : 1, 1);

	if (!state)
		return -ENOMEM;
	for (size_t i = 0; i < b->n; i++) {
		size_t k = 0;
		long j = (long)i, r;

		if (b->link[i] == -2 || state[i] == DONE)
			continue;	/* not a task's process, or placed */
		while (j >= 0 && state[j] == NEW) {
			state[j] = ACTIVE;
			stack[k++] = j;
			j = b->link[j];
		}
		if (j >= 0 && state[j] == ACTIVE) {
			b->link[j] = -1;	/* a loop: j is its top */
			r = j;
		} else if (j >= 0) {
			r = b->root[j];
		} else {
			r = stack[k - 1];
		}
		while (k) {
			j = stack[--k];
			b->root[j] = r;
			state[j] = DONE;
		}
	}
	free(state);
	return 0;
}

/* Order task process indices by host, job, then step. */
static int cmp_job(const void *x, const void *y, void *arg)
{
	const struct tasks_proc *p = arg;
	const struct tasks_proc *a = &p[*(const long *)x];
	const struct tasks_proc *c = &p[*(const long *)y];
	int d = cmp_nstr(a->host, c->host);

	if (!d)
		d = cmp_nstr(a->job, c->job);
	return d ? d : cmp_nstr(a->step, c->step);
}

/* Is the job of idx[0..n) (sorted by step) its task's own: one task, at
 * most one top in each step? */
static bool own_job(const struct build *b, const long *idx, size_t n)
{
	size_t tops = 0;

	if (!b->p[idx[0]].job)
		return false;
	for (size_t k = 0; k < n; k++) {
		const struct tasks_proc *w = &b->p[idx[k]];

		if (strcmp(w->task, b->p[idx[0]].task))
			return false;
		if (k && cmp_nstr(w->step, b->p[idx[k - 1]].step))
			tops = 0;	/* a new step */
		tops += b->root[idx[k]] == idx[k];
		if (tops > 1)
			return false;
	}
	return true;
}

/* Find the jobs that are one instance's own and make each one instance:
 * its processes' top becomes the job's first top.  idx holds the m task
 * processes. */
static void find_own(struct build *b, long *idx, size_t m)
{
	qsort_r(idx, m, sizeof(*idx), cmp_job, (void *)b->p);
	for (size_t i = 0; i < m;) {
		const struct tasks_proc *w = &b->p[idx[i]];
		size_t j = i + 1;
		long top = -1;

		while (j < m && !cmp_nstr(b->p[idx[j]].host, w->host) &&
		       !cmp_nstr(b->p[idx[j]].job, w->job))
			j++;
		if (own_job(b, idx + i, j - i)) {
			for (size_t k = i; k < j; k++) {
				long r = b->root[idx[k]];

				if (top < 0 || b->p[r].start < b->p[top].start ||
				    (b->p[r].start == b->p[top].start && r < top))
					top = r;
			}
			for (size_t k = i; k < j; k++) {
				b->own[idx[k]] = true;
				b->root[idx[k]] = top;
			}
		}
		i = j;
	}
}

/* One change of the memory in use: at time t, by delta bytes. */
struct event {
	double t;
	int64_t delta;
};

/* Order events by time, an end before a start at the same time. */
static int cmp_event(const void *a, const void *b)
{
	const struct event *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return (x->delta > y->delta) - (x->delta < y->delta);
}

/* The largest sum of RSS of the processes m[0..n) alive together, the
 * engine's left out unless engine; ev has room for 2n. */
static uint64_t sweep(const struct tasks_proc *p, const long *m, size_t n,
		      bool engine, struct event *ev)
{
	int64_t cur = 0, max = 0;
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		const struct tasks_proc *w = &p[m[i]];
		bool is_engine = w->category &&
				 !strcmp(w->category, TASKS_ENGINE);
		int64_t rss = w->rss > INT64_MAX / 4 ? INT64_MAX / 4 :
			      (int64_t)w->rss;

		if ((is_engine && !engine) || !rss)
			continue;
		ev[k++] = (struct event){ w->start, rss };
		ev[k++] = (struct event){ w->end, -rss };
	}
	qsort(ev, k, sizeof(*ev), cmp_event);
	for (size_t i = 0; i < k; i++) {
		cur += ev[i].delta;
		if (cur > max)
			max = cur;
	}
	return (uint64_t)max;
}

/* Order task process indices by task, then instance (its top's start,
 * then its top), then start. */
static int cmp_inst(const void *x, const void *y, void *arg)
{
	const struct build *b = arg;
	long i = *(const long *)x, j = *(const long *)y;
	long ri = b->root[i], rj = b->root[j];
	int c = strcmp(b->p[i].task, b->p[j].task);

	if (c)
		return c;
	if (ri != rj) {
		if (b->p[ri].start != b->p[rj].start)
			return b->p[ri].start < b->p[rj].start ? -1 : 1;
		return ri < rj ? -1 : 1;
	}
	if (b->p[i].start != b->p[j].start)
		return b->p[i].start < b->p[j].start ? -1 : 1;
	return (i > j) - (i < j);
}

/* Fill instance in from its processes m[0..n) (m[0] its earliest). */
static void inst_fill(const struct build *b, struct tasks_inst *in,
		      const long *m, size_t n, struct event *ev)
{
	long top = b->root[m[0]];
	const struct tasks_proc *t = &b->p[top];

	memset(in, 0, sizeof(*in));
	in->task = t->task;
	in->top = top;
	in->procs = n;
	in->start = b->p[m[0]].start;
	in->end = b->p[m[0]].end;
	for (size_t i = 0; i < n; i++) {
		const struct tasks_proc *w = &b->p[m[i]];

		if (w->start < in->start)
			in->start = w->start;
		if (w->end > in->end)
			in->end = w->end;
		in->cpu += w->cpu;
	}
	in->own_job = b->own[top];
	if (in->own_job) {
		in->req_cpus = t->job_cpus;
		in->req_mem = t->job_mem;
	}
	if (in->own_job && t->job_peak) {
		in->mem = t->job_peak;
		in->mem_job = true;
		return;
	}
	in->mem = sweep(b->p, m, n, false, ev);
	if (!in->mem)
		in->mem = sweep(b->p, m, n, true, ev);
}

/* Group the processes into instances (see tasks.h). */
int tasks_build(const struct tasks_proc *p, size_t n, struct tasks *t)
{
	size_t cap = n ? n : 1, m = 0;
	struct build b = { p, n, NULL, NULL, NULL };
	long *idx = malloc(cap * sizeof(*idx));
	struct event *ev = malloc(cap * 2 * sizeof(*ev));
	int err = -ENOMEM;

	memset(t, 0, sizeof(*t));
	b.link = malloc(cap * sizeof(*b.link));
	b.root = malloc(cap * sizeof(*b.root));
	b.own = calloc(cap, sizeof(*b.own));
	t->of = malloc(cap * sizeof(*t->of));
	t->inst = calloc(cap, sizeof(*t->inst));
	if (!idx || !ev || !b.link || !b.root || !b.own || !t->of || !t->inst)
		goto out;
	for (size_t i = 0; i < n; i++) {
		t->of[i] = -1;
		b.root[i] = -1;
		b.link[i] = -2;	/* not a task's process */
		if (tasks_member(p[i].task, p[i].category)) {
			b.link[i] = link_of(&b, (long)i);
			idx[m++] = (long)i;
		}
	}
	if (find_roots(&b, t->of))	/* of[] as the walk's stack */
		goto out;
	for (size_t i = 0; i < n; i++)
		t->of[i] = -1;
	find_own(&b, idx, m);
	qsort_r(idx, m, sizeof(*idx), cmp_inst, &b);
	for (size_t i = 0; i < m;) {
		size_t j = i + 1;

		while (j < m && b.root[idx[j]] == b.root[idx[i]])
			j++;
		inst_fill(&b, &t->inst[t->n], idx + i, j - i, ev);
		for (size_t k = i; k < j; k++)
			t->of[idx[k]] = (long)t->n;
		t->n++;
		i = j;
	}
	err = 0;
out:
	free(idx);
	free(ev);
	free(b.link);
	free(b.root);
	free(b.own);
	if (err)
		tasks_free(t);
	return err;
}

/* Free what tasks_build() made. */
void tasks_free(struct tasks *t)
{
	free(t->of);
	free(t->inst);
	memset(t, 0, sizeof(*t));
}

/* CPU over wall time. */
double tasks_cores(const struct tasks_inst *in)
{
	double wall = in->end - in->start;

	return wall > 0 ? in->cpu / wall : 0;
}

/* Order process indices by job id (NULL first). */
static int cmp_jobid(const void *x, const void *y, void *arg)
{
	const struct tasks_proc *p = arg;

	return cmp_nstr(p[*(const long *)x].job, p[*(const long *)y].job);
}

/* Fill the job figures of the processes idx[0..n) of one job from the
 * rows of st (its end records, oldest first: the latest wins). */
static int fill_job(sqlite3 *db, const char *where, sqlite3_stmt *st,
		    struct tasks_proc *p, const long *idx, size_t n)
{
	int rc;

	sqlite3_reset(st);
	sqlite3_bind_text(st, 1, p[idx[0]].job, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *host = (const char *)sqlite3_column_text(st, 0);

		for (size_t k = 0; k < n; k++) {
			struct tasks_proc *w = &p[idx[k]];

			if (cmp_nstr(w->host, host))
				continue;
			w->job_cpus = storeq_col_u64(st, 1);
			w->job_mem = storeq_col_u64(st, 2);
			w->job_peak = storeq_col_u64(st, 3);
		}
	}
	return storeq_step_done(db, where, rc);
}

/* Fill the task processes' job figures from their job end records. */
int tasks_load_jobs(sqlite3 *db, const char *where, struct tasks_proc *p,
		    size_t n)
{
	static const char sql[] =
		"SELECT json_extract(json, '$.host'),"
		" json_extract(json, '$.allocation.cpus'),"
		" json_extract(json, '$.allocation.mem_bytes'),"
		" json_extract(json, '$.usage.mem_peak_bytes')"
		" FROM record WHERE type = 'job' AND job_id = ?1"
		" AND json_extract(json, '$.phase') = 'end' ORDER BY time, id";
	long *idx = malloc((n ? n : 1) * sizeof(*idx));
	sqlite3_stmt *st = NULL;
	size_t m = 0;
	int err = 0;

	if (!idx)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		p[i].job_cpus = p[i].job_mem = p[i].job_peak = 0;
		if (p[i].job && tasks_member(p[i].task, p[i].category))
			idx[m++] = (long)i;
	}
	if (m && sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		log_error("database %s: %s", where, sqlite3_errmsg(db));
		err = -EIO;
	}
	qsort_r(idx, m, sizeof(*idx), cmp_jobid, p);
	for (size_t i = 0; !err && i < m;) {
		size_t j = i + 1;

		while (j < m && !cmp_jobid(&idx[i], &idx[j], p))
			j++;
		err = fill_job(db, where, st, p, idx + i, j - i);
		i = j;
	}
	sqlite3_finalize(st);
	free(idx);
	return err;
}

/* The instances of loaded processes (see tasks.h). */
int tasks_of_procs(sqlite3 *db, const char *where,
		   const struct storeq_proc *v, size_t n,
		   struct tasks_proc **tp, struct tasks *t)
{
	struct tasks_proc *p = calloc(n ? n : 1, sizeof(*p));
	int err;

	*tp = p;
	if (!p)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct storeq_proc *w = &v[i];

		p[i] = (struct tasks_proc){
			.parent = w->parent, .host = w->host, .job = w->job,
			.step = w->step, .task = w->task,
			.category = w->category, .start = w->start,
			.end = w->end, .cpu = w->cpu_user + w->cpu_sys,
			.rss = w->peak_rss,
		};
	}
	err = tasks_load_jobs(db, where, p, n);
	if (!err)
		err = tasks_build(p, n, t);
	return err;
}
