// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_query.c - a user's report and export through the agent: the
 * request's checks, the framed reply's decoder on hostile input, and an
 * answering child (query_child_main) on a socket pair, whose output must
 * be what the store gives that uid directly.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "control.h"
#include "log.h"
#include "qcmd.h"
#include "query.h"
#include "report.h"
#include "rightsize.h"
#include "store.h"
#include "test_files.h"

/* Parse request text (a copy) into q; returns query_parse()'s result. */
static int parse(const char *text, struct report_query *q,
		 enum report_format *fmt, char *buf, size_t len)
{
	struct control_req r;
	const char *why;

	snprintf(buf, len, "%s", text);
	assert_int_equal(control_parse(buf, &r, &why), 0);
	return query_parse(&r, 10000, q, fmt, &why);
}

/* A request names one selector and a format that suits the command. */
static void test_parse(void **state)
{
	struct report_query q;
	enum report_format fmt;
	char b[512];

	(void)state;
	assert_int_equal(parse("report\tjob=42\tformat=json\tno_tree=1", &q,
			       &fmt, b, sizeof(b)), 0);
	assert_string_equal(q.job, "42");
	assert_int_equal(fmt, REPORT_JSON);
	assert_true(q.no_tree);
	assert_false(q.uid_only);
	assert_int_equal(parse("export\tsince=2h\tformat=ndjson", &q, &fmt, b,
			       sizeof(b)), 0);
	assert_true(q.since > 2799.99 && q.since < 2800.01);
	assert_int_equal(parse("cost\trun=r1\tformat=csv\tby=cost-center",
			       &q, &fmt, b, sizeof(b)), 0);
	assert_string_equal(q.run, "r1");
	assert_string_equal(q.by, "cost-center");
	assert_int_equal(fmt, REPORT_CSV);
	assert_int_equal(parse("cost\tsince=1h", &q, &fmt, b, sizeof(b)), 0);
	assert_null(q.by);
	assert_int_equal(fmt, REPORT_TEXT);
	assert_int_equal(parse("report\tpid=77", &q, &fmt, b, sizeof(b)), 0);
	assert_int_equal(q.pid, 77);
	assert_int_equal(fmt, REPORT_TEXT);
	assert_int_equal(parse("export\tpipeline=rnaseq\tformat=ndjson", &q,
			       &fmt, b, sizeof(b)), 0);
	assert_string_equal(q.pipeline, "rnaseq");
	assert_int_equal(parse("rightsize\tpipeline=snakemake\tformat=snakemake",
			       &q, &fmt, b, sizeof(b)), 0);
	assert_string_equal(q.pipeline, "snakemake");
	assert_int_equal(parse("rightsize\trun=r1", &q, &fmt, b, sizeof(b)), 0);
	assert_string_equal(q.run, "r1");
	assert_int_equal(parse("rightsize\tsince=1h\tformat=json", &q, &fmt, b,
			       sizeof(b)), 0);
	/* a job: an array's tasks, say */
	assert_int_equal(parse("rightsize\tjob=4", &q, &fmt, b, sizeof(b)), 0);
	assert_string_equal(q.job, "4");

	static const char *const bad[] = {
		"report", "report\tformat=text", "report\tjob=1\trun=2",
		"export\tjob=1\tformat=text", "report\tjob=1\tformat=ndjson",
		"export\tpid=5", "report\tpid=0", "report\tpid=99999999",
		"report\tpid=5x", "report\tjob=", "report\tsince=yesterday",
		"report\tjob=1\tuid_only=1", "report\tjob=1\tuid=0",
		"status\tjob=1", "report\tpipeline=", "report\tpipeline=a\trun=b",
		"rightsize\tjob=", "rightsize\tpid=5", "rightsize\tformat=text",
		"rightsize\trun=r\tformat=html", "rightsize\trun=r\tno_tree=1",
		"rightsize\tpipeline=a\tsince=1h",
		"status\tjob=1", "report\tjob=1\tformat=csv",
		"report\tjob=1\tby=task", "cost\tjob=1\tformat=html",
		"cost\tjob=1\tformat=ndjson", "cost\tpid=5", "cost\tjob=1\tby=queue",
		"cost\tjob=1\tno_tree=1", "cost\tformat=csv", "cost\tpipeline=a",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (parse(bad[i], &q, &fmt, b, sizeof(b)) != -EINVAL)
			fail_msg("accepted: %s", bad[i]);
}

/* Decode text fed in pieces of step bytes; returns query_reply_end(). */
static int decode(const char *text, size_t step, char **out, char **err)
{
	size_t olen = 0, elen = 0, n = strlen(text);
	FILE *o = open_memstream(out, &olen), *e = open_memstream(err, &elen);
	struct query_reply r;
	int rc;

	assert_non_null(o);
	assert_non_null(e);
	query_reply_init(&r, o, e);
	for (size_t off = 0; off < n; off += step)
		query_reply_feed(&r, text + off, off + step < n ? step : n - off);
	rc = query_reply_end(&r);
	fclose(o);
	fclose(e);
	return rc;
}

/* Frames go where they belong, whatever the pieces; the status is kept. */
static void test_reply(void **state)
{
	static const char good[] = "ok\no 5\nhelloe 4\nbad\no 0\no 2\n!\nx 1\n";
	char *o, *e;

	(void)state;
	for (size_t step = 1; step <= sizeof(good); step++) {
		assert_int_equal(decode(good, step, &o, &e), 1);
		assert_string_equal(o, "hello!\n");
		assert_string_equal(e, "bad\n");
		free(o);
		free(e);
	}
	assert_int_equal(decode("error busy: 4 running\n", 3, &o, &e), -EBUSY);
	free(o);
	free(e);
	assert_int_equal(decode("error permission denied\n", 3, &o, &e),
			 -EPERM);
	free(o);
	free(e);
}

/* Frames of a followed view, for test_reply_frames. */
struct frames {
	FILE *o;
	char *buf;
	size_t len;
	char got[4][16];
	int status[4];
	int n;
};

/* on_frame: keep what this answer wrote, start the next one. */
static void on_frame(struct query_reply *r, int status)
{
	struct frames *f = r->arg;

	fflush(f->o);
	assert_true(f->n < 4);
	snprintf(f->got[f->n], sizeof(f->got[0]), "%.*s", (int)f->len,
		 f->buf ? f->buf : "");
	f->status[f->n++] = status;
	fclose(f->o);
	free(f->buf);
	f->buf = NULL;
	f->o = open_memstream(&f->buf, &f->len);
	r->out = f->o;
}

/* A view's answers, each closed by "f STATUS", whatever the pieces; the
 * last "x" ends it; "f" above 255 is malformed. */
static void test_reply_frames(void **state)
{
	static const char text[] = "ok\no 3\nabcf 0\no 1\nde 2\n!\n"
				   "o 1\nef 1\nf 0\nx 0\n";
	char *e = NULL, *o;
	size_t elen = 0;

	(void)state;
	for (size_t step = 1; step <= sizeof(text); step++) {
		struct frames f = { 0 };
		struct query_reply r;
		FILE *ef = open_memstream(&e, &elen);

		f.o = open_memstream(&f.buf, &f.len);
		query_reply_init(&r, f.o, ef);
		r.on_frame = on_frame;
		r.arg = &f;
		for (size_t off = 0; off < sizeof(text) - 1; off += step)
			assert_int_equal(query_reply_feed(&r, text + off,
				off + step < sizeof(text) - 1 ? step :
				sizeof(text) - 1 - off), 0);
		assert_int_equal(query_reply_end(&r), 0);
		assert_int_equal(f.n, 3);
		assert_string_equal(f.got[0], "abc");
		assert_string_equal(f.got[1], "de");
		assert_string_equal(f.got[2], "");
		assert_int_equal(f.status[0], 0);
		assert_int_equal(f.status[1], 1);
		assert_int_equal(f.status[2], 0);
		fclose(f.o);
		free(f.buf);
		fclose(ef);
		assert_string_equal(e, "!\n");
		free(e);
	}
	assert_int_equal(decode("ok\nf 256\nx 0\n", 1, &o, &e), -EPROTO);
	free(o);
	free(e);
}

/* The request line: the selector, the format, follow only when asked;
 * one that does not fit is refused, not cut. */
static void test_request_line(void **state)
{
	struct report_query q = { .run = "R2", .task = "align" };
	char line[128], small[24];

	(void)state;
	assert_int_equal(query_request_line("top", &q, "json", 0, line,
					    sizeof(line)), 0);
	assert_string_equal(line, "top\trun=R2\tformat=json\ttask=align");
	assert_int_equal(query_request_line("top", &q, "json", 0.5, line,
					    sizeof(line)), 0);
	assert_string_equal(line,
			    "top\trun=R2\tformat=json\ttask=align\tfollow=0.5");
	assert_int_equal(query_request_line("top", &q, "json", 0.5, small,
					    sizeof(small)), -ENAMETOOLONG);
}

/* A cut, malformed or overlong reply is an error, not a status. */
static void test_reply_hostile(void **state)
{
	static const char *const bad[] = {
		"", "ok", "ok\n", "ok\no 5\nhell", "ok\nx 0\nmore", "ok\nz 1\na",
		"ok\no -1\n", "ok\no 5x\n", "ok\no 99999999999999999999\n",
		"ok\no 2097152\n", "ok\nx 256\n", "ok\nx\n", "ok\no\n",
		"ok\nxx 1\n", "ok\no 000000000000000000000000000000001\na",
		"OK\nx 0\n", "\x1b]0;x\a\nx 0\n",
	};
	char *o, *e;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (decode(bad[i], 1, &o, &e) != -EPROTO)
			fail_msg("accepted: \"%s\"", bad[i]);
		free(o);
		free(e);
	}
}

/* Put a process record of uid with id and comm. */
static void put_proc(struct store *s, const char *id, int uid, int pid)
{
	char buf[512];
	int n = snprintf(buf, sizeof(buf),
			 "{\"type\":\"process\",\"id\":\"%s\",\"host\":\"n1\","
			 "\"pid\":%d,\"uid\":%d,\"comm\":\"c%d\",\"job\":null,"
			 "\"start_time\":\"2026-03-01T10:00:00.000000Z\","
			 "\"end_time\":\"2026-03-01T10:00:0%d.000000Z\"}",
			 id, pid, uid, pid, pid % 10);

	assert_int_equal(store_put_json(s, buf, (size_t)n), 0);
}

/* This process's pid, as the agent passes its own to the child it
 * starts (the child's parent). */
static char *agent_pid(void)
{
	static char pid[24];

	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	return pid;
}

/*
 * Run query_child_main() in a child on one end of a socket pair as the
 * agent would, decode what it sends; returns query_reply_end().
 */
static int ask_child(char **argv, int argc, char **out, char **err)
{
	size_t olen = 0, elen = 0;
	FILE *o = open_memstream(out, &olen), *e = open_memstream(err, &elen);
	struct query_reply r;
	char buf[4096];
	int sv[2], st, rc;
	ssize_t n;
	pid_t pid;

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(sv[1], 0);
		_exit(query_child_main(argc, argv));
	}
	close(sv[1]);
	query_reply_init(&r, o, e);
	while ((n = read(sv[0], buf, sizeof(buf))) > 0)
		query_reply_feed(&r, buf, (size_t)n);
	close(sv[0]);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	rc = query_reply_end(&r);
	fclose(o);
	fclose(e);
	/* the child's own status is the one it sent */
	if (rc >= 0)
		assert_int_equal(WEXITSTATUS(st), rc);
	return rc;
}

/* Remove the store db (and its -wal, -shm) and its folder dir. */
static void remove_store(const char *dir, const char *db)
{
	for (const char *const *x = (const char *const[]){ "", "-wal", "-shm",
							   NULL }; *x; x++) {
		char p[96];

		snprintf(p, sizeof(p), "%s%s", db, *x);
		unlink(p);
	}
	rmdir(dir);
}

/*
 * The child answers with exactly what the store gives the uid directly,
 * its messages and its status; everything for "all".
 */
static void test_child(void **state)
{
	char dir[] = "/tmp/jt_query_XXXXXX", db[64], *o, *e, *direct = NULL;
	char *argv[] = { "jobtraced", QUERY_CHILD_ARG, agent_pid(), db,
			 "1001", "export", "since=@1", "format=ndjson", NULL };
	struct report_query q = { .since = 1, .uid_only = true, .uid = 1001 };
	struct store *s = NULL;
	size_t dlen = 0;
	FILE *d;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(db, sizeof(db), "%s/jobtrace.db", dir);
	assert_int_equal(store_open(db, false, &s), 0);
	put_proc(s, "a1", 1000, 11);
	put_proc(s, "b1", 1001, 12);
	put_proc(s, "b2", 1001, 13);
	put_proc(s, "r1", 0, 14);
	assert_int_equal(store_flush(s), 4);
	store_close(s);

	d = open_memstream(&direct, &dlen);
	assert_int_equal(qcmd_run_path(qcmd_find("export"), db, &q, NULL, d), 0);
	fclose(d);
	assert_int_equal(ask_child(argv, 8, &o, &e), 0);
	assert_string_equal(o, direct);
	assert_non_null(strstr(o, "\"b1\""));
	assert_non_null(strstr(o, "\"b2\""));
	assert_null(strstr(o, "\"a1\""));
	assert_null(strstr(o, "\"r1\""));
	assert_string_equal(e, "");
	free(o);
	free(e);
	free(direct);

	argv[4] = "all";
	assert_int_equal(ask_child(argv, 8, &o, &e), 0);
	assert_non_null(strstr(o, "\"a1\""));
	assert_non_null(strstr(o, "\"r1\""));
	free(o);
	free(e);

	/* nothing of uid 1002: the direct path's message and status 1 */
	argv[4] = "1002";
	assert_int_equal(ask_child(argv, 8, &o, &e), 1);
	assert_string_equal(o, "");
	assert_non_null(strstr(e, "jobtrace: no records for since"));
	assert_non_null(strstr(e, db));
	free(o);
	free(e);

	remove_store(dir, db);
}

/* A new folder dir with a store db (len bytes) of uid 1001's b1. */
static void store_of_b1(char *dir, char *db, size_t len)
{
	struct store *s = NULL;

	assert_non_null(mkdtemp(dir));
	snprintf(db, len, "%s/jobtrace.db", dir);
	assert_int_equal(store_open(db, false, &s), 0);
	put_proc(s, "b1", 1001, 12);
	assert_int_equal(store_flush(s), 1);
	store_close(s);
}

/*
 * Start query_child_main() as a view's child (*pid) on a socket pair whose
 * other end it returns; r decodes what it reads there into f.
 */
static int start_view(char **argv, int argc, struct frames *f,
		      struct query_reply *r, pid_t *pid)
{
	int sv[2];

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	*pid = fork();
	assert_true(*pid >= 0);
	if (*pid == 0) {
		dup2(sv[1], 0);
		_exit(query_child_main(argc, argv));
	}
	close(sv[1]);
	f->o = open_memstream(&f->buf, &f->len);
	query_reply_init(r, f->o, stderr);
	r->on_frame = on_frame;
	r->arg = f;
	return sv[0];
}

/*
 * A top view that stays open (follow=0.5): one child sends an answer
 * every 0.5 s, each the top JSON of the store, until the reader closes,
 * and then ends; follow out of bounds, not a number, or on another
 * command is refused with a line saying why.
 */
static void test_child_follow(void **state)
{
	char dir[] = "/tmp/jt_query_XXXXXX", db[64], buf[4096], *o, *e;
	char *argv[] = { "jobtraced", QUERY_CHILD_ARG, agent_pid(), db,
			 "1001", "top", "since=@1", "format=json", "follow=0.5",
			 NULL };
	static const char *const bad[][2] = {
		{ "top", "follow=0" }, { "top", "follow=0.2" },
		{ "top", "follow=abc" },
		{ "top", "follow=4000" }, { "top", "follow=61" },
		{ "top", "follow=" },
		{ "export", "follow=1" },
	};
	struct frames f = { 0 };
	struct query_reply r;
	int fd, st = -1;
	pid_t pid;
	ssize_t n;

	(void)state;
	store_of_b1(dir, db, sizeof(db));

	fd = start_view(argv, 9, &f, &r, &pid);
	while (f.n < 3 && (n = read(fd, buf, sizeof(buf))) > 0)
		assert_int_equal(query_reply_feed(&r, buf, (size_t)n), 0);
	assert_int_equal(f.n, 3);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(f.status[i], 0);
		assert_memory_equal(f.got[i], "{\"time\":", 8);
	}
	/* the reader goes: the child ends within a frame or two */
	close(fd);
	for (int i = 0; i < 200 && st < 0; i++) {
		if (waitpid(pid, &st, WNOHANG) != pid)
			st = -1;
		if (st < 0)
			usleep(10000);
	}
	if (st < 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		fail_msg("the view's child outlived its reader by 2 s");
	}
	fclose(f.o);
	free(f.buf);

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		argv[5] = (char *)bad[i][0];
		argv[8] = (char *)bad[i][1];
		assert_int_equal(ask_child(argv, 9, &o, &e), -EPERM);
		free(o);
		free(e);
	}
	remove_store(dir, db);
}

/*
 * A view's child whose agent is gone before it ran (its parent is not the
 * pid the agent passed: it was reparented) sends one answer and ends with
 * "x 0", rather than frames of a store nobody writes until its life ends;
 * an agent pid missing (the arguments of an agent older than the child)
 * or not a pid is refused with a line saying why.
 */
static void test_child_agent(void **state)
{
	char dir[] = "/tmp/jt_query_XXXXXX", db[64], buf[4096], other[24];
	char *argv[] = { "jobtraced", QUERY_CHILD_ARG, other, db, "1001",
			 "top", "since=@1", "format=json", "follow=0.5", NULL };
	char *old[] = { "jobtraced", QUERY_CHILD_ARG, db, "1001", "top",
			"since=@1", "format=json", NULL };
	static const char *const bad[] = { "", "0", "-1", "+12", " 12", "12x",
					   "012", "99999999999" };
	struct pollfd p = { .events = POLLIN };
	struct frames f = { 0 };
	struct query_reply r;
	int fd, st;
	ssize_t n = 1;
	char *o, *e;
	pid_t pid;

	(void)state;
	store_of_b1(dir, db, sizeof(db));

	/* the child's parent is this process; its agent, another one */
	snprintf(other, sizeof(other), "%d", (int)getppid());
	fd = start_view(argv, 9, &f, &r, &pid);
	/* up to its end, a second frame (0.5 s after the first) or 5 s */
	p.fd = fd;
	while (f.n < 2 && n > 0 && poll(&p, 1, 5000) > 0 &&
	       (n = read(fd, buf, sizeof(buf))) > 0)
		assert_int_equal(query_reply_feed(&r, buf, (size_t)n), 0);
	close(fd);
	if (n)
		kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	fclose(f.o);
	free(f.buf);
	assert_int_equal(f.n, 1);
	assert_int_equal(f.status[0], 0);
	assert_int_equal(query_reply_end(&r), 0);

	assert_int_equal(ask_child(old, 8, &o, &e), -EPERM);
	free(o);
	free(e);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		argv[2] = (char *)bad[i];
		assert_int_equal(ask_child(argv, 9, &o, &e), -EPERM);
		free(o);
		free(e);
	}
	remove_store(dir, db);
}

/* Put a process of uid with task align in run r<k> of pipeline p. */
static void put_task(struct store *s, int uid, int k)
{
	char buf[768];
	int n = snprintf(buf, sizeof(buf),
			 "{\"type\":\"process\",\"id\":\"t%d-%d\",\"host\":"
			 "\"n1\",\"pid\":%d,\"uid\":%d,\"job\":{\"id\":\"j%d-%d\","
			 "\"run\":\"r%d\",\"pipeline\":\"p\",\"task\":\"align\"},"
			 "\"start_time\":\"2026-03-01T10:00:00.000000Z\","
			 "\"end_time\":\"2026-03-01T10:00:0%d.000000Z\","
			 "\"cpu\":{\"user_s\":1,\"sys_s\":0},"
			 "\"mem\":{\"peak_rss_bytes\":%d}}",
			 uid, k, 100 + k, uid, uid, k, k, k, k * 100000000);

	assert_int_equal(store_put_json(s, buf, (size_t)n), 0);
}

/* A user's rightsize through the child: what the store gives that uid. */
static void test_child_rightsize(void **state)
{
	char dir[] = "/tmp/jt_query_XXXXXX", db[64], *o, *e, *direct = NULL;
	char *argv[] = { "jobtraced", QUERY_CHILD_ARG, agent_pid(), db,
			 "1001", "rightsize", "pipeline=p", "format=json", NULL };
	struct report_query q = { .pipeline = "p", .uid_only = true,
				  .uid = 1001 };
	struct store *s = NULL;
	size_t dlen = 0;
	FILE *d;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(db, sizeof(db), "%s/jobtrace.db", dir);
	assert_int_equal(store_open(db, false, &s), 0);
	for (int k = 1; k <= 3; k++)
		put_task(s, 1000, k);
	put_task(s, 1001, 1);
	put_task(s, 1001, 2);
	assert_int_equal(store_flush(s), 5);
	store_close(s);

	d = open_memstream(&direct, &dlen);
	assert_int_equal(qcmd_run_path(qcmd_find("rightsize"), db, &q,
					"json", d), 0);
	fclose(d);
	assert_int_equal(ask_child(argv, 8, &o, &e), 0);
	assert_string_equal(o, direct);
	assert_non_null(strstr(o, "\"task\":\"align\",\"runs\":2,"));
	assert_string_equal(e, "");
	free(o);
	free(e);
	free(direct);

	/* everything: 3 runs, a setting in Snakemake's form */
	argv[4] = "all";
	argv[7] = "format=snakemake";
	assert_int_equal(ask_child(argv, 8, &o, &e), 0);
	assert_non_null(strstr(o, "\n  - \"align:mem_mib=400\"\n"));
	free(o);
	free(e);
	test_remove_store(db, dir);
}

/* Run every query test. */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_reply),
		cmocka_unit_test(test_reply_hostile),
		cmocka_unit_test(test_reply_frames),
		cmocka_unit_test(test_request_line),
		cmocka_unit_test(test_child),
		cmocka_unit_test(test_child_rightsize),
		cmocka_unit_test(test_child_follow),
		cmocka_unit_test(test_child_agent),
	};

	log_init("test_query", 0, LOG_LVL_ERROR);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
