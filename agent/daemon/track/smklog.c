// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * smklog.c - the rule of each job Snakemake runs in local mode, from the
 * job log Snakemake keeps open (smklog.h has the format and the rules of
 * the match), and the reader process that follows the logs for the agent.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "smklog.h"
#include "util.h"

#define SHELL_MAX 65536		/* bytes kept of a printed command */
#define FILES_MAX 16384		/* bytes kept of a job's file names */
#define RETRY_NS 1000000000ULL	/* between searches for a missing log */
#define WATCH_NS (SMKLOG_WATCH_MS * 1000000ULL)	/* ... of a watched one */
#define WATCH_FOR_NS (SMKLOG_WATCH_S * 1000000000ULL)
#define FDS_MAX 4096		/* open files looked at for the log */

/* One job of the log, from its header to its end. */
struct entry {
	char rule[JT_STR_MEDIUM];
	char jobid[24];
	char wild[JT_STR_MEDIUM];
	char *files;		/* its file names, each ended by '\n' */
	size_t files_len;
	char *shell;		/* the command as -p prints it, or NULL */
	size_t shell_len;
	bool local;		/* a localrule (localcheckpoint) */
	bool matched;		/* given to a process */
	bool finished;		/* "Finished job", or its error block, read */
};

/* Where the parser is. */
enum pstate {
	P_NONE,
	P_BLOCK,		/* in a job's header lines */
	P_SHELL,		/* after them: the printed command, if any */
	P_ERROR,		/* in an "Error in rule" block */
};

struct smklog_log {
	char line[SMKLOG_LINE_MAX + 1];
	size_t len;		/* of the line in progress (cut at the max) */
	enum pstate st;
	long cur;		/* the entry being read, -1: none */
	struct entry *v;	/* jobs not done with, oldest first */
	size_t n, cap;
	size_t finished;	/* of them finished, not given to a process */
	bool remote;		/* cluster or cloud mode: rules run elsewhere */
};

/* A Snakemake process followed. */
struct engine {
	uint32_t pid;
	uint64_t start_ns;
	int fd;			/* its log, -1: not found (yet) */
	char path[4096];	/* the log's, as its magic link reads */
	char run[JT_STR_MEDIUM];	/* the log's name, its suffix cut */
	uint32_t uid;		/* its user */
	uint64_t searched_ns;	/* last search, monotonic */
	uint64_t watch_until;	/* monotonic: searched for until, 0: not */
	off_t off;		/* read up to here */
	struct smklog_log *log;
	uint64_t used;		/* lookups stamp: the least recent goes */
};

struct smklog {
	struct engine e[SMKLOG_ENGINES_MAX];
	size_t n;
	uint64_t clock;
	/* may be NULL */
	void (*on_file)(void *ctx, uint32_t pid, uint64_t start_ns,
			uint32_t uid, const char *path);
	void *ctx;
};

/* ---- the parser ------------------------------------------------------------- */

/* A new, empty parsed log. */
int smklog_log_new(struct smklog_log **out)
{
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	(*out)->cur = -1;
	return 0;
}

/* Free one entry's strings. */
static void entry_free(struct entry *e)
{
	free(e->files);
	free(e->shell);
}

/* Free a parsed log. */
void smklog_log_free(struct smklog_log *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n; i++)
		entry_free(&l->v[i]);
	free(l->v);
	free(l);
}

/* Drop entry i. */
static void drop(struct smklog_log *l, size_t i)
{
	if (l->v[i].finished)
		l->finished--;
	entry_free(&l->v[i]);
	memmove(&l->v[i], &l->v[i + 1], (l->n - i - 1) * sizeof(*l->v));
	l->n--;
	if (l->cur == (long)i)
		l->cur = -1;
	else if (l->cur > (long)i)
		l->cur--;
}

/*
 * The job with id jobid finished (or failed): done with when it was given
 * to a process, else kept until its shell is asked about (a short job's
 * shell may end before the agent asks), at most SMKLOG_FINISHED_MAX such.
 */
static void finish(struct smklog_log *l, const char *jobid)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (!l->v[i].finished && !strcmp(l->v[i].jobid, jobid))
			break;
	if (i == l->n)
		return;
	if (l->v[i].matched) {
		drop(l, i);
		return;
	}
	l->v[i].finished = true;
	if (++l->finished <= SMKLOG_FINISHED_MAX)
		return;
	for (i = 0; i < l->n; i++) {
		if (l->v[i].finished) {
			drop(l, i);	/* the oldest */
			return;
		}
	}
}

/* Does s start with prefix p? */
static bool starts(const char *s, const char *p)
{
	return !strncmp(s, p, strlen(p));
}

/* The rule of a job header ("rule NAME:", "localrule NAME:", ...), or
 * NULL; s is the line, *local whether it is a local rule's. */
static const char *header_rule(char *s, size_t len, bool *local)
{
	static const char *const kinds[] = { "rule ", "localrule ",
					     "checkpoint ", "localcheckpoint " };
	char *name = NULL;

	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
		if (starts(s, kinds[k]))
			name = s + strlen(kinds[k]);
	if (!name || len < 2 || s[len - 1] != ':' || name == s + len - 1)
		return NULL;
	for (char *p = name; p < s + len - 1; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '_'))
			return NULL;
	s[len - 1] = '\0';
	*local = starts(s, "local");
	return name;
}

/* Start a new pending job of rule; the oldest goes when full. */
static void begin(struct smklog_log *l, const char *rule, bool local)
{
	struct entry *e;

	if (l->n == SMKLOG_PENDING_MAX)
		drop(l, 0);
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		struct entry *v = realloc(l->v, cap * sizeof(*v));

		if (!v) {
			l->st = P_NONE;
			l->cur = -1;
			return;
		}
		l->v = v;
		l->cap = cap;
	}
	e = &l->v[l->n];
	memset(e, 0, sizeof(*e));
	util_strlcpy(e->rule, rule, sizeof(e->rule));
	e->local = local;
	l->cur = (long)l->n++;
	l->st = P_BLOCK;
}

/* Append n bytes and the end mark to a bounded buffer. */
static void append(char **buf, size_t *len, size_t max, const char *s,
		   size_t n, char mark)
{
	char *b;

	if (*len + n + 2 > max)
		return;
	b = realloc(*buf, *len + n + 2);
	if (!b)
		return;
	memcpy(b + *len, s, n);
	*len += n;
	b[(*len)++] = mark;
	b[*len] = '\0';
	*buf = b;
}

/* One "    key: value" line of a job's header. */
static void header_line(struct entry *e, const char *s)
{
	const char *v = strstr(s, ": ");
	size_t klen = v ? (size_t)(v - s) : 0;

	if (!v)
		return;
	v += 2;
	if (klen == 5 && starts(s, "jobid")) {
		util_strlcpy(e->jobid, v, sizeof(e->jobid));
	} else if (klen == 9 && starts(s, "wildcards")) {
		util_strlcpy(e->wild, v, sizeof(e->wild));
	} else if ((klen == 5 && starts(s, "input")) ||
		   (klen == 6 && starts(s, "output")) ||
		   (klen == 3 && starts(s, "log")) ||
		   (klen == 9 && starts(s, "benchmark"))) {
		/* "a, b, c": Snakemake joins the names with ", " */
		while (*v) {
			size_t n = strcspn(v, ",");

			append(&e->files, &e->files_len, FILES_MAX, v, n,
			       '\n');
			v += n;
			while (*v == ',' || *v == ' ')
				v++;
		}
	}
}

/* One whole line (s, len bytes, no newline; may be modified). */
static void do_line(struct smklog_log *l, char *s, size_t len)
{
	const char *rule;
	bool local;

	s[len] = '\0';
	if (l->st == P_ERROR) {
		if (starts(s, "    jobid: "))
			finish(l, s + 11);
		if (!len)
			l->st = P_NONE;
		return;
	}
	if ((rule = header_rule(s, len, &local))) {
		begin(l, rule, local);
		return;
	}
	if (starts(s, "Provided cluster nodes:") ||
	    starts(s, "Provided cloud nodes:")) {
		l->remote = true;
		return;
	}
	if (starts(s, "Error in rule ")) {
		l->st = P_ERROR;
		l->cur = -1;
		return;
	}
	if (starts(s, "Finished job ") && len > 14 && s[len - 1] == '.') {
		s[len - 1] = '\0';
		finish(l, s + 13);
		l->st = P_NONE;
		return;
	}
	if (l->cur < 0) {
		l->st = P_NONE;
		return;
	}
	if (l->st == P_BLOCK) {
		if (!len)
			l->st = P_SHELL;
		else if (starts(s, "    "))
			header_line(&l->v[l->cur], s + 4);
		else
			l->st = P_NONE;
		return;
	}
	if (l->st == P_SHELL) {
		struct entry *e = &l->v[l->cur];

		if (!len || s[0] == '[') {
			l->st = P_NONE;
			return;
		}
		append(&e->shell, &e->shell_len, SHELL_MAX, s, len, '\n');
	}
}

/* Parse the next n bytes of a log. */
void smklog_log_feed(struct smklog_log *l, const char *buf, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (buf[i] == '\n') {
			do_line(l, l->line, l->len);
			l->len = 0;
		} else if (l->len < SMKLOG_LINE_MAX) {
			l->line[l->len++] = buf[i];
		}
	}
}

/* Is the printed command s (its lines, each ended by '\n') in cmd? */
static bool shell_in(const char *s, size_t len, const char *cmd)
{
	char *t;
	bool in;

	while (len && (s[len - 1] == '\n' || s[len - 1] == ' '))
		len--;
	if (len < 3)
		return false;
	t = strndup(s, len);
	in = t && strstr(cmd, t);
	free(t);
	return in;
}

/* How many of e's file names cmd holds. */
static unsigned files_in(const struct entry *e, const char *cmd)
{
	unsigned n = 0;

	for (const char *f = e->files; f && *f;) {
		const char *end = strchr(f, '\n');
		size_t len = end ? (size_t)(end - f) : strlen(f);

		if (len >= 2) {
			char *t = strndup(f, len);

			n += t && strstr(cmd, t);
			free(t);
		}
		f += len + !!end;
	}
	return n;
}

/* The job whose command cmd is (see smklog.h). */
bool smklog_log_match(struct smklog_log *l, const char *cmd,
		      struct rules_engine_job *out)
{
	long best = -1, only = -1;
	unsigned score = 0, pending = 0;

	for (size_t i = 0; i < l->n; i++) {
		const struct entry *e = &l->v[i];
		unsigned s;

		/* cluster mode: only local rules run here */
		if (e->matched || (l->remote && !e->local))
			continue;
		pending++;	/* started, finished or not, not given */
		only = (long)i;
		s = files_in(e, cmd);
		if (e->shell && shell_in(e->shell, e->shell_len, cmd))
			s += 1000;
		if (s > score) {
			score = s;
			best = (long)i;
		}
	}
	if (best < 0 && pending == 1 && !l->remote)
		best = only;
	if (best < 0)
		return false;
	memset(out, 0, sizeof(*out));
	util_strlcpy(out->rule, l->v[best].rule, sizeof(out->rule));
	util_strlcpy(out->jobid, l->v[best].jobid, sizeof(out->jobid));
	util_strlcpy(out->wildcards, l->v[best].wild, sizeof(out->wildcards));
	if (l->v[best].finished)
		drop(l, (size_t)best);	/* done with */
	else
		l->v[best].matched = true;
	return true;
}

/* ---- the logs of Snakemake processes ---------------------------------------- */

/* A new follower. */
int smklog_new(struct smklog **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

/* Close and free what an engine holds. */
static void engine_clear(struct engine *e)
{
	if (e->fd >= 0)
		close(e->fd);
	smklog_log_free(e->log);
	memset(e, 0, sizeof(*e));
	e->fd = -1;
}

/* Free the follower. */
void smklog_free(struct smklog *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		engine_clear(&s->e[i]);
	free(s);
}

/* Name the file about to be touched (see smklog.h). */
void smklog_on_file(struct smklog *s,
		    void (*fn)(void *ctx, uint32_t pid, uint64_t start_ns,
			       uint32_t uid, const char *path),
		    void *ctx)
{
	s->on_file = fn;
	s->ctx = ctx;
}

/* Tell the caller which file (e's) the next call may block on. */
static void touching(struct smklog *s, const struct engine *e)
{
	if (s->on_file)
		s->on_file(s->ctx, e->pid, e->start_ns, e->uid, e->path);
}

/* Is path a Snakemake log (".../.snakemake/log/NAME.snakemake.log")? */
static bool log_path(const char *path, size_t len)
{
	static const char tail[] = ".snakemake.log";
	const char *dir = strstr(path, "/.snakemake/log/");

	return dir && len > sizeof(tail) && !strchr(dir + 16, '/') &&
	       !strcmp(path + len - (sizeof(tail) - 1), tail);
}

/* The Snakemake log among e's open files, opened for reading into
 * e->fd (-1: none): a regular file owned by e's user; its path in
 * e->path, its name without the suffix in e->run. */
static void find_log(struct smklog *s, struct engine *e)
{
	char dir[48], *path = e->path;
	struct dirent *d;
	unsigned seen = 0;
	DIR *fds;

	snprintf(dir, sizeof(dir), "/proc/%u/fd", e->pid);
	fds = opendir(dir);
	if (!fds)
		return;
	while (e->fd < 0 && seen++ < FDS_MAX && (d = readdir(fds))) {
		struct stat st;
		ssize_t n;
		int fd;

		if (d->d_name[0] == '.')
			continue;
		/* procfs: the link's text, without asking the file system */
		n = readlinkat(dirfd(fds), d->d_name, path, sizeof(e->path) - 1);
		if (n <= 0 || n >= (ssize_t)sizeof(e->path) - 1)
			continue;
		path[n] = '\0';
		if (!log_path(path, (size_t)n))
			continue;
		/* the open and the fstat go to the file's file system */
		touching(s, e);
		fd = openat(dirfd(fds), d->d_name,
			    O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		if (fd >= 0 && (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
				st.st_uid != e->uid)) {
			close(fd);
			fd = -1;
		}
		if (fd >= 0) {
			const char *b = strrchr(path, '/') + 1;

			snprintf(e->run, sizeof(e->run), "%.*s",
				 (int)(strlen(b) - 14), b);
			e->fd = fd;
		}
	}
	closedir(fds);
}

/* The engine (pid, start_ns) of user uid, made when new (the least
 * recently used one goes when all are taken); NULL when out of memory. */
static struct engine *engine_of(struct smklog *s, uint32_t pid,
				uint64_t start_ns, uint32_t uid)
{
	struct engine *e = NULL;

	for (size_t i = 0; i < s->n; i++)
		if (s->e[i].pid == pid && s->e[i].start_ns == start_ns)
			e = &s->e[i];
	if (!e) {
		if (s->n < SMKLOG_ENGINES_MAX) {
			e = &s->e[s->n++];
			e->fd = -1;
			e->log = NULL;
		} else {
			e = &s->e[0];
			for (size_t i = 1; i < s->n; i++)
				if (s->e[i].used < e->used)
					e = &s->e[i];
		}
		engine_clear(e);
		e->pid = pid;
		e->start_ns = start_ns;
		e->uid = uid;
		if (smklog_log_new(&e->log))
			return NULL;
	}
	e->used = ++s->clock;
	return e;
}

/* Read what the log has gained since the last time. */
static void read_more(struct engine *e)
{
	char buf[65536];
	size_t total = 0;
	ssize_t n;

	while (total < SMKLOG_READ_MAX &&
	       (n = pread(e->fd, buf, sizeof(buf), e->off)) > 0) {
		smklog_log_feed(e->log, buf, (size_t)n);
		e->off += n;
		total += (size_t)n;
	}
}

/* The job of cmd run by the Snakemake process pid (see smklog.h). */
bool smklog_job(struct smklog *s, uint32_t pid, uint64_t start_ns,
		uint32_t uid, const char *cmd, struct rules_engine_job *out)
{
	struct engine *e = engine_of(s, pid, start_ns, uid);
	uint64_t now = util_now_ns(CLOCK_MONOTONIC);

	if (!e)
		return false;
	if (e->fd < 0 && (!e->searched_ns || now - e->searched_ns >= RETRY_NS)) {
		e->searched_ns = now;
		find_log(s, e);
	}
	if (e->fd < 0)
		return false;
	touching(s, e);
	read_more(e);
	if (!smklog_log_match(e->log, cmd, out))
		return false;
	util_strlcpy(out->run, e->run, sizeof(out->run));
	return true;
}

/* Look for the log of a new engine until it is found (see smklog.h). */
void smklog_watch(struct smklog *s, uint32_t pid, uint64_t start_ns,
		  uint32_t uid)
{
	struct engine *e = engine_of(s, pid, start_ns, uid);
	uint64_t now = util_now_ns(CLOCK_MONOTONIC);

	if (!e || e->fd >= 0)
		return;
	e->watch_until = now + WATCH_FOR_NS;
	e->searched_ns = now;
	find_log(s, e);
}

/* The searches of watched engines that are due (see smklog.h). */
int smklog_poll(struct smklog *s)
{
	uint64_t now = util_now_ns(CLOCK_MONOTONIC), next = UINT64_MAX;

	for (size_t i = 0; i < s->n; i++) {
		struct engine *e = &s->e[i];

		if (e->fd >= 0 || now >= e->watch_until) {
			e->watch_until = 0;
			continue;
		}
		if (now - e->searched_ns >= WATCH_NS) {
			e->searched_ns = now;
			find_log(s, e);
			now = util_now_ns(CLOCK_MONOTONIC);
		}
		if (e->fd < 0 && e->searched_ns + WATCH_NS < next)
			next = e->searched_ns + WATCH_NS;
	}
	if (next == UINT64_MAX)
		return -1;
	return next <= now ? 0 : (int)((next - now + 999999) / 1000000);
}

/* Forget the engine (pid, start_ns). */
void smklog_forget(struct smklog *s, uint32_t pid, uint64_t start_ns)
{
	for (size_t i = 0; i < s->n; i++) {
		if (s->e[i].pid != pid || s->e[i].start_ns != start_ns)
			continue;
		engine_clear(&s->e[i]);
		s->e[i] = s->e[--s->n];
		return;
	}
}

/* ---- the reader process ------------------------------------------------------ */

/* The reader's socket, and the file it named last. */
struct reader {
	int fd;
	uint32_t pid;
	uint64_t start_ns;
	char path[4096];
};

/* Send one message; the agent reads them (a full socket waits). */
static void reader_send(struct reader *r, const struct smklog_msg *m,
			size_t len)
{
	while (send(r->fd, m, len, MSG_NOSIGNAL) < 0 && errno == EINTR)
		;
}

/* smklog_on_file's callback: name the file unless named last. */
static void reader_file(void *ctx, uint32_t pid, uint64_t start_ns,
			uint32_t uid, const char *path)
{
	struct reader *r = ctx;
	static struct smklog_msg m;

	if (pid == r->pid && start_ns == r->start_ns && !strcmp(path, r->path))
		return;
	r->pid = pid;
	r->start_ns = start_ns;
	util_strlcpy(r->path, path, sizeof(r->path));
	memset(&m, 0, sizeof(m));
	m.kind = SMKLOG_MSG_FILE;
	m.pid = pid;
	m.start_ns = start_ns;
	m.uid = uid;
	util_strlcpy(m.path, path, sizeof(m.path));
	reader_send(r, &m, offsetof(struct smklog_msg, path) +
			   strlen(m.path) + 1);
}

/* Answer one request of n bytes in buf (buf[n] may be written). */
static void reader_request(struct smklog *s, struct reader *r, char *buf,
			   size_t n)
{
	static struct smklog_msg m;
	struct smklog_req q;

	if (n < sizeof(q))
		return;
	memcpy(&q, buf, sizeof(q));
	buf[n] = '\0';
	if (q.op == SMKLOG_OP_FORGET) {
		smklog_forget(s, q.pid, q.start_ns);
	} else if (q.op == SMKLOG_OP_WATCH) {
		smklog_watch(s, q.pid, q.start_ns, q.uid);
	} else if (q.op == SMKLOG_OP_JOB) {
		memset(&m, 0, sizeof(m));
		m.kind = SMKLOG_MSG_ANSWER;
		m.seq = q.seq;
		m.found = smklog_job(s, q.pid, q.start_ns, q.uid,
				     buf + sizeof(q), &m.job);
		reader_send(r, &m, offsetof(struct smklog_msg, path));
	}
}

/* The reader (see smklog.h). */
int smklog_reader_main(int fd)
{
	static char buf[sizeof(struct smklog_req) + SMKLOG_CMD_MAX + 1];
	struct rlimit rl = { SMKLOG_READER_MEM, SMKLOG_READER_MEM };
	struct reader r = { .fd = fd };
	struct smklog *s = NULL;
	sigset_t none;

	/* the agent's signal mask and descriptors are not the reader's */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() == 1)
		return 0;	/* the agent is gone already */
	if (fd != 0) {
		if (dup2(fd, 0) < 0)
			return 1;
		r.fd = fd = 0;
	}
	/* none of the agent's descriptors stays open in a stuck reader */
	if (close_range(3, ~0u, 0))
		return 1;
	setrlimit(RLIMIT_DATA, &rl);
	if (smklog_new(&s))
		return 1;
	smklog_on_file(s, reader_file, &r);
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t n;

		/* the watched engines' searches between the requests */
		if (poll(&pfd, 1, smklog_poll(s)) <= 0)
			continue;
		n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			break;
		reader_request(s, &r, buf, (size_t)n);
	}
	smklog_free(s);
	return 0;
}
