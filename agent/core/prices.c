// SPDX-License-Identifier: GPL-2.0-or-later
/* prices.c - the price table of cost.prices_file (see prices.h). */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "prices.h"
#include "util.h"

/* Is s a decimal number >= 0: digits, an optional '.' and digits? */
bool prices_decimal_ok(const char *s)
{
	size_t n = strspn(s, "0123456789");

	if (!n)
		return false;
	if (s[n] == '.') {
		size_t m = strspn(s + n + 1, "0123456789");

		if (!m)
			return false;
		n += 1 + m;
	}
	return s[n] == '\0' && n <= 32;
}

/* Is s a decimal price or '-'? */
static bool price_ok(const char *s)
{
	return !strcmp(s, "-") || prices_decimal_ok(s);
}

/* Is s a word: 1 to 127 printable bytes, no spaces? UTF-8 is let through. */
static bool word_ok(const char *s)
{
	size_t n = strlen(s);

	if (!n || n > 127)
		return false;
	for (; *s; s++)
		if ((unsigned char)*s <= ' ' || *s == 0x7f)
			return false;
	return true;
}

/* Is s a whole number 0..100000 or '-'? */
static bool count_ok(const char *s)
{
	size_t n = strspn(s, "0123456789");

	return !strcmp(s, "-") || (n && n <= 6 && s[n] == '\0' &&
				   atol(s) <= 100000);
}

/* Check a v2 line's attributes, fields[5..10]. */
static int attrs_ok(char *fields[PRICES_NFIELDS], char *why, size_t whylen)
{
	static const char *const names[] = { "vcpus", "memory_gib", "gpus",
		"gpu_model", "family", "arch" };
	const char *arch = fields[10];
	int bad = -1;

	if (!count_ok(fields[5]))
		bad = 5;
	else if (!price_ok(fields[6]))
		bad = 6;
	else if (!count_ok(fields[7]))
		bad = 7;
	else if (!word_ok(fields[8]) || strlen(fields[8]) > 31)
		bad = 8;
	else if (!word_ok(fields[9]) || strlen(fields[9]) > 31)
		bad = 9;
	else if (strcmp(arch, "-") && strcmp(arch, "x86_64") &&
		 strcmp(arch, "arm64"))
		bad = 10;
	if (bad < 0)
		return 0;
	util_seterr(why, whylen, "%s \"%.64s\": want %s or '-'",
		    names[bad - 5], fields[bad],
		    bad == 6 ? "a decimal number >= 0 (like 8)" :
		    bad == 10 ? "x86_64 or arm64" :
		    bad == 8 || bad == 9 ? "a word without spaces" :
		    "a whole number");
	return -EINVAL;
}

/* Check one table line and split it into its 5 or 11 fields. */
int prices_parse_line(char *line, char *fields[PRICES_NFIELDS], char *why,
		      size_t whylen)
{
	static const char *const names[] = { "region", "instance type",
		"on-demand price", "spot price", "currency" };
	static char dash[] = "-";
	char *p = line;
	int n = 0;

	p += strspn(p, " \t");
	if (*p == '#' || *p == '\0')
		return 0;
	for (p = line; n < PRICES_NFIELDS; n++) {
		fields[n] = p;
		p = strchr(p, '\t');
		if (!p)
			break;
		*p++ = '\0';
	}
	if (n + 1 != PRICES_V1_FIELDS && n + 1 != PRICES_NFIELDS) {
		util_seterr(why, whylen, n == PRICES_NFIELDS ?
			    "more than %d tab-separated fields" :
			    "%d fields, want 5 separated by tabs (region, instance type, on-demand, spot, currency) or 11 (then vcpus, memory_gib, gpus, gpu_model, family, arch)",
			    n == PRICES_NFIELDS ? PRICES_NFIELDS : n + 1);
		return -EINVAL;
	}
	for (int i = n + 1; i < PRICES_NFIELDS; i++)
		fields[i] = dash;
	for (int i = 0; i < 2; i++)
		if (!word_ok(fields[i])) {
			util_seterr(why, whylen, "%s \"%.64s\": want a word without spaces",
				    names[i], fields[i]);
			return -EINVAL;
		}
	for (int i = 2; i < 4; i++)
		if (!price_ok(fields[i])) {
			util_seterr(why, whylen, "%s \"%.64s\": want a decimal number >= 0 (like 0.096) or '-'",
				    names[i], fields[i]);
			return -EINVAL;
		}
	if (!*fields[4] || strlen(fields[4]) > 7) {
		util_seterr(why, whylen, "currency \"%.64s\": want 1 to 7 letters (USD)",
			    fields[4]);
		return -EINVAL;
	}
	for (const char *c = fields[4]; *c; c++)
		if (!isalpha((unsigned char)*c)) {
			util_seterr(why, whylen, "currency \"%.64s\": want 1 to 7 letters (USD)",
				    fields[4]);
			return -EINVAL;
		}
	return attrs_ok(fields, why, whylen) ? -EINVAL : 1;
}

/* A price field's value: -1 for '-'. */
static double price_of(const char *s)
{
	return strcmp(s, "-") ? strtod(s, NULL) : -1;
}

/* A word field's value: "" for '-'. */
static void word_of(const char *s, char *out, size_t size)
{
	util_strlcpy(out, strcmp(s, "-") ? s : "", size);
}

/* The entry that a checked line's fields say. */
static void entry_of(char *const fields[PRICES_NFIELDS],
		     struct prices_entry *e)
{
	memset(e, 0, sizeof(*e));
	util_strlcpy(e->region, fields[0], sizeof(e->region));
	util_strlcpy(e->type, fields[1], sizeof(e->type));
	e->on_demand = price_of(fields[2]);
	e->spot = price_of(fields[3]);
	util_strlcpy(e->currency, fields[4], sizeof(e->currency));
	e->vcpus = strcmp(fields[5], "-") ? atoi(fields[5]) : -1;
	e->memory_gib = price_of(fields[6]);
	e->gpus = strcmp(fields[7], "-") ? atoi(fields[7]) : -1;
	word_of(fields[8], e->gpu_model, sizeof(e->gpu_model));
	word_of(fields[9], e->family, sizeof(e->family));
	word_of(fields[10], e->arch, sizeof(e->arch));
}

/* Called for each price line: 0 to go on, else the read stops with it. */
typedef int (*line_fn)(struct prices_entry *e, unsigned lineno, void *arg,
		       char *why, size_t whylen);

/*
 * Read and check every line of the table at path, handing each price
 * line to fn: 0, or -errno with err naming the file (and line).
 */
static int read_table(const char *path, line_fn fn, void *arg, char *err,
		      size_t errlen)
{
	char *line = NULL, why[256];
	unsigned lineno = 0;
	size_t cap = 0;
	struct stat st;
	ssize_t len;
	int ret = 0;
	FILE *f;

	util_seterr(err, errlen, "%s", "");
	f = fopen(path, "re");
	if (!f) {
		ret = -errno;
		util_seterr(err, errlen, "%s: %s", path, strerror(-ret));
		return ret;
	}
	if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
		fclose(f);
		util_seterr(err, errlen, "%s: %s", path, strerror(EISDIR));
		return -EISDIR;
	}
	while ((len = getline(&line, &cap, f)) >= 0) {
		char *fields[PRICES_NFIELDS];
		struct prices_entry e;
		int r;

		lineno++;
		if (len > 0 && line[len - 1] == '\n')
			line[--len] = '\0';
		if (len > 0 && line[len - 1] == '\r')
			line[--len] = '\0';
		if ((size_t)len >= PRICES_LINE_MAX) {
			util_seterr(err, errlen, "%s:%u: longer than %d bytes",
				    path, lineno, PRICES_LINE_MAX - 1);
			ret = -EINVAL;
			break;
		}
		if (strlen(line) != (size_t)len) {
			util_seterr(err, errlen, "%s:%u: a NUL byte", path, lineno);
			ret = -EINVAL;
			break;
		}
		r = prices_parse_line(line, fields, why, sizeof(why));
		if (r > 0) {
			entry_of(fields, &e);
			r = fn(&e, lineno, arg, why, sizeof(why));
		}
		if (r < 0) {
			util_seterr(err, errlen, "%s:%u: %s", path, lineno, why);
			ret = r;
			break;
		}
	}
	if (!ret && ferror(f)) {
		ret = -EIO;
		util_seterr(err, errlen, "%s: %s", path, strerror(EIO));
	}
	free(line);
	fclose(f);
	return ret;
}

/* What prices_lookup() looks for and what it found. */
struct lookup {
	const char *region, *type;
	struct prices_entry found;
	unsigned found_at;
};

/* Keep the line of the region and type looked up (once). */
static int lookup_line(struct prices_entry *e, unsigned lineno, void *arg,
		       char *why, size_t whylen)
{
	struct lookup *l = arg;

	if (strcmp(e->region, l->region) || strcmp(e->type, l->type))
		return 0;
	if (l->found_at) {
		util_seterr(why, whylen, "%s in %s already at line %u",
			    l->type, l->region, l->found_at);
		return -EINVAL;
	}
	l->found_at = lineno;
	l->found = *e;
	return 0;
}

/* Look up (region, type) in the table at path; see prices.h. */
int prices_lookup(const char *path, const char *region, const char *type,
		  double *on_demand, double *spot, char currency[8],
		  char *err, size_t errlen)
{
	struct lookup l = { .region = region, .type = type };
	int ret = read_table(path, lookup_line, &l, err, errlen);

	if (ret)
		return ret;
	if (!l.found_at) {
		util_seterr(err, errlen, "%s in %s not in %s", type, region, path);
		return -ENOENT;
	}
	*on_demand = l.found.on_demand;
	*spot = l.found.spot;
	util_strlcpy(currency, l.found.currency, 8);
	return 0;
}

/* Add a line to the set; a (region, type) already there is an error. */
static int load_line(struct prices_entry *e, unsigned lineno, void *arg,
		     char *why, size_t whylen)
{
	struct prices_set *set = arg;
	struct prices_entry *p;

	(void)lineno;
	if (prices_find(set, e->region, e->type)) {
		util_seterr(why, whylen, "%s in %s already in the table",
			    e->type, e->region);
		return -EINVAL;
	}
	p = prices_add(set);
	if (!p) {
		util_seterr(why, whylen, "out of memory");
		return -ENOMEM;
	}
	*p = *e;
	return 0;
}

/* A new line at the end of set (zeroed). */
struct prices_entry *prices_add(struct prices_set *set)
{
	struct prices_entry *p;

	if (set->n == set->cap) {
		size_t cap = set->cap ? set->cap * 2 : 64;

		p = realloc(set->e, cap * sizeof(*p));
		if (!p)
			return NULL;
		set->e = p;
		set->cap = cap;
	}
	p = &set->e[set->n++];
	memset(p, 0, sizeof(*p));
	return p;
}

/* Read the whole table at path; see prices.h. */
int prices_load(const char *path, struct prices_set *set, char *err,
		size_t errlen)
{
	int ret;

	prices_set_free(set);
	ret = read_table(path, load_line, set, err, errlen);
	if (ret)
		prices_set_free(set);
	return ret;
}

/* The line of region and type in set, or NULL. */
struct prices_entry *prices_find(const struct prices_set *set,
				 const char *region, const char *type)
{
	for (size_t i = 0; i < set->n; i++)
		if (!strcmp(set->e[i].region, region) &&
		    !strcmp(set->e[i].type, type))
			return &set->e[i];
	return NULL;
}

/* Whether name is an availability zone: a region's name ends in a digit. */
int prices_is_zone(const char *name)
{
	size_t n = strlen(name);

	return n > 1 && isalpha((unsigned char)name[n - 1]) &&
	       isdigit((unsigned char)name[n - 2]);
}

/* Write a number field: '-' when not known (< 0). */
static void put_num(FILE *out, double v, const char *sep)
{
	if (v < 0)
		fprintf(out, "-%s", sep);
	else
		fprintf(out, "%.10g%s", v, sep);
}

/* Write one line of the table (v2) for e. */
void prices_write_entry(const struct prices_entry *e, FILE *out)
{
	fprintf(out, "%s\t%s\t", e->region, e->type);
	put_num(out, e->on_demand, "\t");
	put_num(out, e->spot, "\t");
	fprintf(out, "%s\t", e->currency);
	put_num(out, e->vcpus, "\t");
	put_num(out, e->memory_gib, "\t");
	put_num(out, e->gpus, "\t");
	fprintf(out, "%s\t%s\t%s\n", e->gpu_model[0] ? e->gpu_model : "-",
		e->family[0] ? e->family : "-", e->arch[0] ? e->arch : "-");
}

/* Release set's lines and empty it. */
void prices_set_free(struct prices_set *set)
{
	free(set->e);
	set->e = NULL;
	set->n = set->cap = 0;
}
