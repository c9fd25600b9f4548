/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * smklog.h - the rule of each job Snakemake runs in its default local mode
 * (`snakemake --cores N`), from Snakemake's own job log.
 *
 * In local mode Snakemake runs a rule's shell command as a child
 * `/bin/bash -c "set -euo pipefail;  COMMAND"` of its own python: nothing
 * in the process tree names the rule (cluster mode's job scripts and
 * `--target-jobs` do).  Snakemake writes every job it starts to the log it
 * keeps open, `.snakemake/log/DATE.snakemake.log` in its working folder,
 * before it starts the job's command:
 *
 *     rule NAME:                 (or localrule, checkpoint, localcheckpoint)
 *         input: a, b            output:, log:, benchmark: alike
 *         jobid: 3
 *         wildcards: sample=a
 *     <blank line>
 *     COMMAND                    (only with --printshellcmds/-p)
 *
 * and "Finished job 3." (or an "Error in rule NAME:" block with its jobid)
 * when it is done.  The job of a `sh -c STRING` child is the pending job
 * (started, not yet given to a process) whose command is in STRING, else
 * whose files (input, output, log, benchmark) STRING names most, the
 * earliest on a tie; else, with no evidence at all, the only pending job.
 * A job that has finished is still pending until a process is given it
 * (the last SMKLOG_FINISHED_MAX such): the agent asks at the exec event,
 * which it handles up to a tick (100 ms) later, when a short job's shell
 * may have ended and Snakemake has logged the next jobs.  Without a
 * pending job, or between several with no evidence, the answer is none:
 * a wrong rule is worse than none.  In
 * cluster or cloud mode (the log says "Provided cluster nodes:") only a
 * localrule's job runs in Snakemake's process, and only evidence counts:
 * its other children submit job scripts (sh -c "sbatch ...snakejob...")
 * or ask about them, and are no job of a rule.  The
 * run is the log's name without ".snakemake.log" (the time Snakemake
 * started): every job of one `snakemake` invocation has the same.
 *
 * The log is found among the Snakemake process's open files
 * (/proc/PID/fd), a regular file owned by the process's user, opened
 * through that descriptor's magic link and kept open here until the
 * process is gone, and read from where the last lookup stopped.  It is
 * looked for from the start of the process (smklog_watch()): a short run
 * may end its jobs and close its log before the agent asks about their
 * shells.  Only the job headers above are kept (at most
 * SMKLOG_PENDING_MAX pending jobs, lines cut at SMKLOG_LINE_MAX, at most
 * SMKLOG_ENGINES_MAX logs, the reader's data segment capped at
 * SMKLOG_READER_MEM), nothing of it is logged or stored but the rule, job
 * id and wildcards the rules then put into job.task (40-steps.lua).  The
 * rest of the file is Snakemake's text, not a program's data.
 *
 * The file is the user's: on a FUSE file system they mount, or a hung NFS
 * hard mount, an open, fstat or read of it may never return, and a
 * process waiting on a FUSE request its server has taken cannot even be
 * killed.  So the follower never runs on the agent's event loop: it runs
 * in the reader, a child process (`jobtraced --smklog-reader`, with only
 * its socket open), which smklogq.h drives and replaces when it is stuck.
 * Before it opens, stats or reads a file, the follower names it through
 * the on_file callback, so that the agent can say what a stuck reader is
 * stuck on.
 *
 * The reader's protocol, on a SOCK_SEQPACKET socket (its stdin), one
 * message a packet, host byte order: the agent sends a struct smklog_req
 * followed by the command's bytes (SMKLOG_OP_JOB: which job is this
 * command?  SMKLOG_OP_WATCH: a Snakemake process started, look for its
 * log; SMKLOG_OP_FORGET: the process is gone; only SMKLOG_OP_JOB is
 * answered); the reader answers each SMKLOG_OP_JOB with one struct
 * smklog_msg of kind SMKLOG_MSG_ANSWER and the request's seq.  Before it
 * touches a file other than the one it named last, it sends one of kind
 * SMKLOG_MSG_FILE naming it and its engine: the last one named is the one
 * a stuck reader is stuck in.  The reader exits when the agent's end
 * closes.
 *
 * Not thread-safe: one caller (the reader's loop, or a test).
 */
#ifndef JOBTRACE_SMKLOG_H
#define JOBTRACE_SMKLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rules.h"

#define SMKLOG_ENGINES_MAX 64		/* Snakemake processes followed */
#define SMKLOG_PENDING_MAX 256		/* pending jobs kept per log */
#define SMKLOG_FINISHED_MAX 32		/* ... of them finished */
#define SMKLOG_LINE_MAX 16384		/* longer lines are cut */
#define SMKLOG_READ_MAX (4 << 20)	/* bytes read per lookup */
#define SMKLOG_CMD_MAX 65536		/* bytes of a command sent */
#define SMKLOG_WATCH_MS 50		/* between searches of a new engine */
#define SMKLOG_WATCH_S 600		/* ... for at most */
#define SMKLOG_READER_MEM (256ul << 20)	/* the reader's RLIMIT_DATA */
#define SMKLOG_READER_ARG "--smklog-reader"	/* argv[1] of the reader */

struct smklog;
struct smklog_log;

/* A request to the reader; the command's bytes follow (SMKLOG_OP_JOB). */
enum smklog_op { SMKLOG_OP_JOB = 1, SMKLOG_OP_FORGET = 2, SMKLOG_OP_WATCH = 3 };
struct smklog_req {
	uint32_t op;
	uint32_t pid;		/* the Snakemake process */
	uint64_t start_ns;	/* its start, boottime */
	uint64_t seq;		/* echoed in the answer */
	uint32_t uid;		/* its user: the log's owner */
	uint32_t pad;
};

/* A message of the reader. */
enum smklog_msg_kind { SMKLOG_MSG_ANSWER = 1, SMKLOG_MSG_FILE = 2 };
struct smklog_msg {
	uint32_t kind;
	uint32_t found;		/* ANSWER: job holds the job */
	uint64_t seq;		/* ANSWER: the request's */
	uint64_t start_ns;	/* FILE: the engine whose file it is */
	uint32_t pid, uid;
	struct rules_engine_job job;
	char path[4096];	/* FILE: the file about to be touched */
};

/* A follower of Snakemake logs; 0 or -ENOMEM. */
int smklog_new(struct smklog **out);
/* Free it and close its logs; accepts NULL. */
void smklog_free(struct smklog *s);
/* Call fn(ctx, pid, start_ns, uid, path) before each open, fstat or read
 * of the log path of the engine (pid, start_ns) of user uid. */
void smklog_on_file(struct smklog *s,
		    void (*fn)(void *ctx, uint32_t pid, uint64_t start_ns,
			       uint32_t uid, const char *path),
		    void *ctx);
/*
 * The job of the command cmd (the string of `sh -c STRING`) run by the
 * Snakemake process pid that started at start_ns (boottime) as user uid:
 * true and *out filled when its log names one (see above).  May block as
 * long as the log's file system does: the reader's, never the loop's.
 */
bool smklog_job(struct smklog *s, uint32_t pid, uint64_t start_ns,
		uint32_t uid, const char *cmd, struct rules_engine_job *out);
/* The process pid (started at start_ns) is gone: forget its log. */
void smklog_forget(struct smklog *s, uint32_t pid, uint64_t start_ns);
/*
 * A Snakemake process (pid, start_ns, user uid) started: look for its log
 * now, and again every SMKLOG_WATCH_MS while smklog_poll() is called, for
 * at most SMKLOG_WATCH_S, until it is found.  Found early, the log stays
 * open here when Snakemake closes it: a short run's last jobs end and
 * Snakemake closes its log before the agent asks about their shells.
 */
void smklog_watch(struct smklog *s, uint32_t pid, uint64_t start_ns,
		  uint32_t uid);
/* Do the searches of watched engines that are due; the milliseconds
 * until the next, -1: none. */
int smklog_poll(struct smklog *s);
/*
 * The reader: answer the requests on fd (see above) until it closes;
 * closes every other descriptor first.  Returns the exit status.
 */
int smklog_reader_main(int fd);

/* A parsed log without the file (for tests and the fuzzer). */
int smklog_log_new(struct smklog_log **out);
void smklog_log_free(struct smklog_log *l);
/* Parse the next n bytes of a log. */
void smklog_log_feed(struct smklog_log *l, const char *buf, size_t n);
/* The pending job whose command cmd is, as smklog_job() decides. */
bool smklog_log_match(struct smklog_log *l, const char *cmd,
		      struct rules_engine_job *out);

#endif
