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
#include <sys/stat.h>
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
 * rules.inotify = false (the default) and a poll interval of 2 s, on a
 * local file system (/tmp): no watch, polled every RULESCTL_LOCAL_POLL_NS;
 * an edit in place (the same name, another size and time: what another
 * node's save looks like on NFS) is seen at the next poll and loaded once
 * it settles; a poll that finds nothing new loads nothing.
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
	assert_false(cfg.rules_inotify);	/* the default */
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

	assert_int_equal(rc.poll_ns, RULESCTL_LOCAL_POLL_NS);
	assert_true(RULESCTL_LOCAL_POLL_NS + RULESCTL_SETTLE_NS < 1000000000ull);

	rulesctl_tick(&rc, t0);			/* nothing changed */
	assert_int_equal(rc.reload_at, 0);
	assert_int_equal(rc.next_poll, t0 + RULESCTL_LOCAL_POLL_NS);
	t0 = rc.next_poll;
	test_write_file(dir, "10-x.lua", "-- edited on another node\n" "jobtrace.rule('x', function(p, d) end)\n");
	rulesctl_tick(&rc, t0 - 1);		/* before the next poll */
	assert_int_equal(rc.reload_at, 0);
	rulesctl_tick(&rc, t0);
	assert_int_equal(rc.reload_at, t0 + RULESCTL_SETTLE_NS);
	/* still being written when the settle time is up: not loaded
	 * cut short, the settle time again from then */
	test_write_file(dir, "10-x.lua", "-- edited on another node\n");
	rulesctl_tick(&rc, t0 + RULESCTL_SETTLE_NS);
	assert_int_equal(stats(r).reloads_ok, ok);
	assert_int_equal(rc.reload_at, t0 + 2 * RULESCTL_SETTLE_NS);
	test_write_file(dir, "10-x.lua", "-- edited on another node\n" "jobtrace.rule('x', function(p, d) end)\n");
	rulesctl_tick(&rc, t0 + 2 * RULESCTL_SETTLE_NS);	/* a poll sees it */
	assert_int_equal(stats(r).reloads_ok, ok);
	assert_int_equal(rc.reload_at, t0 + 3 * RULESCTL_SETTLE_NS);
	rulesctl_tick(&rc, t0 + 3 * RULESCTL_SETTLE_NS);	/* unchanged since */
	assert_int_equal(stats(r).reloads_ok, ok + 1);
	assert_int_equal(stats(r).selftests, 0);	/* the edited file's */

	rulesctl_fini(&rc);
	rules_free(r);
	config_free(&cfg);
	test_remove_tree(dir);
}

/*
 * Which folders are polled four times a second: a local file system's;
 * a shared one's (NFS, Lustre, GPFS, CIFS, Ceph, FUSE) and one of a type
 * not named (procfs here, a real folder of this kernel) every
 * poll_interval only; with rules.inotify = true a local folder is watched
 * and polled every poll_interval.
 */
static void test_poll_where(void **state)
{
	static const long shared[] = { 0x6969, 0x0BD00BD0, 0x47504653,
				       0xFF534D42, 0x00C36400, 0x65735546 };
	static const long local[] = { 0xEF53, 0x58465342, 0x9123683E,
				      0x01021994, 0x858458F6, 0x794C7630,
				      0x2FC12FC1, 0xF2F52010, 0x73717368,
				      0x3153464A };
	struct rules_limits lim = { 16u << 20, 200000, 0 };
	char dir[] = "/tmp/jt-test-rulesctl.XXXXXX";
	struct jt_config cfg;
	struct rulesctl rc;
	struct rules *r;

	(void)state;
	for (size_t i = 0; i < sizeof(shared) / sizeof(shared[0]); i++)
		assert_false(rulesctl_fs_local(shared[i]));
	for (size_t i = 0; i < sizeof(local) / sizeof(local[0]); i++)
		assert_true(rulesctl_fs_local(local[i]));

	assert_non_null(mkdtemp(dir));
	test_write_file(dir, "10-x.lua", good);
	assert_int_equal(config_defaults(&cfg), 0);
	cfg.rules_poll_ms = 2000;
	assert_int_equal(rules_new(&lim, &r), 0);

	free(cfg.rules_source);
	cfg.rules_source = strdup("/proc/self");	/* not local, no .lua */
	rulesctl_init(&rc, r, "/nonexistent");
	rulesctl_source(&rc, &cfg);
	rulesctl_start(&rc);
	assert_int_equal(rc.fd, -1);
	assert_int_equal(rc.poll_ns, 2000000000ull);
	rulesctl_fini(&rc);

	/* a folder not there at start: poll_interval, until it is made on
	 * a local file system (asked again at each poll) */
	free(cfg.rules_source);
	if (asprintf(&cfg.rules_source, "%s/later", dir) < 0)
		fail();
	rulesctl_init(&rc, r, "/nonexistent");
	rulesctl_source(&rc, &cfg);
	rulesctl_start(&rc);
	assert_int_equal(rc.fd, -1);
	assert_int_equal(rc.poll_ns, 2000000000ull);
	assert_int_equal(mkdir(cfg.rules_source, 0755), 0);
	rulesctl_tick(&rc, rc.next_poll);
	assert_int_equal(rc.poll_ns, RULESCTL_LOCAL_POLL_NS);
	rulesctl_fini(&rc);

	free(cfg.rules_source);
	cfg.rules_source = strdup(dir);
	cfg.rules_inotify = true;
	rulesctl_init(&rc, r, "/nonexistent");
	rulesctl_source(&rc, &cfg);
	rulesctl_start(&rc);
	assert_false(rc.failing);
	assert_true(rc.fd >= 0);		/* watched */
	assert_int_equal(rc.poll_ns, 2000000000ull);
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
		cmocka_unit_test(test_poll_where),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
