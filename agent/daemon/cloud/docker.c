// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * docker.c - the allowlist reader of Docker's container answer, and the
 * AWS Batch job it names (see docker.h for what is kept and why).
 *
 * The walk asks json_read.c for the members it keeps and skips the rest
 * with jr_skip(), which checks the text without copying it; an Env
 * element's name is compared where it stands (jr_str_eq), and only the
 * value of an allowlisted name is ever decoded.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "docker.h"
#include "json_read.h"
#include "util.h"

const char *const docker_env_names[DOCKER_ENV__N] = {
	[DOCKER_ENV_JOB_ID] = "AWS_BATCH_JOB_ID",
	[DOCKER_ENV_JOB_ATTEMPT] = "AWS_BATCH_JOB_ATTEMPT",
	[DOCKER_ENV_ARRAY_INDEX] = "AWS_BATCH_JOB_ARRAY_INDEX",
	[DOCKER_ENV_JQ_NAME] = "AWS_BATCH_JQ_NAME",
	[DOCKER_ENV_CE_NAME] = "AWS_BATCH_CE_NAME",
	[DOCKER_ENV_NODE_INDEX] = "AWS_BATCH_JOB_NODE_INDEX",
	[DOCKER_ENV_NUM_NODES] = "AWS_BATCH_JOB_NUM_NODES",
	[DOCKER_ENV_MAIN_NODE_INDEX] = "AWS_BATCH_JOB_MAIN_NODE_INDEX",
	[DOCKER_ENV_RUN_ID] = "JOBTRACE_RUN_ID",
	[DOCKER_ENV_PIPELINE] = "JOBTRACE_PIPELINE",
	[DOCKER_ENV_STEP] = "JOBTRACE_STEP",
	[DOCKER_ENV_COST_CENTER] = "JOBTRACE_COST_CENTER",
};

const char *const docker_label_names[DOCKER_LABEL__N] = {
	[DOCKER_LABEL_TASK_ARN] = "com.amazonaws.ecs.task-arn",
	[DOCKER_LABEL_CONTAINER_NAME] = "com.amazonaws.ecs.container-name",
	[DOCKER_LABEL_CLUSTER] = "com.amazonaws.ecs.cluster",
	[DOCKER_LABEL_TASK_FAMILY] = "com.amazonaws.ecs.task-definition-family",
	[DOCKER_LABEL_TASK_VERSION] = "com.amazonaws.ecs.task-definition-version",
};

/* The environment variables that hold a number. */
#define NUMERIC_ENV ((1u << DOCKER_ENV_JOB_ATTEMPT) | \
		     (1u << DOCKER_ENV_ARRAY_INDEX) | \
		     (1u << DOCKER_ENV_NODE_INDEX) | \
		     (1u << DOCKER_ENV_NUM_NODES) | \
		     (1u << DOCKER_ENV_MAIN_NODE_INDEX))

/* The HostConfig numbers kept, and where. */
static const struct {
	const char *name;
	size_t off;
} host_numbers[] = {
	{ "NanoCpus", offsetof(struct docker_info, nano_cpus) },
	{ "CpuShares", offsetof(struct docker_info, cpu_shares) },
	{ "CpuQuota", offsetof(struct docker_info, cpu_quota) },
	{ "CpuPeriod", offsetof(struct docker_info, cpu_period) },
	{ "Memory", offsetof(struct docker_info, memory) },
};

/* One walk over an answer. */
struct walk {
	struct jr r;
	struct docker_info *out;
	uint32_t env_set, label_set, num_set;	/* first value wins */
	bool pid_set, status_set, exit_set;
	char *err;
	size_t errlen;
};

/* Whether the n bytes at s are a decimal number that fits 32 bits. */
static bool u32_text(const char *s, size_t n)
{
	uint64_t v = 0;

	if (!n || n > 10)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	return v <= UINT32_MAX;
}

/*
 * Keep the value token v (an allowlisted name's: where names it, what the
 * name) in dst: decoded, at most DOCKER_VALUE_MAX - 1 bytes, no control
 * characters.  -EDOM (err set) otherwise.
 */
static int keep(struct walk *w, const struct jr_str *v, char *dst,
		const char *where, const char *what, bool numeric)
{
	char buf[DOCKER_VALUE_MAX * 6];
	const char *why = NULL;
	size_t n = 0;

	/* an escape is at most 6 bytes for 1 to 3 decoded ones */
	if (v->len >= sizeof(buf))
		why = "longer than 255 bytes";
	else if ((n = jr_str_decode(v, buf, 0)) >= DOCKER_VALUE_MAX)
		why = "longer than 255 bytes";
	for (size_t i = 0; !why && i < n; i++)
		if ((unsigned char)buf[i] < 0x20 || buf[i] == 0x7f)
			why = "has a control character";
	if (!why && numeric && !u32_text(buf, n))
		why = "not a decimal number up to 4294967295";
	if (why) {
		util_seterr(w->err, w->errlen, "%s %s: %s", where, what, why);
		return -EDOM;
	}
	memcpy(dst, buf, n);
	dst[n] = '\0';
	return 0;
}

/*
 * One element of Config.Env ("NAME=VALUE", token s): an allowlisted
 * name's value is kept, anything else is left where it is.
 */
static int env_one(struct walk *w, const struct jr_str *s)
{
	const char *eq = memchr(s->s, '=', s->len);
	struct jr_str name, val;

	if (!eq)
		return 0;	/* a name alone: nothing set */
	/* a raw '=' is never inside an escape: the name ends here, and
	 * only a name with an escaped '=' in it is not matched */
	name.s = s->s;
	name.len = (size_t)(eq - s->s);
	name.esc = memchr(name.s, '\\', name.len) != NULL;
	name.plain = !name.esc;
	for (unsigned k = 0; k < DOCKER_ENV__N; k++) {
		if (!jr_str_eq(&name, docker_env_names[k],
			       strlen(docker_env_names[k])))
			continue;
		if (w->env_set & (1u << k))
			return 0;	/* getenv(3) sees the first */
		w->env_set |= 1u << k;
		val.s = eq + 1;
		val.len = s->len - name.len - 1;
		val.esc = memchr(val.s, '\\', val.len) != NULL;
		val.plain = !val.esc;
		return keep(w, &val, w->out->env[k], "Config.Env",
			    docker_env_names[k], NUMERIC_ENV & (1u << k));
	}
	return 0;
}

/* Is the next value null (read then)?  Objects and arrays may be. */
static bool null_value(struct walk *w)
{
	return jr_peek(&w->r) == JR_NULL && jr_null(&w->r) == 0;
}

/* A member of the wrong type: name the path. */
static int wrong(struct walk *w, const char *path, const char *want)
{
	util_seterr(w->err, w->errlen, "%s: not %s", path, want);
	return -EDOM;
}

/* Config.Env: an array of strings, or null. */
static int env(struct walk *w)
{
	unsigned idx = 0;
	int rc;

	if (null_value(w))
		return 0;
	rc = jr_arr_open(&w->r);
	if (rc)
		return rc == -EDOM ? wrong(w, "Config.Env", "an array") : rc;
	while ((rc = jr_next_elem(&w->r)) > 0) {
		struct jr_str s;
		char path[48];

		rc = jr_str(&w->r, &s);
		if (rc == -EDOM) {
			snprintf(path, sizeof(path), "Config.Env[%u]", idx);
			return wrong(w, path, "a string");
		}
		if (rc || (rc = env_one(w, &s)))
			return rc;
		idx++;
	}
	return rc;
}

/* Config.Labels: an object, or null; other labels' values any JSON. */
static int labels(struct walk *w)
{
	struct jr_str key, v;
	int rc;

	if (null_value(w))
		return 0;
	rc = jr_obj_open(&w->r);
	if (rc)
		return rc == -EDOM ? wrong(w, "Config.Labels", "an object") : rc;
	while ((rc = jr_next_member(&w->r, &key)) > 0) {
		unsigned k;

		for (k = 0; k < DOCKER_LABEL__N; k++)
			if (jr_str_eq(&key, docker_label_names[k],
				      strlen(docker_label_names[k])))
				break;
		if (k == DOCKER_LABEL__N || (w->label_set & (1u << k))) {
			rc = jr_skip(&w->r);
		} else {
			char path[96];

			w->label_set |= 1u << k;
			snprintf(path, sizeof(path), "Config.Labels[%s]",
				 docker_label_names[k]);
			rc = jr_str(&w->r, &v);
			if (rc == -EDOM)
				return wrong(w, path, "a string");
			if (!rc)
				rc = keep(w, &v, w->out->label[k],
					  "Config.Labels", docker_label_names[k],
					  false);
		}
		if (rc)
			return rc;
	}
	return rc;
}

/* Enter the object that is the next value (*isnull: it was null). */
static int open_object(struct walk *w, const char *path, bool *isnull)
{
	int rc;

	*isnull = null_value(w);
	if (*isnull)
		return 0;
	rc = jr_obj_open(&w->r);
	return rc == -EDOM ? wrong(w, path, "an object") : rc;
}

/* Config: Env and Labels. */
static int config(struct walk *w)
{
	struct jr_str key;
	bool isnull;
	int rc = open_object(w, "Config", &isnull);

	if (rc || isnull)
		return rc;
	while ((rc = jr_next_member(&w->r, &key)) > 0) {
		if (jr_str_eq(&key, "Env", 3))
			rc = env(w);
		else if (jr_str_eq(&key, "Labels", 6))
			rc = labels(w);
		else
			rc = jr_skip(&w->r);
		if (rc)
			return rc;
	}
	return rc;
}

/* An integer member at path into *dst (negative: 0; null: 0). */
static int number(struct walk *w, const char *path, uint64_t *dst)
{
	int64_t v;
	int rc;

	if (null_value(w))
		return 0;
	rc = jr_i64(&w->r, &v);
	if (rc == -EDOM)
		return wrong(w, path, "an integer");
	if (!rc)
		*dst = v > 0 ? (uint64_t)v : 0;
	return rc;
}

/* State.Status's names, in the order of enum docker_status. */
static const char *const status_names[DOCKER_STATUS__N] = {
	[DOCKER_STATUS_CREATED] = "created",
	[DOCKER_STATUS_RUNNING] = "running",
	[DOCKER_STATUS_PAUSED] = "paused",
	[DOCKER_STATUS_RESTARTING] = "restarting",
	[DOCKER_STATUS_REMOVING] = "removing",
	[DOCKER_STATUS_EXITED] = "exited",
	[DOCKER_STATUS_DEAD] = "dead",
};

/* State.Status: compared where it stands with the names above, never
 * copied (another name is DOCKER_STATUS_OTHER). */
static int status(struct walk *w)
{
	struct jr_str s;
	int rc;

	if (null_value(w))
		return 0;
	rc = jr_str(&w->r, &s);
	if (rc == -EDOM)
		return wrong(w, "State.Status", "a string");
	if (rc)
		return rc;
	w->out->status = DOCKER_STATUS_OTHER;
	for (unsigned k = 0; k < DOCKER_STATUS__N; k++)
		if (status_names[k] && jr_str_eq(&s, status_names[k],
						 strlen(status_names[k])))
			w->out->status = (enum docker_status)k;
	return 0;
}

/* State.ExitCode: an integer of 32 bits. */
static int exit_code(struct walk *w)
{
	int64_t v;
	int rc;

	if (null_value(w))
		return 0;
	rc = jr_i64(&w->r, &v);
	if (rc == -EDOM || (!rc && (v < INT32_MIN || v > INT32_MAX)))
		return wrong(w, "State.ExitCode", "a 32-bit integer");
	if (!rc)
		w->out->exit_code = (int32_t)v;
	return rc;
}

/* State: Pid, Status, ExitCode.  HostConfig: the CPU and memory limits. */
static int state_or_host(struct walk *w, bool host)
{
	struct jr_str key;
	bool isnull;
	int rc = open_object(w, host ? "HostConfig" : "State", &isnull);

	if (rc || isnull)
		return rc;
	while ((rc = jr_next_member(&w->r, &key)) > 0) {
		size_t k, nk = host ? sizeof(host_numbers) /
				      sizeof(host_numbers[0]) : 0;
		char path[48];
		uint64_t v = 0;

		for (k = 0; k < nk; k++)
			if (jr_str_eq(&key, host_numbers[k].name,
				      strlen(host_numbers[k].name)))
				break;
		if (host && k < nk && !(w->num_set & (1u << k))) {
			w->num_set |= 1u << k;
			snprintf(path, sizeof(path), "HostConfig.%s",
				 host_numbers[k].name);
			rc = number(w, path, &v);
			memcpy((char *)w->out + host_numbers[k].off, &v,
			       sizeof(v));
		} else if (!host && !w->pid_set && jr_str_eq(&key, "Pid", 3)) {
			w->pid_set = true;
			rc = number(w, "State.Pid", &v);
			if (!rc && v > UINT32_MAX)
				rc = wrong(w, "State.Pid", "a process id");
			w->out->pid = (uint32_t)v;
		} else if (!host && !w->status_set &&
			   jr_str_eq(&key, "Status", 6)) {
			w->status_set = true;
			rc = status(w);
		} else if (!host && !w->exit_set &&
			   jr_str_eq(&key, "ExitCode", 8)) {
			w->exit_set = true;
			rc = exit_code(w);
		} else {
			rc = jr_skip(&w->r);
		}
		if (rc)
			return rc;
	}
	return rc;
}

/* Read one answer (see docker.h). */
int docker_parse_inspect(const char *json, size_t len, struct docker_info *out,
			 char *err, size_t errlen)
{
	struct walk w = { .out = out, .err = err, .errlen = errlen };
	bool config_seen = false, state_seen = false, host_seen = false;
	struct jr_str key;
	int rc;

	memset(out, 0, sizeof(*out));
	jr_init(&w.r, json, len);
	rc = jr_obj_open(&w.r);
	if (rc == -EDOM)
		rc = wrong(&w, "the answer", "a JSON object");
	while (!rc && (rc = jr_next_member(&w.r, &key)) > 0) {
		/* the first of a member given twice counts */
		if (!config_seen && jr_str_eq(&key, "Config", 6)) {
			config_seen = true;
			rc = config(&w);
		} else if (!state_seen && jr_str_eq(&key, "State", 5)) {
			state_seen = true;
			rc = state_or_host(&w, false);
		} else if (!host_seen && jr_str_eq(&key, "HostConfig", 10)) {
			host_seen = true;
			rc = state_or_host(&w, true);
		} else {
			rc = jr_skip(&w.r);
		}
	}
	if (!rc)
		rc = jr_end(&w.r);
	if (rc == -EINVAL)
		util_seterr(err, errlen, "not valid JSON at byte %zu: %s",
			    w.r.err_off, w.r.err ? w.r.err : "invalid");
	if (rc)
		memset(out, 0, sizeof(*out));	/* nothing of a refused one */
	return rc;
}

/* Whether Docker says the container has ended (see docker.h). */
bool docker_ended(const struct docker_info *d)
{
	return d->status == DOCKER_STATUS_EXITED ||
	       d->status == DOCKER_STATUS_DEAD;
}

/* The CPUs the container may use (see docker.h). */
uint32_t docker_cpus(const struct docker_info *d)
{
	uint64_t n = 0;

	if (d->nano_cpus) {
		n = (d->nano_cpus + 999999999ull) / 1000000000ull;
	} else if (d->cpu_quota) {
		uint64_t period = d->cpu_period ? d->cpu_period : 100000;

		n = (d->cpu_quota + period - 1) / period;
	} else if (d->cpu_shares >= 1024 && d->label[DOCKER_LABEL_TASK_ARN][0]) {
		n = (d->cpu_shares + 1023) / 1024;
	}
	return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

/* Copy src into dst when it fits whole (a cut id would be wrong). */
static void set_whole(char *dst, size_t size, const char *src)
{
	if (strlen(src) < size)
		util_strlcpy(dst, src, size);
}

/* Append sep and the number text n to id when id does not end so. */
static bool add_suffix(char *id, size_t size, char sep, const char *n)
{
	size_t il = strlen(id), nl = strlen(n);

	if (il > nl && id[il - nl - 1] == sep && !strcmp(id + il - nl, n))
		return true;
	return (size_t)snprintf(id + il, size - il, "%c%s", sep, n) <
	       size - il;
}

/* An AWS Batch job's container: fill ji (see docker.h). */
bool docker_batch_job(const struct docker_info *d, struct jt_jobinfo *ji)
{
	char id[JT_STR_SMALL];
	struct jt_batch *b = &ji->batch;

	if (!d->env[DOCKER_ENV_JOB_ID][0] ||
	    strlen(d->env[DOCKER_ENV_JOB_ID]) >= sizeof(id))
		return false;
	util_strlcpy(id, d->env[DOCKER_ENV_JOB_ID], sizeof(id));
	if (d->env[DOCKER_ENV_ARRAY_INDEX][0] &&
	    !add_suffix(id, sizeof(id), ':', d->env[DOCKER_ENV_ARRAY_INDEX]))
		return false;
	if (d->env[DOCKER_ENV_NODE_INDEX][0] && !strchr(id, '#') &&
	    !add_suffix(id, sizeof(id), '#', d->env[DOCKER_ENV_NODE_INDEX]))
		return false;
	util_strlcpy(ji->job.scheduler, "aws-batch", sizeof(ji->job.scheduler));
	util_strlcpy(ji->job.id, id, sizeof(ji->job.id));
	set_whole(ji->job.run, sizeof(ji->job.run), d->env[DOCKER_ENV_RUN_ID]);
	set_whole(ji->job.pipeline, sizeof(ji->job.pipeline),
		  d->env[DOCKER_ENV_PIPELINE]);
	set_whole(ji->job.task, sizeof(ji->job.task), d->env[DOCKER_ENV_STEP]);
	set_whole(ji->job.cost_center, sizeof(ji->job.cost_center),
		  d->env[DOCKER_ENV_COST_CENTER]);
	/* the numbers were checked by the parser */
	b->attempt = (uint32_t)strtoul(d->env[DOCKER_ENV_JOB_ATTEMPT], NULL, 10);
	b->has_array = d->env[DOCKER_ENV_ARRAY_INDEX][0] != '\0';
	b->array_index = (uint32_t)strtoul(d->env[DOCKER_ENV_ARRAY_INDEX],
					   NULL, 10);
	b->has_node = d->env[DOCKER_ENV_NODE_INDEX][0] != '\0';
	b->node_index = (uint32_t)strtoul(d->env[DOCKER_ENV_NODE_INDEX],
					  NULL, 10);
	util_strlcpy(b->queue, d->env[DOCKER_ENV_JQ_NAME], sizeof(b->queue));
	util_strlcpy(b->compute_env, d->env[DOCKER_ENV_CE_NAME],
		     sizeof(b->compute_env));
	util_strlcpy(b->ecs_task_arn, d->label[DOCKER_LABEL_TASK_ARN],
		     sizeof(b->ecs_task_arn));
	ji->cpus = docker_cpus(d);
	ji->mem_bytes = d->memory;
	return true;
}
