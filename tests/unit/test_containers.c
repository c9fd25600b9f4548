// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_containers.c - cmocka tests of agent/daemon/cloud/containers.c: when the AWS
 * Batch job of a container starts and ends.  The processes are made here
 * and handed to containers_enter()/containers_leave() as the tracker
 * would; Docker's answers and the cgroup probe are the test's.  Runs
 * without root.
 *
 * The job ends when the container ends (Docker says exited or dead, or
 * no longer knows it; or, when Docker cannot say, its cgroup stays empty
 * for the grace period), never when the count of its processes first
 * touches zero: runc's bootstrap, moved into the container's cgroup before
 * the command runs, and the gap between a create and its start, come
 * first.
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

#include "containers.h"
#include "jobs.h"
#include "json_check.h"
#include "json_get.h"
#include "log.h"
#include "proc_table.h"
#include "record.h"
#include "tracker.h"
#include "util.h"

#define CT1 "fefacee79f4b6082f1a1193c2ee3a1aa63a1938f5b460cf578894aab7e382405"
#define CT2 "2e5a9c7dbcbdf9b9a897f837cf5133edafcbb677456722ac8dd4d2eafb6e0f81"
#define TASK "822569a6b61861acc4645171f41dfe0c"
#define BJOB "4c5e4f0a-1f2b-4f7e-9a43-0d2c1b6f3e21"
#define CG1 "/ecs/" TASK "/" CT1
#define CG2 "/ecs/" TASK "/" CT2
#define SEC 1000000000ull
#define GRACE (10 * SEC)
#define MAX_RECS 32

struct fx {
	struct jobs *jobs;
	struct jt_host host;
	struct tracker *t;
	struct containers *cs;
	char *rec[MAX_RECS];	/* every record written, in order */
	size_t nrec;
	char asked[16][80];	/* the look-ups asked for, in order */
	size_t nasked;
	int populated;		/* what the cgroup probe answers */
	char probed[512];	/* the cgroup it was last asked about */
};

/* Keep a copy of each record; each must be one valid JSON text. */
static void on_record(void *ctx, struct jbuf *b)
{
	struct fx *f = ctx;

	json_keep(f->rec, &f->nrec, MAX_RECS, jbuf_str(b));
}

/* The look-up queue: remember what is asked. */
static int fake_ask(void *ctx, const char *id)
{
	struct fx *f = ctx;

	assert_true(f->nasked < 16);
	snprintf(f->asked[f->nasked++], sizeof(f->asked[0]), "%s", id);
	return 0;
}

/* The cgroup probe: what the test set, and what it was asked. */
static int fake_populated(void *ctx, const char *cgroup)
{
	struct fx *f = ctx;

	snprintf(f->probed, sizeof(f->probed), "%s", cgroup);
	return f->populated;
}

/* A job's record: the tracker writes it, as the agent's does. */
static void job_record(void *ctx, const struct jt_jobinfo *ji,
		       const char *phase)
{
	struct fx *f = ctx;

	tracker_job_record(f->t, ji, phase);
}

/* A tracker (default rules) with a table of at most max containers. */
static struct fx *fixture(size_t max)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct containers_ops ops = { .ask = fake_ask,
				      .populated = fake_populated,
				      .job_record = job_record,
				      .end_grace_ns = GRACE };
	struct tracker_containers ct;

	assert_non_null(f);
	assert_int_equal(jobs_new(&f->jobs), 0);
	snprintf(f->host.name, sizeof(f->host.name), "node1");
	snprintf(f->host.boot_id, sizeof(f->host.boot_id),
		 "5f0c7e8a-3c1d-4b9e-9f2a-0123456789ab");
	assert_int_equal(tracker_new(NULL, f->jobs, &f->host,
				     &(struct tracker_cb){
					     .record = on_record,
					     .ctx = f }, &f->t), 0);
	ops.ctx = f;
	ops.jobs = f->jobs;
	ops.procs = tracker_procs(f->t);
	ops.host = &f->host;
	assert_int_equal(containers_new(max, &ops, &f->cs), 0);
	ct = containers_tracker(f->cs);
	tracker_set_containers(f->t, &ct);
	f->populated = 1;
	return f;
}

/* Set up a table of 8. */
static int setup(void **state)
{
	*state = fixture(8);
	return 0;
}

/* Free it all. */
static int teardown(void **state)
{
	struct fx *f = *state;

	containers_free(f->cs);
	tracker_free(f->t);
	jobs_free(f->jobs);
	for (size_t i = 0; i < f->nrec; i++)
		free(f->rec[i]);
	free(f);
	return 0;
}

/* Process (pid, start s) is now one of the container's in cgroup cg. */
static struct jt_proc *enter(struct fx *f, uint32_t pid, uint64_t start,
			     const char *cg)
{
	int created;
	struct jt_proc *p = proc_table_get(tracker_procs(f->t), pid,
					   start * SEC, &created);

	assert_non_null(p);
	assert_true(created);
	proc_set_str(&p->cgroup, cg, strlen(cg));
	snprintf(p->container, sizeof(p->container), "ecs://%s",
		 strrchr(cg, '/') + 1);
	containers_enter(f->cs, p);
	return p;
}

/* Process p exits with status code at end s. */
static void leave(struct fx *f, struct jt_proc *p, uint64_t end, int code)
{
	p->end_ns = end * SEC;
	p->state |= JT_PS_EXITED;
	p->exit_code = code;
	containers_leave(f->cs, p);
	proc_table_remove(tracker_procs(f->t), p);
}

/* Docker's answer about id: a look-up that failed (state), or one that
 * read the container (job: its AWS_BATCH_JOB_ID or NULL, its status and
 * exit code, pid its first process). */
static void answer(struct fx *f, const char *id, enum docker_state state,
		   const char *job, enum docker_status status, int code,
		   uint32_t pid)
{
	static struct dockerq_result r;	/* large */

	memset(&r, 0, sizeof(r));
	snprintf(r.id, sizeof(r.id), "%s", id);
	r.state = state;
	if (job)
		snprintf(r.info.env[DOCKER_ENV_JOB_ID],
			 sizeof(r.info.env[0]), "%s", job);
	r.info.status = status;
	r.info.exit_code = code;
	r.info.pid = pid;
	r.info.nano_cpus = 2 * SEC;
	containers_answer(f->cs, &r);
}

/* Process pid of the container in CG1 started at start s, Docker said
 * it runs job (NULL: none), and it exited a second later: the count of
 * the container's processes is zero. */
static void ran(struct fx *f, uint32_t pid, uint64_t start, const char *job)
{
	struct jt_proc *p = enter(f, pid, start, CG1);

	answer(f, CT1, DOCKER_OK, job, DOCKER_STATUS_RUNNING, 0, pid);
	leave(f, p, start + 1, 0);
}

/* How many job records of a phase were written. */
static size_t jobs_of(const struct fx *f, const char *phase)
{
	char q[32];
	size_t n = 0;

	snprintf(q, sizeof(q), "\"%s\"", phase);
	for (size_t i = 0; i < f->nrec; i++)
		if (!strcmp(jraw(f->rec[i], "type"), "\"job\"") &&
		    !strcmp(jraw(f->rec[i], "phase"), q))
			n++;
	return n;
}

/* The only job end record. */
static const char *end_rec(const struct fx *f)
{
	assert_int_equal(jobs_of(f, "end"), 1);
	for (size_t i = 0; i < f->nrec; i++)
		if (!strcmp(jraw(f->rec[i], "type"), "\"job\"") &&
		    !strcmp(jraw(f->rec[i], "phase"), "\"end\""))
			return f->rec[i];
	return NULL;
}

/* The table's counters. */
static struct containers_stats stats(const struct fx *f)
{
	struct containers_stats st;

	containers_stats(f->cs, &st);
	return st;
}

/* Now on the clock containers.c schedules by, plus s seconds. */
static uint64_t mono(double s)
{
	return util_now_ns(CLOCK_MONOTONIC) + (uint64_t)(s * 1e9);
}

/*
 * The count of the container's processes touches zero before it ends (as
 * with runc's bootstrap when it was counted: a first short process, then
 * the command).  Docker says "created", then "running": one job goes on
 * through the gap; it ends once, when Docker says the container exited,
 * with Docker's exit code and the last exit's time.
 */
static void test_bootstrap_then_command(void **state)
{
	struct fx *f = *state;
	struct jt_proc *first, *sh, *child;
	const char *r;

	first = enter(f, 100, 1000, CG1);
	assert_int_equal(f->nasked, 1);
	answer(f, CT1, DOCKER_OK, BJOB, DOCKER_STATUS_CREATED, 0, 101);
	assert_int_equal(jobs_of(f, "start"), 1);

	leave(f, first, 1001, 1);
	assert_int_equal(jobs_of(f, "end"), 0);	/* not its end */
	assert_int_equal(f->nasked, 2);		/* has it ended? */
	answer(f, CT1, DOCKER_OK, BJOB, DOCKER_STATUS_CREATED, 0, 101);
	assert_int_equal(jobs_of(f, "end"), 0);
	assert_int_equal(stats(f).ending, 1);
	/* asked again when due, not before */
	containers_tick(f->cs, mono(0));
	assert_int_equal(f->nasked, 2);
	containers_tick(f->cs, mono(1));
	assert_int_equal(f->nasked, 3);

	sh = enter(f, 101, 1002, CG1);
	assert_int_equal(stats(f).ending, 0);
	answer(f, CT1, DOCKER_OK, BJOB, DOCKER_STATUS_RUNNING, 0, 101);
	child = enter(f, 102, 1003, CG1);
	leave(f, child, 1004, 0);
	assert_int_equal(f->nasked, 3);		/* sh goes on */
	leave(f, sh, 1005, 3);
	assert_int_equal(f->nasked, 4);
	/* Docker has not seen the exit yet */
	answer(f, CT1, DOCKER_OK, BJOB, DOCKER_STATUS_RUNNING, 0, 101);
	assert_int_equal(jobs_of(f, "end"), 0);
	containers_tick(f->cs, mono(1));
	assert_int_equal(f->nasked, 5);
	answer(f, CT1, DOCKER_OK, BJOB, DOCKER_STATUS_EXITED, 3, 101);

	assert_int_equal(jobs_of(f, "start"), 1);
	r = end_rec(f);
	assert_jstr(r, "job.id", BJOB);
	assert_jraw(r, "exit_code", "3");
	assert_jstr(r, "start_time", "1970-01-01T00:16:40.000000Z");
	assert_jstr(r, "end_time", "1970-01-01T00:16:45.000000Z");
	assert_int_equal(stats(f).entries, 0);
}

/* Docker no longer knows the container (removed): it has ended. */
static void test_removed_ends(void **state)
{
	struct fx *f = *state;

	ran(f, 110, 1100, BJOB);
	assert_int_equal(jobs_of(f, "end"), 0);
	answer(f, CT1, DOCKER_NOT_FOUND, NULL, DOCKER_STATUS_NONE, 0, 0);
	assert_int_equal(jobs_of(f, "start"), 1);
	/* the exit code is its first process's */
	assert_jraw(end_rec(f), "exit_code", "0");
	assert_int_equal(stats(f).entries, 0);
}

/* A tick at when; a look-up it asks is answered: Docker is absent. */
static void tick_absent(struct fx *f, uint64_t when)
{
	size_t n = f->nasked;

	containers_tick(f->cs, when);
	if (f->nasked > n)
		answer(f, CT1, DOCKER_ABSENT, NULL, DOCKER_STATUS_NONE, 0, 0);
}

/*
 * Docker cannot say (absent, timing out): the container's own cgroup,
 * not its ECS task's, decides.  While it holds a process the job goes on
 * however long; empty or gone for the grace period, it has ended.
 */
static void test_cgroup_when_docker_cannot_say(void **state)
{
	struct fx *f = *state;
	uint64_t t0 = mono(0);

	ran(f, 120, 1200, BJOB);
	answer(f, CT1, DOCKER_ABSENT, NULL, DOCKER_STATUS_NONE, 0, 0);
	assert_int_equal(stats(f).ending, 1);

	f->populated = 1;
	tick_absent(f, t0);
	tick_absent(f, t0 + 3 * GRACE);
	assert_string_equal(f->probed, CG1);
	assert_int_equal(jobs_of(f, "end"), 0);

	f->populated = 0;
	tick_absent(f, t0 + 4 * GRACE);
	tick_absent(f, t0 + 5 * GRACE - 1);
	assert_int_equal(jobs_of(f, "end"), 0);
	/* a process in it again starts the count afresh */
	f->populated = 1;
	tick_absent(f, t0 + 5 * GRACE);
	f->populated = 0;
	tick_absent(f, t0 + 6 * GRACE);
	tick_absent(f, t0 + 7 * GRACE - 1);
	assert_int_equal(jobs_of(f, "end"), 0);
	tick_absent(f, t0 + 7 * GRACE);
	assert_int_equal(jobs_of(f, "end"), 1);
	assert_int_equal(stats(f).entries, 0);
	/* and Docker was asked again meanwhile */
	assert_true(f->nasked >= 3);
}

/* The containers of one ECS task with one job id are one job: it ends
 * with the last of them. */
static void test_task_ends_with_last_container(void **state)
{
	struct fx *f = *state;
	struct jt_proc *a = enter(f, 130, 1300, CG1);
	struct jt_proc *b = enter(f, 131, 1301, CG2);

	answer(f, CT1, DOCKER_OK, BJOB, DOCKER_STATUS_RUNNING, 0, 130);
	answer(f, CT2, DOCKER_OK, BJOB, DOCKER_STATUS_RUNNING, 0, 131);
	assert_int_equal(jobs_of(f, "start"), 1);
	leave(f, a, 1302, 0);
	answer(f, CT1, DOCKER_OK, BJOB, DOCKER_STATUS_EXITED, 0, 130);
	assert_int_equal(jobs_of(f, "end"), 0);
	leave(f, b, 1303, 2);
	answer(f, CT2, DOCKER_OK, BJOB, DOCKER_STATUS_EXITED, 2, 131);
	assert_jraw(end_rec(f), "exit_code", "2");
	assert_jstr(end_rec(f), "end_time", "1970-01-01T00:21:43.000000Z");
}

/* The container is gone before Docker's first answer: that answer says
 * whether it ended (start and end at once) or not yet. */
static void test_first_answer_after_exit(void **state)
{
	struct fx *f = *state;
	struct jt_proc *p = enter(f, 140, 1400, CG1);

	leave(f, p, 1401, 0);
	assert_int_equal(stats(f).entries, 1);	/* the answer awaited */
	answer(f, CT1, DOCKER_OK, BJOB, DOCKER_STATUS_RUNNING, 0, 140);
	assert_int_equal(jobs_of(f, "start"), 1);
	assert_int_equal(jobs_of(f, "end"), 0);
	containers_tick(f->cs, mono(1));
	assert_int_equal(f->nasked, 2);
	answer(f, CT1, DOCKER_OK, BJOB, DOCKER_STATUS_DEAD, 0, 140);
	assert_int_equal(jobs_of(f, "end"), 1);

	p = enter(f, 141, 1410, CG2);
	leave(f, p, 1411, 0);
	answer(f, CT2, DOCKER_OK, "other-job", DOCKER_STATUS_EXITED, 5, 141);
	assert_int_equal(jobs_of(f, "start"), 2);
	assert_int_equal(jobs_of(f, "end"), 2);
	assert_int_equal(stats(f).entries, 0);
}

/* A container that runs no job is forgotten with its last process, and
 * not asked about again. */
static void test_no_job_forgotten(void **state)
{
	struct fx *f = *state;

	ran(f, 150, 1500, NULL);
	assert_int_equal(stats(f).entries, 0);
	containers_tick(f->cs, mono(60));
	assert_int_equal(f->nasked, 1);
	assert_int_equal(f->nrec, 0);
}

/* A full table makes room with a container whose end is awaited: its
 * job ends then rather than never. */
static void test_full_table_ends_the_waiting(void **state)
{
	struct fx *f = fixture(1);
	struct jt_proc *p;

	*state = f;
	ran(f, 160, 1600, BJOB);
	answer(f, CT1, DOCKER_OK, BJOB, DOCKER_STATUS_RUNNING, 0, 160);
	assert_int_equal(jobs_of(f, "end"), 0);
	p = enter(f, 161, 1610, CG2);
	assert_int_equal(jobs_of(f, "end"), 1);
	assert_string_equal(f->asked[f->nasked - 1], CT2);
	assert_int_equal(stats(f).entries, 1);
	assert_int_equal(stats(f).full, 0);
	leave(f, p, 1611, 0);
}

/* The real probe reads cgroup.procs: the root cgroup holds processes, a
 * cgroup that does not exist is gone. */
static void test_real_probe(void **state)
{
	(void)state;
	if (access("/sys/fs/cgroup/unified/cgroup.procs", R_OK) &&
	    access("/sys/fs/cgroup/cgroup.procs", R_OK) &&
	    access("/sys/fs/cgroup/memory/cgroup.procs", R_OK))
		skip();
	assert_int_equal(containers_cgroup_populated(NULL, ""), 1);
	assert_int_equal(containers_cgroup_populated(NULL,
				"/jobtrace-test-no-such-cgroup"), 0);
}

/* Run every test, each with a fresh table. */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_bootstrap_then_command,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_removed_ends, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_cgroup_when_docker_cannot_say, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_task_ends_with_last_container, setup, teardown),
		cmocka_unit_test_setup_teardown(test_first_answer_after_exit,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_job_forgotten, setup,
						teardown),
		cmocka_unit_test_teardown(test_full_table_ends_the_waiting,
					  teardown),
		cmocka_unit_test(test_real_probe),
	};

	log_init("test_containers", 0, LOG_LVL_ERROR);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
