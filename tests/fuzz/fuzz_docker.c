// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_docker.c - the allowlist reader of Docker's container answer
 * (agent/daemon/cloud/docker.c) and the AWS Batch job it names.  The input is one
 * answer of GET /containers/{id}/json.  The checks:
 *   - the verdict agrees with json_read.h on the text: valid JSON is
 *     never refused as invalid, invalid JSON is never accepted;
 *   - a refused answer keeps nothing, and its message is printable;
 *   - every kept value is terminated in its array, shorter than 256
 *     bytes, without control characters; numeric variables are numbers;
 *   - a second read gives the same result;
 *   - a Batch job's fields are terminated, its id not empty.
 */
#include <errno.h>

#include "docker.h"
#include "fuzz.h"
#include "json_read.h"

/* A kept value: terminated, short, no control character. */
static void check_value(const char *v)
{
	const char *end = memchr(v, '\0', DOCKER_VALUE_MAX);

	FUZZ_CHECK(end);
	for (const char *c = v; c < end; c++)
		FUZZ_CHECK((unsigned char)*c >= 0x20 && *c != 0x7f);
}

/* Whether the text is one valid JSON value, as json_read.h reads it. */
static bool valid_json(const char *s, size_t n)
{
	struct jr r;

	jr_init(&r, s, n);
	return jr_skip(&r) == 0 && jr_end(&r) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct docker_info d, again;
	static const unsigned numeric[] = {
		DOCKER_ENV_JOB_ATTEMPT, DOCKER_ENV_ARRAY_INDEX,
		DOCKER_ENV_NODE_INDEX, DOCKER_ENV_NUM_NODES,
		DOCKER_ENV_MAIN_NODE_INDEX,
	};
	const char *s = (const char *)data;
	char err[256] = "";
	struct jt_jobinfo ji;
	int rc;

	rc = docker_parse_inspect(s, size, &d, err, sizeof(err));
	FUZZ_CHECK(rc == 0 || rc == -EINVAL || rc == -EDOM);
	if (valid_json(s, size))
		FUZZ_CHECK(rc != -EINVAL);
	else
		FUZZ_CHECK(rc != 0);
	FUZZ_CHECK(memchr(err, '\0', sizeof(err)));
	for (const char *c = err; *c; c++)
		FUZZ_CHECK((unsigned char)*c >= 0x20 && *c != 0x7f);
	if (rc) {
		FUZZ_CHECK(err[0]);
		for (size_t i = 0; i < sizeof(d); i++)
			FUZZ_CHECK(((unsigned char *)&d)[i] == 0);
		return 0;
	}
	for (int i = 0; i < DOCKER_ENV__N; i++)
		check_value(d.env[i]);
	for (int i = 0; i < DOCKER_LABEL__N; i++)
		check_value(d.label[i]);
	for (size_t i = 0; i < sizeof(numeric) / sizeof(numeric[0]); i++)
		FUZZ_CHECK(strspn(d.env[numeric[i]], "0123456789") ==
			   strlen(d.env[numeric[i]]));
	FUZZ_CHECK(docker_parse_inspect(s, size, &again, err, sizeof(err)) == 0);
	FUZZ_CHECK(!memcmp(&d, &again, sizeof(d)));

	memset(&ji, 0, sizeof(ji));
	if (docker_batch_job(&d, &ji)) {
		FUZZ_CHECK(ji.job.id[0]);
		FUZZ_CHECK(memchr(ji.job.id, '\0', sizeof(ji.job.id)));
		FUZZ_CHECK(!strcmp(ji.job.scheduler, "aws-batch"));
		FUZZ_CHECK(memchr(ji.job.run, '\0', sizeof(ji.job.run)));
		FUZZ_CHECK(memchr(ji.batch.queue, '\0', sizeof(ji.batch.queue)));
		FUZZ_CHECK(ji.cpus == docker_cpus(&d));
	} else {
		/* an id that would not fit with its suffixes (22 bytes at most) */
		FUZZ_CHECK(!d.env[DOCKER_ENV_JOB_ID][0] ||
			   strlen(d.env[DOCKER_ENV_JOB_ID]) + 22 >= JT_STR_SMALL);
	}
	return 0;
}
