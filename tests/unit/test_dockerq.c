// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_dockerq.c - cmocka tests of agent/daemon/cloud/dockerq.c (and http.c's Unix
 * socket client under it) against servers on Unix sockets that this test
 * runs itself: one that answers as dockerd does (a real answer of
 * dockerd 20.10), with 404 or 500, one that accepts and never answers,
 * and none at all.  The caller's side never waits: asking returns at once
 * and a queue that is full says so.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "dockerq.h"
#include "log.h"
#include "util.h"

#define ID1 "c1d43b6b0228f654ca24378222d42707d2dc86941ba61dcd26441c7f679b88f9"

struct server {
	char path[108];
	int fd;
	pthread_t thread;
	const char *status;	/* "200 OK", "404 Not Found", ...; NULL: never answer */
	char *body;
	size_t len;
};

static char dir[64];

/* Serve each connection: read the request, answer, close. */
static void *serve(void *arg)
{
	struct server *s = arg;
	char req[4096], head[256];
	int c;

	while ((c = accept(s->fd, NULL, NULL)) >= 0) {
		if (read(c, req, sizeof(req)) > 0 && s->status) {
			int n = snprintf(head, sizeof(head),
					 "HTTP/1.1 %s\r\nContent-Type: "
					 "application/json\r\nContent-Length: "
					 "%zu\r\n\r\n", s->status, s->len);

			if (write(c, head, (size_t)n) < 0 ||
			    write(c, s->body, s->len) < 0) {
				/* the client went: nothing to do */
			}
		}
		close(c);
	}
	return NULL;
}

/* Listen on dir/name; with accepting false nobody ever accepts. */
static void listen_on(struct server *s, const char *name, bool accepting)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	snprintf(s->path, sizeof(s->path), "%s/%s", dir, name);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", s->path);
	s->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(s->fd >= 0);
	assert_int_equal(bind(s->fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(s->fd, 512), 0);
	if (accepting)
		assert_int_equal(pthread_create(&s->thread, NULL, serve, s), 0);
}

/* Stop a server. */
static void server_stop(struct server *s, bool accepting)
{
	shutdown(s->fd, SHUT_RDWR);
	if (accepting)
		pthread_join(s->thread, NULL);
	close(s->fd);
	unlink(s->path);
}

/* The next result, waiting for the eventfd up to ms. */
static bool next_result(struct dockerq *q, struct dockerq_result *r, int ms)
{
	struct pollfd p = { .fd = dockerq_fd(q), .events = POLLIN };
	uint64_t end = util_now_ns(CLOCK_MONOTONIC) + (uint64_t)ms * 1000000;

	while (util_now_ns(CLOCK_MONOTONIC) < end) {
		if (dockerq_take(q, r))
			return true;
		poll(&p, 1, 50);
	}
	return dockerq_take(q, r);
}

/* Seconds since t0 (CLOCK_MONOTONIC ns). */
static double since(uint64_t t0)
{
	return (util_now_ns(CLOCK_MONOTONIC) - t0) / 1e9;
}

static int setup(void **state)
{
	(void)state;
	log_init("test_dockerq", 0, LOG_LVL_ERROR);
	snprintf(dir, sizeof(dir), "/tmp/jt_dockerq_XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	rmdir(dir);
	return 0;
}

/* A real answer: the allowlisted values come back, nothing else. */
static void test_answer(void **state)
{
	static struct dockerq_result r;
	const char *top = getenv("top_srcdir");
	struct server s = { .status = "200 OK" };
	struct dockerq_stats st;
	struct dockerq *q;
	char path[4096];
	FILE *f;

	(void)state;
	snprintf(path, sizeof(path), "%s/tests/fuzz/corpus/docker/real-inspect.json",
		 top ? top : ".");
	f = fopen(path, "rb");
	if (!f)
		fail_msg("cannot open %s (top_srcdir is set by make check)", path);
	s.body = malloc(1 << 16);
	s.len = fread(s.body, 1, 1 << 16, f);
	fclose(f);
	listen_on(&s, "docker.sock", true);
	assert_int_equal(dockerq_start(s.path, 2000, &q), 0);
	assert_int_equal(dockerq_ask(q, ID1), 0);
	assert_true(next_result(q, &r, 5000));
	assert_string_equal(r.id, ID1);
	assert_int_equal(r.state, DOCKER_OK);
	assert_string_equal(r.info.env[DOCKER_ENV_JOB_ATTEMPT], "2");
	assert_int_equal(r.info.nano_cpus, 1500000000);
	assert_null(memmem(&r, sizeof(r), "canaryX", 7));

	/* 404: Docker does not know it; 500: an error, the body unquoted */
	s.status = "404 Not Found";
	strcpy(s.body, "{\"message\":\"No such container: canaryN\"}");
	s.len = strlen(s.body);
	assert_int_equal(dockerq_ask(q, ID1), 0);
	assert_true(next_result(q, &r, 5000));
	assert_int_equal(r.state, DOCKER_NOT_FOUND);
	s.status = "500 Internal Server Error";
	assert_int_equal(dockerq_ask(q, ID1), 0);
	assert_true(next_result(q, &r, 5000));
	assert_int_equal(r.state, DOCKER_ERROR);
	dockerq_stats(q, &st);
	assert_int_equal(st.answers[DOCKER_OK], 1);
	assert_int_equal(st.answers[DOCKER_NOT_FOUND], 1);
	assert_int_equal(st.answers[DOCKER_ERROR], 1);
	assert_non_null(strstr(st.last_error, "container c1d43b6b0228: HTTP 500"));
	assert_null(strstr(st.last_error, "canaryN"));
	dockerq_stop(q);
	server_stop(&s, true);
	free(s.body);
}

/* Nobody at the socket: absent, at once, naming the socket. */
static void test_absent(void **state)
{
	static struct dockerq_result r;
	struct dockerq_stats st;
	struct dockerq *q;
	char path[128];

	(void)state;
	snprintf(path, sizeof(path), "%s/none.sock", dir);
	assert_int_equal(dockerq_start(path, 2000, &q), 0);
	assert_int_equal(dockerq_ask(q, ID1), 0);
	assert_true(next_result(q, &r, 5000));
	assert_int_equal(r.state, DOCKER_ABSENT);
	dockerq_stats(q, &st);
	assert_int_equal(st.answers[DOCKER_ABSENT], 1);
	assert_non_null(strstr(st.last_error, path));
	dockerq_stop(q);
}

/*
 * A server that accepts and never answers: each look-up times out after
 * the timeout, the caller never waits, a full queue refuses at once, and
 * stopping cancels the look-up under way within a second.
 */
static void test_hang(void **state)
{
	static struct dockerq_result r;
	struct server s = { .status = NULL };
	struct dockerq_stats st;
	struct dockerq *q;
	uint64_t t0;
	double took;
	int rc = 0, n;

	(void)state;
	listen_on(&s, "hang.sock", false);
	assert_int_equal(dockerq_start(s.path, 300, &q), 0);
	t0 = util_now_ns(CLOCK_MONOTONIC);
	assert_int_equal(dockerq_ask(q, ID1), 0);
	assert_true(since(t0) < 0.05);
	assert_true(next_result(q, &r, 5000));
	took = since(t0);
	assert_int_equal(r.state, DOCKER_TIMEOUT);
	if (took < 0.29 || took > 2.0)
		fail_msg("a 300 ms look-up took %.3f s", took);
	dockerq_stats(q, &st);
	assert_non_null(strstr(st.last_error, "Timeout"));
	dockerq_stop(q);

	/* a long timeout: the queue fills, asking still returns at once */
	assert_int_equal(dockerq_start(s.path, 30000, &q), 0);
	t0 = util_now_ns(CLOCK_MONOTONIC);
	for (n = 0; n < DOCKERQ_QUEUE_MAX + 10 && !rc; n++)
		rc = dockerq_ask(q, ID1);
	assert_int_equal(rc, -EAGAIN);
	/* the worker may have taken the first: 256 or 257 were queued */
	assert_true(n - 1 >= DOCKERQ_QUEUE_MAX && n - 1 <= DOCKERQ_QUEUE_MAX + 1);
	assert_true(since(t0) < 0.5);
	dockerq_stats(q, &st);
	assert_int_equal(st.refused, 1);
	assert_true(st.answers[DOCKER_PENDING] >= DOCKERQ_QUEUE_MAX);
	t0 = util_now_ns(CLOCK_MONOTONIC);
	dockerq_stop(q);
	took = since(t0);
	if (took > 1.5)
		fail_msg("stopping with a look-up under way took %.3f s", took);
	server_stop(&s, false);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_answer),
		cmocka_unit_test(test_absent),
		cmocka_unit_test(test_hang),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
