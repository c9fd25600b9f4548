// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_dockjobs.c - cmocka tests of agent/daemon/dockjobs.c without root:
 * a container the tracker meets is looked up by the real look-up thread
 * at a Docker socket where nothing answers (dockerd down), the answer
 * comes back through the descriptor the loop watches, and the failure
 * shows in "status" and its first line's flag.
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
#include "dockjobs.h"
#include "jobs.h"
#include "proc.h"
#include "record.h"
#include "tracker.h"

#define CT_ID "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

/* No record is looked at here. */
static void on_record(void *ctx, struct jbuf *b)
{
	(void)ctx;
	(void)b;
}

/* The "status" lines of dj into buf. */
static const char *status_of(const struct dockjobs *dj, char *buf, size_t len)
{
	FILE *out = fmemopen(buf, len, "w");

	assert_non_null(out);
	dockjobs_status(dj, out);
	fclose(out);
	return buf;
}

/* Off: no descriptor, not failing, "docker: off". */
static void test_off(void **state)
{
	char buf[256];

	(void)state;
	assert_int_equal(dockjobs_fd(NULL), -1);
	assert_false(dockjobs_failing(NULL));
	assert_string_equal(status_of(NULL, buf, sizeof(buf)), "docker: off\n");
	dockjobs_tick(NULL, NULL, 0);
	dockjobs_free(NULL);
}

/*
 * A process of a container enters it through the tracker's interface:
 * the container is asked about at once; with nothing at the socket the
 * answer, read when the descriptor is readable, is "absent", the
 * look-ups fail, and status says so with the socket's error.
 */
static void test_dockerd_down(void **state)
{
	char dir[] = "/tmp/jt-test-dockjobs.XXXXXX", buf[4096], *sock;
	struct jt_proc p = { .pid = 4242, .start_ns = 1000, .uid = 0 };
	struct jt_config cfg;
	struct jt_host host = { .name = "node1" };
	struct jobs *jobs;
	struct tracker t;
	struct dockjobs *dj;
	struct pollfd pfd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_int_equal(config_defaults(&cfg), 0);
	assert_true(asprintf(&sock, "%s/docker.sock", dir) > 0);
	free(cfg.docker_socket);
	cfg.docker_socket = sock;
	cfg.docker_timeout_ms = 2000;
	assert_int_equal(jobs_new(&jobs), 0);
	assert_int_equal(tracker_init(&t, NULL, jobs, &host,
				      &(struct tracker_cb){ .record = on_record }), 0);
	assert_null(t.ct.cts);
	assert_int_equal(dockjobs_start(&cfg, 8, &t, &dj), 0);
	assert_non_null(t.ct.cts);
	assert_true(dockjobs_fd(dj) >= 0);
	assert_false(dockjobs_failing(dj));

	snprintf(p.container, sizeof(p.container), "docker://%s", CT_ID);
	t.ct.enter(t.ct.cts, &t, &p);
	pfd = (struct pollfd){ .fd = dockjobs_fd(dj), .events = POLLIN };
	assert_int_equal(poll(&pfd, 1, 5000), 1);
	dockjobs_take(dj, &t);
	assert_true(dockjobs_failing(dj));
	status_of(dj, buf, sizeof(buf));
	assert_non_null(strstr(buf, "docker: "));
	assert_non_null(strstr(buf, sock));
	assert_non_null(strstr(buf, "\ndocker_lookups_absent: 1\n"));
	assert_non_null(strstr(buf, "\ndocker_lookups_ok: 0\n"));
	assert_non_null(strstr(buf, "\ndocker_containers: 1\n"));
	assert_null(strstr(buf, "\ndocker_last_error: none\n"));
	assert_non_null(strstr(buf, "\ndocker_last_error: "));

	t.ct.leave(t.ct.cts, &t, &p);
	dockjobs_free(dj);
	tracker_fini(&t);
	jobs_free(jobs);
	config_free(&cfg);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_off),
		cmocka_unit_test(test_dockerd_down),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
