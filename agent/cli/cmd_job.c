// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cmd_job.c - the job hooks (job-start, job-end, job-update) and `jobtrace
 * run`: one request to the agent each, never failing a job unless
 * --strict.
 */
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "hookargs.h"
#include "jobrun.h"
#include "util.h"

/* Usage of the job hooks. */
void cli_help_job(FILE *out)
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

/* Usage of run. */
void cli_help_run(FILE *out)
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
	int err = cli_request_text(c, h->line, (int)h->timeout_ms, &r);

	if (err) {
		cli_hook_log(cmd, "agent at %s not reachable: %s%s", config_socket_path(&c->cfg),
			 strerror(-err), unaffected);
		return 1;
	}
	if (strncmp(r, "ok\n", 3) != 0) {
		r[strcspn(r, "\n")] = '\0';
		util_printable(r);
		cli_hook_log(cmd, "agent refused: %s%s", strncmp(r, "error ", 6) ? r : r + 6,
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
int cli_run_job(struct cli *c, const struct cli_cmd *cmd, int argc,
		char **argv)
{
	struct hookargs h;
	char err[512];

	if (hookargs_parse(&h, cmd->name, argc, argv, err, sizeof(err))) {
		cli_hook_log(cmd->name, "%s", err);
		return h.strict ? EXIT_USAGE : 0;
	}
	if (h.help) {
		cli_help_job(stdout);
		return 0;
	}
	if (hook_send(c, cmd->name, &h, h.strict ? "" : " (job not affected)", NULL))
		return h.strict ? 1 : 0;
	return 0;
}

/* run: register the job for this process, run the command, end the job. */
int cli_run_run(struct cli *c, const struct cli_cmd *cmd, int argc,
		char **argv)
{
	const char *sched;
	struct hookargs h;
	char err[512], num[32], *reply = NULL;
	struct jobrun_end end;
	bool registered = false;
	int rc;

	(void)cmd;
	if (hookargs_parse(&h, "run", argc, argv, err, sizeof(err))) {
		fprintf(stderr, "jobtrace run: %s\n", err);
		return EXIT_USAGE;
	}
	if (h.help) {
		cli_help_run(stdout);
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
