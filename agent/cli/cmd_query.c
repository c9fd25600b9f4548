// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cmd_query.c - the commands that read stored records: report, export,
 * rightsize, cost and files.  Their options are checked by the query table
 * (qcmd.h) that the agent's socket uses too; the answer comes from a
 * ClickHouse sink, from the agent (a user who may not read the store) or
 * from the store.
 */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chquery.h"
#include "cli.h"
#include "query.h"
#include "rightsize.h"
#include "store.h"
#include "util.h"

/* What report's and export's usage say about TIME and --source. */
static void time_source_help(FILE *out)
{
	fprintf(out,
		"\nTIME: RFC 3339 (2026-11-22T10:00:00Z), 'YYYY-MM-DD[ hh:mm[:ss]]' (UTC),\n"
		"@EPOCH, or a relative 90s, 15m, 2h, 3d before now.\n"
		"\n--source where the records are read:\n"
		"  sqlite           this node's store, store.sqlite_path (the default)\n"
		"  clickhouse       the first clickhouse sink of the configuration: the\n"
		"                   whole fleet (its url, database, credentials_file, TLS)\n"
		"  clickhouse:NAME  the clickhouse sink named NAME\n");
}

/* Usage of export after its synopsis. */
void cli_help_export(FILE *out)
{
	fprintf(out,
		"\nPrint the selected schema v1 records, one JSON object per line.\n"
		"--run and --pipeline: the processes whose job.run (job.pipeline) is\n"
		"that, and every record of their jobs.\n");
	time_source_help(out);
}

/* Usage of report after its synopsis. */
void cli_help_report(FILE *out)
{
	fprintf(out,
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
	time_source_help(out);
}

/* Usage of cost after its synopsis. */
void cli_help_cost(FILE *out)
{
	fprintf(out,
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

/* Usage of sweep after its synopsis. */
void cli_help_sweep(FILE *out)
{
	fprintf(out,
		"\nWhat the fleet paid for that did no work in [TIME, now], from the\n"
		"stored records (every host's, so it needs to read the store):\n"
		"  nodes     per host, by idle time: the time its agent was up and no job\n"
		"            ran, priced at its host records' price.per_hour (as\n"
		"            jobtrace cost's idle nodes), and its node_idle signals\n"
		"  low CPU   hosts whose CPU over the period (the CPU of the process\n"
		"            records that ended in it, each clipped to it, over the up\n"
		"            time x price.node_cpus) stayed below 5 %%: a mean, not a peak\n"
		"  stuck     per host and job, the union of its processes' stalls (stall\n"
		"            signals: no CPU, I/O or network progress) from their last\n"
		"            progress to their end record (none: now), at the host's price\n"
		"  saved     per currency, idle nodes plus stuck jobs (a low-CPU host's\n"
		"            cost is shown, not added: its idle time is in it)\n"
		"\n--format text, json or csv (a header row; numbers unformatted).\n"
		"TIME and --source: as for jobtrace cost.\n");
}

/* Usage of files after its synopsis. */
void cli_help_files(FILE *out)
{
	fprintf(out,
		"\nThe files each selected process opened, from the files of its process\n"
		"record: how it opened them (read, write, create, append, truncate,\n"
		"directory, direct), the opens, the bytes read and written through\n"
		"them, the file's size when it closed it or exited (mmap: mapped, bytes\n"
		"not known; deleted: gone by then).  Regular files only; pipes and\n"
		"sockets are counted, and files beyond files.max_per_process are one\n"
		"line of their count and bytes.  A running process shows its progress\n"
		"from its latest sample (\"read 62%% of sample.fq.gz (3.1 of 5.0 GiB)\").\n"
		"\n  --job ID   the job's processes   --run R  the run's (job.run)\n"
		"  --pid PID  that process and its descendants\n"
		"  --task T   only the processes of workflow task T (job.task)\n"
		"\n--format text (per process), json (the processes, then \"data\": each\n"
		"task's inputs, outputs and temporary files, as report's Data section;\n"
		"see doc/reports.md) or csv (one row per process and file).\n"
		"--source: as for jobtrace report (see jobtrace report --help).\n");
}

/* Usage of rightsize after its synopsis. */
void cli_help_rightsize(FILE *out)
{
	fprintf(out,
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
		"  instances  instance types, priced by cost.prices_file: where each task\n"
		"             ran and its cost a month, the cheapest types that fit the\n"
		"             recommendation per region (on-demand, spot), the family\n"
		"             (GiB per vCPU: compute <= 2.83 < general < 5.66 <= memory),\n"
		"             arm64 only for a task seen on arm64 only, the saving a\n"
		"             month (30 days of the period's volume), AWS Batch\n"
		"             instanceTypes per compute environment\n"
		"  instances-json  the same as JSON\n"
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
		       const struct report_query *q, const char *format,
		       FILE *out)
{
	int why = errno, err;

	err = query_request(config_socket_path(&c->cfg), cmd, q, format,
			       out, stderr);
	if (err >= 0)
		return err;
	fprintf(stderr, "jobtrace %s: cannot read the store %s (%s) nor reach"
		" jobtraced at %s: %s (is the agent running?)\n", cmd,
		c->cfg.sqlite_path, strerror(why), config_socket_path(&c->cfg),
		strerror(-err));
	return 1;
}

/* Does this user ask the agent (the store is root's alone) rather than
 * read the store? */
bool cli_query_via_agent(const struct cli *c)
{
	return geteuid() != 0 && access(c->cfg.sqlite_path, R_OK);
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

	if (cli_request_text(c, "flush", 1000, &reply) || strncmp(reply, "ok\n", 3) ||
	    !reply_u64(reply, "spooled", &spooled) ||
	    !reply_u64(reply, "stored", &stored))
		goto out;
	reply_u64(reply, "pending", &pending);
	/* a Slurm job's end record waits for slurmctld's final state */
	while ((stored < spooled || pending) &&
	       util_now_ns(CLOCK_MONOTONIC) - t0 < STORE_WAIT_MS * 1000000ull) {
		usleep(STORE_POLL_MS * 1000);
		free(reply);
		if (cli_request_text(c, "flush", 1000, &reply) ||
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
 * Answer cmd (report, export, rightsize, cost, top, sweep) for q in
 * format (its --format word) on out from source: a ClickHouse sink; the
 * agent, for a user who may not read the store (it answers with what they
 * may see); else the store.  Returns the exit status.
 */
int cli_query_answer(struct cli *c, const struct qcmd *qc,
		     const char *source, const struct report_query *q,
		     const char *format, FILE *out)
{
	const char *cmd = qc->name;
	struct store *st = NULL;
	const char *sink;
	char where[1024], who[32];
	int err;

	snprintf(who, sizeof(who), "jobtrace %s", cmd);
	if (source_parse(cmd, source, &sink))
		return EXIT_USAGE;
	if (strcmp(source, "sqlite")) {
		struct report_query fq = *q;

		fq.by_node = qc->by_node;
		st = clickhouse_store(c, cmd, sink, q, qc->what, where,
				      sizeof(where), &err);
		if (!st)
			return err;
		err = qc->run(st, where, &fq, format, out) ? 1 : 0;
		store_close(st);
	} else {
		store_catch_up(c, who);
		if (cli_query_via_agent(c))
			err = agent_query(c, cmd, q, format, out);
		else
			err = qcmd_run_path(qc, c->cfg.sqlite_path, q, format,
					    out) ? 1 : 0;
	}
	return out == stdout && cli_stdout_done(who) ? 1 : err;
}

/*
 * Parse the options of a query command by the query table: every option
 * any of them takes is known here, and the table says which this one
 * takes, so a message can name the commands that do.
 */
int cli_query_args(const struct cli_cmd *cmd, int argc, char **argv,
		   struct qcmd_args *a, const char **source)
{
	static const struct option opts[] = {
		{ "job", required_argument, NULL, 0 },
		{ "run", required_argument, NULL, 0 },
		{ "pipeline", required_argument, NULL, 0 },
		{ "since", required_argument, NULL, 0 },
		{ "pid", required_argument, NULL, 0 },
		{ "format", required_argument, NULL, 0 },
		{ "no-tree", no_argument, NULL, 0 },
		{ "by", required_argument, NULL, 0 },
		{ "task", required_argument, NULL, 0 },
		{ "source", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const struct qcmd *q = cli_cmd_query(cmd);
	double now = util_now_ns(CLOCK_REALTIME) / 1e9;
	int opt, i;
	char why[256];

	memset(a, 0, sizeof(*a));
	*source = "sqlite";
	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", opts, &i)) != -1) {
		if (opt == 'h') {
			cli_cmd_usage(stdout, cmd);
			return -1;
		}
		if (opt == 'S' && q->clickhouse) {
			*source = optarg;
			continue;
		}
		if (opt == '?' || opt == 'S') {
			cli_cmd_usage(stderr, cmd);
			return EXIT_USAGE;
		}
		if (qcmd_arg(q, QCMD_CLI, opts[i].name, optarg, now, a, why,
			     sizeof(why)))
			goto bad;
	}
	if (optind < argc) {
		fprintf(stderr, "jobtrace %s: unexpected argument '%s'\n",
			cmd->name, argv[optind]);
		return EXIT_USAGE;
	}
	if (!qcmd_done(q, QCMD_CLI, a, why, sizeof(why)))
		return 0;
bad:
	fprintf(stderr, "jobtrace %s: %s\n", cmd->name, why);
	return EXIT_USAGE;
}

/* report, export, rightsize, cost: the options, then the answer. */
int cli_run_query(struct cli *c, const struct cli_cmd *cmd, int argc,
		  char **argv)
{
	struct qcmd_args a;
	const char *source;
	int rc = cli_query_args(cmd, argc, argv, &a, &source);

	if (rc)
		return rc < 0 ? 0 : rc;
	a.q.prices_file = c->cfg.cost_prices_file;
	return cli_query_answer(c, cli_cmd_query(cmd), source, &a.q, a.format,
				stdout);
}
