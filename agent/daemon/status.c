// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * status.c - the replies to "status" and "ps" (status.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dockjobs.h"
#include "imds.h"
#include "jobs.h"
#include "log.h"
#include "proc_table.h"
#include "procfiles.h"
#include "rules.h"
#include "rulesctl.h"
#include "signals.h"
#include "sink.h"
#include "smklogq.h"
#include "spool.h"
#include "stages.h"
#include "status.h"
#include "tracker.h"
#include "util.h"

/* Sum of ring-buffer losses of every kind. */
uint64_t status_dropped(const uint64_t *counters)
{
	return counters[JT_CNT_RB_DROP_FORK] + counters[JT_CNT_RB_DROP_EXEC] +
	       counters[JT_CNT_RB_DROP_EXIT] + counters[JT_CNT_RB_DROP_OOM] +
	       counters[JT_CNT_RB_DROP_FILE];
}

/* Add one problem to the list in buf (len bytes); count it in *n. */
__attribute__((format(printf, 4, 5)))
static void problem(char *buf, size_t len, unsigned *n, const char *fmt, ...)
{
	size_t o = strlen(buf);
	va_list ap;

	if (o + 3 >= len)
		return;
	if (*n)
		o += snprintf(buf + o, len - o, "; ");
	va_start(ap, fmt);
	vsnprintf(buf + o, len - o, fmt, ap);
	va_end(ap);
	(*n)++;
}

/* The problems of the rules, the look-ups and the log reader. */
static void health_parts(const struct status_src *s, char *buf, size_t len,
			 unsigned *n)
{
	struct rules_stats rs;
	char why[256];

	rules_get_stats(s->rules, &rs);
	if (!rs.files)
		problem(buf, len, n, "no rules loaded from %s: every"
			" process is recorded, no argument redacted",
			s->cfg->rules_dir);
	else if (s->rules_failing)
		problem(buf, len, n, "rules did not load: %s (the"
			" previous rules are in force)", rs.last_error);
	if (dockjobs_failing(s->dj))
		problem(buf, len, n, "docker look-ups failing (see"
			" docker_last_error)");
	if (imds_failing(s->imds, why, sizeof(why)))
		problem(buf, len, n, "cloud metadata: %s", why);
	if (s->smk) {
		struct smklogq_stats sq;

		smklogq_stats(s->smk, &sq);
		if (sq.stuck)
			problem(buf, len, n, "the Snakemake log reader"
				" waits for a file of uid %u's that does not answer"
				" (see smklog)", (unsigned)sq.stuck_uid);
	}
}

/*
 * The first line of "status", like `systemctl is-system-running`:
 * "status: running" when nothing needs a look, else "status: degraded"
 * and each problem: kernel events or records lost, the spool failing, a
 * sink retrying or losing records, the rules not loaded, container
 * look-ups or the cloud's metadata failing.
 */
void status_health(const struct status_src *s, FILE *out)
{
	char buf[2048] = "", sinks[1024];
	uint64_t dropped = status_dropped(s->counters);
	struct spool_stats ss;
	unsigned n = 0;

	if (dropped)
		problem(buf, sizeof(buf), &n, "%" PRIu64 " kernel events lost"
			" (ring buffer full: raise collector.ringbuf_size_kib)",
			dropped);
	if (s->counters[JT_CNT_TRACK_FULL])
		problem(buf, sizeof(buf), &n, "tracked-process map full %" PRIu64
			" times (raise collector.max_tracked)",
			s->counters[JT_CNT_TRACK_FULL]);
	spool_get_stats(s->spool, &ss);
	if (ss.error)
		problem(buf, sizeof(buf), &n, "spool %s failing: %s",
			s->cfg->spool_dir, strerror(ss.error));
	if (s->records_unspooled)
		problem(buf, sizeof(buf), &n, "%" PRIu64 " records lost before"
			" the spool", s->records_unspooled);
	if (sinks_problems(s->sinks, sinks, sizeof(sinks)))
		problem(buf, sizeof(buf), &n, "%s", sinks);
	health_parts(s, buf, sizeof(buf), &n);
	if (n)
		fprintf(out, "status: degraded: %u problem%s: %s\n", n,
			n == 1 ? "" : "s", buf);
	else
		fprintf(out, "status: running\n");
}

/* The kernel's and the tracker's counters. */
static void status_counters(const struct status_src *s, FILE *out)
{
	const uint64_t *c = s->counters;
	struct tracker_stats t = tracker_stats(s->trk);

	fprintf(out, "events_seen: %" PRIu64 "\n", t.events_seen);
	fprintf(out, "events_dropped: %" PRIu64 "\n", status_dropped(c));
	fprintf(out, "dropped_fork: %" PRIu64 "\n", c[JT_CNT_RB_DROP_FORK]);
	fprintf(out, "dropped_exec: %" PRIu64 "\n", c[JT_CNT_RB_DROP_EXEC]);
	fprintf(out, "dropped_exit: %" PRIu64 "\n", c[JT_CNT_RB_DROP_EXIT]);
	fprintf(out, "dropped_oom: %" PRIu64 "\n", c[JT_CNT_RB_DROP_OOM]);
	fprintf(out, "dropped_file: %" PRIu64 "\n", c[JT_CNT_RB_DROP_FILE]);
	fprintf(out, "tracked_map_full: %" PRIu64 "\n", c[JT_CNT_TRACK_FULL]);
	fprintf(out, "files_map_full: %" PRIu64 "\n", c[JT_CNT_FSLOT_FULL]);
	fprintf(out, "files_named_own: %" PRIu64 "\n",
		t.files_named[PROCFILES_NAMED_OWN]);
	fprintf(out, "files_named_by_parent: %" PRIu64 "\n",
		t.files_named[PROCFILES_NAMED_PARENT]);
	fprintf(out, "files_named_by_parent_fd: %" PRIu64 "\n",
		t.files_named[PROCFILES_NAMED_PARENT_FD]);
	fprintf(out, "files_unnamed: %" PRIu64 "\n",
		t.files_named[PROCFILES_UNNAMED]);
	fprintf(out, "blkio_delay_impossible: %" PRIu64 "\n",
		c[JT_CNT_BLKIO_IMPOSSIBLE]);
	fprintf(out, "exits_before_last_switch: %" PRIu64 "\n",
		c[JT_CNT_EXIT_EARLY]);
	fprintf(out, "exits_lost: %" PRIu64 "\n", t.exits_lost);
	fprintf(out, "oom_kills: %" PRIu64 "\n", t.oom_kills);
	fprintf(out, "tracked: %zu\n", t.tracked);
	fprintf(out, "records_spooled: %" PRIu64 "\n", s->records_spooled);
	fprintf(out, "record: %s\n", t.jobs_only ?
		"jobs (collector.record: processes outside jobs are counted,"
		" not recorded)" : "all");
	if (t.jobs_only) {
		fprintf(out, "outside_jobs_processes: %" PRIu64 "\n",
			t.outside.processes);
		fprintf(out, "outside_jobs_cpu_s: %.3f\n", t.outside.cpu_s);
	}
}

/* The spool's and the sinks' lines. */
static void status_spool(const struct status_src *s, FILE *out)
{
	const struct jt_config *cfg = s->cfg;
	struct spool_stats ss;

	spool_get_stats(s->spool, &ss);
	fprintf(out, "spool: %s\n", cfg->spool_dir);
	fprintf(out, "spool_bytes: %" PRIu64 " of %u MiB\n", ss.bytes,
		cfg->spool_max_mib);
	fprintf(out, "spool_segments: %u\n", ss.segments);
	fprintf(out, "spool_records: %" PRIu64 "\n", ss.next_seq - ss.first_seq);
	fprintf(out, "spool_unsynced: %u\n", spool_unsynced(s->spool));
	if (ss.error)
		fprintf(out, "spool_state: failing: %s: %s%s\n", cfg->spool_dir,
			strerror(ss.error), ss.error == ENOSPC ||
			ss.error == EDQUOT ? " (filesystem full)" : "");
	else
		fprintf(out, "spool_state: ok\n");
	/* records never spooled: failed writes, encoding, too large */
	fprintf(out, "spool_records_lost: %" PRIu64 "\n", s->records_unspooled);
	fprintf(out, "spool_records_lost_disk_full: %" PRIu64 "\n",
		ss.lost_disk_full);
	/* attempts: a sync retried ten times counts ten */
	fprintf(out, "spool_write_errors: %" PRIu64 "\n", ss.write_errors);
	fprintf(out, "spool_torn_tail_cut_bytes: %" PRIu64 "\n",
		ss.tail_cut_bytes);
	fprintf(out, "spool_ack_bad: %" PRIu64 "\n", ss.ack_bad);
	fprintf(out, "spool_foreign: %" PRIu64 "\n", ss.foreign);
	sinks_status(s->sinks, out);
}

/* The rules' lines. */
static void status_rules(const struct status_src *s, FILE *out)
{
	struct rules_stats st;

	rules_get_stats(s->rules, &st);
	fprintf(out, "rules: %s\n", st.files ? st.dir : "none loaded (every process included, tool = program name, arguments withheld)");
	fprintf(out, "rules_state: %s\n",
		!st.files ? "none: arguments withheld"
		: st.builtin ? "built-in: the rules of rules.source did not load, arguments withheld"
			     : "ok");
	fprintf(out, "rules_args_withheld: %llu\n",
		(unsigned long long)st.args_withheld);
	fprintf(out, "rules_files: %u\n", st.files);
	fprintf(out, "rules_count: %u\n", st.rules);
	fprintf(out, "rules_selftests: %u\n", st.selftests);
	fprintf(out, "rules_calls: %llu\n", (unsigned long long)st.calls);
	fprintf(out, "rules_errors: %llu\n", (unsigned long long)st.runtime_errors);
	fprintf(out, "rules_failed_closed: %llu\n", (unsigned long long)st.failed_closed);
	fprintf(out, "rules_reloads: %llu ok, %llu failed\n",
		(unsigned long long)st.reloads_ok,
		(unsigned long long)st.reloads_failed);
	fprintf(out, "rules_last_error: %s\n", *st.last_error ? st.last_error : "none");
	fprintf(out, "rules_load_error: %s\n", *st.load_error ? st.load_error : "none");
	if (s->rc)
		rulesctl_print(s->rc, out);
}

/* Reply to "status": agent health and counters; a privileged peer sees
 * the paths of users' files too. */
void status_reply(const struct status_src *s, bool privileged, FILE *out)
{
	const struct jt_config *cfg = s->cfg;
	const struct cost_price *p = s->price;
	size_t running, known = jobs_count(s->jobs, &running);

	fprintf(out, "ok\n");
	status_health(s, out);
	fprintf(out, "version: %s\n", JT_VERSION);
	fprintf(out, "pid: %d\n", (int)getpid());
	fprintf(out, "host: %s\n", s->host->name);
	fprintf(out, "config: %s\n", cfg->source ? cfg->source : "(defaults)");
	fprintf(out, "uptime_s: %.1f\n", s->uptime_ns / 1e9);
	status_counters(s, out);
	stages_status(out);
	fprintf(out, "store: %s%s\n", cfg->store_enabled ? "sqlite " : "none",
		cfg->store_enabled ? cfg->sqlite_path : "");
	status_spool(s, out);
	fprintf(out, "signals_missing: %s\n", *s->missing ? s->missing : "none");
	if (s->imds)
		imds_status(s->imds, out);
	else
		fprintf(out, "cloud.imds: %s\n", s->imds_why);
	if (p->per_hour >= 0)
		fprintf(out, "cost.node_price: %g %s an hour (%s)\n",
			p->per_hour, p->currency, p->source);
	else
		fprintf(out, "cost.node_price: none (%s)\n", p->note);
	status_rules(s, out);
	fprintf(out, "jobs_running: %zu\n", running);
	fprintf(out, "jobs_known: %zu\n", known);
	idle_status(s->idle, &s->idle_params, util_now_ns(CLOCK_BOOTTIME),
		    s->host->boot_to_real_ns, out);
	signals_status(s->sig->counts, signals_slow_skipped(s->sig->slow), out);
	dockjobs_status(s->dj, out);
	if (!s->smk && cfg->snakemake_log)
		fprintf(out, "smklog: no reader: it could not start (the"
			" agent's log says why)\n");
	else
		smklogq_status(s->smk, privileged, out);
	fprintf(out, "excluded_processes: %" PRIu64 "\n",
		tracker_stats(s->trk).excluded);
	fprintf(out, "excluded_events_in_kernel: %" PRIu64 "\n",
		s->counters[JT_CNT_EXCLUDED]);
	fprintf(out, "control_busy: %" PRIu64 "\n", s->control_busy);
	fprintf(out, "last_error: %s\n",
		*log_last_error() ? log_last_error() : "none");
}

/* Human-readable bytes into buf, returned for use in printf. */
static const char *human(uint64_t v, char *buf, size_t len)
{
	util_human_bytes(v, buf, len);
	return buf;
}

/* ps context: who asks, and a sorted snapshot of what they may see. */
struct ps_ctx {
	struct jt_proc **v;
	size_t n, cap;
	struct jobs *jobs;
	bool all;		/* else uid's processes and jobs only */
	uid_t uid;
};

/* Collect running processes for ps. */
static void ps_collect(struct jt_proc *p, void *arg)
{
	struct ps_ctx *c = arg;

	if (p->state & JT_PS_EXCLUDED)
		return;
	if (!c->all && p->uid != c->uid) {
		struct jt_jobinfo *ji = p->job.id[0] ?
			jobs_get(c->jobs, p->job.scheduler, p->job.id, false) : NULL;

		/* a job shows its owner as root stated it the processes of
		 * others in it; a user's own job only their own */
		if (!ji || ji->by_user || !ji->uid_known || ji->uid != c->uid)
			return;
	}
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 256;
		struct jt_proc **v = realloc(c->v, cap * sizeof(*v));

		if (!v)
			return;
		c->v = v;
		c->cap = cap;
	}
	c->v[c->n++] = p;
}

/* Order ps rows by pid. */
static int by_pid(const void *x, const void *y)
{
	const struct jt_proc *const *a = x, *const *b = y;

	return (*a)->pid < (*b)->pid ? -1 : (*a)->pid > (*b)->pid;
}

/* One row of ps: p's figures, its rates over the last two samples. */
static void ps_row(const struct jt_proc *p, FILE *out)
{
	double dt = (p->sample_ns - p->prev_sample_ns) / 1e9;
	bool rate = p->prev_sample_ns && dt > 0;
	char job[160], cpu[16] = "-", tool[JT_STR_SMALL], cmd[64];
	char r1[16], r2[16], r3[16];
	uint64_t rd = 0, wr = 0;
	size_t k;

	if (rate) {
		double cs = p->c.cpu_user_s + p->c.cpu_sys_s -
			    p->prev.cpu_user_s - p->prev.cpu_sys_s;

		snprintf(cpu, sizeof(cpu), "%.1f", 100.0 * cs / dt);
		if (p->c.read_bytes >= p->prev.read_bytes)
			rd = (p->c.read_bytes - p->prev.read_bytes) / dt;
		if (p->c.write_bytes >= p->prev.write_bytes)
			wr = (p->c.write_bytes - p->prev.write_bytes) / dt;
	}
	if (p->job.id[0])
		snprintf(job, sizeof(job), "%s%s%s", p->job.id,
			 p->job.step[0] ? "." : "", p->job.step);
	else
		snprintf(job, sizeof(job), "-");
	/* names and arguments are whatever the program chose */
	util_strlcpy(tool, p->tool_name[0] ? p->tool_name : p->comm,
		     sizeof(tool));
	for (k = 0; p->argv && k < p->argv_len && k < 60; k++)
		cmd[k] = p->argv[k] ? p->argv[k] : ' ';
	cmd[k] = '\0';
	fprintf(out, "%-8u %-8u %-20.20s %-16.16s %6s %9s %10s %10s %s\n",
		p->pid, p->ppid, util_printable(tool), util_printable(job), cpu,
		p->sample_ns ? human(p->c.rss_bytes, r1, sizeof(r1)) : "-",
		rate ? human(rd, r2, sizeof(r2)) : "-",
		rate ? human(wr, r3, sizeof(r3)) : "-", util_printable(cmd));
	if (p->progress.set) {
		char pg[sizeof(p->progress.path) + 64];

		/* under its row: how far it has read its largest input */
		procfiles_progress_text(&p->progress, pg, sizeof(pg));
		fprintf(out, "%-8s %s\n", "", pg);
	}
}

/*
 * Reply to "ps": tracked processes running now with rates; for a peer
 * who does not see everything, its own and its jobs'.
 */
void status_ps(struct proc_table *procs, struct jobs *jobs, bool all,
	       uid_t uid, FILE *out)
{
	struct ps_ctx c = { .jobs = jobs, .uid = uid, .all = all };

	proc_table_foreach(procs, ps_collect, &c);
	if (c.n > 1)
		qsort(c.v, c.n, sizeof(*c.v), by_pid);
	fprintf(out, "ok\n%-8s %-8s %-20s %-16s %6s %9s %10s %10s %s\n", "PID",
		"PPID", "TOOL", "JOB", "CPU%", "RSS", "READ/s", "WRITE/s",
		"CMD");
	for (size_t i = 0; i < c.n; i++)
		ps_row(c.v[i], out);
	free(c.v);
}
