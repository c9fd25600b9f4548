// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_topq.c - the model of `jobtrace top` on records written here as
 * schema v1 JSON text, at a fixed "now" N.
 *
 * Pipeline smk ran three times before (runs r0, r1, r3 at T0, long before
 * the window): task a took 10, 14 and 30 s (with run r5 40 s: median 14,
 * mean 23.5), b 20 s
 * each, c 30 s each.  Run r2 now:
 *   a  done: one process [N-100, N-92] (8 s)
 *   b  live, no process record: bash pid 100 from N-30 and its child sleep
 *      pid 101 from N-25, each sampled at N-12 and N-2: sleep's CPU grew
 *      by 5 s and its read bytes by 10 MiB in those 10 s (0.5 cores,
 *      1 MiB/s), its RSS 50 MiB now; a stall signal (phase start) on 101
 *   d  failed: exit code 1
 *   e  OOM-killed
 *   c  not started: waiting, expected 30 s
 * The engine, snakemake (no task), is live too.  Run r9 of another uid is
 * live beside it, run r5 ended long ago (out of the window), and run r7's
 * one process was last sampled 190 s ago (lost: not shown by default).
 */
#include <errno.h>
#include <math.h>
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
#include "squeueq.h"
#include "store.h"
#include "test_files.h"
#include "topq.h"

#define MIB (1ULL << 20)
#define T0 1772359200.0		/* 2026-03-01T10:00:00Z */
#define N (T0 + 5000)		/* the frame's time */

struct fixture {
	char dir[64];
	char db[96];
	struct store *st;
};

/* A time as record.c writes it. */
static const char *ts(double t, char *buf, size_t len)
{
	json_format_time((uint64_t)(t * 1e9 + 0.5), buf, len);
	return buf;
}

/* The job member of a record. */
static const char *job_user = "ana";	/* job.user of what put_* write */

static const char *jobm(char *buf, size_t len, const char *job,
			const char *run, const char *task)
{
	char tk[64];

	snprintf(buf, len, "{\"scheduler\":\"local\",\"id\":\"%s\",\"step\":null,"
		 "\"run\":\"%s\",\"pipeline\":\"smk\",\"task\":%s,\"user\":\"%s\","
		 "\"account\":null,\"cost_center\":null}", job, run,
		 test_jstr(task, tk, sizeof(tk)), job_user);
	return buf;
}

/* A finished process of task (NULL: none) in run. */
static void put_proc(struct store *s, const char *run, const char *task,
		     int pid, double t0, double t1, int code, bool oom,
		     int uid)
{
	char st[40], en[40], job[256], id[64];

	snprintf(id, sizeof(id), "p-%s-%d", run, pid);
	test_put_json(s, "{\"type\":\"process\",\"schema\":1,\"host\":\"n1\","
	    "\"id\":\"%s\",\"pid\":%d,\"ppid\":1,\"parent_id\":null,"
	    "\"start_time\":\"%s\",\"end_time\":\"%s\",\"exe\":\"/bin/%s\","
	    "\"comm\":\"%s\",\"argv\":[\"x\"],\"uid\":%d,\"job\":%s,"
	    "\"tool\":{\"name\":\"%s\",\"category\":null},"
	    "\"exit\":{\"code\":%d,\"signal\":%s,\"oom_killed\":%s},"
	    "\"cpu\":{\"user_s\":1,\"sys_s\":0},"
	    "\"mem\":{\"peak_rss_bytes\":%llu},"
	    "\"io\":{\"read_bytes\":0,\"write_bytes\":0},"
	    "\"net\":{\"rx_bytes\":0,\"tx_bytes\":0}}",
	    id, pid, ts(t0, st, sizeof(st)), ts(t1, en, sizeof(en)),
	    task ? task : "sh", task ? task : "sh", uid,
	    jobm(job, sizeof(job), run, run, task), task ? task : "sh", code,
	    oom ? "9" : "null", oom ? "true" : "false", 10 * MIB);
}

/* A sample of a live process at time t. */
static void put_sample(struct store *s, const char *run, const char *task,
		       const char *tool, int pid, int ppid, double start,
		       double t, double cpu, uint64_t rss, uint64_t rd,
		       int uid)
{
	char st[40], tm[40], job[256], id[64], pg[128] = "null";

	snprintf(id, sizeof(id), "s-%s-%d-%.0f", run, pid, t);
	/* sleep reads a 40 MiB file: its offset is what it read */
	if (!strcmp(tool, "sleep"))
		snprintf(pg, sizeof(pg), "{\"path\":\"/data/s1.fq.gz\","
			 "\"offset_bytes\":%llu,\"size_bytes\":%llu}",
			 (unsigned long long)rd, 40ull * MIB);
	test_put_json(s, "{\"type\":\"sample\",\"schema\":1,\"host\":\"n1\","
	    "\"id\":\"%s\",\"time\":\"%s\",\"pid\":%d,\"ppid\":%d,"
	    "\"parent_id\":null,\"start_time\":\"%s\",\"exe\":\"/bin/%s\","
	    "\"comm\":\"%s\",\"argv\":[\"%s\"],\"uid\":%d,\"job\":%s,"
	    "\"tool\":{\"name\":\"%s\",\"category\":null},"
	    "\"cpu\":{\"user_s\":%.3f,\"sys_s\":0},"
	    "\"mem\":{\"peak_rss_bytes\":%llu,\"rss_bytes\":%llu},"
	    "\"io\":{\"read_bytes\":%llu,\"write_bytes\":0},"
	    "\"net\":{\"rx_bytes\":0,\"tx_bytes\":0},\"progress\":%s}",
	    id, ts(t, tm, sizeof(tm)), pid, ppid, ts(start, st, sizeof(st)),
	    tool, tool, tool, uid, jobm(job, sizeof(job), run, run, task),
	    tool, cpu, (unsigned long long)(rss + MIB),
	    (unsigned long long)rss, (unsigned long long)rd, pg);
}

/* The store every test reads. */
static int setup(void **state)
{
	static const double wall_a[] = { 10, 14, 30 };
	static const char *const runs[] = { "r0", "r1", "r3" };
	struct fixture *f = calloc(1, sizeof(*f));
	struct store *s = NULL;
	char tm[40], job[256];

	assert_non_null(f);
	log_init("test_topq", 0, LOG_LVL_ERROR);
	snprintf(f->dir, sizeof(f->dir), "/tmp/jt_topq_XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->db, sizeof(f->db), "%s/jobtrace.db", f->dir);
	assert_int_equal(store_open(f->db, false, &s), 0);
	for (int k = 0; k < 3; k++) {
		double t = T0 + 100 * k;

		put_proc(s, runs[k], "a", 10 + k, t, t + wall_a[k], 0, false,
			 1000);
		put_proc(s, runs[k], "b", 20 + k, t + 40, t + 60, 0, false,
			 1000);
		put_proc(s, runs[k], "c", 30 + k, t + 60, t + 90, 0, false,
			 1000);
	}
	/* ended long ago: out of the window */
	put_proc(s, "r5", "a", 50, T0 + 900, T0 + 940, 0, false, 1000);
	/* run r2 now */
	put_proc(s, "r2", "a", 60, N - 100, N - 92, 0, false, 1000);
	put_proc(s, "r2", "d", 61, N - 90, N - 85, 1, false, 1000);
	put_proc(s, "r2", "e", 62, N - 80, N - 70, 0, true, 1000);
	for (int k = 0; k < 2; k++) {
		double t = k ? N - 2 : N - 12;

		put_sample(s, "r2", NULL, "snakemake", 90, 1, N - 110, t,
			   2 + k, 80 * MIB, 0, 1000);
		put_sample(s, "r2", "b", "bash", 100, 90, N - 30, t, 0.01,
			   3 * MIB, 0, 1000);
		put_sample(s, "r2", "b", "sleep", 101, 100, N - 25, t,
			   1 + 5 * k, 50 * MIB, 10 * MIB * (k + 1), 1000);
		put_sample(s, "r9", "z", "zcat", 200, 1, N - 50, t, 1 + k,
			   MIB, 0, 1001);
	}
	/* run r7: its agent stopped; the last samples are old */
	put_sample(s, "r7", "z", "zcat", 300, 1, N - 300, N - 200, 1, MIB, 0,
		   1000);
	put_sample(s, "r7", "z", "zcat", 300, 1, N - 300, N - 190, 2, MIB, 0,
		   1000);
	test_put_json(s, "{\"type\":\"signal\",\"schema\":1,\"host\":\"n1\","
	    "\"id\":\"sig-1\",\"kind\":\"stall\",\"time\":\"%s\",\"job\":%s,"
	    "\"pid\":101,\"comm\":\"sleep\",\"tool\":{\"name\":\"sleep\","
	    "\"category\":null,\"version\":null},\"evidence\":{\"phase\":"
	    "\"start\",\"stalled_s\":10,\"state\":\"S\",\"wchan\":\"x\"}}",
	    ts(N - 5, tm, sizeof(tm)), jobm(job, sizeof(job), "r2", "r2", "b"));
	assert_true(store_flush(s) > 0);
	f->st = s;
	*state = f;
	return 0;
}

/* Remove the store. */
static int teardown(void **state)
{
	struct fixture *f = *state;

	store_close(f->st);
	test_remove_store(f->db, f->dir);
	free(f);
	return 0;
}

/* The line of kind named name under run (NULL: any). */
static const struct topq_line *find(const struct topq *t, const char *run,
				    enum topq_kind kind, const char *name)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].kind == kind && t->v[i].name &&
		    !strcmp(t->v[i].name, name) &&
		    (!run || (t->v[i].run && !strcmp(t->v[i].run, run))))
			return &t->v[i];
	return NULL;
}

/* The tree of r2: states, elapsed and expected, figures now. */
static void test_tree(void **state)
{
	struct fixture *f = *state;
	struct report_query q = { 0 };
	struct topq t;
	const struct topq_line *l;

	assert_int_equal(topq_load(f->st, "test", &q, N, &t), 0);
	/* r2 and r9; r5 and the earlier runs ended long ago */
	assert_int_equal(t.runs, 2);
	assert_int_equal(t.running, 2);
	assert_null(find(&t, NULL, TOPQ_RUN, "r5"));
	assert_null(find(&t, NULL, TOPQ_RUN, "r1"));
	l = find(&t, NULL, TOPQ_RUN, "r2");
	assert_non_null(l);
	assert_int_equal(l->state, TOPQ_RUNNING);
	assert_string_equal(l->pipeline, "smk");
	assert_float_equal(l->elapsed, 110, 1e-3);

	l = find(&t, "r2", TOPQ_TASK, "a");
	assert_non_null(l);
	assert_int_equal(l->state, TOPQ_DONE);
	assert_float_equal(l->elapsed, 8, 1e-3);
	assert_float_equal(l->expected, 14, 1e-9);	/* median, not mean */
	assert_int_equal(l->expected_n, 4);

	l = find(&t, "r2", TOPQ_TASK, "b");
	assert_non_null(l);
	assert_int_equal(l->state, TOPQ_STALLED);
	assert_float_equal(l->elapsed, 30, 1e-3);
	assert_float_equal(l->expected, 20, 1e-9);

	l = find(&t, "r2", TOPQ_PROC, "sleep");
	assert_non_null(l);
	assert_int_equal(l->pid, 101);
	assert_int_equal(l->ppid, 100);
	assert_int_equal(l->depth, 2);
	assert_int_equal(l->state, TOPQ_STALLED);
	assert_float_equal(l->cores, 0.5, 1e-6);
	assert_float_equal(l->read_bps, (double)MIB, 1e-3);
	assert_int_equal(l->rss, 50 * MIB);
	assert_int_equal(l->peak, 51 * MIB);
	assert_string_equal(l->signals, "stall");
	assert_float_equal(l->elapsed, 25, 1e-3);
	/* its latest sample's progress: 20 of 40 MiB */
	assert_string_equal(l->progress.path, "/data/s1.fq.gz");
	assert_int_equal(l->progress.offset, 20 * MIB);
	assert_int_equal(l->progress.size, 40 * MIB);
	assert_null(find(&t, "r2", TOPQ_PROC, "bash")->progress.path);

	assert_int_equal(find(&t, "r2", TOPQ_TASK, "d")->state, TOPQ_FAILED);
	assert_int_equal(find(&t, "r2", TOPQ_TASK, "e")->state, TOPQ_OOM);
	l = find(&t, NULL, TOPQ_TASK, "c");
	assert_non_null(l);
	assert_int_equal(l->state, TOPQ_WAITING);
	assert_float_equal(l->expected, 30, 1e-9);
	/* the engine: a process of no task, right under its run */
	l = find(&t, "r2", TOPQ_PROC, "snakemake");
	assert_non_null(l);
	assert_int_equal(l->depth, 1);
	assert_float_equal(l->cores, 0.1, 1e-6);
	topq_free(&t);
}

/* The name of the line above line i that is not a node's ("": none). */
static const char *up_name(const struct topq *t, size_t i)
{
	long p = t->v[i].parent;

	while (p >= 0 && t->v[p].kind == TOPQ_NODE)
		p = t->v[p].parent;
	return p < 0 ? "" : t->v[p].name ? t->v[p].name : "";
}

/* The fleet's view: a node line between each run and its lines, which
 * sums them as the run does; the same lines under it, one level deeper;
 * a waiting task on no node; the kind read back from JSON. */
static void test_nodes(void **state)
{
	struct fixture *f = *state;
	struct report_query q = { 0 }, nq = { .by_node = true };
	struct topq t, u, w;
	const struct topq_line *r, *n;
	char *buf = NULL;
	size_t len = 0, lines = 0;
	FILE *m = open_memstream(&buf, &len);

	assert_int_equal(topq_load(f->st, "test", &q, N, &t), 0);
	assert_int_equal(topq_load(f->st, "test", &nq, N, &u), 0);
	assert_int_equal(u.runs, t.runs);
	assert_int_equal(u.n, t.n + t.runs);	/* one node each: n1 */
	r = find(&u, NULL, TOPQ_RUN, "r2");
	n = &u.v[r - u.v + 1];
	assert_int_equal(n->kind, TOPQ_NODE);
	assert_string_equal(n->name, "n1");
	assert_int_equal(n->depth, 1);
	assert_int_equal(n->parent, r - u.v);
	assert_int_equal(n->state, TOPQ_RUNNING);
	assert_float_equal(n->cores, r->cores, 1e-9);
	assert_int_equal(n->rss, r->rss);
	assert_int_equal(n->peak, r->peak);
	assert_float_equal(n->cpu_s, r->cpu_s, 1e-9);
	assert_string_equal(n->signals, r->signals);
	for (size_t i = 0; i < u.n; i++) {
		const struct topq_line *l = &u.v[i];
		const struct topq_line *o = NULL;

		if (l->kind == TOPQ_NODE)
			continue;
		for (size_t j = 0; j < t.n && !o; j++)
			if (t.v[j].kind == l->kind && t.v[j].pid == l->pid &&
			    !strcmp(t.v[j].name, l->name) &&
			    t.v[j].start == l->start &&
			    !strcmp(up_name(&t, j), up_name(&u, i)))
				o = &t.v[j];
		assert_non_null(o);
		lines++;
		/* one deeper, but a waiting task: on no node */
		assert_int_equal(l->depth, o->depth +
				 (l->depth && l->state != TOPQ_WAITING));
		assert_int_equal(l->state, o->state);
		assert_float_equal(l->cores, o->cores, 1e-9);
		assert_float_equal(l->expected, o->expected, 1e-9);
	}
	assert_int_equal(lines, t.n);
	assert_int_equal(find(&u, NULL, TOPQ_TASK, "c")->depth, 1);
	assert_int_equal(topq_print_json(&u, &nq, m), 0);
	fclose(m);
	assert_non_null(strstr(buf, "\"kind\":\"node\""));
	assert_int_equal(topq_from_json(buf, len, &w), 0);
	assert_int_equal(w.n, u.n);
	for (size_t i = 0; i < u.n; i++) {
		assert_int_equal(w.v[i].kind, u.v[i].kind);
		assert_int_equal(w.v[i].depth, u.v[i].depth);
	}
	topq_free(&w);
	topq_free(&u);
	topq_free(&t);
	free(buf);
}

/* squeue's pending jobs read back: four fields a line, the comment the
 * rest (tabs too); a line short of a field or with no uid skipped; the
 * prolog's comment words. */
static void test_squeue(void **state)
{
	static const char out[] =
		"1234\t1000\t/w/.snakemake/tmp.x/snakejob.align.1.sh\t\n"
		"77_[1-5]\t0\t/w/a b.sh\ttrace-run=R1\ttrace-step=qc x\n"
		"bad line\n"
		"9\tnobody\t/x.sh\tc\n"
		"\t5\t/x.sh\tc\n"
		"12\t4294967296\t/x.sh\tc\n"
		"5\t1\t/y.sh\tc";
	struct squeueq l;
	char v[16];

	(void)state;
	assert_int_equal(squeueq_parse(out, strlen(out), &l), 0);
	assert_int_equal(l.n, 3);
	assert_string_equal(l.v[0].id, "1234");
	assert_int_equal(l.v[0].uid, 1000);
	assert_string_equal(l.v[0].command,
			    "/w/.snakemake/tmp.x/snakejob.align.1.sh");
	assert_string_equal(l.v[0].comment, "");
	assert_string_equal(l.v[1].id, "77_[1-5]");
	assert_string_equal(l.v[1].command, "/w/a b.sh");
	assert_string_equal(l.v[1].comment, "trace-run=R1\ttrace-step=qc x");
	assert_string_equal(l.v[2].id, "5");
	assert_true(squeueq_comment_word(l.v[1].comment, "trace-step", v,
					 sizeof(v)));
	assert_string_equal(v, "qc");
	assert_true(squeueq_comment_word("a,trace-run=R2;b", "trace-run", v,
					 sizeof(v)));
	assert_string_equal(v, "R2");
	assert_false(squeueq_comment_word("xtrace-run=R2 trace-run", "trace-run",
					  v, sizeof(v)));
	assert_true(squeueq_comment_word("trace-run=0123456789abcdefXYZ",
					 "trace-run", v, sizeof(v)));
	assert_string_equal(v, "0123456789abcde");	/* cut to fit */
	squeueq_free(&l);
	squeueq_free(&l);
}

/* A user sees their own runs only. */
static void test_user(void **state)
{
	struct fixture *f = *state;
	struct report_query q = { .uid_only = true, .uid = 1001 };
	struct topq t;

	assert_int_equal(topq_load(f->st, "test", &q, N, &t), 0);
	assert_int_equal(t.runs, 1);
	assert_non_null(find(&t, NULL, TOPQ_RUN, "r9"));
	assert_null(find(&t, NULL, TOPQ_RUN, "r2"));
	topq_free(&t);
	q.uid = 1000;
	assert_int_equal(topq_load(f->st, "test", &q, N, &t), 0);
	assert_int_equal(t.runs, 1);
	assert_non_null(find(&t, NULL, TOPQ_RUN, "r2"));
	topq_free(&t);
	/* the restriction stays on the connection: a new one for the rest */
	store_close(f->st);
	f->st = NULL;
	assert_int_equal(store_open(f->db, true, &f->st), 0);
}

/*
 * Expected times come from the pipeline's STOREQ_RECENT_RUNS latest runs
 * only (by their start): 30 old runs whose task a took 1000 s, then 20
 * whose a took 50 s, then the run shown, which has no process record yet,
 * so that the 21 latest are h29 (1000 s) and the 20 of 50 s.  Over every
 * run the median would be 1000 s of 50 instances; over the latest it is
 * 50 s of 21.
 */
static void test_recent_runs(void **state)
{
	struct fixture *f = *state;
	struct report_query q = { .run = "now" };
	char dir[64], db[96], run[16];
	const struct topq_line *l;
	struct store *s = NULL;
	struct topq t;

	(void)f;
	assert_int_equal(STOREQ_RECENT_RUNS, 21);
	snprintf(dir, sizeof(dir), "/tmp/jt_topq_h_XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(db, sizeof(db), "%s/jobtrace.db", dir);
	assert_int_equal(store_open(db, false, &s), 0);
	for (int k = 0; k < 50; k++) {
		double t0 = T0 + 50 * k, wall = k < 30 ? 1000 : 50;

		snprintf(run, sizeof(run), "h%02d", k);
		put_proc(s, run, "a", 1000 + k, t0, t0 + wall, 0, false, 1000);
	}
	/* another user's runs of a pipeline and task of the same names, the
	 * latest of all: they neither count nor push ana's out */
	job_user = "bob";
	for (int k = 0; k < 30; k++) {
		double t0 = T0 + 2500 + 10 * k;

		snprintf(run, sizeof(run), "b%02d", k);
		put_proc(s, run, "a", 2000 + k, t0, t0 + 5, 0, false, 1001);
	}
	job_user = "ana";
	put_sample(s, "now", "a", "tool", 7, 1, N - 30, N - 12, 1, MIB, 0,
		   1000);
	put_sample(s, "now", "a", "tool", 7, 1, N - 30, N - 2, 2, MIB, 0,
		   1000);
	assert_true(store_flush(s) > 0);
	assert_int_equal(topq_load(s, "test", &q, N, &t), 0);
	l = find(&t, "now", TOPQ_TASK, "a");
	assert_non_null(l);
	assert_int_equal(l->expected_n, 21);
	assert_float_equal(l->expected, 50, 1e-9);
	topq_free(&t);
	store_close(s);
	test_remove_store(db, dir);
}

/* A run that has ended: done, failed when a task failed; a selector. */
static void test_ended(void **state)
{
	struct fixture *f = *state;
	struct report_query q = { .run = "r1" };
	struct topq t;
	const struct topq_line *l;

	assert_int_equal(topq_load(f->st, "test", &q, N, &t), 0);
	assert_int_equal(t.runs, 1);
	assert_int_equal(t.running, 0);
	l = find(&t, NULL, TOPQ_RUN, "r1");
	assert_int_equal(l->state, TOPQ_DONE);
	assert_float_equal(l->elapsed, 90, 1e-3);
	/* its expected time is of the other runs: 8 (r2), 10, 30, 40 */
	assert_float_equal(find(&t, "r1", TOPQ_TASK, "a")->expected, 10, 1e-9);
	/* no waiting line in a run that ended */
	for (size_t i = 0; i < t.n; i++)
		assert_int_not_equal(t.v[i].state, TOPQ_WAITING);
	topq_free(&t);
}

/* A process with no record and no recent sample is lost, not running:
 * its run is not shown as running, its time ends at its last sample. */
static void test_lost(void **state)
{
	struct fixture *f = *state;
	struct report_query q = { .run = "r7" };
	struct topq t;
	const struct topq_line *l;

	assert_int_equal(topq_load(f->st, "test", &q, N, &t), 0);
	assert_int_equal(t.runs, 1);
	assert_int_equal(t.running, 0);
	assert_int_equal(find(&t, NULL, TOPQ_RUN, "r7")->state, TOPQ_LOST);
	assert_int_equal(find(&t, "r7", TOPQ_TASK, "z")->state, TOPQ_LOST);
	l = find(&t, "r7", TOPQ_PROC, "zcat");
	assert_non_null(l);
	assert_int_equal(l->state, TOPQ_LOST);
	assert_float_equal(l->elapsed, 110, 1e-3);
	topq_free(&t);
}

/* The first column of sql over json (?1) and path (?2) as text, or NULL. */
static char *jsql(const char *sql, const char *json, const char *path)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	char *v = NULL;

	assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	sqlite3_bind_text(st, 1, json, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, path, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
		v = strdup((const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	sqlite3_close(db);
	return v;
}

/* The value at path in json, or NULL (absent or a JSON null). */
static char *jget(const char *json, const char *path)
{
	return jsql("SELECT json_extract(?1, ?2)", json, path);
}

/* The JSON type at path in json ("null", "object", ...), NULL if absent. */
static char *jtype(const char *json, const char *path)
{
	return jsql("SELECT json_type(?1, ?2)", json, path);
}

/* --once and --format json print the same tree. */
static void test_frames(void **state)
{
	struct fixture *f = *state;
	struct report_query q = { .run = "r2" };
	char *buf = NULL, *v;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	assert_int_equal(topq_run_store(f->st, "test", &q, REPORT_JSON, N, m),
			 0);
	fclose(m);
	assert_true(json_valid(buf));
	if (getenv("TOPQ_PRINT"))
		fprintf(stderr, "%s\n", buf);
	v = jget(buf, "$.runs[0].name");
	assert_non_null(v);
	assert_string_equal(v, "r2");
	free(v);
	/* tasks by start: a, d, e, then b with bash and sleep */
	v = jget(buf, "$.runs[0].children[3].children[1].pid");
	assert_non_null(v);
	assert_string_equal(v, "101");
	free(v);
	v = jget(buf, "$.runs[0].children[3].children[1].cores");
	assert_non_null(v);
	assert_float_equal(atof(v), 0.5, 1e-6);
	free(v);
	v = jget(buf, "$.runs[0].children[3].children[1].progress.offset_bytes");
	assert_non_null(v);
	assert_string_equal(v, "20971520");
	free(v);
	/* bash reads no file: a null, not an absent member */
	v = jtype(buf, "$.runs[0].children[3].children[0].progress");
	assert_non_null(v);
	assert_string_equal(v, "null");
	free(v);
	v = jget(buf, "$.runs[0].children[3].state");
	assert_non_null(v);
	assert_string_equal(v, "stalled");
	free(v);
	free(buf);

	buf = NULL;
	m = open_memstream(&buf, &len);
	assert_int_equal(topq_run_store(f->st, "test", &q, REPORT_TEXT, N, m),
			 0);
	fclose(m);
	if (getenv("TOPQ_PRINT"))
		fputs(buf, stderr);
	assert_non_null(strstr(buf, "8s of ~14s"));
	assert_non_null(strstr(buf, "30s of ~20s"));
	assert_non_null(strstr(buf, "- of ~30s"));
	assert_non_null(strstr(buf, "101 sleep"));
	assert_non_null(strstr(buf, " PROG SIGNALS\n"));
	assert_non_null(strstr(buf, "  50% stall\n"));
	assert_non_null(strstr(buf, "oom-killed"));
	/* a process that ended has no figures now */
	assert_non_null(strstr(buf, "60 a                         8s        "
				"         -     - 10M             -     -     -"));
	free(buf);
}

/* The view reads the agent's JSON frame back: every line as it was;
 * text that is no frame is refused. */
static void test_roundtrip(void **state)
{
	struct fixture *f = *state;
	struct report_query q = { 0 };
	struct topq t, u;
	char *buf = NULL, a[512], b[512];
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	assert_int_equal(topq_load(f->st, "test", &q, N, &t), 0);
	assert_int_equal(topq_print_json(&t, &q, m), 0);
	fclose(m);
	assert_int_equal(topq_from_json(buf, len, &u), 0);
	assert_int_equal(u.n, t.n);
	assert_int_equal(u.runs, t.runs);
	assert_int_equal(u.running, t.running);
	assert_float_equal(u.now, t.now, 1e-5);
	for (size_t i = 0; i < t.n; i++) {
		topq_line_text(&t, i, 0, a, sizeof(a));
		topq_line_text(&u, i, 0, b, sizeof(b));
		assert_string_equal(a, b);
		assert_int_equal(u.v[i].parent, t.v[i].parent);
		assert_int_equal(u.v[i].depth, t.v[i].depth);
		assert_int_equal(u.v[i].kind, t.v[i].kind);
		assert_float_equal(u.v[i].start, t.v[i].start, 1e-5);
	}
	topq_free(&u);
	/* cut short, and deeper than a frame can be */
	assert_int_equal(topq_from_json(buf, len / 2, &u), -EINVAL);
	topq_free(&u);
	{
		static const char deep[] = "{\"runs\":[{\"children\":[{"
			"\"children\":[{\"children\":[{\"children\":[{}]}]}]}]}]}";

		assert_int_equal(topq_from_json(deep, strlen(deep), &u),
				 -EINVAL);
	}
	topq_free(&u);
	topq_free(&t);
	free(buf);
}

/* top's selector is optional, and only its own are taken. */
static void test_args(void **state)
{
	const struct qcmd *c = qcmd_find("top");
	struct qcmd_args a = { 0 };
	char why[256];

	(void)state;
	assert_non_null(c);
	assert_int_equal(qcmd_done(c, QCMD_CLI, &a, why, sizeof(why)), 0);
	assert_true(a.q.since > 0);
	assert_string_equal(a.format, "text");
	memset(&a, 0, sizeof(a));
	assert_int_equal(qcmd_arg(c, QCMD_CLI, "pid", "1", 0, &a, why,
				  sizeof(why)), -EINVAL);
	assert_int_equal(qcmd_arg(c, QCMD_CLI, "format", "html", 0, &a, why,
				  sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "--format 'html'"));
}

/* Whether a plan row of sql on db reads record through index (and none
 * scans record whole). */
static bool plan_uses(sqlite3 *db, const char *sql, const char *index)
{
	char eqp[4096];
	sqlite3_stmt *st = NULL;
	bool uses = false, scans = false;

	snprintf(eqp, sizeof(eqp), "EXPLAIN QUERY PLAN %s", sql);
	assert_int_equal(sqlite3_prepare_v2(db, eqp, -1, &st, NULL),
			 SQLITE_OK);
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *d = (const char *)sqlite3_column_text(st, 3);

		if (getenv("TOPQ_PRINT"))
			fprintf(stderr, "plan: %s\n", d);
		uses |= strstr(d, index) != NULL;
		scans |= !strncmp(d, "SCAN record", 11) ||
			 !strncmp(d, "SCAN main.record", 16);
	}
	sqlite3_finalize(st);
	return uses && !scans;
}

/* A frame reads a live process's samples and a job's signals through the
 * indexes on them, for root and for a user (the uid views), not by parsing
 * every sample of the run or of the job. */
static void test_plans(void **state)
{
	static const char *const sql[] = {
		TOPQ_SAMPLES_SQL,
		"SELECT s.id" STOREQ_LIVE_SAMPLES(STOREQ_SAMPLE_RUN_SEL),
		TOPQ_SIGNALS_SQL,
	};
	static const char *const index[] = { "record_sample_pid",
					     "sample_latest_run",
					     "record_signal_job" };
	struct fixture *f = *state;
	struct report_query q = { .run = "r2", .uid_only = true, .uid = 1000 };
	struct store *r = NULL;

	assert_int_equal(store_open(f->db, true, &r), 0);
	for (int user = 0; user < 2; user++) {
		if (user)
			assert_int_equal(storeq_restrict(r, "test", &q), 0);
		for (size_t i = 0; i < sizeof(sql) / sizeof(*sql); i++)
			assert_true(plan_uses(store_handle(r), sql[i],
					      index[i]));
	}
	store_close(r);
}

/* A store made before the indexes on samples gets them when a writer
 * opens it, and loses record_sample_run (sample_latest took its place). */
static void test_old_store(void **state)
{
	struct fixture *f = *state;
	char path[128];
	struct store *s = NULL;
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;

	(void)f;
	snprintf(path, sizeof(path), "%s/old.db", f->dir);
	assert_int_equal(store_open(path, false, &s), 0);
	store_close(s);
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "CREATE INDEX record_sample_run"
				      " ON record(time) WHERE type = 'sample';"
				      "DROP INDEX record_sample_pid;"
				      "DROP INDEX record_signal_job;"
				      "DROP INDEX record_job;", NULL, NULL,
				      NULL), SQLITE_OK);
	sqlite3_close(db);
	assert_int_equal(store_open(path, false, &s), 0);
	assert_int_equal(sqlite3_prepare_v2(store_handle(s), "SELECT count(*)"
					    " FROM sqlite_master WHERE type ="
					    " 'index' AND name IN"
					    " ('record_sample_pid',"
					    " 'record_signal_job', 'record_job')",
					    -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_int_equal(sqlite3_column_int(st, 0), 3);
	sqlite3_finalize(st);
	/* the index sample_latest replaced is dropped */
	assert_int_equal(sqlite3_prepare_v2(store_handle(s), "SELECT count(*)"
					    " FROM sqlite_master WHERE name ="
					    " 'record_sample_run'", -1, &st,
					    NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_int_equal(sqlite3_column_int(st, 0), 0);
	sqlite3_finalize(st);
	store_close(s);
	unlink(path);
	strcat(path, "-wal");
	unlink(path);
	strcpy(path + strlen(path) - 3, "shm");
	unlink(path);
}

/* "id@time id@time ..." of run's live processes' latest samples in the
 * store at path (opened read-only), in id order; "<time" after one whose
 * sample before is known (its id's time, checked against prev_time). */
static void live_rows(const char *path, const char *run, char *out,
		      size_t len)
{
	static const char sql[] = "SELECT s.id, s.time, CASE WHEN s.prev_id"
		" IS NOT NULL THEN printf('<%.0f', s.prev_time - ?2) ||"
		" CASE WHEN s.prev_id = 's-' || ?1 || '-' ||"
		" " STOREQ_SJ("$.pid") " || '-' || printf('%.0f', s.prev_time)"
		" THEN '' ELSE '(id?)' END ELSE '' END"
		STOREQ_LIVE_SAMPLES(STOREQ_SAMPLE_RUN_SEL) " ORDER BY s.id";
	struct store *r = NULL;
	sqlite3_stmt *st = NULL;
	size_t n = 0;

	out[0] = '\0';
	assert_int_equal(store_open(path, true, &r), 0);
	assert_int_equal(sqlite3_prepare_v2(store_handle(r), sql, -1, &st,
					    NULL), SQLITE_OK);
	sqlite3_bind_text(st, 1, run, -1, SQLITE_STATIC);
	sqlite3_bind_double(st, 2, N);
	while (sqlite3_step(st) == SQLITE_ROW)
		n += (size_t)snprintf(out + n, len - n, "%s@%.0f%s ",
				      sqlite3_column_text(st, 0),
				      sqlite3_column_double(st, 1) - N,
				      sqlite3_column_text(st, 2));
	sqlite3_finalize(st);
	store_close(r);
}

/* Run sql on the database at path, outside the store's code. */
static void raw_sql(const char *path, const char *sql)
{
	sqlite3 *db = NULL;

	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
}

/* The figures now of r2's sleep (pid 101) as top reads the store at
 * path, opened read-only: its CPU cores and read rate. */
static void sleep_now(const char *path, double *cores, double *read_bps)
{
	struct report_query q = { 0 };
	const struct topq_line *l;
	struct store *r = NULL;
	struct topq t;

	assert_int_equal(store_open(path, true, &r), 0);
	assert_int_equal(topq_load(r, "test", &q, N, &t), 0);
	l = find(&t, "r2", TOPQ_PROC, "sleep");
	assert_non_null(l);
	*cores = l->cores;
	*read_bps = l->read_bps;
	topq_free(&t);
	store_close(r);
}

/* The store keeps each process's latest sample (sample_latest) and the
 * one before it: a later sample replaces it (and becomes the one before),
 * an older one (late, replayed) does not, a known one changes nothing, a
 * deleted one goes; a store without it gets it filled from its samples
 * when a writer opens it (no sample before: the next brings it), and a
 * reader of such a store reads the same rows through a stand-in view; so
 * does a store whose table has no prev_id (as b0e69eb made it), which a
 * writer makes again.  top's figures are the same whether it finds the
 * sample before by its id or searches for it. */
static void test_latest(void **state)
{
	struct fixture *f = *state;
	char path[128], got[512], sql[256], want[256], later[256], gone[256];
	char bare[256];
	struct store *s = NULL;
	double a = N - 2, b = N - 1, cores, rbps;

	/* ids are s-RUN-PID-TIME; each shown with its time against N, then
	 * the time of the sample before it */
	snprintf(want, sizeof(want), "s-r2-100-%.0f@-2<-12 s-r2-101-%.0f@-2<-12"
		 " s-r2-90-%.0f@-2<-12 ", a, a, a);
	snprintf(bare, sizeof(bare), "s-r2-100-%.0f@-2 s-r2-101-%.0f@-2"
		 " s-r2-90-%.0f@-2 ", a, a, a);
	snprintf(later, sizeof(later), "s-r2-100-%.0f@-2 s-r2-101-%.0f@-1<-2"
		 " s-r2-90-%.0f@-2 ", a, b, a);
	snprintf(gone, sizeof(gone), "s-r2-100-%.0f@-2 s-r2-101-%.0f@-1<-2 ",
		 a, b);

	live_rows(f->db, "r2", got, sizeof(got));
	assert_string_equal(got, want);
	sleep_now(f->db, &cores, &rbps);
	assert_float_equal(cores, 0.5, 1e-6);
	assert_float_equal(rbps, (double)MIB, 1e-3);
	snprintf(path, sizeof(path), "%s/latest.db", f->dir);
	snprintf(sql, sizeof(sql), "VACUUM INTO '%s'", path);
	raw_sql(f->db, sql);
	/* older (t = N - 50) and known (N - 2) samples of 101: no change */
	assert_int_equal(store_open(path, false, &s), 0);
	put_sample(s, "r2", "b", "sleep", 101, 100, N - 25, N - 50, 1,
		   50 * MIB, 0, 1000);
	put_sample(s, "r2", "b", "sleep", 101, 100, N - 25, N - 2, 1,
		   50 * MIB, 0, 1000);
	store_close(s);
	live_rows(path, "r2", got, sizeof(got));
	assert_string_equal(got, want);
	/* a store without it: a reader's stand-in (the same figures, the
	 * two latest samples searched for), then a writer fills it */
	raw_sql(path, "DROP TRIGGER sample_latest_put;"
		"DROP TRIGGER sample_latest_drop; DROP TABLE sample_latest;");
	live_rows(path, "r2", got, sizeof(got));
	assert_string_equal(got, bare);
	sleep_now(path, &cores, &rbps);
	assert_float_equal(cores, 0.5, 1e-6);
	assert_float_equal(rbps, (double)MIB, 1e-3);
	/* b0e69eb's table, without prev_id: read through the stand-in */
	raw_sql(path, "CREATE TABLE sample_latest(host TEXT NOT NULL,"
		" pid INTEGER NOT NULL, start TEXT NOT NULL, run TEXT,"
		" job_id TEXT, id TEXT NOT NULL, time REAL,"
		" PRIMARY KEY(host, pid, start)) WITHOUT ROWID;");
	live_rows(path, "r2", got, sizeof(got));
	assert_string_equal(got, bare);
	assert_int_equal(store_open(path, false, &s), 0);
	store_close(s);
	live_rows(path, "r2", got, sizeof(got));
	assert_string_equal(got, bare);
	assert_int_equal(store_open(path, false, &s), 0);
	/* a later sample of 101 replaces its latest */
	put_sample(s, "r2", "b", "sleep", 101, 100, N - 25, N - 1, 1,
		   50 * MIB, 0, 1000);
	store_close(s);
	live_rows(path, "r2", got, sizeof(got));
	assert_string_equal(got, later);
	/* a deleted latest sample takes its process's row with it */
	snprintf(sql, sizeof(sql), "DELETE FROM record WHERE id ="
		 " 's-r2-90-%.0f'", a);
	raw_sql(path, sql);
	live_rows(path, "r2", got, sizeof(got));
	assert_string_equal(got, gone);
	unlink(path);
	strcat(path, "-wal");
	unlink(path);
	strcpy(path + strlen(path) - 3, "shm");
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tree),
		cmocka_unit_test(test_nodes),
		cmocka_unit_test(test_squeue),
		cmocka_unit_test(test_user),
		cmocka_unit_test(test_recent_runs),
		cmocka_unit_test(test_ended),
		cmocka_unit_test(test_lost),
		cmocka_unit_test(test_frames),
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_args),
		cmocka_unit_test(test_plans),
		cmocka_unit_test(test_old_store),
		cmocka_unit_test(test_latest),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
