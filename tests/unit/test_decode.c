// SPDX-License-Identifier: GPL-2.0-or-later
/* test_decode.c - unit tests for agent/daemon/collect/decode.c. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "decode.h"

/* Fill an object with a non-zero pattern so missing NULs show up. */
#define FILL(x) memset(&(x), 'A', sizeof(x))

/* A fork record of the right size decodes and its comm is terminated. */
static void test_fork(void **state)
{
	struct jt_ev_fork f;
	union jt_event ev;

	(void)state;
	FILL(f);
	f.hdr.type = JT_EV_FORK;
	f.hdr.pid = 4242;
	f.hdr.ts_ns = 111;
	f.hdr.start_ns = 222;
	f.ppid = 1;
	f.uid = 1000;
	f.parent_start_ns = 333;
	memcpy(f.comm, "bash", 5);
	assert_int_equal(decode_event(&f, sizeof(f), &ev), JT_EV_FORK);
	assert_int_equal(ev.hdr.type, JT_EV_FORK);
	assert_int_equal(ev.fork.hdr.pid, 4242);
	assert_int_equal(ev.fork.hdr.ts_ns, 111);
	assert_int_equal(ev.fork.hdr.start_ns, 222);
	assert_int_equal(ev.fork.ppid, 1);
	assert_int_equal(ev.fork.uid, 1000);
	assert_int_equal(ev.fork.parent_start_ns, 333);
	assert_string_equal(ev.fork.comm, "bash");

	/* unterminated comm: cut at the last byte */
	memset(f.comm, 'x', sizeof(f.comm));
	assert_int_equal(decode_event(&f, sizeof(f), &ev), JT_EV_FORK);
	assert_int_equal(strlen(ev.fork.comm), JT_COMM_LEN - 1);
}

/* Build an exec record with every array full of non-NUL bytes. */
static void make_exec(struct jt_ev_exec *e)
{
	FILL(*e);
	e->hdr.type = JT_EV_EXEC;
	e->hdr.pid = 77;
	e->ppid = 76;
	e->uid = 0;
	e->cgroup_id = 0x1234;
	e->flags = 0;
}

/* An exec record: strings terminated, cgroup paths cut at their length. */
static void test_exec(void **state)
{
	struct jt_ev_exec *e = malloc(sizeof(*e));
	union jt_event *ev = malloc(sizeof(*ev));
	static const char argv[] = "ls\0-l\0/tmp";
	static const char cg2[] = "/system.slice/slurmstepd.scope/job_1";
	static const char cg1[] = "/slurm/uid_0/job_1";

	(void)state;
	assert_non_null(e);
	assert_non_null(ev);
	make_exec(e);
	memcpy(e->argv, argv, sizeof(argv) - 1);
	e->argv_len = sizeof(argv) - 1;
	memcpy(e->cg2, cg2, sizeof(cg2) - 1);	/* filled without NUL */
	e->cg2_len = sizeof(cg2) - 1;
	memcpy(e->cg1, cg1, sizeof(cg1) - 1);
	e->cg1_len = sizeof(cg1) - 1;
	memcpy(e->filename, "/usr/bin/ls", 12);
	memcpy(e->comm, "ls", 3);
	/* an exec record carries only the argv bytes in use */
	assert_int_equal(decode_event(e, sizeof(*e), ev), -EMSGSIZE);
	assert_int_equal(decode_event(e, JT_EXEC_FIXED_SIZE + e->argv_len - 1,
				      ev), -EMSGSIZE);
	assert_int_equal(decode_event(e, JT_EXEC_FIXED_SIZE + e->argv_len, ev),
			 JT_EV_EXEC);
	assert_int_equal(ev->exec.hdr.pid, 77);
	assert_int_equal(ev->exec.cgroup_id, 0x1234);
	assert_string_equal(ev->exec.comm, "ls");
	assert_string_equal(ev->exec.filename, "/usr/bin/ls");
	assert_int_equal(ev->exec.argv_len, sizeof(argv) - 1);
	assert_memory_equal(ev->exec.argv, argv, sizeof(argv) - 1);
	assert_string_equal(ev->exec.cg2, cg2);
	assert_int_equal(ev->exec.cg2_len, strlen(cg2));
	assert_string_equal(ev->exec.cg1, cg1);
	assert_int_equal(ev->exec.cg1_len, strlen(cg1));
	assert_int_equal(ev->exec.flags, 0);

	/* the flags pass as sent; a full filename stays 255 bytes */
	e->flags = JT_EF_ARGV_TRUNC | JT_EF_EXE_TRUNC;
	memset(e->filename, 'f', sizeof(e->filename));
	assert_int_equal(decode_event(e, JT_EXEC_FIXED_SIZE + e->argv_len, ev),
			 JT_EV_EXEC);
	assert_int_equal(ev->exec.flags, JT_EF_ARGV_TRUNC | JT_EF_EXE_TRUNC);
	assert_int_equal(strlen(ev->exec.filename), JT_FILENAME_LEN - 1);

	/* empty v1 path, root v2 path */
	make_exec(e);
	e->cg1_len = 0;
	e->cg2[0] = '/';
	e->cg2_len = 1;
	e->argv_len = 0;
	assert_int_equal(decode_event(e, JT_EXEC_FIXED_SIZE, ev), JT_EV_EXEC);
	assert_string_equal(ev->exec.cg1, "");
	assert_string_equal(ev->exec.cg2, "/");
	assert_int_equal(ev->exec.argv_len, 0);
	free(e);
	free(ev);
}

/* Lengths beyond the arrays are clamped, strings stay inside them. */
static void test_exec_clamp(void **state)
{
	struct jt_ev_exec *e = malloc(sizeof(*e));
	union jt_event *ev = malloc(sizeof(*ev));

	(void)state;
	assert_non_null(e);
	assert_non_null(ev);
	make_exec(e);
	e->argv_len = 0xffff;	/* claims more than the record holds */
	assert_int_equal(decode_event(e, sizeof(*e), ev), -EMSGSIZE);
	e->argv_len = JT_ARGV_LEN;
	e->cg2_len = 0xffff;
	e->cg1_len = JT_CGROUP_LEN;	/* exactly full: no room for NUL */
	assert_int_equal(decode_event(e, sizeof(*e), ev), JT_EV_EXEC);
	assert_int_equal(ev->exec.argv_len, JT_ARGV_LEN);
	assert_int_equal(ev->exec.cg2_len, JT_CGROUP_LEN - 1);
	assert_int_equal(ev->exec.cg1_len, JT_CGROUP_LEN - 1);
	assert_int_equal(strlen(ev->exec.cg2), JT_CGROUP_LEN - 1);
	assert_int_equal(strlen(ev->exec.cg1), JT_CGROUP_LEN - 1);
	assert_int_equal(strlen(ev->exec.comm), JT_COMM_LEN - 1);
	assert_int_equal(strlen(ev->exec.filename), JT_FILENAME_LEN - 1);

	/* one below the limit is kept as is */
	make_exec(e);
	e->argv_len = JT_ARGV_LEN - 1;
	e->cg2_len = JT_CGROUP_LEN - 1;
	e->cg1_len = 5;
	assert_int_equal(decode_event(e, sizeof(*e) - 1, ev), JT_EV_EXEC);
	assert_int_equal(ev->exec.argv_len, JT_ARGV_LEN - 1);
	assert_int_equal(ev->exec.cg2_len, JT_CGROUP_LEN - 1);
	assert_string_equal(ev->exec.cg1, "AAAAA");
	free(e);
	free(ev);
}

/* An exit record keeps every counter and terminates comm. */
static void test_exit(void **state)
{
	struct jt_ev_exit x;
	union jt_event ev;

	(void)state;
	FILL(x);
	x.hdr.type = JT_EV_EXIT;
	x.exit_status = 0x8b;
	x.runtime_ns = 2000000000ULL;
	x.peak_rss_bytes = UINT64_MAX;
	x.tx_bytes = 12345;
	assert_int_equal(decode_event(&x, sizeof(x), &ev), JT_EV_EXIT);
	assert_int_equal(ev.exit.exit_status, 0x8b);
	assert_int_equal(ev.exit.runtime_ns, 2000000000ULL);
	assert_true(ev.exit.peak_rss_bytes == UINT64_MAX);
	assert_int_equal(ev.exit.tx_bytes, 12345);
	assert_int_equal(strlen(ev.exit.comm), JT_COMM_LEN - 1);
}

/* An OOM record decodes and terminates comm. */
static void test_oom(void **state)
{
	struct jt_ev_oom o;
	union jt_event ev;

	(void)state;
	FILL(o);
	o.hdr.type = JT_EV_OOM;
	o.uid = 1001;
	o.rss_pages = 99;
	memcpy(o.comm, "python3", 8);
	assert_int_equal(decode_event(&o, sizeof(o), &ev), JT_EV_OOM);
	assert_int_equal(ev.oom.uid, 1001);
	assert_int_equal(ev.oom.rss_pages, 99);
	assert_string_equal(ev.oom.comm, "python3");
	memset(o.comm, 'z', sizeof(o.comm));
	assert_int_equal(decode_event(&o, sizeof(o), &ev), JT_EV_OOM);
	assert_int_equal(strlen(ev.oom.comm), JT_COMM_LEN - 1);
}

/* Sizes other than the exact struct size are refused. */
static void test_wrong_size(void **state)
{
	static const struct {
		uint32_t type;
		size_t size;
	} t[] = {
		{ JT_EV_FORK, sizeof(struct jt_ev_fork) },
		{ JT_EV_EXEC, JT_EXEC_FIXED_SIZE },	/* argv_len 0 */
		{ JT_EV_EXIT, sizeof(struct jt_ev_exit) },
		{ JT_EV_OOM, sizeof(struct jt_ev_oom) },
	};
	unsigned char *buf = calloc(1, 2 * sizeof(struct jt_ev_exec));
	union jt_event *ev = malloc(sizeof(*ev));
	const uint32_t exec_type = JT_EV_EXEC;
	size_t i;

	(void)state;
	assert_non_null(buf);
	assert_non_null(ev);
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		memcpy(buf, &t[i].type, sizeof(t[i].type));
		assert_int_equal(decode_event(buf, t[i].size, ev),
				 (int)t[i].type);
		assert_int_equal(decode_event(buf, t[i].size - 1, ev),
				 -EMSGSIZE);
		assert_int_equal(decode_event(buf, t[i].size + 1, ev),
				 -EMSGSIZE);
		assert_int_equal(decode_event(buf, sizeof(struct jt_ev_hdr),
					      ev), -EMSGSIZE);
		assert_int_equal(decode_event(buf, 2 * sizeof(struct jt_ev_exec),
					      ev), -EMSGSIZE);
	}
	/* a fork-sized record claiming to be an exec */
	memcpy(buf, &exec_type, sizeof(exec_type));
	assert_int_equal(decode_event(buf, sizeof(struct jt_ev_fork), ev),
			 -EMSGSIZE);
	/* too short to carry a type at all */
	assert_int_equal(decode_event(buf, 0, ev), -EMSGSIZE);
	assert_int_equal(decode_event(buf, 3, ev), -EMSGSIZE);
	free(buf);
	free(ev);
}

/* A file's open: the path ends at its length, inside its array, and the
 * length is what the string holds; a close has its one size. */
static void test_file_events(void **state)
{
	struct jt_ev_fopen o;
	struct jt_ev_fclose c;
	union jt_event ev;

	(void)state;
	memset(&o, 'A', sizeof(o));
	o.hdr.type = JT_EV_FOPEN;
	o.path_len = 100000;		/* past the array, no NUL at all */
	assert_int_equal(decode_event(&o, sizeof(o), &ev), JT_EV_FOPEN);
	assert_int_equal(ev.fopen.path_len, JT_PATH_LEN - 1);
	assert_int_equal(strlen(ev.fopen.path), JT_PATH_LEN - 1);
	o.path_len = 10;
	memcpy(o.path, "/a\0bcdefghij", 12);	/* a NUL before its length */
	assert_int_equal(decode_event(&o, sizeof(o), &ev), JT_EV_FOPEN);
	assert_int_equal(ev.fopen.path_len, 2);
	assert_string_equal(ev.fopen.path, "/a");
	assert_int_equal(decode_event(&o, sizeof(o) - 1, &ev), -EMSGSIZE);
	memset(&c, 0, sizeof(c));
	c.hdr.type = JT_EV_FCLOSE;
	assert_int_equal(decode_event(&c, sizeof(c), &ev), JT_EV_FCLOSE);
	assert_int_equal(decode_event(&c, sizeof(c) + 8, &ev), -EMSGSIZE);
}

/* Unknown types are refused whatever their size. */
static void test_unknown_type(void **state)
{
	unsigned char buf[sizeof(struct jt_ev_fork)] = { 0 };
	union jt_event ev;
	uint32_t types[] = { 0, 7, 0xff, 0x01000000, UINT32_MAX };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		memcpy(buf, &types[i], sizeof(types[i]));
		assert_int_equal(decode_event(buf, sizeof(buf), &ev), -EINVAL);
		assert_int_equal(decode_event(buf, 4, &ev), -EINVAL);
	}
	assert_int_equal(decode_event(NULL, 0, &ev), -EINVAL);
	assert_int_equal(decode_event(buf, sizeof(buf), NULL), -EINVAL);
}

/* A record at an odd address (packed in a byte stream) still decodes. */
static void test_unaligned(void **state)
{
	unsigned char *raw = malloc(sizeof(struct jt_ev_oom) + 1);
	struct jt_ev_oom o;
	union jt_event ev;

	(void)state;
	assert_non_null(raw);
	memset(&o, 0, sizeof(o));
	o.hdr.type = JT_EV_OOM;
	o.hdr.pid = 9;
	memcpy(raw + 1, &o, sizeof(o));
	assert_int_equal(decode_event(raw + 1, sizeof(o), &ev), JT_EV_OOM);
	assert_int_equal(ev.oom.hdr.pid, 9);
	free(raw);
}

/* wait(2) statuses: exits, signals, core dumps. */
static void test_exit_status(void **state)
{
	static const struct {
		uint32_t st;
		int code, sig, core;
	} t[] = {
		{ 0x0000, 0, 0, 0 },		/* exit 0 */
		{ 0x0300, 3, 0, 0 },		/* exit 3 */
		{ 0xff00, 255, 0, 0 },		/* exit 255 */
		{ 0x0100, 1, 0, 0 },		/* exit 1 */
		{ 0x0009, -1, 9, 0 },		/* SIGKILL */
		{ 0x000f, -1, 15, 0 },		/* SIGTERM */
		{ 0x008b, -1, 11, 1 },		/* SIGSEGV, core dumped */
		{ 0x0086, -1, 6, 1 },		/* SIGABRT, core dumped */
		{ 0x0006, -1, 6, 0 },		/* SIGABRT, no core */
		{ 0x0002, -1, 2, 0 },		/* SIGINT */
		{ 0xffff0000, 0, 0, 0 },	/* junk above bit 15 ignored */
	};
	struct jt_exit_status out;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		memset(&out, 0x55, sizeof(out));
		decode_exit_status(t[i].st, &out);
		assert_int_equal(out.code, t[i].code);
		assert_int_equal(out.signal, t[i].sig);
		assert_int_equal(out.core_dumped, t[i].core);
	}
	decode_exit_status(0, NULL);	/* must not crash */
}

/* Compare doubles to within one nanosecond. */
static void assert_sec(double got, double want)
{
	double d = got - want;

	if (d < -1e-9 || d > 1e-9) {
		print_error("%.9f != %.9f\n", got, want);
		fail();
	}
}

/* CPU split follows the tick ratio and the kernel's edge cases. */
static void test_cpu_split(void **state)
{
	const uint64_t tick = 4000000;	/* 4 ms, HZ=250 */
	double u, s;

	(void)state;
	/* 2 s of runtime, 3 user ticks : 1 system tick */
	decode_cpu_split(2000000000ULL, 3 * tick, 1 * tick, &u, &s);
	assert_sec(u, 1.5);
	assert_sec(s, 0.5);

	/* no ticks at all: everything is user time, like the kernel */
	decode_cpu_split(1500000, 0, 0, &u, &s);
	assert_sec(u, 0.0015);
	assert_sec(s, 0);

	/* only user or only system ticks */
	decode_cpu_split(7000000000ULL, 5 * tick, 0, &u, &s);
	assert_sec(u, 7);
	assert_sec(s, 0);
	decode_cpu_split(7000000000ULL, 0, 5 * tick, &u, &s);
	assert_sec(u, 0);
	assert_sec(s, 7);

	/* zero runtime */
	decode_cpu_split(0, tick, tick, &u, &s);
	assert_sec(u, 0);
	assert_sec(s, 0);

	/* sum of u and s is exactly the runtime (integer ns) */
	decode_cpu_split(1000000001ULL, tick, 2 * tick, &u, &s);
	assert_sec(u + s, 1.000000001);
	assert_sec(s, 0.666666667);

	/* huge values: products far beyond 64 bits must not wrap */
	decode_cpu_split(UINT64_MAX, UINT64_MAX, UINT64_MAX, &u, &s);
	assert_true(u > 9.2e9 && u < 9.3e9);
	assert_true(s > 9.2e9 && s < 9.3e9);
	assert_sec(u / 1e9, s / 1e9);
	decode_cpu_split(UINT64_MAX, UINT64_MAX - 1, 1, &u, &s);
	assert_sec(s, 1e-9);
	assert_true(u > 1.8e10);
	decode_cpu_split(1000000000000ULL, 1, UINT64_MAX, &u, &s);
	assert_sec(u, 1e-9);		/* floor() leaves 1 ns to user */
	assert_sec(s, 999.999999999);
	/* 100 days of runtime, ratio 1:3 */
	decode_cpu_split(8640000000000000ULL, 1ULL << 62, 3ULL << 62, &u, &s);
	assert_sec(u, 2160000);
	assert_sec(s, 6480000);

	/* NULL outputs are allowed */
	decode_cpu_split(1, 1, 1, NULL, NULL);
}

/* Whole records are counted, a trailing partial one is reported. */
static void test_samples(void **state)
{
	const size_t sz = sizeof(struct jt_sample);
	struct jt_sample *buf = calloc(4, sz);
	const struct jt_sample *first;
	size_t partial;

	(void)state;
	assert_non_null(buf);
	buf[0].pid = 10;
	buf[1].pid = 11;
	buf[2].pid = 12;

	assert_int_equal(decode_samples(buf, 3 * sz, &first, &partial), 3);
	assert_ptr_equal(first, buf);
	assert_int_equal(partial, 0);
	assert_int_equal(first[2].pid, 12);

	assert_int_equal(decode_samples(buf, 3 * sz + 17, &first, &partial),
			 3);
	assert_int_equal(partial, 17);

	assert_int_equal(decode_samples(buf, sz - 1, &first, &partial), 0);
	assert_null(first);
	assert_int_equal(partial, sz - 1);

	assert_int_equal(decode_samples(buf, 0, &first, &partial), 0);
	assert_null(first);
	assert_int_equal(partial, 0);

	assert_int_equal(decode_samples(buf, 2 * sz, NULL, NULL), 2);
	assert_int_equal(decode_samples(NULL, 0, &first, &partial), 0);
	assert_null(first);

	/* a misaligned buffer is refused rather than misread */
	assert_int_equal(decode_samples((char *)buf + 1, 2 * sz, &first,
					&partial), 0);
	assert_null(first);
	assert_int_equal(partial, 2 * sz);
	free(buf);
}

/* argv copies always end in NUL and count arguments like the kernel. */
static void test_argv(void **state)
{
	static const struct {
		const char *in;
		size_t len;
		size_t argc;
	} t[] = {
		{ "ls\0-l\0/tmp\0", 11, 3 },	/* final NUL */
		{ "ls\0-l\0/tmp", 10, 3 },	/* truncated, no final NUL */
		{ "ls", 2, 1 },
		{ "ls\0", 3, 1 },
		{ "\0", 1, 1 },			/* one empty argument */
		{ "a\0\0b\0", 5, 3 },		/* empty argument between */
		{ "a\0\0\0", 4, 3 },
		{ "", 0, 0 },			/* empty argv */
	};
	size_t i, argc;
	char *out;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		argc = 12345;
		out = decode_argv_dup(t[i].in, t[i].len, &argc);
		assert_non_null(out);
		assert_int_equal(argc, t[i].argc);
		assert_memory_equal(out, t[i].in, t[i].len);
		assert_int_equal(out[t[i].len], '\0');
		free(out);
	}
	out = decode_argv_dup(NULL, 10, &argc);
	assert_non_null(out);
	assert_string_equal(out, "");
	assert_int_equal(argc, 0);
	free(out);
	out = decode_argv_dup("x\0y", 3, NULL);
	assert_non_null(out);
	assert_string_equal(out + 2, "y");
	free(out);
}

/* A full JT_ARGV_LEN argv from an exec event is copied whole. */
static void test_argv_full(void **state)
{
	char *in = malloc(JT_ARGV_LEN);
	char *out;
	size_t argc;

	(void)state;
	assert_non_null(in);
	memset(in, 'a', JT_ARGV_LEN);
	in[1] = '\0';
	out = decode_argv_dup(in, JT_ARGV_LEN, &argc);
	assert_non_null(out);
	assert_int_equal(argc, 2);
	assert_int_equal(strlen(out + 2), JT_ARGV_LEN - 2);
	free(in);
	free(out);
}

/* Run every test in this file. */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fork),
		cmocka_unit_test(test_exec),
		cmocka_unit_test(test_exec_clamp),
		cmocka_unit_test(test_exit),
		cmocka_unit_test(test_oom),
		cmocka_unit_test(test_wrong_size),
		cmocka_unit_test(test_unknown_type),
		cmocka_unit_test(test_file_events),
		cmocka_unit_test(test_unaligned),
		cmocka_unit_test(test_exit_status),
		cmocka_unit_test(test_cpu_split),
		cmocka_unit_test(test_samples),
		cmocka_unit_test(test_argv),
		cmocka_unit_test(test_argv_full),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
