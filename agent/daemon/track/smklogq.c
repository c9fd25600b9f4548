// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * smklogq.c - the loop's side of the Snakemake log reader (see smklogq.h
 * for where the loop waits and why, smklog.h for the reader).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "smklog.h"
#include "smklogq.h"
#include "util.h"

extern char **environ;

/* An engine whose reader got stuck or died on it. */
struct given_up {
	uint32_t pid;
	uint64_t start_ns;
};

struct smklogq {
	char *exe;
	uint64_t wait_ns, budget_max_ns, replace_ns;
	pid_t pid;		/* the reader, 0: none */
	int fd;			/* its socket, -1: none */
	uint64_t respawn_ns;	/* CLOCK_MONOTONIC: no reader before */
	pid_t dead[SMKLOGQ_STUCK_MAX + 1];	/* killed, not reaped */
	unsigned ndead;
	struct given_up gu[SMKLOGQ_GIVEN_UP_MAX];
	unsigned ngu, gu_next;
	uint64_t budget_ns;	/* waiting left */
	uint64_t budget_at;	/* CLOCK_MONOTONIC of its last refill */
	/* the request in flight */
	uint64_t seq;
	bool busy;
	uint64_t asked_ns;	/* CLOCK_MONOTONIC */
	uint32_t req_pid, req_uid;	/* the engine asked about */
	uint64_t req_start_ns;
	/* the file the reader named last: the one it is in, if stuck */
	bool noted;
	uint32_t note_pid, note_uid;
	uint64_t note_start_ns;
	/* CLOCK_MONOTONIC since the socket is full (the reader reads
	 * nothing, with no request in flight: stuck in a watch), 0: not */
	uint64_t full_ns;
	bool warned;		/* its stuck warning is logged */
	bool full_warned;	/* "no new reader" is logged */
	struct smklogq_stats st;
	struct smklog_msg msg;	/* the last message received */
};

/* Start a reader on a new socket; 0 or -errno (logged). */
static int spawn_reader(struct smklogq *q)
{
	char *argv[] = { "jobtraced", SMKLOG_READER_ARG, NULL };
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none;
	int sv[2], err;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
		err = -errno;
		log_error("smklog: socketpair: %s", strerror(-err));
		return err;
	}
	/* the socket becomes the reader's stdin; exec closes the rest */
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, sv[1], 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawnattr_init(&at);
	sigemptyset(&none);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK);
	err = -posix_spawn(&pid, q->exe, &fa, &at, argv, environ);
	posix_spawnattr_destroy(&at);
	posix_spawn_file_actions_destroy(&fa);
	close(sv[1]);
	if (err) {
		close(sv[0]);
		log_error("smklog: cannot start the log reader %s: %s", q->exe,
			  strerror(-err));
		return err;
	}
	q->pid = pid;
	q->fd = sv[0];
	q->busy = false;
	q->st.reader = pid;
	log_debug("smklog: log reader started (pid %d)", (int)pid);
	return 0;
}

/* Give up the engine (pid, start_ns): its lookups are skipped. */
static void give_up(struct smklogq *q, uint32_t pid, uint64_t start_ns)
{
	q->gu[q->gu_next] = (struct given_up){ pid, start_ns };
	q->gu_next = (q->gu_next + 1) % SMKLOGQ_GIVEN_UP_MAX;
	if (q->ngu < SMKLOGQ_GIVEN_UP_MAX)
		q->ngu++;
}

/* Was the engine (pid, start_ns) given up?  Its index, or -1. */
static int given_up(const struct smklogq *q, uint32_t pid, uint64_t start_ns)
{
	for (unsigned i = 0; i < q->ngu; i++)
		if (q->gu[i].pid == pid && q->gu[i].start_ns == start_ns)
			return (int)i;
	return -1;
}

/* Who a stuck reader is stuck for: the engine of the file it named
 * last, else the one of the request in flight; into the stats. */
static void blame(struct smklogq *q, uint64_t *start_ns)
{
	q->st.stuck_pid = q->noted ? q->note_pid : q->req_pid;
	q->st.stuck_uid = q->noted ? q->note_uid : q->req_uid;
	*start_ns = q->noted ? q->note_start_ns : q->req_start_ns;
}

/* Drop the reader (stuck or dead): kill it, never wait for it, give up
 * the engine it is stuck for. */
static void drop_reader(struct smklogq *q)
{
	uint64_t start_ns;

	if (q->busy || q->full_ns) {
		blame(q, &start_ns);
		give_up(q, q->st.stuck_pid, start_ns);
	}
	if (q->pid > 0) {
		kill(q->pid, SIGKILL);
		q->dead[q->ndead++] = q->pid;
		q->st.stuck_alive = q->ndead;
	}
	if (q->fd >= 0)
		close(q->fd);
	q->fd = -1;
	q->pid = 0;
	q->busy = false;
	q->st.reader = 0;
	q->st.stuck = false;
	q->full_ns = 0;
	q->noted = false;
	q->st.stuck_path[0] = '\0';
}

/* Reap the killed readers that are gone. */
static void reap(struct smklogq *q)
{
	for (unsigned i = 0; i < q->ndead;) {
		int stat;
		pid_t r = waitpid(q->dead[i], &stat, WNOHANG);

		if (r == q->dead[i] || (r < 0 && errno == ECHILD))
			q->dead[i] = q->dead[--q->ndead];
		else
			i++;
	}
	q->st.stuck_alive = q->ndead;
}

/* Start a reader when none runs and one may (see smklogq.h). */
static void maybe_spawn(struct smklogq *q, uint64_t now)
{
	if (q->pid || q->ndead >= SMKLOGQ_STUCK_MAX || now < q->respawn_ns)
		return;
	/* one that fails to start is tried again a while later */
	if (spawn_reader(q))
		q->respawn_ns = now + SMKLOGQ_RESPAWN_MS * 1000000ull;
}

/* The reader ended (its socket closed, or broke). */
static void reader_died(struct smklogq *q)
{
	uint64_t start;

	if (q->busy)
		blame(q, &start);
	if (q->busy)
		log_warn("smklog: the log reader (pid %d) ended while reading"
			 " %s for engine pid %u (uid %u): engine given up; a new"
			 " reader starts", (int)q->pid, q->st.stuck_path[0] ?
			 q->st.stuck_path : "a log", q->st.stuck_pid,
			 q->st.stuck_uid);
	else
		log_warn("smklog: the log reader (pid %d) ended; a new one"
			 " starts", (int)q->pid);
	q->st.died++;
	drop_reader(q);
	/* a reader that crashes on a log: not in a loop */
	q->respawn_ns = util_now_ns(CLOCK_MONOTONIC) +
			SMKLOGQ_RESPAWN_MS * 1000000ull;
}

/*
 * Take the reader's messages that wait, without blocking: a file named
 * for the request in flight, its answer (1, in q->msg), or older answers
 * (dropped).  Returns 1 when the request in flight was answered, 0 when
 * not, -1 when the reader is gone.
 */
static int take(struct smklogq *q)
{
	int answered = 0;

	while (q->fd >= 0) {
		ssize_t n = recv(q->fd, &q->msg, sizeof(q->msg), MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n <= 0) {
			reader_died(q);
			return -1;
		}
		if (q->msg.kind == SMKLOG_MSG_FILE &&
		    (size_t)n > offsetof(struct smklog_msg, path)) {
			size_t len = (size_t)n - offsetof(struct smklog_msg, path);

			if (len > sizeof(q->st.stuck_path) - 1)
				len = sizeof(q->st.stuck_path) - 1;
			memcpy(q->st.stuck_path, q->msg.path, len);
			q->st.stuck_path[len] = '\0';
			q->noted = true;
			q->note_pid = q->msg.pid;
			q->note_uid = q->msg.uid;
			q->note_start_ns = q->msg.start_ns;
		} else if (q->msg.kind == SMKLOG_MSG_ANSWER && q->busy &&
			   q->msg.seq == q->seq &&
			   (size_t)n >= offsetof(struct smklog_msg, path)) {
			q->busy = false;
			q->st.stuck = false;
			answered = 1;
		}
	}
	return answered;
}

/* Start the reader (see smklogq.h). */
int smklogq_start(const struct smklogq_opts *o, struct smklogq **out)
{
	struct smklogq *q = calloc(1, sizeof(*q));
	uint64_t now = util_now_ns(CLOCK_MONOTONIC);
	int err;

	*out = NULL;
	if (!q || !(q->exe = strdup(o->exe))) {
		free(q);
		return -ENOMEM;
	}
	q->fd = -1;
	q->wait_ns = (o->wait_ms ? o->wait_ms : SMKLOGQ_WAIT_MS) * 1000000ull;
	q->budget_max_ns = (o->budget_ms ? o->budget_ms : SMKLOGQ_BUDGET_MS) *
			   1000000ull;
	q->replace_ns = (o->replace_ms ? o->replace_ms : SMKLOGQ_REPLACE_MS) *
			1000000ull;
	q->budget_ns = q->budget_max_ns;
	q->budget_at = now;
	err = spawn_reader(q);
	if (err) {
		smklogq_stop(q);
		return err;
	}
	*out = q;
	return 0;
}

/* Kill the readers, wait for none (see smklogq.h). */
void smklogq_stop(struct smklogq *q)
{
	if (!q)
		return;
	q->busy = false;
	drop_reader(q);
	reap(q);
	free(q->exe);
	free(q);
}

/* Refill the waiting budget for the time since the last refill. */
static void refill(struct smklogq *q, uint64_t now)
{
	uint64_t add = (now - q->budget_at) / 1000000000ull *
		       q->budget_max_ns +
		       (now - q->budget_at) % 1000000000ull *
		       (q->budget_max_ns / 1000000ull) / 1000ull;

	q->budget_at = now;
	q->budget_ns = q->budget_max_ns - q->budget_ns <= add ?
		       q->budget_max_ns : q->budget_ns + add;
}

/* Send the request for cmd; 0, or -errno (the socket is full: -EAGAIN,
 * and since when is kept). */
static int ask(struct smklogq *q, const struct smklog_req *r, const char *cmd)
{
	size_t len = cmd ? strnlen(cmd, SMKLOG_CMD_MAX) : 0;
	struct iovec iov[2] = { { (void *)r, sizeof(*r) },
				{ (void *)cmd, len } };
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = len ? 2 : 1 };

	for (;;) {
		if (sendmsg(q->fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL) >= 0) {
			q->full_ns = 0;
			return 0;
		}
		if (errno == EAGAIN && !q->full_ns)
			q->full_ns = util_now_ns(CLOCK_MONOTONIC);
		if (errno != EINTR)
			return -errno;
	}
}

/* Wait until the request in flight is answered, at most until deadline
 * (CLOCK_MONOTONIC); 1 answered, 0 not, -1 the reader is gone. */
static int wait_answer(struct smklogq *q, uint64_t deadline)
{
	for (;;) {
		uint64_t now = util_now_ns(CLOCK_MONOTONIC);
		struct pollfd pfd = { .fd = q->fd, .events = POLLIN };
		struct timespec ts;
		int r = take(q);

		if (r)
			return r;
		if (now >= deadline)
			return 0;
		ts.tv_sec = (time_t)((deadline - now) / 1000000000ull);
		ts.tv_nsec = (long)((deadline - now) % 1000000000ull);
		if (ppoll(&pfd, 1, &ts, NULL) < 0 && errno != EINTR)
			return 0;
	}
}

/* The job of cmd, if the reader answers in time (see smklogq.h). */
bool smklogq_job(struct smklogq *q, uint32_t pid, uint64_t start_ns,
		 uint32_t uid, const char *cmd, struct rules_engine_job *out)
{
	uint64_t now = util_now_ns(CLOCK_MONOTONIC), wait, t1;
	struct smklog_req r;
	int got;

	if (!q)
		return false;
	q->st.lookups++;
	if (take(q) == 1)
		q->st.late++;	/* answered since the last look */
	if (q->fd < 0) {
		q->st.skipped_no_reader++;
		return false;
	}
	if (given_up(q, pid, start_ns) >= 0) {
		q->st.skipped_given_up++;
		return false;
	}
	if (q->busy) {
		q->st.skipped_busy++;
		return false;
	}
	refill(q, now);
	if (!q->budget_ns) {
		q->st.skipped_budget++;
		return false;
	}
	wait = q->wait_ns < q->budget_ns ? q->wait_ns : q->budget_ns;
	r = (struct smklog_req){ .op = SMKLOG_OP_JOB, .pid = pid,
				 .start_ns = start_ns, .seq = ++q->seq,
				 .uid = uid };
	got = ask(q, &r, cmd);
	if (got == -EAGAIN) {
		q->st.skipped_busy++;	/* it has not read what it was sent */
		return false;
	}
	if (got) {
		reader_died(q);
		q->st.skipped_no_reader++;
		return false;
	}
	q->busy = true;
	q->warned = false;
	q->asked_ns = now;
	q->req_pid = pid;
	q->req_uid = uid;
	q->req_start_ns = start_ns;
	q->st.stuck_since_ns = util_now_ns(CLOCK_REALTIME);
	got = wait_answer(q, now + wait);
	t1 = util_now_ns(CLOCK_MONOTONIC);
	q->st.wait_ns += t1 - now;
	q->budget_ns -= t1 - now < q->budget_ns ? t1 - now : q->budget_ns;
	if (got != 1) {
		uint64_t start;

		q->st.stuck = q->busy;
		blame(q, &start);
		return false;
	}
	if (!q->msg.found)
		return false;
	q->st.named++;
	*out = q->msg.job;
	/* the reader's strings, terminated whatever it sent */
	out->rule[sizeof(out->rule) - 1] = '\0';
	out->jobid[sizeof(out->jobid) - 1] = '\0';
	out->wildcards[sizeof(out->wildcards) - 1] = '\0';
	out->run[sizeof(out->run) - 1] = '\0';
	return true;
}

/* The engine is gone (see smklogq.h). */
void smklogq_forget(struct smklogq *q, uint32_t pid, uint64_t start_ns)
{
	struct smklog_req r = { .op = SMKLOG_OP_FORGET, .pid = pid,
				.start_ns = start_ns };
	int i;

	if (!q)
		return;
	i = given_up(q, pid, start_ns);
	if (i >= 0)
		q->gu[i].pid = 0;	/* a pid 0 is asked about never */
	if (q->fd >= 0)
		ask(q, &r, NULL);	/* a full socket: the reader's LRU */
}

/* A Snakemake process started: the reader looks for its log. */
void smklogq_watch(struct smklogq *q, uint32_t pid, uint64_t start_ns,
		   uint32_t uid)
{
	struct smklog_req r = { .op = SMKLOG_OP_WATCH, .pid = pid,
				.start_ns = start_ns, .uid = uid };

	if (q && q->fd >= 0 && given_up(q, pid, start_ns) < 0)
		ask(q, &r, NULL);	/* a full socket: found at a lookup */
}

/* Every tick (see smklogq.h). */
void smklogq_tick(struct smklogq *q, uint64_t now)
{
	uint64_t busy_ns, start;

	if (!q)
		return;
	if (take(q) == 1)
		q->st.late++;
	if (q->busy)
		blame(q, &start);
	/* now may be older than a request of this tick */
	busy_ns = q->busy && now > q->asked_ns ? now - q->asked_ns : 0;
	if (!q->busy && q->full_ns && now > q->full_ns) {
		/* no request in flight, and nothing read: as stuck */
		busy_ns = now - q->full_ns;
		if (!q->st.stuck && busy_ns >= q->wait_ns) {
			q->st.stuck_since_ns = util_now_ns(CLOCK_REALTIME) -
					       busy_ns;
			blame(q, &start);
		}
	}
	if (busy_ns >= q->wait_ns)
		q->st.stuck = true;
	else if (!q->busy && !q->full_ns)
		q->st.stuck = false;
	if (busy_ns >= q->replace_ns) {
		log_warn("smklog: the log reader (pid %d) stuck on %s for %.1f"
			 " s: killed and replaced; engine pid %u (uid %u) given"
			 " up", (int)q->pid,
			 q->st.stuck_path[0] ? q->st.stuck_path : "a file",
			 busy_ns / 1e9, q->st.stuck_pid, q->st.stuck_uid);
		q->st.replaced++;
		drop_reader(q);
	} else if (busy_ns && !q->warned && busy_ns >= 1000000000ull) {
		q->warned = true;
		log_warn("smklog: the log reader (pid %d) is stuck on %s for"
			 " engine pid %u (uid %u): Snakemake jobs are not named"
			 " while it is; it is replaced in %.1f s",
			 (int)q->pid, q->st.stuck_path[0] ? q->st.stuck_path :
			 "a file not named yet", q->st.stuck_pid,
			 q->st.stuck_uid, (q->replace_ns - busy_ns) / 1e9);
	}
	reap(q);
	if (q->pid || q->ndead < SMKLOGQ_STUCK_MAX) {
		q->full_warned = false;
	} else if (!q->full_warned) {
		q->full_warned = true;
		log_warn("smklog: %u log readers are stuck: no new one starts"
			 " until one is gone", q->ndead);
	}
	maybe_spawn(q, now);
}

/* The counters (see smklogq.h). */
void smklogq_stats(struct smklogq *q, struct smklogq_stats *st)
{
	*st = q->st;
}

/* The smklog lines of status (see smklogq.h). */
void smklogq_status(struct smklogq *q, bool show_path, FILE *out)
{
	const struct smklogq_stats *s;
	char when[32];
	struct tm tm;
	time_t t;

	if (!q) {
		fprintf(out, "smklog: off (collector.snakemake_log = false)\n");
		return;
	}
	s = &q->st;
	t = (time_t)(s->stuck_since_ns / 1000000000ull);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t, &tm));
	if (s->stuck)
		fprintf(out, "smklog: stuck on %s since %s (engine pid %u, uid"
			" %u; reader pid %d)\n",
			!show_path ? "a file (its path: to root)" :
			s->stuck_path[0] ? s->stuck_path : "a file not named yet",
			when, s->stuck_pid, s->stuck_uid, (int)s->reader);
	else if (s->reader)
		fprintf(out, "smklog: on (reader pid %d)\n", (int)s->reader);
	else
		fprintf(out, "smklog: no reader (%u stuck ones still alive, at"
			" most %d)\n", s->stuck_alive, SMKLOGQ_STUCK_MAX);
	fprintf(out, "smklog_lookups: %" PRIu64 "\n", s->lookups);
	fprintf(out, "smklog_named: %" PRIu64 "\n", s->named);
	fprintf(out, "smklog_late: %" PRIu64 "\n", s->late);
	fprintf(out, "smklog_wait_ms: %.3f\n", s->wait_ns / 1e6);
	fprintf(out, "smklog_skipped_busy: %" PRIu64 "\n", s->skipped_busy);
	fprintf(out, "smklog_skipped_budget: %" PRIu64 "\n", s->skipped_budget);
	fprintf(out, "smklog_skipped_given_up: %" PRIu64 "\n",
		s->skipped_given_up);
	fprintf(out, "smklog_skipped_no_reader: %" PRIu64 "\n",
		s->skipped_no_reader);
	fprintf(out, "smklog_readers_replaced: %" PRIu64 "\n", s->replaced);
	fprintf(out, "smklog_readers_died: %" PRIu64 "\n", s->died);
	fprintf(out, "smklog_readers_stuck_alive: %u\n", s->stuck_alive);
}
