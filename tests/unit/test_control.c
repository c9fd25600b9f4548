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

	/* ended jobs expire */
	ji->end_ns = 1;
	ji->touched_ns = 0;
	jobs_expire(j, 10, 5);
	assert_null(jobs_get(j, "awsbatch", "abc", false));
	assert_non_null(jobs_get(j, "slurm", "42", false));
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
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
