// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * chschema.c - schema v1 records as ClickHouse tables and JSONEachRow rows.
 *
 * One static description per table drives both the DDL and the conversion
 * of records into rows, so the two cannot disagree.  The conversion reads
 * the record with json_read.h (strict: RFC 8259, UTF-8 only, no lone
 * surrogates) and writes the columns as it reads, into a json.h buffer.
 * It allocates nothing except for escaped strings longer than its stack
 * buffer.  It runs for every record delivered (the target is 50,000/s on
 * two cores), so: strings with escapes are decoded and written again by
 * json_strn(); column names and strings that need no escaping are copied
 * into the buffer as json.h would write them (json_key_plain(),
 * json_str_plain()); the record's text, the `json` column, is escaped
 * eight bytes at a time (json_str_text()).
 *
 * Anything that would make ClickHouse refuse the whole INSERT is left out
 * of the row: a value of the wrong JSON type for its column, an integer
 * out of range (18.16 wraps it silently, or fails on a '-'), a time a
 * DateTime cannot hold (18.16 wraps it too), a second occurrence of a
 * member (a "Duplicate field" error).  The record itself always reaches
 * the `json` column unchanged.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chschema.h"
#include "chsql.h"
#include "json_read.h"
#include "schema.h"

/* ---- DDL ------------------------------------------------------------------ */

/* Print name as a ClickHouse identifier, back-quoted when it must be. */
static void print_ident(FILE *out, const char *name)
{
	struct jbuf b;

	jbuf_init(&b);
	chsql_ident(&b, name);
	fputs(jbuf_str(&b), out);
	jbuf_free(&b);
}

/* Print one column line: name, type, comma and the comment. */
static void print_column(FILE *out, const char *col, const char *type,
			 bool nullable, const char *doc)
{
	char t[64];
	int n;

	snprintf(t, sizeof(t), nullable ? "Nullable(%s)," : "%s,", type);
	n = fprintf(out, "    %-24s %s", col, t);
	if (doc)
		fprintf(out, "%*s-- %s", n < 62 ? 62 - n : 1, "", doc);
	fputc('\n', out);
}

/* Print the columns of a field list, nested objects flattened. */
static void print_fields(FILE *out, const struct sf_field *f, size_t n)
{
	static const char *const types[] = {
		[SFT_STR] = "String", [SFT_BOOL] = "UInt8", [SFT_U8] = "UInt8",
		[SFT_U32] = "UInt32", [SFT_U64] = "UInt64", [SFT_I32] = "Int32",
		[SFT_F64] = "Float64",
	};
	size_t i;

	for (i = 0; i < n; i++, f++) {
		bool null = f->flags & SF_NULL;

		switch (f->type) {
		case SFT_OBJ:
			print_fields(out, f->sub, f->nsub);
			break;
		case SFT_TIME:
		case SFT_RECTIME:
			print_column(out, f->col, "DateTime('UTC')", null, f->doc);
			print_column(out, f->col2, "UInt32", null,
				     "microseconds within the second");
			break;
		case SFT_STRARR:
			print_column(out, f->col, "Array(String)", false, f->doc);
			break;
		case SFT_COUNTS:
			print_column(out, f->col, "Array(String)", false, f->doc);
			print_column(out, f->col2, "Array(UInt64)", false, NULL);
			break;
		case SFT_OBJARR:
			break;		/* in `json` only */
		default:
			print_column(out, f->col, types[f->type], null, f->doc);
			break;
		}
	}
}

/* The member key of process records' fields (a top-level one), or NULL. */
static const struct sf_field *process_member(const char *key)
{
	const struct sf_record *r = &sf_records[SF_REC_PROCESS];

	for (size_t i = 0; i < r->n; i++)
		if (!strcmp(r->f[i].key, key))
			return &r->f[i];
	return NULL;
}

/*
 * The columns a files row takes from its process record, in out[7]: its
 * host, id (as process_id), pid, uid, start_time, job and tool.
 */
static size_t files_prefix(struct sf_field *out)
{
	static const char *const keys[] = { "host", "pid", "uid",
					    "start_time", "job", "tool" };
	const struct sf_field *f;
	size_t n = 0;

	out[n++] = (struct sf_field){ .key = "id", .keylen = 2,
				      .type = SFT_STR, .col = "process_id",
				      .doc = "the id of its process record" };
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		f = process_member(keys[i]);
		if (f)
			out[n++] = *f;
	}
	return n;
}

/*
 * The table `files`: one row per process and file, from the files of
 * process records (chschema_file_rows()), for fleet questions such as
 * "which runs read this reference".
 */
static void print_files_table(FILE *out, const char *db)
{
	const struct sf_field *files = process_member("files");
	struct sf_field pfx[8];
	size_t n = files_prefix(pfx);

	fprintf(out, "\n-- " CHSCHEMA_FILES_TABLE ": one row per process and"
		" file it opened (the files of process records), with the"
		" process's host, job and tool, for example\n"
		"--   SELECT DISTINCT job_run FROM %s." CHSCHEMA_FILES_TABLE
		" FINAL WHERE path = '/ref/GRCh38.fa' AND has(flags, 'read').\n"
		"CREATE TABLE IF NOT EXISTS ", db);
	print_ident(out, db);
	fputs("." CHSCHEMA_FILES_TABLE "\n(\n", out);
	print_fields(out, pfx + 1, n - 1);
	if (files)
		print_fields(out, files->sub, files->nsub);
	fprintf(out, "    %-24s %-32s -- %s\n", pfx[0].col, "String", pfx[0].doc);
	fputs(")\nENGINE = ReplacingMergeTree()\n"
	      "PARTITION BY toYYYYMM(start_time)\n"
	      "ORDER BY (host, start_time, process_id, path)\n;\n", out);
}

/*
 * Print the rules table: one row per `jobtrace rules push`, the bundle's
 * bytes as they were pushed (a String holds any bytes).  MergeTree, not
 * Replacing: pushing an older bundle again (a roll-back) is a new row
 * that is then the latest.
 */
static void print_rules_table(FILE *out, const char *db)
{
	fputs("\n-- rules: the fleet's rules bundles, one row per jobtrace rules"
	      " push:\n-- agents with rules.source = \"clickhouse\" follow the"
	      " latest pushed_at.\n", out);
	fputs("CREATE TABLE IF NOT EXISTS ", out);
	print_ident(out, db);
	fputs("." CHSCHEMA_RULES_TABLE "\n(\n", out);
	print_column(out, "version", "String", false,
		     "the bundle's version (its MANIFEST's)");
	print_column(out, "sha256", "String", false,
		     "the bundle's id: SHA-256 of its MANIFEST, hex");
	print_column(out, "pushed_at", "DateTime('UTC')", false,
		     "when it was pushed");
	print_column(out, "pushed_at_us", "UInt32", false,
		     "microseconds within the second");
	print_column(out, "pushed_by", "String", false,
		     "the user who pushed it");
	print_column(out, "host", "String", false, "the host it was pushed from");
	print_column(out, "size", "UInt32", false, "bytes of the bundle");
	fprintf(out, "    %-24s %-32s -- %s\n", "bundle", "String",
		"the bundle: a ustar tar, its bytes verbatim");
	fputs(")\nENGINE = MergeTree()\nORDER BY (pushed_at, pushed_at_us,"
	      " sha256)\n;\n", out);
}

/* Print the schema: CREATE DATABASE and one CREATE TABLE per record type. */
void chschema_print(FILE *out, const char *db)
{
	size_t i;

	if (!db || !*db)
		db = "jobtrace";
	fputs("-- jobtrace record schema v1 for ClickHouse (jobtrace schema clickhouse).\n"
	      "-- Runs on ClickHouse 18.16 and on current releases: DateTime plus a\n"
	      "-- microseconds column instead of DateTime64, no Map, JSON, LowCardinality,\n"
	      "-- CODEC or TTL.  Apply with: clickhouse-client --multiquery < this-file\n"
	      "-- (every statement ends with a line holding only a semicolon).\n"
	      "--\n"
	      "-- One table per record type.  `json` is the record verbatim, which\n"
	      "-- jobtrace report and export read back.  The other columns are typed\n"
	      "-- copies of its fields, nested names joined with '_' (job.id is job_id,\n"
	      "-- cpu.user_s is cpu_user_s).  A time X is X DateTime('UTC') in whole\n"
	      "-- seconds plus X_us, the microseconds within that second.  A field the\n"
	      "-- record leaves null, or that does not fit its column, is NULL (or the\n"
	      "-- type's default in a column that is not Nullable).  Rows are inserted\n"
	      "-- with INSERT INTO db.table FORMAT JSONEachRow and the setting\n"
	      "-- input_format_skip_unknown_fields=1, so fields added later do no harm.\n"
	      "--\n"
	      "-- Duplicates: after a retried delivery a record can be stored twice.\n"
	      "-- The tables are ReplacingMergeTree, partitioned by the month of the\n"
	      "-- record's own time and sorted by a key that ends in the record id, so\n"
	      "-- both copies land in the same partition with the same key and merges\n"
	      "-- keep one.  Merges happen when they happen: to count every record\n"
	      "-- exactly once, query with FINAL (or GROUP BY id), for example\n"
	      "--   SELECT count() FROM jobtrace.process FINAL WHERE job_id = '42'\n"
	      "--   SELECT json FROM jobtrace.process FINAL WHERE job_id = '42'\n"
	      "--     ORDER BY start_time, start_time_us FORMAT TabSeparatedRaw\n\n",
	      out);
	fputs("CREATE DATABASE IF NOT EXISTS ", out);
	print_ident(out, db);
	fputs("\n;\n", out);
	for (i = 0; i < SF_REC__N; i++) {
		const struct sf_record *t = &sf_records[i];

		fprintf(out, "\n-- %s: %s.\n", t->name, t->doc);
		fputs("CREATE TABLE IF NOT EXISTS ", out);
		print_ident(out, db);
		fprintf(out, ".%s\n(\n", t->name);
		print_fields(out, t->f, t->n);
		fprintf(out, "    %-24s %-32s -- %s\n", "json", "String",
			"the record, verbatim");
		fprintf(out, ")\nENGINE = ReplacingMergeTree()\n"
			"PARTITION BY toYYYYMM(%s)\n"
			"ORDER BY (host, %s, id)\n;\n", t->time, t->time);
	}
	print_files_table(out, db);
	print_rules_table(out, db);
}

/* ---- rows ------------------------------------------------------------------- */

/* 2105-12-31 23:59:59 UTC, the last second 18.16's DateTime text parser gets right */
#define CH_TIME_MAX 4291747199LL

_Static_assert(CHSCHEMA_MAX_DEPTH == JR_MAX_DEPTH,
	       "chschema.h promises the reader's nesting limit");

struct ch_time {
	uint32_t secs;		/* since the epoch, UTC */
	uint32_t us;
};

struct chp {
	struct jr r;
	struct jbuf *b;
	/* job: which time is the record's own */
	bool phase_end, have_start, have_end;
	struct ch_time start, stop;
	struct jbuf heap;	/* escaped strings longer than scratch */
	char scratch[2048];
};

static __thread char errbuf[128];

/* Why the last chschema_row() call in this thread failed ("" if it did not). */
const char *chschema_strerror(void)
{
	return errbuf;
}

/*
 * The decoded bytes of a string value: the text itself when it has no
 * escapes, else a copy in the scratch buffer or, when longer, the heap.
 * NULL when memory ran out.
 */
static const char *decode(struct chp *p, const struct jr_str *str, size_t *len)
{
	const char *s = jr_str_get(str, p->scratch, sizeof(p->scratch), len);

	return s ? s : jr_str_jbuf(str, &p->heap, 0, len);
}

/*
 * Parse an RFC 3339 time into UTC seconds and microseconds; false unless
 * DateTime holds it: 1970 to 2105 (18.16 parses the last five weeks of
 * DateTime's range, up to 2106-02-07 06:28:15, into 1970).
 */
static bool parse_time(const char *s, size_t n, struct ch_time *t)
{
	uint32_t ns;
	int64_t secs;

	if (json_parse_time(s, n, 0, &secs, &ns) || secs < 0 ||
	    secs > CH_TIME_MAX)
		return false;
	t->secs = (uint32_t)secs;
	t->us = ns / 1000;
	return true;
}

/* Write the key of a column (a name that needs no escaping). */
static inline void raw_key(struct jbuf *b, const char *col)
{
	json_key_plain(b, col, strlen(col));
}

/* Write a time's two columns: DateTime's "YYYY-MM-DD hh:mm:ss" and us. */
static void emit_time(struct jbuf *b, const struct sf_field *f,
		      const struct ch_time *t)
{
	char tmp[28];

	json_format_time(t->secs * 1000000000ull, tmp, sizeof(tmp));
	tmp[10] = ' ';
	raw_key(b, f->col);
	json_str_plain(b, tmp, 19);
	raw_key(b, f->col2);
	json_u64(b, t->us);
}

/* Write a checked string token as a string value (re-escaped if need be). */
static int put_str(struct chp *p, const struct jr_str *str)
{
	const char *s;
	size_t n;

	if (str->plain) {
		json_str_plain(p->b, str->s, str->len);
		return 0;
	}
	s = decode(p, str, &n);
	if (!s)
		return -ENOMEM;
	json_strn(p->b, s, n);
	return 0;
}

/* A string value for field f. */
static int string_value(struct chp *p, const struct sf_field *f,
			const struct jr_str *str)
{
	struct ch_time t;
	const char *s;
	size_t n;

	if (f->type == SFT_STR) {
		raw_key(p->b, f->col);
		if (f->flags & SF_PHASE) {
			s = decode(p, str, &n);
			if (!s)
				return -ENOMEM;
			p->phase_end = n == 3 && !memcmp(s, "end", 3);
		}
		return put_str(p, str);
	}
	if (f->type != SFT_TIME)
		return 0;
	s = decode(p, str, &n);
	if (!s)
		return -ENOMEM;
	if (!parse_time(s, n, &t))
		return 0;
	emit_time(p->b, f, &t);
	if (f->flags & SF_START) {
		p->start = t;
		p->have_start = true;
	} else if (f->flags & SF_END) {
		p->stop = t;
		p->have_end = true;
	}
	return 0;
}

/* A number value for field f. */
static void number_value(struct chp *p, const struct sf_field *f,
			 const struct jr_num *num)
{
	uint64_t v;
	double d;

	switch (f->type) {
	case SFT_STR:
		raw_key(p->b, f->col);
		json_str_plain(p->b, num->s, num->len);
		break;
	case SFT_BOOL:
		if (jr_num_u64(num, &v) && v <= 1) {
			raw_key(p->b, f->col);
			json_u64(p->b, v);
		}
		break;
	case SFT_U8:
	case SFT_U32:
	case SFT_U64:
		if (!jr_num_u64(num, &v) || (num->neg && v))
			break;
		if ((f->type == SFT_U8 && v > UINT8_MAX) ||
		    (f->type == SFT_U32 && v > UINT32_MAX))
			break;
		raw_key(p->b, f->col);
		json_u64(p->b, v);
		break;
	case SFT_I32:
		if (!jr_num_u64(num, &v) || v > (num->neg ? 1ull << 31 : INT32_MAX))
			break;
		raw_key(p->b, f->col);
		json_i64(p->b, num->neg ? -(int64_t)v : (int64_t)v);
		break;
	case SFT_F64:
		if (jr_num_f64(num, &d)) {
			raw_key(p->b, f->col);
			if (f->flags & SF_MONEY)
				json_double12(p->b, d);
			else
				json_double(p->b, d);
		}
		break;
	}
}

/* An array of strings (argv): non-strings become their text, or "". */
static int string_array(struct chp *p, const struct sf_field *f)
{
	struct jr *r = &p->r;
	struct jr_str str;
	struct jr_num num;
	bool truth;
	int err;

	raw_key(p->b, f->col);
	json_arr_open(p->b);
	err = jr_arr_open(r);
	while (!err && (err = jr_next_elem(r)) > 0) {
		switch (jr_peek(r)) {
		case JR_STR:
			err = jr_str(r, &str);
			if (!err)
				err = put_str(p, &str);
			break;
		case JR_BOOL:
			err = jr_bool(r, &truth);
			if (!err)
				json_str_plain(p->b, truth ? "true" : "false",
					       truth ? 4 : 5);
			break;
		case JR_NUM:
			err = jr_num(r, &num);
			if (!err)
				json_str_plain(p->b, num.s, num.len);
			break;
		default:	/* objects, arrays, null (and what is no value) */
			err = jr_skip(r);
			if (!err)
				json_str_plain(p->b, "", 0);
			break;
		}
	}
	if (err)
		return err;
	json_arr_close(p->b);
	return 0;
}

/*
 * One pass over a {name: count} object: the names (names) or the counts
 * of the members whose value is an unsigned integer.
 */
static int counts_pass(struct chp *p, bool names)
{
	struct jr *r = &p->r;
	struct jr_str key;
	struct jr_num num;
	uint64_t v;
	int err;

	err = jr_obj_open(r);
	while (!err && (err = jr_next_member(r, &key)) > 0) {
		if (jr_peek(r) != JR_NUM) {
			err = jr_skip(r);
			continue;
		}
		err = jr_num(r, &num);
		if (err || !jr_num_u64(&num, &v) || num.neg)
			continue;
		if (names)
			err = put_str(p, &key);
		else
			json_u64(p->b, v);
	}
	return err;
}

/* A {name: count} object as two parallel arrays. */
static int counts(struct chp *p, const struct sf_field *f)
{
	struct jr start = p->r;
	int err;

	raw_key(p->b, f->col);
	json_arr_open(p->b);
	err = counts_pass(p, true);
	if (err)
		return err;
	json_arr_close(p->b);
	p->r = start;
	raw_key(p->b, f->col2);
	json_arr_open(p->b);
	err = counts_pass(p, false);
	json_arr_close(p->b);
	return err;
}

static int parse_object(struct chp *p, const struct sf_field *f, size_t n);

/* The next value, for field f: write its column(s) if it fits. */
static int field_value(struct chp *p, const struct sf_field *f)
{
	struct jr *r = &p->r;
	struct jr_str str;
	struct jr_num num;
	bool truth;
	int err;

	/* an older record's plain value in place of the object */
	if (f->type == SFT_OBJ && jr_peek(r) != JR_OBJ && sf_old_member(f))
		f = sf_old_member(f);

	switch (jr_peek(r)) {
	case JR_OBJ:
		if (f->type == SFT_OBJ)
			return parse_object(p, f->sub, f->nsub);
		if (f->type == SFT_COUNTS)
			return counts(p, f);
		return jr_skip(r);
	case JR_ARR:
		if (f->type == SFT_STRARR)
			return string_array(p, f);
		return jr_skip(r);
	case JR_STR:
		err = jr_str(r, &str);
		return err ? err : string_value(p, f, &str);
	case JR_BOOL:
		err = jr_bool(r, &truth);
		if (err)
			return err;
		if (f->type == SFT_BOOL) {
			raw_key(p->b, f->col);
			json_u64(p->b, truth);
		} else if (f->type == SFT_STR) {
			raw_key(p->b, f->col);
			json_str_plain(p->b, truth ? "true" : "false",
				       truth ? 4 : 5);
		}
		return 0;
	case JR_NUM:
		err = jr_num(r, &num);
		if (!err)
			number_value(p, f, &num);
		return err;
	default:	/* null (and what is no value) */
		return jr_skip(r);
	}
}

/*
 * The field of f[0..n) named by key, or NULL.  The search starts at
 * f[from]: records list their members in the order of the field lists,
 * so the field after the last one found is usually the next.
 */
static const struct sf_field *lookup(const struct sf_field *f, size_t n,
				     size_t from, const struct jr_str *key)
{
	char buf[64];
	const char *k;
	size_t len, i, j;

	if (!n)
		return NULL;
	k = jr_str_get(key, buf, sizeof(buf), &len);
	if (!k || !len)
		return NULL;	/* longer than any field name, or "" */
	for (j = 0, i = from; j < n; j++, i = i + 1 < n ? i + 1 : 0)
		if (f[i].keylen == len && f[i].key[0] == k[0] &&
		    !memcmp(f[i].key, k, len))
			return &f[i];
	return NULL;
}

/*
 * The object that is the next value, whose members are the fields
 * f[0..n): write their columns.  Other members, and a member's second
 * occurrence, are checked and skipped.
 */
static int parse_object(struct chp *p, const struct sf_field *f, size_t n)
{
	const struct sf_field *fld;
	struct jr_str key;
	uint64_t seen = 0, bit;
	size_t next = 0;
	int err;

	err = jr_obj_open(&p->r);
	while (!err && (err = jr_next_member(&p->r, &key)) > 0) {
		fld = lookup(f, n, next, &key);
		bit = fld ? 1ull << (fld - f) : 0;
		if (fld && !(seen & bit)) {
			seen |= bit;
			next = (size_t)(fld - f) + 1 < n ? (size_t)(fld - f) + 1 : 0;
			err = field_value(p, fld);
		} else {
			err = jr_skip(&p->r);
		}
	}
	return err;
}

/*
 * The value of the first top-level "type" member, found by reading (and
 * so checking) the whole text.  type->s is NULL when there is none or it
 * is not a string.
 */
static int find_type(struct jr *r, struct jr_str *type)
{
	int err;

	type->s = NULL;
	err = jr_obj_open(r);
	if (!err)
		err = jr_find(r, "type", 4);
	if (err == -ENOENT)
		return jr_end(r);
	if (!err) {
		err = jr_str(r, type);	/* the first one counts */
		if (err == -EDOM)
			err = jr_skip(r);
		if (!err)
			err = jr_close(r);
	}
	return err ? err : jr_end(r);
}

/* Whether c is JSON white space. */
static inline bool is_ws(unsigned char c)
{
	return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

/* The table for a record type (a checked string token), or NULL. */
static const struct sf_record *table_for(const struct jr_str *type)
{
	char buf[16];
	const char *s;
	size_t len;

	s = jr_str_get(type, buf, sizeof(buf), &len);
	return s ? sf_record_find(s, len) : NULL;
}

/* Convert one record into a JSONEachRow line (see chschema.h). */
int chschema_row(struct jbuf *b, const char *json, size_t len,
		 const char **table)
{
	const char *s = json, *e = s + len, *why = NULL;
	const struct sf_record *t = NULL;
	size_t len0 = b->len, why_off = 0, i;
	struct jr_str type, key;
	struct chp p;
	int err;

	*table = NULL;
	errbuf[0] = '\0';
	if (b->oom)
		return -ENOMEM;
	if (!jbuf_at_top(b)) {
		snprintf(errbuf, sizeof(errbuf), "output buffer inside a value");
		return -EINVAL;
	}
	while (s < e && is_ws(*s))
		s++;
	while (e > s && is_ws(e[-1]))
		e--;
	p.b = b;
	p.phase_end = p.have_start = p.have_end = false;
	jbuf_init(&p.heap);
	jr_init(&p.r, s, (size_t)(e - s));
	if (s == e || *s != '{') {
		why = "not a JSON object";
		why_off = (size_t)(s - json);
		err = -EINVAL;
		goto error;
	}

	/* "type" first, as the agent writes it: one pass */
	if (!jr_obj_open(&p.r) && jr_next_member(&p.r, &key) > 0 &&
	    jr_str_eq(&key, "type", 4) && !jr_str(&p.r, &type))
		t = table_for(&type);
	if (!t) {
		/* anywhere else: find it, checking the whole text */
		jr_init(&p.r, s, (size_t)(e - s));
		err = find_type(&p.r, &type);
		if (err)
			goto error;
		if (!type.s) {
			why = "no string member \"type\"";
			err = -EINVAL;
			goto error;
		}
		t = table_for(&type);
		if (!t) {
			size_t k, n = 0;

			n = (size_t)snprintf(errbuf, sizeof(errbuf),
					     "unknown record type \"");
			for (k = 0; k < type.len && k < 32; k++)
				errbuf[n++] = type.s[k] >= 0x20 && type.s[k] < 0x7f ?
					      type.s[k] : '?';
			snprintf(errbuf + n, sizeof(errbuf) - n, "\"");
			jbuf_free(&p.heap);
			return -ENOENT;
		}
	}
	/* the row */
	jr_init(&p.r, s, (size_t)(e - s));
	json_obj_open(b);
	err = parse_object(&p, t->f, t->n);
	if (!err)
		err = jr_end(&p.r);
	if (err)
		goto error;
	for (i = 0; i < t->n; i++) {
		const struct sf_field *f = &t->f[i];

		if (f->type != SFT_RECTIME)
			continue;
		if (p.have_end && (p.phase_end || !p.have_start))
			emit_time(b, f, &p.stop);
		else if (p.have_start)
			emit_time(b, f, &p.start);
	}
	raw_key(b, "json");
	json_str_text(b, s, (size_t)(e - s));
	json_obj_close(b);
	jbuf_put(b, "\n", 1);
	jbuf_free(&p.heap);
	if (b->oom)
		return -ENOMEM;
	*table = t->name;
	return 0;

error:
	jbuf_free(&p.heap);
	if (b->oom)
		return -ENOMEM;		/* json.h: the contents are invalid */
	if (err == -ENOMEM)
		snprintf(errbuf, sizeof(errbuf), "out of memory");
	else if (why)
		snprintf(errbuf, sizeof(errbuf), "%s at byte %zu", why, why_off);
	else if (p.r.err)
		snprintf(errbuf, sizeof(errbuf), "%s at byte %zu", p.r.err,
			 p.r.err_off + (size_t)(s - json));
	jbuf_rewind(b, len0);
	return err;
}

/*
 * The row of each element of the files array at p->r: its columns, then
 * the process's (pfx[0..plen), as JSON members without braces).
 */
static int file_rows(struct chp *p, const struct sf_field *files,
		     const char *pfx, size_t plen, size_t *rows)
{
	size_t at;
	int err;

	if (jr_peek(&p->r) != JR_ARR)
		return jr_skip(&p->r);
	err = jr_arr_open(&p->r);
	while (!err && (err = jr_next_elem(&p->r)) > 0) {
		if (jr_peek(&p->r) != JR_OBJ) {
			err = jr_skip(&p->r);
			continue;
		}
		at = p->b->len;
		json_obj_open(p->b);
		err = parse_object(p, files->sub, files->nsub);
		if (err)
			break;
		if (p->b->len == at + 1) {	/* no column: no row */
			jbuf_rewind(p->b, at);
			continue;
		}
		if (plen) {
			jbuf_put(p->b, ",", 1);
			jbuf_put(p->b, pfx, plen);
		}
		json_obj_close(p->b);
		jbuf_put(p->b, "\n", 1);
		(*rows)++;
	}
	return err;
}

/* The rows of table files for a process record (chschema.h). */
int chschema_file_rows(struct jbuf *b, const char *json, size_t len)
{
	const struct sf_field *files = process_member("files");
	struct sf_field pfx[8];
	size_t n = files_prefix(pfx), len0 = b->len, rows = 0;
	struct jbuf head;
	struct jr_str key;
	struct chp p;
	int err;

	if (b->oom)
		return -ENOMEM;
	if (!files || !jbuf_at_top(b))
		return -EINVAL;
	jbuf_init(&head);
	jbuf_init(&p.heap);
	p.b = &head;
	p.phase_end = p.have_start = p.have_end = false;
	/* the process's columns, once */
	jr_init(&p.r, json, len);
	json_obj_open(&head);
	err = parse_object(&p, pfx, n);
	if (!err && head.oom)
		err = -ENOMEM;
	/* then a row per element of its files */
	p.b = b;
	jr_init(&p.r, json, len);
	if (!err)
		err = jr_obj_open(&p.r);
	while (!err && (err = jr_next_member(&p.r, &key)) > 0)
		err = jr_str_eq(&key, "files", 5) ?
		      file_rows(&p, files, head.buf + 1, head.len - 1, &rows) :
		      jr_skip(&p.r);
	jbuf_free(&head);
	jbuf_free(&p.heap);
	if (b->oom)
		return -ENOMEM;
	if (err) {
		jbuf_rewind(b, len0);
		return err;
	}
	return (int)rows;
}
