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

#define SOCKET_NAME "jobtraced.sock"
#define SQLITE_NAME "jobtrace.db"
#define HOSTNAME_MAX 253

/* What one key accepts; lo/hi bound ints and floats (seconds). */
enum key_kind { K_INT, K_POW2, K_SECONDS, K_BOOL, K_PATH, K_LEVEL, K_HOST };

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
	{ NULL, 0, 0, 0, 0 },
};

static const struct key_def collector_keys[] = {
	{ "sample_interval", K_SECONDS, 0.1, 3600, F(sample_interval_ms) },
	{ "ringbuf_size_kib", K_POW2, 256, 1048576, F(ringbuf_kib) },
	{ "max_tracked", K_INT, 1024, 4194304, F(max_tracked) },
	{ "argv_max_bytes", K_INT, 64, 2048, F(argv_max_bytes) },
	{ "delay_accounting", K_BOOL, 0, 0, F(delay_accounting) },
	{ NULL, 0, 0, 0, 0 },
};

static const struct key_def store_keys[] = {
	{ "sqlite_path", K_PATH, 0, 0, F(sqlite_path) },
	{ "flush_interval", K_SECONDS, 0.05, 60, F(flush_interval_ms) },
	{ "flush_records", K_INT, 1, 100000, F(flush_records) },
	{ NULL, 0, 0, 0, 0 },
};

static const struct group_def groups[] = {
	{ "log", log_keys },
	{ "agent", agent_keys },
	{ "collector", collector_keys },
	{ "store", store_keys },
	{ NULL, NULL },
};

/* Parsing state shared by the helpers below. */
struct parse_ctx {
	const char *path;
	char *err;
	size_t errlen;
	bool sqlite_set;
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

/* Format a message into err, if the caller gave room for one. */
__attribute__((format(printf, 3, 4)))
static void seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
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
	seterr(p->err, p->errlen, "%s:%u: %s", file ? file : p->path,
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

/* Check and store a duration in seconds (int or float) as milliseconds. */
static int apply_seconds(struct parse_ctx *p, const config_setting_t *s,
			 const char *g, const struct key_def *k, unsigned *out)
{
	long long lit;
	double v;

	if (config_setting_type(s) == CONFIG_TYPE_INT)
		v = wrapped_literal(p, s, &lit) ? (double)lit :
						  config_setting_get_int(s);
	else if (config_setting_type(s) == CONFIG_TYPE_INT64)
		v = (double)config_setting_get_int64(s);
	else if (config_setting_type(s) == CONFIG_TYPE_FLOAT)
		v = config_setting_get_float(s);
	else
		return bad(p, s, "%s.%s: expected a number of seconds, got %s",
			   g, k->name, type_name(config_setting_type(s)));
	/* written so that NaN fails too */
	if (!(v >= k->lo && v <= k->hi))
		return bad(p, s, "%s.%s: must be between %g and %g seconds, got %g",
			   g, k->name, k->lo, k->hi, v);
	*out = (unsigned)(v * 1000.0 + 0.5);	/* v > 0 */
	return 0;
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
	case K_LEVEL:
		if (log_level_parse(v, &c->log_level) < 0)
			return bad(p, s,
				   "%s.%s: must be one of error, warn, info, debug, got \"%s\"",
				   g, k->name, v);
		return 0;
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
	return set_string(slot, v, k->kind == K_PATH);
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
	}
	return 0;
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
			  &dst->control_group };

	*dst = *src;
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
	c->sample_interval_ms = 10000;
	c->ringbuf_kib = 8192;
	c->max_tracked = 131072;
	c->argv_max_bytes = 2048;
	c->delay_accounting = true;
	c->sqlite_path = c->state_dir ? join_path(c->state_dir, SQLITE_NAME) :
					NULL;
	c->flush_interval_ms = 1000;
	c->flush_records = 1000;
	if (!c->state_dir || !c->run_dir || !c->rules_dir || !c->hostname ||
	    !c->sqlite_path || !c->control_group) {
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
 * Keep sqlite_path following state_dir unless the file chose one: if the
 * old value was the one derived from the old state_dir, derive it again.
 */
static int follow_state_dir(struct jt_config *tmp, const struct jt_config *old)
{
	char *derived, *fresh;

	if (!old->state_dir || !old->sqlite_path)
		return 0;
	derived = join_path(old->state_dir, SQLITE_NAME);
	if (!derived)
		return -ENOMEM;
	if (strcmp(derived, old->sqlite_path) != 0) {
		free(derived);
		return 0;
	}
	free(derived);
	fresh = join_path(tmp->state_dir, SQLITE_NAME);
	if (!fresh)
		return -ENOMEM;
	free(tmp->sqlite_path);
	tmp->sqlite_path = fresh;
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

	seterr(err, errlen, "%s", "");
	ret = check_readable(path);
	if (ret == -ENOENT && missing_ok)
		return c->state_dir ? 0 : config_defaults(c);
	if (ret < 0) {
		seterr(err, errlen, "%s: %s", path, strerror(-ret));
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
			seterr(err, errlen, "%s: %s", path, strerror(-ret));
		} else {
			ret = -EINVAL;
			seterr(err, errlen, "%s:%d: %s", file ? file : path,
			       config_error_line(&cfg),
			       config_error_text(&cfg));
		}
		goto out;
	}
	ret = apply_root(&p, &cfg, &tmp);
	if (ret < 0)
		goto out;

	if (!p.sqlite_set) {
		ret = follow_state_dir(&tmp, &base);
		if (ret < 0)
			goto nomem_cfg;
	}
	if (strlen(tmp.run_dir) + 1 + strlen(SOCKET_NAME) >=
	    sizeof(((struct sockaddr_un *)0)->sun_path)) {
		const config_setting_t *s = config_lookup(&cfg, "agent.run_dir");

		size_t max = sizeof(((struct sockaddr_un *)0)->sun_path) - 2 -
			     strlen(SOCKET_NAME);

		if (s)
			ret = bad(&p, s, "agent.run_dir: too long for the control socket (at most %zu characters)",
				  max);
		else
			seterr(err, errlen, "%s: agent.run_dir: too long for the control socket (at most %zu characters)",
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
	seterr(err, errlen, "%s: %s", path, strerror(ENOMEM));
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
	free(c->sqlite_path);
	c->source = NULL;
	c->state_dir = NULL;
	c->run_dir = NULL;
	c->rules_dir = NULL;
	c->hostname = NULL;
	c->control_group = NULL;
	c->sqlite_path = NULL;
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
	fprintf(out, ";%s\n};\n",
		c->control_group && c->control_group[0] ? "" : "\t# empty: root only");

	fprintf(out, "collector = {\n");
	fprintf(out, "\tsample_interval = %u.%03u;\n",
		c->sample_interval_ms / 1000, c->sample_interval_ms % 1000);
	fprintf(out, "\tringbuf_size_kib = %u;\n", c->ringbuf_kib);
	fprintf(out, "\tmax_tracked = %u;\n", c->max_tracked);
	fprintf(out, "\targv_max_bytes = %u;\n", c->argv_max_bytes);
	fprintf(out, "\tdelay_accounting = %s;\n};\n",
		c->delay_accounting ? "true" : "false");

	fprintf(out, "store = {\n\tsqlite_path = ");
	dump_string(out, c->sqlite_path);
	fprintf(out, ";\n\tflush_interval = %u.%03u;\n",
		c->flush_interval_ms / 1000, c->flush_interval_ms % 1000);
	fprintf(out, "\tflush_records = %u;\n};\n", c->flush_records);
}
