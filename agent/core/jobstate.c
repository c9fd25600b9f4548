// SPDX-License-Identifier: GPL-2.0-or-later
/* jobstate.c - a job's end state in Slurm's words. */
#include <string.h>

#include "jobstate.h"

static const char *const final[] = {
	"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "OUT_OF_MEMORY",
	"NODE_FAIL", "PREEMPTED", "BOOT_FAIL", "DEADLINE", NULL,
};

/* Is word[0..len) a state a job ends in? */
bool jobstate_final(const char *word, size_t len)
{
	for (const char *const *s = final; *s; s++)
		if (strlen(*s) == len && !memcmp(*s, word, len))
			return true;
	return false;
}

/* The end state a Slurm Reason= names, or NULL. */
const char *jobstate_of_reason(const char *reason)
{
	static const struct {
		const char *reason, *state;
	} map[] = {
		{ "TimeLimit", "TIMEOUT" },
		{ "OutOfMemory", "OUT_OF_MEMORY" },
		{ "NodeDown", "NODE_FAIL" },
		{ "NodeFail", "NODE_FAIL" },
		{ "DeadLine", "DEADLINE" },
	};

	for (size_t i = 0; reason && i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(reason, map[i].reason))
			return map[i].state;
	return NULL;
}

/* The state an exit tells when nobody says more. */
const char *jobstate_of_exit(int code, int sig, bool oom, bool cancelled)
{
	if (cancelled)
		return "CANCELLED";
	if (oom || sig == JOBSTATE_SIG_OOM)
		return "OUT_OF_MEMORY";
	return code || sig ? "FAILED" : "COMPLETED";
}
