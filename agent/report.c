// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * report.c - `jobtrace report` and `jobtrace export` over the SQLite store.
 *
 * Reports select process rows, link them into a tree by the parent's
 * record id (parent_id) and print it as text, JSON or HTML.  Rows of
 * several hosts (a multi-node job) make one report.  Exports print the
 * stored schema v1 JSON verbatim, one record per line.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>	/* isfinite only: no libm needed */
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sqlite3.h>

#include "json.h"
#include "log.h"
#include "report.h"
#include "store.h"
#include "util.h"

#define TOOL_WIDTH 30		/* display columns of the TOOL column */
#define ARGV_SHOWN 60		/* characters of argv shown per process */
#define MAX_DRAWN_DEPTH 24	/* deeper levels reuse the deepest indent */

/* One selected process, as the report needs it. */
struct row {
	char *id;
	char *parent_id;
	char *host;
	char *exe;
	char *comm;
	char *argv;		/* JSON array text */
	char *tool;
	char *json;
	int64_t pid;
	int64_t ppid;
	double start;		/* epoch seconds */
	double end;		/* epoch seconds, valid unless running */
	bool running;
	int exit_code;
	int exit_signal;
	bool oom;
	double cpu_user;
	double cpu_sys;
	uint64_t peak_rss;
	uint64_t read_bytes;
	uint64_t write_bytes;
	uint64_t rx;
	uint64_t tx;

	/* tree links: indices into the row array, -1 for none */
	long parent;
	long first_child;
	long last_child;
	long next_sibling;
	int depth;
};

struct rows {
	struct row *v;
	size_t n;
	size_t cap;
};

/* Totals over the selection. */
struct summary {
	size_t processes;
	size_t failed;
	size_t oom;
	size_t running;
	double cpu_user;
	double cpu_sys;
	uint64_t peak_rss;
	uint64_t read_bytes;
	uint64_t write_bytes;
	uint64_t rx;
	uint64_t tx;
	double first_start;
	double last_end;
	const char **hosts;	/* distinct host names, sorted (borrowed) */
	size_t nhosts;
	int host_width;		/* width of the longest, capped */
};

#define HOST_WIDTH_MAX 24	/* longer host names overflow the column */

#define ROW_COLUMNS \
	"id, host, pid, ppid, parent_id, start_time," \
	" end_time, exe, comm, argv, tool_name, exit_code, exit_signal," \
	" oom_killed, cpu_user_s, cpu_sys_s, peak_rss_bytes, read_bytes," \
	" write_bytes, rx_bytes, tx_bytes, json"

/* Process rows of the newest process with a pid and all its descendants. */
#define PID_SUBTREE \
	"WITH RECURSIVE sel(id, pid) AS (" \
	" SELECT * FROM (SELECT id, pid FROM process" \
	"  WHERE pid = ?1 ORDER BY start_time DESC, id DESC LIMIT 1)" \
	" UNION" \
	" SELECT c.id, c.pid FROM process c JOIN sel" \
	"  ON c.ppid = sel.pid AND c.parent_id = sel.id) "

/* Parse a --format word. */
int report_format_parse(const char *s, enum report_format *out)
{
	static const char *const names[] = {
		[REPORT_TEXT] = "text", [REPORT_JSON] = "json",
		[REPORT_HTML] = "html", [REPORT_NDJSON] = "ndjson",
	};

	if (!s)
		return -EINVAL;
	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (strcmp(s, names[i]) == 0) {
			*out = (enum report_format)i;
			return 0;
		}
	}
	return -EINVAL;
}

/* Read exactly n decimal digits. */
static int digits(const char **s, int n, int *out)
{
	int v = 0;

	for (int i = 0; i < n; i++) {
		if (!isdigit((unsigned char)(*s)[i]))
			return -EINVAL;
		v = v * 10 + ((*s)[i] - '0');
	}
	*s += n;
	*out = v;
	return 0;
}

/* Days in a month of the proleptic Gregorian calendar. */
static int month_days(int year, int month)
{
	static const int days[] = { 31, 28, 31, 30, 31, 30,
				    31, 31, 30, 31, 30, 31 };
	bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;

	return month == 2 && leap ? 29 : days[month - 1];
}

/* Parse an absolute date/time; UTC unless an offset is given. */
static int parse_datetime(const char *s, double *out)
{
	int year, mon, day, hour = 0, min = 0, sec = 0, oh, om;
	double frac = 0, offset = 0;
	struct tm tm = { 0 };
	time_t t;

	if (digits(&s, 4, &year) || *s++ != '-' || digits(&s, 2, &mon) ||
	    *s++ != '-' || digits(&s, 2, &day))
		return -EINVAL;
	if (year < 1970 || mon < 1 || mon > 12 || day < 1 ||
	    day > month_days(year, mon))
		return -EINVAL;
	if (*s == ' ' || *s == 'T' || *s == 't') {
		s++;
		if (digits(&s, 2, &hour) || *s++ != ':' ||
		    digits(&s, 2, &min))
			return -EINVAL;
		if (*s == ':') {
			s++;
			if (digits(&s, 2, &sec))
				return -EINVAL;
			if (*s == '.') {
				double scale = 0.1;

				s++;
				if (!isdigit((unsigned char)*s))
					return -EINVAL;
				for (; isdigit((unsigned char)*s); s++) {
					frac += (*s - '0') * scale;
					scale /= 10;
				}
			}
		}
		if (hour > 23 || min > 59 || sec > 60)
			return -EINVAL;
		if (*s == 'Z' || *s == 'z') {
			s++;
		} else if (*s == '+' || *s == '-') {
			int sign = *s++ == '-' ? -1 : 1;

			if (digits(&s, 2, &oh) || *s++ != ':' ||
			    digits(&s, 2, &om) || oh > 23 || om > 59)
				return -EINVAL;
			offset = sign * (oh * 3600.0 + om * 60.0);
		}
	}
	if (*s)
		return -EINVAL;

	tm.tm_year = year - 1900;
	tm.tm_mon = mon - 1;
	tm.tm_mday = day;
	tm.tm_hour = hour;
	tm.tm_min = min;
	tm.tm_sec = sec;
	t = timegm(&tm);
	if (t == (time_t)-1)
		return -EINVAL;
	*out = (double)t + frac - offset;
	return 0;
}

/* Parse --since: absolute, @epoch or relative to now. */
int report_parse_since(const char *s, double now, double *out)
{
	static const struct { char unit; double secs; } units[] = {
		{ 's', 1 }, { 'm', 60 }, { 'h', 3600 }, { 'd', 86400 },
	};
	char *end;
	double v;

	if (!s || !*s)
		return -EINVAL;
	if (s[0] == '@') {
		if (!isdigit((unsigned char)s[1]))
			return -EINVAL;
		errno = 0;
		v = strtod(s + 1, &end);
		if (errno || *end || !isfinite(v))
			return -EINVAL;
		*out = v;
		return 0;
	}
	if (strlen(s) >= 10 && s[4] == '-')
		return parse_datetime(s, out);

	/* relative: digits and one unit letter */
	if (!isdigit((unsigned char)s[0]))
		return -EINVAL;
	errno = 0;
	unsigned long long n = strtoull(s, &end, 10);

	if (errno || n > 1000000000ULL || !end[0] || end[1])
		return -EINVAL;
	for (unsigned i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (end[0] == units[i].unit) {
			*out = now - (double)n * units[i].secs;
			return 0;
		}
	}
	return -EINVAL;
}

/* strdup of a text column; NULL stays NULL. */
static int col_dup(sqlite3_stmt *st, int i, char **out)
{
	const unsigned char *t = sqlite3_column_text(st, i);

	*out = NULL;
	if (!t)
		return 0;
	*out = strdup((const char *)t);
	return *out ? 0 : -ENOMEM;
}

/* Free every row and the array. */
static void rows_free(struct rows *r)
{
	for (size_t i = 0; i < r->n; i++) {
		struct row *w = &r->v[i];

		free(w->id);
		free(w->parent_id);
		free(w->host);
		free(w->exe);
		free(w->comm);
		free(w->argv);
		free(w->tool);
		free(w->json);
	}
	free(r->v);
	r->v = NULL;
	r->n = r->cap = 0;
}

/* Append the current result row of st. */
static int rows_add(struct rows *r, sqlite3_stmt *st)
{
	struct row *w;
	int err = 0;

	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 64;
		struct row *v = realloc(r->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		r->v = v;
		r->cap = cap;
	}
	w = &r->v[r->n++];
	memset(w, 0, sizeof(*w));
	err |= col_dup(st, 0, &w->id);
	err |= col_dup(st, 1, &w->host);
	w->pid = sqlite3_column_int64(st, 2);
	w->ppid = sqlite3_column_int64(st, 3);
	err |= col_dup(st, 4, &w->parent_id);
	w->start = sqlite3_column_double(st, 5);
	w->running = sqlite3_column_type(st, 6) == SQLITE_NULL;
	w->end = w->running ? w->start : sqlite3_column_double(st, 6);
	err |= col_dup(st, 7, &w->exe);
	err |= col_dup(st, 8, &w->comm);
	err |= col_dup(st, 9, &w->argv);
	err |= col_dup(st, 10, &w->tool);
	w->exit_code = sqlite3_column_int(st, 11);
	w->exit_signal = sqlite3_column_int(st, 12);
	w->oom = sqlite3_column_int(st, 13) != 0;
	w->cpu_user = sqlite3_column_double(st, 14);
	w->cpu_sys = sqlite3_column_double(st, 15);
	w->peak_rss = (uint64_t)sqlite3_column_int64(st, 16);
	w->read_bytes = (uint64_t)sqlite3_column_int64(st, 17);
	w->write_bytes = (uint64_t)sqlite3_column_int64(st, 18);
	w->rx = (uint64_t)sqlite3_column_int64(st, 19);
	w->tx = (uint64_t)sqlite3_column_int64(st, 20);
	err |= col_dup(st, 21, &w->json);
	w->parent = w->first_child = w->last_child = w->next_sibling = -1;
	return err ? -ENOMEM : 0;
}

/* Epoch seconds to realtime ns, rounded; negative becomes 0. */
static uint64_t to_ns(double t)
{
	return t > 0 ? (uint64_t)(t * 1e9 + 0.5) : 0;
}

/* Check the query has exactly one selector. */
static int query_check(const struct report_query *q)
{
	int n = !!(q->job && *q->job) + !!(q->run && *q->run) +
		(q->since != 0) + (q->pid != 0);

	if (n != 1) {
		log_error("report: give exactly one of --job, --run, --since,"
			  " --pid");
		return -EINVAL;
	}
	if (q->pid < 0) {
		log_error("report: bad pid %lld", (long long)q->pid);
		return -EINVAL;
	}
	return 0;
}

/* Describe the selector for messages and headers ("job 42"). */
static void query_describe(const struct report_query *q, char *out,
			   size_t len)
{
	char t[40];

	if (q->job && *q->job) {
		snprintf(out, len, "job %s", q->job);
	} else if (q->run && *q->run) {
		snprintf(out, len, "run %s", q->run);
	} else if (q->pid) {
		snprintf(out, len, "pid %lld", (long long)q->pid);
	} else {
		json_format_time(to_ns(q->since), t, sizeof(t));
		snprintf(out, len, "since %s", t);
	}
}

/* Prepare a statement and bind the query's selector as ?1. */
static int prepare_bound(sqlite3 *db, const char *path, const char *sql,
			 const struct report_query *q, sqlite3_stmt **out)
{
	int rc;

	rc = sqlite3_prepare_v2(db, sql, -1, out, NULL);
	if (rc != SQLITE_OK) {
		log_error("database %s: %s", path, sqlite3_errmsg(db));
		return -EIO;
	}
	if (q->job && *q->job)
		rc = sqlite3_bind_text(*out, 1, q->job, -1, SQLITE_STATIC);
	else if (q->run && *q->run)
		rc = sqlite3_bind_text(*out, 1, q->run, -1, SQLITE_STATIC);
	else if (q->pid)
		rc = sqlite3_bind_int64(*out, 1, q->pid);
	else
		rc = sqlite3_bind_double(*out, 1, q->since);
	if (rc != SQLITE_OK) {
		log_error("database %s: %s", path, sqlite3_errmsg(db));
		return -EIO;
	}
	return 0;
}

/* Select the process rows of q, ordered by start time. */
static int load_rows(sqlite3 *db, const char *path,
		     const struct report_query *q, struct rows *r)
{
	static const char order[] = " ORDER BY start_time, id";
	sqlite3_stmt *st = NULL;
	char sql[1024];
	int rc, err;

	if (q->job && *q->job)
		snprintf(sql, sizeof(sql), "SELECT " ROW_COLUMNS
			 " FROM process WHERE job_id = ?1%s", order);
	else if (q->run && *q->run)
		snprintf(sql, sizeof(sql), "SELECT " ROW_COLUMNS
			 " FROM process WHERE job_run = ?1%s", order);
	else if (q->pid)
		snprintf(sql, sizeof(sql), PID_SUBTREE "SELECT " ROW_COLUMNS
			 " FROM process WHERE id IN (SELECT id FROM sel)%s",
			 order);
	else
		snprintf(sql, sizeof(sql), "SELECT " ROW_COLUMNS
			 " FROM process"
			 " WHERE since_time >= ?1%s",
			 order);

	err = prepare_bound(db, path, sql, q, &st);
	if (err)
		goto cleanup;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		err = rows_add(r, st);
		if (err)
			goto cleanup;
	}
	if (rc != SQLITE_DONE) {
		log_error("database %s: %s", path, sqlite3_errmsg(db));
		err = -EIO;
	}

cleanup:
	sqlite3_finalize(st);
	return err;
}

/* Order row indices by record id for the parent lookup. */
static int cmp_id(const void *a, const void *b, void *arg)
{
	const struct row *v = arg;
	const char *x = v[*(const long *)a].id;
	const char *y = v[*(const long *)b].id;

	return strcmp(x ? x : "", y ? y : "");
}

/* Find the row with record id id in the index sorted by id. */
static long find_row(const struct rows *r, const long *idx, const char *id)
{
	size_t lo = 0, hi = r->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const char *m = r->v[idx[mid]].id;
		int c = strcmp(m ? m : "", id);

		if (c == 0)
			return idx[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/*
 * Link rows into a forest by parent_id; children keep start-time order.
 * Ids carry host and boot, so processes of several hosts never mix.
 */
static int build_tree(struct rows *r)
{
	long *idx;

	idx = malloc((r->n ? r->n : 1) * sizeof(*idx));
	if (!idx)
		return -ENOMEM;
	for (size_t i = 0; i < r->n; i++)
		idx[i] = (long)i;
	qsort_r(idx, r->n, sizeof(*idx), cmp_id, r->v);

	for (size_t i = 0; i < r->n; i++) {
		struct row *w = &r->v[i];
		long p = w->parent_id ? find_row(r, idx, w->parent_id) : -1;

		w->parent = p == (long)i ? -1 : p;
	}
	free(idx);

	/* a corrupt store could hold a parent cycle: cut it */
	for (size_t i = 0; i < r->n; i++) {
		size_t steps = 0;
		long a = r->v[i].parent;

		while (a >= 0 && steps <= r->n) {
			a = r->v[a].parent;
			steps++;
		}
		if (a >= 0)
			r->v[i].parent = -1;
	}

	/* rows are in start order, so children come out in start order */
	for (size_t i = 0; i < r->n; i++) {
		struct row *w = &r->v[i];
		long p = w->parent;
		int depth = 0;

		for (long a = p; a >= 0 && depth < MAX_DRAWN_DEPTH;
		     a = r->v[a].parent)
			depth++;
		w->depth = depth;
		if (p < 0)
			continue;
		if (r->v[p].last_child < 0)
			r->v[p].first_child = (long)i;
		else
			r->v[r->v[p].last_child].next_sibling = (long)i;
		r->v[p].last_child = (long)i;
	}
	return 0;
}

/* Visit order: depth first, roots and children by start time. */
static long next_in_tree(const struct rows *r, long i)
{
	if (r->v[i].first_child >= 0)
		return r->v[i].first_child;
	while (i >= 0) {
		if (r->v[i].next_sibling >= 0)
			return r->v[i].next_sibling;
		i = r->v[i].parent;
	}
	return -1;
}

/* First root by start time (roots follow through next_root()). */
static long next_root(const struct rows *r, long after)
{
	for (size_t i = after + 1; i < r->n; i++)
		if (r->v[i].parent < 0)
			return (long)i;
	return -1;
}

/* Order host names for the distinct list. */
static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Collect the distinct host names of the rows into s->hosts. */
static int collect_hosts(const struct rows *r, struct summary *s)
{
	size_t n = 0;

	s->hosts = malloc((r->n ? r->n : 1) * sizeof(*s->hosts));
	if (!s->hosts)
		return -ENOMEM;
	for (size_t i = 0; i < r->n; i++)
		s->hosts[i] = r->v[i].host ? r->v[i].host : "?";
	qsort(s->hosts, r->n, sizeof(*s->hosts), cmp_str);
	for (size_t i = 0; i < r->n; i++) {
		if (n && strcmp(s->hosts[n - 1], s->hosts[i]) == 0)
			continue;
		s->hosts[n++] = s->hosts[i];
	}
	s->nhosts = n;
	s->host_width = 4;	/* "HOST" */
	for (size_t i = 0; i < n; i++) {
		size_t w = strlen(s->hosts[i]);

		if (w > (size_t)s->host_width)
			s->host_width = w < HOST_WIDTH_MAX ? (int)w :
							     HOST_WIDTH_MAX;
	}
	return 0;
}

/* Add up the selection; s->hosts is allocated (free it). */
static int summarize(const struct rows *r, struct summary *s)
{
	memset(s, 0, sizeof(*s));
	for (size_t i = 0; i < r->n; i++) {
		const struct row *w = &r->v[i];

		s->processes++;
		if (w->running)
			s->running++;
		else if (w->exit_code != 0 || w->exit_signal != 0 || w->oom)
			s->failed++;
		if (w->oom)
			s->oom++;
		s->cpu_user += w->cpu_user;
		s->cpu_sys += w->cpu_sys;
		if (w->peak_rss > s->peak_rss)
			s->peak_rss = w->peak_rss;
		s->read_bytes += w->read_bytes;
		s->write_bytes += w->write_bytes;
		s->rx += w->rx;
		s->tx += w->tx;
		if (i == 0 || w->start < s->first_start)
			s->first_start = w->start;
		if (i == 0 || w->end > s->last_end)
			s->last_end = w->end;
	}
	return collect_hosts(r, s);
}

/* Exit column: "0", "3", "SIGKILL", "SIGKILL OOM", "running". */
static void exit_text(const struct row *w, char *out, size_t len)
{
	const char *oom = w->oom ? " OOM" : "";
	int sig = w->exit_signal;
	/* glibc's table of names; NULL for real-time and unknown signals */
	const char *abbrev = sig > 0 ? sigabbrev_np(sig) : NULL;

	if (w->running)
		snprintf(out, len, "running%s", oom);
	else if (abbrev)
		snprintf(out, len, "SIG%s%s", abbrev, oom);
	else if (sig > 0)
		snprintf(out, len, "SIG%d%s", sig, oom);
	else
		snprintf(out, len, "%d%s", w->exit_code, oom);
}

/* Tool column: rule's tool name, else basename of exe, else comm. */
static const char *tool_text(const struct row *w)
{
	const char *slash;

	if (w->tool && *w->tool)
		return w->tool;
	if (w->exe && *w->exe) {
		slash = strrchr(w->exe, '/');
		return slash && slash[1] ? slash + 1 : w->exe;
	}
	return w->comm && *w->comm ? w->comm : "?";
}

/* Encode a code point as UTF-8; controls and raw bytes become '?'. */
static size_t put_utf8(char *o, unsigned cp)
{
	/* \u0080-\u00ff stand for bytes that were not valid UTF-8 */
	if (cp < 0x20 || (cp >= 0x7f && cp < 0x100)) {
		o[0] = '?';
		return 1;
	}
	if (cp >= 0xd800 && cp < 0xe000)
		cp = 0xfffd;
	return json_utf8_put(o, cp);
}

/* Read the four hex digits of a \\u escape. */
static int hex4(const char *s, unsigned *out)
{
	unsigned v = 0;

	for (int k = 0; k < 4; k++) {
		unsigned char c = (unsigned char)s[k];

		if (!isxdigit(c))
			return -EINVAL;
		v = v << 4 | (unsigned)(isdigit(c) ? c - '0' :
					(c | 0x20) - 'a' + 10);
	}
	*out = v;
	return 0;
}

/* Output state of argv_display(). */
struct disp {
	char *out;
	size_t len;
	size_t o;
	size_t chars;
	size_t max;
	size_t keep;	/* where to cut for "...", SIZE_MAX until known */
	size_t cstart;	/* offset of the character being written */
	bool more;	/* something did not fit */
};

/* Add bytes to the display line; new_char starts a character. */
static bool disp_put(struct disp *d, const char *p, size_t n, bool new_char)
{
	if (new_char) {
		d->cstart = d->o;
		if (d->chars == d->max - 3)
			d->keep = d->o;
		if (d->chars == d->max) {
			d->more = true;
			return false;
		}
		d->chars++;
	}
	if (d->o + n + 4 > d->len) {
		d->more = true;
		if (d->cstart < d->keep)
			d->keep = d->cstart;
		return false;
	}
	memcpy(d->out + d->o, p, n);
	d->o += n;
	return true;
}

/*
 * Turn the argv column (a JSON array of strings) into one display line:
 * arguments joined by spaces, control characters shown as '?', at most
 * max characters with "..." at the end when cut.  out must hold at least
 * 4 * max + 4 bytes.  Malformed input ends the line early.
 */
static void argv_display(const char *json, char *out, size_t len,
			 size_t max)
{
	struct disp d = { .out = out, .len = len, .max = max,
			  .keep = SIZE_MAX };
	const char *s = json;
	bool first = true;

	out[0] = '\0';
	if (!s || *s++ != '[' || max < 4 || len < 4 * max + 4)
		return;
	while (!d.more) {
		while (*s == ' ' || *s == ',')
			s++;
		if (*s++ != '"')
			break;
		if (!first && !disp_put(&d, " ", 1, true))
			break;
		first = false;
		while (*s && *s != '"' && !d.more) {
			char tmp[4];
			unsigned cp;
			size_t n = 1;
			bool new_char = true;

			if (*s == '\\') {
				s++;
				if (*s == 'u') {
					if (hex4(s + 1, &cp))
						goto done;
					s += 5;
					n = put_utf8(tmp, cp);
				} else if (*s && strchr("\"\\/", *s)) {
					tmp[0] = *s++;
				} else if (*s) {
					tmp[0] = '?';	/* \n, \t, ... */
					s++;
				} else {
					goto done;
				}
			} else {
				unsigned char c = (unsigned char)*s++;

				tmp[0] = c < 0x20 || c == 0x7f ? '?' : (char)c;
				new_char = (c & 0xc0) != 0x80;
			}
			disp_put(&d, tmp, n, new_char);
		}
		if (*s == '"')
			s++;
	}
done:
	if (d.more && d.keep != SIZE_MAX) {
		memcpy(out + d.keep, "...", 3);
		d.o = d.keep + 3;
	}
	out[d.o] = '\0';
}

/* Count display columns of UTF-8 text (one per code point). */
static size_t display_width(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			n++;
	return n;
}

/*
 * Tree drawing for row i: the branch before its tool name ("│  ├─ ") and
 * the prefix of lines under it, which continues the lines of later
 * siblings and of its own children.
 */
static void tree_prefix(const struct rows *r, long i, char *branch,
			char *under, size_t len)
{
	bool more[MAX_DRAWN_DEPTH];
	int levels = 0;
	const struct row *w = &r->v[i];
	size_t b = 0, u = 0;

	/* more[k]: does the ancestor at that level have later siblings */
	for (long a = w->parent; a >= 0 && r->v[a].parent >= 0 &&
	     levels < MAX_DRAWN_DEPTH - 1; a = r->v[a].parent)
		more[levels++] = r->v[a].next_sibling >= 0;
	branch[0] = under[0] = '\0';
	for (int k = levels - 1; k >= 0; k--) {
		b += snprintf(branch + b, len - b, "%s",
			      more[k] ? "│  " : "   ");
	}
	memcpy(under, branch, b + 1);
	u = b;
	if (w->parent >= 0) {
		bool last = w->next_sibling < 0;

		snprintf(branch + b, len - b, "%s", last ? "└─ " : "├─ ");
		u += snprintf(under + u, len - u, "%s", last ? "   " : "│  ");
	}
	snprintf(under + u, len - u, "%s",
		 w->first_child >= 0 ? "│ " : "  ");
}

/* "HH:MM:SS.mmm" in UTC. */
static void clock_text(double t, char *out, size_t len)
{
	long long ms = t > 0 ? (long long)(t * 1000 + 0.5) : 0;
	time_t secs = (time_t)(ms / 1000);
	struct tm tm;

	gmtime_r(&secs, &tm);
	snprintf(out, len, "%02d:%02d:%02d.%03lld", tm.tm_hour, tm.tm_min,
		 tm.tm_sec, ms % 1000);
}

/* "YYYY-MM-DD" in UTC. */
static void date_text(double t, char *out, size_t len)
{
	time_t secs = t > 0 ? (time_t)t : 0;
	struct tm tm;

	gmtime_r(&secs, &tm);
	strftime(out, len, "%Y-%m-%d", &tm);
}

/* A host name for a text column: control characters become '?'. */
static void host_text(const char *host, char *out, size_t len)
{
	util_strlcpy(out, host ? host : "?", len);
	for (char *c = out; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
}

/*
 * Print the text report: header, tree, argv lines and totals.  With rows
 * of more than one host a HOST column follows the PID.
 */
static void print_text(const struct rows *r, const struct summary *s,
		       const char *sel, FILE *out)
{
	char d1[16], d2[16], branch[256], under[256], cell[512];
	char argv[ARGV_SHOWN * 4 + 8], host[256];
	char h[6][24], ex[32], start[16], dur[24], cpu[40], net[56];
	bool hosts = s->nhosts > 1;
	int hw = hosts ? s->host_width : 0;

	date_text(s->first_start, d1, sizeof(d1));
	date_text(s->last_end, d2, sizeof(d2));
	fprintf(out, "jobtrace report: %s: %zu processes", sel, s->processes);
	if (hosts)
		fprintf(out, " on %zu hosts", s->nhosts);
	fprintf(out, ", %zu failed, %zu OOM-killed", s->failed, s->oom);
	if (s->running)
		fprintf(out, ", %zu running", s->running);
	if (strcmp(d1, d2) == 0)
		fprintf(out, " (%s, times UTC)\n", d1);
	else
		fprintf(out, " (%s .. %s, times UTC)\n", d1, d2);
	fprintf(out, "%-7s ", "PID");
	if (hosts)
		fprintf(out, "%-*s ", hw, "HOST");
	fprintf(out, "%-*s %-12s %10s %12s %10s %10s %10s %21s  %s\n",
		TOOL_WIDTH, "TOOL", "START", "DURATION", "CPU USR/SYS",
		"PEAK RSS", "READ", "WRITE", "NET RX/TX", "EXIT");

	for (long i = next_root(r, -1); i >= 0; i = next_root(r, i)) {
		long end = next_root(r, i);

		for (long j = i; j >= 0 && j != end; j = next_in_tree(r, j)) {
			const struct row *w = &r->v[j];
			size_t width;

			tree_prefix(r, j, branch, under, sizeof(branch));
			snprintf(cell, sizeof(cell), "%s%s", branch,
				 tool_text(w));
			/* comm is whatever the program set: no escapes */
			for (char *c = cell; *c; c++)
				if ((unsigned char)*c < 0x20 || *c == 0x7f)
					*c = '?';
			width = display_width(cell);
			clock_text(w->start, start, sizeof(start));
			if (w->running)
				snprintf(dur, sizeof(dur), "running");
			else
				snprintf(dur, sizeof(dur), "%.3fs",
					 w->end - w->start);
			snprintf(cpu, sizeof(cpu), "%.2f/%.2f", w->cpu_user,
				 w->cpu_sys);
			util_human_bytes(w->peak_rss, h[0], sizeof(h[0]));
			util_human_bytes(w->read_bytes, h[1], sizeof(h[1]));
			util_human_bytes(w->write_bytes, h[2], sizeof(h[2]));
			util_human_bytes(w->rx, h[3], sizeof(h[3]));
			util_human_bytes(w->tx, h[4], sizeof(h[4]));
			snprintf(net, sizeof(net), "%s/%s", h[3], h[4]);
			exit_text(w, ex, sizeof(ex));
			fprintf(out, "%-7lld ", (long long)w->pid);
			if (hosts) {
				host_text(w->host, host, sizeof(host));
				fprintf(out, "%-*s ", hw, host);
			}
			fprintf(out, "%s%*s %-12s %10s %12s %10s %10s"
				" %10s %21s  %s\n", cell,
				(int)(width < TOOL_WIDTH ?
				      TOOL_WIDTH - width : 0), "",
				start, dur, cpu, h[0], h[1], h[2], net, ex);
			argv_display(w->argv, argv, sizeof(argv), ARGV_SHOWN);
			if (argv[0])
				fprintf(out, "%-7s %*s%s%s%s\n", "", hw, "",
					hosts ? " " : "", under, argv);
		}
	}

	util_human_bytes(s->peak_rss, h[0], sizeof(h[0]));
	util_human_bytes(s->read_bytes, h[1], sizeof(h[1]));
	util_human_bytes(s->write_bytes, h[2], sizeof(h[2]));
	util_human_bytes(s->rx, h[3], sizeof(h[3]));
	util_human_bytes(s->tx, h[4], sizeof(h[4]));
	fprintf(out, "TOTAL   CPU %.2fs (user %.2f + sys %.2f), peak RSS"
		" max %s, read %s, write %s, net rx %s tx %s, wall %.3fs%s\n",
		s->cpu_user + s->cpu_sys, s->cpu_user, s->cpu_sys, h[0],
		h[1], h[2], h[3], h[4], s->last_end - s->first_start,
		s->running ? " (still running)" : "");
}

/* Write the query object ({"job":"42"}, {"since":"..."}, ...). */
static void json_query(struct jbuf *b, const struct report_query *q)
{
	json_obj_open(b);
	if (q->job && *q->job) {
		json_kv_str(b, "job", q->job);
	} else if (q->run && *q->run) {
		json_kv_str(b, "run", q->run);
	} else if (q->pid) {
		json_kv_i64(b, "pid", q->pid);
	} else {
		json_key(b, "since");
		json_time(b, to_ns(q->since));
	}
	json_obj_close(b);
}

/* One line of the efficiency summary: a step, or the whole job. */
struct eff {
	char name[64];
	double cpu_s;		/* user + sys of every process */
	double elapsed_s;
	uint64_t peak;		/* largest process's peak RSS */
	long processes;
};

/* Allocation and steps of a job, for a summary in the spirit of seff. */
struct efficiency {
	bool have_job;		/* a job record gave the allocation */
	uint64_t cpus;
	uint64_t mem_bytes;
	struct eff job;
	struct eff step[32];
	size_t nsteps;
};

/* Read the allocation and per-step totals of job from the store. */
static int load_efficiency(sqlite3 *db, const char *path, const char *job,
			   struct efficiency *e)
{
	static const char alloc_sql[] =
		"SELECT json_extract(json, '$.allocation.cpus'),"
		" json_extract(json, '$.allocation.mem_bytes'),"
		" (julianday(json_extract(json, '$.end_time')) -"
		"  julianday(json_extract(json, '$.start_time'))) * 86400.0"
		" FROM record WHERE type = 'job' AND job_id = ?1"
		" ORDER BY (json_extract(json, '$.end_time') IS NULL), time DESC LIMIT 1";
	static const char step_sql[] =
		"SELECT COALESCE(job_step, '-'), SUM(cpu_user_s + cpu_sys_s),"
		" MAX(peak_rss_bytes), MAX(COALESCE(end_time, start_time)) - MIN(start_time),"
		" COUNT(*) FROM process WHERE job_id = ?1"
		" GROUP BY job_step ORDER BY MIN(start_time)";
	sqlite3_stmt *st = NULL;

	memset(e, 0, sizeof(*e));
	if (sqlite3_prepare_v2(db, alloc_sql, -1, &st, NULL) != SQLITE_OK) {
		log_error("report: %s: %s", path, sqlite3_errmsg(db));
		return -EIO;
	}
	sqlite3_bind_text(st, 1, job, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(st) == SQLITE_ROW) {
		e->have_job = true;
		e->cpus = (uint64_t)sqlite3_column_int64(st, 0);
		e->mem_bytes = (uint64_t)sqlite3_column_int64(st, 1);
		e->job.elapsed_s = sqlite3_column_double(st, 2);
	}
	sqlite3_finalize(st);
	if (sqlite3_prepare_v2(db, step_sql, -1, &st, NULL) != SQLITE_OK) {
		log_error("report: %s: %s", path, sqlite3_errmsg(db));
		return -EIO;
	}
	sqlite3_bind_text(st, 1, job, -1, SQLITE_TRANSIENT);
	while (sqlite3_step(st) == SQLITE_ROW) {
		struct eff *x = e->nsteps < 32 ? &e->step[e->nsteps++] : NULL;
		const unsigned char *name = sqlite3_column_text(st, 0);

		if (!x)
			break;
		snprintf(x->name, sizeof(x->name), "%s", name ? (const char *)name : "-");
		x->cpu_s = sqlite3_column_double(st, 1);
		x->peak = (uint64_t)sqlite3_column_int64(st, 2);
		x->elapsed_s = sqlite3_column_double(st, 3);
		x->processes = sqlite3_column_int64(st, 4);
		e->job.cpu_s += x->cpu_s;
		e->job.processes += x->processes;
		if (x->peak > e->job.peak)
			e->job.peak = x->peak;
	}
	sqlite3_finalize(st);
	snprintf(e->job.name, sizeof(e->job.name), "job %s", job);
	return 0;
}

/* Percent of part in whole, or -1 when whole is unknown. */
static double pct(double part, double whole)
{
	return whole > 0 ? 100.0 * part / whole : -1;
}

/* One text line of the efficiency summary. */
static void eff_line(FILE *out, const struct efficiency *e, const struct eff *x)
{
	double cpu_pct = pct(x->cpu_s, (double)e->cpus * x->elapsed_s);
	double mem_pct = pct((double)x->peak, (double)e->mem_bytes);
	char peak[32], req[32];

	util_human_bytes(x->peak, peak, sizeof(peak));
	util_human_bytes(e->mem_bytes, req, sizeof(req));
	fprintf(out, "  %-14s CPU %9.2f s of %9.2f s", x->name, x->cpu_s,
		(double)e->cpus * x->elapsed_s);
	if (cpu_pct >= 0)
		fprintf(out, " = %5.1f%%", cpu_pct);
	else
		fprintf(out, " =     ?");
	fprintf(out, "   memory %10s", peak);
	if (mem_pct >= 0)
		fprintf(out, " of %s = %5.1f%%", req, mem_pct);
	fprintf(out, "   (%ld processes, %.1f s)\n", x->processes, x->elapsed_s);
}

/* The efficiency summary in text. */
static void print_efficiency(const struct efficiency *e, FILE *out)
{
	fputs("\nEfficiency (in the spirit of seff: CPU time over allocated CPUs x elapsed;\n"
	      "memory: the largest process's peak RSS over the memory requested)\n", out);
	if (!e->have_job || !e->cpus)
		fputs("  no allocation recorded for this job (no job-start hook): "
		      "percentages unknown\n", out);
	else
		fprintf(out, "  allocation: %llu CPUs, %.1f GiB\n",
			(unsigned long long)e->cpus, e->mem_bytes / 1073741824.0);
	eff_line(out, e, &e->job);
	for (size_t i = 0; i < e->nsteps; i++) {
		struct eff x = e->step[i];
		char name[64];

		snprintf(name, sizeof(name), "step %s", x.name);
		memcpy(x.name, name, sizeof(x.name));
		eff_line(out, e, &x);
	}
}

/* One efficiency object in JSON. */
static void eff_json(struct jbuf *b, const struct efficiency *e,
		     const struct eff *x)
{
	double c = pct(x->cpu_s, (double)e->cpus * x->elapsed_s);
	double m = pct((double)x->peak, (double)e->mem_bytes);

	json_obj_open(b);
	json_kv_str(b, "name", x->name);
	json_kv_double(b, "cpu_s", x->cpu_s);
	json_kv_double(b, "elapsed_s", x->elapsed_s);
	json_kv_u64(b, "peak_rss_bytes", x->peak);
	json_kv_u64(b, "processes", (uint64_t)x->processes);
	json_key(b, "cpu_efficiency_pct");
	if (c >= 0)
		json_double(b, c);
	else
		json_null(b);
	json_key(b, "memory_efficiency_pct");
	if (m >= 0)
		json_double(b, m);
	else
		json_null(b);
	json_obj_close(b);
}

/* Print {"query":..,"summary":..,"processes":[stored records]}. */
static int print_json(const struct rows *r, const struct summary *s,
		      const struct report_query *q,
		      const struct efficiency *e, FILE *out)
{
	struct jbuf b;
	int err = 0;

	jbuf_init(&b);
	json_obj_open(&b);
	json_key(&b, "query");
	json_query(&b, q);
	json_key(&b, "summary");
	json_obj_open(&b);
	json_kv_u64(&b, "processes", s->processes);
	json_kv_u64(&b, "failed", s->failed);
	json_kv_u64(&b, "oom_killed", s->oom);
	json_kv_u64(&b, "running", s->running);
	json_kv_double(&b, "cpu_user_s", s->cpu_user);
	json_kv_double(&b, "cpu_sys_s", s->cpu_sys);
	json_kv_u64(&b, "peak_rss_bytes", s->peak_rss);
	json_kv_u64(&b, "read_bytes", s->read_bytes);
	json_kv_u64(&b, "write_bytes", s->write_bytes);
	json_kv_u64(&b, "rx_bytes", s->rx);
	json_kv_u64(&b, "tx_bytes", s->tx);
	json_key(&b, "start_time");
	json_time(&b, to_ns(s->first_start));
	json_key(&b, "end_time");
	json_time(&b, to_ns(s->last_end));
	json_kv_double(&b, "wall_s", s->last_end - s->first_start);
	json_key(&b, "hosts");
	json_arr_open(&b);
	for (size_t i = 0; i < s->nhosts; i++)
		json_str(&b, s->hosts[i]);
	json_arr_close(&b);
	json_obj_close(&b);
	if (e) {
		json_key(&b, "efficiency");
		json_obj_open(&b);
		json_key(&b, "cpus");
		if (e->cpus)
			json_u64(&b, e->cpus);
		else
			json_null(&b);
		json_key(&b, "mem_bytes");
		if (e->mem_bytes)
			json_u64(&b, e->mem_bytes);
		else
			json_null(&b);
		json_key(&b, "job");
		eff_json(&b, e, &e->job);
		json_key(&b, "steps");
		json_arr_open(&b);
		for (size_t i = 0; i < e->nsteps; i++)
			eff_json(&b, e, &e->step[i]);
		json_arr_close(&b);
		json_obj_close(&b);
	}
	/* the object stays open: the stored records follow verbatim */
	if (b.oom) {
		err = -ENOMEM;
		goto cleanup;
	}
	fprintf(out, "%s,\"processes\":[", jbuf_str(&b));
	for (size_t i = 0; i < r->n; i++)
		fprintf(out, "%s%s", i ? "," : "", r->v[i].json);
	fputs("]}\n", out);

cleanup:
	jbuf_free(&b);
	return err;
}

/* Write text with HTML's special characters escaped. */
static void html_esc(FILE *out, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<':
			fputs("&lt;", out);
			break;
		case '>':
			fputs("&gt;", out);
			break;
		case '&':
			fputs("&amp;", out);
			break;
		case '"':
			fputs("&quot;", out);
			break;
		case '\'':
			fputs("&#39;", out);
			break;
		default:
			/* control characters have no business in a page */
			if ((unsigned char)*s < 0x20 || *s == 0x7f)
				fputc('?', out);
			else
				fputc(*s, out);
		}
	}
}

/* Print a self-contained HTML page: summary and the process tree. */
static void print_html(const struct rows *r, const struct summary *s,
		       const char *sel, FILE *out)
{
	char argv[ARGV_SHOWN * 8 + 8], h[6][24], ex[32], t[40];

	fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">\n"
	      "<title>jobtrace report: ", out);
	html_esc(out, sel);
	fputs("</title>\n<style>\n"
	      "body{font-family:sans-serif;margin:1.5em;color:#222}\n"
	      "table{border-collapse:collapse;font-size:90%}\n"
	      "th,td{padding:3px 8px;border-bottom:1px solid #ddd;"
	      "text-align:right;white-space:nowrap}\n"
	      "th{background:#f0f0f0}\n"
	      "td.tool,td.argv{text-align:left}\n"
	      "td.argv{font-family:monospace;color:#555;white-space:normal}\n"
	      "tr.fail td{background:#fde8e8}\n"
	      "dl{display:grid;grid-template-columns:max-content auto;"
	      "gap:2px 1em}\ndt{font-weight:bold}\n"
	      "</style></head><body>\n<h1>jobtrace report: ", out);
	html_esc(out, sel);
	fputs("</h1>\n<dl>\n", out);
	fprintf(out, "<dt>processes</dt><dd>%zu (%zu failed, %zu OOM-killed,"
		" %zu running)</dd>\n", s->processes, s->failed, s->oom,
		s->running);
	fputs(s->nhosts > 1 ? "<dt>hosts</dt><dd>" : "<dt>host</dt><dd>",
	      out);
	for (size_t i = 0; i < s->nhosts; i++) {
		fputs(i ? ", " : "", out);
		html_esc(out, s->hosts[i]);
	}
	fputs("</dd>\n", out);
	json_format_time(to_ns(s->first_start), t, sizeof(t));
	fprintf(out, "<dt>first start</dt><dd>%s</dd>\n", t);
	fprintf(out, "<dt>wall span</dt><dd>%.3f s</dd>\n",
		s->last_end - s->first_start);
	fprintf(out, "<dt>CPU</dt><dd>%.2f s (user %.2f, sys %.2f)</dd>\n",
		s->cpu_user + s->cpu_sys, s->cpu_user, s->cpu_sys);
	util_human_bytes(s->peak_rss, h[0], sizeof(h[0]));
	util_human_bytes(s->read_bytes, h[1], sizeof(h[1]));
	util_human_bytes(s->write_bytes, h[2], sizeof(h[2]));
	util_human_bytes(s->rx, h[3], sizeof(h[3]));
	util_human_bytes(s->tx, h[4], sizeof(h[4]));
	fprintf(out, "<dt>max peak RSS</dt><dd>%s</dd>\n"
		"<dt>I/O</dt><dd>read %s, write %s</dd>\n"
		"<dt>network</dt><dd>rx %s, tx %s</dd>\n</dl>\n",
		h[0], h[1], h[2], h[3], h[4]);

	fputs("<table>\n<tr><th>PID</th>", out);
	if (s->nhosts > 1)
		fputs("<th>HOST</th>", out);
	fputs("<th>TOOL</th><th>START (UTC)</th>"
	      "<th>DURATION</th><th>CPU USR/SYS</th><th>PEAK RSS</th>"
	      "<th>READ</th><th>WRITE</th><th>NET RX/TX</th><th>EXIT</th>"
	      "<th>ARGV</th></tr>\n", out);
	for (long i = next_root(r, -1); i >= 0; i = next_root(r, i)) {
		long end = next_root(r, i);

		for (long j = i; j >= 0 && j != end; j = next_in_tree(r, j)) {
			const struct row *w = &r->v[j];
			bool failed = !w->running && (w->exit_code ||
						      w->exit_signal || w->oom);
			int depth = w->depth < MAX_DRAWN_DEPTH ?
				    w->depth : MAX_DRAWN_DEPTH;

			clock_text(w->start, t, sizeof(t));
			exit_text(w, ex, sizeof(ex));
			util_human_bytes(w->peak_rss, h[0], sizeof(h[0]));
			util_human_bytes(w->read_bytes, h[1], sizeof(h[1]));
			util_human_bytes(w->write_bytes, h[2], sizeof(h[2]));
			util_human_bytes(w->rx, h[3], sizeof(h[3]));
			util_human_bytes(w->tx, h[4], sizeof(h[4]));
			fprintf(out, "<tr%s><td>%lld</td>",
				failed ? " class=\"fail\"" : "",
				(long long)w->pid);
			if (s->nhosts > 1) {
				fputs("<td class=\"tool\">", out);
				html_esc(out, w->host);
				fputs("</td>", out);
			}
			fprintf(out, "<td class=\"tool\" style=\"padding-left:"
				"%.1fem\">", 0.5 + 1.5 * depth);
			html_esc(out, tool_text(w));
			fprintf(out, "</td><td>%s</td>", t);
			if (w->running)
				fputs("<td>running</td>", out);
			else
				fprintf(out, "<td>%.3f s</td>",
					w->end - w->start);
			fprintf(out, "<td>%.2f / %.2f</td><td>%s</td>"
				"<td>%s</td><td>%s</td><td>%s / %s</td>"
				"<td>%s</td><td class=\"argv\">",
				w->cpu_user, w->cpu_sys, h[0], h[1], h[2],
				h[3], h[4], ex);
			argv_display(w->argv, argv, sizeof(argv),
				     ARGV_SHOWN * 2);
			html_esc(out, argv);
			fputs("</td></tr>\n", out);
		}
	}
	fputs("</table>\n</body></html>\n", out);
}


/*
 * Print the process tree and totals selected by q from an open store;
 * where names it in messages.
 */
int report_run_store(struct store *st, const char *where,
		     const struct report_query *q, enum report_format fmt,
		     FILE *out)
{
	struct efficiency *eff = NULL;
	sqlite3 *db = store_handle(st);
	struct rows r = { 0 };
	struct summary s = { 0 };
	char sel[256];
	int err;

	err = query_check(q);
	if (err)
		return err;
	err = load_rows(db, where, q, &r);
	if (err)
		goto cleanup;

	query_describe(q, sel, sizeof(sel));
	if (r.n == 0) {
		fprintf(stderr, "jobtrace: no records for %s in %s\n", sel,
			where);
		err = -ENOENT;
		goto cleanup;
	}
	err = build_tree(&r);
	if (!err)
		err = summarize(&r, &s);
	if (err)
		goto cleanup;
	if (q->job) {
		eff = calloc(1, sizeof(*eff));
		if (!eff || load_efficiency(db, where, q->job, eff)) {
			free(eff);
			eff = NULL;
		}
	}

	switch (fmt) {
	case REPORT_TEXT:
		print_text(&r, &s, sel, out);
		if (eff)
			print_efficiency(eff, out);
		break;
	case REPORT_JSON:
		err = print_json(&r, &s, q, eff, out);
		break;
	case REPORT_HTML:
		print_html(&r, &s, sel, out);
		break;
	case REPORT_NDJSON:
		for (size_t i = 0; i < r.n; i++)
			fprintf(out, "%s\n", r.v[i].json);
		break;
	default:
		err = -EINVAL;
	}
	if (!err && ferror(out)) {
		log_error("report: write failed");
		err = -EIO;
	}

cleanup:
	free(s.hosts);
	free(eff);
	rows_free(&r);
	return err;
}

/* Print the process tree and totals selected by q. */
int report_run(const char *db_path, const struct report_query *q,
	       enum report_format fmt, FILE *out)
{
	struct store *st = NULL;
	int err;

	err = query_check(q);
	if (err)
		return err;
	err = store_open(db_path, true, &st);
	if (err)
		return err;
	err = report_run_store(st, db_path, q, fmt, out);
	store_close(st);
	return err;
}

/* Print the records selected by q from an open store as NDJSON. */
int report_export_store(struct store *s, const char *where,
			const struct report_query *q, FILE *out)
{
	static const char order[] = " ORDER BY t, id";
	sqlite3 *db = store_handle(s);
	sqlite3_stmt *st = NULL;
	char sql[1024], sel[256];
	size_t n = 0;
	int rc, err;

	err = query_check(q);
	if (err)
		return err;

	if (q->job && *q->job)
		snprintf(sql, sizeof(sql),
			 "SELECT json, start_time AS t, id FROM process"
			 " WHERE job_id = ?1 UNION ALL"
			 " SELECT json, time, id FROM record"
			 " WHERE job_id = ?1%s", order);
	else if (q->run && *q->run)
		snprintf(sql, sizeof(sql),
			 "SELECT json, start_time AS t, id FROM process"
			 " WHERE job_run = ?1 UNION ALL"
			 " SELECT json, time, id FROM record WHERE job_id IN"
			 " (SELECT DISTINCT job_id FROM process"
			 " WHERE job_run = ?1)%s", order);
	else if (q->pid)
		snprintf(sql, sizeof(sql), PID_SUBTREE
			 "SELECT json, start_time AS t, id FROM process"
			 " WHERE id IN (SELECT id FROM sel)%s", order);
	else
		snprintf(sql, sizeof(sql),
			 "SELECT json, start_time AS t, id FROM process"
			 " WHERE since_time >= ?1 UNION ALL"
			 " SELECT json, time, id FROM record"
			 " WHERE time >= ?1%s", order);

	err = prepare_bound(db, where, sql, q, &st);
	if (err)
		goto cleanup;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		fprintf(out, "%s\n", (const char *)sqlite3_column_text(st, 0));
		n++;
	}
	if (rc != SQLITE_DONE) {
		log_error("database %s: %s", where, sqlite3_errmsg(db));
		err = -EIO;
		goto cleanup;
	}
	if (n == 0) {
		query_describe(q, sel, sizeof(sel));
		fprintf(stderr, "jobtrace: no records for %s in %s\n", sel,
			where);
		err = -ENOENT;
	} else if (ferror(out)) {
		log_error("export: write failed");
		err = -EIO;
	}

cleanup:
	sqlite3_finalize(st);
	return err;
}

/* Print the selected records as schema v1 NDJSON, one per line. */
int report_export(const char *db_path, const struct report_query *q,
		  FILE *out)
{
	struct store *st = NULL;
	int err;

	err = query_check(q);
	if (err)
		return err;
	err = store_open(db_path, true, &st);
	if (err)
		return err;
	err = report_export_store(st, db_path, q, out);
	store_close(st);
	return err;
}
