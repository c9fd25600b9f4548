// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_query_server.c - the agent finds the jobtrace command that answers
 * a user's report: beside it, in ../bin, or in the configured bindir; one
 * that root should not run (writable by others, not a file, not
 * executable, in a folder others can change) is refused, and none at all
 * is an error that names where it looked.  A request on a socket is
 * answered by the built jobtrace command (this test's JT_BINDIR is the
 * build folder), which checks it by its table.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "config.h"
#include "qcmd.h"
#include "query.h"
#include "store.h"
#include "test_files.h"
#include "query_server.h"

/* A scratch tree: D/sbin (the agent's folder), D/bin, D/usr/bin. */
struct tree {
	char d[64], sbin[96], bin[96], usrbin[96], self[128];
};

/* Make the scratch tree. */
static int setup(void **state)
{
	struct tree *t = calloc(1, sizeof(*t));

	assert_non_null(t);
	snprintf(t->d, sizeof(t->d), "/tmp/test_query_server.XXXXXX");
	assert_non_null(mkdtemp(t->d));
	chmod(t->d, 0755);
	snprintf(t->sbin, sizeof(t->sbin), "%s/sbin", t->d);
	snprintf(t->bin, sizeof(t->bin), "%s/bin", t->d);
	snprintf(t->usrbin, sizeof(t->usrbin), "%s/usr", t->d);
	assert_int_equal(mkdir(t->sbin, 0755), 0);
	assert_int_equal(mkdir(t->bin, 0755), 0);
	assert_int_equal(mkdir(t->usrbin, 0755), 0);
	strcat(t->usrbin, "/bin");
	assert_int_equal(mkdir(t->usrbin, 0755), 0);
	snprintf(t->self, sizeof(t->self), "%s/jobtraced", t->sbin);
	*state = t;
	return 0;
}

/* Remove the scratch tree. */
static int teardown(void **state)
{
	struct tree *t = *state;
	char cmd[160];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", t->d);
	assert_int_equal(system(cmd), 0);
	free(t);
	return 0;
}

/* Put a file jobtrace of mode in dir. */
static void put(const char *dir, mode_t mode)
{
	char path[160];
	FILE *f;

	snprintf(path, sizeof(path), "%s/jobtrace", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("#!/bin/sh\n", f);
	fclose(f);
	assert_int_equal(chmod(path, mode), 0);
}

/* Remove dir's jobtrace. */
static void drop(const char *dir)
{
	char path[160];

	snprintf(path, sizeof(path), "%s/jobtrace", dir);
	unlink(path);
}

/* Find; the status, the path or the message in out. */
static int find(struct tree *t, char *out, size_t len)
{
	char why[1024];
	int err = query_server_find_cli(t->self, t->usrbin, out, len, why,
					sizeof(why));

	if (err)
		snprintf(out, len, "%s", why);
	return err;
}

/* Beside the agent first, then ../bin, then bindir. */
static void test_found(void **state)
{
	struct tree *t = *state;
	char out[1024], want[256];

	put(t->usrbin, 0755);
	assert_int_equal(find(t, out, sizeof(out)), 0);
	snprintf(want, sizeof(want), "%s/jobtrace", t->usrbin);
	assert_string_equal(out, want);
	put(t->bin, 0755);
	assert_int_equal(find(t, out, sizeof(out)), 0);
	snprintf(want, sizeof(want), "%s/jobtrace", t->bin);
	assert_string_equal(out, want);
	put(t->sbin, 0755);
	assert_int_equal(find(t, out, sizeof(out)), 0);
	snprintf(want, sizeof(want), "%s/jobtrace", t->sbin);
	assert_string_equal(out, want);
	drop(t->sbin);
	drop(t->bin);
	drop(t->usrbin);
}

/* None: the message names every place and says what to do. */
static void test_missing(void **state)
{
	struct tree *t = *state;
	char out[1024], want[256];

	assert_int_equal(find(t, out, sizeof(out)), -ENOENT);
	snprintf(want, sizeof(want), "no jobtrace beside %s (%s/jobtrace, %s/"
		 "../bin/jobtrace) nor in %s: install it with the agent",
		 t->self, t->sbin, t->sbin, t->usrbin);
	assert_string_equal(out, want);
}

/* What root should not run is refused, not skipped for the next. */
static void test_refused(void **state)
{
	struct tree *t = *state;
	char out[1024], path[160];

	snprintf(path, sizeof(path), "%s/jobtrace", t->sbin);
	put(t->usrbin, 0755);		/* a good one further on */
	put(t->sbin, 0775);
	assert_int_equal(find(t, out, sizeof(out)), -EPERM);
	assert_non_null(strstr(out, path));
	assert_non_null(strstr(out, "mode 0775"));
	put(t->sbin, 0757);
	assert_int_equal(find(t, out, sizeof(out)), -EPERM);
	put(t->sbin, 0644);
	assert_int_equal(find(t, out, sizeof(out)), -EPERM);
	assert_non_null(strstr(out, "not an executable file"));
	drop(t->sbin);
	assert_int_equal(mkdir(path, 0755), 0);
	assert_int_equal(find(t, out, sizeof(out)), -EPERM);
	assert_non_null(strstr(out, "not an executable file"));
	rmdir(path);
	/* a folder others may change: they could swap the program */
	put(t->sbin, 0755);
	assert_int_equal(chmod(t->sbin, 0777), 0);
	assert_int_equal(find(t, out, sizeof(out)), -EPERM);
	assert_non_null(strstr(out, t->sbin));
	assert_int_equal(chmod(t->sbin, 0755), 0);
	assert_int_equal(find(t, out, sizeof(out)), 0);
	drop(t->sbin);
	drop(t->usrbin);
}

/* The agent passes on exactly the requests the command table answers. */
static void test_commands(void **state)
{
	static const char *const cmds[] = QUERY_COMMANDS;
	size_t n = 0;

	(void)state;
	for (; cmds[n]; n++) {
		assert_true(n < qcmd_count);
		assert_string_equal(cmds[n], qcmd_table[n].name);
		assert_true(query_server_takes(qcmd_table[n].name));
	}
	assert_int_equal(n, qcmd_count);
	assert_false(query_server_takes("status"));
	assert_false(query_server_takes("job-start"));
	assert_false(query_server_takes("reports"));
}

/* Serve request (its text) for uid on a socket pair with a child; the
 * decoded reply: its status, output and messages (the caller frees). */
static int serve(struct query_server *qs, const char *request, uid_t uid,
		 char **out, char **err)
{
	struct control_peer peer = { .uid = uid, .gid = uid, .pid = 1 };
	size_t olen = 0, elen = 0, rlen = 0;
	FILE *o = open_memstream(out, &olen), *e = open_memstream(err, &elen);
	char line[512], buf[4096], *reply = NULL;
	FILE *r = open_memstream(&reply, &rlen);
	struct query_reply dec;
	struct control_req req;
	const char *why;
	int sv[2], rc, st;
	ssize_t n;

	snprintf(line, sizeof(line), "%s", request);
	assert_int_equal(control_parse(line, &req, &why), 0);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	rc = query_server_serve(qs, sv[1], &peer, &req, r);
	fclose(r);
	if (rc)
		fail_msg("not served: %d, '%s'", rc, reply);
	free(reply);
	close(sv[1]);
	query_reply_init(&dec, o, e);
	while ((n = read(sv[0], buf, sizeof(buf))) > 0)
		query_reply_feed(&dec, buf, (size_t)n);
	close(sv[0]);
	while (waitpid(-1, &st, 0) > 0)
		;
	fclose(o);
	fclose(e);
	rc = query_reply_end(&dec);
	if (rc < 0) {
		free(*err);
		*err = strdup(dec.error);
	}
	return rc;
}

/* The jobtrace command answers for the agent, and checks the request. */
static void test_serve(void **state)
{
	struct tree *t = *state;
	struct query_server *qs = NULL;
	struct jt_config cfg;
	struct store *st = NULL;
	char db[128], *o, *e;

	snprintf(db, sizeof(db), "%s/jobtrace.db", t->d);
	assert_int_equal(store_open(db, false, &st), 0);
	test_put_json(st, "{\"type\":\"process\",\"id\":\"b1\",\"host\":"
		      "\"n1\",\"pid\":12,\"uid\":1001,\"comm\":\"c12\","
		      "\"job\":null,\"start_time\":\"2026-03-01T10:00:00Z\","
		      "\"end_time\":\"2026-03-01T10:00:02Z\"}");
	assert_int_equal(store_flush(st), 1);
	store_close(st);
	assert_int_equal(config_defaults(&cfg), 0);
	free(cfg.sqlite_path);
	cfg.sqlite_path = strdup(db);
	assert_int_equal(query_server_new(&qs), 0);
	assert_int_equal(query_server_configure(qs, &cfg), 0);

	/* uid 1001's record, as the store has it */
	if (serve(qs, "export\tsince=@1\tformat=ndjson", 1001, &o, &e))
		fail_msg("export: '%s' '%s'", o, e);
	assert_non_null(strstr(o, "\"id\":\"b1\""));
	assert_string_equal(e, "");
	free(o);
	free(e);
	/* none of uid 1002's: the store's message and status */
	assert_int_equal(serve(qs, "export\tsince=@1\tformat=ndjson", 1002,
			       &o, &e), 1);
	assert_string_equal(o, "");
	assert_non_null(strstr(e, "no records for since"));
	free(o);
	free(e);
	/* only the command's table says what is wrong */
	assert_int_equal(serve(qs, "report\tjob=1\trun=2", 1001, &o, &e),
			 -EPERM);
	assert_string_equal(e, "report: give exactly one of job, run, pipeline,"
			    " since, pid (not empty)");
	free(o);
	free(e);
	query_server_free(qs);
	config_free(&cfg);
	/* the tree goes in teardown */
}

/*
 * Open top views (follow=) have bounds of their own: a user's fifth is
 * refused as busy while their report is still answered; every view's
 * child ends when its reader closes.
 */
static void test_views(void **state)
{
	struct tree *t = *state;
	struct control_peer peer = { .uid = 1001, .gid = 1001, .pid = 1 };
	struct query_server *qs = NULL;
	struct jt_config cfg;
	struct control_req req;
	char db[128], line[256], buf[4096], *reply = NULL;
	int sv[QUERY_MAX_FOLLOWS_PER_UID + 2][2], st;
	const char *why;
	size_t rlen = 0;
	FILE *r;
	ssize_t n;

	snprintf(db, sizeof(db), "%s/jobtrace.db", t->d);
	assert_int_equal(config_defaults(&cfg), 0);
	free(cfg.sqlite_path);
	cfg.sqlite_path = strdup(db);
	assert_int_equal(query_server_new(&qs), 0);
	assert_int_equal(query_server_configure(qs, &cfg), 0);
	for (int i = 0; i <= QUERY_MAX_FOLLOWS_PER_UID + 1; i++) {
		bool view = i <= QUERY_MAX_FOLLOWS_PER_UID;

		snprintf(line, sizeof(line), view ?
			 "top\tsince=@1\tformat=json\tfollow=5" :
			 "export\tsince=@1\tformat=ndjson");
		assert_int_equal(control_parse(line, &req, &why), 0);
		assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv[i]), 0);
		r = open_memstream(&reply, &rlen);
		n = query_server_serve(qs, sv[i][1], &peer, &req, r);
		fclose(r);
		close(sv[i][1]);
		if (i < QUERY_MAX_FOLLOWS_PER_UID) {
			assert_int_equal(n, 0);
		} else if (view) {
			assert_int_equal(n, -EBUSY);
			assert_non_null(strstr(reply, "top views open"));
		} else {
			assert_int_equal(n, 0);	/* a report is not a view */
			while (read(sv[i][0], buf, sizeof(buf)) > 0)
				;
		}
		free(reply);
		reply = NULL;
	}
	/* each open view has sent its first frame; its reader goes */
	for (int i = 0; i < QUERY_MAX_FOLLOWS_PER_UID; i++) {
		n = read(sv[i][0], buf, sizeof(buf));
		assert_true(n >= 3);
		assert_memory_equal(buf, "ok\n", 3);
	}
	for (int i = 0; i <= QUERY_MAX_FOLLOWS_PER_UID + 1; i++)
		close(sv[i][0]);
	while (waitpid(-1, &st, 0) > 0)
		;
	query_server_free(qs);
	config_free(&cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_found),
		cmocka_unit_test(test_missing),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_commands),
		cmocka_unit_test(test_serve),
		cmocka_unit_test(test_views),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
