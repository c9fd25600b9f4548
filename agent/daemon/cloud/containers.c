// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * containers.c - containers, Docker's answers and their AWS Batch jobs
 * (see containers.h).  A node runs tens of containers: a plain array,
 * searched by the first 16 hex digits of the id.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup_parse.h"
#include "containers.h"
#include "log.h"
#include "record.h"
#include "util.h"

#define RETRY_FIRST_NS (10ull * 1000000000ull)
#define RETRY_MAX_NS (300ull * 1000000000ull)
/* a container without processes: Docker asked again after these */
#define CHECK_FIRST_NS (250ull * 1000000ull)
#define CHECK_MAX_NS (30ull * 1000000000ull)
#define ID_LEN 64

struct ct {
	uint64_t key;			/* the id's first 16 hex digits */
	char id[ID_LEN + 1];
	char cgroup[512];		/* its job's: its ECS task's, else its own */
	char own_cgroup[512];		/* its own: runc makes and removes it */
	uint32_t procs;			/* its processes the tracker follows */
	uint32_t init_pid;		/* its first process (State.Pid once known) */
	enum docker_state state;
	unsigned fails;			/* failed look-ups in a row */
	uint64_t retry_ns;		/* CLOCK_MONOTONIC: ask again then */
	bool ending;			/* no process left: end awaited */
	unsigned checks;		/* Docker said "not ended" so often */
	uint64_t check_ns;		/* CLOCK_MONOTONIC: ask again then */
	/* CLOCK_MONOTONIC: its cgroup first seen empty or gone while Docker
	 * could not say; 0: not so */
	uint64_t empty_ns;
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
	struct containers_ops ops;
};

/* An empty table (see containers.h). */
int containers_new(size_t max, const struct containers_ops *ops,
		   struct containers **out)
{
	struct containers *cs = calloc(1, sizeof(*cs));

	*out = cs;
	if (!cs)
		return -ENOMEM;
	cs->max = max;
	cs->ops = *ops;
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

/* Forget e, its container ended (below). */
static void finish(struct containers *cs, struct ct *e);

/* Make room for one entry: one without processes goes, one without a job
 * first (a job that waited for its container's end ends now).  Whether
 * there is room. */
static bool make_room(struct containers *cs)
{
	struct ct *idle = NULL;

	for (size_t i = 0; i < cs->n; i++) {
		struct ct *e = cs->v[i];

		if (e->procs)
			continue;
		if (!e->job[0]) {
			drop(cs, e);
			return true;
		}
		if (!idle)
			idle = e;
	}
	if (!idle)
		return false;
	log_warn("docker: %zu containers followed: the end of container"
		 " %.12s is not awaited any longer", cs->max, idle->id);
	finish(cs, idle);
	return true;
}

/* A new entry for id, or NULL when the table is full of live ones. */
static struct ct *add(struct containers *cs, const char *id)
{
	struct ct *e;

	if (cs->n == cs->max && !make_room(cs))
		return NULL;
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
	int err = cs->ops.ask ? cs->ops.ask(cs->ops.ctx, e->id) : -ENOSYS;

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

/* p is now a process of its container (see containers.h). */
void containers_enter(struct containers *cs, const struct jt_proc *p)
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
		if (p->cgroup && cg_parse_container(p->cgroup, &ct)) {
			cg_ancestor(p->cgroup, ct.task_level >= 0 ?
						       ct.task_level : ct.level,
				    e->cgroup, sizeof(e->cgroup));
			cg_ancestor(p->cgroup, ct.level, e->own_cgroup,
				    sizeof(e->own_cgroup));
		}
		e->start_ns = record_realtime(cs->ops.host, p->start_ns);
		e->init_pid = p->pid;
		ask(cs, e, util_now_ns(CLOCK_MONOTONIC));
	}
	/* a process in it again: it has not ended */
	e->ending = false;
	e->checks = 0;
	e->empty_ns = 0;
	e->procs++;
}

/* The record of ji's start or end, if the containers write them. */
static void job_record(struct containers *cs, const struct jt_jobinfo *ji,
		       const char *phase)
{
	if (cs->ops.job_record)
		cs->ops.job_record(cs->ops.ctx, ji, phase);
}

/* Add the figures of usage u to the job's. */
static void usage_merge(struct jt_usage *job, struct jt_usage *u)
{
	jobs_usage_time_add(job, u);
	job->processes += u->processes;
	if (u->cgroup_peak_bytes > job->cgroup_peak_bytes)
		job->cgroup_peak_bytes = u->cgroup_peak_bytes;
	if (u->proc_peak_bytes > job->proc_peak_bytes)
		job->proc_peak_bytes = u->proc_peak_bytes;
	memset(u, 0, sizeof(*u));
}

/* Whether a container other than e still runs job id (an entry lives
 * until its container has ended). */
static bool job_goes_on(const struct containers *cs, const struct ct *e,
			const char *id)
{
	for (size_t i = 0; i < cs->n; i++)
		if (cs->v[i] != e && !strcmp(cs->v[i]->job, id))
			return true;
	return false;
}

/* e's container has ended: end its job unless another container of the
 * job goes on. */
static void job_end(struct containers *cs, struct ct *e)
{
	struct jt_jobinfo *ji;

	if (!e->job[0])
		return;
	ji = jobs_get(cs->ops.jobs, "aws-batch", e->job, false);
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
	job_record(cs, ji, "end");
	log_info("docker: AWS Batch job %s ended (container %.12s)", ji->job.id,
		 e->id);
}

/* p is gone from its container (see containers.h). */
void containers_leave(struct containers *cs, const struct jt_proc *p)
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
		e->end_ns = record_realtime(cs->ops.host, p->end_ns);
	if (--e->procs)
		return;
	if (e->state == DOCKER_PENDING)
		return;		/* the answer decides */
	if (!e->job[0]) {
		drop(cs, e);	/* no job to end */
		return;
	}
	/* the count touched zero: has the container ended?  (runc's
	 * bootstrap, a create before its start, are not its end) */
	e->ending = true;
	e->checks = 0;
	e->empty_ns = 0;
	ask(cs, e, util_now_ns(CLOCK_MONOTONIC));
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
	struct containers *cs;
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
	jobs_fill(f->cs->ops.jobs, &p->job, p->cgroup);
	f->n++;
}

/* Make e's job from Docker's answer: a start record when it is new. */
static void job_start(struct containers *cs, struct ct *e,
		      const struct jt_jobinfo *nj)
{
	struct jt_jobinfo *ji = jobs_get(cs->ops.jobs, "aws-batch", nj->job.id,
					 false);
	struct fill_ctx f = { .cs = cs, .e = e };

	if (!ji || ji->end_ns) {
		/* a new job, or a new attempt of one that ended */
		if (!ji)
			ji = jobs_get(cs->ops.jobs, "aws-batch", nj->job.id,
				      true);
		if (!ji) {
			log_error("docker: out of memory for job %s",
				  nj->job.id);
			return;
		}
		*ji = *nj;
		util_strlcpy(ji->cgroup, e->cgroup, sizeof(ji->cgroup));
		ji->start_ns = e->start_ns;
		ji->touched_ns = util_now_ns(CLOCK_MONOTONIC);
		job_record(cs, ji, "start");
	}
	util_strlcpy(e->job, ji->job.id, sizeof(e->job));
	usage_merge(&ji->usage, &e->usage);
	f.ji = ji;
	proc_table_foreach(cs->ops.procs, fill_one, &f);
	log_info("docker: container %.12s runs AWS Batch job %s (attempt %u,"
		 " %u cpus, %llu MiB): %zu running processes given the job",
		 e->id, ji->job.id, ji->batch.attempt, ji->cpus,
		 (unsigned long long)(ji->mem_bytes >> 20), f.n);
}

/* Forget e, its container ended: its job's end record unless another
 * container of the job goes on. */
static void finish(struct containers *cs, struct ct *e)
{
	job_end(cs, e);
	drop(cs, e);
}

/* Docker answered about e, which has no process left: end its job when
 * Docker says the container has ended, else ask again later. */
static void ended_or_not(struct containers *cs, struct ct *e,
			 const struct docker_info *d, uint64_t now)
{
	uint64_t wait = CHECK_FIRST_NS << (e->checks < 7 ? e->checks : 7);

	if (!e->job[0]) {
		drop(cs, e);
		return;
	}
	if (docker_ended(d)) {
		if (d->status == DOCKER_STATUS_EXITED) {
			e->exit_code = d->exit_code;
			e->exit_known = true;
		}
		finish(cs, e);
		return;
	}
	/* Docker answers: its word, not the cgroup's */
	e->ending = true;
	e->empty_ns = 0;
	e->checks++;
	e->check_ns = now + (wait < CHECK_MAX_NS ? wait : CHECK_MAX_NS);
}

/* Docker's answer about one container (see containers.h). */
void containers_answer(struct containers *cs, const struct dockerq_result *r)
{
	struct ct *e = find(cs, r->id);
	uint64_t now = util_now_ns(CLOCK_MONOTONIC);
	struct jt_jobinfo nj;

	if (!e || e->state != DOCKER_PENDING)
		return;		/* forgotten, or answered already */
	e->state = r->state;
	if (r->state == DOCKER_OK) {
		e->fails = 0;
		memset(&nj, 0, sizeof(nj));
		if (!e->job[0] && docker_batch_job(&r->info, &nj)) {
			if (r->info.pid)
				e->init_pid = r->info.pid;
			job_start(cs, e, &nj);
		}
		if (!e->procs)
			ended_or_not(cs, e, &r->info, now);
		return;
	}
	if (r->state == DOCKER_NOT_FOUND && !e->procs && e->job[0]) {
		finish(cs, e);	/* removed: it has ended */
		return;
	}
	{
		uint64_t wait = RETRY_FIRST_NS << (e->fails < 5 ? e->fails : 5);

		e->fails++;
		e->retry_ns = now + (wait < RETRY_MAX_NS ? wait : RETRY_MAX_NS);
	}
	if (e->procs)
		return;
	if (e->job[0])
		e->ending = true;	/* the cgroup will say */
	else
		drop(cs, e);
}

/* Whether e's own cgroup holds a process (see containers_ops). */
static bool populated(const struct containers *cs, const struct ct *e)
{
	return e->own_cgroup[0] && cs->ops.populated &&
	       cs->ops.populated(cs->ops.ctx, e->own_cgroup) > 0;
}

/* Ask again, end what has ended (see containers.h). */
void containers_tick(struct containers *cs, uint64_t now)
{
	/* downwards: drop() moves the last entry, already seen, here */
	for (size_t i = cs->n; i-- > 0;) {
		struct ct *e = cs->v[i];

		if (e->state == DOCKER_PENDING)
			continue;
		if (e->procs) {
			if (e->state != DOCKER_OK && now >= e->retry_ns)
				ask(cs, e, now);
			continue;
		}
		if (!e->ending)
			continue;
		if (e->state == DOCKER_OK) {
			if (now >= e->check_ns)
				ask(cs, e, now);
			continue;
		}
		/* Docker cannot say: the container's own cgroup */
		if (populated(cs, e))
			e->empty_ns = 0;
		else if (!e->empty_ns)
			e->empty_ns = now;
		if (e->empty_ns && now - e->empty_ns >= cs->ops.end_grace_ns) {
			log_info("docker: container %.12s: Docker cannot say"
				 " (%s), its cgroup %s stayed empty for %.1f s:"
				 " it has ended", e->id,
				 docker_state_names[e->state], e->own_cgroup,
				 (double)(now - e->empty_ns) / 1e9);
			finish(cs, e);
			continue;
		}
		if (now >= e->retry_ns)
			ask(cs, e, now);
	}
}

/* The real populated callback (see containers.h). */
int containers_cgroup_populated(void *ctx, const char *cgroup)
{
	static const char *const roots[] = {
		"/sys/fs/cgroup/unified", "/sys/fs/cgroup",
		"/sys/fs/cgroup/memory",
	};
	char path[640], buf[16];

	(void)ctx;
	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		ssize_t n;

		snprintf(path, sizeof(path), "%s%s/cgroup.procs", roots[i],
			 cgroup);
		n = util_read_file(path, buf, sizeof(buf));
		if (n >= 0)
			return n > 0;	/* the first that has it says */
	}
	return 0;
}

/* containers_enter for the tracker. */
static void ct_enter(void *cs, const struct jt_proc *p)
{
	containers_enter(cs, p);
}

/* containers_leave for the tracker. */
static void ct_leave(void *cs, const struct jt_proc *p)
{
	containers_leave(cs, p);
}

/* containers_usage for the tracker. */
static struct jt_usage *ct_usage(void *cs, const struct jt_proc *p)
{
	return containers_usage(cs, p);
}

/* The tracker's view of cs. */
struct tracker_containers containers_tracker(struct containers *cs)
{
	return (struct tracker_containers){ .enter = ct_enter,
					    .leave = ct_leave,
					    .usage = ct_usage, .cts = cs };
}

/* How many entries, jobs, ending jobs, refusals. */
void containers_stats(const struct containers *cs, struct containers_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->entries = cs->n;
	st->full = cs->full;
	for (size_t i = 0; i < cs->n; i++) {
		st->jobs += cs->v[i]->job[0] != '\0';
		st->ending += cs->v[i]->ending && cs->v[i]->job[0];
	}
}
