// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * containers.c - containers, Docker's answers and their AWS Batch jobs
 * (see containers.h).  A node runs tens of containers: a plain array,
 * searched by the first 16 hex digits of the id.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup_parse.h"
#include "containers.h"
#include "log.h"
#include "record.h"
#include "tracker.h"
#include "util.h"

#define RETRY_FIRST_NS (10ull * 1000000000ull)
#define RETRY_MAX_NS (300ull * 1000000000ull)
#define ID_LEN 64

struct ct {
	uint64_t key;			/* the id's first 16 hex digits */
	char id[ID_LEN + 1];
	char cgroup[512];		/* its job's: its ECS task's, else its own */
	uint32_t procs;			/* processes in it the tracker follows */
	uint32_t init_pid;		/* its first process (State.Pid once known) */
	enum docker_state state;
	unsigned fails;			/* failed look-ups in a row */
	uint64_t retry_ns;		/* CLOCK_MONOTONIC: ask again then */
	uint64_t start_ns;		/* CLOCK_REALTIME: its first process's start */
	uint64_t end_ns;		/* CLOCK_REALTIME: its last exit so far */
	int exit_code;			/* its first process's, as Docker gives it */
	bool exit_known;
	char job[JT_STR_SMALL];		/* its AWS Batch job's id, "" none */
	struct jt_usage usage;		/* finished processes that had no job */
};

struct containers {
	struct ct **v;
	size_t n, cap, max;
	uint64_t full;
	containers_ask_fn ask;
	void *ctx;
};

/* An empty table (see containers.h). */
int containers_new(size_t max, containers_ask_fn ask, void *ctx,
		   struct containers **out)
{
	struct containers *cs = calloc(1, sizeof(*cs));

	*out = cs;
	if (!cs)
		return -ENOMEM;
	cs->max = max;
	cs->ask = ask;
	cs->ctx = ctx;
	return 0;
}

/* Free the table. */
void containers_free(struct containers *cs)
{
	if (!cs)
		return;
	for (size_t i = 0; i < cs->n; i++)
		free(cs->v[i]);
	free(cs->v);
	free(cs);
}

/* The Docker id in p->container ("docker://ID", "ecs://ID"), or NULL
 * when it is no container Docker can be asked about. */
static const char *docker_id(const struct jt_proc *p)
{
	const char *id;

	if (strncmp(p->container, "docker://", 9) == 0)
		id = p->container + 9;
	else if (strncmp(p->container, "ecs://", 6) == 0)
		id = p->container + 6;
	else
		return NULL;
	if (strlen(id) != ID_LEN || strspn(id, "0123456789abcdef") != ID_LEN)
		return NULL;
	return id;
}

/* The search key of a checked id. */
static uint64_t key_of(const char *id)
{
	return strtoull((char[17]){ id[0], id[1], id[2], id[3], id[4], id[5],
				    id[6], id[7], id[8], id[9], id[10], id[11],
				    id[12], id[13], id[14], id[15], 0 },
			NULL, 16);
}

/* The entry of a checked id, or NULL. */
static struct ct *find(struct containers *cs, const char *id)
{
	uint64_t k = key_of(id);

	for (size_t i = 0; i < cs->n; i++)
		if (cs->v[i]->key == k && !strcmp(cs->v[i]->id, id))
			return cs->v[i];
	return NULL;
}

/* Forget entry e. */
static void drop(struct containers *cs, struct ct *e)
{
	for (size_t i = 0; i < cs->n; i++) {
		if (cs->v[i] == e) {
			cs->v[i] = cs->v[--cs->n];
			free(e);
			return;
		}
	}
}

/* A new entry for id, or NULL when the table is full of live ones. */
static struct ct *add(struct containers *cs, const char *id)
{
	struct ct *e;

	if (cs->n == cs->max) {
		/* one whose processes are gone and whose answer is late */
		for (size_t i = 0; i < cs->n; i++) {
			if (!cs->v[i]->procs) {
				drop(cs, cs->v[i]);
				break;
			}
		}
		if (cs->n == cs->max)
			return NULL;
	}
	if (cs->n == cs->cap) {
		size_t cap = cs->cap ? cs->cap * 2 : 16;
		struct ct **v = realloc(cs->v, cap * sizeof(*v));

		if (!v)
			return NULL;
		cs->v = v;
		cs->cap = cap;
	}
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	util_strlcpy(e->id, id, sizeof(e->id));
	e->key = key_of(id);
	cs->v[cs->n++] = e;
	return e;
}

/* Ask Docker about e; a queue that refuses counts as a failed look-up. */
static void ask(struct containers *cs, struct ct *e, uint64_t now)
{
	int err = cs->ask ? cs->ask(cs->ctx, e->id) : -ENOSYS;

	if (!err) {
		e->state = DOCKER_PENDING;
		return;
	}
	log_debug("docker: container %.12s not asked: %s", e->id,
		  strerror(-err));
	e->state = DOCKER_ERROR;
	e->fails++;
	e->retry_ns = now + RETRY_FIRST_NS;
}

/* p now runs in its container (see containers.h). */
void containers_enter(struct containers *cs, struct tracker *t,
		      const struct jt_proc *p)
{
	const char *id = docker_id(p);
	struct cg_container ct;
	struct ct *e;

	if (!id)
		return;
	e = find(cs, id);
	if (!e) {
		e = add(cs, id);
		if (!e) {
			cs->full++;
			return;
		}
		/* the job's memory and processes: its ECS task's cgroup when
		 * it has one (a task's containers are one job), else its own */
		if (p->cgroup && cg_parse_container(p->cgroup, &ct))
			cg_ancestor(p->cgroup, ct.task_level >= 0 ?
						       ct.task_level : ct.level,
				    e->cgroup, sizeof(e->cgroup));
		e->start_ns = record_realtime(t->host, p->start_ns);
		e->init_pid = p->pid;
		ask(cs, e, util_now_ns(CLOCK_MONOTONIC));
	}
	e->procs++;
}

/* Add the figures of usage u to the job's. */
static void usage_merge(struct jt_usage *job, struct jt_usage *u)
{
	job->cpu_s += u->cpu_s;
	job->processes += u->processes;
	if (u->cgroup_peak_bytes > job->cgroup_peak_bytes)
		job->cgroup_peak_bytes = u->cgroup_peak_bytes;
	if (u->proc_peak_bytes > job->proc_peak_bytes)
		job->proc_peak_bytes = u->proc_peak_bytes;
	memset(u, 0, sizeof(*u));
}

/* Whether a container other than e still runs (or may run) job id. */
static bool job_goes_on(const struct containers *cs, const struct ct *e,
			const char *id)
{
	for (size_t i = 0; i < cs->n; i++)
		if (cs->v[i] != e && cs->v[i]->procs &&
		    !strcmp(cs->v[i]->job, id))
			return true;
	return false;
}

/* e's last process is gone: end its job unless another container of the
 * job goes on. */
static void job_end(struct containers *cs, struct tracker *t, struct ct *e)
{
	struct jt_jobinfo *ji;

	if (!e->job[0])
		return;
	ji = jobs_get(t->jobs, "aws-batch", e->job, false);
	if (!ji || ji->end_ns)
		return;
	usage_merge(&ji->usage, &e->usage);
	if (e->exit_known) {
		ji->exit_code = e->exit_code;
		ji->exit_known = true;
	}
	if (job_goes_on(cs, e, e->job))
		return;
	ji->end_ns = e->end_ns ? e->end_ns : util_now_ns(CLOCK_REALTIME);
	ji->touched_ns = util_now_ns(CLOCK_MONOTONIC);
	tracker_job_record(t, ji, "end");
	log_info("docker: AWS Batch job %s ended (container %.12s)", ji->job.id,
		 e->id);
}

/* p is gone from its container (see containers.h). */
void containers_leave(struct containers *cs, struct tracker *t,
		      const struct jt_proc *p)
{
	const char *id = docker_id(p);
	struct ct *e = id ? find(cs, id) : NULL;

	if (!e || !e->procs)
		return;
	if (p->pid == e->init_pid && (p->state & JT_PS_EXITED)) {
		/* Docker's own exit code: 128 + the signal that killed it */
		e->exit_code = p->exit_signal ? 128 + p->exit_signal :
						p->exit_code;
		e->exit_known = true;
	}
	if (p->end_ns)
		e->end_ns = record_realtime(t->host, p->end_ns);
	if (--e->procs)
		return;
	if (e->state == DOCKER_PENDING)
		return;		/* the answer ends it */
	job_end(cs, t, e);
	drop(cs, e);
}

/* The container's own usage for a finished process without a job. */
struct jt_usage *containers_usage(struct containers *cs,
				  const struct jt_proc *p)
{
	const char *id = docker_id(p);
	struct ct *e = id ? find(cs, id) : NULL;

	return e ? &e->usage : NULL;
}

/* What fill_one() gives the processes of one container. */
struct fill_ctx {
	struct tracker *t;
	const struct ct *e;
	const struct jt_jobinfo *ji;
	size_t n;
};

/* A running process of the container gets its job. */
static void fill_one(struct jt_proc *p, void *arg)
{
	struct fill_ctx *f = arg;
	const char *id;

	if (p->job.id[0] || (p->state & JT_PS_EXCLUDED) ||
	    !(id = docker_id(p)) || strcmp(id, f->e->id))
		return;
	util_strlcpy(p->job.scheduler, f->ji->job.scheduler,
		     sizeof(p->job.scheduler));
	util_strlcpy(p->job.id, f->ji->job.id, sizeof(p->job.id));
	jobs_fill(f->t->jobs, &p->job, p->cgroup);
	f->n++;
}

/* Make e's job from Docker's answer: a start record when it is new. */
static void job_start(struct containers *cs, struct tracker *t, struct ct *e,
		      const struct jt_jobinfo *nj)
{
	struct jt_jobinfo *ji = jobs_get(t->jobs, "aws-batch", nj->job.id,
					 false);
	struct fill_ctx f = { .t = t, .e = e };

	(void)cs;
	if (!ji || ji->end_ns) {
		/* a new job, or a new attempt of one that ended */
		if (!ji)
			ji = jobs_get(t->jobs, "aws-batch", nj->job.id, true);
		if (!ji) {
			log_error("docker: out of memory for job %s",
				  nj->job.id);
			return;
		}
		*ji = *nj;
		util_strlcpy(ji->cgroup, e->cgroup, sizeof(ji->cgroup));
		ji->start_ns = e->start_ns;
		ji->touched_ns = util_now_ns(CLOCK_MONOTONIC);
		tracker_job_record(t, ji, "start");
	}
	util_strlcpy(e->job, ji->job.id, sizeof(e->job));
	usage_merge(&ji->usage, &e->usage);
	f.ji = ji;
	proc_table_foreach(t->procs, fill_one, &f);
	log_info("docker: container %.12s runs AWS Batch job %s (attempt %u,"
		 " %u cpus, %llu MiB): %zu running processes given the job",
		 e->id, ji->job.id, ji->batch.attempt, ji->cpus,
		 (unsigned long long)(ji->mem_bytes >> 20), f.n);
}

/* Docker's answer about one container (see containers.h). */
void containers_answer(struct containers *cs, struct tracker *t,
		       const struct dockerq_result *r)
{
	struct ct *e = find(cs, r->id);
	struct jt_jobinfo nj;

	if (!e || e->state != DOCKER_PENDING)
		return;		/* forgotten, or answered already */
	e->state = r->state;
	if (r->state != DOCKER_OK) {
		uint64_t wait = RETRY_FIRST_NS << (e->fails < 5 ? e->fails : 5);

		e->fails++;
		e->retry_ns = util_now_ns(CLOCK_MONOTONIC) +
			      (wait < RETRY_MAX_NS ? wait : RETRY_MAX_NS);
	} else {
		e->fails = 0;
		memset(&nj, 0, sizeof(nj));
		if (docker_batch_job(&r->info, &nj)) {
			if (r->info.pid)
				e->init_pid = r->info.pid;
			job_start(cs, t, e, &nj);
		}
	}
	if (!e->procs) {
		job_end(cs, t, e);
		drop(cs, e);
	}
}

/* Ask again about the containers whose look-up failed, when due. */
void containers_retry(struct containers *cs, uint64_t now)
{
	for (size_t i = 0; i < cs->n; i++) {
		struct ct *e = cs->v[i];

		if (e->state != DOCKER_PENDING && e->state != DOCKER_OK &&
		    e->procs && now >= e->retry_ns)
			ask(cs, e, now);
	}
}

/* How many entries, jobs, refusals. */
void containers_stats(const struct containers *cs, struct containers_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->entries = cs->n;
	st->full = cs->full;
	for (size_t i = 0; i < cs->n; i++)
		st->jobs += cs->v[i]->job[0] != '\0';
}
