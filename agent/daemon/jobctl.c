// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * jobctl.c - job control: the job-start, job-end and job-update requests
 * change the job registry and write job records; a Slurm job's records
 * wait for scontrol's answer, asked in the background (jobctl.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "child.h"
#include "config.h"
#include "jobctl.h"
#include "jobstate.h"
#include "jobtie.h"
#include "log.h"
#include "slurmq.h"
#include "tracker.h"
#include "util.h"

#define MAX_QUERIES 16			/* scontrol queries at once */
#define QUERY_TIMEOUT_NS (10ull * 1000000000ull)
/* a Slurm job's start record waits for scontrol's answer (name,
 * allocation, array task: at most QUERY_TIMEOUT_NS); its end record at
 * most END_WAIT_NS for its state, which slurmctld says once every epilog
 * ran (asked again after REQUERY_NS, then less often) */
#define END_WAIT_NS (60ull * 1000000000ull)
#define REQUERY_NS 100000000ull
#define REQUERY_MAX_NS 2000000000ull
#define SETTLE_MS 200			/* a job's held exits, at its end */

/* A background `scontrol show job` and what it printed so far. */
struct query {
	pid_t pid;
	int fd;
	char job[JT_STR_SMALL];
	char out[8192];
	size_t len;
	uint64_t deadline_ns;	/* CLOCK_MONOTONIC */
};

struct jobctl {
	struct jobs *jobs;		/* borrowed */
	struct tracker *trk;		/* borrowed */
	const struct jt_config *cfg;	/* borrowed */
	int epfd;
	struct jobctl_ops ops;
	struct query queries[MAX_QUERIES];
	struct children kids;		/* the queries' scontrol processes */
	bool stop;			/* at stop: no more asking */
};

/* A request's fields, checked. */
struct job_args {
	const char *given, *state;
	bool start, end, have_code;
	uint64_t uid, cpus, mem_mb, gpus, code, limit, sig, pid;
};

/* The id slurmctld knows a job by: its JobId. */
static const char *slurm_id(const struct jt_jobinfo *ji)
{
	return ji->raw_id[0] ? ji->raw_id : ji->job.id;
}

/* The query about ji that runs now, or NULL. */
static struct query *query_of(struct jobctl *jc, const struct jt_jobinfo *ji)
{
	for (int i = 0; i < MAX_QUERIES; i++)
		if (jc->queries[i].pid &&
		    !strcmp(jc->queries[i].job, slurm_id(ji)))
			return &jc->queries[i];
	return NULL;
}

/* Ask slurmctld in the background for what the hooks could not pass;
 * 0, or -EBUSY (too many at once) or the error of starting it. */
static int query_slurm(struct jobctl *jc, const struct jt_jobinfo *ji)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct query *q = NULL;
	int err;

	for (int i = 0; i < MAX_QUERIES; i++)
		if (!jc->queries[i].pid)
			q = &jc->queries[i];
	if (!q) {
		log_debug("too many scontrol queries at once: job %s not asked",
			  ji->job.id);
		return -EBUSY;
	}
	err = slurmq_start(slurm_id(ji), &q->pid, &q->fd);
	if (err) {
		log_debug("scontrol show job %s: %s", ji->job.id, strerror(-err));
		q->pid = 0;
		return err;
	}
	util_strlcpy(q->job, slurm_id(ji), sizeof(q->job));
	q->len = 0;
	q->deadline_ns = util_now_ns(CLOCK_MONOTONIC) + QUERY_TIMEOUT_NS;
	/* MAX_QUERIES < CHILD_MAX: there is always a slot */
	children_add(&jc->kids, q->pid, 0, q->deadline_ns + QUERY_TIMEOUT_NS,
		     "scontrol show job");
	ev.data.fd = q->fd;
	if (jc->epfd >= 0)
		epoll_ctl(jc->epfd, EPOLL_CTL_ADD, q->fd, &ev);
	return 0;
}

/* The job has ended: its state when slurmctld said none (its Reason=,
 * else the record's from its exit), its end record, the signals of its
 * end. */
static void end_record(struct jobctl *jc, struct jt_jobinfo *ji)
{
	const char *st = jobstate_of_reason(ji->reason);

	ji->end_pending = false;
	/* else the record says what its exit tells */
	if (!ji->state[0] && st)
		util_strlcpy(ji->state, st, sizeof(ji->state));
	tracker_job_record(jc->trk, ji, "end");
	if (jc->ops.ended)
		jc->ops.ended(jc->ops.ctx, ji);	/* its report may be asked */
}

/*
 * Write what waited for slurmctld: the start record; the end record once
 * slurmctld says the final state, or when it can say no more (more is
 * false: the job is not known to it, no scontrol) or the wait is over.
 */
static void records_due(struct jobctl *jc, struct jt_jobinfo *ji, bool more)
{
	uint64_t now = util_now_ns(CLOCK_MONOTONIC);
	uint64_t waited = now + END_WAIT_NS - ji->pending_until_ns, gap;

	if (ji->start_pending) {
		ji->start_pending = false;
		tracker_job_record(jc->trk, ji, "start");
	}
	if (!ji->end_pending)
		return;
	if (ji->state[0] || !more || now >= ji->pending_until_ns) {
		if (!ji->state[0])
			log_info("job %s:%s: no end state from slurmctld after %.1f s: from its %s",
				 ji->job.scheduler, ji->job.id, waited / 1e9,
				 jobstate_of_reason(ji->reason) ? "reason" : "exit");
		end_record(jc, ji);
		return;
	}
	/* COMPLETING: an epilog still runs; ask again, less often */
	gap = waited / 4;
	gap = gap < REQUERY_NS ? REQUERY_NS : gap > REQUERY_MAX_NS ?
	      REQUERY_MAX_NS : gap;
	ji->next_query_ns = now + gap;
}

/* Finish a query: parse what it printed, reap it, free the slot; write
 * the job's records that waited for it. */
static void query_done(struct jobctl *jc, struct query *q, bool timed_out)
{
	struct jt_jobinfo *ji = jobs_get(jc->jobs, "slurm", q->job, false);
	int n = -EINVAL;

	if (jc->epfd >= 0)
		epoll_ctl(jc->epfd, EPOLL_CTL_DEL, q->fd, NULL);
	close(q->fd);
	/* reaped by jobctl_tick(), never waited for here */
	if (timed_out)
		children_kill(&jc->kids, q->pid);
	q->out[q->len] = '\0';
	if (!timed_out && ji) {
		n = slurmq_parse(q->out, ji);
		log_debug("scontrol show job %s: %d fields learnt", q->job, n);
	} else if (timed_out && !jc->stop) {
		log_warn("scontrol show job %s did not answer in time", q->job);
	}
	memset(q, 0, sizeof(*q));
	/* a controller that hangs is asked again until the wait is over */
	if (ji)
		records_due(jc, ji, !jc->stop && (timed_out || n >= 0));
}

/* A job whose record waits: ask again when due, or write it. */
static void poll_pending(struct jt_jobinfo *ji, void *arg)
{
	struct jobctl *jc = arg;
	uint64_t now = util_now_ns(CLOCK_MONOTONIC);
	int err;

	if (query_of(jc, ji))
		return;
	if (jc->stop || now >= ji->pending_until_ns) {
		records_due(jc, ji, false);
	} else if (now >= ji->next_query_ns) {
		err = query_slurm(jc, ji);
		/* too many at once: the next tick */
		if (err && err != -EBUSY)
			records_due(jc, ji, false);
	}
}

/* Data from a query's pipe; returns false if fd is no query's. */
bool jobctl_on_fd(struct jobctl *jc, int fd)
{
	for (int i = 0; i < MAX_QUERIES; i++) {
		struct query *q = &jc->queries[i];
		ssize_t n;

		if (!q->pid || q->fd != fd)
			continue;
		n = read(fd, q->out + q->len, sizeof(q->out) - 1 - q->len);
		if (n > 0)
			q->len += n;
		if (n == 0 || (n < 0 && errno != EAGAIN) ||
		    q->len == sizeof(q->out) - 1)
			query_done(jc, q, false);
		return true;
	}
	return false;
}

/* Stop queries that hang (slurmctld down); reap their children. */
void jobctl_tick(struct jobctl *jc, uint64_t now)
{
	for (int i = 0; i < MAX_QUERIES; i++)
		if (jc->queries[i].pid && now > jc->queries[i].deadline_ns)
			query_done(jc, &jc->queries[i], true);
	jobs_foreach_pending(jc->jobs, poll_pending, jc);
	children_reap(&jc->kids, now);
}

/* At stop: what waits for slurmctld is written as it is known now. */
void jobctl_stop(struct jobctl *jc)
{
	if (!jc)
		return;
	jc->stop = true;
	for (int i = 0; i < MAX_QUERIES; i++)
		if (jc->queries[i].pid)
			query_done(jc, &jc->queries[i], true);
	jobs_foreach_pending(jc->jobs, poll_pending, jc);
}

/* Copy a request field into a registry string when given. */
static void set_if(const struct control_req *r, const char *key, char *dst,
		   size_t len)
{
	const char *v = control_get(r, key);

	if (v && *v)
		util_strlcpy(dst, v, len);
}

/* Parse an unsigned field; false (and a reply) if it is not a number. */
static bool num_if(const struct control_req *r, const char *key,
		   uint64_t max, uint64_t *out, FILE *reply)
{
	const char *v = control_get(r, key);
	char *end;

	if (!v)
		return true;
	errno = 0;
	*out = strtoull(v, &end, 10);
	if (errno || end == v || *end || *out > max || *v == '-') {
		fprintf(reply, "error field %s: '%s' is not a number up to %llu\n",
			key, v, (unsigned long long)max);
		return false;
	}
	return true;
}

/* Is every field of r one a job request may have?  Else a reply. */
static bool known_fields(const struct control_req *r, FILE *out)
{
	static const char *const allowed[] = {
		"job", "scheduler", "step", "user", "uid", "account",
		"partition", "run", "pipeline", "task", "cost_center", "cpus",
		"mem_mb", "gpus", "node", "cgroup", "name", "exit_code", "pid",
		"time_limit", "signal", "state", NULL,
	};

	for (size_t i = 0; i < r->n; i++) {
		const char *const *k = allowed;

		while (*k && strcmp(*k, r->f[i].key))
			k++;
		if (!*k) {
			fprintf(out, "error unknown field '%s'\n", r->f[i].key);
			return false;
		}
	}
	return true;
}

/* Check the request's fields into ja; false (and a reply) when one is
 * wrong. */
static bool parse_args(const struct control_req *r, struct job_args *ja,
		       FILE *out)
{
	*ja = (struct job_args){
		.given = control_get(r, "job"),
		.state = control_get(r, "state"),
		.start = !strcmp(r->cmd, "job-start"),
		.end = !strcmp(r->cmd, "job-end"),
		.uid = UINT64_MAX,
	};
	if (!known_fields(r, out))
		return false;
	if (!ja->given || !*ja->given || strlen(ja->given) >= JT_STR_SMALL) {
		fprintf(out, "error %s needs job=ID (at most %d bytes)\n", r->cmd,
			JT_STR_SMALL - 1);
		return false;
	}
	if (!num_if(r, "uid", UINT32_MAX - 1, &ja->uid, out) ||
	    !num_if(r, "cpus", 1u << 20, &ja->cpus, out) ||
	    !num_if(r, "mem_mb", 1ull << 40, &ja->mem_mb, out) ||
	    !num_if(r, "gpus", 4096, &ja->gpus, out) ||
	    !num_if(r, "time_limit", UINT32_MAX, &ja->limit, out) ||
	    !num_if(r, "exit_code", 255, &ja->code, out) ||
	    !num_if(r, "signal", 255, &ja->sig, out) ||
	    !num_if(r, "pid", JT_PID_MAX, &ja->pid, out))
		return false;
	if (ja->state && !jobstate_final(ja->state, strlen(ja->state))) {
		fprintf(out, "error field state: '%s' is not how a job ends (COMPLETED, FAILED, CANCELLED, TIMEOUT, OUT_OF_MEMORY, NODE_FAIL, PREEMPTED, BOOT_FAIL, DEADLINE)\n",
			ja->state);
		return false;
	}
	if ((ja->state || control_get(r, "signal")) && !ja->end) {
		fprintf(out, "error fields signal and state are for job-end only\n");
		return false;
	}
	if (control_get(r, "pid") && (!ja->start || !ja->pid)) {
		fprintf(out, "error --pid: a process id from 1, for job-start only\n");
		return false;
	}
	ja->have_code = control_get(r, "exit_code") || control_get(r, "signal");
	return true;
}

/*
 * The job r names, made when new, as the peer may see it (a user's jobs
 * live in their own namespace, jobtie.h), and with pid= the root of the
 * process tree to tie (*root); NULL (and a reply) when refused.
 */
static struct jt_jobinfo *find_job(struct jobctl *jc,
				   const struct control_req *r,
				   const struct job_args *ja, bool privileged,
				   const struct control_peer *peer,
				   struct jt_proc **root, FILE *out)
{
	char sched[sizeof(((struct jt_job *)0)->scheduler)];
	char id[JT_STR_SMALL], err[320];
	struct jt_jobinfo *ji;
	const char *why;

	/* a hook that names no scheduler means the running job of that id,
	 * else a process tree tied by pid is local, else a Slurm epilog's */
	if (jobtie_job_key(r, privileged, peer->uid,
			   jobs_default_scheduler(jc->jobs, ja->given,
						  control_get(r, "pid") != NULL),
			   sched, sizeof(sched), id, sizeof(id), err, sizeof(err))) {
		log_warn("control: %s refused for uid %u (pid %d): %s", r->cmd,
			 (unsigned)peer->uid, (int)peer->pid, err);
		fprintf(out, "error %s\n", err);
		return NULL;
	}
	ji = jobs_get(jc->jobs, sched, id, false);
	if (!privileged &&
	    jobtie_permit(r, peer->uid, ji,
			  jobs_count_by_user(jc->jobs, peer->uid), &why)) {
		log_warn("control: %s refused for uid %u (pid %d): %s", r->cmd,
			 (unsigned)peer->uid, (int)peer->pid, why);
		fprintf(out, "error permission denied: %s needs root%s%s (%s)\n",
			r->cmd, *jc->cfg->control_group ? " or group " : "",
			jc->cfg->control_group, why);
		return NULL;
	}
	if (ja->pid) {
		/* its fork or exec may still wait in the ring buffer */
		if (jc->ops.drain)
			jc->ops.drain(jc->ops.ctx);
		*root = jobtie_root(tracker_procs(jc->trk), (uint32_t)ja->pid,
				    privileged, peer->uid, err, sizeof(err));
		if (!*root) {
			fprintf(out, "error %s\n", err);
			return NULL;
		}
	}
	if (!ji)
		ji = jobs_get(jc->jobs, sched, id, true);
	if (!ji)
		fprintf(out, "error out of memory\n");
	return ji;
}

/* The request's fields into the job's entry; a user's own job is theirs
 * whatever the request said. */
static void apply_fields(const struct control_req *r,
			 const struct job_args *ja, bool privileged,
			 const struct control_peer *peer, struct jt_jobinfo *ji)
{
	/* a hook's step names the workflow's step: Slurm's own step comes
	 * from each process's cgroup or slurmstepd */
	set_if(r, "step", ji->job.task, sizeof(ji->job.task));
	set_if(r, "user", ji->job.user, sizeof(ji->job.user));
	set_if(r, "account", ji->job.account, sizeof(ji->job.account));
	set_if(r, "run", ji->job.run, sizeof(ji->job.run));
	set_if(r, "pipeline", ji->job.pipeline, sizeof(ji->job.pipeline));
	set_if(r, "task", ji->job.task, sizeof(ji->job.task));
	set_if(r, "cost_center", ji->job.cost_center, sizeof(ji->job.cost_center));
	set_if(r, "partition", ji->partition, sizeof(ji->partition));
	set_if(r, "node", ji->node, sizeof(ji->node));
	set_if(r, "cgroup", ji->cgroup, sizeof(ji->cgroup));
	set_if(r, "name", ji->name, sizeof(ji->name));
	if (ja->uid != UINT64_MAX) {
		ji->uid = ja->uid;
		ji->uid_known = true;
	}
	if (!privileged) {
		ji->uid = peer->uid;
		ji->uid_known = true;
		ji->by_user = true;
		jobtie_user_name(peer->uid, ji->job.user, sizeof(ji->job.user));
	}
	if (ja->cpus)
		ji->cpus = ja->cpus;
	if (ja->mem_mb)
		ji->mem_bytes = ja->mem_mb << 20;
	if (ja->gpus)
		ji->gpus = ja->gpus;
	if (ja->limit)
		ji->time_limit_s = (uint32_t)ja->limit;
	ji->touched_ns = util_now_ns(CLOCK_MONOTONIC);
}

/* job-start: the start record, or for a Slurm job that misses what
 * slurmctld knows, the query whose answer it waits for. */
static void job_started(struct jobctl *jc, struct jt_jobinfo *ji, bool slurm)
{
	ji->start_ns = util_now_ns(CLOCK_REALTIME);
	ji->end_ns = 0;
	if (slurm && (!ji->job.account[0] || !ji->name[0] ||
		      !ji->cpus || !ji->time_limit_s)) {
		ji->start_pending = true;
		if (query_slurm(jc, ji))
			records_due(jc, ji, false);
	} else {
		tracker_job_record(jc->trk, ji, "start");
	}
}

/* job-end: the end record, or for a Slurm job with no state given, the
 * wait for slurmctld's. */
static void job_ended(struct jobctl *jc, const struct job_args *ja,
		      struct jt_jobinfo *ji, bool slurm)
{
	uint64_t now = util_now_ns(CLOCK_REALTIME);

	/* the job's last events may still wait in the ring buffer, its last
	 * exits in the kernel for their task's last switch: taken while the
	 * job still runs, so that a process found by the job's cgroup at its
	 * exec finds the job */
	if (jc->ops.settle)
		jc->ops.settle(jc->ops.ctx, SETTLE_MS);
	ji->end_ns = now;
	if (ja->have_code) {
		ji->exit_code = (int)ja->code;
		ji->exit_signal = (int)ja->sig;
		ji->exit_known = true;
	}
	if (ja->state)
		util_strlcpy(ji->state, ja->state, sizeof(ji->state));
	if (slurm && !ji->state[0]) {
		ji->end_pending = true;
		ji->pending_until_ns = util_now_ns(CLOCK_MONOTONIC) + END_WAIT_NS;
		ji->next_query_ns = 0;	/* at once */
		poll_pending(ji, jc);
	} else {
		records_due(jc, ji, false);	/* a start that waits */
		end_record(jc, ji);
	}
}

/* job-start, job-end, job-update: change the registry, write job records;
 * a job-start with pid= ties that process tree to the job. */
void jobctl_request(struct jobctl *jc, const struct control_req *r,
		    bool privileged, const struct control_peer *peer,
		    FILE *out)
{
	struct jt_proc *root = NULL;
	struct jt_jobinfo *ji;
	struct job_args ja;
	bool join, slurm;
	size_t tied = 0;

	if (!parse_args(r, &ja, out))
		return;
	ji = find_job(jc, r, &ja, privileged, peer, &root, out);
	if (!ji)
		return;
	if (ja.end && ji->end_ns) {
		/* an epilog run again, a second hook: the job has its end
		 * record, a second one would count its cost twice */
		log_warn("job-end job %s:%s: already ended %.3f s ago, no second end record",
			 ji->job.scheduler, ji->job.id,
			 (double)(util_now_ns(CLOCK_REALTIME) - ji->end_ns) / 1e9);
		fprintf(out, "ok\njob: %s:%s already closed\n", ji->job.scheduler,
			ji->job.id);
		return;
	}
	/* a pid joins a running job: no new start */
	join = root && ji->start_ns && !ji->end_ns;
	/* an id used again once its job ended (a scheduler that reuses ids,
	 * a wrapper run again): a new job, nothing of the one before */
	if (ja.start && ji->end_ns)
		jobs_reset(ji);
	if (ja.start && !join && root && ja.uid == UINT64_MAX) {
		/* the job's owner is the process's, not whoever asks later */
		ja.uid = root->uid;
		if (!control_get(r, "user"))
			jobtie_user_name(root->uid, ji->job.user,
					 sizeof(ji->job.user));
	}
	apply_fields(r, &ja, privileged, peer, ji);
	/* a Slurm job a hook registered: its start record waits (bounded)
	 * for slurmctld's name, allocation and array task id, its end
	 * record for slurmctld's final state */
	slurm = privileged && !ji->by_user && !strcmp(ji->job.scheduler, "slurm");
	if (ja.start && !join)
		job_started(jc, ji, slurm);
	else if (ja.end)
		job_ended(jc, &ja, ji, slurm);
	if (root)
		tied = jobtie_tree(tracker_procs(jc->trk), jc->jobs, root, ji,
				   !privileged, peer->uid);
	/* its report is asked for next: the store has it in milliseconds */
	if (ja.end && jc->ops.flush)
		jc->ops.flush(jc->ops.ctx);
	log_info("%s job %s:%s (user %s, account %s, run %s)%s", r->cmd,
		 ji->job.scheduler, ji->job.id, *ji->job.user ? ji->job.user : "-",
		 *ji->job.account ? ji->job.account : "-",
		 *ji->job.run ? ji->job.run : "-", join ? " joined" : "");
	fprintf(out, "ok\njob: %s:%s %s\n", ji->job.scheduler, ji->job.id,
		join ? "joined" : ja.start ? "registered" : ja.end ? "closed" :
		"updated");
	if (root) {
		log_info("job %s:%s: pid %u and %zu descendants tied",
			 ji->job.scheduler, ji->job.id, root->pid, tied - 1);
		fprintf(out, "tied: %zu processes (pid %u and its descendants)\n",
			tied, root->pid);
	}
}

/* Job control over jobs and trk (jobctl.h). */
int jobctl_new(struct jobs *jobs, struct tracker *trk,
	       const struct jt_config *cfg, int epfd,
	       const struct jobctl_ops *ops, struct jobctl **out)
{
	struct jobctl *jc = calloc(1, sizeof(*jc));

	if (!jc)
		return -ENOMEM;
	jc->jobs = jobs;
	jc->trk = trk;
	jc->cfg = cfg;
	jc->epfd = epfd;
	jc->ops = *ops;
	*out = jc;
	return 0;
}

/* Write what waits, then free. */
void jobctl_free(struct jobctl *jc)
{
	if (!jc)
		return;
	jobctl_stop(jc);
	free(jc);
}
