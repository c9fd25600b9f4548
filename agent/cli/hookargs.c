// SPDX-License-Identifier: GPL-2.0-or-later
/* hookargs.c - the job hooks' command line into a control request line. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cost.h"
#include "hookargs.h"
#include "jobstate.h"
#include "proc.h"
#include "util.h"

enum { OPT_FIELD = 1, OPT_STRICT, OPT_TIMEOUT, OPT_PID, OPT_EXIT,
       OPT_TIME_LIMIT };

static const struct option opts[] = {
	{ "job", required_argument, NULL, OPT_FIELD },
	{ "scheduler", required_argument, NULL, OPT_FIELD },
	{ "step", required_argument, NULL, OPT_FIELD },
	{ "user", required_argument, NULL, OPT_FIELD },
	{ "uid", required_argument, NULL, OPT_FIELD },
	{ "account", required_argument, NULL, OPT_FIELD },
	{ "partition", required_argument, NULL, OPT_FIELD },
	{ "run", required_argument, NULL, OPT_FIELD },
	{ "pipeline", required_argument, NULL, OPT_FIELD },
	{ "task", required_argument, NULL, OPT_FIELD },
	{ "cost-center", required_argument, NULL, OPT_FIELD },
	{ "cpus", required_argument, NULL, OPT_FIELD },
	{ "mem-mb", required_argument, NULL, OPT_FIELD },
	{ "gpus", required_argument, NULL, OPT_FIELD },
	{ "node", required_argument, NULL, OPT_FIELD },
	{ "cgroup", required_argument, NULL, OPT_FIELD },
	{ "name", required_argument, NULL, OPT_FIELD },
	{ "time-limit", required_argument, NULL, OPT_TIME_LIMIT },
	{ "exit-code", required_argument, NULL, OPT_EXIT },
	{ "signal", required_argument, NULL, OPT_EXIT },
	{ "state", required_argument, NULL, OPT_EXIT },
	{ "pid", required_argument, NULL, OPT_PID },
	{ "strict", no_argument, NULL, OPT_STRICT },
	{ "timeout-ms", required_argument, NULL, OPT_TIMEOUT },
	{ "help", no_argument, NULL, 'h' },
	{ 0 }
};

/* Append key=value to the line. */
int hookargs_add(struct hookargs *h, const char *key, const char *value)
{
	int n;

	if (strpbrk(value, "\t\n\r"))
		return -EINVAL;
	n = snprintf(h->line + h->len, sizeof(h->line) - h->len, "\t%s=%s",
		     key, value);
	if (n < 0 || (size_t)n >= sizeof(h->line) - h->len) {
		h->line[h->len] = '\0';
		return -E2BIG;
	}
	h->len += (size_t)n;
	return 0;
}

/* Is s a whole number from lo to hi? */
static bool number(const char *s, long lo, long hi, long *out)
{
	char *end;
	long v;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return false;
	*out = v;
	return true;
}

/* Parse a hook's command line into a request line. */
int hookargs_parse(struct hookargs *h, const char *cmd, int argc,
		   char **argv, char *err, size_t errlen)
{
	bool run = !strcmp(cmd, "run");
	int opt, idx;
	long v;

	memset(h, 0, sizeof(*h));
	h->timeout_ms = 500;
	/* run is job-start for itself: the agent knows no "run" request */
	h->len = (size_t)snprintf(h->line, sizeof(h->line), "%s",
				  run ? "job-start" : cmd);
	optind = 0;	/* a full restart: run's '+' is read at the first call */
	opterr = 0;
	while ((opt = getopt_long(argc, argv, run ? "+h" : "h", opts,
				  &idx)) != -1) {
		const char *name = opt == '?' || opt == 'h' ? NULL
							    : opts[idx].name;
		char key[32];

		switch (opt) {
		case 'h':
			h->help = true;
			return 0;
		case '?':
			util_seterr(err, errlen, "unknown or incomplete option '%s' (see jobtrace %s --help)",
				    argv[optind - 1], cmd);
			return -EINVAL;
		case OPT_STRICT:
			h->strict = true;
			continue;
		case OPT_TIMEOUT:
			if (!number(optarg, 10, 600000, &h->timeout_ms)) {
				util_seterr(err, errlen, "--timeout-ms '%s': milliseconds from 10 to 600000",
					    optarg);
				return -EINVAL;
			}
			continue;
		case OPT_PID:
			if (strcmp(cmd, "job-start")) {
				util_seterr(err, errlen, "--pid is for job-start only%s",
					    run ? " (run ties itself and its command)" : "");
				return -EINVAL;
			}
			if (!number(optarg, 1, JT_PID_MAX, &v)) {
				util_seterr(err, errlen, "--pid '%s': not a process id (1 to %d)",
					    optarg, JT_PID_MAX);
				return -EINVAL;
			}
			break;
		case OPT_TIME_LIMIT: {
			uint32_t sec;
			char num[16];

			/* the agent takes seconds */
			if (cost_parse_time_limit(optarg, &sec) || !sec) {
				util_seterr(err, errlen, "--time-limit '%s': seconds, or [D-]HH:MM:SS, above 0",
					    optarg);
				return -EINVAL;
			}
			snprintf(num, sizeof(num), "%u", sec);
			if (hookargs_add(h, "time_limit", num)) {
				util_seterr(err, errlen, "arguments too long (at --time-limit)");
				return -EINVAL;
			}
			continue;
		}
		case OPT_EXIT:
			if (run) {
				util_seterr(err, errlen, "--%s: run reports its command's",
					    name);
				return -EINVAL;
			}
			if (strcmp(cmd, "job-end") && strcmp(name, "exit-code")) {
				util_seterr(err, errlen, "--%s is for job-end only", name);
				return -EINVAL;
			}
			if (strcmp(name, "state") && !number(optarg, 0, 255, &v)) {
				util_seterr(err, errlen, "--%s '%s': a number from 0 to 255",
					    name, optarg);
				return -EINVAL;
			}
			if (!strcmp(name, "state") &&
			    !jobstate_final(optarg, strlen(optarg))) {
				util_seterr(err, errlen, "--state '%s': one of COMPLETED, FAILED, CANCELLED, TIMEOUT, OUT_OF_MEMORY, NODE_FAIL, PREEMPTED, BOOT_FAIL, DEADLINE",
					    optarg);
				return -EINVAL;
			}
			break;
		}
		if (!strcmp(name, "job"))
			h->job = optarg;
		else if (!strcmp(name, "scheduler"))
			h->scheduler = optarg;
		h->have_user |= !strcmp(name, "user");
		h->have_uid |= !strcmp(name, "uid");
		/* option names become field names: cost-center -> cost_center */
		util_strlcpy(key, name, sizeof(key));
		for (char *k = key; *k; k++)
			if (*k == '-')
				*k = '_';
		switch (hookargs_add(h, key, optarg)) {
		case -EINVAL:
			util_seterr(err, errlen, "--%s: tabs and newlines are not allowed", name);
			return -EINVAL;
		case -E2BIG:
			util_seterr(err, errlen, "arguments too long (at --%s)", name);
			return -EINVAL;
		}
	}
	if (run) {
		if (optind >= argc) {
			util_seterr(err, errlen, "give the command to run after --");
			return -EINVAL;
		}
		h->cmd_index = optind;
	} else if (optind < argc) {
		util_seterr(err, errlen, "unexpected argument '%s'", argv[optind]);
		return -EINVAL;
	}
	if (!h->job || !*h->job) {
		util_seterr(err, errlen, "--job ID is required");
		return -EINVAL;
	}
	return 0;
}
