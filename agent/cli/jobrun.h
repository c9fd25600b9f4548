/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * jobrun.h - `jobtrace run`'s child: the command runs as a child of the
 * wrapper (which then reports its end to the agent) and the wrapper exits
 * with the command's status, as a shell does.
 */
#ifndef JOBTRACE_JOBRUN_H
#define JOBTRACE_JOBRUN_H

#include <stdbool.h>

/* How the command ended, as Slurm's ExitCode code:signal. */
struct jobrun_end {
	int code;		/* its exit status; 0 when killed */
	int signal;		/* the signal that killed it, 0: none */
	bool cancelled;		/* the wrapper got SIGINT, SIGTERM, SIGHUP or
				 * SIGQUIT (from the terminal too) */
};

/*
 * Run argv (argv[0] found in PATH) as a child and wait for it.  SIGINT,
 * SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 sent to the wrapper are
 * sent on to the child, but for those the terminal sent to its whole
 * foreground group (the child has them already); a signal the wrapper
 * was started ignoring stays ignored, in the child too.  Returns the
 * shell-like status (jobrun_status), 127 when argv[0] was not found and
 * 126 when it could not be run (the child says why on stderr, prefixed
 * with who), or -errno when no child could be made; end (when not NULL)
 * says how it ended.
 */
int jobrun_command(char *const *argv, const char *who,
		   struct jobrun_end *end);
/* A wait status as a shell reports it: the exit code, or 128 + signal. */
int jobrun_status(int wstatus);

#endif
