// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_tracker.c - cmocka tests of agent/daemon/track/tracker.c with synthetic kernel
 * events: every event goes through decode_event() as the collector's
 * would, and every record the tracker writes is checked to be valid JSON
 * before its figures are compared with what the events said.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cmocka.h>

#include "config.h"
#include "containers.h"
#include "decode.h"
#include "jobs.h"
#include "json_check.h"
#include "json_get.h"
#include "proc_table.h"
#include "record.h"
#include "rules.h"
#include "tracker.h"
#include "util.h"

#define MiB (1024ull * 1024)
#define MAX_RECS 64

struct fx {
	struct jobs *jobs;
	struct jt_host host;
	struct tracker_cb cb;	/* the tracker's callbacks */
	struct tracker *t;
	struct jt_config cfg;	/* with configure() */
	char *rec[MAX_RECS];	/* every record written, in order */
	size_t nrec;
	struct containers *cts;	/* with setup_containers() */
	char asked[8][80];	/* the container look-ups asked for */
	size_t nasked;
	int ask_rc;		/* what asking returns */
	int exited;		/* Docker's answers: 0 running, else exited
				 * with code exited - 1 */
	struct rules *rules;	/* with default_rules() */
	uint64_t kdev;		/* ev_fopen()'s, ev_fclose()'s device (the
				 * kernel's dev_t); 0: 8:1 */
};

/* Keep a copy of each record; each must be one valid JSON text. */
static void on_record(void *ctx, struct jbuf *b)
{
	struct fx *f = ctx;

	json_keep(f->rec, &f->nrec, MAX_RECS, jbuf_str(b));
}

/* A new tracker for f with rules (NULL: the defaults) and f->cb, when
 * they change: what the old one followed is forgotten. */
static void retrack(struct fx *f, struct rules *rules)
{
	tracker_free(f->t);
	assert_int_equal(tracker_new(rules, f->jobs, &f->host, &f->cb, &f->t),
			 0);
}

/* A tracker with default rules, an empty job registry and a fixed host. */
static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	if (!f || jobs_new(&f->jobs))
		return -1;
	snprintf(f->host.name, sizeof(f->host.name), "node1");
	snprintf(f->host.boot_id, sizeof(f->host.boot_id),
		 "5f0c7e8a-3c1d-4b9e-9f2a-0123456789ab");
	f->host.boot_to_real_ns = 0;
	f->cb = (struct tracker_cb){ .record = on_record, .ctx = f };
	if (tracker_new(NULL, f->jobs, &f->host, &f->cb, &f->t))
		return -1;
	/* whatever this machine has: the tests that care set it */
	f->host.memcg_v2 = false;
	*state = f;
	return 0;
}

/* Free the tracker, the registry and the records. */
static int teardown(void **state)
{
	struct fx *f = *state;

	tracker_free(f->t);
	containers_free(f->cts);
	rules_free(f->rules);
	jobs_free(f->jobs);
	config_free(&f->cfg);
	for (size_t i = 0; i < f->nrec; i++)
		free(f->rec[i]);
	free(f);
	return 0;
}

/* ---- reading records back ------------------------------------------- */

/* Assert |got - want| <= eps. */
static void assert_near(double got, double want, double eps)
{
	if (fabs(got - want) > eps)
		fail_msg("%.9f is not %.9f (+- %g)", got, want, eps);
}

/* How many records of a type were written. */
static size_t count_type(const struct fx *f, const char *type)
{
	char q[64];
	size_t n = 0;

	snprintf(q, sizeof(q), "\"%s\"", type);
	for (size_t i = 0; i < f->nrec; i++)
		if (!strcmp(jraw(f->rec[i], "type"), q))
			n++;
	return n;
}

/* The id record_process_id() gives the process (pid, start). */
static void proc_id(const struct fx *f, uint32_t pid, uint64_t start,
		    char id[37])
{
	struct jt_proc p = { .pid = pid, .start_ns = start };

	record_process_id(&f->host, &p, id);
}

/* The only record of a type with that id (NULL if none). */
static const char *find_id(const struct fx *f, const char *type,
			   const char *id)
{
	const char *found = NULL;
	char qt[64], qi[40];

	snprintf(qt, sizeof(qt), "\"%s\"", type);
	snprintf(qi, sizeof(qi), "\"%s\"", id);
	for (size_t i = 0; i < f->nrec; i++) {
		if (strcmp(jraw(f->rec[i], "type"), qt) ||
		    strcmp(jraw(f->rec[i], "id"), qi))
			continue;
		if (found)
			fail_msg("two %s records with id %s", type, id);
		found = f->rec[i];
	}
	return found;
}

/* The process record of (pid, start), which must exist. */
static const char *proc_rec(const struct fx *f, uint32_t pid, uint64_t start)
{
	char id[37];
	const char *r;

	proc_id(f, pid, start, id);
	r = find_id(f, "process", id);
	if (!r)
		fail_msg("no process record for pid %u start %llu", pid,
			 (unsigned long long)start);
	return r;
}

/* The last sample record of a pid, or NULL. */
static const char *last_sample(const struct fx *f, uint32_t pid)
{
	const char *r = NULL;

	for (size_t i = 0; i < f->nrec; i++)
		if (!strcmp(jraw(f->rec[i], "type"), "\"sample\"") &&
		    ju64(f->rec[i], "pid") == pid)
			r = f->rec[i];
	return r;
}

/* The path of the entry of step in a job record's usage.steps. */
static void step_path(const char *rec, const char *step, char *out,
		      size_t outlen)
{
	char want[80], key[64], v[80];

	snprintf(want, sizeof(want), "\"%s\"", step);
	for (unsigned i = 0; i < JT_JOB_STEPS; i++) {
		snprintf(key, sizeof(key), "usage.steps.%u.step", i);
		if (!jget(rec, key, v, sizeof(v)))
			break;
		if (!strcmp(v, want)) {
			snprintf(out, outlen, "usage.steps.%u", i);
			return;
		}
	}
	fail_msg("no step %s in %s", step, rec);
}

/*
 * Assert the usage object at path ("usage", or a step's entry): CPU
 * seconds, finished processes, the memory peak and its source.
 */
static void assert_usage(const char *rec, const char *path, double cpu,
			 uint64_t procs, uint64_t peak, const char *source)
{
	char key[96];

	snprintf(key, sizeof(key), "%s.cpu_s", path);
	assert_near(jnum(rec, key), cpu, 1e-9);
	snprintf(key, sizeof(key), "%s.processes", path);
	assert_int_equal(ju64(rec, key), procs);
	snprintf(key, sizeof(key), "%s.mem_peak_bytes", path);
	assert_int_equal(ju64(rec, key), peak);
	snprintf(key, sizeof(key), "%s.mem_peak_source", path);
	assert_jstr(rec, key, source);
}

/* Assert the usage of one step in a job record (see assert_usage). */
static void assert_step(const char *rec, const char *step, double cpu,
			uint64_t procs, uint64_t peak, const char *source)
{
	char path[64];

	step_path(rec, step, path, sizeof(path));
	assert_usage(rec, path, cpu, procs, peak, source);
}

/* ---- making events ---------------------------------------------------- */

/* Decode a raw event as the collector does, then hand it to the tracker. */
static void feed(struct fx *f, const union jt_event *raw, size_t len)
{
	union jt_event ev;

	assert_int_equal(decode_event(raw, len, &ev), (int)raw->hdr.type);
	tracker_event(f->t, &ev);
}

/* A fork of pid (born at start) by (ppid, pstart). */
static void ev_fork(struct fx *f, uint32_t pid, uint64_t start, uint32_t ppid,
		    uint64_t pstart, const char *comm)
{
	union jt_event e;

	memset(&e, 0, sizeof(e));
	e.fork.hdr = (struct jt_ev_hdr){ JT_EV_FORK, pid, start, start };
	e.fork.ppid = ppid;
	e.fork.parent_start_ns = pstart;
	e.fork.uid = 1000;
	snprintf(e.fork.comm, sizeof(e.fork.comm), "%s", comm);
	feed(f, &e, sizeof(e.fork));
}

struct exec_spec {
	uint32_t pid, ppid;
	uint64_t start, pstart, ts;
	const char *file;
	const char *argv;	/* NUL-separated, argv_len bytes */
	size_t argv_len;
	const char *cg2, *cg1;	/* NULL: "/" and "" */
	uint16_t flags;		/* JT_EF_* */
	const char *comm;	/* NULL: file's base name */
	bool root;		/* uid 0, else 1000 */
	const char *exe_name;	/* the file run's own name, NULL: "" */
};

/* The argv of an exec_spec from a string literal ("a\0b"). */
#define ARGV(s) .argv = (s), .argv_len = sizeof(s)
/* Process (pid, start), a child of init whose fork was not seen, execs
 * file with argv (a string literal) at ts, in the root cgroup. */
#define EXEC_TOP(f, pid_, start_, ts_, file_, argv_)                        \
	ev_exec((f), &(struct exec_spec){ .pid = (pid_), .ppid = 1,        \
		.start = (start_), .pstart = 10, .ts = (ts_),               \
		.file = (file_), ARGV(argv_) })

/* An exec event as the kernel sends it: fixed part plus argv bytes. */
static void ev_exec(struct fx *f, const struct exec_spec *x)
{
	union jt_event e;
	const char *base = strrchr(x->file, '/');
	const char *cg2 = x->cg2 ? x->cg2 : "/", *cg1 = x->cg1 ? x->cg1 : "";

	memset(&e, 0, sizeof(e));
	e.exec.hdr = (struct jt_ev_hdr){ JT_EV_EXEC, x->pid, x->ts, x->start };
	e.exec.ppid = x->ppid;
	e.exec.parent_start_ns = x->pstart;
	e.exec.uid = x->root ? 0 : 1000;
	snprintf(e.exec.comm, sizeof(e.exec.comm), "%s",
		 x->comm ? x->comm : base ? base + 1 : x->file);
	e.exec.flags = x->flags;
	snprintf(e.exec.filename, sizeof(e.exec.filename), "%s", x->file);
	snprintf(e.exec.exe_name, sizeof(e.exec.exe_name), "%s",
		 x->exe_name ? x->exe_name : "");
	e.exec.cg2_len = (uint16_t)snprintf(e.exec.cg2, sizeof(e.exec.cg2),
					    "%s", cg2);
	e.exec.cg1_len = (uint16_t)snprintf(e.exec.cg1, sizeof(e.exec.cg1),
					    "%s", cg1);
	assert_true(x->argv_len <= JT_ARGV_LEN);
	memcpy(e.exec.argv, x->argv, x->argv_len);
	e.exec.argv_len = (uint16_t)x->argv_len;
	feed(f, &e, JT_EXEC_FIXED_SIZE + x->argv_len);
}

struct exit_spec {
	uint32_t pid, ppid;
	uint64_t start, ts;
	uint32_t status, flags, threads;
	uint64_t runtime, utime, stime, peak_rss;
	struct jt_io io;
	uint64_t blkio_delay;
	struct jt_wait wait;
	uint32_t levels;
	uint64_t peaks[JT_MEMCG_LEVELS];
	const char *comm;
};

/* The exit event of a process's last thread (its thread group's totals). */
static void ev_exit(struct fx *f, const struct exit_spec *x)
{
	union jt_event e;

	memset(&e, 0, sizeof(e));
	e.exit.hdr = (struct jt_ev_hdr){ JT_EV_EXIT, x->pid, x->ts, x->start };
	e.exit.ppid = x->ppid;
	e.exit.exit_status = x->status;
	e.exit.flags = x->flags;
	e.exit.nr_threads_seen = x->threads ? x->threads : 1;
	e.exit.runtime_ns = x->runtime;
	e.exit.utime_ns = x->utime;
	e.exit.stime_ns = x->stime;
	e.exit.peak_rss_bytes = x->peak_rss;
	e.exit.maxrss_kernel_bytes = x->peak_rss;
	e.exit.io = x->io;
	e.exit.blkio_delay_ns = x->blkio_delay;
	e.exit.wait = x->wait;
	e.exit.memcg_levels = x->levels;
	memcpy(e.exit.memcg_peak_bytes, x->peaks, sizeof(x->peaks));
	snprintf(e.exit.comm, sizeof(e.exit.comm), "%s",
		 x->comm ? x->comm : "");
	feed(f, &e, sizeof(e.exit));
}

/* An OOM kill of (pid, start). */
static void ev_oom(struct fx *f, uint32_t pid, uint64_t start, uint64_t ts,
		   uint64_t rss_pages, uint64_t vm_pages, const char *comm)
{
	union jt_event e;

	memset(&e, 0, sizeof(e));
	e.oom.hdr = (struct jt_ev_hdr){ JT_EV_OOM, pid, ts, start };
	e.oom.uid = 1000;
	e.oom.rss_pages = rss_pages;
	e.oom.total_vm_pages = vm_pages;
	snprintf(e.oom.comm, sizeof(e.oom.comm), "%s", comm);
	feed(f, &e, sizeof(e.oom));
}

/* A group leader's sample of (pid, start) with its current RSS. */
static struct jt_sample leader(uint32_t pid, uint64_t start, uint64_t runtime,
			       uint64_t rss)
{
	return (struct jt_sample){ .pid = pid, .tid = pid, .start_ns = start,
				   .runtime_ns = runtime, .utime_ns = 1,
				   .stime_ns = 1, .rss_bytes = rss,
				   .hiwater_rss_bytes = rss,
				   .flags = JT_SF_LEADER };
}

/* ---- 1: a shell that reaps its children -------------------------------- */

#define SH_PID 100
#define SH_START 1000000ull

/* Children's I/O is theirs alone: the shell's record, which reaped them,
 * does not carry it again, and the sums over records are the events'. */
static void test_shell_reaps_children(void **state)
{
	struct fx *f = *state;
	/* the shell's own I/O is small, its children's large */
	const struct exit_spec ex[] = {
		{ .pid = 101, .ppid = SH_PID, .start = 2000000, .ts = 9000000,
		  .status = 1 << 8, .runtime = 250000000, .utime = 3,
		  .stime = 1, .io = { 64 * MiB + 100, 32 * MiB + 50, 64 * MiB,
				      32 * MiB, 0 } },
		{ .pid = 102, .ppid = SH_PID, .start = 3000000, .ts = 9500000,
		  .runtime = 125000000, .utime = 1, .stime = 1,
		  .io = { 128 * MiB + 7, 16 * MiB + 9, 128 * MiB, 16 * MiB,
			  4096 } },
		{ .pid = SH_PID, .ppid = 1, .start = SH_START, .ts = 9900000,
		  .runtime = 2000000, .io = { 2000, 300, 4096, 0, 0 } },
	};
	static const char *const io_keys[] = {
		"io.rchar", "io.wchar", "io.read_bytes", "io.write_bytes",
		"io.cancelled_write_bytes",
	};
	char sh_id[37], init_id[37];
	double cpu_events = 0, cpu_records = 0;

	ev_exec(f, &(struct exec_spec){ .pid = SH_PID, .ppid = 1,
		.start = SH_START, .pstart = 10, .ts = SH_START + 100,
		.file = "/bin/bash", ARGV("bash\0run.sh") });
	for (int i = 0; i < 2; i++) {
		ev_fork(f, ex[i].pid, ex[i].start, SH_PID, SH_START, "bash");
		ev_exec(f, &(struct exec_spec){ .pid = ex[i].pid,
			.ppid = SH_PID, .start = ex[i].start,
			.pstart = SH_START, .ts = ex[i].start + 500,
			.file = "/usr/bin/gzip", ARGV("gzip\0-9\0part.txt") });
	}
	for (size_t i = 0; i < 3; i++)
		ev_exit(f, &ex[i]);

	assert_int_equal(f->nrec, 3);
	assert_int_equal(count_type(f, "process"), 3);
	proc_id(f, SH_PID, SH_START, sh_id);
	proc_id(f, 1, 10, init_id);
	for (size_t k = 0; k < 5; k++) {
		uint64_t want = 0, got = 0;

		for (size_t i = 0; i < 3; i++) {
			const char *r = proc_rec(f, ex[i].pid, ex[i].start);
			const struct jt_io *io = &ex[i].io;
			/* the fields of jt_io in io_keys order */
			const uint64_t v[] = { io->rchar, io->wchar,
					       io->read_bytes, io->write_bytes,
					       io->cancelled_write_bytes };

			assert_int_equal(ju64(r, io_keys[k]), v[k]);
			want += v[k];
			got += ju64(r, io_keys[k]);
		}
		assert_int_equal(got, want);
	}
	for (size_t i = 0; i < 3; i++) {
		const char *r = proc_rec(f, ex[i].pid, ex[i].start);

		cpu_events += ex[i].runtime / 1e9;
		cpu_records += jnum(r, "cpu.user_s") + jnum(r, "cpu.sys_s");
		if (ex[i].pid == SH_PID) {
			assert_jstr(r, "parent_id", init_id);
			assert_jstr(r, "exe", "/bin/bash");
			assert_jraw(r, "argv", "[\"bash\",\"run.sh\"]");
			assert_jraw(r, "exit.code", "0");
		} else {
			assert_jstr(r, "parent_id", sh_id);
			assert_int_equal(ju64(r, "ppid"), SH_PID);
			assert_jstr(r, "exe", "/usr/bin/gzip");
			assert_jraw(r, "argv",
				    "[\"gzip\",\"-9\",\"part.txt\"]");
			assert_jstr(r, "tool.name", "gzip");
		}
	}
	assert_jraw(proc_rec(f, 101, 2000000), "exit.code", "1");
	assert_near(jnum(proc_rec(f, 101, 2000000), "cpu.user_s"), 0.1875,
		    1e-9);
	assert_near(jnum(proc_rec(f, 101, 2000000), "cpu.sys_s"), 0.0625,
		    1e-9);
	assert_near(cpu_records, cpu_events, 1e-9);
	assert_int_equal(proc_table_count(tracker_procs(f->t)), 0);
}

/* ---- 2b: an excluded process between passes --------------------------- */

/* What the fake kernel map says of an excluded process. */
static bool follows_answer;

static bool fake_followed(void *ctx, uint32_t pid, uint64_t start_ns)
{
	(void)ctx;
	return follows_answer && pid == 250 && start_ns == 2500000;
}

/* The iterator never reports an excluded process (the jobtrace CLI, an
 * excluded wrapper): it stays while the kernel follows it, for a
 * job-start --pid or its children to come, and goes when it does not. */
static void test_excluded_kept_while_followed(void **state)
{
	struct fx *f = *state;
	struct jt_proc *p;

	f->cb.followed = fake_followed;
	retrack(f, NULL);
	ev_exec(f, &(struct exec_spec){ .pid = 250, .ppid = SH_PID,
		.start = 2500000, .pstart = SH_START, .ts = 2500010,
		.file = "/usr/bin/jobtrace", ARGV("jobtrace\0run") });
	p = proc_table_lookup(tracker_procs(f->t), 250, 2500000);
	assert_non_null(p);
	p->state |= JT_PS_EXCLUDED;
	follows_answer = true;
	for (int pass = 0; pass < 3; pass++) {
		tracker_samples(f->t, NULL, 0, false, 3000000 + pass);
		tracker_after_pass(f->t, 2900000 + pass);
		assert_ptr_equal(proc_table_lookup(tracker_procs(f->t), 250,
						   2500000), p);
	}
	follows_answer = false;
	tracker_samples(f->t, NULL, 0, false, 4000000);
	tracker_after_pass(f->t, 3900000);
	assert_null(proc_table_lookup(tracker_procs(f->t), 250, 2500000));
	assert_int_equal(f->nrec, 0);	/* excluded: no record, no exit lost */
	assert_int_equal(tracker_stats(f->t).exits_lost, 0);
}

/* ---- 2: a multi-threaded program -------------------------------------- */

/* The kernel sums the threads: one exit, one record with those totals,
 * whatever the samples of its threads said before. */
static void test_threads_one_record(void **state)
{
	struct fx *f = *state;
	const uint64_t start = 2000000;
	struct jt_sample s[4];
	const char *r;

	ev_exec(f, &(struct exec_spec){ .pid = 200, .ppid = SH_PID,
		.start = start, .pstart = SH_START, .ts = start + 10,
		.file = "/usr/bin/bwa", ARGV("bwa\0mem\0-t\0" "4\0ref.fa") });
	/* four threads, then two: the leader carries the dead ones' */
	for (int i = 0; i < 4; i++) {
		s[i] = leader(200, start, 100000000, 2 * 1024 * MiB);
		s[i].tid = 200 + i;
		s[i].io.read_bytes = 1000;
		if (i)
			s[i].flags = 0;
	}
	tracker_samples(f->t, s, 4, false, 5000000);
	tracker_after_pass(f->t, 4000000);
	tracker_samples(f->t, s, 2, false, 7000000);
	tracker_after_pass(f->t, 6000000);
	assert_int_equal(f->nrec, 0);	/* no job: no sample records */

	ev_exit(f, &(struct exit_spec){ .pid = 200, .ppid = SH_PID,
		.start = start, .ts = 9000000, .threads = 4,
		.runtime = 3000000000ull, .utime = 1400000000,
		.stime = 700000000, .peak_rss = 3 * 1024 * MiB,
		.flags = JT_XF_DELAYACCT, .blkio_delay = 250000000,
		.io = { .rchar = 6000000000ull, .wchar = 1100000000,
			.read_bytes = 5 * 1024 * MiB,
			.write_bytes = 1024 * MiB,
			.cancelled_write_bytes = 123456789 },
		.wait = { .run_delay_ns = 1500000000, .reclaim_ns = 125000000,
			  .thrashing_ns = 62500000, .swapin_ns = 31250000,
			  .compact_ns = 1000000, .nvcsw = 42, .nivcsw = 4242,
			  .net_ns = 2500000000, .child_ns = 750000000 } });
	assert_int_equal(count_type(f, "process"), 1);
	assert_int_equal(f->nrec, 1);
	r = proc_rec(f, 200, start);
	/* runtime split 2:1 by utime:stime */
	assert_near(jnum(r, "cpu.user_s"), 2.0, 1e-9);
	assert_near(jnum(r, "cpu.sys_s"), 1.0, 1e-9);
	assert_near(jnum(r, "cpu.user_s") + jnum(r, "cpu.sys_s"), 3.0, 1e-9);
	assert_int_equal(ju64(r, "io.rchar"), 6000000000ull);
	assert_int_equal(ju64(r, "io.wchar"), 1100000000);
	assert_int_equal(ju64(r, "io.read_bytes"), 5 * 1024 * MiB);
	assert_int_equal(ju64(r, "io.write_bytes"), 1024 * MiB);
	assert_int_equal(ju64(r, "io.cancelled_write_bytes"), 123456789);
	assert_near(jnum(r, "io.blkio_delay_s"), 0.25, 1e-9);
	/* the kernel's waits, in seconds */
	assert_near(jnum(r, "wait.run_queue_s"), 1.5, 1e-9);
	assert_near(jnum(r, "wait.reclaim_s"), 0.125, 1e-9);
	assert_near(jnum(r, "wait.thrashing_s"), 0.0625, 1e-9);
	assert_near(jnum(r, "wait.swapin_s"), 0.03125, 1e-9);
	assert_near(jnum(r, "wait.compact_s"), 0.001, 1e-9);
	assert_near(jnum(r, "wait.net_s"), 2.5, 1e-9);
	assert_near(jnum(r, "wait.children_s"), 0.75, 1e-9);
	assert_int_equal(ju64(r, "wait.nvcsw"), 42);
	assert_int_equal(ju64(r, "wait.nivcsw"), 4242);
	assert_int_equal(ju64(r, "mem.peak_rss_bytes"), 3 * 1024 * MiB);
	assert_jraw(r, "argv", "[\"bwa\",\"mem\",\"-t\",\"4\",\"ref.fa\"]");
	assert_jraw(r, "exit.lost", "false");
	assert_int_equal(proc_table_count(tracker_procs(f->t)), 0);
}

static void default_rules(struct fx *f);

/* A file's open (path as the call gave it) at fd by the kernel. */
static void ev_fopen(struct fx *f, uint32_t pid, uint64_t start, int fd,
		     uint64_t ino, const char *path, uint32_t oflags)
{
	union jt_event e;

	memset(&e, 0, sizeof(e));
	e.fopen.hdr = (struct jt_ev_hdr){ JT_EV_FOPEN, pid, start + 1, start };
	e.fopen.fd = fd;
	e.fopen.dirfd = -100;
	e.fopen.oflags = oflags;
	e.fopen.kind = JT_FK_REG;
	e.fopen.dev = f->kdev ? f->kdev : 8u << 20 | 1;	/* the kernel's 8:1 */
	e.fopen.ino = ino;
	e.fopen.path_len = (uint32_t)snprintf(e.fopen.path,
					      sizeof(e.fopen.path), "%s", path);
	feed(f, &e, sizeof(e.fopen));
}

/* ... its close (or the process's end, at_exit) with its sums. */
static void ev_fclose(struct fx *f, uint32_t pid, uint64_t start, int fd,
		      uint64_t ino, uint64_t rd, uint64_t wr, uint64_t size,
		      uint32_t flags)
{
	union jt_event e;

	memset(&e, 0, sizeof(e));
	e.fclose.hdr = (struct jt_ev_hdr){ JT_EV_FCLOSE, pid, start + 2, start };
	e.fclose.fd = fd;
	e.fclose.flags = flags | JT_FS_SIZE;
	e.fclose.dev = f->kdev ? f->kdev : 8u << 20 | 1;
	e.fclose.ino = ino;
	e.fclose.read_bytes = rd;
	e.fclose.write_bytes = wr;
	e.fclose.size = size;
	e.fclose.kind = JT_FK_REG;
	feed(f, &e, sizeof(e.fclose));
}

/*
 * The kernel's file events into a process record: two opens of one file
 * are one entry, a file still open at the end comes with the exit, the
 * default rules drop libc, the cap keeps the busiest, the kernel's counts
 * of pipes and lost files arrive with the exit event; with files off the
 * members are null.
 */
static void test_files_record(void **state)
{
	struct fx *f = *state;
	const uint64_t start = 3000000;
	union jt_event e;
	char buf[256];
	const char *rec;

	default_rules(f);	/* freed by the teardown */
	tracker_set_files(f->t, true);
	EXEC_TOP(f, 300, start, start + 5, "/usr/bin/sort", "sort\0in.txt");
	ev_fopen(f, 300, start, 3, 11, "/lib/x86_64-linux-gnu/libc.so.6", 0);
	ev_fclose(f, 300, start, 3, 11, 832, 0, 2000000, JT_FS_MMAP);
	ev_fopen(f, 300, start, 3, 12, "/data/in.txt", 0);
	ev_fclose(f, 300, start, 3, 12, 1000, 0, 1000, 0);
	ev_fopen(f, 300, start, 4, 12, "/data/in.txt", 0);	/* again */
	ev_fclose(f, 300, start, 4, 12, 500, 0, 1000, 0);
	ev_fopen(f, 300, start, 5, 13, "/data/out.txt", 01101);
	ev_fclose(f, 300, start, 5, 13, 0, 1500, 1500, JT_FS_AT_EXIT);
	memset(&e, 0, sizeof(e));
	e.exit.hdr = (struct jt_ev_hdr){ JT_EV_EXIT, 300, start + 50, start };
	e.exit.ppid = 1;
	e.exit.nonreg = (struct jt_fcount){ 2, 1, 64, 32 };
	e.exit.lost = (struct jt_fcount){ 1, 1, 7, 0 };
	feed(f, &e, sizeof(e.exit));
	rec = proc_rec(f, 300, start);
	assert_non_null(rec);
	/* out.txt and in.txt tie at 1500 bytes: in.txt has more opens */
	assert_jstr(rec, "files.0.path", "/data/in.txt");
	assert_jraw(rec, "files.0.flags", "[\"read\"]");
	assert_int_equal(ju64(rec, "files.0.opens"), 2);
	assert_int_equal(ju64(rec, "files.0.read_bytes"), 1500);
	assert_int_equal(ju64(rec, "files.0.size_bytes"), 1000);
	assert_jstr(rec, "files.1.path", "/data/out.txt");
	assert_jraw(rec, "files.1.flags",
		    "[\"write\",\"create\",\"truncate\"]");
	assert_int_equal(ju64(rec, "files.1.write_bytes"), 1500);
	assert_false(jget(rec, "files.2", buf, sizeof(buf)));	/* two listed */
	/* libc dropped by the rules, one file the kernel could not follow */
	assert_int_equal(ju64(rec, "files_rest.count"), 2);
	assert_int_equal(ju64(rec, "files_rest.read_bytes"), 832 + 7);
	assert_int_equal(ju64(rec, "files_nonregular.pipes"), 2);
	assert_int_equal(ju64(rec, "files_nonregular.sockets"), 1);
	assert_int_equal(ju64(rec, "files_nonregular.read_bytes"), 64);

	/* files off: null */
	tracker_set_files(f->t, false);
	EXEC_TOP(f, 301, start + 100, start + 105, "/usr/bin/cat", "cat");
	ev_fopen(f, 301, start + 100, 3, 12, "/data/in.txt", 0);
	ev_exit(f, &(struct exit_spec){ .pid = 301, .ppid = 1,
		.start = start + 100, .ts = start + 150 });
	rec = proc_rec(f, 301, start + 100);
	assert_jraw(rec, "files", "null");
	assert_jraw(rec, "files_rest", "null");
}

/* deleted of the file at path in record rec (it must be listed). */
static bool file_deleted(const char *rec, const char *path)
{
	char key[32], want[PATH_MAX + 2];

	snprintf(want, sizeof(want), "\"%s\"", path);
	for (int i = 0; i < 64; i++) {
		snprintf(key, sizeof(key), "files.%d.path", i);
		if (!strcmp(jraw(rec, key), want)) {
			snprintf(key, sizeof(key), "files.%d.deleted", i);
			return !strcmp(jraw(rec, key), "true");
		}
	}
	fail_msg("%s not in %s", path, rec);
	return false;
}

/*
 * Files a process wrote and closed: one whose path is gone at its end
 * (unlinked, or its folder removed) is deleted, as is one unlinked while
 * open; one still there, one whose path names another file by then
 * (renamed over), one it only read and one open for writing that it
 * neither created, truncated nor wrote to (a job's log, inherited) that
 * are gone are not: the agent looks only for what the process wrote.  One
 * it still had open at its end is as the kernel saw it then.
 */
static void test_files_gone(void **state)
{
	static const char *const names[] = { "kept", "gone", "sub/gone",
					     "replaced", "read", "idle" };
	struct fx *f = *state;
	const uint64_t start = 5000000;
	static const uint32_t oflags[] = { 01101, 01101, 01101, 01101, 0,
					   02001 };
	char dir[] = "/tmp/jt_gone_XXXXXX", path[6][PATH_MAX], other[PATH_MAX];
	struct stat st;
	const char *rec;
	FILE *w;

	assert_non_null(mkdtemp(dir));
	snprintf(other, sizeof(other), "%s/sub", dir);
	assert_int_equal(mkdir(other, 0700), 0);
	default_rules(f);
	tracker_set_files(f->t, true);
	EXEC_TOP(f, 310, start, start + 5, "/usr/bin/tool", "tool");
	for (int i = 0; i < 6; i++) {
		snprintf(path[i], sizeof(path[i]), "%s/%s", dir, names[i]);
		assert_non_null(w = fopen(path[i], "w"));
		fputs("x", w);
		assert_int_equal(fclose(w), 0);
		assert_int_equal(stat(path[i], &st), 0);
		f->kdev = (uint64_t)major(st.st_dev) << 20 | minor(st.st_dev);
		ev_fopen(f, 310, start, 3 + i, st.st_ino, path[i], oflags[i]);
		ev_fclose(f, 310, start, 3 + i, st.st_ino, i == 4, i < 4, 1,
			  0);
	}
	ev_fopen(f, 310, start, 9, 77, "/data/open.tmp", 01101);
	ev_fclose(f, 310, start, 9, 77, 0, 5, 5, JT_FS_DELETED);
	/* written, still open at the end, its name gone (renamed while
	 * open): the kernel saw a name left, so not deleted */
	ev_fopen(f, 310, start, 10, 78, "/data/renamed.part", 01101);
	ev_fclose(f, 310, start, 10, 78, 0, 5, 5, JT_FS_AT_EXIT);
	assert_int_equal(unlink(path[1]), 0);
	assert_int_equal(unlink(path[2]), 0);
	assert_int_equal(rmdir(other), 0);
	snprintf(other, sizeof(other), "%s/new", dir);
	assert_non_null(w = fopen(other, "w"));
	assert_int_equal(fclose(w), 0);
	assert_int_equal(rename(other, path[3]), 0);
	assert_int_equal(unlink(path[4]), 0);
	assert_int_equal(unlink(path[5]), 0);
	ev_exit(f, &(struct exit_spec){ .pid = 310, .ppid = 1,
		.start = start, .ts = start + 50 });
	rec = proc_rec(f, 310, start);
	assert_non_null(rec);
	assert_false(file_deleted(rec, path[0]));
	assert_true(file_deleted(rec, path[1]));
	assert_true(file_deleted(rec, path[2]));
	assert_false(file_deleted(rec, path[3]));
	assert_false(file_deleted(rec, path[4]));
	assert_false(file_deleted(rec, path[5]));
	assert_true(file_deleted(rec, "/data/open.tmp"));
	assert_false(file_deleted(rec, "/data/renamed.part"));
	unlink(path[0]);
	unlink(path[3]);
	assert_int_equal(rmdir(dir), 0);
}

/*
 * Where each open's name came from (jobtrace status): the kernel's; the
 * parent's open of the same file at the same fd (JT_FS_NAME_PARENT, no
 * path sent); none (the parent has no such file and no process has it:
 * pids above the kernel's limit, 4194304, cannot exist, so /proc has
 * neither).  The child's record takes the parent's name.
 */
static void test_files_named(void **state)
{
	struct fx *f = *state;
	const uint32_t pp = 4194350, cp = 4194351;
	const uint64_t ps = 6000000, cs = 6000100;
	union jt_event e;
	struct tracker_stats st;
	const char *rec;

	default_rules(f);
	tracker_set_files(f->t, true);
	EXEC_TOP(f, pp, ps, ps + 5, "/bin/sh", "sh");
	ev_fopen(f, pp, ps, 1, 90, "/data/job.log", 01101);
	ev_fork(f, cp, cs, pp, ps, "sh");
	ev_exec(f, &(struct exec_spec){ .pid = cp, .ppid = pp, .start = cs,
		.pstart = ps, .ts = cs + 5, .file = "/usr/bin/tool",
		ARGV("tool") });
	for (int fd = 1; fd <= 2; fd++) {
		memset(&e, 0, sizeof(e));
		e.fopen.hdr = (struct jt_ev_hdr){ JT_EV_FOPEN, cp, cs + 6, cs };
		e.fopen.fd = fd;
		e.fopen.dirfd = -100;
		e.fopen.oflags = 01;
		e.fopen.kind = JT_FK_REG;
		e.fopen.flags = JT_FS_INHERITED | JT_FS_NAME_PARENT;
		e.fopen.dev = 8u << 20 | 1;
		e.fopen.ino = fd == 1 ? 90 : 91;	/* 91: not the parent's */
		feed(f, &e, sizeof(e.fopen));
	}
	st = tracker_stats(f->t);
	assert_int_equal(st.files_named[PROCFILES_NAMED_OWN], 1);
	assert_int_equal(st.files_named[PROCFILES_NAMED_PARENT], 1);
	assert_int_equal(st.files_named[PROCFILES_NAMED_PARENT_FD], 0);
	assert_int_equal(st.files_named[PROCFILES_UNNAMED], 1);
	ev_fclose(f, cp, cs, 1, 90, 0, 300, 300, JT_FS_AT_EXIT);
	ev_exit(f, &(struct exit_spec){ .pid = cp, .ppid = pp, .start = cs,
		.ts = cs + 50 });
	rec = proc_rec(f, cp, cs);
	assert_non_null(rec);
	assert_jstr(rec, "files.0.path", "/data/job.log");
	assert_int_equal(ju64(rec, "files.0.write_bytes"), 300);
}

/* A process of about a millisecond with an odd split: user + sys is the
 * runtime, to the microsecond the record keeps. */
static void test_short_process_cpu(void **state)
{
	struct fx *f = *state;
	const char *r;

	EXEC_TOP(f, 210, 100, 200, "/bin/true", "true");
	ev_exit(f, &(struct exit_spec){ .pid = 210, .ppid = 1, .start = 100,
		.ts = 1300000, .runtime = 1234567, .utime = 3, .stime = 7 });
	r = proc_rec(f, 210, 100);
	assert_near(jnum(r, "cpu.user_s"), 0.000370, 1e-9);
	assert_near(jnum(r, "cpu.sys_s"), 0.000864, 1e-9);
	assert_near(jnum(r, "cpu.user_s") + jnum(r, "cpu.sys_s"), 0.001234567,
		    1e-6);
}

/* ---- 3: pid reuse ------------------------------------------------------ */

/* The same pid with two start times is two processes, even when the old
 * one's exit arrives after the new one's exec. */
static void test_pid_reuse(void **state)
{
	struct fx *f = *state;
	char ida[37], idb[37];
	const char *a, *b;

	EXEC_TOP(f, 300, 10000000, 10000100, "/bin/sleep", "sleep\0" "5");
	EXEC_TOP(f, 300, 20000000, 20000100, "/bin/cat", "cat\0x.txt");
	ev_exit(f, &(struct exit_spec){ .pid = 300, .ppid = 1,
		.start = 10000000, .ts = 15000000, .runtime = 1000,
		.io = { .read_bytes = 111 } });
	ev_exit(f, &(struct exit_spec){ .pid = 300, .ppid = 1,
		.start = 20000000, .ts = 25000000, .runtime = 2000,
		.io = { .read_bytes = 222 } });

	assert_int_equal(count_type(f, "process"), 2);
	proc_id(f, 300, 10000000, ida);
	proc_id(f, 300, 20000000, idb);
	assert_string_not_equal(ida, idb);
	a = proc_rec(f, 300, 10000000);
	b = proc_rec(f, 300, 20000000);
	assert_jstr(a, "exe", "/bin/sleep");
	assert_jraw(a, "argv", "[\"sleep\",\"5\"]");
	assert_int_equal(ju64(a, "io.read_bytes"), 111);
	assert_jstr(a, "start_time", "1970-01-01T00:00:00.010000Z");
	assert_jstr(a, "end_time", "1970-01-01T00:00:00.015000Z");
	assert_jstr(b, "exe", "/bin/cat");
	assert_jraw(b, "argv", "[\"cat\",\"x.txt\"]");
	assert_int_equal(ju64(b, "io.read_bytes"), 222);
	assert_jstr(b, "start_time", "1970-01-01T00:00:00.020000Z");
	assert_int_equal(proc_table_count(tracker_procs(f->t)), 0);
}

/* ---- 4: a lost exit ---------------------------------------------------- */

/* A process neither the pass nor an exit event saw is retired as lost;
 * one the pass saw, or one last seen after the pass began, is not. */
static void test_lost_exit(void **state)
{
	struct fx *f = *state;
	struct jt_sample s = leader(401, 1200000, 500000000, 10 * MiB);
	const char *r;

	EXEC_TOP(f, 400, 1000000, 1100000, "/bin/sleep", "sleep\0" "100");
	EXEC_TOP(f, 401, 1200000, 1300000, "/usr/bin/python3", "python3\0x.py");
	/* the pass begins at 4 ms; 402 execs while it runs */
	EXEC_TOP(f, 402, 4400000, 4500000, "/bin/ls", "ls");
	tracker_samples(f->t, &s, 1, false, 5000000);
	tracker_after_pass(f->t, 4000000);

	assert_int_equal(f->nrec, 1);
	assert_int_equal(tracker_stats(f->t).exits_lost, 1);
	r = proc_rec(f, 400, 1000000);
	assert_jraw(r, "exit.lost", "true");
	assert_jraw(r, "exit.code", "null");
	assert_jraw(r, "exit.signal", "null");
	assert_jstr(r, "end_time", "1970-01-01T00:00:00.001100Z");
	assert_jstr(r, "exe", "/bin/sleep");
	assert_int_equal(proc_table_count(tracker_procs(f->t)), 2);

	/* 401's own exit comes later */
	ev_exit(f, &(struct exit_spec){ .pid = 401, .ppid = 1,
		.start = 1200000, .ts = 6000000, .runtime = 700000000 });
	r = proc_rec(f, 401, 1200000);
	assert_jraw(r, "exit.lost", "false");
	assert_jraw(r, "exit.code", "0");
	assert_near(jnum(r, "cpu.user_s"), 0.7, 1e-9);

	/* the next pass does not see 402 either: now it is lost */
	tracker_samples(f->t, NULL, 0, false, 9000000);
	tracker_after_pass(f->t, 8000000);
	assert_int_equal(tracker_stats(f->t).exits_lost, 2);
	assert_int_equal(tracker_stats(f->t).passes, 2);
	assert_jraw(proc_rec(f, 402, 4400000), "exit.lost", "true");
	assert_int_equal(count_type(f, "process"), 3);
	assert_int_equal(proc_table_count(tracker_procs(f->t)), 0);
}

/* ---- 5: an exec in a forked child -------------------------------------- */

#define SLURM_V2_JOB9 "/system.slice/slurmstepd.scope/job_9/step_0/user/task_0"

/* A record's program (exe, argv as JSON, comm; the default rules name
 * the tool after the exe) and its job, step 0 of job 9. */
static void assert_prog(const char *r, const char *exe, const char *argv,
			const char *comm)
{
	assert_jstr(r, "exe", exe);
	assert_jraw(r, "argv", argv);
	assert_jstr(r, "comm", comm);
	assert_jstr(r, "tool.name", strrchr(exe, '/') + 1);
	assert_jstr(r, "job.id", "9");
	assert_jstr(r, "job.step", "0");
}

/* A forked child runs its parent's program, in its parent's job, until
 * its own exec; one that never execs is recorded with that program. */
/* What the fake workflow engine was asked, and how often. */
static char engine_asked[256];
static unsigned engine_calls;

/* A Snakemake log's answer: rule make_data, job 2, s=b, its run. */
static bool on_engine_job(void *ctx, const struct jt_proc *engine,
			  const char *cmd, struct rules_engine_job *out)
{
	(void)ctx;
	engine_calls++;
	snprintf(engine_asked, sizeof(engine_asked), "%u %s", engine->pid, cmd);
	memset(out, 0, sizeof(*out));
	snprintf(out->rule, sizeof(out->rule), "make_data");
	snprintf(out->jobid, sizeof(out->jobid), "2");
	snprintf(out->wildcards, sizeof(out->wildcards), "s=b");
	snprintf(out->run, sizeof(out->run), "2026-11-27T141925.065602");
	return true;
}

/*
 * Snakemake's local mode: the tracker asks what the engine says of the
 * job of its `bash -c` child (no task yet) before the default rules run;
 * they name the rule, run and pipeline, and the child's children inherit
 * them.  A `bash -c` of another parent is not asked about.
 */
static void test_engine_job(void **state)
{
	struct fx *f = *state;
	struct rules_limits lim = { 64u << 20, 1000000, 0 };
	const char *top = getenv("top_srcdir");
	char dir[1024], err[512];
	struct rules *r = NULL;
	const char *rec;

	snprintf(dir, sizeof(dir), "%s/lua-rules", top ? top : ".");
	assert_int_equal(rules_new(&lim, &r), 0);
	if (rules_load_dir(r, dir, err, sizeof(err)))
		fail_msg("%s: %s", dir, err);
	f->cb.engine_job = on_engine_job;
	retrack(f, r);
	engine_calls = 0;
	EXEC_TOP(f, 600, 1000, 1100, "/usr/bin/python3",
		 "/usr/bin/python3\0/usr/bin/snakemake\0--cores\0" "2");
	ev_fork(f, 601, 2000, 600, 1000, "snakemake");
	ev_exec(f, &(struct exec_spec){ .pid = 601, .ppid = 600, .start = 2000,
		.pstart = 1000, .ts = 2100, .file = "/usr/bin/bash",
		ARGV("/usr/bin/bash\0-c\0set -euo pipefail;  touchmem 300 >"
		     " out/b.txt") });
	ev_fork(f, 602, 3000, 601, 2000, "bash");
	ev_exec(f, &(struct exec_spec){ .pid = 602, .ppid = 601, .start = 3000,
		.pstart = 2000, .ts = 3100, .file = "/w/touchmem",
		ARGV("/w/touchmem\0" "300") });
	ev_exit(f, &(struct exit_spec){ .pid = 602, .ppid = 601, .start = 3000,
		.ts = 4000, .runtime = 1000 });
	ev_exit(f, &(struct exit_spec){ .pid = 601, .ppid = 600, .start = 2000,
		.ts = 4100, .runtime = 1000 });
	assert_int_equal(engine_calls, 1);
	assert_string_equal(engine_asked,
			    "600 set -euo pipefail;  touchmem 300 > out/b.txt");
	for (uint32_t pid = 601; pid <= 602; pid++) {
		rec = proc_rec(f, pid, pid == 601 ? 2000 : 3000);
		assert_non_null(rec);
		assert_jstr(rec, "job.task", "make_data");
		assert_jstr(rec, "job.run", "2026-11-27T141925.065602");
		assert_jstr(rec, "job.pipeline", "snakemake");
	}
	/* make's bash -c: no workflow engine, not asked */
	EXEC_TOP(f, 700, 5000, 5100, "/usr/bin/make", "make\0all");
	ev_fork(f, 701, 6000, 700, 5000, "make");
	ev_exec(f, &(struct exec_spec){ .pid = 701, .ppid = 700, .start = 6000,
		.pstart = 5000, .ts = 6100, .file = "/bin/sh",
		ARGV("/bin/sh\0-c\0cc -c x.c") });
	assert_int_equal(engine_calls, 1);
	retrack(f, NULL);
	rules_free(r);
}

static void test_fork_then_exec(void **state)
{
	struct fx *f = *state;
	struct jt_sample s[3] = {
		leader(500, 1000000, 1000, 4 * MiB),
		leader(501, 2000000, 1000, 5 * MiB),
		leader(502, 3000000, 1000, 6 * MiB),
	};
	static const char bash_argv[] =
		"[\"bash\",\"-c\",\"sort -n x | head\"]";
	char sh_id[37];
	const char *r;

	ev_exec(f, &(struct exec_spec){ .pid = 500, .ppid = 1,
		.start = 1000000, .pstart = 10, .ts = 1000100,
		.file = "/bin/bash", ARGV("bash\0-c\0sort -n x | head"),
		.cg2 = SLURM_V2_JOB9, .cg1 = SLURM_V2_JOB9 });
	ev_fork(f, 501, 2000000, 500, 1000000, "bash");
	ev_fork(f, 502, 3000000, 500, 1000000, "bash");
	s[1].hiwater_rss_bytes = 8 * MiB;
	tracker_samples(f->t, s, 3, false, 4000000);
	tracker_after_pass(f->t, 3500000);

	/* before its exec, 501 is a bash of job 9 */
	assert_int_equal(count_type(f, "sample"), 3);
	r = last_sample(f, 501);
	assert_non_null(r);
	assert_prog(r, "/bin/bash", bash_argv, "bash");
	assert_jstr(r, "cgroup", SLURM_V2_JOB9);
	assert_int_equal(ju64(r, "mem.rss_bytes"), 5 * MiB);
	assert_int_equal(ju64(r, "mem.peak_rss_bytes"), 8 * MiB);

	ev_exec(f, &(struct exec_spec){ .pid = 501, .ppid = 500,
		.start = 2000000, .pstart = 1000000, .ts = 5000000,
		.file = "/usr/bin/sort", ARGV("sort\0-n\0x"),
		.cg2 = SLURM_V2_JOB9, .cg1 = SLURM_V2_JOB9 });
	ev_exit(f, &(struct exit_spec){ .pid = 501, .ppid = 500,
		.start = 2000000, .ts = 6000000, .runtime = 1000 });
	ev_exit(f, &(struct exit_spec){ .pid = 502, .ppid = 500,
		.start = 3000000, .ts = 6100000, .runtime = 1000,
		.comm = "bash" });
	/* 503's fork was lost: its exec outside any job's cgroup finds
	 * its parent, and the parent's job */
	ev_exec(f, &(struct exec_spec){ .pid = 503, .ppid = 500,
		.start = 5500000, .pstart = 1000000, .ts = 5600000,
		.file = "/usr/bin/head", ARGV("head") });
	ev_exit(f, &(struct exit_spec){ .pid = 503, .ppid = 500,
		.start = 5500000, .ts = 6150000, .runtime = 1000 });
	ev_exit(f, &(struct exit_spec){ .pid = 500, .ppid = 1,
		.start = 1000000, .ts = 6200000, .runtime = 1000 });

	assert_int_equal(count_type(f, "process"), 4);
	assert_jstr(proc_rec(f, 503, 5500000), "job.id", "9");
	assert_jstr(proc_rec(f, 503, 5500000), "exe", "/usr/bin/head");
	proc_id(f, 500, 1000000, sh_id);
	r = proc_rec(f, 501, 2000000);
	assert_prog(r, "/usr/bin/sort", "[\"sort\",\"-n\",\"x\"]", "sort");
	assert_jstr(r, "parent_id", sh_id);
	r = proc_rec(f, 502, 3000000);
	assert_prog(r, "/bin/bash", bash_argv, "bash");
	assert_jstr(r, "parent_id", sh_id);
	/* the child's exec did not touch its parent */
	r = proc_rec(f, 500, 1000000);
	assert_jstr(r, "exe", "/bin/bash");
	assert_jraw(r, "argv", bash_argv);
}

/* ---- 6: job usage ------------------------------------------------------ */

#define V1_BATCH "/slurm_node1/uid_0/job_77/step_batch/task_0"
#define V1_EXTERN "/slurm_node1/uid_0/job_77/step_extern/task_0"

/* A job registered with its own cgroup (say, by a workflow's hook). */
static struct jt_jobinfo *registered(struct fx *f, const char *id,
				     const char *cgroup)
{
	struct jt_jobinfo *ji = jobs_get(f->jobs, "slurm", id, true);

	assert_non_null(ji);
	snprintf(ji->cgroup, sizeof(ji->cgroup), "%s", cgroup);
	return ji;
}

/* Process (pid, start), with no fork seen, execs in cgroups cg2 and cg1. */
static void exec_in(struct fx *f, uint32_t pid, uint64_t start,
		    const char *cg2, const char *cg1)
{
	ev_exec(f, &(struct exec_spec){ .pid = pid, .ppid = 1, .start = start,
		.pstart = 10, .ts = start + 1, .file = "/bin/a", ARGV("a"),
		.cg2 = cg2, .cg1 = cg1 });
}

/* The tracker's cg_root: only folders outside user.slice are root's. */
static bool not_user_slice(void *ctx, const char *dir)
{
	(void)ctx;
	return strncmp(dir, "/user.slice/", 12) != 0;
}

/*
 * A user's delegated cgroup subtree (systemd's user@UID.service on v2)
 * can hold folders named like Slurm's or Docker's: a job_N or docker/ID
 * folder that is not root's names no job (cg_root), one that is does.
 */
static void test_cgroup_owner(void **state)
{
	struct fx *f = *state;
	static const char fake_slurm[] = "/user.slice/user-1000.slice/user@1000.service/"
		"app.slice/x_slurmstepd.scope/job_4243/step_0/user/task_0";
	static const char fake_ct[] = "/user.slice/user-1000.slice/user@1000.service/"
		"app.slice/docker/0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	const struct jt_proc *p;

	f->cb.cg_root = not_user_slice;
	retrack(f, NULL);
	exec_in(f, 900, 9000, fake_slurm, fake_slurm);
	p = proc_table_lookup(tracker_procs(f->t), 900, 9000);
	assert_non_null(p);
	assert_string_equal(p->job.id, "");
	assert_string_equal(p->job.scheduler, "");
	exec_in(f, 901, 9010, fake_ct, fake_ct);
	p = proc_table_lookup(tracker_procs(f->t), 901, 9010);
	assert_non_null(p);
	assert_string_equal(p->container, "");
	/* root's folders of the same shape do name them */
	exec_in(f, 902, 9020, "/system.slice/slurmstepd.scope/job_4243/step_0/user/task_0",
		"/system.slice/slurmstepd.scope/job_4243/step_0/user/task_0");
	p = proc_table_lookup(tracker_procs(f->t), 902, 9020);
	assert_string_equal(p->job.id, "4243");
	assert_string_equal(p->job.scheduler, "slurm");
	/* without the check (NULL: every folder trusted), the fake one did */
	f->cb.cg_root = NULL;
	retrack(f, NULL);
	exec_in(f, 903, 9030, fake_slurm, fake_slurm);
	p = proc_table_lookup(tracker_procs(f->t), 903, 9030);
	assert_string_equal(p->job.id, "4243");
}

/* Close a job and write its end record; returns that record. */
static const char *end_record(struct fx *f, struct jt_jobinfo *ji)
{
	size_t before = f->nrec;

	ji->end_ns = 1700000000000000000ull;
	ji->exit_code = 0;
	ji->exit_known = true;
	tracker_job_record(f->t, ji, "end");
	assert_int_equal(f->nrec, before + 1);
	assert_jstr(f->rec[before], "type", "job");
	assert_jstr(f->rec[before], "phase", "end");
	assert_jstr(f->rec[before], "job.id", ji->job.id);
	return f->rec[before];
}

/* Slurm on cgroup v1: the job's peak is the largest charge peak of
 * job_77's memory cgroup (level 2 above task_0), each step's of its
 * step_S (level 1); levels the kernel did not read count for nothing. */
static void test_job_usage_slurm_v1(void **state)
{
	struct fx *f = *state;
	struct jt_jobinfo *ji = jobs_get(f->jobs, "slurm", "77", true);
	/* peaks: {task, step, job, uid} */
	const struct exit_spec ex[] = {
		{ .pid = 600, .start = 1000, .ts = 50000, .levels = 4,
		  .runtime = 1500000000, .peaks = { 100 * MiB, 300 * MiB,
						    500 * MiB, 900 * MiB } },
		{ .pid = 601, .start = 2000, .ts = 51000, .levels = 4,
		  .runtime = 2250000000ull, .utime = 1, .stime = 1,
		  .peaks = { 150 * MiB, 350 * MiB, 700 * MiB, 950 * MiB } },
		/* forked by 600, never execs: its memory cgroup is 600's;
		 * it saw the job's and the step's highest peaks */
		{ .pid = 602, .start = 3000, .ts = 52000, .levels = 4,
		  .runtime = 500000000, .utime = 1, .stime = 3,
		  .peaks = { 120 * MiB, 380 * MiB, 720 * MiB, 990 * MiB } },
		{ .pid = 603, .start = 4000, .ts = 53000, .levels = 4,
		  .runtime = 250000000, .peaks = { 10 * MiB, 40 * MiB,
						   650 * MiB, 999 * MiB } },
		/* only two levels read: [2] is not the job's */
		{ .pid = 604, .start = 5000, .ts = 54000, .levels = 2,
		  .runtime = 125000000, .peaks = { 5 * MiB, 200 * MiB,
						   9000 * MiB, 9000 * MiB } },
	};
	const char *r;

	assert_non_null(ji);
	ev_exec(f, &(struct exec_spec){ .pid = 600, .ppid = 1, .start = 1000,
		.pstart = 10, .ts = 1100, .file = "/bin/bash",
		ARGV("bash\0job.sh"), .cg2 = "/", .cg1 = V1_BATCH });
	ev_exec(f, &(struct exec_spec){ .pid = 601, .ppid = 600, .start = 2000,
		.pstart = 1000, .ts = 2100, .file = "/usr/bin/python3",
		ARGV("python3\0a.py"), .cg2 = "/", .cg1 = V1_BATCH });
	ev_fork(f, 602, 3000, 600, 1000, "bash");
	ev_exec(f, &(struct exec_spec){ .pid = 603, .ppid = 1, .start = 4000,
		.pstart = 10, .ts = 4100, .file = "/bin/sleep",
		ARGV("sleep\0" "100000000"), .cg2 = "/", .cg1 = V1_EXTERN });
	ev_exec(f, &(struct exec_spec){ .pid = 604, .ppid = 600, .start = 5000,
		.pstart = 1000, .ts = 5100, .file = "/bin/true",
		ARGV("true"), .cg2 = "/", .cg1 = V1_BATCH });
	for (size_t i = 0; i < 5; i++)
		ev_exit(f, &ex[i]);
	assert_jstr(proc_rec(f, 602, 3000), "job.step", "batch");
	assert_jstr(proc_rec(f, 603, 4000), "job.step", "extern");

	r = end_record(f, ji);
	assert_usage(r, "usage", 4.625, 5, 720 * MiB, "cgroup_v1");
	assert_int_equal(ji->usage.cgroup_peak_bytes, 720 * MiB);
	assert_step(r, "batch", 4.375, 4, 380 * MiB, "cgroup_v1");
	assert_step(r, "extern", 0.25, 1, 40 * MiB, "cgroup_v1");
	assert_false(jget(r, "usage.steps.2", (char[8]){ 0 }, 8));
}

/*
 * A Slurm array task: its cgroup names it by its JobId (job_77), slurmctld
 * by "76_2".  Its processes carry 76_2 and array_index 2, its memory is
 * job_77's; its end record says how it ended (Slurm's code:signal, the
 * state) and the account as cost center, as its processes do.
 */
static void test_job_array_task(void **state)
{
	struct fx *f = *state;
	struct jt_jobinfo *ji = jobs_get(f->jobs, "slurm", "77", true);
	const char *r;

	strcpy(ji->raw_id, "77");
	strcpy(ji->job.id, "76_2");
	strcpy(ji->job.account, "proja");
	ji->batch.has_array = true;
	ji->batch.array_index = 2;
	ev_exec(f, &(struct exec_spec){ .pid = 610, .ppid = 1, .start = 1000,
		.pstart = 10, .ts = 1100, .file = "/bin/bash",
		ARGV("bash\0job.sh"), .cg2 = "/", .cg1 = V1_BATCH });
	ev_exit(f, &(struct exit_spec){ .pid = 610, .start = 1000, .ts = 50000,
		.levels = 4, .runtime = 1000000000,
		.peaks = { 100 * MiB, 300 * MiB, 500 * MiB, 900 * MiB } });
	r = proc_rec(f, 610, 1000);
	assert_jstr(r, "job.id", "76_2");
	assert_jraw(r, "job.array_index", "2");
	assert_jstr(r, "job.cost_center", "proja");
	assert_jstr(r, "job.step", "batch");
	/* a slurmctld answer: the OOM mark 0:125 */
	ji->exit_signal = 125;
	r = end_record(f, ji);
	assert_jraw(r, "job.array_index", "2");
	assert_jstr(r, "job.cost_center", "proja");
	assert_usage(r, "usage", 1, 1, 500 * MiB, "cgroup_v1");
	assert_jraw(r, "exit_code", "0");
	assert_jraw(r, "exit_signal", "125");
	assert_jstr(r, "state", "OUT_OF_MEMORY");
	/* slurmctld's own word wins */
	strcpy(ji->state, "TIMEOUT");
	ji->exit_signal = 0;
	r = end_record(f, ji);
	assert_jstr(r, "state", "TIMEOUT");
	assert_jraw(r, "exit_signal", "0");
}

#define V2_STEP0 "/system.slice/slurmstepd.scope/job_78/step_0/user/task_0"

/* Slurm on cgroup v2: job_78 is 3 levels above task_0, step_0 2; the
 * record says the peak is cgroup v2's memory.peak. */
static void test_job_usage_slurm_v2(void **state)
{
	struct fx *f = *state;
	struct jt_jobinfo *ji = jobs_get(f->jobs, "slurm", "78", true);
	const char *r;

	f->host.memcg_v2 = true;
	exec_in(f, 610, 6100, V2_STEP0, V2_STEP0);
	exec_in(f, 611, 6110, V2_STEP0, V2_STEP0);
	/* peaks: {task_0, user, step_0, job_78, slurmstepd.scope} */
	ev_exit(f, &(struct exit_spec){ .pid = 610, .start = 6100, .ts = 9000,
		.runtime = 1000000000, .levels = 5,
		.peaks = { MiB, 2 * MiB, 300 * MiB, 800 * MiB, 5000 * MiB } });
	ev_exit(f, &(struct exit_spec){ .pid = 611, .start = 6110, .ts = 9100,
		.runtime = 500000000, .utime = 1, .stime = 4, .levels = 5,
		.peaks = { MiB, 2 * MiB, 400 * MiB, 600 * MiB, 5000 * MiB } });
	r = end_record(f, ji);
	assert_usage(r, "usage", 1.5, 2, 800 * MiB, "cgroup_v2");
	assert_step(r, "0", 1.5, 2, 400 * MiB, "cgroup_v2");
}

/* A job registered with its own cgroup: a process in /myjob/sub has the
 * job's memory cgroup one level up, one in /myjob at its own level. */
static void test_job_usage_registered_cgroup(void **state)
{
	struct fx *f = *state;
	struct jt_jobinfo *ji = registered(f, "88", "/myjob");
	const char *r;

	exec_in(f, 620, 620, "/", "/myjob/sub");
	exec_in(f, 621, 630, "/", "/myjob");
	ev_exit(f, &(struct exit_spec){ .pid = 620, .start = 620, .ts = 9000,
		.runtime = 1000000, .levels = 3,
		.peaks = { 50 * MiB, 250 * MiB, 999 * MiB },
		.flags = JT_XF_DELAYACCT, .blkio_delay = 250000000,
		.wait = { .run_delay_ns = 1500000000, .reclaim_ns = 125000000,
			  .nvcsw = 2 } });
	ev_exit(f, &(struct exit_spec){ .pid = 621, .start = 630, .ts = 9100,
		.runtime = 2000000, .levels = 2,
		.peaks = { 260 * MiB, 999 * MiB },
		.wait = { .run_delay_ns = 500000000, .thrashing_ns = 62500000,
			  .nvcsw = 3 } });
	assert_jstr(proc_rec(f, 620, 620), "job.id", "88");
	r = end_record(f, ji);
	assert_usage(r, "usage", 0.003, 2, 260 * MiB, "cgroup_v1");
	assert_jraw(r, "usage.steps", "[]");
	/* where its processes' time went, added (timesplit.h) */
	assert_near(jnum(r, "usage.wall_s"), (9000 - 620 + 9100 - 630) / 1e9,
		    1e-6);
	assert_near(jnum(r, "usage.blkio_delay_s"), 0.25, 1e-9);
	assert_near(jnum(r, "usage.wait.run_queue_s"), 2.0, 1e-9);
	assert_near(jnum(r, "usage.wait.reclaim_s"), 0.125, 1e-9);
	assert_near(jnum(r, "usage.wait.thrashing_s"), 0.0625, 1e-9);
	assert_int_equal(ju64(r, "usage.wait.nvcsw"), 5);
}

/* A job whose processes' memory cgroup is not its own (the root): no
 * cgroup peak, but the largest sum of its processes' RSS in one pass. */
static void test_job_usage_rss_samples(void **state)
{
	struct fx *f = *state;
	struct jt_jobinfo *ji = registered(f, "99", "/jobs/99");
	const uint64_t rss[3][2] = { { 100 * MiB, 200 * MiB },
				     { 250 * MiB, 150 * MiB },
				     { 10 * MiB, 20 * MiB } };
	const char *r;

	exec_in(f, 630, 630, "/jobs/99", "/");
	exec_in(f, 631, 640, "/jobs/99", "/");
	for (int k = 0; k < 3; k++) {
		uint64_t now = 10000000ull * (k + 1);
		struct jt_sample s[3] = {
			leader(630, 630, 1000, rss[k][0]),
			leader(631, 640, 1000, rss[k][1]),
			leader(631, 640, 1000, 7777 * MiB),
		};

		s[2].tid = 632;	/* a thread: its RSS is the leader's */
		s[2].flags = 0;
		tracker_samples(f->t, s, 3, false, now);
		tracker_after_pass(f->t, now - 1000000);
		assert_int_equal(ju64(last_sample(f, 630), "mem.rss_bytes"),
				 rss[k][0]);
	}
	assert_int_equal(count_type(f, "sample"), 6);
	assert_jstr(last_sample(f, 631), "job.id", "99");
	ev_exit(f, &(struct exit_spec){ .pid = 630, .start = 630,
		.ts = 40000000, .runtime = 1000000000, .levels = 1,
		.peaks = { 7000 * MiB } });
	ev_exit(f, &(struct exit_spec){ .pid = 631, .start = 640,
		.ts = 40000001, .runtime = 3000000000ull, .utime = 2,
		.stime = 1, .levels = 1,
		.peaks = { 7000 * MiB } });
	r = end_record(f, ji);
	assert_usage(r, "usage", 4.0, 2, 400 * MiB, "samples");
	assert_int_equal(ji->usage.cgroup_peak_bytes, 0);
}

/*
 * A job without a memory cgroup of its own whose largest process peaks
 * above every sum of RSS a pass took (between two passes, or before the
 * first): the job's peak is that process's own, never below it.
 */
static void test_job_usage_largest_process(void **state)
{
	struct fx *f = *state;
	struct jt_jobinfo *ji = registered(f, "98", "/jobs/98");
	struct jt_jobinfo *short_job = registered(f, "97", "/jobs/97");
	struct jt_sample s = leader(640, 640, 1000, 20 * MiB);
	const char *r;

	/* job 98: one pass sees 20 MiB, the process then peaks at 300 */
	exec_in(f, 640, 640, "/jobs/98", "/");
	tracker_samples(f->t, &s, 1, false, 10000000);
	tracker_after_pass(f->t, 9000000);
	ev_exit(f, &(struct exit_spec){ .pid = 640, .start = 640,
		.ts = 20000000, .runtime = 1000000, .peak_rss = 300 * MiB });
	r = end_record(f, ji);
	assert_usage(r, "usage", 0.001, 1, 300 * MiB, "largest_process");
	/* job 97: over before any pass; its largest of two processes */
	exec_in(f, 650, 650, "/jobs/97", "/");
	exec_in(f, 651, 651, "/jobs/97", "/");
	ev_exit(f, &(struct exit_spec){ .pid = 651, .start = 651,
		.ts = 20000000, .runtime = 1000000, .peak_rss = 50 * MiB });
	ev_exit(f, &(struct exit_spec){ .pid = 650, .start = 650,
		.ts = 20000001, .runtime = 1000000, .peak_rss = 70 * MiB });
	r = end_record(f, short_job);
	assert_usage(r, "usage", 0.002, 2, 70 * MiB, "largest_process");
	/* its cost's memory efficiency is of the same figure */
	assert_int_equal(jobs_mem_peak(&short_job->usage, NULL), 70 * MiB);
}

/*
 * first_sample: a job's process that no pass has seen is due a pass once
 * it is first_sample old, once; a process outside jobs, one already sampled
 * and one gone never are; the next one due is kept.
 */
static void test_young_due(void **state)
{
	const uint64_t s = 1000000000ull;
	struct fx *f = *state;
	struct jt_sample x = leader(661, 2 * s, 1000, MiB);

	registered(f, "96", "/jobs/96");
	tracker_set_first_sample(f->t, s);
	exec_in(f, 660, 1 * s, "/jobs/96", "/");	/* job, due at 2 s */
	exec_in(f, 661, 2 * s, "/jobs/96", "/");	/* job, sampled below */
	exec_in(f, 662, 3 * s, "/jobs/96", "/");	/* job, due at 4 s */
	exec_in(f, 663, 1 * s, "/other", "/");		/* no job */
	exec_in(f, 664, 1 * s + 1, "/jobs/96", "/");	/* gone at once */
	ev_exit(f, &(struct exit_spec){ .pid = 664, .start = 1 * s + 1,
		.ts = 1 * s + 2, .runtime = 1000 });
	/* due at 2 s, not a nanosecond before */
	assert_false(tracker_young_due(f->t, 2 * s - 1));
	assert_true(tracker_young_due(f->t, 2 * s));
	/* 660 asked once; 661, due at 3 s, has its sample by then */
	tracker_samples(f->t, &x, 1, false, 2 * s + 5);
	tracker_after_pass(f->t, 2 * s + 4);
	assert_false(tracker_young_due(f->t, 3 * s));
	/* 662 next, at 4 s; then none */
	assert_false(tracker_young_due(f->t, 4 * s - 1));
	assert_true(tracker_young_due(f->t, 4 * s));
	assert_false(tracker_young_due(f->t, 9 * s));
	/* off: nothing is noted, however old a job's process gets */
	tracker_set_first_sample(f->t, 0);
	exec_in(f, 665, 6 * s, "/jobs/96", "/");
	assert_false(tracker_young_due(f->t, 100 * s));
}

/*
 * collector.record = "jobs": a process outside jobs leaves no record and
 * is counted (its CPU as its record would have written it, its I/O); a
 * job's process has its record.
 */
static void test_jobs_only(void **state)
{
	struct fx *f = *state;

	assert_int_equal(config_defaults(&f->cfg), 0);
	f->cfg.record_mode = JT_RECORD_JOBS;
	tracker_configure(f->t, &f->cfg);
	registered(f, "95", "/jobs/95");
	exec_in(f, 670, 670, "/jobs/95", "/");
	exec_in(f, 671, 671, "/other", "/");
	exec_in(f, 672, 672, "/other", "/");
	ev_exit(f, &(struct exit_spec){ .pid = 670, .start = 670, .ts = 700,
		.runtime = 2000000 });
	ev_exit(f, &(struct exit_spec){ .pid = 671, .start = 671, .ts = 701,
		.runtime = 1500000000, .utime = 3, .stime = 1,
		.io = { .read_bytes = 4096, .write_bytes = 8192 } });
	ev_exit(f, &(struct exit_spec){ .pid = 672, .start = 672, .ts = 702,
		.runtime = 250000 });
	assert_int_equal(count_type(f, "process"), 1);
	assert_jstr(f->rec[f->nrec - 1], "job.id", "95");
	assert_int_equal(tracker_stats(f->t).outside.processes, 2);
	assert_true(fabs(tracker_stats(f->t).outside.cpu_s - 1.50025) < 1e-9);
	assert_int_equal(tracker_stats(f->t).outside.read_bytes, 4096);
	assert_int_equal(tracker_stats(f->t).outside.write_bytes, 8192);
	assert_int_equal(proc_table_count(tracker_procs(f->t)), 0);
}

#define V1_ADOPTED "/slurm_node1/uid_1000/job_77/step_extern/task_0"

/*
 * A hybrid node (Slurm's cgroup v1 plugin, systemd's unified hierarchy):
 * pam_slurm_adopt moves an ssh session into the job's extern step in the
 * v1 hierarchies only, so the v2 path stays at ssh.service while the
 * memory cgroup names the job.  The session's shell belongs to job 77.
 */
static void test_job_usage_hybrid_adopted(void **state)
{
	struct fx *f = *state;
	struct jt_jobinfo *ji = jobs_get(f->jobs, "slurm", "77", true);
	const char *r;

	ev_exec(f, &(struct exec_spec){ .pid = 640, .ppid = 1, .start = 640,
		.pstart = 10, .ts = 641, .file = "/usr/sbin/sshd",
		ARGV("sshd: alice [priv]"), .cg2 = "/system.slice/ssh.service",
		.cg1 = "/system.slice/ssh.service" });
	ev_fork(f, 641, 650, 640, 640, "sshd");
	ev_exec(f, &(struct exec_spec){ .pid = 641, .ppid = 640, .start = 650,
		.pstart = 640, .ts = 660, .file = "/bin/bash", ARGV("-bash"),
		.cg2 = "/system.slice/ssh.service", .cg1 = V1_ADOPTED });
	ev_exit(f, &(struct exit_spec){ .pid = 641, .ppid = 640, .start = 650,
		.ts = 9000, .runtime = 500000000, .levels = 4,
		.peaks = { MiB, 64 * MiB, 900 * MiB, 1000 * MiB } });
	r = proc_rec(f, 641, 650);
	assert_jstr(r, "job.id", "77");
	assert_jstr(r, "job.step", "extern");
	r = end_record(f, ji);
	assert_usage(r, "usage", 0.5, 1, 900 * MiB, "cgroup_v1");
	assert_step(r, "extern", 0.5, 1, 64 * MiB, "cgroup_v1");
}

/* ---- 7: where the job's memory cgroup is ----------------------------- */

/* One of the two levels tracker_memcg_levels() gives. */
static int level(const char *memcg, const struct jt_job *job,
		 const char *registered, bool step)
{
	int s, j = tracker_memcg_levels(memcg, job, registered, &s);

	return step ? s : j;
}

/* Levels from a memory cgroup up to its job's and step's. */
static void test_memcg_level(void **state)
{
	const struct jt_job j5 = { .scheduler = "slurm", .id = "5",
				   .step = "batch" };
	const struct jt_job j6 = { .scheduler = "slurm", .id = "6",
				   .step = "batch" };
	const struct jt_job j5s0 = { .scheduler = "slurm", .id = "5",
				     .step = "0" };
	const struct jt_job mine = { .scheduler = "slurm", .id = "88" };
	const struct jt_job none = { .scheduler = "slurm" };
	static const char v1[] = "/slurm/uid_0/job_5/step_batch/task_0";
	static const char v2[] =
		"/system.slice/slurmstepd.scope/job_5/step_batch/user/task_0";

	(void)state;
	assert_int_equal(level(v1, &j5, NULL, false), 2);
	assert_int_equal(level(v1, &j5, NULL, true), 1);
	assert_int_equal(level(v2, &j5, NULL, false), 3);
	assert_int_equal(level(v2, &j5, NULL, true), 2);
	assert_int_equal(level(
		"/system.slice/slurmstepd.scope/job_5/step_batch", &j5, NULL,
		true), 0);
	assert_int_equal(level(
		"/system.slice/slurmstepd.scope/job_5", &j5, NULL, false), 0);
	/* another job's cgroup, another step's */
	assert_int_equal(level(v1, &j6, NULL, false), -1);
	assert_int_equal(level(v2, &j6, NULL, true), -1);
	assert_int_equal(level(v1, &j6, "/slurm/uid_0/job_6",
					     false), -1);
	assert_int_equal(level(v1, &j5s0, NULL, false), 2);
	assert_int_equal(level(v1, &j5s0, NULL, true), -1);
	/* a registered cgroup */
	assert_int_equal(level("/myjob/a/b", &mine, "/myjob",
					     false), 2);
	assert_int_equal(level("/myjob", &mine, "/myjob",
					     false), 0);
	assert_int_equal(level("/myjob/a/b", &mine, "/myjob",
					     true), -1);
	assert_int_equal(level("/myjobs/a", &mine, "/myjob",
					     false), -1);
	assert_int_equal(level("/", &mine, "/myjob", false), -1);
	assert_int_equal(level("/myjob/a", &mine, "", false), -1);
	assert_int_equal(level("/myjob/a", &mine, NULL, false),
			 -1);
	/* nothing to go by */
	assert_int_equal(level("", &j5, NULL, false), -1);
	assert_int_equal(level(NULL, &j5, NULL, false), -1);
	assert_int_equal(level(v1, &none, NULL, false), -1);
	assert_int_equal(level("/", &j5, NULL, false), -1);
}

/* ---- 7b: spot interruption notices ------------------------------------ */

/* A notice is one `signal` record naming every running job (an ended one
 * is not), with the action and its time; the job object only when one
 * job runs; the same notice gives the same id. */
static void test_spot(void **state)
{
	struct fx *f = *state;
	struct jt_jobinfo *a, *b, *c;
	/* 2017-09-18T08:22:00Z, AWS's documented example */
	struct jt_spot s = { .action = "terminate",
			     .action_ns = 1505722920ull * 1000000000ull,
			     .seen_ns = 1505722800123456000ull };
	char id0[64];
	const char *r;

	a = jobs_get(f->jobs, "slurm", "41", true);
	b = jobs_get(f->jobs, "slurm", "42", true);
	c = jobs_get(f->jobs, "awsbatch", "9f1c-77", true);
	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(c);
	a->start_ns = b->start_ns = c->start_ns = 1;
	b->end_ns = 2;			/* ended: not running */
	tracker_spot(f->t, &s);
	assert_int_equal(f->nrec, 1);
	r = f->rec[0];
	assert_jstr(r, "type", "signal");
	assert_jstr(r, "kind", "spot_interruption");
	assert_jraw(r, "jobs", "[\"slurm:41\",\"awsbatch:9f1c-77\"]");
	assert_jraw(r, "job", "null");
	assert_jstr(r, "evidence.action", "terminate");
	assert_jstr(r, "evidence.action_time", "2017-09-18T08:22:00.000000Z");
	assert_jraw(r, "evidence.rss_bytes", "null");
	assert_jstr(r, "time", "2017-09-18T08:20:00.123456Z");
	assert_jraw(r, "pid", "null");
	assert_jraw(r, "tool.name", "null");
	snprintf(id0, sizeof(id0), "%s", jraw(r, "id"));

	/* the same notice again (a restarted agent): the same record id */
	tracker_spot(f->t, &s);
	assert_string_equal(jraw(f->rec[1], "id"), id0);

	/* one job running: it is the job object too */
	c->end_ns = 3;
	s.action = "hibernate";
	tracker_spot(f->t, &s);
	r = f->rec[2];
	assert_jraw(r, "jobs", "[\"slurm:41\"]");
	assert_jstr(r, "job.id", "41");
	assert_jstr(r, "job.scheduler", "slurm");
	assert_jstr(r, "evidence.action", "hibernate");
	assert_string_not_equal(jraw(r, "id"), id0);

	/* none running: an empty list, no job */
	a->end_ns = 4;
	tracker_spot(f->t, &s);
	assert_jraw(f->rec[3], "jobs", "[]");
	assert_jraw(f->rec[3], "job", "null");
}

/* ---- 8: OOM kills ----------------------------------------------------- */

/* An OOM kill is a `signal` record at once, naming the process's job and
 * tool; the process record that follows says oom_killed. */
static void test_oom(void **state)
{
	struct fx *f = *state;
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	char id0[64];
	const char *r;

	ev_exec(f, &(struct exec_spec){ .pid = 800, .ppid = 1, .start = 8000,
		.pstart = 10, .ts = 8001, .file = "/usr/bin/jupyter-notebook",
		ARGV("jupyter-notebook\0--no-browser"), .cg2 = "/",
		.cg1 = "/slurm/uid_0/job_77/step_0/task_0" });
	/* the kernel's comm is cut to 15 bytes, the tool's name is not */
	ev_oom(f, 800, 8000, 9000000, 262144, 524288, "jupyter-noteboo");
	assert_int_equal(f->nrec, 1);
	r = f->rec[0];
	assert_jstr(r, "type", "signal");
	assert_jstr(r, "kind", "oom_kill");
	/* the same job object as in process records */
	assert_jstr(r, "job.id", "77");
	assert_jstr(r, "job.scheduler", "slurm");
	assert_jstr(r, "job.step", "0");
	assert_int_equal(ju64(r, "pid"), 800);
	assert_jstr(r, "comm", "jupyter-noteboo");
	assert_jstr(r, "tool.name", "jupyter-notebook");
	assert_jraw(r, "tool.category", "null");
	assert_jstr(r, "time", "1970-01-01T00:00:00.009000Z");
	assert_int_equal(ju64(r, "evidence.rss_bytes"), 262144 * page);
	assert_int_equal(ju64(r, "evidence.total_vm_bytes"), 524288 * page);

	ev_exit(f, &(struct exit_spec){ .pid = 800, .ppid = 1, .start = 8000,
		.ts = 9100000, .status = 9, .flags = JT_XF_OOM,
		.runtime = 1000 });
	r = proc_rec(f, 800, 8000);
	assert_jraw(r, "exit.oom_killed", "true");
	assert_jraw(r, "exit.signal", "9");
	assert_jraw(r, "exit.code", "null");

	/* a fork whose parent the tracker does not know: the defaults (its
	 * comm) name it, in the OOM signal and in its process record */
	ev_fork(f, 802, 8200, 9999, 99, "sort");
	ev_oom(f, 802, 8200, 9250000, 1, 2, "sort");
	assert_jstr(f->rec[f->nrec - 1], "tool.name", "sort");
	ev_exit(f, &(struct exit_spec){ .pid = 802, .ppid = 9999, .start = 8200,
		.ts = 9260000, .status = 9, .flags = JT_XF_OOM, .runtime = 1000 });
	assert_jstr(proc_rec(f, 802, 8200), "tool.name", "sort");

	/* a process the tracker does not know: its comm stands in */
	ev_oom(f, 801, 8100, 9200000, 1, 2, "java");
	r = f->rec[f->nrec - 1];
	assert_jstr(r, "kind", "oom_kill");
	assert_jraw(r, "job", "null");
	assert_jstr(r, "tool.name", "java");
	assert_int_equal(tracker_stats(f->t).oom_kills, 3);
	snprintf(id0, sizeof(id0), "%s", jraw(f->rec[0], "id"));
	assert_string_not_equal(id0, jraw(r, "id"));
}

/* A fork of a slurmstepd as the kernel sends it: the parent's title read
 * at the fork, and the uid both had then. */
static void ev_fork_stepd(struct fx *f, uint32_t pid, uint64_t start,
			  uint32_t ppid, uint64_t pstart, uint32_t uid,
			  const char *title)
{
	union jt_event e;

	memset(&e, 0, sizeof(e));
	e.fork.hdr = (struct jt_ev_hdr){ JT_EV_FORK, pid, start, start };
	e.fork.ppid = ppid;
	e.fork.parent_start_ns = pstart;
	e.fork.uid = uid;
	snprintf(e.fork.comm, sizeof(e.fork.comm), "slurmstepd");
	snprintf(e.fork.parent_title, sizeof(e.fork.parent_title), "%s", title);
	feed(f, &e, sizeof(e.fork));
}

/*
 * A slurmstepd's title names the job of what it starts only when it is
 * root's: a user can name a program slurmstepd and give it the title
 * "slurmstepd: [78.batch]", which must not put their processes in job 78.
 */
static void test_stepd_title_root_only(void **state)
{
	struct fx *f = *state;

	ev_exec(f, &(struct exec_spec){ .pid = 950, .ppid = 1, .start = 9500,
		.pstart = 10, .ts = 9500, .file = "/usr/sbin/slurmstepd",
		ARGV("slurmstepd"), .root = true });
	ev_fork_stepd(f, 951, 9510, 950, 9500, 0, "slurmstepd: [77.batch]");
	ev_exit(f, &(struct exit_spec){ .pid = 951, .ppid = 950, .start = 9510,
		.ts = 9600, .runtime = 1000 });
	assert_jstr(proc_rec(f, 951, 9510), "job.id", "77");
	assert_jstr(proc_rec(f, 951, 9510), "job.step", "batch");

	ev_exec(f, &(struct exec_spec){ .pid = 960, .ppid = 1, .start = 9700,
		.pstart = 10, .ts = 9700, .file = "/home/u/slurmstepd",
		ARGV("slurmstepd: [78.batch]") });
	ev_fork_stepd(f, 961, 9710, 960, 9700, 1000, "slurmstepd: [78.batch]");
	ev_exit(f, &(struct exit_spec){ .pid = 961, .ppid = 960, .start = 9710,
		.ts = 9800, .runtime = 1000 });
	assert_jraw(proc_rec(f, 961, 9710), "job", "null");

	/* a fork whose parent the tracker does not know */
	ev_fork_stepd(f, 971, 9910, 9998, 99, 1000, "slurmstepd: [79.0]");
	ev_exit(f, &(struct exit_spec){ .pid = 971, .ppid = 9998, .start = 9910,
		.ts = 9920, .runtime = 1000 });
	assert_jraw(proc_rec(f, 971, 9910), "job", "null");
	ev_fork_stepd(f, 972, 9930, 9998, 99, 0, "slurmstepd: [79.0]");
	ev_exit(f, &(struct exit_spec){ .pid = 972, .ppid = 9998, .start = 9930,
		.ts = 9940, .runtime = 1000 });
	assert_jstr(proc_rec(f, 972, 9930), "job.id", "79");
}

/* ---- 8: an exe path the kernel cut --------------------------------------- */

/* A path of len bytes whose base name is name: /d/d/.../name. */
static void long_path(char *buf, size_t len, const char *name)
{
	size_t n = strlen(name), i;

	for (i = 0; i + n < len; i++)
		buf[i] = i % 2 ? 'd' : '/';
	if (buf[i - 1] != '/')
		buf[i - 1] = '/';
	snprintf(buf + i, len - i + 1, "%s", name);
}

/*
 * The kernel sends 255 bytes of a longer path and JT_EF_EXE_TRUNC: the
 * record says exe_truncated, and the tool is argv[0]'s base name when it
 * agrees with comm (the kernel's start of the real name), else comm; a
 * forked child inherits both, a later exec of a whole path clears them.
 */
static void test_exe_truncated(void **state)
{
	struct fx *f = *state;
	static const char name[] = "jt-long-program-name";
	char path[400], cut[JT_FILENAME_LEN], argv[512];
	size_t alen;
	const char *r;

	long_path(path, 300, name);
	assert_int_equal(strlen(path), 300);
	snprintf(cut, sizeof(cut), "%s", path);
	alen = (size_t)snprintf(argv, sizeof(argv), "%s%c-x", path, '\0') + 1;

	ev_exec(f, &(struct exec_spec){ .pid = 900, .ppid = 1, .start = 9000,
		.pstart = 10, .ts = 9001, .file = cut, .argv = argv,
		.argv_len = alen, .flags = JT_EF_EXE_TRUNC,
		.comm = "jt-long-program" });
	ev_fork(f, 901, 9100, 900, 9000, "jt-long-program");
	ev_exit(f, &(struct exit_spec){ .pid = 901, .ppid = 900, .start = 9100,
		.ts = 9200, .runtime = 1000 });
	ev_exit(f, &(struct exit_spec){ .pid = 900, .ppid = 1, .start = 9000,
		.ts = 9300, .runtime = 1000 });
	r = proc_rec(f, 900, 9000);
	assert_jstr(r, "exe", cut);
	assert_jraw(r, "exe_truncated", "true");
	assert_jstr(r, "tool.name", name);
	r = proc_rec(f, 901, 9100);
	assert_jraw(r, "exe_truncated", "true");
	assert_jstr(r, "tool.name", name);

	/* a script: the kernel names it, argv[0] is its interpreter */
	long_path(path, 300, "runme.sh");
	alen = (size_t)snprintf(argv, sizeof(argv), "/bin/sh%c%s", '\0',
				path) + 1;
	ev_exec(f, &(struct exec_spec){ .pid = 902, .ppid = 1, .start = 9400,
		.pstart = 10, .ts = 9401, .file = path, .argv = argv,
		.argv_len = alen, .flags = JT_EF_EXE_TRUNC,
		.comm = "runme.sh" });
	ev_exit(f, &(struct exit_spec){ .pid = 902, .ppid = 1, .start = 9400,
		.ts = 9450, .runtime = 1000 });
	r = proc_rec(f, 902, 9400);
	assert_jraw(r, "exe_truncated", "true");
	assert_jstr(r, "tool.name", "runme.sh");

	/* a cut path, then a whole one: exe_truncated false again */
	ev_exec(f, &(struct exec_spec){ .pid = 903, .ppid = 1, .start = 9500,
		.pstart = 10, .ts = 9501, .file = path, .argv = argv,
		.argv_len = alen, .flags = JT_EF_EXE_TRUNC,
		.comm = "runme.sh" });
	EXEC_TOP(f, 903, 9500, 9502, "/usr/bin/cut-the-rope", "cut-the-rope");
	ev_exit(f, &(struct exit_spec){ .pid = 903, .ppid = 1, .start = 9500,
		.ts = 9600, .runtime = 1000 });
	r = proc_rec(f, 903, 9500);
	assert_jstr(r, "exe", "/usr/bin/cut-the-rope");
	assert_jraw(r, "exe_truncated", "false");
	assert_jstr(r, "tool.name", "cut-the-rope");
}

/* The state of (pid, start) after an exec of file whose run file the
 * kernel named name with flags. */
static uint32_t exe_state(struct fx *f, uint32_t pid, uint64_t start,
			  const char *file, const char *name, uint16_t flags)
{
	const struct jt_proc *p;

	ev_exec(f, &(struct exec_spec){ .pid = pid, .ppid = 1, .start = start,
		.pstart = 10, .ts = start + 1, .file = file, ARGV("x"),
		.flags = flags, .exe_name = name });
	p = proc_table_lookup(tracker_procs(f->t), pid, start);
	assert_non_null(p);
	return p->state & (JT_PS_EXE_SYSTEM | JT_PS_EXE_CHECK);
}

/*
 * p.exe_system's facts: the kernel's word that the file run is root's
 * counts under that file's own name only; a script, whose file the kernel
 * no longer holds, is left to check; a fork shares its parent's program.
 */
static void test_exe_system_state(void **state)
{
	struct fx *f = *state;
	const struct jt_proc *p;

	assert_int_equal(exe_state(f, 950, 95000, "/usr/bin/telegraf",
				   "telegraf", JT_EF_EXE_ROOT), JT_PS_EXE_SYSTEM);
	/* a link ~/bin/sshd to root's bash: bash is root's, sshd is not */
	assert_int_equal(exe_state(f, 951, 95100, "/home/u/bin/sshd", "bash",
				   JT_EF_EXE_ROOT), 0);
	/* a user's copy */
	assert_int_equal(exe_state(f, 952, 95200, "/home/u/telegraf",
				   "telegraf", 0), 0);
	/* another folder's name through ".." */
	assert_int_equal(exe_state(f, 953, 95300,
				   "/opt/datadog-agent/../../usr/bin/bash",
				   "bash", JT_EF_EXE_ROOT), 0);
	/* a script: its interpreter's name and owner say nothing */
	assert_int_equal(exe_state(f, 954, 95400, "/usr/sbin/update-motd",
				   "dash", JT_EF_EXE_ROOT | JT_EF_SCRIPT),
			 JT_PS_EXE_CHECK);
	/* a cut path is nobody's name */
	assert_int_equal(exe_state(f, 955, 95500, "/usr/bin/telegraf", "telegraf",
				   JT_EF_EXE_ROOT | JT_EF_EXE_TRUNC), 0);
	/* a fork shares the program, a later exec decides anew */
	ev_fork(f, 956, 95600, 950, 95000, "telegraf");
	p = proc_table_lookup(tracker_procs(f->t), 956, 95600);
	assert_int_equal(p->state & JT_PS_EXE_SYSTEM, JT_PS_EXE_SYSTEM);
	assert_int_equal(exe_state(f, 950, 95000, "/tmp/x/telegraf", "telegraf",
				   0), 0);
}

/* The default tool name alone: exe, argv[0] that agrees with comm, comm. */
static void test_default_tool(void **state)
{
	static char argv[] = "/x/jt-long-program-name\0-x";
	static char exe[] = "/x/fragm";
	struct jt_proc p = { .comm = "jt-long-program", .exe = exe,
			     .argv = argv, .argv_len = sizeof(argv) };

	(void)state;
	assert_string_equal(proc_default_tool(&p), "fragm");
	p.state = JT_PS_EXE_TRUNC;
	assert_string_equal(proc_default_tool(&p), "jt-long-program-name");
	/* argv[0] cut within its bytes (no NUL): comm */
	p.argv_len = 10;
	assert_string_equal(proc_default_tool(&p), "jt-long-program");
	/* an argv[0] that is another name (exec -a, an interpreter) */
	p.argv_len = sizeof(argv);
	memcpy(p.comm, "runme.sh", 9);
	assert_string_equal(proc_default_tool(&p), "runme.sh");
	/* no argv at all */
	p.argv = NULL;
	p.argv_len = 0;
	assert_string_equal(proc_default_tool(&p), "runme.sh");
	/* no exe: comm, cut or not */
	p.state = 0;
	p.exe = NULL;
	assert_string_equal(proc_default_tool(&p), "runme.sh");
}

/* ---- 7: containers of AWS Batch jobs ------------------------------------ */

#define CT1 "fefacee79f4b6082f1a1193c2ee3a1aa63a1938f5b460cf578894aab7e382405"
#define CT2 "2e5a9c7dbcbdf9b9a897f837cf5133edafcbb677456722ac8dd4d2eafb6e0f81"
#define CT3 "1cc313858df2c49b285aa0bfdeb1f5991494827c9b052609d058457eb4a44b45"
#define TASK "822569a6b61861acc4645171f41dfe0c"
#define BJOB "4c5e4f0a-1f2b-4f7e-9a43-0d2c1b6f3e21"
#define BARN "arn:aws:ecs:us-east-1:123456789012:task/batch/" TASK

/* The look-up queue of the test: remember what is asked. */
static int fake_ask(void *ctx, const char *id)
{
	struct fx *f = ctx;

	if (f->ask_rc)
		return f->ask_rc;
	assert_true(f->nasked < 8);
	snprintf(f->asked[f->nasked++], sizeof(f->asked[0]), "%s", id);
	return 0;
}

/* The containers' job records: the tracker writes them, as the agent's. */
static void ct_job_record(void *ctx, const struct jt_jobinfo *ji,
			  const char *phase)
{
	struct fx *f = ctx;

	tracker_job_record(f->t, ji, phase);
}

/* A tracker that follows containers (at most max). */
static void setup_containers(struct fx *f, size_t max)
{
	struct containers_ops ops = { .ask = fake_ask,
				      .job_record = ct_job_record, .ctx = f,
				      .end_grace_ns = 10000000000ull,
				      .jobs = f->jobs,
				      .procs = tracker_procs(f->t),
				      .host = &f->host };
	struct tracker_containers ct;

	assert_int_equal(containers_new(max, &ops, &f->cts), 0);
	ct = containers_tracker(f->cts);
	tracker_set_containers(f->t, &ct);
}

/* Docker's answer for container id: a Batch job's (job non-NULL, an
 * array child of index 7, attempt 2, 1.5 CPUs, 256 MiB, first process
 * pid), another container's, or a failed look-up (state).  The container
 * is running, or has exited with code f->exited - 1 when that is set. */
static void answer(struct fx *f, const char *id, enum docker_state state,
		   const char *job, uint32_t pid)
{
	static struct dockerq_result r;

	memset(&r, 0, sizeof(r));
	snprintf(r.id, sizeof(r.id), "%s", id);
	r.state = state;
	r.info.status = f->exited ? DOCKER_STATUS_EXITED :
				    DOCKER_STATUS_RUNNING;
	r.info.exit_code = f->exited - 1;
	if (job) {
		strcpy(r.info.env[DOCKER_ENV_JOB_ID], job);
		strcpy(r.info.env[DOCKER_ENV_JOB_ATTEMPT], "2");
		strcpy(r.info.env[DOCKER_ENV_ARRAY_INDEX], "7");
		strcpy(r.info.env[DOCKER_ENV_JQ_NAME], "queue-a");
		strcpy(r.info.env[DOCKER_ENV_CE_NAME], "ce-spot");
		strcpy(r.info.env[DOCKER_ENV_RUN_ID], "run-9");
		strcpy(r.info.label[DOCKER_LABEL_TASK_ARN], BARN);
		r.info.nano_cpus = 1500000000;
		r.info.memory = 256 * MiB;
		r.info.pid = pid;
	}
	containers_answer(f->cts, &r);
}

/* Process pid (start) forks child (cstart) that execs in the same cgroups. */
static void fork_exec(struct fx *f, uint32_t pid, uint64_t start,
		      uint32_t child, uint64_t cstart, const char *cg)
{
	ev_fork(f, child, cstart, pid, start, "sh");
	ev_exec(f, &(struct exec_spec){ .pid = child, .ppid = pid,
		.start = cstart, .pstart = start, .ts = cstart + 1,
		.file = "/bin/work", ARGV("work"), .cg2 = cg, .cg1 = cg });
}

/* The last record of a type (and job phase, for job records). */
static const char *last_of(const struct fx *f, const char *type,
			   const char *phase)
{
	char qt[64], qp[64];

	snprintf(qt, sizeof(qt), "\"%s\"", type);
	snprintf(qp, sizeof(qp), "\"%s\"", phase ? phase : "");
	for (size_t i = f->nrec; i-- > 0;)
		if (!strcmp(jraw(f->rec[i], "type"), qt) &&
		    (!phase || !strcmp(jraw(f->rec[i], "phase"), qp)))
			return f->rec[i];
	return NULL;
}

/* Assert the Batch fields of a record's job object. */
static void assert_batch_job(const char *r)
{
	assert_jstr(r, "job.scheduler", "aws-batch");
	assert_jstr(r, "job.id", BJOB ":7");
	assert_jraw(r, "job.attempt", "2");
	assert_jraw(r, "job.array_index", "7");
	assert_jraw(r, "job.node_index", "null");
	assert_jstr(r, "job.queue", "queue-a");
	assert_jstr(r, "job.compute_environment", "ce-spot");
	assert_jstr(r, "job.ecs_task_arn", BARN);
	assert_jstr(r, "job.run", "run-9");
}

/*
 * Docker answers while the container runs: one look-up, a job start
 * record with the container's allocation and its first process's start,
 * the running processes (and their later children) given the job, an end
 * record when the last one exits, with every process's CPU and the
 * container's memory cgroup peak.
 */
static void test_batch_container(void **state)
{
	struct fx *f = *state;
	const char *cg = "/docker/" CT1;
	const char *r;
	size_t before;

	setup_containers(f, 8);
	exec_in(f, 700, 7000, cg, cg);
	fork_exec(f, 700, 7000, 701, 7100, cg);
	assert_int_equal(f->nasked, 1);
	assert_string_equal(f->asked[0], CT1);
	assert_int_equal(count_type(f, "job"), 0);

	answer(f, CT1, DOCKER_OK, BJOB, 700);
	r = last_of(f, "job", "start");
	assert_non_null(r);
	assert_batch_job(r);
	assert_jraw(r, "allocation.cpus", "2");
	assert_int_equal(ju64(r, "allocation.mem_bytes"), 256 * MiB);
	assert_jstr(r, "start_time", "1970-01-01T00:00:00.000007Z");
	assert_false(jget(r, "usage", (char[8]){ 0 }, 8));

	/* a child forked after the answer inherits the job */
	fork_exec(f, 701, 7100, 702, 7200, cg);
	ev_exit(f, &(struct exit_spec){ .pid = 702, .start = 7200, .ts = 8000,
		.runtime = 250000000, .levels = 2, .peaks = { 90 * MiB, 1 } });
	ev_exit(f, &(struct exit_spec){ .pid = 701, .start = 7100, .ts = 8100,
		.runtime = 500000000, .levels = 2, .peaks = { 120 * MiB, 1 } });
	assert_batch_job(proc_rec(f, 702, 7200));
	assert_batch_job(proc_rec(f, 701, 7100));
	assert_int_equal(count_type(f, "job"), 1);
	/* the first process, Docker's State.Pid, is the last: not the end
	 * yet, Docker is asked whether the container has ended */
	before = f->nrec;
	ev_exit(f, &(struct exit_spec){ .pid = 700, .start = 7000, .ts = 9000,
		.status = 3 << 8, .runtime = 1000000000, .levels = 2,
		.peaks = { 100 * MiB, 1 } });
	assert_int_equal(f->nrec, before + 1);
	assert_batch_job(proc_rec(f, 700, 7000));
	assert_int_equal(f->nasked, 2);
	/* it has: the end record, with the usage and Docker's exit code */
	f->exited = 3 + 1;
	answer(f, CT1, DOCKER_OK, BJOB, 700);
	r = last_of(f, "job", "end");
	assert_non_null(r);
	assert_batch_job(r);
	assert_jraw(r, "exit_code", "3");
	assert_jstr(r, "end_time", "1970-01-01T00:00:00.000009Z");
	assert_usage(r, "usage", 1.75, 3, 120 * MiB, "cgroup_v1");
	assert_int_equal(count_type(f, "job"), 2);
}

/*
 * Docker answers after the container is gone (ECS's cgroup v1 layout):
 * the process record was written without a job, the job's start and end
 * records come with the answer (the container has exited) and count that
 * process; the job's memory cgroup is the ECS task's, one level above the
 * container's.
 */
static void test_batch_answer_late(void **state)
{
	struct fx *f = *state;
	const char *cg = "/ecs/" TASK "/" CT2;
	const char *r;
	struct containers_stats st;

	setup_containers(f, 8);
	exec_in(f, 710, 7100, cg, cg);
	ev_exit(f, &(struct exit_spec){ .pid = 710, .start = 7100, .ts = 9100,
		.runtime = 2000000000, .levels = 3,
		.peaks = { 40 * MiB, 64 * MiB, 1 } });
	r = proc_rec(f, 710, 7100);
	assert_jraw(r, "job", "null");
	assert_jstr(r, "container", "ecs://" CT2);
	containers_stats(f->cts, &st);
	assert_int_equal(st.entries, 1);	/* the answer is awaited */

	f->exited = 0 + 1;
	answer(f, CT2, DOCKER_OK, BJOB, 710);
	assert_batch_job(last_of(f, "job", "start"));
	r = last_of(f, "job", "end");
	assert_non_null(r);
	assert_usage(r, "usage", 2.0, 1, 64 * MiB, "cgroup_v1");
	assert_jstr(r, "end_time", "1970-01-01T00:00:00.000009Z");
	containers_stats(f->cts, &st);
	assert_int_equal(st.entries, 0);
}

/*
 * A container without a Batch environment is only a container; a failed
 * look-up leaves the job fields null and is asked again while the
 * container has processes, not before it is due.
 */
static void test_container_no_job(void **state)
{
	struct fx *f = *state;
	struct containers_stats st;
	const char *cg3 = "/system.slice/docker-" CT3 ".scope";
	const char *r;

	setup_containers(f, 8);
	exec_in(f, 720, 7200, "/docker/" CT1, "/docker/" CT1);
	answer(f, CT1, DOCKER_OK, NULL, 0);
	ev_exit(f, &(struct exit_spec){ .pid = 720, .start = 7200, .ts = 9200,
		.runtime = 1000 });
	r = proc_rec(f, 720, 7200);
	assert_jraw(r, "job", "null");
	assert_jstr(r, "container", "docker://" CT1);
	assert_int_equal(count_type(f, "job"), 0);

	exec_in(f, 721, 7210, cg3, cg3);
	assert_int_equal(f->nasked, 2);
	answer(f, CT3, DOCKER_TIMEOUT, NULL, 0);
	containers_tick(f->cts, util_now_ns(CLOCK_MONOTONIC));
	assert_int_equal(f->nasked, 2);		/* not yet */
	containers_tick(f->cts, UINT64_MAX / 2);
	assert_int_equal(f->nasked, 3);
	assert_string_equal(f->asked[2], CT3);
	/* an answer for a container not followed changes nothing */
	answer(f, CT2, DOCKER_OK, BJOB, 1);
	assert_int_equal(count_type(f, "job"), 0);
	containers_stats(f->cts, &st);
	assert_int_equal(st.entries, 1);
	assert_int_equal(st.jobs, 0);
	ev_exit(f, &(struct exit_spec){ .pid = 721, .start = 7210, .ts = 9300,
		.runtime = 1000 });
	assert_jraw(proc_rec(f, 721, 7210), "job", "null");
	/* the retry's answer comes after the container is gone */
	answer(f, CT3, DOCKER_ABSENT, NULL, 0);
	containers_stats(f->cts, &st);
	assert_int_equal(st.entries, 0);
}

/* The tracker classifies with the project's rules (lua-rules/). */
static void default_rules(struct fx *f)
{
	/* a deadline a loaded CI machine keeps */
	struct rules_limits lim = { 64u << 20, 10000000, 1000 };
	const char *top = getenv("top_srcdir");
	char dir[PATH_MAX], err[512];

	snprintf(dir, sizeof(dir), "%s/lua-rules", top ? top : ".");
	assert_int_equal(rules_new(&lim, &f->rules), 0);
	if (rules_load_dir(f->rules, dir, err, sizeof(err)))
		fail_msg("%s: %s", dir, err);
	retrack(f, f->rules);
}

/*
 * runc's bootstrap execs in the container's cgroup before the container's
 * command (`runc init` from a sealed copy of runc: /dev/fd/6), when runc
 * moved it there first.  The rules exclude it and it is no process of the
 * container: not looked up for, not its first process, not counted; nor
 * is a process of the container that execs such a bootstrap later (the
 * count then touches zero with the command's exit).
 */
static void test_runtime_bootstrap_not_counted(void **state)
{
	struct fx *f = *state;
	const char *cg = "/ecs/" TASK "/" CT1;
	struct containers_stats st;
	const char *r;

	default_rules(f);
	setup_containers(f, 8);
	ev_exec(f, &(struct exec_spec){ .pid = 800, .ppid = 790,
		.start = 8000, .pstart = 7900, .ts = 8001, .file = "/dev/fd/6",
		ARGV("runc\0init"), .cg2 = cg, .cg1 = cg, .comm = "runc" });
	assert_int_equal(f->nasked, 0);
	containers_stats(f->cts, &st);
	assert_int_equal(st.entries, 0);
	ev_exit(f, &(struct exit_spec){ .pid = 800, .start = 8000,
		.ts = 8100 });
	assert_int_equal(f->nrec, 0);

	/* the container's command: its first process */
	ev_exec(f, &(struct exec_spec){ .pid = 801, .ppid = 790,
		.start = 8200, .pstart = 7900, .ts = 8201, .file = "/bin/sh",
		ARGV("sh\0-c\0work"), .cg2 = cg, .cg1 = cg });
	assert_int_equal(f->nasked, 1);
	answer(f, CT1, DOCKER_OK, BJOB, 801);
	r = last_of(f, "job", "start");
	assert_non_null(r);
	assert_jstr(r, "start_time", "1970-01-01T00:00:00.000008Z");

	/* a child of it that becomes a bootstrap leaves the count */
	ev_fork(f, 802, 8300, 801, 8200, "sh");
	ev_exec(f, &(struct exec_spec){ .pid = 802, .ppid = 801,
		.start = 8300, .pstart = 8200, .ts = 8301,
		.file = "/proc/self/exe", ARGV("runc\0init"), .cg2 = cg,
		.cg1 = cg, .comm = "runc" });
	ev_exit(f, &(struct exit_spec){ .pid = 801, .start = 8200,
		.ts = 8400 });
	assert_int_equal(f->nasked, 2);		/* has it ended? */
	assert_null(last_of(f, "job", "end"));
	f->exited = 0 + 1;
	answer(f, CT1, DOCKER_OK, BJOB, 801);
	r = last_of(f, "job", "end");
	assert_non_null(r);
	assert_int_equal(ju64(r, "usage.processes"), 1);	/* sh alone */
	ev_exit(f, &(struct exit_spec){ .pid = 802, .start = 8300,
		.ts = 8500 });
	assert_int_equal(count_type(f, "process"), 1);
}

/* At most max containers are followed: another one is not looked up. */
static void test_containers_bounded(void **state)
{
	struct fx *f = *state;
	struct containers_stats st;

	setup_containers(f, 2);
	exec_in(f, 730, 7300, "/docker/" CT1, "/docker/" CT1);
	exec_in(f, 731, 7310, "/docker/" CT2, "/docker/" CT2);
	exec_in(f, 732, 7320, "/docker/" CT3, "/docker/" CT3);
	assert_int_equal(f->nasked, 2);
	containers_stats(f->cts, &st);
	assert_int_equal(st.entries, 2);
	assert_int_equal(st.full, 1);
	/* the first two go: their entries with them */
	answer(f, CT1, DOCKER_OK, NULL, 0);
	answer(f, CT2, DOCKER_NOT_FOUND, NULL, 0);
	ev_exit(f, &(struct exit_spec){ .pid = 730, .start = 7300, .ts = 9400 });
	ev_exit(f, &(struct exit_spec){ .pid = 731, .start = 7310, .ts = 9410 });
	ev_exit(f, &(struct exit_spec){ .pid = 732, .start = 7320, .ts = 9420 });
	containers_stats(f->cts, &st);
	assert_int_equal(st.entries, 0);
	/* a queue that refuses: the look-up counts as failed, asked later */
	f->ask_rc = -EAGAIN;
	exec_in(f, 733, 7330, "/docker/" CT3, "/docker/" CT3);
	f->ask_rc = 0;
	containers_tick(f->cts, UINT64_MAX / 2);
	assert_int_equal(f->nasked, 3);
	assert_string_equal(f->asked[2], CT3);
}

/* Run every test in this file, each with a fresh tracker. */
/*
 * The clock offset keeps its value through the jitter of measuring it,
 * so every record of a process has one start_time; a real step is taken.
 */
static void test_clock_offset(void **state)
{
	struct jt_host h = { 0 };
	int64_t off;

	(void)state;
	record_host_sync_clock(&h);
	off = h.boot_to_real_ns;
	assert_true(off != 0);
	for (int i = 0; i < 1000; i++) {
		record_host_sync_clock(&h);
		assert_true(h.boot_to_real_ns == off);
	}
	/* as if the clock had been stepped 5 ms back: the offset follows */
	h.boot_to_real_ns = off + 5000000;
	record_host_sync_clock(&h);
	assert_true(h.boot_to_real_ns > off - 1000000 &&
		    h.boot_to_real_ns < off + 1000000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_shell_reaps_children,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_excluded_kept_while_followed,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_files_record, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_files_gone, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_files_named, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_threads_one_record, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_short_process_cpu, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_pid_reuse, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_lost_exit, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_engine_job, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fork_then_exec, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_job_array_task, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_cgroup_owner, setup, teardown),
		cmocka_unit_test_setup_teardown(test_job_usage_slurm_v1, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_job_usage_slurm_v2, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_job_usage_registered_cgroup, setup, teardown),
		cmocka_unit_test_setup_teardown(test_job_usage_rss_samples,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_job_usage_largest_process, setup, teardown),
		cmocka_unit_test_setup_teardown(test_young_due, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_jobs_only, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_job_usage_hybrid_adopted,
						setup, teardown),
		cmocka_unit_test(test_memcg_level),
		cmocka_unit_test(test_clock_offset),
		cmocka_unit_test_setup_teardown(test_oom, setup, teardown),
		cmocka_unit_test_setup_teardown(test_spot, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stepd_title_root_only,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_exe_truncated, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_exe_system_state, setup,
						teardown),
		cmocka_unit_test(test_default_tool),
		cmocka_unit_test_setup_teardown(test_batch_container, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_batch_answer_late, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_container_no_job, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_runtime_bootstrap_not_counted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_containers_bounded, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
