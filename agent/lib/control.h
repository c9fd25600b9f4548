/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * control.h - the agent's Unix control socket.  One request line in, reply
 * lines out, then the server closes (see control_server below).  Requests:
 * "status", "ps", "flush" (what ended goes to the sinks now; the reply
 * says how far the store is), "reload", "job-start", "job-end",
 * "job-update" (the last four need root or the control group, but for a
 * user's own processes and jobs: jobtie.h), "report" and "export"
 * (answered by
 * a child that takes the connection over, framed: see query.h).  Replies
 * start with "ok" or "error MESSAGE".
 */
#ifndef JOBTRACE_CONTROL_H
#define JOBTRACE_CONTROL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define CONTROL_MAX_FIELDS 32
#define CONTROL_MAX_VALUE 511
#define CONTROL_LINE_MAX 8192		/* a request line, newline included */
#define CONTROL_READ_MS 5000		/* from accept to a complete line */
#define CONTROL_WRITE_MS 5000		/* from the reply to its last byte */
#define CONTROL_RESERVE 16		/* slots only privileged peers use */
#define CONTROL_MAX_GROUPS 256

/* A request: a command word and key=value fields, split in place. */
struct control_req {
	const char *cmd;
	size_t n;
	struct {
		const char *key;
		const char *val;
	} f[CONTROL_MAX_FIELDS];
};

/*
 * Split "cmd<TAB>key=value<TAB>..." in place.  Keys are [a-z_], values have
 * no control characters and at most CONTROL_MAX_VALUE bytes, no key
 * repeats.  Returns 0, or -EINVAL with *why set to what is wrong.
 */
int control_parse(char *line, struct control_req *req, const char **why);
/* The value of key, or NULL. */
const char *control_get(const struct control_req *req, const char *key);

/* Create, bind and listen on path (mode 0666: writers are checked by
 * credentials); returns fd or -errno. */
int control_listen(const char *path);

/*
 * The request line of one connection as it arrives: bytes accumulate in
 * buf; control_line_take() says when a line is complete.
 */
struct control_line {
	char buf[CONTROL_LINE_MAX];
	size_t len;
};

/*
 * Is a request line complete in l (eof: the peer sent all it will)?  1: yes,
 * l->buf is the line, NUL-terminated, without "\r\n"; 0: wait for more;
 * -EMSGSIZE: CONTROL_LINE_MAX bytes and no newline; -ENODATA: eof and
 * nothing sent.  A last line without a newline counts at eof.
 */
int control_line_take(struct control_line *l, bool eof);

/*
 * The non-blocking server.  Every connection has its own slot, is in the
 * server's epoll set (control_server_fd(), watched by the agent's loop) and
 * is closed at its deadline: CONTROL_READ_MS for the request line,
 * CONTROL_WRITE_MS for the reply.  Peers without control rights are bounded
 * per uid and in total; privileged peers (root, control group) use
 * CONTROL_RESERVE more slots and, when even those are taken, the oldest
 * unprivileged connection is closed for them.
 */
struct control_server;

/*
 * Who is on the other end of a connection, as it connected (SO_PEERCRED,
 * SO_PEERGROUPS): read once at accept, it serves the bounds, who may
 * change jobs and what a report shows.
 */
struct control_peer {
	uid_t uid;
	gid_t gid;
	pid_t pid;
	size_t ngroups;
	gid_t groups[CONTROL_MAX_GROUPS];	/* supplementary */
};

/* Read the peer of a connected Unix socket; -errno if it cannot be known. */
int control_peer_get(int fd, struct control_peer *p);
/* Is the peer in group gid, as its primary or a supplementary group? */
bool control_peer_in(const struct control_peer *p, gid_t gid);

/* One accepted connection. */
struct control_conn {
	int fd;			/* -1: slot free */
	uint32_t gen;		/* tells a reused slot from its former use */
	struct control_peer peer;
	/* root or control group at accept: decides the bounds and whether
	 * the peer may change jobs and reload (a reload's groups apply to
	 * the connections accepted after it) */
	bool privileged;
	bool writing;		/* the request is handled; sending the reply */
	uint64_t since_ns;	/* accepted, CLOCK_MONOTONIC */
	uint64_t deadline_ns;	/* of the current phase, CLOCK_MONOTONIC */
	struct control_line in;
	char *out;		/* the reply, sent from out_off */
	size_t out_len, out_off;
};

/* Bounds for peers without control rights (agent.max_connections*). */
struct control_limits {
	unsigned per_user;
	unsigned total;
};

/* What the server calls back into the agent. */
struct control_ops {
	/* The request line of c is complete: write the reply into out.  May
	 * hand c's fd over with control_server_take() (out is dropped then). */
	void (*request)(void *ctx, struct control_server *srv,
			struct control_conn *c, char *line, FILE *out);
	/* May the peer change jobs (root, control group)?  Asked once, at
	 * accept; the answer is c->privileged. */
	bool (*privileged)(void *ctx, const struct control_peer *p);
	void *ctx;
};

/* What control_admit() decided for a new peer. */
enum control_admit {
	CONTROL_ADMIT,		/* into the free slot *slot */
	CONTROL_EVICT,		/* after closing the connection in *slot */
	CONTROL_FULL_USER,	/* the uid has per_user connections open */
	CONTROL_FULL,		/* unprivileged peers have total open */
};

/*
 * Where a new peer goes in the table conns[0..cap) (cap counts the
 * CONTROL_RESERVE slots): the bounds hold for unprivileged peers, a
 * privileged one evicts the oldest unprivileged connection (or the oldest
 * at all) when no slot is free.
 */
enum control_admit control_admit(const struct control_conn *conns,
				 size_t cap, const struct control_limits *lim,
				 uid_t uid, bool privileged, size_t *slot);

/* A server over the listening socket lfd (owned from now on). */
int control_server_new(int lfd, const struct control_limits *lim,
		       const struct control_ops *ops,
		       struct control_server **out);
/* New bounds (reload); open connections stay. Returns 0 or -ENOMEM. */
int control_server_set_limits(struct control_server *s,
			      const struct control_limits *lim);
/* The fd to watch for readability: the server's own epoll set. */
int control_server_fd(const struct control_server *s);
/* Accept, read, handle and reply to whatever is ready; never blocks. */
void control_server_dispatch(struct control_server *s);
/* Close the connections past their deadline (call every tick). */
void control_server_expire(struct control_server *s, uint64_t now_ns);
/* Take c's fd out of the server without closing it: the caller (a forked
 * child serving a long request) owns it now.  Returns the fd. */
int control_server_take(struct control_server *s, struct control_conn *c);
/* Close every connection and the listening socket; accepts NULL. */
void control_server_free(struct control_server *s);
/* Connect to the agent at path and send one request line, shutting our
 * side for writing: the connected non-blocking socket, or -errno.  A reply
 * that goes on (top's follow=SECONDS) is read from it. */
int control_open(const char *path, const char *request, int timeout_ms);
/* Send one request and copy the whole reply to out; returns 0 or -errno. */
int control_request(const char *path, const char *request, int timeout_ms,
		    FILE *out);

#endif
