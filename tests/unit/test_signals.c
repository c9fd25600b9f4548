// SPDX-License-Identifier: GPL-2.0-or-later
/* test_signals.c - unit tests for agent/daemon/track/signals.c: stall and io_bound
 * episodes, memory_near_limit, the median, the store query and the
 * records. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "jobs.h"
#include "json.h"
#include <math.h>

#include "json_check.h"
#include "record.h"
#include "signals.h"
#include "store.h"
#include "util.h"

#define S 1000000000ull

static const struct sig_params P = {
	.stall_after_ns = 3 * S, .io_window_ns = 2 * S, .io_above = 0.5,
	.slower_factor = 2, .slower_min_runs = 3, .memory_near = 0.9,
	.cpu_starved_above = 0.3, .memory_pressure_above = 0.1,
	.net_wait_above = 0.5,
};

/* No progress for stall_after: one start, then one end when a counter
 * moves, with the stall's length; then a new episode may begin. */
static void test_stall(void **state)
{
	struct jt_sigstate s = { 0 };
	struct jt_counters prev = { .cpu_user_s = 1, .rchar = 10 }, c = prev;
	struct sig_out st, io;

	(void)state;
	/* the first sample is progress */
	assert_int_equal(signals_proc(&s, &P, 10 * S, &prev, &c, false, false, &st, &io), 0);
	assert_int_equal(s.progress_ns, 10 * S);
	assert_int_equal(signals_proc(&s, &P, 11 * S, &prev, &c, true, false, &st, &io), 0);
	assert_int_equal(signals_proc(&s, &P, 12 * S, &prev, &c, true, false, &st, &io), 0);
	assert_int_equal(signals_proc(&s, &P, 13 * S, &prev, &c, true, false, &st, &io),
			 SIG_EV_STALL);
	assert_int_equal(st.kind, SIG_STALL);
	assert_int_equal(st.last_progress_ns, 10 * S);
	assert_true(st.stalled_s == 3.0);
	/* once an episode */
	assert_int_equal(signals_proc(&s, &P, 20 * S, &prev, &c, true, false, &st, &io), 0);
	/* the network moves: the end */
	c.rx_bytes = 1;
	assert_int_equal(signals_proc(&s, &P, 21 * S, &prev, &c, true, false, &st, &io),
			 SIG_EV_STALL_END);
	assert_int_equal(st.kind, SIG_STALL_END);
	assert_true(st.stalled_s == 11.0);
	assert_false(st.exited);
	assert_int_equal(s.progress_ns, 21 * S);
	/* each counter counts as progress */
	prev = c;
	for (int i = 0; i < 6; i++) {
		struct jt_counters d = prev;

		switch (i) {
		case 0: d.cpu_sys_s += 0.001; break;
		case 1: d.rchar++; break;
		case 2: d.wchar++; break;
		case 3: d.read_bytes++; break;
		case 4: d.write_bytes++; break;
		case 5: d.tx_bytes++; break;
		}
		assert_int_equal(signals_proc(&s, &P, (30 + i) * S, &prev, &d,
					      true, false, &st, &io), 0);
		assert_int_equal(s.progress_ns, (30 + i) * S);
	}
	/* RSS and blkio delay are not progress */
	c = prev;
	c.rss_bytes = 99;
	c.blkio_delay_s = 0.001;
	assert_int_equal(signals_proc(&s, &P, 36 * S, &prev, &c, true, false, &st, &io), 0);
	assert_int_equal(s.progress_ns, 35 * S);
	assert_int_equal(signals_proc(&s, &P, 38 * S, &prev, &c, true, false, &st, &io),
			 SIG_EV_STALL);
	/* it exits: the end, exited */
	assert_true(signals_proc_gone(&s, 40 * S, &st));
	assert_true(st.exited);
	assert_true(st.stalled_s == 5.0);
	assert_false(signals_proc_gone(&s, 41 * S, &st));
	/* waiting for a child is progress: no stall, and it ends one */
	assert_int_equal(signals_proc(&s, &P, 42 * S, &prev, &c, true, true, &st, &io), 0);
	assert_int_equal(signals_proc(&s, &P, 50 * S, &prev, &c, true, true, &st, &io), 0);
	assert_int_equal(s.progress_ns, 50 * S);
	assert_int_equal(signals_proc(&s, &P, 53 * S, &prev, &c, true, false, &st, &io),
			 SIG_EV_STALL);
	assert_int_equal(signals_proc(&s, &P, 54 * S, &prev, &c, true, true, &st, &io),
			 SIG_EV_STALL_END);
}

/* Block-I/O delay over half of a window: one signal an episode. */
static void test_io_bound(void **state)
{
	struct jt_sigstate s = { 0 };
	struct jt_counters c = { .rchar = 1 }, prev = c;
	struct sig_out st, io;

	(void)state;
	assert_int_equal(signals_proc(&s, &P, 10 * S, &prev, &c, true, false, &st, &io), 0);
	c.rchar++;
	c.blkio_delay_s = 1.0;	/* half of 2 s: not over */
	assert_int_equal(signals_proc(&s, &P, 12 * S, &prev, &c, true, false, &st, &io), 0);
	c.rchar++;
	c.blkio_delay_s = 2.2;	/* 1.2 of 2 s */
	assert_int_equal(signals_proc(&s, &P, 13 * S, &prev, &c, true, false, &st, &io), 0);
	assert_int_equal(signals_proc(&s, &P, 14 * S, &prev, &c, true, false, &st, &io),
			 SIG_EV_IO_BOUND);
	assert_int_equal(io.kind, SIG_IO_BOUND);
	assert_true(io.window_s == 2.0);
	assert_true(io.blkio_delay_s > 1.1999 && io.blkio_delay_s < 1.2001);
	assert_true(io.fraction > 0.5999 && io.fraction < 0.6001);
	/* the next window is as bad: the same episode */
	c.blkio_delay_s = 4;
	assert_int_equal(signals_proc(&s, &P, 16 * S, &prev, &c, true, false, &st, &io), 0);
	/* a quiet window ends it, the next bad one is a new episode */
	assert_int_equal(signals_proc(&s, &P, 18 * S, &prev, &c, true, false, &st, &io) &
			 SIG_EV_IO_BOUND, 0);
	c.blkio_delay_s = 7;
	assert_int_equal(signals_proc(&s, &P, 21 * S, &prev, &c, true, false, &st, &io) &
			 SIG_EV_IO_BOUND, SIG_EV_IO_BOUND);
	assert_true(io.window_s == 3.0);
}

/* Run-queue wait over 0.3 of a window: cpu_starved, one an episode;
 * reclaim + thrashing + swap-in over 0.1: memory_pressure (compaction and
 * blkio are not memory pressure). */
static void test_wait(void **state)
{
	struct jt_sigstate s = { 0 };
	struct jt_counters c = { 0 };
	struct sig_out cpu, mem, net;

	(void)state;
	assert_int_equal(signals_wait(&s, &P, 10 * S, &c, &cpu, &mem, &net), 0);
	c.w.run_queue_s = 0.6;	/* 0.3 of 2 s: not over */
	c.w.compact_s = 2;
	c.blkio_delay_s = 2;
	c.w.reclaim_s = 0.1;
	c.w.thrashing_s = 0.1;	/* 0.2 of 2 s: 0.1, not over */
	assert_int_equal(signals_wait(&s, &P, 12 * S, &c, &cpu, &mem, &net), 0);
	/* within the window: nothing measured yet */
	c.w.run_queue_s += 1.5;
	c.w.swapin_s = 0.25;
	assert_int_equal(signals_wait(&s, &P, 13 * S, &c, &cpu, &mem, &net), 0);
	assert_int_equal(signals_wait(&s, &P, 14 * S, &c, &cpu, &mem, &net),
			 SIG_EV_CPU_STARVED | SIG_EV_MEM_PRESSURE);
	assert_int_equal(cpu.kind, SIG_CPU_STARVED);
	assert_true(cpu.window_s == 2.0);
	assert_true(fabs(cpu.run_queue_s - 1.5) < 1e-9);
	assert_true(fabs(cpu.fraction - 0.75) < 1e-9);
	assert_int_equal(mem.kind, SIG_MEM_PRESSURE);
	assert_true(fabs(mem.mem_wait_s - 0.25) < 1e-9);
	assert_true(fabs(mem.fraction - 0.125) < 1e-9);
	/* as bad again: the same episodes */
	c.w.run_queue_s += 1.5;
	c.w.swapin_s += 0.25;
	assert_int_equal(signals_wait(&s, &P, 16 * S, &c, &cpu, &mem, &net), 0);
	/* a quiet window ends them, a bad one begins new ones */
	assert_int_equal(signals_wait(&s, &P, 18 * S, &c, &cpu, &mem, &net), 0);
	c.w.run_queue_s += 1;
	assert_int_equal(signals_wait(&s, &P, 20 * S, &c, &cpu, &mem, &net),
			 SIG_EV_CPU_STARVED);
}

/* Network wait over 0.5 of a window: net_wait, one an episode, its
 * evidence the window's; child waits and the other waits are not it. */
static void test_net_wait(void **state)
{
	struct jt_sigstate s = { 0 };
	struct jt_counters c = { 0 };
	struct sig_out cpu, mem, net;

	(void)state;
	assert_int_equal(signals_wait(&s, &P, 10 * S, &c, &cpu, &mem, &net), 0);
	c.w.net_s = 1.0;	/* 0.5 of 2 s: not over */
	c.w.children_s = 2;
	assert_int_equal(signals_wait(&s, &P, 12 * S, &c, &cpu, &mem, &net), 0);
	c.w.net_s += 1.5;
	assert_int_equal(signals_wait(&s, &P, 14 * S, &c, &cpu, &mem, &net),
			 SIG_EV_NET_WAIT);
	assert_int_equal(net.kind, SIG_NET_WAIT);
	assert_string_equal(signals_kind_name(net.kind), "net_wait");
	assert_true(net.window_s == 2.0);
	assert_true(fabs(net.net_wait_s - 1.5) < 1e-9);
	assert_true(fabs(net.fraction - 0.75) < 1e-9);
	c.w.net_s += 2;		/* the same episode */
	assert_int_equal(signals_wait(&s, &P, 16 * S, &c, &cpu, &mem, &net), 0);
	assert_int_equal(signals_wait(&s, &P, 18 * S, &c, &cpu, &mem, &net), 0);
	c.w.net_s += 1.2;	/* a new one after a quiet window */
	assert_int_equal(signals_wait(&s, &P, 20 * S, &c, &cpu, &mem, &net),
			 SIG_EV_NET_WAIT);
}

/* The charge reaches memory_near of the limit: one signal, and another
 * only after it fell 5 points below. */
static void test_memory(void **state)
{
	bool near = false;
	struct sig_out o;
	uint64_t lim = 1000;

	(void)state;
	assert_false(signals_memory(&near, &P, S, 899, lim, &o));
	assert_true(signals_memory(&near, &P, 2 * S, 900, lim, &o));
	assert_int_equal(o.kind, SIG_MEMORY);
	assert_int_equal(o.mem_bytes, 900);
	assert_int_equal(o.limit_bytes, 1000);
	assert_true(o.fraction == 0.9);
	assert_false(signals_memory(&near, &P, 3 * S, 990, lim, &o));
	assert_false(signals_memory(&near, &P, 4 * S, 860, lim, &o));
	assert_false(signals_memory(&near, &P, 5 * S, 950, lim, &o));
	assert_false(signals_memory(&near, &P, 6 * S, 840, lim, &o));
	assert_true(signals_memory(&near, &P, 7 * S, 905, lim, &o));
	/* no limit */
	near = false;
	assert_false(signals_memory(&near, &P, S, 900, UINT64_MAX, &o));
	assert_false(signals_memory(&near, &P, S, 900, 0, &o));
	assert_false(signals_memory(&near, &P, S, 900,
				    9223372036854771712ull, &o));
}

/* Memory files: numbers, "max", garbage. */
static void test_parse_mem(void **state)
{
	uint64_t v;
	char dir[] = "/tmp/test_signals.XXXXXX";
	char path[64];
	FILE *f;
	uint64_t mem, lim;

	(void)state;
	assert_int_equal(signals_parse_mem("123\n", 4, &v), 0);
	assert_int_equal(v, 123);
	assert_int_equal(signals_parse_mem("max\n", 4, &v), 0);
	assert_true(v == UINT64_MAX);
	assert_int_equal(signals_parse_mem("", 0, &v), -EINVAL);
	assert_int_equal(signals_parse_mem("12a", 3, &v), -EINVAL);
	assert_int_equal(signals_parse_mem("-1", 2, &v), -EINVAL);
	assert_int_equal(signals_parse_mem("99999999999999999999", 20, &v),
			 -EINVAL);
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/memory.current", dir);
	f = fopen(path, "w");
	fputs("4096\n", f);
	fclose(f);
	assert_int_equal(signals_read_memcg(dir, true, &mem, &lim), -ENOENT);
	snprintf(path, sizeof(path), "%s/memory.max", dir);
	f = fopen(path, "w");
	fputs("max\n", f);
	fclose(f);
	assert_int_equal(signals_read_memcg(dir, true, &mem, &lim), 0);
	assert_int_equal(mem, 4096);
	assert_true(lim == UINT64_MAX);
	assert_int_equal(signals_read_memcg(dir, false, &mem, &lim), -ENOENT);
	unlink(path);
	snprintf(path, sizeof(path), "%s/memory.current", dir);
	unlink(path);
	rmdir(dir);
}

/* Median and the slower decision. */
static void test_slower(void **state)
{
	double r1[] = { 3, 1, 2 }, r2[] = { 4, 1, 3, 2 }, r3[] = { 1, 1 };
	double r4[] = { 1.0, 1.2, 0.9 }, r5[] = { 1.0, 1.2, 0.9 };
	struct sig_out o;

	(void)state;
	assert_true(signals_median(r1, 3) == 2);
	assert_true(signals_median(r2, 4) == 2.5);
	/* too few runs */
	assert_false(signals_slower(&P, 10, r3, 2, &o));
	assert_int_equal(o.runs, 2);
	/* 2.1 > 2 x 1.0 */
	assert_true(signals_slower(&P, 2.1, r4, 3, &o));
	assert_true(o.median_s == 1.0);
	assert_int_equal(o.runs, 3);
	assert_true(o.factor == 2.1);
	assert_true(o.duration_s == 2.1);
	/* 2.0 is not more than 2 x 1.0 */
	assert_false(signals_slower(&P, 2.0, r5, 3, &o));
}

/* A part by name in o. */
static const struct sig_part *part_of(const struct sig_out *o,
				      const char *name)
{
	for (size_t i = 0; i < o->nparts; i++)
		if (!strcmp(o->parts[i].name, name))
			return &o->parts[i];
	fail_msg("no part %s", name);
	return NULL;
}

/* Which part of a slower run's time grew: each part against the median of
 * the earlier runs' (a run whose record has none left out). */
static void test_slower_parts(void **state)
{
	struct timesplit_in run = { .wall_s = 30, .cpu_s = 10, .blkio_s = 1,
				    .w = { .run_queue_s = 12 } };
	struct timesplit_in e[4] = {
		{ .wall_s = 14, .cpu_s = 10, .blkio_s = 2, .w = { .run_queue_s = 1 } },
		{ .wall_s = 15, .cpu_s = 11, .w = { .run_queue_s = 3 } },
		{ .wall_s = -1 },	/* an end record without usage.wall_s */
		{ .wall_s = 13, .cpu_s = 9, .w = { .run_queue_s = 2,
						    .thrashing_s = 0.5 } },
	};
	struct sig_out o = { 0 };

	(void)state;
	assert_int_equal(signals_slower_parts(&run, e, 4, &o), 0);
	assert_int_equal(o.nparts, timesplit_ncomponents() + 1);
	assert_string_equal(o.grew, "run_queue");
	/* 12 against the median of 1, 3, 2 */
	assert_true(fabs(o.grew_s - 10) < 1e-9);
	assert_true(fabs(part_of(&o, "run_queue")->median_s - 2) < 1e-9);
	assert_true(fabs(part_of(&o, "cpu")->median_s - 10) < 1e-9);
	assert_true(fabs(part_of(&o, "blkio")->median_s - 0) < 1e-9);
	/* other: 30 - 10 - 12 - 1 = 7 against 1, 1, 1.5 */
	assert_true(fabs(part_of(&o, "other")->s - 7) < 1e-9);
	assert_true(fabs(part_of(&o, "other")->median_s - 1) < 1e-9);
	assert_string_equal(part_of(&o, "run_queue")->label,
			    "waiting for a CPU");
	/* no earlier figures: no medians, nothing grew */
	assert_int_equal(signals_slower_parts(&run, e + 2, 1, &o), 0);
	assert_null(o.grew);
	assert_true(part_of(&o, "cpu")->median_s < 0);
}

/* A job of user (NULL: none) for signals_store_runs. */
static struct jt_job job_of(const char *pipeline, const char *task,
			    const char *id, const char *user)
{
	struct jt_job j = { .scheduler = "local" };

	util_strlcpy(j.pipeline, pipeline, sizeof(j.pipeline));
	util_strlcpy(j.task, task, sizeof(j.task));
	util_strlcpy(j.id, id, sizeof(j.id));
	if (user)
		util_strlcpy(j.user, user, sizeof(j.user));
	return j;
}

/* The store's earlier ends of a pipeline and task of the same user, but
 * the job's own. */
static void test_store_runs(void **state)
{
	char path[] = "/tmp/test_signals_store.XXXXXX";
	struct store *st = NULL;
	struct jt_job j;
	double runs[8];
#define REC "{\"type\":\"job\",\"schema\":1,\"host\":\"h\",\"id\":\"%d\",\"phase\":\"end\"," \
		"\"job\":{\"scheduler\":\"local\",\"id\":\"J%d\",\"pipeline\":\"%s\",\"task\":\"T\"%s}," \
		"\"start_time\":\"2026-01-01T00:00:00Z\",\"end_time\":\"2026-01-01T00:00:%02d.500000Z\"}"
	int fd = mkstemp(path);
	char buf[512];

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	unlink(path);
	assert_int_equal(store_open(path, false, &st), 0);
	/* J1-J4 no user, J5 another pipeline; J6-J8 ann's; J9-J11 bob's,
	 * quick ones under ann's names */
	for (int i = 1; i <= 11; i++) {
		int n = snprintf(buf, sizeof(buf), REC, i, i,
				 i == 5 ? "Q" : "P",
				 i < 6 ? "" : i < 9 ? ",\"user\":\"ann\"" :
				 ",\"user\":\"bob\"", i < 9 ? i : 12 - i);

		assert_int_equal(store_put_json(st, buf, (size_t)n), 0);
	}
	assert_int_equal(store_flush(st), 11);
	j = job_of("P", "T", "J4", NULL);
	assert_int_equal(signals_store_runs(path, &j, runs, NULL, 8), 3);
	/* latest first */
	assert_true(runs[0] == 3.5 && runs[1] == 2.5 && runs[2] == 1.5);
	j = job_of("P", "T", "J99", NULL);
	assert_int_equal(signals_store_runs(path, &j, runs, NULL, 2), 2);
	j = job_of("P", "X", "J99", NULL);
	assert_int_equal(signals_store_runs(path, &j, runs, NULL, 8), 0);
	/* ann's own runs only, bob's left out */
	j = job_of("P", "T", "J99", "ann");
	assert_int_equal(signals_store_runs(path, &j, runs, NULL, 8), 3);
	assert_true(runs[0] == 8.5 && runs[1] == 7.5 && runs[2] == 6.5);
	j = job_of("P", "T", "J10", "bob");
	assert_int_equal(signals_store_runs(path, &j, runs, NULL, 8), 2);
	assert_true(runs[0] == 3.5 && runs[1] == 1.5);
	store_close(st);
	unlink(path);
	j = job_of("P", "T", "J", NULL);
	assert_true(signals_store_runs("/nonexistent/x.db", &j, runs, NULL,
				       8) < 0);
}

/* Where the earlier runs' time went, from their end records' usage as the
 * agent writes it (record_job); a record without it: wall_s -1. */
static void test_store_splits(void **state)
{
	char path[] = "/tmp/test_signals_split.XXXXXX";
	struct jt_host h = { .name = "h", .boot_id = "b" };
	struct jt_jobinfo ji = { 0 };
	struct timesplit_in sp[4];
	struct store *st = NULL;
	struct jbuf b;
	double runs[4];
	int fd = mkstemp(path);
	static const char old[] = "{\"type\":\"job\",\"schema\":1,\"host\":\"h\","
		"\"id\":\"old\",\"phase\":\"end\",\"time\":\"2026-01-01T00:00:01Z\","
		"\"job\":{\"scheduler\":\"local\",\"id\":\"J0\",\"pipeline\":\"P\","
		"\"task\":\"T\"},\"start_time\":\"2026-01-01T00:00:00Z\","
		"\"end_time\":\"2026-01-01T00:00:01Z\"}";

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	unlink(path);
	jbuf_init(&b);
	assert_int_equal(store_open(path, false, &st), 0);
	assert_int_equal(store_put_json(st, old, sizeof(old) - 1), 0);
	util_strlcpy(ji.job.scheduler, "local", sizeof(ji.job.scheduler));
	util_strlcpy(ji.job.id, "J1", sizeof(ji.job.id));
	util_strlcpy(ji.job.pipeline, "P", sizeof(ji.job.pipeline));
	util_strlcpy(ji.job.task, "T", sizeof(ji.job.task));
	ji.start_ns = 1767225602ull * 1000000000ull;
	ji.end_ns = ji.start_ns + 4500000000ull;
	ji.usage = (struct jt_usage){ .cpu_s = 2.5, .processes = 3,
				      .wall_s = 7.25, .blkio_s = 0.5,
				      .w = { .run_queue_s = 1.75,
					     .reclaim_s = 0.125,
					     .thrashing_s = 0.25,
					     .swapin_s = 0.0625 } };
	record_job(&b, &h, &ji, "end", "new", NULL);
	assert_int_equal(store_put_json(st, b.buf, b.len), 0);
	assert_true(store_flush(st) > 0);
	store_close(st);
	ji.job = job_of("P", "T", "J9", NULL);
	assert_int_equal(signals_store_runs(path, &ji.job, runs, sp, 4), 2);
	/* latest first: the agent's record, then the old one */
	assert_true(fabs(runs[0] - 4.5) < 1e-9);
	assert_true(fabs(sp[0].wall_s - 7.25) < 1e-9);
	assert_true(fabs(sp[0].cpu_s - 2.5) < 1e-9);
	assert_true(fabs(sp[0].blkio_s - 0.5) < 1e-9);
	assert_true(fabs(sp[0].w.run_queue_s - 1.75) < 1e-9);
	assert_true(fabs(sp[0].w.reclaim_s + sp[0].w.thrashing_s +
			 sp[0].w.swapin_s - 0.4375) < 1e-9);
	assert_true(sp[1].wall_s < 0);
	unlink(path);
	jbuf_free(&b);
}

/* Encode s into b (reset first) and check it is JSON: the text. */
static const char *encode(struct jbuf *b, const struct jt_host *h,
			  const struct sig_out *s, const struct jt_job *job,
			  const struct jt_proc *p)
{
	const char *j;

	jbuf_reset(b);
	signals_record(b, h, s, job, NULL, p);
	j = jbuf_str(b);
	assert_true(json_valid(j));
	return j;
}

/* The records: job, process, tool and evidence of each kind. */
static void test_record(void **state)
{
	struct jt_host h = { .name = "node1",
			     .boot_id = "5f0c7e8a-3c1d-4b9e-9f2a-0123456789ab",
			     .boot_to_real_ns = 1795500000ll * 1000000000ll };
	struct jt_proc p = { .pid = 42, .start_ns = 5 * S, .comm = "cat",
			     .tool_name = "cat" };
	struct jt_job job = { .scheduler = "local", .id = "J1",
			      .pipeline = "P", .task = "T" };
	struct sig_out s = { .kind = SIG_STALL, .now_ns = 13 * S,
			     .last_progress_ns = 10 * S, .stalled_s = 3,
			     .state = "S", .wchan = "pipe_read" };
	struct jbuf b;
	const char *j;
	char id1[64];

	(void)state;
	jbuf_init(&b);
	j = encode(&b, &h, &s, &job, &p);
	assert_non_null(strstr(j, "\"kind\":\"stall\""));
	assert_non_null(strstr(j, "\"time\":\"2026-11-24T06:00:13.000000Z\""));
	assert_non_null(strstr(j, "\"id\":\"J1\""));
	assert_non_null(strstr(j, "\"pid\":42,\"comm\":\"cat\""));
	assert_non_null(strstr(j, "\"phase\":\"start\",\"stalled_s\":3,"
			       "\"last_progress\":\"2026-11-24T06:00:10.000000Z\","
			       "\"state\":\"S\",\"wchan\":\"pipe_read\",\"exited\":null"));
	memcpy(id1, strstr(j, "\"id\":\"") + 6, 36);
	s.kind = SIG_STALL_END;
	s.exited = true;
	s.now_ns = 20 * S;
	j = encode(&b, &h, &s, &job, &p);
	assert_non_null(strstr(j, "\"phase\":\"end\""));
	assert_non_null(strstr(j, "\"state\":null,\"wchan\":null,\"exited\":true"));
	/* start and end are two records */
	assert_null(strstr(j, id1));

	s = (struct sig_out){ .kind = SIG_MEMORY, .now_ns = 13 * S,
			      .mem_bytes = 950, .limit_bytes = 1000,
			      .fraction = 0.95, .mem_source = "cgroup_v1" };
	j = encode(&b, &h, &s, &job, NULL);
	assert_non_null(strstr(j, "\"kind\":\"memory_near_limit\""));
	assert_non_null(strstr(j, "\"pid\":null"));
	assert_non_null(strstr(j, "\"fraction\":0.95"));
	assert_non_null(strstr(j, "\"mem_bytes\":950,\"limit_bytes\":1000,"
			       "\"source\":\"cgroup_v1\""));

	s = (struct sig_out){ .kind = SIG_SLOWER, .now_ns = 13 * S,
			      .duration_s = 2.5, .median_s = 0.5, .runs = 3,
			      .factor = 5 };
	j = encode(&b, &h, &s, &job, NULL);
	assert_non_null(strstr(j, "\"kind\":\"slower_than_usual\""));
	assert_non_null(strstr(j, "\"duration_s\":2.5,\"median_s\":0.5,"
			       "\"runs\":3,\"factor\":5,\"parts\":null,"
			       "\"grew\":null,\"grew_s\":null"));
	s.nparts = 2;
	s.parts[0] = (struct sig_part){ .name = "cpu", .s = 1, .median_s = 0.25 };
	s.parts[1] = (struct sig_part){ .name = "run_queue", .s = 1.5,
					.median_s = -1 };
	s.grew = "cpu";
	s.grew_s = 0.75;
	j = encode(&b, &h, &s, &job, NULL);
	assert_non_null(strstr(j, "\"parts\":[{\"part\":\"cpu\",\"s\":1,"
			       "\"median_s\":0.25},{\"part\":\"run_queue\","
			       "\"s\":1.5,\"median_s\":null}],\"grew\":\"cpu\","
			       "\"grew_s\":0.75"));

	s = (struct sig_out){ .kind = SIG_IO_BOUND, .now_ns = 13 * S,
			      .window_s = 2, .blkio_delay_s = 1.5,
			      .fraction = 0.75 };
	j = encode(&b, &h, &s, &job, &p);
	assert_non_null(strstr(j, "\"kind\":\"io_bound\""));
	assert_non_null(strstr(j, "\"window_s\":2,\"blkio_delay_s\":1.5,"
			       "\"run_queue_s\":null,\"memory_wait_s\":null,"
			       "\"net_wait_s\":null,\"fraction\":0.75"));
	s = (struct sig_out){ .kind = SIG_NET_WAIT, .now_ns = 13 * S,
			      .window_s = 2, .net_wait_s = 1.25,
			      .fraction = 0.625 };
	j = encode(&b, &h, &s, &job, &p);
	assert_non_null(strstr(j, "\"kind\":\"net_wait\""));
	assert_non_null(strstr(j, "\"window_s\":2,\"blkio_delay_s\":null,"
			       "\"run_queue_s\":null,\"memory_wait_s\":null,"
			       "\"net_wait_s\":1.25,\"fraction\":0.625"));
	jbuf_free(&b);
}

/* Status: one line a kind. */
static void test_status(void **state)
{
	uint64_t n[SIG__N] = { [SIG_STALL] = 2, [SIG_STALL_END] = 1,
			       [SIG_IO_BOUND] = 3, [SIG_SLOWER] = 4,
			       [SIG_MEMORY] = 5, [SIG_CPU_STARVED] = 6,
			       [SIG_MEM_PRESSURE] = 8, [SIG_NET_WAIT] = 9 };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	signals_status(n, 7, f);
	fclose(f);
	assert_string_equal(buf,
		"signals_stall: 2 (ended 1)\n"
		"signals_io_bound: 3\n"
		"signals_slower_than_usual: 4 (checks skipped or failed: 7)\n"
		"signals_memory_near_limit: 5\n"
		"signals_cpu_starved: 6\n"
		"signals_memory_pressure: 8\n"
		"signals_net_wait: 9\n");
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stall),
		cmocka_unit_test(test_io_bound),
		cmocka_unit_test(test_wait),
		cmocka_unit_test(test_net_wait),
		cmocka_unit_test(test_memory),
		cmocka_unit_test(test_parse_mem),
		cmocka_unit_test(test_slower),
		cmocka_unit_test(test_store_runs),
		cmocka_unit_test(test_slower_parts),
		cmocka_unit_test(test_store_splits),
		cmocka_unit_test(test_record),
		cmocka_unit_test(test_status),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
