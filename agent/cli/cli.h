/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cli.h - the command line's table of commands and what the commands
 * share.
 *
 * Each command of `jobtrace` is one entry of cli_cmds[] (cmdtab.c): its
 * name, its synopsis and one-line summary (the top-level usage, its own
 * --help and --list-commands come from them, and tests/code/manpage.py
 * holds doc/jobtrace.1 to them), how it treats the configuration, and
 * the function that runs it.  The commands that read stored records
 * (report, export, rightsize, cost) take their selectors and formats from
 * the query layer's table (qcmd.h), which the agent's socket reads too.
 * The commands live one file per command or close group: cmd_agent.c
 * (status, ps, reload), cmd_query.c, cmd_rules.c, cmd_rules_fleet.c
 * (rules push and status), cmd_schema.c,
 * cmd_prices.c, cmd_job.c (the hooks and run).
 */
#ifndef JOBTRACE_CLI_H
#define JOBTRACE_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "config.h"
#include "qcmd.h"

#define EXIT_USAGE 2

/* What every command gets: the configuration and how it was found. */
struct cli {
	struct jt_config cfg;
	const char *config_path;
	bool config_explicit;
	bool no_agent;		/* run: the configuration is broken */
};

/* How a command treats the configuration. */
enum cli_cmd_flags {
	CLI_NO_CONFIG = 1,	/* reads none: works where there is none yet */
	CLI_HOOK = 2,		/* a broken one does not fail a job (--strict does) */
};

/* One command of the command line. */
struct cli_cmd {
	const char *name;
	const char *synopsis;	/* after "jobtrace "; NULL: from the query table */
	const char *summary;	/* one line of the top-level usage, or NULL */
	unsigned flags;		/* enum cli_cmd_flags */
	/* --help: the whole usage; a query command's after its synopsis */
	void (*help)(FILE *out);
	/* run with argv[0] the command's name; returns the exit status */
	int (*run)(struct cli *c, const struct cli_cmd *cmd, int argc,
		   char **argv);
};

extern const struct cli_cmd cli_cmds[];
extern const size_t cli_ncmds;

/* The command named name, or NULL. */
const struct cli_cmd *cli_cmd_find(const char *name);
/* The query table's entry of cmd, or NULL when it reads no records. */
const struct qcmd *cli_cmd_query(const struct cli_cmd *cmd);
/* Print cmd's synopsis, continuation lines indented by indent. */
void cli_cmd_synopsis(FILE *out, const struct cli_cmd *cmd, int indent);
/* Print cmd's usage: "Usage: jobtrace SYNOPSIS" and its help text. */
void cli_cmd_usage(FILE *out, const struct cli_cmd *cmd);
/* Print the top-level usage, every command's synopsis and summary. */
void cli_usage(FILE *out);
/* Print one line per command: name, selectors, formats (man page test). */
void cli_list_commands(FILE *out);
/* "-h" or "--help" as argv[1]: print cmd's usage to stdout and say so. */
bool cli_help_asked(const struct cli_cmd *cmd, int argc, char **argv);

/* Print text line by line, each made safe for a terminal. */
void cli_put_lines(FILE *out, char *text);
/* Send one request to the agent: its whole reply in *reply, or -errno. */
int cli_request_text(struct cli *c, const char *request, int timeout_ms,
		     char **reply);
/* Ask the agent and print its reply without "ok"; the exit status. */
int cli_ask_agent(struct cli *c, const char *request);
/* After printing: 0, or 1 with a message when stdout failed. */
int cli_stdout_done(const char *who);
/* Report a hook's failure: one line on stderr and in syslog. */
void cli_hook_log(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * Parse the options of a command that reads stored records into a and
 * *source by the query table: 0, EXIT_USAGE after a message naming the
 * argument, or -1 after --help was printed (exit 0).
 */
int cli_query_args(const struct cli_cmd *cmd, int argc, char **argv,
		   struct qcmd_args *a, const char **source);

/* Does this user ask the agent (the store is root's alone) rather than
 * read the store? */
bool cli_query_via_agent(const struct cli *c);
/*
 * Answer query command qc for q in format on out from source (sqlite,
 * clickhouse[:NAME]): the exit status.
 */
int cli_query_answer(struct cli *c, const struct qcmd *qc,
		     const char *source, const struct report_query *q,
		     const char *format, FILE *out);

int cli_run_agent(struct cli *c, const struct cli_cmd *cmd, int argc,
		  char **argv);
int cli_run_query(struct cli *c, const struct cli_cmd *cmd, int argc,
		  char **argv);
int cli_run_top(struct cli *c, const struct cli_cmd *cmd, int argc,
		char **argv);
int cli_run_rules(struct cli *c, const struct cli_cmd *cmd, int argc,
		  char **argv);
/* `rules push` and `rules status` (argv[0]): the exit status. */
int cli_run_rules_fleet(struct cli *c, int argc, char **argv);
int cli_run_schema(struct cli *c, const struct cli_cmd *cmd, int argc,
		   char **argv);
int cli_run_prices(struct cli *c, const struct cli_cmd *cmd, int argc,
		   char **argv);
int cli_run_job(struct cli *c, const struct cli_cmd *cmd, int argc,
		char **argv);
int cli_run_run(struct cli *c, const struct cli_cmd *cmd, int argc,
		char **argv);

void cli_help_status(FILE *out);
void cli_help_ps(FILE *out);
void cli_help_reload(FILE *out);
void cli_help_report(FILE *out);
void cli_help_export(FILE *out);
void cli_help_rightsize(FILE *out);
void cli_help_cost(FILE *out);
void cli_help_top(FILE *out);
void cli_help_sweep(FILE *out);
void cli_help_files(FILE *out);
void cli_help_rules(FILE *out);
void cli_help_rules_fleet(FILE *out);
struct rules;
/* Load dir's rules and self-tests into a new *out (free it, also after a
 * failure): 0, 1, or EXIT_USAGE after "jobtrace rules CMD WHY FILE:LINE:
 * what" on stderr. */
int cli_rules_load(const struct cli *c, const char *dir, const char *cmd,
		   const char *why, struct rules **out);
struct jbuf;
struct rulebundle;
/*
 * Load dir's rules and self-tests and classify `sh -c true` (a rule that
 * fails there fails on every shell), make the bundle of dir (version,
 * signed with the key in the PEM file sign when not NULL) into t, then
 * open, extract and load that bundle as an agent will, *b describing it
 * (free it with rulebundle_free, also after a failure): 0, or an exit
 * status after "jobtrace rules CMD..." on stderr (EXIT_USAGE: the folder
 * is refused, naming the file and line).  cmd: "bundle: ", "push: ".
 */
int cli_rules_bundle_make(const struct cli *c, const char *cmd,
			  const char *dir, const char *version,
			  const char *sign, struct jbuf *t, struct rulebundle *b);
/* `rules bundle` (argv[0] is "bundle"): an exit status. */
int cli_rules_bundle(struct cli *c, int argc, char **argv);
void cli_help_schema(FILE *out);
void cli_help_prices(FILE *out);
void cli_help_job(FILE *out);
void cli_help_run(FILE *out);

#endif
