// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rightsize.c - `jobtrace rightsize`: per workflow task, what its
 * instances used over the selected runs (p95 of memory peak, cores used
 * and wall time), what they asked for, and the settings to ask next time
 * as text, JSON, a Nextflow config, a Snakemake profile or sbatch options.
 * The definitions are in rightsize.h; what a task's processes, instances
 * and memory peak are is tasks.h's, shared with report and cost.
 *
 * storeq_procs_load() reads the selected processes that have a task, as
 * report reads them, and tasks_of_procs() their jobs' end records
 * (allocation, memory peak) and their instances; the rest is C here:
 * runs, the percentiles and the rounding.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "instances.h"
#include "json.h"
#include "log.h"
#include "rightsize.h"
#include "sizefit.h"
#include "store.h"
#include "tasks.h"
#include "util.h"

#define MIB (1ULL << 20)
#define P95 95			/* the percentile used, in percent */

/* One execution of a task (tasks.h) and its run. */
struct rs_inst {
	const struct tasks_inst *in;
	const struct storeq_proc *top;	/* its topmost process: task, run */
	char *run_key;		/* what counts as its run; NULL: itself */
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
	struct sizefit_task fit;	/* by input size (sizefit.h) */
};

struct rs {
	struct storeq_proc *row;	/* the selected processes with a task */
	struct tasks_proc *proc;	/* the rows as tasks.h needs them */
	size_t nrow;
	struct tasks tasks;
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
		[RIGHTSIZE_INSTANCES] = "instances",
		[RIGHTSIZE_INSTANCES_JSON] = "instances-json",
		[RIGHTSIZE_SNAKEMAKE_RULES] = "snakemake-rules",
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

/* max(1, ceil(used)). */
unsigned rightsize_cores(double used)
{
	unsigned n;

	if (!(used > 0))	/* also NaN */
		return 1;
	if (used > 65536)
		return 65536;
	n = up(used);
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

/* Free the rows, instances and tasks. */
static void rs_free(struct rs *r)
{
	storeq_procs_free(r->row, r->nrow);
	for (size_t i = 0; i < r->ninst; i++)
		free(r->inst[i].run_key);
	free(r->proc);
	tasks_free(&r->tasks);
	free(r->inst);
	free(r->task);
}

/* ---- instances ----------------------------------------------------------- */

/* NULL-tolerant string order (NULL first). */
static int cmp_nstr(const char *a, const char *b)
{
	if (!a || !b)
		return !!a - !!b;
	return strcmp(a, b);
}

/* What counts as the run of the instance whose top is w: job.run, else
 * the job id; NULL: the instance alone. */
static int run_key(const struct storeq_proc *w, char **out)
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

/* The instances (tasks.h) of the rows, each with its run. */
static int build_instances(struct rs *r, struct store *st, const char *where)
{
	int err = tasks_of_procs(store_handle(st), where, r->row, r->nrow,
				 &r->proc, &r->tasks);

	if (err)
		return err;
	r->inst = calloc(r->tasks.n ? r->tasks.n : 1, sizeof(*r->inst));
	if (!r->inst)
		return -ENOMEM;
	for (size_t i = 0; i < r->tasks.n && !err; i++) {
		struct rs_inst *in = &r->inst[r->ninst++];

		in->in = &r->tasks.inst[i];
		in->top = &r->row[in->in->top];
		err = run_key(in->top, &in->run_key);
	}
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
		const struct tasks_inst *x = in[i].in;

		v[i] = (double)x->mem;
		t->mem_job += x->mem_job;
		if (x->own_job && (x->req_cpus || x->req_mem) &&
		    x->start >= latest) {
			latest = x->start;
			t->req_cpus = x->req_cpus ? (int64_t)x->req_cpus : -1;
			t->req_mem = x->req_mem ? (int64_t)x->req_mem : -1;
		}
	}
	t->mem = (uint64_t)rightsize_percentile(v, t->n, P95);
	for (size_t i = 0; i < t->n; i++)
		v[i] = tasks_cores(in[i].in);
	t->cores = rightsize_percentile(v, t->n, P95);
	for (size_t i = 0; i < t->n; i++)
		v[i] = in[i].in->end - in[i].in->start;
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
		       !strcmp(r->inst[j].in->task, r->inst[i].in->task))
			j++;
		t->name = r->inst[i].in->task;
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

/*
 * Each instance's input bytes and each task's fits of memory and wall
 * time over them (sizefit.h); the floors: the flat rule's memory and time
 * for the task's smallest instance.
 */
static int input_fits(struct rs *r, struct store *st, const char *where)
{
	size_t n = r->ninst ? r->ninst : 1;
	const char **ids = calloc(r->nrow ? r->nrow : 1, sizeof(*ids));
	double *x = calloc(n, sizeof(*x)), *mem = calloc(n, sizeof(*mem));
	double *wall = calloc(n, sizeof(*wall)), lo_mem, lo_wall;
	int err = ids && x && mem && wall ? 0 : -ENOMEM;

	for (size_t i = 0; !err && i < r->nrow; i++)
		ids[i] = r->row[i].id;
	if (!err)
		err = sizefit_inputs(st, where, ids, r->tasks.of, r->nrow,
				     r->ninst, x);
	for (size_t i = 0; !err && i < r->ninst; i++) {
		mem[i] = (double)r->inst[i].in->mem;
		wall[i] = r->inst[i].in->end - r->inst[i].in->start;
	}
	for (size_t k = 0; !err && k < r->ntask; k++) {
		struct rs_task *t = &r->task[k];

		lo_mem = mem[t->first];
		lo_wall = wall[t->first];
		for (size_t i = t->first; i < t->first + t->n; i++) {
			lo_mem = mem[i] < lo_mem ? mem[i] : lo_mem;
			lo_wall = wall[i] < lo_wall ? wall[i] : lo_wall;
		}
		sizefit_task(&t->fit, x + t->first, mem + t->first,
			     wall + t->first, t->n);
		t->fit.mem_min = rightsize_memory((uint64_t)lo_mem);
		t->fit.mem_step = RIGHTSIZE_MEM_STEP;
		t->fit.min_minutes = rightsize_minutes(lo_wall);
	}
	free(ids);
	free(x);
	free(mem);
	free(wall);
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
	for (size_t i = 0; i < r->ntask; i++)
		if (r->task[i].enough)
			sizefit_print_text(out, shown(r->task[i].name, name, 25),
					   &r->task[i].fit);
	fprintf(out, "\nPEAK: the concurrent peak RSS of the task's processes,"
		" the workflow engine's own\nleft out; * the job's memory peak"
		" (the task ran as its own job), + some\ninstances so."
		"  Requested: the job's allocation when the task ran as its own"
		" job.\nUsed: p95 over the instances.  Recommended from %d runs"
		" on:\n%s.\n", RIGHTSIZE_MIN_RUNS, RIGHTSIZE_RULE);
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
		RIGHTSIZE_RULE, use);
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
	if (sizefit_grows(&t->fit)) {
		fprintf(out, "    // %s: by input size; INPUTS: its path"
			" inputs' names (jobtrace rightsize, text)\n"
			"    withName: '%s' {\n        cpus = %u\n", t->name,
			t->name, t->rec_cpus);
		if (!t->fit.mem.grows)
			fprintf(out, "        memory = '%llu MB'\n",
				(unsigned long long)(t->rec_mem / MIB));
		if (!t->fit.wall.grows)
			fprintf(out, "        time = '%um'\n", t->rec_min);
		sizefit_nextflow(out, &t->fit);
		fprintf(out, "    }\n");
		return;
	}
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
	for (size_t i = 0; i < r->ntask; i++)
		if (settable(&r->task[i], NULL) &&
		    sizefit_grows(&r->task[i].fit))
			fprintf(out, "# %s grows with its input size: a profile"
				" cannot hold a callable, see --format"
				" snakemake-rules\n", r->task[i].name);
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

/*
 * Snakemake: a rules file of callables (include: it in the Snakefile, then
 * resources: mem_mb=jobtrace_mem_mb["RULE"], runtime=...), for the tasks
 * whose memory or time grows with their input size.
 */
static void print_snakemake_rules(const struct rs *r, FILE *out)
{
	config_head(r, out, "#", "# use: include: \"FILE\" in the Snakefile,"
		    " then in a rule below:\n#   resources:"
		    " mem_mb=jobtrace_mem_mb[\"RULE\"],"
		    " runtime=jobtrace_runtime[\"RULE\"]\n# (a profile cannot"
		    " hold these: they are functions of the input)\nimport"
		    " math\nimport os\n\n\n"
		    "def _jobtrace_bytes(input):\n"
		    "    return sum(os.path.getsize(f) for f in input"
		    " if os.path.exists(f))\n\n\n"
		    "jobtrace_mem_mb = {}\njobtrace_runtime = {}\n");
	for (size_t i = 0; i < r->ntask; i++)
		if (settable(&r->task[i], NULL) &&
		    sizefit_grows(&r->task[i].fit))
			sizefit_snakemake(out, r->task[i].name,
					  &r->task[i].fit);
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

	jbuf_init(&b);
	json_obj_open(&b);
	storeq_json_query(&b, "selection", q, NULL);
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
		sizefit_json(&b, &t->fit);
		json_obj_close(&b);
	}
	json_arr_close(&b);
	json_obj_close(&b);
	return storeq_json_print(&b, out);
}

/* ---- instance types (instances.h) ----------------------------------------- */

/* Add an instance's hours to the task's seen list (same place: once). */
static void seen_add(struct instances_task *it, const struct instances_host *h,
		     const char *ce, double hours)
{
	struct instances_seen s = {
		.type = h ? h->type : NULL, .region = h ? h->region : NULL,
		.lifecycle = h ? h->lifecycle : NULL, .compute_env = ce,
	};

	for (size_t i = 0; i < it->nseen; i++) {
		struct instances_seen *o = &it->seen[i];

		if (!cmp_nstr(o->type, s.type) && !cmp_nstr(o->region, s.region) &&
		    !cmp_nstr(o->lifecycle, s.lifecycle) &&
		    !cmp_nstr(o->compute_env, s.compute_env)) {
			o->hours += hours;
			return;
		}
	}
	s.hours = hours;
	it->seen[it->nseen++] = s;
}

/* Each task's needs and where its instances ran (hosts: the identities;
 * ces: each instance's compute environment, freed by the caller). */
static int instance_tasks(const struct rs *r, struct store *st,
			  const char *where, const struct instances_hosts *hs,
			  struct instances_task *it, char **ces, double span[2])
{
	int err = 0;

	span[0] = span[1] = 0;
	for (size_t i = 0; i < r->ntask && !err; i++) {
		const struct rs_task *t = &r->task[i];

		it[i] = (struct instances_task){
			.name = t->name, .runs = t->runs, .n = t->n,
			.enough = t->enough, .cpus = t->rec_cpus,
			.mem = t->rec_mem, .seen = calloc(t->n, sizeof(*it->seen)),
		};
		if (!it[i].seen)
			return -ENOMEM;
		for (size_t k = t->first; k < t->first + t->n && !err; k++) {
			const struct tasks_inst *x = r->inst[k].in;
			const struct storeq_proc *top = r->inst[k].top;
			double h = (x->end - x->start) / 3600;

			err = instances_compute_env(store_handle(st), where,
						    top->job, &ces[k]);
			seen_add(&it[i], instances_host_at(hs, top->host,
				 x->start), ces[k], h);
			it[i].hours += h;
			if (!span[1] || x->start < span[0])
				span[0] = x->start;
			if (x->end > span[1])
				span[1] = x->end;
		}
	}
	return err;
}

/* --format instances and instances-json. */
static int print_instances(const struct rs *r, struct store *st,
			   const char *where, const struct report_query *q,
			   bool json, FILE *out)
{
	struct instances_hosts hs = { 0 };
	struct instances_task *it = calloc(r->ntask + 1, sizeof(*it));
	char **ces = calloc(r->ninst + 1, sizeof(*ces));
	struct instances_in in = {
		.sel = r->sel, .rule = RIGHTSIZE_RULE,
		.min_runs = RIGHTSIZE_MIN_RUNS, .prices_file = q->prices_file,
		.task = it, .ntask = r->ntask,
	};
	double span[2];
	int err = it && ces ? 0 : -ENOMEM;

	if (!err)
		err = instances_hosts_load(store_handle(st), where, &hs);
	if (!err)
		err = instance_tasks(r, st, where, &hs, it, ces, span);
	if (!err) {
		in.period_s = instances_period(q->since, util_now_ns(
			CLOCK_REALTIME) / 1e9, span[0], span[1]);
		err = instances_print(&in, json, out);
	}
	for (size_t i = 0; it && i < r->ntask; i++)
		free(it[i].seen);
	for (size_t i = 0; ces && i < r->ninst; i++)
		free(ces[i]);
	free(it);
	free(ces);
	instances_hosts_free(&hs);
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
	err = storeq_restrict(st, where, q);
	if (!err)
		err = storeq_procs_load(st, where, q, STOREQ_PROC_TASKS,
					&r.row, &r.nrow);
	if (err)
		goto out;
	storeq_describe(q, r.sel, sizeof(r.sel));
	if (!err)
		err = build_instances(&r, st, where);
	if (err)
		goto out;
	if (!r.ninst) {
		fprintf(stderr, "jobtrace: no processes of a workflow task"
			" (job.task) for %s in %s%s\n", r.sel, where,
			q->pipeline ? " (a job without a pipeline of its own"
			" gets \"snakemake\" or \"nextflow\" from the rules)" : "");
		err = -ENOENT;
		goto out;
	}
	err = build_tasks(&r);
	if (!err)
		err = input_fits(&r, st, where);
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
	case RIGHTSIZE_SNAKEMAKE_RULES:
		print_snakemake_rules(&r, out);
		break;
	case RIGHTSIZE_JSON:
		err = print_json(&r, q, out);
		break;
	case RIGHTSIZE_INSTANCES:
	case RIGHTSIZE_INSTANCES_JSON:
		err = print_instances(&r, st, where, q,
				      fmt == RIGHTSIZE_INSTANCES_JSON, out);
		break;
	default:
		err = -EINVAL;
	}
	err = storeq_written(out, "rightsize", err);
out:
	rs_free(&r);
	return err;
}
