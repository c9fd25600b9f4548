// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * squeueq.c - the jobs Slurm has pending (squeueq.h).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "squeueq.h"
#include "util.h"

#define SQUEUEQ_MAX_BYTES	(8u << 20)	/* more is cut (and skipped) */

/* Free a list (see squeueq.h). */
void squeueq_free(struct squeueq *l)
{
	for (size_t i = 0; l->v && i < l->n; i++) {
		free(l->v[i].id);
		free(l->v[i].command);
		free(l->v[i].comment);
	}
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

/* A copy of [s, s + n) as a string, or NULL. */
static char *dup_n(const char *s, size_t n)
{
	char *d = malloc(n + 1);

	if (d) {
		memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}

/* Parse one line [p, e) into a new job of l; 0, or -ENOMEM. */
static int parse_line(const char *p, const char *e, struct squeueq *l)
{
	const char *f[4] = { p }, *t;
	struct squeueq_job *v, *j;
	char *end;
	unsigned long uid;

	for (int k = 1; k < 4; k++) {
		t = memchr(f[k - 1], '\t', (size_t)(e - f[k - 1]));
		if (!t)
			return 0;
		f[k] = t + 1;
	}
	uid = strtoul(f[1], &end, 10);
	if (f[0] + 1 >= f[1] || end != f[2] - 1 || uid > UINT32_MAX)
		return 0;
	v = realloc(l->v, (l->n + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	l->v = v;
	j = &v[l->n];
	j->uid = (uint32_t)uid;
	j->id = dup_n(f[0], (size_t)(f[1] - 1 - f[0]));
	j->command = dup_n(f[2], (size_t)(f[3] - 1 - f[2]));
	j->comment = dup_n(f[3], (size_t)(e - f[3]));
	l->n++;
	return j->id && j->command && j->comment ? 0 : -ENOMEM;
}

/* Parse squeue's output (see squeueq.h). */
int squeueq_parse(const char *buf, size_t len, struct squeueq *l)
{
	const char *p = buf, *end = buf + len;
	int err = 0;

	memset(l, 0, sizeof(*l));
	while (p < end && !err) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *e = nl ? nl : end;

		err = parse_line(p, e, l);
		p = e + 1;
	}
	if (err)
		squeueq_free(l);
	return err;
}

/* Find word key=value in comment (see squeueq.h). */
int squeueq_comment_word(const char *comment, const char *key, char *out,
			 size_t len)
{
	static const char seps[] = " \t,;";
	size_t k = strlen(key);

	for (const char *p = comment; p && *p;) {
		size_t n;

		p += strspn(p, seps);
		n = strcspn(p, seps);
		if (n > k && !strncmp(p, key, k) && p[k] == '=') {
			size_t m = n - k - 1 < len - 1 ? n - k - 1 : len - 1;

			memcpy(out, p + k + 1, m);
			out[m] = '\0';
			return 1;
		}
		p += n;
	}
	return 0;
}

/* Read fd into *buf until EOF, SQUEUEQ_TIMEOUT_MS or the size cap;
 * whether it ended (EOF). */
static bool read_all(int fd, char **buf, size_t *len)
{
	uint64_t until = util_now_ns(CLOCK_MONOTONIC) +
			 SQUEUEQ_TIMEOUT_MS * 1000000ull;
	size_t cap = 0;

	*buf = NULL;
	*len = 0;
	for (;;) {
		uint64_t now = util_now_ns(CLOCK_MONOTONIC);
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (now >= until || poll(&pfd, 1, (int)((until - now) /
							1000000 + 1)) <= 0)
			return false;
		if (*len + 65536 > cap) {
			char *b;

			if (cap >= SQUEUEQ_MAX_BYTES)
				return false;
			b = realloc(*buf, cap + 65536 + 1);
			if (!b)
				return false;
			*buf = b;
			cap += 65536;
		}
		n = read(fd, *buf + *len, cap - *len);
		if (n == 0)
			return true;
		if (n < 0 && errno != EINTR && errno != EAGAIN)
			return false;
		if (n > 0)
			*len += (size_t)n;
	}
}

/* Run squeue into l: 0, or -errno (l empty). */
static int ask(struct squeueq *l)
{
	char *argv[] = { "squeue", "-h", "-t", "PENDING", "-o",
			 "%i\t%U\t%o\t%k", NULL };
	char *buf = NULL;
	size_t len = 0;
	int fd, err, st = 0;
	bool done;
	pid_t pid;

	memset(l, 0, sizeof(*l));
	err = util_spawn_reader(argv, &pid, &fd);
	if (err)
		return err;
	done = read_all(fd, &buf, &len);
	close(fd);
	if (!done)
		kill(pid, SIGKILL);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	err = !done ? -ETIMEDOUT : !WIFEXITED(st) || WEXITSTATUS(st) ?
	      -EIO : squeueq_parse(buf ? buf : "", len, l);
	free(buf);
	return err;
}

/* The pending jobs at now (see squeueq.h). */
const struct squeueq *squeueq_pending(double now)
{
	static struct squeueq last;
	static double asked = -1;

	if (asked >= 0 && now - asked < SQUEUEQ_EVERY_S && now >= asked)
		return &last;
	squeueq_free(&last);
	ask(&last);
	asked = now;
	return &last;
}
