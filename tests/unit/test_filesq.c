// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_filesq.c - what each process read and wrote (filesq.h): the files
 * of a record read from its JSON, hostile shapes skipped; the inputs,
 * outputs and temporary files of each task of a run, with the task an
 * input came from; the progress line; `jobtrace files` as text, JSON and
 * CSV; a running process's progress from its latest sample in a store.
 *
 * The runs are written here as the `files` members of process records
 * (the shape doc/records.md states), so that the test says exactly what
 * each process did; every expected figure is one of those numbers.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "filesq.h"
#include "json.h"
#include "log.h"
#include "report.h"
#include "store.h"
#include "tasks.h"
#include "test_files.h"

#define GIB (1ULL << 30)
#define MIB (1ULL << 20)

/* One process of a fixture run: its task, tool and files JSON. */
struct fx {
	const char *task, *tool, *category;
	double start, end;
	const char *files;
	const char *rest;
};

/*
 * A run of two tasks.  align: bwa reads the reference (mapped, no bytes)
 * and the reads, writes aln.sam, and a scratch file it deletes; a second
 * bwa reads the reads again.  sort: samtools reads aln.sam (align's), writes
 * sorted.bam and a temporary part it deletes, lists a directory.  An sbatch
 * of task align is a scheduler client: no process of the task.
 */
static const struct fx run1[] = {
	{ "align", "bwa", NULL, 100, 200,
	  "[{\"path\":\"/data/sample.fq.gz\",\"flags\":[\"read\"],\"opens\":1,"
	  "\"read_bytes\":5368709120,\"write_bytes\":0,\"size_bytes\":5368709120,"
	  "\"mmap\":false,\"deleted\":false},"
	  "{\"path\":\"/ref/hg38.fa\",\"flags\":[\"read\"],\"opens\":2,"
	  "\"read_bytes\":0,\"write_bytes\":0,\"size_bytes\":3221225472,"
	  "\"mmap\":true,\"deleted\":false},"
	  "{\"path\":\"/scratch/aln.sam\",\"flags\":[\"write\",\"create\","
	  "\"truncate\"],\"opens\":1,\"read_bytes\":0,\"write_bytes\":7516192768,"
	  "\"size_bytes\":7516192768,\"mmap\":false,\"deleted\":false},"
	  "{\"path\":\"/tmp/bwa.tmp\",\"flags\":[\"read\",\"write\",\"create\"],"
	  "\"opens\":1,\"read_bytes\":1048576,\"write_bytes\":2097152,"
	  "\"size_bytes\":2097152,\"mmap\":false,\"deleted\":true}]",
	  "{\"count\":3,\"opens\":3,\"read_bytes\":10,\"write_bytes\":0}" },
	{ "align", "bwa", NULL, 110, 150,
	  "[{\"path\":\"/data/sample.fq.gz\",\"flags\":[\"read\"],\"opens\":1,"
	  "\"read_bytes\":1000,\"write_bytes\":0,\"size_bytes\":5368709120,"
	  "\"mmap\":false,\"deleted\":false}]", NULL },
	{ "align", "sbatch", TASKS_CLIENT, 90, 91,
	  "[{\"path\":\"/home/u/job.sh\",\"flags\":[\"read\"],\"opens\":1,"
	  "\"read_bytes\":300,\"write_bytes\":0,\"size_bytes\":300,"
	  "\"mmap\":false,\"deleted\":false}]", NULL },
	{ "sort", "samtools", NULL, 210, 300,
	  "[{\"path\":\"/scratch/aln.sam\",\"flags\":[\"read\"],\"opens\":1,"
	  "\"read_bytes\":7516192768,\"write_bytes\":0,\"size_bytes\":7516192768,"
	  "\"mmap\":false,\"deleted\":false},"
	  "{\"path\":\"/out/sorted.bam\",\"flags\":[\"write\",\"create\"],"
	  "\"opens\":1,\"read_bytes\":0,\"write_bytes\":1610612736,"
	  "\"size_bytes\":1610612736,\"mmap\":false,\"deleted\":false},"
	  "{\"path\":\"/out/sorted.bam.tmp.0000.bam\",\"flags\":[\"write\","
	  "\"create\"],\"opens\":1,\"read_bytes\":0,\"write_bytes\":805306368,"
	  "\"size_bytes\":805306368,\"mmap\":false,\"deleted\":true},"
	  "{\"path\":\"/out/sorted.bam.tmp.0001.bam\",\"flags\":[\"write\","
	  "\"create\"],\"opens\":1,\"read_bytes\":0,\"write_bytes\":905306368,"
	  "\"size_bytes\":905306368,\"mmap\":false,\"deleted\":true},"
	  "{\"path\":\"/out\",\"flags\":[\"read\",\"directory\"],\"opens\":1,"
	  "\"read_bytes\":0,\"write_bytes\":0,\"size_bytes\":4096,"
	  "\"mmap\":false,\"deleted\":false}]", NULL },
};
#define NRUN1 (sizeof(run1) / sizeof(run1[0]))

/* The processes of a fixture, as filesq_load() makes them. */
static void procs_of(const struct fx *fx, size_t n, struct filesq_procs *p)
{
	p->v = calloc(n, sizeof(*p->v));
	p->n = n;
	assert_non_null(p->v);
	for (size_t i = 0; i < n; i++) {
		struct filesq_proc *w = &p->v[i];

		w->pid = 1000 + (uint32_t)i;
		w->task = strdup(fx[i].task);
		w->tool = strdup(fx[i].tool);
		w->category = fx[i].category ? strdup(fx[i].category) : NULL;
		w->host = strdup("n1");
		w->id = strdup("p");
		w->start = fx[i].start;
		w->end = fx[i].end;
		assert_int_equal(filesq_parse(w, fx[i].files,
					      strlen(fx[i].files), fx[i].rest,
					      NULL), 0);
	}
}

/* The task named name of d (NULL: "(no task)"); fails when missing. */
static const struct filesq_task *task(const struct filesq_data *d,
				      const char *name)
{
	for (size_t i = 0; i < d->n; i++)
		if (name ? d->v[i].name && !strcmp(d->v[i].name, name) :
		    !d->v[i].name)
			return &d->v[i];
	fail_msg("no task %s", name ? name : "(none)");
	return NULL;
}

/* The item of path in list role of t, or NULL. */
static const struct filesq_item *item(const struct filesq_task *t, int role,
				      const char *path)
{
	for (size_t i = 0; i < t->n[role]; i++)
		if (!strcmp(t->v[role][i].path, path))
			return &t->v[role][i];
	return NULL;
}

/* Inputs, outputs, temporaries of each task, with sizes and lineage. */
static void test_classify(void **state)
{
	struct filesq_procs p;
	struct filesq_data d;
	const struct filesq_task *al, *so, *none;
	const struct filesq_item *it;

	(void)state;
	procs_of(run1, NRUN1, &p);
	assert_int_equal(filesq_data(&p, &d), 0);
	assert_int_equal(d.n, 3);
	al = task(&d, "align");
	so = task(&d, "sort");
	none = task(&d, NULL);
	assert_int_equal(al->processes, 2);	/* not the sbatch */
	assert_int_equal(al->rest, 3);

	/* align: two inputs from outside, the reads' bytes of both bwa */
	assert_int_equal(al->n[FILESQ_INPUT], 2);
	it = item(al, FILESQ_INPUT, "/data/sample.fq.gz");
	assert_non_null(it);
	assert_true(it->from_outside);
	assert_int_equal(it->read_bytes, 5 * GIB + 1000);
	assert_int_equal(it->size, 5 * GIB);
	it = item(al, FILESQ_INPUT, "/ref/hg38.fa");	/* mapped only */
	assert_non_null(it);
	assert_int_equal(it->size, 3 * GIB);
	assert_int_equal(it->read_bytes, 0);
	/* the largest first */
	assert_string_equal(al->v[FILESQ_INPUT][0].path, "/data/sample.fq.gz");
	assert_int_equal(al->n[FILESQ_OUTPUT], 1);
	it = item(al, FILESQ_OUTPUT, "/scratch/aln.sam");
	assert_non_null(it);
	assert_int_equal(it->write_bytes, 7 * GIB);
	assert_int_equal(al->n[FILESQ_TEMP], 1);
	it = item(al, FILESQ_TEMP, "/tmp/bwa.tmp");
	assert_non_null(it);
	assert_int_equal(it->size, 2 * MIB);

	/* sort: aln.sam is an input from align; the directory is nothing */
	assert_int_equal(so->n[FILESQ_INPUT], 1);
	it = item(so, FILESQ_INPUT, "/scratch/aln.sam");
	assert_non_null(it);
	assert_false(it->from_outside);
	assert_string_equal(it->from, "align");
	assert_int_equal(so->n[FILESQ_OUTPUT], 1);
	assert_non_null(item(so, FILESQ_OUTPUT, "/out/sorted.bam"));
	assert_int_equal(so->n[FILESQ_TEMP], 2);
	assert_string_equal(so->v[FILESQ_TEMP][0].path,
			    "/out/sorted.bam.tmp.0001.bam");
	assert_null(item(so, FILESQ_INPUT, "/out"));

	/* the client's job script: no task */
	assert_int_equal(none->processes, 1);
	assert_non_null(item(none, FILESQ_INPUT, "/home/u/job.sh"));
	filesq_data_free(&d);
	filesq_procs_free(&p);
}

/*
 * A file written by one process and deleted by a later one that opened
 * it is temporary; one written and deleted by a process that is followed
 * by another that saw it whole (the same path made again) is an output.
 */
static void test_temp_last_word(void **state)
{
	static const struct fx fx[] = {
		{ "t", "a", NULL, 1, 2,
		  "[{\"path\":\"/s/x\",\"flags\":[\"write\",\"create\"],"
		  "\"opens\":1,\"read_bytes\":0,\"write_bytes\":10,"
		  "\"size_bytes\":10,\"mmap\":false,\"deleted\":false},"
		  "{\"path\":\"/s/y\",\"flags\":[\"write\",\"create\"],"
		  "\"opens\":1,\"read_bytes\":0,\"write_bytes\":20,"
		  "\"size_bytes\":20,\"mmap\":false,\"deleted\":true}]", NULL },
		{ "t", "b", NULL, 3, 4,
		  "[{\"path\":\"/s/x\",\"flags\":[\"read\"],\"opens\":1,"
		  "\"read_bytes\":10,\"write_bytes\":0,\"size_bytes\":10,"
		  "\"mmap\":false,\"deleted\":true},"
		  "{\"path\":\"/s/y\",\"flags\":[\"write\",\"create\"],"
		  "\"opens\":1,\"read_bytes\":0,\"write_bytes\":30,"
		  "\"size_bytes\":30,\"mmap\":false,\"deleted\":false}]", NULL },
	};
	struct filesq_procs p;
	struct filesq_data d;
	const struct filesq_task *t;
	const struct filesq_item *it;

	(void)state;
	procs_of(fx, 2, &p);
	assert_int_equal(filesq_data(&p, &d), 0);
	t = task(&d, "t");
	it = item(t, FILESQ_TEMP, "/s/x");
	assert_non_null(it);
	assert_int_equal(it->write_bytes, 10);
	assert_int_equal(it->read_bytes, 10);
	assert_null(item(t, FILESQ_INPUT, "/s/x"));	/* the task wrote it */
	it = item(t, FILESQ_OUTPUT, "/s/y");
	assert_non_null(it);
	assert_int_equal(it->size, 30);		/* the later process's */
	assert_int_equal(it->write_bytes, 50);
	assert_int_equal(t->n[FILESQ_TEMP], 1);
	filesq_data_free(&d);
	filesq_procs_free(&p);
}

/* Elements of another shape are skipped, unknown flags ignored, junk
 * refused; null files is no files. */
static void test_parse(void **state)
{
	static const char odd[] =
		"[1, \"x\", {\"flags\":[\"read\"]}, {\"path\":\"\"},"
		" {\"path\":\"/a\\u00e9\",\"flags\":[\"read\",\"exec\",7],"
		"  \"opens\":\"many\",\"read_bytes\":-5,\"write_bytes\":3,"
		"  \"size_bytes\":null,\"mmap\":1,\"deleted\":true,\"x\":{}}]";
	struct filesq_proc p = { 0 };
	char fl[64];

	(void)state;
	assert_int_equal(filesq_parse(&p, odd, strlen(odd),
				      "{\"count\":\"x\",\"opens\":4}",
				      "{\"pipes\":2,\"sockets\":1,"
				      "\"read_bytes\":7,\"write_bytes\":8}"), 0);
	assert_true(p.has_files);
	assert_int_equal(p.nf, 1);
	/* \u0000-\u00ff is the byte json_strn() escaped (a path's bytes) */
	assert_string_equal(p.f[0].path, "/a\xe9");
	assert_int_equal(p.f[0].flags, FILESQ_READ);
	assert_int_equal(p.f[0].opens, 0);
	assert_int_equal(p.f[0].read_bytes, 0);
	assert_int_equal(p.f[0].write_bytes, 3);
	assert_int_equal(p.f[0].size, FILESQ_NO_SIZE);
	assert_false(p.f[0].mmap);
	assert_true(p.f[0].deleted);
	assert_int_equal(p.rest.count, 0);
	assert_int_equal(p.rest.opens, 4);
	assert_int_equal(p.nonreg.pipes, 2);
	assert_int_equal(p.nonreg.write_bytes, 8);
	filesq_flags_text(FILESQ_READ | FILESQ_CREATE | FILESQ_DIRECT, ",", fl,
			  sizeof(fl));
	assert_string_equal(fl, "read,create,direct");
	free(p.f[0].path);
	free(p.f);

	memset(&p, 0, sizeof(p));
	assert_int_equal(filesq_parse(&p, "null", 4, NULL, NULL), 0);
	assert_false(p.has_files);
	assert_int_equal(filesq_parse(&p, "[{\"path\":", 9, NULL, NULL),
			 -EINVAL);
	assert_int_equal(p.nf, 0);
}

/* "read 62% of sample.fq.gz (3.1 of 5.0 GiB)" from a sample's progress. */
static void test_progress_text(void **state)
{
	static const char pg[] = "{\"path\":\"/data/sample.fq.gz\","
		"\"offset_bytes\":3328599654,\"size_bytes\":5368709120}";
	static const char nosize[] = "{\"path\":\"/p\","
		"\"offset_bytes\":2048,\"size_bytes\":null}";
	struct filesq_proc p = { 0 };
	char text[128];

	(void)state;
	assert_int_equal(filesq_parse_progress(&p, pg, strlen(pg)), 0);
	assert_int_equal(p.progress.offset, 3328599654ULL);
	filesq_progress_text(&p.progress, text, sizeof(text));
	assert_string_equal(text, "read 62% of sample.fq.gz (3.1 of 5.0 GiB)");
	free(p.progress.path);

	/* a size not known: the bytes read only */
	memset(&p, 0, sizeof(p));
	assert_int_equal(filesq_parse_progress(&p, nosize, strlen(nosize)), 0);
	filesq_progress_text(&p.progress, text, sizeof(text));
	assert_string_equal(text, "read 2.0 KiB of p");
	free(p.progress.path);
	memset(&p, 0, sizeof(p));
	assert_int_equal(filesq_parse_progress(&p, "null", 4), 0);
	filesq_progress_text(&p.progress, text, sizeof(text));
	assert_string_equal(text, "");
}

/* The output of f(q, p, format) as a string (malloc'd). */
static char *files_out(const struct filesq_procs *p, const char *format)
{
	struct report_query q = { .run = "r1", .task = NULL };
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	assert_non_null(out);
	assert_int_equal(filesq_print(&q, p, format, out), 0);
	fclose(out);
	if (getenv("TEST_FILESQ_SHOW"))
		fputs(text, stdout);
	return text;
}

/* Check one value of a JSON text. */
static void jq_is(const char *json, const char *path, const char *want)
{
	char *v = test_jq(json, path);

	if (strcmp(v, want))
		fail_msg("%s: %s, want %s", path, v, want);
	free(v);
}

/* `jobtrace files` as JSON, CSV and text. */
static void test_formats(void **state)
{
	struct filesq_procs p;
	char *text;

	(void)state;
	procs_of(run1, NRUN1, &p);
	text = files_out(&p, "json");
	jq_is(text, "$.query.run", "r1");
	jq_is(text, "$.processes[0].pid", "1000");
	jq_is(text, "$.processes[0].files[0].path", "/data/sample.fq.gz");
	jq_is(text, "$.processes[0].files[0].read_bytes", "5368709120");
	jq_is(text, "$.processes[0].files[2].flags",
	      "[\"write\",\"create\",\"truncate\"]");
	jq_is(text, "$.processes[0].files[1].mmap", "1");
	jq_is(text, "$.processes[0].files_rest.count", "3");
	jq_is(text, "$.data.tasks[0].task", "align");
	jq_is(text, "$.data.tasks[0].inputs[0].path", "/data/sample.fq.gz");
	jq_is(text, "$.data.tasks[0].inputs[0].from", "");
	jq_is(text, "$.data.tasks[0].temporary[0].size_bytes", "2097152");
	jq_is(text, "$.data.tasks[2].task", "sort");
	jq_is(text, "$.data.tasks[2].inputs[0].from", "align");
	jq_is(text, "$.data.tasks[2].outputs[0].write_bytes", "1610612736");
	free(text);

	text = files_out(&p, "csv");
	assert_non_null(strstr(text, "host,pid,task,tool,path,flags,opens,"
			       "read_bytes,write_bytes,size_bytes,mmap,deleted\n"
			       "n1,1000,align,bwa,/data/sample.fq.gz,read,1,"
			       "5368709120,0,5368709120,false,false\n"));
	assert_non_null(strstr(text, "\nn1,1000,align,bwa,/scratch/aln.sam,"
			       "write create truncate,1,0,7516192768,"));
	free(text);

	text = files_out(&p, "text");
	assert_non_null(strstr(text, "Files of run r1: 4 processes\n"));
	assert_non_null(strstr(text, "pid 1000  bwa  task align\n"));
	assert_non_null(strstr(text, "(3 more files)"));
	assert_non_null(strstr(text, "/ref/hg38.fa  (mmap)"));
	assert_non_null(strstr(text, "/tmp/bwa.tmp  (deleted)"));
	free(text);
	filesq_procs_free(&p);
}

/* A path that needs quoting in CSV, and one with a newline; in the text,
 * no control byte of a path or task reaches the terminal. */
static void test_csv_quote(void **state)
{
	static const struct fx fx[] = {
		{ "t,1", "a", NULL, 1, 2,
		  "[{\"path\":\"/d/a,b \\\"c\\\"\",\"flags\":[\"read\"],"
		  "\"opens\":1,\"read_bytes\":1,\"write_bytes\":0,"
		  "\"size_bytes\":1,\"mmap\":false,\"deleted\":false},"
		  "{\"path\":\"/d/x\\ny\",\"flags\":[\"read\"],"
		  "\"opens\":1,\"read_bytes\":1,\"write_bytes\":0,"
		  "\"size_bytes\":null,\"mmap\":false,\"deleted\":false}]",
		  NULL },
	};
	struct filesq_procs p;
	char *text;

	(void)state;
	procs_of(fx, 1, &p);
	text = files_out(&p, "csv");
	assert_non_null(strstr(text, "\nn1,1000,\"t,1\",a,\"/d/a,b \"\"c\"\"\","
			       "read,1,1,0,1,false,false\n"));
	assert_non_null(strstr(text, "\nn1,1000,\"t,1\",a,\"/d/x\ny\","
			       "read,1,1,0,,false,false\n"));
	free(text);
	text = files_out(&p, "text");
	assert_non_null(strstr(text, "  /d/x?y\n"));
	free(p.v[0].task);
	p.v[0].task = strdup("t\x1b]0;owned\x07");
	free(text);
	text = files_out(&p, "text");
	assert_non_null(strstr(text, "task t?]0;owned?\n"));
	assert_null(strchr(text, '\x1b'));
	free(text);
	filesq_procs_free(&p);
}

/* The Data section's text: the lists per task, the lineage, progress. */
static void test_data_text(void **state)
{
	struct filesq_procs p;
	struct filesq_data d;
	char *text = NULL;
	size_t len = 0;
	FILE *out;

	(void)state;
	procs_of(run1, NRUN1, &p);
	p.v[1].end = 0;
	p.v[1].progress.path = strdup("/data/sample.fq.gz");
	p.v[1].progress.offset = 3328599654ULL;
	p.v[1].progress.size = 5 * GIB;
	for (size_t i = 0; i < p.n; i++)
		if (p.v[i].task && !strcmp(p.v[i].task, "align")) {
			p.v[i].rchar = 3 * GIB;
			p.v[i].wchar = 4 * GIB + 1;
		}
	assert_int_equal(filesq_data(&p, &d), 0);
	out = open_memstream(&text, &len);
	filesq_data_print(&d, &p, out);
	fclose(out);
	if (getenv("TEST_FILESQ_SHOW"))
		fputs(text, stdout);
	assert_non_null(strstr(text, "\nalign (2 processes)\n  inputs:\n"
			       "       5.0 GiB  read    5.0 GiB  written"
			       "        0 B  /data/sample.fq.gz\n"));
	assert_non_null(strstr(text, "/scratch/aln.sam  (from align)\n"));
	/* what the section can miss, under its title */
	assert_non_null(strstr(text, " files)\n  (files as the agent saw them"
			       " open at each sample pass and at each\n"));
	assert_non_null(strstr(text, "unless it ran with files.follow_opens, a"
			       " file opened and\n   closed between two passes"
			       " is not listed"));
	/* the files its records left out, with their bytes; its bytes in
	 * all (rchar, wchar) beside those through files */
	assert_non_null(strstr(text, "  3 more files not listed (dropped by the"
			       " rules, over files.max_per_process, or no name"
			       " known): read 10 B, written 0 B\n  in all its"
			       " processes read 6.0 GiB and wrote 8.0 GiB (pipes,"
			       " sockets, terminals too); through files: read"
			       " 5.0 GiB, written 7.0 GiB\n"));
	assert_non_null(strstr(text, "\nProgress (running processes, latest"
			       " sample)\n     1001 bwa              read 62% of"
			       " sample.fq.gz (3.1 of 5.0 GiB)\n"));
	free(text);
	filesq_data_free(&d);
	filesq_procs_free(&p);
}

/* Records without files (files.enabled false): the text says so rather
 * than leave the Data section out. */
static void test_data_off(void **state)
{
	static const struct fx off[] = {
		{ "align", "bwa", NULL, 110, 150, "null", NULL },
	};
	struct filesq_procs p;
	struct filesq_data d;
	char *text = NULL;
	size_t len = 0;
	FILE *out;

	(void)state;
	procs_of(off, 1, &p);
	assert_int_equal(filesq_data(&p, &d), 0);
	assert_int_equal(d.with_files, 0);
	out = open_memstream(&text, &len);
	filesq_data_print(&d, &p, out);
	fclose(out);
	assert_non_null(strstr(text, "\nData: no record here lists files (the"
			       " agent that wrote them had files.enabled\n="
			       " false"));
	free(text);
	filesq_data_free(&d);
	filesq_procs_free(&p);
}

/*
 * A running process's progress from its latest sample in a real store:
 * the later sample's offset, not the earlier; a finished process (it has
 * its record) shows none.
 */
static void test_progress_store(void **state)
{
	char dir[] = "/tmp/jt_filesq_XXXXXX", db[64];
	struct report_query q = { .job = "77" };
	struct store *s = NULL;
	struct filesq_procs p;
	static const char sample[] =
		"{\"type\":\"sample\",\"schema\":1,\"host\":\"n1\","
		"\"id\":\"s-%d-%d\",\"time\":\"2026-03-01T10:00:%02dZ\","
		"\"pid\":%d,\"ppid\":1,\"parent_id\":null,"
		"\"start_time\":\"2026-03-01T10:00:00Z\",\"exe\":\"/usr/bin/bwa\","
		"\"comm\":\"bwa\",\"argv\":[\"bwa\"],\"uid\":0,"
		"\"job\":{\"scheduler\":\"slurm\",\"id\":\"77\",\"step\":\"batch\","
		"\"run\":null,\"pipeline\":null,\"task\":\"align\",\"user\":null,"
		"\"account\":null,\"cost_center\":null},"
		"\"tool\":{\"name\":\"bwa\",\"category\":null},"
		"\"cpu\":{\"user_s\":1,\"sys_s\":0},"
		"\"mem\":{\"peak_rss_bytes\":1,\"rss_bytes\":1},"
		"\"io\":{\"read_bytes\":0,\"write_bytes\":0,"
		"\"cancelled_write_bytes\":0,\"rchar\":0,\"wchar\":0,"
		"\"blkio_delay_s\":0},\"net\":{\"rx_bytes\":0,\"tx_bytes\":0},"
		"\"progress\":{\"path\":\"/data/s.fq\",\"offset_bytes\":%d,"
		"\"size_bytes\":1000}}";

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(db, sizeof(db), "%s/jobtrace.db", dir);
	assert_int_equal(store_open(db, false, &s), 0);
	test_put_json(s, sample, 500, 1, 5, 500, 100);
	test_put_json(s, sample, 500, 2, 25, 500, 620);
	test_put_json(s, sample, 500, 0, 15, 500, 400);
	assert_true(store_flush(s) > 0);
	assert_int_equal(filesq_load(s, db, &q, &p), 0);
	assert_int_equal(p.n, 1);
	assert_int_equal(p.v[0].pid, 500);
	assert_string_equal(p.v[0].task, "align");
	assert_string_equal(p.v[0].tool, "bwa");
	assert_string_equal(p.v[0].progress.path, "/data/s.fq");
	assert_int_equal(p.v[0].progress.offset, 620);
	assert_int_equal(p.v[0].progress.size, 1000);
	filesq_procs_free(&p);
	/* --task of another task: nothing */
	q.task = "sort";
	assert_int_equal(filesq_load(s, db, &q, &p), 0);
	assert_int_equal(p.n, 0);
	filesq_procs_free(&p);
	store_close(s);
	test_remove_store(db, dir);
}

/* A process record of job 88 with files (printf format: pid, ppid, uid,
 * task, tool, files JSON); rchar is the pid then 7, wchar the pid then 9. */
static const char proc88[] =
	"{\"type\":\"process\",\"schema\":1,\"host\":\"n1\","
	"\"id\":\"p-%1$d\",\"pid\":%1$d,\"ppid\":%2$d,\"parent_id\":\"p-%2$d\","
	"\"start_time\":\"2026-03-01T10:00:%1$02dZ\","
	"\"end_time\":\"2026-03-01T10:01:%1$02dZ\",\"exe\":\"/usr/bin/%5$s\","
	"\"comm\":\"%5$s\",\"argv\":[\"%5$s\"],\"uid\":%3$d,"
	"\"job\":{\"scheduler\":\"slurm\",\"id\":\"88\",\"step\":\"batch\","
	"\"run\":\"r88\",\"pipeline\":null,\"task\":\"%4$s\",\"user\":null,"
	"\"account\":null,\"cost_center\":null},"
	"\"tool\":{\"name\":\"%5$s\",\"category\":null},"
	"\"exit\":{\"code\":0,\"signal\":null,\"oom_killed\":false},"
	"\"cpu\":{\"user_s\":1,\"sys_s\":0},"
	"\"mem\":{\"peak_rss_bytes\":1,\"rss_bytes\":1},"
	"\"io\":{\"read_bytes\":0,\"write_bytes\":0,"
	"\"cancelled_write_bytes\":0,\"rchar\":%1$d7,\"wchar\":%1$d9,"
	"\"blkio_delay_s\":0},\"net\":{\"rx_bytes\":0,\"tx_bytes\":0},"
	"\"files\":%6$s,\"files_rest\":{\"count\":0,\"opens\":0,"
	"\"read_bytes\":0,\"write_bytes\":0},\"files_nonregular\":{"
	"\"pipes\":1,\"sockets\":0,\"read_bytes\":5,\"write_bytes\":0}}";

/* The output of cmd (report or files) on db in format (malloc'd). */
static char *store_out(const char *db, const struct report_query *q,
		       const char *format, bool files)
{
	struct store *s = NULL;
	char *text = NULL;
	size_t len = 0;
	enum report_format fmt;
	FILE *out = open_memstream(&text, &len);

	assert_non_null(out);
	assert_int_equal(store_open(db, true, &s), 0);
	if (files) {
		assert_int_equal(filesq_run_store(s, db, q, format, out), 0);
	} else {
		assert_int_equal(storeq_format_parse(format, &fmt), 0);
		assert_int_equal(report_run_store(s, db, q, fmt, out), 0);
	}
	store_close(s);
	fclose(out);
	if (getenv("TEST_FILESQ_SHOW"))
		fputs(text, stdout);
	return text;
}

/*
 * The records' files through the store: report's Data section (text, JSON,
 * HTML), files --pid and --task, a user who sees only their own processes,
 * and a record whose argv column is corrupt.
 */
static void test_store_data(void **state)
{
	char dir[] = "/tmp/jt_filesq_XXXXXX", db[64];
	struct report_query q = { .job = "88" };
	struct store *s = NULL;
	sqlite3 *h = NULL;
	char *t, *v;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(db, sizeof(db), "%s/jobtrace.db", dir);
	assert_int_equal(store_open(db, false, &s), 0);
	test_put_json(s, proc88, 10, 1, 1000, "align", "bwa",
		      "[{\"path\":\"/d/in.fq\",\"flags\":[\"read\"],\"opens\":1,"
		      "\"read_bytes\":4000,\"write_bytes\":0,\"size_bytes\":4000,"
		      "\"mmap\":false,\"deleted\":false},"
		      "{\"path\":\"/d/a.sam\",\"flags\":[\"write\",\"create\"],"
		      "\"opens\":1,\"read_bytes\":0,\"write_bytes\":9000,"
		      "\"size_bytes\":9000,\"mmap\":false,\"deleted\":false}]");
	test_put_json(s, proc88, 20, 10, 1001, "sort", "samtools",
		      "[{\"path\":\"/d/a.sam\",\"flags\":[\"read\"],\"opens\":1,"
		      "\"read_bytes\":9000,\"write_bytes\":0,\"size_bytes\":9000,"
		      "\"mmap\":false,\"deleted\":false},"
		      "{\"path\":\"/d/s.bam\",\"flags\":[\"write\",\"create\"],"
		      "\"opens\":1,\"read_bytes\":0,\"write_bytes\":3000,"
		      "\"size_bytes\":3000,\"mmap\":false,\"deleted\":false}]");
	assert_true(store_flush(s) > 0);
	store_close(s);

	t = store_out(db, &q, "text", false);
	assert_non_null(strstr(t, "\nData (per workflow task"));
	assert_non_null(strstr(t, "\nalign (1 process)\n  inputs:\n"
			       "       3.9 KiB  read    3.9 KiB  written"
			       "        0 B  /d/in.fq\n"));
	assert_non_null(strstr(t, "  /d/a.sam  (from align)\n"));
	free(t);
	t = store_out(db, &q, "json", false);
	jq_is(t, "$.data.tasks[1].task", "sort");
	jq_is(t, "$.data.tasks[1].inputs[0].from", "align");
	jq_is(t, "$.data.tasks[1].outputs[0].size_bytes", "3000");
	/* its processes' reads and writes in all against those through files */
	jq_is(t, "$.data.tasks[0].rchar", "107");
	jq_is(t, "$.data.tasks[0].wchar", "109");
	jq_is(t, "$.data.tasks[0].file_read_bytes", "4000");
	jq_is(t, "$.data.tasks[0].file_write_bytes", "9000");
	jq_is(t, "$.data.tasks[1].rchar", "207");
	jq_is(t, "$.data.tasks[1].not_listed_read_bytes", "0");
	v = test_jq(t, "$.data.note");
	assert_non_null(strstr(v, "unless it ran with files.follow_opens, a file"
			       " opened and closed between two passes is not"
			       " listed"));
	free(v);
	free(t);
	t = store_out(db, &q, "html", false);
	assert_non_null(strstr(t, "<section><h2>Data</h2>"));
	free(t);

	/* files --pid 10: it and its child; --task sort: the child only */
	q = (struct report_query){ .pid = 10 };
	t = store_out(db, &q, "csv", true);
	assert_non_null(strstr(t, "\nn1,10,align,bwa,/d/in.fq,read,1,4000,0,"
			       "4000,false,false\n"));
	assert_non_null(strstr(t, "\nn1,20,sort,samtools,/d/s.bam,"));
	free(t);
	q = (struct report_query){ .run = "r88", .task = "sort" };
	t = store_out(db, &q, "json", true);
	jq_is(t, "$.processes[0].pid", "20");
	jq_is(t, "$.processes[1].pid", "");
	jq_is(t, "$.processes[0].files_nonregular.pipes", "1");
	free(t);
	/* uid 1001 sees its own process only */
	q = (struct report_query){ .run = "r88", .uid_only = true,
				   .uid = 1001 };
	t = store_out(db, &q, "csv", true);
	assert_null(strstr(t, "/d/in.fq"));
	assert_non_null(strstr(t, "/d/s.bam"));
	free(t);

	/* a corrupt argv column (the view's json fails on it): both records
	 * still show their files */
	assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
	assert_int_equal(sqlite3_exec(h, "UPDATE process_rec SET argv = '[\"a'"
				      " WHERE pid = 10", NULL, NULL, NULL),
			 SQLITE_OK);
	sqlite3_close(h);
	q = (struct report_query){ .job = "88" };
	t = store_out(db, &q, "csv", true);
	assert_non_null(strstr(t, "/d/in.fq"));
	assert_non_null(strstr(t, "/d/s.bam"));
	free(t);
	test_remove_tree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_classify),
		cmocka_unit_test(test_temp_last_word),
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_progress_text),
		cmocka_unit_test(test_formats),
		cmocka_unit_test(test_csv_quote),
		cmocka_unit_test(test_data_text),
		cmocka_unit_test(test_data_off),
		cmocka_unit_test(test_progress_store),
		cmocka_unit_test(test_store_data),
	};

	log_init("test_filesq", 0, LOG_LVL_ERROR);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
