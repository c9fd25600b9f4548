// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fileio DIR BIG_READ - what test_files.sh checks the files of a process
 * against: known bytes through known files, from two threads.
 *
 *   1. a thread (joined, so it exits before the process) opens DIR/in
 *      (made by the test) and reads 100000 bytes of it in 4 KiB reads,
 *      creates DIR/out (O_TRUNC) and writes what it read there;
 *   2. the main thread opens DIR/rw read-write (created), writes 3000
 *      bytes with pwrite and 2000 with writev, reads 1500 with pread and
 *      1000 with readv, and keeps it open to the end;
 *   3. creates DIR/tmp, writes 7000 bytes, unlinks it while open, writes
 *      3000 more and closes it;
 *   4. moves 512 bytes through a pipe and 256 through a socket pair;
 *   5. opens the folder DIR (O_DIRECTORY) and, after chdir(DIR), the
 *      relative path "rel" (made by the test) with openat2, reading all
 *      of it (its size is what the test made);
 *   6. opens /etc/ld.so.cache (a file the default rules drop) and keeps it
 *      open to the end, opens DIR/big (made by the test), reads BIG_READ
 *      bytes of it, says "paused pid=P fd=N" on stdout and waits for
 *      SIGUSR1, then reads 4096 more and exits.
 * Prints "pid=P in_read=... out_write=..." (what it did) before pausing.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#ifndef SYS_openat2
#define SYS_openat2 437
#endif

struct how {		/* struct open_how */
	uint64_t flags, mode, resolve;
};

static const char *dir;
static char buf[1 << 17];

/* Exit with a message naming what failed. */
static void die(const char *what)
{
	fprintf(stderr, "fileio: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* The path DIR/name (a static buffer per call site is enough here). */
static char *at(const char *name, char *out, size_t len)
{
	snprintf(out, len, "%s/%s", dir, name);
	return out;
}

/* Read exactly n bytes from fd in reads of at most chunk. */
static void read_n(int fd, size_t n, size_t chunk)
{
	while (n) {
		ssize_t r = read(fd, buf, n < chunk ? n : chunk);

		if (r <= 0)
			die("read");
		n -= (size_t)r;
	}
}

/* Write exactly n bytes of buf to fd. */
static void write_n(int fd, size_t n)
{
	while (n) {
		ssize_t w = write(fd, buf, n < sizeof(buf) ? n : sizeof(buf));

		if (w <= 0)
			die("write");
		n -= (size_t)w;
	}
}

/* Step 1, in a thread of its own. */
static void *copier(void *arg)
{
	char p[4096];
	int in, out;

	(void)arg;
	in = open(at("in", p, sizeof(p)), O_RDONLY);
	if (in < 0)
		die("open in");
	read_n(in, 100000, 4096);
	out = open(at("out", p, sizeof(p)), O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (out < 0)
		die("open out");
	if (pread(in, buf, 100000, 0) != 100000)
		die("pread in");
	write_n(out, 100000);
	close(in);
	close(out);
	return NULL;
}

int main(int argc, char **argv)
{
	struct how how = { O_RDONLY, 0, 0 };
	struct iovec iov[2] = { { buf, 1000 }, { buf + 1000, 1000 } };
	char p[4096];
	int fd, del, pfd[2], sv[2], d, rel, big;
	long big_read;
	sigset_t set;
	int sig;

	if (argc != 3)
		return fprintf(stderr, "usage: fileio DIR BIG_READ\n"), 2;
	dir = argv[1];
	big_read = atol(argv[2]);
	memset(buf, 'x', sizeof(buf));
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);

	pthread_t th;
	if (pthread_create(&th, NULL, copier, NULL) || pthread_join(th, NULL))
		die("thread");

	fd = open(at("rw", p, sizeof(p)), O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		die("open rw");
	if (pwrite(fd, buf, 3000, 0) != 3000 || lseek(fd, 3000, SEEK_SET) < 0 ||
	    writev(fd, iov, 2) != 2000 || pread(fd, buf, 1500, 0) != 1500)
		die("rw");
	iov[0].iov_len = iov[1].iov_len = 500;
	if (lseek(fd, 0, SEEK_SET) < 0 || readv(fd, iov, 2) != 1000)
		die("readv rw");

	del = open(at("tmp", p, sizeof(p)), O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (del < 0)
		die("open tmp");
	write_n(del, 7000);
	if (unlink(p))
		die("unlink tmp");
	write_n(del, 3000);
	close(del);

	if (pipe(pfd) || write(pfd[1], buf, 512) != 512 ||
	    read(pfd[0], buf, 512) != 512)
		die("pipe");
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) ||
	    write(sv[0], buf, 256) != 256 || read(sv[1], buf, 256) != 256)
		die("socketpair");

	d = open(dir, O_RDONLY | O_DIRECTORY);
	if (d < 0 || chdir(dir))
		die("open dir");
	rel = (int)syscall(SYS_openat2, AT_FDCWD, "rel", &how, sizeof(how));
	if (rel < 0)
		die("openat2 rel");
	while (read(rel, buf, sizeof(buf)) > 0)
		;
	close(rel);

	if (open("/etc/ld.so.cache", O_RDONLY) < 0)
		die("open /etc/ld.so.cache");
	big = open(at("big", p, sizeof(p)), O_RDONLY);
	if (big < 0)
		die("open big");
	read_n(big, (size_t)big_read, 65536);
	printf("pid=%d in_read=200000 out_write=100000 rw_write=5000"
	       " rw_read=2500 tmp_write=10000 pipe=512 sock=256 big_read=%ld\n",
	       getpid(), big_read);
	printf("paused pid=%d fd=%d\n", getpid(), big);
	fflush(stdout);
	if (sigwait(&set, &sig))
		die("sigwait");
	read_n(big, 4096, 4096);
	close(d);
	return 0;
}
