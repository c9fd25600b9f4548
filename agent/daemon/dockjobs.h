/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dockjobs.h - Docker's side of container jobs (AWS Batch) on the agent's
 * loop: the containers the tracker meets are looked up in dockerd in the
 * background (dockerq.h), and the answers, read when its descriptor says
 * so, go to the containers that make the jobs (containers.h).  A failing
 * look-up is logged once, and again when dockerd answers again.
 */
#ifndef JT_DOCKJOBS_H
#define JT_DOCKJOBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "config.h"

struct jobs;
struct jt_host;
struct tracker;
struct dockjobs;

/*
 * Start the look-ups at cfg's docker.socket and follow at most max
 * containers for trk (which asks through them from now on, and writes
 * their jobs' records); their AWS Batch jobs go in the registry jobs.
 * Everything given is borrowed.  0, or -ENOMEM or the error of starting
 * the look-up thread.
 */
int dockjobs_start(const struct jt_config *cfg, size_t max, struct jobs *jobs,
		   const struct jt_host *host, struct tracker *trk,
		   struct dockjobs **out);
/* Stop the look-ups and free (NULL: nothing). */
void dockjobs_free(struct dockjobs *dj);
/* The descriptor that is readable when answers wait; -1 with NULL. */
int dockjobs_fd(const struct dockjobs *dj);
/* Take every answer that waits, to the containers. */
void dockjobs_take(struct dockjobs *dj);
/* Every tick (CLOCK_MONOTONIC now): containers that ended end their
 * jobs (NULL: nothing). */
void dockjobs_tick(struct dockjobs *dj, uint64_t now);
/* Did the last look-up fail (dockerd down, an error)? */
bool dockjobs_failing(const struct dockjobs *dj);
/* The docker_* lines of "status" ("docker: off" with NULL). */
void dockjobs_status(const struct dockjobs *dj, FILE *out);

#endif
