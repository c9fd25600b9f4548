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
 * (/proc/PID/fd), a regular file owned by the process's user, and read
 * through that descriptor's magic link, from where the last lookup
 * stopped; only the job headers above are kept (at most
 * SMKLOG_PENDING_MAX pending jobs, lines cut at SMKLOG_LINE_MAX), nothing
 * of it is logged or stored but the rule, job id and wildcards the rules
 * then put into job.task (40-steps.lua).  The rest of the file is
 * Snakemake's text, not a program's data.
 *
 * Not thread-safe: one caller, the agent's event loop.
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

struct smklog;
struct smklog_log;

/* A follower of Snakemake logs; 0 or -ENOMEM. */
int smklog_new(struct smklog **out);
/* Free it and close its logs; accepts NULL. */
void smklog_free(struct smklog *s);
/*
 * The job of the command cmd (the string of `sh -c STRING`) run by the
 * Snakemake process pid that started at start_ns (boottime) as user uid:
 * true and *out filled when its log names one (see above).
 */
bool smklog_job(struct smklog *s, uint32_t pid, uint64_t start_ns,
		uint32_t uid, const char *cmd, struct rules_engine_job *out);
/* The process pid (started at start_ns) is gone: forget its log. */
void smklog_forget(struct smklog *s, uint32_t pid, uint64_t start_ns);

/* A parsed log without the file (for tests and the fuzzer). */
int smklog_log_new(struct smklog_log **out);
void smklog_log_free(struct smklog_log *l);
/* Parse the next n bytes of a log. */
void smklog_log_feed(struct smklog_log *l, const char *buf, size_t n);
/* The pending job whose command cmd is, as smklog_job() decides. */
bool smklog_log_match(struct smklog_log *l, const char *cmd,
		      struct rules_engine_job *out);

#endif
