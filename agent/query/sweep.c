// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sweep.c - `jobtrace sweep`: idle nodes, low-CPU instances and stuck
 * jobs over a period, and what they cost (sweep.h).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "costq.h"
#include "json.h"
#include "log.h"
#include "store.h"
#include "sweep.h"

/* The calculation's state. */
struct calc {
	struct store *st;
	sqlite3 *db;
	const char *where;
	const struct report_query *q;
	double now;
	struct sweep_result *r;
};

/* A stall: [a, b] of one process of a job on a host. */
struct stall {
	char *host, *job, *scheduler;
	double a, b;
	bool ongoing;
};

/* Grow *v (n elements of size) by one zeroed element; NULL: no memory. */
static void *grow(void *v, size_t n, size_t size, void **out)
{
	char *nv = realloc(v, (n + 1) * size);

	if (!nv)
		return NULL;
	memset(nv + n * size, 0, size);
	*out = nv;
	return nv + n * size;
}

/*
 * The element of *v (*n of size bytes, each led by its char * key) whose
 * key is key, added (zeroed, key copied) when new, *added then set;
 * NULL: no memory.
 */
static void *keyed(void **v, size_t *n, size_t size, const char *key,
		   bool *added)
{
	char *e;

	*added = false;
	for (size_t i = 0; i < *n; i++) {
		e = (char *)*v + i * size;
		if (!strcmp(*(char **)e, key))
			return e;
	}
	e = grow(*v, *n, size, v);
	if (!e || !(*(char **)e = strdup(key)))
		return NULL;
	(*n)++;
	*added = true;
	return e;
}

/* The node row of host, added when new; NULL: no memory. */
static struct sweep_node *node_of(struct sweep_result *r, const char *host)
{
	bool added;
	struct sweep_node *n = keyed((void **)&r->nodes, &r->nnodes,
				     sizeof(*n), host, &added);

	if (n && added)
		n->per_hour = n->up_cost = n->idle_cost = n->cpu = -1;
	return n;
}

/* The total of currency cur, added when new; NULL: no memory. */
static struct sweep_total *total_of(struct sweep_result *r, const char *cur)
{
	bool added;

	return keyed((void **)&r->totals, &r->ntotals,
		     sizeof(struct sweep_total), cur, &added);
}

/* The node of the host in column 0 of st's row in *n (NULL: no host);
 * 0 or -ENOMEM. */
static int row_node(struct calc *c, sqlite3_stmt *st, struct sweep_node **n)
{
	const char *host = (const char *)sqlite3_column_text(st, 0);

	*n = host ? node_of(c->r, host) : NULL;
	return host && !*n ? -ENOMEM : 0;
}

/*
 * Up time per host: between two consecutive host records the agent was up
 * unless the first is a stop or the next a start (it ended unseen); after
 * the last up to now unless it is a stop; clipped to [since, now].  The
 * last record's cloud and price describe the node.
 */
static int load_up(struct calc *c)
{
	static const char sql[] =
		"SELECT " JSTR("$.host") ", " JSTR("$.phase") ", time,"
		" " JNUM("$.price.per_hour") ", " JSTR("$.price.currency") ","
		" " JNUM("$.price.node_cpus") ","
		" " JSTR("$.cloud.instance_type") ","
		" " JSTR("$.cloud.lifecycle") ","
		" LEAD(" JSTR("$.phase") ") OVER w, LEAD(time) OVER w"
		" FROM record WHERE type = 'host' AND (time >= ?1 OR id IN"
		" (SELECT id FROM (SELECT id, MAX(time) FROM record"
		"  WHERE type = 'host' AND time < ?1"
		"  GROUP BY json_extract(json, '$.host'))))"
		" WINDOW w AS (PARTITION BY " JSTR("$.host") " ORDER BY time, id)"
		" ORDER BY 1, time, id";
	sqlite3_stmt *st = NULL;
	int rc, err;

	err = storeq_prepare_db(c->db, c->where, sql, c->q, &st);
	while (!err && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *phase = (const char *)sqlite3_column_text(st, 1);
		const char *next = (const char *)sqlite3_column_text(st, 8);
		bool last = sqlite3_column_type(st, 9) == SQLITE_NULL;
		double a = fmax(storeq_col_num(st, 2, 0), c->q->since);
		double b = last ? c->now : storeq_col_num(st, 9, c->now);
		struct sweep_node *n = NULL;

		err = row_node(c, st, &n);
		if (err || !n)
			continue;
		n->per_hour = storeq_col_num(st, 3, -1);
		n->currency[0] = '\0';
		storeq_col_text(st, 4, n->currency, sizeof(n->currency));
		if (!n->currency[0])
			n->per_hour = -1;	/* a price in no currency */
		n->cpus = storeq_col_num(st, 5, n->cpus);
		free(n->instance_type);
		free(n->lifecycle);
		err |= storeq_col_dup(st, 6, &n->instance_type);
		err |= storeq_col_dup(st, 7, &n->lifecycle);
		if ((phase && !strcmp(phase, "stop")) ||
		    (!last && next && !strcmp(next, "start")))
			continue;
		b = fmin(b, c->now);
		if (b > a) {
			n->up_s += b - a;
			if (n->per_hour >= 0)
				n->up_cost = fmax(n->up_cost, 0) +
					     n->per_hour * (b - a) / 3600;
		}
	}
	if (!err)
		err = storeq_step_done(c->db, c->where, rc);
	sqlite3_finalize(st);
	return err;
}

/* Idle time and cost per host: costq's idle node figures. */
static int load_idle(struct calc *c)
{
	struct report_query q = { .since = c->q->since };
	struct costq_result *cr = NULL;
	int err = costq_compute(c->st, c->where, &q, c->now, &cr);

	if (err == -ENOENT)
		return 0;
	for (size_t i = 0; !err && i < cr->nrows; i++) {
		const struct costq_row *w = &cr->rows[i];
		struct sweep_node *n;

		if (!w->idle_node)
			continue;
		n = node_of(c->r, w->name);
		if (!n) {
			err = -ENOMEM;
			break;
		}
		n->idle_s += w->idle_s;
		n->idle_cost = fmax(n->idle_cost, 0) + w->cost;
	}
	for (size_t i = 0; !err && i < cr->nunpriced; i++) {
		const struct costq_unpriced *x = &cr->unpriced[i];
		struct sweep_node *n;

		if (x->job || !x->host)
			continue;
		n = node_of(c->r, x->host);
		if (!n)
			err = -ENOMEM;
		else
			n->idle_s += x->idle_s;
	}
	costq_result_free(cr);
	return err;
}

/* A CPU column as an amount: a number above 0, else 0 (junk, text). */
#define CPU_AMOUNT(c) "(CASE WHEN typeof(" c ") IN ('integer', 'real')" \
	" AND " c " > 0 THEN " c " ELSE 0 END)"

/* The node_idle signals of the period, and the processes' CPU in it. */
static int load_signals_cpu(struct calc *c)
{
	static const char sql[] =
		"SELECT " JSTR("$.host") ", 0, COUNT(*),"
		" SUM(" JNUM("$.evidence.idle_s") ") FROM record"
		" WHERE type = 'signal' AND " JSTR("$.kind") " = 'node_idle'"
		" AND time >= ?1 GROUP BY 1"
		" UNION ALL"
		" SELECT host, 1, 0, SUM((" CPU_AMOUNT("cpu_user_s") " + "
		CPU_AMOUNT("cpu_sys_s") ") * CASE"
		"  WHEN end_time > start_time THEN"
		"  (MIN(end_time, ?2) - MAX(start_time, ?1)) /"
		"  (end_time - start_time) ELSE 1 END)"
		" FROM process WHERE since_time >= ?1 AND end_time IS NOT NULL"
		" AND end_time >= ?1 GROUP BY host";
	sqlite3_stmt *st = NULL;
	int rc, err;

	err = storeq_prepare_db(c->db, c->where, sql, c->q, &st);
	if (!err)
		sqlite3_bind_double(st, 2, c->now);
	while (!err && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct sweep_node *n = NULL;

		err = row_node(c, st, &n);
		if (err || !n)
			continue;
		if (sqlite3_column_int(st, 1)) {
			n->cpu_s += storeq_col_amount(st, 3);
		} else {
			n->idle_signals += storeq_col_u64(st, 2);
			n->signal_idle_s += storeq_col_amount(st, 3);
		}
	}
	if (!err)
		err = storeq_step_done(c->db, c->where, rc);
	sqlite3_finalize(st);
	return err;
}

/* Free n stalls and the array. */
static void stalls_free(struct stall *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].host);
		free(v[i].job);
		free(v[i].scheduler);
	}
	free(v);
}

/*
 * The stalls that overlap the period: each start record with the end
 * record of the same process and last progress (none: still stalled, up
 * to now), as [last_progress, end] clipped to [since, now].
 */
static int load_stalls(struct calc *c, struct stall **out, size_t *nout)
{
	static const char sql[] =
		"SELECT " JSTR_AT("s.json", "'$.host'") ","
		" COALESCE(s.job_id, '(none)'),"
		" " JSTR_AT("s.json", "'$.job.scheduler'") ","
		" json_extract(s.json, '$.evidence.last_progress'), s.time,"
		" (SELECT MIN(e.time) FROM record e WHERE e.type = 'signal'"
		"  AND json_extract(e.json, '$.kind') = 'stall'"
		"  AND json_extract(e.json, '$.evidence.phase') = 'end'"
		"  AND json_extract(e.json, '$.host') ="
		"      json_extract(s.json, '$.host')"
		"  AND json_extract(e.json, '$.pid') ="
		"      json_extract(s.json, '$.pid')"
		"  AND json_extract(e.json, '$.evidence.last_progress') ="
		"      json_extract(s.json, '$.evidence.last_progress'))"
		" FROM record s WHERE s.type = 'signal'"
		" AND json_extract(s.json, '$.kind') = 'stall'"
		" AND json_extract(s.json, '$.evidence.phase') = 'start'"
		" ORDER BY 1, 2, 4";
	struct stall *v = NULL, *x;
	size_t n = 0;
	sqlite3_stmt *st = NULL;
	int rc, err;

	err = storeq_prepare_db(c->db, c->where, sql, NULL, &st);
	while (!err && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		double a = storeq_col_time(st, 3, storeq_col_num(st, 4, 0));
		double b = storeq_col_num(st, 5, -1);
		bool ongoing = b < 0;

		b = fmin(ongoing ? c->now : b, c->now);
		a = fmax(a, c->q->since);
		if (sqlite3_column_type(st, 0) != SQLITE_TEXT || !(b > a))
			continue;
		x = grow(v, n, sizeof(*x), (void **)&v);
		if (!x) {
			err = -ENOMEM;
			break;
		}
		n++;
		err |= storeq_col_dup(st, 0, &x->host);
		err |= storeq_col_dup(st, 1, &x->job);
		err |= storeq_col_dup(st, 2, &x->scheduler);
		x->a = a;
		x->b = b;
		x->ongoing = ongoing;
	}
	if (!err)
		err = storeq_step_done(c->db, c->where, rc);
	sqlite3_finalize(st);
	*out = v;
	*nout = n;
	return err;
}

/* Order stalls by host, job, then start. */
static int cmp_stall(const void *a, const void *b)
{
	const struct stall *x = a, *y = b;
	int d = strcmp(x->host, y->host);

	if (!d)
		d = strcmp(x->job, y->job);
	if (d)
		return d;
	return x->a < y->a ? -1 : x->a > y->a;
}

/* One stuck row per host and job: the union of its stalls. */
static int stuck_jobs(struct calc *c)
{
	struct stall *v = NULL;
	size_t n = 0;
	int err = load_stalls(c, &v, &n);

	if (!err && n)
		qsort(v, n, sizeof(*v), cmp_stall);
	for (size_t i = 0, end; !err && i < n; i = end) {
		struct sweep_stuck *s;
		struct sweep_node *node = node_of(c->r, v[i].host);
		double reach = v[i].a;

		s = node ? grow(c->r->stuck, c->r->nstuck, sizeof(*s),
				(void **)&c->r->stuck) : NULL;
		if (!s) {
			err = -ENOMEM;
			break;
		}
		c->r->nstuck++;
		s->host = strdup(v[i].host);
		s->job = strdup(v[i].job);
		s->scheduler = v[i].scheduler ? strdup(v[i].scheduler) : NULL;
		if (!s->host || !s->job)
			err = -ENOMEM;
		s->first = v[i].a;
		for (end = i; end < n && !strcmp(v[end].host, v[i].host) &&
		     !strcmp(v[end].job, v[i].job); end++) {
			s->stalls++;
			s->ongoing |= v[end].ongoing;
			if (v[end].b > reach) {
				s->stuck_s += v[end].b - fmax(v[end].a, reach);
				reach = v[end].b;
			}
		}
		s->cost = -1;
		if (node->per_hour >= 0) {
			s->cost = node->per_hour * s->stuck_s / 3600;
			snprintf(s->currency, sizeof(s->currency), "%s",
				 node->currency);
		}
	}
	stalls_free(v, n);
	return err;
}

/* Most idle first, then by host. */
static int cmp_node(const void *a, const void *b)
{
	const struct sweep_node *x = a, *y = b;

	if (x->idle_s != y->idle_s)
		return x->idle_s > y->idle_s ? -1 : 1;
	return strcmp(x->host, y->host);
}

/* Most stuck first, then by host and job. */
static int cmp_stuck(const void *a, const void *b)
{
	const struct sweep_stuck *x = a, *y = b;
	int d;

	if (x->stuck_s != y->stuck_s)
		return x->stuck_s > y->stuck_s ? -1 : 1;
	d = strcmp(x->host, y->host);
	return d ? d : strcmp(x->job, y->job);
}

/* Each node's CPU and the totals that could have been saved. */
static int finish(struct sweep_result *r)
{
	for (size_t i = 0; i < r->nnodes; i++) {
		struct sweep_node *n = &r->nodes[i];
		struct sweep_total *t;

		if (n->cpus > 0 && n->up_s > 0) {
			n->cpu = n->cpu_s / (n->up_s * n->cpus);
			n->low_cpu = n->cpu < SWEEP_CPU_BELOW;
		}
		if (n->idle_cost < 0)
			continue;
		t = total_of(r, n->currency);
		if (!t)
			return -ENOMEM;
		t->idle += n->idle_cost;
		t->total += n->idle_cost;
	}
	for (size_t i = 0; i < r->nstuck; i++) {
		struct sweep_stuck *s = &r->stuck[i];
		struct sweep_total *t;

		if (s->cost < 0)
			continue;
		t = total_of(r, s->currency);
		if (!t)
			return -ENOMEM;
		t->stuck += s->cost;
		t->total += s->cost;
	}
	if (r->nnodes)
		qsort(r->nodes, r->nnodes, sizeof(*r->nodes), cmp_node);
	if (r->nstuck)
		qsort(r->stuck, r->nstuck, sizeof(*r->stuck), cmp_stuck);
	return 0;
}

/* Free a result. */
void sweep_result_free(struct sweep_result *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nnodes; i++) {
		free(r->nodes[i].host);
		free(r->nodes[i].instance_type);
		free(r->nodes[i].lifecycle);
	}
	for (size_t i = 0; i < r->nstuck; i++) {
		free(r->stuck[i].host);
		free(r->stuck[i].job);
		free(r->stuck[i].scheduler);
	}
	for (size_t i = 0; i < r->ntotals; i++)
		free(r->totals[i].currency);
	free(r->nodes);
	free(r->stuck);
	free(r->totals);
	free(r);
}

/* Sweep the store over [since, now] (see sweep.h). */
int sweep_compute(struct store *st, const char *where,
		  const struct report_query *q, double now,
		  struct sweep_result **out)
{
	struct calc c = { .st = st, .db = store_handle(st), .where = where, .q = q,
			  .now = now };
	int err;

	*out = NULL;
	if (!(q->since > 0) || (q->job && *q->job) || (q->run && *q->run) ||
	    (q->pipeline && *q->pipeline) || q->pid) {
		log_error("sweep: give --since only");
		return -EINVAL;
	}
	if (q->uid_only) {
		/* every host's records: not one user's to see */
		log_error("sweep: reads every host's records; it needs read"
			  " access to the store");
		return -EACCES;
	}
	c.r = calloc(1, sizeof(*c.r));
	if (!c.r)
		return -ENOMEM;
	c.r->since = q->since;
	c.r->now = now;
	err = load_up(&c);
	if (!err)
		err = load_idle(&c);
	if (!err)
		err = load_signals_cpu(&c);
	if (!err)
		err = stuck_jobs(&c);
	if (!err)
		err = finish(c.r);
	if (err) {
		sweep_result_free(c.r);
		return err;
	}
	*out = c.r;
	return 0;
}

/* ---- output ------------------------------------------------------------ */

/* A number with two decimals, or "-" when v < 0 (not known). */
static const char *money(double v, const char *cur, char *buf, size_t len)
{
	if (v < 0)
		return "-";
	snprintf(buf, len, "%.2f %s", v, cur);
	return buf;
}

/* Print the result as text: the answer first, then the tables. */
static void print_text(const struct sweep_result *r, FILE *out)
{
	char a[40], b[40], m[48];

	json_format_time(storeq_time_ns(r->since), a, sizeof(a));
	json_format_time(storeq_time_ns(r->now), b, sizeof(b));
	fprintf(out, "Sweep of %s to %s\n", a, b);
	if (!r->ntotals)
		fprintf(out, "Could have been saved: nothing priced\n");
	for (size_t i = 0; i < r->ntotals; i++)
		fprintf(out, "Could have been saved: %.2f %s (idle nodes %.2f,"
			" stuck jobs %.2f)\n", r->totals[i].total,
			r->totals[i].currency, r->totals[i].idle,
			r->totals[i].stuck);
	fprintf(out, "\nNodes by idle time:\n%-24s %-14s %10s %10s %14s"
		" %7s %8s\n", "HOST", "TYPE", "UP_S", "IDLE_S", "IDLE_COST",
		"SIGNALS", "CPU");
	for (size_t i = 0; i < r->nnodes; i++) {
		const struct sweep_node *n = &r->nodes[i];
		char cpu[16] = "-";

		if (n->cpu >= 0)
			snprintf(cpu, sizeof(cpu), "%.2f%%", 100 * n->cpu);
		fprintf(out, "%-24s %-14s %10.0f %10.0f %14s %7zu %8s\n",
			n->host, n->instance_type ? n->instance_type : "-",
			n->up_s, n->idle_s,
			money(n->idle_cost, n->currency, m, sizeof(m)),
			n->idle_signals, cpu);
	}
	fprintf(out, "\nInstances with CPU below %.0f%% over the period:\n",
		100 * SWEEP_CPU_BELOW);
	for (size_t i = 0; i < r->nnodes; i++) {
		const struct sweep_node *n = &r->nodes[i];

		if (n->low_cpu)
			fprintf(out, "  %s (%s): %.2f%% of %.0f CPUs over %.0f s,"
				" cost %s\n", n->host, n->instance_type ?
				n->instance_type : "no instance type",
				100 * n->cpu, n->cpus, n->up_s,
				money(n->up_cost, n->currency, m, sizeof(m)));
	}
	fprintf(out, "\nStuck jobs (processes without progress):\n");
	for (size_t i = 0; i < r->nstuck; i++) {
		const struct sweep_stuck *s = &r->stuck[i];

		fprintf(out, "  %s job %s%s%s: %.0f s in %zu stall%s%s, cost"
			" %s\n", s->host, s->job, s->scheduler ? " on " : "",
			s->scheduler ? s->scheduler : "", s->stuck_s,
			s->stalls, s->stalls == 1 ? "" : "s",
			s->ongoing ? " (still stalled)" : "",
			money(s->cost, s->currency, m, sizeof(m)));
	}
}

/* A JSON number, null when v < 0 (not known). */
static void kv_known(struct jbuf *b, const char *key, double v)
{
	if (v < 0) {
		json_key(b, key);
		json_null(b);
	} else {
		json_kv_double(b, key, v);
	}
}

/* A JSON string, null for NULL or "". */
static void kv_text(struct jbuf *b, const char *key, const char *v)
{
	json_key(b, key);
	if (v && *v)
		json_str(b, v);
	else
		json_null(b);
}

/* The nodes as a JSON array. */
static void json_nodes(struct jbuf *b, const struct sweep_result *r)
{
	json_key(b, "nodes");
	json_arr_open(b);
	for (size_t i = 0; i < r->nnodes; i++) {
		const struct sweep_node *n = &r->nodes[i];

		json_obj_open(b);
		json_kv_str(b, "host", n->host);
		kv_text(b, "instance_type", n->instance_type);
		kv_text(b, "lifecycle", n->lifecycle);
		kv_known(b, "per_hour", n->per_hour);
		kv_text(b, "currency", n->currency);
		json_kv_double(b, "up_s", n->up_s);
		kv_known(b, "up_cost", n->up_cost);
		json_kv_double(b, "idle_s", n->idle_s);
		kv_known(b, "idle_cost", n->idle_cost);
		json_kv_u64(b, "idle_signals", n->idle_signals);
		json_kv_double(b, "signal_idle_s", n->signal_idle_s);
		kv_known(b, "cpus", n->cpus > 0 ? n->cpus : -1);
		json_kv_double(b, "cpu_s", n->cpu_s);
		kv_known(b, "cpu", n->cpu);
		json_kv_bool(b, "low_cpu", n->low_cpu);
		json_obj_close(b);
	}
	json_arr_close(b);
}

/* Print the result as one JSON object. */
static int print_json(const struct sweep_result *r, FILE *out)
{
	struct jbuf b;
	char t[40];

	jbuf_init(&b);
	json_obj_open(&b);
	json_format_time(storeq_time_ns(r->since), t, sizeof(t));
	json_kv_str(&b, "since", t);
	json_format_time(storeq_time_ns(r->now), t, sizeof(t));
	json_kv_str(&b, "until", t);
	json_kv_double(&b, "cpu_below", SWEEP_CPU_BELOW);
	json_nodes(&b, r);
	json_key(&b, "stuck");
	json_arr_open(&b);
	for (size_t i = 0; i < r->nstuck; i++) {
		const struct sweep_stuck *s = &r->stuck[i];

		json_obj_open(&b);
		json_kv_str(&b, "host", s->host);
		json_kv_str(&b, "job", s->job);
		kv_text(&b, "scheduler", s->scheduler);
		json_kv_u64(&b, "stalls", s->stalls);
		json_kv_double(&b, "stuck_s", s->stuck_s);
		json_kv_bool(&b, "ongoing", s->ongoing);
		kv_known(&b, "cost", s->cost);
		kv_text(&b, "currency", s->currency);
		json_obj_close(&b);
	}
	json_arr_close(&b);
	json_key(&b, "saved");
	json_arr_open(&b);
	for (size_t i = 0; i < r->ntotals; i++) {
		json_obj_open(&b);
		json_kv_str(&b, "currency", r->totals[i].currency);
		json_kv_double(&b, "idle_nodes", r->totals[i].idle);
		json_kv_double(&b, "stuck_jobs", r->totals[i].stuck);
		json_kv_double(&b, "total", r->totals[i].total);
		json_obj_close(&b);
	}
	json_arr_close(&b);
	json_obj_close(&b);
	return storeq_json_print(&b, out);
}

/* One CSV line: what, host, job, currency, then numbers (< 0: empty). */
static void csv_line(FILE *out, const char *what, const char *host,
		     const char *job, const char *cur, const double v[4])
{
	char buf[JSON_DOUBLE_MAX];

	fprintf(out, "%s,", what);
	storeq_csv_field(out, host);
	fputc(',', out);
	storeq_csv_field(out, job);
	fputc(',', out);
	storeq_csv_field(out, cur);
	for (int i = 0; i < 4; i++) {
		fputc(',', out);
		if (v[i] >= 0) {
			json_format_double(v[i], buf);
			fputs(buf, out);
		}
	}
	fputs("\r\n", out);
}

/* Print the result as CSV: a header, a line per node, stuck job, total. */
static void print_csv(const struct sweep_result *r, FILE *out)
{
	fprintf(out, "what,host,job,currency,seconds,cost,up_s,cpu\r\n");
	for (size_t i = 0; i < r->nnodes; i++) {
		const struct sweep_node *n = &r->nodes[i];
		double v[4] = { n->idle_s, n->idle_cost, n->up_s, n->cpu };

		csv_line(out, n->low_cpu ? "idle_node_low_cpu" : "idle_node",
			 n->host, "", n->currency, v);
	}
	for (size_t i = 0; i < r->nstuck; i++) {
		const struct sweep_stuck *s = &r->stuck[i];
		double v[4] = { s->stuck_s, s->cost, -1, -1 };

		csv_line(out, "stuck_job", s->host, s->job, s->currency, v);
	}
	for (size_t i = 0; i < r->ntotals; i++) {
		double v[4] = { -1, r->totals[i].total, -1, -1 };

		csv_line(out, "saved", "", "", r->totals[i].currency, v);
	}
}

/* Print r as text, JSON or CSV. */
int sweep_print(const struct sweep_result *r, enum report_format fmt,
		FILE *out)
{
	int err = 0;

	if (fmt == REPORT_TEXT)
		print_text(r, out);
	else if (fmt == REPORT_JSON)
		err = print_json(r, out);
	else if (fmt == REPORT_CSV)
		print_csv(r, out);
	else
		return -EINVAL;
	return storeq_written(out, "sweep", err);
}

/* sweep_compute() and sweep_print() over an open store. */
int sweep_run_store(struct store *st, const char *where,
		    const struct report_query *q, enum report_format fmt,
		    double now, FILE *out)
{
	struct sweep_result *r = NULL;
	int err;

	if (fmt != REPORT_TEXT && fmt != REPORT_JSON && fmt != REPORT_CSV) {
		log_error("sweep: the format is text, json or csv");
		return -EINVAL;
	}
	err = sweep_compute(st, where, q, now, &r);
	if (!err)
		err = sweep_print(r, fmt, out);
	sweep_result_free(r);
	return err;
}
