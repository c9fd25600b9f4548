// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * jobtrace.c - the command-line interface's entry: the global options,
 * the configuration, then the command from the table (cli.h, cmdtab.c).
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "log.h"
#include "query.h"

/*
 * The global options before the command: argv's index of the command, or
 * -1 with *rc the exit status (after --help, --version, a bad option).
 */
static int global_opts(struct cli *c, int argc, char **argv, int *rc)
{
	int i = 1;

	*rc = 0;
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			cli_usage(stdout);
			return -1;
		} else if (!strcmp(argv[i], "-V") || !strcmp(argv[i], "--version")) {
			printf("jobtrace %s\n", JT_VERSION);
			return -1;
		} else if (!strcmp(argv[i], "--list-commands")) {
			cli_list_commands(stdout);
			return -1;
		} else if (!strcmp(argv[i], "-c") || !strcmp(argv[i], "--config")) {
			if (i + 1 >= argc) {
				fprintf(stderr, "jobtrace: %s needs a file\n", argv[i]);
				*rc = EXIT_USAGE;
				return -1;
			}
			c->config_path = argv[++i];
			c->config_explicit = true;
		} else if (!strncmp(argv[i], "--config=", 9)) {
			c->config_path = argv[i] + 9;
			c->config_explicit = true;
		} else {
			fprintf(stderr, "jobtrace: unknown option '%s'\n", argv[i]);
			cli_usage(stderr);
			*rc = EXIT_USAGE;
			return -1;
		}
	}
	if (i >= argc) {
		cli_usage(stderr);
		*rc = EXIT_USAGE;
		return -1;
	}
	return i;
}

/*
 * The configuration could not be loaded (err says why) for cmd: a hook
 * never fails a job on it, run runs its command untraced, unless their
 * --strict; anything else is bad configuration.  Returns the exit status.
 */
static int config_broken(struct cli *c, const struct cli_cmd *cmd, int argc,
			 char **argv, const char *err)
{
	bool strict = false;
	int rc;

	/* run's command may have a --strict of its own */
	for (int k = 1; k < argc && strcmp(argv[k], "--"); k++)
		strict |= !strcmp(argv[k], "--strict");
	config_free(&c->cfg);
	if (cmd->flags & CLI_HOOK && !strict && strcmp(cmd->name, "run")) {
		cli_hook_log(cmd->name, "%s (job not affected)", err);
		return 0;
	}
	if (cmd->flags & CLI_HOOK && !strict && !config_defaults(&c->cfg)) {
		cli_hook_log(cmd->name, "%s (the command runs untraced)", err);
		c->no_agent = true;
		rc = cmd->run(c, cmd, argc, argv);
		config_free(&c->cfg);
		return rc;
	}
	fprintf(stderr, "jobtrace: %s\n", err);
	return EXIT_USAGE;
}

/* Entry point: global options, configuration, then the command. */
int main(int argc, char **argv)
{
	struct cli c = { .config_path = JT_DEFAULT_CONFIG };
	const struct cli_cmd *cmd;
	char err[512];
	int i, rc;

	/* a child answering a user's report for the agent (queryproto.h) */
	if (argc > 1 && !strcmp(argv[1], QUERY_CHILD_ARG))
		return query_child_main(argc, argv);
	log_init("jobtrace", 0, LOG_LVL_WARN);
	i = global_opts(&c, argc, argv, &rc);
	if (i < 0)
		return rc;
	argc -= i;
	argv += i;
	cmd = cli_cmd_find(argv[0]);
	if (!cmd) {
		fprintf(stderr, "jobtrace: unknown command '%s'\n", argv[0]);
		cli_usage(stderr);
		return EXIT_USAGE;
	}
	if (cmd->flags & CLI_NO_CONFIG)
		return cmd->run(&c, cmd, argc, argv);
	if (config_defaults(&c.cfg))
		return 1;
	if (config_load(&c.cfg, c.config_path, !c.config_explicit, err,
			sizeof(err)))
		return config_broken(&c, cmd, argc, argv, err);
	rc = cmd->run(&c, cmd, argc, argv);
	config_free(&c.cfg);
	return rc;
}
