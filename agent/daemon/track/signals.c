// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * signals.c - stall, io_bound, slower_than_usual and memory_near_limit
 * (see signals.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "jobs.h"
#include "log.h"
#include "proc_table.h"
#include "record.h"
#include "schema.h"
#include "signals.h"
#include "timesplit.h"
#include "util.h"

/* Whether a process made progress from prev to c: CPU, I/O or network. */
static bool progressed(const struct jt_counters *prev,
		       const struct jt_counters *c)
{
	return c->cpu_user_s + c->cpu_sys_s !=
		       prev->cpu_user_s + prev->cpu_sys_s ||
	       c->rchar != prev->rchar || c->wchar != prev->wchar ||
	       c->read_bytes != prev->read_bytes ||
	       c->write_bytes != prev->write_bytes ||
	       c->rx_bytes != prev->rx_bytes || c->tx_bytes != prev->tx_bytes;
}

/* Follow one process's stall and I/O-delay episodes. */
unsigned signals_proc(struct jt_sigstate *s, const struct sig_params *p,
		      uint64_t now_ns, const struct jt_counters *prev,
		      const struct jt_counters *c, bool have_prev, bool waiting,
		      struct sig_out *stall, struct sig_out *io)
{
	unsigned ev = 0;

	/* the first sample counts as progress: what came before is unknown */
	if (!s->progress_ns || !have_prev || waiting || progressed(prev, c)) {
		if (s->stalled) {
			memset(stall, 0, sizeof(*stall));
			stall->kind = SIG_STALL_END;
			stall->now_ns = now_ns;
			stall->last_progress_ns = s->progress_ns;
			stall->stalled_s = (now_ns - s->progress_ns) / 1e9;
			s->stalled = false;
			ev |= SIG_EV_STALL_END;
		}
		s->progress_ns = now_ns;
	} else if (!s->stalled && now_ns - s->progress_ns >= p->stall_after_ns) {
		memset(stall, 0, sizeof(*stall));
		stall->kind = SIG_STALL;
		stall->now_ns = now_ns;
		stall->last_progress_ns = s->progress_ns;
		stall->stalled_s = (now_ns - s->progress_ns) / 1e9;
		s->stalled = true;
		ev |= SIG_EV_STALL;
	}

	if (!s->io_t0_ns) {
		s->io_t0_ns = now_ns;
		s->io_delay0_s = c->blkio_delay_s;
	} else if (now_ns - s->io_t0_ns >= p->io_window_ns) {
		double wall = (now_ns - s->io_t0_ns) / 1e9;
		double delay = c->blkio_delay_s - s->io_delay0_s;
		double frac = delay > 0 ? delay / wall : 0;

		if (frac > p->io_above && !s->io_bound) {
			memset(io, 0, sizeof(*io));
			io->kind = SIG_IO_BOUND;
			io->now_ns = now_ns;
			io->window_s = wall;
			io->blkio_delay_s = delay;
			io->fraction = frac;
			ev |= SIG_EV_IO_BOUND;
		}
		s->io_bound = frac > p->io_above;
		s->io_t0_ns = now_ns;
		s->io_delay0_s = c->blkio_delay_s;
	}
	return ev;
}

/* Memory-pressure waits of c: the memory part of where its time went
 * (timesplit.c's table: direct reclaim, thrashing, swap-in), the figure
 * the reports show beside the signal. */
static double mem_wait_s(const struct jt_counters *c)
{
	struct timesplit_in in = { .w = c->w };

	return timesplit_component_named(&in, "memory");
}

/* Fill *o for an episode of kind k that began over a window of wall s. */
static void wait_out(struct sig_out *o, enum sig_kind k, uint64_t now_ns,
		     double wall, double waited)
{
	memset(o, 0, sizeof(*o));
	o->kind = k;
	o->now_ns = now_ns;
	o->window_s = wall;
	o->fraction = waited / wall;
	if (k == SIG_CPU_STARVED)
		o->run_queue_s = waited;
	else if (k == SIG_NET_WAIT)
		o->net_wait_s = waited;
	else
		o->mem_wait_s = waited;
}

/* Follow one process's cpu_starved, memory_pressure and net_wait
 * episodes. */
unsigned signals_wait(struct jt_sigstate *s, const struct sig_params *p,
		      uint64_t now_ns, const struct jt_counters *c,
		      struct sig_out *cpu, struct sig_out *mem,
		      struct sig_out *net)
{
	double wall, rq, mw, nw;
	unsigned ev = 0;
	bool over;

	if (s->wait_t0_ns && now_ns - s->wait_t0_ns < p->io_window_ns)
		return 0;
	if (s->wait_t0_ns) {
		wall = (now_ns - s->wait_t0_ns) / 1e9;
		rq = c->w.run_queue_s - s->run_queue0_s;
		mw = mem_wait_s(c) - s->mem_wait0_s;
		over = rq > p->cpu_starved_above * wall;
		if (over && !s->cpu_starved) {
			wait_out(cpu, SIG_CPU_STARVED, now_ns, wall, rq);
			ev |= SIG_EV_CPU_STARVED;
		}
		s->cpu_starved = over;
		over = mw > p->memory_pressure_above * wall;
		if (over && !s->mem_pressure) {
			wait_out(mem, SIG_MEM_PRESSURE, now_ns, wall, mw);
			ev |= SIG_EV_MEM_PRESSURE;
		}
		s->mem_pressure = over;
		nw = c->w.net_s - s->net0_s;
		over = nw > p->net_wait_above * wall;
		if (over && !s->net_wait) {
			wait_out(net, SIG_NET_WAIT, now_ns, wall, nw);
			ev |= SIG_EV_NET_WAIT;
		}
		s->net_wait = over;
	}
	s->wait_t0_ns = now_ns;
	s->run_queue0_s = c->w.run_queue_s;
	s->mem_wait0_s = mem_wait_s(c);
	s->net0_s = c->w.net_s;
	return ev;
}

/* The process is gone: the end of its signalled stall, if any. */
bool signals_proc_gone(struct jt_sigstate *s, uint64_t now_ns,
		       struct sig_out *out)
{
	if (!s->stalled)
		return false;
	memset(out, 0, sizeof(*out));
	out->kind = SIG_STALL_END;
	out->now_ns = now_ns;
	out->last_progress_ns = s->progress_ns;
	out->stalled_s = now_ns > s->progress_ns ?
				 (now_ns - s->progress_ns) / 1e9 : 0;
	out->exited = true;
	s->stalled = false;
	return true;
}

/* Follow a job's memory episodes. */
bool signals_memory(bool *near, const struct sig_params *p, uint64_t now_ns,
		    uint64_t mem, uint64_t limit, struct sig_out *out)
{
	double frac;

	/* no limit: v2 "max", v1's page-rounded LONG_MAX */
	if (!limit || limit >= (UINT64_C(1) << 60)) {
		*near = false;
		return false;
	}
	frac = (double)mem / limit;
	if (*near) {
		/* a margin, so that a charge that hovers at the threshold
		 * makes one episode, not one a sample */
		if (frac < p->memory_near - 0.05)
			*near = false;
		return false;
	}
	if (frac < p->memory_near)
		return false;
	*near = true;
	memset(out, 0, sizeof(*out));
	out->kind = SIG_MEMORY;
	out->now_ns = now_ns;
	out->mem_bytes = mem;
	out->limit_bytes = limit;
	out->fraction = frac;
	return true;
}

/* Parse a number of bytes or "max". */
int signals_parse_mem(const char *buf, size_t len, uint64_t *out)
{
	uint64_t v = 0;
	size_t i = 0;

	while (len && (buf[len - 1] == '\n' || buf[len - 1] == ' '))
		len--;
	if (len == 3 && !memcmp(buf, "max", 3)) {
		*out = UINT64_MAX;
		return 0;
	}
	if (!len)
		return -EINVAL;
	for (; i < len; i++) {
		unsigned d = (unsigned char)buf[i] - '0';

		if (d > 9 || v > (UINT64_MAX - d) / 10)
			return -EINVAL;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

/* Read and parse dir/name. */
static int read_mem_file(const char *dir, const char *name, uint64_t *out)
{
	char path[640], buf[64];
	ssize_t n;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >=
	    sizeof(path))
		return -ENAMETOOLONG;
	n = util_read_file(path, buf, sizeof(buf));
	return n < 0 ? (int)n : signals_parse_mem(buf, (size_t)n, out);
}

/* Read a memory cgroup's charge and limit. */
int signals_read_memcg(const char *dir, bool v2, uint64_t *mem,
		       uint64_t *limit)
{
	int err = read_mem_file(dir, v2 ? "memory.current" :
				"memory.usage_in_bytes", mem);

	return err ? err : read_mem_file(dir, v2 ? "memory.max" :
					 "memory.limit_in_bytes", limit);
}

/* qsort order of doubles. */
static int by_value(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

/* Median of runs (sorted in place). */
double signals_median(double *runs, size_t n)
{
	qsort(runs, n, sizeof(*runs), by_value);
	return n % 2 ? runs[n / 2] : (runs[n / 2 - 1] + runs[n / 2]) / 2;
}

/* A task instance against its earlier runs. */
bool signals_slower(const struct sig_params *p, double duration_s,
		    double *runs, size_t n, struct sig_out *out)
{
	double med;

	memset(out, 0, sizeof(*out));
	out->kind = SIG_SLOWER;
	out->duration_s = duration_s;
	out->runs = (unsigned)n;
	if (!n || n < p->slower_min_runs)
		return false;
	med = signals_median(runs, n);
	out->median_s = med;
	if (med <= 0)
		return false;
	out->factor = duration_s / med;
	return duration_s > p->slower_factor * med;
}

/* Seconds from the RFC 3339 text in column a to column b of st; -1 when
 * either is not a time. */
static double col_span(sqlite3_stmt *st, int a, int b)
{
	const char *s = (const char *)sqlite3_column_text(st, a);
	const char *e = (const char *)sqlite3_column_text(st, b);
	int64_t s0, s1;
	uint32_t n0, n1;

	if (!s || !e || json_parse_time(s, strlen(s), 0, &s0, &n0) ||
	    json_parse_time(e, strlen(e), 0, &s1, &n1))
		return -1;
	return (double)(s1 - s0) + ((double)n1 - (double)n0) / 1e9;
}

/* Where the run's time went against the earlier runs'. */
int signals_slower_parts(const struct timesplit_in *run,
			 const struct timesplit_in *earlier, size_t n,
			 struct sig_out *out)
{
	double *v = malloc((n ? n : 1) * sizeof(*v));
	struct timesplit ts, e;

	if (!v)
		return -ENOMEM;
	timesplit_compute(run, &ts);
	out->nparts = ts.n;
	out->grew = NULL;
	out->grew_s = 0;
	for (size_t k = 0; k < ts.n; k++) {
		struct sig_part *p = &out->parts[k];
		size_t m = 0;

		for (size_t i = 0; i < n; i++) {
			if (earlier[i].wall_s < 0)
				continue;
			timesplit_compute(&earlier[i], &e);
			v[m++] = e.part[k].s;
		}
		*p = (struct sig_part){ .name = ts.part[k].name,
					.label = ts.part[k].label,
					.s = ts.part[k].s,
					.median_s = m ? signals_median(v, m) : -1 };
		if (m && p->s - p->median_s > out->grew_s) {
			out->grew = p->name;
			out->grew_s = p->s - p->median_s;
		}
	}
	free(v);
	return 0;
}

/* The earlier runs' query: their times, then each figure of where their
 * time went (timesplit_field_path) under usage; 0 or -ENAMETOOLONG. */
static int runs_sql(char *sql, size_t len)
{
	size_t o;

	o = (size_t)snprintf(sql, len, "SELECT json_extract(json, '$.start_time'),"
			     " json_extract(json, '$.end_time')");
	for (size_t i = 0; i < timesplit_nfields() && o < len; i++)
		o += (size_t)snprintf(sql + o, len - o, ", json_extract(json,"
				      " '$.usage.%s')", timesplit_field_path(i));
	if (o < len)
		o += (size_t)snprintf(sql + o, len - o, " FROM record"
			" WHERE type = 'job' AND json_extract(json, '$.phase') = 'end'"
			" AND json_extract(json, '$.job.pipeline') = ?1"
			" AND json_extract(json, '$.job.task') = ?2"
			" AND json_extract(json, '$.job.user') IS nullif(?6, '')"
			" AND NOT (json_extract(json, '$.job.scheduler') IS ?3"
			" AND json_extract(json, '$.job.id') IS ?4)"
			" ORDER BY time DESC LIMIT ?5");
	return o < len ? 0 : -ENAMETOOLONG;
}

/* Where the run of row st went (columns 2...): wall_s -1 when its record
 * has no usage.wall_s (an agent before it). */
static void row_split(sqlite3_stmt *st, struct timesplit_in *in)
{
	memset(in, 0, sizeof(*in));
	for (size_t i = 0; i < timesplit_nfields(); i++)
		timesplit_field_set(in, i, sqlite3_column_type(st, (int)i + 2) ==
				    SQLITE_NULL ? (i ? 0 : -1) :
				    sqlite3_column_double(st, (int)i + 2));
}

/* Durations of the earlier ends of (user, pipeline, task) in the store. */
int signals_store_runs(const char *path, const struct jt_job *job,
		       double *runs, struct timesplit_in *splits, size_t max)
{
	/* job records are in the record table, their members in its JSON */
	char sql[2048];
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	int rc, n = 0;

	if (runs_sql(sql, sizeof(sql)))
		return -ENAMETOOLONG;
	rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY |
			     SQLITE_OPEN_NOMUTEX, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_busy_timeout(db, 2000);
		rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
	}
	if (rc != SQLITE_OK) {
		log_warn("slower_than_usual: store %s: %s", path,
			 db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
		n = -EIO;
		goto cleanup;
	}
	sqlite3_bind_text(st, 1, job->pipeline, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, job->task, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, job->scheduler, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, job->id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 5, (sqlite3_int64)max);
	sqlite3_bind_text(st, 6, job->user, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW && (size_t)n < max) {
		double d = col_span(st, 0, 1);

		if (d < 0)
			continue;
		if (splits)
			row_split(st, &splits[n]);
		runs[n++] = d;
	}
	if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
		log_warn("slower_than_usual: store %s: %s", path,
			 sqlite3_errmsg(db));
		n = -EIO;
	}
cleanup:
	sqlite3_finalize(st);
	sqlite3_close(db);
	return n;
}

/* Read a small /proc file of pid into buf (NUL-terminated); its length or
 * -errno. */
static ssize_t read_proc(uint32_t pid, const char *name, char *buf,
			 size_t len)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%" PRIu32 "/%s", pid, name);
	return util_read_file(path, buf, len);
}

/* The state letter of /proc/PID/stat and the symbol of /proc/PID/wchan. */
void signals_wait_state(uint32_t pid, struct sig_out *out)
{
	char buf[512];
	char *rp;
	ssize_t n;

	out->state[0] = out->wchan[0] = '\0';
	/* "pid (comm) S ...": comm may hold ") " itself, the last one ends it */
	if (read_proc(pid, "stat", buf, sizeof(buf)) > 0 &&
	    (rp = strrchr(buf, ')')) && rp[1] == ' ' && rp[2] &&
	    rp[2] != ' ') {
		out->state[0] = rp[2];
		out->state[1] = '\0';
	}
	n = read_proc(pid, "wchan", buf, sizeof(buf));
	/* "0" when it runs, or when kallsyms hides the address */
	if (n > 0 && strcmp(buf, "0"))
		util_strlcpy(out->wchan, buf, sizeof(out->wchan));
}

/* The kind's name in records. */
const char *signals_kind_name(enum sig_kind k)
{
	switch (k) {
	case SIG_STALL:
	case SIG_STALL_END:
		return "stall";
	case SIG_IO_BOUND:
		return "io_bound";
	case SIG_SLOWER:
		return "slower_than_usual";
	case SIG_MEMORY:
		return "memory_near_limit";
	case SIG_CPU_STARVED:
		return "cpu_starved";
	case SIG_MEM_PRESSURE:
		return "memory_pressure";
	case SIG_NET_WAIT:
		return "net_wait";
	default:
		return "?";
	}
}

/* slower_than_usual's parts (elements in parts) and the one that grew. */
static void parts_values(struct sv *v, struct sv (*parts)[VP__N],
			 const struct sig_out *s)
{
	if (!s->nparts)
		return;
	memset(parts, 0, s->nparts * sizeof(parts[0]));
	for (size_t k = 0; k < s->nparts; k++) {
		sv_str(&parts[k][VP_PART_NAME], s->parts[k].name);
		sv_f64(&parts[k][VP_PART_S], s->parts[k].s);
		if (s->parts[k].median_s >= 0)
			sv_f64(&parts[k][VP_PART_MEDIAN_S], s->parts[k].median_s);
	}
	v[V_EV_PARTS].st = SV_SET;
	v[V_EV_PARTS].n = (uint32_t)s->nparts;
	v[V_EV_PARTS].elems = &parts[0][0];
	if (s->grew) {
		sv_str(&v[V_EV_GREW], s->grew);
		sv_f64(&v[V_EV_GREW_S], s->grew_s);
	}
}

/* The evidence members of s's kind (parts: room for slower_than_usual's). */
static void evidence_values(struct sv *v, const struct jt_host *h,
			    const struct sig_out *s, struct sv (*parts)[VP__N])
{
	v[V_EVIDENCE].st = SV_SET;
	switch (s->kind) {
	case SIG_STALL:
	case SIG_STALL_END:
		sv_str(&v[V_EV_PHASE], s->kind == SIG_STALL ? "start" : "end");
		sv_f64(&v[V_EV_STALLED_S], s->stalled_s);
		sv_u64(&v[V_EV_LAST_PROGRESS],
		       record_realtime(h, s->last_progress_ns));
		if (s->kind == SIG_STALL) {
			sv_str_opt(&v[V_EV_STATE], s->state);
			sv_str_opt(&v[V_EV_WCHAN], s->wchan);
		} else {
			sv_bool(&v[V_EV_EXITED], s->exited);
		}
		break;
	case SIG_IO_BOUND:
		sv_f64(&v[V_EV_WINDOW_S], s->window_s);
		sv_f64(&v[V_EV_BLKIO_DELAY_S], s->blkio_delay_s);
		sv_f64(&v[V_EV_FRACTION], s->fraction);
		break;
	case SIG_SLOWER:
		sv_f64(&v[V_EV_DURATION_S], s->duration_s);
		sv_f64(&v[V_EV_MEDIAN_S], s->median_s);
		sv_u64(&v[V_EV_RUNS], s->runs);
		sv_f64(&v[V_EV_FACTOR], s->factor);
		parts_values(v, parts, s);
		break;
	case SIG_CPU_STARVED:
	case SIG_MEM_PRESSURE:
	case SIG_NET_WAIT:
		sv_f64(&v[V_EV_WINDOW_S], s->window_s);
		if (s->kind == SIG_CPU_STARVED)
			sv_f64(&v[V_EV_RUN_QUEUE_S], s->run_queue_s);
		else if (s->kind == SIG_NET_WAIT)
			sv_f64(&v[V_EV_NET_WAIT_S], s->net_wait_s);
		else
			sv_f64(&v[V_EV_MEMORY_WAIT_S], s->mem_wait_s);
		sv_f64(&v[V_EV_FRACTION], s->fraction);
		if (s->kind == SIG_CPU_STARVED) {
			v[V_SIG_JOBS].st = SV_SET;
			v[V_SIG_JOBS].s = s->jobs;
			v[V_SIG_JOBS].n = s->jobs_len;
		}
		break;
	case SIG_MEMORY:
		sv_u64(&v[V_EV_MEM_BYTES], s->mem_bytes);
		sv_u64(&v[V_EV_LIMIT_BYTES], s->limit_bytes);
		sv_f64(&v[V_EV_FRACTION], s->fraction);
		sv_str_opt(&v[V_EV_SOURCE], s->mem_source);
		break;
	default:
		break;
	}
}

/* Encode a signal as a `signal` record. */
void signals_record(struct jbuf *b, const struct jt_host *h,
		    const struct sig_out *s, const struct jt_job *job,
		    const struct jt_batch *batch, const struct jt_proc *p)
{
	struct sv v[V__N] = { 0 };
	struct sv parts[TIMESPLIT_MAX][VP__N];
	char key[256], id[37];

	/* one id an episode (and phase): a retry is the same record */
	snprintf(key, sizeof(key), "%s:%s:%" PRIu32 ":%" PRIu64 ":%s:%s",
		 signals_kind_name(s->kind), s->kind == SIG_STALL_END ?
		 "end" : "", p ? p->pid : 0, p ? p->start_ns : 0,
		 job ? job->scheduler : "", job ? job->id : "");
	record_make_id(h, "signal", key, s->kind == SIG_STALL_END ?
		       s->last_progress_ns + 1 : s->kind == SIG_STALL ?
		       s->last_progress_ns : s->now_ns, id);
	record_head_values(v, h, id);
	sv_str(&v[V_KIND], signals_kind_name(s->kind));
	sv_u64(&v[V_TIME], record_realtime(h, s->now_ns));
	if (job) {
		record_job_values(v, job);
		record_batch_values(v, batch);
	}
	if (p) {
		sv_u64(&v[V_SIG_PID], p->pid);
		sv_str(&v[V_SIG_COMM], p->comm);
		record_tool_values(v, p->tool_name, p->tool_category,
				   p->tool_version);
	} else {
		record_tool_values(v, NULL, NULL, NULL);
	}
	evidence_values(v, h, s, parts);
	schema_write(b, &sf_records[SF_REC_SIGNAL], v);
}

/* ---- slower_than_usual checks on threads ------------------------------ */

/* At most this many earlier runs make the median. */
#define SLOW_MAX_RUNS 1000

struct slow_req {
	struct sig_slow *q;
	char path[512];
	struct sig_params p;
	struct sig_slow_done d;
	struct timesplit_in split;	/* where the run's time went */
	bool done, used;
	pthread_t th;
};

struct sig_slow {
	pthread_mutex_t mu;
	struct slow_req req[SIG_SLOW_THREADS];
	uint64_t skipped;
};

/* A queue of checks. */
struct sig_slow *signals_slow_new(void)
{
	struct sig_slow *q = calloc(1, sizeof(*q));

	if (q)
		pthread_mutex_init(&q->mu, NULL);
	return q;
}

/* Wait for the checks and free the queue. */
void signals_slow_free(struct sig_slow *q)
{
	if (!q)
		return;
	for (int i = 0; i < SIG_SLOW_THREADS; i++)
		if (q->req[i].used)
			pthread_join(q->req[i].th, NULL);
	pthread_mutex_destroy(&q->mu);
	free(q);
}

/* One check: read the store, compare; a slower run's parts against the
 * earlier runs'. */
static void *slow_thread(void *arg)
{
	struct slow_req *r = arg;
	double *runs = malloc(SLOW_MAX_RUNS * sizeof(*runs));
	struct timesplit_in *splits = malloc(SLOW_MAX_RUNS * sizeof(*splits));
	int n = runs && splits ?
		signals_store_runs(r->path, &r->d.job, runs, splits,
				   SLOW_MAX_RUNS) : -ENOMEM;
	struct sig_out o;
	bool slower = n >= 0 &&
		      signals_slower(&r->p, r->d.out.duration_s, runs,
				     (size_t)n, &o);

	if (slower && signals_slower_parts(&r->split, splits, (size_t)n, &o))
		o.nparts = 0;	/* out of memory: the duration alone */
	free(runs);
	free(splits);
	pthread_mutex_lock(&r->q->mu);
	if (n < 0)
		r->q->skipped++;
	if (slower) {
		o.now_ns = r->d.out.now_ns;
		r->d.out = o;
	}
	r->d.slower = slower;
	r->done = true;
	pthread_mutex_unlock(&r->q->mu);
	return NULL;
}

/* Check a task instance that just ended, on a thread. */
int signals_slow_check(struct sig_slow *q, const char *path,
		       const struct sig_params *p, const struct jt_jobinfo *ji,
		       uint64_t now_ns)
{
	struct slow_req *r = NULL;
	int err;

	if (!ji->job.pipeline[0] || !ji->job.task[0] || !ji->end_ns ||
	    ji->end_ns < ji->start_ns || !path || !*path)
		return -EINVAL;
	pthread_mutex_lock(&q->mu);
	for (int i = 0; i < SIG_SLOW_THREADS && !r; i++)
		if (!q->req[i].used)
			r = &q->req[i];
	if (!r) {
		q->skipped++;
		pthread_mutex_unlock(&q->mu);
		return -EBUSY;
	}
	memset(r, 0, sizeof(*r));
	r->q = q;
	r->used = true;
	util_strlcpy(r->path, path, sizeof(r->path));
	r->p = *p;
	r->d.job = ji->job;
	r->d.out.duration_s = (ji->end_ns - ji->start_ns) / 1e9;
	jobs_usage_split_in(&ji->usage, &r->split);
	r->d.out.now_ns = now_ns;
	err = util_thread_start(&r->th, slow_thread, r);
	if (err) {
		r->used = false;
		q->skipped++;
	}
	pthread_mutex_unlock(&q->mu);
	return err;
}

/* Take one finished check. */
bool signals_slow_take(struct sig_slow *q, struct sig_slow_done *d)
{
	struct slow_req *r = NULL;

	pthread_mutex_lock(&q->mu);
	for (int i = 0; i < SIG_SLOW_THREADS && !r; i++)
		if (q->req[i].used && q->req[i].done)
			r = &q->req[i];
	pthread_mutex_unlock(&q->mu);
	if (!r)
		return false;
	pthread_join(r->th, NULL);
	*d = r->d;
	pthread_mutex_lock(&q->mu);
	r->used = false;
	pthread_mutex_unlock(&q->mu);
	return true;
}

/* Checks skipped or failed. */
uint64_t signals_slow_skipped(const struct sig_slow *q)
{
	return q ? q->skipped : 0;
}

/* The status lines. */
void signals_status(const uint64_t counts[SIG__N], uint64_t skipped,
		    FILE *out)
{
	fprintf(out, "signals_stall: %" PRIu64 " (ended %" PRIu64 ")\n",
		counts[SIG_STALL], counts[SIG_STALL_END]);
	fprintf(out, "signals_io_bound: %" PRIu64 "\n", counts[SIG_IO_BOUND]);
	fprintf(out, "signals_slower_than_usual: %" PRIu64
		" (checks skipped or failed: %" PRIu64 ")\n",
		counts[SIG_SLOWER], skipped);
	fprintf(out, "signals_memory_near_limit: %" PRIu64 "\n",
		counts[SIG_MEMORY]);
	fprintf(out, "signals_cpu_starved: %" PRIu64 "\n",
		counts[SIG_CPU_STARVED]);
	fprintf(out, "signals_memory_pressure: %" PRIu64 "\n",
		counts[SIG_MEM_PRESSURE]);
	fprintf(out, "signals_net_wait: %" PRIu64 "\n",
		counts[SIG_NET_WAIT]);
}

/* ---- the agent's side ------------------------------------------------ */

/* Set up. */
int signals_agent_init(struct sig_agent *a)
{
	jbuf_init(&a->jb);
	a->slow = signals_slow_new();
	return a->slow ? 0 : -ENOMEM;
}

/* Wait for the checks, free. */
void signals_agent_fini(struct sig_agent *a)
{
	signals_slow_free(a->slow);
	a->slow = NULL;
	jbuf_free(&a->jb);
}

/* Encode and hand on one signal. */
static void emit(struct sig_agent *a, const struct sig_out *s,
		 const struct jt_job *job, const struct jt_proc *p)
{
	const struct jt_jobinfo *ji = NULL;

	if (job && !strcmp(job->scheduler, "aws-batch"))
		ji = jobs_get(a->jobs, job->scheduler, job->id, false);
	log_info("%s signal%s: job %s:%s, pid %u", signals_kind_name(s->kind),
		 s->kind == SIG_STALL_END ? " (end)" : "",
		 job ? job->scheduler : "-", job ? job->id : "-",
		 p ? p->pid : 0);
	jbuf_reset(&a->jb);
	signals_record(&a->jb, a->host, s, job, ji ? &ji->batch : NULL, p);
	a->put(a->ctx, &a->jb);
	a->counts[s->kind]++;
}

struct pass_ctx {
	struct proc_table *procs;
	struct sig_agent *a;
	const struct sig_params *p;
	unsigned gen;
};

/* Whether the pass saw p running. */
static bool live(const struct jt_proc *p, unsigned gen)
{
	return p->sample_gen == gen && !p->end_ns &&
	       !(p->state & (JT_PS_EXITED | JT_PS_EXCLUDED));
}

/* Mark p's parent as waiting for a live child (proc_table_foreach's fn). */
static void mark_parent(struct jt_proc *p, void *arg)
{
	struct pass_ctx *pc = arg;
	struct jt_proc *parent;

	if (live(p, pc->gen) && (parent = proc_table_parent(pc->procs, p)))
		parent->sig.child_gen = pc->gen;
}

struct others_ctx {
	const struct jt_job *own;
	struct jbuf names;
};

/* Add a running job other than the process's own (jobs_foreach_running's
 * fn): "scheduler:id" and its NUL. */
static void other_job(struct jt_jobinfo *ji, void *arg)
{
	struct others_ctx *oc = arg;
	const struct jt_job *j = &ji->job;

	if (!strcmp(j->scheduler, oc->own->scheduler) &&
	    !strcmp(j->id, oc->own->id))
		return;
	if (jbuf_put(&oc->names, j->scheduler, strlen(j->scheduler)) ||
	    jbuf_put(&oc->names, ":", 1) ||
	    jbuf_put(&oc->names, j->id, strlen(j->id) + 1))
		oc->names.oom = true;
}

/* A cpu_starved signal for p, naming the other jobs running now. */
static void emit_starved(struct sig_agent *a, struct sig_out *o,
			 struct jt_proc *p)
{
	struct others_ctx oc = { .own = &p->job };

	jbuf_init(&oc.names);
	jobs_foreach_running(a->jobs, other_job, &oc);
	o->jobs = oc.names.oom ? NULL : oc.names.buf;
	o->jobs_len = oc.names.oom ? 0 : oc.names.len;
	emit(a, o, &p->job, p);
	jbuf_free(&oc.names);
}

/* One process after a pass (proc_table_foreach's fn). */
static void proc_one(struct jt_proc *p, void *arg)
{
	struct pass_ctx *pc = arg;
	struct sig_out st, io, cpu, mem, net;
	unsigned ev;

	if (!live(p, pc->gen) || !record_job_named(&p->job))
		return;
	ev = signals_proc(&p->sig, pc->p, p->sample_ns, &p->prev, &p->c,
			  p->prev_sample_ns != 0, p->sig.child_gen == pc->gen,
			  &st, &io);
	if (ev & SIG_EV_STALL)
		signals_wait_state(p->pid, &st);
	if (ev & (SIG_EV_STALL | SIG_EV_STALL_END))
		emit(pc->a, &st, &p->job, p);
	if (ev & SIG_EV_IO_BOUND)
		emit(pc->a, &io, &p->job, p);
	ev = signals_wait(&p->sig, pc->p, p->sample_ns, &p->c, &cpu, &mem,
			  &net);
	if (ev & SIG_EV_CPU_STARVED)
		emit_starved(pc->a, &cpu, p);
	if (ev & SIG_EV_MEM_PRESSURE)
		emit(pc->a, &mem, &p->job, p);
	if (ev & SIG_EV_NET_WAIT)
		emit(pc->a, &net, &p->job, p);
}

struct mem_ctx {
	struct sig_agent *a;
	const struct sig_params *p;
	uint64_t now_ns;
	bool v2;
};

/* One running job's memory cgroup (jobs_foreach_running's fn). */
static void memory_one(struct jt_jobinfo *ji, void *arg)
{
	struct mem_ctx *mc = arg;
	char dir[640];
	uint64_t mem, lim;
	struct sig_out o;

	if (!ji->cgroup[0] && !ji->memcg[0])
		return;
	/* the registered cgroup, else the one its processes showed */
	snprintf(dir, sizeof(dir), "%s%s", mc->v2 ? "/sys/fs/cgroup" :
		 "/sys/fs/cgroup/memory", ji->cgroup[0] ? ji->cgroup : ji->memcg);
	if (signals_read_memcg(dir, mc->v2, &mem, &lim) ||
	    !signals_memory(&ji->mem_near, mc->p, mc->now_ns, mem, lim, &o))
		return;
	o.mem_source = mc->v2 ? "cgroup_v2" : "cgroup_v1";
	emit(mc->a, &o, &ji->job, NULL);
}

/* After a sample pass. */
void signals_agent_pass(struct sig_agent *a, const struct sig_params *p,
			struct proc_table *procs, unsigned gen, bool v2)
{
	struct pass_ctx pc = { .procs = procs, .a = a, .p = p, .gen = gen };
	struct mem_ctx mc = { .a = a, .p = p, .v2 = v2,
			      .now_ns = util_now_ns(CLOCK_BOOTTIME) };

	proc_table_foreach(procs, mark_parent, &pc);
	proc_table_foreach(procs, proc_one, &pc);
	jobs_foreach_running(a->jobs, memory_one, &mc);
	signals_agent_poll(a);
}

/* A process is gone. */
void signals_agent_gone(struct sig_agent *a, struct jt_proc *p,
			uint64_t now_ns)
{
	struct sig_out o;

	if (signals_proc_gone(&p->sig, now_ns, &o))
		emit(a, &o, &p->job, p);
}

/* A job ended. */
void signals_agent_job_end(struct sig_agent *a, const struct sig_params *p,
			   const struct jt_jobinfo *ji, const char *path,
			   uint64_t now_ns)
{
	int err;

	if (!path)
		return;
	err = signals_slow_check(a->slow, path, p, ji, now_ns);
	if (err && err != -EINVAL)
		log_warn("slower_than_usual: job %s:%s not checked: %s",
			 ji->job.scheduler, ji->job.id, strerror(-err));
}

/* Emit the finished slow checks. */
void signals_agent_poll(struct sig_agent *a)
{
	struct sig_slow_done d;

	while (signals_slow_take(a->slow, &d))
		if (d.slower)
			emit(a, &d.out, &d.job, NULL);
}
