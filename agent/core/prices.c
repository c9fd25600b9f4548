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

/* Is s a decimal price (digits, optional '.' and digits) or '-'? */
static bool price_ok(const char *s)
{
	size_t n = strspn(s, "0123456789");

	if (!strcmp(s, "-"))
		return true;
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

/* Check one table line and split it into its five fields. */
int prices_parse_line(char *line, char *fields[5], char *why, size_t whylen)
{
	static const char *const names[] = { "region", "instance type",
		"on-demand price", "spot price", "currency" };
	char *p = line;
	int n = 0;

	p += strspn(p, " \t");
	if (*p == '#' || *p == '\0')
		return 0;
	for (p = line; n < 5; n++) {
		fields[n] = p;
		p = strchr(p, '\t');
		if (!p)
			break;
		*p++ = '\0';
	}
	if (n < 4) {
		util_seterr(why, whylen, "%d fields, want 5 separated by tabs (region, instance type, on-demand, spot, currency)",
			    n + 1);
		return -EINVAL;
	}
	if (n == 5) {
		util_seterr(why, whylen, "more than 5 tab-separated fields");
		return -EINVAL;
	}
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
	return 1;
}

/* A price field's value: -1 for '-'. */
static double price_of(const char *s)
{
	return strcmp(s, "-") ? strtod(s, NULL) : -1;
}

/* Look up (region, type) in the table at path; see prices.h. */
int prices_lookup(const char *path, const char *region, const char *type,
		  double *on_demand, double *spot, char currency[8],
		  char *err, size_t errlen)
{
	char *line = NULL, why[256];
	unsigned lineno = 0, found_at = 0;
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
		char *fields[5];
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
		if (r < 0) {
			util_seterr(err, errlen, "%s:%u: %s", path, lineno, why);
			ret = r;
			break;
		}
		if (!r || strcmp(fields[0], region) || strcmp(fields[1], type))
			continue;
		if (found_at) {
			util_seterr(err, errlen, "%s:%u: %s in %s already at line %u",
				    path, lineno, type, region, found_at);
			ret = -EINVAL;
			break;
		}
		found_at = lineno;
		*on_demand = price_of(fields[2]);
		*spot = price_of(fields[3]);
		util_strlcpy(currency, fields[4], 8);
	}
	if (!ret && ferror(f)) {
		ret = -EIO;
		util_seterr(err, errlen, "%s: %s", path, strerror(EIO));
	}
	free(line);
	fclose(f);
	if (!ret && !found_at) {
		util_seterr(err, errlen, "%s in %s not in %s", type, region, path);
		ret = -ENOENT;
	}
	return ret;
}
