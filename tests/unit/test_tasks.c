// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_tasks.c - the one definition of a task's processes, instances and
 * memory peak (tasks.h), on process trees written here:
 *  - Snakemake's cluster mode: the submitting sbatch, with the rule's task
 *    and no job, is no instance; the job (job script, its engine, the
 *    rule's command; Slurm's extern sleep in a step of its own) is the
 *    instance, its memory the job's peak;
 *  - a job that ran its one task twice at once: two instances, one core
 *    each, their own memory, no request;
 *  - a job script run in a shared job: the engine's python out of the
 *    memory sum, in the CPU;
 *  - a Snakemake `run:` block: the engine alone, its memory counted;
 *  - hostile links: a loop, a parent out of range, a parent that is the
 *    process itself.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tasks.h"

#define MIB (1ULL << 20)
#define N(a) (sizeof(a) / sizeof((a)[0]))

/* A process: parent, job, step, task, category, times, CPU and RSS. */
static struct tasks_proc mk(long parent, const char *job, const char *step,
			    const char *task, const char *cat, double t0,
			    double t1, double cpu, uint64_t rss)
{
	return (struct tasks_proc){ .parent = parent, .host = "n1",
		.job = job, .step = step, .task = task, .category = cat,
		.start = t0, .end = t1, .cpu = cpu, .rss = rss };
}

/* Cluster mode: sbatch is no instance; the job is one, its peak. */
static void test_cluster_job(void **state)
{
	struct tasks_proc p[] = {
		/* 0: snakemake on the login node, no task */
		mk(-1, NULL, NULL, NULL, "workflow-engine", 0, 100, 5, 70 * MIB),
		/* 1: the sh -c that runs sbatch, 2: sbatch with the task */
		mk(0, NULL, NULL, NULL, "shell", 1, 1.2, 0.01, 2 * MIB),
		mk(1, NULL, NULL, "big", "scheduler-helper", 1.1, 1.2, 0.3,
		   5 * MIB),
		/* job 7: slurm_script (no task), engine, bash -c, the tool */
		mk(-1, "7", "batch", NULL, "script", 2, 12, 0.01, 1 * MIB),
		mk(3, "7", "batch", "big", "workflow-engine", 2, 12, 0.7,
		   70 * MIB),
		mk(4, "7", "batch", "big", "shell", 3, 11, 0.01, 3 * MIB),
		mk(5, "7", "batch", "big", NULL, 3, 11, 7.5, 300 * MIB),
		/* the extern step's sleep, given the task by the job's name */
		mk(-1, "7", "extern", "big", "system-utility", 2, 12, 0,
		   1 * MIB),
	};
	struct tasks t;

	(void)state;
	for (size_t i = 3; i < N(p); i++) {
		p[i].job_cpus = 2;
		p[i].job_mem = 1000 * MIB;
		p[i].job_peak = 340 * MIB;
	}
	assert_false(tasks_member("big", "scheduler-helper"));
	assert_false(tasks_member(NULL, NULL));
	assert_false(tasks_member("", NULL));
	assert_true(tasks_member("big", "workflow-engine"));
	assert_int_equal(tasks_build(p, N(p), &t), 0);
	assert_int_equal(t.n, 1);
	assert_int_equal(t.of[2], -1);		/* sbatch */
	assert_int_equal(t.of[0], -1);
	assert_int_equal(t.of[3], -1);
	for (size_t i = 4; i < N(p); i++)
		assert_int_equal(t.of[i], 0);
	assert_string_equal(t.inst[0].task, "big");
	assert_true(t.inst[0].own_job && t.inst[0].mem_job);
	assert_int_equal(t.inst[0].mem, 340 * MIB);
	assert_int_equal(t.inst[0].req_cpus, 2);
	assert_int_equal(t.inst[0].req_mem, 1000 * MIB);
	assert_int_equal(t.inst[0].procs, 4);
	assert_true(t.inst[0].start == 2 && t.inst[0].end == 12);
	assert_true(t.inst[0].cpu > 8.209 && t.inst[0].cpu < 8.211);
	tasks_free(&t);

	/* without the job's end record: the processes' sum, engine out */
	for (size_t i = 3; i < N(p); i++)
		p[i].job_peak = 0;
	assert_int_equal(tasks_build(p, N(p), &t), 0);
	assert_true(t.inst[0].own_job && !t.inst[0].mem_job);
	assert_int_equal(t.inst[0].mem, 304 * MIB);
	tasks_free(&t);
}

/*
 * A job whose one task ran twice at once (snakemake --cores 2 inside one
 * job): two instances of one core each, no request, their own memory.
 */
static void test_shared_job(void **state)
{
	struct tasks_proc p[] = {
		mk(-1, "9", "batch", NULL, "workflow-engine", 0, 30, 1, 70 * MIB),
		mk(0, "9", "batch", "merge", "shell", 1, 11, 0.01, 3 * MIB),
		mk(1, "9", "batch", "merge", NULL, 1, 11, 10, 100 * MIB),
		mk(0, "9", "batch", "merge", "shell", 1, 11, 0.01, 3 * MIB),
		mk(3, "9", "batch", "merge", NULL, 1, 11, 10, 100 * MIB),
	};
	struct tasks t;

	(void)state;
	for (size_t i = 0; i < N(p); i++) {
		p[i].job_cpus = 2;
		p[i].job_peak = 250 * MIB;
	}
	assert_int_equal(tasks_build(p, N(p), &t), 0);
	assert_int_equal(t.n, 2);
	for (size_t k = 0; k < 2; k++) {
		assert_false(t.inst[k].own_job || t.inst[k].mem_job);
		assert_int_equal(t.inst[k].req_cpus, 0);
		assert_int_equal(t.inst[k].mem, 103 * MIB);
		assert_int_equal(t.inst[k].procs, 2);
		assert_true(tasks_cores(&t.inst[k]) <= 1.001 &&
			    tasks_cores(&t.inst[k]) >= 0.999);
	}
	assert_int_equal(t.inst[0].top, 1);
	assert_int_equal(t.inst[1].top, 3);
	assert_int_equal(t.of[2], 0);
	assert_int_equal(t.of[4], 1);
	tasks_free(&t);
}

/*
 * A job script in a shared job (--cluster-sync under one jobtrace run):
 * the engine's python is in the instance's CPU, not in its memory; a
 * `run:` block's engine alone is its memory.
 */
static void test_engine(void **state)
{
	struct tasks_proc p[] = {
		/* two tasks in job 5: no instance has it as its own */
		mk(-1, "5", NULL, "big", "script", 0, 10, 0.01, 3 * MIB),
		mk(0, "5", NULL, "big", "workflow-engine", 0, 10, 0.8, 72 * MIB),
		mk(1, "5", NULL, "big", "shell", 2, 9, 0.01, 3 * MIB),
		mk(2, "5", NULL, "big", NULL, 2, 9, 1.0, 300 * MIB),
		/* a run: block: python -m snakemake --target-jobs other */
		mk(-1, "5", NULL, "other", "workflow-engine", 20, 22, 1.5,
		   90 * MIB),
	};
	struct tasks t;

	(void)state;
	assert_int_equal(tasks_build(p, N(p), &t), 0);
	assert_int_equal(t.n, 2);
	assert_string_equal(t.inst[0].task, "big");
	assert_false(t.inst[0].own_job);
	assert_int_equal(t.inst[0].mem, 306 * MIB);	/* 3 + 3 + 300 */
	assert_true(t.inst[0].cpu > 1.819 && t.inst[0].cpu < 1.821);
	assert_string_equal(t.inst[1].task, "other");
	assert_int_equal(t.inst[1].mem, 90 * MIB);
	tasks_free(&t);
}

/* Hostile links: a loop, out of range, itself; nothing is lost. */
static void test_links(void **state)
{
	struct tasks_proc p[] = {
		mk(2, NULL, NULL, "a", NULL, 0, 1, 0, 1),
		mk(0, NULL, NULL, "a", NULL, 0, 1, 0, 1),
		mk(1, NULL, NULL, "a", NULL, 0, 1, 0, 1),
		mk(99, NULL, NULL, "a", NULL, 5, 6, 0, 1),
		mk(4, NULL, NULL, "a", NULL, 7, 8, 0, 1),
		mk(-7, NULL, NULL, "a", NULL, 9, 10, 0, 1),
	};
	struct tasks t;
	size_t procs = 0;

	(void)state;
	assert_int_equal(tasks_build(p, N(p), &t), 0);
	assert_int_equal(t.n, 4);	/* the loop is one */
	for (size_t k = 0; k < t.n; k++)
		procs += t.inst[k].procs;
	assert_int_equal(procs, N(p));
	assert_int_equal(t.of[0], t.of[1]);
	assert_int_equal(t.of[1], t.of[2]);
	tasks_free(&t);
	assert_int_equal(tasks_build(p, 0, &t), 0);
	assert_int_equal(t.n, 0);
	tasks_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cluster_job),
		cmocka_unit_test(test_shared_job),
		cmocka_unit_test(test_engine),
		cmocka_unit_test(test_links),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
