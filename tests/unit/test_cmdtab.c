// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_cmdtab.c - the command tables: every query command's selectors and
 * formats checked from its table entry, the same way on the command line
 * and on the agent's socket; the CLI's messages name the argument and bad
 * usage is exit status 2; the synopses come from the table.
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

#include "cli.h"
#include "control.h"
#include "proc.h"
#include "qcmd.h"
#include "query.h"

/* A valid value of selector sel. */
static const char *good_value(const char *sel)
{
	if (!strcmp(sel, "since"))
		return "1h";
	if (!strcmp(sel, "pid"))
		return "77";
	return "x1";
}

/* Is w one of the NULL-ended words? */
static bool has(const char *const *words, const char *w)
{
	for (; *words; words++)
		if (!strcmp(*words, w))
			return true;
	return false;
}

/* Check c's arguments key=val... (NULL-ended pairs) in style: qcmd_arg
 * then qcmd_done; 0 or -EINVAL with the message in why. */
static int check(const struct qcmd *c, enum qcmd_style style, char *why,
		 size_t len, struct qcmd_args *a, ...)
{
	const char *k, *v;
	va_list ap;
	int rc = 0;

	memset(a, 0, sizeof(*a));
	va_start(ap, a);
	while (!rc && (k = va_arg(ap, const char *))) {
		v = va_arg(ap, const char *);
		rc = qcmd_arg(c, style, k, v, 100000, a, why, len);
	}
	va_end(ap);
	return rc ? rc : qcmd_done(c, style, a, why, len);
}

/* "give exactly one of" with c's selectors as style spells them. */
static void one_of(const struct qcmd *c, enum qcmd_style style, char *out,
		   size_t len)
{
	size_t n = (size_t)snprintf(out, len, "give exactly one of ");

	for (const char *const *s = c->selectors; *s; s++)
		n += (size_t)snprintf(out + n, len - n, "%s%s%s",
				      s == c->selectors ? "" : ", ",
				      style == QCMD_CLI ? "--" : "", *s);
	snprintf(out + n, len - n, " (not empty)");
}

/* Each selector alone is taken, two or none or an empty one are not, and
 * the message names every selector of the command, in both spellings. */
static void test_selectors(void **state)
{
	struct qcmd_args a;
	char why[256], want[256];

	(void)state;
	for (size_t i = 0; i < qcmd_count; i++) {
		const struct qcmd *c = &qcmd_table[i];

		for (int style = QCMD_CLI; style <= QCMD_SOCKET; style++) {
			one_of(c, style, want, sizeof(want));
			if (c->since_default > 0) {
				/* none: --since that long ago */
				assert_int_equal(check(c, style, why,
						       sizeof(why), &a, "format",
						       c->formats[0], NULL), 0);
				assert_true(a.q.since > 0);
			} else {
				assert_int_equal(check(c, style, why,
						       sizeof(why), &a, "format",
						       c->formats[0], NULL),
						 -EINVAL);
				assert_string_equal(why, want);
			}
			for (const char *const *s = c->selectors; *s; s++) {
				assert_int_equal(check(c, style, why, sizeof(why),
						       &a, *s, good_value(*s),
						       "format", c->formats[0],
						       NULL), 0);
				assert_string_equal(a.format, c->formats[0]);
				for (const char *const *t = s + 1; *t; t++) {
					assert_int_equal(check(c, style, why,
						sizeof(why), &a, *s, good_value(*s),
						*t, good_value(*t), NULL), -EINVAL);
					assert_string_equal(why, want);
				}
				if (!strcmp(*s, "since") || !strcmp(*s, "pid"))
					continue;
				assert_int_equal(check(c, style, why, sizeof(why),
						       &a, *s, "", NULL), -EINVAL);
				assert_string_equal(why, want);
			}
		}
	}
}

/* Each format word of a command is taken; a word of another command's
 * is refused with the command's own list; an option of another command
 * names the commands that take it. */
static void test_formats_and_options(void **state)
{
	static const char *const others[] = {
		"job", "run", "pipeline", "since", "pid", "no-tree", "by", NULL
	};
	struct qcmd_args a;
	char why[256], want[256];

	(void)state;
	for (size_t i = 0; i < qcmd_count; i++) {
		const struct qcmd *c = &qcmd_table[i];
		const char *sel = c->selectors[0];

		for (const char *const *f = c->formats; *f; f++) {
			assert_int_equal(check(c, QCMD_CLI, why, sizeof(why), &a,
					       sel, good_value(sel), "format", *f,
					       NULL), 0);
			assert_string_equal(a.format, *f);
		}
		for (size_t j = 0; j < qcmd_count; j++) {
			for (const char *const *f = qcmd_table[j].formats; *f;
			     f++) {
				if (has(c->formats, *f))
					continue;
				assert_int_equal(check(c, QCMD_CLI, why,
						       sizeof(why), &a, "format",
						       *f, NULL), -EINVAL);
				snprintf(want, sizeof(want), "--format '%s':"
					 " expected ", *f);
				assert_memory_equal(why, want, strlen(want));
				assert_int_equal(check(c, QCMD_SOCKET, why,
						       sizeof(why), &a, "format",
						       *f, NULL), -EINVAL);
				assert_memory_equal(why, "format: expected ", 17);
			}
		}
		for (const char *const *o = others; *o; o++) {
			if (has(c->selectors, *o) ||
			    (!strcmp(*o, "no-tree") && c->no_tree) ||
			    (!strcmp(*o, "by") && c->by))
				continue;
			assert_int_equal(check(c, QCMD_CLI, why, sizeof(why), &a,
					       *o, "1", NULL), -EINVAL);
			snprintf(want, sizeof(want), "--%s is for ", *o);
			assert_memory_equal(why, want, strlen(want));
			assert_non_null(strstr(why, " only"));
		}
	}
}

/* Run the CLI's parser of a query command on argv; its exit status (-1:
 * --help) and what it wrote on stderr in err. */
static int cli(char *err, size_t len, const char *name, ...)
{
	const struct cli_cmd *cmd = cli_cmd_find(name);
	char *argv[32];
	int argc = 0, rc, saved = dup(2), saved_out = dup(1);
	FILE *f = tmpfile(), *o = tmpfile();
	struct qcmd_args a;
	const char *source, *s;
	va_list ap;
	size_t n;

	assert_non_null(cmd);
	assert_non_null(f);
	argv[argc++] = (char *)name;
	va_start(ap, name);
	while ((s = va_arg(ap, const char *)))
		argv[argc++] = (char *)s;
	va_end(ap);
	argv[argc] = NULL;
	fflush(stderr);
	fflush(stdout);
	dup2(fileno(f), 2);
	dup2(fileno(o), 1);
	rc = cli_query_args(cmd, argc, argv, &a, &source);
	fflush(stderr);
	fflush(stdout);
	dup2(saved, 2);
	dup2(saved_out, 1);
	close(saved);
	close(saved_out);
	rewind(f);
	n = fread(err, 1, len - 1, f);
	err[n] = '\0';
	fclose(f);
	fclose(o);
	return rc;
}

/* The command line's messages name the argument; bad usage is 2. */
static void test_cli_messages(void **state)
{
	static const struct {
		int rc;
		const char *msg;
		const char *argv[8];
	} cases[] = {
		{ 2, "jobtrace report: give exactly one of --job, --run,"
		  " --pipeline, --since, --pid (not empty)\n",
		  { "report", "--job", "1", "--run", "2" } },
		{ 2, "jobtrace report: give exactly one of --job, --run,"
		  " --pipeline, --since, --pid (not empty)\n", { "report" } },
		{ 2, "jobtrace rightsize: give exactly one of --pipeline, --run,"
		  " --job, --since (not empty)\n",
		  { "rightsize", "--job", "" } },
		{ 2, "jobtrace export: --format ndjson is required\n",
		  { "export", "--job", "1" } },
		{ 2, "jobtrace export: --format 'text': expected ndjson\n",
		  { "export", "--job", "1", "--format", "text" } },
		{ 2, "jobtrace report: --format 'csv': expected text, json or"
		  " html\n", { "report", "--job", "1", "--format", "csv" } },
		{ 2, "jobtrace cost: --format 'html': expected text, json or"
		  " csv\n", { "cost", "--job", "1", "--format", "html" } },
		{ 2, "jobtrace rightsize: --format 'html': expected text,"
		  " nextflow, snakemake, slurm, json, instances, instances-json or snakemake-rules\n",
		  { "rightsize", "--run", "r", "--format", "html" } },
		{ 2, "jobtrace export: --pid is for report or files only\n",
		  { "export", "--pid", "5" } },
		{ 2, "jobtrace report: --task is for files only\n",
		  { "report", "--job", "1", "--task", "align" } },
		{ 2, "jobtrace files: --task: give a workflow task's name\n",
		  { "files", "--job", "1", "--task", "" } },
		{ 2, "jobtrace files: --format 'html': expected text, json or"
		  " csv\n", { "files", "--run", "r", "--format", "html" } },
		{ 2, "jobtrace cost: --no-tree is for report only\n",
		  { "cost", "--job", "1", "--no-tree" } },
		{ 2, "jobtrace report: --by is for cost only\n",
		  { "report", "--job", "1", "--by", "task" } },
		{ 2, "jobtrace cost: --pipeline is for report, export,"
		  " rightsize or top only\n", { "cost", "--pipeline", "p" } },
		{ 2, "jobtrace cost: --by 'queue': expected job, task, tool,"
		  " user, account or cost-center\n",
		  { "cost", "--job", "1", "--by", "queue" } },
		{ 2, "jobtrace report: --pid '0': not a process id\n",
		  { "report", "--pid", "0" } },
		{ 2, "jobtrace report: --pid '4194305': not a process id\n",
		  { "report", "--pid", "4194305" } },
		{ 2, "jobtrace report: --pid '5x': not a process id\n",
		  { "report", "--pid", "5x" } },
		{ 2, "jobtrace rightsize: --since 'yesterday': not a time (see"
		  " jobtrace rightsize --help)\n",
		  { "rightsize", "--since", "yesterday" } },
		{ 2, "jobtrace report: unexpected argument 'extra'\n",
		  { "report", "--job", "1", "extra" } },
		{ 0, "", { "report", "--pid", "4194304" } },
		{ 0, "", { "cost", "--since", "2h", "--by", "cost-center",
			   "--format", "csv" } },
		{ 0, "", { "export", "--pipeline", "p", "--format", "ndjson" } },
		{ -1, "", { "rightsize", "--help" } },
	};
	char err[1024];

	(void)state;
	assert_int_equal(JT_PID_MAX, 4194304);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *const *v = cases[i].argv;
		int rc = cli(err, sizeof(err), v[0], v[1], v[2], v[3], v[4],
			     v[5], v[6], NULL);

		if (rc != cases[i].rc || strcmp(err, cases[i].msg))
			fail_msg("case %zu (%s %s): status %d, '%s'", i, v[0],
				 v[1] ? v[1] : "", rc, err);
	}
	/* an option no query command has: getopt's message and the usage */
	assert_int_equal(cli(err, sizeof(err), "report", "--bogus", NULL), 2);
	assert_non_null(strstr(err, "--bogus"));
	assert_non_null(strstr(err, "Usage: jobtrace report (--job ID"));
}

/* The CLI and the agent's socket take and refuse the same requests. */
static void test_cli_socket_agree(void **state)
{
	static const char *const reqs[][5] = {
		{ "report", "job", "1" }, { "report", "pid", "4194305" },
		{ "report", "pid", "4194304" }, { "report", "since", "@0" },
		{ "report", "since", "2h" }, { "report", "run", "" },
		{ "export", "pid", "3" }, { "export", "run", "r" },
		{ "rightsize", "job", "4" }, { "rightsize", "pid", "4" },
		{ "cost", "pipeline", "p" }, { "cost", "since", "1d" },
		{ "cost", "job", "1", "by", "tool" },
		{ "cost", "job", "1", "by", "queue" },
		{ "report", "job", "1", "by", "tool" },
		{ "report", "job", "1", "run", "2" },
	};
	char err[1024], opt[2][32], line[256], *p;
	struct control_req r;
	struct report_query q;
	enum report_format fmt;
	const char *why;

	(void)state;
	for (size_t i = 0; i < sizeof(reqs) / sizeof(reqs[0]); i++) {
		const char *const *v = reqs[i];
		bool export = !strcmp(v[0], "export");
		int rc_cli, rc_sock;

		snprintf(opt[0], sizeof(opt[0]), "--%s", v[1]);
		snprintf(opt[1], sizeof(opt[1]), "--%s", v[3] ? v[3] : "");
		rc_cli = cli(err, sizeof(err), v[0], opt[0], v[2],
			     export ? "--format" : v[3] ? opt[1] : NULL,
			     export ? "ndjson" : v[4], NULL);
		snprintf(line, sizeof(line), "%s\t%s=%s%s%s%s%s", v[0], v[1],
			 v[2], v[3] ? "\t" : "", v[3] ? v[3] : "",
			 v[3] ? "=" : "", v[3] ? v[4] : "");
		p = line;
		assert_int_equal(control_parse(p, &r, &why), 0);
		rc_sock = query_parse(&r, 100000, &q, &fmt, &why);
		if ((rc_cli == 0) != (rc_sock == 0))
			fail_msg("%s %s=%s: the CLI says %d (%s), the socket %d",
				 v[0], v[1], v[2], rc_cli, err, rc_sock);
	}
}

/* Every command has help and a run function; each query command's
 * synopsis names its selectors and formats; --list-commands has a line
 * per command. */
static void test_table(void **state)
{
	char *text = NULL;
	size_t len = 0;
	FILE *m;

	(void)state;
	for (size_t i = 0; i < cli_ncmds; i++) {
		const struct cli_cmd *cmd = &cli_cmds[i];
		const struct qcmd *q = cli_cmd_query(cmd);

		assert_non_null(cmd->help);
		assert_non_null(cmd->run);
		assert_ptr_equal(cli_cmd_find(cmd->name), cmd);
		assert_true(cmd->synopsis || q);
		if (!q)
			continue;
		m = open_memstream(&text, &len);
		cli_cmd_synopsis(m, cmd, 4);
		fclose(m);
		for (const char *const *s = q->selectors; *s; s++) {
			char want[64];

			snprintf(want, sizeof(want), "--%s %s", *s,
				 qcmd_metavar(*s));
			assert_non_null(strstr(text, want));
		}
		for (const char *const *f = q->formats; *f; f++)
			assert_non_null(strstr(text, *f));
		free(text);
	}
	for (size_t i = 0; i < qcmd_count; i++)
		assert_non_null(cli_cmd_find(qcmd_table[i].name));
	m = open_memstream(&text, &len);
	cli_list_commands(m);
	fclose(m);
	assert_non_null(strstr(text, "report\tjob,run,pipeline,since,pid\t"
				     "text,json,html\n"));
	assert_non_null(strstr(text, "status\t-\t-\n"));
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_selectors),
		cmocka_unit_test(test_formats_and_options),
		cmocka_unit_test(test_cli_messages),
		cmocka_unit_test(test_cli_socket_agree),
		cmocka_unit_test(test_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
