// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * netwait BURSTS PAUSE_MS CHILD_MS - a reader of a TCP socket on loopback
 * whose writer pauses for times this program chooses.
 *
 * The parent listens on 127.0.0.1 (a port the kernel picks) and forks the
 * writer, which connects, then BURSTS times sleeps PAUSE_MS (nanosleep)
 * and writes 64 KiB; it closes the socket and sleeps CHILD_MS more before
 * it exits.  The parent accepts and reads until the end of the stream, then
 * waits for the writer (waitpid).  It times each of its own accept, read
 * and waitpid calls (CLOCK_MONOTONIC around the call) and prints
 *   pid=P child=C net_s=N children_s=W pauses_s=S wall_s=T
 * net_s: the time it spent inside accept and read (the network waits and
 * the little CPU of copying), children_s: inside waitpid, pauses_s:
 * BURSTS x PAUSE_MS.  The integration test compares these with the agent's
 * wait.net_s and wait.children_s of both processes.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BURST (64 * 1024)

/* Seconds since an arbitrary start (CLOCK_MONOTONIC). */
static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Sleep ms milliseconds (nanosleep, restarted after a signal). */
static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts))
		;
}

/* The writer: connect to port, BURSTS x (pause, 64 KiB), close, sleep. */
static int writer(unsigned short port, int bursts, long pause_ms,
		  long child_ms)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = port };
	static char buf[BURST];
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		perror("netwait: writer: connect");
		return 1;
	}
	memset(buf, 'x', sizeof(buf));
	for (int i = 0; i < bursts; i++) {
		size_t off = 0;

		sleep_ms(pause_ms);
		while (off < sizeof(buf)) {
			ssize_t n = write(fd, buf + off, sizeof(buf) - off);

			if (n <= 0) {
				perror("netwait: writer: write");
				return 1;
			}
			off += n;
		}
	}
	close(fd);
	sleep_ms(child_ms);
	return 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof(a);
	double t0 = now_s(), t, net = 0, children;
	int lfd, fd, bursts, st;
	long pause_ms, child_ms;
	static char buf[16384];
	pid_t child;
	ssize_t n;

	if (argc != 4) {
		fprintf(stderr, "usage: netwait BURSTS PAUSE_MS CHILD_MS\n");
		return 2;
	}
	bursts = atoi(argv[1]);
	pause_ms = atol(argv[2]);
	child_ms = atol(argv[3]);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(lfd, 1) || getsockname(lfd, (struct sockaddr *)&a, &alen)) {
		perror("netwait: listen");
		return 1;
	}
	child = fork();
	if (child < 0) {
		perror("netwait: fork");
		return 1;
	}
	if (child == 0) {
		close(lfd);
		_exit(writer(a.sin_port, bursts, pause_ms, child_ms));
	}
	t = now_s();
	fd = accept(lfd, NULL, NULL);
	net += now_s() - t;
	if (fd < 0) {
		perror("netwait: accept");
		return 1;
	}
	do {
		t = now_s();
		n = read(fd, buf, sizeof(buf));
		net += now_s() - t;
	} while (n > 0);
	if (n < 0) {
		perror("netwait: read");
		return 1;
	}
	t = now_s();
	if (waitpid(child, &st, 0) != child) {
		perror("netwait: waitpid");
		return 1;
	}
	children = now_s() - t;
	printf("pid=%d child=%d net_s=%.6f children_s=%.6f pauses_s=%.6f"
	       " wall_s=%.6f\n", (int)getpid(), (int)child, net, children,
	       bursts * pause_ms / 1000.0, now_s() - t0);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}
