// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * jobtrace.c - the command-line interface: asks the agent over its control
 * socket (status, ps) or reads the store (report, export).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "control.h"
#include "log.h"
#include "report.h"
#include "util.h"

#define EXIT_USAGE 2

struct cli {
	struct jt_config cfg;
	const char *config_path;
	bool config_explicit;
};

/* Print the top-level usage to out. */
static void usage(FILE *out)
{
	fprintf(out,
		"Usage: jobtrace [--config FILE] COMMAND [ARGS]\n"
		"\n"
		"Commands:\n"
		"  status                 agent health, counters, store\n"
		"  ps                     tracked processes running now\n"
		"  report  (--job ID | --run ID | --since TIME | --pid PID) [--format text|json|html]\n"
		"  export  (--job ID | --run ID | --since TIME) --format ndjson\n"
		"\n"
		"  -c, --config FILE      configuration (default %s)\n"
		"  -h, --help             this text; COMMAND --help for a command's\n"
		"  -V, --version          print the version\n"
		"\n"
		"Exit status: 0 ok, 1 runtime failure, 2 bad usage or bad configuration.\n",
		JT_DEFAULT_CONFIG);
}

/* Ask the agent and print its reply without the leading "ok" line. */
static int ask_agent(struct cli *c, const char *request)
{
	const char *path = config_socket_path(&c->cfg);
	char *reply = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&reply, &len);
	int err;

	if (!mem)
		return 1;
	err = control_request(path, request, 5000, mem);
	fclose(mem);
	if (err) {
		fprintf(stderr,
			"jobtrace: cannot reach jobtraced at %s: %s (is the agent running?)\n",
			path, strerror(-err));
		free(reply);
		return 1;
	}
	if (strncmp(reply, "ok\n", 3) != 0) {
		fprintf(stderr, "jobtrace: agent replied: %s", reply);
		free(reply);
		return 1;
	}
	fputs(reply + 3, stdout);
	free(reply);
	return 0;
}

/* `status` and `ps`: no arguments but --help. */
static int cmd_agent(struct cli *c, int argc, char **argv, const char *what)
{
	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		if (!strcmp(what, "status"))
			printf("Usage: jobtrace status\n\nAgent health: uptime, events seen and "
			       "dropped, records stored, last error.\n");
		else
			printf("Usage: jobtrace ps\n\nTracked processes running now: pid, tool, "
			       "job, CPU%%, RSS and I/O rates over the last sample interval.\n");
		return 0;
	}
	if (argc > 1) {
		fprintf(stderr, "jobtrace %s: unexpected argument '%s'\n", what,
			argv[1]);
		return EXIT_USAGE;
	}
	return ask_agent(c, what);
}

/* Print the usage of report or export. */
static void report_usage(FILE *out, bool export)
{
	if (export)
		fprintf(out,
			"Usage: jobtrace export (--job ID | --run ID | --since TIME) --format ndjson\n"
			"\nPrint the selected schema v1 records, one JSON object per line.\n");
	else
		fprintf(out,
			"Usage: jobtrace report (--job ID | --run ID | --since TIME | --pid PID)\n"
			"                       [--format text|json|html]\n"
			"\nShow the process tree with start, duration, CPU, peak memory, I/O,\n"
			"network and exit of every process selected.\n");
	fprintf(out,
		"\nTIME: RFC 3339 (2026-11-22T10:00:00Z), 'YYYY-MM-DD[ hh:mm[:ss]]' (UTC),\n"
		"@EPOCH, or a relative 90s, 15m, 2h, 3d before now.\n");
}

/* `report` and `export`: parse the selector and format, then read the store. */
static int cmd_report(struct cli *c, int argc, char **argv, bool export)
{
	static const struct option opts[] = {
		{ "job", required_argument, NULL, 'j' },
		{ "run", required_argument, NULL, 'r' },
		{ "since", required_argument, NULL, 's' },
		{ "pid", required_argument, NULL, 'p' },
		{ "format", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *name = export ? "export" : "report";
	enum report_format fmt = export ? REPORT_NDJSON : REPORT_TEXT;
	struct report_query q = { 0 };
	int opt, nsel = 0, err;
	bool have_format = false;
	char *end;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (opt) {
		case 'j':
			q.job = optarg;
			nsel++;
			break;
		case 'r':
			q.run = optarg;
			nsel++;
			break;
		case 's':
			if (report_parse_since(optarg, util_now_ns(CLOCK_REALTIME) / 1e9,
					       &q.since)) {
				fprintf(stderr, "jobtrace %s: --since '%s': not a time "
					"(see jobtrace %s --help)\n", name, optarg, name);
				return EXIT_USAGE;
			}
			nsel++;
			break;
		case 'p':
			if (export) {
				fprintf(stderr, "jobtrace export: --pid is for report only\n");
				return EXIT_USAGE;
			}
			errno = 0;
			q.pid = strtoll(optarg, &end, 10);
			if (errno || *end || q.pid <= 0 || q.pid > 4194304) {
				fprintf(stderr, "jobtrace report: --pid '%s': not a process id\n",
					optarg);
				return EXIT_USAGE;
			}
			nsel++;
			break;
		case 'f':
			if (report_format_parse(optarg, &fmt) ||
			    (export != (fmt == REPORT_NDJSON))) {
				fprintf(stderr, "jobtrace %s: --format '%s': expected %s\n",
					name, optarg, export ? "ndjson" : "text, json or html");
				return EXIT_USAGE;
			}
			have_format = true;
			break;
		case 'h':
			report_usage(stdout, export);
			return 0;
		default:
			report_usage(stderr, export);
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "jobtrace %s: unexpected argument '%s'\n", name,
			argv[optind]);
		return EXIT_USAGE;
	}
	if (nsel != 1) {
		fprintf(stderr, "jobtrace %s: give exactly one of --job, --run, --since%s\n",
			name, export ? "" : ", --pid");
		return EXIT_USAGE;
	}
	if (export && !have_format) {
		fprintf(stderr, "jobtrace export: --format ndjson is required\n");
		return EXIT_USAGE;
	}
	err = export ? report_export(c->cfg.sqlite_path, &q, stdout)
		     : report_run(c->cfg.sqlite_path, &q, fmt, stdout);
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "jobtrace %s: writing output: %s\n", name,
			strerror(errno));
		return 1;
	}
	return err ? 1 : 0;
}

/* Entry point: global options, configuration, then the command. */
int main(int argc, char **argv)
{
	struct cli c = { .config_path = JT_DEFAULT_CONFIG };
	char err[512];
	const char *cmd;
	int i = 1, rc;

	log_init("jobtrace", 0, LOG_LVL_WARN);
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(argv[i], "-V") || !strcmp(argv[i], "--version")) {
			printf("jobtrace %s\n", JT_VERSION);
			return 0;
		} else if (!strcmp(argv[i], "-c") || !strcmp(argv[i], "--config")) {
			if (i + 1 >= argc) {
				fprintf(stderr, "jobtrace: %s needs a file\n", argv[i]);
				return EXIT_USAGE;
			}
			c.config_path = argv[++i];
			c.config_explicit = true;
		} else if (!strncmp(argv[i], "--config=", 9)) {
			c.config_path = argv[i] + 9;
			c.config_explicit = true;
		} else {
			fprintf(stderr, "jobtrace: unknown option '%s'\n", argv[i]);
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (i >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	cmd = argv[i];
	if (config_defaults(&c.cfg))
		return 1;
	if (config_load(&c.cfg, c.config_path, !c.config_explicit, err,
			sizeof(err))) {
		fprintf(stderr, "jobtrace: %s\n", err);
		config_free(&c.cfg);
		return EXIT_USAGE;
	}
	argc -= i;
	argv += i;
	if (!strcmp(cmd, "status") || !strcmp(cmd, "ps"))
		rc = cmd_agent(&c, argc, argv, cmd);
	else if (!strcmp(cmd, "report"))
		rc = cmd_report(&c, argc, argv, false);
	else if (!strcmp(cmd, "export"))
		rc = cmd_report(&c, argc, argv, true);
	else {
		fprintf(stderr, "jobtrace: unknown command '%s'\n", cmd);
		usage(stderr);
		rc = EXIT_USAGE;
	}
	config_free(&c.cfg);
	return rc;
}
