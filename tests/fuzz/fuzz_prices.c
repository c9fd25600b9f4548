// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_prices.c - the price table reader (prices_lookup) on a table an
 * admin edited, and the time limit parser (cost_parse_time_limit) on the
 * input's first line.  The row looked for is the first line's first two
 * fields, so that found rows are reached too.
 */
#include <errno.h>
#include <math.h>

#include "cost.h"
#include "fuzz.h"
#include "prices.h"

/* A price read back: -1 (not known) or a finite number >= 0. */
static int price_ok(double v)
{
	return v == -1 || (isfinite(v) && v >= 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[4200], region[128] = "us-east-1", type[128] = "m5.large";
	char cur[8], err[512], *text = fuzz_strndup(data, size);
	double od = 0, spot = 0;
	uint32_t sec = 7;
	FILE *f;
	int r;

	if (!text)
		return 0;
	sscanf(text, "%127[^\t\n]\t%127[^\t\n]", region, type);
	r = cost_parse_time_limit(text, &sec);
	FUZZ_CHECK(r == 0 || (r == -EINVAL && sec == 7));
	snprintf(path, sizeof(path), "%s/prices.tsv", fuzz_scratch());
	f = fopen(path, "w");
	FUZZ_CHECK(f);
	FUZZ_CHECK(fwrite(data, 1, size, f) == size || !size);
	FUZZ_CHECK(fclose(f) == 0);
	memset(cur, 'x', sizeof(cur));
	r = prices_lookup(path, region, type, &od, &spot, cur, err, sizeof(err));
	FUZZ_CHECK(r == 0 || r == -ENOENT || r == -EINVAL);
	FUZZ_CHECK(memchr(err, '\0', sizeof(err)));
	if (r == 0) {
		FUZZ_CHECK(price_ok(od) && price_ok(spot));
		FUZZ_CHECK(memchr(cur, '\0', sizeof(cur)) && cur[0]);
		FUZZ_CHECK(!err[0]);
	} else {
		/* the file is named, and a bad line by its number */
		FUZZ_CHECK(strstr(err, path));
		FUZZ_CHECK(r != -EINVAL || !strncmp(err, path, strlen(path)));
	}
	free(text);
	return 0;
}
