// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * wait4each SCRIPT PROG... - run each PROG as `PROG -c SCRIPT` (a shell, or
 * a copy of one under another name), one after the other, and print for
 * each the CPU time wait4(2) reports for it:
 *   pid=P status=S cpu_us=U prog=PROG
 * (S the exit status, U = ru_utime + ru_stime in microseconds), then
 *   pid=P children=N failed=F
 * wait4's figure is the kernel's final one for the child, the reference an
 * integration test compares the agent's process records with.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

/* Microseconds in a struct timeval. */
static long long tv_us(struct timeval tv)
{
	return (long long)tv.tv_sec * 1000000 + tv.tv_usec;
}

int main(int argc, char **argv)
{
	int failed = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: wait4each SCRIPT PROG...\n");
		return 2;
	}
	for (int i = 2; i < argc; i++) {
		struct rusage ru;
		int status;
		pid_t pid;

		fflush(stdout);
		pid = fork();
		if (pid < 0) {
			perror("wait4each: fork");
			return 1;
		}
		if (pid == 0) {
			execl(argv[i], argv[i], "-c", argv[1], (char *)NULL);
			perror(argv[i]);
			_exit(127);
		}
		while (wait4(pid, &status, 0, &ru) < 0)
			if (errno != EINTR) {
				perror("wait4each: wait4");
				return 1;
			}
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			failed++;
		printf("pid=%d status=%d cpu_us=%lld prog=%s\n", (int)pid, status,
		       tv_us(ru.ru_utime) + tv_us(ru.ru_stime), argv[i]);
	}
	printf("pid=%d children=%d failed=%d\n", (int)getpid(), argc - 2,
	       failed);
	return failed != 0;
}
