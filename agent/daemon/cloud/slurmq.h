/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * slurmq.h - ask slurmctld about a job in the background
 * (`scontrol show job -o ID`) for what Slurm 22.05's prolog and epilog do
 * not pass: account, job name, allocation, array task or heterogeneous
 * job component, and at the end its state (which slurmctld says only
 * once the epilogs ran: COMPLETING until then).  The hooks never wait
 * for it.
 */
#ifndef JOBTRACE_SLURMQ_H
#define JOBTRACE_SLURMQ_H

#include <sys/types.h>

#include "jobs.h"

/* Start the query; *fd is the non-blocking read end of its output. */
int slurmq_start(const char *jobid, pid_t *pid, int *fd);
/*
 * Fill ji from the line of `scontrol show job -o` output whose JobId is
 * ji's (raw_id, else its id; an array's job id lists all its tasks): its
 * empty fields; Reason= always; the state once it is final (jobstate.h);
 * an array task's id "A_T" (array_index T) or a heterogeneous job
 * component's "H+O", the JobId becoming raw_id.  Returns how many fields
 * were filled, -EINVAL when no line is about ji.
 */
int slurmq_parse(const char *text, struct jt_jobinfo *ji);

#endif
