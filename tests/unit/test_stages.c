// SPDX-License-Identifier: GPL-2.0-or-later
/* test_stages.c - unit tests for agent/daemon/collect/stages.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "stages.h"
#include "util.h"

/* Stay in the current stage for at least ns of wall time. */
static void spin(uint64_t ns)
{
	uint64_t end = util_now_ns(CLOCK_MONOTONIC) + ns;

	while (util_now_ns(CLOCK_MONOTONIC) < end)
		;
}

/* Nested stages: the inner one's time is not the outer one's. */
static void test_nesting(void **state)
{
	enum stage outer, inner;
	uint64_t t0, t1;

	(void)state;
	stages_init();
	t0 = util_now_ns(CLOCK_MONOTONIC);
	outer = stages_enter(STAGE_TRACK);
	spin(10000000);
	inner = stages_enter(STAGE_CLASSIFY);
	spin(20000000);
	stages_leave(inner);
	spin(10000000);
	stages_leave(outer);
	t1 = util_now_ns(CLOCK_MONOTONIC);

	assert_int_equal(outer, STAGE_IDLE);
	assert_int_equal(inner, STAGE_TRACK);
	assert_int_equal(stages_main.cur, STAGE_IDLE);
	assert_int_equal(stages_main.count[STAGE_TRACK], 1);
	assert_int_equal(stages_main.count[STAGE_CLASSIFY], 1);
	assert_int_equal(stages_main.count[STAGE_DECODE], 0);
	/* at least the spins; at most the wall time around them (a
	 * preempted spin only lengthens both) */
	assert_true(stages_ns(STAGE_CLASSIFY) >= 19000000);
	assert_true(stages_ns(STAGE_TRACK) >= 19000000);
	assert_true(stages_ns(STAGE_TRACK) + stages_ns(STAGE_CLASSIFY) <=
		    t1 - t0 + 1000000);
	assert_int_equal(stages_ns(STAGE_SPOOL), 0);
}

/* Status has a _ns and a _count line for every stage and both CPU lines. */
static void test_status(void **state)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	enum stage prev;

	(void)state;
	stages_init();
	prev = stages_enter(STAGE_SPOOL);
	stages_leave(prev);
	stages_status(f);
	fclose(f);
	assert_non_null(strstr(text, "stage.clock: "));
	assert_non_null(strstr(text, "\nstage.spool_count: 1\n"));
	assert_non_null(strstr(text, "\nstage.decode_count: 0\n"));
	for (const char *k = "decode\0track\0classify\0encode\0spool\0sample\0";
	     *k; k += strlen(k) + 1) {
		char key[64];

		snprintf(key, sizeof(key), "\nstage.%s_ns: ", k);
		assert_non_null(strstr(text, key));
	}
	assert_non_null(strstr(text, "\ncpu_ns: "));
	assert_non_null(strstr(text, "\ncpu_main_ns: "));
	assert_null(strstr(text, "idle"));
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nesting),
		cmocka_unit_test(test_status),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
