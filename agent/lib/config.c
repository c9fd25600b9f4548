// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * config.c - jobtrace.conf (libconfig syntax).
 *
 * Every key is one row of one table (groups[] below, sink_keys[] for the
 * sinks list): its group, name, kind, bounds, default, field and the
 * comment its dump carries.  The parser, the defaults, the copy, free and
 * reload, config_dump (what --check-config prints) and the key list of
 * jobtrace.conf(5) (config_print_man, checked by test_config) all walk it.
 *
 * The file is parsed into a copy of the caller's struct and swapped in only
 * when every key is valid, so a bad file (or a bad reload) never leaves a
 * half-applied configuration behind.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <libconfig.h>

#include "config.h"
#include "netaddr.h"
#include "util.h"

#define SOCKET_NAME "jobtraced.sock"
#define SQLITE_NAME "jobtrace.db"
#define SPOOL_NAME "spool"
#define SINK_NAME_MAX 32
#define HOSTNAME_MAX 253

/* What one key accepts; the kind decides its C type (field_size()). */
enum key_kind {
	K_INT,		/* unsigned, lo..hi */
	K_POW2,		/* unsigned, lo..hi, a power of two */
	K_SECONDS,	/* unsigned milliseconds, written as lo..hi seconds */
	K_DAYS,		/* double, 0 or lo..hi */
	K_FLOAT,	/* double, lo..hi (unit: what it counts) */
	K_BOOL,		/* bool */
	K_LEVEL,	/* enum log_level */
	K_WORD,		/* an enum: the index of one of words */
	K_PATH,		/* char *, absolute */
	K_OPTPATH,	/* char *, absolute or empty */
	K_HOST,		/* char *, no spaces or control characters */
	K_IMDS_URL,	/* char *, http://ADDRESS[:PORT] (netaddr.h) */
	K_CURRENCY,	/* char *, 1 to 7 letters */
	K_SINK_TYPE,	/* enum jt_sink_type: "clickhouse" or "http" */
	K_SINK_NAME,	/* char *, [A-Za-z0-9_-], 1 to SINK_NAME_MAX */
	K_SINK_URL,	/* char *, http:// or https:// */
	K_SINK_DB,	/* char *, [A-Za-z0-9_], 1 to 64 */
	K_HEADERS,	/* char **headers, n_headers: "Name: value" */
	K_RULES_SOURCE,	/* char *, "", a path, a URL or "clickhouse" */
};

/* What a kind stores, and its type in jobtrace.conf(5) (NULL: its words). */
static const struct kind_def {
	size_t size;
	const char *man;
} kinds[] = {
	[K_INT] = { sizeof(unsigned), "integer" },
	[K_POW2] = { sizeof(unsigned), "integer" },
	[K_SECONDS] = { sizeof(unsigned), "seconds" },
	[K_DAYS] = { sizeof(double), "days" },
	[K_FLOAT] = { sizeof(double), "number" },
	[K_BOOL] = { sizeof(bool), "boolean" },
	[K_LEVEL] = { sizeof(int), NULL },
	[K_WORD] = { sizeof(int), NULL },
	[K_PATH] = { sizeof(char *), "path" },
	[K_OPTPATH] = { sizeof(char *), "path" },
	[K_HOST] = { sizeof(char *), "string" },
	[K_IMDS_URL] = { sizeof(char *), "string" },
	[K_CURRENCY] = { sizeof(char *), "string" },
	[K_SINK_TYPE] = { sizeof(int), NULL },
	[K_SINK_NAME] = { sizeof(char *), "string" },
	[K_SINK_URL] = { sizeof(char *), "string" },
	[K_SINK_DB] = { sizeof(char *), "string" },
	[K_HEADERS] = { sizeof(char **),
			"array of \\(dqName: value\\(dq strings" },
	[K_RULES_SOURCE] = { sizeof(char *), "string" },
};

/* One key: how it is read, checked, defaulted, printed and documented. */
struct key_def {
	const char *name;
	enum key_kind kind;
	double lo, hi;		/* bounds of a number, as written */
	size_t off;		/* of the field in struct jt_config, or in
				 * struct jt_sink_config for a sink's key */
	double num;		/* default of a number (seconds for K_SECONDS),
				 * a boolean or a word (its index) */
	const char *str;	/* default of a string; NULL: none or derived */
	const char *const *words;	/* K_WORD: NULL-terminated */
	const char *unit;	/* K_FLOAT: "seconds", "minutes" */
	const char *zero;	/* dump's comment when the value is 0 or "" */
	const char *doc_default;	/* jobtrace.conf(5)'s default when it is
					 * not a constant, in roff ("required") */
	unsigned types;		/* a sink's key: bit per enum jt_sink_type */
};

/* One group of keys: its name and the section of jobtrace.conf(5). */
struct group_def {
	const char *name;
	const struct key_def *keys;
	const char *man;
};

/* offsetof a field, refused at build time unless it has type t */
#define TYPED(s, f, t) (offsetof(s, f) + 0 * sizeof(char[1 - 2 * \
	!__builtin_types_compatible_p(__typeof__(((s *)0)->f), t)]))
/* offsetof an enum field, refused at build time unless it is an int's size */
#define ENUMOFF(s, f) (offsetof(s, f) + 0 * sizeof(char[1 - 2 * \
	(sizeof(((s *)0)->f) != sizeof(int))]))
#define F(field) offsetof(struct jt_config, field)
#define U(f) TYPED(struct jt_config, f, unsigned)
#define D(f) TYPED(struct jt_config, f, double)
#define B(f) TYPED(struct jt_config, f, bool)
#define S(f) TYPED(struct jt_config, f, char *)
#define E(f) ENUMOFF(struct jt_config, f)

static const char *const record_modes[] = {
	[JT_RECORD_ALL] = "all", [JT_RECORD_JOBS] = "jobs", NULL
};

static const char *const imds_modes[] = {
	[JT_IMDS_AUTO] = "auto", [JT_IMDS_OFF] = "off", [JT_IMDS_ON] = "on",
	NULL
};

static const char *const cloud_providers[] = {
	[JT_CLOUD_AUTO] = "auto", [JT_CLOUD_AWS] = "aws",
	[JT_CLOUD_GCP] = "gcp", NULL
};

static const char *const attributions[] = {
	[JT_ATTR_ALLOCATION] = "allocation", [JT_ATTR_USAGE] = "usage", NULL
};

static const char *const log_levels[] = {
	[LOG_LVL_ERROR] = "error", [LOG_LVL_WARN] = "warn",
	[LOG_LVL_INFO] = "info", [LOG_LVL_DEBUG] = "debug", NULL
};

static const char *const sink_type_names[] = {
	[JT_SINK_SQLITE] = "sqlite",
	[JT_SINK_CLICKHOUSE] = "clickhouse",
	[JT_SINK_HTTP] = "http",
	NULL
};

static const struct key_def log_keys[] = {
	{ "level", K_LEVEL, .off = E(log_level), .num = LOG_LVL_INFO,
	  .words = log_levels },
	{ "syslog", K_BOOL, .off = B(log_syslog), .num = false },
	{ .name = NULL },
};

static const struct key_def agent_keys[] = {
	{ "state_dir", K_PATH, .off = S(state_dir),
	  .str = JT_LOCALSTATEDIR "/lib/jobtrace" },
	{ "run_dir", K_PATH, .off = S(run_dir), .str = JT_RUNSTATEDIR "/jobtrace" },
	{ "rules_dir", K_PATH, .off = S(rules_dir),
	  .str = JT_PKGDATADIR "/lua-rules" },
	{ "hostname", K_HOST, .off = S(hostname), .str = "",
	  .zero = "empty: gethostname()" },
	{ "control_group", K_HOST, .off = S(control_group), .str = "",
	  .zero = "empty: root only" },
	{ "reader_group", K_HOST, .off = S(reader_group), .str = "",
	  .zero = "empty: none" },
	{ "max_connections_per_user", K_INT, 1, 4096, U(max_conn_per_user),
	  .num = 8 },
	{ "max_connections", K_INT, 1, 4096, U(max_connections), .num = 64 },
	{ .name = NULL },
};

static const struct key_def rules_keys[] = {
	{ "deadline_ms", K_INT, 1, 1000, U(rules_deadline_ms), .num = 5 },
	{ "source", K_RULES_SOURCE, .off = S(rules_source), .str = "",
	  .zero = "empty: the rules_dir folder" },
	{ "poll_interval", K_SECONDS, 1, 86400, U(rules_poll_ms), .num = 30 },
	{ "public_key", K_OPTPATH, .off = S(rules_public_key), .str = "",
	  .zero = "empty: bundles need no signature" },
	{ "inotify", K_BOOL, .off = B(rules_inotify), .num = false },
	{ .name = NULL },
};

static const struct key_def collector_keys[] = {
	{ "sample_interval", K_SECONDS, 0.1, 3600, U(sample_interval_ms),
	  .num = 10 },
	{ "first_sample", K_SECONDS, 0, 3600, U(first_sample_ms), .num = 1,
	  .zero = "0: off" },
	{ "record", K_WORD, .off = E(record_mode), .num = JT_RECORD_ALL,
	  .words = record_modes },
	{ "ringbuf_size_kib", K_POW2, 256, 1048576, U(ringbuf_kib),
	  .num = 8192 },
	{ "max_tracked", K_INT, 1024, 4194304, U(max_tracked), .num = 131072 },
	{ "argv_max_bytes", K_INT, 64, 2048, U(argv_max_bytes), .num = 2048 },
	{ "delay_accounting", K_BOOL, .off = B(delay_accounting), .num = true },
	{ "snakemake_log", K_BOOL, .off = B(snakemake_log), .num = true },
	{ .name = NULL },
};

static const struct key_def store_keys[] = {
	{ "enabled", K_BOOL, .off = B(store_enabled), .num = true },
	{ "sqlite_path", K_PATH, .off = S(sqlite_path),
	  .doc_default = "default \\fISTATE_DIR\\fP/" SQLITE_NAME },
	{ "flush_interval", K_SECONDS, 0.05, 60, U(flush_interval_ms),
	  .num = 1 },
	{ "flush_records", K_INT, 1, 100000, U(flush_records), .num = 1000 },
	{ "retention", K_DAYS, 0.001, 36500, D(store_retention_days),
	  .num = 30, .zero = "0: for ever" },
	{ "max_size_mib", K_INT, 0, 1048576, U(store_max_mib), .num = 1024,
	  .zero = "0: no cap" },
	{ .name = NULL },
};

static const struct key_def spool_keys[] = {
	{ "dir", K_PATH, .off = S(spool_dir),
	  .doc_default = "default \\fISTATE_DIR\\fP/" SPOOL_NAME },
	{ "max_size_mib", K_INT, 1, 1048576, U(spool_max_mib), .num = 1024 },
	{ "segment_size_kib", K_INT, 64, 1048576, U(spool_segment_kib),
	  .num = 16384 },
	{ "sync_interval", K_SECONDS, 0.01, 10, U(spool_sync_ms), .num = 0.2 },
	{ .name = NULL },
};

static const struct key_def cloud_keys[] = {
	{ "imds", K_WORD, .off = E(imds_mode), .num = JT_IMDS_AUTO,
	  .words = imds_modes },
	{ "imds_url", K_IMDS_URL, .off = S(imds_url), .str = CONFIG_IMDS_URL },
	{ "provider", K_WORD, .off = E(cloud_provider), .num = JT_CLOUD_AUTO,
	  .words = cloud_providers },
	{ "dmi_dir", K_PATH, .off = S(dmi_dir), .str = CONFIG_DMI_DIR },
	{ "spot_poll_interval", K_SECONDS, 1, 3600, U(spot_poll_ms), .num = 5 },
	{ .name = NULL },
};

static const struct key_def docker_keys[] = {
	{ "enabled", K_BOOL, .off = B(docker_enabled), .num = true },
	{ "socket", K_PATH, .off = S(docker_socket),
	  .str = "/var/run/docker.sock" },
	{ "timeout", K_SECONDS, 0.1, 60, U(docker_timeout_ms), .num = 2 },
	{ "end_grace", K_SECONDS, 0.5, 3600, U(docker_end_grace_ms),
	  .num = 10 },
	{ .name = NULL },
};

/* Prices: up to a million a node-hour; 0 is unset (doc/cost.md). */
static const struct key_def cost_keys[] = {
	{ "currency", K_CURRENCY, .off = S(cost_currency), .str = "USD" },
	{ "node_hour", K_FLOAT, 0, 1e6, D(cost_node_hour), .zero = "0: unset" },
	{ "core_hour", K_FLOAT, 0, 1e6, D(cost_core_hour), .zero = "0: unset" },
	{ "gib_hour", K_FLOAT, 0, 1e6, D(cost_gib_hour), .zero = "0: unset" },
	{ "gpu_hour", K_FLOAT, 0, 1e6, D(cost_gpu_hour), .zero = "0: unset" },
	{ "prices_file", K_OPTPATH, .off = S(cost_prices_file), .str = "",
	  .zero = "empty: none" },
	{ "attribution", K_WORD, .off = E(cost_attribution),
	  .num = JT_ATTR_ALLOCATION, .words = attributions },
	{ "node_cpus", K_INT, 0, 1048576, U(cost_node_cpus),
	  .zero = "0: the online CPUs" },
	{ "node_mem_gib", K_FLOAT, 0, 1048576, D(cost_node_mem_gib),
	  .zero = "0: MemTotal" },
	{ "node_gpus", K_INT, 0, 4096, U(cost_node_gpus), .num = 0 },
	{ .name = NULL },
};

static const struct key_def waste_keys[] = {
	{ "cpu_efficiency_below", K_FLOAT, 0, 1, D(waste_cpu_below),
	  .num = 0.65 },
	{ "memory_used_below", K_FLOAT, 0, 1, D(waste_mem_below), .num = 0.70 },
	{ "time_used_below", K_FLOAT, 0, 1, D(waste_time_below), .num = 0.60 },
	{ "time_min_elapsed", K_FLOAT, 0, 31622400, D(waste_time_min_s),
	  .num = 300, .unit = "seconds" },
	{ .name = NULL },
};

static const struct key_def idle_keys[] = {
	{ "after", K_FLOAT, 0.01, 527040, D(idle_after_min), .num = 30,
	  .unit = "minutes" },
	{ "cpu_below", K_FLOAT, 0, 1, D(idle_cpu_below), .num = 0.05 },
	{ .name = NULL },
};

static const struct key_def signals_keys[] = {
	{ "stall_after", K_SECONDS, 1, 604800, U(signals_stall_after_ms),
	  .num = 120 },
	{ "io_window", K_SECONDS, 1, 86400, U(signals_io_window_ms), .num = 60 },
	{ "io_above", K_FLOAT, 0.01, 1, D(signals_io_above), .num = 0.5 },
	{ "slower_factor", K_FLOAT, 1, 1000, D(signals_slower_factor),
	  .num = 2 },
	{ "slower_min_runs", K_INT, 1, 1000, U(signals_slower_min_runs),
	  .num = 3 },
	{ "memory_near", K_FLOAT, 0.01, 1, D(signals_memory_near), .num = 0.9 },
	{ "cpu_starved_above", K_FLOAT, 0.01, 1, D(signals_cpu_starved_above),
	  .num = 0.3 },
	{ "memory_pressure_above", K_FLOAT, 0.01, 1,
	  D(signals_memory_pressure_above), .num = 0.1 },
	{ "net_wait_above", K_FLOAT, 0.01, 1, D(signals_net_wait_above),
	  .num = 0.5 },
	{ .name = NULL },
};

static const struct key_def files_keys[] = {
	{ "enabled", K_BOOL, .off = B(files_enabled), .num = true },
	{ "max_per_process", K_INT, 1, 4096, U(files_max_per_process),
	  .num = 64 },
	{ "follow_opens", K_BOOL, .off = B(files_follow_opens), .num = false },
	{ .name = NULL },
};

#define SU(f) TYPED(struct jt_sink_config, f, unsigned)
#define SB(f) TYPED(struct jt_sink_config, f, bool)
#define SS(f) TYPED(struct jt_sink_config, f, char *)
#define T_CH (1u << JT_SINK_CLICKHOUSE)
#define T_HTTP (1u << JT_SINK_HTTP)
#define T_NET (T_CH | T_HTTP)

/* Keys of one sink group; name, url and database are set after the
 * group is read (sink_finish()); a file left out stays NULL. */
static const struct key_def sink_keys[] = {
	{ "type", K_SINK_TYPE, .off = ENUMOFF(struct jt_sink_config, type),
	  .num = JT_SINK_HTTP, .words = sink_type_names, .types = T_NET,
	  .doc_default = "required" },
	{ "name", K_SINK_NAME, .off = SS(name), .types = T_NET,
	  .doc_default = "default: the type" },
	{ "url", K_SINK_URL, .off = SS(url), .types = T_NET,
	  .doc_default = "required" },
	{ "database", K_SINK_DB, .off = SS(database), .types = T_CH,
	  .doc_default = "default \\(dqjobtrace\\(dq" },
	{ "credentials_file", K_OPTPATH, .off = SS(credentials_file),
	  .types = T_NET },
	{ "headers", K_HEADERS, .off = TYPED(struct jt_sink_config, headers,
					    char **), .types = T_HTTP,
	  .doc_default = "none by default" },
	{ "batch_records", K_INT, 1, 1000000, SU(batch_records), .num = 5000,
	  .types = T_NET },
	{ "batch_age", K_SECONDS, 0.01, 3600, SU(batch_age_ms), .num = 1,
	  .types = T_NET },
	{ "timeout", K_SECONDS, 0.1, 600, SU(timeout_ms), .num = 10,
	  .types = T_NET },
	{ "retry_max", K_SECONDS, 0.1, 3600, SU(retry_max_ms), .num = 60,
	  .types = T_NET },
	{ "gzip", K_BOOL, .off = SB(gzip), .num = false, .types = T_NET },
	{ "tls_verify", K_BOOL, .off = SB(tls_verify), .num = true,
	  .types = T_NET },
	{ "tls_ca_file", K_OPTPATH, .off = SS(tls_ca_file), .types = T_NET },
	{ "tls_cert", K_OPTPATH, .off = SS(tls_cert), .types = T_NET },
	{ "tls_key", K_OPTPATH, .off = SS(tls_key), .types = T_NET },
	{ .name = NULL },
};

static const struct group_def groups[] = {
	{ "log", log_keys, "LOG GROUP" },
	{ "agent", agent_keys, "AGENT GROUP" },
	{ "rules", rules_keys, "RULES GROUP" },
	{ "collector", collector_keys, "COLLECTOR GROUP" },
	{ "store", store_keys, "STORE GROUP" },
	{ "spool", spool_keys, "SPOOL GROUP" },
	{ "cloud", cloud_keys, "CLOUD GROUP" },
	{ "docker", docker_keys, "DOCKER GROUP" },
	{ "cost", cost_keys, "COST GROUP" },
	{ "waste", waste_keys, "WASTE GROUP" },
	{ "idle", idle_keys, "IDLE GROUP" },
	{ "signals", signals_keys, "SIGNALS GROUP" },
	{ "files", files_keys, "FILES GROUP" },
	{ "sinks", sink_keys, "SINKS LIST" },	/* a list of sink groups */
	{ .name = NULL },
};
#define SINKS_GROUP (&groups[sizeof(groups) / sizeof(groups[0]) - 2])
/* Parsing state shared by the helpers below. */
struct parse_ctx {
	const char *path;
	char *err;
	size_t errlen;
	bool sqlite_set;
	bool spool_set;
};

/* Join dir and name with exactly one slash; NULL on ENOMEM. */
static char *join_path(const char *dir, const char *name)
{
	size_t n = strlen(dir);
	char *out;

	if (asprintf(&out, "%s%s%s", dir, (n && dir[n - 1] == '/') ? "" : "/",
		     name) < 0)
		return NULL;
	return out;
}

/* Report "FILE:LINE: group.key: what" for setting s; returns -EINVAL. */
__attribute__((format(printf, 3, 4)))
static int bad(struct parse_ctx *p, const config_setting_t *s,
	       const char *fmt, ...)
{
	const char *file = config_setting_source_file(s);
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	util_seterr(p->err, p->errlen, "%s:%u: %s", file ? file : p->path,
	       config_setting_source_line(s), msg);
	return -EINVAL;
}

/* Human name of a libconfig value type, with its article. */
static const char *type_name(int type)
{
	switch (type) {
	case CONFIG_TYPE_GROUP:
		return "a group";
	case CONFIG_TYPE_INT:
	case CONFIG_TYPE_INT64:
		return "an integer";
	case CONFIG_TYPE_FLOAT:
		return "a float";
	case CONFIG_TYPE_STRING:
		return "a string";
	case CONFIG_TYPE_BOOL:
		return "a boolean";
	case CONFIG_TYPE_ARRAY:
		return "an array";
	case CONFIG_TYPE_LIST:
		return "a list";
	default:
		return "nothing";
	}
}

/* Write the names of a key table that a sink of types takes (every key
 * of a group: ~0u), comma separated, into buf. */
static void key_list(const struct key_def *keys, unsigned types, char *buf,
		     size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (; keys->name && used < len; keys++)
		if (!keys->types || (keys->types & types))
			used += snprintf(buf + used, len - used, "%s%s",
					 used ? ", " : "", keys->name);
}

/* Write the names of the groups, comma separated, into buf. */
static void group_list(char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (const struct group_def *g = groups; g->name && used < len; g++)
		used += snprintf(buf + used, len - used, "%s%s",
				 used ? ", " : "", g->name);
}

/* Replace the string at *slot with a copy of val (trailing '/' dropped). */
static int set_string(char **slot, const char *val, bool is_path)
{
	char *copy = strdup(val);
	size_t n;

	if (!copy)
		return -ENOMEM;
	n = strlen(copy);
	while (is_path && n > 1 && copy[n - 1] == '/')
		copy[--n] = '\0';
	free(*slot);
	*slot = copy;
	return 0;
}

/*
 * libconfig 1.5 silently wraps a decimal literal beyond 32 bits that lacks
 * the L suffix (4294968320 reads as 1024).  Find the literal on the
 * setting's source line and return it in *v when it differs from what
 * libconfig stored; returns false when no wrap is seen.
 */
static bool wrapped_literal(const struct parse_ctx *p,
			    const config_setting_t *s, long long *v)
{
	const char *file = config_setting_source_file(s);
	const char *name = config_setting_name(s);
	unsigned line = config_setting_source_line(s);
	size_t nlen = strlen(name);
	char *buf = NULL, *q, *end;
	size_t cap = 0;
	bool wrapped = false;
	FILE *f;

	f = fopen(file ? file : p->path, "r");
	if (!f)
		return false;
	for (unsigned i = 0; i < line; i++)
		if (getline(&buf, &cap, f) < 0)
			goto out;
	for (q = buf; (q = strstr(q, name)) != NULL; q += nlen) {
		long long lit;

		if (q > buf && (isalnum((unsigned char)q[-1]) || q[-1] == '_'))
			continue;
		end = q + nlen;
		end += strspn(end, " \t");
		if (*end != '=' && *end != ':')
			continue;
		end++;
		end += strspn(end, " \t");
		if (!isdigit((unsigned char)*end) && *end != '-' && *end != '+')
			continue;
		if (end[0] == '0' && (end[1] == 'x' || end[1] == 'X'))
			break;
		errno = 0;
		lit = strtoll(end, NULL, 10);
		if (errno == ERANGE || lit != config_setting_get_int(s)) {
			*v = lit;
			wrapped = true;
		}
		break;
	}
out:
	free(buf);
	fclose(f);
	return wrapped;
}

/* Check and store an integer key (int or int64 in the file). */
static int apply_int(struct parse_ctx *p, const config_setting_t *s,
		     const char *g, const struct key_def *k, unsigned *out)
{
	long long v;

	if (config_setting_type(s) == CONFIG_TYPE_INT) {
		v = config_setting_get_int(s);
		wrapped_literal(p, s, &v);
	} else if (config_setting_type(s) == CONFIG_TYPE_INT64) {
		v = config_setting_get_int64(s);
	} else {
		return bad(p, s, "%s.%s: expected an integer, got %s", g,
			   k->name, type_name(config_setting_type(s)));
	}
	if (v < (long long)k->lo || v > (long long)k->hi)
		return bad(p, s, "%s.%s: must be between %.0f and %.0f, got %lld",
			   g, k->name, k->lo, k->hi, v);
	if (k->kind == K_POW2 && (v & (v - 1)) != 0)
		return bad(p, s, "%s.%s: must be a power of two, got %lld",
			   g, k->name, v);
	*out = (unsigned)v;
	return 0;
}

/* Read a number (int or float) into *v; false for another type. */
static bool number_of(const struct parse_ctx *p, const config_setting_t *s,
		      double *v)
{
	long long lit;

	if (config_setting_type(s) == CONFIG_TYPE_INT)
		*v = wrapped_literal(p, s, &lit) ? (double)lit :
						   config_setting_get_int(s);
	else if (config_setting_type(s) == CONFIG_TYPE_INT64)
		*v = (double)config_setting_get_int64(s);
	else if (config_setting_type(s) == CONFIG_TYPE_FLOAT)
		*v = config_setting_get_float(s);
	else
		return false;
	return true;
}

/* Check and store a duration in seconds (int or float) as milliseconds. */
static int apply_seconds(struct parse_ctx *p, const config_setting_t *s,
			 const char *g, const struct key_def *k, unsigned *out)
{
	double v;

	if (!number_of(p, s, &v))
		return bad(p, s, "%s.%s: expected a number of seconds, got %s",
			   g, k->name, type_name(config_setting_type(s)));
	/* written so that NaN fails too */
	if (!(v >= k->lo && v <= k->hi))
		return bad(p, s, "%s.%s: must be between %g and %g seconds, got %g",
			   g, k->name, k->lo, k->hi, v);
	*out = (unsigned)(v * 1000.0 + 0.5);	/* v > 0 */
	return 0;
}

/* Check and store a number of days (int or float; 0: no limit). */
static int apply_days(struct parse_ctx *p, const config_setting_t *s,
		      const char *g, const struct key_def *k, double *out)
{
	double v;

	if (!number_of(p, s, &v))
		return bad(p, s, "%s.%s: expected a number of days, got %s",
			   g, k->name, type_name(config_setting_type(s)));
	/* written so that NaN fails too */
	if (v != 0 && !(v >= k->lo && v <= k->hi))
		return bad(p, s, "%s.%s: must be 0 (no limit) or between %g and %g days, got %g",
			   g, k->name, k->lo, k->hi, v);
	*out = v;
	return 0;
}

/* Check and store a plain number (int or float) within lo..hi. */
static int apply_float(struct parse_ctx *p, const config_setting_t *s,
		       const char *g, const struct key_def *k, double *out)
{
	double v;

	if (!number_of(p, s, &v))
		return bad(p, s, "%s.%s: expected a number, got %s",
			   g, k->name, type_name(config_setting_type(s)));
	/* written so that NaN fails too */
	if (!(v >= k->lo && v <= k->hi))
		return bad(p, s, "%s.%s: must be between %g and %g, got %g",
			   g, k->name, k->lo, k->hi, v);
	*out = v;
	return 0;
}


/* Store the index of word v of k's words; a bad() error if none. */
static int apply_word(struct parse_ctx *p, const config_setting_t *s,
		      const char *g, const struct key_def *k, const char *v,
		      int *out)
{
	const char *const *w = k->words;
	char list[128];
	size_t used = 0, n = 0;

	for (unsigned i = 0; w[i]; i++) {
		if (!strcmp(v, w[i])) {
			*out = (int)i;
			return 0;
		}
		n++;
	}
	list[0] = '\0';
	for (size_t i = 0; i < n && used < sizeof(list); i++)
		used += snprintf(list + used, sizeof(list) - used, "%s\"%s\"",
				 !i ? "" : i + 1 < n ? ", " : " or ", w[i]);
	return bad(p, s, "%s.%s: must be %s, got \"%s\"", g, k->name, list, v);
}

/* Refuse v if it has a space or a control character. */
static int check_printable(struct parse_ctx *p, const config_setting_t *s,
			   const char *g, const struct key_def *k,
			   const char *v)
{
	for (const char *q = v; *q; q++)
		if ((unsigned char)*q <= ' ' || *q == 0x7f)
			return bad(p, s, "%s.%s: must not contain spaces or control characters",
				   g, k->name);
	return 0;
}

/* Refuse v unless every character is alphanumeric or in extra. */
static int check_chars(struct parse_ctx *p, const config_setting_t *s,
		       const char *g, const struct key_def *k, const char *v,
		       const char *extra, const char *what)
{
	for (const char *q = v; *q; q++)
		if (!isalnum((unsigned char)*q) && !strchr(extra, *q))
			return bad(p, s, "%s.%s: only %s, got \"%s\"", g,
				   k->name, what, v);
	return 0;
}

/* Check rules.source: "", an absolute path, a URL or "clickhouse". */
static int check_rules_source(struct parse_ctx *p, const config_setting_t *s,
			      const char *g, const struct key_def *k,
			      const char *v)
{
	if (!*v || !strcmp(v, "clickhouse"))
		return 0;
	if (strncmp(v, "http://", 7) && strncmp(v, "https://", 8) && v[0] != '/')
		return bad(p, s, "%s.%s: must be empty (the rules_dir folder), an "
			   "absolute folder path, an https:// URL of a bundle or "
			   "\"clickhouse\", got \"%s\"", g, k->name, v);
	if (strlen(v) >= PATH_MAX)
		return bad(p, s, "%s.%s: longer than %d bytes", g, k->name,
			   PATH_MAX - 1);
	return check_printable(p, s, g, k, v);
}

/* Check a string value of key k; returns 0 or a bad() error. */
static int check_string(struct parse_ctx *p, const config_setting_t *s,
			const char *g, const struct key_def *k, const char *v)
{
	size_t n = strlen(v);
	char why[128];

	switch (k->kind) {
	case K_CURRENCY:
		if (!n || n >= JT_CURRENCY_MAX)
			return bad(p, s, "%s.%s: 1 to %d letters (\"USD\"), got \"%s\"",
				   g, k->name, JT_CURRENCY_MAX - 1, v);
		return check_chars(p, s, g, k, v, "", "letters (\"USD\")");
	case K_IMDS_URL:
		if (netaddr_url(v, NULL, why, sizeof(why)))
			return bad(p, s, "%s.%s: %s, got \"%s\"", g, k->name,
				   why, v);
		return 0;
	case K_OPTPATH:
		if (!n)
			return 0;
		/* fall through */
	case K_PATH:
		if (v[0] != '/')
			return bad(p, s, "%s.%s: must be an absolute path, got \"%s\"",
				   g, k->name, v);
		if (n >= PATH_MAX)
			return bad(p, s, "%s.%s: path is longer than %d bytes",
				   g, k->name, PATH_MAX - 1);
		return 0;
	case K_HOST:
		if (n > HOSTNAME_MAX)
			return bad(p, s, "%s.%s: longer than %d characters",
				   g, k->name, HOSTNAME_MAX);
		return check_printable(p, s, g, k, v);
	case K_SINK_NAME:
		if (!n || n > SINK_NAME_MAX)
			return bad(p, s, "%s.%s: 1 to %d characters, got \"%s\"",
				   g, k->name, SINK_NAME_MAX, v);
		return check_chars(p, s, g, k, v, "_-",
				   "letters, digits, '_' and '-'");
	case K_SINK_URL:
		if (strncmp(v, "http://", 7) != 0 &&
		    strncmp(v, "https://", 8) != 0)
			return bad(p, s, "%s.%s: must start with http:// or https://, got \"%s\"",
				   g, k->name, v);
		return check_printable(p, s, g, k, v);
	case K_RULES_SOURCE:
		return check_rules_source(p, s, g, k, v);
	case K_SINK_DB:
		if (!n || n > 64)
			return bad(p, s, "%s.%s: 1 to 64 characters", g,
				   k->name);
		return check_chars(p, s, g, k, v, "_",
				   "letters, digits and '_'");
	default:
		return 0;
	}
}

/* Check and store a string-valued key (a word, a path, a name...). */
static int apply_string(struct parse_ctx *p, const config_setting_t *s,
			const char *g, const struct key_def *k, void *field)
{
	const char *v;
	int err;

	if (config_setting_type(s) != CONFIG_TYPE_STRING)
		return bad(p, s, "%s.%s: expected a string, got %s", g, k->name,
			   type_name(config_setting_type(s)));
	v = config_setting_get_string(s);

	switch (k->kind) {
	case K_WORD:
		return apply_word(p, s, g, k, v, field);
	case K_LEVEL:
		if (log_level_parse(v, field) < 0)
			return bad(p, s,
				   "%s.%s: must be one of error, warn, info, debug, got \"%s\"",
				   g, k->name, v);
		return 0;
	case K_SINK_TYPE:
		if (!strcmp(v, "clickhouse") || !strcmp(v, "http"))
			return apply_word(p, s, g, k, v, field);
		return bad(p, s, "%s.type: must be \"clickhouse\" or \"http\", got \"%s\"%s",
			   g, v, !strcmp(v, "sqlite") ?
			   " (the SQLite store is set up in store { })" : "");
	default:
		break;
	}
	err = check_string(p, s, g, k, v);
	if (err)
		return err;
	/* the URL's trailing '/' goes too: paths are appended to it */
	return set_string(field, v, k->kind == K_PATH ||
			  k->kind == K_OPTPATH || k->kind == K_IMDS_URL);
}

/* Parse headers = [ "Name: value", ... ] into sink d. */
static int apply_headers(struct parse_ctx *p, const config_setting_t *s,
			 struct jt_sink_config *d)
{
	int n = config_setting_length(s);

	if (config_setting_type(s) != CONFIG_TYPE_ARRAY &&
	    config_setting_type(s) != CONFIG_TYPE_LIST)
		return bad(p, s, "sinks.headers: expected an array of \"Name: value\" strings, got %s",
			   type_name(config_setting_type(s)));
	d->headers = calloc(n ? n : 1, sizeof(*d->headers));
	if (!d->headers)
		return -ENOMEM;
	for (int i = 0; i < n; i++) {
		const config_setting_t *e = config_setting_get_elem(s, i);
		const char *v = config_setting_get_string(e);
		const char *colon = v ? strchr(v, ':') : NULL;

		if (!v)
			return bad(p, s, "sinks.headers[%d]: expected a string", i);
		if (!colon || colon == v || strpbrk(v, "\r\n"))
			return bad(p, s, "sinks.headers[%d]: expected \"Name: value\" on one line, got \"%s\"",
				   i, v);
		d->headers[i] = strdup(v);
		if (!d->headers[i])
			return -ENOMEM;
		d->n_headers++;
	}
	return 0;
}

/* Check and store one key of group g into the struct at base. */
static int apply_key(struct parse_ctx *p, const config_setting_t *s,
		     const char *g, const struct key_def *k, void *base)
{
	void *field = (char *)base + k->off;

	switch (k->kind) {
	case K_INT:
	case K_POW2:
		return apply_int(p, s, g, k, field);
	case K_SECONDS:
		return apply_seconds(p, s, g, k, field);
	case K_DAYS:
		return apply_days(p, s, g, k, field);
	case K_FLOAT:
		return apply_float(p, s, g, k, field);
	case K_BOOL:
		if (config_setting_type(s) != CONFIG_TYPE_BOOL)
			return bad(p, s, "%s.%s: expected a boolean (true or false), got %s",
				   g, k->name, type_name(config_setting_type(s)));
		*(bool *)field = config_setting_get_bool(s);
		return 0;
	case K_HEADERS:
		return apply_headers(p, s, base);
	default:
		return apply_string(p, s, g, k, field);
	}
}

/* Whether key k holds a string (char *) that the struct owns. */
static bool is_string(const struct key_def *k)
{
	return k->kind >= K_PATH && k->kind != K_SINK_TYPE &&
	       k->kind != K_HEADERS;
}

/* Bytes of the field a key of kind k sets (its string: a pointer). */
static size_t field_size(const struct key_def *k)
{
	return kinds[k->kind].size;
}

/* Set every key of keys in the struct at base to its default (strings
 * allocated; a NULL default stays NULL). Returns 0 or -ENOMEM. */
static int set_defaults(const struct key_def *keys, void *base)
{
	for (const struct key_def *k = keys; k->name; k++) {
		void *field = (char *)base + k->off;

		switch (k->kind) {
		case K_INT:
		case K_POW2:
			*(unsigned *)field = (unsigned)k->num;
			break;
		case K_SECONDS:
			*(unsigned *)field = (unsigned)(k->num * 1000.0 + 0.5);
			break;
		case K_DAYS:
		case K_FLOAT:
			*(double *)field = k->num;
			break;
		case K_BOOL:
			*(bool *)field = k->num != 0;
			break;
		case K_LEVEL:
		case K_WORD:
		case K_SINK_TYPE:
			*(int *)field = (int)k->num;
			break;
		case K_HEADERS:
			break;
		default:
			if (k->str && !(*(char **)field = strdup(k->str)))
				return -ENOMEM;
			break;
		}
	}
	return 0;
}

/* Free every string of keys in the struct at base and NULL it. */
static void free_strings(const struct key_def *keys, void *base)
{
	for (const struct key_def *k = keys; k->name; k++) {
		char **slot = (char **)((char *)base + k->off);

		if (!is_string(k))
			continue;
		free(*slot);
		*slot = NULL;
	}
}

/* Replace every string of keys in the struct at base by a copy of it;
 * on ENOMEM the ones not copied yet are NULL. Returns 0 or -ENOMEM. */
static int dup_strings(const struct key_def *keys, void *base)
{
	int ret = 0;

	for (const struct key_def *k = keys; k->name; k++) {
		char **slot = (char **)((char *)base + k->off);

		if (!is_string(k) || !*slot)
			continue;
		if (ret || !(*slot = strdup(*slot))) {
			*slot = NULL;
			ret = -ENOMEM;
		}
	}
	return ret;
}

/* Check every key of one group and store it into *c. */
static int apply_group(struct parse_ctx *p, const config_setting_t *gs,
		       const struct group_def *g, struct jt_config *c)
{
	int n = config_setting_length(gs);

	if (config_setting_type(gs) != CONFIG_TYPE_GROUP)
		return bad(p, gs, "%s: expected a group { ... }, got %s",
			   g->name, type_name(config_setting_type(gs)));

	for (int i = 0; i < n; i++) {
		const config_setting_t *s = config_setting_get_elem(gs, i);
		const char *name = config_setting_name(s);
		const struct key_def *k;
		char valid[256];
		int err;

		for (k = g->keys; k->name; k++)
			if (name && strcmp(k->name, name) == 0)
				break;
		if (!k->name) {
			key_list(g->keys, ~0u, valid, sizeof(valid));
			return bad(p, s, "unknown key \"%s.%s\"; valid keys in %s: %s",
				   g->name, name ? name : "?", g->name, valid);
		}
		err = apply_key(p, s, g->name, k, c);
		if (err < 0)
			return err;
		if (k->off == F(sqlite_path))
			p->sqlite_set = true;
		if (k->off == F(spool_dir))
			p->spool_set = true;
	}
	return 0;
}

/* Release one sink's strings. */
static void sink_free(struct jt_sink_config *s)
{
	free_strings(sink_keys, s);
	for (size_t i = 0; i < s->n_headers; i++)
		free(s->headers[i]);
	free(s->headers);
	memset(s, 0, sizeof(*s));
}

/* Release every sink of c. */
static void sinks_free(struct jt_config *c)
{
	for (size_t i = 0; i < c->n_sinks; i++)
		sink_free(&c->sinks[i]);
	free(c->sinks);
	c->sinks = NULL;
	c->n_sinks = 0;
}

/* Parse one sink group into d (defaults first, type read first). */
static int apply_sink(struct parse_ctx *p, const config_setting_t *gs,
		      struct jt_sink_config *d)
{
	const config_setting_t *ts = config_setting_get_member(gs, "type");
	int n = config_setting_length(gs);
	int err;

	memset(d, 0, sizeof(*d));
	if (set_defaults(sink_keys, d))
		return -ENOMEM;
	d->line = (int)config_setting_source_line(gs);
	if (!ts)
		return bad(p, gs, "sinks: every sink needs type = \"clickhouse\" or \"http\"");
	err = apply_key(p, ts, "sinks", &sink_keys[0], d);
	if (err)
		return err;
	for (int i = 0; i < n; i++) {
		const config_setting_t *s = config_setting_get_elem(gs, i);
		const char *name = config_setting_name(s);
		const struct key_def *k;
		char valid[512];

		for (k = sink_keys; k->name; k++)
			if (name && !strcmp(k->name, name))
				break;
		if (!k->name || !(k->types & (1u << d->type))) {
			key_list(sink_keys, 1u << d->type, valid, sizeof(valid));
			return bad(p, s, "unknown key \"%s\" for a %s sink; valid keys: %s",
				   name ? name : "?",
				   sink_type_names[d->type], valid);
		}
		if (k->kind == K_SINK_TYPE)
			continue;
		err = apply_key(p, s, "sinks", k, d);
		if (err)
			return err;
	}
	if (!d->url)
		return bad(p, gs, "sinks: a %s sink needs url = \"http://...\"",
			   sink_type_names[d->type]);
	if (!d->name && !(d->name = strdup(sink_type_names[d->type])))
		return -ENOMEM;
	if (d->type == JT_SINK_CLICKHOUSE && !d->database &&
	    !(d->database = strdup("jobtrace")))
		return -ENOMEM;
	return 0;
}

/* Parse sinks = ( { ... }, ... ) into c, replacing any earlier list. */
static int apply_sinks(struct parse_ctx *p, const config_setting_t *ls,
		       struct jt_config *c)
{
	int n = config_setting_length(ls);
	int err;

	if (config_setting_type(ls) != CONFIG_TYPE_LIST)
		return bad(p, ls, "sinks: expected a list ( { type = ...; url = ...; }, ... ), got %s",
			   type_name(config_setting_type(ls)));
	sinks_free(c);
	c->sinks = calloc(n ? n : 1, sizeof(*c->sinks));
	if (!c->sinks)
		return -ENOMEM;
	for (int i = 0; i < n; i++) {
		const config_setting_t *gs = config_setting_get_elem(ls, i);

		if (config_setting_type(gs) != CONFIG_TYPE_GROUP)
			return bad(p, gs, "sinks: each element must be a group { ... }, got %s",
				   type_name(config_setting_type(gs)));
		c->n_sinks++;
		err = apply_sink(p, gs, &c->sinks[i]);
		if (err)
			return err;
		if (!strcmp(c->sinks[i].name, "sqlite"))
			return bad(p, gs, "sinks.name: \"sqlite\" is the local store's name");
		for (int j = 0; j < i; j++)
			if (!strcmp(c->sinks[j].name, c->sinks[i].name))
				return bad(p, gs, "sinks.name: \"%s\" is already the name of the sink at line %d; give each sink its own name",
					   c->sinks[i].name, c->sinks[j].line);
	}
	return 0;
}

/* Deep-copy the sinks of src into dst (dst->sinks points at src's). */
static int copy_sinks(struct jt_config *dst, const struct jt_config *src)
{
	dst->sinks = NULL;
	dst->n_sinks = 0;
	if (!src->n_sinks)
		return 0;
	dst->sinks = calloc(src->n_sinks, sizeof(*dst->sinks));
	if (!dst->sinks)
		return -ENOMEM;
	for (size_t i = 0; i < src->n_sinks; i++) {
		const struct jt_sink_config *a = &src->sinks[i];
		struct jt_sink_config *b = &dst->sinks[i];

		*b = *a;
		b->headers = NULL;
		b->n_headers = 0;
		dst->n_sinks++;
		if (dup_strings(sink_keys, b))
			return -ENOMEM;
		if (a->n_headers &&
		    !(b->headers = calloc(a->n_headers, sizeof(char *))))
			return -ENOMEM;
		for (size_t k = 0; k < a->n_headers; k++) {
			if (!(b->headers[k] = strdup(a->headers[k])))
				return -ENOMEM;
			b->n_headers++;
		}
	}
	return 0;
}

/* The first sink of the given type (or named name when not NULL). */
const struct jt_sink_config *config_find_sink(const struct jt_config *c,
					      enum jt_sink_type type,
					      const char *name)
{
	for (size_t i = 0; i < c->n_sinks; i++) {
		if (c->sinks[i].type != type)
			continue;
		if (!name || !*name || !strcmp(c->sinks[i].name, name))
			return &c->sinks[i];
	}
	return NULL;
}

/* Check the whole parsed tree and store it into *c. */
static int apply_root(struct parse_ctx *p, const config_t *cfg,
		      struct jt_config *c)
{
	const config_setting_t *root = config_root_setting(cfg);
	int n = config_setting_length(root);

	for (int i = 0; i < n; i++) {
		const config_setting_t *gs = config_setting_get_elem(root, i);
		const char *name = config_setting_name(gs);
		const struct group_def *g;
		char valid[128];
		int err;

		for (g = groups; g->name; g++)
			if (name && strcmp(g->name, name) == 0)
				break;
		if (!g->name) {
			group_list(valid, sizeof(valid));
			return bad(p, gs, "unknown group \"%s\"; valid groups: %s",
				   name ? name : "?", valid);
		}
		if (g == SINKS_GROUP)
			err = apply_sinks(p, gs, c);
		else
			err = apply_group(p, gs, g, c);
		if (err < 0)
			return err;
	}
	return 0;
}

/* Copy src into dst, duplicating every string; dst is zeroed on failure. */
static int copy_config(struct jt_config *dst, const struct jt_config *src)
{
	int ret;

	*dst = *src;
	dst->source = NULL;
	ret = copy_sinks(dst, src);
	for (const struct group_def *g = groups; g != SINKS_GROUP; g++)
		if (dup_strings(g->keys, dst))
			ret = -ENOMEM;
	if (!ret && src->source && !(dst->source = strdup(src->source)))
		ret = -ENOMEM;
	if (ret) {
		config_free(dst);
		memset(dst, 0, sizeof(*dst));
	}
	return ret;
}

/* Fill *c with every default (allocates strings). */
int config_defaults(struct jt_config *c)
{
	int ret = 0;

	memset(c, 0, sizeof(*c));
	for (const struct group_def *g = groups; g != SINKS_GROUP; g++)
		if (set_defaults(g->keys, c))
			ret = -ENOMEM;
	/* store.sqlite_path and spool.dir follow agent.state_dir */
	if (!ret && (!(c->sqlite_path = join_path(c->state_dir, SQLITE_NAME)) ||
		     !(c->spool_dir = join_path(c->state_dir, SPOOL_NAME))))
		ret = -ENOMEM;
	if (ret)
		config_free(c);
	return ret;
}

/* Check that the file can be opened for reading; returns 0 or -errno. */
static int check_readable(const char *path)
{
	struct stat st;
	FILE *f = fopen(path, "r");
	int err = 0;

	if (!f)
		return -errno;
	if (fstat(fileno(f), &st) < 0)
		err = -errno;
	else if (S_ISDIR(st.st_mode))
		err = -EISDIR;
	fclose(f);
	return err;
}

/*
 * Keep a path under state_dir (the store, the spool) following state_dir
 * unless the file chose one: if the old value was the one derived from the
 * old state_dir, derive it again.
 */
static int follow_state_dir(struct jt_config *tmp, const struct jt_config *old,
			    size_t off, const char *name)
{
	const char *old_val = *(char **)((const char *)old + off);
	char **slot = (char **)((char *)tmp + off);
	char *derived, *fresh;

	if (!old->state_dir || !old_val)
		return 0;
	derived = join_path(old->state_dir, name);
	if (!derived)
		return -ENOMEM;
	if (strcmp(derived, old_val) != 0) {
		free(derived);
		return 0;
	}
	free(derived);
	fresh = join_path(tmp->state_dir, name);
	if (!fresh)
		return -ENOMEM;
	free(*slot);
	*slot = fresh;
	return 0;
}

/*
 * A segment set in the file must fit four times in the spool, so that
 * dropping the oldest frees room; a segment size the file does not set
 * is lowered to fit here, so that the effective configuration (and its
 * dump, which must read back) is what runs.
 */
static int check_segment(struct parse_ctx *p, const config_t *cfg,
			 struct jt_config *c)
{
	const config_setting_t *s = config_lookup(cfg, "spool.segment_size_kib");
	uint64_t most = (uint64_t)c->spool_max_mib * 1024 / 4;

	if (c->spool_segment_kib <= most)
		return 0;
	if (!s) {
		c->spool_segment_kib = most;
		return 0;
	}
	return bad(p, s, "spool.segment_size_kib: %u KiB is more than a"
		   " quarter of the spool (spool.max_size_mib = %u): at most"
		   " %" PRIu64 " KiB", c->spool_segment_kib, c->spool_max_mib,
		   most);
}

/* True when the host of http://HOST[:PORT]/... is a loopback one. */
static bool loopback_url(const char *url)
{
	const char *h = url + 7;
	size_t n = strcspn(h, ":/?#");

	if (*h == '[')
		return !strncmp(h, "[::1]", 5) && strchr(":/", h[5]);
	return (n == 9 && !strncmp(h, "localhost", 9)) ||
	       (n >= 7 && !strncmp(h, "127.", 4) &&
		strspn(h, "0123456789.") == n);
}

/*
 * rules.source and rules.public_key together: plain http only to this
 * machine or with signed bundles; a key only where there are bundles.
 */
static int check_rules(struct parse_ctx *p, const config_t *cfg,
		       const struct jt_config *c)
{
	const config_setting_t *s = config_lookup(cfg, "rules.source");
	const char *v = c->rules_source;

	if (!s)
		s = config_lookup(cfg, "rules.public_key");
	if (!s)
		return 0;	/* neither set here: the defaults agree */
	if (!strncmp(v, "http://", 7) && !loopback_url(v) && !*c->rules_public_key)
		return bad(p, s, "rules.source: plain http:// is allowed only to a "
			   "loopback address or with rules.public_key set (signed "
			   "bundles); use https://");
	if (*c->rules_public_key && (!*v || v[0] == '/')) {
		if (config_lookup(cfg, "rules.public_key"))
			s = config_lookup(cfg, "rules.public_key");
		return bad(p, s, "rules.public_key: the rules come from a folder, "
			   "whose files are not signed: a key applies to bundles "
			   "(rules.source an https:// URL or \"clickhouse\")");
	}
	if (!strcmp(v, "clickhouse") &&
	    !config_find_sink(c, JT_SINK_CLICKHOUSE, NULL))
		return bad(p, s, "rules.source: \"clickhouse\" reads the rules "
			   "table of the first clickhouse sink, and sinks has none");
	return 0;
}

/* Read path into *c over its current values; *c is untouched on error. */
int config_load(struct jt_config *c, const char *path, bool missing_ok,
		char *err, size_t errlen)
{
	struct parse_ctx p = { .path = path, .err = err, .errlen = errlen };
	struct jt_config tmp = { 0 };
	struct jt_config base = { 0 };
	config_t cfg;
	int ret;

	util_seterr(err, errlen, "%s", "");
	ret = check_readable(path);
	if (ret == -ENOENT && missing_ok)
		return c->state_dir ? 0 : config_defaults(c);
	if (ret < 0) {
		util_seterr(err, errlen, "%s: %s", path, strerror(-ret));
		return ret;
	}

	/* a zeroed struct loads over the built-in defaults */
	ret = c->state_dir ? copy_config(&base, c) : config_defaults(&base);
	if (ret < 0)
		goto nomem;
	ret = copy_config(&tmp, &base);
	if (ret < 0)
		goto nomem;

	config_init(&cfg);
	if (config_read_file(&cfg, path) != CONFIG_TRUE) {
		const char *file = config_error_file(&cfg);

		if (config_error_type(&cfg) == CONFIG_ERR_FILE_IO) {
			ret = errno ? -errno : -EIO;
			util_seterr(err, errlen, "%s: %s", path, strerror(-ret));
		} else {
			ret = -EINVAL;
			util_seterr(err, errlen, "%s:%d: %s", file ? file : path,
			       config_error_line(&cfg),
			       config_error_text(&cfg));
		}
		goto out;
	}
	ret = apply_root(&p, &cfg, &tmp);
	if (ret < 0)
		goto out;
	ret = check_segment(&p, &cfg, &tmp);
	if (ret < 0)
		goto out;
	ret = check_rules(&p, &cfg, &tmp);
	if (ret < 0)
		goto out;

	if (!p.sqlite_set &&
	    follow_state_dir(&tmp, &base, F(sqlite_path), SQLITE_NAME) < 0)
		goto nomem_cfg;
	if (!p.spool_set &&
	    follow_state_dir(&tmp, &base, F(spool_dir), SPOOL_NAME) < 0)
		goto nomem_cfg;
	if (strlen(tmp.run_dir) + 1 + strlen(SOCKET_NAME) >=
	    sizeof(((struct sockaddr_un *)0)->sun_path)) {
		const config_setting_t *s = config_lookup(&cfg, "agent.run_dir");

		size_t max = sizeof(((struct sockaddr_un *)0)->sun_path) - 2 -
			     strlen(SOCKET_NAME);

		if (s)
			ret = bad(&p, s, "agent.run_dir: too long for the control socket (at most %zu characters)",
				  max);
		else
			util_seterr(err, errlen, "%s: agent.run_dir: too long for the control socket (at most %zu characters)",
			       path, max);
		ret = -EINVAL;
		goto out;
	}
	free(tmp.source);
	tmp.source = strdup(path);
	if (!tmp.source)
		goto nomem_cfg;

	config_free(c);
	*c = tmp;
	memset(&tmp, 0, sizeof(tmp));
	ret = 0;
out:
	config_destroy(&cfg);
	config_free(&tmp);
	config_free(&base);
	return ret;
nomem_cfg:
	config_destroy(&cfg);
nomem:
	config_free(&tmp);
	config_free(&base);
	util_seterr(err, errlen, "%s: %s", path, strerror(ENOMEM));
	return -ENOMEM;
}


/* Release the strings of *c; accepts a zeroed struct. */
void config_free(struct jt_config *c)
{
	if (!c)
		return;
	free(c->source);
	c->source = NULL;
	for (const struct group_def *g = groups; g != SINKS_GROUP; g++)
		free_strings(g->keys, c);
	sinks_free(c);
}

/* Move the cost, waste, idle and signals groups of src into dst. */
void config_take_cost(struct jt_config *dst, struct jt_config *src)
{
	for (const struct group_def *g = groups; g != SINKS_GROUP; g++) {
		if (strcmp(g->name, "cost") && strcmp(g->name, "waste") &&
		    strcmp(g->name, "idle") && strcmp(g->name, "signals"))
			continue;
		for (const struct key_def *k = g->keys; k->name; k++) {
			char *to = (char *)dst + k->off;
			char *from = (char *)src + k->off;

			if (is_string(k))
				free(*(char **)to);
			memcpy(to, from, field_size(k));
			if (is_string(k))
				*(char **)from = NULL;
		}
	}
}

/* Path of the control socket derived from run_dir (static buffer). */
const char *config_socket_path(const struct jt_config *c)
{
	static char buf[PATH_MAX + sizeof(SOCKET_NAME) + 1];
	const char *dir = c->run_dir ? c->run_dir : JT_RUNSTATEDIR "/jobtrace";
	size_t n = strlen(dir);

	snprintf(buf, sizeof(buf), "%s%s%s", dir,
		 (n && dir[n - 1] == '/') ? "" : "/", SOCKET_NAME);
	return buf;
}

/* What of sink s may be a secret, written in the configuration itself. */
static const char *secret_in(const struct jt_sink_config *s)
{
	const char *host = s->url ? strstr(s->url, "://") : NULL;
	size_t auth = host ? strcspn(host + 3, "/?#") : 0;
	const char *at = host ? memchr(host + 3, '@', auth) : NULL;

	if (at && memchr(host + 3, ':', (size_t)(at - host - 3)))
		return "url holds a password";
	if (s->url && strpbrk(s->url, "?#"))
		return "url has a query string, which may hold a token";
	if (s->n_headers)
		return "headers may hold a token";
	return NULL;
}

/* Warn about secrets in a configuration file other users can read. */
void config_warn_secrets(const struct jt_config *c)
{
	struct stat st;

	if (!c->source || stat(c->source, &st) || !(st.st_mode & 044))
		return;
	for (size_t i = 0; i < c->n_sinks; i++) {
		const char *what = secret_in(&c->sinks[i]);

		if (what)
			log_warn("%s:%d: sink \"%s\": its %s, and %s is readable by other users (mode %04o): move it to a credentials_file (root's, mode 600: user, password, header, query lines; jobtrace.conf(5))",
				 c->source, c->sinks[i].line, c->sinks[i].name,
				 what, c->source, (unsigned)(st.st_mode & 07777));
	}
}


/* Print s as a libconfig string literal, escaping what the lexer needs. */
static void dump_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (; s && *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(out, "\\%c", ch);
		else if (ch < 0x20 || ch == 0x7f)
			fprintf(out, "\\x%02x", ch);
		else
			fputc(ch, out);
	}
	fputc('"', out);
}

/* Print a number the way it reads back to the same double, shortest. */
static void dump_number(FILE *out, double v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%.15g", v);
	if (strtod(buf, NULL) != v)
		snprintf(buf, sizeof(buf), "%.17g", v);
	fputs(buf, out);
}

/* The word the enum field of k holds (a value out of range: words[0],
 * or info for the log level). */
static const char *word_of(const struct key_def *k, const void *field)
{
	unsigned i = (unsigned)*(const int *)field, n = 0;

	while (k->words[n])
		n++;
	if (i < n)
		return k->words[i];
	return k->kind == K_LEVEL ? k->words[LOG_LVL_INFO] : k->words[0];
}

/* Print the value of key k of the struct at base, in libconfig syntax. */
static void dump_value(FILE *out, const struct key_def *k, const void *base)
{
	const void *field = (const char *)base + k->off;
	const unsigned *u = field;

	switch (k->kind) {
	case K_INT:
	case K_POW2:
		fprintf(out, "%u", *u);
		break;
	case K_SECONDS:
		fprintf(out, "%u.%03u", *u / 1000, *u % 1000);
		break;
	case K_DAYS:
	case K_FLOAT:
		dump_number(out, *(const double *)field);
		break;
	case K_BOOL:
		fputs(*(const bool *)field ? "true" : "false", out);
		break;
	case K_LEVEL:
	case K_WORD:
	case K_SINK_TYPE:
		fprintf(out, "\"%s\"", word_of(k, field));
		break;
	default:
		dump_string(out, *(char *const *)field);
		break;
	}
}

/* Whether the value of key k of the struct at base is 0 or empty. */
static bool is_zero(const struct key_def *k, const void *base)
{
	const void *field = (const char *)base + k->off;

	switch (k->kind) {
	case K_INT:
	case K_POW2:
	case K_SECONDS:
		return *(const unsigned *)field == 0;
	case K_DAYS:
	case K_FLOAT:
		return *(const double *)field == 0;
	default:
		return is_string(k) && !(*(char *const *)field &&
					 **(char *const *)field);
	}
}

/* Print "key = value;" for every key of keys that a sink of types takes
 * (a group: ~0u), with the comment of a 0 or empty value or the unit;
 * a sink's file that is not set, and its headers' values, are not shown. */
static void dump_keys(FILE *out, const struct key_def *keys, unsigned types,
		      const void *base, const char *indent)
{
	for (const struct key_def *k = keys; k->name; k++) {
		if (k->types && !(k->types & types))
			continue;
		if (k->kind == K_HEADERS) {
			const struct jt_sink_config *s = base;

			for (size_t h = 0; h < s->n_headers; h++)
				fprintf(out, "%s# header: %.*s: (value not shown)\n",
					indent, (int)strcspn(s->headers[h], ":"),
					s->headers[h]);
			continue;
		}
		if (is_string(k) && !*(char *const *)((const char *)base + k->off))
			continue;
		fprintf(out, "%s%s = ", indent, k->name);
		dump_value(out, k, base);
		if (k->zero && is_zero(k, base))
			fprintf(out, ";\t# %s\n", k->zero);
		else if (k->unit)
			fprintf(out, ";\t# %s\n", k->unit);
		else
			fputs(";\n", out);
	}
}

/* Print every effective key = value, in libconfig syntax. */
void config_dump(const struct jt_config *c, FILE *out)
{
	fprintf(out, "# jobtrace effective configuration (from %s)\n",
		c->source ? c->source : "built-in defaults");
	for (const struct group_def *g = groups; g != SINKS_GROUP; g++) {
		fprintf(out, "%s = {\n", g->name);
		dump_keys(out, g->keys, ~0u, c, "\t");
		fputs("};\n", out);
	}
	fprintf(out, "%s = (", SINKS_GROUP->name);
	for (size_t i = 0; i < c->n_sinks; i++) {
		fprintf(out, "%s\n\t{\n", i ? "," : "");
		dump_keys(out, sink_keys, 1u << c->sinks[i].type, &c->sinks[i],
			  "\t\t");
		fputs("\t}", out);
	}
	fprintf(out, "%s);\n", c->n_sinks ? "\n" : "");
}

/* Print s for roff: '-' and '\' escaped. */
static void man_text(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '-' || *s == '\\')
			fputc('\\', out);
		fputc(*s, out);
	}
}

/* Print a number of the manual: an integer as one, else shortest. */
static void man_number(FILE *out, double v)
{
	if (v > -1e15 && v < 1e15 && v == (double)(long long)v)
		fprintf(out, "%.0f", v);
	else
		fprintf(out, "%g", v);
}

/* Print a default path as installed with the usual prefixes (the
 * longest of the build's that it starts with). */
static void man_path(FILE *out, const char *path)
{
	static const struct { const char *built, *usual; } pre[] = {
		{ JT_LOCALSTATEDIR, "/var" },
		{ JT_RUNSTATEDIR, "/run" },
		{ JT_PKGDATADIR, "/usr/share/jobtrace" },
	};
	size_t best = 0, n;
	const char *usual = "";

	for (size_t i = 0; i < sizeof(pre) / sizeof(pre[0]); i++) {
		n = strlen(pre[i].built);
		if (n > best && !strncmp(path, pre[i].built, n) &&
		    path[n] == '/') {
			best = n;
			usual = pre[i].usual;
		}
	}
	man_text(out, usual);
	man_text(out, path + best);
}

/* Print the kind of key k as jobtrace.conf(5) names it. */
static void man_type(FILE *out, const struct key_def *k)
{
	if (k->unit || kinds[k->kind].man) {
		fputs(k->unit ? k->unit : kinds[k->kind].man, out);
		return;
	}
	for (unsigned i = k->kind == K_SINK_TYPE, n = i; k->words[i]; i++)
		fprintf(out, "%s\\(dq%s\\(dq", i == n ? "" : !k->words[i + 1] ?
			" or " : ", ", k->words[i]);
}

/* Print the default of key k as jobtrace.conf(5) shows it. */
static void man_default(FILE *out, const struct key_def *k)
{
	switch (k->kind) {
	case K_INT:
	case K_POW2:
	case K_SECONDS:
	case K_DAYS:
	case K_FLOAT:
		man_number(out, k->num);
		return;
	case K_BOOL:
		fputs(k->num ? "true" : "false", out);
		return;
	case K_LEVEL:
	case K_WORD:
	case K_SINK_TYPE:
		fprintf(out, "\\(dq%s\\(dq", k->words[(int)k->num]);
		return;
	case K_PATH:
		if (k->str && k->str[0]) {
			man_path(out, k->str);
			return;
		}
		/* fall through */
	default:
		fputs("\\(dq", out);
		man_text(out, k->str ? k->str : "");
		fputs("\\(dq", out);
		return;
	}
}

/* Print the head line of key k in jobtrace.conf(5), as .BR arguments:
 * NAME " (TYPE[, SINKS], default " VALUE ", range LO to HI)". */
static void man_head(FILE *out, const struct key_def *k)
{
	bool range = k->kind <= K_FLOAT && k->kind != K_DAYS;

	fprintf(out, ".BR %s \" (", k->name);
	man_type(out, k);
	if (k->types && k->types != T_NET)
		fprintf(out, ", %s sinks", k->types == T_CH ? "clickhouse" :
			"http");
	if (k->doc_default) {
		fprintf(out, ", %s)\"\n", k->doc_default);
		return;
	}
	fputs(", default \" ", out);
	man_default(out, k);
	if (k->kind == K_DAYS) {
		fputs(" \", 0 or ", out);
	} else if (range) {
		fputs(" \", range ", out);
	} else {
		fputs(" )\n", out);
		return;
	}
	man_number(out, k->lo);
	fputs(" to ", out);
	man_number(out, k->hi);
	fputs(")\"\n", out);
}

/* Print the key list of jobtrace.conf(5): each group's section title,
 * then ".TP" and the head line of each of its keys. */
void config_print_man(FILE *out)
{
	for (const struct group_def *g = groups; g->name; g++) {
		fprintf(out, ".SH %s\n", g->man);
		for (const struct key_def *k = g->keys; k->name; k++) {
			fputs(".TP\n", out);
			man_head(out, k);
		}
	}
}

/* Print into buf a number just past bound v of key k, on side dir. */
static void past(char *buf, size_t len, const struct key_def *k, double v,
		 int dir)
{
	double step = k->kind == K_INT || k->kind == K_POW2 ? 1 :
		      v > 0 ? v / 1024 : v < 0 ? -v / 1024 : 1.0 / 1024;

	snprintf(buf, len, "%.17g", v + dir * step);
	/* a float must stay one, or libconfig reads an integer */
	if (k->kind != K_INT && k->kind != K_POW2 && !strpbrk(buf, ".e"))
		strncat(buf, ".0", len - strlen(buf) - 1);
}

/* Fill *t for the i-th key (the groups' in order, then a sink's). */
int config_key_text(size_t i, struct config_key_text *t)
{
	struct jt_config c;
	struct jt_sink_config sink = { 0 };
	const struct group_def *g;
	const struct key_def *k = NULL;
	const void *base = &c;
	FILE *m;
	int ret = 0;

	for (g = groups; g->name; g++) {
		size_t n = 0;

		while (g->keys[n].name)
			n++;
		if (i < n) {
			k = &g->keys[i];
			break;
		}
		i -= n;
	}
	if (!k)
		return -ENOENT;
	memset(t, 0, sizeof(*t));
	t->group = g->name;
	t->name = k->name;
	if (k->types)
		t->sink_type = sink_type_names[k->types & T_HTTP ?
					       JT_SINK_HTTP : JT_SINK_CLICKHOUSE];
	if (k->kind <= K_FLOAT) {
		past(t->below, sizeof(t->below), k, k->lo, -1);
		past(t->above, sizeof(t->above), k, k->hi, 1);
	}
	if (config_defaults(&c))
		return -ENOMEM;
	if (g == SINKS_GROUP) {
		base = &sink;
		if (set_defaults(sink_keys, &sink))
			ret = -ENOMEM;
	}
	m = fmemopen(t->def, sizeof(t->def) - 1, "w");
	if (!m)
		ret = -errno;
	if (!ret && k->kind != K_HEADERS &&
	    !(is_string(k) && !*(char *const *)((const char *)base + k->off)))
		dump_value(m, k, base);
	if (m)
		fclose(m);
	free_strings(sink_keys, &sink);
	config_free(&c);
	return ret;
}
