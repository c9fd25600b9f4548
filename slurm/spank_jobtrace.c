// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * spank_jobtrace.c - SPANK plugin that carries a job's workflow identity
 * (run, pipeline, step, cost center) to jobtrace.
 *
 * sbatch/salloc/srun (allocator and local context): the options
 * --trace-run, --trace-pipeline, --trace-step and --cost-center, or else
 * the allowlisted variables JOBTRACE_RUN_ID, JOBTRACE_PIPELINE,
 * JOBTRACE_STEP and JOBTRACE_COST_CENTER of the submitting shell, are put
 * in the job control environment, where the prolog finds them as
 * SPANK_JOBTRACE_RUN, SPANK_JOBTRACE_PIPELINE, SPANK_JOBTRACE_STEP and
 * SPANK_JOBTRACE_COST_CENTER.
 *
 * slurmstepd (remote context, still root, before any task starts): the same
 * options, or else the same four variables read from the job's environment
 * (a workflow may export them inside its batch script before calling srun),
 * are sent with `jobtrace job-update`, run with fork+exec (no shell), a
 * minimal environment and a deadline.
 *
 * No other environment variable is read.  The plugin never fails a job
 * because jobtrace is missing, slow or down: it logs one line and goes on,
 * unless the administrator set strict=1.
 *
 * plugstack.conf (see slurm/README.md):
 *   optional /usr/lib/slurm/spank_jobtrace.so \
 *     jobtrace=/usr/bin/jobtrace config=/etc/jobtrace/jobtrace.conf strict=0
 * Optional argument: timeout_ms=N (the CLI's own timeout, default 500).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <slurm/spank.h>

SPANK_PLUGIN(jobtrace, 1);

#ifndef JOBTRACE_BIN
#define JOBTRACE_BIN "/usr/bin/jobtrace"
#endif

/* Step ids of slurm/slurm.h, repeated so that only spank.h is needed. */
#define JT_EXTERN_CONT 0xfffffffcU
#define JT_BATCH_SCRIPT 0xfffffffbU
#define JT_INTERACTIVE_STEP 0xfffffffaU

#define VAL_MAX 128		/* longest accepted run/pipeline/... value */
#define ERR_MAX 512		/* how much of the CLI's stderr is kept */
#define GRACE_MS 1000		/* on top of the CLI's own timeout */

/* One workflow field: its option, control env name, job env name, flag. */
struct field {
	const char *option;	/* sbatch/srun --OPTION=VALUE */
	const char *arginfo;
	const char *usage;
	const char *control;	/* prolog sees SPANK_<control> */
	const char *jobenv;	/* allowlisted job environment variable */
	const char *flag;	/* jobtrace job-update flag */
};

static const struct field fields[] = {
	{ "trace-run", "ID", "jobtrace: workflow run id of this job",
	  "JOBTRACE_RUN", "JOBTRACE_RUN_ID", "--run" },
	{ "trace-pipeline", "NAME", "jobtrace: pipeline this job belongs to",
	  "JOBTRACE_PIPELINE", "JOBTRACE_PIPELINE", "--pipeline" },
	{ "trace-step", "NAME", "jobtrace: workflow step this job runs",
	  "JOBTRACE_STEP", "JOBTRACE_STEP", "--step" },
	{ "cost-center", "NAME", "jobtrace: cost center charged for this job",
	  "JOBTRACE_COST_CENTER", "JOBTRACE_COST_CENTER", "--cost-center" },
};
#define NFIELDS (sizeof(fields) / sizeof(fields[0]))

/* Slurm keeps pointers to registered options: they must stay alive. */
static struct spank_option options[NFIELDS];
/* Values given with the options (set by opt_cb, in every context). */
static char opt_val[NFIELDS][VAL_MAX + 1];

/* Plugin arguments from plugstack.conf. */
static char jt_bin[PATH_MAX] = JOBTRACE_BIN;
static char jt_conf[PATH_MAX];
static int jt_strict;
static int jt_timeout_ms = 500;

/*
 * True if v is an acceptable value: 1..VAL_MAX printable ASCII characters
 * (the same rule as the prolog's, so both paths accept the same labels).
 */
static int valid_value(const char *v)
{
	size_t n = strlen(v);

	if (n == 0 || n > VAL_MAX)
		return 0;
	for (; *v; v++)
		if ((unsigned char)*v < 0x20 || (unsigned char)*v > 0x7e)
			return 0;
	return 1;
}

/* Option callback: remember the value; reject bad ones only at submit. */
static int opt_cb(int val, const char *optarg, int remote)
{
	if (val < 0 || (size_t)val >= NFIELDS)
		return 0;
	if (!optarg || !valid_value(optarg)) {
		if (remote) {
			/* never fail a running job over a label */
			slurm_error("jobtrace: ignoring invalid --%s value",
				    fields[val].option);
			return 0;
		}
		slurm_error("jobtrace: --%s needs 1 to %d printable ASCII characters",
			    fields[val].option, VAL_MAX);
		return -1;
	}
	snprintf(opt_val[val], sizeof(opt_val[val]), "%s", optarg);
	return 0;
}

/* Copy "key=value" argument a into dst if it starts with key=. */
static int take_arg(const char *a, const char *key, char *dst, size_t len)
{
	size_t k = strlen(key);

	if (strncmp(a, key, k) != 0 || a[k] != '=')
		return 0;
	snprintf(dst, len, "%s", a + k + 1);
	return 1;
}

/* Parse the plugstack.conf arguments; unknown ones are logged, not fatal. */
static void parse_args(int ac, char **av)
{
	char num[32];

	for (int i = 0; i < ac; i++) {
		if (take_arg(av[i], "jobtrace", jt_bin, sizeof(jt_bin)) ||
		    take_arg(av[i], "config", jt_conf, sizeof(jt_conf)))
			continue;
		if (take_arg(av[i], "strict", num, sizeof(num))) {
			jt_strict = atoi(num) != 0;
			continue;
		}
		if (take_arg(av[i], "timeout_ms", num, sizeof(num))) {
			int t = atoi(num);

			if (t > 0 && t <= 60000)
				jt_timeout_ms = t;
			continue;
		}
		slurm_error("jobtrace: unknown plugin argument '%.64s'", av[i]);
	}
}

/* Called in every context: read arguments, register the options. */
int slurm_spank_init(spank_t sp, int ac, char **av)
{
	spank_context_t ctx = spank_context();

	parse_args(ac, av);
	if (ctx != S_CTX_LOCAL && ctx != S_CTX_ALLOCATOR && ctx != S_CTX_REMOTE)
		return ESPANK_SUCCESS;
	for (size_t i = 0; i < NFIELDS; i++) {
		options[i] = (struct spank_option){
			.name = (char *)fields[i].option,
			.arginfo = (char *)fields[i].arginfo,
			.usage = (char *)fields[i].usage,
			.has_arg = 1,
			.val = (int)i,
			.cb = opt_cb,
		};
		if (spank_option_register(sp, &options[i]) != ESPANK_SUCCESS)
			slurm_error("jobtrace: cannot register --%s",
				    fields[i].option);
	}
	return ESPANK_SUCCESS;
}

/* Milliseconds on the monotonic clock. */
static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Child side of run_cli: clean signals and fds, exec argv. Never returns. */
static void exec_child(char *const argv[], int errfd)
{
	static char *const envp[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin",
				      "LC_ALL=C", NULL };
	sigset_t none;
	int dn;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	for (int s = 1; s < NSIG; s++)
		signal(s, SIG_DFL);
	dn = open("/dev/null", O_RDWR);
	if (dn < 0 || dup2(dn, 0) < 0 || dup2(dn, 1) < 0 ||
	    dup2(errfd, 2) < 0)
		_exit(126);
	closefrom(3);
	execve(argv[0], argv, envp);
	_exit(127);
}

/*
 * Run argv (argv[0] an absolute path) and wait at most deadline_ms for it.
 * The first line of its stderr goes to err.  Returns its exit status, or a
 * negative errno (-ETIMEDOUT when it was killed at the deadline).
 */
static int run_cli(char *const argv[], int deadline_ms, char *err, size_t len)
{
	int64_t end = now_ms() + deadline_ms;
	int pfd[2] = { -1, -1 };
	size_t got = 0;
	int status = 0;
	pid_t pid, w;
	int ret;

	err[0] = '\0';
	if (pipe2(pfd, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		ret = -errno;
		close(pfd[0]);
		close(pfd[1]);
		return ret;
	}
	if (pid == 0)
		exec_child(argv, pfd[1]);
	close(pfd[1]);

	/* read stderr until EOF (the child exited) or the deadline */
	for (;;) {
		struct pollfd p = { .fd = pfd[0], .events = POLLIN };
		int64_t left = end - now_ms();
		ssize_t n;

		if (left <= 0)
			break;
		if (poll(&p, 1, (int)left) <= 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (got + 1 < len)
			n = read(pfd[0], err + got, len - 1 - got);
		else {
			char sink[256];

			n = read(pfd[0], sink, sizeof(sink));
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (got + 1 < len)
			got += (size_t)n;
	}
	close(pfd[0]);
	err[got] = '\0';
	err[strcspn(err, "\n")] = '\0';

	/* the child closed stderr; give it until the deadline to exit */
	for (;;) {
		w = waitpid(pid, &status, WNOHANG);
		if (w == pid || (w < 0 && errno != EINTR))
			break;
		if (now_ms() >= end) {
			kill(pid, SIGKILL);
			while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
				;
			return -ETIMEDOUT;
		}
		usleep(5000);
	}
	if (w < 0)
		return errno == ECHILD ? 0 : -errno; /* SIGCHLD ignored */
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return -EINTR;
}

/* Replace control characters so a log line stays one line. */
static void one_line(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = ' ';
}

/* The step id as Slurm prints it: batch, extern, interactive or a number. */
static const char *step_name(uint32_t step, char *buf, size_t len)
{
	if (step == JT_BATCH_SCRIPT)
		return "batch";
	if (step == JT_EXTERN_CONT)
		return "extern";
	if (step == JT_INTERACTIVE_STEP)
		return "interactive";
	snprintf(buf, len, "%u", step);
	return buf;
}

/* slurmstepd: send `jobtrace job-update` with the fields that are set. */
static int remote_update(spank_t sp)
{
	char val[NFIELDS][VAL_MAX + 1];
	char *argv[8 + 2 * NFIELDS];
	char jobid[16], tmo[16], err[ERR_MAX], sbuf[16];
	uint32_t job = 0, step = 0;
	int argc = 0, nset = 0, st;

	if (spank_get_item(sp, S_JOB_ID, &job) != ESPANK_SUCCESS)
		return ESPANK_SUCCESS;
	if (spank_get_item(sp, S_JOB_STEPID, &step) != ESPANK_SUCCESS)
		step = 0;
	/* the extern step runs no user code and has no user options */
	if (step == JT_EXTERN_CONT)
		return ESPANK_SUCCESS;

	snprintf(jobid, sizeof(jobid), "%u", job);
	snprintf(tmo, sizeof(tmo), "%d", jt_timeout_ms);
	argv[argc++] = jt_bin;
	if (jt_conf[0]) {
		argv[argc++] = "--config";
		argv[argc++] = jt_conf;
	}
	argv[argc++] = "job-update";
	argv[argc++] = "--job";
	argv[argc++] = jobid;
	for (size_t i = 0; i < NFIELDS; i++) {
		if (opt_val[i][0]) {
			memcpy(val[i], opt_val[i], sizeof(val[i]));
		} else if (spank_getenv(sp, fields[i].jobenv, val[i],
					sizeof(val[i])) != ESPANK_SUCCESS ||
			   !valid_value(val[i])) {
			continue;
		}
		argv[argc++] = (char *)fields[i].flag;
		argv[argc++] = val[i];
		nset++;
	}
	if (nset == 0)
		return ESPANK_SUCCESS;
	if (jt_strict)
		argv[argc++] = "--strict";
	argv[argc++] = "--timeout-ms";
	argv[argc++] = tmo;
	argv[argc] = NULL;

	if (jt_bin[0] != '/' || access(jt_bin, X_OK) != 0) {
		slurm_error("jobtrace: job %u step %s: %s is not executable",
			    job, step_name(step, sbuf, sizeof(sbuf)), jt_bin);
		return jt_strict ? -1 : ESPANK_SUCCESS;
	}
	st = run_cli(argv, jt_timeout_ms + GRACE_MS, err, sizeof(err));
	one_line(err);
	if (st == 0) {
		slurm_debug("jobtrace: job %u step %s: job-update sent (%d fields)",
			    job, step_name(step, sbuf, sizeof(sbuf)), nset);
		if (err[0])	/* non-strict CLI: failed but exited 0 */
			slurm_info("jobtrace: job %u: %s", job, err);
		return ESPANK_SUCCESS;
	}
	if (st < 0)
		slurm_error("jobtrace: job %u step %s: job-update: %s", job,
			    step_name(step, sbuf, sizeof(sbuf)), strerror(-st));
	else
		slurm_error("jobtrace: job %u step %s: job-update exited %d%s%s",
			    job, step_name(step, sbuf, sizeof(sbuf)), st,
			    err[0] ? ": " : "", err);
	return jt_strict ? -1 : ESPANK_SUCCESS;
}

/* sbatch/salloc/srun: pass the fields to the prolog via SPANK_JOBTRACE_*. */
static int local_setenv(spank_t sp)
{
	for (size_t i = 0; i < NFIELDS; i++) {
		const char *v = opt_val[i][0] ? opt_val[i]
					      : getenv(fields[i].jobenv);
		spank_err_t rc;

		if (!v || !valid_value(v))
			continue;
		rc = spank_job_control_setenv(sp, fields[i].control, v, 1);
		if (rc != ESPANK_SUCCESS)
			slurm_debug("jobtrace: job control env %s: %s",
				    fields[i].control, spank_strerror(rc));
	}
	return ESPANK_SUCCESS;
}

/* After option processing: local sets the control env, remote updates. */
int slurm_spank_init_post_opt(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	switch (spank_context()) {
	case S_CTX_LOCAL:
	case S_CTX_ALLOCATOR:
		return local_setenv(sp);
	case S_CTX_REMOTE:
		return remote_update(sp);
	default:
		return ESPANK_SUCCESS;
	}
}
