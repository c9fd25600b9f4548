/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * control.h - the agent's Unix control socket.  One request line in, reply
 * lines out, then the server closes.  Requests: "status", "ps".
 * Replies start with "ok" or "error MESSAGE".
 */
#ifndef JOBTRACE_CONTROL_H
#define JOBTRACE_CONTROL_H

#include <stddef.h>
#include <stdio.h>

/* Create, bind and listen on path (mode 0660); returns fd or -errno. */
int control_listen(const char *path);
/* Send one request and copy the whole reply to out; returns 0 or -errno. */
int control_request(const char *path, const char *request, int timeout_ms,
		    FILE *out);

#endif
