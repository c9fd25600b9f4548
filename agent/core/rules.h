/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rules.h - the Lua rules engine: one sandboxed Lua 5.4 state built from
 * every *.lua file of the rules folder, called once per exec to decide
 * include/exclude, tool, argv redaction and job fields.
 *
 * A (re)load builds a complete new state and swaps it in only if every file
 * loads and every self-test passes; otherwise the running rules stay.
 */
#ifndef JOBTRACE_RULES_H
#define JOBTRACE_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "files.h"
#include "proc.h"

#define RULES_MAX_ANCESTORS 8

struct rules;

#define RULES_DEADLINE_MS 5	/* rules.deadline_ms when not configured */

struct rules_limits {
	size_t mem_bytes;		/* cap on the Lua state's memory */
	unsigned long instructions;	/* VM instructions per classification */
	unsigned deadline_ms;		/* wall clock per classification, 0: default */
};

/* What the rules decided about one process. */
struct rules_decision {
	bool include;
	int children;		/* -1: follow include, 0: exclude, 1: keep tracked */
	char tool[JT_STR_SMALL];
	char category[32];
	char version[32];
	char step[JT_STR_MEDIUM];
	char run[JT_STR_MEDIUM];
	char pipeline[JT_STR_MEDIUM];
	char task[JT_STR_MEDIUM];
	char cost_center[JT_STR_SMALL];	/* replaces the job's when set */
	char *argv;		/* malloc'd NUL-separated, NULL if unchanged */
	size_t argv_len;
	unsigned errors;	/* rules that failed during this call */
	bool failed_closed;	/* errors: default tool, argv after argv[0] redacted */
};

/*
 * What a workflow engine itself says of the job a process runs, which the
 * process tree does not show: Snakemake's own log names the rule of each
 * job it runs in local mode (smklog.h).  Shown to the rules as
 * p.engine_job = { rule =, jobid =, wildcards =, run = }.
 */
struct rules_engine_job {
	char rule[JT_STR_MEDIUM];
	char jobid[24];
	char wildcards[JT_STR_MEDIUM];	/* "sample=a, lane=1", "" */
	char run[JT_STR_MEDIUM];	/* the engine's run, "" */
};

/* The process shown to the rules: p and its ancestors, nearest first. */
struct rules_input {
	const struct jt_proc *p;
	const struct jt_proc *anc[RULES_MAX_ANCESTORS];
	size_t nanc;
	const struct rules_engine_job *engine_job;	/* NULL: none */
	/* the processes are the agent's table's, whose gen marks each change:
	 * the engine may reuse what it built for them in earlier calls */
	bool cached;
	/* p.exe_system of a process marked JT_PS_EXE_CHECK (exetrust_proc),
	 * asked only when a rule reads it; NULL: such a process is not */
	bool (*exe_check)(const struct jt_proc *p);
};

/*
 * Create an engine with no rules loaded: until rules load, every process is
 * included and fails closed (default tool, every argument after argv[0]
 * recorded as [REDACTED]: no redaction has seen them).
 */
int rules_new(const struct rules_limits *lim, struct rules **out);
/* Free the engine; accepts NULL. */
void rules_free(struct rules *r);
/*
 * Build a new state from every *.lua in dir (byte order of names), run the
 * self-tests and swap it in.  On failure returns -EINVAL (or -errno) and
 * writes "FILE:LINE: what" into err; the previous rules stay in force.
 */
int rules_load_dir(struct rules *r, const char *dir, char *err, size_t errlen);
/*
 * The rule files of dir that rules_load_dir loads (regular *.lua, not
 * hidden, byte order of names) into *names (free each and the array):
 * their count or -errno.
 */
struct dirent;
int rules_dir_files(const char *dir, struct dirent ***names);
/*
 * Swap in the default rule files as they were built into the program (the
 * package's lua-rules), for when the rules folder does not load at start.
 * While they stand in, classifications keep argv[0] only and record every
 * other argument as [REDACTED]: the site's own redaction is not loaded.
 * The next successful rules_load_dir ends that.  Returns 0 or -errno with
 * err filled, as rules_load_dir.
 */
int rules_load_builtin(struct rules *r, char *err, size_t errlen);
/* The folder name the built-in rule files carry in messages and status. */
#define RULES_BUILTIN_DIR "(built-in)"

/*
 * Run the rules on one process, within the deadline.  Always fills *d:
 * defaults when no rules are loaded; when a rule fails (an error, the
 * instruction budget, the deadline, an invalid d) the default tool and
 * every argument after argv[0] replaced by [REDACTED] ("fail closed": a
 * skipped redaction cannot leak).  Free d->argv with rules_decision_free.
 */
void rules_classify(struct rules *r, const struct rules_input *in,
		    struct rules_decision *d);
/* Release what a decision owns. */
void rules_decision_free(struct rules_decision *d);
/*
 * Run the file rules (jobtrace.file_rule) on paths[0..n) that process
 * in->p opened, into out[0..n): the first rule that answers decides, none
 * is keep.  A failing rule drops its path (fail closed); no rules loaded
 * drop every path; while the built-in rules stand in, a kept path keeps
 * its extension only.  Returns the number of paths a rule failed on.
 */
unsigned rules_files(struct rules *r, const struct rules_input *in,
		     const char *const *paths, size_t n,
		     enum rules_file_verdict *out);
/* Change the deadline of later classifications (a configuration reload). */
void rules_set_deadline(struct rules *r, unsigned ms);

/* Counters and state for `jobtrace status`. */
struct rules_stats {
	unsigned files;			/* files in the running rules */
	unsigned rules;			/* rules registered */
	unsigned file_rules;		/* file rules registered */
	unsigned selftests;		/* self-tests that passed at load */
	uint64_t calls;
	uint64_t runtime_errors;	/* rule errors while classifying */
	uint64_t failed_closed;		/* classifications that failed closed */
	uint64_t reloads_ok;
	uint64_t reloads_failed;
	uint64_t args_withheld;		/* built-in rules: argv after argv[0] withheld */
	bool builtin;			/* the built-in rules stand in */
	char dir[256];
	char last_error[512];		/* last load or runtime error, "" if none */
	char load_error[512];		/* why the last load of a folder failed,
					 * "" since one loaded: a runtime error
					 * does not replace it */
};
/* Copy the engine's counters. */
void rules_get_stats(const struct rules *r, struct rules_stats *st);

#endif
