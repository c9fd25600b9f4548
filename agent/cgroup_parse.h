/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cgroup_parse.h - what a cgroup path says about containers and Slurm jobs.
 *
 * Pure string functions (no I/O), tested against real-world path samples
 * from cgroup v1 and v2 nodes.
 */
#ifndef JOBTRACE_CGROUP_PARSE_H
#define JOBTRACE_CGROUP_PARSE_H

#include <stddef.h>

struct cg_container {
	char runtime[16];	/* "docker", "containerd", "cri-o", "podman", "ecs", "" */
	char id[80];		/* full container id (hex), "" if none */
	char ecs_task[80];	/* ECS task id when the layout carries it */
};

struct cg_slurm {
	char job[32];		/* "" if not a Slurm job cgroup */
	char step[32];		/* "batch", "extern", "0", "interactive", ... or "" */
	char uid[16];		/* from uid_N when present */
	char task[16];		/* from task_N when present */
};

/* Fill *out from a cgroup path; returns 1 if a container was found, else 0. */
int cg_parse_container(const char *path, struct cg_container *out);
/* Fill *out from a cgroup path; returns 1 if a Slurm job was found, else 0. */
int cg_parse_slurm(const char *path, struct cg_slurm *out);
/*
 * Parse the title of a slurmstepd ("slurmstepd: [1234.batch]",
 * "slurmstepd: [1234.0]", "slurmstepd: [1234.extern]", trailing spaces
 * allowed) into job and step; returns 1 on a match, else 0.
 */
int cg_parse_slurmstepd_title(const char *title, struct cg_slurm *out);

#endif
