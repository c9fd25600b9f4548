// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * report.c - `jobtrace report` and `jobtrace export` over the SQLite store.
 *
 * Reports select process rows (for a job, also the latest sample of each
 * live process that has no process record yet), link them into a tree by
 * the parent's record id (parent_id), add up each process's own figures in
 * total, by workflow task and by tool, and print them as text, JSON or
 * HTML; for a job, with the header and efficiency its `job` records give.
 * Rows of several hosts (a multi-node job) make one report.  Fields of
 * stored records that have the wrong type read as not known.  Exports
 * print the stored schema v1 JSON verbatim, one record per line.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>	/* isfinite only: no libm needed */
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "cost.h"
#include "filesq.h"
#include "json.h"
#include "json_read.h"
#include "log.h"
#include "report.h"
#include "report_html.h"
#include "report_signals.h"
#include "store.h"
#include "tasks.h"
#include "timesplit.h"
#include "util.h"

#define TOOL_WIDTH 30		/* display columns of the TOOL column */
#define ARGV_SHOWN 60		/* characters of argv shown per process */
#define MAX_DRAWN_DEPTH 24	/* deeper levels reuse the deepest indent */

/*
 * What a process's end means for its job.  The scheduler's own kill of the
 * `extern` step's sleep at job end (Slurm, PrologFlags=Contain) and a pipe
 * writer's SIGPIPE after its reader closed are not failures of the job.
 */
enum outcome {
	OUT_OK,
	OUT_FAILED,
	OUT_RUNNING,
	OUT_JOB_END,	/* extern step killed by SIGKILL/SIGTERM */
	OUT_SIGPIPE,
};

/*
 * The selected processes (storeq_procs_load(): v[i].parent is the tree's
 * link once build_tree() has cut hostile ones), and what the report adds
 * to each (t[i] for v[i]).
 */
struct node {
	enum outcome outcome;
	long inst;		/* its task instance (tasks.h), -1: none */
	/* tree links: indices into the row array, -1 for none */
	long first_child;
	long last_child;
	long next_sibling;
	int depth;
};

struct rows {
	struct storeq_proc *v;
	struct node *t;
	size_t n;
};

/* Figures added over a set of rows, each process's own once. */
struct tally {
	size_t processes;
	size_t failed;
	size_t oom;
	size_t running;
	size_t job_end;		/* killed by the scheduler at job end */
	size_t sigpipe;
	double cpu_user;
	double cpu_sys;
	double wall;		/* sum of the processes' durations */
	size_t instances;	/* by task: its instances (tasks.h), else 0 */
	double inst_wall;	/* by task: their wall times added */
	uint64_t peak_rss;	/* the largest process's */
	uint64_t read_bytes;
	uint64_t write_bytes;
	uint64_t cancelled;
	uint64_t rx;
	uint64_t tx;
	struct storeq_wait w;	/* its processes' waits added */
	double first_start;
	double last_end;
};

/* The tally of the rows that share a key (a task, a tool, a step). */
struct group {
	const char *name;	/* borrowed from a row; NULL: none */
	struct tally t;
	uint64_t mem_peak;	/* a task's: its largest instance's peak */
};

struct groups {
	struct group *v;
	size_t n;
};

/* Totals over the selection. */
struct summary {
	struct tally t;
	struct tasks_proc *tp;	/* the rows as tasks.h takes them */
	struct tasks tasks;	/* their task instances */
	struct groups by_task;
	struct groups by_tool;
	const char **hosts;	/* distinct host names, sorted (borrowed) */
	size_t nhosts;
	int host_width;		/* width of the longest, capped */
};

#define HOST_WIDTH_MAX 24	/* longer host names overflow the column */

/* What a finished process's end means for the job (see enum outcome). */
static enum outcome outcome_of(const struct storeq_proc *w)
{
	bool ext = w->step && !strcmp(w->step, "extern");

	if (w->running)
		return OUT_RUNNING;
	if (w->oom)
		return OUT_FAILED;
	if (w->exit_signal == SIGPIPE)
		return OUT_SIGPIPE;
	if (ext && (w->exit_signal == SIGKILL || w->exit_signal == SIGTERM))
		return OUT_JOB_END;
	return w->exit_code || w->exit_signal ? OUT_FAILED : OUT_OK;
}

/* Free every row and the arrays. */
static void rows_free(struct rows *r)
{
	storeq_procs_free(r->v, r->n);
	free(r->t);
	r->v = NULL;
	r->t = NULL;
	r->n = 0;
}

/* Check the query has exactly one selector. */
static int query_check(const struct report_query *q)
{
	int n = !!(q->job && *q->job) + !!(q->run && *q->run) +
		!!(q->pipeline && *q->pipeline) + (q->since != 0) +
		(q->pid != 0);

	if (n != 1) {
		log_error("report: give exactly one of --job, --run,"
			  " --pipeline, --since, --pid");
		return -EINVAL;
	}
	if (q->pid < 0) {
		log_error("report: bad pid %lld", (long long)q->pid);
		return -EINVAL;
	}
	return 0;
}



/*
 * Select the process rows of q (storeq_procs_load()); for a job, also its
 * live processes that have no process record yet, from their latest
 * sample (what `sstat` would show).  Each row's outcome; no tree yet.
 */
static int load_rows(struct store *st, const char *where,
		     const struct report_query *q, bool json, struct rows *r)
{
	int err;

	err = storeq_procs_load(st, where, q, STOREQ_PROC_SAMPLES |
				(json ? STOREQ_PROC_JSON : 0), &r->v, &r->n);
	if (err)
		return err;
	r->t = malloc((r->n ? r->n : 1) * sizeof(*r->t));
	if (!r->t)
		return -ENOMEM;
	for (size_t i = 0; i < r->n; i++)
		r->t[i] = (struct node){
			.outcome = outcome_of(&r->v[i]), .inst = -1,
			.first_child = -1, .last_child = -1,
			.next_sibling = -1,
		};
	return 0;
}

/*
 * Link rows into a forest by the loader's links (parent_id, a live
 * process's children by ppid); children keep start-time order.  Ids carry
 * host and boot, so processes of several hosts never mix.
 */
static void build_tree(struct rows *r)
{
	for (size_t i = 0; i < r->n; i++) {
		struct storeq_proc *w = &r->v[i];

		if (w->parent == (long)i)
			w->parent = -1;
	}

	/* a corrupt store could hold a parent cycle: cut it */
	for (size_t i = 0; i < r->n; i++) {
		size_t steps = 0;
		long a = r->v[i].parent;

		while (a >= 0 && steps <= r->n) {
			a = r->v[a].parent;
			steps++;
		}
		if (a >= 0)
			r->v[i].parent = -1;
	}

	/* rows are in start order, so children come out in start order */
	for (size_t i = 0; i < r->n; i++) {
		long p = r->v[i].parent;
		int depth = 0;

		for (long a = p; a >= 0 && depth < MAX_DRAWN_DEPTH;
		     a = r->v[a].parent)
			depth++;
		r->t[i].depth = depth;
		if (p < 0)
			continue;
		if (r->t[p].last_child < 0)
			r->t[p].first_child = (long)i;
		else
			r->t[r->t[p].last_child].next_sibling = (long)i;
		r->t[p].last_child = (long)i;
	}
}

/* Visit order: depth first, roots and children by start time. */
static long next_in_tree(const struct rows *r, long i)
{
	if (r->t[i].first_child >= 0)
		return r->t[i].first_child;
	while (i >= 0) {
		if (r->t[i].next_sibling >= 0)
			return r->t[i].next_sibling;
		i = r->v[i].parent;
	}
	return -1;
}

/* First root by start time (roots follow through next_root()). */
static long next_root(const struct rows *r, long after)
{
	for (size_t i = after + 1; i < r->n; i++)
		if (r->v[i].parent < 0)
			return (long)i;
	return -1;
}

/* Order host names for the distinct list. */
static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Collect the distinct host names of the rows into s->hosts. */
static int collect_hosts(const struct rows *r, struct summary *s)
{
	size_t n = 0;

	s->hosts = malloc((r->n ? r->n : 1) * sizeof(*s->hosts));
	if (!s->hosts)
		return -ENOMEM;
	for (size_t i = 0; i < r->n; i++)
		s->hosts[i] = r->v[i].host ? r->v[i].host : "?";
	qsort(s->hosts, r->n, sizeof(*s->hosts), cmp_str);
	for (size_t i = 0; i < r->n; i++) {
		if (n && strcmp(s->hosts[n - 1], s->hosts[i]) == 0)
			continue;
		s->hosts[n++] = s->hosts[i];
	}
	s->nhosts = n;
	s->host_width = 4;	/* "HOST" */
	for (size_t i = 0; i < n; i++) {
		size_t w = strlen(s->hosts[i]);

		if (w > (size_t)s->host_width)
			s->host_width = w < HOST_WIDTH_MAX ? (int)w :
							     HOST_WIDTH_MAX;
	}
	return 0;
}

/* "HH:MM:SS.mmm" in UTC. */
static void clock_text(double t, char *out, size_t len)
{
	uint64_t ns = storeq_time_ns(t);
	char ts[28];

	/* rounded to the millisecond: the format cuts */
	json_format_time(ns < UINT64_MAX - 500000 ? ns + 500000 : ns, ts,
			 sizeof(ts));
	snprintf(out, len, "%.12s", ts + 11);
}

/* "YYYY-MM-DD" in UTC. */
static void date_text(double t, char *out, size_t len)
{
	char ts[28];

	json_format_time(storeq_time_ns(t), ts, sizeof(ts));
	snprintf(out, len, "%.10s", ts);
}

/*
 * Exit column: "0", "3", "SIGKILL", "SIGKILL OOM", "SIGPIPE (reader
 * closed)", "SIGKILL (job end)", "running", "running (sample 10:00:25.000)".
 */
static void exit_text(const struct storeq_proc *w, enum outcome o,
		      char *out, size_t len)
{
	const char *oom = w->oom ? " OOM" : "";
	const char *why = o == OUT_SIGPIPE ? " (reader closed)" :
			  o == OUT_JOB_END ? " (job end)" : "";
	int sig = w->exit_signal;
	/* glibc's table of names; NULL for real-time and unknown signals */
	const char *abbrev = sig > 0 ? sigabbrev_np(sig) : NULL;
	char t[16];

	if (w->sampled) {
		clock_text(w->end, t, sizeof(t));
		snprintf(out, len, "running (sample %s)", t);
	} else if (w->running) {
		snprintf(out, len, "running%s", oom);
	} else if (abbrev) {
		snprintf(out, len, "SIG%s%s%s", abbrev, oom, why);
	} else if (sig > 0) {
		snprintf(out, len, "SIG%d%s%s", sig, oom, why);
	} else {
		snprintf(out, len, "%d%s", w->exit_code, oom);
	}
}

/* Duration column: "1.250s", "running", or "25.013s+" so far (sampled). */
static void duration_text(const struct storeq_proc *w, char *out, size_t len)
{
	if (w->sampled)
		snprintf(out, len, "%.3fs+", w->end - w->start);
	else if (w->running)
		snprintf(out, len, "running");
	else
		snprintf(out, len, "%.3fs", w->end - w->start);
}


/* Tool column: the row's tool as storeq_tool_name() names it. */
static const char *tool_text(const struct storeq_proc *w)
{
	return storeq_tool_name(w->tool, w->exe, w->comm);
}

/* Add one process's own figures (row i) to t. */
static void tally_add(struct tally *t, const struct rows *r, size_t i)
{
	const struct storeq_proc *w = &r->v[i];
	enum outcome o = r->t[i].outcome;

	if (!t->processes || w->start < t->first_start)
		t->first_start = w->start;
	if (!t->processes || w->end > t->last_end)
		t->last_end = w->end;
	t->processes++;
	t->failed += o == OUT_FAILED;
	t->running += o == OUT_RUNNING;
	t->job_end += o == OUT_JOB_END;
	t->sigpipe += o == OUT_SIGPIPE;
	if (w->oom)
		t->oom++;
	t->cpu_user += w->cpu_user;
	t->cpu_sys += w->cpu_sys;
	t->wall += w->end - w->start;
	if (w->peak_rss > t->peak_rss)
		t->peak_rss = w->peak_rss;
	t->read_bytes += w->read_bytes;
	t->write_bytes += w->write_bytes;
	t->cancelled += w->cancelled;
	t->rx += w->rx;
	t->tx += w->tx;
	t->w.blkio_s += w->w.blkio_s;
	timesplit_waits_add(&t->w.k, &w->w.k);
}

/* The key row i is grouped by. */
typedef const char *(*group_key)(const struct rows *r, size_t i);

/* Group key: the workflow task of a task's process (tasks.h; NULL:
 * none, also for a submitting client). */
static const char *task_key(const struct rows *r, size_t i)
{
	return r->t[i].inst >= 0 ? r->v[i].task : NULL;
}

/* Group key: the tool column's name. */
static const char *tool_key(const struct rows *r, size_t i)
{
	return tool_text(&r->v[i]);
}

/* Group key: the scheduler's step ("-": none). */
static const char *step_key(const struct rows *r, size_t i)
{
	const char *step = r->v[i].step;

	return step && *step ? step : "-";
}

/* Rows and key for ordering row indices by key. */
struct by_key {
	const struct rows *r;
	group_key key;
};

/* Compare two keys; NULL (none) sorts last. */
static int cmp_key(const char *x, const char *y)
{
	if (!x || !y)
		return !x - !y;
	return strcmp(x, y);
}

/* Order row indices by their key. */
static int cmp_row_key(const void *a, const void *b, void *arg)
{
	const struct by_key *k = arg;

	return cmp_key(k->key(k->r, *(const size_t *)a),
		       k->key(k->r, *(const size_t *)b));
}

/* Most CPU first; equal CPU by name. */
static int cmp_group_cpu(const void *a, const void *b)
{
	const struct group *x = a, *y = b;
	double cx = x->t.cpu_user + x->t.cpu_sys;
	double cy = y->t.cpu_user + y->t.cpu_sys;

	if (cx != cy)
		return cx > cy ? -1 : 1;
	return cmp_key(x->name, y->name);
}

/* Tally the rows by key into g (sorted by CPU, most first). */
static int group_rows(const struct rows *r, group_key key, struct groups *g)
{
	struct by_key k = { r, key };
	size_t *idx;

	g->n = 0;
	g->v = calloc(r->n ? r->n : 1, sizeof(*g->v));
	idx = malloc((r->n ? r->n : 1) * sizeof(*idx));
	if (!g->v || !idx) {
		free(idx);
		return -ENOMEM;
	}
	for (size_t i = 0; i < r->n; i++)
		idx[i] = i;
	qsort_r(idx, r->n, sizeof(*idx), cmp_row_key, &k);
	for (size_t i = 0; i < r->n; i++) {
		const char *name = key(r, idx[i]);

		if (!g->n || cmp_key(g->v[g->n - 1].name, name))
			g->v[g->n++].name = name;
		tally_add(&g->v[g->n - 1].t, r, idx[i]);
	}
	free(idx);
	qsort(g->v, g->n, sizeof(*g->v), cmp_group_cpu);
	return 0;
}

/* Free what summarize() allocated. */
static void summary_free(struct summary *s)
{
	free(s->hosts);
	free(s->by_task.v);
	free(s->by_tool.v);
	free(s->tp);
	tasks_free(&s->tasks);
}

/* The task instances of the rows (tasks.h): each row's inst, and the
 * rows as tasks.h takes them in s->tp (strings borrowed). */
static int task_instances(sqlite3 *db, const char *path, struct rows *r,
			  struct summary *s)
{
	int err = tasks_of_procs(db, path, r->v, r->n, &s->tp, &s->tasks);

	for (size_t i = 0; !err && i < r->n; i++)
		r->t[i].inst = s->tasks.of[i];
	return err;
}

/* Each task group's instances, their wall times added (first start to
 * last end of each) and memory peak: its largest instance's. */
static void task_peaks(struct summary *s)
{
	for (size_t i = 0; i < s->by_task.n; i++) {
		struct group *g = &s->by_task.v[i];

		for (size_t k = 0; g->name && k < s->tasks.n; k++) {
			const struct tasks_inst *in = &s->tasks.inst[k];

			if (strcmp(in->task, g->name))
				continue;
			g->t.instances++;
			g->t.inst_wall += in->end - in->start;
			if (in->mem > g->mem_peak)
				g->mem_peak = in->mem;
		}
	}
}

/* Add up the selection, in total, by task and by tool (free it). */
static int summarize(sqlite3 *db, const char *path, struct rows *r,
		     struct summary *s)
{
	int err;

	memset(s, 0, sizeof(*s));
	for (size_t i = 0; i < r->n; i++)
		tally_add(&s->t, r, i);
	err = task_instances(db, path, r, s);
	if (!err)
		err = group_rows(r, task_key, &s->by_task);
	if (!err)
		err = group_rows(r, tool_key, &s->by_tool);
	if (!err)
		task_peaks(s);
	return err ? err : collect_hosts(r, s);
}

/* Output state of argv_display(). */
struct disp {
	char *out;
	size_t len;
	size_t o;
	size_t chars;
	size_t max;
	size_t keep;	/* where to cut for "...", SIZE_MAX until known */
	size_t cstart;	/* offset of the character being written */
	bool more;	/* something did not fit */
};

/* Add bytes to the display line; new_char starts a character. */
static bool disp_put(struct disp *d, const char *p, size_t n, bool new_char)
{
	if (new_char) {
		d->cstart = d->o;
		if (d->chars == d->max - 3)
			d->keep = d->o;
		if (d->chars == d->max) {
			d->more = true;
			return false;
		}
		d->chars++;
	}
	if (d->o + n + 4 > d->len) {
		d->more = true;
		if (d->cstart < d->keep)
			d->keep = d->cstart;
		return false;
	}
	memcpy(d->out + d->o, p, n);
	d->o += n;
	return true;
}

/*
 * Add one argument's bytes: a control character, or a byte that is not
 * part of valid UTF-8 (json.h writes such a byte as \u00XX: JR_BYTES
 * gives it back), shows as '?'.
 */
static void disp_arg(struct disp *d, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	const unsigned char *end = p + n;

	while (p < end && !d->more) {
		size_t k = *p < 0x80 ? 1 : json_utf8_len(p, (size_t)(end - p));

		if (!k || *p < 0x20 || *p == 0x7f) {
			disp_put(d, "?", 1, true);
			p++;
		} else {
			disp_put(d, (const char *)p, k, true);
			p += k;
		}
	}
}

/*
 * Turn the argv column (a JSON array of strings) into one display line:
 * arguments joined by spaces, control characters shown as '?', at most
 * max characters with "..." at the end when cut.  out must hold at least
 * 4 * max + 4 bytes.  Malformed input ends the line early.
 */
static void argv_display(const char *json, char *out, size_t len,
			 size_t max)
{
	struct disp d = { .out = out, .len = len, .max = max,
			  .keep = SIZE_MAX };
	struct jbuf scratch;
	struct jr_str arg;
	const char *s;
	bool first = true;
	struct jr r;
	size_t n;

	out[0] = '\0';
	if (!json || max < 4 || len < 4 * max + 4)
		return;
	jbuf_init(&scratch);
	jr_init(&r, json, strlen(json));
	if (jr_arr_open(&r))
		return;
	while (!d.more && jr_next_elem(&r) > 0 && !jr_str(&r, &arg)) {
		s = jr_str_jbuf(&arg, &scratch, JR_BYTES, &n);
		if (!s || (!first && !disp_put(&d, " ", 1, true)))
			break;
		first = false;
		disp_arg(&d, s, n);
	}
	jbuf_free(&scratch);
	if (d.more && d.keep != SIZE_MAX) {
		memcpy(out + d.keep, "...", 3);
		d.o = d.keep + 3;
	}
	out[d.o] = '\0';
	util_printable(out);
}

/* Count display columns of UTF-8 text (one per code point). */
static size_t display_width(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			n++;
	return n;
}

/*
 * Tree drawing for row i: the branch before its tool name ("│  ├─ ") and
 * the prefix of lines under it, which continues the lines of later
 * siblings and of its own children.
 */
static void tree_prefix(const struct rows *r, long i, char *branch,
			char *under, size_t len)
{
	bool more[MAX_DRAWN_DEPTH];
	int levels = 0;
	const struct storeq_proc *w = &r->v[i];
	size_t b = 0, u = 0;

	/* more[k]: does the ancestor at that level have later siblings */
	for (long a = w->parent; a >= 0 && r->v[a].parent >= 0 &&
	     levels < MAX_DRAWN_DEPTH - 1; a = r->v[a].parent)
		more[levels++] = r->t[a].next_sibling >= 0;
	branch[0] = under[0] = '\0';
	for (int k = levels - 1; k >= 0; k--) {
		b += snprintf(branch + b, len - b, "%s",
			      more[k] ? "│  " : "   ");
	}
	memcpy(under, branch, b + 1);
	u = b;
	if (w->parent >= 0) {
		bool last = r->t[i].next_sibling < 0;

		snprintf(branch + b, len - b, "%s", last ? "└─ " : "├─ ");
		u += snprintf(under + u, len - u, "%s", last ? "   " : "│  ");
	}
	snprintf(under + u, len - u, "%s",
		 r->t[i].first_child >= 0 ? "│ " : "  ");
}

/* A host name for a text column: control characters become '?'. */
static void host_text(const char *host, char *out, size_t len)
{
	util_strlcpy(out, host ? host : "?", len);
	util_printable(out);
}

/* The first line: selector, counts, dates. */
static void print_title(const struct summary *s, const char *sel, FILE *out)
{
	const struct tally *t = &s->t;
	char d1[16], d2[16];

	date_text(t->first_start, d1, sizeof(d1));
	date_text(t->last_end, d2, sizeof(d2));
	fprintf(out, "jobtrace report: %s: %zu processes", sel, t->processes);
	if (s->nhosts > 1)
		fprintf(out, " on %zu hosts", s->nhosts);
	fprintf(out, ", %zu failed, %zu OOM-killed", t->failed, t->oom);
	if (t->job_end)
		fprintf(out, ", %zu killed at job end (extern step)",
			t->job_end);
	if (t->sigpipe)
		fprintf(out, ", %zu SIGPIPE (reader closed)", t->sigpipe);
	if (t->running)
		fprintf(out, ", %zu running", t->running);
	if (!t->processes)
		fputs(" (times UTC)\n", out);
	else if (strcmp(d1, d2) == 0)
		fprintf(out, " (%s, times UTC)\n", d1);
	else
		fprintf(out, " (%s .. %s, times UTC)\n", d1, d2);
}

/*
 * The process tree: one line per process, its argv under it.  With rows
 * of more than one host a HOST column follows the PID.
 */
static void print_tree(const struct rows *r, const struct summary *s,
		       FILE *out)
{
	char branch[256], under[256], cell[512];
	char argv[ARGV_SHOWN * 4 + 8], host[256];
	char h[6][24], ex[48], start[16], dur[24], cpu[40], net[56];
	bool hosts = s->nhosts > 1;
	int hw = hosts ? s->host_width : 0;

	fputs("\nProcess tree:\n", out);
	fprintf(out, "%-7s ", "PID");
	if (hosts)
		fprintf(out, "%-*s ", hw, "HOST");
	fprintf(out, "%-*s %-12s %10s %12s %10s %10s %10s %21s  %s\n",
		TOOL_WIDTH, "TOOL", "START", "DURATION", "CPU USR/SYS",
		"PEAK RSS", "READ", "WRITE", "NET RX/TX", "EXIT");

	for (long i = next_root(r, -1); i >= 0; i = next_root(r, i)) {
		long end = next_root(r, i);

		for (long j = i; j >= 0 && j != end; j = next_in_tree(r, j)) {
			const struct storeq_proc *w = &r->v[j];
			size_t width;

			tree_prefix(r, j, branch, under, sizeof(branch));
			snprintf(cell, sizeof(cell), "%s%s", branch,
				 tool_text(w));
			/* comm is whatever the program set: no escapes */
			util_printable(cell);
			width = display_width(cell);
			clock_text(w->start, start, sizeof(start));
			duration_text(w, dur, sizeof(dur));
			snprintf(cpu, sizeof(cpu), "%.2f/%.2f", w->cpu_user,
				 w->cpu_sys);
			util_human_bytes(w->peak_rss, h[0], sizeof(h[0]));
			util_human_bytes(w->read_bytes, h[1], sizeof(h[1]));
			util_human_bytes(w->write_bytes, h[2], sizeof(h[2]));
			util_human_bytes(w->rx, h[3], sizeof(h[3]));
			util_human_bytes(w->tx, h[4], sizeof(h[4]));
			snprintf(net, sizeof(net), "%s/%s", h[3], h[4]);
			exit_text(w, r->t[j].outcome, ex, sizeof(ex));
			fprintf(out, "%-7lld ", (long long)w->pid);
			if (hosts) {
				host_text(w->host, host, sizeof(host));
				fprintf(out, "%-*s ", hw, host);
			}
			fprintf(out, "%s%*s %-12s %10s %12s %10s %10s"
				" %10s %21s  %s\n", cell,
				(int)(width < TOOL_WIDTH ?
				      TOOL_WIDTH - width : 0), "",
				start, dur, cpu, h[0], h[1], h[2], net, ex);
			argv_display(w->argv, argv, sizeof(argv), ARGV_SHOWN);
			if (argv[0])
				fprintf(out, "%-7s %*s%s%s%s\n", "", hw, "",
					hosts ? " " : "", under, argv);
		}
	}
}

/* A tally's byte counts for people: peak, read, write, rx, tx, cancelled. */
static void tally_bytes(const struct tally *t, char h[6][24])
{
	const uint64_t v[6] = { t->peak_rss, t->read_bytes, t->write_bytes,
				t->rx, t->tx, t->cancelled };

	for (int i = 0; i < 6; i++)
		util_human_bytes(v[i], h[i], 24);
}

/* The TOTAL line: every process's own figures added once. */
static void print_total(const struct summary *s, FILE *out)
{
	const struct tally *t = &s->t;
	char h[6][24];

	tally_bytes(t, h);
	fprintf(out, "\nTOTAL   CPU %.2fs (user %.2f + sys %.2f), peak RSS"
		" max %s, read %s, write %s", t->cpu_user + t->cpu_sys,
		t->cpu_user, t->cpu_sys, h[0], h[1], h[2]);
	if (t->cancelled)
		fprintf(out, " (cancelled %s)", h[5]);
	fprintf(out, ", net rx %s tx %s, wall %.3fs%s\n", h[3], h[4],
		t->last_end - t->first_start,
		t->running ? " (still running)" : "");
}

#define NAME_WIDTH 24		/* display columns of a summary's name */

/* The cells of one summary line, as text. */
struct cells {
	char name[NAME_WIDTH * 4 + 8];
	char procs[24];
	char wall[24];
	char span[24];
	char cpu[24];
	char eff[16];
	char rss[24];
	char rd[24];
	char wr[24];
	char failed[24];
	char note[192];
};

/* Copy name for a column: controls become '?', cut at max columns. */
static void name_cell(const char *name, char *out, size_t len, size_t max)
{
	size_t o = 0, cols = 0;

	for (const char *c = name; *c && o + 5 < len; c++) {
		bool lead = ((unsigned char)*c & 0xc0) != 0x80;

		if (lead && ++cols > max) {
			/* replace the last character by '~': it was cut */
			while (o && ((unsigned char)out[o - 1] & 0xc0) == 0x80)
				o--;
			if (o)
				o--;
			out[o++] = '~';
			break;
		}
		out[o++] = *c;
	}
	out[o] = '\0';
	util_printable(out);
}

/* Append ", text" (or "text" first) to a note. */
__attribute__((format(printf, 3, 4)))
static void note_add(char *note, size_t len, const char *fmt, ...)
{
	size_t n = strlen(note);
	va_list ap;

	if (n && n + 2 < len) {
		memcpy(note + n, ", ", 3);
		n += 2;
	}
	va_start(ap, fmt);
	vsnprintf(note + n, len - n, fmt, ap);
	va_end(ap);
}

/* A tally's wall time: its instances' for a task, else its processes'. */
static double tally_wall(const struct tally *t)
{
	return t->instances ? t->inst_wall : t->wall;
}

/* CPU over the wall time in percent, or -1 when no wall time: for a task,
 * over its instances' (100% is one core busy), as HTML and rightsize. */
static double cpu_per_wall(const struct tally *t)
{
	double wall = tally_wall(t);

	return wall > 0 ? 100.0 * (t->cpu_user + t->cpu_sys) / wall : -1;
}

/* Format a tally's cells; name NULL shows as none. */
static void tally_cells(const struct tally *t, const char *name,
			const char *none, struct cells *c)
{
	double eff = cpu_per_wall(t);
	char b[24];

	name_cell(name ? name : none, c->name, sizeof(c->name), NAME_WIDTH);
	snprintf(c->procs, sizeof(c->procs), "%zu", t->processes);
	snprintf(c->wall, sizeof(c->wall), "%.2fs", tally_wall(t));
	snprintf(c->span, sizeof(c->span), "%.2fs",
		 t->last_end - t->first_start);
	snprintf(c->cpu, sizeof(c->cpu), "%.2fs", t->cpu_user + t->cpu_sys);
	if (eff >= 0)
		snprintf(c->eff, sizeof(c->eff), "%.0f%%", eff);
	else
		snprintf(c->eff, sizeof(c->eff), "-");
	util_human_bytes(t->peak_rss, c->rss, sizeof(c->rss));
	util_human_bytes(t->read_bytes, c->rd, sizeof(c->rd));
	util_human_bytes(t->write_bytes, c->wr, sizeof(c->wr));
	snprintf(c->failed, sizeof(c->failed), "%zu", t->failed);
	c->note[0] = '\0';
	if (t->running)
		note_add(c->note, sizeof(c->note), "%zu running", t->running);
	if (t->oom)
		note_add(c->note, sizeof(c->note), "%zu OOM-killed", t->oom);
	if (t->job_end)
		note_add(c->note, sizeof(c->note), "%zu killed at job end",
			 t->job_end);
	if (t->sigpipe)
		note_add(c->note, sizeof(c->note), "%zu SIGPIPE", t->sigpipe);
	if (t->cancelled) {
		util_human_bytes(t->cancelled, b, sizeof(b));
		note_add(c->note, sizeof(c->note), "cancelled %s", b);
	}
}

/* Does g name nothing (no rows, or no task recorded anywhere)? */
static bool groups_unnamed(const struct groups *g)
{
	return !g->n || (g->n == 1 && !g->v[0].name);
}

/* The by-task table's explanation of its columns. */
#define TASK_COLUMNS \
	"INST: instances, an execution each (the topmost process of the task" \
	" and its\ndescendants with it, or its own job); PEAK: the largest" \
	" instance's memory peak\n(its job's when the task ran as its own" \
	" job, else the peak sum of its processes'\nRSS, the workflow" \
	" engine's own left out); a submitting sbatch, qsub, ... is\nno" \
	" task's process"

/* A summary table in text: by workflow task (task: with its instances
 * and memory peak, tasks.h) or by tool (each process's peak RSS). */
static void print_groups(const struct groups *g, const char *title,
			 const char *column, const char *none, bool task,
			 FILE *out)
{
	struct cells c;

	if (groups_unnamed(g)) {
		fprintf(out, "\nBy %s: none recorded\n", title);
		return;
	}
	if (task)
		fprintf(out, "\nBy %s, most CPU first (WALL: the instances' wall"
			" times added; SPAN: first\nstart to last end; "
			TASK_COLUMNS "):\n", title);
	else
		fprintf(out, "\nBy %s, most CPU first (WALL: the processes'"
			" durations added; SPAN: first start to last end):\n",
			title);
	fprintf(out, "  %-*s %5s %6s %11s %11s %11s %8s %10s %10s %10s %6s\n",
		NAME_WIDTH, column, task ? "INST" : "", "PROCS", "WALL",
		"SPAN", "CPU", "CPU/WALL", task ? "PEAK" : "PEAK RSS", "READ",
		"WRITE", "FAILED");
	for (size_t i = 0; i < g->n; i++) {
		const struct group *v = &g->v[i];
		char inst[24] = "";
		size_t width;

		tally_cells(&v->t, v->name, none, &c);
		if (task && v->name) {
			snprintf(inst, sizeof(inst), "%zu", v->t.instances);
			util_human_bytes(v->mem_peak, c.rss, sizeof(c.rss));
		} else if (task) {
			snprintf(inst, sizeof(inst), "-");
		}
		width = display_width(c.name);
		fprintf(out, "  %s%*s %5s %6s %11s %11s %11s %8s %10s %10s"
			" %10s %6s%s%s\n", c.name,
			(int)(width < NAME_WIDTH ? NAME_WIDTH - width : 0),
			"", inst, c.procs, c.wall, c.span, c.cpu, c.eff, c.rss,
			c.rd, c.wr, c.failed, c.note[0] ? "  " : "", c.note);
	}
}
/* Where t's time went: its processes' wall times added, split
 * (timesplit.h: the one definition the text, JSON and HTML views print). */
static void tally_split(const struct tally *t, struct timesplit *ts)
{
	struct timesplit_in in = {
		.wall_s = t->wall, .cpu_s = t->cpu_user + t->cpu_sys,
		.blkio_s = t->w.blkio_s, .w = t->w.k,
	};

	timesplit_compute(&in, ts);
}

/*
 * Where each task's time went (text): its processes' wall times added,
 * split into CPU, the waits and the rest (sleep of another kind: a timer,
 * a pipe, a lock, poll); memory's members named.
 */
static void print_where(const struct groups *g, const char *title,
			const char *none, FILE *out)
{
	if (groups_unnamed(g))
		return;
	fprintf(out, "\nWhere the time went, by %s (its processes' own, added;"
		" the rest of WALL is\nother sleep: timers, pipes, locks, poll):\n",
		title);
	for (size_t i = 0; i < g->n; i++) {
		const struct tally *t = &g->v[i].t;
		const struct jt_waits *w = &t->w.k;
		char name[NAME_WIDTH * 4 + 8];
		struct timesplit ts;

		tally_split(t, &ts);
		snprintf(name, sizeof(name), "%s", g->v[i].name ?
			 g->v[i].name : none);
		util_printable(name);
		fprintf(out, "  %s: WALL %.2fs =", name, ts.wall_s);
		for (size_t k = 0; k < ts.n; k++) {
			fprintf(out, "%s %s %.2fs", k ? " +" : "",
				ts.part[k].label, ts.part[k].s);
			if (!strcmp(ts.part[k].name, "memory"))
				fprintf(out, " (reclaim %.2f, thrashing %.2f,"
					" swap-in %.2f)", w->reclaim_s,
					w->thrashing_s, w->swapin_s);
		}
		fprintf(out, "; switches %" PRIu64 " voluntary, %" PRIu64
			" involuntary\n", w->nvcsw, w->nivcsw);
	}
}

#define NODES_MAX 64		/* node names kept for the header */
#define STEPS_MAX 32		/* steps kept for the efficiency summary */

/* A member of the element of $.usage.steps that s (json_each) is at. */
#define STEP_AT(m) "s.fullkey || '." m "'"

/* What a job (or one of its steps) used, from the `job` end records. */
struct usage {
	char name[64];		/* the step */
	double cpu_s;
	int64_t processes;
	uint64_t mem_peak;	/* 0: not known */
	char source[16];	/* cgroup_v1, cgroup_v2 or samples */
};

/* The cost, efficiency and flags of a job's end records (one per node):
 * amounts add up, efficiency is the lowest over the nodes, flags any
 * node's; the rest is the last end record's. */
struct jobcost {
	size_t ends;		/* end records */
	size_t costed;		/* of them with an amount */
	double amount;		/* their sum */
	char currency[8];
	bool mixed;		/* amounts in several currencies */
	char source[300];
	char formula[24];
	double per_hour;	/* < 0: null */
	double share;
	double elapsed_s;
	char note[256];		/* an end record's without an amount */
	double eff[3];		/* cpu, memory, time; < 0: null */
	unsigned flags;		/* COST_F_* */
};

/* What the `job` records say about a job: its report's header. */
struct jobinfo {
	const char *id;
	bool found;		/* there is a job record */
	bool running;		/* a node started it and did not end it */
	char scheduler[32];
	char name[256];
	char user[64];
	char account[64];
	char cost_center[64];
	char run[128];
	char pipeline[128];
	char partition[64];
	char node[NODES_MAX][64];
	size_t nnodes;		/* all of them, even beyond NODES_MAX */
	int64_t uid;		/* -1: not known */
	double start;		/* epoch seconds; 0: not known */
	double end;
	double now;		/* the report's time, for a running job */
	bool exit_known;
	int64_t exit_code;
	int64_t exit_signal;	/* -1: an older record's 128 + signal code */
	char state[16];		/* the end records' state, "" when none */
	uint64_t cpus;
	uint64_t mem_bytes;
	uint64_t gpus;
	bool have_usage;	/* an end record carried "usage" */
	struct usage usage;
	struct jobcost cost;
	struct usage step[STEPS_MAX];
	size_t nsteps;
};

/* Add the usage columns from i on (cpu, processes, peak, source) to u. */
static void usage_add(struct usage *u, sqlite3_stmt *st, int i)
{
	uint64_t peak = storeq_col_u64(st, i + 2);

	u->cpu_s += storeq_col_amount(st, i);
	u->processes += (int64_t)storeq_col_u64(st, i + 1);
	if (peak > u->mem_peak) {
		u->mem_peak = peak;
		u->source[0] = '\0';
		storeq_col_text(st, i + 3, u->source, sizeof(u->source));
	}
}

/* An amount column, -1 when null. */
static double col_opt(sqlite3_stmt *st, int i)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL ? -1 :
	       storeq_col_amount(st, i);
}

/* Add an end record's cost columns from i on (amount ... flags) to c. */
static void cost_add(struct jobcost *c, sqlite3_stmt *st, int i)
{
	const unsigned char *flags = sqlite3_column_text(st, i + 11);
	char cur[8] = "";

	if (!c->ends++)
		c->eff[0] = c->eff[1] = c->eff[2] = -1;
	for (int k = 0; k < 3; k++) {
		double e = col_opt(st, i + 8 + k);

		if (e >= 0 && (c->eff[k] < 0 || e < c->eff[k]))
			c->eff[k] = e;
	}
	for (unsigned k = 0; flags && k < COST_F__N; k++) {
		char q[40];

		snprintf(q, sizeof(q), "\"%s\"", cost_flag_names[k]);
		if (strstr((const char *)flags, q))
			c->flags |= 1u << k;
	}
	if (sqlite3_column_type(st, i) == SQLITE_NULL) {
		storeq_col_text(st, i + 7, c->note, sizeof(c->note));
		return;
	}
	storeq_col_text(st, i + 1, cur, sizeof(cur));
	if (c->costed++ && strcmp(cur, c->currency))
		c->mixed = true;
	util_strlcpy(c->currency, cur, sizeof(c->currency));
	c->amount += storeq_col_amount(st, i);
	storeq_col_text(st, i + 2, c->source, sizeof(c->source));
	storeq_col_text(st, i + 3, c->formula, sizeof(c->formula));
	c->per_hour = col_opt(st, i + 4);
	c->share = col_opt(st, i + 5);
	c->elapsed_s = col_opt(st, i + 6);
}

/* The nodes of a job and whether one of them has not ended it. */
static int load_job_nodes(sqlite3 *db, const char *path,
			  const struct report_query *q, struct jobinfo *ji)
{
	static const char sql[] =
		"SELECT MAX(COALESCE(" JSTR("$.node") ", " JSTR("$.host") ")),"
		" MAX(" JSTR("$.phase") " = 'start'),"
		" MAX(" JSTR("$.phase") " = 'end')"
		" FROM record WHERE type = 'job' AND job_id = ?1"
		" GROUP BY " JSTR("$.host") " ORDER BY 1";
	sqlite3_stmt *st = NULL;
	int rc, err;

	err = storeq_prepare_db(db, path, sql, q, &st);
	while (!err && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		ji->found = true;
		if (sqlite3_column_int(st, 1) && !sqlite3_column_int(st, 2))
			ji->running = true;
		if (ji->nnodes < NODES_MAX)
			storeq_col_text(st, 0, ji->node[ji->nnodes],
				 sizeof(ji->node[0]));
		ji->nnodes++;
	}
	if (!err)
		err = storeq_step_done(db, path, rc);
	sqlite3_finalize(st);
	return err;
}

/* The usage of each step in the end records, merged over the nodes. */
static int load_job_steps(sqlite3 *db, const char *path,
			  const struct report_query *q, struct jobinfo *ji)
{
	static const char sql[] =
		"SELECT " JSTR_AT("r.json", STEP_AT("step")) ","
		" " JNUM_AT("r.json", STEP_AT("cpu_s")) ","
		" " JNUM_AT("r.json", STEP_AT("processes")) ","
		" " JNUM_AT("r.json", STEP_AT("mem_peak_bytes")) ","
		" " JSTR_AT("r.json", STEP_AT("mem_peak_source"))
		" FROM record r, json_each(r.json, '$.usage.steps') s"
		" WHERE r.type = 'job' AND r.job_id = ?1"
		" AND json_type(r.json, '$.usage.steps') = 'array'"
		" AND s.type = 'object' ORDER BY r.time, r.id, s.id";
	sqlite3_stmt *st = NULL;
	int rc, err;

	err = storeq_prepare_db(db, path, sql, q, &st);
	while (!err && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		const unsigned char *t = sqlite3_column_text(st, 0);
		const char *name = t && *t ? (const char *)t : "-";
		size_t k;

		for (k = 0; k < ji->nsteps; k++)
			if (!strcmp(ji->step[k].name, name))
				break;
		if (k == ji->nsteps) {
			if (k == STEPS_MAX)
				continue;
			util_strlcpy(ji->step[k].name, name,
				     sizeof(ji->step[k].name));
			ji->nsteps++;
		}
		usage_add(&ji->step[k], st, 1);
	}
	if (!err)
		err = storeq_step_done(db, path, rc);
	sqlite3_finalize(st);
	return err;
}

/*
 * Read what the `job` records of job say, oldest first, so that a later
 * record (job-update, the end) overrides an earlier one's fields.
 */
static int load_job(sqlite3 *db, const char *path,
		    const struct report_query *q, double now, struct jobinfo *ji)
{
	static const char sql[] =
		"SELECT " JSTR("$.phase") ", " JSTR("$.job.scheduler") ","
		" " JSTR("$.name") ", " JSTR("$.job.user") ","
		" " JSTR("$.job.account") ", " JSTR("$.job.cost_center") ","
		" " JSTR("$.job.run") ", " JSTR("$.job.pipeline") ","
		" " JSTR("$.partition") ", " JNUM("$.uid") ","
		" " JSTR("$.start_time") ", " JSTR("$.end_time") ","
		" " JNUM("$.exit_code") ", " JNUM("$.allocation.cpus") ","
		" " JNUM("$.allocation.mem_bytes") ","
		" " JNUM("$.allocation.gpus") ","
		" json_type(json, '$.usage') = 'object',"
		" " JNUM("$.usage.cpu_s") ", " JNUM("$.usage.processes") ","
		" " JNUM("$.usage.mem_peak_bytes") ","
		" " JSTR("$.usage.mem_peak_source") ","
		" " JNUM("$.cost.amount") ", " JSTR("$.cost.currency") ","
		" " JSTR("$.cost.source") ", " JSTR("$.cost.formula") ","
		" " JNUM("$.cost.price_per_hour") ", " JNUM("$.cost.share") ","
		" " JNUM("$.cost.elapsed_s") ", " JSTR("$.cost.note") ","
		" " JNUM("$.efficiency.cpu") ", " JNUM("$.efficiency.memory") ","
		" " JNUM("$.efficiency.time") ","
		" (CASE json_type(json, '$.flags') WHEN 'array'"
		" THEN json_extract(json, '$.flags') END),"
		" " JSTR("$.state") ", " JNUM("$.exit_signal")
		" FROM record WHERE type = 'job' AND job_id = ?1"
		" ORDER BY time, id";
	sqlite3_stmt *st = NULL;
	int rc, err;

	memset(ji, 0, sizeof(*ji));
	ji->id = q->job;
	ji->uid = -1;
	ji->now = now;
	err = load_job_nodes(db, path, q, ji);
	if (!err)
		err = storeq_prepare_db(db, path, sql, q, &st);
	while (!err && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		const unsigned char *phase = sqlite3_column_text(st, 0);
		bool end = phase && !strcmp((const char *)phase, "end");
		double t0 = storeq_col_time(st, 10, 0);
		double t1 = storeq_col_time(st, 11, 0);

		storeq_col_text(st, 1, ji->scheduler, sizeof(ji->scheduler));
		storeq_col_text(st, 2, ji->name, sizeof(ji->name));
		storeq_col_text(st, 3, ji->user, sizeof(ji->user));
		storeq_col_text(st, 4, ji->account, sizeof(ji->account));
		storeq_col_text(st, 5, ji->cost_center,
				sizeof(ji->cost_center));
		storeq_col_text(st, 6, ji->run, sizeof(ji->run));
		storeq_col_text(st, 7, ji->pipeline, sizeof(ji->pipeline));
		storeq_col_text(st, 8, ji->partition, sizeof(ji->partition));
		if (sqlite3_column_type(st, 9) != SQLITE_NULL)
			ji->uid = (int64_t)storeq_col_u64(st, 9);
		if (t0 > 0 && (!ji->start || t0 < ji->start))
			ji->start = t0;
		if (t1 > ji->end)
			ji->end = t1;
		/* the nodes' exits and states: the first failure tells */
		if (end && sqlite3_column_type(st, 12) != SQLITE_NULL &&
		    (!ji->exit_known || (!ji->exit_code && !ji->exit_signal))) {
			ji->exit_known = true;
			ji->exit_code = sqlite3_column_int64(st, 12);
			ji->exit_signal = sqlite3_column_type(st, 34) ==
					  SQLITE_NULL ? -1 :
					  sqlite3_column_int64(st, 34);
		}
		if (end && (!ji->state[0] || !strcmp(ji->state, "COMPLETED")))
			storeq_col_text(st, 33, ji->state, sizeof(ji->state));
		if (storeq_col_u64(st, 13))
			ji->cpus = storeq_col_u64(st, 13);
		if (storeq_col_u64(st, 14))
			ji->mem_bytes = storeq_col_u64(st, 14);
		if (storeq_col_u64(st, 15))
			ji->gpus = storeq_col_u64(st, 15);
		if (end && sqlite3_column_int(st, 16)) {
			ji->have_usage = true;
			usage_add(&ji->usage, st, 17);
		}
		if (end)
			cost_add(&ji->cost, st, 21);
	}
	if (!err)
		err = storeq_step_done(db, path, rc);
	sqlite3_finalize(st);
	if (!err && ji->have_usage)
		err = load_job_steps(db, path, q, ji);
	return err;
}

/*
 * The job's state as Slurm words it: RUNNING, or its end records' state
 * (COMPLETED, FAILED, CANCELLED, TIMEOUT, OUT_OF_MEMORY, ...); for
 * records older than their state, what the exit code tells, ENDED when
 * the end carried none; NULL with no job record.
 */
static const char *job_state(const struct jobinfo *ji, const struct tally *t)
{
	if (!ji->found)
		return NULL;
	if (ji->running)
		return "RUNNING";
	if (ji->state[0])
		return ji->state;
	if (!ji->exit_known)
		return "ENDED";
	if (!ji->exit_code)
		return "COMPLETED";
	return t->oom ? "OUT_OF_MEMORY" : "FAILED";
}

/* The job's exit as Slurm's ExitCode shows it ("3:0", "0:15 (SIGTERM)",
 * "0:125" for Slurm's OOM mark), or an older record's code. */
static const char *job_exit_text(const struct jobinfo *ji, char *out,
				 size_t len)
{
	int64_t c = ji->exit_code, s = ji->exit_signal;
	const char *name = NULL;

	if (s < 0) {
		/* before exit_signal: 128 + signal in the code */
		if (c > 128 && c < 128 + 65)
			name = sigabbrev_np((int)(c - 128));
		if (name)
			snprintf(out, len, "%lld (128+SIG%s)", (long long)c, name);
		else
			snprintf(out, len, "%lld", (long long)c);
		return out;
	}
	if (s > 0 && s < 65)
		name = sigabbrev_np((int)s);
	snprintf(out, len, "%lld:%lld%s%s%s", (long long)c, (long long)s,
		 name ? " (SIG" : "", name ? name : "", name ? ")" : "");
	return out;
}


/* Seconds from the job's start to its end (or now); -1 when unknown. */
static double job_elapsed(const struct jobinfo *ji)
{
	double end = ji->running ? ji->now : ji->end;

	return ji->start > 0 && end >= ji->start ? end - ji->start : -1;
}

/* One task of a Slurm array (or component of a heterogeneous job) that
 * --job selects by the array's id: its line in the report. */
struct task_line {
	char id[64];
	char state[16];		/* job_state()'s word, "" with no record */
	char exit[64];		/* as print_job() shows it, "" when not known */
	bool exit_known;
	int64_t code, sig;	/* sig -1: an older record's */
	double start, end;	/* epoch seconds, 0: not known */
	double elapsed;		/* -1: not known */
	double cpu_s;		/* the end records' usage, -1: none */
	uint64_t mem_peak;	/* the job's memory peak, 0: not known */
	double eff[2];		/* CPU and memory efficiency, -1: null */
	struct jobcost cost;
};

/* The tasks --job ID selects, and the header they share (the first's). */
struct array_tasks {
	struct task_line *v;
	size_t n;
	struct jobinfo head;
};

/* Fill line t from task ji's records. */
static void task_line_of(const struct jobinfo *ji, struct task_line *t)
{
	static const struct tally none;
	const char *st = job_state(ji, &none);

	util_strlcpy(t->id, ji->id, sizeof(t->id));
	util_strlcpy(t->state, st ? st : "", sizeof(t->state));
	t->exit[0] = '\0';
	t->exit_known = ji->exit_known && !ji->running;
	t->code = ji->exit_code;
	t->sig = ji->exit_signal;
	if (t->exit_known)
		job_exit_text(ji, t->exit, sizeof(t->exit));
	t->start = ji->start;
	t->end = ji->running ? ji->now : ji->end;
	t->elapsed = job_elapsed(ji);
	t->cpu_s = ji->have_usage ? ji->usage.cpu_s : -1;
	t->mem_peak = ji->have_usage ? ji->usage.mem_peak : 0;
	t->eff[0] = ji->cost.ends ? ji->cost.eff[0] : -1;
	t->eff[1] = ji->cost.ends ? ji->cost.eff[1] : -1;
	t->cost = ji->cost;
}

/*
 * The tasks of the array (or heterogeneous job) q->job names, each from
 * its own records, ordered by task number: none (t->n 0) when q->job is
 * one job's id.  t->head is the first's header, with q->job as its id.
 */
static int load_array_tasks(sqlite3 *db, const char *path,
		      const struct report_query *q, double now,
		      struct array_tasks *t)
{
	static const char sql[] =
		"SELECT job_id FROM (SELECT job_id FROM record"
		" WHERE type = 'job' AND " REPORT_JOB_SEL " UNION"
		" SELECT job_id FROM process WHERE " REPORT_JOB_SEL ")"
		" ORDER BY length(job_id), job_id";
	struct jobinfo *ji = calloc(1, sizeof(*ji));
	sqlite3_stmt *st = NULL;
	int rc, err = ji ? 0 : -ENOMEM;

	memset(t, 0, sizeof(*t));
	if (!err)
		err = storeq_prepare_db(db, path, sql, q, &st);
	while (!err && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		const unsigned char *id = sqlite3_column_text(st, 0);
		struct report_query one = *q;
		void *v;

		if (!id || !strcmp((const char *)id, q->job))
			continue;	/* the array's own id is no task */
		v = realloc(t->v, (t->n + 1) * sizeof(*t->v));
		if (!v) {
			err = -ENOMEM;
			break;
		}
		t->v = v;
		one.job = (const char *)id;
		err = load_job(db, path, &one, now, ji);
		if (err)
			break;
		task_line_of(ji, &t->v[t->n]);
		if (!t->n++) {
			t->head = *ji;
			t->head.id = q->job;
		}
	}
	if (!err)
		err = storeq_step_done(db, path, rc);
	sqlite3_finalize(st);
	free(ji);
	return err;
}

/* Elapsed time as Slurm shows it: [D-]HH:MM:SS. */
static void elapsed_text(double s, char *out, size_t len)
{
	long long t = s > 0 ? (long long)(s + 0.5) : 0;

	if (t >= 86400)
		snprintf(out, len, "%lld-%02lld:%02lld:%02lld", t / 86400,
			 t / 3600 % 24, t / 60 % 60, t % 60);
	else
		snprintf(out, len, "%02lld:%02lld:%02lld", t / 3600,
			 t / 60 % 60, t % 60);
}

/* A header field for text: "-" when not known, controls as '?'. */
static const char *field(const char *v, char *buf, size_t len)
{
	host_text(*v ? v : "-", buf, len);
	return buf;
}

/* An efficiency figure as a percentage, or "-" when null. */
static const char *eff_text(double e, char *out, size_t len)
{
	if (e < 0)
		snprintf(out, len, "-");
	else
		snprintf(out, len, "%.1f%%", e * 100);
	return out;
}

/* One line of the efficiency summary: a step, or the whole job. */
struct eff {
	char name[64];
	double cpu_s;		/* user + sys of its processes */
	double elapsed_s;
	uint64_t largest;	/* the largest process's peak RSS */
	uint64_t peak;		/* the memory peak the percentage uses */
	const char *source;	/* where peak comes from (see source_text) */
	long processes;
	double cpu_pct;		/* of the allocation, -1: not known */
	double mem_pct;
};

/* Allocation, job and steps, for a summary in the spirit of seff. */
struct efficiency {
	bool have_job;		/* a job record gave the allocation */
	bool have_usage;	/* the end records' usage gave the memory */
	bool running;
	uint64_t cpus;
	uint64_t mem_bytes;
	struct eff job;
	struct eff step[STEPS_MAX];
	size_t nsteps;
};

/* Percent of part in whole, or -1 when whole is unknown. */
static double pct(double part, double whole)
{
	return whole > 0 ? 100.0 * part / whole : -1;
}

/*
 * The job's efficiency figure k (0 CPU, 1 memory, 2 time) as a fraction, -1
 * when not known: its end records' (the lowest of its nodes'), which the
 * agent computed from the usage they carry.  For a job of one node whose
 * efficiency section shows another CPU or memory figure (no usage in the
 * record, a running job), the percentage of that figure.  The header, the
 * efficiency section, the JSON and the HTML page all print this one.
 */
static double job_eff(const struct jobinfo *ji, const struct efficiency *e,
		      int k)
{
	double v = ji->cost.ends ? ji->cost.eff[k] : -1;
	bool recorded = k == 0 ? ji->have_usage :
			ji->have_usage && ji->usage.mem_peak;

	if ((v >= 0 && recorded) || ji->cost.ends > 1 || !e || k > 1)
		return v;
	v = k ? pct((double)e->job.peak, (double)e->mem_bytes) :
		pct(e->job.cpu_s, (double)e->cpus * e->job.elapsed_s);
	return v < 0 ? -1 : v / 100;
}

/* The header's cost, efficiency and flags lines, from the end records. */
static void print_cost(const struct jobinfo *ji, const struct efficiency *ef,
		       FILE *out)
{
	const struct jobcost *c = &ji->cost;
	char a[256], b[32], d[32], e[32];

	if (!c->ends) {
		fprintf(out, "Cost:        not known%s\n", ji->running ?
			" yet (the job has not ended)" : " (no end record)");
		return;
	}
	if (c->costed) {
		fprintf(out, "Cost:        %.6f %s%s", c->amount,
			field(c->currency, a, sizeof(a)),
			c->mixed ? " (and other currencies: see the records)" : "");
		if (c->costed == 1 && c->ends == 1 && c->share >= 0)
			fprintf(out, " = %g/h x share %.4g x %.1f s / 3600",
				c->per_hour, c->share, c->elapsed_s);
		else if (c->costed == 1 && c->ends == 1)
			fprintf(out, " = %g/h x %.1f s / 3600", c->per_hour,
				c->elapsed_s);
		fprintf(out, "\n             price %s, formula %s",
			field(c->source, a, sizeof(a)),
			field(c->formula, b, sizeof(b)));
		if (c->costed < c->ends)
			fprintf(out, "; %zu of %zu nodes without a cost: %s",
				c->ends - c->costed, c->ends,
				field(c->note, a, sizeof(a)));
		fputc('\n', out);
	} else {
		fprintf(out, "Cost:        not known: %s\n",
			field(c->note, a, sizeof(a)));
	}
	fprintf(out, "Efficiency:  CPU %s, memory %s, time %s%s%s\n",
		eff_text(job_eff(ji, ef, 0), b, sizeof(b)),
		eff_text(job_eff(ji, ef, 1), d, sizeof(d)),
		eff_text(job_eff(ji, ef, 2), e, sizeof(e)),
		c->eff[2] < 0 ? " (no time limit known)" : "",
		c->ends > 1 ? " (the lowest of its nodes)" : "");
	fputs("Flags:       ", out);
	for (unsigned k = 0, n = 0; k < COST_F__N; k++)
		if (c->flags & (1u << k))
			fprintf(out, "%s%s", n++ ? ", " : "", cost_flag_names[k]);
	fputs(c->flags ? "\n" : "none\n", out);
}

/* The header's first lines: job id and scheduler (then what), name, user
 * and uid, account and cost center. */
static void print_who(const struct jobinfo *ji, const char *what, FILE *out)
{
	char a[256], b[256];

	fprintf(out, "Job ID:      %s", field(ji->id, a, sizeof(a)));
	if (ji->scheduler[0])
		fprintf(out, " (%s)", field(ji->scheduler, a, sizeof(a)));
	fprintf(out, "%s\nJob name:    %s\n", what, field(ji->name, a, sizeof(a)));
	fprintf(out, "User:        %s", field(ji->user, a, sizeof(a)));
	if (ji->uid >= 0)
		fprintf(out, " (uid %lld)", (long long)ji->uid);
	fprintf(out, "\nAccount:     %s, cost center %s\n",
		field(ji->account, a, sizeof(a)),
		field(ji->cost_center, b, sizeof(b)));
}

/* The job's header in text: what seff says first. */
static void print_job(const struct jobinfo *ji, const struct efficiency *ef,
		      const struct tally *t, FILE *out)
{
	const char *state = job_state(ji, t);
	double el = job_elapsed(ji);
	char a[256], b[256], c[256], when[48];

	if (!ji->found) {
		fprintf(out, "Job ID:      %s: no job record in the store (no"
			" job-start hook ran): state, user and allocation are"
			" not known\n", field(ji->id, a, sizeof(a)));
		return;
	}
	print_who(ji, "", out);
	fprintf(out, "State:       %s", state);
	if (ji->exit_known && !ji->running)
		fprintf(out, ", exit code %s", job_exit_text(ji, c, sizeof(c)));
	fputc('\n', out);
	if (el >= 0) {
		elapsed_text(el, a, sizeof(a));
		json_format_time(storeq_time_ns(ji->start), when, sizeof(when));
		fprintf(out, "Elapsed:     %s%s (started %s", a,
			ji->running ? " so far" : "", when);
		if (ji->running && t->processes) {
			json_format_time(storeq_time_ns(t->last_end), when,
					 sizeof(when));
			fprintf(out, "; last record %s", when);
		}
		fputs(")\n", out);
	} else {
		fputs("Elapsed:     not known (no start or end time)\n", out);
	}
	fprintf(out, "Run:         %s, pipeline %s\n",
		field(ji->run, a, sizeof(a)),
		field(ji->pipeline, b, sizeof(b)));
	fprintf(out, "Nodes:       %zu (", ji->nnodes);
	for (size_t i = 0; i < ji->nnodes && i < NODES_MAX; i++)
		fprintf(out, "%s%s", i ? ", " : "",
			field(ji->node[i], a, sizeof(a)));
	fprintf(out, "%s), partition %s\n", ji->nnodes > NODES_MAX ?
		", ..." : "", field(ji->partition, c, sizeof(c)));
	print_cost(ji, ef, out);
}

/* A cost for a table cell: "0.001234 USD", "-" when none. */
static const char *cost_cell(const struct jobcost *c, char *out, size_t len)
{
	char cur[32];

	if (!c->costed)
		snprintf(out, len, "-");
	else
		snprintf(out, len, "%.6f %s%s", c->amount,
			 field(c->currency, cur, sizeof(cur)),
			 c->mixed ? " (and other currencies)" : "");
	return out;
}

/* One line of the tasks table. */
static void task_row(FILE *out, const char *id, const char *state,
		     const char *exit, double el, double cpu, uint64_t peak,
		     const double eff[2], const char *cost)
{
	char a[64], b[16], c[32], d[32], e[2][16];

	if (el >= 0)
		elapsed_text(el, b, sizeof(b));
	else
		snprintf(b, sizeof(b), "-");
	if (cpu >= 0)
		snprintf(c, sizeof(c), "%.2f", cpu);
	else
		snprintf(c, sizeof(c), "-");
	if (peak)
		util_human_bytes(peak, d, sizeof(d));
	else
		snprintf(d, sizeof(d), "-");
	fprintf(out, "  %-16s %-14s %-16s %10s %10s %10s %8s %8s %s\n",
		field(id, a, sizeof(a)), state, exit, b, c, d,
		eff_text(eff[0], e[0], sizeof(e[0])),
		eff_text(eff[1], e[1], sizeof(e[1])), cost);
}

/*
 * The header of an array's (a heterogeneous job's) report: what its
 * tasks share (the first's), then a line per task as `sacct -j ID` lists
 * them, then the TOTAL: the span from the first start to the last end,
 * the CPU time, the largest memory peak and the cost.
 */
static void print_array_tasks(const struct array_tasks *t, FILE *out)
{
	static const double none[2] = { -1, -1 };
	const struct jobinfo *h = &t->head;
	double first = 0, last = 0, cpu = -1;
	struct jobcost sum = { 0 };
	uint64_t peak = 0;
	char a[256], b[256], c[64];

	snprintf(a, sizeof(a), ": %zu tasks (array tasks ID_N, heterogeneous"
		 " components ID+N)", t->n);
	print_who(h, a, out);
	fprintf(out, "Run:         %s, pipeline %s\n",
		field(h->run, a, sizeof(a)), field(h->pipeline, b, sizeof(b)));
	fprintf(out, "Tasks:       a line per task, as sacct -j %s lists them\n",
		field(h->id, a, sizeof(a)));
	fprintf(out, "  %-16s %-14s %-16s %10s %10s %10s %8s %8s %s\n",
		"JOB ID", "STATE", "EXIT CODE", "ELAPSED", "CPU (s)",
		"MEM PEAK", "CPU EFF", "MEM EFF", "COST");
	for (size_t i = 0; i < t->n; i++) {
		const struct task_line *x = &t->v[i];

		task_row(out, x->id, x->state[0] ? x->state : "-",
			 x->exit[0] ? x->exit : "-", x->elapsed, x->cpu_s,
			 x->mem_peak, x->eff, cost_cell(&x->cost, c, sizeof(c)));
		if (x->start > 0 && (!first || x->start < first))
			first = x->start;
		if (x->end > last)
			last = x->end;
		if (x->cpu_s >= 0)
			cpu = (cpu < 0 ? 0 : cpu) + x->cpu_s;
		if (x->mem_peak > peak)
			peak = x->mem_peak;
		if (x->cost.costed && sum.costed++ &&
		    strcmp(sum.currency, x->cost.currency))
			sum.mixed = true;
		if (x->cost.costed) {
			util_strlcpy(sum.currency, x->cost.currency,
				     sizeof(sum.currency));
			sum.amount += x->cost.amount;
			sum.mixed |= x->cost.mixed;
		}
	}
	snprintf(a, sizeof(a), "%zu tasks", t->n);
	task_row(out, "TOTAL", a, "", first > 0 && last >= first ?
		 last - first : -1, cpu, peak, none,
		 cost_cell(&sum, c, sizeof(c)));
}

/* Write key, and null when its value is not known; true: write it. */
static bool kv_known(struct jbuf *b, const char *key, bool known)
{
	json_key(b, key);
	if (!known)
		json_null(b);
	return known;
}

/* Write key = v, or null when v < 0. */
static void kv_opt(struct jbuf *b, const char *key, double v)
{
	if (kv_known(b, key, v >= 0))
		json_double(b, v);
}

/* The job's cost, efficiency and flags from its end records, in JSON:
 * the members of the records' objects (amount the sum over its nodes;
 * efficiency job_eff()'s). */
static void json_cost(struct jbuf *b, const struct jobinfo *ji,
		      const struct efficiency *ef)
{
	static const char *const eff[] = { "cpu", "memory", "time" };
	const struct jobcost *c = &ji->cost;
	bool one = c->costed == 1 && c->ends == 1;

	json_key(b, "cost");
	if (!c->ends) {
		json_null(b);
	} else {
		json_obj_open(b);
		if (kv_known(b, "amount", c->costed))
			json_double12(b, c->amount);
		json_kv_str(b, "currency", c->costed && !c->mixed ?
			    c->currency : NULL);
		json_kv_str(b, "source", c->costed ? c->source : NULL);
		json_kv_str(b, "formula", c->costed ? c->formula : NULL);
		kv_opt(b, "price_per_hour", one ? c->per_hour : -1);
		kv_opt(b, "share", one ? c->share : -1);
		kv_opt(b, "elapsed_s", one ? c->elapsed_s : -1);
		json_kv_str(b, "note", c->note[0] ? c->note : NULL);
		json_kv_u64(b, "nodes", c->ends);
		json_kv_u64(b, "nodes_costed", c->costed);
		json_obj_close(b);
	}
	json_key(b, "efficiency");
	if (!c->ends) {
		json_null(b);
	} else {
		json_obj_open(b);
		for (int k = 0; k < 3; k++)
			kv_opt(b, eff[k], job_eff(ji, ef, k));
		json_obj_close(b);
	}
	json_key(b, "flags");
	json_arr_open(b);
	for (unsigned k = 0; k < COST_F__N; k++)
		if (c->flags & (1u << k))
			json_str(b, cost_flag_names[k]);
	json_arr_close(b);
}

/* The job's scheduler, name, user, uid, account, cost center, run and
 * pipeline as JSON members (null when not known). */
static void json_who(struct jbuf *b, const struct jobinfo *ji)
{
	json_kv_str(b, "scheduler", ji->scheduler[0] ? ji->scheduler : NULL);
	json_kv_str(b, "name", ji->name[0] ? ji->name : NULL);
	json_kv_str(b, "user", ji->user[0] ? ji->user : NULL);
	if (kv_known(b, "uid", ji->uid >= 0))
		json_i64(b, ji->uid);
	json_kv_str(b, "account", ji->account[0] ? ji->account : NULL);
	json_kv_str(b, "cost_center", ji->cost_center[0] ? ji->cost_center :
		    NULL);
	json_kv_str(b, "run", ji->run[0] ? ji->run : NULL);
	json_kv_str(b, "pipeline", ji->pipeline[0] ? ji->pipeline : NULL);
}

/* The job object in JSON. */
static void json_job(struct jbuf *b, const struct jobinfo *ji,
		     const struct efficiency *ef, const struct tally *t)
{
	double el = job_elapsed(ji);

	json_obj_open(b);
	json_kv_str(b, "id", ji->id);
	json_kv_bool(b, "recorded", ji->found);
	json_who(b, ji);
	json_kv_str(b, "partition", ji->partition[0] ? ji->partition : NULL);
	json_key(b, "nodes");
	json_arr_open(b);
	for (size_t i = 0; i < ji->nnodes && i < NODES_MAX; i++)
		json_str(b, ji->node[i]);
	json_arr_close(b);
	json_kv_str(b, "state", job_state(ji, t));
	if (kv_known(b, "exit_code", ji->exit_known && !ji->running))
		json_i64(b, ji->exit_code);
	if (kv_known(b, "exit_signal", ji->exit_known && !ji->running &&
		     ji->exit_signal >= 0))
		json_i64(b, ji->exit_signal);
	if (kv_known(b, "start_time", ji->start > 0))
		json_time(b, storeq_time_ns(ji->start));
	if (kv_known(b, "end_time", ji->end > 0 && !ji->running))
		json_time(b, storeq_time_ns(ji->end));
	if (kv_known(b, "elapsed_s", el >= 0))
		json_double(b, el);
	json_cost(b, ji, ef);
	json_obj_close(b);
}

/* A task's cost in JSON: {"amount", "currency"}, null without one. */
static void json_task_cost(struct jbuf *b, const struct jobcost *c)
{
	json_key(b, "cost");
	if (!c->costed) {
		json_null(b);
		return;
	}
	json_obj_open(b);
	json_key(b, "amount");
	json_double12(b, c->amount);
	json_kv_str(b, "currency", c->mixed ? NULL : c->currency);
	json_obj_close(b);
}

/*
 * An array's (heterogeneous job's) header in JSON: "job" what its tasks
 * share, with "tasks" their number; "jobs" a line per task, as sacct -j.
 */
static void json_array_tasks(struct jbuf *b, const struct array_tasks *t)
{
	const struct jobinfo *h = &t->head;

	json_key(b, "job");
	json_obj_open(b);
	json_kv_str(b, "id", h->id);
	json_kv_u64(b, "tasks", t->n);
	json_who(b, h);
	json_obj_close(b);
	json_key(b, "jobs");
	json_arr_open(b);
	for (size_t i = 0; i < t->n; i++) {
		const struct task_line *x = &t->v[i];

		json_obj_open(b);
		json_kv_str(b, "id", x->id);
		json_kv_str(b, "state", x->state[0] ? x->state : NULL);
		if (kv_known(b, "exit_code", x->exit_known))
			json_i64(b, x->code);
		if (kv_known(b, "exit_signal", x->exit_known && x->sig >= 0))
			json_i64(b, x->sig);
		if (kv_known(b, "start_time", x->start > 0))
			json_time(b, storeq_time_ns(x->start));
		if (kv_known(b, "end_time", x->end > 0))
			json_time(b, storeq_time_ns(x->end));
		kv_opt(b, "elapsed_s", x->elapsed);
		kv_opt(b, "cpu_s", x->cpu_s);
		if (kv_known(b, "mem_peak_bytes", x->mem_peak))
			json_u64(b, x->mem_peak);
		json_key(b, "efficiency");
		json_obj_open(b);
		kv_opt(b, "cpu", x->eff[0]);
		kv_opt(b, "memory", x->eff[1]);
		json_obj_close(b);
		json_task_cost(b, &x->cost);
		json_obj_close(b);
	}
	json_arr_close(b);
}

/* Where a memory peak comes from, for people. */
static const char *source_text(const char *source)
{
	if (!strcmp(source, "cgroup_v2"))
		return "cgroup v2 memory.peak";
	if (!strcmp(source, "cgroup_v1"))
		return "cgroup v1 memory.max_usage_in_bytes";
	if (!strcmp(source, "samples"))
		return "sum of processes' RSS, no job cgroup";
	if (!strcmp(source, "largest_process"))
		return "largest single process";
	return "as recorded";
}

/* Take the job's (or a step's) own figures from its usage, when known. */
static void eff_use(struct eff *x, const struct usage *u)
{
	x->cpu_s = u->cpu_s;
	x->processes = (long)u->processes;
	if (u->mem_peak) {
		x->peak = u->mem_peak;
		x->source = u->source[0] ? u->source : "recorded";
	}
}

/* Set x from a tally of rows: CPU, span, largest process. */
static void eff_from_tally(struct eff *x, const char *name,
			   const struct tally *t)
{
	snprintf(x->name, sizeof(x->name), "%s", name);
	x->cpu_s = t->cpu_user + t->cpu_sys;
	x->elapsed_s = t->last_end - t->first_start;
	x->largest = x->peak = t->peak_rss;
	x->source = "largest_process";
	x->processes = (long)t->processes;
}

/*
 * The efficiency of the job and its steps: the processes' figures, and
 * where the job's end records carry usage, its CPU and its memory peak
 * (the job's cgroup, not its largest process).
 */
static int build_efficiency(const struct jobinfo *ji, const struct rows *r,
			    const struct tally *total, struct efficiency *e)
{
	struct groups steps = { 0 };
	double el = job_elapsed(ji);
	int err;

	memset(e, 0, sizeof(*e));
	e->have_job = ji->found;
	e->have_usage = ji->have_usage;
	e->running = ji->running;
	e->cpus = ji->cpus;
	e->mem_bytes = ji->mem_bytes;
	eff_from_tally(&e->job, "job", total);
	snprintf(e->job.name, sizeof(e->job.name), "job %s", ji->id);
	if (el >= 0)
		e->job.elapsed_s = el;
	/* so far: up to the samples the CPU figures come from */
	if (ji->running && ji->start > 0 && total->last_end > ji->start)
		e->job.elapsed_s = total->last_end - ji->start;
	if (ji->have_usage)
		eff_use(&e->job, &ji->usage);

	err = group_rows(r, step_key, &steps);
	/* a job without scheduler steps: the job line says it all */
	if (!err && steps.n == 1 && !strcmp(steps.v[0].name, "-"))
		steps.n = 0;
	for (size_t i = 0; !err && i < steps.n && i < STEPS_MAX; i++)
		eff_from_tally(&e->step[e->nsteps++], steps.v[i].name,
			       &steps.v[i].t);
	free(steps.v);
	/* steps of the usage: their own figures, and those with no rows */
	for (size_t k = 0; k < ji->nsteps; k++) {
		size_t i;

		for (i = 0; i < e->nsteps; i++)
			if (!strcmp(e->step[i].name, ji->step[k].name))
				break;
		if (i == e->nsteps) {
			if (i == STEPS_MAX)
				continue;
			memset(&e->step[i], 0, sizeof(e->step[i]));
			snprintf(e->step[i].name, sizeof(e->step[i].name), "%s",
				 ji->step[k].name);
			e->step[i].source = "largest_process";
			e->nsteps++;
		}
		eff_use(&e->step[i], &ji->step[k]);
	}
	for (size_t i = 0; i < e->nsteps; i++) {
		struct eff *x = &e->step[i];

		x->cpu_pct = pct(x->cpu_s, (double)e->cpus * x->elapsed_s);
		x->mem_pct = pct((double)x->peak, (double)e->mem_bytes);
	}
	/* the job's: the header's and the records' own */
	e->job.cpu_pct = job_eff(ji, e, 0) < 0 ? -1 : 100 * job_eff(ji, e, 0);
	e->job.mem_pct = job_eff(ji, e, 1) < 0 ? -1 : 100 * job_eff(ji, e, 1);
	return err;
}

/* One text line of the efficiency summary. */
static void eff_line(FILE *out, const struct efficiency *e, const struct eff *x)
{
	double cpu_pct = x->cpu_pct, mem_pct = x->mem_pct;
	char name[64], peak[32], req[32];

	name_cell(x->name, name, sizeof(name), 14);
	util_human_bytes(x->peak, peak, sizeof(peak));
	util_human_bytes(e->mem_bytes, req, sizeof(req));
	fprintf(out, "  %-14s CPU %9.2f s of %9.2f s", name, x->cpu_s,
		(double)e->cpus * x->elapsed_s);
	if (cpu_pct >= 0)
		fprintf(out, " = %5.1f%%", cpu_pct);
	else
		fprintf(out, " =     ?");
	fprintf(out, "   memory %10s", peak);
	if (mem_pct >= 0)
		fprintf(out, " of %s = %5.1f%%", req, mem_pct);
	fprintf(out, " (%s)   (%ld processes, %.1f s)\n",
		source_text(x->source), x->processes, x->elapsed_s);
}

/* The efficiency summary in text. */
static void print_efficiency(const struct efficiency *e, FILE *out)
{
	fprintf(out, "\nEfficiency%s (in the spirit of seff: CPU time over"
		" allocated CPUs x elapsed;\nmemory: the job's peak over the"
		" memory requested)\n", e->running ? " so far, up to the last"
		" record" : "");
	if (!e->have_job || !e->cpus)
		fputs("  no allocation recorded for this job (no job-start hook): "
		      "percentages unknown\n", out);
	else if (!e->mem_bytes)
		fprintf(out, "  allocation: %llu CPUs, memory not recorded\n",
			(unsigned long long)e->cpus);
	else
		fprintf(out, "  allocation: %llu CPUs, %.1f GiB\n",
			(unsigned long long)e->cpus, e->mem_bytes / 1073741824.0);
	if (!e->have_usage)
		fprintf(out, "  the job's memory peak is not recorded (%s):"
			" memory is the largest single process's peak RSS\n",
			e->running ? "the job is still running" :
			"its end record has no usage: an older agent, or no"
			" job-end hook");
	eff_line(out, e, &e->job);
	for (size_t i = 0; i < e->nsteps; i++) {
		struct eff x = e->step[i];
		char name[64];

		snprintf(name, sizeof(name), "step %s", x.name);
		memcpy(x.name, name, sizeof(x.name));
		eff_line(out, e, &x);
	}
}

/* One efficiency object in JSON. */
static void eff_json(struct jbuf *b, const struct eff *x)
{
	double c = x->cpu_pct, m = x->mem_pct;

	json_obj_open(b);
	json_kv_str(b, "name", x->name);
	json_kv_double(b, "cpu_s", x->cpu_s);
	json_kv_double(b, "elapsed_s", x->elapsed_s);
	json_kv_u64(b, "peak_rss_bytes", x->largest);
	if (kv_known(b, "mem_peak_bytes", x->peak))
		json_u64(b, x->peak);
	json_kv_str(b, "mem_peak_source", x->source);
	json_kv_u64(b, "processes", (uint64_t)x->processes);
	if (kv_known(b, "cpu_efficiency_pct", c >= 0))
		json_double(b, c);
	if (kv_known(b, "memory_efficiency_pct", m >= 0))
		json_double(b, m);
	json_obj_close(b);
}

/* The efficiency object in JSON. */
static void json_efficiency(struct jbuf *b, const struct efficiency *e)
{
	json_obj_open(b);
	if (kv_known(b, "cpus", e->cpus))
		json_u64(b, e->cpus);
	if (kv_known(b, "mem_bytes", e->mem_bytes))
		json_u64(b, e->mem_bytes);
	json_kv_bool(b, "job_usage_recorded", e->have_usage);
	json_key(b, "job");
	eff_json(b, &e->job);
	json_key(b, "steps");
	json_arr_open(b);
	for (size_t i = 0; i < e->nsteps; i++)
		eff_json(b, &e->step[i]);
	json_arr_close(b);
	json_obj_close(b);
}

/* Where t's time went (JSON "where": the wall time and each part's
 * seconds and percent of it, the figures of the text line and the page). */
static void json_where(struct jbuf *b, const struct tally *t)
{
	struct timesplit ts;
	char key[48];

	tally_split(t, &ts);
	json_key(b, "where");
	json_obj_open(b);
	json_kv_double(b, "wall_s", ts.wall_s);
	for (size_t k = 0; k < ts.n; k++) {
		snprintf(key, sizeof(key), "%s_s", ts.part[k].name);
		json_kv_double(b, key, ts.part[k].s);
		snprintf(key, sizeof(key), "%s_pct", ts.part[k].name);
		json_kv_double(b, key, ts.part[k].pct);
	}
	json_obj_close(b);
}

/* A tally's figures as JSON members. */
static void json_tally(struct jbuf *b, const struct tally *t)
{
	double eff = cpu_per_wall(t);

	json_kv_u64(b, "processes", t->processes);
	json_kv_u64(b, "failed", t->failed);
	json_kv_u64(b, "oom_killed", t->oom);
	json_kv_u64(b, "running", t->running);
	json_kv_u64(b, "killed_at_job_end", t->job_end);
	json_kv_u64(b, "sigpipe", t->sigpipe);
	json_kv_double(b, "cpu_user_s", t->cpu_user);
	json_kv_double(b, "cpu_sys_s", t->cpu_sys);
	json_kv_double(b, "cpu_s", t->cpu_user + t->cpu_sys);
	json_kv_double(b, "process_wall_s", t->wall);
	if (t->instances) {
		json_kv_u64(b, "instances", t->instances);
		json_kv_double(b, "instance_wall_s", t->inst_wall);
	}
	json_kv_double(b, "span_s", t->last_end - t->first_start);
	if (kv_known(b, "cpu_per_wall_pct", eff >= 0))
		json_double(b, eff);
	json_kv_u64(b, "peak_rss_bytes", t->peak_rss);
	json_kv_u64(b, "read_bytes", t->read_bytes);
	json_kv_u64(b, "write_bytes", t->write_bytes);
	json_kv_u64(b, "cancelled_write_bytes", t->cancelled);
	json_kv_u64(b, "rx_bytes", t->rx);
	json_kv_u64(b, "tx_bytes", t->tx);
	json_key(b, "wait");
	json_obj_open(b);
	json_kv_double(b, "run_queue_s", t->w.k.run_queue_s);
	json_kv_double(b, "blkio_s", t->w.blkio_s);
	json_kv_double(b, "reclaim_s", t->w.k.reclaim_s);
	json_kv_double(b, "thrashing_s", t->w.k.thrashing_s);
	json_kv_double(b, "swapin_s", t->w.k.swapin_s);
	json_kv_double(b, "compact_s", t->w.k.compact_s);
	json_kv_double(b, "net_s", t->w.k.net_s);
	json_kv_double(b, "children_s", t->w.k.children_s);
	json_kv_u64(b, "nvcsw", t->w.k.nvcsw);
	json_kv_u64(b, "nivcsw", t->w.k.nivcsw);
	json_obj_close(b);
	json_where(b, t);
	if (kv_known(b, "start_time", t->processes))
		json_time(b, storeq_time_ns(t->first_start));
	if (kv_known(b, "end_time", t->processes))
		json_time(b, storeq_time_ns(t->last_end));
}

/* A summary table in JSON: [{"task": name, figures...}, ...]; a task
 * has its instances and memory peak (tasks.h) too. */
static void json_groups(struct jbuf *b, const char *key,
			const struct groups *g, bool task)
{
	json_arr_open(b);
	for (size_t i = 0; i < g->n; i++) {
		json_obj_open(b);
		json_kv_str(b, key, g->v[i].name);
		json_tally(b, &g->v[i].t);
		if (task && g->v[i].name)
			json_kv_u64(b, "mem_peak_bytes", g->v[i].mem_peak);
		json_obj_close(b);
	}
	json_arr_close(b);
}

/* Print the stored records of the rows (sampled or not) as a JSON array. */
static void json_records(const struct rows *r, bool sampled, FILE *out)
{
	bool first = true;

	fputc('[', out);
	for (size_t i = 0; i < r->n; i++) {
		if (r->v[i].sampled != sampled || !r->v[i].json)
			continue;
		fprintf(out, "%s%s", first ? "" : ",", r->v[i].json);
		first = false;
	}
	fputc(']', out);
}

/* What a report prints, gathered. */
struct report {
	const struct rows *r;
	const struct summary *s;
	const struct report_query *q;
	const char *sel;
	const struct jobinfo *ji;	/* --job only */
	const struct efficiency *e;	/* --job only */
	const struct array_tasks *tasks;	/* --job of an array: its tasks */
	struct store *st;		/* for the Signals section */
	const char *where;
	const struct filesq_procs *fp;	/* --job, --run, --pid: files */
	const struct filesq_data *data;	/* ... and the Data section */
};

/*
 * Print {"query", "summary", "job", "efficiency", "by_task", "by_tool",
 * "processes": [stored records], "samples": [latest samples of live
 * processes]}; --no-tree leaves the two arrays out.
 */
static int print_json(const struct report *rp, FILE *out)
{
	const struct summary *s = rp->s;
	struct jbuf b;
	int err = 0;

	jbuf_init(&b);
	json_obj_open(&b);
	storeq_json_query(&b, "query", rp->q, NULL);
	json_key(&b, "summary");
	json_obj_open(&b);
	json_tally(&b, &s->t);
	json_kv_double(&b, "wall_s", s->t.last_end - s->t.first_start);
	json_key(&b, "hosts");
	json_arr_open(&b);
	for (size_t i = 0; i < s->nhosts; i++)
		json_str(&b, s->hosts[i]);
	json_arr_close(&b);
	json_obj_close(&b);
	if (rp->ji) {
		json_key(&b, "job");
		json_job(&b, rp->ji, rp->e, &s->t);
	}
	if (rp->tasks)
		json_array_tasks(&b, rp->tasks);
	if (rp->e) {
		json_key(&b, "efficiency");
		json_efficiency(&b, rp->e);
	}
	json_key(&b, "by_task");
	json_groups(&b, "task", &s->by_task, true);
	json_key(&b, "by_tool");
	json_groups(&b, "tool", &s->by_tool, false);
	if (rp->data)
		filesq_data_json(&b, rp->data, rp->fp);
	/* the object stays open: the stored records follow verbatim */
	if (b.oom) {
		err = -ENOMEM;
		goto cleanup;
	}
	fputs(jbuf_str(&b), out);
	err = report_signals_json(rp->st, rp->where, rp->q, out);
	if (!rp->q->no_tree) {
		fputs(",\"processes\":", out);
		json_records(rp->r, false, out);
		fputs(",\"samples\":", out);
		json_records(rp->r, true, out);
	}
	fputs("}\n", out);

cleanup:
	jbuf_free(&b);
	return err;
}

/* The job's header and efficiency as the text report prints them. */
static char *job_text(const struct report *rp)
{
	char *text = NULL;
	size_t len = 0;
	FILE *m;

	if (!rp->ji && !rp->tasks)
		return NULL;
	m = open_memstream(&text, &len);
	if (!m)
		return NULL;
	if (rp->ji)
		print_job(rp->ji, rp->e, &rp->s->t, m);
	else
		print_array_tasks(rp->tasks, m);
	if (rp->e)
		print_efficiency(rp->e, m);
	if (fclose(m)) {
		free(text);
		return NULL;
	}
	return text;
}

/* The Data section as the text report prints it, or NULL. */
static char *data_text(const struct report *rp)
{
	char *text = NULL;
	size_t len = 0;
	FILE *m;

	if (!rp->data)
		return NULL;
	m = open_memstream(&text, &len);
	if (!m)
		return NULL;
	filesq_data_print(rp->data, rp->fp, m);
	if (fclose(m) || !len) {
		free(text);
		return NULL;
	}
	return text;
}

/* A summary as the page's table rows (malloc'd; NULL: out of memory). */
static struct report_html_group *html_groups(const struct groups *g,
					     bool task)
{
	struct report_html_group *v = calloc(g->n ? g->n : 1, sizeof(*v));

	for (size_t i = 0; v && i < g->n; i++) {
		const struct tally *t = &g->v[i].t;

		v[i] = (struct report_html_group){
			.name = g->v[i].name, .procs = t->processes,
			.inst = t->instances, .failed = t->failed,
			.oom = t->oom, .running = t->running,
			.cpu = t->cpu_user + t->cpu_sys, .wall = tally_wall(t),
			.first = t->first_start, .last = t->last_end,
			.rss = task && g->v[i].name ? g->v[i].mem_peak :
			       t->peak_rss,
			.rd = t->read_bytes, .wr = t->write_bytes,
		};
		tally_split(t, &v[i].where);
	}
	return v;
}

/* The page of report_html.c, from the rows and the job (see there). */
static int print_html(struct store *st, const char *where,
		      const struct report *rp, FILE *out)
{
	const struct rows *r = rp->r;
	const struct jobinfo *ji = rp->ji;
	struct report_html_input in = { .sel = rp->sel, .n = r->n,
					.hosts = rp->s->hosts,
					.nhosts = rp->s->nhosts };
	struct report_html_proc *p = calloc(r->n ? r->n : 1, sizeof(*p));
	struct report_html_job job = { 0 };
	char exit[64];
	struct jbuf data;
	char **text = calloc(2 * (r->n ? r->n : 1), sizeof(*text));
	char argv[ARGV_SHOWN * 4 + 8], ex[48];
	int err = p && text ? 0 : -ENOMEM;

	for (size_t i = 0; !err && i < r->n; i++) {
		const struct storeq_proc *w = &r->v[i];
		enum outcome o = r->t[i].outcome;

		exit_text(w, o, ex, sizeof(ex));
		argv_display(w->argv, argv, sizeof(argv), ARGV_SHOWN);
		text[2 * i] = strdup(ex);
		text[2 * i + 1] = strdup(argv);
		if (!text[2 * i] || !text[2 * i + 1])
			err = -ENOMEM;
		p[i] = (struct report_html_proc){
			.start = w->start, .end = w->end, .parent = w->parent,
			.host = w->host, .task = w->task, .job = w->job,
			.step = w->step, .category = w->category,
			.job_cpus = rp->s->tp[i].job_cpus,
			.job_mem = rp->s->tp[i].job_mem,
			.job_peak = rp->s->tp[i].job_peak, .tool = tool_text(w),
			.exit = text[2 * i], .argv = text[2 * i + 1],
			.pid = w->pid, .cpu = w->cpu_user + w->cpu_sys,
			.peak_rss = w->peak_rss, .read_bytes = w->read_bytes,
			.write_bytes = w->write_bytes,
			.flags = (o == OUT_FAILED ? REPORT_HTML_FAILED : 0) |
				 (w->oom ? REPORT_HTML_OOM : 0) |
				 (o == OUT_RUNNING ? REPORT_HTML_RUNNING : 0),
		};
	}
	jbuf_init(&data);
	if (ji) {
		job = (struct report_html_job){
			.recorded = ji->found, .state = job_state(ji, &rp->s->t),
			.name = ji->name, .run = ji->run,
			.pipeline = ji->pipeline, .elapsed = job_elapsed(ji),
			.exit = job_exit_text(ji, exit, sizeof(exit)),
			.exit_known = ji->exit_known && !ji->running,
			.cpus = ji->cpus, .mem_bytes = ji->mem_bytes,
			.mem_peak = rp->e->job.peak,
			.mem_source = source_text(rp->e->job.source),
			.mem_pct = rp->e->job.mem_pct,
		};
		/* the JSON report's own figures, in the page's data */
		json_obj_open(&data);
		json_key(&data, "job");
		json_job(&data, ji, rp->e, &rp->s->t);
		json_key(&data, "efficiency");
		json_efficiency(&data, rp->e);
		json_obj_close(&data);
		job.data = data.oom ? NULL : jbuf_str(&data);
		in.job = &job;
	}
	in.job_text = job_text(rp);	/* a job's or an array's tasks' */
	in.data_text = data_text(rp);
	in.p = p;
	in.by_task = html_groups(&rp->s->by_task, true);
	in.by_tool = html_groups(&rp->s->by_tool, false);
	in.ntasks = rp->s->by_task.n;
	in.ntools = rp->s->by_tool.n;
	if (!in.by_task || !in.by_tool)
		err = -ENOMEM;
	in.now = util_now_ns(CLOCK_REALTIME) / 1e9;
	if (!err)
		err = report_html_print(st, where, rp->q, &in, out);
	for (size_t i = 0; text && i < 2 * r->n; i++)
		free(text[i]);
	free(text);
	free((char *)in.job_text);
	free((char *)in.data_text);
	free((void *)in.by_task);
	free((void *)in.by_tool);
	jbuf_free(&data);
	free(p);
	return err;
}

/* The text report: title, job, efficiency, summaries, TOTAL, tree. */
static void print_text(const struct report *rp, FILE *out)
{
	print_title(rp->s, rp->sel, out);
	if (rp->ji)
		print_job(rp->ji, rp->e, &rp->s->t, out);
	if (rp->tasks)
		print_array_tasks(rp->tasks, out);
	if (rp->e)
		print_efficiency(rp->e, out);
	print_groups(&rp->s->by_task, "workflow task", "TASK", "(no task)",
		     true, out);
	print_groups(&rp->s->by_tool, "tool", "TOOL", "?", false, out);
	print_where(&rp->s->by_task, "workflow task", "(no task)", out);
	print_total(rp->s, out);
	if (rp->data)
		filesq_data_print(rp->data, rp->fp, out);
	report_signals_text(rp->st, rp->where, rp->q, out);
	if (!rp->q->no_tree)
		print_tree(rp->r, rp->s, out);
}

/*
 * Print the summaries and process tree selected by q from an open store;
 * where names it in messages.
 */
int report_run_store(struct store *st, const char *where,
		     const struct report_query *q, enum report_format fmt,
		     FILE *out)
{
	struct efficiency *eff = NULL;
	struct jobinfo *ji = NULL;
	struct array_tasks *tasks = NULL;
	sqlite3 *db = store_handle(st);
	struct rows r = { 0 };
	struct summary s = { 0 };
	struct filesq_procs fp = { 0 };
	struct filesq_data data = { 0 };
	struct report rp = { .r = &r, .s = &s, .q = q, .st = st,
			     .where = where };
	char sel[256];
	int err;

	err = query_check(q);
	if (!err)
		err = storeq_restrict(st, where, q);
	if (err)
		return err;
	err = load_rows(st, where, q,
			fmt == REPORT_JSON || fmt == REPORT_NDJSON, &r);
	if (!err && q->job && *q->job) {
		/* an array's id: its tasks; else the one job */
		tasks = calloc(1, sizeof(*tasks));
		err = tasks ? load_array_tasks(db, where, q,
					 util_now_ns(CLOCK_REALTIME) / 1e9,
					 tasks) : -ENOMEM;
	}
	if (!err && tasks && !tasks->n) {
		ji = calloc(1, sizeof(*ji));
		eff = calloc(1, sizeof(*eff));
		err = ji && eff ? load_job(db, where, q,
					   util_now_ns(CLOCK_REALTIME) / 1e9,
					   ji) : -ENOMEM;
	}
	if (err)
		goto cleanup;

	storeq_describe(q, sel, sizeof(sel));
	rp.sel = sel;
	if (r.n == 0 && !(ji && ji->found) && !(tasks && tasks->n)) {
		fprintf(stderr, "jobtrace: no records for %s in %s\n", sel,
			where);
		err = -ENOENT;
		goto cleanup;
	}
	build_tree(&r);
	err = summarize(db, where, &r, &s);
	if (!err && ji)
		err = build_efficiency(ji, &r, &s.t, eff);
	if (!err && fmt != REPORT_NDJSON &&
	    ((q->job && *q->job) || (q->run && *q->run) || q->pid)) {
		err = filesq_load(st, where, q, &fp);
		if (!err)
			err = filesq_data(&fp, &data);
		rp.fp = &fp;
		rp.data = &data;
	}
	if (err)
		goto cleanup;
	rp.ji = ji;
	rp.e = eff;
	rp.tasks = tasks && tasks->n ? tasks : NULL;

	switch (fmt) {
	case REPORT_TEXT:
		print_text(&rp, out);
		break;
	case REPORT_JSON:
		err = print_json(&rp, out);
		break;
	case REPORT_HTML:
		err = print_html(st, where, &rp, out);
		break;
	case REPORT_NDJSON:
		for (size_t i = 0; i < r.n; i++)
			fprintf(out, "%s\n", r.v[i].json);
		break;
	default:
		err = -EINVAL;
	}
	err = storeq_written(out, "report", err);

cleanup:
	filesq_data_free(&data);
	filesq_procs_free(&fp);
	summary_free(&s);
	free(ji);
	free(eff);
	if (tasks)
		free(tasks->v);
	free(tasks);
	rows_free(&r);
	return err;
}

/* Print the records selected by q from an open store as NDJSON. */
int report_export_store(struct store *s, const char *where,
			const struct report_query *q, FILE *out)
{
	static const char order[] = " ORDER BY t, id";
	sqlite3 *db = store_handle(s);
	sqlite3_stmt *st = NULL;
	char sql[1024], sel[256];
	size_t n = 0;
	int rc, err;

	err = query_check(q);
	if (!err)
		err = storeq_restrict(s, where, q);
	if (err)
		return err;

	if (q->job && *q->job)
		snprintf(sql, sizeof(sql),
			 "SELECT jobtrace_json(id), start_time AS t, id FROM process"
			 " WHERE " REPORT_JOB_SEL " UNION ALL"
			 " SELECT json, time, id FROM record"
			 " WHERE " REPORT_JOB_SEL "%s", order);
	else if ((q->run && *q->run) || (q->pipeline && *q->pipeline))
		snprintf(sql, sizeof(sql),
			 "SELECT jobtrace_json(id), start_time AS t, id FROM process"
			 " WHERE %1$s UNION ALL"
			 " SELECT json, time, id FROM record WHERE job_id IN"
			 " (SELECT DISTINCT job_id FROM process"
			 " WHERE %1$s)%2$s", storeq_process_where(q), order);
	else if (q->pid)
		snprintf(sql, sizeof(sql), STOREQ_PID_SUBTREE
			 "SELECT jobtrace_json(id), start_time AS t, id FROM process"
			 " WHERE id IN (SELECT id FROM sel)%s", order);
	else
		snprintf(sql, sizeof(sql),
			 "SELECT jobtrace_json(id), start_time AS t, id FROM process"
			 " WHERE since_time >= ?1 UNION ALL"
			 " SELECT json, time, id FROM record"
			 " WHERE time >= ?1%s", order);

	err = storeq_prepare_db(db, where, sql, q, &st);
	if (err)
		goto cleanup;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		fprintf(out, "%s\n", (const char *)sqlite3_column_text(st, 0));
		n++;
	}
	err = storeq_step_done(db, where, rc);
	if (err)
		goto cleanup;
	if (n == 0) {
		storeq_describe(q, sel, sizeof(sel));
		fprintf(stderr, "jobtrace: no records for %s in %s\n", sel,
			where);
		err = -ENOENT;
	} else {
		err = storeq_written(out, "export", err);
	}

cleanup:
	sqlite3_finalize(st);
	return err;
}
