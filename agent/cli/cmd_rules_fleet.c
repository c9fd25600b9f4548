// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cmd_rules_fleet.c - `jobtrace rules push` and `jobtrace rules status`:
 * the fleet's rules in its ClickHouse store.  A push makes and checks the
 * bundle as `rules bundle` does (cli_rules_bundle_make: the folder and
 * then the bundle unpacked as an agent takes it load, every self-test
 * passes, a plain exec is classified without a rule failing) and only
 * then inserts it; the status shows the latest push and each node's rules
 * from its latest host record.
 */
#include <errno.h>
#include <getopt.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "rulebundle.h"
#include "rulesq.h"
#include "util.h"

/* Usage of rules push and rules status. */
void cli_help_rules_fleet(FILE *out)
{
	fputs("Usage: jobtrace rules push DIR --source clickhouse[:NAME]"
	      " [--version V]\n"
	      "                           [--sign KEY.pem]\n"
	      "       jobtrace rules status --source clickhouse[:NAME]"
	      " [--format text|json]\n"
	      "\npush: make the bundle of DIR's *.lua files (version V, default"
	      " the UTC time,\nsigned with the Ed25519 key KEY.pem when given),"
	      " check it as an agent loads it\n(every file loads, every"
	      " self-test passes, a plain command line is classified\nwithout a"
	      " rule failing), then store it in the rules table of the"
	      " clickhouse\nsink (the first, or the one named NAME): agents with"
	      " rules.source =\n\"clickhouse\" load it at their next poll.  A"
	      " bundle that fails a check is not\nsent (exit 2, the file and"
	      " line).\n"
	      "status: the latest push and every node's rules as its latest host"
	      " record\nsays: version, sha256, source, the last error; which"
	      " nodes are behind the\nlatest push and which refused a bundle.\n",
	      out);
}

/* The clickhouse sink that --source names; NULL after a message. */
static const struct jt_sink_config *fleet_sink(struct cli *c,
					       const char *cmd,
					       const char *source)
{
	const struct jt_sink_config *s;
	const char *name = NULL;

	if (!source) {
		fprintf(stderr, "jobtrace rules %s: --source clickhouse[:NAME]"
			" is required\n", cmd);
		return NULL;
	}
	if (!strncmp(source, "clickhouse:", 11) && source[11])
		name = source + 11;
	else if (strcmp(source, "clickhouse")) {
		fprintf(stderr, "jobtrace rules %s: --source '%s': expected"
			" clickhouse or clickhouse:NAME (a folder or an https URL"
			" is served as files: see jobtrace rules bundle)\n", cmd,
			source);
		return NULL;
	}
	s = config_find_sink(&c->cfg, JT_SINK_CLICKHOUSE, name);
	if (!s)
		fprintf(stderr, "jobtrace rules %s: --source %s: no clickhouse"
			" sink%s%s%s in %s\n", cmd, source, name ? " named '" : "",
			name ? name : "", name ? "'" : "",
			c->cfg.source ? c->cfg.source : "the configuration (no file)");
	return s;
}

/* The options of push and status. */
struct fleet_opts {
	const char *source, *version, *sign, *format, *dir;
};

/* Parse push's or status's options (argv[0] the subcommand): 0,
 * EXIT_USAGE after a message, -1 after --help. */
static int fleet_opts_parse(struct fleet_opts *o, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "source", required_argument, NULL, 's' },
		{ "version", required_argument, NULL, 'v' },
		{ "sign", required_argument, NULL, 'k' },
		{ "format", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	bool push = !strcmp(argv[0], "push");
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (opt == 'h') {
			cli_help_rules_fleet(stdout);
			return -1;
		}
		if (opt == '?') {
			cli_help_rules_fleet(stderr);
			return EXIT_USAGE;
		}
		if (push ? opt == 'f' : opt == 'v' || opt == 'k') {
			fprintf(stderr, "jobtrace rules %s: %s\n", argv[0], push ?
				"--format is an option of rules status" :
				"--version and --sign are options of rules push");
			return EXIT_USAGE;
		}
		*(opt == 's' ? &o->source : opt == 'v' ? &o->version :
		  opt == 'k' ? &o->sign : &o->format) = optarg;
	}
	if (push && optind + 1 != argc) {
		fprintf(stderr, "jobtrace rules push: give one folder (%d"
			" given)\n", argc - optind);
		return EXIT_USAGE;
	}
	if (!push && optind != argc) {
		fprintf(stderr, "jobtrace rules status: unexpected argument"
			" '%s'\n", argv[optind]);
		return EXIT_USAGE;
	}
	o->dir = push ? argv[optind] : NULL;
	if (o->format && strcmp(o->format, "text") &&
	    strcmp(o->format, "json")) {
		fprintf(stderr, "jobtrace rules status: --format '%s': expected"
			" text or json\n", o->format);
		return EXIT_USAGE;
	}
	return 0;
}

/* Who pushes, from where: "user", and the configured or real hostname. */
static void pusher(struct cli *c, char *by, size_t bylen, char *host,
		   size_t hostlen)
{
	struct passwd *pw = getpwuid(getuid());

	if (pw)
		util_strlcpy(by, pw->pw_name, bylen);
	else
		snprintf(by, bylen, "uid %u", (unsigned)getuid());
	if (c->cfg.hostname && *c->cfg.hostname)
		util_strlcpy(host, c->cfg.hostname, hostlen);
	else if (gethostname(host, hostlen))
		util_strlcpy(host, "?", hostlen);
	host[hostlen - 1] = '\0';
}

/* `rules push DIR --source clickhouse`: check the bundle, then store it. */
static int rules_push(struct cli *c, const struct fleet_opts *o)
{
	const struct jt_sink_config *s = fleet_sink(c, "push", o->source);
	uint64_t now = util_now_ns(CLOCK_REALTIME);
	char version[32], by[64], host[256], err[1024];
	struct rulebundle b = { 0 };
	struct rulesq_push p;
	struct jbuf tar;
	time_t t = (time_t)(now / 1000000000ull);
	struct tm tm;
	int rc;

	if (!s)
		return EXIT_USAGE;
	jbuf_init(&tar);
	gmtime_r(&t, &tm);
	strftime(version, sizeof(version), "%Y%m%dT%H%M%SZ", &tm);
	rc = cli_rules_bundle_make(c, "push: ", o->dir, o->version ?
				   o->version : version, o->sign, &tar, &b);
	if (rc)
		goto cleanup;
	pusher(c, by, sizeof(by), host, sizeof(host));
	p = (struct rulesq_push){ .tar = tar.buf, .len = tar.len,
				  .version = b.version, .sha256 = b.sha256,
				  .by = by, .host = host, .when_ns = now };
	rc = 1;
	if (rulesq_push(s, &p, err, sizeof(err))) {
		fprintf(stderr, "jobtrace rules push: %s\n", err);
		goto cleanup;
	}
	printf("pushed rules version %s (sha256 %s, %u files, %zu bytes%s)"
	       " to clickhouse sink '%s'\n", b.version, b.sha256, b.nfiles,
	       tar.len, b.is_signed ? ", signed" : "", s->name);
	rc = cli_stdout_done("jobtrace rules push");
cleanup:
	rulebundle_free(&b);
	jbuf_free(&tar);
	return rc;
}

/* `rules status --source clickhouse`: the latest push and the nodes. */
static int rules_status(struct cli *c, const struct fleet_opts *o)
{
	const struct jt_sink_config *s = fleet_sink(c, "status", o->source);
	struct rulesq_fleet f = { 0 };
	char err[1024];
	int rc = 1;

	if (!s)
		return EXIT_USAGE;
	if (rulesq_fleet_load(s, &f, err, sizeof(err))) {
		fprintf(stderr, "jobtrace rules status: %s\n", err);
		goto cleanup;
	}
	rulesq_fleet_print(&f, stdout, o->format && !strcmp(o->format, "json"));
	rc = cli_stdout_done("jobtrace rules status");
cleanup:
	rulesq_fleet_free(&f);
	return rc;
}

/* `rules push` or `rules status` (argv[0]): the exit status. */
int cli_run_rules_fleet(struct cli *c, int argc, char **argv)
{
	struct fleet_opts o = { 0 };
	int rc = fleet_opts_parse(&o, argc, argv);

	if (rc)
		return rc < 0 ? 0 : rc;
	return !strcmp(argv[0], "push") ? rules_push(c, &o) :
					  rules_status(c, &o);
}
