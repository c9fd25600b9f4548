/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * jobstate.h - how a job ended, in Slurm's words for every scheduler (the
 * words sacct and seff use): its state, and its exit as Slurm's ExitCode
 * "code:signal".  A Slurm job's state is what slurmctld says once the
 * job has left COMPLETING; a job of another scheduler, or a Slurm job
 * whose controller does not answer, gets the state its exit tells.
 */
#ifndef JOBTRACE_JOBSTATE_H
#define JOBTRACE_JOBSTATE_H

#include <stdbool.h>
#include <stddef.h>

#define JOBSTATE_LEN 16		/* the longest word, OUT_OF_MEMORY, fits */

/* Slurm's mark of a step that its cgroup's OOM killer hit, in the signal
 * part of ExitCode ("0:125"): no signal, the state is OUT_OF_MEMORY. */
#define JOBSTATE_SIG_OOM 125

/*
 * True if the first len bytes of word are a state a job ends in:
 * COMPLETED, FAILED, CANCELLED, TIMEOUT, OUT_OF_MEMORY, NODE_FAIL,
 * PREEMPTED, BOOT_FAIL or DEADLINE (not PENDING, RUNNING, COMPLETING, ...).
 */
bool jobstate_final(const char *word, size_t len);
/*
 * The state Slurm's Reason= of an ended job names (TimeLimit: TIMEOUT,
 * OutOfMemory: OUT_OF_MEMORY, NodeDown, NodeFail: NODE_FAIL, DeadLine:
 * DEADLINE), or NULL when it names none.
 */
const char *jobstate_of_reason(const char *reason);
/*
 * The state of a job that ended with exit code and signal (Slurm's
 * code:signal, sig 0 for a normal exit) when nobody says more: CANCELLED
 * when it was stopped on request, OUT_OF_MEMORY when the OOM killer hit
 * it (or sig is JOBSTATE_SIG_OOM), COMPLETED for 0:0, else FAILED.
 */
const char *jobstate_of_exit(int code, int sig, bool oom, bool cancelled);

#endif
