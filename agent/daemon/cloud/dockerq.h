/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dockerq.h - container look-ups on Docker's socket, off the event loop.
 *
 * One worker thread takes container ids from a bounded queue, asks the
 * Docker Engine API (GET /containers/{id}/json over the Unix socket, each
 * exchange bounded by the timeout), reads the answer with docker.h's
 * allowlist parser, wipes it, and hands the result back: the loop polls
 * dockerq_fd() (an eventfd) and takes the results with dockerq_take().
 * The loop never waits on Docker: dockerq_ask() only queues, and a queue
 * that is full says so at once.  libcurl is loaded at the first look-up.
 *
 * Threading: dockerq_ask(), dockerq_take(), dockerq_stats() and
 * dockerq_stop() are called by the loop thread; the worker shares only
 * the two queues and the counters, under one mutex.
 */
#ifndef JOBTRACE_DOCKERQ_H
#define JOBTRACE_DOCKERQ_H

#include <stdint.h>

#include "docker.h"

/* How a look-up ended. */
enum docker_state {
	DOCKER_PENDING,		/* asked, no answer yet */
	DOCKER_OK,		/* read: info holds what is kept */
	DOCKER_ABSENT,		/* nobody answers at the socket */
	DOCKER_TIMEOUT,		/* no whole answer within the timeout */
	DOCKER_NOT_FOUND,	/* Docker does not know the container */
	DOCKER_ERROR,		/* another status, an unreadable answer, ... */
	DOCKER_STATE__N
};

/* "pending", "ok", "absent", "timeout", "not_found", "error". */
extern const char *const docker_state_names[DOCKER_STATE__N];

/* The largest answer read (a container's whole configuration). */
#define DOCKERQ_ANSWER_MAX (8u << 20)
/* Look-ups waiting at most. */
#define DOCKERQ_QUEUE_MAX 256

struct dockerq_result {
	char id[80];
	enum docker_state state;
	struct docker_info info;	/* DOCKER_OK only */
};

struct dockerq_stats {
	uint64_t answers[DOCKER_STATE__N];	/* [DOCKER_PENDING]: queued now */
	uint64_t refused;		/* not queued: the queue was full */
	char last_error[256];		/* "" when none */
	uint64_t last_error_ns;		/* CLOCK_REALTIME */
};

struct dockerq;

/* Start the worker for the socket; 0 or -errno (logged). */
int dockerq_start(const char *socket_path, unsigned timeout_ms,
		  struct dockerq **out);
/* Stop the worker (a running look-up is cancelled within a second) and
 * free what is left; accepts NULL. */
void dockerq_stop(struct dockerq *q);
/* The eventfd that is readable when results wait. */
int dockerq_fd(const struct dockerq *q);
/* Queue a look-up of container id; 0, or -EAGAIN when the queue is full. */
int dockerq_ask(struct dockerq *q, const char *id);
/* The next result into *out: 1, or 0 when none waits. */
int dockerq_take(struct dockerq *q, struct dockerq_result *out);
/* The counters and the last error. */
void dockerq_stats(struct dockerq *q, struct dockerq_stats *st);

#endif
