// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rightsize.c - `jobtrace rightsize`: per workflow task, what its
 * instances used over the selected runs (p95 of memory peak, cores used
 * and wall time), what they asked for, and the settings to ask next time
 * as text, JSON, a Nextflow config, a Snakemake profile or sbatch options.
 * The definitions are in rightsize.h.
 *
 * One SQL statement reads the selected processes that have a task, each
 * with how many tasks its job ran and its job's end record (allocation,
 * memory peak); the rest is C: instances from the parent_id links, the
 * concurrent memory peak by a sweep over start and end times, the
 * percentiles and the rounding.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "json.h"
#include "log.h"
#include "rightsize.h"
#include "store.h"
#include "util.h"

#define MIB (1ULL << 20)
#define P95 95			/* the percentile used, in percent */
#define ENGINE "workflow-engine"	/* tool.category left out of the sweep */

/*
 * The selected processes with a task (?1: the selector), each with the
 * number of tasks its job ran and its job's end record on its host.
 * SQLite takes the bare columns of the grouped `je` rows from the row of
 * the MAX(): the latest end record.
 */
#define ROWS_SQL \
	"WITH sel AS (SELECT * FROM process WHERE %s AND job_task IS NOT NULL)," \
	" jt AS (SELECT job_id, COUNT(DISTINCT job_task) AS ntask" \
	"  FROM process WHERE job_task IS NOT NULL" \
	"  AND job_id IN (SELECT job_id FROM sel) GROUP BY job_id)," \
	" je AS (SELECT job_id, json_extract(json, '$.host') AS host," \
	"  json_extract(json, '$.allocation.cpus') AS cpus," \
	"  json_extract(json, '$.allocation.mem_bytes') AS mem," \
	"  json_extract(json, '$.usage.mem_peak_bytes') AS peak, MAX(time)" \
	"  FROM record WHERE type = 'job'" \
	"  AND json_extract(json, '$.phase') = 'end'" \
	"  AND job_id IN (SELECT job_id FROM sel)" \
	"  GROUP BY job_id, json_extract(json, '$.host'))" \
	" SELECT sel.id, sel.parent_id, sel.host, sel.job_id, sel.job_run," \
	" sel.job_task, sel.tool_category, sel.start_time, sel.end_time," \
	" COALESCE(sel.cpu_user_s, 0) + COALESCE(sel.cpu_sys_s, 0)," \
	" sel.peak_rss_bytes, jt.ntask, je.cpus, je.mem, je.peak" \
	" FROM sel LEFT JOIN jt ON jt.job_id = sel.job_id" \
	" LEFT JOIN je ON je.job_id = sel.job_id AND je.host IS sel.host" \
	" ORDER BY sel.start_time, sel.host, sel.pid, sel.id"

/* One selected process with a task. */
struct rs_row {
	char *id;
	char *parent_id;
	char *host;
	char *job;
	char *run;
	char *task;
	bool engine;		/* tool.category workflow-engine */
	bool own;		/* its job ran this task only */
	double start;		/* epoch seconds */
	double end;		/* not before start */
	double cpu;		/* user + system seconds */
	uint64_t rss;		/* peak_rss_bytes */
	int64_t req_cpus;	/* its job's end record; -1: unknown */
	int64_t req_mem;
	int64_t job_peak;
	long parent;		/* its parent in the same instance, or -1 */
	long root;		/* the instance's topmost process, -1: not yet */
};

/* One execution of a task. */
struct rs_inst {
	const struct rs_row *top;	/* its first process: task, job, run */
	char *run_key;		/* what counts as its run; NULL: itself */
	double start, end, cpu;
	uint64_t mem;		/* used memory peak */
	bool mem_job;		/* mem is the job's peak */
	int64_t req_cpus;	/* own job: its allocation; -1: unknown */
	int64_t req_mem;
};

/* A task's figures over its instances. */
struct rs_task {
	const char *name;
	size_t first, n;	/* its instances: inst[first .. first + n) */
	size_t runs;
	size_t mem_job;		/* instances whose memory is their job's peak */
	uint64_t mem;		/* p95 used memory peak */
	double cores;		/* p95 cores used */
	double wall;		/* p95 wall seconds */
	int64_t req_cpus;	/* the latest own-job instance's; -1 */
	int64_t req_mem;
	bool enough;		/* RIGHTSIZE_MIN_RUNS runs or more */
	uint64_t rec_mem;
	unsigned rec_cpus;
	unsigned rec_min;
	double rec_time_s;
};

struct rs {
	struct rs_row *row;
	size_t nrow, cap;
	struct rs_inst *inst;
	size_t ninst;
	struct rs_task *task;
	size_t ntask;
	size_t runs;		/* over the whole selection */
	char sel[256];		/* "pipeline rnaseq" */
};

/* Parse a --format word. */
int rightsize_format_parse(const char *s, enum rightsize_format *out)
{
	static const char *const names[] = {
		[RIGHTSIZE_TEXT] = "text", [RIGHTSIZE_NEXTFLOW] = "nextflow",
		[RIGHTSIZE_SNAKEMAKE] = "snakemake",
		[RIGHTSIZE_SLURM] = "slurm", [RIGHTSIZE_JSON] = "json",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!strcmp(s, names[i])) {
			*out = (enum rightsize_format)i;
			return 0;
		}
	}
	return -EINVAL;
}

/* ceil(1.2 x peak) rounded up to RIGHTSIZE_MEM_STEP, at least one step. */
uint64_t rightsize_memory(uint64_t peak)
{
	const uint64_t step = RIGHTSIZE_MEM_STEP;
	uint64_t need;

	if (peak > (UINT64_MAX - 4) / 6 - step)
		return UINT64_MAX / step * step;
	need = (peak * 6 + 4) / 5;	/* ceil(6/5 peak), exact */
	need = (need + step - 1) / step * step;
	return need ? need : step;
}

/* Round x up to a whole number (x >= 0, below 2^31). */
static unsigned up(double x)
{
	unsigned n = (unsigned)x;

	return (double)n < x ? n + 1 : n;
}

/* max(1, ceil(used - 0.01)). */
unsigned rightsize_cores(double used)
{
	unsigned n;

	if (!(used > 0.01))	/* also NaN */
		return 1;
	if (used > 65536)
		return 65536;
	n = up(used - 0.01);
	return n ? n : 1;
}

/* ceil(1.5 x wall / 60), at least 1. */
unsigned rightsize_minutes(double wall_s)
{
	unsigned n;

	if (!(wall_s > 0))
		return 1;
	if (wall_s > 1e9)
		return 25000000;	/* beyond any scheduler's limit */
	n = up(1.5 * wall_s / 60);
	return n ? n : 1;
}

/* Order doubles ascending. */
static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile: the ceil(pct/100 n)-th smallest. */
double rightsize_percentile(double *v, size_t n, unsigned pct)
{
	size_t rank;

	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_double);
	rank = (pct * n + 99) / 100;
	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	return v[rank - 1];
}

/* ---- loading ------------------------------------------------------------- */

/* A number column as int64, -1 when NULL or not a non-negative number. */
static int64_t col_i64(sqlite3_stmt *st, int i)
{
	int t = sqlite3_column_type(st, i);
	double d;

	if (t == SQLITE_INTEGER) {
		int64_t v = sqlite3_column_int64(st, i);

		return v >= 0 ? v : -1;
	}
	if (t != SQLITE_FLOAT)
		return -1;
	d = sqlite3_column_double(st, i);
	return d >= 0 && d < 9e18 ? (int64_t)d : -1;
}

/* A number column as double; def when NULL or not a finite number. */
static double col_num(sqlite3_stmt *st, int i, double def)
{
	int t = sqlite3_column_type(st, i);
	double d;

	if (t != SQLITE_INTEGER && t != SQLITE_FLOAT)
		return def;
	d = sqlite3_column_double(st, i);
	return d == d && d > -1e18 && d < 1e18 ? d : def;
}

/* Free the rows, instances and tasks. */
static void rs_free(struct rs *r)
{
	for (size_t i = 0; i < r->nrow; i++) {
		struct rs_row *w = &r->row[i];

		free(w->id);
		free(w->parent_id);
		free(w->host);
		free(w->job);
		free(w->run);
		free(w->task);
	}
	for (size_t i = 0; i < r->ninst; i++)
		free(r->inst[i].run_key);
	free(r->row);
	free(r->inst);
	free(r->task);
}

/* Append the current result row of ROWS_SQL. */
static int row_add(struct rs *r, sqlite3_stmt *st)
{
	struct rs_row *w;
	const unsigned char *cat;
	int err = 0;

	if (r->nrow == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 64;
		struct rs_row *v = realloc(r->row, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		r->row = v;
		r->cap = cap;
	}
	w = &r->row[r->nrow++];
	memset(w, 0, sizeof(*w));
	err |= report_col_dup(st, 0, &w->id);
	err |= report_col_dup(st, 1, &w->parent_id);
	err |= report_col_dup(st, 2, &w->host);
	err |= report_col_dup(st, 3, &w->job);
	err |= report_col_dup(st, 4, &w->run);
	err |= report_col_dup(st, 5, &w->task);
	cat = sqlite3_column_text(st, 6);
	w->engine = cat && !strcmp((const char *)cat, ENGINE);
	w->start = col_num(st, 7, 0);
	w->end = col_num(st, 8, w->start);
	if (w->end < w->start)
		w->end = w->start;
	w->cpu = col_num(st, 9, 0);
	if (w->cpu < 0)
		w->cpu = 0;
	w->rss = (uint64_t)(col_i64(st, 10) < 0 ? 0 : col_i64(st, 10));
	w->own = w->job && col_i64(st, 11) == 1;
	w->req_cpus = col_i64(st, 12);
	w->req_mem = col_i64(st, 13);
	w->job_peak = col_i64(st, 14);
	w->parent = w->root = -1;
	if (!w->id || !w->task)
		err = -ENOMEM;	/* not NULL in the view: out of memory */
	return err ? -ENOMEM : 0;
}

/* Load the selected rows. */
static int load_rows(struct store *st, const char *where,
		     const struct report_query *q, struct rs *r)
{
	sqlite3 *db = store_handle(st);
	sqlite3_stmt *stmt = NULL;
	char sql[sizeof(ROWS_SQL) + sizeof(REPORT_JOB_SEL)];
	int rc, err;

	snprintf(sql, sizeof(sql), ROWS_SQL, report_process_where(q));
	err = report_prepare(st, where, sql, q, &stmt);
	while (!err && (rc = sqlite3_step(stmt)) == SQLITE_ROW)
		err = row_add(r, stmt);
	if (!err && rc != SQLITE_DONE) {
		log_error("database %s: %s", where, sqlite3_errmsg(db));
		err = -EIO;
	}
	sqlite3_finalize(stmt);
	return err;
}

/* ---- instances ----------------------------------------------------------- */

/* NULL-tolerant string order (NULL first). */
static int cmp_nstr(const char *a, const char *b)
{
	if (!a || !b)
		return !!a - !!b;
	return strcmp(a, b);
}

/* Order row indices by record id. */
static int cmp_id(const void *a, const void *b, void *arg)
{
	const struct rs_row *row = arg;

	return strcmp(row[*(const long *)a].id, row[*(const long *)b].id);
}

/* The row with record id id (by the sorted indices idx), or -1. */
static long find_id(const struct rs *r, const long *idx, const char *id)
{
	size_t lo = 0, hi = r->nrow;

	while (id && lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(r->row[idx[mid]].id, id);

		if (!c)
			return idx[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/* Link every row to its parent when that has the same task and job. */
static int link_parents(struct rs *r)
{
	long *idx = malloc((r->nrow ? r->nrow : 1) * sizeof(*idx));

	if (!idx)
		return -ENOMEM;
	for (size_t i = 0; i < r->nrow; i++)
		idx[i] = (long)i;
	qsort_r(idx, r->nrow, sizeof(*idx), cmp_id, r->row);
	for (size_t i = 0; i < r->nrow; i++) {
		struct rs_row *w = &r->row[i];
		long p = find_id(r, idx, w->parent_id);

		if (p >= 0 && p != (long)i && !strcmp(r->row[p].task, w->task) &&
		    !cmp_nstr(r->row[p].job, w->job))
			w->parent = p;
	}
	free(idx);
	return 0;
}

/* The topmost row above i with the same task (a loop in hostile links
 * ends after as many steps as there are rows). */
static long root_of(struct rs *r, long i)
{
	long j = i;

	for (size_t k = 0; k <= r->nrow; k++) {
		if (r->row[j].root >= 0) {
			j = r->row[j].root;
			break;
		}
		if (r->row[j].parent < 0)
			break;
		j = r->row[j].parent;
	}
	r->row[i].root = j;
	return j;
}

/* Order row indices by instance: task, then job and host for an own job,
 * else the topmost process. */
static int cmp_inst(const void *a, const void *b, void *arg)
{
	const struct rs_row *row = arg;
	const struct rs_row *x = &row[*(const long *)a];
	const struct rs_row *y = &row[*(const long *)b];
	int c = strcmp(x->task, y->task);

	if (c)
		return c;
	if (x->own != y->own)
		return x->own ? -1 : 1;
	if (x->own) {
		c = cmp_nstr(x->job, y->job);
		return c ? c : cmp_nstr(x->host, y->host);
	}
	return (x->root > y->root) - (x->root < y->root);
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

/*
 * The largest sum of peak RSS of the rows m[0..n) alive together,
 * workflow-engine processes left out; ev has room for 2n events.
 */
static uint64_t concurrent_peak(const struct rs_row *row, const long *m,
				size_t n, struct event *ev)
{
	size_t k = 0;
	int64_t cur = 0, max = 0;

	for (size_t i = 0; i < n; i++) {
		const struct rs_row *w = &row[m[i]];
		int64_t rss = w->rss > INT64_MAX / 4 ? INT64_MAX / 4 :
			      (int64_t)w->rss;

		if (w->engine || !rss)
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

/* What counts as the run of the instance whose first process is w:
 * job.run, else the job id; NULL: the instance alone. */
static int run_key(const struct rs_row *w, char **out)
{
	*out = NULL;
	if (w->run)
		*out = strdup(w->run);
	else if (w->job && asprintf(out, "\x1fjob\x1f%s", w->job) < 0)
		*out = NULL;
	else
		return 0;
	return *out ? 0 : -ENOMEM;
}

/* Fill one instance from its rows m[0..n) (in start order). */
static int inst_fill(struct rs *r, struct rs_inst *in, const long *m,
		     size_t n, struct event *ev)
{
	const struct rs_row *top = &r->row[m[0]];

	memset(in, 0, sizeof(*in));
	in->top = top;
	in->start = top->start;
	in->end = top->end;
	for (size_t i = 0; i < n; i++) {
		const struct rs_row *w = &r->row[m[i]];

		if (w->start < in->start)
			in->start = w->start;
		if (w->end > in->end)
			in->end = w->end;
		in->cpu += w->cpu;
	}
	in->req_cpus = top->own ? top->req_cpus : -1;
	in->req_mem = top->own ? top->req_mem : -1;
	if (top->own && top->job_peak >= 0) {
		in->mem = (uint64_t)top->job_peak;
		in->mem_job = true;
	} else {
		in->mem = concurrent_peak(r->row, m, n, ev);
	}
	return run_key(top, &in->run_key);
}

/* Order indices of the same instance by start time (then row order). */
static int cmp_row_start(const void *a, const void *b, void *arg)
{
	const struct rs_row *row = arg;
	long i = *(const long *)a, j = *(const long *)b;

	if (row[i].start != row[j].start)
		return row[i].start < row[j].start ? -1 : 1;
	return (i > j) - (i < j);
}

/* Group the rows into instances, in task order. */
static int build_instances(struct rs *r)
{
	long *idx = malloc((r->nrow ? r->nrow : 1) * sizeof(*idx));
	struct event *ev = malloc((r->nrow ? r->nrow : 1) * 2 * sizeof(*ev));
	int err = 0;

	r->inst = calloc(r->nrow ? r->nrow : 1, sizeof(*r->inst));
	if (!idx || !ev || !r->inst) {
		err = -ENOMEM;
		goto out;
	}
	err = link_parents(r);
	if (err)
		goto out;
	for (size_t i = 0; i < r->nrow; i++) {
		root_of(r, (long)i);
		idx[i] = (long)i;
	}
	qsort_r(idx, r->nrow, sizeof(*idx), cmp_inst, r->row);
	for (size_t i = 0; i < r->nrow && !err;) {
		size_t j = i + 1;

		while (j < r->nrow && !cmp_inst(&idx[i], &idx[j], r->row))
			j++;
		qsort_r(idx + i, j - i, sizeof(*idx), cmp_row_start, r->row);
		err = inst_fill(r, &r->inst[r->ninst], idx + i, j - i, ev);
		r->ninst++;
		i = j;
	}
out:
	free(idx);
	free(ev);
	return err;
}

/* ---- tasks --------------------------------------------------------------- */

/* Order run keys, NULL (an instance alone) apart. */
static int cmp_key(const void *a, const void *b)
{
	return cmp_nstr(*(char *const *)a, *(char *const *)b);
}

/* Distinct runs among n instances; keys has room for n. */
static size_t count_runs(const struct rs_inst *in, size_t n, char **keys)
{
	size_t runs = 0;

	for (size_t i = 0; i < n; i++)
		keys[i] = in[i].run_key;
	qsort(keys, n, sizeof(*keys), cmp_key);
	for (size_t i = 0; i < n; i++)
		if (!keys[i] || !i || cmp_nstr(keys[i - 1], keys[i]))
			runs++;
	return runs;
}

/* The figures and recommendation of one task from its instances. */
static void task_fill(struct rs_task *t, const struct rs_inst *in,
		      double *v, char **keys)
{
	double latest = -1;

	t->runs = count_runs(in, t->n, keys);
	t->req_cpus = t->req_mem = -1;
	for (size_t i = 0; i < t->n; i++) {
		v[i] = (double)in[i].mem;
		t->mem_job += in[i].mem_job;
		if ((in[i].req_cpus >= 0 || in[i].req_mem >= 0) &&
		    in[i].start >= latest) {
			latest = in[i].start;
			t->req_cpus = in[i].req_cpus;
			t->req_mem = in[i].req_mem;
		}
	}
	t->mem = (uint64_t)rightsize_percentile(v, t->n, P95);
	for (size_t i = 0; i < t->n; i++) {
		double wall = in[i].end - in[i].start;

		v[i] = wall > 0 ? in[i].cpu / wall : 0;
	}
	t->cores = rightsize_percentile(v, t->n, P95);
	for (size_t i = 0; i < t->n; i++)
		v[i] = in[i].end - in[i].start;
	t->wall = rightsize_percentile(v, t->n, P95);
	t->enough = t->runs >= RIGHTSIZE_MIN_RUNS;
	if (!t->enough)
		return;
	t->rec_mem = rightsize_memory(t->mem);
	t->rec_cpus = rightsize_cores(t->cores);
	t->rec_time_s = 1.5 * t->wall;
	t->rec_min = rightsize_minutes(t->wall);
}

/* Group the instances (in task order) into tasks. */
static int build_tasks(struct rs *r)
{
	size_t n = r->ninst ? r->ninst : 1;
	double *v = malloc(n * sizeof(*v));
	char **keys = malloc(n * sizeof(*keys));
	int err = 0;

	r->task = calloc(n, sizeof(*r->task));
	if (!v || !keys || !r->task) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < r->ninst;) {
		struct rs_task *t = &r->task[r->ntask++];
		size_t j = i + 1;

		while (j < r->ninst &&
		       !strcmp(r->inst[j].top->task, r->inst[i].top->task))
			j++;
		t->name = r->inst[i].top->task;
		t->first = i;
		t->n = j - i;
		task_fill(t, r->inst + i, v, keys);
		i = j;
	}
	r->runs = count_runs(r->inst, r->ninst, keys);
out:
	free(v);
	free(keys);
	return err;
}

/* ---- output -------------------------------------------------------------- */

/* Whether name can be written in a tool's configuration as it is: what
 * rule and process names are made of (extra: more allowed characters). */
static bool plain_name(const char *name, const char *extra)
{
	if (!*name || strlen(name) > 200)
		return false;
	for (const char *p = name; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '_' ||
		      (extra && strchr(extra, *p))))
			return false;
	return true;
}

/* name made printable, shortened to fit out. */
static const char *shown(const char *name, char *out, size_t len)
{
	util_strlcpy(out, name, len);
	return util_printable(out);
}

/* "1.4 s", "12 min", "2.5 h". */
static void secs_text(double s, char *out, size_t len)
{
	if (s < 60)
		snprintf(out, len, "%.1f s", s);
	else if (s < 3600)
		snprintf(out, len, "%.1f min", s / 60);
	else
		snprintf(out, len, "%.1f h", s / 3600);
}

/* Why a task has no setting ("2 runs, at least 3 needed"). */
static void too_few(const struct rs_task *t, char *out, size_t len)
{
	snprintf(out, len, "%zu run%s, at least %d needed", t->runs,
		 t->runs == 1 ? "" : "s", RIGHTSIZE_MIN_RUNS);
}

/* The first line of every format: what was read. */
static void head_text(const struct rs *r, char *out, size_t len)
{
	snprintf(out, len, "jobtrace rightsize, %s: %zu run%s, %zu task%s,"
		 " %zu instance%s", r->sel, r->runs, r->runs == 1 ? "" : "s",
		 r->ntask, r->ntask == 1 ? "" : "s", r->ninst,
		 r->ninst == 1 ? "" : "s");
}

#define RULE_TEXT \
	"memory = ceil(1.2 x p95 peak) up to 100 MiB, cores = ceil(p95" \
	" cores used), time = 1.5 x p95 wall"

/* Text: the answer per task, then the table behind it. */
static void print_text(const struct rs *r, FILE *out)
{
	char head[512], name[64], b[6][32];

	head_text(r, head, sizeof(head));
	fprintf(out, "%s\n", util_printable(head));
	for (size_t i = 0; i < r->ntask; i++) {
		const struct rs_task *t = &r->task[i];

		shown(t->name, name, 25);
		too_few(t, b[0], sizeof(b[0]));
		if (t->enough)
			fprintf(out, "  %-24s memory %llu MiB, %u core%s, %u min\n",
				name, (unsigned long long)(t->rec_mem / MIB),
				t->rec_cpus, t->rec_cpus == 1 ? "" : "s",
				t->rec_min);
		else
			fprintf(out, "  %-24s no setting: %s\n", name, b[0]);
	}
	fprintf(out, "\n%-36s %-16s %-28s  %s\n", "", "requested",
		"used (p95)", "recommended");
	fprintf(out, "%-24s %5s %5s %5s %10s %11s %6s %9s  %8s %5s %6s\n",
		"TASK", "RUNS", "INST", "CPUS", "MEMORY", "PEAK", "CORES",
		"WALL", "MEMORY", "CORES", "TIME");
	for (size_t i = 0; i < r->ntask; i++) {
		const struct rs_task *t = &r->task[i];

		snprintf(b[0], sizeof(b[0]), "-");
		if (t->req_cpus >= 0)
			snprintf(b[0], sizeof(b[0]), "%lld",
				 (long long)t->req_cpus);
		snprintf(b[1], sizeof(b[1]), "-");
		if (t->req_mem >= 0)
			util_human_bytes((uint64_t)t->req_mem, b[1],
					 sizeof(b[1]));
		util_human_bytes(t->mem, b[2], sizeof(b[2]));
		if (t->mem_job)
			strcat(b[2], t->mem_job == t->n ? "*" : "+");
		secs_text(t->wall, b[3], sizeof(b[3]));
		snprintf(b[4], sizeof(b[4]), "-");
		snprintf(b[5], sizeof(b[5]), "-");
		if (t->enough) {
			snprintf(b[4], sizeof(b[4]), "%llu MiB",
				 (unsigned long long)(t->rec_mem / MIB));
			snprintf(b[5], sizeof(b[5]), "%u min", t->rec_min);
		}
		fprintf(out, "%-24s %5zu %5zu %5s %10s %11s %6.2f %9s  %8s",
			shown(t->name, name, 25), t->runs, t->n, b[0], b[1],
			b[2], t->cores, b[3], b[4]);
		if (t->enough)
			fprintf(out, " %5u %6s\n", t->rec_cpus, b[5]);
		else
			fprintf(out, " %5s %6s\n", "-", "-");
	}
	fprintf(out, "\nPEAK: the concurrent peak RSS of the task's processes,"
		" the workflow engine's own\nleft out; * the job's memory peak"
		" (the task ran as its own job), + some\ninstances so."
		"  Requested: the job's allocation when the task ran as its own"
		" job.\nUsed: p95 over the instances.  Recommended from %d runs"
		" on: memory =\nceil(1.2 x p95 peak) up to 100 MiB, cores ="
		" ceil(p95 cores used), time = 1.5 x\np95 wall.\n",
		RIGHTSIZE_MIN_RUNS);
}

/*
 * The comment lines of a configuration (c: its comment mark): what was
 * read, the rule, and how to use it (use: more lines, each started by c).
 */
static void config_head(const struct rs *r, FILE *out, const char *c,
			const char *use)
{
	char head[512];

	head_text(r, head, sizeof(head));
	fprintf(out, "%s %s\n%s %s\n%s", c, util_printable(head), c,
		RULE_TEXT, use);
}

/* Does the configuration take a setting of t (its name made of what
 * plain_name() allows with extra)? */
static bool settable(const struct rs_task *t, const char *extra)
{
	return t->enough && plain_name(t->name, extra);
}

/*
 * For each task: a comment (c: its mark, indent before it) when it has
 * too few runs or a name the configuration cannot hold (what: "rule"),
 * else put() of it if given.  Returns the tasks with a setting.
 */
static size_t task_lines(const struct rs *r, FILE *out, const char *c,
			 const char *extra, const char *what,
			 void (*put)(const struct rs_task *t, FILE *out))
{
	char name[64], why[64];
	size_t n = 0;

	for (size_t i = 0; i < r->ntask; i++) {
		const struct rs_task *t = &r->task[i];

		shown(t->name, name, sizeof(name));
		if (!t->enough) {
			too_few(t, why, sizeof(why));
			fprintf(out, "%s %s: %s\n", c, name, why);
		} else if (!settable(t, extra)) {
			fprintf(out, "%s %s: not a %s name, left out\n", c, name,
				what);
		} else {
			n++;
			if (put)
				put(t, out);
		}
	}
	return n;
}

/* One process selector of the Nextflow form. */
static void nextflow_line(const struct rs_task *t, FILE *out)
{
	fprintf(out, "    withName: '%s' { cpus = %u; memory = '%llu MB';"
		" time = '%um' }\n", t->name, t->rec_cpus,
		(unsigned long long)(t->rec_mem / MIB), t->rec_min);
}

/* Nextflow: a config for -c (MB is 1024 x 1024 bytes there). */
static void print_nextflow(const struct rs *r, FILE *out)
{
	config_head(r, out, "//", "// use: nextflow run ... -c FILE"
		    " (Nextflow's MB is 1024 KB)\nprocess {\n");
	task_lines(r, out, "    //", ":", "process", nextflow_line);
	fprintf(out, "}\n");
}

/*
 * Snakemake: a profile's config.yaml, the list forms Snakemake 7 reads.
 * mem_mb is Snakemake's MB, 1000 x 1000 bytes: the MiB figure converted
 * up; mem_mib given too, so that neither is derived from the other.
 */
static void print_snakemake(const struct rs *r, FILE *out)
{
	config_head(r, out, "#", "# use: DIR/config.yaml, snakemake --profile"
		    " DIR (mem_mb is Snakemake's MB, 1000000\n# bytes, rounded"
		    " up; mem_mib the same memory in MiB; runtime in minutes)\n");
	if (!task_lines(r, out, "#", NULL, "rule", NULL)) {
		/* Snakemake 7 refuses an empty list and a file of comments */
		fprintf(out, "# no setting: an empty profile\n{}\n");
		return;
	}
	fprintf(out, "set-threads:\n");
	for (size_t i = 0; i < r->ntask; i++)
		if (settable(&r->task[i], NULL))
			fprintf(out, "  - \"%s=%u\"\n", r->task[i].name,
				r->task[i].rec_cpus);
	fprintf(out, "set-resources:\n");
	for (size_t i = 0; i < r->ntask; i++) {
		const struct rs_task *t = &r->task[i];

		if (!settable(t, NULL))
			continue;
		fprintf(out, "  - \"%s:mem_mb=%llu\"\n  - \"%s:mem_mib=%llu\"\n"
			"  - \"%s:runtime=%u\"\n", t->name,
			(unsigned long long)((t->rec_mem + 999999) / 1000000),
			t->name, (unsigned long long)(t->rec_mem / MIB),
			t->name, t->rec_min);
	}
}

/* One task's sbatch options. */
static void slurm_line(const struct rs_task *t, FILE *out)
{
	fprintf(out, "%s: sbatch --cpus-per-task=%u --mem=%lluM --time=%u\n",
		t->name, t->rec_cpus, (unsigned long long)(t->rec_mem / MIB),
		t->rec_min);
}

/* Slurm: sbatch options, one line a task (--mem's M is MiB). */
static void print_slurm(const struct rs *r, FILE *out)
{
	config_head(r, out, "#", "# sbatch options per task (--mem in MiB,"
		    " --time in minutes)\n");
	task_lines(r, out, "#", ":.-", "task", slurm_line);
}

/* A count that may be unknown (-1: null). */
static void json_kv_known(struct jbuf *b, const char *key, int64_t v)
{
	json_key(b, key);
	if (v < 0)
		json_null(b);
	else
		json_i64(b, v);
}

/* JSON: the selection, and every task's figures. */
static int print_json(const struct rs *r, const struct report_query *q,
		      FILE *out)
{
	struct jbuf b;
	char why[64];
	int err = 0;

	jbuf_init(&b);
	json_obj_open(&b);
	json_key(&b, "selection");
	json_obj_open(&b);
	report_json_selector(&b, q);
	json_obj_close(&b);
	json_kv_u64(&b, "runs", r->runs);
	json_kv_u64(&b, "runs_needed", RIGHTSIZE_MIN_RUNS);
	json_kv_u64(&b, "percentile", P95);
	json_key(&b, "tasks");
	json_arr_open(&b);
	for (size_t i = 0; i < r->ntask; i++) {
		const struct rs_task *t = &r->task[i];

		json_obj_open(&b);
		json_kv_str(&b, "task", t->name);
		json_kv_u64(&b, "runs", t->runs);
		json_kv_u64(&b, "instances", t->n);
		json_key(&b, "requested");
		json_obj_open(&b);
		json_kv_known(&b, "cpus", t->req_cpus);
		json_kv_known(&b, "mem_bytes", t->req_mem);
		json_obj_close(&b);
		json_key(&b, "used_p95");
		json_obj_open(&b);
		json_kv_u64(&b, "mem_peak_bytes", t->mem);
		json_kv_str(&b, "mem_source", t->mem_job == t->n ? "job" :
			    t->mem_job ? "job_and_processes" : "processes");
		json_kv_double(&b, "cores", t->cores);
		json_kv_double(&b, "wall_s", t->wall);
		json_obj_close(&b);
		json_key(&b, "recommendation");
		if (t->enough) {
			json_obj_open(&b);
			json_kv_u64(&b, "mem_bytes", t->rec_mem);
			json_kv_u64(&b, "cpus", t->rec_cpus);
			json_kv_double(&b, "time_s", t->rec_time_s);
			json_kv_u64(&b, "time_min", t->rec_min);
			json_obj_close(&b);
			json_key(&b, "note");
			json_null(&b);
		} else {
			json_null(&b);
			too_few(t, why, sizeof(why));
			json_kv_str(&b, "note", why);
		}
		json_obj_close(&b);
	}
	json_arr_close(&b);
	json_obj_close(&b);
	if (b.oom)
		err = -ENOMEM;
	else
		fprintf(out, "%s\n", jbuf_str(&b));
	jbuf_free(&b);
	return err;
}

/* ---- entry points -------------------------------------------------------- */

/* Print the rightsizing of what q selects from an open store. */
int rightsize_run_store(struct store *st, const char *where,
			const struct report_query *q,
			enum rightsize_format fmt, FILE *out)
{
	struct rs r = { 0 };
	int err;

	if (q->pid || !!(q->pipeline && *q->pipeline) + !!(q->run && *q->run) +
	    !!(q->job && *q->job) + (q->since != 0) != 1) {
		log_error("rightsize: give exactly one of --pipeline, --run,"
			  " --job, --since");
		return -EINVAL;
	}
	err = report_restrict(st, where, q);
	if (!err)
		err = load_rows(st, where, q, &r);
	if (err)
		goto out;
	report_query_describe(q, r.sel, sizeof(r.sel));
	if (!r.nrow) {
		fprintf(stderr, "jobtrace: no processes of a workflow task"
			" (job.task) for %s in %s%s\n", r.sel, where,
			q->pipeline ? " (a job without a pipeline of its own"
			" gets \"snakemake\" or \"nextflow\" from the rules)" : "");
		err = -ENOENT;
		goto out;
	}
	err = build_instances(&r);
	if (!err)
		err = build_tasks(&r);
	if (err)
		goto out;
	switch (fmt) {
	case RIGHTSIZE_TEXT:
		print_text(&r, out);
		break;
	case RIGHTSIZE_NEXTFLOW:
		print_nextflow(&r, out);
		break;
	case RIGHTSIZE_SNAKEMAKE:
		print_snakemake(&r, out);
		break;
	case RIGHTSIZE_SLURM:
		print_slurm(&r, out);
		break;
	case RIGHTSIZE_JSON:
		err = print_json(&r, q, out);
		break;
	default:
		err = -EINVAL;
	}
	if (!err && ferror(out)) {
		log_error("rightsize: write failed");
		err = -EIO;
	}
out:
	rs_free(&r);
	return err;
}

/* Print the rightsizing of what q selects from the store at db_path. */
int rightsize_run(const char *db_path, const struct report_query *q,
		  enum rightsize_format fmt, FILE *out)
{
	struct store *st = NULL;
	int err = store_open(db_path, true, &st);

	if (err)
		return err;
	err = rightsize_run_store(st, db_path, q, fmt, out);
	store_close(st);
	return err;
}
