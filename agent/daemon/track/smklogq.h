/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * smklogq.h - Snakemake's job logs (smklog.h) read off the event loop.
 *
 * The loop never opens, stats or reads a Snakemake log.  The file is a
 * user's: on a FUSE file system they serve, or on a hung NFS hard mount,
 * any of these may block for ever (a FUSE request its server has taken
 * cannot even be interrupted by SIGKILL), and a loop blocked there records
 * nothing and answers no hook.  The reader, a child process `jobtraced
 * --smklog-reader` (smklog.h), does the reading; the loop asks it over a
 * SOCK_SEQPACKET socket.
 *
 * Where the loop waits, and how long.  The rules must see the job at the
 * exec of the `sh -c` (40-steps.lua gives the rule to the shell as
 * job.task, and the shell's children inherit it at their fork, which the
 * agent handles right after the exec), so smklogq_job() is called at the
 * exec, before the rules run (outside their deadline): it sends the
 * request and waits for the answer at most wait_ms (SMKLOGQ_WAIT_MS).  The
 * reader normally answers within a millisecond: the log is in the page
 * cache and read from where the last lookup stopped.  All the waits
 * together are bounded too: at most budget_ms (SMKLOGQ_BUDGET_MS) in any
 * second (a token bucket), so a file that answers just within the wait,
 * over and over, costs the loop at most a tenth of its time; past the
 * budget, lookups are skipped.
 *
 * An answer that comes after the wait is dropped (counted late), not
 * applied when it arrives: by then the shell's children have been forked
 * and classified with the job fields the shell had, and a rule given to
 * the shell alone would make a task of the shell without its work (its
 * peak the shell's 4 MiB, not the 600 MiB of what it ran): no task is
 * better than a wrong one.
 *
 * One request at a time: while one is unanswered (the reader is busy past
 * the wait), every lookup is skipped at once and counted; nothing queues.
 * A watch (a Snakemake process started: the reader looks for its log from
 * then on) and a forget (it is gone) are sent without waiting, and
 * dropped when the socket is full.  A reader busy for replace_ms
 * (SMKLOGQ_REPLACE_MS) is stuck: it is killed (SIGKILL, never waited for:
 * in a FUSE request it dies only when the file system answers or goes
 * away), the engine whose file it is stuck in (the one it named last, see
 * smklog.h) is given up (its later lookups are skipped), and a new reader
 * starts.  At most SMKLOGQ_STUCK_MAX killed readers may be left
 * alive; beyond that no reader starts until one is gone.  A reader that
 * dies (a crash) is replaced the same way, at most once a second.
 * smklogq_status() prints `smklog: stuck on PATH since T` while a request
 * is unanswered past the wait.
 *
 * smklogq_stop() kills the readers and returns at once: the agent stops on
 * SIGTERM whatever its reader is stuck in.
 *
 * Loop thread only.
 */
#ifndef JOBTRACE_SMKLOGQ_H
#define JOBTRACE_SMKLOGQ_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "rules.h"

#define SMKLOGQ_WAIT_MS 20		/* the loop waits for an answer */
#define SMKLOGQ_BUDGET_MS 100		/* ... at most this in a second */
#define SMKLOGQ_REPLACE_MS 5000		/* a reader busy this long: killed */
#define SMKLOGQ_STUCK_MAX 4		/* killed readers alive, at most */
#define SMKLOGQ_GIVEN_UP_MAX 64		/* engines given up, remembered */
#define SMKLOGQ_RESPAWN_MS 1000		/* between two readers started */

struct smklogq_opts {
	const char *exe;	/* the reader's program: "/proc/self/exe" */
	unsigned wait_ms;	/* 0: SMKLOGQ_WAIT_MS */
	unsigned budget_ms;	/* 0: SMKLOGQ_BUDGET_MS */
	unsigned replace_ms;	/* 0: SMKLOGQ_REPLACE_MS */
};

struct smklogq_stats {
	pid_t reader;		/* the reader now, 0: none */
	unsigned stuck_alive;	/* killed readers not gone yet */
	uint64_t lookups;	/* asked for */
	uint64_t named;		/* answered in time, with a job */
	uint64_t late;		/* answered after the wait: dropped */
	uint64_t wait_ns;	/* the loop's time waiting, in all */
	uint64_t skipped_busy;	/* a request was unanswered */
	uint64_t skipped_budget;	/* the second's waiting was spent */
	uint64_t skipped_given_up;	/* the engine's reader got stuck */
	uint64_t skipped_no_reader;	/* none running (stuck ones, crash) */
	uint64_t replaced;	/* readers killed stuck */
	uint64_t died;		/* readers that ended on their own */
	/* the request unanswered past the wait: busy */
	bool stuck;
	uint64_t stuck_since_ns;	/* CLOCK_REALTIME of the request */
	/* the engine whose file it is stuck in (else the one asked about),
	 * and the file */
	uint32_t stuck_pid, stuck_uid;
	char stuck_path[4096];	/* "" not named (yet) */
};

struct smklogq;

/* Start the reader; 0 or -errno (logged). */
int smklogq_start(const struct smklogq_opts *o, struct smklogq **out);
/* Kill the readers without waiting for them; accepts NULL. */
void smklogq_stop(struct smklogq *q);
/*
 * The job of cmd, the `sh -c` string of a child of the workflow engine pid
 * (started at start_ns, user uid), as smklog_job() decides, if the reader
 * answers within the wait: true and *out filled.
 */
bool smklogq_job(struct smklogq *q, uint32_t pid, uint64_t start_ns,
		 uint32_t uid, const char *cmd, struct rules_engine_job *out);
/* The engine pid (started at start_ns) is gone. */
void smklogq_forget(struct smklogq *q, uint32_t pid, uint64_t start_ns);
/* A Snakemake process (pid, start_ns, user uid) started: the reader looks
 * for its log until found (smklog_watch()); never waits. */
void smklogq_watch(struct smklogq *q, uint32_t pid, uint64_t start_ns,
		   uint32_t uid);
/* Every tick: late answers, stuck readers killed and replaced, reaped. */
void smklogq_tick(struct smklogq *q, uint64_t now_ns);
/* The counters and the state. */
void smklogq_stats(struct smklogq *q, struct smklogq_stats *st);
/* The smklog lines of `jobtrace status` (q NULL: off); a stuck file's
 * path only when show_path (the peer is privileged). */
void smklogq_status(struct smklogq *q, bool show_path, FILE *out);

#endif
