// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * topq.c - the model of `jobtrace top` and its plain frames (topq.h).
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "json.h"
#include "json_read.h"
#include "log.h"
#include "rightsize.h"
#include "squeueq.h"
#include "store.h"
#include "tasks.h"
#include "topq.h"
#include "util.h"

/* A run to show: job.run, else (run NULL) the job. */
struct key {
	char *run;
	char *job;
};

/* The expected wall time of one task of a pipeline. */
struct hist {
	const char *task;	/* borrowed from the history's rows */
	double median;
	size_t n;
	bool seen;		/* started in the run being built */
};

/* What one run's lines are built from. */
struct build {
	struct topq *t;
	struct store *st;
	const char *where;
	const struct report_query *q;
	struct storeq_proc *v;	/* the run's rows */
	size_t n;
	struct tasks_proc *tp;
	struct tasks tk;
	struct storeq_proc *hv;	/* the pipeline's rows */
	size_t hn;
	struct tasks_proc *htp;
	struct tasks htk;
	struct hist *h;
	size_t nh;
	long *line_of;		/* per row: its process line */
	sqlite3_stmt *samples;	/* two latest samples of one process */
	sqlite3_stmt *prev;	/* the sample before a live row's latest */
};

static const char *const state_names[] = {
	[TOPQ_RUNNING] = "running", [TOPQ_STALLED] = "stalled",
	[TOPQ_WAITING] = "waiting", [TOPQ_DONE] = "done",
	[TOPQ_FAILED] = "failed", [TOPQ_OOM] = "oom-killed",
	[TOPQ_LOST] = "lost",
};

/* The word of a state. */
const char *topq_state_name(enum topq_state s)
{
	return s <= TOPQ_LOST ? state_names[s] : "?";
}

/* A duration: "45s", "4m12s", "2h03m", "3d04h". */
void topq_duration(double s, char *out, size_t len)
{
	/* past 1e15 s (any real duration is far below) it says that much */
	unsigned long v = s > 0 && isfinite(s) ?
			  (unsigned long)(s < 1e15 ? s + 0.5 : 1e15) : 0;

	if (v < 60)
		snprintf(out, len, "%lus", v);
	else if (v < 3600)
		snprintf(out, len, "%lum%02lus", v / 60, v % 60);
	else if (v < 86400)
		snprintf(out, len, "%luh%02lum", v / 3600, v % 3600 / 60);
	else
		snprintf(out, len, "%lud%02luh", v / 86400, v % 86400 / 3600);
}

/* Free one line's strings. */
static void line_free(struct topq_line *l)
{
	free(l->name);
	free(l->run);
	free(l->job);
	free(l->pipeline);
	free(l->task);
	free(l->tool);
	free(l->user);
	free(l->host);
	free(l->comm);
	free(l->progress.path);
}

/* Free the tree. */
void topq_free(struct topq *t)
{
	for (size_t i = 0; t->v && i < t->n; i++)
		line_free(&t->v[i]);
	free(t->v);
	memset(t, 0, sizeof(*t));
}

/* A copy of s, NULL for NULL; sets *err on no memory. */
static char *dup_or_null(const char *s, int *err)
{
	char *d;

	if (!s)
		return NULL;
	d = strdup(s);
	if (!d)
		*err = -ENOMEM;
	return d;
}

/* A new line under parent at depth; its index, or -1 (no memory). */
static long add_line(struct topq *t, enum topq_kind kind, int depth,
		     long parent)
{
	struct topq_line *l;

	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 32;
		struct topq_line *v = realloc(t->v, cap * sizeof(*v));

		if (!v)
			return -1;
		t->v = v;
		t->cap = cap;
	}
	l = &t->v[t->n];
	memset(l, 0, sizeof(*l));
	l->kind = kind;
	l->depth = depth;
	l->parent = parent;
	l->expected = -1;
	l->cores = -1;
	l->read_bps = l->write_bps = l->rx_bps = l->tx_bps = -1;
	return (long)t->n++;
}

/* Add kind to the comma separated list sig unless it is there. */
static void sig_add(char *sig, size_t len, const char *kind)
{
	size_t k = strlen(kind), n = strlen(sig);

	/* a kind is a word (stall, oom_kill): "" would be found everywhere,
	 * a comma would split it */
	if (!k || strspn(kind, "abcdefghijklmnopqrstuvwxyz0123456789_") != k)
		return;
	for (const char *p = sig; (p = strstr(p, kind)); p += k)
		if ((p == sig || p[-1] == ',') && (!p[k] || p[k] == ','))
			return;
	if (n + k + 2 < len)
		snprintf(sig + n, len - n, "%s%s", n ? "," : "", kind);
}

/* ---- the runs ------------------------------------------------------------ */

/* Add run key (run, job) to keys unless there; the run counts, else the
 * job. */
static int key_add(struct key **keys, size_t *n, const char *run,
		   const char *job)
{
	struct key *v;
	int err = 0;

	if (!run && !job)
		return 0;
	for (size_t i = 0; i < *n; i++)
		if (run ? (*keys)[i].run && !strcmp((*keys)[i].run, run) :
		    !(*keys)[i].run && !strcmp((*keys)[i].job, job))
			return 0;
	v = realloc(*keys, (*n + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	*keys = v;
	v[*n].run = dup_or_null(run, &err);
	v[*n].job = run ? NULL : dup_or_null(job, &err);
	(*n)++;
	return err;
}

/* Does a live sample's run, job and pipeline fit q's selector? */
static bool sample_fits(const struct report_query *q, const char *run,
			const char *job, const char *pipeline)
{
	if (q->run && *q->run)
		return run && !strcmp(run, q->run);
	if (q->job && *q->job)
		return job && !strcmp(job, q->job);
	if (q->pipeline && *q->pipeline)
		return pipeline && !strcmp(pipeline, q->pipeline);
	return true;
}

/* Keys of the runs with a live process: a sample in the last
 * TOPQ_LIVE_S. */
static int live_keys(struct store *s, const char *where,
		     const struct report_query *q, double now,
		     struct key **keys, size_t *n)
{
	static const char sql[] = "SELECT DISTINCT " JSTR("$.job.run")
		", job_id, " JSTR("$.job.pipeline") " FROM record"
		" WHERE type = 'sample' AND time >= ?1 AND job_id IS NOT NULL";
	sqlite3 *db = store_handle(s);
	sqlite3_stmt *st = NULL;
	int rc, err = 0;

	if (store_stmt(s, sql, &st) != SQLITE_OK) {
		log_error("top: %s: %s", where, sqlite3_errmsg(db));
		return -EIO;
	}
	sqlite3_bind_double(st, 1, now - TOPQ_LIVE_S);
	while (!err && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *run = (const char *)sqlite3_column_text(st, 0);
		const char *job = (const char *)sqlite3_column_text(st, 1);

		if (sample_fits(q, run, job,
				(const char *)sqlite3_column_text(st, 2)))
			err = key_add(keys, n, run, job);
	}
	if (!err)
		err = storeq_step_done(db, where, rc);
	store_stmt_done(s, st);
	return err;
}

/* Keys of the runs with a process record that q selects. */
static int record_keys(struct store *s, const char *where,
		       const struct report_query *q, struct key **keys,
		       size_t *n)
{
	sqlite3_stmt *st = NULL;
	char sql[1024];
	int rc, err;

	snprintf(sql, sizeof(sql), "SELECT DISTINCT job_run, job_id FROM"
		 " process WHERE (%s) AND job_id IS NOT NULL"
		 " ORDER BY since_time", storeq_process_where(q));
	err = storeq_stmt(s, where, sql, q, &st);
	if (err)
		return err;
	while (!err && (rc = sqlite3_step(st)) == SQLITE_ROW)
		err = key_add(keys, n, (const char *)sqlite3_column_text(st, 0),
			      (const char *)sqlite3_column_text(st, 1));
	if (!err)
		err = storeq_step_done(store_handle(s), where, rc);
	store_stmt_done(s, st);
	return err;
}

/* ---- expected durations -------------------------------------------------- */

/* Is the instance k of the history finished, and of another run than
 * key's? */
static bool hist_counts(const struct build *b, size_t k, const struct key *key)
{
	const struct tasks_inst *in = &b->htk.inst[k];
	const struct storeq_proc *top = &b->hv[in->top];

	for (size_t i = 0; i < b->hn; i++)
		if (b->htk.of[i] == (long)k &&
		    (b->hv[i].running || b->hv[i].sampled))
			return false;
	if (key->run)
		return !top->run || strcmp(top->run, key->run);
	return !top->job || strcmp(top->job, key->job);
}

/* The median wall time of each task of the pipeline of process of in the
 * other runs of its user. */
static int load_history(struct build *b, const struct storeq_proc *of,
			const struct key *key)
{
	struct report_query hq = { .pipeline = of->pipeline,
				   .recent_runs = true, .user = of->user,
				   .uid_only = b->q->uid_only,
				   .uid = b->q->uid };
	double *d = NULL;
	int err;

	err = storeq_procs_load(b->st, b->where, &hq, STOREQ_PROC_TASKS,
				&b->hv, &b->hn);
	if (!err)
		err = tasks_of_procs(store_handle(b->st), b->where, b->hv,
				     b->hn, &b->htp, &b->htk);
	if (err)
		return err;
	d = malloc((b->htk.n ? b->htk.n : 1) * sizeof(*d));
	b->h = calloc(b->htk.n ? b->htk.n : 1, sizeof(*b->h));
	if (!d || !b->h) {
		free(d);
		return -ENOMEM;
	}
	/* instances come by task: one median a run of the same task */
	for (size_t i = 0; i < b->htk.n;) {
		const char *task = b->htk.inst[i].task;
		size_t m = 0, j = i;

		for (; j < b->htk.n && !strcmp(b->htk.inst[j].task, task); j++)
			if (hist_counts(b, j, key))
				d[m++] = b->htk.inst[j].end -
					 b->htk.inst[j].start;
		if (m)
			b->h[b->nh++] = (struct hist){
				.task = task, .n = m,
				.median = rightsize_percentile(d, m, 50) };
		i = j;
	}
	free(d);
	return 0;
}

/* The history of task, or NULL. */
static struct hist *hist_of(struct build *b, const char *task)
{
	for (size_t i = 0; task && i < b->nh; i++)
		if (!strcmp(b->h[i].task, task))
			return &b->h[i];
	return NULL;
}

/* ---- lines --------------------------------------------------------------- */

/* The state of a row at now. */
static enum topq_state proc_state(const struct storeq_proc *w, double now)
{
	if (w->sampled && w->end < now - TOPQ_LIVE_S)
		return TOPQ_LOST;
	if (w->running || w->sampled)
		return TOPQ_RUNNING;
	if (w->oom)
		return TOPQ_OOM;
	if (w->exit_code || (w->exit_signal && w->exit_signal != SIGPIPE))
		return TOPQ_FAILED;
	return TOPQ_DONE;
}

/* The progress object text (a sample's; NULL: none) into line l. */
static void live_progress(const char *text, struct topq_line *l)
{
	struct filesq_proc p = { 0 };

	if (!text || filesq_parse_progress(&p, text, strlen(text)))
		return;
	free(l->progress.path);
	l->progress = p.progress;
}

/* Rates into l from counters f[0] at time t0 and f[1] (earlier) at t1:
 * a counter that went back counts 0. */
static void live_rates(struct topq_line *l, const double f[2][5], double t0,
		       double t1)
{
	double *r[5] = { &l->cores, &l->read_bps, &l->write_bps, &l->rx_bps,
			 &l->tx_bps };

	if (!(t0 > t1))
		return;
	for (int c = 0; c < 5; c++)
		*r[c] = f[0][c] >= f[1][c] ? (f[0][c] - f[1][c]) / (t0 - t1) :
			0;
}

/* The figures now of a live row w with no sample before its latest known:
 * the two latest searched for (see TOPQ_SAMPLES_SQL). */
static int live_figures_search(struct build *b, const struct storeq_proc *w,
			       struct topq_line *l)
{
	sqlite3 *db = store_handle(b->st);
	double tm[2] = { 0 }, f[2][5] = { { 0 } };
	int rc, k = 0;

	sqlite3_reset(b->samples);
	sqlite3_bind_text(b->samples, 1, w->job, -1, SQLITE_STATIC);
	sqlite3_bind_int64(b->samples, 2, w->pid);
	sqlite3_bind_text(b->samples, 3, w->host, -1, SQLITE_STATIC);
	sqlite3_bind_double(b->samples, 4, w->start);
	while (k < 2 && (rc = sqlite3_step(b->samples)) == SQLITE_ROW) {
		tm[k] = storeq_col_num(b->samples, 0, 0);
		for (int c = 0; c < 5; c++)
			f[k][c] = storeq_col_amount(b->samples, 2 + c);
		if (!k) {
			l->rss = storeq_col_u64(b->samples, 1);
			live_progress((const char *)sqlite3_column_text(
					      b->samples, 7), l);
		}
		k++;
	}
	if (k < 2 && rc != SQLITE_DONE && rc != SQLITE_ROW)
		return storeq_step_done(db, b->where, rc);
	if (k == 2)
		live_rates(l, f, tm[0], tm[1]);
	return 0;
}

/*
 * The counters of the samples the frame before read (a view's frames in
 * one process), by record id, and those this frame reads: a live row's
 * sample before its latest is most often the latest of a frame before,
 * taken from here instead of read and parsed again (26 % of a user view's
 * frame, perf).  A record never changes, so its counters are the same in
 * any store; each frame keeps those it used.
 */
struct seen {
	char *id;
	double f[5];
};
static struct seen *seen_old, *seen_new;
static size_t seen_nold, seen_nnew, seen_cap;

/* Order seen samples by id. */
static int cmp_seen(const void *x, const void *y)
{
	return strcmp(((const struct seen *)x)->id,
		      ((const struct seen *)y)->id);
}

/* Start a frame: what the last one kept is what this one looks up. */
static void seen_frame(void)
{
	for (size_t i = 0; i < seen_nold; i++)
		free(seen_old[i].id);
	free(seen_old);
	qsort(seen_new, seen_nnew, sizeof(*seen_new), cmp_seen);
	seen_old = seen_new;
	seen_nold = seen_nnew;
	seen_new = NULL;
	seen_nnew = seen_cap = 0;
}

/* Keep sample id's counters f for the next frame (no memory: not kept). */
static void seen_keep(const char *id, const double f[5])
{
	if (seen_nnew == seen_cap) {
		size_t cap = seen_cap ? seen_cap * 2 : 64;
		struct seen *v = realloc(seen_new, cap * sizeof(*v));

		if (!v)
			return;
		seen_new = v;
		seen_cap = cap;
	}
	seen_new[seen_nnew].id = strdup(id);
	if (seen_new[seen_nnew].id) {
		memcpy(seen_new[seen_nnew].f, f, sizeof(seen_new[0].f));
		seen_nnew++;
	}
}

/* Sample id's counters from the frame before into f: whether known. */
static bool seen_find(const char *id, double f[5])
{
	struct seen k = { .id = (char *)id };
	const struct seen *s = seen_nold ? bsearch(&k, seen_old, seen_nold,
						    sizeof(k), cmp_seen) : NULL;

	if (s)
		memcpy(f, s->f, sizeof(s->f));
	return s != NULL;
}

/* The figures now of a live row w: its latest sample's (in w), the rates
 * against the sample before it, found by its id. */
static int live_figures(struct build *b, const struct storeq_proc *w,
			struct topq_line *l)
{
	sqlite3 *db = store_handle(b->st);
	double f[2][5] = { { w->cpu_user + w->cpu_sys, w->read_bytes,
			     w->write_bytes, w->rx, w->tx } };
	int rc;

	if (!w->prev_id)
		return live_figures_search(b, w, l);
	l->rss = w->rss;
	live_progress(w->progress, l);
	seen_keep(w->id, f[0]);
	if (seen_find(w->prev_id, f[1])) {
		seen_keep(w->prev_id, f[1]);
		live_rates(l, f, w->end, w->prev_time);
		return 0;
	}
	sqlite3_reset(b->prev);
	sqlite3_bind_text(b->prev, 1, w->prev_id, -1, SQLITE_STATIC);
	rc = sqlite3_step(b->prev);
	if (rc == SQLITE_ROW) {
		f[1][0] = storeq_col_amount(b->prev, 0) +
			  storeq_col_amount(b->prev, 1);
		for (int c = 1; c < 5; c++)
			f[1][c] = storeq_col_u64(b->prev, 1 + c);
		seen_keep(w->prev_id, f[1]);
		live_rates(l, f, w->end, w->prev_time);
	}
	sqlite3_reset(b->prev);
	return rc == SQLITE_ROW ? 0 : storeq_step_done(db, b->where, rc);
}

/* Copy the run, job, pipeline, user and host of row w into line l. */
static void job_fields(struct topq_line *l, const struct storeq_proc *w,
		       int *err)
{
	l->run = dup_or_null(w->run, err);
	l->job = dup_or_null(w->job, err);
	l->pipeline = dup_or_null(w->pipeline, err);
	l->user = dup_or_null(w->user, err);
	l->host = dup_or_null(w->host, err);
}

/* Add the line of row i under parent at depth. */
static int add_proc(struct build *b, size_t i, long parent, int depth)
{
	const struct storeq_proc *w = &b->v[i];
	long k = add_line(b->t, TOPQ_PROC, depth, parent);
	struct topq_line *l;
	int err = 0;

	if (k < 0)
		return -ENOMEM;
	l = &b->t->v[k];
	b->line_of[i] = k;
	l->state = proc_state(w, b->t->now);
	l->name = dup_or_null(storeq_tool_name(w->tool, w->exe, w->comm), &err);
	l->tool = dup_or_null(l->name, &err);
	l->comm = dup_or_null(w->comm, &err);
	l->task = dup_or_null(w->task, &err);
	job_fields(l, w, &err);
	l->pid = w->pid;
	l->ppid = w->ppid;
	l->start = w->start;
	l->elapsed = (l->state == TOPQ_RUNNING ? b->t->now : w->end) -
		     w->start;	/* lost: to its last sample */
	l->peak = w->peak_rss;
	l->cpu_s = w->cpu_user + w->cpu_sys;
	if (!err && l->state == TOPQ_RUNNING && w->job)
		err = live_figures(b, w, l);
	return err;
}

/* Add the sum of child line c's figures now into line l. */
static void add_now(struct topq_line *l, const struct topq_line *c)
{
	double *a[5] = { &l->cores, &l->read_bps, &l->write_bps, &l->rx_bps,
			 &l->tx_bps };
	const double *x[5] = { &c->cores, &c->read_bps, &c->write_bps,
			       &c->rx_bps, &c->tx_bps };

	for (int i = 0; i < 5; i++)
		if (*x[i] >= 0)
			*a[i] = (*a[i] < 0 ? 0 : *a[i]) + *x[i];
	l->rss += c->rss;
}

/* Order instance indices by start. */
static int cmp_inst_start(const void *x, const void *y, void *arg)
{
	const struct tasks_inst *in = arg;
	double a = in[*(const size_t *)x].start, b = in[*(const size_t *)y].start;

	return (a > b) - (a < b);
}

/* The state of instance k's line from its process lines. */
static enum topq_state inst_state(const struct build *b, size_t k)
{
	const struct tasks_inst *in = &b->tk.inst[k];
	bool run = false, stall = false, oom = false;

	for (size_t i = 0; i < b->n; i++) {
		const struct topq_line *p;

		if (b->tk.of[i] != (long)k)
			continue;
		p = &b->t->v[b->line_of[i]];
		run |= p->state == TOPQ_RUNNING || p->state == TOPQ_STALLED;
		stall |= p->state == TOPQ_STALLED;
		oom |= p->state == TOPQ_OOM;
	}
	if (stall)
		return TOPQ_STALLED;
	if (run)
		return TOPQ_RUNNING;
	if (oom)
		return TOPQ_OOM;
	return b->t->v[b->line_of[in->top]].state;
}

/* The line of instance k under line r at depth d, then its processes. */
static int add_inst(struct build *b, size_t k, long r, int d)
{
	const struct tasks_inst *in = &b->tk.inst[k];
	const struct storeq_proc *top = &b->v[in->top];
	struct hist *h = hist_of(b, in->task);
	long li = add_line(b->t, TOPQ_TASK, d, r);
	struct topq_line *l;
	int err = 0;

	if (li < 0)
		return -ENOMEM;
	for (size_t i = 0; i < b->n && !err; i++)
		if (b->tk.of[i] == (long)k)
			err = add_proc(b, i, li, d + 1);
	if (err)
		return err;
	l = &b->t->v[li];
	l->state = inst_state(b, k);
	l->name = dup_or_null(in->task, &err);
	l->task = dup_or_null(in->task, &err);
	job_fields(l, top, &err);
	l->start = in->start;
	l->elapsed = (l->state <= TOPQ_STALLED ? b->t->now : in->end) -
		     in->start;
	l->peak = in->mem;
	l->req_mem = in->req_mem;
	l->cpu_s = in->cpu;
	if (h) {
		l->expected = h->median;
		l->expected_n = h->n;
		h->seen = true;
	}
	for (size_t j = (size_t)li + 1; j < b->t->n; j++)
		add_now(l, &b->t->v[j]);
	return err;
}

/* A waiting line under run line r: task (or the job's id) pending in
 * Slurm as job id. */
static int add_pending_line(struct build *b, long r, const char *task,
			    const char *id)
{
	struct hist *h = hist_of(b, task);
	long k = add_line(b->t, TOPQ_TASK, 1, r);
	int err = 0;

	if (k < 0)
		return -ENOMEM;
	b->t->v[k].state = TOPQ_WAITING;
	b->t->v[k].name = dup_or_null(task ? task : id, &err);
	b->t->v[k].task = dup_or_null(task, &err);
	b->t->v[k].job = dup_or_null(id, &err);
	if (h) {
		b->t->v[k].expected = h->median;
		b->t->v[k].expected_n = h->n;
		h->seen = true;
	}
	return err;
}

/*
 * The row of the run's `sbatch` that submitted pending job j: its command
 * line names j's script and it ran as j's owner; -1 if none.
 */
static long submitted_by(const struct build *b, const struct squeueq_job *j)
{
	struct jbuf q;
	long found = -1;

	jbuf_init(&q);
	json_str(&q, j->command);	/* as the argv array has it */
	for (size_t i = 0; i < b->n && found < 0 && !q.oom; i++)
		if (b->v[i].comm && !strcmp(b->v[i].comm, "sbatch") &&
		    b->v[i].uid == j->uid && b->v[i].argv &&
		    strstr(b->v[i].argv, jbuf_str(&q)))
			found = (long)i;
	jbuf_free(&q);
	return found;
}

/*
 * Waiting lines under run line r for its Slurm jobs still pending: asked
 * only of a run that submitted one (an sbatch among its rows).  A pending
 * job is the run's when an sbatch of the run named its script, as its
 * owner, or when its comment names the run (trace-run=) and its owner ran
 * a process of it.  Its task: that sbatch's (the rules'), else the
 * comment's trace-step=, as the prolog gives it to the job.
 */
static int add_pending(struct build *b, long r, const struct key *key)
{
	const struct squeueq *l;
	bool sbatch = false;
	int err = 0;

	for (size_t i = 0; i < b->n && !sbatch; i++)
		sbatch = b->v[i].comm && !strcmp(b->v[i].comm, "sbatch");
	if (!sbatch)
		return 0;
	l = squeueq_pending(b->t->now);
	for (size_t k = 0; k < l->n && !err; k++) {
		const struct squeueq_job *j = &l->v[k];
		long i = submitted_by(b, j);
		char run[256], step[256];
		bool own = i >= 0, named = squeueq_comment_word(
			j->comment, "trace-step", step, sizeof(step));

		if (i < 0 && key->run &&
		    squeueq_comment_word(j->comment, "trace-run", run,
					 sizeof(run)) && !strcmp(run, key->run))
			for (size_t n = 0; n < b->n && !own; n++)
				own = b->v[n].uid == j->uid;
		if (own)
			err = add_pending_line(b, r, i >= 0 && b->v[i].task ?
					       b->v[i].task : named ? step :
					       NULL, j->id);
	}
	return err;
}

/* Waiting lines under run line r: tasks of earlier runs not started. */
static int add_waiting(struct build *b, long r)
{
	int err = 0;

	for (size_t i = 0; i < b->nh && !err; i++) {
		long k;

		if (b->h[i].seen)
			continue;
		k = add_line(b->t, TOPQ_TASK, 1, r);
		if (k < 0)
			return -ENOMEM;
		b->t->v[k].state = TOPQ_WAITING;
		b->t->v[k].name = dup_or_null(b->h[i].task, &err);
		b->t->v[k].task = dup_or_null(b->h[i].task, &err);
		b->t->v[k].expected = b->h[i].median;
		b->t->v[k].expected_n = b->h[i].n;
	}
	return err;
}

/* Mark the signals of the run's jobs on its process lines (from line
 * first on), and a stall not ended as the state stalled. */
static int add_signals(struct build *b, size_t first, const char *job)
{
	static const char sql[] = TOPQ_SIGNALS_SQL;
	sqlite3 *db = store_handle(b->st);
	sqlite3_stmt *st = NULL;
	int rc, err = 0;

	if (store_stmt(b->st, sql, &st) != SQLITE_OK) {
		log_error("top: %s: %s", b->where, sqlite3_errmsg(db));
		return -EIO;
	}
	sqlite3_bind_text(st, 1, job, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *kind = (const char *)sqlite3_column_text(st, 0);
		const char *host = (const char *)sqlite3_column_text(st, 2);
		const char *phase = (const char *)sqlite3_column_text(st, 3);
		int64_t pid = sqlite3_column_int64(st, 1);

		for (size_t i = first; kind && i < b->t->n; i++) {
			struct topq_line *l = &b->t->v[i];

			if (l->kind != TOPQ_PROC || l->pid != pid ||
			    strcmp(l->host ? l->host : "", host ? host : ""))
				continue;
			sig_add(l->signals, sizeof(l->signals), kind);
			if (!strcmp(kind, "stall") && l->state <= TOPQ_STALLED)
				l->state = phase && !strcmp(phase, "end") ?
					   TOPQ_RUNNING : TOPQ_STALLED;
		}
	}
	err = storeq_step_done(db, b->where, rc);
	store_stmt_done(b->st, st);
	return err;
}

/* Fill run or node line r from the lines under it; whether it is
 * running.  Failed: an instance failed, or a process of no task. */
static bool run_fill(struct topq *t, long r)
{
	struct topq_line *l = &t->v[r];
	bool running = false, failed = false, lost = false;
	double first = 0, last = 0;
	char sig[sizeof(l->signals)];

	for (size_t i = (size_t)r + 1; i < t->n && t->v[i].depth > l->depth;
	     i++) {
		const struct topq_line *c = &t->v[i];
		bool member = c->kind == TOPQ_TASK ||
			      (c->kind == TOPQ_PROC &&
			       t->v[c->parent].kind != TOPQ_TASK);

		if (c->state == TOPQ_WAITING)
			continue;
		failed |= member && (c->state == TOPQ_FAILED ||
				     c->state == TOPQ_OOM);
		lost |= c->state == TOPQ_LOST;
		if (c->kind != TOPQ_PROC)
			continue;
		util_strlcpy(sig, c->signals, sizeof(sig));
		for (char *s = strtok(sig, ","); s; s = strtok(NULL, ","))
			sig_add(l->signals, sizeof(l->signals), s);
		running |= c->state <= TOPQ_STALLED;
		if (!first || c->start < first)
			first = c->start;
		if (c->start + c->elapsed > last)
			last = c->start + c->elapsed;
		add_now(l, c);
		l->cpu_s += c->cpu_s;
		if (c->peak > l->peak)
			l->peak = c->peak;
	}
	l->start = first;
	l->elapsed = (running ? t->now : last) - first;
	l->state = running ? TOPQ_RUNNING : failed ? TOPQ_FAILED :
		   lost ? TOPQ_LOST : TOPQ_DONE;
	return running;
}

/* Is row w on node host (NULL: any)? */
static bool on_node(const struct storeq_proc *w, const char *host)
{
	return !host || !strcmp(w->host ? w->host : "", host);
}

/* Under line p at depth d: the instances (in order) whose topmost
 * process is on host, then its processes of no task (host NULL: all). */
static int add_members(struct build *b, const size_t *order,
		       const char *host, long p, int d)
{
	int err = 0;

	for (size_t k = 0; k < b->tk.n && !err; k++)
		if (on_node(&b->v[b->tk.inst[order[k]].top], host))
			err = add_inst(b, order[k], p, d);
	for (size_t i = 0; i < b->n && !err; i++)
		if (b->tk.of[i] < 0 && on_node(&b->v[i], host))
			err = add_proc(b, i, p, d);
	return err;
}

/* Order node names. */
static int cmp_str(const void *x, const void *y)
{
	return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* By node: under run line r a line per node of its rows, by name, each
 * with its members. */
static int add_nodes(struct build *b, const size_t *order, long r)
{
	const char **host = malloc((b->n ? b->n : 1) * sizeof(*host));
	int err = 0;

	if (!host)
		return -ENOMEM;
	for (size_t i = 0; i < b->n; i++)
		host[i] = b->v[i].host ? b->v[i].host : "";
	qsort(host, b->n, sizeof(*host), cmp_str);
	for (size_t i = 0; i < b->n && !err; i++) {
		long k;

		if (i && !strcmp(host[i - 1], host[i]))
			continue;
		k = add_line(b->t, TOPQ_NODE, 1, r);
		if (k < 0) {
			err = -ENOMEM;
			break;
		}
		b->t->v[k].name = dup_or_null(host[i], &err);
		b->t->v[k].host = dup_or_null(host[i], &err);
		if (!err)
			err = add_members(b, order, host[i], k, 2);
	}
	free(host);
	return err;
}

/* The lines of one run: its instances, its processes of no task (by
 * node: under their nodes), the tasks it waits for. */
static int build_lines(struct build *b, const struct key *key)
{
	size_t *order = malloc((b->tk.n ? b->tk.n : 1) * sizeof(*order));
	long r = add_line(b->t, TOPQ_RUN, 0, -1);
	size_t first = b->t->n;
	int err = 0;

	if (!order || r < 0) {
		free(order);
		return -ENOMEM;
	}
	b->t->v[r].name = dup_or_null(key->run ? key->run : key->job, &err);
	b->t->v[r].run = dup_or_null(key->run, &err);
	b->t->v[r].job = dup_or_null(key->job, &err);
	for (size_t i = 0; i < b->n && !b->t->v[r].pipeline && !err; i++)
		b->t->v[r].pipeline = dup_or_null(b->v[i].pipeline, &err);
	for (size_t i = 0; i < b->n && !b->t->v[r].user && !err; i++)
		b->t->v[r].user = dup_or_null(b->v[i].user, &err);
	for (size_t k = 0; k < b->tk.n; k++)
		order[k] = k;
	qsort_r(order, b->tk.n, sizeof(*order), cmp_inst_start, b->tk.inst);
	if (b->q->by_node)
		err = add_nodes(b, order, r);
	else
		err = add_members(b, order, NULL, r, 1);
	/* a job's signals: once each job of the run */
	for (size_t i = 0; i < b->n && !err; i++) {
		bool seen = false;

		for (size_t k = 0; k < i && b->v[i].job; k++)
			seen |= b->v[k].job && !strcmp(b->v[k].job, b->v[i].job);
		if (b->v[i].job && !seen)
			err = add_signals(b, first, b->v[i].job);
	}
	free(order);
	if (err)
		return err;
	/* a stall found above changes an instance's state */
	for (size_t i = first; i < b->t->n; i++)
		if (b->t->v[i].kind == TOPQ_PROC &&
		    b->t->v[i].state == TOPQ_STALLED &&
		    b->t->v[b->t->v[i].parent].kind == TOPQ_TASK)
			b->t->v[b->t->v[i].parent].state = TOPQ_STALLED;
	for (size_t i = first; i < b->t->n; i++)
		if (b->t->v[i].kind == TOPQ_NODE)
			run_fill(b->t, (long)i);
	if (run_fill(b->t, r)) {
		b->t->running++;
		err = add_pending(b, r, key);
		err = err ? err : add_waiting(b, r);
	}
	b->t->runs++;
	return err;
}

/* Free what one run's build loaded. */
static void build_free(struct build *b)
{
	storeq_procs_free(b->v, b->n);
	free(b->tp);
	tasks_free(&b->tk);
	storeq_procs_free(b->hv, b->hn);
	free(b->htp);
	tasks_free(&b->htk);
	free(b->h);
	free(b->line_of);
	b->v = b->hv = NULL;
	b->tp = b->htp = NULL;
	b->h = NULL;
	b->line_of = NULL;
	b->n = b->hn = b->nh = 0;
}

/* The lines of the run key. */
static int load_run(struct build *b, const struct key *key)
{
	struct report_query rq = { .run = key->run, .job = key->job,
				   .uid_only = b->q->uid_only,
				   .uid = b->q->uid };
	const struct storeq_proc *of = NULL;
	int err;

	err = storeq_procs_load(b->st, b->where, &rq, STOREQ_PROC_SAMPLES,
				&b->v, &b->n);
	if (!err)
		err = tasks_of_procs(store_handle(b->st), b->where, b->v, b->n,
				     &b->tp, &b->tk);
	if (err || !b->n)
		goto out;
	b->line_of = calloc(b->n ? b->n : 1, sizeof(*b->line_of));
	if (!b->line_of) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < b->n && !of; i++)
		if (b->v[i].pipeline)
			of = &b->v[i];
	if (of)
		err = load_history(b, of, key);
	if (!err)
		err = build_lines(b, key);
out:
	build_free(b);
	return err;
}

/* Load the tree of q (see topq.h). */
int topq_load(struct store *st, const char *where,
	      const struct report_query *q, double now, struct topq *t)
{
	struct report_query sq = *q;
	struct build b = { .t = t, .st = st, .where = where, .q = q };
	sqlite3 *db = store_handle(st);
	struct key *keys = NULL;
	size_t nk = 0;
	int err;

	memset(t, 0, sizeof(*t));
	t->now = now;
	seen_frame();
	if (!(q->run && *q->run) && !(q->job && *q->job) &&
	    !(q->pipeline && *q->pipeline) && !q->since)
		sq.since = now - TOPQ_SINCE_S;
	err = storeq_restrict(st, where, q);
	/* --run: its records' and its samples' key is the run itself */
	if (!err && !(q->run && *q->run))
		err = record_keys(st, where, &sq, &keys, &nk);
	if (!err && !(q->run && *q->run))
		err = live_keys(st, where, &sq, now, &keys, &nk);
	/* a run or job named whose processes are all lost: its samples */
	if (!err && !nk && ((q->run && *q->run) || (q->job && *q->job)))
		err = key_add(&keys, &nk, q->run && *q->run ? q->run : NULL,
			      q->job);
	if (!err && (store_stmt(st, TOPQ_SAMPLES_SQL, &b.samples) != SQLITE_OK ||
		     store_stmt(st, TOPQ_PREV_SQL, &b.prev) != SQLITE_OK)) {
		log_error("top: %s: %s", where, sqlite3_errmsg(db));
		err = -EIO;
	}
	for (size_t i = 0; i < nk && !err; i++)
		err = load_run(&b, &keys[i]);
	store_stmt_done(st, b.samples);
	store_stmt_done(st, b.prev);
	for (size_t i = 0; i < nk; i++) {
		free(keys[i].run);
		free(keys[i].job);
	}
	free(keys);
	return err;
}

/* ---- frames -------------------------------------------------------------- */

/* Bytes in at most 5 columns: "812", "4.1K", "312M", "2.0G". */
static const char *compact(double v, char *out, size_t len)
{
	static const char units[] = "KMGTP";
	int u = -1;

	if (v < 0 || isnan(v)) {
		snprintf(out, len, "-");
		return out;
	}
	v += 0.0;	/* -0 is 0 */
	while (v >= 999.5 && u < 4) {
		v /= 1024;
		u++;
	}
	if (u < 0)
		snprintf(out, len, "%.0f", v);
	else
		snprintf(out, len, v < 9.95 ? "%.1f%c" : "%.0f%c", v, units[u]);
	return out;
}

/* "4m12s of ~6m", "12s", "- of ~3s" (waiting). */
static void time_text(const struct topq_line *l, char *out, size_t len)
{
	char a[16], e[16];

	if (l->state == TOPQ_WAITING)
		snprintf(a, sizeof(a), "-");
	else
		topq_duration(l->elapsed, a, sizeof(a));
	if (l->expected < 0) {
		snprintf(out, len, "%s", a);
		return;
	}
	topq_duration(l->expected, e, sizeof(e));
	snprintf(out, len, "%s of ~%s", a, e);
}

/* The width of the NAME column in a frame width columns wide. */
static int name_width(int width)
{
	int w = width ? width - 75 : 32;

	return w < 14 ? 14 : w > 40 ? 40 : w;
}

/* One line of the frame, without a newline (see topq.h). */
void topq_line_text(const struct topq *t, size_t i, int width, char *out,
		    size_t len)
{
	const struct topq_line *l = &t->v[i];
	char name[128], tm[40], cores[16], rss[8], peak[20], req[8];
	char rd[8], wr[8], net[8], prog[8] = "";
	int nw = name_width(width);

	if (l->kind == TOPQ_PROC)
		snprintf(name, sizeof(name), "%*s%lld %s", l->depth * 2, "",
			 (long long)l->pid, l->name ? l->name : "?");
	else if (l->kind == TOPQ_TASK && l->state == TOPQ_WAITING && l->job)
		snprintf(name, sizeof(name), "%*s%s%sjob %s%s", l->depth * 2,
			 "", l->task ? l->task : "", l->task ? " (" : "",
			 l->job, l->task ? ")" : "");
	else if (l->kind == TOPQ_TASK)
		snprintf(name, sizeof(name), "%*s%s", l->depth * 2, "",
			 l->name ? l->name : "?");
	else if (l->kind == TOPQ_NODE)
		snprintf(name, sizeof(name), "  [%s]", l->name ? l->name : "?");
	else
		snprintf(name, sizeof(name), "%s%s%s", l->name ? l->name : "?",
			 l->pipeline ? " " : "", l->pipeline ? l->pipeline : "");
	util_printable(name);
	time_text(l, tm, sizeof(tm));
	if (l->cores >= 0)
		snprintf(cores, sizeof(cores), "%.2f", l->cores);
	else
		snprintf(cores, sizeof(cores), "-");
	if (l->req_mem)
		snprintf(peak, sizeof(peak), "%s/%s",
			 compact((double)l->peak, rss, sizeof(rss)),
			 compact((double)l->req_mem, req, sizeof(req)));
	else
		compact(l->peak ? (double)l->peak : -1, peak, sizeof(peak));
	compact(l->rss ? (double)l->rss : -1, rss, sizeof(rss));
	compact(l->read_bps, rd, sizeof(rd));
	compact(l->write_bps, wr, sizeof(wr));
	compact(l->rx_bps < 0 ? -1 : l->rx_bps + l->tx_bps, net, sizeof(net));
	/* processes only (their JSON has it); a file of no size or of a
	 * size not known: no percent (JSON has its offset) */
	if (l->kind == TOPQ_PROC && l->progress.path && l->progress.size &&
	    l->progress.size != FILESQ_NO_SIZE)
		snprintf(prog, sizeof(prog), "%.0f%%", 100.0 *
			 (double)l->progress.offset / (double)l->progress.size);
	snprintf(out, len, "%-10s %-*.*s %-14s %5s %5s %-11s %5s %5s %5s %4s %s",
		 topq_state_name(l->state), nw, nw, name, tm, cores, rss, peak,
		 rd, wr, net, prog, l->signals);
	if (width > 0 && (size_t)width < len)
		out[width] = '\0';
}

/* The frame's head and column titles. */
static void head_text(const struct topq *t, int width, FILE *out)
{
	char now[40], titles[256];

	json_format_time(storeq_time_ns(t->now), now, sizeof(now));
	fprintf(out, "jobtrace top  %.19s UTC  %zu run%s, %zu running\n",
		now, t->runs, t->runs == 1 ? "" : "s", t->running);
	topq_titles_text(width, titles, sizeof(titles));
	fprintf(out, "%s\n", titles);
}

/* The column titles (see topq.h): PROG is the progress through the
 * largest file a running process reads. */
void topq_titles_text(int width, char *out, size_t len)
{
	snprintf(out, len, "%-10s %-*s %-14s %5s %5s %-11s %5s %5s %5s %4s %s",
		 "STATE", name_width(width), "NAME", "ELAPSED", "CORES", "RSS",
		 "PEAK/REQ", "READ", "WRITE", "NET", "PROG", "SIGNALS");
}

/* One frame as plain text (see topq.h). */
void topq_print_text(const struct topq *t, int width, const bool *show,
		     FILE *out)
{
	char line[512];

	head_text(t, width, out);
	for (size_t i = 0; i < t->n; i++) {
		if (show && !show[i])
			continue;
		topq_line_text(t, i, width, line, sizeof(line));
		fprintf(out, "%s\n", line);
	}
}

/* A rate or a figure now: its value, null when not known. */
static void kv_known(struct jbuf *b, const char *key, double v)
{
	json_key(b, key);
	if (v < 0)
		json_null(b);
	else
		json_double(b, v);
}

/* Line i's members (not its children). */
static void line_json(struct jbuf *b, const struct topq_line *l)
{
	static const char *const kinds[] = { "run", "task", "process",
					     "node" };

	json_kv_str(b, "kind", kinds[l->kind]);
	json_kv_str(b, "state", topq_state_name(l->state));
	json_kv_str(b, "name", l->name);
	json_kv_str(b, "run", l->run);
	json_kv_str(b, "job", l->job);
	json_kv_str(b, "pipeline", l->pipeline);
	json_kv_str(b, "task", l->task);
	json_kv_str(b, "user", l->user);
	json_kv_str(b, "host", l->host);
	if (l->kind == TOPQ_PROC) {
		json_kv_i64(b, "pid", l->pid);
		json_kv_i64(b, "ppid", l->ppid);
		json_kv_str(b, "comm", l->comm);
		json_kv_str(b, "tool", l->tool);
		filesq_progress_json(b, &l->progress);
	}
	json_key(b, "start_time");
	if (l->start > 0)
		json_time(b, storeq_time_ns(l->start));
	else
		json_null(b);
	kv_known(b, "elapsed_s", l->state == TOPQ_WAITING ? -1 : l->elapsed);
	kv_known(b, "expected_s", l->expected);
	json_kv_u64(b, "expected_runs", l->expected_n);
	kv_known(b, "cpu_s", l->cpu_s);
	kv_known(b, "cores", l->cores);
	kv_known(b, "rss_bytes", l->rss ? (double)l->rss : -1);
	json_kv_u64(b, "peak_rss_bytes", l->peak);
	kv_known(b, "req_mem_bytes", l->req_mem ? (double)l->req_mem : -1);
	kv_known(b, "read_bytes_per_s", l->read_bps);
	kv_known(b, "write_bytes_per_s", l->write_bps);
	kv_known(b, "rx_bytes_per_s", l->rx_bps);
	kv_known(b, "tx_bytes_per_s", l->tx_bps);
	json_key(b, "signals");
	json_arr_open(b);
	if (l->signals[0]) {
		char sig[sizeof(l->signals)];

		util_strlcpy(sig, l->signals, sizeof(sig));
		for (char *s = strtok(sig, ","); s; s = strtok(NULL, ","))
			json_str(b, s);
	}
	json_arr_close(b);
}

/* Line i and the lines under it, as an object with "children"; the
 * index after them. */
static size_t tree_json(struct jbuf *b, const struct topq *t, size_t i)
{
	size_t j = i + 1;

	json_obj_open(b);
	line_json(b, &t->v[i]);
	json_key(b, "children");
	json_arr_open(b);
	while (j < t->n && t->v[j].depth > t->v[i].depth)
		j = tree_json(b, t, j);
	json_arr_close(b);
	json_obj_close(b);
	return j;
}

/* The tree as one JSON object (see topq.h). */
int topq_print_json(const struct topq *t, const struct report_query *q,
		    FILE *out)
{
	struct jbuf b;

	jbuf_init(&b);
	json_obj_open(&b);
	json_key(&b, "time");
	json_time(&b, storeq_time_ns(t->now));
	storeq_json_query(&b, "query", q, NULL);
	json_kv_u64(&b, "runs_running", t->running);
	json_key(&b, "runs");
	json_arr_open(&b);
	for (size_t i = 0; i < t->n;)
		i = tree_json(&b, t, i);
	json_arr_close(&b);
	json_obj_close(&b);
	return storeq_json_print(&b, out);
}

/* `jobtrace top --once` from an open store (see topq.h). */
int topq_run_store(struct store *st, const char *where,
		   const struct report_query *q, enum report_format fmt,
		   double now, FILE *out)
{
	struct topq t;
	int err;

	if (fmt != REPORT_TEXT && fmt != REPORT_JSON)
		return -EINVAL;
	err = topq_load(st, where, q, now, &t);
	if (!err && fmt == REPORT_JSON)
		err = topq_print_json(&t, q, out);
	else if (!err)
		topq_print_text(&t, 0, NULL, out);
	topq_free(&t);
	return storeq_written(out, "top", err);
}

/* ---- reading a frame back ------------------------------------------------ */

/* The next value, a string or null, as a new string in *out (NULL for
 * null; the previous one freed). */
static int read_str(struct jr *r, char **out)
{
	struct jr_str s;
	char *d;
	int err;

	if (jr_peek(r) == JR_NULL)
		return jr_null(r);
	err = jr_str(r, &s);
	if (err)
		return err;
	d = malloc(s.len + 1);
	if (!d)
		return -ENOMEM;
	d[jr_str_decode(&s, d, 0)] = '\0';
	free(*out);
	*out = d;
	return 0;
}

/* The next value, a number or null (-1), in *v. */
static int read_num(struct jr *r, double *v)
{
	*v = -1;
	if (jr_peek(r) == JR_NULL)
		return jr_null(r);
	return jr_f64(r, v);
}

/* A progress object ({"path", "offset_bytes", "size_bytes"}) or null. */
static int read_progress(struct jr *r, struct filesq_progress *p)
{
	struct jr_str key;
	int err;

	if (jr_peek(r) == JR_NULL)
		return jr_null(r);
	p->size = FILESQ_NO_SIZE;
	err = jr_obj_open(r);
	while (!err && (err = jr_next_member(r, &key)) > 0) {
		if (jr_str_eq(&key, "path", 4))
			err = read_str(r, &p->path);
		else if (jr_str_eq(&key, "offset_bytes", 12))
			err = jr_u64(r, &p->offset);
		else if (jr_str_eq(&key, "size_bytes", 10) &&
			 jr_peek(r) != JR_NULL)
			err = jr_u64(r, &p->size);
		else
			err = jr_skip(r);
	}
	return err < 0 ? err : 0;
}

/* One member key of a line object into l (children are the caller's). */
static int read_member(struct jr *r, const struct jr_str *key,
		       struct topq_line *l)
{
	struct { const char *k; char **v; } strs[] = {
		{ "name", &l->name }, { "run", &l->run }, { "job", &l->job },
		{ "pipeline", &l->pipeline }, { "task", &l->task },
		{ "user", &l->user }, { "host", &l->host },
		{ "comm", &l->comm }, { "tool", &l->tool },
	};
	struct { const char *k; double *v; } nums[] = {
		{ "elapsed_s", &l->elapsed }, { "expected_s", &l->expected },
		{ "cpu_s", &l->cpu_s }, { "cores", &l->cores },
		{ "read_bytes_per_s", &l->read_bps },
		{ "write_bytes_per_s", &l->write_bps },
		{ "rx_bytes_per_s", &l->rx_bps },
		{ "tx_bytes_per_s", &l->tx_bps },
	};
	char word[32] = "";
	double d;
	int err;

	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
		if (jr_str_eq(key, strs[i].k, strlen(strs[i].k)))
			return read_str(r, strs[i].v);
	for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++)
		if (jr_str_eq(key, nums[i].k, strlen(nums[i].k)))
			return read_num(r, nums[i].v);
	if (jr_str_eq(key, "pid", 3))
		return jr_i64(r, &l->pid);
	if (jr_str_eq(key, "ppid", 4))
		return jr_i64(r, &l->ppid);
	if (jr_str_eq(key, "expected_runs", 13))
		return jr_u64(r, (uint64_t *)&l->expected_n);
	if (jr_str_eq(key, "peak_rss_bytes", 14))
		return jr_u64(r, &l->peak);
	if (jr_str_eq(key, "rss_bytes", 9) || jr_str_eq(key, "req_mem_bytes", 13)) {
		err = read_num(r, &d);
		/* a number past uint64's range is the largest, not UB */
		*(key->s[1] == 's' ? &l->rss : &l->req_mem) =
			!(d > 0) ? 0 : d >= 18446744073709551616.0 ?
			UINT64_MAX : (uint64_t)d;
		return err;
	}
	if (jr_str_eq(key, "start_time", 10)) {
		char *s = NULL;

		err = read_str(r, &s);
		if (!err && s && storeq_parse_time(s, &l->start))
			err = -EINVAL;
		free(s);
		return err;
	}
	if (jr_str_eq(key, "kind", 4) || jr_str_eq(key, "state", 5)) {
		char *s = NULL;
		bool kind = key->s[0] == 'k';

		err = read_str(r, &s);
		if (!err && s)
			util_strlcpy(word, s, sizeof(word));
		free(s);
		for (int i = 0; !err && !kind && i <= TOPQ_LOST; i++)
			if (!strcmp(word, state_names[i]))
				l->state = i;
		if (kind)
			l->kind = !strcmp(word, "run") ? TOPQ_RUN :
				  !strcmp(word, "task") ? TOPQ_TASK :
				  !strcmp(word, "node") ? TOPQ_NODE : TOPQ_PROC;
		return err;
	}
	if (jr_str_eq(key, "progress", 8))
		return read_progress(r, &l->progress);
	if (jr_str_eq(key, "signals", 7)) {
		err = jr_arr_open(r);
		while (!err && (err = jr_next_elem(r)) > 0) {
			char *s = NULL;

			err = read_str(r, &s);
			if (!err && s)
				sig_add(l->signals, sizeof(l->signals), s);
			free(s);
		}
		return err;
	}
	return jr_skip(r);
}

/* A line object and the lines of its children, under parent. */
static int read_line(struct jr *r, struct topq *t, long parent, int depth)
{
	struct jr_str key;
	long k = add_line(t, TOPQ_RUN, depth, parent);
	int err;

	if (k < 0)
		return -ENOMEM;
	if (depth > 3)
		return -EINVAL;
	err = jr_obj_open(r);
	while (!err && (err = jr_next_member(r, &key)) > 0) {
		if (!jr_str_eq(&key, "children", 8)) {
			err = read_member(r, &key, &t->v[k]);
			continue;
		}
		err = jr_arr_open(r);
		while (!err && (err = jr_next_elem(r)) > 0)
			err = read_line(r, t, k, depth + 1);
	}
	return err;
}

/* The tree of a frame topq_print_json() printed (see topq.h). */
int topq_from_json(const char *buf, size_t len, struct topq *t)
{
	struct jr r;
	struct jr_str key;
	char *tm = NULL;
	int err;

	memset(t, 0, sizeof(*t));
	jr_init(&r, buf, len);
	err = jr_obj_open(&r);
	while (!err && (err = jr_next_member(&r, &key)) > 0) {
		if (jr_str_eq(&key, "time", 4)) {
			err = read_str(&r, &tm);
			if (!err && (!tm || storeq_parse_time(tm, &t->now)))
				err = -EINVAL;
		} else if (jr_str_eq(&key, "runs", 4)) {
			err = jr_arr_open(&r);
			while (!err && (err = jr_next_elem(&r)) > 0) {
				err = read_line(&r, t, -1, 0);
				t->runs++;
			}
		} else if (jr_str_eq(&key, "runs_running", 12)) {
			err = jr_u64(&r, (uint64_t *)&t->running);
		} else {
			err = jr_skip(&r);
		}
	}
	if (!err)
		err = jr_end(&r);
	free(tm);
	return err < 0 ? err : 0;
}
