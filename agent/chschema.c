// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * chschema.c - schema v1 records as ClickHouse tables and JSONEachRow rows.
 *
 * One static description per table drives both the DDL and the conversion
 * of records into rows, so the two cannot disagree.  The conversion is a
 * strict recursive-descent JSON parser (RFC 8259: UTF-8 only, no lone
 * surrogates) that writes the columns as it reads, into a json.h buffer.
 * It allocates nothing except for escaped strings longer than its stack
 * buffer.  It runs for every record delivered (the target is 50,000/s on
 * two cores), so: strings with escapes are decoded and written again by
 * json_strn(); column names and strings that need no escaping are copied
 * into the buffer as json.h would write them; the record's text, the
 * `json` column, is escaped eight bytes at a time.
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

enum ch_type {
	CT_OBJ,		/* nested object: its members are columns */
	CT_STR,		/* String; a number or boolean is kept as its text */
	CT_BOOL,	/* UInt8, 1 for true */
	CT_U8,
	CT_U32,
	CT_U64,
	CT_I32,
	CT_F64,
	CT_TIME,	/* col DateTime('UTC') + col2 UInt32 microseconds */
	CT_STRARR,	/* Array(String) */
	CT_COUNTS,	/* {name: count}: col Array(String), col2 Array(UInt64) */
	CT_RECTIME,	/* job: the record's own time, derived (no member) */
};

#define F_NULL	0x01	/* Nullable column */
#define F_PHASE	0x02	/* job: "phase" says which time is the record's */
#define F_START	0x04	/* job: start_time */
#define F_END	0x08	/* job: end_time */

struct ch_field {
	const char *key;		/* member name */
	unsigned char keylen;
	unsigned char type;		/* enum ch_type */
	unsigned char flags;		/* F_* */
	unsigned char nsub;
	const char *col;		/* column */
	const char *col2;		/* second column (CT_TIME, CT_COUNTS) */
	/*
	 * CT_OBJ: the members' fields.  CT_STR: an object in place of the
	 * string is read through these (signal's job and tool), which must
	 * write col only.
	 */
	const struct ch_field *sub;
	const char *doc;		/* SQL comment for the column */
};

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define FLD(k, t, fl, c, c2, s, ns, d) \
	{ k, sizeof(k) - 1, t, fl, ns, c, c2, s, d }
#define STR(k, c, fl, d)	FLD(k, CT_STR, fl, c, NULL, NULL, 0, d)
#define NUM(k, t, c, fl, d)	FLD(k, t, fl, c, NULL, NULL, 0, d)
#define TIME(k, c, fl, d)	FLD(k, CT_TIME, fl, c, c "_us", NULL, 0, d)
#define OBJ(k, s)		FLD(k, CT_OBJ, 0, NULL, NULL, s, ARRAY_SIZE(s), NULL)
#define STROBJ(k, c, s, d)	FLD(k, CT_STR, F_NULL, c, NULL, s, ARRAY_SIZE(s), d)

/* Every record starts with these ("type" is the table). */
#define HEAD_FIELDS \
	NUM("schema", CT_U8, "schema", 0, "record schema version (1)"), \
	STR("host", "host", 0, "node name"), \
	STR("id", "id", 0, "record id (UUID text), the same on a retry")

static const struct ch_field job_fields[] = {
	STR("scheduler", "job_scheduler", F_NULL, NULL),
	STR("id", "job_id", F_NULL, "the scheduler's job id"),
	STR("step", "job_step", F_NULL, "the scheduler's step: batch, extern, 0, ..."),
	STR("run", "job_run", F_NULL, "workflow run"),
	STR("pipeline", "job_pipeline", F_NULL, NULL),
	STR("task", "job_task", F_NULL, "workflow step: Snakemake rule, Nextflow process"),
	STR("user", "job_user", F_NULL, NULL),
	STR("account", "job_account", F_NULL, NULL),
	STR("cost_center", "job_cost_center", F_NULL, NULL),
};

static const struct ch_field tool_fields[] = {
	STR("name", "tool_name", F_NULL, "as the rules decide"),
	STR("category", "tool_category", F_NULL, NULL),
	STR("version", "tool_version", F_NULL, NULL),
};

static const struct ch_field exit_fields[] = {
	NUM("code", CT_I32, "exit_code", F_NULL, "exit status, NULL when killed"),
	NUM("signal", CT_I32, "exit_signal", F_NULL, "the signal that killed it"),
	NUM("core_dumped", CT_BOOL, "exit_core_dumped", 0, NULL),
	NUM("oom_killed", CT_BOOL, "exit_oom_killed", 0, NULL),
	NUM("lost", CT_BOOL, "exit_lost", 0, "exit event lost: counters are the last sample"),
};

static const struct ch_field cpu_fields[] = {
	NUM("user_s", CT_F64, "cpu_user_s", 0, "seconds"),
	NUM("sys_s", CT_F64, "cpu_sys_s", 0, "seconds"),
};

static const struct ch_field mem_process_fields[] = {
	NUM("peak_rss_bytes", CT_U64, "mem_peak_rss_bytes", 0,
	    "high-water mark after exec"),
	NUM("maxrss_kernel_bytes", CT_U64, "mem_maxrss_kernel_bytes", 0,
	    "getrusage maxrss (with the pre-exec image)"),
};

static const struct ch_field mem_sample_fields[] = {
	NUM("peak_rss_bytes", CT_U64, "mem_peak_rss_bytes", 0, "high-water mark so far"),
	NUM("rss_bytes", CT_U64, "mem_rss_bytes", 0, "current RSS"),
};

static const struct ch_field io_fields[] = {
	NUM("read_bytes", CT_U64, "io_read_bytes", 0, "from storage"),
	NUM("write_bytes", CT_U64, "io_write_bytes", 0, "dirtied for storage"),
	NUM("cancelled_write_bytes", CT_U64, "io_cancelled_write_bytes", 0,
	    "dirty bytes its truncates and deletes took back"),
	NUM("rchar", CT_U64, "io_rchar", 0, "read(2) and friends"),
	NUM("wchar", CT_U64, "io_wchar", 0, "write(2) and friends"),
	NUM("blkio_delay_s", CT_F64, "io_blkio_delay_s", 0, "seconds waiting for block I/O"),
};

static const struct ch_field net_fields[] = {
	NUM("rx_bytes", CT_U64, "net_rx_bytes", 0, "IPv4/IPv6 sockets"),
	NUM("tx_bytes", CT_U64, "net_tx_bytes", 0, NULL),
};

/* The identity and program fields of process and sample records. */
#define PROC_FIELDS \
	NUM("pid", CT_U32, "pid", 0, NULL), \
	NUM("ppid", CT_U32, "ppid", 0, NULL), \
	STR("parent_id", "parent_id", F_NULL, "the parent's record id"), \
	TIME("start_time", "start_time", 0, "process start"), \
	STR("exe", "exe", F_NULL, "path given to exec"), \
	NUM("exe_truncated", CT_BOOL, "exe_truncated", 0, \
	    "the kernel cut exe at 255 bytes"), \
	STR("comm", "comm", 0, NULL), \
	FLD("argv", CT_STRARR, 0, "argv", NULL, NULL, 0, "redacted by the rules"), \
	NUM("argv_truncated", CT_BOOL, "argv_truncated", 0, NULL), \
	NUM("uid", CT_U32, "uid", 0, NULL), \
	STR("cgroup", "cgroup", F_NULL, NULL), \
	STR("container", "container", F_NULL, "runtime://id"), \
	OBJ("job", job_fields), \
	OBJ("tool", tool_fields)

static const struct ch_field process_fields[] = {
	HEAD_FIELDS,
	PROC_FIELDS,
	TIME("end_time", "end_time", F_NULL, "exit"),
	OBJ("exit", exit_fields),
	OBJ("cpu", cpu_fields),
	OBJ("mem", mem_process_fields),
	OBJ("io", io_fields),
	OBJ("net", net_fields),
};

static const struct ch_field sample_fields[] = {
	HEAD_FIELDS,
	TIME("time", "time", 0, "when the counters were read"),
	PROC_FIELDS,
	OBJ("cpu", cpu_fields),
	OBJ("mem", mem_sample_fields),
	OBJ("io", io_fields),
	OBJ("net", net_fields),
};

static const struct ch_field allocation_fields[] = {
	NUM("cpus", CT_U32, "allocation_cpus", F_NULL, NULL),
	NUM("mem_bytes", CT_U64, "allocation_mem_bytes", F_NULL, NULL),
	NUM("gpus", CT_U32, "allocation_gpus", F_NULL, NULL),
};

static const struct ch_field usage_fields[] = {
	NUM("cpu_s", CT_F64, "usage_cpu_s", F_NULL, "its processes' own CPU"),
	NUM("processes", CT_U64, "usage_processes", F_NULL, NULL),
	NUM("mem_peak_bytes", CT_U64, "usage_mem_peak_bytes", F_NULL,
	    "memory cgroup charge peak, else peak sum of RSS"),
	STR("mem_peak_source", "usage_mem_peak_source", F_NULL,
	    "cgroup_v1, cgroup_v2 or samples"),
};

static const struct ch_field job_record_fields[] = {
	HEAD_FIELDS,
	FLD("", CT_RECTIME, 0, "time", "time_us", NULL, 0,
	    "end_time for phase end, else start_time (else end_time)"),
	FLD("phase", CT_STR, F_PHASE, "phase", NULL, NULL, 0, "start or end"),
	OBJ("job", job_fields),
	STR("name", "name", F_NULL, NULL),
	STR("partition", "partition", F_NULL, NULL),
	STR("node", "node", F_NULL, NULL),
	NUM("uid", CT_U32, "uid", F_NULL, NULL),
	TIME("start_time", "start_time", F_NULL | F_START, NULL),
	TIME("end_time", "end_time", F_NULL | F_END, NULL),
	OBJ("allocation", allocation_fields),
	NUM("exit_code", CT_I32, "exit_code", F_NULL, NULL),
	NUM("cost", CT_F64, "cost", F_NULL, "NULL until prices are known"),
	OBJ("usage", usage_fields),
};

/* signal: "job" is the job's id (an object is read for its "id"). */
static const struct ch_field signal_job_fields[] = {
	STR("id", "job_id", F_NULL, NULL),
};

/* signal: "tool" is the tool's name (an object is read for its "name"). */
static const struct ch_field signal_tool_fields[] = {
	STR("name", "tool_name", F_NULL, NULL),
};

static const struct ch_field evidence_fields[] = {
	NUM("rss_bytes", CT_U64, "evidence_rss_bytes", F_NULL, "oom_kill: the victim's RSS"),
	NUM("total_vm_bytes", CT_U64, "evidence_total_vm_bytes", F_NULL,
	    "oom_kill: its virtual size"),
};

static const struct ch_field signal_fields[] = {
	HEAD_FIELDS,
	STR("kind", "kind", 0, "oom_kill, stalled, io_wait, net_wait, slow, idle_host"),
	TIME("time", "time", 0, NULL),
	STROBJ("job", "job_id", signal_job_fields, NULL),
	NUM("pid", CT_U32, "pid", F_NULL, NULL),
	STR("comm", "comm", F_NULL, NULL),
	STROBJ("tool", "tool_name", signal_tool_fields, NULL),
	OBJ("evidence", evidence_fields),
};

static const struct ch_field drops_fields[] = {
	NUM("ringbuf_fork", CT_U64, "drops_ringbuf_fork", 0, "events lost in the ring buffer"),
	NUM("ringbuf_exec", CT_U64, "drops_ringbuf_exec", 0, NULL),
	NUM("ringbuf_exit", CT_U64, "drops_ringbuf_exit", 0, NULL),
	NUM("ringbuf_oom", CT_U64, "drops_ringbuf_oom", 0, NULL),
	NUM("tracked_map_full", CT_U64, "drops_tracked_map_full", 0, NULL),
	NUM("exits_lost", CT_U64, "drops_exits_lost", 0, NULL),
	FLD("spool", CT_COUNTS, 0, "drops_spool_sink", "drops_spool_count", NULL, 0,
	    "records the spool dropped, per sink (parallel arrays)"),
	NUM("store_size_cap", CT_U64, "drops_store_size_cap", 0, "records the SQLite store deleted, oldest first, to keep under store.max_size_mib"),
};

static const struct ch_field host_fields[] = {
	HEAD_FIELDS,
	TIME("time", "time", 0, NULL),
	STR("phase", "phase", 0, "start, stop, spool_drop or store_size_cap"),
	STR("boot_id", "boot_id", F_NULL, NULL),
	STR("agent_version", "agent_version", F_NULL, NULL),
	NUM("events_seen", CT_U64, "events_seen", 0, NULL),
	OBJ("drops", drops_fields),
};

struct ch_table {
	const char *name;
	const struct ch_field *f;
	size_t n;
	const char *time;	/* partition by toYYYYMM(time) */
	const char *doc;	/* SQL comment lines */
};

static const struct ch_table tables[] = {
	{ "process", process_fields, ARRAY_SIZE(process_fields), "start_time",
	  "-- One row per finished process.\n" },
	{ "sample", sample_fields, ARRAY_SIZE(sample_fields), "time",
	  "-- A running job process's counters at every sample interval.\n" },
	{ "job", job_record_fields, ARRAY_SIZE(job_record_fields), "time",
	  "-- Scheduler jobs: one row when a hook registers a job (phase start),\n"
	  "-- one when it closes it (phase end).\n" },
	{ "signal", signal_fields, ARRAY_SIZE(signal_fields), "time",
	  "-- Things worth a look: OOM kills today.\n" },
	{ "host", host_fields, ARRAY_SIZE(host_fields), "time",
	  "-- Agent start and stop: identity, version, drop counters.\n" },
};

static const char *const table_names[] = {
	"process", "sample", "job", "signal", "host", NULL
};

/* The table names, one per record type, NULL-terminated. */
const char *const *chschema_tables(void)
{
	return table_names;
}

/* ---- DDL ------------------------------------------------------------------ */

/* Print name as a ClickHouse identifier, back-quoted when it must be. */
static void print_ident(FILE *out, const char *name)
{
	const char *s;
	bool plain = (*name >= 'a' && *name <= 'z') || (*name >= 'A' && *name <= 'Z') ||
		     *name == '_';

	for (s = name; plain && *s; s++)
		plain = (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
			(*s >= '0' && *s <= '9') || *s == '_';
	if (plain) {
		fputs(name, out);
		return;
	}
	fputc('`', out);
	for (s = name; *s; s++) {
		if (*s == '`' || *s == '\\')
			fputc('\\', out);
		fputc(*s, out);
	}
	fputc('`', out);
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
static void print_fields(FILE *out, const struct ch_field *f, size_t n)
{
	static const char *const types[] = {
		[CT_STR] = "String", [CT_BOOL] = "UInt8", [CT_U8] = "UInt8",
		[CT_U32] = "UInt32", [CT_U64] = "UInt64", [CT_I32] = "Int32",
		[CT_F64] = "Float64",
	};
	size_t i;

	for (i = 0; i < n; i++, f++) {
		bool null = f->flags & F_NULL;

		switch (f->type) {
		case CT_OBJ:
			print_fields(out, f->sub, f->nsub);
			break;
		case CT_TIME:
		case CT_RECTIME:
			print_column(out, f->col, "DateTime('UTC')", null, f->doc);
			print_column(out, f->col2, "UInt32", null,
				     "microseconds within the second");
			break;
		case CT_STRARR:
			print_column(out, f->col, "Array(String)", false, f->doc);
			break;
		case CT_COUNTS:
			print_column(out, f->col, "Array(String)", false, f->doc);
			print_column(out, f->col2, "Array(UInt64)", false, NULL);
			break;
		default:
			print_column(out, f->col, types[f->type], null, f->doc);
			break;
		}
	}
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
	for (i = 0; i < ARRAY_SIZE(tables); i++) {
		const struct ch_table *t = &tables[i];

		fprintf(out, "\n%s", t->doc);
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
}

/* ---- parser ----------------------------------------------------------------- */

/* 2105-12-31 23:59:59 UTC, the last second 18.16's DateTime text parser gets right */
#define CH_TIME_MAX 4291747199LL

struct ch_time {
	uint32_t secs;		/* since the epoch, UTC */
	uint32_t us;
};

struct chp {
	const unsigned char *pos, *end;
	const unsigned char *base;	/* the caller's text, for offsets */
	int depth;
	struct jbuf *b;
	/* job: which time is the record's own */
	bool phase_end, have_start, have_end;
	struct ch_time start, stop;
	const char *err;
	size_t err_off;
	char *heap;		/* scratch for long escaped strings */
	size_t heap_cap;
	char scratch[2048];
};

struct ch_str {
	const unsigned char *s;	/* between the quotes, as written */
	size_t len;
	bool esc;		/* has a backslash */
	bool plain;		/* no escapes, no DEL: JSON as it stands */
};

struct ch_num {
	const unsigned char *s;
	size_t len;
	bool is_int;		/* no fraction, no exponent */
	bool neg;
};

static __thread char errbuf[128];

/* Why the last chschema_row() call in this thread failed ("" if it did not). */
const char *chschema_strerror(void)
{
	return errbuf;
}

/* Note a syntax error at the current position; returns -EINVAL. */
static int fail(struct chp *p, const char *why)
{
	if (!p->err) {
		p->err = why;
		p->err_off = (size_t)(p->pos - p->base);
	}
	return -EINVAL;
}

/* Byte classes in a string: 0 plain, 1 '"', 2 '\\', 3 control, 4 high, 5 DEL. */
static const unsigned char str_class[256] = {
	[0x00 ... 0x1f] = 3, ['"'] = 1, ['\\'] = 2, [0x7f] = 5, [0x80 ... 0xff] = 4,
};

/* Skip JSON white space. */
static inline void ws(struct chp *p)
{
	while (p->pos < p->end && (*p->pos == ' ' || *p->pos == '\n' ||
				   *p->pos == '\r' || *p->pos == '\t'))
		p->pos++;
}

/* Value of 4 hex digits at s, or -1. */
static int hex4(const unsigned char *s)
{
	int v = 0, i, d;

	for (i = 0; i < 4; i++) {
		if (s[i] >= '0' && s[i] <= '9')
			d = s[i] - '0';
		else if ((s[i] | 0x20) >= 'a' && (s[i] | 0x20) <= 'f')
			d = (s[i] | 0x20) - 'a' + 10;
		else
			return -1;
		v = v << 4 | d;
	}
	return v;
}

/*
 * The escape sequence at s (s[0] == '\\'): its length (2, 6, or 12 for a
 * surrogate pair) with the code point in *cp, or 0 if it is invalid.
 */
static size_t escape_len(const unsigned char *s, const unsigned char *end,
			 uint32_t *cp)
{
	int u, lo;

	if (end - s < 2)
		return 0;
	switch (s[1]) {
	case '"': *cp = '"'; return 2;
	case '\\': *cp = '\\'; return 2;
	case '/': *cp = '/'; return 2;
	case 'b': *cp = '\b'; return 2;
	case 'f': *cp = '\f'; return 2;
	case 'n': *cp = '\n'; return 2;
	case 'r': *cp = '\r'; return 2;
	case 't': *cp = '\t'; return 2;
	case 'u':
		break;
	default:
		return 0;
	}
	if (end - s < 6 || (u = hex4(s + 2)) < 0)
		return 0;
	if (u >= 0xdc00 && u <= 0xdfff)
		return 0;		/* a low surrogate first */
	if (u < 0xd800 || u > 0xdbff) {
		*cp = (uint32_t)u;
		return 6;
	}
	if (end - s < 12 || s[6] != '\\' || s[7] != 'u')
		return 0;		/* a high surrogate alone */
	lo = hex4(s + 8);
	if (lo < 0xdc00 || lo > 0xdfff)
		return 0;
	*cp = 0x10000 + (((uint32_t)u - 0xd800) << 10) + ((uint32_t)lo - 0xdc00);
	return 12;
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ONES  0x0101010101010101ull
#define HIGHS 0x8080808080808080ull

/* High bit of each zero byte of x, exactly. */
static inline uint64_t zero_bytes(uint64_t x)
{
	const uint64_t low7 = 0x7f7f7f7f7f7f7f7full;

	return ~(((x & low7) + low7) | x | low7);
}

/* High bit of each byte of w that equals c (exact up to the first one). */
static inline uint64_t bytes_eq(uint64_t w, unsigned char c)
{
	uint64_t x = w ^ (ONES * c);

	return (x - ONES) & ~x & HIGHS;
}

/*
 * Offset of the first byte among the 8 at s that is not plain string
 * content ('"', '\\', a control character, DEL or a byte >= 0x80), or 8.
 * The lowest flagged byte of each test is exact, so their union's is too.
 */
static inline unsigned special8(const unsigned char *s)
{
	uint64_t w, m;

	memcpy(&w, s, 8);
	m = bytes_eq(w, '"') | bytes_eq(w, '\\') | bytes_eq(w, 0x7f) |
	    ((w - ONES * 0x20) & ~w & HIGHS) | (w & HIGHS);
	return m ? (unsigned)__builtin_ctzll(m) >> 3 : 8;
}
#endif

/* Read and check a string token at p->pos (a '"'). */
static int parse_string(struct chp *p, struct ch_str *str)
{
	const unsigned char *q = p->pos + 1, *end = p->end;
	bool esc = false, del = false;
	uint32_t cp;
	size_t n;

	for (;;) {
#ifdef ONES
		/* eight bytes at a time through the plain runs */
		while (end - q >= 8) {
			unsigned k = special8(q);

			q += k;
			if (k < 8)
				break;
		}
#endif
		while (q < end && !str_class[*q])
			q++;
		if (q >= end)
			return fail(p, "unterminated string");
		switch (str_class[*q]) {
		case 1:
			str->s = p->pos + 1;
			str->len = (size_t)(q - str->s);
			str->esc = esc;
			str->plain = !esc && !del;
			p->pos = q + 1;
			return 0;
		case 2:
			n = escape_len(q, end, &cp);
			if (!n) {
				p->pos = q;
				return fail(p, "invalid escape or lone surrogate");
			}
			esc = true;
			q += n;
			break;
		case 3:
			p->pos = q;
			return fail(p, "control character in a string");
		case 5:
			del = true;	/* json_strn() writes it as \u007f */
			q++;
			break;
		default:
			n = json_utf8_len(q, (size_t)(end - q));
			if (!n) {
				p->pos = q;
				return fail(p, "invalid UTF-8");
			}
			q += n;
			break;
		}
	}
}

/* Decode a checked string into out (>= str->len bytes); returns the length. */
static size_t unescape(const struct ch_str *str, unsigned char *out)
{
	const unsigned char *s = str->s, *end = s + str->len, *bs;
	size_t n = 0, k;
	uint32_t cp = 0;

	while (s < end) {
		bs = memchr(s, '\\', (size_t)(end - s));
		if (!bs)
			bs = end;
		memcpy(out + n, s, (size_t)(bs - s));
		n += (size_t)(bs - s);
		if (bs == end)
			break;
		k = escape_len(bs, end, &cp);	/* checked: never 0 here */
		n += json_utf8_put((char *)out + n, cp);
		s = bs + (k ? k : 2);
	}
	return n;
}

/*
 * The decoded bytes of a string value: the text itself when it has no
 * escapes, else a copy in the scratch buffer (a decoded string is never
 * longer than its escaped form).  NULL when memory ran out.
 */
static const char *decode(struct chp *p, const struct ch_str *str, size_t *len)
{
	unsigned char *out = (unsigned char *)p->scratch;

	if (!str->esc) {
		*len = str->len;
		return (const char *)str->s;
	}
	if (str->len > sizeof(p->scratch)) {
		if (str->len > p->heap_cap) {
			char *h = realloc(p->heap, str->len);

			if (!h)
				return NULL;
			p->heap = h;
			p->heap_cap = str->len;
		}
		out = (unsigned char *)p->heap;
	}
	*len = unescape(str, out);
	return (const char *)out;
}

/* Read and check a number token (RFC 8259 grammar). */
static int parse_number(struct chp *p, struct ch_num *num)
{
	const unsigned char *q = p->pos, *end = p->end;

	num->neg = q < end && *q == '-';
	if (num->neg)
		q++;
	if (q >= end || *q < '0' || *q > '9')
		return fail(p, "invalid value");
	if (*q == '0')
		q++;
	else
		while (q < end && *q >= '0' && *q <= '9')
			q++;
	num->is_int = true;
	if (q < end && *q == '.') {
		q++;
		if (q >= end || *q < '0' || *q > '9') {
			p->pos = q;
			return fail(p, "invalid number");
		}
		while (q < end && *q >= '0' && *q <= '9')
			q++;
		num->is_int = false;
	}
	if (q < end && (*q == 'e' || *q == 'E')) {
		q++;
		if (q < end && (*q == '+' || *q == '-'))
			q++;
		if (q >= end || *q < '0' || *q > '9') {
			p->pos = q;
			return fail(p, "invalid number");
		}
		while (q < end && *q >= '0' && *q <= '9')
			q++;
		num->is_int = false;
	}
	num->s = p->pos;
	num->len = (size_t)(q - p->pos);
	p->pos = q;
	return 0;
}

/* The magnitude of an integer token; false if it is not one or overflows. */
static bool num_u64(const struct ch_num *num, uint64_t *v)
{
	const unsigned char *s = num->s + num->neg, *end = num->s + num->len;
	uint64_t x = 0;

	if (!num->is_int)
		return false;
	for (; s < end; s++) {
		unsigned d = *s - '0';

		if (x > (UINT64_MAX - d) / 10)
			return false;
		x = x * 10 + d;
	}
	*v = x;
	return true;
}

/* A number token as a finite double; false if it is not one. */
static bool num_f64(const struct ch_num *num, double *v)
{
	static const double pow10[] = {
		1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
		1e12, 1e13, 1e14, 1e15,
	};
	const unsigned char *s = num->s + num->neg, *end = num->s + num->len;
	uint64_t m = 0;
	int digits = 0, frac = -1;
	char tmp[512];
	char *e;

	/* exact fast path: up to 15 digits, no exponent (Clinger) */
	for (; s < end && digits <= 15; s++) {
		if (*s == '.') {
			frac = 0;
			continue;
		}
		if (*s < '0' || *s > '9')
			break;
		m = m * 10 + (uint64_t)(*s - '0');
		digits++;
		if (frac >= 0)
			frac++;
	}
	if (s == end && digits <= 15) {
		*v = frac > 0 ? (double)m / pow10[frac] : (double)m;
		if (num->neg)
			*v = -*v;
		return true;
	}
	if (num->len >= sizeof(tmp))
		return false;
	memcpy(tmp, num->s, num->len);
	tmp[num->len] = '\0';
	*v = strtod(tmp, &e);
	return *e == '\0' && isfinite(*v);
}

static int skip_value(struct chp *p);

/* Accept the literal word w (true, false, null) at p->pos. */
static int literal(struct chp *p, const char *w, size_t n)
{
	if ((size_t)(p->end - p->pos) < n || memcmp(p->pos, w, n))
		return fail(p, "invalid value");
	p->pos += n;
	return 0;
}

/*
 * The element loop of an array or object, in two or three steps:
 *   for (err = cont_open(p, '}'); err > 0; err = cont_next(p, '}')) {
 *           err = obj_key(p, &key);  (objects only)  ... the value ...
 *   }
 * cont_open() takes the '[' or '{' (1: elements follow, 0: it was empty),
 * obj_key() a member name and its ':', cont_next() the ',' (1) or the
 * closing bracket (0).  Errors are negative.
 */
static int cont_open(struct chp *p, unsigned char close)
{
	if (++p->depth > CHSCHEMA_MAX_DEPTH)
		return fail(p, "nested too deeply");
	p->pos++;
	ws(p);
	if (p->pos < p->end && *p->pos == close) {
		p->pos++;
		p->depth--;
		return 0;
	}
	return 1;
}

static int obj_key(struct chp *p, struct ch_str *key)
{
	int err;

	if (p->pos >= p->end || *p->pos != '"')
		return fail(p, "expected a member name");
	err = parse_string(p, key);
	if (err)
		return err;
	ws(p);
	if (p->pos >= p->end || *p->pos != ':')
		return fail(p, "expected ':'");
	p->pos++;
	ws(p);
	return 0;
}

static int cont_next(struct chp *p, unsigned char close)
{
	ws(p);
	if (p->pos >= p->end)
		return fail(p, close == '}' ? "unterminated object" :
					      "unterminated array");
	if (*p->pos == close) {
		p->pos++;
		p->depth--;
		return 0;
	}
	if (*p->pos != ',')
		return fail(p, close == '}' ? "expected ',' or '}'" :
					      "expected ',' or ']'");
	p->pos++;
	ws(p);
	return 1;
}

/* Skip (and check) an array at p->pos. */
static int skip_array(struct chp *p)
{
	int err;

	for (err = cont_open(p, ']'); err > 0; err = cont_next(p, ']')) {
		err = skip_value(p);
		if (err)
			return err;
	}
	return err;
}

static int parse_object(struct chp *p, const struct ch_field *f, size_t n);

/* Skip (and check) any value at p->pos. */
static int skip_value(struct chp *p)
{
	struct ch_str str;
	struct ch_num num;

	if (p->pos >= p->end)
		return fail(p, "value missing");
	switch (*p->pos) {
	case '{':
		return parse_object(p, NULL, 0);
	case '[':
		return skip_array(p);
	case '"':
		return parse_string(p, &str);
	case 't':
		return literal(p, "true", 4);
	case 'f':
		return literal(p, "false", 5);
	case 'n':
		return literal(p, "null", 4);
	default:
		return parse_number(p, &num);
	}
}

/* Days from 1970-01-01 to y-m-d (proleptic Gregorian; H. Hinnant). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
	int64_t era;
	unsigned yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = (unsigned)(y - era * 400);
	doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

/* Parse n digits at s into *v; false if any is not a digit. */
static bool digits(const char *s, int n, unsigned *v)
{
	unsigned x = 0;

	while (n--) {
		if (*s < '0' || *s > '9')
			return false;
		x = x * 10 + (unsigned)(*s++ - '0');
	}
	*v = x;
	return true;
}

/*
 * Parse an RFC 3339 time ("2026-11-22T10:00:00.123456Z", any number of
 * fraction digits, Z or +hh:mm) into UTC seconds and microseconds; false
 * unless DateTime holds it: 1970 to 2105 (18.16 parses the last five weeks
 * of DateTime's range, up to 2106-02-07 06:28:15, into 1970).
 */
static bool parse_time(const char *s, size_t n, struct ch_time *t)
{
	static const unsigned char mdays[] = {
		31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31
	};
	unsigned y, mo, d, h, mi, sec, us = 0, oh, om, k;
	const char *end = s + n, *q;
	int64_t secs, off = 0;
	bool leap;

	if (n < 20 || !digits(s, 4, &y) || s[4] != '-' || !digits(s + 5, 2, &mo) ||
	    s[7] != '-' || !digits(s + 8, 2, &d) ||
	    (s[10] != 'T' && s[10] != 't' && s[10] != ' ') ||
	    !digits(s + 11, 2, &h) || s[13] != ':' || !digits(s + 14, 2, &mi) ||
	    s[16] != ':' || !digits(s + 17, 2, &sec))
		return false;
	leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
	if (mo < 1 || mo > 12 || d < 1 ||
	    d > mdays[mo - 1] + (unsigned)(mo == 2 && leap) ||
	    h > 23 || mi > 59 || sec > 59)
		return false;
	q = s + 19;
	if (*q == '.') {
		q++;
		if (q >= end || *q < '0' || *q > '9')
			return false;
		for (k = 0; q < end && *q >= '0' && *q <= '9'; q++, k++)
			if (k < 6)
				us = us * 10 + (unsigned)(*q - '0');
		for (; k < 6; k++)
			us *= 10;
	}
	if (q < end && (*q == 'Z' || *q == 'z')) {
		q++;
	} else if (end - q == 6 && (*q == '+' || *q == '-') &&
		   digits(q + 1, 2, &oh) && q[3] == ':' && digits(q + 4, 2, &om) &&
		   oh <= 23 && om <= 59) {
		off = (int64_t)(oh * 3600 + om * 60) * (*q == '-' ? -1 : 1);
		q += 6;
	} else {
		return false;
	}
	if (q != end)
		return false;
	secs = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec - off;
	if (secs < 0 || secs > CH_TIME_MAX)
		return false;
	t->secs = (uint32_t)secs;
	t->us = us;
	return true;
}

/* Write v as exactly width digits at out. */
static void put_digits(char *out, unsigned v, int width)
{
	while (width--) {
		out[width] = (char)('0' + v % 10);
		v /= 10;
	}
}

/* Format t as "YYYY-MM-DD hh:mm:ss" (UTC) into out[19]. */
static void format_time(const struct ch_time *t, char *out)
{
	uint32_t days = t->secs / 86400, rem = t->secs % 86400;
	/* civil_from_days (H. Hinnant), for days >= 0 */
	uint32_t z = days + 719468, era = z / 146097, doe = z - era * 146097;
	uint32_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	uint32_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	uint32_t mp = (5 * doy + 2) / 153;
	uint32_t d = doy - (153 * mp + 2) / 5 + 1;
	uint32_t m = mp < 10 ? mp + 3 : mp - 9;
	uint32_t y = yoe + era * 400 + (m <= 2);

	put_digits(out, y, 4);
	out[4] = '-';
	put_digits(out + 5, m, 2);
	out[7] = '-';
	put_digits(out + 8, d, 2);
	out[10] = ' ';
	put_digits(out + 11, rem / 3600, 2);
	out[13] = ':';
	put_digits(out + 14, rem / 60 % 60, 2);
	out[16] = ':';
	put_digits(out + 17, rem % 60, 2);
}

/*
 * Make room for n more bytes and the NUL in b, the way json.c grows it
 * (json.h writes JSON values only, and a row needs a few raw bytes).
 */
static int reserve(struct jbuf *b, size_t n)
{
	size_t cap = b->cap ? b->cap : 256;
	char *buf;

	if (b->oom)
		return -ENOMEM;
	if (b->len + n + 1 <= b->cap)
		return 0;
	while (cap < b->len + n + 1)
		cap *= 2;
	buf = realloc(b->buf, cap);
	if (!buf) {
		b->oom = true;
		return -ENOMEM;
	}
	b->buf = buf;
	b->cap = cap;
	return 0;
}

/* The separator json.h would write before a value in b's container. */
static inline void raw_sep(struct jbuf *b)
{
	if (b->after_key)
		b->after_key = false;
	else if (b->depth > 0 && b->need_comma[b->depth - 1])
		b->buf[b->len++] = ',';
	if (b->depth > 0)
		b->need_comma[b->depth - 1] = true;
}

/*
 * Write the key of a column: what json_key() writes, for a name known to
 * need no escaping, and without json_key()'s per-byte escaper.
 */
static void raw_key(struct jbuf *b, const char *col)
{
	size_t n = strlen(col);

	if (b->after_key)
		b->oom = true;	/* two keys in a row, as json.h sees it */
	if (reserve(b, n + 4))
		return;
	raw_sep(b);
	b->buf[b->len++] = '"';
	memcpy(b->buf + b->len, col, n);
	b->len += n;
	b->buf[b->len++] = '"';
	b->buf[b->len++] = ':';
	b->buf[b->len] = '\0';
	b->after_key = true;
}

/*
 * Write a string value whose bytes need no escaping (a checked string with
 * no escape sequence and no DEL): json_strn() would write the same bytes.
 */
static void raw_string(struct jbuf *b, const void *s, size_t n)
{
	if (reserve(b, n + 3))
		return;
	raw_sep(b);
	b->buf[b->len++] = '"';
	memcpy(b->buf + b->len, s, n);
	b->len += n;
	b->buf[b->len++] = '"';
	b->buf[b->len] = '\0';
}

/* Escapes for a checked JSON text inside a string: 0 means as is. */
static const char text_esc[256] = {
	['"'] = '"', ['\\'] = '\\', ['\n'] = 'n', ['\r'] = 'r', ['\t'] = 't',
};

/*
 * Escape a checked JSON text into out (2 * n + 24 bytes); returns the
 * length.  A record has a quote every six bytes or so, too often for
 * byte-at-a-time loops with branches: each eight bytes are copied at once
 * and the quotes, backslashes and white space among them fixed up in
 * place.
 */
static size_t escape_text(char *restrict out, const unsigned char *restrict s,
			  size_t n)
{
	const unsigned char *end = s + n;
	char *o = out;

#ifdef ONES
	while (end - s >= 8) {
		uint64_t w, m, rest;
		unsigned k;

		memcpy(&w, s, 8);
		memcpy(o, &w, 8);
		m = zero_bytes(w ^ (ONES * '"')) | zero_bytes(w ^ (ONES * '\\')) |
		    zero_bytes(w & (ONES * 0xe0));
		for (; m; m &= m - 1, o++) {
			k = (unsigned)__builtin_ctzll(m) >> 3;
			rest = w >> (8 * k) >> 8;	/* the bytes after it */
			o[k] = '\\';
			o[k + 1] = text_esc[s[k]];
			memcpy(o + k + 2, &rest, 8);
		}
		o += 8;
		s += 8;
	}
#endif
	for (; s < end; s++) {
		if (text_esc[*s]) {
			*o++ = '\\';
			*o++ = text_esc[*s];
		} else {
			*o++ = (char)*s;
		}
	}
	return (size_t)(o - out);
}

/*
 * The record's text as a string value.  The text was checked: its only
 * control characters are white space between tokens and its bytes are
 * UTF-8, so escaping is a table lookup per byte.
 */
static void text_value(struct jbuf *b, const unsigned char *s, size_t n)
{
	json_strn(b, "", 0);	/* separator and quotes, as json.h does */
	if (reserve(b, 2 * n + 24))
		return;
	b->len += escape_text(b->buf + b->len - 1, s, n) - 1;
	b->buf[b->len++] = '"';
	b->buf[b->len] = '\0';
}

/* Append '\n' to b. */
static void put_newline(struct jbuf *b)
{
	if (reserve(b, 1))
		return;
	b->buf[b->len++] = '\n';
	b->buf[b->len] = '\0';
}

/* Write a time's two columns. */
static void emit_time(struct jbuf *b, const struct ch_field *f,
		      const struct ch_time *t)
{
	char tmp[19];

	format_time(t, tmp);
	raw_key(b, f->col);
	raw_string(b, tmp, sizeof(tmp));
	raw_key(b, f->col2);
	json_u64(b, t->us);
}

/* Write a checked string token as a string value (re-escaped if need be). */
static int put_str(struct chp *p, const struct ch_str *str)
{
	const char *s;
	size_t n;

	if (str->plain) {
		raw_string(p->b, str->s, str->len);
		return 0;
	}
	s = decode(p, str, &n);
	if (!s)
		return -ENOMEM;
	json_strn(p->b, s, n);
	return 0;
}

/* A string value for field f. */
static int string_value(struct chp *p, const struct ch_field *f,
			const struct ch_str *str)
{
	struct ch_time t;
	const char *s;
	size_t n;

	if (f->type == CT_STR) {
		raw_key(p->b, f->col);
		if (f->flags & F_PHASE) {
			s = decode(p, str, &n);
			if (!s)
				return -ENOMEM;
			p->phase_end = n == 3 && !memcmp(s, "end", 3);
		}
		return put_str(p, str);
	}
	if (f->type != CT_TIME)
		return 0;
	s = decode(p, str, &n);
	if (!s)
		return -ENOMEM;
	if (!parse_time(s, n, &t))
		return 0;
	emit_time(p->b, f, &t);
	if (f->flags & F_START) {
		p->start = t;
		p->have_start = true;
	} else if (f->flags & F_END) {
		p->stop = t;
		p->have_end = true;
	}
	return 0;
}

/* A number value for field f. */
static void number_value(struct chp *p, const struct ch_field *f,
			 const struct ch_num *num)
{
	uint64_t v;
	double d;

	switch (f->type) {
	case CT_STR:
		raw_key(p->b, f->col);
		raw_string(p->b, num->s, num->len);
		break;
	case CT_BOOL:
		if (num_u64(num, &v) && v <= 1) {
			raw_key(p->b, f->col);
			json_u64(p->b, v);
		}
		break;
	case CT_U8:
	case CT_U32:
	case CT_U64:
		if (!num_u64(num, &v) || (num->neg && v))
			break;
		if ((f->type == CT_U8 && v > UINT8_MAX) ||
		    (f->type == CT_U32 && v > UINT32_MAX))
			break;
		raw_key(p->b, f->col);
		json_u64(p->b, v);
		break;
	case CT_I32:
		if (!num_u64(num, &v) || v > (num->neg ? 1ull << 31 : INT32_MAX))
			break;
		raw_key(p->b, f->col);
		json_i64(p->b, num->neg ? -(int64_t)v : (int64_t)v);
		break;
	case CT_F64:
		if (num_f64(num, &d)) {
			raw_key(p->b, f->col);
			json_double(p->b, d);
		}
		break;
	}
}

/* An array of strings (argv): non-strings become their text, or "". */
static int string_array(struct chp *p, const struct ch_field *f)
{
	const unsigned char *s;
	struct ch_str str;
	struct ch_num num;
	int err;

	raw_key(p->b, f->col);
	json_arr_open(p->b);
	for (err = cont_open(p, ']'); err > 0; err = cont_next(p, ']')) {
		if (p->pos >= p->end)
			return fail(p, "unterminated array");
		switch (*p->pos) {
		case '"':
			err = parse_string(p, &str);
			if (!err)
				err = put_str(p, &str);
			break;
		case '{':
		case '[':
		case 'n':
			err = skip_value(p);
			if (!err)
				raw_string(p->b, "", 0);
			break;
		case 't':
		case 'f':
			s = p->pos;
			err = skip_value(p);
			if (!err)
				raw_string(p->b, s, (size_t)(p->pos - s));
			break;
		default:
			err = parse_number(p, &num);
			if (!err)
				raw_string(p->b, num.s, num.len);
			break;
		}
		if (err)
			return err;
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
	struct ch_str key;
	struct ch_num num;
	uint64_t v;
	int err;

	for (err = cont_open(p, '}'); err > 0; err = cont_next(p, '}')) {
		err = obj_key(p, &key);
		if (err)
			return err;
		if (p->pos < p->end && (*p->pos == '-' ||
					(*p->pos >= '0' && *p->pos <= '9'))) {
			err = parse_number(p, &num);
			if (err)
				return err;
			if (num_u64(&num, &v) && !num.neg) {
				if (names)
					err = put_str(p, &key);
				else
					json_u64(p->b, v);
			}
		} else {
			err = skip_value(p);
		}
		if (err)
			return err;
	}
	return err;
}

/* A {name: count} object as two parallel arrays. */
static int counts(struct chp *p, const struct ch_field *f)
{
	const unsigned char *start = p->pos;
	int err;

	raw_key(p->b, f->col);
	json_arr_open(p->b);
	err = counts_pass(p, true);
	if (err)
		return err;
	json_arr_close(p->b);
	p->pos = start;
	raw_key(p->b, f->col2);
	json_arr_open(p->b);
	err = counts_pass(p, false);
	json_arr_close(p->b);
	return err;
}

/* The value at p->pos for field f: write its column(s) if it fits. */
static int field_value(struct chp *p, const struct ch_field *f)
{
	struct ch_str str;
	struct ch_num num;
	bool truth;
	int err;

	if (p->pos >= p->end)
		return fail(p, "value missing");
	switch (*p->pos) {
	case '{':
		if (f->sub)
			return parse_object(p, f->sub, f->nsub);
		if (f->type == CT_COUNTS)
			return counts(p, f);
		return skip_value(p);
	case '[':
		if (f->type == CT_STRARR)
			return string_array(p, f);
		return skip_value(p);
	case '"':
		err = parse_string(p, &str);
		return err ? err : string_value(p, f, &str);
	case 't':
	case 'f':
		truth = *p->pos == 't';
		err = truth ? literal(p, "true", 4) : literal(p, "false", 5);
		if (err)
			return err;
		if (f->type == CT_BOOL) {
			raw_key(p->b, f->col);
			json_u64(p->b, truth);
		} else if (f->type == CT_STR) {
			raw_key(p->b, f->col);
			raw_string(p->b, truth ? "true" : "false", truth ? 4 : 5);
		}
		return 0;
	case 'n':
		return literal(p, "null", 4);
	default:
		err = parse_number(p, &num);
		if (!err)
			number_value(p, f, &num);
		return err;
	}
}

/*
 * The field of f[0..n) named by key, or NULL.  The search starts at
 * f[from]: records list their members in the order of the field lists,
 * so the field after the last one found is usually the next.
 */
static const struct ch_field *lookup(const struct ch_field *f, size_t n,
				     size_t from, const struct ch_str *key)
{
	const unsigned char *k = key->s;
	unsigned char buf[64];
	size_t len = key->len, i, j;

	if (!n)
		return NULL;
	if (key->esc) {
		if (len > sizeof(buf))
			return NULL;	/* longer than any field name */
		len = unescape(key, buf);
		k = buf;
	}
	if (!len)
		return NULL;
	for (j = 0, i = from; j < n; j++, i = i + 1 < n ? i + 1 : 0)
		if (f[i].keylen == len && f[i].key[0] == k[0] &&
		    !memcmp(f[i].key, k, len))
			return &f[i];
	return NULL;
}

/*
 * An object at p->pos whose members are the fields f[0..n): write their
 * columns.  Other members, and a member's second occurrence, are checked
 * and skipped.
 */
static int parse_object(struct chp *p, const struct ch_field *f, size_t n)
{
	const struct ch_field *fld;
	struct ch_str key;
	uint64_t seen = 0, bit;
	size_t next = 0;
	int err;

	for (err = cont_open(p, '}'); err > 0; err = cont_next(p, '}')) {
		err = obj_key(p, &key);
		if (err)
			return err;
		fld = lookup(f, n, next, &key);
		bit = fld ? 1ull << (fld - f) : 0;
		if (fld && !(seen & bit)) {
			seen |= bit;
			next = (size_t)(fld - f) + 1 < n ? (size_t)(fld - f) + 1 : 0;
			err = field_value(p, fld);
		} else {
			err = skip_value(p);
		}
		if (err)
			return err;
	}
	return err;
}

/*
 * The value of the first top-level "type" member, found by walking (and
 * so checking) the whole object.  str->s is NULL when there is none.
 */
static int find_type(struct chp *p, struct ch_str *type)
{
	static const struct ch_field type_field[] = {
		STR("type", "type", 0, NULL),
	};
	struct ch_str key;
	bool found = false;
	int err;

	type->s = NULL;
	p->depth = 0;
	for (err = cont_open(p, '}'); err > 0; err = cont_next(p, '}')) {
		err = obj_key(p, &key);
		if (err)
			return err;
		if (!found && lookup(type_field, 1, 0, &key)) {
			found = true;	/* the first one counts */
			if (p->pos < p->end && *p->pos == '"')
				err = parse_string(p, type);
			else
				err = skip_value(p);
		} else {
			err = skip_value(p);
		}
		if (err)
			return err;
	}
	return err;
}

/* Whether c is JSON white space. */
static inline bool is_ws(unsigned char c)
{
	return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

/* The table for a record type (a checked string token), or NULL. */
static const struct ch_table *table_for(const struct ch_str *type)
{
	unsigned char buf[16];
	const unsigned char *s = type->s;
	size_t len = type->len, i;

	if (type->esc) {
		if (len > sizeof(buf))
			return NULL;
		len = unescape(type, buf);
		s = buf;
	}
	for (i = 0; i < ARRAY_SIZE(tables); i++)
		if (strlen(tables[i].name) == len && !memcmp(tables[i].name, s, len))
			return &tables[i];
	return NULL;
}

/* Convert one record into a JSONEachRow line (see chschema.h). */
int chschema_row(struct jbuf *b, const char *json, size_t len,
		 const char **table)
{
	const unsigned char *s = (const unsigned char *)json, *e = s + len;
	const struct ch_table *t = NULL;
	size_t len0 = b->len, i;
	struct ch_str type;
	struct chp p;
	int err;

	*table = NULL;
	errbuf[0] = '\0';
	if (b->oom)
		return -ENOMEM;
	if (b->depth || b->after_key) {
		snprintf(errbuf, sizeof(errbuf), "output buffer inside a value");
		return -EINVAL;
	}
	while (s < e && is_ws(*s))
		s++;
	while (e > s && is_ws(e[-1]))
		e--;
	p.pos = s;
	p.end = e;
	p.base = (const unsigned char *)json;
	p.depth = 0;
	p.b = b;
	p.phase_end = p.have_start = p.have_end = false;
	p.err = NULL;
	p.heap = NULL;
	p.heap_cap = 0;
	if (s == e || *s != '{') {
		err = fail(&p, "not a JSON object");
		goto error;
	}

	/* "type" first, as the agent writes it: one pass */
	p.pos = s + 1;
	ws(&p);
	if (e - p.pos > 6 && !memcmp(p.pos, "\"type\"", 6)) {
		p.pos += 6;
		ws(&p);
		if (p.pos < e && *p.pos == ':') {
			p.pos++;
			ws(&p);
			if (p.pos < e && *p.pos == '"') {
				err = parse_string(&p, &type);
				if (err)
					goto error;
				t = table_for(&type);
			}
		}
	}
	if (!t) {
		/* anywhere else: find it, checking the whole text */
		p.pos = s;
		err = find_type(&p, &type);
		if (!err && p.pos != e)
			err = fail(&p, "text after the object");
		if (err)
			goto error;
		if (!type.s) {
			err = fail(&p, "no string member \"type\"");
			p.err_off = 0;
			goto error;
		}
		t = table_for(&type);
		if (!t) {
			size_t k, n = 0;

			n = (size_t)snprintf(errbuf, sizeof(errbuf),
					     "unknown record type \"");
			for (k = 0; k < type.len && k < 32; k++)
				errbuf[n++] = type.s[k] >= 0x20 && type.s[k] < 0x7f ?
					      (char)type.s[k] : '?';
			snprintf(errbuf + n, sizeof(errbuf) - n, "\"");
			free(p.heap);
			return -ENOENT;
		}
	}
	/* the row */
	p.pos = s;
	p.depth = 0;
	json_obj_open(b);
	err = parse_object(&p, t->f, t->n);
	if (!err && p.pos != e)
		err = fail(&p, "text after the object");
	if (err)
		goto error;
	for (i = 0; i < t->n; i++) {
		const struct ch_field *f = &t->f[i];

		if (f->type != CT_RECTIME)
			continue;
		if (p.have_end && (p.phase_end || !p.have_start))
			emit_time(b, f, &p.stop);
		else if (p.have_start)
			emit_time(b, f, &p.start);
	}
	raw_key(b, "json");
	text_value(b, s, (size_t)(e - s));
	json_obj_close(b);
	put_newline(b);
	free(p.heap);
	if (b->oom)
		return -ENOMEM;
	*table = t->name;
	return 0;

error:
	free(p.heap);
	if (b->oom)
		return -ENOMEM;		/* json.h: the contents are invalid */
	if (err == -ENOMEM)
		snprintf(errbuf, sizeof(errbuf), "out of memory");
	else if (p.err)
		snprintf(errbuf, sizeof(errbuf), "%s at byte %zu", p.err,
			 p.err_off);
	b->len = len0;
	if (b->buf)
		b->buf[len0] = '\0';
	b->depth = 0;
	b->after_key = false;
	return err;
}
