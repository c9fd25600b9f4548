/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * config.h - jobtrace.conf (libconfig syntax).  Every key has a default;
 * the agent runs with no file at all.  Unknown keys, wrong types and bad
 * values are errors reported as "FILE:LINE: what is wrong".
 */
#ifndef JOBTRACE_CONFIG_H
#define JOBTRACE_CONFIG_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "log.h"

#ifndef JT_SYSCONFDIR
#define JT_SYSCONFDIR "/etc"
#endif
#ifndef JT_LOCALSTATEDIR
#define JT_LOCALSTATEDIR "/var"
#endif
#ifndef JT_RUNSTATEDIR
#define JT_RUNSTATEDIR "/run"
#endif
#ifndef JT_PKGDATADIR
#define JT_PKGDATADIR "/usr/share/jobtrace"
#endif

#define JT_DEFAULT_CONFIG JT_SYSCONFDIR "/jobtrace/jobtrace.conf"

enum jt_imds_mode { JT_IMDS_AUTO, JT_IMDS_OFF, JT_IMDS_ON };
/* cloud.provider: whose metadata service is asked */
enum jt_cloud_provider { JT_CLOUD_AUTO, JT_CLOUD_AWS, JT_CLOUD_GCP };
#define CONFIG_IMDS_URL "http://169.254.169.254"	/* cloud.imds_url */
#define CONFIG_DMI_DIR "/sys/class/dmi/id"	/* cloud.dmi_dir */
/* collector.record: which processes get a record of their own */
enum jt_record_mode { JT_RECORD_ALL, JT_RECORD_JOBS };
/* cost.attribution: a job's share of the node (doc/cost.md) */
enum jt_cost_attribution { JT_ATTR_ALLOCATION, JT_ATTR_USAGE };

#define JT_CURRENCY_MAX 8		/* "USD" and its NUL, with room */

struct jt_config {
	char *source;			/* file read, or NULL for defaults */

	/* log { } */
	enum log_level log_level;	/* level = "info" */
	bool log_syslog;		/* syslog = false */

	/* agent { } */
	char *state_dir;		/* state_dir = LOCALSTATEDIR/lib/jobtrace */
	char *run_dir;			/* run_dir = RUNSTATEDIR/jobtrace */
	char *rules_dir;		/* rules_dir = PKGDATADIR/lua-rules */
	char *hostname;			/* hostname = "" (gethostname) */
	char *control_group;		/* control_group = "" (root only) */
	char *reader_group;		/* reader_group = "" (none) */
	unsigned max_conn_per_user;	/* max_connections_per_user = 8 */
	unsigned max_connections;	/* max_connections = 64 (unprivileged) */

	/* rules { } */
	unsigned rules_deadline_ms;	/* deadline_ms = 5, per exec */
	char *rules_source;		/* source = "" (rules_dir), a folder, a
					 * bundle's URL or "clickhouse" */
	unsigned rules_poll_ms;		/* poll_interval = 30 (s) */
	char *rules_public_key;		/* public_key = "" (none) */
	bool rules_inotify;		/* inotify = false */

	/* collector { } */
	unsigned sample_interval_ms;	/* sample_interval = 10.0 (s) */
	unsigned first_sample_ms;	/* first_sample = 1.0 (s), 0: off */
	enum jt_record_mode record_mode;	/* record = "all" ("jobs": only
						 * job processes, the others
						 * counted in host records) */
	unsigned ringbuf_kib;		/* ringbuf_size_kib = 8192 */
	unsigned max_tracked;		/* max_tracked = 131072 */
	unsigned argv_max_bytes;	/* argv_max_bytes = 2048 */
	bool delay_accounting;		/* delay_accounting = true */
	bool snakemake_log;		/* snakemake_log = true (smklogq.h) */

	/* store { } : the embedded SQLite store, itself a sink of the spool */
	bool store_enabled;		/* enabled = true */
	char *sqlite_path;		/* sqlite_path = STATE_DIR/jobtrace.db */
	unsigned flush_interval_ms;	/* flush_interval = 1.0 (s) */
	unsigned flush_records;		/* flush_records = 1000 */
	double store_retention_days;	/* retention = 30; 0: for ever */
	unsigned store_max_mib;		/* max_size_mib = 1024; 0: no cap */

	/* spool { } */
	char *spool_dir;		/* dir = STATE_DIR/spool */
	unsigned spool_max_mib;		/* max_size_mib = 1024 */
	unsigned spool_segment_kib;	/* segment_size_kib = 16384 */
	unsigned spool_sync_ms;		/* sync_interval = 0.2 (s) */

	/* cloud { } : the instance metadata service (EC2 IMDSv2) */
	enum jt_imds_mode imds_mode;	/* imds = "auto" (asked when this
					 * machine's DMI says EC2; "on":
					 * always, "off": never) */
	char *imds_url;			/* imds_url = "http://169.254.169.254" */
	enum jt_cloud_provider cloud_provider;	/* provider = "auto" (by
					 * the machine's DMI: aws or gcp) */
	char *dmi_dir;			/* dmi_dir = "/sys/class/dmi/id" */
	unsigned spot_poll_ms;		/* spot_poll_interval = 5.0 (s) */
	/* docker { } : containers' AWS Batch jobs, from Docker's API */
	bool docker_enabled;		/* enabled = true */
	char *docker_socket;		/* socket = "/var/run/docker.sock" */
	unsigned docker_timeout_ms;	/* timeout = 2.0 (s), per look-up */
	/* end_grace = 10.0 (s): a container Docker cannot say of has ended
	 * when its cgroup stays empty this long */
	unsigned docker_end_grace_ms;

	/* cost { } : prices (doc/cost.md); 0 is unset for every price */
	char *cost_currency;		/* currency = "USD" */
	double cost_node_hour;		/* node_hour = 0.0, per hour */
	double cost_core_hour;		/* core_hour = 0.0 */
	double cost_gib_hour;		/* gib_hour = 0.0 */
	double cost_gpu_hour;		/* gpu_hour = 0.0 */
	char *cost_prices_file;		/* prices_file = "" (none) */
	enum jt_cost_attribution cost_attribution; /* = "allocation" */
	unsigned cost_node_cpus;	/* node_cpus = 0 (online CPUs) */
	double cost_node_mem_gib;	/* node_mem_gib = 0.0 (MemTotal) */
	unsigned cost_node_gpus;	/* node_gpus = 0 */
	/* waste { } : a job's flags below these fractions */
	double waste_cpu_below;		/* cpu_efficiency_below = 0.65 */
	double waste_mem_below;		/* memory_used_below = 0.70 */
	double waste_time_below;	/* time_used_below = 0.60 */
	double waste_time_min_s;	/* time_min_elapsed = 300 (s) */
	/* idle { } : the node_idle signal */
	double idle_after_min;		/* after = 30.0 (minutes) */
	double idle_cpu_below;		/* cpu_below = 0.05 (of the node) */
	/* signals { } : stall, io_bound, slower_than_usual, memory_near_limit */
	unsigned signals_stall_after_ms;	/* stall_after = 120 (s) */
	unsigned signals_io_window_ms;	/* io_window = 60 (s) */
	double signals_io_above;	/* io_above = 0.5 (of wall time) */
	double signals_slower_factor;	/* slower_factor = 2.0 */
	unsigned signals_slower_min_runs;	/* slower_min_runs = 3 */
	double signals_memory_near;	/* memory_near = 0.9 (of the limit) */
	double signals_cpu_starved_above;	/* cpu_starved_above = 0.3 */
	double signals_memory_pressure_above;	/* memory_pressure_above = 0.1 */
	double signals_net_wait_above;		/* net_wait_above = 0.5 */
	/* files { } : what each process opened (issue 27) */
	bool files_enabled;		/* enabled = false (at start only) */
	unsigned files_max_per_process;	/* max_per_process = 64 */
	bool files_follow_opens;	/* follow_opens = false (at start) */

	/* sinks = ( { type = "clickhouse" | "http"; ... }, ... ) */
	struct jt_sink_config *sinks;
	size_t n_sinks;
};

enum jt_sink_type { JT_SINK_SQLITE, JT_SINK_CLICKHOUSE, JT_SINK_HTTP };

/* One network sink (the SQLite store is configured by store { }). */
struct jt_sink_config {
	enum jt_sink_type type;
	char *name;			/* name = type, unique */
	char *url;			/* url (required), http:// or https:// */
	char *database;			/* clickhouse: database = "jobtrace" */
	char *credentials_file;		/* "" (none); root-only: creds.h */
	char **headers;			/* http: headers = [ "Name: value" ] */
	size_t n_headers;
	unsigned batch_records;		/* batch_records = 5000 */
	unsigned batch_age_ms;		/* batch_age = 1.0 (s) */
	unsigned timeout_ms;		/* timeout = 10.0 (s) */
	unsigned retry_max_ms;		/* retry_max = 60.0 (s) */
	bool gzip;			/* gzip = false */
	bool tls_verify;		/* tls_verify = true */
	char *tls_ca_file;		/* tls_ca_file = "" (system CAs) */
	char *tls_cert;			/* tls_cert = "" (client certificate) */
	char *tls_key;			/* tls_key = "" */
	int line;			/* where it was configured */
};

/* Fill *c with every default (allocates strings). Returns 0 or -ENOMEM. */
int config_defaults(struct jt_config *c);
/*
 * Read path into *c over its defaults.  A missing file is an error unless
 * missing_ok.  On a bad file returns -EINVAL and writes "FILE:LINE: what"
 * into err; *c keeps its defaults then.
 */
int config_load(struct jt_config *c, const char *path, bool missing_ok,
		char *err, size_t errlen);
/* Release the strings of *c; accepts a zeroed struct. */
void config_free(struct jt_config *c);
/* Path of the control socket derived from run_dir (static buffer). */
const char *config_socket_path(const struct jt_config *c);
/* The first sink of the given type (or named name when not NULL). */
const struct jt_sink_config *config_find_sink(const struct jt_config *c,
					      enum jt_sink_type type,
					      const char *name);
/* Move the cost { }, waste { }, idle { } and signals { } groups of src into dst (a
 * reload: they take effect live); src's strings become NULL. */
void config_take_cost(struct jt_config *dst, struct jt_config *src);
/*
 * Log a warning for each sink whose url (a password, a query string) or
 * headers may hold a secret while the file c came from is readable by
 * group or others: they belong in the sink's credentials_file.
 */
void config_warn_secrets(const struct jt_config *c);
/* Print every effective key = value, in libconfig syntax. */
void config_dump(const struct jt_config *c, FILE *out);
/*
 * Print the key list of jobtrace.conf(5) as the table of config.c says it:
 * ".SH GROUP" of each group, then ".TP" and one ".BR" line per key (name,
 * type, default, range); test_config checks that doc/jobtrace.conf.5 has it.
 */
void config_print_man(FILE *out);

/* One key of the table, as text for tests and tools (libconfig syntax). */
struct config_key_text {
	const char *group;		/* "collector", or "sinks" */
	const char *name;		/* "max_tracked" */
	const char *sink_type;		/* a sink's key: a type that takes it */
	char def[PATH_MAX + 8];		/* its default; "" when it has none */
	char below[40], above[40];	/* just out of its range; "" if none */
};
/* Fill *t for the i-th key (the groups' in order, then a sink's).
 * Returns 0, -ENOENT past the last key, or -ENOMEM. */
int config_key_text(size_t i, struct config_key_text *t);

#endif
