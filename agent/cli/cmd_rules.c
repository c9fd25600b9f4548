// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cmd_rules.c - `jobtrace rules test`: load the rules locally and show
 * what they decide for a command line (or every line of a file).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "proc_table.h"
#include "rules.h"
#include "shellwords.h"
#include "util.h"

/* A process made up for `rules test`: argv, exe and comm. */
struct made_proc {
	struct jt_proc p;
	char exe[4096];
	char *argv;		/* malloc'd, NUL-separated */
};

/* The most argv bytes `rules test` takes: the agent sees at most
 * JT_ARGV_LEN, but the rules' cost on longer input is worth measuring. */
#define MADE_ARGV_MAX (1024 * 1024)

/* Resolve a program name like execvp does: PATH lookup, else as given. */
static void resolve_exe(const char *name, char *out, size_t len)
{
	const char *path = getenv("PATH");
	char buf[4096];

	if (strchr(name, '/') || !path) {
		util_strlcpy(out, name, len);
		return;
	}
	for (const char *d = path; *d;) {
		size_t n = strcspn(d, ":");

		snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, d, name);
		if (n && access(buf, X_OK) == 0) {
			util_strlcpy(out, buf, len);
			return;
		}
		d += n + (d[n] == ':');
	}
	snprintf(out, len, "/usr/bin/%s", name);
}

/* Free what make_proc allocated; accepts a cleared m. */
static void made_proc_clear(struct made_proc *m)
{
	free(m->argv);
	memset(m, 0, sizeof(*m));
}

/* Fill m from argc/argv and an optional exe path. */
static int make_proc(struct made_proc *m, int argc, char **argv,
		     const char *exe)
{
	size_t len = 0;

	made_proc_clear(m);
	for (int i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	if (len > MADE_ARGV_MAX)
		return -E2BIG;
	m->argv = malloc(len ? len : 1);
	if (!m->argv)
		return -ENOMEM;
	len = 0;
	for (int i = 0; i < argc; i++) {
		size_t n = strlen(argv[i]) + 1;

		memcpy(m->argv + len, argv[i], n);
		len += n;
	}
	if (exe)
		util_strlcpy(m->exe, exe, sizeof(m->exe));
	else
		resolve_exe(argv[0], m->exe, sizeof(m->exe));
	m->p.exe = m->exe;
	m->p.argv = m->argv;
	m->p.argv_len = len;
	m->p.uid = getuid();
	m->p.state = JT_PS_EXE_SYSTEM;	/* unless --not-system */
	util_strlcpy(m->p.comm, util_basename(m->exe), sizeof(m->p.comm));
	return 0;
}

/* Split a command line on blanks (no quoting) into at most max words. */
static int split_words(char *s, char **words, int max)
{
	int n = 0;

	for (char *tok = strtok(s, " \t"); tok && n < max; tok = strtok(NULL, " \t"))
		words[n++] = tok;
	return n;
}

/* Order doubles for the median and percentiles. */
static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

/* Write one decision for `rules test` to out. */
static void write_decision(const struct rules_decision *d,
			   const struct jt_proc *p, FILE *out)
{
	const char *a = d->argv ? d->argv : p->argv;
	size_t len = d->argv ? d->argv_len : p->argv_len;

	fprintf(out, "include:   %s\n", d->include ? "yes" : "no");
	if (!d->include)
		fprintf(out, "children:  %s\n", d->children == 1 ? "followed" : "excluded too");
	fprintf(out, "tool:      %s\n", d->tool);
	fprintf(out, "category:  %s\n", *d->category ? d->category : "-");
	fprintf(out, "version:   %s\n", *d->version ? d->version : "-");
	fprintf(out, "argv:     ");
	for (size_t off = 0; off < len;) {
		size_t n = strnlen(a + off, len - off);

		fprintf(out, " %.*s", (int)n, a + off);
		off += n + 1;
	}
	fprintf(out, "%s\n", d->argv ? "   (changed by the rules)" : "");
	if (*d->step || *d->run || *d->pipeline || *d->task)
		fprintf(out, "job:       step=%s run=%s pipeline=%s task=%s\n",
			*d->step ? d->step : "-", *d->run ? d->run : "-",
			*d->pipeline ? d->pipeline : "-", *d->task ? d->task : "-");
	fprintf(out, "errors:    %u rule(s) failed%s\n", d->errors,
		d->failed_closed ? ": failed closed (default tool, arguments redacted)" : "");
}

/* Print one decision for `rules test`: what rules return is any text. */
static void print_decision(const struct rules_decision *d,
			   const struct jt_proc *p)
{
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);

	if (!m)
		return;
	write_decision(d, p, m);
	if (fclose(m) == 0)
		cli_put_lines(stdout, text);
	free(text);
}

/* Decide for in (repeat times first, when asked) and print the decision;
 * returns 1 if a rule failed, else 0. */
static int decide(struct rules *r, const struct rules_input *in, long repeat)
{
	struct rules_decision d;
	int rc;

	if (repeat) {
		double *t = calloc(repeat, sizeof(*t));

		if (!t)
			return 1;
		for (long i = 0; i < repeat; i++) {
			uint64_t t0 = util_now_ns(CLOCK_MONOTONIC);

			rules_classify(r, in, &d);
			t[i] = (util_now_ns(CLOCK_MONOTONIC) - t0) / 1e3;
			rules_decision_free(&d);
		}
		qsort(t, repeat, sizeof(*t), cmp_double);
		printf("cost:      median %.2f us, p99 %.2f us, max %.2f us over %ld calls\n",
		       t[repeat / 2], t[(size_t)(repeat * 0.99)], t[repeat - 1], repeat);
		free(t);
	}
	rules_classify(r, in, &d);
	print_decision(&d, in->p);
	if (d.errors) {
		struct rules_stats st;

		rules_get_stats(r, &st);
		printf("error:     %s\n", st.last_error);
	}
	rc = d.errors ? 1 : 0;
	rules_decision_free(&d);
	return rc;
}

/* Split line (len bytes) into shell words in buf (2 * len + 2 bytes);
 * returns their number, at most max. */
static int line_words(const char *line, size_t len, char *buf, char **words,
		      int max)
{
	size_t pos = 0, o = 0;
	struct shellword w;
	int n = 0;

	while (n < max && shellwords_next(line, len, &pos, &w, buf + o, NULL)) {
		if (w.op) {	/* an operator stands for itself */
			memcpy(buf + o, line + w.start, w.end - w.start);
			w.len = w.end - w.start;
		}
		words[n++] = buf + o;
		o += w.len;
		buf[o++] = '\0';
	}
	return n;
}

/* `rules test --lines FILE`: decide for every command line of FILE;
 * returns 0, 1 if a rule failed on any, 2 if FILE cannot be read. */
static int decide_lines(struct rules *r, struct rules_input *in,
			struct made_proc *m, const char *file, bool truncated,
			long repeat)
{
	FILE *f = strcmp(file, "-") ? fopen(file, "r") : stdin;
	char *line = NULL, *buf = NULL, **words = NULL;
	size_t cap = 0;
	ssize_t len;
	long no = 0;
	int rc = 0;

	if (!f) {
		fprintf(stderr, "jobtrace rules test: --lines '%s': %s\n", file,
			strerror(errno));
		return EXIT_USAGE;
	}
	words = calloc(4096, sizeof(*words));
	if (!words) {
		rc = 1;
		goto cleanup;
	}
	while ((len = getline(&line, &cap, f)) >= 0) {
		char *nb;
		int n;

		no++;
		while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		if (len == 0 || line[strspn(line, " \t")] == '#' ||
		    line[strspn(line, " \t")] == '\0')
			continue;
		nb = realloc(buf, 2 * (size_t)len + 2);
		if (!nb) {
			rc = 1;
			goto cleanup;
		}
		buf = nb;
		n = line_words(line, (size_t)len, buf, words, 4096);
		if (make_proc(m, n, words, NULL)) {
			fprintf(stderr, "jobtrace rules test: %s:%ld: command line too long\n",
				file, no);
			rc = EXIT_USAGE;
			goto cleanup;
		}
		if (truncated)
			m->p.state |= JT_PS_ARGV_TRUNC;
		in->p = &m->p;
		printf("line:      %ld\n", no);
		if (decide(r, in, repeat))
			rc = 1;
		fflush(stdout);
	}
cleanup:
	if (f && f != stdin)
		fclose(f);
	free(line);
	free(buf);
	free(words);
	return rc;
}

/* Usage of rules test. */
void cli_help_rules(FILE *out)
{
	fputs("Usage: jobtrace rules test [--rules DIR] [--exe PATH] [--parent CMD]\n"
	      "                           [--repeat N] [--argv-truncated] [--uid UID]\n"
	      "                           [--job ID] [--not-system] -- ARGV...\n"
	      "       jobtrace rules test [OPTIONS] --lines FILE\n"
	      "       jobtrace rules bundle DIR -o FILE [--version V] [--sign KEY.pem]\n"
	      "\nShow what the rules decide for a command line, without the agent:\n"
	      "include or exclude, tool, category, version, redacted argv, job fields.\n"
	      "--rules tries a folder before it is installed (default: rules.source when\n"
	      "it is a folder, else agent.rules_dir),\n"
	      "--parent gives the parent's command line, --repeat N times the decision,\n"
	      "--argv-truncated shows the command line as one the kernel cut (the last\n"
	      "argument is the cut one).  --lines decides for every line of FILE (- for\n"
	      "stdin), each a command line in shell words; blank lines and lines that\n"
	      "begin with # are skipped.  The process runs as UID (default: yours),\n"
	      "in job ID (default: none), and its program is a system file (root's, in\n"
	      "root's folders: p.exe_system) unless --not-system says it is a user's.\n"
	      "\nrules bundle writes the *.lua files of DIR as one bundle to FILE, for\n"
	      "agents whose rules.source is its URL: a tar with a MANIFEST naming each\n"
	      "file's SHA-256 and version V (default: the time, UTC), signed with the\n"
	      "Ed25519 private key of KEY.pem (PEM) when --sign is given.  It is made\n"
	      "only when DIR loads, its self-tests pass and sh -c true is classified\n"
	      "without a rule failing, and checked again as an\n"
	      "agent will take it.\n\n",
	      out);
	cli_help_rules_fleet(out);
}

/* The options of `rules test`. */
struct rules_opts {
	const char *dir, *exe, *parent, *lines, *job;
	bool truncated, not_system;
	long repeat, uid;
};

/* Parse the options of `rules test` (argv[0] is "test") into o: 0,
 * EXIT_USAGE after a message, -1 after --help. */
static int rules_opts_parse(struct rules_opts *o, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "rules", required_argument, NULL, 'r' },
		{ "exe", required_argument, NULL, 'e' },
		{ "parent", required_argument, NULL, 'p' },
		{ "repeat", required_argument, NULL, 'n' },
		{ "argv-truncated", no_argument, NULL, 't' },
		{ "lines", required_argument, NULL, 'l' },
		{ "uid", required_argument, NULL, 'u' },
		{ "job", required_argument, NULL, 'j' },
		{ "not-system", no_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	size_t job_max = sizeof(((struct jt_proc *)0)->job.id) - 1;
	char *end;
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (opt) {
		case 'r':
			o->dir = optarg;
			break;
		case 'e':
			o->exe = optarg;
			break;
		case 'p':
			o->parent = optarg;
			break;
		case 'n':
			o->repeat = strtol(optarg, &end, 10);
			if (*end || o->repeat < 1 || o->repeat > 10000000) {
				fprintf(stderr, "jobtrace rules test: --repeat '%s': a count from 1 to 10000000\n",
					optarg);
				return EXIT_USAGE;
			}
			break;
		case 't':
			o->truncated = true;
			break;
		case 'l':
			o->lines = optarg;
			break;
		case 'u':
			errno = 0;
			o->uid = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || o->uid < 0 ||
			    o->uid > (long)UINT32_MAX - 1) {
				fprintf(stderr, "jobtrace rules test: --uid '%s': a user id from 0 to %u\n",
					optarg, UINT32_MAX - 1);
				return EXIT_USAGE;
			}
			break;
		case 'j':
			if (!*optarg || strlen(optarg) > job_max) {
				fprintf(stderr, "jobtrace rules test: --job '%s': 1 to %zu bytes\n",
					optarg, job_max);
				return EXIT_USAGE;
			}
			o->job = optarg;
			break;
		case 's':
			o->not_system = true;
			break;
		case 'h':
			cli_help_rules(stdout);
			return -1;
		default:
			cli_help_rules(stderr);
			return EXIT_USAGE;
		}
	}
	if (o->lines && optind < argc) {
		fprintf(stderr, "jobtrace rules test: --lines '%s' and a command line: give one\n",
			o->lines);
		return EXIT_USAGE;
	}
	if (!o->lines && optind >= argc) {
		fprintf(stderr, "jobtrace rules test: give the command line after --\n");
		return EXIT_USAGE;
	}
	return 0;
}

/* --parent: decide for the parent's command line into pm, in->anc[0];
 * 0 or EXIT_USAGE after a message. */
static int add_parent(struct rules *r, const char *parent,
		      struct made_proc *pm, struct rules_input *in)
{
	char *copy = strdup(parent), *words[64];
	int n = copy ? split_words(copy, words, 64) : 0;
	struct rules_input pin = { 0 };
	struct rules_decision pd;

	if (n == 0 || make_proc(pm, n, words, NULL)) {
		fprintf(stderr, "jobtrace rules test: --parent '%s': not a command line\n",
			parent);
		free(copy);
		return EXIT_USAGE;
	}
	free(copy);
	pin.p = &pm->p;
	rules_classify(r, &pin, &pd);
	util_strlcpy(pm->p.tool_name, pd.tool, sizeof(pm->p.tool_name));
	rules_decision_free(&pd);
	in->anc[0] = &pm->p;
	in->nanc = 1;
	return 0;
}

/* Load dir's rules and self-tests into a new *out, as `rules test` and
 * `rules bundle` do: 0, 1, or EXIT_USAGE after "jobtrace rules CMD: WHY:
 * FILE:LINE: what" (cmd "test: ", why "" or a context). */
int cli_rules_load(const struct cli *c, const char *dir, const char *cmd,
		   const char *why, struct rules **out)
{
	struct rules_limits lim = { 64u << 20, 1000000ul,
				    c->cfg.rules_deadline_ms };
	char err[512];

	*out = NULL;
	if (rules_new(&lim, out))
		return 1;
	if (rules_load_dir(*out, dir, err, sizeof(err))) {
		fprintf(stderr, "jobtrace rules %s%s%s\n", cmd, why, err);
		return EXIT_USAGE;
	}
	return 0;
}

/* `rules test`: load the rules locally and show their decision. */
int cli_run_rules(struct cli *c, const struct cli_cmd *cmd, int argc,
		  char **argv)
{
	/* the folder the agent follows: rules.source when it is one */
	struct rules_opts o = { .dir = c->cfg.rules_source[0] == '/' ?
				c->cfg.rules_source : c->cfg.rules_dir, .uid = -1 };
	struct made_proc *m = NULL;
	struct rules_input in = { 0 };
	struct rules *r = NULL;
	int rc;

	if (cli_help_asked(cmd, argc, argv))
		return 0;
	if (argc >= 2 && !strcmp(argv[1], "bundle"))
		return cli_rules_bundle(c, argc - 1, argv + 1);
	if (argc >= 2 && (!strcmp(argv[1], "push") ||
			  !strcmp(argv[1], "status")))
		return cli_run_rules_fleet(c, argc - 1, argv + 1);
	if (argc < 2 || strcmp(argv[1], "test") != 0) {
		cli_help_rules(stderr);
		return EXIT_USAGE;
	}
	rc = rules_opts_parse(&o, argc - 1, argv + 1);
	if (rc)
		return rc < 0 ? 0 : rc;
	argc--;
	argv++;
	m = calloc(2, sizeof(*m));
	if (!m)
		return 1;
	rc = EXIT_USAGE;
	if (!o.lines && make_proc(m, argc - optind, argv + optind, o.exe)) {
		fprintf(stderr, "jobtrace rules test: command line too long\n");
		goto out;
	}
	if (o.truncated)
		m->p.state |= JT_PS_ARGV_TRUNC;
	if (o.not_system)
		m->p.state &= ~JT_PS_EXE_SYSTEM;
	if (o.uid >= 0)
		m->p.uid = (uint32_t)o.uid;
	if (o.job) {
		util_strlcpy(m->p.job.scheduler, "test", sizeof(m->p.job.scheduler));
		util_strlcpy(m->p.job.id, o.job, sizeof(m->p.job.id));
	}
	rc = cli_rules_load(c, o.dir, "test: ", "", &r);
	if (rc)
		goto out;
	rc = EXIT_USAGE;
	if (o.parent && add_parent(r, o.parent, &m[1], &in))
		goto out;
	in.p = &m->p;
	if (o.lines)
		rc = decide_lines(r, &in, m, o.lines, o.truncated, o.repeat);
	else
		rc = decide(r, &in, o.repeat);
out:
	rules_free(r);
	if (m) {
		made_proc_clear(&m[0]);
		made_proc_clear(&m[1]);
	}
	free(m);
	return rc;
}
