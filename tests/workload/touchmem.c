// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * touchmem [--prefork PRE_MIB] MIB [HOLD_MS]
 *
 * Allocates MIB MiB, writes every page, optionally sleeps HOLD_MS, and prints
 *   pid=P ppid=Q touched_bytes=B vmhwm_bytes=H maxrss_bytes=R cpu_seconds=C
 * where vmhwm_bytes is VmHWM of /proc/self/status (this mm's peak RSS),
 * maxrss_bytes is getrusage's ru_maxrss (which the kernel carries over an
 * exec from the image that was replaced) and cpu_seconds its user +
 * system seconds (getrusage; not "cpu_s", which tests sum over burn's).
 *
 * With --prefork, it first touches PRE_MIB MiB itself, then forks and the
 * child execs this same program with "MIB [HOLD_MS]"; the parent waits and
 * prints "pid=P role=prefork prefork_bytes=B child_pid=C child_status=S".
 * The child's new mm is small, but its ru_maxrss is at least PRE_MIB: a
 * tracer must report the former as the process's peak RSS.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Parse a non-negative integer argument or exit with status 2. */
static unsigned long arg_ul(const char *s, const char *what)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || !*s || *s == '-') {
		fprintf(stderr, "touchmem: bad %s '%s'\n", what, s);
		exit(2);
	}
	return v;
}

/* Allocate mib MiB and write every byte; returns the block (kept). */
static char *touch(unsigned long mib)
{
	size_t len = (size_t)mib << 20;
	char *p;

	if (!len)
		return NULL;
	p = malloc(len);
	if (!p) {
		perror("touchmem: malloc");
		exit(1);
	}
	memset(p, 0x5a, len);
	/* Keep the compiler from dropping the unused block and its memset. */
	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

/* VmHWM of this process in bytes, or -1. */
static long long vmhwm_bytes(void)
{
	char line[256];
	long long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmHWM: %lld kB", &kb) == 1)
			break;
	fclose(f);
	return kb < 0 ? -1 : kb * 1024;
}

/* Sleep ms milliseconds. */
static void hold(unsigned long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

int main(int argc, char **argv)
{
	unsigned long mib, hold_ms = 0, pre_mib = 0;
	char *keep;
	struct rusage ru;
	int prefork = 0;

	if (argc >= 3 && strcmp(argv[1], "--prefork") == 0) {
		pre_mib = arg_ul(argv[2], "PRE_MIB");
		prefork = 1;
		argv += 2;
		argc -= 2;
	}
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: touchmem [--prefork PRE_MIB] MIB [HOLD_MS]\n");
		return 2;
	}
	mib = arg_ul(argv[1], "MIB");
	if (argc == 3)
		hold_ms = arg_ul(argv[2], "HOLD_MS");

	if (prefork) {
		char self[4096];
		ssize_t n;
		pid_t child;
		int status = 0;

		keep = touch(pre_mib);
		n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		if (n < 0) {
			perror("touchmem: readlink /proc/self/exe");
			return 1;
		}
		self[n] = '\0';
		fflush(stdout);
		child = fork();
		if (child < 0) {
			perror("touchmem: fork");
			return 1;
		}
		if (child == 0) {
			char *args[] = { "touchmem", argv[1],
					 argc == 3 ? argv[2] : NULL, NULL };

			execv(self, args);
			perror("touchmem: execv");
			_exit(127);
		}
		while (waitpid(child, &status, 0) < 0 && errno == EINTR)
			;
		printf("pid=%d role=prefork prefork_bytes=%llu child_pid=%d child_status=%d\n",
		       (int)getpid(), (unsigned long long)pre_mib << 20,
		       (int)child, status);
		(void)keep;
		return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
	}

	keep = touch(mib);
	if (hold_ms)
		hold(hold_ms);
	getrusage(RUSAGE_SELF, &ru);
	printf("pid=%d ppid=%d touched_bytes=%llu vmhwm_bytes=%lld maxrss_bytes=%lld"
	       " cpu_seconds=%.6f\n", (int)getpid(), (int)getppid(),
	       (unsigned long long)mib << 20, vmhwm_bytes(),
	       (long long)ru.ru_maxrss * 1024,
	       ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6);
	(void)keep;
	return 0;
}
