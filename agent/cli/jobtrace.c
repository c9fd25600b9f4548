// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * jobtrace.c - the command-line interface: asks the agent over its control
 * socket (status, ps) or reads the records (report, export) from the local
 * store or from a ClickHouse sink.
 */
#include <errno.h>
#include <stdarg.h>
#include <getopt.h>
#include <pwd.h>
#include <stdio.h>
#include <syslog.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chquery.h"
#include "chschema.h"
#include "schema.h"
#include "config.h"
#include "control.h"
#include "costq.h"
#include "hookargs.h"
#include "jobrun.h"
#include "log.h"
#include "prices_import.h"
#include "proc_table.h"
#include "query.h"
#include "report.h"
#include "rightsize.h"
#include "rules.h"
#include "shellwords.h"
#include "store.h"
#include "util.h"

#define EXIT_USAGE 2

struct cli {
	struct jt_config cfg;
	const char *config_path;
	bool config_explicit;
	bool no_agent;		/* run: the configuration is broken */
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
		"  report  (--job ID | --run ID | --pipeline P | --since TIME | --pid PID)\n"
		"          [--format text|json|html] [--no-tree] [--source sqlite|clickhouse[:NAME]]\n"
		"  export  (--job ID | --run ID | --pipeline P | --since TIME) --format ndjson\n"
		"          [--source sqlite|clickhouse[:NAME]]\n"
		"  rightsize (--pipeline P | --run ID | --job ID | --since TIME)\n"
		"          [--format text|nextflow|snakemake|slurm|json] [--source ...]\n"
		"                         resources to ask for, per workflow task\n"
		"  cost    (--since TIME | --job ID | --run R) [--by job|task|tool|user|account|\n"
		"          cost-center] [--format text|json|csv] [--source sqlite|clickhouse[:NAME]]\n"
		"                         what the jobs cost, with idle allocation and idle nodes\n"
		"  rules test [--rules DIR] [--exe PATH] [--parent CMD] [--repeat N] -- ARGV...\n"
		"                         what the rules decide for a command line\n"
		"  reload                 make the agent re-read its configuration and rules\n"
		"  job-start --job ID [--user U] [--account A] [--run R] ...   (hooks; see --help)\n"
		"  job-end   --job ID [--exit-code N] [--signal N] [--state S]\n"
		"  job-update --job ID [--run R] [--pipeline P] [--step S] [--task T] [--cost-center C]\n"
		"  run --job ID [--run R] [--pipeline P] [--cost-center C] ... -- COMMAND...\n"
		"                         run COMMAND as a job: it and all below it\n"
		"  schema clickhouse [--database DB]\n"
		"                         the ClickHouse tables the clickhouse sinks fill\n"
		"  prices import [--region R]... [--output FILE] OFFER_FILE\n"
		"                         the price table from AWS's EC2 offer file\n"
		"\n"
		"  -c, --config FILE      configuration (default %s)\n"
		"  -h, --help             this text; COMMAND --help for a command's\n"
		"  -V, --version          print the version\n"
		"\n"
		"Exit status: 0 ok, 1 runtime failure, 2 bad usage or bad configuration.\n",
		JT_DEFAULT_CONFIG);
}

/* Print text line by line, each made safe for a terminal. */
static void put_lines(FILE *out, char *text)
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
static int request_text(struct cli *c, const char *request, int timeout_ms,
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
static int ask_agent(struct cli *c, const char *request)
{
	const char *path = config_socket_path(&c->cfg);
	char *reply = NULL;
	int err = request_text(c, request, 5000, &reply);

	if (err) {
		fprintf(stderr,
			"jobtrace: cannot reach jobtraced at %s: %s (is the agent running?)\n",
			path, strerror(-err));
		return 1;
	}
	if (strncmp(reply, "ok\n", 3) != 0) {
		fputs("jobtrace: agent replied: ", stderr);
		put_lines(stderr, reply);
		free(reply);
		return 1;
	}
	put_lines(stdout, reply + 3);
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
			"Usage: jobtrace export (--job ID | --run ID | --pipeline P | --since TIME)\n"
			"                       --format ndjson [--source sqlite|clickhouse[:NAME]]\n"
			"\nPrint the selected schema v1 records, one JSON object per line.\n"
			"--run and --pipeline: the processes whose job.run (job.pipeline) is\n"
			"that, and every record of their jobs.\n");
	else
		fprintf(out,
			"Usage: jobtrace report (--job ID | --run ID | --pipeline P | --since TIME |\n"
			"                        --pid PID)\n"
			"                       [--format text|json|html] [--no-tree]\n"
			"                       [--source sqlite|clickhouse[:NAME]]\n"
			"\nFor --job, the job's header first (user, name, state, exit code, elapsed,\n"
			"run, pipeline, cost center) and its efficiency (CPU over allocated CPUs x\n"
			"elapsed, the job's memory peak over the memory requested); a running job\n"
			"shows what its live processes have done so far, from their latest samples.\n"
			"Then a summary by workflow task and by tool, most CPU first (processes,\n"
			"wall time, CPU, CPU/wall, largest peak RSS, read, write, failures), the\n"
			"TOTAL of every process's own figures, and the process tree with start,\n"
			"duration, CPU, peak memory, I/O, network and exit of every process.  A\n"
			"SIGPIPE (reader closed) and the scheduler's kill of the extern step at job\n"
			"end are counted apart, not as failures.  A job that ran on several hosts\n"
			"is one report, with a HOST column.\n"
			"\n--pipeline P  the processes whose job.pipeline is P (the job's --pipeline;\n"
			"              else the rules name Snakemake's \"snakemake\", Nextflow's \"nextflow\")\n"
			"--no-tree  leave out the process tree (json: the process records;\n"
			"           html: the processes on demand)\n"
			"--format html  one self-contained page, nothing fetched: the answer, a\n"
			"           timeline of the tasks and of the tools outside tasks (a bar per\n"
			"           instance, failures and signals marked, a lane's processes on a\n"
			"           click), CPU and memory over time, the tables with the cost\n");
	fprintf(out,
		"\nTIME: RFC 3339 (2026-11-22T10:00:00Z), 'YYYY-MM-DD[ hh:mm[:ss]]' (UTC),\n"
		"@EPOCH, or a relative 90s, 15m, 2h, 3d before now.\n"
		"\n--source where the records are read:\n"
		"  sqlite           this node's store, store.sqlite_path (the default)\n"
		"  clickhouse       the first clickhouse sink of the configuration: the\n"
		"                   whole fleet (its url, database, credentials_file, TLS)\n"
		"  clickhouse:NAME  the clickhouse sink named NAME\n");
}

/*
 * Read what q selects for what from a ClickHouse sink into a temporary
 * store (SQLite deletes it on close) and name it in where; NULL with *rc
 * the exit status after a message.
 */
static struct store *clickhouse_store(struct cli *c, const char *cmd,
				      const char *name,
				      const struct report_query *q,
				      enum chq_what what, char *where,
				      size_t wlen, int *rc)
{
	const struct jt_sink_config *s;
	struct store *st = NULL;
	char err[1024];

	*rc = 1;
	s = config_find_sink(&c->cfg, JT_SINK_CLICKHOUSE, name);
	if (!s) {
		fprintf(stderr, "jobtrace %s: --source clickhouse%s%s: no clickhouse"
			" sink%s%s%s in %s\n", cmd, name ? ":" : "", name ? name : "",
			name ? " named '" : "", name ? name : "", name ? "'" : "",
			c->cfg.source ? c->cfg.source : "the configuration (no file)");
		*rc = EXIT_USAGE;
		return NULL;
	}
	if (store_open("", false, &st))
		return NULL;
	if (chquery_load_what(s, q, what, st, err, sizeof(err)) < 0) {
		fprintf(stderr, "jobtrace %s: %s\n", cmd, err);
		store_close(st);
		return NULL;
	}
	if (store_flush(st) < 0) {
		store_close(st);
		return NULL;
	}
	snprintf(where, wlen, "clickhouse sink '%s' (%s, database %s)",
		 s->name, s->url, s->database && *s->database ? s->database : "jobtrace");
	return st;
}

/* Parse --since TIME for cmd into *out: 0, or -EINVAL after a message. */
static int since_parse(const char *cmd, const char *arg, double *out)
{
	if (!storeq_parse_since(arg, util_now_ns(CLOCK_REALTIME) / 1e9, out))
		return 0;
	fprintf(stderr, "jobtrace %s: --since '%s': not a time (see jobtrace %s"
		" --help)\n", cmd, arg, cmd);
	return -EINVAL;
}

/*
 * A selector option of cmd (--job, --run, --pipeline, --since) into q:
 * 1 taken, 0 not a selector, -EINVAL after a message.
 */
static int selector_opt(const char *cmd, int opt, struct report_query *q)
{
	switch (opt) {
	case 'j':
		q->job = optarg;
		return 1;
	case 'r':
		q->run = optarg;
		return 1;
	case 'P':
		q->pipeline = optarg;
		return 1;
	case 's':
		return since_parse(cmd, optarg, &q->since) ? -EINVAL : 1;
	default:
		return 0;
	}
}

/* Check --source: sqlite, clickhouse, or clickhouse:NAME (*sink NAME). */
static int source_parse(const char *cmd, const char *source, const char **sink)
{
	*sink = NULL;
	if (!strncmp(source, "clickhouse:", 11) && source[11]) {
		*sink = source + 11;
	} else if (strcmp(source, "clickhouse") && strcmp(source, "sqlite")) {
		fprintf(stderr, "jobtrace %s: --source '%s': expected sqlite, clickhouse"
			" or clickhouse:NAME\n", cmd, source);
		return -EINVAL;
	}
	return 0;
}

/*
 * The store is root's: the agent answers cmd with what we may see.
 * Returns the exit status.
 */
static int agent_query(struct cli *c, const char *cmd,
		       const struct report_query *q, const char *format)
{
	int why = errno, err;

	err = query_request(config_socket_path(&c->cfg), cmd, q, format,
			       stdout, stderr);
	if (err >= 0)
		return err;
	fprintf(stderr, "jobtrace %s: cannot read the store %s (%s) nor reach"
		" jobtraced at %s: %s (is the agent running?)\n", cmd,
		c->cfg.sqlite_path, strerror(why), config_socket_path(&c->cfg),
		strerror(-err));
	return 1;
}

/* After printing: 0, or 1 with a message when stdout failed. */
static int stdout_done(const char *who)
{
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "%s: writing output: %s\n", who, strerror(errno));
		return 1;
	}
	return 0;
}

#define STORE_WAIT_MS 5000	/* for the store to have what ended */
#define STORE_POLL_MS 20

/* A "name: number" line of an agent's reply; false when absent. */
static bool reply_u64(const char *reply, const char *name, uint64_t *v)
{
	size_t n = strlen(name);
	const char *l = reply;

	while (l && *l) {
		if (!strncmp(l, name, n) && l[n] == ':' && l[n + 1] == ' ') {
			*v = strtoull(l + n + 2, NULL, 10);
			return true;
		}
		l = strchr(l, '\n');
		if (l)
			l++;
	}
	return false;
}

/*
 * Before reading the local store: the agent sends what has ended to its
 * sinks now, and we wait (at most STORE_WAIT_MS) until the store holds
 * every record the agent had then, so that a report asked for straight
 * after a job's end sees all of it.  Says so on stderr when the store is
 * still behind; an agent that does not answer has nothing more to send.
 */
static void store_catch_up(struct cli *c, const char *who)
{
	uint64_t spooled, stored, pending = 0, t0 = util_now_ns(CLOCK_MONOTONIC);
	char *reply = NULL;
	double waited;

	if (request_text(c, "flush", 1000, &reply) || strncmp(reply, "ok\n", 3) ||
	    !reply_u64(reply, "spooled", &spooled) ||
	    !reply_u64(reply, "stored", &stored))
		goto out;
	reply_u64(reply, "pending", &pending);
	/* a Slurm job's end record waits for slurmctld's final state */
	while ((stored < spooled || pending) &&
	       util_now_ns(CLOCK_MONOTONIC) - t0 < STORE_WAIT_MS * 1000000ull) {
		usleep(STORE_POLL_MS * 1000);
		free(reply);
		if (request_text(c, "flush", 1000, &reply) ||
		    !reply_u64(reply, "spooled", &spooled) ||
		    !reply_u64(reply, "stored", &stored))
			break;
		pending = 0;
		reply_u64(reply, "pending", &pending);
	}
	waited = (util_now_ns(CLOCK_MONOTONIC) - t0) / 1e9;
	if (reply && pending)
		fprintf(stderr, "%s: warning: %llu job record(s) still wait for"
			" slurmctld's final state after %.1f s (a job's end record"
			" is written when slurmctld says how it ended, at most 60 s"
			" after its epilog): this answer may show such a job as"
			" running\n", who, (unsigned long long)pending, waited);
	if (reply && stored < spooled) {
		char *st = reply ? strstr(reply, "store_state: ") : NULL;

		if (st)
			st[strcspn(st, "\n")] = '\0';
		fprintf(stderr, "%s: warning: the store %s is %llu records behind"
			" the agent after waiting %.1f s (%s): this answer may be"
			" incomplete (jobtrace status: sink.sqlite.*)\n", who,
			c->cfg.sqlite_path,
			(unsigned long long)(spooled - stored), waited,
			st ? st : "no answer");
	}
out:
	free(reply);
}

/*
 * Answer cmd (report, export, rightsize, cost) for q in format (its
 * --format word) from source: a ClickHouse sink; the agent, for a user who
 * may not read the store (it answers with what they may see); else the
 * store.  Returns the exit status.
 */
static int answer(struct cli *c, const char *cmd, const char *source,
		  const struct report_query *q, const char *format)
{
	static const struct { const char *cmd; enum chq_what what; } whats[] = {
		{ "export", CHQ_EXPORT }, { "cost", CHQ_COST },
		{ "rightsize", CHQ_JOBS }, { "report", CHQ_REPORT },
	};
	enum chq_what what = CHQ_REPORT;
	struct store *st = NULL;
	const char *sink;
	char where[1024], who[32];
	int err;

	snprintf(who, sizeof(who), "jobtrace %s", cmd);
	if (source_parse(cmd, source, &sink))
		return EXIT_USAGE;
	for (size_t i = 0; i < sizeof(whats) / sizeof(whats[0]); i++)
		if (!strcmp(cmd, whats[i].cmd))
			what = whats[i].what;
	if (strcmp(source, "sqlite")) {
		st = clickhouse_store(c, cmd, sink, q, what, where,
				      sizeof(where), &err);
		if (!st)
			return err;
	}
	if (!strcmp(source, "sqlite"))
		store_catch_up(c, who);
	if (st) {
		/* read from ClickHouse */
	} else if (geteuid() != 0 && access(c->cfg.sqlite_path, R_OK)) {
		err = agent_query(c, cmd, q, format);
		return stdout_done(who) ? 1 : err;
	} else if (store_open(c->cfg.sqlite_path, true, &st)) {
		return 1;
	} else {
		util_strlcpy(where, c->cfg.sqlite_path, sizeof(where));
	}
	err = query_answer(st, where, cmd, q, format, stdout) ? 1 : 0;
	store_close(st);
	return stdout_done(who) ? 1 : err;
}

/* `report` and `export`: parse the selector and format, then read the store. */
static int cmd_report(struct cli *c, int argc, char **argv, bool export)
{
	static const struct option opts[] = {
		{ "job", required_argument, NULL, 'j' },
		{ "run", required_argument, NULL, 'r' },
		{ "pipeline", required_argument, NULL, 'P' },
		{ "since", required_argument, NULL, 's' },
		{ "pid", required_argument, NULL, 'p' },
		{ "format", required_argument, NULL, 'f' },
		{ "no-tree", no_argument, NULL, 'T' },
		{ "source", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *name = export ? "export" : "report";
	const char *source = "sqlite";
	enum report_format fmt = export ? REPORT_NDJSON : REPORT_TEXT;
	struct report_query q = { 0 };
	int opt, nsel = 0, err;
	bool have_format = false;
	char *end;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		err = selector_opt(name, opt, &q);
		if (err < 0)
			return EXIT_USAGE;
		nsel += err;
		switch (err ? 0 : opt) {
		case 0:
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
			if (storeq_format_parse(optarg, &fmt) ||
			    (export != (fmt == REPORT_NDJSON)) ||
			    fmt == REPORT_CSV) {
				fprintf(stderr, "jobtrace %s: --format '%s': expected %s\n",
					name, optarg, export ? "ndjson" : "text, json or html");
				return EXIT_USAGE;
			}
			have_format = true;
			break;
		case 'T':
			if (export) {
				fprintf(stderr, "jobtrace export: --no-tree is for report only\n");
				return EXIT_USAGE;
			}
			q.no_tree = true;
			break;
		case 'S':
			source = optarg;
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
	if (nsel != 1 || (q.job && !*q.job) || (q.run && !*q.run) ||
	    (q.pipeline && !*q.pipeline)) {
		fprintf(stderr, "jobtrace %s: give exactly one of --job, --run,"
			" --pipeline, --since%s (not empty)\n", name,
			export ? "" : ", --pid");
		return EXIT_USAGE;
	}
	if (export && !have_format) {
		fprintf(stderr, "jobtrace export: --format ndjson is required\n");
		return EXIT_USAGE;
	}
	return answer(c, name, source, &q, storeq_format_name(fmt));
}

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
		put_lines(stdout, text);
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

/* `rules test`: load the rules locally and show their decision. */
static int cmd_rules(struct cli *c, int argc, char **argv)
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
	const char *usage_txt =
		"Usage: jobtrace rules test [--rules DIR] [--exe PATH] [--parent CMD]\n"
		"                           [--repeat N] [--argv-truncated] [--uid UID]\n"
		"                           [--job ID] [--not-system] -- ARGV...\n"
		"       jobtrace rules test [OPTIONS] --lines FILE\n"
		"\nShow what the rules decide for a command line, without the agent:\n"
		"include or exclude, tool, category, version, redacted argv, job fields.\n"
		"--rules tries a folder before it is installed (default: agent.rules_dir),\n"
		"--parent gives the parent's command line, --repeat N times the decision,\n"
		"--argv-truncated shows the command line as one the kernel cut (the last\n"
		"argument is the cut one).  --lines decides for every line of FILE (- for\n"
		"stdin), each a command line in shell words; blank lines and lines that\n"
		"begin with # are skipped.  The process runs as UID (default: yours),\n"
		"in job ID (default: none), and its program is a system file (root's, in\n"
		"root's folders: p.exe_system) unless --not-system says it is a user's.\n";
	struct rules_limits lim = { 64u << 20, 1000000ul,
				    c->cfg.rules_deadline_ms };
	const char *dir = c->cfg.rules_dir, *exe = NULL, *parent = NULL;
	const char *lines = NULL;
	struct made_proc *m = NULL, *pm = NULL;
	struct rules_input in = { 0 };
	struct rules *r = NULL;
	bool truncated = false, not_system = false;
	const char *job = NULL;
	long repeat = 0, uid = -1;
	char err[512], *end;
	int opt, rc = 1;

	if (argc < 2 || strcmp(argv[1], "test") != 0) {
		if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
			fputs(usage_txt, stdout);
			return 0;
		}
		fputs(usage_txt, stderr);
		return EXIT_USAGE;
	}
	argc--;
	argv++;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (opt) {
		case 'r':
			dir = optarg;
			break;
		case 'e':
			exe = optarg;
			break;
		case 'p':
			parent = optarg;
			break;
		case 'n':
			repeat = strtol(optarg, &end, 10);
			if (*end || repeat < 1 || repeat > 10000000) {
				fprintf(stderr, "jobtrace rules test: --repeat '%s': a count from 1 to 10000000\n",
					optarg);
				return EXIT_USAGE;
			}
			break;
		case 't':
			truncated = true;
			break;
		case 'l':
			lines = optarg;
			break;
		case 'u':
			errno = 0;
			uid = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || uid < 0 ||
			    uid > (long)UINT32_MAX - 1) {
				fprintf(stderr, "jobtrace rules test: --uid '%s': a user id from 0 to %u\n",
					optarg, UINT32_MAX - 1);
				return EXIT_USAGE;
			}
			break;
		case 'j':
			if (!*optarg || strlen(optarg) >= sizeof(m->p.job.id)) {
				fprintf(stderr, "jobtrace rules test: --job '%s': 1 to %zu bytes\n",
					optarg, sizeof(m->p.job.id) - 1);
				return EXIT_USAGE;
			}
			job = optarg;
			break;
		case 's':
			not_system = true;
			break;
		case 'h':
			fputs(usage_txt, stdout);
			return 0;
		default:
			fputs(usage_txt, stderr);
			return EXIT_USAGE;
		}
	}
	if (lines && optind < argc) {
		fprintf(stderr, "jobtrace rules test: --lines '%s' and a command line: give one\n",
			lines);
		return EXIT_USAGE;
	}
	if (!lines && optind >= argc) {
		fprintf(stderr, "jobtrace rules test: give the command line after --\n");
		return EXIT_USAGE;
	}
	m = calloc(2, sizeof(*m));
	if (!m)
		return 1;
	pm = &m[1];
	if (!lines && make_proc(m, argc - optind, argv + optind, exe)) {
		fprintf(stderr, "jobtrace rules test: command line too long\n");
		rc = EXIT_USAGE;
		goto out;
	}
	if (truncated)
		m->p.state |= JT_PS_ARGV_TRUNC;
	if (not_system)
		m->p.state &= ~JT_PS_EXE_SYSTEM;
	if (uid >= 0)
		m->p.uid = (uint32_t)uid;
	if (job) {
		util_strlcpy(m->p.job.scheduler, "test", sizeof(m->p.job.scheduler));
		util_strlcpy(m->p.job.id, job, sizeof(m->p.job.id));
	}
	if (rules_new(&lim, &r))
		goto out;
	if (rules_load_dir(r, dir, err, sizeof(err))) {
		fprintf(stderr, "jobtrace rules test: %s\n", err);
		rc = EXIT_USAGE;
		goto out;
	}
	if (parent) {
		char *copy = strdup(parent), *words[64];
		int n = copy ? split_words(copy, words, 64) : 0;
		struct rules_input pin = { 0 };
		struct rules_decision pd;

		if (n == 0 || make_proc(pm, n, words, NULL)) {
			fprintf(stderr, "jobtrace rules test: --parent '%s': not a command line\n",
				parent);
			free(copy);
			rc = EXIT_USAGE;
			goto out;
		}
		free(copy);
		pin.p = &pm->p;
		rules_classify(r, &pin, &pd);
		util_strlcpy(pm->p.tool_name, pd.tool, sizeof(pm->p.tool_name));
		rules_decision_free(&pd);
		in.anc[0] = &pm->p;
		in.nanc = 1;
	}
	in.p = &m->p;
	if (lines)
		rc = decide_lines(r, &in, m, lines, truncated, repeat);
	else
		rc = decide(r, &in, repeat);
out:
	rules_free(r);
	if (m) {
		made_proc_clear(&m[0]);
		made_proc_clear(&m[1]);
	}
	free(m);
	return rc;
}

/* `reload`: ask the agent to re-read its configuration and rules. */
static int cmd_reload(struct cli *c, int argc, char **argv)
{
	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("Usage: jobtrace reload\n\nMake the agent re-read its configuration and "
		       "rules now; a broken rule file is reported with FILE:LINE and the "
		       "running rules stay.\n");
		return 0;
	}
	if (argc > 1) {
		fprintf(stderr, "jobtrace reload: unexpected argument '%s'\n", argv[1]);
		return EXIT_USAGE;
	}
	return ask_agent(c, "reload");
}

/* Print the usage of cost. */
static void cost_usage(FILE *out)
{
	fprintf(out,
		"Usage: jobtrace cost (--since TIME | --job ID | --run R)\n"
		"                     [--by job|task|tool|user|account|cost-center]\n"
		"                     [--format text|json|csv] [--source sqlite|clickhouse[:NAME]]\n"
		"\nWhat the selected jobs cost, from the cost of their `job` end records\n"
		"(one per host a job ran on: the agent prices them, see cost in\n"
		"jobtrace.conf(5)); nothing is priced here.\n"
		"  --job ID    that job, on every host\n"
		"  --run R     the jobs whose job.run is R, all of them; and the jobs\n"
		"              whose processes carry job.run R: their part only\n"
		"  --since T   the jobs that ended at T or later, plus idle nodes\n"
		"\nWithin a job, its cost is split over its process records by their own\n"
		"CPU time (cpu.user_s + cpu.sys_s); a job whose processes have no CPU\n"
		"puts it on \"(no process)\".  --by task (job.task, else \"(none)\") and\n"
		"--by tool (the tool as report names it) group those parts; --by job\n"
		"(the default), user, account and cost-center group whole jobs.  The\n"
		"TOTAL is the same for every --by: nothing is counted twice or dropped.\n"
		"\nIDLE: the part of the cost that paid for allocated CPUs left unused,\n"
		"cost x (1 - min(1, cpu_s / (cpus x elapsed_s))) for a job with an\n"
		"allocation (cpu_s: usage.cpu_s of its end record, else its processes'),\n"
		"split like the cost: each step's share of its job's idle allocation.\n"
		"\nIdle nodes (--since): per host, price.per_hour of its `host` records\n"
		"times the time in [TIME, now] its agent was up (a start record to its\n"
		"stop; after an unseen end, up to its last record) and no job of that\n"
		"host ran (the union of the jobs' start to end, a running job to now).\n"
		"Shown as rows \"idle node HOST\" and counted in the TOTAL.\n"
		"\nNot counted, but listed: jobs whose cost.amount is null (with the note\n"
		"that says why), hosts without a price, running jobs (no end record\n"
		"yet).  Amounts in different currencies are never added: one TOTAL per\n"
		"currency.\n"
		"\n--format text (the answer first: totals and top groups, then the\n"
		"table), json, or csv (a header row; numbers unformatted).\n"
		"\nA user who may not read the store gets the answer from the agent,\n"
		"with only their own jobs (no idle nodes).\n"
		"\nTIME: RFC 3339 (2026-11-22T10:00:00Z), 'YYYY-MM-DD[ hh:mm[:ss]]' (UTC),\n"
		"@EPOCH, or a relative 90s, 15m, 2h, 3d before now.\n"
		"--source: as for jobtrace report (see jobtrace report --help).\n"
		"See doc/cost.md for the formulas.\n");
}

/* `cost`: the selector, grouping and format, then the store or the agent. */
static int cmd_cost(struct cli *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "job", required_argument, NULL, 'j' },
		{ "run", required_argument, NULL, 'r' },
		{ "since", required_argument, NULL, 's' },
		{ "by", required_argument, NULL, 'b' },
		{ "format", required_argument, NULL, 'f' },
		{ "source", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *source = "sqlite";
	enum report_format fmt = REPORT_TEXT;
	struct report_query q = { 0 };
	enum costq_by by;
	int opt, nsel = 0, err;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		err = selector_opt("cost", opt, &q);
		if (err < 0)
			return EXIT_USAGE;
		nsel += err;
		switch (err ? 0 : opt) {
		case 0:
			break;
		case 'b':
			if (costq_by_parse(optarg, &by)) {
				fprintf(stderr, "jobtrace cost: --by '%s': expected job,"
					" task, tool, user, account or cost-center\n",
					optarg);
				return EXIT_USAGE;
			}
			q.by = optarg;
			break;
		case 'f':
			if (storeq_format_parse(optarg, &fmt) ||
			    (fmt != REPORT_TEXT && fmt != REPORT_JSON &&
			     fmt != REPORT_CSV)) {
				fprintf(stderr, "jobtrace cost: --format '%s': expected"
					" text, json or csv\n", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'S':
			source = optarg;
			break;
		case 'h':
			cost_usage(stdout);
			return 0;
		default:
			cost_usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "jobtrace cost: unexpected argument '%s'\n",
			argv[optind]);
		return EXIT_USAGE;
	}
	if (nsel != 1 || (q.job && !*q.job) || (q.run && !*q.run) ||
	    q.since < 0) {
		fprintf(stderr, "jobtrace cost: give exactly one of --since, --job,"
			" --run (not empty)\n");
		return EXIT_USAGE;
	}
	return answer(c, "cost", source, &q, storeq_format_name(fmt));
}

/* `schema clickhouse`: print the DDL of the ClickHouse tables;
 * `schema markdown`: the field tables of doc/records.md. */
static int cmd_schema(struct cli *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "database", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *usage_txt =
		"Usage: jobtrace schema clickhouse [--database DB]\n"
		"       jobtrace schema markdown\n"
		"\nclickhouse: print the statements that create the ClickHouse database and\n"
		"the tables the clickhouse sinks write into (one per record type), e.g.\n"
		"  jobtrace schema clickhouse | clickhouse-client --multiquery\n"
		"--database: default the database of the first clickhouse sink of the\n"
		"configuration, else jobtrace.\n"
		"markdown: print every record type's fields (the tables of records.md).\n";
	const struct jt_sink_config *s;
	const char *db = NULL;
	int opt;

	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		fputs(usage_txt, stdout);
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "markdown")) {
		schema_print_markdown(stdout);
		return stdout_done("jobtrace schema");
	}
	if (argc < 2 || strcmp(argv[1], "clickhouse") != 0) {
		if (argc >= 2)
			fprintf(stderr, "jobtrace schema: unknown target '%s'\n", argv[1]);
		fputs(usage_txt, stderr);
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
			fputs(usage_txt, stdout);
			return 0;
		default:
			fputs(usage_txt, stderr);
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
	return stdout_done("jobtrace schema");
}

/* Print the usage of rightsize. */
static void rightsize_usage(FILE *out)
{
	fprintf(out,
		"Usage: jobtrace rightsize (--pipeline P | --run ID | --job ID | --since TIME)\n"
		"                          [--format text|nextflow|snakemake|slurm|json]\n"
		"                          [--source sqlite|clickhouse[:NAME]]\n"
		"\nPer workflow task (job.task: a Snakemake rule, a Nextflow process) of the\n"
		"selected processes: the runs seen, what was requested, what was used and\n"
		"the resources to ask for next time.\n"
		"\n  instance   one execution: the topmost process with the task and its\n"
		"             descendants with the same task and job; the job, when the\n"
		"             job's processes with a task make that one instance alone;\n"
		"             a submitting client (sbatch, qsub, bsub, aws batch\n"
		"             submit-job: tool category scheduler-helper) is none\n"
		"  runs       distinct job.run values of its instances (else job ids)\n"
		"  requested  own job: its allocation (cpus, memory); else unknown\n"
		"  memory     own job: the job's memory peak (its cgroup's); else the\n"
		"             largest sum of peak RSS of the instance's processes alive\n"
		"             together, workflow-engine processes left out (Snakemake's\n"
		"             own python in a job script is not the rule's command)\n"
		"  cores      the instance's CPU seconds / its wall time\n"
		"  wall       the instance's last end - its first start\n"
		"  p95        nearest rank over the instances\n"
		"\nRecommended, from %d runs on (fewer: a line says so, no setting):\n"
		"  %s\n"
"\n--format\n"
		"  text       the settings, then a table of runs, requested, used, recommended\n"
		"  nextflow   a config for nextflow -c: process { withName: 'T' { cpus = N;\n"
		"             memory = 'N MB'; time = 'Nm' } } (Nextflow's MB is 1024 KB)\n"
		"  snakemake  a profile's config.yaml (snakemake --profile DIR):\n"
		"             set-threads: [\"RULE=N\"], set-resources: [\"RULE:mem_mb=N\",\n"
		"             \"RULE:mem_mib=N\", \"RULE:runtime=MIN\"]; mem_mb is Snakemake's\n"
		"             MB (1000000 bytes), rounded up\n"
		"  slurm      TASK: sbatch --cpus-per-task=N --mem=NM --time=MIN (M: MiB)\n"
		"  json       every figure, recommendation null with a note when too few\n"
		"\n--pipeline P  processes whose job.pipeline is P: the job's (jobtrace run\n"
		"              --pipeline, a hook's, SPANK's --trace-pipeline); without\n"
		"              one the rules name Snakemake's \"snakemake\", Nextflow's\n"
		"              \"nextflow\"\n"
		"--run ID      processes whose job.run is ID (one run: too few to recommend)\n"
		"--since TIME  processes that ended (or started) since TIME: RFC 3339,\n"
		"              'YYYY-MM-DD[ hh:mm[:ss]]' (UTC), @EPOCH, or 90s, 15m, 2h, 3d ago\n"
		"--source      sqlite (this node's store, the default), clickhouse or\n"
		"              clickhouse:NAME (a clickhouse sink of the configuration)\n",
		RIGHTSIZE_MIN_RUNS, RIGHTSIZE_RULE);
}

/* `rightsize`: the resources to ask for, per workflow task. */
static int cmd_rightsize(struct cli *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "pipeline", required_argument, NULL, 'P' },
		{ "run", required_argument, NULL, 'r' },
		{ "job", required_argument, NULL, 'j' },
		{ "since", required_argument, NULL, 's' },
		{ "format", required_argument, NULL, 'f' },
		{ "source", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *source = "sqlite", *word = "text";
	enum rightsize_format fmt;
	struct report_query q = { 0 };
	int opt, nsel = 0, rc;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		rc = selector_opt("rightsize", opt, &q);
		if (rc < 0)
			return EXIT_USAGE;
		nsel += rc;
		switch (rc ? 0 : opt) {
		case 0:
			break;
		case 'f':
			if (rightsize_format_parse(optarg, &fmt)) {
				fprintf(stderr, "jobtrace rightsize: --format '%s': expected"
					" text, nextflow, snakemake, slurm or json\n", optarg);
				return EXIT_USAGE;
			}
			word = optarg;
			break;
		case 'S':
			source = optarg;
			break;
		case 'h':
			rightsize_usage(stdout);
			return 0;
		default:
			rightsize_usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "jobtrace rightsize: unexpected argument '%s'\n",
			argv[optind]);
		return EXIT_USAGE;
	}
	if (nsel != 1 || (q.run && !*q.run) || (q.pipeline && !*q.pipeline) ||
	    (q.job && !*q.job)) {
		fprintf(stderr, "jobtrace rightsize: give exactly one of --pipeline,"
			" --run, --job, --since (not empty)\n");
		return EXIT_USAGE;
	}
	return answer(c, "rightsize", source, &q, word);
}

/* Print the usage of prices. */
static void prices_usage(FILE *out)
{
	fputs("Usage: jobtrace prices import [--region R]... [--output FILE] OFFER_FILE\n"
	      "\n"
	      "Make the price table that cost.prices_file names from AWS's Price List\n"
	      "bulk offer file for EC2 (AmazonEC2), CSV or JSON, told apart by its\n"
	      "content.  All regions' (or index.json in its place):\n"
	      "  https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonEC2/current/index.csv\n"
	      "one region's: its URL in .../AmazonEC2/current/region_index.json.\n"
	      "Nothing needs the network at run time.\n"
	      "It keeps each instance type's on-demand price in each region: term\n"
	      "OnDemand, usage type BoxUsage, Linux, shared tenancy, no pre-installed\n"
	      "software, capacity status Used, USD per hour.  One price per region and\n"
	      "type: two different ones are an error naming both SKUs.\n"
	      "\n"
	      "  --region R     only region R (a code: us-east-1); repeat for more\n"
	      "  --output FILE  write the table to FILE (a new file renamed over it:\n"
	      "                 readers never see half a table); default stdout\n"
	      "\n"
	      "The table: '#' comments, then one line per region and instance type,\n"
	      "TAB separated: region instance_type on_demand_per_hour spot_per_hour\n"
	      "currency.  spot_per_hour is '-' (unknown): AWS's bulk offer file has no\n"
	      "spot prices.  An admin may fill it in (or edit any line); while it is\n"
	      "'-', a spot instance's cost stays null, never the on-demand price.\n"
	      "A summary goes to stderr: rows read, prices kept, regions, types.\n"
	      "\n"
	      "Exit status: 0 ok, 1 the offer file is unusable (the message says\n"
	      "where: FILE:LINE for CSV, the JSON path) or the output cannot be\n"
	      "written, 2 bad usage.\n", out);
}

/* `prices import`: the price table from AWS's EC2 offer file. */
static int cmd_prices(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "region", required_argument, NULL, 'r' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *who = "jobtrace prices import", *output = NULL, *path;
	struct prices_table t = { 0 };
	const char **regions;
	size_t nregions = 0;
	char err[1024];
	int opt, rc = EXIT_USAGE;

	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		prices_usage(stdout);
		return 0;
	}
	if (argc < 2 || strcmp(argv[1], "import") != 0) {
		if (argc >= 2)
			fprintf(stderr, "jobtrace prices: unknown command '%s'\n",
				util_printable(argv[1]));
		prices_usage(stderr);
		return EXIT_USAGE;
	}
	argc--;
	argv++;
	regions = calloc((size_t)argc, sizeof(*regions));
	if (!regions)
		return 1;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (opt) {
		case 'r':
			if (!prices_import_region_ok(optarg)) {
				fprintf(stderr, "%s: --region '%s': not a region code"
					" (like us-east-1)\n", who,
					util_printable(optarg));
				goto out;
			}
			regions[nregions++] = optarg;
			break;
		case 'o':
			if (!*optarg) {
				fprintf(stderr, "%s: --output: empty file name\n", who);
				goto out;
			}
			output = optarg;
			break;
		case 'h':
			prices_usage(stdout);
			rc = 0;
			goto out;
		default:
			prices_usage(stderr);
			goto out;
		}
	}
	if (optind != argc - 1) {
		if (optind < argc)
			fprintf(stderr, "%s: unexpected argument '%s'\n", who,
				util_printable(argv[optind + 1]));
		else
			fprintf(stderr, "%s: which offer file? (OFFER_FILE)\n", who);
		goto out;
	}
	path = argv[optind];
	rc = 1;
	if (prices_import_file(&t, path, regions, nregions, err, sizeof(err)) ||
	    (output && prices_import_save(&t, output, err, sizeof(err)))) {
		fprintf(stderr, "%s: %s\n", who, util_printable(err));
		goto out;
	}
	if (!output) {
		prices_import_write(&t, stdout);
		if (stdout_done(who))
			goto out;
	}
	fprintf(stderr, "%s: %s (%s, %s version %s, published %s): %zu %s read,"
		" %zu prices kept (%zu of zero left out), %zu regions, %zu"
		" instance types -> %s\n", who, util_printable((char *)path),
		t.json ? "JSON" : "CSV", t.offer, t.version, t.published, t.read,
		t.json ? "products" : "rows", t.n, t.zero, t.regions, t.types,
		output ? util_printable((char *)output) : "stdout");
	rc = 0;
out:
	prices_import_free(&t);
	free(regions);
	return rc;
}

/* Report a hook's failure: one line on stderr and in syslog. */
static void hook_log(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void hook_log(const char *cmd, const char *fmt, ...)
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

/* Print the usage of the job hooks. */
static void job_usage(FILE *out)
{
	fprintf(out,
		"Usage: jobtrace job-start --job ID [--scheduler S] [--step S] [--user U] [--uid N]\n"
		"                          [--account A] [--partition P] [--run R] [--pipeline P]\n"
		"                          [--task T] [--cost-center C] [--cpus N] [--mem-mb N]\n"
		"                          [--gpus N] [--node NAME] [--cgroup PATH] [--name NAME]\n"
		"                          [--time-limit SECONDS|[D-]HH:MM:SS] [--pid PID]\n"
		"       jobtrace job-end --job ID [--exit-code N] [--signal N] [--state S]\n"
		"       jobtrace job-update --job ID [--run R] [--pipeline P] [--step S] [--task T]\n"
		"                           [--cost-center C]\n"
		"  common: [--strict] [--timeout-ms N] (default 500)\n"
		"\nTell the agent that a job started, ended or belongs to a workflow run.\n"
		"Hooks never fail a job: without --strict the exit status is always 0 and a\n"
		"problem (agent down, slow, refused, bad argument) is one line on stderr and\n"
		"in syslog.  With --strict it is 1 (2 for bad arguments).  Only root or\n"
		"agent.control_group may change jobs, but for a user's own processes.\n"
		"\n--pid PID ties the process PID, its descendants running now and every one\n"
		"it starts from now on to the job (where no cgroup tells the job); the job's\n"
		"uid is PID's unless --uid says.  A user without control rights may tie only\n"
		"processes of their own, to a job of their own: ID is kept as user:UID:ID,\n"
		"which no scheduler's job and no other user's can be, the job's user is\n"
		"theirs, and slurm and aws-batch are not theirs to name.\n"
		"\n--exit-code N --signal N say how the job ended, as Slurm's ExitCode\n"
		"N:N; --state S in Slurm's words (COMPLETED, FAILED, CANCELLED, TIMEOUT,\n"
		"OUT_OF_MEMORY, NODE_FAIL, PREEMPTED, BOOT_FAIL, DEADLINE).  Without --state\n"
		"the agent asks slurmctld for a Slurm job's, else its exit tells it.\n"
		"Without --scheduler a hook means the running job with that id; a new job\n"
		"is 'local' with --pid, else 'slurm'.\n");
}

/* Print the usage of run. */
static void run_usage(FILE *out)
{
	fprintf(out,
		"Usage: jobtrace run --job ID [--scheduler S] [--run R] [--pipeline P]\n"
		"                    [--cost-center C] [--user U] [--account A] [--task T]\n"
		"                    [--cpus N] [--mem-mb N] [--gpus N] [--name NAME]\n"
		"                    [--time-limit SECONDS|[D-]HH:MM:SS] ...\n"
		"                    [--strict] [--timeout-ms N] -- COMMAND [ARGS...]\n"
		"\nRun COMMAND as the job ID: it and every process below it carry the job's\n"
		"fields.  The job is registered (scheduler 'local' unless --scheduler, user\n"
		"and uid the caller's unless given), COMMAND runs as a child, and when it\n"
		"ends the job ends with its exit code and signal (state COMPLETED, FAILED,\n"
		"OUT_OF_MEMORY, or CANCELLED when the wrapper was asked to stop).  The exit\n"
		"status is COMMAND's, 128 + N when a signal N killed it, 127 when it was\n"
		"not found.  SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 are\n"
		"passed on to COMMAND.  If the agent is down or refuses, COMMAND runs all\n"
		"the same (one line on stderr), unless --strict: then the status is 1 and\n"
		"COMMAND does not run.  Bad arguments: status 2, COMMAND does not run.  A\n"
		"user without control rights runs their own job, kept as user:UID:ID\n"
		"(their report --job ID finds it).  The job options are job-start's\n"
		"(jobtrace job-start --help).\n");
}

/*
 * Send a hook's request: 0 with the reply in *reply (when reply is not
 * NULL; the caller frees it), or 1 after one line on stderr and syslog
 * ending in unaffected (what happens to the job).
 */
static int hook_send(struct cli *c, const char *cmd, const struct hookargs *h,
		     const char *unaffected, char **reply)
{
	char *r = NULL;
	int err = request_text(c, h->line, (int)h->timeout_ms, &r);

	if (err) {
		hook_log(cmd, "agent at %s not reachable: %s%s", config_socket_path(&c->cfg),
			 strerror(-err), unaffected);
		return 1;
	}
	if (strncmp(r, "ok\n", 3) != 0) {
		r[strcspn(r, "\n")] = '\0';
		util_printable(r);
		hook_log(cmd, "agent refused: %s%s", strncmp(r, "error ", 6) ? r : r + 6,
			 unaffected);
		free(r);
		return 1;
	}
	if (reply)
		*reply = r;
	else
		free(r);
	return 0;
}

/* job-start, job-end, job-update: one request to the agent, never blocking long. */
static int cmd_job(struct cli *c, int argc, char **argv, const char *cmd)
{
	struct hookargs h;
	char err[512];

	if (hookargs_parse(&h, cmd, argc, argv, err, sizeof(err))) {
		hook_log(cmd, "%s", err);
		return h.strict ? EXIT_USAGE : 0;
	}
	if (h.help) {
		job_usage(stdout);
		return 0;
	}
	if (hook_send(c, cmd, &h, h.strict ? "" : " (job not affected)", NULL))
		return h.strict ? 1 : 0;
	return 0;
}

/* run: register the job for this process, run the command, end the job. */
static int cmd_run(struct cli *c, int argc, char **argv)
{
	const char *sched;
	struct hookargs h;
	char err[512], num[32], *reply = NULL;
	struct jobrun_end end;
	bool registered = false;
	int rc;

	if (hookargs_parse(&h, "run", argc, argv, err, sizeof(err))) {
		fprintf(stderr, "jobtrace run: %s\n", err);
		return EXIT_USAGE;
	}
	if (h.help) {
		run_usage(stdout);
		return 0;
	}
	sched = h.scheduler && *h.scheduler ? h.scheduler : "local";
	snprintf(num, sizeof(num), "%ld", (long)getpid());
	rc = hookargs_add(&h, "pid", num);
	if (!rc && !h.scheduler)
		rc = hookargs_add(&h, "scheduler", sched);
	if (!rc && !h.have_uid) {
		snprintf(num, sizeof(num), "%u", (unsigned)getuid());
		rc = hookargs_add(&h, "uid", num);
	}
	if (!rc && !h.have_user) {
		struct passwd *pw = getpwuid(getuid());

		if (pw && pw->pw_name)
			rc = hookargs_add(&h, "user", pw->pw_name);
	}
	if (rc) {
		fprintf(stderr, "jobtrace run: arguments too long\n");
		return EXIT_USAGE;
	}
	if (c->no_agent) {
		/* said in main */
	} else if (hook_send(c, "run", &h, h.strict ? "" : " (the command runs untraced)",
			     &reply)) {
		if (h.strict)
			return 1;
	} else {
		/* a job this run joined is not this run's to end */
		registered = strstr(reply, " registered\n") != NULL;
		free(reply);
	}
	rc = jobrun_command(argv + h.cmd_index, "jobtrace run", &end);
	if (rc < 0) {
		fprintf(stderr, "jobtrace run: cannot start %s: %s\n",
			argv[h.cmd_index], strerror(-rc));
		rc = 1;
		end = (struct jobrun_end){ .code = 1 };
	}
	if (registered) {
		struct hookargs e = { .timeout_ms = h.timeout_ms };
		char code[16], sig[16];

		/* as Slurm's ExitCode code:signal; stopped on request: CANCELLED */
		snprintf(code, sizeof(code), "%d", end.code);
		snprintf(sig, sizeof(sig), "%d", end.signal);
		e.len = (size_t)snprintf(e.line, sizeof(e.line), "job-end");
		if (!hookargs_add(&e, "job", h.job) &&
		    !hookargs_add(&e, "scheduler", sched) &&
		    !hookargs_add(&e, "exit_code", code) &&
		    !hookargs_add(&e, "signal", sig) &&
		    (!end.cancelled || !hookargs_add(&e, "state", "CANCELLED")))
			hook_send(c, "run", &e, " (the job stays open in the agent)", NULL);
	}
	return rc;
}

/* run without a configuration: the command, and its status. */
static int finish_run(struct cli *c, int argc, char **argv)
{
	int rc = cmd_run(c, argc, argv);

	config_free(&c->cfg);
	return rc;
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
	/* reads no configuration: works where there is none yet */
	if (!strcmp(cmd, "prices"))
		return cmd_prices(argc - i, argv + i);
	if (config_defaults(&c.cfg))
		return 1;
	if (config_load(&c.cfg, c.config_path, !c.config_explicit, err,
			sizeof(err))) {
		bool strict = false;

		/* run's command may have a --strict of its own */
		for (int k = i + 1; k < argc && strcmp(argv[k], "--"); k++)
			strict |= !strcmp(argv[k], "--strict");
		config_free(&c.cfg);
		if (!strncmp(cmd, "job-", 4) && !strict) {
			/* a hook never fails a job, not even on a bad config */
			hook_log(cmd, "%s (job not affected)", err);
			return 0;
		}
		if (!strcmp(cmd, "run") && !strict && !config_defaults(&c.cfg)) {
			hook_log(cmd, "%s (the command runs untraced)", err);
			c.no_agent = true;
			return finish_run(&c, argc - i, argv + i);
		}
		fprintf(stderr, "jobtrace: %s\n", err);
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
	else if (!strcmp(cmd, "rightsize"))
		rc = cmd_rightsize(&c, argc, argv);
	else if (!strcmp(cmd, "cost"))
		rc = cmd_cost(&c, argc, argv);
	else if (!strcmp(cmd, "rules"))
		rc = cmd_rules(&c, argc, argv);
	else if (!strcmp(cmd, "reload"))
		rc = cmd_reload(&c, argc, argv);
	else if (!strcmp(cmd, "schema"))
		rc = cmd_schema(&c, argc, argv);
	else if (!strcmp(cmd, "job-start") || !strcmp(cmd, "job-end") ||
		 !strcmp(cmd, "job-update"))
		rc = cmd_job(&c, argc, argv, cmd);
	else if (!strcmp(cmd, "run"))
		rc = cmd_run(&c, argc, argv);
	else {
		fprintf(stderr, "jobtrace: unknown command '%s'\n", cmd);
		usage(stderr);
		rc = EXIT_USAGE;
	}
	config_free(&c.cfg);
	return rc;
}
