/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * query.h - report, export, rightsize and cost for users who may not read
 * the store (the protocol: queryproto.h): the jobtrace command's two
 * sides of it, the child that answers for the agent (jobtrace
 * --serve-query) and the CLI that asks and decodes the framed reply.
 */
#ifndef JOBTRACE_QUERY_H
#define JOBTRACE_QUERY_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "control.h"
#include "queryproto.h"
#include "report.h"

/*
 * Check a report, export, rightsize or cost request and turn it into a
 * query by the command table (qcmd.h, the CLI's check too): fields job,
 * run, pipeline, since (any --since form; now for relative ones), pid,
 * format, no_tree, by, as the command's entry allows; exactly one
 * selector.  Returns 0, or -EINVAL with *why set (a static message).
 * q keeps pointers into req.
 */
int query_parse(const struct control_req *req, double now,
		struct report_query *q, enum report_format *fmt,
		const char **why);
/*
 * Answer cmd (report, export, rightsize or cost) for q over the open store
 * st (where names it in messages) in format, the command's --format word
 * (NULL: its default), on out.  The one dispatch of the CLI and the
 * agent's child.  Returns 0 or -errno.
 */
int query_answer(struct store *st, const char *where, const char *cmd,
		 const struct report_query *q, const char *format, FILE *out);
/*
 * The answering child: argv as query_server_serve() makes it (jobtrace
 * --serve-query AGENT STORE WHO CMD FIELD=VALUE..., AGENT the agent's
 * pid), the connection on stdin; returns the exit status.
 */
int query_child_main(int argc, char **argv);

/*
 * The CLI's side: ask the agent at socket_path for the report, export or
 * rightsize or cost (cmd) of q in format (its --format word), copy the
 * output to out and the messages to err as they come.  Returns the exit
 * status the agent's child reported, 1 (with a message on err) for a
 * refused or cut reply, or -errno when the agent cannot be reached
 * (nothing printed).
 */
int query_request(const char *socket_path, const char *cmd,
		  const struct report_query *q, const char *format,
		  FILE *out, FILE *err);
/* The request line of cmd for q in format ("top<TAB>run=R<TAB>format=
 * json"), with follow=SECONDS when follow > 0 (a top view that stays
 * open): 0, or -ENAMETOOLONG when it does not fit in len. */
int query_request_line(const char *cmd, const struct report_query *q,
		       const char *format, double follow, char *line,
		       size_t len);

/* Decoder of a reply, for query_request() and its tests. */
struct query_reply {
	FILE *out, *err;
	int state;
	char line[512];
	size_t llen;
	uint64_t left;		/* bytes of the current frame */
	FILE *dst;
	int status;		/* the "x" frame's, or -1 */
	char error[512];	/* an "error ..." reply, without "error " */
	/* a followed view's "f STATUS": one whole answer was written */
	void (*on_frame)(struct query_reply *r, int status);
	void *arg;		/* the caller's, for on_frame */
};

/* Start decoding; frames go to out and err. */
void query_reply_init(struct query_reply *r, FILE *out, FILE *err);
/* Feed n bytes of the reply; -EPROTO once it is malformed. */
int query_reply_feed(struct query_reply *r, const char *buf, size_t n);
/*
 * At the end of the reply: the exit status it carried, -EBUSY (or another
 * -errno) for an "error" reply (the message in r->error), -EPROTO for a
 * malformed or cut one.
 */
int query_reply_end(const struct query_reply *r);

#endif
