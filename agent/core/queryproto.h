/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * queryproto.h - a user's report, export, rightsize and cost through the
 * agent: what the agent (query_server.h) and the jobtrace command (the
 * answering child and the asking CLI, query.h) agree on.
 *
 * The store is root's alone.  A user's `jobtrace report`, `export`,
 * `rightsize` and `cost` send their selector and format to the agent
 * ("report<TAB>job=42<TAB>format=text", "cost<TAB>run=r1<TAB>format=csv
 * <TAB>by=task"); the agent checks who asks (struct control_peer, read at
 * accept) and starts a child that answers on the connection: the jobtrace
 * command beside it (jobtrace --serve-query AGENT STORE WHO CMD
 * FIELD=VALUE..., AGENT the agent's pid: a view's child ends with it),
 * so that nothing of the agent (BPF maps, ring buffer, spool, sink threads
 * and their locks) lives on in it and the agent links no report code.  The
 * child checks the request by the command table (qcmd.h), opens the store
 * read-only, answers with the user's uid restriction
 * (struct report_query.uid_only) and exits.  Root, agent.control_group and
 * agent.reader_group see every record.
 *
 * The reply is "ok\n", then frames: "o LEN\n" and LEN bytes of output,
 * "e LEN\n" and LEN bytes of messages, and last "x STATUS\n", the exit
 * status the CLI would have had reading the store itself; or one line
 * "error CMD: WHY" for a bad request, "error busy: ..." over the bounds
 * (QUERY_MAX_CHILDREN, QUERY_MAX_PER_UID).
 *
 * A top request with the field follow=SECONDS (0.5 to 60) is a view
 * that stays open: its child opens the store once and answers again
 * every SECONDS on the same connection, each answer's frames closed by
 * "f STATUS\n", until the reader goes away or the child's life
 * (QUERY_TIMEOUT_S less QUERY_FOLLOW_MARGIN_S) ends with "x 0"; the
 * reader then asks again.  Views have bounds of their own
 * (QUERY_MAX_FOLLOWS, QUERY_MAX_FOLLOWS_PER_UID), so that open views do
 * not keep a user's reports waiting.
 */
#ifndef JOBTRACE_QUERYPROTO_H
#define JOBTRACE_QUERYPROTO_H

#define QUERY_CHILD_ARG "--serve-query"	/* argv[1] of an answering child */
#define QUERY_CLI_NAME "jobtrace"	/* the program that answers */
#define QUERY_MAX_CHILDREN 4		/* answering children at once */
#define QUERY_MAX_PER_UID 2		/* of them for one user */
#define QUERY_TIMEOUT_S 600		/* a child's life; then it is killed */
#define QUERY_SEND_TIMEOUT_S 60		/* a reader that stops reading */
#define QUERY_WAIT_MS 620000		/* the CLI's wait for the next bytes */
#define QUERY_MAX_FOLLOWS 8		/* open top views at once */
#define QUERY_MAX_FOLLOWS_PER_UID 4	/* of them for one user */
/* a view's child ends this long before it would be killed (counted from
 * its start): more than a blocked send may take, so that a slow reader
 * gets "x 0" and asks again rather than a killed child */
#define QUERY_FOLLOW_MARGIN_S (QUERY_SEND_TIMEOUT_S + 20)
/* follow=SECONDS bounds: at most 2 frames a second, so that a user's 4
 * views ask no more of the agent than the 10 requests a second the
 * control socket grants a user */
#define QUERY_FOLLOW_MIN_S 0.5
/* a view slower than this asks a frame at a time: a child's life holds
 * many frames */
#define QUERY_FOLLOW_MAX_S 60.0

/* The requests a child answers (qcmd.h's table has each, in this order). */
#define QUERY_COMMANDS { "report", "export", "rightsize", "cost", "top", \
			 "sweep", "files", NULL }

#endif
