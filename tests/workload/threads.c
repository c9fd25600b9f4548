// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * threads N SECONDS - start N threads that each burn SECONDS/N of their own
 * CPU time (so the process uses SECONDS in all), join them, and print the
 * process's getrusage(RUSAGE_SELF) totals, which include finished threads:
 *   pid=P threads=N cpu_user_s=U cpu_sys_s=S cpu_s=U+S
 * A tracer must report one process with this CPU time, not N.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static double per_thread_s;

/* CPU time used by the calling thread, in seconds. */
static double thread_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Thread body: spin until this thread has used per_thread_s of CPU. */
static void *spin(void *arg)
{
	volatile unsigned long sink = 0;
	double start = thread_cpu();

	(void)arg;
	while (thread_cpu() - start < per_thread_s)
		for (int i = 0; i < 20000; i++)
			sink += i;
	(void)sink;
	return NULL;
}

/* Seconds in a struct timeval. */
static double tv_s(struct timeval tv)
{
	return tv.tv_sec + tv.tv_usec / 1e6;
}

int main(int argc, char **argv)
{
	pthread_t *tids;
	struct rusage ru;
	double total;
	char *end;
	long n;

	if (argc != 3) {
		fprintf(stderr, "usage: threads N SECONDS\n");
		return 2;
	}
	errno = 0;
	n = strtol(argv[1], &end, 10);
	if (errno || *end || n < 1 || n > 10000) {
		fprintf(stderr, "threads: bad N '%s'\n", argv[1]);
		return 2;
	}
	total = strtod(argv[2], &end);
	if (*end || total < 0) {
		fprintf(stderr, "threads: bad SECONDS '%s'\n", argv[2]);
		return 2;
	}
	per_thread_s = total / n;

	tids = calloc(n, sizeof(*tids));
	if (!tids) {
		perror("threads: calloc");
		return 1;
	}
	for (long i = 0; i < n; i++) {
		int err = pthread_create(&tids[i], NULL, spin, NULL);

		if (err) {
			fprintf(stderr, "threads: pthread_create: %s\n",
				strerror(err));
			return 1;
		}
	}
	for (long i = 0; i < n; i++)
		pthread_join(tids[i], NULL);
	free(tids);

	getrusage(RUSAGE_SELF, &ru);
	printf("pid=%d threads=%ld cpu_user_s=%.6f cpu_sys_s=%.6f cpu_s=%.6f\n",
	       (int)getpid(), n, tv_s(ru.ru_utime), tv_s(ru.ru_stime),
	       tv_s(ru.ru_utime) + tv_s(ru.ru_stime));
	return 0;
}
