// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cmd_agent.c - the commands that only ask the agent: status, ps, reload.
 */
#include <string.h>

#include "cli.h"

/* Usage of status. */
void cli_help_status(FILE *out)
{
	fprintf(out, "Usage: jobtrace status\n\nAgent health: uptime, events seen and "
		"dropped, records stored, last error.\n");
}

/* Usage of ps. */
void cli_help_ps(FILE *out)
{
	fprintf(out, "Usage: jobtrace ps\n\nTracked processes running now: pid, tool, "
		"job, CPU%%, RSS and I/O rates over the last sample interval.\n");
}

/* Usage of reload. */
void cli_help_reload(FILE *out)
{
	fprintf(out, "Usage: jobtrace reload\n\nMake the agent re-read its configuration and "
		"rules now; a broken rule file is reported with FILE:LINE and the "
		"running rules stay.\n");
}

/* `status`, `ps` and `reload`: no arguments but --help; the request is
 * the command's name. */
int cli_run_agent(struct cli *c, const struct cli_cmd *cmd, int argc,
		  char **argv)
{
	if (cli_help_asked(cmd, argc, argv))
		return 0;
	if (argc > 1) {
		fprintf(stderr, "jobtrace %s: unexpected argument '%s'\n",
			cmd->name, argv[1]);
		return EXIT_USAGE;
	}
	return cli_ask_agent(c, cmd->name);
}
