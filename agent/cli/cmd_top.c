// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cmd_top.c - `jobtrace top`: the runs now, as one frame (--once,
 * --format json) or refreshed on the terminal.  Every frame is the answer
 * of the query table's "top" (qcmd.h, topq.h), from the store or, for a
 * user who may not read it, from the agent's query child: the view never
 * runs in the agent's loop and sees what report would show its user.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <termios.h>
#include <unistd.h>

#include "cli.h"
#include "config.h"
#include "control.h"
#include "json.h"
#include "query.h"
#include "topq.h"
#include "util.h"

/* The options of top besides the query table's. */
struct top_opts {
	bool once;
	bool color;
	double delay;		/* seconds between frames */
};

static volatile sig_atomic_t top_stop;
/* The signal mask outside the view: SIGINT, SIGTERM and SIGHUP stay
 * blocked in it but for its waits (ppoll), so that one that comes between
 * the check of top_stop and the wait ends the wait. */
static sigset_t top_waitmask;

/* SIGINT, SIGTERM, SIGHUP: leave the view at the next wake-up. */
static void on_stop(int sig)
{
	(void)sig;
	top_stop = 1;
}

/* Usage of top after its synopsis. */
void cli_help_top(FILE *out)
{
	fprintf(out,
		"                [--once] [-d SECONDS] [--no-color]\n"
		"\nThe runs of the last 15 minutes and the running ones (or the run, job or\n"
		"pipeline given) as a tree: run (job.run, else the job) -> workflow task\n"
		"instance -> process.  Each line: its state (running, stalled, waiting,\n"
		"done, failed, oom-killed), its elapsed time and the expected one (the\n"
		"median of the same task in the pipeline's other runs: \"4m12s of ~6m\"),\n"
		"CPU cores and RSS now (from the two latest samples), the peak RSS (and\n"
		"the job's request when the task ran as its own job), read, write and\n"
		"network bytes a second now, and the signals raised.  Waiting: a task of\n"
		"an earlier run of the pipeline not started yet in a running run, or a\n"
		"Slurm job of the run squeue lists as pending (\"align (job 1234)\").\n"
		"\n--once          print one frame as plain text and exit (also when stdout\n"
		"                is not a terminal)\n"
		"--format json   the same tree as one JSON object, then exit\n"
		"-d SECONDS      between frames (default 1)\n"
		"--no-color      no colours\n"
		"Keys: arrows or j/k move, Enter collapses or expands a line, s sorts\n"
		"siblings by CPU, memory, elapsed or name, / filters (user, run,\n"
		"pipeline, task, tool; Enter keeps, Esc clears), f follows the run of\n"
		"the line (again: all runs), q quits (the terminal is restored).\n"
		"\n--source clickhouse[:NAME]: every node's runs from the fleet store, a\n"
		"line per node under each run (its instances and processes there).\n"
		"\nA user who may not read the store sees their own runs, from the agent.\n");
}

/* Take top's own options out of argv (in place); *argc is what is left.
 * Returns 0 or EXIT_USAGE after a message. */
static int top_opts_take(int *argc, char **argv, struct top_opts *o)
{
	int n = 1;
	char *end;

	o->once = false;
	o->color = true;
	o->delay = 1;
	for (int i = 1; i < *argc; i++) {
		if (!strcmp(argv[i], "--once")) {
			o->once = true;
		} else if (!strcmp(argv[i], "--no-color")) {
			o->color = false;
		} else if (!strcmp(argv[i], "-d") || !strcmp(argv[i], "--delay")) {
			if (i + 1 >= *argc) {
				fprintf(stderr, "jobtrace top: %s needs SECONDS\n",
					argv[i]);
				return EXIT_USAGE;
			}
			errno = 0;
			o->delay = strtod(argv[++i], &end);
			if (errno || *end || !(o->delay >= 0.1 && o->delay <= 3600)) {
				fprintf(stderr, "jobtrace top: -d '%s': expected"
					" seconds from 0.1 to 3600\n", argv[i]);
				return EXIT_USAGE;
			}
		} else {
			argv[n++] = argv[i];
		}
	}
	*argc = n;
	return 0;
}

/* What the view keeps between frames. */
struct view {
	struct topq t;		/* the latest frame */
	size_t *order;		/* the lines drawn, in order */
	size_t n;
	size_t cur;		/* the cursor, in order */
	size_t top;		/* the first line drawn, in order */
	char cur_key[160];	/* the cursor's line, kept across frames */
	char **folded;		/* keys of collapsed lines */
	size_t nfolded;
	int sort;		/* SORT_* */
	char filter[64];
	bool editing;		/* typing the filter */
	char follow[64];	/* a run followed, "" for all */
	bool color;
	char msg[400];		/* what the latest frame's answer said */
};

enum { SORT_CPU, SORT_MEM, SORT_ELAPSED, SORT_NAME, SORT_N };
static const char *const sort_names[] = { "cpu", "mem", "elapsed", "name" };

/* A key that names line i across frames. */
static void line_key(const struct topq *t, size_t i, char *out, size_t len)
{
	const struct topq_line *l = &t->v[i];
	const struct topq_line *r = l;

	while (r->parent >= 0)
		r = &t->v[r->parent];
	snprintf(out, len, "%d|%s|%s|%lld|%.0f", (int)l->kind,
		 r->name ? r->name : "", l->name ? l->name : "",
		 (long long)l->pid, l->start);
}

/* Is line i collapsed? */
static bool folded(const struct view *v, size_t i)
{
	char k[160];

	line_key(&v->t, i, k, sizeof(k));
	for (size_t f = 0; f < v->nfolded; f++)
		if (!strcmp(v->folded[f], k))
			return true;
	return false;
}

/* Collapse or expand line i. */
static void fold_toggle(struct view *v, size_t i)
{
	char k[160], **n;

	line_key(&v->t, i, k, sizeof(k));
	for (size_t f = 0; f < v->nfolded; f++)
		if (!strcmp(v->folded[f], k)) {
			free(v->folded[f]);
			v->folded[f] = v->folded[--v->nfolded];
			return;
		}
	n = realloc(v->folded, (v->nfolded + 1) * sizeof(*n));
	if (!n)
		return;
	v->folded = n;
	v->folded[v->nfolded] = strdup(k);
	if (v->folded[v->nfolded])
		v->nfolded++;
}

/* Does line l match the filter (user, run, pipeline, task, tool)? */
static bool matches(const struct topq_line *l, const char *f)
{
	const char *s[] = { l->user, l->run, l->pipeline, l->task, l->tool,
			    l->name, l->job };

	for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++)
		if (s[i] && strstr(s[i], f))
			return true;
	return false;
}

/* Is line i shown: the filter matches it, a line above or below it;
 * and it is of the run followed. */
static bool shown(const struct view *v, size_t i)
{
	const struct topq *t = &v->t;
	long r = (long)i;

	while (t->v[r].parent >= 0)
		r = t->v[r].parent;
	if (v->follow[0] && strcmp(t->v[r].name ? t->v[r].name : "",
				   v->follow))
		return false;
	if (!v->filter[0])
		return true;
	for (long a = (long)i; a >= 0; a = t->v[a].parent)
		if (matches(&t->v[a], v->filter))
			return true;
	for (size_t j = i + 1; j < t->n && t->v[j].depth > t->v[i].depth; j++)
		if (matches(&t->v[j], v->filter))
			return true;
	return false;
}

/* The sort key of a line: larger first (names: the caller). */
static double sort_value(const struct topq_line *l, int sort)
{
	if (sort == SORT_CPU)
		return l->cores > 0 ? l->cores : 0;
	if (sort == SORT_MEM)
		return (double)(l->rss ? l->rss : l->peak);
	return l->elapsed;
}

static int g_sort;	/* qsort's context: the view's sort */
static const struct topq *g_t;

/* Siblings by the view's sort. */
static int cmp_sibling(const void *x, const void *y)
{
	const struct topq_line *a = &g_t->v[*(const size_t *)x];
	const struct topq_line *b = &g_t->v[*(const size_t *)y];
	double p, q;

	if (g_sort == SORT_NAME)
		return strcmp(a->name ? a->name : "", b->name ? b->name : "");
	p = sort_value(a, g_sort);
	q = sort_value(b, g_sort);
	return (p < q) - (p > q);
}

/* Append the children of parent (sorted, shown, not under a fold). */
static void order_add(struct view *v, long parent)
{
	const struct topq *t = &v->t;
	size_t *kids = malloc((t->n ? t->n : 1) * sizeof(*kids)), nk = 0;

	if (!kids)
		return;
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].parent == parent && shown(v, i))
			kids[nk++] = i;
	g_sort = v->sort;
	g_t = t;
	if (parent >= 0)	/* runs stay in the order they started */
		qsort(kids, nk, sizeof(*kids), cmp_sibling);
	for (size_t k = 0; k < nk; k++) {
		v->order[v->n++] = kids[k];
		if (!folded(v, kids[k]))
			order_add(v, (long)kids[k]);
	}
	free(kids);
}

/* The lines to draw, the cursor on the line it was on. */
static void view_order(struct view *v)
{
	char k[160];

	free(v->order);
	v->n = 0;
	v->order = malloc((v->t.n ? v->t.n : 1) * sizeof(*v->order));
	if (!v->order)
		return;
	order_add(v, -1);
	for (size_t i = 0; i < v->n && v->cur_key[0]; i++) {
		line_key(&v->t, v->order[i], k, sizeof(k));
		if (!strcmp(k, v->cur_key)) {
			v->cur = i;
			break;
		}
	}
	if (v->cur >= v->n)
		v->cur = v->n ? v->n - 1 : 0;
}

/* The colour of a state (SGR). */
static const char *state_color(enum topq_state s)
{
	static const char *const c[] = {
		[TOPQ_RUNNING] = "\033[32m", [TOPQ_STALLED] = "\033[1;33m",
		[TOPQ_WAITING] = "\033[36m", [TOPQ_DONE] = "\033[2m",
		[TOPQ_FAILED] = "\033[1;31m", [TOPQ_OOM] = "\033[1;35m",
		[TOPQ_LOST] = "\033[2;33m",
	};

	return s <= TOPQ_LOST ? c[s] : "";
}

/* Keep the first line of what a frame's answer said (s, NUL-terminated;
 * NULL or "" for nothing) as the view's message, shown until the next
 * answer: an agent gone or a frame refused is said on the screen, not
 * written under it and drawn over. */
static void view_message(struct view *v, const char *s)
{
	static const char me[] = "jobtrace top: ";
	size_t n;

	if (!s)
		s = "";
	if (!strncmp(s, me, sizeof(me) - 1))
		s += sizeof(me) - 1;
	n = strcspn(s, "\n");
	if (n >= sizeof(v->msg))
		n = sizeof(v->msg) - 1;
	memcpy(v->msg, s, n);
	v->msg[n] = '\0';
	/* no control character reaches the terminal (a job id in a
	 * message is anybody's text) */
	util_printable(v->msg);
}

/* The width of a message row: the last column stays empty, so that no
 * terminal scrolls for a character in its corner. */
static size_t message_width(int cols)
{
	return cols > 1 ? (size_t)cols - 1 : 1;
}

/* The view's message, "! " first, on the last mrows rows. */
static void draw_message(const struct view *v, int rows, int cols,
			 int mrows)
{
	char text[sizeof(v->msg) + 2];
	size_t len = (size_t)snprintf(text, sizeof(text), "! %s", v->msg);
	size_t w = message_width(cols);

	for (int r = 0; r < mrows && (size_t)r * w < len; r++)
		printf("\033[%d;1H%s%.*s%s", rows - mrows + 1 + r,
		       v->color ? "\033[31m" : "", (int)w, text + (size_t)r * w,
		       v->color ? "\033[0m" : "");
}

/* Draw the view in rows x cols. */
static void draw(struct view *v, int rows, int cols)
{
	char line[512], now[40];
	/* a message takes the keys' row and up to two more */
	int mrows = v->msg[0] && !v->editing ?
		    (int)((strlen(v->msg) + 2 + message_width(cols) - 1) /
			  message_width(cols)) : 0;
	int body;

	if (mrows > 3)
		mrows = 3;
	body = rows - 3 - (mrows > 1 ? mrows - 1 : 0);

	if (body < 1)
		body = 1;
	if (v->cur < v->top)
		v->top = v->cur;
	if (v->cur >= v->top + (size_t)body)
		v->top = v->cur - (size_t)body + 1;
	fputs("\033[H\033[2J", stdout);
	json_format_time((uint64_t)(v->t.now * 1e9), now, sizeof(now));
	printf("jobtrace top  %.19s UTC  %zu run%s, %zu running\r\n", now,
	       v->t.runs, v->t.runs == 1 ? "" : "s", v->t.running);
	topq_titles_text(cols, line, sizeof(line));
	printf("%s%-*.*s%s\r\n", v->color ? "\033[7m" : "", cols, cols, line,
	       v->color ? "\033[0m" : "");
	for (size_t k = v->top; k < v->n && k < v->top + (size_t)body; k++) {
		size_t i = v->order[k];
		bool has_kids = i + 1 < v->t.n &&
				v->t.v[i + 1].depth > v->t.v[i].depth;

		topq_line_text(&v->t, i, cols, line, sizeof(line));
		/* the mark goes in the space before the name */
		if (has_kids && strlen(line) > 10 + (size_t)v->t.v[i].depth)
			line[10 + v->t.v[i].depth] = folded(v, i) ? '+' : '-';
		printf("%s%s%s%s\r\n", k == v->cur ? "\033[7m" : "",
		       v->color ? state_color(v->t.v[i].state) : "", line,
		       v->color || k == v->cur ? "\033[0m" : "");
	}
	printf("\033[%d;1H", rows);
	if (v->editing)
		printf("filter: %s_", v->filter);
	else if (mrows)
		draw_message(v, rows, cols, mrows);
	else {
		/* the run's name as its line draws it (anybody's text) */
		util_strlcpy(line, v->follow, sizeof(line));
		printf("sort %s%s%s%s%s  q quit j/k move Enter fold s sort"
		       " / filter f follow", sort_names[v->sort],
		       v->filter[0] ? "  filter " : "", v->filter,
		       v->follow[0] ? "  follow " : "", util_printable(line));
	}
	fflush(stdout);
}

/* One key typed into the filter. */
static void filter_key(struct view *v, char c)
{
	size_t n = strlen(v->filter);

	if (c == '\r' || c == '\n' || c == 27)
		v->editing = false;
	if (c == 27)
		v->filter[0] = '\0';
	else if ((c == 127 || c == 8) && n)
		v->filter[n - 1] = '\0';
	else if (c >= 32 && c < 127 && n + 1 < sizeof(v->filter))
		v->filter[n] = c, v->filter[n + 1] = '\0';
	v->cur = 0;
}

/* One key (arrows as their escape sequences); false for q. */
static bool view_key(struct view *v, const char *k, size_t n)
{
	size_t i = v->n ? v->order[v->cur < v->n ? v->cur : 0] : 0;

	if (v->editing) {
		for (size_t j = 0; j < n; j++)
			filter_key(v, k[j]);
		return true;
	}
	if (k[0] == 'q' || k[0] == 'Q')
		return false;
	if (k[0] == 'j' || (n >= 3 && k[0] == 27 && k[2] == 'B'))
		v->cur += v->cur + 1 < v->n;
	else if (k[0] == 'k' || (n >= 3 && k[0] == 27 && k[2] == 'A'))
		v->cur -= v->cur > 0;
	else if ((k[0] == '\r' || k[0] == '\n') && v->n)
		fold_toggle(v, i);
	else if (k[0] == 's')
		v->sort = (v->sort + 1) % SORT_N;
	else if (k[0] == '/')
		v->editing = true, v->filter[0] = '\0';
	else if (k[0] == 'f' && v->follow[0])
		v->follow[0] = '\0';
	else if (k[0] == 'f' && v->n) {
		while (v->t.v[i].parent >= 0)
			i = (size_t)v->t.v[i].parent;
		util_strlcpy(v->follow, v->t.v[i].name ? v->t.v[i].name : "",
			     sizeof(v->follow));
	}
	if (v->n && v->cur < v->n)
		line_key(&v->t, v->order[v->cur], v->cur_key,
			 sizeof(v->cur_key));
	return true;
}

/*
 * Take an answer into the view: status, its JSON (len bytes) and what it
 * said on stderr (said: NULL or "" for nothing) as the view's message.  A
 * good frame becomes the view's; otherwise the one before stays, and an
 * answer that said nothing is said to have failed, so that the view does
 * not look live when no frame comes.  Returns status, 1 for a frame that
 * does not parse.
 */
static int view_take(struct view *v, int status, const char *json,
		     size_t len, const char *said)
{
	char why[64];
	struct topq t;

	view_message(v, said);
	if (!status && !topq_from_json(json, len, &t)) {
		topq_free(&v->t);
		v->t = t;
		view_order(v);
		return 0;
	}
	if (!status) {
		topq_free(&t);	/* what a bad frame left */
		snprintf(why, sizeof(why), "a frame could not be read"
			 " (%zu bytes)", len);
		status = 1;
	} else {
		snprintf(why, sizeof(why), "the latest frame failed"
			 " (status %d)", status);
	}
	if (!v->msg[0])
		view_message(v, why);
	return status;
}

/*
 * A new frame from the answer (JSON); the exit status of getting it.
 * What the answer says on stderr goes to a memory file for the while,
 * then to the view's message.
 */
static int view_fetch(struct cli *c, const struct qcmd *qc,
		      const char *source, const struct report_query *q,
		      struct view *v)
{
	char *frame = NULL, *said = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&frame, &len);
	struct util_capture cap;
	bool caught;
	int rc;

	if (!m)
		return 1;
	/* not caught (no memory file): said on the terminal, drawn over */
	caught = !util_stderr_capture(&cap);
	rc = cli_query_answer(c, qc, source, q, "json", m);
	fclose(m);
	if (caught)
		said = util_stderr_restore(&cap, NULL);
	rc = view_take(v, rc, frame, len, said);
	free(said);
	free(frame);
	return rc;
}

/*
 * A view's open connection to the agent's query child (queryproto.h,
 * follow=SECONDS): the child keeps the store open and sends a frame every
 * delay seconds, so that an unprivileged user's view costs the agent no
 * child and no store opening a frame.
 */
struct follow {
	int fd;			/* -1: none open */
	bool off;		/* refused or broken: a request a frame */
	bool broken;		/* no memory for the next answer */
	int frames;		/* whole answers on this connection */
	int status;		/* the latest answer's (either way) */
	uint64_t last_ns;	/* when the latest came (CLOCK_MONOTONIC) */
	struct query_reply r;
	char *buf, *ebuf;
	size_t len, elen;
	FILE *out, *err;
	struct view *v;
};

/* "f STATUS": the answer in fo->buf is whole; it becomes the view's. */
static void follow_frame(struct query_reply *r, int status)
{
	struct follow *fo = r->arg;

	fflush(fo->out);
	fflush(fo->err);
	fo->status = view_take(fo->v, status, fo->buf, fo->len,
			       fo->elen ? fo->ebuf : NULL);
	fo->frames++;
	fo->last_ns = util_now_ns(CLOCK_MONOTONIC);
	/* the next answer from the start */
	fclose(fo->out);
	fclose(fo->err);
	free(fo->buf);
	free(fo->ebuf);
	fo->buf = fo->ebuf = NULL;
	fo->out = open_memstream(&fo->buf, &fo->len);
	fo->err = open_memstream(&fo->ebuf, &fo->elen);
	/* no memory: the connection ends after this answer (follow_read) */
	fo->broken = !fo->out || !fo->err;
	r->out = fo->out ? fo->out : stderr;
	r->err = fo->err ? fo->err : stderr;
}

/* Close the connection, if one is open. */
static void follow_close(struct follow *fo)
{
	if (fo->fd < 0)
		return;
	close(fo->fd);
	fo->fd = -1;
	if (fo->out)
		fclose(fo->out);
	if (fo->err)
		fclose(fo->err);
	free(fo->buf);
	free(fo->ebuf);
	fo->buf = fo->ebuf = NULL;
	fo->out = fo->err = NULL;
}

/* Ask the agent for a view that stays open; off when it cannot be. */
static void follow_open(struct cli *c, const struct report_query *q,
			double delay, struct follow *fo)
{
	char line[2048];

	fo->frames = 0;
	/* a user's view refreshes at most QUERY_FOLLOW_MIN_S apart */
	if (delay < QUERY_FOLLOW_MIN_S)
		delay = QUERY_FOLLOW_MIN_S;
	if (query_request_line("top", q, "json", delay, line, sizeof(line)) ||
	    (fo->fd = control_open(config_socket_path(&c->cfg), line,
				   5000)) < 0) {
		fo->fd = -1;
		fo->off = true;
		return;
	}
	fo->out = open_memstream(&fo->buf, &fo->len);
	fo->err = open_memstream(&fo->ebuf, &fo->elen);
	if (!fo->out || !fo->err) {
		follow_close(fo);
		fo->off = true;
		return;
	}
	query_reply_init(&fo->r, fo->out, fo->err);
	fo->r.on_frame = follow_frame;
	fo->r.arg = fo;
}

/* Read what came on the connection: false once it ended (then closed; a
 * refusal or an end before any frame turns following off). */
static bool follow_read(struct follow *fo)
{
	char b[16384];
	ssize_t n = recv(fo->fd, b, sizeof(b), 0);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return true;
	if (n > 0 && !query_reply_feed(&fo->r, b, (size_t)n) && !fo->broken)
		return true;
	if (!fo->frames || fo->broken)
		fo->off = true;
	follow_close(fo);
	return false;
}

/* Free the view. */
static void view_free(struct view *v)
{
	topq_free(&v->t);
	free(v->order);
	for (size_t f = 0; f < v->nfolded; f++)
		free(v->folded[f]);
	free(v->folded);
}

/* Wait for keys until the next frame is due (delay seconds from now), or
 * with an open connection (fo) for its frames until it ends; false when
 * the view ends. */
static bool view_wait(struct view *v, double delay, struct follow *fo)
{
	uint64_t due = util_now_ns(CLOCK_MONOTONIC) + (uint64_t)(delay * 1e9);
	bool open = fo->fd >= 0;
	struct winsize ws;

	for (;;) {
		struct pollfd p[2] = { { .fd = STDIN_FILENO, .events = POLLIN },
				       { .fd = fo->fd, .events = POLLIN } };
		uint64_t now = util_now_ns(CLOCK_MONOTONIC);
		char k[16];
		ssize_t n;

		if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) || !ws.ws_row)
			ws = (struct winsize){ .ws_row = 24, .ws_col = 80 };
		draw(v, ws.ws_row, ws.ws_col);
		if (top_stop)
			return false;
		if (!open && now >= due)
			return true;
		if (ppoll(p, open ? 2 : 1, open ? NULL : &(struct timespec){
				  .tv_sec = (time_t)((due - now) / 1000000000),
				  .tv_nsec = (long)((due - now) % 1000000000) },
			  &top_waitmask) <= 0)
			continue;
		if (open && p[1].revents && !follow_read(fo)) {
			/* ask again once the latest answer is delay old (at
			 * once when there was none: a frame a request) */
			open = false;
			due = fo->last_ns + (uint64_t)(delay * 1e9);
			continue;
		}
		if (!p[0].revents)
			continue;
		n = read(STDIN_FILENO, k, sizeof(k));
		if (n <= 0)
			return n == 0 ? false : true;
		/* keys typed fast come in one read: one at a time, an
		 * arrow's escape sequence as one */
		for (ssize_t j = 0; j < n;) {
			size_t w = k[j] == 27 && j + 2 < n && k[j + 1] == '[' ?
				   3 : 1;

			if (!view_key(v, k + j, w))
				return false;
			view_order(v);
			j += (ssize_t)w;
		}
	}
}

/* The full-screen view until q; the exit status. */
static int top_view(struct cli *c, const struct qcmd *qc, const char *source,
		    const struct report_query *q, const struct top_opts *o)
{
	struct termios saved, raw;
	struct sigaction sa = { .sa_handler = on_stop };
	struct view v = { .color = o->color };
	sigset_t stops;
	struct follow fo = { .fd = -1, .v = &v };
	int rc = 0;

	/* a user who asks the agent keeps one connection open, for a
	 * view of a frame a minute or faster */
	fo.off = strcmp(source, "sqlite") || !cli_query_via_agent(c) ||
		 o->delay > QUERY_FOLLOW_MAX_S;

	if (tcgetattr(STDIN_FILENO, &saved)) {
		fprintf(stderr, "jobtrace top: stdin is not a terminal: use"
			" --once\n");
		return EXIT_USAGE;
	}
	raw = saved;
	raw.c_lflag &= ~(ICANON | ECHO | ISIG);
	raw.c_cc[VMIN] = 1;
	raw.c_cc[VTIME] = 0;
	sigemptyset(&stops);
	sigaddset(&stops, SIGINT);
	sigaddset(&stops, SIGTERM);
	sigaddset(&stops, SIGHUP);
	sigprocmask(SIG_BLOCK, &stops, &top_waitmask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw);
	fputs("\033[?1049h\033[?25l", stdout);
	do {
		if (fo.fd < 0 && !fo.off)
			follow_open(c, q, o->delay, &fo);
		if (fo.fd < 0)
			fo.status = view_fetch(c, qc, source, q, &v);
	} while (view_wait(&v, o->delay, &fo));
	rc = fo.status;	/* the latest frame's, however it came */
	follow_close(&fo);
	fputs("\033[?25h\033[?1049l", stdout);
	fflush(stdout);
	tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved);
	sigprocmask(SIG_SETMASK, &top_waitmask, NULL);
	view_free(&v);
	return rc;
}

/* top: one frame, or the view. */
int cli_run_top(struct cli *c, const struct cli_cmd *cmd, int argc,
		char **argv)
{
	const struct qcmd *qc = cli_cmd_query(cmd);
	struct top_opts o;
	struct qcmd_args a;
	const char *source;
	int rc = top_opts_take(&argc, argv, &o);

	if (!rc)
		rc = cli_query_args(cmd, argc, argv, &a, &source);
	if (rc)
		return rc < 0 ? 0 : rc;
	if (o.once || strcmp(a.format, "text") || !isatty(STDOUT_FILENO))
		return cli_query_answer(c, qc, source, &a.q, a.format, stdout);
	return top_view(c, qc, source, &a.q, &o);
}
