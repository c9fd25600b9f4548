/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * query_server.h - the agent's side of a user's report, export, rightsize
 * or cost (the protocol: queryproto.h): who may see every record, and a
 * bounded set of children that answer, each the jobtrace command found
 * beside the agent, so that the agent links none of the report code.
 */
#ifndef JOBTRACE_QUERY_SERVER_H
#define JOBTRACE_QUERY_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "control.h"
#include "queryproto.h"

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
 * The jobtrace command that answers for the agent whose program is self:
 * the first of SELF_DIR/jobtrace, SELF_DIR/../bin/jobtrace and
 * bindir/jobtrace that exists, when root may run it (a regular executable
 * file, root's or the agent's user's, not writable by group or others, in
 * folders only root can change); its real path in out.  Returns 0,
 * -ENOENT when there is none, -EPERM for one that is not root's alone, or
 * -errno; why says which paths and what is wrong.
 */
int query_server_find_cli(const char *self, const char *bindir, char *out,
			  size_t len, char *why, size_t wlen);
/* Is cmd a request a child answers (QUERY_COMMANDS)? */
bool query_server_takes(const char *cmd);
/*
 * Answer a "report", "export", "rightsize" or "cost" request on fd from
 * a child (the jobtrace command checks the request).  Returns 0 when the
 * child took the connection (nothing was written to out; the caller
 * closes its own descriptor and forgets it), or -errno with one "error
 * ..." line written to out (not such a request, busy, no child).
 */
int query_server_serve(struct query_server *qs, int fd,
		       const struct control_peer *p,
		       const struct control_req *req, FILE *out);
/* Reap the children that ended, kill those past QUERY_TIMEOUT_S. */
void query_server_reap(struct query_server *qs, uint64_t now_ns);

#endif
