// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * deliver.c - how many records per second can the agent's spool and sinks
 * take and deliver?  Runs the agent's own delivery code (spool.c, sink.c,
 * chschema.c, http.c) the way jobtraced drives it: records appended by
 * one thread, synced every 200 ms, sinks woken after each sync, released
 * segments every second, and waits until every sink acknowledged the last
 * record.
 *
 *   deliver N SPOOL_DIR SINK_URL [clickhouse|http] [gzip]
 *   deliver N SPOOL_DIR DB_PATH sqlite
 *
 * DELIVER_BATCH (environment) sets the sink's batch_records (5000; the
 * SQLite store's flush_records, 1000, the agent's default).  The SQLite
 * store at DB_PATH is kept: a second run adds to it, so the cost of an
 * insert into a store that holds many records can be measured too; its
 * ids sort in the order they are made, as the agent's (which begin with
 * the time) do; DELIVER_IDS=hashed gives them in no order instead, as
 * the agent's were before 3763458, to compare the two.
 * The records are copies of one realistic `process` record (about 1.2 KB,
 * as the agent writes them) with distinct ids "bench-RUN-N".  Prints one
 * line of key=value: records, append_s, deliver_s (first append to the
 * last acknowledgement), rate_per_s, cpu_s (this process, all threads),
 * cpu_us_per_record, spool_bytes_per_record, record_bytes, and
 * sink_cpu_us_per_record (the sink's threads alone, sink.NAME.cpu_ns).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "log.h"
#include "sink.h"
#include "spool.h"
#include "util.h"

static const char tmpl[] =
	"{\"type\":\"process\",\"schema\":1,\"host\":\"bench-node-01\","
	"\"id\":\"%s\",\"pid\":%u,\"ppid\":4242,\"parent_id\":"
	"\"8f2c1a9e-7b1d-8c3e-9f00-1234567890ab\","
	"\"start_time\":\"2026-11-22T10:00:%02u.%06uZ\","
	"\"end_time\":\"2026-11-22T10:01:%02u.%06uZ\",\"exe\":"
	"\"/opt/conda/envs/align/bin/bwa\",\"comm\":\"bwa\",\"argv\":[\"bwa\","
	"\"mem\",\"-t\",\"8\",\"-R\",\"@RG\\\\tID:sample_%u\\\\tSM:sample\","
	"\"/ref/GRCh38/GRCh38.primary_assembly.genome.fa\","
	"\"/scratch/run42/reads/sample_R1.fastq.gz\","
	"\"/scratch/run42/reads/sample_R2.fastq.gz\"],\"argv_truncated\":false,"
	"\"uid\":1001,\"cgroup\":\"/slurm/uid_1001/job_123456/step_0/task_0\","
	"\"container\":null,\"job\":{\"scheduler\":\"slurm\",\"id\":\"123456\","
	"\"step\":\"0\",\"run\":\"run-2026-11-22-a\",\"pipeline\":\"rnaseq\","
	"\"task\":\"align\",\"user\":\"alice\",\"account\":\"genomics\","
	"\"cost_center\":\"genomics\"},\"tool\":{\"name\":\"bwa\",\"category\":"
	"\"aligner\",\"version\":null},\"exit\":{\"code\":0,\"signal\":null,"
	"\"core_dumped\":false,\"oom_killed\":false,\"lost\":false},\"cpu\":"
	"{\"user_s\":%u.%06u,\"sys_s\":1.250000},\"mem\":{\"peak_rss_bytes\":"
	"%u,\"maxrss_kernel_bytes\":5368709120},\"io\":{\"read_bytes\":"
	"8589934592,\"write_bytes\":1073741824,\"rchar\":9663676416,\"wchar\":"
	"1073741824,\"blkio_delay_s\":3.5},\"net\":{\"rx_bytes\":0,"
	"\"tx_bytes\":0}}";

static double now_s(void)
{
	return (double)util_now_ns(CLOCK_MONOTONIC) / 1e9;
}

static double cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

/* True once every sink acknowledged everything appended. */
static bool all_acked(struct spool *sp)
{
	struct spool_stats st;

	spool_get_stats(sp, &st);
	for (unsigned i = 0; i < spool_sinks(sp); i++) {
		struct spool_sink_stats k;

		spool_get_sink_stats(sp, i, &k);
		if (k.ack_seq < st.next_seq)
			return false;
	}
	return true;
}

/* CPU of the sinks' threads in ns, from their status lines. */
static uint64_t sinks_cpu_ns(struct sinks *ks)
{
	char *text = NULL, *p;
	size_t len = 0;
	uint64_t ns = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return 0;
	sinks_status(ks, f);
	fclose(f);
	for (p = text; (p = strstr(p, ".cpu_ns: ")); p++)
		ns += strtoull(p + 9, NULL, 10);
	free(text);
	return ns;
}

int main(int argc, char **argv)
{
	struct jt_sink_config sk;
	struct jt_config c;
	struct spool_opts so;
	struct spool *sp = NULL;
	struct sinks *ks = NULL;
	struct spool_stats st;
	const char *names[4];
	double t0, t_app, t_end, c0, c1, last_sync, last_maint;
	unsigned long n;
	size_t rec_bytes = 0;
	char err[512], rec[4096], id[64];
	unsigned run;
	uint64_t sink_ns;
	bool sqlite = argc > 4 && !strcmp(argv[4], "sqlite");
	bool hashed;

	if (argc < 4) {
		fprintf(stderr, "usage: deliver N SPOOL_DIR URL [clickhouse|http] [gzip]\n"
			"       deliver N SPOOL_DIR DB_PATH sqlite\n");
		return 2;
	}
	n = strtoul(argv[1], NULL, 10);
	log_init("deliver", 0, LOG_LVL_WARN);
	if (config_defaults(&c))
		return 1;
	c.store_enabled = false;
	memset(&sk, 0, sizeof(sk));
	sk.type = argc > 4 && !strcmp(argv[4], "http") ? JT_SINK_HTTP :
							  JT_SINK_CLICKHOUSE;
	sk.name = (char *)"bench";
	sk.url = argv[3];
	sk.database = (char *)"jobtrace";
	sk.batch_records = getenv("DELIVER_BATCH") ?
			   (unsigned)atoi(getenv("DELIVER_BATCH")) : 5000;
	sk.batch_age_ms = 1000;
	sk.timeout_ms = 30000;
	sk.retry_max_ms = 5000;
	sk.tls_verify = true;
	sk.gzip = argc > 5 && !strcmp(argv[5], "gzip");
	c.sinks = &sk;
	c.n_sinks = 1;
	if (sqlite) {
		free(c.sqlite_path);
		c.sqlite_path = strdup(argv[3]);
		c.store_enabled = true;
		c.n_sinks = 0;
		if (getenv("DELIVER_BATCH"))
			c.flush_records = sk.batch_records;
	}

	so.dir = argv[2];
	so.max_bytes = 4ull << 30;
	so.segment_bytes = 16ull << 20;
	if (spool_open(&so, names, sinks_names(&c, names, 4), &sp, err,
		       sizeof(err)) ||
	    sinks_start(&c, sp, &ks, err, sizeof(err))) {
		fprintf(stderr, "deliver: %s\n", err);
		return 1;
	}
	hashed = getenv("DELIVER_IDS") && !strcmp(getenv("DELIVER_IDS"), "hashed");
	/* in ms: two runs into one store have distinct ids */
	run = (unsigned)(util_now_ns(CLOCK_REALTIME) / 1000000ull);

	c0 = cpu_s();
	t0 = last_sync = last_maint = now_s();
	for (unsigned long i = 0; i < n; i++) {
		int len;

		if (sqlite && hashed)	/* no order: a multiplicative hash */
			snprintf(id, sizeof(id), "bench-%u-%016llx", run,
				 (unsigned long long)i * 0x9e3779b97f4a7c15ull);
		else if (sqlite)	/* in order, like the agent's (time first) */
			snprintf(id, sizeof(id), "bench-%u-%012lu", run, i);
		else
			snprintf(id, sizeof(id), "bench-%u-%lu", run, i);
		len = snprintf(rec, sizeof(rec), tmpl, id, (unsigned)(i % 4000000),
			       (unsigned)(i % 60), (unsigned)(i % 1000000),
			       (unsigned)((i + 7) % 60), (unsigned)(i % 999983),
			       (unsigned)i, (unsigned)(i % 5000),
			       (unsigned)(i % 1000000),
			       (unsigned)(1u << 30) + (unsigned)i);
		rec_bytes += (size_t)len;
		if (spool_append(sp, rec, (size_t)len)) {
			fprintf(stderr, "deliver: append failed\n");
			return 1;
		}
		/* what the agent's tick does, checked every 1024 records */
		if ((i & 1023) == 0) {
			double t = now_s();

			if (t - last_sync >= 0.2) {
				spool_sync(sp);
				sinks_notify(ks);
				last_sync = t;
			}
			if (t - last_maint >= 1.0) {
				spool_maintain(sp);
				last_maint = t;
			}
		}
	}
	spool_sync(sp);
	spool_get_stats(sp, &st);
	sinks_notify(ks);
	t_app = now_s();
	while (!all_acked(sp)) {
		usleep(20000);
		if (now_s() - last_maint >= 1.0) {
			spool_maintain(sp);
			last_maint = now_s();
		}
		if (now_s() - t0 > 600) {
			fprintf(stderr, "deliver: not delivered after 600 s\n");
			sinks_status(ks, stderr);
			return 1;
		}
	}
	t_end = now_s();
	c1 = cpu_s();
	sink_ns = sinks_cpu_ns(ks);
	sinks_stop(ks, 0);
	spool_maintain(sp);
	spool_close(sp);
	printf("records=%lu run=%u append_s=%.3f deliver_s=%.3f rate_per_s=%.0f"
	       " cpu_s=%.3f cpu_us_per_record=%.2f spool_bytes_per_record=%.1f"
	       " record_bytes=%.1f gzip=%d sink_cpu_us_per_record=%.2f\n", n,
	       run, t_app - t0, t_end - t0, n / (t_end - t0), c1 - c0,
	       (c1 - c0) * 1e6 / n, (double)st.bytes / n,
	       (double)rec_bytes / n, sk.gzip, sink_ns / 1e3 / n);
	c.sinks = NULL;
	c.n_sinks = 0;
	config_free(&c);
	return 0;
}
