// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_control.c - cmocka tests of the control protocol parser (hostile
 * input), the request line buffer, the connection bounds, the job registry
 * and the scontrol output parser.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "control.h"
#include "jobs.h"
#include "jobstate.h"
#include "slurmq.h"

/* Parse a copy of text; returns the result and keeps why. */
static int parse(const char *text, struct control_req *r, const char **why,
		 char *buf, size_t len)
{
	snprintf(buf, len, "%s", text);
	return control_parse(buf, r, why);
}

/* Well-formed requests split into a command and fields. */
static void test_parse_ok(void **state)
{
	struct control_req r;
	const char *why;
	char buf[1024];

	assert_int_equal(parse("status", &r, &why, buf, sizeof(buf)), 0);
	assert_string_equal(r.cmd, "status");
	assert_int_equal(r.n, 0);
	assert_int_equal(parse("job-start\tjob=42\tuser=alice\taccount=phys ics\trun=",
			       &r, &why, buf, sizeof(buf)), 0);
	assert_string_equal(r.cmd, "job-start");
	assert_int_equal(r.n, 4);
	assert_string_equal(control_get(&r, "job"), "42");
	assert_string_equal(control_get(&r, "account"), "phys ics");
	assert_string_equal(control_get(&r, "run"), "");
	assert_null(control_get(&r, "pipeline"));
	/* a value may contain '=' */
	assert_int_equal(parse("job-update\tjob=1\trun=a=b", &r, &why, buf,
			       sizeof(buf)), 0);
	assert_string_equal(control_get(&r, "run"), "a=b");
}

/* Hostile or malformed requests are refused with a reason, never crash. */
static void test_parse_hostile(void **state)
{
	static const char *const bad[] = {
		"", "\t", "STATUS", "job start", "job-start\tjob", "job-start\t=1",
		"job-start\tJOB=1", "job-start\tjob=1\tjob=2",
		"job-start\tjob=\x01", "job-start\tjob=a\x7f",
		"job-start\tk3y=1", "job-start\tjob=1\tuser=\x1b[2J",
		"../../etc\tjob=1",
	};
	struct control_req r;
	const char *why;
	char buf[4096];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why = NULL;
		if (parse(bad[i], &r, &why, buf, sizeof(buf)) != -EINVAL)
			fail_msg("accepted: '%s'", bad[i]);
		assert_non_null(why);
	}
	/* too many fields */
	{
		char line[4096] = "job-start";

		for (int i = 0; i < CONTROL_MAX_FIELDS + 1; i++)
			snprintf(line + strlen(line), sizeof(line) - strlen(line),
				 "\tk%c=%d", 'a' + i % 26, i);
		assert_int_equal(parse(line, &r, &why, buf, sizeof(buf)), -EINVAL);
	}
	/* an over-long value */
	{
		char line[2048];

		snprintf(line, sizeof(line), "job-start\tjob=%0*d",
			 CONTROL_MAX_VALUE + 1, 0);
		assert_int_equal(parse(line, &r, &why, buf, sizeof(buf)), -EINVAL);
		assert_string_equal(why, "field value too long");
	}
	/* random bytes never crash the parser */
	srand(7);
	for (int i = 0; i < 20000; i++) {
		size_t n = (size_t)rand() % 200;

		for (size_t k = 0; k < n; k++)
			buf[k] = (char)(rand() % 255 + 1);
		buf[n] = '\0';
		(void)control_parse(buf, &r, &why);
	}
}

/* Append text to a line buffer as recv() would. */
static void feed(struct control_line *l, const char *text)
{
	size_t n = strlen(text);

	memcpy(l->buf + l->len, text, n);
	l->len += n;
}

/* A line completes at its newline, however it arrives; CR is dropped. */
static void test_line(void **state)
{
	struct control_line l = { .len = 0 };

	feed(&l, "sta");
	assert_int_equal(control_line_take(&l, false), 0);
	feed(&l, "tus\r");
	assert_int_equal(control_line_take(&l, false), 0);
	feed(&l, "\nignored");
	assert_int_equal(control_line_take(&l, false), 1);
	assert_string_equal(l.buf, "status");

	/* the peer shut its side down without a newline: the line counts */
	l.len = 0;
	feed(&l, "ps");
	assert_int_equal(control_line_take(&l, true), 1);
	assert_string_equal(l.buf, "ps");
	/* nothing at all */
	l.len = 0;
	assert_int_equal(control_line_take(&l, true), -ENODATA);
	/* a full buffer without a newline is refused, not cut */
	l.len = 0;
	memset(l.buf, 'a', sizeof(l.buf) - 1);
	l.len = sizeof(l.buf) - 1;
	assert_int_equal(control_line_take(&l, false), -EMSGSIZE);
	/* a newline in the last byte that fits still makes a line */
	l.buf[sizeof(l.buf) - 2] = '\n';
	assert_int_equal(control_line_take(&l, false), 1);
	assert_int_equal(strlen(l.buf), sizeof(l.buf) - 2);
}

/* The peer's groups: primary and supplementary. */
static void test_peer_in(void **state)
{
	struct control_peer p = { .uid = 1000, .gid = 100, .ngroups = 2,
				  .groups = { 27, 4242 } };

	(void)state;
	assert_true(control_peer_in(&p, 100));
	assert_true(control_peer_in(&p, 4242));
	assert_false(control_peer_in(&p, 0));
	assert_false(control_peer_in(&p, 1000));
}

/* Fill slot i of a table with a connection of uid. */
static void put(struct control_conn *t, size_t i, uid_t uid, bool priv,
		uint64_t since)
{
	t[i].fd = 100 + (int)i;
	t[i].peer.uid = uid;
	t[i].privileged = priv;
	t[i].since_ns = since;
}

/* Bounds per uid and in total; privileged peers always get a slot. */
static void test_admit(void **state)
{
	const struct control_limits lim = { .per_user = 2, .total = 4 };
	struct control_conn t[4 + 2];
	size_t cap = 6, slot = 99;

	for (size_t i = 0; i < cap; i++)
		t[i].fd = -1;
	assert_int_equal(control_admit(t, cap, &lim, 1000, false, &slot),
			 CONTROL_ADMIT);
	assert_int_equal(slot, 0);
	put(t, 0, 1000, false, 10);
	put(t, 1, 1000, false, 5);
	/* alice has 2: her third is refused, bob's first is not */
	assert_int_equal(control_admit(t, cap, &lim, 1000, false, &slot),
			 CONTROL_FULL_USER);
	assert_int_equal(control_admit(t, cap, &lim, 1001, false, &slot),
			 CONTROL_ADMIT);
	assert_int_equal(slot, 2);
	put(t, 2, 1001, false, 20);
	put(t, 3, 1002, false, 30);
	/* 4 unprivileged open: the total is reached for every other user */
	assert_int_equal(control_admit(t, cap, &lim, 1003, false, &slot),
			 CONTROL_FULL);
	/* root takes the reserve, then evicts the oldest unprivileged */
	assert_int_equal(control_admit(t, cap, &lim, 0, true, &slot),
			 CONTROL_ADMIT);
	assert_int_equal(slot, 4);
	put(t, 4, 0, true, 1);
	put(t, 5, 0, true, 2);
	assert_int_equal(control_admit(t, cap, &lim, 0, true, &slot),
			 CONTROL_EVICT);
	assert_int_equal(slot, 1);
	/* privileged connections only: the oldest of them goes */
	for (size_t i = 0; i < 4; i++)
		put(t, i, 0, true, 50 + i);
	assert_int_equal(control_admit(t, cap, &lim, 0, true, &slot),
			 CONTROL_EVICT);
	assert_int_equal(slot, 4);
	assert_int_equal(control_admit(t, cap, &lim, 1000, false, &slot),
			 CONTROL_FULL);
}

/* Count the jobs fn is called on. */
static void count_job(struct jt_jobinfo *ji, void *arg)
{
	(void)ji;
	(*(size_t *)arg)++;
}

/* The registry fills empty job fields; cost center defaults to account. */
static void test_jobs_fill(void **state)
{
	struct jobs *j;
	struct jt_jobinfo *ji;
	struct jt_job pj = { 0 };

	assert_int_equal(jobs_new(&j), 0);
	ji = jobs_get(j, "slurm", "42", true);
	assert_non_null(ji);
	strcpy(ji->job.user, "alice");
	strcpy(ji->job.account, "physics");
	strcpy(ji->job.run, "RUN42");
	assert_ptr_equal(jobs_get(j, "slurm", "42", false), ji);
	assert_null(jobs_get(j, "awsbatch", "42", false));

	strcpy(pj.scheduler, "slurm");
	strcpy(pj.id, "42");
	strcpy(pj.step, "batch");
	strcpy(pj.run, "from-rules");
	assert_ptr_equal(jobs_fill(j, &pj, NULL), jobs_get(j, "slurm", "42", false));
	assert_string_equal(pj.user, "alice");
	assert_string_equal(pj.account, "physics");
	assert_string_equal(pj.cost_center, "physics");
	assert_string_equal(pj.run, "from-rules");	/* not overwritten */
	assert_string_equal(pj.step, "batch");

	/* by cgroup, for schedulers without Slurm's layout */
	ji = jobs_get(j, "awsbatch", "abc", true);
	strcpy(ji->cgroup, "/ecs/1234");
	strcpy(ji->job.cost_center, "genomics");
	memset(&pj, 0, sizeof(pj));
	assert_ptr_equal(jobs_fill(j, &pj, "/ecs/1234/5678"), ji);
	assert_string_equal(pj.id, "abc");
	assert_string_equal(pj.cost_center, "genomics");
	memset(&pj, 0, sizeof(pj));
	assert_null(jobs_fill(j, &pj, "/ecs/12345"));	/* not a prefix path */

	/* ended jobs expire, but for one whose end record still waits */
	ji->end_ns = 1;
	ji->touched_ns = 0;
	ji->end_pending = true;
	jobs_expire(j, 10, 5);
	assert_non_null(jobs_get(j, "awsbatch", "abc", false));
	ji->end_pending = false;
	jobs_expire(j, 10, 5);
	assert_null(jobs_get(j, "awsbatch", "abc", false));
	assert_non_null(jobs_get(j, "slurm", "42", false));
	jobs_free(j);
}

/* An array task is found by its raw JobId too, and its processes take
 * the id Slurm shows (4_1). */
static void test_jobs_raw_id(void **state)
{
	struct jobs *j;
	struct jt_jobinfo *ji;
	struct jt_job pj = { 0 };
	size_t n = 0;

	(void)state;
	assert_int_equal(jobs_new(&j), 0);
	ji = jobs_get(j, "slurm", "9", true);
	strcpy(ji->raw_id, "9");
	strcpy(ji->job.id, "4_1");
	assert_ptr_equal(jobs_get(j, "slurm", "9", false), ji);
	assert_ptr_equal(jobs_get(j, "slurm", "4_1", false), ji);
	assert_null(jobs_get(j, "slurm", "4", false));
	assert_null(jobs_get(j, "local", "9", false));
	/* an empty raw id matches nothing */
	assert_null(jobs_get(j, "slurm", "", false));
	strcpy(pj.scheduler, "slurm");
	strcpy(pj.id, "9");	/* from the cgroup job_9 */
	assert_ptr_equal(jobs_fill(j, &pj, NULL), ji);
	assert_string_equal(pj.id, "4_1");
	/* a job whose record waits is walked, the others not */
	ji->start_pending = true;
	jobs_get(j, "slurm", "10", true);
	jobs_foreach_pending(j, count_job, &n);
	assert_int_equal(n, 1);
	jobs_free(j);
}

/* A real `scontrol show job -o` line from Slurm 22.05. */
static void test_scontrol_parse(void **state)
{
	static const char line[] =
		"JobId=7 JobName=align UserId=jtuser(1001) GroupId=jtuser(1001) "
		"MCS_label=N/A Priority=4294901757 Nice=0 Account=(null) QOS=(null) "
		"JobState=RUNNING Reason=None Dependency=(null) Requeue=1 Restarts=0 "
		"BatchFlag=1 Reboot=0 ExitCode=0:0 RunTime=00:00:01 TimeLimit=UNLIMITED "
		"Partition=debug AllocNode:Sid=vm:1234 NodeList=vm BatchHost=vm "
		"NumNodes=1 NumCPUs=2 NumTasks=1 CPUs/Task=1 ReqB:S:C:T=0:0:*:* "
		"TRES=cpu=2,mem=2000M,node=1,billing=2,gres/gpu=1 MinMemoryCPU=1000M "
		"Command=/tmp/job.sh WorkDir=/tmp\n";
	struct jt_jobinfo ji = { 0 };

	strcpy(ji.job.id, "7");
	assert_true(slurmq_parse(line, &ji) > 0);
	assert_string_equal(ji.name, "align");
	assert_string_equal(ji.job.user, "jtuser");
	assert_int_equal(ji.uid, 1001);
	assert_string_equal(ji.job.account, "");	/* "(null)" is no account */
	assert_string_equal(ji.partition, "debug");
	assert_int_equal(ji.cpus, 2);
	assert_true(ji.mem_bytes == 2000ull << 20);
	assert_int_equal(ji.gpus, 1);
	assert_int_equal(ji.time_limit_s, 0);	/* UNLIMITED: none known */
	/* a limit: Slurm's [D-]HH:MM:SS in seconds */
	{
		char other[sizeof(line) + 8];
		const char *tl = strstr(line, "TimeLimit=UNLIMITED");

		snprintf(other, sizeof(other), "%.*sTimeLimit=1-00:02:03%s",
			 (int)(tl - line), line, tl + 19);
		assert_non_null(strstr(other, "TimeLimit=1-00:02:03 Partition"));
		assert_true(slurmq_parse(other, &ji) > 0);
		assert_int_equal(ji.time_limit_s, 86400 + 123);
	}
	/* another job's line is not ours */
	memset(&ji, 0, sizeof(ji));
	strcpy(ji.job.id, "8");
	assert_int_equal(slurmq_parse(line, &ji), -EINVAL);
	/* garbage */
	memset(&ji, 0, sizeof(ji));
	strcpy(ji.job.id, "7");
	assert_int_equal(slurmq_parse("slurm_load_jobs error: Invalid job id specified\n", &ji),
			 -EINVAL);
	assert_int_equal(slurmq_parse("", &ji), -EINVAL);
}

/*
 * The state slurmctld says once the epilogs ran (COMPLETING until then),
 * and an array's tasks, one line each, as 22.05 prints them for the
 * array's job id (here the task 5_3 is JobId 5, 5_1 is JobId 9).
 */
static void test_scontrol_state_array(void **state)
{
	static const char array[] =
		"JobId=5 ArrayJobId=5 ArrayTaskId=3 JobName=wrap UserId=root(0) "
		"Account=root JobState=COMPLETING Reason=TimeLimit "
		"ExitCode=0:15 TimeLimit=00:01:00 NumCPUs=1 "
		"TRES=cpu=1,mem=1000M,node=1,billing=1\n"
		"JobId=10 ArrayJobId=5 ArrayTaskId=2 JobName=wrap UserId=root(0) "
		"Account=root JobState=COMPLETED Reason=None ExitCode=0:0 "
		"NumCPUs=2 TRES=cpu=2,mem=2000M,node=1\n"
		"JobId=9 ArrayJobId=5 ArrayTaskId=1 JobName=wrap UserId=root(0) "
		"Account=proja JobState=CANCELLED Reason=None ExitCode=0:15 "
		"NumCPUs=4 TRES=cpu=4,mem=4000M,node=1\n";
	static const char het[] =
		"JobId=12 HetJobId=11 HetJobOffset=1 JobName=h JobState=RUNNING "
		"Reason=None\n";
	struct jt_jobinfo ji = { 0 };

	(void)state;
	/* the final states, and not COMPLETING */
	assert_true(jobstate_final("TIMEOUT", 7));
	assert_true(jobstate_final("OUT_OF_MEMORY", 13));
	assert_false(jobstate_final("COMPLETING", 10));
	assert_false(jobstate_final("RUNNING", 7));
	assert_true(jobstate_final("COMPLETEDX", 9));	/* the first 9 */
	assert_false(jobstate_final("COMPLETEDX", 10));
	assert_string_equal(jobstate_of_reason("TimeLimit"), "TIMEOUT");
	assert_string_equal(jobstate_of_reason("OutOfMemory"), "OUT_OF_MEMORY");
	assert_null(jobstate_of_reason("None"));
	assert_null(jobstate_of_reason(NULL));
	assert_string_equal(jobstate_of_exit(0, 0, false, false), "COMPLETED");
	assert_string_equal(jobstate_of_exit(3, 0, false, false), "FAILED");
	assert_string_equal(jobstate_of_exit(0, 9, false, false), "FAILED");
	assert_string_equal(jobstate_of_exit(0, 125, false, false), "OUT_OF_MEMORY");
	assert_string_equal(jobstate_of_exit(0, 0, true, false), "OUT_OF_MEMORY");
	assert_string_equal(jobstate_of_exit(0, 15, false, true), "CANCELLED");

	/* task 3 while its epilog runs: no state yet, its reason */
	strcpy(ji.job.id, "5");
	assert_true(slurmq_parse(array, &ji) > 0);
	assert_string_equal(ji.job.id, "5_3");
	assert_string_equal(ji.raw_id, "5");
	assert_true(ji.batch.has_array);
	assert_int_equal(ji.batch.array_index, 3);
	assert_string_equal(ji.state, "");
	assert_string_equal(ji.reason, "TimeLimit");
	assert_int_equal(ji.cpus, 1);
	assert_int_equal(ji.time_limit_s, 60);
	/* asked again (by its raw id): nothing more, no second rename */
	assert_int_equal(slurmq_parse(array, &ji), 0);
	assert_string_equal(ji.job.id, "5_3");

	/* task 1: its own line, not the others' fields */
	memset(&ji, 0, sizeof(ji));
	strcpy(ji.job.id, "9");
	assert_true(slurmq_parse(array, &ji) > 0);
	assert_string_equal(ji.job.id, "5_1");
	assert_string_equal(ji.raw_id, "9");
	assert_int_equal(ji.batch.array_index, 1);
	assert_string_equal(ji.state, "CANCELLED");
	assert_string_equal(ji.job.account, "proja");
	assert_int_equal(ji.cpus, 4);
	assert_true(ji.mem_bytes == 4000ull << 20);

	/* JobId=1 is not JobId=10's prefix */
	memset(&ji, 0, sizeof(ji));
	strcpy(ji.job.id, "1");
	assert_int_equal(slurmq_parse(array, &ji), -EINVAL);

	/* a heterogeneous job's component: H+O */
	memset(&ji, 0, sizeof(ji));
	strcpy(ji.job.id, "12");
	assert_true(slurmq_parse(het, &ji) > 0);
	assert_string_equal(ji.job.id, "11+1");
	assert_string_equal(ji.raw_id, "12");
	assert_false(ji.batch.has_array);
	assert_string_equal(ji.state, "");	/* RUNNING is no end */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_ok),
		cmocka_unit_test(test_parse_hostile),
		cmocka_unit_test(test_line),
		cmocka_unit_test(test_peer_in),
		cmocka_unit_test(test_admit),
		cmocka_unit_test(test_jobs_fill),
		cmocka_unit_test(test_scontrol_parse),
		cmocka_unit_test(test_scontrol_state_array),
		cmocka_unit_test(test_jobs_raw_id),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
