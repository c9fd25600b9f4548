// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_spot.c - the reader of `aws ec2 describe-spot-price-history`'s JSON
 * (agent/cli/spot_import.c, `jobtrace prices import-spot`), and its merge
 * into a small table.  What is accepted are zone and type names of AWS's
 * form with finite prices >= 0, one per zone and type; the merge gives a
 * zone line only for a region and type the table has, and each region
 * line's spot price is its zones' lowest; what is refused says why,
 * printably, naming the input, and leaves nothing.
 */
#include <errno.h>
#include <math.h>

#include "fuzz.h"
#include "spot_import.h"

/* A table of two regions and two types, as the merge's target. */
static void table(struct prices_set *set)
{
	static const char *const rg[] = { "us-east-1", "eu-west-1" };
	static const char *const ty[] = { "m5.large", "c5.large" };

	for (size_t i = 0; i < 4; i++) {
		struct prices_entry *e = prices_add(set);

		FUZZ_CHECK(e);
		strcpy(e->region, rg[i / 2]);
		strcpy(e->type, ty[i % 2]);
		strcpy(e->currency, "USD");
		e->on_demand = 0.1;
		e->spot = -1;
		e->vcpus = e->gpus = -1;
		e->memory_gib = -1;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct prices_set set = { 0 };
	struct spot_set s = { 0 };
	char err[512];
	int rc;

	rc = spot_import_buf(&s, "spot", (const char *)data, size, err,
			     sizeof(err));
	FUZZ_CHECK(rc == 0 || rc == -EINVAL);
	if (rc) {
		FUZZ_CHECK(!strncmp(err, "spot", 4));
		for (const unsigned char *p = (const unsigned char *)err; *p; p++)
			FUZZ_CHECK(*p >= 0x20 && *p != 0x7f);
		FUZZ_CHECK(!s.p && !s.n);
		return 0;
	}
	for (size_t i = 0; i < s.n; i++) {
		FUZZ_CHECK(prices_is_zone(s.p[i].zone));
		FUZZ_CHECK(isfinite(s.p[i].price) && s.p[i].price >= 0);
		for (size_t j = 0; j < i; j++)
			FUZZ_CHECK(strcmp(s.p[i].zone, s.p[j].zone) ||
				   strcmp(s.p[i].type, s.p[j].type));
	}
	table(&set);
	FUZZ_CHECK(spot_import_merge(&s, &set) == 0);
	FUZZ_CHECK(s.merged + s.not_in_table == s.n);
	FUZZ_CHECK(set.n == 4 + s.merged);
	for (size_t i = 0; i < 4; i++) {
		double low = -1;

		for (size_t j = 4; j < set.n; j++)
			if (!strcmp(set.e[j].type, set.e[i].type) &&
			    !strncmp(set.e[j].region, set.e[i].region,
				     strlen(set.e[i].region)) &&
			    (low < 0 || set.e[j].spot < low))
				low = set.e[j].spot;
		FUZZ_CHECK(set.e[i].spot == low);
	}
	prices_set_free(&set);
	spot_import_free(&s);
	return 0;
}
