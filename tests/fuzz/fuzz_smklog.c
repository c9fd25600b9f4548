// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_smklog.c - the Snakemake job log reader (agent/daemon/track/smklog.c) on one
 * log text, fed in two pieces (cut at the input's first byte's value),
 * then each of its lines asked as a `bash -c` command: an answer names a
 * rule of word characters, its fields terminated, and each job goes to
 * one command at most (no more answers than job headers in the text).
 */
#include <stdbool.h>

#include "fuzz.h"
#include "smklog.h"

/* Is a string terminated inside its array? */
#define TERMINATED(a) (memchr((a), '\0', sizeof(a)) != NULL)

/* Does s hold only word characters, one at least? */
static bool word(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_'))
			return false;
	return true;
}

/* Lines of text that may be job headers ("...rule NAME:", "...checkpoint
 * NAME:"): an upper bound of the jobs the log can hold. */
static unsigned headers(const uint8_t *data, size_t size)
{
	unsigned n = 0;

	for (size_t i = 0; i < size; i++)
		n += data[i] == ':' && (i + 1 == size || data[i + 1] == '\n');
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct smklog_log *l = NULL;
	char *text = fuzz_strndup(data, size), *line, *save = NULL;
	size_t cut = size ? data[0] % (size + 1) : 0;
	unsigned answers = 0;

	if (!text || smklog_log_new(&l)) {
		free(text);
		smklog_log_free(l);
		return 0;
	}
	smklog_log_feed(l, (const char *)data, cut);
	smklog_log_feed(l, (const char *)data + cut, size - cut);
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		struct rules_engine_job j;

		memset(&j, 0x55, sizeof(j));
		if (!smklog_log_match(l, line, &j))
			continue;
		FUZZ_CHECK(TERMINATED(j.rule) && TERMINATED(j.jobid) &&
			   TERMINATED(j.wildcards) && TERMINATED(j.run));
		FUZZ_CHECK(word(j.rule));
		FUZZ_CHECK(!j.run[0]);
		answers++;
	}
	FUZZ_CHECK(answers <= headers(data, size));
	smklog_log_free(l);
	free(text);
	return 0;
}
