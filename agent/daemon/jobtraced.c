// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * jobtraced.c - the agent: one event loop over the ring buffer, a tick
 * timer, signals and the control socket.  Kernel events become entries of
 * the process table; finished processes become schema v1 records in the
 * spool, from which the sinks (SQLite, ClickHouse, HTTP) store them.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "cgroup_parse.h"
#include "classify.h"
#include "collector.h"
#include "config.h"
#include "control.h"
#include "creds.h"
#include "dockjobs.h"
#include "decode.h"
#include "fsperm.h"
#include "cost.h"
#include "hostrec.h"
#include "idle.h"
#include "signals.h"
#include "imds.h"
#include "jobctl.h"
#include "jobs.h"
#include "json.h"
#include "log.h"
#include "proc_table.h"
#include "query_server.h"
#include "ratelimit.h"
#include "record.h"
#include "schema.h"
#include "rules.h"
#include "rulesctl.h"
#include "sink.h"
#include "smklog.h"
#include "cgtrust.h"
#include "smklogq.h"
#include "spool.h"
#include "stages.h"
#include "status.h"
#include "tracker.h"
#include "util.h"

#define TICK_MS 100
#define RULES_MEM_BYTES (64u << 20)	/* cap on the Lua state */
#define RULES_INSTRUCTIONS 1000000ul	/* per classification */
#define JOB_KEEP_NS (3600ull * 1000000000ull)	/* ended jobs kept an hour */
#define DRAIN_MS 5000			/* sinks' last delivery at stop */
#define SETTLE_MS 200			/* a job's held exits, at its end */
#define HOST_SUMMARY_NS (3600ull * 1000000000ull)	/* outside jobs */
/* the start record waits this long at most for the cloud's identity
 * (the IMDS thread bounds its own read by IMDS_START_BUDGET_MS) */
#define IMDS_WAIT_NS ((IMDS_START_BUDGET_MS + 500) * 1000000ull)
#define CONTAINERS_MAX 1024		/* containers followed at once */

struct agent {
	struct jt_config cfg;
	const char *config_path;
	bool config_explicit;
	bool verbose;

	struct collector *col;
	struct rules *rules;
	struct jobs *jobs;
	struct jobctl *jc;		/* job-start, job-end, job-update */
	struct query_server *qs;	/* users' report and export, groups */
	struct dockjobs *dj;		/* container look-ups, NULL: off */
	struct rulesctl rc;		/* the rules loaded, watched */
	unsigned rules_reported;	/* rc.changes in the last host record */
	struct tracker *trk;		/* process table, events -> records */
	struct smklogq *smk;		/* Snakemake job logs (local mode),
					 * NULL: off */
	struct cgtrust *cgt;		/* whose cgroup folders name jobs */
	struct idle idle;		/* the node's idle episodes */
	struct sig_agent sig;		/* stall, io_bound, ... signals */
	struct spool *spool;
	struct sinks *sinks;
	struct imds *imds;		/* NULL: cloud.imds = off, or not
					 * EC2 by this machine's facts */
	char imds_why[320];		/* why not asked, with imds NULL */
	uint64_t host_start_ns;		/* CLOCK_BOOTTIME of the start record
					 * that waits for the cloud, 0: none */
	struct jt_host host;
	struct jbuf jb;
	struct hostrec_price price;	/* the node's, for host and job
					 * records */

	struct control_server *ctl;
	struct rate_limiter rate;	/* users' share of the loop's answers */
	uint64_t control_busy;		/* requests refused over it */
	bool sock_bound;		/* the socket file is ours to unlink */
	int epfd, sigfd, tickfd;
	uint64_t started_ns;		/* CLOCK_MONOTONIC */
	uint64_t next_sample_ns;	/* CLOCK_MONOTONIC */
	uint64_t last_pass_ns;		/* CLOCK_MONOTONIC */
	uint64_t last_sync_ns;		/* CLOCK_MONOTONIC */
	uint64_t last_maintain_ns;
	uint64_t last_drop_host_ns;
	uint64_t lost_reported;		/* spool drops in a host record */
	uint64_t outside_reported;	/* processes outside jobs in one */
	uint64_t last_summary_ns;	/* CLOCK_MONOTONIC of the last */
	uint64_t size_cap_reported;	/* store size-cap deletions in one */

	uint64_t records_spooled;
	uint64_t records_unspooled;	/* never reached the spool: lost */
	uint64_t counters[JT_CNT_NR];
	uint64_t drops_reported;
	bool stop;
};


/* Open the spool and start its sinks. */
static int open_delivery(struct agent *a)
{
	const char *names[32];
	struct spool_opts so = {
		.dir = a->cfg.spool_dir,
		.max_bytes = (uint64_t)a->cfg.spool_max_mib << 20,
		.segment_bytes = (uint64_t)a->cfg.spool_segment_kib << 10,
	};
	size_t n = sinks_names(&a->cfg, names, 32);
	char err[512];

	if (!n)
		log_warn("no sinks: store.enabled is false and no sinks are"
			 " configured; records stay in the spool %s",
			 a->cfg.spool_dir);
	if (spool_open(&so, names, n, &a->spool, err, sizeof(err)) ||
	    sinks_start(&a->cfg, a->spool, &a->sinks, err, sizeof(err))) {
		log_error("%s", err);
		return -1;
	}
	return 0;
}
static void reload(struct agent *a);

/* Hand one record to the spool; every sink reads it from there. */
static void put_record(struct agent *a, struct jbuf *b)
{
	enum stage prev;
	int err;

	if (b->oom) {
		log_error("out of memory encoding a record");
		a->records_unspooled++;
		return;
	}
	prev = stages_enter(STAGE_SPOOL);
	err = spool_append(a->spool, b->buf, b->len);
	stages_leave(prev);
	if (err) {
		/* a failed write is logged by the spool, with its path */
		if (err == -E2BIG)
			log_error("spool %s: a record of %zu bytes is over the"
				  " limit of %u; not kept", a->cfg.spool_dir,
				  b->len, SPOOL_MAX_RECORD);
		a->records_unspooled++;
		return;
	}
	a->records_spooled++;
}

/* Records from the tracker go to the spool. */
static void on_record(void *ctx, struct jbuf *b)
{
	put_record(ctx, b);
}

/* The tracker excludes a process: keep its events in the kernel. */
static void on_exclude(void *ctx, uint32_t pid, bool tree)
{
	struct agent *a = ctx;

	collector_exclude(a->col, pid, tree);
}

/* An excluded process after a pass: is it still in the kernel's map? */
static bool on_followed(void *ctx, uint32_t pid, uint64_t start_ns)
{
	struct agent *a = ctx;

	return collector_follows(a->col, pid, start_ns);
}

/* A Snakemake process's job log names the rule of its `sh -c` child. */
static bool on_engine_job(void *ctx, const struct jt_proc *engine,
			  const char *cmd, struct rules_engine_job *out)
{
	struct agent *a = ctx;

	return smklogq_job(a->smk, engine->pid, engine->start_ns, engine->uid,
			   cmd, out);
}

/* A workflow engine started: Snakemake's log is looked for at once, so
 * that it is found before a short run closes it (smklog.h). */
static void on_engine_seen(void *ctx, const struct jt_proc *engine)
{
	struct agent *a = ctx;

	if (!strcmp(engine->tool_name, "snakemake"))
		smklogq_watch(a->smk, engine->pid, engine->start_ns,
			      engine->uid);
}

/* A Slurm job's or container's cgroup names the job only when root's. */
static bool on_cg_root(void *ctx, const char *dir)
{
	struct agent *a = ctx;

	return cgtrust_root(a->cgt, dir);
}

/* Dispatch one kernel event. */
static void on_event(void *ctx, const union jt_event *ev)
{
	struct agent *a = ctx;

	tracker_event(a->trk, ev);
}

/* One iterator pass. */
static void on_samples(void *ctx, const struct jt_sample *s, size_t n,
		       bool discovery)
{
	struct agent *a = ctx;

	tracker_samples(a->trk, s, n, discovery,
			util_now_ns(CLOCK_BOOTTIME));
}

/* Run one sample pass, then retire processes whose exit was lost. */
static void sample_pass(struct agent *a)
{
	uint64_t before = util_now_ns(CLOCK_BOOTTIME);
	enum stage prev;

	collector_drain(a->col);
	prev = stages_enter(STAGE_SAMPLE);
	if (collector_sample(a->col, false) >= 0) {
		/* exits submitted before the pass are in the ring buffer now */
		collector_drain(a->col);
		tracker_after_pass(a->trk, before);
	}
	stages_leave(prev);
}

/* Make appended records durable and wake the sinks; a failure keeps them
 * buffered for the next try. */
static void flush(struct agent *a)
{
	if (spool_unsynced(a->spool) && spool_sync(a->spool) == 0)
		sinks_notify(a->sinks);
	a->last_sync_ns = util_now_ns(CLOCK_MONOTONIC);
}

/*
 * Everything the kernel has of what ended so far goes to the sinks now:
 * the exits held for a last context switch (at most SETTLE_MS), then the
 * spool synced and the sinks told to deliver without waiting for their
 * batch to come of age (a job ended, or a report asks).
 */
static void flush_now(struct agent *a)
{
	struct spool_stats ss;

	collector_settle(a->col, SETTLE_MS);
	flush(a);
	spool_get_stats(a->spool, &ss);
	sinks_flush(a->sinks, ss.durable_seq);
}

/* The node's price now, computed again after a reload and when the
 * cloud's identity changed (it is read in the background). */
static const struct cost_price *node_price(void *ctx)
{
	struct agent *a = ctx;
	struct jt_cloud cloud;

	imds_identity(a->imds, &cloud);
	return hostrec_price(&a->price, &a->cfg, &cloud);
}

/* A `host` record of time `now` (CLOCK_BOOTTIME): identity, cloud,
 * agent version and the drop counters. */
static void emit_host(struct agent *a, const char *phase, uint64_t now)
{
	struct sv_count spool[SINKS_MAX];
	struct spool_stats ss;
	struct jt_cloud cloud;
	struct tracker_stats ts = tracker_stats(a->trk);
	struct rulesctl_host rh;
	struct hostrec_src s = {
		.host = &a->host, .counters = a->counters,
		.events_seen = ts.events_seen,
		.exits_lost = ts.exits_lost,
		.records_unspooled = a->records_unspooled,
		.spool_drops = spool,
		.n_spool_drops = sinks_drop_counts(a->sinks, spool, SINKS_MAX),
		.store_size_cap = sinks_store_size_cap(a->sinks),
		.cloud = &cloud, .price = node_price(a),
		.outside = ts.jobs_only ? &ts.outside : NULL,
	};

	spool_get_stats(a->spool, &ss);
	s.lost_disk_full = ss.lost_disk_full;
	rulesctl_host(&a->rc, &rh);
	s.rules_version = rh.version;
	s.rules_sha256 = rh.sha256;
	s.rules_source = rh.source;
	s.rules_error = rh.error;
	a->rules_reported = a->rc.changes;
	imds_identity(a->imds, &cloud);
	a->size_cap_reported = s.store_size_cap;
	a->outside_reported = ts.outside.processes;
	hostrec_write(&a->jb, &s, phase, now);
	a->lost_reported = sinks_lost_total(a->sinks);
	put_record(a, &a->jb);
}

/* Spool housekeeping: release acknowledged segments; report new drops
 * (the spool's, the store's size cap) in a host record (at most every few
 * seconds). */
static void spool_housekeeping(struct agent *a, uint64_t now)
{
	struct tracker_stats ts = tracker_stats(a->trk);
	const char *why = NULL;

	if (now - a->last_maintain_ns >= 1000000000ull) {
		spool_maintain(a->spool);
		a->last_maintain_ns = now;
	}
	/* collector.record = "jobs": what ran outside jobs, hourly */
	if (ts.jobs_only && now - a->last_summary_ns >= HOST_SUMMARY_NS) {
		if (ts.outside.processes != a->outside_reported)
			emit_host(a, "summary", util_now_ns(CLOCK_BOOTTIME));
		a->last_summary_ns = now;
	}
	if (now - a->last_drop_host_ns < 5000000000ull)
		return;
	if (sinks_lost_total(a->sinks) > a->lost_reported)
		why = "spool_drop";
	else if (sinks_store_size_cap(a->sinks) > a->size_cap_reported)
		why = "store_size_cap";
	if (why) {
		emit_host(a, why, util_now_ns(CLOCK_BOOTTIME));
		a->last_drop_host_ns = now;
	}
}

/*
 * The start record, once the cloud's identity is read (or could not be, in
 * its time, or at stop): it waits for it without holding up the loop, and
 * carries the time the agent started.
 */
static void host_start_when_ready(struct agent *a, bool now)
{
	if (!a->host_start_ns)
		return;
	if (!now && !imds_identity_done(a->imds) &&
	    util_now_ns(CLOCK_BOOTTIME) - a->host_start_ns < IMDS_WAIT_NS)
		return;
	emit_host(a, "start", a->host_start_ns);
	a->host_start_ns = 0;
}


/* Read the kernel's drop counters and warn when they grow. */
static void check_drops(struct agent *a)
{
	uint64_t d;

	if (collector_counters(a->col, a->counters))
		return;
	d = status_dropped(a->counters);
	if (d > a->drops_reported) {
		log_warn("ring buffer full: %" PRIu64 " events lost so far "
			 "(raise collector.ringbuf_size_kib)", d);
		a->drops_reported = d;
	}
	if (a->counters[JT_CNT_TRACK_FULL])
		log_debug("tracked-pid map full %" PRIu64 " times",
			  a->counters[JT_CNT_TRACK_FULL]);
}

/* A node_idle signal for the episode sig, with what the node cost over
 * it. */
static void emit_node_idle(struct agent *a, const struct idle_signal *sig)
{
	const struct cost_price *p = node_price(a);
	char id[37];

	log_info("node idle for %.1f s: no job, CPU %.1f%% of the node"
		 " (a node_idle signal)", sig->idle_s, 100 * sig->cpu);
	record_make_id(&a->host, "signal", "node_idle", sig->since_ns, id);
	jbuf_reset(&a->jb);
	record_node_idle(&a->jb, &a->host, sig, p, id);
	put_record(a, &a->jb);
}

/* The idle { } settings as idle.c takes them. */
static struct idle_params idle_params_of(const struct jt_config *c)
{
	return (struct idle_params){
		.after_ns = (uint64_t)(c->idle_after_min * 60e9),
		.cpu_below = c->idle_cpu_below };
}

/* At a sample pass: is the node idle, and for idle.after now (a
 * node_idle signal, with what the time cost)? */
static void check_idle(struct agent *a)
{
	struct idle_params ip = idle_params_of(&a->cfg);
	struct idle_signal sig;
	struct idle_cpu cpu;
	int err = idle_read_stat("/proc/stat", &cpu);

	if (err && a->idle.why != IDLE_WHY_NO_CPU)
		log_warn("/proc/stat: %s: the node_idle signal waits until it"
			 " can be read", strerror(-err));
	if (!idle_sample(&a->idle, &ip, util_now_ns(CLOCK_BOOTTIME),
			 err ? NULL : &cpu,
			 idle_job_runs(tracker_procs(a->trk), a->jobs), &sig))
		return;
	emit_node_idle(a, &sig);
}

/* The signals { } settings as signals.c takes them. */
static struct sig_params sig_params_of(const struct jt_config *c)
{
	return (struct sig_params){
		.stall_after_ns = c->signals_stall_after_ms * 1000000ull,
		.io_window_ns = c->signals_io_window_ms * 1000000ull,
		.io_above = c->signals_io_above,
		.slower_factor = c->signals_slower_factor,
		.slower_min_runs = c->signals_slower_min_runs,
		.memory_near = c->signals_memory_near,
		.cpu_starved_above = c->signals_cpu_starved_above,
		.memory_pressure_above = c->signals_memory_pressure_above,
		.net_wait_above = c->signals_net_wait_above };
}

/* A tracked process is gone: the end of its stall, if it was in one. */
static void on_gone(void *ctx, struct jt_proc *p)
{
	struct agent *a = ctx;

	if (!strcmp(p->tool_category, "workflow-engine"))
		smklogq_forget(a->smk, p->pid, p->start_ns);
	signals_agent_gone(&a->sig, p, p->end_ns ? p->end_ns :
			   util_now_ns(CLOCK_BOOTTIME));
}

/* A sample pass and what goes with it; the next in sample_interval. */
static void pass_now(struct agent *a, uint64_t now)
{
	struct sig_params sp = sig_params_of(&a->cfg);

	jobs_expire(a->jobs, now, JOB_KEEP_NS);
	sample_pass(a);
	check_idle(a);
	signals_agent_pass(&a->sig, &sp, tracker_procs(a->trk),
			   tracker_stats(a->trk).passes,
			   a->host.memcg_v2);
	check_drops(a);
	record_host_sync_clock(&a->host);
	a->last_pass_ns = now;
	a->next_sample_ns = now + a->cfg.sample_interval_ms * 1000000ull;
}

/*
 * A job's process that no pass has seen and that has lived first_sample
 * gets a pass now, not at the next sample_interval (at most one such pass
 * every first_sample): a job shorter than the interval has samples.
 */
static bool young_pass_due(struct agent *a, uint64_t now)
{
	uint64_t young_ns = a->cfg.first_sample_ms * 1000000ull;

	tracker_set_first_sample(a->trk, young_ns);
	if (!young_ns || now - a->last_pass_ns < young_ns)
		return false;
	return tracker_young_due(a->trk, util_now_ns(CLOCK_BOOTTIME));
}

/* Every tick: drain events, sample when due, flush when due. */
static void on_tick(struct agent *a)
{
	uint64_t now = util_now_ns(CLOCK_MONOTONIC);
	uint64_t sync_ns = a->cfg.spool_sync_ms * 1000000ull;

	collector_drain(a->col);
	smklogq_tick(a->smk, now);
	rulesctl_tick(&a->rc, now);
	/* after the start record: each change of the rules in force */
	if (!a->host_start_ns && a->rc.changes != a->rules_reported)
		emit_host(a, "rules", util_now_ns(CLOCK_BOOTTIME));
	jobctl_tick(a->jc, now);
	query_server_reap(a->qs, now);
	dockjobs_tick(a->dj, now);
	control_server_expire(a->ctl, now);
	host_start_when_ready(a, false);
	if (now >= a->next_sample_ns || young_pass_due(a, now))
		pass_now(a, now);
	signals_agent_poll(&a->sig);	/* slower_than_usual checks done */
	spool_housekeeping(a, now);
	if (spool_unsynced(a->spool) && now - a->last_sync_ns >= sync_ns)
		flush(a);
}

/*
 * Reply to "flush" (anyone may ask: a report about to read the store):
 * what ended is sent to the sinks now; the reply says how far the spool
 * goes and how far the SQLite store has it, for the asker to wait on.
 */
/* Count a job whose start or end record waits for slurmctld. */
static void count_pending(struct jt_jobinfo *ji, void *arg)
{
	(void)ji;
	(*(size_t *)arg)++;
}

static void reply_flush(struct agent *a, FILE *out)
{
	struct spool_stats ss;
	uint64_t stored;
	size_t pending = 0;
	bool failing;

	flush_now(a);
	spool_get_stats(a->spool, &ss);
	jobs_foreach_pending(a->jobs, count_pending, &pending);
	fprintf(out, "ok\nspooled: %" PRIu64 "\npending: %zu\n", ss.next_seq,
		pending);
	if (sinks_store_position(a->sinks, &stored, &failing))
		fprintf(out, "stored: %" PRIu64 "\nstore_state: %s\n", stored,
			failing ? "retrying" : ss.error ? "spool failing" : "ok");
}

/* Reply to "status": what the loop's parts say now (status.h). */
static void reply_status(struct agent *a, bool privileged, FILE *out)
{
	struct status_src s = {
		.cfg = &a->cfg, .host = &a->host, .trk = a->trk,
		.jobs = a->jobs, .spool = a->spool, .sinks = a->sinks,
		.rules = a->rules, .imds = a->imds, .imds_why = a->imds_why,
		.idle = &a->idle, .idle_params = idle_params_of(&a->cfg),
		.sig = &a->sig, .dj = a->dj, .smk = a->smk,
		.counters = a->counters,
		.missing = collector_missing(a->col),
		.records_spooled = a->records_spooled,
		.records_unspooled = a->records_unspooled,
		.control_busy = a->control_busy,
		.rules_failing = a->rc.failing, .rc = &a->rc,
	};

	/* the counters as of the request: what ended before it is counted */
	collector_drain(a->col);
	collector_counters(a->col, a->counters);
	s.uptime_ns = util_now_ns(CLOCK_MONOTONIC) - a->started_ns;
	s.price = node_price(a);
	status_reply(&s, privileged, out);
}

/* The IMDS thread has news: the identity read, a spot interruption notice. */
static void on_imds(struct agent *a)
{
	struct imds_notice n;

	host_start_when_ready(a, false);
	while (imds_take_notice(a->imds, &n))
		tracker_spot(a->trk, &(struct jt_spot){
					      .action = n.action,
					      .action_ns = n.time_ns,
					      .seen_ns = n.seen_ns });
}

/* Job control's drain: the kernel's events so far. */
static void jc_drain(void *ctx)
{
	struct agent *a = ctx;

	collector_drain(a->col);
}

/* Job control's settle: a job's exits the kernel holds, at its end. */
static void jc_settle(void *ctx, unsigned ms)
{
	struct agent *a = ctx;

	collector_settle(a->col, ms);
}

/* A job's end record is written: the signals of its end, the store
 * flushed (its report may be asked for now). */
static void jc_ended(void *ctx, struct jt_jobinfo *ji)
{
	struct agent *a = ctx;
	struct sig_params sp = sig_params_of(&a->cfg);

	signals_agent_job_end(&a->sig, &sp, ji, a->cfg.store_enabled ?
			      a->cfg.sqlite_path : NULL,
			      util_now_ns(CLOCK_BOOTTIME));
	flush_now(a);
}

/* Job control's flush: what ended so far to the sinks now. */
static void jc_flush(void *ctx)
{
	flush_now(ctx);
}

/* May the peer change jobs and reload?  Root, or a member of control_group
 * (asked at accept: the answer is the connection's privileged). */
static bool peer_privileged(void *ctx, const struct control_peer *p)
{
	struct agent *a = ctx;

	return query_server_may_control(a->qs, p);
}

/* Answer one request line of c into out. */
static void answer(struct agent *a, struct control_server *srv,
		   struct control_conn *c, char *line, FILE *out)
{
	struct control_req req;
	const char *why;

	if (control_parse(line, &req, &why)) {
		fprintf(out, "error %s\n", why);
	} else if (!strcmp(req.cmd, "status")) {
		reply_status(a, c->privileged, out);
	} else if (!strcmp(req.cmd, "ps")) {
		status_ps(tracker_procs(a->trk), a->jobs,
			  query_server_sees_all(a->qs, &c->peer), c->peer.uid,
			  out);
	} else if (!strcmp(req.cmd, "flush")) {
		reply_flush(a, out);
	} else if (query_server_takes(req.cmd)) {
		if (!query_server_serve(a->qs, c->fd, &c->peer, &req, out))
			close(control_server_take(srv, c)); /* the child's now */
	} else if (!strcmp(req.cmd, "job-start") || !strcmp(req.cmd, "job-end") ||
		   !strcmp(req.cmd, "job-update")) {
		/* who may: there */
		jobctl_request(a->jc, &req, c->privileged, &c->peer, out);
	} else if (!strcmp(req.cmd, "reload") || !strncmp(req.cmd, "job-", 4)) {
		if (!c->privileged) {
			log_warn("control: %s refused for uid %u (pid %d)",
				 req.cmd, (unsigned)c->peer.uid,
				 (int)c->peer.pid);
			fprintf(out, "error permission denied: %s needs root%s%s\n",
				req.cmd, *a->cfg.control_group ? " or group " : "",
				a->cfg.control_group);
		} else if (!strcmp(req.cmd, "reload")) {
			char err[512];
			struct rules_stats st;

			reload(a);
			if (rulesctl_reload(&a->rc, err, sizeof(err))) {
				fprintf(out, "error %s\n", err);
			} else {
				rules_get_stats(a->rules, &st);
				fprintf(out, "ok\nrules: %u files, %u rules, %u self-tests passed (%s)\n",
					st.files, st.rules, st.selftests, st.dir);
			}
		} else {
			fprintf(out, "error unknown request \"%.64s\"\n", req.cmd);
		}
	} else {
		fprintf(out, "error unknown request \"%.64s\"\n", req.cmd);
	}
}

/* A complete request line of a control connection: answer it into out,
 * within the peer's budget (ratelimit.h) unless it is privileged. */
static void on_request(void *ctx, struct control_server *srv,
		       struct control_conn *c, char *line, FILE *out)
{
	struct agent *a = ctx;
	uint64_t now = util_now_ns(CLOCK_MONOTONIC);
	double wait;
	int all;

	if (!c->privileged &&
	    rate_admit(&a->rate, c->peer.uid, now, &wait, &all)) {
		a->control_busy++;
		if (all)
			fprintf(out, "error busy: users asked for more than their"
				" share of the agent (%g requests a second between"
				" them", RATE_ALL_UNITS_S);
		else
			fprintf(out, "error busy: uid %u asked for more than its"
				" share of the agent (%g requests a second",
				(unsigned)c->peer.uid, RATE_USER_UNITS_S);
		fprintf(out, ", an answer counting one more per %d KiB of it);"
			" try again in %.1f s\n", RATE_UNIT_BYTES / 1024,
			wait + 0.05);
		return;
	}
	answer(a, srv, c, line, out);
	if (!c->privileged)
		rate_charge(&a->rate, c->peer.uid, (size_t)ftell(out), now);
}





/*
 * The state, run, spool and store folders: created (make) and checked to
 * be root's only, the store file made 0600.  -EPERM: another user could
 * change them (a bad configuration).
 */
static int own_files(const struct jt_config *c, bool make, char *err,
		     size_t errlen)
{
	char db_dir[PATH_MAX];
	const struct {
		const char *option, *path;
		mode_t mode;
		bool narrow;
	} dirs[] = {
		{ "agent.state_dir", c->state_dir, 0700, true },
		{ "agent.run_dir", c->run_dir, 0755, false },
		{ "spool.dir", c->spool_dir, 0700, true },
		{ "store.sqlite_path", db_dir, 0700, false },
	};
	size_t n = sizeof(dirs) / sizeof(dirs[0]) - !c->store_enabled;
	int rc;

	util_strlcpy(db_dir, c->sqlite_path, sizeof(db_dir));
	*strrchr(db_dir, '/') = '\0';
	if (!*db_dir)
		util_strlcpy(db_dir, "/", sizeof(db_dir));
	for (size_t i = 0; i < n; i++) {
		rc = make ? fsperm_make_dir(dirs[i].option, dirs[i].path,
					    dirs[i].mode, dirs[i].narrow, err,
					    errlen) :
			    fsperm_check_dir(dirs[i].option, dirs[i].path,
					     err, errlen);
		if (rc)
			return rc;
	}
	if (make && c->store_enabled)
		return fsperm_private_file("store.sqlite_path", c->sqlite_path,
					   err, errlen);
	return 0;
}

/* Start or stop the Snakemake log reader as collector.snakemake_log says;
 * without a reader the jobs of local mode are not named (logged). */
static void set_smklog(struct agent *a)
{
	struct smklogq_opts o = { .exe = "/proc/self/exe" };

	if (!a->cfg.snakemake_log) {
		if (a->smk)
			log_info("smklog: collector.snakemake_log = false:"
				 " Snakemake logs are not read");
		smklogq_stop(a->smk);
		a->smk = NULL;
	} else if (!a->smk && smklogq_start(&o, &a->smk)) {
		log_warn("smklog: no log reader: the jobs of Snakemake's local"
			 " mode are not named");
	}
}

/* SIGHUP: re-read the configuration; apply what can change live. */
static void reload(struct agent *a)
{
	struct jt_config nc = { 0 };
	char err[512];

	if (config_defaults(&nc))
		return;
	if (config_load(&nc, a->config_path, !a->config_explicit, err,
			sizeof(err))) {
		log_error("reload: %s (keeping the running configuration)", err);
		config_free(&nc);
		return;
	}
	/* folders that change apply at the next start: refuse them now */
	if (own_files(&nc, false, err, sizeof(err)) ||
	    creds_check_config(&nc, err, sizeof(err))) {
		log_error("reload: %s (keeping the running configuration)", err);
		config_free(&nc);
		return;
	}
	if (!a->verbose)
		log_set_level(nc.log_level);
	if (strcmp(nc.sqlite_path, a->cfg.sqlite_path) ||
	    strcmp(nc.spool_dir, a->cfg.spool_dir) ||
	    nc.n_sinks != a->cfg.n_sinks ||
	    nc.store_enabled != a->cfg.store_enabled ||
	    nc.flush_interval_ms != a->cfg.flush_interval_ms ||
	    nc.flush_records != a->cfg.flush_records ||
	    strcmp(nc.run_dir, a->cfg.run_dir) ||
	    nc.ringbuf_kib != a->cfg.ringbuf_kib ||
	    nc.max_tracked != a->cfg.max_tracked ||
	    nc.argv_max_bytes != a->cfg.argv_max_bytes ||
	    nc.imds_mode != a->cfg.imds_mode ||
	    nc.record_mode != a->cfg.record_mode ||
	    strcmp(nc.imds_url, a->cfg.imds_url) ||
	    strcmp(nc.dmi_dir, a->cfg.dmi_dir) ||
	    nc.spot_poll_ms != a->cfg.spot_poll_ms ||
	    nc.docker_enabled != a->cfg.docker_enabled ||
	    strcmp(nc.docker_socket, a->cfg.docker_socket) ||
	    nc.docker_timeout_ms != a->cfg.docker_timeout_ms ||
	    nc.docker_end_grace_ms != a->cfg.docker_end_grace_ms)
		log_warn("reload: store, spool, sinks, run_dir, collector sizes, collector.record, cloud and docker change only at restart");
	if (strcmp(nc.rules_source, a->cfg.rules_source) ||
	    strcmp(nc.rules_public_key, a->cfg.rules_public_key) ||
	    nc.rules_poll_ms != a->cfg.rules_poll_ms ||
	    nc.rules_inotify != a->cfg.rules_inotify)
		log_warn("reload: rules.source, poll_interval, public_key and inotify change only at restart");
	free(a->cfg.control_group);
	a->cfg.control_group = nc.control_group;
	nc.control_group = NULL;
	free(a->cfg.reader_group);
	a->cfg.reader_group = nc.reader_group;
	nc.reader_group = NULL;
	/* unknown groups grant nothing (logged) */
	query_server_configure(a->qs, &a->cfg);
	a->cfg.max_conn_per_user = nc.max_conn_per_user;
	a->cfg.max_connections = nc.max_connections;
	if (a->ctl)
		control_server_set_limits(a->ctl, &(struct control_limits){
			.per_user = a->cfg.max_conn_per_user,
			.total = a->cfg.max_connections });
	a->cfg.sample_interval_ms = nc.sample_interval_ms;
	a->cfg.first_sample_ms = nc.first_sample_ms;
	a->cfg.log_level = nc.log_level;
	a->cfg.rules_deadline_ms = nc.rules_deadline_ms;
	rules_set_deadline(a->rules, nc.rules_deadline_ms);
	a->cfg.snakemake_log = nc.snakemake_log;
	set_smklog(a);
	a->cfg.store_retention_days = nc.store_retention_days;
	a->cfg.store_max_mib = nc.store_max_mib;
	sinks_store_limits(a->sinks, &a->cfg);
	/* prices, waste thresholds and idle settings apply to what comes */
	config_take_cost(&a->cfg, &nc);
	a->price.known = false;
	node_price(a);
	log_info("configuration reloaded from %s",
		 nc.source ? nc.source : "(defaults)");
	config_free(&nc);
}

/* Handle every pending signal. */
static void on_signal(struct agent *a)
{
	struct signalfd_siginfo si;

	while (read(a->sigfd, &si, sizeof(si)) == sizeof(si)) {
		switch (si.ssi_signo) {
		case SIGTERM:
		case SIGINT:
			log_info("signal %d: flushing and exiting", si.ssi_signo);
			a->stop = true;
			break;
		case SIGHUP: {
			char err[512];

			reload(a);
			rulesctl_reload(&a->rc, err, sizeof(err));
			break;
		}
		}
	}
}

/* Turn on delay accounting for io.blkio_delay_s when asked to. */
static void enable_delayacct(void)
{
	const char *path = "/proc/sys/kernel/task_delayacct";
	char buf[8];
	FILE *f;

	if (util_read_file(path, buf, sizeof(buf)) <= 0 || buf[0] != '0')
		return;
	f = fopen(path, "w");
	if (!f || fputs("1\n", f) < 0 || fclose(f)) {
		log_warn("cannot enable delay accounting (%s): io.blkio_delay_s will be 0",
			 strerror(errno));
		return;
	}
	log_info("enabled kernel.task_delayacct for block-I/O delay figures");
}

/* Add fd to the epoll set. */
static int watch(struct agent *a, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	if (epoll_ctl(a->epfd, EPOLL_CTL_ADD, fd, &ev))
		return -errno;
	return 0;
}

/* Set up signals, timer, control socket and epoll. */
static int setup_loop(struct agent *a)
{
	struct itimerspec its = {
		.it_interval = { 0, TICK_MS * 1000000L },
		.it_value = { 0, TICK_MS * 1000000L },
	};
	sigset_t mask;
	int err, lfd;

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	a->sigfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	a->tickfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	a->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (a->sigfd < 0 || a->tickfd < 0 || a->epfd < 0) {
		err = -errno;
		log_error("event loop setup: %s", strerror(-err));
		return err;
	}
	timerfd_settime(a->tickfd, 0, &its, NULL);
	lfd = control_listen(config_socket_path(&a->cfg));
	if (lfd < 0)
		return lfd;
	a->sock_bound = true;
	err = control_server_new(lfd, &(struct control_limits){
					 .per_user = a->cfg.max_conn_per_user,
					 .total = a->cfg.max_connections },
				 &(struct control_ops){
					 .request = on_request,
					 .privileged = peer_privileged,
					 .ctx = a },
				 &a->ctl);
	if (err)
		return err;
	if ((err = watch(a, a->sigfd)) || (err = watch(a, a->tickfd)) ||
	    (err = watch(a, control_server_fd(a->ctl))) ||
	    (a->rc.fd >= 0 && (err = watch(a, a->rc.fd))) ||
	    (a->imds && (err = watch(a, imds_fd(a->imds)))) ||
	    (a->dj && (err = watch(a, dockjobs_fd(a->dj)))) ||
	    (err = watch(a, collector_fd(a->col)))) {
		log_error("epoll: %s", strerror(-err));
		return err;
	}
	return 0;
}

/* The event loop, until SIGTERM/SIGINT. */
static void run(struct agent *a)
{
	struct epoll_event evs[8];

	while (!a->stop) {
		int n = epoll_wait(a->epfd, evs, 8, 1000);

		for (int i = 0; i < n; i++) {
			int fd = evs[i].data.fd;

			if (fd == a->sigfd) {
				on_signal(a);
			} else if (fd == a->tickfd) {
				uint64_t exp;

				if (read(fd, &exp, sizeof(exp)) > 0)
					on_tick(a);
			} else if (fd == control_server_fd(a->ctl)) {
				control_server_dispatch(a->ctl);
			} else if (fd == a->rc.fd) {
				rulesctl_changed(&a->rc,
						 util_now_ns(CLOCK_MONOTONIC));
			} else if (a->imds && fd == imds_fd(a->imds)) {
				on_imds(a);
			} else if (a->dj && fd == dockjobs_fd(a->dj)) {
				dockjobs_take(a->dj);
			} else if (jobctl_on_fd(a->jc, fd)) {
				/* scontrol's answer */
			} else {
				collector_drain(a->col);
			}
		}
	}
}

/* Print usage to out. */
static void usage(FILE *out)
{
	fprintf(out,
		"Usage: jobtraced [--config FILE] [--foreground] [--verbose] [--check-config]\n"
		"\n"
		"Watch every process of this node from the kernel and record it.\n"
		"\n"
		"  -c, --config FILE   configuration (default %s)\n"
		"  -f, --foreground    stay in the foreground, log to stderr\n"
		"  -v, --verbose       debug logging, libbpf messages included\n"
		"      --check-config  check the configuration and exit\n"
		"  -h, --help          this text\n"
		"  -V, --version       print the version\n",
		JT_DEFAULT_CONFIG);
}

/* The options: a.config_path, verbose, *foreground, *check; -1 to go on,
 * else the exit status (usage, --help, --version). */
static int parse_args(struct agent *a, int argc, char **argv,
		      bool *foreground, bool *check)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "foreground", no_argument, NULL, 'f' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "check-config", no_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 }
	};
	int c;

	a->config_path = JT_DEFAULT_CONFIG;
	while ((c = getopt_long(argc, argv, "c:fvhV", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			a->config_path = optarg;
			a->config_explicit = true;
			break;
		case 'f':
			*foreground = true;
			break;
		case 'v':
			a->verbose = true;
			break;
		case 'C':
			*check = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("jobtraced %s\n", JT_VERSION);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "jobtraced: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	return -1;
}

/* --check-config: the loaded configuration checked and printed; the exit
 * status. */
static int check_config(struct agent *a)
{
	char err[512];

	config_warn_secrets(&a->cfg);
	if (creds_check_config(&a->cfg, err, sizeof(err))) {
		fprintf(stderr, "jobtraced: %s\n", err);
		return 2;
	}
	printf("# %s: configuration ok\n",
	       a->cfg.source ? a->cfg.source : "(defaults, no file)");
	config_dump(&a->cfg, stdout);
	return 0;
}

/* The folders and secrets checked, the cloud's reader started; -1 to go
 * on, else the exit status. */
static int check_files(struct agent *a)
{
	char err[512];
	bool gcp = false;
	int ferr;

	ferr = own_files(&a->cfg, true, err, sizeof(err));
	if (ferr) {
		log_error("%s", err);
		return ferr == -EPERM ? 2 : 1;
	}
	/* the sinks' secrets: root's alone, checked before anything runs */
	ferr = creds_check_config(&a->cfg, err, sizeof(err));
	if (ferr) {
		log_error("%s", err);
		return ferr == -ENOMEM ? 1 : 2;
	}
	config_warn_secrets(&a->cfg);
	if (a->cfg.delay_accounting)
		enable_delayacct();
	/* the cloud's identity is read beside the start: only the start
	 * record waits for it */
	if (hostrec_cloud_asked(&a->cfg, &gcp, a->imds_why,
				sizeof(a->imds_why)) &&
	    imds_start(&(struct imds_opts){ .url = a->cfg.imds_url,
					    .poll_ms = a->cfg.spot_poll_ms,
					    .gcp = gcp },
		       &a->imds)) {
		log_warn("cloud: cannot start the instance metadata reader:"
			 " no cloud facts");
		snprintf(a->imds_why, sizeof(a->imds_why), "error: the reader"
			 " could not start (see the log)");
	}
	return -1;
}

/* The rules, the job registry, the tracker and what it calls, the
 * signals; 0 or an error (logged). */
static int start_tracking(struct agent *a)
{
	struct rules_limits rl = { .mem_bytes = RULES_MEM_BYTES,
				   .instructions = RULES_INSTRUCTIONS,
				   .deadline_ms = a->cfg.rules_deadline_ms };

	if (rules_new(&rl, &a->rules) || jobs_new(&a->jobs) ||
	    cgtrust_new(NULL, 0, &a->cgt) ||
	    tracker_new(a->rules, a->jobs, &a->host,
			&(struct tracker_cb){ .record = on_record,
					      .exclude = on_exclude,
					      .price = node_price,
					      .gone = on_gone,
					      .followed = on_followed,
					      .engine_job = on_engine_job,
					      .cg_root = on_cg_root,
					      .engine_seen = on_engine_seen,
					      .ctx = a }, &a->trk))
		return -1;
	tracker_configure(a->trk, &a->cfg);
	a->sig.host = &a->host;
	a->sig.jobs = a->jobs;
	a->sig.put = on_record;
	a->sig.ctx = a;
	return signals_agent_init(&a->sig);
}


/* Everything up to the loop: the parts, the BPF programs attached, the
 * processes that run already found, the start record; 0 or an error. */
static int start(struct agent *a)
{
	struct collector_cb cb = { .event = on_event, .samples = on_samples,
				   .ctx = a };
	struct collector_opts co = {
		.ringbuf_kib = a->cfg.ringbuf_kib,
		.max_tracked = a->cfg.max_tracked,
		.argv_max = a->cfg.argv_max_bytes,
		.files = a->cfg.files_enabled,
		.follow_opens = a->cfg.files_follow_opens,
		.verbose = a->verbose,
	};

	if (query_server_new(&a->qs) || query_server_configure(a->qs, &a->cfg) ||
	    start_tracking(a) ||
	    (a->cfg.docker_enabled &&
	     dockjobs_start(&a->cfg, CONTAINERS_MAX, a->jobs, &a->host,
			    a->trk, &a->dj)) ||
	    open_delivery(a))
		return -1;
	rulesctl_init(&a->rc, a->rules, a->cfg.rules_dir);
	rulesctl_source(&a->rc, &a->cfg);
	rulesctl_start(&a->rc);
	set_smklog(a);
	if (collector_open(&co, &cb, &a->col) || setup_loop(a) ||
	    jobctl_new(a->jobs, a->trk, &a->cfg, a->epfd,
		       &(struct jobctl_ops){ .drain = jc_drain,
					     .settle = jc_settle,
					     .ended = jc_ended,
					     .flush = jc_flush, .ctx = a },
		       &a->jc))
		return -1;
	tracker_set_files(a->trk, collector_files(a->col));
	/* programs are attached: whatever runs already is found now */
	collector_sample(a->col, true);
	collector_drain(a->col);
	a->next_sample_ns = util_now_ns(CLOCK_MONOTONIC) +
			    a->cfg.sample_interval_ms * 1000000ull;
	a->last_sync_ns = util_now_ns(CLOCK_MONOTONIC);
	a->host_start_ns = util_now_ns(CLOCK_BOOTTIME);
	host_start_when_ready(a, !a->imds);
	flush(a);
	log_info("jobtraced %s started: %zu processes tracked, spool %s, %zu sinks, socket %s",
		 JT_VERSION, tracker_stats(a->trk).tracked, a->cfg.spool_dir,
		 spool_sinks(a->spool), config_socket_path(&a->cfg));
	return 0;
}

/* After the loop: what the kernel and slurmctld have written, the stop
 * record, the spool synced. */
static void stop(struct agent *a)
{
	collector_drain(a->col);
	/* what waits for slurmctld is written as it is known now */
	jobctl_stop(a->jc);
	check_drops(a);
	host_start_when_ready(a, true);
	emit_host(a, "stop", util_now_ns(CLOCK_BOOTTIME));
	flush(a);
	log_info("stopped: %" PRIu64 " events, %" PRIu64 " records spooled, %"
		 PRIu64 " dropped", tracker_stats(a->trk).events_seen,
		 a->records_spooled, status_dropped(a->counters));
}

/* Free every part, in the order they may call each other. */
static void cleanup(struct agent *a)
{
	jobctl_free(a->jc);	/* writes what waits: every part still there */
	imds_stop(a->imds);
	control_server_free(a->ctl);
	if (a->sock_bound)
		unlink(config_socket_path(&a->cfg));
	if (a->epfd >= 0)
		close(a->epfd);
	if (a->sigfd >= 0)
		close(a->sigfd);
	if (a->tickfd >= 0)
		close(a->tickfd);
	rulesctl_fini(&a->rc);
	collector_close(a->col);
	dockjobs_free(a->dj);
	rules_free(a->rules);
	jobs_free(a->jobs);
	query_server_free(a->qs);
	/* the sinks store what they can of the synced records, then stop */
	sinks_stop(a->sinks, DRAIN_MS);
	spool_close(a->spool);
	signals_agent_fini(&a->sig);
	tracker_free(a->trk);
	smklogq_stop(a->smk);
	cgtrust_free(a->cgt);
	jbuf_free(&a->jb);
	config_free(&a->cfg);
}

/* Entry point: parse options, load config, start and run the agent. */
int main(int argc, char **argv)
{
	struct agent a = { .epfd = -1, .sigfd = -1, .tickfd = -1,
			   .rc = { .fd = -1 } };
	bool foreground = false, check = false;
	char err[512];
	int rc;

	/* the Snakemake log reader: nothing of the agent either */
	if (argc > 1 && !strcmp(argv[1], SMKLOG_READER_ARG))
		return smklog_reader_main(0);
	rate_init(&a.rate);
	rc = parse_args(&a, argc, argv, &foreground, &check);
	if (rc >= 0)
		return rc;
	log_init("jobtraced", 0, LOG_LVL_INFO);
	stages_init();
	if (config_defaults(&a.cfg)) {
		log_error("out of memory");
		return 1;
	}
	if (config_load(&a.cfg, a.config_path, !a.config_explicit, err,
			sizeof(err))) {
		fprintf(stderr, "jobtraced: %s\n", err);
		config_free(&a.cfg);
		return 2;
	}
	if (check) {
		rc = check_config(&a);
		config_free(&a.cfg);
		return rc;
	}
	log_init("jobtraced", a.cfg.log_syslog && !foreground,
		 a.verbose ? LOG_LVL_DEBUG : a.cfg.log_level);
	if (geteuid() != 0)
		log_warn("not running as root: loading BPF programs will probably fail");
	a.started_ns = util_now_ns(CLOCK_MONOTONIC);
	a.last_summary_ns = a.started_ns;
	record_host_init(&a.host, a.cfg.hostname);
	jbuf_init(&a.jb);
	rc = check_files(&a);
	if (rc < 0) {
		rc = 1;
		if (!start(&a)) {
			run(&a);
			stop(&a);
			rc = 0;
		}
	}
	cleanup(&a);
	return rc;
}
