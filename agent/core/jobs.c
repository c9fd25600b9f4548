// SPDX-License-Identifier: GPL-2.0-or-later
/* jobs.c - the job registry (a node runs few jobs at once: a plain array). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jobs.h"
#include "util.h"

struct jobs {
	struct jt_jobinfo **v;
	size_t n, cap;
};

/* Create an empty registry. */
int jobs_new(struct jobs **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

/* Free the registry. */
void jobs_free(struct jobs *j)
{
	if (!j)
		return;
	for (size_t i = 0; i < j->n; i++)
		free(j->v[i]);
	free(j->v);
	free(j);
}

/* The job (scheduler, id), created on request. */
struct jt_jobinfo *jobs_get(struct jobs *j, const char *scheduler,
			    const char *id, bool create)
{
	struct jt_jobinfo *ji;

	for (size_t i = 0; i < j->n; i++)
		if ((!strcmp(j->v[i]->job.id, id) ||
		     (j->v[i]->raw_id[0] && !strcmp(j->v[i]->raw_id, id))) &&
		    !strcmp(j->v[i]->job.scheduler, scheduler))
			return j->v[i];
	if (!create)
		return NULL;
	if (j->n == j->cap) {
		size_t cap = j->cap ? j->cap * 2 : 16;
		struct jt_jobinfo **v = realloc(j->v, cap * sizeof(*v));

		if (!v)
			return NULL;
		j->v = v;
		j->cap = cap;
	}
	ji = calloc(1, sizeof(*ji));
	if (!ji)
		return NULL;
	util_strlcpy(ji->job.scheduler, scheduler, sizeof(ji->job.scheduler));
	util_strlcpy(ji->job.id, id, sizeof(ji->job.id));
	j->v[j->n++] = ji;
	return ji;
}

/* Make ji a new job of its scheduler and id. */
void jobs_reset(struct jt_jobinfo *ji)
{
	struct jt_job k = { 0 };

	util_strlcpy(k.scheduler, ji->job.scheduler, sizeof(k.scheduler));
	util_strlcpy(k.id, ji->job.id, sizeof(k.id));
	memset(ji, 0, sizeof(*ji));
	ji->job = k;
}

/* Is path the folder dir or below it? */
static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return n && strncmp(path, dir, n) == 0 &&
	       (path[n] == '\0' || path[n] == '/' || dir[n - 1] == '/');
}

/* The running job whose cgroup contains path (the deepest one wins). */
struct jt_jobinfo *jobs_by_cgroup(struct jobs *j, const char *path)
{
	struct jt_jobinfo *best = NULL;

	if (!path)
		return NULL;
	for (size_t i = 0; i < j->n; i++) {
		struct jt_jobinfo *ji = j->v[i];

		if (ji->end_ns || !ji->cgroup[0] || !under(path, ji->cgroup))
			continue;
		if (!best || strlen(ji->cgroup) > strlen(best->cgroup))
			best = ji;
	}
	return best;
}

/* Copy src into an empty dst. */
static void fill(char *dst, size_t len, const char *src)
{
	if (!dst[0] && src[0])
		util_strlcpy(dst, src, len);
}

/* Fill the empty job fields of a process from the registry. */
struct jt_jobinfo *jobs_fill(struct jobs *j, struct jt_job *pj,
			     const char *cgroup)
{
	struct jt_jobinfo *ji = NULL;

	if (pj->id[0])
		ji = jobs_get(j, pj->scheduler, pj->id, false);
	else
		ji = jobs_by_cgroup(j, cgroup);
	if (!ji)
		return NULL;
	fill(pj->scheduler, sizeof(pj->scheduler), ji->job.scheduler);
	/* an array task's process names it by the raw id: "9" is "4_1" */
	util_strlcpy(pj->id, ji->job.id, sizeof(pj->id));
	fill(pj->run, sizeof(pj->run), ji->job.run);
	fill(pj->pipeline, sizeof(pj->pipeline), ji->job.pipeline);
	fill(pj->task, sizeof(pj->task), ji->job.task);
	fill(pj->user, sizeof(pj->user), ji->job.user);
	fill(pj->account, sizeof(pj->account), ji->job.account);
	fill(pj->cost_center, sizeof(pj->cost_center), ji->job.cost_center);
	/* the account pays unless a cost center was named */
	fill(pj->cost_center, sizeof(pj->cost_center), ji->job.account);
	return ji;
}

/* The usage of one step of a job. */
struct jt_usage *jobs_step_usage(struct jt_jobinfo *ji, const char *step)
{
	struct jt_step_usage *su;

	if (!step || !*step)
		return NULL;
	for (unsigned i = 0; i < ji->nsteps; i++)
		if (!strcmp(ji->steps[i].step, step))
			return &ji->steps[i].u;
	if (ji->nsteps == JT_JOB_STEPS)
		return NULL;
	su = &ji->steps[ji->nsteps++];
	memset(su, 0, sizeof(*su));
	util_strlcpy(su->step, step, sizeof(su->step));
	return &su->u;
}

/* Call fn on the usage of every job and step. */
static void each_usage(struct jobs *j, void (*fn)(struct jt_usage *u))
{
	for (size_t i = 0; i < j->n; i++) {
		fn(&j->v[i]->usage);
		for (unsigned k = 0; k < j->v[i]->nsteps; k++)
			fn(&j->v[i]->steps[k].u);
	}
}

/* Zero the current sum. */
static void rss_zero(struct jt_usage *u)
{
	u->rss_sum_now = 0;
}

/* Keep the current sum as the peak if higher. */
static void rss_fold(struct jt_usage *u)
{
	if (u->rss_sum_now > u->rss_sum_peak_bytes)
		u->rss_sum_peak_bytes = u->rss_sum_now;
}

/* The memory peak of a job or step and its source (jobs.h). */
uint64_t jobs_mem_peak(const struct jt_usage *u, enum jt_mem_source *src)
{
	enum jt_mem_source s = JT_MEM_NONE;
	uint64_t v = 0;

	if (u->cgroup_peak_bytes) {
		s = JT_MEM_CGROUP;
		v = u->cgroup_peak_bytes;
	} else if (u->rss_sum_peak_bytes &&
		   u->rss_sum_peak_bytes >= u->proc_peak_bytes) {
		s = JT_MEM_SAMPLES;
		v = u->rss_sum_peak_bytes;
	} else if (u->proc_peak_bytes) {
		s = JT_MEM_LARGEST_PROCESS;
		v = u->proc_peak_bytes;
	}
	if (src)
		*src = s;
	return v;
}

/* The scheduler of a request that names none (jobs.h). */
const char *jobs_default_scheduler(const struct jobs *j, const char *id,
				   bool by_pid)
{
	const char *found = NULL, *ended = NULL;

	for (size_t i = 0; i < j->n; i++) {
		const struct jt_jobinfo *ji = j->v[i];

		if (strcmp(ji->job.id, id))
			continue;
		if (ji->end_ns) {
			ended = ji->job.scheduler;	/* the latest */
			continue;
		}
		if (found)
			return by_pid ? "local" : "slurm";	/* ambiguous */
		found = ji->job.scheduler;
	}
	if (!found)
		found = ended;
	return found ? found : by_pid ? "local" : "slurm";
}

/* Start a sample pass. */
void jobs_rss_begin(struct jobs *j)
{
	each_usage(j, rss_zero);
}

/* End a sample pass. */
void jobs_rss_end(struct jobs *j)
{
	each_usage(j, rss_fold);
}

/* Forget jobs that ended long enough ago. */
void jobs_expire(struct jobs *j, uint64_t now_ns, uint64_t keep_ns)
{
	size_t k = 0;

	for (size_t i = 0; i < j->n; i++) {
		struct jt_jobinfo *ji = j->v[i];

		if (ji->end_ns && !ji->end_pending &&
		    now_ns - ji->touched_ns > keep_ns)
			free(ji);
		else
			j->v[k++] = ji;
	}
	j->n = k;
}

/* The running jobs, in the order they were registered. */
size_t jobs_running(const struct jobs *j, const struct jt_jobinfo **out,
		    size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < j->n; i++) {
		if (j->v[i]->end_ns)
			continue;
		if (n < max)
			out[n] = j->v[i];
		n++;
	}
	return n;
}

/* Every running job. */
void jobs_foreach_running(struct jobs *j,
			  void (*fn)(struct jt_jobinfo *ji, void *arg),
			  void *arg)
{
	for (size_t i = 0; i < j->n; i++)
		if (!j->v[i]->end_ns)
			fn(j->v[i], arg);
}

/* Every job whose record waits. */
void jobs_foreach_pending(struct jobs *j,
			  void (*fn)(struct jt_jobinfo *ji, void *arg),
			  void *arg)
{
	for (size_t i = 0; i < j->n; i++)
		if (j->v[i]->start_pending || j->v[i]->end_pending)
			fn(j->v[i], arg);
}

/* Number of jobs known and running. */
size_t jobs_count(const struct jobs *j, size_t *running)
{
	size_t r = 0;

	for (size_t i = 0; i < j->n; i++)
		r += !j->v[i]->end_ns;
	if (running)
		*running = r;
	return j->n;
}

/* Number of jobs that uid registered without control rights. */
size_t jobs_count_by_user(const struct jobs *j, uint32_t uid)
{
	size_t n = 0;

	for (size_t i = 0; i < j->n; i++)
		n += j->v[i]->by_user && j->v[i]->uid == uid;
	return n;
}

/* Add b's time figures to a. */
void jobs_usage_time_add(struct jt_usage *a, const struct jt_usage *b)
{
	a->cpu_s += b->cpu_s;
	a->wall_s += b->wall_s;
	a->blkio_s += b->blkio_s;
	timesplit_waits_add(&a->w, &b->w);
}

/* u's time figures as a split's input. */
void jobs_usage_split_in(const struct jt_usage *u, struct timesplit_in *in)
{
	*in = (struct timesplit_in){ .wall_s = u->wall_s, .cpu_s = u->cpu_s,
				     .blkio_s = u->blkio_s, .w = u->w };
}
