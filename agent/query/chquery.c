// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * chquery.c - read records back from ClickHouse into a SQLite store, so
 * that `jobtrace report` and `export` run their own SQL on them.
 *
 * Every table the agent fills (see chschema.c) keeps the record verbatim
 * in `json` and typed copies of the fields a selector needs: job_id,
 * job_run, pid, ppid, host, start_time, end_time and time, in whole
 * seconds.  The queries ask for a superset of what the selector means (a
 * second's worth at the --since boundary, by ppid for --pid) and the
 * local store narrows it exactly.  No FINAL: a record stored twice after a
 * retry comes back twice with the same id and the store keeps one.
 *
 * ClickHouse 18.16 has no query parameters, so values from the command
 * line are written as string literals (chsql.h), quotes and backslashes
 * escaped and control characters refused.  Answers are TabSeparated,
 * unescaped here:
 * a record's text reaches the store byte for byte whatever it contains.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "chquery.h"
#include "chsql.h"
#include "http.h"
#include "log.h"
#include "util.h"

#define PID_LEVELS_MAX 256	/* deeper process trees are cut there */
#define PIDS_PER_QUERY 1000	/* length of one "ppid IN (...)" list */

/* One query session against a sink. */
struct chq {
	const struct jt_sink_config *s;
	char url[256];		/* s->url for messages: no userinfo, no query */
	struct http_client *http;
	struct store *st;
	struct jbuf sql;
	struct jbuf resp;
	long loaded;
	char *err;
	size_t errlen;
};

/* Append a C string to b. */
static void put(struct jbuf *b, const char *s)
{
	jbuf_put(b, s, strlen(s));
}

/* Put the records of a TabSeparated answer into st (see chquery.h). */
int chquery_put_tsv(struct store *st, char *tsv, size_t len)
{
	char *p = tsv, *end = tsv + len;
	int n = 0, err;

	while (p < end) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		char *e = nl ? nl : end;
		size_t m = chsql_unescape(p, (size_t)(e - p));

		if (m) {
			err = store_put_json(st, p, m);
			if (err && err != -EINVAL)
				return err;
			n++;
		}
		p = e + 1;
	}
	return n;
}

/* Append "db.table" to c->sql. */
static void table_name(struct chq *c, const char *table)
{
	chsql_table(&c->sql, c->s->database, table);
}

/* Start "SELECT json FROM db.table WHERE " in c->sql. */
static void select_from(struct chq *c, const char *table)
{
	jbuf_reset(&c->sql);
	put(&c->sql, "SELECT json FROM ");
	table_name(c, table);
	put(&c->sql, " WHERE ");
}

/* Append printf output to c->sql. */
__attribute__((format(printf, 2, 3)))
static void sqlf(struct chq *c, const char *fmt, ...)
{
	char buf[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	put(&c->sql, buf);
}

/* Append a quoted value, or say which one cannot be queried. */
static int quoted(struct chq *c, const char *what, const char *v)
{
	int err = chsql_quote(&c->sql, v);

	if (err == -EINVAL)
		util_seterr(c->err, c->errlen, "%s: control characters are"
			    " not allowed in a ClickHouse query", what);
	return err;
}

/* The condition of --job: the job, and its array's tasks "ID_N" and
 * heterogeneous components "ID+N" (report.h's REPORT_JOB_SEL). */
static int job_cond(struct chq *c, const char *job)
{
	int err;

	put(&c->sql, "(job_id = ");
	err = quoted(c, "--job", job);
	sqlf(c, " OR substring(job_id, 1, %zu) IN (concat(", strlen(job) + 1);
	err = err ? err : quoted(c, "--job", job);
	put(&c->sql, ", '_'), concat(");
	err = err ? err : quoted(c, "--job", job);
	put(&c->sql, ", '+')))");
	return err;
}

/* Send c->sql and load the answer into the store; returns records. */
static int run(struct chq *c)
{
	int n, err;

	put(&c->sql, " FORMAT TabSeparated");
	if (c->sql.oom)
		return -ENOMEM;
	jbuf_reset(&c->resp);
	err = chsql_run(c->http, c->url, jbuf_str(&c->sql), NULL, NULL, 0, 0,
			&c->resp, c->err, c->errlen);
	if (err)
		return err;
	n = c->resp.len ? chquery_put_tsv(c->st, c->resp.buf, c->resp.len) : 0;
	if (n < 0) {
		util_seterr(c->err, c->errlen, "clickhouse %s: storing the"
			    " answer: %s", c->url, strerror(-n));
		return n;
	}
	c->loaded += n;
	return n;
}

/*
 * One table's records for a job, a run or a time (not --pid); tail ends
 * the query (ORDER BY, LIMIT) or is "".
 */
static int load_table(struct chq *c, const struct report_query *q,
		      const char *table, const char *tail)
{
	bool process = !strcmp(table, "process");
	int err = 0;

	select_from(c, table);
	if (q->job && *q->job) {
		err = job_cond(c, q->job);
	} else if ((q->run && *q->run) || (q->pipeline && *q->pipeline)) {
		bool run = q->run && *q->run;
		const char *col = run ? "job_run = " : "job_pipeline = ";

		if (!process) {
			put(&c->sql, "job_id IN (SELECT job_id FROM ");
			table_name(c, "process");
			put(&c->sql, " WHERE ");
		}
		put(&c->sql, col);
		err = run ? quoted(c, "--run", q->run) :
			    quoted(c, "--pipeline", q->pipeline);
		if (!process)
			put(&c->sql, ")");
	} else {
		/* whole seconds: the boundary's second is narrowed locally */
		long long t = q->since > 0 ? (long long)q->since : 0;

		if (process)
			sqlf(c, "(start_time >= toDateTime(%lld) OR"
			     " end_time >= toDateTime(%lld))", t, t);
		else
			sqlf(c, "time >= toDateTime(%lld)", t);
	}
	put(&c->sql, tail);
	return err ? err : run(c);
}

/* Query the children of the pids in [pids, pids + n) on host since t. */
static int load_children(struct chq *c, const char *host, long long t,
			 const int64_t *pids, size_t n)
{
	int err;

	select_from(c, "process");
	put(&c->sql, "host = ");
	err = quoted(c, "host", host);
	if (err)
		return err;
	sqlf(c, " AND start_time >= toDateTime(%lld) AND ppid IN (", t);
	for (size_t i = 0; i < n; i++)
		sqlf(c, "%s%" PRId64, i ? ", " : "", pids[i]);
	put(&c->sql, ")");
	return run(c);
}

/* One level of the tree: ids and pids. */
struct level {
	char (*id)[40];
	int64_t *pid;
	size_t n, cap;
};

/* Add a process to a level. */
static int level_add(struct level *l, const char *id, int64_t pid)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		char (*ids)[40] = realloc(l->id, cap * sizeof(*ids));
		int64_t *pids;

		if (!ids)
			return -ENOMEM;
		l->id = ids;
		pids = realloc(l->pid, cap * sizeof(*pids));
		if (!pids)
			return -ENOMEM;
		l->pid = pids;
		l->cap = cap;
	}
	util_strlcpy(l->id[l->n], id, sizeof(l->id[0]));
	l->pid[l->n++] = pid;
	return 0;
}

/* The loaded children of every process of cur, as the next level. */
static int next_level(sqlite3 *db, const struct level *cur,
		      struct level *next)
{
	sqlite3_stmt *st = NULL;
	int rc, err = 0;

	next->n = 0;
	rc = sqlite3_prepare_v2(db, "SELECT id, pid FROM process"
				" WHERE ppid = ?2 AND parent_id = ?1", -1, &st,
				NULL);
	if (rc != SQLITE_OK)
		return -EIO;
	for (size_t i = 0; i < cur->n && !err; i++) {
		sqlite3_bind_text(st, 1, cur->id[i], -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 2, cur->pid[i]);
		while (!err && (rc = sqlite3_step(st)) == SQLITE_ROW)
			err = level_add(next, (const char *)
					sqlite3_column_text(st, 0),
					sqlite3_column_int64(st, 1));
		if (!err && rc != SQLITE_DONE)
			err = -EIO;
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	return err;
}

/*
 * --pid: the newest process with that pid anywhere, then its descendants
 * level by level: the processes of its host started since it whose ppid is
 * a pid of the level before, kept when their parent_id links them.
 */
static int load_pid_tree(struct chq *c, int64_t pid)
{
	sqlite3 *db = store_handle(c->st);
	struct level a = { 0 }, b = { 0 }, *cur = &a, *next = &b, *tmp;
	sqlite3_stmt *st = NULL;
	char host[256] = "";
	long long t = 0;
	int n, level, err;

	select_from(c, "process");
	sqlf(c, "pid = %" PRId64 " ORDER BY start_time DESC,"
	     " start_time_us DESC, id DESC LIMIT 1", pid);
	n = run(c);
	if (n <= 0)
		return n;
	if (sqlite3_prepare_v2(db, "SELECT host, id, CAST(start_time AS"
			       " INTEGER) FROM process WHERE pid = ?1"
			       " ORDER BY start_time DESC, id DESC LIMIT 1",
			       -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	sqlite3_bind_int64(st, 1, pid);
	err = sqlite3_step(st) == SQLITE_ROW ? 0 : -EIO;
	if (!err) {
		util_strlcpy(host, sqlite3_column_text(st, 0) ?
			     (const char *)sqlite3_column_text(st, 0) : "",
			     sizeof(host));
		t = sqlite3_column_int64(st, 2);
		err = level_add(cur, (const char *)sqlite3_column_text(st, 1),
				pid);
	}
	sqlite3_finalize(st);

	for (level = 0; !err && cur->n && level < PID_LEVELS_MAX; level++) {
		for (size_t i = 0; i < cur->n && !err; i += PIDS_PER_QUERY) {
			size_t k = cur->n - i < PIDS_PER_QUERY ?
				   cur->n - i : PIDS_PER_QUERY;

			n = load_children(c, host, t, cur->pid + i, k);
			err = n < 0 ? n : 0;
		}
		if (!err)
			err = next_level(db, cur, next);
		tmp = cur;
		cur = next;
		next = tmp;
	}
	if (!err && cur->n)
		log_warn("clickhouse %s: pid %" PRId64 ": the tree is deeper"
			 " than %d levels; the report stops there", c->url,
			 pid, PID_LEVELS_MAX);
	if (err == -EIO)
		util_seterr(c->err, c->errlen, "temporary store: %s",
			    sqlite3_errmsg(db));
	free(a.id);
	free(a.pid);
	free(b.id);
	free(b.pid);
	return err;
}

/*
 * top: the condition of q on the process (process true) or sample table
 * by their own columns: the job, run or pipeline, else since (whole
 * seconds, narrowed locally).
 */
static int top_cond(struct chq *c, const struct report_query *q,
		    bool process)
{
	long long t = q->since > 0 ? (long long)q->since : 0;

	if (q->job && *q->job)
		return job_cond(c, q->job);
	if (q->run && *q->run) {
		put(&c->sql, "job_run = ");
		return quoted(c, "--run", q->run);
	}
	if (q->pipeline && *q->pipeline) {
		put(&c->sql, "job_pipeline = ");
		return quoted(c, "--pipeline", q->pipeline);
	}
	if (process)
		sqlf(c, "(start_time >= toDateTime(%lld) OR"
		     " end_time >= toDateTime(%lld))", t, t);
	else
		sqlf(c, "time >= toDateTime(%lld)", t);
	return 0;
}

/* top: "col IN (SELECT col FROM process WHERE ..) OR col IN (SELECT col
 * FROM sample WHERE ..)": the jobs or pipelines of what q selects. */
static int top_of_selected(struct chq *c, const struct report_query *q,
			   const char *col)
{
	int err;

	sqlf(c, "(%s IN (SELECT %s FROM ", col, col);
	table_name(c, "process");
	put(&c->sql, " WHERE ");
	err = top_cond(c, q, true);
	sqlf(c, ") OR %s IN (SELECT %s FROM ", col, col);
	table_name(c, "sample");
	put(&c->sql, " WHERE ");
	err = err ? err : top_cond(c, q, false);
	put(&c->sql, "))");
	return err;
}

/*
 * top: the process records of the pipelines of what q selects, in each
 * pipeline only each user's STOREQ_RECENT_RUNS latest runs, as storeq
 * reads them from the node's store (report_query.recent_runs): the same
 * expected durations, and a frame that does not grow with a pipeline's
 * history.
 */
static int recent_runs(struct chq *c, const struct report_query *q)
{
	int err;

	select_from(c, "process");
	err = top_of_selected(c, q, "job_pipeline");
	put(&c->sql, " AND (ifNull(job_user, ''), job_pipeline,"
	    " coalesce(job_run, job_id)) IN (SELECT ifNull(job_user, '') AS u,"
	    " job_pipeline, coalesce(job_run, job_id) AS r FROM ");
	table_name(c, "process");
	put(&c->sql, " WHERE ");
	err = err ? err : top_of_selected(c, q, "job_pipeline");
	sqlf(c, " GROUP BY u, job_pipeline, r ORDER BY"
	     " min(toUInt64(start_time) * 1000000 + start_time_us) DESC,"
	     " r DESC LIMIT %d BY u, job_pipeline)", STOREQ_RECENT_RUNS);
	err = err ? err : run(c);
	return err < 0 ? err : 0;
}

/*
 * What `jobtrace top` reads (topq.h) for q: the process records q
 * selects; the two latest samples of each process q selects (oldest
 * first, so that the store keeps the one before the latest); the `job`
 * and `signal` records of their jobs (requests, stalls); the process
 * records of their pipelines' latest runs (the expected durations).
 */
static int load_top(struct chq *c, const struct report_query *q)
{
	static const char *const by_job[] = { "job", "signal" };
	int err;

	select_from(c, "process");
	err = top_cond(c, q, true);
	err = err ? err : run(c);
	if (err < 0)
		return err;
	jbuf_reset(&c->sql);
	put(&c->sql, "SELECT json FROM (SELECT json, time, time_us FROM ");
	table_name(c, "sample");
	put(&c->sql, " WHERE ");
	err = top_cond(c, q, false);
	put(&c->sql, " ORDER BY time DESC, time_us DESC LIMIT 2 BY host, pid,"
	    " start_time, start_time_us) ORDER BY time, time_us");
	err = err ? err : run(c);
	for (size_t i = 0; i < 2 && err >= 0; i++) {
		select_from(c, by_job[i]);
		err = top_of_selected(c, q, "job_id");
		err = err ? err : run(c);
	}
	return err < 0 ? err : recent_runs(c, q);
}

/* Start a query session (c set up): 0, or -errno with c->err set. */
static int session_open(struct chq *c)
{
	char msg[512];
	int e;

	jbuf_init(&c->sql);
	jbuf_init(&c->resp);
	util_url_public(c->s->url, c->url, sizeof(c->url));
	e = http_client_new(c->s, &c->http, msg, sizeof(msg));
	if (e)
		util_seterr(c->err, c->errlen, "clickhouse %s: %s", c->url,
			    msg);
	return e;
}

/* End a session whose outcome is e: -errno, or the records loaded. */
static int session_close(struct chq *c, int e)
{
	http_client_free(c->http);
	jbuf_free(&c->sql);
	jbuf_free(&c->resp);
	if (e == -ENOMEM)
		util_seterr(c->err, c->errlen, "out of memory");
	return e < 0 ? e : (int)c->loaded;
}

/*
 * The condition of `jobtrace cost` on the job ids of table (job or
 * process): the job's, or the run's (its jobs' records, or its processes',
 * name it), or (--since) the jobs that ended since whole second t.
 */
static int cost_jobs(struct chq *c, const struct report_query *q,
		     long long t)
{
	int err;

	if (q->job && *q->job)
		return job_cond(c, q->job);
	if (q->run && *q->run) {
		put(&c->sql, "(job_id IN (SELECT job_id FROM ");
		table_name(c, "job");
		put(&c->sql, " WHERE job_run = ");
		err = quoted(c, "--run", q->run);
		put(&c->sql, ") OR job_id IN (SELECT job_id FROM ");
		table_name(c, "process");
		put(&c->sql, " WHERE job_run = ");
		err = err ? err : quoted(c, "--run", q->run);
		put(&c->sql, "))");
		return err;
	}
	put(&c->sql, "job_id IN (SELECT job_id FROM ");
	table_name(c, "job");
	sqlf(c, " WHERE phase = 'end' AND time >= toDateTime(%lld))", t);
	return 0;
}

/* Load what `jobtrace cost` needs for q into st (see chquery.h). */
int chquery_load_cost(const struct jt_sink_config *s,
		      const struct report_query *q, struct store *st,
		      char *err, size_t errlen)
{
	struct chq c = { .s = s, .st = st, .err = err, .errlen = errlen };
	/* whole seconds: the boundary's second is narrowed locally */
	long long t = q->since > 0 ? (long long)q->since : 0;
	int e = session_open(&c);

	if (e)
		goto cleanup;
	select_from(&c, "process");
	e = cost_jobs(&c, q, t);
	e = e ? e : run(&c);
	if (e < 0)
		goto cleanup;
	select_from(&c, "job");
	e = 0;
	if (q->job || q->run) {
		e = cost_jobs(&c, q, t);
	} else {
		/* the jobs that ended since, and those still running */
		sqlf(&c, "time >= toDateTime(%lld) OR (phase = 'start' AND"
		     " concat(host, '\t', ifNull(job_id, '')) NOT IN"
		     " (SELECT concat(host, '\t', ifNull(job_id, '')) FROM ",
		     t);
		table_name(&c, "job");
		put(&c.sql, " WHERE phase = 'end'))");
	}
	e = e ? e : run(&c);
	if (e < 0 || q->job || q->run)
		goto cleanup;
	/* each host's state at t: its last record before that second */
	select_from(&c, "host");
	sqlf(&c, "time >= toDateTime(%lld) OR (host, time) IN (SELECT host,"
	     " max(time) FROM ", t);
	table_name(&c, "host");
	sqlf(&c, " WHERE time < toDateTime(%lld) GROUP BY host)", t);
	e = run(&c);

cleanup:
	return session_close(&c, e);
}

/* Load what q selects from the sink s into st (see chquery.h). */
int chquery_load(const struct jt_sink_config *s, const struct report_query *q,
		 bool export, struct store *st, char *err, size_t errlen)
{
	return chquery_load_what(s, q, export ? CHQ_EXPORT : CHQ_REPORT, st,
				 err, errlen);
}

/* Load what q selects for what from the sink s into st (see chquery.h). */
int chquery_load_what(const struct jt_sink_config *s,
		      const struct report_query *q, enum chq_what what,
		      struct store *st, char *err, size_t errlen)
{
	bool export = what == CHQ_EXPORT;
	static const char *const all[] = {
		"process", "job", "sample", "signal", "host", NULL
	};
	struct chq c = { .s = s, .st = st, .err = err, .errlen = errlen };
	int e = 0;

	if (what == CHQ_COST || what == CHQ_SWEEP)
		e = chquery_load_cost(s, q, st, err, errlen);
	if (what == CHQ_COST || e < 0)
		return e;
	e = session_open(&c);
	if (e)
		goto cleanup;
	if (what == CHQ_TOP) {
		e = load_top(&c, q);
		goto cleanup;
	}
	if (what == CHQ_SWEEP) {
		/* the nodes' CPU and their signals (node_idle, stall) */
		e = load_table(&c, q, "process", "");
		e = e < 0 ? e : load_table(&c, q, "signal", "");
		e = e < 0 ? e : 0;
		goto cleanup;
	}
	if (q->pid) {
		e = load_pid_tree(&c, q->pid);
		goto cleanup;
	}
	for (size_t i = 0; all[i] && !e; i++) {
		const char *t = all[i];

		/* a report reads processes, and their jobs' records (a
		 * task's own job gives its memory peak, tasks.h) */
		if (!export && strcmp(t, "process") && strcmp(t, "job"))
			continue;
		/* host records belong to no job */
		if (!strcmp(t, "host") && !q->since)
			continue;
		e = load_table(&c, q, t, "");
		e = e < 0 ? e : 0;
	}
	/*
	 * a job's live processes: the latest sample of each; without them
	 * the report still stands (it shows the finished processes)
	 */
	if (!e && !export && q->job && *q->job) {
		util_seterr(err, errlen, "clickhouse %s: the samples could"
			    " not be read", c.url);
		if (load_table(&c, q, "sample", " ORDER BY time DESC, time_us"
			       " DESC LIMIT 1 BY host, pid, start_time,"
			       " start_time_us") < 0)
			log_warn("%s; the report shows no running process",
				 err);
	}

cleanup:
	return session_close(&c, e);
}
