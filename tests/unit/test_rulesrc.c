// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_rulesrc.c - cmocka tests of agent/daemon/rulesrc.c without root:
 * which source a rules.source value names; a loaded bundle kept in the
 * state folder is the one found again at the next start (checked again:
 * a kept file changed, or unsigned under a key, is refused); a bundle is
 * installed once into STATE/rules/<sha256>.
 */
#include <errno.h>
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
#include "rulesrc.h"
#include "test_files.h"

static const char rule[] = "jobtrace.rule('a', function(p, d) end)\n";

/* Which source each value names; only the bundle sources have a row. */
static void test_type_of(void **state)
{
	(void)state;
	assert_int_equal(rulesrc_type_of(""), RULESRC_FOLDER);
	assert_int_equal(rulesrc_type_of("/srv/rules"), RULESRC_FOLDER);
	assert_int_equal(rulesrc_type_of("https://h/b.tar"), RULESRC_URL);
	assert_int_equal(rulesrc_type_of("http://127.0.0.1/b.tar"), RULESRC_URL);
	assert_int_equal(rulesrc_type_of("clickhouse"), RULESRC_CLICKHOUSE);
	assert_null(rulesrc_ops_of(RULESRC_FOLDER));
	assert_non_null(rulesrc_ops_of(RULESRC_URL)->fetch);
	assert_string_equal(rulesrc_ops_of(RULESRC_CLICKHOUSE)->name, "clickhouse");
}

/* Kept, found again, installed once; a changed or unsigned kept bundle
 * refused at start. */
static void test_last_good(void **state)
{
	char top[] = "/tmp/jt-test-rulesrc.XXXXXX", rules[128], err[512] = "";
	char path[PATH_MAX], *text;
	struct rulesrc_bundle b, b2;
	struct rulebundle rb;
	struct jt_config cfg;
	struct jbuf t;
	struct stat st;

	(void)state;
	assert_non_null(mkdtemp(top));
	snprintf(rules, sizeof(rules), "%s/src", top);
	assert_int_equal(mkdir(rules, 0700), 0);
	test_write_file(rules, "10-a.lua", rule);
	assert_int_equal(config_defaults(&cfg), 0);
	free(cfg.state_dir);
	cfg.state_dir = strdup(top);
	snprintf(path, sizeof(path), "%s/rules", top);
	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_equal(rulesrc_last_good(&cfg, &b, err, sizeof(err)), -ENOENT);

	jbuf_init(&t);
	assert_int_equal(rulebundle_make(rules, "k1", NULL, &t, err, sizeof(err)), 0);
	assert_int_equal(rulebundle_open(t.buf, t.len, NULL, &rb, err, sizeof(err)), 0);
	assert_int_equal(rulesrc_keep(top, &t, "\"etag-1\""), 0);
	assert_int_equal(rulesrc_last_good(&cfg, &b, err, sizeof(err)), 0);
	assert_string_equal(b.version, "k1");
	assert_string_equal(b.sha256, rb.sha256);
	assert_string_equal(b.tag, "\"etag-1\"");
	snprintf(path, sizeof(path), "%s/rules/%s", top, rb.sha256);
	assert_string_equal(b.dir, path);
	snprintf(path, sizeof(path), "%s/10-a.lua", b.dir);
	text = test_read_file(path, NULL);
	assert_string_equal(text, rule);
	free(text);
	/* installed once: found again, not written again */
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(rulesrc_last_good(&cfg, &b2, err, sizeof(err)), 0);
	assert_string_equal(b2.dir, b.dir);

	/* under a key, the unsigned kept bundle is refused */
	free(cfg.rules_public_key);
	cfg.rules_public_key = strdup("/nonexistent/pub.pem");
	assert_int_not_equal(rulesrc_last_good(&cfg, &b2, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "current.tar: bundle is not signed"));
	free(cfg.rules_public_key);
	cfg.rules_public_key = strdup("");

	/* a kept file changed: refused, naming the line */
	t.buf[512 * 3 + 20] ^= 1;	/* in 10-a.lua's data (after MANIFEST, its header) */
	assert_int_equal(rulesrc_keep(top, &t, "x"), 0);
	assert_int_not_equal(rulesrc_last_good(&cfg, &b2, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "MANIFEST line 3: sha256 of 10-a.lua does not match"));

	rulebundle_free(&rb);
	jbuf_free(&t);
	config_free(&cfg);
	test_remove_tree(top);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_type_of),
		cmocka_unit_test(test_last_good),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
