// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * query.c - report, export, rightsize and cost for users who may not read
 * the store (queryproto.h): the answering child's side (the report code
 * writing framed output to the socket) and the CLI's (the request and the
 * decoding of the framed reply).  The agent's side is query_server.c.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "child.h"
#include "config.h"
#include "log.h"
#include "query.h"
#include "qcmd.h"
#include "store.h"
#include "util.h"

#define FRAME_MAX (1u << 20)	/* the largest frame a reader accepts */

extern char **environ;

/* The value of field key of req, or NULL. */
static const char *req_field(const struct control_req *req, const char *key)
{
	for (size_t i = 0; i < req->n; i++)
		if (!strcmp(req->f[i].key, key))
			return req->f[i].val;
	return NULL;
}

/* Check a report, export, rightsize or cost request and turn it into a
 * query, by the command table (qcmd.h). */
int query_parse(const struct control_req *req, double now,
		struct report_query *q, enum report_format *fmt,
		const char **why)
{
	static char msg[256];
	const struct qcmd *c = qcmd_find(req->cmd);
	struct qcmd_args a = { 0 };

	memset(q, 0, sizeof(*q));
	*fmt = REPORT_TEXT;
	*why = msg;
	if (!c) {
		snprintf(msg, sizeof(msg), "not a report, export, rightsize, cost,"
			 " top or sweep request");
		return -EINVAL;
	}
	for (size_t i = 0; i < req->n; i++)
		if (qcmd_arg(c, QCMD_SOCKET, req->f[i].key, req->f[i].val, now,
			     &a, msg, sizeof(msg)))
			return -EINVAL;
	if (qcmd_done(c, QCMD_SOCKET, &a, msg, sizeof(msg)))
		return -EINVAL;
	*q = a.q;
	if (storeq_format_parse(a.format, fmt))
		*fmt = REPORT_TEXT;	/* rightsize's own words */
	return 0;
}

/* ---- the answering child ---------------------------------------------- */

/* Send all of buf on fd (blocking, bounded by SO_SNDTIMEO). */
static int send_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -errno;
		buf += n;
		len -= n;
	}
	return 0;
}

/* Send one frame: "K LEN\n" and the bytes. */
static int send_frame(int fd, char kind, const char *buf, size_t len)
{
	char head[32];
	int n = snprintf(head, sizeof(head), "%c %zu\n", kind, len);
	int err = send_all(fd, head, (size_t)n);

	return err ? err : send_all(fd, buf, len);
}

/* fopencookie write: the report's output as "o" frames on the socket. */
static ssize_t frame_write(void *cookie, const char *buf, size_t len)
{
	int fd = *(int *)cookie;

	if (len > FRAME_MAX)
		len = FRAME_MAX;
	return send_frame(fd, 'o', buf, len) ? -1 : (ssize_t)len;
}

/* Close every descriptor from 3 on that exec left open. */
static void close_from_3(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		int fd = atoi(e->d_name);

		if (fd > 2 && fd != dirfd(d))
			close(fd);
	}
	closedir(d);
}

/* Send what the child's stderr said since the last time as "e" frames. */
static int send_msgs(int sock, struct util_capture *msgs)
{
	size_t len = 0, off = 0;
	char *said = util_stderr_take(msgs, &len);
	int err = said ? 0 : -1;

	while (!err && off < len) {
		size_t n = len - off < FRAME_MAX ? len - off : FRAME_MAX;

		err = send_frame(sock, 'e', said + off, n);
		off += n;
	}
	free(said);
	return err ? -1 : 0;
}

/* Take top's follow=SECONDS out of req: its seconds, 0 when there is
 * none, -1 when it is not a number in bounds or not a top request. */
static double take_follow(struct control_req *req)
{
	double v;
	char *end;

	for (size_t i = 0; i < req->n; i++) {
		if (strcmp(req->f[i].key, "follow"))
			continue;
		errno = 0;
		v = strtod(req->f[i].val, &end);
		if (strcmp(req->cmd, "top") || errno || end == req->f[i].val ||
		    *end || !(v >= QUERY_FOLLOW_MIN_S && v <= QUERY_FOLLOW_MAX_S))
			return -1;
		memmove(&req->f[i], &req->f[i + 1],
			(req->n - i - 1) * sizeof(req->f[0]));
		req->n--;
		return v;
	}
	return 0;
}

/* The agent that started this child (its pid, as it passed it). */
static pid_t child_agent;

/*
 * A view that stays open (follow=SECONDS): the answer again every delay
 * seconds over the store opened once, each closed by "f STATUS", until
 * the reader closes (1), or the child's life ends at end (0, CLOCK_MONOTONIC
 * ns) or with the agent (0: its frames would say nothing new, and the
 * view, asking again, learns that the agent is gone).
 */
static int follow_frames(int sock, struct util_capture *msgs,
			 struct store *st,
			 const char *path, const struct control_req *req,
			 const struct report_query *q, FILE *out, double delay,
			 uint64_t end)
{
	char head[32];

	for (;;) {
		int status = query_answer(st, path, req->cmd, q,
					  req_field(req, "format"), out) ? 1 : 0;
		struct pollfd p = { .fd = sock, .events = 0 };

		if (fflush(out) || ferror(out) || send_msgs(sock, msgs))
			return 1;	/* the reader went away */
		snprintf(head, sizeof(head), "f %d\n", status);
		if (send_all(sock, head, strlen(head)))
			return 1;
		if (util_now_ns(CLOCK_MONOTONIC) + (uint64_t)(delay * 1e9) >= end)
			return 0;
		/* the reader's close (POLLHUP) ends the view at once */
		if (poll(&p, 1, (int)(delay * 1000)) > 0)
			return 1;
		if (getppid() != child_agent)
			return 0;	/* the agent ended: reparented */
	}
}

/* Answer cmd (report, export, rightsize, cost) for q over st in format. */
int query_answer(struct store *st, const char *where, const char *cmd,
		 const struct report_query *q, const char *format, FILE *out)
{
	const struct qcmd *c = qcmd_find(cmd);

	if (!c)
		return -EINVAL;
	return c->run(st, where, q, format ? format : c->formats[0], out);
}

/* The child's arguments after QUERY_CHILD_ARG, as query_server_serve()
 * passes them. */
enum { ARG_AGENT = 2, ARG_STORE, ARG_WHO, ARG_CMD, ARG_FIELDS };

/* A child started with arguments it cannot use: why, on the agent's
 * stderr (its log: the child's still) and to the reader; exit status 2. */
static int child_misstarted(int sock, const char *why)
{
	char buf[256];

	fprintf(stderr, "jobtrace %s: %s\n", QUERY_CHILD_ARG, why);
	snprintf(buf, sizeof(buf), "error %s: %s\n", QUERY_CHILD_ARG + 2, why);
	send_all(sock, buf, strlen(buf));
	return 2;
}

/*
 * The agent's pid (argv[ARG_AGENT]) into child_agent: the agent passes
 * its own, since a child that took its parent's at its start would take
 * init's when the agent died before then, and never see it go.  0, or -1
 * when the argument is missing or not a pid.
 */
static int take_agent(int argc, char **argv)
{
	char *end;
	long v;

	/* digits as "%d" writes a pid, nothing strtol would skip */
	if (argc <= ARG_AGENT || *argv[ARG_AGENT] < '1' ||
	    *argv[ARG_AGENT] > '9')
		return -1;
	errno = 0;
	v = strtol(argv[ARG_AGENT], &end, 10);
	if (errno || *end || v > INT_MAX)
		return -1;
	child_agent = (pid_t)v;
	return 0;
}

/* The answering child: run the report, export, rightsize or cost, framed
 * on stdin's socket. */
int query_child_main(int argc, char **argv)
{
	struct timeval tv = { .tv_sec = QUERY_SEND_TIMEOUT_S };
	cookie_io_functions_t io = { .write = frame_write };
	static char kv[CONTROL_MAX_FIELDS][CONTROL_MAX_VALUE + 40];
	struct control_req req = { 0 };
	struct report_query q;
	enum report_format fmt;
	struct store *st = NULL;
	struct util_capture msgs;
	int sock = 0, status, fl, gone = 0;
	char buf[16384], own[CONTROL_MAX_VALUE + 32], *end;
	const char *why;
	double follow;
	uint64_t end_ns;
	FILE *out;

	/* a view's life counts from here, as the agent's deadline does */
	end_ns = util_now_ns(CLOCK_MONOTONIC) +
		 (QUERY_TIMEOUT_S - QUERY_FOLLOW_MARGIN_S) * 1000000000ull;
	close_from_3();
	/* say, an agent older than this command, not restarted */
	if (take_agent(argc, argv))
		return child_misstarted(sock, "no agent pid before the store:"
					" restart the agent after an upgrade");
	if (argc < ARG_FIELDS || argc > ARG_FIELDS + CONTROL_MAX_FIELDS)
		return child_misstarted(sock, "wrong number of arguments");
	/* blocking writes with a timeout, whatever the agent set */
	fl = fcntl(sock, F_GETFL);
	if (fl >= 0)
		fcntl(sock, F_SETFL, fl & ~O_NONBLOCK);
	setsockopt(sock, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	/* the report's messages (stderr, the logger) are sent after it */
	if (util_stderr_capture(&msgs))
		return 1;
	log_init("jobtrace", 0, LOG_LVL_WARN);

	req.cmd = argv[ARG_CMD];
	for (int i = ARG_FIELDS; i < argc; i++) {
		char *eq;

		util_strlcpy(kv[req.n], argv[i], sizeof(kv[0]));
		eq = strchr(kv[req.n], '=');
		if (!eq)
			return 2;
		*eq = '\0';
		req.f[req.n].key = kv[req.n];
		req.f[req.n].val = eq + 1;
		req.n++;
	}
	follow = take_follow(&req);
	if (follow < 0) {
		snprintf(buf, sizeof(buf), "error %s: follow must be a number"
			 " of seconds from %g to %g, and only top follows\n",
			 req.cmd, QUERY_FOLLOW_MIN_S, QUERY_FOLLOW_MAX_S);
		send_all(sock, buf, strlen(buf));
		return 2;
	}
	if (query_parse(&req, util_now_ns(CLOCK_REALTIME) / 1e9, &q, &fmt,
			&why)) {
		snprintf(buf, sizeof(buf), "error %s: %s\n", req.cmd, why);
		send_all(sock, buf, strlen(buf));
		return 2;
	}
	if (strcmp(argv[ARG_WHO], "all")) {
		unsigned long uid = strtoul(argv[ARG_WHO], &end, 10);

		if (*end || uid > UINT32_MAX)
			return 2;
		q.uid_only = true;
		q.uid = (uint32_t)uid;
	}
	if (send_all(sock, "ok\n", 3))
		return 1;
	out = fopencookie(&sock, "w", io);
	if (!out)
		return 1;
	setvbuf(out, NULL, _IOFBF, 65536);
	if (store_open(argv[ARG_STORE], true, &st) ||
	    storeq_user_job(st, argv[ARG_STORE], &q, own, sizeof(own)))
		status = 1;
	else if (follow > 0)	/* 0 once its life ended, the reader there */
		status = gone = follow_frames(sock, &msgs, st,
					      argv[ARG_STORE], &req, &q, out,
					      follow, end_ns);
	else
		status = query_answer(st, argv[ARG_STORE], req.cmd, &q,
				      req_field(&req, "format"), out);
	store_close(st);
	status = status ? 1 : 0;
	if (gone || fflush(out) || ferror(out))
		return 1;	/* the reader went away */
	fclose(out);
	if (send_msgs(sock, &msgs))
		return 1;
	snprintf(buf, sizeof(buf), "x %d\n", status);
	send_all(sock, buf, strlen(buf));
	return status;
}

/* ---- the CLI's side ----------------------------------------------------- */

enum { R_FIRST, R_HEAD, R_BODY, R_DONE, R_ERROR, R_BAD };

/* Start decoding; frames go to out and err. */
void query_reply_init(struct query_reply *r, FILE *out, FILE *err)
{
	memset(r, 0, sizeof(*r));
	r->out = out;
	r->err = err;
	r->state = R_FIRST;
	r->status = -1;
}

/* A complete header or first line in r->line: the next state. */
static int on_line(struct query_reply *r)
{
	unsigned long long len;
	char *end;

	if (r->state == R_FIRST) {
		if (!strcmp(r->line, "ok"))
			return R_HEAD;
		if (!strncmp(r->line, "error ", 6)) {
			util_strlcpy(r->error, r->line + 6, sizeof(r->error));
			return R_ERROR;
		}
		return R_BAD;
	}
	if (strlen(r->line) < 3 || r->line[1] != ' ' ||
	    r->line[2] < '0' || r->line[2] > '9')
		return R_BAD;
	errno = 0;
	len = strtoull(r->line + 2, &end, 10);
	if (errno || *end)
		return R_BAD;
	switch (r->line[0]) {
	case 'x':
		if (len > 255)
			return R_BAD;
		r->status = (int)len;
		return R_DONE;
	case 'f':
		if (len > 255)
			return R_BAD;
		if (r->on_frame)
			r->on_frame(r, (int)len);
		return R_HEAD;
	case 'o':
	case 'e':
		if (len > FRAME_MAX)
			return R_BAD;
		r->dst = r->line[0] == 'o' ? r->out : r->err;
		r->left = len;
		return len ? R_BODY : R_HEAD;
	default:
		return R_BAD;
	}
}

/* Feed n bytes of the reply. */
int query_reply_feed(struct query_reply *r, const char *buf, size_t n)
{
	while (n && r->state != R_BAD) {
		if (r->state == R_ERROR)
			return 0;	/* one line said it all */
		if (r->state == R_DONE) {
			r->state = R_BAD;	/* nothing follows the status */
			break;
		}
		if (r->state == R_BODY) {
			size_t k = n < r->left ? n : (size_t)r->left;

			fwrite(buf, 1, k, r->dst);
			buf += k;
			n -= k;
			r->left -= k;
			if (!r->left)
				r->state = R_HEAD;
			continue;
		}
		/* a line: the first one, or a frame header */
		if (*buf == '\n') {
			r->line[r->llen] = '\0';
			r->llen = 0;
			r->state = on_line(r);
		} else if (r->llen + 1 >= (r->state == R_FIRST ?
					   sizeof(r->line) : 32)) {
			r->state = R_BAD;
		} else {
			r->line[r->llen++] = *buf;
		}
		buf++;
		n--;
	}
	return r->state == R_BAD ? -EPROTO : 0;
}

/* The reply's outcome once it ended. */
int query_reply_end(const struct query_reply *r)
{
	if (r->state == R_DONE)
		return r->status;
	if (r->state == R_ERROR)
		return strncmp(r->error, "busy", 4) ? -EPERM : -EBUSY;
	return -EPROTO;
}

/* fopencookie write: the raw reply into the decoder. */
static ssize_t reply_write(void *cookie, const char *buf, size_t len)
{
	query_reply_feed(cookie, buf, len);
	return (ssize_t)len;
}

/* The request line for cmd, q and format (query.h). */
int query_request_line(const char *cmd, const struct report_query *q,
		       const char *format, double follow, char *line,
		       size_t len)
{
	int n;

	if (q->job && *q->job)
		n = snprintf(line, len, "%s\tjob=%s", cmd, q->job);
	else if (q->run && *q->run)
		n = snprintf(line, len, "%s\trun=%s", cmd, q->run);
	else if (q->pipeline && *q->pipeline)
		n = snprintf(line, len, "%s\tpipeline=%s", cmd,
			     q->pipeline);
	else if (q->pid)
		n = snprintf(line, len, "%s\tpid=%lld", cmd,
			     (long long)q->pid);
	else
		n = snprintf(line, len, "%s\tsince=@%.6f", cmd,
			     q->since);
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	n += snprintf(line + n, len - n, "\tformat=%s%s%s%s%s%s", format,
		      q->no_tree ? "\tno_tree=1" : "", q->by ? "\tby=" : "",
		      q->by ? q->by : "", q->task ? "\ttask=" : "",
		      q->task ? q->task : "");
	if (n >= 0 && (size_t)n < len && follow > 0)
		n += snprintf(line + n, len - n, "\tfollow=%g", follow);
	return n >= 0 && (size_t)n < len ? 0 : -ENAMETOOLONG;
}

/* Ask the agent for a report, export, rightsize or cost and copy its
 * answer. */
int query_request(const char *socket_path, const char *cmd,
		  const struct report_query *q, const char *format,
		  FILE *out, FILE *err)
{
	cookie_io_functions_t io = { .write = reply_write };
	struct query_reply r;
	char line[2048];
	int rc;
	FILE *dec;

	rc = query_request_line(cmd, q, format, 0, line, sizeof(line));
	if (rc)
		return rc;
	query_reply_init(&r, out, err);
	dec = fopencookie(&r, "w", io);
	if (!dec)
		return -ENOMEM;
	setvbuf(dec, NULL, _IONBF, 0);
	rc = control_request(socket_path, line, QUERY_WAIT_MS, dec);
	fclose(dec);
	if (rc)
		return rc;
	rc = query_reply_end(&r);
	if (rc >= 0)
		return rc;
	util_printable(r.error);
	if (rc == -EPROTO)
		fprintf(err, "jobtrace %s: the agent's reply ended early or is"
			" malformed (the agent stopped, or its child was killed"
			" after %d s)\n", cmd, QUERY_TIMEOUT_S);
	else
		fprintf(err, "jobtrace %s: agent replied: %s\n", cmd, r.error);
	return 1;
}
