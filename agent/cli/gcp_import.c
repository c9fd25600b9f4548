// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * gcp_import.c - Compute Engine machine types and prices from a CSV file
 * into the price table (gcp_import.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "gcp_import.h"
#include "spot_import.h"
#include "util.h"

enum { C_TYPE, C_REGION, C_VCPUS, C_MEM, C_GPUS, C_GPU_MODEL, C_OD, C_SPOT,
       C_CUR, C_N };

static const char *const col_names[C_N] = {
	"machine_type", "region", "vcpus", "memory_gib", "gpus", "gpu_model",
	"on_demand_per_hour", "spot_per_hour", "currency",
};

/* A lower-case word of letters, digits and '-', a letter first. */
static bool word_ok(const char *s)
{
	if (!(*s >= 'a' && *s <= 'z'))
		return false;
	return strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-") ==
	       strlen(s) && s[strlen(s) - 1] != '-';
}

/* A whole number (digits, at most 6). */
static bool count_ok(const char *s)
{
	size_t n = strspn(s, "0123456789");

	return n && n <= 6 && !s[n];
}

/* The family of machine series series (the type's first word). */
static const char *family_of(const char *type)
{
	static const struct { const char *series, *family; } fam[] = {
		{ "c2", "compute-optimized" }, { "c2d", "compute-optimized" },
		{ "c3", "compute-optimized" }, { "c3d", "compute-optimized" },
		{ "c4", "compute-optimized" }, { "c4a", "compute-optimized" },
		{ "h3", "compute-optimized" }, { "m1", "memory-optimized" },
		{ "m2", "memory-optimized" }, { "m3", "memory-optimized" },
		{ "x4", "memory-optimized" }, { "a2", "accelerator-optimized" },
		{ "a3", "accelerator-optimized" },
		{ "g2", "accelerator-optimized" },
	};
	size_t n = strcspn(type, "-");

	for (size_t i = 0; i < sizeof(fam) / sizeof(fam[0]); i++)
		if (strlen(fam[i].series) == n &&
		    !strncmp(type, fam[i].series, n))
			return fam[i].family;
	return "general-purpose";
}

/* The architecture of type's series. */
static const char *arch_of(const char *type)
{
	size_t n = strcspn(type, "-");

	return n == 3 && (!strncmp(type, "c4a", 3) ||
			  !strncmp(type, "t2a", 3) ||
			  !strncmp(type, "n4a", 3)) ? "arm64" : "x86_64";
}

/* Split line (a CSV row, no quotes) into f; false unless C_N fields. */
static bool split(char *line, char *f[C_N])
{
	size_t n = 0;

	for (char *p = line; n < C_N; n++) {
		f[n] = p;
		p = strchr(p, ',');
		if (!p)
			return n + 1 == C_N;
		*p++ = '\0';
	}
	return false;
}

/* Check row f; the first bad column's reason in why, else NULL. */
static const char *check_row(char *const f[C_N], int *col)
{
	static const struct { int c; const char *why; } rule[] = {
		{ C_TYPE, "not a machine type (e2-standard-4)" },
		{ C_REGION, "not a region (us-central1)" },
		{ C_VCPUS, "not a whole number" },
		{ C_MEM, "not a decimal number" },
		{ C_GPUS, "not a whole number" },
		{ C_GPU_MODEL, "not a word (nvidia-l4) or -" },
		{ C_OD, "not a decimal number" },
		{ C_SPOT, "not a decimal number or -" },
		{ C_CUR, "not 1 to 7 letters (USD)" },
	};
	bool ok[C_N];
	size_t cl = strlen(f[C_CUR]);

	ok[C_TYPE] = word_ok(f[C_TYPE]) && strlen(f[C_TYPE]) < 64;
	/* a region ends in a digit (us-central1); a zone (-a) does not */
	ok[C_REGION] = word_ok(f[C_REGION]) && strlen(f[C_REGION]) < 32 &&
		       f[C_REGION][strlen(f[C_REGION]) - 1] >= '0' &&
		       f[C_REGION][strlen(f[C_REGION]) - 1] <= '9';
	ok[C_VCPUS] = count_ok(f[C_VCPUS]) && atoi(f[C_VCPUS]) > 0;
	ok[C_MEM] = prices_decimal_ok(f[C_MEM]);
	ok[C_GPUS] = count_ok(f[C_GPUS]);
	ok[C_GPU_MODEL] = !strcmp(f[C_GPU_MODEL], "-") ||
			  (word_ok(f[C_GPU_MODEL]) &&
			   strlen(f[C_GPU_MODEL]) < 32);
	ok[C_OD] = prices_decimal_ok(f[C_OD]);
	ok[C_SPOT] = !strcmp(f[C_SPOT], "-") || prices_decimal_ok(f[C_SPOT]);
	ok[C_CUR] = cl >= 1 && cl <= 7 &&
		    strspn(f[C_CUR], "ABCDEFGHIJKLMNOPQRSTUVWXYZ") == cl;
	for (size_t i = 0; i < sizeof(rule) / sizeof(rule[0]); i++) {
		if (!ok[rule[i].c]) {
			*col = rule[i].c;
			return rule[i].why;
		}
	}
	return NULL;
}

/* Fill e from the checked row f. */
static void fill(struct prices_entry *e, char *const f[C_N])
{
	util_strlcpy(e->region, f[C_REGION], sizeof(e->region));
	util_strlcpy(e->type, f[C_TYPE], sizeof(e->type));
	e->on_demand = strtod(f[C_OD], NULL);
	e->spot = strcmp(f[C_SPOT], "-") ? strtod(f[C_SPOT], NULL) : -1;
	util_strlcpy(e->currency, f[C_CUR], sizeof(e->currency));
	e->vcpus = atoi(f[C_VCPUS]);
	e->memory_gib = strtod(f[C_MEM], NULL);
	e->gpus = atoi(f[C_GPUS]);
	util_strlcpy(e->gpu_model, strcmp(f[C_GPU_MODEL], "-") ?
		     f[C_GPU_MODEL] : "", sizeof(e->gpu_model));
	util_strlcpy(e->family, family_of(e->type), sizeof(e->family));
	util_strlcpy(e->arch, arch_of(e->type), sizeof(e->arch));
}

/* One row (line lineno of name) into set; seen[] marks the lines of this
 * file (a repeat within it is an error). */
static int take_row(struct prices_set *set, char *line, const char *name,
		    size_t lineno, size_t *first_line, char *err,
		    size_t errlen)
{
	char *f[C_N];
	const char *why;
	struct prices_entry *e;
	size_t at;
	int col = 0;

	if (!split(line, f)) {
		util_seterr(err, errlen, "%s:%zu: not %d comma-separated"
			    " columns (%s)", name, lineno, C_N,
			    GCP_IMPORT_HEADER);
		return -EINVAL;
	}
	why = check_row(f, &col);
	if (why) {
		util_seterr(err, errlen, "%s:%zu: %s '%s': %s", name, lineno,
			    col_names[col], util_printable(f[col]), why);
		return -EINVAL;
	}
	e = prices_find(set, f[C_REGION], f[C_TYPE]);
	at = e ? (size_t)(e - set->e) : set->n;
	if (e && first_line[at]) {
		util_seterr(err, errlen, "%s:%zu: %s in %s again (line %zu)",
			    name, lineno, f[C_TYPE], f[C_REGION],
			    first_line[at]);
		return -EINVAL;
	}
	if (!e)
		e = prices_add(set);
	if (!e)
		return -ENOMEM;
	memset(e, 0, sizeof(*e));
	fill(e, f);
	first_line[e - set->e] = lineno;
	return 0;
}

/* Read the CSV text into set (see gcp_import.h). */
int gcp_import_buf(struct prices_set *set, const char *name, const char *buf,
		   size_t len, size_t *rows, char *err, size_t errlen)
{
	/* the line of this file that gave each entry (0: an older one) */
	size_t *first_line = calloc(set->n + len / 2 + 1, sizeof(size_t));
	char *text = malloc(len + 1), *line, *next;
	size_t lineno = 0;
	bool header = false;
	int e = 0;

	*rows = 0;
	if (!first_line || !text) {
		free(first_line);
		free(text);
		return -ENOMEM;
	}
	memcpy(text, buf, len);
	text[len] = '\0';
	for (line = text; !e && line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		lineno++;
		line[strcspn(line, "\r")] = '\0';
		if (!*line || *line == '#')
			continue;
		if (!header) {
			header = true;
			if (strcmp(line, GCP_IMPORT_HEADER)) {
				util_seterr(err, errlen, "%s:%zu: the header"
					    " must be %s", name, lineno,
					    GCP_IMPORT_HEADER);
				e = -EINVAL;
			}
			continue;
		}
		e = take_row(set, line, name, lineno, first_line, err,
			     errlen);
		*rows += !e;
	}
	if (!e && !*rows) {
		util_seterr(err, errlen, "%s: no machine type (the header,"
			    " then one line per type and region)", name);
		e = -EINVAL;
	}
	free(first_line);
	free(text);
	return e;
}

/* Read the CSV file at path into set. */
int gcp_import_file(struct prices_set *set, const char *path, size_t *rows,
		    char *err, size_t errlen)
{
	size_t len = 0;
	char *buf = NULL;
	int e = spot_import_read(path, &buf, &len, err, errlen);

	*rows = 0;
	if (e)
		return e;
	e = gcp_import_buf(set, path, buf, len, rows, err, errlen);
	free(buf);
	return e;
}
