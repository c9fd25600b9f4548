/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hookargs.h - the command line of the job hooks (`jobtrace job-start`,
 * `job-end`, `job-update` and `run`) made into one control request line:
 * "job-start<TAB>job=ID<TAB>cost_center=C..." (option names become field
 * names, '-' becoming '_'; see control.h for the protocol).
 */
#ifndef JOBTRACE_HOOKARGS_H
#define JOBTRACE_HOOKARGS_H

#include <stdbool.h>
#include <stddef.h>

#include "control.h"

struct hookargs {
	char line[CONTROL_LINE_MAX];	/* the request, without newline */
	size_t len;
	bool strict;			/* --strict */
	long timeout_ms;		/* --timeout-ms, default 500 */
	bool help;			/* --help: nothing else was parsed */
	const char *job;		/* --job */
	const char *scheduler;		/* --scheduler, or NULL */
	bool have_user, have_uid;	/* --user, --uid given */
	int cmd_index;			/* run: argv index of the command */
};

/*
 * Parse argv (argv[0] is cmd, the hook's name: job-start, job-end,
 * job-update or run) into h.  `run` stops at its command (after "--" or
 * at the first word that is no option), and takes neither --pid (it ties
 * itself) nor --exit-code, --signal, --state (its command's); --pid is
 * for job-start only, --signal and --state for job-end only.
 * Returns 0, or -EINVAL with err naming the argument that is wrong.
 */
int hookargs_parse(struct hookargs *h, const char *cmd, int argc,
		   char **argv, char *err, size_t errlen);
/* Append the field key=value to h's line; -EINVAL when value holds a tab
 * or newline, -E2BIG when the line would be too long. */
int hookargs_add(struct hookargs *h, const char *key, const char *value);

#endif
