// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * forktree DEPTH FANOUT - grow a process tree: the first process is at
 * depth 0, and every process above depth DEPTH forks FANOUT children, so
 * there are 1 + FANOUT + ... + FANOUT^DEPTH processes.  Each prints
 *   pid=P ppid=Q depth=D
 * on stdout before it forks; parents wait for their children; leaves sleep
 * 50 ms so that the tree is alive at the same time.  Exit 0 if every child
 * exited 0.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Parse a non-negative integer argument up to max or exit with status 2. */
static int arg_int(const char *s, const char *what, long max)
{
	long v;
	char *end;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || !*s || v < 0 || v > max) {
		fprintf(stderr, "forktree: bad %s '%s'\n", what, s);
		exit(2);
	}
	return (int)v;
}

/*
 * Print this process's line with one write(2): nothing sits in a stdio
 * buffer that a fork could duplicate, and lines from many processes sharing
 * one file do not interleave.
 */
static void say(int depth)
{
	char line[96];
	int n = snprintf(line, sizeof(line), "pid=%d ppid=%d depth=%d\n",
			 (int)getpid(), (int)getppid(), depth);

	while (write(STDOUT_FILENO, line, n) < 0 && errno == EINTR)
		;
}

/* Body of every process in the tree; returns its exit status. */
static int node(int depth, int max_depth, int fanout)
{
	struct timespec leaf = { 0, 50 * 1000000L };
	int failed = 0, started = 0;

	say(depth);
	if (depth >= max_depth) {
		nanosleep(&leaf, NULL);
		return 0;
	}
	for (int i = 0; i < fanout; i++) {
		pid_t c = fork();

		if (c < 0) {
			perror("forktree: fork");
			failed = 1;
			break;
		}
		if (c == 0)
			_exit(node(depth + 1, max_depth, fanout));
		started++;
	}
	while (started > 0) {
		int status;

		if (wait(&status) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		started--;
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			failed = 1;
	}
	return failed;
}

int main(int argc, char **argv)
{
	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: forktree DEPTH FANOUT [DELAY_MS]\n");
		return 2;
	}
	/* an optional pause first, e.g. to let a tracer classify us */
	if (argc == 4)
		usleep(1000 * arg_int(argv[3], "DELAY_MS", 60000));
	return node(0, arg_int(argv[1], "DEPTH", 20),
		    arg_int(argv[2], "FANOUT", 20));
}
