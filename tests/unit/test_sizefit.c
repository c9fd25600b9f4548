// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_sizefit.c - resources as a function of input size (sizefit.h): the
 * least-squares line against figures worked out apart (Python's
 * arithmetic on the same points), when a figure grows and when it does
 * not, and `jobtrace rightsize` over a store of 6 runs of a sort whose
 * memory and time grow with its input: the instances' input bytes from
 * their records' files, the fit in text and JSON, the Nextflow closures
 * and the Snakemake rules file.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "log.h"
#include "rightsize.h"
#include "sizefit.h"
#include "store.h"
#include "test_files.h"

#define GIB (1ULL << 30)
#define MIB (1ULL << 20)

/* |got - want| <= tol, or fail naming what. */
static void near(const char *what, double got, double want, double tol)
{
	if (fabs(got - want) > tol)
		fail_msg("%s: %.12g, want %.12g (+- %g)", what, got, want, tol);
}

/*
 * The line over 6 points against the figures Python computes from the
 * same points (mean-centred sums): a 0.08, b 1.977142857142857, s
 * 0.166476081508083, se_b 0.039795395077669, r2 0.998382119923276.
 */
static void test_linear(void **state)
{
	static const double x[] = { 1, 2, -1, 3, 4, 5, 6 };
	static const double y[] = { 2.1, 3.9, 1e9, 6.2, 7.8, 10.1, 11.9 };
	struct sizefit f;

	(void)state;
	assert_int_equal(sizefit_linear(x, y, 7, &f), 0);
	assert_int_equal(f.n, 6);	/* x -1: not known, left out */
	near("a", f.a, 0.08000000000000096, 1e-12);
	near("b", f.b, 1.9771428571428569, 1e-12);
	near("s", f.s, 0.16647608150808263, 1e-12);
	near("se_b", f.se_b, 0.03979539507766895, 1e-12);
	near("r2", f.r2, 0.9983821199232757, 1e-12);
	near("x_min", f.x_min, 1, 0);
	near("x_max", f.x_max, 6, 0);
	assert_true(f.grows);
	near("at 10", sizefit_at(&f, 10), 0.08 + 19.771428571428569 +
	     2 * 0.16647608150808263, 1e-9);
}

/* Too few points, all x equal, a flat or falling or noisy figure: it does
 * not grow. */
static void test_not_growing(void **state)
{
	static const double x[] = { 1, 2, 3, 4, 5, 6 };
	static const double flat[] = { 5, 5, 5, 5, 5, 5 };
	static const double fall[] = { 9, 8, 7, 6, 5, 4 };
	static const double noise[] = { 5, 1, 9, 2, 8, 6 };
	static const double same[] = { 3, 3, 3, 3, 3, 3 };
	struct sizefit f;

	(void)state;
	assert_int_equal(sizefit_linear(x, fall, 4, &f), 0);
	assert_false(f.grows);			/* 4 < SIZEFIT_MIN_N */
	assert_int_equal(sizefit_linear(x, x, 4, &f), 0);
	assert_false(f.grows);			/* a perfect line, 4 points */
	assert_int_equal(sizefit_linear(x, x, 5, &f), 0);
	assert_true(f.grows);			/* ... and with 5 */
	assert_int_equal(sizefit_linear(x, flat, 6, &f), 0);
	assert_false(f.grows);
	near("flat b", f.b, 0, 0);
	assert_int_equal(sizefit_linear(x, fall, 6, &f), 0);
	assert_false(f.grows);
	near("fall b", f.b, -1, 1e-12);
	assert_int_equal(sizefit_linear(x, noise, 6, &f), 0);
	assert_false(f.grows);			/* r2 0.19, b < 2 se_b */
	assert_int_equal(sizefit_linear(same, flat, 6, &f), -EINVAL);
	assert_false(f.grows);
	assert_int_equal(sizefit_linear(x, flat, 2, &f), -EINVAL);
}

/* A process record of run r: sort reading IN bytes (files) with that
 * peak and end (printf: run, pid, start s, end s, peak, in, out). */
static const char sortrec[] =
	"{\"type\":\"process\",\"schema\":1,\"host\":\"n1\","
	"\"id\":\"p-%2$d\",\"pid\":%2$d,\"ppid\":1,\"parent_id\":null,"
	"\"start_time\":\"2026-03-01T10:%3$02d:00Z\","
	"\"end_time\":\"2026-03-01T10:%3$02d:%4$02dZ\",\"exe\":\"/usr/bin/sort\","
	"\"comm\":\"sort\",\"argv\":[\"sort\"],\"uid\":0,"
	"\"job\":{\"scheduler\":null,\"id\":\"j%1$d\",\"step\":null,"
	"\"run\":\"r%1$d\",\"pipeline\":\"p\",\"task\":\"sort\",\"user\":null,"
	"\"account\":null,\"cost_center\":null},"
	"\"tool\":{\"name\":\"sort\",\"category\":null},"
	"\"exit\":{\"code\":0,\"signal\":null,\"oom_killed\":false},"
	"\"cpu\":{\"user_s\":1,\"sys_s\":0},"
	"\"mem\":{\"peak_rss_bytes\":%5$llu,\"rss_bytes\":1},"
	"\"io\":{\"read_bytes\":0,\"write_bytes\":0,"
	"\"cancelled_write_bytes\":0,\"rchar\":0,\"wchar\":0,"
	"\"blkio_delay_s\":0},\"net\":{\"rx_bytes\":0,\"tx_bytes\":0},"
	"\"files\":[{\"path\":\"/d/in%1$d\",\"flags\":[\"read\"],\"opens\":1,"
	"\"read_bytes\":%6$llu,\"write_bytes\":0,\"size_bytes\":%6$llu,"
	"\"mmap\":false,\"deleted\":false},"
	"{\"path\":\"/d/out%1$d\",\"flags\":[\"write\",\"create\"],\"opens\":1,"
	"\"read_bytes\":0,\"write_bytes\":%7$llu,\"size_bytes\":%7$llu,"
	"\"mmap\":false,\"deleted\":false}],"
	"\"files_rest\":{\"count\":0,\"opens\":0,\"read_bytes\":0,"
	"\"write_bytes\":0},\"files_nonregular\":{\"pipes\":0,\"sockets\":0,"
	"\"read_bytes\":0,\"write_bytes\":0}}";

/* The output of rightsize --pipeline p --format format over db
 * (malloc'd). */
static char *rightsize_of(const char *db, const char *format)
{
	struct report_query q = { .pipeline = "p" };
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	assert_non_null(out);
	assert_int_equal(qcmd_run_path(qcmd_find("rightsize"), db, &q, format,
				       out), 0);
	fclose(out);
	if (getenv("TEST_SIZEFIT_SHOW"))
		fputs(text, stdout);
	return text;
}

/*
 * Six runs: input k GiB (k = 1..6), peak 200 MiB + 0.5 x input, wall
 * 10 s + 5 s per GiB.  The fit finds exactly that line (error 0); the
 * outputs carry it.
 */
static void test_rightsize(void **state)
{
	char dir[] = "/tmp/jt_sizefit_XXXXXX", db[64], want[128];
	struct store *s = NULL;
	char *t, *v;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(db, sizeof(db), "%s/jobtrace.db", dir);
	assert_int_equal(store_open(db, false, &s), 0);
	for (int k = 1; k <= 6; k++)
		test_put_json(s, sortrec, k, 100 + k, k, 10 + 5 * k,
			      200 * MIB + k * GIB / 2, k * GIB, k * MIB);
	assert_true(store_flush(s) > 0);
	store_close(s);

	t = rightsize_of(db, "json");
	v = test_jq(t, "$.tasks[0].input_fit.instances_with_input");
	assert_string_equal(v, "6");
	free(v);
	v = test_jq(t, "$.tasks[0].input_fit.memory_bytes.slope");
	near("memory slope", atof(v), 0.5, 1e-9);
	free(v);
	v = test_jq(t, "$.tasks[0].input_fit.memory_bytes.intercept");
	near("memory intercept", atof(v), 200.0 * MIB, 1e-3);
	free(v);
	v = test_jq(t, "$.tasks[0].input_fit.memory_bytes.input_max_bytes");
	near("input max", atof(v), 6.0 * GIB, 0);
	free(v);
	v = test_jq(t, "$.tasks[0].input_fit.wall_s.slope");
	near("wall slope (s per byte)", atof(v) * GIB, 5, 1e-9);
	free(v);
	free(t);

	t = rightsize_of(db, "text");
	assert_non_null(strstr(t, "  sort grows with its input size"));
	assert_non_null(strstr(t, "    memory = 200.0 MiB + 0.5 x input (error"
			       " 0 B, r2 1.00, 6 instances, input 1.0 GiB to"
			       " 6.0 GiB)\n"));
	free(t);
	t = rightsize_of(db, "nextflow");
	snprintf(want, sizeof(want), "        memory = { def x = [INPUTS]"
		 ".flatten().sum { it.size() } ?: 0; \"${Math.max(%llu,",
		 (unsigned long long)rightsize_memory(200 * MIB + GIB / 2));
	assert_non_null(strstr(t, want));
	assert_non_null(strstr(t, "    withName: 'sort' {\n        cpus = 1\n"));
	free(t);
	t = rightsize_of(db, "snakemake");
	assert_non_null(strstr(t, "# sort grows with its input size: a profile"
			       " cannot hold a callable"));
	free(t);
	t = rightsize_of(db, "snakemake-rules");
	assert_non_null(strstr(t, "jobtrace_mem_mb[\"sort\"] = lambda"
			       " wildcards, input: max("));
	assert_non_null(strstr(t, "jobtrace_runtime[\"sort\"] = lambda"
			       " wildcards, input: max(1, math.ceil(1.5 * (10 +"
			       " 4.656612873e-09 * _jobtrace_bytes(input) + 0) / 60))"
			       "\n"));
	free(t);
	test_remove_tree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_linear),
		cmocka_unit_test(test_not_growing),
		cmocka_unit_test(test_rightsize),
	};

	log_init("test_sizefit", 0, LOG_LVL_ERROR);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
