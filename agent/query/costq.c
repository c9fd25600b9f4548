// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * costq.c - `jobtrace cost` over the SQLite store (the agent's, or a
 * temporary one loaded from ClickHouse): the `job` end records' cost,
 * split over the jobs' processes by CPU time, grouped, with the idle
 * allocation and the nodes' idle time (costq.h, doc/cost.md).
 *
 * The unit is one `job` end record: a job on one host.  Its processes are
 * the process records of that job id on that host.  Every figure is added
 * in the order the SQL returns the records, so the same records give the
 * same numbers to the last bit, from SQLite or from ClickHouse.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "costq.h"
#include "json.h"
#include "log.h"
#include "store.h"
#include "tasks.h"
#include "util.h"

#define NAME_WIDTH 28		/* display columns of the table's name */
#define IDS_SHOWN 10		/* job ids listed per note in text */
#define TOP_SHOWN 3		/* groups named in the answer line */

/* One job end record: a job on one host. */
struct unit {
	char *job, *host, *user, *account, *cost_center;
	char *note;		/* cost.note (or why there is no cost) */
	char currency[COSTQ_CURRENCY_MAX];
	bool priced;		/* cost.amount is a number */
	bool whole;		/* --run: all of it is the run's */
	double amount;
	double start, end;	/* epoch seconds; 0: not known */
	double elapsed_s;	/* cost.elapsed_s, else end - start */
	double cpus;		/* allocation.cpus; 0: none */
	double usage_cpu_s;	/* usage.cpu_s; -1: not known */
	double cpu_all;		/* its processes' own CPU */
	double counted;		/* what of it the selection counts */
	double idle;		/* its idle allocation (all of it) */
	double idle_counted;
	double cpu_in;		/* CPU of the processes counted */
	size_t procs_in;
	size_t job_no;		/* ordinal of its job id */
};

/* One process record of a unit. */
struct proc {
	size_t unit;
	bool in;		/* counted (--run: the run's, or a whole job) */
	double cpu;
	char *key;		/* --by task or tool: its group */
};

/* A part of a unit's cost that goes to one group. */
struct contrib {
	const char *key;
	const char *currency;
	size_t job_no;
	size_t seq;		/* its place: sums in the order made */
	double cost, idle, cpu;
	size_t procs;
};

/* A host's record: its agent's state from then on, and the price. */
struct hostrec {
	char *host;
	char *phase;
	char *note;
	char currency[COSTQ_CURRENCY_MAX];
	double time;
	double per_hour;	/* -1: not known */
};

/* A time interval of a host's job. */
struct span {
	char *host;
	double a, b;
};

/* Growable arrays of the above. */
#define VEC(T) struct { T *v; size_t n, cap; }

struct calc {
	sqlite3 *db;
	const char *where;
	const struct report_query *q;
	enum costq_by by;
	double now;
	VEC(struct unit) units;
	VEC(struct proc) procs;
	VEC(struct contrib) contribs;
	VEC(struct hostrec) hosts;
	VEC(struct span) spans;
	struct costq_result *r;
};

/* Make room for one more element of a VEC; NULL when out of memory. */
static void *vec_push(void **v, size_t *n, size_t *cap, size_t size)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 32;
		void *nv = realloc(*v, c * size);

		if (!nv)
			return NULL;
		*v = nv;
		*cap = c;
	}
	memset((char *)*v + *n * size, 0, size);
	return (char *)*v + (*n)++ * size;
}

#define PUSH(vec) ((__typeof__((vec).v))vec_push((void **)&(vec).v, \
	&(vec).n, &(vec).cap, sizeof(*(vec).v)))

/* Parse a --by word. */
int costq_by_parse(const char *s, enum costq_by *out)
{
	static const char *const names[] = {
		"job", "task", "tool", "user", "account", "cost-center",
	};

	if (!s) {
		*out = COSTQ_BY_JOB;
		return 0;
	}
	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!strcmp(s, names[i])) {
			*out = (enum costq_by)i;
			return 0;
		}
	}
	return -EINVAL;
}

/* The --by word of b. */
const char *costq_by_name(enum costq_by b)
{
	switch (b) {
	case COSTQ_BY_TASK: return "task";
	case COSTQ_BY_TOOL: return "tool";
	case COSTQ_BY_USER: return "user";
	case COSTQ_BY_ACCOUNT: return "account";
	case COSTQ_BY_COST_CENTER: return "cost-center";
	default: return "job";
	}
}

/* The job records of the selection: condition on record r (SQL text). */
#define SEL_JOB REPORT_JOB_SEL_AT("r.job_id")
#define SEL_RUN "(" JSTR_AT("r.json", "'$.job.run'") " = ?1 OR r.job_id IN" \
	" (SELECT job_id FROM process WHERE job_run = ?1))"
#define SEL_SINCE "r.time >= ?1"
#define PHASE_IS(c, p) "json_extract(" c ", '$.phase') = '" p "'"

/* The selector's condition on the job records r. */
static const char *selector(const struct report_query *q)
{
	if (q->job && *q->job)
		return SEL_JOB;
	return q->run && *q->run ? SEL_RUN : SEL_SINCE;
}

/*
 * The job end records selected, in job id, host, time order: the units
 * of the calculation.  Their order fixes the order every sum is taken in.
 */
static int load_units(struct calc *c)
{
	static const char cols[] =
		"SELECT r.job_id, " JSTR_AT("r.json", "'$.host'") ","
		" " JSTR_AT("r.json", "'$.job.user'") ","
		" " JSTR_AT("r.json", "'$.job.account'") ","
		" " JSTR_AT("r.json", "'$.job.cost_center'") ","
		" json_type(r.json, '$.cost'),"
		" " JNUM_AT("r.json", "'$.cost.amount'") ","
		" " JSTR_AT("r.json", "'$.cost.currency'") ","
		" " JSTR_AT("r.json", "'$.cost.note'") ","
		" " JNUM_AT("r.json", "'$.cost.elapsed_s'") ","
		" " JNUM_AT("r.json", "'$.allocation.cpus'") ","
		" " JNUM_AT("r.json", "'$.usage.cpu_s'") ","
		" json_extract(r.json, '$.start_time'),"
		" json_extract(r.json, '$.end_time'),"
		" " JSTR_AT("r.json", "'$.job.run'") " IS ?1"
		" FROM record r WHERE r.type = 'job' AND r.job_id IS NOT NULL"
		" AND " PHASE_IS("r.json", "end") " AND ";
	static const char order[] = " ORDER BY r.job_id, 2, r.time, r.id";
	char sql[sizeof(cols) + sizeof(SEL_RUN) + sizeof(SEL_JOB) +
		 sizeof(order)];
	sqlite3_stmt *st = NULL;
	const char *last = NULL;
	int rc, err;

	snprintf(sql, sizeof(sql), "%s%s%s", cols, selector(c->q), order);
	err = storeq_prepare_db(c->db, c->where, sql, c->q, &st);
	while (!err && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct unit *u = PUSH(c->units);
		const unsigned char *type;

		if (!u) {
			err = -ENOMEM;
			break;
		}
		err |= storeq_col_dup(st, 0, &u->job);
		if (!u->job) {
			c->units.n--;	/* not a text id: no job to name */
			continue;
		}
		err |= storeq_col_dup(st, 1, &u->host);
		err |= storeq_col_dup(st, 2, &u->user);
		err |= storeq_col_dup(st, 3, &u->account);
		err |= storeq_col_dup(st, 4, &u->cost_center);
		type = sqlite3_column_text(st, 5);
		u->amount = storeq_col_num(st, 6, NAN);
		storeq_col_text(st, 7, u->currency, COSTQ_CURRENCY_MAX);
		err |= storeq_col_dup(st, 8, &u->note);
		u->start = storeq_col_time(st, 12, 0);
		u->end = storeq_col_time(st, 13, 0);
		u->elapsed_s = storeq_col_num(st, 9, -1);
		if (u->elapsed_s < 0)
			u->elapsed_s = u->start > 0 && u->end >= u->start ?
				       u->end - u->start : 0;
		u->cpus = storeq_col_num(st, 10, 0);
		u->usage_cpu_s = storeq_col_num(st, 11, -1);
		u->whole = !c->q->run || sqlite3_column_int(st, 14);
		u->priced = !isnan(u->amount) && u->amount >= 0 &&
			    u->currency[0];
		if (!u->priced && !u->note && !err) {
			const char *why =
				!type || strcmp((const char *)type, "object") ?
				"no cost object in the end record (an agent"
				" without prices)" :
				!isnan(u->amount) && !u->currency[0] ?
				"an amount without a currency" :
				!isnan(u->amount) ? "a negative amount" :
				"cost.amount is null or not a number, and no"
				" note says why";

			u->note = strdup(why);
			err = u->note ? 0 : -ENOMEM;
		}
		if (!last || strcmp(last, u->job))
			u->job_no = c->units.n == 1 ? 0 :
				    u[-1].job_no + 1;
		else
			u->job_no = u[-1].job_no;
		last = u->job;
	}
	if (!err)
		err = storeq_step_done(c->db, c->where, rc);
	sqlite3_finalize(st);
	return err;
}

/*
 * The unit of a process of job units[first..end) on host at start: the
 * one of that host that started last before it (a job id used again),
 * else the first of that host; -1 when no unit is on that host.
 */
static long unit_of(const struct calc *c, size_t first, size_t end,
		    const char *host, double start)
{
	long found = -1;

	for (size_t i = first; i < end; i++) {
		const struct unit *u = &c->units.v[i];

		if (!u->host || !host || strcmp(u->host, host))
			continue;
		if (found < 0 || (u->start > 0 && u->start <= start + 1e-6))
			found = (long)i;
	}
	return found;
}

/*
 * The process records of every unit's job, each given to its unit; in
 * start order, so that the sums are taken in the same order anywhere.
 */
static int load_procs(struct calc *c)
{
	static const char sql[] =
		"SELECT host, job_run, job_task, tool_name, exe, comm,"
		" cpu_user_s, cpu_sys_s, start_time, tool_category FROM process"
		" WHERE job_id = ?1 ORDER BY start_time, id";
	sqlite3_stmt *st = NULL;
	int rc = SQLITE_OK, err = 0;

	if (sqlite3_prepare_v2(c->db, sql, -1, &st, NULL) != SQLITE_OK) {
		log_error("database %s: %s", c->where, sqlite3_errmsg(c->db));
		return -EIO;
	}
	for (size_t first = 0, end; !err && first < c->units.n; first = end) {
		const char *job = c->units.v[first].job;

		for (end = first + 1; end < c->units.n &&
		     !strcmp(c->units.v[end].job, job); end++)
			;
		sqlite3_reset(st);
		sqlite3_bind_text(st, 1, job, -1, SQLITE_STATIC);
		while (!err && (rc = sqlite3_step(st)) == SQLITE_ROW) {
			const char *host = (const char *)sqlite3_column_text(st, 0);
			long k = unit_of(c, first, end, host,
					 storeq_col_num(st, 8, 0));
			const char *run, *key = NULL;
			struct unit *u;
			struct proc *p;

			if (k < 0)
				continue;	/* a host without an end record */
			u = &c->units.v[k];
			p = PUSH(c->procs);
			if (!p) {
				err = -ENOMEM;
				break;
			}
			p->unit = (size_t)k;
			p->cpu = fmax(storeq_col_num(st, 6, 0), 0) +
				 fmax(storeq_col_num(st, 7, 0), 0);
			run = (const char *)sqlite3_column_text(st, 1);
			p->in = u->whole || (run && !strcmp(run, c->q->run));
			u->cpu_all += p->cpu;
			if (p->in) {
				u->procs_in++;
				u->cpu_in += p->cpu;
			}
			if (c->by == COSTQ_BY_TASK) {
				/* a task's process (tasks.h): not a client */
				key = (const char *)sqlite3_column_text(st, 2);
				if (!tasks_member(key, (const char *)
						  sqlite3_column_text(st, 9)))
					key = COSTQ_NONE;
			} else if (c->by == COSTQ_BY_TOOL) {
				key = storeq_tool_name(
					(const char *)sqlite3_column_text(st, 3),
					(const char *)sqlite3_column_text(st, 4),
					(const char *)sqlite3_column_text(st, 5));
			}
			if (key && !(p->key = strdup(key)))
				err = -ENOMEM;
		}
		if (!err && rc != SQLITE_DONE)
			err = storeq_step_done(c->db, c->where, rc);
	}
	sqlite3_finalize(st);
	return err;
}

/*
 * Whether the selection counts unit u: all of a job selected as a whole,
 * for --run a job outside it only when processes of the run ran in it.
 */
static bool counts(const struct unit *u)
{
	return u->whole || u->procs_in;
}

/* Add one part to a group. */
static int contribute(struct calc *c, const char *key, const struct unit *u,
		      double cost, double idle, double cpu, size_t procs)
{
	struct contrib *x = PUSH(c->contribs);

	if (!x)
		return -ENOMEM;
	x->seq = c->contribs.n;
	x->key = key;
	x->currency = u->currency;
	x->job_no = u->job_no;
	x->cost = cost;
	x->idle = idle;
	x->cpu = cpu;
	x->procs = procs;
	return 0;
}

/* The group of a whole unit for --by job, user, account, cost-center. */
static const char *unit_key(const struct calc *c, const struct unit *u)
{
	const char *k = c->by == COSTQ_BY_USER ? u->user :
			c->by == COSTQ_BY_ACCOUNT ? u->account :
			c->by == COSTQ_BY_COST_CENTER ? u->cost_center : u->job;

	return k && *k ? k : COSTQ_NONE;
}

/*
 * Split each counted, priced unit's cost and idle allocation over its
 * counted processes by CPU, into the groups of c->by.
 */
static int split(struct calc *c)
{
	bool per_proc = c->by == COSTQ_BY_TASK || c->by == COSTQ_BY_TOOL;
	int err = 0;

	for (size_t i = 0; i < c->units.n; i++) {
		struct unit *u = &c->units.v[i];
		double cpu_s = u->usage_cpu_s >= 0 ? u->usage_cpu_s : u->cpu_all;

		if (!u->priced || !counts(u))
			continue;
		if (u->cpus > 0 && u->elapsed_s > 0)
			u->idle = u->amount * (1 - fmin(1, cpu_s /
					       (u->cpus * u->elapsed_s)));
		if (u->whole) {
			u->counted = u->amount;
			u->idle_counted = u->idle;
		} else if (u->cpu_all > 0) {
			/* the run's processes' part of a job outside it */
			u->counted = u->amount * (u->cpu_in / u->cpu_all);
			u->idle_counted = u->idle * (u->cpu_in / u->cpu_all);
		}
		if (!per_proc)
			err |= contribute(c, unit_key(c, u), u, u->counted,
					  u->idle_counted, u->cpu_in,
					  u->procs_in);
		else if (u->cpu_all <= 0)
			err |= contribute(c, COSTQ_NO_PROCESS, u, u->counted,
					  u->idle_counted, 0, u->procs_in);
	}
	for (size_t k = 0; per_proc && k < c->procs.n; k++) {
		const struct proc *p = &c->procs.v[k];
		const struct unit *u = &c->units.v[p->unit];

		if (!p->in || !u->priced || !(u->cpu_all > 0))
			continue;
		err |= contribute(c, p->key, u, u->amount * (p->cpu / u->cpu_all),
				  u->idle * (p->cpu / u->cpu_all), p->cpu, 1);
	}
	return err ? -ENOMEM : 0;
}

/* Order contributions by currency, then group. */
static int cmp_contrib(const void *a, const void *b)
{
	const struct contrib *x = a, *y = b;
	int d = strcmp(x->currency, y->currency);

	if (!d)
		d = strcmp(x->key, y->key);
	return d ? d : (x->seq > y->seq) - (x->seq < y->seq);
}

/* Order rows: currency, groups before idle nodes, most cost, name. */
static int cmp_row(const void *a, const void *b)
{
	const struct costq_row *x = a, *y = b;
	int d = strcmp(x->currency, y->currency);

	if (d)
		return d;
	if (x->idle_node != y->idle_node)
		return x->idle_node - y->idle_node;
	if (x->cost != y->cost)
		return x->cost > y->cost ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Order totals by currency. */
static int cmp_total(const void *a, const void *b)
{
	return strcmp(((const struct costq_total *)a)->currency,
		      ((const struct costq_total *)b)->currency);
}

/* A new row of the result. */
static struct costq_row *add_row(struct costq_result *r, const char *name,
				 const char *currency)
{
	struct costq_row *row;
	void *v = realloc(r->rows, (r->nrows + 1) * sizeof(*r->rows));

	if (!v)
		return NULL;
	r->rows = v;
	row = &r->rows[r->nrows];
	memset(row, 0, sizeof(*row));
	row->name = strdup(name);
	if (!row->name)
		return NULL;
	util_strlcpy(row->currency, currency, sizeof(row->currency));
	r->nrows++;
	return row;
}

/* Merge the contributions into one row per group and currency. */
static int group(struct calc *c)
{
	struct contrib *v = c->contribs.v;
	size_t *seen = NULL, stamp = 0;

	if (c->contribs.n)
		qsort(v, c->contribs.n, sizeof(*v), cmp_contrib);
	seen = calloc(c->units.n + 1, sizeof(*seen));
	if (!seen)
		return -ENOMEM;
	for (size_t i = 0; i < c->contribs.n; i++) {
		struct costq_row *row;

		if (!i || strcmp(v[i - 1].currency, v[i].currency) ||
		    strcmp(v[i - 1].key, v[i].key)) {
			row = add_row(c->r, v[i].key, v[i].currency);
			if (!row) {
				free(seen);
				return -ENOMEM;
			}
			stamp++;
		}
		row = &c->r->rows[c->r->nrows - 1];
		row->cost += v[i].cost;
		row->idle += v[i].idle;
		row->cpu_s += v[i].cpu;
		row->processes += v[i].procs;
		if (seen[v[i].job_no] != stamp) {
			seen[v[i].job_no] = stamp;
			row->jobs++;
		}
	}
	free(seen);
	return 0;
}

/* The total of currency cur, made when new; NULL when out of memory. */
static struct costq_total *total_of(struct costq_result *r, const char *cur)
{
	void *v;

	for (size_t i = 0; i < r->ntotals; i++)
		if (!strcmp(r->totals[i].currency, cur))
			return &r->totals[i];
	v = realloc(r->totals, (r->ntotals + 1) * sizeof(*r->totals));
	if (!v)
		return NULL;
	r->totals = v;
	memset(&r->totals[r->ntotals], 0, sizeof(*r->totals));
	util_strlcpy(r->totals[r->ntotals].currency, cur, COSTQ_CURRENCY_MAX);
	return &r->totals[r->ntotals++];
}

/* Add an unpriced job or idle node to the result. */
static int add_unpriced(struct costq_result *r, const char *job,
			const char *host, const char *note, double idle_s)
{
	struct costq_unpriced *x;
	void *v = realloc(r->unpriced, (r->nunpriced + 1) * sizeof(*x));

	if (!v)
		return -ENOMEM;
	r->unpriced = v;
	x = &r->unpriced[r->nunpriced++];
	x->job = job ? strdup(job) : NULL;
	x->host = strdup(host ? host : "?");
	x->note = strdup(note ? note : "no price");
	x->idle_s = idle_s;
	return x->host && x->note && (!job || x->job) ? 0 : -ENOMEM;
}

/*
 * Whether an earlier unit of u's job (they are next to each other) was
 * counted in the same currency: a job counts once per currency.
 */
static bool job_counted(const struct calc *c, size_t i)
{
	const struct unit *u = &c->units.v[i];

	for (size_t k = i; k-- > 0 && c->units.v[k].job_no == u->job_no;) {
		const struct unit *e = &c->units.v[k];

		if (e->priced && counts(e) && !strcmp(e->currency, u->currency))
			return true;
	}
	return false;
}

/* The units' totals per currency (in unit order), and the unpriced. */
static int total_units(struct calc *c)
{
	for (size_t i = 0; i < c->units.n; i++) {
		struct unit *u = &c->units.v[i];
		struct costq_total *t;
		int err;

		if (!counts(u))
			continue;
		if (!u->priced) {
			err = add_unpriced(c->r, u->job, u->host, u->note, 0);
			if (err)
				return err;
			continue;
		}
		t = total_of(c->r, u->currency);
		if (!t)
			return -ENOMEM;
		t->jobs_cost += u->counted;
		t->idle_alloc += u->idle_counted;
		t->cpu_s += u->cpu_in;
		t->processes += u->procs_in;
		t->jobs += !job_counted(c, i);
	}
	return 0;
}

/* ---- idle nodes (--since) ------------------------------------------------ */

/*
 * The host records that tell each host's state in [since, now]: those
 * from since on, and each host's last one before since.
 */
static int load_hosts(struct calc *c)
{
	static const char sql[] =
		"SELECT " JSTR("$.host") ", " JSTR("$.phase") ", time,"
		" " JNUM("$.price.per_hour") ", " JSTR("$.price.currency") ","
		" " JSTR("$.price.note") " FROM record"
		" WHERE type = 'host' AND (time >= ?1 OR id IN"
		" (SELECT id FROM (SELECT id, MAX(time) FROM record"
		"  WHERE type = 'host' AND time < ?1"
		"  GROUP BY json_extract(json, '$.host'))))"
		" ORDER BY 1, time, id";
	sqlite3_stmt *st = NULL;
	int rc, err;

	err = storeq_prepare_db(c->db, c->where, sql, c->q, &st);
	while (!err && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct hostrec *h = PUSH(c->hosts);

		if (!h) {
			err = -ENOMEM;
			break;
		}
		err |= storeq_col_dup(st, 0, &h->host);
		if (!h->host) {
			c->hosts.n--;	/* of no host: nothing to say */
			continue;
		}
		err |= storeq_col_dup(st, 1, &h->phase);
		h->time = storeq_col_num(st, 2, 0);
		h->per_hour = storeq_col_num(st, 3, -1);
		storeq_col_text(st, 4, h->currency, COSTQ_CURRENCY_MAX);
		err |= storeq_col_dup(st, 5, &h->note);
		if (h->per_hour >= 0 && !h->currency[0])
			h->per_hour = -1;	/* a price in no currency */
	}
	if (!err)
		err = storeq_step_done(c->db, c->where, rc);
	sqlite3_finalize(st);
	return err;
}

/* Add a job's time on a host. */
static int add_span(struct calc *c, const char *host, double a, double b)
{
	struct span *s;

	if (!host || !(b > a))
		return 0;
	s = PUSH(c->spans);
	if (!s)
		return -ENOMEM;
	s->host = strdup(host);
	s->a = a;
	s->b = b;
	return s->host ? 0 : -ENOMEM;
}

/*
 * Jobs with a start record and no end record on their host: running (for
 * --since every such job: it runs at now).  Each is a job's time on its
 * host from its start to now, and listed as not counted.
 */
static int load_running(struct calc *c)
{
	static const char head[] =
		"SELECT r.job_id, " JSTR_AT("r.json", "'$.host'") ","
		" MIN(json_extract(r.json, '$.start_time'))"
		" FROM record r WHERE r.type = 'job' AND r.job_id IS NOT NULL"
		" AND " PHASE_IS("r.json", "start") " AND NOT EXISTS"
		" (SELECT 1 FROM record e WHERE e.type = 'job'"
		"  AND e.job_id = r.job_id AND " PHASE_IS("e.json", "end")
		"  AND json_extract(e.json, '$.host') IS"
		"  json_extract(r.json, '$.host')) AND ";
	static const char tail[] = " GROUP BY 1, 2 ORDER BY 1, 2";
	char sql[sizeof(head) + sizeof(SEL_RUN) + sizeof(SEL_JOB) +
		 sizeof(tail)];
	struct costq_result *r = c->r;
	sqlite3_stmt *st = NULL;
	int rc, err;

	snprintf(sql, sizeof(sql), "%s%s%s", head,
		 c->q->job || c->q->run ? selector(c->q) : "?1 IS NOT NULL",
		 tail);
	err = storeq_prepare_db(c->db, c->where, sql, c->q, &st);
	while (!err && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct costq_running *x;
		void *v = realloc(r->running, (r->nrunning + 1) * sizeof(*x));

		if (!v) {
			err = -ENOMEM;
			break;
		}
		r->running = v;
		x = &r->running[r->nrunning++];
		err |= storeq_col_dup(st, 0, &x->job);
		err |= storeq_col_dup(st, 1, &x->host);
		x->start = storeq_col_time(st, 2, 0);
		if (!err && x->host)
			err = add_span(c, x->host, x->start > 0 ? x->start :
				       c->q->since, c->now);
	}
	if (!err)
		err = storeq_step_done(c->db, c->where, rc);
	sqlite3_finalize(st);
	return err;
}

/* Order spans by host, then start. */
static int cmp_span(const void *a, const void *b)
{
	const struct span *x = a, *y = b;
	int d = strcmp(x->host, y->host);

	if (d)
		return d;
	return x->a < y->a ? -1 : x->a > y->a;
}

/*
 * Seconds of [a, b] that no span of host covers; s[0..n) are sorted by
 * host and start, so the covered part is their union.
 */
static double uncovered(const struct span *s, size_t n, const char *host,
			double a, double b)
{
	double covered = 0, reach = a;

	for (size_t i = 0; i < n; i++) {
		if (strcmp(s[i].host, host))
			continue;
		if (s[i].b <= reach || s[i].a >= b)
			continue;
		covered += fmin(s[i].b, b) - fmax(s[i].a, reach);
		reach = fmin(s[i].b, b);
	}
	return b - a - covered;
}

/*
 * Each host's idle time and cost: between two consecutive host records
 * the agent was up unless the first is a stop, or the next a start (the
 * agent ended unseen: known up only to its last record); after the last
 * record up to now unless it is a stop.  Clipped to [since, now], less
 * its jobs' time; priced at the earlier record's price.per_hour.
 */
static int node_idle(struct calc *c)
{
	struct hostrec *h = c->hosts.v;
	size_t n = c->hosts.n;
	int err = 0;

	if (c->spans.n)
		qsort(c->spans.v, c->spans.n, sizeof(*c->spans.v), cmp_span);
	for (size_t i = 0, end; !err && i < n; i = end) {
		double unpriced_s = 0;
		const char *note = NULL;
		size_t first_row = c->r->nrows;

		for (end = i + 1; end < n && !strcmp(h[end].host, h[i].host);
		     end++)
			;
		for (size_t k = i; !err && k < end; k++) {
			bool last = k + 1 == end;
			double a = fmax(h[k].time, c->q->since);
			double b = last ? c->now : h[k + 1].time;
			struct costq_row *row = NULL;
			double idle;

			if ((h[k].phase && !strcmp(h[k].phase, "stop")) ||
			    (!last && h[k + 1].phase &&
			     !strcmp(h[k + 1].phase, "start")))
				continue;
			b = fmin(b, c->now);
			if (!(b > a))
				continue;
			idle = uncovered(c->spans.v, c->spans.n, h[k].host,
					 a, b);
			if (!(idle > 0))
				continue;
			if (h[k].per_hour < 0) {
				unpriced_s += idle;
				note = h[k].note ? h[k].note : note;
				continue;
			}
			for (size_t j = first_row; j < c->r->nrows; j++)
				if (!strcmp(c->r->rows[j].currency,
					    h[k].currency))
					row = &c->r->rows[j];
			if (!row) {
				row = add_row(c->r, h[k].host, h[k].currency);
				if (!row) {
					err = -ENOMEM;
					break;
				}
				row->idle_node = true;
			}
			row->idle_s += idle;
			row->cost += h[k].per_hour * idle / 3600;
		}
		if (!err && unpriced_s > 0)
			err = add_unpriced(c->r, NULL, h[i].host,
					   note ? note : "the host records"
					   " carry no price", unpriced_s);
	}
	/* the idle nodes' totals, host by host */
	for (size_t j = 0; !err && j < c->r->nrows; j++) {
		struct costq_row *row = &c->r->rows[j];
		struct costq_total *t;

		if (!row->idle_node)
			continue;
		row->idle = row->cost;
		t = total_of(c->r, row->currency);
		if (!t)
			return -ENOMEM;
		t->idle_nodes += row->cost;
	}
	return err;
}

/* ---- the calculation ------------------------------------------------------- */

/* Free a result. */
void costq_result_free(struct costq_result *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nrows; i++)
		free(r->rows[i].name);
	for (size_t i = 0; i < r->nunpriced; i++) {
		free(r->unpriced[i].job);
		free(r->unpriced[i].host);
		free(r->unpriced[i].note);
	}
	for (size_t i = 0; i < r->nrunning; i++) {
		free(r->running[i].job);
		free(r->running[i].host);
	}
	free(r->rows);
	free(r->totals);
	free(r->unpriced);
	free(r->running);
	free(r);
}

/* Free the calculation's own arrays. */
static void calc_free(struct calc *c)
{
	for (size_t i = 0; i < c->units.n; i++) {
		struct unit *u = &c->units.v[i];

		free(u->job);
		free(u->host);
		free(u->user);
		free(u->account);
		free(u->cost_center);
		free(u->note);
	}
	for (size_t i = 0; i < c->procs.n; i++)
		free(c->procs.v[i].key);
	for (size_t i = 0; i < c->hosts.n; i++) {
		free(c->hosts.v[i].host);
		free(c->hosts.v[i].phase);
		free(c->hosts.v[i].note);
	}
	for (size_t i = 0; i < c->spans.n; i++)
		free(c->spans.v[i].host);
	free(c->units.v);
	free(c->procs.v);
	free(c->contribs.v);
	free(c->hosts.v);
	free(c->spans.v);
}

/* Epoch seconds as realtime ns: 0 before 1970, the most past 2554. */
static uint64_t ns_of(double t)
{
	if (!(t > 0))
		return 0;
	return t < 1.8e10 ? (uint64_t)(t * 1e9) : UINT64_MAX;
}

/* Describe the selector ("job 42", "run r1", "since TIME"). */
static void describe(const struct report_query *q, char *out, size_t len)
{
	char t[40];

	if (q->job && *q->job) {
		snprintf(out, len, "job %s", q->job);
	} else if (q->run && *q->run) {
		snprintf(out, len, "run %s", q->run);
	} else {
		json_format_time(ns_of(q->since), t, sizeof(t));
		snprintf(out, len, "since %s", t);
	}
}

/* Compute the cost of what q selects (see costq.h). */
int costq_compute(struct store *st, const char *where,
		  const struct report_query *q, double now,
		  struct costq_result **out)
{
	struct calc c = { .db = store_handle(st), .where = where, .q = q,
			  .now = now };
	bool since;
	int err;

	*out = NULL;
	if ((!!(q->job && *q->job) + !!(q->run && *q->run) +
	     (q->since > 0)) != 1 || q->pid) {
		log_error("cost: give exactly one of --job, --run, --since");
		return -EINVAL;
	}
	if (costq_by_parse(q->by, &c.by)) {
		log_error("cost: --by '%s': expected job, task, tool, user,"
			  " account or cost-center", q->by);
		return -EINVAL;
	}
	since = !q->job && !q->run;
	c.r = calloc(1, sizeof(*c.r));
	if (!c.r)
		return -ENOMEM;
	c.r->by = c.by;
	err = storeq_restrict(st, where, q);
	if (!err)
		err = load_units(&c);
	if (!err)
		err = load_procs(&c);
	if (!err)
		err = split(&c);
	if (!err)
		err = group(&c);
	if (!err)
		err = total_units(&c);
	if (!err)
		err = load_running(&c);
	for (size_t i = 0; !err && since && i < c.units.n; i++)
		err = add_span(&c, c.units.v[i].host, c.units.v[i].start,
			       c.units.v[i].end);
	if (!err && since && !q->uid_only) {
		c.r->node_idle = true;
		err = load_hosts(&c);
		if (!err)
			err = node_idle(&c);
	}
	c.r->node_idle_hidden = since && q->uid_only;
	c.r->units = c.units.n;
	if (!err) {
		/* each currency's total: its jobs, then its idle nodes */
		for (size_t i = 0; i < c.r->ntotals; i++)
			c.r->totals[i].cost = c.r->totals[i].jobs_cost +
					      c.r->totals[i].idle_nodes;
		if (c.r->nrows)
			qsort(c.r->rows, c.r->nrows, sizeof(*c.r->rows),
			      cmp_row);
		if (c.r->ntotals)
			qsort(c.r->totals, c.r->ntotals,
			      sizeof(*c.r->totals), cmp_total);
	}
	if (!err && !c.units.n && !c.r->nrunning && !c.r->nrows &&
	    !c.r->nunpriced)
		err = -ENOENT;
	calc_free(&c);
	if (err) {
		costq_result_free(c.r);
		return err;
	}
	*out = c.r;
	return 0;
}

/* ---- output ------------------------------------------------------------------ */

/* The total of a row's currency. */
static const struct costq_total *total_for(const struct costq_result *r,
					   const char *cur)
{
	for (size_t i = 0; i < r->ntotals; i++)
		if (!strcmp(r->totals[i].currency, cur))
			return &r->totals[i];
	return NULL;
}

/* A row's share of its currency's total, in percent. */
static double share(const struct costq_result *r, const struct costq_row *row)
{
	const struct costq_total *t = total_for(r, row->currency);

	return t && t->cost > 0 ? 100 * row->cost / t->cost : 0;
}

/* A name for a table cell: printable, cut to width bytes on a character. */
static void cell(const char *name, char *out, size_t width)
{
	size_t n;

	util_strlcpy(out, name, width + 1);
	util_printable(out);
	n = strlen(out);
	if (n == width && strlen(name) > width) {
		while (n > 0 && ((unsigned char)out[n - 1] & 0xC0) == 0x80)
			n--;
		if (n > 0 && (unsigned char)out[n - 1] >= 0xC0)
			n--;	/* a lead byte without its continuation */
		out[n > 1 ? n - 1 : 0] = '\0';
		strcat(out, "~");
	}
}

/* The column title of the groups. */
static const char *group_title(enum costq_by b)
{
	switch (b) {
	case COSTQ_BY_TASK: return "TASK";
	case COSTQ_BY_TOOL: return "TOOL";
	case COSTQ_BY_USER: return "USER";
	case COSTQ_BY_ACCOUNT: return "ACCOUNT";
	case COSTQ_BY_COST_CENTER: return "COST CENTER";
	default: return "JOB";
	}
}

/* A row's display name: "idle node HOST" for an idle node. */
static void row_name(const struct costq_row *row, char *out, size_t len)
{
	char c[NAME_WIDTH + 8];

	cell(row->name, c, row->idle_node ? NAME_WIDTH - 10 : NAME_WIDTH);
	snprintf(out, len, "%s%s", row->idle_node ? "idle node " : "", c);
}

/* A duration in hours or minutes, for notes. */
static void hours_text(double s, char *out, size_t len)
{
	if (s >= 3600)
		snprintf(out, len, "%.2f h", s / 3600);
	else
		snprintf(out, len, "%.1f min", s / 60);
}

/* The text lines saying what is not counted: no price, running. */
static void print_not_counted(const struct costq_result *r, FILE *out)
{
	char buf[256], d[32];

	/* jobs without a price, one line per note */
	for (size_t i = 0; i < r->nunpriced; i++) {
		const struct costq_unpriced *x = &r->unpriced[i];
		size_t n = 0, shown = 0;
		bool first = true;

		if (!x->job)
			continue;
		for (size_t k = 0; k < i; k++)
			if (r->unpriced[k].job &&
			    !strcmp(r->unpriced[k].note, x->note))
				first = false;
		if (!first)
			continue;
		for (size_t k = i; k < r->nunpriced; k++)
			n += r->unpriced[k].job &&
			     !strcmp(r->unpriced[k].note, x->note);
		util_strlcpy(buf, x->note, sizeof(buf));
		fprintf(out, "%zu job%s without a cost, not counted: %s:",
			n, n == 1 ? "" : "s", util_printable(buf));
		for (size_t k = i; k < r->nunpriced && shown < IDS_SHOWN; k++) {
			const struct costq_unpriced *y = &r->unpriced[k];
			char id[128], host[64];

			if (!y->job || strcmp(y->note, x->note))
				continue;
			util_strlcpy(id, y->job, sizeof(id));
			util_strlcpy(host, y->host, sizeof(host));
			fprintf(out, "%s %s on %s", shown ? "," : "",
				util_printable(id), util_printable(host));
			shown++;
		}
		fprintf(out, n > shown ? ", and %zu more\n" : "\n", n - shown);
	}
	for (size_t i = 0; i < r->nunpriced; i++) {
		const struct costq_unpriced *x = &r->unpriced[i];
		char host[64];

		if (x->job)
			continue;
		hours_text(x->idle_s, d, sizeof(d));
		util_strlcpy(buf, x->note, sizeof(buf));
		util_strlcpy(host, x->host, sizeof(host));
		fprintf(out, "node %s idle %s without a price, not counted: %s\n",
			util_printable(host), d, util_printable(buf));
	}
	if (r->nrunning) {
		fprintf(out, "%zu job%s running (no end record: no cost yet):",
			r->nrunning, r->nrunning == 1 ? "" : "s");
		for (size_t i = 0; i < r->nrunning && i < IDS_SHOWN; i++) {
			char id[128], host[64];

			util_strlcpy(id, r->running[i].job ? r->running[i].job :
				     "?", sizeof(id));
			util_strlcpy(host, r->running[i].host ?
				     r->running[i].host : "?", sizeof(host));
			fprintf(out, "%s %s on %s", i ? "," : "",
				util_printable(id), util_printable(host));
		}
		fprintf(out, r->nrunning > IDS_SHOWN ? ", and %zu more\n" : "\n",
			r->nrunning - IDS_SHOWN);
	}
	if (r->node_idle_hidden)
		fprintf(out, "Idle nodes are not shown: host records are for"
			" root, agent.control_group and agent.reader_group.\n");
}

/* The row of currency cur with the most cost not in taken[]; -1: none. */
static long top_row(const struct costq_result *r, const char *cur,
		    const bool *taken)
{
	long best = -1;

	for (size_t k = 0; k < r->nrows; k++) {
		const struct costq_row *row = &r->rows[k];

		if (taken[k] || strcmp(row->currency, cur) || !(row->cost > 0))
			continue;
		if (best < 0 || row->cost > r->rows[best].cost)
			best = (long)k;
	}
	return best;
}

/* An amount of money for people (see costq.h). */
const char *costq_money(double v, char *out, size_t len)
{
	int dec = fabs(v) >= 1 ? 2 : 4;

	if (v != 0 && fabs(v) < 0.01 && isfinite(v))
		dec = 1 - (int)floor(log10(fabs(v)));
	if (dec > 12)
		dec = 12;
	snprintf(out, len, "%.*f", dec, v);
	return out;
}

/* The answer first: each currency's total and its top groups. */
static int print_answer(const struct costq_result *r, const char *sel,
			FILE *out)
{
	bool *taken = calloc(r->nrows + 1, sizeof(*taken));

	if (!taken)
		return -ENOMEM;
	fprintf(out, "Cost of %s, by %s\n", sel, costq_by_name(r->by));
	if (!r->ntotals)
		fprintf(out, "TOTAL: nothing with a price\n");
	for (size_t i = 0; i < r->ntotals; i++) {
		const struct costq_total *t = &r->totals[i];
		char cur[COSTQ_CURRENCY_MAX];
		long k;
		int n;

		util_strlcpy(cur, t->currency, sizeof(cur));
		util_printable(cur);
		char m[3][40];

		fprintf(out, "TOTAL %s %s = %s %s for %zu job%s (%s %s of"
			" it idle allocation)", costq_money(t->cost, m[0], 40), cur,
			costq_money(t->jobs_cost, m[1], 40), cur, t->jobs,
			t->jobs == 1 ? "" : "s",
			costq_money(t->idle_alloc, m[2], 40), cur);
		if (r->node_idle)
			fprintf(out, " + %s %s idle nodes",
				costq_money(t->idle_nodes, m[0], 40), cur);
		fprintf(out, "\n  top:");
		for (n = 0; n < TOP_SHOWN &&
		     (k = top_row(r, t->currency, taken)) >= 0; n++) {
			char name[NAME_WIDTH + 16];

			taken[k] = true;
			row_name(&r->rows[k], name, sizeof(name));
			fprintf(out, "%s %s %s %s (%.1f%%)", n ? "," : "",
				name, costq_money(r->rows[k].cost, m[0], 40), cur,
				share(r, &r->rows[k]));
		}
		fprintf(out, "%s\n", n ? "" : " -");
	}
	free(taken);
	print_not_counted(r, out);
	return 0;
}

/* One table line: name, cost, idle, share, then jobs, processes, CPU
 * (NULL for an idle node), currency. */
static void table_line(FILE *out, const char *name, double cost, double idle,
		       double pct, const size_t *counts, double cpu_s,
		       const char *currency)
{
	char cur[COSTQ_CURRENCY_MAX], m[2][40];

	util_strlcpy(cur, currency, sizeof(cur));
	fprintf(out, "%-*s %14s %14s %6.1f%% ", NAME_WIDTH, name,
		costq_money(cost, m[0], 40), costq_money(idle, m[1], 40), pct);
	if (counts)
		fprintf(out, "%6zu %6zu %10.2f", counts[0], counts[1], cpu_s);
	else
		fprintf(out, "%6s %6s %10s", "-", "-", "-");
	fprintf(out, "  %s\n", util_printable(cur));
}

/* Print the result as text: the answer, then a table per currency. */
static int print_text(const struct costq_result *r, const char *sel,
		      FILE *out)
{
	int err = print_answer(r, sel, out);

	for (size_t i = 0; !err && i < r->ntotals; i++) {
		const struct costq_total *t = &r->totals[i];
		size_t tc[2] = { t->jobs, t->processes };

		fprintf(out, "\n%-*s %14s %14s %7s %6s %6s %10s  %s\n",
			NAME_WIDTH, group_title(r->by), "COST", "IDLE", "SHARE",
			"JOBS", "PROCS", "CPU_S", "CUR");
		for (size_t k = 0; k < r->nrows; k++) {
			const struct costq_row *row = &r->rows[k];
			size_t rc[2] = { row->jobs, row->processes };
			char name[NAME_WIDTH + 16];

			if (strcmp(row->currency, t->currency))
				continue;
			row_name(row, name, sizeof(name));
			table_line(out, name, row->cost, row->idle,
				   share(r, row), row->idle_node ? NULL : rc,
				   row->cpu_s, row->currency);
		}
		table_line(out, "TOTAL", t->cost, t->idle_alloc + t->idle_nodes,
			   t->cost > 0 ? 100.0 : 0.0, tc, t->cpu_s, t->currency);
	}
	return err;
}

/* Append a number member to b, every digit of it. */
static void kv_num(struct jbuf *b, const char *key, double v)
{
	json_key(b, key);
	json_double_exact(b, v);
}

/* Print the result as one JSON object. */
static int print_json(const struct costq_result *r,
		      const struct report_query *q, FILE *out)
{
	struct jbuf b;

	jbuf_init(&b);
	json_obj_open(&b);
	storeq_json_query(&b, "query", q, costq_by_name(r->by));
	json_key(&b, "totals");
	json_arr_open(&b);
	for (size_t i = 0; i < r->ntotals; i++) {
		const struct costq_total *t = &r->totals[i];

		json_obj_open(&b);
		json_kv_str(&b, "currency", t->currency);
		kv_num(&b, "cost", t->cost);
		kv_num(&b, "jobs_cost", t->jobs_cost);
		kv_num(&b, "idle_allocation", t->idle_alloc);
		kv_num(&b, "idle_nodes", t->idle_nodes);
		json_kv_u64(&b, "jobs", t->jobs);
		json_kv_u64(&b, "processes", t->processes);
		kv_num(&b, "cpu_s", t->cpu_s);
		json_obj_close(&b);
	}
	json_arr_close(&b);
	json_key(&b, "groups");
	json_arr_open(&b);
	for (size_t i = 0; i < r->nrows; i++) {
		const struct costq_row *row = &r->rows[i];

		json_obj_open(&b);
		json_kv_str(&b, "kind", row->idle_node ? "idle_node" : "group");
		json_kv_str(&b, "name", row->name);
		json_kv_str(&b, "currency", row->currency);
		kv_num(&b, "cost", row->cost);
		kv_num(&b, "idle", row->idle);
		kv_num(&b, "share", share(r, row) / 100);
		if (row->idle_node) {
			kv_num(&b, "idle_s", row->idle_s);
		} else {
			json_kv_u64(&b, "jobs", row->jobs);
			json_kv_u64(&b, "processes", row->processes);
			kv_num(&b, "cpu_s", row->cpu_s);
		}
		json_obj_close(&b);
	}
	json_arr_close(&b);
	json_key(&b, "not_counted");
	json_arr_open(&b);
	for (size_t i = 0; i < r->nunpriced; i++) {
		const struct costq_unpriced *x = &r->unpriced[i];

		json_obj_open(&b);
		json_kv_str(&b, "kind", x->job ? "job" : "idle_node");
		if (x->job)
			json_kv_str(&b, "job", x->job);
		json_kv_str(&b, "host", x->host);
		if (!x->job)
			kv_num(&b, "idle_s", x->idle_s);
		json_kv_str(&b, "note", x->note);
		json_obj_close(&b);
	}
	json_arr_close(&b);
	json_key(&b, "running");
	json_arr_open(&b);
	for (size_t i = 0; i < r->nrunning; i++) {
		json_obj_open(&b);
		json_kv_str(&b, "job", r->running[i].job ? r->running[i].job : "");
		json_kv_str(&b, "host", r->running[i].host ? r->running[i].host : "");
		json_key(&b, "start_time");
		if (r->running[i].start > 0)
			json_time(&b, ns_of(r->running[i].start));
		else
			json_null(&b);
		json_obj_close(&b);
	}
	json_arr_close(&b);
	json_kv_bool(&b, "node_idle", r->node_idle);
	json_kv_bool(&b, "node_idle_hidden", r->node_idle_hidden);
	json_obj_close(&b);
	return storeq_json_print(&b, out);
}

/* Write s as a CSV field (RFC 4180: quoted when it needs to be). */
static void csv_field(FILE *out, const char *s)
{
	if (!s[strcspn(s, ",\"\r\n")]) {
		fputs(s, out);
		return;
	}
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

/* One CSV line: kind, name, currency, numbers (NAN: empty), note. */
static void csv_line(FILE *out, const char *kind, const char *name,
		     const char *cur, const double v[7], const char *note)
{
	char buf[JSON_DOUBLE_MAX];

	fprintf(out, "%s,", kind);
	csv_field(out, name);
	fputc(',', out);
	csv_field(out, cur);
	for (int i = 0; i < 7; i++) {
		fputc(',', out);
		if (!isnan(v[i])) {
			json_format_double(v[i], buf);
			fputs(buf, out);
		}
	}
	fputc(',', out);
	csv_field(out, note);
	fputs("\r\n", out);
}

/* Print the result as CSV: a header, then a line per row and total. */
static void print_csv(const struct costq_result *r, FILE *out)
{
	fprintf(out, "kind,name,currency,cost,idle,share,jobs,processes,"
		"cpu_s,idle_s,note\r\n");
	for (size_t i = 0; i < r->nrows; i++) {
		const struct costq_row *w = &r->rows[i];
		double v[7] = { w->cost, w->idle, share(r, w) / 100,
				w->idle_node ? NAN : (double)w->jobs,
				w->idle_node ? NAN : (double)w->processes,
				w->idle_node ? NAN : w->cpu_s,
				w->idle_node ? w->idle_s : NAN };

		csv_line(out, w->idle_node ? "idle_node" : costq_by_name(r->by),
			 w->name, w->currency, v, "");
	}
	for (size_t i = 0; i < r->ntotals; i++) {
		const struct costq_total *t = &r->totals[i];
		double v[7] = { t->cost, t->idle_alloc + t->idle_nodes,
				t->cost > 0 ? 1 : 0, (double)t->jobs,
				(double)t->processes, t->cpu_s, NAN };

		csv_line(out, "total", "TOTAL", t->currency, v, "");
	}
	for (size_t i = 0; i < r->nunpriced; i++) {
		const struct costq_unpriced *x = &r->unpriced[i];
		double v[7] = { NAN, NAN, NAN, NAN, NAN, NAN,
				x->job ? NAN : x->idle_s };

		csv_line(out, x->job ? "not_counted_job" : "not_counted_node",
			 x->job ? x->job : x->host, "", v, x->note);
	}
	for (size_t i = 0; i < r->nrunning; i++) {
		double v[7] = { NAN, NAN, NAN, NAN, NAN, NAN, NAN };

		csv_line(out, "running", r->running[i].job ?
			 r->running[i].job : "", "", v, "no end record");
	}
}

/* Print a result in fmt (see costq.h). */
int costq_print(const struct costq_result *r, const struct report_query *q,
		enum report_format fmt, FILE *out)
{
	char sel[300], what[340];
	int err = 0;

	describe(q, sel, sizeof(sel));
	if (q->job && *q->job)
		snprintf(what, sizeof(what), "%s", sel);
	else if (q->run && *q->run)
		snprintf(what, sizeof(what), "the jobs of %s", sel);
	else
		snprintf(what, sizeof(what), "the jobs ended %s", sel);
	util_printable(what);
	switch (fmt) {
	case REPORT_TEXT:
		err = print_text(r, what, out);
		break;
	case REPORT_JSON:
		err = print_json(r, q, out);
		break;
	case REPORT_CSV:
		print_csv(r, out);
		break;
	default:
		return -EINVAL;
	}
	err = storeq_written(out, "cost", err);
	return err;
}

/* Compute and print over an open store. */
int costq_run_store(struct store *st, const char *where,
		    const struct report_query *q, enum report_format fmt,
		    double now, FILE *out)
{
	struct costq_result *r = NULL;
	char sel[256];
	int err;

	if (fmt != REPORT_TEXT && fmt != REPORT_JSON && fmt != REPORT_CSV) {
		log_error("cost: the format is text, json or csv");
		return -EINVAL;
	}
	err = costq_compute(st, where, q, now, &r);
	if (err == -ENOENT) {
		describe(q, sel, sizeof(sel));
		fprintf(stderr, "jobtrace: no ended jobs for %s in %s\n", sel,
			where);
	}
	if (!err)
		err = costq_print(r, q, fmt, out);
	costq_result_free(r);
	return err;
}
