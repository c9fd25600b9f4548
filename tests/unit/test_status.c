// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_status.c - cmocka tests of agent/daemon/status.c without root: the
 * replies to "ps" (which processes a user sees, their figures) and
 * "status" (its first line, the counters and the spool's lines) from a
 * real tracker, job registry, rules engine and spool.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "config.h"
#include "jobs.h"
#include "proc_table.h"
#include "record.h"
#include "rules.h"
#include "signals.h"
#include "spool.h"
#include "status.h"
#include "tracker.h"

struct fx {
	struct jt_config cfg;
	struct jobs *jobs;
	struct jt_host host;
	struct tracker *t;
	struct rules *rules;
	struct spool *spool;
	struct idle idle;
	struct sig_agent sig;
	struct cost_price price;
	uint64_t counters[JT_CNT_NR];
	struct status_src src;
	char dir[64];
	char out[16384];
};

/* Records are not what these tests look at. */
static void on_record(void *ctx, struct jbuf *b)
{
	(void)ctx;
	(void)b;
}

/* A tracker, a registry, the built-in rules and a spool in a folder of
 * its own, as the agent has them, and the status source over them. */
static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct rules_limits rl = { .mem_bytes = 64u << 20,
				   .instructions = 1000000ul };
	struct spool_opts so = { .max_bytes = 1u << 20,
				 .segment_bytes = 64u << 10 };
	char err[512];

	if (!f || config_defaults(&f->cfg) || jobs_new(&f->jobs))
		return -1;
	snprintf(f->dir, sizeof(f->dir), "/tmp/test_status.XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	free(f->cfg.spool_dir);
	if (asprintf(&f->cfg.spool_dir, "%s/spool", f->dir) < 0)
		return -1;
	f->cfg.store_enabled = false;
	so.dir = f->cfg.spool_dir;
	snprintf(f->host.name, sizeof(f->host.name), "node1");
	if (tracker_new(NULL, f->jobs, &f->host,
			&(struct tracker_cb){ .record = on_record, .ctx = f },
			&f->t) ||
	    rules_new(&rl, &f->rules) ||
	    rules_load_builtin(f->rules, err, sizeof(err)) ||
	    spool_open(&so, NULL, 0, &f->spool, err, sizeof(err)))
		return -1;
	f->price.per_hour = -1;
	snprintf(f->price.note, sizeof(f->price.note), "no price known");
	f->src = (struct status_src){
		.cfg = &f->cfg, .host = &f->host, .trk = f->t,
		.jobs = f->jobs, .spool = f->spool, .rules = f->rules,
		.imds_why = "off (cloud.imds = \"off\")", .price = &f->price,
		.idle = &f->idle, .sig = &f->sig, .counters = f->counters,
		.missing = "",
	};
	*state = f;
	return 0;
}

/* Free it all, the spool's folder too. */
static int teardown(void **state)
{
	struct fx *f = *state;
	char cmd[128];

	spool_close(f->spool);
	rules_free(f->rules);
	tracker_free(f->t);
	jobs_free(f->jobs);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	assert_int_equal(system(cmd), 0);
	config_free(&f->cfg);
	free(f);
	return 0;
}

/* A running process in the tracker's table: pid, of uid, in job (NULL:
 * none, else "scheduler:id"), running comm with argv "comm arg". */
static struct jt_proc *proc(struct fx *f, uint32_t pid, uint32_t uid,
			    const char *job, const char *comm)
{
	struct jt_proc *p = proc_table_get(tracker_procs(f->t), pid,
					   pid * 1000ull, NULL);
	char argv[64];
	int n;

	assert_non_null(p);
	p->ppid = 1;
	p->uid = uid;
	snprintf(p->comm, sizeof(p->comm), "%s", comm);
	n = snprintf(argv, sizeof(argv), "%s%carg", comm, '\0');
	assert_int_equal(proc_set_str(&p->argv, argv, (size_t)n + 1), 0);
	p->argv_len = (size_t)n + 1;
	if (job) {
		const char *colon = strchr(job, ':');

		snprintf(p->job.scheduler, sizeof(p->job.scheduler), "%.*s",
			 (int)(colon - job), job);
		snprintf(p->job.id, sizeof(p->job.id), "%s", colon + 1);
	}
	return p;
}

/* n kernel events through the tracker: processes of an exec and an exit
 * (1 ms of CPU) each, in no job, gone from its table at their exit. */
static void events(struct fx *f, unsigned n)
{
	static union jt_event ev;	/* large */

	for (unsigned i = 0; i < n; i++) {
		uint32_t pid = 20000 + i / 2;

		memset(&ev, 0, sizeof(ev));
		ev.hdr = (struct jt_ev_hdr){ i % 2 ? JT_EV_EXIT : JT_EV_EXEC,
					     pid, pid * 1000ull + i,
					     pid * 1000ull };
		if (i % 2)
			ev.exit.runtime_ns = 1000000;
		tracker_event(f->t, &ev);
	}
}

/* The reply to "ps" into f->out. */
static const char *ps(struct fx *f, bool all, uid_t uid)
{
	FILE *out = fmemopen(f->out, sizeof(f->out), "w");

	assert_non_null(out);
	status_ps(tracker_procs(f->t), f->jobs, all, uid, out);
	fclose(out);
	return f->out;
}

/* Does the ps reply have a row for pid? */
static bool has_row(const char *reply, uint32_t pid)
{
	char head[16];

	for (const char *l = strchr(reply, '\n'); l; l = strchr(l, '\n')) {
		l++;
		snprintf(head, sizeof(head), "%-8u ", pid);
		if (!strncmp(l, head, strlen(head)))
			return true;
	}
	return false;
}

/*
 * A user sees their own processes and those of a job root said is theirs
 * (the processes of others in it too), never a job a user registered as
 * theirs nor another user's; root sees all; excluded processes no one.
 * Rows are by pid, with the rates of the last two samples.
 */
static void test_ps(void **state)
{
	struct fx *f = *state;
	struct jt_jobinfo *root_said = jobs_get(f->jobs, "slurm", "77", true);
	struct jt_jobinfo *user_said = jobs_get(f->jobs, "local", "u5", true);
	struct jt_proc *p;
	const char *r;

	root_said->uid = 1000;
	root_said->uid_known = true;
	user_said->uid = 1000;
	user_said->uid_known = user_said->by_user = true;
	p = proc(f, 300, 1000, NULL, "bwa");		/* own */
	proc(f, 100, 2000, "slurm:77", "helper");	/* in 1000's job */
	proc(f, 200, 2000, "local:u5", "other");	/* a user's claim */
	proc(f, 400, 2000, NULL, "theirs");		/* another user's */
	proc(f, 500, 1000, NULL, "hidden")->state |= JT_PS_EXCLUDED;
	/* two samples a second apart: 0.5 s CPU, 4 MiB read, 1 MiB written */
	p->prev_sample_ns = 1000000000ull;
	p->sample_ns = 2000000000ull;
	p->prev.cpu_user_s = 1.0;
	p->c.cpu_user_s = 1.25;
	p->c.cpu_sys_s = 0.25;
	p->prev.read_bytes = 1u << 20;
	p->c.read_bytes = 5u << 20;
	p->c.write_bytes = 1u << 20;
	p->c.rss_bytes = 3u << 20;

	r = ps(f, false, 1000);
	assert_true(has_row(r, 300));
	assert_true(has_row(r, 100));
	assert_false(has_row(r, 200));
	assert_false(has_row(r, 400));
	assert_false(has_row(r, 500));
	/* by pid: 100 before 300 */
	assert_true(strstr(r, "\n100 ") < strstr(r, "\n300 "));
	assert_non_null(strstr(r, "\n100      1        helper               77"
			       "                    -         -          -          -"
			       " helper arg \n"));
	assert_non_null(strstr(r, "\n300      1        bwa                  -                  50.0"
			       "   3.0 MiB    4.0 MiB    1.0 MiB bwa arg \n"));
	/* how far along: its largest input, under its row */
	p->progress.set = true;
	snprintf(p->progress.path, sizeof(p->progress.path),
		 "/data/sample.fq.gz");
	p->progress.offset_bytes = 3328599654ull;	/* 3.1 GiB */
	p->progress.size_bytes = 5368709120ull;		/* 5.0 GiB */
	r = ps(f, false, 1000);
	assert_non_null(strstr(r, " bwa arg \n         read 62% of sample.fq.gz"
			       " (3.1 of 5.0 GiB)\n"));
	r = ps(f, true, 0);
	for (uint32_t pid = 100; pid <= 400; pid += 100)
		assert_true(has_row(r, pid));
	assert_false(has_row(r, 500));
}

/* The reply to "status" into f->out. */
static const char *status(struct fx *f)
{
	FILE *out = fmemopen(f->out, sizeof(f->out), "w");

	assert_non_null(out);
	status_reply(&f->src, true, out);
	fclose(out);
	return f->out;
}

/* The value of "key: " in a status reply ("" when absent). */
static const char *line_of(const char *reply, const char *key, char *buf,
			   size_t len)
{
	char k[64];
	const char *at;

	snprintf(k, sizeof(k), "\n%s: ", key);
	at = strstr(reply, k);
	if (!at)
		return "";
	at += strlen(k);
	snprintf(buf, len, "%.*s", (int)strcspn(at, "\n"), at);
	return buf;
}

/* The line "key: value" of reply has the value want. */
static void assert_line(const char *reply, const char *key, const char *want)
{
	char buf[512];

	assert_string_equal(line_of(reply, key, buf, sizeof(buf)), want);
}

/*
 * "status" opens with "running" while nothing needs a look, and with each
 * problem once something does; its counters are the kernel's, the
 * tracker's and the spool's.
 */
static void test_status(void **state)
{
	struct fx *f = *state;
	const char *r;

	r = status(f);
	assert_true(!strncmp(r, "ok\nstatus: running\n", 19));
	assert_line(r, "spool_records", "0");
	assert_line(r, "cloud.imds", "off (cloud.imds = \"off\")");
	assert_line(r, "cost.node_price", "none (no price known)");
	assert_line(r, "docker", "off");
	assert_line(r, "store", "none");

	for (int i = 0; i < 3; i++)
		assert_int_equal(spool_append(f->spool, "{\"a\":1}", 7), 0);
	f->counters[JT_CNT_RB_DROP_EXEC] = 4;
	f->counters[JT_CNT_RB_DROP_EXIT] = 1;
	f->src.records_unspooled = 2;
	f->src.records_spooled = 3;
	events(f, 1234);
	proc(f, 10, 0, NULL, "init");
	jobs_get(f->jobs, "slurm", "1", true);
	r = status(f);
	assert_true(!strncmp(r, "ok\nstatus: degraded: 2 problems: 5 kernel"
			     " events lost (ring buffer full: raise"
			     " collector.ringbuf_size_kib); 2 records lost"
			     " before the spool\n", 139));
	assert_line(r, "spool_records", "3");
	assert_line(r, "spool_records_lost", "2");
	assert_line(r, "records_spooled", "3");
	assert_line(r, "events_seen", "1234");
	assert_line(r, "events_dropped", "5");
	assert_line(r, "dropped_exec", "4");
	assert_line(r, "tracked", "1");
	assert_line(r, "jobs_known", "1");
	assert_line(r, "rules", RULES_BUILTIN_DIR);
}

/*
 * collector.record = "jobs" in the tracker's configuration: status says
 * so and shows what ran outside jobs as the tracker counted it (5
 * processes of 1 ms).
 */
static void test_status_outside_jobs(void **state)
{
	struct fx *f = *state;
	const char *r = status(f);
	char b[256];

	assert_line(r, "record", "all");
	assert_null(strstr(r, "\noutside_jobs_processes: "));
	f->cfg.record_mode = JT_RECORD_JOBS;
	tracker_configure(f->t, &f->cfg);
	events(f, 10);
	r = status(f);
	assert_int_equal(strncmp(line_of(r, "record", b, sizeof(b)), "jobs (",
				 6), 0);
	assert_line(r, "outside_jobs_processes", "5");
	assert_line(r, "outside_jobs_cpu_s", "0.005");
	assert_line(r, "events_seen", "10");
	assert_line(r, "tracked", "0");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_ps, setup, teardown),
		cmocka_unit_test_setup_teardown(test_status, setup, teardown),
		cmocka_unit_test_setup_teardown(test_status_outside_jobs, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
