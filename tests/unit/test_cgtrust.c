// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_cgtrust.c - a cgroup folder names a job only when root made it
 * (cgtrust.h): folders under fake mount roots, owned by the test's user
 * (the trusted owner here) or not; the first root that has a path decides;
 * a missing folder and ".." are not trusted; verdicts are cached, a
 * missing folder is asked again; a path that shares a trusted one's cache
 * slot never takes its verdict.
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

#include "cgtrust.h"

static char top[] = "/tmp/jt-test-cgtrust.XXXXXX";
static char r1[300], r2[300];

/* mkdir -p of top/rel. */
static void mk(const char *root, const char *rel)
{
	char path[600], *p;

	snprintf(path, sizeof(path), "%s%s", root, rel);
	for (p = path + strlen(root) + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
	assert_true(mkdir(path, 0755) == 0 || errno == EEXIST);
}

/* The trusted owner's folders are trusted, another owner's are not. */
static void test_owner(void **state)
{
	const char *roots[] = { r1, r2, NULL };
	struct cgtrust *c;
	uid_t me = getuid();

	(void)state;
	mk(r1, "/slurm_n/uid_5/job_7/step_0");
	mk(r2, "/system.slice/slurmstepd.scope/job_8");
	/* as trusted owner: the test's own uid; another one: me + 1 */
	assert_int_equal(cgtrust_new(roots, me, &c), 0);
	assert_true(cgtrust_root(c, "/slurm_n/uid_5/job_7"));
	assert_true(cgtrust_root(c, "/system.slice/slurmstepd.scope/job_8"));
	assert_false(cgtrust_root(c, "/user.slice/x_slurmstepd.scope/job_9"));
	assert_false(cgtrust_root(c, "relative/job_7"));
	assert_false(cgtrust_root(c, "/slurm_n/uid_5/job_7/../job_7"));
	assert_false(cgtrust_root(c, "/slurm_n/uid_5/job_7/.."));
	assert_false(cgtrust_root(c, NULL));
	cgtrust_free(c);
	assert_int_equal(cgtrust_new(roots, me + 1, &c), 0);
	assert_false(cgtrust_root(c, "/slurm_n/uid_5/job_7"));
	cgtrust_free(c);
}

/* The first root that has the path decides, as the kernel's mounts do. */
static void test_first_root(void **state)
{
	const char *roots[] = { r1, r2, NULL };
	struct cgtrust *c;
	char path[600];

	(void)state;
	mk(r1, "/docker/abc");
	mk(r2, "/docker/abc");
	snprintf(path, sizeof(path), "%s/docker/abc", r2);
	assert_int_equal(cgtrust_new(roots, getuid(), &c), 0);
	assert_true(cgtrust_root(c, "/docker/abc"));
	cgtrust_free(c);
	if (getuid() == 0) {
		/* the first root's folder is another user's: not trusted,
		 * whoever owns the second's */
		snprintf(path, sizeof(path), "%s/docker/abc", r1);
		assert_int_equal(chown(path, 65534, 65534), 0);
		assert_int_equal(cgtrust_new(roots, 0, &c), 0);
		assert_false(cgtrust_root(c, "/docker/abc"));
		cgtrust_free(c);
	}
	/* a file in place of the folder is not one */
	mk(r1, "/ecs");
	snprintf(path, sizeof(path), "%s/ecs/file", r1);
	fclose(fopen(path, "w"));
	assert_int_equal(cgtrust_new(roots, getuid(), &c), 0);
	assert_false(cgtrust_root(c, "/ecs/file"));
	cgtrust_free(c);
}

/* Verdicts are cached; a folder not there is asked again when it is. */
static void test_cache(void **state)
{
	const char *roots[] = { r1, NULL };
	struct cgtrust *c;

	(void)state;
	assert_int_equal(cgtrust_new(roots, getuid(), &c), 0);
	mk(r1, "/slurm_n/uid_5/job_10");
	assert_true(cgtrust_root(c, "/slurm_n/uid_5/job_10"));
	assert_true(cgtrust_root(c, "/slurm_n/uid_5/job_10"));
	assert_int_equal(cgtrust_lookups(c), 1);
	assert_false(cgtrust_root(c, "/slurm_n/uid_5/job_11"));
	assert_false(cgtrust_root(c, "/slurm_n/uid_5/job_11"));
	assert_int_equal(cgtrust_lookups(c), 3);
	mk(r1, "/slurm_n/uid_5/job_11");
	assert_true(cgtrust_root(c, "/slurm_n/uid_5/job_11"));
	/* many folders: a slot shared with a trusted path never lends its
	 * verdict to another path */
	for (int i = 0; i < 3 * CGTRUST_CACHE; i++) {
		char rel[64];

		snprintf(rel, sizeof(rel), "/slurm_n/uid_5/job_x%d", i);
		assert_false(cgtrust_root(c, rel));
	}
	assert_true(cgtrust_root(c, "/slurm_n/uid_5/job_10"));
	cgtrust_free(c);
	cgtrust_free(NULL);
}

/* Make the fake mount roots. */
static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(top))
		return -1;
	snprintf(r1, sizeof(r1), "%s/unified", top);
	snprintf(r2, sizeof(r2), "%s/memory", top);
	return mkdir(r1, 0755) || mkdir(r2, 0755);
}

/* Remove them. */
static int teardown(void **state)
{
	char cmd[400];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	return system(cmd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_owner),
		cmocka_unit_test(test_first_root),
		cmocka_unit_test(test_cache),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
