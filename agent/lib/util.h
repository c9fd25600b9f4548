/* SPDX-License-Identifier: GPL-2.0-or-later */
/* util.h - small helpers shared by the agent and the CLI. */
#ifndef JOBTRACE_UTIL_H
#define JOBTRACE_UTIL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

/* A macro's value as a string literal: UTIL_STR(FOO_MAX) is "64". */
#define UTIL_STR_(x) #x
#define UTIL_STR(x) UTIL_STR_(x)

/* Copy src into dst (size bytes), always NUL-terminated; returns strlen(src). */
size_t util_strlcpy(char *dst, const char *src, size_t size);
/* The part of path after its last '/'. */
const char *util_basename(const char *path);
/* Read up to len-1 bytes of a small file into buf (NUL-terminated);
 * returns bytes read or -errno. */
ssize_t util_read_file(const char *path, char *buf, size_t len);
/* Now on clock id, in ns. */
uint64_t util_now_ns(clockid_t clk);
/* Write v in decimal, ending just before end; returns its first digit. */
char *util_fmt_u64(uint64_t v, char *end);
/* v in decimal into out (21 bytes hold any), NUL-terminated; returns out. */
char *util_utoa(uint64_t v, char *out);
/* Human-readable bytes into out: "512 B", "1.5 KiB", "2.0 GiB". */
void util_human_bytes(uint64_t v, char *out, size_t len);
/*
 * Make text that a program or a user chose (a process name, arguments, a
 * job's fields, an agent's reply) safe to print on a terminal, in place:
 * C0 control characters, DEL, the C1 controls written as UTF-8
 * (U+0080..U+009F, CSI among them) and every byte that is not part of
 * valid UTF-8 (an 8-bit C1 such as 0x9b among them) become '?'.  Every text output of the
 * CLI and the agent's text replies go through it.  Returns s.
 */
char *util_printable(char *s);
/* Length of the valid UTF-8 sequence at s (n > 0 bytes available, RFC
 * 3629), 0 if it is not one. */
size_t util_utf8_len(const unsigned char *s, size_t n);
/*
 * url as it may be shown to anyone (status, messages): without userinfo
 * ("user:password@"), query string and fragment, which may hold secrets:
 * "https://user:pw@host:8443/path?token=x" is "https://host:8443/path".
 * Written into out (cut to len); returns out.
 */
char *util_url_public(const char *url, char *out, size_t len);
/* mkdir -p with mode for the missing parts; returns 0 or -errno. */
int util_mkdir_p(const char *path, mode_t mode);

/* Start a thread that takes no signals (the event loop reads them):
 * 0 or -errno. */
int util_thread_start(pthread_t *th, void *(*fn)(void *), void *arg);

/*
 * Start the command argv (found in PATH, with this process's environment)
 * with stdin and stderr on /dev/null and stdout into a pipe whose reading
 * end, close-on-exec and non-blocking, is *fd.  0 or -errno.
 */
int util_spawn_reader(char *const argv[], pid_t *pid, int *fd);

/*
 * stderr caught in a memory file for a while: what is written there (a
 * library's messages, the logger's) is read back rather than printed: the
 * messages of top's frame for its view's message line, a query child's
 * for the frames it sends.
 */
struct util_capture {
	int fd;		/* the memory file, stderr while caught */
	int saved;	/* stderr before, to put back; -1: it was closed */
};
/* From now on stderr writes into a new memory file: 0, or -errno with
 * stderr as it was. */
int util_stderr_capture(struct util_capture *c);
/*
 * What stderr said since the capture or the previous take (malloc'd,
 * NUL-terminated, its length in *len when len is not NULL), the memory
 * file emptied for what comes next.  NULL for no memory or a file that
 * cannot be read or emptied.
 */
char *util_stderr_take(struct util_capture *c, size_t *len);
/* stderr back as it was before the capture, the memory file closed;
 * returns what was said last, as util_stderr_take. */
char *util_stderr_restore(struct util_capture *c, size_t *len);

/* printf into err (when errlen > 0): the "what is wrong" of a failure. */
__attribute__((format(printf, 3, 4)))
void util_seterr(char *err, size_t errlen, const char *fmt, ...);

#endif
