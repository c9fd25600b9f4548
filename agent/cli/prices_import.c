// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * prices_import.c - the price table from AWS's Price List offer file for
 * EC2, CSV or JSON (see prices_import.h for what is kept and why).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "json_read.h"
#include "prices_import.h"
#include "util.h"

/* Pages read are given back to the kernel every this many bytes. */
#define RELEASE_STEP ((size_t)4 << 20)
/* Rows before the CSV's header: AWS writes five (FormatVersion ...). */
#define CSV_MAX_PREAMBLE 16
/* A value longer than this cannot match: it is compared as written. */
#define VAL_MAX 64
/* Names in a JSON path of a message. */
#define PATH_MAX_DEPTH 8

/* A piece of text, not NUL-terminated. */
struct sv {
	const char *s;
	size_t len;
};

/*
 * What decides whether a product's price is kept, by the names AWS gives
 * them in the JSON products' attributes and in the CSV's header.  The
 * CSV's columns go on with the price's own (COL_*).
 */
enum { A_USAGE, A_OS, A_TENANCY, A_PRESW, A_CAPACITY, A_MARKET, A_REGION,
       A_TYPE, A_VCPU, A_MEMORY, A_GPU, A_FAMILY, A_PROC, A_ARCH, NATTR };
enum { COL_SKU = NATTR, COL_TERM, COL_UNIT, COL_PRICE, COL_CURRENCY, NCOLS };

static const char *const json_attr[NATTR] = {
	"usagetype", "operatingSystem", "tenancy", "preInstalledSw",
	"capacitystatus", "marketoption", "regionCode", "instanceType",
	"vcpu", "memory", "gpu", "instanceFamily", "physicalProcessor",
	"processorArchitecture",
};
static const char *const csv_col[NCOLS] = {
	"usageType", "Operating System", "Tenancy", "Pre Installed S/W",
	"CapacityStatus", "MarketOption", "Region Code", "Instance Type",
	"vCPU", "Memory", "GPU", "Instance Family", "Physical Processor",
	"Processor Architecture", "SKU", "TermType", "Unit", "PricePerUnit", "Currency",
};
/*
 * MarketOption came later than the others, and the type's description
 * (vCPU ... Processor Architecture) is not needed for its price: a file
 * without them is fine (its attributes are then '-').
 */
#define COL_OPTIONAL(k) ((k) == A_MARKET || ((k) >= A_VCPU && (k) <= A_ARCH))

struct attrs {
	struct sv v[NATTR];
	char buf[NATTR][VAL_MAX];	/* values that had to be decoded */
};

/* A JSON product that passed, waiting for its on-demand price. */
struct product {
	char sku[24];
	char region[32];
	char type[32];
	struct prices_attrs at;
};

/* The text being read, and how much of it was given back. */
struct src {
	const char *base, *end;
	size_t page;		/* 0: not mapped, nothing to give back */
	const char *from;	/* the first page not given back */
};

struct ctx {
	struct prices_table *t;
	struct src src;
	const char *name;
	const char *const *regions;
	size_t nregions;
	char *err;
	size_t errlen;
	struct product *prods;	/* JSON: sorted by SKU once read */
	size_t nprods, capprods;
	struct jr_str path[PATH_MAX_DEPTH];	/* JSON: where the walk is */
	unsigned depth;
};

/* ---- small helpers ------------------------------------------------------------ */

/* Whether v is the text lit. */
static bool sv_is(struct sv v, const char *lit)
{
	size_t n = strlen(lit);

	return v.len == n && !memcmp(v.s, lit, n);
}

/* v as a C string in out (size bytes), false if it does not fit. */
static bool sv_copy(struct sv v, char *out, size_t size)
{
	if (v.len >= size)
		return false;
	memcpy(out, v.s, v.len);
	out[v.len] = '\0';
	return true;
}

/* Whether v is 1..max bytes, each a-z, 0-9 or one of extra. */
static bool sv_name_ok(struct sv v, size_t max, const char *extra)
{
	if (!v.len || v.len > max)
		return false;
	for (size_t i = 0; i < v.len; i++) {
		char ch = v.s[i];

		if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
		      (ch && strchr(extra, ch))))
			return false;
	}
	return true;
}

/* Whether v is a SKU: 1..23 letters and digits. */
static bool sku_ok(struct sv v)
{
	if (!v.len || v.len > 23)
		return false;
	for (size_t i = 0; i < v.len; i++) {
		char ch = v.s[i];

		if (!((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
		      (ch >= '0' && ch <= '9')))
			return false;
	}
	return true;
}

/* Whether s is a region code as AWS writes them (us-east-1). */
bool prices_import_region_ok(const char *s)
{
	struct sv v = { s, strlen(s) };

	return sv_name_ok(v, 31, "-");
}

/*
 * A price as AWS writes it ("0.0960000000") into out without the zeros
 * that say nothing ("0.096"); *zero when it is 0.  false when it is not
 * digits with at most one '.' between digits, or too long.
 */
static bool price_norm(struct sv p, char out[24], bool *zero)
{
	size_t i = 0, dot, last, n = 0;

	while (i < p.len && p.s[i] >= '0' && p.s[i] <= '9')
		i++;
	if (!i)
		return false;
	dot = i;
	if (i < p.len) {
		if (p.s[i++] != '.' || i == p.len)
			return false;
		while (i < p.len && p.s[i] >= '0' && p.s[i] <= '9')
			i++;
		if (i != p.len)
			return false;
	}
	/* the integer part without leading zeros, at least one digit */
	for (i = 0; i + 1 < dot && p.s[i] == '0'; i++)
		;
	*zero = dot - i == 1 && p.s[i] == '0';
	if (dot - i >= 23)
		return false;
	memcpy(out, p.s + i, dot - i);
	n = dot - i;
	/* the fraction without trailing zeros */
	for (last = p.len; last > dot + 1 && p.s[last - 1] == '0'; last--)
		;
	if (last > dot + 1) {
		for (i = dot + 1; i < last; i++)
			*zero = *zero && p.s[i] == '0';
		if (n + (last - dot) >= 24)
			return false;
		memcpy(out + n, p.s + dot, last - dot);
		n += last - dot;
	}
	out[n] = '\0';
	return true;
}

/* Copy a metadata value into out, keeping it printable and plain. */
static void meta_copy(struct sv v, char *out, size_t size)
{
	size_t n = 0;

	for (size_t i = 0; i < v.len && n + 1 < size; i++) {
		char ch = v.s[i];

		out[n++] = (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
			   (ch >= '0' && ch <= '9') || (ch && strchr(":._+-", ch)) ?
			   ch : '?';
	}
	out[n] = '\0';
}

/* Give back the pages of the text before pos (read, not needed again). */
static void release(struct src *s, const void *at)
{
	const char *pos = at, *upto;

	if (!s->page || pos < s->from || (size_t)(pos - s->from) < RELEASE_STEP)
		return;
	upto = s->base + ((size_t)(pos - s->base) & ~(s->page - 1));
	/* a private read-only file mapping: the pages come back from the
	 * file if they are read again */
	madvise((void *)(uintptr_t)s->from, (size_t)(upto - s->from),
		MADV_DONTNEED);
	s->from = upto;
}

/* The walk goes back to pos: give back from there on again. */
static void rewind_to(struct src *s, const void *at)
{
	const char *pos = at;

	if (s->page && pos < s->from)
		s->from = s->base + ((size_t)(pos - s->base) & ~(s->page - 1));
}

/* Whether region is one of those asked for (all, when none was). */
static bool region_wanted(const struct ctx *c, struct sv region)
{
	if (!c->nregions)
		return true;
	for (size_t i = 0; i < c->nregions; i++)
		if (sv_is(region, c->regions[i]))
			return true;
	return false;
}

/* Whether a product is a plain Linux instance hour (prices_import.h). */
static bool plain_instance(const struct attrs *a)
{
	struct sv u = a->v[A_USAGE];

	return u.len >= 8 && memmem(u.s, u.len, "BoxUsage", 8) &&
	       sv_is(a->v[A_OS], "Linux") && sv_is(a->v[A_TENANCY], "Shared") &&
	       sv_is(a->v[A_PRESW], "NA") && sv_is(a->v[A_CAPACITY], "Used") &&
	       (!a->v[A_MARKET].len || sv_is(a->v[A_MARKET], "OnDemand"));
}

/* Why a kept product's region or type cannot go in the table, or NULL. */
static const char *names_bad(const struct attrs *a)
{
	if (!a->v[A_REGION].len)
		return "no region code";
	if (!sv_name_ok(a->v[A_REGION], 31, "-"))
		return "the region code is not of AWS's form (a-z, 0-9, '-', at most 31)";
	if (!a->v[A_TYPE].len)
		return "no instance type";
	if (!sv_name_ok(a->v[A_TYPE], 31, ".-"))
		return "the instance type is not of AWS's form (a-z, 0-9, '.', '-', at most 31)";
	return NULL;
}

/* A whole number 0..100000 of v, or -1 when it is not one. */
static int sv_count(struct sv v)
{
	int n = 0;

	if (!v.len || v.len > 6)
		return -1;
	for (size_t i = 0; i < v.len; i++) {
		if (v.s[i] < '0' || v.s[i] > '9')
			return -1;
		n = n * 10 + (v.s[i] - '0');
	}
	return n <= 100000 ? n : -1;
}

/* Memory as AWS writes it ("1,952 GiB", "0.5 GiB") into out: "1952". */
static void memory_of(struct sv v, char out[16])
{
	static const char unit[] = " GiB";
	size_t n = 0, dots = 0, i;

	out[0] = '\0';
	if (v.len <= 4 || memcmp(v.s + v.len - 4, unit, 4))
		return;
	for (i = 0; i + 4 < v.len; i++) {
		char ch = v.s[i];

		if (ch == ',')
			continue;
		if ((ch != '.' && (ch < '0' || ch > '9')) || n >= 15 ||
		    (ch == '.' && (dots++ || !n))) {
			out[0] = '\0';
			return;
		}
		out[n++] = ch;
	}
	if (!n || out[n - 1] == '.')
		n = 0;
	out[n] = '\0';
}

/* A family as AWS writes it ("General purpose") as a word. */
static void family_of(struct sv v, char out[32])
{
	size_t n = 0;

	for (size_t i = 0; i < v.len && n + 1 < 32; i++) {
		char ch = v.s[i];

		if (ch >= 'A' && ch <= 'Z')
			ch = (char)(ch - 'A' + 'a');
		if (ch == ' ')
			ch = '-';
		if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
		      ch == '-'))
			continue;
		out[n++] = ch;
	}
	out[n] = '\0';
}

/* What the product's attributes say of its type (prices_import.h). */
static void attrs_of(const struct attrs *a, struct prices_attrs *at)
{
	struct sv proc = a->v[A_PROC], arch = a->v[A_ARCH];

	memset(at, 0, sizeof(*at));
	at->vcpus = sv_count(a->v[A_VCPU]);
	memory_of(a->v[A_MEMORY], at->memory);
	/* AWS leaves GPU out of a type without one */
	at->gpus = a->v[A_GPU].len ? sv_count(a->v[A_GPU]) :
		   at->vcpus >= 0 ? 0 : -1;
	family_of(a->v[A_FAMILY], at->family);
	if (proc.len >= 8 && memmem(proc.s, proc.len, "Graviton", 8))
		at->arch = "arm64";
	else if ((proc.len >= 5 && memmem(proc.s, proc.len, "Intel", 5)) ||
		 (proc.len >= 3 && memmem(proc.s, proc.len, "AMD", 3)))
		at->arch = "x86_64";
	else if (sv_is(arch, "x86_64") || sv_is(arch, "arm64"))
		at->arch = sv_is(arch, "arm64") ? "arm64" : "x86_64";
}

/* Make room for one more in the array *arr of n of size bytes each. */
static int grow(struct ctx *c, void **arr, size_t *cap, size_t n, size_t size)
{
	size_t want = *cap ? *cap * 2 : 256;
	void *p;

	if (n < *cap)
		return 0;
	p = realloc(*arr, want * size);
	if (!p) {
		util_seterr(c->err, c->errlen, "%s: out of memory", c->name);
		return -ENOMEM;
	}
	*arr = p;
	*cap = want;
	return 0;
}

/*
 * Append a price of region and type (checked) to the table: 0, 1 when it
 * is zero (left out, counted), -ENOMEM, or -EINVAL when the price is not
 * a number.
 */
static int add_row(struct ctx *c, const char *region, const char *type,
		   struct sv price, struct sv sku, uint64_t line,
		   const struct prices_attrs *at)
{
	struct prices_table *t = c->t;
	struct prices_row *r;
	bool zero;
	char p[24];

	if (!price_norm(price, p, &zero))
		return -EINVAL;
	if (zero) {
		t->zero++;
		return 1;
	}
	if (grow(c, (void **)&t->rows, &t->cap, t->n, sizeof(*r)))
		return -ENOMEM;
	r = &t->rows[t->n++];
	memset(r, 0, sizeof(*r));
	util_strlcpy(r->region, region, sizeof(r->region));
	util_strlcpy(r->type, type, sizeof(r->type));
	util_strlcpy(r->price, p, sizeof(r->price));
	sv_copy(sku, r->sku, sizeof(r->sku));
	r->line = line;
	r->at = *at;
	return 0;
}

/* ---- CSV ---------------------------------------------------------------------- */

struct csv {
	const char *p, *end;
	uint64_t line;		/* of p */
};

struct field {
	const char *s;
	size_t len;
	bool esc;		/* has doubled quotes */
};

/* A field's value: as written, or decoded ("" -> ") into buf. */
static struct sv field_val(const struct field *f, char *buf, size_t size)
{
	struct sv v = { f->s, f->len };
	size_t n = 0;

	if (!f->esc)
		return v;
	for (size_t i = 0; i < f->len; i++) {
		if (n + 1 >= size)
			return v;	/* too long: as written, matches nothing */
		buf[n++] = f->s[i];
		if (f->s[i] == '"')
			i++;
	}
	v.s = buf;
	v.len = n;
	return v;
}

/*
 * Read one record (RFC 4180): its fields into f[0..max) (those past max
 * are counted, not kept) and their count into *nf, the line it starts on
 * into *start.  1, 0 at the end of the text, -EINVAL (c->err says why).
 */
static int csv_record(struct ctx *c, struct csv *r, struct field *f,
		      size_t max, size_t *nf, uint64_t *start)
{
	const char *p = r->p, *end = r->end;
	size_t n = 0;

	/* blank lines are not records */
	while (p < end && (*p == '\n' || (*p == '\r' && p + 1 < end &&
					  p[1] == '\n'))) {
		p += *p == '\r' ? 2 : 1;
		r->line++;
	}
	r->p = p;
	if (p >= end)
		return 0;
	*start = r->line;
	for (;;) {
		struct field fl = { 0 };

		if (p < end && *p == '"') {
			const char *q = ++p;

			for (;;) {
				while (q < end && *q != '"') {
					r->line += *q == '\n';
					q++;
				}
				if (q >= end) {
					util_seterr(c->err, c->errlen,
						    "%s:%" PRIu64 ": field %zu: the file ends inside"
						    " its quotes (cut short?)", c->name, *start,
						    n + 1);
					return -EINVAL;
				}
				if (q + 1 < end && q[1] == '"') {
					fl.esc = true;
					q += 2;
					continue;
				}
				break;
			}
			fl.s = p;
			fl.len = (size_t)(q - p);
			p = q + 1;
			if (p < end && *p != ',' && *p != '\n' &&
			    !(*p == '\r' && p + 1 < end && p[1] == '\n')) {
				util_seterr(c->err, c->errlen,
					    "%s:%" PRIu64 ": field %zu: text after its closing"
					    " quote", c->name, r->line, n + 1);
				return -EINVAL;
			}
		} else {
			const char *q = p;

			while (q < end && *q != ',' && *q != '\n') {
				if (*q == '"') {
					util_seterr(c->err, c->errlen,
						    "%s:%" PRIu64 ": field %zu: a quote in a field"
						    " that does not start with one", c->name,
						    r->line, n + 1);
					return -EINVAL;
				}
				q++;
			}
			fl.s = p;
			fl.len = (size_t)(q - p);
			if (q < end && *q == '\n' && fl.len && q[-1] == '\r')
				fl.len--;
			p = q;
		}
		if (n < max)
			f[n] = fl;
		n++;
		if (p < end && *p == ',') {
			p++;
			continue;
		}
		if (p < end) {
			p += *p == '\r' ? 2 : 1;
			r->line++;
		}
		break;
	}
	r->p = p;
	*nf = n;
	return 1;
}

/* Find the columns this needs in the header row of nf fields f. */
static int csv_columns(struct ctx *c, const struct field *f, size_t nf,
		       uint64_t line, size_t col[NCOLS])
{
	char buf[VAL_MAX];

	for (size_t k = 0; k < NCOLS; k++)
		col[k] = SIZE_MAX;
	for (size_t j = 0; j < nf; j++) {
		struct sv name = field_val(&f[j], buf, sizeof(buf));

		for (size_t k = 0; k < NCOLS; k++) {
			if (name.len != strlen(csv_col[k]) ||
			    strncasecmp(name.s, csv_col[k], name.len))
				continue;
			if (col[k] != SIZE_MAX) {
				util_seterr(c->err, c->errlen,
					    "%s:%" PRIu64 ": the header has \"%s\" twice"
					    " (fields %zu and %zu)", c->name, line,
					    csv_col[k], col[k] + 1, j + 1);
				return -EINVAL;
			}
			col[k] = j;
		}
	}
	for (size_t k = 0; k < NCOLS; k++) {
		if (col[k] == SIZE_MAX && !COL_OPTIONAL(k)) {
			util_seterr(c->err, c->errlen,
				    "%s:%" PRIu64 ": the header has no column \"%s\""
				    " (an EC2 offer file has it: is this AmazonEC2's"
				    " index.csv?)", c->name, line, csv_col[k]);
			return -EINVAL;
		}
	}
	return 0;
}

/* Take a metadata row (name, value) of the CSV's first rows. */
static int csv_meta(struct ctx *c, const struct field *f, size_t nf,
		    uint64_t line)
{
	char nb[VAL_MAX], vb[VAL_MAX];
	struct sv name, val;

	if (nf < 2)
		return 0;
	name = field_val(&f[0], nb, sizeof(nb));
	val = field_val(&f[1], vb, sizeof(vb));
	if (sv_is(name, "Version"))
		meta_copy(val, c->t->version, sizeof(c->t->version));
	else if (sv_is(name, "Publication Date"))
		meta_copy(val, c->t->published, sizeof(c->t->published));
	else if (sv_is(name, "OfferCode")) {
		meta_copy(val, c->t->offer, sizeof(c->t->offer));
		if (!sv_is(val, "AmazonEC2")) {
			util_seterr(c->err, c->errlen,
				    "%s:%" PRIu64 ": OfferCode is \"%s\": this reads"
				    " EC2's offer file (AmazonEC2)", c->name, line,
				    c->t->offer);
			return -EINVAL;
		}
	}
	return 0;
}

/* Take one data row: keep its price if it is one of those wanted. */
static int csv_row(struct ctx *c, const struct field *f, const size_t *col,
		   uint64_t line)
{
	char pb[VAL_MAX], ub[VAL_MAX], cb[VAL_MAX], sb[VAL_MAX];
	char region[32], type[32];
	struct prices_attrs at;
	struct attrs a;
	struct sv price, sku;
	const char *why;
	int rc;

	/* most rows are other terms: the cheapest test first */
	if (f[col[COL_TERM]].len != 8 ||
	    memcmp(f[col[COL_TERM]].s, "OnDemand", 8))
		return 0;
	for (size_t k = 0; k < NATTR; k++) {
		if (col[k] == SIZE_MAX)
			a.v[k] = (struct sv){ "", 0 };
		else
			a.v[k] = field_val(&f[col[k]], a.buf[k], VAL_MAX);
	}
	if (!plain_instance(&a) || !region_wanted(c, a.v[A_REGION]) ||
	    !sv_is(field_val(&f[col[COL_UNIT]], ub, sizeof(ub)), "Hrs") ||
	    !sv_is(field_val(&f[col[COL_CURRENCY]], cb, sizeof(cb)), "USD"))
		return 0;
	sku = field_val(&f[col[COL_SKU]], sb, sizeof(sb));
	if (!sku_ok(sku)) {
		util_seterr(c->err, c->errlen, "%s:%" PRIu64 ": the SKU is not"
			    " of AWS's form (letters and digits, at most 23)",
			    c->name, line);
		return -EINVAL;
	}
	if ((why = names_bad(&a))) {
		util_seterr(c->err, c->errlen, "%s:%" PRIu64 ": SKU %.*s: %s",
			    c->name, line, (int)sku.len, sku.s, why);
		return -EINVAL;
	}
	sv_copy(a.v[A_REGION], region, sizeof(region));
	sv_copy(a.v[A_TYPE], type, sizeof(type));
	price = field_val(&f[col[COL_PRICE]], pb, sizeof(pb));
	attrs_of(&a, &at);
	rc = add_row(c, region, type, price, sku, line, &at);
	if (rc == -EINVAL)
		util_seterr(c->err, c->errlen, "%s:%" PRIu64 ": SKU %.*s:"
			    " PricePerUnit \"%.*s\" is not a price (digits, at most"
			    " one '.')", c->name, line, (int)sku.len, sku.s,
			    (int)(price.len > 40 ? 40 : price.len), price.s);
	return rc < 0 ? rc : 0;
}

/* Read the CSV form: metadata rows, the header, the price rows. */
static int read_csv(struct ctx *c, const char *text, size_t len)
{
	struct csv r = { text, text + len, 1 }, at = r;
	struct field meta[2], *f = NULL;
	size_t col[NCOLS], nf, ncols;
	uint64_t line = 1;
	int rc;

	for (unsigned i = 0;; i++) {
		at = r;
		rc = csv_record(c, &r, meta, 2, &nf, &line);
		if (rc < 0)
			return rc;
		if (rc == 0 || i == CSV_MAX_PREAMBLE) {
			util_seterr(c->err, c->errlen,
				    "%s: no header row (\"SKU\",\"OfferTermCode\",...)"
				    " in its first %d rows: not an AWS price list CSV",
				    c->name, CSV_MAX_PREAMBLE);
			return -EINVAL;
		}
		/* metadata rows are name and value: the header has more */
		if (nf > 2)
			break;
		if ((rc = csv_meta(c, meta, nf, line)))
			return rc;
	}
	/* the header again, all of it now that its size is known */
	ncols = nf;
	f = calloc(ncols, sizeof(*f));
	if (!f) {
		util_seterr(c->err, c->errlen, "%s: out of memory", c->name);
		return -ENOMEM;
	}
	r = at;
	csv_record(c, &r, f, ncols, &nf, &line);
	if ((rc = csv_columns(c, f, ncols, line, col)))
		goto out;
	while ((rc = csv_record(c, &r, f, ncols, &nf, &line)) > 0) {
		c->t->read++;
		if (nf != ncols) {
			util_seterr(c->err, c->errlen,
				    "%s:%" PRIu64 ": %zu fields, the header has %zu"
				    " (a row cut short?)", c->name, line, nf, ncols);
			rc = -EINVAL;
			goto out;
		}
		if ((rc = csv_row(c, f, col, line)))
			goto out;
		release(&c->src, r.p);
	}
out:
	free(f);
	return rc;
}

/* ---- JSON --------------------------------------------------------------------- */

/* Where the walk is: level k is now name (deeper levels are left). */
static void at_path(struct ctx *c, unsigned k, struct jr_str name)
{
	if (k < PATH_MAX_DEPTH)
		c->path[k] = name;
	c->depth = k + 1;
}

/* A literal as a path name. */
static struct jr_str lit(const char *s)
{
	return (struct jr_str){ .s = s, .len = strlen(s), .plain = true };
}

/* The path of the walk, $.products.SKU.attributes, into out. */
static void path_text(const struct ctx *c, char *out, size_t size)
{
	size_t n = (size_t)snprintf(out, size, "$");

	for (unsigned k = 0; k < c->depth && k < PATH_MAX_DEPTH && n < size;
	     k++) {
		int len = (int)(c->path[k].len > 40 ? 40 : c->path[k].len);

		n += (size_t)snprintf(out + n, size - n, ".%.*s", len,
				      c->path[k].s);
	}
	util_printable(out);
}

/*
 * A failure of the JSON walk at r: the reader's own (rc -EINVAL: the text
 * is not JSON), or a value that is not what AWS writes there (what).
 */
static int jfail(struct ctx *c, const struct jr *r, int rc, const char *what)
{
	char path[400];

	path_text(c, path, sizeof(path));
	if (rc == -EINVAL && r->err) {
		uint64_t line = 1;

		for (size_t i = 0; i < r->err_off; i++)
			line += r->base[i] == '\n';
		util_seterr(c->err, c->errlen,
			    "%s: line %" PRIu64 " (byte %zu): not valid JSON: %s"
			    " (in %s; cut short?)", c->name, line, r->err_off,
			    r->err, path);
	} else {
		util_seterr(c->err, c->errlen, "%s: %s: %s", c->name, path,
			    what);
	}
	return -EINVAL;
}

/* The next value as a string, decoded into buf when it has escapes. */
static int jstr(struct ctx *c, struct jr *r, char *buf, size_t size,
		struct sv *v)
{
	struct jr_str s;
	int rc = jr_str(r, &s);

	if (rc)
		return jfail(c, r, rc, "a string is due here");
	v->s = jr_str_get(&s, buf, size, &v->len);
	if (!v->s) {
		/* too long to decode here: as written, it matches nothing */
		v->s = s.s;
		v->len = s.len;
	}
	return 0;
}

/* Open the object that is the next value. */
static int jopen(struct ctx *c, struct jr *r)
{
	int rc = jr_obj_open(r);

	return rc ? jfail(c, r, rc, "an object is due here") : 0;
}

/* Skip the next value. */
static int jskip(struct ctx *c, struct jr *r)
{
	int rc = jr_skip(r);

	return rc ? jfail(c, r, rc, "") : 0;
}

/*
 * Skip the next value, giving back its pages as the walk goes: an object
 * is skipped member by member, down to levels deep (a term type of the
 * terms holds hundreds of megabytes).
 */
static int skip_released(struct ctx *c, struct jr *r, unsigned levels)
{
	struct jr_str key;
	int rc;

	if (!levels || jr_peek(r) != JR_OBJ)
		return jskip(c, r);
	if ((rc = jopen(c, r)))
		return rc;
	while ((rc = jr_next_member(r, &key)) > 0) {
		release(&c->src, r->pos);
		if ((rc = skip_released(c, r, levels - 1)))
			return rc;
	}
	return rc < 0 ? jfail(c, r, rc, "") : 0;
}

/* Compare two products by SKU (qsort). */
static int prod_cmp(const void *a, const void *b)
{
	return strcmp(((const struct product *)a)->sku,
		      ((const struct product *)b)->sku);
}

/* The product kept whose SKU is key, or NULL. */
static const struct product *prod_find(const struct ctx *c,
				       const struct jr_str *key)
{
	size_t lo = 0, hi = c->nprods;

	if (key->esc || key->len >= sizeof(c->prods->sku))
		return NULL;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const char *s = c->prods[mid].sku;
		int d = strncmp(s, key->s, key->len);

		if (!d)
			d = s[key->len] ? 1 : 0;
		if (!d)
			return &c->prods[mid];
		if (d < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* Keep a product that passed, for its price in the terms. */
static int prod_add(struct ctx *c, const struct attrs *a, struct jr_str sku)
{
	struct sv s = { sku.s, sku.len };
	struct product *p;
	const char *why;

	if (sku.esc || !sku_ok(s))
		return jfail(c, NULL, -EDOM, "the SKU is not of AWS's form"
			     " (letters and digits, at most 23)");
	if ((why = names_bad(a)))
		return jfail(c, NULL, -EDOM, why);
	if (grow(c, (void **)&c->prods, &c->capprods, c->nprods, sizeof(*p)))
		return -ENOMEM;
	p = &c->prods[c->nprods++];
	sv_copy(s, p->sku, sizeof(p->sku));
	sv_copy(a->v[A_REGION], p->region, sizeof(p->region));
	sv_copy(a->v[A_TYPE], p->type, sizeof(p->type));
	attrs_of(a, &p->at);
	return 0;
}

/* Read a product's attributes: those that decide (the rest skipped). */
static int read_attrs(struct ctx *c, struct jr *r, struct attrs *a)
{
	struct jr_str key;
	int rc;

	if ((rc = jopen(c, r)))
		return rc;
	while ((rc = jr_next_member(r, &key)) > 0) {
		size_t k;

		for (k = 0; k < NATTR; k++)
			if (jr_str_eq(&key, json_attr[k], strlen(json_attr[k])))
				break;
		at_path(c, 3, key);
		rc = k < NATTR ? jstr(c, r, a->buf[k], VAL_MAX, &a->v[k]) :
				 jskip(c, r);
		if (rc)
			return rc;
	}
	c->depth = 3;
	return rc < 0 ? jfail(c, r, rc, "") : 0;
}

/* Read "products": keep the SKUs of those whose price is wanted. */
static int read_products(struct ctx *c, struct jr *r)
{
	struct jr_str sku, key;
	int rc;

	if ((rc = jopen(c, r)))
		return rc;
	while ((rc = jr_next_member(r, &sku)) > 0) {
		struct attrs a;
		bool have = false;

		memset(a.v, 0, sizeof(a.v));
		c->t->read++;
		at_path(c, 1, sku);
		release(&c->src, r->pos);
		if ((rc = jopen(c, r)))
			return rc;
		while ((rc = jr_next_member(r, &key)) > 0) {
			if (jr_str_eq(&key, "attributes", 10)) {
				at_path(c, 2, key);
				rc = read_attrs(c, r, &a);
				have = true;
			} else {
				rc = jskip(c, r);
			}
			if (rc)
				return rc;
		}
		if (rc < 0)
			return jfail(c, r, rc, "");
		if (have && plain_instance(&a) &&
		    region_wanted(c, a.v[A_REGION])) {
			at_path(c, 2, lit("attributes"));
			if ((rc = prod_add(c, &a, sku)))
				return rc;
		}
	}
	if (rc < 0)
		return jfail(c, r, rc, "");
	if (c->nprods)
		qsort(c->prods, c->nprods, sizeof(*c->prods), prod_cmp);
	return 0;
}

/* Read one price dimension: its unit and its USD price, if any. */
static int read_dim(struct ctx *c, struct jr *r, char *ub, struct sv *unit,
		    char *pb, struct sv *usd)
{
	struct jr_str key, cur;
	int rc;

	if ((rc = jopen(c, r)))
		return rc;
	while ((rc = jr_next_member(r, &key)) > 0) {
		at_path(c, 6, key);
		if (jr_str_eq(&key, "unit", 4)) {
			rc = jstr(c, r, ub, VAL_MAX, unit);
		} else if (jr_str_eq(&key, "pricePerUnit", 12)) {
			if ((rc = jopen(c, r)))
				return rc;
			while ((rc = jr_next_member(r, &cur)) > 0) {
				at_path(c, 7, cur);
				rc = jr_str_eq(&cur, "USD", 3) ?
				     jstr(c, r, pb, VAL_MAX, usd) : jskip(c, r);
				if (rc)
					return rc;
			}
			if (rc < 0)
				return jfail(c, r, rc, "");
		} else {
			rc = jskip(c, r);
		}
		if (rc)
			return rc;
	}
	return rc < 0 ? jfail(c, r, rc, "") : 0;
}

/* Read one on-demand term of product p: keep its hourly USD prices. */
static int read_term(struct ctx *c, struct jr *r, const struct product *p,
		     struct jr_str sku)
{
	struct jr_str key, rate;
	int rc;

	if ((rc = jopen(c, r)))
		return rc;
	while ((rc = jr_next_member(r, &key)) > 0) {
		at_path(c, 4, key);
		if (!jr_str_eq(&key, "priceDimensions", 15)) {
			if ((rc = jskip(c, r)))
				return rc;
			continue;
		}
		if ((rc = jopen(c, r)))
			return rc;
		while ((rc = jr_next_member(r, &rate)) > 0) {
			char ub[VAL_MAX], pb[VAL_MAX];
			struct sv unit = { "", 0 }, usd = { NULL, 0 };

			at_path(c, 5, rate);
			if ((rc = read_dim(c, r, ub, &unit, pb, &usd)))
				return rc;
			if (!usd.s || !sv_is(unit, "Hrs"))
				continue;
			rc = add_row(c, p->region, p->type, usd,
				     (struct sv){ sku.s, sku.len }, 0, &p->at);
			if (rc == -EINVAL) {
				at_path(c, 6, lit("pricePerUnit"));
				at_path(c, 7, lit("USD"));
				return jfail(c, r, -EDOM, "not a price (digits, at"
					     " most one '.')");
			}
			if (rc < 0)
				return rc;
		}
		if (rc < 0)
			return jfail(c, r, rc, "");
	}
	return rc < 0 ? jfail(c, r, rc, "") : 0;
}

/* Read "terms": the on-demand prices of the products kept. */
static int read_terms(struct ctx *c, struct jr *r)
{
	struct jr_str type, sku, code;
	int rc;

	if ((rc = jopen(c, r)))
		return rc;
	while ((rc = jr_next_member(r, &type)) > 0) {
		at_path(c, 1, type);
		if (!jr_str_eq(&type, "OnDemand", 8)) {
			if ((rc = skip_released(c, r, 1)))
				return rc;
			continue;
		}
		if ((rc = jopen(c, r)))
			return rc;
		while ((rc = jr_next_member(r, &sku)) > 0) {
			const struct product *p = prod_find(c, &sku);

			at_path(c, 2, sku);
			release(&c->src, r->pos);
			if (!p) {
				if ((rc = jskip(c, r)))
					return rc;
				continue;
			}
			if ((rc = jopen(c, r)))
				return rc;
			while ((rc = jr_next_member(r, &code)) > 0) {
				at_path(c, 3, code);
				if ((rc = read_term(c, r, p, sku)))
					return rc;
			}
			if (rc < 0)
				return jfail(c, r, rc, "");
		}
		if (rc < 0)
			return jfail(c, r, rc, "");
	}
	return rc < 0 ? jfail(c, r, rc, "") : 0;
}

/* Read a metadata member of the offer file (formatVersion, ...). */
static int read_meta(struct ctx *c, struct jr *r, struct jr_str key)
{
	struct prices_table *t = c->t;
	char buf[VAL_MAX];
	struct sv v;
	int rc;

	if (!jr_str_eq(&key, "version", 7) &&
	    !jr_str_eq(&key, "publicationDate", 15) &&
	    !jr_str_eq(&key, "offerCode", 9))
		return jskip(c, r);
	if ((rc = jstr(c, r, buf, sizeof(buf), &v)))
		return rc;
	if (jr_str_eq(&key, "version", 7))
		meta_copy(v, t->version, sizeof(t->version));
	else if (jr_str_eq(&key, "publicationDate", 15))
		meta_copy(v, t->published, sizeof(t->published));
	else {
		meta_copy(v, t->offer, sizeof(t->offer));
		if (!sv_is(v, "AmazonEC2"))
			return jfail(c, r, -EDOM, "this reads EC2's offer file"
				     " (offerCode AmazonEC2)");
	}
	return 0;
}

/* Read the JSON form: metadata, products, then terms (in any order). */
static int read_json(struct ctx *c, const char *text, size_t len)
{
	bool products = false, terms = false, later = false;
	struct jr r, saved;
	struct jr_str key;
	int rc;

	jr_init(&r, text, len);
	saved = r;
	c->depth = 0;
	if ((rc = jopen(c, &r)))
		return rc;
	while ((rc = jr_next_member(&r, &key)) > 0) {
		at_path(c, 0, key);
		if (jr_str_eq(&key, "products", 8) && !products) {
			products = true;
			rc = read_products(c, &r);
		} else if (jr_str_eq(&key, "terms", 5) && !terms) {
			terms = true;
			if (products) {
				rc = read_terms(c, &r);
			} else {
				/* come back once the products are known */
				saved = r;
				later = true;
				rc = skip_released(c, &r, 2);
			}
		} else {
			rc = read_meta(c, &r, key);
		}
		if (rc)
			return rc;
	}
	c->depth = 0;
	if (rc < 0 || (rc = jr_end(&r)))
		return jfail(c, &r, rc, "");
	if (!products || !terms) {
		util_seterr(c->err, c->errlen, "%s: $: no \"%s\" member: not an"
			    " AWS price list offer file", c->name,
			    products ? "terms" : "products");
		return -EINVAL;
	}
	if (!later)
		return 0;
	rewind_to(&c->src, saved.pos);
	at_path(c, 0, lit("terms"));
	return read_terms(c, &saved);
}

/* ---- the table ---------------------------------------------------------------- */

/* Compare two rows by region, type, then SKU and line (qsort). */
static int row_cmp(const void *a, const void *b)
{
	const struct prices_row *x = a, *y = b;
	int d = strcmp(x->region, y->region);

	if (!d)
		d = strcmp(x->type, y->type);
	if (!d)
		d = strcmp(x->sku, y->sku);
	if (!d)
		d = x->line < y->line ? -1 : x->line > y->line;
	return d;
}

/* Compare two rows by type (qsort of pointers). */
static int type_cmp(const void *a, const void *b)
{
	return strcmp((*(const struct prices_row *const *)a)->type,
		      (*(const struct prices_row *const *)b)->type);
}

/* Where a row came from, for a message: " (SKU X, line N)". */
static void row_where(const struct prices_row *r, char *out, size_t size)
{
	if (r->line)
		snprintf(out, size, "SKU %s, line %" PRIu64, r->sku, r->line);
	else
		snprintf(out, size, "SKU %s", r->sku);
}

/*
 * Sort the rows, keep one of each region and type (two different prices
 * are an error), count regions and types, and check each region asked
 * for has prices.
 */
static int finish(struct ctx *c)
{
	struct prices_table *t = c->t;
	const struct prices_row **byt = NULL;
	size_t n = 0;

	if (t->n)
		qsort(t->rows, t->n, sizeof(*t->rows), row_cmp);
	for (size_t i = 0; i < t->n; i++) {
		struct prices_row *prev = n ? &t->rows[n - 1] : NULL;

		if (prev && !strcmp(prev->region, t->rows[i].region) &&
		    !strcmp(prev->type, t->rows[i].type)) {
			char w1[64], w2[64];

			if (!strcmp(prev->price, t->rows[i].price))
				continue;
			row_where(prev, w1, sizeof(w1));
			row_where(&t->rows[i], w2, sizeof(w2));
			util_seterr(c->err, c->errlen,
				    "%s: %s in %s has two on-demand prices: %s (%s)"
				    " and %s (%s)", c->name, prev->type,
				    prev->region, prev->price, w1,
				    t->rows[i].price, w2);
			return -EINVAL;
		}
		if (!prev || strcmp(prev->region, t->rows[i].region))
			t->regions++;
		t->rows[n++] = t->rows[i];
	}
	t->n = n;
	for (size_t i = 0; i < c->nregions; i++) {
		bool found = false;

		for (size_t j = 0; j < n && !found; j++)
			found = !strcmp(t->rows[j].region, c->regions[i]);
		if (!found) {
			util_seterr(c->err, c->errlen,
				    "%s: no on-demand Linux instance price for"
				    " region %s", c->name, c->regions[i]);
			return -EINVAL;
		}
	}
	if (!n) {
		util_seterr(c->err, c->errlen,
			    "%s: no on-demand Linux instance price in the file"
			    " (%zu %s read)", c->name, t->read,
			    t->json ? "products" : "rows");
		return -EINVAL;
	}
	byt = malloc(n * sizeof(*byt));
	if (!byt) {
		util_seterr(c->err, c->errlen, "%s: out of memory", c->name);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		byt[i] = &t->rows[i];
	qsort(byt, n, sizeof(*byt), type_cmp);
	for (size_t i = 0; i < n; i++)
		t->types += !i || strcmp(byt[i - 1]->type, byt[i]->type);
	free(byt);
	return 0;
}

/* Read the offer file text: its form from its first byte. */
static int import(struct ctx *c, const char *buf, size_t len)
{
	struct prices_table *t = c->t;
	size_t off = 0, bom = 0, n = 0;
	int rc;

	util_strlcpy(t->version, "unknown", sizeof(t->version));
	util_strlcpy(t->published, "unknown", sizeof(t->published));
	for (size_t i = 0; i < c->nregions && n + 1 < sizeof(t->regions_asked);
	     i++)
		n += (size_t)snprintf(t->regions_asked + n,
				      sizeof(t->regions_asked) - n, "%s%s",
				      i ? " " : "", c->regions[i]);
	if (len >= 3 && !memcmp(buf, "\xef\xbb\xbf", 3))
		off = bom = 3;	/* a UTF-8 byte order mark */
	while (off < len && (buf[off] == ' ' || buf[off] == '\t' ||
			     buf[off] == '\r' || buf[off] == '\n'))
		off++;
	if (off < len && buf[off] == '{') {
		t->json = true;
		rc = read_json(c, buf + off, len - off);
	} else if (off < len && (buf[off] == '"' || buf[off] == 'F')) {
		/* the CSV's rows count from its first line */
		rc = read_csv(c, buf + bom, len - bom);
	} else {
		util_seterr(c->err, c->errlen,
			    "%s: neither JSON ({\"formatVersion\": ...}) nor CSV"
			    " (\"FormatVersion\",...): not an AWS price list offer"
			    " file", c->name);
		rc = -EINVAL;
	}
	if (!rc && !t->offer[0]) {
		util_seterr(c->err, c->errlen, "%s: no OfferCode: not an AWS"
			    " price list offer file", c->name);
		rc = -EINVAL;
	}
	return rc ? rc : finish(c);
}

/*
 * Read the offer file text buf[0..len) into t (page: the size of the
 * pages to give back, 0 when buf is not mapped from a file).
 */
static int run(struct prices_table *t, const char *name, const char *buf,
	       size_t len, size_t page, const char *const *regions,
	       size_t nregions, char *err, size_t errlen)
{
	struct ctx c = {
		.t = t, .name = name, .regions = regions,
		.nregions = nregions, .err = err, .errlen = errlen,
		.src = { .base = buf, .end = buf + len, .from = buf,
			 .page = page },
	};
	int rc = import(&c, buf, len);

	free(c.prods);
	if (rc) {
		prices_import_free(t);
		/* it quotes the file: keep it safe to print */
		if (err && errlen)
			util_printable(err);
	}
	return rc;
}

/* Read the offer file text buf[0..len) into t. */
int prices_import_buf(struct prices_table *t, const char *name,
		      const char *buf, size_t len, const char *const *regions,
		      size_t nregions, char *err, size_t errlen)
{
	prices_import_free(t);
	util_seterr(err, errlen, "%s", "");
	return run(t, name, buf, len, 0, regions, nregions, err, errlen);
}

/* Read the offer file at path into t: mapped, its pages given back. */
int prices_import_file(struct prices_table *t, const char *path,
		       const char *const *regions, size_t nregions, char *err,
		       size_t errlen)
{
	struct stat st;
	void *map;
	int fd, rc;

	prices_import_free(t);
	util_seterr(err, errlen, "%s", "");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		rc = -errno;
		util_seterr(err, errlen, "%s: %s", path, strerror(-rc));
		if (fd >= 0)
			close(fd);
		return rc;
	}
	if (!S_ISREG(st.st_mode) || st.st_size == 0) {
		util_seterr(err, errlen, "%s: %s", path,
			    S_ISREG(st.st_mode) ? "empty file" :
			    "not a regular file (the offer file, downloaded)");
		close(fd);
		return -EINVAL;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	rc = map == MAP_FAILED ? -errno : 0;
	close(fd);
	if (rc) {
		util_seterr(err, errlen, "%s: mmap: %s", path, strerror(-rc));
		return rc;
	}
	madvise(map, (size_t)st.st_size, MADV_SEQUENTIAL);
	rc = run(t, path, map, (size_t)st.st_size,
		 (size_t)sysconf(_SC_PAGESIZE), regions, nregions, err, errlen);
	munmap(map, (size_t)st.st_size);
	return rc;
}

/* Write a count: '-' when not known. */
static void put_count(FILE *out, int n)
{
	if (n < 0)
		fputs("\t-", out);
	else
		fprintf(out, "\t%d", n);
}

/* Write the table: its comment header, then its rows (v2). */
int prices_import_write(const struct prices_table *t, FILE *out)
{
	fprintf(out,
		"# jobtrace prices v2\n"
		"# from AWS's Price List offer file %s, version %s,"
		" published %s\n"
		"# on-demand: Linux, shared tenancy, no pre-installed software,"
		" USD per hour\n"
		"# spot_per_hour '-': unknown (AWS's offer file has no spot"
		" prices: `jobtrace prices import-spot`, or by hand)\n"
		"# gpu_model '-': the offer file names none\n",
		t->offer, t->version, t->published);
	if (t->regions_asked[0])
		fprintf(out, "# regions: %s\n", t->regions_asked);
	fputs("# region\tinstance_type\ton_demand_per_hour\tspot_per_hour"
	      "\tcurrency\tvcpus\tmemory_gib\tgpus\tgpu_model\tfamily\tarch\n",
	      out);
	for (size_t i = 0; i < t->n; i++) {
		const struct prices_row *r = &t->rows[i];

		fprintf(out, "%s\t%s\t%s\t-\tUSD", r->region, r->type, r->price);
		put_count(out, r->at.vcpus);
		fprintf(out, "\t%s", r->at.memory[0] ? r->at.memory : "-");
		put_count(out, r->at.gpus);
		fprintf(out, "\t-\t%s\t%s\n",
			r->at.family[0] ? r->at.family : "-",
			r->at.arch ? r->at.arch : "-");
	}
	return ferror(out) ? -EIO : 0;
}

/* Write with fn to path: a new file beside it, then a rename. */
int prices_import_save_with(const char *path,
			    int (*fn)(const void *arg, FILE *out),
			    const void *arg, char *err, size_t errlen)
{
	size_t n = strlen(path);
	char *tmp = malloc(n + 8);
	FILE *f = NULL;
	int fd, rc = 0;

	if (!tmp) {
		util_seterr(err, errlen, "%s: out of memory", path);
		return -ENOMEM;
	}
	memcpy(tmp, path, n);
	memcpy(tmp + n, ".XXXXXX", 8);
	fd = mkstemp(tmp);
	if (fd < 0) {
		rc = -errno;
		util_seterr(err, errlen, "%s: %s", path, strerror(-rc));
		free(tmp);
		return rc;
	}
	/* a table for everyone to read, like the configuration */
	if (fchmod(fd, 0644) < 0 || !(f = fdopen(fd, "w")))
		rc = -errno;
	if (!rc && fn(arg, f))
		rc = -EIO;
	if (!rc && (fflush(f) || fsync(fileno(f)) < 0))
		rc = -errno;
	if (f ? fclose(f) : close(fd))
		rc = rc ? rc : -errno;
	if (!rc && rename(tmp, path) < 0)
		rc = -errno;
	if (rc) {
		util_seterr(err, errlen, "%s: %s", path, strerror(-rc));
		unlink(tmp);
	}
	free(tmp);
	return rc;
}

/* prices_import_write() for prices_import_save_with(). */
static int write_table(const void *arg, FILE *out)
{
	return prices_import_write(arg, out);
}

/* Write the table to path: a new file beside it, then a rename. */
int prices_import_save(const struct prices_table *t, const char *path,
		       char *err, size_t errlen)
{
	return prices_import_save_with(path, write_table, t, err, errlen);
}

/* Release t's rows and empty it. */
void prices_import_free(struct prices_table *t)
{
	free(t->rows);
	memset(t, 0, sizeof(*t));
}
