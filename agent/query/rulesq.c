// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rulesq.c - the fleet's rules in ClickHouse: a push inserts one row of
 * the rules table, the status reads its latest row and each host's
 * latest host record (rulesq.h).
 *
 * A bundle is any bytes (a tar), so the push sends it as TabSeparated in
 * the body of the INSERT, escaped as ClickHouse reads it, not as a literal
 * in the query.  The status reads the host records' `json` column, not
 * typed columns, so a fleet store whose host table was made before the
 * rules fields existed still answers.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "chschema.h"
#include "chsql.h"
#include "http.h"
#include "json.h"
#include "json_read.h"
#include "rulesq.h"
#include "util.h"

/* The most bytes a status answer may have (host records of a fleet). */
#define STATUS_ANSWER_MAX (256u << 20)

/* One exchange with a sink: its client and the URL to name. */
struct conn {
	struct http_client *http;
	char url[256];
	const char *db;
};

/* Append a C string to b. */
static void put(struct jbuf *b, const char *s)
{
	jbuf_put(b, s, strlen(s));
}

/* Open a client for the sink s; 0 or -errno with err set. */
static int conn_open(struct conn *c, const struct jt_sink_config *s,
		     char *err, size_t errlen)
{
	char msg[512];
	int e;

	c->db = s->database;
	util_url_public(s->url, c->url, sizeof(c->url));
	e = http_client_new(s, &c->http, msg, sizeof(msg));
	if (e)
		util_seterr(err, errlen, "clickhouse %s: %s", c->url, msg);
	return e;
}

/* Append a UTC time as DateTime's "YYYY-MM-DD hh:mm:ss" to b. */
static void put_datetime(struct jbuf *b, uint64_t ns)
{
	char t[40];

	json_format_time(ns, t, sizeof(t));
	t[10] = ' ';
	jbuf_put(b, t, 19);
}

/* Insert one bundle into the rules table (see rulesq.h). */
int rulesq_push(const struct jt_sink_config *s, const struct rulesq_push *p,
		char *err, size_t errlen)
{
	struct conn c = { 0 };
	struct jbuf sql, row;
	char num[24];
	int e;

	jbuf_init(&sql);
	jbuf_init(&row);
	e = conn_open(&c, s, err, errlen);
	if (e)
		goto cleanup;
	put(&sql, "INSERT INTO ");
	chsql_table(&sql, c.db, CHSCHEMA_RULES_TABLE);
	put(&sql, " (" CHSCHEMA_RULES_COLUMNS ") FORMAT TabSeparated");
	chsql_tsv_escape(&row, p->version, strlen(p->version));
	jbuf_put(&row, "\t", 1);
	chsql_tsv_escape(&row, p->sha256, strlen(p->sha256));
	jbuf_put(&row, "\t", 1);
	put_datetime(&row, p->when_ns);
	jbuf_put(&row, num, (size_t)snprintf(num, sizeof(num), "\t%u\t",
		 (unsigned)(p->when_ns / 1000 % 1000000)));
	chsql_tsv_escape(&row, p->by, strlen(p->by));
	jbuf_put(&row, "\t", 1);
	chsql_tsv_escape(&row, p->host, strlen(p->host));
	jbuf_put(&row, num, (size_t)snprintf(num, sizeof(num), "\t%zu\t",
		 p->len));
	chsql_tsv_escape(&row, p->tar, p->len);
	jbuf_put(&row, "\n", 1);
	if (sql.oom || row.oom) {
		util_seterr(err, errlen, "out of memory");
		e = -ENOMEM;
		goto cleanup;
	}
	e = chsql_run(c.http, c.url, jbuf_str(&sql), NULL, row.buf, row.len,
		      0, NULL, err, errlen);
cleanup:
	http_client_free(c.http);
	jbuf_free(&sql);
	jbuf_free(&row);
	return e;
}

/* Copy a string value (or null: "") into out, cut to size. */
static int str_value(struct jr *r, char *out, size_t size)
{
	struct jr_str s;
	struct jbuf tmp;
	const char *v;
	size_t n;
	int e;

	out[0] = '\0';
	if (jr_peek(r) != JR_STR)
		return jr_skip(r);
	e = jr_str(r, &s);
	if (e)
		return e;
	jbuf_init(&tmp);
	v = jr_str_jbuf(&s, &tmp, 0, &n);
	if (v)
		snprintf(out, size, "%.*s", (int)n, v);
	jbuf_free(&tmp);
	return v ? 0 : -ENOMEM;
}

/* The host record's rules object into n. */
static int rules_object(struct jr *r, struct rulesq_node *n)
{
	struct jr_str key;
	int e;

	if (jr_peek(r) != JR_OBJ)
		return jr_skip(r);
	e = jr_obj_open(r);
	while (!e && (e = jr_next_member(r, &key)) > 0) {
		if (jr_str_eq(&key, "version", 7))
			e = str_value(r, n->version, sizeof(n->version));
		else if (jr_str_eq(&key, "sha256", 6))
			e = str_value(r, n->sha256, sizeof(n->sha256));
		else if (jr_str_eq(&key, "source", 6))
			e = str_value(r, n->source, sizeof(n->source));
		else if (jr_str_eq(&key, "error", 5))
			e = str_value(r, n->error, sizeof(n->error));
		else
			e = jr_skip(r);
	}
	return e;
}

/* Parse one host record into n: 0, or -EINVAL. */
static int parse_host(const char *json, size_t len, struct rulesq_node *n)
{
	char type[16] = "";
	struct jr_str key;
	struct jr r;
	int e;

	memset(n, 0, sizeof(*n));
	jr_init(&r, json, len);
	e = jr_obj_open(&r);
	while (!e && (e = jr_next_member(&r, &key)) > 0) {
		if (jr_str_eq(&key, "type", 4))
			e = str_value(&r, type, sizeof(type));
		else if (jr_str_eq(&key, "host", 4))
			e = str_value(&r, n->host, sizeof(n->host));
		else if (jr_str_eq(&key, "time", 4))
			e = str_value(&r, n->time, sizeof(n->time));
		else if (jr_str_eq(&key, "rules", 5))
			e = rules_object(&r, n);
		else
			e = jr_skip(&r);
	}
	if (!e)
		e = jr_end(&r);
	if (e == -ENOMEM)
		return e;
	return e || strcmp(type, "host") || !n->host[0] ? -EINVAL : 0;
}

/* Add one host record's node (see rulesq.h). */
int rulesq_fleet_add_host(struct rulesq_fleet *f, const char *json,
			  size_t len)
{
	struct rulesq_node n;
	int e = parse_host(json, len, &n);

	if (e)
		return e;
	for (size_t i = 0; i < f->n; i++) {
		if (strcmp(f->nodes[i].host, n.host))
			continue;
		if (strcmp(n.time, f->nodes[i].time) > 0)
			f->nodes[i] = n;
		return 0;
	}
	if (f->n == f->cap) {
		size_t cap = f->cap ? 2 * f->cap : 16;
		struct rulesq_node *nodes = realloc(f->nodes,
						    cap * sizeof(*nodes));

		if (!nodes)
			return -ENOMEM;
		f->nodes = nodes;
		f->cap = cap;
	}
	f->nodes[f->n++] = n;
	return 0;
}

/* Order nodes by host name. */
static int by_host(const void *a, const void *b)
{
	return strcmp(((const struct rulesq_node *)a)->host,
		      ((const struct rulesq_node *)b)->host);
}

/* Sort the nodes; mark and count those behind and refused. */
void rulesq_fleet_finish(struct rulesq_fleet *f)
{
	if (f->n)
		qsort(f->nodes, f->n, sizeof(*f->nodes), by_host);
	f->behind = f->refused = f->elsewhere = 0;
	for (size_t i = 0; i < f->n; i++) {
		struct rulesq_node *n = &f->nodes[i];

		n->following = !strcmp(n->source, "clickhouse");
		n->behind = n->following && f->pushed &&
			    strcmp(n->sha256, f->sha256);
		n->refused = n->error[0] != '\0';
		f->behind += n->behind;
		f->refused += n->refused;
		f->elsewhere += !n->following;
	}
}

/* Read the latest row of the rules table into f. */
static int load_push(struct conn *c, struct rulesq_fleet *f,
		     struct jbuf *resp, char *err, size_t errlen)
{
	char *p, *v[6];
	struct jbuf sql;
	int e;

	jbuf_init(&sql);
	put(&sql, "SELECT version, sha256, toUnixTimestamp(pushed_at),"
	    " pushed_at_us, pushed_by, host FROM ");
	chsql_table(&sql, c->db, CHSCHEMA_RULES_TABLE);
	put(&sql, " " CHSCHEMA_RULES_LATEST " FORMAT TabSeparated");
	jbuf_reset(resp);
	e = sql.oom ? -ENOMEM : chsql_run(c->http, c->url, jbuf_str(&sql),
					  NULL, NULL, 0, 1u << 20, resp,
					  err, errlen);
	jbuf_free(&sql);
	if (e)
		return e;
	p = (char *)jbuf_str(resp);
	if (chsql_row(&p, resp->buf + resp->len, v, 6) != 6)
		return 0;	/* nothing pushed yet */
	f->pushed = true;
	util_strlcpy(f->version, v[0], sizeof(f->version));
	util_strlcpy(f->sha256, v[1], sizeof(f->sha256));
	json_format_time(strtoull(v[2], NULL, 10) * 1000000000ull +
			 strtoull(v[3], NULL, 10) * 1000ull, f->pushed_at,
			 sizeof(f->pushed_at));
	util_strlcpy(f->pushed_by, v[4], sizeof(f->pushed_by));
	util_strlcpy(f->pushed_from, v[5], sizeof(f->pushed_from));
	return 0;
}

/* Read each host's latest host record into f. */
static int load_hosts(struct conn *c, struct rulesq_fleet *f,
		      struct jbuf *resp, char *err, size_t errlen)
{
	char *p, *end, *v[1];
	struct jbuf sql;
	int e;

	jbuf_init(&sql);
	put(&sql, "SELECT json FROM ");
	chsql_table(&sql, c->db, "host");
	put(&sql, " ORDER BY time DESC, time_us DESC LIMIT 1 BY host"
	    " FORMAT TabSeparated");
	jbuf_reset(resp);
	e = sql.oom ? -ENOMEM : chsql_run(c->http, c->url, jbuf_str(&sql),
					  NULL, NULL, 0, STATUS_ANSWER_MAX,
					  resp, err, errlen);
	jbuf_free(&sql);
	if (e)
		return e;
	p = (char *)jbuf_str(resp);
	end = resp->buf + resp->len;
	while (chsql_row(&p, end, v, 1) == 1) {
		e = rulesq_fleet_add_host(f, v[0], strlen(v[0]));
		if (e == -ENOMEM)
			return e;
	}
	return 0;
}

/* Fill f from the sink s (see rulesq.h). */
int rulesq_fleet_load(const struct jt_sink_config *s, struct rulesq_fleet *f,
		      char *err, size_t errlen)
{
	struct conn c = { 0 };
	struct jbuf resp;
	int e;

	jbuf_init(&resp);
	e = conn_open(&c, s, err, errlen);
	if (!e)
		e = load_push(&c, f, &resp, err, errlen);
	if (!e)
		e = load_hosts(&c, f, &resp, err, errlen);
	if (e == -ENOMEM)
		util_seterr(err, errlen, "out of memory");
	if (!e)
		rulesq_fleet_finish(f);
	http_client_free(c.http);
	jbuf_free(&resp);
	return e;
}

/* A node's state in one word. */
static const char *node_state(const struct rulesq_fleet *f,
			      const struct rulesq_node *n)
{
	if (!n->following)
		return n->source[0] ? "another source" : "no rules source said";
	if (n->refused)
		return n->behind ? "refused" : "current, refused a later bundle";
	if (!n->sha256[0])
		return "no bundle";
	if (n->behind)
		return "behind";
	return f->pushed ? "current" : "-";
}

/* Print f as one JSON object. */
static void print_json(const struct rulesq_fleet *f, struct jbuf *b)
{
	json_obj_open(b);
	json_key(b, "latest");
	if (f->pushed) {
		json_obj_open(b);
		json_kv_str(b, "version", f->version);
		json_kv_str(b, "sha256", f->sha256);
		json_kv_str(b, "pushed_at", f->pushed_at);
		json_kv_str(b, "pushed_by", f->pushed_by);
		json_kv_str(b, "pushed_from", f->pushed_from);
		json_obj_close(b);
	} else {
		json_null(b);
	}
	json_kv_u64(b, "nodes_total", f->n);
	json_kv_u64(b, "nodes_behind", f->behind);
	json_kv_u64(b, "nodes_refused", f->refused);
	json_kv_u64(b, "nodes_elsewhere", f->elsewhere);
	json_key(b, "nodes");
	json_arr_open(b);
	for (size_t i = 0; i < f->n; i++) {
		const struct rulesq_node *n = &f->nodes[i];

		json_obj_open(b);
		json_kv_str(b, "node", n->host);
		json_kv_str(b, "version", n->version);
		json_kv_str(b, "sha256", n->sha256);
		json_kv_str(b, "source", n->source);
		json_kv_str(b, "error", n->error);
		json_kv_str(b, "time", n->time);
		json_kv_bool(b, "following", n->following);
		json_kv_bool(b, "behind", n->behind);
		json_kv_bool(b, "refused", n->refused);
		json_obj_close(b);
	}
	json_arr_close(b);
	json_obj_close(b);
	jbuf_put(b, "\n", 1);
}

/* Print one node's line; values made printable. */
static void print_node(const struct rulesq_fleet *f,
		       const struct rulesq_node *n, FILE *out)
{
	struct rulesq_node c = *n;

	fprintf(out, "%-20s %-24s %-12.12s %-28s %s\n",
		util_printable(c.host), c.version[0] ?
		util_printable(c.version) : "-", c.sha256[0] ?
		util_printable(c.sha256) : "-", util_printable(c.time),
		node_state(f, n));
	if (c.source[0])
		fprintf(out, "%20s source: %s\n", "", util_printable(c.source));
	if (c.error[0])
		fprintf(out, "%20s error:  %s\n", "", util_printable(c.error));
}

/* Print f as text or JSON (see rulesq.h). */
int rulesq_fleet_print(const struct rulesq_fleet *f, FILE *out, bool json)
{
	struct rulesq_fleet c = *f;
	struct jbuf b;
	int e = 0;

	if (json) {
		jbuf_init(&b);
		print_json(f, &b);
		if (b.oom || fwrite(b.buf, 1, b.len, out) != b.len)
			e = -EIO;
		jbuf_free(&b);
		return e;
	}
	if (f->pushed)
		fprintf(out, "latest push: version %s, sha256 %s\n"
			"             pushed %s by %s from %s\n",
			util_printable(c.version), util_printable(c.sha256),
			util_printable(c.pushed_at),
			util_printable(c.pushed_by),
			util_printable(c.pushed_from));
	else
		fputs("latest push: none (the rules table is empty)\n", out);
	fprintf(out, "nodes: %zu, %zu behind, %zu refused a bundle, %zu on"
		" another rules source\n\n", f->n, f->behind, f->refused,
		f->elsewhere);
	if (f->n)
		fprintf(out, "%-20s %-24s %-12s %-28s %s\n", "NODE", "VERSION",
			"SHA256", "RECORDED", "STATE");
	for (size_t i = 0; i < f->n; i++)
		print_node(f, &f->nodes[i], out);
	return ferror(out) ? -EIO : 0;
}

/* Release the nodes (see rulesq.h). */
void rulesq_fleet_free(struct rulesq_fleet *f)
{
	free(f->nodes);
	f->nodes = NULL;
	f->n = f->cap = 0;
}
