// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * dirtyio write PATH BYTES - write BYTES to PATH (created or truncated) in
 *                            1 MiB chunks, with no fsync: the pages stay dirty
 * dirtyio unlink PATH      - delete PATH
 * dirtyio write-unlink PATH BYTES - both, in this process (as gzip does
 *                            with its input)
 * dirtyio threads PATH N BYTES - N threads each write BYTES to PATH.I and
 *                            exit, one after the other (thread I lives
 *                            I x 50 ms longer); the main thread writes
 *                            nothing and reads /proc/self/io after the
 *                            last has been joined: what the dead threads
 *                            wrote, the figure a tracer must give this
 *                            process (it has no children)
 *
 * Then print "pid=P op=write|unlink" and this process's /proc/self/io as it
 * is ("rchar: N" ... "cancelled_write_bytes: N").  Run one after the other,
 * before writeback, the writer is charged write_bytes and the deleter, not
 * the writer, cancelled_write_bytes: the kernel charges a cancelled write to
 * the task that truncates the dirty pages.  write-unlink is charged both.  The integration test compares
 * both /proc/self/io figures with the agent's records.  PATH must be on a
 * disk file system: tmpfs does no write_bytes accounting at all.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHUNK (1024 * 1024)

/* Write BYTES to path, no fsync; 0 or 1 after a message. */
static int write_file(const char *path, const char *bytes)
{
	static char buf[CHUNK];
	unsigned long long want, done = 0;
	char *end;
	int fd;

	errno = 0;
	want = strtoull(bytes, &end, 10);
	if (errno || *end || !*bytes || *bytes == '-') {
		fprintf(stderr, "dirtyio: bad BYTES '%s'\n", bytes);
		return 2;
	}
	/* Not zeros, so no layer can treat the data as sparse. */
	memset(buf, 0xa5, sizeof(buf));
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "dirtyio: open %s: %s\n", path, strerror(errno));
		return 1;
	}
	while (done < want) {
		size_t n = want - done < CHUNK ? want - done : CHUNK;
		ssize_t w = write(fd, buf, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			fprintf(stderr, "dirtyio: write: %s\n", strerror(errno));
			return 1;
		}
		done += w;
	}
	return close(fd) < 0;
}

/* One writer thread's file and size. */
struct job {
	pthread_t th;
	char path[4096];
	const char *bytes;
	int index;
	int st;
};

/* Thread body: write, then stay a little longer than the one before. */
static void *writer(void *arg)
{
	struct job *j = arg;

	j->st = write_file(j->path, j->bytes);
	usleep(50000 * (useconds_t)j->index);
	return NULL;
}

/* N threads write a file each and exit one after the other. */
static int write_threads(const char *path, const char *nstr, const char *bytes)
{
	struct job *jobs;
	char *end;
	long n;
	int st = 0;

	errno = 0;
	n = strtol(nstr, &end, 10);
	if (errno || *end || n < 1 || n > 64) {
		fprintf(stderr, "dirtyio: bad N '%s' (1 to 64)\n", nstr);
		return 2;
	}
	jobs = calloc(n, sizeof(*jobs));
	if (!jobs)
		return 1;
	for (long i = 0; i < n; i++) {
		snprintf(jobs[i].path, sizeof(jobs[i].path), "%s.%ld", path, i);
		jobs[i].bytes = bytes;
		jobs[i].index = (int)i;
		if (pthread_create(&jobs[i].th, NULL, writer, &jobs[i])) {
			fprintf(stderr, "dirtyio: pthread_create failed\n");
			n = i;
			st = 1;
			break;
		}
	}
	for (long i = 0; i < n; i++) {
		pthread_join(jobs[i].th, NULL);
		st |= jobs[i].st;
	}
	free(jobs);
	return st;
}

int main(int argc, char **argv)
{
	char io[1024];
	ssize_t n;
	int fd, st;

	if (argc == 4 && strcmp(argv[1], "write") == 0)
		st = write_file(argv[2], argv[3]);
	else if (argc == 5 && strcmp(argv[1], "threads") == 0)
		st = write_threads(argv[2], argv[3], argv[4]);
	else if ((argc == 3 && strcmp(argv[1], "unlink") == 0) ||
		 (argc == 4 && strcmp(argv[1], "write-unlink") == 0)) {
		st = argc == 4 ? write_file(argv[2], argv[3]) : 0;
		if (!st)
			st = unlink(argv[2]) < 0;
		if (st)
			fprintf(stderr, "dirtyio: unlink %s: %s\n", argv[2],
				strerror(errno));
	} else {
		fprintf(stderr, "usage: dirtyio write|write-unlink PATH BYTES | dirtyio unlink PATH | dirtyio threads PATH N BYTES\n");
		return 2;
	}
	if (st)
		return st;

	fd = open("/proc/self/io", O_RDONLY | O_CLOEXEC);
	n = fd < 0 ? -1 : read(fd, io, sizeof(io) - 1);
	if (n < 0) {
		perror("dirtyio: /proc/self/io");
		return 1;
	}
	io[n] = '\0';
	printf("pid=%d op=%s\n%s", (int)getpid(), argv[1], io);
	return 0;
}
