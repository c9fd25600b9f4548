// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * burn SECONDS - spin in user space until this process has used SECONDS of
 * CPU time, then print its own getrusage(RUSAGE_SELF) figures, its wall
 * time and the run-queue wait of /proc/self/schedstat (2nd field, ns):
 *   pid=P cpu_user_s=U cpu_sys_s=S cpu_s=U+S wall_s=W run_queue_s=R
 *   nvcsw=V nivcsw=I
 * The integration test compares these with what the agent recorded.
 *
 * Under a real-time policy (chrt -r or -f), burn raises itself to
 * SCHED_FIFO one priority above its own just before those last reads, so
 * that nothing it shares its core with (an equal-priority SCHED_RR sibling
 * whose 100 ms slice would otherwise come between the read and the exit)
 * can add run-queue wait after them: the figures it prints are then final,
 * as the agent's are at the last switch.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

/* CPU time used by the whole process so far, in seconds. */
static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Seconds since an arbitrary start (CLOCK_MONOTONIC). */
static double wall_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* This process's run-queue wait so far in seconds, -1 when not known. */
static double run_delay_s(void)
{
	unsigned long long run = 0, wait = 0;
	FILE *f = fopen("/proc/self/schedstat", "r");
	int n;

	if (!f)
		return -1;
	n = fscanf(f, "%llu %llu", &run, &wait);
	fclose(f);
	return n == 2 ? wait / 1e9 : -1;
}

/* Under SCHED_RR or SCHED_FIFO, become SCHED_FIFO one priority higher, so
 * that no sibling of the same priority preempts this process any more;
 * under any other policy do nothing.  Failure (no privilege) is ignored:
 * the figures are then only as final as they were. */
static void hold_the_core(void)
{
	struct sched_param sp;
	int pol = sched_getscheduler(0);

	if ((pol != SCHED_RR && pol != SCHED_FIFO) || sched_getparam(0, &sp))
		return;
	if (sp.sched_priority < sched_get_priority_max(SCHED_FIFO))
		sp.sched_priority++;
	(void)sched_setscheduler(0, SCHED_FIFO, &sp);
}

/* Seconds in a struct timeval. */
static double tv_s(struct timeval tv)
{
	return tv.tv_sec + tv.tv_usec / 1e6;
}

int main(int argc, char **argv)
{
	volatile unsigned long sink = 0;
	struct rusage ru;
	double want, start, wall0, rq;
	char *end;

	if (argc != 2) {
		fprintf(stderr, "usage: burn SECONDS\n");
		return 2;
	}
	errno = 0;
	want = strtod(argv[1], &end);
	if (errno || *end || want < 0) {
		fprintf(stderr, "burn: bad SECONDS '%s'\n", argv[1]);
		return 2;
	}

	wall0 = wall_now();
	start = cpu_now();
	/* Check the clock only every few thousand iterations: the vDSO
	 * does not serve CPU clocks, so each read is a system call. */
	while (cpu_now() - start < want)
		for (int i = 0; i < 20000; i++)
			sink += i;
	(void)sink;

	hold_the_core();
	rq = run_delay_s();
	getrusage(RUSAGE_SELF, &ru);
	printf("pid=%d cpu_user_s=%.6f cpu_sys_s=%.6f cpu_s=%.6f wall_s=%.6f"
	       " run_queue_s=%.6f nvcsw=%ld nivcsw=%ld\n",
	       (int)getpid(), tv_s(ru.ru_utime), tv_s(ru.ru_stime),
	       tv_s(ru.ru_utime) + tv_s(ru.ru_stime), wall_now() - wall0, rq,
	       ru.ru_nvcsw, ru.ru_nivcsw);
	return 0;
}
