// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_rulesctl.c - cmocka tests of agent/daemon/rulesctl.c without root:
 * a rules folder that does not load at start leaves the built-in rules in
 * force; a saved fix is seen through the folder's watch and loaded once
 * the changes settle; a broken save keeps the rules in force and says so.
 */
#include <poll.h>
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
#include "rules.h"
#include "rulesctl.h"
#include "test_files.h"

static const char good[] =
	"jobtrace.rule('catalogue', function(p, d)\n"
	"  if d.tool == 'bwa' then d.category = 'aligner' end\n"
	"end)\n"
	"jobtrace.selftest{ argv = {'bwa', 'mem'}, expect = { tool = 'bwa', category = 'aligner' } }\n";

/* Wait (at most 5 s) for the folder's watch to be readable, then hand
 * its news over at now. */
static void changed(struct rulesctl *rc, uint64_t now)
{
	struct pollfd pfd = { .fd = rc->fd, .events = POLLIN };

	assert_int_equal(poll(&pfd, 1, 5000), 1);
	rulesctl_changed(rc, now);
}

/* The rules' statistics now. */
static struct rules_stats stats(struct rules *r)
{
	struct rules_stats st;

	rules_get_stats(r, &st);
	return st;
}

/*
 * A broken folder at start: the built-in rules; a fix saved is loaded
 * RULESCTL_SETTLE_NS after its change, not before; a broken save keeps
 * the fix in force, failing; an editor's swap file is no change.
 */
static void test_reload(void **state)
{
	struct rules_limits lim = { 16u << 20, 200000, 0 };
	char dir[] = "/tmp/jt-test-rulesctl.XXXXXX", err[512];
	struct rulesctl rc;
	struct rules *r;

	(void)state;
	assert_non_null(mkdtemp(dir));
	test_write_file(dir, "10-x.lua", "this is not lua (\n");
	assert_int_equal(rules_new(&lim, &r), 0);
	rulesctl_init(&rc, r, dir);
	rulesctl_start(&rc);
	assert_true(rc.failing);
	assert_true(stats(r).builtin);
	assert_true(stats(r).files > 0);
	assert_true(rc.fd >= 0);

	test_write_file(dir, "10-x.lua", good);
	changed(&rc, 1000000000ull);
	assert_int_equal(rc.reload_at, 1000000000ull + RULESCTL_SETTLE_NS);
	rulesctl_tick(&rc, 1000000000ull + RULESCTL_SETTLE_NS - 1);
	assert_true(stats(r).builtin);		/* not yet */
	rulesctl_tick(&rc, 1000000000ull + RULESCTL_SETTLE_NS);
	assert_false(rc.failing);
	assert_false(stats(r).builtin);
	assert_int_equal(stats(r).files, 1);
	assert_string_equal(stats(r).dir, dir);
	assert_int_equal(rc.reload_at, 0);

	test_write_file(dir, ".10-x.lua.swp", "swap");
	changed(&rc, 2000000000ull);
	assert_int_equal(rc.reload_at, 0);

	test_write_file(dir, "20-y.lua", "jobtrace.rule(\n");
	assert_int_not_equal(rulesctl_reload(&rc, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "20-y.lua"));
	assert_true(rc.failing);
	assert_false(stats(r).builtin);
	assert_int_equal(stats(r).files, 1);	/* the fix stays */

	rulesctl_fini(&rc);
	assert_int_equal(rc.fd, -1);
	rules_free(r);
	test_remove_tree(dir);
}

/*
 * rules.inotify = false and a poll interval: no watch; an edit in place
 * (the same name, another size and time: what another node's save looks
 * like on NFS) is seen at the next poll and loaded once it settles; a
 * poll that finds nothing new loads nothing.
 */
static void test_poll(void **state)
{
	struct rules_limits lim = { 16u << 20, 200000, 0 };
	char dir[] = "/tmp/jt-test-rulesctl.XXXXXX";
	struct jt_config cfg;
	struct rulesctl rc;
	struct rules *r;
	uint64_t t0, ok;

	(void)state;
	assert_non_null(mkdtemp(dir));
	test_write_file(dir, "10-x.lua", good);
	assert_int_equal(config_defaults(&cfg), 0);
	free(cfg.rules_source);
	cfg.rules_source = strdup(dir);
	cfg.rules_inotify = false;
	cfg.rules_poll_ms = 2000;
	assert_int_equal(rules_new(&lim, &r), 0);
	rulesctl_init(&rc, r, "/nonexistent");
	rulesctl_source(&rc, &cfg);
	assert_string_equal(rc.dir, dir);	/* rules.source, not rules_dir */
	rulesctl_start(&rc);
	assert_false(rc.failing);
	assert_int_equal(rc.fd, -1);		/* polled only */
	ok = stats(r).reloads_ok;
	t0 = rc.next_poll;
	assert_true(t0 > 0);

	rulesctl_tick(&rc, t0);			/* nothing changed */
	assert_int_equal(rc.reload_at, 0);
	assert_int_equal(rc.next_poll, t0 + 2000000000ull);
	test_write_file(dir, "10-x.lua", "-- edited on another node\n" "jobtrace.rule('x', function(p, d) end)\n");
	rulesctl_tick(&rc, t0 + 1999999999ull);	/* before the next poll */
	assert_int_equal(rc.reload_at, 0);
	rulesctl_tick(&rc, t0 + 2000000000ull);
	assert_int_equal(rc.reload_at, t0 + 2000000000ull + RULESCTL_SETTLE_NS);
	rulesctl_tick(&rc, t0 + 2000000000ull + RULESCTL_SETTLE_NS);
	assert_int_equal(stats(r).reloads_ok, ok + 1);
	assert_int_equal(stats(r).selftests, 0);	/* the edited file's */

	rulesctl_fini(&rc);
	rules_free(r);
	config_free(&cfg);
	test_remove_tree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reload),
		cmocka_unit_test(test_poll),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
