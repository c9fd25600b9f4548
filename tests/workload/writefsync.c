// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * writefsync PATH BYTES - write BYTES to PATH (created or truncated) in
 * 1 MiB chunks, fsync, close, then print
 *   pid=P bytes_written=B io_write_bytes=W io_wchar=C
 * where the io_* figures come from /proc/self/io just before exit.
 *
 * The file is deliberately left in place: the caller deletes it.  The
 * kernel counts write_bytes when pages are dirtied and takes them back
 * (cancelled_write_bytes) if dirty pages are truncated before writeback,
 * so an unlink right after the write could cancel the figure the test
 * checks.  The fsync before close makes the data reach the disk first, so
 * the later unlink by the test cannot cancel anything.  PATH must be on a
 * disk file system: tmpfs does no write_bytes accounting at all.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHUNK (1024 * 1024)

/* Read one "key: value" figure from /proc/self/io, or -1. */
static long long proc_io(const char *key)
{
	char line[128], name[64];
	long long v, found = -1;
	FILE *f = fopen("/proc/self/io", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%63[^:]: %lld", name, &v) == 2 &&
		    strcmp(name, key) == 0) {
			found = v;
			break;
		}
	fclose(f);
	return found;
}

int main(int argc, char **argv)
{
	static char buf[CHUNK];
	unsigned long long want, done = 0;
	char *end;
	int fd;

	if (argc != 3) {
		fprintf(stderr, "usage: writefsync PATH BYTES\n");
		return 2;
	}
	errno = 0;
	want = strtoull(argv[2], &end, 10);
	if (errno || *end || !*argv[2] || *argv[2] == '-') {
		fprintf(stderr, "writefsync: bad BYTES '%s'\n", argv[2]);
		return 2;
	}
	/* Not zeros, so no layer can treat the data as sparse. */
	memset(buf, 0xa5, sizeof(buf));

	fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "writefsync: open %s: %s\n", argv[1],
			strerror(errno));
		return 1;
	}
	while (done < want) {
		size_t n = want - done < CHUNK ? want - done : CHUNK;
		ssize_t w = write(fd, buf, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "writefsync: write: %s\n",
				strerror(errno));
			return 1;
		}
		done += w;
	}
	if (fsync(fd) < 0) {
		fprintf(stderr, "writefsync: fsync: %s\n", strerror(errno));
		return 1;
	}
	if (close(fd) < 0) {
		fprintf(stderr, "writefsync: close: %s\n", strerror(errno));
		return 1;
	}
	printf("pid=%d bytes_written=%llu io_write_bytes=%lld io_wchar=%lld\n",
	       (int)getpid(), done, proc_io("write_bytes"), proc_io("wchar"));
	return 0;
}
