// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_exetrust.c - whose choice a program's name is (exetrust.c): the
 * name against the kernel's, and, for the files the kernel cannot vouch
 * for (a #! script, a process found running), the owner and mode of the
 * file and its folders, a last link, a sticky folder, and a process whose
 * mounts are its own.  The file checks need root (they chown); without
 * it they are skipped.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "exetrust.h"
#include "test_files.h"
#include "util.h"

static char dir[64];

/* A root-only scratch folder under /tmp (sticky, above it: allowed). */
static int setup(void **state)
{
	(void)state;
	strcpy(dir, "/tmp/jt-exetrust.XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

/* Remove it. */
static int teardown(void **state)
{
	(void)state;
	return test_remove_tree(dir);
}

/* The name the kernel gave must be the path's last part, with no "."
 * or ".." on the way. */
static void test_named(void **state)
{
	(void)state;
	assert_true(exetrust_named("/usr/bin/telegraf", "telegraf"));
	assert_true(exetrust_named("telegraf", "telegraf"));
	assert_false(exetrust_named("./bin/telegraf", "telegraf"));
	assert_true(exetrust_named("bin//telegraf", "telegraf"));
	assert_false(exetrust_named("/home/u/bin/sshd", "bash"));
	assert_false(exetrust_named("/opt/datadog-agent/../../usr/bin/bash",
				    "bash"));
	assert_false(exetrust_named("/usr/bin/telegraf", ""));
	assert_false(exetrust_named("/usr/bin/", ""));
	assert_true(exetrust_named("/usr/bin/..x", "..x"));
}

/* Make dir/name a file of uid with mode; returns its path (static). */
static const char *make(const char *name, uid_t uid, mode_t mode)
{
	static char path[128];

	test_write_file(dir, name, "#!/bin/sh\n");
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	assert_int_equal(chown(path, uid, 0), 0);
	assert_int_equal(chmod(path, mode), 0);
	return path;
}

/* Is path root's, resolved in the agent's own root? */
static bool root_path(const char *path)
{
	int rfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	bool ok = exetrust_path(rfd, path);

	close(rfd);
	return ok;
}

/* Owner and mode of the file and of its folders; a last link; "..". */
static void test_path(void **state)
{
	char path[160], sub[128];

	(void)state;
	if (geteuid() != 0)
		skip();
	assert_true(root_path(make("cron", 0, 0755)));
	assert_false(root_path(make("sshd", 65534, 0755)));	/* a user's */
	assert_true(root_path(make("tini", 0, 0775)));	/* group root may write */
	snprintf(path, sizeof(path), "%s/tini", dir);
	assert_int_equal(chown(path, 0, 100), 0);
	assert_false(root_path(path));			/* group users may */
	assert_false(root_path(make("atd", 0, 0757)));	/* others may */
	/* a link named sshd to root's own file: the link's name is not */
	snprintf(path, sizeof(path), "%s/sshd-link", dir);
	assert_int_equal(symlink("cron", path), 0);
	assert_false(root_path(path));
	/* ".." in the path */
	snprintf(path, sizeof(path), "%s/../%s/cron", dir, dir + 5);
	assert_false(root_path(path));
	/* its own folder: not another user's, not sticky, not writable */
	snprintf(sub, sizeof(sub), "%s/sub", dir);
	assert_int_equal(mkdir(sub, 0755), 0);
	snprintf(path, sizeof(path), "%s/sub/cron", dir);
	test_write_file(sub, "cron", "#!/bin/sh\n");
	assert_int_equal(chmod(path, 0755), 0);
	assert_true(root_path(path));
	assert_int_equal(chmod(sub, 01777), 0);
	assert_false(root_path(path));
	assert_int_equal(chmod(sub, 0755), 0);
	assert_int_equal(chown(sub, 65534, 0), 0);
	assert_false(root_path(path));
	assert_int_equal(chown(sub, 0, 0), 0);
	/* a folder above it sticky and open to all is fine (/tmp) */
	assert_int_equal(chmod(dir, 01777), 0);
	assert_true(root_path(path));
	assert_false(root_path("/tmp/no-such-file-of-jt"));
	assert_false(root_path("relative/cron"));
}

/* A process p for pid, as the tracker has it, running exe. */
static struct jt_proc proc_of(pid_t pid, const char *exe)
{
	struct jt_proc p;
	struct timespec ts;

	memset(&p, 0, sizeof(p));
	p.pid = (uint32_t)pid;
	p.exe = (char *)exe;
	p.state = JT_PS_EXE_CHECK;
	/* its start: the tick it was forked in, within one */
	clock_gettime(CLOCK_BOOTTIME, &ts);
	p.start_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	return p;
}

/* A child that sleeps, in mounts of its own when own_ns. */
static pid_t sleeper(bool own_ns, int ready)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		if (own_ns && unshare(CLONE_NEWNS))
			_exit(1);
		if (write(ready, "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	return pid;
}

/*
 * A live process is checked in its own root; one in mounts of its own
 * outside a container is not taken at its word (its user could have
 * unmounted what it ran); one that is gone, in the agent's root.
 */
static void test_proc(void **state)
{
	const char *exe;
	struct jt_proc p;
	int fds[2];
	pid_t pid;
	char c;

	(void)state;
	if (geteuid() != 0)
		skip();
	exe = make("cron", 0, 0755);
	assert_int_equal(pipe(fds), 0);

	pid = sleeper(false, fds[1]);
	p = proc_of(pid, exe);
	assert_int_equal(read(fds[0], &c, 1), 1);
	assert_true(exetrust_proc(&p));
	p.state = 0;
	assert_false(exetrust_proc(&p));		/* nothing to check */
	p.state = JT_PS_EXE_SYSTEM;
	assert_true(exetrust_proc(&p));			/* the kernel's word */
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	p.state = JT_PS_EXE_CHECK;
	assert_true(exetrust_proc(&p));			/* gone: our root */
	snprintf(p.container, sizeof(p.container), "docker://abc");
	assert_false(exetrust_proc(&p));		/* gone, in a container */

	pid = sleeper(true, fds[1]);
	p = proc_of(pid, exe);
	assert_int_equal(read(fds[0], &c, 1), 1);
	assert_false(exetrust_proc(&p));
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(fds[0]);
	close(fds[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_named),
		cmocka_unit_test_setup_teardown(test_path, setup, teardown),
		cmocka_unit_test_setup_teardown(test_proc, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
