// SPDX-License-Identifier: GPL-2.0-or-later
/* test_config.c - cmocka tests of agent/lib/config.c (jobtrace.conf). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <limits.h>
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

#include "config.h"

static char tmpdir[] = "/tmp/jt-test-config.XXXXXX";
static char err[1024];

/* Create the scratch folder shared by every test. */
static int setup_dir(void **state)
{
	(void)state;
	return mkdtemp(tmpdir) ? 0 : -1;
}

/* Remove the scratch folder and everything in it. */
static int teardown_dir(void **state)
{
	(void)state;
	return test_remove_tree(tmpdir);
}

static void assert_round_trip(const struct jt_config *c, const char *name);

/* Assert that two configurations hold the same values (source aside). */
static void assert_same_config(const struct jt_config *a,
			       const struct jt_config *b)
{
	assert_int_equal(a->log_level, b->log_level);
	assert_int_equal(a->log_syslog, b->log_syslog);
	assert_string_equal(a->state_dir, b->state_dir);
	assert_string_equal(a->run_dir, b->run_dir);
	assert_string_equal(a->rules_dir, b->rules_dir);
	assert_string_equal(a->hostname, b->hostname);
	assert_string_equal(a->control_group, b->control_group);
	assert_string_equal(a->reader_group, b->reader_group);
	assert_int_equal(a->rules_deadline_ms, b->rules_deadline_ms);
	assert_string_equal(a->rules_source, b->rules_source);
	assert_int_equal(a->rules_poll_ms, b->rules_poll_ms);
	assert_string_equal(a->rules_public_key, b->rules_public_key);
	assert_int_equal(a->rules_inotify, b->rules_inotify);
	assert_int_equal(a->sample_interval_ms, b->sample_interval_ms);
	assert_int_equal(a->ringbuf_kib, b->ringbuf_kib);
	assert_int_equal(a->max_tracked, b->max_tracked);
	assert_int_equal(a->argv_max_bytes, b->argv_max_bytes);
	assert_int_equal(a->delay_accounting, b->delay_accounting);
	assert_int_equal(a->snakemake_log, b->snakemake_log);
	assert_string_equal(a->sqlite_path, b->sqlite_path);
	assert_int_equal(a->flush_interval_ms, b->flush_interval_ms);
	assert_int_equal(a->flush_records, b->flush_records);
	assert_true(a->store_retention_days == b->store_retention_days);
	assert_int_equal(a->store_max_mib, b->store_max_mib);
	assert_int_equal(a->imds_mode, b->imds_mode);
	assert_string_equal(a->imds_url, b->imds_url);
	assert_int_equal(a->spot_poll_ms, b->spot_poll_ms);
	assert_int_equal(a->docker_enabled, b->docker_enabled);
	assert_string_equal(a->docker_socket, b->docker_socket);
	assert_int_equal(a->docker_timeout_ms, b->docker_timeout_ms);
	assert_int_equal(a->docker_end_grace_ms, b->docker_end_grace_ms);
	assert_string_equal(a->cost_currency, b->cost_currency);
	assert_true(a->cost_node_hour == b->cost_node_hour);
	assert_true(a->cost_core_hour == b->cost_core_hour);
	assert_true(a->cost_gib_hour == b->cost_gib_hour);
	assert_true(a->cost_gpu_hour == b->cost_gpu_hour);
	assert_string_equal(a->cost_prices_file, b->cost_prices_file);
	assert_int_equal(a->cost_attribution, b->cost_attribution);
	assert_int_equal(a->cost_node_cpus, b->cost_node_cpus);
	assert_true(a->cost_node_mem_gib == b->cost_node_mem_gib);
	assert_int_equal(a->cost_node_gpus, b->cost_node_gpus);
	assert_true(a->waste_cpu_below == b->waste_cpu_below);
	assert_true(a->waste_mem_below == b->waste_mem_below);
	assert_true(a->waste_time_below == b->waste_time_below);
	assert_true(a->waste_time_min_s == b->waste_time_min_s);
	assert_true(a->idle_after_min == b->idle_after_min);
	assert_true(a->idle_cpu_below == b->idle_cpu_below);
	assert_int_equal(a->signals_stall_after_ms, b->signals_stall_after_ms);
	assert_int_equal(a->signals_io_window_ms, b->signals_io_window_ms);
	assert_true(a->signals_io_above == b->signals_io_above);
	assert_true(a->signals_slower_factor == b->signals_slower_factor);
	assert_int_equal(a->signals_slower_min_runs, b->signals_slower_min_runs);
	assert_true(a->signals_memory_near == b->signals_memory_near);
}

/*
 * Load text as a file, expect -EINVAL, and check that the message starts
 * with "PATH:LINE: " and contains want; *c must still hold the defaults.
 */
static void expect_error(const char *name, const char *text, int line,
			 const char *want)
{
	struct jt_config c, d;
	char prefix[PATH_MAX + 32];
	const char *path = test_write_file(tmpdir, name, text);

	assert_int_equal(config_defaults(&c), 0);
	assert_int_equal(config_defaults(&d), 0);
	assert_int_equal(config_load(&c, path, false, err, sizeof(err)),
			 -EINVAL);
	snprintf(prefix, sizeof(prefix), "%s:%d: ", path, line);
	if (strncmp(err, prefix, strlen(prefix)) != 0 || !strstr(err, want))
		fail_msg("got \"%s\", want prefix \"%s\" and \"%s\"", err,
			 prefix, want);
	assert_null(c.source);
	assert_same_config(&c, &d);
	config_free(&c);
	config_free(&d);
}

/* rules.source: what it may be, plain http only to this machine or with a
 * key, a key only for bundles; each refusal names the file, line and key. */
static void test_rules_source(void **state)
{
	static const char *ok[] = {
		"", "/shared/jobtrace/rules", "https://rules.example.org/b.tar",
		"clickhouse", "http://127.0.0.1:8080/b.tar", "http://[::1]/b.tar",
		"http://localhost/b.tar",
	};
	struct jt_config c;
	char text[512];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		snprintf(text, sizeof(text), "rules = { source = \"%s\"; "
			 "poll_interval = 2; inotify = true; };\nsinks = ( {"
			 " type = \"clickhouse\"; url = \"http://127.0.0.1:8123/\";"
			 " } );\n", ok[i]);
		assert_int_equal(config_defaults(&c), 0);
		if (config_load(&c, test_write_file(tmpdir, "rs.conf", text),
				false, err, sizeof(err)))
			fail_msg("source \"%s\": %s", ok[i], err);
		assert_string_equal(c.rules_source, ok[i]);
		assert_int_equal(c.rules_poll_ms, 2000);
		assert_true(c.rules_inotify);	/* not the default */
		config_free(&c);
	}
	expect_error("rs1.conf", "rules = {\n source = \"rules/here\";\n};\n", 2,
		     "rules.source: must be empty (the rules_dir folder)");
	expect_error("rs2.conf", "rules = {\n source = \"ftp://x/b.tar\";\n};\n", 2,
		     "rules.source: must be empty");
	expect_error("rs3.conf", "rules = {\n source = \"http://rules.example.org/b.tar\";\n};\n",
		     2, "rules.source: plain http:// is allowed only to a loopback");
	expect_error("rs4.conf", "rules = {\n source = \"http://127.0.0.1.example.org/b\";\n};\n",
		     2, "plain http:// is allowed only to a loopback");
	expect_error("rs5.conf", "rules = {\n source = \"http://[::1]x/b\";\n};\n",
		     2, "plain http:// is allowed only to a loopback");
	expect_error("rs6.conf", "rules = {\n source = \"https://h/a b.tar\";\n};\n",
		     2, "rules.source: must not contain spaces");
	expect_error("rs7.conf", "rules = {\n source = \"/srv/rules\";\n"
		     " public_key = \"/etc/jobtrace/rules.pub\";\n};\n", 3,
		     "rules.public_key: the rules come from a folder");
	expect_error("rs8.conf", "rules = {\n public_key = \"/k.pub\";\n};\n", 2,
		     "rules.public_key: the rules come from a folder");
	/* the fleet store's rules need a fleet store; an http sink is not one */
	expect_error("rs10.conf", "rules = {\n source = \"clickhouse\";\n};\n"
		     "sinks = ( { type = \"http\"; url = \"http://127.0.0.1:9/\"; } );\n",
		     2, "rules.source: \"clickhouse\" reads the rules table of the"
		     " first clickhouse sink, and sinks has none");
	/* with a key, plain http to anywhere: the signature is the check */
	assert_int_equal(config_defaults(&c), 0);
	assert_int_equal(config_load(&c, test_write_file(tmpdir, "rs9.conf",
		"rules = { source = \"http://rules.example.org/b.tar\"; "
		"public_key = \"/etc/jobtrace/rules.pub\"; };\n"), false, err,
		sizeof(err)), 0);
	config_free(&c);
}

/* A sinks list with both types, every key, and the spool group. */
static void test_sinks(void **state)
{
	const char *path = test_write_file(tmpdir, "sinks.conf",
		"agent = { state_dir = \"/srv/jt\"; };\n"
		"spool = { max_size_mib = 8; segment_size_kib = 256;"
		" sync_interval = 0.05; };\n"
		"store = { enabled = false; };\n"
		"sinks = (\n"
		" { type = \"clickhouse\"; name = \"fleet\";"
		" url = \"https://ch:8443/\"; database = \"jt_prod\";"
		" credentials_file = \"/etc/jobtrace/ch.cred\";"
		" batch_records = 100; batch_age = 0.5; timeout = 3.0;"
		" retry_max = 5; gzip = true; tls_verify = false;"
		" tls_ca_file = \"/etc/ca.pem\"; },\n"
		" { type = \"http\"; url = \"http://127.0.0.1:8686/x\";"
		" headers = [ \"Authorization: Bearer t\", \"X-A: b\" ];"
		" credentials_file = \"/etc/jobtrace/credentials.d/v\"; }\n"
		");\n");
	struct jt_config c, copy;
	const struct jt_sink_config *k;

	(void)state;
	assert_int_equal(config_defaults(&c), 0);
	assert_int_equal(config_load(&c, path, false, err, sizeof(err)), 0);
	assert_string_equal(c.spool_dir, "/srv/jt/spool");
	assert_int_equal(c.spool_max_mib, 8);
	assert_int_equal(c.spool_segment_kib, 256);
	assert_int_equal(c.spool_sync_ms, 50);
	assert_false(c.store_enabled);
	assert_int_equal(c.n_sinks, 2);
	k = config_find_sink(&c, JT_SINK_CLICKHOUSE, NULL);
	assert_non_null(k);
	assert_string_equal(k->name, "fleet");
	assert_string_equal(k->database, "jt_prod");
	assert_string_equal(k->credentials_file, "/etc/jobtrace/ch.cred");
	assert_int_equal(k->batch_records, 100);
	assert_int_equal(k->batch_age_ms, 500);
	assert_int_equal(k->timeout_ms, 3000);
	assert_int_equal(k->retry_max_ms, 5000);
	assert_true(k->gzip);
	assert_false(k->tls_verify);
	k = config_find_sink(&c, JT_SINK_HTTP, "http");
	assert_non_null(k);
	assert_int_equal(k->n_headers, 2);
	assert_string_equal(k->headers[1], "X-A: b");
	assert_string_equal(k->credentials_file, "/etc/jobtrace/credentials.d/v");
	assert_int_equal(k->batch_records, 5000);	/* defaults */
	assert_true(k->tls_verify);
	assert_null(config_find_sink(&c, JT_SINK_HTTP, "nope"));
	/* a reload of the same file copies the list deeply */
	assert_int_equal(config_defaults(&copy), 0);
	assert_int_equal(config_load(&copy, path, false, err, sizeof(err)), 0);
	assert_int_equal(config_load(&copy, path, false, err, sizeof(err)), 0);
	assert_int_equal(copy.n_sinks, 2);
	assert_string_equal(copy.sinks[1].headers[0], "Authorization: Bearer t");
	config_free(&copy);
	config_free(&c);
}

/* Sink mistakes name the line and what is wrong. */
static void test_sink_errors(void **state)
{
	(void)state;
	expect_error("sink_type.conf",
		     "sinks = (\n { type = \"kafka\"; url = \"http://x/\"; }\n);\n",
		     2, "must be \"clickhouse\" or \"http\"");
	expect_error("sink_sqlite.conf",
		     "sinks = (\n { type = \"sqlite\"; url = \"http://x/\"; }\n);\n",
		     2, "store { }");
	expect_error("sink_notype.conf",
		     "sinks = (\n { url = \"http://x/\"; }\n);\n", 2,
		     "needs type");
	expect_error("sink_nourl.conf",
		     "sinks = (\n { type = \"http\"; }\n);\n", 2,
		     "needs url");
	expect_error("sink_badurl.conf",
		     "sinks = (\n { type = \"http\";\n url = \"ftp://x/\"; }\n);\n",
		     3, "http:// or https://");
	expect_error("sink_key.conf",
		     "sinks = (\n { type = \"http\"; url = \"http://x/\";\n"
		     " database = \"a\"; }\n);\n", 3,
		     "unknown key \"database\" for a http sink");
	expect_error("sink_dup.conf",
		     "sinks = (\n { type = \"http\"; url = \"http://x/\"; },\n"
		     " { type = \"http\"; url = \"http://y/\"; }\n);\n", 3,
		     "already the name of the sink at line 2");
	expect_error("sink_header.conf",
		     "sinks = (\n { type = \"http\"; url = \"http://x/\";\n"
		     " headers = [ \"no colon\" ]; }\n);\n", 3,
		     "Name: value");
	expect_error("sink_cred.conf",
		     "sinks = (\n { type = \"clickhouse\"; url = \"http://x/\";\n"
		     " credentials_file = \"ch.cred\"; }\n);\n", 3,
		     "absolute path");
	expect_error("sink_batch.conf",
		     "sinks = (\n { type = \"http\"; url = \"http://x/\";\n"
		     " batch_records = 0; }\n);\n", 3, "between 1 and");
	expect_error("sink_notlist.conf", "sinks = { type = \"http\"; };\n",
		     1, "expected a list");
	expect_error("spool_range.conf", "spool = {\n max_size_mib = 0; };\n",
		     2, "spool.max_size_mib");
	/* 16384 KiB segments do not fit four times in 32 MiB */
	expect_error("spool_segment.conf", "spool = {\n max_size_mib = 32;\n"
		     " segment_size_kib = 16384; };\n", 3,
		     "spool.segment_size_kib: 16384 KiB is more than a quarter"
		     " of the spool (spool.max_size_mib = 32): at most 8192 KiB");
	{
		/* exactly a quarter is taken */
		const char *path = test_write_file(tmpdir, "spool_quarter.conf",
			"spool = { max_size_mib = 32; segment_size_kib = 8192; };\n");
		struct jt_config c;

		assert_int_equal(config_defaults(&c), 0);
		assert_int_equal(config_load(&c, path, false, err, sizeof(err)),
				 0);
		assert_int_equal(c.spool_segment_kib, 8192);
		config_free(&c);
	}
	{
		/* the default is lowered to fit, and the dump says so: it
		 * read back as an explicit 16384 and was refused (fuzz input
		 * regressions/config/small-spool-default-segment) */
		const char *path = test_write_file(tmpdir, "spool_small.conf",
			"spool = { max_size_mib = 4; };\n");
		struct jt_config c;

		assert_int_equal(config_defaults(&c), 0);
		assert_int_equal(config_load(&c, path, false, err, sizeof(err)),
				 0);
		assert_int_equal(c.spool_segment_kib, 1024);
		assert_round_trip(&c, "spool_small_dump.conf");
		config_free(&c);
	}
}

/* Every default matches config.h. */
static void test_defaults(void **state)
{
	struct jt_config c;

	(void)state;
	assert_int_equal(config_defaults(&c), 0);
	assert_null(c.source);
	assert_int_equal(c.log_level, LOG_LVL_INFO);
	assert_false(c.log_syslog);
	assert_string_equal(c.state_dir, JT_LOCALSTATEDIR "/lib/jobtrace");
	assert_string_equal(c.run_dir, JT_RUNSTATEDIR "/jobtrace");
	assert_string_equal(c.rules_dir, JT_PKGDATADIR "/lua-rules");
	assert_string_equal(c.hostname, "");
	assert_string_equal(c.reader_group, "");
	assert_int_equal(c.rules_deadline_ms, 5);
	assert_int_equal(c.sample_interval_ms, 10000);
	assert_int_equal(c.ringbuf_kib, 8192);
	assert_int_equal(c.max_tracked, 131072);
	assert_int_equal(c.argv_max_bytes, 2048);
	assert_true(c.delay_accounting);
	assert_true(c.snakemake_log);
	assert_string_equal(c.sqlite_path,
			    JT_LOCALSTATEDIR "/lib/jobtrace/jobtrace.db");
	assert_int_equal(c.flush_interval_ms, 1000);
	assert_int_equal(c.flush_records, 1000);
	assert_true(c.store_retention_days == 30);
	assert_int_equal(c.store_max_mib, 1024);
	assert_int_equal(c.imds_mode, JT_IMDS_AUTO);
	assert_string_equal(c.imds_url, "http://169.254.169.254");
	assert_int_equal(c.spot_poll_ms, 5000);
	assert_string_equal(c.cost_currency, "USD");
	assert_true(c.cost_node_hour == 0 && c.cost_core_hour == 0 &&
		    c.cost_gib_hour == 0 && c.cost_gpu_hour == 0);
	assert_string_equal(c.cost_prices_file, "");
	assert_int_equal(c.cost_attribution, JT_ATTR_ALLOCATION);
	assert_int_equal(c.cost_node_cpus, 0);
	assert_true(c.cost_node_mem_gib == 0);
	assert_int_equal(c.cost_node_gpus, 0);
	assert_true(c.waste_cpu_below == 0.65);
	assert_true(c.waste_mem_below == 0.70);
	assert_true(c.waste_time_below == 0.60);
	assert_true(c.waste_time_min_s == 300);
	assert_true(c.idle_after_min == 30);
	assert_true(c.idle_cpu_below == 0.05);
	assert_string_equal(config_socket_path(&c),
			    JT_RUNSTATEDIR "/jobtrace/jobtraced.sock");
	config_free(&c);
	config_free(&c);	/* twice is harmless */
}

static const char full_conf[] =
	"# every key\n"
	"log = {\n"
	"\tlevel = \"debug\";\n"
	"\tsyslog = true;\n"
	"};\n"
	"agent: {\n"
	"\tstate_dir = \"/srv/jt/state/\";\n"
	"\trun_dir = \"/srv/jt/run\";\n"
	"\trules_dir = \"/srv/jt/rules\";\n"
	"\thostname = \"node-017.cluster\";\n"
	"\tcontrol_group = \"slurm\";\n"
	"\treader_group = \"hpc-staff\";\n"
	"};\n"
	"rules = {\n"
	"\tdeadline_ms = 20;\n"
	"};\n"
	"collector = {\n"
	"\tsample_interval = 2.5;\n"
	"\tringbuf_size_kib = 1024;\n"
	"\tmax_tracked = 4096L;\n"
	"\targv_max_bytes = 512;\n"
	"\tdelay_accounting = false;\n"
	"\tsnakemake_log = false;\n"
	"};\n"
	"store = {\n"
	"\tsqlite_path = \"/data/jt.db\";\n"
	"\tflush_interval = 2;\n"
	"\tflush_records = 50;\n"
	"\tretention = 7.5;\n"
	"\tmax_size_mib = 300;\n"
	"};\n"
	"cloud = {\n"
	"\timds = \"off\";\n"
	"\timds_url = \"http://[fd00:ec2::254]:8080/\";\n"
	"\tspot_poll_interval = 2.5;\n"
	"};\n"
	"cost = {\n"
	"\tcurrency = \"EUR\";\n"
	"\tnode_hour = 3.6;\n"
	"\tcore_hour = 0.02;\n"
	"\tgib_hour = 0.005;\n"
	"\tgpu_hour = 1;\n"
	"\tprices_file = \"/etc/jobtrace/prices.tsv\";\n"
	"\tattribution = \"usage\";\n"
	"\tnode_cpus = 64;\n"
	"\tnode_mem_gib = 251.5;\n"
	"\tnode_gpus = 4;\n"
	"};\n"
	"waste = {\n"
	"\tcpu_efficiency_below = 0.5;\n"
	"\tmemory_used_below = 0;\n"
	"\ttime_used_below = 1.0;\n"
	"\ttime_min_elapsed = 60.5;\n"
	"};\n"
	"idle = {\n"
	"\tafter = 0.05;\n"
	"\tcpu_below = 0.1;\n"
	"};\n"
	"signals = {\n"
	"\tstall_after = 3;\n"
	"\tio_window = 2.5;\n"
	"\tio_above = 0.6;\n"
	"\tslower_factor = 3;\n"
	"\tslower_min_runs = 5;\n"
	"\tmemory_near = 0.8;\n"
	"};\n";

/* A file that sets every key is read in full. */
static void test_full_file(void **state)
{
	struct jt_config c;
	const char *path = test_write_file(tmpdir, "full.conf", full_conf);

	(void)state;
	assert_int_equal(config_defaults(&c), 0);
	assert_int_equal(config_load(&c, path, false, err, sizeof(err)), 0);
	assert_string_equal(err, "");
	assert_string_equal(c.source, path);
	assert_int_equal(c.log_level, LOG_LVL_DEBUG);
	assert_true(c.log_syslog);
	assert_string_equal(c.state_dir, "/srv/jt/state");
	assert_string_equal(c.run_dir, "/srv/jt/run");
	assert_string_equal(c.rules_dir, "/srv/jt/rules");
	assert_string_equal(c.hostname, "node-017.cluster");
	assert_string_equal(c.control_group, "slurm");
	assert_string_equal(c.reader_group, "hpc-staff");
	assert_int_equal(c.rules_deadline_ms, 20);
	assert_int_equal(c.sample_interval_ms, 2500);
	assert_int_equal(c.ringbuf_kib, 1024);
	assert_int_equal(c.max_tracked, 4096);
	assert_int_equal(c.argv_max_bytes, 512);
	assert_false(c.delay_accounting);
	assert_false(c.snakemake_log);
	assert_string_equal(c.sqlite_path, "/data/jt.db");
	assert_int_equal(c.flush_interval_ms, 2000);
	assert_int_equal(c.flush_records, 50);
	assert_true(c.store_retention_days == 7.5);
	assert_int_equal(c.store_max_mib, 300);
	assert_int_equal(c.imds_mode, JT_IMDS_OFF);
	/* the trailing '/' goes: paths are appended */
	assert_string_equal(c.imds_url, "http://[fd00:ec2::254]:8080");
	assert_int_equal(c.spot_poll_ms, 2500);
	assert_string_equal(c.cost_currency, "EUR");
	assert_true(c.cost_node_hour == 3.6);
	assert_true(c.cost_core_hour == 0.02);
	assert_true(c.cost_gib_hour == 0.005);
	assert_true(c.cost_gpu_hour == 1);
	assert_string_equal(c.cost_prices_file, "/etc/jobtrace/prices.tsv");
	assert_int_equal(c.cost_attribution, JT_ATTR_USAGE);
	assert_int_equal(c.cost_node_cpus, 64);
	assert_true(c.cost_node_mem_gib == 251.5);
	assert_int_equal(c.cost_node_gpus, 4);
	assert_true(c.waste_cpu_below == 0.5);
	assert_true(c.waste_mem_below == 0);
	assert_true(c.waste_time_below == 1.0);
	assert_true(c.waste_time_min_s == 60.5);
	assert_true(c.idle_after_min == 0.05);
	assert_true(c.idle_cpu_below == 0.1);
	assert_int_equal(c.signals_stall_after_ms, 3000);
	assert_int_equal(c.signals_io_window_ms, 2500);
	assert_true(c.signals_io_above == 0.6);
	assert_true(c.signals_slower_factor == 3);
	assert_int_equal(c.signals_slower_min_runs, 5);
	assert_true(c.signals_memory_near == 0.8);
	assert_string_equal(config_socket_path(&c),
			    "/srv/jt/run/jobtraced.sock");
	config_free(&c);
}

/* Range limits themselves are accepted. */
static void test_limits_inclusive(void **state)
{
	struct jt_config c;
	const char *path = test_write_file(tmpdir, "limits.conf",
		"collector = { sample_interval = 0.1; ringbuf_size_kib = 256;\n"
		"  max_tracked = 4194304; argv_max_bytes = 64; };\n"
		"store = { flush_interval = 0.05; flush_records = 100000;\n"
		"  retention = 0.001; max_size_mib = 1048576; };\n");

	(void)state;
	assert_int_equal(config_defaults(&c), 0);
	assert_int_equal(config_load(&c, path, false, err, sizeof(err)), 0);
	assert_int_equal(c.sample_interval_ms, 100);
	assert_int_equal(c.ringbuf_kib, 256);
	assert_int_equal(c.max_tracked, 4194304);
	assert_int_equal(c.argv_max_bytes, 64);
	assert_int_equal(c.flush_interval_ms, 50);
	assert_int_equal(c.flush_records, 100000);
	assert_true(c.store_retention_days == 0.001);
	assert_int_equal(c.store_max_mib, 1048576);
	config_free(&c);
	/* and 0: no limit */
	path = test_write_file(tmpdir, "limits0.conf",
		"store = { retention = 0; max_size_mib = 0; };\n");
	assert_int_equal(config_defaults(&c), 0);
	assert_int_equal(config_load(&c, path, false, err, sizeof(err)), 0);
	assert_true(c.store_retention_days == 0);
	assert_int_equal(c.store_max_mib, 0);
	assert_round_trip(&c, "dump-limits0.conf");
	config_free(&c);
}

/* An empty file and empty groups leave the defaults. */
static void test_empty_file(void **state)
{
	struct jt_config c, d;
	const char *path = test_write_file(tmpdir, "empty.conf", "");

	(void)state;
	assert_int_equal(config_defaults(&c), 0);
	assert_int_equal(config_defaults(&d), 0);
	assert_int_equal(config_load(&c, path, false, err, sizeof(err)), 0);
	assert_same_config(&c, &d);
	config_free(&c);
	path = test_write_file(tmpdir, "empty2.conf", "log = { };\nstore = { };\n");
	assert_int_equal(config_load(&c, path, false, err, sizeof(err)), 0);
	assert_same_config(&c, &d);
	config_free(&c);
	config_free(&d);
}

/* libconfig syntax errors carry libconfig's line and text. */
static void test_syntax_error(void **state)
{
	(void)state;
	expect_error("syntax.conf",
		     "log = {\n\tlevel = \"info\";\n\tsyslog = ;\n};\n", 3,
		     "syntax error");
	expect_error("unterminated.conf",
		     "log = {\n\tlevel = \"info\";\n};\nagent = {\n", 5,
		     "syntax error");
	expect_error("dup.conf",
		     "log = {\n\tlevel = \"info\";\n\tlevel = \"warn\";\n};\n",
		     3, "duplicate setting");
}

/* An unknown key is named and the valid keys of its group listed. */
static void test_unknown_key(void **state)
{
	(void)state;
	expect_error("unknown_key.conf",
		     "log = { level = \"warn\"; };\n"
		     "collector = {\n"
		     "\tmax_tracked = 2048;\n"
		     "\tsample_intervall = 5;\n"
		     "};\n", 4,
		     "unknown key \"collector.sample_intervall\"; valid keys in collector: "
		     "sample_interval, first_sample, record, ringbuf_size_kib, max_tracked, "
		     "argv_max_bytes, delay_accounting, snakemake_log");
	expect_error("nested.conf",
		     "store = {\n\tsqlite = { path = \"/x\"; };\n};\n", 2,
		     "unknown key \"store.sqlite\"");
}

/* An unknown group is named and the valid groups listed. */
static void test_unknown_group(void **state)
{
	(void)state;
	expect_error("unknown_group.conf",
		     "log = { level = \"warn\"; };\n\n"
		     "sink = {\n\turl = \"http://x\";\n};\n", 3,
		     "unknown group \"sink\"; valid groups: log, agent, "
		     "rules, collector, store, spool, cloud, docker, cost, waste, "
		     "idle, signals, files, sinks");
	expect_error("top_scalar.conf", "level = \"debug\";\n", 1,
		     "unknown group \"level\"");
	expect_error("group_not_group.conf", "\nlog = \"debug\";\n", 2,
		     "log: expected a group");
}

/* cloud { }: the mode is a word, the URL an http:// address, the poll
 * interval bounded; each error names the key and what it wants. */
static void test_cloud_errors(void **state)
{
	(void)state;
	expect_error("imds_yes.conf", "cloud = {\n\timds = \"yes\";\n};\n", 2,
		     "cloud.imds: must be \"auto\", \"off\" or \"on\", got \"yes\"");
	expect_error("imds_bool.conf", "cloud = {\n\timds = false;\n};\n", 2,
		     "cloud.imds: expected a string, got a boolean");
	expect_error("imds_https.conf",
		     "cloud = { imds_url = \"https://169.254.169.254\"; };\n", 1,
		     "cloud.imds_url: must start with http://");
	expect_error("imds_name.conf",
		     "cloud = { imds_url = \"http://metadata.internal\"; };\n", 1,
		     "cloud.imds_url: the host must be an IP address");
	expect_error("imds_path.conf",
		     "cloud = { imds_url = \"http://169.254.169.254/latest\"; };\n",
		     1, "cloud.imds_url: only http://ADDRESS[:PORT]");
	expect_error("imds_port0.conf",
		     "cloud = { imds_url = \"http://127.0.0.1:0\"; };\n", 1,
		     "cloud.imds_url: the port must be 1 to 65535");
	expect_error("imds_port_big.conf",
		     "cloud = { imds_url = \"http://127.0.0.1:65536\"; };\n", 1,
		     "cloud.imds_url: the port must be 1 to 65535");
	expect_error("imds_v6_open.conf",
		     "cloud = { imds_url = \"http://[fd00:ec2::254\"; };\n", 1,
		     "cloud.imds_url: no ']' after the IPv6 address");
	expect_error("imds_user.conf",
		     "cloud = { imds_url = \"http://u@169.254.169.254\"; };\n", 1,
		     "cloud.imds_url: the host must be an IP address");
	expect_error("spot_fast.conf",
		     "cloud = { spot_poll_interval = 0.5; };\n", 1,
		     "cloud.spot_poll_interval: must be between 1 and 3600");
	expect_error("cloud_key.conf", "cloud = { url = \"x\"; };\n", 1,
		     "unknown key \"cloud.url\"; valid keys in cloud: imds,"
		     " imds_url, provider, dmi_dir, spot_poll_interval");
	expect_error("cloud_provider.conf",
		     "cloud = { provider = \"azure\"; };\n", 1,
		     "cloud.provider: must be \"auto\", \"aws\" or \"gcp\", got \"azure\"");
}

/* cost { }, waste { }, idle { }: prices and fractions bounded, the
 * currency letters, the prices file absolute, attribution a word. */
static void test_cost_errors(void **state)
{
	(void)state;
	expect_error("cost_neg.conf", "cost = {\n\tnode_hour = -0.5;\n};\n",
		     2, "cost.node_hour: must be between 0 and 1e+06, got -0.5");
	expect_error("cost_str.conf", "cost = {\n\tcore_hour = \"0.02\";\n};\n",
		     2, "cost.core_hour: expected a number, got a string");
	expect_error("cost_nan.conf", "cost = {\n\tgib_hour = 1e400;\n};\n",
		     2, "cost.gib_hour: must be between 0 and 1e+06");
	expect_error("cost_cur_long.conf",
		     "cost = {\n\n\tcurrency = \"EURODOLLAR\";\n};\n", 3,
		     "cost.currency: 1 to 7 letters (\"USD\"), got \"EURODOLLAR\"");
	expect_error("cost_cur_empty.conf", "cost = { currency = \"\"; };\n",
		     1, "cost.currency: 1 to 7 letters");
	expect_error("cost_cur_sym.conf", "cost = { currency = \"$\"; };\n",
		     1, "cost.currency: only letters (\"USD\"), got \"$\"");
	expect_error("cost_prices_rel.conf",
		     "cost = { prices_file = \"prices.tsv\"; };\n", 1,
		     "cost.prices_file: must be an absolute path, got \"prices.tsv\"");
	expect_error("cost_attr.conf",
		     "cost = {\n\tattribution = \"share\";\n};\n", 2,
		     "cost.attribution: must be \"allocation\" or \"usage\", got \"share\"");
	expect_error("cost_cpus.conf", "cost = { node_cpus = 2.5; };\n", 1,
		     "cost.node_cpus: expected an integer, got a float");
	expect_error("cost_gpus.conf", "cost = { node_gpus = -1; };\n", 1,
		     "cost.node_gpus: must be between 0 and 4096, got -1");
	expect_error("cost_key.conf", "cost = { price = 1.0; };\n", 1,
		     "unknown key \"cost.price\"; valid keys in cost: currency,"
		     " node_hour, core_hour, gib_hour, gpu_hour, prices_file,"
		     " attribution, node_cpus, node_mem_gib, node_gpus");
	expect_error("waste_frac.conf",
		     "waste = {\n\tcpu_efficiency_below = 65;\n};\n", 2,
		     "waste.cpu_efficiency_below: must be between 0 and 1, got 65");
	expect_error("waste_time.conf",
		     "waste = { time_min_elapsed = -1; };\n", 1,
		     "waste.time_min_elapsed: must be between 0 and");
	expect_error("waste_bool.conf",
		     "waste = { memory_used_below = true; };\n", 1,
		     "waste.memory_used_below: expected a number, got a boolean");
	expect_error("idle_after.conf", "idle = {\n\tafter = 0;\n};\n", 2,
		     "idle.after: must be between 0.01 and 527040, got 0");
	expect_error("idle_cpu.conf", "idle = { cpu_below = 1.5; };\n", 1,
		     "idle.cpu_below: must be between 0 and 1, got 1.5");
	expect_error("signals_stall.conf",
		     "signals = {\n\tstall_after = 0.5;\n};\n", 2,
		     "signals.stall_after: must be between 1 and 604800");
	expect_error("signals_near.conf",
		     "signals = {\n\n\tmemory_near = 1.5;\n};\n", 3,
		     "signals.memory_near: must be between 0.01 and 1, got 1.5");
	expect_error("signals_runs.conf",
		     "signals = { slower_min_runs = 0; };\n", 1,
		     "signals.slower_min_runs: must be between 1 and 1000");
}

/* config_take_cost moves the three groups and leaves the rest. */
static void test_take_cost(void **state)
{
	struct jt_config a, b;

	(void)state;
	assert_int_equal(config_defaults(&a), 0);
	assert_int_equal(config_defaults(&b), 0);
	assert_int_equal(config_load(&b, test_write_file(tmpdir, "take.conf",
		"cost = { currency = \"CHF\"; node_hour = 2; node_cpus = 8;"
		" prices_file = \"/p.tsv\"; attribution = \"usage\"; };\n"
		"waste = { time_min_elapsed = 10; };\n"
		"idle = { after = 1.5; };\n"
		"collector = { max_tracked = 2048; };\n"),
				     false, err, sizeof(err)), 0);
	config_take_cost(&a, &b);
	assert_string_equal(a.cost_currency, "CHF");
	assert_string_equal(a.cost_prices_file, "/p.tsv");
	assert_true(a.cost_node_hour == 2);
	assert_int_equal(a.cost_node_cpus, 8);
	assert_int_equal(a.cost_attribution, JT_ATTR_USAGE);
	assert_true(a.waste_time_min_s == 10);
	assert_true(a.idle_after_min == 1.5);
	assert_int_equal(a.max_tracked, 131072);
	assert_null(b.cost_currency);
	config_free(&a);
	config_free(&b);
}

/* A value of the wrong type names the key, the wanted and the given type. */
static void test_wrong_type(void **state)
{
	(void)state;
	expect_error("type_int.conf",
		     "collector = {\n\targv_max_bytes = 100;\n"
		     "\tmax_tracked = \"4096\";\n};\n", 3,
		     "collector.max_tracked: expected an integer, got a string");
	expect_error("type_float.conf",
		     "collector = {\n\tmax_tracked = 4096.0;\n};\n", 2,
		     "collector.max_tracked: expected an integer, got a float");
	expect_error("type_bool.conf",
		     "log = {\n\tsyslog = 1;\n};\n", 2,
		     "log.syslog: expected a boolean");
	expect_error("type_string.conf",
		     "agent = {\n\tstate_dir = [ \"/a\" ];\n};\n", 2,
		     "agent.state_dir: expected a string, got an array");
	expect_error("type_seconds.conf",
		     "store = {\n\tflush_interval = \"1s\";\n};\n", 2,
		     "store.flush_interval: expected a number of seconds, got a string");
	expect_error("type_days.conf",
		     "store = {\n\n\tretention = \"30d\";\n};\n", 3,
		     "store.retention: expected a number of days, got a string");
}

/* Values outside their range are errors that give the range. */
static void test_out_of_range(void **state)
{
	(void)state;
	expect_error("range_max.conf",
		     "collector = {\n\tmax_tracked = 1000;\n};\n", 2,
		     "collector.max_tracked: must be between 1024 and 4194304");
	expect_error("range_neg.conf",
		     "collector = {\n\n\targv_max_bytes = -1;\n};\n", 3,
		     "collector.argv_max_bytes: must be between 64 and 2048");
	expect_error("range_sample.conf",
		     "collector = {\n\tsample_interval = 0.05;\n};\n", 2,
		     "collector.sample_interval: must be between 0.1 and 3600");
	expect_error("range_sample_hi.conf",
		     "collector = {\n\tsample_interval = 3601;\n};\n", 2,
		     "collector.sample_interval: must be between 0.1 and 3600");
	expect_error("range_flush.conf",
		     "store = {\n\tflush_records = 0;\n};\n", 2,
		     "store.flush_records: must be between 1 and 100000");
	expect_error("range_flushi.conf",
		     "store = {\n\tflush_interval = 61.0;\n};\n", 2,
		     "store.flush_interval: must be between 0.05 and 60");
	expect_error("range_retention.conf",
		     "store = {\n\tretention = 0.0005;\n};\n", 2,
		     "store.retention: must be 0 (no limit) or between 0.001 and 36500 days, got 0.0005");
	expect_error("range_retention_neg.conf",
		     "store = {\n\tretention = -1;\n};\n", 2,
		     "store.retention: must be 0 (no limit) or between 0.001");
	expect_error("range_retention_hi.conf",
		     "store = {\n\tretention = 36501;\n};\n", 2,
		     "between 0.001 and 36500 days, got 36501");
	expect_error("range_store_size.conf",
		     "store = {\n\tmax_size_mib = 1048577;\n};\n", 2,
		     "store.max_size_mib: must be between 0 and 1048576");
	expect_error("type_store_size.conf",
		     "store = {\n\tmax_size_mib = 1.5;\n};\n", 2,
		     "store.max_size_mib: expected an integer, got a float");
	expect_error("range_deadline0.conf",
		     "rules = {\n\tdeadline_ms = 0;\n};\n", 2,
		     "rules.deadline_ms: must be between 1 and 1000, got 0");
	expect_error("range_deadline_hi.conf",
		     "rules = {\n\n\tdeadline_ms = 1001;\n};\n", 3,
		     "rules.deadline_ms: must be between 1 and 1000, got 1001");
	expect_error("type_deadline.conf",
		     "rules = {\n\tdeadline_ms = 2.5;\n};\n", 2,
		     "rules.deadline_ms: expected an integer, got a float");
	expect_error("range_ringbuf.conf",
		     "collector = {\n\tringbuf_size_kib = 128;\n};\n", 2,
		     "collector.ringbuf_size_kib: must be between 256 and 1048576");
	expect_error("range_int64.conf",
		     "collector = {\n\tmax_tracked = 8589934592L;\n};\n", 2,
		     "collector.max_tracked: must be between 1024 and 4194304");
	/* libconfig 1.5 wraps this to 1024 without the L suffix */
	expect_error("range_wrap.conf",
		     "collector = {\n\tmax_tracked = 4294968320;\n};\n", 2,
		     "collector.max_tracked: must be between 1024 and 4194304, got 4294968320");
}

/* Paths must be absolute. */
static void test_relative_path(void **state)
{
	(void)state;
	expect_error("relative.conf",
		     "agent = {\n\tstate_dir = \"/ok\";\n"
		     "\trules_dir = \"lua-rules\";\n};\n", 3,
		     "agent.rules_dir: must be an absolute path");
	expect_error("relative_db.conf",
		     "store = {\n\tsqlite_path = \"\";\n};\n", 2,
		     "store.sqlite_path: must be an absolute path");
	expect_error("relative_docker.conf",
		     "docker = {\n\tsocket = \"docker.sock\";\n};\n", 2,
		     "docker.socket: must be an absolute path");
	expect_error("docker_timeout.conf",
		     "docker = {\n\ttimeout = 0.01;\n};\n", 2,
		     "docker.timeout");
	expect_error("docker_grace.conf",
		     "docker = {\n\tend_grace = 0.1;\n};\n", 2,
		     "docker.end_grace");
}

/* The log level must be one log_level_parse knows. */
static void test_bad_level(void **state)
{
	(void)state;
	expect_error("level.conf", "log = {\n\tlevel = \"verbose\";\n};\n", 2,
		     "log.level: must be one of error, warn, info, debug");
}

/* The ring buffer size must be a power of two. */
static void test_ringbuf_pow2(void **state)
{
	(void)state;
	expect_error("pow2.conf",
		     "collector = {\n\tringbuf_size_kib = 1000;\n};\n", 2,
		     "collector.ringbuf_size_kib: must be a power of two");
}

/* A host name with spaces is refused. */
static void test_bad_hostname(void **state)
{
	(void)state;
	expect_error("host.conf", "agent = {\n\thostname = \"a b\";\n};\n", 2,
		     "agent.hostname:");
	expect_error("group.conf", "agent = {\n\treader_group = \"a\tb\";\n};\n",
		     2, "agent.reader_group:");
}

/* A run_dir too long for sun_path is refused. */
static void test_run_dir_too_long(void **state)
{
	char text[512];
	char dir[200];

	(void)state;
	memset(dir, 'r', sizeof(dir) - 1);
	dir[0] = '/';
	dir[sizeof(dir) - 1] = '\0';
	snprintf(text, sizeof(text), "agent = {\n\trun_dir = \"%s\";\n};\n",
		 dir);
	expect_error("longrun.conf", text, 2, "agent.run_dir: too long");
}

/* Good keys before a bad one are not applied: *c keeps every old value. */
static void test_error_keeps_values(void **state)
{
	struct jt_config c, d;
	const char *path = test_write_file(tmpdir, "partial.conf",
		"log = { level = \"debug\"; syslog = true; };\n"
		"agent = { state_dir = \"/elsewhere\"; };\n"
		"store = { flush_records = 7; };\n"
		"collector = { max_tracked = 1; };\n");

	(void)state;
	assert_int_equal(config_defaults(&c), 0);
	assert_int_equal(config_defaults(&d), 0);
	assert_int_equal(config_load(&c, path, false, err, sizeof(err)),
			 -EINVAL);
	assert_same_config(&c, &d);
	assert_null(c.source);

	/* a failed reload keeps the previously loaded file's values */
	config_free(&d);
	path = test_write_file(tmpdir, "good.conf", full_conf);
	assert_int_equal(config_load(&c, path, false, err, sizeof(err)), 0);
	assert_int_equal(config_defaults(&d), 0);
	assert_int_equal(config_load(&d, path, false, err, sizeof(err)), 0);
	path = test_write_file(tmpdir, "partial.conf",
			  "log = { level = \"error\"; };\nbogus = 1;\n");
	assert_int_equal(config_load(&c, path, false, err, sizeof(err)),
			 -EINVAL);
	assert_same_config(&c, &d);
	assert_string_equal(c.source, d.source);
	config_free(&c);
	config_free(&d);
}

/* A missing file: defaults when missing_ok, -ENOENT otherwise. */
static void test_missing_file(void **state)
{
	struct jt_config c, d;
	char path[PATH_MAX], want[PATH_MAX + 64];

	(void)state;
	snprintf(path, sizeof(path), "%s/does-not-exist.conf", tmpdir);
	assert_int_equal(config_defaults(&c), 0);
	assert_int_equal(config_defaults(&d), 0);
	assert_int_equal(config_load(&c, path, true, err, sizeof(err)), 0);
	assert_null(c.source);
	assert_same_config(&c, &d);

	assert_int_equal(config_load(&c, path, false, err, sizeof(err)),
			 -ENOENT);
	snprintf(want, sizeof(want), "%s: No such file or directory", path);
	assert_string_equal(err, want);
	assert_null(c.source);
	assert_same_config(&c, &d);

	/* a zeroed struct gets the defaults */
	config_free(&c);
	memset(&c, 0, sizeof(c));
	assert_int_equal(config_load(&c, path, true, err, sizeof(err)), 0);
	assert_same_config(&c, &d);
	config_free(&c);
	config_free(&d);
}

/* A folder is not a readable file; a NULL err buffer is tolerated. */
static void test_unreadable(void **state)
{
	struct jt_config c;
	char want[PATH_MAX + 64];

	(void)state;
	assert_int_equal(config_defaults(&c), 0);
	assert_int_equal(config_load(&c, tmpdir, false, err, sizeof(err)),
			 -EISDIR);
	snprintf(want, sizeof(want), "%s: Is a directory", tmpdir);
	assert_string_equal(err, want);
	assert_int_equal(config_load(&c, tmpdir, true, NULL, 0), -EISDIR);
	assert_int_equal(config_load(&c, test_write_file(tmpdir, "n.conf", "x = ;"),
				     false, NULL, 0), -EINVAL);
	config_free(&c);
}

/* Load whatever config_dump prints and compare with the original. */
static void assert_round_trip(const struct jt_config *c, const char *name)
{
	struct jt_config back;
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	config_dump(c, f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(config_defaults(&back), 0);
	if (config_load(&back, path, false, err, sizeof(err)) != 0)
		fail_msg("dump did not load: %s", err);
	assert_same_config(&back, c);
	config_free(&back);
}

/* config_dump output loads back to the same values. */
static void test_dump_round_trip(void **state)
{
	struct jt_config c;

	(void)state;
	assert_int_equal(config_defaults(&c), 0);
	assert_round_trip(&c, "dump-defaults.conf");
	assert_int_equal(config_load(&c, test_write_file(tmpdir, "full2.conf", full_conf),
				     false, err, sizeof(err)), 0);
	assert_round_trip(&c, "dump-full.conf");
	/* characters that need escaping in a libconfig string */
	assert_int_equal(config_load(&c, test_write_file(tmpdir, "odd.conf",
		"agent = { state_dir = \"/tmp/a \\\"b\\\" \\\\c\\t\"; };\n"
		"collector = { sample_interval = 0.123; };\n"
		"store = { flush_interval = 59.999; retention = 0.1; };\n"),
				     false, err, sizeof(err)), 0);
	assert_string_equal(c.state_dir, "/tmp/a \"b\" \\c\t");
	assert_round_trip(&c, "dump-odd.conf");
	config_free(&c);
}

/* Setting state_dir alone moves the database; an explicit path stays. */
static void test_state_dir_moves_db(void **state)
{
	struct jt_config c;

	(void)state;
	assert_int_equal(config_defaults(&c), 0);
	assert_int_equal(config_load(&c, test_write_file(tmpdir, "state.conf",
		"agent = { state_dir = \"/scratch/jt\"; };\n"),
				     false, err, sizeof(err)), 0);
	assert_string_equal(c.sqlite_path, "/scratch/jt/jobtrace.db");
	config_free(&c);

	assert_int_equal(config_defaults(&c), 0);
	assert_int_equal(config_load(&c, test_write_file(tmpdir, "state2.conf",
		"store = { sqlite_path = \"/db/x.db\"; };\n"
		"agent = { state_dir = \"/scratch/jt\"; };\n"),
				     false, err, sizeof(err)), 0);
	assert_string_equal(c.state_dir, "/scratch/jt");
	assert_string_equal(c.sqlite_path, "/db/x.db");
	config_free(&c);

	assert_int_equal(config_defaults(&c), 0);
	assert_int_equal(config_load(&c, test_write_file(tmpdir, "state3.conf",
		"agent = { state_dir = \"/\"; };\n"),
				     false, err, sizeof(err)), 0);
	assert_string_equal(c.sqlite_path, "/jobtrace.db");
	config_free(&c);
}

/* Hostile input: binary junk and a huge line are errors, not crashes. */
static void test_hostile(void **state)
{
	struct jt_config c;
	static char big[200000];
	const char *path;

	(void)state;
	assert_int_equal(config_defaults(&c), 0);
	path = test_write_file(tmpdir, "junk.conf", "\x01\x02\xff{{{;;==\"\n");
	assert_int_equal(config_load(&c, path, false, err, sizeof(err)),
			 -EINVAL);
	memset(big, 'a', sizeof(big) - 1);
	memcpy(big, "agent = { hostname = \"", 22);
	memcpy(big + sizeof(big) - 6, "\"; };", 5);
	path = test_write_file(tmpdir, "big.conf", big);
	assert_int_equal(config_load(&c, path, false, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "agent.hostname"));
	/* a tiny err buffer is truncated, never overrun */
	err[4] = 'X';
	assert_int_equal(config_load(&c, path, false, err, 4), -EINVAL);
	assert_int_equal(strlen(err), 3);
	assert_int_equal(err[4], 'X');
	assert_string_equal(c.hostname, "");
	config_free(&c);
}

/* Copy src to dst with "#key = " lines uncommented. */
static void uncomment(const char *src, const char *dst)
{
	FILE *in = fopen(src, "r"), *out = fopen(dst, "w");
	char *line = NULL;
	size_t cap = 0;

	assert_non_null(in);
	assert_non_null(out);
	while (getline(&line, &cap, in) > 0) {
		char *p = line + strspn(line, " \t");

		if (p[0] == '#' && p[1] >= 'a' && p[1] <= 'z' &&
		    strstr(p, " = "))
			memmove(p, p + 1, strlen(p));
		fputs(line, out);
	}
	free(line);
	fclose(in);
	assert_int_equal(fclose(out), 0);
}

/* dist/jobtrace.conf.sample loads as is and with every key uncommented. */
static void test_sample_file(void **state)
{
	const char *top = getenv("top_srcdir");
	struct jt_config c, d;
	char sample[PATH_MAX], open_copy[PATH_MAX];

	(void)state;
	if (!top)
		skip();
	snprintf(sample, sizeof(sample), "%s/dist/jobtrace.conf.sample", top);
	snprintf(open_copy, sizeof(open_copy), "%s/sample-open.conf", tmpdir);
	assert_int_equal(config_defaults(&d), 0);

	assert_int_equal(config_defaults(&c), 0);
	if (config_load(&c, sample, false, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	assert_same_config(&c, &d);
	config_free(&c);

	uncomment(sample, open_copy);
	assert_int_equal(config_defaults(&c), 0);
	if (config_load(&c, open_copy, false, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	/* the sample documents the default install paths */
	assert_string_equal(c.state_dir, "/var/lib/jobtrace");
	assert_string_equal(c.run_dir, "/run/jobtrace");
	assert_string_equal(c.rules_dir, "/usr/share/jobtrace/lua-rules");
	assert_string_equal(c.sqlite_path, "/var/lib/jobtrace/jobtrace.db");
	free(c.state_dir);
	free(c.run_dir);
	free(c.rules_dir);
	free(c.sqlite_path);
	c.state_dir = strdup(d.state_dir);
	c.run_dir = strdup(d.run_dir);
	c.rules_dir = strdup(d.rules_dir);
	c.sqlite_path = strdup(d.sqlite_path);
	assert_same_config(&c, &d);
	config_free(&c);
	config_free(&d);
}

/* config_dump of c into a malloc'd string, without its first line (the
 * file it came from). */
static char *dump_text(const struct jt_config *c)
{
	char *buf = NULL, *body;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	assert_non_null(m);
	config_dump(c, m);
	assert_int_equal(fclose(m), 0);
	body = strdup(strchr(buf, '\n') + 1);
	free(buf);
	assert_non_null(body);
	return body;
}

/* Load text (written as name) over the defaults; fails on an error. */
static void load_text(struct jt_config *c, const char *name, const char *text)
{
	assert_int_equal(config_defaults(c), 0);
	if (config_load(c, test_write_file(tmpdir, name, text), false, err,
			sizeof(err)))
		fail_msg("%s: %s", name, err);
}

/* Write key = value of t as a file: in its group, or in a sink of a type
 * that takes it (with the url a sink needs), the key on line 3. */
static void key_file(char *buf, size_t len, const struct config_key_text *t,
		     const char *value)
{
	if (!t->sink_type)
		snprintf(buf, len, "%s = {\n\n\t%s = %s;\n};\n", t->group,
			 t->name, value);
	else if (!strcmp(t->name, "type"))
		snprintf(buf, len, "sinks = (\n { url = \"http://x/\";\n"
			 " type = %s; }\n);\n", value);
	else
		snprintf(buf, len, "sinks = (\n { type = \"%s\"; url = \"http://x/\";\n"
			 " %s = %s; }\n);\n", t->sink_type, t->name, value);
}

/* Every key of the table reads its own default back as the default: the
 * effective settings are those of a file without the key. */
static void test_table_defaults(void **state)
{
	struct config_key_text t;
	char text[PATH_MAX + 256], without[256];
	unsigned n = 0, none = 0;

	(void)state;
	for (size_t i = 0; config_key_text(i, &t) == 0; i++, n++) {
		struct jt_config a, b;
		char *da, *db;

		if (!t.def[0]) {	/* url, the sink's files: no default */
			assert_non_null(t.sink_type);
			none++;
			continue;
		}
		key_file(text, sizeof(text), &t, t.def);
		load_text(&a, "key-default.conf", text);
		if (t.sink_type)
			snprintf(without, sizeof(without), "sinks = (\n { type ="
				 " \"%s\"; url = \"http://x/\"; }\n);\n",
				 t.sink_type);
		else
			snprintf(without, sizeof(without), "%s = { };\n",
				 t.group);
		load_text(&b, "key-without.conf", without);
		da = dump_text(&a);
		db = dump_text(&b);
		if (strcmp(da, db))
			fail_msg("%s.%s = %s; reads as another value:\n%s\nnot\n%s",
				 t.group, t.name, t.def, da, db);
		free(da);
		free(db);
		config_free(&a);
		config_free(&b);
	}
	assert_int_equal(config_key_text(n, &t), -ENOENT);
	/* 85 keys in 13 groups, 15 of a sink; 8 of these have no default */
	assert_int_equal(n, 85);
	assert_int_equal(none, 8);
}

/* A value just below or above a key's range is refused, and the message
 * names the file, the line and the key. */
static void test_table_ranges(void **state)
{
	struct config_key_text t;
	char text[256], want[128];
	unsigned n = 0;

	(void)state;
	for (size_t i = 0; config_key_text(i, &t) == 0; i++) {
		const char *v[] = { t.below, t.above };

		if (!t.below[0])
			continue;
		for (size_t j = 0; j < 2; j++, n++) {
			key_file(text, sizeof(text), &t, v[j]);
			snprintf(want, sizeof(want), "%s.%s: must be", t.group,
				 t.name);
			expect_error("key-range.conf", text, 3, want);
		}
	}
	assert_int_equal(n, 2 * 46);
}

/* What --check-config prints reads back to the same print, and to the
 * same values: a sink's TLS files too (they were not printed). */
static void test_dump_idempotent(void **state)
{
	static const char sinks[] =
		"sinks = (\n"
		" { type = \"clickhouse\"; name = \"fleet\"; url = \"https://ch/\";"
		" database = \"jt\"; credentials_file = \"/etc/ch.cred\";"
		" tls_ca_file = \"/etc/ca.pem\"; tls_cert = \"/etc/c.pem\";"
		" tls_key = \"/etc/k.pem\"; gzip = true; batch_age = 0.25; },\n"
		" { type = \"http\"; url = \"http://127.0.0.1:8686/x\";"
		" credentials_file = \"/etc/h.cred\"; tls_verify = false; }\n"
		");\n";
	const char *texts[] = { "", full_conf, sinks };

	(void)state;
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		struct jt_config a, b;
		char *da, *db;

		load_text(&a, "idem.conf", texts[i]);
		da = dump_text(&a);
		load_text(&b, "idem-dump.conf", da);
		db = dump_text(&b);
		assert_string_equal(da, db);
		assert_same_config(&a, &b);
		if (i == 2) {
			const struct jt_sink_config *ch =
				config_find_sink(&b, JT_SINK_CLICKHOUSE, NULL);
			const struct jt_sink_config *h =
				config_find_sink(&b, JT_SINK_HTTP, NULL);

			assert_non_null(ch);
			assert_non_null(h);
			assert_non_null(ch->tls_ca_file);
			assert_non_null(ch->tls_cert);
			assert_non_null(ch->tls_key);
			assert_non_null(h->credentials_file);
			assert_string_equal(ch->tls_ca_file, "/etc/ca.pem");
			assert_string_equal(ch->tls_cert, "/etc/c.pem");
			assert_string_equal(ch->tls_key, "/etc/k.pem");
			assert_string_equal(ch->credentials_file, "/etc/ch.cred");
			assert_string_equal(h->credentials_file, "/etc/h.cred");
			assert_false(h->tls_verify);
			assert_null(h->tls_ca_file);
		}
		free(da);
		free(db);
		config_free(&a);
		config_free(&b);
	}
}

/* The man page's section of title (from its .SH line to the next),
 * in doc (NULL if it has none). */
static char *man_section(const char *doc, const char *title)
{
	char head[128];
	const char *at, *end;

	snprintf(head, sizeof(head), "\n%s\n", title);
	at = strstr(doc, head);
	if (!at)
		return NULL;
	at++;
	end = strstr(at + 1, "\n.SH ");
	return strndup(at, end ? (size_t)(end - at) + 1 : strlen(at));
}

/* Check one section of the man page against the head lines the table
 * prints for it (each ending in "\n"); returns how many differ. */
static unsigned check_man_section(const char *sect, const char *title,
				  const char *heads)
{
	unsigned bad = 0;

	/* every key of the table is there, once */
	for (const char *h = heads; *h;) {
		const char *eol = strchr(h, '\n');
		char want[512], name[128];
		const char *at;

		snprintf(want, sizeof(want), "\n.TP\n%.*s\n", (int)(eol - h), h);
		snprintf(name, sizeof(name), "\n.TP\n%.*s",
			 (int)(strchr(h + 4, ' ') - h + 1), h);
		at = strstr(sect, want);
		if (!at)
			print_error("%s: want the line\n%s", title, want + 5);
		else if (strstr(at + 1, name))
			print_error("%s: %s is there twice\n", title, name + 5);
		bad += !at || strstr(at + 1, name);
		h = eol + 1;
	}
	/* and every key of the section is one of the table's */
	for (const char *k = strstr(sect, "\n.TP\n.BR "); k;
	     k = strstr(k + 1, "\n.TP\n.BR ")) {
		const char *eol = strchr(k + 5, '\n');
		char line[512];

		snprintf(line, sizeof(line), "%.*s\n",
			 (int)(eol ? eol - k - 5 : 0), k + 5);
		if (!strstr(heads, line)) {
			print_error("%s: not a key of the table: %s", title, line);
			bad++;
		}
	}
	return bad;
}

/* doc/jobtrace.conf.5 names every key of the table, in its group's
 * section, with its type, default and range as the table has them, and
 * no key the table does not have. */
static void test_man_keys(void **state)
{
	const char *top = getenv("top_srcdir");
	char path[PATH_MAX], *doc, *gen = NULL;
	size_t len = 0;
	unsigned stale = 0, keys = 0;
	FILE *m;

	(void)state;
	snprintf(path, sizeof(path), "%s/doc/jobtrace.conf.5", top ? top : ".");
	doc = test_read_file(path, NULL);
	if (!doc)
		fail_msg("cannot read %s (top_srcdir is set by make check)", path);
	m = open_memstream(&gen, &len);
	assert_non_null(m);
	config_print_man(m);
	assert_int_equal(fclose(m), 0);
	/* gen: ".SH TITLE\n" then ".TP\n.BR ...\n" per key */
	for (char *sh = strstr(gen, ".SH "); sh;) {
		char *title_end = strchr(sh, '\n');
		char *next = strstr(title_end, "\n.SH ");
		char *title = strndup(sh, (size_t)(title_end - sh));
		char *heads = NULL, *sect;
		size_t hl = 0;
		FILE *h = open_memstream(&heads, &hl);

		assert_non_null(h);
		for (char *l = title_end + 1; l && *l && (!next || l <= next);) {
			char *eol = strchr(l, '\n');

			if (strncmp(l, ".TP\n", 4) && strncmp(l, ".SH ", 4)) {
				fprintf(h, "%.*s\n", (int)(eol - l), l);
				keys++;
			}
			l = eol ? eol + 1 : NULL;
		}
		assert_int_equal(fclose(h), 0);
		sect = man_section(doc, title);
		if (!sect) {
			print_error("%s: no section \"%s\"\n", path, title);
			stale++;
		} else {
			stale += check_man_section(sect, title, heads);
		}
		free(sect);
		free(heads);
		free(title);
		sh = next ? next + 1 : NULL;
	}
	assert_int_equal(keys, 85);
	free(gen);
	free(doc);
	if (stale)
		fail_msg("%u key line(s) of %s differ from the table of"
			 " agent/lib/config.c (config_print_man prints them)",
			 stale, path);
}

/* dist/jobtrace.conf.sample shows every key of a group of the table,
 * commented out, in its group (test_sample_file: with its default). */
static void test_sample_keys(void **state)
{
	const char *top = getenv("top_srcdir");
	struct config_key_text t;
	char path[PATH_MAX], *sample;
	unsigned missing = 0;

	(void)state;
	if (!top)
		skip();
	snprintf(path, sizeof(path), "%s/dist/jobtrace.conf.sample", top);
	sample = test_read_file(path, NULL);
	for (size_t i = 0; config_key_text(i, &t) == 0; i++) {
		char open[64], key[128];
		const char *g, *end;

		if (t.sink_type)
			continue;
		snprintf(open, sizeof(open), "\n%s = {\n", t.group);
		snprintf(key, sizeof(key), "\t#%s = ", t.name);
		g = strstr(sample, open);
		end = g ? strstr(g, "\n};\n") : NULL;
		if (!g || !end || !memmem(g, (size_t)(end - g), key,
					   strlen(key))) {
			print_error("%s: no \"#%s = \" in %s { }\n", path,
				    t.name, t.group);
			missing++;
		}
	}
	free(sample);
	if (missing)
		fail_msg("%u key(s) of the table are not in the sample", missing);
}

/* Run every config test in one scratch folder. */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_full_file),
		cmocka_unit_test(test_limits_inclusive),
		cmocka_unit_test(test_empty_file),
		cmocka_unit_test(test_syntax_error),
		cmocka_unit_test(test_unknown_key),
		cmocka_unit_test(test_unknown_group),
		cmocka_unit_test(test_cloud_errors),
		cmocka_unit_test(test_cost_errors),
		cmocka_unit_test(test_take_cost),
		cmocka_unit_test(test_wrong_type),
		cmocka_unit_test(test_out_of_range),
		cmocka_unit_test(test_relative_path),
		cmocka_unit_test(test_bad_level),
		cmocka_unit_test(test_ringbuf_pow2),
		cmocka_unit_test(test_bad_hostname),
		cmocka_unit_test(test_run_dir_too_long),
		cmocka_unit_test(test_error_keeps_values),
		cmocka_unit_test(test_missing_file),
		cmocka_unit_test(test_unreadable),
		cmocka_unit_test(test_dump_round_trip),
		cmocka_unit_test(test_state_dir_moves_db),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_sample_file),
		cmocka_unit_test(test_sinks),
		cmocka_unit_test(test_sink_errors),
		cmocka_unit_test(test_table_defaults),
		cmocka_unit_test(test_table_ranges),
		cmocka_unit_test(test_dump_idempotent),
		cmocka_unit_test(test_man_keys),
		cmocka_unit_test(test_rules_source),
		cmocka_unit_test(test_sample_keys),
	};

	return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
