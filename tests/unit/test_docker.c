// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_docker.c - cmocka tests of agent/daemon/cloud/docker.c: the allowlist reader of
 * Docker's container answer and the AWS Batch job it names.  Besides the
 * values it must keep, every test checks that no byte of a value it must
 * skip (the canaries) reaches what is kept or an error message.
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

#include <cmocka.h>

#include "docker.h"
#include "json.h"
#include "test_files.h"

#define JOBID "4c5e4f0a-1f2b-4f7e-9a43-0d2c1b6f3e21"
#define ARN "arn:aws:ecs:us-east-1:123456789012:task/batch/" \
	    "0123456789abcdef0123456789abcdef"

/* Whether the n bytes at s occur in the kept values or err. */
static bool leaked(const struct docker_info *d, const char *err,
		   const char *s)
{
	size_t n = strlen(s);

	if (err && strstr(err, s))
		return true;
	return memmem(d, sizeof(*d), s, n) != NULL;
}

/* Parse json (a C string), which must be accepted. */
static void parse_ok(const char *json, struct docker_info *d)
{
	char err[256] = "";
	int rc = docker_parse_inspect(json, strlen(json), d, err, sizeof(err));

	if (rc)
		fail_msg("refused (%d, %s): %.300s", rc, err, json);
}

/* Parse json, which must be refused with rc and an error naming want. */
static void parse_bad(const char *json, int rc, const char *want,
		      struct docker_info *d, char *err, size_t errlen)
{
	int got;

	memset(err, 0, errlen);
	got = docker_parse_inspect(json, strlen(json), d, err, errlen);
	if (got != rc || !strstr(err, want))
		fail_msg("%.200s: got %d '%s', want %d '%s'", json, got, err,
			 rc, want);
	/* nothing of a refused answer is kept */
	for (size_t i = 0; i < sizeof(*d); i++)
		assert_int_equal(((unsigned char *)d)[i], 0);
}

/* The file tests/fuzz/corpus/docker/NAME, read whole (malloc'd). */
static char *read_corpus(const char *name, size_t *len)
{
	return test_read_src("tests/fuzz/corpus/docker", name, len);
}

/* A real answer of dockerd 20.10 (docker run -e ... --label ... --cpus
 * 1.5 --memory 256m), with a canary holding a quote and a backslash. */
static void test_real_answer(void **state)
{
	struct docker_info d;
	char err[256] = "";
	size_t len;
	char *json = read_corpus("real-inspect.json", &len);
	struct jt_jobinfo ji;

	(void)state;
	assert_int_equal(docker_parse_inspect(json, len, &d, err, sizeof(err)),
			 0);
	assert_string_equal(d.env[DOCKER_ENV_JOB_ID], JOBID);
	assert_string_equal(d.env[DOCKER_ENV_JOB_ATTEMPT], "2");
	assert_string_equal(d.env[DOCKER_ENV_ARRAY_INDEX], "");
	assert_string_equal(d.label[DOCKER_LABEL_TASK_ARN], ARN);
	assert_int_equal(d.pid, 18247);
	assert_int_equal(d.status, DOCKER_STATUS_RUNNING);
	assert_false(docker_ended(&d));
	assert_int_equal(d.nano_cpus, 1500000000ull);
	assert_int_equal(d.memory, 256ull << 20);
	assert_int_equal(d.cpu_quota, 0);
	assert_false(leaked(&d, err, "canaryX"));
	assert_int_equal(docker_cpus(&d), 2);

	memset(&ji, 0, sizeof(ji));
	assert_true(docker_batch_job(&d, &ji));
	assert_string_equal(ji.job.scheduler, "aws-batch");
	assert_string_equal(ji.job.id, JOBID);
	assert_int_equal(ji.batch.attempt, 2);
	assert_false(ji.batch.has_array);
	assert_string_equal(ji.batch.ecs_task_arn, ARN);
	assert_int_equal(ji.cpus, 2);
	assert_int_equal(ji.mem_bytes, 256ull << 20);
	free(json);
}

/* Every allowlisted name, an array child, JOBTRACE_* for the workflow;
 * values with escapes decoded; the others skipped. */
static void test_allowlist(void **state)
{
	static const char json[] =
		"{\"Config\":{\"Env\":["
		"\"PATH=/usr/bin\","
		"\"AWS_BATCH_JOB_ID=" JOBID "\","
		"\"AWS_BATCH_JOB_ATTEMPT=3\","
		"\"AWS_BATCH_JOB_ARRAY_INDEX=7\","
		"\"AWS_BATCH_JQ_NAME=q\\\"uo\\\\te\\u00e9\","
		"\"AWS_BATCH_CE_NAME=ce-spot\","
		"\"AWS_BATCH_JOB_NODE_INDEX=1\","
		"\"AWS_BATCH_JOB_NUM_NODES=4\","
		"\"AWS_BATCH_JOB_MAIN_NODE_INDEX=0\","
		"\"JOBTRACE_RUN_ID=run-42\","
		"\"JOBTRACE_PIPELINE=rnaseq\","
		"\"JOBTRACE_STEP=align\","
		"\"JOBTRACE_COST_CENTER=cc-9\","
		"\"AWS_BATCH_JOB_ID_X=canaryA\","
		"\"AWS_BATCH_SECRET=canaryB\","
		"\"JOBTRACE_TOKEN=canaryC\","
		"\"aws_batch_job_id=canaryD\","
		"\"AWS_BATCH_JOB_I=canaryE\","
		"\"SECRET=has \\\"quotes\\\" and \\\\ and \\u0000 canaryF\","
		"\"NOVALUE\","
		"\"=canaryG\""
		"],\"Labels\":{"
		"\"com.amazonaws.ecs.task-arn\":\"" ARN "\","
		"\"com.amazonaws.ecs.container-name\":\"default\","
		"\"com.amazonaws.ecs.cluster\":\"batch\","
		"\"com.amazonaws.ecs.task-definition-family\":\"jd\","
		"\"com.amazonaws.ecs.task-definition-version\":\"12\","
		"\"com.amazonaws.ecs.task-arn-x\":\"canaryH\","
		"\"secret\":{\"deep\":[\"canaryI\"]}"
		"}},\"State\":{\"Pid\":4242},"
		"\"HostConfig\":{\"NanoCpus\":0,\"CpuQuota\":250000,"
		"\"CpuPeriod\":100000,\"Memory\":1073741824}}";
	static const char *const canaries[] = { "canaryA", "canaryB", "canaryC",
						"canaryD", "canaryE", "canaryF",
						"canaryG", "canaryH", "canaryI" };
	struct docker_info d;
	struct jt_jobinfo ji;

	(void)state;
	parse_ok(json, &d);
	assert_string_equal(d.env[DOCKER_ENV_JQ_NAME], "q\"uo\\te\xc3\xa9");
	assert_string_equal(d.env[DOCKER_ENV_NUM_NODES], "4");
	assert_string_equal(d.env[DOCKER_ENV_MAIN_NODE_INDEX], "0");
	assert_string_equal(d.label[DOCKER_LABEL_CONTAINER_NAME], "default");
	assert_string_equal(d.label[DOCKER_LABEL_CLUSTER], "batch");
	assert_string_equal(d.label[DOCKER_LABEL_TASK_FAMILY], "jd");
	assert_string_equal(d.label[DOCKER_LABEL_TASK_VERSION], "12");
	assert_int_equal(d.pid, 4242);
	for (size_t i = 0; i < sizeof(canaries) / sizeof(canaries[0]); i++)
		if (leaked(&d, NULL, canaries[i]))
			fail_msg("%s was kept", canaries[i]);
	/* CpuQuota / CpuPeriod = 2.5: 3 CPUs */
	assert_int_equal(docker_cpus(&d), 3);

	memset(&ji, 0, sizeof(ji));
	assert_true(docker_batch_job(&d, &ji));
	assert_string_equal(ji.job.id, JOBID ":7#1");
	assert_string_equal(ji.job.run, "run-42");
	assert_string_equal(ji.job.pipeline, "rnaseq");
	assert_string_equal(ji.job.task, "align");
	assert_string_equal(ji.job.cost_center, "cc-9");
	assert_int_equal(ji.batch.attempt, 3);
	assert_true(ji.batch.has_array);
	assert_int_equal(ji.batch.array_index, 7);
	assert_true(ji.batch.has_node);
	assert_int_equal(ji.batch.node_index, 1);
	assert_string_equal(ji.batch.compute_env, "ce-spot");
	assert_int_equal(ji.cpus, 3);
	assert_int_equal(ji.mem_bytes, 1ull << 30);
}

/* Names written with escapes are the same names; an escaped '=' in a
 * name is not ours (skipped, never half-read). */
static void test_escaped_names(void **state)
{
	struct docker_info d;

	(void)state;
	parse_ok("{\"Config\":{\"Env\":[\"AWS\\u005fBATCH_JOB_ID=a\\u0062c\","
		 "\"AWS_BATCH_JQ_NAME\\u003dcanaryJ=x\"],"
		 "\"\\u004cabels\":{\"com.amazonaws.ecs.cluster\":\"c\"}}}", &d);
	assert_string_equal(d.env[DOCKER_ENV_JOB_ID], "abc");
	assert_string_equal(d.env[DOCKER_ENV_JQ_NAME], "");
	assert_string_equal(d.label[DOCKER_LABEL_CLUSTER], "c");
	assert_false(leaked(&d, NULL, "canaryJ"));
}

/* A name, label or object given twice: the first value counts. */
static void test_duplicates(void **state)
{
	struct docker_info d;

	(void)state;
	parse_ok("{\"Config\":{\"Env\":[\"AWS_BATCH_JOB_ID=first\","
		 "\"AWS_BATCH_JOB_ID=second\"],"
		 "\"Labels\":{\"com.amazonaws.ecs.cluster\":\"one\","
		 "\"com.amazonaws.ecs.cluster\":\"two\"},"
		 "\"Env\":[\"AWS_BATCH_JQ_NAME=later\"]},"
		 "\"Config\":{\"Env\":[\"AWS_BATCH_CE_NAME=other\"]},"
		 "\"HostConfig\":{\"Memory\":1,\"Memory\":2},"
		 "\"State\":{\"Pid\":5,\"Pid\":6}}", &d);
	assert_string_equal(d.env[DOCKER_ENV_JOB_ID], "first");
	assert_string_equal(d.label[DOCKER_LABEL_CLUSTER], "one");
	/* a second Env of the same Config still adds names not yet seen */
	assert_string_equal(d.env[DOCKER_ENV_JQ_NAME], "later");
	assert_string_equal(d.env[DOCKER_ENV_CE_NAME], "");
	assert_int_equal(d.memory, 1);
	assert_int_equal(d.pid, 5);
	parse_ok("{\"State\":{\"Status\":\"exited\",\"ExitCode\":3,"
		 "\"Status\":\"running\",\"ExitCode\":0}}", &d);
	assert_int_equal(d.status, DOCKER_STATUS_EXITED);
	assert_int_equal(d.exit_code, 3);
}

/* State.Status: Docker's names, what its die event leaves (exited, dead)
 * is an end; a name not known is only "other", never kept. */
static void test_status(void **state)
{
	static const struct {
		const char *name;
		enum docker_status want;
		bool ended;
	} cases[] = {
		{ "created", DOCKER_STATUS_CREATED, false },
		{ "running", DOCKER_STATUS_RUNNING, false },
		{ "paused", DOCKER_STATUS_PAUSED, false },
		{ "restarting", DOCKER_STATUS_RESTARTING, false },
		{ "removing", DOCKER_STATUS_REMOVING, false },
		{ "exited", DOCKER_STATUS_EXITED, true },
		{ "dead", DOCKER_STATUS_DEAD, true },
		{ "canaryK", DOCKER_STATUS_OTHER, false },
		{ "exite", DOCKER_STATUS_OTHER, false },
		{ "\\u0065xited", DOCKER_STATUS_EXITED, true },
	};
	struct docker_info d;
	char json[256];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(json, sizeof(json),
			 "{\"State\":{\"Status\":\"%s\",\"ExitCode\":-1}}",
			 cases[i].name);
		parse_ok(json, &d);
		assert_int_equal(d.status, cases[i].want);
		assert_int_equal(docker_ended(&d), cases[i].ended);
		assert_int_equal(d.exit_code, -1);
	}
	parse_ok("{\"State\":{\"Status\":null,\"ExitCode\":null}}", &d);
	assert_int_equal(d.status, DOCKER_STATUS_NONE);
	assert_false(docker_ended(&d));
}

/* Nulls, empty objects and members of other types that are not kept. */
static void test_odd_but_valid(void **state)
{
	struct docker_info d;

	(void)state;
	parse_ok("{}", &d);
	assert_string_equal(d.env[DOCKER_ENV_JOB_ID], "");
	parse_ok(" { \"Config\" : null , \"State\":null,\"HostConfig\":null } ",
		 &d);
	parse_ok("{\"Config\":{\"Env\":null,\"Labels\":null}}", &d);
	parse_ok("{\"Config\":{\"Env\":[],\"Labels\":{}},\"Id\":[1,{\"a\":"
		 "[true,false,null,-1.5e3]}]}", &d);
	parse_ok("{\"HostConfig\":{\"NanoCpus\":-1,\"CpuQuota\":-1,"
		 "\"Memory\":null,\"CpuShares\":2048,\"Other\":\"x\"}}", &d);
	assert_int_equal(d.nano_cpus, 0);
	assert_int_equal(d.cpu_quota, 0);
	assert_int_equal(d.cpu_shares, 2048);
	/* shares count as CPUs only for an ECS task's container */
	assert_int_equal(docker_cpus(&d), 0);
	parse_ok("{\"Config\":{\"Labels\":{\"com.amazonaws.ecs.task-arn\":"
		 "\"arn\"}},\"HostConfig\":{\"CpuShares\":2560}}", &d);
	assert_int_equal(docker_cpus(&d), 3);
	/* a quota without a period: the kernel's 100 ms */
	parse_ok("{\"HostConfig\":{\"CpuQuota\":50000}}", &d);
	assert_int_equal(docker_cpus(&d), 1);
	/* not a Batch job */
	parse_ok("{\"Config\":{\"Env\":[\"JOBTRACE_RUN_ID=r\"]}}", &d);
	assert_false(docker_batch_job(&d, &(struct jt_jobinfo){ 0 }));
}

/* Refused answers name the field path and never the value. */
static void test_refused(void **state)
{
	static const struct {
		const char *json;
		int rc;
		const char *want;
	} cases[] = {
		{ "", -EINVAL, "not valid JSON at byte 0" },
		{ "[]", -EDOM, "the answer: not a JSON object" },
		{ "{\"Config\":{\"Env\":[\"SECRET=canaryK\"]", -EINVAL,
		  "not valid JSON at byte" },
		{ "{\"Config\":{\"Env\":[\"SECRET=canaryK\",7]}}", -EDOM,
		  "Config.Env[1]: not a string" },
		{ "{\"Config\":{\"Env\":{\"SECRET\":\"canaryK\"}}}", -EDOM,
		  "Config.Env: not an array" },
		{ "{\"Config\":[\"SECRET=canaryK\"]}", -EDOM,
		  "Config: not an object" },
		{ "{\"Config\":{\"Labels\":[\"canaryK\"]}}", -EDOM,
		  "Config.Labels: not an object" },
		{ "{\"Config\":{\"Labels\":{\"com.amazonaws.ecs.cluster\":7}}}",
		  -EDOM, "Config.Labels[com.amazonaws.ecs.cluster]: not a string" },
		{ "{\"Config\":{\"Env\":[\"AWS_BATCH_JOB_ATTEMPT=canaryK\"]}}",
		  -EDOM, "Config.Env AWS_BATCH_JOB_ATTEMPT: not a decimal number" },
		{ "{\"Config\":{\"Env\":[\"AWS_BATCH_JOB_ARRAY_INDEX=4294967296\"]}}",
		  -EDOM, "AWS_BATCH_JOB_ARRAY_INDEX: not a decimal number" },
		{ "{\"Config\":{\"Env\":[\"AWS_BATCH_JOB_ARRAY_INDEX=-1\"]}}",
		  -EDOM, "AWS_BATCH_JOB_ARRAY_INDEX: not a decimal number" },
		{ "{\"Config\":{\"Env\":[\"JOBTRACE_STEP=canaryK\\nx\"]}}", -EDOM,
		  "Config.Env JOBTRACE_STEP: has a control character" },
		{ "{\"Config\":{\"Env\":[\"JOBTRACE_STEP=canaryK\\u0000\"]}}",
		  -EDOM, "JOBTRACE_STEP: has a control character" },
		{ "{\"HostConfig\":{\"Memory\":\"canaryK\"}}", -EDOM,
		  "HostConfig.Memory: not an integer" },
		{ "{\"HostConfig\":{\"NanoCpus\":1.5}}", -EDOM,
		  "HostConfig.NanoCpus: not an integer" },
		{ "{\"State\":{\"Pid\":4294967296}}", -EDOM,
		  "State.Pid: not a process id" },
		{ "{\"State\":\"canaryK\"}", -EDOM, "State: not an object" },
		{ "{\"State\":{\"Status\":[\"canaryK\"]}}", -EDOM,
		  "State.Status: not a string" },
		{ "{\"State\":{\"ExitCode\":2147483648}}", -EDOM,
		  "State.ExitCode: not a 32-bit integer" },
		{ "{\"State\":{\"ExitCode\":\"canaryK\"}}", -EDOM,
		  "State.ExitCode: not a 32-bit integer" },
		{ "{\"Config\":{\"Env\":[\"SECRET=canaryK\\x\"]}}", -EINVAL,
		  "invalid escape" },
		{ "{\"Config\":{\"Env\":[\"SECRET=canaryK\xff\"]}}", -EINVAL,
		  "invalid UTF-8" },
		{ "{\"a\":1} {}", -EINVAL, "text after the value" },
	};
	struct docker_info d;
	char err[256];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		parse_bad(cases[i].json, cases[i].rc, cases[i].want, &d, err,
			  sizeof(err));
		if (strstr(err, "canaryK"))
			fail_msg("the error quotes a value: %s", err);
	}
}

/* A kept value of 255 bytes is kept; 256 (or an escaped one that long)
 * refuses the answer, saying so without the value. */
static void test_long_values(void **state)
{
	struct docker_info d;
	char json[8192], v[1300], err[256];

	(void)state;
	memset(v, 'q', 255);
	v[255] = '\0';
	snprintf(json, sizeof(json),
		 "{\"Config\":{\"Env\":[\"AWS_BATCH_JQ_NAME=%s\"]}}", v);
	parse_ok(json, &d);
	assert_int_equal(strlen(d.env[DOCKER_ENV_JQ_NAME]), 255);
	v[255] = 'q';
	v[256] = '\0';
	snprintf(json, sizeof(json),
		 "{\"Config\":{\"Env\":[\"AWS_BATCH_JQ_NAME=%s\"]}}", v);
	parse_bad(json, -EDOM, "AWS_BATCH_JQ_NAME: longer than 255 bytes", &d,
		  err, sizeof(err));
	assert_null(strstr(err, "qqqq"));
	/* 200 escapes of 6 bytes each: short raw text is no test */
	v[0] = '\0';
	for (int i = 0; i < 200; i++)
		strcat(v, "\\u00e9");
	snprintf(json, sizeof(json),
		 "{\"Config\":{\"Labels\":{\"com.amazonaws.ecs.cluster\":\"%s\"}}}",
		 v);
	parse_bad(json, -EDOM, "com.amazonaws.ecs.cluster: longer than 255",
		  &d, err, sizeof(err));
	/* an id too long for a job id: the container is no job */
	memset(v, 'i', 70);
	v[70] = '\0';
	snprintf(json, sizeof(json),
		 "{\"Config\":{\"Env\":[\"AWS_BATCH_JOB_ID=%s\"]}}", v);
	parse_ok(json, &d);
	assert_false(docker_batch_job(&d, &(struct jt_jobinfo){ 0 }));
}

/* A huge environment (50,000 entries, 5 MB) with the job's id last and
 * odd values in between: read in one pass, nothing else kept. */
static void test_huge_env(void **state)
{
	struct docker_info d;
	struct jbuf b;
	char err[256] = "";

	(void)state;
	jbuf_init(&b);
	jbuf_put(&b, "{\"Config\":{\"Env\":[", 18);
	for (int i = 0; i < 50000; i++) {
		char e[160];
		int n = snprintf(e, sizeof(e),
				 "\"VAR_%d=canaryL %d \\\"\\\\\\t\\u2603 "
				 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
				 "xxxxxxxxxxxxxxxxx\",", i, i);

		jbuf_put(&b, e, (size_t)n);
	}
	jbuf_put(&b, "\"AWS_BATCH_JOB_ID=last\"]}}", 26);
	assert_false(b.oom);
	assert_true(b.len > 4000000);
	assert_int_equal(docker_parse_inspect(b.buf, b.len, &d, err,
					      sizeof(err)), 0);
	assert_string_equal(d.env[DOCKER_ENV_JOB_ID], "last");
	assert_false(leaked(&d, err, "canaryL"));
	jbuf_free(&b);
}

/* The job id: ":INDEX" and "#NODE" added unless the id has them. */
static void test_job_ids(void **state)
{
	static const struct {
		const char *id, *array, *node, *want;
	} cases[] = {
		{ "abc", "", "", "abc" },
		{ "abc", "7", "", "abc:7" },
		{ "abc:7", "7", "", "abc:7" },
		{ "abc:17", "7", "", "abc:17:7" },
		{ "abc", "", "2", "abc#2" },
		{ "abc#2", "", "2", "abc#2" },
		{ "abc", "3", "2", "abc:3#2" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct docker_info d;
		struct jt_jobinfo ji;

		memset(&d, 0, sizeof(d));
		memset(&ji, 0, sizeof(ji));
		strcpy(d.env[DOCKER_ENV_JOB_ID], cases[i].id);
		strcpy(d.env[DOCKER_ENV_ARRAY_INDEX], cases[i].array);
		strcpy(d.env[DOCKER_ENV_NODE_INDEX], cases[i].node);
		assert_true(docker_batch_job(&d, &ji));
		assert_string_equal(ji.job.id, cases[i].want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real_answer),
		cmocka_unit_test(test_allowlist),
		cmocka_unit_test(test_escaped_names),
		cmocka_unit_test(test_duplicates),
		cmocka_unit_test(test_status),
		cmocka_unit_test(test_odd_but_valid),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_long_values),
		cmocka_unit_test(test_huge_env),
		cmocka_unit_test(test_job_ids),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
