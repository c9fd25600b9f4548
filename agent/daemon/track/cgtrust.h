/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cgtrust.h - is a cgroup folder root's?
 *
 * A Slurm job's cgroup (.../slurm_NODE/uid_U/job_N, .../slurmstepd.scope/
 * job_N) and a container's (.../docker/ID, /ecs/TASK/ID) name the job of
 * the processes in them, so the tracker believes them only when root made
 * the folder: on cgroup v2 systemd delegates a subtree to each user
 * (user@UID.service), in which the user can make folders of any name and
 * move their processes into them.  Slurm makes job_N root's (the step
 * folders below it are the job's user's, cgroup v1), Docker and the ECS
 * agent make theirs root's.
 *
 * The path is looked up under each mount root in turn (the v2 hierarchy
 * of a hybrid node, /sys/fs/cgroup, the v1 memory controller's); the first
 * that has it decides.  A folder that is not there (gone) is not root's.
 * Verdicts are cached (a folder's owner does not change in its life).
 */
#ifndef JOBTRACE_CGTRUST_H
#define JOBTRACE_CGTRUST_H

#include <stdbool.h>
#include <sys/types.h>

#define CGTRUST_CACHE 256	/* verdicts kept */

struct cgtrust;

/*
 * A checker with the mount roots to look under (NULL: the real ones) and
 * the owner that makes a folder trusted (0, root; tests give their own).
 * Returns 0 or -ENOMEM.
 */
int cgtrust_new(const char *const *roots, uid_t owner, struct cgtrust **out);
/* Free it; accepts NULL. */
void cgtrust_free(struct cgtrust *c);
/* Is the cgroup folder dir (as /proc/PID/cgroup names it) the owner's? */
bool cgtrust_root(struct cgtrust *c, const char *dir);
/* Stat calls made so far (the cache's misses). */
unsigned long cgtrust_lookups(const struct cgtrust *c);

#endif
