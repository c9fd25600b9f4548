// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_smklog.c - the rule of a Snakemake local-mode job from Snakemake's
 * job log (smklog.h), on log text as Debian's Snakemake 7.21 writes it:
 *  - two jobs of one rule started together: each `bash -c` string to the
 *    job whose output it names; a finished job is no candidate;
 *  - --printshellcmds: the printed command decides, with no file named;
 *  - no evidence: the only pending job, else none;
 *  - a failed job's "Error in rule" block ends it;
 *  - short jobs, finished when their shells are asked about: each to its
 *    own job, not to the one still running;
 *  - cluster mode: the submitting sh -c and a status command are no job,
 *    a localrule's command is;
 *  - hostile text: bad rule names, endless lines, more jobs than kept;
 *  - the log found among a process's open files (this test's own), read
 *    in pieces as it grows, its name the run; a log owned by another user
 *    is not read.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "smklog.h"

/* Two make_data jobs at once, as `snakemake --cores 2` logs them. */
static const char two_jobs[] =
	"Building DAG of jobs...\n"
	"Using shell: /usr/bin/bash\n"
	"Provided cores: 2\n"
	"Rules claiming more threads will be scaled down.\n"
	"Job stats:\n"
	"job          count    min threads    max threads\n"
	"---------  -------  -------------  -------------\n"
	"all              1              1              1\n"
	"make_data        2              1              1\n"
	"total            3              1              1\n"
	"\n"
	"Select jobs to execute...\n"
	"\n"
	"[Fri Nov 27 14:19:25 2026]\n"
	"rule make_data:\n"
	"    input: ref/genome.fa\n"
	"    output: out/a.txt, out/a.idx\n"
	"    jobid: 1\n"
	"    reason: Forced execution\n"
	"    wildcards: s=a\n"
	"    resources: tmpdir=/tmp\n"
	"\n"
	"\n"
	"[Fri Nov 27 14:19:25 2026]\n"
	"rule make_data:\n"
	"    input: ref/genome.fa\n"
	"    output: out/b.txt, out/b.idx\n"
	"    jobid: 2\n"
	"    reason: Forced execution\n"
	"    wildcards: s=b\n"
	"    resources: tmpdir=/tmp\n"
	"\n";

/* The job of cmd in l: "rule jobid wildcards", or "none". */
static const char *job_of(struct smklog_log *l, const char *cmd)
{
	static char buf[512];
	struct rules_engine_job j;

	if (!smklog_log_match(l, cmd, &j))
		return "none";
	snprintf(buf, sizeof(buf), "%s %s %s", j.rule, j.jobid, j.wildcards);
	return buf;
}

/* Feed text to l. */
static void feed(struct smklog_log *l, const char *text)
{
	smklog_log_feed(l, text, strlen(text));
}

/* A new log fed with text. */
static struct smklog_log *fed(const char *text)
{
	struct smklog_log *l = NULL;

	assert_int_equal(smklog_log_new(&l), 0);
	feed(l, text);
	return l;
}

/* Two jobs of one rule at once: each command to the job it names. */
static void test_two_jobs(void **state)
{
	struct smklog_log *l = fed(two_jobs);

	(void)state;
	/* b's command first: the files decide, not the order */
	assert_string_equal(job_of(l, "set -euo pipefail;  touchmem 300 >"
				   " out/b.txt; idx out/b.txt > out/b.idx"),
			    "make_data 2 s=b");
	assert_string_equal(job_of(l, "set -euo pipefail;  touchmem 100 >"
				   " out/a.txt"), "make_data 1 s=a");
	/* both given: a third command has no job */
	assert_string_equal(job_of(l, "set -euo pipefail;  echo out/a.txt"),
			    "none");
	feed(l, "[Fri Nov 27 14:19:26 2026]\nFinished job 2.\n"
	     "1 of 3 steps (33%) done\n");
	assert_string_equal(job_of(l, "echo"), "none");
	smklog_log_free(l);
}

/* No file named: the only pending job, else none; a failed job given to
 * its process ends. */
static void test_no_evidence(void **state)
{
	struct smklog_log *l = fed(two_jobs);

	(void)state;
	assert_string_equal(job_of(l, "set -euo pipefail;  true"), "none");
	assert_string_equal(job_of(l, "set -euo pipefail;  touchmem 100 >"
				   " out/a.txt"), "make_data 1 s=a");
	feed(l, "[Fri Nov 27 14:19:26 2026]\nError in rule make_data:\n"
	     "    jobid: 1\n    input: ref/genome.fa\n"
	     "    output: out/a.txt, out/a.idx\n\n");
	assert_string_equal(job_of(l, "set -euo pipefail;  true"),
			    "make_data 2 s=b");
	smklog_log_free(l);
}

/*
 * Short jobs: their shells are asked about after Snakemake logged them
 * finished (and started the next): still each to its own job, never to
 * the job still running; at most SMKLOG_FINISHED_MAX such kept.
 */
static void test_short_jobs(void **state)
{
	struct smklog_log *l = fed(two_jobs);
	char line[128];

	(void)state;
	feed(l, "[Fri Nov 27 14:19:25 2026]\nFinished job 1.\n"
	     "1 of 3 steps (33%) done\n"
	     "[Fri Nov 27 14:19:25 2026]\nError in rule make_data:\n"
	     "    jobid: 2\n    output: out/b.txt, out/b.idx\n\n"
	     "[Fri Nov 27 14:19:25 2026]\nrule merge:\n"
	     "    input: out/a.txt, out/b.txt\n    output: all.txt\n"
	     "    jobid: 3\n\n");
	/* three jobs not given: no evidence, no job */
	assert_string_equal(job_of(l, "set -euo pipefail;  true"), "none");
	assert_string_equal(job_of(l, "set -euo pipefail;  touchmem 300 >"
				   " out/b.txt"), "make_data 2 s=b");
	assert_string_equal(job_of(l, "set -euo pipefail;  touchmem 100 >"
				   " out/a.txt"), "make_data 1 s=a");
	/* done with both: the running job is the only one left */
	assert_string_equal(job_of(l, "set -euo pipefail;  true"), "merge 3 ");
	/* the merge's shell again: given already, none */
	assert_string_equal(job_of(l, "cat out/a.txt out/b.txt > all.txt"),
			    "none");
	/* finished jobs never asked about: the last 32 are kept */
	for (int i = 10; i < 10 + SMKLOG_FINISHED_MAX + 8; i++) {
		snprintf(line, sizeof(line), "rule r%d:\n    output: f%d.out\n"
			 "    jobid: %d\n\nFinished job %d.\n", i, i, i, i);
		feed(l, line);
	}
	assert_string_equal(job_of(l, "touch f17.out"), "none");
	assert_string_equal(job_of(l, "touch f18.out"), "r18 18 ");
	assert_string_equal(job_of(l, "touch f49.out"), "r49 49 ");
	smklog_log_free(l);
}

/* -p prints the command after the header: it decides alone. */
static void test_printed_command(void **state)
{
	struct smklog_log *l = fed(
		"[Fri Nov 27 14:45:16 2026]\n"
		"localrule plot:\n"
		"    jobid: 4\n"
		"    resources: tmpdir=/tmp\n"
		"\n"
		"Rscript plot.R\n"
		"\n"
		"[Fri Nov 27 14:45:16 2026]\n"
		"checkpoint split:\n"
		"    jobid: 5\n"
		"\n"
		"python3 split.py --n 4 |\n"
		"  gzip -c > parts.gz\n"
		"[Fri Nov 27 14:45:16 2026]\n"
		"rule other:\n"
		"    output: other.txt\n"
		"    jobid: 6\n"
		"\n");

	(void)state;
	assert_string_equal(job_of(l, "set -euo pipefail;  python3 split.py"
				   " --n 4 |\n  gzip -c > parts.gz"),
			    "split 5 ");
	assert_string_equal(job_of(l, "set -euo pipefail;  Rscript plot.R"),
			    "plot 4 ");
	assert_string_equal(job_of(l, "set -euo pipefail;  cp x y"),
			    "other 6 ");
	smklog_log_free(l);
}

/*
 * Cluster mode: the rules' jobs are submitted (sh -c "sbatch ...
 * snakejob.RULE.N.sh"), a localrule runs here: only it, on evidence.
 */
static void test_cluster_mode(void **state)
{
	struct smklog_log *l = fed(
		"Building DAG of jobs...\n"
		"Using shell: /usr/bin/bash\n"
		"Provided cluster nodes: 3\n"
		"Job stats:\n"
		"\n"
		"[Fri Nov 27 14:25:30 2026]\n"
		"rule m100:\n"
		"    output: out/m100.txt\n"
		"    jobid: 1\n"
		"\n"
		"[Fri Nov 27 14:25:30 2026]\n"
		"localrule plot:\n"
		"    input: out/m100.txt\n"
		"    output: plot.png\n"
		"    jobid: 4\n"
		"\n");

	(void)state;
	assert_string_equal(job_of(l, "sbatch --parsable -c 1 --mem=1000"
				   " /w/.snakemake/tmp.ik3/snakejob.m100.1.sh"),
			    "none");
	assert_string_equal(job_of(l, "./status.py 4711"), "none");
	assert_string_equal(job_of(l, "set -euo pipefail;  Rscript plot.R"
				   " out/m100.txt plot.png"), "plot 4 ");
	smklog_log_free(l);
}

/* Hostile text: no crash, no bad rule, bounded. */
static void test_hostile(void **state)
{
	struct smklog_log *l = fed("rule bad name:\n    jobid: 1\n\n"
				   "rule $(id):\n    jobid: 2\n\n"
				   "rule :\nrule\nlocalrule x\n"
				   "Finished job .\nError in rule\n");
	char *big = malloc(3 * SMKLOG_LINE_MAX);
	char line[128];

	(void)state;
	assert_non_null(big);
	assert_string_equal(job_of(l, "x"), "none");
	/* a header line that never ends, then one that does */
	memset(big, 'a', 3 * SMKLOG_LINE_MAX);
	feed(l, "rule ");
	smklog_log_feed(l, big, 3 * SMKLOG_LINE_MAX);
	feed(l, ":\n");
	assert_string_equal(job_of(l, "x"), "none");
	/* more jobs than kept: the oldest go */
	for (int i = 0; i < SMKLOG_PENDING_MAX + 10; i++) {
		snprintf(line, sizeof(line), "rule r%d:\n    output: f%d.out\n"
			 "    jobid: %d\n\n", i, i, i);
		feed(l, line);
	}
	assert_string_equal(job_of(l, "cat f3.out"), "none");
	assert_string_equal(job_of(l, "cat f265.out"), "r265 265 ");
	free(big);
	smklog_log_free(l);
}

/* The log among this process's open files, read as it grows. */
static void test_open_log(void **state)
{
	char dir[] = "/tmp/jt_smklog_XXXXXX", path[256], sub[256];
	struct rules_engine_job j;
	struct smklog *s = NULL;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(sub, sizeof(sub), "%s/.snakemake", dir);
	assert_int_equal(mkdir(sub, 0700), 0);
	snprintf(sub, sizeof(sub), "%s/.snakemake/log", dir);
	assert_int_equal(mkdir(sub, 0700), 0);
	snprintf(path, sizeof(path), "%s/2026-11-27T141925.065602.snakemake.log",
		 sub);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(two_jobs, f);
	fflush(f);
	assert_int_equal(smklog_new(&s), 0);
	/* not this user's: not read */
	assert_false(smklog_job(s, (uint32_t)getpid(), 1, getuid() + 1,
				"touchmem 100 > out/a.txt", &j));
	smklog_forget(s, (uint32_t)getpid(), 1);
	assert_true(smklog_job(s, (uint32_t)getpid(), 7, getuid(),
			       "touchmem 100 > out/a.txt", &j));
	assert_string_equal(j.rule, "make_data");
	assert_string_equal(j.wildcards, "s=a");
	assert_string_equal(j.run, "2026-11-27T141925.065602");
	/* the log grows: the new job is read */
	fputs("[Fri Nov 27 14:19:26 2026]\nFinished job 1.\n\n"
	      "[Fri Nov 27 14:19:26 2026]\nrule merge:\n"
	      "    input: out/a.txt, out/b.txt\n    output: all.txt\n"
	      "    jobid: 3\n\n", f);
	fflush(f);
	assert_true(smklog_job(s, (uint32_t)getpid(), 7, getuid(),
			       "cat out/a.txt out/b.txt > all.txt", &j));
	assert_string_equal(j.rule, "merge");
	assert_string_equal(j.jobid, "3");
	/* another process (no such log): none */
	assert_false(smklog_job(s, 1, 9, getuid(), "all.txt", &j));
	smklog_free(s);
	fclose(f);
	unlink(path);
	rmdir(sub);
	snprintf(sub, sizeof(sub), "%s/.snakemake", dir);
	rmdir(sub);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_jobs),
		cmocka_unit_test(test_no_evidence),
		cmocka_unit_test(test_short_jobs),
		cmocka_unit_test(test_printed_command),
		cmocka_unit_test(test_cluster_mode),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_open_log),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
