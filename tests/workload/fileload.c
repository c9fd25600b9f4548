// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fileload - the file workloads of bench/run.sh (section 6):
 *   fileload mk DIR N        make DIR/f0 .. DIR/f(N-1), empty
 *   fileload opens DIR N     open and close each of them once
 *   fileload read FILE CHUNK [PASSES]
 *                            read FILE whole in reads of CHUNK bytes,
 *                            PASSES times (1; from its start each time)
 *   fileload dwrite FILE MIB write MIB MiB with O_DIRECT, 1 MiB a write
 * Prints "elapsed_s=E cpu_s=C ops=N" (ops: opens, reads or writes); dwrite
 * exits 3 saying "no O_DIRECT" when the file system refuses it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

/* Seconds on clock c. */
static double secs(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* This process's user + system CPU seconds. */
static double cpu(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

/* Exit with a message naming what failed. */
static void die(const char *what)
{
	fprintf(stderr, "fileload: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* mk and opens: N files of DIR. */
static long files(const char *dir, long n, int mk)
{
	char p[4096];

	for (long i = 0; i < n; i++) {
		int fd;

		snprintf(p, sizeof(p), "%s/f%ld", dir, i);
		fd = open(p, mk ? O_WRONLY | O_CREAT | O_TRUNC : O_RDONLY, 0644);
		if (fd < 0)
			die(p);
		close(fd);
	}
	return n;
}

/* read: FILE whole in CHUNK reads, passes times. */
static long reads(const char *path, long chunk, long passes)
{
	char *buf = malloc((size_t)chunk);
	long ops = 0;
	ssize_t r;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || !buf)
		die(path);
	for (long i = 0; i < passes; i++) {
		if (lseek(fd, 0, SEEK_SET) < 0)
			die("lseek");
		while ((r = read(fd, buf, (size_t)chunk)) > 0)
			ops++;
		if (r < 0)
			die("read");
	}
	close(fd);
	free(buf);
	return ops;
}

/* dwrite: MIB MiB with O_DIRECT. */
static long dwrite(const char *path, long mib)
{
	void *buf;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_DIRECT, 0644);

	if (fd < 0 && errno == EINVAL) {
		printf("no O_DIRECT on this file system\n");
		exit(3);
	}
	if (fd < 0 || posix_memalign(&buf, 4096, 1 << 20))
		die(path);
	memset(buf, 'd', 1 << 20);
	for (long i = 0; i < mib; i++)
		if (write(fd, buf, 1 << 20) != 1 << 20)
			die("write");
	close(fd);
	free(buf);
	return mib;
}

int main(int argc, char **argv)
{
	double t0, c0;
	long ops;

	if (argc != 4 && !(argc == 5 && !strcmp(argv[1], "read")))
		return fprintf(stderr, "usage: fileload mk|opens|read|dwrite"
			       " PATH N (read: [PASSES])\n"), 2;
	t0 = secs(CLOCK_MONOTONIC);
	c0 = cpu();
	if (!strcmp(argv[1], "mk") || !strcmp(argv[1], "opens"))
		ops = files(argv[2], atol(argv[3]), argv[1][0] == 'm');
	else if (!strcmp(argv[1], "read"))
		ops = reads(argv[2], atol(argv[3]),
			    argc == 5 ? atol(argv[4]) : 1);
	else if (!strcmp(argv[1], "dwrite"))
		ops = dwrite(argv[2], atol(argv[3]));
	else
		return fprintf(stderr, "fileload: unknown mode %s\n", argv[1]), 2;
	printf("elapsed_s=%.6f cpu_s=%.6f ops=%ld\n",
	       secs(CLOCK_MONOTONIC) - t0, cpu() - c0, ops);
	return 0;
}
