// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_ratelimit.c - the users' budgets of the agent's answers: a burst,
 * then the rate; an answer's size costs; the budget of all users; a full
 * table of users in debt.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "ratelimit.h"

#define SEC 1000000000ull
#define T0 (1000 * SEC)

/* Answers of `bytes` to uid admitted from t on, as fast as allowed, until
 * the first refusal; returns how many, with the wait named then. */
static int drain(struct rate_limiter *r, uid_t uid, size_t bytes, uint64_t t,
		 double *wait)
{
	int n = 0, all;

	while (rate_admit(r, uid, t, wait, &all) == 0) {
		rate_charge(r, uid, bytes, t);
		n++;
	}
	return n;
}

/* A user gets the burst at once, then one unit every 1/rate s. */
static void test_burst_then_rate(void **state)
{
	struct rate_limiter r;
	double wait;
	int all;

	(void)state;
	rate_init(&r);
	assert_int_equal(drain(&r, 1001, 100, T0, &wait), (int)RATE_USER_BURST);
	assert_true(wait > 0.099 && wait < 0.101);
	/* not before the wait it was told */
	assert_int_equal(rate_admit(&r, 1001, T0 + SEC / 20, &wait, &all),
			 -EBUSY);
	assert_int_equal(all, 0);
	assert_int_equal(rate_admit(&r, 1001, T0 + SEC / 10, &wait, &all), 0);
	/* another user is not touched */
	assert_int_equal(rate_admit(&r, 1002, T0, &wait, &all), 0);
	/* a second later: the rate's 10 */
	assert_int_equal(drain(&r, 1001, 100, T0 + SEC / 10 + SEC, &wait),
			 (int)RATE_USER_UNITS_S + 1);
}

/* Large answers cost by their size; the debt is paid back first. */
static void test_size_costs(void **state)
{
	struct rate_limiter r;
	double wait;
	int all;

	(void)state;
	rate_init(&r);
	/* 1 + 30 units: admitted with 20 left, then 11 owed */
	assert_int_equal(rate_admit(&r, 1001, T0, &wait, &all), 0);
	rate_charge(&r, 1001, 30 * RATE_UNIT_BYTES, T0);
	assert_int_equal(rate_admit(&r, 1001, T0, &wait, &all), -EBUSY);
	assert_true(wait > 1.199 && wait < 1.201);	/* 12 units at 10/s */
	assert_int_equal(rate_admit(&r, 1001, T0 + SEC, &wait, &all), -EBUSY);
	assert_int_equal(rate_admit(&r, 1001, T0 + 12 * SEC / 10, &wait, &all),
			 0);
}

/* Many users at once run out of the budget of all. */
static void test_all_users(void **state)
{
	struct rate_limiter r;
	double wait;
	int all, n = 0;

	(void)state;
	rate_init(&r);
	for (uid_t u = 2000; u < 2010; u++)
		n += drain(&r, u, 100, T0, &wait);
	assert_int_equal(n, (int)RATE_ALL_BURST);
	assert_int_equal(rate_admit(&r, 2009, T0, &wait, &all), -EBUSY);
	assert_int_equal(all, 1);
	assert_true(wait > 0.024 && wait < 0.026);	/* 1 unit at 40/s */
}

/* More users in debt than slots: each new one still gets a slot, and
 * the budget of all still holds. */
static void test_full_table(void **state)
{
	struct rate_limiter r;
	double wait;
	int all;

	(void)state;
	rate_init(&r);
	for (uid_t u = 3000; u < 3000 + 2 * RATE_USERS; u++) {
		uint64_t t = T0 + (uint64_t)(u - 3000) * SEC;

		assert_int_equal(rate_admit(&r, u, t, &wait, &all), 0);
		rate_charge(&r, u, 25 * RATE_UNIT_BYTES, t);
		assert_int_equal(rate_admit(&r, u, t, &wait, &all), -EBUSY);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_burst_then_rate),
		cmocka_unit_test(test_size_costs),
		cmocka_unit_test(test_all_users),
		cmocka_unit_test(test_full_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
