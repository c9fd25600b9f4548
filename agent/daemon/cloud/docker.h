/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * docker.h - what the agent keeps of Docker's answer about a container
 * (GET /containers/{id}/json), and the AWS Batch job it names.
 *
 * Discretion: a container's environment holds its secrets.  The parser
 * keeps the values of the allowlisted names below and nothing else: every
 * other value is skipped where it stands in the answer (never decoded,
 * copied, logged or stored), and an error message names the field path
 * ("Config.Env[3]", "HostConfig.Memory"), never a value.
 *
 *   Config.Env          AWS_BATCH_JOB_ID, AWS_BATCH_JOB_ATTEMPT,
 *                       AWS_BATCH_JOB_ARRAY_INDEX, AWS_BATCH_JQ_NAME,
 *                       AWS_BATCH_CE_NAME, AWS_BATCH_JOB_NODE_INDEX,
 *                       AWS_BATCH_JOB_NUM_NODES,
 *                       AWS_BATCH_JOB_MAIN_NODE_INDEX, JOBTRACE_RUN_ID,
 *                       JOBTRACE_PIPELINE, JOBTRACE_STEP,
 *                       JOBTRACE_COST_CENTER
 *   Config.Labels       com.amazonaws.ecs.task-arn, .container-name,
 *                       .cluster, .task-definition-family,
 *                       .task-definition-version
 *   State.Pid, Status, ExitCode
 *   HostConfig.NanoCpus, CpuShares, CpuQuota, CpuPeriod, Memory
 *
 * A name given twice keeps its first value (what getenv(3) in the
 * container sees).  An env name is matched as written: one that only an
 * escaped '=' (\u003d) would end is not one of ours.  A kept value must be
 * at most DOCKER_VALUE_MAX - 1 bytes without control characters, and the
 * numeric variables decimal numbers; else the answer is refused whole.
 */
#ifndef JOBTRACE_DOCKER_H
#define JOBTRACE_DOCKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jobs.h"

#define DOCKER_VALUE_MAX 256

enum docker_env {
	DOCKER_ENV_JOB_ID,
	DOCKER_ENV_JOB_ATTEMPT,
	DOCKER_ENV_ARRAY_INDEX,
	DOCKER_ENV_JQ_NAME,
	DOCKER_ENV_CE_NAME,
	DOCKER_ENV_NODE_INDEX,
	DOCKER_ENV_NUM_NODES,
	DOCKER_ENV_MAIN_NODE_INDEX,
	DOCKER_ENV_RUN_ID,
	DOCKER_ENV_PIPELINE,
	DOCKER_ENV_STEP,
	DOCKER_ENV_COST_CENTER,
	DOCKER_ENV__N
};

enum docker_label {
	DOCKER_LABEL_TASK_ARN,
	DOCKER_LABEL_CONTAINER_NAME,
	DOCKER_LABEL_CLUSTER,
	DOCKER_LABEL_TASK_FAMILY,
	DOCKER_LABEL_TASK_VERSION,
	DOCKER_LABEL__N
};

/* State.Status: where the container is in its life.  Docker's `die`
 * event is the step to exited (or dead); a name not known here is
 * DOCKER_STATUS_OTHER. */
enum docker_status {
	DOCKER_STATUS_NONE,		/* the answer had none */
	DOCKER_STATUS_CREATED,
	DOCKER_STATUS_RUNNING,
	DOCKER_STATUS_PAUSED,
	DOCKER_STATUS_RESTARTING,
	DOCKER_STATUS_REMOVING,
	DOCKER_STATUS_EXITED,
	DOCKER_STATUS_DEAD,
	DOCKER_STATUS_OTHER,
	DOCKER_STATUS__N
};

/* The allowlisted names, in the order of the enums. */
extern const char *const docker_env_names[DOCKER_ENV__N];
extern const char *const docker_label_names[DOCKER_LABEL__N];

/* What is kept of one answer: "" and 0 for what it did not have. */
struct docker_info {
	char env[DOCKER_ENV__N][DOCKER_VALUE_MAX];
	char label[DOCKER_LABEL__N][DOCKER_VALUE_MAX];
	uint32_t pid;		/* State.Pid: its first process, 0 if none */
	enum docker_status status;	/* State.Status */
	int32_t exit_code;	/* State.ExitCode, once it has ended */
	uint64_t nano_cpus;	/* HostConfig; negative values count as 0 */
	uint64_t cpu_shares;
	uint64_t cpu_quota;
	uint64_t cpu_period;
	uint64_t memory;
};

/*
 * Read one answer of GET /containers/{id}/json (len bytes) into *out
 * (zeroed first).  0; -EINVAL when it is not one JSON object, -EDOM when a
 * kept member has another type or value than expected: err names the
 * field path (and for bad JSON the byte offset), never a value.
 */
int docker_parse_inspect(const char *json, size_t len, struct docker_info *out,
			 char *err, size_t errlen);
/* Whether Docker says the container has ended: State.Status exited or
 * dead, what its `die` event leaves. */
bool docker_ended(const struct docker_info *d);
/*
 * The CPUs the container may use, rounded up: NanoCpus / 1e9, else
 * CpuQuota / CpuPeriod (period 100 ms when 0), else for an ECS task's
 * container CpuShares / 1024 (AWS Batch gives a job's vCPUs as 1024
 * shares each); 0 when none of them limits it.
 */
uint32_t docker_cpus(const struct docker_info *d);
/*
 * An AWS Batch job's container (AWS_BATCH_JOB_ID set): fill ji's job
 * (scheduler "aws-batch", id, run, pipeline, task, cost center), its
 * Batch fields and allocation, and return true; false for any other
 * container.  The id is AWS_BATCH_JOB_ID, ":INDEX" added for an array
 * child and "#NODE" for a node of a multi-node job unless the id already
 * ends so; false too when it would not fit.
 */
bool docker_batch_job(const struct docker_info *d, struct jt_jobinfo *ji);

#endif
