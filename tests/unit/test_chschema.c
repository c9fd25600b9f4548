// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_chschema.c - unit tests for agent/core/chschema.c: schema v1 records as
 * ClickHouse JSONEachRow rows, and the DDL.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "chschema.h"
#include "schema.h"
#include "json_check.h"

/* ---- helpers ---------------------------------------------------------------- */

/* Whether s[0..n) is exactly one JSON object followed by "\n". */
static int valid_row(const char *s, size_t n)
{
	if (n < 3 || s[0] != '{' || s[n - 1] != '\n')
		return 0;
	return json_valid_n(s, n - 1);
}

/* The row of the last successful row(), its length and table. */
static struct jbuf rowbuf;
static const char *row_table;

/* Convert a record; returns chschema_row's result, the row in rowbuf. */
static int row(const char *rec)
{
	jbuf_reset(&rowbuf);
	return chschema_row(&rowbuf, rec, strlen(rec), &row_table);
}

/* Convert a record that must be accepted into table; returns the row. */
static const char *row_ok(const char *rec, const char *table)
{
	int rc = row(rec);

	if (rc)
		fprintf(stderr, "rejected (%d: %s): %s\n", rc,
			chschema_strerror(), rec);
	assert_int_equal(rc, 0);
	assert_non_null(row_table);
	assert_string_equal(row_table, table);
	assert_true(valid_row(rowbuf.buf, rowbuf.len));
	return rowbuf.buf;
}

/*
 * The raw JSON value of member name in a row (malloc'd), or NULL when the
 * row has no such member.  Members are found at the top level only.
 */
static char *col(const char *rowtext, const char *name)
{
	struct vp p = { (const unsigned char *)rowtext, strlen(rowtext), 1, 1 };
	size_t klen = strlen(name), start;

	for (;;) {
		size_t k0, k1;

		v_ws(&p);
		if (p.i >= p.n || p.s[p.i] != '"')
			return NULL;
		k0 = p.i;
		if (v_string(&p))
			return NULL;
		k1 = p.i;	/* after the closing quote */
		v_ws(&p);
		p.i++;	/* ':' */
		v_ws(&p);
		start = p.i;
		if (v_value(&p))
			return NULL;
		if (k1 - k0 - 2 == klen && !memcmp(p.s + k0 + 1, name, klen)) {
			char *v = malloc(p.i - start + 1);

			assert_non_null(v);
			memcpy(v, p.s + start, p.i - start);
			v[p.i - start] = '\0';
			return v;
		}
		v_ws(&p);
		if (p.i >= p.n || p.s[p.i] != ',')
			return NULL;
		p.i++;
	}
}

/* Assert that a row's member name has the raw JSON value want. */
static void assert_col(const char *rowtext, const char *name, const char *want)
{
	char *v = col(rowtext, name);

	if (!v || strcmp(v, want))
		fprintf(stderr, "column %s: want %s, got %s\n", name, want,
			v ? v : "(absent)");
	assert_non_null(v);
	assert_string_equal(v, want);
	free(v);
}

/* Assert that a row has no member name. */
static void assert_no_col(const char *rowtext, const char *name)
{
	char *v = col(rowtext, name);

	if (v)
		fprintf(stderr, "column %s: want absent, got %s\n", name, v);
	assert_null(v);
}

/* Number of members of a row. */
static int count_cols(const char *rowtext)
{
	struct vp p = { (const unsigned char *)rowtext, strlen(rowtext), 1, 1 };
	int n = 0;

	for (;;) {
		v_ws(&p);
		if (v_string(&p))
			return n;
		v_ws(&p);
		p.i++;
		if (v_value(&p))
			return -1;
		n++;
		v_ws(&p);
		if (p.i >= p.n || p.s[p.i] != ',')
			return n;
		p.i++;
	}
}

/* Decode a JSON string token (with quotes) into malloc'd bytes, *len. */
static char *unquote(const char *tok, size_t *len)
{
	size_t n = strlen(tok), i, o = 0;
	char *out = malloc(n + 1);
	unsigned cp, lo;

	assert_non_null(out);
	assert_true(n >= 2 && tok[0] == '"' && tok[n - 1] == '"');
	for (i = 1; i < n - 1; i++) {
		if (tok[i] != '\\') {
			out[o++] = tok[i];
			continue;
		}
		switch (tok[++i]) {
		case 'b': out[o++] = '\b'; break;
		case 'f': out[o++] = '\f'; break;
		case 'n': out[o++] = '\n'; break;
		case 'r': out[o++] = '\r'; break;
		case 't': out[o++] = '\t'; break;
		case 'u':
			assert_int_equal(sscanf(tok + i + 1, "%4x", &cp), 1);
			i += 4;
			if (cp >= 0xd800 && cp <= 0xdbff) {
				assert_int_equal(sscanf(tok + i + 3, "%4x", &lo), 1);
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
				i += 6;
			}
			o += json_utf8_put(out + o, cp);
			break;
		default: out[o++] = tok[i]; break;
		}
	}
	out[o] = '\0';
	*len = o;
	return out;
}

/* Assert that string column name decodes to exactly want[0..wlen). */
static void assert_str_bytes(const char *rowtext, const char *name,
			     const char *want, size_t wlen)
{
	char *v = col(rowtext, name), *d;
	size_t n;

	assert_non_null(v);
	d = unquote(v, &n);
	assert_int_equal(n, wlen);
	assert_memory_equal(d, want, wlen);
	free(d);
	free(v);
}

/* Assert that the row's json column gives back the record's text. */
static void assert_json_back(const char *rowtext, const char *rec)
{
	assert_str_bytes(rowtext, "json", rec, strlen(rec));
}

/* ---- realistic records (doc/records.md) ------------------------------------- */

static const char process_rec[] =
	"{\"type\":\"process\",\"schema\":1,\"host\":\"node-a1\","
	"\"id\":\"6f1d2c3b-4a5e-8f60-9a1b-2c3d4e5f6a7b\",\"pid\":4242,\"ppid\":4200,"
	"\"start_time\":\"2026-11-22T10:00:00.123456Z\",\"exe\":\"/usr/bin/bwa\","
	"\"exe_truncated\":false,\"comm\":\"bwa\",\"argv\":[\"bwa\",\"mem\",\"-t\",\"8\",\"-R\","
	"\"@RG\\\\tID:s1\\\\tSM:sample \\\"NA12878\\\"\",\"/data/ref/GRCh38.fa\","
	"\"/data/r\xc3\xa9" "ads_1.fq\",\"caf\\u00ff\"],\"argv_truncated\":false,"
	"\"uid\":1001,\"cgroup\":\"/slurm_node-a1/uid_1001/job_12345/step_batch/task_0\","
	"\"container\":null,\"job\":{\"scheduler\":\"slurm\",\"id\":\"12345\","
	"\"step\":\"batch\",\"run\":\"run-7\",\"pipeline\":\"rnaseq\",\"task\":\"align\","
	"\"user\":\"alice\",\"account\":\"genomics\",\"cost_center\":\"genomics\"},"
	"\"tool\":{\"name\":\"bwa\",\"category\":\"aligner\",\"version\":null},"
	"\"end_time\":\"2026-11-22T10:05:30.000001Z\",\"exit\":{\"code\":0,"
	"\"signal\":null,\"core_dumped\":false,\"oom_killed\":false,\"lost\":false},"
	"\"cpu\":{\"user_s\":312.5,\"sys_s\":4.25},\"mem\":{\"peak_rss_bytes\":5368709120,"
	"\"maxrss_kernel_bytes\":5370000000},\"io\":{\"read_bytes\":1073741824,"
	"\"write_bytes\":536870912,\"rchar\":2147483648,\"wchar\":536870912,"
	"\"blkio_delay_s\":0.125},\"net\":{\"rx_bytes\":0,\"tx_bytes\":17}}";

static const char sample_rec[] =
	"{\"type\":\"sample\",\"schema\":1,\"host\":\"node-a1\","
	"\"id\":\"1b2c3d4e-5f60-8a1b-9c2d-3e4f5a6b7c8d\",\"time\":\"2026-11-22T10:01:00.000500Z\","
	"\"pid\":4242,\"ppid\":4200,\"start_time\":\"2026-11-22T10:00:00.123456Z\","
	"\"exe\":\"/usr/bin/bwa\",\"exe_truncated\":true,\"comm\":\"bwa\","
	"\"argv\":[\"bwa\",\"mem\"],"
	"\"argv_truncated\":true,\"uid\":1001,\"cgroup\":\"/\",\"container\":\"docker://0123abcd\","
	"\"job\":{\"scheduler\":\"aws_batch\",\"id\":\"a1b2-c3\",\"step\":null,\"run\":null,"
	"\"pipeline\":null,\"task\":null,\"user\":null,\"account\":null,\"cost_center\":null},"
	"\"tool\":{\"name\":\"bwa\",\"category\":null,\"version\":\"0.7.17\"},"
	"\"cpu\":{\"user_s\":59.999999,\"sys_s\":0},\"mem\":{\"peak_rss_bytes\":4096,"
	"\"rss_bytes\":2048},\"io\":{\"read_bytes\":0,\"write_bytes\":0,\"rchar\":10,"
	"\"wchar\":20,\"blkio_delay_s\":0},\"net\":{\"rx_bytes\":1,\"tx_bytes\":2}}";

static const char job_start_rec[] =
	"{\"type\":\"job\",\"schema\":1,\"host\":\"node-a1\","
	"\"id\":\"2c3d4e5f-6a7b-8c9d-8e0f-1a2b3c4d5e6f\",\"phase\":\"start\","
	"\"job\":{\"scheduler\":\"slurm\",\"id\":\"12345\",\"step\":null,\"run\":\"run-7\","
	"\"pipeline\":\"rnaseq\",\"task\":null,\"user\":\"alice\",\"account\":\"genomics\","
	"\"cost_center\":\"genomics\"},\"name\":\"align-all\",\"partition\":\"debug\","
	"\"node\":\"node-a1\",\"uid\":1001,\"start_time\":\"2026-11-22T09:59:58.5Z\","
	"\"end_time\":null,\"allocation\":{\"cpus\":8,\"mem_bytes\":34359738368,"
	"\"gpus\":null},\"exit_code\":null,\"cost\":null}";

static const char job_end_rec[] =
	"{\"type\":\"job\",\"schema\":1,\"host\":\"node-a1\","
	"\"id\":\"3d4e5f6a-7b8c-8d0e-9f1a-2b3c4d5e6f7a\",\"phase\":\"end\","
	"\"job\":{\"scheduler\":\"slurm\",\"id\":\"12345\",\"step\":null,\"run\":\"run-7\","
	"\"pipeline\":\"rnaseq\",\"task\":null,\"user\":\"alice\",\"account\":\"genomics\","
	"\"cost_center\":\"genomics\"},\"name\":null,\"partition\":null,"
	"\"node\":\"node-a1\",\"uid\":null,\"start_time\":\"2026-11-22T09:59:58.5Z\","
	"\"end_time\":\"2026-12-01T00:00:01.25Z\",\"allocation\":{\"cpus\":null,"
	"\"mem_bytes\":null,\"gpus\":null,\"time_limit_s\":3600},\"exit_code\":-9,"
	"\"cost\":{\"amount\":1.25,\"currency\":\"USD\",\"source\":\"config:node_hour\","
	"\"formula\":\"allocation_share\",\"price_per_hour\":3.6,\"share\":0.25,"
	"\"elapsed_s\":5000,\"note\":null},"
	"\"efficiency\":{\"cpu\":0.48,\"memory\":null,\"time\":1.388889},"
	"\"flags\":[\"cpu_underused\"]}";

static const char signal_rec[] =
	"{\"type\":\"signal\",\"schema\":1,\"host\":\"node-a1\","
	"\"id\":\"4e5f6a7b-8c9d-8e1f-8a2b-3c4d5e6f7a8b\",\"kind\":\"oom_kill\","
	"\"time\":\"2026-11-22T10:03:00.000001Z\",\"job\":{\"scheduler\":\"slurm\","
	"\"id\":\"12345\",\"step\":\"batch\",\"run\":null,\"pipeline\":null,\"task\":null,"
	"\"user\":\"ana\",\"account\":\"lab\",\"cost_center\":\"lab\"},\"pid\":4300,"
	"\"comm\":\"touchmem\",\"tool\":{\"name\":\"touchmem\",\"category\":null,"
	"\"version\":null},\"evidence\":{\"rss_bytes\":1073741824,"
	"\"total_vm_bytes\":2147483648}}";

static const char host_rec[] =
	"{\"type\":\"host\",\"schema\":1,\"host\":\"node-a1\","
	"\"id\":\"5f6a7b8c-9d0e-8f2a-9b3c-4d5e6f7a8b9c\",\"time\":\"2026-11-22T09:59:00Z\","
	"\"phase\":\"stop\",\"boot_id\":\"b7c1e0d2-7f4e-4b7a-9d55-0c1f2e3d4c5b\","
	"\"agent_version\":\"0.3.0\",\"drops\":{\"ringbuf_fork\":1,\"ringbuf_exec\":2,"
	"\"ringbuf_exit\":3,\"ringbuf_oom\":0,\"tracked_map_full\":5,\"exits_lost\":4,"
	"\"spool\":{\"fleet\":12,\"http\":3,\"neg\":-1,\"frac\":1.5,\"obj\":{\"a\":1},"
	"\"big\":18446744073709551615},\"store_size_cap\":7},\"events_seen\":123456,"
	"\"price\":{\"per_hour\":null,\"currency\":\"USD\",\"source\":null,"
	"\"node_cpus\":2,\"node_mem_bytes\":25000000000,"
	"\"note\":\"no price configured\"}}";

/* ---- tests ------------------------------------------------------------------- */

/* A process record: every field flattened, the text kept verbatim. */
static void test_process(void **state)
{
	const char *r = row_ok(process_rec, "process");

	assert_col(r, "schema", "1");
	assert_col(r, "host", "\"node-a1\"");
	assert_col(r, "id", "\"6f1d2c3b-4a5e-8f60-9a1b-2c3d4e5f6a7b\"");
	assert_col(r, "pid", "4242");
	assert_col(r, "ppid", "4200");
	assert_col(r, "start_time", "\"2026-11-22 10:00:00\"");
	assert_col(r, "start_time_us", "123456");
	assert_col(r, "end_time", "\"2026-11-22 10:05:30\"");
	assert_col(r, "end_time_us", "1");
	assert_col(r, "exe", "\"/usr/bin/bwa\"");
	assert_col(r, "exe_truncated", "0");
	assert_col(r, "comm", "\"bwa\"");
	assert_col(r, "argv_truncated", "0");
	assert_col(r, "uid", "1001");
	assert_col(r, "cgroup", "\"/slurm_node-a1/uid_1001/job_12345/step_batch/task_0\"");
	assert_no_col(r, "container");
	assert_col(r, "job_scheduler", "\"slurm\"");
	assert_col(r, "job_id", "\"12345\"");
	assert_col(r, "job_step", "\"batch\"");
	assert_col(r, "job_run", "\"run-7\"");
	assert_col(r, "job_pipeline", "\"rnaseq\"");
	assert_col(r, "job_task", "\"align\"");
	assert_col(r, "job_user", "\"alice\"");
	assert_col(r, "job_account", "\"genomics\"");
	assert_col(r, "job_cost_center", "\"genomics\"");
	assert_col(r, "tool_name", "\"bwa\"");
	assert_col(r, "tool_category", "\"aligner\"");
	assert_no_col(r, "tool_version");
	assert_col(r, "exit_code", "0");
	assert_no_col(r, "exit_signal");
	assert_col(r, "exit_core_dumped", "0");
	assert_col(r, "exit_oom_killed", "0");
	assert_col(r, "exit_lost", "0");
	assert_col(r, "cpu_user_s", "312.5");
	assert_col(r, "cpu_sys_s", "4.25");
	assert_col(r, "mem_peak_rss_bytes", "5368709120");
	assert_col(r, "mem_maxrss_kernel_bytes", "5370000000");
	assert_col(r, "io_read_bytes", "1073741824");
	assert_col(r, "io_write_bytes", "536870912");
	assert_col(r, "io_rchar", "2147483648");
	assert_col(r, "io_wchar", "536870912");
	assert_col(r, "io_blkio_delay_s", "0.125");
	assert_col(r, "net_rx_bytes", "0");
	assert_col(r, "net_tx_bytes", "17");
	/* argv: escapes decoded and re-escaped, \u00ff is U+00FF */
	assert_col(r, "argv", "[\"bwa\",\"mem\",\"-t\",\"8\",\"-R\","
		   "\"@RG\\\\tID:s1\\\\tSM:sample \\\"NA12878\\\"\","
		   "\"/data/ref/GRCh38.fa\",\"/data/r\xc3\xa9" "ads_1.fq\","
		   "\"caf\xc3\xbf\"]");
	assert_no_col(r, "type");
	assert_no_col(r, "job");
	assert_json_back(r, process_rec);
	/* 46 columns but container, tool_version and exit_signal (null) */
	assert_int_equal(count_cols(r), 43);
	assert_int_equal(r[rowbuf.len - 1], '\n');
	assert_true(strchr(r, '\n') == r + rowbuf.len - 1);
}

/* A sample record: time, current RSS, container, nulls left out. */
static void test_sample(void **state)
{
	const char *r = row_ok(sample_rec, "sample");

	assert_col(r, "time", "\"2026-11-22 10:01:00\"");
	assert_col(r, "time_us", "500");
	assert_col(r, "start_time_us", "123456");
	assert_col(r, "argv", "[\"bwa\",\"mem\"]");
	assert_col(r, "exe_truncated", "1");
	assert_col(r, "argv_truncated", "1");
	assert_col(r, "container", "\"docker://0123abcd\"");
	assert_col(r, "job_scheduler", "\"aws_batch\"");
	assert_col(r, "job_id", "\"a1b2-c3\"");
	assert_no_col(r, "job_step");
	assert_no_col(r, "job_cost_center");
	assert_no_col(r, "tool_category");
	assert_col(r, "tool_version", "\"0.7.17\"");
	assert_col(r, "cpu_user_s", "59.999999");
	assert_col(r, "cpu_sys_s", "0");
	assert_col(r, "mem_peak_rss_bytes", "4096");
	assert_col(r, "mem_rss_bytes", "2048");
	assert_no_col(r, "mem_maxrss_kernel_bytes");
	assert_no_col(r, "end_time");
	assert_no_col(r, "exit_code");
	assert_json_back(r, sample_rec);
}

/* Job records: the record's own time is start_time, or end_time at the end. */
static void test_job(void **state)
{
	const char *r = row_ok(job_start_rec, "job");

	assert_col(r, "phase", "\"start\"");
	assert_col(r, "time", "\"2026-11-22 09:59:58\"");
	assert_col(r, "time_us", "500000");
	assert_col(r, "start_time", "\"2026-11-22 09:59:58\"");
	assert_no_col(r, "end_time");
	assert_no_col(r, "end_time_us");
	assert_col(r, "job_id", "\"12345\"");
	assert_no_col(r, "job_step");
	assert_col(r, "name", "\"align-all\"");
	assert_col(r, "partition", "\"debug\"");
	assert_col(r, "node", "\"node-a1\"");
	assert_col(r, "uid", "1001");
	assert_col(r, "allocation_cpus", "8");
	assert_col(r, "allocation_mem_bytes", "34359738368");
	assert_no_col(r, "allocation_gpus");
	assert_no_col(r, "exit_code");
	assert_no_col(r, "cost");
	assert_json_back(r, job_start_rec);

	r = row_ok(job_end_rec, "job");
	assert_col(r, "phase", "\"end\"");
	assert_col(r, "time", "\"2026-12-01 00:00:01\"");
	assert_col(r, "time_us", "250000");
	assert_col(r, "end_time", "\"2026-12-01 00:00:01\"");
	assert_col(r, "end_time_us", "250000");
	assert_col(r, "exit_code", "-9");
	assert_col(r, "cost_amount", "1.25");
	assert_col(r, "cost_currency", "\"USD\"");
	assert_col(r, "cost_source", "\"config:node_hour\"");
	assert_col(r, "cost_formula", "\"allocation_share\"");
	assert_col(r, "cost_price_per_hour", "3.6");
	assert_col(r, "cost_share", "0.25");
	assert_col(r, "cost_elapsed_s", "5000");
	assert_no_col(r, "cost_note");
	assert_col(r, "allocation_time_limit_s", "3600");
	assert_col(r, "efficiency_cpu", "0.48");
	assert_no_col(r, "efficiency_memory");
	assert_col(r, "efficiency_time", "1.388889");
	assert_col(r, "flags", "[\"cpu_underused\"]");
	assert_no_col(r, "uid");
	assert_no_col(r, "allocation_cpus");
	assert_json_back(r, job_end_rec);
	/* money keeps 12 decimals in the row too */
	assert_col(row_ok("{\"type\":\"job\",\"id\":\"m\",\"cost\":{\"amount\":0.000012113629}}",
			  "job"), "cost_amount", "0.000012113629");

	/* an end without an end time: the start time; neither: no time */
	r = row_ok("{\"type\":\"job\",\"id\":\"x\",\"phase\":\"end\","
		   "\"start_time\":\"2026-11-22T09:59:58Z\",\"end_time\":null}", "job");
	assert_col(r, "time", "\"2026-11-22 09:59:58\"");
	r = row_ok("{\"type\":\"job\",\"id\":\"x\",\"phase\":\"start\","
		   "\"end_time\":\"2026-11-23T00:00:00Z\"}", "job");
	assert_col(r, "time", "\"2026-11-23 00:00:00\"");
	r = row_ok("{\"type\":\"job\",\"id\":\"x\",\"phase\":\"start\"}", "job");
	assert_no_col(r, "time");
	/* the phase counts after the times, too */
	r = row_ok("{\"type\":\"job\",\"id\":\"x\",\"start_time\":\"2026-11-22T09:59:58Z\","
		   "\"end_time\":\"2026-11-23T00:00:00Z\",\"phase\":\"end\"}", "job");
	assert_col(r, "time", "\"2026-11-23 00:00:00\"");
	r = row_ok("{\"type\":\"job\",\"id\":\"x\",\"start_time\":\"2026-11-22T09:59:58Z\","
		   "\"end_time\":\"2026-11-23T00:00:00Z\",\"phase\":\"\\u0065nd\"}", "job");
	assert_col(r, "time", "\"2026-11-23 00:00:00\"");
}

/* Signal records: job is an id (or null, or an object), tool a name. */
static void test_signal(void **state)
{
	const char *r = row_ok(signal_rec, "signal");

	assert_col(r, "kind", "\"oom_kill\"");
	assert_col(r, "time", "\"2026-11-22 10:03:00\"");
	assert_col(r, "time_us", "1");
	assert_col(r, "job_id", "\"12345\"");
	assert_col(r, "job_step", "\"batch\"");
	assert_col(r, "job_cost_center", "\"lab\"");
	assert_col(r, "pid", "4300");
	assert_col(r, "comm", "\"touchmem\"");
	assert_col(r, "tool_name", "\"touchmem\"");
	assert_no_col(r, "tool_category");
	assert_col(r, "evidence_rss_bytes", "1073741824");
	assert_col(r, "evidence_total_vm_bytes", "2147483648");
	assert_json_back(r, signal_rec);

	r = row_ok("{\"type\":\"signal\",\"kind\":\"node_idle\",\"job\":null,"
		   "\"tool\":null,\"evidence\":{\"idle_s\":600,\"cpu\":0.01,"
		   "\"cost\":0.016,\"currency\":\"USD\"}}", "signal");
	assert_no_col(r, "job_id");
	assert_no_col(r, "tool_name");
	assert_no_col(r, "pid");
	assert_col(r, "evidence_idle_s", "600");
	assert_col(r, "evidence_cpu", "0.01");
	assert_col(r, "evidence_cost", "0.016");
	assert_col(r, "evidence_currency", "\"USD\"");
	assert_int_equal(count_cols(r), 6);	/* kind, 4 evidence, json */

	r = row_ok("{\"type\":\"signal\",\"job\":{\"scheduler\":\"slurm\",\"id\":\"77\"},"
		   "\"tool\":{\"name\":\"samtools\",\"category\":\"x\"}}", "signal");
	assert_col(r, "job_id", "\"77\"");
	assert_col(r, "job_scheduler", "\"slurm\"");
	assert_col(r, "tool_name", "\"samtools\"");
	assert_col(r, "tool_category", "\"x\"");
	assert_int_equal(count_cols(r), 5);

	/* older agents wrote the job's id and the tool's name alone; a
	 * numeric job id is kept as its text */
	r = row_ok("{\"type\":\"signal\",\"job\":\"12345\",\"tool\":\"bwa\"}", "signal");
	assert_col(r, "job_id", "\"12345\"");
	assert_col(r, "tool_name", "\"bwa\"");
	r = row_ok("{\"type\":\"signal\",\"job\":12345}", "signal");
	assert_col(r, "job_id", "\"12345\"");

	/* a stall's end and a slower_than_usual: their evidence columns */
	r = row_ok("{\"type\":\"signal\",\"kind\":\"stall\",\"evidence\":"
		   "{\"phase\":\"end\",\"stalled_s\":4.4,\"last_progress\":"
		   "\"2026-11-24T07:57:09.484319Z\",\"state\":null,\"exited\":false}}",
		   "signal");
	assert_col(r, "evidence_phase", "\"end\"");
	assert_col(r, "evidence_stalled_s", "4.4");
	assert_col(r, "evidence_last_progress", "\"2026-11-24 07:57:09\"");
	assert_col(r, "evidence_last_progress_us", "484319");
	assert_col(r, "evidence_exited", "0");
	assert_no_col(r, "evidence_state");
	r = row_ok("{\"type\":\"signal\",\"kind\":\"slower_than_usual\",\"evidence\":"
		   "{\"duration_s\":1.6,\"median_s\":0.3,\"runs\":3,\"factor\":5.3,"
		   "\"mem_bytes\":null}}", "signal");
	assert_col(r, "evidence_runs", "3");
	assert_col(r, "evidence_median_s", "0.3");
	assert_no_col(r, "evidence_mem_bytes");
}

/* Host records: drop counters, per-sink spool drops as parallel arrays. */
static void test_host(void **state)
{
	const char *r = row_ok(host_rec, "host");

	assert_col(r, "time", "\"2026-11-22 09:59:00\"");
	assert_col(r, "time_us", "0");
	assert_col(r, "phase", "\"stop\"");
	assert_col(r, "boot_id", "\"b7c1e0d2-7f4e-4b7a-9d55-0c1f2e3d4c5b\"");
	assert_col(r, "agent_version", "\"0.3.0\"");
	assert_col(r, "events_seen", "123456");
	assert_col(r, "drops_ringbuf_fork", "1");
	assert_col(r, "drops_ringbuf_exec", "2");
	assert_col(r, "drops_ringbuf_exit", "3");
	assert_col(r, "drops_ringbuf_oom", "0");
	assert_col(r, "drops_tracked_map_full", "5");
	assert_col(r, "drops_exits_lost", "4");
	assert_col(r, "drops_spool_sink", "[\"fleet\",\"http\",\"big\"]");
	assert_col(r, "drops_spool_count", "[12,3,18446744073709551615]");
	assert_col(r, "drops_store_size_cap", "7");
	assert_no_col(r, "price_per_hour");
	assert_col(r, "price_currency", "\"USD\"");
	assert_col(r, "price_node_cpus", "2");
	assert_col(r, "price_node_mem_bytes", "25000000000");
	assert_col(r, "price_note", "\"no price configured\"");
	assert_json_back(r, host_rec);

	/* no spool object, an empty one, one that is not an object */
	r = row_ok("{\"type\":\"host\",\"drops\":{\"ringbuf_fork\":1}}", "host");
	assert_no_col(r, "drops_spool_sink");
	r = row_ok("{\"type\":\"host\",\"drops\":{\"spool\":{}}}", "host");
	assert_col(r, "drops_spool_sink", "[]");
	assert_col(r, "drops_spool_count", "[]");
	r = row_ok("{\"type\":\"host\",\"drops\":{\"spool\":[1,2]}}", "host");
	assert_no_col(r, "drops_spool_sink");
	r = row_ok("{\"type\":\"host\",\"drops\":{\"spool\":{\"a\\u00e9\\\"\":7}}}", "host");
	assert_col(r, "drops_spool_sink", "[\"a\xc3\xa9\\\"\"]");
	assert_col(r, "drops_spool_count", "[7]");
}

/* String escapes are decoded and written again the way json.h writes them. */
static void test_escapes(void **state)
{
	static const char want[] = "q\" b\\ s/ \b\f\n\r\t \x01 \xc3\xa9 \xe2\x82\xac"
				   " \x7f \xc3\xa9";
	const char *r;

	r = row_ok("{\"type\":\"process\",\"comm\":\"q\\\" b\\\\ s\\/ \\b\\f\\n\\r\\t "
		   "\\u0001 \\u00e9 \\u20AC \x7f \xc3\xa9\"}", "process");
	assert_str_bytes(r, "comm", want, sizeof(want) - 1);
	assert_col(r, "comm", "\"q\\\" b\\\\ s/ \\b\\f\\n\\r\\t \\u0001 \xc3\xa9 "
		   "\xe2\x82\xac \\u007f \xc3\xa9\"");

	/* U+0000 stays a NUL inside the value */
	r = row_ok("{\"type\":\"process\",\"comm\":\"a\\u0000b\"}", "process");
	assert_str_bytes(r, "comm", "a\0b", 3);
	assert_col(r, "comm", "\"a\\u0000b\"");

	/* DEL without escapes elsewhere: still written as json_strn does */
	r = row_ok("{\"type\":\"process\",\"comm\":\"a\x7f\"}", "process");
	assert_col(r, "comm", "\"a\\u007f\"");

	/* escaped member names are found */
	r = row_ok("{\"type\":\"process\",\"\\u0070id\":7,\"j\\u006fb\":{\"\\u0069d\":\"9\"}}",
		   "process");
	assert_col(r, "pid", "7");
	assert_col(r, "job_id", "\"9\"");

	/* a long string with escapes (beyond the stack scratch buffer) */
	{
		size_t n = 10000, i;
		char *rec = malloc(n * 2 + 64), *w = malloc(n + 1), *p;

		assert_non_null(rec);
		assert_non_null(w);
		p = rec + sprintf(rec, "{\"type\":\"process\",\"argv\":[\"");
		for (i = 0; i < n; i++) {
			if (i % 7 == 0) {
				*p++ = '\\';
				*p++ = 't';
				w[i] = '\t';
			} else {
				*p++ = (char)('a' + i % 26);
				w[i] = (char)('a' + i % 26);
			}
		}
		strcpy(p, "\"]}");
		r = row_ok(rec, "process");
		{
			char *v = col(r, "argv"), *d;
			size_t dl;

			assert_non_null(v);
			v[strlen(v) - 1] = '\0';	/* drop ']' */
			d = unquote(v + 1, &dl);
			assert_int_equal(dl, n);
			assert_memory_equal(d, w, n);
			free(d);
			free(v);
		}
		assert_json_back(r, rec);
		free(rec);
		free(w);
	}
}

/* Surrogate pairs become one UTF-8 character; lone halves are rejected. */
static void test_surrogates(void **state)
{
	const char *r;

	r = row_ok("{\"type\":\"process\",\"comm\":\"\\ud83d\\ude00 \\uD834\\uDD1E\"}",
		   "process");
	assert_str_bytes(r, "comm", "\xf0\x9f\x98\x80 \xf0\x9d\x84\x9e", 9);
	assert_col(r, "comm", "\"\xf0\x9f\x98\x80 \xf0\x9d\x84\x9e\"");

	assert_int_equal(row("{\"type\":\"process\",\"comm\":\"\\ud83d\"}"), -EINVAL);
	assert_int_equal(row("{\"type\":\"process\",\"comm\":\"\\ude00\"}"), -EINVAL);
	assert_int_equal(row("{\"type\":\"process\",\"comm\":\"\\ud83d\\u0041\"}"), -EINVAL);
	assert_int_equal(row("{\"type\":\"process\",\"comm\":\"\\ud83d\\ud83d\"}"), -EINVAL);
	assert_int_equal(row("{\"type\":\"process\",\"comm\":\"\\ud83dx\"}"), -EINVAL);
	/* in a member that has no column, too */
	assert_int_equal(row("{\"type\":\"process\",\"new\":\"\\udfff\"}"), -EINVAL);
	/* raw UTF-8 encoded surrogates are not UTF-8 */
	assert_int_equal(row("{\"type\":\"process\",\"comm\":\"\xed\xa0\x80\"}"), -EINVAL);
}

/* null leaves a column out, Nullable or not. */
static void test_nulls(void **state)
{
	const char *r;

	r = row_ok("{\"type\":\"process\",\"schema\":null,\"host\":null,\"id\":null,"
		   "\"pid\":null,\"start_time\":null,\"argv\":null,\"job\":null,"
		   "\"tool\":null,\"exit\":null,\"cpu\":{\"user_s\":null},"
		   "\"comm\":null}", "process");
	assert_int_equal(count_cols(r), 1);	/* json */
}

/* Values that do not fit their column are left out, never passed on. */
static void test_types(void **state)
{
	static const struct {
		const char *member;	/* process record member */
		const char *column;
		const char *want;	/* NULL: left out */
	} cases[] = {
		{ "\"pid\":\"123\"", "pid", NULL },
		{ "\"pid\":-1", "pid", NULL },
		{ "\"pid\":-0", "pid", "0" },
		{ "\"pid\":1.5", "pid", NULL },
		{ "\"pid\":1e3", "pid", NULL },
		{ "\"pid\":4294967295", "pid", "4294967295" },
		{ "\"pid\":4294967296", "pid", NULL },
		{ "\"pid\":true", "pid", NULL },
		{ "\"pid\":[1]", "pid", NULL },
		{ "\"schema\":255", "schema", "255" },
		{ "\"schema\":256", "schema", NULL },
		{ "\"io\":{\"rchar\":18446744073709551615}", "io_rchar", "18446744073709551615" },
		{ "\"io\":{\"rchar\":18446744073709551616}", "io_rchar", NULL },
		{ "\"io\":{\"rchar\":99999999999999999999999999999999999999999}", "io_rchar", NULL },
		{ "\"exit\":{\"code\":-2147483648}", "exit_code", "-2147483648" },
		{ "\"exit\":{\"code\":2147483647}", "exit_code", "2147483647" },
		{ "\"exit\":{\"code\":2147483648}", "exit_code", NULL },
		{ "\"exit\":{\"code\":-2147483649}", "exit_code", NULL },
		{ "\"exit\":{\"oom_killed\":true}", "exit_oom_killed", "1" },
		{ "\"exit\":{\"oom_killed\":1}", "exit_oom_killed", "1" },
		{ "\"exit\":{\"oom_killed\":2}", "exit_oom_killed", NULL },
		{ "\"exit\":{\"oom_killed\":\"yes\"}", "exit_oom_killed", NULL },
		{ "\"cpu\":{\"user_s\":2.5e3}", "cpu_user_s", "2500" },
		{ "\"cpu\":{\"user_s\":-1.25}", "cpu_user_s", "-1.25" },
		{ "\"cpu\":{\"user_s\":1e-7}", "cpu_user_s", "0" },
		{ "\"cpu\":{\"user_s\":1E2}", "cpu_user_s", "100" },
		{ "\"cpu\":{\"user_s\":1e400}", "cpu_user_s", NULL },
		{ "\"cpu\":{\"user_s\":-1e400}", "cpu_user_s", NULL },
		{ "\"cpu\":{\"user_s\":123456789012345678}", "cpu_user_s", "123456789012345680" },
		{ "\"cpu\":{\"user_s\":0.1234567}", "cpu_user_s", "0.123457" },
		{ "\"cpu\":{\"user_s\":\"1\"}", "cpu_user_s", NULL },
		{ "\"cpu\":7", "cpu_user_s", NULL },
		{ "\"comm\":123", "comm", "\"123\"" },
		{ "\"comm\":-1.5e3", "comm", "\"-1.5e3\"" },
		{ "\"comm\":true", "comm", "\"true\"" },
		{ "\"comm\":false", "comm", "\"false\"" },
		{ "\"comm\":{\"a\":1}", "comm", NULL },
		{ "\"comm\":[\"a\"]", "comm", NULL },
		{ "\"argv\":\"bwa mem\"", "argv", NULL },
		{ "\"argv\":[]", "argv", "[]" },
		{ "\"argv\":[1,true,false,null,{\"a\":[1]},[2],\"x\",-0.5]", "argv",
		  "[\"1\",\"true\",\"false\",\"\",\"\",\"\",\"x\",\"-0.5\"]" },
		/* what older signal records held in place of the object */
		{ "\"job\":\"12345\"", "job_id", "\"12345\"" },
		{ "\"job\":[\"12345\"]", "job_id", NULL },
		{ "\"job\":{\"id\":12345}", "job_id", "\"12345\"" },
		{ "\"start_time\":1700000000", "start_time", NULL },
	};
	char rec[512];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *r;

		snprintf(rec, sizeof(rec), "{\"type\":\"process\",%s}", cases[i].member);
		r = row_ok(rec, "process");
		if (cases[i].want)
			assert_col(r, cases[i].column, cases[i].want);
		else
			assert_no_col(r, cases[i].column);
		assert_json_back(r, rec);
	}
}

/* RFC 3339 times to DateTime text and microseconds, within DateTime's range. */
static void test_times(void **state)
{
	static const struct {
		const char *in;
		const char *dt;		/* NULL: left out */
		const char *us;
	} cases[] = {
		{ "2026-11-22T10:00:00.123456Z", "2026-11-22 10:00:00", "123456" },
		{ "2026-11-22T10:00:00Z", "2026-11-22 10:00:00", "0" },
		{ "2026-11-22T10:00:00.5Z", "2026-11-22 10:00:00", "500000" },
		{ "2026-11-22T10:00:00.000001Z", "2026-11-22 10:00:00", "1" },
		{ "2026-11-22T10:00:00.1234567Z", "2026-11-22 10:00:00", "123456" },
		{ "2026-11-22T10:00:00.999999999Z", "2026-11-22 10:00:00", "999999" },
		{ "2026-11-22t10:00:00z", "2026-11-22 10:00:00", "0" },
		{ "2026-11-22 10:00:00Z", "2026-11-22 10:00:00", "0" },
		{ "2026-11-22T01:30:00.25+02:00", "2026-11-21 23:30:00", "250000" },
		{ "2026-12-31T23:30:00-01:00", "2027-01-01 00:30:00", "0" },
		{ "2024-02-29T12:00:00Z", "2024-02-29 12:00:00", "0" },
		{ "2000-02-29T00:00:00Z", "2000-02-29 00:00:00", "0" },
		{ "1970-01-01T00:00:00Z", "1970-01-01 00:00:00", "0" },
		{ "2038-01-19T03:14:08Z", "2038-01-19 03:14:08", "0" },
		{ "2105-12-31T23:59:59.999999Z", "2105-12-31 23:59:59", "999999" },
		{ "2106-01-01T00:00:00Z", NULL, NULL },
		{ "2106-02-07T06:28:15Z", NULL, NULL },
		{ "1969-12-31T23:59:59.999999Z", NULL, NULL },
		{ "1970-01-01T00:30:00+01:00", NULL, NULL },
		{ "2023-02-29T00:00:00Z", NULL, NULL },
		{ "1900-02-29T00:00:00Z", NULL, NULL },
		{ "2026-13-01T00:00:00Z", NULL, NULL },
		{ "2026-00-01T00:00:00Z", NULL, NULL },
		{ "2026-04-31T00:00:00Z", NULL, NULL },
		{ "2026-11-22T24:00:00Z", NULL, NULL },
		{ "2026-11-22T23:60:00Z", NULL, NULL },
		{ "2026-11-22T23:59:60Z", NULL, NULL },
		{ "2026-11-22T10:00:00", NULL, NULL },
		{ "2026-11-22T10:00:00.Z", NULL, NULL },
		{ "2026-11-22T10:00:00.5", NULL, NULL },
		{ "2026-11-22T10:00:00+0200", NULL, NULL },
		{ "2026-11-22T10:00:00Zjunk", NULL, NULL },
		{ "2026-11-22", NULL, NULL },
		{ "yesterday at noon, roughly", NULL, NULL },
		{ "", NULL, NULL },
		{ "+026-11-22T10:00:00Z", NULL, NULL },
	};
	char rec[256], want[64];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *r;

		snprintf(rec, sizeof(rec),
			 "{\"type\":\"sample\",\"time\":\"%s\",\"start_time\":\"%s\"}",
			 cases[i].in, cases[i].in);
		r = row_ok(rec, "sample");
		if (!cases[i].dt) {
			assert_no_col(r, "time");
			assert_no_col(r, "time_us");
			assert_no_col(r, "start_time");
			continue;
		}
		snprintf(want, sizeof(want), "\"%s\"", cases[i].dt);
		assert_col(r, "time", want);
		assert_col(r, "time_us", cases[i].us);
		assert_col(r, "start_time", want);
		assert_col(r, "start_time_us", cases[i].us);
	}
}

/* Text that is not one JSON object with a string "type" is refused whole. */
static void test_garbage(void **state)
{
	static const char *const bad[] = {
		"", "   ", "\n", "[]", "\"process\"", "42", "null", "true",
		"{", "}", "{}", "{\"type\"}", "{\"type\":}", "{\"type\" \"process\"}",
		"{\"type\":\"process\"", "{\"type\":\"process\",}",
		"{\"type\":\"process\",\"pid\":1,}", "{,\"type\":\"process\"}",
		"{\"type\":\"process\"} x", "{\"type\":\"process\"}{\"type\":\"process\"}",
		"{\"type\":\"process\"}\n{\"type\":\"process\"}", "x{\"type\":\"process\"}",
		"{\"type\":1}", "{\"type\":null}", "{\"type\":[\"process\"]}",
		"{\"type\":{\"process\":1}}", "{\"pid\":1}",
		"{'type':'process'}", "{type:\"process\"}",
		"{\"type\":\"process\",\"pid\":01}", "{\"type\":\"process\",\"pid\":1.}",
		"{\"type\":\"process\",\"pid\":.5}", "{\"type\":\"process\",\"pid\":-}",
		"{\"type\":\"process\",\"pid\":+1}", "{\"type\":\"process\",\"pid\":1e}",
		"{\"type\":\"process\",\"pid\":1e+}", "{\"type\":\"process\",\"pid\":0x10}",
		"{\"type\":\"process\",\"pid\":NaN}", "{\"type\":\"process\",\"pid\":Infinity}",
		"{\"type\":\"process\",\"pid\":-Infinity}", "{\"type\":\"process\",\"x\":tru}",
		"{\"type\":\"process\",\"x\":nul}", "{\"type\":\"process\",\"x\":True}",
		"{\"type\":\"process\",\"x\":[1,]}", "{\"type\":\"process\",\"x\":[,1]}",
		"{\"type\":\"process\",\"x\":[1 2]}", "{\"type\":\"process\",\"x\":{\"a\"}}",
		"{\"type\":\"process\",\"argv\":[\"a\",]}",
		"{\"type\":\"process\",\"argv\":[\"a\"}", "{\"type\":\"process\",\"argv\":[\"a\"",
		"{\"type\":\"process\",\"comm\":\"a\\x\"}", "{\"type\":\"process\",\"comm\":\"a\\u12\"}",
		"{\"type\":\"process\",\"comm\":\"a\\u12g4\"}", "{\"type\":\"process\",\"comm\":\"a\\\"}",
		"{\"type\":\"process\",\"comm\":\"a\tb\"}", "{\"type\":\"process\",\"comm\":\"a\nb\"}",
		"{\"type\":\"process\",\"comm\":\"\xff\"}", "{\"type\":\"process\",\"comm\":\"\xc0\xaf\"}",
		"{\"type\":\"process\",\"comm\":\"\xe2\x82\"}", "{\"type\":\"process\",\"comm\":\"\xf4\x90\x80\x80\"}",
		"{\"type\":\"process\",\"comm\":\"\x80\"}", "{\"type\":\"pro\xffss\"}",
		"{\"type\":\"process\"\xef\xbb\xbf}", "\xef\xbb\xbf{\"type\":\"process\"}",
		"{\"type\":\"process\",\"drops\":{\"spool\":{\"a\":1,}}}",
		"{\"type\":\"host\",\"drops\":{\"spool\":{\"a\":1,}}}",
		"{\"type\":\"host\",\"drops\":{\"spool\":{\"a\" 1}}}",
		"{\"type\":\"host\",\"drops\":{\"spool\":{\"a\":-}}}",
		"{\"type\":\"process\",\"start_time\":\"2026-11-22T10:00:00Z}",
		"{\"type\":\"weird\",\"x\":}", "{\"x\":,\"type\":\"weird\"}",
		"{\"type\":5,\"type\":\"host\"}",
	};
	static const char keep[] = "{\"already\":\"there\"}\n";
	const char *table = "x";
	size_t i;
	int rc;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		/* the buffer keeps what it had, *table is NULL, a reason is given */
		jbuf_reset(&rowbuf);
		json_obj_open(&rowbuf);
		json_kv_str(&rowbuf, "already", "there");
		json_obj_close(&rowbuf);
		rowbuf.buf[rowbuf.len++] = '\n';
		rowbuf.buf[rowbuf.len] = '\0';
		rc = chschema_row(&rowbuf, bad[i], strlen(bad[i]), &table);
		if (rc != -EINVAL)
			fprintf(stderr, "case %zu accepted (%d): %s\n", i, rc, bad[i]);
		assert_int_equal(rc, -EINVAL);
		assert_null(table);
		assert_string_equal(rowbuf.buf, keep);
		assert_int_equal(rowbuf.len, sizeof(keep) - 1);
		assert_int_equal(rowbuf.depth, 0);
		assert_false(rowbuf.oom);
		assert_true(strlen(chschema_strerror()) > 0);
	}
	/* an embedded NUL is junk too */
	assert_int_equal(chschema_row(&rowbuf, "{\"type\":\"host\"}\0", 16, &table), -EINVAL);
	assert_int_equal(chschema_row(&rowbuf, "{\"type\":\"ho\0st\"}", 16, &table), -EINVAL);
	/* a length shorter than the text: only that much is read */
	assert_int_equal(chschema_row(&rowbuf, "{\"type\":\"host\"}", 10, &table), -EINVAL);
	/* the reason names the place */
	row("{\"type\":\"process\",\"pid\":01}");
	assert_string_equal(chschema_strerror(), "expected ',' or '}' at byte 25");
}

/* Every prefix of a valid record is refused, and never read past. */
static void test_truncated(void **state)
{
	const char *recs[] = { process_rec, host_rec, signal_rec, job_end_rec };
	const char *table;
	size_t i, n;

	for (i = 0; i < sizeof(recs) / sizeof(recs[0]); i++) {
		size_t len = strlen(recs[i]);

		for (n = 0; n < len; n++) {
			/* a heap copy of exactly n bytes, so ASan sees over-reads */
			char *copy = malloc(n ? n : 1);

			assert_non_null(copy);
			memcpy(copy, recs[i], n);
			jbuf_reset(&rowbuf);
			assert_int_equal(chschema_row(&rowbuf, copy, n, &table), -EINVAL);
			assert_int_equal(rowbuf.len, 0);
			free(copy);
		}
	}
}

/* Deep nesting is refused without deep recursion; shallower is fine. */
static void test_deep_nesting(void **state)
{
	size_t depth = 200000, i;
	char *rec = malloc(depth * 7 + 64), *p;
	int rc;

	assert_non_null(rec);
	for (int kind = 0; kind < 2; kind++) {
		p = rec + sprintf(rec, "{\"type\":\"process\",\"x\":");
		for (i = 0; i < depth; i++)
			p += sprintf(p, kind ? "[" : "{\"a\":");
		*p++ = '1';
		for (i = 0; i < depth; i++)
			*p++ = kind ? ']' : '}';
		strcpy(p, "}");
		rc = row(rec);
		assert_int_equal(rc, -EINVAL);
		assert_non_null(strstr(chschema_strerror(), "nested too deeply"));
	}
	/* at the limit: the record itself is level 1 */
	p = rec + sprintf(rec, "{\"type\":\"process\",\"x\":");
	for (i = 0; i < CHSCHEMA_MAX_DEPTH - 1; i++)
		*p++ = '[';
	for (i = 0; i < CHSCHEMA_MAX_DEPTH - 1; i++)
		*p++ = ']';
	strcpy(p, "}");
	row_ok(rec, "process");
	p = rec + sprintf(rec, "{\"type\":\"process\",\"x\":");
	for (i = 0; i < CHSCHEMA_MAX_DEPTH; i++)
		*p++ = '[';
	for (i = 0; i < CHSCHEMA_MAX_DEPTH; i++)
		*p++ = ']';
	strcpy(p, "}");
	assert_int_equal(row(rec), -EINVAL);
	/* the same with the type last (the pass that finds it checks too) */
	for (int extra = 0; extra < 2; extra++) {
		p = rec + sprintf(rec, "{\"x\":");
		for (i = 0; i < CHSCHEMA_MAX_DEPTH - 1 + (size_t)extra; i++)
			*p++ = '[';
		for (i = 0; i < CHSCHEMA_MAX_DEPTH - 1 + (size_t)extra; i++)
			*p++ = ']';
		strcpy(p, ",\"type\":\"process\"}");
		assert_int_equal(row(rec), extra ? -EINVAL : 0);
	}
	free(rec);
}

/* Unknown types: -ENOENT once the text is known to be valid. */
static void test_unknown_type(void **state)
{
	const char *table = "x";
	int rc;

	static const char metric[] = "{\"type\":\"metric\",\"x\":[1,{}]}";

	jbuf_reset(&rowbuf);
	rc = chschema_row(&rowbuf, metric, sizeof(metric) - 1, &table);
	assert_int_equal(rc, -ENOENT);
	assert_null(table);
	assert_int_equal(rowbuf.len, 0);
	assert_string_equal(chschema_strerror(), "unknown record type \"metric\"");
	assert_int_equal(row("{\"x\":1,\"type\":\"Process\"}"), -ENOENT);
	assert_int_equal(row("{\"type\":\"\"}"), -ENOENT);
	assert_int_equal(row("{\"type\":\"process \"}"), -ENOENT);
	assert_int_equal(row("{\"type\":\"a-very-long-type-name-that-is-not-known\"}"),
			 -ENOENT);
	/* broken text is -EINVAL even with an unknown type first */
	assert_int_equal(row("{\"type\":\"metric\",\"x\":[1,}"), -EINVAL);
}

/* "type" anywhere, escaped, or twice (the first counts). */
static void test_type_anywhere(void **state)
{
	const char *r;

	r = row_ok("{\"schema\":1,\"host\":\"h\",\"id\":\"i\",\"time\":\"2026-11-22T10:00:00Z\","
		   "\"type\":\"host\",\"phase\":\"start\"}", "host");
	assert_col(r, "host", "\"h\"");
	assert_col(r, "phase", "\"start\"");
	row_ok("{\"\\u0074ype\":\"host\"}", "host");
	row_ok("{\"type\":\"\\u0068ost\"}", "host");
	row_ok(" \t\r\n{ \"type\" : \"signal\" , \"x\" : 1 } \n", "signal");
	row_ok("{\"type\":\"host\",\"type\":\"process\"}", "host");
	row_ok("{\"x\":1,\"type\":\"host\",\"type\":\"process\"}", "host");
	assert_int_equal(row("{\"x\":1,\"type\":5,\"type\":\"host\"}"), -EINVAL);
}

/* A member's second occurrence is skipped (ClickHouse refuses duplicates). */
static void test_duplicates(void **state)
{
	const char *r;

	r = row_ok("{\"type\":\"process\",\"pid\":1,\"pid\":2,\"job\":{\"id\":\"a\","
		   "\"id\":\"b\"},\"job\":{\"id\":\"c\"},\"comm\":\"x\",\"comm\":null}",
		   "process");
	assert_col(r, "pid", "1");
	assert_col(r, "job_id", "\"a\"");
	assert_col(r, "comm", "\"x\"");
	assert_int_equal(count_cols(r), 4);
	/* a signal's job given as both an id and an object: the first */
	r = row_ok("{\"type\":\"signal\",\"job\":\"1\",\"job\":{\"id\":\"2\"}}", "signal");
	assert_col(r, "job_id", "\"1\"");
	assert_int_equal(count_cols(r), 2);
}

/* Members the schema does not know are checked and skipped. */
static void test_unknown_fields(void **state)
{
	const char *r;

	r = row_ok("{\"type\":\"process\",\"future\":{\"deep\":[1,{\"x\":null,\"y\":[[]]}],"
		   "\"s\":\"\\ud83d\\ude00\"},\"pid\":3,\"cpu\":{\"user_s\":1,\"gpu_s\":2,"
		   "\"more\":{\"a\":[1,2,3]}},\"json\":\"not the json column\","
		   "\"type2\":\"job\",\"job_id\":\"not a column either\"}", "process");
	assert_col(r, "pid", "3");
	assert_col(r, "cpu_user_s", "1");
	assert_no_col(r, "job_id");
	assert_int_equal(count_cols(r), 3);
	{
		char *v = col(r, "json");

		assert_non_null(v);
		assert_non_null(strstr(v, "not the json column"));
		free(v);
	}
}

/* White space around and inside the object; the json column keeps the inside. */
static void test_whitespace(void **state)
{
	static const char inner[] = "{ \"type\" :\t\"host\" ,\r\n  \"drops\" : { \"spool\" "
				    ": { \"fleet\" : 12 } } ,\n \"events_seen\" : 5 }";
	char rec[256];
	const char *r;

	snprintf(rec, sizeof(rec), " \n\t%s \r\n", inner);
	r = row_ok(rec, "host");
	assert_col(r, "events_seen", "5");
	assert_col(r, "drops_spool_sink", "[\"fleet\"]");
	assert_json_back(r, inner);
}

/* Rows append: one line each, after what the buffer had. */
static void test_append(void **state)
{
	const char *recs[] = { process_rec, sample_rec, job_start_rec, job_end_rec,
			       signal_rec, host_rec };
	const char *table, *p;
	struct jbuf b;
	size_t i, lines = 0;

	jbuf_init(&b);
	for (i = 0; i < sizeof(recs) / sizeof(recs[0]); i++) {
		assert_int_equal(chschema_row(&b, recs[i], strlen(recs[i]), &table), 0);
		/* a rejected record in between changes nothing */
		assert_int_equal(chschema_row(&b, "{\"type\":", 8, &table), -EINVAL);
	}
	for (p = b.buf; *p; p = strchr(p, '\n') + 1) {
		const char *nl = strchr(p, '\n');

		assert_non_null(nl);
		assert_true(valid_row(p, (size_t)(nl - p + 1)));
		lines++;
	}
	assert_int_equal(lines, 6);
	assert_int_equal(strlen(b.buf), b.len);
	/* a buffer left inside an object is refused */
	jbuf_reset(&b);
	json_obj_open(&b);
	assert_int_equal(chschema_row(&b, host_rec, strlen(host_rec), &table), -EINVAL);
	jbuf_free(&b);
}

/*
 * Random damage to valid records: never a crash, and whatever is accepted
 * is a valid row that keeps the text.
 */
static void test_mutations(void **state)
{
	const char *recs[] = { process_rec, sample_rec, job_end_rec, signal_rec,
			       host_rec };
	static const char alphabet[] = "{}[]\":,\\u0123456789abcdef-+.eE \t\n\x7f\xc3\xa9\xff";
	uint64_t x = 88172645463325252ull;
	char buf[2048];
	const char *table;
	int i, k, accepted = 0;

	for (i = 0; i < 20000; i++) {
		const char *src = recs[i % 5];
		size_t n = strlen(src);
		int edits;

		memcpy(buf, src, n);
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		edits = 1 + (int)(x % 3);
		for (k = 0; k < edits && n > 0; k++) {
			size_t at;

			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			at = (size_t)(x % n);
			switch (x >> 60 & 3) {
			case 0:	/* replace a byte */
				buf[at] = alphabet[(x >> 32) % (sizeof(alphabet) - 1)];
				break;
			case 1:	/* delete a byte */
				memmove(buf + at, buf + at + 1, n - at - 1);
				n--;
				break;
			case 2:	/* insert a byte */
				if (n + 1 < sizeof(buf)) {
					memmove(buf + at + 1, buf + at, n - at);
					buf[at] = alphabet[(x >> 32) % (sizeof(alphabet) - 1)];
					n++;
				}
				break;
			default: /* cut */
				n = at;
				break;
			}
		}
		jbuf_reset(&rowbuf);
		if (chschema_row(&rowbuf, buf, n, &table) == 0) {
			accepted++;
			assert_true(valid_row(rowbuf.buf, rowbuf.len));
		} else {
			assert_int_equal(rowbuf.len, 0);
		}
	}
	/* some damage leaves valid JSON (a digit for a digit) */
	assert_true(accepted > 0);
}

/* Column list of table in the DDL text (names separated by spaces). */
static void ddl_columns(const char *ddl, const char *table, char *out,
			size_t outlen);

/* Every member of the row r (a JSON object) is a column of table in ddl. */
static void row_columns(const char *ddl, const char *table, const char *r)
{
	struct vp q = { (const unsigned char *)r, strlen(r), 1, 1 };
	char cols[4096];

	ddl_columns(ddl, table, cols, sizeof(cols));
	for (;;) {
		char name[80];
		size_t k0;

		v_ws(&q);
		k0 = q.i;
		if (v_string(&q))
			break;
		snprintf(name, sizeof(name), " %.*s ", (int)(q.i - k0 - 2),
			 q.s + k0 + 1);
		if (!strstr(cols, name))
			fprintf(stderr, "%s: no column%s\n", table, name);
		assert_non_null(strstr(cols, name));
		q.i++;
		assert_int_equal(v_value(&q), 0);
		v_ws(&q);
		if (q.s[q.i] != ',')
			break;
		q.i++;
	}
}

static void ddl_columns(const char *ddl, const char *table, char *out, size_t outlen)
{
	char head[128];
	const char *p, *end;

	snprintf(head, sizeof(head), "CREATE TABLE IF NOT EXISTS jobtrace.%s\n(\n", table);
	p = strstr(ddl, head);
	assert_non_null(p);
	p += strlen(head);
	end = strstr(p, "\n)\n");
	assert_non_null(end);
	out[0] = ' ';
	out[1] = '\0';
	while (p < end) {
		char name[64];

		assert_int_equal(sscanf(p, " %63s", name), 1);
		assert_true(strlen(out) + strlen(name) + 2 < outlen);
		strcat(out, name);
		strcat(out, " ");
		p = strchr(p, '\n');
		assert_non_null(p);
		p++;
	}
}

/* The DDL: one statement per table, and a column for every member written. */
static void test_schema(void **state)
{
	static const struct {
		const char *rec;
		const char *table;
	} recs[] = {
		{ process_rec, "process" }, { sample_rec, "sample" },
		{ job_start_rec, "job" }, { job_end_rec, "job" },
		{ signal_rec, "signal" }, { host_rec, "host" },
	};
	char *ddl = NULL, cols[4096], *p;
	size_t len = 0, i, semis = 0;
	FILE *f = open_memstream(&ddl, &len);

	assert_non_null(f);
	chschema_print(f, "jobtrace");
	fclose(f);
	assert_non_null(strstr(ddl, "\nCREATE DATABASE IF NOT EXISTS jobtrace\n;\n"));
	/* a table for every record type of the description */
	for (i = 0; i < SF_REC__N; i++) {
		char want[256];

		snprintf(want, sizeof(want), "CREATE TABLE IF NOT EXISTS jobtrace.%s\n",
			 sf_records[i].name);
		assert_non_null(strstr(ddl, want));
	}
	assert_int_equal(i, 5);
	assert_string_equal(sf_records[0].name, "process");
	/* statements end with a line holding only ';', and no ';' elsewhere */
	for (p = ddl; (p = strchr(p, ';')); p++) {
		assert_true(p > ddl && p[-1] == '\n' && p[1] == '\n');
		semis++;
	}
	/* the database, a table per record type, the rules table,
	 * files */
	assert_int_equal(semis, 8);
	assert_non_null(strstr(ddl, "CREATE TABLE IF NOT EXISTS jobtrace.rules\n"));
	ddl_columns(ddl, "rules", cols, sizeof(cols));
	assert_non_null(strstr(cols, " version sha256 pushed_at pushed_at_us"
				     " pushed_by host size bundle "));
	{	/* the INSERT's column list is the DDL's */
		char want[256] = " ", *c;

		strcat(want, CHSCHEMA_RULES_COLUMNS " ");
		while ((c = strstr(want, ", ")))
			memmove(c, c + 1, strlen(c));
		assert_string_equal(cols, want);
	}
	assert_non_null(strstr(ddl, "ENGINE = MergeTree()\nORDER BY (pushed_at,"
				    " pushed_at_us, sha256)\n;\n"));
	assert_non_null(strstr(ddl, "ENGINE = ReplacingMergeTree()\n"
				    "PARTITION BY toYYYYMM(start_time)\n"
				    "ORDER BY (host, start_time, id)\n;\n"));
	assert_non_null(strstr(ddl, "PARTITION BY toYYYYMM(time)\nORDER BY (host, time, id)\n"));
	assert_null(strstr(ddl, "DateTime64("));
	assert_null(strstr(ddl, "LowCardinality("));
	assert_null(strstr(ddl, "Map("));
	/* the modern engine syntax only, not MergeTree(date, key, 8192) */
	for (p = ddl; (p = strstr(p, "MergeTree(")); p++)
		assert_int_equal(p[10], ')');

	/* every member of every row is a column of its table */
	for (i = 0; i < sizeof(recs) / sizeof(recs[0]); i++)
		row_columns(ddl, recs[i].table,
			    row_ok(recs[i].rec, recs[i].table));
	/* the key columns are never Nullable */
	ddl_columns(ddl, "job", cols, sizeof(cols));
	assert_non_null(strstr(cols, " time time_us "));
	assert_non_null(strstr(ddl, "    time                     DateTime('UTC'),"));
	free(ddl);

	/* a database name that needs quoting */
	f = open_memstream(&ddl, &len);
	chschema_print(f, "job`trace-1");
	fclose(f);
	assert_non_null(strstr(ddl, "CREATE DATABASE IF NOT EXISTS `job\\`trace-1`\n"));
	assert_non_null(strstr(ddl, "CREATE TABLE IF NOT EXISTS `job\\`trace-1`.host\n"));
	free(ddl);
}

/* A process record with files: two rows, an element that is no object and
 * one without members (no rows). */
static const char files_rec[] =
	"{\"type\":\"process\",\"schema\":1,\"host\":\"n\\u00e9\","
	"\"id\":\"p-1\",\"pid\":7,\"ppid\":1,\"start_time\":"
	"\"2026-11-22T10:00:00.5Z\",\"uid\":1001,\"argv\":[\"x\"],"
	"\"job\":{\"scheduler\":\"slurm\",\"id\":\"42\",\"run\":\"r1\","
	"\"task\":\"align\"},\"tool\":{\"name\":\"bwa\",\"category\":null},"
	"\"files\":[{\"path\":\"/ref/a \\\"b\\\".fa\",\"flags\":[\"read\"],"
	"\"opens\":2,\"read_bytes\":10,\"write_bytes\":0,\"size_bytes\":null,"
	"\"mmap\":true,\"deleted\":false},7,{},{\"path\":\"/o\","
	"\"flags\":[\"write\",\"create\"],\"opens\":1,\"read_bytes\":0,"
	"\"write_bytes\":18446744073709551615,\"size_bytes\":5,"
	"\"mmap\":false,\"deleted\":true}],\"files_rest\":null}";

/* The rows of table files: one per element, with its process's columns. */
static void test_file_rows(void **state)
{
	char *ddl = NULL, *line;
	size_t len = 0, n;
	struct jbuf b;
	FILE *f = open_memstream(&ddl, &len);

	(void)state;
	chschema_print(f, "jobtrace");
	fclose(f);
	jbuf_init(&b);
	jbuf_put(&b, "x\n", 2);	/* rows are appended */
	assert_int_equal(chschema_file_rows(&b, files_rec, strlen(files_rec)),
			 2);
	assert_string_equal(jbuf_str(&b),
		"x\n{\"path\":\"/ref/a \\\"b\\\".fa\",\"flags\":[\"read\"],"
		"\"opens\":2,\"read_bytes\":10,\"write_bytes\":0,\"mmap\":1,"
		"\"deleted\":0,\"host\":\"n\u00e9\",\"process_id\":\"p-1\","
		"\"pid\":7,\"start_time\":\"2026-11-22 10:00:00\","
		"\"start_time_us\":500000,\"uid\":1001,\"job_scheduler\":"
		"\"slurm\",\"job_id\":\"42\",\"job_run\":\"r1\",\"job_task\":"
		"\"align\",\"tool_name\":\"bwa\"}\n"
		"{\"path\":\"/o\",\"flags\":[\"write\",\"create\"],\"opens\":1,"
		"\"read_bytes\":0,\"write_bytes\":18446744073709551615,"
		"\"size_bytes\":5,\"mmap\":0,\"deleted\":1,\"host\":\"n\u00e9\","
		"\"process_id\":\"p-1\",\"pid\":7,\"start_time\":"
		"\"2026-11-22 10:00:00\",\"start_time_us\":500000,\"uid\":1001,"
		"\"job_scheduler\":\"slurm\",\"job_id\":\"42\",\"job_run\":"
		"\"r1\",\"job_task\":\"align\",\"tool_name\":\"bwa\"}\n");
	/* every member of a row is a column of the table */
	for (line = b.buf + 2; *line; line += n + 1) {
		n = strcspn(line, "\n");
		assert_true(valid_row(line, n + 1));
		row_columns(ddl, "files", line);
	}
	/* no files, null files, a sample: no rows; junk: b as it was */
	n = b.len;
	assert_int_equal(chschema_file_rows(&b, process_rec,
					    strlen(process_rec)), 0);
	assert_int_equal(chschema_file_rows(&b, "{\"files\":null}", 15), 0);
	assert_int_equal(chschema_file_rows(&b, sample_rec, strlen(sample_rec)),
			 0);
	assert_int_equal(chschema_file_rows(&b, "{\"files\":[{\"path\":", 19),
			 -EINVAL);
	assert_int_equal(b.len, n);
	jbuf_free(&b);
	free(ddl);
}

/* Set up the shared row buffer. */
static int setup(void **state)
{
	jbuf_init(&rowbuf);
	return 0;
}

/* Free the shared row buffer. */
static int teardown(void **state)
{
	jbuf_free(&rowbuf);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_process),
		cmocka_unit_test(test_file_rows),
		cmocka_unit_test(test_sample),
		cmocka_unit_test(test_job),
		cmocka_unit_test(test_signal),
		cmocka_unit_test(test_host),
		cmocka_unit_test(test_escapes),
		cmocka_unit_test(test_surrogates),
		cmocka_unit_test(test_nulls),
		cmocka_unit_test(test_types),
		cmocka_unit_test(test_times),
		cmocka_unit_test(test_garbage),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_deep_nesting),
		cmocka_unit_test(test_unknown_type),
		cmocka_unit_test(test_type_anywhere),
		cmocka_unit_test(test_duplicates),
		cmocka_unit_test(test_unknown_fields),
		cmocka_unit_test(test_whitespace),
		cmocka_unit_test(test_append),
		cmocka_unit_test(test_mutations),
		cmocka_unit_test(test_schema),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
