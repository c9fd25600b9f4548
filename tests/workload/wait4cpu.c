// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * wait4cpu N BURN [THREADS] - fork and exec N short children, one after the other, and
 * print for each the CPU time that wait4(2) reports for it:
 *   pid=P prog=true|burn cpu_us=U
 * (U = ru_utime + ru_stime in microseconds), then one summary line:
 *   pid=P children=N failed=F mean_cpu_us=M
 *
 * Most children run /bin/true, which lives about a millisecond; every tenth
 * runs BURN (tests/workload/burn) with 0.2, 1.4, 2.6, 3.8 or 5.0 ms of CPU;
 * with THREADS (tests/workload/threads), every tenth, offset by two, runs it
 * with 2, 4, 8 or 16 threads sharing 20 ms of CPU (prog=threads): a
 * process whose threads exit before it.
 * The children's output goes to /dev/null.  wait4's figure is the kernel's
 * final one for the child, the reference the integration test compares the
 * agent's process records with.
 */
#include <errno.h>
#include <fcntl.h>
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
	static const char *const burn_s[] = { "0.0002", "0.0014", "0.0026",
					      "0.0038", "0.0050" };
	long long sum = 0;
	int n, failed = 0, devnull;
	char *end;

	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: wait4cpu N BURN [THREADS]\n");
		return 2;
	}
	errno = 0;
	n = (int)strtol(argv[1], &end, 10);
	if (errno || *end || n < 1 || n > 1000000) {
		fprintf(stderr, "wait4cpu: bad N '%s'\n", argv[1]);
		return 2;
	}
	devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (devnull < 0) {
		perror("wait4cpu: /dev/null");
		return 1;
	}

	for (int i = 0; i < n; i++) {
		static const char *const nthreads[] = { "2", "4", "8", "16" };
		int burn = i % 10 == 5, thr = argc == 4 && i % 10 == 7, status;
		struct rusage ru;
		pid_t pid;

		fflush(stdout);
		pid = fork();
		if (pid < 0) {
			perror("wait4cpu: fork");
			return 1;
		}
		if (pid == 0) {
			dup2(devnull, STDOUT_FILENO);
			if (burn)
				execl(argv[2], "burn", burn_s[i / 10 % 5],
				      (char *)NULL);
			else if (thr)
				execl(argv[3], "threads", nthreads[i / 10 % 4],
				      "0.02", (char *)NULL);
			else
				execl("/bin/true", "true", (char *)NULL);
			_exit(127);
		}
		while (wait4(pid, &status, 0, &ru) < 0)
			if (errno != EINTR) {
				perror("wait4cpu: wait4");
				return 1;
			}
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			failed++;
		printf("pid=%d prog=%s cpu_us=%lld\n", (int)pid,
		       burn ? "burn" : thr ? "threads" : "true",
		       tv_us(ru.ru_utime) + tv_us(ru.ru_stime));
		sum += tv_us(ru.ru_utime) + tv_us(ru.ru_stime);
	}
	printf("pid=%d children=%d failed=%d mean_cpu_us=%.1f\n", (int)getpid(),
	       n, failed, (double)sum / n);
	return failed != 0;
}
