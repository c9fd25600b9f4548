// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * dockerq.c - container look-ups on Docker's socket in a worker thread
 * (see dockerq.h).  The answer is read and wiped in the worker: only the
 * allowlisted values (struct docker_info) reach the loop.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "dockerq.h"
#include "http.h"
#include "log.h"
#include "util.h"

const char *const docker_state_names[DOCKER_STATE__N] = {
	"pending", "ok", "absent", "timeout", "not_found", "error",
};

/* A queued id, or a result on its way back. */
struct node {
	struct node *next;
	struct dockerq_result r;
};

struct dockerq {
	pthread_t thread;
	bool started;
	int efd;
	char *socket_path;
	unsigned timeout_ms;

	pthread_mutex_t lock;	/* everything below */
	pthread_cond_t wake;
	struct node *ask_head, *ask_tail;
	unsigned asked;		/* in the ask queue */
	struct node *done_head, *done_tail;
	struct http_client *client;	/* the worker's, for cancel */
	bool stop;
	struct dockerq_stats st;
};

/* Append n to a queue. */
static void push(struct node **head, struct node **tail, struct node *n)
{
	n->next = NULL;
	if (*tail)
		(*tail)->next = n;
	else
		*head = n;
	*tail = n;
}

/* Make the eventfd readable (a full counter is readable anyway). */
static void kick(int fd)
{
	uint64_t one = 1;
	ssize_t n = write(fd, &one, sizeof(one));

	(void)n;
}

/* Take the first node of a queue, or NULL. */
static struct node *pop(struct node **head, struct node **tail)
{
	struct node *n = *head;

	if (n) {
		*head = n->next;
		if (!*head)
			*tail = NULL;
	}
	return n;
}

/* Ask Docker about one container; the result into r, why into err
 * (the answer, in ans, is wiped after reading). */
static void look_up(struct dockerq *q, struct http_client **client,
		    struct jbuf *ans, struct dockerq_result *r, char *err,
		    size_t errlen)
{
	char path[128], why[200];
	/* the answer is not quoted in why: it is whatever the server said */
	struct http_req rq = { .method = "GET", .suffix = path,
			       .max_answer = DOCKERQ_ANSWER_MAX,
			       .secret = true };
	long status;
	int e;

	if (!*client) {
		e = http_client_new_unix(q->socket_path, q->timeout_ms, client,
					 why, sizeof(why));
		if (e) {
			r->state = DOCKER_ERROR;
			util_seterr(err, errlen, "%s", why);
			return;
		}
		pthread_mutex_lock(&q->lock);
		q->client = *client;
		if (q->stop)
			http_client_cancel(*client);
		pthread_mutex_unlock(&q->lock);
	}
	snprintf(path, sizeof(path), "/containers/%s/json", r->id);
	e = http_request(*client, &rq, ans, &status, why, sizeof(why));
	if (e && !status) {
		r->state = e == -ECONNREFUSED ? DOCKER_ABSENT :
			   e == -ETIMEDOUT ? DOCKER_TIMEOUT : DOCKER_ERROR;
		util_seterr(err, errlen, "container %.12s: %s: %s", r->id,
			    q->socket_path, why);
	} else if (status == 404) {
		r->state = DOCKER_NOT_FOUND;
		util_seterr(err, errlen, "container %.12s: Docker does not know"
			    " it (HTTP 404)", r->id);
	} else if (status != 200) {
		r->state = DOCKER_ERROR;
		util_seterr(err, errlen, "container %.12s: HTTP %ld", r->id,
			    status);
	} else if (docker_parse_inspect(jbuf_str(ans), ans->len, &r->info,
					why, sizeof(why))) {
		r->state = DOCKER_ERROR;
		util_seterr(err, errlen, "container %.12s: answer refused: %s",
			    r->id, why);
	} else {
		r->state = DOCKER_OK;
	}
	jbuf_reset(ans);
}

/* The worker: one look-up at a time until stopped. */
static void *worker(void *arg)
{
	struct dockerq *q = arg;
	struct http_client *client = NULL;
	struct jbuf ans;

	jbuf_init_wipe(&ans);
	pthread_mutex_lock(&q->lock);
	for (;;) {
		struct node *n;
		char err[256] = "";

		while (!q->stop && !q->ask_head)
			pthread_cond_wait(&q->wake, &q->lock);
		if (q->stop)
			break;
		n = pop(&q->ask_head, &q->ask_tail);
		q->asked--;
		pthread_mutex_unlock(&q->lock);

		look_up(q, &client, &ans, &n->r, err, sizeof(err));

		pthread_mutex_lock(&q->lock);
		q->st.answers[n->r.state]++;
		if (err[0]) {
			util_strlcpy(q->st.last_error, err,
				     sizeof(q->st.last_error));
			q->st.last_error_ns = util_now_ns(CLOCK_REALTIME);
		}
		push(&q->done_head, &q->done_tail, n);
		kick(q->efd);
	}
	q->client = NULL;
	pthread_mutex_unlock(&q->lock);
	http_client_free(client);
	jbuf_free(&ans);
	return NULL;
}

/* Start the worker (see dockerq.h). */
int dockerq_start(const char *socket_path, unsigned timeout_ms,
		  struct dockerq **out)
{
	struct dockerq *q = calloc(1, sizeof(*q));
	int err;

	*out = NULL;
	if (!q || !(q->socket_path = strdup(socket_path))) {
		free(q);
		return -ENOMEM;
	}
	q->timeout_ms = timeout_ms;
	q->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->wake, NULL);
	if (q->efd < 0) {
		err = -errno;
		log_error("docker: eventfd: %s", strerror(-err));
		dockerq_stop(q);
		return err;
	}
	err = util_thread_start(&q->thread, worker, q);
	if (err) {
		log_error("docker: cannot start the look-up thread: %s",
			  strerror(-err));
		dockerq_stop(q);
		return err;
	}
	q->started = true;
	*out = q;
	return 0;
}

/* Free a queue's nodes. */
static void free_nodes(struct node *n)
{
	while (n) {
		struct node *next = n->next;

		free(n);
		n = next;
	}
}

/* Stop the worker and free everything (see dockerq.h). */
void dockerq_stop(struct dockerq *q)
{
	if (!q)
		return;
	pthread_mutex_lock(&q->lock);
	q->stop = true;
	if (q->client)
		http_client_cancel(q->client);
	pthread_cond_signal(&q->wake);
	pthread_mutex_unlock(&q->lock);
	if (q->started)
		pthread_join(q->thread, NULL);
	free_nodes(q->ask_head);
	free_nodes(q->done_head);
	if (q->efd >= 0)
		close(q->efd);
	pthread_cond_destroy(&q->wake);
	pthread_mutex_destroy(&q->lock);
	free(q->socket_path);
	free(q);
}

/* The eventfd the loop polls. */
int dockerq_fd(const struct dockerq *q)
{
	return q->efd;
}

/* Queue a look-up (see dockerq.h). */
int dockerq_ask(struct dockerq *q, const char *id)
{
	struct node *n;

	pthread_mutex_lock(&q->lock);
	if (q->asked >= DOCKERQ_QUEUE_MAX) {
		q->st.refused++;
		pthread_mutex_unlock(&q->lock);
		return -EAGAIN;
	}
	pthread_mutex_unlock(&q->lock);
	/* the node is large (it carries the answer back): made unlocked */
	n = calloc(1, sizeof(*n));
	if (!n)
		return -ENOMEM;
	util_strlcpy(n->r.id, id, sizeof(n->r.id));
	n->r.state = DOCKER_PENDING;
	pthread_mutex_lock(&q->lock);
	push(&q->ask_head, &q->ask_tail, n);
	q->asked++;
	pthread_cond_signal(&q->wake);
	pthread_mutex_unlock(&q->lock);
	return 0;
}

/* The next result (see dockerq.h). */
int dockerq_take(struct dockerq *q, struct dockerq_result *out)
{
	struct node *n;
	uint64_t cnt;

	/* reset the eventfd first: a result pushed after it wakes again */
	if (read(q->efd, &cnt, sizeof(cnt)) < 0 && errno != EAGAIN)
		log_debug("docker: eventfd: %s", strerror(errno));
	pthread_mutex_lock(&q->lock);
	n = pop(&q->done_head, &q->done_tail);
	if (n && q->done_head)
		kick(q->efd);	/* more wait: stay readable */
	pthread_mutex_unlock(&q->lock);
	if (!n)
		return 0;
	*out = n->r;
	free(n);
	return 1;
}

/* The counters (see dockerq.h). */
void dockerq_stats(struct dockerq *q, struct dockerq_stats *st)
{
	pthread_mutex_lock(&q->lock);
	*st = q->st;
	st->answers[DOCKER_PENDING] = q->asked;
	pthread_mutex_unlock(&q->lock);
}
