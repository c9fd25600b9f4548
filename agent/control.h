/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * control.h - the agent's Unix control socket.  One request line in, reply
 * lines out, then the server closes.  Requests: "status", "ps", "reload",
 * "job-start", "job-end", "job-update" (the last four need root or the
 * control group), "report" and "export" (answered by a child, framed: see
 * query.h).  Replies start with "ok" or "error MESSAGE".
 */
#ifndef JOBTRACE_CONTROL_H
#define JOBTRACE_CONTROL_H

#include <stddef.h>
#include <stdio.h>

#define CONTROL_MAX_FIELDS 32
#define CONTROL_MAX_VALUE 511

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
/* Send one request and copy the whole reply to out; returns 0 or -errno. */
int control_request(const char *path, const char *request, int timeout_ms,
		    FILE *out);

#endif
