/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * topq.h - the model of `jobtrace top`: the runs of the store as a tree,
 * run (job.run, else the job) -> workflow task instance -> process, one
 * line each with its state and figures, drawn by --once, --format json and
 * the full-screen view alike.
 *
 *  - The runs: those with a process record whose since time is in the
 *    selection (--since, by default the last TOPQ_SINCE_S seconds), or a
 *    live process sampled in the last TOPQ_LIVE_S seconds; --run, --job
 *    and --pipeline select runs by those fields instead.
 *  - A run's processes are what report reads for it (storeq_procs_load(),
 *    the live ones from their latest sample), its instances what rightsize
 *    and cost group (tasks.h): one definition.
 *  - State: a process is running (it has no process record), stalled (a
 *    running process whose latest stall signal has not ended), done,
 *    failed (exit code not 0, or killed by a signal other than SIGPIPE),
 *    OOM-killed, or lost: no process record and no sample in the last
 *    TOPQ_LIVE_S seconds (the agent stopped, or lost its exit).  An instance is running while one of its processes is
 *    (stalled when one is), else OOM-killed when one was, else failed
 *    when its topmost process failed, else done.  A run is running while
 *    a process of it is, else failed when an instance failed, else done.
 *  - Waiting: a task that ran in an earlier run of the same pipeline and
 *    has not started in a running run.
 *  - Expected: the median wall time (nearest rank) of the task's finished
 *    instances in the pipeline's other runs.
 *  - By node (report_query.by_node, the fleet's view): a run's instances
 *    and its processes of no task under a line per node they ran on (an
 *    instance is on its topmost process's node), which sums them as a run
 *    does its lines.
 *  - Now: a live process's CPU cores, I/O and network rates are the
 *    differences between its two latest samples over their interval; its
 *    RSS the latest sample's.  An instance sums its processes.
 */
#ifndef JOBTRACE_TOPQ_H
#define JOBTRACE_TOPQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "filesq.h"
#include "storeq.h"

#define TOPQ_SINCE_S	900.0	/* runs active in the last 15 minutes */
#define TOPQ_LIVE_S	60.0	/* a sample this recent is a live process */

struct store;

/* The signals of job ?1 in time order: kind, pid, host, phase (index
 * record_signal_job). */
#define TOPQ_SIGNALS_SQL "SELECT " JSTR("$.kind") ", " JNUM("$.pid") ", " \
	JSTR("$.host") ", " JSTR("$.evidence.phase") " FROM record" \
	" WHERE type = 'signal' AND job_id = ?1 ORDER BY time, id"
/*
 * The two latest samples of one live process (?1 job, ?2 pid, ?3 host,
 * ?4 start, epoch seconds): time, RSS, then CPU, read, write, received,
 * sent, and its progress object (text, or NULL).  Found by job, pid and time in the index record_sample_pid
 * (store.h's expression for the pid), not among all the job's samples.
 * Asked only for a live row with no sample before its latest known
 * (sample_latest made from a store's samples, or a reader's stand-in for
 * it): the store keeps that one's id beside the latest (TOPQ_PREV_SQL).
 */
#define TOPQ_SAMPLES_SQL "SELECT time, " JNUM("$.mem.rss_bytes") ", " \
	"(" JNUM("$.cpu.user_s") " + " JNUM("$.cpu.sys_s") "), " \
	JNUM("$.io.read_bytes") ", " JNUM("$.io.write_bytes") ", " \
	JNUM("$.net.rx_bytes") ", " JNUM("$.net.tx_bytes") ", " \
	"json_extract(json, '$.progress') FROM record" \
	" WHERE type = 'sample' AND job_id = ?1" \
	" AND " STORE_SAMPLE_PID " = ?2 AND " JSTR("$.host") " IS ?3" \
	" AND abs((julianday(" JSTR("$.start_time") ") - 2440587.5)" \
	" * 86400.0 - ?4) < 0.002 ORDER BY time DESC LIMIT 2"

/*
 * The counters of the sample before a live row's latest (?1 its id):
 * CPU user and system, read, write, received, sent, read as the latest's
 * are (storeq.c SAMPLE_ROWS), so that a rate is the difference of two
 * figures read the same way.
 */
#define TOPQ_PREV_SQL "SELECT json_extract(json, '$.cpu.user_s')," \
	" json_extract(json, '$.cpu.sys_s'), json_extract(json," \
	" '$.io.read_bytes'), json_extract(json, '$.io.write_bytes')," \
	" json_extract(json, '$.net.rx_bytes'), json_extract(json," \
	" '$.net.tx_bytes') FROM record WHERE id = ?1"

/* TOPQ_NODE: a node of a run, the fleet's level (report_query.by_node) */
enum topq_kind { TOPQ_RUN, TOPQ_TASK, TOPQ_PROC, TOPQ_NODE };
enum topq_state { TOPQ_RUNNING, TOPQ_STALLED, TOPQ_WAITING, TOPQ_DONE,
		  TOPQ_FAILED, TOPQ_OOM, TOPQ_LOST };

/* One line of the tree (strings owned). */
struct topq_line {
	enum topq_kind kind;
	int depth;		/* 0 run, 1 instance (or a process of no task),
				 * 2 process of an instance; by node: 1 the
				 * node, the others one deeper (a waiting
				 * task stays at 1: it is on no node yet) */
	long parent;		/* the line it is under, -1 for a run */
	enum topq_state state;
	char *name;		/* run id, task, tool */
	char *run, *job, *pipeline, *task, *tool, *user, *host, *comm;
	int64_t pid, ppid;	/* processes; 0 otherwise */
	double start;		/* epoch seconds; 0 for waiting */
	double elapsed;		/* seconds so far, or its wall time */
	double expected;	/* median of earlier runs; < 0: not known */
	size_t expected_n;	/* instances the median is of */
	double cores;		/* CPU cores now; < 0: not known */
	uint64_t rss;		/* RSS now; 0: not known or ended */
	uint64_t peak;		/* peak RSS so far */
	uint64_t req_mem;	/* its job's request (own job); 0: not known */
	double read_bps, write_bps, rx_bps, tx_bps;	/* < 0: not known */
	double cpu_s;		/* CPU seconds so far */
	char signals[96];	/* the signal kinds raised, comma separated */
	/* a running process's latest sample's progress through the
	 * largest file it reads (path NULL: none) */
	struct filesq_progress progress;
};

/* The tree: lines in order (a run, its instances each followed by its
 * processes, then its processes of no task). */
struct topq {
	struct topq_line *v;
	size_t n, cap;
	double now;		/* the frame's time, epoch seconds */
	size_t runs, running;	/* runs, running runs */
};

/* The word of a state ("running", "oom-killed"). */
const char *topq_state_name(enum topq_state s);
/* A duration as top prints it: "45s", "4m12s", "2h03m", "3d04h". */
void topq_duration(double s, char *out, size_t len);
/*
 * The tree of what q selects (its selector, or none: the last
 * TOPQ_SINCE_S seconds) from st at time now into t (topq_free()).
 * Returns 0, -EIO (logged with where) or -ENOMEM.
 */
int topq_load(struct store *st, const char *where,
	      const struct report_query *q, double now, struct topq *t);
/* Free what topq_load() made; accepts a zeroed t. */
void topq_free(struct topq *t);
/* One frame as plain text, width columns wide (0: no limit), the lines
 * whose show[i] is true (NULL: all). */
void topq_print_text(const struct topq *t, int width, const bool *show,
		     FILE *out);
/* The column titles as the text frame has them, without a newline. */
void topq_titles_text(int width, char *out, size_t len);
/* The format of one line as the text frame has it, without a newline. */
void topq_line_text(const struct topq *t, size_t i, int width, char *out,
		    size_t len);
/* The tree as one JSON object.  0 or -ENOMEM. */
int topq_print_json(const struct topq *t, const struct report_query *q,
		    FILE *out);
/*
 * The tree of a frame that topq_print_json() printed, read back into t
 * (topq_free(), also on an error): what the view draws when the agent
 * answered.  0, -EINVAL (not such a frame) or -ENOMEM.
 */
int topq_from_json(const char *buf, size_t len, struct topq *t);
/* `jobtrace top --once` from an open store: the frame of q at now in
 * format fmt (REPORT_TEXT or REPORT_JSON).  0 or -errno. */
int topq_run_store(struct store *st, const char *where,
		   const struct report_query *q, enum report_format fmt,
		   double now, FILE *out);

#endif
