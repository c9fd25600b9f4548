// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * spawnstorm N PROGRAM [ARGS...] - run PROGRAM N times, one after the
 * other, as fast as possible, the way a shell does: fork, execv in the
 * child, waitpid in the parent.  Prints
 *   pid=P count=N failed=F elapsed_s=E cpu_s=C
 * where failed counts children that did not exit 0 (exit status 1 if any)
 * and cpu_s is the user+system CPU time of this process and all its
 * children (getrusage SELF + CHILDREN).  A tracer's kernel-side cost runs
 * in these processes' context, so cpu_s shows it with less noise from
 * other load on the machine than elapsed_s.
 * PROGRAM is a path (execv does not search PATH).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* User+system seconds of a struct rusage. */
static double ru_cpu(const struct rusage *ru)
{
	return ru->ru_utime.tv_sec + ru->ru_utime.tv_usec / 1e6 +
	       ru->ru_stime.tv_sec + ru->ru_stime.tv_usec / 1e6;
}

/* Monotonic clock in seconds. */
static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	unsigned long n, failed = 0;
	struct rusage self, children;
	double t0, elapsed;
	char *end;

	if (argc < 3) {
		fprintf(stderr, "usage: spawnstorm N PROGRAM [ARGS...]\n");
		return 2;
	}
	errno = 0;
	n = strtoul(argv[1], &end, 10);
	if (errno || *end || !*argv[1] || *argv[1] == '-') {
		fprintf(stderr, "spawnstorm: bad N '%s'\n", argv[1]);
		return 2;
	}
	fflush(stdout);

	t0 = now();
	for (unsigned long i = 0; i < n; i++) {
		int status;
		pid_t c = fork();

		if (c < 0) {
			perror("spawnstorm: fork");
			return 1;
		}
		if (c == 0) {
			execv(argv[2], &argv[2]);
			_exit(127);
		}
		while (waitpid(c, &status, 0) < 0)
			if (errno != EINTR) {
				perror("spawnstorm: waitpid");
				return 1;
			}
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			failed++;
	}
	elapsed = now() - t0;
	getrusage(RUSAGE_SELF, &self);
	getrusage(RUSAGE_CHILDREN, &children);
	printf("pid=%d count=%lu failed=%lu elapsed_s=%.6f cpu_s=%.6f\n",
	       (int)getpid(), n, failed, elapsed,
	       ru_cpu(&self) + ru_cpu(&children));
	return failed ? 1 : 0;
}
