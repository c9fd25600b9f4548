// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * dockjobs.c - container look-ups and their answers on the agent's loop
 * (dockjobs.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <time.h>

#include "containers.h"
#include "dockerq.h"
#include "dockjobs.h"
#include "log.h"
#include "tracker.h"

struct dockjobs {
	const struct jt_config *cfg;	/* borrowed */
	struct tracker *trk;		/* borrowed: writes the job records */
	struct dockerq *dq;
	struct containers *cts;
	bool failing;			/* the last look-up failed (logged) */
};

/* Queue a container look-up (containers.h's ask). */
static int ask(void *ctx, const char *id)
{
	struct dockjobs *dj = ctx;

	return dockerq_ask(dj->dq, id);
}

/* A container's job starts or ends: the tracker writes its record. */
static void job_record(void *ctx, const struct jt_jobinfo *ji,
		       const char *phase)
{
	struct dockjobs *dj = ctx;

	tracker_job_record(dj->trk, ji, phase);
}

/* Start the look-ups and the containers (dockjobs.h). */
int dockjobs_start(const struct jt_config *cfg, size_t max, struct jobs *jobs,
		   const struct jt_host *host, struct tracker *trk,
		   struct dockjobs **out)
{
	struct dockjobs *dj = calloc(1, sizeof(*dj));
	struct containers_ops ops = {
		.ask = ask,
		.populated = containers_cgroup_populated,
		.job_record = job_record,
		.ctx = dj,
		.end_grace_ns = cfg->docker_end_grace_ms * 1000000ull,
		.jobs = jobs,
		.procs = tracker_procs(trk),
		.host = host,
	};
	struct tracker_containers ct;
	int err;

	if (!dj)
		return -ENOMEM;
	dj->cfg = cfg;
	dj->trk = trk;
	err = dockerq_start(cfg->docker_socket, cfg->docker_timeout_ms, &dj->dq);
	if (!err)
		err = containers_new(max, &ops, &dj->cts);
	if (err) {
		dockjobs_free(dj);
		return err;
	}
	ct = containers_tracker(dj->cts);
	tracker_set_containers(trk, &ct);
	*out = dj;
	return 0;
}

/* Stop and free. */
void dockjobs_free(struct dockjobs *dj)
{
	if (!dj)
		return;
	dockerq_stop(dj->dq);
	containers_free(dj->cts);
	free(dj);
}

/* The look-ups' descriptor. */
int dockjobs_fd(const struct dockjobs *dj)
{
	return dj ? dockerq_fd(dj->dq) : -1;
}

/* Docker's answers: to the containers, which make the jobs. */
void dockjobs_take(struct dockjobs *dj)
{
	static struct dockerq_result r;	/* large: not on the stack */

	while (dockerq_take(dj->dq, &r)) {
		if (r.state != DOCKER_OK && !dj->failing) {
			struct dockerq_stats st;

			dockerq_stats(dj->dq, &st);
			log_warn("docker: look-up %s: %s (job fields of its"
				 " processes stay null; asked again later)",
				 docker_state_names[r.state], st.last_error);
		} else if (r.state == DOCKER_OK && dj->failing) {
			log_info("docker: %s answers again",
				 dj->cfg->docker_socket);
		}
		dj->failing = r.state != DOCKER_OK &&
			      r.state != DOCKER_NOT_FOUND;
		containers_answer(dj->cts, &r);
	}
}

/* Containers that ended end their jobs. */
void dockjobs_tick(struct dockjobs *dj, uint64_t now)
{
	if (dj)
		containers_tick(dj->cts, now);
}

/* Did the last look-up fail? */
bool dockjobs_failing(const struct dockjobs *dj)
{
	return dj && dj->failing;
}

/* The docker_* lines of "status": how the container look-ups went. */
void dockjobs_status(const struct dockjobs *dj, FILE *out)
{
	struct containers_stats cs;
	struct dockerq_stats st;
	char when[32] = "";

	if (!dj) {
		fprintf(out, "docker: off\n");
		return;
	}
	dockerq_stats(dj->dq, &st);
	containers_stats(dj->cts, &cs);
	fprintf(out, "docker: %s\n", dj->cfg->docker_socket);
	for (int i = 0; i < DOCKER_STATE__N; i++)
		fprintf(out, "docker_lookups_%s: %" PRIu64 "\n",
			docker_state_names[i], st.answers[i]);
	fprintf(out, "docker_lookups_refused: %" PRIu64 "\n", st.refused);
	fprintf(out, "docker_containers: %zu\n", cs.entries);
	fprintf(out, "docker_batch_jobs: %zu\n", cs.jobs);
	fprintf(out, "docker_batch_jobs_ending: %zu\n", cs.ending);
	fprintf(out, "docker_containers_not_followed: %" PRIu64 "\n", cs.full);
	if (st.last_error_ns) {
		time_t t = (time_t)(st.last_error_ns / 1000000000ull);
		struct tm tm;

		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ",
			 gmtime_r(&t, &tm));
	}
	fprintf(out, "docker_last_error: %s%s%s\n",
		st.last_error[0] ? st.last_error : "none", when[0] ? " at " : "",
		when);
}
