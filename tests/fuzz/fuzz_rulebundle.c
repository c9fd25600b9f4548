// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_rulebundle.c - the reader of rules bundles (agent/core/rulebundle.c),
 * which an agent takes from a URL or the fleet store: each input is opened
 * as a bundle.  A bundle that opens names only rule files of the allowed
 * form, each file's bytes hash to its MANIFEST line, its id is the
 * MANIFEST's SHA-256, and a refusal always says why.
 */
#include <errno.h>

#include "fuzz.h"
#include "rulebundle.h"
#include "sha256.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rulebundle b;
	char err[512] = "", hex[65];
	int e;

	e = rulebundle_open(data, size, NULL, &b, err, sizeof(err));
	FUZZ_CHECK(e <= 0);
	if (e) {
		FUZZ_CHECK(err[0] != '\0');
		FUZZ_CHECK(b.nfiles == 0 || b.files);
	} else {
		FUZZ_CHECK(b.nfiles >= 1 && b.nfiles <= RULEBUNDLE_MAX_FILES);
		FUZZ_CHECK(sha256_hex(b.manifest, b.manifest_len, hex) == 0);
		FUZZ_CHECK(!strcmp(hex, b.sha256));
		for (unsigned i = 0; i < b.nfiles; i++) {
			FUZZ_CHECK(rulebundle_name_ok(b.files[i].name));
			FUZZ_CHECK(sha256_hex(b.files[i].data,
							 b.files[i].size, hex) == 0);
			FUZZ_CHECK(!strcmp(hex, b.files[i].sha256));
			FUZZ_CHECK(i == 0 || strcmp(b.files[i - 1].name,
						    b.files[i].name) < 0);
		}
	}
	rulebundle_free(&b);
	return 0;
}
