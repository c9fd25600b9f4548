/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * squeueq.h - the jobs Slurm has pending, as `squeue -h -t PENDING` lists
 * them, for the waiting lines of `jobtrace top` (topq.h): a run that
 * submitted a Slurm job (an `sbatch` among its processes) waits for it
 * while it is pending.
 *
 * squeue runs at most every SQUEUEQ_EVERY_S seconds in a process (a view
 * asks every frame: the answer before is given again), bounded by
 * SQUEUEQ_TIMEOUT_MS; a node without squeue, or a squeue that fails or
 * hangs, gives no pending job.
 */
#ifndef JOBTRACE_SQUEUEQ_H
#define JOBTRACE_SQUEUEQ_H

#include <stddef.h>
#include <stdint.h>

#define SQUEUEQ_EVERY_S		10.0
#define SQUEUEQ_TIMEOUT_MS	3000

/* One pending job (strings owned by the list). */
struct squeueq_job {
	char *id;		/* "1234", "1234_7", "1234_[1-5]" */
	uint32_t uid;		/* its owner's */
	char *command;		/* the batch script's path (%o) */
	char *comment;		/* --comment (%k), "" for none */
};

struct squeueq {
	struct squeueq_job *v;
	size_t n;
};

/*
 * The pending jobs at now (epoch seconds): squeue's answer if the last one
 * is SQUEUEQ_EVERY_S old or more, else the last one.  The list stays valid
 * until the next call.  Never fails: no answer is an empty list.
 */
const struct squeueq *squeueq_pending(double now);

/*
 * Parse squeue's output of format "%i\t%U\t%o\t%k" (one job a line; the
 * comment is the rest of the line) into l (squeueq_free()): 0 or -ENOMEM.
 * A line without its four fields is skipped.
 */
int squeueq_parse(const char *buf, size_t len, struct squeueq *l);
/* Free a list squeueq_parse() made; accepts a zeroed one. */
void squeueq_free(struct squeueq *l);

/*
 * The value of word key ("trace-run", "trace-step") in a job comment as
 * the Slurm prolog reads it (words split at spaces, tabs, commas and
 * semicolons, "key=value"), copied into out; 0 if it is not there.
 */
int squeueq_comment_word(const char *comment, const char *key, char *out,
			 size_t len);

#endif
