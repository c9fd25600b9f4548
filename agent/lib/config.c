// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * config.c - jobtrace.conf (libconfig syntax).
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

/* What one key accepts; lo/hi bound ints and floats (seconds). */
enum key_kind { K_INT, K_POW2, K_SECONDS, K_DAYS, K_BOOL, K_PATH, K_LEVEL,
		K_HOST, K_IMDS_MODE, K_IMDS_URL, K_FLOAT, K_CURRENCY, K_OPTPATH,
		K_ATTRIBUTION, K_RECORD };

struct key_def {
	const char *name;
	enum key_kind kind;
	double lo, hi;
	size_t off;		/* offset of the field in struct jt_config */
};

struct group_def {
	const char *name;
	const struct key_def *keys;
};

#define F(field) offsetof(struct jt_config, field)

static const struct key_def log_keys[] = {
	{ "level", K_LEVEL, 0, 0, F(log_level) },
	{ "syslog", K_BOOL, 0, 0, F(log_syslog) },
	{ NULL, 0, 0, 0, 0 },
};

static const struct key_def agent_keys[] = {
	{ "state_dir", K_PATH, 0, 0, F(state_dir) },
	{ "run_dir", K_PATH, 0, 0, F(run_dir) },
	{ "rules_dir", K_PATH, 0, 0, F(rules_dir) },
	{ "hostname", K_HOST, 0, 0, F(hostname) },
	{ "control_group", K_HOST, 0, 0, F(control_group) },
	{ "reader_group", K_HOST, 0, 0, F(reader_group) },
	{ "max_connections_per_user", K_INT, 1, 4096, F(max_conn_per_user) },
	{ "max_connections", K_INT, 1, 4096, F(max_connections) },
	{ NULL, 0, 0, 0, 0 },
};

static const struct key_def collector_keys[] = {
	{ "sample_interval", K_SECONDS, 0.1, 3600, F(sample_interval_ms) },
	{ "first_sample", K_SECONDS, 0, 3600, F(first_sample_ms) },
	{ "record", K_RECORD, 0, 0, F(record_mode) },
	{ "ringbuf_size_kib", K_POW2, 256, 1048576, F(ringbuf_kib) },
	{ "max_tracked", K_INT, 1024, 4194304, F(max_tracked) },
	{ "argv_max_bytes", K_INT, 64, 2048, F(argv_max_bytes) },
	{ "delay_accounting", K_BOOL, 0, 0, F(delay_accounting) },
	{ "snakemake_log", K_BOOL, 0, 0, F(snakemake_log) },
	{ NULL, 0, 0, 0, 0 },
};

static const struct key_def store_keys[] = {
	{ "enabled", K_BOOL, 0, 0, F(store_enabled) },
	{ "sqlite_path", K_PATH, 0, 0, F(sqlite_path) },
	{ "flush_interval", K_SECONDS, 0.05, 60, F(flush_interval_ms) },
	{ "flush_records", K_INT, 1, 100000, F(flush_records) },
	{ "retention", K_DAYS, 0.001, 36500, F(store_retention_days) },
	{ "max_size_mib", K_INT, 0, 1048576, F(store_max_mib) },
	{ NULL, 0, 0, 0, 0 },
};

static const struct key_def spool_keys[] = {
	{ "dir", K_PATH, 0, 0, F(spool_dir) },
	{ "max_size_mib", K_INT, 1, 1048576, F(spool_max_mib) },
	{ "segment_size_kib", K_INT, 64, 1048576, F(spool_segment_kib) },
	{ "sync_interval", K_SECONDS, 0.01, 10, F(spool_sync_ms) },
	{ NULL, 0, 0, 0, 0 },
};

static const struct key_def docker_keys[] = {
	{ "enabled", K_BOOL, 0, 0, F(docker_enabled) },
	{ "socket", K_PATH, 0, 0, F(docker_socket) },
	{ "timeout", K_SECONDS, 0.1, 60, F(docker_timeout_ms) },
	{ "end_grace", K_SECONDS, 0.5, 3600, F(docker_end_grace_ms) },
	{ NULL, 0, 0, 0, 0 },
};

static const struct key_def rules_keys[] = {
	{ "deadline_ms", K_INT, 1, 1000, F(rules_deadline_ms) },
	{ NULL, 0, 0, 0, 0 },
};

static const char *const record_modes[] = {
	[JT_RECORD_ALL] = "all", [JT_RECORD_JOBS] = "jobs", NULL
};

static const char *const imds_modes[] = {
	[JT_IMDS_AUTO] = "auto", [JT_IMDS_OFF] = "off", [JT_IMDS_ON] = "on",
	NULL
};

static const struct key_def cloud_keys[] = {
	{ "imds", K_IMDS_MODE, 0, 0, F(imds_mode) },
	{ "imds_url", K_IMDS_URL, 0, 0, F(imds_url) },
	{ "dmi_dir", K_PATH, 0, 0, F(dmi_dir) },
	{ "spot_poll_interval", K_SECONDS, 1, 3600, F(spot_poll_ms) },
	{ NULL, 0, 0, 0, 0 },
};

static const char *const attributions[] = {
	[JT_ATTR_ALLOCATION] = "allocation", [JT_ATTR_USAGE] = "usage", NULL
};

/* Prices: up to a million a node-hour; 0 is unset (doc/cost.md). */
static const struct key_def cost_keys[] = {
	{ "currency", K_CURRENCY, 0, 0, F(cost_currency) },
	{ "node_hour", K_FLOAT, 0, 1e6, F(cost_node_hour) },
	{ "core_hour", K_FLOAT, 0, 1e6, F(cost_core_hour) },
	{ "gib_hour", K_FLOAT, 0, 1e6, F(cost_gib_hour) },
	{ "gpu_hour", K_FLOAT, 0, 1e6, F(cost_gpu_hour) },
	{ "prices_file", K_OPTPATH, 0, 0, F(cost_prices_file) },
	{ "attribution", K_ATTRIBUTION, 0, 0, F(cost_attribution) },
	{ "node_cpus", K_INT, 0, 1048576, F(cost_node_cpus) },
	{ "node_mem_gib", K_FLOAT, 0, 1048576, F(cost_node_mem_gib) },
	{ "node_gpus", K_INT, 0, 4096, F(cost_node_gpus) },
	{ NULL, 0, 0, 0, 0 },
};

static const struct key_def waste_keys[] = {
	{ "cpu_efficiency_below", K_FLOAT, 0, 1, F(waste_cpu_below) },
	{ "memory_used_below", K_FLOAT, 0, 1, F(waste_mem_below) },
	{ "time_used_below", K_FLOAT, 0, 1, F(waste_time_below) },
	{ "time_min_elapsed", K_FLOAT, 0, 31622400, F(waste_time_min_s) },
	{ NULL, 0, 0, 0, 0 },
};

static const struct key_def idle_keys[] = {
	{ "after", K_FLOAT, 0.01, 527040, F(idle_after_min) },
	{ "cpu_below", K_FLOAT, 0, 1, F(idle_cpu_below) },
	{ NULL, 0, 0, 0, 0 },
};

static const struct key_def signals_keys[] = {
	{ "stall_after", K_SECONDS, 1, 604800, F(signals_stall_after_ms) },
	{ "io_window", K_SECONDS, 1, 86400, F(signals_io_window_ms) },
	{ "io_above", K_FLOAT, 0.01, 1, F(signals_io_above) },
	{ "slower_factor", K_FLOAT, 1, 1000, F(signals_slower_factor) },
	{ "slower_min_runs", K_INT, 1, 1000, F(signals_slower_min_runs) },
	{ "memory_near", K_FLOAT, 0.01, 1, F(signals_memory_near) },
	{ NULL, 0, 0, 0, 0 },
};

static const struct group_def groups[] = {
	{ "log", log_keys },
	{ "agent", agent_keys },
	{ "rules", rules_keys },
	{ "collector", collector_keys },
	{ "store", store_keys },
	{ "spool", spool_keys },
	{ "cloud", cloud_keys },
	{ "docker", docker_keys },
	{ "cost", cost_keys },
	{ "waste", waste_keys },
	{ "idle", idle_keys },
	{ "signals", signals_keys },
	{ "sinks", NULL },	/* a list of sink groups, see apply_sinks() */
	{ NULL, NULL },
};

/* Keys of one sink group; off is into struct jt_sink_config. */
enum sink_key_kind { S_TYPE, S_NAME, S_URL, S_DB, S_FILE, S_HEADERS,
		     S_INT, S_SECONDS, S_BOOL };

struct sink_key_def {
	const char *name;
	enum sink_key_kind kind;
	double lo, hi;
	size_t off;
	unsigned types;		/* bit per enum jt_sink_type that accepts it */
};

#define SF(field) offsetof(struct jt_sink_config, field)
#define T_CH (1u << JT_SINK_CLICKHOUSE)
#define T_HTTP (1u << JT_SINK_HTTP)
#define T_NET (T_CH | T_HTTP)

static const struct sink_key_def sink_keys[] = {
	{ "type", S_TYPE, 0, 0, SF(type), T_NET },
	{ "name", S_NAME, 0, 0, SF(name), T_NET },
	{ "url", S_URL, 0, 0, SF(url), T_NET },
	{ "database", S_DB, 0, 0, SF(database), T_CH },
	{ "credentials_file", S_FILE, 0, 0, SF(credentials_file), T_NET },
	{ "headers", S_HEADERS, 0, 0, SF(headers), T_HTTP },
	{ "batch_records", S_INT, 1, 1000000, SF(batch_records), T_NET },
	{ "batch_age", S_SECONDS, 0.01, 3600, SF(batch_age_ms), T_NET },
	{ "timeout", S_SECONDS, 0.1, 600, SF(timeout_ms), T_NET },
	{ "retry_max", S_SECONDS, 0.1, 3600, SF(retry_max_ms), T_NET },
	{ "gzip", S_BOOL, 0, 0, SF(gzip), T_NET },
	{ "tls_verify", S_BOOL, 0, 0, SF(tls_verify), T_NET },
	{ "tls_ca_file", S_FILE, 0, 0, SF(tls_ca_file), T_NET },
	{ "tls_cert", S_FILE, 0, 0, SF(tls_cert), T_NET },
	{ "tls_key", S_FILE, 0, 0, SF(tls_key), T_NET },
	{ NULL, 0, 0, 0, 0, 0 },
};

static const char *const sink_type_names[] = {
	[JT_SINK_SQLITE] = "sqlite",
	[JT_SINK_CLICKHOUSE] = "clickhouse",
	[JT_SINK_HTTP] = "http",
};

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

/* Write the names of a key table, comma separated, into buf. */
static void key_list(const struct key_def *keys, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (; keys->name && used < len; keys++)
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

/* The words an enumerated key accepts, NULL-terminated. */
static const char *const *words_of(enum key_kind kind)
{
	return kind == K_IMDS_MODE ? imds_modes :
	       kind == K_RECORD ? record_modes : attributions;
}

/* Store the index of word v of k's words; a bad() error if none. */
static int apply_word(struct parse_ctx *p, const config_setting_t *s,
		      const char *g, const struct key_def *k, const char *v,
		      int *out)
{
	const char *const *w = words_of(k->kind);
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

/* Check and store a string-valued key (path, level or hostname). */
static int apply_string(struct parse_ctx *p, const config_setting_t *s,
			const char *g, const struct key_def *k,
			struct jt_config *c)
{
	char **slot = (char **)((char *)c + k->off);
	const char *v;

	if (config_setting_type(s) != CONFIG_TYPE_STRING)
		return bad(p, s, "%s.%s: expected a string, got %s", g, k->name,
			   type_name(config_setting_type(s)));
	v = config_setting_get_string(s);

	switch (k->kind) {
	case K_IMDS_MODE:
	case K_RECORD:
	case K_ATTRIBUTION: {
		int i = 0, err = apply_word(p, s, g, k, v, &i);

		if (!err && k->kind == K_IMDS_MODE)
			c->imds_mode = i;
		else if (!err && k->kind == K_RECORD)
			c->record_mode = i;
		else if (!err)
			c->cost_attribution = i;
		return err;
	}
	case K_CURRENCY: {
		size_t n = strlen(v);

		if (!n || n >= JT_CURRENCY_MAX)
			return bad(p, s, "%s.%s: 1 to %d letters (\"USD\"), got \"%s\"",
				   g, k->name, JT_CURRENCY_MAX - 1, v);
		for (const char *q = v; *q; q++)
			if (!isalpha((unsigned char)*q))
				return bad(p, s, "%s.%s: only letters (\"USD\"), got \"%s\"",
					   g, k->name, v);
		break;
	}
	case K_IMDS_URL: {
		char why[128];

		if (netaddr_url(v, NULL, why, sizeof(why)))
			return bad(p, s, "%s.%s: %s, got \"%s\"", g, k->name,
				   why, v);
		break;
	}
	case K_LEVEL:
		if (log_level_parse(v, &c->log_level) < 0)
			return bad(p, s,
				   "%s.%s: must be one of error, warn, info, debug, got \"%s\"",
				   g, k->name, v);
		return 0;
	case K_OPTPATH:
		if (!v[0])
			break;
		/* fall through */
	case K_PATH:
		if (v[0] != '/')
			return bad(p, s, "%s.%s: must be an absolute path, got \"%s\"",
				   g, k->name, v);
		if (strlen(v) >= PATH_MAX)
			return bad(p, s, "%s.%s: path is longer than %d bytes",
				   g, k->name, PATH_MAX - 1);
		break;
	case K_HOST:
		if (strlen(v) > HOSTNAME_MAX)
			return bad(p, s, "%s.%s: longer than %d characters",
				   g, k->name, HOSTNAME_MAX);
		for (const char *q = v; *q; q++)
			if ((unsigned char)*q <= ' ' || *q == 0x7f)
				return bad(p, s,
					   "%s.%s: must not contain spaces or control characters",
					   g, k->name);
		break;
	default:
		break;
	}
	/* the URL's trailing '/' goes too: paths are appended to it */
	return set_string(slot, v, k->kind == K_PATH || k->kind == K_OPTPATH ||
			  k->kind == K_IMDS_URL);
}

/* Check and store one key of a group into *c. */
static int apply_key(struct parse_ctx *p, const config_setting_t *s,
		     const char *g, const struct key_def *k,
		     struct jt_config *c)
{
	void *field = (char *)c + k->off;

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
	default:
		return apply_string(p, s, g, k, c);
	}
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
			key_list(g->keys, valid, sizeof(valid));
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
	free(s->name);
	free(s->url);
	free(s->database);
	free(s->credentials_file);
	free(s->tls_ca_file);
	free(s->tls_cert);
	free(s->tls_key);
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

/* A sink's defaults (strings allocated later, when set or at the end). */
static void sink_defaults(struct jt_sink_config *s)
{
	memset(s, 0, sizeof(*s));
	s->type = JT_SINK_HTTP;
	s->batch_records = 5000;
	s->batch_age_ms = 1000;
	s->timeout_ms = 10000;
	s->retry_max_ms = 60000;
	s->tls_verify = true;
}

/* Check a sink string key's value; returns 0 or a bad() error. */
static int check_sink_string(struct parse_ctx *p, const config_setting_t *s,
			     const struct sink_key_def *k, const char *v)
{
	size_t n = strlen(v);

	switch (k->kind) {
	case S_NAME:
		if (!n || n > SINK_NAME_MAX)
			return bad(p, s, "sinks.name: 1 to %d characters, got \"%s\"",
				   SINK_NAME_MAX, v);
		for (const char *q = v; *q; q++)
			if (!isalnum((unsigned char)*q) && *q != '_' &&
			    *q != '-')
				return bad(p, s, "sinks.name: only letters, digits, '_' and '-', got \"%s\"",
					   v);
		return 0;
	case S_URL:
		if (strncmp(v, "http://", 7) != 0 &&
		    strncmp(v, "https://", 8) != 0)
			return bad(p, s, "sinks.url: must start with http:// or https://, got \"%s\"",
				   v);
		for (const char *q = v; *q; q++)
			if ((unsigned char)*q <= ' ' || *q == 0x7f)
				return bad(p, s, "sinks.url: must not contain spaces or control characters");
		return 0;
	case S_DB:
		if (!n || n > 64)
			return bad(p, s, "sinks.database: 1 to 64 characters");
		for (const char *q = v; *q; q++)
			if (!isalnum((unsigned char)*q) && *q != '_')
				return bad(p, s, "sinks.database: only letters, digits and '_', got \"%s\"",
					   v);
		return 0;
	case S_FILE:
		if (n && v[0] != '/')
			return bad(p, s, "sinks.%s: must be an absolute path, got \"%s\"",
				   k->name, v);
		return 0;
	default:
		return 0;
	}
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

/* Parse one key of a sink group into d. */
static int apply_sink_key(struct parse_ctx *p, const config_setting_t *s,
			  const struct sink_key_def *k,
			  struct jt_sink_config *d)
{
	struct key_def kd = { k->name, K_INT, k->lo, k->hi, 0 };
	void *field = (char *)d + k->off;
	const char *v;
	int err;

	switch (k->kind) {
	case S_INT:
		return apply_int(p, s, "sinks", &kd, field);
	case S_SECONDS:
		return apply_seconds(p, s, "sinks", &kd, field);
	case S_BOOL:
		if (config_setting_type(s) != CONFIG_TYPE_BOOL)
			return bad(p, s, "sinks.%s: expected a boolean (true or false), got %s",
				   k->name, type_name(config_setting_type(s)));
		*(bool *)field = config_setting_get_bool(s);
		return 0;
	case S_HEADERS:
		return apply_headers(p, s, d);
	default:
		break;
	}
	if (config_setting_type(s) != CONFIG_TYPE_STRING)
		return bad(p, s, "sinks.%s: expected a string, got %s", k->name,
			   type_name(config_setting_type(s)));
	v = config_setting_get_string(s);
	if (k->kind == S_TYPE) {
		if (!strcmp(v, "clickhouse"))
			d->type = JT_SINK_CLICKHOUSE;
		else if (!strcmp(v, "http"))
			d->type = JT_SINK_HTTP;
		else
			return bad(p, s, "sinks.type: must be \"clickhouse\" or \"http\", got \"%s\"%s",
				   v, !strcmp(v, "sqlite") ?
				   " (the SQLite store is set up in store { })" : "");
		return 0;
	}
	err = check_sink_string(p, s, k, v);
	if (err)
		return err;
	return set_string((char **)field, v, k->kind == S_FILE);
}

/* Parse one sink group into d (defaults first, type read first). */
static int apply_sink(struct parse_ctx *p, const config_setting_t *gs,
		      struct jt_sink_config *d)
{
	const config_setting_t *ts = config_setting_get_member(gs, "type");
	int n = config_setting_length(gs);
	int err;

	sink_defaults(d);
	d->line = (int)config_setting_source_line(gs);
	if (!ts)
		return bad(p, gs, "sinks: every sink needs type = \"clickhouse\" or \"http\"");
	err = apply_sink_key(p, ts, &sink_keys[0], d);
	if (err)
		return err;
	for (int i = 0; i < n; i++) {
		const config_setting_t *s = config_setting_get_elem(gs, i);
		const char *name = config_setting_name(s);
		const struct sink_key_def *k;
		char valid[512];
		size_t used = 0;

		for (k = sink_keys; k->name; k++)
			if (name && !strcmp(k->name, name))
				break;
		if (!k->name || !(k->types & (1u << d->type))) {
			valid[0] = '\0';
			for (k = sink_keys; k->name && used < sizeof(valid);
			     k++)
				if (k->types & (1u << d->type))
					used += snprintf(valid + used,
							 sizeof(valid) - used,
							 "%s%s",
							 used ? ", " : "",
							 k->name);
			return bad(p, s, "unknown key \"%s\" for a %s sink; valid keys: %s",
				   name ? name : "?",
				   sink_type_names[d->type], valid);
		}
		if (k->kind == S_TYPE)
			continue;
		err = apply_sink_key(p, s, k, d);
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

/* strdup that keeps NULL; false on ENOMEM. */
static bool dup_opt(char **slot, const char *v)
{
	*slot = v ? strdup(v) : NULL;
	return !v || *slot;
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
		bool ok;

		*b = *a;
		b->headers = a->n_headers ? calloc(a->n_headers,
						   sizeof(char *)) : NULL;
		b->n_headers = 0;
		dst->n_sinks++;
		ok = dup_opt(&b->name, a->name) & dup_opt(&b->url, a->url) &
		     dup_opt(&b->database, a->database) &
		     dup_opt(&b->credentials_file, a->credentials_file) &
		     dup_opt(&b->tls_ca_file, a->tls_ca_file) &
		     dup_opt(&b->tls_cert, a->tls_cert) &
		     dup_opt(&b->tls_key, a->tls_key);
		if (!ok || (a->n_headers && !b->headers))
			return -ENOMEM;
		for (size_t k = 0; k < a->n_headers; k++) {
			if (!dup_opt(&b->headers[k], a->headers[k]))
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
		if (!g->keys)
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
	char **dstr[] = { &dst->source, &dst->state_dir, &dst->run_dir,
			  &dst->rules_dir, &dst->hostname, &dst->sqlite_path,
			  &dst->control_group, &dst->reader_group,
			  &dst->spool_dir, &dst->imds_url, &dst->dmi_dir,
			  &dst->docker_socket, &dst->cost_currency,
			  &dst->cost_prices_file };

	*dst = *src;
	if (copy_sinks(dst, src) < 0) {
		for (size_t j = 0; j < sizeof(dstr) / sizeof(dstr[0]); j++)
			*dstr[j] = NULL;
		config_free(dst);
		return -ENOMEM;
	}
	for (size_t i = 0; i < sizeof(dstr) / sizeof(dstr[0]); i++) {
		if (*dstr[i] && !(*dstr[i] = strdup(*dstr[i]))) {
			for (size_t j = i; j < sizeof(dstr) / sizeof(dstr[0]); j++)
				*dstr[j] = NULL;
			config_free(dst);
			return -ENOMEM;
		}
	}
	return 0;
}

/* Fill *c with every default (allocates strings). */
int config_defaults(struct jt_config *c)
{
	memset(c, 0, sizeof(*c));
	c->log_level = LOG_LVL_INFO;
	c->log_syslog = false;
	c->state_dir = strdup(JT_LOCALSTATEDIR "/lib/jobtrace");
	c->run_dir = strdup(JT_RUNSTATEDIR "/jobtrace");
	c->rules_dir = strdup(JT_PKGDATADIR "/lua-rules");
	c->hostname = strdup("");
	c->control_group = strdup("");
	c->reader_group = strdup("");
	c->max_conn_per_user = 8;
	c->max_connections = 64;
	c->rules_deadline_ms = 5;
	c->sample_interval_ms = 10000;
	c->first_sample_ms = 1000;
	c->ringbuf_kib = 8192;
	c->max_tracked = 131072;
	c->argv_max_bytes = 2048;
	c->delay_accounting = true;
	c->snakemake_log = true;
	c->sqlite_path = c->state_dir ? join_path(c->state_dir, SQLITE_NAME) :
					NULL;
	c->store_enabled = true;
	c->flush_interval_ms = 1000;
	c->flush_records = 1000;
	c->store_retention_days = 30;
	c->store_max_mib = 1024;
	c->spool_dir = c->state_dir ? join_path(c->state_dir, SPOOL_NAME) :
				      NULL;
	c->spool_max_mib = 1024;
	c->spool_segment_kib = 16384;
	c->spool_sync_ms = 200;
	c->imds_mode = JT_IMDS_AUTO;
	c->imds_url = strdup(CONFIG_IMDS_URL);
	c->dmi_dir = strdup(CONFIG_DMI_DIR);
	c->spot_poll_ms = 5000;
	c->docker_enabled = true;
	c->docker_socket = strdup("/var/run/docker.sock");
	c->docker_timeout_ms = 2000;
	c->docker_end_grace_ms = 10000;
	c->cost_currency = strdup("USD");
	c->cost_prices_file = strdup("");
	c->cost_attribution = JT_ATTR_ALLOCATION;
	c->waste_cpu_below = 0.65;
	c->waste_mem_below = 0.70;
	c->waste_time_below = 0.60;
	c->waste_time_min_s = 300;
	c->idle_after_min = 30;
	c->idle_cpu_below = 0.05;
	c->signals_stall_after_ms = 120000;
	c->signals_io_window_ms = 60000;
	c->signals_io_above = 0.5;
	c->signals_slower_factor = 2;
	c->signals_slower_min_runs = 3;
	c->signals_memory_near = 0.9;
	if (!c->state_dir || !c->run_dir || !c->rules_dir || !c->hostname ||
	    !c->sqlite_path || !c->control_group || !c->reader_group ||
	    !c->spool_dir || !c->imds_url || !c->dmi_dir || !c->docker_socket ||
	    !c->cost_currency || !c->cost_prices_file) {
		config_free(c);
		return -ENOMEM;
	}
	return 0;
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
	free(c->state_dir);
	free(c->run_dir);
	free(c->rules_dir);
	free(c->hostname);
	free(c->control_group);
	free(c->reader_group);
	free(c->sqlite_path);
	free(c->spool_dir);
	free(c->imds_url);
	free(c->dmi_dir);
	free(c->docker_socket);
	free(c->cost_currency);
	free(c->cost_prices_file);
	c->cost_currency = NULL;
	c->cost_prices_file = NULL;
	sinks_free(c);
	c->docker_socket = NULL;
	c->spool_dir = NULL;
	c->source = NULL;
	c->state_dir = NULL;
	c->run_dir = NULL;
	c->rules_dir = NULL;
	c->hostname = NULL;
	c->control_group = NULL;
	c->reader_group = NULL;
	c->sqlite_path = NULL;
	c->imds_url = NULL;
	c->dmi_dir = NULL;
}

/* Move the cost, waste and idle groups of src into dst. */
void config_take_cost(struct jt_config *dst, struct jt_config *src)
{
	free(dst->cost_currency);
	free(dst->cost_prices_file);
	dst->cost_currency = src->cost_currency;
	dst->cost_prices_file = src->cost_prices_file;
	src->cost_currency = src->cost_prices_file = NULL;
	dst->cost_node_hour = src->cost_node_hour;
	dst->cost_core_hour = src->cost_core_hour;
	dst->cost_gib_hour = src->cost_gib_hour;
	dst->cost_gpu_hour = src->cost_gpu_hour;
	dst->cost_attribution = src->cost_attribution;
	dst->cost_node_cpus = src->cost_node_cpus;
	dst->cost_node_mem_gib = src->cost_node_mem_gib;
	dst->cost_node_gpus = src->cost_node_gpus;
	dst->waste_cpu_below = src->waste_cpu_below;
	dst->waste_mem_below = src->waste_mem_below;
	dst->waste_time_below = src->waste_time_below;
	dst->waste_time_min_s = src->waste_time_min_s;
	dst->idle_after_min = src->idle_after_min;
	dst->idle_cpu_below = src->idle_cpu_below;
	dst->signals_stall_after_ms = src->signals_stall_after_ms;
	dst->signals_io_window_ms = src->signals_io_window_ms;
	dst->signals_io_above = src->signals_io_above;
	dst->signals_slower_factor = src->signals_slower_factor;
	dst->signals_slower_min_runs = src->signals_slower_min_runs;
	dst->signals_memory_near = src->signals_memory_near;
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

/* Print every effective key = value, in libconfig syntax. */
void config_dump(const struct jt_config *c, FILE *out)
{
	static const char *levels[] = { "error", "warn", "info", "debug" };
	unsigned lvl = c->log_level <= LOG_LVL_DEBUG ? c->log_level :
						       LOG_LVL_INFO;

	fprintf(out, "# jobtrace effective configuration (from %s)\n",
		c->source ? c->source : "built-in defaults");
	fprintf(out, "log = {\n\tlevel = \"%s\";\n\tsyslog = %s;\n};\n",
		levels[lvl], c->log_syslog ? "true" : "false");

	fprintf(out, "agent = {\n\tstate_dir = ");
	dump_string(out, c->state_dir);
	fprintf(out, ";\n\trun_dir = ");
	dump_string(out, c->run_dir);
	fprintf(out, ";\n\trules_dir = ");
	dump_string(out, c->rules_dir);
	fprintf(out, ";\n\thostname = ");
	dump_string(out, c->hostname);
	fprintf(out, ";%s\n\tcontrol_group = ",
		c->hostname && c->hostname[0] ? "" : "\t# empty: gethostname()");
	dump_string(out, c->control_group);
	fprintf(out, ";%s\n\treader_group = ",
		c->control_group && c->control_group[0] ? "" : "\t# empty: root only");
	dump_string(out, c->reader_group);
	fprintf(out, ";%s\n",
		c->reader_group && c->reader_group[0] ? "" : "\t# empty: none");
	fprintf(out, "\tmax_connections_per_user = %u;\n", c->max_conn_per_user);
	fprintf(out, "\tmax_connections = %u;\n};\n", c->max_connections);

	fprintf(out, "rules = {\n\tdeadline_ms = %u;\n};\n", c->rules_deadline_ms);

	fprintf(out, "collector = {\n");
	fprintf(out, "\tsample_interval = %u.%03u;\n",
		c->sample_interval_ms / 1000, c->sample_interval_ms % 1000);
	fprintf(out, "\tfirst_sample = %u.%03u;\n",
		c->first_sample_ms / 1000, c->first_sample_ms % 1000);
	fprintf(out, "\trecord = \"%s\";\n", record_modes[c->record_mode]);
	fprintf(out, "\tringbuf_size_kib = %u;\n", c->ringbuf_kib);
	fprintf(out, "\tmax_tracked = %u;\n", c->max_tracked);
	fprintf(out, "\targv_max_bytes = %u;\n", c->argv_max_bytes);
	fprintf(out, "\tdelay_accounting = %s;\n",
		c->delay_accounting ? "true" : "false");
	fprintf(out, "\tsnakemake_log = %s;\n};\n",
		c->snakemake_log ? "true" : "false");

	fprintf(out, "store = {\n\tenabled = %s;\n\tsqlite_path = ",
		c->store_enabled ? "true" : "false");
	dump_string(out, c->sqlite_path);
	fprintf(out, ";\n\tflush_interval = %u.%03u;\n",
		c->flush_interval_ms / 1000, c->flush_interval_ms % 1000);
	fprintf(out, "\tflush_records = %u;\n", c->flush_records);
	fprintf(out, "\tretention = ");
	dump_number(out, c->store_retention_days);
	fprintf(out, ";%s\n", c->store_retention_days ? "" : "\t# 0: for ever");
	fprintf(out, "\tmax_size_mib = %u;%s\n};\n", c->store_max_mib,
		c->store_max_mib ? "" : "\t# 0: no cap");

	fprintf(out, "spool = {\n\tdir = ");
	dump_string(out, c->spool_dir);
	fprintf(out, ";\n\tmax_size_mib = %u;\n", c->spool_max_mib);
	fprintf(out, "\tsegment_size_kib = %u;\n", c->spool_segment_kib);
	fprintf(out, "\tsync_interval = %u.%03u;\n};\n",
		c->spool_sync_ms / 1000, c->spool_sync_ms % 1000);

	fprintf(out, "cloud = {\n\timds = \"%s\";\n\timds_url = ",
		imds_modes[c->imds_mode]);
	dump_string(out, c->imds_url);
	fprintf(out, ";\n\tdmi_dir = ");
	dump_string(out, c->dmi_dir);
	fprintf(out, ";\n\tspot_poll_interval = %u.%03u;\n};\n",
		c->spot_poll_ms / 1000, c->spot_poll_ms % 1000);
	fprintf(out, "docker = {\n\tenabled = %s;\n\tsocket = ",
		c->docker_enabled ? "true" : "false");
	dump_string(out, c->docker_socket);
	fprintf(out, ";\n\ttimeout = %u.%03u;\n\tend_grace = %u.%03u;\n};\n",
		c->docker_timeout_ms / 1000, c->docker_timeout_ms % 1000,
		c->docker_end_grace_ms / 1000, c->docker_end_grace_ms % 1000);

	fprintf(out, "cost = {\n\tcurrency = ");
	dump_string(out, c->cost_currency);
	fprintf(out, ";\n\tnode_hour = ");
	dump_number(out, c->cost_node_hour);
	fprintf(out, ";\n\tcore_hour = ");
	dump_number(out, c->cost_core_hour);
	fprintf(out, ";\n\tgib_hour = ");
	dump_number(out, c->cost_gib_hour);
	fprintf(out, ";\n\tgpu_hour = ");
	dump_number(out, c->cost_gpu_hour);
	fprintf(out, ";\t# 0: unset\n\tprices_file = ");
	dump_string(out, c->cost_prices_file);
	fprintf(out, ";%s\n\tattribution = \"%s\";\n",
		c->cost_prices_file && c->cost_prices_file[0] ? "" :
		"\t# empty: none", attributions[c->cost_attribution]);
	fprintf(out, "\tnode_cpus = %u;\n\tnode_mem_gib = ", c->cost_node_cpus);
	dump_number(out, c->cost_node_mem_gib);
	fprintf(out, ";\n\tnode_gpus = %u;\t# 0 CPUs, 0 GiB: what the machine has\n};\n",
		c->cost_node_gpus);
	fprintf(out, "waste = {\n\tcpu_efficiency_below = ");
	dump_number(out, c->waste_cpu_below);
	fprintf(out, ";\n\tmemory_used_below = ");
	dump_number(out, c->waste_mem_below);
	fprintf(out, ";\n\ttime_used_below = ");
	dump_number(out, c->waste_time_below);
	fprintf(out, ";\n\ttime_min_elapsed = ");
	dump_number(out, c->waste_time_min_s);
	fprintf(out, ";\t# seconds\n};\nidle = {\n\tafter = ");
	dump_number(out, c->idle_after_min);
	fprintf(out, ";\t# minutes\n\tcpu_below = ");
	dump_number(out, c->idle_cpu_below);
	fprintf(out, ";\n};\nsignals = {\n\tstall_after = ");
	dump_number(out, c->signals_stall_after_ms / 1000.0);
	fprintf(out, ";\t# seconds\n\tio_window = ");
	dump_number(out, c->signals_io_window_ms / 1000.0);
	fprintf(out, ";\t# seconds\n\tio_above = ");
	dump_number(out, c->signals_io_above);
	fprintf(out, ";\n\tslower_factor = ");
	dump_number(out, c->signals_slower_factor);
	fprintf(out, ";\n\tslower_min_runs = %u;\n\tmemory_near = ",
		c->signals_slower_min_runs);
	dump_number(out, c->signals_memory_near);
	fprintf(out, ";\n};\n");

	fprintf(out, "sinks = (");
	for (size_t i = 0; i < c->n_sinks; i++) {
		const struct jt_sink_config *k = &c->sinks[i];

		fprintf(out, "%s\n\t{\n\t\ttype = \"%s\";\n\t\tname = ",
			i ? "," : "", sink_type_names[k->type]);
		dump_string(out, k->name);
		fprintf(out, ";\n\t\turl = ");
		dump_string(out, k->url);
		fprintf(out, ";\n");
		if (k->type == JT_SINK_CLICKHOUSE) {
			fprintf(out, "\t\tdatabase = ");
			dump_string(out, k->database);
			fprintf(out, ";\n\t\tcredentials_file = ");
			dump_string(out, k->credentials_file);
			fprintf(out, ";\n");
		}
		/* header values may be secrets: names only */
		for (size_t h = 0; h < k->n_headers; h++)
			fprintf(out, "\t\t# header: %.*s: (value not shown)\n",
				(int)strcspn(k->headers[h], ":"),
				k->headers[h]);
		fprintf(out, "\t\tbatch_records = %u;\n", k->batch_records);
		fprintf(out, "\t\tbatch_age = %u.%03u;\n",
			k->batch_age_ms / 1000, k->batch_age_ms % 1000);
		fprintf(out, "\t\ttimeout = %u.%03u;\n", k->timeout_ms / 1000,
			k->timeout_ms % 1000);
		fprintf(out, "\t\tretry_max = %u.%03u;\n",
			k->retry_max_ms / 1000, k->retry_max_ms % 1000);
		fprintf(out, "\t\tgzip = %s;\n\t\ttls_verify = %s;\n\t}",
			k->gzip ? "true" : "false",
			k->tls_verify ? "true" : "false");
	}
	fprintf(out, "%s);\n", c->n_sinks ? "\n" : "");
}
