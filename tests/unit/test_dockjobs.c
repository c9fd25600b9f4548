// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_dockjobs.c - cmocka tests of agent/daemon/dockjobs.c without root:
 * a container the tracker meets (an exec in its cgroup) is looked up by
 * the real look-up thread at a Docker socket where nothing answers
 * (dockerd down), the answer comes back through the descriptor the loop
 * watches, and the failure shows in "status" and its first line's flag.
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

/* An exec (type JT_EV_EXEC) or the exit of process 4242 of the
 * container CT_ID, through the tracker as the kernel sends it. */
static void event(struct tracker *t, uint32_t type)
{
	static union jt_event ev;	/* large */

	memset(&ev, 0, sizeof(ev));
	ev.hdr = (struct jt_ev_hdr){ type, 4242, 2000, 1000 };
	if (type == JT_EV_EXEC) {
		snprintf(ev.exec.filename, sizeof(ev.exec.filename), "/bin/sh");
		ev.exec.cg2_len = snprintf(ev.exec.cg2, sizeof(ev.exec.cg2),
					   "/docker/%s", CT_ID);
	}
	tracker_event(t, &ev);
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
	dockjobs_tick(NULL, 0);
	dockjobs_free(NULL);
}

/*
 * A process of a container enters it through the tracker (an exec the
 * tracker tells the containers dockjobs_start() gave it): the container
 * is asked about at once; with nothing at the socket the
 * answer, read when the descriptor is readable, is "absent", the
 * look-ups fail, and status says so with the socket's error.
 */
static void test_dockerd_down(void **state)
{
	char dir[] = "/tmp/jt-test-dockjobs.XXXXXX", buf[4096], *sock;
	struct jt_config cfg;
	struct jt_host host = { .name = "node1" };
	struct jobs *jobs;
	struct tracker *t;
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
	assert_int_equal(tracker_new(NULL, jobs, &host,
				     &(struct tracker_cb){ .record = on_record },
				     &t), 0);
	assert_int_equal(dockjobs_start(&cfg, 8, jobs, &host, t, &dj), 0);
	assert_true(dockjobs_fd(dj) >= 0);
	assert_false(dockjobs_failing(dj));

	event(t, JT_EV_EXEC);	/* the tracker's containers know it now */
	pfd = (struct pollfd){ .fd = dockjobs_fd(dj), .events = POLLIN };
	assert_int_equal(poll(&pfd, 1, 5000), 1);
	dockjobs_take(dj);
	assert_true(dockjobs_failing(dj));
	status_of(dj, buf, sizeof(buf));
	assert_non_null(strstr(buf, "docker: "));
	assert_non_null(strstr(buf, sock));
	assert_non_null(strstr(buf, "\ndocker_lookups_absent: 1\n"));
	assert_non_null(strstr(buf, "\ndocker_lookups_ok: 0\n"));
	assert_non_null(strstr(buf, "\ndocker_containers: 1\n"));
	assert_null(strstr(buf, "\ndocker_last_error: none\n"));
	assert_non_null(strstr(buf, "\ndocker_last_error: "));

	event(t, JT_EV_EXIT);
	dockjobs_free(dj);
	tracker_free(t);
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
