// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cli.c - what jobtrace's commands share: talking to the agent, printing
 * its replies safely, checking stdout, a hook's failure line.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "cli.h"
#include "control.h"
#include "util.h"

/* Print text line by line, each made safe for a terminal. */
void cli_put_lines(FILE *out, char *text)
{
	while (*text) {
		char *nl = strchr(text, '\n');

		if (nl)
			*nl = '\0';
		fprintf(out, "%s\n", util_printable(text));
		text = nl ? nl + 1 : text + strlen(text);
	}
}

/* Send one request to the agent: its whole reply into *reply (the caller
 * frees it), or -errno and *reply NULL. */
int cli_request_text(struct cli *c, const char *request, int timeout_ms,
			char **reply)
{
	size_t len = 0;
	FILE *mem;
	int err;

	*reply = NULL;
	mem = open_memstream(reply, &len);
	if (!mem)
		return -ENOMEM;
	err = control_request(config_socket_path(&c->cfg), request, timeout_ms,
			      mem);
	if (fclose(mem) && !err)
		err = -ENOMEM;
	if (err) {
		free(*reply);
		*reply = NULL;
	}
	return err;
}

/* Ask the agent and print its reply without the leading "ok" line. */
int cli_ask_agent(struct cli *c, const char *request)
{
	const char *path = config_socket_path(&c->cfg);
	char *reply = NULL;
	int err = cli_request_text(c, request, 5000, &reply);

	if (err) {
		fprintf(stderr,
			"jobtrace: cannot reach jobtraced at %s: %s (is the agent running?)\n",
			path, strerror(-err));
		return 1;
	}
	if (strncmp(reply, "ok\n", 3) != 0) {
		fputs("jobtrace: agent replied: ", stderr);
		cli_put_lines(stderr, reply);
		free(reply);
		return 1;
	}
	cli_put_lines(stdout, reply + 3);
	free(reply);
	return 0;
}

/* After printing: 0, or 1 with a message when stdout failed. */
int cli_stdout_done(const char *who)
{
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "%s: writing output: %s\n", who, strerror(errno));
		return 1;
	}
	return 0;
}

/* Report a hook's failure: one line on stderr and in syslog. */
void cli_hook_log(const char *cmd, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "jobtrace %s: %s\n", cmd, msg);
	openlog("jobtrace", LOG_PID, LOG_DAEMON);
	syslog(LOG_WARNING, "%s: %s", cmd, msg);
	closelog();
}
