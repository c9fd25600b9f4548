// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * schema.c - the record types of schema v1 as tables of members (see
 * schema.h), and what is built from them here: the JSON writer and the
 * field tables of doc/records.md.
 */
#include <errno.h>
#include <string.h>

#include "json_read.h"
#include "schema.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define SF_SUB(t) t, ARRAY_SIZE(t)
#define SF_NOSUB NULL, 0
/* one member of a record (slot in enum sf_slot) */
#define SF_ROW(slot, key, type, flags, col, col2, sub, doc) \
	{ key, sizeof(key) - 1, SFT_##type, flags, V_##slot, col, col2, sub, doc },
/* one member of a files element (slot in enum sf_file_slot) */
#define SFF_ROW(slot, key, type, flags, col, col2, sub, doc) \
	{ key, sizeof(key) - 1, SFT_##type, flags, VF_##slot, col, col2, sub, doc },
/* one member of an evidence.parts element (slot in enum sf_part_slot) */
#define SFP_ROW(slot, key, type, flags, col, col2, sub, doc) \
	{ key, sizeof(key) - 1, SFT_##type, flags, VP_##slot, col, col2, sub, doc },
/* one member of a usage.steps element (slot in enum sf_step_slot) */
#define SFS_ROW(slot, key, type, flags, col, col2, sub, doc) \
	{ key, sizeof(key) - 1, SFT_##type, flags, VS_##slot, col, col2, sub, doc },

const struct sf_field sf_job_fields[] = { SF_JOB(SF_ROW) };
const size_t sf_job_nfields = ARRAY_SIZE(sf_job_fields);
static const struct sf_field sf_tool_fields[] = { SF_TOOL(SF_ROW) };
static const struct sf_field sf_exit_fields[] = { SF_EXIT(SF_ROW) };
static const struct sf_field sf_cpu_fields[] = { SF_CPU(SF_ROW) };
static const struct sf_field sf_mem_process_fields[] = { SF_MEM_PROCESS(SF_ROW) };
static const struct sf_field sf_mem_sample_fields[] = { SF_MEM_SAMPLE(SF_ROW) };
static const struct sf_field sf_io_fields[] = { SF_IO(SF_ROW) };
static const struct sf_field sf_net_fields[] = { SF_NET(SF_ROW) };
static const struct sf_field sf_wait_fields[] = { SF_WAIT(SF_ROW) };
static const struct sf_field sf_allocation_fields[] = { SF_ALLOCATION(SF_ROW) };
static const struct sf_field sf_step_fields[] = { SF_STEP(SFS_ROW) };
static const struct sf_field sf_usage_fields[] = { SF_USAGE(SF_ROW) };
static const struct sf_field sf_part_fields[] = { SF_PART(SFP_ROW) };
static const struct sf_field sf_evidence_fields[] = { SF_EVIDENCE(SF_ROW) };
static const struct sf_field sf_drops_fields[] = { SF_DROPS(SF_ROW) };
static const struct sf_field sf_cloud_fields[] = { SF_CLOUD(SF_ROW) };
static const struct sf_field sf_cost_fields[] = { SF_COST(SF_ROW) };
static const struct sf_field sf_efficiency_fields[] = { SF_EFFICIENCY(SF_ROW) };
static const struct sf_field sf_price_fields[] = { SF_PRICE(SF_ROW) };
static const struct sf_field sf_outside_fields[] = { SF_OUTSIDE(SF_ROW) };
static const struct sf_field sf_file_fields[] = { SF_FILE(SFF_ROW) };
static const struct sf_field sf_files_rest_fields[] = { SF_FILES_REST(SF_ROW) };
static const struct sf_field sf_files_nonreg_fields[] = { SF_FILES_NONREG(SF_ROW) };
static const struct sf_field sf_progress_fields[] = { SF_PROGRESS(SF_ROW) };
static const struct sf_field sf_rules_fields[] = { SF_RULES(SF_ROW) };

static const struct sf_field process_fields[] = {
	SF_HEAD(SF_ROW)
	SF_PROC(SF_ROW)
	SF_JOB_OBJ(SF_ROW)
	SF_TOOL_OBJ(SF_ROW)
	SF_PROCESS_END(SF_ROW)
	SF_CPU_OBJ(SF_ROW)
	SF_MEM_PROCESS_OBJ(SF_ROW)
	SF_IO_NET_OBJ(SF_ROW)
	SF_FILES_OBJ(SF_ROW)
};

static const struct sf_field sample_fields[] = {
	SF_HEAD(SF_ROW)
	SF_TIME_AT(SF_ROW)
	SF_PROC(SF_ROW)
	SF_JOB_OBJ(SF_ROW)
	SF_TOOL_OBJ(SF_ROW)
	SF_CPU_OBJ(SF_ROW)
	SF_MEM_SAMPLE_OBJ(SF_ROW)
	SF_IO_NET_OBJ(SF_ROW)
	SF_PROGRESS_OBJ(SF_ROW)
};

static const struct sf_field job_fields[] = {
	SF_HEAD(SF_ROW)
	SF_JOB_PHASE(SF_ROW)
	SF_JOB_OBJ(SF_ROW)
	SF_JOB_REC(SF_ROW)
};

static const struct sf_field signal_fields[] = {
	SF_HEAD(SF_ROW)
	SF_SIGNAL_KIND(SF_ROW)
	SF_TIME_AT(SF_ROW)
	SF_JOB_OBJ(SF_ROW)
	SF_SIGNAL_JOBS(SF_ROW)
	SF_SIGNAL_PROC(SF_ROW)
	SF_TOOL_OBJ(SF_ROW)
	SF_EVIDENCE_OBJ(SF_ROW)
};

static const struct sf_field host_fields[] = {
	SF_HEAD(SF_ROW)
	SF_TIME_AT(SF_ROW)
	SF_HOST_REC(SF_ROW)
};

const struct sf_record sf_records[SF_REC__N] = {
	[SF_REC_PROCESS] = { "process", SF_SUB(process_fields), "start_time",
			     "one finished process" },
	[SF_REC_SAMPLE] = { "sample", SF_SUB(sample_fields), "time",
			    "a running job process's counters at every sample interval" },
	[SF_REC_JOB] = { "job", SF_SUB(job_fields), "time",
			 "a scheduler job: when a hook registers it (phase start) and closes it (phase end)" },
	[SF_REC_SIGNAL] = { "signal", SF_SUB(signal_fields), "time",
			    "something worth a look: an OOM kill, a spot interruption notice, an idle node" },
	[SF_REC_HOST] = { "host", SF_SUB(host_fields), "time",
			  "the agent's start and stop: identity, cloud instance, price, version, drop counters" },
};

/* The record type named by the n bytes at type, or NULL. */
const struct sf_record *sf_record_find(const char *type, size_t n)
{
	for (size_t i = 0; i < SF_REC__N; i++)
		if (strlen(sf_records[i].name) == n &&
		    !memcmp(sf_records[i].name, type, n))
			return &sf_records[i];
	return NULL;
}

/* The member of object f that an older record's plain value stands for. */
const struct sf_field *sf_old_member(const struct sf_field *f)
{
	for (size_t i = 0; f->type == SFT_OBJ && i < f->nsub; i++)
		if (f->sub[i].flags & SF_OLDSTR)
			return &f->sub[i];
	return NULL;
}

/* Set a string value; NULL is null. */
void sv_str(struct sv *v, const char *s)
{
	v->st = s ? SV_SET : SV_NULL;
	v->s = s;
	v->n = s ? strlen(s) : 0;
}

/* Set a string value; NULL or empty is null. */
void sv_str_opt(struct sv *v, const char *s)
{
	sv_str(v, s && *s ? s : NULL);
}

/* ---- the JSON writer --------------------------------------------------------- */

_Static_assert(ARRAY_SIZE(sf_step_fields) == VS__N,
	       "a usage.steps element lists each of its slots once");
_Static_assert(ARRAY_SIZE(sf_part_fields) == VP__N,
	       "an evidence.parts element lists each of its slots once");
_Static_assert(ARRAY_SIZE(sf_file_fields) == VF__N,
	       "a files element lists each of its slots once");

static void write_members(struct jbuf *b, const struct sf_field *f, size_t n,
			  const struct sv *base);

/* The value v of one member whose key is written; base is the value array
 * v belongs to, where the members of an object find theirs. */
static void write_value(struct jbuf *b, const struct sf_field *f,
			const struct sv *v, const struct sv *base)
{
	const char *a, *end;

	/* an array or counts as schema_read() left them: their text */
	if (v->st == SV_RAW && (f->type == SFT_STRARR ||
				f->type == SFT_COUNTS || f->type == SFT_OBJARR)) {
		json_raw(b, v->s, v->n);
		return;
	}
	if (v->st != SV_SET) {
		json_null(b);
		return;
	}
	switch (f->type) {
	case SFT_OBJ:
		json_obj_open(b);
		write_members(b, f->sub, f->nsub, base);
		json_obj_close(b);
		break;
	case SFT_STR:
		json_strn(b, v->s, v->n);
		break;
	case SFT_BOOL:
		json_bool(b, v->u);
		break;
	case SFT_U8:
	case SFT_U32:
	case SFT_U64:
		json_u64(b, v->u);
		break;
	case SFT_I32:
		json_i64(b, v->i);
		break;
	case SFT_F64:
		if (f->flags & SF_MONEY)
			json_double12(b, v->d);
		else
			json_double(b, v->d);
		break;
	case SFT_TIME:
		json_time(b, v->u);
		break;
	case SFT_STRARR:
		json_arr_open(b);
		for (a = v->s, end = v->s + v->n; a && a < end;) {
			size_t len = strnlen(a, end - a);

			json_strn(b, a, len);
			a += len + 1;
		}
		json_arr_close(b);
		break;
	case SFT_COUNTS:
		json_obj_open(b);
		for (uint32_t i = 0; i < v->n; i++)
			json_kv_u64(b, v->counts[i].name, v->counts[i].n);
		json_obj_close(b);
		break;
	case SFT_OBJARR:
		json_arr_open(b);
		for (uint32_t i = 0; i < v->n; i++) {
			json_obj_open(b);
			write_members(b, f->sub, f->nsub, v->elems + i * f->nsub);
			json_obj_close(b);
		}
		json_arr_close(b);
		break;
	default:
		json_null(b);
		break;
	}
}

/* The members of an object, values from base (indexed by slot). */
static void write_members(struct jbuf *b, const struct sf_field *f, size_t n,
			  const struct sv *base)
{
	for (size_t i = 0; i < n; i++, f++) {
		const struct sv *x = &base[f->slot];

		if (f->type == SFT_RECTIME || x->st == SV_OMIT)
			continue;
		json_key_plain(b, f->key, f->keylen);
		write_value(b, f, x, base);
	}
}

/* Write one record: "type", then its members from the values v[V__N]. */
void schema_write(struct jbuf *b, const struct sf_record *r,
		  const struct sv *v)
{
	json_obj_open(b);
	json_kv_str(b, "type", r->name);
	write_members(b, r->f, r->n, v);
	json_obj_close(b);
}

/* ---- the reader ------------------------------------------------------------------ */

struct sread {
	struct jr r;
	struct jbuf *scratch;		/* decoded strings; room reserved, never moved */
	char *room;			/* its next free byte */
};

static int read_members(struct sread *s, const struct sf_field *f, size_t n,
			struct sv *base);

/* The next value's JSON text (checked) as the value. */
static int read_raw(struct sread *s, struct sv *v)
{
	const unsigned char *start = s->r.pos;
	int err = jr_skip(&s->r);

	if (err)
		return err;
	v->st = SV_RAW;
	v->s = (const char *)start;
	v->n = (uint32_t)(s->r.pos - start);
	return 0;
}

/* A string: its bytes in the text, or decoded into the scratch room. */
static int read_str(struct sread *s, struct sv *v)
{
	struct jr_str str;
	int err = jr_str(&s->r, &str);

	if (err)
		return err;
	v->st = SV_SET;
	if (!str.esc) {
		v->s = str.s;
		v->n = (uint32_t)str.len;
		return 0;
	}
	v->s = s->room;
	v->n = (uint32_t)jr_str_decode(&str, s->room, JR_BYTES);
	s->room += v->n;
	return 0;
}

/*
 * The next value, for member f: v is set or null.  -EDOM: the value is
 * of another type and still to be read.
 */
static int read_value(struct sread *s, const struct sf_field *f,
		      struct sv *v, struct sv *base)
{
	enum jr_type t = jr_peek(&s->r);
	struct jr_str str;
	uint32_t nsec;
	int64_t secs;
	uint64_t u;
	bool b;
	int err;

	if (t == JR_NULL) {
		v->st = SV_NULL;
		return jr_null(&s->r);
	}
	/* an older record's plain value in place of the object */
	if (f->type == SFT_OBJ && t != JR_OBJ && sf_old_member(f)) {
		f = sf_old_member(f);
		v = &base[f->slot];
	}
	switch (f->type) {
	case SFT_OBJ:
		if (t != JR_OBJ)
			return -EDOM;
		v->st = SV_SET;
		err = jr_obj_open(&s->r);
		return err ? err : read_members(s, f->sub, f->nsub, base);
	case SFT_STR:
		if (t != JR_STR)
			return -EDOM;
		return read_str(s, v);
	case SFT_BOOL:
		err = jr_bool(&s->r, &b);
		if (!err)
			sv_bool(v, b);
		return err;
	case SFT_U8:
	case SFT_U32:
	case SFT_U64:
		err = jr_u64(&s->r, &u);
		if (!err && !(f->type == SFT_U8 && u > UINT8_MAX) &&
		    !(f->type == SFT_U32 && u > UINT32_MAX))
			sv_u64(v, u);
		return err;
	case SFT_I32:
		err = jr_i64(&s->r, &v->i);
		if (!err)
			v->st = v->i >= INT32_MIN && v->i <= INT32_MAX ? SV_SET : SV_NULL;
		return err;
	case SFT_F64:
		err = jr_f64(&s->r, &v->d);
		if (!err)
			v->st = SV_SET;
		return err;
	case SFT_TIME:
		if (t != JR_STR)
			return -EDOM;
		err = jr_str(&s->r, &str);
		if (!err && !str.esc &&
		    !json_parse_time(str.s, str.len, 0, &secs, &nsec) && secs >= 0)
			sv_u64(v, (uint64_t)secs * 1000000000ull + nsec);
		return err;
	case SFT_STRARR:
	case SFT_OBJARR:
		return t == JR_ARR ? read_raw(s, v) : -EDOM;
	case SFT_COUNTS:
		return t == JR_OBJ ? read_raw(s, v) : -EDOM;
	default:
		return -EDOM;
	}
}

/*
 * The members of the object being read (opened): those of f[0..n) into
 * base, the first of a name that appears twice, every other member
 * checked and skipped.  Records list their members in the description's
 * order, so the search starts after the last one found.
 */
static int read_members(struct sread *s, const struct sf_field *f, size_t n,
			struct sv *base)
{
	struct jr_str key;
	size_t next = 0;
	uint64_t seen = 0;
	int err;

	while ((err = jr_next_member(&s->r, &key)) > 0) {
		const struct sf_field *m = NULL;

		for (size_t j = 0, i = next; j < n; j++, i = i + 1 < n ? i + 1 : 0)
			if (f[i].keylen == key.len && !key.esc &&
			    !memcmp(f[i].key, key.s, key.len)) {
				m = &f[i];
				break;
			}
		if (!m || m->type == SFT_RECTIME || (seen & 1ull << (m - f))) {
			err = jr_skip(&s->r);
		} else {
			seen |= 1ull << (m - f);
			next = (size_t)(m - f) + 1 < n ? (size_t)(m - f) + 1 : 0;
			err = read_value(s, m, &base[m->slot], base);
			if (err == -EDOM)
				err = jr_skip(&s->r);
		}
		if (err)
			return err;
	}
	return err;
}

/* Read a record of type r from json[0..len) into v[V__N]. */
int schema_read(const struct sf_record *r, const char *json, size_t len,
		struct sv *v, struct jbuf *scratch, const char **why)
{
	struct sread s;
	int err;

	memset(v, 0, V__N * sizeof(*v));
	jbuf_reset(scratch);
	/* decoding never lengthens a string: the text's size is enough */
	s.room = jbuf_room(scratch, len + 1);
	if (!s.room)
		return -ENOMEM;
	s.scratch = scratch;
	jr_init(&s.r, json, len);
	err = jr_obj_open(&s.r);
	if (!err)
		err = read_members(&s, r->f, r->n, v);
	if (!err)
		err = jr_end(&s.r);
	if (err == -EDOM)
		err = -EINVAL;		/* not an object */
	if (err && why)
		*why = s.r.err ? s.r.err : "not a JSON object";
	return err < 0 ? err : 0;
}

/* The record type of a record (its "type" member), or NULL. */
const struct sf_record *schema_type_of(const char *json, size_t len)
{
	struct jr_str t;
	char buf[16];
	const char *s;
	size_t n;

	if (jr_member_str(json, len, "type", &t))
		return NULL;
	s = jr_str_get(&t, buf, sizeof(buf), &n);
	return s ? sf_record_find(s, n) : NULL;
}

/* ---- doc/records.md ------------------------------------------------------------ */

/* The type column of the field tables. */
static const char *md_type(const struct sf_field *f)
{
	static const char *const names[] = {
		[SFT_OBJ] = "object", [SFT_STR] = "string", [SFT_BOOL] = "boolean",
		[SFT_U8] = "integer", [SFT_U32] = "integer", [SFT_U64] = "integer",
		[SFT_I32] = "integer", [SFT_F64] = "number", [SFT_TIME] = "time",
		[SFT_STRARR] = "array of strings", [SFT_COUNTS] = "object of integers",
		[SFT_OBJARR] = "array of objects",
	};

	return names[f->type];
}

/* One row per member, nested members under their dotted path. */
static void md_rows(FILE *out, const char *prefix, const struct sf_field *f,
		    size_t n)
{
	for (size_t i = 0; i < n; i++, f++) {
		char path[128];

		if (f->type == SFT_RECTIME) {
			fprintf(out, "| *(no member)* | time | `%s`, `%s` | %s |\n",
				f->col, f->col2, f->doc);
			continue;
		}
		snprintf(path, sizeof(path), "%s%s", prefix, f->key);
		fprintf(out, "| `%s` | %s%s%s | %s%s%s%s%s | %s |\n", path,
			md_type(f), f->flags & SF_NULL ? ", or null" : "",
			f->flags & SF_OPT ? ", or absent" : "",
			f->col ? "`" : "", f->col ? f->col : "",
			f->col2 ? "`, `" : "", f->col2 ? f->col2 : "",
			f->col ? "`" : "", f->doc ? f->doc : "");
		if (f->sub) {
			char sub[130];

			snprintf(sub, sizeof(sub), "%s%s.", path,
				 f->type == SFT_OBJARR ? "[]" : "");
			md_rows(out, sub, f->sub, f->nsub);
		}
	}
}

/* Print the field table of doc/records.md (Markdown) for record type r:
 * a marker line, a blank line, the table, a blank line. */
void schema_print_markdown_one(FILE *out, const struct sf_record *r)
{
	fprintf(out, "<!-- fields of %s: made by `jobtrace schema markdown`,"
		" do not edit -->\n\n", r->name);
	fputs("| field | type | column | meaning |\n"
	      "| --- | --- | --- | --- |\n", out);
	fprintf(out, "| `type` | string | | `%s`: %s |\n", r->name, r->doc);
	md_rows(out, "", r->f, r->n);
	fputs("\n", out);
}

/* ... and for every record type. */
void schema_print_markdown(FILE *out)
{
	for (size_t i = 0; i < SF_REC__N; i++)
		schema_print_markdown_one(out, &sf_records[i]);
}
