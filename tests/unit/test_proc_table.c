// SPDX-License-Identifier: GPL-2.0-or-later
/* test_proc_table.c - cmocka tests of the process table. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "proc_table.h"

/* A new entry is zeroed, a second get returns the same one. */
static void test_get_lookup(void **state)
{
	struct proc_table *t;
	struct jt_proc *p, *q;
	int created;

	assert_int_equal(proc_table_new(&t), 0);
	p = proc_table_get(t, 100, 5000, &created);
	assert_non_null(p);
	assert_int_equal(created, 1);
	assert_int_equal(p->pid, 100);
	assert_true(p->start_ns == 5000);
	assert_null(p->exe);
	q = proc_table_get(t, 100, 5000, &created);
	assert_ptr_equal(p, q);
	assert_int_equal(created, 0);
	assert_ptr_equal(proc_table_lookup(t, 100, 5000), p);
	assert_null(proc_table_lookup(t, 100, 5001));
	assert_null(proc_table_lookup(t, 101, 5000));
	assert_int_equal(proc_table_count(t), 1);
	proc_table_free(t);
}

/* A reused pid with a new start time is a different process. */
static void test_pid_reuse(void **state)
{
	struct proc_table *t;
	struct jt_proc *old, *new;

	assert_int_equal(proc_table_new(&t), 0);
	old = proc_table_get(t, 4242, 1000, NULL);
	new = proc_table_get(t, 4242, 9000, NULL);
	assert_ptr_not_equal(old, new);
	assert_int_equal(proc_table_count(t), 2);
	assert_ptr_equal(proc_table_lookup(t, 4242, 9000), new);
	proc_table_remove(t, new);
	assert_ptr_equal(proc_table_lookup(t, 4242, 1000), old);
	assert_null(proc_table_lookup(t, 4242, 9000));
	assert_int_equal(proc_table_count(t), 1);
	proc_table_free(t);
}

/* Parents are found by (ppid, parent start), not by ppid alone. */
static void test_parent_link(void **state)
{
	struct proc_table *t;
	struct jt_proc *parent, *stale, *child;

	assert_int_equal(proc_table_new(&t), 0);
	stale = proc_table_get(t, 10, 100, NULL);
	parent = proc_table_get(t, 10, 200, NULL);
	child = proc_table_get(t, 11, 300, NULL);
	child->ppid = 10;
	child->parent_start_ns = 200;
	assert_ptr_equal(proc_table_parent(t, child), parent);
	child->parent_start_ns = 100;
	assert_ptr_equal(proc_table_parent(t, child), stale);
	child->parent_start_ns = 150;
	assert_null(proc_table_parent(t, child));
	child->ppid = 0;
	assert_null(proc_table_parent(t, child));
	proc_table_free(t);
}

/* Strings are owned by the entry and freed with it. */
static void test_strings(void **state)
{
	struct proc_table *t;
	struct jt_proc *p;
	const char argv[] = "ls\0-l\0/tmp";

	assert_int_equal(proc_table_new(&t), 0);
	p = proc_table_get(t, 1, 1, NULL);
	assert_int_equal(proc_set_str(&p->exe, "/bin/ls", 7), 0);
	assert_int_equal(proc_set_str(&p->exe, "/usr/bin/ls", 11), 0);
	assert_string_equal(p->exe, "/usr/bin/ls");
	assert_int_equal(proc_set_str(&p->argv, argv, sizeof(argv)), 0);
	p->argv_len = sizeof(argv);
	assert_memory_equal(p->argv, argv, sizeof(argv));
	proc_table_remove(t, p);	/* valgrind/ASan check the frees */
	assert_int_equal(proc_table_count(t), 0);
	proc_table_free(t);
}

/* Count entries and remove odd pids while iterating. */
static void drop_odd(struct jt_proc *p, void *arg)
{
	struct proc_table *t = arg;

	if (p->pid & 1)
		proc_table_remove(t, p);
}

/* Many entries: growth keeps every entry reachable; removal frees all. */
static void test_many_and_evict(void **state)
{
	struct proc_table *t;
	const uint32_t n = 200000;

	assert_int_equal(proc_table_new(&t), 0);
	for (uint32_t i = 1; i <= n; i++) {
		struct jt_proc *p = proc_table_get(t, i, (uint64_t)i * 7, NULL);

		assert_non_null(p);
		proc_set_str(&p->exe, "/bin/true", 9);
	}
	assert_int_equal(proc_table_count(t), n);
	for (uint32_t i = 1; i <= n; i += 997)
		assert_non_null(proc_table_lookup(t, i, (uint64_t)i * 7));
	proc_table_foreach(t, drop_odd, t);
	assert_int_equal(proc_table_count(t), n / 2);
	assert_null(proc_table_lookup(t, 3, 21));
	assert_non_null(proc_table_lookup(t, 4, 28));
	/* exited processes leave: the table returns to empty */
	for (uint32_t i = 2; i <= n; i += 2)
		proc_table_remove(t, proc_table_lookup(t, i, (uint64_t)i * 7));
	assert_int_equal(proc_table_count(t), 0);
	proc_table_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_get_lookup),
		cmocka_unit_test(test_pid_reuse),
		cmocka_unit_test(test_parent_link),
		cmocka_unit_test(test_strings),
		cmocka_unit_test(test_many_and_evict),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
