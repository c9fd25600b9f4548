/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * query.h - report, export, rightsize and cost for users who may not read
 * the store.
 *
 * The store is root's alone.  A user's `jobtrace report`, `export` and
 * `cost` send their selector and format to the agent ("report<TAB>job=42
 * <TAB>format=text", "cost<TAB>run=r1<TAB>format=csv<TAB>by=task"); the
 * agent checks who asks (struct control_peer, read at
 * accept) and starts a child that answers on the connection: its own image
 * (/proc/self/exe --serve-query), so that nothing of the agent (BPF maps,
 * ring buffer, spool, sink threads and their locks) lives on in it.  The
 * child opens the store read-only, runs the report, export or cost code
 * with the user's uid restriction (struct report_query.uid_only) and exits.
 * Root, agent.control_group and agent.reader_group see every record.
 *
 * The reply is "ok\n", then frames: "o LEN\n" and LEN bytes of output,
 * "e LEN\n" and LEN bytes of messages, and last "x STATUS\n", the exit
 * status the CLI would have had reading the store itself.  Over the
 * bounds (QUERY_MAX_CHILDREN, QUERY_MAX_PER_UID) the reply is one line
 * "error busy: ...".
 */
#ifndef JOBTRACE_QUERY_H
#define JOBTRACE_QUERY_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "control.h"
#include "report.h"

#define QUERY_CHILD_ARG "--serve-query"	/* argv[1] of an answering child */
#define QUERY_MAX_CHILDREN 4		/* answering children at once */
#define QUERY_MAX_PER_UID 2		/* of them for one user */
#define QUERY_TIMEOUT_S 600		/* a child's life; then it is killed */
#define QUERY_SEND_TIMEOUT_S 60		/* a reader that stops reading */
#define QUERY_WAIT_MS 620000		/* the CLI's wait for the next bytes */

struct jt_config;
struct query_server;

/* A server with no groups and no children. */
int query_server_new(struct query_server **out);
/* Free; children still running finish on their own.  Accepts NULL. */
void query_server_free(struct query_server *qs);
/*
 * Take the store path and the two groups that see everything from cfg
 * (at start and at each reload).  A group name that is not a group is
 * logged and grants nothing.
 */
int query_server_configure(struct query_server *qs,
			   const struct jt_config *cfg);
/* May the peer change jobs and reload (root or control group)? */
bool query_server_may_control(const struct query_server *qs,
			      const struct control_peer *p);
/* Does the peer see every user's records (root, control or reader group)? */
bool query_server_sees_all(const struct query_server *qs,
			   const struct control_peer *p);
/*
 * Answer a "report", "export" or "cost" request on fd from a child.  Returns 0
 * when the child took the connection (nothing was written to out; the
 * caller closes its own descriptor and forgets it), or -errno with one
 * "error ..." line written to out (a bad request, busy, no child).
 */
int query_serve(struct query_server *qs, int fd, const struct control_peer *p,
		const struct control_req *req, FILE *out);
/* Reap the children that ended, kill those past QUERY_TIMEOUT_S. */
void query_server_reap(struct query_server *qs, uint64_t now_ns);

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
/* The answering child: argv as query_serve() makes it; returns the status. */
/*
 * Answer cmd (report, export, rightsize or cost) for q over the open store
 * st (where names it in messages) in format, the command's --format word
 * (NULL: its default), on out.  The one dispatch of the CLI and the
 * agent's child.  Returns 0 or -errno.
 */
int query_answer(struct store *st, const char *where, const char *cmd,
		 const struct report_query *q, const char *format, FILE *out);
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
