// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rulesrc_ch.c - the `clickhouse` rules source: poll the latest row of
 * the rules table, fetch its bundle when it is new (rulesrc_ch.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "chschema.h"
#include "chsql.h"
#include "http.h"
#include "rulebundle.h"
#include "rulesrc_ch.h"
#include "util.h"

/* The latest row's version, sha256 and size: a few hundred bytes. */
#define LATEST_ANSWER_MAX 4096
/* A bundle's row: every byte may come escaped (two bytes), and a '\n'. */
#define BUNDLE_ANSWER_MAX (2 * (size_t)RULEBUNDLE_MAX_BYTES + 16)

struct rulesrc_ch {
	char *db;
	rulesrc_ch_query_fn query;
	void *qctx;
	struct http_client *http;	/* the default query's */
	char url[256];			/* for messages: no credentials */
	struct jbuf sql, resp;
};

/* The default query: POST sql to the sink's URL. */
static int http_query(void *qctx, const char *sql, size_t max_answer,
		      struct jbuf *resp, char *err, size_t errlen)
{
	struct rulesrc_ch *c = qctx;

	return chsql_run(c->http, c->url, sql, NULL, NULL, 0, max_answer,
			 resp, err, errlen);
}

/* A source whose queries go to q (see rulesrc_ch.h). */
int rulesrc_clickhouse_new_query(const char *db, rulesrc_ch_query_fn q,
				 void *qctx, struct rulesrc_ch **out)
{
	struct rulesrc_ch *c = calloc(1, sizeof(*c));

	*out = NULL;
	if (!c)
		return -ENOMEM;
	c->db = strdup(db && *db ? db : "jobtrace");
	if (!c->db) {
		free(c);
		return -ENOMEM;
	}
	c->query = q;
	c->qctx = qctx;
	jbuf_init(&c->sql);
	jbuf_init(&c->resp);
	*out = c;
	return 0;
}

/* A source reading the sink s's rules table (see rulesrc_ch.h). */
int rulesrc_clickhouse_new(const struct jt_sink_config *s,
			   struct rulesrc_ch **out, char *err, size_t errlen)
{
	struct rulesrc_ch *c;
	char msg[512];
	int e;

	e = rulesrc_clickhouse_new_query(s->database, http_query, NULL, &c);
	if (e) {
		util_seterr(err, errlen, "out of memory");
		return e;
	}
	c->qctx = c;
	util_url_public(s->url, c->url, sizeof(c->url));
	e = http_client_new(s, &c->http, msg, sizeof(msg));
	if (e) {
		util_seterr(err, errlen, "clickhouse %s: %s", c->url, msg);
		rulesrc_clickhouse_free(c);
		return e;
	}
	*out = c;
	return 0;
}

/* Free a source (see rulesrc_ch.h). */
void rulesrc_clickhouse_free(struct rulesrc_ch *c)
{
	if (!c)
		return;
	http_client_free(c->http);
	jbuf_free(&c->sql);
	jbuf_free(&c->resp);
	free(c->db);
	free(c);
}

/* The source over cfg's first clickhouse sink (see rulesrc_ch.h). */
int rulesrc_clickhouse_open(const struct jt_config *cfg, void **ctx,
			    char *err, size_t errlen)
{
	const struct jt_sink_config *s;
	struct rulesrc_ch *c = NULL;
	int e;

	*ctx = NULL;
	s = config_find_sink(cfg, JT_SINK_CLICKHOUSE, NULL);
	if (!s) {
		util_seterr(err, errlen, "rules.source = \"clickhouse\": %s has"
			    " no clickhouse sink (sinks = ( { type ="
			    " \"clickhouse\"; url = ...; } ))",
			    cfg->source ? cfg->source : "the configuration");
		return -EINVAL;
	}
	e = rulesrc_clickhouse_new(s, &c, err, errlen);
	*ctx = c;
	return e;
}

/* Release a source that open made. */
void rulesrc_clickhouse_close(void *ctx)
{
	rulesrc_clickhouse_free(ctx);
}

/* Cancel the source's queries (see rulesrc_ch.h). */
void rulesrc_clickhouse_cancel(void *ctx)
{
	struct rulesrc_ch *c = ctx;

	if (c && c->http)
		http_client_cancel(c->http);
}

/* Start c->sql with "SELECT cols FROM db.rules ". */
static void select_rules(struct rulesrc_ch *c, const char *cols)
{
	jbuf_reset(&c->sql);
	jbuf_put(&c->sql, "SELECT ", 7);
	jbuf_put(&c->sql, cols, strlen(cols));
	jbuf_put(&c->sql, " FROM ", 6);
	chsql_table(&c->sql, c->db, CHSCHEMA_RULES_TABLE);
	jbuf_put(&c->sql, " ", 1);
}

/* Send c->sql + tail; the answer in c->resp. */
static int ask(struct rulesrc_ch *c, const char *tail, size_t max_answer,
	       char *err, size_t errlen)
{
	jbuf_put(&c->sql, tail, strlen(tail));
	jbuf_reset(&c->resp);
	if (c->sql.oom) {
		util_seterr(err, errlen, "out of memory");
		return -ENOMEM;
	}
	return c->query(c->qctx, jbuf_str(&c->sql), max_answer, &c->resp,
			err, errlen);
}

/* Whether s is 64 lower-case hex digits (a bundle's id). */
static bool is_sha256(const char *s)
{
	size_t n = strspn(s, "0123456789abcdef");

	return n == 64 && !s[n];
}

/*
 * Whether the bundle tar[0..len) is the one its row names: its id (its
 * MANIFEST's SHA-256) is sha.  A row that lies would be fetched again at
 * every poll (the agent holds the real id), so it is refused: -EBADMSG.
 * The caller checks the rest (files, signature) before loading it.
 */
static int same_id(const void *tar, size_t len, const char *sha, char *err,
		   size_t errlen)
{
	struct rulebundle b = { 0 };
	char why[256];
	int e;

	e = rulebundle_open(tar, len, NULL, &b, why, sizeof(why));
	if (e) {
		util_seterr(err, errlen, "the bundle %.12s: %s", sha, why);
	} else if (strcmp(b.sha256, sha)) {
		util_seterr(err, errlen, "the bundle of row %.12s is %.12s:"
			    " its sha256 column is wrong", sha, b.sha256);
		e = -EBADMSG;
	}
	rulebundle_free(&b);
	return e == -ENOMEM ? e : e ? -EBADMSG : 0;
}

/* The latest push's bundle, or 1 when have_tag is its id (rulesrc_ch.h). */
int rulesrc_clickhouse_fetch(void *ctx, const char *have_tag,
			     struct jbuf *out, char *tag, size_t taglen,
			     char *err, size_t errlen)
{
	struct rulesrc_ch *c = ctx;
	char *p, *v[3], sha[65];
	unsigned long long size;
	size_t len;
	int e;

	select_rules(c, "version, sha256, size");
	e = ask(c, CHSCHEMA_RULES_LATEST " FORMAT TabSeparated",
		LATEST_ANSWER_MAX, err, errlen);
	if (e)
		return e;
	p = (char *)jbuf_str(&c->resp);
	if (chsql_row(&p, c->resp.buf + c->resp.len, v, 3) != 3) {
		util_seterr(err, errlen, "the rules table %s.%s is empty:"
			    " nothing was pushed (jobtrace rules push)", c->db,
			    CHSCHEMA_RULES_TABLE);
		return -ENOENT;
	}
	if (!is_sha256(v[1])) {
		util_seterr(err, errlen, "the latest row of %s.%s has no"
			    " valid sha256", c->db, CHSCHEMA_RULES_TABLE);
		return -EBADMSG;
	}
	util_strlcpy(sha, v[1], sizeof(sha));
	size = strtoull(v[2], NULL, 10);
	util_strlcpy(tag, sha, taglen);
	if (have_tag && !strcmp(have_tag, sha))
		return 1;

	select_rules(c, "bundle");
	jbuf_put(&c->sql, "WHERE sha256 = ", 15);
	chsql_quote(&c->sql, sha);
	e = ask(c, " " CHSCHEMA_RULES_LATEST " FORMAT TabSeparated",
		BUNDLE_ANSWER_MAX, err, errlen);
	if (e)
		return e;
	/* one value: the bundle, escaped, and the row's '\n' */
	len = c->resp.len;
	if (len && c->resp.buf[len - 1] == '\n')
		len--;
	len = chsql_unescape(c->resp.buf, len);
	if (len != size) {
		util_seterr(err, errlen, "the bundle %.12s of %s.%s has %zu"
			    " bytes, its row says %llu", sha, c->db,
			    CHSCHEMA_RULES_TABLE, len, size);
		return -EBADMSG;
	}
	e = same_id(c->resp.buf, len, sha, err, errlen);
	if (e)
		return e;
	if (jbuf_put(out, c->resp.buf, len)) {
		util_seterr(err, errlen, "out of memory");
		return -ENOMEM;
	}
	return 0;
}
