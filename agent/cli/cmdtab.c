// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cmdtab.c - the table of jobtrace's commands, and the usage, synopses
 * and command list made from it (cli.h).
 */
#include <string.h>

#include "cli.h"

const struct cli_cmd cli_cmds[] = {
	{ "status", "status", "agent health, counters, store", 0,
	  cli_help_status, cli_run_agent },
	{ "ps", "ps", "tracked processes running now", 0, cli_help_ps,
	  cli_run_agent },
	{ "report", NULL, "what the processes did: summaries by task and tool,"
	  " the tree", 0, cli_help_report, cli_run_query },
	{ "export", NULL, "the records, one JSON object per line", 0,
	  cli_help_export, cli_run_query },
	{ "rightsize", NULL, "resources to ask for, per workflow task", 0,
	  cli_help_rightsize, cli_run_query },
	{ "cost", NULL, "what the jobs cost, with idle allocation and idle"
	  " nodes", 0, cli_help_cost, cli_run_query },
	{ "top", NULL, "the runs now: tasks and processes, running, waiting"
	  " and done", 0, cli_help_top, cli_run_top },
	{ "sweep", NULL, "idle nodes, low-CPU instances and stuck jobs of the"
	  " fleet, and what they cost", 0, cli_help_sweep, cli_run_query },
	{ "files", NULL, "what each process read and wrote, and how far along"
	  " it is", 0, cli_help_files, cli_run_query },
	{ "rules", "rules test [--rules DIR] [--exe PATH] [--parent CMD]"
	  " [--repeat N] -- ARGV...\n"
	  "rules test [OPTIONS] --lines FILE\n"
	  "rules bundle DIR -o FILE [--version V] [--sign KEY.pem]\n"
	  "rules push DIR --source clickhouse[:NAME] [--version V]"
	  " [--sign KEY.pem]\n"
	  "rules status --source clickhouse[:NAME] [--format text|json]",
	  "what the rules decide for a command line; a bundle of them; the"
	  " fleet's rules", 0,
	  cli_help_rules,
	  cli_run_rules },
	{ "reload", "reload", "make the agent re-read its configuration and"
	  " rules", 0, cli_help_reload, cli_run_agent },
	{ "job-start", "job-start --job ID [--user U] [--account A] [--run R]"
	  " ...", "a job started (hooks; see --help)", CLI_HOOK,
	  cli_help_job, cli_run_job },
	{ "job-end", "job-end --job ID [--exit-code N] [--signal N]"
	  " [--state S]", "a job ended", CLI_HOOK, cli_help_job,
	  cli_run_job },
	{ "job-update", "job-update --job ID [--run R] [--pipeline P]"
	  " [--step S] [--task T] [--cost-center C]",
	  "a job's workflow fields", CLI_HOOK, cli_help_job, cli_run_job },
	{ "run", "run --job ID [--run R] [--pipeline P] [--cost-center C]"
	  " ... -- COMMAND...", "run COMMAND as a job: it and all below it",
	  CLI_HOOK, cli_help_run, cli_run_run },
	{ "schema", "schema clickhouse|markdown [--database DB]",
	  "the ClickHouse tables the clickhouse sinks fill; the record"
	  " fields", 0, cli_help_schema, cli_run_schema },
	{ "prices", "prices import [--region R]... [--output FILE]"
	  " OFFER_FILE | import-spot --table TABLE [--output FILE] SPOT_FILE"
	  " | import-gcp [--table TABLE] [--output FILE] GCP_FILE",
	  "the price table from AWS's EC2 offer file; spot prices or GCP"
	  " machine types into it",
	  CLI_NO_CONFIG, cli_help_prices, cli_run_prices },
};
const size_t cli_ncmds = sizeof(cli_cmds) / sizeof(cli_cmds[0]);

/* The command named name, or NULL. */
const struct cli_cmd *cli_cmd_find(const char *name)
{
	for (size_t i = 0; i < cli_ncmds; i++)
		if (!strcmp(cli_cmds[i].name, name))
			return &cli_cmds[i];
	return NULL;
}

/* The query table's entry of cmd, or NULL. */
const struct qcmd *cli_cmd_query(const struct cli_cmd *cmd)
{
	return cmd->synopsis ? NULL : qcmd_find(cmd->name);
}

/* A query command's synopsis: its selectors, then its options. */
static void query_synopsis(FILE *out, const struct qcmd *q, int indent)
{
	char list[128];

	fprintf(out, "%s (", q->name);
	for (const char *const *s = q->selectors; *s; s++)
		fprintf(out, "%s--%s %s", s == q->selectors ? "" : " | ", *s,
			qcmd_metavar(*s));
	fprintf(out, ")\n");
	if (q->by)
		fprintf(out, "%*s[--by job|task|tool|user|account|cost-center]\n",
			indent, "");
	if (q->task)
		fprintf(out, "%*s[--task T]\n", indent, "");
	qcmd_words(q->formats, "", "|", "|", list, sizeof(list));
	fprintf(out, "%*s%s%s%s%s", indent, "",
		q->format_required ? "--format " : "[--format ", list,
		q->format_required ? "" : "]", q->no_tree ? " [--no-tree]" : "");
	if (q->clickhouse)
		fprintf(out, "\n%*s[--source sqlite|clickhouse[:NAME]]", indent,
			"");
	fputc('\n', out);
}

/* Print cmd's synopsis, continuation lines indented by indent. */
void cli_cmd_synopsis(FILE *out, const struct cli_cmd *cmd, int indent)
{
	const struct qcmd *q = cli_cmd_query(cmd);

	if (q) {
		query_synopsis(out, q, indent);
		return;
	}
	for (const char *s = cmd->synopsis; *s;) {
		size_t n = strcspn(s, "\n");

		fprintf(out, "%.*s\n", (int)n, s);
		s += n;
		if (*s) {
			s++;
			fprintf(out, "%*s", indent, "");
		}
	}
}

/* Print cmd's usage. */
void cli_cmd_usage(FILE *out, const struct cli_cmd *cmd)
{
	if (cli_cmd_query(cmd)) {
		fputs("Usage: jobtrace ", out);
		cli_cmd_synopsis(out, cmd, 16 + (int)strlen(cmd->name) + 1);
	}
	cmd->help(out);
}

/* "-h" or "--help" as argv[1]: print cmd's usage and say so. */
bool cli_help_asked(const struct cli_cmd *cmd, int argc, char **argv)
{
	if (argc < 2 || (strcmp(argv[1], "--help") && strcmp(argv[1], "-h")))
		return false;
	cli_cmd_usage(stdout, cmd);
	return true;
}

/* Print the top-level usage. */
void cli_usage(FILE *out)
{
	fputs("Usage: jobtrace [--config FILE] COMMAND [ARGS]\n"
	      "\nCommands:\n", out);
	for (size_t i = 0; i < cli_ncmds; i++) {
		const struct cli_cmd *cmd = &cli_cmds[i];
		const char *s = cmd->synopsis;

		if (s && !strchr(s, '\n') && strlen(s) < 23 && cmd->summary) {
			fprintf(out, "  %-22s %s\n", s, cmd->summary);
			continue;
		}
		fputs("  ", out);
		cli_cmd_synopsis(out, cmd, 10);
		if (cmd->summary)
			fprintf(out, "%25s%s\n", "", cmd->summary);
	}
	fprintf(out,
		"\n"
		"  -c, --config FILE      configuration (default %s)\n"
		"  -h, --help             this text; COMMAND --help for a command's\n"
		"  --list-commands        the commands, their selectors and formats\n"
		"  -V, --version          print the version\n"
		"\n"
		"Exit status: 0 ok, 1 runtime failure, 2 bad usage or bad configuration.\n",
		JT_DEFAULT_CONFIG);
}

/* One line per command: name, selectors, formats ("-": none). */
void cli_list_commands(FILE *out)
{
	char sel[128], fmt[128];

	for (size_t i = 0; i < cli_ncmds; i++) {
		const struct qcmd *q = cli_cmd_query(&cli_cmds[i]);

		if (q) {
			qcmd_words(q->selectors, "", ",", ",", sel, sizeof(sel));
			qcmd_words(q->formats, "", ",", ",", fmt, sizeof(fmt));
		}
		fprintf(out, "%s\t%s\t%s\n", cli_cmds[i].name, q ? sel : "-",
			q ? fmt : "-");
	}
}
