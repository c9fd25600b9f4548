// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_cgroup.c - the cgroup parsers (agent/core/cgroup_parse.c) on one text:
 * as a cgroup path (containers, Slurm job and step), as a slurmstepd
 * title, as /proc/PID/cgroup and as /proc/cgroups; and the level of its
 * first line below its second.
 */
#include <stdbool.h>

#include "cgroup_parse.h"
#include "events.h"
#include "fuzz.h"

/* Is a string terminated inside its array? */
#define TERMINATED(a) (memchr((a), '\0', sizeof(a)) != NULL)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char v2[JT_CGROUP_LEN], mem[JT_CGROUP_LEN];
	struct cg_container ct;
	struct cg_slurm sl;
	char *text = fuzz_strndup(data, size), *nl;
	int r;

	if (!text)
		return 0;
	memset(&ct, 0x55, sizeof(ct));
	if (cg_parse_container(text, &ct)) {
		FUZZ_CHECK(TERMINATED(ct.runtime) && TERMINATED(ct.id) &&
			   TERMINATED(ct.ecs_task));
		FUZZ_CHECK(ct.id[0]);
	}
	memset(&sl, 0x55, sizeof(sl));
	if (cg_parse_slurm(text, &sl)) {
		FUZZ_CHECK(TERMINATED(sl.job) && TERMINATED(sl.step) &&
			   TERMINATED(sl.uid) && TERMINATED(sl.task));
		FUZZ_CHECK(sl.job[0]);
		FUZZ_CHECK(sl.job_level >= 0);
		FUZZ_CHECK(sl.step_level <= sl.job_level);
	}
	memset(&sl, 0x55, sizeof(sl));
	if (cg_parse_slurmstepd_title(text, &sl))
		FUZZ_CHECK(TERMINATED(sl.job) && TERMINATED(sl.step) &&
			   sl.job[0]);
	for (int on_v2 = 0; on_v2 < 2; on_v2++) {
		if (cg_parse_proc_cgroup(text, on_v2, v2, sizeof(v2), mem,
					 sizeof(mem)) == 0)
			FUZZ_CHECK(TERMINATED(v2) && TERMINATED(mem));
	}
	r = cg_memory_on_v2(text);
	FUZZ_CHECK(r >= -1 && r <= 1);

	/* path on the first line, ancestor on the rest */
	nl = strchr(text, '\n');
	if (nl) {
		*nl = '\0';
		r = cg_level_below(text, nl + 1);
		FUZZ_CHECK(r >= -1);
	}
	/* a path is 0 levels below itself (-1: empty or too deep) */
	r = cg_level_below(text, text);
	FUZZ_CHECK(r == 0 || r == -1);
	free(text);
	return 0;
}
