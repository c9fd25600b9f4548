/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * slurmq.h - ask slurmctld about a job in the background
 * (`scontrol show job -o ID`) for what Slurm 22.05's prolog does not pass:
 * account, job name, allocation.  The prolog never waits for it.
 */
#ifndef JOBTRACE_SLURMQ_H
#define JOBTRACE_SLURMQ_H

#include <sys/types.h>

#include "jobs.h"

/* Start the query; *fd is the non-blocking read end of its output. */
int slurmq_start(const char *jobid, pid_t *pid, int *fd);
/* Fill the empty fields of ji from one `scontrol show job -o` line;
 * returns how many fields were filled, -EINVAL if it is not about ji. */
int slurmq_parse(const char *text, struct jt_jobinfo *ji);

#endif
