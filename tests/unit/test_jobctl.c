// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_jobctl.c - cmocka tests of agent/daemon/jobctl.c without root: the
 * job-start, job-end and job-update requests as the control socket parses
 * them, against a real tracker and job registry; every job record written
 * is checked to be valid JSON and to carry what the request said.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config.h"
#include "control.h"
#include "jobctl.h"
#include "jobs.h"
#include "json_check.h"
#include "json_get.h"
#include "record.h"
#include "tracker.h"

#define MAX_RECS 32

struct fx {
	struct jt_config cfg;
	struct jobs *jobs;
	struct jt_host host;
	struct tracker *t;
	struct jobctl *jc;
	char *rec[MAX_RECS];	/* every record written, in order */
	size_t nrec;
	unsigned drains, settles, settle_ms, ended, flushes;
	char reply[4096];
};

/* Keep a copy of each record; each must be one valid JSON text. */
static void on_record(void *ctx, struct jbuf *b)
{
	struct fx *f = ctx;

	json_keep(f->rec, &f->nrec, MAX_RECS, jbuf_str(b));
}

/* The agent's side of job control, counted. */
static void op_drain(void *ctx)
{
	((struct fx *)ctx)->drains++;
}

/* Settle: counted, with the time asked for. */
static void op_settle(void *ctx, unsigned ms)
{
	struct fx *f = ctx;

	f->settles++;
	f->settle_ms = ms;
}

/* A job's end record is written: it is the last record, and the job has
 * its end time. */
static void op_ended(void *ctx, struct jt_jobinfo *ji)
{
	struct fx *f = ctx;

	f->ended++;
	assert_true(ji->end_ns > 0);
	assert_true(f->nrec > 0);
	assert_jstr(f->rec[f->nrec - 1], "phase", "end");
}

/* Flush: counted. */
static void op_flush(void *ctx)
{
	((struct fx *)ctx)->flushes++;
}

/* A tracker, a registry and job control over them, as the agent has. */
static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	if (!f || config_defaults(&f->cfg) || jobs_new(&f->jobs))
		return -1;
	snprintf(f->host.name, sizeof(f->host.name), "node1");
	snprintf(f->host.boot_id, sizeof(f->host.boot_id),
		 "5f0c7e8a-3c1d-4b9e-9f2a-0123456789ab");
	if (tracker_new(NULL, f->jobs, &f->host,
			&(struct tracker_cb){ .record = on_record, .ctx = f },
			&f->t))
		return -1;
	if (jobctl_new(f->jobs, f->t, &f->cfg, -1,
		       &(struct jobctl_ops){ .drain = op_drain,
					     .settle = op_settle,
					     .ended = op_ended,
					     .flush = op_flush, .ctx = f },
		       &f->jc))
		return -1;
	*state = f;
	return 0;
}

/* Free it all. */
static int teardown(void **state)
{
	struct fx *f = *state;

	jobctl_free(f->jc);
	tracker_free(f->t);
	jobs_free(f->jobs);
	config_free(&f->cfg);
	for (size_t i = 0; i < f->nrec; i++)
		free(f->rec[i]);
	free(f);
	return 0;
}

/* Send one request line ("cmd\tkey=value..."), as a peer of uid
 * (privileged or not); returns the reply. */
static const char *ask(struct fx *f, bool privileged, uid_t uid,
		       const char *line)
{
	struct control_peer peer = { .uid = uid, .gid = uid, .pid = 4242 };
	struct control_req r;
	char buf[1024];
	const char *why;
	FILE *out;

	snprintf(buf, sizeof(buf), "%s", line);
	assert_int_equal(control_parse(buf, &r, &why), 0);
	out = fmemopen(f->reply, sizeof(f->reply), "w");
	assert_non_null(out);
	jobctl_request(f->jc, &r, privileged, &peer, out);
	fclose(out);
	return f->reply;
}

/* Fields a job request may not have, or with values out of their range,
 * are refused by name, and nothing is registered or written. */
static void test_fields_checked(void **state)
{
	struct fx *f = *state;
	static const struct {
		const char *line, *reply;
	} cases[] = {
		{ "job-start\tjob=1\tcolour=red", "error unknown field 'colour'\n" },
		{ "job-start\tuser=alice", "error job-start needs job=ID (at most 63 bytes)\n" },
		{ "job-start\tjob=", "error job-start needs job=ID (at most 63 bytes)\n" },
		{ "job-start\tjob=1\tcpus=4x", "error field cpus: '4x' is not a number up to 1048576\n" },
		{ "job-start\tjob=1\tuid=-1", "error field uid: '-1' is not a number up to 4294967294\n" },
		{ "job-end\tjob=1\texit_code=256", "error field exit_code: '256' is not a number up to 255\n" },
		{ "job-end\tjob=1\tstate=RUNNING", "error field state: 'RUNNING' is not how a job ends (COMPLETED, FAILED, CANCELLED, TIMEOUT, OUT_OF_MEMORY, NODE_FAIL, PREEMPTED, BOOT_FAIL, DEADLINE)\n" },
		{ "job-start\tjob=1\tstate=FAILED", "error fields signal and state are for job-end only\n" },
		{ "job-update\tjob=1\tsignal=9", "error fields signal and state are for job-end only\n" },
		{ "job-end\tjob=1\tpid=5", "error --pid: a process id from 1, for job-start only\n" },
		{ "job-start\tjob=1\tpid=0", "error --pid: a process id from 1, for job-start only\n" },
	};
	size_t running;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_string_equal(ask(f, true, 0, cases[i].line),
				    cases[i].reply);
	assert_int_equal(jobs_count(f->jobs, &running), 0);
	assert_int_equal(f->nrec, 0);
	assert_int_equal(f->drains + f->settles + f->ended + f->flushes, 0);
}

/* A job's start and end as root's hook says them: one start and one end
 * record with the request's fields; the end settles the kernel's exits
 * and flushes; a second end writes nothing (its cost would count twice). */
static void test_start_end(void **state)
{
	struct fx *f = *state;
	const char *r;

	assert_string_equal(ask(f, true, 0, "job-start\tjob=7\tscheduler=local"
				"\tuser=alice\taccount=lab\trun=r1\tcpus=4"
				"\tmem_mb=2048"),
			    "ok\njob: local:7 registered\n");
	assert_int_equal(f->nrec, 1);
	r = f->rec[0];
	assert_jstr(r, "type", "job");
	assert_jstr(r, "phase", "start");
	assert_jstr(r, "job.id", "7");
	assert_jstr(r, "job.scheduler", "local");
	assert_jstr(r, "job.user", "alice");
	assert_jstr(r, "job.account", "lab");
	assert_jstr(r, "job.run", "r1");
	assert_int_equal(f->settles + f->ended + f->flushes, 0);

	assert_string_equal(ask(f, true, 0, "job-update\tjob=7\tscheduler=local"
				"\tpipeline=p9"), "ok\njob: local:7 updated\n");
	assert_int_equal(f->nrec, 1);	/* an update writes nothing */

	assert_string_equal(ask(f, true, 0, "job-end\tjob=7\tscheduler=local"
				"\texit_code=3"), "ok\njob: local:7 closed\n");
	assert_int_equal(f->nrec, 2);
	r = f->rec[1];
	assert_jstr(r, "phase", "end");
	assert_jstr(r, "job.id", "7");
	assert_jstr(r, "job.pipeline", "p9");
	assert_jraw(r, "exit_code", "3");
	assert_jstr(r, "state", "FAILED");
	assert_jraw(r, "allocation.cpus", "4");
	assert_jraw(r, "allocation.mem_bytes", "2147483648");
	assert_int_equal(f->settles, 1);
	assert_int_equal(f->settle_ms, 200);
	assert_int_equal(f->ended, 1);
	assert_int_equal(f->flushes, 1);

	assert_string_equal(ask(f, true, 0, "job-end\tjob=7\tscheduler=local"
				"\texit_code=0"),
			    "ok\njob: local:7 already closed\n");
	assert_int_equal(f->nrec, 2);
	assert_int_equal(f->ended, 1);

	/* the id again once its job ended: a new job, nothing of the old */
	assert_string_equal(ask(f, true, 0, "job-start\tjob=7\tscheduler=local"),
			    "ok\njob: local:7 registered\n");
	assert_int_equal(f->nrec, 3);
	assert_jstr(f->rec[2], "phase", "start");
	assert_jraw(f->rec[2], "job.account", "null");
	assert_jraw(f->rec[2], "job.pipeline", "null");
}

/* A Slurm job whose hook passed what slurmctld would say starts at once;
 * its end with a state from the hook ends at once, with that state. */
static void test_slurm_complete(void **state)
{
	struct fx *f = *state;
	struct jt_jobinfo *ji;

	assert_string_equal(ask(f, true, 0, "job-start\tjob=4242\tscheduler=slurm"
				"\taccount=lab\tname=align\tcpus=8"
				"\ttime_limit=3600\tuid=1000"),
			    "ok\njob: slurm:4242 registered\n");
	assert_int_equal(f->nrec, 1);
	assert_jstr(f->rec[0], "phase", "start");
	ji = jobs_get(f->jobs, "slurm", "4242", false);
	assert_non_null(ji);
	assert_false(ji->start_pending);
	assert_int_equal(ji->uid, 1000);
	assert_int_equal(ji->cpus, 8);
	assert_int_equal(ji->time_limit_s, 3600);
	assert_string_equal(ask(f, true, 0, "job-end\tjob=4242\tscheduler=slurm"
				"\tstate=TIMEOUT\tsignal=15"),
			    "ok\njob: slurm:4242 closed\n");
	assert_int_equal(f->nrec, 2);
	assert_jstr(f->rec[1], "phase", "end");
	assert_false(ji->end_pending);
	assert_string_equal(ji->state, "TIMEOUT");
	assert_int_equal(ji->exit_signal, 15);
	assert_int_equal(f->ended, 1);
}

/*
 * A user without control rights: a job only by tying their own process
 * (--pid), their own uid only, never a Slurm job; a job of their own
 * namespace (as `jobtrace run` made it) they may end, another user's they
 * may not: theirs is another job of the same name.
 */
static void test_user_job(void **state)
{
	struct fx *f = *state;
	struct jt_jobinfo *ji;
	size_t running;

	assert_string_equal(ask(f, false, 1000, "job-start\tjob=5\tuid=0"),
			    "error permission denied: job-start needs root"
			    " (--uid must be your own)\n");
	assert_string_equal(ask(f, false, 1000, "job-start\tjob=5"),
			    "error permission denied: job-start needs root (a"
			    " user may only tie processes of their own with"
			    " --pid or jobtrace run)\n");
	assert_non_null(strstr(ask(f, false, 1000, "job-start\tjob=9"
				   "\tscheduler=slurm\tpid=1"), "error "));
	assert_int_equal(jobs_count(f->jobs, &running), 0);
	assert_int_equal(f->nrec, 0);
	assert_int_equal(f->drains, 0);	/* refused before the pid is looked up */

	ji = jobs_get(f->jobs, "local", "user:1000:5", true);
	assert_non_null(ji);
	ji->by_user = ji->uid_known = true;
	ji->uid = 1000;
	ji->start_ns = 1;
	ask(f, false, 1001, "job-end\tjob=user:1000:5");
	assert_int_equal(ji->end_ns, 0);
	assert_string_equal(ask(f, false, 1000, "job-end\tjob=5\tuser=root"),
			    "ok\njob: local:user:1000:5 closed\n");
	assert_true(ji->end_ns > 0);
	assert_int_equal(f->nrec, 1);
	assert_jstr(f->rec[0], "job.id", "user:1000:5");
	assert_jraw(f->rec[0], "uid", "1000");
	/* the user name is the asker's, whatever the request said */
	assert_string_not_equal(ji->job.user, "root");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_fields_checked, setup, teardown),
		cmocka_unit_test_setup_teardown(test_start_end, setup, teardown),
		cmocka_unit_test_setup_teardown(test_slurm_complete, setup, teardown),
		cmocka_unit_test_setup_teardown(test_user_job, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
