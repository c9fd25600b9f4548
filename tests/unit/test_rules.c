// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_rules.c - cmocka tests of the Lua rules engine: decisions, the
 * sandbox, limits, and broken rules that must leave the previous rules in
 * force with a FILE:LINE message.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include "test_files.h"

#include "log.h"
#include "classify.h"
#include "rules.h"
#include "util.h"

#define DEADLINE_SLACK_MS 15.0	/* a late check, a clock read, a GC */

static char dir[] = "/tmp/jt-test-rules.XXXXXX";
static char err[1024];

static const char good[] =
	"local cat = { bwa = 'aligner' }\n"
	"jobtrace.rule('catalogue', function(p, d)\n"
	"  d.category = cat[d.tool] or ''\n"
	"  if d.tool == 'sshd' then d.include = false end\n"
	"  if d.tool == 'wrapper' then d.include = false; d.children = true end\n"
	"  if p.parent and p.parent.tool == 'snakemake' then d.step = 'from-parent' end\n"
	"end)\n"
	"jobtrace.rule('redact', function(p, d)\n"
	"  for i, a in ipairs(d.argv) do\n"
	"    if a == '--token' and d.argv[i + 1] then d.argv[i + 1] = '[REDACTED]' end\n"
	"  end\n"
	"end)\n"
	"jobtrace.selftest{ argv = {'bwa', 'mem'}, expect = { tool = 'bwa', category = 'aligner' } }\n";

/* Remove name from the rules folder. */
static void drop_file(const char *name)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	unlink(path);
}

/* A process with this NUL-separated argv (len bytes) and exe. */
static struct jt_proc mkproc(const char *argv, size_t len, const char *exe)
{
	struct jt_proc p;

	memset(&p, 0, sizeof(p));
	p.argv = (char *)argv;
	p.argv_len = len;
	p.exe = (char *)exe;
	strcpy(p.comm, "x");
	return p;
}

/* An engine with the good rules loaded. */
static struct rules *engine(void)
{
	struct rules_limits lim = { 16u << 20, 200000, 0 };
	struct rules *r;

	test_write_file(dir, "10-good.lua", good);
	assert_int_equal(rules_new(&lim, &r), 0);
	assert_int_equal(rules_load_dir(r, dir, err, sizeof(err)), 0);
	return r;
}

/* Classify argv/exe and return the decision (caller frees). */
static struct rules_decision decide(struct rules *r, const char *argv,
				    size_t len, const char *exe)
{
	struct jt_proc p = mkproc(argv, len, exe);
	struct rules_input in = { .p = &p };
	struct rules_decision d;

	rules_classify(r, &in, &d);
	return d;
}

/* Tool, category, redaction and exclusion come from the rules. */
static void test_decisions(void **state)
{
	static const char bwa[] = "bwa\0mem\0--token\0s3cr3t\0ref.fa";
	struct rules *r = engine();
	struct rules_decision d;
	struct rules_stats st;

	d = decide(r, bwa, sizeof(bwa), "/opt/bin/bwa");
	assert_true(d.include);
	assert_string_equal(d.tool, "bwa");
	assert_string_equal(d.category, "aligner");
	assert_non_null(d.argv);
	assert_int_equal(d.argv_len, sizeof("bwa\0mem\0--token\0[REDACTED]\0ref.fa"));
	assert_memory_equal(d.argv, "bwa\0mem\0--token\0[REDACTED]\0ref.fa",
			    d.argv_len);
	assert_null(memmem(d.argv, d.argv_len, "s3cr3t", 6));
	rules_decision_free(&d);

	d = decide(r, "sshd\0-D", 8, "/usr/sbin/sshd");
	assert_false(d.include);
	assert_int_equal(d.children, -1);	/* the tree goes too */
	assert_null(d.argv);			/* unchanged argv is not copied */
	rules_decision_free(&d);

	d = decide(r, "wrapper", 8, "/usr/bin/wrapper");
	assert_false(d.include);
	assert_int_equal(d.children, 1);
	rules_decision_free(&d);

	rules_get_stats(r, &st);
	assert_int_equal(st.files, 1);
	assert_int_equal(st.rules, 2);
	assert_int_equal(st.selftests, 1);
	assert_int_equal(st.runtime_errors, 0);
	rules_free(r);
	drop_file("10-good.lua");
}

/* The parent's tool is visible to the rules. */
static void test_parent(void **state)
{
	struct rules *r = engine();
	struct jt_proc p = mkproc("rule.sh", 8, "/bin/rule.sh");
	struct jt_proc parent = mkproc("snakemake", 10, "/usr/bin/snakemake");
	struct rules_input in = { .p = &p, .anc = { &parent }, .nanc = 1 };
	struct rules_decision d;

	strcpy(parent.tool_name, "snakemake");
	rules_classify(r, &in, &d);
	assert_string_equal(d.step, "from-parent");
	rules_decision_free(&d);
	rules_free(r);
	drop_file("10-good.lua");
}

/* What the kernel or /proc said of the file asked for p.exe_system. */
static const struct jt_proc *checked;
static bool check_answer;

/* The agent's exe check: records what it was asked. */
static bool fake_check(const struct jt_proc *p)
{
	checked = p;
	return check_answer;
}

/* Classify in with p in state, the check answering answer: the rule's
 * category is want, and the check was asked (p) or not (NULL). */
static void expect_sys(struct rules *r, const struct rules_input *in,
		       uint32_t state, bool answer, const char *want,
		       const struct jt_proc *asked)
{
	struct rules_decision d;

	((struct jt_proc *)in->p)->state = state;
	checked = NULL;
	check_answer = answer;
	rules_classify(r, in, &d);
	assert_string_equal(d.category, want);
	assert_ptr_equal(checked, asked);
	rules_decision_free(&d);
}

/*
 * p.exe_system: true for a process the kernel vouched for, asked of the
 * agent's check only for one marked to be checked (and only when a rule
 * reads it), false otherwise; p.parent.uid is the parent's.
 */
static void test_exe_system(void **state)
{
	static const char rule[] =
		"jobtrace.rule('sys', function(p, d)\n"
		"  if p.argv[1] == 'ask' then\n"
		"    d.category = tostring(p.exe_system) .. '/' .. p.parent.uid\n"
		"  end\n"
		"end)\n";
	struct rules_limits lim = { 16u << 20, 200000, 0 };
	struct jt_proc p = mkproc("ask", 4, "/usr/bin/telegraf");
	struct jt_proc parent = mkproc("bash", 5, "/bin/bash");
	struct rules_input in = { .p = &p, .anc = { &parent }, .nanc = 1,
				  .exe_check = fake_check };
	struct rules *r;

	(void)state;
	test_write_file(dir, "10-sys.lua", rule);
	assert_int_equal(rules_new(&lim, &r), 0);
	assert_int_equal(rules_load_dir(r, dir, err, sizeof(err)), 0);
	parent.uid = 1001;
	expect_sys(r, &in, 0, true, "false/1001", NULL);	/* nothing to ask */
	expect_sys(r, &in, JT_PS_EXE_SYSTEM, false, "true/1001", NULL);
	expect_sys(r, &in, JT_PS_EXE_CHECK, true, "true/1001", &p);
	expect_sys(r, &in, JT_PS_EXE_CHECK, false, "false/1001", &p);
	/* not read, not asked */
	p.argv = "other";
	p.argv_len = 6;
	expect_sys(r, &in, JT_PS_EXE_CHECK, true, "", NULL);
	rules_free(r);
	drop_file("10-sys.lua");
}

/*
 * The agent's processes (in.cached) get their ancestors' and job's views
 * reused: a change the tracker marks (gen), another process at the same
 * address, another job, all show at once; and the views are read only.
 */
static void test_ancestor_views(void **state)
{
	static const char rule[] =
		"jobtrace.rule('views', function(p, d)\n"
		"  d.category = p.parent.tool .. '/' .. #p.ancestors .. '/' ..\n"
		"    p.ancestors[2].tool .. '/' .. p.job.id\n"
		"  d.version = table.concat(p.parent.argv, ' ')\n"
		"  local n = 0\n"
		"  for _ in pairs(p.parent) do n = n + 1 end\n"
		"  d.step = tostring(n)\n"
		"end)\n";
	static const char *const writes[] = {
		"p.parent.tool = 'x'", "p.parent.argv[1] = 'x'",
		"p.ancestors[2].exe = 'x'", "p.job.id = 'x'",
	};
	struct rules_limits lim = { 16u << 20, 200000, 0 };
	struct jt_proc p = mkproc("true", 5, "/bin/true");
	struct jt_proc parent = mkproc("storm\0-n", 9, "/bin/storm");
	struct jt_proc grand = mkproc("bash", 5, "/bin/bash");
	struct rules_input in = { .p = &p, .anc = { &parent, &grand }, .nanc = 2,
				  .cached = true };
	struct rules_decision d;
	struct rules *r;

	test_write_file(dir, "10-views.lua", rule);
	assert_int_equal(rules_new(&lim, &r), 0);
	assert_int_equal(rules_load_dir(r, dir, err, sizeof(err)), 0);
	parent.pid = 10;
	parent.start_ns = 100;
	strcpy(parent.tool_name, "storm");
	strcpy(grand.tool_name, "bash");
	strcpy(p.job.id, "7");
	for (int i = 0; i < 3; i++) {	/* built, then reused */
		rules_classify(r, &in, &d);
		assert_string_equal(d.category, "storm/2/bash/7");
		assert_string_equal(d.version, "storm -n");
		assert_string_equal(d.step, "5");
		rules_decision_free(&d);
	}
	/* the tracker changed the parent (an exec, a classification) */
	strcpy(parent.tool_name, "snakemake");
	parent.gen++;
	rules_classify(r, &in, &d);
	assert_string_equal(d.category, "snakemake/2/bash/7");
	rules_decision_free(&d);
	/* another process in the same slot of the table */
	parent.start_ns = 200;
	strcpy(parent.tool_name, "nextflow");
	parent.argv = "nextflow\0run";
	parent.argv_len = 13;
	rules_classify(r, &in, &d);
	assert_string_equal(d.category, "nextflow/2/bash/7");
	assert_string_equal(d.version, "nextflow run");
	rules_decision_free(&d);
	/* another job; the grandparent changed */
	strcpy(p.job.id, "8");
	strcpy(grand.tool_name, "sh");
	grand.gen++;
	rules_classify(r, &in, &d);
	assert_string_equal(d.category, "nextflow/2/sh/8");
	rules_decision_free(&d);
	rules_free(r);
	drop_file("10-views.lua");

	/* writing to any of them fails the classification closed, cached or not */
	for (size_t i = 0; i < sizeof(writes) / sizeof(writes[0]); i++) {
		for (int cached = 0; cached < 2; cached++) {
			char text[256];
			struct rules_stats st;

			snprintf(text, sizeof(text),
				 "jobtrace.rule('w', function(p, d)\n  %s\nend)\n",
				 writes[i]);
			test_write_file(dir, "10-views.lua", text);
			assert_int_equal(rules_new(&lim, &r), 0);
			assert_int_equal(rules_load_dir(r, dir, err, sizeof(err)), 0);
			in.cached = cached;
			rules_classify(r, &in, &d);
			assert_true(d.failed_closed);
			rules_get_stats(r, &st);
			if (!strstr(st.last_error, "read-only"))
				fail_msg("%s: '%s'", writes[i], st.last_error);
			rules_decision_free(&d);
			rules_free(r);
		}
	}
	drop_file("10-views.lua");
}

/*
 * p.job holds every member of the records' job object, cost_center too,
 * and d.cost_center charges the process elsewhere.
 */
static void test_cost_center(void **state)
{
	static const char rule[] =
		"jobtrace.rule('charge', function(p, d)\n"
		"  local n = 0\n"
		"  for k in pairs(p.job) do n = n + 1 end\n"
		"  d.version = tostring(n)\n"
		"  d.category = p.job.cost_center .. '/' .. p.job.account\n"
		"  if p.exe:find('^/projects/') then\n"
		"    d.cost_center = p.exe:match('^/projects/([^/]+)/')\n"
		"  end\n"
		"end)\n";
	struct rules_limits lim = { 16u << 20, 200000, 0 };
	struct jt_proc p = mkproc("align", 6, "/projects/genome7/bin/align");
	struct rules_input in = { .p = &p };
	struct rules_decision d;
	struct rules *r;

	test_write_file(dir, "10-charge.lua", rule);
	assert_int_equal(rules_new(&lim, &r), 0);
	assert_int_equal(rules_load_dir(r, dir, err, sizeof(err)), 0);
	strcpy(p.job.id, "42");
	strcpy(p.job.account, "lab");
	strcpy(p.job.cost_center, "cc-17");
	rules_classify(r, &in, &d);
	assert_int_equal(d.errors, 0);
	assert_string_equal(d.version, "9");	/* scheduler ... cost_center */
	assert_string_equal(d.category, "cc-17/lab");
	assert_string_equal(d.cost_center, "genome7");
	rules_decision_free(&d);

	/* classify_process writes it into the job; other paths keep theirs */
	assert_int_equal(classify_process(r, &p, NULL, NULL), CLASSIFY_INCLUDE);
	assert_string_equal(p.job.cost_center, "genome7");
	p.exe = (char *)"/usr/bin/align";
	strcpy(p.job.cost_center, "cc-17");
	assert_int_equal(classify_process(r, &p, NULL, NULL), CLASSIFY_INCLUDE);
	assert_string_equal(p.job.cost_center, "cc-17");
	rules_free(r);
	drop_file("10-charge.lua");
}

/* A broken file: the load fails with FILE:LINE, the old rules stay. */
static void expect_broken(const char *text, const char *where, const char *what)
{
	struct rules *r = engine();
	struct rules_decision d;
	struct rules_stats st;

	test_write_file(dir, "20-bad.lua", text);
	assert_int_not_equal(rules_load_dir(r, dir, err, sizeof(err)), 0);
	if (!strstr(err, where) || !strstr(err, what))
		fail_msg("message '%s' lacks '%s' or '%s'", err, where, what);
	/* the previous rules are still in force */
	d = decide(r, "bwa\0mem", 8, "/usr/bin/bwa");
	assert_string_equal(d.category, "aligner");
	assert_int_equal(d.errors, 0);
	rules_decision_free(&d);
	rules_get_stats(r, &st);
	assert_int_equal(st.reloads_failed, 1);
	assert_non_null(strstr(st.last_error, where));
	rules_free(r);
	drop_file("20-bad.lua");
	drop_file("10-good.lua");
}

/* Syntax error. */
static void test_syntax_error(void **state)
{
	expect_broken("jobtrace.rule('x', function(p, d)\n  d.tool = 'y'\nend\n",
		      "20-bad.lua:4:", "expected");
}

/* Runtime error at load time (no io in the sandbox). */
static void test_load_runtime_error(void **state)
{
	expect_broken("local x = 1\nio.open('/etc/passwd')\n", "20-bad.lua:2:",
		      "global 'io'");
}

/* Runtime error inside a rule, caught by the self-test. */
static void test_rule_runtime_error(void **state)
{
	expect_broken("jobtrace.rule('boom', function(p, d)\n  error('kaboom')\nend)\n",
		      "20-bad.lua:2:", "kaboom");
}

/* Endless loop in a rule: the instruction budget stops it. */
static void test_endless_loop(void **state)
{
	expect_broken("jobtrace.rule('spin', function(p, d)\n  while true do end\nend)\n",
		      "20-bad.lua", "instruction budget");
}

/* Endless loop at the top level of a file. */
static void test_endless_loop_at_load(void **state)
{
	expect_broken("while true do end\n", "20-bad.lua", "instruction budget");
}

/* Memory bomb: the allocator cap stops it. */
static void test_memory_bomb(void **state)
{
	expect_broken("jobtrace.rule('bomb', function(p, d)\n"
		      "  local t = {}\n"
		      "  for i = 1, 1e9 do t[i] = string.rep('x', 4096) .. i end\n"
		      "end)\n",
		      "20-bad.lua", "not enough memory");
}

/* Wrong return types are errors of the rule that set them. */
static void test_wrong_types(void **state)
{
	expect_broken("jobtrace.rule('typo', function(p, d)\n  d.tool = 42\nend)\n",
		      "20-bad.lua:1:", "d.tool must be a string");
	expect_broken("jobtrace.rule('typo', function(p, d)\n  d.include = 'no'\nend)\n",
		      "20-bad.lua:1:", "d.include must be a boolean");
	expect_broken("jobtrace.rule('typo', function(p, d)\n  d.argv = { 1, 2 }\nend)\n",
		      "20-bad.lua:1:", "d.argv[1] must be a string");
	expect_broken("jobtrace.rule('long', function(p, d)\n  d.tool = string.rep('t', 200)\nend)\n",
		      "20-bad.lua:1:", "d.tool is 200 bytes");
}

/* Writing to p is refused. */
static void test_readonly_p(void **state)
{
	expect_broken("jobtrace.rule('w', function(p, d)\n  p.exe = 'x'\nend)\n",
		      "20-bad.lua:2:", "read-only");
}

/* A failing self-test keeps the old rules. */
static void test_selftest_fails(void **state)
{
	expect_broken("jobtrace.selftest{ argv = {'bwa'}, expect = { tool = 'BWA' } }\n",
		      "20-bad.lua:1:", "tool is 'bwa', expected 'BWA'");
}

/* Nothing dangerous is reachable from the sandbox. */
static void test_sandbox(void **state)
{
	static const char *const probes[] = {
		"os.execute", "io", "load", "loadfile", "dofile", "require",
		"package", "debug", "string.dump", "collectgarbage", "os.getenv",
		"os.remove", NULL,
	};
	char text[512];

	for (const char *const *p = probes; *p; p++) {
		snprintf(text, sizeof(text),
			 "assert(%s == nil, '%s is reachable')\n"
			 "jobtrace.rule('ok', function(p, d) end)\n", *p, *p);
		test_write_file(dir, "30-probe.lua", text);
		{
			struct rules_limits lim = { 16u << 20, 200000, 0 };
			struct rules *r;

			assert_int_equal(rules_new(&lim, &r), 0);
			if (rules_load_dir(r, dir, err, sizeof(err)))
				fail_msg("%s: %s", *p, err);
			rules_free(r);
		}
	}
	drop_file("30-probe.lua");
}

/* A rule that errs on the argument "boom" (line 2), else sets a version. */
static const char rare_rule[] =
	"jobtrace.rule('rare', function(p, d)\n"
	"  if p.argv[2] == 'boom' then error('kaboom') end\n"
	"  d.version = '1'\n"
	"end)\n";

/* A rule failing at run time (not in a self-test) is counted and fails closed. */
static void test_runtime_error_counted(void **state)
{
	struct rules *r = engine();
	struct rules_decision d;
	struct rules_stats st;

	test_write_file(dir, "20-rare.lua", rare_rule);
	assert_int_equal(rules_load_dir(r, dir, err, sizeof(err)), 0);
	d = decide(r, "bwa\0boom", 9, "/usr/bin/bwa");
	assert_int_equal(d.errors, 1);
	assert_true(d.failed_closed);
	/* what the earlier rule decided is not kept: the defaults stand */
	assert_string_equal(d.category, "");
	assert_string_equal(d.tool, "bwa");
	assert_string_equal(d.version, "");
	assert_int_equal(d.argv_len, sizeof("bwa\0[REDACTED]"));
	assert_memory_equal(d.argv, "bwa\0[REDACTED]", d.argv_len);
	rules_decision_free(&d);
	rules_get_stats(r, &st);
	assert_int_equal(st.runtime_errors, 1);
	assert_int_equal(st.failed_closed, 1);
	assert_non_null(strstr(st.last_error, "20-rare.lua:2:"));
	assert_non_null(strstr(st.last_error, "rule 'rare'"));
	rules_free(r);
	drop_file("20-rare.lua");
	drop_file("10-good.lua");
}

/*
 * Why the last load failed stays in load_error while a rule of the rules
 * in force errs at run time (last_error) and while the built-in rules
 * stand in; a folder that loads clears it.
 */
static void test_load_error_kept(void **state)
{
	struct rules *r = engine();
	struct rules_decision d;
	struct rules_stats st;

	test_write_file(dir, "20-rare.lua", rare_rule);
	assert_int_equal(rules_load_dir(r, dir, err, sizeof(err)), 0);
	rules_get_stats(r, &st);
	assert_string_equal(st.load_error, "");
	test_write_file(dir, "30-bad.lua", "jobtrace.rule('x', function(p, d)\n");
	assert_int_not_equal(rules_load_dir(r, dir, err, sizeof(err)), 0);
	d = decide(r, "bwa\0boom", 9, "/usr/bin/bwa");
	assert_int_equal(d.errors, 1);
	rules_decision_free(&d);
	rules_get_stats(r, &st);
	assert_non_null(strstr(st.last_error, "20-rare.lua:2:"));
	assert_non_null(strstr(st.load_error, "30-bad.lua:"));
	assert_int_equal(rules_load_builtin(r, err, sizeof(err)), 0);
	rules_get_stats(r, &st);
	assert_true(st.builtin);
	assert_non_null(strstr(st.load_error, "30-bad.lua:"));
	drop_file("30-bad.lua");
	assert_int_equal(rules_load_dir(r, dir, err, sizeof(err)), 0);
	rules_get_stats(r, &st);
	assert_string_equal(st.load_error, "");
	rules_free(r);
	drop_file("20-rare.lua");
	drop_file("10-good.lua");
}

/* bwa, a 2 KB argument of 'a' (no 'x' in it), --token s3cr3t. */
static size_t long_argv(char *buf, size_t cap)
{
	static const char tail[] = "--token\0s3cr3t";
	size_t n = 0;

	assert_true(cap > 4 + 2048 + sizeof(tail));
	memcpy(buf, "bwa", 4);
	n = 4;
	memset(buf + n, 'a', 2048);
	n += 2048;
	buf[n++] = '\0';
	memcpy(buf + n, tail, sizeof(tail));
	return n + sizeof(tail);
}

/* The decision of a failed classification: default tool, argv[0] only. */
static void assert_closed(const struct rules_decision *d, const char *tool)
{
	static const char want[] = "bwa\0[REDACTED]\0[REDACTED]\0[REDACTED]";

	assert_true(d->errors > 0);
	assert_true(d->failed_closed);
	assert_true(d->include);
	assert_string_equal(d->tool, tool);
	assert_string_equal(d->category, "");
	assert_int_equal(d->argv_len, sizeof(want));
	assert_memory_equal(d->argv, want, sizeof(want));
}

/*
 * Classify the long argv with rule text in 05-slow.lua (before the redaction
 * rule) and a deadline of ms.  Each of 5 calls must fail closed with msg (and
 * the rule's name) in last_error, and stop at one of the two limits: ms of
 * the thread's CPU time (within DEADLINE_SLACK_MS of it) or, when the machine
 * preempted the thread for most of the call, 4 x ms of wall clock.  Wall
 * time has no bound per call (a preempted thread ends late); the fastest of
 * the 5 must end within DEADLINE_SLACK_MS of the wall-clock cap.
 */
static void slow_case(const char *text, unsigned ms, const char *msg)
{
	struct rules_limits lim = { 16u << 20, 1000000000ul, ms };
	char argv[4096];
	size_t len = long_argv(argv, sizeof(argv));
	struct rules_stats st;
	struct rules *r;
	double best_wall = 1e9;

	test_write_file(dir, "10-good.lua", good);
	test_write_file(dir, "05-slow.lua", text);
	assert_int_equal(rules_new(&lim, &r), 0);
	if (rules_load_dir(r, dir, err, sizeof(err)))
		fail_msg("%s", err);
	for (int i = 0; i < 5; i++) {
		/* the deadline is CPU time; wall clock is capped at 4 x */
		uint64_t t0 = util_now_ns(CLOCK_THREAD_CPUTIME_ID);
		uint64_t w0 = util_now_ns(CLOCK_MONOTONIC);
		struct rules_decision d = decide(r, argv, len, "/usr/bin/bwa");
		double took = (util_now_ns(CLOCK_THREAD_CPUTIME_ID) - t0) / 1e6;
		double wall = (util_now_ns(CLOCK_MONOTONIC) - w0) / 1e6;

		/* without the deadline these calls run for hours (n^8 steps) */
		if (took > ms + DEADLINE_SLACK_MS || (took < ms && wall < 4 * ms))
			fail_msg("%s: a call took %.2f ms of CPU and %.2f ms of wall clock, "
				 "deadline %u ms of CPU, 4 x that of wall clock",
				 text, took, wall, ms);
		if (wall < best_wall)
			best_wall = wall;
		assert_closed(&d, "bwa");
		assert_null(memmem(d.argv, d.argv_len, "s3cr3t", 6));
		rules_decision_free(&d);
	}
	rules_get_stats(r, &st);
	assert_int_equal(st.failed_closed, 5);
	assert_int_equal(st.runtime_errors, 5);
	if (!strstr(st.last_error, msg) || !strstr(st.last_error, "rule 'slow'") ||
	    !strstr(st.last_error, "05-slow.lua:"))
		fail_msg("last_error '%s' lacks '%s', the rule or its file", st.last_error, msg);
	rules_free(r);
	drop_file("05-slow.lua");
	drop_file("10-good.lua");
	if (best_wall > 4 * ms + DEADLINE_SLACK_MS)
		fail_msg("%s: the fastest of 5 calls took %.2f ms of wall clock, over 4 x %u ms",
			 text, best_wall, ms);
}

/* slow_case of a rule doing code on the long argument a (argv[2]). */
static void slow_call(const char *code)
{
	char rule[512];

	snprintf(rule, sizeof(rule),
		 "jobtrace.rule('slow', function(p, d)\n"
		 "  local a = p.argv[2] or ''\n"
		 "  if #a > 1000 then %s end\n"
		 "end)\n", code);
	slow_case(rule, 5, "deadline of 5 ms per exec exceeded");
}

/* A backtracking pattern on 2 KB stops at the deadline and fails closed. */
static void test_deadline_pattern(void **state)
{
	/* s:find goes through the string metatable: ours too */
	static const char rule[] =
		"jobtrace.rule('slow', function(p, d)\n"
		"  for _, a in ipairs(p.argv) do\n"
		"    if #a > 1000 then a:find('.-.-.-.-.-.-.-.-x') end\n"
		"  end\n"
		"end)\n";

	slow_case(rule, 5, "deadline of 5 ms per exec exceeded (rules.deadline_ms)");
	slow_case(rule, 30, "deadline of 30 ms per exec exceeded");
}

/* gsub, gmatch and match are bounded too; a rule that swallows the error with pcall still fails. */
static void test_deadline_other_calls(void **state)
{
	static const char *const calls[] = {
		"string.gsub(a, '([^,=]+)=([^,]*)', '%1')",
		"for x in a:gmatch('.-.-.-.-.-x') do end",
		"string.match(a, '(.-)(.-)(.-)(.-)(.-)x')",
		"pcall(string.find, a, '.-.-.-.-.-.-x'); d.tool = 'swallowed'",
		NULL,
	};

	for (const char *const *c = calls; *c; c++)
		slow_call(*c);
}

/* A Lua loop under a huge instruction budget is stopped by the deadline (count hook). */
static void test_deadline_lua_loop(void **state)
{
	slow_case("jobtrace.rule('slow', function(p, d)\n"
		  "  if #p.argv > 2 then while true do end end\n"
		  "end)\n",
		  5, "05-slow.lua:2: deadline of 5 ms per exec exceeded");
}

/*
 * Classify the long argv with rule (in 05-slow.lua, before the redaction
 * rule) under a budget of 200,000 instructions: the call fails closed and
 * last_error names the budget and the rule.
 */
static void budget_case(const char *rule)
{
	struct rules_limits lim = { 16u << 20, 200000, 1000 };
	char argv[4096];
	size_t len = long_argv(argv, sizeof(argv));
	struct rules_decision d;
	struct rules_stats st;
	struct rules *r;

	test_write_file(dir, "10-good.lua", good);
	test_write_file(dir, "05-slow.lua", rule);
	assert_int_equal(rules_new(&lim, &r), 0);
	if (rules_load_dir(r, dir, err, sizeof(err)))
		fail_msg("%s", err);
	d = decide(r, argv, len, "/usr/bin/bwa");
	assert_closed(&d, "bwa");
	rules_decision_free(&d);
	rules_get_stats(r, &st);
	assert_non_null(strstr(st.last_error, "instruction budget"));
	assert_non_null(strstr(st.last_error, "rule 'slow'"));
	rules_free(r);
	drop_file("05-slow.lua");
	drop_file("10-good.lua");
}

/* An earlier rule out of budget: the redaction never ran, the argv must not leak. */
static void test_budget_fails_closed(void **state)
{
	budget_case("jobtrace.rule('slow', function(p, d)\n"
		    "  if #p.argv > 2 then\n"
		    "    d.tool = 'tagged'\n"
		    "    for i = 1, 1e9 do end\n"
		    "  end\n"
		    "end)\n");
}

/* Loading is bounded: a pathological pattern at a file's top level. */
static void test_load_deadline(void **state)
{
	uint64_t t0 = util_now_ns(CLOCK_THREAD_CPUTIME_ID);
	uint64_t w0 = util_now_ns(CLOCK_MONOTONIC);
	double ms, wall;

	expect_broken("string.find(string.rep('a', 2048), '.-.-.-.-.-.-.-.-x')\n",
		      "20-bad.lua:1:", "deadline of 2000 ms for loading the rules");
	ms = (util_now_ns(CLOCK_THREAD_CPUTIME_ID) - t0) / 1e6;
	wall = (util_now_ns(CLOCK_MONOTONIC) - w0) / 1e6;
	/* stopped at 2000 ms of CPU, or at 8000 of wall clock when preempted */
	if (ms > 2000.0 + 500.0 || (ms < 2000.0 && wall < 4 * 2000.0))
		fail_msg("the load took %.0f ms of CPU (%.0f ms wall), its deadline is 2000 ms of CPU, 8000 of wall",
			 ms, wall);
}

/* A file that registers nothing is refused; a library or a lib.* call is not nothing. */
static void test_registers_nothing(void **state)
{
	struct rules *r;

	expect_broken("-- the rule was commented out\nlocal x = 1\n", "20-bad.lua",
		      "registers nothing");
	r = engine();
	test_write_file(dir, "05-lib.lua", "mylib = { names = {} }\n"
			       "function mylib.add(n) mylib.names[n] = true end\n");
	test_write_file(dir, "20-site.lua", "mylib.add('acme')\n");
	if (rules_load_dir(r, dir, err, sizeof(err)))
		fail_msg("%s", err);
	/* writing into an earlier file's table alone is nothing the engine sees */
	test_write_file(dir, "20-site.lua", "mylib.names.acme = true\n");
	assert_int_not_equal(rules_load_dir(r, dir, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "20-site.lua: registers nothing"));
	rules_free(r);
	drop_file("20-site.lua");
	drop_file("05-lib.lua");
	drop_file("10-good.lua");
}

/* No rules at all: included, tool = program name, arguments withheld. */
static void test_no_rules(void **state)
{
	struct rules_limits lim = { 16u << 20, 200000, 0 };
	struct rules_decision d;
	struct rules *r;

	assert_int_equal(rules_new(&lim, &r), 0);
	assert_int_not_equal(rules_load_dir(r, dir, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "no rules registered"));
	d = decide(r, "ls\0-l\0--password=hunter2", 25, "/usr/bin/ls");
	assert_true(d.include);
	assert_true(d.failed_closed);
	assert_string_equal(d.tool, "ls");
	assert_int_equal(d.argv_len, sizeof("ls\0[REDACTED]\0[REDACTED]"));
	assert_memory_equal(d.argv, "ls\0[REDACTED]\0[REDACTED]", d.argv_len);
	rules_decision_free(&d);
	rules_free(r);
}

/*
 * The built-in rules (the package's lua-rules, compiled in) load with their
 * self-tests, classify as the files do, and withhold every argument until a
 * folder loads.
 */
static void test_builtin(void **state)
{
	static const char bwa[] = "bwa\0mem\0-t\0008\0ref.fa\0reads.fq";
	struct rules_limits lim = { 64u << 20, 1000000, 0 };
	struct rules_decision d;
	struct rules_stats st;
	struct rules *r;

	assert_int_equal(rules_new(&lim, &r), 0);
	if (rules_load_builtin(r, err, sizeof(err)))
		fail_msg("the built-in rules do not load: %s", err);
	rules_get_stats(r, &st);
	assert_true(st.builtin);
	assert_string_equal(st.dir, RULES_BUILTIN_DIR);
	assert_true(st.files >= 5);
	assert_true(st.selftests > 0);
	/* the deny list is in force: root's daemon goes */
	{
		struct jt_proc p = mkproc("/usr/sbin/sshd\0-D", 18, "/usr/sbin/sshd");
		struct rules_input in = { .p = &p };

		p.state |= JT_PS_EXE_SYSTEM;
		rules_classify(r, &in, &d);
		assert_false(d.include);
		rules_decision_free(&d);
	}
	/* the catalogue names the tool; the arguments are withheld */
	d = decide(r, bwa, sizeof(bwa), "/usr/bin/bwa");
	assert_true(d.include);
	assert_false(d.failed_closed);
	assert_string_equal(d.tool, "bwa");
	assert_string_equal(d.category, "aligner");
	assert_int_equal(d.argv_len,
			 sizeof("bwa\0[REDACTED]\0[REDACTED]\0[REDACTED]\0[REDACTED]\0[REDACTED]"));
	assert_null(memmem(d.argv, d.argv_len, "ref.fa", 6));
	rules_decision_free(&d);
	rules_get_stats(r, &st);
	assert_int_equal(st.args_withheld, 1);
	/* a folder that loads ends it */
	test_write_file(dir, "10-good.lua", good);
	assert_int_equal(rules_load_dir(r, dir, err, sizeof(err)), 0);
	rules_get_stats(r, &st);
	assert_false(st.builtin);
	d = decide(r, bwa, sizeof(bwa), "/usr/bin/bwa");
	assert_null(d.argv);	/* unchanged */
	rules_decision_free(&d);
	rules_free(r);
	drop_file("10-good.lua");
}

/*
 * A rule that catches the deadline's error with pcall or xpcall and goes on
 * is still stopped: once passed, the deadline fails every later protected
 * call too, and the classification fails closed near the deadline.
 */
static void test_deadline_not_catchable(void **state)
{
	static const char *const loops[] = {
		"while true do pcall(function() while true do end end) end",
		"while true do xpcall(function() while true do end end, function(e) return e end) end",
		"while true do pcall(pcall, function() while true do end end) end",
		"while true do xpcall(function() error('x') end, function(e) while true do end end) end",
		"while true do pcall(string.find, a, '.-.-.-.-.-.-x') end",
		NULL,
	};

	alarm(60);	/* before the fix these never return */
	for (const char *const *l = loops; *l; l++)
		slow_call(*l);
	alarm(0);
}

/* The instruction budget cannot be caught either. */
static void test_budget_not_catchable(void **state)
{
	alarm(60);	/* before the fix this never returns */
	budget_case("jobtrace.rule('slow', function(p, d)\n"
		    "  if #p.argv > 2 then\n"
		    "    while true do pcall(function() for i = 1, 1e9 do end end) end\n"
		    "  end\n"
		    "end)\n");
	alarm(0);
}

/*
 * A finalizer runs with Lua's hooks off, where no deadline can stop it: a
 * __gc in a rule file is refused with its FILE:LINE (the load used to hang
 * in the collection that follows it), at the top level or in a rule.
 */
static void test_gc_refused(void **state)
{
	alarm(60);
	expect_broken("local t = {}\n"
		      "setmetatable(t, { __gc = function() while true do end end })\n"
		      "t = nil\n"
		      "jobtrace.rule('x', function(p, d) end)\n",
		      "20-bad.lua:2:", "__gc is not allowed");
	expect_broken("jobtrace.rule('x', function(p, d)\n"
		      "  setmetatable({}, { __gc = function() while true do end end })\n"
		      "end)\n",
		      "20-bad.lua:2:", "__gc is not allowed");
	/* a metatable without __gc still works, as does adding one later
	 * (Lua does not then mark the table for finalization) */
	{
		struct rules *r = engine();

		test_write_file(dir, "20-mt.lua",
				"local mt = { __index = function() return 'v' end }\n"
				"local t = setmetatable({}, mt)\n"
				"mt.__gc = function() while true do end end\n"
				"t = nil\n"
				"local mt2 = { __index = function() return 'v' end }\n"
				"jobtrace.rule('mt', function(p, d)\n"
				"  local u = setmetatable({}, mt2)\n"
				"  if u.anything ~= 'v' then error('no __index') end\n"
				"end)\n"
				"jobtrace.selftest{ argv = {'bwa'}, expect = { tool = 'bwa' } }\n");
		if (rules_load_dir(r, dir, err, sizeof(err)))
			fail_msg("%s", err);
		rules_free(r);	/* lua_close runs no finalizer either */
		drop_file("20-mt.lua");
		drop_file("10-good.lua");
	}
	alarm(0);
}

/* Create the scratch folder. */
static int setup(void **state)
{
	log_init("test", 0, LOG_LVL_ERROR);
	return mkdtemp(dir) ? 0 : -1;
}

/* Remove the scratch folder. */
static int teardown(void **state)
{
	return rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decisions),
		cmocka_unit_test(test_parent),
		cmocka_unit_test(test_cost_center),
		cmocka_unit_test(test_ancestor_views),
		cmocka_unit_test(test_exe_system),
		cmocka_unit_test(test_syntax_error),
		cmocka_unit_test(test_load_runtime_error),
		cmocka_unit_test(test_rule_runtime_error),
		cmocka_unit_test(test_endless_loop),
		cmocka_unit_test(test_endless_loop_at_load),
		cmocka_unit_test(test_memory_bomb),
		cmocka_unit_test(test_wrong_types),
		cmocka_unit_test(test_readonly_p),
		cmocka_unit_test(test_selftest_fails),
		cmocka_unit_test(test_sandbox),
		cmocka_unit_test(test_runtime_error_counted),
		cmocka_unit_test(test_load_error_kept),
		cmocka_unit_test(test_no_rules),
		cmocka_unit_test(test_builtin),
		cmocka_unit_test(test_deadline_not_catchable),
		cmocka_unit_test(test_budget_not_catchable),
		cmocka_unit_test(test_gc_refused),
		cmocka_unit_test(test_deadline_pattern),
		cmocka_unit_test(test_deadline_other_calls),
		cmocka_unit_test(test_deadline_lua_loop),
		cmocka_unit_test(test_budget_fails_closed),
		cmocka_unit_test(test_load_deadline),
		cmocka_unit_test(test_registers_nothing),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
