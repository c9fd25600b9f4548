// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_query_server.c - the agent finds the jobtrace command that answers
 * a user's report: beside it, in ../bin, or in the configured bindir; one
 * that root should not run (writable by others, not a file, not
 * executable, in a folder others can change) is refused, and none at all
 * is an error that names where it looked.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "qcmd.h"
#include "query_server.h"

/* A scratch tree: D/sbin (the agent's folder), D/bin, D/usr/bin. */
struct tree {
	char d[64], sbin[96], bin[96], usrbin[96], self[128];
};

/* Make the scratch tree. */
static int setup(void **state)
{
	struct tree *t = calloc(1, sizeof(*t));

	assert_non_null(t);
	snprintf(t->d, sizeof(t->d), "/tmp/test_query_server.XXXXXX");
	assert_non_null(mkdtemp(t->d));
	chmod(t->d, 0755);
	snprintf(t->sbin, sizeof(t->sbin), "%s/sbin", t->d);
	snprintf(t->bin, sizeof(t->bin), "%s/bin", t->d);
	snprintf(t->usrbin, sizeof(t->usrbin), "%s/usr", t->d);
	assert_int_equal(mkdir(t->sbin, 0755), 0);
	assert_int_equal(mkdir(t->bin, 0755), 0);
	assert_int_equal(mkdir(t->usrbin, 0755), 0);
	strcat(t->usrbin, "/bin");
	assert_int_equal(mkdir(t->usrbin, 0755), 0);
	snprintf(t->self, sizeof(t->self), "%s/jobtraced", t->sbin);
	*state = t;
	return 0;
}

/* Remove the scratch tree. */
static int teardown(void **state)
{
	struct tree *t = *state;
	char cmd[160];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", t->d);
	assert_int_equal(system(cmd), 0);
	free(t);
	return 0;
}

/* Put a file jobtrace of mode in dir. */
static void put(const char *dir, mode_t mode)
{
	char path[160];
	FILE *f;

	snprintf(path, sizeof(path), "%s/jobtrace", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("#!/bin/sh\n", f);
	fclose(f);
	assert_int_equal(chmod(path, mode), 0);
}

/* Remove dir's jobtrace. */
static void drop(const char *dir)
{
	char path[160];

	snprintf(path, sizeof(path), "%s/jobtrace", dir);
	unlink(path);
}

/* Find; the status, the path or the message in out. */
static int find(struct tree *t, char *out, size_t len)
{
	char why[1024];
	int err = query_server_find_cli(t->self, t->usrbin, out, len, why,
					sizeof(why));

	if (err)
		snprintf(out, len, "%s", why);
	return err;
}

/* Beside the agent first, then ../bin, then bindir. */
static void test_found(void **state)
{
	struct tree *t = *state;
	char out[1024], want[256];

	put(t->usrbin, 0755);
	assert_int_equal(find(t, out, sizeof(out)), 0);
	snprintf(want, sizeof(want), "%s/jobtrace", t->usrbin);
	assert_string_equal(out, want);
	put(t->bin, 0755);
	assert_int_equal(find(t, out, sizeof(out)), 0);
	snprintf(want, sizeof(want), "%s/jobtrace", t->bin);
	assert_string_equal(out, want);
	put(t->sbin, 0755);
	assert_int_equal(find(t, out, sizeof(out)), 0);
	snprintf(want, sizeof(want), "%s/jobtrace", t->sbin);
	assert_string_equal(out, want);
	drop(t->sbin);
	drop(t->bin);
	drop(t->usrbin);
}

/* None: the message names every place and says what to do. */
static void test_missing(void **state)
{
	struct tree *t = *state;
	char out[1024], want[256];

	assert_int_equal(find(t, out, sizeof(out)), -ENOENT);
	snprintf(want, sizeof(want), "no jobtrace beside %s (%s/jobtrace, %s/"
		 "../bin/jobtrace) nor in %s: install it with the agent",
		 t->self, t->sbin, t->sbin, t->usrbin);
	assert_string_equal(out, want);
}

/* What root should not run is refused, not skipped for the next. */
static void test_refused(void **state)
{
	struct tree *t = *state;
	char out[1024], path[160];

	snprintf(path, sizeof(path), "%s/jobtrace", t->sbin);
	put(t->usrbin, 0755);		/* a good one further on */
	put(t->sbin, 0775);
	assert_int_equal(find(t, out, sizeof(out)), -EPERM);
	assert_non_null(strstr(out, path));
	assert_non_null(strstr(out, "mode 0775"));
	put(t->sbin, 0757);
	assert_int_equal(find(t, out, sizeof(out)), -EPERM);
	put(t->sbin, 0644);
	assert_int_equal(find(t, out, sizeof(out)), -EPERM);
	assert_non_null(strstr(out, "not an executable file"));
	drop(t->sbin);
	assert_int_equal(mkdir(path, 0755), 0);
	assert_int_equal(find(t, out, sizeof(out)), -EPERM);
	assert_non_null(strstr(out, "not an executable file"));
	rmdir(path);
	/* a folder others may change: they could swap the program */
	put(t->sbin, 0755);
	assert_int_equal(chmod(t->sbin, 0777), 0);
	assert_int_equal(find(t, out, sizeof(out)), -EPERM);
	assert_non_null(strstr(out, t->sbin));
	assert_int_equal(chmod(t->sbin, 0755), 0);
	assert_int_equal(find(t, out, sizeof(out)), 0);
	drop(t->sbin);
	drop(t->usrbin);
}

/* The agent passes on exactly the requests the command table answers. */
static void test_commands(void **state)
{
	static const char *const cmds[] = QUERY_COMMANDS;
	size_t n = 0;

	(void)state;
	for (; cmds[n]; n++) {
		assert_true(n < qcmd_count);
		assert_string_equal(cmds[n], qcmd_table[n].name);
		assert_true(query_server_takes(qcmd_table[n].name));
	}
	assert_int_equal(n, qcmd_count);
	assert_false(query_server_takes("status"));
	assert_false(query_server_takes("job-start"));
	assert_false(query_server_takes("reports"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_found),
		cmocka_unit_test(test_missing),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_commands),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
