// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_rightsize.c - `jobtrace rightsize` on records written here as
 * schema v1 JSON text: the rounding rules at their edges, the nearest-rank
 * p95, instances from parent links (the workflow engine's python left out
 * of the memory sweep), a task that ran as its own job (the job's peak and
 * allocation, its processes one instance, also with a top in Slurm's
 * extern step), a submitting sbatch that is no instance, a job that ran
 * its one task twice at once (two instances of one core each, not one of
 * two cores), too few runs, a task name no configuration can hold, the
 * --pipeline selection, a user's restricted view, and every output format.
 *
 * The figures of task align, per run k = 1..3 (a shared job: task qc ran
 * in it too), seconds from T = 100 k:
 *   top   bash   [T, T+10] (run 3: [T, T+100])  4 MiB   0.1 s CPU
 *   eng   python [T+0.5, T+10]  80 MiB, workflow-engine   1.0 s
 *   t1           [T+1, T+5]    100 MiB                   cpu1[k]
 *   t2           [T+3, T+8]    peak[k] - 104 MiB         5.0 s
 *   t3           [T+8.5, T+9]  250 MiB                   0.5 s
 * so the concurrent peak is peak[k] (the engine's 80 MiB would add up),
 * the cores 10/10, 15/10 and 25/100, the wall 10, 10 and 100 s.  Beside
 * them, outside any job, the sbatch that submitted the run: task align,
 * tool category scheduler-helper, 5 MiB, 0.3 s of CPU in 0.1 s (3 cores):
 * counted, it would be 3 more runs of align, of 3 cores.
 *
 * Task merge, runs r1..r3, one job each (M1..M3, merge its only task,
 * 2 CPUs, a peak of 250 MiB): two single-threaded merges at once, each
 * [T+40, T+50], 10 s of CPU, 100 MiB.  Six instances of 1 core and
 * 100 MiB; taken as one instance a job, each run would show 2 cores.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "json.h"
#include "json_check.h"
#include "log.h"
#include "qcmd.h"
#include "rightsize.h"
#include "store.h"
#include "test_files.h"

#define MIB (1ULL << 20)
#define GIB (1ULL << 30)
#define T0 1772359200.0		/* 2026-03-01T10:00:00Z */

/* 1.2 x this is 400 MiB less 0.4 bytes: the answer is still 400 MiB. */
#define EDGE_PEAK 349525333ULL

static const uint64_t peak[4] = { 0, 300 * MIB, 310 * MIB, EDGE_PEAK };
static const double cpu1[4] = { 0, 3.4, 8.4, 18.4 };

struct fixture {
	char dir[64];
	char db[96];
};

/* A JSON string or null, in buf. */
static const char *js(char *buf, size_t len, const char *v)
{
	if (!v)
		return "null";
	snprintf(buf, len, "\"%s\"", v);
	return buf;
}

/* A process of the fixture. */
struct p {
	const char *id, *parent;
	int uid;
	const char *job, *run, *pipeline, *task, *category;
	double t0, t1, cpu;
	uint64_t rss;
	const char *step;	/* job.step, NULL: none */
};

/* Put the end record of job id on n1 with an allocation and a peak. */
static void put_job_end(struct store *s, const char *id, const char *run,
			int cpus, uint64_t mem, uint64_t job_peak, double t1)
{
	char en[32];

	json_format_time((uint64_t)((T0 + t1) * 1e9), en, sizeof(en));
	test_put_json(s, "{\"type\":\"job\",\"schema\":1,\"host\":\"n1\","
	    "\"id\":\"end-%s\",\"phase\":\"end\",\"job\":{\"scheduler\":"
	    "\"local\",\"id\":\"%s\",\"step\":null,\"run\":\"%s\","
	    "\"pipeline\":\"rnaseq\",\"task\":null,\"user\":\"u\","
	    "\"account\":null,\"cost_center\":null},\"uid\":1000,"
	    "\"start_time\":\"2026-03-01T10:00:00.000000Z\","
	    "\"end_time\":\"%s\",\"allocation\":{\"cpus\":%d,"
	    "\"mem_bytes\":%llu,\"gpus\":null},\"exit_code\":0,\"cost\":null,"
	    "\"usage\":{\"cpu_s\":1,\"processes\":2,\"mem_peak_bytes\":%llu,"
	    "\"mem_peak_source\":\"cgroup_v2\",\"steps\":[]}}",
	    id, id, run, en, cpus, (unsigned long long)mem,
	    (unsigned long long)job_peak);
}

/* Put a process record: times in seconds after T0. */
static void put_proc(struct store *s, const struct p *p)
{
	static int pid = 5000;
	char st[32], en[32], par[64], job[64], run[64], pl[64], task[64];
	char cat[64], step[64];

	json_format_time((uint64_t)((T0 + p->t0) * 1e9), st, sizeof(st));
	json_format_time((uint64_t)((T0 + p->t1) * 1e9), en, sizeof(en));
	pid++;
	test_put_json(s, "{\"type\":\"process\",\"schema\":1,\"host\":\"n1\","
	    "\"id\":\"%s\",\"pid\":%d,\"ppid\":1,\"parent_id\":%s,"
	    "\"start_time\":\"%s\",\"end_time\":\"%s\",\"exe\":\"/bin/x\","
	    "\"comm\":\"x\",\"argv\":[\"x\"],\"uid\":%d,"
	    "\"job\":{\"scheduler\":\"local\",\"id\":%s,\"step\":%s,"
	    "\"run\":%s,\"pipeline\":%s,\"task\":%s,\"user\":\"u\","
	    "\"account\":null,\"cost_center\":null},"
	    "\"tool\":{\"name\":\"x\",\"category\":%s},"
	    "\"exit\":{\"code\":0,\"signal\":null,\"oom_killed\":false},"
	    "\"cpu\":{\"user_s\":%.6f,\"sys_s\":0},"
	    "\"mem\":{\"peak_rss_bytes\":%llu},"
	    "\"io\":{\"read_bytes\":0,\"write_bytes\":0},"
	    "\"net\":{\"rx_bytes\":0,\"tx_bytes\":0}}",
	    p->id, pid, js(par, sizeof(par), p->parent), st, en, p->uid,
	    js(job, sizeof(job), p->job), js(step, sizeof(step), p->step),
	    js(run, sizeof(run), p->run),
	    js(pl, sizeof(pl), p->pipeline), js(task, sizeof(task), p->task),
	    js(cat, sizeof(cat), p->category), p->cpu,
	    (unsigned long long)p->rss);
}

/* The store every test reads. */
static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct store *s = NULL;
	char id[7][32], job[16], run[16];

	assert_non_null(f);
	log_init("test_rightsize", 0, LOG_LVL_ERROR);
	snprintf(f->dir, sizeof(f->dir), "/tmp/jt_rightsize_XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->db, sizeof(f->db), "%s/jobtrace.db", f->dir);
	assert_int_equal(store_open(f->db, false, &s), 0);

	for (int k = 1; k <= 3; k++) {
		double t = 100.0 * k;
		int uid = k == 3 ? 1001 : 1000;

		snprintf(job, sizeof(job), "J%d", k);
		snprintf(run, sizeof(run), "r%d", k);
		for (int i = 0; i < 7; i++)
			snprintf(id[i], sizeof(id[i]), "a%d-%d", k, i);
		struct p ps[] = {
			{ id[0], "main", uid, job, run, "rnaseq", "align",
			  "shell", t, t + (k == 3 ? 100 : 10), 0.1, 4 * MIB, NULL },
			{ id[1], id[0], uid, job, run, "rnaseq", "align",
			  "workflow-engine", t + 0.5, t + 10, 1.0, 80 * MIB, NULL },
			{ id[2], id[1], uid, job, run, "rnaseq", "align", NULL,
			  t + 1, t + 5, cpu1[k], 100 * MIB, NULL },
			{ id[3], id[1], uid, job, run, "rnaseq", "align", NULL,
			  t + 3, t + 8, 5.0, peak[k] - 104 * MIB, NULL },
			{ id[4], id[1], uid, job, run, "rnaseq", "align", NULL,
			  t + 8.5, t + 9, 0.5, 250 * MIB, NULL },
			/* the job is shared: task qc ran in it too */
			{ id[5], "main", uid, job, run, "rnaseq", "qc", NULL,
			  t + 20, t + 21, 0.2, 10 * MIB, NULL },
			/* the submitting client: no instance */
			{ id[6], "main", uid, NULL, NULL, "rnaseq", "align",
			  "scheduler-helper", t - 0.2, t - 0.1, 0.3, 5 * MIB, NULL },
		};
		for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++)
			put_proc(s, &ps[i]);
		/* merge: its job's only task, twice at once */
		snprintf(job, sizeof(job), "M%d", k);
		for (int i = 0; i < 2; i++) {
			snprintf(id[i], sizeof(id[i]), "m%d-%d", k, i);
			struct p m = { id[i], "smk", uid, job, run, "rnaseq",
				       "merge", NULL, t + 40, t + 50, 10,
				       100 * MIB, NULL };
			put_proc(s, &m);
		}
		put_job_end(s, job, run, 2, 4 * GIB, 250 * MIB, t + 51);
	}
	/* task sort as its own job, twice: a top process and its child, and
	 * in the extern step (Slurm's sleep) a top of its own */
	for (int k = 4; k <= 5; k++) {
		double t = 1000.0 * k;

		snprintf(job, sizeof(job), "J%d", k);
		snprintf(run, sizeof(run), "r%d", k - 3);
		snprintf(id[0], sizeof(id[0]), "s%d-0", k);
		snprintf(id[1], sizeof(id[1]), "s%d-1", k);
		snprintf(id[2], sizeof(id[2]), "s%d-2", k);
		struct p ps[] = {
			{ id[0], "slurm", 1000, job, run, "rnaseq", "sort",
			  NULL, t, t + 60, 30, 300 * MIB, "batch" },
			{ id[1], id[0], 1000, job, run, "rnaseq", "sort",
			  NULL, t + 10, t + 120, 60, 500 * MIB, "batch" },
			{ id[2], "stepd", 1000, job, run, "rnaseq", "sort",
			  NULL, t, t + 120, 0, 1 * MIB, "extern" },
		};
		for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++)
			put_proc(s, &ps[i]);
		put_job_end(s, job, run, 4, 8 * GIB, (uint64_t)(k - 3) * GIB,
			    t + 121);
	}
	/* a name no configuration can hold, no job and no run: 3 runs */
	for (int k = 1; k <= 3; k++) {
		snprintf(id[0], sizeof(id[0]), "w%d", k);
		struct p w = { id[0], NULL, 1000, NULL, NULL, "rnaseq",
			       "we'ird name", NULL, 3000.0 + k, 3001.0 + k,
			       0.5, 50 * MIB, NULL };
		put_proc(s, &w);
	}
	/* another pipeline's align */
	struct p other = { "o1", NULL, 1000, "J9", "r9", "other", "align",
			   NULL, 50, 60, 1, 5 * GIB, NULL };
	put_proc(s, &other);
	assert_true(store_flush(s) > 0);
	store_close(s);
	*state = f;
	return 0;
}

/* Remove the store. */
static int teardown(void **state)
{
	struct fixture *f = *state;

	test_remove_store(f->db, f->dir);
	free(f);
	return 0;
}

/* Run rightsize on the fixture into a string (freed by the caller). */
static char *run(const struct fixture *f, const struct report_query *q,
		 const char *format, int want)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	assert_non_null(out);
	assert_int_equal(qcmd_run_path(qcmd_find("rightsize"), f->db, q,
					format, out), want);
	fclose(out);
	return buf;
}

/* Fail unless text holds line as one whole line. */
static void has_line(const char *text, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : p)
		if (!strncmp(p, line, n) && (p[n] == '\n' || !p[n]))
			return;
	fail_msg("no line \"%s\" in:\n%s", line, text);
}

/* The rounding rules at their edges. */
static void test_rules(void **state)
{
	double v[21];

	(void)state;
	assert_int_equal(rightsize_memory(0), 100 * MIB);
	assert_int_equal(rightsize_memory(300 * MIB), 400 * MIB);
	assert_int_equal(rightsize_memory(250 * MIB), 300 * MIB);
	assert_int_equal(rightsize_memory(250 * MIB + 1), 400 * MIB);
	assert_int_equal(rightsize_memory(EDGE_PEAK), 400 * MIB);
	assert_int_equal(rightsize_memory(EDGE_PEAK + 1), 500 * MIB);
	assert_true(rightsize_memory(UINT64_MAX) >= 100 * MIB);
	assert_int_equal(rightsize_cores(0), 1);
	assert_int_equal(rightsize_cores(0.3), 1);
	assert_int_equal(rightsize_cores(1.0), 1);
	/* more than one core: work at the same time, no margin taken */
	assert_int_equal(rightsize_cores(1.001), 2);
	assert_int_equal(rightsize_cores(1.02), 2);
	assert_int_equal(rightsize_cores(2.5), 3);
	assert_int_equal(rightsize_minutes(0), 1);
	assert_int_equal(rightsize_minutes(40), 1);	/* 60 s */
	assert_int_equal(rightsize_minutes(40.1), 2);
	assert_int_equal(rightsize_minutes(3600), 90);
	/* nearest rank: the ceil(0.95 n)-th smallest */
	for (int n = 1; n <= 21; n++) {
		for (int i = 0; i < n; i++)
			v[i] = n - i;	/* descending: the sort is needed */
		assert_true(rightsize_percentile(v, (size_t)n, 95) ==
			    (double)((95 * n + 99) / 100));
	}
	v[0] = 7;
	assert_true(rightsize_percentile(v, 1, 95) == 7);
	assert_true(rightsize_percentile(v, 3, 95) == v[2]);
	assert_true(rightsize_percentile(v, 20, 95) == 19);
	assert_true(rightsize_percentile(v, 0, 95) == 0);
	assert_int_equal(rightsize_format_parse("snakemake", &(enum rightsize_format){ 0 }), 0);
	assert_int_equal(rightsize_format_parse("html", &(enum rightsize_format){ 0 }), -EINVAL);
}

/* Squeeze runs of white space in s to one space, in place. */
static char *squeeze(char *s)
{
	size_t o = 0;

	for (size_t i = 0; s[i]; i++)
		if (!(s[i] == ' ' || s[i] == '\n' || s[i] == '\t') ||
		    (o && s[o - 1] != ' '))
			s[o++] = s[i] == '\n' || s[i] == '\t' ? ' ' : s[i];
	s[o] = '\0';
	return s;
}

/*
 * One rule, stated once: README.md and the man page say RIGHTSIZE_RULE,
 * which --help and every output's comment print, and no other cores rule
 * (the README had max(1, ceil(p95 cores - 0.01)) where the header had
 * ceil(p95 cores used)).
 */
static void test_rule_documented(void **state)
{
	static const struct { const char *dir, *name; } doc[] = {
		{ ".", "README.md" }, { "doc", "jobtrace.1" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(doc) / sizeof(doc[0]); i++) {
		char *t = squeeze(test_read_src(doc[i].dir, doc[i].name, NULL));

		if (!strstr(t, RIGHTSIZE_RULE))
			fail_msg("%s does not state \"%s\"", doc[i].name,
				 RIGHTSIZE_RULE);
		assert_null(strstr(t, "0.01"));
		free(t);
	}
}

/* --pipeline rnaseq as JSON: every figure. */
static void test_json(void **state)
{
	struct report_query q = { .pipeline = "rnaseq" };
	char *o = run(*state, &q, "json", 0);
	char want[256];

	assert_true(json_valid(o));
	assert_non_null(strstr(o, "{\"selection\":{\"pipeline\":\"rnaseq\"},"));
	/* align: 3 runs, 3 instances; the engine left out of the peak */
	snprintf(want, sizeof(want), "{\"task\":\"align\",\"runs\":3,"
		 "\"instances\":3,\"requested\":{\"cpus\":null,"
		 "\"mem_bytes\":null},\"used_p95\":{\"mem_peak_bytes\":%llu,"
		 "\"mem_source\":\"processes\",\"cores\":1.5,\"wall_s\":100},"
		 "\"recommendation\":{\"mem_bytes\":%llu,\"cpus\":2,"
		 "\"time_s\":150,\"time_min\":3},\"note\":null}",
		 EDGE_PEAK, 400 * MIB);
	if (!strstr(o, want))
		fail_msg("no %s in %s", want, o);
	/* sort: its own job twice: the job's peak and allocation, 2 runs */
	snprintf(want, sizeof(want), "{\"task\":\"sort\",\"runs\":2,"
		 "\"instances\":2,\"requested\":{\"cpus\":4,\"mem_bytes\":%llu},"
		 "\"used_p95\":{\"mem_peak_bytes\":%llu,\"mem_source\":\"job\","
		 "\"cores\":0.75,\"wall_s\":120},\"recommendation\":null,"
		 "\"note\":\"2 runs, at least 3 needed\"}", 8 * GIB, 2 * GIB);
	if (!strstr(o, want))
		fail_msg("no %s in %s", want, o);
	/* merge: two instances a run of 1 core and 100 MiB each, their
	 * job not the own job of either */
	snprintf(want, sizeof(want), "{\"task\":\"merge\",\"runs\":3,"
		 "\"instances\":6,\"requested\":{\"cpus\":null,"
		 "\"mem_bytes\":null},\"used_p95\":{\"mem_peak_bytes\":%llu,"
		 "\"mem_source\":\"processes\",\"cores\":1,\"wall_s\":10},"
		 "\"recommendation\":{\"mem_bytes\":%llu,\"cpus\":1,",
		 100 * MIB, 200 * MIB);
	if (!strstr(o, want))
		fail_msg("no %s in %s", want, o);
	/* qc: one process a run, no job of its own (align shares it) */
	assert_non_null(strstr(o, "{\"task\":\"qc\",\"runs\":3,\"instances\":3,"
			       "\"requested\":{\"cpus\":null,"));
	/* no job, no run: each instance a run of its own */
	assert_non_null(strstr(o, "{\"task\":\"we'ird name\",\"runs\":3,"));
	/* runs over the selection: r1 r2 r3 and the three alone */
	assert_non_null(strstr(o, "\"runs\":6,\"runs_needed\":3,"));
	assert_null(strstr(o, "5368709120"));	/* the other pipeline's */
	free(o);
}

/* The configurations Nextflow, Snakemake and Slurm read. */
static void test_formats(void **state)
{
	struct report_query q = { .pipeline = "rnaseq" };
	char *o;

	o = run(*state, &q, "snakemake", 0);
	has_line(o, "set-threads:");
	has_line(o, "  - \"align=2\"");
	has_line(o, "  - \"qc=1\"");
	has_line(o, "set-resources:");
	has_line(o, "  - \"align:mem_mb=420\"");	/* 419430400 B up */
	has_line(o, "  - \"align:mem_mib=400\"");
	has_line(o, "  - \"align:runtime=3\"");
	has_line(o, "  - \"qc:mem_mb=105\"");
	has_line(o, "# sort: 2 runs, at least 3 needed");
	has_line(o, "# we'ird name: not a rule name, left out");
	assert_null(strstr(o, "sort:mem"));
	assert_null(strstr(o, "\"we'ird"));
	free(o);

	o = run(*state, &q, "nextflow", 0);
	has_line(o, "process {");
	has_line(o, "    withName: 'align' { cpus = 2; memory = '400 MB';"
		 " time = '3m' }");
	has_line(o, "    // sort: 2 runs, at least 3 needed");
	has_line(o, "    // we'ird name: not a process name, left out");
	has_line(o, "}");
	free(o);

	o = run(*state, &q, "slurm", 0);
	has_line(o, "align: sbatch --cpus-per-task=2 --mem=400M --time=3");
	has_line(o, "qc: sbatch --cpus-per-task=1 --mem=100M --time=1");
	has_line(o, "# sort: 2 runs, at least 3 needed");
	free(o);

	o = run(*state, &q, "text", 0);
	has_line(o, "jobtrace rightsize, pipeline rnaseq: 6 runs, 5 tasks,"
		 " 17 instances");
	has_line(o, "  align                    memory 400 MiB, 2 cores, 3 min");
	has_line(o, "  sort                     no setting: 2 runs, at least 3"
		 " needed");
	assert_non_null(strstr(o, "2.0 GiB*"));	/* sort: the job's peak */
	free(o);
}

/* Run r2 alone: one run; a user sees only what is theirs; no task. */
static void test_selection(void **state)
{
	struct report_query q = { .run = "r2" };
	char *o;

	o = run(*state, &q, "snakemake", 0);
	has_line(o, "# align: 1 run, at least 3 needed");
	has_line(o, "# no setting: an empty profile");
	has_line(o, "{}");
	free(o);

	/* uid 1000 does not see run 3 (uid 1001): align has 2 runs */
	q = (struct report_query){ .pipeline = "rnaseq", .uid_only = true,
				   .uid = 1000 };
	o = run(*state, &q, "json", 0);
	assert_non_null(strstr(o, "{\"task\":\"align\",\"runs\":2,"));
	free(o);

	/* --since: every pipeline's (the other pipeline's align too) */
	q = (struct report_query){ .since = T0 };
	o = run(*state, &q, "json", 0);
	assert_non_null(strstr(o, "{\"task\":\"align\",\"runs\":4,"
			       "\"instances\":4,"));
	free(o);

	q = (struct report_query){ .pipeline = "none" };
	o = run(*state, &q, "text", -ENOENT);
	free(o);
	/* --job: that job's tasks (an array's id: its tasks') */
	q = (struct report_query){ .job = "J1" };
	o = run(*state, &q, "json", 0);
	assert_non_null(strstr(o, "{\"task\":\"align\",\"runs\":1,"
			       "\"instances\":1,"));
	free(o);
	q = (struct report_query){ .job = "J1", .run = "r1" };
	o = run(*state, &q, "text", -EINVAL);
	free(o);
}

/* Count the lines of text that hold s. */
static int lines_with(const char *text, const char *s)
{
	int n = 0;

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : p) {
		const char *e = strchr(p, '\n');
		const char *hit = strstr(p, s);

		n += hit && (!e || hit < e);
	}
	return n;
}

/* Member path (a json_extract path) of the entry of array arr in json
 * whose key is name, as text ("" when missing); freed by the caller. */
static char *entry(const char *json, const char *arr, const char *key,
		   const char *name, const char *path)
{
	sqlite3_stmt *st = NULL;
	sqlite3 *db = NULL;
	char sql[256];
	char *v;

	snprintf(sql, sizeof(sql), "SELECT json_extract(value, '%s') FROM"
		 " json_each(?1, '%s') WHERE json_extract(value, '$.%s') = ?2",
		 path, arr, key);
	assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	sqlite3_bind_text(st, 1, json, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
	v = strdup(sqlite3_step(st) == SQLITE_ROW &&
		   sqlite3_column_text(st, 0) ?
		   (const char *)sqlite3_column_text(st, 0) : "");
	sqlite3_finalize(st);
	sqlite3_close(db);
	return v;
}

/* Fail unless the text report's line of task has inst instances, procs
 * processes and the memory peak mem (as printed). */
static void text_row(const char *rt, const char *task, size_t inst,
		     size_t procs, const char *mem)
{
	char head[64], cut[512];
	const char *l;
	size_t i = 0, p = 0;

	snprintf(head, sizeof(head), "\n  %s ", task);
	l = strstr(rt, head);
	if (!l)
		fail_msg("no line of %s", task);
	snprintf(cut, sizeof(cut), "%.*s", (int)strcspn(l + 1, "\n"), l + 1);
	if (sscanf(cut, "%*s %zu %zu", &i, &p) != 2 || i != inst ||
	    p != procs || !strstr(cut, mem))
		fail_msg("want %zu instances, %zu processes, %s: %s", inst,
			 procs, mem, cut);
}

/* Fail unless the page's table by task has a row that starts with head
 * (after the name's colour) and holds cell. */
static void html_row(const char *page, const char *head, const char *cell)
{
	const char *t = strstr(page, "<table class=\"groups\" id=\"by-task\">");
	const char *r = t ? strstr(t, head) : NULL;
	const char *c = r ? strstr(r, cell) : NULL;

	if (!c || c > strstr(r, "</tr>"))
		fail_msg("no row %s with %s in the table by task", head, cell);
}

/* Fail unless a and b are the same text (both freed). */
static void same(char *a, char *b, const char *what)
{
	if (strcmp(a, b))
		fail_msg("%s: '%s' != '%s'", what, a, b);
	free(a);
	free(b);
}

/*
 * One definition (tasks.h): the report's instances and memory peak by
 * task (JSON, text, HTML) are rightsize's, whose p95 of 3 to 6 instances
 * is their largest: align's peak is the concurrent sum, not its largest
 * process; merge's is an instance's, not its job's; sort's is its job's;
 * the sbatch of align is under no task.
 */
static void test_one_definition(void **state)
{
	static const char *const tasks[] = { "align", "merge", "sort", "qc" };
	const struct fixture *f = *state;
	struct report_query q = { .pipeline = "rnaseq" };
	char *rs = run(f, &q, "json", 0);
	char *rj = test_report_of(f->db, &q, REPORT_JSON);
	char *rt = test_report_of(f->db, &q, REPORT_TEXT);
	char *rh = test_report_of(f->db, &q, REPORT_HTML);
	char *v;

	for (size_t i = 0; i < sizeof(tasks) / sizeof(tasks[0]); i++) {
		same(entry(rs, "$.tasks", "task", tasks[i],
			   "$.used_p95.mem_peak_bytes"),
		     entry(rj, "$.by_task", "task", tasks[i],
			   "$.mem_peak_bytes"), tasks[i]);
		same(entry(rs, "$.tasks", "task", tasks[i], "$.instances"),
		     entry(rj, "$.by_task", "task", tasks[i], "$.instances"),
		     tasks[i]);
	}
	v = entry(rj, "$.by_task", "task", "align", "$.mem_peak_bytes");
	assert_int_equal(strtoull(v, NULL, 10), EDGE_PEAK);
	free(v);
	v = entry(rj, "$.by_task", "task", "align", "$.processes");
	assert_string_equal(v, "15");	/* 3 x 5, not the sbatch */
	free(v);
	/* text: INST, PROCS and PEAK */
	text_row(rt, "align", 3, 15, "333.3 MiB");
	text_row(rt, "merge", 6, 6, "100.0 MiB");
	text_row(rt, "sort", 2, 6, "2.0 GiB");
	/* HTML: the table by task, align's row */
	html_row(rh, "align</td><td>3</td><td>15</td>", "<td>333.3 MiB</td>");
	html_row(rh, "merge</td><td>6</td><td>6</td>", "<td>100.0 MiB</td>");
	free(rs);
	free(rj);
	free(rt);
	free(rh);
}

/* report and export take --pipeline too: its processes, their jobs. */
static void test_report_pipeline(void **state)
{
	const struct fixture *f = *state;
	struct report_query q = { .pipeline = "rnaseq" };
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	assert_string_equal(storeq_process_where(&q), "job_pipeline = ?1");
	assert_int_equal(qcmd_run_path(qcmd_find("export"), f->db, &q,
				       NULL, out), 0);
	fclose(out);
	/* 3 x 7 align, qc and sbatch, 3 x 2 merge, 2 x 3 sort, 3 odd names;
	 * the 3 merge and 2 sort jobs */
	assert_int_equal(lines_with(buf, "\"type\":\"process\""), 36);
	assert_int_equal(lines_with(buf, "\"type\":\"job\""), 5);
	assert_int_equal(lines_with(buf, "\"id\":\"o1\""), 0);
	free(buf);

	buf = NULL;
	out = open_memstream(&buf, &len);
	q.pipeline = "other";
	assert_int_equal(qcmd_run_path(qcmd_find("report"), f->db, &q,
				       "json", out), 0);
	fclose(out);
	assert_true(json_valid(buf));
	assert_non_null(strstr(buf, "\"pipeline\":\"other\""));
	assert_int_equal(lines_with(buf, "\"id\":\"o1\""), 1);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rules),
		cmocka_unit_test(test_rule_documented),
		cmocka_unit_test_setup_teardown(test_json, setup, teardown),
		cmocka_unit_test_setup_teardown(test_formats, setup, teardown),
		cmocka_unit_test_setup_teardown(test_selection, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_report_pipeline, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_one_definition, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
