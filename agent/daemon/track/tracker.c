// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * tracker.c - kernel events and samples in, schema v1 records out.
 *
 * Figures are the process's own: the kernel side sums its threads and
 * never its reaped children (see bpf/events.h).  A finished process adds
 * its CPU to its job and step, and the charge peaks of the job's and
 * step's memory cgroups, which the kernel read at the exit, to theirs.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup_parse.h"
#include "classify.h"
#include "config.h"
#include "cost.h"
#include "exetrust.h"
#include "log.h"
#include "procfiles.h"
#include "stages.h"
#include "tracker.h"
#include "util.h"

/* The tracker's state: tracker.h's functions are the way in. */
struct tracker {
	struct proc_table *procs;	/* owned */
	struct rules *rules;		/* borrowed, may be NULL: defaults */
	struct jobs *jobs;		/* borrowed */
	struct tracker_containers ct;	/* borrowed; ct.cts NULL: none */
	const struct jt_host *host;	/* borrowed */
	const struct jt_config *cfg;	/* borrowed, NULL: job end records
					 * carry no cost (see cost.h) */
	struct tracker_cb cb;
	struct jbuf jb;
	unsigned sample_gen;	/* sample passes so far */
	/* collector.record = "jobs": processes outside jobs get no record,
	 * they are counted here (host records carry it) */
	bool jobs_only;
	struct jt_outside outside;
	uint64_t young_ns;	/* first_sample: a job's process no pass
				 * has seen is due a pass this old; 0: off */
	uint64_t young_due_ns;	/* CLOCK_BOOTTIME when the first such is
				 * due, 0: none */
	/* the kernel follows files (collector_files()): process records
	 * list them, samples have progress; else files are null */
	bool files;

	uint64_t events_seen;
	uint64_t exits_lost;
	uint64_t oom_kills;
	uint64_t files_named[PROCFILES_NAMED_NR];	/* tracker_stats */
	uint64_t excluded;
};

/* A new empty tracker. */
int tracker_new(struct rules *rules, struct jobs *jobs,
		const struct jt_host *host, const struct tracker_cb *cb,
		struct tracker **out)
{
	struct tracker *t = calloc(1, sizeof(*t));

	*out = NULL;
	if (!t)
		return -ENOMEM;
	jbuf_init(&t->jb);
	t->rules = rules;
	t->jobs = jobs;
	t->host = host;
	t->cb = *cb;
	if (proc_table_new(&t->procs)) {
		tracker_free(t);
		return -ENOMEM;
	}
	*out = t;
	return 0;
}

/* Free what the tracker owns. */
void tracker_free(struct tracker *t)
{
	if (!t)
		return;
	proc_table_free(t->procs);
	jbuf_free(&t->jb);
	free(t);
}

/* What the configuration decides (see tracker.h). */
void tracker_configure(struct tracker *t, const struct jt_config *cfg)
{
	t->cfg = cfg;
	t->jobs_only = cfg->record_mode == JT_RECORD_JOBS;
	tracker_set_first_sample(t, cfg->first_sample_ms * 1000000ull);
}

/* first_sample from now on; off forgets the one due. */
void tracker_set_first_sample(struct tracker *t, uint64_t young_ns)
{
	t->young_ns = young_ns;
	if (!young_ns)
		t->young_due_ns = 0;
}

/* Whether the kernel follows files from now on. */
void tracker_set_files(struct tracker *t, bool files)
{
	t->files = files;
}

/* The containers from now on. */
void tracker_set_containers(struct tracker *t,
			    const struct tracker_containers *ct)
{
	t->ct = *ct;
}

/* The process table. */
struct proc_table *tracker_procs(const struct tracker *t)
{
	return t->procs;
}

/* The counters now. */
struct tracker_stats tracker_stats(const struct tracker *t)
{
	struct tracker_stats s = {
		.events_seen = t->events_seen,
		.exits_lost = t->exits_lost,
		.oom_kills = t->oom_kills,
		.excluded = t->excluded,
		.tracked = proc_table_count(t->procs),
		.passes = t->sample_gen,
		.jobs_only = t->jobs_only,
		.outside = t->outside,
	};

	memcpy(s.files_named, t->files_named, sizeof(s.files_named));
	return s;
}

/* Hand the record in t->jb on. */
static void put(struct tracker *t)
{
	t->cb.record(t->cb.ctx, &t->jb);
}

/* Choose the cgroup that tells jobs apart: v2 unless it is the root. */
static const char *pick_cgroup(const char *cg2, const char *cg1)
{
	if (cg2 && *cg2 && strcmp(cg2, "/") != 0)
		return cg2;
	if (cg1 && *cg1)
		return cg1;
	return cg2;
}

/* Set a slurmstepd's job from its title ("slurmstepd: [7.batch]"). */
static bool stepd_title_job(struct jt_proc *stepd, const char *title)
{
	struct cg_slurm s;

	if (!cg_parse_slurmstepd_title(title, &s))
		return false;
	util_strlcpy(stepd->job.scheduler, "slurm", sizeof(stepd->job.scheduler));
	util_strlcpy(stepd->job.id, s.job, sizeof(stepd->job.id));
	util_strlcpy(stepd->job.step, s.step, sizeof(stepd->job.step));
	return true;
}

/* Job of a slurmstepd, from its title in /proc (set after its exec). */
static bool slurmstepd_job(struct jt_proc *stepd)
{
	char path[64], buf[256];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%u/cmdline", stepd->pid);
	n = util_read_file(path, buf, sizeof(buf));
	if (n <= 0)
		return false;
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
	return stepd_title_job(stepd, buf);
}

/* Levels from memcg up to the job's memory cgroup (returned) and its
 * step's (*step_level), each -1 when it has none there; one parse. */
int tracker_memcg_levels(const char *memcg, const struct jt_job *job,
			 const char *registered_cgroup, int *step_level)
{
	struct cg_slurm s;

	*step_level = -1;
	if (!memcg || !*memcg || !job->id[0])
		return -1;
	if (!strcmp(job->scheduler, "slurm") && cg_parse_slurm(memcg, &s) &&
	    !strcmp(s.job, job->id)) {
		if (!strcmp(s.step, job->step))
			*step_level = s.step_level;
		return s.job_level;
	}
	return registered_cgroup ? cg_level_below(memcg, registered_cgroup)
				 : -1;
}

/*
 * For a process of a container that may turn out to be a job (an AWS
 * Batch job, known when Docker answers): the levels from memcg up to the
 * container's ECS task's, else the container's own memory cgroup; -1
 * when memcg is not in the container named ("runtime://id").
 */
static int container_memcg_level(const char *memcg, const char *container)
{
	const char *id = strstr(container, "://");
	struct cg_container ct;

	if (!id || !cg_parse_container(memcg, &ct) || strcmp(ct.id, id + 3))
		return -1;
	return ct.task_level >= 0 ? ct.task_level : ct.level;
}

/* Where p's job's and step's memory cgroups sit above its own (ji: its
 * registered job, or NULL, which learns its memory cgroup's path). */
static void memcg_levels(struct jt_proc *p, struct jt_jobinfo *ji,
			 const char *memcg)
{
	int lj, ls;

	if (!memcg)
		return;		/* no new cgroup: keep what it had */
	if (ji && ji->raw_id[0]) {
		/* the cgroup names an array task by its raw id (job_9) */
		struct jt_job raw = p->job;

		util_strlcpy(raw.id, ji->raw_id, sizeof(raw.id));
		lj = tracker_memcg_levels(memcg, &raw, ji->cgroup, &ls);
	} else {
		lj = tracker_memcg_levels(memcg, &p->job, ji ? ji->cgroup : NULL,
					  &ls);
	}
	if (ji && !ji->memcg[0] && lj >= 0 && !ji->end_ns &&
	    cg_ancestor(memcg, lj, ji->memcg, sizeof(ji->memcg)) < 0)
		ji->memcg[0] = '\0';
	if (lj < 0 && p->container[0])
		lj = container_memcg_level(memcg, p->container);
	p->memcg_job_up = lj >= 0 && lj < JT_MEMCG_LEVELS ? lj + 1 : 0;
	p->memcg_step_up = ls >= 0 && ls < JT_MEMCG_LEVELS ? ls + 1 : 0;
}

/* Is the Slurm job raw_id (as a cgroup names it) the job j? */
static bool same_job(struct tracker *t, const struct jt_job *j,
		     const char *raw_id)
{
	const struct jt_jobinfo *ji = jobs_get(t->jobs, "slurm", raw_id, false);

	return ji && !strcmp(j->scheduler, "slurm") && !strcmp(ji->job.id, j->id);
}

/*
 * Count p as a process of its container, or no longer (want false, or
 * p excluded by the rules: a runtime's own bootstrap such as `runc init`
 * is no process of the container's job).
 */
static void container_sync(struct tracker *t, struct jt_proc *p, bool want)
{
	bool in = p->state & JT_PS_IN_CT;

	want = want && t->ct.cts && p->container[0] &&
	       !(p->state & JT_PS_EXCLUDED);
	if (want == in)
		return;
	if (in) {
		t->ct.leave(t->ct.cts, p);
		p->state &= ~JT_PS_IN_CT;
	} else {
		p->state |= JT_PS_IN_CT;
		t->ct.enter(t->ct.cts, p);
	}
}

/* Is the cgroup up levels above path root's (see tracker_cb.cg_root)? */
static bool cg_root(const struct tracker *t, const char *path, int up)
{
	char dir[512];

	if (!t->cb.cg_root)
		return true;
	return cg_ancestor(path, up, dir, sizeof(dir)) == 0 &&
	       t->cb.cg_root(t->cb.ctx, dir);
}

/* Does path name a Slurm job in a cgroup root made (*s filled)? */
static bool slurm_cgroup(const struct tracker *t, const char *path,
			 struct cg_slurm *s)
{
	return path && cg_parse_slurm(path, s) && cg_root(t, path, s->job_level);
}

/*
 * Tie p to its container and job: the cgroup path first (Slurm's
 * job_N/step_S layout), else the parent's job, else a slurmstepd parent.
 * memcg is p's memory cgroup when it is known anew, else NULL.
 */
static void correlate(struct tracker *t, struct jt_proc *p,
		      struct jt_proc *parent, const char *memcg)
{
	char container[sizeof(p->container)] = "";
	struct cg_container ct;
	struct cg_slurm s;

	if (p->cgroup && cg_parse_container(p->cgroup, &ct) &&
	    cg_root(t, p->cgroup, ct.level))
		snprintf(container, sizeof(container), "%s://%s", ct.runtime,
			 ct.id);
	if (strcmp(container, p->container)) {
		container_sync(t, p, false);	/* out of the old one */
		memcpy(p->container, container, sizeof(p->container));
	}
	/* hybrid nodes: Slurm's v1 plugin moves tasks in the v1 hierarchies
	 * only, so the v2 path can name a systemd unit (an ssh session that
	 * pam_slurm_adopt adopted) while the memory cgroup names the job */
	if (slurm_cgroup(t, p->cgroup, &s) || slurm_cgroup(t, memcg, &s)) {
		if ((strcmp(p->job.id, s.job) && !same_job(t, &p->job, s.job)) ||
		    strcmp(p->job.step, s.step))
			memset(&p->job, 0, sizeof(p->job));
		util_strlcpy(p->job.scheduler, "slurm", sizeof(p->job.scheduler));
		util_strlcpy(p->job.id, s.job, sizeof(p->job.id));
		util_strlcpy(p->job.step, s.step, sizeof(p->job.step));
	} else if (parent) {
		/* root's slurmstepd only: a user can name a program so */
		if (!parent->job.id[0] && parent->uid == 0 &&
		    strcmp(parent->comm, "slurmstepd") == 0)
			slurmstepd_job(parent);
		if (parent->job.id[0] && !p->job.id[0])
			p->job = parent->job;
	}
	/* what the hooks registered: user, account, workflow run */
	memcg_levels(p, jobs_fill(t->jobs, &p->job, p->cgroup), memcg);
}

/* Copy what a forked child shares with its parent. */
static void inherit(struct jt_proc *p, const struct jt_proc *parent)
{
	if (parent->exe)
		proc_set_str(&p->exe, parent->exe, strlen(parent->exe));
	if (parent->argv)
		proc_set_str(&p->argv, parent->argv, parent->argv_len);
	p->argv_len = parent->argv ? parent->argv_len : 0;
	if (parent->cgroup)
		proc_set_str(&p->cgroup, parent->cgroup, strlen(parent->cgroup));
	memcpy(p->container, parent->container, sizeof(p->container));
	p->job = parent->job;
	p->memcg_job_up = parent->memcg_job_up;
	p->memcg_step_up = parent->memcg_step_up;
	memcpy(p->tool_name, parent->tool_name, sizeof(p->tool_name));
	memcpy(p->tool_category, parent->tool_category,
	       sizeof(p->tool_category));
	memcpy(p->tool_version, parent->tool_version, sizeof(p->tool_version));
	p->state |= parent->state & (JT_PS_ARGV_TRUNC | JT_PS_EXE_TRUNC |
				     JT_PS_EXE_SYSTEM | JT_PS_EXE_CHECK);
}

/*
 * Exclude p: no record, and its later events (with the tree, its
 * descendants' too) stay in the kernel.
 */
static void exclude(struct tracker *t, struct jt_proc *p, bool tree)
{
	/* the entry stays (marked) until the process is gone, so that events
	 * already on their way from the kernel make no record either */
	p->state |= JT_PS_EXCLUDED | (tree ? JT_PS_EXCL_TREE : 0);
	proc_free_strings(p);
	if (t->cb.exclude)
		t->cb.exclude(t->cb.ctx, p->pid, tree);
	t->excluded++;
}

/* Apply the rules' verdict; returns false when p is excluded. */
/*
 * Is p a `sh -c STRING` child of a workflow engine's process, with no task
 * of its own yet?  Then *engine is that process and *cmd the STRING.
 */
static bool engine_shell(struct tracker *t, const struct jt_proc *p,
			 const struct jt_proc **engine, const char **cmd)
{
	static const char *const shells[] = { "sh", "bash", "dash", "zsh",
					      "ksh" };
	const char *a0 = p->argv, *a1, *base;
	const struct jt_proc *par;
	size_t n0;

	if (!t->cb.engine_job || p->job.task[0] || !a0 || !p->argv_len)
		return false;
	n0 = strnlen(a0, p->argv_len);
	if (n0 + 4 >= p->argv_len)
		return false;
	a1 = a0 + n0 + 1;
	if (strcmp(a1, "-c"))
		return false;
	base = util_basename(a0);
	for (size_t i = 0; i < sizeof(shells) / sizeof(shells[0]); i++) {
		if (strcmp(base, shells[i]))
			continue;
		par = proc_table_parent(t->procs, p);
		if (!par || strcmp(par->tool_category, "workflow-engine"))
			return false;
		*engine = par;
		*cmd = a1 + 3;	/* argv has a NUL after its argv_len bytes */
		return true;
	}
	return false;
}

/* Run the rules on p, with what its workflow engine says of its job. */
static bool classify(struct tracker *t, struct jt_proc *p)
{
	const struct rules_engine_job *ejp = NULL;
	const struct jt_proc *engine;
	struct rules_engine_job ej;
	enum classify_verdict v;
	enum stage prev;
	const char *cmd;

	/* before the rules' stage: the engine's answer may be waited for
	 * (smklogq.h), outside their deadline */
	if (engine_shell(t, p, &engine, &cmd) &&
	    t->cb.engine_job(t->cb.ctx, engine, cmd, &ej))
		ejp = &ej;
	prev = stages_enter(STAGE_CLASSIFY);
	v = classify_process(t->rules, p, t->procs, ejp);

	stages_leave(prev);
	p->state &= ~(JT_PS_EXCLUDED | JT_PS_EXCL_TREE);
	if (v == CLASSIFY_INCLUDE && t->cb.engine_seen &&
	    !strcmp(p->tool_category, "workflow-engine"))
		t->cb.engine_seen(t->cb.ctx, p);
	if (v == CLASSIFY_INCLUDE)
		return true;
	exclude(t, p, v == CLASSIFY_EXCLUDE_TREE);
	return false;
}

/* Seconds as the record writes them (json_double: whole microseconds),
 * so that a job's CPU is the sum of its process records' to the last
 * digit, in the report and in cost alike. */
static double as_written(double s)
{
	return (double)llround(s * 1e6) / 1e6;
}

/* Add a finished process's own figures to a job's or step's usage. */
static void usage_add(struct jt_usage *u, const struct jt_proc *p,
		      const struct jt_ev_exit *e, unsigned up)
{
	struct jt_usage t = {
		.cpu_s = as_written(p->c.cpu_user_s) +
			 as_written(p->c.cpu_sys_s),
		.wall_s = p->end_ns > p->start_ns ?
			  (p->end_ns - p->start_ns) / 1e9 : 0,
		.blkio_s = p->c.blkio_delay_s, .w = p->c.w,
	};

	jobs_usage_time_add(u, &t);
	u->processes++;
	if (p->c.peak_rss_bytes > u->proc_peak_bytes)
		u->proc_peak_bytes = p->c.peak_rss_bytes;
	if (e && up && up <= e->memcg_levels &&
	    e->memcg_peak_bytes[up - 1] > u->cgroup_peak_bytes)
		u->cgroup_peak_bytes = e->memcg_peak_bytes[up - 1];
}

/* A finished process counts towards its registered job's usage. */
static void job_account(struct jt_jobinfo *ji, const struct jt_proc *p,
			const struct jt_ev_exit *e)
{
	struct jt_usage *su = jobs_step_usage(ji, p->job.step);

	usage_add(&ji->usage, p, e, p->memcg_job_up);
	if (su)
		usage_add(su, p, e, p->memcg_step_up);
}

/* Remove p from the table, and from its container. */
static void forget(struct tracker *t, struct jt_proc *p)
{
	container_sync(t, p, false);
	proc_table_remove(t->procs, p);
}

/* The AWS Batch fields of p's job for its records, or NULL. */
static const struct jt_batch *batch_of(struct tracker *t,
				       const struct jt_proc *p,
				       const struct jt_jobinfo *ji)
{
	if (!p || !p->job.id[0])
		return NULL;
	if (!ji)
		ji = jobs_get(t->jobs, p->job.scheduler, p->job.id, false);
	/* a Slurm array task's index too */
	return ji && (ji->batch.has_array ||
		      !strcmp(p->job.scheduler, "aws-batch")) ? &ji->batch : NULL;
}

/* Write one finished process to the spool and forget it. */
static void emit_process(struct tracker *t, struct jt_proc *p,
			 const struct jt_ev_exit *e)
{
	struct jt_jobinfo *ji = NULL;
	struct jt_usage *cu;
	enum stage prev;
	char id[37];

	if (p->state & JT_PS_EXCLUDED) {
		forget(t, p);
		return;
	}
	/* a job-update, or Docker's answer, may have come after the exec */
	if ((p->job.id[0] || p->container[0]) &&
	    (ji = jobs_fill(t->jobs, &p->job, p->cgroup)))
		job_account(ji, p, e);
	else if (t->ct.cts && p->container[0] &&
		 (cu = t->ct.usage(t->ct.cts, p)))
		usage_add(cu, p, e, p->memcg_job_up);
	if (t->jobs_only && !p->job.id[0]) {
		/* counted, not recorded (collector.record = "jobs") */
		t->outside.processes++;
		t->outside.cpu_s += as_written(p->c.cpu_user_s) +
				    as_written(p->c.cpu_sys_s);
		t->outside.read_bytes += p->c.read_bytes;
		t->outside.write_bytes += p->c.write_bytes;
		if (t->cb.gone)
			t->cb.gone(t->cb.ctx, p);
		forget(t, p);
		return;
	}
	prev = stages_enter(STAGE_ENCODE);
	if (t->files)
		procfiles_finish(p, e, t->rules, t->procs, t->cfg ?
				 t->cfg->files_max_per_process : 64);
	record_process_id(t->host, p, id);
	jbuf_reset(&t->jb);
	record_process(&t->jb, t->host, p, batch_of(t, p, ji), id);
	procfiles_free(p);
	stages_leave(prev);
	put(t);
	if (t->cb.gone)
		t->cb.gone(t->cb.ctx, p);
	forget(t, p);
}

/* A job's process no pass has seen: note when it is due a first one. */
static void young_note(struct tracker *t, const struct jt_proc *p)
{
	uint64_t due = p->start_ns + t->young_ns;

	if (!t->young_ns || !p->job.id[0] || p->sample_ns ||
	    (p->state & (JT_PS_EXCLUDED | JT_PS_YOUNG_DUE)))
		return;
	if (!t->young_due_ns || due < t->young_due_ns)
		t->young_due_ns = due;
}

/* Context of the walks after a pass, and of tracker_young_due()'s. */
struct pass_ctx {
	struct tracker *t;
	unsigned gen;
	uint64_t before_ns;	/* the pass's start; young: now */
	bool due;		/* young: a first sample is due */
};

/* One process: due now, or maybe the next one due (proc_table's fn). */
static void young_one(struct jt_proc *p, void *arg)
{
	struct pass_ctx *yc = arg;

	if (p->end_ns || (p->state & JT_PS_EXITED))
		return;
	if (p->start_ns + yc->t->young_ns > yc->before_ns) {
		young_note(yc->t, p);
		return;
	}
	/* once: a process a pass cannot see does not ask again */
	if (p->job.id[0] && !p->sample_ns &&
	    !(p->state & (JT_PS_EXCLUDED | JT_PS_YOUNG_DUE))) {
		p->state |= JT_PS_YOUNG_DUE;
		yc->due = true;
	}
}

/* Is a first sample due (see tracker.h)? */
bool tracker_young_due(struct tracker *t, uint64_t now_ns)
{
	struct pass_ctx yc = { .t = t, .before_ns = now_ns };

	if (!t->young_due_ns || now_ns < t->young_due_ns)
		return false;
	t->young_due_ns = 0;
	proc_table_foreach(t->procs, young_one, &yc);
	return yc.due;
}

/* A fork: a new process that shares its parent's program and job. */
static void on_fork(struct tracker *t, const struct jt_ev_fork *e)
{
	struct jt_proc *p, *parent;
	int created;

	p = proc_table_get(t->procs, e->hdr.pid, e->hdr.start_ns, &created);
	if (!p)
		return;
	p->last_seen_ns = e->hdr.ts_ns;
	if (!created)
		return;
	p->ppid = e->ppid;
	p->parent_start_ns = e->parent_start_ns;
	p->uid = e->uid;
	util_strlcpy(p->comm, e->comm, sizeof(p->comm));
	parent = proc_table_parent(t->procs, p);
	/* a slurmstepd's title, caught by the kernel at the fork: short steps
	 * are gone before /proc could be read */
	/* the child's uid is its parent's at the fork: a slurmstepd is
	 * root's, a program a user named slurmstepd is not */
	if (parent && e->parent_title[0] && !parent->job.id[0] && e->uid == 0)
		stepd_title_job(parent, e->parent_title);
	if (parent && (parent->state & JT_PS_EXCL_TREE)) {
		exclude(t, p, true);	/* forked before the kernel knew */
	} else if (parent) {
		inherit(p, parent);
		container_sync(t, p, true);
		young_note(t, p);
	} else {
		if (e->parent_title[0] && e->uid == 0)
			stepd_title_job(p, e->parent_title);
		/* nothing to inherit: the defaults, as for an exit alone */
		classify_process(NULL, p, NULL, NULL);
	}
}

/* An exec: the process now runs a new program, maybe in a new cgroup. */
static void on_exec(struct tracker *t, const struct jt_ev_exec *e)
{
	struct jt_proc *p, *parent;
	const char *cg;
	int created;
	size_t argc;
	char *argv;

	p = proc_table_get(t->procs, e->hdr.pid, e->hdr.start_ns, &created);
	if (!p)
		return;
	if (created)
		p->state |= JT_PS_NO_FORK;
	p->last_seen_ns = e->hdr.ts_ns;
	if (p->state & JT_PS_EXCL_TREE)
		return;	/* sent before the kernel knew: the tree stays out */
	p->ppid = e->ppid;
	p->parent_start_ns = e->parent_start_ns;
	p->uid = e->uid;
	p->state |= JT_PS_EXECED;
	util_strlcpy(p->comm, e->comm, sizeof(p->comm));
	proc_set_str(&p->exe, e->filename, strlen(e->filename));
	argv = decode_argv_dup(e->argv, e->argv_len, &argc);
	if (argv) {
		free(p->argv);
		p->argv = argv;
		p->argv_len = e->argv_len;
	}
	p->state &= ~(JT_PS_ARGV_TRUNC | JT_PS_EXE_TRUNC | JT_PS_EXE_SYSTEM |
		      JT_PS_EXE_CHECK);
	if (e->flags & JT_EF_ARGV_TRUNC)
		p->state |= JT_PS_ARGV_TRUNC;
	if (e->flags & JT_EF_EXE_TRUNC)
		p->state |= JT_PS_EXE_TRUNC;
	/* the kernel vouches for the file it ran, under that file's name;
	 * a script's file it no longer holds: asked of /proc if need be */
	else if (e->flags & JT_EF_SCRIPT)
		p->state |= JT_PS_EXE_CHECK;
	else if ((e->flags & JT_EF_EXE_ROOT) &&
		 exetrust_named(e->filename, e->exe_name))
		p->state |= JT_PS_EXE_SYSTEM;
	cg = pick_cgroup(e->cg2, e->cg1);
	if (cg)
		proc_set_str(&p->cgroup, cg, strlen(cg));
	parent = proc_table_parent(t->procs, p);
	/* the kernel names the memory controller's cgroup in cg1, on v1
	 * and v2 alike */
	correlate(t, p, parent, e->cg1);
	if (classify(t, p))
		young_note(t, p);
	container_sync(t, p, true);
}

/* Add the kernel's I/O counters to c. */
static void io_add(struct jt_counters *c, const struct jt_io *io)
{
	c->rchar += io->rchar;
	c->wchar += io->wchar;
	c->read_bytes += io->read_bytes;
	c->write_bytes += io->write_bytes;
	c->cancelled_write_bytes += io->cancelled_write_bytes;
}

/* Add the kernel's waits of a thread or a process to c (seconds). */
static void wait_add(struct jt_counters *c, const struct jt_wait *w)
{
	c->w.run_queue_s += w->run_delay_ns / 1e9;
	c->w.reclaim_s += w->reclaim_ns / 1e9;
	c->w.thrashing_s += w->thrashing_ns / 1e9;
	c->w.swapin_s += w->swapin_ns / 1e9;
	c->w.compact_s += w->compact_ns / 1e9;
	c->w.net_s += w->net_ns / 1e9;
	c->w.children_s += w->child_ns / 1e9;
	c->w.nvcsw += w->nvcsw;
	c->w.nivcsw += w->nivcsw;
}

/* Exit totals of the kernel into p's counters. */
static void exit_counters(struct jt_proc *p, const struct jt_ev_exit *e)
{
	struct jt_exit_status st;

	p->end_ns = e->hdr.ts_ns;
	p->state |= JT_PS_EXITED;
	decode_exit_status(e->exit_status, &st);
	p->exit_code = st.code;
	p->exit_signal = st.signal;
	p->core_dumped = st.core_dumped;
	p->oom_killed = e->flags & JT_XF_OOM;
	/* the kernel's totals replace the last sample's */
	memset(&p->c, 0, sizeof(p->c));
	decode_cpu_split(e->runtime_ns, e->utime_ns, e->stime_ns,
			 &p->c.cpu_user_s, &p->c.cpu_sys_s);
	p->c.peak_rss_bytes = e->peak_rss_bytes ? e->peak_rss_bytes
						: e->maxrss_kernel_bytes;
	p->c.maxrss_kernel_bytes = e->maxrss_kernel_bytes;
	io_add(&p->c, &e->io);
	p->c.blkio_delay_s = (e->flags & JT_XF_DELAYACCT)
				     ? e->blkio_delay_ns / 1e9 : 0;
	p->c.rx_bytes = e->rx_bytes;
	p->c.tx_bytes = e->tx_bytes;
	wait_add(&p->c, &e->wait);
}

/* The last thread of a process exited: final totals, then the record. */
static void on_exit_ev(struct tracker *t, const struct jt_ev_exit *e)
{
	struct jt_proc *p;
	int created;

	p = proc_table_get(t->procs, e->hdr.pid, e->hdr.start_ns, &created);
	if (!p)
		return;
	if (created) {
		p->state |= JT_PS_NO_FORK;
		p->ppid = e->ppid;
		util_strlcpy(p->comm, e->comm, sizeof(p->comm));
		classify_process(NULL, p, NULL, NULL);
	}
	exit_counters(p, e);
	emit_process(t, p, e);
}

/* An OOM kill: a `signal` record now; the process record follows at exit. */
static void on_oom(struct tracker *t, const struct jt_ev_oom *e)
{
	struct jt_proc *p = proc_table_lookup(t->procs, e->hdr.pid,
					      e->hdr.start_ns);
	struct jbuf *b = &t->jb;
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	struct jt_jobinfo *ji;
	struct jt_oom oom;
	char id[37], key[32];

	t->oom_kills++;
	if (p && p->job.id[0] &&
	    (ji = jobs_get(t->jobs, p->job.scheduler, p->job.id, false)))
		ji->oom = true;	/* its state: OUT_OF_MEMORY */
	log_info("OOM kill of pid %u (%s), rss %" PRIu64 " KiB", e->hdr.pid,
		 e->comm, (uint64_t)(e->rss_pages * page / 1024));
	snprintf(key, sizeof(key), "%u", e->hdr.pid);
	record_make_id(t->host, "signal", key, e->hdr.ts_ns, id);
	oom.pid = e->hdr.pid;
	oom.comm = e->comm;
	oom.boot_ns = e->hdr.ts_ns;
	oom.rss_bytes = e->rss_pages * page;
	oom.total_vm_bytes = e->total_vm_pages * page;
	jbuf_reset(b);
	record_oom(b, t->host, p, batch_of(t, p, NULL), &oom, id);
	put(t);
}

/* A spot interruption notice: a `signal` record naming the running jobs
 * (the record id is the notice's: a restarted agent that reads it again
 * writes the same record, which the sinks keep once). */
void tracker_spot(struct tracker *t, const struct jt_spot *s)
{
	const struct jt_jobinfo *run[TRACKER_SPOT_JOBS];
	size_t n = jobs_running(t->jobs, run, TRACKER_SPOT_JOBS);
	char id[37], key[32], when[32];

	if (n > TRACKER_SPOT_JOBS) {
		log_warn("spot interruption: %zu jobs run, the record names"
			 " the first %d", n, TRACKER_SPOT_JOBS);
		n = TRACKER_SPOT_JOBS;
	}
	json_format_time(s->action_ns, when, sizeof(when));
	log_warn("spot interruption notice: EC2 will %s this instance at %s;"
		 " %zu jobs running", s->action, when, n);
	snprintf(key, sizeof(key), "spot:%s", s->action);
	record_make_id(t->host, "signal", key, s->action_ns, id);
	jbuf_reset(&t->jb);
	record_spot(&t->jb, t->host, s, run, n, id);
	put(t);
}

/* A file a process opened, or closed (or had open at its end). */
static void on_file(struct tracker *t, const union jt_event *ev)
{
	struct jt_proc *p = proc_table_lookup(t->procs, ev->hdr.pid,
					      ev->hdr.start_ns);
	int named;

	if (!p || (p->state & JT_PS_EXCLUDED))
		return;
	if (ev->hdr.type == JT_EV_FOPEN) {
		named = procfiles_open(p, (ev->fopen.flags & JT_FS_NAME_PARENT)
				       ? proc_table_lookup(t->procs, p->ppid,
							   p->parent_start_ns)
				       : NULL, &ev->fopen);
		if (named >= 0)
			t->files_named[named]++;
	} else
		procfiles_close(p, &ev->fclose);
}

/* Handle one kernel event. */
void tracker_event(struct tracker *t, const union jt_event *ev)
{
	t->events_seen++;
	switch (ev->hdr.type) {
	case JT_EV_FORK:
		on_fork(t, &ev->fork);
		break;
	case JT_EV_EXEC:
		on_exec(t, &ev->exec);
		break;
	case JT_EV_EXIT:
		on_exit_ev(t, &ev->exit);
		break;
	case JT_EV_OOM:
		on_oom(t, &ev->oom);
		break;
	case JT_EV_FOPEN:
	case JT_EV_FCLOSE:
		on_file(t, ev);
		break;
	}
}

/*
 * Fill a process already running at start from /proc; its memory cgroup
 * path goes to memcg (memlen bytes).
 */
static void fill_from_proc(struct tracker *t, struct jt_proc *p, char *memcg,
			   size_t memlen)
{
	char path[64], buf[4096], cg2[1024];
	const char *cg;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%u/exe", p->pid);
	n = readlink(path, buf, sizeof(buf) - 1);
	if (n > 0) {
		proc_set_str(&p->exe, buf, n);
		p->state |= JT_PS_EXE_CHECK;	/* the file it names, if asked */
	}
	snprintf(path, sizeof(path), "/proc/%u/cmdline", p->pid);
	n = util_read_file(path, buf, sizeof(buf));
	if (n > 0) {
		free(p->argv);
		p->argv = decode_argv_dup(buf, n, NULL);
		p->argv_len = p->argv ? (size_t)n : 0;
		if ((size_t)n == sizeof(buf) - 1)
			p->state |= JT_PS_ARGV_TRUNC;
	}
	snprintf(path, sizeof(path), "/proc/%u/cgroup", p->pid);
	n = util_read_file(path, buf, sizeof(buf));
	if (n <= 0 || cg_parse_proc_cgroup(buf, t->host->memcg_v2, cg2, sizeof(cg2),
					   memcg, memlen))
		return;
	cg = pick_cgroup(cg2, memcg);
	if (cg && *cg)
		proc_set_str(&p->cgroup, cg, strlen(cg));
}

/* Entries of a discovery pass are finished in start order, parents first. */
static int by_start(const void *x, const void *y)
{
	const struct jt_proc *const *a = x, *const *b = y;

	return (*a)->start_ns < (*b)->start_ns ? -1
	       : (*a)->start_ns > (*b)->start_ns;
}

/* Start p's counters for the pass gen at now. */
static void sample_start(struct jt_proc *p, unsigned gen, uint64_t now)
{
	p->prev = p->c;
	p->prev_sample_ns = p->sample_ns;
	memset(&p->c, 0, sizeof(p->c));
	p->c.peak_rss_bytes = p->prev.peak_rss_bytes;
	p->sample_gen = gen;
	p->sample_ns = now;
	p->last_seen_ns = now;
}

/* Add one thread's sample to its process. */
static void sample_add(struct jt_proc *p, const struct jt_sample *x)
{
	double u, sy;

	/* CPU split per thread then summed, like the kernel's own */
	decode_cpu_split(x->runtime_ns, x->utime_ns, x->stime_ns, &u, &sy);
	p->c.cpu_user_s += u;
	p->c.cpu_sys_s += sy;
	io_add(&p->c, &x->io);
	p->c.blkio_delay_s += x->blkio_delay_ns / 1e9;
	wait_add(&p->c, &x->wait);
	if (x->flags & JT_SF_LEADER) {
		p->c.rss_bytes = x->rss_bytes;
		if (x->hiwater_rss_bytes > p->c.peak_rss_bytes)
			p->c.peak_rss_bytes = x->hiwater_rss_bytes;
		p->c.rx_bytes = x->rx_bytes;
		p->c.tx_bytes = x->tx_bytes;
	}
}

/* A process seen for the first time by a discovery pass. */
static void discovered(struct tracker *t, struct jt_proc *p,
		       const struct jt_sample *x)
{
	p->ppid = x->ppid;
	p->parent_start_ns = x->parent_start_ns;
	p->uid = x->uid;
	p->state |= JT_PS_NO_FORK;
	util_strlcpy(p->comm, x->comm, sizeof(p->comm));
}

/* One iterator pass: sum threads into their processes, find new ones. */
void tracker_samples(struct tracker *t, const struct jt_sample *s, size_t n,
		     bool discovery, uint64_t now)
{
	struct jt_proc **found = NULL;
	size_t nfound = 0;
	unsigned gen = ++t->sample_gen;

	if (discovery)
		found = calloc(n ? n : 1, sizeof(*found));
	for (size_t i = 0; i < n; i++) {
		const struct jt_sample *x = &s[i];
		struct jt_proc *p;
		int created = 0;

		if (x->flags & JT_SF_DISCOVERED)
			p = proc_table_get(t->procs, x->pid, x->start_ns,
					   &created);
		else
			p = proc_table_lookup(t->procs, x->pid, x->start_ns);
		if (!p)
			continue;
		if (created) {
			discovered(t, p, x);
			if (found)
				found[nfound++] = p;
		}
		if (p->sample_gen != gen)
			sample_start(p, gen, now);
		sample_add(p, x);
	}
	if (!found)
		return;
	qsort(found, nfound, sizeof(*found), by_start);
	for (size_t i = 0; i < nfound; i++) {
		struct jt_proc *p = found[i];
		char mem[1024] = "";

		fill_from_proc(t, p, mem, sizeof(mem));
		correlate(t, p, proc_table_parent(t->procs, p),
			  mem[0] ? mem : NULL);
		classify(t, p);
		container_sync(t, p, true);
	}
	log_info("found %zu processes already running", nfound);
	free(found);
}

/* A process the last pass did not see and no exit event explained. */
static void evict_one(struct jt_proc *p, void *arg)
{
	struct pass_ctx *pc = arg;

	if (p->sample_gen == pc->gen || p->last_seen_ns >= pc->before_ns)
		return;
	if (p->state & JT_PS_EXCLUDED) {
		/* the kernel keeps its samples and its exit to itself: forget
		 * it when the kernel no longer follows it.  Forgotten at once,
		 * a `jobtrace run` (excluded, its children kept) whose pass
		 * fell between its exec and its job-start was refused as "not
		 * followed", and its command ran untraced */
		if (pc->t->cb.followed &&
		    pc->t->cb.followed(pc->t->cb.ctx, p->pid, p->start_ns))
			return;
		forget(pc->t, p);
		return;
	}
	p->state |= JT_PS_EXIT_LOST;
	p->end_ns = p->last_seen_ns;
	pc->t->exits_lost++;
	emit_process(pc->t, p, NULL);
}

/* A `sample` record for a running process of a job; its RSS counts
 * towards the job's and step's sums. */
static void sample_one(struct jt_proc *p, void *arg)
{
	struct pass_ctx *pc = arg;
	struct tracker *t = pc->t;
	struct jt_proc *parent;
	struct jt_jobinfo *ji;
	enum stage prev;
	char id[37], key[16];

	if (p->sample_gen != pc->gen)
		return;
	if (t->files) {
		/* a live child may read its parent's open files */
		parent = proc_table_parent(t->procs, p);
		if (parent)
			parent->progress.child_gen = pc->gen;
	}
	if (p->state & JT_PS_EXCLUDED)
		return;
	/* how far along it is: for ps too, so every process's */
	if (t->files)
		procfiles_progress(p, t->rules, t->procs, pc->gen);
	if (!p->job.id[0])
		return;
	ji = jobs_get(t->jobs, p->job.scheduler, p->job.id, false);
	if (ji) {
		struct jt_usage *su = jobs_step_usage(ji, p->job.step);

		ji->usage.rss_sum_now += p->c.rss_bytes;
		if (su)
			su->rss_sum_now += p->c.rss_bytes;
	}
	snprintf(key, sizeof(key), "%u", p->pid);
	prev = stages_enter(STAGE_ENCODE);
	record_make_id(t->host, "sample", key, p->sample_ns, id);
	jbuf_reset(&t->jb);
	record_sample(&t->jb, t->host, p, batch_of(t, p, ji), id);
	stages_leave(prev);
	put(t);
}

/* Retire lost processes, write samples, take the jobs' RSS sums. */
void tracker_after_pass(struct tracker *t, uint64_t before_ns)
{
	struct pass_ctx pc = { .t = t, .gen = t->sample_gen,
			       .before_ns = before_ns };

	proc_table_foreach(t->procs, evict_one, &pc);
	jobs_rss_begin(t->jobs);
	proc_table_foreach(t->procs, sample_one, &pc);
	jobs_rss_end(t->jobs);
}

/* Write a job record. */
void tracker_job_record(struct tracker *t, const struct jt_jobinfo *ji,
			const char *phase)
{
	char id[37], key[96];
	uint64_t when = !strcmp(phase, "end") ? ji->end_ns : ji->start_ns;
	struct cost_inputs in;
	struct cost_job cj;
	bool cost = t->cfg && !strcmp(phase, "end");

	snprintf(key, sizeof(key), "%s:%s:%s", ji->job.scheduler, ji->job.id,
		 phase);
	record_make_id(t->host, "job", key, when, id);
	if (cost) {
		cost_inputs_of(ji, &in);
		cost_job(t->cfg, t->cb.price ? t->cb.price(t->cb.ctx) : NULL,
			 &in, &cj);
	}
	jbuf_reset(&t->jb);
	record_job(&t->jb, t->host, ji, phase, id, cost ? &cj : NULL);
	put(t);
}
