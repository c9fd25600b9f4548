// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_timesplit.c - cmocka tests of agent/core/timesplit.c: a wall time
 * split into its components and the rest, against sums worked out by hand.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "timesplit.h"

#define NEAR(a, b) assert_true(fabs((a) - (b)) < 1e-9)

/* The part of ts called name, failing when there is none. */
static const struct timesplit_part *part(const struct timesplit *ts,
					 const char *name)
{
	for (size_t i = 0; i < ts->n; i++)
		if (!strcmp(ts->part[i].name, name))
			return &ts->part[i];
	fail_msg("no part %s", name);
	return NULL;
}

/* Each component, memory as reclaim + thrashing + swap-in (compaction
 * left out, as memory_pressure counts it), the rest last. */
static void test_split(void **state)
{
	struct timesplit_in in = {
		.wall_s = 30, .cpu_s = 6, .blkio_s = 1.5,
		.w = { .run_queue_s = 4, .reclaim_s = 0.5, .thrashing_s = 0.75,
		       .swapin_s = 0.125, .compact_s = 7 },
	};
	struct timesplit ts;
	double sum = 0;

	(void)state;
	timesplit_compute(&in, &ts);
	assert_int_equal(ts.n, timesplit_ncomponents() + 1);
	NEAR(ts.wall_s, 30);
	NEAR(part(&ts, "cpu")->s, 6);
	NEAR(part(&ts, "cpu")->pct, 20);
	NEAR(part(&ts, "run_queue")->s, 4);
	assert_string_equal(part(&ts, "run_queue")->label,
			    "waiting for a CPU");
	NEAR(part(&ts, "blkio")->s, 1.5);
	NEAR(part(&ts, "memory")->s, 1.375);
	NEAR(part(&ts, "other")->s, 30 - 6 - 4 - 1.5 - 1.375);
	assert_string_equal(ts.part[ts.n - 1].name, TIMESPLIT_OTHER);
	for (size_t i = 0; i < ts.n; i++)
		sum += ts.part[i].pct;
	NEAR(sum, 100);
	for (size_t i = 0; i < timesplit_ncomponents(); i++)
		NEAR(timesplit_component(&in, i), ts.part[i].s);
	/* by name, as memory_pressure reads its figure; the rest and an
	 * unknown name are 0 */
	NEAR(timesplit_component_named(&in, "memory"), 1.375);
	NEAR(timesplit_component_named(&in, "blkio"), 1.5);
	NEAR(timesplit_component_named(&in, TIMESPLIT_OTHER), 0);
	NEAR(timesplit_component_named(&in, "nosuch"), 0);
	assert_null(timesplit_label_of("nosuch"));
	assert_string_equal(timesplit_label_of("memory"), "memory waits");
	assert_string_equal(timesplit_label_of(TIMESPLIT_OTHER), "other");
}

/* More waits than wall (memory waits can hold CPU): the rest is 0, never
 * below; no wall: every percent 0; a negative figure counts as 0. */
static void test_edges(void **state)
{
	struct timesplit_in in = { .wall_s = 2, .cpu_s = 1.5,
				   .w = { .run_queue_s = 1 } };
	struct timesplit ts;

	(void)state;
	timesplit_compute(&in, &ts);
	NEAR(part(&ts, "other")->s, 0);
	NEAR(part(&ts, "run_queue")->pct, 50);
	in = (struct timesplit_in){ .cpu_s = 1, .blkio_s = -3 };
	timesplit_compute(&in, &ts);
	NEAR(ts.wall_s, 0);
	NEAR(part(&ts, "blkio")->s, 0);
	for (size_t i = 0; i < ts.n; i++)
		NEAR(ts.part[i].pct, 0);
	assert_string_equal(timesplit_name(timesplit_ncomponents()), "other");
}

/* Waits added member by member. */
static void test_add(void **state)
{
	struct jt_waits a = { .run_queue_s = 1, .nvcsw = 2, .compact_s = 1 };
	struct jt_waits b = { .run_queue_s = 0.5, .reclaim_s = 0.25,
			      .thrashing_s = 1, .swapin_s = 2, .compact_s = 3,
			      .nvcsw = 5, .nivcsw = 7 };

	(void)state;
	timesplit_waits_add(&a, &b);
	NEAR(a.run_queue_s, 1.5);
	NEAR(a.reclaim_s, 0.25);
	NEAR(a.thrashing_s, 1);
	NEAR(a.swapin_s, 2);
	NEAR(a.compact_s, 4);
	assert_int_equal(a.nvcsw, 7);
	assert_int_equal(a.nivcsw, 7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_split),
		cmocka_unit_test(test_edges),
		cmocka_unit_test(test_add),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
