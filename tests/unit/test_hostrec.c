// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_hostrec.c - cmocka tests of agent/daemon/hostrec.c without root:
 * the host record's figures, the node's price kept per cloud identity,
 * whether the cloud's metadata service is asked.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "config.h"
#include "events.h"
#include "hostrec.h"
#include "imds.h"
#include "json_check.h"
#include "json_get.h"
#include "test_files.h"

/* A host record with every counter its own value, and one of a node that
 * records jobs only: the figures are where the schema puts them. */
static void test_host_record(void **state)
{
	struct jt_host host = { .name = "node1",
				.boot_id = "5f0c7e8a-3c1d-4b9e-9f2a-0123456789ab" };
	uint64_t counters[JT_CNT_NR] = { 0 };
	struct sv_count drops[] = { { "sqlite", 7 }, { "http:0", 2 } };
	struct jt_cloud cloud = { .provider = "aws", .instance_type = "m5.large",
				  .region = "eu-west-1" };
	struct cost_price price = { .per_hour = 0.107, .currency = "USD",
				    .source = "cost.node_hour" };
	struct jt_outside outside = { .processes = 12, .cpu_s = 1.5 };
	struct hostrec_src s = {
		.host = &host, .counters = counters, .events_seen = 1000,
		.exits_lost = 3, .records_unspooled = 5, .lost_disk_full = 4,
		.spool_drops = drops, .n_spool_drops = 2, .store_size_cap = 9,
		.cloud = &cloud, .price = &price,
	};
	struct jbuf b;
	const char *r;

	(void)state;
	counters[JT_CNT_RB_DROP_FORK] = 11;
	counters[JT_CNT_RB_DROP_EXEC] = 12;
	counters[JT_CNT_RB_DROP_EXIT] = 13;
	counters[JT_CNT_RB_DROP_OOM] = 14;
	counters[JT_CNT_TRACK_FULL] = 15;
	counters[JT_CNT_EXIT_EARLY] = 16;
	jbuf_init(&b);
	hostrec_write(&b, &s, "stop", 2000000000ull);
	r = jbuf_str(&b);
	assert_true(json_valid(r));
	assert_jstr(r, "type", "host");
	assert_jstr(r, "phase", "stop");
	assert_jstr(r, "host", "node1");
	assert_jstr(r, "boot_id", host.boot_id);
	assert_jstr(r, "agent_version", JT_VERSION);
	assert_jraw(r, "events_seen", "1000");
	assert_jraw(r, "drops.ringbuf_fork", "11");
	assert_jraw(r, "drops.ringbuf_exec", "12");
	assert_jraw(r, "drops.ringbuf_exit", "13");
	assert_jraw(r, "drops.ringbuf_oom", "14");
	assert_jraw(r, "drops.tracked_map_full", "15");
	assert_jraw(r, "drops.exits_before_last_switch", "16");
	assert_jraw(r, "drops.exits_lost", "3");
	/* the disk-full losses apart from the other write errors */
	assert_jraw(r, "drops.spool_write_errors", "1");
	assert_jraw(r, "drops.spool_disk_full", "4");
	assert_jraw(r, "drops.spool", "{\"sqlite\":7,\"http:0\":2}");
	assert_jraw(r, "drops.store_size_cap", "9");
	assert_jstr(r, "cloud.instance_type", "m5.large");
	assert_jraw(r, "price.per_hour", "0.107");
	assert_jraw(r, "outside_jobs", "null");

	s.outside = &outside;
	hostrec_write(&b, &s, "summary", 3000000000ull);
	r = jbuf_str(&b);
	assert_true(json_valid(r));
	assert_jstr(r, "phase", "summary");
	assert_jraw(r, "outside_jobs.processes", "12");
	jbuf_free(&b);
}

/* The node's price is computed once per cloud identity: a change of the
 * configuration shows when the identity changes or it is asked to. */
static void test_price(void **state)
{
	struct jt_config cfg;
	struct hostrec_price hp = { 0 };
	struct jt_cloud cloud = { .provider = "aws", .instance_type = "m5.large" };
	const struct cost_price *p;

	(void)state;
	assert_int_equal(config_defaults(&cfg), 0);
	cfg.cost_node_hour = 2.5;
	p = hostrec_price(&hp, &cfg, &cloud);
	assert_true(p->per_hour == 2.5);
	cfg.cost_node_hour = 3.0;
	assert_true(hostrec_price(&hp, &cfg, &cloud)->per_hour == 2.5);
	snprintf(cloud.lifecycle, sizeof(cloud.lifecycle), "spot");
	assert_true(hostrec_price(&hp, &cfg, &cloud)->per_hour == 3.0);
	cfg.cost_node_hour = 0;
	hp.known = false;	/* a reload */
	p = hostrec_price(&hp, &cfg, &cloud);
	assert_true(p->per_hour < 0);
	assert_true(p->note[0] != '\0');
	config_free(&cfg);
}

/* cloud.imds: "off" asks nothing and says so, "on" asks, "auto" asks
 * when the machine's DMI facts say EC2 and says what it saw when not;
 * cloud.provider "auto" asks Compute Engine's server when DMI says
 * Google, "gcp" always (unless off), "aws" never. */
static void test_cloud_asked(void **state)
{
	char dir[] = "/tmp/jt-test-hostrec.XXXXXX", why[320] = "";
	struct jt_config cfg;
	bool gcp = true;

	(void)state;
	assert_int_equal(config_defaults(&cfg), 0);
	assert_non_null(mkdtemp(dir));
	free(cfg.dmi_dir);
	cfg.dmi_dir = strdup(dir);
	cfg.imds_mode = JT_IMDS_OFF;
	assert_false(hostrec_cloud_asked(&cfg, &gcp, why, sizeof(why)));
	assert_string_equal(why, "off (cloud.imds = \"off\")");
	cfg.imds_mode = JT_IMDS_ON;
	why[0] = '\0';
	assert_true(hostrec_cloud_asked(&cfg, &gcp, why, sizeof(why)));
	cfg.imds_mode = JT_IMDS_AUTO;
	test_write_file(dir, "sys_vendor", "Amazon EC2\n");
	assert_true(hostrec_cloud_asked(&cfg, &gcp, why, sizeof(why)));
	test_write_file(dir, "sys_vendor", "QEMU\n");
	/* a Xen EC2 machine says so by its hypervisor UUID, whatever DMI */
	if (access(IMDS_HYPERVISOR_UUID, F_OK) == 0) {
		print_message("%s exists: the \"auto\" refusal not checked\n",
			      IMDS_HYPERVISOR_UUID);
	} else {
		assert_false(hostrec_cloud_asked(&cfg, &gcp, why, sizeof(why)));
		assert_non_null(strstr(why, "not asked: not EC2 by this"
				       " machine's own facts (DMI sys_vendor"
				       " \"QEMU\""));
		assert_non_null(strstr(why, "cloud.imds = \"on\" asks all the same"));
	}
	assert_false(gcp);
	/* Compute Engine by DMI: asked, as gcp, in auto; not for aws */
	test_write_file(dir, "product_name", "Google Compute Engine\n");
	test_write_file(dir, "sys_vendor", "Google\n");
	assert_true(hostrec_cloud_asked(&cfg, &gcp, why, sizeof(why)));
	assert_true(gcp);
	cfg.cloud_provider = JT_CLOUD_AWS;
	if (access(IMDS_HYPERVISOR_UUID, F_OK) != 0)
		assert_false(hostrec_cloud_asked(&cfg, &gcp, why, sizeof(why)));
	assert_false(gcp);
	/* gcp: asked without any fact, as gcp; never when off */
	test_write_file(dir, "product_name", "Standard PC\n");
	test_write_file(dir, "sys_vendor", "QEMU\n");
	cfg.cloud_provider = JT_CLOUD_GCP;
	assert_true(hostrec_cloud_asked(&cfg, &gcp, why, sizeof(why)));
	assert_true(gcp);
	cfg.imds_mode = JT_IMDS_OFF;
	assert_false(hostrec_cloud_asked(&cfg, &gcp, why, sizeof(why)));
	test_remove_tree(dir);
	config_free(&cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_host_record),
		cmocka_unit_test(test_price),
		cmocka_unit_test(test_cloud_asked),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
