// SPDX-License-Identifier: GPL-2.0-or-later
/* util.c - small helpers shared by the agent and the CLI. */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

/* Copy src into dst (size bytes), always NUL-terminated. */
size_t util_strlcpy(char *dst, const char *src, size_t size)
{
	size_t n = strlen(src);

	if (size) {
		size_t c = n < size - 1 ? n : size - 1;

		memcpy(dst, src, c);
		dst[c] = '\0';
	}
	return n;
}

/* Length of the valid UTF-8 sequence at s (RFC 3629), 0 if invalid. */
size_t util_utf8_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	unsigned char lo = 0x80, hi = 0xbf;
	size_t len, i;

	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		if (c == 0xe0)
			lo = 0xa0;	/* overlong */
		else if (c == 0xed)
			hi = 0x9f;	/* UTF-16 surrogates */
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		if (c == 0xf0)
			lo = 0x90;	/* overlong */
		else if (c == 0xf4)
			hi = 0x8f;	/* above U+10FFFF */
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
}

/*
 * Replace control characters and bytes that are not part of valid UTF-8
 * of s by '?' in place; returns s.
 */
char *util_printable(char *s)
{
	unsigned char *r = (unsigned char *)s, *w = r;
	size_t left = strlen(s), n;

	while (*r) {
		n = *r < 0x80 ? 1 : util_utf8_len(r, left);
		if (n == 2 && r[0] == 0xc2 && r[1] <= 0x9f) {
			*w++ = '?';	/* a C1 control: two bytes, one '?' */
		} else if (n == 0) {
			*w++ = '?';	/* a stray byte (an 8-bit C1 too) */
			n = 1;
		} else if (n == 1) {
			*w++ = *r < 0x20 || *r == 0x7f ? '?' : *r;
		} else {
			memmove(w, r, n);
			w += n;
		}
		r += n;
		left -= n;
	}
	*w = '\0';
	return s;
}

/* url without userinfo, query and fragment (see util.h). */
char *util_url_public(const char *url, char *out, size_t len)
{
	const char *sep = strstr(url, "://");
	const char *host = sep ? sep + 3 : url;
	size_t auth = strcspn(host, "/?#"), n;
	const char *at = NULL;

	/* the userinfo ends at the authority's last '@' */
	for (const char *c = host; c < host + auth; c++)
		if (*c == '@')
			at = c;
	n = snprintf(out, len, "%.*s", (int)(host - url), url);
	if (n < len) {
		host = at ? at + 1 : host;
		snprintf(out + n, len - n, "%.*s", (int)strcspn(host, "?#"),
			 host);
	}
	return out;
}

/* The part of path after its last '/'. */
const char *util_basename(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* Read a small file into buf, NUL-terminated. */
ssize_t util_read_file(const char *path, char *buf, size_t len)
{
	ssize_t n, off = 0;
	int fd;

	if (len == 0)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while ((size_t)off < len - 1) {
		n = read(fd, buf + off, len - 1 - off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			n = -errno;
			close(fd);
			return n;
		}
		if (n == 0)
			break;
		off += n;
	}
	buf[off] = '\0';
	close(fd);
	return off;
}

/* Now on clock id, in ns. */
uint64_t util_now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* Write v in decimal, ending just before end; returns its first digit. */
char *util_fmt_u64(uint64_t v, char *end)
{
	char *p = end;

	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return p;
}

/* v in decimal into out, NUL-terminated; returns out. */
char *util_utoa(uint64_t v, char *out)
{
	char tmp[24];
	char *s = util_fmt_u64(v, tmp + sizeof(tmp));
	size_t n = (size_t)(tmp + sizeof(tmp) - s);

	memcpy(out, s, n);
	out[n] = '\0';
	return out;
}

/* Human-readable bytes: "512 B", "1.5 KiB", "2.0 GiB". */
void util_human_bytes(uint64_t v, char *out, size_t len)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB" };
	double d = (double)v;
	int u = -1;

	if (v < 1024) {
		snprintf(out, len, "%llu B", (unsigned long long)v);
		return;
	}
	while (d >= 1024 && u < 3) {
		d /= 1024;
		u++;
	}
	snprintf(out, len, "%.1f %s", d, units[u]);
}

/* mkdir -p. */
int util_mkdir_p(const char *path, mode_t mode)
{
	char tmp[PATH_MAX];
	size_t n = util_strlcpy(tmp, path, sizeof(tmp));

	if (n >= sizeof(tmp))
		return -ENAMETOOLONG;
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, mode) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(tmp, mode) && errno != EEXIST)
		return -errno;
	return 0;
}

/* printf into err (when errlen > 0). */
void util_seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* Catch stderr in a memory file (see util.h). */
int util_stderr_capture(struct util_capture *c)
{
	int err;

	fflush(stderr);
	c->fd = memfd_create("jobtrace-stderr", MFD_CLOEXEC);
	if (c->fd < 0)
		return -errno;
	/* kept out of what this process starts; a closed stderr is put
	 * back closed */
	c->saved = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
	if ((c->saved < 0 && errno != EBADF) ||
	    dup2(c->fd, STDERR_FILENO) < 0) {
		err = -errno;
		if (c->saved >= 0)
			close(c->saved);
		close(c->fd);
		return err;
	}
	return 0;
}

/* The whole memory file of c, malloc'd and NUL-terminated; NULL if none. */
static char *capture_read(const struct util_capture *c, size_t *len)
{
	struct stat st;
	size_t n = 0;
	ssize_t k = 1;
	char *s;

	fflush(stderr);
	if (fstat(c->fd, &st) || !(s = malloc((size_t)st.st_size + 1)))
		return NULL;
	while (n < (size_t)st.st_size && k > 0) {
		k = pread(c->fd, s + n, (size_t)st.st_size - n, (off_t)n);
		n += k > 0 ? (size_t)k : 0;
	}
	s[n] = '\0';
	if (len)
		*len = n;
	return s;
}

/* What stderr said since the last take, the file emptied (see util.h). */
char *util_stderr_take(struct util_capture *c, size_t *len)
{
	char *s = capture_read(c, len);

	/* stderr shares the file's offset: its next message goes at the
	 * start of the emptied file */
	if (s && (ftruncate(c->fd, 0) || lseek(c->fd, 0, SEEK_SET))) {
		free(s);
		return NULL;
	}
	return s;
}

/* stderr as before the capture (see util.h). */
char *util_stderr_restore(struct util_capture *c, size_t *len)
{
	char *s = capture_read(c, len);

	if (c->saved >= 0) {
		dup2(c->saved, STDERR_FILENO);
		close(c->saved);
	} else {
		close(STDERR_FILENO);
	}
	close(c->fd);
	c->fd = c->saved = -1;
	return s;
}

extern char **environ;

/* Start argv with its stdout into a pipe (see util.h). */
int util_spawn_reader(char *const argv[], pid_t *pid, int *fd)
{
	posix_spawn_file_actions_t fa;
	int p[2], err;

	if (pipe2(p, O_CLOEXEC))
		return -errno;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, p[1], 1);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	err = posix_spawnp(pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(p[1]);
	if (err) {
		close(p[0]);
		return -err;
	}
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	*fd = p[0];
	return 0;
}

/* Start a thread with every signal blocked (see util.h). */
int util_thread_start(pthread_t *th, void *(*fn)(void *), void *arg)
{
	sigset_t all, old;
	int e;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	e = -pthread_create(th, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return e;
}
