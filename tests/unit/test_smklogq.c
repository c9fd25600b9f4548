// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_smklogq.c - the loop's side of the Snakemake log reader
 * (smklogq.h) against the real reader, a child process (this program run
 * as `test_smklogq --smklog-reader`), without root:
 *  - a lookup is answered from the log this process keeps open, in well
 *    under the wait;
 *  - a reader that does not answer (stopped with SIGSTOP: what a read on
 *    a hung file system looks like from the loop) costs one wait, at most
 *    wait_ms; the next lookups are skipped at once and counted, forgets
 *    never block however many; status says stuck, naming the engine;
 *  - after replace_ms it is killed and replaced: the engine is given up,
 *    another engine's lookup is answered by the new reader;
 *  - a late answer is counted late, not given; the waits of a second
 *    stay within the budget;
 *  - smklogq_stop() returns at once with the reader stopped, and the
 *    reader is gone;
 *  - a watched engine's log is found before the engine asks, and read
 *    after the engine closed it (a short run's end).
 */
#include <errno.h>
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

#include "smklog.h"
#include "smklogq.h"
#include "util.h"

#define WAIT_MS 30
#define REPLACE_MS 400

static const char log_text[] =
	"[Fri Nov 27 14:19:25 2026]\n"
	"rule make_data:\n"
	"    output: out/a.txt\n"
	"    jobid: 1\n"
	"    wildcards: s=a\n"
	"\n"
	"[Fri Nov 27 14:19:25 2026]\n"
	"rule make_data:\n"
	"    output: out/b.txt\n"
	"    jobid: 2\n"
	"    wildcards: s=b\n"
	"\n";

static char dir[] = "/tmp/jt_smklogq_XXXXXX";
static char path[256];
static FILE *log_file;

/* A Snakemake log of two jobs, kept open by this process. */
static int setup(void **state)
{
	char sub[256];

	(void)state;
	if (!mkdtemp(dir))
		return -1;
	snprintf(sub, sizeof(sub), "%s/.snakemake", dir);
	mkdir(sub, 0700);
	snprintf(sub, sizeof(sub), "%s/.snakemake/log", dir);
	mkdir(sub, 0700);
	snprintf(path, sizeof(path), "%s/2026-11-27T141925.065602.snakemake.log",
		 sub);
	log_file = fopen(path, "w");
	if (!log_file)
		return -1;
	fputs(log_text, log_file);
	fflush(log_file);
	return 0;
}

/* Remove the log. */
static int teardown(void **state)
{
	char sub[256];

	(void)state;
	fclose(log_file);
	unlink(path);
	snprintf(sub, sizeof(sub), "%s/.snakemake/log", dir);
	rmdir(sub);
	snprintf(sub, sizeof(sub), "%s/.snakemake", dir);
	rmdir(sub);
	rmdir(dir);
	return 0;
}

/* Milliseconds since t0 (CLOCK_MONOTONIC ns). */
static double ms_since(uint64_t t0)
{
	return (util_now_ns(CLOCK_MONOTONIC) - t0) / 1e6;
}

/*
 * A reader of this program with the test's wait and replace times, once
 * it answers (its start, an exec, may take longer than a wait): its first
 * lookups, of engine (pid 1, 1), which has no log, are not the tests'.
 */
static struct smklogq *start(unsigned budget_ms, struct smklogq_stats *st0)
{
	struct smklogq_opts o = { .exe = "/proc/self/exe", .wait_ms = WAIT_MS,
				  .budget_ms = budget_ms,
				  .replace_ms = REPLACE_MS };
	struct rules_engine_job j;
	struct smklogq *q = NULL;

	assert_int_equal(smklogq_start(&o, &q), 0);
	for (int i = 0; i < 100; i++) {
		smklogq_job(q, 1, 1, getuid(), "true", &j);
		smklogq_stats(q, st0);
		if (!st0->stuck)
			break;	/* answered within the wait */
		usleep(10000);
		smklogq_tick(q, util_now_ns(CLOCK_MONOTONIC));
	}
	assert_false(st0->stuck);
	smklogq_stats(q, st0);
	return q;
}

/* The reader's pid now. */
static pid_t reader_of(struct smklogq *q)
{
	struct smklogq_stats st;

	smklogq_stats(q, &st);
	return st.reader;
}

/* Ask for the job of cmd of engine (this process, start_ns); its time in
 * *ms. */
static bool ask(struct smklogq *q, uint64_t start_ns, const char *cmd,
		struct rules_engine_job *j, double *ms)
{
	uint64_t t0 = util_now_ns(CLOCK_MONOTONIC);
	bool r = smklogq_job(q, (uint32_t)getpid(), start_ns, getuid(), cmd, j);

	*ms = ms_since(t0);
	return r;
}

/* Is pid gone (reaped by the queue, or by this wait) within 2 s? */
static bool gone(pid_t pid)
{
	for (int i = 0; i < 200; i++) {
		pid_t r = waitpid(pid, NULL, WNOHANG);

		if (r == pid || (r < 0 && errno == ECHILD))
			return true;
		usleep(10000);
	}
	return false;
}

/* The status text of q, into buf. */
static void status_of(struct smklogq *q, bool show_path, char *buf,
		      size_t len)
{
	FILE *f = fmemopen(buf, len, "w");

	assert_non_null(f);
	smklogq_status(q, show_path, f);
	fclose(f);
}

/* Answered from the log, within the wait. */
static void test_answer(void **state)
{
	struct smklogq_stats st, st0;
	struct smklogq *q = start(0, &st0);
	struct rules_engine_job j;
	char text[4096], want[64];
	double ms;

	(void)state;
	/* two jobs, no evidence: none */
	assert_false(ask(q, 7, "set -euo pipefail;  true", &j, &ms));
	assert_true(ask(q, 7, "set -euo pipefail;  touchmem > out/b.txt", &j,
			&ms));
	assert_string_equal(j.rule, "make_data");
	assert_string_equal(j.wildcards, "s=b");
	assert_string_equal(j.run, "2026-11-27T141925.065602");
	assert_true(ms < WAIT_MS);
	assert_true(ask(q, 7, "touchmem > out/a.txt", &j, &ms));
	assert_string_equal(j.jobid, "1");
	smklogq_stats(q, &st);
	assert_int_equal(st.lookups - st0.lookups, 3);
	assert_int_equal(st.named - st0.named, 2);
	assert_int_equal(st.late + st.skipped_busy + st.skipped_budget,
			 st0.late + st0.skipped_busy + st0.skipped_budget);
	status_of(q, true, text, sizeof(text));
	assert_non_null(strstr(text, "smklog: on (reader pid "));
	snprintf(want, sizeof(want), "smklog_named: %llu\n",
		 (unsigned long long)st.named);
	assert_non_null(strstr(text, want));
	smklogq_stop(q);
}

/* A reader that never answers: one bounded wait, then skipped at once;
 * replaced after replace_ms, its engine given up. */
static void test_stuck(void **state)
{
	struct smklogq_stats st, st0;
	struct smklogq *q = start(0, &st0);
	struct rules_engine_job j;
	char text[8192], want[128];
	pid_t r1, r2;
	uint64_t t0;
	double ms;

	(void)state;
	assert_true(ask(q, 7, "touchmem > out/a.txt", &j, &ms));
	r1 = reader_of(q);
	assert_int_equal(kill(r1, SIGSTOP), 0);
	assert_false(ask(q, 7, "touchmem > out/b.txt", &j, &ms));
	print_message("# a lookup of the stopped reader: %.1f ms\n", ms);
	assert_true(ms >= WAIT_MS - 1 && ms < WAIT_MS + 15);
	for (int i = 0; i < 100; i++) {
		assert_false(ask(q, 7, "touchmem > out/b.txt", &j, &ms));
		assert_true(ms < 2);
	}
	/* forgets never wait: the socket fills, they are dropped */
	t0 = util_now_ns(CLOCK_MONOTONIC);
	for (uint32_t i = 0; i < 100000; i++)
		smklogq_forget(q, 100000 + i, i);
	print_message("# 100000 forgets to the stopped reader: %.1f ms\n",
		      ms_since(t0));
	assert_true(ms_since(t0) < 2000);
	smklogq_stats(q, &st);
	assert_true(st.stuck);
	assert_int_equal(st.skipped_busy - st0.skipped_busy, 100);
	assert_int_equal(st.stuck_pid, (uint32_t)getpid());
	status_of(q, true, text, sizeof(text));
	snprintf(want, sizeof(want), "(engine pid %d, uid %u; reader pid %d)",
		 (int)getpid(), (unsigned)getuid(), (int)r1);
	assert_non_null(strstr(text, "smklog: stuck on "));
	assert_non_null(strstr(text, want));
	/* not privileged: no path */
	status_of(q, false, text, sizeof(text));
	assert_non_null(strstr(text, "smklog: stuck on a file (its path: to"
				     " root)"));
	/* replace_ms after the lookup: killed (the stop does not keep it)
	 * and replaced */
	usleep(REPLACE_MS * 1000);
	smklogq_tick(q, util_now_ns(CLOCK_MONOTONIC));
	smklogq_stats(q, &st);
	assert_int_equal(st.replaced, 1);
	assert_true(st.stuck_alive <= 1);	/* reaped already, or not */
	assert_false(st.stuck);
	r2 = reader_of(q);
	assert_true(r2 > 0 && r2 != r1);
	assert_true(gone(r1));
	smklogq_tick(q, util_now_ns(CLOCK_MONOTONIC));
	smklogq_stats(q, &st);
	assert_int_equal(st.stuck_alive, 0);
	/* the engine is given up; another one is read by the new reader */
	assert_false(ask(q, 7, "touchmem > out/b.txt", &j, &ms));
	smklogq_stats(q, &st);
	assert_int_equal(st.skipped_given_up, 1);
	assert_true(ask(q, 8, "touchmem > out/b.txt", &j, &ms));
	assert_string_equal(j.jobid, "2");
	/* its end forgets the given up engine: asked again */
	smklogq_forget(q, (uint32_t)getpid(), 7);
	assert_true(ask(q, 7, "touchmem > out/a.txt", &j, &ms));
	smklogq_stop(q);
}

/*
 * A reader that reads nothing with no lookup in flight (stuck in a
 * watched engine's file): the socket fills with watches, a lookup cannot
 * be sent and is skipped at once; after replace_ms it is replaced.
 */
static void test_full(void **state)
{
	struct smklogq_stats st, st0;
	struct smklogq *q = start(0, &st0);
	struct rules_engine_job j;
	uint64_t t0 = util_now_ns(CLOCK_MONOTONIC);
	pid_t r1 = reader_of(q);
	double ms;

	(void)state;
	kill(r1, SIGSTOP);
	for (uint32_t i = 0; i < 100000; i++)
		smklogq_watch(q, 1000000 + i, i, getuid());
	assert_false(ask(q, 7, "touchmem > out/a.txt", &j, &ms));
	assert_true(ms < 2);
	smklogq_stats(q, &st);
	assert_int_equal(st.skipped_busy - st0.skipped_busy, 1);
	usleep(WAIT_MS * 1000);
	smklogq_tick(q, util_now_ns(CLOCK_MONOTONIC));
	smklogq_stats(q, &st);
	assert_true(st.stuck);
	while (ms_since(t0) < REPLACE_MS + 10)
		usleep(10000);
	smklogq_tick(q, util_now_ns(CLOCK_MONOTONIC));
	smklogq_stats(q, &st);
	assert_int_equal(st.replaced, 1);
	assert_true(reader_of(q) > 0 && reader_of(q) != r1);
	assert_true(gone(r1));
	assert_true(ask(q, 7, "touchmem > out/a.txt", &j, &ms));
	smklogq_stop(q);
}

/* A late answer is dropped; the waits stay within the budget. */
static void test_late_and_budget(void **state)
{
	struct smklogq_stats st, st0;
	struct smklogq *q = start(50, &st0);
	struct rules_engine_job j;
	uint64_t t0 = util_now_ns(CLOCK_MONOTONIC), late = st0.late;
	double ms, waited = 0, first = 0;
	pid_t r;

	(void)state;
	r = reader_of(q);
	assert_true(ask(q, 7, "touchmem > out/a.txt", &j, &ms));
	for (int i = 0; i < 3; i++) {
		uint64_t skipped;

		smklogq_stats(q, &st);
		skipped = st.skipped_budget;
		kill(r, SIGSTOP);
		ask(q, 9 + i, "touchmem > out/b.txt", &j, &ms);
		waited += ms;
		if (!i)
			first = ms;
		kill(r, SIGCONT);
		smklogq_stats(q, &st);
		if (st.skipped_budget > skipped)
			continue;	/* not asked: no answer to come */
		/* the answer comes: counted late, the reader free again */
		late++;
		for (int k = 0; k < 200 && st.late < late; k++) {
			usleep(5000);
			smklogq_tick(q, util_now_ns(CLOCK_MONOTONIC));
			smklogq_stats(q, &st);
		}
		assert_int_equal(st.late, late);
		assert_false(st.stuck);
	}
	smklogq_stats(q, &st);
	print_message("# 3 lookups of a stopped reader waited %.1f ms (the"
		      " first %.1f; budget 50 ms a second, %.0f ms elapsed),"
		      " %llu skipped\n", waited, first, ms_since(t0),
		      (unsigned long long)(st.skipped_budget -
					   st0.skipped_budget));
	/* the first a whole wait; all: 50 ms, what refilled since, 2 ms
	 * of slack a wait */
	assert_true(first >= WAIT_MS - 1);
	assert_true(waited <= 50 + ms_since(t0) * 50 / 1000 + 6);
	assert_int_equal(st.named - st0.named, 1);
	smklogq_stop(q);
}

/* Does process pid have path open (a link of /proc/PID/fd)? */
static bool has_open(pid_t pid, const char *file)
{
	char fds[64], link[600], target[512];

	for (int fd = 0; fd < 64; fd++) {
		ssize_t n;

		snprintf(fds, sizeof(fds), "/proc/%d/fd", (int)pid);
		snprintf(link, sizeof(link), "%s/%d", fds, fd);
		n = readlink(link, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		if (!strcmp(target, file))
			return true;
	}
	return false;
}

/*
 * An engine (a child holding the log open) is watched: the reader opens
 * its log before any lookup; the engine closes it; the lookup still finds
 * the job.  Without the watch the lookup would find no log.
 */
static void test_watch(void **state)
{
	struct smklogq_stats st0;
	struct smklogq *q = start(0, &st0);
	struct rules_engine_job j;
	int go[2], done[2];
	pid_t engine;
	char c;
	bool found = false;

	(void)state;
	assert_int_equal(pipe(go), 0);
	assert_int_equal(pipe(done), 0);
	engine = fork();
	assert_true(engine >= 0);
	if (!engine) {
		FILE *f;

		close(fileno(log_file));	/* the test's, not the engine's */
		f = fopen(path, "r");

		/* open, wait for the word, close, say so, wait to be killed */
		if (!f || write(done[1], "o", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(1);
		fclose(f);
		if (write(done[1], "c", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	assert_int_equal(read(done[0], &c, 1), 1);
	smklogq_watch(q, (uint32_t)engine, 5, getuid());
	for (int i = 0; i < 500 && !found; i++) {
		found = has_open(reader_of(q), path);
		if (!found)
			usleep(10000);
	}
	assert_true(found);
	assert_int_equal(write(go[1], "g", 1), 1);
	assert_int_equal(read(done[0], &c, 1), 1);
	assert_false(has_open(engine, path));
	assert_true(smklogq_job(q, (uint32_t)engine, 5, getuid(),
				"touchmem > out/a.txt", &j));
	assert_string_equal(j.jobid, "1");
	/* an engine not watched, its log closed: none */
	assert_false(smklogq_job(q, (uint32_t)engine, 6, getuid(),
				 "touchmem > out/b.txt", &j));
	kill(engine, SIGKILL);
	waitpid(engine, NULL, 0);
	close(go[0]);
	close(go[1]);
	close(done[0]);
	close(done[1]);
	smklogq_stop(q);
}

/* Stopping with the reader stuck returns at once; the reader is gone. */
static void test_stop_stuck(void **state)
{
	struct smklogq_stats st0;
	struct smklogq *q = start(0, &st0);
	struct rules_engine_job j;
	uint64_t t0;
	double ms;
	pid_t r;

	(void)state;
	r = reader_of(q);
	kill(r, SIGSTOP);
	assert_false(ask(q, 7, "touchmem > out/a.txt", &j, &ms));
	t0 = util_now_ns(CLOCK_MONOTONIC);
	smklogq_stop(q);
	print_message("# stop with the reader stuck: %.2f ms\n", ms_since(t0));
	assert_true(ms_since(t0) < 50);
	assert_true(gone(r));
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_answer),
		cmocka_unit_test(test_stuck),
		cmocka_unit_test(test_full),
		cmocka_unit_test(test_late_and_budget),
		cmocka_unit_test(test_stop_stuck),
		cmocka_unit_test(test_watch),
	};

	/* the reader the tests start: this program again */
	if (argc > 1 && !strcmp(argv[1], SMKLOG_READER_ARG))
		return smklog_reader_main(0);
	return cmocka_run_group_tests(tests, setup, teardown);
}
