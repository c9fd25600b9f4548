// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_offer.c - the reader of AWS's Price List offer file for EC2
 * (agent/cli/prices_import.c, `jobtrace prices import`): each input is read
 * as an offer file, with every region and with us-east-1 only.  What is
 * accepted is a table of the form the agent reads (region, instance type,
 * a decimal price above zero, '-', USD), sorted, no region and type twice,
 * the same on a second read; what is refused says why, printably, and
 * leaves nothing.
 */
#include <errno.h>

#include "fuzz.h"
#include "prices_import.h"

/* Is s a decimal above zero with no zeros that say nothing (0.096, 12)? */
static int price_ok(const char *s)
{
	const char *dot = strchr(s, '.');
	size_t n = strlen(s);
	int nonzero = 0;

	if (!n || (s[0] == '0' && n > 1 && s[1] != '.'))
		return 0;
	for (const char *p = s; *p; p++) {
		if (p == dot)
			continue;
		if (*p < '0' || *p > '9')
			return 0;
		nonzero |= *p != '0';
	}
	if (dot && (dot == s || !dot[1] || s[n - 1] == '0' ||
		    strchr(dot + 1, '.')))
		return 0;
	return nonzero;
}

/* Is s 1..31 bytes of a-z, 0-9 and extra? */
static int name_ok(const char *s, const char *extra)
{
	size_t n = strlen(s);

	if (!n || n > 31)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
		      strchr(extra, *s)))
			return 0;
	return 1;
}

/* Check one read of the input against what prices_import.h promises. */
static void check(const uint8_t *data, size_t size,
		  const char *const *regions, size_t nregions)
{
	struct prices_table t = { 0 }, again = { 0 };
	char err[512], *text = NULL;
	size_t len = 0;
	FILE *f;
	int rc;

	rc = prices_import_buf(&t, "offer", (const char *)data, size, regions,
			       nregions, err, sizeof(err));
	FUZZ_CHECK(rc == 0 || rc == -EINVAL);
	if (rc) {
		FUZZ_CHECK(err[0] && !strncmp(err, "offer", 5));
		for (const unsigned char *p = (const unsigned char *)err; *p; p++)
			FUZZ_CHECK(*p >= 0x20 && *p != 0x7f);
		FUZZ_CHECK(!t.rows && !t.n);
		return;
	}
	FUZZ_CHECK(t.n > 0 && t.regions > 0 && t.types > 0);
	FUZZ_CHECK(t.regions <= t.n && t.types <= t.n);
	FUZZ_CHECK(!strcmp(t.offer, "AmazonEC2"));
	for (size_t i = 0; i < t.n; i++) {
		const struct prices_row *r = &t.rows[i];

		FUZZ_CHECK(name_ok(r->region, "-"));
		FUZZ_CHECK(name_ok(r->type, ".-"));
		FUZZ_CHECK(price_ok(r->price));
		FUZZ_CHECK(!nregions || !strcmp(r->region, regions[0]));
		if (i) {
			int d = strcmp(t.rows[i - 1].region, r->region);

			FUZZ_CHECK(d < 0 || (!d && strcmp(t.rows[i - 1].type,
							   r->type) < 0));
		}
	}
	/* the text: comments, then eleven TAB-separated fields a line */
	f = open_memstream(&text, &len);
	FUZZ_CHECK(f && prices_import_write(&t, f) == 0 && !fclose(f));
	for (char *line = text; *line;) {
		char *nl = strchr(line, '\n');
		size_t tabs = 0;

		FUZZ_CHECK(nl);
		for (char *p = line; p < nl; p++) {
			FUZZ_CHECK((unsigned char)*p >= 0x20 || *p == '\t');
			tabs += *p == '\t';
		}
		FUZZ_CHECK(*line == '#' || tabs == 10);
		line = nl + 1;
	}
	free(text);
	FUZZ_CHECK(prices_import_buf(&again, "offer", (const char *)data, size,
				     regions, nregions, err, sizeof(err)) == 0);
	FUZZ_CHECK(again.n == t.n &&
		   !memcmp(again.rows, t.rows, t.n * sizeof(*t.rows)));
	prices_import_free(&again);
	prices_import_free(&t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const east[] = { "us-east-1" };

	check(data, size, NULL, 0);
	check(data, size, east, 1);
	return 0;
}
