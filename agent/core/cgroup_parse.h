/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cgroup_parse.h - what a cgroup path says about containers and Slurm jobs.
 *
 * Pure string functions (no I/O), tested against real-world path samples
 * from cgroup v1 and v2 nodes.
 */
#ifndef JOBTRACE_CGROUP_PARSE_H
#define JOBTRACE_CGROUP_PARSE_H

#include <stdbool.h>
#include <stddef.h>

struct cg_container {
	char runtime[16];	/* "docker", "containerd", "cri-o", "podman", "ecs", "" */
	char id[80];		/* full container id (hex), "" if none */
	char ecs_task[80];	/* ECS task id when the layout carries it */
	int level;		/* levels of the path below the container's own
				 * cgroup (0: in it), -1 when no container */
	int task_level;		/* levels below its ECS task's cgroup, -1 when
				 * the layout names no task */
};

struct cg_slurm {
	char job[32];		/* "" if not a Slurm job cgroup */
	char step[32];		/* "batch", "extern", "0", "interactive", ... or "" */
	char uid[16];		/* from uid_N when present */
	char task[16];		/* from task_N when present */
	int job_level;		/* levels of the path below job_N, or -1 */
	int step_level;		/* levels below step_S, or -1 */
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

/*
 * The cgroup up levels above path into out (len bytes): "/a/b/c" up 1 is
 * "/a/b", up 3 "/".  -1 when path has fewer levels or out is too small.
 */
int cg_ancestor(const char *path, int up, char *out, size_t len);
/* Levels of path below ancestor (0: the same cgroup), or -1 if not under. */
int cg_level_below(const char *path, const char *ancestor);
/*
 * From the text of /proc/PID/cgroup: the cgroup v2 path ("0::/..." line)
 * into v2, and the memory controller's path into mem (the v1 line naming
 * "memory", else the v2 path when mem_on_v2).  Missing ones are "".
 * Returns 0, or -1 when no line had the hierarchy:controllers:path form.
 */
int cg_parse_proc_cgroup(const char *text, bool mem_on_v2, char *v2,
			 size_t v2len, char *mem, size_t memlen);
/*
 * From the text of /proc/cgroups: 1 if the memory controller is on the
 * cgroup v2 hierarchy, 0 if on a v1 one, -1 if absent or disabled.
 */
int cg_memory_on_v2(const char *text);

#endif
