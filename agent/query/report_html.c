// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * report_html.c - `jobtrace report --format html` (report_html.h).
 *
 * report.c hands over the selected processes (start order, parent links)
 * and the job's header; this file groups them into lanes and instances,
 * reads the selection's samples, signals, allocation and cost from the
 * store, and writes one page: the answer in a few lines, the tables as
 * HTML, and the timeline and the usage chart as JSON that the inline
 * script (report_html.js) draws.  Every drawn thing is bounded by the
 * REPORT_HTML_* limits, so the page stays small for any run.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "costq.h"
#include "json.h"
#include "log.h"
#include "report_html.h"
#include "store.h"
#include "util.h"

#include "report_html_assets.h"	/* html_script, html_style (generated) */

#define DETAIL_LANE_MIN 20	/* detail processes a lane gets at least */
#define LANE_INST_MAX 400	/* instance bars of one lane */
#define TOP_SHOWN 3		/* groups named in the answer lines */
#define HOSTS_SHOWN 8		/* hosts named in the answer lines */
#define SAME_START 2e-5		/* one start time, as REAL and as text */
#define NAME_MAX_BYTES 64	/* of a task, tool, host, kind in the page */
#define ARGV_MAX_BYTES 160	/* of a command line (report.c cuts too) */
#define EVIDENCE_MAX_BYTES 240	/* of a signal's evidence, JSON text */

typedef struct report_html_proc proc_t;

/* ---- HTML text -------------------------------------------------------------- */

/* Write one line with HTML's special characters escaped. */
static void html_esc_line(FILE *out, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<':
			fputs("&lt;", out);
			break;
		case '>':
			fputs("&gt;", out);
			break;
		case '&':
			fputs("&amp;", out);
			break;
		case '"':
			fputs("&quot;", out);
			break;
		case '\'':
			fputs("&#39;", out);
			break;
		default:
			fputc(*s, out);
		}
	}
}

/* Write text with HTML's special characters escaped, line by line. */
static void html_esc(FILE *out, const char *s)
{
	char *t = strdup(s ? s : ""), *p = t;

	while (p) {
		char *nl = strchr(p, '\n');

		if (nl)
			*nl = '\0';
		/* control characters have no business in a page */
		html_esc_line(out, util_printable(p));
		if (nl)
			fputc('\n', out);
		p = nl ? nl + 1 : NULL;
	}
	free(t);
}

/*
 * A copy of s cut to at most max bytes (at a character's start, "..."
 * at the end when cut), control characters as '?'; NULL: no memory.
 */
static char *cut_copy(const char *s, size_t max)
{
	size_t n = strlen(s ? s : "");
	char *t;

	if (n > max) {
		n = max > 3 ? max - 3 : 0;
		while (n && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;
	}
	t = malloc(n + 4);
	if (!t)
		return NULL;
	memcpy(t, s ? s : "", n);
	strcpy(t + n, n < strlen(s ? s : "") ? "..." : "");
	return util_printable(t);
}

/* Write s with HTML's special characters escaped, cut to max bytes. */
static void html_cut(FILE *out, const char *s, size_t max)
{
	char *t = cut_copy(s, max);

	html_esc_line(out, t ? t : "");
	free(t);
}

/* JSON text for the data: '<', '>' and '&' (only ever in its strings)
 * escaped, so that it cannot end the script element. */
static void js_raw(FILE *out, const char *json)
{
	for (const char *c = json; *c; c++) {
		if (*c == '<' || *c == '>' || *c == '&')
			fprintf(out, "\\u%04x", (unsigned char)*c);
		else
			fputc(*c, out);
	}
}

/*
 * Write s, cut to max bytes, as a JSON string that is safe inside
 * <script>: '<', '>' and '&' as \u escapes, so no "</script>" or "<!--"
 * can end the element.
 */
static void js_str(FILE *out, struct jbuf *scratch, const char *s, size_t max)
{
	char *t = cut_copy(s, max);

	jbuf_reset(scratch);
	json_str(scratch, t ? t : "");
	free(t);
	if (scratch->oom) {
		fputs("null", out);
		return;
	}
	js_raw(out, jbuf_str(scratch));
}

/* A number for the data: fixed decimals, then no trailing zeros. */
static void js_num(FILE *out, double v, int decimals)
{
	char b[64];
	size_t n;

	if (!isfinite(v))
		v = 0;
	snprintf(b, sizeof(b), "%.*f", decimals, v);
	n = strlen(b);
	if (strchr(b, '.')) {
		while (n && b[n - 1] == '0')
			b[--n] = '\0';
		if (n && b[n - 1] == '.')
			b[--n] = '\0';
	}
	fputs(!strcmp(b, "-0") ? "0" : b, out);
}

/* A duration for people: "250 ms", "12.3 s", "4m05s", "2h03m". */
static void dur_text(double s, char *out, size_t len)
{
	long long m;

	if (!(s > 0))
		s = 0;
	if (s < 1) {
		snprintf(out, len, "%.0f ms", s * 1000);
		return;
	}
	if (s < 60) {
		snprintf(out, len, "%.*f s", s < 10 ? 2 : 1, s);
		return;
	}
	m = (long long)(s / 60);
	if (m < 60)
		snprintf(out, len, "%lldm%02llds", m, (long long)s % 60);
	else
		snprintf(out, len, "%lldh%02lldm", m / 60, m % 60);
}

/* An epoch time as "YYYY-MM-DD hh:mm:ss" UTC. */
static void when_text(double t, char *out, size_t len)
{
	char ts[32];

	json_format_time(t > 0 ? (uint64_t)(t * 1e9) : 0, ts, sizeof(ts));
	snprintf(out, len, "%.10s %.8s", ts, ts + 11);
}

/* ---- lanes and instances ------------------------------------------------------ */

/* The workflow task of p, NULL when none. */
static const char *task_of(const proc_t *p)
{
	return p->task && *p->task ? p->task : NULL;
}

/* A lane's name: the task, else the tool. */
static const char *lane_name(const proc_t *p)
{
	const char *t = task_of(p);

	return t ? t : p->tool ? p->tool : "?";
}

/* Order two processes' lanes: tasks before tools, then by name. */
static int cmp_lane_key(const proc_t *a, const proc_t *b)
{
	bool ta = task_of(a), tb = task_of(b);

	if (ta != tb)
		return ta ? -1 : 1;
	return strcmp(lane_name(a), lane_name(b));
}

/* What sorts process indices: the processes and each one's top. */
struct by_lane {
	const proc_t *p;
	const long *top;
};

/* Order process indices by lane, then instance, then start. */
static int cmp_by_lane(const void *a, const void *b, void *arg)
{
	const struct by_lane *k = arg;
	long i = *(const long *)a, j = *(const long *)b;
	int c = cmp_lane_key(&k->p[i], &k->p[j]);

	if (c)
		return c;
	if (k->top[i] != k->top[j])
		return k->top[i] < k->top[j] ? -1 : 1;
	return (i > j) - (i < j);
}

/*
 * Each process's instance, its topmost: a task's process's is its task
 * instance's (tasks.h), another's the topmost process above it in the
 * same tool lane.  A parent usually comes first (start order), so its top
 * is known; a loop in hostile links ends after n steps.
 */
static void find_tops(const proc_t *p, size_t n, const struct tasks *tk,
		      long *top)
{
	for (size_t i = 0; i < n; i++) {
		long j = (long)i;

		if (tk->of[i] >= 0) {
			top[i] = tk->inst[tk->of[i]].top;
			continue;
		}

		for (size_t steps = 0; steps <= n; steps++) {
			long a = p[j].parent;

			if (a < 0 || a >= (long)n || a == j ||
			    cmp_lane_key(&p[a], &p[j]))
				break;
			if (a < (long)i) {
				j = top[a];
				break;
			}
			j = a;
		}
		top[i] = j;
	}
}

/* Order instances by start, then top. */
static int cmp_inst(const void *a, const void *b)
{
	const struct report_html_inst *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return (x->top > y->top) - (x->top < y->top);
}

/* Order lanes by first start, the "other" lane last. */
static int cmp_lane_start(const void *a, const void *b)
{
	const struct report_html_lane *x = a, *y = b;

	if (x->other != y->other)
		return x->other ? 1 : -1;
	if (x->first != y->first)
		return x->first < y->first ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Order lanes by CPU, most first. */
static int cmp_lane_cpu(const void *a, const void *b)
{
	const struct report_html_lane *x = a, *y = b;

	if (x->cpu != y->cpu)
		return x->cpu > y->cpu ? -1 : 1;
	return cmp_lane_start(a, b);
}

/* Add process w to lane l's figures. */
static void lane_add(struct report_html_lane *l, const proc_t *w)
{
	if (!l->procs || w->start < l->first)
		l->first = w->start;
	if (!l->procs || w->end > l->last)
		l->last = w->end;
	l->procs++;
	l->failed += !!(w->flags & REPORT_HTML_FAILED);
	l->oom += !!(w->flags & REPORT_HTML_OOM);
	l->cpu += w->cpu;
}

/* Build one lane per lane key from the sorted indices idx. */
static int make_lanes(const proc_t *p, size_t n, const long *idx,
		      const long *top, struct report_html_model *m)
{
	m->lane = calloc(n ? n : 1, sizeof(*m->lane));
	if (!m->lane)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const proc_t *w = &p[idx[i]];
		struct report_html_lane *l;
		struct report_html_inst *in;

		if (!i || cmp_lane_key(&p[idx[i - 1]], w)) {
			l = &m->lane[m->nlanes++];
			l->name = lane_name(w);
			l->task = task_of(w);
			l->groups = 1;
			/* room for as many instances as it has processes */
			for (size_t k = i; k < n && !cmp_lane_key(&p[idx[k]], w);
			     k++)
				l->ninst++;
			l->inst = calloc(l->ninst, sizeof(*l->inst));
			if (!l->inst)
				return -ENOMEM;
			l->ninst = 0;
		}
		l = &m->lane[m->nlanes - 1];
		lane_add(l, w);
		if (!l->ninst || top[idx[i - 1]] != top[idx[i]]) {
			in = &l->inst[l->ninst++];
			in->top = top[idx[i]];
			in->start = w->start;
			in->end = w->end;
		}
		in = &l->inst[l->ninst - 1];
		in->procs++;
		in->flags |= w->flags;
		if (w->start < in->start)
			in->start = w->start;
		if (w->end > in->end)
			in->end = w->end;
	}
	for (size_t k = 0; k < m->nlanes; k++)
		qsort(m->lane[k].inst, m->lane[k].ninst,
		      sizeof(*m->lane[k].inst), cmp_inst);
	return 0;
}

/*
 * Keep the LANES_MAX - 1 lanes of most CPU and put the others into one
 * lane "other", drawn as density.
 */
static int merge_other(struct report_html_model *m)
{
	struct report_html_lane *o;
	size_t keep = REPORT_HTML_LANES_MAX - 1, ninst = 0, k;

	if (m->nlanes <= REPORT_HTML_LANES_MAX)
		return 0;
	qsort(m->lane, m->nlanes, sizeof(*m->lane), cmp_lane_cpu);
	for (k = keep; k < m->nlanes; k++)
		ninst += m->lane[k].ninst;
	o = &m->lane[keep];
	o->inst = realloc(o->inst, ninst * sizeof(*o->inst));
	if (!o->inst)
		return -ENOMEM;
	for (k = keep + 1; k < m->nlanes; k++) {
		struct report_html_lane *l = &m->lane[k];

		memcpy(o->inst + o->ninst, l->inst,
		       l->ninst * sizeof(*l->inst));
		o->ninst += l->ninst;
		o->procs += l->procs;
		o->failed += l->failed;
		o->oom += l->oom;
		o->cpu += l->cpu;
		if (l->first < o->first)
			o->first = l->first;
		if (l->last > o->last)
			o->last = l->last;
		free(l->inst);
		l->inst = NULL;
	}
	o->groups = m->nlanes - keep;
	o->other = true;
	o->name = "other";
	o->task = false;
	m->nlanes = keep + 1;
	qsort(o->inst, o->ninst, sizeof(*o->inst), cmp_inst);
	return 0;
}

/* Pack a lane's instances into rows (first fit); false: more rows needed. */
static bool pack(struct report_html_lane *l)
{
	double row_end[REPORT_HTML_ROWS_MAX];
	int rows = 0;

	for (size_t i = 0; i < l->ninst; i++) {
		struct report_html_inst *in = &l->inst[i];
		int r;

		for (r = 0; r < rows && row_end[r] > in->start; r++)
			;
		if (r == rows) {
			if (rows == REPORT_HTML_ROWS_MAX)
				return false;
			rows++;
		}
		row_end[r] = in->end;
		in->row = r;
	}
	l->rows = rows ? rows : 1;
	return true;
}

/* Fill a dense lane's bins: instance-seconds per bin over its width. */
static void densify(struct report_html_lane *l, double t0, double t1)
{
	double w = (t1 - t0) / REPORT_HTML_BINS;

	l->dense = true;
	memset(l->dens, 0, sizeof(l->dens));
	for (size_t i = 0; i < l->ninst; i++) {
		const struct report_html_inst *in = &l->inst[i];
		double a = in->start, b = in->end;
		long k0 = (long)((a - t0) / w), k1 = (long)((b - t0) / w);

		if (k0 < 0)
			k0 = 0;
		if (k1 >= REPORT_HTML_BINS)
			k1 = REPORT_HTML_BINS - 1;
		if (b - a < w * 1e-3) {
			/* a blip: a thousandth of the bin, so it shows */
			l->dens[k0 < REPORT_HTML_BINS ? k0 :
				REPORT_HTML_BINS - 1] += 1e-3;
			continue;
		}
		for (long k = k0; k <= k1; k++) {
			double lo = t0 + k * w, hi = lo + w;
			double o = fmin(b, hi) - fmax(a, lo);

			if (o > 0)
				l->dens[k] += o / w;
		}
	}
}

/* Order lane pointers by instances, fewest first. */
static int cmp_lane_inst(const void *a, const void *b)
{
	const struct report_html_lane *x = *(struct report_html_lane *const *)a;
	const struct report_html_lane *y = *(struct report_html_lane *const *)b;

	return (x->ninst > y->ninst) - (x->ninst < y->ninst);
}

/*
 * Decide bars or density: lanes with fewest instances first get bars
 * while the budget lasts and their instances fit ROWS_MAX rows.
 */
static int layout(struct report_html_model *m)
{
	struct report_html_lane **order;
	size_t budget = REPORT_HTML_BARS_MAX;

	order = malloc((m->nlanes ? m->nlanes : 1) * sizeof(*order));
	if (!order)
		return -ENOMEM;
	for (size_t k = 0; k < m->nlanes; k++)
		order[k] = &m->lane[k];
	qsort(order, m->nlanes, sizeof(*order), cmp_lane_inst);
	for (size_t k = 0; k < m->nlanes; k++) {
		struct report_html_lane *l = order[k];

		if (!l->other && l->ninst <= LANE_INST_MAX &&
		    l->ninst <= budget && pack(l)) {
			budget -= l->ninst;
			m->bars += l->ninst;
		} else {
			densify(l, m->t0, m->t1);
		}
	}
	free(order);
	return 0;
}

/* Instances with a failed or OOM-killed process first, then the longest. */
static int cmp_detail(const void *a, const void *b, void *arg)
{
	const struct report_html_inst *in = arg;
	const struct report_html_inst *x = &in[*(const long *)a];
	const struct report_html_inst *y = &in[*(const long *)b];
	bool fx = x->flags & (REPORT_HTML_FAILED | REPORT_HTML_OOM);
	bool fy = y->flags & (REPORT_HTML_FAILED | REPORT_HTML_OOM);

	if (fx != fy)
		return fx ? -1 : 1;
	if (x->end - x->start != y->end - y->start)
		return x->end - x->start > y->end - y->start ? -1 : 1;
	return cmp_inst(x, y);
}

/* What orders process indices by their instance's rank. */
struct by_rank {
	const long *top;
	const long *rank;	/* of each top */
};

/* Order process indices by their instance's rank, then start. */
static int cmp_rank(const void *a, const void *b, void *arg)
{
	const struct by_rank *k = arg;
	long i = *(const long *)a, j = *(const long *)b;
	long ri = k->rank[k->top[i]], rj = k->rank[k->top[j]];

	if (ri != rj)
		return ri < rj ? -1 : 1;
	return (i > j) - (i < j);
}

/* Order process indices by instance (its top's start), then start. */
static int cmp_in_inst(const void *a, const void *b, void *arg)
{
	const struct by_lane *k = arg;
	long i = *(const long *)a, j = *(const long *)b;
	long ti = k->top[i], tj = k->top[j];

	if (ti != tj) {
		if (k->p[ti].start != k->p[tj].start)
			return k->p[ti].start < k->p[tj].start ? -1 : 1;
		return ti < tj ? -1 : 1;
	}
	return (i > j) - (i < j);
}

/*
 * Pick each lane's processes drawn on demand, whole instances (those with
 * a failure first, then the longest) while the lane's quota lasts, and
 * order them by instance.
 */
static int pick_detail(const proc_t *p, size_t n, const long *top,
		       struct report_html_model *m)
{
	struct by_lane by = { p, top };
	size_t quota, left = REPORT_HTML_DETAIL_MAX;
	long *rank = malloc((n ? n : 1) * sizeof(*rank));
	long *order = malloc((n ? n : 1) * sizeof(*order));
	struct by_rank br = { top, rank };
	int err = 0;

	if (!rank || !order) {
		err = -ENOMEM;
		goto cleanup;
	}
	quota = m->nlanes ? REPORT_HTML_DETAIL_MAX / m->nlanes : 0;
	if (quota < DETAIL_LANE_MIN)
		quota = DETAIL_LANE_MIN;
	if (quota > REPORT_HTML_DETAIL_LANE)
		quota = REPORT_HTML_DETAIL_LANE;
	for (size_t k = 0; k < m->nlanes; k++) {
		struct report_html_lane *l = &m->lane[k];
		size_t c = 0, want = quota < left ? quota : left;

		l->detail = malloc((l->procs ? l->procs : 1) * sizeof(long));
		if (!l->detail) {
			err = -ENOMEM;
			goto cleanup;
		}
		for (size_t i = 0; i < l->ninst; i++)
			order[i] = (long)i;
		qsort_r(order, l->ninst, sizeof(*order), cmp_detail, l->inst);
		for (size_t i = 0; i < l->ninst; i++)
			rank[l->inst[order[i]].top] = (long)i;
		for (size_t i = 0; i < n; i++)
			if (m->lane_of[i] == (long)k)
				l->detail[c++] = (long)i;
		qsort_r(l->detail, c, sizeof(long), cmp_rank, &br);
		/* whole instances; the first one cut if it alone is too many */
		for (size_t i = 0, j; i < c; i = j) {
			for (j = i + 1; j < c && top[l->detail[j]] ==
			     top[l->detail[i]]; j++)
				;
			if (j > want && i)
				break;
			l->ndetail = j < want ? j : want;
		}
		left -= l->ndetail;
		m->detail += l->ndetail;
		qsort_r(l->detail, l->ndetail, sizeof(long), cmp_in_inst, &by);
	}

cleanup:
	free(rank);
	free(order);
	return err;
}

/* Which lane each process is in, after merging and sorting. */
static int assign_lanes(size_t n, const long *top,
			struct report_html_model *m)
{
	long *of_top = malloc((n ? n : 1) * sizeof(*of_top));

	m->lane_of = malloc((n ? n : 1) * sizeof(*m->lane_of));
	if (!of_top || !m->lane_of) {
		free(of_top);
		return -ENOMEM;
	}
	for (size_t k = 0; k < m->nlanes; k++)
		for (size_t i = 0; i < m->lane[k].ninst; i++)
			of_top[m->lane[k].inst[i].top] = (long)k;
	for (size_t i = 0; i < n; i++)
		m->lane_of[i] = of_top[top[i]];
	free(of_top);
	return 0;
}

/* Free a model (see report_html.h). */
void report_html_model_free(struct report_html_model *m)
{
	if (!m)
		return;
	for (size_t k = 0; k < m->nlanes; k++) {
		free(m->lane[k].inst);
		free(m->lane[k].detail);
	}
	free(m->lane);
	free(m->lane_of);
	free(m->top);
	tasks_free(&m->tasks);
	free(m->p);
	free(m);
}

/* The task instances of the processes (tasks.h), and the processes as
 * the lanes see them (m->p): a task only where it is a task's process. */
static int model_tasks(const proc_t *in, size_t n,
		       struct report_html_model *m)
{
	struct tasks_proc *tp = calloc(n ? n : 1, sizeof(*tp));
	int err = -ENOMEM;

	m->p = malloc((n ? n : 1) * sizeof(*m->p));
	if (!tp || !m->p)
		goto out;
	for (size_t i = 0; i < n; i++)
		tp[i] = (struct tasks_proc){
			.parent = in[i].parent, .host = in[i].host,
			.job = in[i].job, .step = in[i].step,
			.task = in[i].task, .category = in[i].category,
			.start = in[i].start, .end = in[i].end,
			.cpu = in[i].cpu, .rss = in[i].peak_rss,
			.job_cpus = in[i].job_cpus, .job_mem = in[i].job_mem,
			.job_peak = in[i].job_peak,
		};
	err = tasks_build(tp, n, &m->tasks);
	for (size_t i = 0; !err && i < n; i++) {
		m->p[i] = in[i];
		if (m->tasks.of[i] < 0)
			m->p[i].task = NULL;
	}
out:
	free(tp);
	return err;
}

/* Group processes into lanes and instances (see report_html.h). */
int report_html_model(const struct report_html_proc *in, size_t n,
		      bool detail, struct report_html_model **out)
{
	struct report_html_model *m = calloc(1, sizeof(*m));
	long *top = malloc((n ? n : 1) * sizeof(*top));
	long *idx = malloc((n ? n : 1) * sizeof(*idx));
	struct by_lane k = { NULL, top };
	const proc_t *p;
	int err = -ENOMEM;

	*out = NULL;
	if (m)
		m->top = top;
	else
		free(top);
	if (!m || !top || !idx)
		goto cleanup;
	err = model_tasks(in, n, m);
	if (err)
		goto cleanup;
	err = -ENOMEM;
	p = k.p = m->p;
	for (size_t i = 0; i < n; i++) {
		if (!i || p[i].start < m->t0)
			m->t0 = p[i].start;
		if (!i || p[i].end > m->t1)
			m->t1 = p[i].end;
	}
	if (!(m->t1 - m->t0 >= 1e-3))
		m->t1 = m->t0 + 1e-3;
	find_tops(p, n, &m->tasks, top);
	for (size_t i = 0; i < n; i++)
		idx[i] = (long)i;
	qsort_r(idx, n, sizeof(*idx), cmp_by_lane, &k);
	err = make_lanes(p, n, idx, top, m);
	if (!err)
		err = merge_other(m);
	if (!err) {
		qsort(m->lane, m->nlanes, sizeof(*m->lane), cmp_lane_start);
		err = layout(m);
	}
	if (!err)
		err = assign_lanes(n, top, m);
	if (!err && detail)
		err = pick_detail(p, n, top, m);
	for (size_t i = 0; !err && !detail && i < m->nlanes; i++)
		m->lane[i].ndetail = 0;

cleanup:
	free(idx);
	if (err)
		report_html_model_free(m);
	else
		*out = m;
	return err;
}

/* ---- CPU and memory over time ------------------------------------------------ */

/* Start series over [t0, t1] (see report_html.h). */
void report_html_series_init(struct report_html_series *s, double t0,
			     double t1)
{
	memset(s, 0, sizeof(*s));
	s->t0 = t0;
	s->t1 = t1 - t0 >= 1e-3 ? t1 : t0 + 1e-3;
	for (int k = 0; k < REPORT_HTML_BINS; k++)
		s->mem[k] = -1;
}

/* The bin of time t, clamped. */
static long bin_of(const struct report_html_series *s, double t)
{
	double w = (s->t1 - s->t0) / REPORT_HTML_BINS;
	long k = (long)floor((t - s->t0) / w);

	return k < 0 ? 0 : k >= REPORT_HTML_BINS ? REPORT_HTML_BINS - 1 : k;
}

/* Spread cpu seconds over [a, b] (see report_html.h). */
void report_html_series_cpu(struct report_html_series *s, double a,
			    double b, double cpu)
{
	double w = (s->t1 - s->t0) / REPORT_HTML_BINS;
	long k0, k1;

	if (!(cpu > 0))
		return;
	if (!(b > a)) {
		s->cpu_s[bin_of(s, a)] += cpu;
		return;
	}
	k0 = bin_of(s, a);
	k1 = bin_of(s, b);
	for (long k = k0; k <= k1; k++) {
		double lo = s->t0 + k * w, hi = lo + w;
		double o;

		/* the first and last bins take what lies outside */
		if (k == 0)
			lo = fmin(lo, a);
		if (k == REPORT_HTML_BINS - 1)
			hi = fmax(hi, b);
		o = fmin(b, hi) - fmax(a, lo);
		if (o > 0)
			s->cpu_s[k] += cpu * o / (b - a);
	}
}

/* One sample pass's RSS sum at t (see report_html.h). */
void report_html_series_mem(struct report_html_series *s, double t,
			    double rss_sum)
{
	long k = bin_of(s, t);

	if (rss_sum > s->mem[k])
		s->mem[k] = rss_sum;
	s->passes++;
}

/* ---- what the store says ------------------------------------------------------- */

/* The process of a sample or signal: sorted indices by host, pid, start. */
struct proc_index {
	const proc_t *p;
	long *idx;
	size_t n;
};

/* A NULL-tolerant string order. */
static int cmp_nstr(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "");
}

/* Order process indices by host, pid, start. */
static int cmp_hps(const void *a, const void *b, void *arg)
{
	const proc_t *p = arg;
	const proc_t *x = &p[*(const long *)a], *y = &p[*(const long *)b];
	int c = cmp_nstr(x->host, y->host);

	if (c)
		return c;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return (x->start > y->start) - (x->start < y->start);
}

/* The first position in pi with host and pid (or after them). */
static size_t lower_hp(const struct proc_index *pi, const char *host,
		       int64_t pid)
{
	size_t lo = 0, hi = pi->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const proc_t *w = &pi->p[pi->idx[mid]];
		int c = cmp_nstr(w->host, host);

		if (c < 0 || (!c && w->pid < pid))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * The process of host and pid that started at start (start >= 0), or that
 * was alive at time at (start < 0: the latest started by then); -1.
 */
static long find_proc(const struct proc_index *pi, const char *host,
		      int64_t pid, double start, double at)
{
	long found = -1;

	for (size_t i = lower_hp(pi, host, pid); i < pi->n; i++) {
		const proc_t *w = &pi->p[pi->idx[i]];

		if (cmp_nstr(w->host, host) || w->pid != pid)
			break;
		if (start >= 0 && fabs(w->start - start) < SAME_START)
			return pi->idx[i];
		if (start < 0 && w->start <= at + 1e-3)
			found = pi->idx[i];
	}
	return found;
}

/* The jobs the selection's processes belong to, as an SQL set on ?1. */
static void jobs_of(const struct report_query *q, char *out, size_t len)
{
	if (q->job && *q->job)
		snprintf(out, len, "(SELECT ?1 UNION SELECT DISTINCT job_id"
			 " FROM process WHERE " REPORT_JOB_SEL ")");
	else if (q->pid)
		snprintf(out, len, "(SELECT job_id FROM process WHERE pid = ?1)");
	else
		snprintf(out, len, "(SELECT DISTINCT job_id FROM process"
			 " WHERE %s)", storeq_process_where(q));
}

#define SJ(path) "json_extract(json, '" path "')"

/* A host's latest sample pass, for the memory of several hosts. */
struct pass {
	char *host;
	double t;		/* its time, -1: none yet */
	double every;		/* seconds since the one before, 0: unknown */
	double sum;		/* its processes' RSS */
};

/* The passes of every host seen so far, and their sum. */
struct passes {
	struct pass *v;
	size_t n;
	double total;
};

/*
 * Host h made a pass at t with RSS sum: the total is the latest pass of
 * each host, a host without a pass for 3 of its intervals left out (its
 * processes are gone: no samples).
 */
static int pass_done(struct passes *ps, struct report_html_series *s,
		     const char *host, double t, double sum)
{
	struct pass *h = NULL;

	for (size_t i = 0; i < ps->n; i++) {
		struct pass *o = &ps->v[i];

		if (!cmp_nstr(o->host, host))
			h = o;
		else if (o->sum && o->every > 0 && t > o->t + 3 * o->every) {
			ps->total -= o->sum;
			o->sum = 0;
		}
	}
	if (!h) {
		h = realloc(ps->v, (ps->n + 1) * sizeof(*h));
		if (!h)
			return -ENOMEM;
		ps->v = h;
		h = &ps->v[ps->n++];
		memset(h, 0, sizeof(*h));
		h->t = -1;
		h->host = strdup(host ? host : "");
		if (!h->host)
			return -ENOMEM;
	}
	if (h->t >= 0 && t > h->t)
		h->every = t - h->t;
	h->t = t;
	ps->total += sum - h->sum;
	h->sum = sum;
	report_html_series_mem(s, t, ps->total);
	return 0;
}

/*
 * The CPU and RSS of the selected processes over time: each process's CPU
 * between its samples spread over that time (from its start, to its end
 * with its final figure), and each sample pass's RSS sum.
 */
static int load_series(struct store *st, const char *where,
		       const struct report_query *q,
		       const struct report_html_input *in,
		       const struct proc_index *pi,
		       struct report_html_series *s)
{
	char sql[1024], jobs[256];
	sqlite3_stmt *stmt = NULL;
	double *last_t = NULL, *last_cpu = NULL, pass_t = -1, pass_sum = 0;
	struct passes ps = { 0 };
	char *pass_host = NULL;
	int rc = SQLITE_DONE, err;

	last_t = malloc((in->n ? in->n : 1) * sizeof(double));
	last_cpu = calloc(in->n ? in->n : 1, sizeof(double));
	if (!last_t || !last_cpu) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (size_t i = 0; i < in->n; i++)
		last_t[i] = in->p[i].start;
	jobs_of(q, jobs, sizeof(jobs));
	snprintf(sql, sizeof(sql),
		 "SELECT " SJ("$.host") ", " SJ("$.pid") ", "
		 SJ("$.start_time") ", time, " SJ("$.cpu.user_s") ", "
		 SJ("$.cpu.sys_s") ", " SJ("$.mem.rss_bytes")
		 " FROM record WHERE type = 'sample' AND job_id IN %s"
		 " ORDER BY time, 1", jobs);
	err = storeq_prepare(st, where, sql, q, &stmt);
	while (!err && (rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		const char *host = (const char *)sqlite3_column_text(stmt, 0);
		double t = storeq_col_amount(stmt, 3);
		double start = storeq_col_time(stmt, 2, -1);
		double cpu = storeq_col_amount(stmt, 4) +
			     storeq_col_amount(stmt, 5);
		long k;

		if (start < 0)
			continue;
		k = find_proc(pi, host, sqlite3_column_int64(stmt, 1), start,
			      0);
		if (k < 0)
			continue;	/* not a selected process */
		s->samples++;
		if (t > last_t[k] && cpu > last_cpu[k]) {
			report_html_series_cpu(s, last_t[k], t,
					       cpu - last_cpu[k]);
			last_cpu[k] = cpu;
		}
		if (t > last_t[k])
			last_t[k] = t;
		if (pass_t != t || cmp_nstr(pass_host, host)) {
			if (pass_t >= 0)
				err = pass_done(&ps, s, pass_host, pass_t,
						pass_sum);
			free(pass_host);
			pass_host = strdup(host ? host : "");
			pass_t = t;
			pass_sum = 0;
			if (!pass_host)
				err = -ENOMEM;
		}
		pass_sum += storeq_col_amount(stmt, 6);
	}
	if (!err)
		err = storeq_step_done(store_handle(st), where, rc);
	if (!err && pass_t >= 0)
		err = pass_done(&ps, s, pass_host, pass_t, pass_sum);
	/* what each process did after its last sample */
	for (size_t i = 0; !err && i < in->n; i++)
		report_html_series_cpu(s, last_t[i], in->p[i].end,
				       in->p[i].cpu - last_cpu[i]);

cleanup:
	sqlite3_finalize(stmt);
	for (size_t i = 0; i < ps.n; i++)
		free(ps.v[i].host);
	free(ps.v);
	free(pass_host);
	free(last_t);
	free(last_cpu);
	return err;
}

/* A signal record of the selection. */
struct sig {
	double t;
	char *kind;
	char *host;
	char *comm;
	char *evidence;	/* its evidence object as JSON text */
	int64_t pid;	/* -1: none */
	long lane;	/* -1: none known */
};

struct sigs {
	struct sig *v;
	size_t n;
	size_t total;	/* before REPORT_HTML_SIGNALS_MAX */
};

/* Free the signals. */
static void sigs_free(struct sigs *g)
{
	for (size_t i = 0; i < g->n; i++) {
		free(g->v[i].kind);
		free(g->v[i].host);
		free(g->v[i].comm);
		free(g->v[i].evidence);
	}
	free(g->v);
}

/* A copy of a text column, "" for NULL; NULL only when out of memory. */
static char *col_copy(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);

	return strdup(t ? (const char *)t : "");
}

/*
 * The signals of the selection's jobs, and those without a job on its
 * hosts between t0 and t1 (a spot interruption, an idle node), by time.
 */
static int load_signals(struct store *st, const char *where,
			const struct report_query *q, double t0, double t1,
			struct sigs *g)
{
	char sql[1400], jobs[256], hosts[256];
	sqlite3_stmt *stmt = NULL;
	int rc = SQLITE_DONE, err;

	jobs_of(q, jobs, sizeof(jobs));
	if (q->job && *q->job)
		snprintf(hosts, sizeof(hosts), "(SELECT DISTINCT host FROM"
			 " process WHERE " REPORT_JOB_SEL ")");
	else if (q->pid)
		snprintf(hosts, sizeof(hosts), "(SELECT host FROM process"
			 " WHERE pid = ?1)");
	else
		snprintf(hosts, sizeof(hosts), "(SELECT DISTINCT host FROM"
			 " process WHERE %s)", storeq_process_where(q));
	snprintf(sql, sizeof(sql),
		 "SELECT time, " SJ("$.kind") ", " SJ("$.host") ", "
		 SJ("$.pid") ", " SJ("$.comm") ", json_extract(json,"
		 " '$.evidence'), COUNT(*) OVER () FROM record"
		 " WHERE type = 'signal' AND (job_id IN %s"
		 " OR (job_id IS NULL AND time BETWEEN ?2 AND ?3"
		 " AND " SJ("$.host") " IN %s))"
		 " ORDER BY time, id LIMIT %d", jobs, hosts,
		 REPORT_HTML_SIGNALS_MAX);
	err = storeq_prepare(st, where, sql, q, &stmt);
	if (!err)
		g->v = calloc(REPORT_HTML_SIGNALS_MAX, sizeof(*g->v));
	if (!err && !g->v)
		err = -ENOMEM;
	if (!err && (sqlite3_bind_double(stmt, 2, t0) != SQLITE_OK ||
		     sqlite3_bind_double(stmt, 3, t1) != SQLITE_OK))
		err = storeq_step_done(store_handle(st), where, SQLITE_ERROR);
	while (!err && (rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		struct sig *x = &g->v[g->n++];

		x->t = storeq_col_amount(stmt, 0);
		x->kind = col_copy(stmt, 1);
		x->host = col_copy(stmt, 2);
		x->comm = col_copy(stmt, 4);
		x->evidence = col_copy(stmt, 5);
		x->pid = sqlite3_column_type(stmt, 3) == SQLITE_INTEGER ?
			 sqlite3_column_int64(stmt, 3) : -1;
		x->lane = -1;
		g->total = (size_t)sqlite3_column_int64(stmt, 6);
		if (!x->kind || !x->host || !x->comm || !x->evidence)
			err = -ENOMEM;
	}
	if (!err)
		err = storeq_step_done(store_handle(st), where, rc);
	sqlite3_finalize(stmt);
	return err;
}

/*
 * Put each signal on the lane of its process; a signal of a process that
 * is not selected is left out when only the selected count (not --job:
 * the signals of a whole job are its own).
 */
static void place_signals(struct sigs *g, const struct proc_index *pi,
			  const struct report_html_model *m, bool only_selected)
{
	size_t kept = 0;

	for (size_t i = 0; i < g->n; i++) {
		struct sig *x = &g->v[i];
		long k = x->pid >= 0 ? find_proc(pi, x->host, x->pid, -1, x->t) :
			 -1;

		x->lane = k >= 0 ? m->lane_of[k] : -1;
		if (only_selected && x->pid >= 0 && k < 0) {
			free(x->kind);
			free(x->host);
			free(x->comm);
			free(x->evidence);
			g->total--;
			continue;
		}
		g->v[kept++] = *x;
	}
	g->n = kept;
}

/* What else the page says about the selection. */
struct extra {
	size_t jobs;		/* distinct job ids of the processes */
	char *pipeline;		/* the one pipeline, or NULL */
	uint64_t mem_req;	/* memory requested (one job), 0: unknown */
	struct costq_result *cost_task;	/* NULL: no cost known */
	struct costq_result *cost_tool;
};

/* How many jobs and which pipeline, and the one job's memory request. */
static int load_extra(struct store *st, const char *where,
		      const struct report_query *q,
		      const struct report_html_input *in, struct extra *x)
{
	char sql[600];
	sqlite3_stmt *stmt = NULL;
	char *job = NULL;
	int rc, err = 0;

	if (in->job) {
		x->jobs = 1;
		x->mem_req = in->job->mem_bytes;
		if (in->job->pipeline && *in->job->pipeline)
			x->pipeline = strdup(in->job->pipeline);
		return 0;
	}
	if (q->pid)
		return 0;
	snprintf(sql, sizeof(sql), "SELECT COUNT(DISTINCT job_id),"
		 " MIN(job_id), COUNT(DISTINCT job_pipeline), MIN(job_pipeline)"
		 " FROM process WHERE %s", storeq_process_where(q));
	err = storeq_prepare(st, where, sql, q, &stmt);
	if (!err && (rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		x->jobs = (size_t)sqlite3_column_int64(stmt, 0);
		if (x->jobs == 1)
			job = col_copy(stmt, 1);
		if (sqlite3_column_int64(stmt, 2) == 1)
			x->pipeline = col_copy(stmt, 3);
	} else if (!err) {
		err = storeq_step_done(store_handle(st), where, rc);
	}
	sqlite3_finalize(stmt);
	stmt = NULL;
	if (err || !job)
		goto cleanup;
	/* the one job's memory request: its latest record that has one */
	if (sqlite3_prepare_v2(store_handle(st),
			       "SELECT " JNUM("$.allocation.mem_bytes")
			       " AS m FROM record WHERE type = 'job'"
			       " AND job_id = ?1 AND m > 0 ORDER BY time DESC"
			       " LIMIT 1", -1, &stmt, NULL) != SQLITE_OK) {
		err = storeq_step_done(store_handle(st), where, SQLITE_ERROR);
		goto cleanup;
	}
	sqlite3_bind_text(stmt, 1, job, -1, SQLITE_STATIC);
	if ((rc = sqlite3_step(stmt)) == SQLITE_ROW)
		x->mem_req = (uint64_t)storeq_col_amount(stmt, 0);
	else
		err = storeq_step_done(store_handle(st), where, rc);

cleanup:
	sqlite3_finalize(stmt);
	free(job);
	return err;
}

/* The cost by task and by tool (--job, --run), from the job end records. */
static int load_cost(struct store *st, const char *where,
		     const struct report_query *q, double now, struct extra *x)
{
	struct report_query cq = *q;
	int err;

	if (!(q->job && *q->job) && !(q->run && *q->run))
		return 0;
	cq.by = "task";
	err = costq_compute(st, where, &cq, now, &x->cost_task);
	if (!err) {
		cq.by = "tool";
		err = costq_compute(st, where, &cq, now, &x->cost_tool);
	}
	if (err == -ENOENT)
		err = 0;	/* no ended job: no cost to show */
	/* no priced job: nothing to show either */
	if (!err && x->cost_task && !x->cost_task->ntotals) {
		costq_result_free(x->cost_task);
		costq_result_free(x->cost_tool);
		x->cost_task = x->cost_tool = NULL;
	}
	/* costq's views are the uid's too; report.c's stay as they were */
	return err;
}

/* ---- tables ------------------------------------------------------------------- */

/* One line of a table: a task or a tool. */
struct tab_row {
	const char *name;	/* NULL: no task */
	size_t procs;
	size_t inst;
	size_t failed;
	size_t oom;
	size_t running;
	double cpu;
	double wall;		/* tasks: instances' wall; tools: processes' */
	double first, last;
	uint64_t rss;
	uint64_t rd, wr;
	int color;		/* its lane's colour, -1: none */
};

/* The rows of a table from report.c's summary g[0..n) (most CPU first),
 * each without a colour yet. */
static int tab_rows(const struct report_html_group *g, size_t n,
		    struct tab_row **out, size_t *nout)
{
	struct tab_row *v = calloc(n ? n : 1, sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		v[i] = (struct tab_row){
			.name = g[i].name, .procs = g[i].procs,
			.inst = g[i].inst, .failed = g[i].failed,
			.oom = g[i].oom, .running = g[i].running,
			.cpu = g[i].cpu, .wall = g[i].wall,
			.first = g[i].first, .last = g[i].last,
			.rss = g[i].rss, .rd = g[i].rd, .wr = g[i].wr,
			.color = -1,
		};
	*out = v;
	*nout = n;
	return 0;
}

/* The cost of a group in every currency, "" when none is known. */
static void cost_cell(const struct costq_result *c, const char *name,
		      char *out, size_t len)
{
	size_t o = 0;
	char m[40];

	out[0] = '\0';
	for (size_t i = 0; c && i < c->nrows && o + 1 < len; i++) {
		const struct costq_row *r = &c->rows[i];
		const char *want = name ? name : COSTQ_NONE;

		if (r->idle_node || strcmp(r->name, want))
			continue;
		o += snprintf(out + o, len - o, "%s%s %s", o ? " + " : "",
			      costq_money(r->cost, m, sizeof(m)), r->currency);
	}
}

/* A table by task or by tool; lanes give the colours. */
static void print_table(FILE *out, const char *title, bool task,
			const struct tab_row *v, size_t nv,
			const struct extra *x)
{
	const struct costq_result *c = task ? x->cost_task : x->cost_tool;
	bool req = x->mem_req > 0;
	char a[64], b[64], d[64], cost[160];

	fprintf(out, "<section><h2>By %s</h2>\n", title);
	if (!nv || (task && nv == 1 && !v[0].name)) {
		fputs("<p class=\"note\">none recorded</p></section>\n", out);
		return;
	}
	fprintf(out, "<table class=\"groups\" id=\"by-%s\">\n<thead><tr>"
		"<th>%s</th>%s<th>PROCESSES</th><th>FAILED</th>"
		"<th title=\"first start to last end\">SPAN</th>"
		"<th>CPU TIME</th><th title=\"CPU time over the %s' wall"
		" time: 100%% is one core busy\">CPU/WALL</th>"
		"<th title=\"%s\">PEAK%s</th>%s"
		"<th>READ</th><th>WRITE</th>%s</tr></thead><tbody>\n",
		task ? "task" : "tool", task ? "TASK" : "TOOL",
		task ? "<th>INSTANCES</th>" : "",
		task ? "instances" : "processes",
		task ? "the largest instance's memory peak" : "the largest"
		" process's", task ? "" : " RSS",
		req ? "<th>OF REQUEST</th>" : "", c ? "<th>COST</th>" : "");
	for (size_t i = 0; i < nv && i < REPORT_HTML_TABLE_MAX; i++) {
		const struct tab_row *r = &v[i];

		fprintf(out, "<tr%s><td class=\"name\">",
			r->failed ? " class=\"fail\"" : "");
		if (r->color >= 0)
			fprintf(out, "<span class=\"sw c%d\"></span>", r->color);
		html_cut(out, r->name ? r->name : "(no task)", NAME_MAX_BYTES);
		fputs("</td>", out);
		if (task && r->inst)
			fprintf(out, "<td>%zu</td>", r->inst);
		else if (task)
			fputs("<td>-</td>", out);	/* no task */
		fprintf(out, "<td>%zu</td><td>%zu", r->procs, r->failed);
		if (r->oom)
			fprintf(out, " (%zu OOM)", r->oom);
		dur_text(r->last - r->first, a, sizeof(a));
		dur_text(r->cpu, b, sizeof(b));
		fprintf(out, "</td><td>%s</td><td>%s</td>", a, b);
		if (r->wall > 0)
			fprintf(out, "<td>%.0f%%</td>", 100 * r->cpu / r->wall);
		else
			fputs("<td>-</td>", out);
		util_human_bytes(r->rss, a, sizeof(a));
		fprintf(out, "<td>%s</td>", a);
		if (req)
			fprintf(out, "<td>%.0f%%</td>",
				100.0 * (double)r->rss / (double)x->mem_req);
		util_human_bytes(r->rd, b, sizeof(b));
		util_human_bytes(r->wr, d, sizeof(d));
		fprintf(out, "<td>%s</td><td>%s</td>", b, d);
		if (c) {
			cost_cell(c, r->name, cost, sizeof(cost));
			fputs("<td>", out);
			html_esc(out, cost[0] ? cost : "-");
			fputs("</td>", out);
		}
		fputs("</tr>\n", out);
	}
	fputs("</tbody></table>\n", out);
	if (nv > REPORT_HTML_TABLE_MAX)
		fprintf(out, "<p class=\"note\">and %zu more %s with less CPU"
			" (jobtrace report --format json lists them all)</p>\n",
			nv - REPORT_HTML_TABLE_MAX, task ? "tasks" : "tools");
	fprintf(out, "<p class=\"note\">CPU/WALL: CPU time over the %s</p>"
		"</section>\n", task ? "instances' wall time (an instance: the"
		" topmost process of the task and its descendants in it, or its"
		" own job); PEAK: the largest instance's memory peak, its job's"
		" when the task ran as its own job, else the peak sum of its"
		" processes' RSS, the workflow engine's own left out; a"
		" submitting sbatch, qsub, ... is no task's process" :
		"processes' wall time, each process's own CPU");
}

/*
 * Where each task's time went: one stacked bar a task (pure HTML/CSS, each
 * part as wide as its share of the task's processes' wall time added (of
 * the parts' total when they add up to more: memory waits can hold CPU), its
 * seconds and percent in its title and in data-s, data-pct), a legend,
 * the figures report's text line and JSON "where" print (timesplit.h).
 */
static void print_where(FILE *out, const struct report_html_group *g,
			size_t n)
{
	size_t shown = 0;

	for (size_t i = 0; i < n; i++)
		shown += g[i].name != NULL;
	if (!shown)
		return;
	fputs("<section><h2>Where the time went, by workflow task</h2>\n"
	      "<p class=\"wlegend\">", out);
	for (size_t k = 0; k < g[0].where.n; k++)
		fprintf(out, "<span class=\"wkey\"><span class=\"sw w-%s\">"
			"</span>%s</span>", g[0].where.part[k].name,
			g[0].where.part[k].label);
	fputs("</p>\n<table class=\"where\" id=\"where-task\"><thead><tr>"
	      "<th>TASK</th><th title=\"its processes' wall times added\">"
	      "WALL</th><th>WHERE IT WENT</th></tr></thead><tbody>\n", out);
	for (size_t i = 0, rows = 0; i < n && rows < REPORT_HTML_TABLE_MAX;
	     i++) {
		const struct timesplit *ts = &g[i].where;
		double whole = ts->wall_s, sum = 0;

		if (!g[i].name)
			continue;
		/* waits that hold CPU can add up to more than the wall time:
		 * the bar is then their total */
		for (size_t k = 0; k < ts->n; k++)
			sum += ts->part[k].s;
		if (sum > whole)
			whole = sum;
		rows++;
		fputs("<tr><td class=\"name\">", out);
		html_cut(out, g[i].name, NAME_MAX_BYTES);
		fprintf(out, "</td><td>%.2f s</td><td><div class=\"wbar\""
			" role=\"img\" aria-label=\"", ts->wall_s);
		for (size_t k = 0; k < ts->n; k++)
			fprintf(out, "%s%s %.2f s (%.1f%%)", k ? ", " : "",
				ts->part[k].label, ts->part[k].s,
				ts->part[k].pct);
		fprintf(out, "\" data-wall=\"%.6f\">", ts->wall_s);
		for (size_t k = 0; k < ts->n; k++)
			fprintf(out, "<span class=\"w-%s\" style=\"width:%.3f%%\""
				" title=\"%s: %.2f s (%.1f%%)\" data-part=\"%s\""
				" data-s=\"%.6f\" data-pct=\"%.6f\"></span>",
				ts->part[k].name, whole > 0 ?
				100 * ts->part[k].s / whole : 0,
				ts->part[k].label, ts->part[k].s,
				ts->part[k].pct, ts->part[k].name,
				ts->part[k].s, ts->part[k].pct);
		fputs("</div></td></tr>\n", out);
	}
	fputs("</tbody></table>\n<p class=\"note\">Each task's processes'"
	      " own time, added (the report's \"where the time went\" line):"
	      " running on a CPU, runnable but waiting for one, block-I/O and"
	      " memory waits (reclaim, thrashing, swap-in) from the kernel's"
	      " counters; the rest of the wall time is other sleep (children,"
	      " network, timers, locks). Point at a part for its seconds.</p>"
	      "</section>\n", out);
}

/* Give each table row the colour of its lane. */
static void colour_rows(struct tab_row *v, size_t nv, bool task,
			const struct report_html_model *m)
{
	for (size_t i = 0; i < nv; i++)
		for (size_t k = 0; k < m->nlanes; k++)
			if (!m->lane[k].other && m->lane[k].task == task &&
			    v[i].name && !strcmp(m->lane[k].name, v[i].name))
				v[i].color = (int)(k % 12);
}

/* ---- the answer ---------------------------------------------------------------- */

/* "host n1" or "3 hosts (n1, n2, n3)", at most HOSTS_SHOWN named. */
static void print_hosts(FILE *out, const struct report_html_input *in)
{
	if (in->nhosts == 1) {
		fputs("host ", out);
		html_cut(out, in->hosts[0], NAME_MAX_BYTES);
		return;
	}
	fprintf(out, "%zu hosts (", in->nhosts);
	for (size_t i = 0; i < in->nhosts && i < HOSTS_SHOWN; i++) {
		fputs(i ? ", " : "", out);
		html_cut(out, in->hosts[i], NAME_MAX_BYTES);
	}
	fputs(in->nhosts > HOSTS_SHOWN ? ", ...)" : ")", out);
}

/* What the answer's lines count over the processes. */
struct answer_counts {
	size_t failed, oom, running, ninst, nt;
	size_t big;		/* the largest peak RSS's, or SIZE_MAX */
	double cpu;
};

/* The answer's first line: the job's state, or how many jobs. */
static void answer_job(FILE *out, const struct report_html_input *in,
		       const struct extra *x)
{
	const struct report_html_job *j = in->job;
	char a[64];

	if (j && j->recorded) {
		fprintf(out, "<b class=\"state s-%s\">%s</b>",
			j->state ? j->state : "UNKNOWN",
			j->state ? j->state : "state unknown");
		if (j->exit_known) {
			fputs(", exit code ", out);
			html_cut(out, j->exit, ARGV_MAX_BYTES);
		}
		if (j->elapsed >= 0) {
			dur_text(j->elapsed, a, sizeof(a));
			fprintf(out, ", elapsed %s", a);
		}
		if (j->name && *j->name) {
			fputs(", job name <b>", out);
			html_cut(out, j->name, ARGV_MAX_BYTES);
			fputs("</b>", out);
		}
		if (j->run && *j->run) {
			fputs(", run ", out);
			html_cut(out, j->run, ARGV_MAX_BYTES);
		}
	} else if (j) {
		fputs("no job record (no job-start hook ran): state and"
		      " allocation not known", out);
	} else {
		fprintf(out, "%zu job%s", x->jobs, x->jobs == 1 ? "" : "s");
	}
	if (x->pipeline) {
		fputs(", pipeline ", out);
		html_cut(out, x->pipeline, ARGV_MAX_BYTES);
	}
}

/* The answer's line of processes, tasks, hosts and time. */
static void answer_procs(FILE *out, const struct report_html_input *in,
			 const struct report_html_model *m,
			 const struct answer_counts *k, size_t ntools)
{
	char a[64], b[64];

	if (in->n) {
		when_text(m->t0, a, sizeof(a));
		dur_text(m->t1 - m->t0, b, sizeof(b));
		fprintf(out, "<b>%zu processes</b>", in->n);
		if (k->nt)
			fprintf(out, " in %zu task%s", k->nt,
				k->nt == 1 ? "" : "s");
		fprintf(out, " (%zu instances, %zu tools) on ", k->ninst,
			ntools);
		print_hosts(out, in);
		fprintf(out, ", from %s UTC for <b>%s</b>", a, b);
		if (k->running)
			fprintf(out, ", %zu still running", k->running);
	} else {
		fputs("no processes recorded", out);
	}
}

/* The answer's line of failures, or that none failed. */
static void answer_failed(FILE *out, const struct report_html_input *in,
			  const struct answer_counts *k,
			  const struct tab_row *tools, size_t ntools)
{
	if (k->failed || k->oom) {
		size_t shown = 0;

		fprintf(out, "<li class=\"bad\"><b>%zu failed</b>", k->failed);
		if (k->oom)
			fprintf(out, ", <b>%zu OOM-killed</b>", k->oom);
		fputs(": ", out);
		for (size_t i = 0; i < ntools && shown < TOP_SHOWN; i++) {
			if (!tools[i].failed)
				continue;
			fputs(shown++ ? ", " : "", out);
			html_cut(out, tools[i].name, NAME_MAX_BYTES);
			fprintf(out, " &times;%zu", tools[i].failed);
		}
		fputs("</li>\n", out);
	} else if (in->n) {
		fputs("<li class=\"good\">no process failed, none was"
		      " OOM-killed</li>\n", out);
	}
}

/* The answer's lines of CPU and memory. */
static void answer_usage(FILE *out, const struct report_html_input *in,
			 const struct answer_counts *k,
			 const struct tab_row *top, size_t ntop,
			 const struct extra *x)
{
	const struct report_html_job *j = in->job;
	char a[64], c[64];

	if (in->n && k->cpu > 0) {
		dur_text(k->cpu, a, sizeof(a));
		fprintf(out, "<li>CPU <b>%s</b>: ", a);
		for (size_t i = 0; i < ntop && i < TOP_SHOWN; i++) {
			fputs(i ? ", " : "", out);
			html_cut(out, top[i].name ? top[i].name : "(no task)",
				 NAME_MAX_BYTES);
			fprintf(out, " %.0f%%", 100 * top[i].cpu / k->cpu);
		}
		fputs("</li>\n", out);
	}
	/* the job's own peak, as the text report's efficiency says it */
	if (j && j->mem_peak) {
		util_human_bytes(j->mem_peak, a, sizeof(a));
		fprintf(out, "<li>job memory peak: <b>%s</b> (", a);
		html_esc(out, j->mem_source ? j->mem_source : "as recorded");
		fputs(")", out);
		if (j->mem_pct >= 0) {
			util_human_bytes(j->mem_bytes, c, sizeof(c));
			fprintf(out, ", %.1f%% of the %s requested", j->mem_pct,
				c);
		}
		fputs("</li>\n", out);
	}
	if (k->big != SIZE_MAX && in->p[k->big].peak_rss) {
		const proc_t *w = &in->p[k->big];

		util_human_bytes(w->peak_rss, a, sizeof(a));
		fprintf(out, "<li>largest process: <b>%s</b> peak RSS, ", a);
		html_cut(out, w->tool, NAME_MAX_BYTES);
		fprintf(out, " (pid %lld", (long long)w->pid);
		if (task_of(w)) {
			fputs(", task ", out);
			html_cut(out, w->task, NAME_MAX_BYTES);
		}
		fputs(")", out);
		/* a job's share of its request is the line above */
		if (x->mem_req && !(j && j->mem_peak)) {
			util_human_bytes(x->mem_req, c, sizeof(c));
			fprintf(out, ", %.0f%% of the %s requested",
				100.0 * (double)w->peak_rss / (double)x->mem_req,
				c);
		}
		fputs("</li>\n", out);
	}
}

/* The answer's lines of cost and signals. */
static void answer_cost_signals(FILE *out, const struct extra *x,
				const struct sigs *g)
{
	for (size_t i = 0; x->cost_task && i < x->cost_task->ntotals; i++) {
		const struct costq_total *t = &x->cost_task->totals[i];

		char money[40];

		fprintf(out, "<li>cost <b>%s ",
			costq_money(t->cost, money, sizeof(money)));
		html_esc(out, t->currency);
		fputs("</b>", out);
		if (t->idle_alloc > 0)
			fprintf(out, ", of which %s paid for allocated CPUs"
				" left idle",
				costq_money(t->idle_alloc, money,
					    sizeof(money)));
		fputs(" (split over tasks and tools by CPU time)</li>\n", out);
	}
	if (g->total) {
		fprintf(out, "<li class=\"bad\">%zu signal%s:", g->total,
			g->total == 1 ? "" : "s");
		if (g->n < g->total)
			fprintf(out, " the first %zu:", g->n);
		/* the kinds, in order of first appearance */
		for (size_t i = 0; i < g->n; i++) {
			size_t k, cnt = 0;

			for (k = 0; k < i && strcmp(g->v[k].kind, g->v[i].kind);
			     k++)
				;
			if (k < i)
				continue;
			for (k = i; k < g->n; k++)
				cnt += !strcmp(g->v[k].kind, g->v[i].kind);
			fprintf(out, "%s %zu ", i ? "," : "", cnt);
			html_cut(out, g->v[i].kind, NAME_MAX_BYTES);
		}
		fputs("</li>\n", out);
	}
}

/* The first lines: what ran, failures, the largest, cost, signals. */
static void print_answer(FILE *out, const struct report_html_input *in,
			 const struct report_html_model *m,
			 const struct tab_row *tasks, size_t ntasks,
			 const struct tab_row *tools, size_t ntools,
			 const struct extra *x, const struct sigs *g)
{
	struct answer_counts k = { .big = SIZE_MAX };

	for (size_t i = 0; i < in->n; i++) {
		k.failed += !!(in->p[i].flags & REPORT_HTML_FAILED);
		k.oom += !!(in->p[i].flags & REPORT_HTML_OOM);
		k.running += !!(in->p[i].flags & REPORT_HTML_RUNNING);
		k.cpu += in->p[i].cpu;
		if (k.big == SIZE_MAX ||
		    in->p[i].peak_rss > in->p[k.big].peak_rss)
			k.big = i;
	}
	for (size_t l = 0; l < m->nlanes; l++)
		k.ninst += m->lane[l].ninst;
	for (size_t i = 0; i < ntasks; i++)
		k.nt += tasks[i].name != NULL;
	fputs("<ul class=\"answer\">\n<li>", out);
	answer_job(out, in, x);
	fputs("</li>\n<li>", out);
	answer_procs(out, in, m, &k, ntools);
	fputs("</li>\n", out);
	answer_failed(out, in, &k, tools, ntools);
	/* the largest CPU: by task when there are tasks */
	answer_usage(out, in, &k, k.nt ? tasks : tools,
		     k.nt ? ntasks : ntools, x);
	answer_cost_signals(out, x, g);
	fputs("</ul>\n", out);
}

/* ---- the data for the script --------------------------------------------------- */

/* The index of name in the list names (added when new). */
static size_t name_index(const char ***names, size_t *n, const char *name)
{
	const char **v;

	for (size_t i = 0; i < *n; i++)
		if (!strcmp((*names)[i], name))
			return i;
	v = realloc(*names, (*n + 1) * sizeof(*v));
	if (!v)
		return 0;
	*names = v;
	v[*n] = name;
	return (*n)++;
}

/* One lane's data: bars or density, failure marks, detail. */
static void data_lane(FILE *out, struct jbuf *sc,
		      const struct report_html_input *in,
		      const struct report_html_model *m, size_t k,
		      const char ***tools, size_t *ntools,
		      const char ***hosts, size_t *nhosts)
{
	const struct report_html_lane *l = &m->lane[k];
	double t0 = m->t0;
	size_t marks = 0;

	fputs("{\"n\":", out);
	if (l->other) {
		char name[64];

		snprintf(name, sizeof(name), "other (%zu)", l->groups);
		js_str(out, sc, name, NAME_MAX_BYTES);
	} else {
		js_str(out, sc, l->name, NAME_MAX_BYTES);
	}
	fprintf(out, ",\"k\":\"%s\",\"c\":%zu,\"i\":%zu,\"p\":%zu,\"f\":%zu,"
		"\"o\":%zu,\"cpu\":", l->other ? "other" : l->task ? "task" :
		"tool", k % 12, l->ninst, l->procs, l->failed, l->oom);
	js_num(out, l->cpu, 3);
	fprintf(out, ",\"r\":%d", l->dense ? 0 : l->rows);
	if (!l->dense) {
		fputs(",\"b\":[", out);
		for (size_t i = 0; i < l->ninst; i++) {
			const struct report_html_inst *x = &l->inst[i];

			fputs(i ? ",[" : "[", out);
			js_num(out, x->start - t0, 3);
			fputc(',', out);
			js_num(out, x->end - t0, 3);
			fprintf(out, ",%zu,%u,%d]", x->procs, x->flags, x->row);
		}
		fputc(']', out);
	} else {
		fputs(",\"d\":[", out);
		for (int b = 0; b < REPORT_HTML_BINS; b++) {
			fputs(b ? "," : "", out);
			js_num(out, l->dens[b], 2);
		}
		fputs("],\"m\":[", out);
		for (size_t i = 0; i < l->ninst && marks < REPORT_HTML_MARKS_MAX;
		     i++) {
			const struct report_html_inst *x = &l->inst[i];

			if (!(x->flags & (REPORT_HTML_FAILED | REPORT_HTML_OOM)))
				continue;
			fputs(marks++ ? ",[" : "[", out);
			js_num(out, x->end - t0, 3);
			fprintf(out, ",%u]", x->flags);
		}
		fputc(']', out);
	}
	fputs(",\"x\":[", out);
	for (size_t i = 0; i < l->ndetail; i++) {
		const proc_t *w = &in->p[l->detail[i]];

		fputs(i ? ",[" : "[", out);
		js_num(out, w->start - t0, 3);
		fputc(',', out);
		js_num(out, w->end - t0, 3);
		fprintf(out, ",%lld,%zu,%u,", (long long)w->pid,
			name_index(tools, ntools, w->tool), w->flags);
		js_num(out, w->cpu, 3);
		fprintf(out, ",%llu,", (unsigned long long)w->peak_rss);
		js_str(out, sc, w->exit, NAME_MAX_BYTES);
		fputc(',', out);
		js_str(out, sc, w->argv, ARGV_MAX_BYTES);
		fprintf(out, ",%zu]", name_index(hosts, nhosts,
						  w->host ? w->host : "?"));
	}
	fprintf(out, "],\"xn\":%zu}", l->procs);
}

/* The page's data: the timeline, the signals, the usage series. */
static void print_data(FILE *out, const struct report_html_input *in,
		       const struct report_html_model *m, const struct sigs *g,
		       const struct report_html_series *s)
{
	const char **tools = NULL, **hosts = NULL;
	size_t ntools = 0, nhosts = 0;
	double w = (s->t1 - s->t0) / REPORT_HTML_BINS;
	struct jbuf sc;

	jbuf_init(&sc);
	fputs("<script type=\"application/json\" id=\"jt-data\">{\"sel\":",
	      out);
	js_str(out, &sc, in->sel, ARGV_MAX_BYTES);
	fputs(",\"t0\":", out);
	js_num(out, m->t0, 6);
	fputs(",\"span\":", out);
	js_num(out, m->t1 - m->t0, 3);
	fprintf(out, ",\"n\":%zu,\"bins\":%d,\"lanes\":[", in->n,
		REPORT_HTML_BINS);
	for (size_t k = 0; k < m->nlanes; k++) {
		fputs(k ? ",\n" : "\n", out);
		data_lane(out, &sc, in, m, k, &tools, &ntools, &hosts, &nhosts);
	}
	fputs("],\n\"tools\":[", out);
	for (size_t i = 0; i < ntools; i++) {
		fputs(i ? "," : "", out);
		js_str(out, &sc, tools[i], NAME_MAX_BYTES);
	}
	fputs("],\"hosts\":[", out);
	for (size_t i = 0; i < nhosts; i++) {
		fputs(i ? "," : "", out);
		js_str(out, &sc, hosts[i], NAME_MAX_BYTES);
	}
	fprintf(out, "],\n\"sign\":%zu,\"sig\":[", g->total);
	for (size_t i = 0; i < g->n; i++) {
		const struct sig *x = &g->v[i];

		fputs(i ? ",[" : "[", out);
		js_num(out, x->t - m->t0, 3);
		fputc(',', out);
		js_str(out, &sc, x->kind, NAME_MAX_BYTES);
		fprintf(out, ",%lld,%ld,", (long long)x->pid, x->lane);
		js_str(out, &sc, x->host, NAME_MAX_BYTES);
		fputc(',', out);
		js_str(out, &sc, x->comm, NAME_MAX_BYTES);
		fputc(',', out);
		js_str(out, &sc, x->evidence, EVIDENCE_MAX_BYTES);
		fputc(']', out);
	}
	fprintf(out, "],\n\"use\":{\"samples\":%zu,\"passes\":%zu,\"cores\":[",
		s->samples, s->passes);
	for (int b = 0; b < REPORT_HTML_BINS; b++) {
		fputs(b ? "," : "", out);
		js_num(out, s->cpu_s[b] / w, 3);
	}
	fputs("],\"mem\":[", out);
	for (int b = 0; b < REPORT_HTML_BINS; b++) {
		fputs(b ? "," : "", out);
		if (s->mem[b] < 0)
			fputs("null", out);
		else
			js_num(out, s->mem[b], 0);
	}
	fputs("]}", out);
	if (in->job && in->job->data) {
		fputs(",\n\"report\":", out);
		js_raw(out, in->job->data);
	}
	fputs("}</script>\n", out);
	free(tools);
	free(hosts);
	jbuf_free(&sc);
}

/* ---- the page ------------------------------------------------------------------ */

/* Print the page (see report_html.h). */
int report_html_print(struct store *st, const char *where,
		      const struct report_query *q,
		      const struct report_html_input *in, FILE *out)
{
	struct report_html_model *m = NULL;
	struct report_html_series *s = NULL;
	struct report_html_input view;
	struct proc_index pi = { NULL, NULL, in->n };
	struct tab_row *tasks = NULL, *tools = NULL;
	size_t ntasks = 0, ntools = 0;
	struct extra x = { 0 };
	struct sigs g = { 0 };
	int err;

	err = report_html_model(in->p, in->n, !q->no_tree, &m);
	if (err)
		goto cleanup;
	/* from here on, the processes as the lanes see them */
	view = *in;
	view.p = m->p;
	in = &view;
	pi.p = in->p;
	s = malloc(sizeof(*s));
	pi.idx = malloc((in->n ? in->n : 1) * sizeof(long));
	if (!s || !pi.idx) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (size_t i = 0; i < in->n; i++)
		pi.idx[i] = (long)i;
	qsort_r(pi.idx, in->n, sizeof(long), cmp_hps, (void *)in->p);

	err = load_signals(st, where, q, m->t0, m->t1, &g);
	if (!err)
		place_signals(&g, &pi, m, !(q->job && *q->job));
	report_html_series_init(s, m->t0, m->t1);
	if (!err)
		err = load_series(st, where, q, in, &pi, s);
	if (!err)
		err = load_extra(st, where, q, in, &x);
	if (!err)
		err = load_cost(st, where, q, in->now, &x);
	if (!err)
		err = tab_rows(in->by_task, in->ntasks, &tasks, &ntasks);
	if (!err)
		err = tab_rows(in->by_tool, in->ntools, &tools, &ntools);
	if (err)
		goto cleanup;
	colour_rows(tasks, ntasks, true, m);
	colour_rows(tools, ntools, false, m);

	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	      "<meta name=\"generator\" content=\"jobtrace report\">\n"
	      "<title>jobtrace report: ", out);
	html_esc(out, in->sel);
	fprintf(out, "</title>\n<style>\n%s</style></head><body>\n"
		"<header><h1>jobtrace report: ", html_style);
	html_esc(out, in->sel);
	fputs("</h1>\n", out);
	print_answer(out, in, m, tasks, ntasks, tools, ntools, &x, &g);
	fputs("</header>\n<section><h2>Timeline</h2>\n"
	      "<div id=\"legend\" class=\"note\"></div>\n"
	      "<div id=\"timeline\"><noscript>The timeline and the chart are"
	      " drawn by the page's script: allow it to see them.</noscript>"
	      "</div></section>\n<section><h2>CPU and memory over time</h2>\n"
	      "<div id=\"usage\"></div>\n", out);
	fprintf(out, "<p class=\"note\">From %zu samples in %zu sample passes:"
		" CPU is each process's CPU time between its samples (and"
		" after its last, from its final record) spread evenly over"
		" that time; memory is the sum of the RSS of the processes"
		" sampled in a pass (processes shorter than collector.first_sample"
		" are in the CPU, not in the memory).</p></section>\n",
		s->samples, s->passes);
	print_table(out, "workflow task", true, tasks, ntasks, &x);
	print_where(out, in->by_task, in->ntasks);
	print_table(out, "tool", false, tools, ntools, &x);
	if (in->job_text) {
		fputs("<section><h2>Job</h2>\n<pre>", out);
		html_esc(out, in->job_text);
		fputs("</pre></section>\n", out);
	}
	if (in->data_text) {
		fputs("<section><h2>Data</h2>\n<pre>", out);
		html_esc(out, in->data_text);
		fputs("</pre></section>\n", out);
	}
	fputs("<div id=\"tip\"></div>\n", out);
	print_data(out, in, m, &g, s);
	fprintf(out, "<script>\n%s</script>\n</body></html>\n", html_script);

cleanup:
	report_html_model_free(m);
	costq_result_free(x.cost_task);
	costq_result_free(x.cost_tool);
	free(x.pipeline);
	sigs_free(&g);
	free(tasks);
	free(tools);
	free(pi.idx);
	free(s);
	return err;
}
