// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cmd_rules_bundle.c - `jobtrace rules bundle DIR -o FILE`: the rules of a
 * folder as one bundle (rulebundle.h) for agents that follow a URL or the
 * fleet store, made only when the folder loads and its self-tests pass,
 * and checked again as an agent will take it.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "log.h"
#include "proc.h"
#include "rulebundle.h"
#include "rules.h"
#include "util.h"

/* The options of `rules bundle`. */
struct bundle_opts {
	const char *dir, *out, *version, *sign;
	char version_buf[32];
};

/* Parse `rules bundle` (argv[0] is "bundle") into o: 0, EXIT_USAGE after
 * a message, -1 after --help. */
static int bundle_opts_parse(struct bundle_opts *o, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "version", required_argument, NULL, 'v' },
		{ "sign", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'o':
			o->out = optarg;
			break;
		case 'v':
			o->version = optarg;
			break;
		case 's':
			o->sign = optarg;
			break;
		case 'h':
			cli_help_rules(stdout);
			return -1;
		default:
			cli_help_rules(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind + 1 != argc || !o->out) {
		fprintf(stderr, "jobtrace rules bundle: give one folder and -o FILE "
			"(jobtrace rules bundle DIR -o FILE)\n");
		return EXIT_USAGE;
	}
	o->dir = argv[optind];
	if (!o->version) {
		time_t t = time(NULL);
		struct tm tm;

		strftime(o->version_buf, sizeof(o->version_buf),
			 "%Y%m%dT%H%M%SZ", gmtime_r(&t, &tm));
		o->version = o->version_buf;
	}
	return 0;
}

/* Classify a plain command line, `sh -c true`: 0, or -EINVAL with the
 * failing rule's error in err (a rule that fails on every shell). */
static int plain_exec(struct rules *r, char *err, size_t errlen)
{
	static char argv[] = "sh\0-c\0true";
	struct jt_proc p = { .exe = "/bin/sh", .argv = argv,
			     .argv_len = sizeof(argv), .comm = "sh",
			     .state = JT_PS_EXE_SYSTEM };
	struct rules_input in = { .p = &p };
	struct rules_decision d;
	struct rules_stats st;
	unsigned errors;

	rules_classify(r, &in, &d);
	errors = d.errors;
	rules_decision_free(&d);
	if (!errors)
		return 0;
	rules_get_stats(r, &st);
	util_seterr(err, errlen, "%s", st.last_error);
	return -EINVAL;
}

/* Load dir's rules and self-tests as `rules test` does, and classify a
 * plain exec: 0, or EXIT_USAGE after a message naming the file and line
 * (cmd: "bundle: ", "push: "). */
static int load_check(const struct cli *c, const char *dir, const char *cmd,
		      const char *what)
{
	enum log_level level = log_get_level();
	struct rules *r = NULL;
	char err[512];
	int rc = cli_rules_load(c, dir, cmd, what, &r);

	/* the message below names the rule: not the engine's warning too */
	log_set_level(LOG_LVL_ERROR);
	if (!rc && plain_exec(r, err, sizeof(err))) {
		fprintf(stderr, "jobtrace rules %s%sclassifying /bin/sh -c true:"
			" %s\n", cmd, what, err);
		rc = EXIT_USAGE;
	}
	log_set_level(level);
	rules_free(r);
	if (rc == EXIT_USAGE)
		fprintf(stderr, "jobtrace rules %s%s\n", cmd,
			strcmp(cmd, "push: ") ? "no bundle made" : "nothing pushed");
	return rc;
}

/* Open t as an agent would, extract it into a scratch folder and load it
 * there: what the agents get is what was tested.  0 or an exit status. */
static int check_made(const struct cli *c, const char *cmd,
		      const struct jbuf *t, struct rulebundle *b)
{
	char tmp[] = "/tmp/jobtrace-bundle-XXXXXX", dir[64], err[512];
	int rc = 1;

	if (rulebundle_open(t->buf, t->len, NULL, b, err, sizeof(err))) {
		fprintf(stderr, "jobtrace rules %sthe bundle made does not "
			"open: %s\n", cmd, err);
		return 1;
	}
	if (!mkdtemp(tmp)) {
		fprintf(stderr, "jobtrace rules %s%s: %s\n", cmd, tmp,
			strerror(errno));
		return 1;
	}
	snprintf(dir, sizeof(dir), "%s/rules", tmp);
	if (rulebundle_extract(b, dir, err, sizeof(err)))
		fprintf(stderr, "jobtrace rules %s%s\n", cmd, err);
	else
		rc = load_check(c, dir, cmd, "the bundle as extracted: ");
	for (unsigned i = 0; i < b->nfiles; i++) {
		char p[128];

		snprintf(p, sizeof(p), "%s/%s", dir, b->files[i].name);
		unlink(p);
	}
	rmdir(dir);
	rmdir(tmp);
	return rc;
}

/* Check dir, make its bundle into t and check that as an agent takes it
 * (see cli.h). */
int cli_rules_bundle_make(const struct cli *c, const char *cmd,
			  const char *dir, const char *version,
			  const char *sign, struct jbuf *t, struct rulebundle *b)
{
	char err[512];
	int rc;

	rc = load_check(c, dir, cmd, "");
	if (rc)
		return rc;
	if (rulebundle_make(dir, version, sign, t, err, sizeof(err))) {
		fprintf(stderr, "jobtrace rules %s%s\n", cmd, err);
		return EXIT_USAGE;
	}
	return check_made(c, cmd, t, b);
}

/* Write t to path through a temporary file renamed over it. */
static int write_out(const char *path, const struct jbuf *t)
{
	char tmp[4096];
	FILE *f;
	int ret = 0;

	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid());
	f = fopen(tmp, "wex");
	if (!f) {
		ret = -errno;
		fprintf(stderr, "jobtrace rules bundle: %s: %s\n", tmp, strerror(errno));
		return ret;
	}
	if (fwrite(t->buf, 1, t->len, f) != t->len || fflush(f) ||
	    fsync(fileno(f)))
		ret = -errno;
	if (fclose(f) && !ret)
		ret = -errno;
	if (!ret && rename(tmp, path))
		ret = -errno;
	if (ret) {
		fprintf(stderr, "jobtrace rules bundle: %s: %s\n", path,
			strerror(-ret));
		unlink(tmp);
	}
	return ret;
}

/* `rules bundle DIR -o FILE [--version V] [--sign KEY.pem]`. */
int cli_rules_bundle(struct cli *c, int argc, char **argv)
{
	struct bundle_opts o = { 0 };
	struct rulebundle b = { 0 };
	struct jbuf t;
	int rc;

	rc = bundle_opts_parse(&o, argc, argv);
	if (rc)
		return rc < 0 ? 0 : rc;
	jbuf_init(&t);
	rc = cli_rules_bundle_make(c, "bundle: ", o.dir, o.version, o.sign, &t,
				   &b);
	if (!rc && write_out(o.out, &t))
		rc = 1;
	if (!rc)
		printf("%s: version %s, %u files, sha256 %s, %s\n", o.out,
		       b.version, b.nfiles, b.sha256,
		       o.sign ? "signed" : "not signed");
	rulebundle_free(&b);
	jbuf_free(&t);
	return rc;
}
