// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cmd_schema.c - `jobtrace schema`: the ClickHouse tables' DDL and the
 * record fields' tables of doc/records.md.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "chschema.h"
#include "cli.h"
#include "schema.h"

/* Usage of schema. */
void cli_help_schema(FILE *out)
{
	fputs("Usage: jobtrace schema clickhouse [--database DB]\n"
	      "       jobtrace schema markdown\n"
	      "\nclickhouse: print the statements that create the ClickHouse database and\n"
	      "the tables the clickhouse sinks write into (one per record type), e.g.\n"
	      "  jobtrace schema clickhouse | clickhouse-client --multiquery\n"
	      "--database: default the database of the first clickhouse sink of the\n"
	      "configuration, else jobtrace.\n"
	      "markdown: print every record type's fields (the tables of records.md).\n", out);
}

/* `schema clickhouse`: print the DDL of the ClickHouse tables;
 * `schema markdown`: the field tables of doc/records.md. */
int cli_run_schema(struct cli *c, const struct cli_cmd *cmd, int argc,
		   char **argv)
{
	static const struct option opts[] = {
		{ "database", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const struct jt_sink_config *s;
	const char *db = NULL;
	int opt;

	if (cli_help_asked(cmd, argc, argv))
		return 0;
	if (argc == 2 && !strcmp(argv[1], "markdown")) {
		schema_print_markdown(stdout);
		return cli_stdout_done("jobtrace schema");
	}
	if (argc < 2 || strcmp(argv[1], "clickhouse") != 0) {
		if (argc >= 2)
			fprintf(stderr, "jobtrace schema: unknown target '%s'\n", argv[1]);
		cli_help_schema(stderr);
		return EXIT_USAGE;
	}
	argc--;
	argv++;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (opt) {
		case 'd':
			db = optarg;
			break;
		case 'h':
			cli_help_schema(stdout);
			return 0;
		default:
			cli_help_schema(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "jobtrace schema clickhouse: unexpected argument '%s'\n",
			argv[optind]);
		return EXIT_USAGE;
	}
	if (db && !*db) {
		fprintf(stderr, "jobtrace schema clickhouse: --database: empty name\n");
		return EXIT_USAGE;
	}
	if (!db) {
		s = config_find_sink(&c->cfg, JT_SINK_CLICKHOUSE, NULL);
		db = s && s->database && *s->database ? s->database : "jobtrace";
	}
	chschema_print(stdout, db);
	return cli_stdout_done("jobtrace schema");
}
