// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_slurmq.c - the parser of `scontrol show job -o` output
 * (slurmq_parse), on what the agent reads from the command's pipe.  The
 * job asked about is the first JobId= in the input, so that the fields
 * after it are taken.
 */
#include <errno.h>

#include "fuzz.h"
#include "slurmq.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jt_jobinfo ji = { 0 };
	char *text = fuzz_strndup(data, size);
	const char *id;
	int n;

	if (!text)
		return 0;
	id = strstr(text, "JobId=");
	if (id) {
		id += 6;
		snprintf(ji.job.id, sizeof(ji.job.id), "%.*s",
			 (int)strcspn(id, " \n"), id);
	}
	n = slurmq_parse(text, &ji);
	FUZZ_CHECK(n >= 0 || n == -EINVAL);
	/* the strings stay terminated inside their arrays */
	FUZZ_CHECK(memchr(ji.name, '\0', sizeof(ji.name)));
	FUZZ_CHECK(memchr(ji.partition, '\0', sizeof(ji.partition)));
	FUZZ_CHECK(memchr(ji.job.user, '\0', sizeof(ji.job.user)));
	FUZZ_CHECK(memchr(ji.job.account, '\0', sizeof(ji.job.account)));
	/* a second pass fills nothing that is already filled */
	if (n >= 0) {
		struct jt_jobinfo again = ji;

		FUZZ_CHECK(slurmq_parse(text, &again) == 0);
		FUZZ_CHECK(!memcmp(&again, &ji, sizeof(ji)));
	}
	free(text);
	return 0;
}
